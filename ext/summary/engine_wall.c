/*
** engine_wall.c — stage A's step wall time: for every device and step,
** each instant of the step counted once as collective, transfer, compute
** or idle, written to profsum_agg_step_wall.
**
** A device is a /device: process that has a device-op track (XLA Ops,
** Async XLA Ops, Stream #...) or step spans of its own (its Steps line),
** measured only when the trace has a device-op track at all; its ops are
** those of its device-op tracks (none: every instant idle).  An instant
** covered by a communication-named op is collective, else by a transfer
** op (named memcpy, h2d, infeed, host to device, ..., or a host-offload
** copy: profsumEngIsTransferKey) transfer, else by any other device op
** compute; an instant covered by nothing is idle.  The steps are the spans kept by profsumEngStepSpansKeep
** (Engine.aSpan: the devices' Steps events, the host 'train' events after
** them): a device with spans of its own is measured over those, any other
** over the host's.  The spans of one step number on one device are one
** row, measured over their union (each instant once): the union's pieces
** are the windows covered, added up per step when written.
**
** No per-event memory: a device's tracks are merged by start (a heap of
** track cursors over the tracks' ordered slices) and three unions are
** built as runs in that order: of the collective ops (U1), of the
** collective and transfer ops (U2), of all ops (U3).  Each closed run is
** added to the windows it overlaps; then collective = |U1|, transfer =
** |U2| − |U1|, compute = |U3| − |U2|, idle = wall − |U3|, in exact
** picoseconds, so that the four add up to the step's duration.
**
** Steps of different numbers may overlap.  The KPIs and the advice add
** the rows of the steady steps (every step when all are warmup steps):
** such a sum counts an instant once per step that holds it.  So where
** some device's steps of that set overlap, each device's union of them is
** covered too, and what the rows' sums count more than the unions is
** stored as the facts step_overlap_* (µs; none when nothing overlaps):
** the views subtract them, so that no share or time at stake exceeds the
** wall time the steps cover.
**
** The covers read only the records, the tracks, the spans and the op
** names' categories (made before they start), so they run on the side
** worker beside the aggregation (profsumEngWallStart); the rows are
** written once it is done (profsumEngWallFinish).
*/
#include "profsum_int.h"
#include "engine_int.h"
#include "rowbuf.h"
#include "funcs.h"

#include <stdlib.h>
#include <string.h>

#define WALL_COMPUTE  0
#define WALL_TRANSFER 1
#define WALL_COLL     2

/* A window of the device being measured: a piece of the union of one
** step's spans [ts, ts + dur) in ps, the start_us stored of the span that
** starts it, and the covered ps of the three unions. */
typedef struct WallWin {
  int64_t step, ts, dur;
  double startUs;
  int64_t aCov[3];
} WallWin;
/* A union being built as runs: the current run [lo, hi), and the first
** window that may still overlap a later run. */
typedef struct WallRun { int64_t lo, hi; int started; int64_t iWin; } WallRun;

/* The wall category of an op of key q: the summary's communication
** names, else the KPI's transfers (as large_transfers reads them), else
** compute. */
static int wallCategory(const Engine *e, const EvKey *q){
  if( profsumIsCommName(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name)) ) return WALL_COLL;
  if( profsumEngIsTransferKey(e, q) ) return WALL_TRANSFER;
  return WALL_COMPUTE;
}

/* Add the run [lo, hi) of union u to the windows aWin[0..nWin) (sorted by
** start) it overlaps.  Runs come in increasing lo, so a window that ends at
** or before lo is passed for good (pR->iWin). */
static void wallFlush(WallRun *pR, int u, WallWin *aWin, int64_t nWin){
  int64_t w;
  while( pR->iWin<nWin && aWin[pR->iWin].ts + aWin[pR->iWin].dur <= pR->lo ) pR->iWin++;
  for(w=pR->iWin; w<nWin && aWin[w].ts < pR->hi; w++){
    int64_t a = aWin[w].ts, b = a + aWin[w].dur;
    if( a<pR->lo ) a = pR->lo;
    if( b>pR->hi ) b = pR->hi;
    if( b>a ) aWin[w].aCov[u] += b - a;
  }
}

