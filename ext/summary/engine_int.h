/*
** engine_int.h — what the files of stage A (summary_engine.c and its
** engine_*.c) share: the hash map, the string pool, the event records, the
** engine itself and the helpers one of them defines for the others.  Not
** included outside stage A.
*/
#ifndef PROFSUM_ENGINE_INT_H
#define PROFSUM_ENGINE_INT_H

#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "spanmemo.h"
#include "diaglist.h"

#include <pthread.h>

/* ------------------------------------------------------------------ */
/* Hash map of (int64, int64) keys to two int64 values (engine_store.c) */
/* ------------------------------------------------------------------ */
typedef struct HEnt { int64_t k1, k2, v1, v2; int used; } HEnt;
typedef struct HMap { HEnt *a; int64_t nSlot, nUsed; } HMap;

/* ------------------------------------------------------------------ */
/* String pool: interned strings with dense ids (engine_store.c)       */
/* ------------------------------------------------------------------ */
/* The texts live in blocks that are never moved or freed before
** profsumEngSpFree: a pointer SP_STR(p, id) stays valid for the engine's
** life, across any later profsumEngSpIntern (which may add a block, and
** grows the id arrays and the hash slots, but never moves a text).
** Callers keep such pointers while interning more (partsOf's parts point
** into the name and tf_op texts), so no text may ever move. */
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

#define SP_STR(p,id) ((const char*)(p)->azStr[id])
#define SP_LEN(p,id) ((p)->aLen[id])

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

/* One complete event: 16 bytes.  What repeats from event to event (the
** track and the interned name, tf_op, source and shape signature) is one
** id into the engine's table of event keys: a few thousand distinct keys
** stand for millions of events, so that what an import holds at its peak
** grows by 16 bytes an event, not by the event's ids and strings.  The
** dur takes 32 bits: one below DUR32_BIG ps (2.1 ms) is there as is, a
** longer one (a step, a module: few events of a trace) is kept in
** Engine.aDurBig and the record has its index (read it with EVDUR).
** What only some events have lives beside the records: the run_id
** (Engine.aRun, by block: EvRunBlk, profsumEngRun) and, once
** profsumEngOrder has ordered the events, the exclusive time of the events
** that have a child (Engine.aParPos/aParEx, or for device ops
** aXrPos/aXrEx; every other event's is its dur: profsumEngExclNext). */
typedef struct SEv {
  int64_t ts;           /* start, ps relative to the origin */
  uint32_t dur32;       /* dur ps (> 0) below DUR32_BIG, else DUR32_BIG | i:
                        ** the dur is Engine.aDurBig[i] (EVDUR) */
  int32_t key;          /* index into Engine.aKey */
} SEv;
_Static_assert(sizeof(SEv)==16, "an event record is 16 bytes");

/* The run_ids of one block of events, as runs: entry i says that the
** events from offset aOff[i] in the block on, up to the next entry's, have
** run_id aId[i] (-1: none; before the first entry, none), 8 bytes per
** change of run_id; once that would be more than an array by offset (4
** bytes per event of the block: half a block of changes), that array.  A
** module's ops, which carry its execution's run_id, come one after the
** other in a trace (one run of ids), and most other events have none: a
** block holds a few entries, or none. */
typedef struct EvRunBlk {
  int32_t *aDense;      /* EV_BLOCK entries, or 0 while the runs serve */
  uint32_t *aOff;       /* the runs: first offsets, increasing */
  int32_t *aId;         /* and their run_ids */
  int64_t n, nAlloc;    /* runs, room */
} EvRunBlk;

#define DUR32_BIG 0x80000000u
#define EX32_BIG 0xffffffffu

/* What an event shares with others of its kind (string ids, -1: absent). */
typedef struct EvKey {
  int32_t trk;          /* track index, in order of first appearance */
  int32_t name;
  int32_t tfop;
  int32_t source;
  int32_t sig;          /* shape signature of args.long_name */
  int32_t hostMem;      /* 1 when that text, or in an XPlane the metadata's
                        ** raw name, names the host memory space "S(5)" (a
                        ** TPU host-offload copy's buffers: profsumEngHasHostMem) */
} EvKey;

#define EV_SHIFT 16
#define EV_BLOCK ((int64_t)1<<EV_SHIFT)
#define EV_FIRST ((int64_t)4096)   /* records of the first block at first */
#define EV_PREFAULT ((int64_t)1024)   /* records whose pages are mapped at a time (16 KiB) */
#define EV(e,i)  (&(e)->apBlk[(i)>>EV_SHIFT][(i)&(EV_BLOCK-1)])
#define KEY(e,r) (&(e)->aKey[(r)->key])
/* the event at processing position i (Engine.aOrd, or i itself) */
#define ORD(e,i) ((e)->aOrd ? (e)->aOrd[i] : (int32_t)(i))
/* Walks in processing order read the record of position i, and with a
** processing order (JSON: the records lie in file order, the tracks'
** events interleaved) those reads jump about the records: ask for the
** record ORD_AHEAD positions on while this one is handled.  Without an
** order the walk is sequential and the hardware prefetches on its own. */
#define ORD_AHEAD 16
#define ORD_PREFETCH(e,i,n) do{ \
    if( (e)->aOrd && (i)+ORD_AHEAD<(n) ) __builtin_prefetch(EV((e), (e)->aOrd[(i)+ORD_AHEAD])); \
  }while(0)

typedef struct STrack {
  int64_t pid, tid;
  int32_t proc, thread;   /* name string ids or -1 */
  int isDevice, isHost, isDevOp, isSteps;
  int64_t iFirst, nEv;    /* slice of the track-ordered index array */
  /* An XPlane line's track: the line's timestamp_ns and origin −
  ** timestamp_ns×1000 (set at its first event), from which the reference's
  ** doubles of each event are made again when needed (xpTsOf in
  ** engine_order.c) instead of kept per event. */
  int64_t xpTsNs;
  double xpTsUs;          /* (double)xpTsNs / 1000.0, made once per line */
  int64_t xpTolPs;        /* two points of this line whose exact times
                          ** differ by more than this many ps order as their
                          ** doubles do (0: not known yet; xpLineTolerance) */
  profsum_ps xpBase; int xpHasBase;
} STrack;

