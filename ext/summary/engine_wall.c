/*
** engine_wall.c — stage A's step wall time: for every device and step,
** each instant of the step counted once as collective, transfer, compute
** or idle, written to profsum_agg_step_wall.
**
** A device is the set of device-op tracks (XLA Ops, Async XLA Ops,
** Stream #...) of one /device: process.  Its events are cut into
** elementary segments by a sweep over their starts and ends; a segment
** covered by a communication-named event is collective, else by a
** transfer-named one (memcpy, h2d, infeed, host to device, ...) transfer,
** else by any other device op compute; a stretch covered by nothing is
** idle.  The steps are the spans of profsum_agg_step_span (written just
** before): a span of a device's own Steps line is measured on that device,
** a host span (a 'train' event) on every device.  All in exact
** picoseconds, so that the four parts add up to the step's duration.
*/
#include "profsum_int.h"
#include "engine_int.h"
#include "funcs.h"

#include <stdlib.h>
#include <string.h>

#define WALL_COMPUTE  0
#define WALL_TRANSFER 1
#define WALL_COLL     2

/* One start or end of a device event: time (ps), +1/-1, its category. */
typedef struct WallEdge { int64_t t; int8_t d, cat; } WallEdge;
/* A covered stretch [lo, hi) and the category that owns it. */
typedef struct WallSeg { int64_t lo, hi; int cat; } WallSeg;
/* One device: its pid, name id and segments (in time order). */
typedef struct WallDev { int64_t pid; int32_t proc; WallSeg *aSeg; int64_t nSeg; } WallDev;

/* 1 when lit (lower case) occurs in z[0..n), case-insensitively. */
static int wallHasCi(const char *z, int n, const char *lit){
  int m = (int)strlen(lit), i;
  for(i=0; i+m<=n; i++){
    if( sqlite3_strnicmp(z+i, lit, m)==0 ) return 1;
  }
  return 0;
}

/* a.?to.?b, case-insensitively, in z[0..n). */
static int wallHasTo(const char *z, int n, const char *a, const char *b){
  int na = (int)strlen(a), nb = (int)strlen(b), i, g1, g2;
  for(i=0; i+na<=n; i++){
    if( sqlite3_strnicmp(z+i, a, na)!=0 ) continue;
    for(g1=0; g1<=1; g1++){
      int j = i+na+g1;
      if( j+2>n || sqlite3_strnicmp(z+j, "to", 2)!=0 ) continue;
      for(g2=0; g2<=1; g2++){
        int k = j+2+g2;
        if( k+nb<=n && sqlite3_strnicmp(z+k, b, nb)==0 ) return 1;
      }
    }
  }
  return 0;
}

/* The wall category of an event named z[0..n) on a device-op track: the
** KPI's transfer pattern (as the large_transfers pattern reads it), the
** summary's communication names, else compute. */
static int wallCategory(const char *z, int n){
  if( profsumIsCommName(z, n) ) return WALL_COLL;
  if( wallHasCi(z, n, "memcpy") || wallHasCi(z, n, "h2d") || wallHasCi(z, n, "d2h")
   || wallHasCi(z, n, "infeed") || wallHasCi(z, n, "outfeed") || wallHasCi(z, n, "transfer")
   || wallHasTo(z, n, "host", "device") || wallHasTo(z, n, "device", "host") ) return WALL_TRANSFER;
  return WALL_COMPUTE;
}

/* qsort order of edges: by time, then ends before starts (abutting events
** leave no zero-length hole and no double count). */
static int wallEdgeCmp(const void *pa, const void *pb){
  const WallEdge *a = pa, *b = pb;
  if( a->t!=b->t ) return a->t<b->t ? -1 : 1;
  return (int)a->d - (int)b->d;
}

