/*
** vtab_trace.c — the table-valued functions over trace files.
**
**   SELECT ... FROM trace_events('run.trace.json.gz');
**   CREATE VIRTUAL TABLE t USING trace_events('run.trace.json.gz');
**   SELECT * FROM profsum_diagnostics('run.trace.json.gz');
**
** trace_events schema (one row per traceEvents entry that is an object
** with a string "ph"; see docs/trace_events.md for every column):
**
**   CREATE TABLE trace_events(
**     idx, ph, name, cat, pid, tid, ts, dur, dur_ps,
**     process_name, thread_name,
**     tf_op, hlo_op, hlo_module, hlo_category, long_name, source, run_id,
**     step_num, flops, bytes_accessed, correlation_id, group_id,
**     args, depth, parent_idx, excl, excl_ps,
**     path HIDDEN           -- input: the trace file
**   );
**
**   CREATE TABLE profsum_diagnostics(
**     idx, byte_offset, kind, detail,
**     path HIDDEN
**   );
**
** Plans (xBestIndex → xFilter).  idxNum bits:
**   0x01  the path is given as argv[0] (an = constraint on the hidden column;
**         more of them, argv[1..], must hold the same value, else no rows)
**   0x02  durations of B slices are needed (dur, dur_ps)   → first pass
**   0x04  track columns are needed (depth .. excl_ps)       → first pass
**   0x08  process/thread names are needed                   → first pass
**   0x10  known args keys are needed (tf_op .. group_id)
**   0x20  the excl column is needed (a second, ns-domain sweep)
**   0x40  the args column is needed (an XPlane row builds it only then)
** A plain scan (count(*), or columns that need none of the above) streams
** the file once in constant memory.  Columns that need the whole file
** (B durations, names from M events anywhere, nesting) run a first pass
** (track.c) and then stream again, joining the first pass's records by
** entry index.
**
** Non-regular inputs (a pipe, a FIFO, /dev/stdin, /dev/fd/N, <(...)):
** a one-pass query reads them as it reads a file; a two-pass query
** cannot read them again, so it fails at once, before any read, with
** "not a regular file (a pipe?)" (see tracePathRereadable).
**
** The hidden path column returns the argument as given (a copy of the
** value, as json_each's hidden columns do), or the CREATE VIRTUAL TABLE
** argument, so several files can be read in one query and told apart.
** A table made with a path reads that file only: a `path = ?` constraint
** on it selects its rows when it holds that path, else none.
**
** Security: both functions read files, so they are marked
** SQLITE_VTAB_DIRECTONLY: a view or trigger stored in a database cannot
** use them (a hostile .db file could otherwise read arbitrary files when
** opened).  TEMP views and direct SQL can.
*/
#include "profsum_int.h"
#include "cnum.h"
#include "profsum_reader.h"
#include "diaglist.h"
#include "utf8rule.h"
#include "vtabkit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Column numbers of trace_events (the declaration string below must match). */
#define TEV_IDX            0
#define TEV_PH             1
#define TEV_NAME           2
#define TEV_CAT            3
#define TEV_PID            4
#define TEV_TID            5
#define TEV_TS             6
#define TEV_DUR            7
#define TEV_DUR_PS         8
#define TEV_PROCESS_NAME   9
#define TEV_THREAD_NAME    10
#define TEV_TF_OP          11   /* TEV_TF_OP .. TEV_GROUP_ID: args keys, */
#define TEV_GROUP_ID       22   /* in PROFSUM_AK_* order */
#define TEV_ARGS           23
#define TEV_DEPTH          24
#define TEV_PARENT_IDX     25
#define TEV_EXCL           26
#define TEV_EXCL_PS        27
#define TEV_PATH           28   /* HIDDEN input */

#define TEV_SCHEMA "CREATE TABLE x(idx INTEGER, ph TEXT, name TEXT, cat TEXT, " \
  "pid, tid, ts INTEGER, dur INTEGER, dur_ps INTEGER, process_name TEXT, " \
  "thread_name TEXT, tf_op TEXT, hlo_op TEXT, hlo_module TEXT, hlo_category TEXT, " \
  "long_name TEXT, source TEXT, run_id TEXT, step_num INTEGER, flops INTEGER, " \
  "bytes_accessed INTEGER, correlation_id INTEGER, group_id INTEGER, args TEXT, " \
  "depth INTEGER, parent_idx INTEGER, excl INTEGER, excl_ps INTEGER, path HIDDEN)"

#define DIAG_IDX     0
#define DIAG_OFFSET  1
#define DIAG_KIND    2
#define DIAG_DETAIL  3
#define DIAG_PATH    4
#define DIAG_SCHEMA "CREATE TABLE x(idx INTEGER, byte_offset INTEGER, kind TEXT, " \
  "detail TEXT, path HIDDEN)"

#define PLAN_PATH    0x01
#define PLAN_DUR     0x02
#define PLAN_TRACK   0x04
#define PLAN_NAMES   0x08
#define PLAN_ARGKEYS 0x10
#define PLAN_EXCLNS  0x20
#define PLAN_ARGS    0x40

