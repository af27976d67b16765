/*
** insights_mem_report.c — the report sections of the InsMem collector,
** read back from its tables: "## profsum: Memory" and "## profsum:
** Kernels" in markdown, <section> elements in HTML (the memory curve of
** each allocator drawn from its timeline as an inline SVG).  A section is
** written only when its data exists: an allocator with status 'ok', a
** kernel row.  A database whose tables predate these sections gets none.
*/
#include "insights_mem_int.h"
#include "report_util.h"
#include "nearfmt.h"
#include "utf8cut.h"

#include <string.h>


/* Prepare zFmt (%w: the schema) or return 0 (a missing table: no section). */
static sqlite3_stmt *rPrep(sqlite3 *db, const char *zSchema, const char *zFmt, sqlite3_int64 traceId, int *pRc){
  sqlite3_stmt *q = 0;
  char *z = sqlite3_mprintf(zFmt, zSchema);
  int rc;
  if( z==0 ){ *pRc = SQLITE_NOMEM; return 0; }
  rc = sqlite3_prepare_v2(db, z, -1, &q, 0);
  sqlite3_free(z);
  if( rc==SQLITE_NOMEM ) *pRc = rc;
  if( rc ){ sqlite3_finalize(q); return 0; }
  sqlite3_bind_int64(q, 1, traceId);
  return q;
}

/* Long kernel names (C++ templates) are cut to this many bytes in a
** report, whole UTF-8 characters, with "…". */
#define REPORT_MAX_NAME 120

/* The length of z, cut to REPORT_MAX_NAME bytes of whole characters when
** bCut (*pbCut set when it was cut). */
static int cutLen(const char *z, int bCut, int *pbCut){
  int n = (int)strlen(z);
  *pbCut = 0;
  if( !bCut || n<=REPORT_MAX_NAME ) return n;
  n = (int)profsumUtf8Cut(z, n, REPORT_MAX_NAME);
  *pbCut = 1;
  return n;
}

/* Markdown text of column i: '|' and newlines made harmless; "—" for NULL;
** cut when bLong (a kernel name). */
static void mdCellCut(sqlite3_str *s, sqlite3_stmt *q, int i, int bLong){
  const unsigned char *z = sqlite3_column_text(q, i), *zEnd;
  int bCut;
  if( z==0 ){ sqlite3_str_appendall(s, "—"); return; }
  zEnd = z + cutLen((const char*)z, bLong, &bCut);
  profsumMdEsc(s, (const char*)z, (int)(zEnd-z));
  if( bCut ) sqlite3_str_appendall(s, "…");
}

/* mdCellCut, never cut. */
static void mdCell(sqlite3_str *s, sqlite3_stmt *q, int i){ mdCellCut(s, q, i, 0); }

/* HTML-escaped text (cut when bLong). */
static void hEscCut(sqlite3_str *s, const char *z, int bLong){
  const char *zEnd;
  int bCut;
  if( z==0 ) return;
  zEnd = z + cutLen(z, bLong, &bCut);
  profsumHtmlEsc(s, z, (int)(zEnd-z));
  if( bCut ) sqlite3_str_appendall(s, "…");
}

/* hEscCut, never cut. */
static void hEsc(sqlite3_str *s, const char *z){ hEscCut(s, z, 0); }

/* Bytes as "N (x.xx GiB)", "—" for NULL. */
static void bytesCell(sqlite3_str *s, sqlite3_stmt *q, int i){
  if( sqlite3_column_type(q, i)==SQLITE_NULL ){ sqlite3_str_appendall(s, "—"); return; }
  sqlite3_str_appendf(s, "%lld (", (long long)sqlite3_column_int64(q, i));
  profsumStrAppendPy(s, "%.2f GiB)", (double)sqlite3_column_int64(q, i) / 1073741824.0);
}

/* The memory rows of a trace: allocator 0, device 1, peak 2, share 3,
** peak_ts 4, step 5, lifetime 6, allocations 7, deallocations 8, top
** holder bytes 9, its tf_op 10, note 11. */
static const char *const zMemSql =
  "SELECT allocator, device, peak_bytes, "
  "  CASE WHEN device_memory_bytes > 0 THEN CAST(peak_bytes AS REAL) / device_memory_bytes END, "
  "  peak_ts_us, peak_step, lifetime_peak_bytes, num_allocations, num_deallocations, "
  "  json_extract(top_holders, '$[0].bytes'), json_extract(top_holders, '$[0].tf_op'), note "
  "FROM \"%w\".profsum_agg_memory WHERE trace_id=?1 AND status='ok' ORDER BY allocator";

static const char *const zKernSql =
  "SELECT kernel_name, hlo_op, block_dim, grid_dim, registers_per_thread, occupancy_pct, "
  "  occurrences, total_duration_us, total_duration_us / occurrences "
  "FROM \"%w\".profsum_agg_kernel WHERE trace_id=?1 "
  "ORDER BY total_duration_us DESC, kernel_name, hlo_op LIMIT 10";

