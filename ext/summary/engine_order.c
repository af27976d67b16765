/*
** engine_order.c — stage A's ordering: the reference's float decisions
** (its doubles of ts and end) and the per-track processing order, after
** the read (profsumEngOrder: the grouping by track, each track checked
** and sorted where it is not in order, then the §2 stack sweep of
** engine_nest.c), or for an XPlane line by line while it is read
** (profsumEngTrackPart, profsumEngTrackDone).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "engine_fast.h"
#include "funcs.h"
#include "jsontree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python's float() of a time given in exact picoseconds: the double
** nearest to ps/1e6 µs, for |v| >= 2^53 (profsumEngPsFloat, inline in
** engine_int.h, answers below: both operands of the division are exact
** doubles there, so IEEE division rounds once, correctly).  From 2^53 to
** 2^53·10^6 ps (epoch times in ps are there) v/10^6 = q + f with q the
** integer quotient (an exact double, below 2^53) and f = rem/10^6 < 1: q + f
** is at least 2^33, so a rounding boundary of its double (a multiple of
** 2^-20 or coarser) is either f itself, then an exact double (a dyadic
** fraction with denominator at most 2^20 over 10^6 = 2^6·5^6 has rem a
** multiple of 5^6, f a multiple of 2^-6) and the sum rounds as the exact
** value does, or at least 10^-6·2^-20 away from f, far more than the error
** of the double of f (below 2^-53): the sum of the two doubles rounds once,
** as the exact value would.  Beyond, in extended precision when that is
** unambiguous, else through the exact decimal text and strtod. */
double profsumEngPsFloatBig(profsum_ps v){
  double r;
  unsigned __int128 a;
  a = v<0 ? -(unsigned __int128)v : (unsigned __int128)v;
  if( a < ((unsigned __int128)1<<53)*1000000 ){
    /* q and rem by 32-bit limbs (a < 2^73: its top limb is below 2^9, its
    ** quotient 0), each step a 64-bit division by a constant */
    uint64_t x, q1, q0, rem = (uint64_t)(a>>64) % 1000000;
    x = rem<<32 | ((uint64_t)(a>>32) & 0xffffffffu); q1 = x/1000000; rem = x%1000000;
    x = rem<<32 | ((uint64_t)a & 0xffffffffu);       q0 = x/1000000; rem = x%1000000;
    r = (double)(q1<<32 | q0) + (double)rem/1e6;
    return v<0 ? -r : r;
  }
  /* epoch-µs traces: two roundings in extended precision, checked */
  if( profsumLdToDouble((long double)(v<0 ? -v : v) / 1e6L, &r) ) return v<0 ? -r : r;
  return profsumPsToMicros(v);
}

/* ------------------------------------------------------------------ */
/* Ordering and exclusive time                                         */
/* ------------------------------------------------------------------ */
/* Float decisions.  The reference reads ts and dur as doubles (Python
** float() of the JSON text) and decides order, nesting (§2) and gaps
** (§4.8) by comparing ts and end = ts + dur as doubles.  Where two exact
** values are equal or nearly so, the doubles can disagree with them: a
** child that ends on the picosecond its parent ends can get an end one ulp
** later (then it is a partial overlap, not a child), two events that abut
** can leave a gap of 1e-10 µs.  The summary reproduces those decisions;
** sums stay exact.  Exact differences larger than e->tolPs cannot be
** reversed by rounding (the bound is set from the largest magnitude in
** the trace, engTolerance), so only near-ties compute the doubles. */

/* Index in aFloatTs/aFloatDur of event i's text doubles, or -1 when the
** doubles of its picoseconds are the text's: its bit, and the entries
** before it (its word's rank and the bits below it in the word). */
static int64_t floatEntry(const Engine *e, int64_t i){
  int64_t w = i>>6;
  uint64_t m;
  if( e->nFloat==e->nEv && e->nFloat>0 ) return i;   /* one entry per event, in order */
  if( w>=e->nFloatWord ) return -1;
  m = e->aFloatBit[w];
  if( !((m >> (i & 63)) & 1) ) return -1;
  return e->aFloatRank[w] + __builtin_popcountll(m & (((uint64_t)1 << (i & 63)) - 1));
}

/* An XPlane event's doubles as the reference computes them (summary
** §6.1): ts = double(timestamp_ns)/1000 + double(offset_ps)/1e6 with its
** line's timestamp_ns, dur = double(duration_ps)/1e6. */
static double xpTsOf(const Engine *e, int64_t i){
  const SEv *r = EV(e, i);
  const STrack *t = &e->aTrk[KEY(e, r)->trk];
  int64_t off = (int64_t)(t->xpBase + r->ts);
  return t->xpTsUs + (double)off / 1e6;
}
static double xpDurOf(const Engine *e, int64_t i){
  return (double)EVDUR(e, EV(e, i)) / 1e6;
}

/* The doubles the reference has for event i, whose entry in aFloatTs and
** aFloatDur is f (-1: none): its ts and ts + dur, and (pDur not 0) its
** dur. */
static void evFloatOf(Engine *e, int32_t i, int64_t f, double *pTs, double *pEnd, double *pDur){
  const SEv *r = EV(e, i);
  double ts, dur;
  if( e->isXPlane ){
    ts = xpTsOf(e, i);
    dur = xpDurOf(e, i);
  }else if( f>=0 ){
    ts = e->aFloatTs[f];
    dur = e->aFloatDur[f];
  }else{
    ts = profsumEngPsFloat(e->origin + r->ts);
    dur = profsumEngPsFloat(EVDUR(e, r));
  }
  *pTs = ts;
  *pEnd = ts + dur;
  if( pDur ) *pDur = dur;
}

/* The doubles the reference has for event i: its ts and ts + dur. */
void profsumEngEvFloat(Engine *e, int32_t i, double *pTs, double *pEnd){
  evFloatOf(e, i, floatEntry(e, i), pTs, pEnd, 0);
}

/* The same and its dur's double, found once. */
void profsumEngEvFloatDur(Engine *e, int32_t i, double *pTs, double *pEnd, double *pDur){
  evFloatOf(e, i, floatEntry(e, i), pTs, pEnd, pDur);
}

/* The double the reference has for event i's dur (see profsumEngEvFloat). */
double profsumEngEvDurFloat(Engine *e, int64_t i){
  int64_t f;
  if( e->isXPlane ) return xpDurOf(e, i);
  f = floatEntry(e, i);
  return f>=0 ? e->aFloatDur[f] : profsumEngPsFloat(EVDUR(e, EV(e, i)));
}

