/*
** doc_int.h — declarations shared by the files of the summary document
** (summary_doc.c, doc_knobs.c, doc_tables.c) and by no one else.
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

/* The fill steps of the section table (doc_tables.c): from trace iTrace's
** stored v1 document (profsum_trace.summary_json), update its
** profsum_trace row (the header) or fill profsum_agg_breakdown.  On error
** *pzErr, when 0, is set to SQLite's message without prefix. */
int profsumDocFillTrace(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, char **pzErr);
int profsumDocFillBreakdown(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, char **pzErr);

/* The fill of a listed section: insert into zTable one row per element h
** of the stored document's array zArray: the trace id, then per column
** azCol[k] json_extract(h.value,'$.<azCol[k]>'), or azCol[k] itself when
** it is an SQL expression (holds a '(').  Errors as above. */
int profsumDocFillRows(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const char *zTable,
                       const char *const *azCol, int nCol, const char *zArray, char **pzErr);

/* The store steps of the section table (doc_tables.c): replace trace
** iTrace's rows of the section's profsum_sec_* tables with the section of
** the built document pRoot.  On error *pzErr is set to SQLite's message. */
struct JNode;
int profsumDocStoreSteps(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const struct JNode *pRoot,
                         char **pzErr);
int profsumDocStoreHotOps(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const struct JNode *pRoot,
                          char **pzErr);
int profsumDocStoreFamilies(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const struct JNode *pRoot,
                            char **pzErr);
int profsumDocStoreCandidates(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const struct JNode *pRoot,
                              char **pzErr);

#endif
