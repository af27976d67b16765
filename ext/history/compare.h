/*
** compare.h — the history layer's interface to the others: the documents
** of a before/after comparison (compare.c: comparison, assessment against
** thresholds, the regression record) and the registration of the layer's
** SQL functions (pair.c: profsum_compare_json; history.c: profsum_track
** and the history table, JSONL import and export, history summary;
** bundle.c: profsum_bundle).
**
** Semantics: docs/spec/tools.md §3 (compare), §4 (tracking: thresholds,
** record, JSONL history, history summary) and §6 (bundle).  Documents are
** JSON trees (jsontree.h) of profile_summary.v1, as profsumDocRoot()
** returns them.
**
** Conventions: SQLite's allocator only; returned trees are freed with
** jFree(), returned strings with sqlite3_free().  Functions returning a
** tree return 0 only when out of memory.  Nothing keeps state between calls.
*/
#ifndef PROFSUM_COMPARE_H
#define PROFSUM_COMPARE_H

#include "profsum_int.h"
/* profsumJsonCompact() (jsontree.h), profsumNowIso() and profsumPyPathStr()
** (pycompat.h) were declared here: kept visible for the files of other
** layers that include compare.h for them and should include their own
** homes instead. */
#include "jsontree.h"
#include "pycompat.h"

/* Default top_k of compare, track and bundle (tools-spec §1). */
#define PROFSUM_COMPARE_TOP_K 10

/* The thresholds of tools-spec §4.1 (percent units for the first two,
** absolute share units for the last two). */
typedef struct ProfsumThresholds {
  double medianPct;   /* max_step_median_regression_pct (5.0) */
  double p90Pct;      /* max_step_p90_regression_pct (10.0) */
  double commAbs;     /* max_communication_share_regression_abs (0.05) */
  double stallAbs;    /* max_stall_share_regression_abs (0.05) */
} ProfsumThresholds;

/* Set *pT to the defaults 5.0, 10.0, 0.05, 0.05. */
void profsumThresholdsInit(ProfsumThresholds *pT);

/*
** Apply a thresholds JSON object (the keys of the track CLI flags without
** dashes: max_step_median_regression_pct, max_step_p90_regression_pct,
** max_communication_share_regression_abs, max_stall_share_regression_abs)
** to *pT.  pObj is a parsed tree.  Keys present override; any JSON number
** is taken, also Infinity, -Infinity and NaN (Python's float thresholds:
** a comparison with NaN never triggers).  A value that is not an object, an
** unknown key, or a value that is not a number is an error (message "…
** must be a finite number"): then *pT is unchanged and *pzErr is a message
** (sqlite3_malloc'd) starting with zWhat (e.g. "thresholds_json").
** zAlsoKnown (or NULL) names keys the caller takes out of the object before
** this call, listed among the known ones in the unknown-key message.
*/
int profsumThresholdsApply(const JNode *pObj, const char *zWhat, const char *zAlsoKnown,
                           ProfsumThresholds *pT, char **pzErr);

/*
** compare_profile_summaries(before, after, top_k) of tools-spec §3: a new
** tree with before_source, after_source, provenance_checks, step_time,
** step_classes, time_breakdown_share_delta, semantic_family_delta,
** regressed_ops and improved_ops.  Reads the documents leniently (a missing
** member is null); numbers keep Python's int/float distinction (int − int
** is an int).  regressed_ops and improved_ops are each cut as Python's
** list[:topK] cuts them: 0 keeps none, a negative topK drops the last
** -topK rows (all of them when there are no more than that).
*/
JNode *profsumCompareDocs(const JNode *pBefore, const JNode *pAfter, int topK);

/*
** assess_profile_regression() of tools-spec §4.1: {status, failures,
** warnings, metrics, comparison} with its own comparison.
*/
JNode *profsumAssess(const JNode *pBefore, const JNode *pAfter,
                     const ProfsumThresholds *pT, int topK);

/*
** make_regression_record() of tools-spec §4.2: {recorded_at_utc, label,
** before, after, assessment}.  Takes ownership of pAssessment (also on
** failure).  zLabel 0 → null.  zRecordedAt: the UTC time text.
*/
JNode *profsumMakeRecord(const JNode *pBefore, const JNode *pAfter,
                         JNode *pAssessment, const char *zLabel,
                         const char *zRecordedAt);

/*
** Register profsum_compare_json, profsum_track, profsum_history_import,
** profsum_history_export, profsum_history_summary_json and profsum_bundle.
** profsum_history_import reads its file a line at a time (at most 16 MiB a
** line, 1 GiB a file) and refuses a record with a string that is not
** valid UTF-8, holds U+0000 or a lone surrogate escape (the text rule,
** textrule.c); so do profsum_track's label and profsum_bundle's options.
*/
int profsumRegisterCompare(sqlite3 *db, char **pzErr);

/* profsum_compare_json and profsum_track warn on stderr when before and
** after have different source_format (compare_md.c); a program that says
** so itself (the profsum command line) turns that off with bQuiet 1. */
void profsumHistQuietSources(int bQuiet);

/* The name of profsum_bundle's file i (0 to 5), or 0 past the last
** (bundle.c). */
const char *profsumBundleFileName(int i);

#endif /* PROFSUM_COMPARE_H */
