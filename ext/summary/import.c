/*
** import.c — profsum_import(source [, label [, options_json]]) → trace_id.
**
**   SELECT profsum_import('run1/plugins/profile/2026_01_01/host.trace.json.gz');
**   SELECT profsum_import('run1', 'baseline', '{"warmup_steps": 2, "series": "llama"}');
**   SELECT profsum_import('summary.json');      -- a profile_summary.v1 made elsewhere
**
** source: a W&B artifact ("wandb:entity/project/name[:alias]"), a W&B run
** ("wandb-run:<target>" or a run URL: its latest jax_profile) — fetched to
** the cache, then imported as a folder with the run's metadata — or a
** trace file (gzip or plain JSON), an artifact folder (the JSON
** trace that summary-v1 §1.1 step 4 picks is read; a quality warning says
** when the reference tool would have read an XPlane instead), or a
** profile_summary.v1 JSON file.  A file is a summary when its top-level
** object has "schema_version": "profile_summary.v1" (before any
** "traceEvents"), a trace when it has "traceEvents" or is an array; the
** top level is walked over the streamed bytes and the walk stops at the
** first of those keys (json_kind.c).  An object with neither key is read
** as a trace (with no events, as the trace reader allows); one with
** another schema_version and no traceEvents is an error.
**
** options_json keys: warmup_steps (5), hot_op_limit (25), breakdown_mode
** ('exclusive_per_track' | 'exclusive_global'), series (NULL), store_events
** (false: when true the raw rows of trace_events are kept in
** profsum_event), schema ('main': an attached database to write into),
** replace (false: re-importing under an existing label is an error).
**
** The trace is parsed before any lock is taken; the writing is one
** transaction with the write lock taken first (busy.c: retries SQLITE_BUSY
** within the connection's busy timeout), so a failure leaves the database
** exactly as it was and concurrent importers do not see "database is
** locked".  The schema (sql/schema.sql) and views (views/) are created in the
** target schema on first use, in that same transaction, so a failed first
** import leaves nothing behind.  The parse probes for sqlite3_interrupt()
** (see importInOneWrite).  A trace with a series gets the stored ranks of
** profsum_op_growth for the pairs its import changes (its own pair, and
** the run after it or after a trace it replaces: op_growth_store.c).
**
** Security: reads files, so SQLITE_DIRECTONLY (never from a view or
** trigger stored in a database).
*/
#include "profsum_int.h"
#include "utf8rule.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "summary_doc.h"
#include "hash.h"
#include "find.h"
#include "busy.h"
#include "sqlcall.h"
#include "build_id.h"      /* generated: PROFSUM_BUILD_ID (Makefile) */
#include "pycompat.h"
#include "jsontree.h"
#include "json_kind.h"
#include "insights.h"
#include "session.h"
#include "import_int.h"
#include "rowbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define FN "profsum_import"

/* ImportOpts and parseOpts: import_int.h, import_opts.c. */

/*
** Phase timers, for profiling only: a build with -DPROFSUM_PHASE_TIMES
** (`make build/phases/profsum.so`; bench/phases.py reads its output) writes
** one line per import to stderr, the milliseconds of each phase:
**   profsum phases ms: pre P parse P begin P schema P label P write P
**   warnings P sections-build P sections-store P commit P free P
** where "commit" is everything from the stored sections to the end of the
** transaction (COMMIT and its fdatasync).  Other builds compile the marks
** to nothing.  The marks of one import are kept per thread: imports in
** several threads at once do not mix them.
*/
#ifdef PROFSUM_PHASE_TIMES
# include <stdio.h>
# include <time.h>
# define PHASE_N 12
static _Thread_local double phaseAt[PHASE_N];
static void phaseMark(int i){
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  phaseAt[i] = (double)t.tv_sec*1e3 + (double)t.tv_nsec/1e6;
}
static void phaseReport(void){
  static const char *azName[PHASE_N] = {"", "pre", "parse", "begin", "schema", "label", "write",
      "warnings", "sections-build", "sections-store", "commit", "free"};
  char z[512];
  int i, n = 0;
  n += snprintf(z+n, sizeof(z)-(size_t)n, "profsum phases ms:");
  for(i=1; i<PHASE_N && n<(int)sizeof(z); i++){
    n += snprintf(z+n, sizeof(z)-(size_t)n, " %s %.3f", azName[i], phaseAt[i]-phaseAt[i-1]);
  }
  fprintf(stderr, "%s\n", z);
}
# define PHASE(i) phaseMark(i)
#else
# define PHASE(i) ((void)0)
#endif

static char *prefixFn(char *zErr, int rc);
static int readAll(const char *zPath, char **pz, char **pzErr);

/* Option 'reuse': the trace_id of a trace stored in zSchema from the same
** source (source_path as given, trace_path as resolved), with the same
** options (a v1 summary file keeps its own knobs: only the series is
** compared), by the same profsum build, of the same content, and with the
** label zLabel when it is not NULL (a label the caller chose; with
** bSuffixed, also zLabel-N, the labels unique_label gives); 0 in *pId when
** there is none.
** The same content: for a trace, the same SHA-256 and size of the file
** (zSha, 64 hex digits, when the caller has them, else the file is hashed
** here, only when a stored trace matches the rest); for a v1 summary file
** (isV1; size is its size), the same size and the same document text (its
** sha256 column holds the trace's hash, from the document).  The newest
** match wins. */
static int findReusable(sqlite3 *db, const char *zSchema, const char *zSource, const char *zTrace,
                        const char *zOptsJson, int isV1, sqlite3_int64 size, const char *zSha,
                        const char *zLabel, int bSuffixed, sqlite3_int64 *pId, char **pzErr){
  sqlite3_stmt *p = 0;
  char zHex[65];
  char *zDoc = 0;
  int rc, haveHash = 0;
  *pId = 0;
  if( !isV1 && zSha && zSha[0] ){ memcpy(zHex, zSha, 65); haveHash = 1; }
  /* one probe: no row when nothing was imported yet (no table) or the
  ** table was made before builds were told apart (no profsum_build: none
  ** of its traces is of this build; the write upgrades it) */
  rc = SQLITE_OK;
  if( profsumHasRow(db, sqlite3_mprintf("SELECT 1 FROM pragma_table_info('profsum_trace', %Q) "
                                        "WHERE name='profsum_build'", zSchema), 0, &rc)!=1 ){
    /* that, no such schema (the import says so), or a lock (checked again
    ** under the write lock); another failure (a disk I/O error, an
    ** interrupt) is said as SQLite says it */
    if( rc==SQLITE_OK || (rc & 0xff)==SQLITE_ERROR
     || (rc & 0xff)==SQLITE_BUSY || (rc & 0xff)==SQLITE_LOCKED ) return SQLITE_OK;
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    return rc;
  }
  rc = profsumImportPrepare(db, &p, FN, 1, pzErr,
      "SELECT trace_id, sha256, size, summary_json FROM \"%w\".profsum_trace "
      "WHERE source_path=?1 AND trace_path=?2 AND profsum_version=?4 AND profsum_build IS ?8 "
      "AND (summary_json IS NOT NULL)=?5 "
      "AND CASE WHEN ?5 THEN json_extract(options, '$.series') IS json_extract(?3, '$.series') "
      "ELSE options=?3 END "
      "AND (?6 IS NULL OR label=?6 OR (?7 AND substr(label, 1, length(?6)+1)=?6 || '-' "
      "AND substr(label, length(?6)+2) GLOB '[1-9]*' AND NOT substr(label, length(?6)+2) GLOB '*[^0-9]*')) "
      "ORDER BY trace_id DESC", zSchema);
  if( rc ) return rc;
  sqlite3_bind_text(p, 1, zSource, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 2, zTrace, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 3, zOptsJson, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 4, PROFSUM_VERSION, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 8, PROFSUM_BUILD_ID, -1, SQLITE_STATIC);
  sqlite3_bind_int(p, 5, isV1!=0);        /* only a v1 import keeps its document */
  if( zLabel ) sqlite3_bind_text(p, 6, zLabel, -1, SQLITE_STATIC);
  sqlite3_bind_int(p, 7, bSuffixed!=0);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    int same;
    if( isV1 ){
      const char *zStored = (const char*)sqlite3_column_text(p, 3);
      if( sqlite3_column_int64(p, 2)!=size || zStored==0 ) continue;
      if( zDoc==0 ){
        rc = readAll(zTrace, &zDoc, pzErr);
        if( rc ) break;
      }
      same = strcmp(zStored, zDoc)==0;
    }else{
      const char *zStored = (const char*)sqlite3_column_text(p, 1);
      if( zStored==0 ) continue;
      if( !haveHash ){
        rc = profsumSha256File(zTrace, zHex, &size, pzErr);
        if( rc ){ *pzErr = prefixFn(*pzErr, rc); break; }
        haveHash = 1;
      }
      same = strcmp(zStored, zHex)==0 && sqlite3_column_int64(p, 2)==size;
    }
    if( same ){
      *pId = sqlite3_column_int64(p, 0);
      rc = SQLITE_DONE;
      break;
    }
  }
  sqlite3_finalize(p);
  sqlite3_free(zDoc);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( rc && *pzErr==0 ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
  return rc;
}


