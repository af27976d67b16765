/*
** summary_engine.c — stage A of the summary (see summary_engine.h).
**
** One streaming pass collects the complete events the reference accepts
** (summary-v1-spec.md §1.3: ph X, integer pid/tid >= 0, non-empty string
** name, numeric ts and dur, dur > 0) as 56-byte records with interned
** strings, and the M-event names.  Then, in the reference's processing
** order (tracks in order of first appearance, each track in (ts asc, end
** desc) order), it computes with exact integer picoseconds:
**   exclusive time (§2) · breakdown per track and global (§4.4) · steps
**   (§4.3) · per-op aggregates (§4.5) · collectives (§4.7) · gaps with
**   marker/payload resolution (§4.8) · regions with pruning (§4.9) ·
**   gap contexts (§4.10) · run_id / source counters (§4.2).
** Results are written to the profsum_agg_* tables; stage B
** (summary_doc.c) turns them into the document for given knobs.
**
** Memory: 56 bytes per accepted event plus the distinct strings (names,
** tf_op paths, shape signatures; long_name texts are hashed, not kept).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "funcs.h"
#include "jsontree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Hash map of (int64, int64) keys to two int64 values                 */
/* ------------------------------------------------------------------ */
typedef struct HEnt { int64_t k1, k2, v1, v2; int used; } HEnt;
typedef struct HMap { HEnt *a; int64_t nSlot, nUsed; } HMap;

static uint64_t hmix(uint64_t x){
  x ^= x>>33; x *= 0xff51afd7ed558ccdULL; x ^= x>>33;
  x *= 0xc4ceb9fe1a85ec53ULL; x ^= x>>33;
  return x;
}

/* Find (k1,k2); with create, insert it (values 0, *pNew=1).  NULL: absent
** (no create) or out of memory (create). */
static HEnt *hmGet(HMap *m, int64_t k1, int64_t k2, int create, int *pNew){
  int64_t i;
  if( pNew ) *pNew = 0;
  if( create && (m->nUsed+1)*2 > m->nSlot ){
    int64_t nNew = m->nSlot ? m->nSlot*2 : 256, j;
    HEnt *aNew = sqlite3_malloc64(sizeof(HEnt)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return 0;
    if( nNew>=2048 ) profsumPrefault(aNew, sizeof(HEnt)*(size_t)nNew);   /* 80 KiB and more */
    memset(aNew, 0, sizeof(HEnt)*(size_t)nNew);
    for(j=0; j<m->nSlot; j++){
      if( m->a[j].used ){
        int64_t k = (int64_t)(hmix((uint64_t)m->a[j].k1 ^ hmix((uint64_t)m->a[j].k2)) & (uint64_t)(nNew-1));
        while( aNew[k].used ) k = (k+1) & (nNew-1);
        aNew[k] = m->a[j];
      }
    }
    sqlite3_free(m->a);
    m->a = aNew;
    m->nSlot = nNew;
  }
  if( m->nSlot==0 ) return 0;
  i = (int64_t)(hmix((uint64_t)k1 ^ hmix((uint64_t)k2)) & (uint64_t)(m->nSlot-1));
  while( m->a[i].used ){
    if( m->a[i].k1==k1 && m->a[i].k2==k2 ) return &m->a[i];
    i = (i+1) & (m->nSlot-1);
  }
  if( !create ) return 0;
  m->a[i].used = 1;
  m->a[i].k1 = k1;
  m->a[i].k2 = k2;
  m->a[i].v1 = 0;
  m->a[i].v2 = 0;
  m->nUsed++;
  if( pNew ) *pNew = 1;
  return &m->a[i];
}

static void hmFree(HMap *m){ sqlite3_free(m->a); memset(m, 0, sizeof(*m)); }

/* Python's float() of a time given in exact picoseconds: the double
** nearest to ps/1e6 µs.  Below 2^53 both operands of the division are
** exact doubles, so IEEE division rounds once, correctly; beyond, in
** extended precision when that is unambiguous, else through the exact
** decimal text and strtod. */
static double psFloat(profsum_ps v){
  double r;
  if( v > -((profsum_ps)1<<53) && v < ((profsum_ps)1<<53) ) return (double)(int64_t)v / 1e6;
  /* epoch-µs traces: two roundings in extended precision, checked */
  if( profsumLdToDouble((long double)(v<0 ? -v : v) / 1e6L, &r) ) return v<0 ? -r : r;
  return profsumPsToMicros(v);
}

/* ------------------------------------------------------------------ */
/* String pool: interned strings with dense ids                        */
/* ------------------------------------------------------------------ */
/* The texts live in blocks that are never moved or freed before spFree:
** a pointer SP_STR(p, id) stays valid for the engine's life, across any
** later spIntern (which may add a block, and grows the id arrays and the
** hash slots, but never moves a text).  Callers keep such pointers while
** interning more (partsOf's parts point into the name and tf_op texts),
** so no text may ever move. */
#define SP_BLOCK_MIN ((int64_t)64<<10)    /* first text block */
#define SP_BLOCK_MAX ((int64_t)4<<20)     /* blocks grow by doubling up to this */
typedef struct SPool {
  char **azStr;         /* text of string id i (NUL-terminated, in a block) */
  int32_t *aLen;        /* length of string id i */
  int32_t n, nAlloc;
  int32_t *aSlot;       /* open addressing: id+1, 0 = empty */
  int64_t nSlot;
  char **apBlk;         /* the text blocks */
  int64_t nBlk, nAllocBlk;
  char *zCur;           /* the block being filled (the last ordinary one) */
  int64_t nCurUsed, nCurCap;
  int64_t nNextBlk;     /* size of the next ordinary block */
} SPool;

/* 64-bit hash of z[0..n): eight bytes per step, each folded in by a full
** 64x64->128-bit multiply (the signature cache keys long_name texts by
** this hash and their length alone, so it must mix well; byte-at-a-time
** FNV cost 7 % of an import). */
static uint64_t mulFold(uint64_t a, uint64_t b){
  unsigned __int128 r = (unsigned __int128)a * b;
  return (uint64_t)r ^ (uint64_t)(r>>64);
}
static uint64_t strHash(const char *z, int64_t n){
  uint64_t h = 0x243f6a8885a308d3ULL ^ (uint64_t)n, w;
  int64_t i = 0;
  for(; i+8<=n; i+=8){
    memcpy(&w, z+i, 8);
    h = mulFold(h ^ w, 0x9e3779b97f4a7c15ULL);
  }
  if( i<n ){
    w = 0;
    memcpy(&w, z+i, (size_t)(n-i));
    h = mulFold(h ^ w, 0xd6e8feb86659fd93ULL);
  }
  return hmix(h);
}

#define SP_STR(p,id) ((const char*)(p)->azStr[id])
#define SP_LEN(p,id) ((p)->aLen[id])

/* Room for nByte bytes of text that never moves: in the current block, or
** a new one (a text above a quarter of the next block's size gets a block
** of its own, so a block wastes at most a quarter of itself).  0 when out
** of memory. */
static char *spAlloc(SPool *p, int64_t nByte){
  char *z;
  if( p->zCur && p->nCurCap - p->nCurUsed >= nByte ){
    z = p->zCur + p->nCurUsed;
    p->nCurUsed += nByte;
    return z;
  }
  if( p->nBlk>=p->nAllocBlk ){
    int64_t nNew = p->nAllocBlk ? p->nAllocBlk*2 : 16;
    char **a = sqlite3_realloc64(p->apBlk, sizeof(char*)*(sqlite3_uint64)nNew);
    if( a==0 ) return 0;
    p->apBlk = a;
    p->nAllocBlk = nNew;
  }
  if( p->nNextBlk==0 ) p->nNextBlk = SP_BLOCK_MIN;
  if( nByte > p->nNextBlk/4 ){
    z = sqlite3_malloc64((sqlite3_uint64)nByte);
    if( z==0 ) return 0;
    p->apBlk[p->nBlk++] = z;
    return z;
  }
  z = sqlite3_malloc64((sqlite3_uint64)p->nNextBlk);
  if( z==0 ) return 0;
  p->apBlk[p->nBlk++] = z;
  p->zCur = z;
  p->nCurCap = p->nNextBlk;
  p->nCurUsed = nByte;
  if( p->nNextBlk<SP_BLOCK_MAX ) p->nNextBlk *= 2;
  return z;
}

/* Intern z[0..n); returns its id, or -1 when out of memory.  z may point
** into the pool itself (a prefix of a pooled string). */
static int32_t spIntern(SPool *p, const char *z, int64_t n){
  uint64_t h;
  int64_t i;
  char *zNew;
  if( n>0x7fffffff ) n = 0x7fffffff;
  if( p->n>=0x3fffffff ) return -1;       /* ids are int32_t, slots 2x ids */
  if( (int64_t)(p->n+1)*2 > p->nSlot ){
    int64_t nNew = p->nSlot ? p->nSlot*2 : 1024, j;
    int32_t *aNew = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return -1;
    memset(aNew, 0, sizeof(int32_t)*(size_t)nNew);
    for(j=0; j<p->n; j++){
      int64_t k = (int64_t)(strHash(SP_STR(p,j), SP_LEN(p,j)) & (uint64_t)(nNew-1));
      while( aNew[k] ) k = (k+1) & (nNew-1);
      aNew[k] = (int32_t)j+1;
    }
    sqlite3_free(p->aSlot);
    p->aSlot = aNew;
    p->nSlot = nNew;
  }
  h = strHash(z, n);
  i = (int64_t)(h & (uint64_t)(p->nSlot-1));
  while( p->aSlot[i] ){
    int32_t id = p->aSlot[i]-1;
    if( SP_LEN(p,id)==n && memcmp(SP_STR(p,id), z, (size_t)n)==0 ) return id;
    i = (i+1) & (p->nSlot-1);
  }
  if( p->n>=p->nAlloc ){
    int32_t nNew = p->nAlloc ? p->nAlloc*2 : 1024;
    char **aS = sqlite3_realloc64(p->azStr, sizeof(char*)*(sqlite3_uint64)nNew);
    int32_t *aL;
    if( aS==0 ) return -1;
    p->azStr = aS;
    aL = sqlite3_realloc64(p->aLen, sizeof(int32_t)*(sqlite3_uint64)nNew);
    if( aL==0 ) return -1;
    p->aLen = aL;
    p->nAlloc = nNew;
  }
  zNew = spAlloc(p, n+1);      /* z (even a pooled text) stays where it is */
  if( zNew==0 ) return -1;
  memcpy(zNew, z, (size_t)n);
  zNew[n] = 0;
  p->azStr[p->n] = zNew;
  p->aLen[p->n] = (int32_t)n;
  p->aSlot[i] = p->n + 1;
  return p->n++;
}

static void spFree(SPool *p){
  int64_t b;
  for(b=0; b<p->nBlk; b++) sqlite3_free(p->apBlk[b]);
  sqlite3_free(p->apBlk);
  sqlite3_free(p->azStr); sqlite3_free(p->aLen); sqlite3_free(p->aSlot);
  memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/* One complete event: 32 bytes.  What repeats from event to event (the
** track and the interned name, tf_op, source and shape signature) is one
** id into the engine's table of event keys: a few thousand distinct keys
** stand for millions of events (import peak memory, issue 6). */
typedef struct SEv {
  int64_t ts;           /* start, ps relative to the origin */
  int64_t dur;          /* ps, > 0 */
  int64_t excl;         /* exclusive ps (§2) */
  int32_t key;          /* index into Engine.aKey */
  int32_t runid;        /* string id of args.run_id (-1: absent) */
} SEv;

/* What an event shares with others of its kind (string ids, -1: absent). */
typedef struct EvKey {
  int32_t trk;          /* track index, in order of first appearance */
  int32_t name;
  int32_t tfop;
  int32_t source;
  int32_t sig;          /* shape signature of args.long_name */
} EvKey;

#define EV_SHIFT 16
#define EV_BLOCK ((int64_t)1<<EV_SHIFT)
#define EV_FIRST ((int64_t)4096)   /* records of the first block at first */
#define EV_PREFAULT ((int64_t)1024)   /* records whose pages are mapped at a time (32 KiB) */
#define EV(e,i)  (&(e)->apBlk[(i)>>EV_SHIFT][(i)&(EV_BLOCK-1)])
#define KEY(e,r) (&(e)->aKey[(r)->key])

typedef struct STrack {
  int64_t pid, tid;
  int32_t proc, thread;   /* name string ids or -1 */
  int isDevice, isHost, isDevOp, isSteps;
  int64_t iFirst, nEv;    /* slice of the track-ordered index array */
} STrack;

/* A diagnostic met while reading, kept for the write phase. */
typedef struct EngDiagRow {
  int64_t idx, off;
  const char *zKind;    /* static */
  char *zDetail;        /* owned */
} EngDiagRow;

struct ProfsumEngine {
  sqlite3 *db;
  const char *zSchema;
  sqlite3_int64 traceId;
  const char *zFunc;
  char **pzErr;
  SPool pool;
  SEv **apBlk;          /* event records in blocks of EV_BLOCK (see noteX) */
  int64_t nEv, nBlk, nAllocBlk;
  int64_t nEvCap;       /* records the blocks hold (the first may be partial) */
  STrack *aTrk; int32_t nTrk, nAllocTrk;
  EvKey *aKey; int32_t nKey, nAllocKey;
  int32_t *aKeySlot;    /* open addressing over aKey: index+1, 0 = empty */
  int64_t nKeySlot;
  HMap trkMap;          /* (pid,tid) → track index */
  HMap procMap;         /* (pid,0) → process name id */
  HMap threadMap;       /* (pid,tid) → thread name id */
  HMap stepOf;          /* event index → args.step_num (events that have one) */
  /* The exclusive times as the reference's doubles give them of the device
  ** ops that had a child (max(0, dur − Σ children's dur), §2 in doubles;
  ** every other event's is its dur's double): aXrVal[i] for the event at
  ** processing position aXrPos[i] (a position in aOrd), in increasing
  ** position (exclRefAt).  12 bytes per such event: a trace of deeply
  ** nested device ops has one per event. */
  int32_t *aXrPos; double *aXrVal;
  int64_t nXr, nAllocXr;
  /* The doubles of the ts and dur texts of the events whose text had more
  ** than 6 decimals and whose doubles differ from those of the rounded
  ** picoseconds ("Float decisions"): rare (0 in converted XPlanes, whose
  ** 17-digit texts are the doubles of their picoseconds) but 40 % of the
  ** events of a trace written from float arithmetic (0.7000000000000001),
  ** so 20 bytes each, in event order (binary search). */
  int32_t *aFloatIdx; double *aFloatTs, *aFloatDur;
  int64_t nFloat, nAllocFloat;
  int anyRounded;       /* some accepted event's ts or dur text was rounded */
  int64_t tolPs;        /* exact differences above this many ps decide as the
                        ** doubles would; at or below it the doubles decide */
  int64_t nFlip;        /* near-tie comparisons the doubles decided otherwise
                        ** than the exact times (cmpPoint): then the import
                        ** checks the nesting on exact times (engExactCheck) */
  HMap sigCache;        /* (64-bit hash of long_name, its length) → signature
                        ** id+1 (0 = none); long_name texts are not kept */
  HMap sigLast;         /* name id → the last long_name seen with that name
                        ** (v1: sqlite3_malloc'd copy, its length first) and
                        ** its signature id+1 (v2): an op's events repeat one
                        ** long_name, so one memcmp replaces hashing it */
  int64_t nSigLastBytes;  /* long_name bytes held by sigLast */
  int64_t lastPid, lastTid; int32_t lastTrk;   /* the previous event's track */
  profsum_ps origin; int hasOrigin;
  profsum_ps tsMin, endMax; int hasRange;
  int64_t nEntries;
  ProfsumStopFn xStop;             /* asked now and then while reading, or 0 */
  void *pStopArg;
  char *zUnit;          /* displayTimeUnit */
  char zSha[65];        /* SHA-256 of the file, hex (empty until read) */
  int64_t nFileBytes;
  /* diagnostics */
  struct { const char *zKind; int64_t n; } aKind[48];
  int nKind;
  EngDiagRow *aDiag;    /* diagnostics (at most ENG_DIAG_KEEP per kind) */
  int64_t nDiag, nAllocDiag;
  int diagRc;
  int arrayForm;        /* the document is a bare array */
  int laxSyntax, cutOff; /* see ProfsumEngineInfo */
  int noEvents;         /* see ProfsumEngineInfo */
  int64_t nRejected, iFirstRejected, iLastRejected;
  int64_t nLeftOut, iFirstLeftOut; /* X events left out of the summary */
  const char *zFirstLeftOutWhy;
  const char *zFirstRejected;
  /* orders */
  int32_t *aOrd;        /* event indices: tracks in order, (ts,-end) within */
  char *zErrBuf;        /* parse phase: owner of its error message */
  char *zPath;          /* the trace file (for messages) */
  /* An XPlane read (summary §6.1, engReadXPlane): every event has its
  ** reference doubles in aFloat* (entry i is event i), every decision is
  ** theirs (tolPs INT64_MAX); each line is its own track, named by itself. */
  int isXPlane;
  char *zXpWarn;        /* its quality warnings as JSON array items, or 0 */
  double xpTsMin, xpEndMax;   /* the smallest ts and largest end (doubles) */
};
typedef struct ProfsumEngine Engine;

/* Format an error into *pzErr. */
static int engErr(Engine *e, int rc, const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  sqlite3_free(*e->pzErr);
  *e->pzErr = z ? sqlite3_mprintf("%s: %s", e->zFunc, z) : 0;
  sqlite3_free(z);
  return rc;
}

/* Out of memory with no message yet: say so with the function, the file
** and the phase (zWhat), so that a trace too large for the memory at hand
** is told apart from other failures.  Returns SQLITE_NOMEM. */
static int engNoMem(Engine *e, const char *zWhat){
  if( e->pzErr && *e->pzErr==0 ){
    *e->pzErr = sqlite3_mprintf("%s: '%s': out of memory %s (%lld complete events read)",
                                e->zFunc, e->zPath ? e->zPath : "?", zWhat, (long long)e->nEv);
  }
  return SQLITE_NOMEM;
}

/* Count a complete event left out of the summary (zWhy: static text for the
** import's quality warning). */
static void noteLeftOut(Engine *e, int64_t idx, const char *zWhy){
  if( e->nLeftOut++==0 ){ e->iFirstLeftOut = idx; e->zFirstLeftOutWhy = zWhy; }
}

/* Count entry idx among those the reference summarizer would reject the
** whole file for (once per entry, whatever the number of reasons). */
static void noteRejected(Engine *e, int64_t idx, const char *zKind){
  if( e->nRejected>0 && idx==e->iLastRejected ) return;
  e->iLastRejected = idx;
  if( e->nRejected++==0 ){ e->iFirstRejected = idx; e->zFirstRejected = zKind; }
}

/* Why the reference's typed decoder (summary-v1-spec §1.2) would reject the
** whole file for entry ev, beyond what the reader's diagnostics and the
** pid/tid and ts/dur checks count: args that is not an object; args.name,
** tf_op, source or long_name that is not a string (the typed args of every
** entry, not only of metadata); args.run_id that is not a string or a number; args.step_num that
** is not an integer or a string.  null is taken as absent.  0 when none. */
static const char *refTypeProblem(const ProfsumEvent *ev, int ph){
  static const struct { int k; const char *zWhy; } aStr[] = {
    {PROFSUM_AK_TF_OP, "args.tf_op not a string"},
    {PROFSUM_AK_SOURCE, "args.source not a string"},
    {PROFSUM_AK_LONG_NAME, "args.long_name not a string"},
  };
  const ProfsumSpan *a = ev->aArg;
  int t, i;
  t = ev->args.type;
  if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_OBJECT ) return "args not a JSON object";
  if( t!=PROFSUM_JT_OBJECT ) return 0;
  for(i=0; i<(int)(sizeof(aStr)/sizeof(aStr[0])); i++){
    t = a[aStr[i].k].type;
    if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING ) return aStr[i].zWhy;
  }
  t = a[PROFSUM_AK_NAME].type;
  if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING ){
    return ph=='M' ? "args.name of a metadata entry not a string" : "args.name not a string";
  }
  t = a[PROFSUM_AK_RUN_ID].type;
  if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING && t!=PROFSUM_JT_NUMBER ){
    return "args.run_id not a string or a number";
  }
  t = a[PROFSUM_AK_STEP_NUM].type;
  if( t==PROFSUM_JT_NUMBER ){
    const ProfsumSpan *s = &a[PROFSUM_AK_STEP_NUM];
    int64_t j;
    for(j=0; j<s->n; j++){
      char c = s->z[j];
      if( c=='.' || c=='e' || c=='E' ) return "args.step_num not an integer or a string";
    }
  }else if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING ){
    return "args.step_num not an integer or a string";
  }
  return 0;
}

