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
** Reads tables only.  The page is valid UTF-8 (labels are cut at character
** boundaries), its charts scale down with the window (viewBox), and an
** empty section says why it is empty.
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

/* Append a number of the document with 3 decimals, or "n/a" when it is
** null or absent (a median of no steps). */
static void num3(sqlite3_str *s, const JNode *v){
  if( v==0 || (v->type!=JT_INT && v->type!=JT_REAL) ) sqlite3_str_appendall(s, "n/a");
  else profsumStrAppendPy(s, "%.3f", jNum(v));
}

/* Append at most nMax characters (not bytes: never a split UTF-8
** sequence) of z, escaped: its start, or with bKeepEnd its end (region
** paths differ at their leaves); an ellipsis marks the cut. */
static void escCut(sqlite3_str *s, const char *z, int nMax, int bKeepEnd){
  int nChar = 0, i;
  const char *p;
  char *zCut;
  for(p=z; *p; p++) if( (*p & 0xC0)!=0x80 ) nChar++;
  if( nChar<=nMax ){ esc(s, z); return; }
  if( bKeepEnd ){
    /* skip the first nChar-(nMax-1) characters */
    int nSkip = nChar-(nMax-1);
    for(p=z, i=0; *p; p++){
      if( (*p & 0xC0)!=0x80 && i++==nSkip ) break;
    }
    sqlite3_str_appendall(s, "…");
    esc(s, p);
    return;
  }
  for(p=z, i=0; *p; p++){
    if( (*p & 0xC0)!=0x80 && i++==nMax-1 ) break;
  }
  zCut = sqlite3_mprintf("%.*s", (int)(p-z), z);
  esc(s, zCut ? zCut : "");
  sqlite3_free(zCut);
  sqlite3_str_appendall(s, "…");
}

/* The opening tag of a chart: width 900 user units that scale down with
** the page (viewBox), never wider than 900 px. */
static void svgOpen(sqlite3_str *s, int h, const char *zLabel){
  sqlite3_str_appendf(s, "<svg class=\"chart\" viewBox=\"0 0 900 %d\" width=\"100%%\" "
      "xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"%s\">\n", h, zLabel);
}

/* A horizontal bar chart: labels, values (µs), one bar per row; each row
** carries its full label and value as a tooltip.  zEmpty is said instead
** when there is no row. */
static void barChart(sqlite3_str *s, const char *zTitle, const char **azLabel,
                     const double *aVal, int n, const char *zColor, int bKeepEnd,
                     const char *zEmpty){
  double mx = 0;
  int i, h = 24*n + 20;
  sqlite3_str_appendf(s, "<h2>%s</h2>\n", zTitle);
  if( n==0 ){
    sqlite3_str_appendf(s, "<p class=\"none\">%s</p>\n", zEmpty);
    return;
  }
  for(i=0; i<n; i++) if( aVal[i]>mx ) mx = aVal[i];
  svgOpen(s, h, zTitle);
  for(i=0; i<n; i++){
    double w = mx>0 ? 480.0*aVal[i]/mx : 0;
    int y = 10 + 24*i;
    sqlite3_str_appendall(s, "<g><title>");
    esc(s, azLabel[i]);
    profsumStrAppendPy(s, ": %.3f µs</title>", aVal[i]);
    sqlite3_str_appendf(s, "<text x=\"0\" y=\"%d\" font-size=\"12\" font-family=\"monospace\">", y+14);
    escCut(s, azLabel[i], 40, bKeepEnd);
    profsumStrAppendPy(s, "</text><rect x=\"300\" y=\"%d\" width=\"%.1f\" height=\"18\" fill=\"%s\"/>"
        "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">%.3f µs</text></g>\n",
        y, w, zColor, 305+w, y+14, aVal[i]);
  }
  sqlite3_str_appendall(s, "</svg>\n");
}

/* The first error met while the page was built: its code and message
** (the page is then not returned: a page without a section's rows would
** look complete). */
typedef struct PageErr { int rc; char *zMsg; } PageErr;

static void pageErr(PageErr *e, sqlite3 *db, int rc){
  if( e->rc ) return;
  e->rc = rc;
  if( rc!=SQLITE_NOMEM ) e->zMsg = sqlite3_mprintf("%s", sqlite3_errmsg(db));
}

/* Prepare zFmt with the schema zSchema put in (its one %w); 0 on error.
** Running out of memory is noted in *e; another error is not (a database
** from an older profsum may lack a view: its section is left out). */
static sqlite3_stmt *prepIn(sqlite3 *db, const char *zFmt, const char *zSchema, PageErr *e){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf(zFmt, zSchema);
  int rc = z ? sqlite3_prepare_v2(db, z, -1, &p, 0) : SQLITE_NOMEM;
  if( rc!=SQLITE_OK ){
    if( rc==SQLITE_NOMEM ) pageErr(e, db, rc);
    sqlite3_finalize(p);
    p = 0;
  }
  sqlite3_free(z);
  return p;
}

