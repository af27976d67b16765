/*
** history.c — the regression history: profsum_track appends the record
** of a compared pair, profsum_history_import and profsum_history_export
** read and write the reference tool's JSONL history, and
** profsum_history_summary_json summarizes it.
**
**   SELECT profsum_track('baseline', 'candidate', 'ci-1234');       -- §4.1/§4.2
**   SELECT profsum_track(1, 2, NULL, '{"max_step_median_regression_pct": 2}');
**   SELECT profsum_track(1, 2, NULL, '{"top_k": 3}');               -- top_k 3
**   SELECT profsum_history_summary_json();                          -- §4.3 (tail 20)
**   SELECT profsum_history_import('history.jsonl');                 -- → records read
**   SELECT profsum_history_export('history.jsonl');                 -- → records written
**
** Semantics: docs/spec/tools.md §4.  The history lives in the table
** profsum_history_record (sql/schema.sql): one row per tracked pair, per
** bundle with "history": true (bundle.c), per imported JSONL line;
** record_json holds the §4.2 record as its JSONL line
** (json.dumps(sort_keys=True), profsumJsonCompact()).  Every JSON result is
** byte-exact Python json.dumps(indent=2, sort_keys=True) (jsontree.c).
**
** Write functions (profsum_track, profsum_history_import) are
** SQLITE_DIRECTONLY (they write tables: never from a view or trigger of an
** untrusted database) and run their database writes through
** profsumWriteRun() (busy.c): one transaction, write lock first, bounded
** retry of SQLITE_BUSY/SQLITE_BUSY_SNAPSHOT; on error nothing is written.
** profsum_history_export writes a file, atomically (fileio.h): DIRECTONLY
** too.  profsum_history_summary_json reads tables only.
**
** Limitations: JSON integers beyond int64 are read as floats; JSONL lines
** are split at '\n' (a "\r\n" ending is trimmed); history files larger
** than 1 GiB and lines longer than 16 MiB are refused (a history is read a
** line at a time, never whole).
*/
#include "profsum_int.h"
#include "history_int.h"
#include "compare.h"
#include "busy.h"
#include "fileio.h"
#include "jsontree.h"
#include "pycompat.h"
#include "pytext.h"
#include "sqlcall.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Appending records                                                   */
/* ------------------------------------------------------------------ */

/* See history_int.h. */
int profsumHistWriteStillOpen(sqlite3 *db, char **pzErr){
  if( !sqlite3_get_autocommit(db) ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("SQLite rolled the write transaction back (after an error inside "
                           "it, such as running out of memory); nothing was written");
  return *pzErr ? SQLITE_ABORT : SQLITE_NOMEM;
}

/* Prepare the INSERT of a record into zSchema.profsum_history_record
** (historyInsertRun binds and runs it).  The schema must exist
** (profsumCreateSchema, once per write).  Returns an SQLite code (busy
** codes without a message, see profsumHistStmtFail). */
static int historyInsertPrepare(sqlite3 *db, const char *zSchema, sqlite3_stmt **pp, char **pzErr){
  char *z = sqlite3_mprintf("INSERT INTO \"%w\".profsum_history_record(created_at, label, status, "
      "before_trace_id, after_trace_id, series, origin, record_json) "
      "VALUES(?1, ?2, ?3, ?4, ?5, (SELECT series FROM \"%w\".profsum_trace WHERE trace_id=?5), ?6, ?7)",
      zSchema, zSchema);
  int rc;
  *pp = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  return rc ? profsumHistStmtFail(db, rc, pzErr) : SQLITE_OK;
}

/* Bind a string node (its whole length) to parameter i; a string that
** breaks the text rule (textrule.c) is an error here, the last door:
** the writers check their input before. */
static int bindStr(sqlite3_stmt *p, int i, const JNode *pStr, const char *zWhat, char **pzErr){
  if( pStr==0 || pStr->type!=JT_STRING ) return SQLITE_OK;
  if( profsumTextArgFault(zWhat, pStr->z, pStr->n, pzErr) ) return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  return sqlite3_bind_text(p, i, pStr->z, pStr->n, SQLITE_STATIC);
}

/*
** Insert one record with the statement of historyInsertPrepare (reset
** afterwards).  pRecord is the §4.2 record tree; the label and status
** columns come from it.  idB/idA: trace ids (0 → NULL); the series is the
** after trace's.  Returns an SQLite code (busy codes without a message,
** see profsumHistStmtFail); *piRow the new record_id.
*/
static int historyInsertRun(sqlite3 *db, sqlite3_stmt *p, const JNode *pRecord,
                            const char *zCreated, sqlite3_int64 idB, sqlite3_int64 idA,
                            const char *zOrigin, sqlite3_int64 *piRow, char **pzErr){
  const JNode *as = jGet(pRecord, "assessment");
  char *zJson = profsumJsonCompact(pRecord);
  char zUs[64];
  int rc;
  if( zJson==0 ) return SQLITE_NOMEM;
  rc = sqlite3_bind_text(p, 7, zJson, -1, sqlite3_free);
  /* created_at with its microseconds always written (a record's time, as
  ** Python writes it, has none at a whole second): texts of one width,
  ** whose order as text is their order in time */
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(p, 1, profsumIsoWithUs(zCreated, zUs, sizeof(zUs)), -1,
                                             SQLITE_TRANSIENT);
  if( rc==SQLITE_OK ) rc = bindStr(p, 2, jGet(pRecord, "label"), "the record's label", pzErr);
  if( rc==SQLITE_OK && as && as->type==JT_OBJECT ){
    rc = bindStr(p, 3, jGet(as, "status"), "the record's status", pzErr);
  }
  if( rc==SQLITE_OK && idB>0 ) rc = sqlite3_bind_int64(p, 4, idB);
  if( rc==SQLITE_OK && idA>0 ) rc = sqlite3_bind_int64(p, 5, idA);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(p, 6, zOrigin, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(p);
    if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
      if( piRow ) *piRow = sqlite3_last_insert_rowid(db);
    }else{
      rc = profsumHistStmtFail(db, rc, pzErr);
    }
  }else if( rc!=SQLITE_ERROR || *pzErr==0 ){
    rc = profsumHistStmtFail(db, rc, pzErr);
  }
  sqlite3_reset(p);
  sqlite3_clear_bindings(p);
  return rc;
}

