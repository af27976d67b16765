/*
** report_util.c — the helpers of report_util.h, shared by the report
** writers (report.c's neighbours report_html.c and report_profsum.c,
** summary_doc.c's KPI section, the insights' report sections).
*/
#include "profsum_int.h"
#include "report_util.h"
#include "nearfmt.h"
#include "doc_int.h"

#include <stdlib.h>
#include <string.h>

/* See report_util.h. */
void profsumHtmlEsc(sqlite3_str *s, const char *z, int n){
  const char *zEnd;
  if( z==0 ) return;
  zEnd = z + (n<0 ? (int)strlen(z) : n);
  for(; z<zEnd; z++){
    switch( *z ){
      case '<': sqlite3_str_appendall(s, "&lt;"); break;
      case '>': sqlite3_str_appendall(s, "&gt;"); break;
      case '&': sqlite3_str_appendall(s, "&amp;"); break;
      case '"': sqlite3_str_appendall(s, "&quot;"); break;
      default:
        /* a control character other than tab, newline and carriage
        ** return is not allowed in HTML text (nor a character reference
        ** to it): U+FFFD shows where it was */
        if( ((unsigned char)*z<0x20 && *z!='\t' && *z!='\n' && *z!='\r') || *z==0x7f ){
          sqlite3_str_appendall(s, "\xef\xbf\xbd");
        }else{
          sqlite3_str_appendchar(s, 1, *z);
        }
    }
  }
}

/* See report_util.h. */
void profsumMdEsc(sqlite3_str *s, const char *z, int n){
  const char *zEnd;
  if( z==0 ) return;
  zEnd = z + (n<0 ? (int)strlen(z) : n);
  for(; z<zEnd; z++){
    if( *z=='|' ) sqlite3_str_appendall(s, "\\|");
    else if( *z=='\n' || *z=='\r' ) sqlite3_str_appendchar(s, 1, ' ');
    else sqlite3_str_appendchar(s, 1, *z);
  }
}

/* See report_util.h.  A reference rationale such as "312.1% of total
** profiled exclusive duration" is no share of anything above 100. */
double profsumMaxPct(const char *z){
  double mx = 0;
  const char *p;
  for(p=z; p && *p; p++){
    if( *p=='%' && p>z && p[-1]>='0' && p[-1]<='9' ){
      const char *b = p;
      while( b>z && ((b[-1]>='0' && b[-1]<='9') || b[-1]=='.') ) b--;
      {
        double v = atof(b);
        if( v>mx ) mx = v;
      }
    }
  }
  return mx;
}

/* See report_util.h. */
int profsumKpiTableMd(sqlite3 *db, const char *zSchema, sqlite3_int64 id, sqlite3_str *s, char **pzErr){
  sqlite3_stmt *p = 0;
  char *zSql = sqlite3_mprintf("SELECT kind, kpi, device, value, unit, band, explanation "
                               "FROM \"%w\".profsum_kpis WHERE trace_id=?1", zSchema);
  int n = 0, rc;
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc!=SQLITE_OK ){
    if( profsumDocNoSuchTable(db, rc) ) return SQLITE_OK;   /* an older database without the view */
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;                       /* a lock, I/O: an error, not a report without KPIs */
  }
  sqlite3_bind_int64(p, 1, id);
  while( sqlite3_step(p)==SQLITE_ROW ){
    const char *azCol[7];
    int c;
    rc = SQLITE_OK;
    for(c=0; c<7; c++) azCol[c] = profsumColText(p, c, &rc);
    if( rc ) break;
    if( n++==0 ){
      sqlite3_str_appendall(s, "\n## KPIs\n| Kind | KPI | Device | Value | Unit | Band | Explanation |\n"
                               "|---|---|---|---:|---|---|---|\n");
    }
    /* every text cell escaped: a device or op name may hold '|' or a newline */
    for(c=0; c<7; c++){
      sqlite3_str_appendall(s, "| ");
      if( c==3 && sqlite3_column_type(p, 3)==SQLITE_NULL ) sqlite3_str_appendall(s, "n/a");
      else if( c==3 ) profsumKpiValue(s, sqlite3_column_double(p, 3), azCol[4]);
      else profsumMdEsc(s, c==2 && azCol[2]==0 ? "all" : azCol[c], -1);
      sqlite3_str_appendall(s, " ");
    }
    sqlite3_str_appendall(s, "|\n");
  }
  return profsumFinishRows(db, p, rc, pzErr);
}