/* Sign of (point of a) − (point of b) as the reference's doubles compare
** them, where a point is the event's ts (bEnd 0) or its end (bEnd 1); a
** decision the exact times would have made otherwise adds one to *pFlip
** (atomically: the tracks are ordered on two threads). */
int profsumEngCmpPointN(Engine *e, int32_t ia, int bEndA, int32_t ib, int bEndB, int64_t *pFlip){
  const SEv *a = EV(e, ia), *b = EV(e, ib);
  int64_t d = (a->ts + (bEndA ? EVDUR(e, a) : 0)) - (b->ts + (bEndB ? EVDUR(e, b) : 0));
  double fa, fb, ta, tb;
  if( d>e->tolPs ) return 1;
  if( d<-e->tolPs ) return -1;
  if( d==0 && !bEndA && !bEndB && e->nFloat==0 && !e->isXPlane ) return 0;   /* same ps, same double */
  if( e->isXPlane ){
    int32_t trk = KEY(e, a)->trk;
    int64_t tol = e->aTrk[trk].xpTolPs;
    /* two points of one line far enough apart: the doubles agree */
    if( tol>0 && KEY(e, b)->trk==trk && (d>tol || d<-tol) ) return d>0 ? 1 : -1;
    /* the doubles made from each line's timestamp */
    fa = xpTsOf(e, ia);
    if( bEndA ) fa += xpDurOf(e, ia);
    fb = xpTsOf(e, ib);
    if( bEndB ) fb += xpDurOf(e, ib);
  }else{
    profsumEngEvFloat(e, ia, &ta, &fa);
    profsumEngEvFloat(e, ib, &tb, &fb);
    if( !bEndA ) fa = ta;
    if( !bEndB ) fb = tb;
  }
  {
    int c = (fa>fb) - (fa<fb);
    if( c!=(d>0) - (d<0) ) __atomic_fetch_add(pFlip, 1, __ATOMIC_RELAXED);
    return c;
  }
}

/* See engine_int.h. */
int profsumEngCmpPoint(Engine *e, int32_t ia, int bEndA, int32_t ib, int bEndB){
  return profsumEngCmpPointN(e, ia, bEndA, ib, bEndB, &e->nFlip);
}
/* See engine_int.h.  Only an event whose exact ts is within tolPs of the
** smallest, or whose exact end is within tolPs of the largest, can hold
** the smallest or largest double (larger exact differences order as the
** doubles do), so only those compute their doubles. */
void profsumEngFloatRange(Engine *e, double *pMin, double *pMax){
  int64_t i, tol = e->tolPs;
  int64_t tsLo = (int64_t)(e->tsMin - e->origin), endHi = (int64_t)(e->endMax - e->origin);
  int any = 0;
  double fMin = 0.0, fMax = 0.0;
  for(i=0; i<e->nEv; i++){
    const SEv *r = EV(e, i);
    int64_t end = r->ts + EVDUR(e, r);
    double fTs, fEnd;
    if( r->ts - tsLo > tol && endHi - end > tol ) continue;
    profsumEngEvFloat(e, (int32_t)i, &fTs, &fEnd);
    if( !any || fTs<fMin ) fMin = fTs;
    if( !any || fEnd>fMax ) fMax = fEnd;
    any = 1;
  }
  *pMin = fMin;
  *pMax = fMax;
}

/* Set e->tolPs from the largest magnitude M (µs) of the trace's accepted
** times: a double ts, dur or ts + dur is within 1.5 ulp(2M) of its exact
** value (plus 0.5 ps for each of ts and dur when their texts were rounded
** to a picosecond: an end moves by up to 1 ps, two ends apart by 2), so
** exact differences above 4 ulp(2M) (+2 ps) order as the doubles do.
** Times so large (|ts| beyond about 5e27 µs, which the reader accepts as
** exact picoseconds) that the bound passes INT64_MAX: every comparison is
** the doubles' (tolPs INT64_MAX; the bound is converted only when it fits). */
static void engTolerance(Engine *e){
  profsum_ps a, b;
  double m, u, tol;
  int ex;
  e->tolPs = 0;
  if( e->isXPlane ){ e->tolPs = INT64_MAX; return; }  /* its doubles decide everything */
  if( !e->hasRange ) return;
  a = e->tsMin<0 ? -e->tsMin : e->tsMin;
  b = e->endMax<0 ? -e->endMax : e->endMax;
  m = 2.0 * (double)(a>b ? a : b) / 1e6;
  (void)frexp(m, &ex);
  u = ldexp(1.0, ex-53);
  tol = floor(4.0*u*1e6) + (e->anyRounded ? 2 : 0);
  e->tolPs = tol < 0x1p62 ? (int64_t)tol : INT64_MAX;
}

/* §2's order on the exact picoseconds: ts ascending, end descending, file
** order (engExactCheck; evLess's gapOrder 2). */
int profsumEngExactLess(const Engine *e, int32_t ia, int32_t ib){
  const SEv *a = EV(e, ia), *b = EV(e, ib);
  int64_t ea = a->ts + EVDUR(e, a), eb = b->ts + EVDUR(e, b);
  if( a->ts!=b->ts ) return a->ts<b->ts;
  if( ea!=eb ) return ea>eb;
  return ia<ib;
}

/* Order of two events by index: ts ascending, then end descending (the
** nesting order, gapOrder 0) or ascending (the gap order of §4.8, gapOrder
** 1), then file order, all as the reference's doubles compare; gapOrder 2:
** profsumEngExactLess.  A total order: any sort gives the same result. */
static int evLess(Engine *e, int32_t ia, int32_t ib, int gapOrder){
  int c;
  if( gapOrder==2 ) return profsumEngExactLess(e, ia, ib);
  c = cmpTs(e, ia, ib);
  if( c ) return c<0;
  c = cmpEnd(e, ia, ib);
  if( c ) return gapOrder ? c<0 : c>0;
  return ia<ib;
}

/* evLess(gapOrder 0) for two events of track t (tol: its
** profsumEngTrackTol). */
static int evLessInN(Engine *e, const STrack *t, int64_t tol, int32_t ia, int32_t ib, int64_t *pFlip){
  int c = profsumEngCmpInN(e, t, tol, ia, 0, ib, 0, pFlip);
  if( c ) return c<0;
  c = profsumEngCmpInN(e, t, tol, ia, 1, ib, 1, pFlip);
  if( c ) return c>0;
  return ia<ib;
}
static int evLessIn(Engine *e, const STrack *t, int64_t tol, int32_t ia, int32_t ib){
  return evLessInN(e, t, tol, ia, ib, &e->nFlip);
}

static void heapSiftDown(Engine *e, int32_t *a, int64_t n, int64_t i, int g){
  for(;;){
    int64_t l = 2*i+1, m = i;
    int32_t x;
    if( l<n && evLess(e, a[m], a[l], g) ) m = l;
    if( l+1<n && evLess(e, a[m], a[l+1], g) ) m = l+1;
    if( m==i ) return;
    x = a[i]; a[i] = a[m]; a[m] = x;
    i = m;
  }
}

