/*
** engine_exact.c — the check of the nesting on exact times.  The summary
** decides order and nesting as the reference's doubles do
** (profsumEngCmpPoint).  When some decision went otherwise than the exact
** times would have it (e->nFlip: timestamps whose doubles have lost
** digits, as epoch microseconds, or ends equal in picoseconds whose
** doubles differ), every track is swept again (§2) on exact picoseconds:
** the per-track breakdown's buckets of that nesting (Steps threads left
** out, as there) and the events whose exclusive time differs from the
** summary's.  Only the facts and the diagnostic that tell the user so
** come from it (engine_aggregate.c, aggFloatNesting): the summary keeps
** the reference's numbers.
**
** The check runs in pieces on the side worker and the calling thread
** (engine_side.c): ranges of tracks, and, when one track holds most of
** the events (a trace with one busy thread), slices of that track's
** events, each swept from an empty stack; the slices are then joined in
** order (exactJoinSlices), which gives what one sweep gives.  All sums
** are of integers, so the cut changes nothing.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"

#include <stdlib.h>
#include <string.h>

/* A kept exclusive time (ex) by its key k (an event index). */
typedef struct ExclOf { int64_t k, ex; } ExclOf;
static int cmpExclOf(const void *pa, const void *pb){
  const ExclOf *a = (const ExclOf*)pa, *b = (const ExclOf*)pb;
  return a->k<b->k ? -1 : (a->k>b->k);
}

/* The kept exclusive times of track tr's events that have a child
** (aParPos/aParEx, or aXrPos/aXrEx on a device-op track): the track's
** entries, as positions (aPos, aEx, nOf) or, once its events are walked by
** event index, as ExclOf (aKey, sorted by index). */
typedef struct ExactTrk {
  const int32_t *aPos;
  const uint32_t *aEx;
  int64_t nOf;
  const ExclOf *aKey;
} ExactTrk;

/* Track tr's entries into *w (aKey 0), found by binary search. */
static void trackEntries(const Engine *e, const STrack *tr, ExactTrk *w){
  int dev = tr->isDevice && tr->isDevOp;
  const int32_t *aPos = dev ? e->aXrPos : e->aParPos;
  int64_t n = dev ? e->nXr : e->nPar;
  int64_t lo = profsumEngEntryAtOrAfter(aPos, n, tr->iFirst);
  int64_t hi = profsumEngEntryAtOrAfter(aPos, n, tr->iFirst + tr->nEv);
  memset(w, 0, sizeof(*w));
  w->nOf = hi - lo;
  if( w->nOf>0 ){      /* (none: the arrays may be NULL) */
    w->aPos = aPos + lo;
    w->aEx = (dev ? e->aXrEx : e->aParEx) + lo;
  }
}

