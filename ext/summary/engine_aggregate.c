/*
** engine_aggregate.c — stage A's aggregates: breakdown (§4.4), steps
** (§4.3), per-op aggregates (§4.5), collectives (§4.7) and the exact-time
** check of the nesting; the KPI inputs (engine_kpis.c) are walked beside
** them.
*/
#include "profsum_int.h"
#include "pytext.h"
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

/* See engine_int.h. */
int profsumEngFacts(Engine *e, const EngFact *a, int n){
  sqlite3_stmt *p = 0;
  int k, rc = profsumEngPrepare(e, &p, "INSERT INTO \"%w\".profsum_agg_fact VALUES(?1,?2,?3)");
  for(k=0; rc==SQLITE_OK && k<n; k++){
    sqlite3_bind_int64(p, 1, e->traceId);
    sqlite3_bind_text(p, 2, a[k].zName, -1, SQLITE_STATIC);
    if( a[k].isNull ) sqlite3_bind_null(p, 3); else sqlite3_bind_double(p, 3, a[k].v);
    rc = profsumEngStep(e, p);
  }
  sqlite3_finalize(p);
  return rc;
}
/* Most-common selection over counters: entries of m with k1 = (kind<<40 |
** owner) carry v1 = count, v2 = the processing position of the first event
** with that value (unique within a kind and owner); picks per owner the max
** count, ties → first seen (Counter.most_common).  counterAdd() adds n
** events whose first is at position `first`. */
#define CKEY(kind, owner) (((int64_t)(kind)<<40) | (int64_t)(owner))

static int counterAdd(HMap *m, int kind, int64_t owner, int64_t val, int64_t n, int64_t first){
  int isNew;
  HEnt *h = profsumEngHmGet(m, CKEY(kind, owner), val, 1, &isNew);
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew || first<h->v2 ) h->v2 = first;
  h->v1 += n;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* The aggregates                                                      */
/* ------------------------------------------------------------------ */
typedef struct OpAgg {
  int64_t count;
  profsum_ps total, excl;       /* sums of ps (128 bits: a dur reaches 2^61) */
  double totalRef, exclRef;      /* total, excl as the reference adds them */
  double flopSum; int64_t flopN;
  int32_t shape, source, tfop;   /* most common values, -1 none */
  int64_t bestShape[2], bestSource[2], bestTf[2];   /* count, seq */
  int seen;
} OpAgg;

/* A step: its number, the sum of its events' durations as the reference
** adds them (doubles, in processing order) and their count. */
typedef struct StepAgg { int64_t step; double sum; int64_t n; } StepAgg;

static int cmpStep(const void *pa, const void *pb){
  const StepAgg *a = (const StepAgg*)pa, *b = (const StepAgg*)pb;
  return a->step<b->step ? -1 : (a->step>b->step);
}

/* Case-insensitive substring test of z[0..n) for lit (lower-case ASCII). */
static int hasCi(const char *z, int n, const char *lit){
  int m = (int)strlen(lit), i, k;
  for(i=0; i+m<=n; i++){
    for(k=0; k<m; k++){
      char c = z[i+k];
      if( c>='A' && c<='Z' ) c = (char)(c+32);
      if( c!=lit[k] ) break;
    }
    if( k==m ) return 1;
  }
  return 0;
}

/* a.?to.?b, case-insensitive (the KPI transfer pattern). */
static int hasToPattern(const char *z, int n, const char *a, const char *b){
  int na = (int)strlen(a), nb = (int)strlen(b), i, gap1, gap2;
  for(i=0; i+na<=n; i++){
    if( sqlite3_strnicmp(z+i, a, na)!=0 ) continue;
    for(gap1=0; gap1<=1; gap1++){
      int j = i+na+gap1;
      if( j+2>n || sqlite3_strnicmp(z+j, "to", 2)!=0 ) continue;
      for(gap2=0; gap2<=1; gap2++){
        int k = j+2+gap2;
        if( k+nb<=n && sqlite3_strnicmp(z+k, b, nb)==0 ) return 1;
      }
    }
  }
  return 0;
}

/* See engine_int.h. */
int profsumEngIsTransferName(const char *z, int n){
  return hasCi(z, n, "memcpy") || hasCi(z, n, "h2d") || hasCi(z, n, "d2h")
      || hasCi(z, n, "infeed") || hasCi(z, n, "outfeed") || hasCi(z, n, "transfer")
      || hasToPattern(z, n, "host", "device") || hasToPattern(z, n, "device", "host");
}


/* The rows of profsum_agg_breakdown, by category index (CAT_*). */
static const char *const azBreakCat[5] = {"compute","communication","host","stall","other"};

/* The global breakdown's sweep worked out beside the aggregation's event
** pass, as a side job (engine_side.c): the job finds the window itself,
** by the event pass's rule (see Agg.wLo), then sweeps it
** (profsumEngGlobalSweep).  It reads the records, tracks and key
** categories, which nothing writes meanwhile. */
typedef struct SweepJob {
  Engine *e;
  const int8_t *aKeyCat;
  double wLo, wHi; int hasW;  /* its window */
  double aSum[3];             /* communication, compute, uncovered (µs) */
  int rc;                     /* of profsumEngGlobalSweep */
  EngSide side;               /* its place on the side worker */
} SweepJob;

/* The window of the global breakdown: the smallest start and the largest
** end, in the reference's doubles, of the compute events of the device
** tracks other than Steps. */
static void sweepWindow(SweepJob *u){
  Engine *e = u->e;
  int64_t t, j;
  double wLo = 0, wHi = 0;    /* kept in locals and stored once: u lies in
                              ** the aggregation's state, beside fields the
                              ** event pass writes per event */
  int hasW = 0;
  for(t=0; t<e->nTrk; t++){
    const STrack *tr = &e->aTrk[t];
    if( !tr->isDevice || tr->isSteps ) continue;
    for(j=0; j<tr->nEv; j++){
      int32_t k = ORD(e, tr->iFirst + j);
      double ts, end;
      if( u->aKeyCat[EV(e, k)->key]!=CAT_COMPUTE ) continue;
      profsumEngEvFloatIn(e, tr, k, &ts, &end);
      if( !hasW || ts<wLo ) wLo = ts;
      if( !hasW || end>wHi ) wHi = end;
      hasW = 1;
    }
  }
  u->wLo = wLo; u->wHi = wHi; u->hasW = hasW;
}

/* The job's thread: the window, then the sweep of it. */
static void *sweepJobMain(void *pArg){
  SweepJob *u = (SweepJob*)pArg;
  sweepWindow(u);
  if( u->hasW && u->wHi>u->wLo ) u->rc = profsumEngGlobalSweep(u->e, u->aKeyCat, u->wLo, u->wHi, u->aSum);
  return 0;
}

/* Start the job of u for e (aKeyCat: the categories, made): nothing when
** the trace is small or no thread can be had (the breakdown then sweeps
** itself). */
static void sweepJobStart(SweepJob *u, Engine *e, const int8_t *aKeyCat){
  memset(u, 0, sizeof(*u));
  u->e = e;
  u->aKeyCat = aKeyCat;
  profsumEngSideStart(e, &u->side, ENG_SIDE_RANK_SWEEP, sweepJobMain, u);
}

/* Wait for u's thread, if it runs.  1 when it swept the window [wLo, wHi)
** (hasW) that the event pass found (then aSum[3] is set), else 0. */
static int sweepJobTake(SweepJob *u, int hasW, double wLo, double wHi, double aSum[3]){
  if( !profsumEngSideJoin(&u->side) || u->rc!=SQLITE_OK || u->hasW!=hasW || !hasW || u->wLo!=wLo || u->wHi!=wHi ) return 0;
  memcpy(aSum, u->aSum, sizeof(u->aSum));
  return 1;
}

