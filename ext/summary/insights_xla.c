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
**   - per line, its busy time as intervals (events merged while they
**     overlap or touch) and the start, FLOPs and bytes of each event that
**     has FLOPs or bytes, so that they count in the step where the op
**     starts; at most XCAP of each per line (insights_xla_int.h: the
**     closest neighbours merged when full), so memory does not grow with
**     the events.
** The write (in the import's transaction, after the summary's aggregates
** and the step spans) stores profsum_agg_xla_trace (one row: the import
** ran this collector), profsum_agg_xla_device, profsum_agg_xla_op and
** profsum_agg_xla_util (per device × step, and step NULL for the whole
** capture); the views of views/devices.sql, roofline.sql, utilization.sql,
** op_profile.sql and kpis_xla.sql read them.  The write is in
** insights_xla_write.c, the report sections in insights_xla_report.c.
**
** JSON traces: pid and tid must be non-negative integers (as the summary
** reads them; a device op's tid below 2^31); process and thread names (M events) may come anywhere, so
** events of a pid whose name is not known yet are collected and those of
** a non-device process dropped at the write.  Args as TSL writes them
** (numbers as strings) are read too.
*/
#include "insights_xla_int.h"
#include "growarray.h"
#include "selectk.h"
#include "utf8cut.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Interned strings (XPool: insights_xla_int.h)                         */

/* Free the pool's memory. */
static void xPoolFree(XPool *p){ profsumStrPoolFree(p); }

/* The id of z[0..n) in *pId (interned when new).  SQLITE_OK or NOMEM. */
int insXlaIntern(XPool *p, const char *z, int64_t n, int32_t *pId){
  return profsumStrPoolIntern(p, z, n, pId);
}

/* ------------------------------------------------------------------ */
/* A map of 64-bit keys (pairs of ints packed by the caller) to ints    */

/* A 64-bit finalizer (murmur3's): the hash of a packed key. */
static uint64_t xMix(uint64_t k){
  k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL; k ^= k >> 33;
  return k;
}

/* Free the map's memory (it is empty after). */
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
/* The collector's records: insights_xla_int.h                         */

static const char *const azDevStat[DS_N] = {
  "compute_cap_major", "compute_cap_minor", "core_count", "clock_rate", "memory_size",
  "memory_bandwidth", "peak_teraflops_per_second", "peak_hbm_bw_gigabytes_per_second"
};

/* The kinds of the collector's diagnostics (a device stat left out), in
** the order of their 'suppressed' rows (insDiagOrder). */
#define XDIAG_RANGE   0   /* a number out of the stat's range */
#define XDIAG_UNREAD  1   /* not a number */
#define XDIAG_N       2
static const char *const azXDiagKind[XDIAG_N] = { "device_stat_out_of_range", "device_stat_unreadable" };

/* See insights_int.h. */
int insXlaNew(InsXla **pp){
  *pp = sqlite3_malloc64(sizeof(InsXla));
  if( *pp==0 ) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof(InsXla));
  (*pp)->curProc = -1;
  (*pp)->curLine = -1;
  (*pp)->curTrk = -1;
  (*pp)->applyTrk = -1;
  (*pp)->lastProc = -1;
  (*pp)->lastTrk = -1;
  insDiagOrder(&(*pp)->diag, azXDiagKind, XDIAG_N);
  return SQLITE_OK;
}

/* See insights_int.h. */
void insXlaFree(InsXla *p){
  int32_t i;
  if( p==0 ) return;
  xPoolFree(&p->pool);
  for(i=0; i<p->nTrk; i++){
    sqlite3_free(p->aTrk[i].aStk); sqlite3_free(p->aTrk[i].aIv); sqlite3_free(p->aTrk[i].aRec);
  }
  sqlite3_free(p->aTrk);
  sqlite3_free(p->aProc);
  sqlite3_free(p->aAgg);
  sqlite3_free(p->aAggSlot);
  xMapFree(&p->jsonProc);
  xMapFree(&p->jsonTrk);
  xMapFree(&p->metaCache);
  sqlite3_free(p->aDirect);
  sqlite3_free(p->aMeta);
  sqlite3_free(p->aMetaE);
  for(i=0; i<p->nMemo; i++) sqlite3_free(p->aMemo[i].sm.aRaw);
  sqlite3_free(p->aMemo);
  sqlite3_free(p->zBuf);
  insDiagFree(&p->diag);
  sqlite3_free(p);
}