struct ProfsumEngine {
  sqlite3 *db;
  const char *zSchema;
  sqlite3_int64 traceId;
  const char *zFunc;
  char **pzErr;
  SPool pool;
  SEv **apBlk;          /* event records in blocks of EV_BLOCK (see noteX) */
  EvRunBlk *aRun;       /* per block (nAllocBlk entries), its events'
                        ** run_ids (profsumEngRun; profsumEngSetRun) */
  int64_t nRunEv;       /* the events read that have a run_id */
  int64_t nEv, nBlk, nAllocBlk;
  int64_t nEvCap;       /* records the blocks hold (the first may be partial) */
  STrack *aTrk; int32_t nTrk, nAllocTrk;
  EvKey *aKey; int32_t nKey, nAllocKey;
  int32_t *aKeySlot;    /* open addressing over aKey: index+1, 0 = empty */
  int64_t nKeySlot;
  HMap trkMap;          /* (pid,tid) → track index */
  HMap procMap;         /* (pid,0) → process name id */
  HMap threadMap;       /* (pid,tid) → thread name id */
  /* args.step_num of the events that have one: aStepNum[i] of event
  ** aStepEv[i], in increasing event index (profsumEngStepOf) */
  int32_t *aStepEv; int64_t *aStepNum;
  int64_t nStep, nAllocStep;
  /* The exclusive times as the reference's doubles give them of the device
  ** ops that had a child (max(0, dur − Σ children's dur), §2 in doubles;
  ** every other event's is its dur's double): aXrVal[i] for the event at
  ** processing position aXrPos[i] (a position in aOrd), in increasing
  ** position (profsumEngExclRefAt).  16 bytes per such event with aXrEx:
  ** a trace of deeply nested device ops has one per event. */
  int32_t *aXrPos; double *aXrVal;
  uint32_t *aXrEx;      /* and their exclusive times in exact ps (§2), or
                        ** EX32_BIG: the value is exclBig's */
  int64_t nXr, nAllocXr;
  /* The run_ids of the events that have one (profsumEngRun >= 0), in processing
  ** order, made by profsumEngOrder's sweep as groups: aRunN[i] events
  ** with run_id aRunId[i], the first at processing position aRunPos[i]
  ** (a group goes on while the events that have a run_id have the same;
  ** events without one between them do not end it).  Increasing
  ** position; 12 bytes a group, where a module's ops make one. */
  int32_t *aRunPos, *aRunId, *aRunN;
  int64_t nRun, nAllocRun;
  /* The exclusive times (§2, exact ps) of the events that have a child,
  ** device ops excepted (aXrEx), made by profsumEngOrder's sweep:
  ** aParEx[i] of the event at processing position aParPos[i], in
  ** increasing position, or EX32_BIG: the value is exclBig's; every other
  ** event's is its dur (profsumEngExclNext).  8 bytes per such event. */
  int32_t *aParPos; uint32_t *aParEx;
  int64_t nPar, nAllocPar;
  HMap exclBig;         /* processing position → exclusive ps of the
                        ** events whose exclusive time is EX32_BIG ps or more */
  int64_t *aDurBig;     /* the durs of DUR32_BIG ps or more (SEv.dur32), in
                        ** event order */
  int64_t nDurBig, nAllocDurBig;
  /* The doubles of the ts and dur texts of the events whose text had more
  ** than 6 decimals and whose doubles differ from those of the rounded
  ** picoseconds ("Float decisions"): none where 17-digit texts are the
  ** doubles of their picoseconds (the generated captures' JSON), but most
  ** events of an xprof-converted GPU trace (its doubles an ulp off) and
  ** many of a trace written from float arithmetic (0.7000000000000001); 16 bytes
  ** each, in event order, found from a bit per event and the number of
  ** entries before each 64 events (a rank: no search).  An XPlane keeps
  ** none: its doubles are made again from each line's timestamp
  ** (engine_order.c). */
  double *aFloatTs, *aFloatDur;
  int64_t nFloat, nAllocFloat;
  uint64_t *aFloatBit;  /* bit i%64 of word i/64: event i has an entry */
  int32_t *aFloatRank;  /* per word: the entries of the events before it */
  int64_t nFloatWord;   /* words set (up to the last event with an entry) */
  int64_t nAllocFloatBit, nAllocFloatRank;
  int anyRounded;       /* some accepted event's ts or dur text was rounded */
  int64_t tolPs;        /* exact differences above this many ps decide as the
                        ** doubles would; at or below it the doubles decide */
  int64_t nFlip;        /* near-tie comparisons the doubles decided otherwise
                        ** than the exact times (profsumEngCmpPoint): then the import
                        ** checks the nesting on exact times (engExactCheck) */
  HMap sigCache;        /* (64-bit hash of long_name, its length) → its
                        ** signature id and host-memory flag (v1, SIG_PACK of
                        ** engine_read.c) and the long_name text (v2,
                        ** sqlite3_malloc'd), which a hit compares: two texts
                        ** with one hash never share a signature */
  int64_t nSigCacheBytes; /* long_name bytes held by sigCache */
  HMap sigLast;         /* name id → the last long_name seen with that name
                        ** (v1: sqlite3_malloc'd copy, its length first) and
                        ** its SIG_PACK (v2): an op's events repeat one
                        ** long_name, so one memcmp replaces hashing it
                        ** (names of ids past ARGMEMO_MAX_NAMES: the others
                        ** keep these two in aArgMemo) */
  int64_t nSigLastBytes;  /* long_name bytes held by sigLast */
  struct ArgMemo *aArgMemo;  /* by name id: the tf_op and source of the
                        ** name's last event, and its sigLast entry
                        ** (engine_read.c, argMemo*) */
  int32_t nArgMemo;
  int64_t nArgMemoBytes;  /* raw bytes they hold */
  SpanMemo runMemo;     /* the raw args.run_id span of the last X event taken
                        ** (up to RUNMEMO_MAX_BYTES; engine_read.c) */
  int64_t nRunMemoBytes;  /* the bytes runMemo holds */
  int32_t lastRunId;    /* its id */
  int64_t lastPid, lastTid; int32_t lastTrk;   /* the previous event's track */
  /* profsumEngOrder's count of each track's events (STrack.nEv), made as
  ** noteX takes them: nCounted events so far, whether a track came after
  ** one of a higher index (the events are then not track by track) */
  int64_t nCounted; int32_t cntPrevTrk; int cntUngrouped;
  profsum_ps origin; int hasOrigin;
  profsum_ps tsMin, endMax; int hasRange;
  profsum_ps tsMax;     /* the latest start of the events taken */
  /* Ordering each XPlane line as it comes (engine_order.c,
  ** profsumEngTrackPart/Done): tracks [0, nTrk) with events [0, iEv) are
  ** in processing order, swept and their run_ids moved, and so are the
  ** next track's events up to iSwept, unless off. */
  struct EngEarly {
    int off;              /* given up: profsumEngOrder orders every track */
    int started;          /* a track was begun */
    int32_t nTrk;         /* tracks done */
    int64_t iEv;          /* their events: [0, iEv) */
    int64_t iSwept;       /* the events checked and pushed by the sweep (their
                          ** run_ids are in aRunPos/aRunId) */
    double q;             /* the largest extent of the next track's events so
                          ** far (its tolerance's, xpTolFromExtent) */
    int64_t nDevOpEv;     /* device-op events swept: aXrPos's bound */
    int64_t nFlip0;       /* nFlip before the first track */
    struct NestStk {      /* the sweep's stack (engine_order.c, sweepTrack) */
      int32_t *aStk;
      int64_t *aChild;
      int64_t nAlloc, nStk;
      int32_t iTop;
      int64_t topEnd;
      int64_t runHint;    /* profsumEngRun's last block and run */
    } stk;
  } early;
  int64_t nEntries;
  ProfsumStopFn xStop;             /* asked now and then while reading, or 0 */
  void *pStopArg;
  char *zUnit;          /* displayTimeUnit */
  char zSha[65];        /* SHA-256 of the file, hex (empty until read) */
  int64_t nFileBytes;
  /* diagnostics */
  struct { const char *zKind; int64_t n; } aKind[48];
  int nKind;
  ProfsumDiagList diag; /* the diagnostics kept for the write phase, in
                        ** the order met: every one with diagAll, else
                        ** the first ENG_DIAG_KEEP of each kind */
  int diagRc;
  int arrayForm;        /* the document is a bare array */
  int laxSyntax, cutOff; /* see ProfsumEngineInfo */
  int noEvents;         /* see ProfsumEngineInfo */
  int byteOrderMark;    /* see ProfsumEngineInfo */
  int gzipByContent;    /* see ProfsumEngineInfo */
  int topRejected;      /* see ProfsumEngineInfo */
  int nEventArrays;     /* traceEvents arrays of the file (> 1: a repeated key) */
  int nSkipArrays;      /* the arrays read past (all but the last), set before
                        ** the read */
  int64_t nRejected, iFirstRejected, iLastRejected;
  int64_t nLeftOut, iFirstLeftOut; /* X events left out of the summary */
  int64_t nFar;         /* of those, the ones more than 2^61 ps from the origin */
  profsum_ps farTs;     /* the start of the first of them */
  const char *zFirstLeftOutWhy;
  const char *zFirstRejected;
  /* orders */
  int32_t *aOrd;        /* event indices: tracks in order, (ts,-end) within;
                        ** 0 when that is the identity (an XPlane whose
                        ** lines come in order: read it through ORD) */
  char *zErrBuf;        /* parse phase: owner of its error message */
  char *zPath;          /* the trace file (for messages) */
  /* An XPlane read (summary §6.1, engReadXPlane): every event has its
  ** reference doubles in aFloat* (entry i is event i), every decision is
  ** theirs (tolPs INT64_MAX); each line is its own track, named by itself. */
  int isXPlane;
  char *zXpWarn;        /* its quality warnings as JSON array items, or 0 */
  double xpTsMin, xpEndMax;   /* the smallest ts and largest end (doubles) */
  /* What the import computes beside the summary (insights.h): every entry
  ** the readers see goes to it. */
  struct ProfsumInsights *pIns;
  int64_t warmupSteps;  /* warmup_steps of the import (profsumEngineSetWarmup):
                        ** the step wall cover measures the union of the
                        ** steps at or above it (engine_wall.c) */
  int diagAll;          /* store_diagnostics 'all': every diagnostic kept
                        ** and stored, not a compact set (set when made:
                        ** PROFSUM_ENGINE_DIAG_ALL) */
  /* The JSON read pass's name memo (engine_read.c, nameIntern): the pooled
  ** name last interned in each of NAMEMEMO_N slots chosen by a cheap hash of
  ** the raw name bytes; freed with the signature caches. */
  struct NameMemo *aNameMemo;
  /* The step spans of the last write, in the order of their rows
  ** (engine_steps.c): read by the wall cover and handed to the insights
  ** (profsumEngineStepSpans) instead of read back by SQL. */
  struct EngSpan *aSpan;
  int64_t nSpan, nAllocSpan;
  /* When the spans are devices' Steps events: the host 'train' spans
  ** after them, aSpan[nSpan .. nSpan+nHostSpan), not rows of
  ** profsum_agg_step_span: the insights' steps of a device without a Steps
  ** line (profsumEngineStepSpans). */
  int64_t nHostSpan;
  /* The side jobs' worker thread (engine_side.c), 0 until a job starts it. */
  struct EngWorker *pSideWorker;
  /* The category (§1.4) per event key, and per name id its tests (1 made,
  ** 2 stall, 4 communication, 8 compile), once the read is over
  ** (profsumEngKeyCategories); 0 until then. */
  int8_t *aKeyCat;
  unsigned char *aNameFlag;
  /* The reference's per-track breakdown walk (engine_refwalk.c), begun
  ** once the tracks are ordered; 0 until then. */
  struct EngRefWalk *pRefWalk;
  /* The next block of event records, allocated ahead while the last one
  ** fills, its pages mapped by the side worker (profsumEngBlockAhead), or
  ** 0; blkMapped: the last block was had that way, its pages are mapped. */
  struct EngBlockAhead *pBlkAhead;
  int blkMapped;
};
typedef struct ProfsumEngine Engine;