/* Default label: the folder name, or the file name without its trace
** suffixes. */
char *profsumDefaultLabel(const char *zSource){
  const char *zBase;
  size_t n = strlen(zSource);
  static const char *azSuf[] = {".xplane.pb.gz", ".xplane.pb", ".trace.json.gz", ".json.gz",
                                 ".trace.json", ".json", ".gz"};
  size_t k;
  while( n>1 && zSource[n-1]=='/' ) n--;
  zBase = zSource + n;
  while( zBase>zSource && zBase[-1]!='/' ) zBase--;
  n = (size_t)(zSource + n - zBase);
  for(k=0; k<sizeof(azSuf)/sizeof(azSuf[0]); k++){
    size_t m = strlen(azSuf[k]);
    if( n>m && memcmp(zBase+n-m, azSuf[k], m)==0 ){ n -= m; break; }
  }
  return sqlite3_mprintf("%.*s", (int)n, zBase);
}

/* See import_int.h. */
int profsumHasRow(sqlite3 *db, char *zSql, const char *zBind, int *pRc){
  sqlite3_stmt *p = 0;
  int rc, yes = 0;
  if( zSql==0 ){ *pRc = SQLITE_NOMEM; return -1; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    if( zBind ) sqlite3_bind_text(p, 1, zBind, -1, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW ){ yes = 1; rc = SQLITE_OK; }
    else if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  sqlite3_finalize(p);
  if( rc ){ *pRc = rc; return -1; }
  return yes;
}

/* See profsum_int.h. */
int profsumTableExists(sqlite3 *db, const char *zSchema, const char *zTable, int *pRc){
  return profsumHasRow(db, sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type='table' AND name=?1",
                                           zSchema), zTable, pRc);
}

