/*
** summary_doc.h — the profile_summary.v1 document of one imported trace
** ("Stage B": aggregates + knobs → document, JSON, markdown, sections).
**
** Semantics: docs/spec/summary.md §3–§4 (document and
** serialization) and summary-v1-tools-spec.md §5 (markdown report).
**
** Conventions of every function below:
**   - Memory comes from SQLite's allocator; returned strings are freed by
**     the caller with sqlite3_free().
**   - Functions returning int return SQLITE_OK or an SQLite error code.  On
**     an error other than SQLITE_NOMEM, *pzErr (when pzErr is not 0) is set
**     to a message from sqlite3_malloc that the caller frees.  Messages are
**     lower case and carry NO function-name prefix: the SQL-level caller adds
**     its own ("profsum_import: ", "profsum_summary_json: ", ...).
**   - zSchema names the attached database holding the profsum tables
**     ("main", "temp", or an ATTACH name); it is quoted, never interpolated.
**   - Nothing keeps state between calls (no globals).
*/
#ifndef PROFSUM_SUMMARY_DOC_H
#define PROFSUM_SUMMARY_DOC_H

#include "profsum_int.h"

/* Default knob values (summary-v1-spec §4, profsum_import options). */
#define PROFSUM_DEFAULT_WARMUP_STEPS 5
#define PROFSUM_DEFAULT_HOT_OP_LIMIT 25

/* The knobs that change the document (everything else is knob-free). */
typedef struct ProfsumKnobs {
  int warmupSteps;    /* warmup_steps: steps with number < this are warmup (>= 0) */
  int hotOpLimit;     /* hot_op_limit: hot ops kept (>= 0); other limits derive */
  int globalMode;     /* breakdown_mode: 0 exclusive_per_track, 1 exclusive_global */
} ProfsumKnobs;

/* An opaque built document: a JSON tree (computed from the aggregate tables
** or parsed from a stored v1 file) plus, for a stored file, its raw text. */
typedef struct ProfsumDoc ProfsumDoc;

/* Set *pK to the defaults: 5, 25, exclusive_per_track. */
void profsumKnobsInit(ProfsumKnobs *pK);

/*
** Apply the knob keys of an options JSON object to *pK.  Keys present
** override, absent keys leave *pK unchanged (so initialize it first, with
** profsumKnobsInit() or the trace's stored knobs).  Recognized keys:
**   warmup_steps   JSON integer >= 0
**   hot_op_limit   JSON integer >= 0
**   breakdown_mode "exclusive_per_track" | "exclusive_global"
** With bStrict, any other key but "schema" is an error (a caller's
** options: a misspelled knob must not give the defaults); without, other
** keys are ignored (the options stored by profsum_import have more).  zJson
** may be 0 (no change).  Errors (then *pK is unchanged): text that is not
** JSON, a value that is not an object, an unknown key (bStrict), a knob of
** the wrong type or value (the message names the key, e.g. "option
** warmup_steps must be a non-negative integer").
*/
int profsumParseKnobs(const char *zJson, ProfsumKnobs *pK, int bStrict, char **pzErr);

/*
** The options_json of a reading function that takes the key "schema" (an
** attached database to read, default "main") and the boolean keys named in
** azBool (0-terminated list, or 0); each found boolean's value goes to the
** matching pbBool entry.  zJson NULL: defaults.  *pzSchema is
** sqlite3_malloc'd (0 for "main").  Errors (SQLITE_ERROR, *pzErr without
** a function name): not an object, an unknown key (the message lists the
** known ones), a value of the wrong type, a schema that is not attached.
*/
int profsumSchemaOption(sqlite3 *db, const char *zJson, const char *const *azBool,
                        int *pbBool, char **pzSchema, char **pzErr);

/*
** Resolve pTrace in zSchema, take its stored knobs (overridden by the knob
** options zKnobs, strict about unknown keys, when not 0) and build its
** document into *ppDoc (its id into *pId); on error set it on ctx,
** prefixed with zFunc, and return its code.
*/
int profsumDocIn(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                 const char *zSchema, const char *zKnobs, ProfsumDoc **ppDoc,
                 sqlite3_int64 *pId);

