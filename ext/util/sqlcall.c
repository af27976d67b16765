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
    rc = sqlite3_create_function(db, zName, n, flags, 0, xFunc, 0, 0);
  }
  return rc;
}
