/*
** xplane_rows.c — the XPlane adapter: XEvents as ProfsumEvent rows.  See
** xplane_rows.h for what a row holds.
**
** Memory: the decoder's (the current plane's metadata and a read window)
** plus one growing text buffer for the current row (its args JSON and the
** texts of its known args keys) and a small table of stat names per row.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "xplane_pb.h"
#include "xplane_rows.h"
#include "jsontree.h"     /* jReprDouble, jAppendJsonStr */
#include "jsonesc.h"      /* profsumJsonPlainRun */
#include "cnum.h"         /* profsumFmtI64, profsumFmtU64 */

#include <math.h>
#include <stdarg.h>
#include <string.h>

/* The known args keys, in PROFSUM_AK_* order (up to PROFSUM_AK_GROUP_ID). */
static const char *const azKnown[] = {
  "tf_op", "hlo_op", "hlo_module", "hlo_category", "long_name", "source",
  "run_id", "step_num", "flops", "bytes_accessed", "correlation_id", "group_id"
};
#define N_KNOWN ((int)(sizeof(azKnown)/sizeof(azKnown[0])))

/* Adapter diagnostics (counted per kind: details stop after
** PROFSUM_DIAG_DETAIL_CAP, unless PROFSUM_SCAN_ALLDETAILS). */
#define XR_AGG      0
#define XR_NODATA   1
#define XR_UNKMETA  2
#define XR_UNSORTED 3
#define XR_RANGE    4
static const char *const azKind[] = {
  "xplane_aggregated_event", "xplane_no_event_data",
  "xplane_unknown_metadata", "xplane_unsorted_line", "time_out_of_range"
};

/* XEvents walked between two questions to the stop check (a few MB of
** input at most: an XEvent takes at least 2 bytes, usually 10 to 100). */
#define XR_ASK_EVENTS 65536

/* A stat of the current row's args: the winner for its name. */
typedef struct XrEnt {
  const ProfsumXpStat *pStat;   /* the winning stat */
  uint64_t h;                   /* hash of its name */
} XrEnt;

/* A growing text buffer. */
typedef struct XrBuf { char *a; int64_t n, nAlloc; } XrBuf;

struct ProfsumXRows {
  ProfsumXp *pXp;
  unsigned flags;
  ProfsumDiagFn xDiag;
  void *pDiagCtx;
  int64_t aKindN[5];            /* diagnostics sent per adapter kind */
  int eState;                   /* 0: next plane, 1: next line, 2: events, 3: done */
  const ProfsumXpPlane *pPlane;
  const ProfsumXpLine *pLine;
  int64_t nLine;                /* lines begun over the file */
  int hasPrev, unsorted;        /* order check of the current line */
  profsum_ps prevTs, prevEnd;
  char zProc[40];               /* "xplane:{i}" */
  char zThread[40];             /* "xline:{j}" */
  const char *zFunc;            /* for messages */
  ProfsumStopCheck stop;        /* the opening thread's stop check */
  int64_t nNextAsk;             /* ask it when this many XEvents were walked */
  ProfsumEvent ev;
  XrBuf json;                   /* the row's args JSON */
  XrBuf keys;                   /* the texts of its known args keys */
  int64_t aArgOff[N_KNOWN];     /* offset of each known key's text, -1: none */
  int64_t aArgLen[N_KNOWN];
  unsigned char aArgType[N_KNOWN];
  XrEnt *aEnt;                  /* the row's args, first-appearance order */
  int nEnt, nEntAlloc;
  int *aSlot;                   /* hash of names → aEnt index + 1 (0: empty) */
  int nSlot;
  /* The args of the current plane's event metadata entries, as built for
  ** an event without stats of its own (xrMemoSlot): such an event's args
  ** depend on its metadata entry only, and most events of a device plane
  ** are such.  aMemoAt[iMeta] is the entry's offset in memo (an XrMemo
  ** and its texts), -1 when not kept (yet). */
  int64_t memoPlane;            /* the plane they belong to (-1: none) */
  int64_t *aMemoAt;
  int64_t nMemoAt, nMemoAtAlloc;
  XrBuf memo;
  int64_t nMemoHit;             /* rows served from it (profsumXRowsMemoHits) */
};

