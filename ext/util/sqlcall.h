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

/* The range a top_k is brought into (profsumTopKClamp): above 1,000,000
** rows a list is not cut any more in practice; below -2^31+1 every list
** (an int counts its items) is cut to nothing, as Python's list[:top_k]. */
#define PROFSUM_TOPK_MAX 1000000
#define PROFSUM_TOPK_MIN (-2147483647)

/* top_k brought into [PROFSUM_TOPK_MIN, PROFSUM_TOPK_MAX]: the rows it
** selects stay those of Python's list[:top_k] for any list of fewer than
** 1,000,001 items. */
int profsumTopKClamp(sqlite3_int64 topK);

/* Python's len(list[:topK]) for a list of n >= 0 items: min(n, topK) when
** topK >= 0; with a negative topK all but the last -topK items, 0 when
** there are not more than that.  The rows a top_k selects are always the
** first ones, in the list's order. */
int profsumTopKLen(int n, sqlite3_int64 topK);

/* Read an optional top_k argument v (SQL NULL: *pTopK is left as it is):
** any integer, as the reference's argparse int, sliced with Python's
** list[:top_k] by the callers (profsumTopKLen): 0 gives no rows, -1 all
** but the last.  Stored clamped (profsumTopKClamp).  SQLITE_OK, or
** SQLITE_ERROR with "zFunc: top_k must be an integer" set on ctx (a real,
** text or blob). */
int profsumTopKArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v,
                   sqlite3_int64 *pTopK);

/* profsum's own bit in the flags of profsumCreateFunctions and of the
** history layer's registration table, never passed to SQLite: the function
** reads stored traces with several statements, and must see one state of
** the database.  Called outside a transaction (autocommit), each of its
** statements would read its own snapshot, and an import that replaces a
** trace between two of them would make the result a mixture of the old
** and the new trace, or an error about an id the caller never gave.  Such
** a function is registered behind profsumReadInSnapshot. */
#define PROFSUM_FN_READS 0x40000000

/* Register xFunc (no user data, a scalar function) as zName with each
** argument count from nMin to nMax, with flags (SQLITE_UTF8, ...; with
** PROFSUM_FN_READS, through profsumCreateReader).  SQLITE_OK, or the first
** error. */
int profsumCreateFunctions(sqlite3 *db, const char *zName, int nMin, int nMax, int flags,
                           void (*xFunc)(sqlite3_context*, int, sqlite3_value**));

/* Register xFunc as zName/nArg (flags without PROFSUM_FN_READS) so that it
** runs in one read snapshot: when the connection is in autocommit, a
** statement that reads the schema the call reads (its options_json's
** "schema", else main) is stepped to its row before xFunc and finalized
** after it, and the read transaction it holds is the one every statement
** of xFunc reads that schema in (in WAL mode the same snapshot; with a
** rollback journal a shared lock, so a writer's commit waits for the
** function).  Inside a transaction nothing is added: the transaction
** already reads one state.  SQLITE_OK or an error code. */
int profsumCreateReader(sqlite3 *db, const char *zName, int nArg, int flags,
                        void (*xFunc)(sqlite3_context*, int, sqlite3_value**));

#endif /* PROFSUM_SQLCALL_H */
