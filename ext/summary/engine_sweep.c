/*
** engine_sweep.c — the global breakdown's sweep (summary §4.4, mode
** exclusive_global): the devices' compute and communication events, each
** clipped to the window, cut the window into pieces at every start and
** end; a piece belongs to communication when a communication event covers
** it, else to compute when a compute event does, else it is uncovered
** (the stall).  Each category is the sum of its pieces' lengths added in
** time order, in the reference's doubles, so that the three sums are the
** reference's to the last bit (the length of a union is not: adding
** b − a and c − b rounds differently from c − a).
**
** When every length is exact in doubles (times far from 0: globalExact),
** the order of the additions cannot change a sum, and the lengths of two
** unions (communication; communication and compute) give the three
** categories at a third of the cost; otherwise the pieces are added one
** by one.  The points are never collected and sorted: each device track's events
** lie in processing order, sorted by their start's double, so a track
** gives its points in time order from a cursor over its events (the next
** start) and a small heap of the ends still pending (as deep as the
** track's nesting), and a tournament tree of the tracks merges them.  Memory: a
** cursor per track and the pending ends.
*/
#include "profsum_int.h"
#include "engine_int.h"
#include "engine_fast.h"
#include "growarray.h"

#include <math.h>
#include <string.h>

/* Pending ends whose times a cursor keeps beside their positions: the
** heap's first SW_KEEP slots (8 KiB a track at most), which hold all of
** them unless a track nests deeper; beyond, an end's time is made again
** from its record when compared. */
#define SW_KEEP 1024

/* One track's points: pos the next event to look at; when hasStart, the
** next start point [sLo, with end sHi) of an event in the categories,
** clipped to the window and not empty, at position sPos of the track; the
** pending ends: a binary heap, by end, of the positions of the events
** started and not ended (4 bytes each: a track of ops nested n deep keeps
** n), with the times of the first SW_KEEP slots in aEndT (aEndT[0] is
** topEnd; topComm says whether that event is a communication event); key
** the time of the track's next point. */
typedef struct SwCur {
  int64_t trk, pos;
  double sLo, sHi, key, topEnd;
  int sComm, hasStart, topComm, keyStart;   /* keyStart: key is the start */
  int32_t sPos;
  int32_t *aEnd;
  double *aEndT;
  int64_t nEnd, nAlloc, nAllocT;
} SwCur;

/* What the cursors of one sweep share. */
typedef struct SwCtx { Engine *e; const int8_t *aKeyCat; double wLo, wHi; } SwCtx;

/* The end (clipped to the window) of the event at position p of cursor
** c's track. */
static double swEndOf(const SwCtx *x, SwCur *c, int32_t p){
  const STrack *tr = &x->e->aTrk[c->trk];
  double ts, end;
  profsumEngEvFloatIn(x->e, tr, ORD(x->e, tr->iFirst + p), &ts, &end);
  return end>x->wHi ? x->wHi : end;
}

/* Find cursor c's next start: the first event at or after c->pos whose
** category is compute or communication and whose clip to [wLo, wHi) is
** not empty. */
static void swNextStart(const SwCtx *x, SwCur *c){
  Engine *e = x->e;
  const STrack *tr = &e->aTrk[c->trk];
  c->hasStart = 0;
  while( c->pos<tr->nEv ){
    int32_t k = ORD(e, tr->iFirst + c->pos);
    int cat = x->aKeyCat[EV(e, k)->key];
    c->pos++;
    if( cat==CAT_COMPUTE || cat==CAT_COMM ){
      double ts, end, lo, hi;
      profsumEngEvFloatIn(e, tr, k, &ts, &end);
      lo = ts<x->wLo ? x->wLo : ts; hi = end>x->wHi ? x->wHi : end;
      if( hi>lo ){
        c->sLo = lo; c->sHi = hi; c->sComm = cat==CAT_COMM; c->hasStart = 1;
        c->sPos = (int32_t)(c->pos - 1);
        return;
      }
    }
  }
}

/* The time of cursor c's next point into c->key (+inf when it has none),
** and whether that point is its next start (c->keyStart). */
static void swKey(SwCur *c){
  c->keyStart = c->hasStart && (c->nEnd==0 || c->sLo<=c->topEnd);
  c->key = c->keyStart ? c->sLo : c->nEnd>0 ? c->topEnd : INFINITY;
}

