/*
** session_parse.c — the parse of a session's hosts (session.h): each
** host's file through profsumEngineParse in a worker thread (the engine
** needs no connection), at most as many at once as there are cores, and
** what the session views need beside the summary: the XPlane's
** Task Environment.profile_start_time and XSpace hostnames, and per step
** and device the step's window and the device's op and collective time in
** it (read from the parsed engine: stage A's records, engine_int.h).
*/
#include "profsum_int.h"
#include "pytext.h"
#include "utf8cut.h"
#include "engine_int.h"
#include "engine_intake.h"
#include "funcs.h"
#include "session.h"
#include "xplane_pb.h"
#include "jsontree.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Per-step device time                                                 */
/* ------------------------------------------------------------------ */

/* A half-open interval of exact ps. */
typedef struct SpIv { int64_t lo, hi; } SpIv;

/* qsort order of intervals by start. */
static int spIvCmp(const void *pa, const void *pb){
  const SpIv *a = (const SpIv*)pa, *b = (const SpIv*)pb;
  return a->lo<b->lo ? -1 : a->lo>b->lo ? 1 : 0;
}

/* Sort a[0..*pn) (unless it is in order already: one track's events are)
** and merge it into disjoint intervals in place. */
static void spIvUnion(SpIv *a, int64_t *pn){
  int64_t i, m = 0, n = *pn;
  if( n==0 ) return;
  for(i=1; i<n && a[i-1].lo<=a[i].lo; i++){}
  if( i<n ) qsort(a, (size_t)n, sizeof(SpIv), spIvCmp);
  for(i=1; i<n; i++){
    if( a[i].lo<=a[m].hi ){ if( a[i].hi>a[m].hi ) a[m].hi = a[i].hi; }
    else a[++m] = a[i];
  }
  *pn = m+1;
}

/* The length of the disjoint intervals a[0..n) inside [lo, hi). */
static int64_t spIvOverlap(const SpIv *a, int64_t n, int64_t lo, int64_t hi){
  int64_t l = 0, r = n, sum = 0;
  while( l<r ){                      /* first interval ending after lo */
    int64_t m = (l+r)/2;
    if( a[m].hi<=lo ) l = m+1; else r = m;
  }
  for(; l<n && a[l].lo<hi; l++){
    int64_t s = a[l].lo>lo ? a[l].lo : lo, e = a[l].hi<hi ? a[l].hi : hi;
    if( e>s ) sum += e - s;
  }
  return sum;
}

/* The index of device name id proc in h->azDev, added when new; -1 when
** out of memory. */
static int devIndex(Engine *e, ProfsumHost *h, int32_t proc, int32_t *aDevOf){
  char **az;
  if( aDevOf[proc]>=0 ) return aDevOf[proc];
  az = sqlite3_realloc64(h->azDev, sizeof(char*)*(sqlite3_uint64)(h->nDev+1));
  if( az==0 ) return -1;
  h->azDev = az;
  az[h->nDev] = sqlite3_mprintf("%s", SP_STR(&e->pool, proc));
  if( az[h->nDev]==0 ) return -1;
  aDevOf[proc] = h->nDev;
  return h->nDev++;
}

/* Append a step window to h (*pnAlloc: the capacity of h->aStep), its
** device time still 0.  SQLITE_OK or SQLITE_NOMEM. */
static int addWindow(ProfsumHost *h, int64_t *pnAlloc, int64_t step, int iDev, int64_t lo, int64_t hi){
  void *a = h->aStep;
  if( profsumEngGrowCapped(&a, pnAlloc, h->nStep+1, 0, sizeof(ProfsumDevStep)) ) return SQLITE_NOMEM;
  h->aStep = a;
  h->aStep[h->nStep++] = (ProfsumDevStep){ .step = step, .iDev = iDev, .startPs = lo, .endPs = hi };
  return SQLITE_OK;
}