/* Feed the op [lo, hi) to union u. */
static void wallAdd(WallRun *pR, int u, int64_t lo, int64_t hi, WallWin *aWin, int64_t nWin){
  if( !pR->started ){ pR->lo = lo; pR->hi = hi; pR->started = 1; }
  else if( lo>pR->hi ){ wallFlush(pR, u, aWin, nWin); pR->lo = lo; pR->hi = hi; }
  else if( hi>pR->hi ) pR->hi = hi;
}

/* Order of windows: by start. */
static int wallWinCmp(const void *pa, const void *pb){
  const WallWin *a = pa, *b = pb;
  if( a->ts!=b->ts ) return a->ts<b->ts ? -1 : 1;
  return 0;
}

/* Order of windows: by step, then start. */
static int wallWinStepCmp(const void *pa, const void *pb){
  const WallWin *a = pa, *b = pb;
  if( a->step!=b->step ) return a->step<b->step ? -1 : 1;
  return wallWinCmp(pa, pb);
}

/* Merge the windows aWin[0..n) (one device's, one per span, uncovered)
** into the pieces of each step's union: sorted by step then start, a
** window that overlaps or touches the piece before it of the same step
** joins it.  Returns the number of pieces, left at aWin[0..), by start. */
static int64_t wallUnion(WallWin *aWin, int64_t n){
  int64_t i, m = 0;
  if( n==0 ) return 0;
  qsort(aWin, (size_t)n, sizeof(WallWin), wallWinStepCmp);
  for(i=1; i<n; i++){
    WallWin *p = &aWin[m];
    if( aWin[i].step==p->step && aWin[i].ts<=p->ts + p->dur ){
      if( aWin[i].ts + aWin[i].dur > p->ts + p->dur ) p->dur = aWin[i].ts + aWin[i].dur - p->ts;
    }else{
      aWin[++m] = aWin[i];
    }
  }
  m++;
  qsort(aWin, (size_t)m, sizeof(WallWin), wallWinCmp);
  return m;
}

/* Cover the windows aWin[0..nWin) with the ops of the tracks aTk[0..nTk)
** (one device), merged by start through a heap of cursors (aHeap, aPos:
** nTk entries each, scratch).  aCat: the category per event key, made
** for every key of a device-op event.  Reads the records and tracks only. */
static void wallCover(Engine *e, const int32_t *aTk, int64_t nTk, int64_t *aHeap, int64_t *aPos,
                      const int8_t *aCat, WallWin *aWin, int64_t nWin){
  WallRun aRun[3];
  int64_t nH = 0, t;
  memset(aRun, 0, sizeof(aRun));
#define WTS(h) (EV(e, ORD(e, e->aTrk[aTk[h]].iFirst + aPos[h]))->ts)
  for(t=0; t<nTk; t++){
    int64_t c;
    aPos[t] = 0;
    if( e->aTrk[aTk[t]].nEv==0 ) continue;
    c = nH++;
    aHeap[c] = t;
    while( c>0 && WTS(aHeap[(c-1)/2]) > WTS(aHeap[c]) ){
      int64_t x = aHeap[c]; aHeap[c] = aHeap[(c-1)/2]; aHeap[(c-1)/2] = x; c = (c-1)/2;
    }
  }
  while( nH>0 ){
    int64_t h = aHeap[0], c = 0;
    const STrack *tr = &e->aTrk[aTk[h]];
    const SEv *r = EV(e, ORD(e, tr->iFirst + aPos[h]));
    int64_t ts = r->ts, end = ts + EVDUR(e, r);
    int cat = aCat[r->key];     /* made for every device-op key (wallCategories) */
    if( cat==WALL_COLL ) wallAdd(&aRun[0], 0, ts, end, aWin, nWin);
    if( cat!=WALL_COMPUTE ) wallAdd(&aRun[1], 1, ts, end, aWin, nWin);
    wallAdd(&aRun[2], 2, ts, end, aWin, nWin);
    if( ++aPos[h]>=tr->nEv ) aHeap[0] = aHeap[--nH];
    for(;;){                     /* sift down */
      int64_t l = 2*c+1, rr = 2*c+2, m = c, x;
      if( l<nH && WTS(aHeap[l]) < WTS(aHeap[m]) ) m = l;
      if( rr<nH && WTS(aHeap[rr]) < WTS(aHeap[m]) ) m = rr;
      if( m==c ) break;
      x = aHeap[c]; aHeap[c] = aHeap[m]; aHeap[m] = x; c = m;
    }
  }
#undef WTS
  for(t=0; t<3; t++) if( aRun[t].started ) wallFlush(&aRun[t], (int)t, aWin, nWin);
}

