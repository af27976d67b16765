/*
** report_util.h — what the markdown and HTML report writers of
** ext/summary share: escaping of text for a table cell or an HTML page,
** the largest percentage written in a text, the KPI table's rows.
*/
#ifndef PROFSUM_REPORT_UTIL_H
#define PROFSUM_REPORT_UTIL_H

#include "profsum_int.h"

/* Append the first n bytes of z (n < 0: all of it) with HTML escaping of
** < > & and ", and each control character but tab, newline and carriage
** return (not allowed in HTML text) as U+FFFD.  Nothing when z is 0. */
void profsumHtmlEsc(sqlite3_str *s, const char *z, int n);

/* Append the first n bytes of z (n < 0: all of it) as markdown table text:
** '|' escaped, newlines and carriage returns as spaces.  Nothing when z
** is 0. */
void profsumMdEsc(sqlite3_str *s, const char *z, int n);

/* The largest number written just before a '%' in z (0 when none, or when
** z is 0). */
double profsumMaxPct(const char *z);

/* Append the markdown "## KPIs" table of trace id of zSchema (the rows of
** profsum_kpis: kind, kpi, device, value, unit, band, explanation) to s;
** nothing when it has no row, or when the database has no profsum_kpis
** (made by an older profsum).  SQLITE_OK, or an error code with *pzErr
** set (sqlite3_malloc'd) unless it is SQLITE_NOMEM. */
int profsumKpiTableMd(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s, char **pzErr);

/* Append a profsum_kpis value v of unit zUnit (0: none) as the KPI tables
** write it: four significant digits, and more where that text would read
** as a multiple of a band's threshold (0.01 for a fraction, 0.1 ms, 1 s)
** that v is not (profsumStrAppendNearG): 0.20004 is "0.20004", not
** "0.2". */
void profsumKpiValue(sqlite3_str *s, double v, const char *zUnit);

/* Append what a profsum_advice row p puts at stake, from its columns
** share_of_step (iShare) and time_at_stake_us (iShare+1), each left out
** when null: zSep "at stake: S% of step wall time, T zUnit" (or zSep
** "at stake: T zUnit" without the share). */
void profsumAdviceStake(sqlite3_str *s, sqlite3_stmt *p, int iShare, const char *zSep, const char *zUnit);

/* The SQL the markdown and the HTML report share, so that both say the
** same numbers.  Each reads trace ?1 of the schema its %w names (one %w
** per profsum view it reads; sqlite3_mprintf them before preparing).
**
** profsumSqlStepWallSplit: one row over the steady steps of
**   profsum_step_wall (all steps when every one is a warmup step): steps,
**   devices, then the sums of wall, compute, collective, transfer and idle
**   time in whole picoseconds (each row's time rounded to ps, then added
**   as integers, so that a share computed from them is exact up to its
**   last rounding, as the host_wait KPI's), less what overlapping steps
**   count twice (the facts step_overlap_*: each instant of a device once,
**   as the KPIs and the advice count), and 1 when the steps are warmup
**   steps.  Two %w.
** profsumSqlStepWallMedian: the median of the wall time (us) of the same
**   (step, device) rows (of an even count, the mean of the two middle
**   values, as the step-time medians beside it); NULL when there is none.
**   One %w. */
extern const char profsumSqlStepWallSplit[];
extern const char profsumSqlStepWallMedian[];

/* A scalar subquery over the evidence of a profsum_advice row aliased a:
** its items joined by "; ", each "name = value unit" (a fraction as a
** percentage with one decimal, more where that would read as a multiple
** of 5 % it is not, as the titles write it (profsum_format_near); µs
** with three decimals as the time at stake, ms and s as the titles, a count
** as an integer, any other number as %.6g, null as n/a, a text of over 80
** characters cut to 79 and '…', as the reports show names).  For the
** middle of a statement that sqlite3_mprintf formats (its %% doubled). */
#define PROFSUM_SQL_ADVICE_EVIDENCE \
  "(SELECT group_concat(json_extract(e.value, '$.name') || ' = ' || " \
  "   coalesce(CASE WHEN json_type(e.value, '$.value') = 'null' THEN NULL " \
  "                 WHEN json_extract(e.value, '$.unit') = 'fraction' " \
  "                 THEN profsum_format_near(100.0 * json_extract(e.value, '$.value'), 1, 5) || '%%' " \
  "                 WHEN json_type(e.value, '$.value') NOT IN ('real', 'integer') " \
  "                 THEN CASE WHEN length(json_extract(e.value, '$.value')) > 80 " \
  "                           THEN substr(json_extract(e.value, '$.value'), 1, 79) || '…' " \
  "                           ELSE json_extract(e.value, '$.value') END " \
  "                 WHEN json_extract(e.value, '$.unit') = 'count' " \
  "                 THEN printf('%%d', json_extract(e.value, '$.value')) " \
  "                 WHEN json_extract(e.value, '$.unit') = 'ms' " \
  "                 THEN profsum_format_near(json_extract(e.value, '$.value'), 3, 0.1) " \
  "                 WHEN json_extract(e.value, '$.unit') = 's' " \
  "                 THEN profsum_format_near(json_extract(e.value, '$.value'), 3, 1) " \
  "                 WHEN json_extract(e.value, '$.unit') = 'us' " \
  "                 THEN printf('%%.3f', json_extract(e.value, '$.value')) " \
  "                 ELSE printf('%%.6g', json_extract(e.value, '$.value')) END, 'n/a') || " \
  "   CASE WHEN json_extract(e.value, '$.unit') IN ('us', 'ms', 's', 'count') " \
  "        THEN ' ' || json_extract(e.value, '$.unit') ELSE '' END, '; ') " \
  " FROM json_each(a.evidence) AS e)"

#endif /* PROFSUM_REPORT_UTIL_H */
