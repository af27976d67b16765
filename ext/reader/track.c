/*
** track.c — the track model: the first pass over a trace that computes
** what a single streaming pass cannot.
**
**  * B/E pairing per (pid, tid) in (ts, file) order: an E closes the most
**    recent open B; the B gets the duration; unmatched B and E, and E names
**    that differ from their B, are diagnostics.
**  * Nesting and exclusive time per track (summary-v1-spec.md §2): the
**    track's slices (X with dur > 0 and matched B of any length, zero
**    included) ordered by (ts asc, end desc, file order); a stack sweep
**    gives depth, parent and exclusive time = max(0, dur − Σ full
**    durations of direct children).  Partial overlaps are diagnostics.
**    One addition to §2 for zero-length slices (X slices always have
**    dur > 0, so only B/E pairs at one ts): such a slice at the very end
**    of an open slice is its child (it starts and ends inside it, as the
**    B/E order says), not its sibling; its exclusive time is 0 and it adds
**    0 to its parent's child sum, so no exclusive time changes.
**  * Times are absolute exact picoseconds (128-bit ProfsumTrackRec.ts):
**    there is no origin, so the results depend neither on which event
**    comes first in the file nor on the columns a query selects.  Only a
**    duration longer than PROFSUM_TRK_MAXDUR (2^61 ps, about 26 days) is
**    out of range (time_out_of_range: the slice is on no track).
**  * The excl column (ns): the same sweep over the ns values the ts and dur
**    columns show (floor of the exact ps), so that exclusive_time(ts, dur)
**    over those rows gives exactly excl; slices shorter than 1 ns have
**    excl 0.  excl_ps is the exact exclusive time.
**  * Process and thread names from M events, wherever they appear (the
**    last one for a pid / (pid, tid) wins).
**  * Counts: entries, rows, X rows, X rows the summary accepts (§1.3);
**    zero/negative durations, unknown phases, suspected truncation.
**
** A track is an integer (pid, tid) pair; events whose pid or tid is not an
** integer (PyTorch writes "pid":"Spans") are on no track.  An XPlane file
** (read through the stream of evstream.c) has a track per line instead
** (ProfsumEvent.iTrack), also when two lines of a plane share a tid.
**
** Memory: one ProfsumTrackRec (80 bytes on x86-64/aarch64: ts is 128-bit)
** per X/B/E event when durations or track columns are needed, plus the
** name maps; nothing otherwise.  The sweeps add a temporary ordering (8
** bytes per slice; 48 per slice for the ns sweep) and a stack of the open
** slices.  All of it in blocks (the records, the stacks) or sorted runs
** merged in order (the orderings): no allocation grows with the trace, so
** SQLite's limit per allocation (under 2 GiB) bounds nothing.
** An import's own pass (ProfsumTrackDiag) keeps no record: its B/E events
** go to a compact log per track (belog.c, 5 to 12 bytes an event in
** ordinary traces), paired at the end track by track (pairLog): a track
** whose events came in (ts, file) order is read as it is, another is
** sorted alone (40 bytes per event of that track, while it is paired).
**
** Interrupts: the reads ask the calling thread's stop check (gz.c); the
** orderings ask it between the sorts of their runs (profsumStopAsk), and
** pairLog every 2^20 events it reads in place.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "belog.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* A small string → string hash map (M-event names)                    */
/* ------------------------------------------------------------------ */
typedef struct NameEntry {
  char *zKey;       /* canonical key ("i<pid>" / "t<text>", threads "<pid>|<tid>") */
  int nKey;
  char *zVal;       /* decoded name */
  int nVal;
  uint64_t h;       /* hash of the key */
} NameEntry;

struct ProfsumNameMap {
  NameEntry *a;     /* open-addressing table */
  int64_t nSlot;    /* power of two */
  int64_t nUsed;
};

static uint64_t fnv1a(const char *z, int64_t n){
  uint64_t h = 1469598103934665603ULL;
  int64_t i;
  for(i=0; i<n; i++){ h ^= (unsigned char)z[i]; h *= 1099511628211ULL; }
  return h ? h : 1;
}

static void nameMapFree(ProfsumNameMap *m){
  int64_t i;
  if( m==0 ) return;
  for(i=0; i<m->nSlot; i++){
    sqlite3_free(m->a[i].zKey);
    sqlite3_free(m->a[i].zVal);
  }
  sqlite3_free(m->a);
  sqlite3_free(m);
}

/* Find the slot of key z (or the empty slot where it would go). */
static NameEntry *nameMapSlot(ProfsumNameMap *m, const char *z, int n, uint64_t h){
  int64_t i = (int64_t)(h & (uint64_t)(m->nSlot-1));
  for(;;){
    NameEntry *e = &m->a[i];
    if( e->zKey==0 ) return e;
    if( e->h==h && e->nKey==n && memcmp(e->zKey, z, (size_t)n)==0 ) return e;
    i = (i+1) & (m->nSlot-1);
  }
}