/* Insert the rows of the covered windows aWin[0..nWin) of device (pid,
** proc): one row per step, its pieces added up (sorted here by step then
** start, so that the first piece of a step gives its start). */
static int wallWrite(Engine *e, ProfsumRowBuf *pIns, int64_t pid, int32_t proc,
                     WallWin *aWin, int64_t nWin){
  int64_t w = 0;
  int rc = SQLITE_OK;
  qsort(aWin, (size_t)nWin, sizeof(WallWin), wallWinStepCmp);
  while( rc==SQLITE_OK && w<nWin ){
    const WallWin *s = &aWin[w];
    int64_t dur = 0, c[3] = {0, 0, 0};
    for(; w<nWin && aWin[w].step==s->step; w++){
      dur += aWin[w].dur;
      c[0] += aWin[w].aCov[0]; c[1] += aWin[w].aCov[1]; c[2] += aWin[w].aCov[2];
    }
    profsumRowBufInt(pIns, e->traceId);
    profsumRowBufInt(pIns, s->step);
    profsumEngRowStrId(e, pIns, proc);
    profsumRowBufInt(pIns, pid);
    profsumRowBufDouble(pIns, s->startUs);
    profsumRowBufDouble(pIns, US(dur));
    profsumRowBufDouble(pIns, US(c[2] - c[1]));
    profsumRowBufDouble(pIns, US(c[0]));
    profsumRowBufDouble(pIns, US(c[1] - c[0]));
    profsumRowBufDouble(pIns, US(dur - c[2]));
    rc = profsumRowBufEnd(pIns);
  }
  return rc;
}

/* A wall split being worked out (profsumEngWallStart): the devices, their
** windows and the covers. */
struct EngWallJob {
  Engine *e;
  int64_t nDev;
  int32_t *aDevTk;            /* device-op tracks grouped by device */
  int64_t *aDevFirst;         /* device d's: aDevTk[aDevFirst[d]..aDevFirst[d+1]) */
  int64_t *aDevPid, *aHeap, *aPos, *aWinFirst;   /* (one allocation with aDevFirst) */
  int32_t *aDevProc;
  int8_t *aCat;               /* wall category per event key (device-op keys) */
  WallWin *aWin;              /* device d's windows: aWin[aWinFirst[d]..aWinFirst[d+1]),
                              ** by start until written */
  int64_t *aUniFirst;         /* device d's union of the steps the KPIs add: */
  WallWin *aUni;              /* aUni[aUniFirst[d]..aUniFirst[d+1]), by start; 0 when
                              ** no device's steps of that set overlap */
  int bSteady;                /* that set: 1 the steps >= warmupSteps, 0 every step */
  EngSide side;               /* the covers' place on the side worker */
  int covered;                /* the covers are done */
};

/* The category of every key of a device-op event (the covers then only
** read aCat: the string pool and the keys may grow while they run). */
static void wallCategories(Engine *e, int8_t *aCat){
  int32_t k;
  for(k=0; k<e->nKey; k++){
    const EvKey *q = &e->aKey[k];
    const STrack *t = &e->aTrk[q->trk];
    if( !(t->isDevice && t->isDevOp && !t->isSteps) ) continue;
    aCat[k] = (int8_t)wallCategory(e, q);
  }
}

