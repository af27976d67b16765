/*
** insights_xla_write.c — the write of the InsXla collector (insights.h,
** insights_int.h): profsum_agg_xla_trace, _device, _op and _util from what
** insights_xla.c collected, in the import's transaction, after the
** summary's aggregates and step spans (profsum_agg_step_span, read here to
** cut busy time by step).  docs/roofline.md gives the formulas.
*/
#include "insights_xla_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const azLineKind[] = { 0, "xla_ops", "async_xla_ops", "stream", 0 };

/* ------------------------------------------------------------------ */
/* The write                                                           */

/* One entry of the import option device_peaks. */
typedef struct XPeak {
  char *zKey;           /* device name or "*" */
  int hasFlops, hasBw;
  double flops, bw;
} XPeak;

/* The import option device_peaks (JSON object text, or 0) in *paPeak,
** *pnPeak entries, checked: each value an object whose peak_flops_per_s and
** peak_mem_bw_bytes_per_s are absent, null or positive numbers.  SQLITE_OK,
** or an error with *pzErr set. */
static int xLoadPeaks(sqlite3 *db, const char *zPeaks, const char *zFunc,
                      XPeak **paPeak, int *pnPeak, char **pzErr){
  static const char zSql[] =
    "SELECT key, type, json_type(value,'$.peak_flops_per_s'), json_extract(value,'$.peak_flops_per_s'), "
    "json_type(value,'$.peak_mem_bw_bytes_per_s'), json_extract(value,'$.peak_mem_bw_bytes_per_s') "
    "FROM json_each(?1)";
  sqlite3_stmt *pSt = 0;
  XPeak *a = 0;
  int n = 0, rc;
  *paPeak = 0; *pnPeak = 0;
  if( zPeaks==0 ) return SQLITE_OK;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pSt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pSt, 1, zPeaks, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pSt)==SQLITE_ROW ){
    const char *zKey = (const char*)sqlite3_column_text(pSt, 0);
    const char *zType = (const char*)sqlite3_column_text(pSt, 1);
    XPeak *q;
    int k;
    if( zKey==0 || zType==0 || strcmp(zType, "object")!=0 ){
      *pzErr = sqlite3_mprintf("%s: option device_peaks: \"%s\" must map to an object "
                               "{\"peak_flops_per_s\": x, \"peak_mem_bw_bytes_per_s\": y}", zFunc, zKey ? zKey : "");
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      break;
    }
    if( (n & (n-1))==0 || n==0 ){
      XPeak *aNew = sqlite3_realloc64(a, sizeof(XPeak)*(sqlite3_uint64)(n ? n*2 : 4));
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      a = aNew;
    }
    q = &a[n];
    memset(q, 0, sizeof(*q));
    q->zKey = sqlite3_mprintf("%s", zKey);
    if( q->zKey==0 ){ rc = SQLITE_NOMEM; break; }
    n++;
    for(k=0; k<2; k++){
      const char *zT = (const char*)sqlite3_column_text(pSt, 2+2*k);
      double d = sqlite3_column_double(pSt, 3+2*k);
      if( zT==0 || strcmp(zT, "null")==0 ) continue;
      if( (strcmp(zT, "integer")!=0 && strcmp(zT, "real")!=0) || !(d>0) || !isfinite(d) ){
        *pzErr = sqlite3_mprintf("%s: option device_peaks: \"%s\".%s must be a positive number", zFunc, zKey,
                                 k==0 ? "peak_flops_per_s" : "peak_mem_bw_bytes_per_s");
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
        break;
      }
      if( k==0 ){ q->hasFlops = 1; q->flops = d; }else{ q->hasBw = 1; q->bw = d; }
    }
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_finalize(pSt);
    if( rc ) *pzErr = sqlite3_mprintf("%s: option device_peaks: %s", zFunc, sqlite3_errmsg(db));
  }else{
    sqlite3_finalize(pSt);
  }
  if( rc ){
    int i;
    for(i=0; i<n; i++) sqlite3_free(a[i].zKey);
    sqlite3_free(a);
    return rc;
  }
  *paPeak = a; *pnPeak = n;
  return SQLITE_OK;
}

