/*
** summary_engine.h — "stage A" of the summary: one pass over a trace file
** that computes every knob-independent aggregate of profile_summary.v1
** (summary-v1-spec.md §4, era C semantics) and writes them into the
** profsum_trace / profsum_agg_* tables of sql/schema.sql.
*/
#ifndef PROFSUM_SUMMARY_ENGINE_H
#define PROFSUM_SUMMARY_ENGINE_H

#include "profsum_int.h"

/* Blocks of event records that the imports of this process had mapped
** ahead by their side worker (engine_side.c), since it started:
** profsum_debug() shows it, so that a test can tell that path ran. */
int64_t profsumEngineBlocksAhead(void);

/* Batches of XPlane events whose insights' records the decoding thread
** applied (xplane_intake.c; the engine's thread applies the others), since
** the process started: profsum_debug() shows it, for the tests. */
int64_t profsumXpInsByProducer(void);

/* Facts about the read that the importer reports or stores. */
typedef struct ProfsumEngineInfo {
  sqlite3_int64 nEntries;        /* traceEvents entries */
  sqlite3_int64 nComplete;       /* accepted X events (§1.3) */
  sqlite3_int64 nRejectedByRef;  /* entries the reference would reject the file for */
  sqlite3_int64 iFirstRejected;  /* entry index of the first of them (-1: none) */
  const char *zFirstRejectedKind;/* its diagnostic kind (static) */
  sqlite3_int64 nLeftOut;        /* complete events left out of the summary: a ts
                                 ** that is not a number, or too far in time */
  sqlite3_int64 iFirstLeftOut;   /* entry index of the first of them (-1: none) */
  const char *zFirstLeftOutWhy;  /* why it was left out (static text) */
  int arrayForm;                 /* the bare-array form (the reference rejects it) */
  int laxSyntax;                 /* read past trailing commas or raw control
                                 ** characters (strict JSON readers reject them) */
  int noEvents;                  /* the top-level object has no traceEvents array */
  int gzipByContent;             /* trace JSON decompressed by its content, not
                                 ** by its name as the reference does: 1 gzip
                                 ** data without a .gz name, 2 a .gz name
                                 ** without gzip data; 0 they agree */
  int byteOrderMark;             /* read past a UTF-8 byte order mark (strict
                                 ** JSON readers, the reference's, reject it) */
  int topRejected;               /* top-level data the reference's typed decoder
                                 ** rejects the file for: 1 a displayTimeUnit that
                                 ** is not a string, 2 other data outside the
                                 ** entries (bytes that are not UTF-8); 0 none */
  int cutOff;                    /* the data ended inside an entry or before the
                                 ** closing ']' / '}' (a cut-off file) */
  char zSha256[65];              /* SHA-256 of the file bytes (hex), hashed while reading */
  sqlite3_int64 nFileBytes;      /* size of the file */
  int isXPlane;                  /* read as an XSpace (summary §6.1) */
} ProfsumEngineInfo;

typedef struct ProfsumEngine ProfsumEngine;

/*
** Phase 1, no database access (run it before taking any lock): read the
** trace file zPath (a JSON trace, or an XSpace read as summary §6.1 says
** with source_format 'xplane_pb' when profsumSniffFormat tells one by its
** content or name), collect the accepted events, order the tracks and
** compute exclusive time.  Diagnostics are kept: the first ENG_DIAG_KEEP
** of each kind and every kind's total (a 'suppressed' row per kind that
** had more), or with flags PROFSUM_ENGINE_DIAG_ALL every one with its
** detail (store_diagnostics 'all').  zFunc names the SQL
** function for messages.  xStop (or NULL) is asked every 16,384 entries
** and before each track's sort whether to stop (an interrupt).  On
** success *pp is a new engine (free it with profsumEngineFree) and *pInfo
** is filled; on error *pzErr is set (sqlite3_malloc'd, prefixed with
** zFunc).
*/
/* Asked every few thousand entries while reading: a non-zero return stops
** the parse with SQLITE_INTERRUPT ("interrupted"). */
typedef int (*ProfsumStopFn)(void *pArg);

#define PROFSUM_ENGINE_DIAG_ALL 0x01   /* keep (and store) every diagnostic */
int profsumEngineParse(const char *zFunc, const char *zPath, unsigned flags, ProfsumStopFn xStop,
                       void *pStopArg, ProfsumEngine **pp, ProfsumEngineInfo *pInfo,
                       char **pzErr);

/*
** Phase 2: compute the aggregates and write them for trace traceId into
** schema zSchema (the overview columns of its already inserted
** profsum_trace row, sha256 and size included, the profsum_agg_* rows and
** the diagnostics).  Repeatable: a retried write may call it again.
** xBeside (0: none) is called once, on the calling thread, when the
** aggregates, the step spans and the device rows are written and the
** step wall cover may still run beside: work of the caller's that needs
** those rows (the insights' write) goes there, so that it runs while the
** second core finishes.  Its return code (SQLITE_OK or an error, whose
** message it sets) ends the write when not SQLITE_OK.
*/
int profsumEngineWrite(ProfsumEngine *e, sqlite3 *db, const char *zSchema,
                       sqlite3_int64 traceId, int (*xBeside)(void*), void *pBesideArg,
                       char **pzErr);

/* The import's warmup_steps (>= 0; 5 until set): the steps numbered below
** it are warmup steps.  The step wall cover needs it to measure the union
** of the steps the KPIs read (engine_wall.c); call it before
** profsumEngineWrite. */
void profsumEngineSetWarmup(ProfsumEngine *e, int64_t nWarmup);

void profsumEngineFree(ProfsumEngine *e);

/* What the engine's readers collected beside the summary (insights.h);
** owned by the engine. */
struct ProfsumInsights *profsumEngineInsights(ProfsumEngine *e);

/* A step span of the trace: a row of profsum_agg_step_span, with exact
** absolute times. */
typedef struct ProfsumStepSpan {
  int64_t step;
  const char *zDev; int nDev;   /* the process name (owned by the engine), or 0 */
  profsum_ps start, end;        /* absolute ps (trace_events.ts × 1000) */
  int hostOnly;                 /* 1: a host 'train' span that is no row (the
                                ** steps are devices'), after the rows */
} ProfsumStepSpan;

/* The step spans the last profsumEngineWrite wrote, in the order of their
** rows, then (when those are devices' Steps events) the host 'train'
** spans that made no row (hostOnly 1: the steps of a device without a
** Steps line, docs/roofline.md): *paSpan (sqlite3_malloc'd, the caller
** frees it; 0 when there are none) of *pnSpan entries, valid while e
** lives.  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngineStepSpans(ProfsumEngine *e, ProfsumStepSpan **paSpan, int64_t *pnSpan);

/* Convert exact picoseconds to microseconds as the nearest double (via the
** exact decimal text, so absolute epoch-based times round correctly). */
double profsumPsToMicros(profsum_ps v);

#endif /* PROFSUM_SUMMARY_ENGINE_H */
