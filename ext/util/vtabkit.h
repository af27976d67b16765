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
** xBestIndex's body for a function whose argument is hidden column iCol:
** a usable `iCol = ?` constraint becomes argv[0] of xFilter (idxNum 1,
** omitted, cost costArg); an unusable one only gives SQLITE_CONSTRAINT (so
** SQLite plans it another way); none gives idxNum 0 at cost costNone
** (xFilter then says the argument is missing).  estimatedRows = nRows in
** both plans.
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

#endif /* PROFSUM_VTABKIT_H */
