/*
** sqlcall.c — the helpers of sqlcall.h.
*/
#include "profsum_int.h"
#include "sqlcall.h"

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
int profsumTopKArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v,
                   sqlite3_int64 *pTopK){
  if( sqlite3_value_type(v)==SQLITE_NULL ) return SQLITE_OK;
  if( sqlite3_value_numeric_type(v)!=SQLITE_INTEGER || sqlite3_value_int64(v)<0 ){
    profsumCtxErr(ctx, "%s: top_k must be a non-negative integer", zFunc);
    return SQLITE_ERROR;
  }
  *pTopK = sqlite3_value_int64(v);
  if( *pTopK>1000000 ) *pTopK = 1000000;
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

/* A statement stepped to its row that reads every attached database of db
** but temp, holding their read transactions until it is finalized; 0 when
** db is in a transaction (nothing needed) or the statement could not be
** made (then each statement of the caller reads as it would have). */
static sqlite3_stmt *readerPin(sqlite3 *db){
  sqlite3_stmt *pList = 0, *pPin = 0;
  sqlite3_str *pSql;
  char *zSql;
  if( !sqlite3_get_autocommit(db) ) return 0;
  if( sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name<>'temp'",
                         -1, &pList, 0)!=SQLITE_OK ){
    sqlite3_finalize(pList);
    return 0;
  }
  pSql = sqlite3_str_new(db);
  sqlite3_str_appendall(pSql, "SELECT 0");
  while( sqlite3_step(pList)==SQLITE_ROW ){
    sqlite3_str_appendf(pSql, " + (SELECT count(*) FROM \"%w\".sqlite_master)",
                        (const char*)sqlite3_column_text(pList, 0));
  }
  sqlite3_finalize(pList);
  zSql = sqlite3_str_finish(pSql);
  if( zSql==0 ) return 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pPin, 0)!=SQLITE_OK || sqlite3_step(pPin)!=SQLITE_ROW ){
    sqlite3_finalize(pPin);      /* busy, out of memory, ...: read without the pin */
    pPin = 0;
  }
  sqlite3_free(zSql);
  return pPin;
}

/* The registered function of profsumCreateReader: xFunc inside the pin. */
static void readerThunk(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const ReaderFn *p = (const ReaderFn*)sqlite3_user_data(ctx);
  sqlite3_stmt *pPin = readerPin(sqlite3_context_db_handle(ctx));
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
