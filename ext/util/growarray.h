/*
** growarray.h — the growing array every reader and collector keeps:
** elements appended one at a time, the allocation doubled when full.
**
**   T *aNew = profsumGrowArray(p->a, p->n, &p->nAlloc, sizeof(T), 64);
**   if( aNew==0 ) return SQLITE_NOMEM;
**   p->a = aNew;
**   p->a[p->n++] = x;
**
** Conventions: SQLite's allocator; sizes from input are the caller's to
** bound (the doubling itself cannot overflow a 64-bit count of elements
** that fit in memory).
*/
#ifndef PROFSUM_GROWARRAY_H
#define PROFSUM_GROWARRAY_H

#include "profsum_int.h"

/* The array a (elements of sz bytes, *pnAlloc of them allocated) with
** room for element i: a itself when i < *pnAlloc, else a reallocated to
** twice its size (nFirst elements when it has none), with *pnAlloc set to
** the new size.  0 when out of memory: a is then unchanged, and still the
** caller's to free. */
static inline void *profsumGrowArray(void *a, int64_t i, int64_t *pnAlloc, size_t sz,
                                     int64_t nFirst){
  int64_t nNew;
  void *aNew;
  if( i<*pnAlloc ) return a;
  nNew = *pnAlloc ? *pnAlloc*2 : nFirst;
  if( nNew<=i ) nNew = i+1;
  aNew = sqlite3_realloc64(a, sz*(sqlite3_uint64)nNew);
  if( aNew ) *pnAlloc = nNew;
  return aNew;
}

#endif /* PROFSUM_GROWARRAY_H */
