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
** double sum: no other order gives the same bits).  It decides the
** nesting on the doubles itself and adds up each open event's children as
** they end, as the §2 sweep does for a device op's exclusive time in
** doubles (aXrVal): the same decisions and the same additions in the same
** order, so it does not wait for the sweep.  It runs on the side worker
** from the moment the tracks are ordered (profsumEngRefBegin), beside the
** sweep, the rest of the import's preparation and the aggregation.
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
** doubling, no copy).  Per entry the event's processing position, 4
** bytes, and the durs of its children added as they end, 8 bytes. */
#define REF_BLK 4096
typedef struct RefStk {
  int32_t **apPos;            /* blocks of positions */
  double **apChild;           /* blocks of children's sums */
  int64_t n, nBlk, nBlkAlloc;
} RefStk;
#define REF_POS(s, i)   ((s)->apPos[(i)/REF_BLK][(i)%REF_BLK])
#define REF_CHILD(s, i) ((s)->apChild[(i)/REF_BLK][(i)%REF_BLK])

/* Push processing position j with no child yet.  SQLITE_OK or
** SQLITE_NOMEM. */
static int refPush(RefStk *s, int64_t j){
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
    s->apPos[b] = sqlite3_malloc64(sizeof(int32_t)*REF_BLK);
    s->apChild[b] = sqlite3_malloc64(sizeof(double)*REF_BLK);
    s->nBlk++;     /* (freed by refFree, made or not) */
    if( s->apPos[b]==0 || s->apChild[b]==0 ) return SQLITE_NOMEM;
  }
  REF_CHILD(s, s->n) = 0.0;
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

/* The walk as a side job: the sums, the result, and a stop flag for an
** engine freed before its end. */
struct EngRefWalk {
  Engine *e;
  EngSide side;
  double aSum[5];
  int rc;
  int bStop;                  /* (atomic) the walk is not wanted any more */
};

/* Walk every track, adding to w->aSum.  SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ABORT once bStop is set. */
static int refWalk(EngRefWalk *w){
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
  int lineAgg = 0, steps = 0, c, rc = SQLITE_OK;
  /* pop the top: its exclusive time to its category, its dur to its
  ** parent's children, the parent's doubles taken from aNear or found
  ** again */
#define REF_FIN() do{ \
    double ex_ = topDur - REF_CHILD(&stk, stk.n-1), d_; \
    if( ex_<0.0 ) ex_ = 0.0; \
    if( !steps ){ if( lineAgg ) aLine[topCat] += ex_; else aSum[topCat] += ex_; } \
    stk.n--; \
    if( stk.n>0 ){ \
      REF_CHILD(&stk, stk.n-1) += topDur; \
      if( stk.n<=REF_NEAR ){ \
        topEnd = aNear[stk.n-1].end; topDur = aNear[stk.n-1].dur; topCat = aNear[stk.n-1].cat; \
      }else{ \
        int32_t kp_ = ORD(e, REF_POS(&stk, stk.n-1)); \
        refDoubles(e, &e->aTrk[trk], kp_, &d_, &topEnd, &topDur); \
        topCat = aKeyCat[EV(e, kp_)->key]; \
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
      if( lineAgg ) for(c=0; c<5; c++) aSum[c] += aLine[c];
      if( q==0 ) break;
      if( __atomic_load_n(&w->bStop, __ATOMIC_RELAXED) ){ rc = SQLITE_ABORT; break; }
      trk = q->trk;
      steps = e->aTrk[trk].isSteps;
      lineAgg = e->isXPlane && !(e->aTrk[trk].isDevice && e->aTrk[trk].isDevOp);
      memset(aLine, 0, sizeof(aLine));
    }
    refDoubles(e, &e->aTrk[trk], (int32_t)k, &ts, &end, &dur);
    while( stk.n>0 && ts>=topEnd ) REF_FIN();
    while( stk.n>0 && end>topEnd ) REF_FIN();
    if( (rc = refPush(&stk, j)) ) break;
    topEnd = end; topDur = dur; topCat = aKeyCat[r->key];
    if( stk.n<=REF_NEAR ){
      aNear[stk.n-1].end = end; aNear[stk.n-1].dur = dur; aNear[stk.n-1].cat = topCat;
    }
  }
#undef REF_FIN
  refFree(&stk);
  return rc;
}

/* The walk's side job (or the thread that needs it, when none ran). */
static void *refMain(void *pArg){
  EngRefWalk *w = (EngRefWalk*)pArg;
  w->rc = refWalk(w);
  return 0;
}

/* See engine_int.h. */
int profsumEngRefBegin(Engine *e){
  EngRefWalk *w;
  int rc = profsumEngKeyCategories(e);
  if( rc ) return rc;
  if( e->pRefWalk ) return SQLITE_OK;
  w = sqlite3_malloc64(sizeof(*w));
  if( w==0 ) return SQLITE_NOMEM;
  memset(w, 0, sizeof(*w));
  w->e = e;
  e->pRefWalk = w;
  profsumEngSideStart(e, &w->side, ENG_SIDE_RANK_EARLY, refMain, w);
  return SQLITE_OK;
}

/* See engine_int.h. */
int profsumEngRefBeside(Engine *e){
  return e->pRefWalk && e->pRefWalk->side.running;
}

/* See engine_int.h. */
int profsumEngRefFinish(Engine *e, double aSum[5]){
  EngRefWalk *w;
  int rc = e->pRefWalk ? SQLITE_OK : profsumEngRefBegin(e);
  if( rc ) return rc;
  w = e->pRefWalk;
  if( !profsumEngSideJoin(&w->side) ) refMain(w);
  memcpy(aSum, w->aSum, sizeof(w->aSum));
  return w->rc;
}

/* See engine_int.h. */
void profsumEngRefFree(Engine *e){
  EngRefWalk *w = e->pRefWalk;
  if( w==0 ) return;
  __atomic_store_n(&w->bStop, 1, __ATOMIC_RELAXED);
  profsumEngSideJoin(&w->side);
  sqlite3_free(w);
  e->pRefWalk = 0;
}