/* What the aggregation works out once per event key. */
typedef struct KeyMemo {
  int64_t n;            /* events of the key */
  int64_t first;        /* processing position of its first event */
  double flop;          /* flop proxy of the key's shape (flopKind 1) */
  int8_t flopKind;      /* -1 not yet, 0 none, 1 flop holds it */
  int8_t comm;          /* -2 not yet, -1 not counted, else index in azComm */
} KeyMemo;

/* A kept exclusive time (ex) by its key k (an event index). */
typedef struct ExclOf { int64_t k, ex; } ExclOf;
static int cmpExclOf(const void *pa, const void *pb){
  const ExclOf *a = (const ExclOf*)pa, *b = (const ExclOf*)pb;
  return a->k<b->k ? -1 : (a->k>b->k);
}
/* The entries (aParPos/aParEx, or aXrPos/aXrEx on a device-op track) of
** track tr's events that have a child: [*pLo, *pHi) of *paPos and *paEx,
** found from cursor *pCur (the tracks asked in order; two cursors, one per
** kind of entry, in aCur). */
static void trackEntries(const Engine *e, const STrack *tr, int64_t aCur[2],
                         const int32_t **paPos, const uint32_t **paEx, int64_t *pLo, int64_t *pHi){
  int dev = tr->isDevice && tr->isDevOp;
  const int32_t *aPos = dev ? e->aXrPos : e->aParPos;
  int64_t n = dev ? e->nXr : e->nPar, c = aCur[dev];
  while( c<n && aPos[c]<tr->iFirst ) c++;
  *pLo = c;
  while( c<n && aPos[c]<tr->iFirst+tr->nEv ) c++;
  *pHi = aCur[dev] = c;
  *paPos = aPos;
  *paEx = dev ? e->aXrEx : e->aParEx;
}
/* The first of the n increasing positions aPos at or after pos. */
static int64_t entryAtOrAfter(const int32_t *aPos, int64_t n, int64_t pos){
  int64_t lo = 0, hi = n;
  while( lo<hi ){
    int64_t mid = lo + (hi-lo)/2;
    if( aPos[mid]<pos ) lo = mid+1; else hi = mid;
  }
  return lo;
}
/* The entry of the kept exclusive times (the track's n entries, keys
** increasing: a processing position in aPos, or an event index in aOf's
** k) that belongs to key k, or -1; *pCur: a cursor, the first entry whose
** key is not below the last key asked (keys are asked increasing but at
** the few places the exact order moved an event, where a binary search
** finds it). */
static int64_t exactEntry(const int32_t *aPos, const ExclOf *aOf, int64_t n,
                          int64_t k, int64_t *pCur){
  int64_t c = *pCur;
#define ENTRY_KEY(i) (aOf ? aOf[i].k : (int64_t)aPos[i])
  if( c>0 && ENTRY_KEY(c-1)>=k ){
    int64_t lo = 0, hi = c;
    while( lo<hi ){
      int64_t mid = lo + (hi-lo)/2;
      if( ENTRY_KEY(mid)<k ) lo = mid+1; else hi = mid;
    }
    return ENTRY_KEY(lo)==k ? lo : -1;
  }
  while( c<n && ENTRY_KEY(c)<k ) c++;
  *pCur = c;
  return (c<n && ENTRY_KEY(c)==k) ? c : -1;
#undef ENTRY_KEY
}

/* A level of engExactCheck's nesting stack: the open event (its key in
** the track's order), the entry of its kept exclusive time (exactEntry,
** found when it opened: the events open in increasing keys) and the
** durations of its children so far. */
typedef struct ExactLevel {
  int64_t child;
  int32_t k;
  int32_t ent;
} ExactLevel;

/* The summary decides order and nesting as the reference's doubles do
** (profsumEngCmpPoint).  When some decision went otherwise than the exact times
** would have it (e->nFlip: timestamps whose doubles have lost digits, as
** epoch microseconds, or ends equal in picoseconds whose doubles differ),
** sweep every track again (§2) on exact picoseconds and give the
** per-track breakdown's buckets of that nesting in aExact (Steps threads
** left out, as there; aKeyCat: category per event key) and, in *pnDiff,
** the events whose exclusive time differs from the summary's.  Only the
** facts and the diagnostic that tell the user so come from it: the
** summary keeps the reference's numbers.  Each track's events are
** walked as processing positions, which are most often already in the
** exact order (then read in place); otherwise brought into it by an
** insertion sort (the two orders differ only at near ties), so that the
** kept exclusive times, which come by position, are found as the events
** open; when the insertion sort would move too much, the positions become
** event indices, sorted in full, and the kept times are sorted by event
** index to match.  Memory: 4 bytes per event of the largest track not in
** order (its positions), 16 per event of it that has a child (its kept
** time, by event index) when sorted in full, and 16 bytes per level of
** the nesting.  SQLITE_OK or SQLITE_NOMEM. */
static int engExactCheck(Engine *e, const int8_t *aKeyCat, int32_t t0, int32_t t1,
                         profsum_ps aExact[5], int64_t *pnDiff){
  int64_t nMax = 0, nDiff = 0, nStk = 0, nAllocStk = 64, nMaxPar = 0, aCur[2] = {0, 0};
  int64_t aCur0[2] = {0, 0};
  int32_t t, *aIdx;
  ExactLevel *aStk;
  ExclOf *aOf = 0;
  int rc = SQLITE_OK;
  if( t0<t1 ){
    /* the entries' cursors at the first track's first event */
    aCur0[0] = entryAtOrAfter(e->aParPos, e->nPar, e->aTrk[t0].iFirst);
    aCur0[1] = entryAtOrAfter(e->aXrPos, e->nXr, e->aTrk[t0].iFirst);
  }
  aCur[0] = aCur0[0]; aCur[1] = aCur0[1];
  for(t=t0; t<t1; t++){
    const STrack *tr = &e->aTrk[t];
    const int32_t *aPos; const uint32_t *aEx;
    int64_t lo, hi;
    if( tr->isSteps ) continue;
    if( tr->nEv>nMax ) nMax = tr->nEv;
    trackEntries(e, tr, aCur, &aPos, &aEx, &lo, &hi);
    if( hi-lo>nMaxPar ) nMaxPar = hi-lo;
  }
  aCur[0] = aCur0[0]; aCur[1] = aCur0[1];
  /* (aIdx and aOf are written only for a track whose exact order is not
  ** its processing order: their pages are not touched otherwise) */
  aIdx = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nMax ? nMax : 1));
  aStk = sqlite3_malloc64(sizeof(ExactLevel)*(sqlite3_uint64)nAllocStk);
  aOf = sqlite3_malloc64(sizeof(ExclOf)*(sqlite3_uint64)(nMaxPar ? nMaxPar : 1));
  if( !aIdx || !aStk || !aOf ) rc = SQLITE_NOMEM;
  for(t=t0; t<t1 && rc==SQLITE_OK; t++){
    const STrack *tr = &e->aTrk[t];
    const int32_t *aPos; const uint32_t *aEx;
    const ExclOf *aKey = 0;     /* the entries' keys when by event index */
    int64_t j, jSorted, nMove = 0, nCap = 16*tr->nEv + 1024, lo, hi, nOf, nOfSeen = 0, cur = 0;
    int byPos = 1, bIdent = 1;
    if( tr->isSteps ) continue;
    trackEntries(e, tr, aCur, &aPos, &aEx, &lo, &hi);
    nOf = hi-lo;
    if( nOf>0 ){ aPos += lo; aEx += lo; }   /* (none: the arrays may be NULL) */
    /* In the doubles' order, which the exact order differs from only at
    ** near-ties.  The positions in order as long as they are (most
    ** tracks: then the walk reads them without aIdx); from the first
    ** that is not, an insertion sort, unless it moves too much. */
    for(jSorted=1; jSorted<tr->nEv; jSorted++){
      ORD_PREFETCH(e, tr->iFirst+jSorted, tr->iFirst+tr->nEv);
      if( profsumEngExactLess(e, ORD(e, tr->iFirst+jSorted), ORD(e, tr->iFirst+jSorted-1)) ) break;
    }
    if( jSorted<tr->nEv ){
      bIdent = 0;
      for(j=0; j<tr->nEv; j++) aIdx[j] = (int32_t)(tr->iFirst + j);
      for(j=jSorted; j<tr->nEv && nMove<=nCap; j++){
        int32_t x = aIdx[j], xEv = ORD(e, x);
        int64_t i = j;
        while( i>0 && profsumEngExactLess(e, xEv, ORD(e, aIdx[i-1])) ){ aIdx[i] = aIdx[i-1]; i--; nMove++; }
        aIdx[i] = x;
      }
    }
    if( nMove>nCap ){
      /* by event index from here: the positions' events sorted in full,
      ** the kept times, by event index too, sorted to match */
      for(j=0; j<tr->nEv; j++) aIdx[j] = ORD(e, aIdx[j]);
      profsumEngSortEvIdx(e, aIdx, tr->nEv, 2, profsumEngSortDepth(tr->nEv));
      for(j=0; j<nOf; j++){
        aOf[j].k = ORD(e, aPos[j]);
        aOf[j].ex = profsumEngEx32(e, aEx[j], aPos[j]);
      }
      for(j=1; j<nOf && aOf[j-1].k<=aOf[j].k; j++){}
      if( j<nOf ) qsort(aOf, (size_t)nOf, sizeof(ExclOf), cmpExclOf);
      aKey = aOf;
      byPos = 0;
    }
    /* the record of order entry k (a processing position or, byPos 0, an
    ** event index); the j-th event of the exact order */
#define EXACT_EV(k) EV(e, byPos ? ORD(e, (k)) : (k))
#define EXACT_AT(j) (bIdent ? (int32_t)(tr->iFirst + (j)) : aIdx[j])
#define EXACT_FIN() do{ \
    const ExactLevel *l_ = &aStk[--nStk]; \
    const SEv *x_ = EXACT_EV(l_->k); \
    int64_t d_ = EVDUR(e, x_), ex_ = d_ - l_->child; \
    if( ex_<0 ) ex_ = 0; \
    aExact[aKeyCat[x_->key]] += ex_; \
    if( l_->child>0 ){ \
      /* a child in the exact nesting: compared with the summary's time, */ \
      /* its dur when it had none there (then they differ) */ \
      if( l_->ent>=0 ) nOfSeen++; \
      if( l_->ent<0 || (aKey ? aKey[l_->ent].ex : profsumEngEx32(e, aEx[l_->ent], aPos[l_->ent]))!=ex_ ) nDiff++; \
    } \
    if( nStk>0 ) aStk[nStk-1].child += d_; \
  }while(0)
    for(j=0; j<tr->nEv; j++){
      int32_t k = EXACT_AT(j);
      const SEv *r;
      int64_t ts, end;
      if( bIdent ) ORD_PREFETCH(e, k, tr->iFirst+tr->nEv);
      r = EXACT_EV(k);
      ts = r->ts; end = r->ts + EVDUR(e, r);
      while( nStk>0 && ts>=EXACT_EV(aStk[nStk-1].k)->ts + EVDUR(e, EXACT_EV(aStk[nStk-1].k)) ) EXACT_FIN();
      while( nStk>0 && end>EXACT_EV(aStk[nStk-1].k)->ts + EVDUR(e, EXACT_EV(aStk[nStk-1].k)) ) EXACT_FIN();
      if( nStk>=nAllocStk ){
        /* at most as deep as the track is long (no unused half past it) */
        int64_t nNew = nAllocStk*2 > tr->nEv ? tr->nEv : nAllocStk*2;
        ExactLevel *aNew;
        if( nNew<=nStk ) nNew = nStk+1;
        aNew = sqlite3_realloc64(aStk, sizeof(ExactLevel)*(sqlite3_uint64)nNew);
        if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
        aStk = aNew;
        nAllocStk = nNew;
      }
      aStk[nStk].k = k;
      aStk[nStk].ent = (int32_t)exactEntry(aPos, aKey, nOf, k, &cur);
      aStk[nStk].child = 0;
      nStk++;
    }
    if( rc ) break;
    while( nStk>0 ) EXACT_FIN();