/* See insights_int.h: keep every diagnostic of the collector, not the
** first INS_DIAG_KEEP of each kind (store_diagnostics 'all'). */
void insXlaDiagAll(InsXla *p){
  p->diag.all = 1;
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
int insXlaLineKind(const char *z, int64_t n){
  if( n==7 && memcmp(z, "XLA Ops", 7)==0 ) return LK_XLA;
  if( n==13 && memcmp(z, "Async XLA Ops", 13)==0 ) return LK_ASYNC;
  if( n>=8 && memcmp(z, "Stream #", 8)==0 ) return LK_STREAM;
  return LK_OTHER;
}

/* See insights_xla_int.h. */
int insXlaIsDevice(const char *z, int64_t n){ return n>=8 && memcmp(z, "/device:", 8)==0; }

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

/* The step between the gaps xMedianGap samples of n. */
#define XGAP_STEP(n) ((n)>64 ? (n)/64 : 1)

/* About the median of n gaps: the median of at most 64 of them, evenly
** spaced (gaps 0, XGAP_STEP(n), 2*XGAP_STEP(n), ...), which the caller
** put in p->aGap[0..m) (quickselect; aGap is overwritten). */
static int64_t xMedianGap(InsXla *p, int64_t m){
  return profsumSelectKth(p->aGap, m, m/2);
}

/* Coarsen track t's busy intervals (a full list, XCAP): merge each with the
** one before it when the gap between them is at most the median gap, so
** about half remain; busy sums stay exact. */
static void xCoarsenIv(InsXla *p, XTrack *t){
  int64_t i, n = 0, thr, nMerge = 0, m = 0, step = XGAP_STEP(t->nIv-1);
  const int64_t half = t->nIv/2;    /* merges at most */
  for(i=1; i<t->nIv && m<64; i+=step) p->aGap[m++] = t->aIv[i].s - t->aIv[i-1].e;
  thr = xMedianGap(p, m);
  for(i=0; i<t->nIv; i++){
    const XIv *v = &t->aIv[i];         /* n <= i: merged into or moved down */
    if( n>0 && v->s - t->aIv[n-1].e<=thr && nMerge<half ){
      XIv *o = &t->aIv[n-1];
      if( v->e>o->e ) o->e = v->e;
      o->busy += v->busy;
      nMerge++;
    }else{
      if( n<i ) t->aIv[n] = *v;
      n++;
    }
  }
  if( n>=XCAP ){                          /* never full after: the last two merged */
    XIv *o = &t->aIv[n-2];
    if( t->aIv[n-1].e>o->e ) o->e = t->aIv[n-1].e;
    o->busy += t->aIv[n-1].busy;
    n--;
  }
  t->nIv = n;
  t->coarse = 1;
}

/* The same for track t's records of FLOPs and bytes. */
static void xCoarsenRec(InsXla *p, XTrack *t){
  int64_t i, n = 0, thr, nMerge = 0, m = 0, step = XGAP_STEP(t->nRec-1);
  const int64_t half = t->nRec/2;    /* merges at most */
  for(i=1; i<t->nRec && m<64; i+=step) p->aGap[m++] = t->aRec[i].s - t->aRec[i-1].sLast;
  thr = xMedianGap(p, m);
  for(i=0; i<t->nRec; i++){
    const XRec *r = &t->aRec[i];       /* n <= i: merged into or moved down */
    if( n>0 && r->s - t->aRec[n-1].sLast<=thr && nMerge<half ){
      XRec *o = &t->aRec[n-1];
      if( r->sLast>o->sLast ) o->sLast = r->sLast;
      if( r->e>o->e ) o->e = r->e;
      o->nOp += r->nOp;
      if( r->s<o->s ) o->s = r->s;
      o->mflops += r->mflops; o->bytes += r->bytes;
      o->nF += r->nF; o->nB += r->nB;
      nMerge++;
    }else{
      if( n<i ) t->aRec[n] = *r;
      n++;
    }
  }
  if( n>=XCAP ){                          /* never full after: the last two merged */
    XRec *o = &t->aRec[n-2], *r = &t->aRec[n-1];
    if( r->sLast>o->sLast ) o->sLast = r->sLast;
    if( r->e>o->e ) o->e = r->e;
    o->nOp += r->nOp;
    if( r->s<o->s ) o->s = r->s;
    o->mflops += r->mflops; o->bytes += r->bytes; o->nF += r->nF; o->nB += r->nB;
    n--;
  }
  t->nRec = n;
  t->coarse = 1;
}

/* Add one device-op event of track trk: [s, s+dur) ps absolute, shown
** name id, its stats.  Aggregates (into aggregate iKnown when >= 0, else
** the one of its key; its index in *pAgg when pAgg), nests for self time,
** merges busy time. */
static int xAddOp(InsXla *p, int32_t trk, profsum_ps s, int64_t dur, int32_t name, const XOpStats *st,
                  int32_t iKnown, int32_t *pAgg){
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
  if( iKnown>=0 ){
    ia = iKnown;
  }else{
    memset(&k, 0, sizeof(k));
    k.trk = trk; k.name = name; k.hloOp = st->hloOp; k.module = st->module; k.cat = st->cat; k.fw = st->fw;
    if( (rc = xAggGet(p, &k, &ia))!=SQLITE_OK ) return rc;
  }
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
  while( t->nStk>0 && t->aStk[t->nStk-1].e<=rs ) t->nStk--;
  if( t->nStk>0 && t->aStk[t->nStk-1].e>=re && dur>0 ){
    p->aAgg[t->aStk[t->nStk-1].agg].selfPs -= dur;
  }
  if( dur>0 ){
    if( t->nStk>=XSTK_CAP ){
      t->tooDeep = 1;
    }else{
      if( t->nStk>=t->nAllocStk ){
        int32_t nNew = t->nAllocStk ? t->nAllocStk*2 : 4;
        XStk *aS = sqlite3_realloc64(t->aStk, sizeof(XStk)*(sqlite3_uint64)nNew);
        if( aS==0 ) return SQLITE_NOMEM;
        t->aStk = aS; t->nAllocStk = nNew;
      }
      t->aStk[t->nStk].e = re; t->aStk[t->nStk].agg = ia; t->nStk++;
    }
  }
  /* busy time: merged with the line's last interval when they touch */
  {
    XIv *v = t->nIv ? &t->aIv[t->nIv-1] : 0;
    if( v && v->busy==v->e-v->s && rs>=v->s && rs<=v->e ){
      if( re>v->e ){ v->e = re; v->busy = re - v->s; }
    }else{
      if( t->nIv>=XCAP ){ xCoarsenIv(p, t); }
      if( t->nIv>=t->nAllocIv ){
        int64_t nNew = t->nAllocIv ? t->nAllocIv*2 : 4;
        XIv *aV;
        if( nNew>XCAP ) nNew = XCAP;
        aV = sqlite3_realloc64(t->aIv, sizeof(XIv)*(sqlite3_uint64)nNew);
        if( aV==0 ) return SQLITE_NOMEM;
        t->aIv = aV; t->nAllocIv = nNew;
      }
      v = &t->aIv[t->nIv++];
      v->s = rs; v->e = re; v->busy = dur;
    }
  }
  /* FLOPs and bytes: kept with the event's span, spread over the steps it
  ** overlaps at the write */
  if( st->fl & (XF_FLOPS|XF_MFLOPS|XF_BYTES) ){
    XRec *r;
    if( t->nRec>=XCAP ){ xCoarsenRec(p, t); }
    if( t->nRec>=t->nAllocRec ){
      int64_t nNew = t->nAllocRec ? t->nAllocRec*2 : 4;
      XRec *aR;
      if( nNew>XCAP ) nNew = XCAP;
      aR = sqlite3_realloc64(t->aRec, sizeof(XRec)*(sqlite3_uint64)nNew);
      if( aR==0 ) return SQLITE_NOMEM;
      t->aRec = aR; t->nAllocRec = nNew;
    }
    r = &t->aRec[t->nRec++];
    r->s = r->sLast = rs;
    r->e = re;
    r->nOp = 1;
    r->mflops = (st->fl & XF_MFLOPS) ? st->mflops : (st->fl & XF_FLOPS) ? st->flops : 0.0;
    r->nF = (st->fl & (XF_MFLOPS|XF_FLOPS)) ? 1 : 0;
    r->bytes = (st->fl & XF_BYTES) ? st->bytes : 0.0;
    r->nB = (st->fl & XF_BYTES) ? 1 : 0;
  }
  if( pAgg ) *pAgg = ia;
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
  if( st->eType==PROFSUM_XV_REF ){
    /* the same value names the same text throughout a plane: its id once */
    struct XRefMemo *m = &p->aRefMemo[st->uVal & (XREF_MEMO-1)];
    if( m->gen==p->refGen && m->ref==st->uVal ){ *pId = m->id; return SQLITE_OK; }
    if( (rc = profsumXpStatText(pXp, st, &z, &n))!=SQLITE_OK ) return rc;
    if( z!=0 && n!=0 && (rc = insXlaIntern(&p->pool, z, n, pId))!=SQLITE_OK ) return rc;
    m->ref = st->uVal; m->id = *pId; m->gen = p->refGen;
    return SQLITE_OK;
  }
  if( st->eType==PROFSUM_XV_STR ){ z = st->z; n = st->n; }
  else if( st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_CSTR ){
    if( (rc = profsumXpStatText(pXp, st, &z, &n))!=SQLITE_OK ) return rc;
  }else if( st->eType==PROFSUM_XV_INT64 || st->eType==PROFSUM_XV_UINT64 ){
    char zB[32];
    if( st->eType==PROFSUM_XV_INT64 ) sqlite3_snprintf(sizeof(zB), zB, "%lld", (long long)st->iVal);
    else sqlite3_snprintf(sizeof(zB), zB, "%llu", (unsigned long long)st->uVal);
    return insXlaIntern(&p->pool, zB, (int64_t)strlen(zB), pId);
  }
  if( z==0 || n==0 ) return SQLITE_OK;
  return insXlaIntern(&p->pool, z, n, pId);
}

#define SN(st, lit) ((st)->nName==(int64_t)sizeof(lit)-1 && memcmp((st)->zName, lit, sizeof(lit)-1)==0)

/* Apply stats a[0..n) to *o (a later stat of a name replaces an earlier).
** A count (flops, model_flops, bytes_accessed) that is not a finite number
** of 0 or more is left out, as if absent. */
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
        if( SN(st, "flops") && xStatNum(st, &d) && d>=0 ){ o->flops = d; o->fl |= XF_FLOPS; }
        break;
      case 6:
        if( SN(st, "hlo_op") ) rc = xStatText(p, pXp, st, &o->hloOp);
        break;
      case 10:
        if( SN(st, "hlo_module") ) rc = xStatText(p, pXp, st, &o->module);
        break;
      case 11:
        if( SN(st, "model_flops") && xStatNum(st, &d) && d>=0 ){ o->mflops = d; o->fl |= XF_MFLOPS; }
        break;
      case 12:
        if( SN(st, "hlo_category") ) rc = xStatText(p, pXp, st, &o->cat);
        break;
      case 14:
        if( SN(st, "bytes_accessed") && xStatNum(st, &d) && d>=0 ){ o->bytes = d; o->fl |= XF_BYTES; }
        break;
    }
  }
  return rc;
}

