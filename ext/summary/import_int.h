/*
** import_int.h — what the files of profsum_import share (import.c, the
** import itself; import_opts.c, its options; schema.c and schema_views.c, the tables and
** views it creates and upgrades; session.c, a session's hosts; op_growth_store.c,
** the stored ranks of profsum_op_growth).  Not included elsewhere.
*/
#ifndef PROFSUM_IMPORT_INT_H
#define PROFSUM_IMPORT_INT_H

#include "profsum_int.h"
#include "summary_engine.h"

/* Parsed options. */
typedef struct ImportOpts {
  int warmup, hotOpLimit, globalMode, storeEvents, replace;
  int reuse;                  /* return a stored trace of the same file and options */
  int uniqueLabel;            /* a taken label gets a -2, -3, ... suffix */
  char *zSeries;              /* sqlite3_malloc'd or NULL */
  char *zAlias;               /* W&B run sources: the artifact alias (NULL: latest) */
  char *zSchema;              /* sqlite3_malloc'd ("main" by default) */
  char *zDevicePeaks;         /* "device_peaks": the JSON object's text, or NULL */
  char *zSession;             /* "session": reference (NULL), latest, all or a folder name */
  int hostsAll;               /* "hosts": 'all' (1) or 'one' (0, the default) */
  int diagAll;                /* "store_diagnostics": 'all' (1) or 'compact' (0) */
} ImportOpts;

/* Run the schema script zScript (its "main." already replaced by zSchema's
** quoted name) in zSchema: every statement but the views through
** sqlite3_exec, the views written as rows of the schema table when the
** connection allows it, else run as statements too (schema_views.c).  In
** the caller's transaction.  An SQLite code; the message is the
** connection's. */
int profsumSchemaRunScript(sqlite3 *db, const char *zSchema, const char *zScript);

/* Parse options_json (NULL → defaults) into *o (its strings
** sqlite3_malloc'd: the caller frees them, also on error).  Unknown keys
** are an error (a typo must not be silently ignored).  SQLITE_OK, or an
** error code with *pzErr ("profsum_import: options_json: ...") set. */
int profsumImportParseOpts(sqlite3 *db, const char *zJson, ImportOpts *o, char **pzErr);

/* The label argument v of profsum_import given (not NULL): text SQLite
** keeps whole (utf8rule.h), not empty, copied to *pzLabel
** (sqlite3_malloc'd).  SQLITE_OK, SQLITE_ERROR with *pzErr ("profsum_import:
** the label must be text or NULL", "... holds U+0000 ..."), or
** SQLITE_NOMEM. */
int profsumImportLabelArg(sqlite3_value *v, char **pzLabel, char **pzErr);

/* The flags of profsumEngineParse the options o ask for: with
** store_diagnostics 'all' the engine keeps every diagnostic. */
static inline unsigned profsumImportEngineFlags(const ImportOpts *o){
  return o->diagAll ? PROFSUM_ENGINE_DIAG_ALL : 0;
}

/* Run the statement zFmt formats (%w for identifiers) as profsumExecV
** does (zFunc names the function in *pzErr; bNomemMsg: a message for
** SQLITE_NOMEM too).  SQLITE_OK or the error code (import.c). */
int profsumImportExec(sqlite3 *db, const char *zFunc, int bNomemMsg, char **pzErr, const char *zFmt, ...);

/* Prepare the statement zFmt formats (sqlite3_vmprintf: %w for
** identifiers) into *pp (0 on an error).  On an error *pzErr is set to
** "zFunc: SQLite's message", for SQLITE_NOMEM only with bNomemMsg.
** SQLITE_OK or the error code (import.c). */
int profsumImportPrepare(sqlite3 *db, sqlite3_stmt **pp, const char *zFunc, int bNomemMsg, char **pzErr,
                         const char *zFmt, ...);

/* 1 when the query zSql (sqlite3_malloc'd, taken; 0: out of memory),
** with ?1 bound to zBind when that is not 0, has a row, 0 when it has
** none, -1 on an error (*pRc set) (import.c). */
int profsumHasRow(sqlite3 *db, char *zSql, const char *zBind, int *pRc);

/* ---------------------------------------------------------------------
** The stored ranks of profsum_op_growth (op_growth_store.c): the table
** profsum_agg_op_growth.  Messages carry no function-name prefix (the
** caller adds its own); busy codes come without one.
*/

/* Write again the stored ranks of trace iTrace's pair in zSchema (its rows
** deleted, then what profsum_op_growth gives for it inserted: none when it
** has no series or no previous run); *pnRow (when not 0) the rows
** written.  The schema must be current (profsumCreateSchema). */
int profsumOpGrowthStore(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, sqlite3_int64 *pnRow,
                         char **pzErr);

/* The run after trace iTrace in its series in zSchema into *piNext (0:
** none, or no series): one seek in the index profsum_trace_series. */
int profsumOpGrowthNextRun(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, sqlite3_int64 *piNext,
                           char **pzErr);

/* After trace iTrace was stored (its ops written): the ranks of its pair,
** and of the run after it when there is one (its previous run is now
** iTrace).  The pairs a new run changes; two pairs' ops at most. */
int profsumOpGrowthImported(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, char **pzErr);

/* Register profsum_op_growth_store([trace]) (DIRECTONLY: it writes).
** SQLITE_OK, or the code with *pzErr (when pzErr is not 0 and unset). */
int profsumRegisterOpGrowthStore(sqlite3 *db, char **pzErr);

/* import_warn.c: the quality warnings of trace id in zSchema where the
** reference would do otherwise than profsum did reading its file (pI: what
** the read found; zRefNote: where the reference would read another file of
** the folder or fail, why, as profsumPickTraceNote says it; or 0) — the
** pick, the file's form, its entries.  What a folder pick left aside
** (zPickNote, or 0), where profsum read what the reference reads, is a
** diagnostic (kind folder_pick) instead: the v1 document's warnings stay
** the reference's.  SQLITE_OK or an error code with *pzErr set. */
int profsumImportReadWarnings(sqlite3 *db, const char *zSchema, sqlite3_int64 id,
                              const ProfsumEngineInfo *pI, const char *zPickNote,
                              const char *zRefNote, char **pzErr);

/* import_bg.c: the first import into a new database parses its trace on a
** thread of its own while the schema is created.
** profsumImportBgWanted: 1 when this import is such a one (threads allowed,
** outside any transaction, a regular file of at most 64 MiB, and a database
** file that is empty or missing, or one in memory without the schema);
** decided without reading the database (a read could wait for a lock).
** profsumImportBgStart: the parse of zTrace (profsumEngineParse with flags)
** started on a thread, or 0 when it could not start (the caller parses).
** profsumImportBgFinish: wait for it, asking db every 10 ms whether it was
** interrupted (then the parse is told to stop), and hand over its engine
** and info; *ppBg is freed and set to 0; returns the parse's result, its
** message in *pzErr.  profsumImportBgDiscard: stop it if running, join,
** free it and what it made (0: nothing). */
typedef struct ImportBg ImportBg;
int profsumImportBgWanted(sqlite3 *db, const char *zSchema, const char *zTrace);
ImportBg *profsumImportBgStart(const char *zTrace, unsigned flags);
int profsumImportBgFinish(sqlite3 *db, ImportBg **ppBg, ProfsumEngine **ppEngine,
                          ProfsumEngineInfo *pInfo, char **pzErr);
void profsumImportBgDiscard(ImportBg *b);

#endif /* PROFSUM_IMPORT_INT_H */
