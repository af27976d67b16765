/*
** insights.h — what an import computes beyond the summary document: the
** data that only an XPlane holds, or that trace JSON holds in args (device
** limits, memory, kernels, FLOPs and bytes, per-HLO profiles).
**
** The readers of stage A hand every entry they read to a collector (the
** XPlane reader every plane and every XEvent, whether the summary takes
** it or not; the JSON reader every entry of any ph).  The import writes
** what was collected into its tables after the summary's aggregates, in
** the same transaction.  The collector dispatches to the collectors of
** insights_int.h; none of them keeps a pointer into the reader's buffers
** past the call.
*/
#ifndef PROFSUM_INSIGHTS_H
#define PROFSUM_INSIGHTS_H

#include "profsum_int.h"
#include "profsum_reader.h"
#include "xplane_pb.h"
#include "summary_engine.h"

typedef struct ProfsumInsights ProfsumInsights;

/* A new, empty collector in *pp.  SQLITE_OK or SQLITE_NOMEM. */
int profsumInsNew(ProfsumInsights **pp);
/* Free a collector (0 is a no-op). */
void profsumInsFree(ProfsumInsights *p);
/* Keep every diagnostic the collectors make (the import option
** store_diagnostics 'all'), not the first few of each kind. */
void profsumInsDiagAll(ProfsumInsights *p);

/* XPlane reader: plane pl, once its metadata and stats are known (before
** its lines are walked).  SQLITE_OK or SQLITE_NOMEM. */
int profsumInsXpPlane(ProfsumInsights *p, ProfsumXp *pXp, const ProfsumXpPlane *pl);
/* What the stats of a device-op XEvent (or of its metadata) give the
** per-op figures: string ids of the collector's pool (-1: absent), the
** FLOPs and bytes with the flags of those present (insights_xla.c). */
typedef struct ProfsumInsStats {
  int32_t name;         /* the shown name */
  int32_t hloOp, module, cat, fw;
  int32_t lastTrk, lastAgg;   /* a metadata's entry: the aggregate its events
                              ** without stats of their own went to on
                              ** track lastTrk (-1: none yet) */
  unsigned fl;          /* XF_FLOPS, XF_MFLOPS (model_flops), XF_BYTES */
  double flops, mflops, bytes;
} ProfsumInsStats;

/* The XPlane reader walks the file on one thread (the decoding side) and
** feeds the engine on another (the engine side).  The insights' work per
** device-op event is done in two steps that touch disjoint fields of the
** collector: profsumInsXpEvent, on the decoding side, reads the event's
** stats and says in at most two records what is to be done; then
** profsumInsXpApply does each record in turn, the events in their order
** (the records of the ops, their nesting and busy time), on whichever
** side gets to the batch first: one side at a time, handed over under a
** mutex (xplane_intake.c).  The records travel with the event's item
** (docs/performance-log.md, "XPlane: the decoding side's stall, and the
** insights' records", and "The XPlane insights' records by either
** side"). */
#define PROFSUM_INSOP_TRACK 0x01   /* first, start a track of process proc
                                   ** and line kind kind */
#define PROFSUM_INSOP_SHIP  0x02   /* the plane's metadata entry iMeta is st */
#define PROFSUM_INSOP_OWN   0x04   /* the op, with stats of its own: st */
#define PROFSUM_INSOP_META  0x08   /* the op, with metadata entry iMeta's */
typedef struct ProfsumInsXpOp {
  unsigned fl;          /* PROFSUM_INSOP_*: SHIP with OWN take two records */
  int32_t proc, kind;   /* TRACK */
  int64_t iMeta;        /* SHIP, META: an index the plane's entries share
                        ** from 0 */
  ProfsumInsStats st;   /* SHIP, OWN */
} ProfsumInsXpOp;

/* XPlane reader, first step: XEvent ev (ev->pLine, ev->pPlane, its
** metadata and stats through pXp).  What is to be done for it goes to
** aOp[0..*pnOp), *pnOp 0 to 2.  SQLITE_OK or SQLITE_NOMEM. */
int profsumInsXpEvent(ProfsumInsights *p, ProfsumXp *pXp, const ProfsumXpEvent *ev,
                      ProfsumInsXpOp *aOp, int *pnOp);
/* XPlane reader, second step: do record pOp of the event that starts at s
** (absolute ps) and lasts dur ps (used by OWN and META only).  Reads and
** writes nothing profsumInsXpEvent or profsumInsXpPlane touch.  SQLITE_OK
** or SQLITE_NOMEM. */
int profsumInsXpApply(ProfsumInsights *p, const ProfsumInsXpOp *pOp, profsum_ps s, int64_t dur);
/* JSON reader: entry ev, any ph (args in ev->args, the known args keys
** in ev->aArg: the engine reads with PROFSUM_SCAN_ARGKEYS), after the
** summary engine took it.  iKey: the engine's event key of the entry when
** the engine took it as a complete event (two entries of one key share
** their track, name, tf_op, source and long_name signature), else -1.
** Process and thread names arrive in M entries anywhere in the file: a
** collector resolves pid/tid to names when it writes.  SQLITE_OK or
** SQLITE_NOMEM. */
int profsumInsJsonEvent(ProfsumInsights *p, const ProfsumEvent *ev, int32_t iKey);

/* A member of a trace JSON's top-level object other than traceEvents: its
** key and its value's JSON text (nVal bytes), once the file was read
** (profsumScanTopAt).  SQLITE_OK or SQLITE_NOMEM. */
int profsumInsJsonTop(ProfsumInsights *p, const char *zKey, const char *zVal, int nVal);

/* Write what was collected for trace traceId into zSchema's tables.
** aSpan[0..nSpan): the trace's step spans (profsumEngineStepSpans, the
** rows of profsum_agg_step_span written for it, then the host spans that
** made no row: hostOnly, for the utilization of a device without a Steps
** line only), the caller's copy, which the insights reorder.
** zDevicePeaks: the import option "device_peaks" as JSON text, or 0.
** zFunc names the SQL function in messages.  SQLITE_OK, or an error code
** with *pzErr set (sqlite3_malloc'd, prefixed with zFunc). */
int profsumInsWrite(ProfsumInsights *p, sqlite3 *db, const char *zSchema,
                    sqlite3_int64 traceId, ProfsumStepSpan *aSpan, int64_t nSpan,
                    const char *zDevicePeaks,
                    const char *zFunc, char **pzErr);

/* The report sections of what was collected for trace traceId (read
** back from the tables), appended to pOut: markdown ("## profsum: ..."
** headings) or HTML (<section> elements with inline SVG).  Nothing is
** appended for a trace without such data.  SQLITE_OK or an error code. */
int profsumInsReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
int profsumInsReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);

#endif /* PROFSUM_INSIGHTS_H */
