/*
** engine_aggregate.c — stage A's aggregates: breakdown (§4.4), steps
** (§4.3), per-op aggregates (§4.5), collectives (§4.7), and the event
** categories they share; the KPI inputs (engine_kpis.c), the reference's
** per-track walk (engine_refwalk.c) and the exact-time check of the
** nesting (engine_exact.c) run beside them.
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
#include "rowbuf.h"

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

/* True if lit (lower case, m bytes) is at z[i..] (z of n bytes), ASCII
** letters compared without case. */
static int ciAt(const char *z, int n, int i, const char *lit, int m){
  int k;
  if( i<0 || i+m>n ) return 0;
  for(k=0; k<m; k++){
    char c = z[i+k];
    if( c>='A' && c<='Z' ) c = (char)(c+32);
    if( c!=lit[k] ) return 0;
  }
  return 1;
}

/* True if z[0..n) holds lit (lower case) anywhere, ASCII letters compared
** without case. */
static int hasCi(const char *z, int n, const char *lit){
  int i, m = (int)strlen(lit);
  for(i=0; i+m<=n; i++) if( ciAt(z, n, i, lit, m) ) return 1;
  return 0;
}

/* True if the pattern a.?to.?b (case-insensitive; a of na bytes) starts at
** z[i..]: a, at most one byte, "to", at most one byte, b. */
static int toPatternAt(const char *z, int n, int i, const char *a, int na, const char *b, int nb){
  int gap1, gap2;
  if( !ciAt(z, n, i, a, na) ) return 0;
  for(gap1=0; gap1<=1; gap1++){
    int j = i + na + gap1;
    if( !ciAt(z, n, j, "to", 2) ) continue;
    for(gap2=0; gap2<=1; gap2++){
      if( ciAt(z, n, j + 2 + gap2, b, nb) ) return 1;
    }
  }
  return 0;
}

/* See engine_int.h.  One walk over the name: at each byte, only the
** literals that start with it (memcpy, h2d, d2h, infeed, outfeed,
** transfer, host.?to.?device, device.?to.?host). */
int profsumEngIsTransferName(const char *z, int n){
  int i;
  for(i=0; i<n; i++){
    char c = z[i];
    if( c>='A' && c<='Z' ) c = (char)(c+32);
    switch( c ){
      case 'm': if( ciAt(z, n, i, "memcpy", 6) ) return 1; break;
      case 'h': if( ciAt(z, n, i, "h2d", 3) || toPatternAt(z, n, i, "host", 4, "device", 6) ) return 1; break;
      case 'd': if( ciAt(z, n, i, "d2h", 3) || toPatternAt(z, n, i, "device", 6, "host", 4) ) return 1; break;
      case 'i': if( ciAt(z, n, i, "infeed", 6) ) return 1; break;
      case 'o': if( ciAt(z, n, i, "outfeed", 7) ) return 1; break;
      case 't': if( ciAt(z, n, i, "transfer", 8) ) return 1; break;
      default: break;
    }
  }
  return 0;
}

/* See engine_int.h.  xprof's rule for the ops it draws on a "Host Offload
** Ops" line: one of six async op names, compared with case. */
int profsumEngIsHostOffloadName(const char *z, int n){
  static const char *const azOp[] = {
    "copy-start", "copy-done", "dynamic-slice-start", "dynamic-slice-done",
    "dynamic-update-slice-start", "dynamic-update-slice-done"
  };
  size_t i;
  for(i=0; i<sizeof(azOp)/sizeof(azOp[0]); i++){
    int m = (int)strlen(azOp[i]), k;
    for(k=0; k+m<=n; k++){
      if( z[k]==azOp[i][0] && memcmp(z+k, azOp[i], (size_t)m)==0 ) return 1;
    }
  }
  return 0;
}

/* See engine_int.h. */
int profsumEngIsHostOffloadKey(const Engine *e, const EvKey *q){
  const char *z;
  int n;
  int32_t th;
  if( q->name<0 ) return 0;
  z = SP_STR(&e->pool, q->name);
  n = SP_LEN(&e->pool, q->name);
  if( !profsumEngIsHostOffloadName(z, n) ) return 0;
  if( !q->hostMem && !profsumEngHasHostMem(z, n) ) return 0;
  th = e->aTrk[q->trk].thread;
  return !(th>=0 && SP_LEN(&e->pool, th)==13 && memcmp(SP_STR(&e->pool, th), "Async XLA Ops", 13)==0);
}

/* See engine_int.h. */
int profsumEngIsTransferKey(const Engine *e, const EvKey *q){
  if( q->name<0 ) return 0;
  return profsumEngIsTransferName(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name))
      || profsumEngIsHostOffloadKey(e, q);
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

