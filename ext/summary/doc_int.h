/*
** doc_int.h — declarations shared by the files of the summary document
** (summary_doc.c, doc_knobs.c) and by no one else.
*/
#ifndef PROFSUM_DOC_INT_H
#define PROFSUM_DOC_INT_H

#include "profsum_int.h"

/* Prepare zFmt with the schema name formatted in (its one %w).  On
** failure *pzErr is set (sqlite3_malloc'd) and *pp is 0. */
int profsumDocPrep(sqlite3 *db, sqlite3_stmt **pp, char **pzErr, const char *zFmt, const char *zSchema);

/* After sqlite3_step() returned rc, not SQLITE_ROW, for trace iTrace: the
** step's error when it failed, else "no trace with id N".  Sets *pzErr
** (when pzErr is not 0) and returns the code (doc_knobs.c). */
int profsumDocNoTraceRow(sqlite3 *db, int rc, sqlite3_int64 iTrace, char **pzErr);

/* 1 when a prepare that returned rc failed for a missing table of the
** schema (no trace imported there, or an older database), 0 for any
** other failure (doc_knobs.c). */
int profsumDocNoSuchTable(sqlite3 *db, int rc);

#endif