/* 1 when track t takes part in the global breakdown: a device track, not
** Steps, with events. */
static int swTrackIn(const STrack *t){
  return t->isDevice && !t->isSteps && t->nEv>0;
}

/* The end of the heap's slot i of cursor c: kept, or made again. */
static double swEndAt(const SwCtx *x, SwCur *c, int64_t i){
  return i<SW_KEEP ? c->aEndT[i] : swEndOf(x, c, c->aEnd[i]);
}

/* Push the start of cursor c (its end sHi, position sPos, communication
** or not) on its heap of ends.  SQLITE_OK or SQLITE_NOMEM. */
static int swEndPush(const SwCtx *x, SwCur *c){
  int64_t i;
  int32_t *a = profsumGrowArray(c->aEnd, c->nEnd, &c->nAlloc, sizeof(int32_t), 8);
  if( a==0 ) return SQLITE_NOMEM;
  c->aEnd = a;
  if( c->nEnd<SW_KEEP ){
    double *t = profsumGrowArray(c->aEndT, c->nEnd, &c->nAllocT, sizeof(double), 8);
    if( t==0 ) return SQLITE_NOMEM;
    c->aEndT = t;
  }
  for(i=c->nEnd++; i>0; i=(i-1)/2){
    double tp = swEndAt(x, c, (i-1)/2);
    if( !(tp > c->sHi) ) break;
    c->aEnd[i] = c->aEnd[(i-1)/2];
    if( i<SW_KEEP ) c->aEndT[i] = tp;
  }
  c->aEnd[i] = c->sPos;
  if( i<SW_KEEP ) c->aEndT[i] = c->sHi;
  if( i==0 ){ c->topEnd = c->sHi; c->topComm = c->sComm; }
  return SQLITE_OK;
}

/* Remove the earliest end of cursor c's heap (not empty); topEnd and
** topComm then describe the new earliest. */
static void swEndPop(const SwCtx *x, SwCur *c){
  int32_t v = c->aEnd[--c->nEnd];
  int64_t i = 0, n = c->nEnd;
  double tv;
  if( n==0 ) return;
  tv = swEndAt(x, c, n);             /* the last slot's end, moved to the top */
  for(;;){
    int64_t l = 2*i+1, m;
    double tl, tm;
    if( l>=n ) break;
    tl = swEndAt(x, c, l);
    m = l; tm = tl;
    if( l+1<n ){
      double tr = swEndAt(x, c, l+1);
      if( tr<tl ){ m = l+1; tm = tr; }
    }
    if( !(tm < tv) ) break;
    c->aEnd[i] = c->aEnd[m];
    if( i<SW_KEEP ) c->aEndT[i] = tm;
    i = m;
  }
  c->aEnd[i] = v;
  if( i<SW_KEEP ) c->aEndT[i] = tv;
  {
    Engine *e = x->e;
    const STrack *tr = &e->aTrk[c->trk];
    c->topEnd = c->aEndT[0];
    c->topComm = x->aKeyCat[EV(e, ORD(e, tr->iFirst + c->aEnd[0]))->key]==CAT_COMM;
  }
}

/* The tracks' merge: a tournament tree over the nLeaf cursors (nLeaf a
** power of two, cursors beyond nCur and cursors without points keyed
** +inf).  aNode[1..nLeaf) hold the loser of each match, aNode[0] the
** winner: the cursor with the earliest next point.  After the winner's
** key changed, swReplay plays its matches again, from its leaf up: one
** comparison per level. */
typedef struct SwTree { int64_t *aNode; double *aKey; int64_t nLeaf; } SwTree;

/* Build tree t over its keys (all set). */
static void swBuild(SwTree *t){
  int64_t m, base, k;
  int64_t *aWin = t->aNode + t->nLeaf;    /* scratch: each subtree's winner */
  for(k=0; k<t->nLeaf; k++) aWin[k] = k;  /* leaf k (node nLeaf + k) is cursor k */
  /* level by level up: the m subtrees rooted at nodes base..base+m-1 play
  ** in pairs; node (base + 2k)/2 keeps the loser, aWin[k] the winner */
  for(m=t->nLeaf, base=t->nLeaf; m>1; m/=2, base/=2){
    for(k=0; k<m/2; k++){
      int64_t a = aWin[2*k], b = aWin[2*k+1], node = (base + 2*k)/2;
      if( t->aKey[b] < t->aKey[a] ){ t->aNode[node] = a; aWin[k] = b; }
      else{ t->aNode[node] = b; aWin[k] = a; }
    }
  }
  t->aNode[0] = aWin[0];
}

