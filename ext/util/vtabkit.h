/*
** vtabkit.h — what profsum's eponymous table-valued functions share
** (vtabkit.c): a connect that declares the schema and forbids use from a
** stored view or trigger, and the plan of a function with one required
** hidden argument.  For the table functions that read files named by
** their argument (profsum_xplane_planes, profsum_find_traces, ...).
*/
#ifndef PROFSUM_VTABKIT_H
#define PROFSUM_VTABKIT_H

#include "profsum_int.h"

/*
** xConnect's body for a table function that reads files: declare zSchema,
** mark the table SQLITE_VTAB_DIRECTONLY (a hostile database file must not
** read files from a view or trigger in its schema; TEMP ones stay allowed;
** never innocuous), then allocate a zeroed table object of szTab bytes (a
** struct starting with sqlite3_vtab) into *ppVtab.  SQLITE_OK, or the
** error of a step (SQLITE_NOMEM).
*/
int profsumVtabConnectFileReader(sqlite3 *db, const char *zSchema, size_t szTab,
                                 sqlite3_vtab **ppVtab);
/* xDisconnect: free the table object (of profsumVtabConnectFileReader). */
int profsumVtabDisconnect(sqlite3_vtab *pVtab);

/*
** The "=" constraints on the input column iCol of a table function (its
** hidden argument column), for xBestIndex.  The function's own argument is
** one of them; a query can add others (`trace_events(?) WHERE path IN
** (...)`, a join on the column), and the function cannot tell which one is
** its argument.  So every usable one, up to nMax in constraint order,
** becomes an argument of xFilter, argv[iArgv], argv[iArgv+1], ... (the
** aConstraintUsage argvIndex iArgv+1, ...), omitted: xFilter reads the
** input only when they are one value (profsumVtabArgsAgree), and then the
** rows' input column holds that value and meets each of them; when they
** differ no row can meet them all, and none is read.  When one of them
** compares with the BINARY collation, only those are taken: one of
** another collation (`path = 'A.JSON' COLLATE NOCASE`) may match a value
** that differs in bytes, so SQLite is left to check it on the rows.
** Returns how many constraints were taken, or -1 when there are "="
** constraints on iCol but none is usable in this plan: xBestIndex then
** answers SQLITE_CONSTRAINT, so that SQLite finds a join order in which the
** value is known.  *pbPartial is set to 1 when some were taken and others
** are not usable in this plan (`trace_events(f.p) WHERE path IN (SELECT
** ...)` with f not yet read): the file would be read on the values of the
** usable ones alone, one that names no file an error, so xBestIndex makes
** that plan cost more than one that knows every value (SQLite still takes
** it when no other exists, `WHERE path = name`); else it is left as is.
** The factor is large: SQLite counts a table it has no statistics for as
** about a million rows, so the plan that reads the function once per row
** of such a table already costs a million times more than one read.
*/
int profsumVtabInputArgs(sqlite3_index_info *pInfo, int iCol, int iArgv, int nMax,
                         int *pbPartial);

/* The factor on the cost of a plan with *pbPartial set (profsumVtabInputArgs). */
#define PROFSUM_VTAB_PARTIAL_COST 1e15

/*
** 1 when the n >= 1 xFilter arguments argv[0..n) are the same value (type
** and bytes; a NULL among several is no value), 0 when they differ (the
** constraints of one input column, profsumVtabInputArgs, which then select
** no row), -1 when memory ran out converting a text to UTF-8.
*/
int profsumVtabArgsAgree(sqlite3_value **argv, int n);

/*
** xBestIndex's body for a function whose argument is hidden column iCol:
** the usable `iCol = ?` constraints become argv[0..) of xFilter
** (profsumVtabInputArgs, at most 8; idxNum 1, cost costArg, times
** PROFSUM_VTAB_PARTIAL_COST when others are not usable); unusable ones
** only give SQLITE_CONSTRAINT (so SQLite plans it another way); none gives
** idxNum 0 at cost costNone (xFilter then says the argument is missing).
** estimatedRows = nRows in both plans.
*/
int profsumVtabBestIndexArg(sqlite3_index_info *pInfo, int iCol, double costArg,
                            double costNone, sqlite3_int64 nRows);

/*
** xFilter's path argument pArg of table function zFunc: *pzPath a copy
** (sqlite3_malloc'd: the caller frees it), 0 for SQL NULL (the function
** gives no rows).  SQLITE_OK, SQLITE_NOMEM, or SQLITE_ERROR with pVtab's
** message "<zFunc>: '<path>': path contains a NUL byte".
*/
int profsumVtabPathArg(sqlite3_vtab *pVtab, const char *zFunc, sqlite3_value *pArg,
                       char **pzPath);

/*
** The cursor of a table function whose xFilter makes all of its rows
** before the first is read: the first member of the function's own cursor
** struct.  xFilter sets nRow; xColumn reads row iRow.  The kit's xOpen
** body, xClose, xNext, xEof and xRowid (the 0-based row number) serve
** every such cursor.
*/
typedef struct ProfsumRowCursor ProfsumRowCursor;
struct ProfsumRowCursor {
  sqlite3_vtab_cursor base;   /* base class: must be first */
  int64_t iRow;               /* the current row */
  int64_t nRow;               /* rows of the current scan */
  /* free what the cursor owns and leave it with no rows (xFilter, xClose) */
  void (*xReset)(ProfsumRowCursor*);
};

/* xOpen's body: a zeroed cursor of szCur bytes (a struct starting with
** ProfsumRowCursor) with xReset set, into *ppCur.  SQLITE_OK or
** SQLITE_NOMEM. */
int profsumRowCursorOpen(size_t szCur, void (*xReset)(ProfsumRowCursor*),
                         sqlite3_vtab_cursor **ppCur);
/* xClose: xReset, then free the cursor. */
int profsumRowCursorClose(sqlite3_vtab_cursor *cur);
/* xNext, xEof, xRowid. */
int profsumRowCursorNext(sqlite3_vtab_cursor *cur);
int profsumRowCursorEof(sqlite3_vtab_cursor *cur);
int profsumRowCursorRowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *pRowid);

/*
** A TEXT value of n bytes as the column's result (sqlite3_result_text64
** with xDel), unless n is over the connection's limit on one value
** (SQLITE_LIMIT_LENGTH, 10^9 bytes by default): then the statement's error,
** code SQLITE_TOOBIG, "<where>: its <column> is N bytes, more than SQLite's
** limit on one value (L bytes, SQLITE_LIMIT_LENGTH)" instead of SQLite's
** bare "string or blob too big", and xDel called on z as SQLite would.
** xWhere(pWhereArg) makes the "<where>: its <column>" part (the function,
** the file, the place: entry, plane, line; then the column), called only
** for that error; it returns an sqlite3_malloc'ed string, 0 when out of
** memory.
*/
void profsumResultTextLimited(sqlite3_context *ctx, const char *z, int64_t n,
                              void (*xDel)(void*), char *(*xWhere)(void*), void *pWhereArg);

#endif /* PROFSUM_VTABKIT_H */
