/*
** insights_int.h — the collectors behind insights.h.  Each collector has
** the same six entry points as the dispatcher (new, free, an XPlane plane,
** an XPlane event, a JSON entry, write) plus its report sections (InsXla
** also the second step of an XPlane event, insXlaXpApply):
**   InsXla  insights_xla.c  devices and their limits, FLOPs and bytes per
**                           HLO op and category, roofline, utilization
**   InsMem  insights_mem.c  memory allocations and their peak, kernels
** Not included outside insights*.c.
*/
#ifndef PROFSUM_INSIGHTS_INT_H
#define PROFSUM_INSIGHTS_INT_H

#include "insights.h"

typedef struct InsXla InsXla;
int insXlaNew(InsXla **pp);
void insXlaFree(InsXla *p);
void insXlaDiagAll(InsXla *p);
int insXlaXpPlane(InsXla *p, ProfsumXp *pXp, const ProfsumXpPlane *pl);
int insXlaXpEvent(InsXla *p, ProfsumXp *pXp, const ProfsumXpEvent *ev, ProfsumInsXpOp *aOp, int *pnOp);
int insXlaXpApply(InsXla *p, const ProfsumInsXpOp *pOp, profsum_ps s, int64_t dur);
int insXlaJsonEvent(InsXla *p, const ProfsumEvent *ev, int32_t iKey);
int insXlaWrite(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                ProfsumStepSpan *aSpan, int64_t nSpan,
                const char *zDevicePeaks, const char *zFunc, char **pzErr);
int insXlaReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
int insXlaReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);

typedef struct InsMem InsMem;
int insMemNew(InsMem **pp);
void insMemFree(InsMem *p);
void insMemDiagAll(InsMem *p);
int insMemXpPlane(InsMem *p, ProfsumXp *pXp, const ProfsumXpPlane *pl);
int insMemXpEvent(InsMem *p, ProfsumXp *pXp, const ProfsumXpEvent *ev);
int insMemJsonEvent(InsMem *p, const ProfsumEvent *ev);
int insMemWrite(InsMem *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                const ProfsumStepSpan *aSpan, int64_t nSpan, const char *zFunc, char **pzErr);
int insMemReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
int insMemReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);

#endif /* PROFSUM_INSIGHTS_INT_H */
