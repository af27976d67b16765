/*
** engine_side.c — the write phase's side jobs: a piece of stage A that
** reads only what nothing writes until it is joined (the ordered records,
** the tracks, tables made before it starts) runs beside the aggregation,
** so that the second core works while the first aggregates.  The KPI walk
** (engine_kpis.c), the global breakdown's unions (engine_aggregate.c),
** the reference's per-track walk (engine_refwalk.c, begun as soon as the
** tracks are ordered), the pieces and slices of the exact nesting check
** (engine_exact.c), the gap pass (engine_gaps.c) and the step wall cover
** (engine_wall.c) are such jobs;
** so are, at the read's end, the pieces of the tracks' ordering and sweep
** (engine_order.c, engine_nest.c), while the scanning thread's core is
** idle.
**
** The jobs share one worker thread and run on it in the order the
** calling thread joins them (each job's rank, then the order queued).  One thread and not one each: with a thread per job, three jobs
** and the calling thread shared two cores, so the calling thread, whose
** work is the longest and ends the import, ran about half the time while
** the jobs ran.  A join of a job the worker has not taken yet runs it in
** the calling thread, so a caller never waits for a job queued behind
** another.  A small trace, a build or run without threads
** (PROFSUM_THREADS=0), or a thread that cannot be had: the caller runs
** the job itself when it needs the result, with the same numbers.  A join
** that has to wait for the worker runs meanwhile the pieces still queued
** of the exact nesting check, or the second half of a track's merge level
** (ENG_SIDE_RANK_PIECE, each a part of one job), from the last: a caller
** does not sit idle while such work waits behind the job it waits for
** (the worker may be the one that queued it, ordering a track's events).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "engine_int.h"
#include "summary_engine.h"

/* A trace with fewer complete events runs its side jobs in the calling
** thread: such a job costs a few ns an event, a thread some tens of µs. */
#define ENG_SIDE_MIN_EVENTS 16384

#define ENG_SIDE_NONE    0
#define ENG_SIDE_QUEUED  1
#define ENG_SIDE_RUNNING 2
#define ENG_SIDE_DONE    3

/* The worker: its queue (oldest first) and its thread. */
typedef struct EngWorker {
  pthread_mutex_t mu;
  pthread_cond_t cv;          /* a job queued, done, or the stop asked */
  EngSide *pHead;             /* the jobs not taken yet, in running order */
  int bStop;                  /* the worker ends once the queue is empty */
  pthread_t thread;
} EngWorker;

/* Run job s, taken out of w's queue, in this thread: w's lock is held on
** entry and on return, and let go while the job runs; s is marked done
** and its joiner woken. */
static void runTaken(EngWorker *w, EngSide *s){
  s->state = ENG_SIDE_RUNNING;
  pthread_mutex_unlock(&w->mu);
  s->xMain(s->pArg);
  pthread_mutex_lock(&w->mu);
  s->state = ENG_SIDE_DONE;
  pthread_cond_broadcast(&w->cv);
}

/* The worker's thread: take the oldest job, run it, mark it done; wait
** when there is none; end when asked to and nothing is left. */
static void *workerMain(void *pArg){
  EngWorker *w = (EngWorker*)pArg;
  pthread_mutex_lock(&w->mu);
  for(;;){
    EngSide *s = w->pHead;
    if( s==0 ){
      if( w->bStop ) break;
      pthread_cond_wait(&w->cv, &w->mu);
      continue;
    }
    w->pHead = s->pNext;
    runTaken(w, s);
  }
  pthread_mutex_unlock(&w->mu);
  return 0;
}

/* e's worker, started on first use: 0 when no thread can be had (or no
** memory for it). */
static EngWorker *workerGet(Engine *e){
  EngWorker *w = e->pSideWorker;
  if( w ) return w;
  w = sqlite3_malloc(sizeof(*w));
  if( w==0 ) return 0;
  memset(w, 0, sizeof(*w));
  if( pthread_mutex_init(&w->mu, 0)!=0 ){ sqlite3_free(w); return 0; }
  if( pthread_cond_init(&w->cv, 0)!=0 ){
    pthread_mutex_destroy(&w->mu); sqlite3_free(w); return 0;
  }
  if( pthread_create(&w->thread, 0, workerMain, w)!=0 ){
    pthread_cond_destroy(&w->cv); pthread_mutex_destroy(&w->mu); sqlite3_free(w);
    return 0;
  }
  e->pSideWorker = w;
  return w;
}

/* See engine_int.h. */
int profsumEngSideStart(Engine *e, EngSide *s, int iRank, void *(*xMain)(void*), void *pArg){
  EngWorker *w = 0;
  EngSide **pp;
  memset(s, 0, sizeof(*s));
  if( e->nEv>=ENG_SIDE_MIN_EVENTS && profsumThreadsAllowed() ) w = workerGet(e);
  if( w==0 ) return 0;
  s->xMain = xMain;
  s->pArg = pArg;
  s->w = w;
  s->iRank = iRank;
  s->running = 1;
  pthread_mutex_lock(&w->mu);
  s->state = ENG_SIDE_QUEUED;
  /* after every queued job of a rank up to its own */
  for(pp=&w->pHead; *pp && (*pp)->iRank<=iRank; pp=&(*pp)->pNext){}
  s->pNext = *pp;
  *pp = s;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return 1;
}

/* Out of w's queue (its lock held): the last job queued of the pieces'
** rank (ENG_SIDE_RANK_PIECE), which a caller waiting for another job runs
** meanwhile, or 0.  The last, so that the worker, which takes the queue
** from its head, and the caller meet in the middle of the pieces. */
static EngSide *pieceToHelp(EngWorker *w){
  EngSide **pp, **ppLast = 0, *h;
  for(pp=&w->pHead; *pp; pp=&(*pp)->pNext){
    if( (*pp)->iRank==ENG_SIDE_RANK_PIECE ) ppLast = pp;
  }
  if( ppLast==0 ) return 0;
  h = *ppLast;
  *ppLast = h->pNext;
  return h;
}

