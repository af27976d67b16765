/*
** exclusive.c — exclusive time (summary §2) of one track's events, the
** computation behind the exclusive_time() window function (declared in
** funcs.h; the SQL side is ext/sql/funcs_sql.c).
**
** Pure C: no SQL, no globals, no I/O.  Events are sorted by (ts asc, end
** desc, input order) and swept with a stack; an event's exclusive time is
** max(0, dur - the sum of its children's full durations).  The int64
** variant is exact; the double variant repeats the reference's float
** arithmetic step for step.
*/
#include "profsum_int.h"
#include "funcs.h"

#include <stdlib.h>

/* A sort key: the start, a second key sorted descending, and the input
** position as the stable tie-break.  The int64 variant's second key is the
** dur (with equal starts, end descending is dur descending, so no sum and
** no overflow is needed to sort); the double variant's is the end as the
** reference rounds it, ts + dur (its sort key (ts, -(ts + dur))). */
typedef struct ExclKey ExclKey;
struct ExclKey {
  union { int64_t i; double r; } ts, k2;
  int idx;
};

/* qsort comparator of the int64 keys: ts asc, dur desc, input order. */
static int exclKeyICmp(const void *pA, const void *pB){
  const ExclKey *a = pA, *b = pB;
  if( a->ts.i!=b->ts.i ) return a->ts.i<b->ts.i ? -1 : 1;
  if( a->k2.i!=b->k2.i ) return a->k2.i>b->k2.i ? -1 : 1;
  return (a->idx>b->idx) - (a->idx<b->idx);
}

/* qsort comparator of the double keys: ts asc, end desc, input order. */
static int exclKeyRCmp(const void *pA, const void *pB){
  const ExclKey *a = pA, *b = pB;
  if( a->ts.r!=b->ts.r ) return a->ts.r<b->ts.r ? -1 : 1;
  if( a->k2.r!=b->k2.r ) return a->k2.r>b->k2.r ? -1 : 1;
  return (a->idx>b->idx) - (a->idx<b->idx);
}

/* One variant's arrays: the events' starts and durs, their exclusive
** times (the output) and their child sums (set up by exclRun), each an
** array of the variant's number type. */
typedef struct ExclRun ExclRun;
struct ExclRun { const void *aTs, *aDur; void *aExcl, *aChild; };

/* One variant: szNum, the size of its numbers; xKey, event i's sort key
** (and its child sum set to 0); xCmp, the order of the keys; whether
** event k starts at or after event j's end (xStartsAfter), whether it ends
** after j's end (xEndsAfter); xFinish: event k is done, its exclusive time
** is written and its full dur added to the child sum of its parent (-1:
** none). */
typedef struct ExclOps ExclOps;
struct ExclOps {
  size_t szNum;
  void (*xKey)(ExclRun *x, int i, ExclKey *pKey);
  int (*xCmp)(const void *pA, const void *pB);
  int (*xStartsAfter)(const ExclRun *x, int k, int j);
  int (*xEndsAfter)(const ExclRun *x, int k, int j);
  void (*xFinish)(ExclRun *x, int k, int parent);
};

/* Finish the event on top of the stack aStack (*pnStack entries). */
static void exclPop(const ExclOps *pOps, ExclRun *x, int *aStack, int *pnStack){
  int k = aStack[--(*pnStack)];
  pOps->xFinish(x, k, *pnStack>0 ? aStack[*pnStack-1] : -1);
}

/* The exclusive times of the n events of x (§2): sorted by pOps->xCmp,
** then swept with a stack: before an event is pushed, every open event it
** starts at or after the end of is finished, then every one it ends after;
** the events left open at the end are finished last.  SQLITE_OK or
** SQLITE_NOMEM. */
static int exclRun(int n, const ExclOps *pOps, ExclRun *x){
  ExclKey *aKey;
  int *aStack;
  int i, nStack = 0;
  if( n<=0 ) return SQLITE_OK;
  aKey = sqlite3_malloc64((sizeof(ExclKey)+pOps->szNum+sizeof(int))*(sqlite3_uint64)n);
  if( aKey==0 ) return SQLITE_NOMEM;
  x->aChild = &aKey[n];
  aStack = (int*)((char*)x->aChild + pOps->szNum*(size_t)n);
  for(i=0; i<n; i++) pOps->xKey(x, i, &aKey[i]);
  qsort(aKey, n, sizeof(ExclKey), pOps->xCmp);
  for(i=0; i<n; i++){
    int k = aKey[i].idx;
    while( nStack>0 && pOps->xStartsAfter(x, k, aStack[nStack-1]) ) exclPop(pOps, x, aStack, &nStack);
    while( nStack>0 && pOps->xEndsAfter(x, k, aStack[nStack-1]) ) exclPop(pOps, x, aStack, &nStack);
    aStack[nStack++] = k;
  }
  while( nStack>0 ) exclPop(pOps, x, aStack, &nStack);
  sqlite3_free(aKey);
  return SQLITE_OK;
}

