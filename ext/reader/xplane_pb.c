/*
** xplane_pb.c — streaming decoder of XSpace protobuf files (see
** xplane_pb.h for the API and docs/xplane.md for the format as read).
**
** Layers, bottom up:
**   input,    pbwire.c: bytes [off, off+n) of the file made readable in
**   wire      a window (absolute offsets everywhere) over a plain file,
**             memory or a gzip stream (the window only moves forward, and
**             holds the whole current plane while it is walked); varints,
**             tags, lengths, fixed64, skipping any field, UTF-8: the
**             checks protobuf's parser makes.
**   messages  here: XStat, XEventMetadata / XStatMetadata map entries,
**             the plane's non-line fields (pass 1), a line's own fields
**             (its first pass), one XEvent; the names of messages and
**             fields, where the walk is, diagnostics.
**   walk      NextPlane / NextLine / NextEvent.
**
** Strings handed out point into the window when it cannot move before
** their lifetime ends (memory and gzip sources, an event's own stats);
** otherwise (a plain file's plane metadata and line names) they are
** copied into an arena freed with their plane or line.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "xplane_pb.h"
#include "pbwire.h"
#include "xplane_schema.h"
#include "i64map.h"
#include "growarray.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A line up to this long is read whole before its first pass, so both of
** its passes read memory; a longer one is read twice through the window
** (from the page cache, as fast: the whole line would be anonymous memory
** held beside the engine's records at the import's peak, 4 bytes an event
** for a line of TPU ops).  (Can be set at compile time, as
** PROFSUM_XP_READAHEAD of pbwire.c: the tests make both tiny, so that small
** inputs move the window too.) */
#ifndef PROFSUM_XP_LINE_WHOLE
# define PROFSUM_XP_LINE_WHOLE (1024*1024)
#endif
#define XP_LINE_WHOLE ((int64_t)PROFSUM_XP_LINE_WHOLE)
/* Diagnostics of one kind given with their text; later ones get 0
** (all of them with PROFSUM_XP_ALLDETAILS). */
#define XP_DIAG_DETAILED PROFSUM_DIAG_DETAIL_CAP

/* Diagnostic kinds. */
#define XP_DK_UNKNOWN  0
#define XP_DK_WIRE     1
#define XP_DK_UTF8     2
#define XP_DK_CBIG     3
#define XP_DK_CBAD     4
#define XP_DK_N        5
static const char *const azXpDiag[XP_DK_N] = {
  "unknown_field", "wrong_wire_type", "invalid_utf8", "compressed_too_large",
  "compressed_invalid"
};

/* ------------------------------------------------------------------ */
/* Arena: bump allocation in chunks, freed together                    */
/* ------------------------------------------------------------------ */
typedef struct XpChunk XpChunk;
struct XpChunk {
  XpChunk *pNext;          /* older chunk */
  int64_t nAlloc;          /* bytes of data after the header */
  int64_t nUsed;
};
typedef struct XpArena { XpChunk *pHead; } XpArena;
#define XP_CHUNK (64*1024)

/* n bytes (8-aligned) from the arena, or 0 when out of memory. */
static void *xpArenaAlloc(XpArena *pA, int64_t n){
  XpChunk *c = pA->pHead;
  n = (n + 7) & ~(int64_t)7;
  if( c==0 || c->nAlloc - c->nUsed < n ){
    int64_t nData = n > XP_CHUNK ? n : XP_CHUNK;
    c = sqlite3_malloc64(sizeof(XpChunk) + (sqlite3_uint64)nData);
    if( c==0 ) return 0;
    c->nAlloc = nData;
    c->nUsed = 0;
    if( n>XP_CHUNK && pA->pHead ){
      /* a big block: keep the current chunk in front for small ones */
      c->pNext = pA->pHead->pNext;
      pA->pHead->pNext = c;
      c->nUsed = n;
      return (char*)(c+1);
    }
    c->pNext = pA->pHead;
    pA->pHead = c;
  }
  c->nUsed += n;
  return (char*)(c+1) + (c->nUsed - n);
}

/* Free everything but one standard chunk (kept for reuse). */
static void xpArenaReset(XpArena *pA){
  XpChunk *c = pA->pHead, *pKeep = 0;
  while( c ){
    XpChunk *pNext = c->pNext;
    if( pKeep==0 && c->nAlloc==XP_CHUNK ){ pKeep = c; c->nUsed = 0; c->pNext = 0; }
    else sqlite3_free(c);
    c = pNext;
  }
  pA->pHead = pKeep;
}

/* Free every chunk (the arena is then empty and reusable). */
static void xpArenaFree(XpArena *pA){
  XpChunk *c = pA->pHead;
  while( c ){ XpChunk *pNext = c->pNext; sqlite3_free(c); c = pNext; }
  pA->pHead = 0;
}

/* ------------------------------------------------------------------ */
/* The decoder object                                                  */
/* ------------------------------------------------------------------ */

/* An event_metadata entry while its plane is indexed: stats and child ids
** are ranges of the plane's pools (pointers set once the pools stop
** growing). */
typedef struct XpEMeta {
  ProfsumXpEventMeta m;
  int64_t iStat;           /* first stat in aPoolStat */
  int64_t iChild;          /* first child id in aPoolChild */
} XpEMeta;

typedef struct XpSMeta {
  const char *zName;
  int64_t nName;
} XpSMeta;

/* Where the walk is, for messages: -1 = not inside. */
typedef struct XpWhere {
  int64_t iPlane, iLine, iEvent, iStat, iEntry;
  const char *zEntry;      /* kind of iEntry: "event_metadata entry", ... */
} XpWhere;

/* A growing byte buffer (xpTextGrow). */
typedef struct XpBuf {
  unsigned char *a;
  int64_t nAlloc;
} XpBuf;

typedef struct XpStrList {
  ProfsumXpStr *a;         /* z of each is sqlite3_malloc'd */
  int64_t n, nAlloc;
} XpStrList;

struct ProfsumXp {
  PbwIn in;                /* input, names for messages, sticky error */
  unsigned flags;          /* PROFSUM_XP_* */
  ProfsumDiagFn xDiag;
  void *pDiagCtx;
  int64_t anDiag[XP_DK_N]; /* diagnostics of each kind so far */
  XpWhere w;

  /* XSpace */
  int64_t topPos;          /* next top-level field */
  int topDone;
  XpStrList aStr[3];       /* errors, warnings, hostnames */
  int64_t nEvents;         /* events walked or skipped (next ordinal) */

  /* the current plane */
  int inPlane;
  int64_t iPlaneNext;
  ProfsumXpPlane plane;
  int64_t planeStart, planeEnd;  /* its bytes */
  int64_t planePos;        /* second pass: next field */
  int linesDone;
  XpArena planeArena;
  XpEMeta *aEM; int64_t nEM, nEMAlloc;
  ProfsumI64Map emMap;
  XpSMeta *aSM; int64_t nSM, nSMAlloc;
  ProfsumI64Map smMap;
  ProfsumXpStat *aPoolStat; int64_t nPoolStat, nPoolStatAlloc;
  int64_t *aPoolChild; int64_t nPoolChild, nPoolChildAlloc;
  ProfsumXpStat *aPlaneStat; int64_t nPlaneStat, nPlaneStatAlloc;

  /* the current line */
  int inLine;
  int64_t iLineNext;
  ProfsumXpLine line;
  int64_t lineStart, lineEnd;
  int64_t evPos;           /* next field of the event pass */
  int64_t nLineSeen;       /* events returned from this line */
  XpArena lineArena;

  /* the current event */
  ProfsumXpEvent ev;
  ProfsumXpStat *aEvStat; int64_t nEvStatAlloc;
  XpArena evArena;

  /* profsumXpStatText output */
  XpBuf text;
  XpBuf text2;             /* U+FFFD copy of inflated text */
  XpBuf check;             /* output window of xpCstrCheck (discarded) */
  XpBuf lazy;              /* a lazy BYTES value read from the file */
  int64_t iLazyHave;       /* the offset of the value lazy holds (-1: none):
                           ** every event of one metadata asks for the same */
};

/* ------------------------------------------------------------------ */
/* Errors and diagnostics                                              */
/* ------------------------------------------------------------------ */

