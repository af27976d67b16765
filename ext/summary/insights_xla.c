/*
** insights_xla.c — the InsXla collector of insights_int.h: devices and
** their limits, FLOPs and bytes per HLO op and category (roofline,
** utilization, op profile).  docs/roofline.md gives the formulas.
**
** Collected while the readers walk the file, aggregated on the fly:
**   - per device plane (XPlane) or /device: process (JSON): its stats
**     (vendor, model, clock, cores, memory, peaks);
**   - per device-op event (XLA Ops, Async XLA Ops and Stream # lines of a
**     /device: plane or process, summary §1.4): one entry per (line,
**     shown name, hlo_op, hlo_module, hlo_category, framework op name)
**     with count, Σ duration, Σ self duration (the duration less that of
**     the events it contains on its line, lines read in time order),
**     Σ flops, Σ model_flops, Σ bytes_accessed;
**   - per line, its busy time as merged intervals: events without FLOPs
**     or bytes merge into the interval before them when they overlap or
**     touch it; an event with FLOPs or bytes keeps an interval of its own
**     (so that its FLOPs go to the step it starts in).  Memory grows with
**     the idle gaps of a line and the events that carry FLOPs or bytes,
**     not with the events.
** The write (in the import's transaction, after the summary's aggregates
** and the step spans) stores profsum_agg_xla_trace (one row: the import
** ran this collector), profsum_agg_xla_device, profsum_agg_xla_op and
** profsum_agg_xla_util (per device × step, and step NULL for the whole
** capture); the views of views/devices.sql, roofline.sql, utilization.sql,
** op_profile.sql and kpis_xla.sql read them.  The report sections are in
** insights_xla_report.c.
**
** JSON traces: pid and tid must be non-negative integers (as the summary
** reads them); process and thread names (M events) may come anywhere, so
** events of a pid whose name is not known yet are collected and those of
** a non-device process dropped at the write.  Args as TSL writes them
** (numbers as strings) are read too.
*/
#include "insights_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Interned strings                                                    */

typedef struct XPool {
  char **az;            /* strings, NUL-terminated (owned) */
  int64_t *an;          /* their lengths */
  int32_t n, nAlloc;
  int32_t *aSlot;       /* hash slots: id + 1, 0 empty */
  int64_t nSlot;
} XPool;

static uint64_t xHashBytes(const char *z, int64_t n){
  uint64_t h = 1469598103934665603ULL;
  int64_t i;
  for(i=0; i<n; i++){ h ^= (unsigned char)z[i]; h *= 1099511628211ULL; }
  return h;
}

/* Free the pool's memory. */
static void xPoolFree(XPool *p){
  int32_t i;
  for(i=0; i<p->n; i++) sqlite3_free(p->az[i]);
  sqlite3_free(p->az); sqlite3_free(p->an); sqlite3_free(p->aSlot);
  memset(p, 0, sizeof(*p));
}

/* The id of z[0..n) in *pId (interned when new).  SQLITE_OK or NOMEM. */
static int xIntern(XPool *p, const char *z, int64_t n, int32_t *pId){
  uint64_t h;
  int64_t i;
  if( (int64_t)(p->n+1)*2 > p->nSlot ){
    int64_t nNew = p->nSlot ? p->nSlot*2 : 256;
    int32_t *a = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nNew);
    int32_t k;
    if( a==0 ) return SQLITE_NOMEM;
    memset(a, 0, sizeof(int32_t)*(size_t)nNew);
    for(k=0; k<p->n; k++){
      h = xHashBytes(p->az[k], p->an[k]);
      for(i=(int64_t)(h & (uint64_t)(nNew-1)); a[i]; i=(i+1)&(nNew-1)){}
      a[i] = k+1;
    }
    sqlite3_free(p->aSlot);
    p->aSlot = a; p->nSlot = nNew;
  }
  h = xHashBytes(z, n);
  for(i=(int64_t)(h & (uint64_t)(p->nSlot-1)); p->aSlot[i]; i=(i+1)&(p->nSlot-1)){
    int32_t k = p->aSlot[i]-1;
    if( p->an[k]==n && (n==0 || memcmp(p->az[k], z, (size_t)n)==0) ){ *pId = k; return SQLITE_OK; }
  }
  if( p->n>=p->nAlloc ){
    int32_t nNew = p->nAlloc ? p->nAlloc*2 : 128;
    char **az = sqlite3_realloc64(p->az, sizeof(char*)*(sqlite3_uint64)nNew);
    int64_t *an;
    if( az==0 ) return SQLITE_NOMEM;
    p->az = az;
    an = sqlite3_realloc64(p->an, sizeof(int64_t)*(sqlite3_uint64)nNew);
    if( an==0 ) return SQLITE_NOMEM;
    p->an = an;
    p->nAlloc = nNew;
  }
  p->az[p->n] = sqlite3_malloc64((sqlite3_uint64)n+1);
  if( p->az[p->n]==0 ) return SQLITE_NOMEM;
  if( n ) memcpy(p->az[p->n], z, (size_t)n);
  p->az[p->n][n] = 0;
  p->an[p->n] = n;
  p->aSlot[i] = p->n+1;
  *pId = p->n++;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* A map of 64-bit keys (pairs of ints packed by the caller) to ints    */

typedef struct XMap { uint64_t *aKey; int32_t *aVal; int64_t nSlot, nUsed; } XMap;

static uint64_t xMix(uint64_t k){
  k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL; k ^= k >> 33;
  return k;
}

static void xMapFree(XMap *m){
  sqlite3_free(m->aKey); sqlite3_free(m->aVal);
  memset(m, 0, sizeof(*m));
}