/* See engine_int.h. */
int profsumEngSideTake(EngSide *s){
  EngWorker *w = s->w;
  EngSide **pp;
  if( !s->running ) return 0;
  pthread_mutex_lock(&w->mu);
  if( s->state!=ENG_SIDE_QUEUED ){
    pthread_mutex_unlock(&w->mu);
    return 0;
  }
  for(pp=&w->pHead; *pp!=s; pp=&(*pp)->pNext){}
  *pp = s->pNext;
  s->state = ENG_SIDE_NONE;
  pthread_mutex_unlock(&w->mu);
  s->xMain(s->pArg);
  s->running = 0;
  return 1;
}

/* See engine_int.h. */
int profsumEngSideJoin(EngSide *s){
  EngWorker *w = s->w;
  int bRunHere = 0;
  if( !s->running ) return 0;
  pthread_mutex_lock(&w->mu);
  if( s->state==ENG_SIDE_QUEUED ){
    /* not taken yet: out of the queue, and run here */
    EngSide **pp = &w->pHead;
    while( *pp!=s ) pp = &(*pp)->pNext;
    *pp = s->pNext;
    bRunHere = 1;
  }else{
    while( s->state!=ENG_SIDE_DONE ){
      EngSide *h = pieceToHelp(w);
      if( h==0 ){
        pthread_cond_wait(&w->cv, &w->mu);
        continue;
      }
      /* the worker is busy with s: a piece queued behind it runs here */
      runTaken(w, h);
    }
  }
  s->state = ENG_SIDE_NONE;
  pthread_mutex_unlock(&w->mu);
  if( bRunHere ) s->xMain(s->pArg);
  s->running = 0;
  return 1;
}

/* See engine_int.h. */
int profsumEngTrackPieces(const Engine *e, int nMax, int bSkipSteps, int32_t *aEnd){
  int64_t nAll = 0, nSoFar = 0;
  int32_t t;
  int n = 0;
  for(t=0; t<e->nTrk; t++) if( !(bSkipSteps && e->aTrk[t].isSteps) ) nAll += e->aTrk[t].nEv;
  for(t=0; t<e->nTrk; t++){
    if( !(bSkipSteps && e->aTrk[t].isSteps) ) nSoFar += e->aTrk[t].nEv;
    if( t==e->nTrk-1 || (n<nMax-1 && nSoFar*nMax>=nAll*(n+1)) ) aEnd[n++] = t+1;
  }
  return n;
}

/* See engine_int.h. */
void profsumEngSideStop(Engine *e){
  EngWorker *w = e->pSideWorker;
  profsumEngBlockAheadEnd(e);        /* (its job, if any, is joined first) */
  if( w==0 ) return;
  pthread_mutex_lock(&w->mu);
  w->bStop = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, 0);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  sqlite3_free(w);
  e->pSideWorker = 0;
}

/* The block asked for ahead: the job that maps its pages. */
typedef struct EngBlockAhead {
  EngSide side;
  SEv *a;                     /* EV_BLOCK records, or 0: none asked for */
  int bOff;                   /* 1: no thread was had: never again */
} EngBlockAhead;

/* Blocks taken that a side job had mapped (profsumEngineBlocksAhead). */
static int64_t nBlocksAhead = 0;

/* See summary_engine.h. */
int64_t profsumEngineBlocksAhead(void){
  return __atomic_load_n(&nBlocksAhead, __ATOMIC_RELAXED);
}

/* The side job: the block's pages mapped (ext/util/prefault.c). */
static void *blockAheadMain(void *pArg){
  EngBlockAhead *b = (EngBlockAhead*)pArg;
  profsumPrefault(b->a, sizeof(SEv)*(size_t)EV_BLOCK);
  return 0;
}

/* See engine_int.h. */
void profsumEngBlockAhead(Engine *e){
  EngBlockAhead *b = e->pBlkAhead;
  if( b==0 ){
    if( e->nEv<ENG_SIDE_MIN_EVENTS || !profsumThreadsAllowed() ) return;
    b = sqlite3_malloc(sizeof(*b));
    if( b==0 ) return;
    memset(b, 0, sizeof(*b));
    e->pBlkAhead = b;
  }
  if( b->a || b->bOff ) return;
  b->a = sqlite3_malloc64(sizeof(SEv)*(sqlite3_uint64)EV_BLOCK);
  if( b->a==0 ) return;
  if( !profsumEngSideStart(e, &b->side, ENG_SIDE_RANK_ORDER, blockAheadMain, b) ){
    sqlite3_free(b->a);
    b->a = 0;
    b->bOff = 1;
  }
}

/* See engine_int.h. */
SEv *profsumEngBlockTake(Engine *e){
  EngBlockAhead *b = e->pBlkAhead;
  SEv *a;
  if( b==0 || b->a==0 ) return 0;
  profsumEngSideJoin(&b->side);
  a = b->a;
  b->a = 0;
  __atomic_add_fetch(&nBlocksAhead, 1, __ATOMIC_RELAXED);
  profsumEngBlockAhead(e);
  return a;
}

/* See engine_int.h. */
void profsumEngBlockAheadEnd(Engine *e){
  EngBlockAhead *b = e->pBlkAhead;
  if( b==0 ) return;
  if( b->a ){
    profsumEngSideJoin(&b->side);
    sqlite3_free(b->a);
  }
  sqlite3_free(b);
  e->pBlkAhead = 0;
}