/* The option entry of device zDev (its own, else "*"), or 0. */
static const XPeak *xPeakFor(const XPeak *a, int n, const char *zDev, int wantFlops){
  int i;
  for(i=0; i<n; i++) if( strcmp(a[i].zKey, zDev)==0 && (wantFlops ? a[i].hasFlops : a[i].hasBw) ) return &a[i];
  for(i=0; i<n; i++) if( strcmp(a[i].zKey, "*")==0 && (wantFlops ? a[i].hasFlops : a[i].hasBw) ) return &a[i];
  return 0;
}

/* The device name of track t, or 0 when t holds no device ops (a JSON
** track of a non-device process, or whose thread is not a device-op line). */
static const char *xTrackDevice(const InsXla *p, const XTrack *t, int *pKind){
  const XProc *q = &p->aProc[t->proc];
  int kind = t->kind;
  if( q->name<0 || !insXlaIsDevice(p->pool.az[q->name], p->pool.an[q->name]) ) return 0;
  if( kind==LK_UNKNOWN ){
    kind = t->thread>=0 ? insXlaLineKind(p->pool.az[t->thread], p->pool.an[t->thread]) : LK_OTHER;
  }
  if( kind==LK_OTHER || kind==LK_UNKNOWN ) return 0;
  *pKind = kind;
  return p->pool.az[q->name];
}

/* Bind a string id (-1: NULL). */
static void xBindId(const InsXla *p, sqlite3_stmt *pSt, int i, int32_t id){
  if( id<0 ) sqlite3_bind_null(pSt, i);
  else sqlite3_bind_text(pSt, i, p->pool.az[id], (int)p->pool.an[id], SQLITE_STATIC);
}

/* Bind a sum of bytes: INTEGER while it fits, else REAL. */
static void xBindBytes(sqlite3_stmt *pSt, int i, int has, double v){
  if( !has ) sqlite3_bind_null(pSt, i);
  else if( fabs(v)<9.0e18 ) sqlite3_bind_int64(pSt, i, (sqlite3_int64)llround(v));
  else sqlite3_bind_double(pSt, i, v);
}

/* Step a prepared insert and reset it. */
static int xStep(sqlite3_stmt *pSt){
  int rc = sqlite3_step(pSt);
  sqlite3_reset(pSt);
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/* Prepare zFmt (with %w for the schema) in *ppSt. */
static int xPrepare(sqlite3 *db, const char *zSchema, sqlite3_stmt **ppSt, const char *zFmt){
  char *zSql = sqlite3_mprintf(zFmt, zSchema, zSchema);
  int rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, ppSt, 0);
  sqlite3_free(zSql);
  return rc;
}

