/*
** engine_kpis.c — stage A's KPI inputs: per device, the busy union and
** span of its device ops, the unions of its transfer ops and of its
** host-offload copies among them, their
** counts (small ones below 0.1 ms) and median duration, and the same
** counts and median over all devices, written to profsum_agg_device and
** profsum_agg_fact.
**
** The per-device work reads only what the ordering left (records, tracks,
** their slices) and nothing the aggregation writes, so it runs on the
** side worker beside the aggregation's passes (profsumEngKpiStart) when
** threads are allowed, and its rows are written once the aggregation has
** summed the compile time (profsumEngKpiFinish).  With one
** thread (PROFSUM_THREADS=0) the same code runs in the calling thread at
** the finish; the results are the same integers either way.
*/
#include "profsum_int.h"
#include "engine_int.h"
#include "selectk.h"

#include <string.h>

#define SMALL_OP_PS ((int64_t)100000000)   /* 0.1 ms */

/* The device-op events of a selection of tracks (one device's, or all
** devices'), visited through the per-track slices of aOrd: aTk[0..nTk)
** are the tracks' indices, so that a device's walk costs its own tracks,
** not every track of the trace. */
typedef struct DevIter { Engine *e; const int32_t *aTk; int64_t nTk; } DevIter;

/* Call x(pArg, r) for every device-op event of the selection. */
static void devEach(DevIter *d, void (*x)(void*, const SEv*), void *pArg){
  int64_t t, k;
  for(t=0; t<d->nTk; t++){
    STrack *tr = &d->e->aTrk[d->aTk[t]];
    for(k=0; k<tr->nEv; k++) x(pArg, EV(d->e, ORD(d->e, tr->iFirst+k)));
  }
}

/* Radix selection: the k-th smallest duration (0-based) of a selection
** without copying it: one pass over the events per 12-bit digit, from the
** highest digit the selection's largest duration uses (durations are > 0);
** the 4096 counters (32 KiB, caller's) stay in the first-level cache. */
#define RADIX_BITS 12
#define RADIX_N    (1<<RADIX_BITS)
typedef struct Radix { uint64_t prefix, mask; int shift; int64_t *aCnt; const Engine *e; } Radix;
static void radixCount(void *pArg, const SEv *r){
  Radix *x = (Radix*)pArg;
  uint64_t v = (uint64_t)EVDUR(x->e, r);
  if( (v & x->mask)==x->prefix ) x->aCnt[(v>>x->shift) & (RADIX_N-1)]++;
}
static void kthDur(DevIter *d, int64_t k, int64_t maxDur, int64_t *aCnt, int64_t *pOut){
  Radix x;
  int pass, nPass = 1;
  while( nPass*RADIX_BITS<64 && ((uint64_t)maxDur>>(nPass*RADIX_BITS))!=0 ) nPass++;
  x.aCnt = aCnt;
  x.e = d->e;
  x.prefix = 0; x.mask = 0;
  for(pass=nPass-1; pass>=0; pass--){
    int64_t b, acc = 0;
    x.shift = pass*RADIX_BITS;
    memset(x.aCnt, 0, sizeof(int64_t)*RADIX_N);
    devEach(d, radixCount, &x);
    for(b=0; b<RADIX_N-1; b++){
      if( acc + x.aCnt[b] > k ) break;
      acc += x.aCnt[b];
    }
    k -= acc;
    x.prefix |= (uint64_t)b << x.shift;
    x.mask |= (uint64_t)(RADIX_N-1) << x.shift;
  }
  *pOut = (int64_t)x.prefix;
}

/* At most this many durations are copied for a median (128 KiB). */
#define MEDIAN_GATHER_MAX ((int64_t)1<<14)