/* Device (pid, proc) in pDevOf and j, numbered in order of arrival, with
** no track yet.  SQLITE_OK or SQLITE_NOMEM. */
static int wallDevice(EngWallJob *j, HMap *pDevOf, int64_t pid, int32_t proc, int64_t **ppCount){
  int isNew;
  HEnt *h = profsumEngHmGet(pDevOf, pid, 0, 1, &isNew);
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew ){
    h->v1 = j->nDev; j->aDevFirst[j->nDev] = 0;
    j->aDevPid[j->nDev] = pid; j->aDevProc[j->nDev] = proc; j->nDev++;
  }
  *ppCount = &j->aDevFirst[h->v1];
  return SQLITE_OK;
}

/* The devices of e, into j: first the /device: processes with a
** device-op track (in order of their first one), then, when there are
** any, those with step spans of their own among aSpan[0..nSpan) (a span
** of a process that is no host's is a Steps line's); their device-op
** tracks grouped (a counting sort, linear in the tracks).  The pids of
** host tracks into *pHostPid.  At most one device per track: the arrays
** of j hold nTrk.  SQLITE_OK or SQLITE_NOMEM. */
static int wallDevices(Engine *e, EngWallJob *j, const EngSpan *aSpan, int64_t nSpan,
                       HMap *pDevOf, HMap *pHostPid){
  int64_t i, d, acc = 0, *pCount;
  int rc;
  for(i=0; i<e->nTrk; i++){
    const STrack *t = &e->aTrk[i];
    if( t->isHost && profsumEngHmGet(pHostPid, t->pid, 0, 1, 0)==0 ) return SQLITE_NOMEM;
    if( !(t->isDevice && t->isDevOp && !t->isSteps) ) continue;
    if( (rc = wallDevice(j, pDevOf, t->pid, t->proc, &pCount))!=SQLITE_OK ) return rc;
    (*pCount)++;
  }
  for(i=0; j->nDev>0 && i<nSpan; i++){
    if( profsumEngHmGet(pHostPid, aSpan[i].pid, 0, 0, 0) ) continue;
    if( (rc = wallDevice(j, pDevOf, aSpan[i].pid, aSpan[i].proc, &pCount))!=SQLITE_OK ) return rc;
  }
  for(d=0; d<j->nDev; d++){ int64_t c = j->aDevFirst[d]; j->aDevFirst[d] = acc; acc += c; }
  j->aDevFirst[j->nDev] = acc;
  for(i=0; i<e->nTrk; i++){
    const STrack *t = &e->aTrk[i];
    if( !(t->isDevice && t->isDevOp && !t->isSteps) ) continue;
    j->aDevTk[j->aDevFirst[profsumEngHmGet(pDevOf, t->pid, 0, 0, 0)->v1]++] = (int32_t)i;
  }
  for(d=j->nDev; d>0; d--) j->aDevFirst[d] = j->aDevFirst[d-1];
  j->aDevFirst[0] = 0;
  return SQLITE_OK;
}

