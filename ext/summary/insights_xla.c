/*
** insights_xla.c — the InsXla collector of insights_int.h: devices and their limits, FLOPs and bytes per HLO op and category (roofline, utilization, op profile).
**
** Not written yet: collects nothing and writes nothing.
*/
#include "insights_int.h"

#include <string.h>

struct InsXla { int unused; };

/* A new collector.  SQLITE_OK or SQLITE_NOMEM. */
int insXlaNew(InsXla **pp){
  *pp = sqlite3_malloc64(sizeof(InsXla));
  if( *pp==0 ) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof(InsXla));
  return SQLITE_OK;
}

/* Free a collector (0 is a no-op). */
void insXlaFree(InsXla *p){ sqlite3_free(p); }

/* An XPlane plane (insights.h). */
int insXlaXpPlane(InsXla *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  (void)p; (void)pXp; (void)pl;
  return SQLITE_OK;
}

/* An XPlane event (insights.h). */
int insXlaXpEvent(InsXla *p, ProfsumXp *pXp, const ProfsumXpEvent *ev){
  (void)p; (void)pXp; (void)ev;
  return SQLITE_OK;
}

/* A JSON entry (insights.h). */
int insXlaJsonEvent(InsXla *p, const ProfsumEvent *ev){
  (void)p; (void)ev;
  return SQLITE_OK;
}

/* Write the collected rows (insights.h). */
int insXlaWrite(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, const char *zDevicePeaks,
                const char *zFunc, char **pzErr){
  (void)p; (void)db; (void)zSchema; (void)traceId; (void)zDevicePeaks; (void)zFunc; (void)pzErr;
  return SQLITE_OK;
}

/* Report sections, markdown (insights.h). */
int insXlaReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  (void)db; (void)zSchema; (void)traceId; (void)pOut;
  return SQLITE_OK;
}

/* Report sections, HTML (insights.h). */
int insXlaReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  (void)db; (void)zSchema; (void)traceId; (void)pOut;
  return SQLITE_OK;
}