/* A pass of kthPair over the durations of a selection: with aCnt, count
** those whose bits under mask are prefix by their digit at shift; with
** aG, copy them; either way the smallest of those whose bits under mB
** are pB into *pMinB (when pMinB). */
static void kthPairPass(DevIter *d, uint64_t prefix, uint64_t mask, int shift, int64_t *aCnt,
                        int64_t *aG, uint64_t pB, uint64_t mB, uint64_t *pMinB){
  int64_t t, j, m = 0;
  uint64_t minB = pMinB ? *pMinB : 0;
  for(t=0; t<d->nTk; t++){
    const STrack *tr = &d->e->aTrk[d->aTk[t]];
    const Engine *e = d->e;
    if( mask==0 && aG==0 && pMinB==0 ){
      /* the first count: every duration, nothing else to look at */
      if( e->aOrd==0 ){
        for(j=tr->iFirst; j<tr->iFirst+tr->nEv; j++) aCnt[((uint64_t)EVDUR(e, EV(e, j))>>shift) & (RADIX_N-1)]++;
      }else{
        const int32_t *o = e->aOrd + tr->iFirst;
        for(j=0; j<tr->nEv; j++) aCnt[((uint64_t)EVDUR(e, EV(e, o[j]))>>shift) & (RADIX_N-1)]++;
      }
      continue;
    }
    for(j=0; j<tr->nEv; j++){
      uint64_t v = (uint64_t)EVDUR(e, EV(e, ORD(e, tr->iFirst+j)));
      if( (v & mask)==prefix ){
        if( aG ) aG[m++] = (int64_t)v;
        else aCnt[(v>>shift) & (RADIX_N-1)]++;
      }else if( pMinB && (v & mB)==pB && v<minB ){
        minB = v;
      }
    }
  }
  if( pMinB ) *pMinB = minB;
}

/* Where kthPair stands: the k-th smallest is the kk-th of the n1
** durations whose bits under mask are prefix (those above shift still
** to be told apart by a pass over the selection), and, when two, the
** (k+1)-th is in that bucket (bState 0), the smallest of those under
** (pB, mB) (1: minB, kept by the passes after) or known (2: in *pB). */
typedef struct KthAt {
  uint64_t prefix, mask, pB, mB, minB;
  int64_t kk, n1;
  int shift, bState;
} KthAt;

/* The k-th smallest (and, when two, the (k+1)-th) from where *s stands:
** counting passes on 12-bit digits below s->shift, each within the bucket
** of the k-th, until that bucket is one value or holds at most
** MEDIAN_GATHER_MAX durations: then one pass copies them and a selection
** among them ends it (on no memory for the copy: kthDur's passes, which
** need maxDur).  Into *pA and *pB; exact integers either way. */
static void kthFinish(DevIter *d, int64_t k, int two, int64_t maxDur, int64_t *aCnt, KthAt *s,
                      int64_t *pA, int64_t *pB){
  int64_t *aG, j;
  while( s->shift>0 && s->n1>MEDIAN_GATHER_MAX ){
    int64_t b1, acc = 0;
    s->shift = s->shift>RADIX_BITS ? s->shift-RADIX_BITS : 0;
    memset(aCnt, 0, sizeof(int64_t)*RADIX_N);
    kthPairPass(d, s->prefix, s->mask, s->shift, aCnt, 0, s->pB, s->mB, s->bState==1 ? &s->minB : 0);
    for(b1=0; b1<RADIX_N-1; b1++){
      if( acc + aCnt[b1] > s->kk ) break;
      acc += aCnt[b1];
    }
    s->kk -= acc;
    s->n1 = aCnt[b1];
    if( two && s->bState==0 && s->kk+1>=s->n1 ){
      int64_t b2;
      for(b2=b1+1; b2<RADIX_N-1 && aCnt[b2]==0; b2++){}
      s->pB = s->prefix | ((uint64_t)b2<<s->shift);
      s->mB = s->mask | ((uint64_t)(RADIX_N-1)<<s->shift);
      if( s->shift==0 ){ *pB = (int64_t)s->pB; s->bState = 2; }
      else s->bState = 1;
    }
    s->prefix |= (uint64_t)b1<<s->shift;
    s->mask |= (uint64_t)(RADIX_N-1)<<s->shift;
  }
  if( s->shift==0 ){             /* the bucket is one value */
    *pA = (int64_t)s->prefix;
    if( two && s->bState==0 ) *pB = *pA;
    if( two && s->bState==1 ){
      if( s->minB==UINT64_MAX ){
        /* left at a bucket that was already one value: its smallest yet
        ** to be found (the matching values' counts are not needed) */
        memset(aCnt, 0, sizeof(int64_t)*RADIX_N);
        kthPairPass(d, s->prefix, UINT64_MAX, 0, aCnt, 0, s->pB, s->mB, &s->minB);
      }
      *pB = (int64_t)s->minB;
    }
    return;
  }
  aG = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(s->n1>0 ? s->n1 : 1));
  if( aG==0 ){
    kthDur(d, k, maxDur, aCnt, pA);
    if( two ) kthDur(d, k+1, maxDur, aCnt, pB);
    return;
  }
  kthPairPass(d, s->prefix, s->mask, 0, aCnt, aG, s->pB, s->mB, s->bState==1 ? &s->minB : 0);
  *pA = profsumSelectKth(aG, s->n1, s->kk);
  if( two && s->bState==0 ){
    int64_t mn = aG[s->kk+1];
    for(j=s->kk+2; j<s->n1; j++) if( aG[j]<mn ) mn = aG[j];
    *pB = mn;
  }else if( two && s->bState==1 ){
    *pB = (int64_t)s->minB;
  }
  sqlite3_free(aG);
}