/* Each device's windows from the spans aSpan[0..nSpan): the spans of its
** own, else the host's; one step's spans merged into the pieces of their
** union (wallUnion), each device's by start.  SQLITE_OK or SQLITE_NOMEM. */
static int wallWindows(EngWallJob *j, const EngSpan *aSpan, int64_t nSpan, HMap *pDevOf, HMap *pHostPid){
  int64_t *aOwn = 0, *aSpanOrd = 0, i, d, nHost = 0, nWin = 0, acc = 0, iHost;
  aOwn = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(j->nDev+1));
  aSpanOrd = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(nSpan+1));
  if( !aOwn || !aSpanOrd ){ sqlite3_free(aOwn); sqlite3_free(aSpanOrd); return SQLITE_NOMEM; }
  /* own spans grouped by device (aSpanOrd, device d's from aOwn[d]: a
  ** counting sort), the host spans after them */
  for(d=0; d<=j->nDev; d++) aOwn[d] = 0;
  for(i=0; i<nSpan; i++){
    HEnt *h = profsumEngHmGet(pDevOf, aSpan[i].pid, 0, 0, 0);
    if( h ) aOwn[h->v1]++;
    else if( profsumEngHmGet(pHostPid, aSpan[i].pid, 0, 0, 0) ) nHost++;
  }
  for(d=0; d<j->nDev; d++){ int64_t c = aOwn[d]; aOwn[d] = acc; acc += c; }
  aOwn[j->nDev] = acc;
  iHost = acc;
  for(i=0; i<nSpan; i++){
    HEnt *h = profsumEngHmGet(pDevOf, aSpan[i].pid, 0, 0, 0);
    if( h ) aSpanOrd[aOwn[h->v1]++] = i;
    else if( profsumEngHmGet(pHostPid, aSpan[i].pid, 0, 0, 0) ) aSpanOrd[iHost++] = i;
  }
  for(d=j->nDev; d>0; d--) aOwn[d] = aOwn[d-1];
  aOwn[0] = 0;
  for(d=0; d<j->nDev; d++) nWin += aOwn[d+1]>aOwn[d] ? aOwn[d+1]-aOwn[d] : nHost;
  j->aWin = sqlite3_malloc64(sizeof(WallWin)*(sqlite3_uint64)(nWin+1));
  if( j->aWin==0 ){ sqlite3_free(aOwn); sqlite3_free(aSpanOrd); return SQLITE_NOMEM; }
  for(d=0, nWin=0; d<j->nDev; d++){
    int64_t a = aOwn[d], b = aOwn[d+1];
    if( a==b ){ a = aOwn[j->nDev]; b = aOwn[j->nDev] + nHost; }   /* no own steps: the host's */
    j->aWinFirst[d] = nWin;
    for(i=a; i<b; i++){
      const EngSpan *sp = &aSpan[aSpanOrd[i]];
      WallWin *w = &j->aWin[nWin++];
      w->step = sp->step; w->ts = sp->ts; w->dur = sp->dur; w->startUs = sp->startUs;
      w->aCov[0] = w->aCov[1] = w->aCov[2] = 0;
    }
    nWin = j->aWinFirst[d] + wallUnion(&j->aWin[j->aWinFirst[d]], nWin - j->aWinFirst[d]);
  }
  j->aWinFirst[j->nDev] = nWin;
  sqlite3_free(aOwn);
  sqlite3_free(aSpanOrd);
  return SQLITE_OK;
}

/* 1 when window w is of the steps the KPIs add (WallJob.bSteady). */
static int wallInSet(const EngWallJob *j, const WallWin *w){
  return !j->bSteady || w->step>=j->e->warmupSteps;
}

