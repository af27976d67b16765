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
  pTab = sqlite3_malloc64(szTab);
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, szTab);
  *ppVtab = pTab;
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