/* The k-th smallest duration of a selection (k < its count, maxDur its
** largest) in *pA and, when two, the (k+1)-th in *pB (k+1 < its count),
** from the highest bit maxDur uses.  The (k+1)-th is in the k-th's
** bucket, or the smallest of the next non-empty bucket at the level where
** it left it (kept by the passes after). */
static void kthPair(DevIter *d, int64_t k, int two, int64_t maxDur, int64_t *aCnt,
                    int64_t *pA, int64_t *pB){
  KthAt s;
  int bits = 0;
  while( bits<63 && ((uint64_t)maxDur>>bits)!=0 ) bits++;
  memset(&s, 0, sizeof(s));
  s.minB = UINT64_MAX;
  s.kk = k;
  s.n1 = MEDIAN_GATHER_MAX+1;       /* not known yet: a first pass */
  /* kthFinish's first pass counts at shift - RADIX_BITS */
  s.shift = (bits>RADIX_BITS ? bits-RADIX_BITS : 0) + RADIX_BITS;
  kthFinish(d, k, two, maxDur, aCnt, &s, pA, pB);
}

/* The log-scale histogram of durations the walks of the device ops fill
** on their way (unionSpan), so that a median starts from it instead of
** from a first counting pass: a duration v below 128 is bucket v; a larger
** one, of bit length L, is bucket 64*s + (v >> s) with s = L - 7 (its
** seven leading bits: 64 buckets per power of two, in increasing order of
** v).  Every bucket is the set of durations whose bits from s up are
** fixed: what kthFinish continues from.  At most bucket 3711 (v < 2^63). */
#define LOGH_N 3712
static inline int logBucket(uint64_t v){
  int sh;
  if( v<128 ) return (int)v;
  sh = 64 - __builtin_clzll(v) - 7;
  return 64*sh + (int)(v>>sh);
}
/* Bucket b as the prefix its durations share under mask, from bit *pShift. */
static void logBucketRange(int64_t b, uint64_t *pPrefix, uint64_t *pMask, int *pShift){
  int sh;
  if( b<128 ){ *pPrefix = (uint64_t)b; *pMask = UINT64_MAX; *pShift = 0; return; }
  sh = (int)(b>>6) - 1;
  *pPrefix = (uint64_t)(b - 64*(int64_t)sh) << sh;
  *pMask = ~(((uint64_t)1<<sh) - 1);
  *pShift = sh;
}

/* kthPair from the selection's log histogram aH (LOGH_N counts). */
static void kthPairHist(DevIter *d, int64_t k, int two, int64_t maxDur, const int64_t *aH,
                        int64_t *aCnt, int64_t *pA, int64_t *pB){
  KthAt s;
  int64_t b1, acc = 0;
  memset(&s, 0, sizeof(s));
  s.minB = UINT64_MAX;
  for(b1=0; b1<LOGH_N-1; b1++){
    if( acc + aH[b1] > k ) break;
    acc += aH[b1];
  }
  s.kk = k - acc;
  s.n1 = aH[b1];
  logBucketRange(b1, &s.prefix, &s.mask, &s.shift);
  if( two && s.kk+1>=s.n1 ){
    int64_t b2;
    int sh2;
    for(b2=b1+1; b2<LOGH_N-1 && aH[b2]==0; b2++){}
    logBucketRange(b2, &s.pB, &s.mB, &sh2);
    if( sh2==0 ){ *pB = (int64_t)s.pB; s.bState = 2; }
    else s.bState = 1;
  }
  kthFinish(d, k, two, maxDur, aCnt, &s, pA, pB);
}