#undef EXACT_FIN
#undef EXACT_AT
#undef EXACT_EV
    /* an event with a child in the summary's nesting only: its exclusive
    ** time there is below its dur, which is the exact one */
    nDiff += nOf - nOfSeen;
  }
  sqlite3_free(aIdx); sqlite3_free(aStk); sqlite3_free(aOf);
  *pnDiff = nDiff;
  return rc;
}

/* engExactCheck in pieces of about equal events, each over a range of
** tracks: side jobs (engine_side.c) queued before the event pass when some
** decision went otherwise than the exact times would have it (e->nFlip,
** which only grows), taken by the worker in order while the calling
** thread makes the pass, and joined from the last by aggFloatNesting,
** which runs those still queued itself.  The pieces' sums are of
** integers, so the split changes nothing.  They read the records,
** tracks, processing order, kept exclusive times and key categories,
** which nothing writes meanwhile. */
#define EXACT_PIECES 8
typedef struct ExactJob {
  EngSide side;
  Engine *e;
  const int8_t *aKeyCat;
  int32_t t0, t1;             /* its tracks */
  profsum_ps aExact[5];       /* its sums, and */
  int64_t nDiff;              /* its events that differ */
  int rc;
} ExactJob;

/* The job's thread (or the caller's, for a piece not taken). */
static void *exactJobMain(void *pArg){
  ExactJob *x = (ExactJob*)pArg;
  x->rc = engExactCheck(x->e, x->aKeyCat, x->t0, x->t1, x->aExact, &x->nDiff);
  return 0;
}

/* Cut e's tracks into at most EXACT_PIECES pieces (profsumEngTrackPieces)
** set up in aJob, their sums zero (side jobs not started); *pn: how many. */
static void exactSplit(Engine *e, const int8_t *aKeyCat, ExactJob *aJob, int *pn){
  int32_t aEnd[EXACT_PIECES];
  int i, n = profsumEngTrackPieces(e, EXACT_PIECES, 1, aEnd);
  for(i=0; i<n; i++){
    memset(&aJob[i], 0, sizeof(aJob[i]));
    aJob[i].e = e;
    aJob[i].aKeyCat = aKeyCat;
    aJob[i].t0 = i ? aEnd[i-1] : 0;
    aJob[i].t1 = aEnd[i];
  }
  *pn = n;
}

/* The state of one aggregation (profsumEngAggregate), shared by its
** steps: per-name and per-key arrays, the counters and what the event pass
** sums.  Freed by aggFree(). */
typedef struct Agg {
  Engine *e;
  int32_t nNames;             /* names in the string pool */
  profsum_ps aBucket[5];      /* per-track breakdown: exclusive ps per category (128
                              ** bits: durations reach 2^61 ps, their sums more) */
  double aBucketRef[5];       /* the same as the reference's doubles add it
                              ** (aggBreakdownRef) */
  EngSide refSide;            /* aggBreakdownRef beside the event pass
                              ** (aggRefStart) */
  int refRc;                  /* and its result */
  OpAgg *aOp;                 /* per name id: the device op's aggregate */
  int8_t *aKeyCat;            /* event category (§1.4) per event key */
  KeyMemo *aMemo;             /* per event key: flop proxy, collective */
  unsigned char *aNameFlag;   /* per name id: 1 known, 2 stall, 4 comm, 8 compile
                              ** (aggKeyCategories) */
  const char **aFamily;       /* per name id: semantic family (cached) */
  HMap steps, gpuSteps, ctr;  /* device steps, host "train" steps, counters */
  int64_t aCommN[16];         /* per collective: count */
  profsum_ps aCommEx[16];     /* and exclusive ps */
  const char *azComm[16];     /* the collectives, in processing order of first sight */
  int nComm;
  double aCommRef[16];        /* Σ exclusive as the reference adds it */
  int64_t curXr;              /* profsumEngExclRefAt's cursor */
  EngExclCur excl;            /* profsumEngExclNext's cursor */
  profsum_ps compilePs;       /* host events named like a compilation, ps */
  /* the global breakdown's window (aggGlobalBreakdown): the smallest start
  ** and the largest end, in the reference's doubles, of the compute events
  ** of the device tracks other than Steps (hasW: there is one) */
  double wLo, wHi;
  int hasW;
  SweepJob uj;                /* the global breakdown's sweep, beside the event pass */
  ExactJob aXj[EXACT_PIECES]; /* the exact nesting check, beside it too */
  int nXj;                    /* its pieces (0: not cut yet) */
  Gaps *pGaps;                /* the regions, fed by the event pass */
} Agg;

