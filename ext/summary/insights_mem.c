/*
** insights_mem.c — the InsMem collector of insights_int.h: memory
** allocations, their peak and what holds it (profsum_agg_memory,
** profsum_agg_memory_timeline); GPU kernels are tallied by
** insights_mem_kern.c, the report sections written by
** insights_mem_report.c.  docs/memory.md says what each number means.
**
** Memory events are the profiler's MemoryAllocation / MemoryDeallocation
** XEvents (zero-length, on a host plane), with the stats allocator_name
** (or, as PJRT writes them on TPU, index_on_host or device_ordinal: the
** device's index, which names the allocator as xprof names it),
** bytes_allocated (the allocator's bytes in use after the event),
** bytes_reserved and bytes_available (with bytes_allocated, the capacity
** an index-named allocator states), peak_bytes_in_use (its peak since
** it started), allocation_bytes, requested_bytes, addr, tf_op,
** region_type, data_type and shape.  JAX's
** trace JSON never holds them (the profiler drops them when it writes
** JSON); JSON entries of those names are read the same way should a
** converter keep them.  PyTorch's profiler writes its own, instant events
** named "[memory]" (read by insights_mem_torch.c into the same records).
**
** Events come line by line, not in time order, so each allocator's events
** are kept as small records (MemRec, at most MEM_MAX_REC over the trace)
** and replayed in time order when the import writes: the peak is the
** largest bytes_allocated (its first event in time), the holders are the
** allocations made in the capture and not freed before it, matched by
** address in a hash of the live ones.  What an event says as text
** (tf_op, region type, data type, shape) is kept once per distinct text.
** Counts and the peak are also kept as the events come, so that an
** allocator whose records were cut still has its exact peak.
*/
#include "insights_mem_int.h"
#include "summary_engine.h"
#include "jsontree.h"
#include "strpool.h"
#include "psfmt.h"
#include "utf8cut.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEM_MAX_REC        (1<<20)        /* records kept over all allocators */
#define MEM_MAX_ALLOCATORS 256
#define MEM_MAX_DETAIL     (32*1024*1024) /* bytes of distinct detail texts */
#define MEM_MAX_FIELD      4096           /* bytes of one text field kept */
#define MEM_TOP_HOLDERS    10
#define MEM_MAX_BUCKETS    500
#define MEM_MAX_DEVIDX     1000000        /* index_on_host / device_ordinal read */

/* One memory event, as kept until the write. */
typedef struct MemRec {
  profsum_ps ts;          /* absolute start, ps */
  int64_t ord;            /* arrival order (ties in time keep it) */
  int64_t inUse;          /* bytes_allocated after the event */
  int64_t life;           /* peak_bytes_in_use, -1: absent or out of range */
  int64_t bytes;          /* allocation_bytes, -1: absent */
  int64_t req;            /* requested_bytes, -1: absent */
  uint64_t addr;
  int32_t iDetail;        /* its detail text (MemPool), -1: none */
  uint8_t isAlloc, hasAddr;
} MemRec;

/* One allocator (allocator_name). */
typedef struct MemAlloc {
  char *zName;
  int iGpu;               /* N of GPU_N_bfc, -1: not a GPU allocator */
  int iIdx;               /* N of an allocator named by index_on_host or
                          ** device_ordinal N (the device /device:*:N), -1 */
  MemRec *aRec; int64_t nRec, nRecAlloc;
  int capped;             /* some of its events were not kept */
  /* kept as the events come (the figures of a capped allocator) */
  int64_t nAlloc, nDealloc, allocBytes;
  int hasPeak; int64_t peak; profsum_ps peakTs; int64_t peakOrd;
  int64_t lifePeak;       /* -1: none */
  int torch;              /* PyTorch's caching allocator ([memory] events) */
  int64_t resPeak;        /* and the largest 'Total Reserved' it gave, -1 */
  int64_t nOom;           /* its failed allocations ([OutOfMemory]) */
  int64_t oomBytes;       /* the earliest one's 'Bytes' (-1: not given) */
  profsum_ps oomTs;       /* and time */
  int oomNoTs;            /* 1: none of them has a time */
  int64_t peakCap;        /* bytes_allocated + bytes_reserved +
                          ** bytes_available of its peak's event (the
                          ** capacity it states, as xprof reads it), -1 */
  /* The MEM_TOP largest bytes-in-use values of its events, largest first
  ** (then earliest): a capped allocator's peak is the first one within
  ** its device's memory_size, which is known only once every plane was
  ** read (memTopAdd, memCappedPeak) */
  struct MemTop { int64_t inUse; profsum_ps ts; } aTop[16];
  int nTop;
  int64_t lifeTop[16];    /* the same for peak_bytes_in_use, largest first */
  int nLifeTop;
} MemAlloc;
#define MEM_TOP 16

/* Distinct detail texts: each a JSON fragment
** "tf_op":…,"region_type":…,"data_type":…,"shape":… */
typedef ProfsumStrPool MemPool;        /* maxBytes MEM_MAX_DETAIL */

/* A device (the planes of one name) and its memory_size stat (0: none). */
typedef struct MemDev { char *zName; int64_t memSize; } MemDev;

/* A JSON process_name: pid → name (kernels name their device by it). */
struct InsMem {
  int isXPlane;           /* an XPlane plane was seen */
  int64_t nTorch;         /* PyTorch [memory] events seen (memTake) */
  int64_t nOomAll;        /* and [OutOfMemory] events */
  MemAlloc *aAlloc; int nAlloc;
  int64_t nRec;           /* records kept, all allocators */
  int64_t nOrd;
  MemPool pool;
  MemDev *aDev; int nDev, nDevAlloc;   /* one per device plane name (planes
                                  ** of one name are one device, in chunks) */
  int64_t curDevKey;              /* the current plane's index in aDev */
  InsDiag diag;
  MemKern *pKern;
  /* per event_metadata entry of the current (device) plane (iMeta): 0
  ** not known yet, 1 not a memory event and its stats have no
  ** kernel_details, 2 they have one; 0 entries (nKd 0) when the plane's
  ** could not be allocated or it is no device */
  unsigned char *aKd; int64_t nKd, nKdAlloc;
  int64_t kdPlane;        /* the plane (iPlane) aKd is of */
};

/* ===================================================================== */
/* The collector                                                          */
/* ===================================================================== */

/* See insights_int.h. */
int insMemNew(InsMem **pp){
  InsMem *p = sqlite3_malloc64(sizeof(InsMem));
  *pp = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(InsMem));
  p->pool.maxBytes = MEM_MAX_DETAIL;
  if( memKernNew(&p->pKern) ){ sqlite3_free(p); return SQLITE_NOMEM; }
  *pp = p;
  return SQLITE_OK;
}

/* See insights_int.h: keep every diagnostic of the collector, not the
** first INS_DIAG_KEEP of each kind (store_diagnostics 'all'). */
void insMemDiagAll(InsMem *p){
  p->diag.all = 1;
}

/* See insights_int.h. */
void insMemFree(InsMem *p){
  int i;
  if( p==0 ) return;
  for(i=0; i<p->nAlloc; i++){
    sqlite3_free(p->aAlloc[i].zName);
    sqlite3_free(p->aAlloc[i].aRec);
  }
  sqlite3_free(p->aAlloc);
  profsumStrPoolFree(&p->pool);
  for(i=0; i<p->nDev; i++) sqlite3_free(p->aDev[i].zName);
  sqlite3_free(p->aDev);
  insDiagFree(&p->diag);
  memKernFree(p->pKern);
  sqlite3_free(p->aKd);
  sqlite3_free(p);
}

/* a + b for non-negative a, b, at most INT64_MAX. */
static int64_t satAdd(int64_t a, int64_t b){
  return a>INT64_MAX-b ? INT64_MAX : a+b;
}

/* A copy of z[0..n) owned by m (the decoder's stat-text scratch is
** replaced by its next call) in *pz.  SQLITE_OK or SQLITE_NOMEM. */
static int memOwn(MemIn *m, const char *z, int64_t n, const char **pz){
  char *c;
  *pz = 0;
  if( m->nOwn>=(int)(sizeof(m->azOwn)/sizeof(m->azOwn[0])) ) return SQLITE_OK;  /* absent */
  c = sqlite3_malloc64((sqlite3_uint64)n+1);
  if( c==0 ) return SQLITE_NOMEM;
  if( n ) memcpy(c, z, (size_t)n);
  c[n] = 0;
  m->azOwn[m->nOwn++] = c;
  *pz = c;
  return SQLITE_OK;
}

/* Free what m owns. */
static void memInFree(MemIn *m){
  int i;
  for(i=0; i<m->nOwn; i++) sqlite3_free(m->azOwn[i]);
  m->nOwn = 0;
}

/* The int64 value of XPlane stat st: MV_OK, MV_BAD (a number that is not
** an int64 integer, or text that does not parse). */
static int statInt(ProfsumXp *pXp, const ProfsumXpStat *st, int64_t *pv, int *pRc){
  *pRc = SQLITE_OK;
  switch( st->eType ){
    case PROFSUM_XV_INT64: *pv = st->iVal; return MV_OK;
    case PROFSUM_XV_UINT64:
      if( st->uVal>(uint64_t)INT64_MAX ) return MV_BAD;
      *pv = (int64_t)st->uVal; return MV_OK;
    case PROFSUM_XV_DOUBLE:
      if( !isfinite(st->rVal) || st->rVal!=floor(st->rVal) || fabs(st->rVal)>=9.2e18 ) return MV_BAD;
      *pv = (int64_t)st->rVal; return MV_OK;
    case PROFSUM_XV_STR: case PROFSUM_XV_BYTES: case PROFSUM_XV_REF: case PROFSUM_XV_CSTR: {
      const char *z = 0; int64_t n = 0;
      if( (*pRc = profsumXpStatText(pXp, st, &z, &n))!=SQLITE_OK || z==0 ) return MV_BAD;
      return memNumText(z, n, pv);
    }
  }
  return MV_ABSENT;
}

