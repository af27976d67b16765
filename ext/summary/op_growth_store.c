/*
** op_growth_store.c — the stored ranks of profsum_op_growth
** (profsum_agg_op_growth): written for one pair of runs at a time, by the
** import and by profsum_op_growth_store().
**
**   SELECT profsum_op_growth_store('run-42');   -- that run's pair → rows stored
**   SELECT profsum_op_growth_store();           -- every run of every series
**
** growth_rank ranks an op among every op of its pair (a run of a series
** and the run before it), so the view cannot answer one op of a pair
** without reading all of them; stored, one op's rank is one row.  A pair's
** rows are what the view computes for it (they are written from the view
** itself, for a pair that has no stored rows at that moment), keyed by the
** later run with the previous run's id beside them: the view takes them
** only while that is still the run's previous run, and ranks any other
** pair itself, so rows left behind by a run inserted between two others,
** a removed run or a series changed by hand are never read.  Trace ids are
** never reused (AUTOINCREMENT) and a run's ops are written once, at its
** import: a pair's rows stay right as long as its two runs exist.
**
** Writing one pair costs what profsum_op_growth costs for one label (the
** ops of two runs), once per import.
*/
#include "profsum_int.h"
#include "import_int.h"
#include "busy.h"
#include "summary_doc.h"

#include <string.h>

/* The schema profsum_op_growth_store() writes. */
#define OG_SCHEMA "main"

/* The code to return for a failed statement: the extended code for busy
** errors (busy.c retries them; then no message), else rc with *pzErr set
** from the connection (unless already set). */
static int ogFail(sqlite3 *db, int rc, char **pzErr){
  int x = sqlite3_extended_errcode(db);
  if( (x & 0xff)==SQLITE_BUSY ) return x;
  if( rc==SQLITE_NOMEM ) return rc;
  if( *pzErr==0 ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc==SQLITE_OK || rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc;
}

/* Run the statement zSql (sqlite3_mprintf'd, taken; 0: out of memory)
** with ?1 bound to iTrace, to its first row or its end; *pnChange (when
** not 0) the rows it changed, *piFirst (when not 0) the first column of
** its first row (left as it was when there is none).  Busy codes come
** without a message; other errors set *pzErr. */
static int ogExec(sqlite3 *db, char *zSql, sqlite3_int64 iTrace, sqlite3_int64 *pnChange,
                  sqlite3_int64 *piFirst, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc ) return ogFail(db, rc, pzErr);
  sqlite3_bind_int64(p, 1, iTrace);
  rc = sqlite3_step(p);
  if( rc==SQLITE_DONE || rc==SQLITE_ROW ){
    if( rc==SQLITE_ROW && piFirst ) *piFirst = sqlite3_column_int64(p, 0);
    if( pnChange ) *pnChange = sqlite3_changes64(db);
    rc = sqlite3_finalize(p);
    return rc ? ogFail(db, rc, pzErr) : SQLITE_OK;
  }
  rc = ogFail(db, rc, pzErr);
  sqlite3_finalize(p);
  return rc;
}

/* See import_int.h. */
int profsumOpGrowthStore(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, sqlite3_int64 *pnRow,
                         char **pzErr){
  int rc;
  if( pnRow ) *pnRow = 0;
  rc = ogExec(db, sqlite3_mprintf("DELETE FROM \"%w\".profsum_agg_op_growth WHERE trace_id = ?1", zSchema),
              iTrace, 0, 0, pzErr);
  /* the view ranks the pair itself now (it has no stored rows) */
  if( rc==SQLITE_OK ) rc = ogExec(db, sqlite3_mprintf(
      "INSERT INTO \"%w\".profsum_agg_op_growth(trace_id, name, prev_trace_id, growth_rank) "
      "SELECT trace_id, name, prev_trace_id, growth_rank FROM \"%w\".profsum_op_growth WHERE trace_id = ?1",
      zSchema, zSchema), iTrace, pnRow, 0, pzErr);
  return rc;
}

/* See import_int.h. */
int profsumOpGrowthNextRun(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, sqlite3_int64 *piNext,
                           char **pzErr){
  *piNext = 0;
  return ogExec(db, sqlite3_mprintf(
      "SELECT x.trace_id FROM \"%w\".profsum_trace AS t JOIN \"%w\".profsum_trace AS x "
      "ON x.series = t.series AND (x.imported_at, x.trace_id) > (t.imported_at, t.trace_id) "
      "WHERE t.trace_id = ?1 ORDER BY x.imported_at, x.trace_id LIMIT 1", zSchema, zSchema),
      iTrace, 0, piNext, pzErr);
}