/* The table object shared by both functions. */
typedef struct TraceTab {
  sqlite3_vtab base;      /* Base class: must be first */
  sqlite3 *db;            /* The connection */
  int isDiag;             /* 1 for profsum_diagnostics */
  char *zPath;            /* CREATE VIRTUAL TABLE t USING trace_events(PATH) */
  char *zStored;          /* "schema.table" of a table stored in a database
                          ** file (one an older profsum let be created): it
                          ** reads nothing, it can only be dropped; or 0 */
} TraceTab;

/* The rows of profsum_diagnostics: every diagnostic of the file
** (diaglist.h keeps them compact), and the collector's out-of-memory. */
typedef struct DiagList {
  ProfsumDiagList L;
  int oom;
} DiagList;

/* A cursor of either function. */
typedef struct TraceCursor {
  sqlite3_vtab_cursor base;   /* Base class: must be first */
  const char *zFunc;          /* "trace_events" or "profsum_diagnostics" */
  int iCol;                   /* the column xColumn is asked for */
  int plan;                   /* idxNum of the current xFilter */
  ProfsumStream *pStream;     /* trace_events: the rows (JSON or XPlane) */
  ProfsumEvent *pEv;          /* current event (owned by pStream) */
  ProfsumTrackInfo *pInfo;    /* first-pass results, or NULL */
  int64_t iRec;               /* next candidate record of pInfo */
  ProfsumTrackRec *pRec;      /* record of the current event, or NULL */
  int eof;                    /* 1 at the end */
  char *aScratch;             /* decoding scratch (grown) */
  int64_t nScratch;
  DiagList diag;              /* profsum_diagnostics rows */
  int64_t iDiag;              /* current diagnostic row */
  sqlite3_value *pPathArg;    /* the path argument of xFilter (owned copy), or NULL */
  ProfsumProbe probe;         /* the connection's interrupt: every read of the
                              ** file asks it (profsumStopPush) */
  char *zLazyPath;            /* dur/dur_ps alone: the path whose first pass
                              ** runs when the first B row comes (traceLazyDur),
                              ** or NULL */
} TraceCursor;

/* The file the cursor reads: the xFilter argument as given, or the CREATE
** VIRTUAL TABLE argument ("" when neither is known). */
static const char *curPath(TraceCursor *pCur){
  const TraceTab *pTab = (const TraceTab*)pCur->base.pVtab;
  const char *z = pCur->pPathArg ? (const char*)sqlite3_value_text(pCur->pPathArg) : pTab->zPath;
  return z ? z : "";
}

/* ------------------------------------------------------------------ */
/* Table methods                                                       */
/* ------------------------------------------------------------------ */

/* Strip SQL quotes from a module argument; returns a new string. */
static char *unquoteArg(const char *z){
  size_t n = strlen(z);
  char q = z[0];
  char *zOut;
  size_t i, j;
  if( n<2 || (q!='\'' && q!='"') || z[n-1]!=q ) return sqlite3_mprintf("%s", z);
  zOut = sqlite3_malloc64(n);
  if( zOut==0 ) return 0;
  for(i=1, j=0; i<n-1; i++){
    zOut[j++] = z[i];
    if( z[i]==q && z[i+1]==q ) i++;
  }
  zOut[j] = 0;
  return zOut;
}

/* 1 when the xCreate/xConnect arguments describe a table stored in a
** database file: neither the eponymous table-valued function nor TEMP.
** Such a table would read the file it names for whoever opens the database
** and selects from it (DIRECTONLY does not cover a direct SELECT). */
static int isStoredTable(int argc, const char *const*argv){
  return !(argc==3 && sqlite3_stricmp(argv[2], argv[0])==0) && sqlite3_stricmp(argv[1], "temp")!=0;
}