/* Which of kernel_details (0), hlo_op (1), hlo_module (2) the stat name
** z[0..n) is, or -1: told apart by length first, since this runs for
** every stat of every device event. */
static int kernelKey(const char *z, int64_t n){
  if( z==0 ) return -1;
  switch( n ){
    case 14: return memcmp(z, "kernel_details", 14)==0 ? 0 : -1;
    case 6:  return memcmp(z, "hlo_op", 6)==0 ? 1 : -1;
    case 10: return memcmp(z, "hlo_module", 10)==0 ? 2 : -1;
    default: return -1;
  }
}

/* Keys of a memory event's stats. */
enum { MK_ALLOCATOR, MK_INUSE, MK_LIFE, MK_BYTES, MK_REQ, MK_ADDR, MK_TFOP, MK_REGION,
       MK_DTYPE, MK_SHAPE, MK_TSHAPE, MK_INDEX, MK_ORDINAL, MK_RESERVED, MK_AVAIL, MK_N };
#define MEM_KEY(s) { s, (int)sizeof(s)-1 }
static const struct { const char *z; int n; } aMemKey[MK_N] = {
  MEM_KEY("allocator_name"), MEM_KEY("bytes_allocated"), MEM_KEY("peak_bytes_in_use"),
  MEM_KEY("allocation_bytes"), MEM_KEY("requested_bytes"), MEM_KEY("addr"), MEM_KEY("tf_op"),
  MEM_KEY("region_type"), MEM_KEY("data_type"), MEM_KEY("shape"), MEM_KEY("tensor_shape"),
  MEM_KEY("index_on_host"), MEM_KEY("device_ordinal"), MEM_KEY("bytes_reserved"), MEM_KEY("bytes_available")
};

/* The detail text of m that key k (MK_...) fills: tf_op, region type,
** data type, shape (a tensor_shape only when no shape came first); 0 for
** any other key. */
static MemTxt *memDetailField(MemIn *m, int k){
  switch( k ){
    case MK_TFOP: return &m->tfop;
    case MK_REGION: return &m->region;
    case MK_DTYPE: return &m->dtype;
    case MK_SHAPE: return &m->shape;
    case MK_TSHAPE: return m->shape.present ? 0 : &m->shape;
  }
  return 0;
}

/* The MK_* of name z[0..n), or -1. */
static int memKey(const char *z, int64_t n){
  int k;
  if( z==0 ) return -1;
  for(k=0; k<MK_N; k++){
    if( aMemKey[k].n==n && memcmp(z, aMemKey[k].z, (size_t)n)==0 ) return k;
  }
  return -1;
}

/* The allocator of name z[0..n) (added when new), 0 when there are too
** many (a diagnostic).  SQLITE_OK or SQLITE_NOMEM. */
static int allocatorOf(InsMem *p, const char *z, int64_t n, int64_t idx, int64_t off, MemAlloc **ppA){
  int i;
  MemAlloc *a;
  *ppA = 0;
  for(i=0; i<p->nAlloc; i++){
    if( memTextEq(z, n, p->aAlloc[i].zName) ){ *ppA = &p->aAlloc[i]; return SQLITE_OK; }
  }
  if( p->nAlloc>=MEM_MAX_ALLOCATORS ){
    if( insDiagWanted(&p->diag, "memory_allocators_capped") ){
      return insDiagAdd(&p->diag, idx, off, "memory_allocators_capped", sqlite3_mprintf(
          "more than %d allocators: the events of '%.*s' are left out", MEM_MAX_ALLOCATORS, (int)n, z));
    }
    return insDiagCount(&p->diag, "memory_allocators_capped");
  }
  if( i%8==0 ){
    MemAlloc *aNew = sqlite3_realloc64(p->aAlloc, sizeof(MemAlloc)*(sqlite3_uint64)(i+8));
    if( aNew==0 ) return SQLITE_NOMEM;
    p->aAlloc = aNew;
  }
  a = &p->aAlloc[i];
  memset(a, 0, sizeof(*a));
  a->zName = sqlite3_mprintf("%.*s", (int)n, z);
  if( a->zName==0 ) return SQLITE_NOMEM;
  a->iGpu = memGpuOfAllocator(z, n);
  a->iIdx = -1;
  a->lifePeak = -1;
  a->resPeak = -1;
  a->peakCap = -1;
  p->nAlloc++;
  *ppA = a;
  return SQLITE_OK;
}

/* Append JSON value of text field t (null when absent, empty or
** "(null)", the C library's text for a null string) to s, as a number
** when it was one, at most MEM_MAX_FIELD bytes of it. */
static void fieldJson(sqlite3_str *s, const MemTxt *t){
  int64_t n = t->n;
  if( !t->present || n==0 || memTextEq(t->z, n, "(null)") ){ sqlite3_str_appendall(s, "null"); return; }
  if( t->isNum && memIsJsonNumber(t->z, n) ){ sqlite3_str_append(s, t->z, (int)n); return; }
  n = profsumUtf8Cut(t->z, n, MEM_MAX_FIELD);     /* whole characters */
  jAppendJsonStr(s, t->z, n);
}

/* A failed allocation m (PyTorch's [OutOfMemory]) of allocator zA[0..nA)
** (0: not named): counted on its allocator (memTorchNote says it), and
** said in a memory_out_of_memory diagnostic.  SQLITE_OK or SQLITE_NOMEM. */
static int memOom(InsMem *p, MemIn *m, const char *zA, int64_t nA){
  MemAlloc *a = 0;
  int eB = memByteCheck(m->eBytes, m->bytes);
  int rc = zA && nA>0 ? allocatorOf(p, zA, nA, m->idx, m->off, &a) : SQLITE_OK;
  char zB[32], zT[40];
  if( rc ) return rc;
  p->nOomAll++;
  if( a && (a->nOom++==0 || (!m->noTs && (a->oomNoTs || m->ts<a->oomTs))) ){
    /* the earliest failure (in time; one without a time only when none has one) */
    a->oomBytes = eB==MV_OK ? m->bytes : -1; a->oomTs = m->ts; a->oomNoTs = m->noTs;
  }
  if( a ) a->torch = 1;
  if( !insDiagWanted(&p->diag, "memory_out_of_memory") ) return insDiagCount(&p->diag, "memory_out_of_memory");
  if( eB==MV_OK ) sqlite3_snprintf(sizeof(zB), zB, "%lld", (long long)m->bytes);
  else sqlite3_snprintf(sizeof(zB), zB, "%s", eB==MV_BAD ? "(invalid)" : "(not given)");
  if( m->noTs ) sqlite3_snprintf(sizeof(zT), zT, "an unknown time");
  else sqlite3_snprintf(sizeof(zT), zT, "%.3f us", profsumPsToMicros(m->ts));
  return insDiagAdd(&p->diag, m->idx, m->off, "memory_out_of_memory", sqlite3_mprintf(
      "out of memory: an allocation of %s bytes on allocator '%.*s' failed at %s "
      "('Total Allocated' %lld, 'Total Reserved' %lld bytes; -1: not given)",
      zB, zA && nA>0 ? (int)nA : 7, zA && nA>0 ? zA : "unnamed", zT,
      (long long)(m->eInUse==MV_OK ? m->inUse : -1), (long long)(m->eRes==MV_OK ? m->res : -1)));
}

/* Keep (inUse, ts) among a's MEM_TOP largest (largest first, then the
** earliest), and life (-1: none) among the largest lifetime peaks. */
static void memTopAdd(MemAlloc *a, int64_t inUse, profsum_ps ts, int64_t life){
  int i;
  if( a->nTop<MEM_TOP || inUse>a->aTop[a->nTop-1].inUse
   || (inUse==a->aTop[a->nTop-1].inUse && ts<a->aTop[a->nTop-1].ts) ){
    i = a->nTop<MEM_TOP ? a->nTop++ : MEM_TOP-1;
    for(; i>0 && (a->aTop[i-1].inUse<inUse || (a->aTop[i-1].inUse==inUse && a->aTop[i-1].ts>ts)); i--){
      a->aTop[i] = a->aTop[i-1];
    }
    a->aTop[i].inUse = inUse;
    a->aTop[i].ts = ts;
  }
  if( life>=0 && (a->nLifeTop<MEM_TOP || life>a->lifeTop[a->nLifeTop-1]) ){
    i = a->nLifeTop<MEM_TOP ? a->nLifeTop++ : MEM_TOP-1;
    for(; i>0 && a->lifeTop[i-1]<life; i--) a->lifeTop[i] = a->lifeTop[i-1];
    a->lifeTop[i] = life;
  }
}

/* A capped allocator's peak and lifetime peak without the events over its
** device's memory_size (memSize > 0), which are left out as filterRecs
** leaves them out of a replay: from the largest values kept (memTopAdd).
** *pKnown is 0 when every kept value is over memSize (more than MEM_TOP
** events were: the peak is not known); *pnOver counts those over it. */
static void memCappedPeak(const MemAlloc *a, int64_t memSize, int64_t *pPeak, profsum_ps *pTs,
                          int64_t *pLife, int *pKnown, int *pnOver){
  int i;
  *pKnown = 0; *pnOver = 0; *pLife = -1;
  for(i=0; i<a->nTop; i++){
    if( memSize>0 && a->aTop[i].inUse>memSize ){ (*pnOver)++; continue; }
    *pPeak = a->aTop[i].inUse; *pTs = a->aTop[i].ts; *pKnown = 1;
    break;
  }
  for(i=0; i<a->nLifeTop; i++){
    if( memSize>0 && a->lifeTop[i]>memSize ) continue;
    *pLife = a->lifeTop[i];
    break;
  }
}

