/*
** report_profsum.c — profsum's own sections of the markdown report, after
** the reference's (which stay byte for byte its own):
**
**   ## profsum: data quality         what the numbers below may lack
**   ## profsum: wall-clock time      the profile's span, the steady steps'
**                                    wall time split (profsum_step_wall), the
**                                    per-track total named for what it is
**   ## profsum: advice               profsum_advice with evidence and fixes
**   ## profsum: the reference tool's candidates
**                                    the reference's rules, with a note where
**                                    the numbers disagree with them
**   ...                              the collectors' sections (insights.h)
**
** and profsum_report_md(trace, top_k, options_json) with the options
** "kpis" (the KPI table), "profsum" (these sections) and "schema".  The
** quality section comes first so that no line of the report is
** contradicted by a warning printed below it.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "doc_int.h"
#include "insights.h"
#include "report_profsum.h"
#include "report_util.h"
#include "sqlcall.h"
#include "nearfmt.h"
#include "jsontree.h"

#include <stdlib.h>
#include <string.h>

/* Run the query zFmt (its %w: zSchema, up to five; ?1: trace id) on db
** and call xRow(p, pArg) on each of its rows (xRow 0: only count them),
** stopping at the first row xRow fails.  *pnRow, when pnRow is not 0: the
** rows stepped to.  SQLITE_OK, or an error code with *pzErr set (not for
** SQLITE_NOMEM). */
static int rpEach(sqlite3 *db, const char *zSchema, sqlite3_int64 id, const char *zFmt,
                  int (*xRow)(sqlite3_stmt*, void*), void *pArg, int *pnRow, char **pzErr){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf(zFmt, zSchema, zSchema, zSchema, zSchema, zSchema);
  int rc, n = 0;
  if( pnRow ) *pnRow = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc ){
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_bind_int64(p, 1, id);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    n++;
    if( xRow && (rc = xRow(p, pArg))!=SQLITE_OK ) break;
  }
  if( pnRow ) *pnRow = n;
  return profsumFinishRows(db, p, rc==SQLITE_DONE ? SQLITE_OK : rc, pzErr);
}

/* A row callback of rpEach: the row's columns as doubles into the array
** pArg (as long as the row). */
static int rpDoubles(sqlite3_stmt *p, void *pArg){
  double *a = (double*)pArg;
  int i;
  for(i=0; i<sqlite3_column_count(p); i++) a[i] = sqlite3_column_double(p, i);
  return SQLITE_OK;
}

/* Append a table cell's text: '|' escaped, newlines as spaces. */
static void rpCell(sqlite3_str *s, const char *z){ profsumMdEsc(s, z, -1); }

/* A row callback of rpEach: column 0 as a bullet of the list in the
** sqlite3_str pArg. */
static int rpBullet(sqlite3_stmt *p, void *pArg){
  sqlite3_str *s = (sqlite3_str*)pArg;
  sqlite3_str_appendall(s, "- ");
  rpCell(s, (const char*)sqlite3_column_text(p, 0));
  sqlite3_str_appendall(s, "\n");
  return SQLITE_OK;
}

/* ## profsum: data quality — the document's quality warnings, the stored
** capped_export and folder_pick diagnostics and a detected float_nesting
** pattern. */
static int rpQuality(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s, char **pzErr){
  int rc, n = 0;
  sqlite3_str_appendall(s, "\n## profsum: data quality\n");
  rc = rpEach(db, zSchema, id,
      "SELECT value FROM json_each((SELECT quality_warnings FROM \"%w\".profsum_trace WHERE trace_id=?1)) "
      "UNION ALL SELECT detail FROM \"%w\".profsum_agg_diagnostic WHERE trace_id=?1 "
      "AND kind IN ('capped_export', 'folder_pick') "
      "UNION ALL SELECT explanation FROM \"%w\".profsum_kpis WHERE trace_id=?1 AND kpi='float_nesting' "
      "AND band='detected'", rpBullet, s, &n, pzErr);
  if( rc==SQLITE_OK && n==0 ) sqlite3_str_appendall(s, "- No quality warnings: the numbers below cover the whole trace.\n");
  return rc;
}

/* What rpWallSplitRow writes with: the report and the median step wall
** time. */
typedef struct RpWallSplit { sqlite3_str *s; double med; } RpWallSplit;