/* Write profsum_agg_xla_device: one row per distinct /device: name. */
static int xWriteDevices(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                         const XPeak *aPeak, int nPeak){
  sqlite3_stmt *pSt = 0;
  int32_t i, j;
  int rc = xPrepare(db, zSchema, &pSt,
    "INSERT OR IGNORE INTO \"%w\".profsum_agg_xla_device(trace_id, device, kind, vendor, model, "
    "compute_capability, core_count, clock_hz, memory_bytes, peak_flops_per_s, peak_mem_bw_bytes_per_s, "
    "peak_source, has_events) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)");
  for(i=0; rc==SQLITE_OK && i<p->nProc; i++){
    XProc m = p->aProc[i];
    const char *zDev;
    int fromPlane = 0, fromOpt = 0;
    const XPeak *pk;
    if( m.name<0 || !insXlaIsDevice(p->pool.az[m.name], p->pool.an[m.name]) ) continue;
    zDev = p->pool.az[m.name];
    for(j=0; j<i; j++) if( p->aProc[j].name==m.name ) break;
    if( j<i ) continue;                     /* written with the first plane of the name */
    for(j=i+1; j<p->nProc; j++){            /* planes repeated (chunked): merged */
      const XProc *o = &p->aProc[j];
      int k;
      if( o->name!=m.name ) continue;
      m.hasEvents |= o->hasEvents;
      if( m.vendor<0 ) m.vendor = o->vendor;
      if( m.model<0 ) m.model = o->model;
      for(k=0; k<DS_N; k++) if( !(m.has & (1u<<k)) && (o->has & (1u<<k)) ){ m.a[k] = o->a[k]; m.has |= 1u<<k; }
    }
    sqlite3_bind_int64(pSt, 1, traceId);
    sqlite3_bind_text(pSt, 2, zDev, -1, SQLITE_STATIC);
    if( strncmp(zDev, "/device:TPU:", 12)==0 ) sqlite3_bind_text(pSt, 3, "TPU", -1, SQLITE_STATIC);
    else if( strncmp(zDev, "/device:GPU:", 12)==0 ) sqlite3_bind_text(pSt, 3, "GPU", -1, SQLITE_STATIC);
    else if( strncmp(zDev, "/device:CUSTOM:", 15)==0 ) sqlite3_bind_text(pSt, 3, "CUSTOM", -1, SQLITE_STATIC);
    else sqlite3_bind_null(pSt, 3);
    xBindId(p, pSt, 4, m.vendor);
    xBindId(p, pSt, 5, m.model);
    if( (m.has & (1u<<DS_CAP_MAJOR)) && (m.has & (1u<<DS_CAP_MINOR))
     && fabs(m.a[DS_CAP_MAJOR])<1e9 && fabs(m.a[DS_CAP_MINOR])<1e9 ){
      char zCap[64];
      sqlite3_snprintf(sizeof(zCap), zCap, "%lld.%lld", (long long)m.a[DS_CAP_MAJOR], (long long)m.a[DS_CAP_MINOR]);
      sqlite3_bind_text(pSt, 6, zCap, -1, SQLITE_TRANSIENT);
    }else{
      sqlite3_bind_null(pSt, 6);
    }
    xBindBytes(pSt, 7, (m.has>>DS_CORES)&1, m.a[DS_CORES]);
    xBindBytes(pSt, 8, (m.has>>DS_CLOCK)&1, m.a[DS_CLOCK]*1000.0);
    xBindBytes(pSt, 9, (m.has>>DS_MEMSIZE)&1, m.a[DS_MEMSIZE]);
    if( (m.has & (1u<<DS_PEAK_TF)) && m.a[DS_PEAK_TF]>0 ){
      sqlite3_bind_double(pSt, 10, m.a[DS_PEAK_TF]*1e12); fromPlane = 1;
    }else if( (pk = xPeakFor(aPeak, nPeak, zDev, 1))!=0 ){
      sqlite3_bind_double(pSt, 10, pk->flops); fromOpt = 1;
    }else{
      sqlite3_bind_null(pSt, 10);
    }
    if( (m.has & (1u<<DS_PEAK_HBM)) && m.a[DS_PEAK_HBM]>0 ){
      sqlite3_bind_double(pSt, 11, m.a[DS_PEAK_HBM]*1e9); fromPlane = 1;
    }else if( (m.has & (1u<<DS_MEMBW)) && m.a[DS_MEMBW]>0 ){
      sqlite3_bind_double(pSt, 11, m.a[DS_MEMBW]); fromPlane = 1;
    }else if( (pk = xPeakFor(aPeak, nPeak, zDev, 0))!=0 ){
      sqlite3_bind_double(pSt, 11, pk->bw); fromOpt = 1;
    }else{
      sqlite3_bind_null(pSt, 11);
    }
    if( fromPlane && fromOpt ) sqlite3_bind_text(pSt, 12, "plane_stats+options", -1, SQLITE_STATIC);
    else if( fromPlane ) sqlite3_bind_text(pSt, 12, "plane_stats", -1, SQLITE_STATIC);
    else if( fromOpt ) sqlite3_bind_text(pSt, 12, "options", -1, SQLITE_STATIC);
    else sqlite3_bind_null(pSt, 12);
    sqlite3_bind_int(pSt, 13, m.hasEvents ? 1 : 0);
    rc = xStep(pSt);
  }
  sqlite3_finalize(pSt);
  return rc;
}