/* The step windows of e into h: each event of a device's Steps line named
** by a number (on that device), else each host 'train' event with a
** step_num (on every device with ops) — the rule of the step spans
** (engine_steps.c).  aDevOf: per name id, its device index or -1. */
static int stepWindows(Engine *e, ProfsumHost *h, int32_t *aDevOf){
  int64_t nAlloc = 0;
  int32_t it, jt;
  int rc = SQLITE_OK, gpu;
  for(gpu=0; gpu<2 && h->nStep==0 && rc==SQLITE_OK; gpu++){
    for(it=0; rc==SQLITE_OK && it<e->nTrk; it++){
      const STrack *t = &e->aTrk[it];
      int64_t j;
      if( gpu ? !t->isHost : !(t->isDevice && t->isSteps && t->proc>=0) ) continue;
      for(j=0; rc==SQLITE_OK && j<t->nEv; j++){
        int64_t k = ORD(e, t->iFirst+j), step;
        const SEv *r = EV(e, k);
        const EvKey *q = KEY(e, r);
        const char *zName = SP_STR(&e->pool, q->name);
        int nName = SP_LEN(&e->pool, q->name);
        if( !gpu ){
          int iDev;
          if( profsumPyInt(zName, nName, &step)!=0 ) continue;
          iDev = devIndex(e, h, t->proc, aDevOf);
          if( iDev<0 ){ rc = SQLITE_NOMEM; break; }
          rc = addWindow(h, &nAlloc, step, iDev, e->origin + r->ts, e->origin + r->ts + EVDUR(e, r));
        }else{
          if( nName!=5 || memcmp(zName, "train", 5)!=0 ) continue;
          if( !profsumEngStepOf(e, k, &step) ) continue;
          for(jt=0; rc==SQLITE_OK && jt<e->nTrk; jt++){
            const STrack *d = &e->aTrk[jt];
            int iDev, dup = 0;
            int32_t kt;
            if( !(d->isDevice && d->isDevOp && d->proc>=0) ) continue;
            for(kt=0; kt<jt && !dup; kt++){
              dup = e->aTrk[kt].isDevice && e->aTrk[kt].isDevOp && e->aTrk[kt].proc==d->proc;
            }
            if( dup ) continue;
            iDev = devIndex(e, h, d->proc, aDevOf);
            if( iDev<0 ){ rc = SQLITE_NOMEM; break; }
            rc = addWindow(h, &nAlloc, step, iDev, e->origin + r->ts, e->origin + r->ts + EVDUR(e, r));
          }
        }
      }
    }
  }
  return rc;
}

/* For each step window of h, the union of its device's op events
** (busyPs) and of those named as collectives (collPs) inside it. */
static int deviceTime(Engine *e, ProfsumHost *h, const int32_t *aDevOf){
  SpIv *aAll = 0, *aComm = 0;
  int64_t nMax = 0, i;
  int32_t it;
  int8_t *aIsComm;         /* per name id: a communication name (1), not (0), unknown (-1) */
  int d;
  for(it=0; it<e->nTrk; it++){
    const STrack *t = &e->aTrk[it];
    if( t->isDevice && t->isDevOp ) nMax += t->nEv;
  }
  aAll = sqlite3_malloc64(sizeof(SpIv)*(sqlite3_uint64)(nMax+1));
  aComm = sqlite3_malloc64(sizeof(SpIv)*(sqlite3_uint64)(nMax+1));
  aIsComm = sqlite3_malloc64((sqlite3_uint64)e->pool.n+1);
  if( aAll==0 || aComm==0 || aIsComm==0 ){
    sqlite3_free(aAll); sqlite3_free(aComm); sqlite3_free(aIsComm);
    return SQLITE_NOMEM;
  }
  memset(aIsComm, 0xff, (size_t)e->pool.n+1);
  for(d=0; d<h->nDev; d++){
    int64_t nAll = 0, nComm = 0;
    for(it=0; it<e->nTrk; it++){
      const STrack *t = &e->aTrk[it];
      int64_t j;
      if( !(t->isDevice && t->isDevOp && t->proc>=0 && aDevOf[t->proc]==d) ) continue;
      for(j=0; j<t->nEv; j++){
        const SEv *r = EV(e, ORD(e, t->iFirst+j));
        const EvKey *q = KEY(e, r);
        SpIv v;
        v.lo = e->origin + r->ts;
        v.hi = v.lo + EVDUR(e, r);
        aAll[nAll++] = v;
        if( aIsComm[q->name]<0 ){
          aIsComm[q->name] = (int8_t)(profsumIsCommName(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name))!=0);
        }
        if( aIsComm[q->name] ) aComm[nComm++] = v;
      }
    }
    spIvUnion(aAll, &nAll);
    spIvUnion(aComm, &nComm);
    for(i=0; i<h->nStep; i++){
      ProfsumDevStep *s = &h->aStep[i];
      if( s->iDev!=d ) continue;
      s->busyPs = spIvOverlap(aAll, nAll, s->startPs, s->endPs);
      s->collPs = spIvOverlap(aComm, nComm, s->startPs, s->endPs);
    }
  }
  sqlite3_free(aAll);
  sqlite3_free(aComm);
  sqlite3_free(aIsComm);
  return SQLITE_OK;
}

