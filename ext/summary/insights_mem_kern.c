/*
** insights_mem_kern.c — GPU kernels of the InsMem collector: each device
** event with a kernel_details stat (XPlane) or arg (trace JSON) is parsed
** and tallied into profsum_agg_kernel, one row per (kernel name, block,
** grid, registers per thread, static and dynamic shared bytes, hlo_op)
** over all devices.  docs/memory.md ("Kernels") gives every rule.
**
** kernel_details is a list of key:value tokens separated by spaces or
** newlines: regs, static_shared, dynamic_shared, shm (static shared, older
** profilers), group_mem (AMD LDS: static shared), private_mem (ignored),
** block:x,y,z, grid:x,y,z, occ_pct.  Profilers write nonsense for some
** (uninitialised fields: registers in the billions, grid dimensions past
** 2^31, occ_pct 0 on AMD): a value out of its range is NULL, with a
** kernel_details_out_of_range diagnostic; a value that is not a number is
** NULL with kernel_details_unreadable.
*/
#include "insights_mem_int.h"
#include "summary_engine.h"
#include "utf8cut.h"
#include "hash.h"
#include "cnum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KERN_MAX_KEYS   200000             /* distinct rows per trace */
#define KERN_MAX_NAME   65536              /* bytes of a kernel name kept */
#define KERN_MAX_REGS   65536
#define KERN_MAX_DIM    (((int64_t)1)<<31)

/* The parsed kernel_details (-1: NULL). */
typedef struct KernDet {
  int64_t regs, stat, dyn;
  int64_t block[3], grid[3];   /* block[0] -1: NULL */
  double occ;                  /* -1: NULL */
} KernDet;

/* One row of the tally. */
typedef struct KernEnt {
  char *zKey; int64_t nKey;    /* the key's bytes (hash and compare) */
  char *zName; int64_t nName;
  char *zHlo; int64_t nHlo;    /* 0: absent */
  char *zModule; int64_t nModule;   /* the smallest seen, 0: none */
  KernDet d;
  double occMax;               /* -1: none */
  int64_t n;
  profsum_ps total;
  int64_t minPs, maxPs;
  int64_t *aDev; int nDev, nDevAlloc;   /* distinct device keys */
  int64_t nPre;                /* bytes of the key before its row's own key:
                               ** a JSON kernel's "<pid>|" (0: none) */
  int64_t pid;                 /* that pid */
} KernEnt;

/* A memo of the texts of a kernel execution already tallied: the device
** key when the row's key holds it (bPid), the name, kernel_details and
** hlo_op exactly as memKernAdd received them (after its cuts), and what
** they gave: the row, the occupancy and which diagnostic kinds the parse
** met.  A trace repeats the same few thousand kernels every step, so most
** executions skip the parse, the key and its lookup. */
typedef struct KernMemo {
  uint64_t h;
  int64_t iEnt;                /* index of the row in MemKern.a */
  int64_t iDevice; int bPid;   /* iDevice compared only with bPid */
  char *z;                     /* name, details, hlo_op, one after the other */
  int64_t nName, nDet, nHlo;   /* nHlo -1: no hlo_op */
  double occ;                  /* KernDet.occ of the parse */
  unsigned char hit[2];        /* KernWhy.hit of the parse */
} KernMemo;

#define KERN_MEMO_MAX    65536            /* memo entries per trace */
#define KERN_MEMO_BYTES  (16*1024*1024)   /* bytes of texts the memo keeps */

/* Memo entries by the references an XPlane kernel's texts came from
** (MemKernRef), direct-mapped: a slot of another plane (gen) is stale. */
#define KERN_REF_SLOTS 1024
typedef struct KernRefSlot {
  uint32_t gen;                /* MemKern.refGen when it was set */
  int32_t iMemo;               /* index in MemKern.aMemo */
  int64_t iMeta, iDevice;
  uint64_t det, hlo;
} KernRefSlot;

/* A JSON process_name seen: pid, whether it names a device, and its
** arrival (a later one for the pid replaces an earlier one). */
typedef struct KernProc { int64_t pid; int isDevice; int64_t ord; } KernProc;

struct MemKern {
  KernEnt *a; int64_t n, nAlloc;
  int64_t *aSlot; int64_t nSlot;        /* index + 1, 0 empty */
  int capped;
  KernProc *aProc; int64_t nProc, nProcAlloc;   /* JSON process names */
  char *zBuf; int64_t nBuf;             /* the key being looked up */
  KernMemo *aMemo; int64_t nMemo, nMemoAlloc;   /* the memo (kMemoFind) */
  int64_t *aMemoSlot; int64_t nMemoSlot;        /* index + 1, 0 empty */
  int64_t nMemoBytes;                           /* of its texts */
  KernRefSlot aRef[KERN_REF_SLOTS];             /* memo entries by reference */
  uint32_t refGen;                              /* the current plane's */
};