/* The winner's key changed: play its matches again. */
static void swReplay(SwTree *t){
  int64_t w = t->aNode[0], node = (t->nLeaf + w)/2;
  double k = t->aKey[w];
  while( node>0 ){
    int64_t l = t->aNode[node];
    if( t->aKey[l] < k ){ t->aNode[node] = w; w = l; k = t->aKey[l]; }
    node /= 2;
  }
  t->aNode[0] = w;
}

/* The sweep itself, piece by piece (see the top of the file). */
static int globalSweep(Engine *e, const int8_t *aKeyCat, double wLo, double wHi, double aSum[3]){
  SwCur *aCur;
  SwTree tr;
  SwCtx x;
  int64_t nCur = 0, nLeaf = 1, t, nComm = 0, nComp = 0;
  double prev = wLo;
  int rc = SQLITE_OK;
  x.e = e; x.aKeyCat = aKeyCat; x.wLo = wLo; x.wHi = wHi;
  aSum[0] = aSum[1] = aSum[2] = 0.0;
  for(t=0; t<e->nTrk; t++) nCur += swTrackIn(&e->aTrk[t]);
  while( nLeaf<nCur ) nLeaf *= 2;
  aCur = sqlite3_malloc64(sizeof(SwCur)*(sqlite3_uint64)nLeaf
                          + (sizeof(int64_t)*2 + sizeof(double))*(sqlite3_uint64)nLeaf);
  if( aCur==0 ) return SQLITE_NOMEM;
  memset(aCur, 0, sizeof(SwCur)*(size_t)nLeaf);
  tr.aNode = (int64_t*)(aCur + nLeaf);
  tr.aKey = (double*)(tr.aNode + 2*nLeaf);
  tr.nLeaf = nLeaf;
  nCur = 0;
  for(t=0; t<e->nTrk; t++){
    SwCur *c;
    if( !swTrackIn(&e->aTrk[t]) ) continue;
    c = &aCur[nCur];
    c->trk = t;
    swNextStart(&x, c);
    swKey(c);
    tr.aKey[nCur++] = c->key;
  }
  for(t=nCur; t<nLeaf; t++) tr.aKey[t] = INFINITY;
  swBuild(&tr);
  for(;;){
    int64_t w = tr.aNode[0];
    SwCur *c = &aCur[w];
    double at = tr.aKey[w];
    int comm, delta;
    if( at==INFINITY ) break;
    if( at>prev ){
      /* the piece [prev, at): the events open over it decide its category */
      aSum[nComm>0 ? 0 : nComp>0 ? 1 : 2] += at - prev;
      prev = at;
    }
    if( c->keyStart ){
      comm = c->sComm; delta = 1;
      if( (rc = swEndPush(&x, c))!=SQLITE_OK ) break;
      swNextStart(&x, c);
    }else{
      comm = c->topComm; delta = -1;
      swEndPop(&x, c);
    }
    /* (an end follows its own start: no count goes below 0, as the
    ** reference's max(0, ...) never acts) */
    if( comm ) nComm += delta; else nComp += delta;
    swKey(c);
    tr.aKey[w] = c->key;
    swReplay(&tr);
  }
  if( rc==SQLITE_OK && prev<wHi ) aSum[nComm>0 ? 0 : nComp>0 ? 1 : 2] += wHi - prev;
  for(t=0; t<nCur; t++){ sqlite3_free(aCur[t].aEnd); sqlite3_free(aCur[t].aEndT); }
  sqlite3_free(aCur);
  return rc;
}

/* A union of intervals fed in order of start: the current run [lo, hi)
** and the length of the runs already closed, in the reference's doubles
** (µs: see unionOnDevices). */
typedef struct UnionAcc { double lo, hi, len; int started; } UnionAcc;

static void unionAdd(UnionAcc *u, double lo, double hi){
  if( !u->started ){ u->lo = lo; u->hi = hi; u->started = 1; }
  else if( lo>u->hi ){ u->len += u->hi - u->lo; u->lo = lo; u->hi = hi; }
  else if( hi>u->hi ) u->hi = hi;
}