/* The per-step device time of h from its parsed engine. */
static int hostSteps(ProfsumHost *h){
  Engine *e = h->pEngine;
  int32_t *aDevOf = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(e->pool.n+1));
  int32_t i;
  int rc;
  if( aDevOf==0 ) return SQLITE_NOMEM;
  for(i=0; i<=e->pool.n; i++) aDevOf[i] = -1;
  rc = stepWindows(e, h, aDevOf);
  if( rc==SQLITE_OK ) rc = deviceTime(e, h, aDevOf);
  sqlite3_free(aDevOf);
  return rc;
}

/* ------------------------------------------------------------------ */
/* XSpace facts                                                        */
/* ------------------------------------------------------------------ */

/* The longest part of a text value a diagnostic quotes, in bytes. */
#define SP_QUOTE_MAX 40

/* The text z[0..n) quoted, cut after at most SP_QUOTE_MAX bytes at a
** character's end ("..." added when cut); sqlite3_malloc'd, 0 when out
** of memory. */
static char *spQuote(const char *z, int64_t n){
  int64_t i = profsumUtf8Cut(z, n, SP_QUOTE_MAX);
  return sqlite3_mprintf("'%.*s'%s", (int)i, z, i<n ? "..." : "");
}

/* Whether Task Environment stat s holds a usable profile start: an
** integer of ns since the epoch from 1 to 2^63-1 (uint64 or int64; 0 is
** proto3's unset value, and a time at or before the epoch is no capture's
** start).  Usable: *pNs set, *pzVal 0.  Else *pzVal is s's value as a
** diagnostic names it (its type in parentheses), sqlite3_malloc'd.
** SQLITE_OK, or SQLITE_NOMEM (*pzVal 0). */
static int spStartOf(ProfsumXp *p, const ProfsumXpStat *s, sqlite3_int64 *pNs, char **pzVal){
  char zNum[32];
  char *zQ;
  const char *zT;
  int64_t nT;
  int rc;
  *pzVal = 0;
  switch( s->eType ){
    case PROFSUM_XV_UINT64:
      if( s->uVal>0 && s->uVal<=(uint64_t)INT64_MAX ){ *pNs = (sqlite3_int64)s->uVal; return SQLITE_OK; }
      *pzVal = sqlite3_mprintf("%llu (uint64%s)", (unsigned long long)s->uVal,
                               s->uVal ? ", beyond int64" : "");
      break;
    case PROFSUM_XV_INT64:
      if( s->iVal>0 ){ *pNs = s->iVal; return SQLITE_OK; }
      *pzVal = sqlite3_mprintf("%lld (int64)", (long long)s->iVal);
      break;
    case PROFSUM_XV_DOUBLE:
      if( isnan(s->rVal) ) sqlite3_snprintf(sizeof(zNum), zNum, "NaN");
      else if( isinf(s->rVal) ) sqlite3_snprintf(sizeof(zNum), zNum, s->rVal>0 ? "Infinity" : "-Infinity");
      else jReprDouble(s->rVal, zNum);
      *pzVal = sqlite3_mprintf("%s (double)", zNum);
      break;
    case PROFSUM_XV_STR:
    case PROFSUM_XV_REF:
    case PROFSUM_XV_CSTR:
      zT = s->z; nT = s->n;
      if( s->eType==PROFSUM_XV_CSTR ){
        rc = profsumXpStatText(p, s, &zT, &nT);
        if( rc==SQLITE_NOMEM ) return rc;
        if( rc ) zT = 0;
      }
      if( zT==0 ){
        *pzVal = s->eType==PROFSUM_XV_REF
               ? sqlite3_mprintf("%lld (a reference to no stat name)", (long long)s->uVal)
               : sqlite3_mprintf("of %lld bytes (a compressed string that does not inflate)", (long long)s->n);
        break;
      }
      zQ = spQuote(zT, nT);
      if( zQ==0 ) return SQLITE_NOMEM;
      *pzVal = sqlite3_mprintf("%s (%s)", zQ, s->eType==PROFSUM_XV_STR ? "string"
                               : s->eType==PROFSUM_XV_REF ? "a reference to a stat name" : "compressed string");
      sqlite3_free(zQ);
      break;
    case PROFSUM_XV_BYTES:
      *pzVal = sqlite3_mprintf("of %lld bytes (bytes)", (long long)s->n);
      break;
    default:
      *pzVal = sqlite3_mprintf("without a value");
      break;
  }
  return *pzVal ? SQLITE_OK : SQLITE_NOMEM;
}

