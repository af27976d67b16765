/*
** series.c — profsum_series_runs: the run order of every series, read
** from the index profsum_trace(series, imported_at, trace_id) for the rows
** a query asks for.
**
**   CREATE TABLE x(series TEXT, trace_id INTEGER, run_index INTEGER,
**                  runs_back INTEGER, prev_trace_id INTEGER)
**
** One row per trace with a series: its position in the series (run_index
** 1 = the oldest, runs_back 1 = the newest; runs ordered by imported_at,
** then trace_id) and the trace id of the run before it (NULL for the
** first).  profsum_trend and profsum_op_growth take their run order from
** it.  A window over the series (row_number, lag) gives the same numbers
** but orders every run of every series for one label: SQLite cannot push
** a filter on a label into a window partitioned by series.  Here the plan
** follows the filter:
**   trace_id = ?   that run only: two counts over its series' index range
**                  and one seek for the run before it
**   series = ?     that series in index order, numbered as it is read
**   neither        every series in index order
**
** The schema script (views/trend.sql) makes one such table in each
** database that holds profsum's tables ("CREATE VIRTUAL TABLE ... USING
** profsum_series_runs"); it reads the profsum_trace of the database it is
** in, under whatever name that database is attached (xConnect is told the
** name each time), as the views beside it do.  Not eponymous.  Read-only,
** innocuous: it reads profsum_trace and nothing else, so the stored views
** may use it under trusted_schema=OFF.
*/
#include "profsum_int.h"
#include "history_int.h"

#include <string.h>

#define SR_SCHEMA "CREATE TABLE x(series TEXT, trace_id INTEGER, run_index INTEGER, " \
                  "runs_back INTEGER, prev_trace_id INTEGER)"
#define SR_SERIES    0
#define SR_TRACE_ID  1
#define SR_RUN_INDEX 2
#define SR_RUNS_BACK 3
#define SR_PREV      4

/* idxNum: the plan (xBestIndex). */
#define SR_BY_TRACE  1
#define SR_BY_SERIES 2

/* The cursor.  pScan yields (series, trace_id) in run order, or for the
** one-run plan the whole row (series, trace_id, run_index, runs_back,
** prev_trace_id). */
typedef struct SrCursor {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *pScan;      /* the rows, in order */
  sqlite3_stmt *pCount;     /* runs of one series (the series and full plans) */
  int oneRun;               /* the trace_id plan */
  int eof;                  /* no current row */
  sqlite3_value *pSeries;   /* series of the current row (dup) */
  sqlite3_int64 iTrace;     /* its trace id */
  sqlite3_int64 iRun;       /* its run_index */
  sqlite3_int64 nRuns;      /* runs of its series */
  sqlite3_int64 iPrev;      /* the trace id before it, when hasPrev */
  int hasPrev;
} SrCursor;

/* The table object: the connection and the schema the table is in. */
typedef struct SrTab {
  sqlite3_vtab base;
  sqlite3 *db;
  char *zSchema;            /* the database's name in this connection */
} SrTab;