/* See report_util.h. */
void profsumKpiValue(sqlite3_str *s, double v, const char *zUnit){
  double step = 0.0;
  if( zUnit && strcmp(zUnit, "fraction")==0 ) step = 0.01;
  else if( zUnit && strcmp(zUnit, "ms")==0 ) step = 0.1;
  else if( zUnit && strcmp(zUnit, "s")==0 ) step = 1.0;
  profsumStrAppendNearG(s, v, 4, step);
}

/* See report_util.h. */
void profsumAdviceStake(sqlite3_str *s, sqlite3_stmt *p, int iShare, const char *zSep, const char *zUnit){
  int bShare = sqlite3_column_type(p, iShare)!=SQLITE_NULL;
  if( bShare ){
    /* written as the titles write shares: never as a threshold it is not */
    sqlite3_str_appendf(s, "%sat stake: ", zSep);
    profsumStrAppendNear(s, 100.0*sqlite3_column_double(p, iShare), 1, 5);
    sqlite3_str_appendall(s, "% of step wall time");
  }
  if( sqlite3_column_type(p, iShare+1)!=SQLITE_NULL ){
    sqlite3_str_appendall(s, bShare ? ", " : zSep);
    if( !bShare ) sqlite3_str_appendall(s, "at stake: ");
    profsumStrAppendPy(s, "%.3f %s", sqlite3_column_double(p, iShare+1), zUnit);
  }
}

/* See report_util.h. */
const char profsumSqlStepWallSplit[] =
  "WITH w AS (SELECT * FROM \"%w\".profsum_step_wall WHERE trace_id=?1), "
  "k AS (SELECT min(is_warmup) AS only FROM w), "
  "x AS (SELECT "
#define OVERLAP_PS(part) \
  "coalesce(sum(CASE name WHEN 'step_overlap_" part "' THEN CAST(round(value * 1e6) AS INTEGER) END), 0)"
  OVERLAP_PS("wall") " AS wall, " OVERLAP_PS("compute") " AS comp, " OVERLAP_PS("collective") " AS coll, "
  OVERLAP_PS("transfer") " AS xfer, " OVERLAP_PS("idle") " AS idle "
#undef OVERLAP_PS
  "FROM \"%w\".profsum_agg_fact WHERE trace_id=?1 AND name IN ('step_overlap_wall', "
  "'step_overlap_compute', 'step_overlap_collective', 'step_overlap_transfer', 'step_overlap_idle')) "
  "SELECT count(DISTINCT step), count(DISTINCT device), sum(CAST(round(wall_us * 1e6) AS INTEGER)) - max(x.wall), "
  "sum(CAST(round(compute_us * 1e6) AS INTEGER)) - max(x.comp), "
  "sum(CAST(round(collective_us * 1e6) AS INTEGER)) - max(x.coll), "
  "sum(CAST(round(transfer_us * 1e6) AS INTEGER)) - max(x.xfer), "
  "sum(CAST(round(idle_us * 1e6) AS INTEGER)) - max(x.idle), max(k.only) "
  "FROM w, k, x WHERE w.is_warmup = k.only";

/* See report_util.h. */
const char profsumSqlStepWallMedian[] =
  "WITH w AS (SELECT * FROM \"%w\".profsum_step_wall WHERE trace_id=?1), "
  "k AS (SELECT min(is_warmup) AS only FROM w), "
  "v AS (SELECT wall_us FROM w, k WHERE w.is_warmup = k.only ORDER BY wall_us) "
  "SELECT avg(wall_us) FROM (SELECT wall_us FROM v LIMIT 2 - (SELECT count(*) FROM v) %% 2 "
  "OFFSET ((SELECT count(*) FROM v) - 1) / 2)";