int memTake(InsMem *p, MemIn *m){
  MemAlloc *a;
  MemRec *r;
  int rc;
  char zIdx[24];
  const char *zA = m->idKind==1 ? m->zAllocator : 0;   /* the allocator's name */
  int64_t nA = zA ? m->nAllocator : 0;
  const char *zWhat = m->torch ? "PyTorch [memory] event"
                      : m->isAlloc ? "MemoryAllocation" : "MemoryDeallocation";
  if( m->idKind==2 ){
    /* the device's index names the allocator, as xprof's memory ids do */
    sqlite3_snprintf(sizeof(zIdx), zIdx, "%lld", (long long)m->devIdx);
    zA = zIdx;
    nA = (int64_t)strlen(zIdx);
  }
  if( m->oom ) return memOom(p, m, zA, nA);
  if( m->torch ) p->nTorch++;
  if( zA==0 || nA==0 || m->eInUse==MV_ABSENT ){
    if( insDiagWanted(&p->diag, "memory_event_incomplete") ){
      return insDiagAdd(&p->diag, m->idx, m->off, "memory_event_incomplete", sqlite3_mprintf(
          "%s without %s: left out of the memory views", zWhat,
          zA==0 || nA==0 ? (m->torch ? "a usable 'Device Type'" : "an allocator_name, index_on_host or device_ordinal")
                         : m->torch ? "'Total Allocated' (or a ts)" : "bytes_allocated"));
    }
    return insDiagCount(&p->diag, "memory_event_incomplete");
  }
  m->eInUse = memByteCheck(m->eInUse, m->inUse);
  m->eBytes = memByteCheck(m->eBytes, m->bytes);
  m->eReq = memByteCheck(m->eReq, m->req);
  m->eLife = memByteCheck(m->eLife, m->life);
  if( m->eInUse==MV_BAD || m->eBytes==MV_BAD ){
    if( insDiagWanted(&p->diag, "memory_bytes_out_of_range") ){
      return insDiagAdd(&p->diag, m->idx, m->off, "memory_bytes_out_of_range", sqlite3_mprintf(
          "%s of allocator '%.*s': %s is negative, not an integer or 2^50 bytes or more: "
          "the event is left out of the memory views", zWhat, (int)nA, zA,
          m->eInUse==MV_BAD ? (m->torch ? "'Total Allocated'" : "bytes_allocated")
                            : (m->torch ? "'Bytes'" : "allocation_bytes")));
    }
    return insDiagCount(&p->diag, "memory_bytes_out_of_range");
  }
  if( (rc = allocatorOf(p, zA, nA, m->idx, m->off, &a))!=SQLITE_OK || a==0 ) return rc;
  if( m->idKind==2 && a->iIdx<0 && a->iGpu<0 ) a->iIdx = (int)m->devIdx;
  if( m->torch ){
    a->torch = 1;
    if( m->iGpu>=0 && a->iGpu<0 && a->iIdx<0 ) a->iGpu = m->iGpu;
    if( memByteCheck(m->eRes, m->res)==MV_OK && m->res>a->resPeak ) a->resPeak = m->res;
  }
  if( m->isAlloc ){
    a->nAlloc++;
    if( m->eBytes==MV_OK ) a->allocBytes = satAdd(a->allocBytes, m->bytes);
  }else{
    a->nDealloc++;
  }
  if( !a->hasPeak || m->inUse>a->peak || (m->inUse==a->peak && m->ts<a->peakTs) ){
    a->hasPeak = 1; a->peak = m->inUse; a->peakTs = m->ts; a->peakOrd = p->nOrd;
    a->peakCap = !m->torch && memByteCheck(m->eRes, m->res)==MV_OK && memByteCheck(m->eAvail, m->avail)==MV_OK
                 ? m->inUse + m->res + m->avail : -1;
  }
  if( m->eLife==MV_OK && m->life>a->lifePeak ) a->lifePeak = m->life;
  memTopAdd(a, m->inUse, m->ts, m->eLife==MV_OK ? m->life : -1);
  if( p->nRec>=MEM_MAX_REC ){
    if( !a->capped ){
      a->capped = 1;
      if( insDiagWanted(&p->diag, "memory_events_capped") ){
        rc = insDiagAdd(&p->diag, m->idx, m->off, "memory_events_capped", sqlite3_mprintf(
            "more than %d memory events: allocator '%s' keeps its peak and counts, but its holders, "
            "per-step counts and timeline are not computed", MEM_MAX_REC, a->zName));
      }else{
        rc = insDiagCount(&p->diag, "memory_events_capped");
      }
    }
    p->nOrd++;
    return rc;
  }
  if( a->nRec>=a->nRecAlloc ){
    int64_t nNew = a->nRecAlloc ? a->nRecAlloc*2 : 64;
    MemRec *aNew = sqlite3_realloc64(a->aRec, sizeof(MemRec)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return SQLITE_NOMEM;
    a->aRec = aNew; a->nRecAlloc = nNew;
  }
  r = &a->aRec[a->nRec];
  memset(r, 0, sizeof(*r));
  r->ts = m->ts;
  r->ord = p->nOrd++;
  r->inUse = m->inUse;
  r->life = m->eLife==MV_OK ? m->life : -1;
  r->bytes = m->eBytes==MV_OK ? m->bytes : -1;
  r->req = m->eReq==MV_OK ? m->req : -1;
  r->addr = m->addr;
  r->hasAddr = m->eAddr==MV_OK;
  r->isAlloc = (uint8_t)m->isAlloc;
  r->iDetail = -1;
  if( m->isAlloc ){
    sqlite3_str *s = sqlite3_str_new(0);
    char *z;
    int n;
    sqlite3_str_appendall(s, "\"tf_op\":");
    fieldJson(s, &m->tfop);
    sqlite3_str_appendall(s, ",\"region_type\":");
    fieldJson(s, &m->region);
    sqlite3_str_appendall(s, ",\"data_type\":");
    fieldJson(s, &m->dtype);
    sqlite3_str_appendall(s, ",\"shape\":");
    fieldJson(s, &m->shape);
    n = sqlite3_str_length(s);
    rc = sqlite3_str_errcode(s);
    z = sqlite3_str_finish(s);
    if( rc==SQLITE_OK && z ) rc = profsumStrPoolIntern(&p->pool, z, n, &r->iDetail);
    else rc = SQLITE_NOMEM;
    sqlite3_free(z);
    if( rc ) return rc;
  }
  a->nRec++;
  p->nRec++;
  return SQLITE_OK;
}

/* See insights_mem_int.h. */
int memDevice(InsMem *p, const char *z, int64_t n, int64_t memSize){
  int i;
  for(i=0; i<p->nDev; i++){
    if( (int64_t)strlen(p->aDev[i].zName)==n && memcmp(p->aDev[i].zName, z, (size_t)n)==0 ) break;
  }
  if( i==p->nDev ){
    if( p->nDev>=p->nDevAlloc ){
      int nNew = p->nDevAlloc ? p->nDevAlloc*2 : 8;
      MemDev *a = sqlite3_realloc64(p->aDev, sizeof(MemDev)*(sqlite3_uint64)nNew);
      if( a==0 ) return -1;
      p->aDev = a; p->nDevAlloc = nNew;
    }
    p->aDev[i].zName = sqlite3_mprintf("%.*s", (int)n, z);
    if( p->aDev[i].zName==0 ) return -1;
    p->aDev[i].memSize = 0;
    p->nDev++;
  }
  if( p->aDev[i].memSize<=0 && memSize>0 ) p->aDev[i].memSize = memSize;
  return i;
}

/* See insights_int.h: device planes' memory_size. */
int insMemXpPlane(InsMem *p, ProfsumXp *pXp, const ProfsumXpPlane *pl){
  int i, rc = SQLITE_OK;
  p->isXPlane = 1;
  p->nKd = 0;
  p->kdPlane = pl->iPlane;
  memKernPlane(p->pKern);           /* the references of the plane before name other texts */
  if( pl->nName<8 || memcmp(pl->zName, "/device:", 8)!=0 ) return SQLITE_OK;
  /* the device: its entry by name (kernels of its chunks count once) */
  if( (i = memDevice(p, pl->zName, pl->nName, 0))<0 ) return SQLITE_NOMEM;
  p->curDevKey = i;
  if( pl->nEventMetadata>p->nKdAlloc ){
    unsigned char *a = sqlite3_realloc64(p->aKd, (sqlite3_uint64)pl->nEventMetadata);
    if( a ){ p->aKd = a; p->nKdAlloc = pl->nEventMetadata; }
  }
  if( pl->nEventMetadata<=p->nKdAlloc ){
    p->nKd = pl->nEventMetadata;
    if( p->nKd ) memset(p->aKd, 0, (size_t)p->nKd);
  }
  for(i=0; p->aDev[p->curDevKey].memSize==0 && i<pl->nStat; i++){
    /* memory_size: the first valid one of the device's planes */
    const ProfsumXpStat *st = &pl->aStat[i];
    int64_t v;
    if( !memTextEq(st->zName, st->nName, "memory_size") ) continue;
    if( statInt(pXp, st, &v, &rc)!=MV_OK || v<=0 ){ if( rc ) return rc; continue; }
    p->aDev[p->curDevKey].memSize = v;
  }
  return SQLITE_OK;
}

/* Read stats a[0..n) of a memory event into m (a later stat of a name
** replaces an earlier one). */
static int memStats(ProfsumXp *pXp, const ProfsumXpStat *a, int n, MemIn *m){
  int i, rc = SQLITE_OK;
  for(i=0; i<n && rc==SQLITE_OK; i++){
    const ProfsumXpStat *st = &a[i];
    int k = st->zName ? memKey(st->zName, st->nName) : -1;
    MemTxt *t = 0;
    switch( k ){
      case MK_ALLOCATOR: {
        const char *z = 0; int64_t nz = 0;
        if( st->eType==PROFSUM_XV_STR ){ z = st->z; nz = st->n; }
        else if( st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_REF ){
          rc = profsumXpStatText(pXp, st, &z, &nz);
          if( rc==SQLITE_OK && z ) rc = memOwn(m, z, nz, &z);
        }
        if( z ){ m->zAllocator = z; m->nAllocator = nz; m->idKind = 1; }
        break;
      }
      case MK_INDEX: case MK_ORDINAL: {
        int64_t v;
        if( statInt(pXp, st, &v, &rc)==MV_OK && v>=0 && v<=MEM_MAX_DEVIDX ){ m->idKind = 2; m->devIdx = v; }
        break;
      }
      case MK_INUSE: m->eInUse = statInt(pXp, st, &m->inUse, &rc); break;
      case MK_LIFE:  m->eLife = statInt(pXp, st, &m->life, &rc); break;
      case MK_BYTES: m->eBytes = statInt(pXp, st, &m->bytes, &rc); break;
      case MK_REQ:   m->eReq = statInt(pXp, st, &m->req, &rc); break;
      case MK_RESERVED: m->eRes = statInt(pXp, st, &m->res, &rc); break;
      case MK_AVAIL: m->eAvail = statInt(pXp, st, &m->avail, &rc); break;
      case MK_ADDR:
        if( st->eType==PROFSUM_XV_UINT64 ){ m->addr = st->uVal; m->eAddr = MV_OK; }
        else if( st->eType==PROFSUM_XV_INT64 ){ m->addr = (uint64_t)st->iVal; m->eAddr = MV_OK; }
        else{ int64_t v; m->eAddr = statInt(pXp, st, &v, &rc); m->addr = (uint64_t)v; }
        break;
      default: t = memDetailField(m, k); break;
    }
    if( t ){
      /* numbers as their decimal text (a JSON number); text as is */
      memset(t, 0, sizeof(*t));
      t->present = 1;
      if( st->eType==PROFSUM_XV_INT64 || st->eType==PROFSUM_XV_UINT64 || st->eType==PROFSUM_XV_DOUBLE ){
        /* the text lives in a per-field scratch: see memFieldNum */
        t->isNum = 1;
        t->z = (const char*)st;     /* resolved by memNumFields */
        t->n = -1;
      }else if( st->eType==PROFSUM_XV_STR ){
        t->z = st->z; t->n = st->n;
      }else{
        const char *z = 0; int64_t nz = 0;
        rc = profsumXpStatText(pXp, st, &z, &nz);
        if( rc==SQLITE_OK && z ) rc = memOwn(m, z, nz, &z);
        if( z==0 ) t->present = 0;
        t->z = z; t->n = nz;
      }
    }
  }
  return rc;
}

/* Numeric text fields of m (t->n==-1: t->z is the stat): written as
** decimal text into abuf[4][40]. */
static void memNumFields(MemIn *m, char abuf[4][40]){
  MemTxt *at[4];
  int i;
  at[0] = &m->tfop; at[1] = &m->region; at[2] = &m->dtype; at[3] = &m->shape;
  for(i=0; i<4; i++){
    MemTxt *t = at[i];
    const ProfsumXpStat *st;
    if( !t->present || !t->isNum || t->n!=-1 ) continue;
    st = (const ProfsumXpStat*)t->z;
    if( st->eType==PROFSUM_XV_INT64 ) sqlite3_snprintf(40, abuf[i], "%lld", (long long)st->iVal);
    else if( st->eType==PROFSUM_XV_UINT64 ) sqlite3_snprintf(40, abuf[i], "%llu", (unsigned long long)st->uVal);
    else if( isfinite(st->rVal) ) sqlite3_snprintf(40, abuf[i], "%!.17g", st->rVal);
    else { t->present = 0; continue; }
    t->z = abuf[i];
    t->n = (int64_t)strlen(abuf[i]);
  }
}

/* See insights_int.h: memory events and kernels. */
int insMemXpEvent(InsMem *p, ProfsumXp *pXp, const ProfsumXpEvent *ev){
  const ProfsumXpEventMeta *mt = ev->pMeta;
  int rc = SQLITE_OK;
  if( mt==0 || ev->eData!=PROFSUM_XD_OFFSET ) return SQLITE_OK;
  if( ev->nStat==0 && mt->iMeta<p->nKd && ev->pPlane->iPlane==p->kdPlane && p->aKd[mt->iMeta]==1 ){
    return SQLITE_OK;     /* known below: a device op of no interest here */
  }
  if( memTextEq(mt->zName, mt->nName, "MemoryAllocation") || memTextEq(mt->zName, mt->nName, "MemoryDeallocation") ){
    MemIn m;
    char abuf[4][40];
    memset(&m, 0, sizeof(m));
    m.isAlloc = mt->nName==16;
    m.ts = (profsum_ps)ev->pLine->timestampNs*1000 + ev->offsetPs;
    m.idx = ev->iEvent;
    m.off = ev->iOffset;
    rc = memStats(pXp, mt->aStat, mt->nStat, &m);
    if( rc==SQLITE_OK ) rc = memStats(pXp, ev->aStat, ev->nStat, &m);
    if( rc==SQLITE_OK ){
      memNumFields(&m, abuf);
      rc = memTake(p, &m);
    }
    memInFree(&m);
    return rc;
  }
  if( ev->pPlane->nName>=8 && memcmp(ev->pPlane->zName, "/device:", 8)==0 && ev->durationPs>0 ){
    /* kernel_details: the event's stat, else its metadata's (a kernel
    ** event has a positive duration, as every timeline event counted) */
    const ProfsumXpStat *apKey[3] = {0, 0, 0};   /* kernel_details, hlo_op, hlo_module */
    char *az[3] = {0, 0, 0};                       /* copies of texts made for the call */
    const char *zk[3] = {0, 0, 0};
    int64_t an[3] = {0, 0, 0};
    int pass, i, k;
    if( ev->nStat==0 && mt->iMeta<p->nKd && ev->pPlane->iPlane==p->kdPlane ){
      /* its metadata's stats decide: looked at once per entry */
      unsigned char *pk = &p->aKd[mt->iMeta];
      if( *pk==0 ){
        *pk = 1;
        for(i=0; i<mt->nStat; i++) if( kernelKey(mt->aStat[i].zName, mt->aStat[i].nName)==0 ) *pk = 2;
      }
      if( *pk==1 ) return SQLITE_OK;
    }
    for(pass=0; pass<2; pass++){
      const ProfsumXpStat *a = pass ? ev->aStat : mt->aStat;
      int n = pass ? ev->nStat : mt->nStat;
      for(i=0; i<n; i++){
        if( (k = kernelKey(a[i].zName, a[i].nName))>=0 ) apKey[k] = &a[i];
      }
    }
    if( apKey[0]==0 ) return SQLITE_OK;
    for(k=0; k<3 && rc==SQLITE_OK; k++){
      const char *z = 0; int64_t n = 0;
      const ProfsumXpStat *st = apKey[k];
      char zNum[40];
      if( st==0 ) continue;
      if( st->eType==PROFSUM_XV_STR || (st->eType==PROFSUM_XV_REF && st->z) ){
        /* the text profsumXpStatText would give, valid as long as the
        ** stat (its contract): no copy */
        zk[k] = st->z ? st->z : ""; an[k] = st->n;
        continue;
      }
      if( st->eType==PROFSUM_XV_BYTES || st->eType==PROFSUM_XV_REF || st->eType==PROFSUM_XV_CSTR ){
        rc = profsumXpStatText(pXp, st, &z, &n);
      }else if( st->eType==PROFSUM_XV_INT64 ){
        sqlite3_snprintf(sizeof(zNum), zNum, "%lld", (long long)st->iVal); z = zNum; n = (int64_t)strlen(zNum);
      }else if( st->eType==PROFSUM_XV_UINT64 ){
        sqlite3_snprintf(sizeof(zNum), zNum, "%llu", (unsigned long long)st->uVal); z = zNum; n = (int64_t)strlen(zNum);
      }
      if( rc==SQLITE_OK && z ){
        az[k] = sqlite3_malloc64((sqlite3_uint64)n+1);
        if( az[k]==0 ) rc = SQLITE_NOMEM;
        else { memcpy(az[k], z, (size_t)n); az[k][n] = 0; an[k] = n; zk[k] = az[k]; }
      }
    }
    if( rc==SQLITE_OK && zk[0] ){
      const char *zName = mt->nDisplay>0 ? mt->zDisplay : mt->zName;
      int64_t nName = mt->nDisplay>0 ? mt->nDisplay : mt->nName;
      MemKernRef r, *pRef = 0;
      /* texts that are resolved references (as GPU tracers write them):
      ** the tally finds them by their values */
      if( apKey[0]->eType==PROFSUM_XV_REF && apKey[0]->z
       && (apKey[1]==0 || (apKey[1]->eType==PROFSUM_XV_REF && apKey[1]->z)) ){
        r.iMeta = mt->iMeta;
        r.det = apKey[0]->uVal;
        r.hlo = apKey[1] ? apKey[1]->uVal : UINT64_MAX;
        pRef = &r;
      }
      rc = memKernAdd(p->pKern, &p->diag, zName, nName, zk[0], an[0], zk[1], an[1], zk[2], an[2],
                      p->curDevKey, 0, ev->durationPs, ev->iEvent, ev->iOffset, pRef);
    }
    for(k=0; k<3; k++) sqlite3_free(az[k]);
  }
  return rc;
}

/* What a JSON entry's args hold for the collector. */
typedef struct JsonArgs {
  MemIn *m;               /* memory event (0: a kernel) */
  ProfsumSpan aK[3];      /* kernel_details, hlo_op, hlo_module */
} JsonArgs;

/* A member of JSON args (memJsonMembers). */
static int jsonArg(void *pCtx, const char *zKey, int64_t nKey, const char *zVal, int64_t nVal, int bIsStr){
  JsonArgs *j = (JsonArgs*)pCtx;
  if( j->m==0 ){
    int k = kernelKey(zKey, nKey);
    if( k>=0 && bIsStr ){
      j->aK[k].z = zVal; j->aK[k].n = nVal; j->aK[k].type = PROFSUM_JT_STRING;
    }
  }else{
    MemIn *m = j->m;
    int k = memKey(zKey, nKey);
    MemTxt *t = 0;
    int isNull = !bIsStr && memTextEq(zVal, nVal, "null");
    switch( k ){
      case MK_ALLOCATOR: if( bIsStr ){ m->zAllocator = zVal; m->nAllocator = nVal; m->idKind = 1; } break;
      case MK_INDEX: case MK_ORDINAL: {
        int64_t v;
        if( !isNull && memNumText(zVal, nVal, &v)==MV_OK && v>=0 && v<=MEM_MAX_DEVIDX ){ m->idKind = 2; m->devIdx = v; }
        break;
      }
      case MK_INUSE: m->eInUse = isNull ? MV_ABSENT : memNumText(zVal, nVal, &m->inUse); break;
      case MK_LIFE: m->eLife = isNull ? MV_ABSENT : memNumText(zVal, nVal, &m->life); break;
      case MK_BYTES: m->eBytes = isNull ? MV_ABSENT : memNumText(zVal, nVal, &m->bytes); break;
      case MK_REQ: m->eReq = isNull ? MV_ABSENT : memNumText(zVal, nVal, &m->req); break;
      case MK_RESERVED: m->eRes = isNull ? MV_ABSENT : memNumText(zVal, nVal, &m->res); break;
      case MK_AVAIL: m->eAvail = isNull ? MV_ABSENT : memNumText(zVal, nVal, &m->avail); break;
      case MK_ADDR:
        /* an address may exceed int64: read as unsigned */
        m->eAddr = memAddrText(zVal, nVal, 0, &m->addr);
        break;
      default: t = memDetailField(m, k); break;
    }
    if( t && !isNull ){
      t->present = 1; t->z = zVal; t->n = nVal; t->isNum = !bIsStr;
    }
  }
  return 0;
}

/* See insights_int.h: memory events (should a converter keep them) and
** kernels with kernel_details. */
int insMemJsonEvent(InsMem *p, const ProfsumEvent *ev){
  int rc = SQLITE_OK;
  JsonArgs j;
  char ph = ev->ph.n==1 ? ev->ph.z[0] : 0;
  if( ph=='M' && ev->pid.kind==PROFSUM_ID_INT && profsumSpanIs(&ev->name, "process_name", 12) ){
    /* which pids are devices: a kernel counts only on one */
    const ProfsumSpan *v = &ev->aArg[PROFSUM_AK_NAME];
    char *zBuf = 0;
    int64_t nBuf = 0, n = 0;
    const char *z = 0;
    if( v->type==PROFSUM_JT_STRING && profsumSpanText(v, &zBuf, &nBuf, &z, &n) ) return SQLITE_NOMEM;
    rc = memKernProcess(p->pKern, ev->pid.iVal, z && n>=8 && memcmp(z, "/device:", 8)==0);
    sqlite3_free(zBuf);
    return rc;
  }
  if( ev->args.z==0 || ev->args.type!=PROFSUM_JT_OBJECT ) return SQLITE_OK;
  if( (ph=='i' || ph=='I') && (ev->name.n==8 || ev->name.n==13) ){
    if( memTextEq(ev->name.z, ev->name.n, "[memory]") ) return memTorchEvent(p, ev, 0);
    if( memTextEq(ev->name.z, ev->name.n, "[OutOfMemory]") ) return memTorchEvent(p, ev, 1);
  }
  if( (ph=='X' || ph=='i' || ph=='I') && (ev->name.n==16 || ev->name.n==18)
   && (memTextEq(ev->name.z, ev->name.n, "MemoryAllocation") || memTextEq(ev->name.z, ev->name.n, "MemoryDeallocation")) ){
    MemIn m;
    char *az[5] = {0, 0, 0, 0, 0};
    MemTxt *at[4];
    int i;
    memset(&j, 0, sizeof(j));
    memset(&m, 0, sizeof(m));
    m.isAlloc = ev->name.n==16;
    m.ts = ev->ts;
    m.idx = ev->idx;
    m.off = ev->iOffset;
    j.m = &m;
    memJsonMembers(ev->args.z, ev->args.n, jsonArg, &j);
    if( !ev->hasTs ) m.eInUse = MV_ABSENT;
    /* decode the escapes of the text fields */
    at[0] = &m.tfop; at[1] = &m.region; at[2] = &m.dtype; at[3] = &m.shape;
    for(i=0; i<4 && rc==SQLITE_OK; i++){
      if( at[i]->present && !at[i]->isNum && memchr(at[i]->z, '\\', (size_t)at[i]->n) ){
        rc = memJsonUnescape(at[i]->z, at[i]->n, &az[i], &at[i]->n);
        at[i]->z = az[i];
      }
    }
    if( rc==SQLITE_OK && m.zAllocator && memchr(m.zAllocator, '\\', (size_t)m.nAllocator) ){
      rc = memJsonUnescape(m.zAllocator, m.nAllocator, &az[4], &m.nAllocator);
      m.zAllocator = az[4];
    }
    if( rc==SQLITE_OK ) rc = memTake(p, &m);
    for(i=0; i<5; i++) sqlite3_free(az[i]);
    return rc;
  }
  /* a kernel: an X event whose args have a top-level kernel_details (the
  ** scanner found the key: the args are read again only for these) */
  if( ph!='X' || ev->aArg[PROFSUM_AK_KERNEL_DETAILS].type==PROFSUM_JT_NONE ) return SQLITE_OK;
  if( !ev->hasDur || ev->dur<=0 ) return SQLITE_OK;    /* a kernel runs for some time */
  memset(&j, 0, sizeof(j));
  memJsonMembers(ev->args.z, ev->args.n, jsonArg, &j);
  if( j.aK[0].z ){
    /* the texts as they are, or their escapes decoded into copies */
    char *az[4] = {0, 0, 0, 0};
    const char *zk[4] = {0, 0, 0, 0};
    int64_t an[4] = {0, 0, 0, 0};
    int k;
    for(k=0; k<3 && rc==SQLITE_OK; k++){
      if( j.aK[k].z==0 ) continue;
      if( memchr(j.aK[k].z, '\\', (size_t)j.aK[k].n) ){
        rc = memJsonUnescape(j.aK[k].z, j.aK[k].n, &az[k], &an[k]);
        zk[k] = az[k];
      }else{
        zk[k] = j.aK[k].z; an[k] = j.aK[k].n;
      }
    }
    if( rc==SQLITE_OK && ev->name.z ){
      if( ev->name.flags & PROFSUM_SF_ESCAPE ){
        rc = memJsonUnescape(ev->name.z, ev->name.n, &az[3], &an[3]);
        zk[3] = az[3];
      }else{
        zk[3] = ev->name.z; an[3] = ev->name.n;
      }
    }
    if( rc==SQLITE_OK ){
      int64_t dur = ev->hasDur && ev->dur>0 && ev->dur<(profsum_ps)INT64_MAX ? (int64_t)ev->dur : 0;
      int64_t pid = ev->pid.kind==PROFSUM_ID_INT ? ev->pid.iVal : INT64_MIN;
      rc = memKernAdd(p->pKern, &p->diag, zk[3] ? zk[3] : "", an[3], zk[0], an[0], zk[1], an[1],
                      zk[2], an[2], pid, 1, dur, ev->idx, ev->iOffset, 0);
    }
    for(k=0; k<4; k++) sqlite3_free(az[k]);
  }
  return rc;
}

/* ===================================================================== */
/* The write                                                              */
/* ===================================================================== */

/* qsort order of records: time, then arrival. */
static int recCmp(const void *a, const void *b){
  const MemRec *x = (const MemRec*)a, *y = (const MemRec*)b;
  if( x->ts!=y->ts ) return x->ts<y->ts ? -1 : 1;
  return x->ord<y->ord ? -1 : x->ord>y->ord;
}

/* A step's interval, exact ps (absolute, as the engine's step spans), the
** latest end among it and the steps sorted before it (stepAt), and what
** the replay counts into it. */
typedef struct MemStep {
  int64_t step;
  profsum_ps start, end, maxEnd;
  int64_t nAlloc, bytes;
} MemStep;

/* qsort by start. */
static int stepCmp(const void *a, const void *b){
  const MemStep *x = (const MemStep*)a, *y = (const MemStep*)b;
  if( x->start!=y->start ) return x->start<y->start ? -1 : 1;
  return x->step<y->step ? -1 : x->step>y->step;
}

/* qsort by step number. */
static int stepNumCmp(const void *a, const void *b){
  const MemStep *x = (const MemStep*)a, *y = (const MemStep*)b;
  return x->step<y->step ? -1 : x->step>y->step;
}

/* 1 when span s belongs to device zDev (0: any device). */
static int spanOfDevice(const ProfsumStepSpan *s, const char *zDev){
  size_t n;
  if( zDev==0 ) return 1;
  n = strlen(zDev);
  return s->zDev!=0 && (size_t)s->nDev==n && memcmp(s->zDev, zDev, n)==0;
}

/* The steps of the trace, from the nSpan step spans aSpan the engine wrote
** to profsum_agg_step_span: those of device zDev when it has any, else of
** every device, one interval per step number from its first start to its
** last end; sorted by start, each with the latest end so far (maxEnd).
** *paStep (0 when there are none), *pnStep.  SQLITE_OK or SQLITE_NOMEM. */
static int loadSteps(const ProfsumStepSpan *aSpan, int64_t nSpan, const char *zDev,
                     MemStep **paStep, int64_t *pnStep){
  MemStep *a;
  int64_t i, n = 0, m;
  int pass;
  *paStep = 0; *pnStep = 0;
  if( nSpan<=0 ) return SQLITE_OK;
  a = sqlite3_malloc64(sizeof(MemStep)*(sqlite3_uint64)nSpan);
  if( a==0 ) return SQLITE_NOMEM;
  for(pass=(zDev ? 0 : 1); pass<2 && n==0; pass++){
    for(i=0; i<nSpan; i++){
      if( pass==0 && !spanOfDevice(&aSpan[i], zDev) ) continue;
      a[n].step = aSpan[i].step;
      a[n].start = aSpan[i].start;
      a[n].end = aSpan[i].end;
      a[n].nAlloc = a[n].bytes = 0;
      n++;
    }
  }
  if( n==0 ){ sqlite3_free(a); return SQLITE_OK; }
  /* one interval per step number: its first start, its last end */
  qsort(a, (size_t)n, sizeof(MemStep), stepNumCmp);
  for(i=1, m=0; i<n; i++){
    if( a[i].step==a[m].step ){
      if( a[i].start<a[m].start ) a[m].start = a[i].start;
      if( a[i].end>a[m].end ) a[m].end = a[i].end;
    }else{
      a[++m] = a[i];
    }
  }
  n = m+1;
  qsort(a, (size_t)n, sizeof(MemStep), stepCmp);
  for(i=0; i<n; i++) a[i].maxEnd = (i>0 && a[i-1].maxEnd>a[i].end) ? a[i-1].maxEnd : a[i].end;
  *paStep = a; *pnStep = n;
  return SQLITE_OK;
}

/* The step containing time t (exact ps): of the n steps of a (sorted by
** start, loadSteps) those with start <= t < end, the latest-starting one
** (the later step number among equal starts); -1 when none.  The walk
** back from the last step starting at or before t stops where no earlier
** step ends after t (maxEnd): one step when steps do not overlap. */
static int64_t stepAt(const MemStep *a, int64_t n, profsum_ps t){
  int64_t lo = 0, hi = n, i;       /* first index with start > t */
  while( lo<hi ){
    int64_t mid = (lo+hi)/2;
    if( a[mid].start<=t ) lo = mid+1; else hi = mid;
  }
  for(i=lo-1; i>=0 && a[i].maxEnd>t; i--){
    if( t<a[i].end ) return i;
  }
  return -1;
}

/* Exact decimal µs of ps v into s (profsumStrAppendMicros). */
static void appendMicros(sqlite3_str *s, profsum_ps v){ profsumStrAppendMicros(s, v); }

/* Hash of live allocations: addr → record index (linear probing,
** deletion by backward shift). */
typedef struct LiveMap { uint64_t *aKey; int64_t *aVal; int64_t nSlot, n; } LiveMap;

static uint64_t liveHash(uint64_t k){ return (k * 0x9e3779b97f4a7c15ULL) >> 7; }

/* Look up addr: its slot, or -1. */
static int64_t liveFind(const LiveMap *m, uint64_t addr){
  int64_t i = (int64_t)(liveHash(addr) & (uint64_t)(m->nSlot-1));
  while( m->aVal[i]>=0 ){
    if( m->aKey[i]==addr ) return i;
    i = (i+1) & (m->nSlot-1);
  }
  return -1;
}

/* Set addr → v (replacing). */
static void livePut(LiveMap *m, uint64_t addr, int64_t v){
  int64_t i = (int64_t)(liveHash(addr) & (uint64_t)(m->nSlot-1));
  while( m->aVal[i]>=0 ){
    if( m->aKey[i]==addr ){ m->aVal[i] = v; return; }
    i = (i+1) & (m->nSlot-1);
  }
  m->aKey[i] = addr; m->aVal[i] = v; m->n++;
}

/* Remove slot i. */
static void liveDel(LiveMap *m, int64_t i){
  int64_t j = i;
  m->aVal[i] = -1;
  m->n--;
  for(;;){
    int64_t h;
    j = (j+1) & (m->nSlot-1);
    if( m->aVal[j]<0 ) return;
    h = (int64_t)(liveHash(m->aKey[j]) & (uint64_t)(m->nSlot-1));
    /* move j into the hole at i when its home h is not in (i, j] */
    if( (i<=j) ? (h<=i || h>j) : (h<=i && h>j) ){
      m->aKey[i] = m->aKey[j]; m->aVal[i] = m->aVal[j];
      m->aVal[j] = -1;
      i = j;
    }
  }
}

/* A live allocation at the peak, for sorting. */
typedef struct Holder { int64_t bytes; profsum_ps ts; uint64_t addr; int64_t i; } Holder;

/* Order of holders: bytes desc, then allocated first, then address. */
static int holderCmp(const void *a, const void *b){
  const Holder *x = (const Holder*)a, *y = (const Holder*)b;
  if( x->bytes!=y->bytes ) return x->bytes>y->bytes ? -1 : 1;
  if( x->ts!=y->ts ) return x->ts<y->ts ? -1 : 1;
  return x->addr<y->addr ? -1 : x->addr>y->addr;
}

/* The figures of one allocator, computed at the write. */
typedef struct MemOut {
  int64_t nAlloc, nDealloc, allocBytes;
  int hasPeak; int64_t peak; profsum_ps peakTs;
  int64_t lifePeak;
  int hasPeakStep; int64_t peakStep;
  int64_t nLive, liveBytes;          /* known live at the peak; -1: unknown */
  char *zHolders, *zPerStep, *zNote;
} MemOut;

/* Keep the records of a that a device of memory size memSize can hold
** (memSize 0: unknown), with a diagnostic for each left out; sort them. */
static int filterRecs(InsMem *p, MemAlloc *a, int64_t memSize){
  int64_t i, k = 0;
  int rc = SQLITE_OK;
  for(i=0; i<a->nRec && rc==SQLITE_OK; i++){
    MemRec *r = &a->aRec[i];
    if( memSize>0 && r->inUse>memSize ){
      if( insDiagWanted(&p->diag, "memory_bytes_out_of_range") ){
        rc = insDiagAdd(&p->diag, -1, -1, "memory_bytes_out_of_range", sqlite3_mprintf(
            "a memory event of allocator '%s' says %lld bytes in use, more than its device's "
            "memory_size %lld: the event is left out of the memory views",
            a->zName, (long long)r->inUse, (long long)memSize));
      }else{
        insDiagCount(&p->diag, "memory_bytes_out_of_range");
      }
      continue;
    }
    if( memSize>0 && r->life>memSize ) r->life = -1;
    a->aRec[k++] = *r;
  }
  a->nRec = k;
  if( k ) qsort(a->aRec, (size_t)k, sizeof(MemRec), recCmp);
  return rc;
}

/* The state of one replay: the live set and what the pass over the
** records found, handed from step to step of replay(). */
typedef struct Replay {
  LiveMap m;                         /* live allocations: address -> record */
  Holder *aLive; int64_t nLiveIdx;   /* the live set at the peak */
  MemStep *aStep;                    /* a copy of the steps, counted into */
  int64_t iPeak, nUnmatched, iFirstUnmatched, nReused;
} Replay;

/* First pass over the n records aR: counts, bytes, the peak and the longest
** life into o; the index of the peak record into *piPeak. */
static void replayFigures(const MemRec *aR, int64_t n, MemOut *o, int64_t *piPeak){
  int64_t i;
  o->nAlloc = o->nDealloc = o->allocBytes = 0;
  o->lifePeak = -1;
  o->hasPeak = 0;
  for(i=0; i<n; i++){
    if( !o->hasPeak || aR[i].inUse>o->peak ){ o->hasPeak = 1; o->peak = aR[i].inUse; *piPeak = i; }
    if( aR[i].life>o->lifePeak ) o->lifePeak = aR[i].life;
    if( aR[i].isAlloc ){ o->nAlloc++; if( aR[i].bytes>0 ) o->allocBytes = satAdd(o->allocBytes, aR[i].bytes); }
    else o->nDealloc++;
  }
}

/* Second pass: walk the records through the live set of r (allocated by
** the caller), count allocations per step into r->aStep, and take the
** live set at the peak into r->aLive (and o->nLive, o->liveBytes).
** SQLITE_NOMEM when the holders cannot be allocated. */
static int replayLive(Replay *r, const MemRec *aR, int64_t n, int64_t nStep, MemOut *o){
  LiveMap *m = &r->m;
  int64_t i;
  for(i=0; i<n; i++){
    const MemRec *rec = &aR[i];
    if( rec->isAlloc ){
      if( nStep ){
        int64_t s = stepAt(r->aStep, nStep, rec->ts);
        if( s>=0 ){ r->aStep[s].nAlloc++; if( rec->bytes>0 ) r->aStep[s].bytes = satAdd(r->aStep[s].bytes, rec->bytes); }
      }
      if( rec->hasAddr ){
        if( liveFind(m, rec->addr)>=0 ) r->nReused++;
        livePut(m, rec->addr, i);
      }
    }else if( rec->hasAddr ){
      int64_t s = liveFind(m, rec->addr);
      if( s>=0 ) liveDel(m, s);
      else { if( r->nUnmatched++==0 ) r->iFirstUnmatched = i; }
    }
    if( i==r->iPeak ){
      int64_t j;
      r->aLive = sqlite3_malloc64(sizeof(Holder)*(sqlite3_uint64)(m->n+1));
      if( r->aLive==0 ) return SQLITE_NOMEM;
      o->liveBytes = 0;
      for(j=0; j<m->nSlot; j++){
        Holder *h;
        if( m->aVal[j]<0 ) continue;
        h = &r->aLive[r->nLiveIdx++];
        h->i = m->aVal[j]; h->bytes = aR[h->i].bytes; h->ts = aR[h->i].ts; h->addr = aR[h->i].addr;
        if( aR[m->aVal[j]].bytes>0 ) o->liveBytes = satAdd(o->liveBytes, aR[m->aVal[j]].bytes);
      }
      o->nLive = r->nLiveIdx;
    }
  }
  return SQLITE_OK;
}

/* Finish s into *pz: SQLite's error code of the string, SQLITE_NOMEM
** when it finished empty-handed. */
static int replayFinish(sqlite3_str *s, char **pz){
  int rc = sqlite3_str_errcode(s);
  *pz = sqlite3_str_finish(s);
  if( rc==SQLITE_OK && *pz==0 ) rc = SQLITE_NOMEM;
  return rc;
}

/* The holders at the peak (sorted, at most MEM_TOP_HOLDERS) as a JSON
** array into o->zHolders. */
static int replayHolders(InsMem *p, Replay *r, const MemRec *aR, MemOut *o){
  sqlite3_str *s = sqlite3_str_new(0);
  int64_t j;
  if( r->nLiveIdx ) qsort(r->aLive, (size_t)r->nLiveIdx, sizeof(Holder), holderCmp);
  sqlite3_str_appendchar(s, 1, '[');
  for(j=0; j<r->nLiveIdx && j<MEM_TOP_HOLDERS; j++){
    const MemRec *rec = &aR[r->aLive[j].i];
    if( j ) sqlite3_str_appendchar(s, 1, ',');
    if( rec->addr<=(uint64_t)INT64_MAX ) sqlite3_str_appendf(s, "{\"addr\":%llu", (unsigned long long)rec->addr);
    else sqlite3_str_appendf(s, "{\"addr\":\"%llu\"", (unsigned long long)rec->addr);
    if( rec->bytes>=0 ) sqlite3_str_appendf(s, ",\"bytes\":%lld", (long long)rec->bytes);
    else sqlite3_str_appendall(s, ",\"bytes\":null");
    if( rec->req>=0 ) sqlite3_str_appendf(s, ",\"requested_bytes\":%lld", (long long)rec->req);
    else sqlite3_str_appendall(s, ",\"requested_bytes\":null");
    sqlite3_str_appendchar(s, 1, ',');
    if( rec->iDetail>=0 ) sqlite3_str_append(s, p->pool.az[rec->iDetail], (int)p->pool.an[rec->iDetail]);
    else sqlite3_str_appendall(s, "\"tf_op\":null,\"region_type\":null,\"data_type\":null,\"shape\":null");
    sqlite3_str_appendall(s, ",\"allocated_at_us\":");
    appendMicros(s, rec->ts);
    sqlite3_str_appendchar(s, 1, '}');
  }
  sqlite3_str_appendchar(s, 1, ']');
  return replayFinish(s, &o->zHolders);
}

/* The note into o->zNote: what the holders do not account for. */
static int replayNote(InsMem *p, MemOut *o){
  sqlite3_str *s = sqlite3_str_new(0);
  if( o->liveBytes<o->peak ){
    sqlite3_str_appendf(s, "%lld of the %lld bytes in use at the peak were allocated before the capture "
                        "began (or by events left out, or without an addr): their holders are unknown",
                        (long long)(o->peak - o->liveBytes), (long long)o->peak);
  }else{
    sqlite3_str_appendf(s, "every byte in use at the peak was allocated within the capture");
  }
  if( p->pool.full ) sqlite3_str_appendall(s, "; some holders lack their tf_op and shape (too much distinct text)");
  return replayFinish(s, &o->zNote);
}

/* The step of the peak into o, then the nStep (>0) counted steps of aStep,
** sorted by step number, as a JSON array into o->zPerStep. */
static int replayPerStep(MemStep *aStep, int64_t nStep, MemOut *o){
  sqlite3_str *s;
  int64_t j;
  int64_t ps = stepAt(aStep, nStep, o->peakTs);
  if( ps>=0 ){ o->hasPeakStep = 1; o->peakStep = aStep[ps].step; }
  /* by step number now (the lookups by time are done) */
  qsort(aStep, (size_t)nStep, sizeof(MemStep), stepNumCmp);
  s = sqlite3_str_new(0);
  sqlite3_str_appendchar(s, 1, '[');
  for(j=0; j<nStep; j++){
    const MemStep *st = &aStep[j];
    sqlite3_str_appendf(s, "%s{\"step\":%lld,\"allocations\":%lld,\"bytes\":%lld}", j ? "," : "",
                        (long long)st->step, (long long)st->nAlloc, (long long)st->bytes);
  }
  sqlite3_str_appendchar(s, 1, ']');
  return replayFinish(s, &o->zPerStep);
}

/* The diagnostics of the replay of a: unmatched deallocations, allocations
** not freed by the end (still in r's live set), reused addresses. */
static int replayDiags(InsMem *p, MemAlloc *a, const Replay *r, const MemRec *aR){
  const LiveMap *m = &r->m;
  int rc = SQLITE_OK;
  if( r->nUnmatched ){
    if( insDiagWanted(&p->diag, "memory_unmatched_deallocation") ){
      rc = insDiagAdd(&p->diag, -1, -1, "memory_unmatched_deallocation", sqlite3_mprintf(
          "allocator '%s': %lld deallocations free an address not allocated within the capture "
          "(the first at %.3f us): allocations made before it, their bytes counted in bytes_allocated "
          "but not among the holders", a->zName, (long long)r->nUnmatched,
          profsumPsToMicros(aR[r->iFirstUnmatched].ts)));
    }else insDiagCount(&p->diag, "memory_unmatched_deallocation");
  }
  if( rc==SQLITE_OK && m->n ){
    int64_t j, nb = 0;
    for(j=0; j<m->nSlot; j++) if( m->aVal[j]>=0 && aR[m->aVal[j]].bytes>0 ) nb = satAdd(nb, aR[m->aVal[j]].bytes);
    if( insDiagWanted(&p->diag, "memory_unfreed_allocation") ){
      rc = insDiagAdd(&p->diag, -1, -1, "memory_unfreed_allocation", sqlite3_mprintf(
          "allocator '%s': %lld allocations (%lld bytes) made within the capture are not freed by its end",
          a->zName, (long long)m->n, (long long)nb));
    }else insDiagCount(&p->diag, "memory_unfreed_allocation");
  }
  if( rc==SQLITE_OK && r->nReused ){
    if( insDiagWanted(&p->diag, "memory_address_reused") ){
      rc = insDiagAdd(&p->diag, -1, -1, "memory_address_reused", sqlite3_mprintf(
          "allocator '%s': %lld allocations at an address still live (no deallocation between): "
          "the later allocation holds the address", a->zName, (long long)r->nReused));
    }else insDiagCount(&p->diag, "memory_address_reused");
  }
  return rc;
}

/* The timeline of a: its n (>0) sorted records in at most MEM_MAX_BUCKETS
** buckets of equal time, one row a bucket inserted with pTl. */
static int replayTimeline(MemAlloc *a, const MemRec *aR, int64_t n, sqlite3 *db,
                          sqlite3_stmt *pTl, sqlite3_int64 traceId,
                          const char *zFunc, char **pzErr){
  profsum_ps F = aR[0].ts, S = aR[n-1].ts - aR[0].ts;
  int64_t nb = n<MEM_MAX_BUCKETS ? n : MEM_MAX_BUCKETS, b, j = 0;
  int64_t endBytes = 0;
  int rc = SQLITE_OK;
  if( S==0 ) nb = 1;
  for(b=0; b<nb && rc==SQLITE_OK; b++){
    int64_t mx = -1, cnt = 0;
    while( j<n ){
      int64_t bj = S==0 ? 0 : (int64_t)(((aR[j].ts - F) * nb) / S);
      if( bj>=nb ) bj = nb-1;
      if( bj!=b ) break;
      if( aR[j].inUse>mx ) mx = aR[j].inUse;
      endBytes = aR[j].inUse;
      cnt++; j++;
    }
    if( cnt==0 ) mx = endBytes;
    sqlite3_bind_int64(pTl, 1, traceId);
    sqlite3_bind_text(pTl, 2, a->zName, -1, SQLITE_STATIC);
    sqlite3_bind_int64(pTl, 3, b);
    sqlite3_bind_double(pTl, 4, profsumPsToMicros(F + (S*b)/nb));
    sqlite3_bind_int64(pTl, 5, mx);
    sqlite3_bind_int64(pTl, 6, endBytes);
    sqlite3_bind_int64(pTl, 7, cnt);
    rc = memStep(db, pTl, zFunc, pzErr);
  }
  return rc;
}

/* Replay the sorted records of a: figures, holders, per-step counts, and
** the timeline rows (inserted with pTl).  o is filled.  The steps: the
** figures, the live set, the holders, the note, per step, the
** diagnostics, the timeline. */
static int replay(InsMem *p, MemAlloc *a, const MemStep *aStep0, int64_t nStep, MemOut *o,
                  sqlite3 *db, sqlite3_stmt *pTl, sqlite3_int64 traceId,
                  const char *zFunc, char **pzErr){
  MemRec *aR = a->aRec;
  int64_t n = a->nRec, i;
  Replay r;
  int rc = SQLITE_OK;
  memset(&r, 0, sizeof(r));
  r.iPeak = -1; r.iFirstUnmatched = -1;
  replayFigures(aR, n, o, &r.iPeak);
  if( !o->hasPeak ) return SQLITE_OK;
  o->peakTs = aR[r.iPeak].ts;
  if( nStep ){
    r.aStep = sqlite3_malloc64(sizeof(MemStep)*(sqlite3_uint64)nStep);
    if( r.aStep==0 ) return SQLITE_NOMEM;
    memcpy(r.aStep, aStep0, sizeof(MemStep)*(size_t)nStep);
  }
  /* live set */
  r.m.nSlot = 64;
  while( r.m.nSlot < 2*(o->nAlloc+1) ) r.m.nSlot *= 2;
  r.m.aKey = sqlite3_malloc64(sizeof(uint64_t)*(sqlite3_uint64)r.m.nSlot);
  r.m.aVal = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)r.m.nSlot);
  if( r.m.aKey==0 || r.m.aVal==0 ){ rc = SQLITE_NOMEM; goto done; }
  for(i=0; i<r.m.nSlot; i++) r.m.aVal[i] = -1;
  rc = replayLive(&r, aR, n, nStep, o);
  if( rc==SQLITE_OK ) rc = replayHolders(p, &r, aR, o);
  if( rc==SQLITE_OK ) rc = replayNote(p, o);
  if( rc==SQLITE_OK && nStep ) rc = replayPerStep(r.aStep, nStep, o);
  if( rc==SQLITE_OK ) rc = replayDiags(p, a, &r, aR);
  if( rc==SQLITE_OK && pTl ) rc = replayTimeline(a, aR, n, db, pTl, traceId, zFunc, pzErr);
