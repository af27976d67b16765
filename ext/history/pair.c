/*
** pair.c — a before/after pair of imported traces as the SQL functions of
** the history layer take it: the two arguments resolved (a label or a
** trace id each), both documents built with each trace's own stored knobs,
** the §4.2 record of the pair; the argument checks and error reporting
** these functions share; profsum_compare_json; and the registration of the
** layer's functions.
**
**   SELECT profsum_compare_json('baseline', 'candidate');          -- tools-spec §3
**   SELECT profsum_compare_json(1, 2, 5);                           -- top_k 5
**   SELECT profsum_compare_json('a', 'b', NULL, '{"schema": "h"}'); -- traces of attached h
**
** Semantics: docs/spec/tools.md §3.  The comparison itself is compare.c's;
** its JSON is byte-exact Python json.dumps(indent=2, sort_keys=True)
** (jsontree.c).
*/
#include "profsum_int.h"
#include "history_int.h"
#include "compare.h"
#include "jsontree.h"
#include "summary_doc.h"
#include "sqlcall.h"
#include "pycompat.h"

/* See history_int.h. */
char *profsumHistDbErr(sqlite3 *db){ return sqlite3_mprintf("%s", sqlite3_errmsg(db)); }

/* See history_int.h. */
int profsumHistStmtFail(sqlite3 *db, int rc, char **pzErr){
  int x = sqlite3_extended_errcode(db);
  if( (x & 0xff)==SQLITE_BUSY ) return x;
  if( rc==SQLITE_NOMEM ) return rc;
  if( *pzErr==0 ) *pzErr = profsumHistDbErr(db);
  return rc==SQLITE_OK || rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc;
}

/* True when the last call on db failed because the database was busy
** (locked by another connection, or a stale WAL snapshot). */
static int busyNow(sqlite3 *db){
  return (sqlite3_extended_errcode(db) & 0xff)==SQLITE_BUSY;
}

/* Message of a read that failed because the database was busy. */
static char *busyMsg(void){
  return sqlite3_mprintf("the database is busy (another connection is writing it); "
                         "set a busy timeout (sqlite3_busy_timeout, .timeout) or retry");
}