/* " (plane 0, line 2, event 5, stat 1)" for the position pCtx (an
** XpWhere), into z of nz bytes ("" outside any plane). */
static void xpWhereText(const void *pCtx, char *z, int nz){
  const XpWhere *w = pCtx;
  char a[200];
  int n = 0;
  /* formatted in place, no allocation: a diagnostic's detail cannot lose
  ** its place to an out-of-memory */
  a[0] = 0;
#define XP_WHERE_ADD(...) do{ \
    sqlite3_snprintf((int)sizeof(a)-n, a+n, __VA_ARGS__); n += (int)strlen(a+n); }while(0)
  if( w->iPlane>=0 ) XP_WHERE_ADD(", plane %lld", (long long)w->iPlane);
  if( w->iEntry>=0 ) XP_WHERE_ADD(", %s %lld", w->zEntry, (long long)w->iEntry);
  if( w->iLine>=0 ) XP_WHERE_ADD(", line %lld", (long long)w->iLine);
  if( w->iEvent>=0 ) XP_WHERE_ADD(", event %lld", (long long)w->iEvent);
  if( w->iStat>=0 ) XP_WHERE_ADD(", stat %lld", (long long)w->iStat);
#undef XP_WHERE_ADD
  z[0] = 0;
  if( n>2 ) sqlite3_snprintf(nz, z, " (%s)", a+2);
}

/* Send a diagnostic of kind eKind at byte off (text formatted only for the
** first XP_DIAG_DETAILED of the kind, or every one with
** PROFSUM_XP_ALLDETAILS; in fixed buffers, so that every one gets its
** text: the messages are short). */
static void xpDiag(ProfsumXp *p, int eKind, int64_t off, const char *zFmt, ...){
  va_list ap;
  char zMsg[256];
  char zWhere[200];
  char z[480];
  int64_t idx = p->w.iEvent>=0 ? p->ev.iEvent : -1;
  if( p->xDiag==0 ) return;
  if( ++p->anDiag[eKind] <= XP_DIAG_DETAILED || (p->flags & PROFSUM_XP_ALLDETAILS) ){
    va_start(ap, zFmt);
    sqlite3_vsnprintf((int)sizeof(zMsg), zMsg, zFmt, ap);
    va_end(ap);
    xpWhereText(&p->w, zWhere, sizeof(zWhere));
    sqlite3_snprintf((int)sizeof(z), z, "byte %lld%s: %s", (long long)off, zWhere, zMsg);
    p->xDiag(p->pDiagCtx, idx, off, azXpDiag[eKind], z);
  }else{
    p->xDiag(p->pDiagCtx, idx, off, azXpDiag[eKind], 0);
  }
}

/* A field the decoder does not read: unknown, or known with another wire
** type (protobuf keeps both as unknown fields).  Reported (bDiag) and
** skipped. */
static int xpOther(ProfsumXp *p, int64_t *pPos, int64_t end, int f, int wt, int depth,
                   int eMsg, int64_t tagOff, int bDiag){
  if( bDiag && wt!=4 ){
    const XpFieldDesc *d = profsumXpFieldDesc(eMsg, f);
    if( d==0 ){
      xpDiag(p, XP_DK_UNKNOWN, tagOff, "%s field %d (wire type %d) is not known: skipped",
             profsumXpMsgNames[eMsg], f, wt);
    }else{
      xpDiag(p, XP_DK_WIRE, tagOff, "%s field %d (%s) has wire type %d, not %d: skipped",
             profsumXpMsgNames[eMsg], f, d->zName, wt, d->wt);
    }
  }
  return pbwSkip(&p->in, pPos, end, f, wt, depth, eMsg, tagOff);
}

/* One field of a message as xpField read it. */
typedef struct XpField {
  int f;                   /* field number; 0: not one the decoder reads */
  int wt;                  /* wire type */
  int64_t tagOff;          /* where its tag is */
  uint64_t v;              /* wire types 0 and 1: the value */
  int64_t off, len;        /* wire type 2: its bytes (within the message,
                           ** not fetched by xpField) */
} XpField;

/* Read the field at *pPos of a message of kind eMsg (nesting depth depth)
** ending at end into *d, and move *pPos past it: a field of profsumXpFields with
** its wire type (or packed) with its value; any other one reported and
** skipped by xpOther, with d->f = 0.  SQLITE_OK or the sticky error. */
static inline __attribute__((always_inline)) int xpField(ProfsumXp *p, int64_t *pPos,
                                                         int64_t end, int eMsg, int depth,
                                                         XpField *d){
  int rc;
  d->tagOff = *pPos;
  rc = pbwTag(&p->in, pPos, end, &d->f, &d->wt, eMsg);
  if( rc ) return rc;
  if( __builtin_expect(d->f<XP_FIELD_MAX && (profsumXpFields[eMsg][d->f].mRead>>d->wt & 1), 1) ){
    switch( d->wt ){
      case 0: return pbwVarint(&p->in, pPos, end, &d->v, eMsg);
      case 1: return pbwFixed64(&p->in, pPos, end, &d->v, eMsg);
      default:
        rc = pbwLen(&p->in, pPos, end, &d->len, eMsg, d->f, d->tagOff);
        if( rc ) return rc;
        d->off = *pPos;
        *pPos += d->len;
        return SQLITE_OK;
    }
  }
  rc = xpOther(p, pPos, end, d->f, d->wt, depth, eMsg, d->tagOff, 1);
  d->f = 0;
  return rc;
}

/* The second pass over a message of kind eMsg (nesting depth depth): the
** next occurrence of its length-delimited field f in [*pPos, end), every
** other field skipped unreported (the first pass reported them).
** SQLITE_ROW with *d set and *pPos past the field, SQLITE_DONE at end, or
** the sticky error (*pPos then after the last field skipped). */
static inline int xpNextOf(ProfsumXp *p, int64_t *pPos, int64_t end, int eMsg, int f,
                           int depth, XpField *d){
  while( *pPos<end ){
    int64_t pos = *pPos;
    int rc;
    d->tagOff = pos;
    rc = pbwTag(&p->in, &pos, end, &d->f, &d->wt, eMsg);
    if( rc ) return rc;
    if( d->f==f && d->wt==2 ){
      rc = pbwLen(&p->in, &pos, end, &d->len, eMsg, f, d->tagOff);
      if( rc ) return rc;
      d->off = pos;
      *pPos = pos + d->len;
      return SQLITE_ROW;
    }
    rc = xpOther(p, &pos, end, d->f, d->wt, depth, eMsg, d->tagOff, 0);
    if( rc ) return rc;
    *pPos = pos;
  }
  return SQLITE_DONE;
}

/* Strings and bytes of messages                                       */
/* ------------------------------------------------------------------ */

/* The n bytes at off (fetched), kept: a copy in pA for a plain file (the
** window moves), else a pointer into the window (which does not move
** before pA is reset).  pA==0: transient (valid until the next fetch). */
static int xpKeep(ProfsumXp *p, XpArena *pA, int64_t off, int64_t n, const char **pz){
  if( n==0 ){ *pz = ""; return SQLITE_OK; }
  if( pA && p->in.eSrc==PBW_SRC_FILE ){
    char *z = xpArenaAlloc(pA, n+1);
    if( z==0 ) return pbwNoMem(&p->in);
    memcpy(z, PBW_AT(&p->in, off), (size_t)n);
    z[n] = 0;
    *pz = z;
  }else{
    *pz = (const char*)PBW_AT(&p->in, off);
  }
  return SQLITE_OK;
}

/* A proto3 string field (f of eMsg) of n bytes at off (fetched): checked
** for UTF-8 (an error, or with PROFSUM_XP_LENIENT_UTF8 a U+FFFD copy in
** pFix and a diagnostic), then kept as xpKeep does. */
static int xpString(ProfsumXp *p, XpArena *pKeep, XpArena *pFix, int64_t off, int64_t n,
                    int eMsg, int f, const char **pz, int64_t *pn){
  const unsigned char *a = PBW_AT(&p->in, off);
  int64_t bad = pbwUtf8Check(a, n);
  *pn = n;
  if( bad<n ){
    if( !(p->flags & PROFSUM_XP_LENIENT_UTF8) ){
      return pbwErr(&p->in, PBW_BAD, off+bad, "%s field %d (%s) is not valid UTF-8",
                   profsumXpMsgNames[eMsg], f, profsumXpFieldName(eMsg, f));
    }
    unsigned char *o = xpArenaAlloc(pFix, n*3+1);
    if( o==0 ) return pbwNoMem(&p->in);
    xpDiag(p, XP_DK_UTF8, off+bad, "%s field %d (%s) is not valid UTF-8: read with U+FFFD",
           profsumXpMsgNames[eMsg], f, profsumXpFieldName(eMsg, f));
    pbwUtf8Fix(a, n, o, pn);
    *pz = (const char*)o;
    return SQLITE_OK;
  }
  return xpKeep(p, pKeep, off, n, pz);
}

/* ------------------------------------------------------------------ */
/* XStat                                                               */
/* ------------------------------------------------------------------ */

