/*
** trace_json_int.h — the JSON scanner's state (trace_json.c) and its
** diagnostics (trace_diag.c), shared by those two files only.
*/
#ifndef PROFSUM_TRACE_JSON_INT_H
#define PROFSUM_TRACE_JSON_INT_H

#include "profsum_int.h"
#include "profsum_reader.h"
#include "strindex.h"

#include <string.h>

/* Diagnostics kept per entry (the rest are counted in its one
** more_diagnostics row), even when every diagnostic is asked for
** (PROFSUM_SCAN_ALLDETAILS): an entry gives at most one or two of a field,
** so only repeated keys reach it, and the queue of the entry being parsed
** stays a fixed array that a hostile entry cannot grow. */
#define PROFSUM_MAX_PENDING   8

typedef unsigned char u8;

#define PROFSUM_MAX_ENTRY     ((int64_t)1<<30)   /* 1 GiB: the window for one entry at
                                                 ** most (SQLite allocates < 2 GiB) */

/* A diagnostic held back until the entry it belongs to parsed completely
** (an entry may be parsed twice when it straddles a window refill). */
typedef struct PendingDiag {
  const char *zKind;
  int hasDetail;          /* 0: past the per-kind cap, zDetail unset */
  char zDetail[160];
} PendingDiag;

struct ProfsumScan {
  ProfsumSrc *pSrc;          /* Byte source (owned) */
  const char *zFunc;         /* SQL function name for messages (static) */
  unsigned flags;            /* PROFSUM_SCAN_* */
  ProfsumDiagFn xDiag;       /* Diagnostic callback or NULL */
  void *pDiagCtx;            /* Its context */
  u8 *aBuf;                  /* Window buffer */
  size_t nAlloc;             /* Allocated size of aBuf */
  size_t nBuf;               /* Valid bytes in aBuf */
  size_t iPos;               /* Parse position in aBuf */
  int64_t iBase;             /* Stream offset of aBuf[0] */
  int srcEof;                /* 1 when the source is exhausted */
  int state;                 /* ST_* */
  int bareArray;             /* 1 for the bare-array document form */
  int afterComma;            /* 1 right after a ',' (trailing-comma check) */
  int seenEvents;            /* 1 once a traceEvents array was read */
  int64_t nEntries;          /* traceEvents entries seen */
  int nEventArrays;          /* traceEvents arrays met (a repeated key) */
  int nSkipArrays;           /* profsumScanSkipArrays: arrays to read past */
  int skipping;              /* 1 inside one of those */
  int64_t nSkipped;          /* entries read past in them */
  char *zDisplayTimeUnit;    /* displayTimeUnit value, or NULL */
  ProfsumEvent ev;           /* The current event, unless ... */
  ProfsumEvent *pEv;         /* ... profsumScanSetTarget said where: the
                             ** event being parsed (&ev by default) */
  u8 *aStk;                  /* Container stack for skipping nested values */
  size_t nStk;               /* Allocated size of aStk */
  const char *zErrWhy;       /* P_ERR: reason (static text) */
  const u8 *pErrAt;          /* P_ERR: position in aBuf */
  int nPending;              /* Diagnostics of the entry being parsed */
  PendingDiag aPending[PROFSUM_MAX_PENDING];
  int nPendingLost;          /* Pending diagnostics beyond the array */
  struct {                   /* Diagnostics seen per kind (profsumScanPendDiag) */
    const char *zKind;
    int64_t n;
  } aKindSeen[24];
  int nKindSeen;
  int roundedCapped;         /* time_rounded is past its cap of details */
  int nQuietPend;            /* PROFSUM_SCAN_QUIETROUND: time_rounded of the
                             ** entry being parsed, past the cap, not in
                             ** aPending (they take its places all the same) */
  int64_t nQuietRounded;     /* those of the entries emitted so far */
  unsigned char entryFix;    /* PROFSUM_SF_FIXUP flags of the entry being
                             ** parsed: set as ev.raw.flags of its row */
  unsigned argSet;           /* Bit i: pEv->aArg[i] was set (ARGKEYS) since
                             ** it was last cleared */
  unsigned *pArgSet;         /* where argSet goes when another target is set
                             ** (profsumScanSetTarget), NULL for ev */
  unsigned evArgSet;         /* ev's argSet while another is the target */
  ProfsumStrIndex idx;       /* The window's string index (strindex.h): its
                             ** marks cover aBuf[0..nBuf) after each refill;
                             ** off (idx.xClassify NULL) in the portable mode */
  ProfsumWindowSwapFn xSwap; /* profsumScanHoldWindows: where a refill takes
                             ** its next window from (NULL: the window is
                             ** refilled in place) */
  void *pSwapCtx;
  int timesLater;            /* profsumScanTimesLater */
  struct ProfsumTopMember {  /* PROFSUM_SCAN_TOPMEMBERS: the top-level members kept */
    char *zKey, *zVal;       /* sqlite3_malloc'd, NUL-terminated */
    int nVal;
  } *aTop;
  int nTop, nTopAlloc;
};

