/*
** strpool.c — the interned strings of strpool.h.
*/
#include "profsum_int.h"
#include "hash.h"
#include "strpool.h"

#include <string.h>

/* Keep the hash at most half full: SQLITE_OK or SQLITE_NOMEM. */
static int spGrowSlots(ProfsumStrPool *p){
  int64_t nNew, i;
  int32_t *a, k;
  if( (int64_t)(p->n+1)*2 <= p->nSlot ) return SQLITE_OK;
  nNew = p->nSlot ? p->nSlot*2 : 256;
  a = profsumMallocZero(sizeof(int32_t)*(sqlite3_uint64)nNew);
  if( a==0 ) return SQLITE_NOMEM;
  for(k=0; k<p->n; k++){
    uint64_t h = profsumBytesHash(p->az[k], p->an[k]);
    for(i=(int64_t)(h & (uint64_t)(nNew-1)); a[i]; i=(i+1)&(nNew-1)){}
    a[i] = k+1;
  }
  sqlite3_free(p->aSlot);
  p->aSlot = a; p->nSlot = nNew;
  return SQLITE_OK;
}

/* See strpool.h. */
int profsumStrPoolIntern(ProfsumStrPool *p, const char *z, int64_t n, int32_t *pId){
  uint64_t h;
  int64_t i;
  if( p->maxBytes>0 ){
    *pId = -1;
    if( p->full ) return SQLITE_OK;
  }
  if( spGrowSlots(p) ) return SQLITE_NOMEM;
  h = profsumBytesHash(z, n);
  for(i=(int64_t)(h & (uint64_t)(p->nSlot-1)); p->aSlot[i]; i=(i+1)&(p->nSlot-1)){
    int32_t k = p->aSlot[i]-1;
    if( p->an[k]==n && (n==0 || memcmp(p->az[k], z, (size_t)n)==0) ){ *pId = k; return SQLITE_OK; }
  }
  if( p->maxBytes>0 && (p->nBytes+n > p->maxBytes || p->n>=INT32_MAX-1) ){
    p->full = 1;
    return SQLITE_OK;
  }
  if( p->n>=p->nAlloc ){
    int32_t nNew = p->nAlloc ? p->nAlloc*2 : 64;
    char **az = sqlite3_realloc64(p->az, sizeof(char*)*(sqlite3_uint64)nNew);
    int64_t *an;
    if( az==0 ) return SQLITE_NOMEM;
    p->az = az;
    an = sqlite3_realloc64(p->an, sizeof(int64_t)*(sqlite3_uint64)nNew);
    if( an==0 ) return SQLITE_NOMEM;
    p->an = an;
    p->nAlloc = nNew;
  }
  p->az[p->n] = sqlite3_malloc64((sqlite3_uint64)n+1);
  if( p->az[p->n]==0 ) return SQLITE_NOMEM;
  if( n ) memcpy(p->az[p->n], z, (size_t)n);
  p->az[p->n][n] = 0;
  p->an[p->n] = n;
  p->aSlot[i] = p->n+1;
  p->nBytes += n;
  *pId = p->n++;
  return SQLITE_OK;
}

/* See strpool.h. */
void profsumStrPoolFree(ProfsumStrPool *p){
  int32_t i;
  for(i=0; i<p->n; i++) sqlite3_free(p->az[i]);
  sqlite3_free(p->az); sqlite3_free(p->an); sqlite3_free(p->aSlot);
  memset(p, 0, sizeof(*p));
}
