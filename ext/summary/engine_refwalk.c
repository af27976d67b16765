/*
** engine_refwalk.c — the per-track breakdown as the reference's doubles
** add it (§4.4, its era-C builder): each track in processing order, its
** events in §2 order in a stack on their doubles; an event's exclusive
** time, max(0, dur − the durs of its children), is added to its category
** when it ends (the stack pops it), not on a Steps thread.  An XPlane line
** that the reference aggregates (summary §6.1: all but the device-op
** lines of device planes) adds its five line totals at its end, in
** category order.  The five sums are the document's breakdown and the
** candidates' cuts (engine_aggregate.c, aggWriteBreakdown).
**
** The walk is one running sum over every track in processing order (a
** double sum: no other order gives the same bits), made in two parts on
** the side worker.  A device-op track reads its events' exclusive times
** from the ordering's §2 sweep (aXrVal); the tracks before the first such
** track read nothing of the sweep, so the first part walks them as soon
** as the tracks are ordered, beside the sweep (profsumEngRefBegin); the
** second part goes on from its sums once the sweep is over
** (profsumEngRefRest).  An XPlane's lines are most often swept as they
** are read: then the first part is the whole walk.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "engine_fast.h"

#include <string.h>

/* The walk's stack of open events, in blocks that are never moved (a
** line of events each inside the last is as deep as it is long: no
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
  int64_t lo = profsumEngEntryAtOrAfter(e->aXrPos, e->nXr, j);
  return (lo<e->nXr && e->aXrPos[lo]==j) ? lo : -1;
}

/* The walk: its two parts (positions [0, jMid) and [jMid, nEv), each
** starting and ending at a track's start), the running sums, each part's
** result, and a stop flag for an engine freed before its end. */
struct EngRefWalk {
  Engine *e;
  EngSide side1, side2;
  int64_t jMid;
  double aSum[5];
  int rc1, rc2;
  int bStop;                  /* (atomic) the walk is not wanted any more */
};

/* Walk the tracks of positions jFrom to jTo - 1 (jFrom a track's start,
** jTo one or the end) adding to w->aSum.  SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ABORT once bStop is set. */
static int refWalk(EngRefWalk *w, int64_t jFrom, int64_t jTo){
  Engine *e = w->e;
  const int8_t *aKeyCat = e->aKeyCat;
  double *aSum = w->aSum;
  RefStk stk = {0, 0, 0, 0, 0};
  int64_t j;
  double aLine[5] = {0,0,0,0,0};
  double topEnd = 0.0, topDur = 0.0;   /* the top entry's doubles, and its */
  int topCat = 0;                      /* category (stk.n > 0) */
  RefNear aNear[REF_NEAR];             /* the same for the first levels */
  int32_t trk = -1;
  int lineAgg = 0, steps = 0, devOp = 0, c, rc = SQLITE_OK;
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
    if( !steps ){ if( lineAgg ) aLine[topCat] += ex_; else aSum[topCat] += ex_; } \
    stk.n--; \
    if( stk.n>0 ){ \
      if( !devOp ) REF_CHILD(&stk, stk.n-1) += topDur; \
      if( stk.n<=REF_NEAR ){ \
        topEnd = aNear[stk.n-1].end; topDur = aNear[stk.n-1].dur; topCat = aNear[stk.n-1].cat; \
      }else{ \
        int32_t vp_ = REF_POS(&stk, stk.n-1); \
        int32_t kp_ = ORD(e, vp_<0 ? -1-(int64_t)vp_ : (int64_t)vp_); \
        refDoubles(e, &e->aTrk[trk], kp_, &d_, &topEnd, &topDur); \
        topCat = aKeyCat[EV(e, kp_)->key]; \
      } \
    } \
  }while(0)
  for(j=jFrom; j<=jTo; j++){
    int64_t k = j<jTo ? ORD(e, j) : -1;
    const SEv *r = k>=0 ? EV(e, k) : 0;
    const EvKey *q = r ? KEY(e, r) : 0;
    double ts, end, dur;
    if( q==0 || q->trk!=trk ){
      /* the track ends (a Steps line's totals stay 0) */
      while( stk.n>0 ) REF_FIN();
      if( lineAgg ) for(c=0; c<5; c++) aSum[c] += aLine[c];
      if( q==0 ) break;
      if( __atomic_load_n(&w->bStop, __ATOMIC_RELAXED) ){ rc = SQLITE_ABORT; break; }
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
    topEnd = end; topDur = dur; topCat = aKeyCat[r->key];
    if( stk.n<=REF_NEAR ){
      aNear[stk.n-1].end = end; aNear[stk.n-1].dur = dur; aNear[stk.n-1].cat = topCat;
    }
  }
#undef REF_FIN
  refFree(&stk);
  return rc;
}

/* The first part, on the worker or in the thread that needs it. */
static void *refPart1(void *pArg){
  EngRefWalk *w = (EngRefWalk*)pArg;
  w->rc1 = refWalk(w, 0, w->jMid);
  return 0;
}

/* The second part: the first one's sums are needed (it is joined, or run
** here when it never started: only this part joins it, until the free),
** then the rest of the tracks. */
static void *refPart2(void *pArg){
  EngRefWalk *w = (EngRefWalk*)pArg;
  if( !profsumEngSideJoin(&w->side1) ) refPart1(w);
  w->rc2 = w->rc1 ? w->rc1 : refWalk(w, w->jMid, w->e->nEv);
  return 0;
}

/* See engine_int.h. */
int profsumEngRefBegin(Engine *e, int bSwept){
  EngRefWalk *w;
  int32_t t;
  int rc = profsumEngKeyCategories(e);
  if( rc ) return rc;
  if( e->pRefWalk ) return SQLITE_OK;
  w = sqlite3_malloc64(sizeof(*w));
  if( w==0 ) return SQLITE_NOMEM;
  memset(w, 0, sizeof(*w));
  w->e = e;
  w->jMid = e->nEv;
  if( !bSwept ){
    /* up to the first device-op track: what reads the sweep's aXrVal */
    for(t=0; t<e->nTrk; t++){
      const STrack *tr = &e->aTrk[t];
      if( tr->isDevice && tr->isDevOp && tr->nEv>0 ){ w->jMid = tr->iFirst; break; }
    }
  }
  e->pRefWalk = w;
  if( w->jMid>0 ) profsumEngSideStart(e, &w->side1, ENG_SIDE_RANK_EARLY, refPart1, w);
  return SQLITE_OK;
}

/* See engine_int.h. */
int profsumEngRefRest(Engine *e){
  EngRefWalk *w = e->pRefWalk;
  if( w ) profsumEngSideStart(e, &w->side2, ENG_SIDE_RANK_SWEEP, refPart2, w);
  return w && w->side2.running;
}

/* See engine_int.h. */
int profsumEngRefFinish(Engine *e, double aSum[5]){
  EngRefWalk *w = e->pRefWalk;
  int rc = w ? SQLITE_OK : profsumEngRefBegin(e, 1);
  if( rc ) return rc;
  w = e->pRefWalk;
  if( !profsumEngSideJoin(&w->side2) ) refPart2(w);
  memcpy(aSum, w->aSum, sizeof(w->aSum));
  return w->rc2;
}

/* See engine_int.h. */
void profsumEngRefFree(Engine *e){
  EngRefWalk *w = e->pRefWalk;
  if( w==0 ) return;
  __atomic_store_n(&w->bStop, 1, __ATOMIC_RELAXED);
  profsumEngSideJoin(&w->side2);
  profsumEngSideJoin(&w->side1);
  sqlite3_free(w);
  e->pRefWalk = 0;
}