/* See insights_mem_int.h. */
int memKernNew(MemKern **pp){
  *pp = sqlite3_malloc64(sizeof(MemKern));
  if( *pp==0 ) return SQLITE_NOMEM;
  memset(*pp, 0, sizeof(MemKern));
  (*pp)->refGen = 1;                    /* no slot is of it yet */
  return SQLITE_OK;
}

/* See insights_mem_int.h. */
void memKernPlane(MemKern *p){
  if( ++p->refGen==0 ){                 /* wrapped: every slot is stale */
    memset(p->aRef, 0, sizeof(p->aRef));
    p->refGen = 1;
  }
}

/* The slot of p->aRef for reference key r on device iDevice. */
static KernRefSlot *kRefSlot(MemKern *p, const MemKernRef *r, int64_t iDevice){
  uint64_t h = (uint64_t)r->iMeta*0x9e3779b97f4a7c15ULL;
  h = (h ^ r->det)*0xff51afd7ed558ccdULL;
  h = (h ^ r->hlo)*0xc4ceb9fe1a85ec53ULL;
  h = (h ^ (uint64_t)iDevice)*0x9e3779b97f4a7c15ULL;
  return &p->aRef[(h>>32) & (KERN_REF_SLOTS-1)];
}

/* See insights_mem_int.h. */
void memKernFree(MemKern *p){
  int64_t i;
  if( p==0 ) return;
  sqlite3_free(p->aProc);
  sqlite3_free(p->zBuf);
  for(i=0; i<p->n; i++){
    sqlite3_free(p->a[i].zKey);
    sqlite3_free(p->a[i].zName);
    sqlite3_free(p->a[i].zHlo);
    sqlite3_free(p->a[i].zModule);
    sqlite3_free(p->a[i].aDev);
  }
  sqlite3_free(p->a);
  sqlite3_free(p->aSlot);
  for(i=0; i<p->nMemo; i++) sqlite3_free(p->aMemo[i].z);
  sqlite3_free(p->aMemo);
  sqlite3_free(p->aMemoSlot);
  sqlite3_free(p);
}

/* Unsigned decimal z[0..n): 1 with *pv (saturating at UINT64_MAX, *pOver
** set), 0 when it is not digits only. */
static int kParseU(const char *z, int64_t n, uint64_t *pv, int *pOver){
  uint64_t v = 0;
  int64_t i;
  *pOver = 0;
  if( n<=0 ) return 0;
  for(i=0; i<n; i++){
    unsigned d;
    if( z[i]<'0' || z[i]>'9' ) return 0;
    d = (unsigned)(z[i]-'0');
    if( v>(UINT64_MAX-d)/10 ){ *pOver = 1; v = UINT64_MAX; }
    else v = v*10 + d;
  }
  *pv = v;
  return 1;
}

/* What a parse found wrong, for the diagnostics: per kind (0 out of
** range, 1 unreadable) whether its text is wanted (an example the
** diagnostics keep) and, when not, only whether the kind was met. */
typedef struct KernWhy {
  sqlite3_str *pRange, *pBad;
  int want[2];
  int hit[2];
} KernWhy;

/* Note token z[0..n) as out of range (bad 0) or unreadable (bad 1): its
** first 200 bytes at most, whole UTF-8 characters (profsumUtf8Cut), when
** that kind's text is wanted; else only that the kind was met. */
static void kWhy(KernWhy *w, int bad, const char *z, int64_t n, const char *zRule){
  sqlite3_str **pp = bad ? &w->pBad : &w->pRange;
  w->hit[bad] = 1;
  if( !w->want[bad] ) return;
  if( *pp==0 ) *pp = sqlite3_str_new(0);
  else sqlite3_str_appendall(*pp, ", ");
  sqlite3_str_appendf(*pp, "%.*s%s", (int)profsumUtf8Cut(z, n, 200), z, zRule);
}

/* A dimension triple "x[,y[,z]]" (missing ones are 1) into a[3]; -1 in
** a[0] when a part is not a number or above 2^31. */
static void kDims(const char *z, int64_t n, int64_t *a, KernWhy *w, const char *zTok, int64_t nTok){
  int k = 0, over = 0, bad = 0;
  int64_t i = 0;
  a[0] = a[1] = a[2] = 1;
  while( i<=n && k<3 ){
    int64_t j = i;
    uint64_t v; int o;
    while( j<n && z[j]!=',' ) j++;
    if( !kParseU(z+i, j-i, &v, &o) ){ bad = 1; break; }
    if( o || v>(uint64_t)KERN_MAX_DIM ) over = 1;
    else a[k] = (int64_t)v;
    k++;
    i = j+1;
  }
  if( i<=n && k==3 ) bad = 1;            /* a fourth part */
  if( bad ){ a[0] = -1; kWhy(w, 1, zTok, nTok, " (not x,y,z)"); }
  else if( over ){ a[0] = -1; kWhy(w, 0, zTok, nTok, " (a dimension above 2^31)"); }
}