/* Set key → value (copies both).  Returns SQLITE_OK or SQLITE_NOMEM. */
static int nameMapSet(ProfsumNameMap *m, const char *zK, int nK,
                      const char *zV, int64_t nV){
  uint64_t h = fnv1a(zK, nK);
  NameEntry *e;
  char *zVal;
  if( (m->nUsed+1)*2 > m->nSlot ){
    int64_t nNew = m->nSlot ? m->nSlot*2 : 64, i;
    NameEntry *aOld = m->a;
    int64_t nOld = m->nSlot;
    NameEntry *aNew = profsumMallocZero(sizeof(NameEntry)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    m->a = aNew;
    m->nSlot = nNew;
    for(i=0; i<nOld; i++){
      if( aOld[i].zKey ) *nameMapSlot(m, aOld[i].zKey, aOld[i].nKey, aOld[i].h) = aOld[i];
    }
    sqlite3_free(aOld);
  }
  e = nameMapSlot(m, zK, nK, h);
  zVal = sqlite3_malloc64((sqlite3_uint64)nV+1);
  if( zVal==0 ) return SQLITE_NOMEM;
  memcpy(zVal, zV, (size_t)nV);
  zVal[nV] = 0;
  if( e->zKey==0 ){
    e->zKey = sqlite3_malloc64((sqlite3_uint64)nK+1);
    if( e->zKey==0 ){ sqlite3_free(zVal); return SQLITE_NOMEM; }
    memcpy(e->zKey, zK, (size_t)nK);
    e->zKey[nK] = 0;
    e->nKey = nK;
    e->h = h;
    m->nUsed++;
  }else{
    sqlite3_free(e->zVal);
  }
  e->zVal = zVal;
  e->nVal = (int)nV;
  return SQLITE_OK;
}

/* Write the canonical key of a pid (and tid) into z; returns its length,
** or -1 when an id is absent/null (no name can apply) or too long. */
static int idKey(char *z, int nz, const ProfsumId *pid, const ProfsumId *tid){
  int n = 0, k;
  const ProfsumId *a[2];
  a[0] = pid; a[1] = tid;
  for(k=0; k<2 && a[k]; k++){
    const ProfsumId *id = a[k];
    if( k ) z[n++] = '|';
    if( id->kind==PROFSUM_ID_INT ){
      sqlite3_snprintf(nz-n, z+n, "i%lld", (long long)id->iVal);
      n += (int)strlen(z+n);
    }else if( id->kind==PROFSUM_ID_TEXT ){
      if( id->s.n > nz-n-4 ) return -1;
      z[n++] = 't';
      memcpy(z+n, id->s.z, (size_t)id->s.n);   /* raw (undecoded) text */
      n += (int)id->s.n;
    }else{
      return -1;
    }
  }
  return n;
}

/* See profsum_reader.h. */
const char *profsumNameLookup(ProfsumNameMap *m, const ProfsumId *pid,
                              const ProfsumId *tid, int64_t *pn){
  char zKey[512];
  int n;
  NameEntry *e;
  if( m==0 || m->nUsed==0 ) return 0;
  n = idKey(zKey, (int)sizeof(zKey), pid, tid);
  if( n<0 ) return 0;
  e = nameMapSlot(m, zKey, n, fnv1a(zKey, n));
  if( e->zKey==0 ) return 0;
  *pn = e->nVal;
  return e->zVal;
}

/* ------------------------------------------------------------------ */
/* Track interning: (pid, tid) integers → dense track id               */
/* ------------------------------------------------------------------ */
typedef struct TrackKey { int64_t pid, tid; int32_t id; int32_t used; } TrackKey;
typedef struct TrackSet { TrackKey *a; int64_t nSlot, nUsed; } TrackSet;

static uint64_t mix64(uint64_t x){
  x ^= x>>33; x *= 0xff51afd7ed558ccdULL; x ^= x>>33;
  x *= 0xc4ceb9fe1a85ec53ULL; x ^= x>>33;
  return x;
}

/* Return the track id of (pid, tid), creating it; -1 on OOM. */
static int32_t trackId(TrackSet *t, int64_t pid, int64_t tid){
  uint64_t h;
  int64_t i;
  if( (t->nUsed+1)*2 > t->nSlot ){
    int64_t nNew = t->nSlot ? t->nSlot*2 : 64, j;
    TrackKey *aOld = t->a;
    int64_t nOld = t->nSlot;
    TrackKey *aNew = profsumMallocZero(sizeof(TrackKey)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return -1;
    t->a = aNew;
    t->nSlot = nNew;
    for(j=0; j<nOld; j++){
      if( aOld[j].used ){
        int64_t k = (int64_t)(mix64((uint64_t)aOld[j].pid*31 ^ (uint64_t)aOld[j].tid) & (uint64_t)(nNew-1));
        while( aNew[k].used ) k = (k+1) & (nNew-1);
        aNew[k] = aOld[j];
      }
    }
    sqlite3_free(aOld);
  }
  h = mix64((uint64_t)pid*31 ^ (uint64_t)tid);
  i = (int64_t)(h & (uint64_t)(t->nSlot-1));
  while( t->a[i].used ){
    if( t->a[i].pid==pid && t->a[i].tid==tid ) return t->a[i].id;
    i = (i+1) & (t->nSlot-1);
  }
  t->a[i].used = 1;
  t->a[i].pid = pid;
  t->a[i].tid = tid;
  t->a[i].id = (int32_t)t->nUsed++;
  return t->a[i].id;
}

/* ------------------------------------------------------------------ */
/* Memory in blocks                                                    */
/* ------------------------------------------------------------------ */
/* Every array that grows with the trace is made of blocks (the records, see
** profsum_reader.h) or of sorted runs (the orderings below), so that no
** single allocation grows with the trace: SQLite allocates less than
** 2 GiB at a time, whatever memory is free.  A build may set
** PROFSUM_TRK_RUN_LOG (the tests' small-block build). */
#ifndef PROFSUM_TRK_RUN_LOG
# define PROFSUM_TRK_RUN_LOG 20             /* elements per sorted run: 2^20 */
#endif
#define TRK_RUN ((int64_t)1<<PROFSUM_TRK_RUN_LOG)
#define TRK_STK_LOG (PROFSUM_TRK_BLOCK_LOG<12 ? PROFSUM_TRK_BLOCK_LOG : 12)
#define TRK_STK_BLOCK ((int64_t)1<<TRK_STK_LOG)   /* stack elements a block */

/* A stack of szEl-byte elements in blocks of TRK_STK_BLOCK (a track's
** nesting depth is usually small, but a staircase of slices nests them
** all); blocks are kept until stkFree. */
typedef struct Stk {
  unsigned char **apBlk;     /* nBlk blocks (room for nBlkAlloc) */
  int64_t nBlk, nBlkAlloc;
  int64_t n;                 /* elements on the stack */
  size_t szEl;
} Stk;

/* Element i (0 <= i < n). */
static void *stkAt(const Stk *k, int64_t i){
  return k->apBlk[i>>TRK_STK_LOG] + (size_t)(i & (TRK_STK_BLOCK-1))*k->szEl;
}

/* Push an element (uninitialized): its address, or 0 when out of memory. */
static void *stkPush(Stk *k){
  int64_t iBlk = k->n>>TRK_STK_LOG;
  if( iBlk>=k->nBlk ){
    if( k->nBlk>=k->nBlkAlloc ){
      int64_t nNew = k->nBlkAlloc ? k->nBlkAlloc*2 : 8;
      unsigned char **ap = sqlite3_realloc64(k->apBlk, sizeof(unsigned char*)*(sqlite3_uint64)nNew);
      if( ap==0 ) return 0;
      k->apBlk = ap;
      k->nBlkAlloc = nNew;
    }
    k->apBlk[k->nBlk] = sqlite3_malloc64(k->szEl*(sqlite3_uint64)TRK_STK_BLOCK);
    if( k->apBlk[k->nBlk]==0 ) return 0;
    k->nBlk++;
  }
  return stkAt(k, k->n++);
}

static void stkFree(Stk *k){
  int64_t i;
  for(i=0; i<k->nBlk; i++) sqlite3_free(k->apBlk[i]);
  sqlite3_free(k->apBlk);
  memset(k, 0, sizeof(*k));
}

/* An ordering of n elements of szEl bytes: filled in runs of at most
** TRK_RUN elements (runsSlot), each run sorted (runsSort), then read in
** the order of xCmp by merging the runs (runsNext).  xCmp must be a total
** order (the comparisons below end on the entry index), so the order read
** is the one a single sort of all elements gives. */
typedef struct Runs {
  size_t szEl;
  int (*xCmp)(const void*, const void*);
  int64_t nRun;              /* ceil(n / TRK_RUN) */
  int64_t nFilled;           /* elements handed out by runsSlot */
  int64_t n;                 /* elements in all */
  unsigned char **apRun;     /* nRun runs (allocated as filled) */
  int64_t *aPos;             /* merge: the next element of each run */
  int64_t *aHeap;            /* merge: runs not yet exhausted, a min-heap */
  int64_t nHeap;
} Runs;

/* Prepare r for n elements.  SQLITE_OK or SQLITE_NOMEM. */
static int runsInit(Runs *r, size_t szEl, int (*xCmp)(const void*, const void*), int64_t n){
  memset(r, 0, sizeof(*r));
  r->szEl = szEl;
  r->xCmp = xCmp;
  r->n = n;
  r->nRun = (n + TRK_RUN - 1)/TRK_RUN;
  r->apRun = profsumMallocZero(sizeof(unsigned char*)*(sqlite3_uint64)r->nRun);
  if( r->apRun==0 ) return SQLITE_NOMEM;
  return SQLITE_OK;
}

/* Elements in run i. */
static int64_t runLen(const Runs *r, int64_t i){
  return i<r->nRun-1 ? TRK_RUN : r->n - (r->nRun-1)*TRK_RUN;
}

/* The next element to fill (at most n in all): its address, or 0 when
** out of memory. */
static void *runsSlot(Runs *r){
  int64_t iRun = r->nFilled / TRK_RUN, iOff = r->nFilled % TRK_RUN;
  if( iOff==0 ){
    size_t nByte = r->szEl*(size_t)runLen(r, iRun);
    r->apRun[iRun] = sqlite3_malloc64(nByte);
    if( r->apRun[iRun]==0 ) return 0;
    profsumPrefault(r->apRun[iRun], nByte);        /* written in full */
  }
  r->nFilled++;
  return r->apRun[iRun] + (size_t)iOff*r->szEl;
}

/* The head of run i in the merge. */
#define RUN_HEAD(r, i) ((r)->apRun[i] + (size_t)(r)->aPos[i]*(r)->szEl)

/* Restore the heap order from position j down. */
static void runsSift(Runs *r, int64_t j){
  for(;;){
    int64_t c = 2*j+1, m = j;
    if( c<r->nHeap && r->xCmp(RUN_HEAD(r, r->aHeap[c]), RUN_HEAD(r, r->aHeap[m]))<0 ) m = c;
    if( c+1<r->nHeap && r->xCmp(RUN_HEAD(r, r->aHeap[c+1]), RUN_HEAD(r, r->aHeap[m]))<0 ) m = c+1;
    if( m==j ) return;
    { int64_t t = r->aHeap[j]; r->aHeap[j] = r->aHeap[m]; r->aHeap[m] = t; }
    j = m;
  }
}

/* Sort each run (all n elements filled), asking the thread's stop check
** between runs, and start the merge.  SQLITE_OK, SQLITE_INTERRUPT or
** SQLITE_NOMEM. */
static int runsSort(Runs *r){
  int64_t i;
  for(i=0; i<r->nRun; i++){
    if( i>0 && profsumStopAsk() ) return SQLITE_INTERRUPT;
    qsort(r->apRun[i], (size_t)runLen(r, i), r->szEl, r->xCmp);
  }
  r->aPos = sqlite3_malloc64(sizeof(int64_t)*2*(sqlite3_uint64)(r->nRun ? r->nRun : 1));
  if( r->aPos==0 ) return SQLITE_NOMEM;
  r->aHeap = r->aPos + r->nRun;
  for(i=0; i<r->nRun; i++){ r->aPos[i] = 0; r->aHeap[i] = i; }
  r->nHeap = r->nRun;
  for(i=r->nHeap/2; i>=0; i--) runsSift(r, i);
  return SQLITE_OK;
}

/* The next element in order (its address: valid until runsFree), or 0
** after the last. */
static void *runsNext(Runs *r){
  int64_t iRun;
  void *pEl;
  if( r->nHeap==0 ) return 0;
  iRun = r->aHeap[0];
  pEl = RUN_HEAD(r, iRun);
  if( ++r->aPos[iRun]==runLen(r, iRun) ){
    r->aHeap[0] = r->aHeap[--r->nHeap];        /* run exhausted */
  }
  if( r->nHeap>1 ) runsSift(r, 0);
  return pEl;
}

static void runsFree(Runs *r){
  int64_t i;
  for(i=0; i<r->nRun && r->apRun; i++) sqlite3_free(r->apRun[i]);
  sqlite3_free(r->apRun);
  sqlite3_free(r->aPos);
  memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* The first pass                                                      */
/* ------------------------------------------------------------------ */
/* Longest duration on a track, 2^61 ps (about 26 days; longer is
** out of range, as docs/trace_events.md says): sums of child durations stay
** far from int64 overflow. */
#define PROFSUM_TRK_MAXDUR ((int64_t)1<<61)

typedef struct Analyze {
  ProfsumTrackInfo *pInfo;
  ProfsumBeLog *pBe;         /* an import's pass (ProfsumTrackDiag): its B and
                             ** E events go to this log, not to records */
  int64_t nAlloc;            /* records the blocks hold */
  int64_t nBlkSlot;          /* entries of pInfo->apRec */
  TrackSet tracks;
  ProfsumDiagFn xDiag;
  void *pDiagCtx;
  const char *zFunc;         /* for messages */
  const char *zPath;
  char **pzErr;
} Analyze;

#define REC_PREFAULT 1024     /* records whose pages are mapped at a time */
#define REC_FIRST    4096     /* the first block's first size (it doubles up
                              ** to a whole block, so a small trace takes
                              ** little memory) */

/* Set the error of the pass: "<func>: '<path>': <text>" (0 when that
** cannot be made: out of memory).  Returns rc. */
static int trkErr(Analyze *a, int rc, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  profsumErrSetV(a->pzErr, a->zFunc, a->zPath, zFmt, ap);
  va_end(ap);
  return rc;
}

/* The error of an ordering step that did not return SQLITE_OK: an
** interrupt, or out of memory ordering n things (zWhat). */
static int trkOrderErr(Analyze *a, int rc, int64_t n, const char *zWhat){
  if( rc==SQLITE_INTERRUPT ){
    sqlite3_free(*a->pzErr);
    *a->pzErr = sqlite3_mprintf("%s: interrupted", a->zFunc);
    return rc;
  }
  return trkErr(a, rc, "out of memory ordering %lld %s", (long long)n, zWhat);
}

/* Append a record; returns it or NULL on OOM. */
static ProfsumTrackRec *recAppend(Analyze *a){
  ProfsumTrackInfo *p = a->pInfo;
  int64_t i = p->nRec, iOff;
  if( i>=a->nAlloc ){
    int64_t iBlk = i>>PROFSUM_TRK_BLOCK_LOG;
    if( iBlk>=a->nBlkSlot ){
      int64_t nNew = a->nBlkSlot ? a->nBlkSlot*2 : 16;
      ProfsumTrackRec **ap = sqlite3_realloc64(p->apRec, sizeof(ProfsumTrackRec*)*(sqlite3_uint64)nNew);
      if( ap==0 ) return 0;
      memset(ap + a->nBlkSlot, 0, sizeof(ProfsumTrackRec*)*(size_t)(nNew - a->nBlkSlot));
      p->apRec = ap;
      a->nBlkSlot = nNew;
    }
    if( iBlk==0 ){
      /* the first block grows by doubling (records move: nothing points
      ** at them before the reading ends) */
      int64_t nNew = a->nAlloc ? a->nAlloc*2 : REC_FIRST;
      ProfsumTrackRec *aNew;
      if( nNew>PROFSUM_TRK_BLOCK ) nNew = PROFSUM_TRK_BLOCK;
      aNew = sqlite3_realloc64(p->apRec[0], sizeof(ProfsumTrackRec)*(sqlite3_uint64)nNew);
      if( aNew==0 ) return 0;
      p->apRec[0] = aNew;
      a->nAlloc = nNew;
    }else{
      p->apRec[iBlk] = sqlite3_malloc64(sizeof(ProfsumTrackRec)*(sqlite3_uint64)PROFSUM_TRK_BLOCK);
      if( p->apRec[iBlk]==0 ) return 0;
      a->nAlloc += PROFSUM_TRK_BLOCK;
    }
  }
  iOff = i & (PROFSUM_TRK_BLOCK-1);
  if( (iOff & (REC_PREFAULT-1))==0 ){
    /* the pages of the next REC_PREFAULT records (or the rest of the
    ** block) in one call (ext/prefault.c) */
    int64_t nPre = a->nAlloc - i;
    if( nPre>PROFSUM_TRK_BLOCK - iOff ) nPre = PROFSUM_TRK_BLOCK - iOff;
    if( nPre>REC_PREFAULT ) nPre = REC_PREFAULT;
    profsumPrefault(profsumTrackRec(p, i), sizeof(ProfsumTrackRec)*(size_t)nPre);
  }
  p->nRec++;
  return profsumTrackRec(p, i);
}

static const char *phKnown = "BEXiICMbensftPONDSTpFRc()";

/* The end of record r, in absolute ps (no overflow: |ts| < 10^38 and
** dur <= PROFSUM_TRK_MAXDUR on tracks). */
#define REC_END(r) ((r)->ts + (r)->dur)

/* qsort has no context argument in C11: the permutation elements carry
** pointers to the records, so no global state is needed (several
** connections may analyze at once). */
typedef struct PermEnt { ProfsumTrackRec *r; } PermEnt;

/* B/E pairing order: (track, ts, file order). */
static int cmpPair(const void *pa, const void *pb){
  const ProfsumTrackRec *a = ((const PermEnt*)pa)->r, *b = ((const PermEnt*)pb)->r;
  if( a->trk!=b->trk ) return a->trk<b->trk ? -1 : 1;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  return a->idx<b->idx ? -1 : (a->idx>b->idx);
}

/* Nesting order: (track, ts asc, end desc, file order). */
static int cmpNest(const void *pa, const void *pb){
  const ProfsumTrackRec *a = ((const PermEnt*)pa)->r, *b = ((const PermEnt*)pb)->r;
  if( a->trk!=b->trk ) return a->trk<b->trk ? -1 : 1;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  if( REC_END(a)!=REC_END(b) ) return REC_END(a)>REC_END(b) ? -1 : 1;
  return a->idx<b->idx ? -1 : (a->idx>b->idx);
}

/* Emit a track diagnostic of the event at entry idx, byte offset iOffset
** (nothing without a->xDiag). */
static void trackDiagV(Analyze *a, int64_t idx, int64_t iOffset, const char *zKind,
                       const char *zFmt, va_list ap){
  char z[200];
  if( a->xDiag==0 ) return;
  sqlite3_vsnprintf((int)sizeof(z), z, zFmt, ap);
  a->xDiag(a->pDiagCtx, idx, iOffset, zKind, z);
}

/* Emit a track diagnostic of the event at entry idx, byte offset iOffset. */
static void trackDiagAt(Analyze *a, int64_t idx, int64_t iOffset, const char *zKind,
                        const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  trackDiagV(a, idx, iOffset, zKind, zFmt, ap);
  va_end(ap);
}

/* Emit a track diagnostic of record r. */
static void trackDiag(Analyze *a, const ProfsumTrackRec *r, const char *zKind,
                      const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  trackDiagV(a, r->idx, r->iOffset, zKind, zFmt, ap);
  va_end(ap);
}

/* One ordered pass over some of the records: the runs that order them and
** the stack of the sweep over them. */
typedef struct Sweep {
  Runs runs;
  Stk stk;
  int64_t n;                 /* records in the pass */
} Sweep;

/* Start a pass over the records r with xPick(r), an element of szEl bytes
** each (set by xSet(pEl, r)) read in the order of xCmp, with an empty
** stack of szStk-byte elements.  SQLITE_OK (runsNext(&s->runs) then reads
** the elements: none when s->n is 0, and nothing is allocated), or
** SQLITE_NOMEM / SQLITE_INTERRUPT; sweepEnd ends the pass either way.
** Inline, so that the callbacks are too. */
static inline __attribute__((always_inline)) int sweepBegin(
  Analyze *a, Sweep *s, size_t szEl, int (*xCmp)(const void*, const void*),
  int (*xPick)(ProfsumTrackRec*), void (*xSet)(void*, ProfsumTrackRec*), size_t szStk
){
  ProfsumTrackInfo *p = a->pInfo;
  int64_t i;
  int rc;
  memset(s, 0, sizeof(*s));
  s->stk.szEl = szStk;
  for(i=0; i<p->nRec; i++) if( xPick(profsumTrackRec(p, i)) ) s->n++;
  if( s->n==0 ) return SQLITE_OK;
  rc = runsInit(&s->runs, szEl, xCmp, s->n);
  for(i=0; rc==SQLITE_OK && i<p->nRec; i++){
    ProfsumTrackRec *r = profsumTrackRec(p, i);
    void *pEl;
    if( !xPick(r) ) continue;
    pEl = runsSlot(&s->runs);
    if( pEl==0 ){ rc = SQLITE_NOMEM; break; }
    xSet(pEl, r);
  }
  if( rc==SQLITE_OK ) rc = runsSort(&s->runs);
  return rc;
}

/* End the pass s: free it.  Returns rc, its code, after setting the pass's
** error for one (ordering the records, named zWhat). */
static int sweepEnd(Analyze *a, Sweep *s, int rc, const char *zWhat){
  runsFree(&s->runs);
  stkFree(&s->stk);
  return rc ? trkOrderErr(a, rc, s->n, zWhat) : SQLITE_OK;
}

/* xSet of the passes whose elements are PermEnt. */
static void setPerm(void *pEl, ProfsumTrackRec *r){ ((PermEnt*)pEl)->r = r; }

/* xPick of B/E pairing: the B and E records. */
static int isBE(ProfsumTrackRec *r){ return r->ph!='X'; }

/* The diagnostics of the B/E pairing, in one place for both pairings
** (pairBE over the records, pairLog over an import's log).  An open B
** left at the end of its track: */
static void pairOpenLeft(Analyze *a, int64_t idx, int64_t iOffset){
  trackDiagAt(a, idx, iOffset, "unmatched_begin", "B event has no matching E on its track; dur is NULL");
}

/* An E with no B open on its track. */
static void pairNoOpen(Analyze *a, int64_t idx, int64_t iOffset){
  trackDiagAt(a, idx, iOffset, "unmatched_end", "E event with no open B on its track");
}

/* The B b closed by the E e (e after b in the pairing's (ts, idx) order
** on b's track): a slice too long (time_out_of_range of b) and names that
** differ (mismatched_end of e) are reported.  Returns b's duration in ps,
** -1 when it passes INT64_MAX. */
static int64_t pairClose(Analyze *a, const ProfsumBeEv *b, const ProfsumBeEv *e){
  /* e->ts >= b->ts (sorted); the unsigned difference is exact even when
  ** the signed one would overflow (|ts| < 10^38 each). */
  unsigned __int128 span = (unsigned __int128)e->ts - (unsigned __int128)b->ts;
  int64_t dur = span<=(unsigned __int128)INT64_MAX ? (int64_t)span : -1;
  if( span>(unsigned __int128)PROFSUM_TRK_MAXDUR ){
    trackDiagAt(a, b->idx, b->iOffset, "time_out_of_range",
                "B/E slice longer than 2^61 ps (about 26 days)%s; on no track",
                dur<0 ? ", dur is NULL" : "");
  }
  if( e->nameHash && b->nameHash && e->nameHash!=b->nameHash ){
    trackDiagAt(a, e->idx, e->iOffset, "mismatched_end",
                "E event's name differs from the B it closes (entry %lld)", (long long)b->idx);
  }
  return dur;
}

/* What the pairing reads of record r (a B or E). */
static ProfsumBeEv recBe(const ProfsumTrackRec *r){
  ProfsumBeEv e;
  memset(&e, 0, sizeof(e));
  e.ts = r->ts;
  e.idx = r->idx;
  e.iOffset = r->iOffset;
  e.nameHash = r->nameHash;
  e.ph = r->ph;
  return e;
}

/* Pair B and E records.  Returns SQLITE_OK, or SQLITE_NOMEM /
** SQLITE_INTERRUPT with the pass's error set. */
static int pairBE(Analyze *a){
  Sweep s;
  Stk *k = &s.stk;
  PermEnt *pe;
  ProfsumTrackRec *r;
  int rc = sweepBegin(a, &s, sizeof(PermEnt), cmpPair, isBE, setPerm, sizeof(ProfsumTrackRec*));
  while( rc==SQLITE_OK ){
    pe = runsNext(&s.runs);
    r = pe ? pe->r : 0;
    if( k->n>0 && (r==0 || r->trk!=(*(ProfsumTrackRec**)stkAt(k, k->n-1))->trk) ){
      /* Track changed: whatever is still open is unmatched. */
      while( k->n>0 ){
        ProfsumTrackRec *b = *(ProfsumTrackRec**)stkAt(k, --k->n);
        pairOpenLeft(a, b->idx, b->iOffset);
      }
    }
    if( r==0 ) break;
    if( r->ph=='B' ){
      ProfsumTrackRec **pp = stkPush(k);
      if( pp==0 ){ rc = SQLITE_NOMEM; break; }
      *pp = r;
    }else if( k->n==0 ){
      pairNoOpen(a, r->idx, r->iOffset);
    }else{
      ProfsumTrackRec *b = *(ProfsumTrackRec**)stkAt(k, --k->n);
      ProfsumBeEv eb = recBe(b), ee = recBe(r);
      r->beginIdx = b->idx;
      b->dur = pairClose(a, &eb, &ee);
    }
  }
  return sweepEnd(a, &s, rc, "B/E events");
}

/* The pairing order of one track's events (ProfsumBeEv): ts, then file
** order (cmpPair within a track). */
static int cmpBeEv(const void *pa, const void *pb){
  const ProfsumBeEv *a = (const ProfsumBeEv*)pa, *b = (const ProfsumBeEv*)pb;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  return a->idx<b->idx ? -1 : (a->idx>b->idx);
}

/* One event of a log's track in the pairing's order: a B is opened (pushed
** on k, a stack of ProfsumBeEv), an E closes the B opened last, as in
** pairBE.  SQLITE_OK or SQLITE_NOMEM. */
static int pairLogStep(Analyze *a, Stk *k, const ProfsumBeEv *ev){
  if( ev->ph=='B' ){
    ProfsumBeEv *p = stkPush(k);
    if( p==0 ) return SQLITE_NOMEM;
    *p = *ev;
  }else if( k->n==0 ){
    pairNoOpen(a, ev->idx, ev->iOffset);
  }else{
    k->n--;
    (void)pairClose(a, (const ProfsumBeEv*)stkAt(k, k->n), ev);
  }
  return SQLITE_OK;
}

/* Pair the B and E events of an import's log (a->pBe) as pairBE pairs
** records: track by track in track order, each track's events in (ts,
** idx) order, its B still open at its end reported last (the one opened
** last first), so the diagnostics and their order are pairBE's.  A track
** whose events came in that order is read as it is (memory: the stack of
** its open B, 40 bytes each); another is ordered first (sorted runs of
** its events, 40 bytes each).  Each track's events are freed once paired.
** Returns SQLITE_OK, or SQLITE_NOMEM / SQLITE_INTERRUPT with the pass's
** error set. */
static int pairLog(Analyze *a){
  ProfsumBeLog *L = a->pBe;
  int64_t trk, nTrk = profsumBeLogTracks(L), nRead = 0;
  Stk k;
  int rc = SQLITE_OK;
  memset(&k, 0, sizeof(k));
  k.szEl = sizeof(ProfsumBeEv);
  for(trk=0; trk<nTrk; trk++){
    int64_t n = profsumBeLogCount(L, trk);
    ProfsumBeCursor c;
    ProfsumBeEv ev;
    if( n==0 ) continue;
    profsumBeLogFirst(L, trk, &c);
    if( profsumBeLogInOrder(L, trk) ){
      while( rc==SQLITE_OK && profsumBeLogNext(&c, &ev) ){
        rc = pairLogStep(a, &k, &ev);
        if( rc==SQLITE_OK && (++nRead & 0xfffff)==0 && profsumStopAsk() ) rc = SQLITE_INTERRUPT;
      }
    }else{
      Runs r;
      void *pEl;
      rc = runsInit(&r, sizeof(ProfsumBeEv), cmpBeEv, n);
      while( rc==SQLITE_OK && profsumBeLogNext(&c, &ev) ){
        ProfsumBeEv *p = runsSlot(&r);
        if( p==0 ) rc = SQLITE_NOMEM; else *p = ev;
      }
      if( rc==SQLITE_OK ) rc = runsSort(&r);
      while( rc==SQLITE_OK && (pEl = runsNext(&r))!=0 ) rc = pairLogStep(a, &k, (const ProfsumBeEv*)pEl);
      runsFree(&r);
    }
    if( rc ){
      trkOrderErr(a, rc, n, "B/E events");
      break;
    }
    while( k.n>0 ){
      const ProfsumBeEv *b = (const ProfsumBeEv*)stkAt(&k, --k.n);
      pairOpenLeft(a, b->idx, b->iOffset);
    }
    profsumBeLogDrop(L, trk);
  }
  stkFree(&k);
  return rc;
}

/* Is record r a slice of the track model?  X with dur > 0 and matched B of
** any length (dur >= 0), within PROFSUM_TRK_MAXDUR. */
static int onTrack(ProfsumTrackRec *r){
  if( r->ph=='X' ) return r->dur>0 && r->dur<=PROFSUM_TRK_MAXDUR;
  if( r->ph=='B' ) return r->dur>=0 && r->dur<=PROFSUM_TRK_MAXDUR;
  return 0;
}

/* Must the open slice t be finalized before slice r is pushed?  §2: when
** r starts at or after t's end; except that a zero-length r exactly at the
** end of a longer t is t's child (see the file comment). */
static int endsBefore(const ProfsumTrackRec *t, const ProfsumTrackRec *r){
  if( r->ts > REC_END(t) ) return 1;
  if( r->ts < REC_END(t) ) return 0;
  return !(r->dur==0 && t->dur>0);
}

/* An open slice of a nesting sweep (the stack's elements): what it stands
** for (a record, or the run element of one, which stays in place until
** the runs are freed), its track, its duration in the sweep's unit, the
** durations of its direct children so far, and where its exclusive time
** goes. */
typedef struct NestOpen {
  void *pEl;
  int32_t trk;
  int64_t dur, child;
  int64_t *pExcl;
} NestOpen;

/* The open slice on top of the sweep's stack k (not empty). */
static NestOpen *nestTop(const Stk *k){ return (NestOpen*)stkAt(k, k->n-1); }
/* The record on top of the ps sweep's stack k (not empty). */
static ProfsumTrackRec *topRec(const Stk *k){ return (ProfsumTrackRec*)nestTop(k)->pEl; }

/* Open a slice on k: pEl on track trk, of duration dur, its exclusive time
** to go to *pExcl.  SQLITE_OK or SQLITE_NOMEM. */
static int nestOpen(Stk *k, void *pEl, int32_t trk, int64_t dur, int64_t *pExcl){
  NestOpen *o = stkPush(k);
  if( o==0 ) return SQLITE_NOMEM;
  o->pEl = pEl;
  o->trk = trk;
  o->dur = dur;
  o->child = 0;
  o->pExcl = pExcl;
  return SQLITE_OK;
}

/* Close the top slice of k: pop it, set its exclusive time (its duration
** less its children's, at least 0) and add its duration to its parent's
** children. */
static inline void nestClose(Stk *k){
  NestOpen *o = (NestOpen*)stkAt(k, --k->n);
  int64_t ex = o->dur - o->child;
  *o->pExcl = ex>0 ? ex : 0;
  if( k->n>0 ) nestTop(k)->child += o->dur;
}

/* The next slice is on track trk: when that is another track, close every
** slice still open. */
static void nestTrack(Stk *k, int32_t trk){
  if( k->n>0 && nestTop(k)->trk!=trk ){
    while( k->n>0 ) nestClose(k);
  }
}

/* A nesting sweep: the records xPick chooses, as sweepBegin orders them
** (szEl, xCmp, xSet), each handed to xStep(a, k, pEl) with k the stack of
** open slices (NestOpen); the slices still open at the end are closed.
** Returns SQLITE_OK, or SQLITE_NOMEM / SQLITE_INTERRUPT with the pass's
** error set (naming zWhat); nothing allocated is kept.  Inline, so that
** the callbacks are too. */
static inline __attribute__((always_inline)) int nestSweep(
  Analyze *a, size_t szEl, int (*xCmp)(const void*, const void*),
  int (*xPick)(ProfsumTrackRec*), void (*xSet)(void*, ProfsumTrackRec*),
  int (*xStep)(Analyze*, Stk*, void*), const char *zWhat
){
  Sweep s;
  void *pEl;
  int rc = sweepBegin(a, &s, szEl, xCmp, xPick, xSet, sizeof(NestOpen));
  while( rc==SQLITE_OK && (pEl = runsNext(&s.runs))!=0 ) rc = xStep(a, &s.stk, pEl);
  while( rc==SQLITE_OK && s.stk.n>0 ) nestClose(&s.stk);
  return sweepEnd(a, &s, rc, zWhat);
}

/* nestSweep's step of the ps sweep: slice pEl (a PermEnt) is nested in
** the open slice that holds it, closing those that end before it and
** those it overlaps partly (reported); sets its depth and parent. */
static int nestStep(Analyze *a, Stk *k, void *pEl){
  ProfsumTrackRec *r = ((PermEnt*)pEl)->r;
  nestTrack(k, r->trk);
  while( k->n>0 && endsBefore(topRec(k), r) ) nestClose(k);
  while( k->n>0 && REC_END(r) > REC_END(topRec(k)) ){
    trackDiag(a, r, "partial_overlap",
              "starts inside entry %lld but ends after it; not nested in it",
              (long long)topRec(k)->idx);
    nestClose(k);
  }
  r->depth = (int32_t)k->n;
  r->parent = k->n>0 ? topRec(k)->idx : -1;
  return nestOpen(k, r, r->trk, r->dur, &r->excl);
}

/* Nesting and exclusive time over the onTrack() records: sets depth,
** parent and excl of each.  Returns SQLITE_OK, or SQLITE_NOMEM /
** SQLITE_INTERRUPT with the pass's error set (nothing allocated is
** kept). */
static int nestTracks(Analyze *a){
  return nestSweep(a, sizeof(PermEnt), cmpNest, onTrack, setPerm, nestStep, "slices");
}

/* Floor division of a by 1000. */
static profsum_ps floorK(profsum_ps a){
  profsum_ps q = a/1000;
  if( a%1000 < 0 ) q -= 1;
  return q;
}

/* A slice of the ns sweep: absolute ns start (128-bit, as the ts column
** shows it before its int64 range check) and ns duration. */
typedef struct NsEnt { profsum_ps ts; int64_t d, idx; int32_t trk; ProfsumTrackRec *r; } NsEnt;
#define NS_END(e) ((e)->ts + (e)->d)

/* The slice on top of the ns sweep's stack k (not empty). */
static NsEnt *topNs(const Stk *k){ return (NsEnt*)nestTop(k)->pEl; }

/* (track, ts asc, end desc, file order) in the ns domain. */
static int cmpNs(const void *pa, const void *pb){
  const NsEnt *a = (const NsEnt*)pa, *b = (const NsEnt*)pb;
  if( a->trk!=b->trk ) return a->trk<b->trk ? -1 : 1;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  if( NS_END(a)!=NS_END(b) ) return NS_END(a)>NS_END(b) ? -1 : 1;
  return a->idx<b->idx ? -1 : (a->idx>b->idx);
}

/* xPick of the ns sweep: the slices (excl set) at least 1 ns long; a
** shorter one gets its exclNs, 0, here. */
static int nsPick(ProfsumTrackRec *r){
  if( r->excl<0 ) return 0;
  if( r->dur/1000==0 ){ r->exclNs = 0; return 0; }
  return 1;
}

/* xSet of the ns sweep: the slice's ts and dur floored to ns. */
static void nsSet(void *pEl, ProfsumTrackRec *r){
  NsEnt *e = (NsEnt*)pEl;
  e->ts = floorK(r->ts);
  e->d = r->dur/1000;
  e->idx = r->idx;
  e->trk = r->trk;
  e->r = r;
}

/* nestSweep's step of the ns sweep: slice pEl (an NsEnt) is nested in
** the open slice that holds it, closing the open slices it is not inside:
** those that end before it starts, then those it overlaps partly (the
** ends on the stack only decrease upwards, so once one holds it, all
** below do). */
static int nestStepNs(Analyze *a, Stk *k, void *pEl){
  NsEnt *e = (NsEnt*)pEl;
  (void)a;
  nestTrack(k, e->trk);
  while( k->n>0 && (e->ts >= NS_END(topNs(k)) || NS_END(e) > NS_END(topNs(k))) ) nestClose(k);
  return nestOpen(k, e, e->trk, e->d, &e->r->exclNs);
}

/* The ns-domain sweep for the excl column: slices of the track columns,
** with ts and dur floored to ns as the columns show them.  Returns
** SQLITE_OK, or SQLITE_NOMEM / SQLITE_INTERRUPT with the pass's error
** set. */
static int nestTracksNs(Analyze *a){
  return nestSweep(a, sizeof(NsEnt), cmpNs, nsPick, nsSet, nestStepNs, "slices (excl)");
}

/* Is the span a string whose decoded text is lit? */
static int spanIs(const ProfsumSpan *s, const char *lit){
  return profsumSpanIs(s, lit, (int64_t)strlen(lit));
}

/* Record an M event's name. */
static int noteName(ProfsumTrackInfo *p, const ProfsumEvent *ev){
  int isProc = spanIs(&ev->name, "process_name");
  int isThread = !isProc && spanIs(&ev->name, "thread_name");
  const ProfsumSpan *v = &ev->aArg[PROFSUM_AK_NAME];
  char zKey[512];
  int nKey;
  char *pB = 0;
  int64_t nB = 0, n;
  const char *z;
  int rc;
  if( !isProc && !isThread ) return SQLITE_OK;
  if( v->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  nKey = idKey(zKey, (int)sizeof(zKey), &ev->pid, isThread ? &ev->tid : 0);
  if( nKey<0 ) return SQLITE_OK;
  if( p->pNames==0 ){
    p->pNames = profsumMallocZero(sizeof(ProfsumNameMap));
    if( p->pNames==0 ) return SQLITE_NOMEM;
  }
  if( profsumSpanText(v, &pB, &nB, &z, &n) ) return SQLITE_NOMEM;
  rc = nameMapSet(p->pNames, zKey, nKey, z, n);
  sqlite3_free(pB);
  return rc;
}

/* The per-event part of the first pass for event ev of phase ph (0: not
** one known character): the counts, the diagnostics of one event (with
** a->xDiag: unknown_ph, zero_duration, negative_duration, B/E that cannot
** be paired, X slices out of range), and a record for an X event when
** wantX, for a B or E event when wantBE.  Not for M events.  Returns
** SQLITE_OK, or an error code with the pass's error set. */
static int trackEvent(Analyze *a, const ProfsumEvent *ev, char ph, int wantBE, int wantX){
  ProfsumTrackInfo *p = a->pInfo;
  ProfsumTrackRec *r;
  int32_t trk;
  uint32_t nameHash = 0;
  if( a->xDiag && (ph==0 || strchr(phKnown, ph)==0) ){
    char z[80], zq[40];
    sqlite3_snprintf(sizeof(zq), zq, "%.*s", (int)(ev->ph.n>20 ? 20 : ev->ph.n), ev->ph.z);
    sqlite3_snprintf(sizeof(z), z, "unknown ph \"%s\" (the row is kept)", zq);
    a->xDiag(a->pDiagCtx, ev->idx, ev->iOffset, "unknown_ph", z);
  }
  if( ph=='X' ){
    int okId = ev->pid.kind==PROFSUM_ID_INT && ev->tid.kind==PROFSUM_ID_INT;
    p->nX++;
    if( ev->hasDur && a->xDiag ){
      if( ev->dur==0 ) a->xDiag(a->pDiagCtx, ev->idx, ev->iOffset, "zero_duration",
                                "X event with dur 0: a row, but on no track");
      else if( ev->dur<0 ) a->xDiag(a->pDiagCtx, ev->idx, ev->iOffset, "negative_duration",
                                    "X event with a negative dur: a row, but on no track");
    }
    if( okId && ev->pid.iVal>=0 && ev->tid.iVal>=0 && ev->name.type==PROFSUM_JT_STRING
     && ev->name.n>0 && ev->hasTs && ev->hasDur && ev->dur>0 ){
      p->nAccepted++;
    }
    if( !(okId && ev->hasTs && ev->hasDur && ev->dur>0) ) return SQLITE_OK;
    if( ev->dur>PROFSUM_TRK_MAXDUR ){
      if( a->xDiag ) a->xDiag(a->pDiagCtx, ev->idx, ev->iOffset, "time_out_of_range",
          "X slice longer than 2^61 ps (about 26 days); on no track");
      return SQLITE_OK;
    }
    if( !wantX ) return SQLITE_OK;
  }else if( ph=='B' || ph=='E' ){
    if( !wantBE ) return SQLITE_OK;
    if( ev->pid.kind!=PROFSUM_ID_INT || ev->tid.kind!=PROFSUM_ID_INT || !ev->hasTs ){
      if( a->xDiag ) a->xDiag(a->pDiagCtx, ev->idx, ev->iOffset, ph=='B' ? "unmatched_begin" : "unmatched_end",
          "B/E event without an integer pid/tid or a ts cannot be paired");
      return SQLITE_OK;
    }
  }else{
    return SQLITE_OK;
  }
  if( ev->iTrack>0 ){
    /* XPlane: each line is its own track, whatever its tid */
    if( ev->iTrack>INT32_MAX ) return trkErr(a, SQLITE_TOOBIG, "more than %d lines", INT32_MAX);
    trk = (int32_t)(ev->iTrack-1);
  }else{
    trk = trackId(&a->tracks, ev->pid.iVal, ev->tid.iVal);
  }
  if( ph!='X' && ev->name.type==PROFSUM_JT_STRING && ev->name.n>0 ){
    nameHash = (uint32_t)fnv1a(ev->name.z, ev->name.n);
  }
  if( a->pBe && ph!='X' ){
    /* an import's pass: the B/E event to its log (pairLog) */
    ProfsumBeEv be;
    memset(&be, 0, sizeof(be));
    be.ts = ev->ts;
    be.idx = ev->idx;
    be.iOffset = ev->iOffset;
    be.nameHash = nameHash;
    be.ph = ph;
    if( trk<0 || profsumBeLogAdd(a->pBe, trk, &be) ){
      return trkErr(a, SQLITE_NOMEM, "out of memory after %lld events (the B/E pairing "
                    "holds %lld bytes)", (long long)p->nRows, (long long)profsumBeLogBytes(a->pBe));
    }
    return SQLITE_OK;
  }
  r = trk<0 ? 0 : recAppend(a);
  if( r==0 ){
    return trkErr(a, SQLITE_NOMEM, "out of memory after %lld events (the track pass "
                  "holds %lld records of %d bytes, in blocks of %lld)", (long long)p->nRows,
                  (long long)p->nRec, (int)sizeof(ProfsumTrackRec), (long long)PROFSUM_TRK_BLOCK);
  }
  r->idx = ev->idx;
  r->iOffset = ev->iOffset;
  r->ts = ev->ts;
  r->dur = ph=='X' ? (int64_t)ev->dur : -1;
  r->excl = -1;
  r->exclNs = -1;
  r->parent = -1;
  r->depth = -1;
  r->trk = trk;
  r->ph = ph;
  r->nameHash = nameHash;
  return SQLITE_OK;
}

/* The diagnostics of the whole pass, after its last event (a->xDiag set):
** a trace with exactly as many complete events as an exporter's cap. */
static void trackTruncDiag(Analyze *a){
  int64_t aCap[2] = {1000000, 5000000};
  int k;
  for(k=0; k<2; k++){
    if( a->pInfo->nAccepted==aCap[k] || a->pInfo->nX==aCap[k] ){
      char z[200];
      sqlite3_snprintf(sizeof(z), z, "the trace has exactly %lld complete events: "
          "the exporter probably cut it at its event cap", (long long)aCap[k]);
      a->xDiag(a->pDiagCtx, -1, -1, "suspected_truncation", z);
    }
  }
}

/* See profsum_reader.h. */
int profsumTrackAnalyze(const char *zFunc, const char *zPath, unsigned needs,
                        ProfsumDiagFn xDiag, void *pDiagCtx,
                        ProfsumTrackInfo **pp, char **pzErr){
  ProfsumStream *pStream = 0;
  ProfsumEvent *ev;
  Analyze a;
  int rc;
  int wantRecs = (needs & (PROFSUM_NEED_DUR|PROFSUM_NEED_TRACK|PROFSUM_NEED_DIAG))!=0;
  int wantX = (needs & (PROFSUM_NEED_TRACK|PROFSUM_NEED_DIAG))!=0;
  *pp = 0;
  memset(&a, 0, sizeof(a));
  a.xDiag = (needs & PROFSUM_NEED_DIAG) ? xDiag : 0;
  a.pDiagCtx = pDiagCtx;
  a.zFunc = zFunc;
  a.zPath = zPath;
  a.pzErr = pzErr;
  a.pInfo = profsumMallocZero(sizeof(ProfsumTrackInfo));
  if( a.pInfo==0 ) return trkErr(&a, SQLITE_NOMEM, "out of memory");
  /* the diagnostics are listed, all of them: every one with its detail */
  rc = profsumStreamOpen(zFunc, zPath, ((needs & PROFSUM_NEED_NAMES) ? PROFSUM_SCAN_MNAMES : 0)
                                       | ((needs & PROFSUM_NEED_DIAG) ? PROFSUM_SCAN_ALLDETAILS : 0),
                         xDiag, pDiagCtx, &pStream, pzErr);
  while( rc==SQLITE_OK ){
    ProfsumTrackInfo *p = a.pInfo;
    char ph;
    rc = profsumStreamNext(pStream, &ev, pzErr);
    if( rc!=SQLITE_ROW ) break;
    rc = SQLITE_OK;
    p->nRows++;
    ph = (ev->ph.n==1 && !(ev->ph.flags & PROFSUM_SF_ESCAPE)) ? ev->ph.z[0] : 0;
    if( ph=='M' ){
      if( !(needs & PROFSUM_NEED_NAMES) ) continue;
      rc = noteName(p, ev);
      if( rc ){
        trkErr(&a, rc, "out of memory after %lld events (the process and thread names)",
               (long long)p->nRows);
      }
      continue;
    }
    rc = trackEvent(&a, ev, ph, wantRecs, wantX);
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc==SQLITE_NOMEM && *pzErr==0 ){
    trkErr(&a, rc, "out of memory after %lld events", (long long)a.pInfo->nRows);
  }
  if( rc==SQLITE_OK ){
    a.pInfo->nEntries = profsumStreamEntries(pStream);
    if( wantRecs ) rc = pairBE(&a);
    if( rc==SQLITE_OK && wantX ) rc = nestTracks(&a);
    if( rc==SQLITE_OK && (needs & PROFSUM_NEED_EXCLNS) ) rc = nestTracksNs(&a);
    if( rc==SQLITE_OK && a.xDiag ) trackTruncDiag(&a);
  }
  profsumStreamClose(pStream);
  sqlite3_free(a.tracks.a);
  if( rc ){
    profsumTrackFree(a.pInfo);
    return rc;
  }
  *pp = a.pInfo;
  return SQLITE_OK;
}

/* The track diagnostics of an import's own read pass (see
** profsum_reader.h): the pass's state, with no records: its B and E
** events go to a compact log (a.pBe, belog.h) that pairLog pairs. */
struct ProfsumTrackDiag {
  Analyze a;
  char *zErr;                /* the error of the last call that failed */
};

/* See profsum_reader.h. */
int profsumTrackDiagOpen(const char *zFunc, const char *zPath, ProfsumDiagFn xDiag,
                         void *pDiagCtx, ProfsumTrackDiag **pp){
  ProfsumTrackDiag *d = profsumMallocZero(sizeof(ProfsumTrackDiag));
  *pp = 0;
  if( d==0 ) return SQLITE_NOMEM;
  d->a.pInfo = profsumMallocZero(sizeof(ProfsumTrackInfo));
  if( d->a.pInfo==0 || profsumBeLogOpen(&d->a.pBe) ){
    sqlite3_free(d->a.pInfo);
    sqlite3_free(d);
    return SQLITE_NOMEM;
  }
  d->a.xDiag = xDiag;
  d->a.pDiagCtx = pDiagCtx;
  d->a.zFunc = zFunc;
  d->a.zPath = zPath;
  d->a.pzErr = &d->zErr;
  *pp = d;
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int profsumTrackDiagEvent(ProfsumTrackDiag *d, const ProfsumEvent *ev){
  char ph = (ev->ph.n==1 && !(ev->ph.flags & PROFSUM_SF_ESCAPE)) ? ev->ph.z[0] : 0;
  d->a.pInfo->nRows++;
  if( ph=='M' ) return SQLITE_OK;
  return trackEvent(&d->a, ev, ph, 1, 0);
}

/* See profsum_reader.h. */
int profsumTrackDiagFinish(ProfsumTrackDiag *d){
  int rc = pairLog(&d->a);
  if( rc==SQLITE_OK ) trackTruncDiag(&d->a);
  return rc;
}

/* See profsum_reader.h. */
const char *profsumTrackDiagErr(const ProfsumTrackDiag *d){ return d->zErr; }

/* See profsum_reader.h. */
void profsumTrackDiagFree(ProfsumTrackDiag *d){
  if( d==0 ) return;
  profsumTrackFree(d->a.pInfo);
  profsumBeLogFree(d->a.pBe);
  sqlite3_free(d->a.tracks.a);
  sqlite3_free(d->zErr);
  sqlite3_free(d);
}

/* See profsum_reader.h. */
void profsumTrackFree(ProfsumTrackInfo *p){
  int64_t i;
  if( p==0 ) return;
  for(i=0; p->apRec && i<=(p->nRec>0 ? (p->nRec-1)>>PROFSUM_TRK_BLOCK_LOG : 0); i++){
    sqlite3_free(p->apRec[i]);
  }
  sqlite3_free(p->apRec);
  nameMapFree(p->pNames);
  sqlite3_free(p);
}