/* Where some device's windows of the steps the KPIs add overlap (steps of
** different numbers: one step's windows never do), each device's union of
** those windows into j->aUni, uncovered; else no aUni.  SQLITE_OK or
** SQLITE_NOMEM. */
static int wallUnionOfSet(EngWallJob *j){
  int64_t d, i, nUni = 0, bOverlap = 0;
  j->bSteady = 0;
  for(i=0; i<j->aWinFirst[j->nDev] && !j->bSteady; i++){
    if( j->aWin[i].step>=j->e->warmupSteps ) j->bSteady = 1;
  }
  for(d=0; d<j->nDev && !bOverlap; d++){
    int64_t hi = 0, has = 0;
    for(i=j->aWinFirst[d]; i<j->aWinFirst[d+1]; i++){       /* (by start) */
      const WallWin *w = &j->aWin[i];
      if( !wallInSet(j, w) ) continue;
      if( has && w->ts<hi ){ bOverlap = 1; break; }
      if( !has || w->ts + w->dur>hi ) hi = w->ts + w->dur;
      has = 1;
    }
  }
  if( !bOverlap ) return SQLITE_OK;
  j->aUniFirst = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(j->nDev+1));
  j->aUni = sqlite3_malloc64(sizeof(WallWin)*(sqlite3_uint64)(j->aWinFirst[j->nDev]+1));
  if( j->aUniFirst==0 || j->aUni==0 ) return SQLITE_NOMEM;
  for(d=0; d<j->nDev; d++){
    int64_t u0 = nUni;
    j->aUniFirst[d] = u0;
    for(i=j->aWinFirst[d]; i<j->aWinFirst[d+1]; i++){
      const WallWin *w = &j->aWin[i];
      WallWin *p = nUni>u0 ? &j->aUni[nUni-1] : 0;
      if( !wallInSet(j, w) ) continue;
      if( p && w->ts<=p->ts + p->dur ){
        if( w->ts + w->dur > p->ts + p->dur ) p->dur = w->ts + w->dur - p->ts;
      }else{
        p = &j->aUni[nUni++];
        *p = *w;
        p->aCov[0] = p->aCov[1] = p->aCov[2] = 0;
      }
    }
  }
  j->aUniFirst[j->nDev] = nUni;
  return SQLITE_OK;
}

/* The facts step_overlap_* of j (covered, aUni made): what the windows of
** the steps the KPIs add count more than their unions, per part, all
** devices.  SQLITE_OK or an error of profsumEngFacts. */
static int wallOverlapFacts(Engine *e, EngWallJob *j){
  static const char *azName[5] = {"step_overlap_wall", "step_overlap_compute",
    "step_overlap_collective", "step_overlap_transfer", "step_overlap_idle"};
  int64_t aEx[5] = {0, 0, 0, 0, 0}, i;
  EngFact a[5];
  int k;
  /* parts of a window: wall, compute, collective, transfer, idle; added
  ** for the windows, taken away for the unions */
#define WALL_PARTS(w, sg) do{ \
    aEx[0] += (sg)*(w)->dur; aEx[1] += (sg)*((w)->aCov[2] - (w)->aCov[1]); \
    aEx[2] += (sg)*(w)->aCov[0]; aEx[3] += (sg)*((w)->aCov[1] - (w)->aCov[0]); \
    aEx[4] += (sg)*((w)->dur - (w)->aCov[2]); }while(0)
  for(i=0; i<j->aWinFirst[j->nDev]; i++){
    if( wallInSet(j, &j->aWin[i]) ) WALL_PARTS(&j->aWin[i], 1);
  }
  for(i=0; i<j->aUniFirst[j->nDev]; i++) WALL_PARTS(&j->aUni[i], -1);
#undef WALL_PARTS
  if( aEx[0]<=0 ) return SQLITE_OK;     /* nothing counted twice */
  for(k=0; k<5; k++){ a[k].zName = azName[k]; a[k].v = US(aEx[k]); a[k].isNull = 0; }
  return profsumEngFacts(e, a, 5);
}

/* Cover every device's windows (reads the records, tracks and aCat). */
static void wallCoverAll(EngWallJob *j){
  int64_t d;
  for(d=0; d<j->nDev; d++){
    int64_t w0 = j->aWinFirst[d], nWin = j->aWinFirst[d+1] - w0;
    if( nWin==0 ) continue;
    wallCover(j->e, &j->aDevTk[j->aDevFirst[d]], j->aDevFirst[d+1] - j->aDevFirst[d],
              j->aHeap, j->aPos, j->aCat, &j->aWin[w0], nWin);
    if( j->aUni && j->aUniFirst[d+1]>j->aUniFirst[d] ){
      wallCover(j->e, &j->aDevTk[j->aDevFirst[d]], j->aDevFirst[d+1] - j->aDevFirst[d],
                j->aHeap, j->aPos, j->aCat, &j->aUni[j->aUniFirst[d]],
                j->aUniFirst[d+1] - j->aUniFirst[d]);
    }
  }
  j->covered = 1;
}