/* A row callback of rpEach: the row of profsumSqlStepWallSplit as the
** split table (pArg: an RpWallSplit). */
static int rpWallSplitRow(sqlite3_stmt *p, void *pArg){
  static const char *azPart[4] = {"Compute", "Collective", "Transfer", "Idle"};
  sqlite3_str *s = ((RpWallSplit*)pArg)->s;
  double wall = sqlite3_column_double(p, 2);   /* ps, as the parts */
  int k;
  sqlite3_str_appendf(s, "- Steps split: `%lld` %s steps on `%lld` device(s), each instant counted once "
                      "(collective over transfer over compute; idle: no device op runs)\n",
                      (long long)sqlite3_column_int64(p, 0), sqlite3_column_int(p, 7) ? "warmup" : "steady",
                      (long long)sqlite3_column_int64(p, 1));
  profsumStrAppendPy(s, "- Median step wall time (per device): `%.3f` us\n\n", ((RpWallSplit*)pArg)->med);
  sqlite3_str_appendall(s, "| Part | Time over these steps (us) | Share of wall time |\n|---|---:|---:|\n");
  for(k=0; k<4; k++){
    double v = sqlite3_column_double(p, 3+k);
    sqlite3_str_appendf(s, "| %s | ", azPart[k]);
    profsumStrAppendPy(s, "%.3f | ", v/1e6);
    /* as the KPIs and the advice write shares: never as a threshold it is not */
    profsumStrAppendNear(s, wall>0 ? 100.0*v/wall : 0.0, 2, 5);
    sqlite3_str_appendall(s, "% |\n");
  }
  profsumStrAppendPy(s, "| Wall | %.3f | 100.00%% |\n\n", wall/1e6);
  return SQLITE_OK;
}

/* ## profsum: wall-clock time — the profile's span, the steady steps'
** split (all steps when every one is a warmup step), and the per-track
** total named for what it is. */
static int rpWall(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s, char **pzErr){
  double a[5] = {0, 0, 0, 0, 0};  /* span (-1: none), the summary mode's total, rows of profsum_step_wall,
                                ** 1 when that mode is the global one, 1 when an older profsum
                                ** imported the trace (no profsum_build: no step wall stored) */
  double span, total;
  int rc;
  sqlite3_str_appendall(s, "\n## profsum: wall-clock time\n");
  rc = rpEach(db, zSchema, id,
      "SELECT (SELECT coalesce(profile_end_ts - profile_start_ts, -1) FROM \"%w\".profsum_trace "
      "WHERE trace_id=?1), "
      "(SELECT mode_total FROM \"%w\".profsum_breakdown WHERE trace_id=?1 AND is_summary_mode LIMIT 1), "
      "(SELECT count(*) FROM \"%w\".profsum_step_wall WHERE trace_id=?1), "
      "(SELECT mode = 'exclusive_global' FROM \"%w\".profsum_breakdown WHERE trace_id=?1 AND is_summary_mode "
      "LIMIT 1), (SELECT profsum_build IS NULL AND summary_json IS NULL FROM \"%w\".profsum_trace "
      "WHERE trace_id=?1)", rpDoubles, a, 0, pzErr);
  if( rc ) return rc;
  span = a[0];
  total = a[1];
  if( span<0 ){
    /* no start or end: no event has a time */
    sqlite3_str_appendall(s, "- Profile span: none (no event of the trace has a time)\n");
  }else{
    profsumStrAppendPy(s, "- Profile span (first event to last end): `%.3f` us\n", span);
  }
  if( a[2]==0 && a[4]!=0.0 ){
    sqlite3_str_appendall(s, "- No step wall time stored for this trace (imported by an older profsum): "
                             "re-import it to split the step wall time.\n");
  }else if( a[2]==0 ){
    sqlite3_str_appendall(s, "- No steps measured on a device (no Steps line and no host `train` events "
                             "with a step_num, or no device ops): the step wall time is not split.\n");
  }else{
    RpWallSplit w = {s, 0.0};
    rc = rpEach(db, zSchema, id, profsumSqlStepWallMedian, rpDoubles, &w.med, 0, pzErr);
    if( rc==SQLITE_OK ) rc = rpEach(db, zSchema, id, profsumSqlStepWallSplit, rpWallSplitRow, &w, 0, pzErr);
    if( rc ) return rc;
  }
  if( a[3]!=0.0 ){
    profsumStrAppendPy(s, "- The reference's Time Breakdown total, `%.3f` us, is the window of one device "
                       "timeline, from its first to its last compute op (global mode: communication over "
                       "compute, the rest stall; host time is not in it)", total);
  }else{
    profsumStrAppendPy(s, "- The reference's Time Breakdown total, `%.3f` us, adds the exclusive time of every "
                       "track (each device's op lines and every host thread): it is not wall time", total);
    if( span>0 && total>span*1.05 ) profsumStrAppendPy(s, " (%.1f times the profile span)", total/span);
  }
  sqlite3_str_appendall(s, ".\n");
  return SQLITE_OK;
}

