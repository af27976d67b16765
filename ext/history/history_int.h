/*
** history_int.h — declarations shared by the files of the history layer
** only (compare.c, textrule.c, pair.c, history.c, bundle.c); what other
** layers use is in compare.h.
**
** Conventions as in compare.h: SQLite's allocator only; returned strings
** and messages are freed with sqlite3_free(), trees with jFree().  Error
** results are SQLite codes; busy codes (SQLITE_BUSY and its extended
** codes) come without a message, for profsumWriteRun() (busy.h) to retry.
*/
#ifndef PROFSUM_HISTORY_INT_H
#define PROFSUM_HISTORY_INT_H

#include "profsum_int.h"
#include "jsontree.h"
#include "summary_doc.h"
#include "compare.h"
#include "utf8rule.h"

/* The schema the history functions read and write (the attached schema of
** profsum_compare_json's options_json aside). */
#define HIST_SCHEMA "main"

/* String value of member zKey of pObj, or 0 when absent or not a string. */
static inline const char *profsumMemberStr(const JNode *pObj, const char *zKey){
  const JNode *p = jGet(pObj, zKey);
  return p && p->type==JT_STRING ? p->z : 0;
}

/* ---------------------------------------------------------------------
** The text rule (textrule.c): what text may enter the history.
*/

/* The check of a text argument, profsumTextArgFault(): utf8rule.h. */

/*
** Check the text rule on every string and key of the JSON text z (n bytes;
** text jParse() accepted).  Returns SQLITE_OK; SQLITE_ERROR with *pzErr
** naming the first string that breaks it — its JSONPath, what is wrong and
** where ("$.label: not valid UTF-8 (byte 0xff at byte 12)", "the key of
** $.a[\"x\"]: ...", "$.x: holds a lone surrogate (...) (\ud800 at byte
** 30)"; byte offsets count from z); or SQLITE_NOMEM (*pzErr 0).
*/
int profsumJsonTextRule(const char *z, int n, char **pzErr);

/* ---------------------------------------------------------------------
** A before/after pair in SQL (pair.c).
*/

/* Message for a failed SQLite call: the connection's error text
** (sqlite3_malloc'd, 0 when out of memory). */
char *profsumHistDbErr(sqlite3 *db);

/* The code to return for a failed statement: the extended code for busy
** errors (busy.c retries them; then no message), else rc with *pzErr set
** from the connection (unless already set). */
int profsumHistStmtFail(sqlite3 *db, int rc, char **pzErr);

/*
** Resolve the before/after arguments (a label or a trace id each) in
** schema zSchema into *pB and *pA; the same trace on both sides is an
** error.  Messages name the argument ("before: no trace with label 'x'").
** A lookup that failed because the database was busy returns SQLITE_BUSY
** (with a message saying so, not "no trace"): the write functions retry
** then (busy.c), the readers report it.
*/
int profsumHistResolvePair(sqlite3 *db, const char *zSchema, sqlite3_value *vB, sqlite3_value *vA,
                           sqlite3_int64 *pB, sqlite3_int64 *pA, char **pzErr);

/* The comparison a record is made of (profsum_track, profsum_bundle): the
** two trace arguments, the thresholds and the comparison's top_k. */
typedef struct ProfsumHistPairArgs {
  sqlite3_value *vB, *vA;   /* before / after: a label or a trace id each */
  ProfsumThresholds thr;    /* the thresholds */
  int topK;                 /* the comparison's top_k */
} ProfsumHistPairArgs;

/* Set *p to the traces argv[0] (before) and argv[1] (after), the default
** thresholds and top_k PROFSUM_COMPARE_TOP_K (history.c). */
void profsumHistPairArgsInit(ProfsumHistPairArgs *p, sqlite3_value **argv);

/*
** Check the traces of *p in HIST_SCHEMA before a write touches the
** database (profsumHistResolvePair; no WAL switch, no lock for a call that
** fails anyway).  A lookup the database was too busy for counts as
** passed when bBusyOk (the write body resolves the pair again under the
** write lock).  Returns SQLITE_OK or the lookup's code with *pzErr
** (history.c).
*/
int profsumHistPairCheck(sqlite3 *db, const ProfsumHistPairArgs *p, int bBusyOk, char **pzErr);

/*
** The §4.2 record of a pair (in HIST_SCHEMA): resolve the arguments, build
** both documents with their stored knobs, assess them (thresholds *pT,
** topK) and make the record with label zLabel (0: null) and the current
** time.  On success *ppRecord is a new tree, *pB and *pA the trace ids,
** and *ppDocB / *ppDocA (when not 0) the documents for the caller to free
** (profsumDocFree).  Returns an SQLite code (busy codes as
** profsumHistResolvePair).
*/
int profsumHistComputeRecord(sqlite3 *db, sqlite3_value *vB, sqlite3_value *vA,
                             const char *zLabel, const ProfsumThresholds *pT, int topK,
                             sqlite3_int64 *pB, sqlite3_int64 *pA, JNode **ppRecord,
                             ProfsumDoc **ppDocB, ProfsumDoc **ppDocA, char **pzErr);