/* Sort event indices a[0..n) by evLess(gapOrder), in place, no memory:
** quicksort (median of three, Hoare partition, the smaller side first),
** insertion sort below 17 elements, heapsort past depth 2*log2(n). */
void profsumEngSortEvIdx(Engine *e, int32_t *a, int64_t n, int g, int depth){
  int64_t i, j;
  int32_t x;
  while( n>16 ){
    int64_t mid = (n-1)/2;
    int32_t piv;
    if( depth--<=0 ){
      for(i=n/2-1; i>=0; i--) heapSiftDown(e, a, n, i, g);
      for(i=n-1; i>0; i--){ x = a[0]; a[0] = a[i]; a[i] = x; heapSiftDown(e, a, i, 0, g); }
      return;
    }
    if( evLess(e, a[mid], a[0], g) ){ x = a[mid]; a[mid] = a[0]; a[0] = x; }
    if( evLess(e, a[n-1], a[mid], g) ){
      x = a[mid]; a[mid] = a[n-1]; a[n-1] = x;
      if( evLess(e, a[mid], a[0], g) ){ x = a[mid]; a[mid] = a[0]; a[0] = x; }
    }
    piv = a[mid];
    i = -1; j = n;
    for(;;){
      do i++; while( evLess(e, a[i], piv, g) );
      do j--; while( evLess(e, piv, a[j], g) );
      if( i>=j ) break;
      x = a[i]; a[i] = a[j]; a[j] = x;
    }
    /* a[0..j] <= piv <= a[j+1..n) */
    if( j+1 < n-(j+1) ){
      profsumEngSortEvIdx(e, a, j+1, g, depth);
      a += j+1; n -= j+1;
    }else{
      profsumEngSortEvIdx(e, a+j+1, n-(j+1), g, depth);
      n = j+1;
    }
  }
  for(i=1; i<n; i++){
    x = a[i];
    for(j=i; j>0 && evLess(e, x, a[j-1], g); j--) a[j] = a[j-1];
    a[j] = x;
  }
}

/* evLessIn without counting a near tie the doubles decide otherwise:
** mergeCut's search compares events that need not end up next to each
** other, which no sort of the track would have compared. */
static int evLessQuiet(Engine *e, const STrack *t, int64_t tol, int32_t ia, int32_t ib){
  int64_t nIgnored = 0;
  return evLessInN(e, t, tol, ia, ib, &nIgnored);
}

/* How many of the first k events of the merge of the sorted runs
** A[0..nA) and B[0..nB) (by evLessIn) come from A: a binary search over
** the cut (0 <= k <= nA + nB). */
static int64_t mergeCut(Engine *e, const STrack *tr, int64_t tol,
                        const int32_t *A, int64_t nA, const int32_t *B, int64_t nB, int64_t k){
  int64_t lo = k>nB ? k-nB : 0, hi = k<nA ? k : nA;
  while( lo<hi ){
    /* A[m] is among the first k when fewer than k - m events of B come
    ** before it: B[k - m - 1] comes after it, or B has no such event */
    int64_t m = lo + (hi-lo)/2, j = k-m-1;
    if( j>=nB || evLessQuiet(e, tr, tol, A[m], B[j]) ) lo = m+1;
    else hi = m;
  }
  return lo;
}

/* One level of sortSlice's merge: the runs of src starting at aRun[0..nRun)
** (aRun[nRun] = n) merged two by two into dst, positions kFrom to kTo - 1
** of it only (a pair cut by either bound starts or stops mid-way, found
** by mergeCut).  Each level's positions split at one place make two
** pieces that touch nothing in common. */
typedef struct MergePiece {
  EngSide side;
  Engine *e;
  const STrack *tr;
  int64_t tol;
  const int32_t *src;
  int32_t *dst;
  const int64_t *aRun;
  int64_t nRun, kFrom, kTo;
} MergePiece;
static void mergeLevel(MergePiece *p){
  Engine *e = p->e;
  const STrack *tr = p->tr;
  const int32_t *src = p->src;
  int32_t *dst = p->dst;
  int64_t tol = p->tol, r;
  for(r=0; r<p->nRun; r+=2){
    /* runs r and r+1 (a last odd run: with an empty one, aRun[nRun]) */
    int64_t lo = p->aRun[r], mid = p->aRun[r+1], hi = p->aRun[r+2<=p->nRun ? r+2 : p->nRun];
    int64_t x = lo, y = mid, k = lo, kEnd = hi<p->kTo ? hi : p->kTo;
    if( hi<=p->kFrom ) continue;
    if( lo>=p->kTo ) break;
    if( p->kFrom>lo ){
      int64_t nA = mergeCut(e, tr, tol, src+lo, mid-lo, src+mid, hi-mid, p->kFrom-lo);
      x = lo + nA;
      y = mid + (p->kFrom - lo - nA);
      k = p->kFrom;
    }
    while( k<kEnd && x<mid && y<hi ){
      if( evLessIn(e, tr, tol, src[y], src[x]) ) dst[k++] = src[y++];
      else dst[k++] = src[x++];
    }
    while( k<kEnd && x<mid ) dst[k++] = src[x++];
    while( k<kEnd && y<hi ) dst[k++] = src[y++];
  }
}
static void *mergeLevelMain(void *pArg){
  mergeLevel((MergePiece*)pArg);
  return 0;
}

static void sortSlice(Engine *e, const STrack *tr, int64_t tol, int32_t *a, int64_t n, int depth);