/* Rows served from a memo by the cursors closed so far. */
static int64_t nMemoHitsClosed = 0;

/* A kept entry's args in ProfsumXRows.memo: this header (its offset a
** multiple of 8), then the args JSON (nJson bytes), then the known keys'
** texts (nKeys bytes; aOff relative to their start, -1: absent). */
typedef struct XrMemo {
  int64_t nJson, nKeys;
  int64_t aOff[N_KNOWN];
  int64_t aLen[N_KNOWN];
  unsigned char aType[N_KNOWN];
} XrMemo;

/* The memo keeps at most this many bytes per plane (besides its slots, 8
** bytes per event metadata entry of the plane), and no entry whose texts
** are longer than XR_MEMO_ONE (a long bytes value left in the file is read
** again for each event rather than kept). */
#define XR_MEMO_MAX ((int64_t)4<<20)
#define XR_MEMO_ONE ((int64_t)64<<10)

/* Send an adapter diagnostic for event ev (details stop after
** PROFSUM_DIAG_DETAIL_CAP of the kind, unless PROFSUM_SCAN_ALLDETAILS). */
static void xrDiag(ProfsumXRows *p, int eKind, const ProfsumXpEvent *ev,
                   const char *zFmt, ...){
  char z[240];
  va_list ap;
  if( p->xDiag==0 ) return;
  if( ++p->aKindN[eKind] > PROFSUM_DIAG_DETAIL_CAP && !(p->flags & PROFSUM_SCAN_ALLDETAILS) ){
    p->xDiag(p->pDiagCtx, ev->iEvent, ev->iOffset, azKind[eKind], 0);
    return;
  }
  va_start(ap, zFmt);
  sqlite3_vsnprintf((int)sizeof(z), z, zFmt, ap);
  va_end(ap);
  p->xDiag(p->pDiagCtx, ev->iEvent, ev->iOffset, azKind[eKind], z);
}

/* Room for n more bytes in b.  SQLITE_OK or SQLITE_NOMEM. */
static int xrGrow(XrBuf *b, int64_t n){
  int64_t nNew = b->nAlloc ? b->nAlloc*2 : 1024;
  char *a;
  while( nNew < b->n + n ) nNew *= 2;
  a = sqlite3_realloc64(b->a, (sqlite3_uint64)nNew);
  if( a==0 ) return SQLITE_NOMEM;
  b->a = a;
  b->nAlloc = nNew;
  return SQLITE_OK;
}

/* Append z[0..n) to b.  SQLITE_OK or SQLITE_NOMEM. */
static inline int xrPut(XrBuf *b, const char *z, int64_t n){
  if( b->n + n > b->nAlloc && xrGrow(b, n) ) return SQLITE_NOMEM;
  if( n>0 ) memcpy(b->a + b->n, z, (size_t)n);
  b->n += n;
  return SQLITE_OK;
}

/* Append z[0..n) (valid UTF-8) to b as a JSON string: the runs that need
** no escape (jsonesc.h) copied whole, room made for all of them at once
** and again, for what is left, at an escape that needs it. */
static int xrPutJsonStr(XrBuf *b, const char *z, int64_t n){
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char*)z;
  int64_t i = 0;
  if( b->n + n + 2 > b->nAlloc && xrGrow(b, n + 2) ) return SQLITE_NOMEM;
  b->a[b->n++] = '"';
  for(;;){
    int64_t k = profsumJsonPlainRun(u + i, n - i);
    unsigned char c;
    char *o;
    if( k>0 ){ memcpy(b->a + b->n, z + i, (size_t)k); b->n += k; i += k; }
    if( i>=n ) break;
    c = u[i++];
    /* an escape takes up to 6 bytes where the room counted 1 */
    if( b->n + 6 + (n - i) + 1 > b->nAlloc && xrGrow(b, 6 + (n - i) + 1) ) return SQLITE_NOMEM;
    o = b->a + b->n;
    o[0] = '\\';
    switch( c ){
      case '"':  o[1] = '"'; b->n += 2; break;
      case '\\': o[1] = '\\'; b->n += 2; break;
      case '\n': o[1] = 'n'; b->n += 2; break;
      case '\r': o[1] = 'r'; b->n += 2; break;
      case '\t': o[1] = 't'; b->n += 2; break;
      default:
        o[1] = 'u'; o[2] = '0'; o[3] = '0'; o[4] = hex[c>>4]; o[5] = hex[c&15];
        b->n += 6;
        break;
    }
  }
  b->a[b->n++] = '"';
  return SQLITE_OK;
}