/* A row callback of rpEach: a row of profsum_advice (rank, advice_id,
** source, kpi, title, share_of_step, time_at_stake_us, evidence text,
** fixes) as its "###" entry of the sqlite3_str pArg. */
static int rpAdviceRow(sqlite3_stmt *p, void *pArg){
  sqlite3_str *s = (sqlite3_str*)pArg;
  const char *zFix = (const char*)sqlite3_column_text(p, 8);
  JNode *fx = zFix ? jParse(zFix, -1, 0) : 0;
  int k;
  sqlite3_str_appendf(s, "### %lld. ", (long long)sqlite3_column_int64(p, 0));
  rpCell(s, (const char*)sqlite3_column_text(p, 4));
  sqlite3_str_appendf(s, "\n- Advice: `%s` (from %s%s%s%s)", (const char*)sqlite3_column_text(p, 1),
                      (const char*)sqlite3_column_text(p, 2),
                      sqlite3_column_type(p, 3)!=SQLITE_NULL ? " `" : "",
                      sqlite3_column_type(p, 3)!=SQLITE_NULL ? (const char*)sqlite3_column_text(p, 3) : "",
                      sqlite3_column_type(p, 3)!=SQLITE_NULL ? "`" : "");
  profsumAdviceStake(s, p, 5, "; ", "us");
  sqlite3_str_appendall(s, "\n- Evidence: ");
  rpCell(s, (const char*)sqlite3_column_text(p, 7));
  sqlite3_str_appendall(s, "\n- Try:\n");
  for(k=0; fx && fx->type==JT_ARRAY && k<fx->nChild; k++){
    if( jAt(fx, k)->type!=JT_STRING ) continue;
    sqlite3_str_appendall(s, "  - ");
    rpCell(s, jAt(fx, k)->z);
    sqlite3_str_appendall(s, "\n");
  }
  jFree(fx);
  return SQLITE_OK;
}

/* ## profsum: advice — the rows of profsum_advice, evidence and fixes. */
static int rpAdvice(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s, char **pzErr){
  double nUnavail = 0;
  int rc, n = 0;
  sqlite3_str_appendall(s, "\n## profsum: advice\n");
  rc = rpEach(db, zSchema, id,
      "SELECT rank, advice_id, source, kpi, title, share_of_step, time_at_stake_us, "
      PROFSUM_SQL_ADVICE_EVIDENCE ", "
      "fixes FROM \"%w\".profsum_advice AS a WHERE trace_id=?1 ORDER BY rank", rpAdviceRow, s, &n, pzErr);
  if( rc || n>0 ) return rc;
  rc = rpEach(db, zSchema, id, "SELECT count(*) FROM \"%w\".profsum_kpis WHERE trace_id=?1 "
              "AND band='unavailable'", rpDoubles, &nUnavail, 0, pzErr);
  if( rc ) return rc;
  sqlite3_str_appendall(s, "No KPI is in its bad band and no pattern is detected");
  if( nUnavail>0 ){
    sqlite3_str_appendf(s, " among those this trace has the data for (%lld KPIs are unavailable)",
                        (long long)nUnavail);
  }
  sqlite3_str_appendall(s, " (`profsum_kpis`).\n");
  return SQLITE_OK;
}