/* The largest stored integer (INTEGER columns) is below 2^63. */
#define X_INT_LIMIT 9223372036854775808.0

/* What a usable value of each device stat is (insights_xla_int.h DS_*
** order), as the diagnostics say it. */
static const char *const azDevRule[DS_N] = {
  "a finite number", "a finite number",
  "a number from 1 to below 2^63",
  "kHz: from 1 Hz to below 2^63 Hz once converted",
  "a number from 1 to below 2^63",
  "bytes per second: at least 1, finite",
  "TFLOP/s: at least 1 FLOP/s and finite once converted",
  "GB/s: at least 1 byte/s and finite once converted"
};

/* Device stat k (DS_*) given as st: 1 with *pd its value in the unit the
** write stores (the clock in Hz, the peaks per second), else 0 with *pKind
** the diagnostic kind (XDIAG_*).  A usable value (azDevRule) is a finite
** number; a count, the clock and the memory size from 1 to below 2^63
** once converted (INTEGER columns); a peak or a bandwidth at least 1 per
** second and finite once converted. */
static int xDevStatValue(int k, const ProfsumXpStat *st, double *pd, int *pKind){
  double d = 0, v;
  *pKind = XDIAG_RANGE;
  if( st->eType==PROFSUM_XV_DOUBLE ){
    if( !isfinite(st->rVal) ) return 0;
    d = st->rVal;
  }else if( !xStatNum(st, &d) ){
    *pKind = XDIAG_UNREAD;
    return 0;
  }
  switch( k ){
    case DS_CORES: case DS_MEMSIZE: v = d; break;
    case DS_CLOCK: v = d*1000.0; break;
    case DS_PEAK_TF: v = d*1e12; break;
    case DS_PEAK_HBM: v = d*1e9; break;
    default: v = d; break;
  }
  switch( k ){
    case DS_CORES: case DS_MEMSIZE: case DS_CLOCK:
      if( !(v>=1 && v<X_INT_LIMIT) ) return 0;
      break;
    case DS_MEMBW: case DS_PEAK_TF: case DS_PEAK_HBM:
      if( !(v>=1) || !isfinite(v) ) return 0;
      break;
  }
  *pd = v;
  return 1;
}