/* Parse kernel_details z[0..n) into *d. */
static void kParse(const char *z, int64_t n, KernDet *d, KernWhy *w){
  int64_t i = 0;
  d->regs = d->stat = d->dyn = -1;
  d->block[0] = d->grid[0] = -1;
  d->block[1] = d->block[2] = d->grid[1] = d->grid[2] = 0;
  d->occ = -1.0;
  while( i<n ){
    int64_t t0, t1, c;
    while( i<n && (z[i]==' ' || z[i]=='\n' || z[i]=='\t' || z[i]=='\r') ) i++;
    t0 = i;
    while( i<n && !(z[i]==' ' || z[i]=='\n' || z[i]=='\t' || z[i]=='\r') ) i++;
    t1 = i;
    if( t1==t0 ) continue;
    for(c=t0; c<t1 && z[c]!=':'; c++){}
    if( c>=t1 ) continue;                 /* not key:value: skipped */
    {
      const char *zk = z+t0, *zv = z+c+1;
      int64_t nk = c-t0, nv = t1-c-1;
      uint64_t v; int over;
#define KEYIS(lit) (nk==(int64_t)sizeof(lit)-1 && memcmp(zk, lit, sizeof(lit)-1)==0)
      if( KEYIS("regs") ){
        d->regs = -1;
        if( !kParseU(zv, nv, &v, &over) ) kWhy(w, 1, z+t0, t1-t0, "");
        else if( over || v>KERN_MAX_REGS ) kWhy(w, 0, z+t0, t1-t0, " (above 65536)");
        else d->regs = (int64_t)v;
      }else if( KEYIS("static_shared") || KEYIS("shm") || KEYIS("group_mem") || KEYIS("dynamic_shared") ){
        int64_t *pDst = KEYIS("dynamic_shared") ? &d->dyn : &d->stat;
        *pDst = -1;
        if( !kParseU(zv, nv, &v, &over) ) kWhy(w, 1, z+t0, t1-t0, "");
        else if( over || v>(uint64_t)INT64_MAX ) kWhy(w, 0, z+t0, t1-t0, " (above 2^63)");
        else *pDst = (int64_t)v;
      }else if( KEYIS("block") ){
        kDims(zv, nv, d->block, w, z+t0, t1-t0);
      }else if( KEYIS("grid") ){
        kDims(zv, nv, d->grid, w, z+t0, t1-t0);
      }else if( KEYIS("occ_pct") ){
        char buf[64];
        char *zEnd = 0;
        double r = 0;
        d->occ = -1.0;
        if( nv>0 && nv<(int64_t)sizeof(buf) ){
          memcpy(buf, zv, (size_t)nv);
          buf[nv] = 0;
          r = strtod(buf, &zEnd);
        }
        if( nv<=0 || nv>=(int64_t)sizeof(buf) || zEnd!=buf+nv || !isfinite(r) ) kWhy(w, 1, z+t0, t1-t0, "");
        else if( r<=0.0 || r>100.0 ) kWhy(w, 0, z+t0, t1-t0, r==0.0 ? " (0: not measured)" : " (outside 0-100)");
        else d->occ = r;
      }
      /* private_mem and unknown keys: ignored */
#undef KEYIS
    }
  }
  /* a NULL triple is one key whatever made it NULL (absent, out of range,
  ** unreadable), and whatever parts were read before that */
  if( d->block[0]<0 ) d->block[1] = d->block[2] = 0;
  if( d->grid[0]<0 ) d->grid[1] = d->grid[2] = 0;
}

/* The key of (name, hlo, d), after an optional "<pid>|" prefix, into the
** tally's buffer: the numbers, the hlo_op's length, the hlo_op, the name
** (unambiguous).  *pnPre gets the prefix's length, *pnKey the whole
** length.  SQLITE_OK or SQLITE_NOMEM. */
static int kKey(MemKern *p, int bPid, int64_t iDevice, const char *zName, int64_t nName,
                const char *zHlo, int64_t nHlo, const KernDet *d, int64_t *pnPre, int64_t *pnKey){
  int64_t nNeed = 22 + 11*22 + nHlo + nName;    /* (profsumFmtI64 adds a NUL) */
  int64_t av[10];
  char *z;
  int64_t n = 0;
  int k;
  if( nNeed>p->nBuf ){
    int64_t nNew = nNeed + 256;
    char *zNew = sqlite3_realloc64(p->zBuf, (sqlite3_uint64)nNew);
    if( zNew==0 ) return SQLITE_NOMEM;
    p->zBuf = zNew; p->nBuf = nNew;
  }
  z = p->zBuf;
  if( bPid ){ n += profsumFmtI64(iDevice, z+n); z[n++] = '|'; }
  *pnPre = n;
  av[0] = d->regs; av[1] = d->stat; av[2] = d->dyn;
  av[3] = d->block[0]; av[4] = d->block[1]; av[5] = d->block[2];
  av[6] = d->grid[0]; av[7] = d->grid[1]; av[8] = d->grid[2];
  av[9] = zHlo!=0;
  for(k=0; k<10; k++){ n += profsumFmtI64(av[k], z+n); z[n++] = ','; }
  n += profsumFmtI64(nHlo, z+n);
  z[n++] = ':';
  if( zHlo && nHlo ){ memcpy(z+n, zHlo, (size_t)nHlo); n += nHlo; }
  if( nName ){ memcpy(z+n, zName, (size_t)nName); n += nName; }
  *pnKey = n;
  return SQLITE_OK;
}

