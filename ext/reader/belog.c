/*
** belog.c — the compact log of B and E events per track (belog.h).
**
** A track's events are one byte string: its first BE_HEAD bytes in the
** track's own state, the rest in a chain of chunks.  An event:
**
**   varint  (idx − previous idx) << 2 | same-name bit << 1 | (ph == 'E')
**   varint  iOffset − previous iOffset
**   varint  zigzag(ts − previous ts)            (128-bit)
**   4 bytes nameHash, little-endian             (only without the same-name bit)
**
** Differences are taken modulo 2^64 (2^128 for ts) and added back the same
** way, so every value comes back exactly, in or out of order; the first
** event of a track is taken from zeros.  An event is at most BE_REC_MAX
** bytes and may straddle chunks.
*/
#include "belog.h"
#include "profsum_reader.h"

#include <string.h>

typedef unsigned __int128 BeU128;

struct ProfsumBeChunk {
  ProfsumBeChunk *pNext;
  uint32_t nUsed;           /* bytes of a[] written */
  uint32_t nSize;           /* bytes of a[] */
  unsigned char a[];
};

/* Chunk sizes (bytes of a[]): the first, and the most a doubling reaches.
** Tracks in blocks of 2^BE_TRK_LOG.  The tests' small-block build
** (PROFSUM_TRK_BLOCK_LOG below 12) makes them tiny, so that events
** straddle chunks and tracks cross blocks all the time. */
#if PROFSUM_TRK_BLOCK_LOG<12
# define BE_HEAD        2
# define BE_CHUNK_FIRST 1
# define BE_CHUNK_MAX   8
# define BE_TRK_LOG     1
#else
# define BE_HEAD        40
# define BE_CHUNK_FIRST 48
# define BE_CHUNK_MAX   (16384 - 16)
# define BE_TRK_LOG     6
#endif
#define BE_TRK ((int64_t)1<<BE_TRK_LOG)

/* The most bytes of one event: varints of 66, 64 and 128 bits (10, 10
** and 19 bytes) and the hash. */
#define BE_REC_MAX 43

/* A track: its first BE_HEAD bytes in place (a track of one or two events
** needs no chunk: a trace can have a track per event), the chunks of the
** rest, its count, the event appended last (the base of the next one's
** differences), and whether one came before the one before it in (ts,
** idx) order. */
typedef struct BeTrack {
  ProfsumBeChunk *pFirst, *pLast;   /* 0 until aHead is full */
  int64_t n;
  ProfsumBeEv last;
  uint32_t nHead;                   /* bytes of aHead written */
  int outOfOrder;
  unsigned char aHead[BE_HEAD];
} BeTrack;

struct ProfsumBeLog {
  BeTrack **apBlk;          /* blocks of BE_TRK tracks (0: none yet) */
  int64_t nBlkSlot;         /* entries of apBlk */
  int64_t nTrack;           /* 1 + the highest track with an event */
  int64_t nByte;            /* bytes of the chunks and blocks */
};

/* Track trk of L, or 0 when its block was never made. */
static BeTrack *beTrack(const ProfsumBeLog *L, int64_t trk){
  int64_t iBlk = trk>>BE_TRK_LOG;
  if( trk<0 || iBlk>=L->nBlkSlot || L->apBlk[iBlk]==0 ) return 0;
  return &L->apBlk[iBlk][trk & (BE_TRK-1)];
}

/* Track trk of L, its block made (zeroed: no events) when needed; 0 when
** out of memory. */
static BeTrack *beTrackMake(ProfsumBeLog *L, int32_t trk){
  int64_t iBlk = (int64_t)trk>>BE_TRK_LOG;
  if( iBlk>=L->nBlkSlot ){
    /* at most (INT32_MAX >> BE_TRK_LOG) + 1 entries */
    int64_t nNew = L->nBlkSlot ? L->nBlkSlot*2 : 16, i;
    BeTrack **ap;
    while( nNew<=iBlk ) nNew *= 2;
    ap = sqlite3_realloc64(L->apBlk, sizeof(BeTrack*)*(sqlite3_uint64)nNew);
    if( ap==0 ) return 0;
    for(i=L->nBlkSlot; i<nNew; i++) ap[i] = 0;
    L->apBlk = ap;
    L->nByte += (int64_t)sizeof(BeTrack*)*(nNew - L->nBlkSlot);
    L->nBlkSlot = nNew;
  }
  if( L->apBlk[iBlk]==0 ){
    L->apBlk[iBlk] = profsumMallocZero(sizeof(BeTrack)*(sqlite3_uint64)BE_TRK);
    if( L->apBlk[iBlk]==0 ) return 0;
    L->nByte += (int64_t)sizeof(BeTrack)*BE_TRK;
  }
  return &L->apBlk[iBlk][trk & (BE_TRK-1)];
}

