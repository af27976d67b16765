/*
** engine_nest.c — stage A's §2 stack sweep: each track's events in
** processing order, pushed on a stack and popped as the reference's
** doubles say they end, give every event its nesting and its exclusive
** time (its dur less its children's), and the run_id groups in
** processing order.  After the read the tracks are swept in pieces that
** the side worker shares (profsumEngSweepAll); an XPlane line is swept
** batch by batch as it is read (profsumEngSweepPart, engine_order.c's
** "Ordering each XPlane line as it comes").
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "engine_fast.h"

#include <string.h>

/* What the §2 sweep writes beside the records (sweepTrack): the entries
** of the events that get a child (aXrPos/aXrVal/aXrEx on device-op
** tracks, aParPos/aParEx elsewhere), the run_id groups (aRunPos/aRunId/
** aRunN) and the exclusive times from EX32_BIG ps on (exclBig).  The
** engine's own are moved in for a sweep and back after it
** (sweepOutTake, sweepOutGive); a piece of tracks swept on the side
** worker fills one of its own, appended after (sweepOutAppend). */
typedef struct SweepOut {
  int32_t *aXrPos; double *aXrVal; uint32_t *aXrEx;
  int64_t nXr, nAllocXr;
  int32_t *aParPos; uint32_t *aParEx;
  int64_t nPar, nAllocPar;
  int32_t *aRunPos, *aRunId, *aRunN;
  int64_t nRun, nAllocRun;
  HMap exclBig;
} SweepOut;

/* Exchange the engine's sweep output with *o, field by field: with *o
** zeroed, the engine's moves into it (sweepOutTake); once swept, it moves
** back (sweepOutGive, leaving *o zeroed again). */
static void sweepOutSwap(Engine *e, SweepOut *o){
#define SWAP_(f) do{ char t_[sizeof(o->f)]; \
    _Static_assert(sizeof(o->f)==sizeof(e->f), "SweepOut mirrors Engine"); memcpy(t_, &o->f, sizeof(t_)); \
    memcpy(&o->f, &e->f, sizeof(t_)); memcpy(&e->f, t_, sizeof(t_)); }while(0)
  SWAP_(aXrPos); SWAP_(aXrVal); SWAP_(aXrEx); SWAP_(nXr); SWAP_(nAllocXr);
  SWAP_(aParPos); SWAP_(aParEx); SWAP_(nPar); SWAP_(nAllocPar);
  SWAP_(aRunPos); SWAP_(aRunId); SWAP_(aRunN); SWAP_(nRun); SWAP_(nAllocRun);
  SWAP_(exclBig);
#undef SWAP_
}
static void sweepOutTake(Engine *e, SweepOut *o){
  memset(o, 0, sizeof(*o));
  sweepOutSwap(e, o);
}
static void sweepOutGive(Engine *e, SweepOut *o){
  sweepOutSwap(e, o);
}

/* Free what *o holds. */
static void sweepOutFree(SweepOut *o){
  sqlite3_free(o->aXrPos); sqlite3_free(o->aXrVal); sqlite3_free(o->aXrEx);
  sqlite3_free(o->aParPos); sqlite3_free(o->aParEx);
  sqlite3_free(o->aRunPos); sqlite3_free(o->aRunId); sqlite3_free(o->aRunN);
  profsumEngHmFree(&o->exclBig);
  memset(o, 0, sizeof(*o));
}

/* The pages of the next SWEEP_PF_N entries (within what is allocated)
** of the sweep's arrays of entries, aXrPos/aXrVal/aXrEx (bXr) or
** aParPos/aParEx, asked for at once (profsumPrefault) when the sweep
** reaches them rather than faulted in page by page as it writes. */
#define SWEEP_PF_N 16384
static void sweepPrefault(SweepOut *o, int bXr){
  int64_t i = bXr ? o->nXr : o->nPar, nAlloc = bXr ? o->nAllocXr : o->nAllocPar;
  size_t n = (size_t)((i+SWEEP_PF_N<nAlloc ? i+SWEEP_PF_N : nAlloc) - i);
  if( bXr ){
    profsumPrefault(o->aXrPos + i, n*sizeof(int32_t));
    profsumPrefault(o->aXrVal + i, n*sizeof(double));
    profsumPrefault(o->aXrEx + i, n*sizeof(uint32_t));
  }else{
    profsumPrefault(o->aParPos + i, n*sizeof(int32_t));
    profsumPrefault(o->aParEx + i, n*sizeof(uint32_t));
  }
}