static uint64_t xrHash(const char *z, int64_t n){
  uint64_t h = 1469598103934665603ULL;
  int64_t i;
  for(i=0; i<n; i++){ h ^= (unsigned char)z[i]; h *= 1099511628211ULL; }
  return h;
}

/* Does stat s carry a value the args show?  A compressed string that
** cannot be inflated (too large, invalid) has none.  -1: out of memory. */
static int xrHasValue(ProfsumXRows *p, const ProfsumXpStat *s){
  const char *z;
  int64_t n;
  if( s->eType==PROFSUM_XV_NONE ) return 0;
  if( s->eType!=PROFSUM_XV_CSTR ) return 1;
  if( profsumXpStatText(p->pXp, s, &z, &n) ) return -1;
  return z!=0;
}

/* Add stat s to the row's args: a new name is appended, a known one gets
** the later value in its place.  Stats without a known, non-empty name or
** without a value are skipped (summary §6.1). */
static int xrAddStat(ProfsumXRows *p, const ProfsumXpStat *s){
  uint64_t h;
  int i, v;
  if( s->zName==0 || s->nName==0 ) return SQLITE_OK;
  v = xrHasValue(p, s);
  if( v<0 ) return SQLITE_NOMEM;
  if( v==0 ) return SQLITE_OK;
  h = xrHash(s->zName, s->nName);
  for(i=(int)(h & (uint64_t)(p->nSlot-1)); p->aSlot[i]; i=(i+1)&(p->nSlot-1)){
    XrEnt *e = &p->aEnt[p->aSlot[i]-1];
    if( e->h==h && e->pStat->nName==s->nName && memcmp(e->pStat->zName, s->zName, (size_t)s->nName)==0 ){
      e->pStat = s;
      return SQLITE_OK;
    }
  }
  p->aEnt[p->nEnt].pStat = s;
  p->aEnt[p->nEnt].h = h;
  p->aSlot[i] = ++p->nEnt;
  return SQLITE_OK;
}

/* Note the typed text of known args key iKnown (appended to p->keys). */
static int xrKey(ProfsumXRows *p, int iKnown, int eType, const char *z, int64_t n){
  p->aArgType[iKnown] = (unsigned char)eType;
  p->aArgOff[iKnown] = p->keys.n;
  p->aArgLen[iKnown] = n;
  return xrPut(&p->keys, z, n);
}

