/*
** insights_int.h — the collectors behind insights.h.  Each collector has
** the same six entry points as the dispatcher (new, free, an XPlane plane,
** an XPlane event, a JSON entry, write) plus its report sections (InsXla
** also the second step of an XPlane event, insXlaXpApply):
**   InsXla  insights_xla.c  devices and their limits, FLOPs and bytes per
**                           HLO op and category, roofline, utilization
**   InsMem  insights_mem.c  memory allocations and their peak, kernels
**   InsEnv  insights_env.c  the capture's environment (versions, times):
**                           XPlane planes only, no events; its report
**                           section is written with InsXla's
**   InsSteps insights_torchsteps.c  PyTorch's ProfilerStep#N ranges, the
**                           memory rows' steps when the summary has none
**                           (JSON entries only; no write of its own)
** and the diagnostics they both keep (InsDiag, insights_diag.c).
** Not included outside insights*.c.
*/
#ifndef PROFSUM_INSIGHTS_INT_H
#define PROFSUM_INSIGHTS_INT_H

#include "insights.h"

/* ---------------------------------------------------------------------
** Diagnostics of a collector (insights_diag.c), stored in
** profsum_agg_diagnostic by its write: the first INS_DIAG_KEEP of each
** kind, then a 'suppressed' row with the kind's total, or every one of
** them with the import option store_diagnostics 'all' (all set), as the
** summary engine stores its own.  A zeroed InsDiag is an empty one. */
#define INS_DIAG_KEEP 5

typedef struct InsDiagRow {
  int64_t idx;            /* event ordinal, -1: none */
  int64_t off;            /* byte offset, -1: none */
  const char *zKind;      /* static */
  char *zDetail;          /* sqlite3_malloc'd */
} InsDiagRow;

typedef struct InsDiagKind { const char *zKind; int64_t n; } InsDiagKind;

typedef struct InsDiag {
  InsDiagRow *aRow; int64_t nRow, nRowAlloc;   /* the rows kept, in order */
  InsDiagKind aKind[16]; int nKind;            /* each kind's total, in the
                                               ** order met (or declared) */
  int all;                /* keep every one (store_diagnostics 'all') */
} InsDiag;

/* Declare the kinds azKind[0..nKind) (static strings) in that order before
** any is met: their 'suppressed' rows are written in this order, not in
** the order the kinds are first met. */
void insDiagOrder(InsDiag *d, const char *const *azKind, int nKind);
/* 1 when a diagnostic of kind zKind (a static string) would still be
** stored: the caller formats its detail and calls insDiagAdd; when 0, it
** calls insDiagCount instead. */
int insDiagWanted(InsDiag *d, const char *zKind);
/* Count one more diagnostic of kind zKind without storing it.  Always
** SQLITE_OK (a caller may return it). */
int insDiagCount(InsDiag *d, const char *zKind);
/* Add a diagnostic of kind zKind (a static string), entry idx and byte
** offset off (-1: none), detail zDetail (sqlite3_malloc'd, taken over,
** also on error; 0 means out of memory).  Beyond INS_DIAG_KEEP of a kind
** (unless d->all) only the count grows.  SQLITE_OK or SQLITE_NOMEM. */
int insDiagAdd(InsDiag *d, int64_t idx, int64_t off, const char *zKind, char *zDetail);
/* Insert the rows kept into "zSchema".profsum_agg_diagnostic for traceId,
** then a 'suppressed' row for each kind that had more than were kept.
** SQLITE_OK, or an error code: SQLITE_NOMEM, or another whose message is
** the connection's (sqlite3_errmsg).  No error text is set: the caller
** names the error as its write does. */
int insDiagWrite(InsDiag *d, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId);
/* Free what d holds and zero it. */
void insDiagFree(InsDiag *d);

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
/* A trace JSON's top-level member zKey (value text zVal[0..nVal)): of
** deviceProperties (PyTorch's GPUs), each object's totalGlobalMem becomes
** the memory_size of the device /device:GPU:<id>; other members, and
** values that are not JSON, are ignored.  SQLITE_OK or SQLITE_NOMEM. */
int insMemJsonTop(InsMem *p, const char *zKey, const char *zVal, int nVal);
int insMemWrite(InsMem *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                const ProfsumStepSpan *aSpan, int64_t nSpan, const char *zFunc, char **pzErr);
int insMemReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
int insMemReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);

typedef struct InsSteps InsSteps;
int insStepsNew(InsSteps **pp);
void insStepsFree(InsSteps *p);
/* JSON entry ev: kept when it is a complete event named ProfilerStep#<N>
** with a positive dur, not of category gpu_user_annotation (at most
** 1,000,000 of them).  SQLITE_OK or
** SQLITE_NOMEM. */
int insStepsJsonEvent(InsSteps *p, const ProfsumEvent *ev);
/* The ranges kept, in file order, as step spans (zDev 0), *pn of them;
** owned by p. */
ProfsumStepSpan *insStepsSpans(InsSteps *p, int64_t *pn);

typedef struct InsEnv InsEnv;
/* A new, empty collector in *pp.  SQLITE_OK or SQLITE_NOMEM. */
int insEnvNew(InsEnv **pp);
/* Free p and what it kept (0: a no-op). */
void insEnvFree(InsEnv *p);
/* Keep what plane pl of pXp states of the environment (see
** insights_env.c).  SQLITE_OK, SQLITE_NOMEM, or the decoder's error on
** reading a value (its message: profsumXpErrMsg(pXp)). */
int insEnvXpPlane(InsEnv *p, ProfsumXp *pXp, const ProfsumXpPlane *pl);
/* Keep what the top-level member zKey of a trace JSON states of the
** environment, its value the JSON text zVal (nVal bytes; see
** insights_env.c).  SQLITE_OK or SQLITE_NOMEM. */
int insEnvJsonTop(InsEnv *p, const char *zKey, const char *zVal, int nVal);
/* Insert its rows into "zSchema".profsum_agg_env for traceId.  SQLITE_OK,
** SQLITE_NOMEM, or another error code with *pzErr set (naming zFunc). */
int insEnvWrite(InsEnv *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                const char *zFunc, char **pzErr);

#endif /* PROFSUM_INSIGHTS_INT_H */