static double unionLen(const UnionAcc *u){
  return u->started ? u->len + (u->hi - u->lo) : 0.0;
}

/* A cursor of unionOnDevices over one track: its events in a category
** mask, clipped to the window, merged into the track's own union one
** run at a time: [lo, hi) the run it stands on, pos the event after it;
** when hasNext, the event at pos is in the mask with the clip [nLo, nHi)
** (the start of the next run, found by the walk that ended this one). */
typedef struct UCur { int64_t trk, pos; double lo, hi, nLo, nHi; int hasNext; } UCur;

/* Move cursor c to the next run of its track's events in mask (clipped to
** [wLo, wHi), empty clips left out): their union, as unionAdd makes it,
** from the first such event at or after c->pos up to the first that
** starts beyond what came before it.  0 at the track's end. */
static int ucurNext(Engine *e, const int8_t *aKeyCat, int mask, double wLo, double wHi, UCur *c){
  const STrack *tr = &e->aTrk[c->trk];
  int ok = 0;
  if( c->hasNext ){
    c->lo = c->nLo; c->hi = c->nHi; ok = 1;
    c->hasNext = 0;
    c->pos++;
  }
  while( c->pos<tr->nEv ){
    int32_t k = ORD(e, tr->iFirst + c->pos);
    const SEv *r = EV(e, k);
    if( (mask>>aKeyCat[r->key]) & 1 ){
      double ts, end, lo, hi;
      profsumEngEvFloatIn(e, tr, k, &ts, &end);
      lo = ts<wLo ? wLo : ts; hi = end>wHi ? wHi : end;
      if( hi>lo ){
        if( !ok ){ c->lo = lo; c->hi = hi; ok = 1; }
        else if( lo>c->hi ){             /* the next run starts here */
          c->nLo = lo; c->nHi = hi; c->hasNext = 1;
          break;
        }
        else if( hi>c->hi ) c->hi = hi;
      }
    }
    c->pos++;
  }
  return ok;
}

/* Put cursor x into the heap aHeap[0..*pnH) of cursors aCur (by run
** start), or, when it has no run left, leave it out. */
static void ucurPush(UCur *aCur, int64_t *aHeap, int64_t *pnH, int64_t x){
  int64_t c = (*pnH)++;
  while( c>0 && aCur[aHeap[(c-1)/2]].lo > aCur[x].lo ){ aHeap[c] = aHeap[(c-1)/2]; c = (c-1)/2; }
  aHeap[c] = x;
}

/* The heap's top cursor moved on (ok: it has a run, else it is done):
** restore the heap. */
static void ucurFix(UCur *aCur, int64_t *aHeap, int64_t *pnH, int ok){
  int64_t nH = *pnH, c = 0, x;
  double key;
  if( !ok ){ aHeap[0] = aHeap[--nH]; *pnH = nH; }
  if( nH<2 ) return;
  x = aHeap[0];
  key = aCur[x].lo;
  for(;;){
    int64_t l = 2*c+1, m;
    if( l>=nH ) break;
    m = (l+1<nH && aCur[aHeap[l+1]].lo < aCur[aHeap[l]].lo) ? l+1 : l;
    if( !(aCur[aHeap[m]].lo < key) ) break;
    aHeap[c] = aHeap[m];
    c = m;
  }
  aHeap[c] = x;
}

