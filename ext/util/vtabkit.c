/*
** vtabkit.c — the shared bodies of profsum's table functions (vtabkit.h).
*/
#include "profsum_int.h"
#include "vtabkit.h"
#include "utf8rule.h"     /* profsumUtf8Scrub */

#include <string.h>

/* See vtabkit.h. */
int profsumVtabConnectFileReader(sqlite3 *db, const char *zSchema, size_t szTab,
                                 sqlite3_vtab **ppVtab){
  sqlite3_vtab *pTab;
  int rc = sqlite3_declare_vtab(db, zSchema);
  if( rc!=SQLITE_OK ) return rc;
  rc = sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  if( rc!=SQLITE_OK ) return rc;
  pTab = profsumMallocZero(szTab);
  if( pTab==0 ) return SQLITE_NOMEM;
  *ppVtab = pTab;
  return SQLITE_OK;
}

/* See vtabkit.h. */
int profsumVtabDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/* 1 when constraint i of pInfo compares with the BINARY collation. */
static int vtabBinary(sqlite3_index_info *pInfo, int i){
  const char *zColl = sqlite3_vtab_collation(pInfo, i);
  return zColl==0 || sqlite3_stricmp(zColl, "BINARY")==0;
}

/* See vtabkit.h. */
int profsumVtabInputArgs(sqlite3_index_info *pInfo, int iCol, int iArgv, int nMax,
                         int *pbPartial){
  int i, n = 0, bUnusable = 0, bBinary = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=iCol || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !pC->usable ) bUnusable = 1;
    else if( vtabBinary(pInfo, i) ) bBinary = 1;
  }
  for(i=0; i<pInfo->nConstraint && n<nMax; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=iCol || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ || !pC->usable ) continue;
    if( bBinary && !vtabBinary(pInfo, i) ) continue;
    pInfo->aConstraintUsage[i].argvIndex = iArgv + n + 1;
    pInfo->aConstraintUsage[i].omit = 1;
    n++;
  }
  if( n>0 && bUnusable ) *pbPartial = 1;
  return n==0 && bUnusable ? -1 : n;
}

/* See vtabkit.h. */
int profsumVtabArgsAgree(sqlite3_value **argv, int n){
  int i, t = sqlite3_value_type(argv[0]);
  for(i=1; i<n; i++){
    sqlite3_value *v = argv[i];
    if( t==SQLITE_NULL || sqlite3_value_type(v)!=t ) return 0;
    if( t==SQLITE_INTEGER ){
      if( sqlite3_value_int64(v)!=sqlite3_value_int64(argv[0]) ) return 0;
    }else if( t==SQLITE_FLOAT ){
      if( sqlite3_value_double(v)!=sqlite3_value_double(argv[0]) ) return 0;
    }else{
      /* TEXT (as UTF-8) or BLOB: the bytes */
      const void *a = t==SQLITE_TEXT ? (const void*)sqlite3_value_text(argv[0]) : sqlite3_value_blob(argv[0]);
      const void *b = t==SQLITE_TEXT ? (const void*)sqlite3_value_text(v) : sqlite3_value_blob(v);
      int na = sqlite3_value_bytes(argv[0]), nb = sqlite3_value_bytes(v);
      if( na!=nb ) return 0;
      if( na>0 && (a==0 || b==0) ) return -1;
      if( na>0 && memcmp(a, b, (size_t)na)!=0 ) return 0;
    }
  }
  return 1;
}

/* See vtabkit.h. */
int profsumVtabBestIndexArg(sqlite3_index_info *pInfo, int iCol, double costArg,
                            double costNone, sqlite3_int64 nRows){
  int bPartial = 0;
  int n = profsumVtabInputArgs(pInfo, iCol, 0, 8, &bPartial);
  if( n<0 ) return SQLITE_CONSTRAINT;
  pInfo->idxNum = n>0;
  pInfo->estimatedCost = n>0 ? costArg*(bPartial ? PROFSUM_VTAB_PARTIAL_COST : 1.0) : costNone;
  pInfo->estimatedRows = nRows;
  return SQLITE_OK;
}

/* See vtabkit.h. */
int profsumVtabPathArg(sqlite3_vtab *pVtab, const char *zFunc, sqlite3_value *pArg,
                       char **pzPath){
  const char *z;
  int n;
  *pzPath = 0;
  if( sqlite3_value_type(pArg)==SQLITE_NULL ) return SQLITE_OK;
  z = (const char*)sqlite3_value_text(pArg);
  if( z==0 ) return SQLITE_NOMEM;
  n = sqlite3_value_bytes(pArg);
  *pzPath = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if( *pzPath==0 ) return SQLITE_NOMEM;
  memcpy(*pzPath, z, (size_t)n + 1);
  if( (int)strlen(*pzPath)!=n ){
    profsumVtabErr(pVtab, "%s: '%q': path contains a NUL byte", zFunc, *pzPath);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* See vtabkit.h. */
int profsumRowCursorOpen(size_t szCur, void (*xReset)(ProfsumRowCursor*),
                         sqlite3_vtab_cursor **ppCur){
  ProfsumRowCursor *pCur = profsumMallocZero(szCur);
  if( pCur==0 ) return SQLITE_NOMEM;
  pCur->xReset = xReset;
  *ppCur = &pCur->base;
  return SQLITE_OK;
}

/* See vtabkit.h. */
int profsumRowCursorClose(sqlite3_vtab_cursor *cur){
  ProfsumRowCursor *pCur = (ProfsumRowCursor*)cur;
  pCur->xReset(pCur);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* See vtabkit.h. */
int profsumRowCursorNext(sqlite3_vtab_cursor *cur){
  ((ProfsumRowCursor*)cur)->iRow++;
  return SQLITE_OK;
}

/* See vtabkit.h. */
int profsumRowCursorEof(sqlite3_vtab_cursor *cur){
  const ProfsumRowCursor *pCur = (const ProfsumRowCursor*)cur;
  return pCur->iRow >= pCur->nRow;
}

/* See vtabkit.h. */
int profsumRowCursorRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid){
  *pRowid = ((ProfsumRowCursor*)cur)->iRow;
  return SQLITE_OK;
}

/* See vtabkit.h. */
void profsumResultTextLimited(sqlite3_context *ctx, const char *z, int64_t n,
                              void (*xDel)(void*), char *(*xWhere)(void*), void *pWhereArg){
  int nLimit = sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);
  char *zW, *zMsg;
  if( n<=(int64_t)nLimit ){
    sqlite3_result_text64(ctx, z, (sqlite3_uint64)n, xDel, SQLITE_UTF8);
    return;
  }
  if( xDel!=SQLITE_STATIC && xDel!=SQLITE_TRANSIENT && xDel ) xDel((void*)z);
  zW = xWhere(pWhereArg);
  zMsg = zW ? profsumUtf8Scrub(sqlite3_mprintf("%s is %lld bytes, more than SQLite's limit on "
                                               "one value (%d bytes, SQLITE_LIMIT_LENGTH)",
                                               zW, (long long)n, nLimit)) : 0;
  sqlite3_free(zW);
  if( zMsg==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_error(ctx, zMsg, -1);
  sqlite3_free(zMsg);
  sqlite3_result_error_code(ctx, SQLITE_TOOBIG);
}