/* A diagnostic of kind (XDIAG_*) for device stat zStat of the plane named
** zPlane[0..nPlane) given as st, whose usable values are zRule: kept
** (INS_DIAG_KEEP of a kind, or all with store_diagnostics 'all') or
** counted.  SQLITE_OK or SQLITE_NOMEM. */
static int xDevStatDiag(InsXla *p, int kind, const char *zPlane, int64_t nPlane, const char *zStat,
                        const ProfsumXpStat *st, const char *zRule){
  const char *zKind = azXDiagKind[kind];
  char *zVal, *zDetail;
  if( !insDiagWanted(&p->diag, zKind) ) return insDiagCount(&p->diag, zKind);
  switch( st->eType ){
    case PROFSUM_XV_DOUBLE: zVal = sqlite3_mprintf("%!.17g", st->rVal); break;
    case PROFSUM_XV_UINT64: zVal = sqlite3_mprintf("%llu", (unsigned long long)st->uVal); break;
    case PROFSUM_XV_INT64:  zVal = sqlite3_mprintf("%lld", (long long)st->iVal); break;
    case PROFSUM_XV_STR:
      zVal = sqlite3_mprintf("'%.*s'%s", (int)profsumUtf8Cut(st->z, st->n, 64), st->z, st->n>64 ? "..." : "");
      break;
    default: zVal = sqlite3_mprintf("a value that is not a number"); break;
  }
  if( zVal==0 ) return SQLITE_NOMEM;
  zDetail = sqlite3_mprintf("plane %.*s: device stat %s = %s left out (NULL): a usable value is %s",
                            (int)profsumUtf8Cut(zPlane, nPlane, 256), zPlane, zStat, zVal, zRule);
  sqlite3_free(zVal);
  return insDiagAdd(&p->diag, -1, -1, zKind, zDetail);
}

