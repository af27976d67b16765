/*
** report_html.c — profsum_report_html(trace [, top_k]): one self-contained
** HTML page (no scripts, no external files) with inline SVG charts, the
** complete report: quality warnings first, profsum's advice with its
** evidence, the steps (warmup marked) and their classes, the wall-clock
** split of the steps (profsum_step_wall), the per-track breakdown (named
** for what it is), top ops, collectives, gaps and their contexts, regions,
** families, what the import collected beyond the summary
** (profsumInsReportHtml: memory, roofline, op profile when present), the
** KPIs, the reference tool's candidates and the provenance.  A table of
** contents on screen; print styles keep sections whole.
**
**   sqlite3 runs.db -cmd '.load ./profsum' "SELECT profsum_report_html('baseline')" > report.html
**
** Built from the profile_summary.v1 document (summary_doc.c) and profsum's
** views (profsum_steps, profsum_step_wall, profsum_advice, profsum_kpis,
** profsum_diagnostic).  Reads tables only.  The page is valid UTF-8 (labels
** are cut at character boundaries; names at 80 characters with the full
** name as a tooltip), its charts scale down with the window (viewBox), and
** an empty section says why it is empty.
**
** Every float (values shown and SVG coordinates alike) goes through
** profsumStrAppendPy (Python-exact rounding, profsum_int.h), so the values
** read the same as in the markdown report; never sqlite3_str_appendf.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "jsontree.h"
#include "insights.h"
#include "report_util.h"
#include "sqlcall.h"
#include "nearfmt.h"

#include <stdlib.h>
#include <string.h>

/* Append text with HTML escaping (profsumHtmlEsc). */
static void esc(sqlite3_str *s, const char *z){ profsumHtmlEsc(s, z, -1); }

static const char *jtext(const JNode *o, const char *zKey){
  const JNode *v = jGet(o, zKey);
  return (v && v->type==JT_STRING) ? v->z : "";
}