/* Sort a[0..n), the events of track tr (tol: its profsumEngTrackTol), by
** evLessIn when most events out of place belong a short way before the
** events written ahead of them: a writer that puts an event out when it
** ends (PyTorch's profiler and Kineto write a parent after its children,
** so a thread's operators come in end order, a run of one or two events
** per parent), and then maybe another sequence in time order (Kineto puts
** a thread's CUDA runtime calls after all of its operators).
** One walk keeps a sorted prefix of a[]: an event not before the last one
** kept is appended; one before it is compared backwards at distances 1, 2,
** 4, ... and, when it belongs at most SORT_INSERT_REACH places back, put
** there by a binary search (the events it passes move up by one); one
** that belongs further back is set aside, in order, into a buffer.  The
** events set aside are then sorted by sortSlice (depth + 1) and merged
** into the prefix from the back.  For end order that is about two
** comparisons an event and a few moves (its nesting depth) instead of the
** 1.4·log2(n) comparisons of a quicksort; the moves are bounded by
** SORT_INSERT_REACH an event whatever the order.
** Returns 1 when a[0..n) is sorted; 0, with a[] a permutation of its
** input, when more than half of the events were set aside (an order
** nothing like this one: the caller sorts it another way; checked every
** SORT_SPILL_LOOK events too, so that a shuffled track costs little more
** than the quicksort) or the buffer, grown as events are set aside, could
** not be had.
** Near ties: the backward search compares events that need not end up
** next to each other, so it does not count them (evLessQuiet).  Each kept
** event is compared, counted, with the events it ends up between when it
** is kept; nothing is put between two such neighbours later but an event
** compared, counted, with both, so every two events of the prefix that end
** up next to each other have been compared, as any comparison sort
** compares them; the merge compares each two that it puts next to each
** other. */
#define SORT_INSERT_REACH 128
#ifdef PROFSUM_SORT_SPILL_LOOK
# define SORT_SPILL_LOOK PROFSUM_SORT_SPILL_LOOK
#else
# define SORT_SPILL_LOOK 4096     /* a power of two; also the buffer's first size */
#endif
static int sortBySpill(Engine *e, const STrack *tr, int64_t tol, int32_t *a, int64_t n, int depth){
  int32_t *aS;
  int64_t i, nL = 1, nS = 0, nAllocS = n<SORT_SPILL_LOOK ? n : SORT_SPILL_LOOK, x, y, k;
  if( n<2 ) return 1;
  /* grown as events are set aside: an order given up early takes little */
  aS = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nAllocS);
  if( aS==0 ) return 0;
  for(i=1; i<n; i++){
    int32_t v = a[i];
    int64_t lo, hi, lim, step = 1;
    if( (i & (SORT_SPILL_LOOK-1))==0 && nS>i/2 ) break;   /* not this order: stop early */
    if( !evLessIn(e, tr, tol, v, a[nL-1]) ){ a[nL++] = v; continue; }
    /* v precedes a[hi]; it may go at lim + 1 at the earliest */
    hi = nL-1;
    lim = nL-1-SORT_INSERT_REACH;
    if( lim<-1 ) lim = -1;
    for(;;){
      lo = hi-step;
      if( lo<=lim ){
        lo = lim;
        if( lo>=0 && evLessQuiet(e, tr, tol, v, a[lo]) ) lo = -2;   /* further back */
        break;
      }
      if( !evLessQuiet(e, tr, tol, v, a[lo]) ) break;
      hi = lo;
      step *= 2;
    }
    if( lo==-2 ){
      if( nS>=nAllocS ){
        int64_t nNew = nAllocS*2<n ? nAllocS*2 : n;
        int32_t *aNew = sqlite3_realloc64(aS, sizeof(int32_t)*(sqlite3_uint64)nNew);
        if( aNew==0 ) break;           /* given up: a[i] is still v */
        aS = aNew; nAllocS = nNew;
      }
      aS[nS++] = v;
      continue;
    }
    /* v goes after a[lo] and before a[hi]: the first of lo+1 .. hi it precedes */
    while( hi-lo>1 ){
      int64_t m = lo + (hi-lo)/2;
      if( evLessQuiet(e, tr, tol, v, a[m]) ) hi = m;
      else lo = m;
    }
    /* positions up to nL <= i are free or the prefix's: a[i] was read */
    memmove(a+hi+1, a+hi, sizeof(int32_t)*(size_t)(nL-hi));
    a[hi] = v;
    nL++;
    /* counted with its neighbours now (the one after it already, above,
    ** when that was the last one kept) */
    if( hi<nL-2 ) (void)evLessIn(e, tr, tol, v, a[hi+1]);
    if( hi>0 ) (void)evLessIn(e, tr, tol, a[hi-1], v);
  }
  if( i<n || nS>n/2 ){
    /* a[0..nL) kept, then those set aside, then a[i..n) as they were */
    memcpy(a+nL, aS, sizeof(int32_t)*(size_t)nS);
    sqlite3_free(aS);
    return 0;
  }
  if( nS>0 ){
    sortSlice(e, tr, tol, aS, nS, depth+1);
    /* merged from the back: position k never passes an unread event */
    x = nL-1; y = nS-1; k = n-1;
    while( y>=0 ){
      if( x>=0 && evLessIn(e, tr, tol, aS[y], a[x]) ) a[k--] = a[x--];
      else a[k--] = aS[y--];
    }
  }
  sqlite3_free(aS);
  return 1;
}

/* Sort a[0..n), the events of track tr (tol: its profsumEngTrackTol), by
** evLessIn (depth: how many slices set aside by sortBySpill this one is
** within; 0 for a track), where the slice is made of a few runs in order
** already: a trace whose writer put a thread's events in a few sequences,
** each in time order (PyTorch's profiler writes the Python function events of a
** step after its operators, and a long parent after its children), or put
** a few events out of place (each splits a run).
** The runs are found by one walk (up to SORT_RUNS_MAX of them), then
** merged two by two through a buffer of 4 bytes an event: about log2(runs)
** comparisons an event instead of the 1.4·log2(n) of a quicksort.  From
** SORT_SPLIT_MIN events on, each level is made in two halves of its
** positions, the second on the engine's side worker (engine_side.c) when
** it has one: the half that starts mid-pair finds where by a binary
** search (mergeCut).  Short runs (more than SORT_RUNS_MAX of them, or
** fewer than SORT_INSERT_RUN events a run on average: events written as
** they end) go to sortBySpill first, down to SORT_SPILL_DEPTH slices set
** aside within slices; when it gives up, the runs are found again.  With
** more runs than SORT_RUNS_MAX then, or no memory for the buffer, the
** slice is sorted in place (profsumEngSortEvIdx).  A total
** order has one sorted permutation, so the result is the same however it
** is made; and as any comparison sort must, the merge compares each two
** events that end up next to each other, so a near tie that the doubles
** decide otherwise than the exact times is counted (nFlip) as it is by the
** quicksort.  The halves make between them the very comparisons of one
** merge (the second starts from the state the first would have reached at
** the cut, and its first comparison is the one the first would have made
** next); the search's own comparisons are not counted. */
#define SORT_RUNS_MAX 1024
#define SORT_INSERT_RUN 8
#define SORT_SPILL_DEPTH 3
#ifdef PROFSUM_SORT_SPLIT_MIN
# define SORT_SPLIT_MIN PROFSUM_SORT_SPLIT_MIN
#else
# define SORT_SPLIT_MIN 65536
#endif
/* The starts of the runs in order of a[0..n) (evLessIn, counted: each
** two neighbours) into aRun[0..*pnRun), aRun[0] = 0, up to SORT_RUNS_MAX
** of them; returns where the walk stopped: n, or the start of the run
** that did not fit. */
static int64_t findRuns(Engine *e, const STrack *tr, int64_t tol, const int32_t *a, int64_t n,
                        int64_t *aRun, int64_t *pnRun){
  int64_t nRun = 1, i;
  aRun[0] = 0;
  for(i=1; i<n; i++){
    if( evLessIn(e, tr, tol, a[i], a[i-1]) ){
      if( nRun>=SORT_RUNS_MAX ) break;
      aRun[nRun++] = i;
    }
  }
  *pnRun = nRun;
  return i;
}
static void sortSlice(Engine *e, const STrack *tr, int64_t tol, int32_t *a, int64_t n, int depth){
  int64_t aRun[SORT_RUNS_MAX+1];        /* run starts, then n */
  int64_t nRun, i;
  int32_t *aBuf, *src = a, *dst;
  i = findRuns(e, tr, tol, a, n, aRun, &nRun);
  if( depth<SORT_SPILL_DEPTH && (i<n || nRun>n/SORT_INSERT_RUN) ){
    if( sortBySpill(e, tr, tol, a, n, depth) ) return;
    /* a[] was reordered: the runs again */
    i = findRuns(e, tr, tol, a, n, aRun, &nRun);
  }
  aBuf = i<n ? 0 : sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(n ? n : 1));
  if( aBuf==0 ){
    profsumEngSortEvIdx(e, a, n, 0, profsumEngSortDepth(n));
    return;
  }
  if( nRun>1 ) profsumPrefault(aBuf, sizeof(int32_t)*(size_t)n);   /* written in full */
  aRun[nRun] = n;
  dst = aBuf;
  while( nRun>1 ){
    int64_t r, nOut = 0;
    MergePiece p1, p2;
    memset(&p1, 0, sizeof(p1));
    p1.e = e; p1.tr = tr; p1.tol = tol; p1.src = src; p1.dst = dst;
    p1.aRun = aRun; p1.nRun = nRun; p1.kFrom = 0; p1.kTo = n;
    if( n>=SORT_SPLIT_MIN ){
      int bSide;
      p2 = p1;
      p1.kTo = p2.kFrom = n/2;
      bSide = profsumEngSideStart(e, &p2.side, ENG_SIDE_RANK_PIECE, mergeLevelMain, &p2);
      mergeLevel(&p1);
      if( !bSide ) mergeLevel(&p2);
      else profsumEngSideJoin(&p2.side);
    }else{
      mergeLevel(&p1);
    }
    for(r=0; r<nRun; r+=2) aRun[nOut++] = aRun[r];
    aRun[nOut] = n;
    nRun = nOut;
    { int32_t *t = src; src = dst; dst = t; }
  }
  if( src!=a ) memcpy(a, src, sizeof(int32_t)*(size_t)n);
  sqlite3_free(aBuf);
}

