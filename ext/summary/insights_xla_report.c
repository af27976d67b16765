/*
** insights_xla_report.c — the report sections of the InsXla collector
** (insights_int.h): devices, op profile, roofline and utilization, read
** back from the views profsum_devices, profsum_op_profile,
** profsum_roofline and profsum_utilization of zSchema, and before them
** the capture's environment (profsum_environment, stored by InsEnv: the
** same table layout serves it).  A section is
** written only when its view has data for the trace (the roofline and
** utilization only when some op has FLOPs or bytes).  Markdown sections
** start with "## profsum: "; HTML ones are <section> elements, the
** roofline with an inline SVG chart (log-log, no scripts).  Numbers go
** through profsumStrAppendPy (Python-exact rounding).
*/
#include "insights_int.h"
#include "report_util.h"

#include <math.h>
#include <string.h>

/* Rows per table. */
#define XR_TOP 10

/* Prepare zFmt (%w: the schema, at most twice) bound to traceId as ?1. */
static int xrPrepare(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, const char *zFmt,
                     sqlite3_stmt **ppSt){
  char *zSql = sqlite3_mprintf(zFmt, zSchema, zSchema);
  int rc;
  *ppSt = 0;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, ppSt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK ) sqlite3_bind_int64(*ppSt, 1, traceId);
  return rc;
}

/* Finish a statement: SQLITE_OK when it ran to its end. */
static int xrDone(sqlite3_stmt *pSt, int rcStep){
  int rc = sqlite3_finalize(pSt);
  if( rcStep!=SQLITE_DONE && rcStep!=SQLITE_ROW && rcStep!=SQLITE_OK ) return rcStep;
  return rc;
}

/* Append column i as markdown table text ('|' escaped, newlines as
** spaces), or "n/a" when NULL. */
static void mdText(sqlite3_str *s, sqlite3_stmt *pSt, int i){
  const char *z = (const char*)sqlite3_column_text(pSt, i);
  if( z==0 ){ sqlite3_str_appendall(s, "n/a"); return; }
  profsumMdEsc(s, z, -1);
}

/* Append column i scaled by 1/div with zFmt (Python rounding), or "n/a". */
static void num(sqlite3_str *s, sqlite3_stmt *pSt, int i, double div, const char *zFmt){
  if( sqlite3_column_type(pSt, i)==SQLITE_NULL ) sqlite3_str_appendall(s, "n/a");
  else profsumStrAppendPy(s, zFmt, sqlite3_column_double(pSt, i)/div);
}

/* Append a percentage of column i (a fraction), or "n/a". */
static void pct(sqlite3_str *s, sqlite3_stmt *pSt, int i){
  if( sqlite3_column_type(pSt, i)==SQLITE_NULL ) sqlite3_str_appendall(s, "n/a");
  else profsumStrAppendPy(s, "%.1f%%", sqlite3_column_double(pSt, i)*100.0);
}

/* Append text with HTML escaping (profsumHtmlEsc). */
static void esc(sqlite3_str *s, const char *z){ profsumHtmlEsc(s, z, -1); }

/* Append column i escaped, or "n/a". */
static void escCol(sqlite3_str *s, sqlite3_stmt *pSt, int i){
  const char *z = (const char*)sqlite3_column_text(pSt, i);
  esc(s, z ? z : "n/a");
}

/* 1 when the query (bound to the trace) has a row; -1 on error. */
static int xrHas(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, const char *zFmt){
  sqlite3_stmt *pSt;
  int rc = xrPrepare(db, zSchema, traceId, zFmt, &pSt), has;
  if( rc ){ sqlite3_finalize(pSt); return -1; }
  has = sqlite3_step(pSt)==SQLITE_ROW;
  return sqlite3_finalize(pSt)==SQLITE_OK ? has : -1;
}

static const char zDevSql[] =
  "SELECT device, kind, vendor, model, compute_capability, core_count, clock_hz, memory_bytes, "
  "peak_flops_per_s, peak_mem_bw_bytes_per_s, peak_source, has_events "
  "FROM \"%w\".profsum_devices WHERE trace_id=?1 AND status='ok' ORDER BY device";
static const char zEnvSql[] =
  "SELECT jax_version, jaxlib_version, device_model, n_devices, profile_start_utc, profile_duration_s "
  "FROM \"%w\".profsum_environment WHERE trace_id=?1 AND (jax_version IS NOT NULL "
  "OR jaxlib_version IS NOT NULL OR device_model IS NOT NULL OR profile_start_utc IS NOT NULL)";
