/*
** sqlcall.c — the helpers of sqlcall.h.
*/
#include "profsum_int.h"
#include "sqlcall.h"
#include "jsontree.h"

/* See sqlcall.h. */
int profsumExecV(sqlite3 *db, const char *zFunc, int bNomemMsg, char **pzErr,
                 const char *zFmt, va_list ap){
  char *z = sqlite3_vmprintf(zFmt, ap);
  int rc;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, z, 0, 0, 0);
  if( rc && (bNomemMsg || rc!=SQLITE_NOMEM) && pzErr && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  }
  sqlite3_free(z);
  return rc;
}

/* See sqlcall.h. */
int profsumTopKClamp(sqlite3_int64 topK){
  if( topK>PROFSUM_TOPK_MAX ) return PROFSUM_TOPK_MAX;
  if( topK<PROFSUM_TOPK_MIN ) return PROFSUM_TOPK_MIN;
  return (int)topK;
}

/* See sqlcall.h. */
int profsumTopKLen(int n, sqlite3_int64 topK){
  if( n<=0 ) return 0;
  if( topK>=0 ) return topK<n ? (int)topK : n;
  return topK > -(sqlite3_int64)n ? n + (int)topK : 0;
}

/* See sqlcall.h. */
int profsumTopKArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v,
                   sqlite3_int64 *pTopK){
  if( sqlite3_value_type(v)==SQLITE_NULL ) return SQLITE_OK;
  if( sqlite3_value_numeric_type(v)!=SQLITE_INTEGER ){
    profsumCtxErr(ctx, "%s: top_k must be an integer", zFunc);
    return SQLITE_ERROR;
  }
  *pTopK = profsumTopKClamp(sqlite3_value_int64(v));
  return SQLITE_OK;
}

/* See sqlcall.h. */
int profsumCreateFunctions(sqlite3 *db, const char *zName, int nMin, int nMax, int flags,
                           void (*xFunc)(sqlite3_context*, int, sqlite3_value**)){
  int n, rc = SQLITE_OK;
  for(n=nMin; rc==SQLITE_OK && n<=nMax; n++){
    if( flags & PROFSUM_FN_READS ){
      rc = profsumCreateReader(db, zName, n, flags & ~PROFSUM_FN_READS, xFunc);
    }else{
      rc = sqlite3_create_function(db, zName, n, flags, 0, xFunc, 0, 0);
    }
  }
  return rc;
}

/* The function a reader thunk calls (its user data). */
typedef struct ReaderFn {
  void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
} ReaderFn;

/* The schema a reading call reads: the "schema" member of its options_json
** (always its last argument, when it is a JSON object), else "main";
** sqlite3_malloc'd, 0 when out of memory. */
static char *readerSchema(int argc, sqlite3_value **argv){
  const char *z = argc>0 && sqlite3_value_type(argv[argc-1])==SQLITE_TEXT
                  ? (const char*)sqlite3_value_text(argv[argc-1]) : 0;
  while( z && (*z==' ' || *z=='\t' || *z=='\n' || *z=='\r') ) z++;
  if( z && *z=='{' ){
    JNode *p = jParse(z, -1, 0);
    JNode *pS = p ? jGet(p, "schema") : 0;
    if( pS && pS->type==JT_STRING ){
      char *zS = sqlite3_mprintf("%s", pS->z);
      jFree(p);
      return zS;
    }
    jFree(p);
  }
  return sqlite3_mprintf("main");
}

/* A statement stepped to its row that reads schema zSchema of db, holding
** its read transaction until it is finalized; 0 when db is in a transaction
** (nothing needed) or the statement could not be made or stepped (no such
** schema, busy, out of memory: then each statement of the caller reads as
** it would have, and says what is wrong itself).  Only the schema the call
** reads is pinned: another attached database (in rollback-journal mode, one
** another process is writing) is neither waited for nor locked. */
static sqlite3_stmt *readerPin(sqlite3 *db, const char *zSchema){
  sqlite3_stmt *pPin = 0;
  char *zSql;
  if( zSchema==0 || !sqlite3_get_autocommit(db) ) return 0;
  zSql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master", zSchema);
  if( zSql==0 ) return 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pPin, 0)!=SQLITE_OK || sqlite3_step(pPin)!=SQLITE_ROW ){
    sqlite3_finalize(pPin);
    pPin = 0;
  }
  sqlite3_free(zSql);
  return pPin;
}

/* The registered function of profsumCreateReader: xFunc inside the pin. */
static void readerThunk(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const ReaderFn *p = (const ReaderFn*)sqlite3_user_data(ctx);
  char *zSchema = readerSchema(argc, argv);
  sqlite3_stmt *pPin = readerPin(sqlite3_context_db_handle(ctx), zSchema);
  sqlite3_free(zSchema);
  p->xFunc(ctx, argc, argv);
  sqlite3_finalize(pPin);
}

/* See sqlcall.h. */
int profsumCreateReader(sqlite3 *db, const char *zName, int nArg, int flags,
                        void (*xFunc)(sqlite3_context*, int, sqlite3_value**)){
  ReaderFn *p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  p->xFunc = xFunc;
  /* (on failure sqlite3_create_function_v2 calls the destructor) */
  return sqlite3_create_function_v2(db, zName, nArg, flags, p, readerThunk, 0, 0, sqlite3_free);
}