/* See import_int.h. */
int profsumOpGrowthImported(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, char **pzErr){
  sqlite3_int64 iNext = 0;
  int rc = profsumOpGrowthStore(db, zSchema, iTrace, 0, pzErr);
  if( rc==SQLITE_OK ) rc = profsumOpGrowthNextRun(db, zSchema, iTrace, &iNext, pzErr);
  if( rc==SQLITE_OK && iNext ) rc = profsumOpGrowthStore(db, zSchema, iNext, 0, pzErr);
  return rc;
}

/* What profsum_op_growth_store() writes: one trace (hasTrace) or all. */
typedef struct OgJob {
  sqlite3_value *pTrace;        /* the argument: a label or a trace id (0: every run) */
  sqlite3_int64 nRow;           /* rows stored */
} OgJob;

/* The body of profsum_op_growth_store (busy.c may run it more than once):
** the schema brought to this build, then the pairs stored. */
static int ogBody(sqlite3 *db, void *pArg, char **pzErr){
  OgJob *j = (OgJob*)pArg;
  sqlite3_stmt *p = 0;
  sqlite3_int64 id = 0, n = 0;
  int rc, e;
  j->nRow = 0;
  e = profsumTableExists(db, OG_SCHEMA, "profsum_trace", &rc);
  if( e<0 ) return ogFail(db, rc, pzErr);
  if( e==0 ){
    *pzErr = sqlite3_mprintf("the database holds no imported traces (no profsum_trace table)");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  rc = profsumCreateSchema(db, OG_SCHEMA, pzErr);
  if( rc ) return rc;
  if( sqlite3_get_autocommit(db) ){
    /* SQLite rolled the write back after an error it absorbed (out of
    ** memory): each write would commit on its own now */
    *pzErr = sqlite3_mprintf("SQLite rolled the write transaction back; nothing was written");
    return *pzErr ? SQLITE_ABORT : SQLITE_NOMEM;
  }
  if( j->pTrace ){
    char *zE = 0;
    rc = profsumResolveTrace(db, OG_SCHEMA, j->pTrace, &id, &zE);
    if( rc ){
      if( (sqlite3_extended_errcode(db) & 0xff)==SQLITE_BUSY ){ sqlite3_free(zE); return sqlite3_extended_errcode(db); }
      *pzErr = zE;
      return rc==SQLITE_NOMEM ? rc : SQLITE_ERROR;
    }
    rc = profsumOpGrowthStore(db, OG_SCHEMA, id, &j->nRow, pzErr);
    return rc;
  }
  rc = sqlite3_prepare_v2(db, "SELECT trace_id FROM \"" OG_SCHEMA "\".profsum_trace "
                          "WHERE series IS NOT NULL ORDER BY trace_id", -1, &p, 0);
  if( rc ) return ogFail(db, rc, pzErr);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    rc = profsumOpGrowthStore(db, OG_SCHEMA, sqlite3_column_int64(p, 0), &n, pzErr);
    if( rc ) break;
    j->nRow += n;
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  else if( rc!=SQLITE_OK && *pzErr==0 ) rc = ogFail(db, rc, pzErr);
  sqlite3_finalize(p);
  return rc;
}

/*
** profsum_op_growth_store([trace]) → the rows stored: the ranks of the
** pair of trace (a label or a trace id; its previous run in its series)
** written again, or with no argument those of every run of every series
** (for a database made before the stored ranks).  A run without a series
** or without a previous run stores none.  One write (busy.c): on an error
** nothing changes.
*/
static void ogStoreFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_op_growth_store";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  OgJob j;
  char *zErr = 0;
  int rc;
  memset(&j, 0, sizeof(j));
  if( argc>0 ){
    int t = sqlite3_value_type(argv[0]);
    if( t!=SQLITE_TEXT && t!=SQLITE_INTEGER ){
      profsumCtxErr(ctx, "%s: trace must be a label (text) or a trace id (integer)", FN);
      return;
    }
    j.pTrace = argv[0];
  }
  rc = profsumWriteRun(db, OG_SCHEMA, ogBody, &j, &zErr);
  if( rc==SQLITE_NOMEM && zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc ){
    profsumCtxErr(ctx, "%s: %s", FN, zErr ? zErr : sqlite3_errstr(rc));
    if( rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
  }else{
    sqlite3_result_int64(ctx, j.nRow);
  }
  sqlite3_free(zErr);
}

/* See import_int.h. */
int profsumRegisterOpGrowthStore(sqlite3 *db, char **pzErr){
  /* writes a table: DIRECTONLY (never from a view or trigger of an
  ** untrusted database) */
  int rc = sqlite3_create_function(db, "profsum_op_growth_store", 0, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                   0, ogStoreFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_op_growth_store", 1,
                                                   SQLITE_UTF8|SQLITE_DIRECTONLY, 0, ogStoreFunc, 0, 0);
  if( rc && pzErr && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("profsum: registering profsum_op_growth_store failed: %s", sqlite3_errstr(rc));
  }
  return rc;
}