/* The covers' thread. */
static void *wallMain(void *pArg){
  wallCoverAll((EngWallJob*)pArg);
  return 0;
}

/* See engine_int.h. */
int profsumEngWallStart(Engine *e, EngWallJob **pp){
  HMap devOf = {0,0,0}, hostPid = {0,0,0};
  EngWallJob *j;
  const int64_t nTrk = e->nTrk;
  const int64_t nSpan = e->nSpan + e->nHostSpan;   /* the devices' spans, then the host's */
  int rc;
  *pp = 0;
  j = sqlite3_malloc64(sizeof(*j));
  if( j==0 ) return SQLITE_NOMEM;
  memset(j, 0, sizeof(*j));
  j->e = e;
  *pp = j;
  j->aDevTk = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nTrk+1));
  j->aDevFirst = sqlite3_malloc64(sizeof(int64_t)*5*(sqlite3_uint64)(nTrk+2));
  j->aDevProc = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nTrk+1));
  j->aCat = sqlite3_malloc64((sqlite3_uint64)e->nKey+1);
  if( !j->aDevTk || !j->aDevFirst || !j->aDevProc || !j->aCat ) return SQLITE_NOMEM;
  j->aDevPid = j->aDevFirst + nTrk + 2;
  j->aHeap = j->aDevPid + nTrk + 2;
  j->aPos = j->aHeap + nTrk + 2;
  j->aWinFirst = j->aPos + nTrk + 2;
  memset(j->aCat, 0xff, (size_t)e->nKey+1);
  rc = wallDevices(e, j, e->aSpan, nSpan, &devOf, &hostPid);
  if( rc==SQLITE_OK && j->nDev>0 && nSpan>0 ) rc = wallWindows(j, e->aSpan, nSpan, &devOf, &hostPid);
  if( rc==SQLITE_OK && j->nDev>0 && nSpan>0 ) rc = wallUnionOfSet(j);
  profsumEngHmFree(&devOf);
  profsumEngHmFree(&hostPid);
  if( rc ) return rc;
  if( j->nDev==0 || nSpan==0 ){ j->nDev = 0; j->covered = 1; return SQLITE_OK; }   /* nothing to cover */
  wallCategories(e, j->aCat);
  profsumEngSideStart(e, &j->side, ENG_SIDE_RANK_WALL, wallMain, j);
  return SQLITE_OK;
}

/* See engine_int.h. */
int profsumEngWallFinish(Engine *e, EngWallJob *j, int bWrite){
  int64_t d;
  int rc = SQLITE_OK;
  if( j==0 ) return SQLITE_OK;
  profsumEngSideJoin(&j->side);
  if( bWrite && !j->covered && j->aWin ) wallCoverAll(j);
  if( bWrite && j->nDev>0 && j->aUni ) rc = wallOverlapFacts(e, j);   /* (before wallWrite
                                                 ** sorts aWin by step) */
  if( rc==SQLITE_OK && bWrite && j->nDev>0 ){
    /* the rows in batches (rowbuf.c) */
    ProfsumRowBuf b;
    rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_step_wall", "trace_id, step, device, "
                           "pid, start_us, wall_us, compute_us, collective_us, transfer_us, idle_us", 10);
    for(d=0; rc==SQLITE_OK && d<j->nDev; d++){
      int64_t w0 = j->aWinFirst[d], nWin = j->aWinFirst[d+1] - w0;
      if( nWin>0 ) rc = wallWrite(e, &b, j->aDevPid[d], j->aDevProc[d], &j->aWin[w0], nWin);
    }
    if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
    profsumRowBufFree(&b);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ) profsumEngErr(e, rc, "%s", sqlite3_errmsg(e->db));
  }
  sqlite3_free(j->aDevTk);
  sqlite3_free(j->aDevFirst);
  sqlite3_free(j->aDevProc);
  sqlite3_free(j->aCat);
  sqlite3_free(j->aWin);
  sqlite3_free(j->aUni);
  sqlite3_free(j->aUniFirst);
  sqlite3_free(j);
  return rc;
}