/* Allocate and clear a's arrays for e's names and keys.  SQLITE_OK or
** SQLITE_NOMEM (then aggFree() frees what was taken). */
static int aggInit(Agg *a, Engine *e){
  int32_t nNames = e->pool.n;
  int64_t i;
  memset(a, 0, sizeof(*a));
  a->e = e;
  a->nNames = nNames;
  a->aOp = sqlite3_malloc64(sizeof(OpAgg)*(sqlite3_uint64)(nNames ? nNames : 1));
  a->aKeyCat = sqlite3_malloc64((sqlite3_uint64)(e->nKey ? e->nKey : 1));
  a->aNameFlag = sqlite3_malloc64((sqlite3_uint64)(nNames ? nNames : 1));
  a->aFamily = sqlite3_malloc64(sizeof(char*)*(sqlite3_uint64)(nNames ? nNames : 1));
  a->aMemo = sqlite3_malloc64(sizeof(KeyMemo)*(sqlite3_uint64)(e->nKey ? e->nKey : 1));
  if( !a->aOp || !a->aKeyCat || !a->aNameFlag || !a->aFamily || !a->aMemo ) return SQLITE_NOMEM;
  for(i=0; i<e->nKey; i++){
    a->aMemo[i].n = a->aMemo[i].first = 0;
    a->aMemo[i].flop = 0.0; a->aMemo[i].flopKind = -1; a->aMemo[i].comm = -2;
  }
  memset(a->aOp, 0, sizeof(OpAgg)*(size_t)nNames);
  memset(a->aNameFlag, 0, (size_t)nNames);
  memset(a->aFamily, 0, sizeof(char*)*(size_t)nNames);
  return SQLITE_OK;
}

/* Free what aggInit() and the steps took. */
static void aggFree(Agg *a){
  int i;
  profsumEngSideJoin(&a->uj.side);
  profsumEngSideJoin(&a->refSide);
  for(i=0; i<a->nXj; i++) profsumEngSideJoin(&a->aXj[i].side);
  sqlite3_free(a->aOp);
  sqlite3_free(a->aKeyCat);
  sqlite3_free(a->aMemo);
  sqlite3_free(a->aNameFlag);
  sqlite3_free((void*)a->aFamily);
  profsumEngHmFree(&a->steps); profsumEngHmFree(&a->gpuSteps); profsumEngHmFree(&a->ctr);
  profsumEngGapsFree(a->pGaps);
}

/* Event category per key (§1.4) into a->aKeyCat, the name tests cached
** per name: stall regex → stall; host process → host; communication name
** → communication; device process → compute; else other.  The same pass
** caches the names' compile and transfer tests (engKpis' facts). */
static void aggKeyCategories(Agg *a){
  Engine *e = a->e;
  int64_t i;
  for(i=0; i<e->nKey; i++){
    const EvKey *q = &e->aKey[i];
    STrack *t = &e->aTrk[q->trk];
    int cat;
    if( a->aNameFlag[q->name]==0 ){
      const char *zName = SP_STR(&e->pool, q->name);
      int nName = SP_LEN(&e->pool, q->name);
      a->aNameFlag[q->name] = (unsigned char)(1 | (profsumIsStallName(zName, nName) ? 2 : 0)
                                                | (profsumIsCommName(zName, nName) ? 4 : 0)
                                                | (hasCi(zName, nName, "compile") ? 8 : 0));
    }
    if( a->aNameFlag[q->name] & 2 ) cat = CAT_STALL;
    else if( t->isHost ) cat = CAT_HOST;
    else if( a->aNameFlag[q->name] & 4 ) cat = CAT_COMM;
    else if( t->isDevice ) cat = CAT_COMPUTE;
    else cat = CAT_OTHER;
    a->aKeyCat[i] = (int8_t)cat;
  }
}

/* The flop proxy and collective of event key q (a device op), worked out
** at its first event (in processing order, which orders azComm) into m.
** SQLITE_OK or an error of profsumSemanticFamily. */
static int aggKeyMemo(Agg *a, const EvKey *q, KeyMemo *m, const char *zName, int nName){
  Engine *e = a->e;
  int rc;
  if( m->flopKind<0 ){
    m->flopKind = 0;
    if( q->sig>=0 ){
      const char *zFam = a->aFamily[q->name];
      int64_t iv; double dv;
      int kind;
      if( zFam==0 ){
        if( (rc = profsumSemanticFamily(zName, nName, 0, 0, &zFam)) ) return rc;
        a->aFamily[q->name] = zFam;
      }
      kind = profsumFlopProxy(zFam, (int)strlen(zFam), SP_STR(&e->pool, q->sig),
                              SP_LEN(&e->pool, q->sig), &iv, &dv);
      if( kind==PROFSUM_FLOP_INT ){ m->flop = (double)iv; m->flopKind = 1; }
      else if( kind==PROFSUM_FLOP_REAL ){ m->flop = dv; m->flopKind = 1; }
    }
  }
  if( m->comm==-2 ){
    const char *zColl = profsumCollective(zName, nName);
    m->comm = -1;
    if( zColl ){
      int c;
      for(c=0; c<a->nComm; c++) if( strcmp(a->azComm[c], zColl)==0 ) break;
      if( c==a->nComm && a->nComm<16 ){ a->azComm[a->nComm++] = zColl; }
      if( c<16 ) m->comm = (int8_t)c;
    }
  }
  return SQLITE_OK;
}