/* The §2 sweep of a track, which can stop after any event and go on with
** the next (struct NestStk, declared with Engine.early, which keeps one
** across the batches of an XPlane line): per open event its position in
** aOrd, or, once an event of a device-op track has a child, -1 - its
** entry in aXrPos/aXrVal (aStk), and the sum of its children's durs
** (aChild), nAlloc entries each; nStk open events, the top one iTop with
** its exact end topEnd.  Empty between tracks. */
typedef struct NestStk NestStk;

/* Go on with the §2 stack sweep of track tr (its events in processing
** order, positions iFirst + j), from j = jFrom to jTo - 1, then, with
** bClose, finish the events still open (the track's end).  tol: the
** track's tolerance (profsumEngTrackTol, or a bound as valid for the
** events swept so far: every decision is the doubles' either way).
** While an event is open, aChild holds the sum of its children's durs
** (exact), and its aXrVal entry (device ops) the sum of their durs'
** doubles, added as they finish: 12 bytes per level of nesting.  An
** event's run_id goes to aRunPos/aRunId/aRunN when it is pushed (a new
** group when it is not the last group's: at most as many groups as events
** read that have one, e->nRunEv).  An event that gets a child gets an entry then (its
** position is the last pushed: entries come in increasing position): in
** aXrPos/aXrVal/aXrEx on a device-op track (16 bytes), else in
** aParPos/aParEx (8 bytes), and its stack entry says which (-1 - the
** entry), so that its exclusive time goes there when it finishes (exclBig
** from EX32_BIG ps on).  Bounds the arrays grow to: the stack nStkMax
** entries (at least the events swept), aXrPos/aXrVal/aXrEx nXrMax (the
** device-op events swept so far, the track's included), aParPos/aParEx
** the events read.  *pnPushed: the events pushed by this
** call.  SQLITE_OK or SQLITE_NOMEM (then the stack may hold entries the
** caller drops). */
static int sweepTrack(Engine *e, SweepOut *o, const STrack *tr, NestStk *s, int64_t jFrom, int64_t jTo,
                      int bClose, int64_t tol, int64_t nStkMax, int64_t nXrMax, int64_t *pnPushed){
  int64_t j, nStk = s->nStk;
  int32_t *aStk = s->aStk;
  int64_t *aChild = s->aChild;
  int devOp = tr->isDevice && tr->isDevOp;   /* a device-op track */
  int32_t iTop = s->iTop;   /* the event on top of the stack (nStk > 0) */
  int64_t topEnd = s->topEnd;   /* its exact end, ts + dur (nStk > 0) */
  int32_t *aEntPos = devOp ? o->aXrPos : o->aParPos;   /* the entries' positions */
  int anyRun = e->nRunEv>0;   /* some event pushed here may have a run_id */
  int rc = SQLITE_OK;
  *pnPushed = 0;
  if( anyRun && e->aOrd==0 && jFrom<jTo ){
    /* positions are event indices: only the blocks of the events swept */
    int64_t b, b0 = (tr->iFirst + jFrom)>>EV_SHIFT, b1 = (tr->iFirst + jTo - 1)>>EV_SHIFT;
    for(anyRun=0, b=b0; b<=b1 && !anyRun; b++) anyRun = e->aRun[b].aDense!=0 || e->aRun[b].n>0;
  }
#define STK_POS(s) ((s)>=0 ? (int64_t)(s) : (int64_t)aEntPos[-1-(int64_t)(s)])
#define STK_EV(lvl) (ORD(e, STK_POS(aStk[lvl])))
#define FIN() do{ \
    int32_t s_ = aStk[--nStk]; \
    int64_t pos_ = STK_POS(s_); \
    int32_t top_ = ORD(e, pos_); \
    const SEv *x_ = EV(e, top_); \
    int64_t du_ = EVDUR(e, x_); \
    if( s_<0 ){ \
      /* it had a child (else its exclusive time is its dur) */ \
      int64_t ex_ = du_ - aChild[nStk]; \
      uint32_t *pEx_ = devOp ? &o->aXrEx[-1-(int64_t)s_] : &o->aParEx[-1-(int64_t)s_]; \
      if( ex_<0 ) ex_ = 0; \
      if( ex_<(int64_t)EX32_BIG ){ \
        *pEx_ = (uint32_t)ex_; \
      }else{ \
        HEnt *hb_ = profsumEngHmGet(&o->exclBig, pos_, 0, 1, 0); \
        if( hb_==0 ){ rc = SQLITE_NOMEM; }else{ hb_->v1 = ex_; } \
        *pEx_ = EX32_BIG; \
      } \
    } \
    iTop = nStk>0 ? STK_EV(nStk-1) : -1; \
    if( nStk>0 ){ \
      const SEv *t_ = EV(e, iTop); \
      topEnd = t_->ts + EVDUR(e, t_); \
      aChild[nStk-1] += du_; \
    } \
    if( devOp && (nStk>0 || s_<0) ){ \
      double d_ = e->isXPlane ? (double)du_ / 1e6 : profsumEngEvDurFloat(e, top_); \
      if( s_<0 ){ \
        double x2_ = d_ - o->aXrVal[-1-(int64_t)s_]; \
        o->aXrVal[-1-(int64_t)s_] = x2_>0 ? x2_ : 0.0; \
      } \
      /* the parent has its entry: this event was pushed on it */ \
      if( nStk>0 ) o->aXrVal[-1-(int64_t)aStk[nStk-1]] += d_; \
    } \
  }while(0)
  for(j=jFrom; j<jTo && rc==SQLITE_OK; j++){
    int64_t pos = tr->iFirst + j;
    int32_t k = ORD(e, pos);
    SEv *rk = EV(e, k);
    int64_t kTs = rk->ts, kEnd = kTs + EVDUR(e, rk), d;
    ORD_PREFETCH(e, pos, e->nEv);
    /* profsumEngCmpIn(k's start, then its end, with the top's end, kept
    ** in topEnd): beyond the tolerance the exact difference decides, as
    ** it does there; profsumEngCmpIn decides the rest */
    while( nStk>0 && ((d = kTs - topEnd)>tol || (d>=-tol && profsumEngCmpIn(e, tr, tol, k, 0, iTop, 1)>=0)) ) FIN();
    while( nStk>0 && ((d = kEnd - topEnd)>tol || (d>=-tol && profsumEngCmpIn(e, tr, tol, k, 1, iTop, 1)>0)) ) FIN();
    if( rc ) break;
    if( nStk+1>s->nAlloc ){
      int64_t nNew = s->nAlloc ? s->nAlloc*2 : 64;
      if( nNew>nStkMax ) nNew = nStkMax;
      rc = profsumEngGrowNestStack(&s->aStk, &s->aChild, nNew);
      aStk = s->aStk;
      aChild = s->aChild;
      if( rc ) break;
      s->nAlloc = nNew;
    }
    if( devOp && nStk>0 && aStk[nStk-1]>=0 ){
      /* the open event gets its first child (it is the previous
      ** position: entries come in increasing position) */
      if( o->nXr>=o->nAllocXr ){
        void **aa[] = {(void**)&o->aXrPos, (void**)&o->aXrVal, (void**)&o->aXrEx};
        static const size_t aSz[] = {sizeof(int32_t), sizeof(double), sizeof(uint32_t)};
        if( (rc = profsumEngGrowParallel(3, aa, aSz, &o->nAllocXr, o->nXr+1, nXrMax)) ) break;
        aEntPos = o->aXrPos;
      }
      if( (o->nXr & (SWEEP_PF_N-1))==0 ) sweepPrefault(o, 1);
      o->aXrPos[o->nXr] = aStk[nStk-1];
      o->aXrVal[o->nXr] = 0.0;
      o->aXrEx[o->nXr] = 0;
      aStk[nStk-1] = (int32_t)(-1 - o->nXr);
      o->nXr++;
    }else if( nStk>0 && aStk[nStk-1]>=0 ){
      /* the same on another track */
      if( o->nPar>=o->nAllocPar ){
        void **aa[] = {(void**)&o->aParPos, (void**)&o->aParEx};
        static const size_t aSz[] = {sizeof(int32_t), sizeof(uint32_t)};
        if( (rc = profsumEngGrowParallel(2, aa, aSz, &o->nAllocPar, o->nPar+1, e->nEv)) ) break;
        aEntPos = o->aParPos;
      }
      if( (o->nPar & (SWEEP_PF_N-1))==0 ) sweepPrefault(o, 0);
      o->aParPos[o->nPar] = aStk[nStk-1];
      o->aParEx[o->nPar] = 0;
      aStk[nStk-1] = (int32_t)(-1 - o->nPar);
      o->nPar++;
    }
    if( anyRun ){
      int32_t rid = profsumEngRun(e, k, &s->runHint);
      if( rid>=0 && o->nRun>0 && o->aRunId[o->nRun-1]==rid ){
        o->aRunN[o->nRun-1]++;
      }else if( rid>=0 ){
        if( o->nRun>=o->nAllocRun ){
          void **aa[] = {(void**)&o->aRunPos, (void**)&o->aRunId, (void**)&o->aRunN};
          static const size_t aSz[] = {sizeof(int32_t), sizeof(int32_t), sizeof(int32_t)};
          if( (rc = profsumEngGrowParallel(3, aa, aSz, &o->nAllocRun, o->nRun+1, e->nRunEv)) ) break;
        }
        o->aRunPos[o->nRun] = (int32_t)pos;
        o->aRunId[o->nRun] = rid;
        o->aRunN[o->nRun++] = 1;
      }
    }
    aChild[nStk] = 0;
    aStk[nStk++] = (int32_t)pos;
    (*pnPushed)++;
    iTop = k;
    topEnd = kEnd;
  }
  while( bClose && rc==SQLITE_OK && nStk>0 ) FIN();