/* Build the segments of device dv from the events of tracks whose pid is
** dv->pid (aCat: category per name id, -1 not yet known).  SQLITE_OK or
** SQLITE_NOMEM. */
static int wallSegments(Engine *e, WallDev *dv, int8_t *aCat){
  int64_t nEdge = 0, i, n = 0;
  int32_t it;
  WallEdge *aEdge;
  int64_t aCnt[3] = {0,0,0}, prev = 0;
  for(it=0; it<e->nTrk; it++){
    const STrack *t = &e->aTrk[it];
    if( t->isDevice && t->isDevOp && !t->isSteps && t->pid==dv->pid ) nEdge += 2*t->nEv;
  }
  if( nEdge==0 ) return SQLITE_OK;
  aEdge = sqlite3_malloc64(sizeof(WallEdge)*(sqlite3_uint64)nEdge);
  dv->aSeg = sqlite3_malloc64(sizeof(WallSeg)*(sqlite3_uint64)nEdge);
  if( aEdge==0 || dv->aSeg==0 ){ sqlite3_free(aEdge); return SQLITE_NOMEM; }
  for(it=0; it<e->nTrk; it++){
    const STrack *t = &e->aTrk[it];
    int64_t j;
    if( !(t->isDevice && t->isDevOp && !t->isSteps && t->pid==dv->pid) ) continue;
    for(j=0; j<t->nEv; j++){
      const SEv *r = EV(e, e->aOrd[t->iFirst+j]);
      int32_t nm = KEY(e, r)->name;
      if( aCat[nm]<0 ) aCat[nm] = (int8_t)wallCategory(SP_STR(&e->pool, nm), SP_LEN(&e->pool, nm));
      aEdge[n].t = r->ts; aEdge[n].d = 1; aEdge[n].cat = aCat[nm]; n++;
      aEdge[n].t = r->ts + r->dur; aEdge[n].d = -1; aEdge[n].cat = aCat[nm]; n++;
    }
  }
  qsort(aEdge, (size_t)n, sizeof(WallEdge), wallEdgeCmp);
  for(i=0; i<n; i++){
    const WallEdge *g = &aEdge[i];
    if( i>0 && g->t>prev ){
      int c = aCnt[WALL_COLL]>0 ? WALL_COLL : aCnt[WALL_TRANSFER]>0 ? WALL_TRANSFER
            : aCnt[WALL_COMPUTE]>0 ? WALL_COMPUTE : -1;
      if( c>=0 ){
        WallSeg *s = dv->nSeg ? &dv->aSeg[dv->nSeg-1] : 0;
        if( s && s->cat==c && s->hi==prev ) s->hi = g->t;
        else{ s = &dv->aSeg[dv->nSeg++]; s->lo = prev; s->hi = g->t; s->cat = c; }
      }
    }
    aCnt[g->cat] += g->d;
    prev = g->t;
  }
  sqlite3_free(aEdge);
  return SQLITE_OK;
}

/* Split the window [lo, hi) of device dv into aPart (ps per category). */
static void wallSplit(const WallDev *dv, int64_t lo, int64_t hi, int64_t aPart[3]){
  int64_t a = 0, b = dv->nSeg;
  aPart[0] = aPart[1] = aPart[2] = 0;
  while( a<b ){                  /* the first segment ending after lo */
    int64_t m = a + (b-a)/2;
    if( dv->aSeg[m].hi<=lo ) a = m+1; else b = m;
  }
  for(; a<dv->nSeg && dv->aSeg[a].lo<hi; a++){
    int64_t s = dv->aSeg[a].lo<lo ? lo : dv->aSeg[a].lo;
    int64_t t = dv->aSeg[a].hi>hi ? hi : dv->aSeg[a].hi;
    if( t>s ) aPart[dv->aSeg[a].cat] += t - s;
  }
}