/* Depth limit of profsumEngSortEvIdx for n elements.
** PROFSUM_SORT_HEAP_ONLY (the ASan build) makes it 0, so that the test
** suite runs the heapsort fallback, which ordinary inputs never reach. */
int profsumEngSortDepth(int64_t n){
  int d = 0;
#ifdef PROFSUM_SORT_HEAP_ONLY
  n = 0;
#endif
  while( n>1 ){ n >>= 1; d += 2; }
  return d;
}

/* The kind of track t from its names: device or host (its process name),
** device ops or Steps (its thread name).  A JSON track's names are looked
** up in the metadata maps (all read by the time profsumEngOrder runs); an
** XPlane line's track has its own names, given to profsumEngNewTrack, so
** its kind is known as soon as the line is. */
static void trackFlags(Engine *e, STrack *t){
  if( !e->isXPlane ){
    HEnt *hp = profsumEngHmGet(&e->procMap, t->pid, 0, 0, 0);
    HEnt *ht = profsumEngHmGet(&e->threadMap, t->pid, t->tid, 0, 0);
    t->proc = hp ? (int32_t)hp->v1 : -1;
    t->thread = ht ? (int32_t)ht->v1 : -1;
  }
  if( t->proc>=0 ){
    const char *z = SP_STR(&e->pool, t->proc);
    t->isDevice = strncmp(z, "/device:", 8)==0;
    t->isHost = strncmp(z, "/host:", 6)==0;
  }
  if( t->thread>=0 ){
    int k = profsumEngThreadKind(e, t->thread);
    t->isDevOp = k==PROFSUM_THREAD_DEVOP;
    t->isSteps = k==PROFSUM_THREAD_STEPS;
  }
}

/* trackFlags of every track. */
static void engTrackFlags(Engine *e){
  int64_t i;
  for(i=0; i<e->nTrk; i++) trackFlags(e, &e->aTrk[i]);
}

/* Grow the §2 sweep's stacks (event indices and children's sums) to nNew
** entries: SQLITE_OK, or SQLITE_NOMEM with both arrays still valid (the
** first perhaps already larger). */
int profsumEngGrowNestStack(int32_t **paStk, int64_t **paChild, int64_t nNew){
  int32_t *a1 = sqlite3_realloc64(*paStk, sizeof(int32_t)*(sqlite3_uint64)nNew);
  int64_t *a2;
  if( a1==0 ) return SQLITE_NOMEM;
  *paStk = a1;
  a2 = sqlite3_realloc64(*paChild, sizeof(int64_t)*(sqlite3_uint64)nNew);
  if( a2==0 ) return SQLITE_NOMEM;
  *paChild = a2;
  return SQLITE_OK;
}

/* The exclusive time as the reference's doubles give it (§2 in doubles:
** max(0, dur − the sum of its children's durs, added as they finish)) of
** the event at processing position pos (in aOrd), given dDur, its dur's
** double: kept in aXrVal for the device ops that had a child; any other's
** is dDur.  *pCur is the caller's cursor (start at 0): the positions must
** be asked in increasing order, as the walks in processing order do. */
double profsumEngExclRefAt(const Engine *e, int64_t pos, int64_t *pCur, double dDur){
  int64_t c = *pCur;
  while( c<e->nXr && e->aXrPos[c]<pos ) c++;
  *pCur = c;
  return (c<e->nXr && e->aXrPos[c]==pos) ? e->aXrVal[c] : dDur;
}

/* See engine_int.h: both cursors moved to pos; the entry there, if any. */
int64_t profsumEngExclSlow(const Engine *e, EngExclCur *c, int64_t pos, const SEv *r){
  while( c->posPar<pos ){
    c->iPar++;
    c->posPar = c->iPar<e->nPar ? e->aParPos[c->iPar] : INT64_MAX;
  }
  while( c->posXr<pos ){
    c->iXr++;
    c->posXr = c->iXr<e->nXr ? e->aXrPos[c->iXr] : INT64_MAX;
  }
  if( c->posPar==pos ) return profsumEngEx32(e, e->aParEx[c->iPar], pos);
  if( c->posXr==pos ) return profsumEngEx32(e, e->aXrEx[c->iXr], pos);
  return EVDUR(e, r);
}

/* See engine_int.h. */
int profsumEngGrowParallel(int n, void **aa[], const size_t aSz[], int64_t *pnAlloc,
                           int64_t nNeed, int64_t nMax){
  int64_t nA = *pnAlloc;
  int i;
  for(i=0; i<n; i++){
    nA = *pnAlloc;
    if( profsumEngGrowCapped(aa[i], &nA, nNeed, nMax, aSz[i]) ) return SQLITE_NOMEM;
  }
  *pnAlloc = nA;
  return SQLITE_OK;
}