/* sqlite3_step(p), noting an error in *e (SQLITE_ROW, or anything else
** when the rows are over). */
static int stepIn(sqlite3 *db, sqlite3_stmt *p, PageErr *e){
  int rc = sqlite3_step(p);
  if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) pageErr(e, db, rc);
  return rc;
}

/* The per-step chart (profsum_steps), warmup steps grey.  The scale is set
** by the steady-state steps when there are any (a long first step would
** flatten the others): taller bars are cut at the top and marked. */
static void stepChart(sqlite3_str *s, sqlite3 *db, const char *zSchema, sqlite3_int64 id,
                      const JNode *d, int bFromV1, PageErr *e){
  const JNode *st = jGet(jGet(d, "step_time"), "steady_state_steps");
  sqlite3_stmt *p = 0;
  double mxAll = 0, mxSteady = 0, mx, med;
  sqlite3_int64 first = 0, last = 0;
  int k = 0, nSteps = 0, nSteady = 0;
  sqlite3_str_appendall(s, "<h2>Step time</h2>\n<p>steady state: ");
  profsumStrAppendPy(s, "%lld steps, median ", (long long)jNumI64(jGet(st, "count")));
  num3(s, jGet(st, "median"));
  sqlite3_str_appendall(s, " µs, p90 ");
  num3(s, jGet(st, "p90"));
  sqlite3_str_appendall(s, " µs</p>\n");
  p = prepIn(db, "SELECT step, duration, is_warmup FROM \"%w\".profsum_steps WHERE trace_id=?1 "
                 "ORDER BY step", zSchema, e);
  if( p==0 ) return;
  sqlite3_bind_int64(p, 1, id);
  while( stepIn(db, p, e)==SQLITE_ROW ){
    double v = sqlite3_column_double(p, 1);
    if( nSteps==0 ) first = sqlite3_column_int64(p, 0);
    last = sqlite3_column_int64(p, 0);
    if( v>mxAll ) mxAll = v;
    if( !sqlite3_column_int(p, 2) ){ nSteady++; if( v>mxSteady ) mxSteady = v; }
    nSteps++;
  }
  sqlite3_reset(p);
  if( nSteps==0 ){
    sqlite3_str_appendall(s, bFromV1
        ? "<p class=\"none\">No per-step durations: the trace was imported from a summary "
          "document, which keeps only the statistics above.</p>\n"
        : "<p class=\"none\">No steps detected (no step events in the trace: docs/summary.md, "
          "step time).</p>\n");
    sqlite3_finalize(p);
    return;
  }
  mx = nSteady ? mxSteady : mxAll;
  med = jNum(jGet(st, "median"));
  sqlite3_str_appendall(s, "<p class=\"legend\"><span style=\"color:#4e79a7\">■</span> steady-state step "
      "<span style=\"color:#bbbbbb\">■</span> warmup step (not in the statistics)");
  if( mxAll>mx ) sqlite3_str_appendall(s, "; a dark top marks a bar cut at the top of the scale");
  if( nSteady==0 ){
    sqlite3_str_appendf(s, "; all %d step%s warmup, so the statistics above count none",
                        nSteps, nSteps==1 ? " is" : "s are");
  }
  sqlite3_str_appendall(s, "</p>\n");
  svgOpen(s, 240, "step time");
  profsumStrAppendPy(s, "<text x=\"10\" y=\"12\" font-size=\"11\">%.3f µs</text>\n", mx);
  while( stepIn(db, p, e)==SQLITE_ROW ){
    double v = sqlite3_column_double(p, 1);
    double bw = 830.0/nSteps, bh = mx>0 ? 190.0*v/mx : 0;
    int bCut = bh>190.0;
    if( bCut ) bh = 190.0;
    profsumStrAppendPy(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
        "<title>step %lld: %.3f µs</title></rect>\n", 10+k*bw, 210-bh, bw>2 ? bw-1 : bw, bh,
        sqlite3_column_int(p, 2) ? "#bbbbbb" : "#4e79a7", (long long)sqlite3_column_int64(p, 0), v);
    if( bCut ){
      profsumStrAppendPy(s, "<rect x=\"%.1f\" y=\"20\" width=\"%.1f\" height=\"3\" fill=\"#333\"/>\n",
                         10+k*bw, bw>2 ? bw-1 : bw);
    }
    k++;
  }
  sqlite3_finalize(p);
  if( nSteady && mx>0 && med>0 ){
    double y = 210-190.0*med/mx;
    profsumStrAppendPy(s, "<line x1=\"10\" y1=\"%.1f\" x2=\"840\" y2=\"%.1f\" stroke=\"#e15759\" "
        "stroke-dasharray=\"4 3\"/><text x=\"845\" y=\"%.1f\" font-size=\"11\" "
        "fill=\"#e15759\">median</text>\n", y, y, y+4);
  }
  profsumStrAppendPy(s, "<line x1=\"10\" y1=\"210\" x2=\"840\" y2=\"210\" stroke=\"#333\"/>"
      "<text x=\"10\" y=\"226\" font-size=\"11\">step %lld</text>"
      "<text x=\"840\" y=\"226\" font-size=\"11\" text-anchor=\"end\">step %lld</text></svg>\n",
      (long long)first, (long long)last);
}

