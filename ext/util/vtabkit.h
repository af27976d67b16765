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

#endif /* PROFSUM_VTABKIT_H */