/*
** The document of the trace pTrace names, for a reading SQL function zFunc:
** pOpts (0 or NULL: none) is its options_json, which may name only the
** "schema" (profsumSchemaOption); the trace is resolved there and built with
** its stored knobs.  On success *ppDoc, *pId and *pzSchema (sqlite3_malloc'd,
** "main" when none was named; the caller frees it) are set.  On error the
** error is set on ctx (prefixed with zFunc) and nothing is returned.
*/
int profsumDocForCall(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                      sqlite3_value *pOpts, ProfsumDoc **ppDoc, sqlite3_int64 *pId,
                      char **pzSchema);

/*
** The knobs stored with trace iTrace: defaults overridden by
** profsum_trace.options.  Errors: no such trace, unreadable options.
*/
int profsumTraceKnobs(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                      ProfsumKnobs *pK, char **pzErr);

/*
** Resolve a SQL "trace" argument: an INTEGER (or an integral REAL) is a
** trace_id that must exist ("no trace with id N"), a TEXT is a label ("no
** trace with label 'x'", followed by profsumLabelPrefixHint's list when
** labels start with 'x/'); NULL and BLOB are errors.  On success *pId is
** the trace_id.
*/
int profsumResolveTrace(sqlite3 *db, const char *zSchema, sqlite3_value *pArg,
                        sqlite3_int64 *pId, char **pzErr);

/*
** For a label zLabel that names no trace of zSchema.profsum_trace: the
** labels that start with zLabel and "/" (the hosts of a session, imported
** as <label>/<host>: docs/sessions.md), to follow a "no trace with label"
** message: "; labels that start with 'run/' (the traces of a session, one
** per host): 'run/h0', 'run/h1', ... and 7 more" (the first five in label
** order).  "" when no label starts so, or the lookup fails (the message
** stands without it); 0 when out of memory.  sqlite3_malloc'd.
*/
char *profsumLabelPrefixHint(sqlite3 *db, const char *zSchema, const char *zLabel);

/*
** Build the document of trace iTrace with knobs *pK from profsum_trace and
** the profsum_agg_* tables of zSchema.  A trace imported from a v1 file
** (profsum_trace.summary_json not NULL) gives its stored document; then
** knobs that differ from the trace's stored knobs are an error ("trace 'x'
** was imported from a profile_summary.v1 file; its summary cannot be
** recomputed with other options").  On success *ppDoc is a new document
** (free with profsumDocFree); on error *ppDoc is 0.
*/
int profsumDocBuild(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                    const ProfsumKnobs *pK, ProfsumDoc **ppDoc, char **pzErr);

/*
** profsumDocBuild() without what no stored section reads: the hierarchical
** regions, the gap contexts, and the gaps after the first (the candidates
** read the first).  For profsumDocStoreSections() at import only (about a
** third of the build's work on an xprof trace): the document is incomplete,
** never serialize it.
*/
int profsumDocBuildSections(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                            const ProfsumKnobs *pK, ProfsumDoc **ppDoc, char **pzErr);

/*
** Parse a profile_summary.v1 JSON text (nJson bytes, or up to the NUL when
** nJson < 0) into a document, e.g. for report rendering.  Errors: not JSON,
** not an object.  profsumDocJson() of the result writes it as the reference
** writes a summary it read.
*/
int profsumDocFromJson(const char *zJson, int nJson, ProfsumDoc **ppDoc,
                       char **pzErr);

/*
** The v1 JSON text: byte-exact Python json.dumps(doc, indent=2,
** sort_keys=True) (ensure_ascii, float repr), no trailing newline; for a
** document from a stored v1 file, that file as the reference writes a
** summary it read (profsumDocReread).  Returns 0 when out of memory.
*/
char *profsumDocJson(ProfsumDoc *pDoc);