#undef FIN
#undef STK_EV
#undef STK_POS
  s->nStk = nStk;
  s->iTop = iTop;
  s->topEnd = topEnd;
  return rc;
}

/* Shrink the array *pa of n elements of szElem bytes to n (free it when
** n is 0).  Keeps it as it is when the allocator cannot. */
static void trimArray(void **pa, int64_t n, size_t szElem){
  void *a;
  if( *pa==0 ) return;
  if( n==0 ){ sqlite3_free(*pa); *pa = 0; return; }
  a = sqlite3_realloc64(*pa, szElem*(sqlite3_uint64)n);
  if( a ) *pa = a;
}

/* The arrays the sweep fills, shrunk to what it put in them. */
static void sweepTrim(Engine *e){
  trimArray((void**)&e->aRunPos, e->nRun, sizeof(int32_t));
  trimArray((void**)&e->aRunId, e->nRun, sizeof(int32_t));
  trimArray((void**)&e->aRunN, e->nRun, sizeof(int32_t));
  e->nAllocRun = e->nRun;
  trimArray((void**)&e->aXrPos, e->nXr, sizeof(int32_t));
  trimArray((void**)&e->aXrVal, e->nXr, sizeof(double));
  trimArray((void**)&e->aXrEx, e->nXr, sizeof(uint32_t));
  e->nAllocXr = e->nXr;
  trimArray((void**)&e->aParPos, e->nPar, sizeof(int32_t));
  trimArray((void**)&e->aParEx, e->nPar, sizeof(uint32_t));
  e->nAllocPar = e->nPar;
}