/* Append zBefore, then the string zKey of the object o escaped (nothing
** when it is absent or not a string). */
static void escKey(sqlite3_str *s, const char *zBefore, const JNode *o, const char *zKey){
  sqlite3_str_appendall(s, zBefore);
  esc(s, jtext(o, zKey));
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
  profsumHtmlEsc(s, z, (int)(p-z));    /* no copy: nothing to run out of */
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
  char *z = sqlite3_mprintf(zFmt, zSchema, zSchema);
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

/* Open a section: <section id=zId><h2>zTitle</h2>. */
static void secOpen(sqlite3_str *s, const char *zId, const char *zTitle){
  sqlite3_str_appendf(s, "<section id=\"%s\"><h2>%s</h2>\n", zId, zTitle);
}

/* A table cell holding a name cut to 80 characters, the full name as its
** tooltip. */
static void nameCell(sqlite3_str *s, const char *z){
  sqlite3_str_appendall(s, "<td class=\"name\" title=\"");
  esc(s, z);
  sqlite3_str_appendall(s, "\"><code>");
  escCut(s, z ? z : "", 80, 0);
  sqlite3_str_appendall(s, "</code></td>");
}

/* A number cell (3 decimals, n/a when null). */
static void numCell(sqlite3_str *s, const JNode *v){
  sqlite3_str_appendall(s, "<td class=\"num\">");
  num3(s, v);
  sqlite3_str_appendall(s, "</td>");
}

/* Quality warnings first: the document's, a capped export, float nesting. */
static void secQuality(sqlite3_str *s, sqlite3 *db, const char *zSchema, sqlite3_int64 id, const JNode *d,
                       PageErr *e){
  const JNode *w = jGet(jGet(d, "trace_overview"), "quality_warnings");
  sqlite3_stmt *p;
  int i, n = 0;
  secOpen(s, "quality", "Quality warnings");
  sqlite3_str_appendall(s, "<ul class=\"warn\">\n");
  for(i=0; w && i<w->nChild; i++){
    sqlite3_str_appendall(s, "<li>");
    esc(s, jAt(w, i)->type==JT_STRING ? jAt(w, i)->z : "");
    sqlite3_str_appendall(s, "</li>\n");
    n++;
  }
  if( (p = prepIn(db, "SELECT detail FROM \"%w\".profsum_diagnostic WHERE trace_id=?1 AND kind='capped_export' "
                      "UNION ALL SELECT explanation FROM \"%w\".profsum_kpis WHERE trace_id=?1 "
                      "AND kpi='float_nesting' AND band='detected'", zSchema, e))!=0 ){
    sqlite3_bind_int64(p, 1, id);
    while( stepIn(db, p, e)==SQLITE_ROW ){
      sqlite3_str_appendall(s, "<li>");
      esc(s, (const char*)sqlite3_column_text(p, 0));
      sqlite3_str_appendall(s, "</li>\n");
      n++;
    }
    sqlite3_finalize(p);
  }
  sqlite3_str_appendall(s, "</ul>\n");
  if( n==0 ) sqlite3_str_appendall(s, "<p class=\"none\">None: the numbers below cover the whole trace.</p>\n");
  sqlite3_str_appendall(s, "</section>\n");
}

/* profsum's advice (profsum_advice), with its evidence and fixes. */
static void secAdvice(sqlite3_str *s, sqlite3 *db, const char *zSchema, sqlite3_int64 id, PageErr *e){
  sqlite3_stmt *p;
  int n = 0;
  secOpen(s, "advice", "profsum's advice");
  if( (p = prepIn(db, "SELECT rank, advice_id, source, title, share_of_step, time_at_stake_us, "
                      PROFSUM_SQL_ADVICE_EVIDENCE ", "
                      "(SELECT group_concat(f.value, char(10)) FROM json_each(a.fixes) AS f) "
                      "FROM \"%w\".profsum_advice AS a WHERE trace_id=?1 ORDER BY rank", zSchema, e))!=0 ){
    sqlite3_bind_int64(p, 1, id);
    while( stepIn(db, p, e)==SQLITE_ROW ){
      const char *zFix = (const char*)sqlite3_column_text(p, 7);
      sqlite3_str_appendf(s, "<div class=\"advice\"><h3>%lld. ", (long long)sqlite3_column_int64(p, 0));
      esc(s, (const char*)sqlite3_column_text(p, 3));
      sqlite3_str_appendall(s, "</h3>\n<p class=\"legend\"><code>");
      esc(s, (const char*)sqlite3_column_text(p, 1));
      sqlite3_str_appendall(s, "</code> from ");
      esc(s, (const char*)sqlite3_column_text(p, 2));
      profsumAdviceStake(s, p, 4, " · ", "µs");
      sqlite3_str_appendall(s, "</p>\n<p>Evidence: ");
      esc(s, (const char*)sqlite3_column_text(p, 6));
      sqlite3_str_appendall(s, "</p>\n<ul>\n");
      while( zFix && *zFix ){
        const char *zNl = strchr(zFix, '\n');
        /* the line escaped in place: a copy that ran out of memory left
        ** an empty item in a page that looked whole */
        sqlite3_str_appendall(s, "<li>");
        profsumHtmlEsc(s, zFix, zNl ? (int)(zNl - zFix) : (int)strlen(zFix));
        sqlite3_str_appendall(s, "</li>\n");
        zFix = zNl ? zNl+1 : 0;
      }
      sqlite3_str_appendall(s, "</ul></div>\n");
      n++;
    }
    sqlite3_finalize(p);
  }
  if( n==0 ){
    sqlite3_str_appendall(s, "<p class=\"none\">No KPI is in its bad band and no pattern is detected");
    if( (p = prepIn(db, "SELECT count(*) FROM \"%w\".profsum_kpis WHERE trace_id=?1 AND band='unavailable'",
                    zSchema, e))!=0 ){
      sqlite3_bind_int64(p, 1, id);
      if( stepIn(db, p, e)==SQLITE_ROW && sqlite3_column_int(p, 0)>0 ){
        sqlite3_str_appendf(s, " among those this trace has the data for (%d KPIs are unavailable: "
                            "see the KPI table)", sqlite3_column_int(p, 0));
      }
      sqlite3_finalize(p);
    }
    sqlite3_str_appendall(s, ".</p>\n");
  }
  sqlite3_str_appendall(s, "</section>\n");
}

/* The step classes table (step_time.classes). */
static void stepClasses(sqlite3_str *s, const JNode *d){
  const JNode *cl = jGet(jGet(d, "step_time"), "classes");
  int i;
  if( cl==0 || cl->nChild==0 ) return;
  sqlite3_str_appendall(s, "<table><tr><th>class</th><th>count</th><th>median µs</th><th>p90 µs</th>"
                           "<th>representative step</th></tr>\n");
  for(i=0; i<cl->nChild; i++){
    const JNode *c = jAt(cl, i), *ds = jGet(c, "duration_stats"), *rs = jGet(c, "representative_step");
    escKey(s, "<tr><td>", c, "name");
    sqlite3_str_appendf(s, "</td><td class=\"num\">%lld</td>", (long long)jNumI64(jGet(c, "count")));
    numCell(s, jGet(ds, "median"));
    numCell(s, jGet(ds, "p90"));
    if( rs && rs->type==JT_INT ) sqlite3_str_appendf(s, "<td class=\"num\">%lld</td></tr>\n", (long long)rs->i);
    else sqlite3_str_appendall(s, "<td class=\"num\">n/a</td></tr>\n");
  }
  sqlite3_str_appendall(s, "</table>\n");
}

/* The profile's span in *pSpan from trace_overview ov: 1, or 0 when its
** start or end is not a number (null: no event has a time). */
static int spanOf(const JNode *ov, double *pSpan){
  const JNode *a = jGet(ov, "profile_start_ts"), *b = jGet(ov, "profile_end_ts");
  if( !a || !b || (a->type!=JT_INT && a->type!=JT_REAL) || (b->type!=JT_INT && b->type!=JT_REAL) ) return 0;
  *pSpan = jNum(b) - jNum(a);
  return 1;
}

/* Wall-clock time: the profile's span, the steady steps' split
** (profsum_step_wall) as a stacked bar and a table. */
static void secWall(sqlite3_str *s, sqlite3 *db, const char *zSchema, sqlite3_int64 id, const JNode *d,
                    PageErr *e){
  static const char *azPart[4] = {"compute", "collective", "transfer", "idle"};
  static const char *azColor[4] = {"#4e79a7", "#f28e2b", "#b07aa1", "#dddddd"};
  const JNode *ov = jGet(d, "trace_overview");
  sqlite3_stmt *p;
  double span;
  int k, done = 0;
  secOpen(s, "wall", "Wall-clock time");
  if( spanOf(ov, &span) ){
    profsumStrAppendPy(s, "<p>Profile span (first event to last end): %.3f µs.</p>\n", span);
  }else{
    sqlite3_str_appendall(s, "<p>Profile span: none (no event of the trace has a time).</p>\n");
  }
  if( (p = prepIn(db, profsumSqlStepWallSplit, zSchema, e))!=0 ){
    sqlite3_bind_int64(p, 1, id);
    if( stepIn(db, p, e)==SQLITE_ROW && sqlite3_column_double(p, 2)>0 ){
      double wall = sqlite3_column_double(p, 2), x = 0;
      done = 1;
      sqlite3_str_appendf(s, "<p>%lld %s step(s) on %lld device(s), each instant counted once "
                          "(collective over transfer over compute; idle: no device op runs):</p>\n",
                          (long long)sqlite3_column_int64(p, 0), sqlite3_column_int(p, 7) ? "warmup" : "steady",
                          (long long)sqlite3_column_int64(p, 1));
      svgOpen(s, 60, "wall-clock split of the steps");
      for(k=0; k<4; k++){
        double v = sqlite3_column_double(p, 3+k), w = 880.0*v/wall;
        profsumStrAppendPy(s, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"30\" fill=\"%s\">"
                           "<title>%s %.3f µs</title></rect>\n", x, w, azColor[k], azPart[k], v/1e6);
        profsumStrAppendPy(s, "<rect x=\"%d\" y=\"42\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                           "<text x=\"%d\" y=\"53\" font-size=\"12\">%s ",
                           10+k*210, azColor[k], 26+k*210, azPart[k]);
        profsumStrAppendNear(s, 100.0*v/wall, 1, 5);
        sqlite3_str_appendall(s, "%</text>\n");
        x += w;
      }
      sqlite3_str_appendall(s, "</svg>\n<table><tr><th>part</th><th>µs over these steps</th><th>share</th></tr>\n");
      for(k=0; k<4; k++){
        double v = sqlite3_column_double(p, 3+k);
        profsumStrAppendPy(s, "<tr><td>%s</td><td class=\"num\">%.3f</td><td class=\"num\">",
                           azPart[k], v/1e6);
        profsumStrAppendNear(s, 100.0*v/wall, 2, 5);
        sqlite3_str_appendall(s, "%</td></tr>\n");
      }
      profsumStrAppendPy(s, "<tr><td>wall</td><td class=\"num\">%.3f</td><td class=\"num\">100.00%%</td></tr>"
                         "</table>\n", wall/1e6);
    }
    sqlite3_finalize(p);
  }
  if( !done ){
    /* an older profsum stored no step wall time (no profsum_build) */
    int bOld = 0;
    if( (p = prepIn(db, "SELECT profsum_build IS NULL AND summary_json IS NULL FROM \"%w\".profsum_trace "
                    "WHERE trace_id=?1", zSchema, e))!=0 ){
      sqlite3_bind_int64(p, 1, id);
      bOld = stepIn(db, p, e)==SQLITE_ROW && sqlite3_column_int(p, 0);
      sqlite3_finalize(p);
    }
    sqlite3_str_appendall(s, bOld ? "<p class=\"none\">No step wall time stored for this trace (imported by "
                                    "an older profsum): re-import it to split the step wall time.</p>\n"
                                  : "<p class=\"none\">No steps measured on a device: the step wall time is "
                                    "not split.</p>\n");
  }
  sqlite3_str_appendall(s, "</section>\n");
}

/* 1 when the breakdown tb is the global mode's (one device timeline's
** window), else 0. */
static int isGlobalBasis(const JNode *tb){
  return strcmp(jtext(tb, "duration_basis"), "exclusive_duration_global_timeline")==0;
}

/* The time breakdown: one stacked bar, its total named for what it is (a
** sum over tracks, not wall time; or, in global mode, one timeline's
** window). */
static void secBreakdown(sqlite3_str *s, const JNode *d){
  static const char *azCat[5] = {"compute","communication","host","stall","other"};
  static const char *azColor[5] = {"#4e79a7","#f28e2b","#59a14f","#e15759","#9c9c9c"};
  const JNode *tb = jGet(d, "time_breakdown");
  double tot = jNum(jGet(tb, "total_duration")), x = 0;
  int i;
  escKey(s, "<section id=\"breakdown\"><h2>Time breakdown (", tb, "duration_basis");
  profsumStrAppendPy(s, "): total %.3f µs</h2>\n", tot);
  if( isGlobalBasis(tb) ){
    sqlite3_str_appendall(s, "<p class=\"legend\">The total is the window of one device timeline, from its "
                             "first to its last compute op: communication over compute, the rest stall; "
                             "host time is not in it.</p>\n");
  }else{
    sqlite3_str_appendall(s, "<p class=\"legend\">The total adds the exclusive time of every track (each "
                             "device's op lines and every host thread): it is not wall time.</p>\n");
  }
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
  sqlite3_str_appendall(s, "</section>\n");
}

/* One cell of a document table's row (an object of the document): its
** member zKey as escaped text ('e'), as a name cell ('n': zAlt's value
** when zKey's is empty), as an integer ('i'), as a number with 3 decimals
** ('f'), or a fraction as a percentage with 2 decimals ('p'). */
typedef struct HtCol { char kind; const char *zKey, *zAlt; } HtCol;

/* A document table: the section (zId, zTitle), the list member of the
** document, the paragraph when it is empty, the head row, the cells. */
typedef struct HtTable {
  const char *zId, *zTitle, *zList, *zNone, *zHead;
  int nCol;
  HtCol aCol[6];
} HtTable;

/* Append row o of a document table: <tr>, its nCol cells aCol, </tr>. */
static void htRow(sqlite3_str *s, const JNode *o, const HtCol *aCol, int nCol){
  int k;
  sqlite3_str_appendall(s, "<tr>");
  for(k=0; k<nCol; k++){
    const HtCol *c = &aCol[k];
    switch( c->kind ){
      case 'e':
        sqlite3_str_appendall(s, "<td>");
        esc(s, jtext(o, c->zKey));
        sqlite3_str_appendall(s, "</td>");
        break;
      case 'n':
        nameCell(s, (c->zAlt && !jtext(o, c->zKey)[0]) ? jtext(o, c->zAlt) : jtext(o, c->zKey));
        break;
      case 'i':
        sqlite3_str_appendf(s, "<td class=\"num\">%lld</td>", (long long)jNumI64(jGet(o, c->zKey)));
        break;
      case 'f':
        numCell(s, jGet(o, c->zKey));
        break;
      default:
        profsumStrAppendPy(s, "<td class=\"num\">%.2f%%</td>", 100.0*jNum(jGet(o, c->zKey)));
    }
  }
  sqlite3_str_appendall(s, "</tr>\n");
}

static const HtCol aHotCol[] = {
  {'n', "name", 0}, {'e', "category", 0}, {'i', "count", 0},
  {'f', "exclusive_duration", 0}, {'f', "avg_duration", 0}
};

/* Top ops: the chart and a table (names cut to 80 characters). */
static void secHotOps(sqlite3_str *s, const JNode *d, int topK){
  const JNode *hot = jGet(d, "hot_ops");
  const char *azL[64];
  double aV[64];
  int i, n = 0;
  sqlite3_str_appendall(s, "<section id=\"hot-ops\">\n");
  for(i=0; hot && i<hot->nChild && n<topK && n<64; i++){
    azL[n] = jtext(jAt(hot, i), "name");
    aV[n] = jNum(jGet(jAt(hot, i), "exclusive_duration"));
    n++;
  }
  barChart(s, "Top ops by exclusive time", azL, aV, n, "#4e79a7", 0,
           "No device ops in the trace (no XLA ops on /device:… processes).");
  if( n>0 ){
    sqlite3_str_appendall(s, "<table><tr><th>op</th><th>category</th><th>count</th><th>exclusive µs</th>"
                             "<th>avg µs</th></tr>\n");
    for(i=0; i<n; i++) htRow(s, jAt(hot, i), aHotCol, 5);
    sqlite3_str_appendall(s, "</table>\n");
  }
  sqlite3_str_appendall(s, "</section>\n");
}

/* The document tables after the top ops. */
static const HtTable aDocTable[] = {
  { "collectives", "Collectives", "communication_ops",
    "<p class=\"none\">No communication ops.</p>\n",
    "<table><tr><th>collective</th><th>count</th><th>exclusive µs</th><th>avg µs</th></tr>\n",
    4, { {'e', "collective", 0}, {'i', "count", 0}, {'f', "total_duration", 0}, {'f', "avg_duration", 0} } },
  { "gaps", "Gaps before ops", "gap_before_ops",
    "<p class=\"none\">No idle gaps before device ops.</p>\n",
    "<table><tr><th>payload op</th><th>marker op</th><th>count</th><th>total µs</th>"
    "<th>max µs</th></tr>\n",
    5, { {'n', "payload_op", "name"}, {'n', "marker_op", 0}, {'i', "count", 0},
         {'f', "total_gap_duration", 0}, {'f', "max_gap_duration", 0} } },
  { "gap-contexts", "Gap contexts", "gap_region_contexts",
    "<p class=\"none\">No gap contexts.</p>\n",
    "<table><tr><th>op</th><th>region path</th><th>count</th><th>total µs</th></tr>\n",
    4, { {'n', "op_name", 0}, {'n', "region_path", 0}, {'i', "count", 0}, {'f', "total_gap_duration", 0} } },
  { "families", "Op families", "semantic_families",
    "<p class=\"none\">No op families.</p>\n",
    "<table><tr><th>family</th><th>count</th><th>exclusive µs</th><th>share</th>"
    "<th>example op</th></tr>\n",
    5, { {'e', "family", 0}, {'i', "count", 0}, {'f', "exclusive_duration", 0},
         {'p', "share_of_total", 0}, {'n', "example_op", 0} } },
};

/* Collectives, gaps, gap contexts and families: tables of the document,
** at most topK rows each. */
static void secTables(sqlite3_str *s, const JNode *d, int topK){
  size_t t;
  int i;
  for(t=0; t<sizeof(aDocTable)/sizeof(aDocTable[0]); t++){
    const HtTable *tb = &aDocTable[t];
    const JNode *l = jGet(d, tb->zList);
    secOpen(s, tb->zId, tb->zTitle);
    if( l==0 || l->nChild==0 ) sqlite3_str_appendall(s, tb->zNone);
    else{
      sqlite3_str_appendall(s, tb->zHead);
      for(i=0; i<l->nChild && i<topK; i++) htRow(s, jAt(l, i), tb->aCol, tb->nCol);
      sqlite3_str_appendall(s, "</table>\n");
    }
    sqlite3_str_appendall(s, "</section>\n");
  }
}

/* The KPI table (profsum_kpis), bands coloured. */
static void secKpis(sqlite3_str *s, sqlite3 *db, const char *zSchema, sqlite3_int64 id, int bFromV1, PageErr *e){
  sqlite3_stmt *p;
  int nKpi = 0;
  secOpen(s, "kpis", "KPIs");
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
      else{
        sqlite3_str_appendall(s, "</td><td>");
        profsumKpiValue(s, sqlite3_column_double(p, 3), (const char*)sqlite3_column_text(p, 4));
      }
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
    sqlite3_finalize(p);
  }
  sqlite3_str_appendall(s, nKpi ? "</table>\n" : "<p class=\"none\">No KPI rows.</p>\n");
  sqlite3_str_appendall(s, "</section>\n");
}

