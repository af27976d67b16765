/*
** insights_mem_torch.c — PyTorch's memory events for the InsMem collector
** (insights_mem_int.h).  Run with profile_memory=True, PyTorch's profiler
** (Kineto) writes an instant event named "[memory]" for every allocation
** and free of its allocators, with the args 'Bytes' (the block's size,
** negative for a free), 'Addr', 'Total Allocated' (the bytes of the
** blocks handed out after the event), 'Total Reserved' (what its caching allocator
** holds from the device, cached blocks included), 'Device Type' (c10's
** DeviceType: 0 CPU, 1 CUDA, 6 HIP, ...) and 'Device Id' (-1 on the CPU).
** Each becomes one memory event of the allocator the device names
** ('cuda:0', 'hip:1', 'cpu'), with Total Allocated (the bytes of the
** blocks the allocator handed out) as its bytes in use, so
** that the peak, its holders (matched by Addr), the per-step counts and
** the timeline are made as for an XPlane's events.  An allocation that
** failed is an instant event named "[OutOfMemory]" with the same args
** ('Bytes' the size asked for): counted on its allocator, said in the
** row's note and in a diagnostic.  The trace's
** deviceProperties give each GPU's memory (totalGlobalMem), the
** memory_size of /device:GPU:<id>.  docs/memory.md says what the figures
** mean.
*/
#include "insights_mem_int.h"
#include "jsontree.h"
#include "summary_engine.h"

#include <string.h>

/* What the args of one [memory] event say (memJsonMembers). */
typedef struct TorchArgs {
  MemIn *m;
  int eType, eId, eBytes;     /* MV_* of 'Device Type', 'Device Id', 'Bytes' */
  int64_t type, id, bytes;
} TorchArgs;

/* The value of a numeric member: MV_ABSENT for null, else memNumText's. */
static int torchNum(const char *zVal, int64_t nVal, int bIsStr, int64_t *pv){
  if( !bIsStr && memTextEq(zVal, nVal, "null") ) return MV_ABSENT;
  return bIsStr ? MV_BAD : memNumText(zVal, nVal, pv);
}

/* A member of a [memory] event's args (memJsonMembers). */
static int torchArg(void *pCtx, const char *zKey, int64_t nKey, const char *zVal, int64_t nVal, int bIsStr){
  TorchArgs *t = (TorchArgs*)pCtx;
  MemIn *m = t->m;
  if( memTextEq(zKey, nKey, "Total Allocated") ){
    m->eInUse = torchNum(zVal, nVal, bIsStr, &m->inUse);
  }else if( memTextEq(zKey, nKey, "Total Reserved") ){
    m->eRes = torchNum(zVal, nVal, bIsStr, &m->res);
  }else if( memTextEq(zKey, nKey, "Bytes") ){
    t->eBytes = torchNum(zVal, nVal, bIsStr, &t->bytes);
  }else if( memTextEq(zKey, nKey, "Device Type") ){
    t->eType = torchNum(zVal, nVal, bIsStr, &t->type);
  }else if( memTextEq(zKey, nKey, "Device Id") ){
    t->eId = torchNum(zVal, nVal, bIsStr, &t->id);
  }else if( memTextEq(zKey, nKey, "Addr") ){
    /* PyTorch writes the pointer as a signed integer (a tagged pointer
    ** can be negative): its 64 bits, read as unsigned */
    m->eAddr = bIsStr ? MV_BAD : memAddrText(zVal, nVal, 1, &m->addr);
  }
  return 0;
}

/* c10's name of DeviceType v (as torch.device prints it), 0 for a type
** whose name changed between PyTorch versions or that is unknown. */
static const char *torchTypeName(int64_t v){
  switch( v ){
    case 0: return "cpu";
    case 1: return "cuda";
    case 6: return "hip";
    case 9: return "xla";
    case 12: return "xpu";
    case 13: return "mps";
    case 15: return "hpu";
    case 19: return "mtia";
    case 20: return "privateuseone";
  }
  return 0;
}