/* Write profsum_agg_xla_op: one row per aggregate of a device-op track. */
static int xWriteOps(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId){
  sqlite3_stmt *pSt = 0;
  int64_t i;
  int rc = xPrepare(db, zSchema, &pSt,
    "INSERT INTO \"%w\".profsum_agg_xla_op(trace_id, device, line_kind, name, hlo_op, hlo_module, "
    "hlo_category, framework_op, count, time_us, self_us, flops, model_flops, bytes_accessed) "
    "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)");
  for(i=0; rc==SQLITE_OK && i<p->nAgg; i++){
    const XAgg *a = &p->aAgg[i];
    int kind = 0;
    const char *zDev = xTrackDevice(p, &p->aTrk[a->trk], &kind);
    if( zDev==0 ) continue;
    sqlite3_bind_int64(pSt, 1, traceId);
    sqlite3_bind_text(pSt, 2, zDev, -1, SQLITE_STATIC);
    sqlite3_bind_text(pSt, 3, azLineKind[kind], -1, SQLITE_STATIC);
    xBindId(p, pSt, 4, a->name);
    xBindId(p, pSt, 5, a->hloOp);
    xBindId(p, pSt, 6, a->module);
    xBindId(p, pSt, 7, a->cat);
    xBindId(p, pSt, 8, a->fw);
    sqlite3_bind_int64(pSt, 9, a->count);
    sqlite3_bind_double(pSt, 10, (double)a->durPs/1e6);
    if( a->fl & XF_SELFUNK ) sqlite3_bind_null(pSt, 11);
    else sqlite3_bind_double(pSt, 11, (double)a->selfPs/1e6);
    if( a->fl & XF_FLOPS ) sqlite3_bind_double(pSt, 12, a->flops); else sqlite3_bind_null(pSt, 12);
    if( a->fl & XF_MFLOPS ) sqlite3_bind_double(pSt, 13, a->mflops); else sqlite3_bind_null(pSt, 13);
    xBindBytes(pSt, 14, (a->fl & XF_BYTES)!=0, a->bytes);
    rc = xStep(pSt);
  }
  sqlite3_finalize(pSt);
  return rc;
}

/* A step's span on a device, ps relative to the collector's base. */
typedef struct XSpan { int64_t step; int64_t s, e; } XSpan;

static int xRecCmp(const void *a, const void *b){
  const XRec *x = a, *y = b;
  return x->s<y->s ? -1 : x->s>y->s ? 1 : 0;
}
static int xIvCmp(const void *a, const void *b){
  const XIv *x = a, *y = b;
  return x->s<y->s ? -1 : x->s>y->s ? 1 : 0;
}

/* The first index i in [0, n) with a[i].s >= v (n when none). */
static int64_t xLowerS(const XRec *a, int64_t n, int64_t v){
  int64_t lo = 0, hi = n;
  while( lo<hi ){ int64_t mid = lo + (hi-lo)/2; if( a[mid].s<v ) lo = mid+1; else hi = mid; }
  return lo;
}

/* The first index i with a[i].e > v. */
static int64_t xFirstEndAfter(const XIv *a, int64_t n, int64_t v){
  int64_t lo = 0, hi = n;
  while( lo<hi ){ int64_t mid = lo + (hi-lo)/2; if( a[mid].e<=v ) lo = mid+1; else hi = mid; }
  return lo;
}

