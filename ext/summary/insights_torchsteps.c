/*
** insights_torchsteps.c — the InsSteps collector of insights_int.h:
** PyTorch's steps, for the memory rows.  PyTorch's profiler wraps each
** step of a schedule (each prof.step()) in a complete event named
** "ProfilerStep#<N>" on the host (and Kineto a copy of it, category
** gpu_user_annotation, on the GPU's timeline: left out).  The summary takes no steps from them
** (the reference's step rules are JAX's), so a PyTorch trace has no step
** spans; its memory rows (peak_step, per_step) take these ranges
** instead.  docs/memory.md says so.
*/
#include "insights_int.h"

#include <string.h>

#define STEPS_MAX 1000000         /* ranges kept (one per step event) */

struct InsSteps {
  ProfsumStepSpan *a;
  int64_t n, nAlloc;
};

/* See insights_int.h. */
int insStepsNew(InsSteps **pp){
  InsSteps *p = sqlite3_malloc64(sizeof(*p));
  *pp = p;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  return SQLITE_OK;
}

/* See insights_int.h. */
void insStepsFree(InsSteps *p){
  if( p==0 ) return;
  sqlite3_free(p->a);
  sqlite3_free(p);
}

/* The step number of name z[0..n) when it is "ProfilerStep#<digits>"
** (at most 18 digits), else -1. */
static int64_t stepOfName(const char *z, int64_t n){
  int64_t i, v = 0;
  if( n<14 || n>13+18 || memcmp(z, "ProfilerStep#", 13)!=0 ) return -1;
  for(i=13; i<n; i++){
    if( z[i]<'0' || z[i]>'9' ) return -1;
    v = v*10 + (z[i]-'0');
  }
  return v;
}

/* See insights_int.h. */
int insStepsJsonEvent(InsSteps *p, const ProfsumEvent *ev){
  int64_t step;
  if( ev->ph.n!=1 || ev->ph.z[0]!='X' || !ev->hasTs || !ev->hasDur || ev->dur<=0 ) return SQLITE_OK;
  if( ev->name.z==0 || (ev->name.flags & PROFSUM_SF_ESCAPE) ) return SQLITE_OK;
  if( (step = stepOfName(ev->name.z, ev->name.n))<0 ) return SQLITE_OK;
  /* Kineto copies the annotation onto the GPU's timeline too: the memory
  ** events are the host's, and so are the steps */
  if( ev->cat.n==19 && memcmp(ev->cat.z, "gpu_user_annotation", 19)==0 ) return SQLITE_OK;
  if( p->n>=STEPS_MAX ) return SQLITE_OK;
  if( p->n>=p->nAlloc ){
    int64_t nNew = p->nAlloc ? p->nAlloc*2 : 16;
    ProfsumStepSpan *a = sqlite3_realloc64(p->a, sizeof(*a)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->a = a; p->nAlloc = nNew;
  }
  memset(&p->a[p->n], 0, sizeof(p->a[0]));
  p->a[p->n].step = step;
  p->a[p->n].start = ev->ts;
  p->a[p->n].end = ev->ts + ev->dur;
  p->n++;
  return SQLITE_OK;
}

/* See insights_int.h. */
ProfsumStepSpan *insStepsSpans(InsSteps *p, int64_t *pn){
  *pn = p->n;
  return p->a;
}