/* The entry of the kept exclusive times (w's n entries, keys increasing:
** a processing position in aPos, or an event index in aKey's k) that
** belongs to key k, or -1; *pCur: a cursor, the first entry whose key is
** not below the last key asked (keys are asked increasing but at the few
** places the exact order moved an event, where a binary search finds
** it). */
static int64_t exactEntry(const ExactTrk *w, int64_t k, int64_t *pCur){
  int64_t c = *pCur, n = w->nOf;
#define ENTRY_KEY(i) (w->aKey ? w->aKey[i].k : (int64_t)w->aPos[i])
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

/* A level of the nesting stack: the open event (its key in the track's
** order: a processing position, or an event index), the entry of its kept
** exclusive time (exactEntry, found when it opened) and the durations of
** its children so far. */
typedef struct ExactLevel {
  int64_t child;
  int32_t k;
  int32_t ent;
} ExactLevel;
typedef struct ExactStack {
  ExactLevel *a;
  int64_t n, nAlloc;
} ExactStack;

/* What a walk adds up: the exclusive ps per category, the events whose
** exclusive time differs from the summary's, and the kept entries met
** (the track's others had a child in the summary's nesting only). */
typedef struct ExactSum {
  profsum_ps aExact[5];
  int64_t nDiff, nSeen;
} ExactSum;

/* The record of order key k: a processing position (byPos) or an event
** index. */
static inline const SEv *exactEv(const Engine *e, int byPos, int64_t k){
  return EV(e, byPos ? ORD(e, k) : k);
}

/* Finish level l, popped off the stack (pParent: the level below it, or
** 0): its exclusive time to its category, compared with the summary's
** (its kept time when it had a child there, else its dur), its dur to its
** parent's children. */
static inline __attribute__((always_inline)) void exactFin(
    const Engine *e, const int8_t *aKeyCat, const ExactTrk *w, int byPos,
    const ExactLevel *l, ExactLevel *pParent, ExactSum *s){
  const SEv *x = exactEv(e, byPos, l->k);
  int64_t d = EVDUR(e, x), ex = d - l->child;
  if( ex<0 ) ex = 0;
  s->aExact[aKeyCat[x->key]] += ex;
  if( l->child>0 ){
    /* a child in the exact nesting: compared with the summary's time, its
    ** dur when it had none there (then they differ) */
    if( l->ent>=0 ) s->nSeen++;
    if( l->ent<0 || (w->aKey ? w->aKey[l->ent].ex : profsumEngEx32(e, w->aEx[l->ent], w->aPos[l->ent]))!=ex ){
      s->nDiff++;
    }
  }
  if( pParent ) pParent->child += d;
}

/* The exact end of the event on top of st. */
static inline __attribute__((always_inline)) int64_t exactTopEnd(const Engine *e, int byPos, const ExactStack *st){
  const SEv *t = exactEv(e, byPos, st->a[st->n-1].k);
  return t->ts + EVDUR(e, t);
}

/* Sweep the order entries j0 to j1 - 1 of track tr (entry j: position
** tr->iFirst + j, or aIdx[j] when aIdx is not 0) onto *st, §2's rules on
** exact ps: an event pops the open ones it starts at or after the end
** of, then those it ends after.  *pCur: exactEntry's cursor.  With aRoot,
** the keys of the events pushed onto an empty stack go there in order
** (*pnRoot of them).  SQLITE_OK or SQLITE_NOMEM (the stack's growth). */
static int exactWalk(const Engine *e, const int8_t *aKeyCat, const STrack *tr, const ExactTrk *w,
                     int byPos, const int32_t *aIdx, int64_t j0, int64_t j1, ExactStack *st,
                     int64_t *pCur, ExactSum *s, int32_t *aRoot, int64_t *pnRoot){
  int64_t j;
  for(j=j0; j<j1; j++){
    int32_t k = aIdx ? aIdx[j] : (int32_t)(tr->iFirst + j);
    const SEv *r;
    int64_t ts, end;
    if( aIdx==0 ) ORD_PREFETCH(e, k, tr->iFirst+tr->nEv);
    r = exactEv(e, byPos, k);
    ts = r->ts; end = r->ts + EVDUR(e, r);
    while( st->n>0 && ts>=exactTopEnd(e, byPos, st) ){
      st->n--;
      exactFin(e, aKeyCat, w, byPos, &st->a[st->n], st->n>0 ? &st->a[st->n-1] : 0, s);
    }
    while( st->n>0 && end>exactTopEnd(e, byPos, st) ){
      st->n--;
      exactFin(e, aKeyCat, w, byPos, &st->a[st->n], st->n>0 ? &st->a[st->n-1] : 0, s);
    }
    if( st->n>=st->nAlloc ){
      /* at most as deep as the track is long (no unused half past it) */
      int64_t nNew = st->nAlloc ? st->nAlloc*2 : 64;
      ExactLevel *aNew;
      if( nNew>tr->nEv ) nNew = tr->nEv;
      if( nNew<=st->n ) nNew = st->n+1;
      aNew = sqlite3_realloc64(st->a, sizeof(ExactLevel)*(sqlite3_uint64)nNew);
      if( aNew==0 ) return SQLITE_NOMEM;
      st->a = aNew;
      st->nAlloc = nNew;
    }
    if( aRoot && st->n==0 ) aRoot[(*pnRoot)++] = k;
    st->a[st->n].k = k;
    st->a[st->n].ent = (int32_t)exactEntry(w, k, pCur);
    st->a[st->n].child = 0;
    st->n++;
  }
  return SQLITE_OK;
}

/* Finish every level still on *st (the track's end). */
static void exactClose(const Engine *e, const int8_t *aKeyCat, const ExactTrk *w, int byPos,
                       ExactStack *st, ExactSum *s){
  while( st->n>0 ){
    st->n--;
    exactFin(e, aKeyCat, w, byPos, &st->a[st->n], st->n>0 ? &st->a[st->n-1] : 0, s);
  }
}

/* Is order entry j of track tr (a processing position) before entry j-1
** on exact times? */
static int exactOutOfOrder(const Engine *e, const STrack *tr, int64_t j){
  return profsumEngExactLess(e, ORD(e, tr->iFirst+j), ORD(e, tr->iFirst+j-1));
}

/* The check of one track (not a Steps one) into *s.  Its events are
** walked as processing positions, which are most often already in the
** exact order (then read in place); otherwise brought into it by an
** insertion sort (the two orders differ only at near ties), so that the
** kept exclusive times, which come by position, are found as the events
** open; when the insertion sort would move too much, the positions become
** event indices, sorted in full, and the kept times are sorted by event
** index to match.  aIdx: room for the track's events, aOf for its kept
** entries; st: an empty stack.  SQLITE_OK or SQLITE_NOMEM. */
static int exactTrack(Engine *e, const int8_t *aKeyCat, const STrack *tr, int32_t *aIdx,
                      ExclOf *aOf, ExactStack *st, ExactSum *s){
  ExactTrk w;
  int64_t j, jSorted, nMove = 0, nCap = 16*tr->nEv + 1024, cur = 0, nSeen0 = s->nSeen;
  int byPos = 1, bIdent = 1, rc;
  trackEntries(e, tr, &w);
  /* the positions in order as long as they are (most tracks: then the
  ** walk reads them without aIdx); from the first that is not, an
  ** insertion sort, unless it moves too much */
  for(jSorted=1; jSorted<tr->nEv; jSorted++){
    ORD_PREFETCH(e, tr->iFirst+jSorted, tr->iFirst+tr->nEv);
    if( exactOutOfOrder(e, tr, jSorted) ) break;
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
    /* by event index from here: the positions' events sorted in full, the
    ** kept times, by event index too, sorted to match */
    for(j=0; j<tr->nEv; j++) aIdx[j] = ORD(e, aIdx[j]);
    profsumEngSortEvIdx(e, aIdx, tr->nEv, 2, profsumEngSortDepth(tr->nEv));
    for(j=0; j<w.nOf; j++){
      aOf[j].k = ORD(e, w.aPos[j]);
      aOf[j].ex = profsumEngEx32(e, w.aEx[j], w.aPos[j]);
    }
    for(j=1; j<w.nOf && aOf[j-1].k<=aOf[j].k; j++){}
    if( j<w.nOf ) qsort(aOf, (size_t)w.nOf, sizeof(ExclOf), cmpExclOf);
    w.aKey = aOf;
    byPos = 0;
  }
  rc = exactWalk(e, aKeyCat, tr, &w, byPos, bIdent ? 0 : aIdx, 0, tr->nEv, st, &cur, s, 0, 0);
  if( rc ) return rc;
  exactClose(e, aKeyCat, &w, byPos, st, s);
  /* an event with a child in the summary's nesting only: its exclusive
  ** time there is below its dur, which is the exact one */
  s->nDiff += w.nOf - (s->nSeen - nSeen0);
  return SQLITE_OK;
}

/* The check of tracks t0 to t1 - 1 (Steps tracks skipped) into *s.
** Memory: 4 bytes per event of the largest track not in order (its
** positions), 16 per event of it that has a child (its kept time, by
** event index) when sorted in full, and 16 bytes per level of the
** nesting.  SQLITE_OK or SQLITE_NOMEM. */
static int exactTracks(Engine *e, const int8_t *aKeyCat, int32_t t0, int32_t t1, ExactSum *s){
  int64_t nMax = 0, nMaxOf = 0;
  int32_t t, *aIdx;
  ExclOf *aOf;
  ExactStack st;
  int rc = SQLITE_OK;
  for(t=t0; t<t1; t++){
    const STrack *tr = &e->aTrk[t];
    ExactTrk w;
    if( tr->isSteps ) continue;
    if( tr->nEv>nMax ) nMax = tr->nEv;
    trackEntries(e, tr, &w);
    if( w.nOf>nMaxOf ) nMaxOf = w.nOf;
  }
  /* (aIdx and aOf are written only for a track whose exact order is not
  ** its processing order: their pages are not touched otherwise) */
  aIdx = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nMax ? nMax : 1));
  aOf = sqlite3_malloc64(sizeof(ExclOf)*(sqlite3_uint64)(nMaxOf ? nMaxOf : 1));
  memset(&st, 0, sizeof(st));
  if( !aIdx || !aOf ) rc = SQLITE_NOMEM;
  for(t=t0; t<t1 && rc==SQLITE_OK; t++){
    if( !e->aTrk[t].isSteps ) rc = exactTrack(e, aKeyCat, &e->aTrk[t], aIdx, aOf, &st, s);
  }
  sqlite3_free(aIdx); sqlite3_free(aOf); sqlite3_free(st.a);
  return rc;
}