/* 1 for the reader's diagnostic kinds whose entries the reference's decoder
** rejects the whole file for (by first letter first: this runs for every
** diagnostic, e.g. a time_rounded per event of a converted XPlane). */
static int isRejectKind(const char *z){
  switch( z[0] ){
    case 'n': return strcmp(z, "not_an_object")==0;
    case 'p': return strcmp(z, "ph_not_string")==0;
    case 'b': return strcmp(z, "bad_field")==0;
    case 'i': return strcmp(z, "invalid_utf8")==0;
    default:  return 0;
  }
}

/* Diagnostics an import stores per kind (profsum_agg_diagnostic), beyond
** which a 'suppressed' row gives the kind's total.  Fewer than the 1000 of
** profsum_diagnostics(path): a real xprof trace has thousands of
** time_rounded entries, and 1000 stored rows of one kind were 40 % of the
** database a 10 MB trace makes (132 of 344 KB) and 1.4 ms of its import,
** for examples nobody reads past the first few; the file itself lists
** them all again. */
#define ENG_DIAG_KEEP 100

/* Diagnostics callback: store rows (capped per kind) and count the
** entries the reference summarizer would reject the whole file for. */
static void engDiag(void *pCtx, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  Engine *e = (Engine*)pCtx;
  int k;
  EngDiagRow *r;
  if( isRejectKind(zKind) ) noteRejected(e, idx, zKind);
  switch( zKind[0] ){     /* the reader's file-level tolerances (cheap for
                          ** time_rounded, which can come once per event) */
    case 't':
      if( zKind[1]!='r' ) break;
      if( strcmp(zKind, "trailing_comma")==0 ) e->laxSyntax = 1;
      else if( strcmp(zKind, "truncated_entry")==0 ) e->cutOff = 1;
      break;
    case 'c': if( strcmp(zKind, "control_character")==0 ) e->laxSyntax = 1; break;
    case 'n': if( strcmp(zKind, "no_trace_events")==0 ) e->noEvents = 1; break;
    case 'u':
      if( strcmp(zKind, "unterminated_array")==0 || strcmp(zKind, "unterminated_object")==0 ) e->cutOff = 1;
      break;
  }
  for(k=0; k<e->nKind; k++) if( e->aKind[k].zKind==zKind || strcmp(e->aKind[k].zKind, zKind)==0 ) break;
  if( k==e->nKind && e->nKind<48 ){ e->aKind[k].zKind = zKind; e->aKind[k].n = 0; e->nKind++; }
  if( k<e->nKind && ++e->aKind[k].n > ENG_DIAG_KEEP ) return;
  if( e->diagRc ) return;
  /* Kept in memory (bounded: ENG_DIAG_KEEP per kind) until the write phase. */
  if( e->nDiag>=e->nAllocDiag ){
    int64_t nNew = e->nAllocDiag ? e->nAllocDiag*2 : 64;
    EngDiagRow *a = sqlite3_realloc64(e->aDiag, sizeof(EngDiagRow)*(sqlite3_uint64)nNew);
    if( a==0 ){ e->diagRc = SQLITE_NOMEM; return; }
    e->aDiag = a;
    e->nAllocDiag = nNew;
  }
  r = &e->aDiag[e->nDiag];
  r->idx = idx;
  r->off = off;
  r->zKind = zKind;
  r->zDetail = sqlite3_mprintf("%s", zDetail ? zDetail : "");
  if( r->zDetail==0 ){ e->diagRc = SQLITE_NOMEM; return; }
  e->nDiag++;
}

/* Python int() of a str: optional surrounding whitespace, optional sign,
** digits with single underscores between them.  Returns 0 on success. */
static int pyIntParse(const char *z, int64_t n, int64_t *pOut){
  int64_t i = 0, j;
  int neg = 0, nd = 0;
  uint64_t v = 0;
  while( i<n && (z[i]==' '||z[i]=='\t'||z[i]=='\n'||z[i]=='\r'||z[i]=='\f'||z[i]=='\v') ) i++;
  while( n>i && (z[n-1]==' '||z[n-1]=='\t'||z[n-1]=='\n'||z[n-1]=='\r'||z[n-1]=='\f'||z[n-1]=='\v') ) n--;
  if( i<n && (z[i]=='+' || z[i]=='-') ){ neg = z[i]=='-'; i++; }
  for(j=i; j<n; j++){
    if( z[j]=='_' ){
      if( j==i || j+1>=n || z[j+1]=='_' || z[j-1]=='_' ) return -1;
      continue;
    }
    if( z[j]<'0' || z[j]>'9' ) return -1;
    if( v > (UINT64_C(0x7fffffffffffffff) - (unsigned)(z[j]-'0'))/10 ) return -1;
    v = v*10 + (unsigned)(z[j]-'0');
    nd++;
  }
  if( nd==0 ) return -1;
  *pOut = neg ? -(int64_t)v : (int64_t)v;
  return 0;
}