/* The value slot of key in *ppVal (a new key gets value -1, *pNew 1).
** SQLITE_OK or SQLITE_NOMEM. */
static int xMapGet(XMap *m, uint64_t key, int32_t **ppVal, int *pNew){
  int64_t i;
  if( (m->nUsed+1)*2 > m->nSlot ){
    int64_t nNew = m->nSlot ? m->nSlot*2 : 64, j;
    uint64_t *aK = sqlite3_malloc64(sizeof(uint64_t)*(sqlite3_uint64)nNew);
    int32_t *aV = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nNew);
    if( aK==0 || aV==0 ){ sqlite3_free(aK); sqlite3_free(aV); return SQLITE_NOMEM; }
    for(j=0; j<nNew; j++) aV[j] = -2;          /* -2: empty slot */
    for(j=0; j<m->nSlot; j++){
      if( m->aVal[j]==-2 ) continue;
      for(i=(int64_t)(xMix(m->aKey[j]) & (uint64_t)(nNew-1)); aV[i]!=-2; i=(i+1)&(nNew-1)){}
      aK[i] = m->aKey[j]; aV[i] = m->aVal[j];
    }
    sqlite3_free(m->aKey); sqlite3_free(m->aVal);
    m->aKey = aK; m->aVal = aV; m->nSlot = nNew;
  }
  for(i=(int64_t)(xMix(key) & (uint64_t)(m->nSlot-1)); m->aVal[i]!=-2; i=(i+1)&(m->nSlot-1)){
    if( m->aKey[i]==key ){ *ppVal = &m->aVal[i]; *pNew = 0; return SQLITE_OK; }
  }
  m->aKey[i] = key; m->aVal[i] = -1; m->nUsed++;
  *ppVal = &m->aVal[i]; *pNew = 1;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* The collector's records                                             */

/* Device stats of a plane (numbers: has bit i set when field i is known). */
#define DS_CAP_MAJOR 0
#define DS_CAP_MINOR 1
#define DS_CORES     2
#define DS_CLOCK     3
#define DS_MEMSIZE   4
#define DS_MEMBW     5
#define DS_PEAK_TF   6
#define DS_PEAK_HBM  7
#define DS_N         8
static const char *const azDevStat[DS_N] = {
  "compute_cap_major", "compute_cap_minor", "core_count", "clock_rate", "memory_size",
  "memory_bandwidth", "peak_teraflops_per_second", "peak_hbm_bw_gigabytes_per_second"
};

/* A process: an XPlane plane, or a JSON pid. */
typedef struct XProc {
  int32_t name;         /* interned name, -1: not known (yet) */
  int hasEvents;        /* any event of the plane / pid (not M) */
  int32_t vendor, model;  /* device_vendor, device_type_string: ids or -1 */
  unsigned has;         /* bit DS_*: a[] known */
  double a[DS_N];
} XProc;

/* Line kinds. */
#define LK_UNKNOWN 0    /* JSON: thread name not known yet */
#define LK_XLA     1    /* XLA Ops */
#define LK_ASYNC   2    /* Async XLA Ops */
#define LK_STREAM  3    /* Stream #... (GPU) */
#define LK_OTHER   4    /* not a device-op line */
static const char *const azLineKind[] = { 0, "xla_ops", "async_xla_ops", "stream", 0 };

/* An interval of busy time on a line, ps relative to the collector's base. */
typedef struct XRec {
  int64_t s, e;
  double mflops;        /* Σ per event: model_flops, else flops (MFU) */
  double bytes;         /* Σ bytes_accessed */
  unsigned char fl;     /* XF_MFLOPS | XF_BYTES: carried by its events */
} XRec;

/* The nesting stack of a line (self time). */
typedef struct XStk { int64_t e; int32_t agg; } XStk;

/* A line (XPlane) or a (pid, tid) track (JSON). */
typedef struct XTrack {
  int32_t proc;         /* index in aProc */
  int32_t thread;       /* JSON: thread name id, -1 unknown */
  int kind;             /* LK_* (JSON: resolved at the write) */
  int unsorted;         /* an event started before the one before it */
  int hasLast; int64_t lastS;
  XStk *aStk; int32_t nStk, nAllocStk;
  XRec *aRec; int64_t nRec, nAllocRec;
} XTrack;

#define XF_FLOPS   0x01
#define XF_MFLOPS  0x02
#define XF_BYTES   0x04
#define XF_SELFUNK 0x08

/* One aggregate of device-op events. */
typedef struct XAgg {
  int32_t trk, name, hloOp, module, cat, fw;   /* ids, -1: absent */
  int64_t count, durPs, selfPs;
  double flops, mflops, bytes;
  unsigned fl;          /* XF_* */
} XAgg;

/* What the stats of an event (or of its metadata) give. */
typedef struct XOpStats {
  int32_t hloOp, module, cat, fw;
  unsigned fl;          /* XF_FLOPS, XF_MFLOPS (model_flops), XF_BYTES */
  double flops, mflops, bytes;
} XOpStats;

struct InsXla {
  XPool pool;
  XProc *aProc; int32_t nProc, nAllocProc;
  XTrack *aTrk; int32_t nTrk, nAllocTrk;
  XAgg *aAgg; int64_t nAgg, nAllocAgg;
  int32_t *aAggSlot; int64_t nAggSlot;
  XMap jsonProc;        /* JSON pid → proc */
  XMap jsonTrk;         /* JSON (pid, tid) → track */
  int isJson;
  int hasBase; profsum_ps base;   /* absolute ps of the first device-op event */
  /* XPlane: the current plane and line */
  int32_t curProc;
  int curDev;           /* the current plane is a /device: plane */
  int64_t curLine;      /* iFirstEvent of the current line, -1 none */
  int32_t curTrk;       /* its track, -1: not a device-op line */
  XMap metaCache;       /* plane's metadata key → aMeta index */
  XOpStats *aMeta; int64_t nMeta, nAllocMeta;
  char *zBuf; int64_t nBuf;       /* scratch text */
  int64_t nDevOps, nFlopsOps, nMflopsOps, nBytesOps;
};