/* scanwin.c: move the unparsed bytes to the start of the window (of a new
** one with xSwap), grow it if it is full, and read more from the source
** until the window is full or the source ends.  Returns SQLITE_OK or an
** error (*pzErr set). */
int profsumScanRefill(ProfsumScan *s, char **pzErr);

/* (PROFSUM_DIAG_DETAIL_CAP, the cap of details per kind: profsum_reader.h) */

/* trace_fields.c: the top-level displayTimeUnit's value v at byte iOff
** (the last one counts; not a string or null: absent, diagnostic). */
int profsumScanSetUnit(ProfsumScan *s, const ProfsumSpan *v, int64_t iOff, char **pzErr);

/* trace_fields.c: the text of the top-level key span k into zBuf
** (PROFSUM_TOP_KEY_MAX+1 bytes, NUL-terminated), read before the value
** (whose refills may move the window under k).  Its length, -1 for a key
** not to keep (longer than PROFSUM_TOP_KEY_MAX, or with a NUL), or -2
** when out of memory decoding its escapes. */
int profsumScanTopKey(const ProfsumSpan *k, char *zBuf);

/* trace_fields.c: with PROFSUM_SCAN_TOPMEMBERS, keep the top-level member
** of key zKey (nKey bytes, from profsumScanTopKey) whose value is the
** text z[0..n) (profsumScanTopAt says what is kept).  SQLITE_OK, or
** SQLITE_NOMEM with *pzErr set. */
int profsumScanKeepTop(ProfsumScan *s, const char *zKey, int nKey, const u8 *z, size_t n, char **pzErr);

/* trace_fields.c: free the members kept (profsumScanClose). */
void profsumScanTopFree(ProfsumScan *s);

/* Queue a diagnostic for the entry being parsed (emitted once it parsed);
** past PROFSUM_DIAG_DETAIL_CAP of a kind the detail is not formatted. */
void profsumScanPendDiag(ProfsumScan *s, const char *zKind, const char *zFmt, ...);

/* Would a diagnostic of this kind still get its detail formatted? */
int profsumScanDiagWanted(ProfsumScan *s, const char *zKind);

/* Emit the queued diagnostics of the entry idx at iOffset. */
void profsumScanFlushDiag(ProfsumScan *s, int64_t idx, int64_t iOffset);

/* The error of a P_ERR (trace_json.c): "<func>: '<file>': JSON syntax
** error at byte N (entry K): <why>" from s->pErrAt and s->zErrWhy into
** *pzErr; returns SQLITE_ERROR. */
int profsumScanSyntaxError(ProfsumScan *s, char **pzErr);