/* One pass over the events in processing order: the per-track breakdown
** buckets, run ids, the per-key counts, the steps' durations (device
** Steps lines; the host "train" events as the GPU fallback) and the
** device ops' aggregates and collectives.  SQLITE_OK or SQLITE_NOMEM (or
** an error of aggKeyMemo). */
static int aggEventPass(Agg *a){
  Engine *e = a->e;
  int64_t j;
  int rc;
  profsumEngExclStart(e, &a->excl);
  for(j=0; j<e->nEv; j++){
    int64_t k = ORD(e, j);
    SEv *r = EV(e, k);
    const EvKey *q = KEY(e, r);
    ORD_PREFETCH(e, j, e->nEv);
    STrack *t = &e->aTrk[q->trk];
    const char *zName = SP_STR(&e->pool, q->name);
    int nName = SP_LEN(&e->pool, q->name);
    int cat = a->aKeyCat[r->key];
    int64_t stepNum;
    int64_t ex = profsumEngExclNext(e, &a->excl, j, r);
    if( !t->isSteps ) a->aBucket[cat] += ex;
    if( cat==CAT_COMPUTE && t->isDevice && !t->isSteps ){
      double ts, end;
      profsumEngEvFloatIn(e, t, (int32_t)k, &ts, &end);
      if( !a->hasW || ts<a->wLo ) a->wLo = ts;
      if( !a->hasW || end>a->wHi ) a->wHi = end;
      a->hasW = 1;
    }
    /* compile time (engKpis' fact; the transfer time is a union per
    ** device, the KPI walk's) */
    if( t->isHost && (a->aNameFlag[q->name] & 8) ) a->compilePs += EVDUR(e, r);
    if( a->aMemo[r->key].n++==0 ) a->aMemo[r->key].first = j;   /* sources, shapes, tf_ops: per key */
    /* steps: v1 the sum of the durations as the reference adds them
    ** (§4.3: its doubles, in processing order; bits of a double), v2 their
    ** count.  Not exact picoseconds: the means feed discrete choices (the
    ** representative step closest to a median, the 2-means classes) that
    ** an exact mean can flip (three devices' 0.2 µs steps: the reference's
    ** mean is 0.20000000000000004) */
    if( t->isDevice && t->isSteps ){
      int64_t s;
      if( profsumPyInt(zName, nName, &s)==0 ){
        HEnt *h = profsumEngHmGet(&a->steps, s, 0, 1, 0);
        if( h==0 ) return SQLITE_NOMEM;
        profsumEngAddBits(&h->v1, profsumEngEvDurFloat(e, k)); h->v2++;
      }
    }
    if( t->isHost && nName==5 && memcmp(zName, "train", 5)==0 && profsumEngStepOf(e, k, &stepNum) ){
      HEnt *h = profsumEngHmGet(&a->gpuSteps, stepNum, 0, 1, 0);
      if( h==0 ) return SQLITE_NOMEM;
      profsumEngAddBits(&h->v1, profsumEngEvDurFloat(e, k)); h->v2++;
    }
    /* device ops */
    if( t->isDevice && t->isDevOp ){
      OpAgg *o = &a->aOp[q->name];
      KeyMemo *m = &a->aMemo[r->key];
      double dRef = profsumEngEvDurFloatIn(e, k);
      double xRef = profsumEngExclRefIn(e, j, &a->curXr, dRef);
      o->seen = 1;
      o->count++;
      o->total += EVDUR(e, r);
      o->excl += ex;
      o->totalRef += dRef;
      o->exclRef += xRef;
      if( (m->flopKind<0 || m->comm==-2) && (rc = aggKeyMemo(a, q, m, zName, nName)) ) return rc;
      if( m->flopKind>0 ){ o->flopSum += m->flop; o->flopN++; }
      if( m->comm>=0 ){
        a->aCommN[m->comm]++; a->aCommEx[m->comm] += ex;
        a->aCommRef[m->comm] += xRef;
      }
      if( (rc = profsumEngRegionOp(a->pGaps, r, q, xRef, ex)) ) return rc;
    }
  }
  /* run_ids (kind 1, owner 0): per group of equal ids its count, from its
  ** first position (the counter keeps the sum and the first position) */
  for(j=0; j<e->nRun; j++){
    if( (rc = counterAdd(&a->ctr, 1, 0, e->aRunId[j], e->aRunN[j], e->aRunPos[j])) ) return rc;
  }
  return SQLITE_OK;
}

/* The per-key counts into the counters: sources of all events (kind 2),
** shapes, sources and tf_ops of device ops (kinds 3-5, per op name). */
static int aggKeyCounts(Agg *a){
  Engine *e = a->e;
  int64_t i;
  int rc;
  for(i=0; i<e->nKey; i++){
    const EvKey *q = &e->aKey[i];
    const KeyMemo *m = &a->aMemo[i];
    STrack *t = &e->aTrk[q->trk];
    if( m->n==0 ) continue;
    if( q->source>=0 && (rc = counterAdd(&a->ctr, 2, 0, q->source, m->n, m->first)) ) return rc;
    if( t->isDevice && t->isDevOp ){
      if( q->sig>=0 && (rc = counterAdd(&a->ctr, 3, q->name, q->sig, m->n, m->first)) ) return rc;
      if( q->source>=0 && (rc = counterAdd(&a->ctr, 4, q->name, q->source, m->n, m->first)) ) return rc;
      if( q->tfop>=0 && (rc = counterAdd(&a->ctr, 5, q->name, q->tfop, m->n, m->first)) ) return rc;
    }
  }
  return SQLITE_OK;
}

/* The most common shape, source and tf_op of each device op (counter
** kinds 3-5) into its OpAgg (-1: none). */
static void aggPickOpValues(Agg *a){
  int64_t i;
  for(i=0; i<a->ctr.nSlot; i++){
    HEnt *h = &a->ctr.a[i];
    int kind;
    int64_t owner;
    if( !h->used ) continue;
    kind = (int)(h->k1>>40);
    owner = h->k1 & (((int64_t)1<<40)-1);
    if( kind>=3 ){
      OpAgg *o = &a->aOp[owner];
      int64_t *best = kind==3 ? o->bestShape : (kind==4 ? o->bestSource : o->bestTf);
      int32_t *pv = kind==3 ? &o->shape : (kind==4 ? &o->source : &o->tfop);
      if( best[0]==0 ){ *pv = -1; }
      if( h->v1>best[0] || (h->v1==best[0] && h->v2<best[1]) ){
        best[0] = h->v1; best[1] = h->v2; *pv = (int32_t)h->k2;
      }
    }
  }
  for(i=0; i<a->nNames; i++){
    if( a->aOp[i].bestShape[0]==0 ) a->aOp[i].shape = -1;
    if( a->aOp[i].bestSource[0]==0 ) a->aOp[i].source = -1;
    if( a->aOp[i].bestTf[0]==0 ) a->aOp[i].tfop = -1;
  }
}

/* Set profsum_trace.<zCol> of the trace to the JSON array of the strings
** of the first (at most) 20 counter slots aSlot[0..n-1] once sorted by
** (count desc, first seen asc).  SQLITE_OK or an error (profsumEngErr's). */
static int aggWriteTopList(Agg *a, int32_t *aSlot, int64_t n, const char *zCol){
  Engine *e = a->e;
  int64_t x, y;
  sqlite3_str *pStr;
  sqlite3_stmt *pUp = 0;
  char *zJson, *zSql;
  int rc;
  /* selection sort of the top 20 (n is small in practice) */
  for(x=0; x<n && x<20; x++){
    int64_t best = x;
    for(y=x+1; y<n; y++){
      HEnt *hb = &a->ctr.a[aSlot[best]], *hy = &a->ctr.a[aSlot[y]];
      if( hy->v1>hb->v1 || (hy->v1==hb->v1 && hy->v2<hb->v2) ) best = y;
    }
    { int32_t tmp = aSlot[x]; aSlot[x] = aSlot[best]; aSlot[best] = tmp; }
  }
  pStr = sqlite3_str_new(e->db);
  sqlite3_str_appendchar(pStr, 1, '[');
  for(x=0; x<n && x<20; x++){
    int32_t id = (int32_t)a->ctr.a[aSlot[x]].k2;
    if( x ) sqlite3_str_appendchar(pStr, 1, ',');
    profsumEngJsonAppendStr(pStr, SP_STR(&e->pool, id), SP_LEN(&e->pool, id));
  }
  sqlite3_str_appendchar(pStr, 1, ']');
  zJson = sqlite3_str_finish(pStr);
  if( zJson==0 ) return SQLITE_NOMEM;
  zSql = sqlite3_mprintf("UPDATE \"%w\".profsum_trace SET %s = ?1 WHERE trace_id = ?2", e->zSchema, zCol);
  if( zSql==0 ){ sqlite3_free(zJson); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(e->db, zSql, -1, &pUp, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ){
    sqlite3_bind_text(pUp, 1, zJson, -1, sqlite3_free);
    zJson = 0;
    sqlite3_bind_int64(pUp, 2, e->traceId);
    rc = profsumEngStep(e, pUp);
  }else{
    profsumEngErr(e, rc, "%s", sqlite3_errmsg(e->db));
  }
  sqlite3_free(zJson);
  sqlite3_finalize(pUp);
  return rc;
}

/* run_ids and source_file_hints of profsum_trace: the 20 most common run
** ids (counter kind 1) and sources (kind 2). */
static int aggWriteRunIdsAndSources(Agg *a){
  int32_t *aRun, *aSrc;
  int64_t i, nRun = 0, nSrc = 0;
  int rc;
  aRun = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(a->ctr.nUsed+1)*2);
  if( aRun==0 ) return SQLITE_NOMEM;
  aSrc = aRun + a->ctr.nUsed + 1;
  for(i=0; i<a->ctr.nSlot; i++){
    HEnt *h = &a->ctr.a[i];
    if( !h->used ) continue;
    if( (h->k1>>40)==1 ) aRun[nRun++] = (int32_t)i;
    else if( (h->k1>>40)==2 ) aSrc[nSrc++] = (int32_t)i;
  }
  rc = aggWriteTopList(a, aRun, nRun, "run_ids");
  if( rc==SQLITE_OK ) rc = aggWriteTopList(a, aSrc, nSrc, "source_file_hints");
  sqlite3_free(aRun);
  return rc;
}

