/*
** json_kind.h — what a JSON file given to profsum_import is (a trace, a
** profile_summary.v1 summary, or neither), told by the keys of its
** top-level object; json_kind.c walks them.
**
** What a JSON file is, decided by the keys of its top-level object (not
** by a text search: a v1 summary has sorted keys, so "schema_version"
** may come after megabytes of hot_ops).  The top level is walked over
** the streamed bytes: values are skipped by counting brackets outside
** strings, nothing is kept but a 64 KiB window and two short strings, and
** the walk stops at the first top-level "traceEvents" (a trace) or at a
** "schema_version" whose value is "profile_summary.v1" (a summary).  So a
** trace whose traceEvents comes first costs one window; a file is read
** to its end only when it has neither key (it is no trace with events
** then).  Syntax the walk does not follow (garbage, a read error) gives
** PSK_UNKNOWN, an object cut off before either key PSK_TRUNC: the import
** then leaves it to the trace reader to say what is wrong.
*/
#ifndef PROFSUM_JSON_KIND_H
#define PROFSUM_JSON_KIND_H

#define PSK_UNKNOWN  0   /* unreadable, not JSON, or cut off before the answer */
#define PSK_V1       1   /* object; "schema_version": "profile_summary.v1" */
#define PSK_TRACE    2   /* object with a top-level "traceEvents" */
#define PSK_EVENTS   3   /* array whose first element is an object (JSON Array Format) */
#define PSK_ARRAY    4   /* another array: [] or [1,2] */
#define PSK_OBJECT   5   /* object with neither key */
#define PSK_SCHEMA   6   /* object with another schema_version and no traceEvents */
#define PSK_SCALAR   7   /* a string, number, true, false or null */
#define PSK_TRUNC    8   /* object cut off (end of data) before either key */
#define PSK_NOMEM    9   /* out of memory before an answer: the import fails
                         ** (a summary must not be read as a trace) */

/* The kind (PSK_*) of the (possibly gzipped) JSON file zPath.  With
** PSK_SCHEMA, *pzSchema (when pzSchema is not 0) gets the schema_version
** value for a message (sqlite3_malloc'd). */
int profsumJsonFileKind(const char *zPath, char **pzSchema);

#endif /* PROFSUM_JSON_KIND_H */