/* See history_int.h (historyInsertPrepare + historyInsertRun). */
int profsumHistInsertRecord(sqlite3 *db, const char *zSchema, const JNode *pRecord,
                            const char *zCreated, sqlite3_int64 idB, sqlite3_int64 idA,
                            const char *zOrigin, sqlite3_int64 *piRow, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc = historyInsertPrepare(db, zSchema, &p, pzErr);
  if( rc==SQLITE_OK ) rc = historyInsertRun(db, p, pRecord, zCreated, idB, idA, zOrigin, piRow, pzErr);
  sqlite3_finalize(p);
  return rc;
}

/* ------------------------------------------------------------------ */
/* profsum_track(before, after, label [, thresholds_json])             */
/* ------------------------------------------------------------------ */

/* State of one track call (the body may run several times). */
typedef struct TrackJob {
  ProfsumHistPairArgs pair; /* the traces, thresholds and top_k */
  const char *zLabel;       /* record label or 0 (null) */
  char *zPretty;            /* out: the record, indent 2 (sqlite3_malloc'd) */
} TrackJob;


/* The write body of profsum_track: compute the record from the current
** snapshot (after the write lock is held) and append it. */
static int trackBody(sqlite3 *db, void *pArg, char **pzErr){
  TrackJob *j = (TrackJob*)pArg;
  sqlite3_int64 idB = 0, idA = 0;
  JNode *rec = 0;
  int rc;
  sqlite3_free(j->zPretty);
  j->zPretty = 0;
  /* the schema first: a database made by an older profsum lacks columns
  ** the record's reads need (brought up in this transaction, as an import
  ** does; rolled back with it) */
  rc = profsumCreateSchema(db, HIST_SCHEMA, pzErr);
  if( rc ) return rc;
  rc = profsumHistComputeRecord(db, j->pair.vB, j->pair.vA, j->zLabel, &j->pair.thr, j->pair.topK,
                                &idB, &idA, &rec, 0, 0, pzErr);
  if( rc ) return rc;
  rc = profsumHistWriteStillOpen(db, pzErr);
  if( rc==SQLITE_OK ) rc = profsumHistInsertRecord(db, HIST_SCHEMA, rec, profsumMemberStr(rec, "recorded_at_utc"), idB, idA, "track", 0, pzErr);
  if( rc==SQLITE_OK ){
    j->zPretty = jDump(rec);
    if( j->zPretty==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) profsumHistWarnSources(db, HIST_SCHEMA, idB, idA, "profsum_track");
  jFree(rec);
  return rc;
}

/* See history_int.h. */
void profsumHistPairArgsInit(ProfsumHistPairArgs *p, sqlite3_value **argv){
  memset(p, 0, sizeof(*p));
  p->vB = argv[0];
  p->vA = argv[1];
  p->topK = PROFSUM_COMPARE_TOP_K;
  profsumThresholdsInit(&p->thr);
}

/* See history_int.h. */
int profsumHistPairCheck(sqlite3 *db, const ProfsumHistPairArgs *p, int bBusyOk, char **pzErr){
  sqlite3_int64 idB, idA;
  int rc = profsumHistResolvePair(db, HIST_SCHEMA, p->vB, p->vA, &idB, &idA, pzErr);
  if( rc==SQLITE_BUSY && bBusyOk ){
    sqlite3_free(*pzErr);
    *pzErr = 0;
    rc = SQLITE_OK;
  }
  return rc;
}

/* Parse an optional thresholds_json argument into *pT and *pTopK: the four
** threshold keys, plus "top_k" (any integer, a Python slice bound as in
** profsumTopKArg, stored clamped by profsumTopKClamp; absent: *pTopK
** unchanged).  Returns 0, or 1 after reporting the error. */
static int thresholdsArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v,
                         ProfsumThresholds *pT, int *pTopK){
  JNode *p, *pK;
  char *zE = 0, *zErr = 0;
  profsumThresholdsInit(pT);
  if( v==0 || sqlite3_value_type(v)==SQLITE_NULL ) return 0;
  if( sqlite3_value_type(v)!=SQLITE_TEXT ){
    profsumCtxErr(ctx, "%s: thresholds_json must be a JSON object (text)", zFunc);
    return 1;
  }
  p = jParse((const char*)sqlite3_value_text(v), sqlite3_value_bytes(v), &zE);
  if( p==0 ){
    if( zE ) profsumCtxErr(ctx, "%s: thresholds_json is not valid JSON: %s", zFunc, zE);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(zE);
    return 1;
  }
  pK = p->type==JT_OBJECT ? jGet(p, "top_k") : 0;
  if( pK ){
    /* top_k is not a threshold: read it, then apply the other keys */
    if( pK->type!=JT_INT ){
      profsumCtxErr(ctx, "%s: thresholds_json: top_k must be an integer", zFunc);
      jFree(p);
      return 1;
    }
    *pTopK = profsumTopKClamp(pK->i);
    jRemove(p, "top_k");
  }
  if( profsumThresholdsApply(p, "thresholds_json", "top_k", pT, &zErr) ){
    profsumCtxErr(ctx, "%s: %s", zFunc, zErr ? zErr : "out of memory");
    sqlite3_free(zErr);
    jFree(p);
    return 1;
  }
  jFree(p);
  return 0;
}