/* One row of profsum_agg_step_span as written: the step, the process of
** the event that makes it (pid, name id or -1), its start and dur in ps
** after the origin, and the start_us stored (the nearest double of the
** absolute start). */
typedef struct EngSpan {
  int64_t step, pid, ts, dur;
  double startUs;
  int32_t proc;
} EngSpan;

/* The dur (ps) of event record r of engine e. */
static inline int64_t profsumEngDur(const Engine *e, const SEv *r){
  uint32_t d = r->dur32;
  return d<DUR32_BIG ? (int64_t)d : e->aDurBig[d & (DUR32_BIG-1)];
}
#define EVDUR(e,r) profsumEngDur(e, r)


/* Diagnostics an import stores per kind (profsum_agg_diagnostic) by
** default; beyond them a 'suppressed' row gives the kind's total.  With
** the import option store_diagnostics 'all' it stores every one, with its
** detail (the readers format them all: PROFSUM_SCAN_ALLDETAILS).  The
** option is known before the read (PROFSUM_ENGINE_DIAG_ALL), so only the
** rows to store are kept in memory.  A few examples say what a kind looks
** like: a trace's rows of one kind are near copies of each other
** (time_rounded can come once per event), and more would only grow every
** run's share of a history database. */
#define ENG_DIAG_KEEP 5