/* The per-track buckets again on exact times (engExactCheck) as facts for
** profsum_kpis' float_nesting pattern, and a diagnostic when the nesting
** differs.  Made last of the aggregation's own work, so that the check's
** pieces have the worker to run on while this thread writes the rest. */
static int aggFloatNesting(Agg *a){
  Engine *e = a->e;
  profsum_ps aExact[5] = {0,0,0,0,0}, exactTotal = 0, moved = 0, total = 0;
  int64_t nDiff = 0;
  EngFact aF[3] = {{"exact_breakdown_total", 0, 0}, {"float_nesting_events", 0, 0},
                   {"float_nesting_moved", 0, 0}};
  int c, rc;
  if( e->nFlip>0 ){
    int i;
    if( a->nXj==0 ) exactSplit(e, a->aKeyCat, a->aXj, &a->nXj);
    for(i=a->nXj-1; i>=0; i--){
      ExactJob *x = &a->aXj[i];
      if( !profsumEngSideJoin(&x->side) ) exactJobMain(x);
    }
    for(i=0; i<a->nXj; i++){
      if( (rc = a->aXj[i].rc) ) return rc;
      for(c=0; c<5; c++) aExact[c] += a->aXj[i].aExact[c];
      nDiff += a->aXj[i].nDiff;
    }
  }else{
    memcpy(aExact, a->aBucket, sizeof(aExact));
  }
  for(c=0; c<5; c++){
    total += a->aBucket[c];
    exactTotal += aExact[c];
    moved += a->aBucket[c]>aExact[c] ? a->aBucket[c]-aExact[c] : aExact[c]-a->aBucket[c];
  }
  if( nDiff>0 ){
    char *z = sqlite3_mprintf("%lld events' exclusive times differ from the nesting of their exact "
        "times: the summary decides order and nesting in the timestamps' doubles, as the reference "
        "tool does (docs/summary.md, \"Decisions in doubles\"); per-track breakdown total %!.15g us, "
        "on exact times %!.15g us (compute %!.15g, communication %!.15g, host %!.15g, stall %!.15g, "
        "other %!.15g; the categories differ by %!.15g us in all); exact per-event values: "
        "trace_events(path).excl_ps",
        (long long)nDiff, US(total), US(exactTotal), US(aExact[0]), US(aExact[1]),
        US(aExact[2]), US(aExact[3]), US(aExact[4]), US(moved));
    if( z==0 ) return SQLITE_NOMEM;
    profsumEngDiag(e, -1, -1, "float_nesting", z);
    sqlite3_free(z);
    if( e->diagRc ) return e->diagRc;
  }
  aF[0].v = US(exactTotal); aF[1].v = (double)nDiff; aF[2].v = US(moved);
  return profsumEngFacts(e, aF, 3);
}

/* Global timeline mode (§4.4) in the reference's doubles (µs), as its
** sweep: the window of the devices' compute events (found by
** aggEventPass), then the pieces of communication, of compute and
** uncovered (the stall) added in time order (profsumEngGlobalSweep, on
** the side job when it ran).  Into g[5] and *pTotal (0 without a
** window). */
static int aggGlobalBreakdown(Agg *a, double g[5], double *pTotal){
  Engine *e = a->e;
  double wLo = a->wLo, wHi = a->wHi;
  int hasW = a->hasW, rc;
  *pTotal = (hasW && wHi>wLo) ? wHi-wLo : 0.0;
  if( hasW && wHi>wLo ){
    double aSum[3];
    if( !sweepJobTake(&a->uj, hasW, wLo, wHi, aSum)
     && (rc = profsumEngGlobalSweep(e, a->aKeyCat, wLo, wHi, aSum)) ) return rc;
    g[CAT_COMM] = aSum[0];
    g[CAT_COMPUTE] = aSum[1];
    g[CAT_STALL] = aSum[2];
  }
  return SQLITE_OK;
}

/* aggBreakdownRef's stack of open events, in blocks that are never moved
** (a line of events each inside the last is as deep as it is long: no
** doubling, no copy).  Per entry the event's processing position, or -1 -
** it once the event has a child, 4 bytes; and the durs of its children
** added as they end, 8 bytes, in blocks made only for the lines that need
** them: a device-op line's event that had a child has its exclusive time
** as the reference's double already (aXrVal, made by the ordering's
** sweep on the same decisions, read as the hot ops read it: an event
** without an entry had no child there), so its line walks on 4 bytes a
** level. */
#define REF_BLK 4096
typedef struct RefStk {
  int32_t **apPos;            /* blocks of positions */
  double **apChild;           /* blocks of children's sums (0: none yet) */
  int64_t n, nBlk, nBlkAlloc;
} RefStk;
#define REF_POS(s, i)   ((s)->apPos[(i)/REF_BLK][(i)%REF_BLK])
#define REF_CHILD(s, i) ((s)->apChild[(i)/REF_BLK][(i)%REF_BLK])

/* Push processing position j with no child yet (bChild: the children's
** sum is kept).  SQLITE_OK or SQLITE_NOMEM. */
static int refPush(RefStk *s, int64_t j, int bChild){
  int64_t b = s->n/REF_BLK;
  if( b==s->nBlk ){
    if( s->nBlk==s->nBlkAlloc ){
      int64_t nNew = s->nBlkAlloc ? s->nBlkAlloc*2 : 8;
      int32_t **apPos = sqlite3_realloc64(s->apPos, sizeof(int32_t*)*(sqlite3_uint64)nNew);
      double **apChild;
      if( apPos==0 ) return SQLITE_NOMEM;
      s->apPos = apPos;
      if( (apChild = sqlite3_realloc64(s->apChild, sizeof(double*)*(sqlite3_uint64)nNew))==0 ) return SQLITE_NOMEM;
      s->apChild = apChild;
      s->nBlkAlloc = nNew;
    }
    if( (s->apPos[b] = sqlite3_malloc64(sizeof(int32_t)*REF_BLK))==0 ) return SQLITE_NOMEM;
    s->apChild[b] = 0;
    s->nBlk++;
  }
  if( bChild ){
    if( s->apChild[b]==0 && (s->apChild[b] = sqlite3_malloc64(sizeof(double)*REF_BLK))==0 ) return SQLITE_NOMEM;
    REF_CHILD(s, s->n) = 0.0;
  }
  REF_POS(s, s->n) = (int32_t)j;
  s->n++;
  return SQLITE_OK;
}

/* Free the stack's blocks. */
static void refFree(RefStk *s){
  int64_t i;
  for(i=0; i<s->nBlk; i++){ sqlite3_free(s->apPos[i]); sqlite3_free(s->apChild[i]); }
  sqlite3_free(s->apPos);
  sqlite3_free(s->apChild);
}

/* Record k's ts, end and dur as the reference's doubles (t: its track). */
static void refDoubles(Engine *e, const STrack *t, int32_t k, double *pTs, double *pEnd, double *pDur){
  if( e->isXPlane ){
    profsumEngEvFloatIn(e, t, k, pTs, pEnd);
    *pDur = profsumEngEvDurFloatIn(e, k);
  }else{
    profsumEngEvFloatDur(e, k, pTs, pEnd, pDur);
  }
}