/* Median (linear interpolation at 0.5) of the n durations of a selection
** whose largest duration is maxDur, µs; aCnt: RADIX_N counters; aH: the
** selection's log histogram, or 0 (then a first pass counts). */
static void medianDur(DevIter *d, int64_t n, int64_t maxDur, const int64_t *aH, int64_t *aCnt,
                      double *pOut){
  int64_t a, b = 0;
  if( n==0 ){ *pOut = 0.0; return; }
  if( aH ) kthPairHist(d, (n-1)/2, n%2==0, maxDur, aH, aCnt, &a, &b);
  else kthPair(d, (n-1)/2, n%2==0, maxDur, aCnt, &a, &b);
  if( n%2 ){ *pOut = US(a); return; }
  *pOut = US(a)*0.5 + US(b)*0.5;
}

/* What an event key is to the unions (EngKpiJob.aKeyXfer). */
#define KEY_XFER 1      /* a transfer op (profsumEngIsTransferKey) */
#define KEY_OFFLOAD 2   /* a host-offload copy, with KEY_XFER */

/* Counts of a selection: events, small events, the largest duration, the
** sums of the durations of the small events and of all (ps, each held at
** INT64_MAX when it would pass it: satAdd). */
typedef struct CountSmall { int64_t n, nSmall, max, smallPs, allPs; } CountSmall;