/* Step q (zKernSql; 0: no table) to its end, appending each row to s as
** a row of a table, markdown or (bHtml) HTML, with zHead before the
** first: occupancy with one decimal, durations with three, the kernel
** name cut, "—" for NULL.  Returns the number of rows. */
static int kernRows(sqlite3_str *s, sqlite3_stmt *q, int bHtml, const char *zHead){
  static const char *const azMd[4] = {"|", " ", " |", "\n"};
  static const char *const azHtml[4] = {"<tr>", "<td>", "</td>", "</tr>\n"};
  const char *const *az = bHtml ? azHtml : azMd;   /* row open, cell open, cell close, row close */
  int n = 0, i;
  while( q && sqlite3_step(q)==SQLITE_ROW ){
    if( n++==0 ) sqlite3_str_appendall(s, zHead);
    sqlite3_str_appendall(s, az[0]);
    for(i=0; i<9; i++){
      sqlite3_str_appendall(s, az[1]);
      if( sqlite3_column_type(q, i)==SQLITE_NULL ) sqlite3_str_appendall(s, "—");
      else if( i==5 || i>=7 ) profsumStrAppendPy(s, i==5 ? "%.1f" : "%.3f", sqlite3_column_double(q, i));
      else if( bHtml ) hEscCut(s, (const char*)sqlite3_column_text(q, i), i==0);
      else mdCellCut(s, q, i, i==0);
      sqlite3_str_appendall(s, az[2]);
    }
    sqlite3_str_appendall(s, az[3]);
  }
  return n;
}

/* See insights_mem_int.h. */
int memReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  int rc = SQLITE_OK, n = 0;
  sqlite3_stmt *q = rPrep(db, zSchema, zMemSql, traceId, &rc);
  while( q && sqlite3_step(q)==SQLITE_ROW ){
    if( n++==0 ){
      sqlite3_str_appendall(pOut, "\n## profsum: Memory\n\n"
          "| allocator | device | peak bytes | share of device memory | peak at (µs) | step | lifetime peak | "
          "allocations | deallocations | largest holder |\n|---|---|---|---|---|---|---|---|---|---|\n");
    }
    sqlite3_str_appendall(pOut, "| ");
    mdCell(pOut, q, 0); sqlite3_str_appendall(pOut, " | ");
    mdCell(pOut, q, 1); sqlite3_str_appendall(pOut, " | ");
    bytesCell(pOut, q, 2); sqlite3_str_appendall(pOut, " | ");
    if( sqlite3_column_type(q, 3)==SQLITE_NULL ) sqlite3_str_appendall(pOut, "—");
    else{
      /* as the memory_peak KPI writes it: never as a band's threshold */
      profsumStrAppendNear(pOut, sqlite3_column_double(q, 3)*100.0, 2, 5);
      sqlite3_str_appendall(pOut, "%");
    }
    sqlite3_str_appendall(pOut, " | ");
    profsumStrAppendPy(pOut, "%.3f", sqlite3_column_double(q, 4));
    sqlite3_str_appendall(pOut, " | ");
    mdCell(pOut, q, 5); sqlite3_str_appendall(pOut, " | ");
    bytesCell(pOut, q, 6); sqlite3_str_appendall(pOut, " | ");
    mdCell(pOut, q, 7); sqlite3_str_appendall(pOut, " | ");
    mdCell(pOut, q, 8); sqlite3_str_appendall(pOut, " | ");
    if( sqlite3_column_type(q, 9)==SQLITE_NULL ) sqlite3_str_appendall(pOut, "—");
    else{
      sqlite3_str_appendf(pOut, "%lld B", (long long)sqlite3_column_int64(q, 9));
      if( sqlite3_column_type(q, 10)!=SQLITE_NULL ){
        sqlite3_str_appendall(pOut, " (");
        mdCell(pOut, q, 10);
        sqlite3_str_appendall(pOut, ")");
      }
    }
    sqlite3_str_appendall(pOut, " |\n");
  }
  if( n ){
    sqlite3_reset(q);
    sqlite3_str_appendall(pOut, "\n");
    while( sqlite3_step(q)==SQLITE_ROW ){
      if( sqlite3_column_type(q, 11)==SQLITE_NULL ) continue;
      sqlite3_str_appendall(pOut, "- ");
      mdCell(pOut, q, 0);
      sqlite3_str_appendall(pOut, ": ");
      mdCell(pOut, q, 11);
      sqlite3_str_appendall(pOut, "\n");
    }
  }
  sqlite3_finalize(q);
  q = rPrep(db, zSchema, zKernSql, traceId, &rc);
  kernRows(pOut, q, 0, "\n## profsum: Kernels\n\n"
      "| kernel | hlo_op | block | grid | registers | occupancy % | occurrences | total (µs) | avg (µs) |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  sqlite3_finalize(q);
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pOut);
  return rc;
}

