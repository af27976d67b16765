/*
** insights_xla_int.h — the InsXla collector's records, shared by its
** collecting half (insights_xla.c) and its write (insights_xla_write.c).
** Not included elsewhere.
*/
#ifndef PROFSUM_INSIGHTS_XLA_INT_H
#define PROFSUM_INSIGHTS_XLA_INT_H

#include "insights_int.h"
#include "strpool.h"
#include "spanmemo.h"

/* Interned strings (insXlaIntern). */
typedef ProfsumStrPool XPool;          /* no maxBytes: never full */

/* A map of 64-bit keys to ints (insights_xla.c). */
typedef struct XMap { uint64_t *aKey; int32_t *aVal; int64_t nSlot, nUsed; } XMap;

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

/* A process: an XPlane plane, or a JSON pid. */
typedef struct XProc {
  int32_t name;         /* interned name, -1: not known (yet) */
  int hasEvents;        /* any event of the plane / pid (not M) */
  int32_t vendor, model;  /* device_vendor, device_type_string: ids or -1 */
  unsigned has;         /* bit DS_*: a[] known (a usable value) */
  double a[DS_N];       /* in the unit stored: the clock in Hz, the peaks
                        ** per second (insXlaXpPlane) */
} XProc;

/* Line kinds. */
#define LK_UNKNOWN 0    /* JSON: thread name not known yet */
#define LK_XLA     1    /* XLA Ops */
#define LK_ASYNC   2    /* Async XLA Ops */
#define LK_STREAM  3    /* Stream #... (GPU) */
#define LK_OTHER   4    /* not a device-op line */

/* What a line keeps for the per-step figures is bounded: at most XCAP
** busy intervals and XCAP records of FLOPs and bytes.  A full list is
** coarsened: the neighbours closest in time are merged (the gaps up to the
** median), keeping exact sums; a step boundary that then falls inside a
** merged entry is prorated by time (profsum_utilization.exact = 0). */
#define XCAP 1024
/* Nesting deeper than this on a line: its self times are not computed. */
#define XSTK_CAP 4096
/* Metadata keys below this are looked up in an array (encoders number
** them 1, 2, ...), the others hashed. */
#define XDIRECT (1<<20)
#define XREF_MEMO 1024        /* entries of InsXla.aRefMemo (a power of two) */

/* Busy time on a line, ps relative to the collector's base: events merged
** while they overlap or touch (busy == e - s), or merged when coarsened
** (busy < e - s: the busy time inside [s, e)). */
typedef struct XIv { int64_t s, e, busy; } XIv;

/* FLOPs and bytes of the events that started in [s, sLast] (one event:
** s == sLast, until coarsened). */
typedef struct XRec {
  int64_t s, sLast;     /* the first and the last op's start */
  int64_t e;            /* the latest end of its ops */
  int64_t eMax;         /* the write's: the latest e of the line's records
                        ** up to this one, in start order (a search key) */
  double mflops;        /* Σ model_flops, else flops (MFU) */
  double bytes;         /* Σ bytes_accessed */
  int32_t nF, nB;       /* events with FLOPs, with bytes */
  int32_t nOp;          /* ops merged into it (1: an op's own record) */
} XRec;

/* The nesting stack of a line (self time). */
typedef struct XStk { int64_t e; int32_t agg; } XStk;

/* A line (XPlane) or a (pid, tid) track (JSON). */
typedef struct XTrack {
  int32_t proc;         /* index in aProc */
  int32_t thread;       /* JSON: thread name id, -1 unknown */
  int kind;             /* LK_* (JSON: resolved at the write) */
  int unsorted;         /* an event started before the one before it */
  int tooDeep;          /* nesting beyond XSTK_CAP: self times unknown */
  int coarse;           /* a list was coarsened */
  int hasLast; int64_t lastS;
  XStk *aStk; int32_t nStk, nAllocStk;
  XIv *aIv; int64_t nIv, nAllocIv;       /* busy intervals, in line order */
  XRec *aRec; int64_t nRec, nAllocRec;    /* FLOPs and bytes, in line order */
} XTrack;

#define XF_FLOPS   0x01
#define XF_MFLOPS  0x02
#define XF_BYTES   0x04