/* Insert the row of step span (step, start, dur) on device dv. */
static int wallRow(Engine *e, sqlite3_stmt *pIns, const WallDev *dv, int64_t step,
                   double startUs, int64_t lo, int64_t dur){
  int64_t aPart[3];
  wallSplit(dv, lo, lo+dur, aPart);
  sqlite3_bind_int64(pIns, 1, e->traceId);
  sqlite3_bind_int64(pIns, 2, step);
  profsumEngBindStrId(e, pIns, 3, dv->proc);
  sqlite3_bind_int64(pIns, 4, dv->pid);
  sqlite3_bind_double(pIns, 5, startUs);
  sqlite3_bind_double(pIns, 6, US(dur));
  sqlite3_bind_double(pIns, 7, US(aPart[WALL_COMPUTE]));
  sqlite3_bind_double(pIns, 8, US(aPart[WALL_COLL]));
  sqlite3_bind_double(pIns, 9, US(aPart[WALL_TRANSFER]));
  sqlite3_bind_double(pIns, 10, US(dur - aPart[0] - aPart[1] - aPart[2]));
  return profsumEngStep(e, pIns);
}

/* See engine_int.h. */
int profsumEngWall(Engine *e){
  WallDev *aDev = 0;
  int64_t nDev = 0, i;
  int8_t *aCat = 0;
  int32_t it;
  sqlite3_stmt *pSpan = 0, *pIns = 0;
  int rc;
  aDev = sqlite3_malloc64(sizeof(WallDev)*(sqlite3_uint64)(e->nTrk+1));
  aCat = sqlite3_malloc64((sqlite3_uint64)(e->pool.n+1));
  if( aDev==0 || aCat==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(aCat, 0xff, (size_t)e->pool.n+1);
  /* the devices, in order of their first device-op track */
  for(it=0; it<e->nTrk; it++){
    const STrack *t = &e->aTrk[it];
    if( !(t->isDevice && t->isDevOp && !t->isSteps) ) continue;
    for(i=0; i<nDev && aDev[i].pid!=t->pid; i++){}
    if( i==nDev ){
      aDev[nDev].pid = t->pid; aDev[nDev].proc = t->proc;
      aDev[nDev].aSeg = 0; aDev[nDev].nSeg = 0; nDev++;
    }
  }
  for(i=0; i<nDev; i++){
    if( (rc = wallSegments(e, &aDev[i], aCat))!=SQLITE_OK ) goto done;
  }
  rc = profsumEngPrepare(e, &pSpan, "SELECT step, pid, start_us, start_ps, dur_ps "
                         "FROM \"%w\".profsum_agg_step_span WHERE trace_id=?1 ORDER BY rowid");
  if( rc==SQLITE_OK ) rc = profsumEngPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_step_wall"
      "(trace_id, step, device, pid, start_us, wall_us, compute_us, collective_us, transfer_us, idle_us) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)");
  if( rc ) goto done;
  sqlite3_bind_int64(pSpan, 1, e->traceId);
  while( rc==SQLITE_OK && sqlite3_step(pSpan)==SQLITE_ROW ){
    int64_t step = sqlite3_column_int64(pSpan, 0), pid = sqlite3_column_int64(pSpan, 1);
    double startUs = sqlite3_column_double(pSpan, 2);
    int64_t lo = sqlite3_column_int64(pSpan, 3), dur = sqlite3_column_int64(pSpan, 4);
    int64_t d;
    int own = 0;
    for(d=0; d<nDev; d++) if( aDev[d].pid==pid ) own = 1;
    for(d=0; rc==SQLITE_OK && d<nDev; d++){
      if( own && aDev[d].pid!=pid ) continue;    /* a device's own Steps line */
      rc = wallRow(e, pIns, &aDev[d], step, startUs, lo, dur);
    }
  }
  if( rc==SQLITE_OK && (rc = sqlite3_reset(pSpan))!=SQLITE_OK ){
    rc = profsumEngErr(e, rc, "%s", sqlite3_errmsg(e->db));
  }
done:
  sqlite3_finalize(pSpan);
  sqlite3_finalize(pIns);
  for(i=0; aDev && i<nDev; i++) sqlite3_free(aDev[i].aSeg);
  sqlite3_free(aDev);
  sqlite3_free(aCat);
  if( rc==SQLITE_NOMEM ) profsumEngNoMem(e, "splitting the steps' wall time");
  return rc;
}