/* The SVG curve of allocator zAlloc's timeline (max bytes in use per
** bucket): 600 x 160, y from 0 to the largest value. */
static int svgCurve(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, const char *zAlloc,
                    sqlite3_str *pOut){
  int rc = SQLITE_OK, first = 1, nPt = 0;
  double yLast = 160.0;
  sqlite3_stmt *q = rPrep(db, zSchema,
      "SELECT ts_us, max_bytes_in_use, min(ts_us) OVER (), max(ts_us) OVER (), max(max_bytes_in_use) OVER () "
      "FROM \"%w\".profsum_agg_memory_timeline WHERE trace_id=?1 AND allocator=?2 ORDER BY bucket",
      traceId, &rc);
  if( q==0 ) return rc;
  sqlite3_bind_text(q, 2, zAlloc, -1, SQLITE_STATIC);
  while( sqlite3_step(q)==SQLITE_ROW ){
    double t = sqlite3_column_double(q, 0), t0 = sqlite3_column_double(q, 2), t1 = sqlite3_column_double(q, 3);
    double v = sqlite3_column_double(q, 1), vMax = sqlite3_column_double(q, 4);
    double x = t1>t0 ? 600.0*(t-t0)/(t1-t0) : 0.0;
    double y = vMax>0 ? 160.0 - 150.0*v/vMax : 160.0;
    if( first ){
      sqlite3_str_appendall(pOut, "<svg class=\"profsum-memory-curve\" width=\"600\" height=\"160\" "
          "viewBox=\"0 0 600 160\" role=\"img\"><title>bytes in use over time (max per interval)</title>"
          "<polyline fill=\"none\" stroke=\"#2563eb\" stroke-width=\"1.5\" points=\"");
      first = 0;
    }else{
      sqlite3_str_appendchar(pOut, 1, ' ');
    }
    profsumStrAppendPy(pOut, "%.1f,", x);
    profsumStrAppendPy(pOut, "%.1f", y);
    yLast = y;
    nPt++;
  }
  if( nPt==1 ) profsumStrAppendPy(pOut, " 600.0,%.1f", yLast);   /* one bucket: a flat line */
  if( !first ) sqlite3_str_appendall(pOut, "\"/></svg>\n");
  sqlite3_finalize(q);
  return rc;
}

/* See insights_mem_int.h. */
int memReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut){
  int rc = SQLITE_OK, n = 0;
  sqlite3_stmt *q = rPrep(db, zSchema, zMemSql, traceId, &rc);
  while( rc==SQLITE_OK && q && sqlite3_step(q)==SQLITE_ROW ){
    const char *zAlloc = (const char*)sqlite3_column_text(q, 0);
    if( n++==0 ) sqlite3_str_appendall(pOut, "<section id=\"profsum-memory\" class=\"profsum-memory\">\n<h2>profsum: Memory</h2>\n");
    sqlite3_str_appendall(pOut, "<h3>");
    hEsc(pOut, zAlloc);
    if( sqlite3_column_type(q, 1)!=SQLITE_NULL ){
      sqlite3_str_appendall(pOut, " (");
      hEsc(pOut, (const char*)sqlite3_column_text(q, 1));
      sqlite3_str_appendall(pOut, ")");
    }
    sqlite3_str_appendf(pOut, "</h3>\n<p>peak %lld bytes", (long long)sqlite3_column_int64(q, 2));
    if( sqlite3_column_type(q, 3)!=SQLITE_NULL ){
      sqlite3_str_appendall(pOut, " (");
      profsumStrAppendNear(pOut, sqlite3_column_double(q, 3)*100.0, 2, 5);
      sqlite3_str_appendall(pOut, "% of device memory)");
    }
    profsumStrAppendPy(pOut, " at %.3f µs", sqlite3_column_double(q, 4));
    if( sqlite3_column_type(q, 5)!=SQLITE_NULL ){
      sqlite3_str_appendf(pOut, ", step %lld", (long long)sqlite3_column_int64(q, 5));
    }
    sqlite3_str_appendf(pOut, "; %lld allocations, %lld deallocations</p>\n",
                        (long long)sqlite3_column_int64(q, 7), (long long)sqlite3_column_int64(q, 8));
    if( sqlite3_column_type(q, 11)!=SQLITE_NULL ){
      sqlite3_str_appendall(pOut, "<p>");
      hEsc(pOut, (const char*)sqlite3_column_text(q, 11));
      sqlite3_str_appendall(pOut, "</p>\n");
    }
    rc = svgCurve(db, zSchema, traceId, zAlloc, pOut);
  }
  if( n ) sqlite3_str_appendall(pOut, "</section>\n");
  sqlite3_finalize(q);
  q = rc==SQLITE_OK ? rPrep(db, zSchema, zKernSql, traceId, &rc) : 0;
  if( kernRows(pOut, q, 1, "<section id=\"profsum-kernels\" class=\"profsum-kernels\">\n<h2>profsum: Kernels</h2>\n<table>\n"
        "<tr><th>kernel</th><th>hlo_op</th><th>block</th><th>grid</th><th>registers</th>"
        "<th>occupancy %</th><th>occurrences</th><th>total (µs)</th><th>avg (µs)</th></tr>\n") ){
    sqlite3_str_appendall(pOut, "</table>\n</section>\n");
  }
  sqlite3_finalize(q);
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pOut);
  return rc;
}
