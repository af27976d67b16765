/*
** diaglist.c — the compact list of diagnostics (diaglist.h).
*/
#include "diaglist.h"
#include "growarray.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of a detail block: a detail longer than this gets a block of its
** own size. */
#define DL_BLOCK (1024*1024)

/* Most records of a list: their array is one allocation, which SQLite's
** allocator keeps under 2 GiB. */
#define DL_MAX_RECS ((int64_t)(0x7ff00000/sizeof(ProfsumDiagRec)))

/* The index of zKind in L->aKind, added when new; -1 when out of memory. */
static int64_t dlKind(ProfsumDiagList *L, const char *zKind){
  int64_t k;
  const char **a;
  if( L->nKind>0 && L->aKind[L->iLastKind]==zKind ) return L->iLastKind;
  for(k=0; k<L->nKind; k++){
    if( L->aKind[k]==zKind || strcmp(L->aKind[k], zKind)==0 ) break;
  }
  if( k==L->nKind ){
    if( k>=(int64_t)UINT32_MAX ) return -1;
    a = profsumGrowArray((void*)L->aKind, k, &L->nKindAlloc, sizeof(char*), 16);
    if( a==0 ) return -1;
    L->aKind = a;
    L->aKind[L->nKind++] = zKind;
  }
  L->iLastKind = (uint32_t)k;
  return k;
}

/* Room for n+1 bytes in the last block (a new block when it has not);
** SQLITE_OK or SQLITE_NOMEM. */
static int dlRoom(ProfsumDiagList *L, size_t n){
  char **aB, *pB;
  uint32_t nSize;
  if( L->nBlk>0 && n < (size_t)(L->nSize - L->nUsed) ) return SQLITE_OK;
  if( n >= (size_t)INT32_MAX || L->nBlk >= (int64_t)UINT32_MAX ) return SQLITE_NOMEM;
  nSize = n+1 > DL_BLOCK ? (uint32_t)(n+1) : DL_BLOCK;
  aB = profsumGrowArray(L->aBlk, L->nBlk, &L->nBlkAlloc, sizeof(char*), 16);
  if( aB==0 ) return SQLITE_NOMEM;
  L->aBlk = aB;
  pB = sqlite3_malloc64(nSize);
  if( pB==0 ) return SQLITE_NOMEM;
  L->aBlk[L->nBlk++] = pB;
  L->nUsed = 0;
  L->nSize = nSize;
  return SQLITE_OK;
}

/* See diaglist.h. */
int profsumDiagListAdd(ProfsumDiagList *L, int64_t idx, int64_t off,
                       const char *zKind, const char *zDetail){
  size_t n;
  int64_t k;
  ProfsumDiagRec *a, *r;
  if( zDetail==0 ) zDetail = "";
  n = strlen(zDetail);
  if( L->n>=L->nAlloc ){
    /* doubled, but at most DL_MAX_RECS (one allocation of SQLite's stays
    ** under 2 GiB: a doubling past it would fail with room left) */
    int64_t nNew = L->nAlloc ? L->nAlloc*2 : 256;
    if( nNew>DL_MAX_RECS ) nNew = DL_MAX_RECS;
    if( nNew<=L->n ) return SQLITE_NOMEM;
    a = sqlite3_realloc64(L->a, sizeof(ProfsumDiagRec)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    L->a = a;
    L->nAlloc = nNew;
  }
  k = dlKind(L, zKind);
  if( k<0 || dlRoom(L, n) ) return SQLITE_NOMEM;
  memcpy(L->aBlk[L->nBlk-1] + L->nUsed, zDetail, n+1);
  r = &L->a[L->n++];
  r->idx = idx;
  r->off = off;
  r->pos = ((uint64_t)(L->nBlk-1)<<32) | L->nUsed;
  r->nDetail = (uint32_t)n;
  r->iKind = (uint32_t)k;
  L->nUsed += (uint32_t)n + 1;
  return SQLITE_OK;
}

/* qsort order: byte offset (-1, unknown, last), then arrival. */
static int dlCmp(const void *pa, const void *pb){
  const ProfsumDiagRec *a = (const ProfsumDiagRec*)pa, *b = (const ProfsumDiagRec*)pb;
  uint64_t oa = (uint64_t)a->off, ob = (uint64_t)b->off;   /* -1 → largest */
  if( oa!=ob ) return oa<ob ? -1 : 1;
  return a->pos<b->pos ? -1 : (a->pos>b->pos);
}

/* See diaglist.h. */
void profsumDiagListSort(ProfsumDiagList *L){
  int64_t i;
  for(i=1; i<L->n; i++){
    if( dlCmp(&L->a[i-1], &L->a[i])>0 ) break;
  }
  if( i<L->n ) qsort(L->a, (size_t)L->n, sizeof(ProfsumDiagRec), dlCmp);
}

/* See diaglist.h. */
void profsumDiagListFree(ProfsumDiagList *L){
  int64_t i;
  for(i=0; i<L->nBlk; i++) sqlite3_free(L->aBlk[i]);
  sqlite3_free(L->aBlk);
  sqlite3_free(L->a);
  sqlite3_free((void*)L->aKind);
  memset(L, 0, sizeof(*L));
}
