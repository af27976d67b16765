/*
** engine_fast.h — inline forms of engine_order.c's float decisions for
** the walks that stay within one track (the §2 sweep, the sorted check,
** the gap order): the track's tolerance is looked up once per track
** instead of once per comparison, the exact picoseconds decide in place
** when they are far enough apart, and an XPlane line's doubles are made
** from its STrack without going through the event's key.  Every answer is
** profsumEngCmpPoint's (and profsumEngEvFloat's) for the same events.
** Included by the engine_*.c files after engine_int.h.
*/
#ifndef PROFSUM_ENGINE_FAST_H
#define PROFSUM_ENGINE_FAST_H

#include "engine_int.h"

/* The reference's double of the start of record r of XPlane line t:
** double(timestamp_ns)/1000 + double(offset_ps)/1e6 (engine_order.c's
** xpTsOf, for a record whose track is known). */
static inline double profsumEngXpTs(const STrack *t, const SEv *r){
  int64_t off = (int64_t)(t->xpBase + r->ts);
  return t->xpTsUs + (double)off / 1e6;
}

/* Exact differences of two points of track t larger than this many ps
** order as the reference's doubles do (INT64_MAX: none is known to). */
static inline int64_t profsumEngTrackTol(const Engine *e, const STrack *t){
  if( !e->isXPlane ) return e->tolPs;
  return t->xpTolPs>0 ? t->xpTolPs : INT64_MAX;
}

/* profsumEngCmpPointN(e, ia, bEndA, ib, bEndB, pFlip) for two events of
** track t, tol = profsumEngTrackTol(e, t). */
static inline int profsumEngCmpInN(Engine *e, const STrack *t, int64_t tol,
                                   int32_t ia, int bEndA, int32_t ib, int bEndB, int64_t *pFlip){
  const SEv *a = EV(e, ia), *b = EV(e, ib);
  int64_t da = bEndA ? EVDUR(e, a) : 0, db = bEndB ? EVDUR(e, b) : 0;
  int64_t d = (a->ts + da) - (b->ts + db);
  if( d>tol ) return 1;
  if( d<-tol ) return -1;
  if( e->isXPlane ){
    /* the doubles made from the line's timestamp, as profsumEngCmpPoint */
    double fa = profsumEngXpTs(t, a), fb = profsumEngXpTs(t, b);
    int c;
    if( bEndA ) fa += (double)da / 1e6;
    if( bEndB ) fb += (double)db / 1e6;
    c = (fa>fb) - (fa<fb);
    if( c!=(d>0) - (d<0) ) __atomic_fetch_add(pFlip, 1, __ATOMIC_RELAXED);   /* (orderTracks) */
    return c;
  }
  return profsumEngCmpPointN(e, ia, bEndA, ib, bEndB, pFlip);
}

/* profsumEngCmpPoint(e, ia, bEndA, ib, bEndB) for two events of track t,
** tol = profsumEngTrackTol(e, t). */
static inline int profsumEngCmpIn(Engine *e, const STrack *t, int64_t tol,
                                  int32_t ia, int bEndA, int32_t ib, int bEndB){
  return profsumEngCmpInN(e, t, tol, ia, bEndA, ib, bEndB, &e->nFlip);
}

/* profsumEngEvFloat for an event i of track t, inline for an XPlane. */
static inline void profsumEngEvFloatIn(Engine *e, const STrack *t, int32_t i,
                                       double *pTs, double *pEnd){
  if( e->isXPlane ){
    const SEv *r = EV(e, i);
    double ts = profsumEngXpTs(t, r);
    *pTs = ts;
    *pEnd = ts + (double)EVDUR(e, r) / 1e6;
    return;
  }
  profsumEngEvFloat(e, i, pTs, pEnd);
}

/* profsumEngEvDurFloat, inline for an XPlane. */
static inline double profsumEngEvDurFloatIn(Engine *e, int64_t i){
  if( e->isXPlane ) return (double)EVDUR(e, EV(e, i)) / 1e6;
  return profsumEngEvDurFloat(e, i);
}

/* profsumEngExclRefAt, inline: the exclusive time in the reference's
** doubles of the event at processing position pos (dDur: its dur's
** double), *pCur the walk's cursor (positions asked in increasing order). */
static inline double profsumEngExclRefIn(const Engine *e, int64_t pos, int64_t *pCur, double dDur){
  int64_t c = *pCur;
  while( c<e->nXr && e->aXrPos[c]<pos ) c++;
  *pCur = c;
  return (c<e->nXr && e->aXrPos[c]==pos) ? e->aXrVal[c] : dDur;
}

#endif /* PROFSUM_ENGINE_FAST_H */