/* At the '}' that ends the top-level object: when it had no traceEvents
** array (absent or null), the no_trace_events diagnostic, so that a wrong
** file (another JSON of the profile folder) is not silently an empty
** trace. */
void profsumScanNoEventsDiag(ProfsumScan *s);

/* Quote up to 40 bytes of a value for a diagnostic detail. */
void profsumScanQuote(char *zOut, int nOut, const char *z, int64_t n);

/* profsumScanPendDiag for a kind past its cap of details (profsumScanDiagWanted said no, and
** the count of a kind only grows): queued without a detail, to be
** counted when the entry's diagnostics are emitted. */
static inline void scanPendCapped(ProfsumScan *s, const char *zKind){
  PendingDiag *d;
  if( s->nPending + s->nQuietPend>=PROFSUM_MAX_PENDING ){ s->nPendingLost++; return; }
  d = &s->aPending[s->nPending++];
  d->zKind = zKind;
  d->hasDetail = 0;
}

/* Emit a diagnostic immediately (not tied to a re-parsable entry). */
static inline void scanEmitDiag(ProfsumScan *s, int64_t idx, int64_t iOffset,
                     const char *zKind, const char *zDetail){
  if( s->xDiag ) s->xDiag(s->pDiagCtx, idx, iOffset, zKind, zDetail);
}

/* profsumScanFlushDiag where there is something to emit: the call is
** skipped for the entries without a diagnostic (most), and without a
** callback (nothing is queued then). */
static inline void scanFlushDiag(ProfsumScan *s, int64_t idx, int64_t iOffset){
  if( s->nQuietPend ){
    /* counted, as the callback would have (it gets the entry's others) */
    s->nQuietRounded += s->nQuietPend;
    s->nQuietPend = 0;
  }
  if( s->xDiag && (s->nPending || s->nPendingLost) ) profsumScanFlushDiag(s, idx, iOffset);
}

/* A time_rounded past the cap with PROFSUM_SCAN_QUIETROUND: it takes a
** place of the entry's queue as scanPendCapped's would (so the entry's
** other diagnostics are kept or lost as without the flag), counted when
** the entry's diagnostics are emitted. */
static inline void scanPendQuiet(ProfsumScan *s){
  if( s->nPending + s->nQuietPend>=PROFSUM_MAX_PENDING ){ s->nPendingLost++; return; }
  s->nQuietPend++;
}

/* The values of the event's fields that the one-pass readers do not take
** (trace_fields.c): a pid or tid (an integer, an integral number, a
** string, null); a ts or dur converted by profsumParseMicros (rc: its
** answer, *pVal set when rc >= 0), or read from v (a number, a string,
** null); each with its diagnostics. */
void profsumScanSetId(ProfsumScan *s, const char *zKey, const ProfsumSpan *v, ProfsumId *pId);
void profsumScanTimeTaken(ProfsumScan *s, const char *zKey, const ProfsumSpan *v, int rc,
                          int *pHas, profsum_ps *pVal, int *pRounded, ProfsumSpan *pText);
void profsumScanSetTime(ProfsumScan *s, const char *zKey, const ProfsumSpan *v,
                        int *pHas, profsum_ps *pVal, int *pRounded, ProfsumSpan *pText);
/* An escaped "ph" that decodes to one ASCII character ("\u0058") becomes
** that character (ev->aPhText); any other is left as it is. */
void profsumScanPhUnescape(ProfsumEvent *ev);

/* *d = *v field by field: v was just written by the value scanners, its
** type and flags byte by byte, and a copy of the whole struct reads those
** two with the padding as one 8-byte word, which the CPU cannot forward
** from the two byte stores (a stall of a dozen cycles per member). */
static inline void spanCopy(ProfsumSpan *d, const ProfsumSpan *v){
  d->z = v->z;
  d->n = v->n;
  d->type = v->type;
  d->flags = v->flags;
}

#endif /* PROFSUM_TRACE_JSON_INT_H */