/* One piece of the check: tracks t0 to t1 - 1, or (isSlice) the order
** entries j0 to j1 - 1 of track t0.  A slice is swept from an empty
** stack: it keeps the keys of the events it pushed onto an empty stack
** (aRoot: in one sweep of the track, those are pushed onto what the
** slices before left open) and the levels still open at its end (res,
** with their children's durations so far), for exactJoinSlices; when its
** entries are not in exact order (unsorted), it stops, and the track is
** checked whole. */
#define EXACT_PIECES 8
typedef struct ExactJob {
  EngSide side;
  ExactCheck *pCheck;
  int32_t t0, t1;
  int isSlice;
  int64_t j0, j1;
  ExactSum sum;
  int unsorted;
  int32_t *aRoot; int64_t nRoot;
  ExactStack res;
  int rc;
} ExactJob;
struct ExactCheck {
  Engine *e;
  const int8_t *aKeyCat;
  ExactJob aJob[EXACT_PIECES];
  int nJob;
};

/* A slice's sweep (see ExactJob). */
static int exactSlice(ExactJob *x){
  Engine *e = x->pCheck->e;
  const STrack *tr = &e->aTrk[x->t0];
  ExactTrk w;
  int64_t j, cur;
  for(j=x->j0>0 ? x->j0 : 1; j<x->j1; j++){
    ORD_PREFETCH(e, tr->iFirst+j, tr->iFirst+x->j1);
    if( exactOutOfOrder(e, tr, j) ){ x->unsorted = 1; return SQLITE_OK; }
  }
  trackEntries(e, tr, &w);
  cur = w.nOf>0 ? profsumEngEntryAtOrAfter(w.aPos, w.nOf, tr->iFirst + x->j0) : 0;
  x->aRoot = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(x->j1 - x->j0 + 1));
  if( x->aRoot==0 ) return SQLITE_NOMEM;
  return exactWalk(e, x->pCheck->aKeyCat, tr, &w, 1, 0, x->j0, x->j1, &x->res, &cur, &x->sum,
                   x->aRoot, &x->nRoot);
}