/* Build the page.  Returns a sqlite3_malloc'd string, or 0 with *e set
** (SQLITE_NOMEM, or a query's error and message). */
static char *buildHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 id, const JNode *d, int topK,
                       PageErr *e){
  sqlite3_str *s = sqlite3_str_new(db);
  const JNode *tb = jGet(d, "time_breakdown"), *ov = jGet(d, "trace_overview");
  const JNode *hot = jGet(d, "hot_ops"), *rg = jGet(d, "hierarchical_regions");
  static const char *azCat[5] = {"compute","communication","host","stall","other"};
  static const char *azColor[5] = {"#4e79a7","#f28e2b","#59a14f","#e15759","#9c9c9c"};
  const char *azL[64];
  double aV[64];
  int i, n, bFromV1 = 0, nKpi = 0;
  char *zLabel = 0;
  sqlite3_stmt *p = 0;

  if( (p = prepIn(db, "SELECT label, summary_json IS NOT NULL FROM \"%w\".profsum_trace "
                      "WHERE trace_id=?1", zSchema, e))!=0 ){
    sqlite3_bind_int64(p, 1, id);
    if( stepIn(db, p, e)==SQLITE_ROW ){
      int rcT = SQLITE_OK;
      const char *zL = profsumColText(p, 0, &rcT);
      zLabel = sqlite3_mprintf("%s", zL ? zL : "");
      if( zLabel==0 || rcT ) pageErr(e, db, SQLITE_NOMEM);
      bFromV1 = sqlite3_column_int(p, 1);
    }
  }
  sqlite3_finalize(p); p = 0;
  sqlite3_str_appendall(s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>profsum report: ");
  esc(s, zLabel);
  sqlite3_str_appendall(s, "</title>\n<style>body{font-family:sans-serif;margin:24px;max-width:960px}"
      "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
      "td:last-child,li,p{overflow-wrap:anywhere}svg.chart{max-width:900px;height:auto;display:block}"
      ".none,.legend{color:#555;font-size:13px}"
      ".good{background:#d7f0d0}.warning{background:#fbe8b0}.bad{background:#f6c6c6}"
      ".unavailable,.not_detected{background:#eee}.detected{background:#f6c6c6}</style></head><body>\n");
  sqlite3_str_appendall(s, "<h1>Profile report: ");
  esc(s, zLabel);
  sqlite3_free(zLabel);
  sqlite3_str_appendall(s, "</h1>\n<p>");
  esc(s, jtext(d, "source_path"));
  sqlite3_str_appendall(s, "<br>schema ");
  esc(s, jtext(d, "schema_version"));
  sqlite3_str_appendall(s, " · generated ");
  esc(s, jtext(d, "generated_at_utc"));
  sqlite3_str_appendf(s, " · %lld complete events of %lld</p>\n",
      (long long)jNumI64(jGet(ov, "num_complete_events")), (long long)jNumI64(jGet(ov, "num_events_total")));

  /* Time breakdown: one stacked bar, its total in the title. */
  {
    double tot = jNum(jGet(tb, "total_duration")), x = 0;
    sqlite3_str_appendall(s, "<h2>Time breakdown (");
    esc(s, jtext(tb, "duration_basis"));
    profsumStrAppendPy(s, "): total %.3f µs</h2>\n", tot);
    if( tot>0 ){
      svgOpen(s, 60, "time breakdown");
      for(i=0; i<5; i++){
        double v = jNum(jGet(jGet(tb, azCat[i]), "total_duration"));
        double w = 880.0*v/tot;
        profsumStrAppendPy(s, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"30\" fill=\"%s\"><title>%s %.3f µs</title></rect>\n",
                            x, w, azColor[i], azCat[i], v);
        profsumStrAppendPy(s, "<rect x=\"%d\" y=\"42\" width=\"12\" height=\"12\" fill=\"%s\"/>"
            "<text x=\"%d\" y=\"53\" font-size=\"12\">%s %.1f%%</text>\n", 10+i*170, azColor[i], 26+i*170,
            azCat[i], 100.0*v/tot);
        x += w;
      }
      sqlite3_str_appendall(s, "</svg>\n");
    }else{
      sqlite3_str_appendall(s, "<p class=\"none\">No device or host time in the trace.</p>\n");
    }
  }

  stepChart(s, db, zSchema, id, d, bFromV1, e);

  /* Top ops by exclusive time (at most the trace's hot_op_limit). */
  n = 0;
  for(i=0; hot && i<hot->nChild && n<topK && n<64; i++){
    azL[n] = jtext(jAt(hot, i), "name");
    aV[n] = jNum(jGet(jAt(hot, i), "exclusive_duration"));
    n++;
  }
  barChart(s, "Top ops by exclusive time", azL, aV, n, "#4e79a7", 0,
           "No device ops in the trace (no XLA ops on /device:… processes).");

  /* Regions by inclusive time; a long path shows its end. */
  n = 0;
  for(i=0; rg && i<rg->nChild && n<topK && n<64; i++){
    azL[n] = jtext(jAt(rg, i), "path");
    aV[n] = jNum(jGet(jAt(rg, i), "inclusive_duration"));
    n++;
  }
  barChart(s, "Hierarchical regions (inclusive time)", azL, aV, n, "#76b7b2", 1,
           "No regions (no device ops, or none with a tf_op or a =>/:: name).");

  /* KPI bands. */
  sqlite3_str_appendall(s, "<h2>KPIs</h2>\n");
  if( (p = prepIn(db, "SELECT kind, kpi, device, value, unit, band, explanation FROM \"%w\".profsum_kpis "
                      "WHERE trace_id=?1", zSchema, e))!=0 ){
    sqlite3_bind_int64(p, 1, id);
    if( bFromV1 ){
      sqlite3_str_appendall(s, "<p class=\"none\">Imported from a summary document: only the KPIs "
                               "the document itself supports (profsum_kpis).</p>\n");
    }
    while( stepIn(db, p, e)==SQLITE_ROW ){
      const char *zBand = (const char*)sqlite3_column_text(p, 5);
      if( nKpi++==0 ){
        sqlite3_str_appendall(s, "<table><tr><th>KPI</th><th>device</th><th>value</th>"
                                 "<th>unit</th><th>band</th><th>what it means</th></tr>\n");
      }
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
    sqlite3_str_appendall(s, nKpi ? "</table>\n" : "<p class=\"none\">No KPI rows.</p>\n");
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
  if( sqlite3_str_errcode(s) ) pageErr(e, db, SQLITE_NOMEM);   /* kept: the first error */
  if( e->rc ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  {
    char *z = sqlite3_str_finish(s);
    if( z==0 ) pageErr(e, db, SQLITE_NOMEM);
    return z;
  }
}

/* profsum_report_html(trace [, top_k [, options_json]]) → HTML text;
** options_json may name the "schema" (an attached database) to read. */
static void reportHtmlFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 id;
  ProfsumDoc *pDoc = 0;
  char *z, *zSchema = 0;
  int topK = 15;
  if( argc>1 && sqlite3_value_type(argv[1])!=SQLITE_NULL ){
    if( sqlite3_value_numeric_type(argv[1])!=SQLITE_INTEGER || sqlite3_value_int64(argv[1])<1
     || sqlite3_value_int64(argv[1])>64 ){
      profsumCtxErr(ctx, "profsum_report_html: top_k must be an integer from 1 to 64");
      return;
    }
    topK = sqlite3_value_int(argv[1]);
  }
  if( profsumDocForCall(ctx, "profsum_report_html", argv[0], argc>2 ? argv[2] : 0,
                        &pDoc, &id, &zSchema) ) return;
  {
    PageErr e = {SQLITE_OK, 0};
    z = buildHtml(db, zSchema, id, profsumDocRoot(pDoc), topK, &e);
    sqlite3_free(zSchema);
    profsumDocFree(pDoc);
    if( z==0 ){
      if( e.rc==SQLITE_NOMEM || e.zMsg==0 ) sqlite3_result_error_nomem(ctx);
      else profsumCtxErr(ctx, "profsum_report_html: %s", e.zMsg);
      sqlite3_free(e.zMsg);
      return;
    }
    sqlite3_free(e.zMsg);
  }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* See profsum_int.h. */
int profsumRegisterReportHtml(sqlite3 *db, char **pzErr){
  int rc;
  (void)pzErr;
  rc = sqlite3_create_function(db, "profsum_report_html", 1, SQLITE_UTF8, 0, reportHtmlFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_report_html", 2, SQLITE_UTF8, 0, reportHtmlFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_report_html", 3, SQLITE_UTF8, 0, reportHtmlFunc, 0, 0);
  return rc;
}