/* Is a bytes value of n bytes, to be kept in pKeep, left in the file
** (ProfsumXpStat.isLazy)?  Only a plain file's (a gzip stream cannot be
** read again; memory is not copied anyway), and only what would be kept
** with the plane (its metadata and stats: pKeep given). */
static int xpLeaveInFile(const ProfsumXp *p, const XpArena *pKeep, int64_t n){
  return pKeep && p->in.eSrc==PBW_SRC_FILE && n>=(int64_t)PROFSUM_XP_LAZY_MIN;
}

/* Make a lazy BYTES value of *s readable as an ordinary one: fetched and
** kept in pKeep (a compressed string came after it, and the view of a
** reader without that field needs it: profsumXpStatRef). */
static int xpUnlazy(ProfsumXp *p, XpArena *pKeep, ProfsumXpStat *s){
  int rc = pbwNeed(&p->in, s->iLazyOff, s->n, s->iOffset, XM_STAT, 6);
  if( rc==SQLITE_OK ) rc = xpKeep(p, pKeep, s->iLazyOff, s->n, &s->z);
  s->isLazy = 0;
  return rc;
}

/* xpDecodeStat's common forms read in place: metadata_id (field 1) then
** one value, each once and in that order, all of it in the window: a
** number (double 2, uint64 3, int64 4 or ref 7), or a str_value (5) of
** valid UTF-8 (a GPU kernel's details, for one); varints as pbwDecVarint
** reads them, as the general loop does.  Returns -1 for any other form
** (the general loop then reads it from its start, and sends the
** diagnostics), else SQLITE_OK, or out of memory from keeping the text
** (xpKeep in pKeep), with *s filled as the general loop would fill it. */
static int xpStatQuick(ProfsumXp *p, int64_t start, int64_t end, int64_t tagOff,
                       XpArena *pKeep, ProfsumXpStat *s){
  int64_t rel = start - p->in.winOff, n = end - start, i;
  const unsigned char *a;
  uint64_t id, v = 0;
  unsigned t;
  int k;
  if( rel<0 || n<3 || rel+n>p->in.nWin ) return -1;
  a = p->in.aW + rel;
  if( a[0]!=0x08 || (k = pbwDecVarint(a+1, n-1, &id))<=0 || 1+k>=n ) return -1;
  i = 1 + k;
  t = a[i++];
  if( t==0x11 ){                                  /* field 2, fixed64 */
    if( n-i!=8 ) return -1;
    for(k=7; k>=0; k--) v = (v<<8) | a[i+k];      /* little-endian */
  }else if( t==0x18 || t==0x20 || t==0x38 ){      /* fields 3, 4, 7: varints */
    if( (k = pbwDecVarint(a+i, n-i, &v))<=0 || i+k!=n ) return -1;
  }else if( t==0x2a ){                            /* field 5: its length */
    if( (k = pbwDecVarint(a+i, n-i < 10 ? n-i : 10, &v))<=0 || v!=(uint64_t)(n-i-k) ) return -1;
    i += k;
    if( pbwUtf8Check(a+i, (int64_t)v)<(int64_t)v ) return -1;
  }else{
    return -1;
  }
  memset(s, 0, sizeof(*s));
  s->iOffset = tagOff;
  s->metadataId = (int64_t)id;
  switch( t ){
    case 0x11: memcpy(&s->rVal, &v, 8); s->eType = PROFSUM_XV_DOUBLE; break;
    case 0x18: s->uVal = v; s->eType = PROFSUM_XV_UINT64; break;
    case 0x20: s->iVal = (int64_t)v; s->eType = PROFSUM_XV_INT64; break;
    case 0x38: s->uVal = v; s->eType = PROFSUM_XV_REF; break;
    default:
      s->eType = s->eRefType = PROFSUM_XV_STR;
      s->n = (int64_t)v;
      return xpKeep(p, pKeep, start+i, (int64_t)v, &s->z);
  }
  s->eRefType = s->eType;
  return SQLITE_OK;
}

/* Decode the XStat in [start, end) whose tag is at tagOff into *s (the
** bytes of its strings are fetched as they are read: the stat need not be
** in the window).  pKeep: where its strings and bytes are kept (see
** xpKeep; a long bytes value may be left in the file: xpLeaveInFile);
** pFix: where U+FFFD copies go.  Names are resolved later
** (xpResolveStat). */
static int xpDecodeStat(ProfsumXp *p, int64_t start, int64_t end, int64_t tagOff,
                        XpArena *pKeep, XpArena *pFix, ProfsumXpStat *s, int depth){
  int64_t pos = start;
  int rc = SQLITE_OK;
  XpField d;
  if( (rc = xpStatQuick(p, start, end, tagOff, pKeep, s))>=0 ) return rc;
  rc = SQLITE_OK;
  memset(s, 0, sizeof(*s));
  s->iOffset = tagOff;
  while( pos<end ){
    rc = xpField(p, &pos, end, XM_STAT, depth, &d);
    if( rc ) return rc;
    if( s->isLazy && d.f>=2 && d.f<=7 ) s->isLazy = 0;   /* another member replaces it */
    switch( d.f ){
      case 1: s->metadataId = (int64_t)d.v; break;
      case 2: memcpy(&s->rVal, &d.v, 8); s->eType = PROFSUM_XV_DOUBLE; break;
      case 3: s->uVal = d.v; s->eType = PROFSUM_XV_UINT64; break;
      case 4: s->iVal = (int64_t)d.v; s->eType = PROFSUM_XV_INT64; break;
      case 7: s->uVal = d.v; s->eType = PROFSUM_XV_REF; break;
      case 5:
        rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_STAT, d.f);
        if( rc==SQLITE_OK ) rc = xpString(p, pKeep, pFix, d.off, d.len, XM_STAT, d.f, &s->z, &s->n);
        s->eType = PROFSUM_XV_STR;
        break;
      case 6: case 8:
        if( d.f==8 && s->eType!=PROFSUM_XV_CSTR ){
          /* what a reader without field 8 keeps: the member before it */
          if( s->isLazy && (rc = xpUnlazy(p, pKeep, s))!=SQLITE_OK ) return rc;
          s->zPre = s->z;
          s->nPre = s->n;
        }
        s->n = d.len;
        s->eType = d.f==6 ? PROFSUM_XV_BYTES : PROFSUM_XV_CSTR;
        if( d.f==6 && xpLeaveInFile(p, pKeep, d.len) ){
          s->z = 0;
          s->isLazy = 1;
          s->iLazyOff = d.off;
          break;
        }
        s->isLazy = 0;
        rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_STAT, d.f);
        if( rc==SQLITE_OK ) rc = xpKeep(p, pKeep, d.off, d.len, &s->z);
        break;
    }
    if( d.f>=2 && d.f<=7 ) s->eRefType = s->eType;
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* Resolve the stat's name and a ref_value's referenced name through the
** current plane's stat_metadata map. */
static void xpResolveStat(ProfsumXp *p, ProfsumXpStat *s){
  int64_t i = profsumI64MapFind(&p->smMap, s->metadataId);
  if( i>=0 ){ s->zName = p->aSM[i].zName; s->nName = p->aSM[i].nName; }
  else{ s->zName = 0; s->nName = 0; }
  if( s->eRefType==PROFSUM_XV_REF ){
    /* z/n, or zPre/nPre when a compressed string came after the ref */
    const char **pz = s->eType==PROFSUM_XV_REF ? &s->z : &s->zPre;
    int64_t *pn = s->eType==PROFSUM_XV_REF ? &s->n : &s->nPre;
    i = s->uVal <= (uint64_t)INT64_MAX ? profsumI64MapFind(&p->smMap, (int64_t)s->uVal) : -1;
    if( i>=0 ){ *pz = p->aSM[i].zName; *pn = p->aSM[i].nName; }
    else{ *pz = 0; *pn = 0; }
  }
}

/* See xplane_pb.h. */
const ProfsumXpStat *profsumXpStatRef(const ProfsumXpStat *s, ProfsumXpStat *pView){
  if( s->eType!=PROFSUM_XV_CSTR ) return s;
  if( s->eRefType==PROFSUM_XV_NONE ) return 0;
  *pView = *s;
  pView->eType = s->eRefType;
  pView->z = s->zPre;
  pView->n = s->nPre;
  return pView;
}

static int xpCstrCheck(ProfsumXp *p, ProfsumXpStat *s);

