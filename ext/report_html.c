/*
** report_html.c — profsum_report_html(trace [, top_k]): one self-contained
** HTML page (no scripts, no external files) with inline SVG charts:
** the time breakdown, the step time of every step (warmup marked), the top
** ops by exclusive time, the region tree, and the KPI bands.
**
**   sqlite3 runs.db -cmd '.load ./profsum' "SELECT profsum_report_html('baseline')" > report.html
**
** Built from the profile_summary.v1 document (summary_doc.c) and, for the
** per-step chart and the KPIs, the profsum_steps and profsum_kpis views.
** Reads tables only.
**
** Every float (values shown and SVG coordinates alike) goes through
** profsumStrAppendPy (Python-exact rounding, profsum_int.h), so the values
** read the same as in the markdown report; never sqlite3_str_appendf.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "jsontree.h"

#include <string.h>

/* Append text with HTML escaping. */
static void esc(sqlite3_str *s, const char *z){
  for(; z && *z; z++){
    switch( *z ){
      case '<': sqlite3_str_appendall(s, "&lt;"); break;
      case '>': sqlite3_str_appendall(s, "&gt;"); break;
      case '&': sqlite3_str_appendall(s, "&amp;"); break;
      case '"': sqlite3_str_appendall(s, "&quot;"); break;
      default: sqlite3_str_appendchar(s, 1, *z);
    }
  }
}

static const char *jtext(const JNode *o, const char *zKey){
  const JNode *v = jGet(o, zKey);
  return (v && v->type==JT_STRING) ? v->z : "";
}

/* A horizontal bar chart: labels, values (µs), one bar per row. */
static void barChart(sqlite3_str *s, const char *zTitle, const char **azLabel,
                     const double *aVal, int n, const char *zColor){
  double mx = 0;
  int i, h = 24*n + 30;
  for(i=0; i<n; i++) if( aVal[i]>mx ) mx = aVal[i];
  sqlite3_str_appendf(s, "<h2>%s</h2>\n<svg class=\"chart\" width=\"900\" height=\"%d\" "
      "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"%s\">\n", zTitle, h, zTitle);
  for(i=0; i<n; i++){
    double w = mx>0 ? 480.0*aVal[i]/mx : 0;
    int y = 10 + 24*i;
    sqlite3_str_appendf(s, "<text x=\"0\" y=\"%d\" font-size=\"12\" font-family=\"monospace\">", y+14);
    {
      char zL[48];
      sqlite3_snprintf(sizeof(zL), zL, "%.40s", azLabel[i]);
      esc(s, zL);
    }
    profsumStrAppendPy(s, "</text><rect x=\"300\" y=\"%d\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>"
        "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">%.3f µs</text>\n",
        y, w, zColor, 305+w, y+14, aVal[i]);
  }
  sqlite3_str_appendall(s, "</svg>\n");
}

