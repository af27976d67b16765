/*
** doc_tables.c — the summary document's sections and their tables, both
** ways: fill the profsum_agg_* tables from a stored profile_summary.v1
** document (a v1 import, so the views work for it), and store the
** knob-dependent profsum_sec_* rows of a built document.  One function per
** section and direction; the section table of summary_doc.c calls them.
**
** Contracts shared by every function here: zS names the attached schema,
** iTrace the trace; on error the SQLite code is returned and *pzErr (when
** pzErr is not 0 and *pzErr is 0) holds SQLite's message, sqlite3_malloc'd
** and without prefix (the caller names itself).  None is atomic: the caller
** runs them inside its write transaction and rolls that back on error.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "jsontree.h"
#include "funcs.h"
#include "doc_int.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Fill from a stored v1 document                                      */
/* ------------------------------------------------------------------ */

/* Run the SQL text z (sqlite3_malloc'd, freed here; 0 = out of memory);
** on error set *pzErr to SQLite's message unless it is set already. */
static int fillExec(sqlite3 *db, char *z, char **pzErr){
  int rc;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, z, 0, 0, 0);
  if( rc && pzErr && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  sqlite3_free(z);
  return rc;
}

/* The stored document of the trace, as a subquery with one column d (two
** arguments: the schema and the trace id). */
#define DOC "(SELECT summary_json AS d FROM \"%w\".profsum_trace WHERE trace_id=%lld)"

/* See doc_int.h. */
int profsumDocFillRows(sqlite3 *db, const char *zS, sqlite3_int64 id, const char *zTable,
                       const char *const *azCol, int nCol, const char *zArray, char **pzErr){
  sqlite3_str *x = sqlite3_str_new(db);
  int k;
  sqlite3_str_appendf(x, "INSERT INTO \"%w\".%s SELECT %lld", zS, zTable, (long long)id);
  for(k=0; k<nCol; k++){
    if( strchr(azCol[k], '(') ) sqlite3_str_appendf(x, ", %s", azCol[k]);
    else sqlite3_str_appendf(x, ", json_extract(h.value,'$.%s')", azCol[k]);
  }
  sqlite3_str_appendf(x, " FROM " DOC " AS t, json_each(d, '$.%s') AS h", zS, (long long)id, zArray);
  return fillExec(db, sqlite3_str_finish(x), pzErr);
}

/* The columns of profsum_trace that a stored document sets: the column,
** the member's path in the document, and what the column keeps when the
** member is missing (an SQL expression; 0: NULL). */
static const char *const azTraceCol[][3] = {
  {"source_format",        "$.source_format",                       "source_format"},
  {"generated_at_utc",     "$.generated_at_utc",                    0},
  {"display_time_unit",    "$.trace_overview.display_time_unit",    0},
  {"num_events_total",     "$.trace_overview.num_events_total",     0},
  {"num_complete_events",  "$.trace_overview.num_complete_events",  0},
  {"num_processes",        "$.trace_overview.num_processes",        0},
  {"num_threads",          "$.trace_overview.num_threads",          0},
  {"profile_start_ts",     "$.trace_overview.profile_start_ts",     0},
  {"profile_end_ts",       "$.trace_overview.profile_end_ts",       0},
  {"suspected_truncation", "$.trace_overview.suspected_truncation", "0"},
  {"quality_warnings",     "$.trace_overview.quality_warnings",     "'[]'"},
  {"sha256",               "$.trace_provenance.trace_sha256",       "sha256"},
  {"run_ids",              "$.trace_provenance.run_ids",            "'[]'"},
  {"source_file_hints",    "$.trace_provenance.source_file_hints",  "'[]'"},
  {"run_metadata",         "$.run_metadata",                        "'{}'"},
};

/* The trace's header, overview and provenance: its profsum_trace row. */
int profsumDocFillTrace(sqlite3 *db, const char *zS, sqlite3_int64 id, char **pzErr){
  sqlite3_str *x = sqlite3_str_new(db);
  size_t k;
  sqlite3_str_appendf(x, "UPDATE \"%w\".profsum_trace SET", zS);
  for(k=0; k<sizeof(azTraceCol)/sizeof(azTraceCol[0]); k++){
    const char *const *c = azTraceCol[k];
    sqlite3_str_appendf(x, "%s %s = ", k ? "," : "", c[0]);
    if( c[2] ) sqlite3_str_appendf(x, "coalesce(json_extract(d, '%s'), %s)", c[1], c[2]);
    else sqlite3_str_appendf(x, "json_extract(d, '%s')", c[1]);
  }
  sqlite3_str_appendf(x, " FROM " DOC " WHERE trace_id=%lld", zS, (long long)id, (long long)id);
  return fillExec(db, sqlite3_str_finish(x), pzErr);
}