/* Does hlo_module z[0..n) come before the one kept so far, zCur[0..nCur)
** (0: none yet)?  The smallest in byte order is kept. */
static int kModuleFirst(const char *z, int64_t n, const char *zCur, int64_t nCur){
  int64_t nMin = n<nCur ? n : nCur;
  int c;
  if( zCur==0 ) return 1;
  c = memcmp(z, zCur, (size_t)nMin);
  return c<0 || (c==0 && n<nCur);
}

/* A copy of z[0..n), NUL-terminated (0 when z is 0; *pRc NOMEM on failure). */
static char *kDup(const char *z, int64_t n, int *pRc){
  char *c;
  if( z==0 ) return 0;
  c = sqlite3_malloc64((sqlite3_uint64)n+1);
  if( c==0 ){ *pRc = SQLITE_NOMEM; return 0; }
  if( n ) memcpy(c, z, (size_t)n);
  c[n] = 0;
  return c;
}

/* The memo's hash of an execution's texts (kMemoFind, kMemoAdd). */
static uint64_t kMemoHash(int bPid, int64_t iDevice, const char *zName, int64_t nName,
                          const char *zDet, int64_t nDet, const char *zHlo, int64_t nHlo){
  uint64_t h = profsumBytesHash(zDet, nDet);
  h = h*0x9e3779b97f4a7c15ULL + profsumBytesHash(zName, nName);
  h = h*0x9e3779b97f4a7c15ULL + (zHlo ? profsumBytesHash(zHlo, nHlo) : 0x5bd1e995ULL);
  if( bPid ) h = h*0x9e3779b97f4a7c15ULL + (uint64_t)iDevice;
  return h ^ (h>>29);
}

/* The memo entry of these texts (hash h), or 0. */
static KernMemo *kMemoFind(MemKern *p, uint64_t h, int bPid, int64_t iDevice,
                           const char *zName, int64_t nName, const char *zDet, int64_t nDet,
                           const char *zHlo, int64_t nHlo){
  int64_t i, nH = zHlo ? nHlo : -1;
  if( p->nMemoSlot==0 ) return 0;
  for(i=(int64_t)(h & (uint64_t)(p->nMemoSlot-1)); p->aMemoSlot[i]; i=(i+1)&(p->nMemoSlot-1)){
    KernMemo *m = &p->aMemo[p->aMemoSlot[i]-1];
    if( m->h==h && m->bPid==bPid && (!bPid || m->iDevice==iDevice)
     && m->nName==nName && m->nDet==nDet && m->nHlo==nH
     && memcmp(m->z, zDet, (size_t)nDet)==0
     && memcmp(m->z+nDet, zName, (size_t)nName)==0
     && (nH<=0 || memcmp(m->z+nDet+nName, zHlo, (size_t)nH)==0) ){
      return m;
    }
  }
  return 0;
}