/* Grow the array *pa of elements of szElem bytes (capacity *pnAlloc) to
** hold nNeed elements: doubling, but not past nMax when that is a bound
** known in advance (nMax >= nNeed; 0: none), so that an array that
** reaches its bound holds no unused half.  SQLITE_OK or SQLITE_NOMEM (the
** array unchanged). */
int profsumEngGrowCapped(void **pa, int64_t *pnAlloc, int64_t nNeed, int64_t nMax, size_t szElem){
  int64_t nNew = *pnAlloc ? *pnAlloc*2 : 64;
  void *a;
  if( nNeed<=*pnAlloc ) return SQLITE_OK;
  if( nNew<nNeed ) nNew = nNeed;
  if( nNew>nMax && nMax>=nNeed ) nNew = nMax;
  a = sqlite3_realloc64(*pa, szElem*(sqlite3_uint64)nNew);
  if( a==0 ) return SQLITE_NOMEM;
  *pa = a;
  *pnAlloc = nNew;
  return SQLITE_OK;
}

/* The unit in the last place of x >= 0 (the gap to the next double). */
static double ulpOf(double x){
  return nextafter(x, INFINITY) - x;
}

/* What record r of XPlane line t adds to the line's tolerance: |off| +
** dur in ps, as a double (off = xpBase + ts, its offset from the line's
** timestamp). */
static double xpExtent(const Engine *e, const STrack *t, const SEv *r){
  profsum_ps w = t->xpBase + r->ts;
  /* the same double either way; the 64-bit conversion is one instruction */
  double off = (w>=INT64_MIN && w<=INT64_MAX) ? (double)(int64_t)w : (double)w;
  return fabs(off) + (double)EVDUR(e, r);
}

/* Set xpTolPs of XPlane line tr from qPs, the largest xpExtent of its
** events (0.0 when it has none).  A point of a line (an event's start or
** end) has the double T + round(off/1e6) (+ round(dur/1e6) for an end), T
** the line's xpTsUs, off and dur exact ps: each rounding is within half a
** unit in the last place of its result, so the double is within u + q of
** T + the exact µs, q = ulp(Q) and u = ulp(|T| + Q), Q = qPs in µs (both
** units taken at twice the magnitude).  T is the same double for both
** points of a line, so two points whose exact times differ by more than
** 2(u + q) µs order as their doubles do.  The bound is taken with a
** margin and rounded up to whole ps; a line too large for it, or without
** a base, keeps 0 (no shortcut). */
static void xpTolFromExtent(STrack *tr, double qPs){
  double q = qPs*1.000001/1e6, tolUs, tolPs;
  tr->xpTolPs = 0;
  if( !tr->xpHasBase || !isfinite(q) ) return;
  /* the units taken at twice the magnitudes: a result rounded up past a
  ** power of two has the next binade's unit */
  tolUs = 2.0*(ulpOf(2.0*(fabs(tr->xpTsUs) + q)) + ulpOf(2.0*q));
  tolPs = ceil(tolUs*1e6*1.001) + 2.0;
  if( tolPs<0x1p60 ) tr->xpTolPs = (int64_t)tolPs;
}

/* Set xpTolPs of every XPlane line (xpTolFromExtent).  The same pass
** counts each track's events (STrack.nEv) and says whether the event
** indices come track by track in track order (*pGrouped): 1 when it did
** so, 0 when the caller must (not an XPlane, no memory). */
static int xpLineTolerance(Engine *e, int *pGrouped){
  int64_t i, t;
  int32_t prev = 0;
  double *aQ;
  if( !e->isXPlane || e->nTrk==0 ) return 0;
  aQ = sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)e->nTrk);
  if( aQ==0 ) return 0;                   /* no shortcut: the doubles decide */
  for(t=0; t<e->nTrk; t++){ aQ[t] = 0.0; e->aTrk[t].nEv = 0; }
  *pGrouped = 1;
  for(i=0; i<e->nEv; i++){
    const SEv *r = EV(e, i);
    int32_t k = KEY(e, r)->trk;
    double v = xpExtent(e, &e->aTrk[k], r);
    if( v>aQ[k] ) aQ[k] = v;
    e->aTrk[k].nEv++;
    if( k<prev ) *pGrouped = 0;
    prev = k;
  }
  for(t=0; t<e->nTrk; t++) xpTolFromExtent(&e->aTrk[t], aQ[t]);
  sqlite3_free(aQ);
  return 1;
}

/* 1 when the events of track tr (processing positions iFirst to iFirst +
** nEv - 1) from its jFrom-th on (jFrom >= 1: each compared with the one
** before it) are in processing order already, else 0: evLessIn of each
** two neighbours with tolerance tol; when their starts differ by more
** than it the exact difference decides, as in profsumEngCmpIn (the
** previous start kept as the walk moves). */
static int trackInOrder(Engine *e, const STrack *tr, int64_t tol, int64_t jFrom){
  int64_t j, i0 = tr->iFirst;
  int64_t tsPrev = jFrom<=tr->nEv ? EV(e, ORD(e, i0+jFrom-1))->ts : 0;
  for(j=jFrom; j<tr->nEv; j++){
    int64_t ts = EV(e, ORD(e, i0+j))->ts, d = tsPrev - ts;
    if( d>tol ) return 0;
    if( d>=-tol && !evLessIn(e, tr, tol, ORD(e, i0+j-1), ORD(e, i0+j)) ) return 0;
    tsPrev = ts;
  }
  return 1;
}

/* Sort the events of every track that is not in processing order already
** (aOrd, made the identity when it must be), asking the stop callback
** before each track.  SQLITE_OK, SQLITE_NOMEM or SQLITE_INTERRUPT (with
** the engine's message). */
static int orderRange(Engine *e, int32_t t0, int32_t t1, int bAsk){
  int64_t i, t, n = e->nEv;
  for(t=t0; t<t1; t++){
    STrack *tr = &e->aTrk[t];
    if( bAsk && e->xStop && e->xStop(e->pStopArg) ) return profsumEngErr(e, SQLITE_INTERRUPT, "interrupted");
    int64_t tol = profsumEngTrackTol(e, tr);
    if( !trackInOrder(e, tr, tol, 1) ){
      if( e->aOrd==0 ){
        /* the identity is no longer enough: made in full */
        e->aOrd = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(n ? n : 1));
        if( !e->aOrd ) return SQLITE_NOMEM;
        profsumPrefault(e->aOrd, sizeof(int32_t)*(size_t)n);
        for(i=0; i<n; i++) e->aOrd[i] = (int32_t)i;
      }
      sortSlice(e, tr, tol, e->aOrd + tr->iFirst, tr->nEv, 0);
    }
  }
  return SQLITE_OK;
}