/* a + b for a, b >= 0, held at INT64_MAX. */
static int64_t satAdd(int64_t a, int64_t b){
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

/* Busy union and span of one device's ops (its tracks aTk[0..nTk), in
** track order), the union of those whose key aKeyXfer marks (*pXfer: a
** transfer op overlapping another on a second stream counts once, so it
** never exceeds the busy union), the union of those it marks KEY_OFFLOAD
** (*pOff, at most *pXfer), and their counts into *pC: a k-way merge of
** the tracks' slices (each already in ts
** order) by a binary heap on (ts, position in aTk), no copy; the events
** come in the order a scan of the heads for the smallest (ts, position)
** would give them.  The same walk counts the durations into the log
** histogram aH (LOGH_N counts, the caller's; medianDur's start).
** SQLITE_OK or SQLITE_NOMEM (then nothing is set). */
static int unionSpan(Engine *e, const int32_t *aTk, int64_t nTk, const unsigned char *aKeyXfer,
                     int64_t *pBusy, int64_t *pXfer, int64_t *pOff, int64_t *pSpan, CountSmall *pC,
                     int64_t *aH){
  int64_t nH = 0, k, *aPos, *aHeap, *aTs;
  int64_t curLo = 0, curHi = 0, lo = 0, hi = 0, busy = 0;
  int64_t xLo = 0, xHi = 0, xfer = 0;     /* the same union of the transfer ops */
  int64_t oLo = 0, oHi = 0, off = 0;      /* and of the host-offload copies */
  int started = 0, xStarted = 0, oStarted = 0;
  /* counted here, stored once at the end: *pC lies in memory the calling
  ** thread allocated, whose neighbours it may be writing meanwhile */
  CountSmall cnt = *pC;
  aPos = sqlite3_malloc64(sizeof(int64_t)*3*(sqlite3_uint64)(nTk+1));
  if( aPos==0 ) return SQLITE_NOMEM;
  aHeap = aPos + nTk + 1;
  aTs = aHeap + nTk + 1;     /* the ts of the head of cursor k */
#define USP_HEAD(k) EV(e, ORD(e, e->aTrk[aTk[k]].iFirst + aPos[k]))
#define USP_LESS(a, b) (aTs[a]<aTs[b] || (aTs[a]==aTs[b] && (a)<(b)))
  for(k=0; k<nTk; k++){
    aPos[k] = 0;
    if( e->aTrk[aTk[k]].nEv>0 ){
      int64_t c = nH++;
      aTs[k] = USP_HEAD(k)->ts;
      aHeap[c] = k;
      while( c>0 && USP_LESS(aHeap[c], aHeap[(c-1)/2]) ){
        int64_t x = aHeap[c]; aHeap[c] = aHeap[(c-1)/2]; aHeap[(c-1)/2] = x; c = (c-1)/2;
      }
    }
  }
  while( nH>0 ){
    int64_t best = aHeap[0], c = 0;
    SEv *r;
    if( nH==1 ){
      /* one cursor left (a device's only ops line: all of it): its events
      ** in order, without the heap */
      const STrack *tr = &e->aTrk[aTk[best]];
      r = EV(e, ORD(e, tr->iFirst + aPos[best]));
      if( ++aPos[best] >= tr->nEv ) nH = 0;
    }else{
      r = USP_HEAD(best);
      if( ++aPos[best] < e->aTrk[aTk[best]].nEv ) aTs[best] = USP_HEAD(best)->ts;
      else aHeap[0] = aHeap[--nH];
      for(;;){
        int64_t l = 2*c+1, rr = 2*c+2, m = c, x;
        if( l<nH && USP_LESS(aHeap[l], aHeap[m]) ) m = l;
        if( rr<nH && USP_LESS(aHeap[rr], aHeap[m]) ) m = rr;
        if( m==c ) break;
        x = aHeap[c]; aHeap[c] = aHeap[m]; aHeap[m] = x; c = m;
      }
    }
    cnt.n++;
    int64_t ts = r->ts, dur = EVDUR(e, r);
    if( dur<SMALL_OP_PS ){ cnt.nSmall++; cnt.smallPs = satAdd(cnt.smallPs, dur); }
    cnt.allPs = satAdd(cnt.allPs, dur);
    aH[logBucket((uint64_t)dur)]++;
    if( dur>cnt.max ) cnt.max = dur;
    if( aKeyXfer[r->key] ){
      if( !xStarted ){ xLo = ts; xHi = ts + dur; xStarted = 1; }
      else if( ts>xHi ){ xfer += xHi-xLo; xLo = ts; xHi = ts + dur; }
      else if( ts+dur>xHi ) xHi = ts + dur;
      if( aKeyXfer[r->key] & KEY_OFFLOAD ){
        if( !oStarted ){ oLo = ts; oHi = ts + dur; oStarted = 1; }
        else if( ts>oHi ){ off += oHi-oLo; oLo = ts; oHi = ts + dur; }
        else if( ts+dur>oHi ) oHi = ts + dur;
      }
    }
    if( !started ){ curLo = lo = ts; curHi = hi = ts + dur; started = 1; continue; }
    if( ts>curHi ){ busy += curHi-curLo; curLo = ts; curHi = ts + dur; }
    else if( ts+dur>curHi ) curHi = ts + dur;
    if( ts+dur>hi ) hi = ts + dur;
  }
#undef USP_HEAD
#undef USP_LESS
  if( started ) busy += curHi-curLo;
  if( xStarted ) xfer += xHi-xLo;
  if( oStarted ) off += oHi-oLo;
  sqlite3_free(aPos);
  *pC = cnt;
  *pBusy = busy;
  *pXfer = xfer;
  *pOff = off;
  *pSpan = hi-lo;
  return SQLITE_OK;
}

/* What one device's walk found. */
typedef struct KpiDev {
  int32_t proc;               /* the device's process name id */
  int64_t busy, span;         /* ps */
  int64_t xfer;               /* ps: the union of its transfer ops */
  int64_t off;                /* ps: the union of its host-offload copies */
  CountSmall c;
  double med;                 /* median op duration, µs */
} KpiDev;

struct EngKpiJob {
  Engine *e;
  int32_t *aDevTk;            /* the device-op tracks grouped by device (in
                              ** device order, each device's in track order) */
  int64_t *aDevFirst;         /* device j's are aDevTk[aDevFirst[j]..aDevFirst[j+1]) */
  int64_t nDev, nDevTk;
  KpiDev *aDev;
  int64_t busyAll;            /* the devices' busy ps, summed */
  int64_t xferAll;            /* their transfer ps (KpiDev.xfer), summed */
  int64_t offAll;             /* their host-offload ps (KpiDev.off), summed */
  unsigned char *aKeyXfer;    /* per event key: KEY_XFER when it is a
                              ** transfer's (profsumEngIsTransferKey), with
                              ** KEY_OFFLOAD when a host-offload copy's */
  CountSmall cAll;            /* all devices' counts */
  double medAll;              /* all devices' median op duration, µs */
  int rc;                     /* of the computation */
  EngSide side;               /* the computation's place on the side worker */
};

/* Group the device-op tracks of e by device (devices in order of their
** first such track, by process name) into j.  SQLITE_OK or SQLITE_NOMEM. */
static int kpiPlan(Engine *e, EngKpiJob *j){
  HMap devOf = {0,0,0};       /* proc name id → device index */
  int64_t i, d, acc = 0;
  j->aDevTk = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(e->nTrk+1));
  j->aDevFirst = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(e->nTrk+2));
  j->aDev = sqlite3_malloc64(sizeof(KpiDev)*(sqlite3_uint64)(e->nTrk+1));
  j->aKeyXfer = sqlite3_malloc64((sqlite3_uint64)(e->nKey+1));
  if( !j->aDevTk || !j->aDevFirst || !j->aDev || !j->aKeyXfer ) return SQLITE_NOMEM;
  for(i=0; i<e->nKey; i++){
    const EvKey *q = &e->aKey[i];
    j->aKeyXfer[i] = 0;
    if( profsumEngIsHostOffloadKey(e, q) ) j->aKeyXfer[i] = KEY_XFER | KEY_OFFLOAD;
    else if( q->name>=0 && profsumEngIsTransferName(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name)) ){
      j->aKeyXfer[i] = KEY_XFER;      /* profsumEngIsTransferKey without its offload test again */
    }
  }
  for(i=0; i<e->nTrk; i++){
    STrack *t = &e->aTrk[i];
    int isNew;
    HEnt *h;
    if( !(t->isDevice && t->isDevOp) ) continue;
    h = profsumEngHmGet(&devOf, t->proc, 0, 1, &isNew);
    if( h==0 ){ profsumEngHmFree(&devOf); return SQLITE_NOMEM; }
    if( isNew ){ h->v1 = j->nDev; j->aDevFirst[j->nDev] = 0; j->aDev[j->nDev++].proc = t->proc; }
    j->aDevFirst[h->v1]++;    /* its number of tracks, for now */
    j->nDevTk++;
  }
  /* the tracks grouped (a counting sort, stable: linear in the tracks) */
  for(d=0; d<j->nDev; d++){ int64_t c = j->aDevFirst[d]; j->aDevFirst[d] = acc; acc += c; }
  j->aDevFirst[j->nDev] = acc;
  for(i=0; i<e->nTrk; i++){
    STrack *t = &e->aTrk[i];
    if( !(t->isDevice && t->isDevOp) ) continue;
    j->aDevTk[j->aDevFirst[profsumEngHmGet(&devOf, t->proc, 0, 0, 0)->v1]++] = (int32_t)i;
  }
  for(d=j->nDev; d>0; d--) j->aDevFirst[d] = j->aDevFirst[d-1];   /* back to the starts */
  j->aDevFirst[0] = 0;
  profsumEngHmFree(&devOf);
  return SQLITE_OK;
}

