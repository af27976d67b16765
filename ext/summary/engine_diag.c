/*
** engine_diag.c — stage A's diagnostics as stored by an import: the rows
** the readers kept (engine_read.c, capped per kind; a 'suppressed' row
** gives a cut kind's total) written to profsum_agg_diagnostic.
*/
#include "profsum_int.h"
#include "engine_int.h"

/* See engine_int.h. */
int profsumEngWriteDiag(Engine *e){
  sqlite3_stmt *pIns = 0;
  int64_t i;
  int rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_diagnostic"
                             "(trace_id, idx, byte_offset, kind, detail) VALUES(?1,?2,?3,?4,?5)");
  for(i=0; rc==SQLITE_OK && i<e->nDiag; i++){
    EngDiagRow *r = &e->aDiag[i];
    sqlite3_bind_int64(pIns, 1, e->traceId);
    if( r->idx>=0 ) sqlite3_bind_int64(pIns, 2, r->idx); else sqlite3_bind_null(pIns, 2);
    if( r->off>=0 ) sqlite3_bind_int64(pIns, 3, r->off); else sqlite3_bind_null(pIns, 3);
    sqlite3_bind_text(pIns, 4, r->zKind, -1, SQLITE_STATIC);
    sqlite3_bind_text(pIns, 5, r->zDetail, -1, SQLITE_STATIC);
    rc = profsumEngStep(e, pIns);
  }
  sqlite3_finalize(pIns);
  return rc;
}