/* The state of one aggregation (profsumEngAggregate), shared by its
** steps: per-name and per-key arrays, the counters and what the event pass
** sums.  Freed by aggFree(). */
typedef struct Agg {
  Engine *e;
  int32_t nNames;             /* names in the string pool */
  profsum_ps aBucket[5];      /* per-track breakdown: exclusive ps per category (128
                              ** bits: durations reach 2^61 ps, their sums more) */
  double aBucketRef[5];       /* the same as the reference's doubles add it
                              ** (engine_refwalk.c) */
  int refBeside;              /* its walk's end runs on the side worker */
  OpAgg *aOp;                 /* per name id: the device op's aggregate */
  const int8_t *aKeyCat;      /* event category (§1.4) per event key (e's) */
  KeyMemo *aMemo;             /* per event key: flop proxy, collective */
  const unsigned char *aNameFlag;   /* per name id: 1 known, 2 stall, 4 comm, 8 compile
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
  ExactCheck *pExact;         /* the exact nesting check, beside it too (0: not
                              ** started) */
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
  a->aFamily = sqlite3_malloc64(sizeof(char*)*(sqlite3_uint64)(nNames ? nNames : 1));
  a->aMemo = sqlite3_malloc64(sizeof(KeyMemo)*(sqlite3_uint64)(e->nKey ? e->nKey : 1));
  if( !a->aOp || !a->aFamily || !a->aMemo ) return SQLITE_NOMEM;
  if( profsumEngKeyCategories(e) ) return SQLITE_NOMEM;
  a->aKeyCat = e->aKeyCat;
  a->aNameFlag = e->aNameFlag;
  for(i=0; i<e->nKey; i++){
    a->aMemo[i].n = a->aMemo[i].first = 0;
    a->aMemo[i].flop = 0.0; a->aMemo[i].flopKind = -1; a->aMemo[i].comm = -2;
  }
  memset(a->aOp, 0, sizeof(OpAgg)*(size_t)nNames);
  memset(a->aFamily, 0, sizeof(char*)*(size_t)nNames);
  return SQLITE_OK;
}

/* Free what aggInit() and the steps took. */
static void aggFree(Agg *a){
  profsumEngSideJoin(&a->uj.side);
  profsumEngExactFree(a->pExact);
  sqlite3_free(a->aOp);
  sqlite3_free(a->aMemo);
  sqlite3_free((void*)a->aFamily);
  profsumEngHmFree(&a->steps); profsumEngHmFree(&a->gpuSteps); profsumEngHmFree(&a->ctr);
  profsumEngGapsFree(a->pGaps);
}