/* Keep these texts (hash h) as giving row iEnt, occupancy occ and the
** parse's hit flags, while the memo has room (else nothing).  SQLITE_OK
** or SQLITE_NOMEM. */
static int kMemoAdd(MemKern *p, uint64_t h, int bPid, int64_t iDevice,
                    const char *zName, int64_t nName, const char *zDet, int64_t nDet,
                    const char *zHlo, int64_t nHlo, int64_t iEnt, double occ, const int *aHit){
  KernMemo *m;
  int64_t i, nH = zHlo ? nHlo : 0, nText = nDet + nName + nH;
  if( p->nMemo>=KERN_MEMO_MAX || p->nMemoBytes + nText > KERN_MEMO_BYTES ) return SQLITE_OK;
  if( (p->nMemo+1)*2 > p->nMemoSlot ){
    int64_t nNew = p->nMemoSlot ? p->nMemoSlot*2 : 256;
    int64_t *a = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    memset(a, 0, sizeof(int64_t)*(size_t)nNew);
    for(i=0; i<p->nMemo; i++){
      int64_t j = (int64_t)(p->aMemo[i].h & (uint64_t)(nNew-1));
      while( a[j] ) j = (j+1) & (nNew-1);
      a[j] = i+1;
    }
    sqlite3_free(p->aMemoSlot);
    p->aMemoSlot = a; p->nMemoSlot = nNew;
  }
  if( p->nMemo>=p->nMemoAlloc ){
    int64_t nNew = p->nMemoAlloc ? p->nMemoAlloc*2 : 64;
    KernMemo *a = sqlite3_realloc64(p->aMemo, sizeof(KernMemo)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aMemo = a; p->nMemoAlloc = nNew;
  }
  m = &p->aMemo[p->nMemo];
  memset(m, 0, sizeof(*m));
  m->z = sqlite3_malloc64((sqlite3_uint64)nText + 1);
  if( m->z==0 ) return SQLITE_NOMEM;
  if( nDet ) memcpy(m->z, zDet, (size_t)nDet);
  if( nName ) memcpy(m->z+nDet, zName, (size_t)nName);
  if( nH ) memcpy(m->z+nDet+nName, zHlo, (size_t)nH);
  m->h = h;
  m->iEnt = iEnt;
  m->iDevice = iDevice; m->bPid = bPid;
  m->nName = nName; m->nDet = nDet; m->nHlo = zHlo ? nHlo : -1;
  m->occ = occ;
  m->hit[0] = (unsigned char)aHit[0]; m->hit[1] = (unsigned char)aHit[1];
  for(i=(int64_t)(h & (uint64_t)(p->nMemoSlot-1)); p->aMemoSlot[i]; i=(i+1)&(p->nMemoSlot-1)){}
  p->aMemoSlot[i] = p->nMemo+1;
  p->nMemo++;
  p->nMemoBytes += nText;
  return SQLITE_OK;
}

/* Remember in slot s that reference key r on device iDevice names memo
** entry iMemo (in the current plane). */
static void kRefKeep(MemKern *p, KernRefSlot *s, const MemKernRef *r, int64_t iDevice, int64_t iMemo){
  s->gen = p->refGen;
  s->iMemo = (int32_t)iMemo;            /* < KERN_MEMO_MAX */
  s->iMeta = r->iMeta;
  s->iDevice = iDevice;
  s->det = r->det;
  s->hlo = r->hlo;
}

/* The memo entry that reference key r (0: none) on device iDevice led to
** in this plane: the same references, the same texts, so the entry
** kMemoFind would find (entries are unique per texts).  0 when none is
** known; *ppSlot is then the slot to remember it in (0 without r). */
static KernMemo *kRefFind(MemKern *p, const MemKernRef *r, int64_t iDevice, KernRefSlot **ppSlot){
  KernRefSlot *s;
  *ppSlot = 0;
  if( r==0 ) return 0;
  s = kRefSlot(p, r, iDevice);
  if( s->gen==p->refGen && s->iMeta==r->iMeta && s->iDevice==iDevice
   && s->det==r->det && s->hlo==r->hlo ){
    return &p->aMemo[s->iMemo];
  }
  *ppSlot = s;
  return 0;
}

/* See insights_mem_int.h. */
int memKernAdd(MemKern *p, InsDiag *pDiag,
               const char *zName, int64_t nName,
               const char *zDetails, int64_t nDetails,
               const char *zHlo, int64_t nHlo,
               const char *zModule, int64_t nModule,
               int64_t iDevice, int bPid, int64_t durPs, int64_t idx, int64_t off,
               const MemKernRef *pRef){
  static const char *const azKind[2] = {"kernel_details_out_of_range", "kernel_details_unreadable"};
  KernDet d;
  KernWhy w;
  KernEnt *e = 0;
  KernMemo *m;
  const char *zKey;
  int64_t nKey, nPre, i;
  uint64_t h, hMemo = 0;
  KernRefSlot *pSlot = 0;
  int rc = SQLITE_OK, k;
  nName = profsumUtf8Cut(zName, nName, KERN_MAX_NAME);   /* whole characters */
  if( nHlo>KERN_MAX_NAME ) zHlo = 0, nHlo = 0;
  if( zDetails==0 ) zDetails = "", nDetails = 0;
  /* texts met before: their row and what their parse gave, unless a
  ** diagnostic of theirs wants its text (then as the first time) */
  m = kRefFind(p, pRef, iDevice, &pSlot);
  if( m==0 ){
    hMemo = kMemoHash(bPid, iDevice, zName, nName, zDetails, nDetails, zHlo, nHlo);
    m = kMemoFind(p, hMemo, bPid, iDevice, zName, nName, zDetails, nDetails, zHlo, nHlo);
    if( m && pSlot ) kRefKeep(p, pSlot, pRef, iDevice, m - p->aMemo);
  }
  if( m ){
    int bText = 0;
    for(k=0; k<2; k++) if( m->hit[k] && insDiagWanted(pDiag, azKind[k]) ) bText = 1;
    if( !bText ){
      for(k=0; k<2; k++) if( m->hit[k] ) insDiagCount(pDiag, azKind[k]);
      e = &p->a[m->iEnt];
      d.occ = m->occ;
      goto tally;
    }
  }
  /* the text of a diagnostic is made only while its kind keeps examples */
  memset(&w, 0, sizeof(w));
  for(k=0; k<2; k++) w.want[k] = insDiagWanted(pDiag, azKind[k]);
  kParse(zDetails, nDetails, &d, &w);
  /* diagnostics */
  for(k=0; k<2 && rc==SQLITE_OK; k++){
    sqlite3_str *pw = k ? w.pBad : w.pRange;
    char *zWhy;
    if( !w.hit[k] ) continue;
    if( !w.want[k] ){ insDiagCount(pDiag, azKind[k]); continue; }
    zWhy = sqlite3_str_finish(pw);
    if( k ) w.pBad = 0; else w.pRange = 0;
    if( zWhy==0 ){ rc = SQLITE_NOMEM; break; }
    rc = insDiagAdd(pDiag, idx, off, azKind[k], sqlite3_mprintf(
        "kernel %.*s: kernel_details %s: %s: NULL in profsum_kernel_stats",
        (int)profsumUtf8Cut(zName, nName, 200), zName, k ? "value not a number" : "value out of range", zWhy));
    sqlite3_free(zWhy);
  }
  if( w.pRange ) sqlite3_free(sqlite3_str_finish(w.pRange));
  if( w.pBad ) sqlite3_free(sqlite3_str_finish(w.pBad));
  if( rc ) return rc;
  /* the row */
  if( kKey(p, bPid, iDevice, zName, nName, zHlo, nHlo, &d, &nPre, &nKey) ) return SQLITE_NOMEM;
  zKey = p->zBuf;
  if( (p->n+1)*2 > p->nSlot ){
    int64_t nNew = p->nSlot ? p->nSlot*2 : 256;
    int64_t *a = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    memset(a, 0, sizeof(int64_t)*(size_t)nNew);
    for(i=0; i<p->n; i++){
      int64_t j = (int64_t)(profsumBytesHash(p->a[i].zKey, p->a[i].nKey) & (uint64_t)(nNew-1));
      while( a[j] ) j = (j+1) & (nNew-1);
      a[j] = i+1;
    }
    sqlite3_free(p->aSlot);
    p->aSlot = a; p->nSlot = nNew;
  }
  h = profsumBytesHash(zKey, nKey);
  for(i=(int64_t)(h & (uint64_t)(p->nSlot-1)); p->aSlot[i]; i=(i+1)&(p->nSlot-1)){
    KernEnt *x = &p->a[p->aSlot[i]-1];
    if( x->nKey==nKey && memcmp(x->zKey, zKey, (size_t)nKey)==0 ){ e = x; break; }
  }
  if( e==0 ){
    if( p->n>=KERN_MAX_KEYS ){
      if( !p->capped ){
        p->capped = 1;
        return insDiagAdd(pDiag, idx, off, "kernel_stats_capped", sqlite3_mprintf(
            "more than %d distinct kernel rows: kernels of new rows are left out of profsum_kernel_stats",
            KERN_MAX_KEYS));
      }
      return insDiagCount(pDiag, "kernel_stats_capped");
    }
    if( p->n>=p->nAlloc ){
      int64_t nNew = p->nAlloc ? p->nAlloc*2 : 64;
      KernEnt *a = sqlite3_realloc64(p->a, sizeof(KernEnt)*(sqlite3_uint64)nNew);
      if( a==0 ) return SQLITE_NOMEM;
      p->a = a; p->nAlloc = nNew;
    }
    e = &p->a[p->n];
    memset(e, 0, sizeof(*e));
    e->zKey = kDup(zKey, nKey, &rc);
    if( rc ) return rc;                 /* (not counted: a key is never 0) */
    e->nKey = nKey;
    e->nPre = nPre;
    e->pid = iDevice;
    e->zName = kDup(zName ? zName : "", nName, &rc);
    e->nName = nName;
    e->zHlo = kDup(zHlo, nHlo, &rc);
    e->nHlo = nHlo;
    e->d = d;
    e->occMax = -1.0;
    e->minPs = e->maxPs = durPs;
    p->aSlot[i] = p->n+1;
    p->n++;
    if( rc ) return rc;
  }
  if( m==0 ){
    int64_t nBefore = p->nMemo;
    rc = kMemoAdd(p, hMemo, bPid, iDevice, zName, nName, zDetails, nDetails, zHlo, nHlo,
                  e - p->a, d.occ, w.hit);
    if( rc ) return rc;
    if( pSlot && p->nMemo>nBefore ) kRefKeep(p, pSlot, pRef, iDevice, nBefore);
  }
tally:
  e->n++;
  e->total += durPs;
  if( durPs<e->minPs ) e->minPs = durPs;
  if( durPs>e->maxPs ) e->maxPs = durPs;
  if( d.occ>e->occMax ) e->occMax = d.occ;
  if( zModule && nModule<=KERN_MAX_NAME ){
    if( kModuleFirst(zModule, nModule, e->zModule, e->nModule) ){
      char *z = kDup(zModule, nModule, &rc);
      if( rc ) return rc;
      sqlite3_free(e->zModule);
      e->zModule = z; e->nModule = nModule;
    }
  }
  for(k=0; k<e->nDev; k++) if( e->aDev[k]==iDevice ) break;
  if( k==e->nDev ){
    if( e->nDev>=e->nDevAlloc ){
      int nNew = e->nDevAlloc ? e->nDevAlloc*2 : 4;
      int64_t *a = sqlite3_realloc64(e->aDev, sizeof(int64_t)*(sqlite3_uint64)nNew);
      if( a==0 ) return SQLITE_NOMEM;
      e->aDev = a; e->nDevAlloc = nNew;
    }
    e->aDev[e->nDev++] = iDevice;
  }
  return SQLITE_OK;
}

/* Bind dims a[3] as "x,y,z" (NULL when a[0] is -1). */
static void bindDims(sqlite3_stmt *p, int i, const int64_t *a){
  char z[80];
  if( a[0]<0 ){ sqlite3_bind_null(p, i); return; }
  sqlite3_snprintf(sizeof(z), z, "%lld,%lld,%lld", (long long)a[0], (long long)a[1], (long long)a[2]);
  sqlite3_bind_text(p, i, z, -1, SQLITE_TRANSIENT);
}

/* Bind v, NULL when negative. */
static void bindOpt(sqlite3_stmt *p, int i, int64_t v){
  if( v<0 ) sqlite3_bind_null(p, i); else sqlite3_bind_int64(p, i, v);
}

/* See insights_mem_int.h. */
int memKernProcess(MemKern *p, int64_t pid, int isDevice){
  if( p->nProc>=p->nProcAlloc ){
    int64_t nNew = p->nProcAlloc ? p->nProcAlloc*2 : 16;
    KernProc *a = sqlite3_realloc64(p->aProc, sizeof(KernProc)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aProc = a; p->nProcAlloc = nNew;
  }
  p->aProc[p->nProc].pid = pid;
  p->aProc[p->nProc].isDevice = isDevice;
  p->aProc[p->nProc].ord = p->nProc;
  p->nProc++;
  return SQLITE_OK;
}

/* qsort order of the process names: pid, then arrival. */
static int kProcCmp(const void *a, const void *b){
  const KernProc *x = (const KernProc*)a, *y = (const KernProc*)b;
  if( x->pid!=y->pid ) return x->pid<y->pid ? -1 : 1;
  return x->ord<y->ord ? -1 : x->ord>y->ord;
}

/* Does pid name a device: its last process_name (p->aProc sorted by
** kProcCmp) starts with "/device:"?  A pid without one is no device. */
static int kIsDevicePid(const MemKern *p, int64_t pid){
  int64_t lo = 0, hi = p->nProc;      /* first entry with a larger pid */
  while( lo<hi ){
    int64_t mid = lo + (hi-lo)/2;
    if( p->aProc[mid].pid<=pid ) lo = mid+1; else hi = mid;
  }
  return lo>0 && p->aProc[lo-1].pid==pid && p->aProc[lo-1].isDevice;
}

/* One row of profsum_agg_kernel: an entry, or for trace JSON the entries
** of one row key on every device pid merged. */
typedef struct KernRow {
  const KernEnt *e;            /* the first entry (name, hlo_op, details) */
  const char *zModule; int64_t nModule;
  double occMax;
  int64_t n, minPs, maxPs, nDev;
  profsum_ps total;
} KernRow;

/* Fold entry x into row r (another device of the same row key). */
static void kRowAdd(KernRow *r, const KernEnt *x){
  r->n += x->n;
  r->total += x->total;
  if( x->minPs<r->minPs ) r->minPs = x->minPs;
  if( x->maxPs>r->maxPs ) r->maxPs = x->maxPs;
  if( x->occMax>r->occMax ) r->occMax = x->occMax;
  if( x->zModule && kModuleFirst(x->zModule, x->nModule, r->zModule, r->nModule) ){
    r->zModule = x->zModule; r->nModule = x->nModule;
  }
  r->nDev += x->nDev;
}

/* The rows to write, in the order of their first entries: *paRow (n of
** them).  A JSON kernel (its key begins with its pid) counts only when its
** pid is a device process, and the entries of one row key on several such
** pids are one row.  SQLITE_OK or SQLITE_NOMEM. */
static int kRows(MemKern *p, KernRow **paRow, int64_t *pnRow){
  KernRow *aRow;
  int64_t *aSlot = 0, nSlot = 16, nRow = 0, i;
  *paRow = 0;
  *pnRow = 0;
  aRow = sqlite3_malloc64(sizeof(KernRow)*(sqlite3_uint64)(p->n ? p->n : 1));
  if( aRow==0 ) return SQLITE_NOMEM;
  if( p->nProc ) qsort(p->aProc, (size_t)p->nProc, sizeof(KernProc), kProcCmp);
  while( nSlot < 2*p->n ) nSlot *= 2;
  aSlot = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)nSlot);
  if( aSlot==0 ){ sqlite3_free(aRow); return SQLITE_NOMEM; }
  memset(aSlot, 0, sizeof(int64_t)*(size_t)nSlot);
  for(i=0; i<p->n; i++){
    const KernEnt *x = &p->a[i];
    const char *zBase = x->zKey + x->nPre;
    int64_t nBase = x->nKey - x->nPre, j;
    KernRow *r = 0;
    if( x->nPre && !kIsDevicePid(p, x->pid) ) continue;     /* a host event */
    for(j=(int64_t)(profsumBytesHash(zBase, nBase) & (uint64_t)(nSlot-1)); aSlot[j]; j=(j+1)&(nSlot-1)){
      const KernEnt *y = aRow[aSlot[j]-1].e;
      if( y->nKey - y->nPre==nBase && memcmp(y->zKey + y->nPre, zBase, (size_t)nBase)==0 ){
        r = &aRow[aSlot[j]-1];
        break;
      }
    }
    if( r ){
      kRowAdd(r, x);
      continue;
    }
    r = &aRow[nRow];
    memset(r, 0, sizeof(*r));
    r->e = x;
    r->minPs = x->minPs;
    r->maxPs = x->maxPs;
    r->occMax = -1.0;
    kRowAdd(r, x);
    aSlot[j] = ++nRow;
  }
  sqlite3_free(aSlot);
  *paRow = aRow;
  *pnRow = nRow;
  return SQLITE_OK;
}