/* A profile_start_time that gives no start, kept until the walk of the
** planes ends (its diagnostic says whether a later one was used). */
typedef struct SpBadStart {
  char *zWhat;             /* "the Task Environment plane (id N) has ...": owned */
  int64_t iOffset;         /* the stat's byte offset */
} SpBadStart;

/* Free aBad[0..nBad) and aBad. */
static void spBadFree(SpBadStart *aBad, int nBad){
  while( nBad>0 ) sqlite3_free(aBad[--nBad].zWhat);
  sqlite3_free(aBad);
}

/* The profile_start_unusable diagnostics of aBad[0..nBad) into h's
** engine; aBad is freed (always).  SQLITE_OK or SQLITE_NOMEM. */
static int spBadStartDiags(ProfsumHost *h, SpBadStart *aBad, int nBad){
  int i, rc = SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<nBad; i++){
    char *z;
    if( h->hasStart ){
      z = sqlite3_mprintf("'%s': %s, which is no start (ns since the epoch, an integer from 1 to "
                          "2^63-1): a later one, %lld, is the host's start", h->zPath, aBad[i].zWhat,
                          (long long)h->startNs);
    }else{
      z = sqlite3_mprintf("'%s': %s, which is no start (ns since the epoch, an integer from 1 to "
                          "2^63-1): the host has no start and is aligned by its steps", h->zPath,
                          aBad[i].zWhat);
    }
    if( z==0 ) rc = SQLITE_NOMEM;
    else profsumEngDiag(h->pEngine, -1, aBad[i].iOffset, "profile_start_unusable", z);
    sqlite3_free(z);
    if( rc==SQLITE_OK ) rc = profsumEngDiagRc(h->pEngine);
  }
  spBadFree(aBad, nBad);
  return rc;
}

