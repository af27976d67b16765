/*
** jsontree.c — JSON tree, Python-compatible serializer (indented and
** compact) and a parser (see jsontree.h).
*/
#include "profsum_int.h"
#include "jsontree.h"
#include "jsonesc.h"      /* profsumJsonPlainRun */
#include "cnum.h"

#include <assert.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Arenas (see jsontree.h)                                             */
/* ------------------------------------------------------------------ */
typedef struct JBlock JBlock;
struct JBlock {             /* a block's header; its bytes follow */
  JBlock *pNext;            /* the next older block */
  sqlite3_uint64 nByte;     /* bytes after the header (16 bytes: keeps them 8-aligned) */
};

struct JArena {
  JArena *pPrev;           /* the thread's open arena before this one */
  JBlock *pBlock;          /* the blocks, newest first */
  char *zFree;             /* the newest block's first free byte */
  sqlite3_uint64 nFree;    /* bytes free there */
  sqlite3_uint64 nNext;    /* size of the next block */
};

/* Block sizes: the first 8 KB (a small tree stays small), each next one
** twice the last up to 64 KB, which stays below glibc's mmap threshold (a
** block of the heap is reused; an mmap'd one faults fresh pages in). */
#define JARENA_FIRST 8192
#define JARENA_MAX   65536

/* The arena this thread's constructors allocate in, or 0 (the heap). */
static _Thread_local JArena *jCur = 0;

/* n bytes (8-aligned) from arena a, or 0 when out of memory.  A request
** over a quarter of the next block's size gets a block of its own, linked
** behind the newest so that one keeps filling. */
static void *jArenaAlloc(JArena *a, sqlite3_uint64 n){
  char *p;
  n = (n + 7) & ~(sqlite3_uint64)7;
  if( n>a->nFree ){
    JBlock *b;
    if( n > a->nNext/4 ){
      b = sqlite3_malloc64(sizeof(JBlock) + n);
      if( b==0 ) return 0;
      b->nByte = n;
      if( a->pBlock ){ b->pNext = a->pBlock->pNext; a->pBlock->pNext = b; }
      else{ b->pNext = 0; a->pBlock = b; }
      return (char*)(b+1);
    }
    b = sqlite3_malloc64(a->nNext);
    if( b==0 ) return 0;
    b->nByte = a->nNext - sizeof(JBlock);
    b->pNext = a->pBlock;
    a->pBlock = b;
    a->zFree = (char*)(b+1);
    a->nFree = a->nNext - sizeof(JBlock);
    if( a->nNext<JARENA_MAX ) a->nNext *= 2;
  }
  p = a->zFree;
  a->zFree += n;
  a->nFree -= n;
  return p;
}

/* True if p lies in one of arena a's blocks (a few blocks: a summary
** document takes six or seven). */
static int jArenaOwns(const JArena *a, const void *p){
  const JBlock *b;
  const char *c = (const char*)p;
  for(b=a->pBlock; b; b=b->pNext){
    const char *z = (const char*)(b+1);
    if( c>=z && c<z+b->nByte ) return 1;
  }
  return 0;
}

/* The open arena if node p lies in it (its child array and member keys
** then grow there too), else 0: the heap.  A node of another arena (one
** that ended, or an outer one) must not take memory from the open one,
** which may be freed first. */
static JArena *jArenaOf(const JNode *p){
  return (p->flags & JF_ARENA) && jCur && jArenaOwns(jCur, p) ? jCur : 0;
}

/* See jsontree.h. */
int jArenaBegin(JArena **ppArena){
  JArena *a = sqlite3_malloc64(sizeof(*a));
  *ppArena = 0;
  if( a==0 ) return SQLITE_NOMEM;
  memset(a, 0, sizeof(*a));
  a->nNext = JARENA_FIRST;
  a->pPrev = jCur;
  jCur = a;
  *ppArena = a;
  return SQLITE_OK;
}

/* See jsontree.h. */
void jArenaEnd(JArena *pArena){
  assert( pArena==0 || jCur==pArena );
  if( pArena && jCur==pArena ) jCur = pArena->pPrev;
}