/* Walk each device of j (busy union, span, counts, log histogram, median)
** and all devices (counts and median).  Reads the engine's records and
** tracks only.  Sets j->rc (SQLITE_OK or SQLITE_NOMEM). */
static void kpiCompute(EngKpiJob *j){
  Engine *e = j->e;
  int64_t d, b;
  int64_t *aCnt = sqlite3_malloc64(sizeof(int64_t)*(RADIX_N + 2*LOGH_N));
  int64_t *aH, *aHAll;        /* log histograms: one device's, all devices' */
  DevIter all;
  j->rc = SQLITE_OK;
  if( aCnt==0 ){ j->rc = SQLITE_NOMEM; return; }
  aH = aCnt + RADIX_N;
  aHAll = aH + LOGH_N;
  memset(aHAll, 0, sizeof(int64_t)*LOGH_N);
  for(d=0; d<j->nDev; d++){
    KpiDev *v = &j->aDev[d];
    DevIter one;
    one.e = e; one.aTk = j->aDevTk + j->aDevFirst[d]; one.nTk = j->aDevFirst[d+1] - j->aDevFirst[d];
    memset(aH, 0, sizeof(int64_t)*LOGH_N);
    memset(&v->c, 0, sizeof(v->c));
    if( (j->rc = unionSpan(e, one.aTk, one.nTk, j->aKeyXfer, &v->busy, &v->xfer, &v->off,
                           &v->span, &v->c, aH))!=SQLITE_OK ) break;
    medianDur(&one, v->c.n, v->c.max, aH, aCnt, &v->med);
    for(b=0; b<LOGH_N; b++) aHAll[b] += aH[b];
    j->busyAll += v->busy;
    j->xferAll += v->xfer;
    j->offAll += v->off;
    j->cAll.n += v->c.n;      /* the devices' counts make all devices' */
    j->cAll.nSmall += v->c.nSmall;
    j->cAll.smallPs = satAdd(j->cAll.smallPs, v->c.smallPs);
    j->cAll.allPs = satAdd(j->cAll.allPs, v->c.allPs);
    if( v->c.max>j->cAll.max ) j->cAll.max = v->c.max;
  }
  if( j->rc==SQLITE_OK ){
    all.e = e; all.aTk = j->aDevTk; all.nTk = j->nDevTk;     /* counts: any order */
    medianDur(&all, j->cAll.n, j->cAll.max, aHAll, aCnt, &j->medAll);
  }
  sqlite3_free(aCnt);
}