/* Build the page.  Returns a sqlite3_malloc'd string or 0 on OOM. */
static char *buildHtml(sqlite3 *db, sqlite3_int64 id, const JNode *d, int topK){
  sqlite3_str *s = sqlite3_str_new(db);
  const JNode *tb = jGet(d, "time_breakdown"), *ov = jGet(d, "trace_overview");
  const JNode *hot = jGet(d, "hot_ops"), *rg = jGet(d, "hierarchical_regions");
  const JNode *st = jGet(jGet(d, "step_time"), "steady_state_steps");
  static const char *azCat[5] = {"compute","communication","host","stall","other"};
  static const char *azColor[5] = {"#4e79a7","#f28e2b","#59a14f","#e15759","#9c9c9c"};
  const char *azL[64];
  double aV[64];
  int i, n;
  sqlite3_stmt *p = 0;

  sqlite3_str_appendall(s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<title>profsum report</title>\n<style>body{font-family:sans-serif;margin:24px;max-width:960px}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
      ".good{background:#d7f0d0}.warning{background:#fbe8b0}.bad{background:#f6c6c6}"
      ".unavailable,.not_detected{background:#eee}.detected{background:#f6c6c6}</style></head><body>\n");
  sqlite3_str_appendall(s, "<h1>Profile report</h1>\n<p>");
  esc(s, jtext(d, "source_path"));
  sqlite3_str_appendall(s, "<br>schema ");
  esc(s, jtext(d, "schema_version"));
  sqlite3_str_appendall(s, " · generated ");
  esc(s, jtext(d, "generated_at_utc"));
  sqlite3_str_appendf(s, " · %lld complete events of %lld</p>\n",
      (long long)jNumI64(jGet(ov, "num_complete_events")), (long long)jNumI64(jGet(ov, "num_events_total")));

  /* Time breakdown: one stacked bar. */
  {
    double tot = jNum(jGet(tb, "total_duration")), x = 0;
    sqlite3_str_appendall(s, "<h2>Time breakdown (");
    esc(s, jtext(tb, "duration_basis"));
    sqlite3_str_appendall(s, ")</h2>\n<svg class=\"chart\" width=\"900\" height=\"70\" "
        "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"time breakdown\">\n");
    for(i=0; i<5; i++){
      double v = jNum(jGet(jGet(tb, azCat[i]), "total_duration"));
      double w = tot>0 ? 880.0*v/tot : 0;
      profsumStrAppendPy(s, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"30\" fill=\"%s\"><title>%s %.3f µs</title></rect>\n",
                          x, w, azColor[i], azCat[i], v);
      profsumStrAppendPy(s, "<rect x=\"%d\" y=\"42\" width=\"12\" height=\"12\" fill=\"%s\"/>"
          "<text x=\"%d\" y=\"53\" font-size=\"12\">%s %.1f%%</text>\n", 10+i*170, azColor[i], 26+i*170,
          azCat[i], tot>0 ? 100.0*v/tot : 0.0);
      x += w;
    }
    sqlite3_str_appendall(s, "</svg>\n");
  }

  /* Step time per step, warmup marked. */
  if( sqlite3_prepare_v2(db, "SELECT step, duration, is_warmup FROM main.profsum_steps WHERE trace_id=?1 "
                         "ORDER BY step", -1, &p, 0)==SQLITE_OK ){
    double mx = 0;
    int k = 0, nSteps = 0;
    sqlite3_bind_int64(p, 1, id);
    while( sqlite3_step(p)==SQLITE_ROW ){ double v = sqlite3_column_double(p, 1); if( v>mx ) mx = v; nSteps++; }
    sqlite3_reset(p);
    profsumStrAppendPy(s, "<h2>Step time</h2>\n<p>steady state: %lld steps, median %.3f µs, p90 %.3f µs "
        "(warmup steps in grey)</p>\n", (long long)jNumI64(jGet(st, "count")), jNum(jGet(st, "median")),
        jNum(jGet(st, "p90")));
    sqlite3_str_appendall(s, "<svg class=\"chart\" width=\"900\" height=\"220\" "
        "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"step time\">\n");
    while( sqlite3_step(p)==SQLITE_ROW ){
      double v = sqlite3_column_double(p, 1);
      double bw = nSteps ? 880.0/nSteps : 0, bh = mx>0 ? 190.0*v/mx : 0;
      profsumStrAppendPy(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
          "<title>step %lld: %.3f µs</title></rect>\n", 10+k*bw, 200-bh, bw>2 ? bw-1 : bw, bh,
          sqlite3_column_int(p, 2) ? "#bbbbbb" : "#4e79a7", (long long)sqlite3_column_int64(p, 0), v);
      k++;
    }
    sqlite3_str_appendall(s, "<line x1=\"10\" y1=\"200\" x2=\"890\" y2=\"200\" stroke=\"#333\"/></svg>\n");
  }
  sqlite3_finalize(p); p = 0;

  /* Top ops by exclusive time. */
  n = 0;
  for(i=0; hot && i<hot->nChild && n<topK && n<64; i++){
    azL[n] = jtext(jAt(hot, i), "name");
    aV[n] = jNum(jGet(jAt(hot, i), "exclusive_duration"));
    n++;
  }
  barChart(s, "Top ops by exclusive time", azL, aV, n, "#4e79a7");

  /* Region tree: indented by depth, bars by inclusive time. */
  n = 0;
  for(i=0; rg && i<rg->nChild && n<topK && n<64; i++){
    azL[n] = jtext(jAt(rg, i), "path");
    aV[n] = jNum(jGet(jAt(rg, i), "inclusive_duration"));
    n++;
  }
  barChart(s, "Hierarchical regions (inclusive time)", azL, aV, n, "#76b7b2");

  /* KPI bands. */
  if( sqlite3_prepare_v2(db, "SELECT kind, kpi, device, value, unit, band, explanation FROM main.profsum_kpis "
                         "WHERE trace_id=?1", -1, &p, 0)==SQLITE_OK ){
    sqlite3_bind_int64(p, 1, id);
    sqlite3_str_appendall(s, "<h2>KPIs</h2>\n<table><tr><th>KPI</th><th>device</th><th>value</th>"
                             "<th>unit</th><th>band</th><th>what it means</th></tr>\n");
    while( sqlite3_step(p)==SQLITE_ROW ){
      const char *zBand = (const char*)sqlite3_column_text(p, 5);
      sqlite3_str_appendall(s, "<tr><td>");
      esc(s, (const char*)sqlite3_column_text(p, 1));
      sqlite3_str_appendall(s, "</td><td>");
      esc(s, sqlite3_column_type(p, 2)==SQLITE_NULL ? "all" : (const char*)sqlite3_column_text(p, 2));
      if( sqlite3_column_type(p, 3)==SQLITE_NULL ) sqlite3_str_appendall(s, "</td><td>n/a");
      else profsumStrAppendPy(s, "</td><td>%.4g", sqlite3_column_double(p, 3));
      sqlite3_str_appendall(s, "</td><td>");
      esc(s, (const char*)sqlite3_column_text(p, 4));
      sqlite3_str_appendall(s, "</td><td class=\"");
      esc(s, zBand);
      sqlite3_str_appendall(s, "\">");
      esc(s, zBand);
      sqlite3_str_appendall(s, "</td><td>");
      esc(s, (const char*)sqlite3_column_text(p, 6));
      sqlite3_str_appendall(s, "</td></tr>\n");
    }
    sqlite3_str_appendall(s, "</table>\n");
  }
  sqlite3_finalize(p);

  /* Candidates. */
  {
    const JNode *ca = jGet(d, "optimization_candidates");
    sqlite3_str_appendall(s, "<h2>What to try next</h2>\n<ul>\n");
    for(i=0; ca && i<ca->nChild; i++){
      sqlite3_str_appendall(s, "<li><b>");
      esc(s, jtext(jAt(ca, i), "title"));
      sqlite3_str_appendall(s, "</b>: ");
      esc(s, jtext(jAt(ca, i), "rationale"));
      sqlite3_str_appendall(s, "</li>\n");
    }
    sqlite3_str_appendall(s, "</ul>\n</body></html>\n");
  }
  if( sqlite3_str_errcode(s) ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  return sqlite3_str_finish(s);
}

/* profsum_report_html(trace [, top_k]) → HTML text. */
static void reportHtmlFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 id;
  ProfsumKnobs k;
  ProfsumDoc *pDoc = 0;
  char *zErr = 0, *z;
  int topK = 15;
  int rc;
  if( argc>1 && sqlite3_value_type(argv[1])!=SQLITE_NULL ){
    if( sqlite3_value_numeric_type(argv[1])!=SQLITE_INTEGER || sqlite3_value_int64(argv[1])<1
     || sqlite3_value_int64(argv[1])>64 ){
      profsumCtxErr(ctx, "profsum_report_html: top_k must be an integer from 1 to 64");
      return;
    }
    topK = sqlite3_value_int(argv[1]);
  }
  rc = profsumResolveTrace(db, "main", argv[0], &id, &zErr);
  if( rc==SQLITE_OK ) rc = profsumTraceKnobs(db, "main", id, &k, &zErr);
  if( rc==SQLITE_OK ) rc = profsumDocBuild(db, "main", id, &k, &pDoc, &zErr);
  if( rc ){
    if( rc==SQLITE_NOMEM && zErr==0 ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "profsum_report_html: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    return;
  }
  z = buildHtml(db, id, profsumDocRoot(pDoc), topK);
  profsumDocFree(pDoc);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* See profsum_int.h. */
int profsumRegisterReportHtml(sqlite3 *db, char **pzErr){
  int rc;
  (void)pzErr;
  rc = sqlite3_create_function(db, "profsum_report_html", 1, SQLITE_UTF8, 0, reportHtmlFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_report_html", 2, SQLITE_UTF8, 0, reportHtmlFunc, 0, 0);
  return rc;
}