/* See insights_mem_int.h. */
int memTorchEvent(InsMem *p, const ProfsumEvent *ev, int bOom){
  MemIn m;
  TorchArgs t;
  char zName[48];
  memset(&m, 0, sizeof(m));
  memset(&t, 0, sizeof(t));
  m.torch = 1;
  m.oom = bOom;
  m.iGpu = -1;
  m.ts = ev->ts;
  m.idx = ev->idx;
  m.off = ev->iOffset;
  t.m = &m;
  memJsonMembers(ev->args.z, ev->args.n, torchArg, &t);
  if( !ev->hasTs ){
    if( bOom ) m.noTs = 1;                  /* said as such */
    else m.eInUse = MV_ABSENT;              /* no time: no place in the replay */
  }
  /* the block: allocated (Bytes >= 0) or freed (Bytes < 0); an event
  ** without Bytes is counted as an allocation of unknown size */
  m.isAlloc = 1;
  if( t.eBytes==MV_OK ){
    if( t.bytes<0 && !bOom ){
      m.isAlloc = 0;
      t.bytes = t.bytes==INT64_MIN ? INT64_MAX : -t.bytes;
    }
    m.eBytes = MV_OK; m.bytes = t.bytes;
  }else{
    m.eBytes = t.eBytes;
  }
  /* the allocator: the device's type and index */
  if( t.eType==MV_OK && t.type>=0 && t.type<=255 ){
    const char *zT = torchTypeName(t.type);
    char zT2[24];
    if( zT==0 ){
      sqlite3_snprintf(sizeof(zT2), zT2, "device_type_%d", (int)t.type);
      zT = zT2;
    }
    if( t.eId==MV_OK && t.id>=0 && t.id<=1000000 ){
      sqlite3_snprintf(sizeof(zName), zName, "%s:%d", zT, (int)t.id);
      if( t.type==1 || t.type==6 ) m.iGpu = (int)t.id;
    }else{
      sqlite3_snprintf(sizeof(zName), zName, "%s", zT);
    }
    m.zAllocator = zName;
    m.nAllocator = (int64_t)strlen(zName);
    m.idKind = 1;
  }
  return memTake(p, &m);
}

/* See insights_int.h: the GPUs of a deviceProperties member. */
int insMemJsonTop(InsMem *p, const char *zKey, const char *zVal, int nVal){
  JNode *v;
  int i, rc = SQLITE_OK;
  if( strcmp(zKey, "deviceProperties")!=0 ) return SQLITE_OK;
  if( (v = jParseQuiet(zVal, nVal, &rc))==0 ) return rc;
  for(i=0; v->type==JT_ARRAY && i<v->nChild && rc==SQLITE_OK; i++){
    const JNode *d = jAt(v, i), *id, *mem;
    char zDev[40];
    if( d->type!=JT_OBJECT ) continue;
    id = jGet(d, "id");
    mem = jGet(d, "totalGlobalMem");
    if( id==0 || id->type!=JT_INT || id->i<0 || id->i>1000000 ) continue;
    if( mem==0 || mem->type!=JT_INT || mem->i<=0 ) continue;
    sqlite3_snprintf(sizeof(zDev), zDev, "/device:GPU:%d", (int)id->i);
    if( memDevice(p, zDev, (int64_t)strlen(zDev), mem->i)<0 ) rc = SQLITE_NOMEM;
  }
  jFree(v);
  return rc;
}

/* See insights_mem_int.h. */
char *memTorchNote(const char *zNote, int bGpu, int64_t resPeak, int64_t nOom, int64_t oomBytes,
                   double oomUs, int bNoTs){
  sqlite3_str *s = sqlite3_str_new(0);
  if( zNote ) sqlite3_str_appendf(s, "%s; ", zNote);
  sqlite3_str_appendf(s, "PyTorch's %sallocator: peak_bytes counts the bytes of the blocks it handed out "
                         "('Total Allocated')", bGpu ? "caching " : "");
  if( resPeak>0 ){
    sqlite3_str_appendf(s, "; the memory it reserved from the device (cached blocks included, "
                           "'Total Reserved') peaked at %lld bytes", (long long)resPeak);
  }
  if( nOom>0 ){
    sqlite3_str_appendf(s, "; %lld allocations failed for lack of memory ([OutOfMemory]), the first ",
                        (long long)nOom);
    if( oomBytes>=0 ) sqlite3_str_appendf(s, "of %lld bytes ", (long long)oomBytes);
    if( bNoTs ) sqlite3_str_appendall(s, "at an unknown time");
    else sqlite3_str_appendf(s, "at %.3f us", oomUs);
  }
  if( sqlite3_str_errcode(s) ){
    sqlite3_free(sqlite3_str_finish(s));
    return 0;
  }
  return sqlite3_str_finish(s);
}