/* Intern a string-valued args field (strings decoded; numbers as text);
** empty or absent → -1.  Returns SQLITE_OK or SQLITE_NOMEM. */
static int internArg(Engine *e, const ProfsumSpan *s, char **ppB, int64_t *pnB, int32_t *pId){
  const char *z; int64_t n;
  *pId = -1;
  if( s->type==PROFSUM_JT_STRING ){
    if( profsumSpanText(s, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
  }else if( s->type==PROFSUM_JT_NUMBER ){
    z = s->z; n = s->n;
  }else{
    return SQLITE_OK;
  }
  if( n==0 ) return SQLITE_OK;
  *pId = spIntern(&e->pool, z, n);
  return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* args.run_id: a string as is; a number as Python's str() of what
** json.loads gives (§1.3): an integer literal is its int, written as is
** (JSON has no leading zeros) but "-0" → "0"; anything else → the float's
** repr ("7.50" → "7.5", "1e3" → "1000.0"). */
static int internRunId(Engine *e, const ProfsumSpan *s, char **ppB, int64_t *pnB, int32_t *pId){
  const char *z = s->z;
  int64_t n = s->n, j;
  char zBuf[40];
  if( s->type!=PROFSUM_JT_NUMBER ) return internArg(e, s, ppB, pnB, pId);
  *pId = -1;
  if( n==0 ) return SQLITE_OK;
  for(j=(z[0]=='-'); j<n && z[j]>='0' && z[j]<='9'; j++){}
  if( j==n ){
    if( n==2 && z[0]=='-' && z[1]=='0' ){ z++; n--; }
    *pId = spIntern(&e->pool, z, n);
    return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
  }
  {
    double r = profsumTextDouble(z, n, NAN);
    if( isinf(r) ) memcpy(zBuf, r<0 ? "-inf" : "inf", r<0 ? 5 : 4);   /* Python str() */
    else if( isnan(r) ) memcpy(zBuf, "nan", 4);
    else jReprDouble(r, zBuf);
  }
  *pId = spIntern(&e->pool, zBuf, (int64_t)strlen(zBuf));
  return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
}

#define SIGLAST_MAX_BYTES ((int64_t)8<<20)   /* long_name copies kept by sigLast */

/* The shape signature id (-1: none) of the long_name span s of an event
** named `name`: first the raw JSON bytes of the span are compared with
** those of the last long_name seen with that name (sigLast: the same bytes
** decode to the same text, so the escapes of an HLO text are decoded only
** when it changes), else the decoded text is looked up by content hash and
** length (sigCache) and the signature computed on a miss.  Returns
** SQLITE_OK or SQLITE_NOMEM. */
static int sigOf(Engine *e, int32_t name, const ProfsumSpan *s, char **ppB, int64_t *pnB,
                 int32_t *pId){
  const char *z; int64_t n;
  HEnt *h, *hl;
  int isNew;
  int64_t *pCopy;
  *pId = -1;
  if( s->type!=PROFSUM_JT_STRING || s->n==0 ) return SQLITE_OK;
  hl = hmGet(&e->sigLast, name, 0, 1, 0);
  if( hl==0 ) return SQLITE_NOMEM;
  pCopy = (int64_t*)(intptr_t)hl->v1;
  if( pCopy && pCopy[0]==s->n && memcmp(pCopy+2, s->z, (size_t)s->n)==0 ){
    *pId = (int32_t)hl->v2 - 1;
    return SQLITE_OK;
  }
  if( profsumSpanText(s, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
  if( n==0 ) return SQLITE_OK;
  h = hmGet(&e->sigCache, (int64_t)strHash(z, n), n, 1, &isNew);
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew ){
    char *zSig = 0; int nSig = 0;
    if( profsumShapeSignature(z, (int)(n>0x7fffffff ? 0x7fffffff : n), &zSig, &nSig) ) return SQLITE_NOMEM;
    if( zSig ){
      int32_t id = spIntern(&e->pool, zSig, nSig);
      sqlite3_free(zSig);
      if( id<0 ) return SQLITE_NOMEM;
      h->v1 = id+1;
    }
  }
  *pId = (int32_t)h->v1 - 1;
  /* Remember this long_name for the next event of the same name, in the
  ** name's buffer ({length, capacity, bytes}; reallocated only to grow, so
  ** a name whose HLO text keeps changing costs no allocation per event).
  ** The buffers are bounded (traces whose names never repeat gain nothing). */
  if( pCopy==0 || s->n>pCopy[1] ){
    int64_t cap = pCopy ? pCopy[1] : 0;
    int64_t newCap = (s->n + 63) & ~(int64_t)63;
    int64_t *pNew;
    if( e->nSigLastBytes - cap + newCap > SIGLAST_MAX_BYTES ) return SQLITE_OK;
    pNew = sqlite3_realloc64(pCopy, 2*sizeof(int64_t) + (sqlite3_uint64)newCap);
    if( pNew==0 ){ sqlite3_free(pCopy); hl->v1 = 0; return SQLITE_NOMEM; }
    e->nSigLastBytes += newCap - cap;
    pCopy = pNew;
    pCopy[1] = newCap;
  }
  pCopy[0] = s->n;
  memcpy(pCopy+2, s->z, (size_t)s->n);
  hl->v1 = (int64_t)(intptr_t)pCopy;
  hl->v2 = h->v1;
  return SQLITE_OK;
}

/* Free the signature caches (needed only while reading). */
static void sigFree(Engine *e){
  int64_t i;
  for(i=0; i<e->sigLast.nSlot; i++){
    if( e->sigLast.a[i].used ) sqlite3_free((void*)(intptr_t)e->sigLast.a[i].v1);
  }
  hmFree(&e->sigLast);
  hmFree(&e->sigCache);
  e->nSigLastBytes = 0;
}

/* Record an M event's process/thread name (era C: pid >= 0, tid >= 0). */
static int noteMeta(Engine *e, const ProfsumEvent *ev, char **ppB, int64_t *pnB){
  const ProfsumSpan *nm = &ev->name;
  const ProfsumSpan *v = &ev->aArg[PROFSUM_AK_NAME];
  int isProc, isThread;
  int32_t id;
  const char *z; int64_t n;
  HEnt *h;
  if( nm->type!=PROFSUM_JT_STRING || (nm->flags & PROFSUM_SF_ESCAPE) ) return SQLITE_OK;
  isProc = nm->n==12 && memcmp(nm->z, "process_name", 12)==0;
  isThread = nm->n==11 && memcmp(nm->z, "thread_name", 11)==0;
  if( !isProc && !isThread ) return SQLITE_OK;
  if( v->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  if( ev->pid.kind!=PROFSUM_ID_INT || ev->pid.iVal<0 ) return SQLITE_OK;
  if( isThread && (ev->tid.kind!=PROFSUM_ID_INT || ev->tid.iVal<0) ) return SQLITE_OK;
  if( profsumSpanText(v, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
  id = spIntern(&e->pool, z, n);
  if( id<0 ) return SQLITE_NOMEM;
  h = isProc ? hmGet(&e->procMap, ev->pid.iVal, 0, 1, 0)
             : hmGet(&e->threadMap, ev->pid.iVal, ev->tid.iVal, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1 = id;
  return SQLITE_OK;
}

static uint64_t keyHash(const EvKey *k){
  return hmix(((uint64_t)(uint32_t)k->trk<<32 | (uint32_t)k->name)
              ^ hmix((uint64_t)(uint32_t)k->tfop<<32 | (uint32_t)k->source)
              ^ ((uint64_t)(uint32_t)k->sig * 0x9e3779b97f4a7c15ULL));
}

/* Intern an event key; its index, or -1 when out of memory. */
static int32_t keyIntern(Engine *e, const EvKey *k){
  int64_t i;
  if( (int64_t)(e->nKey+1)*2 > e->nKeySlot ){
    int64_t nNew = e->nKeySlot ? e->nKeySlot*2 : 1024, j;
    int32_t *aNew = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nNew);
    if( aNew==0 ) return -1;
    memset(aNew, 0, sizeof(int32_t)*(size_t)nNew);
    for(j=0; j<e->nKey; j++){
      int64_t h = (int64_t)(keyHash(&e->aKey[j]) & (uint64_t)(nNew-1));
      while( aNew[h] ) h = (h+1) & (nNew-1);
      aNew[h] = (int32_t)j+1;
    }
    sqlite3_free(e->aKeySlot);
    e->aKeySlot = aNew;
    e->nKeySlot = nNew;
  }
  i = (int64_t)(keyHash(k) & (uint64_t)(e->nKeySlot-1));
  while( e->aKeySlot[i] ){
    const EvKey *x = &e->aKey[e->aKeySlot[i]-1];
    if( x->trk==k->trk && x->name==k->name && x->tfop==k->tfop
     && x->source==k->source && x->sig==k->sig ) return e->aKeySlot[i]-1;
    i = (i+1) & (e->nKeySlot-1);
  }
  if( e->nKey>=e->nAllocKey ){
    int32_t nNew = e->nAllocKey ? e->nAllocKey*2 : 256;
    EvKey *a = sqlite3_realloc64(e->aKey, sizeof(EvKey)*(sqlite3_uint64)nNew);
    if( a==0 ) return -1;
    e->aKey = a;
    e->nAllocKey = nNew;
  }
  e->aKey[e->nKey] = *k;
  e->aKeySlot[i] = e->nKey + 1;
  return e->nKey++;
}

/* A new event record e->nEv for an accepted event (entry idx at byte
** iOffset) at exact ts for dur picoseconds: *ppR is the zeroed record with
** ts (relative to the origin) and dur set, or 0 when the event is left out
** (too far in time: a diagnostic and the count).  The caller fills the rest
** and then counts it (e->nEv++).  SQLITE_OK, SQLITE_NOMEM or SQLITE_TOOBIG. */
static int evNew(Engine *e, int64_t idx, int64_t iOffset, profsum_ps ts, profsum_ps dur, SEv **ppR){
  SEv *r;
  profsum_ps rel, end = ts + dur;
  *ppR = 0;
  if( !e->hasOrigin ){ e->origin = ts; e->hasOrigin = 1; }
  rel = ts - e->origin;
  if( rel>((int64_t)1<<61) || rel<-((int64_t)1<<61) || dur>((int64_t)1<<61) ){
    engDiag(e, idx, iOffset, "time_out_of_range",
            "complete event longer than 26 days (2^61 ps) or that far from the first one: "
            "left out of the summary");
    noteLeftOut(e, idx, "more than 26 days (2^61 ps) long or away from the first event");
    return SQLITE_OK;
  }
  if( !e->hasRange || ts<e->tsMin ) e->tsMin = ts;
  if( !e->hasRange || end>e->endMax ) e->endMax = end;
  e->hasRange = 1;
  if( e->nEv>=0x7fffffff ){
    /* Event indices are 32-bit (the order array: 4 bytes per event). */
    return engErr(e, SQLITE_TOOBIG, "entry %lld (byte %lld): more than 2147483647 complete "
                  "events: a trace this large cannot be summarized",
                  (long long)idx, (long long)iOffset);
  }
  if( e->nEv>=e->nEvCap ){
    if( e->nBlk==1 && e->nEvCap<EV_BLOCK ){
      /* The first block grows from EV_FIRST records by doubling, so that a
      ** small trace does not hold a 2 MiB block for a few thousand events
      ** (at most four reallocs, up to 65,536 records; glibc moves a chunk
      ** above its mmap threshold with mremap, without a copy, and copies
      ** one below it, both blocks live for that moment).  No record
      ** pointer is kept across calls: every access goes through EV(). */
      int64_t nNew = e->nEvCap*2 < EV_BLOCK ? e->nEvCap*2 : EV_BLOCK;
      SEv *a = sqlite3_realloc64(e->apBlk[0], sizeof(SEv)*(sqlite3_uint64)nNew);
      if( a==0 ) return SQLITE_NOMEM;
      e->apBlk[0] = a;
      e->nEvCap = nNew;
    }else{
      /* A new block: later blocks never move, and peak memory is what is used. */
      int64_t nRec = e->nBlk==0 ? EV_FIRST : EV_BLOCK;
      if( e->nBlk>=e->nAllocBlk ){
        int64_t nNew = e->nAllocBlk ? e->nAllocBlk*2 : 64;
        SEv **a = sqlite3_realloc64(e->apBlk, sizeof(SEv*)*(sqlite3_uint64)nNew);
        if( a==0 ) return SQLITE_NOMEM;
        e->apBlk = a;
        e->nAllocBlk = nNew;
      }
      e->apBlk[e->nBlk] = sqlite3_malloc64(sizeof(SEv)*(sqlite3_uint64)nRec);
      if( e->apBlk[e->nBlk]==0 ) return SQLITE_NOMEM;
      e->nBlk++;
      e->nEvCap += nRec;
    }
  }
  if( (e->nEv & (EV_PREFAULT-1))==0 ){
    /* The next EV_PREFAULT records' pages in one call (ext/prefault.c):
    ** they lie in one block, as every block holds a multiple of
    ** EV_PREFAULT records from an index that is one. */
    profsumPrefault(EV(e, e->nEv), sizeof(SEv)*(size_t)EV_PREFAULT);
  }
  r = EV(e, e->nEv);
  memset(r, 0, sizeof(*r));
  r->ts = (int64_t)rel;
  r->dur = (int64_t)dur;
  *ppR = r;
  return SQLITE_OK;
}

/* Take one accepted X event. */
static int noteX(Engine *e, const ProfsumEvent *ev, char **ppB, int64_t *pnB){
  SEv *r;
  HEnt *h;
  int isNew, rc;
  const char *z; int64_t n;
  rc = evNew(e, ev->idx, ev->iOffset, ev->ts, ev->dur, &r);
  if( rc || r==0 ) return rc;
  if( e->nTrk==0 || ev->pid.iVal!=e->lastPid || ev->tid.iVal!=e->lastTid ){
    /* not the previous event's track (usually it is) */
    h = hmGet(&e->trkMap, ev->pid.iVal, ev->tid.iVal, 1, &isNew);
    if( h==0 ) return SQLITE_NOMEM;
    if( isNew ){
      STrack *t;
      if( e->nTrk>=e->nAllocTrk ){
        int32_t nNew = e->nAllocTrk ? e->nAllocTrk*2 : 64;
        STrack *a = sqlite3_realloc64(e->aTrk, sizeof(STrack)*(sqlite3_uint64)nNew);
        if( a==0 ) return SQLITE_NOMEM;
        e->aTrk = a;
        e->nAllocTrk = nNew;
      }
      t = &e->aTrk[e->nTrk];
      memset(t, 0, sizeof(*t));
      t->pid = ev->pid.iVal;
      t->tid = ev->tid.iVal;
      h->v1 = e->nTrk++;
    }
    e->lastPid = ev->pid.iVal;
    e->lastTid = ev->tid.iVal;
    e->lastTrk = (int32_t)h->v1;
  }
  {
    EvKey k;
    k.trk = e->lastTrk;
    if( profsumSpanText(&ev->name, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
    k.name = spIntern(&e->pool, z, n);
    if( k.name<0 ) return SQLITE_NOMEM;
    rc = internArg(e, &ev->aArg[PROFSUM_AK_TF_OP], ppB, pnB, &k.tfop);
    if( rc==SQLITE_OK ) rc = internArg(e, &ev->aArg[PROFSUM_AK_SOURCE], ppB, pnB, &k.source);
    if( rc==SQLITE_OK ) rc = internRunId(e, &ev->aArg[PROFSUM_AK_RUN_ID], ppB, pnB, &r->runid);
    if( rc==SQLITE_OK ) rc = sigOf(e, k.name, &ev->aArg[PROFSUM_AK_LONG_NAME], ppB, pnB, &k.sig);
    if( rc==SQLITE_OK && (r->key = keyIntern(e, &k))<0 ) rc = SQLITE_NOMEM;
  }
  if( rc ) return rc;
  {
    const ProfsumSpan *s = &ev->aArg[PROFSUM_AK_STEP_NUM];
    int64_t v;
    int has = 0;
    if( s->type==PROFSUM_JT_NUMBER && profsumParseInt(s->z, s->n, &v)==0 ) has = 1;
    else if( s->type==PROFSUM_JT_STRING && !(s->flags & PROFSUM_SF_ESCAPE)
          && pyIntParse(s->z, s->n, &v)==0 ) has = 1;
    if( has ){
      /* Rare (host `train` events): kept in a side map, event → step. */
      HEnt *hs = hmGet(&e->stepOf, e->nEv, 0, 1, 0);
      if( hs==0 ) return SQLITE_NOMEM;
      hs->v1 = v;
    }
  }
  if( ev->tsRounded || ev->durRounded ){
    /* Rare but for converted XPlanes (17-digit µs texts): keep the text's
    ** doubles only when the rounded picoseconds give other doubles. */
    double pTs = psFloat(ev->ts), pDur = psFloat(ev->dur);
    double fTs = ev->tsRounded ? profsumTextDouble(ev->tsSpan.z, ev->tsSpan.n, pTs) : pTs;
    double fDur = ev->durRounded ? profsumTextDouble(ev->durSpan.z, ev->durSpan.n, pDur) : pDur;
    e->anyRounded = 1;
    if( fTs!=pTs || fDur!=pDur ){
      if( e->nFloat>=e->nAllocFloat ){
        int64_t nNew = e->nAllocFloat ? e->nAllocFloat*2 : 256;
        int32_t *a1 = sqlite3_realloc64(e->aFloatIdx, sizeof(int32_t)*(sqlite3_uint64)nNew);
        double *a2, *a3;
        if( a1==0 ) return SQLITE_NOMEM;
        e->aFloatIdx = a1;
        a2 = sqlite3_realloc64(e->aFloatTs, sizeof(double)*(sqlite3_uint64)nNew);
        if( a2==0 ) return SQLITE_NOMEM;
        e->aFloatTs = a2;
        a3 = sqlite3_realloc64(e->aFloatDur, sizeof(double)*(sqlite3_uint64)nNew);
        if( a3==0 ) return SQLITE_NOMEM;
        e->aFloatDur = a3;
        e->nAllocFloat = nNew;
      }
      e->aFloatIdx[e->nFloat] = (int32_t)e->nEv;
      e->aFloatTs[e->nFloat] = fTs;
      e->aFloatDur[e->nFloat] = fDur;
      e->nFloat++;
    }
  }
  e->nEv++;
  return SQLITE_OK;
}

/* The read pass. */
static int engRead(Engine *e, const char *zPath){
  ProfsumSrc *pSrc = 0;
  ProfsumScan *pScan = 0;
  ProfsumEvent *ev;
  char *zErr = 0, *pB = 0;
  int64_t nB = 0;
  int rc = profsumSrcOpenFile(zPath, &pSrc, &zErr);
  if( rc ){
    engErr(e, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    return rc;
  }
  rc = profsumSrcHashInit(pSrc);
  if( rc ){ profsumSrcClose(pSrc); return rc; }
  e->nFileBytes = profsumSrcFileSize(pSrc);
  rc = profsumScanOpen(pSrc, e->zFunc, PROFSUM_SCAN_ARGKEYS, engDiag, e, &pScan, &zErr);
  while( rc==SQLITE_OK ){
    char ph;
    rc = profsumScanNext(pScan, &ev, &zErr);
    if( rc!=SQLITE_ROW ) break;
    if( e->xStop && (ev->idx & 0x3fff)==0 && e->xStop(e->pStopArg) ){
      sqlite3_free(zErr);
      zErr = sqlite3_mprintf("%s: interrupted", e->zFunc);
      rc = SQLITE_INTERRUPT;
      break;
    }
    rc = SQLITE_OK;
    ph = (ev->ph.n==1 && !(ev->ph.flags & PROFSUM_SF_ESCAPE)) ? ev->ph.z[0] : 0;
    if( ev->pid.notJsonInt || ev->tid.notJsonInt ){
      /* The reference's typed decoder rejects a pid/tid that is not a JSON
      ** integer ("1", "Spans", 1.0), and a string ts/dur: a diagnostic row
      ** (the quality warning points there) and the count. */
      engDiag(e, ev->idx, ev->iOffset, "reference_rejects",
              "pid/tid not a JSON integer: the reference summarizer rejects the file; "
              "profsum reads it as trace_events does (an integer string as that integer)");
      noteRejected(e, ev->idx, "pid/tid not a JSON integer");
    }else if( ev->timeNotNumber ){
      engDiag(e, ev->idx, ev->iOffset, "reference_rejects",
              "ts/dur not a JSON number: the reference summarizer rejects the file; "
              "profsum reads a number written as a string as that number");
      noteRejected(e, ev->idx, "ts/dur not a JSON number");
    }else{
      const char *zWhy = refTypeProblem(ev, ph);
      if( zWhy ){
        char zD[160];
        sqlite3_snprintf(sizeof(zD), zD, "%s: the reference summarizer rejects the file; "
                         "profsum reads the entry anyway", zWhy);
        engDiag(e, ev->idx, ev->iOffset, "reference_rejects", zD);
        noteRejected(e, ev->idx, zWhy);
      }
    }
    if( ph=='M' ){
      rc = noteMeta(e, ev, &pB, &nB);
    }else if( ph=='X' ){
      /* dur > 0 as the reference's double: a positive text below half a
      ** picosecond (1e-13, left by float arithmetic in a converter) rounds
      ** to 0 ps but is a complete event there; its double is kept with
      ** the event (noteX), so nesting and gaps see it as the reference
      ** does, and it adds 0 ps to the exact sums. */
      double dTiny = (ev->hasDur && ev->dur==0 && ev->durRounded)
                     ? profsumTextDouble(ev->durSpan.z, ev->durSpan.n, 0.0) : 0.0;
      int durPositive = ev->hasDur && (ev->dur>0 || dTiny>0);
      if( ev->pid.kind==PROFSUM_ID_INT && ev->pid.iVal>=0
       && ev->tid.kind==PROFSUM_ID_INT && ev->tid.iVal>=0
       && ev->name.type==PROFSUM_JT_STRING && ev->name.n>0
       && durPositive ){
        if( !ev->hasTs && ev->tsPresent ){
          /* A ts that is there but is not a number ("NaN", null, 1e400, a
          ** word): the reference's typed decoder rejects the file (its
          ** lenient eras skipped the event); placing the event at ts 0 would
          ** be a wrong number in every time of its track, so it is left out,
          ** as trace_events leaves it off its track (column ts NULL). */
          noteLeftOut(e, ev->idx, "its ts is not a number");
          engDiag(e, ev->idx, ev->iOffset, "bad_ts",
                  "complete event whose ts is not a number: left out of the summary");
        }else{
          if( !ev->hasTs ){
            /* The reference's typed decoder defaults a missing ts to 0.0. */
            ev->ts = 0;
            ev->tsRounded = 0;
            engDiag(e, ev->idx, ev->iOffset, "missing_ts",
                    "complete event without ts: read as ts 0, the reference's default");
          }
          rc = noteX(e, ev, &pB, &nB);
        }
      }else if( ev->hasDur && !durPositive ){
        engDiag(e, ev->idx, ev->iOffset, (ev->dur<0 || dTiny<0) ? "negative_duration" : "zero_duration",
                "complete event with dur <= 0: not a complete event for the summary");
      }
    }
    if( rc==SQLITE_OK && e->diagRc ) rc = e->diagRc;
  }
  sqlite3_free(pB);
  sigFree(e);
  if( rc==SQLITE_DONE ){
    const char *zU = profsumScanDisplayTimeUnit(pScan);
    rc = profsumSrcHashHex(profsumScanSrc(pScan), e->zSha);
    if( rc ) engErr(e, rc, "'%s': cannot read the file to its end for its SHA-256", zPath);
    e->nEntries = profsumScanEntries(pScan);
    e->arrayForm = profsumScanIsArrayForm(pScan);
    if( zU ){
      e->zUnit = sqlite3_mprintf("%s", zU);
      if( e->zUnit==0 ) rc = SQLITE_NOMEM;
    }
  }else if( rc ){
    sqlite3_free(*e->pzErr);
    *e->pzErr = zErr;
    zErr = 0;
  }
  sqlite3_free(zErr);
  profsumScanClose(pScan);
  return rc;
}

/* ------------------------------------------------------------------ */
/* The intake of other readers (engine_intake.h)                        */
/* ------------------------------------------------------------------ */

static void jsonAppendStr(sqlite3_str *p, const char *z, int64_t n);

/* See engine_intake.h. */
int profsumEngPyInt(const char *z, int64_t n, int64_t *pOut){ return pyIntParse(z, n, pOut); }

/* See engine_intake.h. */
const char *profsumEngFunc(ProfsumEngine *e){ return e->zFunc; }
int64_t profsumEngCount(ProfsumEngine *e){ return e->nEv; }
const char *profsumEngStr(ProfsumEngine *e, int32_t id){ return SP_STR(&e->pool, id); }

/* See engine_intake.h. */
int profsumEngIntern(ProfsumEngine *e, const char *z, int64_t n, int32_t *pId){
  *pId = -1;
  if( n==0 ) return SQLITE_OK;
  *pId = spIntern(&e->pool, z, n);
  return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* See engine_intake.h. */
int profsumEngSig(ProfsumEngine *e, int32_t name, const char *z, int64_t n, int32_t *pId){
  ProfsumSpan sp;
  char *pB = 0; int64_t nB = 0;
  int rc;
  sp.z = z; sp.n = n; sp.type = PROFSUM_JT_STRING; sp.flags = 0;
  rc = sigOf(e, name, &sp, &pB, &nB, pId);
  sqlite3_free(pB);
  return rc;
}

/* See engine_intake.h. */
int profsumEngName(ProfsumEngine *e, int isThread, int64_t pid, int64_t tid, int32_t id){
  HEnt *h = isThread ? hmGet(&e->threadMap, pid, tid, 1, 0) : hmGet(&e->procMap, pid, 0, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1 = id;
  return SQLITE_OK;
}

/* See engine_intake.h. */
void profsumEngDiag(ProfsumEngine *e, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  engDiag(e, idx, off, zKind, zDetail);
}
int profsumEngDiagRc(ProfsumEngine *e){ return e->diagRc; }

/* See engine_intake.h. */
int profsumEngStopAsked(ProfsumEngine *e){
  return e->xStop && e->xStop(e->pStopArg);
}

/* See engine_intake.h. */
int profsumEngNewTrack(ProfsumEngine *e, int64_t pid, int64_t tid, int32_t proc, int32_t thread,
                       int32_t *pTrk){
  STrack *t;
  if( e->nTrk>=e->nAllocTrk ){
    int32_t nNew = e->nAllocTrk ? e->nAllocTrk*2 : 64;
    STrack *a = sqlite3_realloc64(e->aTrk, sizeof(STrack)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    e->aTrk = a;
    e->nAllocTrk = nNew;
  }
  t = &e->aTrk[e->nTrk];
  memset(t, 0, sizeof(*t));
  t->pid = pid;
  t->tid = tid;
  t->proc = proc;
  t->thread = thread;
  *pTrk = e->nTrk++;
  return SQLITE_OK;
}

/* See engine_intake.h. */
int profsumEngAdd(ProfsumEngine *e, const ProfsumEngEvent *x){
  SEv *r;
  EvKey k;
  int rc = evNew(e, x->idx, x->iOffset, x->ts, x->dur, &r);
  if( rc || r==0 ) return rc;
  k.trk = x->trk;
  k.name = x->name;
  k.tfop = x->tfop;
  k.source = x->source;
  k.sig = x->sig;
  r->runid = x->runid;
  if( (r->key = keyIntern(e, &k))<0 ) return SQLITE_NOMEM;
  if( x->hasStep ){
    HEnt *hs = hmGet(&e->stepOf, e->nEv, 0, 1, 0);
    if( hs==0 ) return SQLITE_NOMEM;
    hs->v1 = x->step;
  }
  /* its doubles: one aFloat entry per event (floatEntry's identity case) */
  if( e->nFloat>=e->nAllocFloat ){
    int64_t nNew = e->nAllocFloat ? e->nAllocFloat*2 : 256;
    int32_t *a1 = sqlite3_realloc64(e->aFloatIdx, sizeof(int32_t)*(sqlite3_uint64)nNew);
    double *a2, *a3;
    if( a1==0 ) return SQLITE_NOMEM;
    e->aFloatIdx = a1;
    a2 = sqlite3_realloc64(e->aFloatTs, sizeof(double)*(sqlite3_uint64)nNew);
    if( a2==0 ) return SQLITE_NOMEM;
    e->aFloatTs = a2;
    a3 = sqlite3_realloc64(e->aFloatDur, sizeof(double)*(sqlite3_uint64)nNew);
    if( a3==0 ) return SQLITE_NOMEM;
    e->aFloatDur = a3;
    e->nAllocFloat = nNew;
  }
  e->aFloatIdx[e->nFloat] = (int32_t)e->nEv;
  e->aFloatTs[e->nFloat] = x->fTs;
  e->aFloatDur[e->nFloat] = x->fDur;
  e->nFloat++;
  if( e->nEv==0 || x->fTs<e->xpTsMin ) e->xpTsMin = x->fTs;
  if( e->nEv==0 || x->fTs+x->fDur>e->xpEndMax ) e->xpEndMax = x->fTs + x->fDur;
  e->nEv++;
  return e->diagRc;
}

/* See engine_intake.h. */
int profsumEngFinish(ProfsumEngine *e, int64_t nEntries, const char *zUnit, const char *zSha,
                     int64_t nFileBytes, sqlite3_str *pWarn){
  e->nEntries = nEntries;
  memcpy(e->zSha, zSha, sizeof(e->zSha)-1);
  e->zSha[sizeof(e->zSha)-1] = 0;
  e->nFileBytes = nFileBytes;
  e->zUnit = sqlite3_mprintf("%s", zUnit);
  if( e->zUnit==0 ) return SQLITE_NOMEM;
  if( pWarn && sqlite3_str_length(pWarn)>0 ){
    e->zXpWarn = sqlite3_mprintf("%s", sqlite3_str_value(pWarn));
    if( e->zXpWarn==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* See engine_intake.h. */
void profsumEngWarnAppend(sqlite3_str *pW, const char *z, int64_t n){
  if( sqlite3_str_length(pW)>0 ) sqlite3_str_appendchar(pW, 1, ',');
  jsonAppendStr(pW, z, n);
}

/* See engine_intake.h. */
int profsumEngSetError(ProfsumEngine *e, char *zErr){
  if( zErr ){
    sqlite3_free(*e->pzErr);
    *e->pzErr = zErr;
  }
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Ordering and exclusive time                                         */
/* ------------------------------------------------------------------ */
/* Float decisions.  The reference reads ts and dur as doubles (Python
** float() of the JSON text) and decides order, nesting (§2) and gaps
** (§4.8) by comparing ts and end = ts + dur as doubles.  Where two exact
** values are equal or nearly so, the doubles can disagree with them: a
** child that ends on the picosecond its parent ends can get an end one ulp
** later (then it is a partial overlap, not a child), two events that abut
** can leave a gap of 1e-10 µs.  The summary reproduces those decisions;
** sums stay exact.  Exact differences larger than e->tolPs cannot be
** reversed by rounding (the bound is set from the largest magnitude in
** the trace, engTolerance), so only near-ties compute the doubles. */

/* Position of the first entry of aFloatIdx[lo..hi) that is >= i (hi when
** none). */
static int64_t floatSearch(const Engine *e, int64_t i, int64_t lo, int64_t hi){
  while( lo<hi ){
    int64_t mid = (lo+hi)/2;
    if( e->aFloatIdx[mid]<i ) lo = mid+1; else hi = mid;
  }
  return lo;
}

/* Index in aFloatIdx of event i's text doubles, or -1 when the doubles of
** its picoseconds are the text's. */
static int64_t floatEntry(const Engine *e, int64_t i){
  int64_t lo;
  if( e->nFloat==e->nEv && e->nFloat>0 ) return i;   /* one entry per event, in order */
  lo = floatSearch(e, i, 0, e->nFloat);
  return lo<e->nFloat && e->aFloatIdx[lo]==i ? lo : -1;
}

/* floatEntry for a walk that mostly meets increasing event indices (a
** track in time order: the file's order, as xprof writes each line):
** *pHint is the position of the previous answer's search (start at 0);
** a few steps forward instead of a binary search over all entries. */
static int64_t floatEntryNear(const Engine *e, int64_t i, int64_t *pHint){
  int64_t lo = *pHint, step = 1, hi;
  if( e->nFloat==0 ) return -1;
  if( e->nFloat==e->nEv ) return i;      /* one entry per event, in order */
  if( lo>e->nFloat || (lo>0 && e->aFloatIdx[lo-1]>=i) ){
    lo = 0;                                 /* went back: search from the start */
  }
  /* gallop to the first entry >= i */
  hi = lo;
  while( hi<e->nFloat && e->aFloatIdx[hi]<i ){
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if( hi>e->nFloat ) hi = e->nFloat;
  lo = floatSearch(e, i, lo, hi);
  *pHint = lo;
  return lo<e->nFloat && e->aFloatIdx[lo]==i ? lo : -1;
}

/* The doubles the reference has for event i, whose entry in aFloatIdx is
** f (-1: none): its ts and ts + dur. */
static void evFloatOf(Engine *e, int32_t i, int64_t f, double *pTs, double *pEnd){
  const SEv *r = EV(e, i);
  double ts, dur;
  if( f>=0 ){
    ts = e->aFloatTs[f];
    dur = e->aFloatDur[f];
  }else{
    ts = psFloat(e->origin + r->ts);
    dur = psFloat(r->dur);
  }
  *pTs = ts;
  *pEnd = ts + dur;
}

/* The doubles the reference has for event i: its ts and ts + dur. */
static void evFloat(Engine *e, int32_t i, double *pTs, double *pEnd){
  evFloatOf(e, i, floatEntry(e, i), pTs, pEnd);
}

/* evFloat with the walk's hint of floatEntryNear. */
static void evFloatNear(Engine *e, int32_t i, int64_t *pHint, double *pTs, double *pEnd){
  evFloatOf(e, i, floatEntryNear(e, i, pHint), pTs, pEnd);
}

/* The double the reference has for event i's dur (see evFloat). */
static double evDurFloat(Engine *e, int64_t i){
  int64_t f = floatEntry(e, i);
  return f>=0 ? e->aFloatDur[f] : psFloat(EV(e, i)->dur);
}

/* evDurFloat with the walk's hint of floatEntryNear. */
static double evDurFloatNear(Engine *e, int64_t i, int64_t *pHint){
  int64_t f = floatEntryNear(e, i, pHint);
  return f>=0 ? e->aFloatDur[f] : psFloat(EV(e, i)->dur);
}

/* Sign of (point of a) − (point of b) as the reference's doubles compare
** them, where a point is the event's ts (bEnd 0) or its end (bEnd 1). */
static int cmpPoint(Engine *e, int32_t ia, int bEndA, int32_t ib, int bEndB){
  const SEv *a = EV(e, ia), *b = EV(e, ib);
  int64_t d = (a->ts + (bEndA ? a->dur : 0)) - (b->ts + (bEndB ? b->dur : 0));
  double fa, fb, ta, tb;
  if( d>e->tolPs ) return 1;
  if( d<-e->tolPs ) return -1;
  if( d==0 && !bEndA && !bEndB && e->nFloat==0 ) return 0;   /* same ps, same double */
  evFloat(e, ia, &ta, &fa);
  evFloat(e, ib, &tb, &fb);
  if( !bEndA ) fa = ta;
  if( !bEndB ) fb = tb;
  {
    int c = (fa>fb) - (fa<fb);
    if( c!=(d>0) - (d<0) ) e->nFlip++;
    return c;
  }
}
#define cmpTs(e,a,b)    cmpPoint(e, a, 0, b, 0)
#define cmpEnd(e,a,b)   cmpPoint(e, a, 1, b, 1)
#define cmpTsEnd(e,a,b) cmpPoint(e, a, 0, b, 1)

/* Set e->tolPs from the largest magnitude M (µs) of the trace's accepted
** times: a double ts, dur or ts + dur is within 1.5 ulp(2M) of its exact
** value (plus 0.5 ps for each of ts and dur when their texts were rounded
** to a picosecond: an end moves by up to 1 ps, two ends apart by 2), so
** exact differences above 4 ulp(2M) (+2 ps) order as the doubles do.
** Times so large (|ts| beyond about 5e27 µs, which the reader accepts as
** exact picoseconds) that the bound passes INT64_MAX: every comparison is
** the doubles' (tolPs INT64_MAX; the bound is converted only when it fits). */
static void engTolerance(Engine *e){
  profsum_ps a, b;
  double m, u, tol;
  int ex;
  e->tolPs = 0;
  if( e->isXPlane ){ e->tolPs = INT64_MAX; return; }  /* its doubles decide everything */
  if( !e->hasRange ) return;
  a = e->tsMin<0 ? -e->tsMin : e->tsMin;
  b = e->endMax<0 ? -e->endMax : e->endMax;
  m = 2.0 * (double)(a>b ? a : b) / 1e6;
  (void)frexp(m, &ex);
  u = ldexp(1.0, ex-53);
  tol = floor(4.0*u*1e6) + (e->anyRounded ? 2 : 0);
  e->tolPs = tol < 0x1p62 ? (int64_t)tol : INT64_MAX;
}

/* §2's order on the exact picoseconds: ts ascending, end descending, file
** order (engExactCheck; evLess's gapOrder 2). */
static int exactLess(const Engine *e, int32_t ia, int32_t ib){
  const SEv *a = EV(e, ia), *b = EV(e, ib);
  int64_t ea = a->ts + a->dur, eb = b->ts + b->dur;
  if( a->ts!=b->ts ) return a->ts<b->ts;
  if( ea!=eb ) return ea>eb;
  return ia<ib;
}

/* Order of two events by index: ts ascending, then end descending (the
** nesting order, gapOrder 0) or ascending (the gap order of §4.8, gapOrder
** 1), then file order, all as the reference's doubles compare; gapOrder 2:
** exactLess.  A total order: any sort gives the same result. */
static int evLess(Engine *e, int32_t ia, int32_t ib, int gapOrder){
  int c;
  if( gapOrder==2 ) return exactLess(e, ia, ib);
  c = cmpTs(e, ia, ib);
  if( c ) return c<0;
  c = cmpEnd(e, ia, ib);
  if( c ) return gapOrder ? c<0 : c>0;
  return ia<ib;
}

static void heapSiftDown(Engine *e, int32_t *a, int64_t n, int64_t i, int g){
  for(;;){
    int64_t l = 2*i+1, m = i;
    int32_t x;
    if( l<n && evLess(e, a[m], a[l], g) ) m = l;
    if( l+1<n && evLess(e, a[m], a[l+1], g) ) m = l+1;
    if( m==i ) return;
    x = a[i]; a[i] = a[m]; a[m] = x;
    i = m;
  }
}

/* Sort event indices a[0..n) by evLess(gapOrder), in place, no memory:
** quicksort (median of three, Hoare partition, the smaller side first),
** insertion sort below 17 elements, heapsort past depth 2*log2(n). */
static void sortEvIdx(Engine *e, int32_t *a, int64_t n, int g, int depth){
  int64_t i, j;
  int32_t x;
  while( n>16 ){
    int64_t mid = (n-1)/2;
    int32_t piv;
    if( depth--<=0 ){
      for(i=n/2-1; i>=0; i--) heapSiftDown(e, a, n, i, g);
      for(i=n-1; i>0; i--){ x = a[0]; a[0] = a[i]; a[i] = x; heapSiftDown(e, a, i, 0, g); }
      return;
    }
    if( evLess(e, a[mid], a[0], g) ){ x = a[mid]; a[mid] = a[0]; a[0] = x; }
    if( evLess(e, a[n-1], a[mid], g) ){
      x = a[mid]; a[mid] = a[n-1]; a[n-1] = x;
      if( evLess(e, a[mid], a[0], g) ){ x = a[mid]; a[mid] = a[0]; a[0] = x; }
    }
    piv = a[mid];
    i = -1; j = n;
    for(;;){
      do i++; while( evLess(e, a[i], piv, g) );
      do j--; while( evLess(e, piv, a[j], g) );
      if( i>=j ) break;
      x = a[i]; a[i] = a[j]; a[j] = x;
    }
    /* a[0..j] <= piv <= a[j+1..n) */
    if( j+1 < n-(j+1) ){
      sortEvIdx(e, a, j+1, g, depth);
      a += j+1; n -= j+1;
    }else{
      sortEvIdx(e, a+j+1, n-(j+1), g, depth);
      n = j+1;
    }
  }
  for(i=1; i<n; i++){
    x = a[i];
    for(j=i; j>0 && evLess(e, x, a[j-1], g); j--) a[j] = a[j-1];
    a[j] = x;
  }
}

/* Depth limit of sortEvIdx for n elements.  PROFSUM_SORT_HEAP_ONLY (the
** ASan build) makes it 0, so that the test suite runs the heapsort
** fallback, which ordinary inputs never reach. */
static int sortDepth(int64_t n){
  int d = 0;
#ifdef PROFSUM_SORT_HEAP_ONLY
  n = 0;
#endif
  while( n>1 ){ n >>= 1; d += 2; }
  return d;
}

/* Build e->aOrd (processing order: tracks in order of first appearance,
** each in (ts, -end, file order)) and compute exclusive times.  Events are
** grouped by a counting sort (stable); a track's slice is sorted in place
** only when it is not in order already (xprof writes each line in time
** order).  Memory: the order array (4 bytes per event) and a stack as deep
** as the deepest nesting. */
/* Track attributes from the metadata names (all read by now). */
static void engTrackFlags(Engine *e){
  int64_t i;
  for(i=0; i<e->nTrk; i++){
    STrack *t = &e->aTrk[i];
    if( !e->isXPlane ){
      /* an XPlane line's track has its own names (engReadXPlane) */
      HEnt *hp = hmGet(&e->procMap, t->pid, 0, 0, 0);
      HEnt *ht = hmGet(&e->threadMap, t->pid, t->tid, 0, 0);
      t->proc = hp ? (int32_t)hp->v1 : -1;
      t->thread = ht ? (int32_t)ht->v1 : -1;
    }
    if( t->proc>=0 ){
      const char *z = SP_STR(&e->pool, t->proc);
      t->isDevice = strncmp(z, "/device:", 8)==0;
      t->isHost = strncmp(z, "/host:", 6)==0;
    }
    if( t->thread>=0 ){
      const char *z = SP_STR(&e->pool, t->thread);
      t->isDevOp = strcmp(z, "XLA Ops")==0 || strcmp(z, "Async XLA Ops")==0
                || strncmp(z, "Stream #", 8)==0;
      t->isSteps = strcmp(z, "Steps")==0;
    }
  }
}

/* Grow the §2 sweep's stacks (event indices and children's sums) to nNew
** entries: SQLITE_OK, or SQLITE_NOMEM with both arrays still valid (the
** first perhaps already larger). */
static int growNestStack(int32_t **paStk, int64_t **paChild, int64_t nNew){
  int32_t *a1 = sqlite3_realloc64(*paStk, sizeof(int32_t)*(sqlite3_uint64)nNew);
  int64_t *a2;
  if( a1==0 ) return SQLITE_NOMEM;
  *paStk = a1;
  a2 = sqlite3_realloc64(*paChild, sizeof(int64_t)*(sqlite3_uint64)nNew);
  if( a2==0 ) return SQLITE_NOMEM;
  *paChild = a2;
  return SQLITE_OK;
}

/* The exclusive time as the reference's doubles give it (§2 in doubles:
** max(0, dur − the sum of its children's durs, added as they finish)) of
** the event at processing position pos (in aOrd), given dDur, its dur's
** double: kept in aXrVal for the device ops that had a child; any other's
** is dDur.  *pCur is the caller's cursor (start at 0): the positions must
** be asked in increasing order, as the walks in processing order do. */
static double exclRefAt(const Engine *e, int64_t pos, int64_t *pCur, double dDur){
  int64_t c = *pCur;
  while( c<e->nXr && e->aXrPos[c]<pos ) c++;
  *pCur = c;
  return (c<e->nXr && e->aXrPos[c]==pos) ? e->aXrVal[c] : dDur;
}

/* Grow the array *pa of elements of szElem bytes (capacity *pnAlloc) to
** hold nNeed elements: doubling, but not past nMax when that is a bound
** known in advance (nMax >= nNeed; 0: none), so that an array that
** reaches its bound holds no unused half.  SQLITE_OK or SQLITE_NOMEM (the
** array unchanged). */
static int growCapped(void **pa, int64_t *pnAlloc, int64_t nNeed, int64_t nMax, size_t szElem){
  int64_t nNew = *pnAlloc ? *pnAlloc*2 : 64;
  void *a;
  if( nNeed<=*pnAlloc ) return SQLITE_OK;
  if( nNew<nNeed ) nNew = nNeed;
  if( nNew>nMax && nMax>=nNeed ) nNew = nMax;
  a = sqlite3_realloc64(*pa, szElem*(sqlite3_uint64)nNew);
  if( a==0 ) return SQLITE_NOMEM;
  *pa = a;
  *pnAlloc = nNew;
  return SQLITE_OK;
}

static int engOrder(Engine *e){
  int64_t i, n = e->nEv, nStk = 0, nAllocStk = 0, t, nMaxTrk = 0, nDevOpEv = 0;
  int32_t *aStk = 0;        /* the nesting stack: per open event its position
                            ** in aOrd, or, once an event of a device-op track
                            ** has a child, -1 - its entry in aXrPos/aXrVal */
  int64_t *aPos;
  int devOp = 0;            /* the track being swept is a device-op track */
  int rc = SQLITE_OK;
  engTolerance(e);
  engTrackFlags(e);
  aPos = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(e->nTrk+1));
  e->aOrd = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(n ? n : 1));
  if( !aPos || !e->aOrd ){ sqlite3_free(aPos); return SQLITE_NOMEM; }
  profsumPrefault(e->aOrd, sizeof(int32_t)*(size_t)n);      /* written in full below */
  for(i=0; i<e->nTrk; i++) e->aTrk[i].nEv = 0;
  for(i=0; i<n; i++) e->aTrk[KEY(e, EV(e, i))->trk].nEv++;
  for(i=0, aPos[0]=0; i<e->nTrk; i++){
    e->aTrk[i].iFirst = aPos[i];
    aPos[i+1] = aPos[i] + e->aTrk[i].nEv;
    if( e->aTrk[i].nEv>nMaxTrk ) nMaxTrk = e->aTrk[i].nEv;
    if( e->aTrk[i].isDevice && e->aTrk[i].isDevOp ) nDevOpEv += e->aTrk[i].nEv;
  }
  for(i=0; i<n; i++) e->aOrd[aPos[KEY(e, EV(e, i))->trk]++] = (int32_t)i;
  sqlite3_free(aPos);
  for(t=0; t<e->nTrk; t++){
    STrack *tr = &e->aTrk[t];
    int32_t *o = e->aOrd + tr->iFirst;
    int64_t j;
    for(j=1; j<tr->nEv; j++){
      if( !evLess(e, o[j-1], o[j], 0) ) break;
    }
    if( j<tr->nEv ) sortEvIdx(e, o, tr->nEv, 0, sortDepth(tr->nEv));
  }
  /* §2 stack sweep, per track, in this order.  While an event is open, its
  ** record's excl holds the sum of its children's durs (exact), and its
  ** aXrVal entry (device ops) the sum of their durs' doubles, added as they
  ** finish: 4 bytes per level of nesting, 12 per device op with a child
  ** (the children's sums are no stacks beside it). */
#define STK_POS(s) ((s)>=0 ? (int64_t)(s) : (int64_t)e->aXrPos[-1-(int64_t)(s)])
#define STK_EV(lvl) (e->aOrd[STK_POS(aStk[lvl])])
#define FIN() do{ \
    int32_t s_ = aStk[--nStk]; \
    int32_t top_ = e->aOrd[STK_POS(s_)]; \
    SEv *x_ = EV(e, top_); \
    int64_t ex_ = x_->dur - x_->excl; \
    x_->excl = ex_>0 ? ex_ : 0; \
    if( nStk>0 ) EV(e, STK_EV(nStk-1))->excl += x_->dur; \
    if( devOp && (nStk>0 || s_<0) ){ \
      double d_ = evDurFloat(e, top_); \
      if( s_<0 ){ \
        double x2_ = d_ - e->aXrVal[-1-(int64_t)s_]; \
        e->aXrVal[-1-(int64_t)s_] = x2_>0 ? x2_ : 0.0; \
      } \
      /* the parent has its entry: this event was pushed on it */ \
      if( nStk>0 ) e->aXrVal[-1-(int64_t)aStk[nStk-1]] += d_; \
    } \
  }while(0)
  for(t=0; t<e->nTrk && rc==SQLITE_OK; t++){
    STrack *tr = &e->aTrk[t];
    int64_t j;
    devOp = tr->isDevice && tr->isDevOp;
    for(j=0; j<tr->nEv && rc==SQLITE_OK; j++){
      int64_t pos = tr->iFirst + j;
      int32_t k = e->aOrd[pos];
      while( nStk>0 && cmpTsEnd(e, k, STK_EV(nStk-1))>=0 ) FIN();
      while( nStk>0 && cmpEnd(e, k, STK_EV(nStk-1))>0 ) FIN();
      if( (rc = growCapped((void**)&aStk, &nAllocStk, nStk+1, nMaxTrk, sizeof(int32_t))) ) break;
      if( devOp && nStk>0 && aStk[nStk-1]>=0 ){
        /* the open event gets its first child (it is the previous
        ** position: entries come in increasing position) */
        if( e->nXr>=e->nAllocXr ){
          int64_t nA = e->nAllocXr;
          if( (rc = growCapped((void**)&e->aXrPos, &nA, e->nXr+1, nDevOpEv, sizeof(int32_t))) ) break;
          nA = e->nAllocXr;
          if( (rc = growCapped((void**)&e->aXrVal, &nA, e->nXr+1, nDevOpEv, sizeof(double))) ) break;
          e->nAllocXr = nA;
        }
        e->aXrPos[e->nXr] = aStk[nStk-1];
        e->aXrVal[e->nXr] = 0.0;
        aStk[nStk-1] = (int32_t)(-1 - e->nXr);
        e->nXr++;
      }
      EV(e, k)->excl = 0;
      aStk[nStk++] = (int32_t)pos;
    }
    while( nStk>0 ) FIN();
  }
#undef FIN
#undef STK_EV
#undef STK_POS
  sqlite3_free(aStk);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Output helpers                                                      */
/* ------------------------------------------------------------------ */

/* See summary_engine.h. */
double profsumPsToMicros(profsum_ps v){
  char z[64];
  int neg = v<0, i = 0, k;
  unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
  char digits[48];
  int nd = 0;
  do{ digits[nd++] = (char)('0' + (int)(u % 10)); u /= 10; }while( u );
  while( nd<7 ) digits[nd++] = '0';
  if( neg ) z[i++] = '-';
  for(k=nd-1; k>=6; k--) z[i++] = digits[k];
  z[i++] = '.';
  for(k=5; k>=0; k--) z[i++] = digits[k];
  z[i] = 0;
  return strtod(z, 0);
}

#define US(ps) ((double)(ps)/1e6)

/* Prepare "INSERT INTO <schema>.<zTable> VALUES(...)". */
static int engPrepare(Engine *e, sqlite3_stmt **pp, const char *zSql){
  char *z = sqlite3_mprintf(zSql, e->zSchema);
  int rc;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(e->db, z, -1, pp, 0);
  sqlite3_free(z);
  if( rc ) return engErr(e, rc, "%s", sqlite3_errmsg(e->db));
  return SQLITE_OK;
}

/* Step and reset an insert. */
static int engStep(Engine *e, sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  if( rc!=SQLITE_DONE ){
    rc = sqlite3_reset(p);
    return engErr(e, rc ? rc : SQLITE_ERROR, "%s", sqlite3_errmsg(e->db));
  }
  return sqlite3_reset(p);
}

/* One row of profsum_agg_fact: a name and its value (NULL when isNull). */
typedef struct EngFact { const char *zName; double v; int isNull; } EngFact;

/* Write n facts of the trace to profsum_agg_fact.  SQLITE_OK or an error
** (engErr's). */
static int engFacts(Engine *e, const EngFact *a, int n){
  sqlite3_stmt *p = 0;
  int k, rc = engPrepare(e, &p, "INSERT INTO \"%w\".profsum_agg_fact VALUES(?1,?2,?3)");
  for(k=0; rc==SQLITE_OK && k<n; k++){
    sqlite3_bind_int64(p, 1, e->traceId);
    sqlite3_bind_text(p, 2, a[k].zName, -1, SQLITE_STATIC);
    if( a[k].isNull ) sqlite3_bind_null(p, 3); else sqlite3_bind_double(p, 3, a[k].v);
    rc = engStep(e, p);
  }
  sqlite3_finalize(p);
  return rc;
}

static void bindStrId(Engine *e, sqlite3_stmt *p, int i, int32_t id){
  if( id<0 ) sqlite3_bind_null(p, i);
  else sqlite3_bind_text(p, i, SP_STR(&e->pool, id), SP_LEN(&e->pool, id), SQLITE_STATIC);
}

/* Append z[0..n) as a JSON string literal (UTF-8 kept, controls escaped). */
static void jsonAppendStr(sqlite3_str *p, const char *z, int64_t n){
  int64_t i;
  sqlite3_str_appendchar(p, 1, '"');
  for(i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    if( c=='"' || c=='\\' ){ sqlite3_str_appendchar(p, 1, '\\'); sqlite3_str_appendchar(p, 1, (char)c); }
    else if( c<0x20 ) sqlite3_str_appendf(p, "\\u%04x", c);
    else sqlite3_str_appendchar(p, 1, (char)c);
  }
  sqlite3_str_appendchar(p, 1, '"');
}

/* Most-common selection over counters: entries of m with k1 = (kind<<40 |
** owner) carry v1 = count, v2 = the processing position of the first event
** with that value (unique within a kind and owner); picks per owner the max
** count, ties → first seen (Counter.most_common).  counterAdd() adds n
** events whose first is at position `first`. */
#define CKEY(kind, owner) (((int64_t)(kind)<<40) | (int64_t)(owner))

static int counterAdd(HMap *m, int kind, int64_t owner, int64_t val, int64_t n, int64_t first){
  int isNew;
  HEnt *h = hmGet(m, CKEY(kind, owner), val, 1, &isNew);
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew || first<h->v2 ) h->v2 = first;
  h->v1 += n;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* The aggregates                                                      */
/* ------------------------------------------------------------------ */
typedef struct OpAgg {
  int64_t count, total, excl;
  double totalRef, exclRef;      /* total, excl as the reference adds them */
  double flopSum; int64_t flopN;
  int32_t shape, source, tfop;   /* most common values, -1 none */
  int64_t bestShape[2], bestSource[2], bestTf[2];   /* count, seq */
  int seen;
} OpAgg;

/* A step: its number, the sum of its events' durations as the reference
** adds them (doubles, in processing order) and their count. */
typedef struct StepAgg { int64_t step; double sum; int64_t n; } StepAgg;

static int cmpStep(const void *pa, const void *pb){
  const StepAgg *a = (const StepAgg*)pa, *b = (const StepAgg*)pb;
  return a->step<b->step ? -1 : (a->step>b->step);
}

/* Is the canonical name marker-like (§4.8)? */
static int isMarkerName(const char *z, int n){
  static const char *az[] = {"iota","constant","bitcast","get-tuple-element",
                             "parameter","tuple","after-all"};
  ProfsumSlice c = profsumCanonicalOp(z, n);
  int i;
  if( c.n<=0 ) return 0;
  /* lower-cased (ASCII) comparisons, at any length: a long name can still
  ** start with copy-start / copy-done */
  for(i=0; i<7; i++){
    if( (int)strlen(az[i])==c.n && sqlite3_strnicmp(c.z, az[i], c.n)==0 ) return 1;
  }
  return (c.n>=10 && sqlite3_strnicmp(c.z, "copy-start", 10)==0)
      || (c.n>=9 && sqlite3_strnicmp(c.z, "copy-done", 9)==0);
}


#define CAT_COMPUTE 0
#define CAT_COMM    1
#define CAT_HOST    2
#define CAT_STALL   3
#define CAT_OTHER   4

/* Parts of an event for regions and contexts, cached per (name, tf_op). */
typedef struct PartsInfo {
  int32_t *aPath;      /* aPath[d-1]: node (RegionCtx.aNode) of the path of depth d */
  int64_t *aRegIx;     /* engGapsAndRegions: aRegIx[d-1] its region of depth d
                       ** (set at the first event of these parts), or 0 */
  int nPart;
  int fallback;
  int32_t path4;       /* string id: first <= 4 parts joined */
} PartsInfo;

/* A region path (§4.9) as a node of a trie: its text is its parent's
** text, "=>", and its atom.  The atoms of a path are its text split on
** every "=>" (a part that has "=>" in it, which a tf_op piece can, adds
** several), so two paths have the same node exactly when they have the same
** text, and a node's parent is the text before its last "=>" (what the
** pruning calls its parent).  A path of n parts costs one node per new atom
** instead of its text: the texts of all the prefixes of a deep tf_op would
** be quadratic in its length.  The text of a region is put together only
** when its row is written (regionText). */
typedef struct RNode {
  int32_t parent;       /* -1: a root */
  int32_t atom;         /* string id */
  int32_t reg;          /* engGapsAndRegions: its region (index), or -1 */
} RNode;

/* What the regions and gap contexts share: the parts per (name, tf_op) and
** the trie of the paths. */
typedef struct RegionCtx {
  HMap partsCache;      /* (name, tf_op) → index in aInfo */
  PartsInfo *aInfo; int64_t nInfo, nAllocInfo;
  HMap nodeMap;         /* (parent node, atom) → node */
  RNode *aNode; int64_t nNode, nAllocNode;
} RegionCtx;

typedef struct RegAgg {
  int32_t path;         /* its node */
  int depth; int64_t count, incl, excl; int removed;
  double inclRef, exclRef;       /* incl, excl as the reference adds them */
} RegAgg;

/* The node of atom string id `atom` under node `parent` (-1: a root), made
** when new.  The node's index, or -1 when out of memory. */
static int32_t regionNode(RegionCtx *x, int32_t parent, int32_t atom){
  int isNew;
  HEnt *h;
  if( x->nNode>=0x7fffffff ) return -1;
  if( growCapped((void**)&x->aNode, &x->nAllocNode, x->nNode+1, 0, sizeof(RNode)) ) return -1;
  h = hmGet(&x->nodeMap, parent, atom, 1, &isNew);
  if( h==0 ) return -1;
  if( isNew ){
    x->aNode[x->nNode].parent = parent;
    x->aNode[x->nNode].atom = atom;
    x->aNode[x->nNode].reg = -1;
    h->v1 = x->nNode++;
  }
  return (int32_t)h->v1;
}

/* The text of node `node` (its atoms joined by "=>") into *pzBuf (grown as
** needed, *pnBuf its size; the caller frees it); its length in *pn.
** SQLITE_OK, SQLITE_NOMEM, or SQLITE_TOOBIG past 2^31 bytes. */
static int regionText(Engine *e, RegionCtx *x, int32_t node, char **pzBuf, int64_t *pnBuf,
                      int64_t *pn){
  int64_t n = 0, m;
  int32_t k;
  for(k=node; k>=0; k=x->aNode[k].parent){
    n += SP_LEN(&e->pool, x->aNode[k].atom) + (x->aNode[k].parent>=0 ? 2 : 0);
  }
  if( n>0x7ffffffe ) return SQLITE_TOOBIG;
  if( n+1>*pnBuf ){
    char *z = sqlite3_realloc64(*pzBuf, (sqlite3_uint64)(n+1));
    if( z==0 ) return SQLITE_NOMEM;
    *pzBuf = z;
    *pnBuf = n+1;
  }
  m = n;
  (*pzBuf)[m] = 0;
  for(k=node; k>=0; k=x->aNode[k].parent){
    int32_t a = x->aNode[k].atom;
    m -= SP_LEN(&e->pool, a);
    memcpy(*pzBuf + m, SP_STR(&e->pool, a), (size_t)SP_LEN(&e->pool, a));
    if( x->aNode[k].parent>=0 ){ (*pzBuf)[--m] = '>'; (*pzBuf)[--m] = '='; }
  }
  *pn = n;
  return SQLITE_OK;
}

static void regionCtxFree(RegionCtx *x){
  int64_t i;
  for(i=0; i<x->nInfo; i++){ sqlite3_free(x->aInfo[i].aPath); sqlite3_free(x->aInfo[i].aRegIx); }
  sqlite3_free(x->aInfo);
  sqlite3_free(x->aNode);
  hmFree(&x->partsCache);
  hmFree(&x->nodeMap);
  memset(x, 0, sizeof(*x));
}

/* Get (computing once) the parts of (name, tfop): the nodes of their
** paths of every depth and the string of the first <= 4 joined.  The parts
** point into the pool's texts of name and tf_op, which stay where they are
** while the atoms are interned (SPool). */
static int partsOf(Engine *e, RegionCtx *x, int32_t name, int32_t tfop, PartsInfo **ppOut){
  int isNew;
  HEnt *h = hmGet(&x->partsCache, name, tfop, 1, &isNew);
  PartsInfo *pi;
  if( h==0 ) return SQLITE_NOMEM;
  if( isNew ){
    ProfsumParts parts;
    int rc, d, fb = 0, n;
    int32_t node = -1, id;
    char *z;
    if( growCapped((void**)&x->aInfo, &x->nAllocInfo, x->nInfo+1, 0, sizeof(PartsInfo)) ){
      return SQLITE_NOMEM;
    }
    pi = &x->aInfo[x->nInfo];
    memset(pi, 0, sizeof(*pi));
    h->v1 = x->nInfo++;
    profsumPartsInit(&parts);
    rc = profsumHierarchyParts(SP_STR(&e->pool, name), SP_LEN(&e->pool, name),
                               tfop>=0 ? SP_STR(&e->pool, tfop) : 0,
                               tfop>=0 ? SP_LEN(&e->pool, tfop) : 0, &parts, &fb);
    if( rc ) return rc;
    pi->nPart = parts.nPart;
    pi->fallback = fb;
    pi->path4 = -1;
    pi->aPath = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(parts.nPart+1));
    if( pi->aPath==0 ){ profsumPartsClear(&parts); return SQLITE_NOMEM; }
    for(d=1; d<=parts.nPart; d++){
      /* the part's atoms: split on "=>" */
      const char *zP = parts.aPart[d-1].z;
      int nP = parts.aPart[d-1].n, a = 0, k;
      for(;;){
        int end;
        for(k=a; k+1<nP && !(zP[k]=='=' && zP[k+1]=='>'); k++){}
        end = k+1<nP ? k : nP;
        id = spIntern(&e->pool, zP+a, end-a);
        if( id<0 || (node = regionNode(x, node, id))<0 ){
          profsumPartsClear(&parts);
          return SQLITE_NOMEM;
        }
        if( end==nP ) break;
        a = end+2;
      }
      pi->aPath[d-1] = node;
    }
    if( parts.nPart==0 ){
      id = spIntern(&e->pool, "unknown", 7);
    }else{
      z = profsumPartsJoin(&parts, 4, &n);
      id = z ? spIntern(&e->pool, z, n) : -1;
      sqlite3_free(z);
    }
    profsumPartsClear(&parts);
    if( id<0 ) return SQLITE_NOMEM;
    pi->path4 = id;
  }
  *ppOut = &x->aInfo[h->v1];
  return SQLITE_OK;
}

/* Compare two pooled strings bytewise. */
static int spCmp(Engine *e, int32_t a, int32_t b){
  int na = SP_LEN(&e->pool, a), nb = SP_LEN(&e->pool, b);
  int c = memcmp(SP_STR(&e->pool, a), SP_STR(&e->pool, b), (size_t)(na<nb ? na : nb));
  return c ? c : (na - nb);
}

/* Reorder a[0..n), a track's events in nesting order (ts asc, end desc,
** file order), into the gap order (ts asc, end asc, file order): within
** each run of equal start, the runs of equal end are reversed, each kept
** in file order.  Linear, in place. */
static void gapOrder(Engine *e, int32_t *a, int64_t n){
  int64_t i = 0, j, k, m;
  int32_t x;
  while( i<n ){
    for(j=i+1; j<n && cmpTs(e, a[j], a[i])==0; j++){}
    if( j-i>1 ){
      /* reverse the whole run: ends ascend, equal ends now in reverse file order */
      for(k=i, m=j-1; k<m; k++, m--){ x = a[k]; a[k] = a[m]; a[m] = x; }
      for(k=i; k<j; k=m){
        int64_t p, q;
        for(m=k+1; m<j && cmpEnd(e, a[m], a[k])==0; m++){}
        for(p=k, q=m-1; p<q; p++, q--){ x = a[p]; a[p] = a[q]; a[q] = x; }
      }
    }
    i = j;
  }
}

/* Add the double x to the double kept (as bits) in *pSlot. */
static void addBits(int64_t *pSlot, double x){
  double v;
  memcpy(&v, pSlot, sizeof(double));
  v += x;
  memcpy(pSlot, &v, sizeof(double));
}

/* The double kept (as bits) in slot v (0 bits: 0.0). */
static double bitsDouble(int64_t v){
  double d;
  memcpy(&d, &v, sizeof(double));
  return d;
}

/* Account one gap of `gap` µs (the reference's double) before an event of
** key q to its context (§4.10): the op's preferred path (or its 4-part
** path), copies under "copy(...)".  ctxMap: v1 the count, v2 the sum of
** the gaps as the reference adds them (bits of a double). */
static int gapContext(Engine *e, RegionCtx *x, HMap *pref, HMap *pathMemo, HMap *ctxMap,
                      char **pzTmp, const EvKey *q, double gap){
  PartsInfo *pi;
  int32_t path;
  HEnt *h, *hm;
  ProfsumSlice c;
  int rc, isNew;
  /* the context path is a function of (name, tf_op): worked out once */
  hm = hmGet(pathMemo, q->name, q->tfop, 1, &isNew);
  if( hm==0 ) return SQLITE_NOMEM;
  if( !isNew ){
    path = (int32_t)hm->v1;
    goto account;
  }
  rc = partsOf(e, x, q->name, q->tfop, &pi);
  if( rc ) return rc;
  h = pi->fallback ? hmGet(pref, q->name, 0, 0, 0) : 0;
  path = h ? (int32_t)h->v1 : pi->path4;
  c = profsumCanonicalOp(SP_STR(&e->pool, q->name), SP_LEN(&e->pool, q->name));
  if( c.n>=4 && sqlite3_strnicmp(c.z, "copy", 4)==0 ){
    const char *z = SP_STR(&e->pool, path);
    int n = SP_LEN(&e->pool, path);
    while( n>0 && (*z==' '||*z=='\t'||*z=='\n'||*z=='\r') ){ z++; n--; }
    while( n>0 && (z[n-1]==' '||z[n-1]=='\t'||z[n-1]=='\n'||z[n-1]=='\r') ) n--;
    if( n==0 || (n==4 && sqlite3_strnicmp(z, "copy", 4)==0) ){
      path = spIntern(&e->pool, "copy", 4);
    }else if( !(n>=5 && memcmp(z, "copy(", 5)==0) ){
      sqlite3_free(*pzTmp);
      *pzTmp = sqlite3_mprintf("copy(%.*s)", n, z);
      if( *pzTmp==0 ) return SQLITE_NOMEM;
      path = spIntern(&e->pool, *pzTmp, (int64_t)strlen(*pzTmp));
    }else{
      path = spIntern(&e->pool, z, n);
    }
    if( path<0 ) return SQLITE_NOMEM;
  }
  hm->v1 = path;          /* pathMemo was not touched since the lookup */
account:
  h = hmGet(ctxMap, q->name, path, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1++;
  addBits(&h->v2, gap);
  return SQLITE_OK;
}

/* Gaps (§4.8), regions (§4.9) and gap contexts (§4.10). */
#define GAPROW 6          /* slots of a gap row (aGapAgg) */
static int engGapsAndRegions(Engine *e){
  int rc = SQLITE_OK;
  int64_t i, j, nReg = 0, nAllocReg = 0, nAllocGapRow = 0;
  RegionCtx rx;
  HMap pref = {0,0,0}, gapMap = {0,0,0};
  HMap markers = {0,0,0}, ctxMap = {0,0,0}, pathMemo = {0,0,0};
  unsigned char *aMark = 0;   /* per name id: 0 unknown, 1 not a marker, 2 marker */
  RegAgg *aReg = 0;
  int32_t *aG = 0;          /* one device-op track in gap order */
  int64_t *aGapAgg = 0;     /* per gap row, GAPROW slots: count, total, max
                            ** (bits of doubles, µs), payloadName, bestMarker,
                            ** bestCount */
  int32_t *aKeyPi = 0;      /* per event key: its index in aInfo, or -1 */
  int64_t hintRef = 0;      /* floatEntryNear's hint for the device ops */
  int64_t curXr = 0;        /* exclRefAt's cursor */
  int64_t nGapRow = 0;
  sqlite3_stmt *pIns = 0;
  char *zTmp = 0;
  char *zPath = 0; int64_t nPathBuf = 0;   /* a region's text (regionText) */

  memset(&rx, 0, sizeof(rx));
  /* Regions and preferred paths, in processing order.  The parts of an
  ** event are a function of its key (name, tf_op): looked up once per key,
  ** and their regions once per parts (at their first event, which creates
  ** the regions in the order of first appearance). */
  aKeyPi = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(e->nKey+1));
  if( aKeyPi==0 ){ rc = SQLITE_NOMEM; goto done; }
  for(i=0; i<e->nKey; i++) aKeyPi[i] = -1;
  for(j=0; j<e->nEv; j++){
    SEv *r = EV(e, e->aOrd[j]);
    const EvKey *q = KEY(e, r);
    STrack *t = &e->aTrk[q->trk];
    PartsInfo *pi;
    int d;
    double xRef;
    if( !(t->isDevice && t->isDevOp) ) continue;
    xRef = exclRefAt(e, j, &curXr, evDurFloatNear(e, e->aOrd[j], &hintRef));
    if( aKeyPi[r->key]>=0 ){
      pi = &rx.aInfo[aKeyPi[r->key]];
    }else{
      if( (rc = partsOf(e, &rx, q->name, q->tfop, &pi)) ) goto done;
      aKeyPi[r->key] = (int32_t)(pi - rx.aInfo);
    }
    if( pi->aRegIx==0 && pi->nPart>0 ){
      pi->aRegIx = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)pi->nPart);
      if( pi->aRegIx==0 ){ rc = SQLITE_NOMEM; goto done; }
      for(d=1; d<=pi->nPart; d++){
        RNode *nd = &rx.aNode[pi->aPath[d-1]];    /* regions are made by path */
        if( nd->reg<0 ){
          if( nReg>=0x7fffffff ){ rc = SQLITE_NOMEM; goto done; }
          if( (rc = growCapped((void**)&aReg, &nAllocReg, nReg+1, 0, sizeof(RegAgg))) ) goto done;
          memset(&aReg[nReg], 0, sizeof(RegAgg));
          aReg[nReg].path = pi->aPath[d-1];
          aReg[nReg].depth = d;
          nd->reg = (int32_t)nReg++;
        }
        pi->aRegIx[d-1] = nd->reg;
      }
    }
    for(d=1; d<=pi->nPart; d++){
      RegAgg *g = &aReg[pi->aRegIx[d-1]];
      g->count++;
      g->incl += r->excl;
      g->inclRef += xRef;
      if( d==pi->nPart ){ g->excl += r->excl; g->exclRef += xRef; }
    }
    if( q->tfop>=0 && !pi->fallback && pi->path4>=0 ){
      HEnt *h = hmGet(&pref, q->name, pi->path4, 1, 0);
      if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
      h->v1++;
    }
  }
  /* Pruning of unary paths. */
  {
    int64_t *aChildN = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(2*nReg+1));
    int64_t *aChild1 = aChildN ? aChildN + nReg : 0;
    if( aChildN==0 ){ rc = SQLITE_NOMEM; goto done; }
    memset(aChildN, 0, sizeof(int64_t)*(size_t)(2*nReg+1));
    for(i=0; i<nReg; i++){
      /* the parent: the path of the text before the last "=>" */
      int32_t par = rx.aNode[aReg[i].path].parent;
      int32_t pr = par>=0 ? rx.aNode[par].reg : -1;
      if( pr>=0 ){ aChildN[pr]++; aChild1[pr] = i; }
    }
    for(i=0; i<nReg; i++){
      if( aReg[i].depth>1 && aChildN[i]==1 ){
        /* "close" on the reference's sums: a difference of exactly the
        ** 1e-6 µs threshold in exact times can be an ulp over it there */
        double a = aReg[i].inclRef, b = aReg[aChild1[i]].inclRef;
        double m = (a<0?-a:a) > (b<0?-b:b) ? (a<0?-a:a) : (b<0?-b:b);
        double tol = 1e-9*m > 1e-6 ? 1e-9*m : 1e-6;
        double diff = a-b; if( diff<0 ) diff = -diff;
        if( diff<=tol ) aReg[i].removed = 1;
      }
    }
    sqlite3_free(aChildN);
  }
  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_region VALUES(?1,?2,?3,?4,?5,?6,?7,?8)")) ) goto done;
  for(i=0; i<nReg; i++){
    int64_t nPath;
    if( aReg[i].removed ) continue;
    if( (rc = regionText(e, &rx, aReg[i].path, &zPath, &nPathBuf, &nPath)) ){
      if( rc==SQLITE_TOOBIG ){
        engErr(e, rc, "a hierarchical region's path is longer than 2^31 bytes (depth %d)",
               aReg[i].depth);
      }
      goto done;
    }
    sqlite3_bind_int64(pIns, 1, e->traceId);
    sqlite3_bind_text64(pIns, 2, zPath, (sqlite3_uint64)nPath, SQLITE_STATIC, SQLITE_UTF8);
    sqlite3_bind_int(pIns, 3, aReg[i].depth);
    sqlite3_bind_int64(pIns, 4, aReg[i].count);
    sqlite3_bind_double(pIns, 5, US(aReg[i].incl));
    sqlite3_bind_double(pIns, 6, US(aReg[i].excl));
    sqlite3_bind_double(pIns, 7, aReg[i].inclRef);
    sqlite3_bind_double(pIns, 8, aReg[i].exclRef);
    if( (rc = engStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;

  /* Preferred path per op name: most frequent, ties → smallest path. */
  {
    HMap best = {0,0,0};
    for(i=0; i<pref.nSlot; i++){
      HEnt *h = &pref.a[i], *b;
      int isNew;
      if( !h->used ) continue;
      b = hmGet(&best, h->k1, 0, 1, &isNew);
      if( b==0 ){ hmFree(&best); rc = SQLITE_NOMEM; goto done; }
      if( isNew || h->v1>b->v2 || (h->v1==b->v2 && spCmp(e, (int32_t)h->k2, (int32_t)b->v1)<0) ){
        b->v1 = h->k2; b->v2 = h->v1;
      }
    }
    hmFree(&pref);
    pref = best;
  }
  /* Gaps per device-op track, each track's slice put in gap order (it is
  ** in nesting order: only runs of equal start differ, by end). */
  {
    int64_t nMax = 1;
    for(i=0; i<e->nTrk; i++) if( e->aTrk[i].nEv>nMax ) nMax = e->aTrk[i].nEv;
    aG = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nMax);   /* one track at a time */
  }
  /* event names have the ids below pool.n now (contexts add strings later) */
  aMark = sqlite3_malloc64((sqlite3_uint64)(e->pool.n ? e->pool.n : 1));
  if( aG==0 || aMark==0 ){ rc = SQLITE_NOMEM; goto done; }
  memset(aMark, 0, (size_t)e->pool.n);
#define MARKER(id) (aMark[id] ? aMark[id]==2 \
    : (aMark[id] = (unsigned char)(1 + isMarkerName(SP_STR(&e->pool, id), SP_LEN(&e->pool, id))))==2)
  for(i=0; i<e->nTrk; i++){
    STrack *t = &e->aTrk[i];
    int64_t n = t->nEv;
    int32_t iPrev;        /* the event with the largest end so far (doubles) */
    if( !(t->isDevice && t->isDevOp) || n==0 ) continue;
    memcpy(aG, e->aOrd + t->iFirst, sizeof(int32_t)*(size_t)n);
    gapOrder(e, aG, n);
    iPrev = aG[0];
    for(j=1; j<n; j++){
      const SEv *E = EV(e, aG[j]);
      int32_t eName = KEY(e, E)->name;
      if( cmpTsEnd(e, aG[j], iPrev)>0 ){
        /* the gap as the reference has it: its doubles' E.ts − prev_end
        ** (positive: the doubles decided there is a gap).  Not exact
        ** picoseconds: the totals order the rows, and the reference's
        ** rounding breaks ties that exact sums keep (docs/summary.md) */
        int64_t c;
        int32_t payload = aG[j], pName;
        int isNew;
        double gap, fTs, fEnd, x;
        HEnt *h;
        evFloat(e, aG[j], &fTs, &x);
        evFloat(e, iPrev, &x, &fEnd);
        gap = fTs - fEnd;
        if( MARKER(eName) ){
          int32_t iChain = aG[j];     /* largest end of the chain so far */
          for(c=j+1; c<n && c<=j+8; c++){
            const SEv *C = EV(e, aG[c]);
            int32_t cName = KEY(e, C)->name;
            if( cmpTsEnd(e, aG[c], iChain)>0 ) break;
            if( cmpEnd(e, aG[c], iChain)>0 ) iChain = aG[c];
            if( MARKER(cName) ) continue;
            payload = aG[c];
            break;
          }
        }
        pName = KEY(e, EV(e, payload))->name;
        h = hmGet(&gapMap, pName, 0, 1, &isNew);
        if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
        if( isNew ){
          if( (rc = growCapped((void**)&aGapAgg, &nAllocGapRow, nGapRow+1, 0, sizeof(int64_t)*GAPROW)) ) goto done;
          memset(&aGapAgg[GAPROW*nGapRow], 0, sizeof(int64_t)*GAPROW);
          aGapAgg[GAPROW*nGapRow+3] = pName;
          aGapAgg[GAPROW*nGapRow+4] = -1;
          h->v1 = nGapRow++;
        }
        {
          int64_t *g = &aGapAgg[GAPROW*h->v1];
          g[0]++;
          addBits(&g[1], gap);                 /* in the reference's order */
          if( gap>bitsDouble(g[2]) ) memcpy(&g[2], &gap, sizeof(double));
        }
        h = hmGet(&markers, pName, eName, 1, 0);
        if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
        h->v1++;
        if( (rc = gapContext(e, &rx, &pref, &pathMemo, &ctxMap,
                             &zTmp, KEY(e, EV(e, payload)), gap)) ) goto done;
      }
      if( cmpEnd(e, aG[j], iPrev)>0 ) iPrev = aG[j];
    }
  }
  /* Marker per payload: most frequent, ties → smallest name. */
  for(i=0; i<markers.nSlot; i++){
    HEnt *h = &markers.a[i];
    HEnt *g;
    int64_t *row;
    if( !h->used ) continue;
    g = hmGet(&gapMap, h->k1, 0, 0, 0);
    row = &aGapAgg[GAPROW*g->v1];
    if( row[4]<0 || h->v1>row[5] || (h->v1==row[5] && spCmp(e, (int32_t)h->k2, (int32_t)row[4])<0) ){
      row[4] = h->k2; row[5] = h->v1;
    }
  }
  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_gap VALUES(?1,?2,?3,?4,?5,?6)")) ) goto done;
  for(i=0; i<nGapRow; i++){
    int64_t *g = &aGapAgg[GAPROW*i];
    sqlite3_bind_int64(pIns, 1, e->traceId);
    bindStrId(e, pIns, 2, (int32_t)g[3]);
    bindStrId(e, pIns, 3, (int32_t)g[4]);
    sqlite3_bind_int64(pIns, 4, g[0]);
    sqlite3_bind_double(pIns, 5, bitsDouble(g[1]));
    sqlite3_bind_double(pIns, 6, bitsDouble(g[2]));
    if( (rc = engStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;

  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_gap_context VALUES(?1,?2,?3,?4,?5)")) ) goto done;
  for(i=0; i<ctxMap.nSlot; i++){
    HEnt *h = &ctxMap.a[i];
    if( !h->used ) continue;
    sqlite3_bind_int64(pIns, 1, e->traceId);
    bindStrId(e, pIns, 2, (int32_t)h->k1);
    bindStrId(e, pIns, 3, (int32_t)h->k2);
    sqlite3_bind_int64(pIns, 4, h->v1);
    sqlite3_bind_double(pIns, 5, bitsDouble(h->v2));
    if( (rc = engStep(e, pIns)) ) goto done;
  }
done:
  sqlite3_finalize(pIns);
  regionCtxFree(&rx);
  sqlite3_free(zPath);
  sqlite3_free(aKeyPi);
  sqlite3_free(aReg);
#undef MARKER
#undef GAPROW
  sqlite3_free(aG);
  sqlite3_free(aMark);
  hmFree(&pathMemo);
  sqlite3_free(aGapAgg);
  sqlite3_free(zTmp);
  hmFree(&pref); hmFree(&gapMap);
  hmFree(&markers); hmFree(&ctxMap);
  return rc;
}

/* Case-insensitive substring test of z[0..n) for lit (lower-case ASCII). */
static int hasCi(const char *z, int n, const char *lit){
  int m = (int)strlen(lit), i, k;
  for(i=0; i+m<=n; i++){
    for(k=0; k<m; k++){
      char c = z[i+k];
      if( c>='A' && c<='Z' ) c = (char)(c+32);
      if( c!=lit[k] ) break;
    }
    if( k==m ) return 1;
  }
  return 0;
}

/* a.?to.?b, case-insensitive (the KPI transfer pattern). */
static int hasToPattern(const char *z, int n, const char *a, const char *b){
  int na = (int)strlen(a), nb = (int)strlen(b), i, gap1, gap2;
  for(i=0; i+na<=n; i++){
    if( sqlite3_strnicmp(z+i, a, na)!=0 ) continue;
    for(gap1=0; gap1<=1; gap1++){
      int j = i+na+gap1;
      if( j+2>n || sqlite3_strnicmp(z+j, "to", 2)!=0 ) continue;
      for(gap2=0; gap2<=1; gap2++){
        int k = j+2+gap2;
        if( k+nb<=n && sqlite3_strnicmp(z+k, b, nb)==0 ) return 1;
      }
    }
  }
  return 0;
}

static int isTransferName(const char *z, int n){
  return hasCi(z, n, "memcpy") || hasCi(z, n, "h2d") || hasCi(z, n, "d2h")
      || hasCi(z, n, "infeed") || hasCi(z, n, "outfeed") || hasCi(z, n, "transfer")
      || hasToPattern(z, n, "host", "device") || hasToPattern(z, n, "device", "host");
}

#define SMALL_OP_PS ((int64_t)100000000)   /* 0.1 ms */

/* The device-op events of a selection of tracks (one device's, or all
** devices'), visited through the per-track slices of aOrd: aTk[0..nTk)
** are the tracks' indices, so that a device's walk costs its own tracks,
** not every track of the trace. */
typedef struct DevIter { Engine *e; const int32_t *aTk; int64_t nTk; } DevIter;

/* Call x(pArg, r) for every device-op event of the selection. */
static void devEach(DevIter *d, void (*x)(void*, const SEv*), void *pArg){
  int64_t t, k;
  for(t=0; t<d->nTk; t++){
    STrack *tr = &d->e->aTrk[d->aTk[t]];
    for(k=0; k<tr->nEv; k++) x(pArg, EV(d->e, d->e->aOrd[tr->iFirst+k]));
  }
}

/* Radix selection: the k-th smallest duration (0-based) of a selection
** without copying it: one pass over the events per 12-bit digit, from the
** highest digit the selection's largest duration uses (durations are > 0);
** the 4096 counters (32 KiB, caller's) stay in the first-level cache. */
#define RADIX_BITS 12
#define RADIX_N    (1<<RADIX_BITS)
typedef struct Radix { uint64_t prefix, mask; int shift; int64_t *aCnt; } Radix;
static void radixCount(void *pArg, const SEv *r){
  Radix *x = (Radix*)pArg;
  uint64_t v = (uint64_t)r->dur;
  if( (v & x->mask)==x->prefix ) x->aCnt[(v>>x->shift) & (RADIX_N-1)]++;
}
static void kthDur(DevIter *d, int64_t k, int64_t maxDur, int64_t *aCnt, int64_t *pOut){
  Radix x;
  int pass, nPass = 1;
  while( nPass*RADIX_BITS<64 && ((uint64_t)maxDur>>(nPass*RADIX_BITS))!=0 ) nPass++;
  x.aCnt = aCnt;
  x.prefix = 0; x.mask = 0;
  for(pass=nPass-1; pass>=0; pass--){
    int64_t b, acc = 0;
    x.shift = pass*RADIX_BITS;
    memset(x.aCnt, 0, sizeof(int64_t)*RADIX_N);
    devEach(d, radixCount, &x);
    for(b=0; b<RADIX_N-1; b++){
      if( acc + x.aCnt[b] > k ) break;
      acc += x.aCnt[b];
    }
    k -= acc;
    x.prefix |= (uint64_t)b << x.shift;
    x.mask |= (uint64_t)(RADIX_N-1) << x.shift;
  }
  *pOut = (int64_t)x.prefix;
}

/* Median (linear interpolation at 0.5) of the n durations of a selection
** whose largest duration is maxDur, µs; aCnt: RADIX_N counters. */
static void medianDur(DevIter *d, int64_t n, int64_t maxDur, int64_t *aCnt, double *pOut){
  int64_t a, b;
  if( n==0 ){ *pOut = 0.0; return; }
  kthDur(d, (n-1)/2, maxDur, aCnt, &a);
  if( n%2 ){ *pOut = US(a); return; }
  kthDur(d, n/2, maxDur, aCnt, &b);
  *pOut = US(a)*0.5 + US(b)*0.5;
}

/* Busy union and span of one device's ops (its tracks aTk[0..nTk), in
** track order): a k-way merge of the tracks' slices (each already in ts
** order) by a binary heap on (ts, position in aTk), no copy; the events
** come in the order a scan of the heads for the smallest (ts, position)
** would give them.  SQLITE_OK or SQLITE_NOMEM (then nothing is set). */
static int unionSpan(Engine *e, const int32_t *aTk, int64_t nTk, int64_t *pBusy, int64_t *pSpan){
  int64_t nH = 0, k, *aPos, *aHeap, *aTs;
  int64_t curLo = 0, curHi = 0, lo = 0, hi = 0, busy = 0;
  int started = 0;
  aPos = sqlite3_malloc64(sizeof(int64_t)*3*(sqlite3_uint64)(nTk+1));
  if( aPos==0 ) return SQLITE_NOMEM;
  aHeap = aPos + nTk + 1;
  aTs = aHeap + nTk + 1;     /* the ts of the head of cursor k */
#define USP_HEAD(k) EV(e, e->aOrd[e->aTrk[aTk[k]].iFirst + aPos[k]])
#define USP_LESS(a, b) (aTs[a]<aTs[b] || (aTs[a]==aTs[b] && (a)<(b)))
  for(k=0; k<nTk; k++){
    aPos[k] = 0;
    if( e->aTrk[aTk[k]].nEv>0 ){
      int64_t c = nH++;
      aTs[k] = USP_HEAD(k)->ts;
      aHeap[c] = k;
      while( c>0 && USP_LESS(aHeap[c], aHeap[(c-1)/2]) ){
        int64_t x = aHeap[c]; aHeap[c] = aHeap[(c-1)/2]; aHeap[(c-1)/2] = x; c = (c-1)/2;
      }
    }
  }
  while( nH>0 ){
    int64_t best = aHeap[0], c = 0;
    SEv *r = USP_HEAD(best);
    if( ++aPos[best] < e->aTrk[aTk[best]].nEv ) aTs[best] = USP_HEAD(best)->ts;
    else aHeap[0] = aHeap[--nH];
    for(;;){
      int64_t l = 2*c+1, rr = 2*c+2, m = c, x;
      if( l<nH && USP_LESS(aHeap[l], aHeap[m]) ) m = l;
      if( rr<nH && USP_LESS(aHeap[rr], aHeap[m]) ) m = rr;
      if( m==c ) break;
      x = aHeap[c]; aHeap[c] = aHeap[m]; aHeap[m] = x; c = m;
    }
    if( !started ){ curLo = lo = r->ts; curHi = hi = r->ts + r->dur; started = 1; continue; }
    if( r->ts>curHi ){ busy += curHi-curLo; curLo = r->ts; curHi = r->ts + r->dur; }
    else if( r->ts+r->dur>curHi ) curHi = r->ts + r->dur;
    if( r->ts+r->dur>hi ) hi = r->ts + r->dur;
  }
#undef USP_HEAD
#undef USP_LESS
  if( started ) busy += curHi-curLo;
  sqlite3_free(aPos);
  *pBusy = busy;
  *pSpan = hi-lo;
  return SQLITE_OK;
}

/* Count events and small events of a selection. */
typedef struct CountSmall { int64_t n, nSmall, max; } CountSmall;
static void countSmall(void *pArg, const SEv *r){
  CountSmall *c = (CountSmall*)pArg;
  c->n++;
  if( r->dur<SMALL_OP_PS ) c->nSmall++;
  if( r->dur>c->max ) c->max = r->dur;
}

/* Inputs of the KPIs: per device union/span/median, trace facts.  Needs no
** per-event memory: selections are walked through the track slices. */
static int engKpis(Engine *e){
  int rc = SQLITE_OK;
  int64_t i, j, compile = 0, transfer = 0, busyAll = 0;
  sqlite3_stmt *pIns = 0;
  HMap devOf = {0,0,0};      /* proc name id → list index */
  int32_t *aDev = 0; int64_t nDev = 0;
  int32_t *aDevTk = 0;        /* the device-op tracks grouped by device (in
                              ** device order, each device's in track order) */
  int64_t *aDevFirst = 0;     /* device j's are aDevTk[aDevFirst[j]..aDevFirst[j+1]) */
  int64_t nDevTk = 0;
  unsigned char *aFlag = 0;
  DevIter all;
  CountSmall cAll = {0,0,0};
  int64_t *aCnt = 0;          /* radix counters of the medians */
  double medAll = 0.0;
  aDev = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(e->nTrk+1)*2);
  aDevFirst = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(e->nTrk+2));
  aFlag = sqlite3_malloc64((sqlite3_uint64)(e->pool.n+1));
  aCnt = sqlite3_malloc64(sizeof(int64_t)*RADIX_N);
  if( !aDev || !aDevFirst || !aFlag || !aCnt ){ rc = SQLITE_NOMEM; goto done; }
  aDevTk = aDev + e->nTrk + 1;
  memset(aFlag, 0, (size_t)e->pool.n+1);
  for(i=0; i<e->nEv; i++){
    SEv *r = EV(e, i);
    const EvKey *q = KEY(e, r);
    STrack *t = &e->aTrk[q->trk];
    unsigned char f = aFlag[q->name];
    if( f==0 ){   /* name tests cached per name: 1 known, 2 compile, 4 transfer */
      const char *z = SP_STR(&e->pool, q->name);
      int n = SP_LEN(&e->pool, q->name);
      f = (unsigned char)(1 | (hasCi(z, n, "compile") ? 2 : 0) | (isTransferName(z, n) ? 4 : 0));
      aFlag[q->name] = f;
    }
    if( t->isHost && (f & 2) ) compile += r->dur;
    if( f & 4 ) transfer += r->dur;
  }
  /* Devices in order of first appearance of their tracks, and their
  ** tracks grouped (a counting sort, stable: linear in the tracks). */
  for(i=0; i<e->nTrk; i++){
    STrack *t = &e->aTrk[i];
    int isNew;
    HEnt *h;
    if( !(t->isDevice && t->isDevOp) ) continue;
    h = hmGet(&devOf, t->proc, 0, 1, &isNew);
    if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
    if( isNew ){ h->v1 = nDev; aDevFirst[nDev] = 0; aDev[nDev++] = t->proc; }
    aDevFirst[h->v1]++;       /* its number of tracks, for now */
    nDevTk++;
  }
  {
    int64_t acc = 0;
    for(j=0; j<nDev; j++){ int64_t c = aDevFirst[j]; aDevFirst[j] = acc; acc += c; }
    aDevFirst[nDev] = acc;
    for(i=0; i<e->nTrk; i++){
      STrack *t = &e->aTrk[i];
      if( !(t->isDevice && t->isDevOp) ) continue;
      aDevTk[aDevFirst[hmGet(&devOf, t->proc, 0, 0, 0)->v1]++] = (int32_t)i;
    }
    for(j=nDev; j>0; j--) aDevFirst[j] = aDevFirst[j-1];   /* back to the starts */
    aDevFirst[0] = 0;
  }
  all.e = e; all.aTk = aDevTk; all.nTk = nDevTk;     /* counts: any order */
  devEach(&all, countSmall, &cAll);
  medianDur(&all, cAll.n, cAll.max, aCnt, &medAll);
  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_device VALUES(?1,?2,?3,?4,?5,?6,?7)")) ) goto done;
  for(j=0; j<nDev; j++){
    DevIter one;
    CountSmall c = {0,0,0};
    int64_t busy, span;
    double med;
    one.e = e; one.aTk = aDevTk + aDevFirst[j]; one.nTk = aDevFirst[j+1] - aDevFirst[j];
    devEach(&one, countSmall, &c);
    if( (rc = unionSpan(e, one.aTk, one.nTk, &busy, &span)) ) goto done;
    medianDur(&one, c.n, c.max, aCnt, &med);
    busyAll += busy;
    sqlite3_bind_int64(pIns, 1, e->traceId);
    bindStrId(e, pIns, 2, aDev[j]);
    sqlite3_bind_int64(pIns, 3, c.n);
    sqlite3_bind_int64(pIns, 4, c.nSmall);
    sqlite3_bind_double(pIns, 5, US(busy));
    sqlite3_bind_double(pIns, 6, US(span));
    sqlite3_bind_double(pIns, 7, med);
    if( (rc = engStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;
  {
    EngFact aF[6] = {
      {"median_op_duration", 0, 0}, {"n_ops", 0, 0}, {"n_small_ops", 0, 0},
      {"compile_duration", 0, 0}, {"transfer_duration", 0, 0}, {"device_busy_duration", 0, 0}};
    aF[0].v = medAll; aF[0].isNull = cAll.n==0;
    aF[1].v = (double)cAll.n;
    aF[2].v = (double)cAll.nSmall;
    aF[3].v = US(compile);
    aF[4].v = US(transfer);
    aF[5].v = US(busyAll);
    rc = engFacts(e, aF, 6);
  }
done:
  sqlite3_finalize(pIns);
  sqlite3_free(aDev);
  sqlite3_free(aDevFirst);
  sqlite3_free(aFlag);
  sqlite3_free(aCnt);
  hmFree(&devOf);
  return rc;
}

/* A union of intervals fed in order of start: the current run [lo, hi)
** and the length of the runs already closed, in the reference's doubles
** (µs: see unionOnDevices). */
typedef struct UnionAcc { double lo, hi, len; int started; } UnionAcc;

static void unionAdd(UnionAcc *u, double lo, double hi){
  if( !u->started ){ u->lo = lo; u->hi = hi; u->started = 1; }
  else if( lo>u->hi ){ u->len += u->hi - u->lo; u->lo = lo; u->hi = hi; }
  else if( hi>u->hi ) u->hi = hi;
}

static double unionLen(const UnionAcc *u){
  return u->started ? u->len + (u->hi - u->lo) : 0.0;
}

/* Lengths (µs) of two unions of the device events (non-Steps tracks), each
** clipped to [wLo, wHi): of the communication events (*pComm) and of the
** communication and compute events (*pAll).  The global breakdown (§4.4)
** is the reference's sweep over its doubles: each event's ts and ts + dur
** as Python's floats (evFloat) and the window clipped in them, so that a
** trace with epoch timestamps (ulp 0.25 µs at 1.7e15) gives the
** reference's lengths rather than the exact ones.  The tracks are already
** sorted by start in those doubles (aOrd), so a binary heap merges them by
** start, and one walk in that order builds both unions: no copy of the
** events and no sort (the global breakdown's memory). */
static int unionOnDevices(Engine *e, const int8_t *aKeyCat,
                          double wLo, double wHi, double *pComm, double *pAll){
  const int mask = (1<<CAT_COMM)|(1<<CAT_COMPUTE);
  int64_t *aTk, *aPos, *aHeap, *aHint, nT = 0, nH = 0, t;
  double *aLo, *aHi;
  UnionAcc all = {0,0,0,0}, comm = {0,0,0,0};     /* the union of all, of communication */
  /* per cursor h: its track aTk[h], its position aPos[h] in the track, and
  ** its current event's clipped start aLo[h] (the heap's key, kept here so
  ** that sifting compares numbers instead of walking to the events) and
  ** clipped end aHi[h] */
  aTk = sqlite3_malloc64(sizeof(int64_t)*6*(sqlite3_uint64)(e->nTrk+1));
  if( aTk==0 ) return SQLITE_NOMEM;
  aPos = aTk + e->nTrk + 1;
  aHeap = aPos + e->nTrk + 1;
  aLo = (double*)(aHeap + e->nTrk + 1);
  aHi = aLo + e->nTrk + 1;
  aHint = (int64_t*)(aHi + e->nTrk + 1);
#define UCUR(h) (e->aOrd[e->aTrk[aTk[h]].iFirst + aPos[h]])
  /* Move cursor h to its next event in mask with a non-empty clip (its
  ** clipped start and end into aLo[h], aHi[h]); 0 at end. */
#define UADV(h, ok) do{ \
    STrack *tr_ = &e->aTrk[aTk[h]]; ok = 0; \
    while( aPos[h]<tr_->nEv ){ \
      int32_t k_ = e->aOrd[tr_->iFirst + aPos[h]]; SEv *r_ = EV(e, k_); \
      if( (mask>>aKeyCat[r_->key]) & 1 ){ \
        double ts_, end_, lo_, hi_; \
        evFloatNear(e, k_, &aHint[h], &ts_, &end_); \
        lo_ = ts_<wLo ? wLo : ts_; hi_ = end_>wHi ? wHi : end_; \
        if( hi_>lo_ ){ aLo[h] = lo_; aHi[h] = hi_; ok = 1; break; } \
      } \
      aPos[h]++; \
    } \
  }while(0)
  for(t=0; t<e->nTrk; t++){
    STrack *tr = &e->aTrk[t];
    int ok;
    if( !(tr->isDevice && !tr->isSteps) || tr->nEv==0 ) continue;
    aTk[nT] = t; aPos[nT] = 0; aHint[nT] = 0;
    UADV(nT, ok);
    if( ok ){
      /* sift up */
      int64_t c = nH++;
      aHeap[c] = nT;
      while( c>0 && aLo[aHeap[(c-1)/2]] > aLo[aHeap[c]] ){
        int64_t x = aHeap[c]; aHeap[c] = aHeap[(c-1)/2]; aHeap[(c-1)/2] = x; c = (c-1)/2;
      }
    }
    nT++;
  }
  while( nH>0 ){
    int64_t h = aHeap[0], c = 0;
    SEv *r = EV(e, UCUR(h));
    int ok;
    unionAdd(&all, aLo[h], aHi[h]);
    if( aKeyCat[r->key]==CAT_COMM ) unionAdd(&comm, aLo[h], aHi[h]);
    aPos[h]++;
    UADV(h, ok);
    if( !ok ) aHeap[0] = aHeap[--nH];
    /* sift down */
    for(;;){
      int64_t l = 2*c+1, rr = 2*c+2, m = c, x;
      if( l<nH && aLo[aHeap[l]] < aLo[aHeap[m]] ) m = l;
      if( rr<nH && aLo[aHeap[rr]] < aLo[aHeap[m]] ) m = rr;
      if( m==c ) break;
      x = aHeap[c]; aHeap[c] = aHeap[m]; aHeap[m] = x; c = m;
    }
  }
#undef UCUR
#undef UADV
  sqlite3_free(aTk);
  *pAll = unionLen(&all);
  *pComm = unionLen(&comm);
  return SQLITE_OK;
}

/* What the aggregation works out once per event key. */
typedef struct KeyMemo {
  int64_t n;            /* events of the key */
  int64_t first;        /* processing position of its first event */
  double flop;          /* flop proxy of the key's shape (flopKind 1) */
  int8_t flopKind;      /* -1 not yet, 0 none, 1 flop holds it */
  int8_t comm;          /* -2 not yet, -1 not counted, else index in azComm */
} KeyMemo;

/* The summary decides order and nesting as the reference's doubles do
** (cmpPoint).  When some decision went otherwise than the exact times
** would have it (e->nFlip: timestamps whose doubles have lost digits, as
** epoch microseconds, or ends equal in picoseconds whose doubles differ),
** sweep every track again (§2) on exact picoseconds and give the
** per-track breakdown's buckets of that nesting in aExact (Steps threads
** left out, as there; aKeyCat: category per event key) and, in *pnDiff,
** the events whose exclusive time differs from the summary's.  Only the
** facts and the diagnostic that tell the user so come from it: the
** summary keeps the reference's numbers.  Memory: 4 bytes per event of
** the largest track (a copy of its slice of the processing order, sorted
** again) and stacks as deep as the nesting.  SQLITE_OK or SQLITE_NOMEM. */
static int engExactCheck(Engine *e, const int8_t *aKeyCat, int64_t aExact[5], int64_t *pnDiff){
  int64_t nMax = 0, nDiff = 0, nStk = 0, nAllocStk = 64;
  int32_t t, *aIdx, *aStk;
  int64_t *aChild;
  int rc = SQLITE_OK;
  for(t=0; t<e->nTrk; t++) if( !e->aTrk[t].isSteps && e->aTrk[t].nEv>nMax ) nMax = e->aTrk[t].nEv;
  aIdx = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(nMax ? nMax : 1));
  aStk = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)nAllocStk);
  aChild = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)nAllocStk);
  if( !aIdx || !aStk || !aChild ) rc = SQLITE_NOMEM;
#define EXACT_FIN() do{ \
    int32_t k_ = aStk[--nStk]; \
    const SEv *x_ = EV(e, k_); \
    int64_t ex_ = x_->dur - aChild[nStk]; \
    if( ex_<0 ) ex_ = 0; \
    aExact[aKeyCat[x_->key]] += ex_; \
    if( ex_!=x_->excl ) nDiff++; \
    if( nStk>0 ) aChild[nStk-1] += x_->dur; \
  }while(0)
  for(t=0; t<e->nTrk && rc==SQLITE_OK; t++){
    const STrack *tr = &e->aTrk[t];
    int64_t j, nMove = 0, nCap = 16*tr->nEv + 1024;
    if( tr->isSteps ) continue;
    memcpy(aIdx, e->aOrd + tr->iFirst, sizeof(int32_t)*(size_t)tr->nEv);
    /* In the doubles' order, which the exact order differs from only at
    ** near-ties: an insertion sort, unless it moves too much. */
    for(j=1; j<tr->nEv && nMove<=nCap; j++){
      int32_t x = aIdx[j];
      int64_t i = j;
      while( i>0 && exactLess(e, x, aIdx[i-1]) ){ aIdx[i] = aIdx[i-1]; i--; nMove++; }
      aIdx[i] = x;
    }
    if( nMove>nCap ) sortEvIdx(e, aIdx, tr->nEv, 2, sortDepth(tr->nEv));
    for(j=0; j<tr->nEv; j++){
      const SEv *r = EV(e, aIdx[j]);
      int64_t ts = r->ts, end = r->ts + r->dur;
      while( nStk>0 && ts>=EV(e, aStk[nStk-1])->ts + EV(e, aStk[nStk-1])->dur ) EXACT_FIN();
      while( nStk>0 && end>EV(e, aStk[nStk-1])->ts + EV(e, aStk[nStk-1])->dur ) EXACT_FIN();
      if( nStk>=nAllocStk ){
        /* at most as deep as the track is long (no unused half past it) */
        int64_t nNew = nAllocStk*2 > tr->nEv ? tr->nEv : nAllocStk*2;
        if( nNew<=nStk ) nNew = nStk+1;
        if( (rc = growNestStack(&aStk, &aChild, nNew)) ) break;
        nAllocStk = nNew;
      }
      aStk[nStk] = aIdx[j];
      aChild[nStk] = 0;
      nStk++;
    }
    if( rc ) break;
    while( nStk>0 ) EXACT_FIN();
  }
#undef EXACT_FIN
  sqlite3_free(aIdx); sqlite3_free(aStk); sqlite3_free(aChild);
  *pnDiff = nDiff;
  return rc;
}

/* The whole aggregation; writes the tables. */
static int engAggregate(Engine *e){
  int rc = SQLITE_OK;
  int64_t i, j;
  int32_t nNames = e->pool.n;
  int64_t aBucket[5] = {0,0,0,0,0};
  OpAgg *aOp = 0;
  int8_t *aKeyCat = 0;        /* event category (§1.4) per event key */
  KeyMemo *aMemo = 0;         /* per event key: flop proxy, collective */
  unsigned char *aNameFlag = 0;   /* per name id: 1 known, 2 stall, 4 comm */
  const char **aFamily = 0;       /* per name id: semantic family (cached) */
  HMap steps = {0,0,0}, gpuSteps = {0,0,0}, ctr = {0,0,0};
  int64_t aComm[16][2]; const char *azComm[16]; int nComm = 0;
  double aCommRef[16];           /* Σ exclusive as the reference adds it */
  int64_t hintRef = 0;           /* floatEntryNear's hint for the device ops */
  int64_t curXr = 0;             /* exclRefAt's cursor */
  sqlite3_stmt *pIns = 0;

  memset(aComm, 0, sizeof(aComm));
  memset(aCommRef, 0, sizeof(aCommRef));
  aOp = sqlite3_malloc64(sizeof(OpAgg)*(sqlite3_uint64)(nNames ? nNames : 1));
  aKeyCat = sqlite3_malloc64((sqlite3_uint64)(e->nKey ? e->nKey : 1));
  aNameFlag = sqlite3_malloc64((sqlite3_uint64)(nNames ? nNames : 1));
  aFamily = sqlite3_malloc64(sizeof(char*)*(sqlite3_uint64)(nNames ? nNames : 1));
  aMemo = sqlite3_malloc64(sizeof(KeyMemo)*(sqlite3_uint64)(e->nKey ? e->nKey : 1));
  if( !aOp || !aKeyCat || !aNameFlag || !aFamily || !aMemo ){ rc = SQLITE_NOMEM; goto done; }
  for(i=0; i<e->nKey; i++){
    aMemo[i].n = aMemo[i].first = 0;
    aMemo[i].flop = 0.0; aMemo[i].flopKind = -1; aMemo[i].comm = -2;
  }
  memset(aOp, 0, sizeof(OpAgg)*(size_t)nNames);
  memset(aNameFlag, 0, (size_t)nNames);
  memset(aFamily, 0, sizeof(char*)*(size_t)nNames);

  /* Event category per key (§1.4), the name tests cached per name: stall
  ** regex → stall; host process → host; communication name →
  ** communication; device process → compute; else other. */
  for(i=0; i<e->nKey; i++){
    const EvKey *q = &e->aKey[i];
    STrack *t = &e->aTrk[q->trk];
    int cat;
    if( aNameFlag[q->name]==0 ){
      const char *zName = SP_STR(&e->pool, q->name);
      int nName = SP_LEN(&e->pool, q->name);
      aNameFlag[q->name] = (unsigned char)(1 | (profsumIsStallName(zName, nName) ? 2 : 0)
                                             | (profsumIsCommName(zName, nName) ? 4 : 0));
    }
    if( aNameFlag[q->name] & 2 ) cat = CAT_STALL;
    else if( t->isHost ) cat = CAT_HOST;
    else if( aNameFlag[q->name] & 4 ) cat = CAT_COMM;
    else if( t->isDevice ) cat = CAT_COMPUTE;
    else cat = CAT_OTHER;
    aKeyCat[i] = (int8_t)cat;
  }

  /* Pass over events in processing order. */
  for(j=0; j<e->nEv; j++){
    int64_t k = e->aOrd[j];
    SEv *r = EV(e, k);
    const EvKey *q = KEY(e, r);
    STrack *t = &e->aTrk[q->trk];
    const char *zName = SP_STR(&e->pool, q->name);
    int nName = SP_LEN(&e->pool, q->name);
    int cat = aKeyCat[r->key];
    if( !t->isSteps ) aBucket[cat] += r->excl;
    /* run_ids / source hints (kind 1, 2; owner 0) */
    if( r->runid>=0 && (rc = counterAdd(&ctr, 1, 0, r->runid, 1, j)) ) goto done;
    if( aMemo[r->key].n++==0 ) aMemo[r->key].first = j;   /* sources, shapes, tf_ops: per key */
    /* steps: v1 the sum of the durations as the reference adds them
    ** (§4.3: its doubles, in processing order; bits of a double), v2 their
    ** count.  Not exact picoseconds: the means feed discrete choices (the
    ** representative step closest to a median, the 2-means classes) that
    ** an exact mean can flip (three devices' 0.2 µs steps: the reference's
    ** mean is 0.20000000000000004) */
    if( t->isDevice && t->isSteps ){
      int64_t s;
      if( pyIntParse(zName, nName, &s)==0 ){
        HEnt *h = hmGet(&steps, s, 0, 1, 0);
        if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
        addBits(&h->v1, evDurFloat(e, k)); h->v2++;
      }
    }
    HEnt *hStep;
    if( t->isHost && nName==5 && memcmp(zName, "train", 5)==0
     && (hStep = hmGet(&e->stepOf, k, 0, 0, 0))!=0 ){
      HEnt *h = hmGet(&gpuSteps, hStep->v1, 0, 1, 0);
      if( h==0 ){ rc = SQLITE_NOMEM; goto done; }
      addBits(&h->v1, evDurFloat(e, k)); h->v2++;
    }
    /* device ops */
    if( t->isDevice && t->isDevOp ){
      OpAgg *o = &aOp[q->name];
      KeyMemo *m = &aMemo[r->key];
      const char *zColl;
      double dRef = evDurFloatNear(e, k, &hintRef), xRef = exclRefAt(e, j, &curXr, dRef);
      o->seen = 1;
      o->count++;
      o->total += r->dur;
      o->excl += r->excl;
      o->totalRef += dRef;
      o->exclRef += xRef;
      /* flop proxy and collective: functions of the key, worked out at
      ** its first event (in processing order, which orders azComm) */
      if( m->flopKind<0 ){
        m->flopKind = 0;
        if( q->sig>=0 ){
          const char *zFam = aFamily[q->name];
          int64_t iv; double dv;
          int kind;
          if( zFam==0 ){
            if( (rc = profsumSemanticFamily(zName, nName, 0, 0, &zFam)) ) goto done;
            aFamily[q->name] = zFam;
          }
          kind = profsumFlopProxy(zFam, (int)strlen(zFam), SP_STR(&e->pool, q->sig),
                                  SP_LEN(&e->pool, q->sig), &iv, &dv);
          if( kind==PROFSUM_FLOP_INT ){ m->flop = (double)iv; m->flopKind = 1; }
          else if( kind==PROFSUM_FLOP_REAL ){ m->flop = dv; m->flopKind = 1; }
        }
      }
      if( m->flopKind>0 ){ o->flopSum += m->flop; o->flopN++; }
      if( m->comm==-2 ){
        zColl = profsumCollective(zName, nName);
        m->comm = -1;
        if( zColl ){
          int c;
          for(c=0; c<nComm; c++) if( strcmp(azComm[c], zColl)==0 ) break;
          if( c==nComm && nComm<16 ){ azComm[nComm++] = zColl; }
          if( c<16 ) m->comm = (int8_t)c;
        }
      }
      if( m->comm>=0 ){
        aComm[m->comm][0]++; aComm[m->comm][1] += r->excl;
        aCommRef[m->comm] += xRef;
      }
    }
  }

  /* The per-key counts into the counters: sources of all events (kind 2),
  ** shapes, sources and tf_ops of device ops (kinds 3-5, per op name). */
  for(i=0; i<e->nKey; i++){
    const EvKey *q = &e->aKey[i];
    const KeyMemo *m = &aMemo[i];
    STrack *t = &e->aTrk[q->trk];
    if( m->n==0 ) continue;
    if( q->source>=0 && (rc = counterAdd(&ctr, 2, 0, q->source, m->n, m->first)) ) goto done;
    if( t->isDevice && t->isDevOp ){
      if( q->sig>=0 && (rc = counterAdd(&ctr, 3, q->name, q->sig, m->n, m->first)) ) goto done;
      if( q->source>=0 && (rc = counterAdd(&ctr, 4, q->name, q->source, m->n, m->first)) ) goto done;
      if( q->tfop>=0 && (rc = counterAdd(&ctr, 5, q->name, q->tfop, m->n, m->first)) ) goto done;
    }
  }

  /* Most-common picks (shape/source/tf_op per op; run ids and sources). */
  {
    int32_t *aRun = 0, *aSrc = 0;
    int64_t nRun = 0, nSrc = 0;
    for(i=0; i<ctr.nSlot; i++){
      HEnt *h = &ctr.a[i];
      int kind;
      int64_t owner;
      if( !h->used ) continue;
      kind = (int)(h->k1>>40);
      owner = h->k1 & (((int64_t)1<<40)-1);
      if( kind>=3 ){
        OpAgg *o = &aOp[owner];
        int64_t *best = kind==3 ? o->bestShape : (kind==4 ? o->bestSource : o->bestTf);
        int32_t *pv = kind==3 ? &o->shape : (kind==4 ? &o->source : &o->tfop);
        if( best[0]==0 ){ *pv = -1; }
        if( h->v1>best[0] || (h->v1==best[0] && h->v2<best[1]) ){
          best[0] = h->v1; best[1] = h->v2; *pv = (int32_t)h->k2;
        }
      }
    }
    for(i=0; i<nNames; i++){
      if( aOp[i].bestShape[0]==0 ) aOp[i].shape = -1;
      if( aOp[i].bestSource[0]==0 ) aOp[i].source = -1;
      if( aOp[i].bestTf[0]==0 ) aOp[i].tfop = -1;
    }
    /* run ids and sources: sort (count desc, seq asc), keep 20 */
    aRun = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)(ctr.nUsed+1)*2);
    if( aRun==0 ){ rc = SQLITE_NOMEM; goto done; }
    aSrc = aRun + ctr.nUsed + 1;
    for(i=0; i<ctr.nSlot; i++){
      HEnt *h = &ctr.a[i];
      if( !h->used ) continue;
      if( (h->k1>>40)==1 ) aRun[nRun++] = (int32_t)i;
      else if( (h->k1>>40)==2 ) aSrc[nSrc++] = (int32_t)i;
    }
    {
      int pass;
      for(pass=0; pass<2 && rc==SQLITE_OK; pass++){
        int32_t *a = pass==0 ? aRun : aSrc;
        int64_t n = pass==0 ? nRun : nSrc, x, y;
        sqlite3_str *pStr;
        char *zJson;
        /* selection sort of the top 20 (n is small in practice) */
        for(x=0; x<n && x<20; x++){
          int64_t best = x;
          for(y=x+1; y<n; y++){
            HEnt *hb = &ctr.a[a[best]], *hy = &ctr.a[a[y]];
            if( hy->v1>hb->v1 || (hy->v1==hb->v1 && hy->v2<hb->v2) ) best = y;
          }
          { int32_t tmp = a[x]; a[x] = a[best]; a[best] = tmp; }
        }
        pStr = sqlite3_str_new(e->db);
        sqlite3_str_appendchar(pStr, 1, '[');
        for(x=0; x<n && x<20; x++){
          int32_t id = (int32_t)ctr.a[a[x]].k2;
          if( x ) sqlite3_str_appendchar(pStr, 1, ',');
          jsonAppendStr(pStr, SP_STR(&e->pool, id), SP_LEN(&e->pool, id));
        }
        sqlite3_str_appendchar(pStr, 1, ']');
        zJson = sqlite3_str_finish(pStr);
        if( zJson==0 ){ rc = SQLITE_NOMEM; break; }
        {
          sqlite3_stmt *pUp = 0;
          char *zSql = sqlite3_mprintf("UPDATE \"%w\".profsum_trace SET %s = ?1 WHERE trace_id = ?2",
                                       e->zSchema, pass==0 ? "run_ids" : "source_file_hints");
          if( zSql==0 ){ sqlite3_free(zJson); rc = SQLITE_NOMEM; break; }
          rc = sqlite3_prepare_v2(e->db, zSql, -1, &pUp, 0);
          sqlite3_free(zSql);
          if( rc==SQLITE_OK ){
            sqlite3_bind_text(pUp, 1, zJson, -1, sqlite3_free);
            zJson = 0;
            sqlite3_bind_int64(pUp, 2, e->traceId);
            rc = engStep(e, pUp);
          }else{
            engErr(e, rc, "%s", sqlite3_errmsg(e->db));
          }
          sqlite3_free(zJson);
          sqlite3_finalize(pUp);
        }
      }
    }
    sqlite3_free(aRun);
    if( rc ) goto done;
  }

  /* Per-track breakdown rows. */
  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_breakdown VALUES(?1,?2,?3,?4)")) ) goto done;
  {
    static const char *azCat[5] = {"compute","communication","host","stall","other"};
    int64_t total = 0;
    int c;
    for(c=0; c<5; c++){
      total += aBucket[c];
      sqlite3_bind_int64(pIns, 1, e->traceId);
      sqlite3_bind_text(pIns, 2, "exclusive_per_track", -1, SQLITE_STATIC);
      sqlite3_bind_text(pIns, 3, azCat[c], -1, SQLITE_STATIC);
      sqlite3_bind_double(pIns, 4, US(aBucket[c]));
      if( (rc = engStep(e, pIns)) ) goto done;
    }
    sqlite3_bind_text(pIns, 3, "total", -1, SQLITE_STATIC);
    sqlite3_bind_double(pIns, 4, US(total));
    if( (rc = engStep(e, pIns)) ) goto done;

    /* The same buckets on exact times (engExactCheck), as facts for
    ** profsum_kpis' float_nesting pattern, and a diagnostic when the
    ** nesting differs. */
    {
      int64_t aExact[5] = {0,0,0,0,0}, nDiff = 0, exactTotal = 0, moved = 0;
      EngFact aF[3] = {{"exact_breakdown_total", 0, 0}, {"float_nesting_events", 0, 0},
                       {"float_nesting_moved", 0, 0}};
      if( e->nFlip>0 ){
        if( (rc = engExactCheck(e, aKeyCat, aExact, &nDiff)) ) goto done;
      }else{
        memcpy(aExact, aBucket, sizeof(aExact));
      }
      for(c=0; c<5; c++){
        exactTotal += aExact[c];
        moved += aBucket[c]>aExact[c] ? aBucket[c]-aExact[c] : aExact[c]-aBucket[c];
      }
      if( nDiff>0 ){
        char *z = sqlite3_mprintf("%lld events' exclusive times differ from the nesting of their exact "
            "times: the summary decides order and nesting in the timestamps' doubles, as the reference "
            "tool does (docs/summary.md, \"Decisions in doubles\"); per-track breakdown total %!.15g us, "
            "on exact times %!.15g us (compute %!.15g, communication %!.15g, host %!.15g, stall %!.15g, "
            "other %!.15g; the categories differ by %!.15g us in all); exact per-event values: "
            "trace_events(path).excl_ps",
            (long long)nDiff, US(total), US(exactTotal), US(aExact[0]), US(aExact[1]),
            US(aExact[2]), US(aExact[3]), US(aExact[4]), US(moved));
        if( z==0 ){ rc = SQLITE_NOMEM; goto done; }
        engDiag(e, -1, -1, "float_nesting", z);
        sqlite3_free(z);
        if( e->diagRc ){ rc = e->diagRc; goto done; }
      }
      aF[0].v = US(exactTotal); aF[1].v = (double)nDiff; aF[2].v = US(moved);
      if( (rc = engFacts(e, aF, 3)) ) goto done;
    }

    /* Global timeline mode. */
    {
      /* In the reference's doubles (µs), as its sweep: see unionOnDevices. */
      double wLo = 0.0, wHi = 0.0, g[5] = {0,0,0,0,0};
      int hasW = 0;
      int32_t t;
      for(t=0; t<e->nTrk; t++){
        const STrack *tr = &e->aTrk[t];
        int64_t jj, hint = 0;
        if( !tr->isDevice || tr->isSteps ) continue;
        for(jj=0; jj<tr->nEv; jj++){
          int32_t k = e->aOrd[tr->iFirst + jj];
          double ts, end;
          if( aKeyCat[EV(e, k)->key]!=CAT_COMPUTE ) continue;
          evFloatNear(e, k, &hint, &ts, &end);
          if( !hasW || ts<wLo ) wLo = ts;
          if( !hasW || end>wHi ) wHi = end;
          hasW = 1;
        }
      }
      if( hasW && wHi>wLo ){
        /* The sweep of §4.4 (communication > compute > uncovered) measured
        ** as unions: comm = |C|, compute = |P ∪ C| - |C|, stall = the rest. */
        double uComm = 0.0, uAll = 0.0;
        if( (rc = unionOnDevices(e, aKeyCat, wLo, wHi, &uComm, &uAll)) ) goto done;
        g[CAT_COMM] = uComm;
        g[CAT_COMPUTE] = uAll - uComm;
        g[CAT_STALL] = (wHi - wLo) - uAll;
      }
      for(c=0; c<5; c++){
        sqlite3_bind_text(pIns, 2, "exclusive_global", -1, SQLITE_STATIC);
        sqlite3_bind_text(pIns, 3, azCat[c], -1, SQLITE_STATIC);
        sqlite3_bind_double(pIns, 4, g[c]);
        if( (rc = engStep(e, pIns)) ) goto done;
      }
      sqlite3_bind_text(pIns, 3, "total", -1, SQLITE_STATIC);
      sqlite3_bind_double(pIns, 4, (hasW && wHi>wLo) ? wHi-wLo : 0.0);
      if( (rc = engStep(e, pIns)) ) goto done;
    }
  }
  sqlite3_finalize(pIns); pIns = 0;

  /* Steps: TPU path, else the GPU host fallback. */
  {
    HMap *m = steps.nUsed ? &steps : &gpuSteps;
    StepAgg *aS = sqlite3_malloc64(sizeof(StepAgg)*(sqlite3_uint64)(m->nUsed+1));
    int64_t nS = 0;
    if( aS==0 ){ rc = SQLITE_NOMEM; goto done; }
    for(i=0; i<m->nSlot; i++){
      if( m->a[i].used ){
        aS[nS].step = m->a[i].k1;
        aS[nS].sum = bitsDouble(m->a[i].v1);
        aS[nS].n = m->a[i].v2;
        nS++;
      }
    }
    qsort(aS, (size_t)nS, sizeof(StepAgg), cmpStep);
    rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_step VALUES(?1,?2,?3,?4)");
    for(i=0; i<nS && rc==SQLITE_OK; i++){
      sqlite3_bind_int64(pIns, 1, e->traceId);
      sqlite3_bind_int64(pIns, 2, aS[i].step);
      sqlite3_bind_double(pIns, 3, aS[i].sum/(double)aS[i].n);
      sqlite3_bind_int64(pIns, 4, aS[i].n);
      rc = engStep(e, pIns);
    }
    sqlite3_free(aS);
    sqlite3_finalize(pIns); pIns = 0;
    if( rc ) goto done;
  }

  /* Ops. */
  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_op VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)")) ) goto done;
  for(i=0; i<nNames; i++){
    OpAgg *o = &aOp[i];
    if( !o->seen ) continue;
    sqlite3_bind_int64(pIns, 1, e->traceId);
    bindStrId(e, pIns, 2, (int32_t)i);
    sqlite3_bind_int64(pIns, 3, o->count);
    sqlite3_bind_double(pIns, 4, US(o->total));
    sqlite3_bind_double(pIns, 5, US(o->excl));
    bindStrId(e, pIns, 6, o->shape);
    bindStrId(e, pIns, 7, o->source);
    bindStrId(e, pIns, 8, o->tfop);
    if( o->flopN ) sqlite3_bind_double(pIns, 9, o->flopSum/(double)o->flopN);
    else sqlite3_bind_null(pIns, 9);
    sqlite3_bind_double(pIns, 10, o->exclRef);
    sqlite3_bind_double(pIns, 11, o->totalRef);
    if( (rc = engStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;

  /* Collectives. */
  if( (rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_comm VALUES(?1,?2,?3,?4,?5)")) ) goto done;
  for(i=0; i<nComm; i++){
    sqlite3_bind_int64(pIns, 1, e->traceId);
    sqlite3_bind_text(pIns, 2, azComm[i], -1, SQLITE_STATIC);
    sqlite3_bind_int64(pIns, 3, aComm[i][0]);
    sqlite3_bind_double(pIns, 4, US(aComm[i][1]));
    sqlite3_bind_double(pIns, 5, aCommRef[i]);
    if( (rc = engStep(e, pIns)) ) goto done;
  }
  sqlite3_finalize(pIns); pIns = 0;

  rc = engGapsAndRegions(e);
  if( rc==SQLITE_OK ) rc = engKpis(e);

done:
  sqlite3_finalize(pIns);
  sqlite3_free(aOp);
  sqlite3_free(aKeyCat);
  sqlite3_free(aMemo);
  sqlite3_free(aNameFlag);
  sqlite3_free((void*)aFamily);
  hmFree(&steps); hmFree(&gpuSteps); hmFree(&ctr);
  return rc;
}

/* Free an engine (0 is a no-op). */
void profsumEngineFree(ProfsumEngine *e){
  int64_t i;
  if( e==0 ) return;
  for(i=0; i<e->nDiag; i++) sqlite3_free(e->aDiag[i].zDetail);
  sqlite3_free(e->aDiag);
  spFree(&e->pool);
  {
    int64_t b;
    for(b=0; b<e->nBlk; b++) sqlite3_free(e->apBlk[b]);
    sqlite3_free(e->apBlk);
  }
  sqlite3_free(e->aTrk);
  sqlite3_free(e->aKey);
  sqlite3_free(e->aKeySlot);
  sqlite3_free(e->aOrd);
  sqlite3_free(e->zUnit);
  sqlite3_free(e->zPath);
  sqlite3_free(e->zXpWarn);
  sigFree(e);
  hmFree(&e->trkMap); hmFree(&e->procMap); hmFree(&e->threadMap);
  hmFree(&e->stepOf);
  sqlite3_free(e->aXrPos); sqlite3_free(e->aXrVal);
  sqlite3_free(e->aFloatIdx); sqlite3_free(e->aFloatTs); sqlite3_free(e->aFloatDur);
  sqlite3_free(e);
}

/* See summary_engine.h. */
int profsumEngineParse(const char *zFunc, const char *zPath, ProfsumStopFn xStop,
                       void *pStopArg, ProfsumEngine **pp, ProfsumEngineInfo *pInfo,
                       char **pzErr){
  Engine *e;
  int rc, k;
  *pp = 0;
  memset(pInfo, 0, sizeof(*pInfo));
  e = sqlite3_malloc64(sizeof(Engine));
  if( e==0 ) return SQLITE_NOMEM;
  memset(e, 0, sizeof(*e));
  e->zFunc = zFunc;
  e->pzErr = pzErr;
  e->iFirstRejected = -1;
  e->iFirstLeftOut = -1;
  e->xStop = xStop;
  e->pStopArg = pStopArg;
  e->zPath = sqlite3_mprintf("%s", zPath);
  if( e->zPath==0 ){ sqlite3_free(e); return SQLITE_NOMEM; }
  k = profsumSniffFormat(zPath);
  if( k==PROFSUM_FMT_NOMEM ){
    rc = SQLITE_NOMEM;
  }else if( k==PROFSUM_FMT_XPLANE ){
    e->isXPlane = 1;
    rc = profsumEngineReadXPlane(e, zPath);
    sigFree(e);                       /* needed only while reading */
  }else{
    rc = engRead(e, zPath);
  }
  if( rc==SQLITE_OK ) rc = e->diagRc;
  if( rc==SQLITE_NOMEM ) engNoMem(e, "reading the events");
  if( rc==SQLITE_OK && (rc = engOrder(e))==SQLITE_NOMEM ){
    engNoMem(e, "ordering the events and their nesting");
  }
  /* Kinds with more than ENG_DIAG_KEEP diagnostics: one summary row each. */
  for(k=0; rc==SQLITE_OK && k<e->nKind; k++){
    if( e->aKind[k].n>ENG_DIAG_KEEP ){
      char z[200];
      sqlite3_snprintf(sizeof(z), z, "%s: %lld occurrences in all; only the first %d are stored "
                       "(profsum_diagnostics(path) lists up to 1000)",
                       e->aKind[k].zKind, (long long)e->aKind[k].n, ENG_DIAG_KEEP);
      e->aKind[k].n = 0;
      engDiag(e, -1, -1, "suppressed", z);
      rc = e->diagRc;
    }
  }
  pInfo->nEntries = e->nEntries;
  pInfo->nComplete = e->nEv;
  pInfo->nRejectedByRef = e->nRejected;
  pInfo->iFirstRejected = e->iFirstRejected;
  pInfo->zFirstRejectedKind = e->zFirstRejected;
  pInfo->nLeftOut = e->nLeftOut;
  pInfo->iFirstLeftOut = e->iFirstLeftOut;
  pInfo->zFirstLeftOutWhy = e->zFirstLeftOutWhy;
  pInfo->arrayForm = e->arrayForm;
  pInfo->laxSyntax = e->laxSyntax;
  pInfo->cutOff = e->cutOff;
  pInfo->noEvents = e->noEvents;
  memcpy(pInfo->zSha256, e->zSha, sizeof(e->zSha));
  pInfo->nFileBytes = e->nFileBytes;
  pInfo->isXPlane = e->isXPlane;
  if( rc==SQLITE_NOMEM ) engNoMem(e, "keeping the diagnostics");
  e->pzErr = 0;
  if( rc ){ profsumEngineFree(e); return rc; }
  *pp = e;
  return SQLITE_OK;
}

/* See summary_engine.h. */
int profsumEngineWrite(ProfsumEngine *e, sqlite3 *db, const char *zSchema,
                       sqlite3_int64 traceId, char **pzErr){
  int rc;
  int64_t i;
  sqlite3_stmt *pIns = 0;
  e->db = db;
  e->zSchema = zSchema;
  e->traceId = traceId;
  e->pzErr = pzErr;
  rc = engAggregate(e);
  if( rc==SQLITE_NOMEM ) engNoMem(e, "computing the summary's aggregates");
  if( rc==SQLITE_OK ){
    rc = engPrepare(e, &pIns, "INSERT INTO \"%w\".profsum_agg_diagnostic"
                    "(trace_id, idx, byte_offset, kind, detail) VALUES(?1,?2,?3,?4,?5)");
  }
  for(i=0; rc==SQLITE_OK && i<e->nDiag; i++){
    EngDiagRow *r = &e->aDiag[i];
    sqlite3_bind_int64(pIns, 1, traceId);
    if( r->idx>=0 ) sqlite3_bind_int64(pIns, 2, r->idx); else sqlite3_bind_null(pIns, 2);
    if( r->off>=0 ) sqlite3_bind_int64(pIns, 3, r->off); else sqlite3_bind_null(pIns, 3);
    sqlite3_bind_text(pIns, 4, r->zKind, -1, SQLITE_STATIC);
    sqlite3_bind_text(pIns, 5, r->zDetail, -1, SQLITE_STATIC);
    rc = engStep(e, pIns);
  }
  sqlite3_finalize(pIns);
  if( rc==SQLITE_OK ){
    sqlite3_stmt *pUp = 0;
    char *z = sqlite3_mprintf("UPDATE \"%w\".profsum_trace SET display_time_unit=?1, "
        "num_events_total=?2, num_complete_events=?3, num_processes=?4, num_threads=?5, "
        "profile_start_ts=?6, profile_end_ts=?7, suspected_truncation=?8, "
        "quality_warnings=?9, sha256=?11, size=?12, source_format=coalesce(?13, source_format) "
        "WHERE trace_id=?10", zSchema);
    if( z==0 ) rc = SQLITE_NOMEM;
    else{
      rc = sqlite3_prepare_v2(db, z, -1, &pUp, 0);
      sqlite3_free(z);
    }
    if( rc==SQLITE_OK ){
      int trunc = e->nEv==1000000 || e->nEv==5000000;
      if( e->zUnit ) sqlite3_bind_text(pUp, 1, e->zUnit, -1, SQLITE_STATIC);
      sqlite3_bind_int64(pUp, 2, e->nEntries);
      sqlite3_bind_int64(pUp, 3, e->nEv);
      sqlite3_bind_int64(pUp, 4, e->procMap.nUsed);
      sqlite3_bind_int64(pUp, 5, e->threadMap.nUsed);
      if( e->hasRange && e->isXPlane ){
        /* the reference's doubles (their timestamp_ns rounded to a double) */
        sqlite3_bind_double(pUp, 6, e->xpTsMin);
        sqlite3_bind_double(pUp, 7, e->xpEndMax);
      }else if( e->hasRange ){
        sqlite3_bind_double(pUp, 6, profsumPsToMicros(e->tsMin));
        sqlite3_bind_double(pUp, 7, profsumPsToMicros(e->endMax));
      }
      sqlite3_bind_int(pUp, 8, trunc);
      if( trunc ){
        sqlite3_bind_text(pUp, 9, e->nEv==1000000
          ? "[\"Trace contains exactly 1,000,000 complete events; this often indicates export truncation at a collector cap.\"]"
          : "[\"Trace contains exactly 5,000,000 complete events; this often indicates export truncation at a collector cap.\"]",
          -1, SQLITE_STATIC);
      }else{
        sqlite3_bind_text(pUp, 9, "[]", 2, SQLITE_STATIC);
      }
      if( e->isXPlane ){
        /* its reader's warnings after the truncation warning (§4.1) */
        if( e->zXpWarn ){
          char *zW = trunc ? sqlite3_mprintf("[\"Trace contains exactly %s complete events; this often "
              "indicates export truncation at a collector cap.\",%s]",
              e->nEv==1000000 ? "1,000,000" : "5,000,000", e->zXpWarn)
              : sqlite3_mprintf("[%s]", e->zXpWarn);
          if( zW==0 ){ sqlite3_finalize(pUp); e->pzErr = 0; return SQLITE_NOMEM; }
          sqlite3_bind_text(pUp, 9, zW, -1, sqlite3_free);
        }
        sqlite3_bind_text(pUp, 13, "xplane_pb", -1, SQLITE_STATIC);
      }
      sqlite3_bind_int64(pUp, 10, traceId);
      if( e->zSha[0] ) sqlite3_bind_text(pUp, 11, e->zSha, -1, SQLITE_STATIC);
      sqlite3_bind_int64(pUp, 12, e->nFileBytes);
      rc = engStep(e, pUp);
    }else if( rc!=SQLITE_NOMEM ){
      engErr(e, rc, "%s", sqlite3_errmsg(db));
    }                              /* out of memory formatting it: no text */
    sqlite3_finalize(pUp);
  }
  e->pzErr = 0;
  return rc;
}