/* Append the JSON text of stat s's value (it has one) to p->json; when
** iKnown >= 0, also the typed text of that known args key to p->keys. */
static int xrPutValue(ProfsumXRows *p, const ProfsumXpStat *s, int iKnown){
  char zNum[64];
  const char *zT;
  int64_t nT;
  switch( s->eType ){
    case PROFSUM_XV_DOUBLE:
      if( isnan(s->rVal) || isinf(s->rVal) ){
        zT = isnan(s->rVal) ? "NaN" : s->rVal>0 ? "Infinity" : "-Infinity";
        nT = (int64_t)strlen(zT);
        if( xrPutJsonStr(&p->json, zT, nT) ) return SQLITE_NOMEM;
        return iKnown>=0 ? xrKey(p, iKnown, PROFSUM_JT_STRING, zT, nT) : SQLITE_OK;
      }
      jReprDouble(s->rVal, zNum);
      nT = (int64_t)strlen(zNum);
      break;
    case PROFSUM_XV_INT64:
      nT = profsumFmtI64(s->iVal, zNum);
      break;
    case PROFSUM_XV_UINT64:
      nT = profsumFmtU64(s->uVal, zNum);
      if( s->uVal > (uint64_t)INT64_MAX ){
        /* beyond int64: a string of its digits in args (a JSON reader
        ** would round a number); the named columns get the exact digits */
        if( xrPutJsonStr(&p->json, zNum, nT) ) return SQLITE_NOMEM;
        return iKnown>=0 ? xrKey(p, iKnown, PROFSUM_JT_NUMBER, zNum, nT) : SQLITE_OK;
      }
      break;
    default: {   /* STR, BYTES, REF, CSTR: text */
      /* out of memory, or a bytes value left in the file that cannot be
      ** read now (the decoder's error) */
      int rc = profsumXpStatText(p->pXp, s, &zT, &nT);
      if( rc ) return rc;
    }
      if( zT==0 ){ zT = ""; nT = 0; }   /* not reached: xrHasValue said it has one */
      if( xrPutJsonStr(&p->json, zT, nT) ) return SQLITE_NOMEM;
      return iKnown>=0 ? xrKey(p, iKnown, PROFSUM_JT_STRING, zT, nT) : SQLITE_OK;
  }
  if( xrPut(&p->json, zNum, nT) ) return SQLITE_NOMEM;
  return iKnown>=0 ? xrKey(p, iKnown, PROFSUM_JT_NUMBER, zNum, nT) : SQLITE_OK;
}

/* The known-key index of a stat name, or -1. */
static int xrKnown(const char *z, int64_t n){
  int k;
  for(k=0; k<N_KNOWN; k++){
    if( (int64_t)strlen(azKnown[k])==n && memcmp(azKnown[k], z, (size_t)n)==0 ) return k;
  }
  return -1;
}

/* The memo's slot of event xe's metadata entry, when its args may be kept
** (the event has no stats of its own): a pointer to the entry's offset in
** p->memo (-1: not kept yet), else 0.  The memo is emptied when a new plane
** begins.  The memo only saves time: when its slots cannot be made, there
** is none (0) and the args are built as for any event. */
static int64_t *xrMemoSlot(ProfsumXRows *p, const ProfsumXpEvent *xe){
  const ProfsumXpPlane *pl = p->pPlane;
  int64_t iMeta;
  if( xe->nStat>0 || xe->pMeta==0 ) return 0;
  if( p->memoPlane!=pl->iPlane ){
    int64_t i, n = pl->nEventMetadata;
    if( n>p->nMemoAtAlloc ){
      int64_t *a = sqlite3_realloc64(p->aMemoAt, sizeof(int64_t)*(sqlite3_uint64)n);
      if( a==0 ) return 0;
      p->aMemoAt = a;
      p->nMemoAtAlloc = n;
    }
    for(i=0; i<n; i++) p->aMemoAt[i] = -1;
    p->nMemoAt = n;
    p->memo.n = 0;
    p->memoPlane = pl->iPlane;
  }
  iMeta = xe->pMeta->iMeta;
  return iMeta>=0 && iMeta<p->nMemoAt ? &p->aMemoAt[iMeta] : 0;
}

/* Point p->ev.args and the known keys at the kept entry at offset off. */
static void xrMemoUse(ProfsumXRows *p, int64_t off){
  const XrMemo *m = (const XrMemo*)(const void*)(p->memo.a + off);
  const char *zJson = (const char*)(m+1);
  int k;
  p->ev.args.z = zJson;
  p->ev.args.n = m->nJson;
  p->ev.args.type = PROFSUM_JT_OBJECT;
  for(k=0; k<N_KNOWN; k++){
    if( m->aOff[k]<0 ) continue;
    p->ev.aArg[k].z = zJson + m->nJson + m->aOff[k];
    p->ev.aArg[k].n = m->aLen[k];
    p->ev.aArg[k].type = m->aType[k];
  }
}