/* See insights_int.h: a plane's name and device stats (xDevStatValue: an
** unusable one is left out, as if absent, with a diagnostic). */
int insXlaXpPlane(InsXla *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  int32_t ip;
  XProc *q;
  int rc, i, k;
  p->curLine = -1;
  p->curTrk = -1;
  p->curDev = insXlaIsDevice(pl->zName, pl->nName);
  if( ++p->refGen==0 ){            /* wrapped: forget every entry */
    memset(p->aRefMemo, 0, sizeof(p->aRefMemo));
    p->refGen = 1;
  }
  xMapFree(&p->metaCache);
  if( p->nDirect ) memset(p->aDirect, 0xff, sizeof(int32_t)*(size_t)p->nDirect);
  p->nMeta = 0;
  if( (rc = xNewProc(p, &ip))!=SQLITE_OK ) return rc;
  p->curProc = ip;
  q = &p->aProc[ip];
  if( pl->nName>0 && (rc = insXlaIntern(&p->pool, pl->zName, pl->nName, &q->name))!=SQLITE_OK ) return rc;
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
        int kind;
        if( xDevStatValue(k, st, &d, &kind) ){
          p->aProc[ip].a[k] = d; p->aProc[ip].has |= 1u<<k;
        }else if( (rc = xDevStatDiag(p, kind, pl->zName, pl->nName, azDevStat[k], st, azDevRule[k]))!=SQLITE_OK ){
          return rc;
        }
        break;
      }
    }
  }
  return SQLITE_OK;
}