/* time_breakdown → profsum_agg_breakdown (the document's mode). */
int profsumDocFillBreakdown(sqlite3 *db, const char *zS, sqlite3_int64 id, char **pzErr){
  return fillExec(db, sqlite3_mprintf(
    "INSERT INTO \"%w\".profsum_agg_breakdown(trace_id, mode, category, duration) "
    "SELECT %lld, CASE WHEN json_extract(d,'$.time_breakdown.duration_basis')='exclusive_duration_global_timeline' "
    "  THEN 'exclusive_global' ELSE 'exclusive_per_track' END, c.value, "
    "  CASE WHEN c.value='total' THEN json_extract(d,'$.time_breakdown.total_duration') "
    "       ELSE json_extract(d,'$.time_breakdown.'||c.value||'.total_duration') END "
    "FROM " DOC " AS t, json_each('[\"compute\",\"communication\",\"host\",\"stall\",\"other\",\"total\"]') AS c",
    zS, (long long)id, zS, (long long)id), pzErr);
}

#undef DOC

/* ------------------------------------------------------------------ */
/* Store the knob-dependent section rows                               */
/* ------------------------------------------------------------------ */

/* Delete the rows of trace iTrace from table zTable of zS. */
static int deleteRows(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const char *zTable, char **pzErr){
  char *z = sqlite3_mprintf("DELETE FROM \"%w\".%s WHERE trace_id=%lld", zS, zTable, (long long)iTrace);
  int rc;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, z, 0, 0, 0);
  sqlite3_free(z);
  if( rc && pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc;
}

/* Bind a JSON node as an SQL value (an array or object as its JSON text;
** 0 and JSON null as NULL). */
static int bindNode(sqlite3_stmt *p, int i, const JNode *n){
  if( n==0 ){ sqlite3_bind_null(p, i); return SQLITE_OK; }
  switch( n->type ){
    case JT_INT: sqlite3_bind_int64(p, i, n->i); break;
    case JT_REAL: sqlite3_bind_double(p, i, n->r); break;
    case JT_STRING: return sqlite3_bind_text(p, i, n->z, n->n, SQLITE_TRANSIENT);
    case JT_TRUE: sqlite3_bind_int(p, i, 1); break;
    case JT_FALSE: sqlite3_bind_int(p, i, 0); break;
    case JT_ARRAY: case JT_OBJECT: {
      char *z = jDump(n);
      if( z==0 ) return SQLITE_NOMEM;      /* not a NULL in a NOT NULL column */
      return sqlite3_bind_text(p, i, z, -1, sqlite3_free);
    }
    default: sqlite3_bind_null(p, i); break;
  }
  return SQLITE_OK;
}

/* Step p once (an INSERT); on failure return its error with *pzErr set. */
static int stepInsert(sqlite3 *db, sqlite3_stmt *p, char **pzErr){
  int rc;
  if( sqlite3_step(p)!=SQLITE_DONE ){
    rc = sqlite3_reset(p);
    if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
    if( pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  return sqlite3_reset(p);
}

/* Replace the rows of trace iTrace in zTable: one row per element of pArr
** (rank = its index), binding the members azCol[0..nCol-1] of the element
** (or, when absent, of its member zStatsKey when that is not 0). */
static int insertRows(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, char **pzErr,
                      const char *zTable, const char **azCol, int nCol, const JNode *pArr,
                      const char *zStatsKey){
  sqlite3_str *s;
  sqlite3_stmt *p = 0;
  char *zSql;
  int rc, i, k;
  if( (rc = deleteRows(db, zS, iTrace, zTable, pzErr))!=SQLITE_OK ) return rc;
  s = sqlite3_str_new(db);
  sqlite3_str_appendf(s, "INSERT INTO \"%w\".%s(trace_id, rank", zS, zTable);
  for(k=0; k<nCol; k++) sqlite3_str_appendf(s, ", %s", azCol[k]);
  sqlite3_str_appendall(s, ") VALUES(?1, ?2");
  for(k=0; k<nCol; k++) sqlite3_str_appendf(s, ", ?%d", k+3);
  sqlite3_str_appendall(s, ")");
  zSql = sqlite3_str_finish(s);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc ){ if( pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db)); return rc; }
  for(i=0; pArr && i<pArr->nChild && rc==SQLITE_OK; i++){
    const JNode *o = pArr->a[i];
    const JNode *st = zStatsKey ? jGet(o, zStatsKey) : 0;
    sqlite3_bind_int64(p, 1, iTrace);
    sqlite3_bind_int(p, 2, i);
    for(k=0; k<nCol; k++){
      const JNode *v = jGet(o, azCol[k]);
      if( v==0 && st ) v = jGet(st, azCol[k]);
      if( strcmp(azCol[k], "canonical_name")==0
       && (v==0 || v->type!=JT_STRING || v->n==0) ){
        /* the reference's reader recomputes a missing or empty one */
        const JNode *pName = jGet(o, "name");
        if( pName && pName->type==JT_STRING ){
          ProfsumSlice c = profsumCanonicalOp(pName->z, pName->n);
          sqlite3_bind_text(p, k+3, c.z ? c.z : "", c.z ? c.n : 0, SQLITE_TRANSIENT);
          continue;
        }
      }
      if( (rc = bindNode(p, k+3, v))!=SQLITE_OK ) break;
    }
    if( rc ) break;
    rc = stepInsert(db, p, pzErr);
  }
  sqlite3_finalize(p);
  return rc;
}

