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

/* XPlane reader: plane pl, once its metadata and stats are known (before
** its lines are walked).  SQLITE_OK or SQLITE_NOMEM. */
int profsumInsXpPlane(ProfsumInsights *p, ProfsumXp *pXp, const ProfsumXpPlane *pl);
/* XPlane reader: XEvent ev (ev->pLine, ev->pPlane, its metadata and stats
** through pXp).  SQLITE_OK or SQLITE_NOMEM. */
int profsumInsXpEvent(ProfsumInsights *p, ProfsumXp *pXp, const ProfsumXpEvent *ev);
/* JSON reader: entry ev, any ph (args in ev->args, the known args keys
** in ev->aArg: the engine reads with PROFSUM_SCAN_ARGKEYS), after the
** summary engine took it.  iKey: the engine's event key of the entry when
** the engine took it as a complete event (two entries of one key share
** their track, name, tf_op, source and long_name signature), else -1.
** Process and thread names arrive in M entries anywhere in the file: a
** collector resolves pid/tid to names when it writes.  SQLITE_OK or
** SQLITE_NOMEM. */
int profsumInsJsonEvent(ProfsumInsights *p, const ProfsumEvent *ev, int32_t iKey);

/* Write what was collected for trace traceId into zSchema's tables.
** aSpan[0..nSpan): the trace's step spans (profsumEngineStepSpans, the
** rows of profsum_agg_step_span written for it), the caller's copy,
** which the insights reorder.
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