/* The int64 variant's xKey (ExclOps): its ts and dur. */
static void exclIKey(ExclRun *x, int i, ExclKey *pKey){
  pKey->ts.i = ((const int64_t*)x->aTs)[i];
  pKey->k2.i = ((const int64_t*)x->aDur)[i];
  pKey->idx = i;
  ((int64_t*)x->aChild)[i] = 0;
}

/* The int64 variant's xStartsAfter: exact, the end in 128 bits. */
static int exclIStartsAfter(const ExclRun *x, int k, int j){
  const int64_t *aTs = x->aTs, *aDur = x->aDur;
  return (__int128)aTs[k] >= (__int128)aTs[j] + aDur[j];
}

/* The int64 variant's xEndsAfter: exact, the ends in 128 bits. */
static int exclIEndsAfter(const ExclRun *x, int k, int j){
  const int64_t *aTs = x->aTs, *aDur = x->aDur;
  return (__int128)aTs[k] + aDur[k] > (__int128)aTs[j] + aDur[j];
}

/* (the int64 xFinish) Child sums saturate at INT64_MAX: once a child sum
** reaches dur the result is 0 anyway. */
static void exclIFinish(ExclRun *x, int k, int parent){
  int64_t *aChild = x->aChild;
  int64_t d = ((const int64_t*)x->aDur)[k], c = aChild[k];
  ((int64_t*)x->aExcl)[k] = c>=d ? 0 : d - c;
  if( parent>=0 && __builtin_add_overflow(aChild[parent], d, &aChild[parent]) ) aChild[parent] = INT64_MAX;
}

/* The int64 variant: exact. */
static const ExclOps exclInt64 = {sizeof(int64_t), exclIKey, exclKeyICmp, exclIStartsAfter, exclIEndsAfter,
                                  exclIFinish};

/* See funcs.h. */
int profsumExclusiveInt64(int n, const int64_t *aTs, const int64_t *aDur, int64_t *aExcl){
  ExclRun x = {aTs, aDur, aExcl, 0};
  return exclRun(n, &exclInt64, &x);
}

/* The double variant's xKey (ExclOps): its ts and its end, ts + dur. */
static void exclRKey(ExclRun *x, int i, ExclKey *pKey){
  const double *aTs = x->aTs, *aDur = x->aDur;
  pKey->ts.r = aTs[i];
  pKey->k2.r = aTs[i] + aDur[i];
  pKey->idx = i;
  ((double*)x->aChild)[i] = 0.0;
}

/* The double variant's xStartsAfter: ts >= the other's ts + dur. */
static int exclRStartsAfter(const ExclRun *x, int k, int j){
  const double *aTs = x->aTs, *aDur = x->aDur;
  return aTs[k] >= aTs[j] + aDur[j];
}

/* The double variant's xEndsAfter: ts + dur > the other's ts + dur. */
static int exclREndsAfter(const ExclRun *x, int k, int j){
  const double *aTs = x->aTs, *aDur = x->aDur;
  return aTs[k] + aDur[k] > aTs[j] + aDur[j];
}

/* (the double xFinish) max(0.0, dur - child) as Python's max() (a NaN
** difference gives 0.0), then the parent's child sum grows by the full
** dur. */
static void exclRFinish(ExclRun *x, int k, int parent){
  double *aChild = x->aChild;
  const double *aDur = x->aDur;
  double d = aDur[k] - aChild[k];
  ((double*)x->aExcl)[k] = d>0.0 ? d : 0.0;
  if( parent>=0 ) aChild[parent] += aDur[k];
}

/* The double variant: the reference's float arithmetic, step for step. */
static const ExclOps exclDouble = {sizeof(double), exclRKey, exclKeyRCmp, exclRStartsAfter, exclREndsAfter,
                                   exclRFinish};

/* See funcs.h. */
int profsumExclusiveDouble(int n, const double *aTs, const double *aDur, double *aExcl){
  ExclRun x = {aTs, aDur, aExcl, 0};
  return exclRun(n, &exclDouble, &x);
}