/* engine_diag.c: write the kept diagnostics of e into
** profsum_agg_diagnostic for e->traceId.  SQLITE_OK or an error code
** (message set through profsumEngErr). */
int profsumEngWriteDiag(Engine *e);

/* engine_wall.c: the step wall-time split of every device.
** profsumEngWallStart, once the step spans are kept
** (profsumEngStepSpansKeep), groups the devices and their windows and
** starts covering them (on the side worker when threads are allowed:
** it reads the records, tracks and spans only); *pp is set even on
** failure (then SQLITE_NOMEM).  profsumEngWallFinish waits for the covers
** (or makes them), writes profsum_agg_step_wall for e->traceId when
** bWrite (and the step_overlap_* facts when the steady steps of some
** device overlap: the rows' sums less each device's union), and frees
** the job (0: a no-op); it must be called once for every started job.  SQLITE_OK or an error code (message set through
** profsumEngErr). */
typedef struct EngWallJob EngWallJob;
int profsumEngWallStart(Engine *e, EngWallJob **pp);
int profsumEngWallFinish(Engine *e, EngWallJob *j, int bWrite);

/* engine_side.c: the write phase's side jobs, run one after the other on
** one worker thread of the engine's (started by the first job, stopped by
** profsumEngSideStop), so that the side jobs together take one core and
** never crowd the calling thread off the other.
** profsumEngSideStart queues xMain(pArg) when e is large enough and
** threads are allowed: 1 when it did (then profsumEngSideJoin must be
** called, on every path), else 0 (the caller runs the job itself when it
** needs its result).  profsumEngSideJoin makes sure the job has run: it
** runs a job still queued in the calling thread, or waits for the worker
** to finish it, running meanwhile the queued jobs of rank
** ENG_SIDE_RANK_PIECE (pieces of one job, which must not depend on the
** progress of each other or of the caller: the exact nesting check's, a
** merge level's second half, the sweep's); 1 when the job was queued,
** else 0 (also on a second call).
** The job may read only what nothing writes until it is joined.
** profsumEngSideStop, once every job is joined, ends the worker (a no-op
** when there is none); profsumEngineFree calls it. */
typedef struct EngSide {
  struct EngSide *pNext;      /* the next job queued */
  void *(*xMain)(void*);      /* the job, and its argument */
  void *pArg;
  struct EngWorker *w;        /* the worker it was queued to */
  int iRank;                  /* jobs of a lower rank run first */
  int state;                  /* ENG_SIDE_NONE, _QUEUED, _RUNNING, _DONE */
  int running;                /* 1 from the start to the join */
} EngSide;
int profsumEngSideStart(Engine *e, EngSide *s, int iRank, void *(*xMain)(void*), void *pArg);
int profsumEngSideJoin(EngSide *s);
/* profsumEngSideTake runs job s in the calling thread when the worker has
** not taken it yet (1; it is then joined), else does nothing (0: it runs
** or ran on the worker, or was never queued: profsumEngSideJoin still
** needed). */
int profsumEngSideTake(EngSide *s);
void profsumEngSideStop(Engine *e);
/* The event records' blocks of EV_BLOCK records, had ahead (engine_side.c).
** A block of a large trace is a MiB of fresh memory, and a fresh page
** costs its first writer a page fault: on the virtual machines measured,
** about a sixth of a 1 GB XPlane import, all on the calling thread, which
** sets the read's pace.  profsumEngBlockAhead allocates the next block
** and queues a side job that maps its pages (profsumPrefault) while the
** block before it fills: the faults are taken on the other core.
** profsumEngBlockTake returns that block once its job is joined (0 when
** there is none: the caller allocates one itself), and asks for the next.
** profsumEngBlockAheadEnd joins and frees what is left (the read's end,
** profsumEngineFree).  Best effort: without a thread or the memory, the
** calling thread allocates and maps its blocks as before. */
void profsumEngBlockAhead(Engine *e);
SEv *profsumEngBlockTake(Engine *e);
void profsumEngBlockAheadEnd(Engine *e);
/* Cut e's tracks into at most nMax pieces of consecutive tracks with about
** equal events (those of Steps tracks not counted with bSkipSteps), for
** side jobs that share a pass over the tracks: the end (one past the last
** track) of each piece into aEnd, in order; returns the number of pieces
** (0 when e has no track). */
int profsumEngTrackPieces(const Engine *e, int nMax, int bSkipSteps, int32_t *aEnd);
/* The side jobs' ranks: the order the write phase joins them in (the
** exact check's pieces are joined from the last: the calling thread runs
** those the worker has not taken). */
#define ENG_SIDE_RANK_ORDER 0   /* (the read's end, before the others) */
#define ENG_SIDE_RANK_KPI   0
#define ENG_SIDE_RANK_SWEEP 1
#define ENG_SIDE_RANK_PIECE 2   /* pieces a waiting join may run (the exact
                                ** check's, a merge level's or the grouping's
                                ** second half, the sweep's pieces) */
