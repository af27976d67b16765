/*
** sqlcall.h — small helpers of the SQL functions of several layers: a
** formatted statement run with its error named, the top_k argument, the
** registration of a function with a range of argument counts.
*/
#ifndef PROFSUM_SQLCALL_H
#define PROFSUM_SQLCALL_H

#include "profsum_int.h"

#include <stdarg.h>

/* Run the statement zFmt formats with ap (sqlite3_vmprintf: %w for
** identifiers).  On an error, when pzErr and not *pzErr, *pzErr is set to
** "zFunc: SQLite's message" (sqlite3_malloc'd) unless the error is
** SQLITE_NOMEM and bNomemMsg is 0.  Out of memory for the statement's
** text: SQLITE_NOMEM, no message. */
int profsumExecV(sqlite3 *db, const char *zFunc, int bNomemMsg, char **pzErr,
                 const char *zFmt, va_list ap);

/* Read an optional top_k argument v (SQL NULL: *pTopK is left as it is):
** a non-negative integer, capped at 1,000,000.  SQLITE_OK, or SQLITE_ERROR
** with "zFunc: top_k must be a non-negative integer" set on ctx. */
int profsumTopKArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v,
                   sqlite3_int64 *pTopK);

/* Register xFunc (no user data, a scalar function) as zName with each
** argument count from nMin to nMax, with flags (SQLITE_UTF8, ...).
** SQLITE_OK, or the first error. */
int profsumCreateFunctions(sqlite3 *db, const char *zName, int nMin, int nMax, int flags,
                           void (*xFunc)(sqlite3_context*, int, sqlite3_value**));

#endif /* PROFSUM_SQLCALL_H */