/* The reference tool's candidates, with evidence and suggestions, and a
** note where a rule's words disagree with the numbers (its fallback calls
** the shares balanced whatever they are; an op is "outsized" far below
** profsum's 50 %: topOp, the one_op_dominating value when that pattern is
** not detected, or < 0). */
static void secCandidates(sqlite3_str *s, const JNode *d, double topOp){
  static const char *azCat[5] = {"compute","communication","host","stall","other"};
  const JNode *ca = jGet(d, "optimization_candidates"), *tb = jGet(d, "time_breakdown");
  int i, k, iBig = -1;
  double big = 0.5;
  for(k=0; k<5; k++){
    double v = jNum(jGet(jGet(tb, azCat[k]), "share_of_total"));
    if( v>big ){ big = v; iBig = k; }
  }
  secOpen(s, "candidates", "The reference tool's candidates");
  sqlite3_str_appendall(s, "<p class=\"legend\">The reference tool's fixed rules, as it writes them "
                           "(profsum's advice above is measured on this trace).</p>\n<ul>\n");
  for(i=0; ca && i<ca->nChild; i++){
    const JNode *c = jAt(ca, i), *ev = jGet(c, "evidence"), *sg = jGet(c, "suggestions");
    escKey(s, "<li><b>", c, "title");
    escKey(s, "</b>: ", c, "rationale");
    if( iBig>=0 && strcmp(jtext(c, "candidate_id"), "no-dominant-bottleneck")==0 ){
      profsumStrAppendPy(s, " <em>(profsum: the rule fires when no other does; the breakdown is not "
                         "balanced: %s %.1f%%)</em>", azCat[iBig], 100.0*big);
    }
    if( profsumMaxPct(jtext(c, "rationale"))>100.0 ){
      sqlite3_str_appendall(s, " <em>(profsum: its percentage is above 100%: the reference divides by the "
                               "per-track exclusive total, which the measured time can exceed, so it is no "
                               "share of the time)</em>");
    }
    if( strcmp(jtext(c, "candidate_id"), "communication-heavy")==0 ){
      double v = 100.0*jNum(jGet(jGet(tb, "communication"), "share_of_total"));
      if( v<50.0 ){
        sqlite3_str_appendall(s, " <em>(profsum: communication is ");
        profsumStrAppendNear(s, v, 1, 5.0);
        sqlite3_str_appendall(s, "% of the breakdown total; profsum calls a category dominant from 50%)</em>");
      }
    }
    if( topOp>=0 && strcmp(jtext(c, "candidate_id"), "single-hot-op")==0 ){
      sqlite3_str_appendall(s, " <em>(profsum: the top op takes ");
      profsumStrAppendNear(s, 100.0*topOp, 1, 5.0);
      sqlite3_str_appendall(s, "% of device-op time; profsum calls an op dominant only over 50%)</em>");
    }
    sqlite3_str_appendall(s, "<ul>");
    for(k=0; ev && k<ev->nChild; k++){
      sqlite3_str_appendall(s, "<li>evidence: ");
      esc(s, jAt(ev, k)->type==JT_STRING ? jAt(ev, k)->z : "");
      sqlite3_str_appendall(s, "</li>");
    }
    for(k=0; sg && k<sg->nChild; k++){
      sqlite3_str_appendall(s, "<li>try: ");
      esc(s, jAt(sg, k)->type==JT_STRING ? jAt(sg, k)->z : "");
      sqlite3_str_appendall(s, "</li>");
    }
    sqlite3_str_appendall(s, "</ul></li>\n");
  }
  sqlite3_str_appendall(s, "</ul>\n</section>\n");
}