/*
** profsum_track(before, after, label [, thresholds_json]) → the record
** (indent 2).  thresholds_json may also hold "top_k" (absent: 10), that of
** assess_profile_regression(…, top_k): the record's comparison keeps the
** first top_k regressed_ops / improved_ops.  Arguments are checked before
** the database is touched; the
** record is then computed and appended under the write lock (busy.c).  On
** any error the history is unchanged.
*/
static void trackFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_track";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  TrackJob j;
  char *zErr = 0;
  int rc;
  memset(&j, 0, sizeof(j));
  profsumHistPairArgsInit(&j.pair, argv);
  if( sqlite3_value_type(argv[2])==SQLITE_TEXT ){
    j.zLabel = (const char*)sqlite3_value_text(argv[2]);
    if( j.zLabel==0 ){ sqlite3_result_error_nomem(ctx); return; }
    if( profsumTextArgFault("label", j.zLabel, sqlite3_value_bytes(argv[2]), &zErr) ){
      /* the text rule (textrule.c): refused before anything is written */
      profsumHistReportErr(ctx, FN, zErr ? SQLITE_ERROR : SQLITE_NOMEM, zErr);
      sqlite3_free(zErr);
      return;
    }
  }else if( sqlite3_value_type(argv[2])!=SQLITE_NULL ){
    profsumCtxErr(ctx, "%s: label must be text or NULL", FN);
    return;
  }
  if( thresholdsArg(ctx, FN, argc>3 ? argv[3] : 0, &j.pair.thr, &j.pair.topK) ) return;
  rc = profsumHistPairCheck(db, &j.pair, 1, &zErr);
  if( rc==SQLITE_OK ) rc = profsumWriteRun(db, HIST_SCHEMA, trackBody, &j, &zErr);
  if( rc ){
    profsumHistReportErr(ctx, FN, rc, zErr);
  }else{
    sqlite3_result_text(ctx, j.zPretty, -1, sqlite3_free);
    j.zPretty = 0;
  }
  sqlite3_free(zErr);
  sqlite3_free(j.zPretty);
}

/* ------------------------------------------------------------------ */
/* History files: writing one whole, reading one a line at a time      */
/* ------------------------------------------------------------------ */

/* See history_int.h. */
int profsumHistFileErr(int step, int e, const char *zDir, const char *zPath, char **pzErr){
  if( step==PROFSUM_FILE_NOMEM ) return SQLITE_NOMEM;
  if( step==PROFSUM_FILE_RENAME ){
    *pzErr = sqlite3_mprintf("'%s': %s", zPath, strerror(e));
    return PROFSUM_RC_FILEIO;
  }
  *pzErr = sqlite3_mprintf("cannot write in directory '%s': %s", zDir, strerror(e));
  return step==PROFSUM_FILE_CREATE ? SQLITE_CANTOPEN : PROFSUM_RC_FILEIO;
}

/*
** Write zPath atomically (profsumFileWriteAtomic), its parent directories
** created as needed.  A device, a pipe or a symbolic link at zPath is
** refused (fileio.h).  On error nothing is left behind (no temporary file,
** no new directory) and *pzErr names the path or its directory.
*/
static int writeFileAtomic(const char *zPath, const char *z, size_t n, char **pzErr){
  char *zDir;
  const char *zSpecial = profsumFileSpecial(zPath);
  ProfsumMadeDirs m;
  int rc, e = 0;
  memset(&m, 0, sizeof(m));
  if( zPath[0]==0 || zPath[strlen(zPath)-1]=='/' ){
    *pzErr = sqlite3_mprintf("'%s': not a file name", zPath);
    return SQLITE_CANTOPEN;
  }
  if( zSpecial ){
    *pzErr = sqlite3_mprintf("'%s' is %s, not a file: the history is written to a new file "
                             "renamed over it, which would replace it", zPath, zSpecial);
    return SQLITE_CANTOPEN;
  }
  {
    /* a link at zPath: neither followed nor replaced (fileio.h) */
    char *zLink = 0;
    if( profsumFileIsLink(zPath, &zLink) ){
      *pzErr = zLink ? sqlite3_mprintf("'%s' is %s: %s", zPath, zLink, PROFSUM_FILE_LINK_ADVICE) : 0;
      sqlite3_free(zLink);
      return *pzErr ? SQLITE_CANTOPEN : SQLITE_NOMEM;
    }
  }
  zDir = profsumPathDir(zPath);
  if( zDir==0 ) return SQLITE_NOMEM;
  rc = profsumMkdirs(zDir, &m, pzErr);
  if( rc==SQLITE_OK ){
    int step = profsumFileWriteAtomic(zPath, z, n, &e);
    if( step ) rc = profsumHistFileErr(step, e, zDir, zPath, pzErr);
  }
  if( rc ) profsumMadeDirsUndo(&m); else profsumMadeDirsKeep(&m);
  sqlite3_free(zDir);
  return rc;
}