/* The computation's thread. */
static void *kpiMain(void *pArg){
  kpiCompute((EngKpiJob*)pArg);
  return 0;
}

/* See engine_int.h. */
int profsumEngKpiStart(Engine *e, EngKpiJob **pp){
  EngKpiJob *j = sqlite3_malloc64(sizeof(EngKpiJob));
  int rc;
  *pp = 0;
  if( j==0 ) return SQLITE_NOMEM;
  memset(j, 0, sizeof(*j));
  j->e = e;
  *pp = j;
  if( (rc = kpiPlan(e, j))!=SQLITE_OK ) return rc;
  profsumEngSideStart(e, &j->side, ENG_SIDE_RANK_KPI, kpiMain, j);
  return SQLITE_OK;
}

/* Write the rows of j (its computation done): one per device, then the
** facts with the aggregation's compile ps and the devices' transfer ps. */
static int kpiWrite(Engine *e, EngKpiJob *j, profsum_ps compile){
  sqlite3_stmt *pIns = 0;
  int64_t d;
  int rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_device VALUES(?1,?2,?3,?4,?5,?6,?7)");
  for(d=0; rc==SQLITE_OK && d<j->nDev; d++){
    const KpiDev *v = &j->aDev[d];
    sqlite3_bind_int64(pIns, 1, e->traceId);
    profsumEngBindStrId(e, pIns, 2, v->proc);
    sqlite3_bind_int64(pIns, 3, v->c.n);
    sqlite3_bind_int64(pIns, 4, v->c.nSmall);
    sqlite3_bind_double(pIns, 5, US(v->busy));
    sqlite3_bind_double(pIns, 6, US(v->span));
    sqlite3_bind_double(pIns, 7, v->med);
    rc = profsumEngStep(e, pIns);
  }
  sqlite3_finalize(pIns);
  if( rc==SQLITE_OK ){
    EngFact aF[9] = {
      {"median_op_duration", 0, 0}, {"n_ops", 0, 0}, {"n_small_ops", 0, 0},
      {"compile_duration", 0, 0}, {"transfer_duration", 0, 0}, {"device_busy_duration", 0, 0},
      {"host_offload_duration", 0, 0}, {"small_op_duration", 0, 0}, {"op_duration", 0, 0}};
    aF[0].v = j->medAll; aF[0].isNull = j->cAll.n==0;
    aF[1].v = (double)j->cAll.n;
    aF[2].v = (double)j->cAll.nSmall;
    aF[3].v = US(compile);
    aF[4].v = US(j->xferAll);
    aF[5].v = US(j->busyAll);
    aF[6].v = US(j->offAll);
    aF[7].v = US(j->cAll.smallPs);
    aF[8].v = US(j->cAll.allPs);
    rc = profsumEngFacts(e, aF, 9);
  }
  return rc;
}

/* See engine_int.h. */
int profsumEngKpiFinish(Engine *e, EngKpiJob *j, int bWrite, profsum_ps compile){
  int rc = SQLITE_OK;
  if( j==0 ) return SQLITE_OK;
  if( !profsumEngSideJoin(&j->side) && bWrite && j->aDev ) kpiCompute(j);
  if( bWrite ){
    rc = j->aDev ? j->rc : SQLITE_NOMEM;
    if( rc==SQLITE_OK ) rc = kpiWrite(e, j, compile);
  }
  sqlite3_free(j->aKeyXfer);
  sqlite3_free(j->aDevTk);
  sqlite3_free(j->aDevFirst);
  sqlite3_free(j->aDev);
  sqlite3_free(j);
  return rc;
}