/* The job's thread (or the caller's, for a piece not taken). */
static void *exactJobMain(void *pArg){
  ExactJob *x = (ExactJob*)pArg;
  if( x->isSlice ) x->rc = exactSlice(x);
  else x->rc = exactTracks(x->pCheck->e, x->pCheck->aKeyCat, x->t0, x->t1, &x->sum);
  return 0;
}

/* The slices aJob[i0] to aJob[i1 - 1] of one track, done, joined into *s
** as one sweep of the track: a stack G of the levels the slices before
** left open; each event a slice pushed onto its empty stack finishes the
** levels of G it ends after (it starts after the slice's first event,
** which is after every open level's start, so §2's two rules come to
** that one: its dur is above 0), then counts as a child of G's top; then
** the levels the slice left open go onto G (the first of them is the last
** such event: nothing after it emptied the slice's stack).  What is on G at the end
** finishes at the track's end.  A slice that found its entries out of
** exact order: the track checked whole instead.  SQLITE_OK or
** SQLITE_NOMEM. */
static int exactJoinSlices(ExactCheck *c, int i0, int i1, ExactSum *s){
  Engine *e = c->e;
  const STrack *tr = &e->aTrk[c->aJob[i0].t0];
  ExactTrk w;
  ExactStack g;
  ExactSum t;
  int i, rc = SQLITE_OK;
  for(i=i0; i<i1; i++) if( c->aJob[i].unsorted ) break;
  if( i<i1 ) return exactTracks(e, c->aKeyCat, c->aJob[i0].t0, c->aJob[i0].t0+1, s);
  memset(&t, 0, sizeof(t));
  memset(&g, 0, sizeof(g));
  trackEntries(e, tr, &w);
  for(i=i0; i<i1 && rc==SQLITE_OK; i++){
    ExactJob *x = &c->aJob[i];
    int64_t r;
    int p;
    for(r=0; r<x->nRoot; r++){
      const SEv *ev = EV(e, ORD(e, x->aRoot[r]));
      int64_t d = EVDUR(e, ev), end = ev->ts + d;
      while( g.n>0 && end>exactTopEnd(e, 1, &g) ){
        g.n--;
        exactFin(e, c->aKeyCat, &w, 1, &g.a[g.n], g.n>0 ? &g.a[g.n-1] : 0, &t);
      }
      /* (the last is the bottom of the levels left open: its dur goes to
      ** its parent when it finishes, below) */
      if( g.n>0 && r<x->nRoot-1 ) g.a[g.n-1].child += d;
    }
    if( x->res.n>0 ){
      if( g.n + x->res.n > g.nAlloc ){
        ExactLevel *aNew = sqlite3_realloc64(g.a, sizeof(ExactLevel)*(sqlite3_uint64)(g.n + x->res.n));
        if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
        g.a = aNew;
        g.nAlloc = g.n + x->res.n;
      }
      memcpy(&g.a[g.n], x->res.a, sizeof(ExactLevel)*(size_t)x->res.n);
      g.n += x->res.n;
    }
    for(p=0; p<5; p++) t.aExact[p] += x->sum.aExact[p];
    t.nDiff += x->sum.nDiff;
    t.nSeen += x->sum.nSeen;
  }
  if( rc==SQLITE_OK ){
    exactClose(e, c->aKeyCat, &w, 1, &g, &t);
    for(i=0; i<5; i++) s->aExact[i] += t.aExact[i];
    s->nDiff += t.nDiff + (w.nOf - t.nSeen);
  }
  sqlite3_free(g.a);
  return rc;
}