/* The step spans of the trace (profsum_agg_step_span) relative to the base:
** *paSpan (sqlite3_malloc'd), with each span's device name id in *paDev
** (-1: not a /device: name).  Spans of one (device, step) merged. */
static int xLoadSteps(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                      XSpan **paSpan, int32_t **paDev, int64_t *pn){
  sqlite3_stmt *pSt = 0;
  XSpan *a = 0; int32_t *aDev = 0;
  int64_t n = 0, nAlloc = 0;
  int hasOff = 0, rc;
  profsum_ps off = 0;
  *paSpan = 0; *paDev = 0; *pn = 0;
  rc = xPrepare(db, zSchema, &pSt,
    "SELECT step, device, min(start_us), min(start_ps), max(start_ps + dur_ps) "
    "FROM \"%w\".profsum_agg_step_span WHERE trace_id=?1 GROUP BY step, device ORDER BY device, step");
  if( rc==SQLITE_OK ) sqlite3_bind_int64(pSt, 1, traceId);
  while( rc==SQLITE_OK && sqlite3_step(pSt)==SQLITE_ROW ){
    const char *zDev = (const char*)sqlite3_column_text(pSt, 1);
    int64_t sPs = sqlite3_column_int64(pSt, 3), ePs = sqlite3_column_int64(pSt, 4);
    int32_t id = -1;
    if( !hasOff ){
      /* the trace's origin in absolute ps: start_us × 1e6 − start_ps */
      long double us = (long double)sqlite3_column_double(pSt, 2);
      off = (profsum_ps)llroundl(us*1e6L - (long double)sPs) - p->base;
      hasOff = 1;
    }
    if( zDev && insXlaIsDevice(zDev, (int64_t)strlen(zDev)) ){
      if( (rc = insXlaIntern(&p->pool, zDev, (int64_t)strlen(zDev), &id))!=SQLITE_OK ) break;
    }
    if( n>=nAlloc ){
      int64_t nNew = nAlloc ? nAlloc*2 : 64;
      XSpan *aN = sqlite3_realloc64(a, sizeof(XSpan)*(sqlite3_uint64)nNew);
      int32_t *aD;
      if( aN==0 ){ rc = SQLITE_NOMEM; break; }
      a = aN;
      aD = sqlite3_realloc64(aDev, sizeof(int32_t)*(sqlite3_uint64)nNew);
      if( aD==0 ){ rc = SQLITE_NOMEM; break; }
      aDev = aD; nAlloc = nNew;
    }
    a[n].step = sqlite3_column_int64(pSt, 0);
    a[n].s = (int64_t)(off + sPs);
    a[n].e = (int64_t)(off + ePs);
    aDev[n] = id;
    n++;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pSt); else sqlite3_finalize(pSt);
  if( rc ){ sqlite3_free(a); sqlite3_free(aDev); return rc; }
  *paSpan = a; *paDev = aDev; *pn = n;
  return SQLITE_OK;
}

/* Put track t's intervals and records in time order (a line read out of
** order), its intervals merged again where they overlap or touch. */
static void xSortTrack(XTrack *t){
  int64_t i, n = 0;
  qsort(t->aIv, (size_t)t->nIv, sizeof(XIv), xIvCmp);
  for(i=0; i<t->nIv; i++){
    XIv v = t->aIv[i];
    if( n>0 && v.s<=t->aIv[n-1].e ){
      if( v.e>t->aIv[n-1].e ) t->aIv[n-1].e = v.e;
    }else{
      t->aIv[n++] = v;
    }
  }
  t->nIv = n;
  if( t->nRec>1 ) qsort(t->aRec, (size_t)t->nRec, sizeof(XRec), xRecCmp);
}

/* The busy time of tracks ap[0..n) within [a, b): the length of the union
** of their intervals (each track's sorted and disjoint), merged on the fly
** (aIdx: scratch of n entries). */
static int64_t xBusy(XTrack *const *ap, int n, int64_t *aIdx, int64_t a, int64_t b){
  int64_t busy = 0, cs = 0, ce = 0;
  int i, has = 0;
  for(i=0; i<n; i++) aIdx[i] = xFirstEndAfter(ap[i]->aIv, ap[i]->nIv, a);
  for(;;){
    int best = -1;
    int64_t s, e;
    for(i=0; i<n; i++){
      if( aIdx[i]<ap[i]->nIv && ap[i]->aIv[aIdx[i]].s<b
       && (best<0 || ap[i]->aIv[aIdx[i]].s<ap[best]->aIv[aIdx[best]].s) ) best = i;
    }
    if( best<0 ) break;
    s = ap[best]->aIv[aIdx[best]].s; e = ap[best]->aIv[aIdx[best]].e;
    aIdx[best]++;
    if( s<a ) s = a;
    if( e>b ) e = b;
    if( has && s<=ce ){
      if( e>ce ) ce = e;
    }else{
      if( has ) busy += ce - cs;
      cs = s; ce = e; has = 1;
    }
  }
  if( has ) busy += ce - cs;
  return busy;
}

