/*
** insights_xla_write.c — the write of the InsXla collector (insights.h,
** insights_int.h): profsum_agg_xla_trace, _device, _op and _util from what
** insights_xla.c collected, in the import's transaction, after the
** summary's aggregates and step spans (profsum_agg_step_span, read here to
** cut busy time by step).  docs/roofline.md gives the formulas.
*/
#include "insights_xla_int.h"
#include "rowbuf.h"

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
** peak_mem_bw_bytes_per_s are absent, null or finite numbers of at least 1
** (per second: a positive value below that is no device's peak).  SQLITE_OK,
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
      if( (strcmp(zT, "integer")!=0 && strcmp(zT, "real")!=0) || !(d>=1) || !isfinite(d) ){
        const char *zV = (const char*)sqlite3_column_text(pSt, 3+2*k);
        *pzErr = sqlite3_mprintf("%s: option device_peaks: \"%s\".%s must be a finite number of "
                                 "at least 1 (per second), not %s", zFunc, zKey,
                                 k==0 ? "peak_flops_per_s" : "peak_mem_bw_bytes_per_s", zV ? zV : zT);
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

/* True if a sum of bytes v is stored as an INTEGER (it fits in 64 bits):
** llround(v) then; else it is stored as REAL. */
static int xBytesFit(double v){
  return fabs(v)<9223372036854775808.0;
}

/* Bind a sum of bytes: INTEGER while it fits, else REAL. */
static void xBindBytes(sqlite3_stmt *pSt, int i, int has, double v){
  if( !has ) sqlite3_bind_null(pSt, i);
  else if( xBytesFit(v) ) sqlite3_bind_int64(pSt, i, (sqlite3_int64)llround(v));
  else sqlite3_bind_double(pSt, i, v);
}

/* The next column of a row of b: string id (-1: NULL). */
static void xRowId(const InsXla *p, ProfsumRowBuf *b, int32_t id){
  if( id<0 ) profsumRowBufNull(b);
  else profsumRowBufTextStatic(b, p->pool.az[id], (int)p->pool.an[id]);
}

/* The next column of a row of b: a sum of bytes as xBindBytes binds it. */
static void xRowBytes(ProfsumRowBuf *b, int has, double v){
  if( !has ) profsumRowBufNull(b);
  else if( xBytesFit(v) ) profsumRowBufInt(b, (sqlite3_int64)llround(v));
  else profsumRowBufDouble(b, v);
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

/* Write profsum_agg_xla_device: one row per distinct /device: name (the
** planes of one name, aNextProc: the next of its name or -1, merged: each
** stat from the first plane with a usable value of it). */
static int xWriteDevices(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                         const XPeak *aPeak, int nPeak, const int32_t *aFirstProc, const int32_t *aNextProc){
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
    if( aFirstProc[m.name]!=i ) continue;   /* written with the first plane of the name */
    zDev = p->pool.az[m.name];
    for(j=aNextProc[i]; j>=0; j=aNextProc[j]){   /* planes repeated (chunked): merged */
      const XProc *o = &p->aProc[j];
      int k;
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
    /* the values are usable and converted (insXlaXpPlane): the counts,
    ** the clock and the memory size below 2^63, the peaks finite, >= 1 */
    xBindBytes(pSt, 7, (m.has>>DS_CORES)&1, m.a[DS_CORES]);
    xBindBytes(pSt, 8, (m.has>>DS_CLOCK)&1, m.a[DS_CLOCK]);
    xBindBytes(pSt, 9, (m.has>>DS_MEMSIZE)&1, m.a[DS_MEMSIZE]);
    if( m.has & (1u<<DS_PEAK_TF) ){
      sqlite3_bind_double(pSt, 10, m.a[DS_PEAK_TF]); fromPlane = 1;
    }else if( (pk = xPeakFor(aPeak, nPeak, zDev, 1))!=0 ){
      sqlite3_bind_double(pSt, 10, pk->flops); fromOpt = 1;
    }else{
      sqlite3_bind_null(pSt, 10);
    }
    if( m.has & (1u<<DS_PEAK_HBM) ){
      sqlite3_bind_double(pSt, 11, m.a[DS_PEAK_HBM]); fromPlane = 1;
    }else if( m.has & (1u<<DS_MEMBW) ){
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
  ProfsumRowBuf b;
  int64_t i;
  int rc = profsumRowBufInit(&b, db, zSchema, "profsum_agg_xla_op",
    "trace_id, device, line_kind, name, hlo_op, hlo_module, hlo_category, framework_op, "
    "count, time_us, self_us, flops, model_flops, bytes_accessed", 14);
  for(i=0; rc==SQLITE_OK && i<p->nAgg; i++){
    const XAgg *a = &p->aAgg[i];
    int kind = 0;
    const char *zDev = xTrackDevice(p, &p->aTrk[a->trk], &kind);
    if( zDev==0 ) continue;
    profsumRowBufInt(&b, traceId);
    profsumRowBufTextStatic(&b, zDev, -1);
    profsumRowBufTextStatic(&b, azLineKind[kind], -1);
    xRowId(p, &b, a->name);
    xRowId(p, &b, a->hloOp);
    xRowId(p, &b, a->module);
    xRowId(p, &b, a->cat);
    xRowId(p, &b, a->fw);
    profsumRowBufInt(&b, a->count);
    profsumRowBufDouble(&b, (double)a->durPs/1e6);
    if( p->aTrk[a->trk].unsorted || p->aTrk[a->trk].tooDeep ) profsumRowBufNull(&b);
    else profsumRowBufDouble(&b, (double)a->selfPs/1e6);
    if( a->fl & XF_FLOPS ) profsumRowBufDouble(&b, a->flops); else profsumRowBufNull(&b);
    if( a->fl & XF_MFLOPS ) profsumRowBufDouble(&b, a->mflops); else profsumRowBufNull(&b);
    xRowBytes(&b, (a->fl & XF_BYTES)!=0, a->bytes);
    rc = profsumRowBufEnd(&b);
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&b);
  profsumRowBufFree(&b);
  return rc;
}

/* A step's span on a device, ps relative to the collector's base, and the
** device's name id (-1: not a /device: name, a host thread). */
typedef struct XSpan { int64_t step; int64_t s, e; int32_t dev; } XSpan;

/* qsort orders: records and intervals by start, spans by step then start. */
static int xRecCmp(const void *a, const void *b){
  const XRec *x = a, *y = b;
  return x->s<y->s ? -1 : x->s>y->s ? 1 : 0;
}
/* (see xRecCmp) */
static int xIvCmp(const void *a, const void *b){
  const XIv *x = a, *y = b;
  return x->s<y->s ? -1 : x->s>y->s ? 1 : 0;
}

/* The first index i in [0, n) with a[i].eMax > v (n when none): no record
** before it reaches past v. */
static int64_t xFirstReachingPast(const XRec *a, int64_t n, int64_t v){
  int64_t lo = 0, hi = n;
  while( lo<hi ){ int64_t mid = lo + (hi-lo)/2; if( a[mid].eMax<=v ) lo = mid+1; else hi = mid; }
  return lo;
}

/* The first index i with a[i].e > v. */
static int64_t xFirstEndAfter(const XIv *a, int64_t n, int64_t v){
  int64_t lo = 0, hi = n;
  while( lo<hi ){ int64_t mid = lo + (hi-lo)/2; if( a[mid].e<=v ) lo = mid+1; else hi = mid; }
  return lo;
}

/* (see xSteps) The order of the spans: by device name (none first, then
** bytewise, a prefix before what it starts), then by step, then by
** start. */
static int xStepInCmp(const void *pa, const void *pb){
  const ProfsumStepSpan *x = pa, *y = pb;
  if( x->zDev==0 || y->zDev==0 ){
    if( x->zDev!=y->zDev ) return x->zDev==0 ? -1 : 1;
  }else{
    int n = x->nDev<y->nDev ? x->nDev : y->nDev;
    int c = memcmp(x->zDev, y->zDev, (size_t)n);
    if( c ) return c;
    if( x->nDev!=y->nDev ) return x->nDev<y->nDev ? -1 : 1;
  }
  if( x->step!=y->step ) return x->step<y->step ? -1 : 1;
  return x->start<y->start ? -1 : x->start>y->start ? 1 : 0;
}

/* 1 when the step spans x and y are of the same device (or both of none). */
static int xSameDevice(const ProfsumStepSpan *x, const ProfsumStepSpan *y){
  if( x->zDev==0 || y->zDev==0 ) return x->zDev==y->zDev;
  return x->nDev==y->nDev && memcmp(x->zDev, y->zDev, (size_t)x->nDev)==0;
}

/* The step spans aS[0..nIn) (the trace's, profsumEngineStepSpans; sorted
** here in place) as *paSpan (sqlite3_malloc'd; 0 when there are none):
** the spans of one (device, step) merged into the pieces of their union
** (spans that overlap or touch are one piece; a gap between two starts
** another piece of the same step), relative to the base, ordered by
** device, step and start, with the device names that are /device: names
** interned.  SQLITE_OK or SQLITE_NOMEM. */
static int xSteps(InsXla *p, ProfsumStepSpan *aS, int64_t nIn, XSpan **paSpan, int64_t *pn){
  XSpan *a;
  int64_t i, n = 0;
  int rc = SQLITE_OK;
  *paSpan = 0; *pn = 0;
  if( nIn==0 ) return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(XSpan)*(sqlite3_uint64)nIn);
  if( a==0 ) return SQLITE_NOMEM;
  qsort(aS, (size_t)nIn, sizeof(ProfsumStepSpan), xStepInCmp);
  for(i=0; i<nIn && rc==SQLITE_OK; i++){
    const ProfsumStepSpan *x = &aS[i];
    int32_t id = -1;
    if( n>0 && aS[i-1].step==x->step && xSameDevice(x, &aS[i-1])
     && (int64_t)(x->start - p->base)<=a[n-1].e ){
      /* the same (device, step), overlapping or touching the piece before */
      if( (int64_t)(x->end - p->base)>a[n-1].e ) a[n-1].e = (int64_t)(x->end - p->base);
      continue;
    }
    if( x->zDev && insXlaIsDevice(x->zDev, x->nDev) ) rc = insXlaIntern(&p->pool, x->zDev, x->nDev, &id);
    a[n].step = x->step;
    a[n].s = (int64_t)(x->start - p->base);
    a[n].e = (int64_t)(x->end - p->base);
    a[n].dev = id;
    n++;
  }
  if( rc ){ sqlite3_free(a); return rc; }
  *paSpan = a; *pn = n;
  return SQLITE_OK;
}

/* Put track t's intervals and records in time order (a line read out of
** order), the merged intervals merged again where they overlap or touch.
** 1 when that is exact (the lists were not coarsened), else 0. */
static int xSortTrack(XTrack *t){
  int64_t i, n = 0;
  qsort(t->aIv, (size_t)t->nIv, sizeof(XIv), xIvCmp);
  for(i=0; i<t->nIv; i++){
    XIv v = t->aIv[i];
    XIv *o = n>0 ? &t->aIv[n-1] : 0;
    if( o && o->busy==o->e-o->s && v.busy==v.e-v.s && v.s<=o->e ){
      if( v.e>o->e ){ o->e = v.e; o->busy = o->e - o->s; }
    }else{
      t->aIv[n++] = v;
    }
  }
  t->nIv = n;
  if( t->nRec>1 ) qsort(t->aRec, (size_t)t->nRec, sizeof(XRec), xRecCmp);
  return !t->coarse;
}

/* Set the search key eMax of track t's records (in start order). */
static void xRecReach(XTrack *t){
  int64_t i;
  for(i=0; i<t->nRec; i++){
    t->aRec[i].eMax = (i>0 && t->aRec[i-1].eMax>t->aRec[i].e) ? t->aRec[i-1].eMax : t->aRec[i].e;
  }
}

/* The busy time of tracks ap[0..n) within [a, b): the union of their
** intervals (each track's sorted), merged on the fly (aIdx: scratch of n
** entries).  A merged (coarsened) interval cut by a or b counts for its
** busy time prorated, and one overlapping another track's for the share of
** it beyond the union so far: *pExact is then set to 0. */
static int64_t xBusy(XTrack *const *ap, int n, int64_t *aIdx, int64_t a, int64_t b, int *pExact){
  int64_t busy = 0, ce = 0, cb = 0;
  int i, has = 0, solidRun = 1;
  for(i=0; i<n; i++) aIdx[i] = xFirstEndAfter(ap[i]->aIv, ap[i]->nIv, a);
  for(;;){
    int best = -1, solid;
    int64_t s, e, c;
    const XIv *v;
    for(i=0; i<n; i++){
      if( aIdx[i]<ap[i]->nIv && ap[i]->aIv[aIdx[i]].s<b
       && (best<0 || ap[i]->aIv[aIdx[i]].s<ap[best]->aIv[aIdx[best]].s) ) best = i;
    }
    if( best<0 ) break;
    v = &ap[best]->aIv[aIdx[best]++];
    solid = v->busy==v->e-v->s;
    s = v->s<a ? a : v->s;
    e = v->e>b ? b : v->e;
    if( e<=s ) continue;
    if( solid || (s==v->s && e==v->e) ){
      c = solid ? e - s : v->busy;
    }else{
      c = (int64_t)((double)v->busy * (double)(e - s) / (double)(v->e - v->s));
      *pExact = 0;
    }
    if( !has || s>ce ){
      if( has ) busy += cb;
      ce = e; cb = c; has = 1; solidRun = solid;
    }else if( solid && solidRun ){
      if( e>ce ){ cb += e - ce; ce = e; }
    }else{
      if( e>ce ){ cb += (int64_t)((double)c * (double)(e - ce) / (double)(e - s)); ce = e; }
      solidRun = 0;
      *pExact = 0;
    }
  }
  if( has ) busy += cb;
  return busy;
}

/* The FLOPs and bytes of tracks ap[0..n) in [a, b) (all: bAll): each op's
** spread over its span [s, e) in proportion of its time in [a, b) (the
** part of an op that straddles a step boundary goes to each step, so a
** step's FLOPs and its busy time count the same time); sums in *pFl, *pBy,
** whether any event had them in *pnF, *pnB.  A coarsened record (several
** ops merged, gaps between them) cut by a or b is spread over its span the
** same way, which is not its ops' own spread (*pExact set to 0). */
static void xSums(XTrack *const *ap, int n, int64_t a, int64_t b, int bAll,
                  double *pFl, double *pBy, int64_t *pnF, int64_t *pnB, int *pExact){
  int i;
  int64_t j;
  for(i=0; i<n; i++){
    const XTrack *t = ap[i];
    for(j=(bAll ? 0 : xFirstReachingPast(t->aRec, t->nRec, a)); j<t->nRec && (bAll || t->aRec[j].s<b); j++){
      const XRec *r = &t->aRec[j];
      double f = 1.0;
      if( !bAll && (r->s<a || r->e>b) ){
        int64_t lo = r->s<a ? a : r->s, hi = r->e>b ? b : r->e;
        if( hi<=lo || r->e<=r->s ) continue;
        f = (double)(hi - lo) / (double)(r->e - r->s);
        if( r->nOp>1 ) *pExact = 0;
      }
      *pFl += r->mflops * f; *pnF += r->nF;
      *pBy += r->bytes * f; *pnB += r->nB;
    }
  }
}

/* One row of profsum_agg_xla_util (bytes: INTEGER when whole, else the
** REAL share). */
static int xUtilRow(ProfsumRowBuf *pRb, sqlite3_int64 traceId, const char *zDev, int hasStep, int64_t step,
                    double wallUs, double busyUs, int64_t nF, double fl, int64_t nB, double by,
                    const char *zSource, int exact){
  profsumRowBufInt(pRb, traceId);
  profsumRowBufTextStatic(pRb, zDev, -1);
  if( hasStep ) profsumRowBufInt(pRb, step); else profsumRowBufNull(pRb);
  profsumRowBufDouble(pRb, wallUs);
  profsumRowBufDouble(pRb, busyUs);
  if( nF>0 ) profsumRowBufDouble(pRb, fl); else profsumRowBufNull(pRb);
  /* a step's bytes unrounded (an op's share by time: REAL when not whole,
  ** so that its rates are the ops' own; the view shows them rounded); a
  ** whole sum INTEGER while it fits (as xBindBytes) */
  if( nB>0 && by==floor(by) && xBytesFit(by) ){
    profsumRowBufInt(pRb, (sqlite3_int64)llround(by));
  }else if( nB>0 ){
    profsumRowBufDouble(pRb, by);
  }else{
    profsumRowBufNull(pRb);
  }
  if( zSource ) profsumRowBufTextStatic(pRb, zSource, -1); else profsumRowBufNull(pRb);
  profsumRowBufInt(pRb, exact);
  return profsumRowBufEnd(pRb);
}

/* Write the utilization rows of device zDev from its device-op tracks
** ap[0..n) (aIdx: scratch of n entries): one per step of aSp[0..nSp)
** (its own steps, or the host's; the pieces of one step's union, which
** come one after the other, added up), and one with step NULL for the capture,
** whose busy and span come from the summary's profsum_agg_device row
** (pDevQ, bound to the trace and the device) when it has one. */
static int xWriteUtilDevice(ProfsumRowBuf *pSt, sqlite3_stmt *pDevQ, sqlite3_int64 traceId, const char *zDev,
                            XTrack *const *ap, int n, int64_t *aIdx, int exactLines,
                            const XSpan *aSp, int64_t nSp, int own){
  int64_t k, capS = 0, capE = 0, nF = 0, nB = 0;
  int rc = SQLITE_OK, i, hasCap = 0, exact = exactLines;
  double fl = 0, by = 0, wallUs, busyUs;
  for(i=0; i<n; i++){
    const XTrack *t = ap[i];
    int64_t j;
    for(j=0; j<t->nIv; j++){
      if( !hasCap || t->aIv[j].s<capS ) capS = t->aIv[j].s;
      if( !hasCap || t->aIv[j].e>capE ) capE = t->aIv[j].e;
      hasCap = 1;
    }
  }
  if( !hasCap ) return SQLITE_OK;
  /* the capture */
  xSums(ap, n, 0, 0, 1, &fl, &by, &nF, &nB, &exact);
  sqlite3_bind_text(pDevQ, 2, zDev, -1, SQLITE_STATIC);
  if( sqlite3_step(pDevQ)==SQLITE_ROW ){
    busyUs = sqlite3_column_double(pDevQ, 0);
    wallUs = sqlite3_column_double(pDevQ, 1);
    exact = 1;
  }else{
    int ex = exactLines;
    busyUs = (double)xBusy(ap, n, aIdx, capS, capE, &ex)/1e6;
    wallUs = (double)(capE - capS)/1e6;
    exact = ex;
  }
  rc = sqlite3_reset(pDevQ);
  if( rc==SQLITE_OK ) rc = xUtilRow(pSt, traceId, zDev, 0, 0, wallUs, busyUs, nF, fl, nB, by, 0, exact);
  for(k=0; rc==SQLITE_OK && k<nSp; ){
    /* one row per step: its pieces aSp[k..) added up */
    int64_t step = aSp[k].step, wall = 0, busy = 0;
    int ex = exactLines;
    fl = by = 0; nF = nB = 0;
    for(; k<nSp && aSp[k].step==step; k++){
      int64_t a = aSp[k].s, b = aSp[k].e;
      wall += b - a;
      busy += xBusy(ap, n, aIdx, a, b, &ex);
      xSums(ap, n, a, b, 0, &fl, &by, &nF, &nB, &ex);
    }
    rc = xUtilRow(pSt, traceId, zDev, 1, step, (double)wall/1e6, (double)busy/1e6, nF, fl, nB, by,
                  own ? "device_steps" : "host_steps", ex);
  }
  return rc;
}

/* (see xRecCmp) */
static int xSpanStepCmp(const void *a, const void *b){
  const XSpan *x = a, *y = b;
  return x->step<y->step ? -1 : x->step>y->step ? 1 : (x->s<y->s ? -1 : x->s>y->s);
}

/* Write profsum_agg_xla_util: per device, the busy time, FLOPs and bytes
** per step and for the whole capture.  aHeadTrk[name id]: the device's
** first device-op track, aNextTrk[track]: the next of its device (-1). */
static int xWriteUtil(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                      const XSpan *aSp, int64_t nSp,
                      const int32_t *aHeadTrk, const int32_t *aNextTrk){
  sqlite3_stmt *pDevQ = 0;
  ProfsumRowBuf rb;
  XSpan *aHost = 0; int64_t nHost = 0, k;
  XTrack **ap = 0;
  int64_t *aIdx = 0;
  int32_t i, j;
  int rc;
  if( !p->hasBase ) return SQLITE_OK;
  memset(&rb, 0, sizeof(rb));
  ap = sqlite3_malloc64(sizeof(XTrack*)*(sqlite3_uint64)(p->nTrk+1));
  aIdx = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(p->nTrk+1));
  aHost = sqlite3_malloc64(sizeof(XSpan)*(sqlite3_uint64)(nSp+1));
  if( ap==0 || aIdx==0 || aHost==0 ){ rc = SQLITE_NOMEM; goto done; }
  /* host steps: the spans of one step on every host thread merged into
  ** the pieces of their union */
  for(k=0; k<nSp; k++) if( aSp[k].dev<0 ) aHost[nHost++] = aSp[k];
  qsort(aHost, (size_t)nHost, sizeof(XSpan), xSpanStepCmp);
  for(k=0, j=0; k<nHost; k++){
    if( j>0 && aHost[j-1].step==aHost[k].step && aHost[k].s<=aHost[j-1].e ){
      if( aHost[k].e>aHost[j-1].e ) aHost[j-1].e = aHost[k].e;
    }else{
      aHost[j++] = aHost[k];
    }
  }
  nHost = j;
  /* the rows in batches (rowbuf.c) */
  rc = profsumRowBufInit(&rb, db, zSchema, "profsum_agg_xla_util", "trace_id, device, step, wall_us, "
                         "busy_us, mfu_flops, bytes_accessed, step_source, exact", 9);
  if( rc==SQLITE_OK ) rc = xPrepare(db, zSchema, &pDevQ,
    "SELECT busy_duration, span_duration FROM \"%w\".profsum_agg_device WHERE trace_id=?1 AND device=?2");
  if( rc==SQLITE_OK ) sqlite3_bind_int64(pDevQ, 1, traceId);
  for(i=0; rc==SQLITE_OK && i<p->pool.n; i++){
    int n = 0, exactLines = 1;
    int64_t k0 = 0, k1 = 0;
    if( aHeadTrk[i]<0 ) continue;
    for(j=aHeadTrk[i]; j>=0; j=aNextTrk[j]){
      XTrack *t = &p->aTrk[j];
      if( t->nIv==0 ) continue;
      if( t->unsorted && !xSortTrack(t) ) exactLines = 0;
      xRecReach(t);
      ap[n++] = t;
    }
    if( n==0 ) continue;
    /* the device's own steps (aSp is ordered by device), else the host's */
    for(k0=0; k0<nSp && aSp[k0].dev!=i; k0++){}
    for(k1=k0; k1<nSp && aSp[k1].dev==i; k1++){}
    if( k1>k0 ){
      rc = xWriteUtilDevice(&rb, pDevQ, traceId, p->pool.az[i], ap, n, aIdx, exactLines, &aSp[k0], k1-k0, 1);
    }else{
      rc = xWriteUtilDevice(&rb, pDevQ, traceId, p->pool.az[i], ap, n, aIdx, exactLines, aHost, nHost, 0);
    }
  }
  if( rc==SQLITE_OK ) rc = profsumRowBufFlush(&rb);
done:
  profsumRowBufFree(&rb);
  sqlite3_finalize(pDevQ);
  sqlite3_free(aHost);
  sqlite3_free(ap);
  sqlite3_free(aIdx);
  return rc;
}

/* See insights_int.h. */
int insXlaWrite(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                ProfsumStepSpan *aSpan, int64_t nSpan, const char *zDevicePeaks,
                const char *zFunc, char **pzErr){
  XPeak *aPeak = 0;
  int nPeak = 0, rc, kind;
  int32_t i, *aFirstProc = 0, *aNextProc = 0, *aHeadTrk = 0, *aNextTrk = 0, *aTailTrk = 0;
  int64_t nUnsorted = 0, nSp = 0;
  XSpan *aSp = 0;
  sqlite3_stmt *pSt = 0;
  rc = xLoadPeaks(db, zDevicePeaks, zFunc, &aPeak, &nPeak, pzErr);
  if( rc ) return rc;
  /* the step spans (their device names interned), then the processes and
  ** device-op tracks grouped by device name */
  if( p->hasBase ) rc = xSteps(p, aSpan, nSpan, &aSp, &nSp);
  if( rc==SQLITE_OK ){
    sqlite3_uint64 nName = (sqlite3_uint64)p->pool.n + 1;
    aFirstProc = sqlite3_malloc64(sizeof(int32_t)*nName);
    aHeadTrk = sqlite3_malloc64(sizeof(int32_t)*nName);
    aTailTrk = sqlite3_malloc64(sizeof(int32_t)*nName);
    aNextProc = sqlite3_malloc64(sizeof(int32_t)*((sqlite3_uint64)p->nProc+1));
    aNextTrk = sqlite3_malloc64(sizeof(int32_t)*((sqlite3_uint64)p->nTrk+1));
    if( !aFirstProc || !aHeadTrk || !aTailTrk || !aNextProc || !aNextTrk ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    for(i=0; i<p->pool.n; i++) aFirstProc[i] = aHeadTrk[i] = aTailTrk[i] = -1;
    for(i=p->nProc-1; i>=0; i--){
      int32_t nm = p->aProc[i].name;
      aNextProc[i] = -1;
      if( nm<0 ) continue;
      aNextProc[i] = aFirstProc[nm];
      aFirstProc[nm] = i;
    }
    for(i=0; i<p->nTrk; i++){
      int32_t nm = p->aProc[p->aTrk[i].proc].name;
      aNextTrk[i] = -1;
      if( xTrackDevice(p, &p->aTrk[i], &kind)==0 ) continue;
      if( p->aTrk[i].unsorted ) nUnsorted++;
      if( aTailTrk[nm]<0 ) aHeadTrk[nm] = i; else aNextTrk[aTailTrk[nm]] = i;
      aTailTrk[nm] = i;
    }
    rc = xPrepare(db, zSchema, &pSt,
      "INSERT OR REPLACE INTO \"%w\".profsum_agg_xla_trace(trace_id, source, n_device_ops, n_flops_ops, "
      "n_model_flops_ops, n_bytes_ops, unsorted_lines) VALUES(?1,?2,?3,?4,?5,?6,?7)");
  }
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
  if( rc==SQLITE_OK ) rc = xWriteDevices(p, db, zSchema, traceId, aPeak, nPeak, aFirstProc, aNextProc);
  if( rc==SQLITE_OK ) rc = insDiagWrite(&p->diag, db, zSchema, traceId);
  if( rc==SQLITE_OK ) rc = xWriteOps(p, db, zSchema, traceId);
  if( rc==SQLITE_OK ) rc = xWriteUtil(p, db, zSchema, traceId, aSp, nSp, aHeadTrk, aNextTrk);
  for(i=0; i<nPeak; i++) sqlite3_free(aPeak[i].zKey);
  sqlite3_free(aPeak);
  sqlite3_free(aSp);
  sqlite3_free(aFirstProc); sqlite3_free(aNextProc);
  sqlite3_free(aHeadTrk); sqlite3_free(aNextTrk); sqlite3_free(aTailTrk);
  if( rc && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("%s: writing device limits and op profiles: %s", zFunc,
                             rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
  }
  return rc;
}