/* The largest history file profsum_history_import reads. */
#define HISTORY_MAX_FILE ((sqlite3_int64)1<<30)

/* The longest line of a history file (without its newline): the most
** bytes jParse() accepts whatever they hold is 32 MiB; a record profsum
** writes stays far below 16 MiB unless top_k and hot_op_limit are both in
** the hundred thousands. */
#ifndef HISTORY_MAX_LINE
# define HISTORY_MAX_LINE ((size_t)16<<20)
#endif

/* Bytes read at a time, and the first size of the line buffer. */
#define HISTORY_CHUNK ((size_t)64<<10)

/* Lines of a file read through a bounded buffer (lineNext). */
typedef struct LineReader {
  int fd;                   /* the file (not owned) */
  char *a;                  /* buffer (sqlite3_malloc'd), at most
                            ** HISTORY_MAX_LINE + HISTORY_CHUNK bytes */
  size_t nAlloc;            /* its size */
  size_t iStart, iEnd;      /* the bytes read but not yet returned */
  size_t iScan;             /* a[iStart..iScan) holds no newline */
  sqlite3_int64 nRead;      /* bytes read from the file */
  int eof;                  /* the file is read to its end */
} LineReader;

/*
** The next line of r: *pz (in r's buffer, valid until the next call) and
** *pn, its length without the '\n' (the last line may have none).  Returns
** SQLITE_ROW for a line, SQLITE_DONE at the end of the file, SQLITE_TOOBIG
** for a line longer than HISTORY_MAX_LINE (*pzErr 0: the caller knows the
** line) or a file that grew past HISTORY_MAX_FILE (*pzErr says so),
** SQLITE_NOMEM, or PROFSUM_RC_FILEIO with *pzErr the read error.
*/
static int lineNext(LineReader *r, const char **pz, size_t *pn, char **pzErr){
  for(;;){
    char *q = r->iScan<r->iEnd ? memchr(r->a + r->iScan, '\n', r->iEnd - r->iScan) : 0;
    ssize_t got;
    if( q || (r->eof && r->iStart<r->iEnd) ){
      size_t iNext = q ? (size_t)(q - r->a) + 1 : r->iEnd;
      *pz = r->a + r->iStart;
      *pn = (q ? (size_t)(q - r->a) : r->iEnd) - r->iStart;
      r->iStart = r->iScan = iNext;
      return *pn>HISTORY_MAX_LINE ? SQLITE_TOOBIG : SQLITE_ROW;
    }
    if( r->eof ) return SQLITE_DONE;
    r->iScan = r->iEnd;
    if( r->iEnd - r->iStart > HISTORY_MAX_LINE ) return SQLITE_TOOBIG;
    /* Make room: move the start of the line to the front, else grow. */
    if( r->iStart>0 ){
      memmove(r->a, r->a + r->iStart, r->iEnd - r->iStart);
      r->iEnd -= r->iStart;
      r->iScan -= r->iStart;
      r->iStart = 0;
    }
    if( r->iEnd==r->nAlloc ){
      size_t nNew = r->nAlloc ? r->nAlloc*2 : HISTORY_CHUNK;
      char *aNew;
      if( nNew>HISTORY_MAX_LINE + HISTORY_CHUNK ) nNew = HISTORY_MAX_LINE + HISTORY_CHUNK;
      aNew = sqlite3_realloc64(r->a, nNew);
      if( aNew==0 ) return SQLITE_NOMEM;
      r->a = aNew;
      r->nAlloc = nNew;
    }
    do{
      got = read(r->fd, r->a + r->iEnd, r->nAlloc - r->iEnd);
    }while( got<0 && errno==EINTR );
    if( got<0 ){
      *pzErr = sqlite3_mprintf("read error: %s", strerror(errno));
      return *pzErr ? PROFSUM_RC_FILEIO : SQLITE_NOMEM;
    }
    if( got==0 ){ r->eof = 1; continue; }
    r->iEnd += (size_t)got;
    r->nRead += got;
    if( r->nRead>HISTORY_MAX_FILE ){
      *pzErr = sqlite3_mprintf("larger than 1 GiB");
      return *pzErr ? SQLITE_TOOBIG : SQLITE_NOMEM;
    }
  }
}

/* ------------------------------------------------------------------ */
/* profsum_history_import(path) / profsum_history_export(path)          */
/* ------------------------------------------------------------------ */

/* One profsum_history_import call (the body may run several times). */
typedef struct ImportJob {
  const char *zPath;        /* the file, as given */
  int fd;                   /* open on it, read from its start by each attempt */
  sqlite3_int64 nRec;       /* out: the records appended */
} ImportJob;

/* Is c Python str.strip() whitespace (ASCII part)? */
static int isPyWs(char c){ return c==' ' || c=='\t' || c=='\n' || c=='\r' || c=='\v' || c=='\f'; }

