/*
** report_profsum.h — profsum's own sections of the markdown report
** (report_profsum.c), after the reference's.
*/
#ifndef PROFSUM_REPORT_PROFSUM_H
#define PROFSUM_REPORT_PROFSUM_H

#include "profsum_int.h"

/* Append the "## profsum: ..." sections of trace id of zSchema to s: data
** quality, wall-clock time, advice, the reference tool's candidates, then
** the collectors' sections (profsumInsReportMd).  SQLITE_OK, or an error
** code with *pzErr set (sqlite3_malloc'd) unless it is SQLITE_NOMEM. */
int profsumReportProfsumMd(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s,
                           char **pzErr);

/* Register profsum_report_md(trace, top_k, options_json) (options kpis,
** profsum, schema); registered after profsumRegisterSummaryDoc, whose 1-
** and 2-argument forms stay. */
int profsumRegisterReportProfsum(sqlite3 *db, char **pzErr);

#endif /* PROFSUM_REPORT_PROFSUM_H */
