/*
** selectk.h — the k-th smallest of an array of int64 values, in place.
**
** One quickselect (Hoare partition around the middle element) for every
** place that needs an exact order statistic without sorting: the medians
** of the summary's durations and the collectors' median gaps.
*/
#ifndef PROFSUM_SELECTK_H
#define PROFSUM_SELECTK_H

#include <stdint.h>

/* The k-th smallest (0-based) of a[0..n), 0 <= k < n; a is reordered so
** that a[k] holds it, no larger value stands after it and no smaller one
** before the equal run it belongs to.  O(n) expected. */
static inline int64_t profsumSelectKth(int64_t *a, int64_t n, int64_t k){
  int64_t lo = 0, hi = n-1;
  while( lo<hi ){
    int64_t piv = a[lo + (hi-lo)/2], x = lo, y = hi;
    while( x<=y ){
      while( a[x]<piv ) x++;
      while( a[y]>piv ) y--;
      if( x<=y ){ int64_t t = a[x]; a[x] = a[y]; a[y] = t; x++; y--; }
    }
    if( k<=y ) hi = y;
    else if( k>=x ) lo = x;
    else break;               /* a[y+1..x) all equal the pivot */
  }
  return a[k];
}

#endif /* PROFSUM_SELECTK_H */
