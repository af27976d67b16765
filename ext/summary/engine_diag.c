/*
** engine_diag.c — stage A's diagnostics as stored by an import, written to
** profsum_agg_diagnostic.  Compact by default: the first ENG_DIAG_KEEP of
** each kind, and a 'suppressed' row with the total of a kind that had
** more; with the import option store_diagnostics 'all' (Engine.diagAll)
** every one (the read pass kept what is to be stored: engDiag).
*/
#include "profsum_int.h"
#include "engine_int.h"

#include <string.h>

/* The index in e->aKind of zKind, or -1 (more kinds than it holds). */
static int diagKindIndex(const Engine *e, const char *zKind){
  int k;
  for(k=0; k<e->nKind; k++){
    if( e->aKind[k].zKind==zKind || strcmp(e->aKind[k].zKind, zKind)==0 ) return k;
  }
  return -1;
}

/* Insert one row (idx, off < 0: NULL).  SQLITE_OK or an error code. */
static int diagInsert(Engine *e, sqlite3_stmt *pIns, int64_t idx, int64_t off,
                      const char *zKind, const char *zDetail){
  sqlite3_bind_int64(pIns, 1, e->traceId);
  if( idx>=0 ) sqlite3_bind_int64(pIns, 2, idx); else sqlite3_bind_null(pIns, 2);
  if( off>=0 ) sqlite3_bind_int64(pIns, 3, off); else sqlite3_bind_null(pIns, 3);
  sqlite3_bind_text(pIns, 4, zKind, -1, SQLITE_STATIC);
  sqlite3_bind_text(pIns, 5, zDetail, -1, SQLITE_STATIC);
  return profsumEngStep(e, pIns);
}

/* See engine_int.h.  The rows go in in the order the reader met them (a
** kind's examples are its first ones in the file), then one 'suppressed'
** row per kind that had more than were written (none with diagAll). */
int profsumEngWriteDiag(Engine *e){
  sqlite3_stmt *pIns = 0;
  const ProfsumDiagList *L = &e->diag;
  int64_t aWritten[sizeof(e->aKind)/sizeof(e->aKind[0])];
  int64_t i;
  int k;
  int rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_diagnostic"
                             "(trace_id, idx, byte_offset, kind, detail) VALUES(?1,?2,?3,?4,?5)");
  memset(aWritten, 0, sizeof(aWritten));
  for(i=0; rc==SQLITE_OK && i<L->n; i++){
    const ProfsumDiagRec *r = &L->a[i];
    const char *zKind = profsumDiagListKind(L, r);
    k = diagKindIndex(e, zKind);
    if( k>=0 ) aWritten[k]++;
    rc = diagInsert(e, pIns, r->idx, r->off, zKind, profsumDiagListDetail(L, r));
  }
  for(k=0; rc==SQLITE_OK && k<e->nKind; k++){
    char z[200];
    if( e->aKind[k].n<=aWritten[k] ) continue;
    sqlite3_snprintf(sizeof(z), z, "%s: %lld occurrences in all; only the first %lld are stored "
                     "(profsum_diagnostics(path) lists them all)",
                     e->aKind[k].zKind, (long long)e->aKind[k].n, (long long)aWritten[k]);
    rc = diagInsert(e, pIns, -1, -1, "suppressed", z);
  }
  sqlite3_finalize(pIns);
  return rc;
}