/* Keep the args just built (p->json, p->keys) at *pAt, unless they are
** long, the memo is full or its buffer cannot grow (then *pAt stays -1:
** the entry's later events build their args again). */
static void xrMemoKeep(ProfsumXRows *p, int64_t *pAt){
  int64_t off = (p->memo.n + 7) & ~(int64_t)7, nText = p->json.n + p->keys.n;
  int64_t nNeed = off - p->memo.n + (int64_t)sizeof(XrMemo) + nText;
  XrMemo m;
  int k;
  if( nText>XR_MEMO_ONE || p->memo.n + nNeed > XR_MEMO_MAX ) return;
  if( p->memo.n + nNeed > p->memo.nAlloc && xrGrow(&p->memo, nNeed) ) return;
  memset(&m, 0, sizeof(m));
  m.nJson = p->json.n;
  m.nKeys = p->keys.n;
  for(k=0; k<N_KNOWN; k++){
    m.aOff[k] = p->aArgOff[k];
    m.aLen[k] = p->aArgLen[k];
    m.aType[k] = p->aArgType[k];
  }
  /* (the room is made: these cannot fail) */
  p->memo.n = off;
  if( xrPut(&p->memo, (const char*)&m, (int64_t)sizeof(m))
   || xrPut(&p->memo, p->json.a, p->json.n)
   || xrPut(&p->memo, p->keys.a, p->keys.n) ) return;
  *pAt = off;
}