/*
** (doc_reread.c) A new tree of the v1 document pDoc as the reference's
** reader makes it: the fields of its record types only, absent ones null,
** the reader's defaults (suspected_truncation false; quality_warnings,
** run_ids, classes and the other optional lists []), legacy names read
** under the current ones (work_proxy_per_invocation, work_proxy_total,
** normalized_exclusive_per_work), an empty canonical_name recomputed from
** the op's name, an empty payload_op or marker_op the gap's name.  Values
** keep their JSON types.  0 when out of memory.
*/
struct JNode;
struct JNode *profsumDocReread(const struct JNode *pDoc);

/*
** The markdown report (tools-spec §5, build_markdown_report(summary,
** top_k)), ending with exactly one newline.  Each section's rows are cut
** as Python's list[:topK] cuts them (a negative topK drops the last -topK
** rows).  Returns 0 when out of memory.
*/
char *profsumDocReportMd(ProfsumDoc *pDoc, int topK);

/*
** Replace the profsum_sec_* rows of trace iTrace in zSchema with the
** sections of pDoc (step stats, step classes, hot ops, families,
** candidates).  Not atomic by itself: the caller runs it inside its write
** transaction (profsumWriteRun, busy.c) and rolls that back on error.  (A
** savepoint of its own, opened after the import's other writes, made
** SQLite journal every page it touched again, into a temporary file.)
*/
int profsumDocStoreSections(sqlite3 *db, const char *zSchema,
                            sqlite3_int64 iTrace, ProfsumDoc *pDoc,
                            char **pzErr);

/*
** Fill the profsum_agg_* tables and the profsum_trace columns of trace
** iTrace in zSchema from its stored profile_summary.v1 document
** (profsum_trace.summary_json), so the views work for a v1 import.  Errors
** are prefixed with zFunc; a constraint failure names the file zPath, the
** section and the rule it breaks ("hot_ops has two entries with the same
** name").  Not atomic: the caller's transaction is.
*/
int profsumDocFillFromV1(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                         const char *zFunc, const char *zPath, char **pzErr);

/* The document tree (a JNode of jsontree.h) for renderers. */
struct JNode;
const struct JNode *profsumDocRoot(ProfsumDoc *pDoc);

/* Free a document (0 is a no-op). */
void profsumDocFree(ProfsumDoc *pDoc);

/*
** Re-serialize any JSON text (nJson bytes, or up to the NUL when nJson < 0)
** exactly as Python's json.dumps(json.loads(text), indent=2,
** sort_keys=True) does.  NaN/Infinity/-Infinity are accepted as Python
** does.  Returns the new text, or 0 with *pzErr set (invalid JSON) or not
** set (out of memory).
*/
char *profsumJsonPretty(const char *zJson, int nJson, char **pzErr);


/*
** One member of semantic_families (summary-v1 §4.6): the family's totals,
** share_of_total = share, its averages, example_op, the dominant shape
** signature (zDominant, or null when 0), flop_proxy_total (when hasFlop)
** and time_per_flop_proxy (when hasFlop and flop > 0, else null).  Used by
** the summary and by the families a comparison works out for a document
** without them.  Returns the object, or 0 when out of memory.
*/
struct JNode *profsumFamilyObject(const char *zFam, sqlite3_int64 count, double total, double excl,
                                  double share, const char *zExample, const char *zDominant,
                                  int hasFlop, double flop);
/* The same with the example op's length nExample (its text may hold a
** NUL character; -1: up to the first NUL). */
struct JNode *profsumFamilyObjectN(const char *zFam, sqlite3_int64 count, double total, double excl,
                                   double share, const char *zExample, int nExample,
                                   const char *zDominant, int hasFlop, double flop);

/*
** Register profsum_summary_json(trace [, options_json]),
** profsum_report_md(trace [, top_k]) and profsum_json_pretty(json).
*/
int profsumRegisterSummaryDoc(sqlite3 *db, char **pzErr);

#endif /* PROFSUM_SUMMARY_DOC_H */