/* See insights_int.h. */
int insXlaNew(InsXla **pp){
  *pp = sqlite3_malloc64(sizeof(InsXla));
  if( *pp==0 ) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof(InsXla));
  (*pp)->curProc = -1;
  (*pp)->curLine = -1;
  (*pp)->curTrk = -1;
  return SQLITE_OK;
}

/* See insights_int.h. */
void insXlaFree(InsXla *p){
  int32_t i;
  if( p==0 ) return;
  xPoolFree(&p->pool);
  for(i=0; i<p->nTrk; i++){ sqlite3_free(p->aTrk[i].aStk); sqlite3_free(p->aTrk[i].aRec); }
  sqlite3_free(p->aTrk);
  sqlite3_free(p->aProc);
  sqlite3_free(p->aAgg);
  sqlite3_free(p->aAggSlot);
  xMapFree(&p->jsonProc);
  xMapFree(&p->jsonTrk);
  xMapFree(&p->metaCache);
  sqlite3_free(p->aMeta);
  sqlite3_free(p->zBuf);
  sqlite3_free(p);
}

/* A new process in *pIdx.  SQLITE_OK or SQLITE_NOMEM. */
static int xNewProc(InsXla *p, int32_t *pIdx){
  XProc *q;
  if( p->nProc>=p->nAllocProc ){
    int32_t nNew = p->nAllocProc ? p->nAllocProc*2 : 16;
    XProc *a = sqlite3_realloc64(p->aProc, sizeof(XProc)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aProc = a; p->nAllocProc = nNew;
  }
  q = &p->aProc[p->nProc];
  memset(q, 0, sizeof(*q));
  q->name = q->vendor = q->model = -1;
  *pIdx = p->nProc++;
  return SQLITE_OK;
}

/* A new track of process proc in *pIdx.  SQLITE_OK or SQLITE_NOMEM. */
static int xNewTrack(InsXla *p, int32_t proc, int kind, int32_t *pIdx){
  XTrack *t;
  if( p->nTrk>=p->nAllocTrk ){
    int32_t nNew = p->nAllocTrk ? p->nAllocTrk*2 : 16;
    XTrack *a = sqlite3_realloc64(p->aTrk, sizeof(XTrack)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aTrk = a; p->nAllocTrk = nNew;
  }
  t = &p->aTrk[p->nTrk];
  memset(t, 0, sizeof(*t));
  t->proc = proc;
  t->thread = -1;
  t->kind = kind;
  *pIdx = p->nTrk++;
  return SQLITE_OK;
}

/* The line kind of a line or thread named z[0..n). */
static int xLineKind(const char *z, int64_t n){
  if( n==7 && memcmp(z, "XLA Ops", 7)==0 ) return LK_XLA;
  if( n==13 && memcmp(z, "Async XLA Ops", 13)==0 ) return LK_ASYNC;
  if( n>=8 && memcmp(z, "Stream #", 8)==0 ) return LK_STREAM;
  return LK_OTHER;
}

static int xIsDevice(const char *z, int64_t n){ return n>=8 && memcmp(z, "/device:", 8)==0; }

/* The aggregate of key k (made when new) in *pIdx.  SQLITE_OK or NOMEM. */
static int xAggGet(InsXla *p, const XAgg *k, int32_t *pIdx){
  uint64_t h;
  int64_t i;
  if( (p->nAgg+1)*2 > p->nAggSlot ){
    int64_t nNew = p->nAggSlot ? p->nAggSlot*2 : 1024, j;
    int32_t *a = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    memset(a, 0, sizeof(int32_t)*(size_t)nNew);
    for(j=0; j<p->nAgg; j++){
      const XAgg *q = &p->aAgg[j];
      h = xMix(((uint64_t)(uint32_t)q->trk<<32 | (uint32_t)q->name) ^ xMix((uint64_t)(uint32_t)q->hloOp<<32 | (uint32_t)q->module)
               ^ xMix((uint64_t)(uint32_t)q->cat<<32 | (uint32_t)q->fw));
      for(i=(int64_t)(h & (uint64_t)(nNew-1)); a[i]; i=(i+1)&(nNew-1)){}
      a[i] = (int32_t)j+1;
    }
    sqlite3_free(p->aAggSlot);
    p->aAggSlot = a; p->nAggSlot = nNew;
  }
  h = xMix(((uint64_t)(uint32_t)k->trk<<32 | (uint32_t)k->name) ^ xMix((uint64_t)(uint32_t)k->hloOp<<32 | (uint32_t)k->module)
           ^ xMix((uint64_t)(uint32_t)k->cat<<32 | (uint32_t)k->fw));
  for(i=(int64_t)(h & (uint64_t)(p->nAggSlot-1)); p->aAggSlot[i]; i=(i+1)&(p->nAggSlot-1)){
    const XAgg *q = &p->aAgg[p->aAggSlot[i]-1];
    if( q->trk==k->trk && q->name==k->name && q->hloOp==k->hloOp && q->module==k->module
     && q->cat==k->cat && q->fw==k->fw ){
      *pIdx = p->aAggSlot[i]-1;
      return SQLITE_OK;
    }
  }
  if( p->nAgg>=INT32_MAX-1 ) return SQLITE_TOOBIG;
  if( p->nAgg>=p->nAllocAgg ){
    int64_t nNew = p->nAllocAgg ? p->nAllocAgg*2 : 256;
    XAgg *a = sqlite3_realloc64(p->aAgg, sizeof(XAgg)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aAgg = a; p->nAllocAgg = nNew;
  }
  p->aAgg[p->nAgg] = *k;
  p->aAgg[p->nAgg].count = p->aAgg[p->nAgg].durPs = p->aAgg[p->nAgg].selfPs = 0;
  p->aAgg[p->nAgg].flops = p->aAgg[p->nAgg].mflops = p->aAgg[p->nAgg].bytes = 0;
  p->aAgg[p->nAgg].fl = 0;
  p->aAggSlot[i] = (int32_t)p->nAgg+1;
  *pIdx = (int32_t)p->nAgg++;
  return SQLITE_OK;
}

/* Add one device-op event of track trk: [s, s+dur) ps absolute, shown
** name id, its stats.  Aggregates, nests for self time, merges busy time. */
static int xAddOp(InsXla *p, int32_t trk, profsum_ps s, int64_t dur, int32_t name, const XOpStats *st){
  XTrack *t = &p->aTrk[trk];
  XAgg k, *a;
  int32_t ia;
  int64_t rs, re;
  int rc;
  profsum_ps rel;
  if( !p->hasBase ){ p->base = s; p->hasBase = 1; }
  rel = s - p->base;
  if( rel>((int64_t)1<<61) || rel<-((int64_t)1<<61) || dur>((int64_t)1<<61) ) return SQLITE_OK;
  rs = (int64_t)rel; re = rs + dur;
  memset(&k, 0, sizeof(k));
  k.trk = trk; k.name = name; k.hloOp = st->hloOp; k.module = st->module; k.cat = st->cat; k.fw = st->fw;
  if( (rc = xAggGet(p, &k, &ia))!=SQLITE_OK ) return rc;
  a = &p->aAgg[ia];
  a->count++;
  a->durPs += dur;
  a->selfPs += dur;
  if( st->fl & XF_FLOPS ){ a->flops += st->flops; a->fl |= XF_FLOPS; p->nFlopsOps++; }
  if( st->fl & XF_MFLOPS ){ a->mflops += st->mflops; a->fl |= XF_MFLOPS; p->nMflopsOps++; }
  if( st->fl & XF_BYTES ){ a->bytes += st->bytes; a->fl |= XF_BYTES; p->nBytesOps++; }
  p->nDevOps++;
  /* nesting on the line: the innermost open event that contains this one */
  if( t->hasLast && rs<t->lastS ) t->unsorted = 1;
  t->hasLast = 1; t->lastS = rs;
  if( t->unsorted ) a->fl |= XF_SELFUNK;
  while( t->nStk>0 && t->aStk[t->nStk-1].e<=rs ) t->nStk--;
  if( t->nStk>0 && t->aStk[t->nStk-1].e>=re && dur>0 ){
    p->aAgg[t->aStk[t->nStk-1].agg].selfPs -= dur;
  }
  if( dur>0 ){
    if( t->nStk>=t->nAllocStk ){
      int32_t nNew = t->nAllocStk ? t->nAllocStk*2 : 16;
      XStk *aS;
      if( nNew>1000000 ) nNew = t->nAllocStk;   /* absurd depth: stop nesting deeper */
      else{
        aS = sqlite3_realloc64(t->aStk, sizeof(XStk)*(sqlite3_uint64)nNew);
        if( aS==0 ) return SQLITE_NOMEM;
        t->aStk = aS; t->nAllocStk = nNew;
      }
    }
    if( t->nStk<t->nAllocStk ){ t->aStk[t->nStk].e = re; t->aStk[t->nStk].agg = ia; t->nStk++; }
  }
  /* busy time */
  {
    unsigned fl = st->fl & (XF_FLOPS|XF_MFLOPS|XF_BYTES);
    XRec *r = t->nRec ? &t->aRec[t->nRec-1] : 0;
    if( fl==0 && r && r->fl==0 && rs>=r->s && rs<=r->e ){
      if( re>r->e ) r->e = re;
      return SQLITE_OK;
    }
    if( t->nRec>=t->nAllocRec ){
      int64_t nNew = t->nAllocRec ? t->nAllocRec*2 : 64;
      XRec *aR = sqlite3_realloc64(t->aRec, sizeof(XRec)*(sqlite3_uint64)nNew);
      if( aR==0 ) return SQLITE_NOMEM;
      t->aRec = aR; t->nAllocRec = nNew;
    }
    r = &t->aRec[t->nRec++];
    r->s = rs; r->e = re; r->fl = 0; r->mflops = 0; r->bytes = 0;
    if( fl & (XF_FLOPS|XF_MFLOPS) ){
      r->mflops = (fl & XF_MFLOPS) ? st->mflops : st->flops;
      r->fl |= XF_MFLOPS;
    }
    if( fl & XF_BYTES ){ r->bytes = st->bytes; r->fl |= XF_BYTES; }
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Numbers from text                                                   */

/* 1 with *pd set when z[0..n) is a finite decimal number (surrounding
** spaces allowed), else 0. */
static int xTextNum(const char *z, int64_t n, double *pd){
  char zB[64];
  char *zEnd;
  double d;
  while( n>0 && (*z==' ' || *z=='\t') ){ z++; n--; }
  while( n>0 && (z[n-1]==' ' || z[n-1]=='\t') ) n--;
  if( n<=0 || n>=(int64_t)sizeof(zB) ) return 0;
  memcpy(zB, z, (size_t)n); zB[n] = 0;
  d = strtod(zB, &zEnd);
  if( zEnd!=zB+n || !isfinite(d) ) return 0;
  *pd = d;
  return 1;
}

/* ------------------------------------------------------------------ */
/* XPlane                                                              */

/* The number of stat st: 1 with *pd set, else 0 (strings holding a
** number count). */
static int xStatNum(const ProfsumXpStat *st, double *pd){
  switch( st->eType ){
    case PROFSUM_XV_DOUBLE: if( !isfinite(st->rVal) ) return 0; *pd = st->rVal; return 1;
    case PROFSUM_XV_UINT64: *pd = (double)st->uVal; return 1;
    case PROFSUM_XV_INT64:  *pd = (double)st->iVal; return 1;
    case PROFSUM_XV_STR:    return xTextNum(st->z, st->n, pd);
    default: return 0;
  }
}

/* The text of stat st interned in *pId (-1 when it holds no text). */
static int xStatText(InsXla *p, ProfsumXp *pXp, const ProfsumXpStat *st, int32_t *pId){
  const char *z = 0; int64_t n = 0;
  int rc;
  *pId = -1;
  if( st->eType==PROFSUM_XV_STR ){ z = st->z; n = st->n; }
  else if( st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_REF || st->eType==PROFSUM_XV_CSTR ){
    if( (rc = profsumXpStatText(pXp, st, &z, &n))!=SQLITE_OK ) return rc;
  }else if( st->eType==PROFSUM_XV_INT64 || st->eType==PROFSUM_XV_UINT64 ){
    char zB[32];
    if( st->eType==PROFSUM_XV_INT64 ) sqlite3_snprintf(sizeof(zB), zB, "%lld", (long long)st->iVal);
    else sqlite3_snprintf(sizeof(zB), zB, "%llu", (unsigned long long)st->uVal);
    return xIntern(&p->pool, zB, (int64_t)strlen(zB), pId);
  }
  if( z==0 || n==0 ) return SQLITE_OK;
  return xIntern(&p->pool, z, n, pId);
}

#define SN(st, lit) ((st)->nName==(int64_t)sizeof(lit)-1 && memcmp((st)->zName, lit, sizeof(lit)-1)==0)

/* Apply stats a[0..n) to *o (a later stat of a name replaces an earlier). */
static int xApplyStats(InsXla *p, ProfsumXp *pXp, const ProfsumXpStat *a, int n, XOpStats *o){
  int i, rc = SQLITE_OK;
  double d;
  for(i=0; i<n && rc==SQLITE_OK; i++){
    const ProfsumXpStat *st = &a[i];
    if( st->zName==0 ) continue;
    switch( st->nName ){
      case 4:
        if( SN(st, "name") ) rc = xStatText(p, pXp, st, &o->fw);
        break;
      case 5:
        if( SN(st, "flops") && xStatNum(st, &d) ){ o->flops = d; o->fl |= XF_FLOPS; }
        break;
      case 6:
        if( SN(st, "hlo_op") ) rc = xStatText(p, pXp, st, &o->hloOp);
        break;
      case 10:
        if( SN(st, "hlo_module") ) rc = xStatText(p, pXp, st, &o->module);
        break;
      case 11:
        if( SN(st, "model_flops") && xStatNum(st, &d) ){ o->mflops = d; o->fl |= XF_MFLOPS; }
        break;
      case 12:
        if( SN(st, "hlo_category") ) rc = xStatText(p, pXp, st, &o->cat);
        break;
      case 14:
        if( SN(st, "bytes_accessed") && xStatNum(st, &d) ){ o->bytes = d; o->fl |= XF_BYTES; }
        break;
    }
  }
  return rc;
}

/* See insights_int.h: a plane's name and device stats. */
int insXlaXpPlane(InsXla *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  int32_t ip;
  XProc *q;
  int rc, i, k;
  p->curLine = -1;
  p->curTrk = -1;
  p->curDev = xIsDevice(pl->zName, pl->nName);
  xMapFree(&p->metaCache);
  p->nMeta = 0;
  if( (rc = xNewProc(p, &ip))!=SQLITE_OK ) return rc;
  p->curProc = ip;
  q = &p->aProc[ip];
  if( pl->nName>0 && (rc = xIntern(&p->pool, pl->zName, pl->nName, &q->name))!=SQLITE_OK ) return rc;
  if( !p->curDev ) return SQLITE_OK;
  for(i=0; i<pl->nStat; i++){
    const ProfsumXpStat *st = &pl->aStat[i];
    double d;
    if( st->zName==0 ) continue;
    if( SN(st, "device_vendor") ){
      if( (rc = xStatText(p, pXp, st, &p->aProc[ip].vendor))!=SQLITE_OK ) return rc;
      continue;
    }
    if( SN(st, "device_type_string") ){
      if( (rc = xStatText(p, pXp, st, &p->aProc[ip].model))!=SQLITE_OK ) return rc;
      continue;
    }
    for(k=0; k<DS_N; k++){
      if( st->nName==(int64_t)strlen(azDevStat[k]) && memcmp(st->zName, azDevStat[k], (size_t)st->nName)==0 ){
        if( xStatNum(st, &d) ){ p->aProc[ip].a[k] = d; p->aProc[ip].has |= 1u<<k; }
        break;
      }
    }
  }
  return SQLITE_OK;
}

/* The stats of metadata m (cached per plane) in *pOut. */
static int xMetaStats(InsXla *p, ProfsumXp *pXp, const ProfsumXpEventMeta *m, XOpStats *pOut){
  int32_t *pv; int isNew, rc;
  if( (rc = xMapGet(&p->metaCache, (uint64_t)m->key, &pv, &isNew))!=SQLITE_OK ) return rc;
  if( !isNew && *pv>=0 ){ *pOut = p->aMeta[*pv]; return SQLITE_OK; }
  memset(pOut, 0, sizeof(*pOut));
  pOut->hloOp = pOut->module = pOut->cat = pOut->fw = -1;
  if( (rc = xApplyStats(p, pXp, m->aStat, m->nStat, pOut))!=SQLITE_OK ) return rc;
  if( p->nMeta>=p->nAllocMeta ){
    int64_t nNew = p->nAllocMeta ? p->nAllocMeta*2 : 64;
    XOpStats *a = sqlite3_realloc64(p->aMeta, sizeof(XOpStats)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aMeta = a; p->nAllocMeta = nNew;
  }
  p->aMeta[p->nMeta] = *pOut;
  *pv = (int32_t)p->nMeta++;
  return SQLITE_OK;
}

/* See insights_int.h: a device-op XEvent is aggregated. */
int insXlaXpEvent(InsXla *p, ProfsumXp *pXp, const ProfsumXpEvent *ev){
  const ProfsumXpLine *ln = ev->pLine;
  const ProfsumXpEventMeta *m = ev->pMeta;
  XOpStats st;
  int32_t name;
  int rc;
  if( p->curProc<0 ) return SQLITE_OK;
  p->aProc[p->curProc].hasEvents = 1;
  if( !p->curDev ) return SQLITE_OK;
  if( ln->iFirstEvent!=p->curLine ){
    int kind = ln->nDisplay>0 ? xLineKind(ln->zDisplay, ln->nDisplay) : xLineKind(ln->zName, ln->nName);
    p->curLine = ln->iFirstEvent;
    p->curTrk = -1;
    if( kind!=LK_OTHER && (rc = xNewTrack(p, p->curProc, kind, &p->curTrk))!=SQLITE_OK ) return rc;
  }
  if( p->curTrk<0 ) return SQLITE_OK;
  if( ev->eData!=PROFSUM_XD_OFFSET || ev->durationPs<=0 || m==0 || (m->nDisplay==0 && m->nName==0) ){
    return SQLITE_OK;
  }
  rc = m->nDisplay>0 ? xIntern(&p->pool, m->zDisplay, m->nDisplay, &name)
                     : xIntern(&p->pool, m->zName, m->nName, &name);
  if( rc==SQLITE_OK ) rc = xMetaStats(p, pXp, m, &st);
  if( rc==SQLITE_OK && ev->nStat>0 ) rc = xApplyStats(p, pXp, ev->aStat, ev->nStat, &st);
  if( rc ) return rc;
  return xAddOp(p, p->curTrk, (profsum_ps)ln->timestampNs*1000 + ev->offsetPs, ev->durationPs, name, &st);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/* The text of span v (a string, or a number as its text) interned in *pId,
** -1 when absent or of another type. */
static int xSpanText(InsXla *p, const ProfsumSpan *v, int32_t *pId){
  const char *z; int64_t n;
  *pId = -1;
  if( v->type==PROFSUM_JT_NUMBER ) return v->n>0 ? xIntern(&p->pool, v->z, v->n, pId) : SQLITE_OK;
  if( v->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  if( profsumSpanText(v, &p->zBuf, &p->nBuf, &z, &n) ) return SQLITE_NOMEM;
  if( n==0 ) return SQLITE_OK;
  return xIntern(&p->pool, z, n, pId);
}

/* The number of span v (a number, or a string holding one): 1 with *pd. */
static int xSpanNum(const ProfsumSpan *v, double *pd){
  if( v->type!=PROFSUM_JT_NUMBER && v->type!=PROFSUM_JT_STRING ) return 0;
  return xTextNum(v->z, v->n, pd);
}

/* The number of top-level member zKey of the args object text a[0..n):
** 1 with *pd set when present and a number (or a string holding one).
** A plain scan for "zKey" followed by ':' (args of traces are flat). */
static int xArgsNum(const ProfsumSpan *args, const char *zKey, double *pd){
  const char *z = args->z, *zEnd;
  int64_t nKey = (int64_t)strlen(zKey);
  if( args->type!=PROFSUM_JT_OBJECT || z==0 ) return 0;
  zEnd = z + args->n;
  while( z + nKey + 2 < zEnd ){
    const char *q = memchr(z, '"', (size_t)(zEnd - z));
    if( q==0 || q + nKey + 2 > zEnd ) return 0;
    if( memcmp(q+1, zKey, (size_t)nKey)==0 && q[1+nKey]=='"' ){
      const char *v = q + nKey + 2, *v2;
      while( v<zEnd && (*v==' ' || *v=='\t' || *v=='\n' || *v=='\r') ) v++;
      if( v<zEnd && *v==':' ){
        v++;
        while( v<zEnd && (*v==' ' || *v=='\t' || *v=='\n' || *v=='\r') ) v++;
        if( v<zEnd && *v=='"' ){
          v++;
          for(v2=v; v2<zEnd && *v2!='"'; v2++){}
          return v2<zEnd && xTextNum(v, v2-v, pd);
        }
        for(v2=v; v2<zEnd && *v2!=',' && *v2!='}' && *v2!=' ' && *v2!='\n'; v2++){}
        return xTextNum(v, v2-v, pd);
      }
    }
    z = q + 1;
  }
  return 0;
}

/* The process of JSON pid (made when new) in *pIdx. */
static int xJsonProc(InsXla *p, int64_t pid, int32_t *pIdx){
  int32_t *pv; int isNew, rc;
  if( (rc = xMapGet(&p->jsonProc, (uint64_t)pid, &pv, &isNew))!=SQLITE_OK ) return rc;
  if( isNew ){
    if( (rc = xNewProc(p, pIdx))!=SQLITE_OK ){ *pv = -1; return rc; }
    *pv = *pIdx;
  }
  *pIdx = *pv;
  return *pIdx<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* The track of JSON (pid, tid) in *pIdx (made when new; *pIdx -1 when the
** pid's process is known not to be a device).  pid, tid < 2^31. */
static int xJsonTrack(InsXla *p, int64_t pid, int64_t tid, int32_t *pIdx){
  int32_t *pv, proc; int isNew, rc;
  uint64_t key = (uint64_t)pid<<32 | (uint64_t)tid;
  if( (rc = xMapGet(&p->jsonTrk, key, &pv, &isNew))!=SQLITE_OK ) return rc;
  if( isNew ){
    if( (rc = xJsonProc(p, pid, &proc))!=SQLITE_OK ){ *pv = -1; return rc; }
    if( (rc = xNewTrack(p, proc, LK_UNKNOWN, pIdx))!=SQLITE_OK ){ *pv = -1; return rc; }
    *pv = *pIdx;
  }
  *pIdx = *pv;
  return *pIdx<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* See insights_int.h: M events name processes and threads; X events of
** device-op threads (or of threads not named yet) are aggregated. */
int insXlaJsonEvent(InsXla *p, const ProfsumEvent *ev){
  char ph;
  int32_t proc, trk, name;
  int rc;
  XOpStats st;
  const ProfsumSpan *nm = &ev->name;
  p->isJson = 1;
  if( ev->ph.n!=1 ) return SQLITE_OK;
  ph = ev->ph.z[0];
  if( ev->pid.kind!=PROFSUM_ID_INT || ev->pid.iVal<0 || ev->pid.iVal>=((int64_t)1<<31) ) return SQLITE_OK;
  if( ph=='M' ){
    const ProfsumSpan *v = &ev->aArg[PROFSUM_AK_NAME];
    int isProc, isThread;
    int32_t id;
    if( nm->type!=PROFSUM_JT_STRING || v->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
    isProc = nm->n==12 && memcmp(nm->z, "process_name", 12)==0;
    isThread = nm->n==11 && memcmp(nm->z, "thread_name", 11)==0;
    if( !isProc && !isThread ) return SQLITE_OK;
    if( (rc = xSpanText(p, v, &id))!=SQLITE_OK ) return rc;
    if( id<0 ) return SQLITE_OK;
    if( isProc ){
      if( (rc = xJsonProc(p, ev->pid.iVal, &proc))!=SQLITE_OK ) return rc;
      p->aProc[proc].name = id;
    }else{
      if( ev->tid.kind!=PROFSUM_ID_INT || ev->tid.iVal<0 || ev->tid.iVal>=((int64_t)1<<31) ) return SQLITE_OK;
      if( (rc = xJsonTrack(p, ev->pid.iVal, ev->tid.iVal, &trk))!=SQLITE_OK ) return rc;
      p->aTrk[trk].thread = id;
    }
    return SQLITE_OK;
  }
  if( (rc = xJsonProc(p, ev->pid.iVal, &proc))!=SQLITE_OK ) return rc;
  p->aProc[proc].hasEvents = 1;
  if( ph!='X' || !ev->hasTs || !ev->hasDur || ev->dur<0 ) return SQLITE_OK;
  if( ev->tid.kind!=PROFSUM_ID_INT || ev->tid.iVal<0 || ev->tid.iVal>=((int64_t)1<<31) ) return SQLITE_OK;
  {
    /* a process or thread known by now not to hold device ops: skipped */
    const XProc *q = &p->aProc[proc];
    if( q->name>=0 && !xIsDevice(p->pool.az[q->name], p->pool.an[q->name]) ) return SQLITE_OK;
  }
  if( (rc = xJsonTrack(p, ev->pid.iVal, ev->tid.iVal, &trk))!=SQLITE_OK ) return rc;
  {
    const XTrack *t = &p->aTrk[trk];
    if( t->thread>=0 && xLineKind(p->pool.az[t->thread], p->pool.an[t->thread])==LK_OTHER ) return SQLITE_OK;
  }
  if( nm->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  if( (rc = xSpanText(p, nm, &name))!=SQLITE_OK ) return rc;
  if( name<0 && (rc = xIntern(&p->pool, "", 0, &name))!=SQLITE_OK ) return rc;
  memset(&st, 0, sizeof(st));
  if( (rc = xSpanText(p, &ev->aArg[PROFSUM_AK_HLO_OP], &st.hloOp))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &ev->aArg[PROFSUM_AK_HLO_MODULE], &st.module))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &ev->aArg[PROFSUM_AK_HLO_CATEGORY], &st.cat))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &ev->aArg[PROFSUM_AK_NAME], &st.fw))!=SQLITE_OK ) return rc;
  if( xSpanNum(&ev->aArg[PROFSUM_AK_FLOPS], &st.flops) ) st.fl |= XF_FLOPS;
  if( xSpanNum(&ev->aArg[PROFSUM_AK_BYTES_ACCESSED], &st.bytes) ) st.fl |= XF_BYTES;
  if( xArgsNum(&ev->args, "model_flops", &st.mflops) ) st.fl |= XF_MFLOPS;
  if( ev->dur>((int64_t)1<<61) ) return SQLITE_OK;
  return xAddOp(p, trk, ev->ts, (int64_t)ev->dur, name, &st);
}

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
  if( q->name<0 || !xIsDevice(p->pool.az[q->name], p->pool.an[q->name]) ) return 0;
  if( kind==LK_UNKNOWN ){
    kind = t->thread>=0 ? xLineKind(p->pool.az[t->thread], p->pool.an[t->thread]) : LK_OTHER;
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
    if( m.name<0 || !xIsDevice(p->pool.az[m.name], p->pool.an[m.name]) ) continue;
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

/* The first index i in [0, n) with a[i].s >= v (n when none). */
static int64_t xLowerS(const XRec *a, int64_t n, int64_t v){
  int64_t lo = 0, hi = n;
  while( lo<hi ){ int64_t mid = lo + (hi-lo)/2; if( a[mid].s<v ) lo = mid+1; else hi = mid; }
  return lo;
}

/* The first index i with aU[i].e > v. */
static int64_t xFirstEndAfter(const XRec *a, int64_t n, int64_t v){
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
    if( zDev && xIsDevice(zDev, (int64_t)strlen(zDev)) ){
      if( (rc = xIntern(&p->pool, zDev, (int64_t)strlen(zDev), &id))!=SQLITE_OK ) break;
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

/* Write the utilization rows of device zDev (id dev) from its records
** aR[0..nR) (sorted here): one per step of its spans (its own, else the
** host's, of one step merged) and one with step NULL for the capture. */
static int xWriteUtilDevice(sqlite3_stmt *pSt, sqlite3_int64 traceId, const char *zDev, int32_t dev,
                            XRec *aR, int64_t nR, const XSpan *aSp, const int32_t *aSpDev, int64_t nSp){
  XRec *aU = 0, *aS = 0;           /* union intervals; records with FLOPs/bytes */
  double *aCum = 0;                /* prefix sums: mflops, bytes, n mflops, n bytes (4 per index) */
  int64_t nU = 0, nS = 0, i, k;
  int own = 0, rc = SQLITE_OK;
  int64_t capS, capE;
  qsort(aR, (size_t)nR, sizeof(XRec), xRecCmp);
  aU = sqlite3_malloc64(sizeof(XRec)*(sqlite3_uint64)(nR+1));
  aS = sqlite3_malloc64(sizeof(XRec)*(sqlite3_uint64)(nR+1));
  aCum = sqlite3_malloc64(sizeof(double)*4*(sqlite3_uint64)(nR+2));
  if( aU==0 || aS==0 || aCum==0 ){ rc = SQLITE_NOMEM; goto done; }
  capS = aR[0].s; capE = aR[0].e;
  for(i=0; i<nR; i++){
    if( aR[i].e>capE ) capE = aR[i].e;
    if( nU>0 && aR[i].s<=aU[nU-1].e ){
      if( aR[i].e>aU[nU-1].e ) aU[nU-1].e = aR[i].e;
    }else{
      aU[nU].s = aR[i].s; aU[nU].e = aR[i].e; nU++;
    }
    if( aR[i].fl ) aS[nS++] = aR[i];
  }
  memset(aCum, 0, sizeof(double)*4);
  for(i=0; i<nS; i++){
    aCum[4*(i+1)+0] = aCum[4*i+0] + aS[i].mflops;
    aCum[4*(i+1)+1] = aCum[4*i+1] + aS[i].bytes;
    aCum[4*(i+1)+2] = aCum[4*i+2] + ((aS[i].fl & XF_MFLOPS) ? 1 : 0);
    aCum[4*(i+1)+3] = aCum[4*i+3] + ((aS[i].fl & XF_BYTES) ? 1 : 0);
  }
  for(k=0; k<nSp; k++) if( aSpDev[k]==dev ){ own = 1; break; }
  /* k == -1: the whole capture (step NULL) */
  for(k=-1; rc==SQLITE_OK && k<nSp; k++){
    int64_t a, b, busy = 0, j, lo, hi;
    int64_t step = 0;
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
    for(j=xFirstEndAfter(aU, nU, a); j<nU && aU[j].s<b; j++){
      int64_t s = aU[j].s>a ? aU[j].s : a, e = aU[j].e<b ? aU[j].e : b;
      if( e>s ) busy += e - s;
    }
    lo = xLowerS(aS, nS, a);
    hi = k<0 ? nS : xLowerS(aS, nS, b);
    if( hi<lo ) hi = lo;
    sqlite3_bind_int64(pSt, 1, traceId);
    sqlite3_bind_text(pSt, 2, zDev, -1, SQLITE_STATIC);
    if( k<0 ) sqlite3_bind_null(pSt, 3); else sqlite3_bind_int64(pSt, 3, step);
    sqlite3_bind_double(pSt, 4, (double)(b-a)/1e6);
    sqlite3_bind_double(pSt, 5, (double)busy/1e6);
    if( aCum[4*hi+2]-aCum[4*lo+2]>0 ) sqlite3_bind_double(pSt, 6, aCum[4*hi+0]-aCum[4*lo+0]);
    else sqlite3_bind_null(pSt, 6);
    xBindBytes(pSt, 7, aCum[4*hi+3]-aCum[4*lo+3]>0, aCum[4*hi+1]-aCum[4*lo+1]);
    if( k<0 ) sqlite3_bind_null(pSt, 8);
    else sqlite3_bind_text(pSt, 8, own ? "device_steps" : "host_steps", -1, SQLITE_STATIC);
    rc = xStep(pSt);
  }
done:
  sqlite3_free(aU); sqlite3_free(aS); sqlite3_free(aCum);
  return rc;
}

/* Write profsum_agg_xla_util: per device, the busy time, FLOPs and bytes
** per step and for the whole capture. */
static int xWriteUtil(InsXla *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId){
  sqlite3_stmt *pSt = 0;
  XSpan *aSp = 0; int32_t *aSpDev = 0; int64_t nSp = 0;
  XRec *aR = 0; int64_t nAllocR = 0;
  int32_t i, j;
  int rc;
  if( !p->hasBase ) return SQLITE_OK;
  rc = xLoadSteps(p, db, zSchema, traceId, &aSp, &aSpDev, &nSp);
  if( rc==SQLITE_OK ) rc = xPrepare(db, zSchema, &pSt,
    "INSERT INTO \"%w\".profsum_agg_xla_util(trace_id, device, step, wall_us, busy_us, mfu_flops, "
    "bytes_accessed, step_source) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)");
  for(i=0; rc==SQLITE_OK && i<p->nTrk; i++){
    int kind;
    const char *zDev = xTrackDevice(p, &p->aTrk[i], &kind);
    int32_t dev = p->aProc[p->aTrk[i].proc].name;
    int64_t nR = 0;
    if( zDev==0 ) continue;
    for(j=0; j<i; j++){                     /* the device's first track gathers all */
      int kj;
      if( xTrackDevice(p, &p->aTrk[j], &kj) && p->aProc[p->aTrk[j].proc].name==dev ) break;
    }
    if( j<i ) continue;
    for(j=i; j<p->nTrk; j++){
      int kj;
      const XTrack *t = &p->aTrk[j];
      if( xTrackDevice(p, t, &kj)==0 || p->aProc[t->proc].name!=dev || t->nRec==0 ) continue;
      if( nR+t->nRec>nAllocR ){
        int64_t nNew = (nR+t->nRec)*2;
        XRec *a = sqlite3_realloc64(aR, sizeof(XRec)*(sqlite3_uint64)nNew);
        if( a==0 ){ rc = SQLITE_NOMEM; break; }
        aR = a; nAllocR = nNew;
      }
      memcpy(&aR[nR], t->aRec, sizeof(XRec)*(size_t)t->nRec);
      nR += t->nRec;
    }
    if( rc==SQLITE_OK && nR>0 ) rc = xWriteUtilDevice(pSt, traceId, zDev, dev, aR, nR, aSp, aSpDev, nSp);
  }
  sqlite3_finalize(pSt);
  sqlite3_free(aR);
  sqlite3_free(aSp);
  sqlite3_free(aSpDev);
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