/* Tracks t0 to t1 - 1 ordered as a side job (orderTracks). */
#define ORDER_PIECES 8
typedef struct OrderJob {
  EngSide side;
  Engine *e;
  int32_t t0, t1;
  int rc;
} OrderJob;
static void *orderJobMain(void *pArg){
  OrderJob *j = (OrderJob*)pArg;
  j->rc = orderRange(j->e, j->t0, j->t1, 0);
  return 0;
}

/* Each track's events in the order of §2: checked (trackInOrder) and,
** where they are not in it, sorted in their slice of e->aOrd.  With a
** processing order already made (the events did not come track by
** track), the tracks are cut into up to ORDER_PIECES pieces of about equal
** events: all but the first are queued on the side worker
** (engine_side.c), which takes them from the front while this thread
** orders the first, then joins the others from the last, ordering those
** the worker has not taken.  Each piece touches its tracks' slices only,
** and the count of comparisons the doubles decided otherwise (e->nFlip)
** is added atomically.  The stop check is asked by this thread only. */
static int orderTracks(Engine *e){
  OrderJob aJob[ORDER_PIECES];
  int32_t aEnd[ORDER_PIECES];
  int nJob = 0, i, rc = SQLITE_OK;
  if( e->aOrd && e->nTrk>1 ) nJob = profsumEngTrackPieces(e, ORDER_PIECES, 0, aEnd);
  if( nJob==0 ) return orderRange(e, 0, e->nTrk, 1);
  for(i=0; i<nJob; i++){
    memset(&aJob[i], 0, sizeof(aJob[i]));
    aJob[i].e = e;
    aJob[i].t0 = i ? aEnd[i-1] : 0;
    aJob[i].t1 = aEnd[i];
    if( i ) profsumEngSideStart(e, &aJob[i].side, ENG_SIDE_RANK_ORDER, orderJobMain, &aJob[i]);
  }
  rc = orderRange(e, aJob[0].t0, aJob[0].t1, 1);
  for(i=nJob-1; i>=1; i--){
    /* a piece the worker has not taken is run by the join; one never
    ** queued (no worker) runs here, asking the stop check first */
    if( !profsumEngSideJoin(&aJob[i].side) ){
      aJob[i].rc = rc==SQLITE_OK ? orderRange(e, aJob[i].t0, aJob[i].t1, 1) : SQLITE_OK;
    }
    if( rc==SQLITE_OK ) rc = aJob[i].rc;
  }
  return rc;
}

/* ------------------------------------------------------------------ */
/* Ordering each XPlane line as it comes                               */
/* ------------------------------------------------------------------ */
/* An XPlane reader makes one track per line and appends the line's
** events together, so the per-track work of profsumEngOrder (the sorted
** check, the §2 sweep, the run_ids, the tolerance and kind) can be done
** on the reader's engine side while its decoding side reads on: after
** each batch of events for the events so far (profsumEngTrackPart), and
** when the line ends for the rest (profsumEngTrackDone).  Nothing waits
** for the whole line: a line's tolerance (xpTolFromExtent) computed from
** the events seen so far bounds the rounding of every point among them,
** and the comparisons of the check and the sweep are between events seen
** already; whatever valid bound is used, every decision is the doubles'
** (the bound only says where the exact times give the same answer), so
** the decisions, and the count of near ties the doubles decided otherwise
** (nFlip), are profsumEngOrder's.  At the line's end the bound is the
** line's own.  When a line cannot be done so (out of order, another
** track's events among its own, out of memory), earlyAbandon undoes what
** was done and profsumEngOrder orders every track after the read, as for
** any trace. */

/* Undo the ordering done as the lines came (Engine.early) and give it up
** for this read: what the sweep made (the run groups, aParPos/aParEx,
** aXrPos/aXrVal/aXrEx), its stack and the comparison count are dropped (the
** records and their run_ids are as read).  Needs no memory. */
static void earlyAbandon(Engine *e){
  sqlite3_free(e->aRunPos); sqlite3_free(e->aRunId); sqlite3_free(e->aRunN);
  e->aRunPos = 0; e->aRunId = 0; e->aRunN = 0;
  e->nRun = e->nAllocRun = 0;
  sqlite3_free(e->aXrPos); sqlite3_free(e->aXrVal); sqlite3_free(e->aXrEx);
  e->aXrPos = 0; e->aXrVal = 0; e->aXrEx = 0;
  e->nXr = e->nAllocXr = 0;
  sqlite3_free(e->aParPos); sqlite3_free(e->aParEx);
  e->aParPos = 0; e->aParEx = 0;
  e->nPar = e->nAllocPar = 0;
  profsumEngHmFree(&e->exclBig);
  e->nFlip = e->early.nFlip0;
  profsumEngEarlyFree(e);
  memset(&e->early, 0, sizeof(e->early));
  e->early.off = 1;
}

/* See engine_int.h. */
void profsumEngEarlyFree(Engine *e){
  sqlite3_free(e->early.stk.aStk);
  sqlite3_free(e->early.stk.aChild);
  e->early.stk.aStk = 0;
  e->early.stk.aChild = 0;
  e->early.stk.nAlloc = 0;
}

/* See engine_intake.h. */
void profsumEngOrderLater(ProfsumEngine *e){
  if( e->isXPlane && !e->early.off ) earlyAbandon(e);
}

/* Order the events of track trk that came since the last call (see
** "Ordering each XPlane line as it comes"), and with bEnd finish the
** track.  SQLITE_OK, or an error code: the caller gives the shortcut up
** (earlyAbandon). */
static int earlyTrack(Engine *e, int32_t trk, int bEnd){
  struct EngEarly *y = &e->early;
  STrack *tr;
  int64_t i, i0 = y->iEv, iFrom = y->iSwept, nPushed = 0, tol;
  int rc;
  if( trk!=y->nTrk || trk>=e->nTrk ) return SQLITE_MISUSE;   /* not the next track */
  tr = &e->aTrk[trk];
  if( !y->started ){
    y->started = 1;
    y->nFlip0 = e->nFlip;
    engTolerance(e);
  }
  if( iFrom==i0 ){
    /* the track's first events: its kind */
    y->q = 0.0;
    trackFlags(e, tr);
    tr->iFirst = i0;
  }
  /* xpLineTolerance's pass over the new events: they must all be the
  ** track's own */
  for(i=iFrom; i<e->nEv; i++){
    const SEv *r = EV(e, i);
    double v;
    if( KEY(e, r)->trk!=trk ) return SQLITE_MISUSE;
    v = xpExtent(e, tr, r);
    if( v>y->q ) y->q = v;
  }
  tr->nEv = e->nEv - i0;
  xpTolFromExtent(tr, y->q);
  tol = profsumEngTrackTol(e, tr);
  /* in order from the last event checked on */
  if( !trackInOrder(e, tr, tol, iFrom>i0 ? iFrom-i0 : 1) ) return SQLITE_MISUSE;
  /* aXrPos/aXrVal hold at most one entry per device-op event: those swept
  ** so far bound them */
  if( tr->isDevice && tr->isDevOp ) y->nDevOpEv += e->nEv - iFrom;
  rc = profsumEngSweepPart(e, tr, &y->stk, iFrom - i0, e->nEv - i0, bEnd, tol, tr->nEv, y->nDevOpEv, &nPushed);
  y->iSwept = iFrom + nPushed;
  if( rc ) return rc;
  if( bEnd ){
    y->nTrk++;
    y->iEv = y->iSwept = e->nEv;
  }
  return SQLITE_OK;
}

