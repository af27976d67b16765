/*
** i64map.c — the int64 -> index map of i64map.h: insertion with growth,
** the array by key, and freeing.
*/
#include "profsum_int.h"
#include "i64map.h"

#include <string.h>

/* Move the table to one of nNew slots (a power of two, above nUsed*2).
** SQLITE_OK or SQLITE_NOMEM (the map unchanged). */
static int i64MapGrow(ProfsumI64Map *m, int64_t nNew){
  int64_t j;
  int64_t *aK = sqlite3_malloc64(sizeof(int64_t)*2*(sqlite3_uint64)nNew);
  int64_t *aI;
  if( aK==0 ) return SQLITE_NOMEM;
  aI = aK + nNew;
  for(j=0; j<nNew; j++) aI[j] = -1;
  for(j=0; j<m->nSlot; j++){
    int64_t s;
    if( m->aIdx[j]<0 ) continue;
    for(s=profsumI64MapSlot(m->aKey[j], nNew); aI[s]>=0; s=(s+1)&(nNew-1)){}
    aK[s] = m->aKey[j];
    aI[s] = m->aIdx[j];
  }
  sqlite3_free(m->aKey);
  m->aKey = aK;
  m->aIdx = aI;
  m->nSlot = nNew;
  return SQLITE_OK;
}

/* See i64map.h. */
int profsumI64MapPut(ProfsumI64Map *m, int64_t key, int64_t idx, int64_t *pOld){
  int64_t i;
  *pOld = -1;
  if( m->aDense ){
    sqlite3_free(m->aDense);
    m->aDense = 0;
    m->nDense = 0;
  }
  if( (m->nUsed+1)*2 > m->nSlot && i64MapGrow(m, m->nSlot ? m->nSlot*2 : 64) ){
    return SQLITE_NOMEM;
  }
  for(i=profsumI64MapSlot(key, m->nSlot); m->aIdx[i]>=0; i=(i+1)&(m->nSlot-1)){
    if( m->aKey[i]==key ){
      *pOld = m->aIdx[i];
      m->aIdx[i] = idx;
      return SQLITE_OK;
    }
  }
  m->aKey[i] = key;
  m->aIdx[i] = idx;
  m->nUsed++;
  return SQLITE_OK;
}

/* See i64map.h. */
void profsumI64MapDense(ProfsumI64Map *m){
  int64_t j, kMax = -1;
  int32_t *a;
  if( m->aDense || m->nUsed==0 || m->nUsed>INT32_MAX ) return;
  for(j=0; j<m->nSlot; j++){
    if( m->aIdx[j]<0 ) continue;
    if( m->aKey[j]<0 || m->aKey[j]>=4*m->nUsed + 256 || m->aIdx[j]>INT32_MAX ) return;
    if( m->aKey[j]>kMax ) kMax = m->aKey[j];
  }
  a = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(kMax + 1));
  if( a==0 ) return;
  for(j=0; j<=kMax; j++) a[j] = -1;
  for(j=0; j<m->nSlot; j++){
    if( m->aIdx[j]>=0 ) a[m->aKey[j]] = (int32_t)m->aIdx[j];
  }
  m->aDense = a;
  m->nDense = kMax + 1;
}

/* See i64map.h. */
void profsumI64MapClear(ProfsumI64Map *m){
  sqlite3_free(m->aKey);            /* aIdx lives in the same block */
  sqlite3_free(m->aDense);
  memset(m, 0, sizeof(*m));
}