/* Write the utilization rows of device zDev (id dev) from its device-op
** tracks ap[0..n) (aIdx: scratch of n entries): one row per step of its
** spans (its own, else the host's, the spans of one step merged) and one
** with step NULL for the capture.  An op's FLOPs and bytes count in the
** step where it starts. */
static int xWriteUtilDevice(sqlite3_stmt *pSt, sqlite3_int64 traceId, const char *zDev, int32_t dev,
                            XTrack *const *ap, int n, int64_t *aIdx,
                            const XSpan *aSp, const int32_t *aSpDev, int64_t nSp){
  int64_t k, capS = 0, capE = 0;
  int own = 0, rc = SQLITE_OK, i, hasCap = 0;
  for(i=0; i<n; i++){
    if( ap[i]->nIv==0 ) continue;
    if( !hasCap || ap[i]->aIv[0].s<capS ) capS = ap[i]->aIv[0].s;
    if( !hasCap || ap[i]->aIv[ap[i]->nIv-1].e>capE ) capE = ap[i]->aIv[ap[i]->nIv-1].e;
    hasCap = 1;
  }
  if( !hasCap ) return SQLITE_OK;
  for(k=0; k<nSp; k++) if( aSpDev[k]==dev ){ own = 1; break; }
  /* k == -1: the whole capture (step NULL) */
  for(k=-1; rc==SQLITE_OK && k<nSp; k++){
    int64_t a, b, busy, j, nF = 0, nB = 0;
    int64_t step = 0;
    double fl = 0, by = 0;
    if( k<0 ){
      a = capS; b = capE;
    }else{
      if( own ? aSpDev[k]!=dev : aSpDev[k]>=0 ) continue;
      step = aSp[k].step; a = aSp[k].s; b = aSp[k].e;
      if( !own ){
        /* host spans: this step's spans of every host process, merged */
        int64_t m;
        for(m=0; m<k; m++) if( aSpDev[m]<0 && aSp[m].step==step ) break;
        if( m<k ) continue;
        for(m=k+1; m<nSp; m++){
          if( aSpDev[m]>=0 || aSp[m].step!=step ) continue;
          if( aSp[m].s<a ) a = aSp[m].s;
          if( aSp[m].e>b ) b = aSp[m].e;
        }
      }
    }
    busy = xBusy(ap, n, aIdx, a, b);
    for(i=0; i<n; i++){
      const XTrack *t = ap[i];
      for(j=(k<0 ? 0 : xLowerS(t->aRec, t->nRec, a)); j<t->nRec && (k<0 || t->aRec[j].s<b); j++){
        if( !isnan(t->aRec[j].mflops) ){ fl += t->aRec[j].mflops; nF++; }
        if( !isnan(t->aRec[j].bytes) ){ by += t->aRec[j].bytes; nB++; }
      }
    }
    sqlite3_bind_int64(pSt, 1, traceId);
    sqlite3_bind_text(pSt, 2, zDev, -1, SQLITE_STATIC);
    if( k<0 ) sqlite3_bind_null(pSt, 3); else sqlite3_bind_int64(pSt, 3, step);
    sqlite3_bind_double(pSt, 4, (double)(b-a)/1e6);
    sqlite3_bind_double(pSt, 5, (double)busy/1e6);
    if( nF>0 ) sqlite3_bind_double(pSt, 6, fl); else sqlite3_bind_null(pSt, 6);
    xBindBytes(pSt, 7, nB>0, by);
    if( k<0 ) sqlite3_bind_null(pSt, 8);
    else sqlite3_bind_text(pSt, 8, own ? "device_steps" : "host_steps", -1, SQLITE_STATIC);
    rc = xStep(pSt);
  }
  return rc;
}