/* xConnect and xCreate: declare the table; innocuous (reads profsum_trace
** only); argv[1] is the name of the database the table is in.  Arguments
** of the USING clause are ignored. */
static int srConnect(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                     sqlite3_vtab **ppVtab, char **pzErr){
  SrTab *pTab;
  int rc;
  (void)pAux; (void)pzErr;
  if( argc<2 ) return SQLITE_ERROR;
  rc = sqlite3_declare_vtab(db, SR_SCHEMA);
  if( rc==SQLITE_OK ) rc = sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  if( rc!=SQLITE_OK ) return rc;
  pTab = sqlite3_malloc64(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->db = db;
  pTab->zSchema = sqlite3_mprintf("%s", argv[1]);
  if( pTab->zSchema==0 ){ sqlite3_free(pTab); return SQLITE_NOMEM; }
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

/* xCreate: as xConnect; a function of its own, so that the module is not
** eponymous (a table exists only where the schema script made one). */
static int srCreate(sqlite3 *db, void *pAux, int argc, const char *const *argv,
                    sqlite3_vtab **ppVtab, char **pzErr){
  return srConnect(db, pAux, argc, argv, ppVtab, pzErr);
}

/* xDisconnect and xDestroy: free the table object (nothing is stored). */
static int srDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(((SrTab*)pVtab)->zSchema);
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/*
** xBestIndex.  A usable "=" constraint on trace_id (else on series)
** becomes xFilter's argument (idxNum SR_BY_TRACE, SR_BY_SERIES; 0: every
** series).  The constraint stays checked by SQLite too (not omitted), so
** a value of another type compares as SQLite compares it.  A series
** constraint of another collation than BINARY (series = 'x' COLLATE
** NOCASE) is left to SQLite alone: the index lookup compares bytes and
** would miss the series the collation matches ('X'), and the run numbers
** are those of each series, not of the rows the collation groups.  Costs:
** one run 10, one series 1,000, everything 100,000.  xFilter reads a
** series argument that is a number by the full plan (see srFilter).
*/
static int srBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  int iTrace = -1, iSeries = -1, i;
  (void)pVtab;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( !pC->usable || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( pC->iColumn==SR_TRACE_ID && iTrace<0 ) iTrace = i;
    if( pC->iColumn==SR_SERIES && iSeries<0
     && sqlite3_stricmp(sqlite3_vtab_collation(pInfo, i), "BINARY")==0 ) iSeries = i;
  }
  if( iTrace>=0 ){
    pInfo->aConstraintUsage[iTrace].argvIndex = 1;
    pInfo->idxNum = SR_BY_TRACE;
    pInfo->idxStr = "trace_id=? via profsum_trace_series";
    pInfo->estimatedCost = 10;
    pInfo->estimatedRows = 1;
    pInfo->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  }else if( iSeries>=0 ){
    pInfo->aConstraintUsage[iSeries].argvIndex = 1;
    pInfo->idxNum = SR_BY_SERIES;
    pInfo->idxStr = "series=? via profsum_trace_series";
    pInfo->estimatedCost = 1000;
    pInfo->estimatedRows = 1000;
  }else{
    pInfo->idxNum = 0;
    pInfo->idxStr = "every series via profsum_trace_series";
    pInfo->estimatedCost = 100000;
    pInfo->estimatedRows = 100000;
  }
  return SQLITE_OK;
}

/* xOpen: a new cursor at EOF. */
static int srOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  SrCursor *pCur = sqlite3_malloc64(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  pCur->eof = 1;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* Finalize the statements and free the row state: the cursor at EOF. */
static void srReset(SrCursor *pCur){
  sqlite3_finalize(pCur->pScan);
  sqlite3_finalize(pCur->pCount);
  sqlite3_value_free(pCur->pSeries);
  pCur->pScan = pCur->pCount = 0;
  pCur->pSeries = 0;
  pCur->eof = 1;
}

/* xClose. */
static int srClose(sqlite3_vtab_cursor *cur){
  SrCursor *pCur = (SrCursor*)cur;
  srReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Prepare zSql (sqlite3_mprintf'd, 0 when out of memory; freed here) on
** the cursor's connection into *pp.  An error's message goes to the vtab. */
static int srPrepare(SrCursor *pCur, char *zSql, sqlite3_stmt **pp){
  sqlite3 *db = ((SrTab*)pCur->base.pVtab)->db;
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, pp, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
    profsumVtabErr(pCur->base.pVtab, "profsum_series_runs: %s", sqlite3_errmsg(db));
  }
  return rc;
}

/* rc, the code of a failed statement of the cursor, with the table's
** message "profsum_series_runs: <SQLite's text>" unless one is set already
** (srPrepare's) or memory ran out. */
static int srFail(SrCursor *pCur, int rc){
  sqlite3_vtab *pTab = pCur->base.pVtab;
  if( rc!=SQLITE_NOMEM && pTab->zErrMsg==0 ){
    profsumVtabErr(pTab, "profsum_series_runs: %s", sqlite3_errmsg(((SrTab*)pTab)->db));
  }
  return rc;
}

/* The number of runs of series v (pCount bound to it), into *pN. */
static int srCountSeries(SrCursor *pCur, sqlite3_value *v, sqlite3_int64 *pN){
  int rc;
  sqlite3_reset(pCur->pCount);
  rc = sqlite3_bind_value(pCur->pCount, 1, v);
  if( rc==SQLITE_OK ) rc = sqlite3_step(pCur->pCount);
  if( rc==SQLITE_ROW ){
    *pN = sqlite3_column_int64(pCur->pCount, 0);
    rc = SQLITE_OK;
  }else if( rc==SQLITE_DONE ){
    rc = SQLITE_ERROR;
  }
  sqlite3_reset(pCur->pCount);
  return rc;
}

/* Does column 0 of pStmt's row hold the series v (type and bytes)? */
static int srSameSeries(sqlite3_value *v, sqlite3_stmt *pStmt){
  int n;
  if( sqlite3_value_type(v)!=sqlite3_column_type(pStmt, 0) ) return 0;
  n = sqlite3_value_bytes(v);
  if( n!=sqlite3_column_bytes(pStmt, 0) ) return 0;
  return n==0 || memcmp(sqlite3_value_blob(v), sqlite3_column_blob(pStmt, 0), (size_t)n)==0;
}

/*
** Step pScan to the next row and make it current (the series and full
** plans; the one-run plan has its row from xFilter): the run number, the
** series' size counted when the series changes, the run before it.
*/
static int srStep(SrCursor *pCur){
  int rc;
  if( pCur->oneRun ){ pCur->eof = 1; return SQLITE_OK; }
  rc = sqlite3_step(pCur->pScan);
  if( rc==SQLITE_DONE ){ pCur->eof = 1; return SQLITE_OK; }
  if( rc!=SQLITE_ROW ) return rc;
  if( pCur->pSeries && srSameSeries(pCur->pSeries, pCur->pScan) ){
    pCur->hasPrev = 1;
    pCur->iPrev = pCur->iTrace;
    pCur->iRun++;
  }else{
    sqlite3_value_free(pCur->pSeries);
    pCur->pSeries = sqlite3_value_dup(sqlite3_column_value(pCur->pScan, 0));
    if( pCur->pSeries==0 ) return SQLITE_NOMEM;
    pCur->hasPrev = 0;
    pCur->iRun = 1;
    rc = srCountSeries(pCur, pCur->pSeries, &pCur->nRuns);
    if( rc ) return rc;
  }
  pCur->iTrace = sqlite3_column_int64(pCur->pScan, 1);
  pCur->eof = 0;
  return SQLITE_OK;
}

/* The one-run plan: the row of trace argv (none when it has no series). */
static int srOneRun(SrCursor *pCur, const char *zS, sqlite3_value *pId){
  int rc = srPrepare(pCur, sqlite3_mprintf(
      "SELECT t.series, t.trace_id,"
      " (SELECT count(*) FROM \"%w\".profsum_trace AS x WHERE x.series = t.series"
      "   AND (x.imported_at, x.trace_id) < (t.imported_at, t.trace_id)),"
      " (SELECT count(*) FROM \"%w\".profsum_trace AS x WHERE x.series = t.series),"
      " (SELECT x.trace_id FROM \"%w\".profsum_trace AS x WHERE x.series = t.series"
      "   AND (x.imported_at, x.trace_id) < (t.imported_at, t.trace_id)"
      "   ORDER BY x.imported_at DESC, x.trace_id DESC LIMIT 1)"
      " FROM \"%w\".profsum_trace AS t WHERE t.trace_id = ?1 AND t.series IS NOT NULL",
      zS, zS, zS, zS), &pCur->pScan);
  if( rc ) return rc;
  pCur->oneRun = 1;
  rc = sqlite3_bind_value(pCur->pScan, 1, pId);
  if( rc ) return rc;
  rc = sqlite3_step(pCur->pScan);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( rc!=SQLITE_ROW ) return rc;
  pCur->pSeries = sqlite3_value_dup(sqlite3_column_value(pCur->pScan, 0));
  if( pCur->pSeries==0 ) return SQLITE_NOMEM;
  pCur->iTrace = sqlite3_column_int64(pCur->pScan, 1);
  pCur->iRun = sqlite3_column_int64(pCur->pScan, 2) + 1;
  pCur->nRuns = sqlite3_column_int64(pCur->pScan, 3);
  pCur->hasPrev = sqlite3_column_type(pCur->pScan, 4)!=SQLITE_NULL;
  pCur->iPrev = sqlite3_column_int64(pCur->pScan, 4);
  pCur->eof = 0;
  return SQLITE_OK;
}

/*
** xFilter: the plan of xBestIndex (argv[0] the trace id or the series).
** A series that is a number takes the full plan: it comes from a column of
** numeric affinity (`JOIN n ON r.series = n.v`), and SQLite then compares
** the series as numbers ('5.0' = 5), where the index lookup, binding it
** to the TEXT column series, would compare the text '5' and miss '5.0';
** SQLite checks the constraint on every row of the full plan.  Statements
** are prepared for each call (a query for one label calls it once).  On
** error the cursor is at EOF.
*/
static int srFilter(sqlite3_vtab_cursor *cur, int idxNum, const char *idxStr,
                    int argc, sqlite3_value **argv){
  SrCursor *pCur = (SrCursor*)cur;
  const char *zS = ((SrTab*)cur->pVtab)->zSchema;
  int rc;
  (void)idxStr;
  srReset(pCur);
  pCur->oneRun = 0;
  if( idxNum!=0 && argc<1 ) return SQLITE_ERROR;
  if( idxNum==SR_BY_SERIES && (sqlite3_value_type(argv[0])==SQLITE_INTEGER
                            || sqlite3_value_type(argv[0])==SQLITE_FLOAT) ){
    idxNum = 0;
  }
  if( idxNum==SR_BY_TRACE ){
    rc = srOneRun(pCur, zS, argv[0]);
  }else{
    if( idxNum==SR_BY_SERIES ){
      rc = srPrepare(pCur, sqlite3_mprintf("SELECT series, trace_id FROM \"%w\".profsum_trace"
                                           " WHERE series = ?1 ORDER BY imported_at, trace_id", zS),
                     &pCur->pScan);
      if( rc==SQLITE_OK ) rc = sqlite3_bind_value(pCur->pScan, 1, argv[0]);
    }else{
      rc = srPrepare(pCur, sqlite3_mprintf("SELECT series, trace_id FROM \"%w\".profsum_trace"
                                           " WHERE series IS NOT NULL ORDER BY series, imported_at, trace_id",
                                           zS), &pCur->pScan);
    }
    if( rc==SQLITE_OK ){
      rc = srPrepare(pCur, sqlite3_mprintf("SELECT count(*) FROM \"%w\".profsum_trace WHERE series = ?1", zS),
                     &pCur->pCount);
    }
    if( rc==SQLITE_OK ) rc = srStep(pCur);
  }
  if( rc ){
    srFail(pCur, rc);
    srReset(pCur);
  }
  return rc;
}

/* xNext. */
static int srNext(sqlite3_vtab_cursor *cur){
  SrCursor *pCur = (SrCursor*)cur;
  int rc = srStep(pCur);
  if( rc ){
    srFail(pCur, rc);
    pCur->eof = 1;
  }
  return rc;
}

/* xEof. */
static int srEof(sqlite3_vtab_cursor *cur){
  return ((SrCursor*)cur)->eof;
}

/* xRowid: the trace id (unique among the rows). */
static int srRowid(sqlite3_vtab_cursor *cur, sqlite_int64 *pRowid){
  *pRowid = ((SrCursor*)cur)->iTrace;
  return SQLITE_OK;
}

/* xColumn (see the schema at the top of the file). */
static int srColumn(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i){
  SrCursor *pCur = (SrCursor*)cur;
  switch( i ){
    case SR_SERIES:    sqlite3_result_value(ctx, pCur->pSeries); break;
    case SR_TRACE_ID:  sqlite3_result_int64(ctx, pCur->iTrace); break;
    case SR_RUN_INDEX: sqlite3_result_int64(ctx, pCur->iRun); break;
    case SR_RUNS_BACK: sqlite3_result_int64(ctx, pCur->nRuns - pCur->iRun + 1); break;
    default:           if( pCur->hasPrev ) sqlite3_result_int64(ctx, pCur->iPrev); break;
  }
  return SQLITE_OK;
}

static sqlite3_module srModule = {
  /* iVersion    */ 0,
  /* xCreate     */ srCreate,
  /* xConnect    */ srConnect,
  /* xBestIndex  */ srBestIndex,
  /* xDisconnect */ srDisconnect,
  /* xDestroy    */ srDisconnect,
  /* xOpen       */ srOpen,
  /* xClose      */ srClose,
  /* xFilter     */ srFilter,
  /* xNext       */ srNext,
  /* xEof        */ srEof,
  /* xColumn     */ srColumn,
  /* xRowid      */ srRowid,
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

/* See history_int.h. */
int profsumRegisterSeriesRuns(sqlite3 *db, char **pzErr){
  int rc = sqlite3_create_module(db, "profsum_series_runs", &srModule, 0);
  if( rc!=SQLITE_OK && pzErr && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("profsum: cannot register profsum_series_runs (%s)", sqlite3_errstr(rc));
  }
  return rc;
}
