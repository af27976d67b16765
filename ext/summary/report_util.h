/*
** report_util.h — what the markdown and HTML report writers of
** ext/summary share: escaping of text for a table cell or an HTML page,
** the largest percentage written in a text, the KPI table's rows.
*/
#ifndef PROFSUM_REPORT_UTIL_H
#define PROFSUM_REPORT_UTIL_H

#include "profsum_int.h"

/* Append the first n bytes of z (n < 0: all of it) with HTML escaping of
** < > & and ".  Nothing when z is 0. */
void profsumHtmlEsc(sqlite3_str *s, const char *z, int n);

/* Append the first n bytes of z (n < 0: all of it) as markdown table text:
** '|' escaped, newlines and carriage returns as spaces.  Nothing when z
** is 0. */
void profsumMdEsc(sqlite3_str *s, const char *z, int n);

/* The largest number written just before a '%' in z (0 when none, or when
** z is 0). */
double profsumMaxPct(const char *z);

/* Step p (kind, kpi, device, value, unit, band, explanation of
** profsum_kpis) to its end and append each row to s as a line of the
** markdown "## KPIs" table, the heading before the first row.  SQLITE_OK,
** or the error of a column's text (the caller finishes p either way). */
int profsumKpiRowsMd(sqlite3_str *s, sqlite3_stmt *p);

#endif /* PROFSUM_REPORT_UTIL_H */