#define ENG_SIDE_RANK_EARLY 3   /* (the reference's walk of the tracks the
                                ** sweep does not feed: after the sweep's
                                ** pieces) */
#define ENG_SIDE_RANK_WALL  4
#define ENG_SIDE_RANK_GAPS  4   /* (queued after the wall cover, joined
                                ** before it: the calling thread writes rows
                                ** in the meantime) */
#define ENG_SIDE_RANK_RANGE 5

/* One row of profsum_agg_fact: a name and its value (NULL when isNull). */
typedef struct EngFact { const char *zName; double v; int isNull; } EngFact;

/* engine_aggregate.c: write n facts of the trace to profsum_agg_fact.
** SQLITE_OK or an error (profsumEngErr's). */
int profsumEngFacts(Engine *e, const EngFact *a, int n);

/* engine_kpis.c: the KPI inputs of the devices (profsum_agg_device and
** the KPI facts).  profsumEngKpiStart, after the ordering, groups the
** device-op tracks and starts walking them (on the side worker when
** threads are allowed: it reads only the records and tracks, which
** nothing writes until the finish); *pp is set even on failure (then
** SQLITE_NOMEM).  profsumEngKpiFinish waits for the walk (or runs it),
** writes the rows when bWrite (compile: the ps the aggregation summed;
** the transfer time is the walk's own: per device, the union of its
** transfer ops (profsumEngIsTransferKey), summed, and the same of its
** host-offload copies), and frees the job (0: a no-op).  It must be called
** once for every started job, whatever happened in between.  SQLITE_OK or
** an error code. */
typedef struct EngKpiJob EngKpiJob;
int profsumEngKpiStart(Engine *e, EngKpiJob **pp);
int profsumEngKpiFinish(Engine *e, EngKpiJob *j, int bWrite, profsum_ps compile);
/* Is an event of this name a host/device transfer (memcpy, h2d, d2h,
** infeed, outfeed, transfer, host-to-device, device-to-host)? */
int profsumEngIsTransferName(const char *z, int n);
/* Is z[0..n) the name of an async op that may move data between device
** and host memory (copy-start, copy-done, dynamic-slice-start/-done,
** dynamic-update-slice-start/-done; case-sensitive, anywhere in it)? */
int profsumEngIsHostOffloadName(const char *z, int n);
/* Is an event of key q a host-offload copy: a host-offload op name whose
** texts put a buffer in host memory (EvKey.hostMem, or "S(5)" in the
** shown name itself), on a line other than Async XLA Ops (whose spans
** last a whole copy while the device computes)?  xprof's rule for its
** Host Offload Ops line. */
int profsumEngIsHostOffloadKey(const Engine *e, const EvKey *q);
/* Is an event of key q a transfer: a transfer name, or a host-offload
** copy (profsumEngIsHostOffloadKey)? */
int profsumEngIsTransferKey(const Engine *e, const EvKey *q);

/* engine_steps.c: the events that make steps (summary §4.3): found and
** kept in e->aSpan (replacing what an earlier write kept; the host
** 'train' spans after them when they are devices', e->nHostSpan) by
** profsumEngStepSpansKeep (SQLITE_OK or SQLITE_NOMEM), then written to
** profsum_agg_step_span for e->traceId by profsumEngStepSpans (SQLITE_OK
** or an error code). */
int profsumEngStepSpansKeep(Engine *e);
int profsumEngStepSpans(Engine *e);

/* the reference's comparisons of two events' starts and ends (§2) */
#define cmpTs(e,a,b)    profsumEngCmpPoint(e, a, 0, b, 0)
#define cmpEnd(e,a,b)   profsumEngCmpPoint(e, a, 1, b, 1)
#define cmpTsEnd(e,a,b) profsumEngCmpPoint(e, a, 0, b, 1)

/* exact picoseconds as microseconds (a double) */
#define US(ps) ((double)(ps)/1e6)

/* the five categories of the breakdown (§4.4) */
#define CAT_COMPUTE 0
#define CAT_COMM    1
#define CAT_HOST    2
#define CAT_STALL   3
#define CAT_OTHER   4

/* ------------------------------------------------------------------ */
/* The helpers one file of stage A defines for the others              */
/* ------------------------------------------------------------------ */

/* engine_store.c */
/* Mix the 64 bits of x (a hash finalizer). */
uint64_t profsumEngHmix(uint64_t x);
/* The entry of key (k1,k2) of m; with create, made when absent (values 0,
** *pNew=1).  0: absent (no create) or out of memory (create). */
HEnt *profsumEngHmGet(HMap *m, int64_t k1, int64_t k2, int create, int *pNew);
/* Free the slots of m and empty it. */
void profsumEngHmFree(HMap *m);
/* Make the slot table *paSlot of *pnSlot slots (open addressing, linear
** probing, id+1 per slot, 0 empty) room for nIds ids, at most half full:
** when it has not, a table twice as large (1024 slots at first) with ids
** 0..nIds-2 placed again by xHash(pCtx, id) replaces it.  SQLITE_OK or
** SQLITE_NOMEM (the table unchanged). */
int profsumEngSlotsFor(int32_t **paSlot, int64_t *pnSlot, int64_t nIds,
                       uint64_t (*xHash)(const void*, int64_t), const void *pCtx);