static const char zOpSql[] =
  "SELECT level, name, display_name, attribution, hlo_module, count, total_us, self_us, share, framework_op "
  "FROM \"%w\".profsum_op_profile WHERE trace_id=?1 AND status='ok' AND rank<10 "
  "ORDER BY CASE level WHEN 'hlo_op' THEN 0 WHEN 'hlo_category' THEN 1 ELSE 2 END, rank";
static const char zRoofHas[] =
  "SELECT 1 FROM \"%w\".profsum_roofline WHERE trace_id=?1 AND (flops IS NOT NULL "
  "OR model_flops IS NOT NULL OR bytes_accessed IS NOT NULL) LIMIT 1";
static const char zRoofSql[] =
  "SELECT name, device, count, device_time_us, intensity, achieved_flops_per_s, achieved_bytes_per_s, "
  "flops_fraction, bw_fraction, bound, status, ridge_intensity, peak_flops_per_s, peak_mem_bw_bytes_per_s "
  "FROM \"%w\".profsum_roofline WHERE trace_id=?1 AND level='op' AND (flops IS NOT NULL "
  "OR model_flops IS NOT NULL OR bytes_accessed IS NOT NULL) ORDER BY device_time_us DESC, name, device LIMIT 10";
static const char zUtilSql[] =
  "SELECT device, busy_us, wall_us, busy_share, mfu_busy, mfu_wall, hbm_util_busy, hbm_util_wall, status, "
  "(SELECT count(*) FROM \"%w\".profsum_utilization AS v WHERE v.trace_id=u.trace_id AND v.device=u.device "
  " AND v.step IS NOT NULL) "
  "FROM \"%w\".profsum_utilization AS u WHERE trace_id=?1 AND step IS NULL AND status<>'reimport_needed' "
  "AND status<>'v1_summary' ORDER BY device";

/* One cell of a report table: column i of the row as text ('t'), the
** op name cut to 80 characters in HTML ('c'), a number scaled by 1/div
** with zFmt ('n'), a percentage ('p'), "yes"/"no" ('y'), or the bound
** with its status iAlt when unknown ('b').  iTitle >= 0: in HTML, the
** cell's tooltip is column iTitle. */
typedef struct XrCol {
  char kind;
  int i, iTitle, iAlt;
  double div;
  const char *zFmt;
} XrCol;

/* One report table: its query (%w: the schema), the markdown heading and
** table head, the HTML head, and the HTML written after the rows (when
** there is a row). */
typedef struct XrTable {
  const char *zSql;
  const char *zMdHead, *zHtmlHead, *zHtmlTail;
  int nCol;
  XrCol aCol[12];
} XrTable;

#define XT(i)        {'t', i, -1, 0, 1.0, 0}
#define XTT(i, t)    {'t', i, t, 0, 1.0, 0}
#define XN(i, d, f)  {'n', i, -1, 0, d, f}
#define XP(i)        {'p', i, -1, 0, 1.0, 0}

static const XrTable xrEnvironment = {
  zEnvSql,
  "\n## profsum: Environment\n\n"
  "What the capture states (profsum_environment).\n\n"
  "| jax | jaxlib | devices | model | session start (UTC) | session s |\n"
  "|---|---|---:|---|---|---:|\n",
  "<section id=\"profsum-environment\"><h2>profsum: Environment</h2>\n"
  "<p>What the capture states (profsum_environment).</p>\n<table>\n"
  "<tr><th>jax</th><th>jaxlib</th><th>devices</th><th>model</th><th>session start (UTC)</th>"
  "<th>session s</th></tr>\n",
  "</table>\n</section>\n",
  6,
  { XT(0), XT(1), XT(3), XT(2), XT(4), XN(5, 1.0, "%.3f") }
};

static const XrTable xrDevices = {
  zDevSql,
  "\n## profsum: Devices\n\n"
  "| device | kind | vendor | model | compute capability | cores | clock GHz | memory GiB | "
  "peak TFLOP/s | peak memory GB/s | peaks from | events |\n"
  "|---|---|---|---|---|---:|---:|---:|---:|---:|---|---|\n",
  "<section id=\"profsum-devices\"><h2>profsum: Devices</h2>\n<table>\n"
  "<tr><th>device</th><th>kind</th><th>vendor</th><th>model</th><th>compute capability</th><th>cores</th>"
  "<th>clock GHz</th><th>memory GiB</th><th>peak TFLOP/s</th><th>peak memory GB/s</th><th>peaks from</th>"
  "<th>events</th></tr>\n",
  "</table>\n</section>\n",
  12,
  { XT(0), XT(1), XT(2), XT(3), XT(4), XT(5), XN(6, 1e9, "%.3f"), XN(7, 1073741824.0, "%.1f"),
    XN(8, 1e12, "%.1f"), XN(9, 1e9, "%.1f"), XT(10), {'y', 11, -1, 0, 1.0, 0} }
};