/*
** The label of a record read from a JSONL history (pRec, an object): a
** string or null, as tools-spec §4.2 has it (and as profsum_track and
** profsum_bundle take it).  Any other value (a number, a boolean, an
** object, an array) is refused rather than stored as a NULL label, which
** the views would list among the unlabeled records.  Every top-level
** member named "label" is checked (a line may repeat a key).  Returns
** SQLITE_OK; SQLITE_ERROR with *pzWhy "$.label: must be a string or null,
** not a number (42)"; or SQLITE_NOMEM (*pzWhy 0).
*/
static int importLabelCheck(const JNode *pRec, char **pzWhy){
  int i;
  for(i=0; i<pRec->nChild; i++){
    const JNode *p = pRec->a[i];
    const char *zWhat;
    char *zVal = 0;
    if( strcmp(p->zKey, "label")!=0 || p->type==JT_STRING || p->type==JT_NULL ) continue;
    switch( p->type ){
      case JT_INT: case JT_REAL:  zWhat = "a number";  break;
      case JT_TRUE: case JT_FALSE: zWhat = "a boolean"; break;
      case JT_ARRAY:               zWhat = "an array";  break;
      default:                     zWhat = "an object"; break;
    }
    if( p->type!=JT_ARRAY && p->type!=JT_OBJECT ){
      zVal = profsumJsonCompact(p);              /* 42, 1.5, NaN, true */
      if( zVal==0 ) return SQLITE_NOMEM;
    }
    if( zVal ){
      int n = (int)strlen(zVal);
      *pzWhy = sqlite3_mprintf("$.label: must be a string or null, not %s (%.40s%s)", zWhat, zVal,
                               n>40 ? "..." : "");
    }else{
      *pzWhy = sqlite3_mprintf("$.label: must be a string or null, not %s", zWhat);
    }
    sqlite3_free(zVal);
    return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/*
** One line (n bytes at z, without its newline) of a JSONL history, as
** load_regression_history() reads it: blank (nothing but what Python's
** str.strip() removes), nothing; a JSON object, a
** record, checked against the text rule (profsumJsonTextRule) and for its
** label (importLabelCheck), and appended with pIns (*pAdded 1); any other
** JSON value, skipped.  Errors: SQLITE_ERROR with *pzWhy (text that is not
** JSON, a string that breaks the rule, a label that is neither a string
** nor null), busy
** codes without a message, SQLITE_NOMEM (*pzWhy 0), another SQLite code.
*/
static int importLine(sqlite3 *db, sqlite3_stmt *pIns, const char *z, size_t n,
                      const char *zNow, int *pAdded, char **pzWhy){
  const char *b = z, *x = z + n;
  JNode *pRec;
  int rc;
  int64_t i0 = 0, e0 = (int64_t)n;
  *pAdded = 0;
  /* blank as str.strip() finds it: non-ASCII whitespace (U+00A0, U+3000,
  ** ...) and 0x1C-0x1F too */
  profsumPyStrip((const unsigned char*)z, &i0, &e0);
  if( i0>=e0 ) return SQLITE_OK;
  while( b<x && isPyWs(*b) ) b++;
  while( x>b && isPyWs(x[-1]) ) x--;
  pRec = jParse(b, (int)(x-b), pzWhy);
  if( pRec==0 ) return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
  if( pRec->type!=JT_OBJECT ){ jFree(pRec); return SQLITE_OK; }
  rc = profsumJsonTextRule(b, (int)(x-b), pzWhy);
  if( rc==SQLITE_OK ) rc = importLabelCheck(pRec, pzWhy);
  if( rc==SQLITE_OK ){
    rc = historyInsertRun(db, pIns, pRec, zNow, 0, 0, "import", 0, pzWhy);
    *pAdded = rc==SQLITE_OK;
  }
  jFree(pRec);
  return rc;
}

/*
** Write body of profsum_history_import: read the file from its start, line
** by line through a bounded buffer (one line and its tree in memory at a
** time), appending every record (origin 'import', no trace ids).  Messages
** name the file and the line: "'h.jsonl': line 3: ...".
*/
static int importBody(sqlite3 *db, void *pArg, char **pzErr){
  ImportJob *j = (ImportJob*)pArg;
  LineReader r;
  sqlite3_stmt *pIns = 0;
  sqlite3_int64 iLine = 0;
  char zNow[40];
  int rc;
  memset(&r, 0, sizeof(r));
  r.fd = j->fd;
  j->nRec = 0;
  if( lseek(j->fd, 0, SEEK_SET)!=0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot read from its start: %s", j->zPath, strerror(errno));
    return *pzErr ? PROFSUM_RC_FILEIO : SQLITE_NOMEM;
  }
  profsumNowIso(zNow, sizeof(zNow));
  rc = profsumCreateSchema(db, HIST_SCHEMA, pzErr);
  if( rc==SQLITE_OK ) rc = historyInsertPrepare(db, HIST_SCHEMA, &pIns, pzErr);
  while( rc==SQLITE_OK ){
    const char *z = 0;
    size_t n = 0;
    char *zWhy = 0;
    int added = 0;
    if( (rc = profsumHistWriteStillOpen(db, pzErr))!=SQLITE_OK ) break;
    rc = lineNext(&r, &z, &n, &zWhy);
    if( rc==SQLITE_DONE ){ rc = SQLITE_OK; break; }
    iLine++;
    if( rc==SQLITE_ROW ) rc = importLine(db, pIns, z, n, zNow, &added, &zWhy);
    else if( rc==SQLITE_TOOBIG && zWhy==0 ){
      zWhy = sqlite3_mprintf("longer than %d MiB (the longest line a history may have)",
                             (int)(HISTORY_MAX_LINE>>20));
      if( zWhy==0 ) rc = SQLITE_NOMEM;
    }
    j->nRec += added;
    if( rc && (rc & 0xff)!=SQLITE_BUSY ){
      /* every error names the file and the line, out of memory too */
      sqlite3_free(*pzErr);
      *pzErr = sqlite3_mprintf("'%s': line %lld: %s", j->zPath, (long long)iLine,
                               zWhy ? zWhy : rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errstr(rc));
    }
    sqlite3_free(zWhy);
  }
  sqlite3_finalize(pIns);
  sqlite3_free(r.a);
  if( rc && (rc & 0xff)!=SQLITE_BUSY && iLine==0 ){
    /* before the first line (the tables, the INSERT): name the file too */
    char *z = sqlite3_mprintf("'%s': %s", j->zPath, *pzErr ? *pzErr
                              : rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errstr(rc));
    sqlite3_free(*pzErr);
    *pzErr = z;
  }
  return rc;
}

/*
** profsum_history_import(path) → number of records read.  The file is
** opened and checked (a regular file of at most 1 GiB) before the database
** is touched, then read and appended in one write (busy.c): a line that is
** not JSON, a string that breaks the text rule, a label that is neither a
** string nor null or a line longer than
** HISTORY_MAX_LINE is an error naming the file and the line, and nothing
** is imported.
*/
static void historyImportFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_history_import";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zPath = profsumHistPathArg(ctx, FN, "path", argv[0]);
  ImportJob j;
  struct stat st;
  char *zErr = 0;
  int rc = SQLITE_OK;
  (void)argc;
  if( zPath==0 ) return;
  memset(&j, 0, sizeof(j));
  j.zPath = zPath;
  j.fd = open(zPath, O_RDONLY|O_CLOEXEC|O_NONBLOCK);      /* a FIFO: refused below, not waited on */
  if( j.fd<0 ){
    zErr = sqlite3_mprintf("'%s': %s", zPath, strerror(errno));
    rc = SQLITE_CANTOPEN;
  }else if( fstat(j.fd, &st)!=0 || !S_ISREG(st.st_mode) ){
    zErr = sqlite3_mprintf("'%s': not a regular file", zPath);
    rc = SQLITE_CANTOPEN;
  }else if( st.st_size>HISTORY_MAX_FILE ){
    zErr = sqlite3_mprintf("'%s': larger than 1 GiB", zPath);
    rc = SQLITE_TOOBIG;
  }
  if( rc==SQLITE_OK ) rc = profsumWriteRun(db, HIST_SCHEMA, importBody, &j, &zErr);
  if( j.fd>=0 ) close(j.fd);
  if( rc ){
    /* Every message names the file: also one from outside the body (the
    ** transaction, out of memory there) */
    size_t nPath = strlen(zPath);
    if( zErr==0 || zErr[0]!='\'' || strncmp(zErr+1, zPath, nPath)!=0 || zErr[nPath+1]!='\'' ){
      char *z = sqlite3_mprintf("'%s': %s", zPath, zErr ? zErr
                                : rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errstr(rc));
      sqlite3_free(zErr);
      zErr = z;
    }
  }
  if( rc ) profsumHistReportErr(ctx, FN, rc, zErr);
  else sqlite3_result_int64(ctx, j.nRec);
  sqlite3_free(zErr);
}

/*
** profsum_history_export(path) → number of records written: every record in
** record_id order as its JSONL line, written atomically (writeFileAtomic).
** A database without the history table exports an empty file.
*/
static void historyExportFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_history_export";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zPath = profsumHistPathArg(ctx, FN, "path", argv[0]);
  sqlite3_stmt *p = 0;
  sqlite3_str *s;
  char *zText = 0, *zErr = 0, *zSql;
  int rc = SQLITE_OK, nRec = 0, e, nText;
  (void)argc;
  if( zPath==0 ) return;
  {
    /* a JSONL file renamed over a database would lose it (a slip for
    ** 'runs.jsonl' when the history is runs.db) */
    char *zDb = 0;
    if( profsumFileIsDatabase(db, zPath, &zDb) ){
      if( zDb==0 ){ sqlite3_result_error_nomem(ctx); return; }
      profsumCtxErr(ctx, "%s: '%s' is %s: the history is written to a new file renamed over "
                    "it, which would replace it; export to another path", FN, zPath, zDb);
      sqlite3_free(zDb);
      return;
    }
  }
  s = sqlite3_str_new(db);
  e = profsumTableExists(db, HIST_SCHEMA, "profsum_history_record", &rc);
  if( e>0 ){
    zSql = sqlite3_mprintf("SELECT record_id, record_json FROM \"%w\".profsum_history_record "
                           "ORDER BY record_id", HIST_SCHEMA);
    if( zSql==0 ) rc = SQLITE_NOMEM;
    else{
      rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
      sqlite3_free(zSql);
      if( rc ) zErr = profsumHistDbErr(db);
    }
    while( rc==SQLITE_OK ){
      char *zE = 0, *zLine;
      JNode *r;
      if( (rc = sqlite3_step(p))!=SQLITE_ROW ) break;
      rc = SQLITE_OK;
      r = jParse((const char*)sqlite3_column_text(p, 1), sqlite3_column_bytes(p, 1), &zE);
      if( r==0 ){
        if( zE ){
          zErr = sqlite3_mprintf("record %lld: %s", (long long)sqlite3_column_int64(p, 0), zE);
          rc = SQLITE_ERROR;
        }else rc = SQLITE_NOMEM;
        sqlite3_free(zE);
        break;
      }
      zLine = profsumJsonCompact(r);
      jFree(r);
      if( zLine==0 ){ rc = SQLITE_NOMEM; break; }
      sqlite3_str_appendall(s, zLine);
      sqlite3_str_appendchar(s, 1, '\n');
      sqlite3_free(zLine);
      nRec++;
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    else if( rc!=SQLITE_OK && zErr==0 && rc!=SQLITE_NOMEM ) zErr = profsumHistDbErr(db);
    sqlite3_finalize(p);
  }else if( e<0 ){
    zErr = profsumHistDbErr(db);
  }
  nText = sqlite3_str_length(s);
  if( sqlite3_str_errcode(s) && rc==SQLITE_OK ) rc = sqlite3_str_errcode(s);
  zText = sqlite3_str_finish(s);
  if( rc==SQLITE_OK ) rc = writeFileAtomic(zPath, zText ? zText : "", (size_t)nText, &zErr);
  if( rc ) profsumHistReportErr(ctx, FN, rc, zErr);
  else sqlite3_result_int(ctx, nRec);
  sqlite3_free(zErr);
  sqlite3_free(zText);
}

/* ------------------------------------------------------------------ */
/* profsum_history_summary_json([tail])                                */
/* ------------------------------------------------------------------ */

/* A record's JSON as SQLite's JSON functions read it: record_json keeps the
** NaN, Infinity and -Infinity that Python's json.dumps writes (a reference
** line with a NaN metric, a regression from a subnormal median), which json_valid() and every
** other JSON function of SQLite reject (the record would drop out of the
** counts); here they become null and +/-9e999 (read as +/-Inf).  Only the
** bare words after ': ', '[' or ', ' (json.dumps' separators) are replaced.
** The same expression is in views/history.sql and views/history_summary.sql.
** An SQL expression over the column record_json. */
#define HISTORY_STD_JSON \
  "CASE WHEN json_valid(record_json) THEN record_json ELSE " \
  "replace(replace(replace(replace(replace(replace(replace(replace(replace(record_json, " \
  "': -Infinity', ': -9e999'), '[-Infinity', '[-9e999'), ', -Infinity', ', -9e999'), " \
  "': Infinity', ': 9e999'), '[Infinity', '[9e999'), ', Infinity', ', 9e999'), " \
  "': NaN', ': null'), '[NaN', '[null'), ', NaN', ', null') END"

/* top_failures / top_warnings: the 10 most common strings of the
** assessments' zList arrays, ties in first-seen order. */
static int topMessages(sqlite3 *db, const char *zList, JNode **ppOut){
  sqlite3_stmt *p = 0;
  JNode *arr = jArr();
  char *z = sqlite3_mprintf(
      "SELECT j.value, count(*) AS n, min(r.record_id*1000000 + j.key) AS first "
      "FROM (SELECT record_id, " HISTORY_STD_JSON " AS rj FROM \"%w\".profsum_history_record) AS r, "
      "  json_each(r.rj, '$.assessment.%s') AS j "
      "WHERE json_valid(r.rj) AND json_type(r.rj, '$.assessment') = 'object' "
      "  AND json_type(r.rj, '$.assessment.%s') = 'array' AND j.type = 'text' "
      "GROUP BY j.value ORDER BY n DESC, first LIMIT 10", HIST_SCHEMA, zList, zList);
  int rc;
  if( z==0 || arr==0 ){ sqlite3_free(z); jFree(arr); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  while( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
    JNode *o = jObj();
    const char *zM = profsumColText(p, 0, &rc);
    jSetLit(o, "message", jStr(zM, sqlite3_column_bytes(p, 0)));
    jSetLit(o, "count", jInt(sqlite3_column_int64(p, 1)));
    jPush(arr, o);
  }
  rc = profsumFinishRows(db, p, rc, 0);
  if( rc ){ jFree(arr); return rc; }
  *ppOut = arr;
  return SQLITE_OK;
}

/* Build the §4.3 summary of the history table with the last nTail
** records.  Returns SQLITE_OK with *ppOut, or an error (*pzErr). */
static int historySummary(sqlite3 *db, sqlite3_int64 nTail, JNode **ppOut, char **pzErr){
  JNode *o = jObj(), *counts = jObj(), *recent = jArr(), *latest = 0, *tf = 0, *tw = 0;
  sqlite3_stmt *p = 0;
  const char *zFile = sqlite3_db_filename(db, HIST_SCHEMA);
  sqlite3_int64 nRec = 0;
  char *z;
  int rc = SQLITE_OK, e, i;
  e = profsumTableExists(db, HIST_SCHEMA, "profsum_history_record", &rc);
  if( e<0 ){ *pzErr = profsumHistDbErr(db); goto fail; }
  if( e>0 ){
    z = sqlite3_mprintf("SELECT count(*) FROM \"%w\".profsum_history_record", HIST_SCHEMA);
    if( z==0 ){ rc = SQLITE_NOMEM; goto fail; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    if( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ) nRec = sqlite3_column_int64(p, 0);
    rc = profsumFinishRows(db, p, rc, 0); p = 0;
    if( rc ){ if( rc!=SQLITE_NOMEM ) *pzErr = profsumHistDbErr(db); goto fail; }
    /* status_counts: string statuses of records whose assessment is an object */
    z = sqlite3_mprintf("SELECT json_extract(rj, '$.assessment.status') AS s, count(*) "
        "FROM (SELECT " HISTORY_STD_JSON " AS rj FROM \"%w\".profsum_history_record) "
        "WHERE json_valid(rj) AND json_type(rj, '$.assessment') = 'object' "
        "AND json_type(rj, '$.assessment.status') = 'text' GROUP BY s", HIST_SCHEMA);
    if( z==0 ){ rc = SQLITE_NOMEM; goto fail; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    while( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
      const char *zStatus = profsumColText(p, 0, &rc);              /* text (WHERE) */
      if( zStatus ) jSet(counts, zStatus, jInt(sqlite3_column_int64(p, 1)));
    }
    rc = profsumFinishRows(db, p, rc, 0); p = 0;
    if( rc ){ if( rc!=SQLITE_NOMEM ) *pzErr = profsumHistDbErr(db); goto fail; }
    rc = topMessages(db, "failures", &tf);
    if( rc==SQLITE_OK ) rc = topMessages(db, "warnings", &tw);
    if( rc ){ if( rc!=SQLITE_NOMEM ) *pzErr = profsumHistDbErr(db); goto fail; }
    /* the last max(tail, 1) records, oldest first */
    if( nRec>0 ){
      sqlite3_int64 nLast = nTail>1 ? nTail : 1;
      z = sqlite3_mprintf("SELECT record_id, record_json FROM (SELECT record_id, record_json FROM "
          "\"%w\".profsum_history_record ORDER BY record_id DESC LIMIT %lld) ORDER BY record_id",
          HIST_SCHEMA, (long long)nLast);
      if( z==0 ){ rc = SQLITE_NOMEM; goto fail; }
      rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
      sqlite3_free(z);
      while( rc==SQLITE_OK ){
        char *zE = 0;
        JNode *r;
        const char *zRec;
        if( (rc = sqlite3_step(p))!=SQLITE_ROW ) break;
        rc = SQLITE_OK;
        zRec = profsumColText(p, 1, &rc);
        if( rc ) break;
        r = jParse(zRec, sqlite3_column_bytes(p, 1), &zE);
        if( r==0 ){
          if( zE ){
            *pzErr = sqlite3_mprintf("record %lld: %s", (long long)sqlite3_column_int64(p, 0), zE);
            rc = SQLITE_ERROR;
          }else rc = SQLITE_NOMEM;
          sqlite3_free(zE);
          break;
        }
        jPush(recent, r);
      }
      if( rc==SQLITE_DONE ) rc = SQLITE_OK;
      else if( rc!=SQLITE_OK && *pzErr==0 && rc!=SQLITE_NOMEM ) *pzErr = profsumHistDbErr(db);
      sqlite3_finalize(p); p = 0;
      if( rc ) goto fail;
      if( recent && recent->nChild>0 ) latest = jClone(recent->a[recent->nChild-1]);
      if( nTail<=0 && recent ){
        for(i=0; i<recent->nChild; i++) jFree(recent->a[i]);
        recent->nChild = 0;
      }
    }
  }
  jSetLit(o, "history_path", jStr(zFile && zFile[0] ? zFile : ":memory:", -1));
  jSetLit(o, "num_records", jInt(nRec));
  jSetLit(o, "status_counts", counts);
  jSetLit(o, "top_failures", tf ? tf : jArr());
  jSetLit(o, "top_warnings", tw ? tw : jArr());
  jSetLit(o, "latest_record", latest ? latest : jNull());
  jSetLit(o, "recent_records", recent);
  if( o==0 || jOom(o) ){ jFree(o); return SQLITE_NOMEM; }
  *ppOut = o;
  return SQLITE_OK;
fail:
  jFree(o); jFree(counts); jFree(recent); jFree(latest); jFree(tf); jFree(tw);
  return rc ? rc : SQLITE_ERROR;
}

/* profsum_history_summary_json([tail]) → the §4.3 document (indent 2);
** tail defaults to 20, ≤ 0 gives no recent records. */
static void historySummaryFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_history_summary_json";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 nTail = 20;
  JNode *o = 0;
  char *zErr = 0, *z;
  int rc;
  if( argc>0 && sqlite3_value_type(argv[0])!=SQLITE_NULL ){
    if( sqlite3_value_numeric_type(argv[0])!=SQLITE_INTEGER ){
      profsumCtxErr(ctx, "%s: tail must be an integer", FN);
      return;
    }
    nTail = sqlite3_value_int64(argv[0]);
    if( nTail>1000000 ) nTail = 1000000;
  }
  rc = historySummary(db, nTail, &o, &zErr);
  if( rc ){ profsumHistReportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); return; }
  z = jDump(o);
  jFree(o);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* ================================================================== */
/* Registration                                                        */
/* ================================================================== */

/* See history_int.h.  The run order of the series (series.c) comes with
** the history: profsum_trend and profsum_op_growth read it. */
int profsumRegisterHistory(sqlite3 *db, char **pzErr){
  /* The summary reads tables only: usable anywhere; not DETERMINISTIC (the
  ** tables change).  The others write tables or a file: DIRECTONLY, so
  ** that a view or trigger stored in a hostile database cannot call them. */
  static const ProfsumHistFunc aFunc[] = {
    {"profsum_track",                3, SQLITE_UTF8|SQLITE_DIRECTONLY,  trackFunc},
    {"profsum_track",                4, SQLITE_UTF8|SQLITE_DIRECTONLY,  trackFunc},
    {"profsum_history_import",       1, SQLITE_UTF8|SQLITE_DIRECTONLY,  historyImportFunc},
    {"profsum_history_export",       1, SQLITE_UTF8|SQLITE_DIRECTONLY|PROFSUM_FN_READS,  historyExportFunc},
    {"profsum_history_summary_json", 0, SQLITE_UTF8|PROFSUM_FN_READS,                    historySummaryFunc},
    {"profsum_history_summary_json", 1, SQLITE_UTF8|PROFSUM_FN_READS,                    historySummaryFunc},
  };
  int rc = profsumHistRegister(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), pzErr);
  if( rc==SQLITE_OK ) rc = profsumRegisterSeriesRuns(db, pzErr);
  return rc;
}