/* Provenance: the run metadata and the trace's identity. */
static void secProvenance(sqlite3_str *s, const JNode *d){
  static const char *azRm[] = {"run_path", "artifact_ref", "hardware_type", "mesh_or_topology", "git_sha", 0};
  const JNode *rm = jGet(d, "run_metadata"), *pv = jGet(d, "trace_provenance"), *ids = jGet(pv, "run_ids");
  int i;
  secOpen(s, "provenance", "Provenance");
  escKey(s, "<table>\n<tr><td>source</td><td>", d, "source_path");
  escKey(s, "</td></tr>\n<tr><td>source format</td><td>", d, "source_format");
  escKey(s, "</td></tr>\n<tr><td>trace SHA-256</td><td><code>", pv, "trace_sha256");
  sqlite3_str_appendall(s, "</code></td></tr>\n<tr><td>run ids</td><td>");
  for(i=0; ids && i<ids->nChild && i<8; i++){
    if( i ) sqlite3_str_appendall(s, ", ");
    esc(s, jAt(ids, i)->type==JT_STRING ? jAt(ids, i)->z : "");
  }
  sqlite3_str_appendall(s, "</td></tr>\n");
  for(i=0; azRm[i]; i++){
    sqlite3_str_appendf(s, "<tr><td>%s</td><td>", azRm[i]);
    esc(s, jtext(rm, azRm[i])[0] ? jtext(rm, azRm[i]) : "unknown");
    sqlite3_str_appendall(s, "</td></tr>\n");
  }
  sqlite3_str_appendall(s, "</table>\n</section>\n");
}