static const XrTable xrOpProfile = {
  zOpSql,
  "\n## profsum: Op profile\n\n"
  "Device time by HLO op, category and module (names cut to 80 characters; "
  "the full names are in profsum_op_profile).\n\n"
  "| level | name | attribution | module | count | total us | self us | share |\n"
  "|---|---|---|---|---:|---:|---:|---:|\n",
  "<section id=\"profsum-op-profile\"><h2>profsum: Op profile</h2>\n"
  "<p>Device time by HLO op, category and module (names cut to 80 characters: the full name is the tooltip).</p>\n"
  "<table>\n<tr><th>level</th><th>name</th><th>attribution</th><th>module</th><th>count</th>"
  "<th>total us</th><th>self us</th><th>share</th></tr>\n",
  "</table>\n</section>\n",
  8,
  { XT(0), XTT(2, 1), XT(3), XT(4), XT(5), XN(6, 1.0, "%.3f"), XN(7, 1.0, "%.3f"), XP(8) }
};

/* The roofline's HTML section is opened (with its chart) and closed by
** the caller. */
static const XrTable xrRoofline = {
  zRoofSql,
  "\n## profsum: Roofline\n\n"
  "The ops with the most device time (docs/roofline.md; every op in profsum_roofline).\n\n"
  "| op | device | count | device us | FLOPs/byte | TFLOP/s | GB/s | of peak FLOP/s | of peak bandwidth | bound |\n"
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
  "<table>\n<tr><th>op</th><th>device</th><th>count</th><th>device us</th>"
  "<th>FLOPs/byte</th><th>TFLOP/s</th><th>GB/s</th><th>of peak FLOP/s</th><th>of peak bandwidth</th>"
  "<th>bound</th></tr>\n",
  "</table>\n",
  10,
  { {'c', 0, 0, 0, 1.0, 0}, XT(1), XT(2), XN(3, 1.0, "%.3f"), XN(4, 1.0, "%.2f"), XN(5, 1e12, "%.3f"),
    XN(6, 1e9, "%.1f"), XP(7), XP(8), {'b', 9, -1, 10, 1.0, 0} }
};

static const XrTable xrUtilization = {
  zUtilSql,
  "\n## profsum: Utilization\n\n"
  "Over the capture (per step: profsum_utilization).\n\n"
  "| device | busy us | busy share | MFU (busy) | MFU (wall) | HBM (busy) | HBM (wall) | steps | status |\n"
  "|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
  "<section id=\"profsum-utilization\"><h2>profsum: Utilization</h2>\n"
  "<p>Over the capture (per step: profsum_utilization).</p>\n<table>\n<tr><th>device</th><th>busy us</th>"
  "<th>busy share</th><th>MFU (busy)</th><th>MFU (wall)</th><th>HBM (busy)</th><th>HBM (wall)</th>"
  "<th>steps</th><th>status</th></tr>\n",
  "</table>\n</section>\n",
  9,
  { XT(0), XN(1, 1.0, "%.3f"), XP(3), XP(4), XP(5), XP(6), XP(7), XT(9), XT(8) }
};

/* Append column i of pSt as HTML, cut to 80 characters (with an ellipsis)
** when longer; nothing when NULL.  SQLITE_NOMEM when the cut text cannot
** be made. */
static int xrCutHtml(sqlite3_str *s, sqlite3_stmt *pSt, int i){
  const char *z = (const char*)sqlite3_column_text(pSt, i);
  int nC = 0, rc = SQLITE_OK; const char *q;
  for(q=z; q && *q; q++) if( (*q & 0xC0)!=0x80 && ++nC>80 ) break;
  if( q && *q ){
    char *zCut = sqlite3_mprintf("%.*s…", (int)(q-z), z);
    if( zCut==0 ) rc = SQLITE_NOMEM;
    esc(s, zCut);
    sqlite3_free(zCut);
  }else{
    esc(s, z);
  }
  return rc;
}