/* A row callback of rpEach: a row of profsum_candidates (candidate_id,
** title, rationale, the breakdown's category above half with its share,
** the one_op_dominating KPI's value when the pattern is not detected, the
** communication share) as a bullet of the
** sqlite3_str pArg, with a note where the reference's rule text disagrees
** with the numbers. */
static int rpCandidateRow(sqlite3_stmt *p, void *pArg){
  sqlite3_str *s = (sqlite3_str*)pArg;
  const char *zId = (const char*)sqlite3_column_text(p, 0);
  const char *zRat = (const char*)sqlite3_column_text(p, 2);
  const char *zBig = (const char*)sqlite3_column_text(p, 3);
  sqlite3_str_appendf(s, "- `%s`: ", zId ? zId : "");
  rpCell(s, (const char*)sqlite3_column_text(p, 1));
  if( zBig && zRat && (strstr(zRat, "balanced") || (zId && strcmp(zId, "no-dominant-bottleneck")==0)) ){
    sqlite3_str_appendall(s, " (its rule fires when no other rule does; the breakdown is not balanced: ");
    rpCell(s, zBig);
    sqlite3_str_appendall(s, ")");
  }
  if( profsumMaxPct(zRat)>100.0 ){
    sqlite3_str_appendall(s, " (its percentage is above 100%: the reference divides by the per-track "
                             "exclusive total, which the measured time can exceed, so it is no share of the time)");
  }
  if( zId && strcmp(zId, "communication-heavy")==0 && sqlite3_column_type(p, 5)!=SQLITE_NULL
   && sqlite3_column_double(p, 5)<0.5 ){
    sqlite3_str_appendall(s, " (communication is ");
    profsumStrAppendNear(s, 100.0*sqlite3_column_double(p, 5), 1, 5.0);
    sqlite3_str_appendall(s, "% of the breakdown total; profsum calls a category dominant from 50%)");
  }
  if( zId && strcmp(zId, "single-hot-op")==0 && sqlite3_column_type(p, 4)!=SQLITE_NULL ){
    /* column 4: the share when the one_op_dominating pattern is not detected */
    sqlite3_str_appendall(s, " (the top op takes ");
    profsumStrAppendNear(s, 100.0*sqlite3_column_double(p, 4), 1, 5.0);
    sqlite3_str_appendall(s, "% of device-op time; profsum calls an op dominant only over 50%)");
  }
  sqlite3_str_appendall(s, "\n");
  return SQLITE_OK;
}

/* ## profsum: the reference tool's candidates — their titles, and a note
** where the reference's rule text disagrees with the breakdown (its
** fallback calls the shares balanced whatever they are). */
static int rpCandidates(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s, char **pzErr){
  sqlite3_str_appendall(s, "\n## profsum: the reference tool's candidates\n"
      "The \"Optimization Candidates\" above are the reference tool's fixed rules, kept as it "
      "writes them; profsum's advice above is measured on this trace.\n");
  return rpEach(db, zSchema, id,
      "SELECT c.candidate_id, c.title, c.rationale, "
      "(SELECT category || ' ' || printf('%%.1f%%%%', 100.0 * share_of_total) FROM \"%w\".profsum_breakdown AS b "
      " WHERE b.trace_id=?1 AND b.is_summary_mode AND b.share_of_total > 0.5), "
      "(SELECT value FROM \"%w\".profsum_kpis WHERE trace_id=?1 AND kpi='one_op_dominating' "
      " AND band='not_detected'), "
      "(SELECT share_of_total FROM \"%w\".profsum_breakdown AS b WHERE b.trace_id=?1 AND b.is_summary_mode "
      " AND b.category='communication') "
      "FROM \"%w\".profsum_candidates AS c WHERE c.trace_id=?1 ORDER BY c.rank", rpCandidateRow, s, 0, pzErr);
}

/* A section that failed for want of a table or view (a database made by
** an older profsum and not imported into since): a line saying so instead
** of an error.  Returns rc, or SQLITE_OK when so. */
static int rpTolerate(int rc, sqlite3_str *s, char **pzErr){
  if( rc==SQLITE_ERROR && *pzErr && strncmp(*pzErr, "no such table", 13)==0 ){
    sqlite3_str_appendall(s, "- (This section reads a view this database does not have: it was made by an "
                             "older profsum; import a trace into it to upgrade it.)\n");
    sqlite3_free(*pzErr);
    *pzErr = 0;
    return SQLITE_OK;
  }
  return rc;
}

