/*
** engine_wall.c — stage A's step wall time: for every device and step,
** each instant of the step counted once as collective, transfer, compute
** or idle, written to profsum_agg_step_wall.
**
** A device is the set of device-op tracks (XLA Ops, Async XLA Ops,
** Stream #...) of one /device: process.  An instant covered by a
** communication-named op is collective, else by a transfer-named one
** (memcpy, h2d, infeed, host to device, ...) transfer, else by any other
** device op compute; an instant covered by nothing is idle.  The steps are
** the spans of profsum_agg_step_span (written just before, and kept in
** memory: Engine.aSpan): a span of a device's own Steps line is measured
** on that device, a host span (a 'train' event) on every device.
**
** No per-event memory: a device's tracks are merged by start (a heap of
** track cursors over the tracks' ordered slices) and three unions are
** built as runs in that order: of the collective ops (U1), of the
** collective and transfer ops (U2), of all ops (U3).  Each closed run is
** added to the windows it overlaps; then collective = |U1|, transfer =
** |U2| − |U1|, compute = |U3| − |U2|, idle = wall − |U3|, in exact
** picoseconds, so that the four add up to the step's duration.
*/
#include "profsum_int.h"
#include "engine_int.h"
#include "funcs.h"

#include <stdlib.h>
#include <string.h>

#define WALL_COMPUTE  0
#define WALL_TRANSFER 1
#define WALL_COLL     2

/* A step span: its number, pid, start (µs as stored), window [lo, lo+dur). */
typedef struct WallSpan { int64_t step, pid, lo, dur; double startUs; } WallSpan;
/* A window of the device being measured: its span and the covered ps of
** the three unions. */
typedef struct WallWin { const WallSpan *sp; int64_t aCov[3]; } WallWin;
/* A union being built as runs: the current run [lo, hi), and the first
** window that may still overlap a later run. */
typedef struct WallRun { int64_t lo, hi; int started; int64_t iWin; } WallRun;

/* 1 when lit occurs in z[0..n), case-insensitively. */
static int wallHasCi(const char *z, int n, const char *lit){
  int m = (int)strlen(lit), i;
  for(i=0; i+m<=n; i++){
    if( sqlite3_strnicmp(z+i, lit, m)==0 ) return 1;
  }
  return 0;
}

/* a.?to.?b, case-insensitively, in z[0..n). */
static int wallHasTo(const char *z, int n, const char *a, const char *b){
  int na = (int)strlen(a), nb = (int)strlen(b), i, g1, g2;
  for(i=0; i+na<=n; i++){
    if( sqlite3_strnicmp(z+i, a, na)!=0 ) continue;
    for(g1=0; g1<=1; g1++){
      int j = i+na+g1;
      if( j+2>n || sqlite3_strnicmp(z+j, "to", 2)!=0 ) continue;
      for(g2=0; g2<=1; g2++){
        int k = j+2+g2;
        if( k+nb<=n && sqlite3_strnicmp(z+k, b, nb)==0 ) return 1;
      }
    }
  }
  return 0;
}

/* The wall category of an op named z[0..n): the summary's communication
** names, else the KPI's transfer pattern (as large_transfers reads it),
** else compute. */
static int wallCategory(const char *z, int n){
  if( profsumIsCommName(z, n) ) return WALL_COLL;
  if( wallHasCi(z, n, "memcpy") || wallHasCi(z, n, "h2d") || wallHasCi(z, n, "d2h")
   || wallHasCi(z, n, "infeed") || wallHasCi(z, n, "outfeed") || wallHasCi(z, n, "transfer")
   || wallHasTo(z, n, "host", "device") || wallHasTo(z, n, "device", "host") ) return WALL_TRANSFER;
  return WALL_COMPUTE;
}