/* Cut the check into pieces (c->aJob, c->nJob): ranges of tracks of about
** equal events (profsumEngTrackPieces, Steps tracks not counted) or, when
** one track (not a Steps one) holds half the events or more and at least
** EXACT_SLICE_MIN, the tracks before it as one piece, that track in
** slices of equal entries, the tracks after it as one piece. */
#ifdef PROFSUM_EXACT_SLICE_MIN
# define EXACT_SLICE_MIN PROFSUM_EXACT_SLICE_MIN
#else
# define EXACT_SLICE_MIN 262144
#endif
static void exactSplit(ExactCheck *c){
  Engine *e = c->e;
  int64_t nAll = 0, nBefore = 0, nAfter = 0;
  int32_t t, tBig = -1, aEnd[EXACT_PIECES];
  int i, n, nSlice;
  for(t=0; t<e->nTrk; t++){
    const STrack *tr = &e->aTrk[t];
    if( tr->isSteps ) continue;
    nAll += tr->nEv;
    if( tBig<0 || tr->nEv>e->aTrk[tBig].nEv ) tBig = t;
  }
  if( tBig<0 || e->aTrk[tBig].nEv<EXACT_SLICE_MIN || e->aTrk[tBig].nEv*2<nAll ){
    n = profsumEngTrackPieces(e, EXACT_PIECES, 1, aEnd);
    for(i=0; i<n; i++){
      c->aJob[i].t0 = i ? aEnd[i-1] : 0;
      c->aJob[i].t1 = aEnd[i];
    }
    c->nJob = n;
    return;
  }
  for(t=0; t<e->nTrk; t++){
    if( e->aTrk[t].isSteps ) continue;
    if( t<tBig ) nBefore += e->aTrk[t].nEv;
    if( t>tBig ) nAfter += e->aTrk[t].nEv;
  }
  n = 0;
  if( nBefore>0 ){ c->aJob[n].t0 = 0; c->aJob[n].t1 = tBig; n++; }
  nSlice = EXACT_PIECES - n - (nAfter>0);
  for(i=0; i<nSlice; i++){
    ExactJob *x = &c->aJob[n++];
    x->isSlice = 1;
    x->t0 = tBig; x->t1 = tBig+1;
    x->j0 = e->aTrk[tBig].nEv*i/nSlice;
    x->j1 = e->aTrk[tBig].nEv*(i+1)/nSlice;
  }
  if( nAfter>0 ){ c->aJob[n].t0 = tBig+1; c->aJob[n].t1 = e->nTrk; n++; }
  c->nJob = n;
}