/* One aggregate of device-op events. */
typedef struct XAgg {
  int32_t trk, name, hloOp, module, cat, fw;   /* ids, -1: absent */
  int64_t count, durPs, selfPs;
  double flops, mflops, bytes;
  unsigned fl;          /* XF_* */
} XAgg;

/* What the stats of an event (or of its metadata) give. */
typedef ProfsumInsStats XOpStats;

/* JSON: what the last device-op event of one summary-engine event key
** (insights.h: same track, name, tf_op, source, long_name signature) gave,
** and the raw text of the args it was read from: a later event of that key
** whose args of XMEMO_N spans are the same bytes gives the same stats and
** goes to the same aggregate, read without interning or parsing again. */
#define XMEMO_N 7             /* hlo_op, hlo_module, hlo_category, name,
                              ** flops, bytes_accessed, model_flops */
#define XMEMO_MAX_BYTES ((int64_t)8<<20)   /* raw text kept by all memos */
_Static_assert(XMEMO_N<=SPANMEMO_MAX, "XMemo's spans in a SpanMemo");
typedef struct XMemo {
  SpanMemo sm;          /* the args spans of the last event (spanmemo.h) */
  XOpStats st;          /* its stats; st.lastAgg its aggregate (-1: none
                        ** yet) on track st.lastTrk */
} XMemo;

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
  /* XPlane, first step (insXlaXpPlane, insXlaXpEvent): the current
  ** plane and line, the plane's metadata cache, the string pool and aProc */
  int32_t curProc;
  int curDev;           /* the current plane is a /device: plane */
  int64_t curLine;      /* iFirstEvent of the current line, -1 none */
  int32_t curTrk;       /* its track (as the second step numbers them), -1:
                        ** not a device-op line */
  int32_t nTrkStarted;  /* tracks the second step was told to start */
  XMap metaCache;       /* plane's metadata key → aMeta index (keys >= XDIRECT) */
  int32_t *aDirect; int64_t nDirect;   /* the same for keys in [0, nDirect): index or -1 */
  XOpStats *aMeta; int64_t nMeta, nAllocMeta;
  /* the interned id of a reference stat's text (xStatText) by its value, a
  ** stat metadata id of the current plane: direct-mapped by the value's
  ** low bits; an entry counts while its gen is refGen, which
  ** insXlaXpPlane moves on at each plane (0: no entry). XLA's GPU tracer
  ** writes kernel_details, hlo_op, hlo_module and tf_op as references. */
  struct XRefMemo { uint64_t ref; int32_t id; uint32_t gen; } aRefMemo[XREF_MEMO];
  uint32_t refGen;
  /* XPlane, second step (insXlaXpApply): the track of the ops, the copies
  ** of the plane's metadata entries (SHIP; their lastTrk/lastAgg); aTrk,
  ** aAgg, the base and the counts below are this step's too.  The first
  ** step runs on the reader's decoding side, this one on either side,
  ** one at a time (insights.h): they share no field. */
  int32_t applyTrk;
  XOpStats *aMetaE; int64_t nAllocMetaE;
  XMemo *aMemo; int64_t nMemo;    /* JSON: by the engine's event key */
  int64_t nMemoBytes;             /* the memos' raw text (XMEMO_MAX_BYTES) */
  int64_t lastPid; int32_t lastProc;  /* JSON: the last pid and its process
                                  ** (lastProc -1: none yet) */
  uint64_t lastTrkKey; int32_t lastTrk;  /* JSON: the same for (pid, tid) */
  char *zBuf; int64_t nBuf;       /* scratch text */
  int64_t aGap[64];               /* scratch of the coarsening: the sampled gaps */
  int64_t nDevOps, nFlopsOps, nMflopsOps, nBytesOps;
  InsDiag diag;          /* a device stat left out (insXlaXpPlane): kinds
                        ** device_stat_out_of_range, device_stat_unreadable,
                        ** their 'suppressed' rows in that order */
};

/* The id of z[0..n) in *pId, interned when new.  SQLITE_OK or NOMEM. */
int insXlaIntern(XPool *p, const char *z, int64_t n, int32_t *pId);
/* The line kind (LK_*) of a line or thread named z[0..n). */
int insXlaLineKind(const char *z, int64_t n);
/* 1 when z[0..n) names a device ("/device:..."). */
int insXlaIsDevice(const char *z, int64_t n);

#endif /* PROFSUM_INSIGHTS_XLA_INT_H */
