/*
** insights.c — the collector of insights.h: hands each reader call to the
** collectors of insights_int.h in turn, and writes and reports them in a
** fixed order (device limits first: the memory views read them).
*/
#include "insights_int.h"

#include <string.h>

struct ProfsumInsights {
  InsXla *pXla;
  InsMem *pMem;
  InsEnv *pEnv;
  InsSteps *pSteps;
};

/* See insights.h. */
int profsumInsNew(ProfsumInsights **pp){
  ProfsumInsights *p = sqlite3_malloc64(sizeof(*p));
  int rc;
  *pp = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  rc = insXlaNew(&p->pXla);
  if( rc==SQLITE_OK ) rc = insMemNew(&p->pMem);
  if( rc==SQLITE_OK ) rc = insEnvNew(&p->pEnv);
  if( rc==SQLITE_OK ) rc = insStepsNew(&p->pSteps);
  if( rc ){ profsumInsFree(p); return rc; }
  *pp = p;
  return SQLITE_OK;
}

/* See insights.h. */
void profsumInsFree(ProfsumInsights *p){
  if( p==0 ) return;
  insXlaFree(p->pXla);
  insMemFree(p->pMem);
  insEnvFree(p->pEnv);
  insStepsFree(p->pSteps);
  sqlite3_free(p);
}

/* See insights.h. */
void profsumInsDiagAll(ProfsumInsights *p){
  insXlaDiagAll(p->pXla);
  insMemDiagAll(p->pMem);
}

/* See insights.h. */
int profsumInsXpPlane(ProfsumInsights *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  int rc = insXlaXpPlane(p->pXla, pXp, pl);
  if( rc==SQLITE_OK ) rc = insMemXpPlane(p->pMem, pXp, pl);
  if( rc==SQLITE_OK ) rc = insEnvXpPlane(p->pEnv, pXp, pl);
  return rc;
}

/* See insights.h. */
int profsumInsXpEvent(ProfsumInsights *p, ProfsumXp *pXp, const ProfsumXpEvent *ev,
                      ProfsumInsXpOp *aOp, int *pnOp){
  int rc = insXlaXpEvent(p->pXla, pXp, ev, aOp, pnOp);
  if( rc==SQLITE_OK ) rc = insMemXpEvent(p->pMem, pXp, ev);
  return rc;
}

/* See insights.h. */
int profsumInsXpApply(ProfsumInsights *p, const ProfsumInsXpOp *pOp, profsum_ps s, int64_t dur){
  return insXlaXpApply(p->pXla, pOp, s, dur);
}

/* See insights.h. */
int profsumInsJsonEvent(ProfsumInsights *p, const ProfsumEvent *ev, int32_t iKey){
  int rc = insXlaJsonEvent(p->pXla, ev, iKey);
  if( rc==SQLITE_OK ) rc = insMemJsonEvent(p->pMem, ev);
  if( rc==SQLITE_OK ) rc = insStepsJsonEvent(p->pSteps, ev);
  return rc;
}

/* See insights.h. */
int profsumInsJsonTop(ProfsumInsights *p, const char *zKey, const char *zVal, int nVal){
  int rc = insEnvJsonTop(p->pEnv, zKey, zVal, nVal);
  if( rc==SQLITE_OK ) rc = insMemJsonTop(p->pMem, zKey, zVal, nVal);
  return rc;
}

/* See insights.h. */
int profsumInsWrite(ProfsumInsights *p, sqlite3 *db, const char *zSchema,
                    sqlite3_int64 traceId, ProfsumStepSpan *aSpan, int64_t nSpan,
                    const char *zDevicePeaks, const char *zFunc, char **pzErr){
  int64_t i, nRow = 0;
  int rc = insXlaWrite(p->pXla, db, zSchema, traceId, aSpan, nSpan, zDevicePeaks, zFunc, pzErr);
  /* the memory figures take the spans that are rows only (the write above
  ** may have reordered them): those first */
  for(i=0; i<nSpan; i++){
    if( aSpan[i].hostOnly ) continue;
    if( i!=nRow ){ ProfsumStepSpan x = aSpan[nRow]; aSpan[nRow] = aSpan[i]; aSpan[i] = x; }
    nRow++;
  }
  /* a trace without step spans (PyTorch's): its ProfilerStep#N ranges */
  if( nRow==0 ) aSpan = insStepsSpans(p->pSteps, &nRow);
  if( rc==SQLITE_OK ) rc = insMemWrite(p->pMem, db, zSchema, traceId, aSpan, nRow, zFunc, pzErr);
  if( rc==SQLITE_OK ) rc = insEnvWrite(p->pEnv, db, zSchema, traceId, zFunc, pzErr);
  return rc;
}

/* See insights.h. */
int profsumInsReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  int rc = insXlaReportMd(db, zSchema, traceId, pOut);
  if( rc==SQLITE_OK ) rc = insMemReportMd(db, zSchema, traceId, pOut);
  return rc;
}

/* See insights.h. */
int profsumInsReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  int rc = insXlaReportHtml(db, zSchema, traceId, pOut);
  if( rc==SQLITE_OK ) rc = insMemReportHtml(db, zSchema, traceId, pOut);
  return rc;
}
