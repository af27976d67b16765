/*
** engine_store.c — stage A's containers: the hash map of (int64, int64)
** keys to two int64 values and the string pool (interned texts with dense
** ids, never moved).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "hash.h"
#include "funcs.h"
#include "jsontree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Hash map of (int64, int64) keys to two int64 values                 */
/* ------------------------------------------------------------------ */
uint64_t profsumEngHmix(uint64_t x){
  x ^= x>>33; x *= 0xff51afd7ed558ccdULL; x ^= x>>33;
  x *= 0xc4ceb9fe1a85ec53ULL; x ^= x>>33;
  return x;
}

/* Find (k1,k2); with create, insert it (values 0, *pNew=1).  NULL: absent
** (no create) or out of memory (create). */
HEnt *profsumEngHmGet(HMap *m, int64_t k1, int64_t k2, int create, int *pNew){
  int64_t i;
  if( pNew ) *pNew = 0;
  if( create && (m->nUsed+1)*2 > m->nSlot ){
    int64_t nNew = m->nSlot ? m->nSlot*2 : 256, j;
    HEnt *aNew = sqlite3_malloc64(sizeof(HEnt)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return 0;
    if( nNew>=2048 ) profsumPrefault(aNew, sizeof(HEnt)*(size_t)nNew);   /* 80 KiB and more */
    memset(aNew, 0, sizeof(HEnt)*(size_t)nNew);
    for(j=0; j<m->nSlot; j++){
      if( m->a[j].used ){
        int64_t k = (int64_t)(profsumEngHmix((uint64_t)m->a[j].k1 ^ profsumEngHmix((uint64_t)m->a[j].k2)) & (uint64_t)(nNew-1));
        while( aNew[k].used ) k = (k+1) & (nNew-1);
        aNew[k] = m->a[j];
      }
    }
    sqlite3_free(m->a);
    m->a = aNew;
    m->nSlot = nNew;
  }
  if( m->nSlot==0 ) return 0;
  i = (int64_t)(profsumEngHmix((uint64_t)k1 ^ profsumEngHmix((uint64_t)k2)) & (uint64_t)(m->nSlot-1));
  while( m->a[i].used ){
    if( m->a[i].k1==k1 && m->a[i].k2==k2 ) return &m->a[i];
    i = (i+1) & (m->nSlot-1);
  }
  if( !create ) return 0;
  m->a[i].used = 1;
  m->a[i].k1 = k1;
  m->a[i].k2 = k2;
  m->a[i].v1 = 0;
  m->a[i].v2 = 0;
  m->nUsed++;
  if( pNew ) *pNew = 1;
  return &m->a[i];
}

void profsumEngHmFree(HMap *m){ sqlite3_free(m->a); memset(m, 0, sizeof(*m)); }

/* ------------------------------------------------------------------ */
/* String pool: interned strings with dense ids                        */
/* ------------------------------------------------------------------ */

/* Room for nByte bytes of text that never moves: in the current block, or
** a new one (a text above a quarter of the next block's size gets a block
** of its own, so a block wastes at most a quarter of itself).  0 when out
** of memory. */
static char *spAlloc(SPool *p, int64_t nByte){
  char *z;
  if( p->zCur && p->nCurCap - p->nCurUsed >= nByte ){
    z = p->zCur + p->nCurUsed;
    p->nCurUsed += nByte;
    return z;
  }
  if( p->nBlk>=p->nAllocBlk ){
    int64_t nNew = p->nAllocBlk ? p->nAllocBlk*2 : 16;
    char **a = sqlite3_realloc64(p->apBlk, sizeof(char*)*(sqlite3_uint64)nNew);
    if( a==0 ) return 0;
    p->apBlk = a;
    p->nAllocBlk = nNew;
  }
  if( p->nNextBlk==0 ) p->nNextBlk = SP_BLOCK_MIN;
  if( nByte > p->nNextBlk/4 ){
    z = sqlite3_malloc64((sqlite3_uint64)nByte);
    if( z==0 ) return 0;
    p->apBlk[p->nBlk++] = z;
    return z;
  }
  z = sqlite3_malloc64((sqlite3_uint64)p->nNextBlk);
  if( z==0 ) return 0;
  p->apBlk[p->nBlk++] = z;
  p->zCur = z;
  p->nCurCap = p->nNextBlk;
  p->nCurUsed = nByte;
  if( p->nNextBlk<SP_BLOCK_MAX ) p->nNextBlk *= 2;
  return z;
}

/* profsumEngSlotsFor when the table must grow (kept out of line, so that
** the check every intern makes is a short call). */
static int __attribute__((noinline)) slotsGrow(int32_t **paSlot, int64_t *pnSlot, int64_t nIds,
                                              uint64_t (*xHash)(const void*, int64_t),
                                              const void *pCtx){
  int64_t nSlot, j;
  int32_t *a;
  nSlot = *pnSlot ? *pnSlot*2 : 1024;
  a = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nSlot);
  if( a==0 ) return SQLITE_NOMEM;
  memset(a, 0, sizeof(int32_t)*(size_t)nSlot);
  for(j=0; j<nIds-1; j++){
    int64_t k = (int64_t)(xHash(pCtx, j) & (uint64_t)(nSlot-1));
    while( a[k] ) k = (k+1) & (nSlot-1);
    a[k] = (int32_t)j+1;
  }
  sqlite3_free(*paSlot);
  *paSlot = a;
  *pnSlot = nSlot;
  return SQLITE_OK;
}