/* The id of z[0..n) in pool p, interned when new; -1 when out of memory. */
int32_t profsumEngSpIntern(SPool *p, const char *z, int64_t n);
/* Make room in p's id arrays for nMore more strings, so that interning
** up to that many moves neither azStr nor aLen: another thread may then
** read the texts and lengths of the ids already made (SP_STR, SP_LEN)
** while one thread interns.  SQLITE_OK or SQLITE_NOMEM (p unchanged but
** for a larger azStr). */
int profsumEngSpReserve(SPool *p, int64_t nMore);
/* Free pool p and every text in it. */
void profsumEngSpFree(SPool *p);

/* engine_read.c */
/* Set the engine's message (zFunc: formatted text) and return rc. */
int profsumEngErr(Engine *e, int rc, const char *zFmt, ...);
/* Say out of memory while zWhat (when no message is set); SQLITE_NOMEM. */
int profsumEngNoMem(Engine *e, const char *zWhat);
/* Free the signature caches (needed only while reading). */
void profsumEngSigFree(Engine *e);
/* Read the JSON trace zPath into e (the read pass).  SQLITE_OK or an
** error code with the message set. */
int profsumEngRead(Engine *e, const char *zPath);

/* engine_order.c */
/* Python's float() of exact picoseconds, in µs: profsumEngPsFloat (of
** any v), profsumEngPsFloatBig (of |v| >= 2^53, the part out of line). */
double profsumEngPsFloatBig(profsum_ps v);
static inline double profsumEngPsFloat(profsum_ps v){
  /* below 2^53 both operands of the division are exact doubles, so IEEE
  ** division rounds once, correctly (a dur, a relative time); else
  ** profsumEngPsFloatBig */
  if( v > -((profsum_ps)1<<53) && v < ((profsum_ps)1<<53) ) return (double)(int64_t)v / 1e6;
  return profsumEngPsFloatBig(v);
}
/* The reference's doubles of event i: its ts and its end (µs). */
void profsumEngEvFloat(Engine *e, int32_t i, double *pTs, double *pEnd);
/* The same, and its dur's double (*pDur), its entry looked up once. */
void profsumEngEvFloatDur(Engine *e, int32_t i, double *pTs, double *pEnd, double *pDur);
/* The reference's double of event i's dur (µs). */
double profsumEngEvDurFloat(Engine *e, int64_t i);
/* Compare a point (start, or end when bEnd) of event ia with one of ib as
** the reference decides: <0, 0, >0.  A near tie the doubles decide
** otherwise than the exact times counts in e->nFlip; profsumEngCmpPointN
** counts it in *pFlip instead (a comparison that is no decision of the
** order's, such as a merge's search for where to cut). */
int profsumEngCmpPoint(Engine *e, int32_t ia, int bEndA, int32_t ib, int bEndB);
int profsumEngCmpPointN(Engine *e, int32_t ia, int bEndA, int32_t ib, int bEndB, int64_t *pFlip);
/* A trace JSON's profile_start_ts and profile_end_ts as the reference
** computes them (summary §4.1): the smallest ts and the largest ts + dur
** in its doubles, over the events kept (at least one); after
** profsumEngOrder (which sets tolPs). */
void profsumEngFloatRange(Engine *e, double *pMin, double *pMax);
/* Event ia before ib in the exact nesting order. */
int profsumEngExactLess(const Engine *e, int32_t ia, int32_t ib);
/* Sort event indices a[0..n) by evLess(g), in place (depth: sortDepth). */
void profsumEngSortEvIdx(Engine *e, int32_t *a, int64_t n, int g, int depth);
/* The introsort depth limit for n elements. */
int profsumEngSortDepth(int64_t n);
/* Grow the nesting stacks to nNew entries.  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngGrowNestStack(int32_t **paStk, int64_t **paChild, int64_t nNew);
/* engine_nest.c: the §2 stack sweep.  profsumEngSweepAll sweeps every
** track once the processing order is made (nMaxTrk: the largest track's
** events, nXrMax: the device-op events), in pieces the side worker shares
** on a large trace, and trims the arrays it filled; profsumEngSweepPart
** goes on with track tr from position jFrom to jTo - 1 of it, keeping
** the open events in *s between calls (bClose: the track ends; tol: its
** tolerance, or a bound valid for the events so far; *pnPushed: the
** events pushed), for an XPlane line swept as it is read;
** profsumEngSweepTrim shrinks the arrays the sweep fills to what they
** hold.  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngSweepAll(Engine *e, int64_t nMaxTrk, int64_t nXrMax);
int profsumEngSweepPart(Engine *e, const STrack *tr, struct NestStk *s, int64_t jFrom, int64_t jTo,
                        int bClose, int64_t tol, int64_t nStkMax, int64_t nXrMax, int64_t *pnPushed);
void profsumEngSweepTrim(Engine *e);
/* The exclusive time as the reference's doubles give it of the event at
** processing position pos (dDur: its dur's double; *pCur: the cursor). */
double profsumEngExclRefAt(const Engine *e, int64_t pos, int64_t *pCur, double dDur);
/* Make *pa hold nNeed elements of szElem bytes (doubling, at most nMax
** when that is enough).  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngGrowCapped(void **pa, int64_t *pnAlloc, int64_t nNeed, int64_t nMax, size_t szElem);
/* The same for n parallel arrays *aa[i] of aSz[i]-byte elements that share
** the capacity *pnAlloc (set once every one has grown).  SQLITE_OK or
** SQLITE_NOMEM (the capacity unchanged: those grown stay valid). */
int profsumEngGrowParallel(int n, void **aa[], const size_t aSz[], int64_t *pnAlloc,
                           int64_t nNeed, int64_t nMax);