/* Append one cell c of the row of pSt, as markdown or (isHtml) HTML.
** SQLITE_OK or SQLITE_NOMEM. */
static int xrCell(sqlite3_str *s, sqlite3_stmt *pSt, const XrCol *c, int isHtml){
  switch( c->kind ){
    case 'n': num(s, pSt, c->i, c->div, c->zFmt); break;
    case 'p': pct(s, pSt, c->i); break;
    case 'y': sqlite3_str_appendall(s, sqlite3_column_int(pSt, c->i) ? "yes" : "no"); break;
    case 'c': if( isHtml ) return xrCutHtml(s, pSt, c->i);
              mdText(s, pSt, c->i); break;
    case 'b':
      if( isHtml ){ escCol(s, pSt, sqlite3_column_type(pSt, c->i)==SQLITE_NULL ? c->iAlt : c->i); break; }
      if( sqlite3_column_type(pSt, c->i)==SQLITE_NULL ){
        sqlite3_str_appendall(s, "n/a ("); mdText(s, pSt, c->iAlt); sqlite3_str_appendall(s, ")");
      }else mdText(s, pSt, c->i);
      break;
    default: if( isHtml ) escCol(s, pSt, c->i); else mdText(s, pSt, c->i);
  }
  return SQLITE_OK;
}

/* Write table t of the trace as markdown or (isHtml) HTML: the head
** before the first row, a line per row, the HTML tail after the rows;
** nothing when the query has no row. */
static int xrTable(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut,
                   const XrTable *t, int isHtml){
  sqlite3_stmt *pSt = 0;
  int rc, rs = SQLITE_DONE, n = 0, k;
  rc = xrPrepare(db, zSchema, traceId, t->zSql, &pSt);
  while( rc==SQLITE_OK && (rs = sqlite3_step(pSt))==SQLITE_ROW ){
    if( n++==0 ) sqlite3_str_appendall(pOut, isHtml ? t->zHtmlHead : t->zMdHead);
    for(k=0; k<t->nCol && rc==SQLITE_OK; k++){
      const XrCol *c = &t->aCol[k];
      if( !isHtml ){
        sqlite3_str_appendall(pOut, k ? " | " : "| ");
      }else{
        sqlite3_str_appendall(pOut, k ? "</td><td" : "<tr><td");
        if( c->iTitle>=0 ){
          sqlite3_str_appendall(pOut, " title=\""); escCol(pOut, pSt, c->iTitle);
          sqlite3_str_appendchar(pOut, 1, '"');
        }
        sqlite3_str_appendchar(pOut, 1, '>');
      }
      rc = xrCell(pOut, pSt, c, isHtml);
    }
    sqlite3_str_appendall(pOut, isHtml ? "</td></tr>\n" : " |\n");
  }
  if( rc==SQLITE_OK ) rc = xrDone(pSt, rs); else sqlite3_finalize(pSt);
  if( rc ) return rc;
  if( n && isHtml ) sqlite3_str_appendall(pOut, t->zHtmlTail);
  return SQLITE_OK;
}

/* Chart geometry of the roofline (SVG user units). */
#define RW 640.0
#define RH 360.0
#define RL 70.0
#define RB 40.0

/* The chart's x of intensity v (log10 between lx0 and lx1). */
static double rx(double v, double lx0, double lx1){ return RL + (log10(v)-lx0)/(lx1-lx0)*(RW-RL-20.0); }
/* The chart's y of FLOP/s v (log10 between ly0 and ly1, upwards). */
static double ry(double v, double ly0, double ly1){ return RH - RB - (log10(v)-ly0)/(ly1-ly0)*(RH-RB-20.0); }