/* An open event's doubles and category, kept for the first REF_NEAR
** levels of the stack (deeper ones are looked up again when they become
** the top). */
#define REF_NEAR 64
typedef struct RefNear { double end, dur; int cat; } RefNear;

/* The aXrVal entry of processing position j: its index, or -1. */
static int64_t refXrFind(const Engine *e, int64_t j){
  int64_t lo = entryAtOrAfter(e->aXrPos, e->nXr, j);
  return (lo<e->nXr && e->aXrPos[lo]==j) ? lo : -1;
}

/* The per-track breakdown as the reference's doubles add it (§4.4, its
** era-C builder): each track in processing order, its events in §2 order
** in a stack on their doubles; an event's exclusive time, max(0, dur − the
** durs of its children), is added to its category when it ends (the stack
** pops it), not on a Steps thread.  An XPlane line that the reference
** aggregates (summary §6.1: all but the device-op lines of device planes)
** adds its five line totals at its end, in category order.  Into
** a->aBucketRef: the document's breakdown and the candidates' cuts.
** SQLITE_OK or SQLITE_NOMEM. */
static int aggBreakdownRef(Agg *a){
  Engine *e = a->e;
  RefStk stk = {0, 0, 0, 0, 0};
  int64_t j;
  double aLine[5] = {0,0,0,0,0};
  double topEnd = 0.0, topDur = 0.0;   /* the top entry's doubles, and its */
  int topCat = 0;                      /* category (stk.n > 0) */
  RefNear aNear[REF_NEAR];             /* the same for the first levels */
  int32_t trk = -1;
  int lineAgg = 0, steps = 0, devOp = 0, c, rc = SQLITE_OK;
  memset(a->aBucketRef, 0, sizeof(a->aBucketRef));
  /* pop the top: its exclusive time to its category, its dur to its
  ** parent's children, the parent's doubles taken from aNear or found
  ** again */
#define REF_FIN() do{ \
    int32_t v_ = REF_POS(&stk, stk.n-1); \
    double ex_ = topDur, d_; \
    if( devOp ){ \
      int64_t x_ = v_<0 ? refXrFind(e, -1-(int64_t)v_) : -1; \
      if( x_>=0 ) ex_ = e->aXrVal[x_]; \
    }else{ \
      ex_ = topDur - REF_CHILD(&stk, stk.n-1); \
      if( ex_<0.0 ) ex_ = 0.0; \
    } \
    if( !steps ){ if( lineAgg ) aLine[topCat] += ex_; else a->aBucketRef[topCat] += ex_; } \
    stk.n--; \
    if( stk.n>0 ){ \
      if( !devOp ) REF_CHILD(&stk, stk.n-1) += topDur; \
      if( stk.n<=REF_NEAR ){ \
        topEnd = aNear[stk.n-1].end; topDur = aNear[stk.n-1].dur; topCat = aNear[stk.n-1].cat; \
      }else{ \
        int32_t vp_ = REF_POS(&stk, stk.n-1); \
        int32_t kp_ = ORD(e, vp_<0 ? -1-(int64_t)vp_ : (int64_t)vp_); \
        refDoubles(e, &e->aTrk[trk], kp_, &d_, &topEnd, &topDur); \
        topCat = a->aKeyCat[EV(e, kp_)->key]; \
      } \
    } \
  }while(0)
  for(j=0; j<=e->nEv; j++){
    int64_t k = j<e->nEv ? ORD(e, j) : -1;
    const SEv *r = k>=0 ? EV(e, k) : 0;
    const EvKey *q = r ? KEY(e, r) : 0;
    double ts, end, dur;
    if( q==0 || q->trk!=trk ){
      /* the track ends (a Steps line's totals stay 0) */
      while( stk.n>0 ) REF_FIN();
      if( lineAgg ) for(c=0; c<5; c++) a->aBucketRef[c] += aLine[c];
      if( q==0 ) break;
      trk = q->trk;
      steps = e->aTrk[trk].isSteps;
      devOp = e->aTrk[trk].isDevice && e->aTrk[trk].isDevOp;
      lineAgg = e->isXPlane && !devOp;
      memset(aLine, 0, sizeof(aLine));
    }
    refDoubles(e, &e->aTrk[trk], (int32_t)k, &ts, &end, &dur);
    while( stk.n>0 && ts>=topEnd ) REF_FIN();
    while( stk.n>0 && end>topEnd ) REF_FIN();
    /* the open event gets a child */
    if( stk.n>0 && REF_POS(&stk, stk.n-1)>=0 ) REF_POS(&stk, stk.n-1) = -1 - REF_POS(&stk, stk.n-1);
    if( (rc = refPush(&stk, j, !devOp)) ) break;
    topEnd = end; topDur = dur; topCat = a->aKeyCat[r->key];
    if( stk.n<=REF_NEAR ){
      aNear[stk.n-1].end = end; aNear[stk.n-1].dur = dur; aNear[stk.n-1].cat = topCat;
    }
  }
#undef REF_FIN
  refFree(&stk);
  return rc;
}

/* aggBreakdownRef as a side job (its result in a->refRc). */
static void *aggRefMain(void *pArg){
  Agg *a = (Agg*)pArg;
  a->refRc = aggBreakdownRef(a);
  return 0;
}

/* Start the reference's walk (aggBreakdownRef) beside the event pass,
** which it does not depend on (it reads the records, the order and
** a->aKeyCat): on the worker when the trace has one, else it is made in
** aggWriteBreakdown. */
static void aggRefStart(Agg *a){
  profsumEngSideStart(a->e, &a->refSide, ENG_SIDE_RANK_SWEEP, aggRefMain, a);
}

/* The six rows of profsum_agg_breakdown in mode zMode: the five
** categories' durations aDur (µs) and the total; with aRef, each row's
** duration_ref from it and the total's as the reference adds it (the five
** in this order, Python's sum). */
static int aggBreakdownRows(Engine *e, const char *zMode, const double aDur[5], double total,
                            const double *aRef){
  sqlite3_stmt *pIns = 0;
  double refTotal = 0.0;
  int c, rc;
  if( (rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_breakdown"
                              "(trace_id, mode, category, duration, duration_ref) VALUES(?1,?2,?3,?4,?5)")) ) goto done;
  sqlite3_bind_int64(pIns, 1, e->traceId);
  sqlite3_bind_text(pIns, 2, zMode, -1, SQLITE_STATIC);
  for(c=0; c<=5; c++){
    sqlite3_bind_text(pIns, 3, c<5 ? azBreakCat[c] : "total", -1, SQLITE_STATIC);
    sqlite3_bind_double(pIns, 4, c<5 ? aDur[c] : total);
    if( aRef ){
      sqlite3_bind_double(pIns, 5, c<5 ? aRef[c] : refTotal);
      if( c<5 ) refTotal += aRef[c];
    }
    if( (rc = profsumEngStep(e, pIns)) ) goto done;
  }
done:
  sqlite3_finalize(pIns);
  return rc;
}

/* profsum_agg_breakdown: the per-track rows, the exact sums (a->aBucket)
** and the reference's (aggBreakdownRef), which the document shows: they
** can differ by more than a sum's rounding where an exclusive time nearly
** cancels (an op of 1000.001 µs around a child of 1000 µs) or a time text
** was rounded to the picosecond (half a picosecond an event). */
static int aggWriteBreakdown(Agg *a){
  profsum_ps total = 0;
  double aDur[5];
  int c, rc;
  /* the side job's result, or the walk here when none ran */
  if( !profsumEngSideJoin(&a->refSide) ) a->refRc = aggBreakdownRef(a);
  if( (rc = a->refRc) ) return rc;
  for(c=0; c<5; c++){ total += a->aBucket[c]; aDur[c] = US(a->aBucket[c]); }
  return aggBreakdownRows(a->e, "exclusive_per_track", aDur, US(total), a->aBucketRef);
}