/* See history_int.h. */
int profsumHistResolvePair(sqlite3 *db, const char *zSchema, sqlite3_value *vB, sqlite3_value *vA,
                           sqlite3_int64 *pB, sqlite3_int64 *pA, char **pzErr){
  char *zE = 0;
  int rc = profsumResolveTrace(db, zSchema, vB, pB, &zE);
  if( rc==SQLITE_OK ){
    rc = profsumResolveTrace(db, zSchema, vA, pA, &zE);
    if( rc && zE && !busyNow(db) ){ *pzErr = sqlite3_mprintf("after: %s", zE); }
  }else if( zE && !busyNow(db) ){
    *pzErr = sqlite3_mprintf("before: %s", zE);
  }
  sqlite3_free(zE);
  if( rc && busyNow(db) ){
    *pzErr = busyMsg();
    return SQLITE_BUSY;
  }
  if( rc ) return rc;
  if( *pB==*pA ){
    *pzErr = sqlite3_mprintf("before and after are the same trace (id %lld)", (long long)*pB);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Build the document of trace id with its stored knobs; zSide names it in
** messages. */
static int buildDoc(sqlite3 *db, const char *zSchema, sqlite3_int64 id, const char *zSide,
                    ProfsumDoc **ppDoc, char **pzErr){
  ProfsumKnobs k;
  char *zE = 0;
  int rc = profsumTraceKnobs(db, zSchema, id, &k, &zE);
  if( rc==SQLITE_OK ) rc = profsumDocBuild(db, zSchema, id, &k, ppDoc, &zE);
  if( rc && busyNow(db) ){
    sqlite3_free(zE);
    *pzErr = busyMsg();
    return SQLITE_BUSY;
  }
  if( rc && zE ) *pzErr = sqlite3_mprintf("%s: %s", zSide, zE);
  sqlite3_free(zE);
  return rc;
}

/* The documents of a resolved pair.  On error both are 0. */
static int buildPair(sqlite3 *db, const char *zSchema, sqlite3_int64 idB, sqlite3_int64 idA,
                     ProfsumDoc **ppB, ProfsumDoc **ppA, char **pzErr){
  int rc = buildDoc(db, zSchema, idB, "before", ppB, pzErr);
  if( rc==SQLITE_OK ) rc = buildDoc(db, zSchema, idA, "after", ppA, pzErr);
  if( rc ){
    profsumDocFree(*ppB); *ppB = 0;
    profsumDocFree(*ppA); *ppA = 0;
  }
  return rc;
}

/* See history_int.h. */
void profsumHistReportErr(sqlite3_context *ctx, const char *zFunc, int rc, const char *zErr){
  if( rc==SQLITE_NOMEM && zErr==0 ){ sqlite3_result_error_nomem(ctx); return; }
  profsumCtxErr(ctx, "%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
  if( rc!=SQLITE_ERROR && rc!=SQLITE_OK ) sqlite3_result_error_code(ctx, rc);
}

/* A top_k argument: NULL → default, else any integer, a Python slice
** bound (profsumTopKArg).  Returns 0 on success, 1 after reporting the
** error. */
static int topKArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v, int *pTopK){
  sqlite3_int64 k = PROFSUM_COMPARE_TOP_K;
  *pTopK = PROFSUM_COMPARE_TOP_K;
  if( v==0 ) return 0;
  if( profsumTopKArg(ctx, zFunc, v, &k) ) return 1;
  *pTopK = (int)k;
  return 0;
}

/* ------------------------------------------------------------------ */
/* profsum_compare_json(before, after [, top_k])                       */
/* ------------------------------------------------------------------ */

/* profsum_compare_json(before, after [, top_k [, options_json]]): the §3
** comparison (indent 2) of the two traces' documents, each built with its
** own stored knobs.  Reads tables only: of main, or of the attached database
** options_json names ({"schema": "h"}). */
static void compareJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_compare_json";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 idB = 0, idA = 0;
  ProfsumDoc *pB = 0, *pA = 0;
  JNode *cmp;
  char *zErr = 0, *z, *zSchema = 0;
  int topK, rc;
  if( topKArg(ctx, FN, argc>2 ? argv[2] : 0, &topK) ) return;
  rc = argc>3 && sqlite3_value_type(argv[3])!=SQLITE_NULL
       ? profsumSchemaOption(db, (const char*)sqlite3_value_text(argv[3]), 0, 0, &zSchema, &zErr)
       : SQLITE_OK;
  if( rc==SQLITE_OK ) rc = profsumHistResolvePair(db, zSchema ? zSchema : HIST_SCHEMA, argv[0], argv[1], &idB, &idA, &zErr);
  if( rc==SQLITE_OK ) rc = buildPair(db, zSchema ? zSchema : HIST_SCHEMA, idB, idA, &pB, &pA, &zErr);
  if( rc==SQLITE_OK ) profsumHistWarnSources(db, zSchema ? zSchema : HIST_SCHEMA, idB, idA, FN);
  sqlite3_free(zSchema);
  if( rc ){ profsumHistReportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); return; }
  cmp = profsumCompareDocs(profsumDocRoot(pB), profsumDocRoot(pA), topK);
  z = cmp ? jDump(cmp) : 0;
  jFree(cmp);
  profsumDocFree(pB);
  profsumDocFree(pA);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* See history_int.h. */
int profsumHistComputeRecord(sqlite3 *db, sqlite3_value *vB, sqlite3_value *vA,
                             const char *zLabel, const ProfsumThresholds *pT, int topK,
                             sqlite3_int64 *pB, sqlite3_int64 *pA, JNode **ppRecord,
                             ProfsumDoc **ppDocB, ProfsumDoc **ppDocA, char **pzErr){
  ProfsumDoc *dB = 0, *dA = 0;
  JNode *as, *rec;
  char zNow[40];
  int rc = profsumHistResolvePair(db, HIST_SCHEMA, vB, vA, pB, pA, pzErr);
  if( rc==SQLITE_OK ) rc = buildPair(db, HIST_SCHEMA, *pB, *pA, &dB, &dA, pzErr);
  if( rc ) return rc;
  as = profsumAssess(profsumDocRoot(dB), profsumDocRoot(dA), pT, topK);
  profsumNowIso(zNow, sizeof(zNow));
  rec = profsumMakeRecord(profsumDocRoot(dB), profsumDocRoot(dA), as, zLabel, zNow);
  if( rec==0 ){
    profsumDocFree(dB); profsumDocFree(dA);
    return SQLITE_NOMEM;
  }
  *ppRecord = rec;
  if( ppDocB ) *ppDocB = dB; else profsumDocFree(dB);
  if( ppDocA ) *ppDocA = dA; else profsumDocFree(dA);
  return SQLITE_OK;
}

/* See history_int.h. */
const char *profsumHistPathArg(sqlite3_context *ctx, const char *zFunc, const char *zWhat,
                               sqlite3_value *v){
  const char *z = sqlite3_value_type(v)==SQLITE_TEXT ? (const char*)sqlite3_value_text(v) : 0;
  if( z==0 || z[0]==0 ){
    profsumCtxErr(ctx, "%s: %s must be a non-empty path (text)", zFunc, zWhat);
    return 0;
  }
  if( profsumValueHasNul(v) ){
    profsumCtxErr(ctx, "%s: %s '%s': path contains a NUL byte", zFunc, zWhat, z);
    return 0;
  }
  return z;
}

/* ================================================================== */
/* Registration                                                        */
/* ================================================================== */

/* See history_int.h. */
int profsumHistRegister(sqlite3 *db, const ProfsumHistFunc *a, int n, char **pzErr){
  int i, rc = SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<n; i++){
    rc = profsumCreateFunctions(db, a[i].zName, a[i].nArg, a[i].nArg, a[i].flags, a[i].xFunc);
    if( rc && pzErr ){
      *pzErr = sqlite3_mprintf("profsum: registering %s/%d failed: %s", a[i].zName,
                               a[i].nArg, sqlite3_errstr(rc));
    }
  }
  return rc;
}

/* See compare.h. */
int profsumRegisterCompare(sqlite3 *db, char **pzErr){
  /* A reader of tables only, usable anywhere; not DETERMINISTIC (the
  ** tables change).  The writers (history.c, bundle.c) are DIRECTONLY. */
  static const ProfsumHistFunc aFunc[] = {
    {"profsum_compare_json", 2, SQLITE_UTF8|PROFSUM_FN_READS, compareJsonFunc},
    {"profsum_compare_json", 3, SQLITE_UTF8|PROFSUM_FN_READS, compareJsonFunc},
    {"profsum_compare_json", 4, SQLITE_UTF8|PROFSUM_FN_READS, compareJsonFunc},
  };
  int rc = profsumHistRegister(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), pzErr);
  if( rc==SQLITE_OK ) rc = profsumRegisterHistory(db, pzErr);
  if( rc==SQLITE_OK ) rc = profsumRegisterBundle(db, pzErr);
  if( rc==SQLITE_OK ) rc = profsumRegisterCompareMd(db, pzErr);
  return rc;
}
