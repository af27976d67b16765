/*
** insights_mem.c — the InsMem collector of insights_int.h: memory allocations, their peak and holders, and GPU kernels (kernel_details).
**
** Not written yet: collects nothing and writes nothing.
*/
#include "insights_int.h"

#include <string.h>

struct InsMem { int unused; };

/* A new collector.  SQLITE_OK or SQLITE_NOMEM. */
int insMemNew(InsMem **pp){
  *pp = sqlite3_malloc64(sizeof(InsMem));
  if( *pp==0 ) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof(InsMem));
  return SQLITE_OK;
}

/* Free a collector (0 is a no-op). */
void insMemFree(InsMem *p){ sqlite3_free(p); }

/* An XPlane plane (insights.h). */
int insMemXpPlane(InsMem *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  (void)p; (void)pXp; (void)pl;
  return SQLITE_OK;
}

/* An XPlane event (insights.h). */
int insMemXpEvent(InsMem *p, ProfsumXp *pXp, const ProfsumXpEvent *ev){
  (void)p; (void)pXp; (void)ev;
  return SQLITE_OK;
}

/* A JSON entry (insights.h). */
int insMemJsonEvent(InsMem *p, const ProfsumEvent *ev){
  (void)p; (void)ev;
  return SQLITE_OK;
}

/* Write the collected rows (insights.h). */
int insMemWrite(InsMem *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                const char *zFunc, char **pzErr){
  (void)p; (void)db; (void)zSchema; (void)traceId; (void)zFunc; (void)pzErr;
  return SQLITE_OK;
}

/* Report sections, markdown (insights.h). */
int insMemReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  (void)db; (void)zSchema; (void)traceId; (void)pOut;
  return SQLITE_OK;
}

/* Report sections, HTML (insights.h). */
int insMemReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  (void)db; (void)zSchema; (void)traceId; (void)pOut;
  return SQLITE_OK;
}
