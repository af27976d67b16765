/*
** engine_side.c — the write phase's side jobs: a piece of stage A that
** reads only what nothing writes until it is joined (the ordered records,
** the tracks, tables made before it starts) runs on a thread of its own
** beside the aggregation, so that the second core works while the first
** aggregates.  The KPI walk (engine_kpis.c), the global breakdown's
** unions (engine_aggregate.c) and the step wall cover (engine_wall.c) are
** such jobs.  A small trace, a build or run without threads
** (PROFSUM_THREADS=0), or a thread that cannot be had: the caller runs
** the job itself when it needs the result, with the same numbers.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "engine_int.h"

/* A trace with fewer complete events runs its side jobs in the calling
** thread: such a job costs a few ns an event, a thread some tens of µs. */
#define ENG_SIDE_MIN_EVENTS 16384

/* See engine_int.h. */
int profsumEngSideStart(const Engine *e, EngSide *s, void *(*xMain)(void*), void *pArg){
  s->running = 0;
  if( e->nEv>=ENG_SIDE_MIN_EVENTS && profsumThreadsAllowed()
   && pthread_create(&s->thread, 0, xMain, pArg)==0 ){
    s->running = 1;
  }
  return s->running;
}

/* See engine_int.h. */
int profsumEngSideJoin(EngSide *s){
  if( !s->running ) return 0;
  pthread_join(s->thread, 0);
  s->running = 0;
  return 1;
}