/* Task Environment.profile_start_time and the hostnames of the XSpace
** h->zPath, in a walk of its planes (their lines skipped).  The start is
** the first usable one in file order (planes, then each plane's stats:
** as the device stats, the first plane that has it wins; spStartOf says
** which are usable); each unusable one met before it is a
** profile_start_unusable diagnostic of h's engine.  A file the engine
** read but this walk cannot (it would say so there) gives neither start
** nor diagnostic.  SQLITE_OK or SQLITE_NOMEM. */
static int xspaceFacts(const char *zFunc, ProfsumHost *h){
  ProfsumXp *p = 0;
  const ProfsumXpPlane *pl;
  char *zErr = 0;
  SpBadStart *aBad = 0;
  int nBad = 0;
  int rc = profsumXpOpen(zFunc, h->zPath, PROFSUM_XP_LENIENT_UTF8, 0, 0, &p, &zErr);
  while( rc==SQLITE_OK && (rc = profsumXpNextPlane(p, &pl, &zErr))==SQLITE_ROW ){
    int i;
    rc = SQLITE_OK;
    if( pl->nName!=16 || memcmp(pl->zName, "Task Environment", 16)!=0 ) continue;
    for(i=0; rc==SQLITE_OK && !h->hasStart && i<pl->nStat; i++){
      const ProfsumXpStat *s = &pl->aStat[i];
      char *zVal = 0;
      SpBadStart *aNew;
      if( s->zName==0 || s->nName!=18 || memcmp(s->zName, "profile_start_time", 18)!=0 ) continue;
      rc = spStartOf(p, s, &h->startNs, &zVal);
      if( rc ) break;
      if( zVal==0 ){ h->hasStart = 1; break; }
      aNew = sqlite3_realloc64(aBad, sizeof(SpBadStart)*(sqlite3_uint64)(nBad+1));
      if( aNew ) aBad = aNew;
      if( aNew ) aBad[nBad].zWhat = sqlite3_mprintf("the Task Environment plane (id %lld) has "
                                                    "profile_start_time %s", (long long)pl->id, zVal);
      sqlite3_free(zVal);
      if( aNew==0 || aBad[nBad].zWhat==0 ){ rc = SQLITE_NOMEM; break; }
      aBad[nBad++].iOffset = s->iOffset;
    }
  }
  if( rc==SQLITE_DONE ){
    sqlite3_str *pOut = sqlite3_str_new(0);
    profsumXpStringsJson(p, PROFSUM_XP_HOSTNAMES, pOut);
    sqlite3_free(h->zHostnames);
    h->zHostnames = sqlite3_str_finish(pOut);
    rc = h->zHostnames ? SQLITE_OK : SQLITE_NOMEM;
  }else if( rc!=SQLITE_NOMEM ){
    h->hasStart = 0;
    rc = SQLITE_OK;
    spBadFree(aBad, nBad);
    aBad = 0; nBad = 0;
  }
  if( rc==SQLITE_OK ) rc = spBadStartDiags(h, aBad, nBad);
  else spBadFree(aBad, nBad);
  profsumXpClose(p);
  sqlite3_free(zErr);
  return rc;
}

/* ------------------------------------------------------------------ */
/* The workers                                                         */
/* ------------------------------------------------------------------ */

typedef struct SessPool {
  const char *zFunc;
  unsigned flags;             /* profsumEngineParse's */
  ProfsumHost *a;
  int n;
  int *aRc;                  /* per host: its result */
  char **azErr;              /* per host: its message */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int next;                  /* the next host to take */
  int nDone;                 /* hosts finished */
  int stop;                  /* set by the connection's thread: give up */
} SessPool;

/* ProfsumStopFn of the workers: the pool's stop flag. */
static int sessStop(void *pArg){
  return __atomic_load_n(&((SessPool*)pArg)->stop, __ATOMIC_RELAXED);
}