/* Report an error as the result of ctx: "zFunc: message" (zErr, else
** SQLite's text for rc), with rc as the error code unless SQLITE_ERROR;
** SQLITE_NOMEM without a message → sqlite3_result_error_nomem(). */
void profsumHistReportErr(sqlite3_context *ctx, const char *zFunc, int rc, const char *zErr);

/* A path argument: non-empty TEXT.  Returns it, or 0 after reporting
** "zFunc: zWhat must be a non-empty path (text)". */
const char *profsumHistPathArg(sqlite3_context *ctx, const char *zFunc, const char *zWhat,
                               sqlite3_value *v);

/* One SQL function of the layer, for profsumHistRegister(). */
typedef struct ProfsumHistFunc {
  const char *zName;        /* the function's name */
  int nArg;                 /* its number of arguments */
  int flags;                /* SQLITE_UTF8 and the other flags */
  void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
} ProfsumHistFunc;

/* Register the n functions of a (no user data).  Returns SQLITE_OK, or the
** code of the first failure with *pzErr (if pzErr is not 0) naming it:
** "profsum: registering NAME/N failed: ...". */
int profsumHistRegister(sqlite3 *db, const ProfsumHistFunc *a, int n, char **pzErr);

/* ---------------------------------------------------------------------
** The history table (history.c).
*/

/*
** SQLITE_OK when the write transaction profsumWriteRun opened for the body
** is still open.  SQLite may end it under the body: a statement that runs
** out of memory (or meets an I/O error) rolls the whole transaction back,
** also one whose failure its caller absorbed (profsumCreateSchema takes a
** failed check for "not current").  Each write after that would commit on
** its own, and the COMMIT at the end would fail: check before writing.
** Otherwise SQLITE_ABORT with *pzErr saying so.
*/
int profsumHistWriteStillOpen(sqlite3 *db, char **pzErr);

/*
** Append one record to zSchema.profsum_history_record (the schema must
** exist: profsumCreateSchema).  pRecord is the §4.2 record tree; the
** label and status columns come from it, record_json is its JSONL line.
** zCreated: the created_at text; idB/idA: trace ids (0 → NULL; the series
** is the after trace's); zOrigin: 'track', 'bundle' or 'import'.  A
** string of the record that breaks the text rule is an error.  Returns an
** SQLite code (busy codes without a message); *piRow (when not 0) the new
** record_id.
*/
int profsumHistInsertRecord(sqlite3 *db, const char *zSchema, const JNode *pRecord,
                            const char *zCreated, sqlite3_int64 idB, sqlite3_int64 idA,
                            const char *zOrigin, sqlite3_int64 *piRow, char **pzErr);

/*
** The SQLite code of a failed profsumFileWrite*() step (fileio.h) for the
** file zPath in directory zDir, with *pzErr its message: "cannot write in
** directory 'zDir': <strerror>" when no complete temporary file could be
** written there (SQLITE_CANTOPEN when none could be created,
** PROFSUM_RC_FILEIO when writing it failed), "'zPath': <strerror>" when
** the rename failed (PROFSUM_RC_FILEIO); SQLITE_NOMEM for NOMEM.
*/
int profsumHistFileErr(int step, int e, const char *zDir, const char *zPath, char **pzErr);

/* Register profsum_track, profsum_history_import, profsum_history_export
** and profsum_history_summary_json (see profsumHistRegister), and the
** module profsum_series_runs (profsumRegisterSeriesRuns). */
int profsumRegisterHistory(sqlite3 *db, char **pzErr);

/* ---------------------------------------------------------------------
** The run order of the series (series.c).
*/

/* Register the module profsum_series_runs (read-only; the schema script
** makes its table in each database, views/trend.sql).  Returns
** SQLITE_OK, or the code with *pzErr (if pzErr is not 0 and unset)
** "profsum: cannot register profsum_series_runs (...)". */
int profsumRegisterSeriesRuns(sqlite3 *db, char **pzErr);

/* ---------------------------------------------------------------------
** The comparison bundle (bundle.c).
*/

/* Register profsum_bundle (see profsumHistRegister). */
int profsumRegisterBundle(sqlite3 *db, char **pzErr);

/* ---------------------------------------------------------------------
** The comparison for people (compare_md.c).
*/

/* Warn on stderr (prefixed with zFunc) when traces idB and idA of zSchema
** have different source_format (unless profsumHistQuietSources(1)). */
void profsumHistWarnSources(sqlite3 *db, const char *zSchema, sqlite3_int64 idB, sqlite3_int64 idA,
                            const char *zFunc);

/* Register profsum_compare_md (2, 3 and 4 arguments). */
int profsumRegisterCompareMd(sqlite3 *db, char **pzErr);

#endif /* PROFSUM_HISTORY_INT_H */