/* The cache entry of metadata m (its shown name and stats; made when new,
** then *pbNew is 1) in *ppOut, valid until the next call.  SQLITE_OK or
** SQLITE_NOMEM. */
static int xMetaStats(InsXla *p, ProfsumXp *pXp, const ProfsumXpEventMeta *m, XOpStats **ppOut,
                      int *pbNew){
  int32_t *pv; int isNew, rc;
  XOpStats o;
  *pbNew = 0;
  if( m->key>=0 && m->key<XDIRECT ){
    if( m->key>=p->nDirect ){
      int64_t nNew = p->nDirect ? p->nDirect : 256;
      int32_t *a;
      while( nNew<=m->key ) nNew *= 2;
      a = sqlite3_realloc64(p->aDirect, sizeof(int32_t)*(sqlite3_uint64)nNew);
      if( a==0 ) return SQLITE_NOMEM;
      memset(a + p->nDirect, 0xff, sizeof(int32_t)*(size_t)(nNew - p->nDirect));
      p->aDirect = a; p->nDirect = nNew;
    }
    pv = &p->aDirect[m->key];
    isNew = *pv<0;
  }else if( (rc = xMapGet(&p->metaCache, (uint64_t)m->key, &pv, &isNew))!=SQLITE_OK ){
    return rc;
  }
  if( !isNew && *pv>=0 ){ *ppOut = &p->aMeta[*pv]; return SQLITE_OK; }
  memset(&o, 0, sizeof(o));
  o.hloOp = o.module = o.cat = o.fw = -1;
  o.lastTrk = o.lastAgg = -1;
  rc = m->nDisplay>0 ? insXlaIntern(&p->pool, m->zDisplay, m->nDisplay, &o.name)
                     : insXlaIntern(&p->pool, m->zName, m->nName, &o.name);
  if( rc==SQLITE_OK ) rc = xApplyStats(p, pXp, m->aStat, m->nStat, &o);
  if( rc ) return rc;
  if( p->nMeta>=p->nAllocMeta ){
    int64_t nNew = p->nAllocMeta ? p->nAllocMeta*2 : 64;
    XOpStats *a = sqlite3_realloc64(p->aMeta, sizeof(XOpStats)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aMeta = a; p->nAllocMeta = nNew;
  }
  p->aMeta[p->nMeta] = o;
  *pv = (int32_t)p->nMeta;
  *ppOut = &p->aMeta[p->nMeta++];
  *pbNew = 1;
  return SQLITE_OK;
}

/* See insights_int.h: what is to be done for XEvent ev (a device-op event
** is aggregated by the second step, insXlaXpApply), into aOp[0..*pnOp):
** start the line's track at its first event, send a metadata entry when
** it is made (the plane's entries are numbered from 0: the second step
** keeps a copy of each), and the op with its own stats or its metadata
** entry's.  This step touches only its own fields of p
** (insights_xla_int.h). */
int insXlaXpEvent(InsXla *p, ProfsumXp *pXp, const ProfsumXpEvent *ev, ProfsumInsXpOp *aOp, int *pnOp){
  const ProfsumXpLine *ln = ev->pLine;
  const ProfsumXpEventMeta *m = ev->pMeta;
  ProfsumInsXpOp *o = aOp;
  XOpStats *pm;
  int rc, bNew;
  *pnOp = 0;
  o->fl = 0;
  if( p->curProc<0 ) return SQLITE_OK;
  p->aProc[p->curProc].hasEvents = 1;
  if( !p->curDev ) return SQLITE_OK;
  if( ln->iFirstEvent!=p->curLine ){
    int kind = ln->nDisplay>0 ? insXlaLineKind(ln->zDisplay, ln->nDisplay) : insXlaLineKind(ln->zName, ln->nName);
    p->curLine = ln->iFirstEvent;
    p->curTrk = -1;
    if( kind!=LK_OTHER ){
      if( p->nTrkStarted>=0x7fffffff ) return SQLITE_NOMEM;
      o->fl = PROFSUM_INSOP_TRACK;
      o->proc = p->curProc;
      o->kind = kind;
      p->curTrk = p->nTrkStarted++;
      *pnOp = 1;
    }
  }
  if( p->curTrk<0 ) return SQLITE_OK;
  if( ev->eData!=PROFSUM_XD_OFFSET || ev->durationPs<=0 || m==0 || (m->nDisplay==0 && m->nName==0) ){
    return SQLITE_OK;
  }
  if( (rc = xMetaStats(p, pXp, m, &pm, &bNew))!=SQLITE_OK ) return rc;
  o->iMeta = pm - p->aMeta;
  if( bNew ){
    o->fl |= PROFSUM_INSOP_SHIP;
    o->st = *pm;
    if( ev->nStat>0 ){                /* the op's own stats: a second record */
      o = &aOp[1];
      o->fl = 0;
      o->iMeta = aOp[0].iMeta;
    }
  }
  if( ev->nStat>0 ){
    o->st = *pm;
    if( (rc = xApplyStats(p, pXp, ev->aStat, ev->nStat, &o->st))!=SQLITE_OK ) return rc;
    o->fl |= PROFSUM_INSOP_OWN;
  }else{
    o->fl |= PROFSUM_INSOP_META;
  }
  *pnOp = (int)(o - aOp) + 1;
  return SQLITE_OK;
}

/* See insights_int.h: the second step of an XPlane event (insXlaXpEvent).
** An op without stats of its own goes to the aggregate the last such op of
** its metadata entry on this track went to (no hashing). */
int insXlaXpApply(InsXla *p, const ProfsumInsXpOp *pOp, profsum_ps s, int64_t dur){
  int rc;
  if( pOp->fl & PROFSUM_INSOP_TRACK ){
    if( (rc = xNewTrack(p, pOp->proc, pOp->kind, &p->applyTrk))!=SQLITE_OK ) return rc;
  }
  if( pOp->fl & PROFSUM_INSOP_SHIP ){
    XOpStats *a = profsumGrowArray(p->aMetaE, pOp->iMeta, &p->nAllocMetaE, sizeof(XOpStats), 64);
    if( a==0 ) return SQLITE_NOMEM;
    p->aMetaE = a;
    p->aMetaE[pOp->iMeta] = pOp->st;
  }
  if( pOp->fl & PROFSUM_INSOP_OWN ){
    return xAddOp(p, p->applyTrk, s, dur, pOp->st.name, &pOp->st, -1, 0);
  }
  if( pOp->fl & PROFSUM_INSOP_META ){
    XOpStats *pm = &p->aMetaE[pOp->iMeta];
    int32_t ia = -1;
    if( pm->lastTrk==p->applyTrk ) return xAddOp(p, p->applyTrk, s, dur, pm->name, pm, pm->lastAgg, 0);
    rc = xAddOp(p, p->applyTrk, s, dur, pm->name, pm, -1, &ia);
    if( rc==SQLITE_OK && ia>=0 ){ pm->lastTrk = p->applyTrk; pm->lastAgg = ia; }
    return rc;
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/* The text of span v (a string, or a number as its text) interned in *pId,
** -1 when absent or of another type. */
static int xSpanText(InsXla *p, const ProfsumSpan *v, int32_t *pId){
  const char *z; int64_t n;
  *pId = -1;
  if( v->type==PROFSUM_JT_NUMBER ) return v->n>0 ? insXlaIntern(&p->pool, v->z, v->n, pId) : SQLITE_OK;
  if( v->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  if( profsumSpanText(v, &p->zBuf, &p->nBuf, &z, &n) ) return SQLITE_NOMEM;
  if( n==0 ) return SQLITE_OK;
  return insXlaIntern(&p->pool, z, n, pId);
}

/* The number of span v (a number, or a string holding one): 1 with *pd. */
static int xSpanNum(const ProfsumSpan *v, double *pd){
  if( v->type!=PROFSUM_JT_NUMBER && v->type!=PROFSUM_JT_STRING ) return 0;
  return xTextNum(v->z, v->n, pd);
}

/* The process of JSON pid (made when new) in *pIdx.  The last pid asked
** is answered without the map (entries come in runs of one pid). */
static int xJsonProc(InsXla *p, int64_t pid, int32_t *pIdx){
  int32_t *pv; int isNew, rc;
  if( p->lastProc>=0 && pid==p->lastPid ){ *pIdx = p->lastProc; return SQLITE_OK; }
  if( (rc = xMapGet(&p->jsonProc, (uint64_t)pid, &pv, &isNew))!=SQLITE_OK ) return rc;
  if( isNew ){
    if( (rc = xNewProc(p, pIdx))!=SQLITE_OK ){ *pv = -1; return rc; }
    *pv = *pIdx;
  }
  *pIdx = *pv;
  if( *pIdx<0 ) return SQLITE_NOMEM;
  p->lastPid = pid;
  p->lastProc = *pIdx;
  return SQLITE_OK;
}

/* The stats of device-op entry ev (its name and known args keys) in *pSt,
** its strings interned; a count that is not a finite number of 0 or more
** is left out (xApplyStats).  SQLITE_OK or SQLITE_NOMEM. */
static int xJsonStats(InsXla *p, const ProfsumEvent *ev, XOpStats *pSt){
  const ProfsumSpan *a = ev->aArg;
  int rc;
  memset(pSt, 0, sizeof(*pSt));
  pSt->lastTrk = pSt->lastAgg = -1;
  if( (rc = xSpanText(p, &ev->name, &pSt->name))!=SQLITE_OK ) return rc;
  if( pSt->name<0 && (rc = insXlaIntern(&p->pool, "", 0, &pSt->name))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &a[PROFSUM_AK_HLO_OP], &pSt->hloOp))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &a[PROFSUM_AK_HLO_MODULE], &pSt->module))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &a[PROFSUM_AK_HLO_CATEGORY], &pSt->cat))!=SQLITE_OK ) return rc;
  if( (rc = xSpanText(p, &a[PROFSUM_AK_NAME], &pSt->fw))!=SQLITE_OK ) return rc;
  if( xSpanNum(&a[PROFSUM_AK_FLOPS], &pSt->flops) && pSt->flops>=0 ) pSt->fl |= XF_FLOPS;
  if( xSpanNum(&a[PROFSUM_AK_BYTES_ACCESSED], &pSt->bytes) && pSt->bytes>=0 ) pSt->fl |= XF_BYTES;
  if( xSpanNum(&a[PROFSUM_AK_MODEL_FLOPS], &pSt->mflops) && pSt->mflops>=0 ) pSt->fl |= XF_MFLOPS;
  return SQLITE_OK;
}