/* See engine_int.h.  The name tests are cached per name: stall regex →
** stall; host process → host; communication name → communication; device
** process → compute; else other.  The same pass caches the names' compile
** test (engKpis' facts). */
int profsumEngKeyCategories(Engine *e){
  int32_t nNames = e->pool.n;
  int64_t i;
  if( e->aKeyCat ) return SQLITE_OK;
  e->aNameFlag = sqlite3_malloc64((sqlite3_uint64)(nNames ? nNames : 1));
  e->aKeyCat = sqlite3_malloc64((sqlite3_uint64)(e->nKey ? e->nKey : 1));
  if( e->aNameFlag==0 || e->aKeyCat==0 ){
    sqlite3_free(e->aNameFlag); sqlite3_free(e->aKeyCat);
    e->aNameFlag = 0; e->aKeyCat = 0;
    return SQLITE_NOMEM;
  }
  memset(e->aNameFlag, 0, (size_t)nNames);
  for(i=0; i<e->nKey; i++){
    const EvKey *q = &e->aKey[i];
    STrack *t = &e->aTrk[q->trk];
    unsigned char *pFlag = &e->aNameFlag[q->name];
    int cat;
    if( *pFlag==0 ){
      const char *zName = SP_STR(&e->pool, q->name);
      int nName = SP_LEN(&e->pool, q->name);
      *pFlag = (unsigned char)(1 | (profsumIsStallName(zName, nName) ? 2 : 0)
                                 | (profsumIsCommName(zName, nName) ? 4 : 0)
                                 | (hasCi(zName, nName, "compile") ? 8 : 0));
    }
    if( *pFlag & 2 ) cat = CAT_STALL;
    else if( t->isHost ) cat = CAT_HOST;
    else if( *pFlag & 4 ) cat = CAT_COMM;
    else if( t->isDevice ) cat = CAT_COMPUTE;
    else cat = CAT_OTHER;
    e->aKeyCat[i] = (int8_t)cat;
  }
  return SQLITE_OK;
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
    if( a->pExact==0 && (rc = profsumEngExactStart(e, a->aKeyCat, &a->pExact)) ) return rc;
    if( (rc = profsumEngExactFinish(a->pExact, aExact, &nDiff)) ) return rc;
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
** and the reference's (engine_refwalk.c), which the document shows: they
** can differ by more than a sum's rounding where an exclusive time nearly
** cancels (an op of 1000.001 µs around a child of 1000 µs) or a time text
** was rounded to the picosecond (half a picosecond an event). */
static int aggWriteBreakdown(Agg *a){
  profsum_ps total = 0;
  double aDur[5];
  int c, rc;
  /* the side job's result, or the walk here when none ran */
  if( (rc = profsumEngRefFinish(a->e, a->aBucketRef)) ) return rc;
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
  ProfsumRowBuf b;
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
  rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_step", "trace_id, step, duration, n_events", 4);
  for(i=0; i<nS && rc==SQLITE_OK; i++){
    profsumRowBufInt(&b, e->traceId);
    profsumRowBufInt(&b, aS[i].step);
    profsumRowBufDouble(&b, aS[i].sum/(double)aS[i].n);
    profsumRowBufInt(&b, aS[i].n);
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  sqlite3_free(aS);
  profsumRowBufFree(&b);
  return profsumEngRowsErr(e, rc);
}

/* profsum_agg_op: one row per device op name seen. */
static int aggWriteOps(Agg *a){
  Engine *e = a->e;
  ProfsumRowBuf b;
  int64_t i;
  int rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_op",
      "trace_id, name, count, total_duration, exclusive_duration, shape_signature, "
      "source_file, tf_op_path, flop_proxy_per_invocation, exclusive_ref, total_ref", 11);
  int32_t *aId = 0;
  int64_t *aOrd = 0;
  int64_t nId = 0, j;
  /* in the order of the table's key: each row goes where the last went */
  if( rc==SQLITE_OK ){
    aId = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(a->nNames+1));
    if( aId==0 ) rc = SQLITE_NOMEM;
  }
  for(i=0; rc==SQLITE_OK && i<a->nNames; i++){
    if( a->aOp[i].seen ) aId[nId++] = (int32_t)i;
  }
  if( rc==SQLITE_OK ) rc = profsumEngStrOrder(e, nId, aId, 0, &aOrd);
  for(j=0; rc==SQLITE_OK && j<nId; j++){
    OpAgg *o;
    i = aId[aOrd[j]];
    o = &a->aOp[i];
    profsumRowBufInt(&b, e->traceId);
    profsumEngRowStrId(e, &b, (int32_t)i);
    profsumRowBufInt(&b, o->count);
    profsumRowBufDouble(&b, US(o->total));
    profsumRowBufDouble(&b, US(o->excl));
    profsumEngRowStrId(e, &b, o->shape);
    profsumEngRowStrId(e, &b, o->source);
    profsumEngRowStrId(e, &b, o->tfop);
    if( o->flopN ) profsumRowBufDouble(&b, o->flopSum/(double)o->flopN);
    else profsumRowBufNull(&b);
    profsumRowBufDouble(&b, o->exclRef);
    profsumRowBufDouble(&b, o->totalRef);
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  sqlite3_free(aId);
  sqlite3_free(aOrd);
  profsumRowBufFree(&b);
  return profsumEngRowsErr(e, rc);
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
    /* (out of memory for it here: aggFloatNesting tries again, and says so) */
    if( e->nFlip>0 ) (void)profsumEngExactStart(e, a.aKeyCat, &a.pExact);
    a.refBeside = profsumEngRefRest(e);
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
  if( rc==SQLITE_OK && !a.refBeside ) rc = aggWriteBreakdown(&a);
  /* the global breakdown: now when nothing sweeps beside (its memory
  ** then adds to no other section's), else last, so that the side job
  ** has the sections below to run beside */
  bBeside = a.uj.side.running;
  if( rc==SQLITE_OK && !bBeside ) rc = aggWriteGlobalBreakdown(&a);
  if( rc==SQLITE_OK ) rc = aggWriteSteps(&a);
  if( rc==SQLITE_OK ) rc = aggWriteOps(&a);
  if( rc==SQLITE_OK ) rc = aggWriteComm(&a);
  /* the regions' rows; the gap pass goes to the worker */
  if( rc==SQLITE_OK ) rc = profsumEngGapsBegin(a.pGaps);
  /* the step spans' rows: work for this thread while the side jobs run */
  if( rc==SQLITE_OK && (rc = profsumEngStepSpans(e))==SQLITE_NOMEM ){
    profsumEngNoMem(e, "writing the step spans");
  }
  if( rc==SQLITE_OK && a.refBeside ) rc = aggWriteBreakdown(&a);
  rc2 = profsumEngKpiFinish(e, pKpi, rc==SQLITE_OK, a.compilePs);
  if( rc==SQLITE_OK ) rc = rc2;
  /* the gaps' rows, and their near ties in e->nFlip before the check */
  if( rc==SQLITE_OK ) rc = profsumEngGapsFinish(a.pGaps);
  if( rc==SQLITE_OK ) rc = aggFloatNesting(&a);
  if( rc==SQLITE_OK && bBeside ) rc = aggWriteGlobalBreakdown(&a);
  aggFree(&a);
  return rc;
}
