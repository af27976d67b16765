/*
** vtabkit.c — the shared bodies of profsum's table functions (vtabkit.h).
*/
#include "profsum_int.h"
#include "vtabkit.h"

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

/* See vtabkit.h. */
int profsumVtabBestIndexArg(sqlite3_index_info *pInfo, int iCol, double costArg,
                            double costNone, sqlite3_int64 nRows){
  int i, iArg = -1, bUnusable = 0;
  for(i=0; i<pInfo->nConstraint; i++){
    const struct sqlite3_index_constraint *pC = &pInfo->aConstraint[i];
    if( pC->iColumn!=iCol || pC->op!=SQLITE_INDEX_CONSTRAINT_EQ ) continue;
    if( !pC->usable ){ bUnusable = 1; continue; }
    iArg = i;
    break;
  }
  if( iArg<0 && bUnusable ) return SQLITE_CONSTRAINT;
  if( iArg>=0 ){
    pInfo->aConstraintUsage[iArg].argvIndex = 1;
    pInfo->aConstraintUsage[iArg].omit = 1;
  }
  pInfo->idxNum = iArg>=0;
  pInfo->estimatedCost = iArg>=0 ? costArg : costNone;
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