/* Parse host i of the pool and collect its facts. */
static void sessParseOne(SessPool *q, int i){
  ProfsumHost *h = &q->a[i];
  ProfsumStopCheck prev = profsumStopPush(sessStop, q);
  struct stat st;
  /* an empty XPlane beside a trace JSON (a host killed as it began to
  ** write it) decodes as a host without events: read the JSON instead */
  int empty = h->zAlt && stat(h->zPath, &st)==0 && S_ISREG(st.st_mode) && st.st_size==0;
  int rc = empty ? PROFSUM_RC_DAMAGED
                 : profsumEngineParse(q->zFunc, h->zPath, q->flags, sessStop, q, &h->pEngine, &h->info,
                                      &q->azErr[i]);
  if( empty ){
    q->azErr[i] = sqlite3_mprintf("%s: '%s': the file is empty (0 bytes)", q->zFunc, h->zPath);
    if( q->azErr[i]==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==PROFSUM_RC_DAMAGED && h->zAlt ){
    /* an XPlane that does not decode (a host stopped while writing it):
    ** the host's trace JSON instead, as the reference falls back for one
    ** host; the XPlane's error is kept for a diagnostic */
    h->zFellBack = q->azErr[i];
    q->azErr[i] = 0;
    if( h->zFellBack==0 ) h->zFellBack = sqlite3_mprintf("%s: '%s': does not decode", q->zFunc, h->zPath);
    if( h->zFellBack==0 ){
      rc = SQLITE_NOMEM;
    }else{
      h->zPath = h->zAlt;
      memset(&h->info, 0, sizeof(h->info));
      rc = profsumEngineParse(q->zFunc, h->zPath, q->flags, sessStop, q, &h->pEngine, &h->info, &q->azErr[i]);
      if( rc==SQLITE_OK ){
        char *z = sqlite3_mprintf("the host's XPlane does not decode, so its trace JSON was read: %s",
                                  h->zFellBack);
        if( z==0 ) rc = SQLITE_NOMEM;
        else profsumEngDiag(h->pEngine, -1, -1, "xplane_not_decoded", z);
        sqlite3_free(z);
        if( rc==SQLITE_OK ) rc = profsumEngDiagRc(h->pEngine);
      }
    }
  }
  if( rc==SQLITE_OK ) rc = hostSteps(h);
  if( rc==SQLITE_OK && h->info.isXPlane ) rc = xspaceFacts(q->zFunc, h);
  if( rc==SQLITE_OK && h->zHostnames==0 ){
    h->zHostnames = sqlite3_mprintf("[]");
    if( h->zHostnames==0 ) rc = SQLITE_NOMEM;
  }
  profsumStopPop(prev);
  q->aRc[i] = rc;
}

/* A worker: takes the next host until none is left. */
static void *sessWorker(void *pArg){
  SessPool *q = (SessPool*)pArg;
  for(;;){
    int i;
    pthread_mutex_lock(&q->mu);
    i = q->next < q->n && !q->stop ? q->next++ : -1;
    pthread_mutex_unlock(&q->mu);
    if( i<0 ) break;
    sessParseOne(q, i);
    pthread_mutex_lock(&q->mu);
    q->nDone++;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
  }
  return 0;
}

/* The cores this process may use (at least 1, at most 256): its affinity
** mask and its cgroup's CPU quota (profsumCpusUsable). */
static int sessCores(void){
  int n = profsumCpusUsable();
  return n>256 ? 256 : n;
}

/* Run the pool in nThread worker threads, the calling thread waiting and
** asking pProbe every 10 ms whether the connection was interrupted.
** Returns the threads started (0: none could be: the caller parses). */
static int sessRunThreads(SessPool *q, int nThread, ProfsumProbe *pProbe){
  pthread_t *aT = sqlite3_malloc64(sizeof(pthread_t)*(sqlite3_uint64)nThread);
  int nT = 0, i;
  if( aT==0 ) return 0;
  for(i=0; i<nThread; i++){
    if( pthread_create(&aT[nT], 0, sessWorker, q)==0 ) nT++;
  }
  if( nT>0 ){
    pthread_mutex_lock(&q->mu);
    while( q->nDone<q->n && !(q->stop && q->next>=q->n) ){
      struct timespec t;
      clock_gettime(CLOCK_REALTIME, &t);
      t.tv_nsec += 10*1000*1000;
      if( t.tv_nsec>=1000000000 ){ t.tv_sec++; t.tv_nsec -= 1000000000; }
      pthread_cond_timedwait(&q->cv, &q->mu, &t);
      if( !q->stop && pProbe && profsumInterrupted(pProbe) ){
        __atomic_store_n(&q->stop, 1, __ATOMIC_RELAXED);
      }
      if( q->stop && q->nDone>=q->next ) break;
    }
    pthread_mutex_unlock(&q->mu);
  }
  for(i=0; i<nT; i++) pthread_join(aT[i], 0);
  sqlite3_free(aT);
  return nT;
}

/* See session.h. */
int profsumSessionParse(const char *zFunc, ProfsumHost *a, int n, unsigned flags,
                        ProfsumProbe *pProbe, char **pzErr){
  SessPool q;
  int i, rc = SQLITE_OK, nThread;
  *pzErr = 0;
  memset(&q, 0, sizeof(q));
  q.zFunc = zFunc;
  q.flags = flags;
  q.a = a;
  q.n = n;
  q.aRc = sqlite3_malloc64(sizeof(int)*(sqlite3_uint64)(n+1));
  q.azErr = sqlite3_malloc64(sizeof(char*)*(sqlite3_uint64)(n+1));
  if( q.aRc==0 || q.azErr==0 ){ sqlite3_free(q.aRc); sqlite3_free(q.azErr); return SQLITE_NOMEM; }
  for(i=0; i<n; i++){ q.aRc[i] = SQLITE_INTERRUPT; q.azErr[i] = 0; }
  nThread = sessCores();
  if( nThread>n ) nThread = n;
  if( n<2 || !profsumThreadsAllowed() || pthread_mutex_init(&q.mu, 0) ){
    nThread = 0;
  }else if( pthread_cond_init(&q.cv, 0) ){
    pthread_mutex_destroy(&q.mu);
    nThread = 0;
  }else{
    int started = sessRunThreads(&q, nThread, pProbe);
    pthread_cond_destroy(&q.cv);
    pthread_mutex_destroy(&q.mu);
    if( started==0 ) nThread = 0;
  }
  if( nThread==0 ){
    /* one after another in this thread (its reads hear the interrupt) */
    for(i=0; i<n; i++){
      if( pProbe && profsumInterrupted(pProbe) ) break;
      sessParseOne(&q, i);
      if( q.aRc[i] ) break;
    }
  }
  for(i=0; i<n; i++){
    if( q.aRc[i]==SQLITE_OK ) continue;
    rc = q.aRc[i];
    if( q.azErr[i] ){ *pzErr = q.azErr[i]; q.azErr[i] = 0; }
    else if( rc==SQLITE_INTERRUPT ) *pzErr = sqlite3_mprintf("%s: interrupted", zFunc);
    else if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s: '%s': %s", zFunc, a[i].zPath, sqlite3_errstr(rc));
    break;
  }
  for(i=0; i<n; i++) sqlite3_free(q.azErr[i]);
  sqlite3_free(q.aRc);
  sqlite3_free(q.azErr);
  return rc;
}

/* See session.h. */
void profsumHostClear(ProfsumHost *h){
  int i;
  profsumEngineFree(h->pEngine);
  h->pEngine = 0;
  sqlite3_free(h->zHostnames);
  sqlite3_free(h->aStep);
  for(i=0; i<h->nDev; i++) sqlite3_free(h->azDev[i]);
  sqlite3_free(h->azDev);
  sqlite3_free(h->zHost);
  sqlite3_free(h->zFellBack);
  h->zHostnames = 0; h->aStep = 0; h->azDev = 0; h->zHost = 0; h->zFellBack = 0;
  h->nStep = h->nDev = 0;
}