done:
  sqlite3_free(r.m.aKey);
  sqlite3_free(r.m.aVal);
  sqlite3_free(r.aLive);
  sqlite3_free(r.aStep);
  return rc;
}

/* The device plane of the allocator named by device index iIdx: the
** XSpace's /device:TPU:<iIdx>, else its /device:GPU:<iIdx>, written into
** zBuf[nBuf]; 0 when it has neither. */
static const char *memIdxDevice(InsMem *p, int iIdx, char *zBuf, int nBuf){
  static const char *azKind[] = { "TPU", "GPU" };
  int k, i;
  for(k=0; k<2; k++){
    sqlite3_snprintf(nBuf, zBuf, "/device:%s:%d", azKind[k], iIdx);
    for(i=0; i<p->nDev; i++) if( strcmp(p->aDev[i].zName, zBuf)==0 ) return zBuf;
  }
  return 0;
}

/* The memory_size of plane zDev, 0 when unknown. */
static int64_t memSizeOf(InsMem *p, const char *zDev){
  int i;
  for(i=0; zDev && i<p->nDev; i++) if( strcmp(p->aDev[i].zName, zDev)==0 ) return p->aDev[i].memSize;
  return 0;
}

/* See insights_int.h. */
int insMemWrite(InsMem *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                const ProfsumStepSpan *aSpan, int64_t nSpan, const char *zFunc, char **pzErr){
  sqlite3_stmt *pIns = 0, *pTl = 0;
  int i, j, nRows = 0, rc;
  rc = memPrepare(db, zFunc, pzErr, &pIns, "INSERT INTO \"%w\".profsum_agg_memory"
      "(trace_id, allocator, device, status, peak_bytes, peak_ts_us, peak_step, lifetime_peak_bytes, "
      "device_memory_bytes, num_allocations, num_deallocations, allocated_bytes, live_allocations_at_peak, "
      "known_live_bytes_at_peak, top_holders, per_step, note) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)", zSchema);
  if( rc==SQLITE_OK ) rc = memPrepare(db, zFunc, pzErr, &pTl, "INSERT INTO \"%w\".profsum_agg_memory_timeline"
      "(trace_id, allocator, bucket, ts_us, max_bytes_in_use, end_bytes_in_use, num_events) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7)", zSchema);
  for(i=0; rc==SQLITE_OK && i<p->nAlloc; i++){
    MemAlloc *a = &p->aAlloc[i];
    char zDev[40];
    const char *zD = 0;
    int64_t memSize, capSize;
    MemStep *aStep = 0; int64_t nStep = 0;
    MemOut o;
    memset(&o, 0, sizeof(o));
    o.nLive = o.liveBytes = -1;
    if( a->iGpu>=0 ){
      sqlite3_snprintf(sizeof(zDev), zDev, "/device:GPU:%d", a->iGpu);
      zD = zDev;
    }else if( a->iIdx>=0 ){
      zD = memIdxDevice(p, a->iIdx, zDev, (int)sizeof(zDev));
    }
    memSize = memSizeOf(p, zD);
    /* an index-named (PJRT) allocator's stated capacity is the device's
    ** memory; a BFC allocator's (GPU_N_bfc) is its own limit, not used */
    capSize = memSize<=0 && zD && a->iIdx>=0 && a->peakCap>0 ? a->peakCap : 0;
    if( !a->capped ){
      rc = filterRecs(p, a, memSize);
      if( rc==SQLITE_OK ) rc = loadSteps(aSpan, nSpan, zD, &aStep, &nStep);
      if( rc==SQLITE_OK && a->nRec ) rc = replay(p, a, aStep, nStep, &o, db, pTl, traceId, zFunc, pzErr);
      sqlite3_free(aStep);
      if( rc ){ sqlite3_free(o.zHolders); sqlite3_free(o.zPerStep); sqlite3_free(o.zNote); break; }
      if( !o.hasPeak ) continue;       /* every event left out */
    }else{
      int known, nOver;
      o.nAlloc = a->nAlloc; o.nDealloc = a->nDealloc; o.allocBytes = a->allocBytes;
      memCappedPeak(a, memSize, &o.peak, &o.peakTs, &o.lifePeak, &known, &nOver);
      o.hasPeak = known;
      if( nOver>0 ){
        if( insDiagWanted(&p->diag, "memory_bytes_out_of_range") ){
          rc = insDiagAdd(&p->diag, -1, -1, "memory_bytes_out_of_range", sqlite3_mprintf(
              "%s%d memory events of allocator '%s' say more bytes in use than its device's memory_size "
              "%lld: left out of its peak", known ? "" : "at least ", nOver, a->zName, (long long)memSize));
        }else{
          insDiagCount(&p->diag, "memory_bytes_out_of_range");
        }
        if( rc ) break;
      }
      if( !known ){
        /* more values over memory_size than are kept: no honest peak */
        sqlite3_bind_int64(pIns, 1, traceId);
        sqlite3_bind_text(pIns, 2, a->zName, -1, SQLITE_STATIC);
        if( zD ) sqlite3_bind_text(pIns, 3, zD, -1, SQLITE_STATIC); else sqlite3_bind_null(pIns, 3);
        sqlite3_bind_text(pIns, 4, "peak_unknown", -1, SQLITE_STATIC);
        for(j=5; j<=16; j++) sqlite3_bind_null(pIns, j);
        sqlite3_bind_text(pIns, 17, "more than 1048576 memory events, and more than 16 of them say more bytes in "
                          "use than the device's memory_size: the peak within it is not known", -1, SQLITE_STATIC);
        rc = memStep(db, pIns, zFunc, pzErr);
        nRows++;
        continue;
      }
      rc = loadSteps(aSpan, nSpan, zD, &aStep, &nStep);
      if( rc==SQLITE_OK && nStep ){
        int64_t s = stepAt(aStep, nStep, o.peakTs);
        if( s>=0 ){ o.hasPeakStep = 1; o.peakStep = aStep[s].step; }
      }
      sqlite3_free(aStep);
      if( rc ) break;
      o.zNote = sqlite3_mprintf("more than %d memory events in the trace: the peak and counts are exact, "
                                "the holders, per-step counts and timeline are not computed", MEM_MAX_REC);
      if( o.zNote==0 ){ rc = SQLITE_NOMEM; break; }
    }
    sqlite3_bind_int64(pIns, 1, traceId);
    sqlite3_bind_text(pIns, 2, a->zName, -1, SQLITE_STATIC);
    if( zD ) sqlite3_bind_text(pIns, 3, zD, -1, SQLITE_STATIC); else sqlite3_bind_null(pIns, 3);
    sqlite3_bind_text(pIns, 4, "ok", -1, SQLITE_STATIC);
    sqlite3_bind_int64(pIns, 5, o.peak);
    sqlite3_bind_double(pIns, 6, profsumPsToMicros(o.peakTs));
    if( o.hasPeakStep ) sqlite3_bind_int64(pIns, 7, o.peakStep); else sqlite3_bind_null(pIns, 7);
    if( o.lifePeak>=0 ) sqlite3_bind_int64(pIns, 8, o.lifePeak); else sqlite3_bind_null(pIns, 8);
    if( memSize>0 ) sqlite3_bind_int64(pIns, 9, memSize);
    else if( capSize>0 ) sqlite3_bind_int64(pIns, 9, capSize);
    else sqlite3_bind_null(pIns, 9);
    if( capSize>0 ){
      /* say where the size comes from */
      char *z = sqlite3_mprintf("%s%sdevice_memory_bytes is the capacity the allocator's peak event states "
                                "(bytes_allocated + bytes_reserved + bytes_available): the device plane has no "
                                "memory_size", o.zNote ? o.zNote : "", o.zNote ? "; " : "");
      if( z==0 ){ rc = SQLITE_NOMEM; sqlite3_free(o.zHolders); sqlite3_free(o.zPerStep); sqlite3_free(o.zNote); break; }
      sqlite3_free(o.zNote);
      o.zNote = z;
    }
    if( a->torch ){
      char *z = memTorchNote(o.zNote, a->iGpu>=0, a->resPeak, a->nOom, a->oomBytes,
                             profsumPsToMicros(a->oomTs), a->oomNoTs);
      if( z==0 ){ rc = SQLITE_NOMEM; sqlite3_free(o.zHolders); sqlite3_free(o.zPerStep); sqlite3_free(o.zNote); break; }
      sqlite3_free(o.zNote);
      o.zNote = z;
    }
    sqlite3_bind_int64(pIns, 10, o.nAlloc);
    sqlite3_bind_int64(pIns, 11, o.nDealloc);
    sqlite3_bind_int64(pIns, 12, o.allocBytes);
    if( o.nLive>=0 ) sqlite3_bind_int64(pIns, 13, o.nLive); else sqlite3_bind_null(pIns, 13);
    if( o.liveBytes>=0 ) sqlite3_bind_int64(pIns, 14, o.liveBytes); else sqlite3_bind_null(pIns, 14);
    if( o.zHolders ) sqlite3_bind_text(pIns, 15, o.zHolders, -1, SQLITE_STATIC); else sqlite3_bind_null(pIns, 15);
    if( o.zPerStep ) sqlite3_bind_text(pIns, 16, o.zPerStep, -1, SQLITE_STATIC); else sqlite3_bind_null(pIns, 16);
    if( o.zNote ) sqlite3_bind_text(pIns, 17, o.zNote, -1, SQLITE_STATIC); else sqlite3_bind_null(pIns, 17);
    rc = memStep(db, pIns, zFunc, pzErr);
    sqlite3_free(o.zHolders); sqlite3_free(o.zPerStep); sqlite3_free(o.zNote);
    nRows++;
  }
  if( rc==SQLITE_OK && nRows==0 ){
    sqlite3_bind_int64(pIns, 1, traceId);
    sqlite3_bind_null(pIns, 2);
    sqlite3_bind_null(pIns, 3);
    /* PyTorch's events, none usable: say what there was */
    int torch = (p->nTorch || p->nOomAll) && !p->isXPlane;
    char *zN = !torch ? 0 : p->nOomAll==0
        ? sqlite3_mprintf("every PyTorch [memory] event of the trace was left out (see profsum_diagnostic)")
        : sqlite3_mprintf("%s; %lld allocations failed for lack of memory ([OutOfMemory], in profsum_diagnostic)",
                          p->nTorch ? "every PyTorch [memory] event of the trace was left out"
                                    : "the trace holds no PyTorch [memory] event", (long long)p->nOomAll);
    if( torch && zN==0 ) rc = SQLITE_NOMEM;
    sqlite3_bind_text(pIns, 4, p->isXPlane || torch ? "no_allocation_events" : "not_in_trace_json",
                      -1, SQLITE_STATIC);
    for(i=5; i<=16; i++) sqlite3_bind_null(pIns, i);
    sqlite3_bind_text(pIns, 17, torch ? zN
        : p->isXPlane
        ? "the XPlane holds no usable MemoryAllocation or MemoryDeallocation events: the profiler "
          "recorded no memory activity (see profsum_diagnostic for events left out)"
        : "the trace JSON holds no memory events: JAX's profiler keeps them in the capture's "
          ".xplane.pb (import it for memory figures); PyTorch's writes them when run with "
          "profile_memory=True", -1, SQLITE_STATIC);
    if( rc==SQLITE_OK ) rc = memStep(db, pIns, zFunc, pzErr);
    sqlite3_free(zN);
  }
  sqlite3_finalize(pIns);
  sqlite3_finalize(pTl);
  if( rc==SQLITE_OK ) rc = memKernWrite(p->pKern, db, zSchema, traceId, zFunc, pzErr);
  if( rc==SQLITE_OK ){
    rc = insDiagWrite(&p->diag, db, zSchema, traceId);
    if( rc && rc!=SQLITE_NOMEM && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  }
  if( rc && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errstr(rc));
  return rc;
}

/* See insights_int.h. */
int insMemReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  return memReportMd(db, zSchema, traceId, pOut);
}

/* See insights_int.h. */
int insMemReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  return memReportHtml(db, zSchema, traceId, pOut);
}