/* step_time → profsum_sec_step_stats (two rows keyed by scope: all,
** steady) and profsum_sec_step_class (one per class). */
int profsumDocStoreSteps(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const JNode *pRoot,
                         char **pzErr){
  static const char *azStats[] = {"count","mean","median","p90","min","max"};
  static const char *azClass[] = {"name","count","fraction_of_steady","mean","median","p90","min","max",
    "representative_step","representative_duration","periodicity"};
  static const char *azScope[2][2] = {{"all","all_steps"},{"steady","steady_state_steps"}};
  const JNode *st = jGet(pRoot, "step_time");
  int k, rc;
  for(k=0; k<2; k++){
    const JNode *ds = jGet(st, azScope[k][1]);
    if( ds==0 || ds->type!=JT_OBJECT || jGet(ds, "count")==0 ){
      /* said as what it is, not as a constraint of a table */
      if( pzErr ) *pzErr = sqlite3_mprintf("its step_time has no %s object with a count "
                                           "(a profile_summary.v1 document has step_time.%s)",
                                           azScope[k][1], azScope[k][1]);
      return SQLITE_CONSTRAINT;
    }
  }
  rc = deleteRows(db, zS, iTrace, "profsum_sec_step_stats", pzErr);
  for(k=0; k<2 && rc==SQLITE_OK; k++){
    const JNode *ds = jGet(st, azScope[k][1]);
    sqlite3_stmt *p = 0;
    char *z = sqlite3_mprintf("INSERT INTO \"%w\".profsum_sec_step_stats VALUES(?1,?2,?3,?4,?5,?6,?7,?8)", zS);
    int c;
    if( z==0 ){ rc = SQLITE_NOMEM; break; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    if( rc ){ if( pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db)); break; }
    sqlite3_bind_int64(p, 1, iTrace);
    sqlite3_bind_text(p, 2, azScope[k][0], -1, SQLITE_STATIC);
    for(c=0; c<6; c++) bindNode(p, c+3, jGet(ds, azStats[c]));
    rc = stepInsert(db, p, pzErr);
    sqlite3_finalize(p);
  }
  if( rc==SQLITE_OK ) rc = insertRows(db, zS, iTrace, pzErr, "profsum_sec_step_class", azClass, 11,
                                      jGet(st, "classes"), "duration_stats");
  return rc;
}

/* hot_ops → profsum_sec_hot_op. */
int profsumDocStoreHotOps(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const JNode *pRoot,
                          char **pzErr){
  static const char *azHot[] = {"name","canonical_name","category","count","total_duration",
    "exclusive_duration","avg_duration","shape_signature","source_file","tf_op_path",
    "flop_proxy_per_invocation"};
  return insertRows(db, zS, iTrace, pzErr, "profsum_sec_hot_op", azHot, 11, jGet(pRoot, "hot_ops"), 0);
}

/* semantic_families → profsum_sec_family. */
int profsumDocStoreFamilies(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const JNode *pRoot,
                            char **pzErr){
  static const char *azFam[] = {"family","count","total_duration","exclusive_duration","share_of_total",
    "avg_duration","avg_exclusive_duration","example_op","dominant_shape_signature",
    "flop_proxy_total","time_per_flop_proxy"};
  return insertRows(db, zS, iTrace, pzErr, "profsum_sec_family", azFam, 11,
                    jGet(pRoot, "semantic_families"), 0);
}

/* optimization_candidates → profsum_sec_candidate. */
int profsumDocStoreCandidates(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const JNode *pRoot,
                              char **pzErr){
  static const char *azCand[] = {"candidate_id","title","rationale","evidence","suggestions"};
  return insertRows(db, zS, iTrace, pzErr, "profsum_sec_candidate", azCand, 5,
                    jGet(pRoot, "optimization_candidates"), 0);
}