/* See engine_intake.h. */
void profsumEngTrackPart(ProfsumEngine *e, int32_t trk){
  if( !e->isXPlane || e->early.off ) return;
  if( earlyTrack(e, trk, 0) ) earlyAbandon(e);
}

/* See engine_intake.h. */
void profsumEngTrackDone(ProfsumEngine *e, int32_t trk){
  if( !e->isXPlane || e->early.off ) return;
  if( earlyTrack(e, trk, 1) ) earlyAbandon(e);
}

/* The stable grouping of the events by track into e->aOrd: track t's
** events, in file order, at aPos[t] to aPos[t+1] - 1 (aPos: nTrk + 1
** entries, changed).  From GROUP_SPLIT_MIN events on, the second half of
** the events is placed by the engine's side worker, from the last event
** back and from each track's end down, while this thread places the
** first half from each track's start up: the two meet where the track's
** events of the first half end, with no count of them needed.
** SQLITE_OK or SQLITE_NOMEM. */
#ifdef PROFSUM_GROUP_SPLIT_MIN
# define GROUP_SPLIT_MIN PROFSUM_GROUP_SPLIT_MIN
#else
# define GROUP_SPLIT_MIN 262144
#endif
typedef struct GroupHalf {
  EngSide side;
  Engine *e;
  int64_t *aEnd;              /* per track: one past where its next goes */
  int64_t iFrom, iTo;         /* events iFrom to iTo - 1, placed backwards */
} GroupHalf;
static void *groupBackMain(void *pArg){
  GroupHalf *g = (GroupHalf*)pArg;
  Engine *e = g->e;
  int64_t i;
  for(i=g->iTo-1; i>=g->iFrom; i--) e->aOrd[--g->aEnd[KEY(e, EV(e, i))->trk]] = (int32_t)i;
  return 0;
}
static int groupByTrack(Engine *e, int64_t *aPos){
  int64_t i, n = e->nEv, h = n;
  GroupHalf g;
  int bSide = 0;
  memset(&g, 0, sizeof(g));
  if( n>=GROUP_SPLIT_MIN ){
    g.aEnd = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)e->nTrk);
    if( g.aEnd==0 ) return SQLITE_NOMEM;
    memcpy(g.aEnd, aPos+1, sizeof(int64_t)*(size_t)e->nTrk);
    g.e = e;
    g.iFrom = h = n/2;
    g.iTo = n;
    bSide = profsumEngSideStart(e, &g.side, ENG_SIDE_RANK_PIECE, groupBackMain, &g);
  }
  for(i=0; i<h; i++) e->aOrd[aPos[KEY(e, EV(e, i))->trk]++] = (int32_t)i;
  if( g.aEnd ){
    if( bSide ) profsumEngSideJoin(&g.side);
    else groupBackMain(&g);
    sqlite3_free(g.aEnd);
  }
  return SQLITE_OK;
}

/* Build e->aOrd (processing order: tracks in order of first appearance,
** each in (ts, -end, file order)) and compute exclusive times.  Events are
** grouped by a counting sort (stable); a track's slice is sorted in place
** only when it is not in order already (xprof writes each line in time
** order).  Memory: the order array (4 bytes per event) and a stack as deep
** as the deepest nesting.  An XPlane whose every track was done as its
** line came (profsumEngTrackDone) has nothing left but trimming the arrays
** that grew meanwhile.  The caller's stop callback is asked before each
** track's sort.  SQLITE_OK, SQLITE_NOMEM, or SQLITE_INTERRUPT with the
** engine's message "<function>: interrupted". */
int profsumEngOrder(Engine *e){
  int64_t i, n = e->nEv, nMaxTrk = 0, nDevOpEv = 0;
  int64_t *aPos;
  int rc = SQLITE_OK;
  int counted, grouped = 1; /* nEv counted; events come track by track */
  profsumEngBlockAheadEnd(e);   /* the read is over: no block is needed ahead */
  if( e->isXPlane && !e->early.off && e->early.nTrk==e->nTrk && e->early.iEv==e->nEv ){
    engTolerance(e);
    profsumEngEarlyFree(e);
    profsumEngSweepTrim(e);
    return profsumEngRefBegin(e, 1);
  }
  profsumEngOrderLater(e);    /* some tracks only: undone, all ordered here */
  engTolerance(e);
  counted = xpLineTolerance(e, &grouped);
  if( !counted && e->nCounted==n ){
    /* every record came through noteX, which counted them */
    counted = 1;
    grouped = !e->cntUngrouped;
  }
  engTrackFlags(e);
  aPos = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(e->nTrk+1));
  if( !aPos ) return SQLITE_NOMEM;
  if( !counted ){
    int32_t prev = 0;
    for(i=0; i<e->nTrk; i++) e->aTrk[i].nEv = 0;
    for(i=0; i<n; i++){
      const SEv *r = EV(e, i);
      int32_t k = KEY(e, r)->trk;
      e->aTrk[k].nEv++;
      if( k<prev ) grouped = 0;
      prev = k;
    }
  }
  for(i=0, aPos[0]=0; i<e->nTrk; i++){
    e->aTrk[i].iFirst = aPos[i];
    aPos[i+1] = aPos[i] + e->aTrk[i].nEv;
    if( e->aTrk[i].nEv>nMaxTrk ) nMaxTrk = e->aTrk[i].nEv;
    if( e->aTrk[i].isDevice && e->aTrk[i].isDevOp ) nDevOpEv += e->aTrk[i].nEv;
  }
  /* the stable grouping: the identity when the events come track by
  ** track (no array unless a track must be sorted below) */
  if( !grouped ){
    e->aOrd = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(n ? n : 1));
    if( !e->aOrd ){ sqlite3_free(aPos); return SQLITE_NOMEM; }
    profsumPrefault(e->aOrd, sizeof(int32_t)*(size_t)n);      /* written in full */
    rc = groupByTrack(e, aPos);
  }
  sqlite3_free(aPos);
  if( rc ) return rc;
  if( (rc = orderTracks(e)) ) return rc;
  /* the reference's walk of the tracks that do not need the sweep, beside it */
  if( (rc = profsumEngRefBegin(e, 0)) ) return rc;
  return profsumEngSweepAll(e, nMaxTrk, nDevOpEv);
}