/* xConnect/xCreate for both functions (pAux != 0 → diagnostics).  They
** must be the same function for the eponymous table-valued function to
** exist, so creation cannot be told from connection: a stored table (see
** isStoredTable) is created and connects (so it can be dropped), but
** reads nothing: traceFilter refuses it. */
static int traceConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                        sqlite3_vtab **ppVtab, char **pzErr){
  TraceTab *pTab;
  int isDiag = pAux!=0;
  int rc;
  rc = sqlite3_declare_vtab(db, isDiag ? DIAG_SCHEMA : TEV_SCHEMA);
  if( rc ) return rc;
  /* Reads files: never from a view or trigger stored in a database. */
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  pTab = sqlite3_malloc64(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->db = db;
  pTab->isDiag = isDiag;
  if( argc>4 ){
    *pzErr = sqlite3_mprintf("%s: takes one argument, the trace path",
                             isDiag ? "profsum_diagnostics" : "trace_events");
    sqlite3_free(pTab);
    return SQLITE_ERROR;
  }
  if( argc==4 ){
    pTab->zPath = unquoteArg(argv[3]);
    if( pTab->zPath==0 ){ sqlite3_free(pTab); return SQLITE_NOMEM; }
  }
  if( isStoredTable(argc, argv) ){
    pTab->zStored = sqlite3_mprintf("%s.%s", argv[1], argv[2]);
    if( pTab->zStored==0 ){ sqlite3_free(pTab->zPath); sqlite3_free(pTab); return SQLITE_NOMEM; }
  }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int traceDisconnect(sqlite3_vtab *pVtab){
  TraceTab *pTab = (TraceTab*)pVtab;
  sqlite3_free(pTab->zStored);
  sqlite3_free(pTab->zPath);
  sqlite3_free(pTab);
  return SQLITE_OK;
}

/* See the plan bits at the top of the file.  Every usable "path = ?"
** constraint is an argument of xFilter (profsumVtabInputArgs: the
** function's own argument and those a query adds, `trace_events(?) WHERE
** path IN (...)`); xFilter reads the file when they agree. */
static int traceBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *p){
  TraceTab *pTab = (TraceTab*)pVtab;
  int i, plan = 0, iPathCol = pTab->isDiag ? DIAG_PATH : TEV_PATH, bPartial = 0;
  int nPath = profsumVtabInputArgs(p, iPathCol, 0, 8, &bPartial);
  if( nPath<0 && pTab->zPath==0 ) return SQLITE_CONSTRAINT;
  if( nPath>0 ) plan |= PLAN_PATH;
  if( !pTab->isDiag ){
    sqlite3_uint64 u = p->colUsed;
    if( u & ((1ULL<<TEV_DUR)|(1ULL<<TEV_DUR_PS)) ) plan |= PLAN_DUR;
    if( u & ((1ULL<<TEV_DEPTH)|(1ULL<<TEV_PARENT_IDX)|(1ULL<<TEV_EXCL)|(1ULL<<TEV_EXCL_PS)) ){
      plan |= PLAN_TRACK|PLAN_DUR;
    }
    if( u & (1ULL<<TEV_EXCL) ) plan |= PLAN_EXCLNS;
    if( u & ((1ULL<<TEV_PROCESS_NAME)|(1ULL<<TEV_THREAD_NAME)) ) plan |= PLAN_NAMES;
    for(i=TEV_TF_OP; i<=TEV_GROUP_ID; i++) if( u & (1ULL<<i) ) plan |= PLAN_ARGKEYS;
    if( u & (1ULL<<TEV_ARGS) ) plan |= PLAN_ARGS;
  }
  p->idxNum = plan;
  p->estimatedCost = (plan & (PLAN_DUR|PLAN_TRACK|PLAN_NAMES)) ? 2e6 : 1e6;
  if( bPartial ) p->estimatedCost *= PROFSUM_VTAB_PARTIAL_COST;
  p->estimatedRows = 1000000;
  if( !(plan & PLAN_PATH) && pTab->zPath==0 ){
    p->estimatedCost = 1e30;   /* xFilter will report the missing argument */
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Cursor                                                              */
/* ------------------------------------------------------------------ */

static int traceOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  TraceTab *pTab = (TraceTab*)pVtab;
  TraceCursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->probe.db = pTab->db;
  pCur->zFunc = pTab->isDiag ? "profsum_diagnostics" : "trace_events";
  pCur->eof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Release everything the cursor holds (shared by xFilter and xClose). */
static void traceReset(TraceCursor *pCur){
  profsumStreamClose(pCur->pStream);
  pCur->pStream = 0;
  pCur->pEv = 0;
  profsumTrackFree(pCur->pInfo);
  pCur->pInfo = 0;
  pCur->pRec = 0;
  pCur->iRec = 0;
  profsumDiagListFree(&pCur->diag.L);
  pCur->diag.oom = 0;
  pCur->iDiag = 0;
  sqlite3_value_free(pCur->pPathArg);
  pCur->pPathArg = 0;
  sqlite3_free(pCur->zLazyPath);
  pCur->zLazyPath = 0;
  pCur->eof = 1;
}

static int traceClose(sqlite3_vtab_cursor *cur){
  TraceCursor *pCur = (TraceCursor*)cur;
  traceReset(pCur);
  profsumProbeDone(&pCur->probe);
  sqlite3_free(pCur->aScratch);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Diagnostic callback of profsum_diagnostics: keep every row (the reader
** formats every detail: PROFSUM_NEED_DIAG). */
static void diagCollect(void *pCtx, int64_t idx, int64_t iOffset,
                        const char *zKind, const char *zDetail){
  DiagList *d = (DiagList*)pCtx;
  if( d->oom ) return;
  if( profsumDiagListAdd(&d->L, idx, iOffset, zKind, zDetail) ) d->oom = 1;
}

/* A plan that needs only the durations of B rows (dur, dur_ps) reads the
** file once while no B row comes: an X row carries its own duration.  At
** the first B row (pCur->zLazyPath set, no first pass yet) this runs the
** B/E pairing pass over the whole file, as an eager plan would have run it
** before the first row, and the stream goes on joining its records: rows
** before the B need none.  Returns SQLITE_OK or an error with the vtab's
** message set. */
static int traceLazyDur(TraceCursor *pCur){
  sqlite3_vtab *pVtab = pCur->base.pVtab;
  ProfsumStopCheck prevStop;
  char *zErr = 0;
  int rc;
  prevStop = profsumStopPush(profsumInterrupted, &pCur->probe);
  rc = profsumTrackAnalyze(pCur->zFunc, pCur->zLazyPath, PROFSUM_NEED_DUR, 0, 0,
                           &pCur->pInfo, &zErr);
  profsumStopPop(prevStop);
  sqlite3_free(pCur->zLazyPath);
  pCur->zLazyPath = 0;
  pCur->iRec = 0;
  if( rc && zErr ){ sqlite3_free(pVtab->zErrMsg); pVtab->zErrMsg = profsumUtf8Scrub(zErr); }
  return rc;
}

/* Advance to the next event (trace_events). */
static int traceNextEvent(TraceCursor *pCur){
  char *zErr = 0;
  int rc = profsumStreamNext(pCur->pStream, &pCur->pEv, &zErr);
  if( rc==SQLITE_ROW ){
    pCur->pRec = 0;
    if( pCur->zLazyPath ){
      const ProfsumSpan *ph = &pCur->pEv->ph;
      if( ph->n==1 && ph->z[0]=='B' && !(ph->flags & PROFSUM_SF_ESCAPE) ){
        rc = traceLazyDur(pCur);
        if( rc ){ pCur->eof = 1; return rc; }
      }
    }
    if( pCur->pInfo ){
      ProfsumTrackInfo *pI = pCur->pInfo;
      while( pCur->iRec<pI->nRec && profsumTrackRec(pI, pCur->iRec)->idx < pCur->pEv->idx ) pCur->iRec++;
      if( pCur->iRec<pI->nRec && profsumTrackRec(pI, pCur->iRec)->idx==pCur->pEv->idx ){
        pCur->pRec = profsumTrackRec(pI, pCur->iRec);
      }
    }
    return SQLITE_OK;
  }
  pCur->eof = 1;
  if( rc==SQLITE_DONE ){
    if( pCur->pInfo && profsumStreamEntries(pCur->pStream)!=pCur->pInfo->nEntries ){
      pCur->base.pVtab->zErrMsg = profsumUtf8Scrub(sqlite3_mprintf("%s: '%s': the file changed "
          "while it was being read", pCur->zFunc, curPath(pCur)));
      return SQLITE_ERROR;
    }
    return SQLITE_OK;
  }
  if( zErr ){
    sqlite3_free(pCur->base.pVtab->zErrMsg);
    pCur->base.pVtab->zErrMsg = profsumUtf8Scrub(zErr);
  }
  return rc;
}

/* Can zPath be read twice (a two-pass plan)?  Opens it without blocking
** (O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
** writer), fstats the descriptor and closes it; nothing is read.  Returns
** SQLITE_OK for a regular file (or a block device, or a directory, which
** the open reports), and also when the path cannot be opened
** (the real open then reports why, with the usual message).  Otherwise
** sets the vtab error "<func>: '<path>': not a regular file ..." and
** returns SQLITE_ERROR.  Nothing is kept open. */
static int tracePathRereadable(TraceCursor *pCur, const char *zPath){
  struct stat st;
  const char *zKind;
  int fd, rc;
  do{ fd = open(zPath, O_RDONLY|O_NONBLOCK|O_CLOEXEC); }while( fd<0 && errno==EINTR );
  if( fd<0 ) return SQLITE_OK;
  rc = fstat(fd, &st);
  close(fd);
  if( rc!=0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISDIR(st.st_mode) ) return SQLITE_OK;
  if( S_ISFIFO(st.st_mode) ) zKind = "not a regular file (a pipe?)";
  else if( S_ISCHR(st.st_mode) ) zKind = "not a regular file (a character device)";
  else if( S_ISSOCK(st.st_mode) ) zKind = "not a regular file (a socket)";
  else zKind = "not a regular file";
  profsumVtabErr(pCur->base.pVtab, "%s: '%s' is %s: this query reads the trace twice "
      "(columns dur, dur_ps, process_name, thread_name, depth, parent_idx, excl, excl_ps); "
      "write it to a file first, or select only columns read in one pass",
      pCur->zFunc, zPath, zKind);
  return SQLITE_ERROR;
}

/* An out-of-memory error of the cursor's function on zPath: the message
** names both (when it can be made).  Returns SQLITE_NOMEM. */
static int traceNomem(TraceCursor *pCur, const char *zPath, const char *zWhat){
  profsumVtabErr(pCur->base.pVtab, "%s: '%s': out of memory %s", pCur->zFunc, zPath, zWhat);
  return SQLITE_NOMEM;
}

/* The reading part of xFilter on zPath (see traceFilter): the first pass
** when the plan needs one (profsum_diagnostics: the whole work), then the
** scanner of the second.  Returns SQLITE_OK or an error with the vtab's
** message set. */
static int traceStart(TraceCursor *pCur, const char *zPath, int idxNum){
  sqlite3_vtab *pVtab = pCur->base.pVtab;
  TraceTab *pTab = (TraceTab*)pVtab;
  char *zErr = 0;
  int rc;
  if( pTab->isDiag ){
    rc = profsumTrackAnalyze(pCur->zFunc, zPath,
                             PROFSUM_NEED_DUR|PROFSUM_NEED_TRACK|PROFSUM_NEED_DIAG,
                             diagCollect, &pCur->diag, &pCur->pInfo, &zErr);
    if( rc==SQLITE_OK && pCur->diag.oom ){
      return traceNomem(pCur, zPath, "for the diagnostics");
    }
    if( rc ){
      if( zErr ){ sqlite3_free(pVtab->zErrMsg); pVtab->zErrMsg = profsumUtf8Scrub(zErr); }
      return rc;
    }
    profsumDiagListSort(&pCur->diag.L);
    profsumTrackFree(pCur->pInfo);
    pCur->pInfo = 0;
    pCur->eof = pCur->diag.L.n==0;
    return SQLITE_OK;
  }
  if( (idxNum & (PLAN_DUR|PLAN_TRACK))
   || ((idxNum & PLAN_NAMES) && profsumSniffFormat(zPath)!=PROFSUM_FMT_XPLANE) ){
    /* (an XPlane row carries its process and thread names: names alone
    ** need no first pass there) */
    unsigned needs = 0;
    rc = tracePathRereadable(pCur, zPath);
    if( rc ) return rc;
    if( (idxNum & (PLAN_DUR|PLAN_TRACK|PLAN_NAMES))==PLAN_DUR ){
      /* durations alone: one pass unless a B row comes (traceLazyDur) */
      pCur->zLazyPath = sqlite3_mprintf("%s", zPath);
      if( pCur->zLazyPath==0 ) return traceNomem(pCur, zPath, "opening it");
      goto open_stream;
    }
    if( idxNum & PLAN_DUR ) needs |= PROFSUM_NEED_DUR;
    if( idxNum & PLAN_TRACK ) needs |= PROFSUM_NEED_TRACK;
    if( idxNum & PLAN_NAMES ) needs |= PROFSUM_NEED_NAMES;
    if( idxNum & PLAN_EXCLNS ) needs |= PROFSUM_NEED_EXCLNS;
    rc = profsumTrackAnalyze(pCur->zFunc, zPath, needs, 0, 0, &pCur->pInfo, &zErr);
    if( rc ){
      if( zErr ){ sqlite3_free(pVtab->zErrMsg); pVtab->zErrMsg = profsumUtf8Scrub(zErr); }
      return rc;
    }
  }
open_stream:
  {
    unsigned flags = ((idxNum & PLAN_ARGKEYS) ? PROFSUM_SCAN_ARGKEYS : 0)
                   | ((idxNum & PLAN_ARGS) ? PROFSUM_SCAN_ARGS : 0);
    rc = profsumStreamOpen(pCur->zFunc, zPath, flags, 0, 0, &pCur->pStream, &zErr);
    if( rc ){
      if( zErr==0 && rc==SQLITE_NOMEM ) return traceNomem(pCur, zPath, "opening it");
      if( zErr==0 ){
        profsumVtabErr(pVtab, "%s: '%s': %s", pCur->zFunc, zPath, sqlite3_errstr(rc));
        return rc;
      }
      sqlite3_free(pVtab->zErrMsg);
      pVtab->zErrMsg = profsumUtf8Scrub(zErr);
      return rc;
    }
  }
  pCur->eof = 0;
  return traceNextEvent(pCur);
}

static int traceFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                       int argc, sqlite3_value **argv){
  TraceCursor *pCur = (TraceCursor*)cur;
  TraceTab *pTab = (TraceTab*)cur->pVtab;
  const char *zPath = pTab->zPath;
  ProfsumStopCheck prevStop;
  int rc;
  (void)idxStr;
  traceReset(pCur);
  pCur->plan = idxNum;
  if( pTab->zStored ){
    sqlite3_free(pTab->base.zErrMsg);
    pTab->base.zErrMsg = sqlite3_mprintf("trace_events: table %s is stored in a database file, "
        "so it reads nothing: one would read files for whoever opens the database; only TEMP "
        "tables read (CREATE VIRTUAL TABLE temp.t USING trace_events(...)); DROP it",
        pTab->zStored);
    return pTab->base.zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( (idxNum & PLAN_PATH) && argc>0 ){
    /* path constraints that differ: no row has a path equal to each */
    rc = profsumVtabArgsAgree(argv, argc);
    if( rc<=0 ) return rc<0 ? SQLITE_NOMEM : SQLITE_OK;             /* no rows */
    if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return SQLITE_OK;   /* no rows */
    if( pTab->zPath ){
      /* CREATE VIRTUAL TABLE t USING trace_events(F): every row's path is
      ** F, so `WHERE path = G` selects none of them (it reads no G) */
      const char *z;
      if( sqlite3_value_type(argv[0])!=SQLITE_TEXT ) return SQLITE_OK;
      z = (const char*)sqlite3_value_text(argv[0]);
      if( z==0 ) return SQLITE_NOMEM;
      if( strcmp(z, pTab->zPath)!=0
       || (size_t)sqlite3_value_bytes(argv[0])!=strlen(pTab->zPath) ) return SQLITE_OK;
    }
    pCur->pPathArg = sqlite3_value_dup(argv[0]);   /* the hidden column's value */
    if( pCur->pPathArg==0 ) return SQLITE_NOMEM;
    zPath = (const char*)sqlite3_value_text(pCur->pPathArg);
    if( zPath==0 ) return SQLITE_NOMEM;
    if( profsumValueHasNul(pCur->pPathArg) ){
      profsumVtabErr(cur->pVtab, "%s: '%q': path contains a NUL byte", pCur->zFunc, zPath);
      return SQLITE_ERROR;
    }
  }
  if( zPath==0 ){
    profsumVtabErr(cur->pVtab, "%s: missing required argument PATH", pCur->zFunc);
    return SQLITE_ERROR;
  }
  /* The sources opened here, the second pass's included (it is read in
  ** later xNext calls), stop at the connection's interrupt. */
  prevStop = profsumStopPush(profsumInterrupted, &pCur->probe);
  rc = traceStart(pCur, zPath, idxNum);
  profsumStopPop(prevStop);
  return rc;
}

static int traceNext(sqlite3_vtab_cursor *cur){
  TraceCursor *pCur = (TraceCursor*)cur;
  if( pCur->pStream==0 ){
    pCur->iDiag++;
    if( pCur->iDiag>=pCur->diag.L.n ) pCur->eof = 1;
    return SQLITE_OK;
  }
  return traceNextEvent(pCur);
}

static int traceEof(sqlite3_vtab_cursor *cur){
  return ((TraceCursor*)cur)->eof;
}

static int traceRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  TraceCursor *pCur = (TraceCursor*)cur;
  *pRowid = pCur->pStream ? pCur->pEv->idx : pCur->iDiag;
  return SQLITE_OK;
}

/* Result helpers ---------------------------------------------------- */

/* Out of memory making a column's value: an SQLITE_NOMEM error naming the
** function, the file and the entry (SQLite's bare one when even that
** message cannot be made). */
static void colNomem(TraceCursor *pCur, sqlite3_context *ctx){
  const char *zPath = curPath(pCur);
  char *z = profsumUtf8Scrub(sqlite3_mprintf("%s: '%s': out of memory for a value of entry %lld",
                                             pCur->zFunc, zPath ? zPath : "",
                                             (long long)pCur->pEv->idx));
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_error(ctx, z, -1);
  sqlite3_free(z);
  sqlite3_result_error_code(ctx, SQLITE_NOMEM);
}

/* Where the current row and column are, for a message
** (profsumResultTextLimited): "<func>: '<path>': entry <idx> (byte
** <offset>): its <column>". */
static char *colWhere(void *pArg){
  TraceCursor *pCur = (TraceCursor*)pArg;
  const char *p = strchr(TEV_SCHEMA, '(') + 1;
  int i, k = 0;
  /* the column's name, read from TEV_SCHEMA (the one list of them) */
  for(i=pCur->iCol; i>0 && p; i--){ p = strchr(p, ','); if( p ) p += 2; }
  while( p && p[k] && p[k]!=' ' && p[k]!=',' && p[k]!=')' ) k++;
  return sqlite3_mprintf("%s: '%s': entry %lld (byte %lld): its %.*s", pCur->zFunc, curPath(pCur),
                         (long long)pCur->pEv->idx, (long long)pCur->pEv->iOffset, k, p ? p : "");
}

/* z[0..n) as the TEXT of the current column, or the error that it is over
** SQLite's limit on one value, naming the file, entry and column. */
static void colText(TraceCursor *pCur, sqlite3_context *ctx, const char *z, int64_t n,
                    void (*xDel)(void*)){
  profsumResultTextLimited(ctx, z, n, xDel, colWhere, pCur);
}

/* A JSON string span as TEXT (decoded). */
static void resultSpanText(TraceCursor *pCur, sqlite3_context *ctx, const ProfsumSpan *s){
  const char *z;
  int64_t n;
  if( s->type!=PROFSUM_JT_STRING ) return;   /* NULL */
  if( profsumSpanText(s, &pCur->aScratch, &pCur->nScratch, &z, &n) ){
    colNomem(pCur, ctx);
    return;
  }
  colText(pCur, ctx, z, n, SQLITE_TRANSIENT);
}

/* Any JSON value span as valid JSON text. */
static void resultSpanJson(TraceCursor *pCur, sqlite3_context *ctx, const ProfsumSpan *s){
  const char *z;
  int64_t n;
  if( profsumSpanJson(s, &pCur->aScratch, &pCur->nScratch, &z, &n) ){
    colNomem(pCur, ctx);
    return;
  }
  colText(pCur, ctx, z, n, SQLITE_TRANSIENT);
}

/* An args value for a TEXT column: strings decoded, other scalars as their
** JSON text, containers as JSON, null/absent as NULL. */
static void resultArgText(TraceCursor *pCur, sqlite3_context *ctx, const ProfsumSpan *s){
  switch( s->type ){
    case PROFSUM_JT_NONE: case PROFSUM_JT_NULL: return;
    case PROFSUM_JT_STRING: resultSpanText(pCur, ctx, s); return;
    default: resultSpanJson(pCur, ctx, s); return;
  }
}

/* An args value for an INTEGER column: integers (also written as strings)
** as INTEGER, integers beyond int64 as exact TEXT, other numbers as REAL,
** anything else NULL. */
static void resultArgInt(sqlite3_context *ctx, const ProfsumSpan *s){
  int64_t v;
  char zNum[64];
  if( s->type!=PROFSUM_JT_NUMBER && s->type!=PROFSUM_JT_STRING ) return;
  if( s->type==PROFSUM_JT_STRING && (s->flags & (PROFSUM_SF_ESCAPE|PROFSUM_SF_BADUTF8)) ){
    /* the decoded text ("\u0035" is 5) */
    char *zBuf = 0;
    int64_t nBuf = 0;
    ProfsumSpan d = *s;
    if( profsumSpanText(s, &zBuf, &nBuf, &d.z, &d.n) ){
      sqlite3_result_error_nomem(ctx);
      return;
    }
    d.flags = 0;
    resultArgInt(ctx, &d);
    sqlite3_free(zBuf);
    return;
  }
  if( profsumParseInt(s->z, s->n, &v)==0 ){
    sqlite3_result_int64(ctx, v);
    return;
  }
  {
    /* An integer beyond int64 (xprof writes uint64 ids as strings): keep
    ** it exact as TEXT rather than rounding it through a REAL. */
    int64_t i = (s->n>0 && s->z[0]=='-') ? 1 : 0;
    while( i<s->n && s->z[i]>='0' && s->z[i]<='9' ) i++;
    if( i==s->n && s->n>1 ){
      sqlite3_result_text64(ctx, s->z, (sqlite3_uint64)s->n, SQLITE_TRANSIENT, SQLITE_UTF8);
      return;
    }
  }
  if( s->n>0 && s->n<(int64_t)sizeof(zNum) ){
    profsum_ps ps;
    memcpy(zNum, s->z, (size_t)s->n);
    zNum[s->n] = 0;
    /* Only numeric text (exact decimal grammar) becomes REAL. */
    if( profsumParseMicros(s->z, s->n, &ps)>=0 ){
      sqlite3_result_double(ctx, profsumStrtod(zNum, 0));
    }
  }
}

/* The args column: the args value as JSON ('{}' when absent), with the
** compact counter "entries" merged in. */
static void resultArgs(TraceCursor *pCur, sqlite3_context *ctx){
  const ProfsumEvent *ev = pCur->pEv;
  if( ev->entries.type==PROFSUM_JT_NONE ){
    if( ev->args.type==PROFSUM_JT_NONE ){
      sqlite3_result_text(ctx, "{}", 2, SQLITE_STATIC);
    }else{
      resultSpanJson(pCur, ctx, &ev->args);
    }
    return;
  }
  {
    /* {<args members>, "entries": <entries>} */
    sqlite3_str *pStr = sqlite3_str_new(0);
    const char *z;
    int64_t n;
    char *zOut;
    sqlite3_str_appendchar(pStr, 1, '{');
    if( ev->args.type==PROFSUM_JT_OBJECT ){
      if( profsumSpanJson(&ev->args, &pCur->aScratch, &pCur->nScratch, &z, &n) ){
        sqlite3_free(sqlite3_str_finish(pStr));
        colNomem(pCur, ctx);
        return;
      }
      /* inner members: between the braces */
      {
        int64_t a = 1, b = n-1;
        while( a<b && (z[a]==' '||z[a]=='\t'||z[a]=='\n'||z[a]=='\r') ) a++;
        if( a<b ){
          sqlite3_str_append(pStr, z+a, (int)(b-a));
          sqlite3_str_appendchar(pStr, 1, ',');
        }
      }
    }
    sqlite3_str_appendall(pStr, "\"entries\":");
    if( profsumSpanJson(&ev->entries, &pCur->aScratch, &pCur->nScratch, &z, &n) ){
      sqlite3_free(sqlite3_str_finish(pStr));
      colNomem(pCur, ctx);
      return;
    }
    sqlite3_str_append(pStr, z, (int)n);
    sqlite3_str_appendchar(pStr, 1, '}');
    if( sqlite3_str_errcode(pStr) ){
      int e = sqlite3_str_errcode(pStr);
      sqlite3_free(sqlite3_str_finish(pStr));
      if( e==SQLITE_NOMEM ) colNomem(pCur, ctx);
      else sqlite3_result_error_toobig(ctx);
      return;
    }
    n = sqlite3_str_length(pStr);
    zOut = sqlite3_str_finish(pStr);
    colText(pCur, ctx, zOut, n, sqlite3_free);
  }
}

/* pid/tid: INTEGER, TEXT or NULL. */
static void resultId(TraceCursor *pCur, sqlite3_context *ctx, const ProfsumId *id){
  if( id->kind==PROFSUM_ID_INT ) sqlite3_result_int64(ctx, id->iVal);
  else if( id->kind==PROFSUM_ID_TEXT ) resultSpanText(pCur, ctx, &id->s);
}

/* A picosecond quantity as INTEGER ps or floor ns (NULL if out of range). */
static void resultPs(sqlite3_context *ctx, profsum_ps v, int asNs){
  if( v>=INT64_MIN && v<=INT64_MAX ){
    /* under 2^63 ps (about 106 days: the times of most traces, whose
    ** clocks start near 0, and every duration): a 64-bit division, the
    ** same floor as profsumPsToNs's 128-bit one (a slow helper call) */
    int64_t x = (int64_t)v, q = x/1000;
    if( asNs && x%1000<0 ) q--;
    sqlite3_result_int64(ctx, asNs ? q : x);
    return;
  }
  /* ps beyond int64: NULL; ns when the floor fits (-2^63 ns does) */
  if( asNs && profsumPsNsFits(v) ) sqlite3_result_int64(ctx, profsumPsToNs(v));
}

/* The hidden path column: the xFilter argument as given, or the CREATE
** VIRTUAL TABLE argument. */
static void resultPath(TraceCursor *pCur, sqlite3_context *ctx){
  const TraceTab *pTab = (const TraceTab*)pCur->base.pVtab;
  if( pCur->pPathArg ) sqlite3_result_value(ctx, pCur->pPathArg);
  else if( pTab->zPath ) sqlite3_result_text(ctx, pTab->zPath, -1, SQLITE_TRANSIENT);
}

static int traceColumnEvents(TraceCursor *pCur, sqlite3_context *ctx, int i){
  const ProfsumEvent *ev = pCur->pEv;
  const ProfsumTrackRec *r = pCur->pRec;
  char ph = (ev->ph.n==1 && !(ev->ph.flags & PROFSUM_SF_ESCAPE)) ? ev->ph.z[0] : 0;
  pCur->iCol = i;
  switch( i ){
    case TEV_IDX: sqlite3_result_int64(ctx, ev->idx); break;
    case TEV_PH: resultSpanText(pCur, ctx, &ev->ph); break;
    case TEV_NAME: resultSpanText(pCur, ctx, &ev->name); break;
    case TEV_CAT: resultSpanText(pCur, ctx, &ev->cat); break;
    case TEV_PID: resultId(pCur, ctx, &ev->pid); break;
    case TEV_TID: resultId(pCur, ctx, &ev->tid); break;
    case TEV_TS: if( ev->hasTs ) resultPs(ctx, ev->ts, 1); break;
    case TEV_DUR: case TEV_DUR_PS:
      if( ph=='B' ){
        if( r && r->dur>=0 ) resultPs(ctx, r->dur, i==TEV_DUR);
      }else if( ph!='E' && ev->hasDur ){
        resultPs(ctx, ev->dur, i==TEV_DUR);
      }
      break;
    case TEV_PROCESS_NAME: case TEV_THREAD_NAME:
      if( ev->procName.type==PROFSUM_JT_STRING ){
        /* the format names them per row (XPlane) */
        resultSpanText(pCur, ctx, i==TEV_THREAD_NAME ? &ev->threadName : &ev->procName);
      }else if( pCur->pInfo ){
        int64_t n;
        const char *z = profsumNameLookup(pCur->pInfo->pNames, &ev->pid,
                                          i==TEV_THREAD_NAME ? &ev->tid : 0, &n);
        if( z ) colText(pCur, ctx, z, n, SQLITE_TRANSIENT);
      }
      break;
    case TEV_ARGS: resultArgs(pCur, ctx); break;
    case TEV_DEPTH: if( r && r->depth>=0 ) sqlite3_result_int64(ctx, r->depth); break;
    case TEV_PARENT_IDX: if( r && r->depth>0 ) sqlite3_result_int64(ctx, r->parent); break;
    case TEV_EXCL: if( r && r->excl>=0 ) sqlite3_result_int64(ctx, r->exclNs); break;
    case TEV_EXCL_PS: if( r && r->excl>=0 ) sqlite3_result_int64(ctx, r->excl); break;
    case TEV_PATH: resultPath(pCur, ctx); break;
    default: {
      int k = i - TEV_TF_OP;         /* PROFSUM_AK_* */
      if( k==PROFSUM_AK_STEP_NUM || k>=PROFSUM_AK_FLOPS ){
        resultArgInt(ctx, &ev->aArg[k]);
      }else{
        resultArgText(pCur, ctx, &ev->aArg[k]);
      }
      break;
    }
  }
  return SQLITE_OK;
}

static int traceColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  TraceCursor *pCur = (TraceCursor*)cur;
  if( pCur->pStream ) return traceColumnEvents(pCur, ctx, i);
  {
    const ProfsumDiagList *L = &pCur->diag.L;
    const ProfsumDiagRec *d = &L->a[pCur->iDiag];
    switch( i ){
      case DIAG_IDX: if( d->idx>=0 ) sqlite3_result_int64(ctx, d->idx); break;
      case DIAG_OFFSET: if( d->off>=0 ) sqlite3_result_int64(ctx, d->off); break;
      case DIAG_KIND: sqlite3_result_text(ctx, profsumDiagListKind(L, d), -1, SQLITE_STATIC); break;
      case DIAG_DETAIL:
        sqlite3_result_text(ctx, profsumDiagListDetail(L, d), (int)d->nDetail, SQLITE_TRANSIENT);
        break;
      case DIAG_PATH: resultPath(pCur, ctx); break;
      default: break;
    }
  }
  return SQLITE_OK;
}

static sqlite3_module traceModule = {
  /* iVersion    */ 0,
  /* xCreate     */ traceConnect,     /* = xConnect: eponymous (SQLite's rule); a stored
                                   ** table is created but reads nothing */
  /* xConnect    */ traceConnect,
  /* xBestIndex  */ traceBestIndex,
  /* xDisconnect */ traceDisconnect,
  /* xDestroy    */ traceDisconnect,
  /* xOpen       */ traceOpen,
  /* xClose      */ traceClose,
  /* xFilter     */ traceFilter,
  /* xNext       */ traceNext,
  /* xEof        */ traceEof,
  /* xColumn     */ traceColumn,
  /* xRowid      */ traceRowid,
  /* xUpdate     */ 0,
  /* xBegin      */ 0,
  /* xSync       */ 0,
  /* xCommit     */ 0,
  /* xRollback   */ 0,
  /* xFindMethod */ 0,
  /* xRename     */ 0,
  /* xSavepoint  */ 0,
  /* xRelease    */ 0,
  /* xRollbackTo */ 0,
  /* xShadowName */ 0
};

static sqlite3_module diagModule;   /* copy of traceModule, eponymous only */

/* See profsum_int.h. */
int profsumRegisterTraceVtab(sqlite3 *db, char **pzErr){
  int rc;
  (void)pzErr;
  rc = sqlite3_create_module(db, "trace_events", &traceModule, 0);
  if( rc==SQLITE_OK ){
    diagModule = traceModule;
    diagModule.xCreate = 0;
    rc = sqlite3_create_module(db, "profsum_diagnostics", &diagModule, (void*)1);
  }
  return rc;
}