/* See insights_mem_int.h. */
int memKernWrite(MemKern *p, sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                 const char *zFunc, char **pzErr){
  sqlite3_stmt *q = 0;
  KernRow *aRow = 0;
  char *z;
  int64_t i, nRow = 0;
  int rc;
  if( p->n==0 ) return SQLITE_OK;
  if( kRows(p, &aRow, &nRow) ) return SQLITE_NOMEM;
  z = sqlite3_mprintf("INSERT INTO \"%w\".profsum_agg_kernel(trace_id, kernel_name, hlo_op, hlo_module, "
      "block_dim, grid_dim, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, occupancy_pct, "
      "devices, occurrences, total_duration_us, min_duration_us, max_duration_us) "
      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)", zSchema);
  if( z==0 ){ sqlite3_free(aRow); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(db, z, -1, &q, 0);
  sqlite3_free(z);
  if( rc ){
    *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
    sqlite3_free(aRow);
    return rc;
  }
  for(i=0; rc==SQLITE_OK && i<nRow; i++){
    const KernRow *r = &aRow[i];
    const KernEnt *e = r->e;
    sqlite3_bind_int64(q, 1, traceId);
    sqlite3_bind_text(q, 2, e->zName, (int)e->nName, SQLITE_STATIC);
    if( e->zHlo ) sqlite3_bind_text(q, 3, e->zHlo, (int)e->nHlo, SQLITE_STATIC); else sqlite3_bind_null(q, 3);
    if( r->zModule ) sqlite3_bind_text(q, 4, r->zModule, (int)r->nModule, SQLITE_STATIC); else sqlite3_bind_null(q, 4);
    bindDims(q, 5, e->d.block);
    bindDims(q, 6, e->d.grid);
    bindOpt(q, 7, e->d.regs);
    bindOpt(q, 8, e->d.stat);
    bindOpt(q, 9, e->d.dyn);
    if( r->occMax>0 ) sqlite3_bind_double(q, 10, r->occMax); else sqlite3_bind_null(q, 10);
    sqlite3_bind_int64(q, 11, r->nDev);
    sqlite3_bind_int64(q, 12, r->n);
    sqlite3_bind_double(q, 13, profsumPsToMicros(r->total));
    sqlite3_bind_double(q, 14, profsumPsToMicros(r->minPs));
    sqlite3_bind_double(q, 15, profsumPsToMicros(r->maxPs));
    rc = sqlite3_step(q);
    sqlite3_reset(q);
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    else{
      rc = sqlite3_errcode(db);
      if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
      *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
    }
  }
  sqlite3_finalize(q);
  sqlite3_free(aRow);
  return rc;
}