/* See report_profsum.h. */
int profsumReportProfsumMd(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s,
                           char **pzErr){
  int rc = rpTolerate(rpQuality(db, zSchema, id, s, pzErr), s, pzErr);
  if( rc==SQLITE_OK ) rc = rpTolerate(rpWall(db, zSchema, id, s, pzErr), s, pzErr);
  if( rc==SQLITE_OK ) rc = rpTolerate(rpAdvice(db, zSchema, id, s, pzErr), s, pzErr);
  if( rc==SQLITE_OK ) rc = rpTolerate(rpCandidates(db, zSchema, id, s, pzErr), s, pzErr);
  if( rc==SQLITE_OK ) rc = profsumInsReportMd(db, zSchema, id, s);
  if( rc==SQLITE_OK && sqlite3_str_errcode(s) ) rc = SQLITE_NOMEM;
  return rc;
}

/* profsum_report_md(trace, top_k, options_json): the reference's report;
** options "kpis" appends the KPI table, "profsum" profsum's sections
** (after the KPI table when both), "schema" names the database to read. */
static void reportMd3Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *const azBool[] = {"kpis", "profsum", 0};
  static const char *FN = "profsum_report_md";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  int aFlag[2] = {0, 0}, rc;
  char *zSchema = 0, *zErr = 0, *zMd;
  sqlite3_int64 topK = 10, id;
  ProfsumKnobs k;
  ProfsumDoc *d = 0;
  sqlite3_str *s;
  (void)argc;
  if( sqlite3_value_type(argv[2])!=SQLITE_NULL ){
    rc = profsumSchemaOption(db, (const char*)sqlite3_value_text(argv[2]), azBool, aFlag, &zSchema, &zErr);
    if( rc ){
      if( zErr ) profsumCtxErr(ctx, "%s: %s", FN, zErr);
      else sqlite3_result_error_nomem(ctx);
      sqlite3_free(zErr);
      return;
    }
  }
  if( profsumTopKArg(ctx, FN, argv[1], &topK) ){
    sqlite3_free(zSchema);
    return;
  }
  {
    const char *zS = zSchema ? zSchema : "main";
    rc = profsumResolveTrace(db, zS, argv[0], &id, &zErr);
    if( rc==SQLITE_OK ) rc = profsumTraceKnobs(db, zS, id, &k, &zErr);
    if( rc==SQLITE_OK ) rc = profsumDocBuild(db, zS, id, &k, &d, &zErr);
  }
  zMd = rc==SQLITE_OK ? profsumDocReportMd(d, (int)topK) : 0;
  profsumDocFree(d);
  if( rc==SQLITE_OK && zMd==0 ) rc = SQLITE_NOMEM;
  s = sqlite3_str_new(db);
  if( rc==SQLITE_OK ){
    sqlite3_str_appendall(s, zMd);
    if( aFlag[0] ) rc = profsumKpiTableMd(db, zSchema ? zSchema : "main", id, s, &zErr);
    if( rc==SQLITE_OK && aFlag[1] ) rc = profsumReportProfsumMd(db, zSchema ? zSchema : "main", id, s, &zErr);
    if( rc==SQLITE_OK && sqlite3_str_errcode(s) ) rc = SQLITE_NOMEM;
  }
  sqlite3_free(zMd);
  sqlite3_free(zSchema);
  if( rc ){
    sqlite3_free(sqlite3_str_finish(s));
    if( rc==SQLITE_NOMEM && zErr==0 ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "%s: %s", FN, zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    return;
  }
  zMd = sqlite3_str_finish(s);
  if( zMd==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, zMd, -1, sqlite3_free);
}

/* See report_profsum.h. */
int profsumRegisterReportProfsum(sqlite3 *db, char **pzErr){
  int rc = profsumCreateReader(db, "profsum_report_md", 3, SQLITE_UTF8, reportMd3Func);
  if( rc && pzErr ){
    *pzErr = sqlite3_mprintf("profsum: registering profsum_report_md (3 arguments) failed: %s",
                             sqlite3_errstr(rc));
  }
  return rc;
}