/* Order the tracks' events and compute exclusive time (§2).  SQLITE_OK,
** SQLITE_NOMEM or SQLITE_INTERRUPT. */
int profsumEngOrder(Engine *e);
/* Free what the ordering of XPlane lines as they come holds while
** reading (Engine.early's stack). */
void profsumEngEarlyFree(Engine *e);
/* Copy the n event indices of the processing order from position i0 to a. */
static inline void profsumEngOrdCopy(const Engine *e, int32_t *a, int64_t i0, int64_t n){
  int64_t j;
  if( e->aOrd ){ memcpy(a, e->aOrd + i0, sizeof(int32_t)*(size_t)n); return; }
  for(j=0; j<n; j++) a[j] = (int32_t)(i0 + j);
}
/* An exclusive time as kept (aParEx, aXrEx) of the event at processing
** position pos: the value, or exclBig's when it is EX32_BIG. */
static inline int64_t profsumEngEx32(const Engine *e, uint32_t v, int64_t pos){
  const HEnt *h;
  if( v!=EX32_BIG ) return (int64_t)v;
  h = profsumEngHmGet((HMap*)&e->exclBig, pos, 0, 0, 0);
  return h ? h->v1 : 0;
}
/* A walk's cursor over the kept exclusive times (profsumEngExclNext):
** the next entry of aParPos and of aXrPos and their positions (INT64_MAX
** past the last).  Zeroed, then profsumEngExclStart. */
typedef struct EngExclCur { int64_t iPar, iXr, posPar, posXr; } EngExclCur;
static inline void profsumEngExclStart(const Engine *e, EngExclCur *c){
  c->iPar = c->iXr = 0;
  c->posPar = e->nPar>0 ? e->aParPos[0] : INT64_MAX;
  c->posXr = e->nXr>0 ? e->aXrPos[0] : INT64_MAX;
}
/* profsumEngExclNext's way when pos has reached an entry's position. */
int64_t profsumEngExclSlow(const Engine *e, EngExclCur *c, int64_t pos, const SEv *r);
/* The exclusive ps of the event at processing position pos (record r),
** once ordered: its aParEx or aXrEx entry (device ops) when it had a
** child, else its dur.  The positions must be asked in increasing order,
** as the walks in processing order do: two comparisons per event. */
static inline int64_t profsumEngExclNext(const Engine *e, EngExclCur *c, int64_t pos, const SEv *r){
  if( pos>=c->posPar || pos>=c->posXr ) return profsumEngExclSlow(e, c, pos, r);
  return EVDUR(e, r);
}
/* Keep step_num v of the event being read, i = e->nEv (events in order).
** SQLITE_OK or SQLITE_NOMEM. */
int profsumEngSetStep(Engine *e, int64_t i, int64_t v);
/* 1 with *pV the step_num of event k when it has one, else 0. */
static inline int profsumEngStepOf(const Engine *e, int64_t k, int64_t *pV){
  int64_t lo = 0, hi = e->nStep;
  while( lo<hi ){
    int64_t m = lo + (hi-lo)/2;
    if( e->aStepEv[m]<k ) lo = m+1; else hi = m;
  }
  if( lo<e->nStep && e->aStepEv[lo]==k ){ *pV = e->aStepNum[lo]; return 1; }
  return 0;
}
/* profsumEngSetRun's way for a change of run_id (a new run, or the array). */
int profsumEngSetRunSlow(Engine *e, int64_t i, int32_t id);
/* Set the run_id string id (-1: none) of the event being read, i =
** e->nEv: once per event, in the order of the events.  SQLITE_OK or
** SQLITE_NOMEM.  Inline when the block's current run goes on (most
** events: none before and none now). */
static inline int profsumEngSetRun(Engine *e, int64_t i, int32_t id){
  const EvRunBlk *b = &e->aRun[i>>EV_SHIFT];
  if( b->aDense==0 && id==(b->n ? b->aId[b->n-1] : -1) ){
    e->nRunEv += id>=0;
    return SQLITE_OK;
  }
  return profsumEngSetRunSlow(e, i, id);
}
/* The run_id string id of event i, -1 when it has none: the run found
** last first (*pHint, the caller's: block << 32 | run, 0 at first; the
** sweep asks for the events of a track in order, each piece of tracks
** with a hint of its own), else a binary search of the block's runs. */
static inline int32_t profsumEngRun(const Engine *e, int64_t i, int64_t *pHint){
  int64_t blk = i>>EV_SHIFT;
  const EvRunBlk *b = &e->aRun[blk];
  uint32_t off = (uint32_t)(i & (EV_BLOCK-1));
  int64_t lo = 0, hi = b->n, h, hint;
  if( b->aDense ) return b->aDense[off];
  if( hi==0 || off<b->aOff[0] ) return -1;
  hint = *pHint;
  h = hint & 0xffffffff;
  if( (hint>>32)==blk && h<hi && b->aOff[h]<=off && (h+1==hi || b->aOff[h+1]>off) ) return b->aId[h];
  /* the last run that starts at or before off */
  while( lo+1<hi ){
    int64_t m = lo + (hi-lo)/2;
    if( b->aOff[m]<=off ) lo = m; else hi = m;
  }
  *pHint = (blk<<32) | lo;
  return b->aId[lo];
}

/* summary_engine.c */
/* Prepare zSql (its %w: the schema).  SQLITE_OK or an error (profsumEngErr's). */
int profsumEngPrepare(Engine *e, sqlite3_stmt **pp, const char *zSql);
/* Step and reset an insert.  SQLITE_OK or an error (profsumEngErr's). */
int profsumEngStep(Engine *e, sqlite3_stmt *p);
/* Bind string id (NULL when -1) to parameter i of p. */
void profsumEngBindStrId(Engine *e, sqlite3_stmt *p, int i, int32_t id);
/* The same as the next column of a row of b (rowbuf.h). */
struct ProfsumRowBuf;
void profsumEngRowStrId(Engine *e, struct ProfsumRowBuf *b, int32_t id);
/* rc of a batch of rows (rowbuf.h) as the engine reports errors: SQLITE_OK
** and SQLITE_NOMEM as they are, another error with the connection's
** message (profsumEngErr's). */
int profsumEngRowsErr(Engine *e, int rc);
/* The order of n rows by their key strings, as SQLite's BINARY collation
** orders them: row i's key is the pooled string aId1[i], then aId2[i]
** (aId2 0: none); an id < 0 is NULL, before every string.  *paOrd gets
** the row indexes in that order (sqlite3_malloc'd; ties keep no
** particular order).  Rows inserted in the order of a table's key go
** where the last one went, instead of searching its b-tree from the root.
** SQLITE_OK or SQLITE_NOMEM (*paOrd 0). */
int profsumEngStrOrder(Engine *e, int64_t n, const int32_t *aId1, const int32_t *aId2,
                       int64_t **paOrd);