/* Lengths (µs) of two unions of the device events (non-Steps tracks), each
** clipped to [wLo, wHi): of the communication events (*pComm) and of the
** communication and compute events (*pAll), each event's ts and ts + dur
** as the reference's doubles (profsumEngEvFloatIn).  The tracks are already
** sorted by start in those doubles (aOrd), so each track's events make
** their own union run by run (ucurNext: a line of back-to-back ops is a
** few runs), and a binary heap merges the tracks' runs by start: the
** union of the runs fed in order of start has the runs of the union of
** the events, so the same doubles and the same sum, without sifting a
** heap per event.  One heap per union, advanced in turn by the smaller
** start, so that a track's two cursors read its events close together
** (a track none of whose keys is communication has no cursor for it).
** No copy of the events and no sort (the global breakdown's memory). */
static int unionOnDevices(Engine *e, const int8_t *aKeyCat,
                          double wLo, double wHi, double *pComm, double *pAll){
  const int mAll = (1<<CAT_COMM)|(1<<CAT_COMPUTE), mComm = 1<<CAT_COMM;
  UCur *aCur;
  int64_t *aHeap, *aHeapC, nH = 0, nHC = 0, nCur = 0, t;
  unsigned char *aHasComm;
  UnionAcc all = {0,0,0,0}, comm = {0,0,0,0};     /* the union of all, of communication */
  aCur = sqlite3_malloc64((sizeof(UCur)*2 + sizeof(int64_t)*2 + 1)*(sqlite3_uint64)(e->nTrk+1));
  if( aCur==0 ) return SQLITE_NOMEM;
  aHeap = (int64_t*)(aCur + 2*(e->nTrk+1));
  aHeapC = aHeap + e->nTrk + 1;
  aHasComm = (unsigned char*)(aHeapC + e->nTrk + 1);
  memset(aHasComm, 0, (size_t)e->nTrk+1);
  for(t=0; t<e->nKey; t++) if( aKeyCat[t]==CAT_COMM ) aHasComm[e->aKey[t].trk] = 1;
  for(t=0; t<e->nTrk; t++){
    if( !swTrackIn(&e->aTrk[t]) ) continue;
    memset(&aCur[nCur], 0, sizeof(UCur));
    aCur[nCur].trk = t;
    if( ucurNext(e, aKeyCat, mAll, wLo, wHi, &aCur[nCur]) ) ucurPush(aCur, aHeap, &nH, nCur);
    nCur++;
    if( !aHasComm[t] ) continue;
    memset(&aCur[nCur], 0, sizeof(UCur));
    aCur[nCur].trk = t;
    if( ucurNext(e, aKeyCat, mComm, wLo, wHi, &aCur[nCur]) ) ucurPush(aCur, aHeapC, &nHC, nCur);
    nCur++;
  }
  while( nH>0 || nHC>0 ){
    if( nHC==0 || (nH>0 && aCur[aHeap[0]].lo<=aCur[aHeapC[0]].lo) ){
      UCur *c = &aCur[aHeap[0]];
      unionAdd(&all, c->lo, c->hi);
      ucurFix(aCur, aHeap, &nH, ucurNext(e, aKeyCat, mAll, wLo, wHi, c));
    }else{
      UCur *c = &aCur[aHeapC[0]];
      unionAdd(&comm, c->lo, c->hi);
      ucurFix(aCur, aHeapC, &nHC, ucurNext(e, aKeyCat, mComm, wLo, wHi, c));
    }
  }
  sqlite3_free(aCur);
  *pAll = unionLen(&all);
  *pComm = unionLen(&comm);
  return SQLITE_OK;
}

/* 1 when every length the breakdown adds in [wLo, wHi) is exact in
** doubles, so that the order of the additions cannot matter: wLo > 0, and
** the window no longer than 2^E for wLo = m·2^E (0.5 <= m < 1).  Every
** point of the sweep is then a double in [wLo, wHi], so a multiple of the
** spacing q = 2^(E-53) of the doubles at wLo, and every difference of two
** points, every sum of pieces and every union length is a multiple of q
** no larger than the window, 2^E = 2^53·q: exactly a double.  Timestamps
** far from 0 (epoch times, an XPlane's always) pass; a trace whose times
** start near 0 does not. */
static int globalExact(double wLo, double wHi){
  int ex;
  if( !(wLo>0.0) || !(wHi>=wLo) || !isfinite(wHi) ) return 0;
  (void)frexp(wLo, &ex);
  return wHi - wLo <= ldexp(1.0, ex);
}

/* See engine_int.h. */
int profsumEngGlobalSweep(Engine *e, const int8_t *aKeyCat, double wLo, double wHi, double aSum[3]){
  double uComm = 0.0, uAll = 0.0;
  int rc;
  if( !globalExact(wLo, wHi) ) return globalSweep(e, aKeyCat, wLo, wHi, aSum);
  /* every length exact: the unions' lengths and their differences are the
  ** sums of the pieces, at a third of the sweep's cost */
  if( (rc = unionOnDevices(e, aKeyCat, wLo, wHi, &uComm, &uAll))!=SQLITE_OK ) return rc;
  aSum[0] = uComm;
  aSum[1] = uAll - uComm;
  aSum[2] = (wHi - wLo) - uAll;
  return SQLITE_OK;
}
