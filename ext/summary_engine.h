/*
** summary_engine.h — "stage A" of the summary: one pass over a trace file
** that computes every knob-independent aggregate of profile_summary.v1
** (summary-v1-spec.md §4, era C semantics) and writes them into the
** profsum_trace / profsum_agg_* tables of sql/schema.sql.
*/
#ifndef PROFSUM_SUMMARY_ENGINE_H
#define PROFSUM_SUMMARY_ENGINE_H

#include "profsum_int.h"

/* Facts about the read that the importer reports or stores. */
typedef struct ProfsumEngineInfo {
  sqlite3_int64 nEntries;        /* traceEvents entries */
  sqlite3_int64 nComplete;       /* accepted X events (§1.3) */
  sqlite3_int64 nRejectedByRef;  /* entries the reference would reject the file for */
  sqlite3_int64 iFirstRejected;  /* entry index of the first of them (-1: none) */
  const char *zFirstRejectedKind;/* its diagnostic kind (static) */
  char zSha256[65];              /* SHA-256 of the file bytes (hex), hashed while reading */
  sqlite3_int64 nFileBytes;      /* size of the file */
} ProfsumEngineInfo;

/*
** Read the trace file zPath and write the aggregates of trace traceId into
** schema zSchema: the overview columns of its (already inserted)
** profsum_trace row, and the profsum_agg_* rows.  Diagnostics met while
** reading go to profsum_agg_diagnostic (at most 1000 per kind, plus a
** 'suppressed' row per kind that was cut).  zFunc names the SQL function
** for messages.  Returns SQLITE_OK or an error code with *pzErr set
** (sqlite3_malloc'd, prefixed with zFunc).
*/
int profsumEngineRun(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId,
                     const char *zFunc, const char *zPath,
                     ProfsumEngineInfo *pInfo, char **pzErr);

/* Convert exact picoseconds to microseconds as the nearest double (via the
** exact decimal text, so absolute epoch-based times round correctly). */
double profsumPsToMicros(profsum_ps v);

#endif /* PROFSUM_SUMMARY_ENGINE_H */
