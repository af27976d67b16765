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

/* Sort key of the int64 variant.  With equal ts, end descending is dur
** descending, so no sum (and no overflow) is needed to sort. */
typedef struct ExclKeyI ExclKeyI;
struct ExclKeyI {
  int64_t ts;                   /* Start */
  int64_t dur;                  /* Duration (> 0) */
  int idx;                      /* Input position: the stable tie-break */
};

/* qsort comparator: ts asc, dur desc, input order. */
static int exclKeyICmp(const void *pA, const void *pB){
  const ExclKeyI *a = pA, *b = pB;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  if( a->dur!=b->dur ) return a->dur>b->dur ? -1 : 1;
  return (a->idx>b->idx) - (a->idx<b->idx);
}

/* Finalize the top of the int64 stack (see funcs.h).  Child sums saturate
** at INT64_MAX: once a child sum reaches dur the result is 0 anyway. */
static void exclPopI(int *aStack, int64_t *aChild, int *pnStack,
                     const int64_t *aDur, int64_t *aExcl){
  int k = aStack[--(*pnStack)];
  int64_t d = aDur[k], c = aChild[*pnStack];
  aExcl[k] = c>=d ? 0 : d - c;
  if( *pnStack>0 ){
    int64_t *pC = &aChild[*pnStack-1];
    if( __builtin_add_overflow(*pC, d, pC) ) *pC = INT64_MAX;
  }
}

/* See funcs.h. */
int profsumExclusiveInt64(int n, const int64_t *aTs, const int64_t *aDur,
                          int64_t *aExcl){
  ExclKeyI *aKey;
  int64_t *aChild;
  int *aStack;
  int i, nStack = 0;
  if( n<=0 ) return SQLITE_OK;
  aKey = sqlite3_malloc64((sizeof(ExclKeyI)+sizeof(int64_t)+sizeof(int))
                          *(sqlite3_uint64)n);
  if( aKey==0 ) return SQLITE_NOMEM;
  aChild = (int64_t*)&aKey[n];
  aStack = (int*)&aChild[n];
  for(i=0; i<n; i++){
    aKey[i].ts = aTs[i];
    aKey[i].dur = aDur[i];
    aKey[i].idx = i;
  }
  qsort(aKey, n, sizeof(ExclKeyI), exclKeyICmp);
  for(i=0; i<n; i++){
    int k = aKey[i].idx;
    __int128 s = aTs[k], e = (__int128)aTs[k] + aDur[k];
    while( nStack>0
        && s>=(__int128)aTs[aStack[nStack-1]] + aDur[aStack[nStack-1]] ){
      exclPopI(aStack, aChild, &nStack, aDur, aExcl);
    }
    while( nStack>0
        && e>(__int128)aTs[aStack[nStack-1]] + aDur[aStack[nStack-1]] ){
      exclPopI(aStack, aChild, &nStack, aDur, aExcl);
    }
    aStack[nStack] = k;
    aChild[nStack] = 0;
    nStack++;
  }
  while( nStack>0 ) exclPopI(aStack, aChild, &nStack, aDur, aExcl);
  sqlite3_free(aKey);
  return SQLITE_OK;
}

/* Sort key of the double variant: the reference's (ts, -(ts + dur)). */
typedef struct ExclKeyR ExclKeyR;
struct ExclKeyR {
  double ts;                    /* Start */
  double end;                   /* ts + dur, rounded as the reference */
  int idx;                      /* Input position: the stable tie-break */
};

/* qsort comparator: ts asc, end desc, input order. */
static int exclKeyRCmp(const void *pA, const void *pB){
  const ExclKeyR *a = pA, *b = pB;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  if( a->end!=b->end ) return a->end>b->end ? -1 : 1;
  return (a->idx>b->idx) - (a->idx<b->idx);
}

/* Finalize the top of the double stack: max(0.0, dur - child) as Python's
** max() (a NaN difference gives 0.0), then the parent's child sum grows by
** the full dur. */
static void exclPopR(int *aStack, double *aChild, int *pnStack,
                     const double *aDur, double *aExcl){
  int k = aStack[--(*pnStack)];
  double x = aDur[k] - aChild[*pnStack];
  aExcl[k] = x>0.0 ? x : 0.0;
  if( *pnStack>0 ) aChild[*pnStack-1] += aDur[k];
}

/* See funcs.h. */
int profsumExclusiveDouble(int n, const double *aTs, const double *aDur,
                           double *aExcl){
  ExclKeyR *aKey;
  double *aChild;
  int *aStack;
  int i, nStack = 0;
  if( n<=0 ) return SQLITE_OK;
  aKey = sqlite3_malloc64((sizeof(ExclKeyR)+sizeof(double)+sizeof(int))
                          *(sqlite3_uint64)n);
  if( aKey==0 ) return SQLITE_NOMEM;
  aChild = (double*)&aKey[n];
  aStack = (int*)&aChild[n];
  for(i=0; i<n; i++){
    aKey[i].ts = aTs[i];
    aKey[i].end = aTs[i] + aDur[i];
    aKey[i].idx = i;
  }
  qsort(aKey, n, sizeof(ExclKeyR), exclKeyRCmp);
  for(i=0; i<n; i++){
    int k = aKey[i].idx;
    double s = aTs[k], e = aKey[i].end;
    while( nStack>0 && s>=aTs[aStack[nStack-1]] + aDur[aStack[nStack-1]] ){
      exclPopR(aStack, aChild, &nStack, aDur, aExcl);
    }
    while( nStack>0 && e>aTs[aStack[nStack-1]] + aDur[aStack[nStack-1]] ){
      exclPopR(aStack, aChild, &nStack, aDur, aExcl);
    }
    aStack[nStack] = k;
    aChild[nStack] = 0.0;
    nStack++;
  }
  while( nStack>0 ) exclPopR(aStack, aChild, &nStack, aDur, aExcl);
  sqlite3_free(aKey);
  return SQLITE_OK;
}