/* The rows of profsum_agg_breakdown in mode exclusive_global
** (aggGlobalBreakdown).  When the sweep runs on a side job, written last
** of the aggregation (profsumEngAggregate), so that the job has the
** aggregation's other work to run beside. */
static int aggWriteGlobalBreakdown(Agg *a){
  double g[5] = {0,0,0,0,0}, gTotal = 0.0;
  int rc = aggGlobalBreakdown(a, g, &gTotal);
  return rc ? rc : aggBreakdownRows(a->e, "exclusive_global", g, gTotal, 0);
}

/* profsum_agg_step: mean duration and count per step number, from the
** device Steps lines, else the GPU host fallback. */
static int aggWriteSteps(Agg *a){
  Engine *e = a->e;
  HMap *m = a->steps.nUsed ? &a->steps : &a->gpuSteps;
  StepAgg *aS = sqlite3_malloc64(sizeof(StepAgg)*(sqlite3_uint64)(m->nUsed+1));
  sqlite3_stmt *pIns = 0;
  int64_t i, nS = 0;
  int rc;
  if( aS==0 ) return SQLITE_NOMEM;
  for(i=0; i<m->nSlot; i++){
    if( m->a[i].used ){
      aS[nS].step = m->a[i].k1;
      aS[nS].sum = profsumEngBitsDouble(m->a[i].v1);
      aS[nS].n = m->a[i].v2;
      nS++;
    }
  }
  qsort(aS, (size_t)nS, sizeof(StepAgg), cmpStep);
  rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_step VALUES(?1,?2,?3,?4)");
  for(i=0; i<nS && rc==SQLITE_OK; i++){
    sqlite3_bind_int64(pIns, 1, e->traceId);
    sqlite3_bind_int64(pIns, 2, aS[i].step);
    sqlite3_bind_double(pIns, 3, aS[i].sum/(double)aS[i].n);
    sqlite3_bind_int64(pIns, 4, aS[i].n);
    rc = profsumEngStep(e, pIns);
  }
  sqlite3_free(aS);
  sqlite3_finalize(pIns);
  return rc;
}

/* profsum_agg_op: one row per device op name seen. */
static int aggWriteOps(Agg *a){
  Engine *e = a->e;
  sqlite3_stmt *pIns = 0;
  int64_t i;
  int rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_op VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)");
  for(i=0; rc==SQLITE_OK && i<a->nNames; i++){
    OpAgg *o = &a->aOp[i];
    if( !o->seen ) continue;
    sqlite3_bind_int64(pIns, 1, e->traceId);
    profsumEngBindStrId(e, pIns, 2, (int32_t)i);
    sqlite3_bind_int64(pIns, 3, o->count);
    sqlite3_bind_double(pIns, 4, US(o->total));
    sqlite3_bind_double(pIns, 5, US(o->excl));
    profsumEngBindStrId(e, pIns, 6, o->shape);
    profsumEngBindStrId(e, pIns, 7, o->source);
    profsumEngBindStrId(e, pIns, 8, o->tfop);
    if( o->flopN ) sqlite3_bind_double(pIns, 9, o->flopSum/(double)o->flopN);
    else sqlite3_bind_null(pIns, 9);
    sqlite3_bind_double(pIns, 10, o->exclRef);
    sqlite3_bind_double(pIns, 11, o->totalRef);
    rc = profsumEngStep(e, pIns);
  }
  sqlite3_finalize(pIns);
  return rc;
}

/* profsum_agg_comm: one row per collective, in order of first sight. */
static int aggWriteComm(Agg *a){
  Engine *e = a->e;
  sqlite3_stmt *pIns = 0;
  int i, rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_comm VALUES(?1,?2,?3,?4,?5)");
  for(i=0; rc==SQLITE_OK && i<a->nComm; i++){
    sqlite3_bind_int64(pIns, 1, e->traceId);
    sqlite3_bind_text(pIns, 2, a->azComm[i], -1, SQLITE_STATIC);
    sqlite3_bind_int64(pIns, 3, a->aCommN[i]);
    sqlite3_bind_double(pIns, 4, US(a->aCommEx[i]));
    sqlite3_bind_double(pIns, 5, a->aCommRef[i]);
    rc = profsumEngStep(e, pIns);
  }
  sqlite3_finalize(pIns);
  return rc;
}

/* The whole aggregation; writes the tables: the steps above in order, then
** the gaps and regions (engine_gaps.c), the step spans' rows
** (engine_steps.c) and the KPI inputs.  Starts the step wall cover in
** *ppWall (profsumEngWallStart) once its own side jobs are queued, so that
** the wall cover, whose rows are written last, runs after them.  SQLITE_OK
** or the first error (profsumEngErr's, or SQLITE_NOMEM). */
int profsumEngAggregate(Engine *e, EngWallJob **ppWall){
  Agg a;
  EngKpiJob *pKpi = 0;
  int rc = aggInit(&a, e), rc2, bBeside = 0;
  /* the devices' KPI walk, beside the passes below */
  if( rc==SQLITE_OK ) rc = profsumEngKpiStart(e, &pKpi);
  if( rc==SQLITE_OK ) rc = profsumEngRegionsBegin(e, &a.pGaps);
  if( rc==SQLITE_OK ){
    aggKeyCategories(&a);
    if( e->nFlip>0 ){
      int i;
      exactSplit(e, a.aKeyCat, a.aXj, &a.nXj);
      for(i=0; i<a.nXj; i++){
        profsumEngSideStart(e, &a.aXj[i].side, ENG_SIDE_RANK_PIECE, exactJobMain, &a.aXj[i]);
      }
    }
    aggRefStart(&a);
    sweepJobStart(&a.uj, e, a.aKeyCat);
    if( (rc = profsumEngWallStart(e, ppWall))==SQLITE_NOMEM ){
      profsumEngNoMem(e, "splitting the steps' wall time");
    }
  }
  if( rc==SQLITE_OK ){
    rc = aggEventPass(&a);
  }
  if( rc==SQLITE_OK ) rc = aggKeyCounts(&a);
  if( rc==SQLITE_OK ){
    aggPickOpValues(&a);
    rc = aggWriteRunIdsAndSources(&a);
  }
  /* the per-track breakdown: now, or after the step spans when the
  ** reference's walk runs beside */
  if( rc==SQLITE_OK && !a.refSide.running ) rc = aggWriteBreakdown(&a);
  /* the global breakdown: now when nothing sweeps beside (its memory
  ** then adds to no other section's), else last, so that the side job
  ** has the sections below to run beside */
  bBeside = a.uj.side.running;
  if( rc==SQLITE_OK && !bBeside ) rc = aggWriteGlobalBreakdown(&a);
  if( rc==SQLITE_OK ) rc = aggWriteSteps(&a);
  if( rc==SQLITE_OK ) rc = aggWriteOps(&a);
  if( rc==SQLITE_OK ) rc = aggWriteComm(&a);
  if( rc==SQLITE_OK ) rc = profsumEngGapsAndRegions(a.pGaps);
  /* the step spans' rows: work for this thread while the side jobs run */
  if( rc==SQLITE_OK && (rc = profsumEngStepSpans(e))==SQLITE_NOMEM ){
    profsumEngNoMem(e, "writing the step spans");
  }
  if( rc==SQLITE_OK && a.refSide.running ) rc = aggWriteBreakdown(&a);
  rc2 = profsumEngKpiFinish(e, pKpi, rc==SQLITE_OK, a.compilePs);
  if( rc==SQLITE_OK ) rc = rc2;
  if( rc==SQLITE_OK ) rc = aggFloatNesting(&a);
  if( rc==SQLITE_OK && bBeside ) rc = aggWriteGlobalBreakdown(&a);
  aggFree(&a);
  return rc;
}