/* The roofline chart: the first device with both peaks, its roof, and the
** ops of the table (those with intensity and FLOP rate) as dots. */
static int xrRoofSvg(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  sqlite3_stmt *pSt = 0;
  double aI[XR_TOP], aF[XR_TOP], pf = 0, pb = 0;
  char *azName[XR_TOP];
  int n = 0, rc, rs = SQLITE_DONE, i;
  double lx0, lx1, ly0, ly1, ridge;
  memset(azName, 0, sizeof(azName));
  rc = xrPrepare(db, zSchema, traceId, zRoofSql, &pSt);
  while( rc==SQLITE_OK && n<XR_TOP && (rs = sqlite3_step(pSt))==SQLITE_ROW ){
    double iv = sqlite3_column_double(pSt, 4), fv = sqlite3_column_double(pSt, 5);
    if( sqlite3_column_type(pSt, 12)!=SQLITE_NULL && sqlite3_column_type(pSt, 13)!=SQLITE_NULL && pf==0 ){
      pf = sqlite3_column_double(pSt, 12); pb = sqlite3_column_double(pSt, 13);
    }
    if( sqlite3_column_type(pSt, 4)==SQLITE_NULL || sqlite3_column_type(pSt, 5)==SQLITE_NULL || !(iv>0) || !(fv>0) ) continue;
    aI[n] = iv; aF[n] = fv;
    azName[n] = sqlite3_mprintf("%s", (const char*)sqlite3_column_text(pSt, 0));
    if( azName[n]==0 ){ rc = SQLITE_NOMEM; break; }
    n++;
  }
  if( rc==SQLITE_OK ) rc = xrDone(pSt, rs); else sqlite3_finalize(pSt);
  if( rc || n==0 || !(pf>0) || !(pb>0) ) goto done;
  ridge = pf/pb;
  lx0 = floor(log10(ridge)) - 2; lx1 = ceil(log10(ridge)) + 2;
  ly0 = floor(log10(pf)) - 4; ly1 = ceil(log10(pf)) + 1;
  for(i=0; i<n; i++){
    if( log10(aI[i])<lx0 ) lx0 = floor(log10(aI[i]));
    if( log10(aI[i])>lx1 ) lx1 = ceil(log10(aI[i]));
    if( log10(aF[i])<ly0 ) ly0 = floor(log10(aF[i]));
  }
  profsumStrAppendPy(pOut, "<svg class=\"roofline\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
                     "aria-label=\"roofline: FLOP/s against FLOPs per byte, log scales\">\n", RW, RH);
  profsumStrAppendPy(pOut, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
                     RL, RH-RB, RW-20.0, RH-RB);
  profsumStrAppendPy(pOut, "<line x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", RL, RL, RH-RB);
  {
    /* the roof: bandwidth slope up to the ridge, flat at the peak after */
    double x0 = pow(10.0, lx0), y0 = x0*pb;
    if( y0<pow(10.0, ly0) ){ y0 = pow(10.0, ly0); x0 = y0/pb; }
    profsumStrAppendPy(pOut, "<polyline fill=\"none\" stroke=\"#c33\" stroke-width=\"2\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>\n",
                       rx(x0, lx0, lx1), ry(y0, ly0, ly1), rx(ridge, lx0, lx1), ry(pf, ly0, ly1),
                       rx(pow(10.0, lx1), lx0, lx1), ry(pf, ly0, ly1));
  }
  for(i=0; i<n; i++){
    profsumStrAppendPy(pOut, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#36c\"><title>",
                       rx(aI[i], lx0, lx1), ry(aF[i], ly0, ly1));
    esc(pOut, azName[i]);
    profsumStrAppendPy(pOut, ": %.3g FLOPs/byte, %.3g FLOP/s</title></circle>\n", aI[i], aF[i]);
  }
  profsumStrAppendPy(pOut, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">FLOPs per byte (log, 1e%.0f to 1e%.0f)</text>\n",
                     RL, RH-10.0, lx0, lx1);
  profsumStrAppendPy(pOut, "<text x=\"4\" y=\"14\" font-size=\"12\">FLOP/s (log, 1e%.0f to 1e%.0f); roof: peak %.3g FLOP/s, %.3g bytes/s</text>\n",
                     ly0, ly1, pf, pb);
  sqlite3_str_appendall(pOut, "</svg>\n");
done:
  for(i=0; i<n; i++) sqlite3_free(azName[i]);
  return rc;
}

/* The sections of the trace, as markdown or (isHtml) HTML: the
** environment (when the capture states a version, a device model or its
** session's start),
** devices and op profile, then (only with FLOPs or bytes) the roofline,
** with its chart in HTML, and utilization. */
static int xrReport(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut,
                    int isHtml){
  int rc, hasRoof;
  rc = xrTable(db, zSchema, traceId, pOut, &xrEnvironment, isHtml);
  if( rc==SQLITE_OK ) rc = xrTable(db, zSchema, traceId, pOut, &xrDevices, isHtml);
  if( rc==SQLITE_OK ) rc = xrTable(db, zSchema, traceId, pOut, &xrOpProfile, isHtml);
  if( rc ) return rc;
  hasRoof = xrHas(db, zSchema, traceId, zRoofHas);
  if( hasRoof<0 ) return SQLITE_ERROR;
  if( !hasRoof ) return SQLITE_OK;
  if( isHtml ){
    sqlite3_str_appendall(pOut, "<section id=\"profsum-roofline\"><h2>profsum: Roofline</h2>\n");
    rc = xrRoofSvg(db, zSchema, traceId, pOut);
  }
  if( rc==SQLITE_OK ) rc = xrTable(db, zSchema, traceId, pOut, &xrRoofline, isHtml);
  if( rc ) return rc;
  if( isHtml ) sqlite3_str_appendall(pOut, "</section>\n");
  return xrTable(db, zSchema, traceId, pOut, &xrUtilization, isHtml);
}

/* See insights_int.h. */
int insXlaReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  return xrReport(db, zSchema, traceId, pOut, 0);
}

/* See insights_int.h. */
int insXlaReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  return xrReport(db, zSchema, traceId, pOut, 1);
}