/* Write profsum_agg_xla_util: per device, the busy time, FLOPs and bytes
** per step and for the whole capture. */
static int xWriteUtil(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId){
  sqlite3_stmt *pSt = 0;
  XSpan *aSp = 0; int32_t *aSpDev = 0; int64_t nSp = 0;
  XTrack **ap = 0;
  int64_t *aIdx = 0;
  int32_t i, j;
  int rc;
  if( !p->hasBase ) return SQLITE_OK;
  ap = sqlite3_malloc64(sizeof(XTrack*)*(sqlite3_uint64)p->nTrk);
  aIdx = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)p->nTrk);
  if( ap==0 || aIdx==0 ){ sqlite3_free(ap); sqlite3_free(aIdx); return SQLITE_NOMEM; }
  rc = xLoadSteps(p, db, zSchema, traceId, &aSp, &aSpDev, &nSp);
  if( rc==SQLITE_OK ) rc = xPrepare(db, zSchema, &pSt,
    "INSERT INTO \"%w\".profsum_agg_xla_util(trace_id, device, step, wall_us, busy_us, mfu_flops, "
    "bytes_accessed, step_source) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)");
  for(i=0; rc==SQLITE_OK && i<p->nTrk; i++){
    int kind, n = 0;
    const char *zDev = xTrackDevice(p, &p->aTrk[i], &kind);
    int32_t dev = p->aProc[p->aTrk[i].proc].name;
    if( zDev==0 ) continue;
    for(j=0; j<i; j++){                     /* the device's first track gathers all */
      int kj;
      if( xTrackDevice(p, &p->aTrk[j], &kj) && p->aProc[p->aTrk[j].proc].name==dev ) break;
    }
    if( j<i ) continue;
    for(j=i; j<p->nTrk; j++){
      int kj;
      XTrack *t = &p->aTrk[j];
      if( xTrackDevice(p, t, &kj)==0 || p->aProc[t->proc].name!=dev || t->nIv==0 ) continue;
      if( t->unsorted ) xSortTrack(t);
      ap[n++] = t;
    }
    if( n>0 ) rc = xWriteUtilDevice(pSt, traceId, zDev, dev, ap, n, aIdx, aSp, aSpDev, nSp);
  }
  sqlite3_finalize(pSt);
  sqlite3_free(aSp);
  sqlite3_free(aSpDev);
  sqlite3_free(ap);
  sqlite3_free(aIdx);
  return rc;
}

/* See insights_int.h. */
int insXlaWrite(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, const char *zDevicePeaks,
                const char *zFunc, char **pzErr){
  XPeak *aPeak = 0;
  int nPeak = 0, rc, i;
  int64_t nUnsorted = 0;
  sqlite3_stmt *pSt = 0;
  rc = xLoadPeaks(db, zDevicePeaks, zFunc, &aPeak, &nPeak, pzErr);
  if( rc ) return rc;
  for(i=0; i<p->nTrk; i++){
    int kind;
    if( p->aTrk[i].unsorted && xTrackDevice(p, &p->aTrk[i], &kind) ) nUnsorted++;
  }
  rc = xPrepare(db, zSchema, &pSt,
    "INSERT OR REPLACE INTO \"%w\".profsum_agg_xla_trace(trace_id, source, n_device_ops, n_flops_ops, "
    "n_model_flops_ops, n_bytes_ops, unsorted_lines) VALUES(?1,?2,?3,?4,?5,?6,?7)");
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pSt, 1, traceId);
    sqlite3_bind_text(pSt, 2, p->isJson ? "json" : "xplane", -1, SQLITE_STATIC);
    sqlite3_bind_int64(pSt, 3, p->nDevOps);
    sqlite3_bind_int64(pSt, 4, p->nFlopsOps);
    sqlite3_bind_int64(pSt, 5, p->nMflopsOps);
    sqlite3_bind_int64(pSt, 6, p->nBytesOps);
    sqlite3_bind_int64(pSt, 7, nUnsorted);
    rc = xStep(pSt);
  }
  sqlite3_finalize(pSt);
  if( rc==SQLITE_OK ) rc = xWriteDevices(p, db, zSchema, traceId, aPeak, nPeak);
  if( rc==SQLITE_OK ) rc = xWriteOps(p, db, zSchema, traceId);
  if( rc==SQLITE_OK ) rc = xWriteUtil(p, db, zSchema, traceId);
  for(i=0; i<nPeak; i++) sqlite3_free(aPeak[i].zKey);
  sqlite3_free(aPeak);
  if( rc && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("%s: writing device limits and op profiles: %s", zFunc,
                             rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
  }
  return rc;
}