/* Append z[0..n) to p as a JSON string literal. */
void profsumEngJsonAppendStr(sqlite3_str *p, const char *z, int64_t n);

/* engine_gaps.c */
/* Add x to the double whose bits *pSlot holds. */
void profsumEngAddBits(int64_t *pSlot, double x);
/* The double whose bits v holds. */
double profsumEngBitsDouble(int64_t v);
/* The state of the regions (§4.9) and gaps (§4.8) of an engine. */
typedef struct Gaps Gaps;
/* Start the regions of e into *pp (made even on an error: free it with
** profsumEngGapsFree).  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngRegionsBegin(Engine *e, Gaps **pp);
/* Account device op r (key q, exclusive time ex ps, xRef its exclusive
** time in the reference's doubles) to its regions: called for every
** device op in processing order (the regions' doubles are added in that
** order and are made in order of first appearance).  SQLITE_OK or an
** error (SQLITE_NOMEM, or the hierarchy parts'). */
int profsumEngRegionOp(Gaps *g, const SEv *r, const EvKey *q, double xRef, int64_t ex);
/* Once every device op went through profsumEngRegionOp: compute and
** write the regions (§4.9), pick the preferred paths, and queue the gap
** pass (§4.8, with the gap contexts of §4.10) as a side job
** (ENG_SIDE_RANK_GAPS; its memory is g's).  Until profsumEngGapsFinish
** the calling thread may read the engine, but must not intern a string
** nor write what the pass reads (the records, tracks, keys).  SQLITE_OK or
** an error (then profsumEngGapsFinish or profsumEngGapsFree still joins
** what was queued). */
int profsumEngGapsBegin(Gaps *g);
/* Join the gap pass (running it here when the worker has not taken it,
** or when it was never queued) and write the gaps and the gap contexts.
** Its near-tie comparisons count in e->nFlip, so it comes before any
** reading of that count.  SQLITE_OK (also when profsumEngGapsBegin did
** not run) or an error. */
int profsumEngGapsFinish(Gaps *g);
/* Free g (0: a no-op). */
void profsumEngGapsFree(Gaps *g);

/* The first of the n increasing positions aPos at or after pos (n when
** none is): a binary search of the kept entries' positions. */
static inline int64_t profsumEngEntryAtOrAfter(const int32_t *aPos, int64_t n, int64_t pos){
  int64_t lo = 0, hi = n;
  while( lo<hi ){
    int64_t mid = lo + (hi-lo)/2;
    if( aPos[mid]<pos ) lo = mid+1; else hi = mid;
  }
  return lo;
}

/* engine_aggregate.c: the category (§1.4) of every event key into
** e->aKeyCat and its name's tests into e->aNameFlag, once (a no-op after).
** The keys and tracks must be complete (the read over).  SQLITE_OK or
** SQLITE_NOMEM. */
int profsumEngKeyCategories(Engine *e);

/* engine_refwalk.c: the per-track breakdown in the reference's doubles.
** profsumEngRefBegin, once the tracks are ordered (bSwept: and their §2
** sweep done), makes the categories and starts walking the tracks that do
** not read the sweep (all when bSwept) on the side worker.
** profsumEngRefRest, once the sweep is done, queues the rest of the walk
** there: 1 when it runs on the worker, 0 when it will run in
** profsumEngRefFinish, which waits for it and gives the five sums, by
** category (SQLITE_OK, SQLITE_NOMEM).  profsumEngRefFree (profsumEngineFree)
** stops and frees the walk.  The walk reads the records, the order, the
** categories and, on device-op tracks, the sweep's aXrVal. */
typedef struct EngRefWalk EngRefWalk;
int profsumEngRefBegin(Engine *e, int bSwept);
int profsumEngRefRest(Engine *e);
int profsumEngRefFinish(Engine *e, double aSum[5]);
void profsumEngRefFree(Engine *e);

/* engine_exact.c: the check of the nesting on exact times, when some
** decision in doubles went otherwise (e->nFlip > 0).  profsumEngExactStart
** cuts it into pieces and queues them on the side worker (aKeyCat: the
** category per event key, kept until the finish); *pp is set even on
** failure (0 then, SQLITE_NOMEM).  profsumEngExactFinish waits for the
** pieces (running here those not taken) and gives the per-track
** breakdown's buckets on exact times and the number of events whose
** exclusive time differs from the summary's.  SQLITE_OK or SQLITE_NOMEM.
** profsumEngExactFree (0: a no-op) waits for any piece still running and
** frees the check. */
typedef struct ExactCheck ExactCheck;
int profsumEngExactStart(Engine *e, const int8_t *aKeyCat, ExactCheck **pp);
int profsumEngExactFinish(ExactCheck *c, profsum_ps aExact[5], int64_t *pnDiff);
void profsumEngExactFree(ExactCheck *c);

/* engine_aggregate.c */
/* Compute and write every aggregate of stage A, and start the step wall
** cover in *ppWall (profsumEngWallStart: set even on failure, to be
** finished by the caller).  SQLITE_OK or an error. */
int profsumEngAggregate(Engine *e, EngWallJob **ppWall);

/* engine_sweep.c */
/* The global breakdown's sweep (§4.4) of the window [wLo, wHi) (µs, the
** reference's doubles, wHi > wLo): the events of e's device tracks other
** than Steps whose category (aKeyCat, by key) is compute or
** communication, clipped to the window, cut it into pieces at their
** starts and ends; aSum[0] gets the communication pieces (a communication
** event open over them), aSum[1] the compute pieces (only compute events
** open), aSum[2] the uncovered ones, each sum added in time order as the
** reference adds it.  Each track's events must lie in processing order
** sorted by their start's double.  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngGlobalSweep(Engine *e, const int8_t *aKeyCat, double wLo, double wHi, double aSum[3]);

#endif /* PROFSUM_ENGINE_INT_H */