/* Build the row's args from the event's stats (the metadata's, then its
** own) and set p->ev.args and, with PROFSUM_SCAN_ARGKEYS, p->ev.aArg.
** SQLITE_OK, SQLITE_NOMEM, or the decoder's error (xrFill). */
static int xrArgsBuild(ProfsumXRows *p, const ProfsumXpEvent *xe){
  int nMeta = xe->pMeta ? xe->pMeta->nStat : 0;
  int nAll = nMeta + xe->nStat, i, k, rc, wantKeys = (p->flags & PROFSUM_SCAN_ARGKEYS)!=0;
  if( nAll >= p->nEntAlloc ){
    int nNew = p->nEntAlloc ? p->nEntAlloc : 16;
    XrEnt *a;
    int *sl;
    while( nNew <= nAll ) nNew *= 2;
    a = sqlite3_realloc64(p->aEnt, sizeof(XrEnt)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    p->aEnt = a;
    sl = sqlite3_realloc64(p->aSlot, sizeof(int)*2*(sqlite3_uint64)nNew);
    if( sl==0 ) return SQLITE_NOMEM;
    p->aSlot = sl;
    p->nEntAlloc = nNew;
  }
  p->nSlot = 16;
  while( p->nSlot < 2*nAll ) p->nSlot *= 2;     /* <= 2*nEntAlloc */
  memset(p->aSlot, 0, sizeof(int)*(size_t)p->nSlot);
  p->nEnt = 0;
  for(i=0; i<nMeta; i++) if( xrAddStat(p, &xe->pMeta->aStat[i]) ) return SQLITE_NOMEM;
  for(i=0; i<xe->nStat; i++) if( xrAddStat(p, &xe->aStat[i]) ) return SQLITE_NOMEM;
  for(k=0; k<N_KNOWN; k++) p->aArgOff[k] = -1;
  p->json.n = 0;
  p->keys.n = 0;
  if( xrPut(&p->json, "{", 1) ) return SQLITE_NOMEM;
  for(i=0; i<p->nEnt; i++){
    const ProfsumXpStat *s = p->aEnt[i].pStat;
    int iKnown = wantKeys ? xrKnown(s->zName, s->nName) : -1;
    if( i>0 && xrPut(&p->json, ",", 1) ) return SQLITE_NOMEM;
    if( xrPutJsonStr(&p->json, s->zName, s->nName) || xrPut(&p->json, ":", 1) ) return SQLITE_NOMEM;
    if( (rc = xrPutValue(p, s, iKnown))!=SQLITE_OK ) return rc;
  }
  if( xrPut(&p->json, "}", 1) ) return SQLITE_NOMEM;
  /* spans into the finished buffers (they no longer move) */
  p->ev.args.z = p->json.a;
  p->ev.args.n = p->json.n;
  p->ev.args.type = PROFSUM_JT_OBJECT;
  for(k=0; k<N_KNOWN; k++){
    if( p->aArgOff[k]<0 ) continue;
    /* an empty text is '' (a span at address 0 would be NULL): every
    ** key's text may be empty, and p->keys then holds no buffer yet */
    p->ev.aArg[k].z = p->keys.a ? p->keys.a + p->aArgOff[k] : "";
    p->ev.aArg[k].n = p->aArgLen[k];
    p->ev.aArg[k].type = p->aArgType[k];
  }
  return SQLITE_OK;
}

/* The row's args (xrArgsBuild), or for an event without stats of its own
** its metadata entry's args built for an earlier event (the memo). */
static int xrArgs(ProfsumXRows *p, const ProfsumXpEvent *xe){
  int rc;
  int64_t *pAt = xrMemoSlot(p, xe);
  if( pAt && *pAt>=0 ){
    xrMemoUse(p, *pAt);
    p->nMemoHit++;
    return SQLITE_OK;
  }
  rc = xrArgsBuild(p, xe);
  if( rc==SQLITE_OK && pAt ) xrMemoKeep(p, pAt);
  return rc;
}

/* See xplane_rows.h. */
int profsumXRowsOpen(const char *zFunc, const char *zPath, unsigned flags,
                     ProfsumDiagFn xDiag, void *pDiagCtx,
                     ProfsumXRows **pp, char **pzErr){
  ProfsumXRows *p;
  int rc;
  *pp = 0;
  p = profsumMallocZero(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  p->flags = flags;
  p->zFunc = zFunc;
  /* the stop check of the thread that opens (a cursor reads in later
  ** calls, where none is set): read it by setting none and restoring it */
  p->stop = profsumStopPush(0, 0);
  profsumStopPop(p->stop);
  p->nNextAsk = XR_ASK_EVENTS;
  p->memoPlane = -1;
  p->xDiag = xDiag;
  p->pDiagCtx = pDiagCtx;
  rc = profsumXpOpen(zFunc, zPath, PROFSUM_XP_LENIENT_UTF8
                     | ((flags & PROFSUM_SCAN_ALLDETAILS) ? PROFSUM_XP_ALLDETAILS : 0),
                     xDiag, pDiagCtx, &p->pXp, pzErr);
  if( rc ){
    profsumXRowsClose(p);
    return rc;
  }
  p->ev.ph.z = "X";
  p->ev.ph.n = 1;
  p->ev.ph.type = PROFSUM_JT_STRING;
  *pp = p;
  return SQLITE_OK;
}

/* Fill p->ev from the decoder's event xe (its data is offset_ps).
** SQLITE_OK, SQLITE_NOMEM, or the decoder's error when a bytes value left
** in the file cannot be read now (profsumXpErrMsg has its message). */
static int xrFill(ProfsumXRows *p, const ProfsumXpEvent *xe){
  ProfsumEvent *ev = &p->ev;
  const ProfsumXpPlane *pl = p->pPlane;
  const ProfsumXpLine *ln = p->pLine;
  /* ev was zeroed at open; only what a row may leave set is cleared here
  ** (a memset of the whole struct per row was a tenth of a scan): the
  ** name, and the args when they are built; the fields below are always
  ** set, and the JSON-only fields stay zero */
  memset(&ev->name, 0, sizeof(ev->name));
  if( p->flags & (PROFSUM_SCAN_ARGS|PROFSUM_SCAN_ARGKEYS) ){
    memset(&ev->args, 0, sizeof(ev->args));
    memset(ev->aArg, 0, sizeof(ev->aArg));
  }
  ev->idx = xe->iEvent;
  ev->iOffset = xe->iOffset;
  if( xe->pMeta ){
    int useDisplay = xe->pMeta->nDisplay>0;
    ev->name.z = useDisplay ? xe->pMeta->zDisplay : xe->pMeta->zName;
    ev->name.n = useDisplay ? xe->pMeta->nDisplay : xe->pMeta->nName;
    ev->name.type = PROFSUM_JT_STRING;
  }else{
    xrDiag(p, XR_UNKMETA, xe, "XEvent of plane %lld, line %lld names metadata_id %lld, "
           "which its plane's event_metadata lacks: name is NULL",
           (long long)pl->iPlane, (long long)ln->iLine, (long long)xe->metadataId);
  }
  ev->pid.kind = PROFSUM_ID_INT;
  ev->pid.iVal = pl->iPlane + 1;
  ev->tid.kind = PROFSUM_ID_INT;
  ev->tid.iVal = ln->id!=0 ? ln->id : ln->iLine + 1;
  ev->iTrack = p->nLine;
  ev->hasTs = ev->hasDur = ev->tsPresent = 1;
  ev->ts = (profsum_ps)ln->timestampNs*1000 + (profsum_ps)xe->offsetPs;
  ev->dur = (profsum_ps)xe->durationPs;
  /* floor(ts/1000) beyond int64, as the ts column tests it, without a
  ** 128-bit division per row */
  if( !profsumPsNsFits(ev->ts) ){
    xrDiag(p, XR_RANGE, xe, "ts beyond the 64-bit range of ns (line timestamp_ns %lld, offset_ps "
           "%lld): the column ts is NULL, the event keeps its place on its track",
           (long long)ln->timestampNs, (long long)xe->offsetPs);
  }
  ev->procName.type = PROFSUM_JT_STRING;
  if( pl->nName>0 ){
    ev->procName.z = pl->zName;
    ev->procName.n = pl->nName;
  }else{
    ev->procName.z = p->zProc;
    ev->procName.n = (int64_t)strlen(p->zProc);
  }
  ev->threadName.type = PROFSUM_JT_STRING;
  if( ln->nDisplay>0 ){
    ev->threadName.z = ln->zDisplay;
    ev->threadName.n = ln->nDisplay;
  }else if( ln->nName>0 ){
    ev->threadName.z = ln->zName;
    ev->threadName.n = ln->nName;
  }else{
    ev->threadName.z = p->zThread;
    ev->threadName.n = (int64_t)strlen(p->zThread);
  }
  /* the order check: rows with a positive duration, (start asc, end desc) */
  if( xe->durationPs>0 && !p->unsorted ){
    profsum_ps end = ev->ts + ev->dur;
    if( p->hasPrev && (ev->ts < p->prevTs || (ev->ts==p->prevTs && end > p->prevEnd)) ){
      p->unsorted = 1;
      xrDiag(p, XR_UNSORTED, xe, "line %lld of plane %lld is not in timeline order (start "
             "ascending, end descending) at its event %lld; its rows are nested as if sorted",
             (long long)ln->iLine, (long long)pl->iPlane, (long long)xe->iLineEvent);
    }
    p->hasPrev = 1;
    p->prevTs = ev->ts;
    p->prevEnd = end;
  }
  if( p->flags & (PROFSUM_SCAN_ARGS|PROFSUM_SCAN_ARGKEYS) ) return xrArgs(p, xe);
  return SQLITE_OK;
}

/* See xplane_rows.h. */
int profsumXRowsNext(ProfsumXRows *p, ProfsumEvent **ppEv, char **pzErr){
  int rc;
  for(;;){
    if( p->eState==3 ) return SQLITE_DONE;
    if( p->eState==0 ){
      rc = profsumXpNextPlane(p->pXp, &p->pPlane, pzErr);
      if( rc==SQLITE_DONE ){ p->eState = 3; return SQLITE_DONE; }
      if( rc!=SQLITE_ROW ) return rc;
      sqlite3_snprintf(sizeof(p->zProc), p->zProc, "xplane:%lld", (long long)p->pPlane->iPlane);
      p->eState = 1;
    }
    if( p->eState==1 ){
      rc = profsumXpNextLine(p->pXp, &p->pLine, pzErr);
      if( rc==SQLITE_DONE ){ p->eState = 0; continue; }
      if( rc!=SQLITE_ROW ) return rc;
      sqlite3_snprintf(sizeof(p->zThread), p->zThread, "xline:%lld", (long long)p->pLine->iLine);
      p->nLine++;
      p->hasPrev = p->unsorted = 0;
      p->eState = 2;
    }
    {
      const ProfsumXpEvent *xe;
      rc = profsumXpNextEvent(p->pXp, &xe, pzErr);
      if( rc==SQLITE_DONE ){ p->eState = 1; continue; }
      if( rc!=SQLITE_ROW ) return rc;
      if( xe->iEvent>=p->nNextAsk ){
        p->nNextAsk = xe->iEvent + XR_ASK_EVENTS;
        if( p->stop.xStop && p->stop.xStop(p->stop.pArg) ){
          sqlite3_free(*pzErr);
          *pzErr = sqlite3_mprintf("%s: interrupted", p->zFunc);
          p->eState = 3;
          return SQLITE_INTERRUPT;
        }
      }
      if( xe->eData==PROFSUM_XD_OCCURRENCES ){
        xrDiag(p, XR_AGG, xe, "aggregated XEvent (num_occurrences %lld) of plane %lld, line "
               "%lld: no row", (long long)xe->numOccurrences, (long long)p->pPlane->iPlane,
               (long long)p->pLine->iLine);
        continue;
      }
      if( xe->eData!=PROFSUM_XD_OFFSET ){
        xrDiag(p, XR_NODATA, xe, "XEvent of plane %lld, line %lld has neither offset_ps nor "
               "num_occurrences: no row", (long long)p->pPlane->iPlane, (long long)p->pLine->iLine);
        continue;
      }
      rc = xrFill(p, xe);
      if( rc ){
        sqlite3_free(*pzErr);
        if( rc==SQLITE_NOMEM ){
          *pzErr = sqlite3_mprintf("%s: '%s': out of memory at byte %lld (event %lld)",
                                   p->zFunc, profsumXpPath(p->pXp),
                                   (long long)xe->iOffset, (long long)xe->iEvent);
        }else{
          *pzErr = profsumXpErrMsg(p->pXp);    /* reading a stat's bytes */
        }
        return rc;
      }
      *ppEv = &p->ev;
      return SQLITE_ROW;
    }
  }
}

/* See xplane_rows.h. */
int64_t profsumXRowsEvents(ProfsumXRows *p){
  return profsumXpEventsSeen(p->pXp);
}

/* See xplane_rows.h. */
int64_t profsumXRowsMemoHits(void){
  return __atomic_load_n(&nMemoHitsClosed, __ATOMIC_RELAXED);
}

/* See xplane_rows.h. */
void profsumXRowsClose(ProfsumXRows *p){
  if( p==0 ) return;
  if( p->nMemoHit ) __atomic_add_fetch(&nMemoHitsClosed, p->nMemoHit, __ATOMIC_RELAXED);
  profsumXpClose(p->pXp);
  sqlite3_free(p->json.a);
  sqlite3_free(p->keys.a);
  sqlite3_free(p->aEnt);
  sqlite3_free(p->aSlot);
  sqlite3_free(p->aMemoAt);
  sqlite3_free(p->memo.a);
  sqlite3_free(p);
}

/* See xplane_pb.h. */
void profsumXpStringsJson(ProfsumXp *p, int eWhich, sqlite3_str *s){
  const ProfsumXpStr *a;
  int64_t n, i;
  profsumXpStrings(p, eWhich, &a, &n);
  sqlite3_str_appendchar(s, 1, '[');
  for(i=0; i<n; i++){
    if( i ) sqlite3_str_appendchar(s, 1, ',');
    jAppendJsonStr(s, a[i].z, a[i].n);
  }
  sqlite3_str_appendchar(s, 1, ']');
}