/* The args spans a memo compares, in XMEMO_N order. */
static const int aMemoArg[XMEMO_N] = {
  PROFSUM_AK_HLO_OP, PROFSUM_AK_HLO_MODULE, PROFSUM_AK_HLO_CATEGORY, PROFSUM_AK_NAME,
  PROFSUM_AK_FLOPS, PROFSUM_AK_BYTES_ACCESSED, PROFSUM_AK_MODEL_FLOPS
};

/* The memo of engine event key iKey (made empty when new) in *ppM, 0 when
** out of memory. */
static XMemo *xMemoAt(InsXla *p, int32_t iKey){
  if( iKey>=p->nMemo ){
    int64_t nNew = p->nMemo ? p->nMemo*2 : 256, i;
    XMemo *a;
    while( nNew<=iKey ) nNew *= 2;
    a = sqlite3_realloc64(p->aMemo, sizeof(XMemo)*(sqlite3_uint64)nNew);
    if( a==0 ) return 0;
    memset(a + p->nMemo, 0, sizeof(XMemo)*(size_t)(nNew - p->nMemo));
    for(i=p->nMemo; i<nNew; i++) a[i].st.lastAgg = -1;
    p->aMemo = a;
    p->nMemo = nNew;
  }
  return &p->aMemo[iKey];
}