/* Before a sweep of tracks: the entries of the events that get a child,
** aParPos/aParEx of *o (at most nParMax: the events of the tracks that
** are not device ops) and aXrPos/aXrVal/aXrEx (at most nXrMax, the
** device-op events), made as large as those bounds at once when they are
** large (SWEEP_RESERVE_MIN), instead of doubling as the sweep goes: each
** doubling copied the array (a large trace's sweep spent a sixth of its
** time in those copies).  The memory is only reserved: a page counts once
** the sweep writes it (sweepPrefault), and sweepTrim gives back what it
** did not.  SQLITE_OK or SQLITE_NOMEM. */
#define SWEEP_RESERVE_MIN 65536
static int sweepReserve(SweepOut *o, int64_t nParMax, int64_t nXrMax){
  if( nParMax>=SWEEP_RESERVE_MIN && nParMax>o->nAllocPar ){
    void **aa[] = {(void**)&o->aParPos, (void**)&o->aParEx};
    static const size_t aSz[] = {sizeof(int32_t), sizeof(uint32_t)};
    if( profsumEngGrowParallel(2, aa, aSz, &o->nAllocPar, nParMax, nParMax) ) return SQLITE_NOMEM;
  }
  if( nXrMax>=SWEEP_RESERVE_MIN && nXrMax>o->nAllocXr ){
    void **aa[] = {(void**)&o->aXrPos, (void**)&o->aXrVal, (void**)&o->aXrEx};
    static const size_t aSz[] = {sizeof(int32_t), sizeof(double), sizeof(uint32_t)};
    if( profsumEngGrowParallel(3, aa, aSz, &o->nAllocXr, nXrMax, nXrMax) ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* Tracks t0 to t1 - 1 swept in order into *o, with a stack of their own
** (sweepTrack; nMaxTrk: the largest track, nXrMax: the bound of the
** device-op entries).  SQLITE_OK or SQLITE_NOMEM. */
typedef struct SweepPiece {
  EngSide side;
  Engine *e;
  int32_t t0, t1;
  int64_t nMaxTrk, nXrMax;
  SweepOut o;
  int rc;
  int taken;                  /* swept by the caller (profsumEngSideTake) */
} SweepPiece;
static int sweepRange(Engine *e, SweepOut *o, int32_t t0, int32_t t1, int64_t nMaxTrk, int64_t nXrMax){
  NestStk s;
  int64_t nPushed;
  int32_t t;
  int rc = SQLITE_OK;
  memset(&s, 0, sizeof(s));
  for(t=t0; t<t1 && rc==SQLITE_OK; t++){
    STrack *tr = &e->aTrk[t];
    rc = sweepTrack(e, o, tr, &s, 0, tr->nEv, 1, profsumEngTrackTol(e, tr), nMaxTrk, nXrMax, &nPushed);
  }
  sqlite3_free(s.aStk);
  sqlite3_free(s.aChild);
  return rc;
}
static void *sweepPieceMain(void *pArg){
  SweepPiece *p = (SweepPiece*)pArg;
  p->rc = sweepRange(p->e, &p->o, p->t0, p->t1, p->nMaxTrk, p->nXrMax);
  return 0;
}

/* Append nAdd rows to nCol parallel arrays of nHave rows (*aaDst[c],
** elements of aSz[c] bytes, capacity *pnAlloc, grown no further than nMax
** when that bounds them, 0: none): row r of column c from aSrc[c].  The
** pages written are asked for at once.  SQLITE_OK or SQLITE_NOMEM. */
static int appendColumns(int nCol, void **aaDst[], void *const aSrc[], const size_t aSz[],
                         int64_t *pnAlloc, int64_t nHave, int64_t nAdd, int64_t nMax){
  int c;
  if( profsumEngGrowParallel(nCol, aaDst, aSz, pnAlloc, nHave + nAdd, nMax) ) return SQLITE_NOMEM;
  for(c=0; c<nCol; c++){
    char *z = (char*)*aaDst[c] + aSz[c]*(size_t)nHave;
    profsumPrefault(z, aSz[c]*(size_t)nAdd);
    memcpy(z, aSrc[c], aSz[c]*(size_t)nAdd);
  }
  return SQLITE_OK;
}

/* Append b, swept from the track after a's last, to a: the positions are
** the events' own, so the entries go after a's as they are, b's first
** run_id group joins a's last when they hold the same id (as one sweep
** would have counted it), and b's exclusive times from EX32_BIG ps on go
** into a's map.  b is freed.  SQLITE_OK or SQLITE_NOMEM (b freed too). */
static int sweepOutAppend(SweepOut *a, SweepOut *b, int64_t nEv){
  int rc = SQLITE_OK;
  int64_t i, r0 = 0;
  if( b->nXr ){
    void **aa[] = {(void**)&a->aXrPos, (void**)&a->aXrVal, (void**)&a->aXrEx};
    void *const aSrc[] = {b->aXrPos, b->aXrVal, b->aXrEx};
    static const size_t aSz[] = {sizeof(int32_t), sizeof(double), sizeof(uint32_t)};
    rc = appendColumns(3, aa, aSrc, aSz, &a->nAllocXr, a->nXr, b->nXr, 0);
    if( rc==SQLITE_OK ) a->nXr += b->nXr;
  }
  if( rc==SQLITE_OK && b->nPar ){
    void **aa[] = {(void**)&a->aParPos, (void**)&a->aParEx};
    void *const aSrc[] = {b->aParPos, b->aParEx};
    static const size_t aSz[] = {sizeof(int32_t), sizeof(uint32_t)};
    rc = appendColumns(2, aa, aSrc, aSz, &a->nAllocPar, a->nPar, b->nPar, nEv);
    if( rc==SQLITE_OK ) a->nPar += b->nPar;
  }
  if( rc==SQLITE_OK && b->nRun ){
    if( a->nRun>0 && a->aRunId[a->nRun-1]==b->aRunId[0] ){
      a->aRunN[a->nRun-1] += b->aRunN[0];
      r0 = 1;
    }
    if( b->nRun>r0 ){
      void **aa[] = {(void**)&a->aRunPos, (void**)&a->aRunId, (void**)&a->aRunN};
      void *const aSrc[] = {b->aRunPos + r0, b->aRunId + r0, b->aRunN + r0};
      static const size_t aSz[] = {sizeof(int32_t), sizeof(int32_t), sizeof(int32_t)};
      rc = appendColumns(3, aa, aSrc, aSz, &a->nAllocRun, a->nRun, b->nRun - r0, 0);
      if( rc==SQLITE_OK ) a->nRun += b->nRun - r0;
    }
  }
  for(i=0; rc==SQLITE_OK && i<b->exclBig.nSlot; i++){
    const HEnt *x = &b->exclBig.a[i];
    if( x->used ){
      HEnt *y = profsumEngHmGet(&a->exclBig, x->k1, x->k2, 1, 0);
      if( y==0 ) rc = SQLITE_NOMEM;
      else y->v1 = x->v1;
    }
  }
  sweepOutFree(b);
  return rc;
}

/* The bounds of tracks t0 to t1 - 1's entries (sweepReserve): their
** events not on device-op tracks (*pnPar), and on them (*pnXr). */
static void sweepBounds(const Engine *e, int32_t t0, int32_t t1, int64_t *pnPar, int64_t *pnXr){
  int32_t t;
  *pnPar = *pnXr = 0;
  for(t=t0; t<t1; t++){
    const STrack *tr = &e->aTrk[t];
    if( tr->isDevice && tr->isDevOp ) *pnXr += tr->nEv;
    else *pnPar += tr->nEv;
  }
}

/* The §2 sweep of every track, in processing order.  From SWEEP_SPLIT_MIN
** events on, the tracks are cut into up to SWEEP_PIECES pieces of about
** equal events (profsumEngTrackPieces): all but the first are queued on
** the engine's side worker, each sweeping into an output of its own,
** while this thread sweeps the first into the engine's, then sweeps from
** the last those the worker has not taken (profsumEngSideTake), and
** appends each output in order as soon as its piece is done (so that the
** appends overlap the piece the worker is still on).  Each track's sweep reads only its own
** events and writes only its own entries, whose positions come after
** those of every track before it, so the result is one sweep's.  Pieces,
** and not two halves: a device-op event costs the sweep more than
** another, and the worker takes the next piece when it is done.
** SQLITE_OK or SQLITE_NOMEM. */
#ifdef PROFSUM_SWEEP_SPLIT_MIN
# define SWEEP_SPLIT_MIN PROFSUM_SWEEP_SPLIT_MIN
#else
# define SWEEP_SPLIT_MIN 262144
#endif
#define SWEEP_PIECES 6
static int sweepAll(Engine *e, int64_t nMaxTrk, int64_t nXrMax){
  SweepOut o;
  SweepPiece aP[SWEEP_PIECES];
  int32_t aEnd[SWEEP_PIECES];
  int64_t nPar, nXr;
  int rc, rc2, nPiece = 0, i;
  if( e->nEv>=SWEEP_SPLIT_MIN && e->nTrk>1 ) nPiece = profsumEngTrackPieces(e, SWEEP_PIECES, 0, aEnd);
  sweepOutTake(e, &o);
  sweepBounds(e, 0, e->nTrk, &nPar, &nXr);
  if( (rc = sweepReserve(&o, nPar, nXr)) ){
    sweepOutGive(e, &o);
    return rc;
  }
  if( nPiece<2 ){
    rc = sweepRange(e, &o, 0, e->nTrk, nMaxTrk, nXrMax);
    sweepOutGive(e, &o);
    return rc;
  }
  memset(aP, 0, sizeof(aP));
  for(i=1; i<nPiece; i++){
    SweepPiece *b = &aP[i];
    b->e = e; b->t0 = aEnd[i-1]; b->t1 = aEnd[i];
    b->nMaxTrk = nMaxTrk; b->nXrMax = nXrMax;
    sweepBounds(e, b->t0, b->t1, &nPar, &nXr);
    b->rc = sweepReserve(&b->o, nPar, nXr);
    if( b->rc==SQLITE_OK ) profsumEngSideStart(e, &b->side, ENG_SIDE_RANK_PIECE, sweepPieceMain, b);
  }
  rc = sweepRange(e, &o, 0, aEnd[0], nMaxTrk, nXrMax);
  /* the pieces the worker has not taken, swept here from the last; then
  ** each appended in order as soon as it is done, the one the worker is
  ** on waited for after those before it were appended */
  for(i=nPiece-1; i>=1; i--) aP[i].taken = profsumEngSideTake(&aP[i].side);
  for(i=1; i<nPiece; i++){
    SweepPiece *b = &aP[i];
    /* (one never queued, with no worker: swept here) */
    if( !b->taken && !profsumEngSideJoin(&b->side) && b->rc==SQLITE_OK && rc==SQLITE_OK ){
      sweepPieceMain(b);
    }
    if( rc==SQLITE_OK ) rc = b->rc;
    if( rc==SQLITE_OK ){
      rc2 = sweepOutAppend(&o, &b->o, e->nEv);
      if( rc==SQLITE_OK ) rc = rc2;
    }else{
      sweepOutFree(&b->o);
    }
  }
  sweepOutGive(e, &o);
  return rc;
}

/* See engine_int.h. */
int profsumEngSweepPart(Engine *e, const STrack *tr, NestStk *s, int64_t jFrom, int64_t jTo, int bClose,
                        int64_t tol, int64_t nStkMax, int64_t nXrMax, int64_t *pnPushed){
  SweepOut o;
  int rc;
  sweepOutTake(e, &o);
  rc = sweepTrack(e, &o, tr, s, jFrom, jTo, bClose, tol, nStkMax, nXrMax, pnPushed);
  sweepOutGive(e, &o);
  return rc;
}

/* See engine_int.h. */
void profsumEngSweepTrim(Engine *e){
  sweepTrim(e);
}

/* See engine_int.h. */
int profsumEngSweepAll(Engine *e, int64_t nMaxTrk, int64_t nXrMax){
  int rc = sweepAll(e, nMaxTrk, nXrMax);
  if( rc==SQLITE_OK ) sweepTrim(e);
  return rc;
}