/* The table of contents stands at this mark in the page's head until the
** page is built: pageToc replaces it with a link to every section the page
** has, in page order. */
#define TOC_MARK "<!--profsum-toc-->"

/* The titles of the table of contents, by section id (a section not named
** here is listed by its id). */
static const char *const azTocTitle[][2] = {
  {"quality","Quality warnings"}, {"advice","Advice"}, {"steps","Steps"}, {"wall","Wall-clock time"},
  {"breakdown","Time breakdown"}, {"hot-ops","Top ops"}, {"collectives","Collectives"}, {"gaps","Gaps"},
  {"gap-contexts","Gap contexts"}, {"families","Families"}, {"regions","Regions"},
  {"profsum-memory","Memory"}, {"profsum-kernels","Kernels"}, {"profsum-devices","Devices"},
  {"profsum-op-profile","Op profile"}, {"profsum-utilization","Utilization"},
  {"profsum-roofline","Roofline"}, {"kpis","KPIs"}, {"candidates","Reference candidates"},
  {"provenance","Provenance"}};

/* The page z with TOC_MARK replaced by a link to each <section id="...">
** after it, in page order: a sqlite3_malloc'd string, or 0 (out of
** memory).  z is freed. */
static char *pageToc(sqlite3 *db, char *z){
  static const char zOpen[] = "<section id=\"";
  char *zMark = strstr(z, TOC_MARK), *zOut;
  const char *q;
  sqlite3_str *t;
  if( zMark==0 ) return z;
  t = sqlite3_str_new(db);
  sqlite3_str_append(t, z, (int)(zMark - z));
  for(q = zMark; (q = strstr(q, zOpen))!=0; ){
    const char *zId = q + sizeof(zOpen) - 1, *zEnd = strchr(zId, '"');
    size_t k;
    int nId;
    if( zEnd==0 ) break;
    nId = (int)(zEnd - zId);
    for(k=0; k<sizeof(azTocTitle)/sizeof(azTocTitle[0]); k++){
      if( (int)strlen(azTocTitle[k][0])==nId && memcmp(azTocTitle[k][0], zId, nId)==0 ) break;
    }
    if( k<sizeof(azTocTitle)/sizeof(azTocTitle[0]) ){
      sqlite3_str_appendf(t, "<a href=\"#%.*s\">%s</a>", nId, zId, azTocTitle[k][1]);
    }else{
      sqlite3_str_appendf(t, "<a href=\"#%.*s\">%.*s</a>", nId, zId, nId, zId);
    }
    q = zEnd;
  }
  sqlite3_str_appendall(t, zMark + sizeof(TOC_MARK) - 1);
  sqlite3_free(z);
  if( sqlite3_str_errcode(t) ){ sqlite3_free(sqlite3_str_finish(t)); return 0; }
  zOut = sqlite3_str_finish(t);
  return zOut;
}