/* See jsontree.h. */
void jArenaFree(JArena *pArena){
  JBlock *b, *bNext;
  if( pArena==0 ) return;
  if( jCur==pArena ) jCur = pArena->pPrev;     /* freed before its end */
  for(b=pArena->pBlock; b; b=bNext){ bNext = b->pNext; sqlite3_free(b); }
  sqlite3_free(pArena);
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

/* A node of nByte bytes (a JNode and what follows it), zeroed but for what
** follows, of the given type: from the open arena (JF_ARENA) or the heap. */
static JNode *jAllocNode(int type, sqlite3_uint64 nByte){
  JNode *p = jCur ? jArenaAlloc(jCur, nByte) : sqlite3_malloc64(nByte);
  if( p==0 ) return 0;
  memset(p, 0, sizeof(*p));
  p->type = (unsigned char)type;
  if( jCur ) p->flags = JF_ARENA;
  return p;
}

static JNode *jNew(int type){ return jAllocNode(type, sizeof(JNode)); }
JNode *jNull(void){ return jNew(JT_NULL); }
JNode *jBool(int b){ return jNew(b ? JT_TRUE : JT_FALSE); }
JNode *jInt(sqlite3_int64 v){ JNode *p = jNew(JT_INT); if( p ) p->i = v; return p; }
JNode *jReal(double v){ JNode *p = jNew(JT_REAL); if( p ) p->r = v; return p; }
/* A node of type t with a copy of z[0..n) as its text, NUL-terminated, in
** the node's own allocation (JF_Z_INLINE).  NULL when out of memory. */
static JNode *jInlineText(int t, const char *z, int n){
  JNode *p = jAllocNode(t, sizeof(JNode) + (sqlite3_uint64)n + 1);
  if( p==0 ) return 0;
  p->flags |= JF_Z_INLINE;
  p->z = (char*)(p+1);
  memcpy(p->z, z, (size_t)n);
  p->z[n] = 0;
  p->n = n;
  return p;
}

/* An integer beyond int64 written as the n characters z ([-]digits): a
** JT_REAL of its double for the readers of numbers, that keeps its digits
** in z (inline, as jStr's) for jDump, as Python keeps an integer exact.
** NULL when out of memory. */
static JNode *jBigInt(const char *z, int n){
  JNode *p = jInlineText(JT_REAL, z, n);
  char *end;
  if( p ) p->r = profsumStrtod(p->z, &end);
  return p;
}
JNode *jArr(void){ return jNew(JT_ARRAY); }
JNode *jObj(void){ return jNew(JT_OBJECT); }

JNode *jStr(const char *z, int n){
  if( z==0 ) return jNull();
  if( n<0 ) n = (int)strlen(z);
  return jInlineText(JT_STRING, z, n);
}

void jFree(JNode *p){
  int i;
  if( p==0 ) return;
  for(i=0; i<p->nChild; i++) jFree(p->a[i]);
  if( !(p->flags & JF_A_ARENA) ) sqlite3_free(p->a);
  if( !(p->flags & JF_Z_INLINE) ) sqlite3_free(p->z);
  if( !(p->flags & JF_KEY_LIT) ) sqlite3_free(p->zKey);
  if( !(p->flags & JF_ARENA) ) sqlite3_free(p);
}

/* Append a child (no key handling).  The child array of a node in the open
** arena grows there (the old one is left to the arena); otherwise on the
** heap (an arena node changed after its arena's end, or while another one
** is open, moves its array to the heap). */
static int jAppend(JNode *pParent, JNode *pChild){
  if( pParent->nChild>=pParent->nAlloc ){
    int nNew = pParent->nAlloc ? pParent->nAlloc*2 : 8;
    sqlite3_uint64 nByte = sizeof(JNode*)*(sqlite3_uint64)nNew;
    JNode **a;
    JArena *pA = jArenaOf(pParent);
    if( pA || (pParent->flags & JF_A_ARENA) ){
      a = pA ? jArenaAlloc(pA, nByte) : sqlite3_malloc64(nByte);
      if( a==0 ) return SQLITE_NOMEM;
      if( pParent->nChild ) memcpy(a, pParent->a, sizeof(JNode*)*(size_t)pParent->nChild);
      if( !(pParent->flags & JF_A_ARENA) ) sqlite3_free(pParent->a);
      if( pA ) pParent->flags |= JF_A_ARENA;
      else pParent->flags &= (unsigned char)~JF_A_ARENA;
    }else{
      a = sqlite3_realloc64(pParent->a, nByte);
      if( a==0 ) return SQLITE_NOMEM;
    }
    pParent->a = a;
    pParent->nAlloc = nNew;
  }
  pParent->a[pParent->nChild++] = pChild;
  return SQLITE_OK;
}

void jPush(JNode *pArr, JNode *pChild){
  if( pArr==0 ){ jFree(pChild); return; }
  if( pChild==0 || jAppend(pArr, pChild) ){ pArr->oom = 1; jFree(pChild); }
}

/* Give pChild a copy of the C string zKey as its key for membership in
** pObj: in the open arena when pObj lies in it (JF_KEY_LIT: not owned),
** else on the heap.  SQLITE_NOMEM leaves pChild as it was. */
static int jKeyInto(const JNode *pObj, JNode *pChild, const char *zKey){
  size_t n = strlen(zKey);          /* a plain copy: no printf per member */
  JArena *pA = jArenaOf(pObj);
  char *z = pA ? jArenaAlloc(pA, n+1) : sqlite3_malloc64(n+1);
  if( z==0 ) return SQLITE_NOMEM;
  memcpy(z, zKey, n+1);
  pChild->zKey = z;
  if( pA ) pChild->flags |= JF_KEY_LIT;
  else pChild->flags &= (unsigned char)~JF_KEY_LIT;
  return SQLITE_OK;
}

/* jSet() and jSetLit(): zKey copied unless bLit. */
static void jSetKey(JNode *pObj, const char *zKey, int bLit, JNode *pChild){
  int i;
  if( pObj==0 ){ jFree(pChild); return; }
  if( pChild==0 ){ pObj->oom = 1; return; }
  if( bLit ){
    pChild->zKey = (char*)zKey;
    pChild->flags |= JF_KEY_LIT;
  }else if( jKeyInto(pObj, pChild, zKey) ){
    pObj->oom = 1; jFree(pChild); return;
  }
  for(i=0; i<pObj->nChild; i++){
    if( strcmp(pObj->a[i]->zKey, zKey)==0 ){
      jFree(pObj->a[i]);
      pObj->a[i] = pChild;
      return;
    }
  }
  if( jAppend(pObj, pChild) ){ pObj->oom = 1; jFree(pChild); }
}

void jSet(JNode *pObj, const char *zKey, JNode *pChild){ jSetKey(pObj, zKey, 0, pChild); }

/* See jsontree.h. */
void jSetLit(JNode *pObj, const char *zKey, JNode *pChild){ jSetKey(pObj, zKey, 1, pChild); }

void jSetNew(JNode *pObj, const char *zKey, JNode *pChild){
  if( pObj==0 ){ jFree(pChild); return; }
  if( pChild==0 ){ pObj->oom = 1; return; }
  if( jKeyInto(pObj, pChild, zKey) || jAppend(pObj, pChild) ){ pObj->oom = 1; jFree(pChild); }
}

void jRemove(JNode *pObj, const char *zKey){
  int i, j = 0;
  if( pObj==0 ) return;
  for(i=0; i<pObj->nChild; i++){
    if( strcmp(pObj->a[i]->zKey, zKey)==0 ) jFree(pObj->a[i]);
    else pObj->a[j++] = pObj->a[i];
  }
  pObj->nChild = j;
}

/* Objects of up to this many members are made unique by comparing each key
** with the ones before it; larger ones by sorting (jDedupe). */
#define JDEDUPE_LINEAR 16

/* A member's key and position, sorted by jDedupe. */
typedef struct JKeyPos { const char *zKey; int i; } JKeyPos;

/* qsort: by key (as C strings), then by position. */
static int cmpKeyPos(const void *pa, const void *pb){
  const JKeyPos *a = (const JKeyPos*)pa, *b = (const JKeyPos*)pb;
  int c = strcmp(a->zKey, b->zKey);
  if( c ) return c;
  return (a->i > b->i) - (a->i < b->i);
}

/* Make the keys of object pObj (members appended without a check, each
** with its zKey) unique, with the result jSet() would give if called for
** each member in order: a key present more than once leaves one member, at
** the position of its first occurrence, holding the node of its last; the
** other nodes are freed and the members after them move up.  O(n) for
** small objects, O(n log n) for large ones (sorted index, not a hash: no
** input makes it slower).  Returns SQLITE_OK, or SQLITE_NOMEM with pObj
** unchanged (the caller frees it). */
static int jDedupe(JNode *pObj){
  int n = pObj->nChild, i, k, w;
  if( n<2 ) return SQLITE_OK;
  if( n<=JDEDUPE_LINEAR ){
    for(i=0, w=0; i<n; i++){
      JNode *c = pObj->a[i];
      for(k=0; k<w && strcmp(pObj->a[k]->zKey, c->zKey)!=0; k++){}
      if( k<w ){ jFree(pObj->a[k]); pObj->a[k] = c; }
      else pObj->a[w++] = c;
    }
    pObj->nChild = w;
    return SQLITE_OK;
  }else{
    JKeyPos *aK = sqlite3_malloc64(sizeof(JKeyPos)*(sqlite3_uint64)n);
    int g, h, nDup = 0;
    if( aK==0 ) return SQLITE_NOMEM;
    for(i=0; i<n; i++){ aK[i].zKey = pObj->a[i]->zKey; aK[i].i = i; }
    qsort(aK, (size_t)n, sizeof(JKeyPos), cmpKeyPos);
    for(g=0; g<n; g=h){
      /* aK[g..h) hold one key, by position: aK[g] first, aK[h-1] last */
      for(h=g+1; h<n && strcmp(aK[h].zKey, aK[g].zKey)==0; h++){}
      if( h-g>1 ){
        JNode *pLast = pObj->a[aK[h-1].i];
        for(k=g; k<h-1; k++){ jFree(pObj->a[aK[k].i]); pObj->a[aK[k].i] = 0; }
        pObj->a[aK[h-1].i] = 0;
        pObj->a[aK[g].i] = pLast;
        nDup += h-g-1;
      }
    }
    sqlite3_free(aK);
    if( nDup ){
      for(i=0, w=0; i<n; i++) if( pObj->a[i] ) pObj->a[w++] = pObj->a[i];
      pObj->nChild = w;
    }
    return SQLITE_OK;
  }
}

/* Give back the unused slots of container p's child array (called when a
** parsed container is complete: few grow afterwards; the next append
** doubles it again).  A failed realloc leaves it as it was. */
static void jShrink(JNode *p){
  if( !(p->flags & JF_A_ARENA) && p->nChild>0 && p->nAlloc>p->nChild ){
    JNode **a = sqlite3_realloc64(p->a, sizeof(JNode*)*(sqlite3_uint64)p->nChild);
    if( a ){ p->a = a; p->nAlloc = p->nChild; }
  }
}

JNode *jGet(const JNode *pObj, const char *zKey){
  int i;
  if( pObj==0 || pObj->type!=JT_OBJECT ) return 0;
  for(i=0; i<pObj->nChild; i++) if( strcmp(pObj->a[i]->zKey, zKey)==0 ) return pObj->a[i];
  return 0;
}

/* See jsontree.h. */
JNode *jGetOr(const JNode *pObj, const char *zKey, const char *zAlias){
  JNode *p = jGet(pObj, zKey);
  return p ? p : jGet(pObj, zAlias);
}

JNode *jAt(const JNode *pArr, int i){
  if( pArr==0 || (pArr->type!=JT_ARRAY && pArr->type!=JT_OBJECT) || i<0 || i>=pArr->nChild ) return 0;
  return pArr->a[i];
}

/* See jsontree.h. */
JNode *jClone(const JNode *p){
  JNode *c;
  int i;
  if( p==0 ) return jNull();
  switch( p->type ){
    case JT_TRUE:   return jBool(1);
    case JT_FALSE:  return jBool(0);
    case JT_INT:    return jInt(p->i);
    case JT_REAL:   return p->z ? jBigInt(p->z, p->n) : jReal(p->r);
    case JT_STRING: return jStr(p->z, p->n);
    case JT_ARRAY:
      c = jArr();
      for(i=0; c && i<p->nChild; i++) jPush(c, jClone(p->a[i]));
      if( c && c->oom ){ jFree(c); return 0; }
      return c;
    case JT_OBJECT:
      /* Appended, then made unique once (the keys of p are unique unless
      ** it was put together by hand): as jSet() per member, without its
      ** quadratic search. */
      c = jObj();
      for(i=0; c && !c->oom && i<p->nChild; i++){
        JNode *m = jClone(p->a[i]);
        if( m && jKeyInto(c, m, p->a[i]->zKey)==SQLITE_OK && jAppend(c, m)==SQLITE_OK ) continue;
        jFree(m);
        c->oom = 1;
      }
      if( c && !c->oom && jDedupe(c) ) c->oom = 1;
      if( c && c->oom ){ jFree(c); return 0; }
      return c;
    default:        return jNull();
  }
}

double jNum(const JNode *p){
  if( p==0 ) return 0.0;
  if( p->type==JT_INT ) return (double)p->i;
  if( p->type==JT_REAL ) return p->r;
  return 0.0;
}

sqlite3_int64 jNumI64(const JNode *p){
  double r;
  if( p && p->type==JT_INT ) return p->i;
  r = jNum(p);
  if( !(r==r) ) return 0;
  if( r>=9.2e18 ) return (sqlite3_int64)9200000000000000000LL;
  if( r<=-9.2e18 ) return -(sqlite3_int64)9200000000000000000LL;
  return (sqlite3_int64)r;
}

int jOom(const JNode *p){
  int i;
  if( p==0 ) return 1;
  if( p->oom ) return 1;
  for(i=0; i<p->nChild; i++) if( jOom(p->a[i]) ) return 1;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Python float repr                                                   */
/* ------------------------------------------------------------------ */
#ifdef __SIZEOF_INT128__
/* r rounded to nDig (15, 16 or 17) significant digits, for 1e-13 <= |r| <
** 1e15 given as |r| = m * 2^q and E = floor(log10(|r|)) (e10), computed
** exactly in 128-bit integers (no printf, no strtod), when that decimal
** reads back as r: writes the digits (trailing zeros dropped) to dig, the
** decimal exponent of the first one to *pExp, and returns their count;
** returns 0 when the decimal does not read back (shortDigits then tries
** more digits; outside the range jReprDouble searches with snprintf and
** strtod).
**
** With |r| = m * 2^q (m of 53 bits) and k = nDig-1 - E (E the decimal
** exponent of r), |r| * 10^k = m * 5^k / 2^t (t = -(q+k)) is rounded
** half-even to the nDig-digit integer N.  The decimal N * 10^-k reads back
** as r when it lies inside r's rounding interval: its distance from r,
** scaled by 10^k * 2^t, is below half of r's ulp scaled the same way, which
** is 5^k / 2 (a quarter of it below r when m is 2^52: the next double down
** is half an ulp away).  5^k is odd, so the distance never equals the bound
** (no tie to break).  Which lengths to try (Python's repr is the shortest
** that reads back, the nearest of that length):
**   - 15: if any string of at most 15 digits reads back, it is r rounded to
**     15 digits (the 15-digit grid is more than 4 ulps wide);
**   - 16: r rounded to 16 digits, or, when r is a power of two and that
**     decimal is below r and outside the quarter ulp, the next one up, which
**     may still be within the half ulp above (2^-44 = 5.684341886080802e-14,
**     not ...8015e-14);
**   - 17: r rounded to 17 digits always reads back. */
static int shortDigitsN(uint64_t m, int q, int e10, int nDig, char *dig, int *pExp){
  typedef unsigned __int128 U128;
  /* 5^0 .. 5^27 (5^27 < 2^63); 5^k beyond is 5^27 * 5^(k-27) */
  static const uint64_t aPow5[28] = {
    1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL, 390625ULL,
    1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL, 1220703125ULL,
    6103515625ULL, 30517578125ULL, 152587890625ULL, 762939453125ULL,
    3814697265625ULL, 19073486328125ULL, 95367431640625ULL, 476837158203125ULL,
    2384185791015625ULL, 11920928955078125ULL, 59604644775390625ULL,
    298023223876953125ULL, 1490116119384765625ULL, 7450580596923828125ULL };
  uint64_t lo, v;
  int k, t, i, nd, down;
  U128 pow5, P, N, rem, diff, hi;
  lo = aPow5[nDig-1] << (nDig-1);      /* 10^(nDig-1) = 5^(nDig-1) * 2^(nDig-1) */
  hi = (U128)lo * 10;
  for(i=0; ; i++){
    if( i>2 ) return 0;                 /* cannot happen: log10 is off by one at most */
    k = nDig - 1 - e10;
    if( k<0 || k>31 ) return 0;         /* 5^31 < 2^72: m * 5^k < 2^125 */
    pow5 = k<28 ? (U128)aPow5[k] : (U128)aPow5[27] * aPow5[k-27];
    P = (U128)m * pow5;
    t = -(q + k);
    if( t>=128 || t<-3 ) return 0;
    if( t<=0 ){ N = P << -t; rem = 0; }  /* an integer: -t is small here */
    else{ N = P >> t; rem = P & (((U128)1<<t)-1); }
    if( N>=hi ){ e10++; continue; }
    if( N<(U128)lo ){ e10--; continue; }
    break;
  }
  down = 1;                             /* N * 2^t <= P: the decimal is below r */
  if( t>0 ){
    U128 half = (U128)1<<(t-1);
    if( rem>half || (rem==half && (N & 1)) ){ N++; down = 0; }
    diff = down ? rem : ((U128)1<<t) - rem;
  }else{
    diff = 0;
  }
  if( nDig<17 ){
    int isPow2 = m==((uint64_t)1<<52);
    if( down && isPow2 ? 4*diff>=pow5 : 2*diff>=pow5 ){
      /* N is outside r's rounding interval; for a power of two below r,
      ** the next decimal up may be inside (see above; not for 15 digits) */
      U128 up;
      if( !(nDig==16 && down && isPow2 && t>0) ) return 0;
      up = ((U128)1<<t) - rem;
      if( 2*up>=pow5 ) return 0;
      N++;
    }
  }
  if( N==hi ){ N = lo; e10++; }
  v = (uint64_t)N;
  for(i=nDig-1; i>=0; i--){ dig[i] = (char)('0' + v%10); v /= 10; }
  nd = nDig;
  while( nd>1 && dig[nd-1]=='0' ) nd--;
  *pExp = e10;
  return nd;
}

/* The shortest repr digits of r by shortDigitsN() (15, then 16, then 17
** digits), r's binary and decimal exponents worked out once; 0 when r is
** outside 1e-13 <= |r| < 1e15. */
static int shortDigits(double r, char *dig, int *pExp){
  double a = fabs(r);
  uint64_t bits, m;
  int q, e10, nDig, nd = 0;
  if( !(a>=1e-13 && a<1e15) ) return 0;
  memcpy(&bits, &a, sizeof(bits));
  m = (bits & (((uint64_t)1<<52)-1)) | ((uint64_t)1<<52);
  q = (int)(bits>>52) - 1075;
  e10 = (int)floor(log10(a));
  for(nDig=15; nd==0 && nDig<=17; nDig++) nd = shortDigitsN(m, q, e10, nDig, dig, pExp);
  return nd;
}
#endif

void jReprDouble(double r, char *zBuf){
  char buf[40], dig[24];
  int prec, nd = 0, exp10 = 0, i, k;
  char *p;
  if( isnan(r) ){ strcpy(zBuf, "NaN"); return; }
  if( isinf(r) ){ strcpy(zBuf, r>0 ? "Infinity" : "-Infinity"); return; }
  if( r==0.0 ){ strcpy(zBuf, signbit(r) ? "-0.0" : "0.0"); return; }
  if( fabs(r)<1e16 && r==(double)(long long)r ){
    /* A whole number below 10^16 (exact as an integer): repr prints its
    ** digits and ".0" — no search needed. */
    int nInt = profsumFmtI64((int64_t)r, zBuf);
    memcpy(zBuf+nInt, ".0", 3);
    return;
  }
#ifdef __SIZEOF_INT128__
  nd = shortDigits(r, dig, &exp10);
#endif
  if( nd==0 ){
    /* Shortest digit string that round-trips (Python's repr).  If any
    ** string of at most 15 significant digits reads back as r, it is r
    ** correctly rounded to 15 digits with its trailing zeros dropped (a
    ** double's half-ulp is below half a unit of the 15th digit), so 15, 16
    ** and 17 digits are the only candidates to try; the zeros go below.
    ** Subnormals have fewer bits than that: every length is tried. */
    for(prec=fabs(r)<DBL_MIN ? 1 : 15; prec<=17; prec++){
      profsumFmtExp(buf, sizeof(buf), prec-1, r);
      if( prec==17 || profsumStrtod(buf, 0)==r ) break;
      if( prec==16 && fabs(r)>=DBL_MIN && frexp(fabs(r), &i)==0.5 ){
        /* A power of two: the next double down is half as far as the next
        ** one up, so the 16-digit decimal just above r may read back when
        ** the nearest one (below r) does not; repr then prints it (e.g.
        ** 2^-44 = 5.684341886080802e-14, not ...8015e-14). */
        char alt[40];
        const char *z = buf + (buf[0]=='-');
        uint64_t v = 0;
        int ex;
        for(; *z && *z!='e'; z++){ if( *z!='.' ) v = v*10 + (uint64_t)(*z - '0'); }
        ex = atoi(z+1);
        if( ++v==10000000000000000ULL ){ v = 1000000000000000ULL; ex++; }
        snprintf(alt, sizeof(alt), "%s%d.%015llue%d", r<0 ? "-" : "", (int)(v/1000000000000000ULL),
                 (unsigned long long)(v%1000000000000000ULL), ex);
        if( profsumStrtod(alt, 0)==r ){ memcpy(buf, alt, sizeof(alt)); break; }
      }
    }
    p = buf;
    if( *p=='-' ) p++;
    while( *p && *p!='e' ){ if( *p!='.' ) dig[nd++] = *p; p++; }
    exp10 = atoi(p+1);
    while( nd>1 && dig[nd-1]=='0' ) nd--;
  }
  k = 0;
  if( r<0 ) zBuf[k++] = '-';
  if( exp10>=-4 && exp10<16 ){
    if( exp10>=0 ){
      for(i=0; i<=exp10; i++) zBuf[k++] = i<nd ? dig[i] : '0';
      zBuf[k++] = '.';
      if( nd>exp10+1 ){ for(i=exp10+1; i<nd; i++) zBuf[k++] = dig[i]; }
      else zBuf[k++] = '0';
    }else{
      zBuf[k++] = '0'; zBuf[k++] = '.';
      for(i=0; i<-exp10-1; i++) zBuf[k++] = '0';
      for(i=0; i<nd; i++) zBuf[k++] = dig[i];
    }
    zBuf[k] = 0;
  }else{
    zBuf[k++] = dig[0];
    if( nd>1 ){ zBuf[k++] = '.'; for(i=1; i<nd; i++) zBuf[k++] = dig[i]; }
    sqlite3_snprintf(12, zBuf+k, "e%c%02d", exp10<0 ? '-' : '+', exp10<0 ? -exp10 : exp10);
  }
}

/* ------------------------------------------------------------------ */
/* Serialization                                                       */
/* ------------------------------------------------------------------ */

/* The output buffer of jDump(): text grown by doubling, appended to inline
** (a document of 100 KB is some 20,000 appends: a function call and an
** error check each through sqlite3_str cost a fifth of the dump). */
typedef struct JBuf {
  char *z;               /* text so far (not NUL-terminated until jDump ends) */
  sqlite3_uint64 n, nAlloc;
  int oom;               /* an allocation failed: the text is incomplete */
  /* The members of the objects being written, each object's in key order,
  ** one slice per nesting level on a stack that only grows: an object
  ** pushes its members above its parent's, orders them, writes them, pops
  ** them.  On the heap, not in dumpNode's frame: the recursion then costs
  ** the same stack per level as before (jParse accepts 2,000 levels). */
  const JNode **aOrd;
  int nOrd, nOrdAlloc;
  int compact;           /* profsumJsonCompact(): no newlines, ", " between items */
} JBuf;

/* The longest text jDump() returns: SQLite's default SQLITE_MAX_LENGTH, the
** most a result may hold (sqlite3_str stopped there too). */
#define JDUMP_MAX 1000000000

/* Make room for nMore more bytes; 0 when there is none (b->oom set). */
static int jbGrow(JBuf *b, sqlite3_uint64 nMore){
  sqlite3_uint64 nNew;
  char *zNew;
  if( b->oom ) return 0;
  if( b->n + nMore <= b->nAlloc ) return 1;
  if( b->n + nMore > JDUMP_MAX ){ b->oom = 1; return 0; }
  nNew = b->nAlloc ? b->nAlloc*2 : 4096;
  while( nNew < b->n + nMore ) nNew *= 2;
  zNew = sqlite3_realloc64(b->z, nNew);
  if( zNew==0 ){ b->oom = 1; return 0; }
  b->z = zNew;
  b->nAlloc = nNew;
  return 1;
}
static void jbAppend(JBuf *b, const char *z, sqlite3_uint64 n){
  if( b->n + n > b->nAlloc && !jbGrow(b, n) ) return;
  memcpy(b->z + b->n, z, (size_t)n);
  b->n += n;
}
static void jbChar(JBuf *b, char c){
  if( b->n >= b->nAlloc && !jbGrow(b, 1) ) return;
  b->z[b->n++] = c;
}
/* A newline and nIndent spaces (the start of a member or element); nothing
** in compact text. */
static void jbNewline(JBuf *b, int nIndent){
  if( b->compact ) return;
  if( b->n + (sqlite3_uint64)nIndent + 1 > b->nAlloc && !jbGrow(b, (sqlite3_uint64)nIndent + 1) ) return;
  b->z[b->n++] = '\n';
  memset(b->z + b->n, ' ', (size_t)nIndent);
  b->n += (sqlite3_uint64)nIndent;
}

/* The separator after a member or element that is not the last: ",", and
** ", " in compact text (the newline of jbNewline() follows in the other). */
static void jbSep(JBuf *b){
  jbAppend(b, ", ", b->compact ? 2 : 1);
}

/* 1 for the bytes a JSON string holds as they are (printable ASCII but '"'
** and '\\'); every other byte is escaped (ensure_ascii). */
static const unsigned char aJsonPlain[256] = {
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  1,1,0,1,1,1,1,1,1,1,1,1,1,1,1,1,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
  1,1,1,1,1,1,1,1,1,1,1,1,0,1,1,1,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
  1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
  0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0
};

/* The two-character JSON escape of byte c: of '"', '\\', newline, carriage
** return and tab, and with bBF of backspace and form feed too; 0 for any
** other byte (written as is, or as \u00XX, by the caller). */
static const char *jShortEscape(unsigned c, int bBF){
  switch( c ){
    case '"':  return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return bBF ? "\\b" : 0;
    case '\f': return bBF ? "\\f" : 0;
  }
  return 0;
}

/* Append a JSON string with Python's ensure_ascii escapes. */
static void dumpStr(JBuf *s, const char *z, int n){
  static const char hx[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char*)z, *e = u + n;
  jbChar(s, '"');
  while( u<e ){
    unsigned c = *u;
    if( aJsonPlain[c] ){
      /* A run of printable ASCII needs no escape: one append for all. */
      const unsigned char *r = u+1;
      while( r<e && aJsonPlain[*r] ) r++;
      jbAppend(s, (const char*)u, (sqlite3_uint64)(r-u));
      u = r;
      continue;
    }
    if( c<0x80 ){
      const char *zEsc = jShortEscape(c, 1);
      u++;
      if( zEsc ){
        jbAppend(s, zEsc, 2);
      }else{
        /* the other controls and DEL (printable ASCII took the run above) */
        char b[7] = {'\\','u','0','0', hx[c>>4], hx[c&15], 0};
        jbAppend(s, b, 6);
      }
      continue;
    }
    {
      /* Decode one UTF-8 sequence (invalid bytes → U+FFFD). */
      unsigned cp = 0xFFFD;
      int len = 1;
      char b[16];
      if( (c & 0xE0)==0xC0 && u+1<e && (u[1]&0xC0)==0x80 ){
        cp = ((c&0x1F)<<6) | (u[1]&0x3F); len = 2;
        if( cp<0x80 ){ cp = 0xFFFD; len = 1; }
      }else if( (c & 0xF0)==0xE0 && u+2<e && (u[1]&0xC0)==0x80 && (u[2]&0xC0)==0x80 ){
        cp = ((c&0x0F)<<12) | ((u[1]&0x3F)<<6) | (u[2]&0x3F); len = 3;
        /* overlong forms and UTF-16 surrogates (ED A0..BF xx) are not
        ** UTF-8: each byte becomes one U+FFFD, as Python's decoder does */
        if( cp<0x800 || (cp>=0xD800 && cp<=0xDFFF) ){ cp = 0xFFFD; len = 1; }
      }else if( (c & 0xF8)==0xF0 && u+3<e && (u[1]&0xC0)==0x80 && (u[2]&0xC0)==0x80 && (u[3]&0xC0)==0x80 ){
        cp = ((c&0x07)<<18) | ((u[1]&0x3F)<<12) | ((u[2]&0x3F)<<6) | (u[3]&0x3F); len = 4;
        if( cp<0x10000 || cp>0x10FFFF ){ cp = 0xFFFD; len = 1; }
      }
      u += len;
      if( cp>=0x10000 ){
        unsigned v = cp - 0x10000;
        sqlite3_snprintf(sizeof(b), b, "\\u%04x\\u%04x", 0xD800 + (v>>10), 0xDC00 + (v & 0x3FF));
      }else{
        sqlite3_snprintf(sizeof(b), b, "\\u%04x", cp);
      }
      jbAppend(s, b, strlen(b));
    }
  }
  jbChar(s, '"');
}

/* Compare two object members by key, bytewise (= code point order). */
static int cmpKey(const void *pa, const void *pb){
  const JNode *a = *(const JNode*const*)pa, *b = *(const JNode*const*)pb;
  return strcmp(a->zKey, b->zKey);
}

/* Objects of up to this many members are ordered by insertion (most are in
** order already, or nearly); larger ones by qsort. */
#define JDUMP_INSERTION 32

static void dumpNode(JBuf *s, const JNode *p, int indent);

/* A number node's text (out of line: its buffer stays out of dumpNode's
** recursive frame). */
static void __attribute__((noinline)) dumpNumber(JBuf *s, const JNode *p){
  char b[40];
  if( p->type==JT_INT ){
    jbAppend(s, b, (sqlite3_uint64)profsumFmtI64(p->i, b));
    return;
  }
  if( p->z ){            /* an integer beyond int64: its digits (jBigInt) */
    jbAppend(s, p->z, (sqlite3_uint64)p->n);
    return;
  }
  jReprDouble(p->r, b);
  jbAppend(s, b, strlen(b));
}

/* An object of n>0 members, in key order (see JBuf.aOrd). */
static void dumpObject(JBuf *s, const JNode *p, int indent){
  int n = p->nChild, base = s->nOrd, i, k;
  if( s->nOrd + n > s->nOrdAlloc ){
    int nNew = s->nOrdAlloc ? s->nOrdAlloc : 64;
    const JNode **aNew;
    while( nNew < s->nOrd + n ) nNew *= 2;
    aNew = sqlite3_realloc64(s->aOrd, sizeof(JNode*)*(sqlite3_uint64)nNew);
    if( aNew==0 ){ s->oom = 1; return; }
    s->aOrd = aNew;
    s->nOrdAlloc = nNew;
  }
  if( n<=JDUMP_INSERTION ){
    const JNode **a = s->aOrd + base;
    for(i=0; i<n; i++){
      const JNode *c = p->a[i];
      for(k=i; k>0 && strcmp(a[k-1]->zKey, c->zKey)>0; k--) a[k] = a[k-1];
      a[k] = c;
    }
  }else{
    memcpy(s->aOrd + base, p->a, sizeof(JNode*)*(size_t)n);
    qsort(s->aOrd + base, (size_t)n, sizeof(JNode*), cmpKey);
  }
  s->nOrd = base + n;
  jbChar(s, '{');
  for(i=0; i<n; i++){
    /* s->aOrd may move while a member is written (a nested object grows
    ** it): indexed afresh each time */
    const JNode *c = s->aOrd[base + i];
    jbNewline(s, indent+2);
    dumpStr(s, c->zKey, (int)strlen(c->zKey));
    jbAppend(s, ": ", 2);
    dumpNode(s, c, indent+2);
    if( i+1<n ) jbSep(s);
  }
  s->nOrd = base;
  jbNewline(s, indent);
  jbChar(s, '}');
}

static void dumpNode(JBuf *s, const JNode *p, int indent){
  int i;
  switch( p->type ){
    case JT_NULL: jbAppend(s, "null", 4); break;
    case JT_TRUE: jbAppend(s, "true", 4); break;
    case JT_FALSE: jbAppend(s, "false", 5); break;
    case JT_INT: case JT_REAL: dumpNumber(s, p); break;
    case JT_STRING: dumpStr(s, p->z, p->n); break;
    case JT_ARRAY:
      if( p->nChild==0 ){ jbAppend(s, "[]", 2); break; }
      jbChar(s, '[');
      for(i=0; i<p->nChild; i++){
        jbNewline(s, indent+2);
        dumpNode(s, p->a[i], indent+2);
        if( i+1<p->nChild ) jbSep(s);
      }
      jbNewline(s, indent);
      jbChar(s, ']');
      break;
    case JT_OBJECT:
      if( p->nChild==0 ){ jbAppend(s, "{}", 2); break; }
      dumpObject(s, p, indent);
      break;
  }
}

/* The text of p, indented (jDump) or compact: sqlite3_malloc'd, or 0 when
** out of memory (also when the tree itself records a failed allocation)
** or longer than JDUMP_MAX. */
static char *dumpText(const JNode *p, int compact){
  JBuf b;
  memset(&b, 0, sizeof(b));
  b.compact = compact;
  dumpNode(&b, p, 0);
  sqlite3_free(b.aOrd);
  jbChar(&b, 0);
  if( b.oom || jOom(p) ){
    sqlite3_free(b.z);
    return 0;
  }
  return b.z;
}

/* See jsontree.h. */
char *jDump(const JNode *p){
  return dumpText(p, 0);
}

/* See jsontree.h. */
char *profsumJsonCompact(const JNode *p){
  return dumpText(p, 1);
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */
typedef struct JP {
  const char *z, *e, *p;    /* the text, its end, the read position */
  char **pzErr;             /* where errors go (or 0) */
  int depth;                /* nesting of the value being read */
  int oom;
  sqlite3_int64 nValue;     /* values started so far */
  sqlite3_int64 mxValue;    /* the most allowed (JT_MAX_VALUES) */
} JP;

static void jpWs(JP *j){ while( j->p<j->e && (*j->p==' '||*j->p=='\t'||*j->p=='\n'||*j->p=='\r') ) j->p++; }

static JNode *jpFail(JP *j, const char *zWhy){
  if( j->pzErr && *j->pzErr==0 ){
    *j->pzErr = sqlite3_mprintf("invalid JSON at byte %lld: %s", (long long)(j->p - j->z), zWhy);
  }
  return 0;
}

/* The error of a document of more than j->mxValue values.  Returns 0. */
static JNode *jpTooBig(JP *j){
  if( j->pzErr && *j->pzErr==0 ){
    *j->pzErr = sqlite3_mprintf("JSON document too large: more than %lld values "
                                "(the limit of profsum's JSON reader)", (long long)j->mxValue);
  }
  return 0;
}

/* The number of values in the JSON text z[0..e), counted without building
** anything: 1 (the root), plus 1 per ',' and per non-empty array or object
** outside strings.  Exact for valid JSON; for other text only a number (the
** parse reports its error).  Stops counting at mx+1.  O(e-z), no memory. */
static sqlite3_int64 jpCountValues(const char *z, const char *e, sqlite3_int64 mx){
  sqlite3_int64 n = 1;
  while( z<e && n<=mx ){
    char c = *z++;
    if( c=='"' ){
      while( z<e && *z!='"' ) z += (*z=='\\' && z+1<e) ? 2 : 1;
      if( z<e ) z++;
    }else if( c==',' ){
      n++;
    }else if( c=='[' || c=='{' ){
      const char *q = z;
      while( q<e && (*q==' ' || *q=='\t' || *q=='\n' || *q=='\r') ) q++;
      if( q<e && *q!=']' && *q!='}' ) n++;
    }
  }
  return n;
}

/* See jsontree.h. */
unsigned jHex4(const char *p){
  unsigned v = 0; int i;
  for(i=0; i<4; i++){
    char c = p[i];
    v <<= 4;
    if( c>='0' && c<='9' ) v |= (unsigned)(c-'0');
    else if( c>='a' && c<='f' ) v |= (unsigned)(c-'a'+10);
    else if( c>='A' && c<='F' ) v |= (unsigned)(c-'A'+10);
    else return 0x110000;
  }
  return v;
}

/* Parse a string at j->p (at the quote) into a new sqlite3_malloc'd buffer. */
static char *jpString(JP *j, int *pn){
  sqlite3_str *s;
  char *z;
  const char *q;
  j->p++;
  /* Most strings hold no escape: copied at their exact size. */
  for(q=j->p; q<j->e && *q!='"' && *q!='\\' && (unsigned char)*q>=0x20; q++){}
  if( q<j->e && *q=='"' ){
    z = sqlite3_malloc64((sqlite3_uint64)(q - j->p) + 1);
    if( z==0 ){ j->oom = 1; return 0; }
    memcpy(z, j->p, (size_t)(q - j->p));
    z[q - j->p] = 0;
    *pn = (int)(q - j->p);
    j->p = q+1;
    return z;
  }
  s = sqlite3_str_new(0);
  while( j->p<j->e && *j->p!='"' ){
    if( *j->p=='\\' ){
      if( j->p+1>=j->e ) break;
      switch( j->p[1] ){
        case 'n': sqlite3_str_appendchar(s, 1, '\n'); j->p += 2; break;
        case 't': sqlite3_str_appendchar(s, 1, '\t'); j->p += 2; break;
        case 'r': sqlite3_str_appendchar(s, 1, '\r'); j->p += 2; break;
        case 'b': sqlite3_str_appendchar(s, 1, '\b'); j->p += 2; break;
        case 'f': sqlite3_str_appendchar(s, 1, '\f'); j->p += 2; break;
        case '"': case '\\': case '/': sqlite3_str_appendchar(s, 1, j->p[1]); j->p += 2; break;
        case 'u': {
          unsigned u;
          char b[4];
          if( j->e - j->p < 6 || (u = jHex4(j->p+2))>0xFFFF ){
            sqlite3_free(sqlite3_str_finish(s));
            jpFail(j, "bad \\u escape");
            return 0;
          }
          j->p += 6;
          if( u>=0xD800 && u<=0xDBFF && j->e - j->p >= 6 && j->p[0]=='\\' && j->p[1]=='u' ){
            unsigned u2 = jHex4(j->p+2);
            if( u2>=0xDC00 && u2<=0xDFFF ){ u = 0x10000 + ((u-0xD800)<<10) + (u2-0xDC00); j->p += 6; }
          }
          if( u>=0xD800 && u<=0xDFFF ) u = 0xFFFD;
          if( u<0x80 ){ b[0] = (char)u; sqlite3_str_append(s, b, 1); }
          else if( u<0x800 ){ b[0] = (char)(0xC0|(u>>6)); b[1] = (char)(0x80|(u&0x3F)); sqlite3_str_append(s, b, 2); }
          else if( u<0x10000 ){ b[0] = (char)(0xE0|(u>>12)); b[1] = (char)(0x80|((u>>6)&0x3F)); b[2] = (char)(0x80|(u&0x3F)); sqlite3_str_append(s, b, 3); }
          else{ b[0] = (char)(0xF0|(u>>18)); b[1] = (char)(0x80|((u>>12)&0x3F)); b[2] = (char)(0x80|((u>>6)&0x3F)); b[3] = (char)(0x80|(u&0x3F)); sqlite3_str_append(s, b, 4); }
          break;
        }
        default:
          sqlite3_free(sqlite3_str_finish(s));
          jpFail(j, "bad escape");
          return 0;
      }
    }else{
      if( (unsigned char)*j->p<0x20 ){
        sqlite3_free(sqlite3_str_finish(s));
        jpFail(j, "control character in a string");
        return 0;
      }
      sqlite3_str_appendchar(s, 1, *j->p);
      j->p++;
    }
  }
  if( j->p>=j->e ){
    sqlite3_free(sqlite3_str_finish(s));
    jpFail(j, "unterminated string");
    return 0;
  }
  j->p++;
  *pn = sqlite3_str_length(s);
  if( sqlite3_str_errcode(s) ){ sqlite3_free(sqlite3_str_finish(s)); j->oom = 1; return 0; }
  z = sqlite3_str_finish(s);
  if( z==0 ){ z = sqlite3_malloc64(1); if( z ) z[0] = 0; else j->oom = 1; }
  return z;
}

/* At the opening bracket of a container closed by cClose: skip it and
** white space.  1 when the container is empty (its close skipped too). */
static int jpOpen(JP *j, char cClose){
  j->p++;
  jpWs(j);
  if( j->p<j->e && *j->p==cClose ){ j->p++; return 1; }
  return 0;
}

/* After an element of a container closed by cClose: 1 at a ',' (another
** element follows), 0 at the close, both skipped; -1 at anything else. */
static int jpNext(JP *j, char cClose){
  jpWs(j);
  if( j->p<j->e && *j->p==',' ){ j->p++; return 1; }
  if( j->p<j->e && *j->p==cClose ){ j->p++; return 0; }
  return -1;
}

static JNode *jpValue(JP *j){
  JNode *p;
  int k;
  jpWs(j);
  if( j->p>=j->e ) return jpFail(j, "expected a value");
  if( ++j->depth > 2000 ) return jpFail(j, "nesting too deep");
  if( ++j->nValue > j->mxValue ) return jpTooBig(j);
  switch( *j->p ){
    case '{':
      p = jObj();
      if( p==0 ){ j->oom = 1; return 0; }
      if( jpOpen(j, '}') ) break;
      for(;;){
        char *zKey; int nKey; JNode *v;
        jpWs(j);
        if( j->p>=j->e || *j->p!='"' ){ jFree(p); return jpFail(j, "expected a key"); }
        zKey = jpString(j, &nKey);
        if( zKey==0 ){ jFree(p); return 0; }
        jpWs(j);
        if( j->p>=j->e || *j->p!=':' ){ sqlite3_free(zKey); jFree(p); return jpFail(j, "expected ':'"); }
        j->p++;
        v = jpValue(j);
        if( v==0 ){ sqlite3_free(zKey); jFree(p); return 0; }
        /* Appended as read (the key goes to the member as it is);
        ** repeated keys are resolved once the object is complete. */
        v->zKey = zKey;
        if( jAppend(p, v) ){ jFree(v); jFree(p); j->oom = 1; return 0; }
        k = jpNext(j, '}');
        if( k>0 ) continue;
        if( k==0 ) break;
        jFree(p);
        return jpFail(j, "expected ',' or '}'");
      }
      if( jDedupe(p) ){ jFree(p); j->oom = 1; return 0; }
      jShrink(p);
      break;
    case '[':
      p = jArr();
      if( p==0 ){ j->oom = 1; return 0; }
      if( jpOpen(j, ']') ) break;
      for(;;){
        JNode *v = jpValue(j);
        if( v==0 ){ jFree(p); return 0; }
        jPush(p, v);
        if( p->oom ){ jFree(p); j->oom = 1; return 0; }
        k = jpNext(j, ']');
        if( k>0 ) continue;
        if( k==0 ) break;
        jFree(p);
        return jpFail(j, "expected ',' or ']'");
      }
      jShrink(p);
      break;
    case '"': {
      int n;
      char *z = jpString(j, &n);
      if( z==0 ) return 0;
      p = jNew(JT_STRING);
      if( p==0 ){ sqlite3_free(z); j->oom = 1; return 0; }
      p->z = z; p->n = n;
      break;
    }
    default: {
      const char *q = j->p;
      if( j->e-q>=4 && memcmp(q, "null", 4)==0 ){ j->p += 4; p = jNull(); }
      else if( j->e-q>=4 && memcmp(q, "true", 4)==0 ){ j->p += 4; p = jBool(1); }
      else if( j->e-q>=5 && memcmp(q, "false", 5)==0 ){ j->p += 5; p = jBool(0); }
      else if( j->e-q>=3 && memcmp(q, "NaN", 3)==0 ){ j->p += 3; p = jReal(NAN); }
      else if( j->e-q>=8 && memcmp(q, "Infinity", 8)==0 ){ j->p += 8; p = jReal(INFINITY); }
      else if( j->e-q>=9 && memcmp(q, "-Infinity", 9)==0 ){ j->p += 9; p = jReal(-INFINITY); }
      else{
        int isReal = 0;
        char buf[64];
        const char *r = q;
        if( r<j->e && *r=='-' ) r++;
        if( r>=j->e || *r<'0' || *r>'9' ) return jpFail(j, "expected a value");
        while( r<j->e && ((*r>='0' && *r<='9') || *r=='.' || *r=='e' || *r=='E' || *r=='+' || *r=='-') ){
          if( *r=='.' || *r=='e' || *r=='E' ) isReal = 1;
          r++;
        }
        if( !isReal && r-q >= (int)sizeof(buf) ){
          /* an integer too long for buf: beyond int64 (see below) */
          const char *d = q + (*q=='-');
          while( d<r && *d>='0' && *d<='9' ) d++;
          if( d<r ) return jpFail(j, "invalid number");
          if( r-(q + (*q=='-')) > JT_MAX_INT_DIGITS ) return jpFail(j, "number too long");
          j->p = r;
          p = jBigInt(q, (int)(r-q));
          break;
        }
        if( r-q >= (int)sizeof(buf) ) return jpFail(j, "number too long");
        memcpy(buf, q, (size_t)(r-q));
        buf[r-q] = 0;
        j->p = r;
        if( !isReal ){
          /* the int64 range, its ends included (strtoll saturates beyond:
          ** ERANGE); beyond, its digits kept (jBigInt) */
          char *end;
          long long v;
          errno = 0;
          v = strtoll(buf, &end, 10);
          if( *end==0 && errno!=ERANGE ){ p = jInt(v); break; }
          if( *end==0 ){ p = jBigInt(buf, (int)(r-q)); break; }
        }
        {
          char *end;
          double v = profsumStrtod(buf, &end);
          if( *end ) return jpFail(j, "invalid number");
          p = jReal(v);
        }
      }
      break;
    }
  }
  j->depth--;
  if( p==0 ) j->oom = 1;
  return p;
}

/* See jsontree.h.  A text of at most 2 * JT_MAX_VALUES bytes cannot hold
** more (see there); a longer one is counted. */
/* A parser state over zJson[0..nJson) (nJson < 0: up to the NUL). */
static void jpInit(JP *j, const char *zJson, int nJson, char **pzErr){
  if( nJson<0 ) nJson = (int)strlen(zJson);
  memset(j, 0, sizeof(*j));
  j->z = j->p = zJson;
  j->e = zJson + nJson;
  j->pzErr = pzErr;
  j->mxValue = JT_MAX_VALUES;
}

int jCheckSize(const char *zJson, int nJson, char **pzErr){
  JP j;
  jpInit(&j, zJson, nJson, pzErr);
  nJson = (int)(j.e - j.z);
  if( (sqlite3_int64)nJson > 2*j.mxValue && jpCountValues(j.z, j.e, j.mxValue) > j.mxValue ){
    jpTooBig(&j);
    return SQLITE_TOOBIG;
  }
  return SQLITE_OK;
}

JNode *jParseOptions(const char *zJson, int nJson, int *pRc, char **pzErr){
  char *zE = 0;
  JNode *p = jParse(zJson, nJson, &zE);
  *pRc = SQLITE_OK;
  if( p==0 ){
    *pRc = zE ? SQLITE_ERROR : SQLITE_NOMEM;
    if( zE ) *pzErr = sqlite3_mprintf("options_json is not valid JSON: %s", zE);
    sqlite3_free(zE);
    return 0;
  }
  if( p->type!=JT_OBJECT ){
    jFree(p);
    *pRc = SQLITE_ERROR;
    *pzErr = sqlite3_mprintf("options_json must be a JSON object");
    return 0;
  }
  return p;
}

/* See jsontree.h. */
JNode *jParseQuiet(const char *zJson, int nJson, int *pRc){
  char *zE = 0;
  JNode *p = jParse(zJson, nJson, &zE);
  *pRc = p==0 && zE==0 ? SQLITE_NOMEM : SQLITE_OK;
  sqlite3_free(zE);
  if( p && jOom(p) ){ jFree(p); p = 0; *pRc = SQLITE_NOMEM; }
  return p;
}

JNode *jParse(const char *zJson, int nJson, char **pzErr){
  JP j;
  JNode *p;
  jpInit(&j, zJson, nJson, pzErr);
  /* jpValue() counts the values it builds and stops past the limit; a
  ** document over it is refused first, without a node built. */
  if( jCheckSize(zJson, (int)(j.e - j.z), pzErr) ) return 0;
  p = jpValue(&j);
  if( p ){
    jpWs(&j);
    if( j.p<j.e ){ jFree(p); return jpFail(&j, "extra data after the value"); }
  }
  return p;
}

/* See jsontree.h. */
void jAppendJsonStr(sqlite3_str *s, const char *z, int64_t n){
  int64_t i, j;
  sqlite3_str_appendchar(s, 1, '"');
  for(i=0; i<n; i=j+1){
    unsigned char c;
    const char *zEsc;
    j = i + profsumJsonPlainRun((const unsigned char*)z + i, n - i);
    if( j>i ) sqlite3_str_append(s, z+i, (int)(j-i));
    if( j>=n ) break;
    c = (unsigned char)z[j];
    zEsc = jShortEscape(c, 0);
    if( zEsc ) sqlite3_str_append(s, zEsc, 2);
    else sqlite3_str_appendf(s, "\\u%04x", c);
  }
  sqlite3_str_appendchar(s, 1, '"');
}