/* See engine_int.h. */
int profsumEngSlotsFor(int32_t **paSlot, int64_t *pnSlot, int64_t nIds,
                       uint64_t (*xHash)(const void*, int64_t), const void *pCtx){
  if( nIds*2 <= *pnSlot ) return SQLITE_OK;     /* the usual case: a call per intern */
  return slotsGrow(paSlot, pnSlot, nIds, xHash, pCtx);
}

/* The hash of string id j of pool pCtx (profsumEngSlotsFor). */
static uint64_t spHashOf(const void *pCtx, int64_t j){
  const SPool *p = (const SPool*)pCtx;
  return profsumBytesHash(SP_STR(p,j), SP_LEN(p,j));
}

/* Grow p's id arrays (azStr, aLen) to nNew ids.  SQLITE_OK or
** SQLITE_NOMEM (then azStr may be the larger, nAlloc unchanged). */
static int spGrowIds(SPool *p, int32_t nNew){
  char **aS = sqlite3_realloc64(p->azStr, sizeof(char*)*(sqlite3_uint64)nNew);
  int32_t *aL;
  if( aS==0 ) return SQLITE_NOMEM;
  p->azStr = aS;
  aL = sqlite3_realloc64(p->aLen, sizeof(int32_t)*(sqlite3_uint64)nNew);
  if( aL==0 ) return SQLITE_NOMEM;
  p->aLen = aL;
  p->nAlloc = nNew;
  return SQLITE_OK;
}

/* Intern z[0..n); returns its id, or -1 when out of memory.  z may point
** into the pool itself (a prefix of a pooled string). */
int32_t profsumEngSpIntern(SPool *p, const char *z, int64_t n){
  uint64_t h;
  int64_t i;
  char *zNew;
  if( n>0x7fffffff ) n = 0x7fffffff;
  if( p->n>=0x3fffffff ) return -1;       /* ids are int32_t, slots 2x ids */
  if( profsumEngSlotsFor(&p->aSlot, &p->nSlot, p->n+1, spHashOf, p) ) return -1;
  h = profsumBytesHash(z, n);
  i = (int64_t)(h & (uint64_t)(p->nSlot-1));
  while( p->aSlot[i] ){
    int32_t id = p->aSlot[i]-1;
    if( SP_LEN(p,id)==n && memcmp(SP_STR(p,id), z, (size_t)n)==0 ) return id;
    i = (i+1) & (p->nSlot-1);
  }
  if( p->n>=p->nAlloc && spGrowIds(p, p->nAlloc ? p->nAlloc*2 : 1024) ) return -1;
  zNew = spAlloc(p, n+1);      /* z (even a pooled text) stays where it is */
  if( zNew==0 ) return -1;
  memcpy(zNew, z, (size_t)n);
  zNew[n] = 0;
  p->azStr[p->n] = zNew;
  p->aLen[p->n] = (int32_t)n;
  p->aSlot[i] = p->n + 1;
  return p->n++;
}

/* See engine_int.h. */
int profsumEngSpReserve(SPool *p, int64_t nMore){
  int64_t nNeed = (int64_t)p->n + nMore;
  if( nNeed<=p->nAlloc ) return SQLITE_OK;
  if( nNeed>0x3fffffff ) return SQLITE_NOMEM;     /* (the ids' bound, as interning) */
  return spGrowIds(p, (int32_t)nNeed);
}

void profsumEngSpFree(SPool *p){
  int64_t b;
  for(b=0; b<p->nBlk; b++) sqlite3_free(p->apBlk[b]);
  sqlite3_free(p->apBlk);
  sqlite3_free(p->azStr); sqlite3_free(p->aLen); sqlite3_free(p->aSlot);
  memset(p, 0, sizeof(*p));
}