/* See engine_int.h. */
int profsumEngExactStart(Engine *e, const int8_t *aKeyCat, ExactCheck **pp){
  ExactCheck *c = sqlite3_malloc64(sizeof(ExactCheck));
  int i;
  *pp = c;
  if( c==0 ) return SQLITE_NOMEM;
  memset(c, 0, sizeof(*c));
  c->e = e;
  c->aKeyCat = aKeyCat;
  exactSplit(c);
  for(i=0; i<c->nJob; i++){
    c->aJob[i].pCheck = c;
    profsumEngSideStart(e, &c->aJob[i].side, ENG_SIDE_RANK_PIECE, exactJobMain, &c->aJob[i]);
  }
  return SQLITE_OK;
}

/* See engine_int.h. */
int profsumEngExactFinish(ExactCheck *c, profsum_ps aExact[5], int64_t *pnDiff){
  ExactSum s;
  int i, p, rc = SQLITE_OK;
  memset(&s, 0, sizeof(s));
  /* joined from the last: those the worker has not taken run here */
  for(i=c->nJob-1; i>=0; i--){
    if( !profsumEngSideJoin(&c->aJob[i].side) ) exactJobMain(&c->aJob[i]);
  }
  for(i=0; i<c->nJob && rc==SQLITE_OK; i++){
    ExactJob *x = &c->aJob[i];
    if( (rc = x->rc) ) break;
    if( x->isSlice ){
      int i1 = i;
      while( i1<c->nJob && c->aJob[i1].isSlice ){
        if( (rc = c->aJob[i1].rc) ) break;
        i1++;
      }
      if( rc==SQLITE_OK ) rc = exactJoinSlices(c, i, i1, &s);
      i = i1 - 1;
    }else{
      for(p=0; p<5; p++) s.aExact[p] += x->sum.aExact[p];
      s.nDiff += x->sum.nDiff;
    }
  }
  memcpy(aExact, s.aExact, sizeof(s.aExact));
  *pnDiff = s.nDiff;
  return rc;
}

/* See engine_int.h. */
void profsumEngExactFree(ExactCheck *c){
  int i;
  if( c==0 ) return;
  for(i=0; i<c->nJob; i++){
    profsumEngSideJoin(&c->aJob[i].side);
    sqlite3_free(c->aJob[i].aRoot);
    sqlite3_free(c->aJob[i].res.a);
  }
  sqlite3_free(c);
}