/* Make memo m say that the args spans of ev gave stats st and went to
** aggregate agg of track trk (within XMEMO_MAX_BYTES of text in all:
** beyond, m holds nothing).  SQLITE_OK or SQLITE_NOMEM. */
static int xMemoSet(InsXla *p, XMemo *m, const ProfsumEvent *ev, const XOpStats *st,
                    int32_t agg, int32_t trk){
  m->st = *st;
  m->st.lastAgg = agg;
  m->st.lastTrk = trk;
  return profsumSpanMemoSet(&m->sm, ev, aMemoArg, XMEMO_N, &p->nMemoBytes, XMEMO_MAX_BYTES);
}

/* The track of JSON (pid, tid) in *pIdx (made when new; *pIdx -1 when the
** pid's process is known not to be a device).  pid >= 0 (any such 64-bit
** value), 0 <= tid < 2^31: the map's key is the pid's process index (below
** 2^31) and the tid, packed.  The last pair asked is answered without the
** map, as xJsonProc's last pid. */
static int xJsonTrack(InsXla *p, int64_t pid, int64_t tid, int32_t *pIdx){
  int32_t *pv, proc; int isNew, rc;
  uint64_t key;
  if( (rc = xJsonProc(p, pid, &proc))!=SQLITE_OK ) return rc;
  key = (uint64_t)(uint32_t)proc<<32 | (uint64_t)tid;
  if( p->lastTrk>=0 && key==p->lastTrkKey ){ *pIdx = p->lastTrk; return SQLITE_OK; }
  if( (rc = xMapGet(&p->jsonTrk, key, &pv, &isNew))!=SQLITE_OK ) return rc;
  if( isNew ){
    if( (rc = xNewTrack(p, proc, LK_UNKNOWN, pIdx))!=SQLITE_OK ){ *pv = -1; return rc; }
    *pv = *pIdx;
  }
  *pIdx = *pv;
  if( *pIdx<0 ) return SQLITE_NOMEM;
  p->lastTrkKey = key;
  p->lastTrk = *pIdx;
  return SQLITE_OK;
}

/* See insights_int.h: M events name processes and threads; X events of
** device-op threads (or of threads not named yet) are aggregated. */
int insXlaJsonEvent(InsXla *p, const ProfsumEvent *ev, int32_t iKey){
  char ph;
  int32_t proc, trk;
  int rc;
  XOpStats st;
  XMemo *m = 0;         /* the memo of engine key iKey (iKey >= 0) */
  int32_t ia = -1;
  const ProfsumSpan *nm = &ev->name;
  p->isJson = 1;
  if( ev->ph.n!=1 ) return SQLITE_OK;
  ph = ev->ph.z[0];
  /* any non-negative pid, as the summary reads them: a /device: process
  ** whose pid is beyond 2^31 is a device too */
  if( ev->pid.kind!=PROFSUM_ID_INT || ev->pid.iVal<0 ) return SQLITE_OK;
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
    if( q->name>=0 && !insXlaIsDevice(p->pool.az[q->name], p->pool.an[q->name]) ) return SQLITE_OK;
  }
  if( (rc = xJsonTrack(p, ev->pid.iVal, ev->tid.iVal, &trk))!=SQLITE_OK ) return rc;
  {
    const XTrack *t = &p->aTrk[trk];
    if( t->thread>=0 && insXlaLineKind(p->pool.az[t->thread], p->pool.an[t->thread])==LK_OTHER ) return SQLITE_OK;
  }
  if( nm->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  if( iKey>=0 ){
    /* an event of an engine key seen before, with the same args: its
    ** stats and aggregate as they were (the engine keeps no event whose
    ** dur is beyond 2^61 ps) */
    if( (m = xMemoAt(p, iKey))==0 ) return SQLITE_NOMEM;
    if( m->st.lastAgg>=0 && m->st.lastTrk==trk && ev->dur<=((int64_t)1<<61)
     && profsumSpanMemoSame(&m->sm, ev, aMemoArg, XMEMO_N) ){
      return xAddOp(p, trk, ev->ts, (int64_t)ev->dur, m->st.name, &m->st, m->st.lastAgg, 0);
    }
  }
  if( (rc = xJsonStats(p, ev, &st))!=SQLITE_OK ) return rc;
  if( ev->dur>((int64_t)1<<61) ) return SQLITE_OK;
  rc = xAddOp(p, trk, ev->ts, (int64_t)ev->dur, st.name, &st, -1, m ? &ia : 0);
  if( rc==SQLITE_OK && m && ia>=0 ) rc = xMemoSet(p, m, ev, &st, ia, trk);
  return rc;
}