/* Free the chain of chunks from c on (0: none); returns their bytes. */
static int64_t beChunksFree(ProfsumBeChunk *c){
  int64_t n = 0;
  while( c ){
    ProfsumBeChunk *pNext = c->pNext;
    n += (int64_t)(sizeof(ProfsumBeChunk) + c->nSize);
    sqlite3_free(c);
    c = pNext;
  }
  return n;
}

/* Write v as a varint (LEB128) at a+n; returns the new n. */
static int bePutVar(unsigned char *a, int n, BeU128 v){
  while( v>=0x80 ){
    a[n++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  a[n++] = (unsigned char)v;
  return n;
}

/* See belog.h. */
int profsumBeLogOpen(ProfsumBeLog **pp){
  *pp = profsumMallocZero(sizeof(ProfsumBeLog));
  return *pp ? SQLITE_OK : SQLITE_NOMEM;
}

/* See belog.h. */
int profsumBeLogAdd(ProfsumBeLog *L, int32_t trk, const ProfsumBeEv *ev){
  unsigned char a[BE_REC_MAX];
  BeTrack *t;
  ProfsumBeChunk *pLast0;
  uint32_t nUsed0, nHead0;
  BeU128 d;
  int n, i, same;
  if( trk<0 ) return SQLITE_MISUSE;
  t = beTrackMake(L, trk);
  if( t==0 ) return SQLITE_NOMEM;
  same = ev->nameHash==t->last.nameHash;
  n = bePutVar(a, 0, ((BeU128)((uint64_t)ev->idx - (uint64_t)t->last.idx) << 2)
                     | (BeU128)(same<<1) | (BeU128)(ev->ph=='E'));
  n = bePutVar(a, n, (uint64_t)ev->iOffset - (uint64_t)t->last.iOffset);
  d = (BeU128)ev->ts - (BeU128)t->last.ts;
  n = bePutVar(a, n, (d<<1) ^ ((BeU128)0 - (d>>127)));
  if( !same ){
    a[n++] = (unsigned char)ev->nameHash;
    a[n++] = (unsigned char)(ev->nameHash>>8);
    a[n++] = (unsigned char)(ev->nameHash>>16);
    a[n++] = (unsigned char)(ev->nameHash>>24);
  }
  /* the bytes: in place while there is room, then into new chunks as the
  ** last one fills (all undone when one cannot be made) */
  i = 0;
  if( t->nHead<BE_HEAD ){
    uint32_t k = BE_HEAD - t->nHead;
    if( k>(uint32_t)n ) k = (uint32_t)n;
    nHead0 = t->nHead;
    memcpy(t->aHead + t->nHead, a, k);
    t->nHead += k;
    i = (int)k;
  }else{
    nHead0 = BE_HEAD;
  }
  pLast0 = t->pLast;
  nUsed0 = pLast0 ? pLast0->nUsed : 0;
  while( i<n ){
    ProfsumBeChunk *c = t->pLast;
    uint32_t k;
    if( c==0 || c->nUsed==c->nSize ){
      uint32_t nSize = c==0 ? BE_CHUNK_FIRST : (c->nSize>BE_CHUNK_MAX/2 ? BE_CHUNK_MAX : c->nSize*2);
      c = sqlite3_malloc64(sizeof(ProfsumBeChunk) + nSize);
      if( c==0 ){
        if( pLast0 ){
          L->nByte -= beChunksFree(pLast0->pNext);
          pLast0->pNext = 0;
          pLast0->nUsed = nUsed0;
        }else{
          L->nByte -= beChunksFree(t->pFirst);
          t->pFirst = 0;
        }
        t->pLast = pLast0;
        t->nHead = nHead0;
        return SQLITE_NOMEM;
      }
      c->pNext = 0;
      c->nUsed = 0;
      c->nSize = nSize;
      if( t->pLast ) t->pLast->pNext = c; else t->pFirst = c;
      t->pLast = c;
      L->nByte += (int64_t)(sizeof(ProfsumBeChunk) + nSize);
    }
    k = c->nSize - c->nUsed;
    if( k>(uint32_t)(n-i) ) k = (uint32_t)(n-i);
    memcpy(c->a + c->nUsed, a+i, k);
    c->nUsed += k;
    i += (int)k;
  }
  if( t->n>0 && (ev->ts<t->last.ts || (ev->ts==t->last.ts && ev->idx<=t->last.idx)) ){
    t->outOfOrder = 1;
  }
  t->n++;
  t->last = *ev;
  if( trk>=L->nTrack ) L->nTrack = (int64_t)trk + 1;
  return SQLITE_OK;
}

/* See belog.h. */
int64_t profsumBeLogTracks(const ProfsumBeLog *L){ return L->nTrack; }

/* See belog.h. */
int64_t profsumBeLogCount(const ProfsumBeLog *L, int64_t trk){
  const BeTrack *t = beTrack(L, trk);
  return t ? t->n : 0;
}

/* See belog.h. */
int profsumBeLogInOrder(const ProfsumBeLog *L, int64_t trk){
  const BeTrack *t = beTrack(L, trk);
  return t==0 || !t->outOfOrder;
}

/* See belog.h. */
int64_t profsumBeLogBytes(const ProfsumBeLog *L){ return L->nByte; }

/* See belog.h. */
void profsumBeLogFirst(const ProfsumBeLog *L, int64_t trk, ProfsumBeCursor *c){
  const BeTrack *t = beTrack(L, trk);
  memset(c, 0, sizeof(*c));
  if( t ){
    c->a = t->aHead;
    c->nByte = t->nHead;
    c->pNext = t->pFirst;
    c->nLeft = t->n;
  }
}

/* The next byte of c (there is one: c has events left). */
static unsigned beByte(ProfsumBeCursor *c){
  while( c->i==c->nByte ){
    const ProfsumBeChunk *p = c->pNext;
    c->a = p->a;
    c->nByte = p->nUsed;
    c->pNext = p->pNext;
    c->i = 0;
  }
  return c->a[c->i++];
}

/* The next varint of c (written by bePutVar: at most 19 bytes). */
static BeU128 beGetVar(ProfsumBeCursor *c){
  BeU128 v = 0;
  unsigned b, s = 0;
  do{
    b = beByte(c);
    if( s<128 ) v |= (BeU128)(b & 0x7f) << s;
    s += 7;
  }while( b & 0x80 );
  return v;
}

/* See belog.h. */
int profsumBeLogNext(ProfsumBeCursor *c, ProfsumBeEv *ev){
  BeU128 h, z, d;
  uint64_t dOff;
  if( c->nLeft<=0 ) return 0;
  h = beGetVar(c);
  dOff = (uint64_t)beGetVar(c);
  z = beGetVar(c);
  d = (z>>1) ^ ((BeU128)0 - (z & 1));
  c->last.idx = (int64_t)((uint64_t)c->last.idx + (uint64_t)(h>>2));
  c->last.iOffset = (int64_t)((uint64_t)c->last.iOffset + dOff);
  c->last.ts = (profsum_ps)((BeU128)c->last.ts + d);
  c->last.ph = (h & 1) ? 'E' : 'B';
  if( !(h & 2) ){
    uint32_t x = beByte(c);
    x |= (uint32_t)beByte(c)<<8;
    x |= (uint32_t)beByte(c)<<16;
    x |= (uint32_t)beByte(c)<<24;
    c->last.nameHash = x;
  }
  c->nLeft--;
  *ev = c->last;
  return 1;
}

/* See belog.h. */
void profsumBeLogDrop(ProfsumBeLog *L, int64_t trk){
  BeTrack *t = (BeTrack*)beTrack(L, trk);
  if( t==0 ) return;
  L->nByte -= beChunksFree(t->pFirst);
  memset(t, 0, sizeof(*t));           /* as a track never used */
}

/* See belog.h. */
void profsumBeLogFree(ProfsumBeLog *L){
  int64_t i, j;
  if( L==0 ) return;
  for(i=0; i<L->nBlkSlot; i++){
    if( L->apBlk[i]==0 ) continue;
    for(j=0; j<BE_TRK; j++) beChunksFree(L->apBlk[i][j].pFirst);
    sqlite3_free(L->apBlk[i]);
  }
  sqlite3_free(L->apBlk);
  sqlite3_free(L);
}
