/*
** insights_diag.c — the diagnostics of the import's insight collectors
** (InsDiag, insights_int.h): the first INS_DIAG_KEEP of each kind kept,
** the others counted, or every one with store_diagnostics 'all'; written
** to profsum_agg_diagnostic by each collector's write.
*/
#include "insights_int.h"

#include <string.h>

/* The slot of kind zKind in d->aKind (added when new), 0 when the table
** is full (more than 16 kinds: never, a collector has fewer). */
static InsDiagKind *diagKind(InsDiag *d, const char *zKind){
  int i;
  for(i=0; i<d->nKind; i++) if( strcmp(d->aKind[i].zKind, zKind)==0 ) return &d->aKind[i];
  if( d->nKind>=(int)(sizeof(d->aKind)/sizeof(d->aKind[0])) ) return 0;
  d->aKind[d->nKind].zKind = zKind;
  d->aKind[d->nKind].n = 0;
  return &d->aKind[d->nKind++];
}

/* See insights_int.h. */
void insDiagOrder(InsDiag *d, const char *const *azKind, int nKind){
  int i;
  for(i=0; i<nKind; i++) diagKind(d, azKind[i]);
}

/* See insights_int.h. */
int insDiagWanted(InsDiag *d, const char *zKind){
  InsDiagKind *k = diagKind(d, zKind);
  return k && (d->all || k->n<INS_DIAG_KEEP);
}

/* See insights_int.h. */
int insDiagCount(InsDiag *d, const char *zKind){
  InsDiagKind *k = diagKind(d, zKind);
  if( k ) k->n++;
  return SQLITE_OK;
}

/* See insights_int.h. */
int insDiagAdd(InsDiag *d, int64_t idx, int64_t off, const char *zKind, char *zDetail){
  InsDiagKind *k = diagKind(d, zKind);
  if( zDetail==0 ) return SQLITE_NOMEM;
  if( k==0 || (k->n++>=INS_DIAG_KEEP && !d->all) ){ sqlite3_free(zDetail); return SQLITE_OK; }
  if( d->nRow>=d->nRowAlloc ){
    int64_t nNew = d->nRowAlloc ? d->nRowAlloc*2 : 16;
    InsDiagRow *a = sqlite3_realloc64(d->aRow, sizeof(InsDiagRow)*(sqlite3_uint64)nNew);
    if( a==0 ){ sqlite3_free(zDetail); return SQLITE_NOMEM; }
    d->aRow = a; d->nRowAlloc = nNew;
  }
  d->aRow[d->nRow].idx = idx;
  d->aRow[d->nRow].off = off;
  d->aRow[d->nRow].zKind = zKind;
  d->aRow[d->nRow].zDetail = zDetail;
  d->nRow++;
  return SQLITE_OK;
}

/* Step insert p, then reset it: SQLITE_OK or the step's error code. */
static int diagStep(sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  sqlite3_reset(p);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* See insights_int.h. */
int insDiagWrite(InsDiag *d, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId){
  sqlite3_stmt *p = 0;
  char *zSql;
  int64_t i;
  int k, rc;
  if( d->nRow==0 ) return SQLITE_OK;      /* a kind counted has a row */
  zSql = sqlite3_mprintf("INSERT INTO \"%w\".profsum_agg_diagnostic"
                         "(trace_id, idx, byte_offset, kind, detail) VALUES(?1,?2,?3,?4,?5)", zSchema);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  for(i=0; rc==SQLITE_OK && i<d->nRow; i++){
    InsDiagRow *r = &d->aRow[i];
    sqlite3_bind_int64(p, 1, traceId);
    if( r->idx>=0 ) sqlite3_bind_int64(p, 2, r->idx); else sqlite3_bind_null(p, 2);
    if( r->off>=0 ) sqlite3_bind_int64(p, 3, r->off); else sqlite3_bind_null(p, 3);
    sqlite3_bind_text(p, 4, r->zKind, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 5, r->zDetail, -1, SQLITE_STATIC);
    rc = diagStep(p);
  }
  for(k=0; rc==SQLITE_OK && k<d->nKind; k++){
    char z[200];
    if( d->all || d->aKind[k].n<=INS_DIAG_KEEP ) continue;
    sqlite3_snprintf(sizeof(z), z, "%s: %lld occurrences in all; only the first %d are stored "
                     "(the import option store_diagnostics 'all' stores them all)",
                     d->aKind[k].zKind, (long long)d->aKind[k].n, INS_DIAG_KEEP);
    sqlite3_bind_int64(p, 1, traceId);
    sqlite3_bind_null(p, 2);
    sqlite3_bind_null(p, 3);
    sqlite3_bind_text(p, 4, "suppressed", -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 5, z, -1, SQLITE_TRANSIENT);
    rc = diagStep(p);
  }
  sqlite3_finalize(p);
  return rc;
}

/* See insights_int.h. */
void insDiagFree(InsDiag *d){
  int64_t i;
  for(i=0; i<d->nRow; i++) sqlite3_free(d->aRow[i].zDetail);
  sqlite3_free(d->aRow);
  memset(d, 0, sizeof(*d));
}
