/*
** engine_steps.c — stage A's step spans: each event that makes a step
** (summary §4.3: an event of a device's Steps line whose name is a step
** number, else, when there is none, a host event named 'train' with
** args.step_num) written to profsum_agg_step_span with its place in time,
** so that views and the import's other tables can cut time by step.  The
** spans are found first and kept in memory (profsumEngStepSpansKeep),
** where the wall cover (engine_wall.c) and the insights
** (profsumEngineStepSpans) take them; the rows are written from there.
*/
#include "profsum_int.h"
#include "pytext.h"
#include "engine_int.h"
#include "rowbuf.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "growarray.h"

#include <string.h>

/* 1 when event k of track t makes a step of the kind asked (gpu 0: a
** Steps line's event, named by a number; gpu 1: a host 'train' event with
** a step_num), with *pStep set. */
static int stepOfEvent(Engine *e, const STrack *t, int64_t k, int gpu, int64_t *pStep){
  const SEv *r = EV(e, k);
  const EvKey *q = KEY(e, r);
  const char *zName = SP_STR(&e->pool, q->name);
  int nName = SP_LEN(&e->pool, q->name);
  if( !gpu ){
    return t->isDevice && t->isSteps && profsumPyInt(zName, nName, pStep)==0;
  }
  return t->isHost && nName==5 && memcmp(zName, "train", 5)==0 && profsumEngStepOf(e, k, pStep);
}

/* Keep the span of event record r (step, track t) in e->aSpan.
** SQLITE_OK or SQLITE_NOMEM. */
static int keepSpan(Engine *e, int64_t step, const STrack *t, const SEv *r){
  EngSpan *sp, *aNew = profsumGrowArray(e->aSpan, e->nSpan, &e->nAllocSpan, sizeof(EngSpan), 64);
  if( aNew==0 ) return SQLITE_NOMEM;
  e->aSpan = aNew;
  sp = &e->aSpan[e->nSpan++];
  sp->step = step;
  sp->pid = t->pid;
  sp->ts = r->ts;
  sp->dur = EVDUR(e, r);
  sp->startUs = profsumPsToMicros(e->origin + r->ts);
  sp->proc = t->proc;
  return SQLITE_OK;
}

/* Keep the step spans of one kind (gpu 0 or 1), track by track in
** processing order.  For the host's 'train' events, only the tracks
** with a key of that name are walked (aTrain, one flag per track, from
** the keys: a host track of millions of other events has none to give;
** without memory for the flags, every host track is walked). */
static int keepSpans(Engine *e, int gpu){
  int32_t it;
  int rc = SQLITE_OK;
  unsigned char *aTrain = 0;
  if( gpu && e->nTrk>0 ){
    aTrain = sqlite3_malloc64((sqlite3_uint64)e->nTrk);
    if( aTrain ){
      int32_t k;
      memset(aTrain, 0, (size_t)e->nTrk);
      for(k=0; k<e->nKey; k++){
        const EvKey *q = &e->aKey[k];
        if( SP_LEN(&e->pool, q->name)==5 && memcmp(SP_STR(&e->pool, q->name), "train", 5)==0 ){
          aTrain[q->trk] = 1;
        }
      }
    }
  }
  for(it=0; rc==SQLITE_OK && it<e->nTrk; it++){
    const STrack *t = &e->aTrk[it];
    int64_t j;
    if( gpu ? !t->isHost : !(t->isDevice && t->isSteps) ) continue;
    if( aTrain && !aTrain[it] ) continue;
    for(j=0; rc==SQLITE_OK && j<t->nEv; j++){
      int64_t k = ORD(e, t->iFirst+j), step;
      if( stepOfEvent(e, t, k, gpu, &step) ) rc = keepSpan(e, step, t, EV(e, k));
    }
  }
  sqlite3_free(aTrain);
  return rc;
}

/* See engine_int.h. */
int profsumEngStepSpansKeep(Engine *e){
  int rc;
  int64_t nDev;
  e->nSpan = 0;                 /* a retried write keeps only its own */
  e->nHostSpan = 0;
  rc = keepSpans(e, 0);
  nDev = e->nSpan;
  /* the host's spans: the steps when no device has a Steps line, else
  ** kept after the devices' (not rows) for the devices without one */
  if( rc==SQLITE_OK ) rc = keepSpans(e, 1);
  if( rc==SQLITE_OK && nDev>0 ){
    e->nHostSpan = e->nSpan - nDev;
    e->nSpan = nDev;
  }
  if( rc ){ e->nSpan = 0; e->nHostSpan = 0; }
  return rc;
}

/* See engine_int.h. */
int profsumEngStepSpans(Engine *e){
  ProfsumRowBuf b;
  int64_t i;
  int rc = profsumRowBufInit(&b, e->db, e->zSchema, "profsum_agg_step_span",
                             "trace_id, step, device, pid, start_us, end_us, start_ps, dur_ps", 8);
  for(i=0; rc==SQLITE_OK && i<e->nSpan; i++){
    const EngSpan *sp = &e->aSpan[i];
    profsumRowBufInt(&b, e->traceId);
    profsumRowBufInt(&b, sp->step);
    profsumEngRowStrId(e, &b, sp->proc);
    profsumRowBufInt(&b, sp->pid);
    profsumRowBufDouble(&b, sp->startUs);
    profsumRowBufDouble(&b, profsumPsToMicros(e->origin + sp->ts + sp->dur));
    profsumRowBufInt(&b, sp->ts);
    profsumRowBufInt(&b, sp->dur);
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  profsumRowBufFree(&b);
  return profsumEngRowsErr(e, rc);
}

/* Span i's fields (see profsumEngineStepSpans; i >= e->nSpan: a host
** span kept beside the devices' steps). */
static void spanOut(const Engine *e, int64_t i, ProfsumStepSpan *o){
  const EngSpan *sp = &e->aSpan[i];
  o->step = sp->step;
  o->zDev = sp->proc>=0 ? SP_STR(&e->pool, sp->proc) : 0;
  o->nDev = sp->proc>=0 ? SP_LEN(&e->pool, sp->proc) : 0;
  o->start = e->origin + sp->ts;
  o->end = o->start + sp->dur;
  o->hostOnly = i>=e->nSpan;
}

/* See summary_engine.h. */
int profsumEngineStepSpans(ProfsumEngine *e, ProfsumStepSpan **paSpan, int64_t *pnSpan){
  ProfsumStepSpan *a;
  int64_t i;
  int64_t n = e->nSpan + e->nHostSpan;
  *paSpan = 0; *pnSpan = 0;
  if( n==0 ) return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(ProfsumStepSpan)*(sqlite3_uint64)n);
  if( a==0 ) return SQLITE_NOMEM;
  for(i=0; i<n; i++) spanOut(e, i, &a[i]);
  *paSpan = a; *pnSpan = n;
  return SQLITE_OK;
}