/* Decode the stats field d into a new stat appended to
** the growing array (*pa, *pn, *pnAlloc).  iStat: its number for
** messages; pKeep, pFix, depth: as xpDecodeStat's. */
static int xpStatAdd(ProfsumXp *p, ProfsumXpStat **pa, int64_t *pn, int64_t *pnAlloc,
                     int64_t iStat, const XpField *d, XpArena *pKeep, XpArena *pFix,
                     int depth){
  ProfsumXpStat *a = profsumGrowArray(*pa, *pn, pnAlloc, sizeof(*a), 16);
  int rc;
  if( a==0 ) return pbwNoMem(&p->in);
  *pa = a;
  p->w.iStat = iStat;
  rc = xpDecodeStat(p, d->off, d->off+d->len, d->tagOff, pKeep, pFix, &a[*pn], depth);
  /* a compressed string is checked once, where it is decoded, so that
  ** its diagnostic is sent whether or not anyone reads its text */
  if( rc==SQLITE_OK && a[*pn].eType==PROFSUM_XV_CSTR ) rc = xpCstrCheck(p, &a[*pn]);
  (*pn)++;
  p->w.iStat = -1;
  return rc;
}

/* ------------------------------------------------------------------ */
/* Metadata maps (pass 1 of a plane)                                   */
/* ------------------------------------------------------------------ */

/* Append the child id v of *e to the plane's pool. */
static int xpChildPush(ProfsumXp *p, XpEMeta *e, uint64_t v){
  int64_t *a = profsumGrowArray(p->aPoolChild, p->nPoolChild, &p->nPoolChildAlloc,
                                sizeof(*a), 64);
  if( a==0 ) return pbwNoMem(&p->in);
  p->aPoolChild = a;
  a[p->nPoolChild++] = (int64_t)v;
  e->m.nChild++;
  return SQLITE_OK;
}