/* Add the run [lo, hi) of union u to the windows aWin[0..nWin) (sorted by
** start) it overlaps.  Runs come in increasing lo, so a window that ends at
** or before lo is passed for good (pR->iWin). */
static void wallFlush(WallRun *pR, int u, WallWin *aWin, int64_t nWin){
  int64_t w;
  while( pR->iWin<nWin && aWin[pR->iWin].sp->lo + aWin[pR->iWin].sp->dur <= pR->lo ) pR->iWin++;
  for(w=pR->iWin; w<nWin && aWin[w].sp->lo < pR->hi; w++){
    int64_t a = aWin[w].sp->lo, b = a + aWin[w].sp->dur;
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
  if( a->sp->lo!=b->sp->lo ) return a->sp->lo<b->sp->lo ? -1 : 1;
  return 0;
}

/* Cover the windows aWin[0..nWin) with the ops of the tracks aTk[0..nTk)
** (one device), merged by start through a heap of cursors (aHeap, aPos:
** nTk entries each, scratch).  aCat: the category per name id, -1 while not
** yet known. */
static void wallCover(Engine *e, const int32_t *aTk, int64_t nTk, int64_t *aHeap, int64_t *aPos,
                      int8_t *aCat, WallWin *aWin, int64_t nWin){
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
    int32_t nm = KEY(e, r)->name;
    int64_t ts = r->ts, end = ts + EVDUR(e, r);
    int cat;
    if( aCat[nm]<0 ) aCat[nm] = (int8_t)wallCategory(SP_STR(&e->pool, nm), SP_LEN(&e->pool, nm));
    cat = aCat[nm];
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

/* The step spans profsumEngStepSpans kept (the rows of
** profsum_agg_step_span of e->traceId, in their order) into *paSpan
** (*pnSpan of them; sqlite3_malloc'd, none: 0).  SQLITE_OK or
** SQLITE_NOMEM. */
static int wallSpans(Engine *e, WallSpan **paSpan, int64_t *pnSpan){
  int64_t i;
  if( e->nSpan==0 ) return SQLITE_OK;
  *paSpan = sqlite3_malloc64(sizeof(WallSpan)*(sqlite3_uint64)e->nSpan);
  if( *paSpan==0 ) return SQLITE_NOMEM;
  for(i=0; i<e->nSpan; i++){
    WallSpan *s = &(*paSpan)[i];
    s->step = e->aSpan[i].step;
    s->pid = e->aSpan[i].pid;
    s->startUs = e->aSpan[i].startUs;
    s->lo = e->aSpan[i].ts;
    s->dur = e->aSpan[i].dur;
  }
  *pnSpan = e->nSpan;
  return SQLITE_OK;
}

/* Insert the rows of the windows aWin[0..nWin) of device (pid, proc). */
static int wallWrite(Engine *e, sqlite3_stmt *pIns, int64_t pid, int32_t proc,
                     const WallWin *aWin, int64_t nWin){
  int64_t w;
  int rc = SQLITE_OK;
  for(w=0; rc==SQLITE_OK && w<nWin; w++){
    const WallSpan *s = aWin[w].sp;
    const int64_t *c = aWin[w].aCov;
    sqlite3_bind_int64(pIns, 1, e->traceId);
    sqlite3_bind_int64(pIns, 2, s->step);
    profsumEngBindStrId(e, pIns, 3, proc);
    sqlite3_bind_int64(pIns, 4, pid);
    sqlite3_bind_double(pIns, 5, s->startUs);
    sqlite3_bind_double(pIns, 6, US(s->dur));
    sqlite3_bind_double(pIns, 7, US(c[2] - c[1]));
    sqlite3_bind_double(pIns, 8, US(c[0]));
    sqlite3_bind_double(pIns, 9, US(c[1] - c[0]));
    sqlite3_bind_double(pIns, 10, US(s->dur - c[2]));
    rc = profsumEngStep(e, pIns);
  }
  return rc;
}

/* See engine_int.h. */
int profsumEngWall(Engine *e){
  HMap devOf = {0,0,0}, hostPid = {0,0,0};
  int32_t *aDevTk = 0;          /* device-op tracks grouped by device */
  int64_t *aDevFirst = 0;       /* device d's: aDevTk[aDevFirst[d]..aDevFirst[d+1]) */
  int64_t *aDevPid = 0, *aHeap = 0, *aPos = 0, *aOwn = 0, *aSpanOrd = 0;
  int32_t *aDevProc = 0;
  int64_t nDev = 0, i, d, nSpan = 0, nHost = 0;
  WallSpan *aSpan = 0;
  WallWin *aWin = 0;
  int8_t *aCat = 0;
  sqlite3_stmt *pIns = 0;
  int rc = SQLITE_OK;
  const int64_t nTrk = e->nTrk;

  aDevTk = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nTrk+1));
  aDevFirst = sqlite3_malloc64(sizeof(int64_t)*5*(sqlite3_uint64)(nTrk+2));
  aDevProc = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nTrk+1));
  aCat = sqlite3_malloc64((sqlite3_uint64)(e->pool.n+1));
  if( !aDevTk || !aDevFirst || !aDevProc || !aCat ){ rc = SQLITE_NOMEM; goto done; }
  aDevPid = aDevFirst + nTrk + 2;
  aHeap = aDevPid + nTrk + 2;
  aPos = aHeap + nTrk + 2;
  aOwn = aPos + nTrk + 2;
  memset(aCat, 0xff, (size_t)e->pool.n+1);
  /* the devices (by pid, in order of their first device-op track) and
  ** their tracks grouped: a counting sort, linear in the tracks */
  for(i=0; i<nTrk; i++){
    const STrack *t = &e->aTrk[i];
    HEnt *h;
    int isNew;
    if( t->isHost ){
      if( profsumEngHmGet(&hostPid, t->pid, 0, 1, 0)==0 ){ rc = SQLITE_NOMEM; goto done; }
    }
    if( !(t->isDevice && t->isDevOp && !t->isSteps) ) continue;
    h = profsumEngHmGet(&devOf, t->pid, 0, 1, &isNew);
    if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
    if( isNew ){ h->v1 = nDev; aDevFirst[nDev] = 0; aDevPid[nDev] = t->pid; aDevProc[nDev] = t->proc; nDev++; }
    aDevFirst[h->v1]++;
  }
  if( nDev==0 ) goto done;
  {
    int64_t acc = 0;
    for(d=0; d<nDev; d++){ int64_t c = aDevFirst[d]; aDevFirst[d] = acc; acc += c; }
    aDevFirst[nDev] = acc;
    for(i=0; i<nTrk; i++){
      const STrack *t = &e->aTrk[i];
      if( !(t->isDevice && t->isDevOp && !t->isSteps) ) continue;
      aDevTk[aDevFirst[profsumEngHmGet(&devOf, t->pid, 0, 0, 0)->v1]++] = (int32_t)i;
    }
    for(d=nDev; d>0; d--) aDevFirst[d] = aDevFirst[d-1];
    aDevFirst[0] = 0;
  }
  if( (rc = wallSpans(e, &aSpan, &nSpan))!=SQLITE_OK ) goto done;
  if( nSpan==0 ) goto done;
  aWin = sqlite3_malloc64(sizeof(WallWin)*(sqlite3_uint64)nSpan);
  if( aWin==0 ){ rc = SQLITE_NOMEM; goto done; }
  /* spans of a device's own Steps line, grouped by device (aSpanOrd,
  ** device d's from aOwn[d]: a counting sort); host spans (measured on
  ** every device without its own) after them; a span of a device without
  ** ops: none */
  aSpanOrd = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(nSpan+1));
  if( aSpanOrd==0 ){ rc = SQLITE_NOMEM; goto done; }
  for(d=0; d<=nDev; d++) aOwn[d] = 0;
  for(i=0; i<nSpan; i++){
    HEnt *h = profsumEngHmGet(&devOf, aSpan[i].pid, 0, 0, 0);
    if( h ) aOwn[h->v1]++;
    else if( profsumEngHmGet(&hostPid, aSpan[i].pid, 0, 0, 0) ) nHost++;
  }
  {
    int64_t acc = 0, iHost;
    for(d=0; d<nDev; d++){ int64_t c = aOwn[d]; aOwn[d] = acc; acc += c; }
    aOwn[nDev] = acc;
    iHost = acc;
    for(i=0; i<nSpan; i++){
      HEnt *h = profsumEngHmGet(&devOf, aSpan[i].pid, 0, 0, 0);
      if( h ) aSpanOrd[aOwn[h->v1]++] = i;
      else if( profsumEngHmGet(&hostPid, aSpan[i].pid, 0, 0, 0) ) aSpanOrd[iHost++] = i;
    }
    for(d=nDev; d>0; d--) aOwn[d] = aOwn[d-1];
    aOwn[0] = 0;
  }
  rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_step_wall"
      "(trace_id, step, device, pid, start_us, wall_us, compute_us, collective_us, transfer_us, idle_us) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
  for(d=0; rc==SQLITE_OK && d<nDev; d++){
    int64_t nWin = 0, a = aOwn[d], b = aOwn[d+1];
    if( a==b ){ a = aOwn[nDev]; b = aOwn[nDev] + nHost; }   /* no own steps: the host's */
    for(i=a; i<b; i++){
      aWin[nWin].sp = &aSpan[aSpanOrd[i]];
      aWin[nWin].aCov[0] = aWin[nWin].aCov[1] = aWin[nWin].aCov[2] = 0;
      nWin++;
    }
    if( nWin==0 ) continue;
    qsort(aWin, (size_t)nWin, sizeof(WallWin), wallWinCmp);
    wallCover(e, &aDevTk[aDevFirst[d]], aDevFirst[d+1] - aDevFirst[d], aHeap, aPos, aCat, aWin, nWin);
    rc = wallWrite(e, pIns, aDevPid[d], aDevProc[d], aWin, nWin);
  }
done:
  sqlite3_finalize(pIns);
  profsumEngHmFree(&devOf);
  profsumEngHmFree(&hostPid);
  sqlite3_free(aDevTk);
  sqlite3_free(aDevFirst);
  sqlite3_free(aDevProc);
  sqlite3_free(aCat);
  sqlite3_free(aSpan);
  sqlite3_free(aWin);
  sqlite3_free(aSpanOrd);
  if( rc==SQLITE_NOMEM ) profsumEngNoMem(e, "splitting the steps' wall time");
  return rc;
}