/* The page's head: title, styles (screen and print), the place of the
** table of contents (TOC_MARK). */
static void pageHead(sqlite3_str *s, const char *zLabel, const JNode *d){
  const JNode *ov = jGet(d, "trace_overview");
  sqlite3_str_appendall(s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>profsum report: ");
  esc(s, zLabel);
  sqlite3_str_appendall(s, "</title>\n<style>body{font-family:sans-serif;margin:24px auto;max-width:1000px;"
      "padding:0 12px;color:#222}"
      "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
      "th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}"
      "td.name{max-width:520px;overflow-wrap:anywhere}"
      "td:last-child,li,p{overflow-wrap:anywhere}svg.chart{max-width:900px;height:auto;display:block}"
      ".none,.legend{color:#555;font-size:13px}nav{font-size:13px}nav a{margin-right:10px}"
      "ul.warn li{color:#8a4b00}.advice{border-left:4px solid #4e79a7;padding-left:10px;margin:10px 0}"
      ".advice h3{margin:4px 0;font-size:15px}"
      ".good{background:#d7f0d0}.warning{background:#fbe8b0}.bad{background:#f6c6c6}"
      ".unavailable,.not_detected{background:#eee}.detected{background:#f6c6c6}"
      "@media print{body{max-width:none;margin:0}nav{display:none}section{break-inside:avoid-page}"
      "a{color:inherit;text-decoration:none}}</style></head><body>\n");
  sqlite3_str_appendall(s, "<h1>Profile report: ");
  esc(s, zLabel);
  escKey(s, "</h1>\n<p>", d, "source_path");
  escKey(s, "<br>schema ", d, "schema_version");
  escKey(s, " · generated ", d, "generated_at_utc");
  sqlite3_str_appendf(s, " · %lld complete events of %lld</p>\n<nav>" TOC_MARK "</nav>\n",
      (long long)jNumI64(jGet(ov, "num_complete_events")), (long long)jNumI64(jGet(ov, "num_events_total")));
}

/* Build the page.  Returns a sqlite3_malloc'd string, or 0 with *e set
** (SQLITE_NOMEM, or a query's error and message). */
static char *buildHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 id, const JNode *d, int topK,
                       PageErr *e){
  sqlite3_str *s = sqlite3_str_new(db);
  const JNode *rg = jGet(d, "hierarchical_regions");
  const char *azL[64];
  double aV[64];
  int i, n, bFromV1 = 0;
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
  pageHead(s, zLabel ? zLabel : "", d);
  sqlite3_free(zLabel);
  /* the first line: the profile's span and the steady steps' median wall time */
  {
    const JNode *ov = jGet(d, "trace_overview");
    double span;
    if( spanOf(ov, &span) ) profsumStrAppendPy(s, "<p class=\"lead\">Profile span %.3f µs", span);
    else sqlite3_str_appendall(s, "<p class=\"lead\">No event of the trace has a time");
    if( (p = prepIn(db, profsumSqlStepWallMedian, zSchema, e))!=0 ){
      sqlite3_bind_int64(p, 1, id);
      if( stepIn(db, p, e)==SQLITE_ROW && sqlite3_column_type(p, 0)!=SQLITE_NULL ){
        profsumStrAppendPy(s, " · median step wall time %.3f µs per device", sqlite3_column_double(p, 0));
      }
      sqlite3_finalize(p); p = 0;
    }
    sqlite3_str_appendall(s, ".</p>\n");
  }
  secQuality(s, db, zSchema, id, d, e);
  secAdvice(s, db, zSchema, id, e);
  sqlite3_str_appendall(s, "<section id=\"steps\">\n");
  stepChart(s, db, zSchema, id, d, bFromV1, e);
  stepClasses(s, d);
  sqlite3_str_appendall(s, "</section>\n");
  secWall(s, db, zSchema, id, d, e);
  secBreakdown(s, d);
  secHotOps(s, d, topK);
  secTables(s, d, topK);
  /* Regions by inclusive time; a long path shows its end. */
  n = 0;
  for(i=0; rg && i<rg->nChild && n<topK && n<64; i++){
    azL[n] = jtext(jAt(rg, i), "path");
    aV[n] = jNum(jGet(jAt(rg, i), "inclusive_duration"));
    n++;
  }
  sqlite3_str_appendall(s, "<section id=\"regions\">\n");
  barChart(s, "Hierarchical regions (inclusive time)", azL, aV, n, "#76b7b2", 1,
           "No regions (no device ops, or none with a tf_op or a =>/:: name).");
  sqlite3_str_appendall(s, "</section>\n");
  {
    int rcIns = profsumInsReportHtml(db, zSchema, id, s);
    if( rcIns ) pageErr(e, db, rcIns);
  }
  secKpis(s, db, zSchema, id, bFromV1, e);
  {
    double topOp = -1;
    if( (p = prepIn(db, "SELECT value FROM \"%w\".profsum_kpis WHERE trace_id=?1 AND kpi='one_op_dominating' "
                        "AND value IS NOT NULL AND band='not_detected'", zSchema, e))!=0 ){
      sqlite3_bind_int64(p, 1, id);
      if( stepIn(db, p, e)==SQLITE_ROW ) topOp = sqlite3_column_double(p, 0);
      sqlite3_finalize(p); p = 0;
    }
    secCandidates(s, d, topOp);
  }
  secProvenance(s, d);
  sqlite3_str_appendall(s, "</body></html>\n");
  if( sqlite3_str_errcode(s) ) pageErr(e, db, SQLITE_NOMEM);   /* kept: the first error */
  if( e->rc ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  {
    char *z = sqlite3_str_finish(s);
    if( z ) z = pageToc(db, z);
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
  rc = profsumCreateFunctions(db, "profsum_report_html", 1, 3, SQLITE_UTF8|PROFSUM_FN_READS, reportHtmlFunc);
  return rc;
}