/* The child_id field d of *e: one id (a varint: no bytes), or packed ids. */
static int xpChildIds(ProfsumXp *p, XpEMeta *e, const XpField *d){
  int64_t pos = d->wt==2 ? d->off : 0, end = d->wt==2 ? d->off + d->len : 0;
  if( d->wt==0 ) return xpChildPush(p, e, d->v);
  while( pos<end ){
    uint64_t v;
    int rc = pbwVarint(&p->in, &pos, end, &v, XM_EMETA);
    if( rc==SQLITE_OK ) rc = xpChildPush(p, e, v);
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* Merge the XEventMetadata in [start, end) into *e (protobuf merges a map
** value given twice in one entry).  Its pieces are fetched as they are
** read; a long metadata field is left in a plain file (xpLeaveInFile). */
static int xpDecodeEventMeta(ProfsumXp *p, int64_t start, int64_t end, XpEMeta *e){
  int64_t pos = start;
  int rc = SQLITE_OK;
  XpField d;
  XpArena *pA = &p->planeArena;
  while( pos<end ){
    rc = xpField(p, &pos, end, XM_EMETA, 3, &d);
    if( rc ) return rc;
    switch( d.f ){
      case 1: e->m.id = (int64_t)d.v; break;
      case 2:
        rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_EMETA, d.f);
        if( rc==SQLITE_OK ) rc = xpString(p, pA, pA, d.off, d.len, XM_EMETA, d.f, &e->m.zName, &e->m.nName);
        break;
      case 3: {
        const char *z = 0;
        if( !xpLeaveInFile(p, pA, d.len) ){
          rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_EMETA, d.f);
          if( rc==SQLITE_OK ) rc = xpKeep(p, pA, d.off, d.len, &z);
        }
        e->m.aMeta = (const unsigned char*)z;
        e->m.nMeta = d.len;
        break;
      }
      case 4:
        rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_EMETA, d.f);
        if( rc==SQLITE_OK ) rc = xpString(p, pA, pA, d.off, d.len, XM_EMETA, d.f, &e->m.zDisplay, &e->m.nDisplay);
        break;
      case 5:
        rc = xpStatAdd(p, &p->aPoolStat, &p->nPoolStat, &p->nPoolStatAlloc, e->m.nStat++,
                       &d, pA, pA, 4);
        break;
      case 6: rc = xpChildIds(p, e, &d); break;
    }
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* Walk one map<int64, message> entry in [start, end): its key
** (field 1) into *pKey, each occurrence of its value (field 2) decoded by
** xValue(p, valueStart, valueEnd, pArg), any other field checked and
** skipped.  SQLITE_OK or the decode error. */
static int xpMapEntry(ProfsumXp *p, int64_t start, int64_t end, int64_t *pKey,
                      int (*xValue)(ProfsumXp*, int64_t, int64_t, void*), void *pArg){
  int64_t pos = start;
  XpField d;
  while( pos<end ){
    int rc = xpField(p, &pos, end, XM_ENTRY, 2, &d);
    if( rc==SQLITE_OK && d.f==1 ) *pKey = (int64_t)d.v;
    if( rc==SQLITE_OK && d.f==2 ) rc = xValue(p, d.off, d.off+d.len, pArg);
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* Store the map value *pVal (sz bytes) under key in the array *pa (*pn
** used of *pnAlloc) indexed by m: in the slot of the key's earlier value
** (a later map entry of the same key replaces an earlier one, in its
** place), else at the end, the array grown when full.  SQLITE_OK, or
** SQLITE_NOMEM (pbwNoMem's). */
static int xpMapStore(ProfsumXp *p, ProfsumI64Map *m, void **pa, int64_t *pn, int64_t *pnAlloc,
                      size_t sz, int64_t key, const void *pVal){
  int64_t iSlot;
  void *a = profsumGrowArray(*pa, *pn, pnAlloc, sz, 64);
  if( a==0 ) return pbwNoMem(&p->in);
  *pa = a;
  iSlot = profsumI64MapFind(m, key);
  if( iSlot<0 ){
    if( profsumI64MapPut(m, key, *pn, &iSlot) ) return pbwNoMem(&p->in);
    iSlot = (*pn)++;
  }
  memcpy((char*)a + (size_t)iSlot*sz, pVal, sz);
  return SQLITE_OK;
}

/* xpMapEntry's value decoder of an event_metadata entry (pArg: XpEMeta). */
static int xpEventMetaValue(ProfsumXp *p, int64_t start, int64_t end, void *pArg){
  return xpDecodeEventMeta(p, start, end, (XpEMeta*)pArg);
}

/* Decode one event_metadata map entry in [start, end), tag at
** tagOff, and store it under its key (xpMapStore). */
static int xpEventMetaEntry(ProfsumXp *p, int64_t start, int64_t end, int64_t tagOff){
  XpEMeta e;
  void *a = p->aEM;
  int rc;
  memset(&e, 0, sizeof(e));
  e.m.zName = e.m.zDisplay = "";
  e.m.iOffset = tagOff;
  e.iStat = p->nPoolStat;
  e.iChild = p->nPoolChild;
  rc = xpMapEntry(p, start, end, &e.m.key, xpEventMetaValue, &e);
  if( rc ) return rc;
  rc = xpMapStore(p, &p->emMap, &a, &p->nEM, &p->nEMAlloc, sizeof(e), e.m.key, &e);
  p->aEM = a;
  return rc;
}

/* xpMapEntry's value decoder of a stat_metadata entry (pArg: XpSMeta):
** only the name is kept; the id is read and the description checked. */
static int xpStatMetaValue(ProfsumXp *p, int64_t start, int64_t end, void *pArg){
  XpSMeta *s = (XpSMeta*)pArg;
  int64_t pos = start;
  XpField d;
  while( pos<end ){
    const char *z;
    int64_t n;
    int rc = xpField(p, &pos, end, XM_SMETA, 3, &d);
    if( rc==SQLITE_OK && d.f>=2 ) rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_SMETA, d.f);
    if( rc==SQLITE_OK && d.f>=2 ){
      /* the description is only checked (never kept) */
      rc = xpString(p, d.f==2 ? &p->planeArena : 0, &p->planeArena, d.off, d.len,
                    XM_SMETA, d.f, &z, &n);
      if( rc==SQLITE_OK && d.f==2 ){ s->zName = z; s->nName = n; }
    }
    if( rc ) return rc;
  }
  return SQLITE_OK;
}

/* Decode one stat_metadata map entry and store it under its key
** (xpMapStore). */
static int xpStatMetaEntry(ProfsumXp *p, int64_t start, int64_t end){
  XpSMeta s;
  int64_t key = 0;
  void *a = p->aSM;
  int rc;
  s.zName = "";
  s.nName = 0;
  rc = xpMapEntry(p, start, end, &key, xpStatMetaValue, &s);
  if( rc ) return rc;
  rc = xpMapStore(p, &p->smMap, &a, &p->nSM, &p->nSMAlloc, sizeof(s), key, &s);
  p->aSM = a;
  return rc;
}

/* Pass 1 over the current plane: every field but the lines (counted and
** skipped unread).  Then the pools stop growing: set the pointers and
** resolve the names of every stat decoded. */
static int xpPlaneIndex(ProfsumXp *p){
  int64_t pos = p->planeStart, end = p->planeEnd, i;
  int rc = SQLITE_OK;
  ProfsumXpPlane *pl = &p->plane;
  int64_t nEntry[2] = {0, 0};
  XpField d;
  XpArena *pA = &p->planeArena;
  while( pos<end ){
    rc = xpField(p, &pos, end, XM_PLANE, 1, &d);
    if( rc==SQLITE_OK && d.f>=2 && d.f!=3
     && (d.f==2 || p->in.eSrc!=PBW_SRC_FILE || d.len<(int64_t)PROFSUM_XP_LAZY_MIN) ){
      /* the field whole in the window (its decoder fetches what it reads
      ** anyway: from a plain file, a long entry is read piece by piece, and
      ** its long bytes values are left in the file) */
      rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_PLANE, d.f);
    }
    if( rc ) return rc;
    switch( d.f ){
      case 1: pl->id = (int64_t)d.v; break;
      case 2: rc = xpString(p, pA, pA, d.off, d.len, XM_PLANE, d.f, &pl->zName, &pl->nName); break;
      case 3: pl->nLines++; break;
      case 4:
        p->w.zEntry = "event_metadata entry";
        p->w.iEntry = nEntry[0]++;
        rc = xpEventMetaEntry(p, d.off, d.off+d.len, d.tagOff);
        p->w.iEntry = -1;
        break;
      case 5:
        p->w.zEntry = "stat_metadata entry";
        p->w.iEntry = nEntry[1]++;
        rc = xpStatMetaEntry(p, d.off, d.off+d.len);
        p->w.iEntry = -1;
        break;
      case 6:
        rc = xpStatAdd(p, &p->aPlaneStat, &p->nPlaneStat, &p->nPlaneStatAlloc, p->nPlaneStat,
                       &d, pA, pA, 2);
        break;
    }
    if( rc ) return rc;
  }
  for(i=0; i<p->nPoolStat; i++) xpResolveStat(p, &p->aPoolStat[i]);
  for(i=0; i<p->nPlaneStat; i++) xpResolveStat(p, &p->aPlaneStat[i]);
  for(i=0; i<p->nEM; i++){
    XpEMeta *e = &p->aEM[i];
    e->m.aStat = e->m.nStat ? p->aPoolStat + e->iStat : 0;
    e->m.aChild = e->m.nChild ? p->aPoolChild + e->iChild : 0;
    e->m.iMeta = i;
  }
  pl->aStat = p->nPlaneStat ? p->aPlaneStat : 0;
  pl->nStat = (int)p->nPlaneStat;
  profsumI64MapDense(&p->emMap);
  profsumI64MapDense(&p->smMap);
  pl->nEventMetadata = p->nEM;
  pl->nStatMetadata = p->nSM;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Lines and events (pass 2 of a plane)                                */
/* ------------------------------------------------------------------ */

/* First pass over the line in [start, end), tag at tagOff: its own fields
** (names kept in the line arena), and the count of its events. */
static int xpLinePrepass(ProfsumXp *p, int64_t start, int64_t end, int64_t tagOff){
  ProfsumXpLine *L = &p->line;
  int64_t pos = start;
  int rc;
  XpField d;
  XpArena *pA = &p->lineArena;
  xpArenaReset(&p->lineArena);
  memset(L, 0, sizeof(*L));
  L->iLine = p->iLineNext++;
  L->iOffset = tagOff;
  L->zName = L->zDisplay = "";
  L->iFirstEvent = p->nEvents;
  p->w.iLine = L->iLine;
  if( p->in.eSrc==PBW_SRC_FILE && end-start <= XP_LINE_WHOLE ){
    rc = pbwNeed(&p->in, start, end-start, tagOff, XM_PLANE, 3);
    if( rc ) return rc;
  }
  while( pos<end ){
    /* an event (field 4, length-delimited: tag byte 0x22) whose tag and
    ** length are in the window is counted and stepped over here, as
    ** xpField would, without its general path: the bulk of a line */
    int64_t rel = pos - p->in.winOff;
    if( rel>=0 && rel+3<=p->in.nWin && pos+3<=end && p->in.aW[rel]==0x22 ){
      const unsigned char *a = p->in.aW + rel + 1;
      int64_t v = -1, k = 0;
      if( a[0]<0x80 ){ v = a[0]; k = 1; }
      else if( a[1]<0x80 ){ v = (int64_t)(a[0]&0x7f) | ((int64_t)a[1]<<7); k = 2; }
      if( v>=0 && v <= end - (pos+1+k) ){
        pos += 1 + k + v;
        L->nEvents++;
        continue;
      }
    }
    rc = xpField(p, &pos, end, XM_LINE, 2, &d);
    if( rc ) return rc;
    switch( d.f ){
      case 1: L->id = (int64_t)d.v; break;
      case 3: L->timestampNs = (int64_t)d.v; break;
      case 9: L->durationPs = (int64_t)d.v; break;
      case 10: L->displayId = (int64_t)d.v; break;
      case 4: L->nEvents++; break;
      case 2: case 11:
        rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_LINE, d.f);
        if( rc==SQLITE_OK && d.f==2 ){
          rc = xpString(p, pA, pA, d.off, d.len, XM_LINE, d.f, &L->zName, &L->nName);
        }else if( rc==SQLITE_OK ){
          rc = xpString(p, pA, pA, d.off, d.len, XM_LINE, d.f, &L->zDisplay, &L->nDisplay);
        }
        if( rc ) return rc;
        break;
    }
  }
  p->plane.nEvents += L->nEvents;
  return SQLITE_OK;
}

/* Start decoding an XEvent whose tag is at tagOff into p->ev: the event
** arena emptied, every field of p->ev set to its default (a memset of the
** struct per event cost a third of the decoding). */
static inline void xpEventBegin(ProfsumXp *p, int64_t tagOff){
  ProfsumXpEvent *e = &p->ev;
  XpChunk *c = p->evArena.pHead;
  if( c ){
    if( c->pNext==0 && c->nAlloc==XP_CHUNK ) c->nUsed = 0;     /* the usual case, inline */
    else xpArenaReset(&p->evArena);
  }
  e->metadataId = 0;
  e->eData = 0;
  e->offsetPs = e->numOccurrences = e->durationPs = 0;
  e->pMeta = 0;
  e->iEvent = p->nEvents;       /* the asm: two 8-byte loads, not one of 16 (docs/performance.md) */
  __asm__ volatile("" ::: "memory");
  e->iLineEvent = p->nLineSeen;
  e->iOffset = tagOff;
  e->pLine = &p->line;
  e->pPlane = &p->plane;
  p->w.iEvent = e->iLineEvent;
}

/* Finish p->ev after its fields were read (nStat of them in p->aEvStat):
** what its data kind leaves unset, the stats' names, its metadata. */
static inline void xpEventEnd(ProfsumXp *p, int64_t nStat){
  ProfsumXpEvent *e = &p->ev;
  int64_t i;
  if( e->eData!=PROFSUM_XD_OFFSET ) e->offsetPs = 0;
  if( e->eData!=PROFSUM_XD_OCCURRENCES ) e->numOccurrences = 0;
  for(i=0; i<nStat; i++) xpResolveStat(p, &p->aEvStat[i]);
  e->aStat = nStat ? p->aEvStat : 0;
  e->nStat = (int)nStat;
  i = profsumI64MapFind(&p->emMap, e->metadataId);
  if( i>=0 ){
    e->pMeta = &p->aEM[i].m;
    e->zName = e->pMeta->zName; e->nName = e->pMeta->nName;
    e->zDisplay = e->pMeta->zDisplay; e->nDisplay = e->pMeta->nDisplay;
  }else{
    e->zName = e->zDisplay = "";
    e->nName = e->nDisplay = 0;
  }
}

/* The XEvent whose tag is at tagOff and whose n bytes are at a (all in
** the window) read in place when it holds only metadata_id, offset_ps and
** duration_ps (tags 0x08, 0x10, 0x18: the bulk of a device line), as
** xpDecodeEvent would read it.  1 when it did, 0 for any other event (its
** other fields, a bad varint): xpDecodeEvent then reads it from its start. */
static int xpEventQuick(ProfsumXp *p, const unsigned char *a, int64_t n, int64_t tagOff){
  ProfsumXpEvent *e = &p->ev;
  int64_t i = 0;
  uint64_t aV[3] = {0, 0, 0};
  int seen = 0, f;
  /* the three fields in the order protobuf writes them, straight through;
  ** then any order, and repeats (the last one counts) */
  for(f=0; f<3 && i<n && a[i]==(unsigned)(0x08 + 8*f); f++){
    int k;
    if( i+1>=n || (k = pbwVarintAt(a+i+1, n-i-1, n-i-1, &aV[f]))==0 ) return 0;
    seen |= 1<<f;
    i += 1 + k;
  }
  while( i<n ){
    unsigned c = a[i];
    int k;
    if( c!=0x08 && c!=0x10 && c!=0x18 ) return 0;
    if( i+1>=n || (k = pbwVarintAt(a+i+1, n-i-1, n-i-1, &aV[(c>>3)-1]))==0 ) return 0;
    seen |= 1<<((c>>3)-1);
    i += 1 + k;
  }
  xpEventBegin(p, tagOff);
  e->metadataId = (int64_t)aV[0];
  if( seen & 2 ){ e->offsetPs = (int64_t)aV[1]; e->eData = PROFSUM_XD_OFFSET; }
  e->durationPs = (int64_t)aV[2];
  xpEventEnd(p, 0);
  return 1;
}

/* Decode the XEvent in [start, end) (fetched), tag at tagOff, into p->ev. */
static int xpDecodeEvent(ProfsumXp *p, int64_t start, int64_t end, int64_t tagOff){
  ProfsumXpEvent *e = &p->ev;
  int64_t pos = start, nStat = 0;
  int rc;
  XpField d;
  xpEventBegin(p, tagOff);
  while( pos<end ){
    /* metadata_id, offset_ps, duration_ps: one-byte tags 0x08, 0x10, 0x18
    ** of known varint fields (what xpField would check), the value read
    ** as xpField reads it */
    int64_t rel = pos - p->in.winOff;
    if( rel>=0 && rel<p->in.nWin ){
      unsigned c = p->in.aW[rel];
      if( c==0x08 || c==0x10 || c==0x18 ){
        uint64_t v;
        pos++;
        rc = pbwVarint(&p->in, &pos, end, &v, XM_EVENT);
        if( rc ) return rc;
        if( c==0x08 ) e->metadataId = (int64_t)v;
        else if( c==0x10 ){ e->offsetPs = (int64_t)v; e->eData = PROFSUM_XD_OFFSET; }
        else e->durationPs = (int64_t)v;
        continue;
      }
    }
    rc = xpField(p, &pos, end, XM_EVENT, 3, &d);
    if( rc ) return rc;
    switch( d.f ){
      case 1: e->metadataId = (int64_t)d.v; break;
      case 2: e->offsetPs = (int64_t)d.v; e->eData = PROFSUM_XD_OFFSET; break;
      case 3: e->durationPs = (int64_t)d.v; break;
      case 5: e->numOccurrences = (int64_t)d.v; e->eData = PROFSUM_XD_OCCURRENCES; break;
      case 4:
        rc = xpStatAdd(p, &p->aEvStat, &nStat, &p->nEvStatAlloc, nStat, &d, 0, &p->evArena, 4);
        if( rc ) return rc;
        break;
    }
  }
  xpEventEnd(p, nStat);
  return SQLITE_OK;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

/* Allocate the decoder with its name for messages. */
static int xpNew(const char *zFunc, const char *zName, unsigned flags, ProfsumDiagFn xDiag,
                 void *pDiagCtx, ProfsumXp **pp){
  ProfsumXp *p = profsumMallocZero(sizeof(*p));
  *pp = 0;
  if( p==0 ) return SQLITE_NOMEM;
  p->in.zFunc = zFunc;
  p->in.azMsg = profsumXpMsgNames;
  p->in.xFieldName = profsumXpFieldName;
  p->in.xWhere = xpWhereText;
  p->in.pWhereCtx = &p->w;
  p->flags = flags;
  p->xDiag = xDiag;
  p->pDiagCtx = pDiagCtx;
  p->iLazyHave = -1;
  p->in.fd = -1;
  p->in.zPath = sqlite3_mprintf("%s", zName);
  if( p->in.zPath==0 ){ sqlite3_free(p); return SQLITE_NOMEM; }
  p->w.iPlane = p->w.iLine = p->w.iEvent = p->w.iStat = p->w.iEntry = -1;
  *pp = p;
  return SQLITE_OK;
}

/* Hand the error of a failed open to the caller and free p. */
static int xpOpenFail(ProfsumXp *p, int rc, char **pzErr){
  if( p->in.zErr ){ *pzErr = p->in.zErr; p->in.zErr = 0; }
  profsumXpClose(p);
  return rc;
}

/* See xplane_pb.h. */
int profsumXpOpen(const char *zFunc, const char *zPath, unsigned flags,
                  ProfsumDiagFn xDiag, void *pDiagCtx,
                  ProfsumXp **pp, char **pzErr){
  ProfsumXp *p;
  int rc = xpNew(zFunc, zPath, flags, xDiag, pDiagCtx, &p);
  *pp = 0;
  if( rc ) return rc;
  rc = pbwOpenFile(&p->in, zPath);
  if( rc ) return xpOpenFail(p, rc, pzErr);
  *pp = p;
  return SQLITE_OK;
}

/* See xplane_pb.h. */
int profsumXpOpenMem(const char *zFunc, const unsigned char *a, int64_t n,
                     const char *zName, unsigned flags,
                     ProfsumDiagFn xDiag, void *pDiagCtx,
                     ProfsumXp **pp, char **pzErr){
  ProfsumXp *p;
  int rc = xpNew(zFunc, zName ? zName : "<memory>", flags, xDiag, pDiagCtx, &p);
  *pp = 0;
  if( rc ) return rc;
  rc = pbwOpenMem(&p->in, a, n);
  if( rc ) return xpOpenFail(p, rc, pzErr);
  *pp = p;
  return SQLITE_OK;
}

/* Copy the sticky error to *pzErr (if asked) and return its code. */
static int xpFail(ProfsumXp *p, char **pzErr){
  if( pzErr && p->in.zErr ){
    *pzErr = sqlite3_mprintf("%s", p->in.zErr);
    if( *pzErr==0 ) return SQLITE_NOMEM;
  }
  return p->in.rc;
}

/* Release the current plane's metadata (and its line and event). */
static void xpPlaneReset(ProfsumXp *p){
  xpArenaReset(&p->planeArena);
  xpArenaReset(&p->lineArena);
  xpArenaReset(&p->evArena);
  profsumI64MapClear(&p->emMap);
  profsumI64MapClear(&p->smMap);
  p->nEM = p->nSM = p->nPoolStat = p->nPoolChild = p->nPlaneStat = 0;
  p->inPlane = p->inLine = 0;
  p->w.iPlane = p->w.iLine = p->w.iEvent = p->w.iStat = p->w.iEntry = -1;
  pbwWinDrop(&p->in, 2*XP_LINE_WHOLE);  /* one big message made it big */
}

/* Append the string field f of XSpace (n bytes at off, fetched). */
static int xpTopString(ProfsumXp *p, int f, int64_t off, int64_t n){
  XpStrList *L = &p->aStr[f==2 ? PROFSUM_XP_ERRORS : (f==3 ? PROFSUM_XP_WARNINGS : PROFSUM_XP_HOSTNAMES)];
  const char *z;
  int64_t nz;
  char *zCopy;
  ProfsumXpStr *a;
  int rc = xpString(p, 0, &p->evArena, off, n, XM_SPACE, f, &z, &nz);
  if( rc ) return rc;
  a = profsumGrowArray(L->a, L->n, &L->nAlloc, sizeof(*a), 4);
  if( a==0 ) return pbwNoMem(&p->in);
  L->a = a;
  zCopy = sqlite3_malloc64((sqlite3_uint64)nz + 1);
  if( zCopy==0 ) return pbwNoMem(&p->in);
  memcpy(zCopy, z, (size_t)nz);
  zCopy[nz] = 0;
  L->a[L->n].z = zCopy;
  L->a[L->n].n = nz;
  L->n++;
  xpArenaReset(&p->evArena);
  return SQLITE_OK;
}

/* See xplane_pb.h. */
int profsumXpNextPlane(ProfsumXp *p, const ProfsumXpPlane **pp, char **pzErr){
  int rc;
  if( p->in.rc ) return xpFail(p, pzErr);
  if( p->inPlane ){
    const ProfsumXpLine *L;
    while( (rc = profsumXpNextLine(p, &L, pzErr))==SQLITE_ROW ){}
    if( rc!=SQLITE_DONE ) return rc;
    xpPlaneReset(p);
  }
  while( !p->topDone ){
    int64_t pos = p->topPos, got;
    XpField d;
    /* the end of the data? */
    if( pos>=p->in.nFile ){ p->topDone = 1; break; }
    rc = pbwFetch(&p->in, pos, 1, &got);
    if( rc ) return xpFail(p, pzErr);
    if( got==0 ){ p->topDone = 1; break; }
    {
      /* a plane's tag: the errors of its length and bytes name the plane */
      int64_t q = pos;
      if( pbwTag(&p->in, &q, p->in.nFile, &d.f, &d.wt, XM_SPACE)==SQLITE_OK && d.f==1 && d.wt==2 ){
        p->w.iPlane = p->iPlaneNext;
      }
    }
    rc = xpField(p, &pos, p->in.nFile, XM_SPACE, 0, &d);
    if( rc==SQLITE_OK && d.f>=1 && (d.f!=1 || p->in.eSrc==PBW_SRC_GZIP) ){
      /* a string, or a gzip plane: all of its bytes now */
      rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_SPACE, d.f);
    }
    if( rc ) return xpFail(p, pzErr);
    p->topPos = pos;
    if( d.f>=2 ){
      rc = xpTopString(p, d.f, d.off, d.len);
      if( rc ) return xpFail(p, pzErr);
    }
    if( d.f!=1 ) continue;
    /* a plane */
    memset(&p->plane, 0, sizeof(p->plane));
    p->plane.iPlane = p->iPlaneNext++;
    p->plane.iOffset = d.tagOff;
    p->plane.nBytes = d.len;
    p->plane.zName = "";
    p->plane.iFirstEvent = p->nEvents;
    p->planeStart = d.off;
    p->planeEnd = d.off + d.len;
    p->planePos = d.off;
    p->linesDone = 0;
    p->iLineNext = 0;
    p->inPlane = 1;
    p->w.iPlane = p->plane.iPlane;
    rc = xpPlaneIndex(p);
    if( rc ) return xpFail(p, pzErr);
    *pp = &p->plane;
    return SQLITE_ROW;
  }
  return SQLITE_DONE;
}

/* See xplane_pb.h. */
int profsumXpNextLine(ProfsumXp *p, const ProfsumXpLine **pp, char **pzErr){
  int rc;
  XpField d;
  if( p->in.rc ) return xpFail(p, pzErr);
  if( !p->inPlane || p->linesDone ) return SQLITE_DONE;
  if( p->inLine ){
    /* events not asked for keep their ordinals */
    p->nEvents += p->line.nEvents - p->nLineSeen;
    p->inLine = 0;
    p->w.iLine = p->w.iEvent = -1;
  }
  rc = xpNextOf(p, &p->planePos, p->planeEnd, XM_PLANE, 3, 1, &d);
  if( rc==SQLITE_ROW ) rc = xpLinePrepass(p, d.off, d.off+d.len, d.tagOff);
  else if( rc==SQLITE_DONE ){ p->linesDone = 1; return SQLITE_DONE; }
  if( rc ) return xpFail(p, pzErr);
  p->lineStart = d.off;
  p->lineEnd = d.off + d.len;
  p->evPos = d.off;
  p->nLineSeen = 0;
  p->inLine = 1;
  *pp = &p->line;
  return SQLITE_ROW;
}

/* See xplane_pb.h. */
int profsumXpNextEvent(ProfsumXp *p, const ProfsumXpEvent **pp, char **pzErr){
  int rc;
  XpField d;
  if( p->in.rc ) return xpFail(p, pzErr);
  if( !p->inLine ) return SQLITE_DONE;
  {
    /* the usual case in place: an event's tag (field 4, length-delimited:
    ** 0x22), a length of one or two bytes, the event whole in the window
    ** and the line, of the fields xpEventQuick reads (three tags and
    ** varints take at most 33 bytes: a longer event has stats, which the
    ** general path reads, or repeats, which it reads as well) */
    int64_t pos = p->evPos, rel = pos - p->in.winOff;
    if( rel>=0 && rel+3<=p->in.nWin && pos+3<=p->lineEnd && p->in.aW[rel]==0x22 ){
      const unsigned char *a = p->in.aW + rel;
      int64_t len = -1, k = 0;
      if( a[1]<0x80 ){ len = a[1]; k = 2; }
      else if( a[2]<0x80 ){ len = (int64_t)(a[1]&0x7f) | ((int64_t)a[2]<<7); k = 3; }
      if( len>=0 && len<=33 && len <= p->lineEnd - (pos+k) && len <= p->in.nWin - (rel+k)
       && xpEventQuick(p, a+k, len, pos) ){
        p->evPos = pos + k + len;
        p->nEvents++;
        p->nLineSeen++;
        *pp = &p->ev;
        return SQLITE_ROW;
      }
    }
  }
  p->w.iEvent = -1;
  rc = xpNextOf(p, &p->evPos, p->lineEnd, XM_LINE, 4, 2, &d);
  if( rc==SQLITE_DONE ) return SQLITE_DONE;
  if( rc==SQLITE_ROW ) rc = pbwNeed(&p->in, d.off, d.len, d.tagOff, XM_LINE, 4);
  if( rc==SQLITE_OK ) rc = xpDecodeEvent(p, d.off, d.off+d.len, d.tagOff);
  if( rc ) return xpFail(p, pzErr);
  p->nEvents++;
  p->nLineSeen++;
  *pp = &p->ev;
  return SQLITE_ROW;
}

/* See xplane_pb.h. */
const ProfsumXpEventMeta *profsumXpEventMeta(ProfsumXp *p, int64_t key){
  int64_t i;
  if( !p->inPlane ) return 0;
  i = profsumI64MapFind(&p->emMap, key);
  return i>=0 ? &p->aEM[i].m : 0;
}

/* See xplane_pb.h. */
const ProfsumXpEventMeta *profsumXpEventMetaAt(ProfsumXp *p, int64_t i){
  if( !p->inPlane || i<0 || i>=p->nEM ) return 0;
  return &p->aEM[i].m;
}

/* See xplane_pb.h. */
const char *profsumXpStatMetaName(ProfsumXp *p, int64_t key, int64_t *pnName){
  int64_t i;
  if( !p->inPlane ) return 0;
  i = profsumI64MapFind(&p->smMap, key);
  if( i<0 ) return 0;
  if( pnName ) *pnName = p->aSM[i].nName;
  return p->aSM[i].zName;
}

/* Grow the text buffer b to at least n bytes. */
static int xpTextGrow(XpBuf *b, int64_t n){
  unsigned char *a;
  if( n<=b->nAlloc ) return SQLITE_OK;
  a = sqlite3_realloc64(b->a, (sqlite3_uint64)n);
  if( a==0 ) return SQLITE_NOMEM;
  b->a = a;
  b->nAlloc = n;
  return SQLITE_OK;
}

/* What xpInflateTo found. */
#define XP_INF_OK   0     /* complete data of at most PROFSUM_XP_MAX_INFLATE bytes */
#define XP_INF_BIG  1     /* more than that */
#define XP_INF_BAD  2     /* not complete gzip or zlib data (bad, truncated,
                          ** bytes after its end that are no gzip member) */

/* Inflate compressed_str_value s (gzip or zlib): with bKeep into p->text.a,
** NUL-terminated, its length in *pn; else through p->check, a 64 KiB
** window whose output is dropped (a check).  gzip may hold several members
** (RFC 1952), inflated one after the other into one text, the bound over
** all of it; any other bytes after the end (zero padding too) are invalid,
** as for Python's gzip.decompress.  *pWhat is XP_INF_*.  SQLITE_OK or
** SQLITE_NOMEM. */
static int xpInflateTo(ProfsumXp *p, const ProfsumXpStat *s, int bKeep, int64_t *pn, int *pWhat){
  const int64_t nWin = 64*1024;
  XpBuf *b = bKeep ? &p->text : &p->check;
  z_stream z;
  int zrc;
  int64_t nOut = 0;
  const int isGzip = s->n>=2 && (unsigned char)s->z[0]==0x1f && (unsigned char)s->z[1]==0x8b;
  *pWhat = XP_INF_BAD;
  if( !bKeep && xpTextGrow(b, nWin) ) return SQLITE_NOMEM;
  memset(&z, 0, sizeof(z));
  if( inflateInit2(&z, 15+32)!=Z_OK ) return SQLITE_NOMEM;
  z.next_in = (Bytef*)s->z;
  z.avail_in = (uInt)s->n;
  for(;;){
    int64_t nBefore;
    if( bKeep && nOut+1 >= b->nAlloc ){
      /* room for one byte over the limit, to see it exceeded */
      int64_t nNew = b->nAlloc ? b->nAlloc*2 : nWin;
      if( nNew > PROFSUM_XP_MAX_INFLATE+2 ) nNew = PROFSUM_XP_MAX_INFLATE+2;
      if( xpTextGrow(b, nNew) ){ inflateEnd(&z); return SQLITE_NOMEM; }
    }
    nBefore = bKeep ? nOut : 0;
    z.next_out = b->a + nBefore;
    z.avail_out = (uInt)(bKeep ? b->nAlloc - 1 - nOut : nWin);
    zrc = inflate(&z, Z_NO_FLUSH);
    nOut += (int64_t)(z.next_out - b->a) - nBefore;
    if( nOut > PROFSUM_XP_MAX_INFLATE ){ *pWhat = XP_INF_BIG; break; }
    if( zrc==Z_STREAM_END && z.avail_in==0 ){
      if( bKeep ){ b->a[nOut] = 0; *pn = nOut; }
      *pWhat = XP_INF_OK;
      break;
    }
    if( zrc==Z_STREAM_END && isGzip && z.avail_in>=2 && z.next_in[0]==0x1f && z.next_in[1]==0x8b ){
      /* the next gzip member: its text follows the ones before */
      if( inflateReset(&z)!=Z_OK ) break;
      continue;
    }
    if( zrc==Z_MEM_ERROR ){ inflateEnd(&z); return SQLITE_NOMEM; }
    if( zrc==Z_OK || (zrc==Z_BUF_ERROR && z.avail_out==0) ) continue;
    break;   /* bad data, truncated data, or bytes after the end */
  }
  inflateEnd(&z);
  return SQLITE_OK;
}

/* Check compressed_str_value s once, where it is decoded (xpInflateTo
** without keeping the text): when it does not inflate within the bound,
** s->cstrBad is set and a diagnostic sent (compressed_too_large,
** compressed_invalid).  SQLITE_OK or SQLITE_NOMEM (pbwNoMem's sticky
** error). */
static int xpCstrCheck(ProfsumXp *p, ProfsumXpStat *s){
  int what;
  if( xpInflateTo(p, s, 0, 0, &what) ) return pbwNoMem(&p->in);
  if( what==XP_INF_BIG ){
    xpDiag(p, XP_DK_CBIG, s->iOffset, "compressed_str_value inflates to more than %d "
           "bytes: stat omitted", PROFSUM_XP_MAX_INFLATE);
  }else if( what==XP_INF_BAD ){
    xpDiag(p, XP_DK_CBAD, s->iOffset, "compressed_str_value is not complete gzip or zlib "
           "data: stat omitted");
  }
  s->cstrBad = what!=XP_INF_OK;
  return SQLITE_OK;
}

/* Inflate the compressed_str_value s into p->text.a (xpInflateTo):
** SQLITE_OK with *pn set; SQLITE_DONE when it cannot be read (xpCstrCheck,
** which saw it first, sent the diagnostic); SQLITE_NOMEM. */
static int xpInflate(ProfsumXp *p, const ProfsumXpStat *s, int64_t *pn){
  int what, rc;
  if( s->cstrBad ) return SQLITE_DONE;     /* told when it was decoded */
  rc = xpInflateTo(p, s, 1, pn, &what);
  if( rc ) return rc;
  return what==XP_INF_OK ? SQLITE_OK : SQLITE_DONE;
}

/* Read the lazy BYTES value s from the file into p->lazy (NUL-terminated),
** with pread, leaving the window where it is (the current event's own
** stats point into it).  SQLITE_OK; SQLITE_NOMEM; PROFSUM_RC_FILEIO for a
** read error or a file that no longer has the bytes (the sticky error). */
static int xpReadLazy(ProfsumXp *p, const ProfsumXpStat *s){
  int64_t got = 0;
  if( p->in.rc ) return p->in.rc;
  if( p->iLazyHave==s->iLazyOff ) return SQLITE_OK;
  p->iLazyHave = -1;
  /* s->n was checked against the bytes of its message, inside the file's
  ** size when it was opened */
  if( xpTextGrow(&p->lazy, s->n+1) ) return pbwNoMem(&p->in);
  while( got<s->n ){
    int64_t nAsk = s->n - got;
    ssize_t r;
    if( nAsk > 0x40000000 ) nAsk = 0x40000000;
    r = pread(p->in.fd, p->lazy.a + got, (size_t)nAsk, (off_t)(s->iLazyOff + got));
    if( r<0 && errno==EINTR ) continue;
    if( r<0 ){
      return pbwErr(&p->in, PROFSUM_RC_FILEIO, -1, "read error at byte %lld (%s)",
                    (long long)(s->iLazyOff + got), strerror(errno));
    }
    if( r==0 ){
      return pbwErr(&p->in, PROFSUM_RC_FILEIO, -1, "the file shrank while it was read "
                    "(it had %lld bytes; it ends before byte %lld)",
                    (long long)p->in.nFile, (long long)(s->iLazyOff + s->n));
    }
    got += r;
  }
  p->lazy.a[s->n] = 0;
  p->iLazyHave = s->iLazyOff;
  return SQLITE_OK;
}

/* See xplane_pb.h. */
char *profsumXpErrMsg(ProfsumXp *p){
  return p->in.zErr ? sqlite3_mprintf("%s", p->in.zErr) : 0;
}

/* See xplane_pb.h. */
int profsumXpStatText(ProfsumXp *p, const ProfsumXpStat *s, const char **pz, int64_t *pn){
  int rc;
  *pz = 0;
  *pn = 0;
  switch( s->eType ){
    case PROFSUM_XV_STR:
      *pz = s->z;
      *pn = s->n;
      return SQLITE_OK;
    case PROFSUM_XV_BYTES: {
      const char *z = s->z;
      if( s->isLazy ){
        rc = xpReadLazy(p, s);
        if( rc ) return rc;
        z = (const char*)p->lazy.a;
      }
      if( pbwUtf8Check((const unsigned char*)z, s->n)==s->n ){
        *pz = z;
        *pn = s->n;
        return SQLITE_OK;
      }
      rc = xpTextGrow(&p->text, s->n*3+1);
      if( rc ) return rc;
      pbwUtf8Fix((const unsigned char*)z, s->n, p->text.a, pn);
      *pz = (const char*)p->text.a;
      return SQLITE_OK;
    }
    case PROFSUM_XV_REF:
      if( s->z ){
        *pz = s->z;
        *pn = s->n;
        return SQLITE_OK;
      }
      rc = xpTextGrow(&p->text, 32);
      if( rc ) return rc;
      sqlite3_snprintf(32, (char*)p->text.a, "%llu", (unsigned long long)s->uVal);
      *pz = (const char*)p->text.a;
      *pn = (int64_t)strlen(*pz);
      return SQLITE_OK;
    case PROFSUM_XV_CSTR: {
      int64_t n = 0;
      rc = xpInflate(p, s, &n);
      if( rc==SQLITE_DONE ) return SQLITE_OK;    /* omitted */
      if( rc ) return rc;
      if( pbwUtf8Check(p->text.a, n)!=n ){
        rc = xpTextGrow(&p->text2, n*3+1);
        if( rc ) return rc;
        pbwUtf8Fix(p->text.a, n, p->text2.a, pn);
        *pz = (const char*)p->text2.a;
        return SQLITE_OK;
      }
      *pz = (const char*)p->text.a;
      *pn = n;
      return SQLITE_OK;
    }
  }
  return SQLITE_OK;
}

/* See xplane_pb.h. */
void profsumXpStrings(ProfsumXp *p, int eWhich, const ProfsumXpStr **pa, int64_t *pn){
  *pa = p->aStr[eWhich].a;
  *pn = p->aStr[eWhich].n;
}

/* See xplane_pb.h (the next ordinal; the total once the walk ended). */
int64_t profsumXpEventsSeen(ProfsumXp *p){ return p->nEvents; }
/* See xplane_pb.h. */
int profsumXpIsGzip(ProfsumXp *p){ return p->in.eSrc==PBW_SRC_GZIP; }
/* See xplane_pb.h (the path or name given at open). */
const char *profsumXpPath(ProfsumXp *p){ return p->in.zPath; }

/* See xplane_pb.h. */
void profsumXpClose(ProfsumXp *p){
  int i;
  int64_t j;
  if( p==0 ) return;
  pbwClose(&p->in);
  for(i=0; i<3; i++){
    for(j=0; j<p->aStr[i].n; j++) sqlite3_free((char*)p->aStr[i].a[j].z);
    sqlite3_free(p->aStr[i].a);
  }
  xpArenaFree(&p->planeArena);
  xpArenaFree(&p->lineArena);
  xpArenaFree(&p->evArena);
  sqlite3_free(p->aEM);
  profsumI64MapClear(&p->emMap);
  sqlite3_free(p->aSM);
  profsumI64MapClear(&p->smMap);
  sqlite3_free(p->aPoolStat);
  sqlite3_free(p->aPoolChild);
  sqlite3_free(p->aPlaneStat);
  sqlite3_free(p->aEvStat);
  sqlite3_free(p->text.a);
  sqlite3_free(p->text2.a);
  sqlite3_free(p->lazy.a);
  sqlite3_free(p->check.a);
  sqlite3_free(p);
}