/* The message zErr (or rc's text when there is none) prefixed with the
** function's name; takes zErr. */
static char *prefixFn(char *zErr, int rc){
  char *z = sqlite3_mprintf(FN ": %s", zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  return z;
}

/* See import_int.h. */
int profsumImportPrepare(sqlite3 *db, sqlite3_stmt **pp, const char *zFunc, int bNomemMsg, char **pzErr,
                         const char *zFmt, ...){
  va_list ap;
  char *z;
  int rc;
  *pp = 0;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  if( rc && (rc!=SQLITE_NOMEM || bNomemMsg) ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  return rc;
}

/* See import_int.h. */
int profsumImportExec(sqlite3 *db, const char *zFunc, int bNomemMsg, char **pzErr, const char *zFmt, ...){
  va_list ap;
  int rc;
  va_start(ap, zFmt);
  rc = profsumExecV(db, zFunc, bNomemMsg, pzErr, zFmt, ap);
  va_end(ap);
  return rc;
}

/* rc from the stored ranks of profsum_op_growth (import_int.h), its message
** given this function's prefix. */
static int growthErr(int rc, char **pzErr){
  if( rc && *pzErr && strncmp(*pzErr, FN ": ", strlen(FN)+2)!=0 ){
    char *z = sqlite3_mprintf(FN ": %s", *pzErr);
    sqlite3_free(*pzErr);
    *pzErr = z;
  }
  return rc;
}

/* After trace id of an import with a series was stored: the stored ranks
** of profsum_op_growth for its pair and the pair after it. */
static int storeGrowth(sqlite3 *db, const ImportOpts *o, sqlite3_int64 id, char **pzErr){
  if( o->zSeries==0 ) return SQLITE_OK;
  return growthErr(profsumOpGrowthImported(db, o->zSchema, id, pzErr), pzErr);
}

/* Delete every row of trace id in schema: from each table of profsum's
** (a name starting with profsum_agg_ or profsum_sec_, or profsum_event)
** that has a trace_id column, then its profsum_trace row.  Tables are
** found in the schema, so a table added to sql/schema.sql is covered.
** The run after it in its series pairs with the run before it now: that
** pair's stored ranks are written again (profsum_op_growth). */
static int deleteTrace(sqlite3 *db, const char *zSchema, sqlite3_int64 id, char **pzErr){
  sqlite3_stmt *q = 0;
  sqlite3_str *pList;
  char *zList = 0;
  sqlite3_int64 iNext = 0;
  int rc = growthErr(profsumOpGrowthNextRun(db, zSchema, id, &iNext, pzErr), pzErr);
  if( rc ) return rc;
  pList = sqlite3_str_new(db);
  rc = profsumImportPrepare(db, &q, FN, 1, pzErr, "SELECT m.name FROM \"%w\".sqlite_schema AS m "
      "WHERE m.type='table' AND (m.name GLOB 'profsum_agg_*' OR m.name GLOB 'profsum_sec_*' "
      "OR m.name='profsum_event') AND EXISTS (SELECT 1 FROM pragma_table_info(m.name, %Q) "
      "WHERE name='trace_id') ORDER BY m.name", zSchema, zSchema);
  if( rc ){
    sqlite3_free(sqlite3_str_finish(pList));
    return rc;
  }
  while( sqlite3_step(q)==SQLITE_ROW ){
    sqlite3_str_appendf(pList, "DELETE FROM \"%w\".\"%w\" WHERE trace_id=%lld;", zSchema,
                        (const char*)sqlite3_column_text(q, 0), (long long)id);
  }
  rc = sqlite3_finalize(q);
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pList);
  zList = sqlite3_str_finish(pList);
  if( rc==SQLITE_NOMEM ){ sqlite3_free(zList); return rc; }
  if( rc ){
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    sqlite3_free(zList);
    return rc;
  }
  if( zList ){
    rc = profsumImportExec(db, FN, 1, pzErr, "%s", zList);
    sqlite3_free(zList);
    if( rc ) return rc;
  }
  rc = profsumImportExec(db, FN, 1, pzErr, "DELETE FROM \"%w\".profsum_trace WHERE trace_id=%lld",
                         zSchema, (long long)id);
  if( rc==SQLITE_OK && iNext ) rc = growthErr(profsumOpGrowthStore(db, zSchema, iNext, 0, pzErr), pzErr);
  return rc;
}

/* Read a whole (possibly gzipped) file as text, at most 512 MiB. */
static int readAll(const char *zPath, char **pz, char **pzErr){
  ProfsumSrc *pSrc = 0;
  char *zErr = 0, *z = 0;
  size_t n = 0, nAlloc = 0, got;
  int rc = profsumSrcOpenFile(zPath, &pSrc, &zErr);
  while( rc==SQLITE_OK ){
    if( n+65536+1>nAlloc ){
      char *zNew;
      nAlloc = nAlloc ? nAlloc*2 : 1<<20;
      if( nAlloc>((size_t)512<<20) ){ rc = SQLITE_TOOBIG; break; }
      zNew = sqlite3_realloc64(z, nAlloc);
      if( zNew==0 ){ rc = SQLITE_NOMEM; break; }
      z = zNew;
    }
    rc = profsumSrcRead(pSrc, (unsigned char*)z+n, nAlloc-n-1, &got, &zErr);
    if( rc || got==0 ) break;
    n += got;
  }
  profsumSrcClose(pSrc);
  if( rc ){
    if( zErr ) *pzErr = sqlite3_mprintf(FN ": %s", zErr);
    else if( rc==SQLITE_TOOBIG ) *pzErr = sqlite3_mprintf(FN ": '%s': summary file larger than 512 MiB", zPath);
    sqlite3_free(zErr);
    sqlite3_free(z);
    return rc;
  }
  z[n] = 0;
  *pz = z;
  return SQLITE_OK;
}

/* Fill the tables of a trace from a stored profile_summary.v1 document
** (summary_json of its profsum_trace row), so the views work for it: each
** section's fill step (summary_doc.c's section table). */
static int fillFromV1(sqlite3 *db, const char *zS, sqlite3_int64 id, const char *zPath,
                      char **pzErr){
  return profsumDocFillFromV1(db, zS, id, FN, zPath, pzErr);
}

/* Everything one import writes, as the body of profsumWriteRun(): it runs
** inside a savepoint with the write lock held, and may run again after
** SQLITE_BUSY (so it only reads the parsed engine, never consumes it). */
typedef struct ImportJob {
  ImportOpts o;
  const char *zLabel, *zSource, *zTrace, *zRefNote, *zNow, *zOptsJson;
  const char *zPickNote;       /* a folder's other traces left aside, or 0 */
  const char *zSha;                /* v1 files: their SHA-256 (traces: the engine's) */
  const char *zRunMeta;            /* W&B run metadata JSON, or NULL */
  sqlite3_int64 size;
  int isV1;
  ProfsumEngine *pEngine;          /* the parsed trace (not v1) */
  ProfsumEngineInfo info;
  ImportBg *pBg;                   /* a parse still running in a thread, or 0 */
  ProfsumProbe *pProbe;            /* the connection's interrupt (profsum_int.h) */
  int labelGiven;                  /* zLabel was the caller's, not derived */
  ProfsumHost *aHost;              /* a session's hosts (hosts/session 'all'), or 0 */
  int nHost;
  int sessionAll;                  /* session 'all': labels <label>/<session>/<host> */
  sqlite3_int64 traceId;           /* out */
} ImportJob;

/* One trace the body stores: its label and file, and its parse. */
typedef struct ImportTrace {
  const char *zLabel, *zTrace;
  const char *zPickNote;           /* the pick's quality warning, or 0 */
  const char *zRefNote;            /* where the reference reads another file, or 0 */
  ProfsumEngine *pEngine;          /* 0 for a v1 file */
  const ProfsumEngineInfo *pInfo;
} ImportTrace;


/* Option 'unique_label': the first of zBase-2, zBase-3, ... that no trace
** in zSchema has, in *pz (sqlite3_malloc'd).  Run under the write lock, so
** two imports never choose the same.  bTree: also no trace label below
** it (zBase-N/...) and no session of that label (a session's import). */
static int freeLabel(sqlite3 *db, const char *zSchema, const char *zBase, int bTree,
                     char **pz, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc = profsumImportPrepare(db, &p, FN, 1, pzErr, bTree
      ? "SELECT 1 FROM \"%w\".profsum_trace WHERE label=?1 OR substr(label, 1, length(?1)+1)=?1||'/' "
        "UNION ALL SELECT 1 FROM \"%w\".profsum_session WHERE label=?1 OR substr(label, 1, length(?1)+1)=?1||'/'"
      : "SELECT 1 FROM \"%w\".profsum_trace WHERE label=?1", zSchema, zSchema);
  int i;
  *pz = 0;
  if( rc ) return rc;
  for(i=bTree ? 1 : 2; ; i++){
    char *zTry = i==1 ? sqlite3_mprintf("%s", zBase) : sqlite3_mprintf("%s-%d", zBase, i);
    if( zTry==0 ){ rc = SQLITE_NOMEM; break; }
    sqlite3_bind_text(p, 1, zTry, -1, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_DONE ){ *pz = zTry; rc = SQLITE_OK; break; }
    sqlite3_free(zTry);
    if( rc!=SQLITE_ROW ){
      *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
      break;
    }
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  return rc;
}

/* The body's first step: the schema, created in this transaction where it
** is missing, then (a first import's background parse) the parse's
** result, whose error wins over the schema's as when it runs first. */
static int bodySchema(sqlite3 *db, ImportJob *j, char **pzErr){
  char *zErr = 0;
  int rc;
  PHASE(3);
  rc = profsumCreateSchema(db, j->o.zSchema, &zErr);
  PHASE(4);
  if( j->pBg ){
    char *zParseErr = 0;
    int rcParse = profsumImportBgFinish(db, &j->pBg, &j->pEngine, &j->info, &zParseErr);
    if( rcParse==SQLITE_OK ){ sqlite3_free(zParseErr); zParseErr = 0; }
    if( rcParse ){
      sqlite3_free(zErr);
      *pzErr = zParseErr;
      return rcParse;
    }
  }
  if( rc ){
    *pzErr = zErr ? sqlite3_mprintf(FN ": %s", zErr) : 0;
    sqlite3_free(zErr);
  }
  return rc;
}

/* The label zLabel is free to store under, or made so: when a trace has it,
** with unique_label the first free zLabel-N in *pzOwn, with replace that
** trace deleted, else an error that says what to do. */
static int claimLabel(sqlite3 *db, const ImportJob *j, const char *zLabel, char **pzOwn,
                      char **pzErr){
  const ImportOpts *o = &j->o;
  sqlite3_stmt *p = 0;
  sqlite3_int64 old;
  int rc;
  *pzOwn = 0;
  rc = profsumImportPrepare(db, &p, FN, 1, pzErr, "SELECT trace_id, source_path, sha256, options, "
                            "profsum_version, profsum_build FROM \"%w\".profsum_trace WHERE label=?1",
                            o->zSchema);
  if( rc ) return rc;
  sqlite3_bind_text(p, 1, zLabel, -1, SQLITE_STATIC);
  if( sqlite3_step(p)!=SQLITE_ROW ){ sqlite3_finalize(p); return SQLITE_OK; }
  old = sqlite3_column_int64(p, 0);
  if( o->uniqueLabel ){
    /* the first free label-N, chosen under the write lock */
    sqlite3_finalize(p);
    return freeLabel(db, o->zSchema, zLabel, 0, pzOwn, pzErr);
  }
  if( o->replace ){
    sqlite3_finalize(p);
    return deleteTrace(db, o->zSchema, old, pzErr);
  }
  if( j->aHost!=0 ){
    /* a host of a session import: unique_label moves the whole session to
    ** a free base label, and reuse does not apply to it */
    *pzErr = sqlite3_mprintf(FN ": a trace with label '%s' exists already (trace_id %lld); "
        "choose another label, pass '{\"unique_label\": true}' to store this session under the "
        "first free '<label>-N' (its hosts as '<label>-N/<host>'), or '{\"replace\": true}' to "
        "delete the traces of that label and store these", zLabel, (long long)old);
  }else if( o->reuse ){
    /* say why the stored trace was not taken */
    const char *zOldSha = (const char*)sqlite3_column_text(p, 2);
    *pzErr = sqlite3_mprintf(FN ": a trace with label '%s' exists already (trace_id %lld) and "
        "'reuse' did not take it: that trace was imported from '%s' (SHA-256 %.12s..., options %s, "
        "profsum %s, build %s), and '%s'%s differs from it in source path, content, options or "
        "profsum build (this one: %s); choose another label, or pass "
        "'{\"reuse\": true, \"unique_label\": true}' to store this one as the first free '%s-N' "
        "(and take it again next time)",
        zLabel, (long long)old, sqlite3_column_text(p, 1), zOldSha ? zOldSha : "?",
        sqlite3_column_text(p, 3), sqlite3_column_text(p, 4),
        sqlite3_column_text(p, 5) ? (const char*)sqlite3_column_text(p, 5) : "unknown",
        j->zSource,
        j->isV1 ? " (a summary file)" : "", PROFSUM_BUILD_ID, zLabel);
  }else{
    *pzErr = sqlite3_mprintf(FN ": a trace with label '%s' exists already (trace_id %lld); "
        "choose another label, pass '{\"unique_label\": true}' to store this one as the first "
        "free '%s-N' (both kept), or '{\"replace\": true}' to delete that trace and store this "
        "one", zLabel, (long long)old, zLabel);
  }
  sqlite3_finalize(p);
  return *pzErr ? SQLITE_CONSTRAINT : SQLITE_NOMEM;
}

/* Insert the profsum_trace row of t (a v1 file: with its document); its
** trace_id in *pId. */
static int insertTraceRow(sqlite3 *db, const ImportJob *j, const ImportTrace *t,
                          sqlite3_int64 *pId, char **pzErr){
  const ImportOpts *o = &j->o;
  sqlite3_stmt *p = 0;
  char *zDoc = 0;
  int rc;
  rc = profsumImportPrepare(db, &p, FN, 1, pzErr, "INSERT INTO \"%w\".profsum_trace(label, series, "
      "source_path, trace_path, source_format, sha256, size, imported_at, generated_at_utc, options, "
      "profsum_version, summary_json, profsum_build) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?13,?9,?10,?11,?12)",
      o->zSchema);
  if( rc ) return rc;
  if( j->isV1 ){
    char *zE = 0;
    rc = readAll(t->zTrace, &zDoc, pzErr);
    if( rc ){ sqlite3_finalize(p); return rc; }
    /* jParse()'s size limit, checked before SQLite's JSON functions read
    ** the document below (a tree of it for each statement) */
    if( jCheckSize(zDoc, -1, &zE) ){
      *pzErr = zE ? sqlite3_mprintf(FN ": '%s': %s", t->zTrace, zE) : 0;
      sqlite3_free(zE);
      sqlite3_free(zDoc);
      sqlite3_finalize(p);
      return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  sqlite3_bind_text(p, 1, t->zLabel, -1, SQLITE_STATIC);
  if( o->zSeries ) sqlite3_bind_text(p, 2, o->zSeries, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 3, j->zSource, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 4, t->zTrace, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 5, j->isV1 ? "profile_summary_v1" : "perfetto_trace_json", -1, SQLITE_STATIC);
  if( j->zSha[0] ) sqlite3_bind_text(p, 6, j->zSha, -1, SQLITE_STATIC);
  if( j->isV1 ) sqlite3_bind_int64(p, 7, j->size);
  sqlite3_bind_text(p, 8, j->zNow, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 9, j->zOptsJson, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 10, PROFSUM_VERSION, -1, SQLITE_STATIC);
  if( zDoc ) sqlite3_bind_text(p, 11, zDoc, -1, sqlite3_free);
  sqlite3_bind_text(p, 12, PROFSUM_BUILD_ID, -1, SQLITE_STATIC);
  {
    /* the document's generated_at_utc: the same instant as Python writes
    ** it (no fraction at a whole second); imported_at keeps its six
    ** digits, so that runs order by it as text */
    size_t n = strlen(j->zNow);
    if( n>8 && strcmp(j->zNow + n - 8, ".000000Z")==0 ){
      char *zGen = sqlite3_mprintf("%.*sZ", (int)(n-8), j->zNow);
      if( zGen==0 ){
        sqlite3_finalize(p);
        return SQLITE_NOMEM;
      }
      sqlite3_bind_text(p, 13, zGen, -1, sqlite3_free);
    }else{
      sqlite3_bind_text(p, 13, j->zNow, -1, SQLITE_STATIC);
    }
  }
  rc = sqlite3_step(p);
  sqlite3_finalize(p);
  if( rc!=SQLITE_DONE ){
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    /* busy as it is: busy.c retries it or explains a stale snapshot */
    return (rc & 0xff)==SQLITE_BUSY || (rc & 0xff)==SQLITE_LOCKED ? rc : SQLITE_ERROR;
  }
  *pId = sqlite3_last_insert_rowid(db);
  return SQLITE_OK;
}

/* Why the stored document of trace id is no v1 summary, as text for
** storeV1's message (sqlite3_malloc'd; 0 when out of memory): where JSON
** fails to parse, with the byte and the reason; a value that is no
** object; the schema_version; or NaN/Infinity, which Python's json.load
** reads but SQLite's JSON functions (which fill the tables) do not. */
static char *v1Why(sqlite3 *db, const char *zSchema, sqlite3_int64 id){
  sqlite3_stmt *q = 0;
  char *zWhy = 0;
  char *z = sqlite3_mprintf("SELECT summary_json, json_valid(summary_json) FROM \"%w\".profsum_trace "
                            "WHERE trace_id=%lld", zSchema, (long long)id);
  if( z==0 ) return 0;
  if( sqlite3_prepare_v2(db, z, -1, &q, 0)==SQLITE_OK && sqlite3_step(q)==SQLITE_ROW ){
    const char *zDoc = (const char*)sqlite3_column_text(q, 0);
    int nDoc = sqlite3_column_bytes(q, 0);
    int bValid = sqlite3_column_int(q, 1);
    char *zErr = 0;
    JNode *pDoc = zDoc ? jParse(zDoc, nDoc, &zErr) : 0;
    const JNode *pVer = pDoc ? jGet(pDoc, "schema_version") : 0;
    if( zDoc==0 ) zWhy = sqlite3_mprintf("no text");
    else if( pDoc==0 ) zWhy = zErr ? sqlite3_mprintf("%s", zErr) : 0;
    else if( pDoc->type!=JT_OBJECT ) zWhy = sqlite3_mprintf("the JSON value is not an object");
    else if( pVer==0 || pVer->type!=JT_STRING || strcmp(pVer->z, "profile_summary.v1")!=0 ){
      zWhy = sqlite3_mprintf("its schema_version is not \"profile_summary.v1\"");
    }else if( !bValid ){
      zWhy = sqlite3_mprintf("it holds NaN, Infinity or -Infinity, which profsum does not read in a summary");
    }else{
      zWhy = sqlite3_mprintf("not readable");
    }
    sqlite3_free(zErr);
    jFree(pDoc);
  }else{
    zWhy = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(q);
  sqlite3_free(z);
  return zWhy;
}

/* A v1 file's trace id: its stored document checked, then its tables
** filled from it.  A document that is no v1 summary is an error naming
** the file and why (v1Why); SQLite's own errors (busy, out of memory)
** pass through as themselves. */
static int storeV1(sqlite3 *db, const ImportJob *j, sqlite3_int64 id, char **pzErr){
  sqlite3_stmt *q = 0;
  char *zWhy;
  int rc;
  /* (json_type and json_extract raise an error on text that is no JSON:
  ** only asked when json_valid holds) */
  char *z = sqlite3_mprintf("SELECT CASE WHEN json_valid(summary_json) THEN json_type(summary_json)='object' "
      "AND json_extract(summary_json,'$.schema_version')='profile_summary.v1' ELSE 0 END "
      "FROM \"%w\".profsum_trace WHERE trace_id=%lld", j->o.zSchema, (long long)id);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &q, 0);
  sqlite3_free(z);
  if( rc==SQLITE_OK ) rc = sqlite3_step(q);
  if( rc==SQLITE_ROW && sqlite3_column_int(q, 0)==1 ){
    sqlite3_finalize(q);
    return fillFromV1(db, j->o.zSchema, id, j->zTrace, pzErr);
  }
  if( rc!=SQLITE_ROW ){
    *pzErr = sqlite3_mprintf(FN ": '%s': %s", j->zTrace, sqlite3_errmsg(db));
    sqlite3_finalize(q);
    if( rc==SQLITE_DONE ) return SQLITE_ERROR;
    return (rc & 0xff)==SQLITE_BUSY || (rc & 0xff)==SQLITE_LOCKED || rc==SQLITE_NOMEM ? rc : SQLITE_ERROR;
  }
  sqlite3_finalize(q);
  zWhy = v1Why(db, j->o.zSchema, id);
  if( zWhy==0 ) return SQLITE_NOMEM;
  *pzErr = sqlite3_mprintf(FN ": '%s': not a valid profile_summary.v1 JSON document: %s", j->zTrace, zWhy);
  sqlite3_free(zWhy);
  return SQLITE_ERROR;
}

/* Option store_events: the raw rows of trace_events of zTrace for trace id. */
static int storeEvents(sqlite3 *db, const char *zSchema, const char *zTrace, sqlite3_int64 id,
                       char **pzErr){
  int rc = profsumImportExec(db, FN, 1, pzErr,
      "CREATE TABLE IF NOT EXISTS \"%w\".profsum_event(trace_id INTEGER NOT NULL, "
      "idx INTEGER NOT NULL, ph TEXT, name TEXT, cat TEXT, pid, tid, ts INTEGER, dur INTEGER, "
      "dur_ps INTEGER, process_name TEXT, thread_name TEXT, tf_op TEXT, hlo_op TEXT, "
      "hlo_module TEXT, hlo_category TEXT, long_name TEXT, source TEXT, run_id TEXT, "
      "step_num INTEGER, flops INTEGER, bytes_accessed INTEGER, correlation_id INTEGER, "
      "group_id INTEGER, args TEXT, depth INTEGER, parent_idx INTEGER, excl INTEGER, "
      "excl_ps INTEGER, PRIMARY KEY(trace_id, idx)) WITHOUT ROWID", zSchema);
  if( rc==SQLITE_OK ) rc = profsumImportExec(db, FN, 1, pzErr,
      "INSERT INTO \"%w\".profsum_event SELECT %lld, idx, ph, "
      "name, cat, pid, tid, ts, dur, dur_ps, process_name, thread_name, tf_op, hlo_op, hlo_module, "
      "hlo_category, long_name, source, run_id, step_num, flops, bytes_accessed, correlation_id, "
      "group_id, args, depth, parent_idx, excl, excl_ps FROM trace_events(%Q)",
      zSchema, (long long)id, zTrace);
  return rc;
}

/* What the insights' write needs (storeInsights). */
typedef struct InsightsWrite {
  sqlite3 *db;
  const ImportOpts *o;
  const ImportTrace *t;
  sqlite3_int64 id;
  char **pzErr;
} InsightsWrite;

/* The insights' tables of a parsed trace (profsumInsWrite), given the
** step spans the engine kept; called by profsumEngineWrite once the
** device rows it reads are written.  SQLITE_OK or an error, message set. */
static int storeInsights(void *pArg){
  InsightsWrite *w = (InsightsWrite*)pArg;
  ProfsumStepSpan *aSpan = 0;
  int64_t nSpan = 0;
  int rc = profsumEngineStepSpans(w->t->pEngine, &aSpan, &nSpan);
  if( rc==SQLITE_OK ){
    rc = profsumInsWrite(profsumEngineInsights(w->t->pEngine), w->db, w->o->zSchema, w->id,
                         aSpan, nSpan, w->o->zDevicePeaks, FN, w->pzErr);
  }
  sqlite3_free(aSpan);
  if( rc==SQLITE_NOMEM && *w->pzErr==0 ){
    *w->pzErr = sqlite3_mprintf(FN ": '%s': out of memory computing the device, memory and "
                                "kernel figures (%lld complete events read)", w->t->zTrace,
                                (long long)w->t->pInfo->nComplete);
  }
  return rc;
}

/* A parsed trace's tables for trace id: the aggregates (stage A), the
** insights, the quality warnings, and with store_events its raw rows. */
static int storeParsed(sqlite3 *db, const ImportJob *j, const ImportTrace *t, sqlite3_int64 id,
                       char **pzErr){
  const ImportOpts *o = &j->o;
  InsightsWrite w;
  int rc;
  PHASE(5);
  w.db = db; w.o = o; w.t = t; w.id = id; w.pzErr = pzErr;
  /* (store_diagnostics: the engine kept what it stores, profsumImportEngineFlags) */
  profsumEngineSetWarmup(t->pEngine, o->warmup);
  rc = profsumEngineWrite(t->pEngine, db, o->zSchema, id, storeInsights, &w, pzErr);
  PHASE(6);
  if( rc==SQLITE_OK ) rc = profsumImportReadWarnings(db, o->zSchema, id, t->pInfo, t->zPickNote,
                                                     t->zRefNote, pzErr);
  if( rc==SQLITE_OK && o->storeEvents ) rc = storeEvents(db, o->zSchema, t->zTrace, id, pzErr);
  return rc;
}

/* Stage B: the sections of trace id for the import's knobs (and the run
** metadata of a W&B source first). */
static int storeSections(sqlite3 *db, const ImportJob *j, sqlite3_int64 id, char **pzErr){
  const ImportOpts *o = &j->o;
  ProfsumKnobs k;
  ProfsumDoc *pDoc = 0;
  int rc = SQLITE_OK;
  if( j->zRunMeta ){
    rc = profsumImportExec(db, FN, 1, pzErr, "UPDATE \"%w\".profsum_trace SET run_metadata=%Q WHERE trace_id=%lld",
               o->zSchema, j->zRunMeta, (long long)id);
    if( rc ) return rc;
  }
  k.warmupSteps = o->warmup;
  k.hotOpLimit = o->hotOpLimit;
  k.globalMode = o->globalMode;
  PHASE(7);
  rc = profsumDocBuildSections(db, o->zSchema, id, &k, &pDoc, pzErr);
  PHASE(8);
  if( rc==SQLITE_OK ) rc = profsumDocStoreSections(db, o->zSchema, id, pDoc, pzErr);
  PHASE(9);
  profsumDocFree(pDoc);
  if( rc && *pzErr && strncmp(*pzErr, FN, strlen(FN))!=0 ){
    /* a v1 document's: name it */
    char *z2 = j->isV1 && j->zTrace ? sqlite3_mprintf(FN ": '%s': cannot store this profile_summary.v1 "
                                                      "document: %s", j->zTrace, *pzErr)
                                    : sqlite3_mprintf(FN ": %s", *pzErr);
    sqlite3_free(*pzErr);
    *pzErr = z2;
  }
  return rc;
}

/* The body of a one-trace import (a file, or a folder's one pick). */
static int importBody(sqlite3 *db, void *pArg, char **pzErr){
  ImportJob *j = (ImportJob*)pArg;
  const ImportOpts *o = &j->o;
  ImportTrace t;
  sqlite3_int64 traceId = 0;
  char *zErr = 0;
  char *zOwnLabel = 0;             /* unique_label: the free label chosen */
  int rc;
  memset(&t, 0, sizeof(t));
  rc = bodySchema(db, j, &zErr);
  if( rc ) goto body_done;
  if( o->reuse ){
    /* Again, under the write lock: another connection may have stored the
    ** same trace since the check before the parse (concurrent CI jobs). */
    sqlite3_int64 id = 0;
    rc = findReusable(db, o->zSchema, j->zSource, j->zTrace, j->zOptsJson, j->isV1,
                      j->isV1 ? j->size : j->info.nFileBytes, j->isV1 ? 0 : j->info.zSha256,
                      j->labelGiven ? j->zLabel : 0, o->uniqueLabel, &id, &zErr);
    if( rc ) goto body_done;
    if( id ){ traceId = id; goto body_done; }          /* nothing written */
  }
  rc = claimLabel(db, j, j->zLabel, &zOwnLabel, &zErr);
  if( rc ) goto body_done;
  t.zLabel = zOwnLabel ? zOwnLabel : j->zLabel;
  t.zTrace = j->zTrace;
  t.zPickNote = j->zPickNote;
  t.zRefNote = j->zRefNote;
  t.pEngine = j->pEngine;
  t.pInfo = &j->info;
  rc = insertTraceRow(db, j, &t, &traceId, &zErr);
  if( rc ) goto body_done;
  if( j->isV1 ) rc = storeV1(db, j, traceId, &zErr);
  else rc = storeParsed(db, j, &t, traceId, &zErr);
  if( rc==SQLITE_OK ) rc = storeSections(db, j, traceId, &zErr);
  if( rc==SQLITE_OK ) rc = storeGrowth(db, o, traceId, &zErr);

body_done:
  sqlite3_free(zOwnLabel);
  j->traceId = traceId;
  if( (rc & 0xff)==SQLITE_BUSY ){ sqlite3_free(zErr); zErr = 0; }   /* retried */
  *pzErr = zErr;
  return rc;
}

/* The separator before session zSession's name in its labels: "/" with
** session 'all' when the session has a name, else "" (a file directly in
** a folder given as "." or "/" has none: its session is labelled by the
** base alone, its hosts <base>/<host>). */
static const char *sessionSep(const ImportJob *j, const char *zSession){
  return j->sessionAll && zSession[0] ? "/" : "";
}

/* The session's name in its labels: zSession with session 'all', else "". */
static const char *sessionSeg(const ImportJob *j, const char *zSession){
  return j->sessionAll ? zSession : "";
}

/* The hosts' names in the labels (h->zHost: <host> of the file name, with
** -2, -3, ... when the session had it before; h->nSameName), and each
** trace's label in azLabel[i] (sqlite3_malloc'd). */
static int sessionLabels(ImportJob *j, const char *zBase, char **azLabel){
  int i, k;
  for(i=0; i<j->nHost; i++){
    ProfsumHost *h = &j->aHost[i];
    sqlite3_free(h->zHost);
    h->zHost = 0;
    h->nSameName = 0;
    for(k=0; k<i; k++){
      const ProfsumHost *g = &j->aHost[k];
      if( strcmp(g->zSession, h->zSession)==0 && (g->zFileHost==0)==(h->zFileHost==0)
       && (h->zFileHost==0 || strcmp(g->zFileHost, h->zFileHost)==0) ) h->nSameName++;
    }
    h->unnamed = j->o.hostsAll && h->zFileHost==0;
    if( h->zFileHost && h->nSameName==0 ){
      h->zHost = sqlite3_mprintf("%s", h->zFileHost);
      if( h->zHost==0 ) return SQLITE_NOMEM;
    }else if( h->zFileHost ){
      /* <host>-2, -3, ...: the first that no host of the session has, by
      ** its file (a host named h-2) or by an earlier suffix */
      int n = h->nSameName + 1, taken;
      do{
        sqlite3_free(h->zHost);
        h->zHost = sqlite3_mprintf("%s-%d", h->zFileHost, n++);
        if( h->zHost==0 ) return SQLITE_NOMEM;
        taken = 0;
        for(k=0; k<j->nHost && !taken; k++){
          const ProfsumHost *g = &j->aHost[k];
          if( k==i || strcmp(g->zSession, h->zSession)!=0 ) continue;
          taken = (g->zFileHost && strcmp(g->zFileHost, h->zHost)==0)
               || (k<i && g->zHost && strcmp(g->zHost, h->zHost)==0);
        }
      }while( taken );
    }
    azLabel[i] = sqlite3_mprintf("%s%s%s%s%s", zBase, sessionSep(j, h->zSession),
                                 sessionSeg(j, h->zSession), h->zHost && j->o.hostsAll ? "/" : "",
                                 h->zHost && j->o.hostsAll ? h->zHost : "");
    if( azLabel[i]==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* An error when a session has the label of session zSession of this
** import already (without replace: unique_label chose a free base). */
static int sessionLabelFree(sqlite3 *db, const ImportJob *j, const char *zBase, const char *zSession,
                            char **pzErr){
  sqlite3_stmt *p = 0;
  int rc;
  rc = profsumImportPrepare(db, &p, FN, 1, pzErr,
                            "SELECT session_id, label FROM \"%w\".profsum_session WHERE label=?1||?2||?3",
                            j->o.zSchema);
  if( rc ) return rc;
  sqlite3_bind_text(p, 1, zBase, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 2, sessionSep(j, zSession), -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 3, sessionSeg(j, zSession), -1, SQLITE_STATIC);
  if( sqlite3_step(p)==SQLITE_ROW ){
    *pzErr = sqlite3_mprintf(FN ": a session with label '%s' exists already (session_id %lld); "
        "choose another label, pass '{\"unique_label\": true}' to store this one as the first free "
        "'%s-N', or '{\"replace\": true}' to replace its traces", sqlite3_column_text(p, 1),
        (long long)sqlite3_column_int64(p, 0), zBase);
    rc = *pzErr ? SQLITE_CONSTRAINT : SQLITE_NOMEM;
  }
  sqlite3_finalize(p);
  return rc;
}

/* Delete the sessions an import with replace takes the place of, with
** every trace of their hosts (a host they had and this import has not must
** not stay behind, orphaned): with zSession, the session of that name
** under zBase (the one label it has); with zSession 0 (session 'all',
** once per import), every session the base names: labelled zBase or
** zBase/<name> with no further '/', those of this import's folder and
** those of sessions gone from it alike. */
static int sessionsDelete(sqlite3 *db, const ImportJob *j, const char *zBase, const char *zSession,
                          char **pzErr){
  static const char zAllOf[] = "(s.label=?1 OR (substr(s.label, 1, length(?1)+1)=?1||'/' "
      "AND instr(substr(s.label, length(?1)+2), '/')=0))";
  sqlite3_stmt *q = 0;
  sqlite3_int64 *aOld = 0;
  int nOld = 0, nAlloc = 0, k, rc;
  char *zLabel = zSession ? sqlite3_mprintf("%s%s%s", zBase, sessionSep(j, zSession),
                                            sessionSeg(j, zSession)) : 0;
  if( zSession && zLabel==0 ) return SQLITE_NOMEM;
  rc = profsumImportPrepare(db, &q, FN, 1, pzErr, "SELECT h.trace_id FROM \"%w\".profsum_agg_host AS h "
      "JOIN \"%w\".profsum_session AS s USING (session_id) WHERE %s", j->o.zSchema, j->o.zSchema,
      zSession ? "s.label=?1" : zAllOf);
  if( rc ){ sqlite3_free(zLabel); return rc; }
  sqlite3_bind_text(q, 1, zSession ? zLabel : zBase, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(q))==SQLITE_ROW ){
    if( nOld>=nAlloc ){
      int nNew = nAlloc ? nAlloc*2 : 8;
      sqlite3_int64 *a = sqlite3_realloc64(aOld, sizeof(sqlite3_int64)*(sqlite3_uint64)nNew);
      if( a==0 ){ rc = SQLITE_NOMEM; break; }
      aOld = a; nAlloc = nNew;
    }
    aOld[nOld++] = sqlite3_column_int64(q, 0);
  }
  sqlite3_finalize(q);
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  for(k=0; rc==SQLITE_OK && k<nOld; k++) rc = deleteTrace(db, j->o.zSchema, aOld[k], pzErr);
  sqlite3_free(aOld);
  if( rc ){
    if( rc!=SQLITE_NOMEM && *pzErr==0 ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    sqlite3_free(zLabel);
    return rc;
  }
  if( zSession ){
    rc = profsumImportExec(db, FN, 1, pzErr, "DELETE FROM \"%w\".profsum_session WHERE label=%Q",
                           j->o.zSchema, zLabel);
  }else{
    char *zSql = sqlite3_mprintf("DELETE FROM \"%w\".profsum_session AS s WHERE %s", j->o.zSchema, zAllOf);
    sqlite3_stmt *d = 0;
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &d, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if( rc==SQLITE_OK ){
      sqlite3_bind_text(d, 1, zBase, -1, SQLITE_STATIC);
      sqlite3_step(d);
      rc = sqlite3_finalize(d);
    }
    if( rc && rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
  }
  sqlite3_free(zLabel);
  return rc;
}

/* The session row of host i (its first host of the session: a new row,
** else the row of an earlier host) in aSess[i]. */
static int sessionRow(sqlite3 *db, ImportJob *j, const char *zBase, int i, sqlite3_int64 *aSess,
                      char **pzErr){
  const ProfsumHost *h = &j->aHost[i];
  int k, rc;
  for(k=0; k<i; k++){
    if( strcmp(j->aHost[k].zSession, h->zSession)==0 ){ aSess[i] = aSess[k]; return SQLITE_OK; }
  }
  if( j->o.replace ){
    rc = sessionsDelete(db, j, zBase, h->zSession, pzErr);
    if( rc ) return rc;
  }else{
    rc = sessionLabelFree(db, j, zBase, h->zSession, pzErr);
    if( rc ) return rc;
  }
  rc = profsumImportExec(db, FN, 1, pzErr,
                         "INSERT INTO \"%w\".profsum_session(label, source_path) VALUES(%Q||%Q||%Q, %Q)",
                         j->o.zSchema, zBase, sessionSep(j, h->zSession), sessionSeg(j, h->zSession),
                         j->zSource);
  if( rc ) return rc;
  aSess[i] = sqlite3_last_insert_rowid(db);
  return SQLITE_OK;
}

/* Store host i of a session import as trace azLabel[i] of session aSess[i]. */
static int storeHost(sqlite3 *db, ImportJob *j, int i, char **azLabel, const sqlite3_int64 *aSess,
                     char **pzErr){
  ProfsumHost *h = &j->aHost[i];
  ImportTrace t;
  char *zOwn = 0;
  int rc;
  memset(&t, 0, sizeof(t));
  rc = claimLabel(db, j, azLabel[i], &zOwn, pzErr);
  if( rc ) return rc;
  if( zOwn ){ sqlite3_free(zOwn); zOwn = 0; }       /* the base label is free (freeLabel) */
  t.zLabel = azLabel[i];
  t.zTrace = h->zPath;
  t.zPickNote = j->zPickNote;
  t.pEngine = h->pEngine;
  t.pInfo = &h->info;
  rc = insertTraceRow(db, j, &t, &h->traceId, pzErr);
  if( rc==SQLITE_OK ) rc = storeParsed(db, j, &t, h->traceId, pzErr);
  if( rc==SQLITE_OK ) rc = storeSections(db, j, h->traceId, pzErr);
  if( rc==SQLITE_OK ) rc = profsumImportExec(db, FN, 1, pzErr, "UPDATE \"%w\".profsum_trace SET session_id=%lld, "
                                             "host=%Q WHERE trace_id=%lld", j->o.zSchema, (long long)aSess[i],
                                             h->zHost, (long long)h->traceId);
  if( rc==SQLITE_OK ) rc = profsumSessionWriteHost(db, j->o.zSchema, aSess[i], h, FN, pzErr);
  if( rc==SQLITE_OK ) rc = storeGrowth(db, &j->o, h->traceId, pzErr);
  return rc;
}

/* The body of a session import (hosts 'all' or session 'all'): one trace
** per host in path order, one profsum_session row per session, the hosts
** aligned; j->traceId the first trace's id. */
static int importSessionBody(sqlite3 *db, void *pArg, char **pzErr){
  ImportJob *j = (ImportJob*)pArg;
  char *zErr = 0, *zBase = 0;
  char **azLabel = 0;
  sqlite3_int64 *aSess = 0;
  int rc, i;
  j->traceId = 0;
  rc = bodySchema(db, j, &zErr);
  if( rc==SQLITE_OK && j->o.uniqueLabel ){
    rc = freeLabel(db, j->o.zSchema, j->zLabel, 1, &zBase, &zErr);
  }else if( rc==SQLITE_OK ){
    zBase = sqlite3_mprintf("%s", j->zLabel);
    if( zBase==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    azLabel = sqlite3_malloc64(sizeof(char*)*(sqlite3_uint64)j->nHost);
    aSess = sqlite3_malloc64(sizeof(sqlite3_int64)*(sqlite3_uint64)j->nHost);
    if( azLabel==0 || aSess==0 ) rc = SQLITE_NOMEM;
    else memset(azLabel, 0, sizeof(char*)*(size_t)j->nHost);
  }
  if( rc==SQLITE_OK ) rc = sessionLabels(j, zBase, azLabel);
  if( rc==SQLITE_OK && j->o.replace && j->sessionAll ) rc = sessionsDelete(db, j, zBase, 0, &zErr);
  for(i=0; rc==SQLITE_OK && i<j->nHost; i++){
    rc = sessionRow(db, j, zBase, i, aSess, &zErr);
    if( rc==SQLITE_OK ) rc = storeHost(db, j, i, azLabel, aSess, &zErr);
  }
  for(i=0; rc==SQLITE_OK && i<j->nHost; i++){
    if( i==0 || aSess[i]!=aSess[i-1] ){
      int k, seen = 0;
      for(k=0; k<i && !seen; k++) seen = aSess[k]==aSess[i];
      if( !seen ) rc = profsumSessionAlign(db, j->o.zSchema, aSess[i], FN, &zErr);
    }
  }
  if( rc==SQLITE_OK && j->nHost>0 ) j->traceId = j->aHost[0].traceId;
  for(i=0; azLabel && i<j->nHost; i++) sqlite3_free(azLabel[i]);
  sqlite3_free(azLabel);
  sqlite3_free(aSess);
  sqlite3_free(zBase);
  if( (rc & 0xff)==SQLITE_BUSY ){ sqlite3_free(zErr); zErr = 0; }   /* retried */
  if( rc && zErr && strncmp(zErr, FN, strlen(FN))!=0 ){
    char *z2 = sqlite3_mprintf(FN ": %s", zErr);
    sqlite3_free(zErr);
    zErr = z2;
  }
  *pzErr = zErr;
  return rc;
}


/* Parse zTrace, then write it, as one write on db (busy.c): if anything
** fails, nothing is written, the schema of a first import included
** (importBody creates what is missing of it in the same transaction).
** The parse takes no lock and runs before the transaction begins, so an
** interrupt seen during it (the file's reads ask every PROFSUM_STOP_BYTES
** of data, the engine every 16,384 entries) ends the import cleanly.  The
** first import into a new database (profsumImportBgWanted) instead
** parses in a thread while importBody creates the schema, and holds the
** write lock while it waits for the parse; an interrupt then rolls the
** transaction back (busy.c's rescue statement). */
static int importInOneWrite(sqlite3 *db, ImportJob *job, char **pzErr){
  int rc;
  if( profsumImportBgWanted(db, job->o.zSchema, job->zTrace) ){
    job->pBg = profsumImportBgStart(job->zTrace, profsumImportEngineFlags(&job->o));
    if( job->pBg ){
      rc = profsumWriteRun(db, job->o.zSchema, importBody, job, pzErr);
      profsumImportBgDiscard(job->pBg);   /* when the body ended before the wait */
      job->pBg = 0;
      return rc;
    }
  }
  PHASE(1);
  rc = profsumEngineParse(FN, job->zTrace, profsumImportEngineFlags(&job->o), profsumInterrupted,
                          job->pProbe, &job->pEngine, &job->info, pzErr);
  PHASE(2);
  if( rc ) return rc;
  rc = profsumWriteRun(db, job->o.zSchema, importBody, job, pzErr);
  PHASE(10);
  return rc;
}

/* The remote sources (W&B), set once at registration (atomic: several
** connections may load the extension at once). */
static const ProfsumRemoteSource *pImportRemote = 0;

/* See profsum_int.h. */
void profsumImportSetRemote(const ProfsumRemoteSource *p){
  __atomic_store_n(&pImportRemote, p, __ATOMIC_RELEASE);
}

/* The remote sources, or 0 when none were set. */
static const ProfsumRemoteSource *importRemote(void){
  return __atomic_load_n(&pImportRemote, __ATOMIC_ACQUIRE);
}

/* Is zSource a remote source (a W&B reference) rather than a path? */
static int isRemoteSource(const char *zSource){
  const ProfsumRemoteSource *r = importRemote();
  return r!=0 && r->xIsSource(zSource);
}

/* What one call of profsum_import holds, from its arguments to its result
** (importFunc's steps share it). */
typedef struct ImportCall {
  sqlite3 *db;
  int argc;
  sqlite3_value **argv;
  const char *zSource;         /* the source as given */
  const char *zReadFrom;       /* the local path read (zSource, or the fetched folder) */
  char *zLabel, *zErr, *zTrace, *zRefNote, *zOptsJson;
  char *zPickNote;             /* other traces of the folder left aside (find.h) */
  char *zWandbDir, *zRunMeta;  /* W&B sources: fetched folder, run metadata */
  ImportOpts o;
  int isDir, isV1, labelGiven;
  ProfsumPickSet pick;         /* a folder read with options session/hosts */
  int multi;                   /* a session import: hosts or session 'all' */
  char zSha[65], zNow[40];
  sqlite3_int64 size, traceId;
  ProfsumProbe probe;          /* the connection's interrupt, for every read */
} ImportCall;

/* Set c->zErr from a format; returns rc (SQLITE_NOMEM when the message
** cannot be made). */
static int callErr(ImportCall *c, int rc, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  c->zErr = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  return c->zErr ? rc : SQLITE_NOMEM;
}

/* The source: its options, a W&B source fetched, its kind on disk. */
static int callSource(ImportCall *c){
  struct stat st;
  int rc = profsumImportParseOpts(c->db, c->argc>2 && sqlite3_value_type(c->argv[2])!=SQLITE_NULL
                     ? (const char*)sqlite3_value_text(c->argv[2]) : 0, &c->o, &c->zErr);
  if( rc ) return rc;
  if( c->o.zSeries && c->o.zSeries[0]==0 ){
    /* as an empty label: "" would be a series of its own in the trends */
    return callErr(c, SQLITE_ERROR, FN ": the series must not be empty (null or no series: the trace "
                   "is in no series)");
  }
  if( c->o.zAlias && (!isRemoteSource(c->zSource) || strncmp(c->zSource, "wandb:", 6)==0) ){
    /* an artifact ref names its version itself (wandb:e/p/name:alias) */
    return callErr(c, SQLITE_ERROR, FN ": options_json: 'alias' applies to W&B run sources "
        "(wandb-run:<target> or a run URL), not to '%s'%s", c->zSource,
        strncmp(c->zSource, "wandb:", 6)==0 ? "; put the alias in the reference: wandb:ENTITY/PROJECT/NAME:ALIAS" : "");
  }
  if( isRemoteSource(c->zSource) ){
    /* Fetch (or find in the cache) the artifact, then import its folder
    ** with the run's metadata. */
    rc = importRemote()->xFetch(c->db, c->zSource, c->o.zAlias, &c->zWandbDir, &c->zRunMeta, &c->zErr);
    if( rc ){ c->zErr = prefixFn(c->zErr, rc); return rc; }
    c->zReadFrom = c->zWandbDir;
  }
  if( stat(c->zReadFrom, &st)!=0 ){
    return callErr(c, SQLITE_CANTOPEN, FN ": '%s': %s", c->zReadFrom, strerror(errno));
  }
  c->isDir = S_ISDIR(st.st_mode);
  if( !c->isDir && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) ){
    /* The import reads a file more than once (its top-level keys, then the
    ** events, the summary's SHA-256 on the way): a pipe would lose data. */
    return callErr(c, SQLITE_ERROR, FN ": '%s' is not a regular file (%s): the import reads "
        "the file more than once; write it to a file first", c->zReadFrom,
        S_ISFIFO(st.st_mode) ? "a pipe?" : S_ISCHR(st.st_mode) ? "a character device"
        : S_ISSOCK(st.st_mode) ? "a socket" : "an unusual file");
  }
  if( !c->isDir && (c->o.zSession || c->o.hostsAll) ){
    return callErr(c, SQLITE_ERROR, FN ": options_json: 'session' and 'hosts' apply to a folder, "
                   "and '%s' is a file", c->zReadFrom);
  }
  return SQLITE_OK;
}

/* A folder: the file(s) it reads (find.h): the reference's pick, or the
** pick of the options session and hosts. */
static int callPickFolder(ImportCall *c){
  int rc;
  if( c->o.zSession==0 && !c->o.hostsAll ){
    rc = profsumPickTraceNote(c->zReadFrom, &c->zTrace, 0, &c->zPickNote, &c->zRefNote, &c->zErr);
  }else{
    rc = profsumPickSession(c->zReadFrom, c->o.zSession, c->o.hostsAll, &c->pick, &c->zErr);
    if( rc==SQLITE_OK ){
      c->multi = c->o.hostsAll || strcmp(c->o.zSession, "all")==0;
      c->zPickNote = c->pick.zNote;
      c->pick.zNote = 0;
      c->zTrace = sqlite3_mprintf("%s", c->pick.a[0].zPath);
      if( c->zTrace==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc ){
    /* No trace in the folder: the code of a file that cannot be opened,
    ** as for a missing file (SQLITE_NOTFOUND is SQLite's code for an
    ** unknown file-control opcode; Python raises it as InternalError). */
    if( rc==SQLITE_NOTFOUND ) rc = SQLITE_CANTOPEN;
    if( rc!=SQLITE_NOMEM ) c->zErr = prefixFn(c->zErr, rc);
  }
  return rc;
}

/* A file: a summary or a trace, by its top-level keys
** (profsumJsonFileKind). */
static int callKindOfFile(ImportCall *c){
  char *zSchemaV = 0;
  int kind;
  c->zTrace = sqlite3_mprintf("%s", c->zReadFrom);
  if( c->zTrace==0 ) return SQLITE_NOMEM;
  kind = profsumJsonFileKind(c->zTrace, &zSchemaV);
  c->isV1 = kind==PSK_V1;
  if( kind==PSK_NOMEM ) return SQLITE_NOMEM;
  if( kind==PSK_SCHEMA ){
    /* Not read as an empty trace: it says it is another document. */
    int rc = callErr(c, SQLITE_ERROR, FN ": '%s': its schema_version is %s, not 'profile_summary.v1', "
        "and it has no \"traceEvents\": neither a summary profsum reads nor a trace",
        c->zTrace, zSchemaV ? zSchemaV : "?");
    sqlite3_free(zSchemaV);
    return rc;
  }
  sqlite3_free(zSchemaV);
  return SQLITE_OK;
}

/* The label: the caller's, a W&B source's artifact name, or the default
** (profsumDefaultLabel); never empty. */
static int callLabel(ImportCall *c){
  c->labelGiven = c->argc>1 && sqlite3_value_type(c->argv[1])!=SQLITE_NULL;
  if( c->labelGiven ){
    return profsumImportLabelArg(c->argv[1], &c->zLabel, &c->zErr);
  }else if( c->zRunMeta ){
    /* A W&B source: the artifact name (e.g. run-abc-profiler:v3). */
    JNode *m = jParse(c->zRunMeta, -1, 0);
    JNode *a = jGet(m, "artifact_name");
    c->zLabel = (a && a->type==JT_STRING) ? sqlite3_mprintf("%s", a->z) : profsumDefaultLabel(c->zReadFrom);
    jFree(m);
  }else{
    c->zLabel = profsumDefaultLabel(c->zSource);
  }
  if( c->zLabel==0 ) return SQLITE_NOMEM;
  if( c->zLabel[0]==0 ) return callErr(c, SQLITE_ERROR, FN ": the label must not be empty");
  return SQLITE_OK;
}

/* The options as stored (profsum_trace.options: defaults filled in, the
** series quoted by SQLite's JSON), and a v1 file's SHA-256. */
static int callOptionsJson(ImportCall *c){
  const ImportOpts *o = &c->o;
  int rc = SQLITE_OK;
  if( c->isV1 ){
    /* A trace is hashed while the engine reads it; a v1 file here. */
    rc = profsumSha256File(c->zTrace, c->zSha, &c->size, &c->zErr);
    if( rc ){ c->zErr = prefixFn(c->zErr, rc); return rc; }
  }else{
    c->zSha[0] = 0;
  }
  profsumNowIsoUs(c->zNow, sizeof(c->zNow));   /* ISO-8601 UTC, µs, Z: ordered as text */
  c->zOptsJson = sqlite3_mprintf("{\"breakdown_mode\":\"%s\",\"hot_op_limit\":%d,\"series\":null,"
      "\"store_events\":%s,\"warmup_steps\":%d}", o->globalMode ? "exclusive_global" : "exclusive_per_track",
      o->hotOpLimit, o->storeEvents ? "true" : "false", o->warmup);
  if( c->zOptsJson==0 ) return SQLITE_NOMEM;
  if( o->zSeries ){
    /* the series quoted properly as JSON */
    sqlite3_stmt *q = 0;
    rc = sqlite3_prepare_v2(c->db, "SELECT json_set(?1, '$.series', ?2)", -1, &q, 0);
    if( rc ){
      if( rc!=SQLITE_NOMEM ) c->zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(c->db));
      return rc;
    }
    sqlite3_bind_text(q, 1, c->zOptsJson, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, o->zSeries, -1, SQLITE_STATIC);
    rc = sqlite3_step(q);
    if( rc==SQLITE_ROW ){
      char *zNew = sqlite3_mprintf("%s", sqlite3_column_text(q, 0));
      sqlite3_free(c->zOptsJson);
      c->zOptsJson = zNew;
      rc = zNew ? SQLITE_OK : SQLITE_NOMEM;
    }else{
      /* not stored with a null series: the step's own error */
      rc = sqlite3_extended_errcode(c->db);
      if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
      if( rc!=SQLITE_NOMEM ) c->zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(c->db));
    }
    sqlite3_finalize(q);
  }
  return rc;
}

/* Option reuse, before the parse (to skip it; checked again under the
** write lock): c->traceId set when a stored trace is taken. */
static int callReuseFirst(ImportCall *c){
  int rc = findReusable(c->db, c->o.zSchema, c->zSource, c->zTrace, c->zOptsJson, c->isV1, c->size, 0,
                        c->labelGiven ? c->zLabel : 0, c->o.uniqueLabel, &c->traceId, &c->zErr);
  if( rc || c->traceId ) return rc;
  if( sqlite3_db_readonly(c->db, c->o.zSchema)==1 ){
    return callErr(c, SQLITE_READONLY, FN ": '%s': no stored trace matches it for 'reuse' (the same "
        "source, content, options and profsum build%s), and the database is read-only", c->zSource,
        !c->labelGiven ? "" : c->o.uniqueLabel ? ", and this label or label-N" : ", and this label");
  }
  return SQLITE_OK;
}

/* A session import: every host parsed (in threads), then written in one
** transaction (importSessionBody). */
static int callRunSession(ImportCall *c, ImportJob *job){
  ProfsumHost *a;
  int i, rc;
  a = sqlite3_malloc64(sizeof(ProfsumHost)*(sqlite3_uint64)c->pick.n);
  if( a==0 ) return SQLITE_NOMEM;
  memset(a, 0, sizeof(ProfsumHost)*(size_t)c->pick.n);
  for(i=0; i<c->pick.n; i++){
    a[i].zPath = c->pick.a[i].zPath;
    a[i].zAlt = c->pick.a[i].zAlt;
    a[i].zFileHost = c->pick.a[i].zHost;
    a[i].zSession = c->pick.a[i].zSession;
  }
  job->aHost = a;
  job->nHost = c->pick.n;
  job->sessionAll = c->o.zSession && strcmp(c->o.zSession, "all")==0;
  rc = profsumSessionParse(FN, a, c->pick.n, profsumImportEngineFlags(&c->o), &c->probe, &c->zErr);
  if( rc==SQLITE_OK ) rc = profsumWriteRun(c->db, c->o.zSchema, importSessionBody, job, &c->zErr);
  for(i=0; i<c->pick.n; i++) profsumHostClear(&a[i]);
  sqlite3_free(a);
  job->aHost = 0;
  return rc;
}

/* Parse and write in one transaction, with the write lock taken first
** and SQLITE_BUSY retried (busy.c). */
static int callRun(ImportCall *c, ImportJob *job){
  int rc;
  job->o = c->o;
  job->zLabel = c->zLabel; job->zSource = c->zSource; job->zTrace = c->zTrace;
  job->zRefNote = c->zRefNote; job->zPickNote = c->zPickNote;
  job->zNow = c->zNow; job->zOptsJson = c->zOptsJson; job->zSha = c->zSha; job->size = c->size;
  job->isV1 = c->isV1; job->zRunMeta = c->zRunMeta; job->labelGiven = c->labelGiven;
  job->pProbe = &c->probe;
  if( c->multi ){
    rc = callRunSession(c, job);
  }else if( c->isV1 ){
    rc = profsumWriteRun(c->db, c->o.zSchema, importBody, job, &c->zErr);
  }else{
    rc = importInOneWrite(c->db, job, &c->zErr);
  }
  c->traceId = job->traceId;
  if( rc==SQLITE_TOOBIG ){
    /* SQLite's bare "string or blob too big" (after "profsum_import: " or
    ** not): a value to store (an op's name, an argument) is over the
    ** connection's limit on one value.  Other causes have their own text. */
    const char *zBare = sqlite3_errstr(SQLITE_TOOBIG);
    const char *zMsg = c->zErr ? c->zErr : zBare;
    if( strncmp(zMsg, FN ": ", sizeof(FN)+1)==0 ) zMsg += sizeof(FN)+1;
    if( strcmp(zMsg, zBare)==0 ){
      sqlite3_free(c->zErr);
      c->zErr = sqlite3_mprintf(FN ": '%s': a value of the trace to store (a name or an argument) is "
                                "longer than SQLite's limit on one value (%d bytes, SQLITE_LIMIT_LENGTH)",
                                c->zSource ? c->zSource : "",
                                sqlite3_limit(c->db, SQLITE_LIMIT_LENGTH, -1));
      if( c->zErr==0 ) rc = SQLITE_NOMEM;
    }
  }
  if( rc && c->zErr && strncmp(c->zErr, FN, strlen(FN))!=0 ){
    char *z2 = sqlite3_mprintf(FN ": %s", c->zErr);
    sqlite3_free(c->zErr);
    c->zErr = z2;
  }
  return rc;
}

/* The result of the call (the trace id, or its error), and everything it
** held freed. */
static void callFinish(sqlite3_context *ctx, ImportCall *c, int rc){
  sqlite3_free(c->zWandbDir);
  sqlite3_free(c->zRunMeta);
  if( rc==SQLITE_NOMEM && c->zErr==0 ){
    /* name the function and the source (SQLite's bare message when even
    ** that cannot be made) */
    c->zErr = sqlite3_mprintf(FN ": '%s': out of memory", c->zSource ? c->zSource : "");
  }else if( rc && c->zErr && strncmp(c->zErr, FN ":", sizeof(FN))!=0 ){
    /* SQLite's own text (an I/O error of the pager out of memory says
    ** "out of memory" alone): with the function and the source */
    char *z = sqlite3_mprintf(FN ": '%s': %s", c->zSource ? c->zSource : "", c->zErr);
    if( z ){ sqlite3_free(c->zErr); c->zErr = z; }
  }
  if( rc==SQLITE_OK ){
    sqlite3_result_int64(ctx, c->traceId);
  }else if( rc==SQLITE_NOMEM && c->zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    c->zErr = profsumUtf8Scrub(c->zErr);
    sqlite3_result_error(ctx, c->zErr ? c->zErr : sqlite3_errstr(rc), -1);
    sqlite3_result_error_code(ctx, rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc);
  }
  sqlite3_free(c->zErr);
  sqlite3_free(c->zLabel);
  sqlite3_free(c->zTrace);
  sqlite3_free(c->zRefNote);
  sqlite3_free(c->zPickNote);
  sqlite3_free(c->zOptsJson);
  profsumPickSetFree(&c->pick);
  sqlite3_free(c->o.zSeries);
  sqlite3_free(c->o.zAlias);
  sqlite3_free(c->o.zSchema);
  sqlite3_free(c->o.zDevicePeaks);
  sqlite3_free(c->o.zSession);
}

/* The SQL function: the steps above in turn. */
static void importFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ImportCall c;
  ImportJob job;
  ProfsumStopCheck prevStop;
  int rc;

  memset(&c, 0, sizeof(c));
  memset(&job, 0, sizeof(job));
  c.db = sqlite3_context_db_handle(ctx);
  c.argc = argc;
  c.argv = argv;
  c.probe.db = c.db;
  PHASE(0);
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT ){
    profsumCtxErr(ctx, FN ": SOURCE must be a path (text)");
    return;
  }
  if( profsumValueHasNul(argv[0]) ){
    profsumCtxErr(ctx, FN ": '%s': path contains a NUL byte", (const char*)sqlite3_value_text(argv[0]));
    return;
  }
  /* Every file this import reads in this thread (the kind check, the
  ** parse, a summary file) stops at an interrupt (profsumStopPush). */
  prevStop = profsumStopPush(profsumInterrupted, &c.probe);
  c.zSource = c.zReadFrom = (const char*)sqlite3_value_text(argv[0]);
  rc = callSource(&c);
  if( rc==SQLITE_OK ) rc = c.isDir ? callPickFolder(&c) : callKindOfFile(&c);
  if( rc==SQLITE_OK ) rc = callLabel(&c);
  if( rc==SQLITE_OK ) rc = callOptionsJson(&c);
  if( rc==SQLITE_OK && c.o.reuse && !c.multi ) rc = callReuseFirst(&c);
  if( rc==SQLITE_OK && c.traceId==0 ) rc = callRun(&c, &job);
  profsumStopPop(prevStop);
  profsumProbeDone(&c.probe);
  profsumEngineFree(job.pEngine);
#ifdef PROFSUM_PHASE_TIMES
  PHASE(11);
  /* only an import that went through every mark in order: a trace parsed
  ** here, then written (not a v1 file, not the first import's background
  ** parse, not a stored trace taken again) */
  if( rc==SQLITE_OK && phaseAt[1]>=phaseAt[0] && phaseAt[9]>=phaseAt[1] && phaseAt[10]>=phaseAt[9] ){
    phaseReport();
  }
#endif
  callFinish(ctx, &c, rc);
}

/* See profsum_int.h.  With it profsum_op_growth_store (op_growth_store.c),
** which writes for any pair what the import writes for its own, and the
** virtual table its bulk rows go through (rowbuf.c). */
int profsumRegisterImport(sqlite3 *db, char **pzErr){
  int rc = SQLITE_OK, n;
  /* Reads files and writes tables: DIRECTONLY, never DETERMINISTIC. */
  for(n=1; n<=3 && rc==SQLITE_OK; n++){
    rc = sqlite3_create_function(db, "profsum_import", n, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                 0, importFunc, 0, 0);
  }
  if( rc==SQLITE_OK ) rc = profsumRegisterOpGrowthStore(db, pzErr);
  if( rc==SQLITE_OK ) rc = profsumRegisterRowSrc(db);
  return rc;
}
