/*
** tests/oom_test.c — out of memory at every allocation of the reading
** functions: each SQL call below is run once for reference, then again
** with its 1st, 2nd, ... allocation made to fail (SQLite's allocator
** replaced, lookaside off).  Each run must end in an error or give the
** reference result byte for byte: a result that differs would be a report
** or a document that looks whole but lost rows.  Built with the extension
** compiled in and AddressSanitizer + UBSan (`make asan`, through
** tests/oom_check.py, which writes the two traces), so a leak or a use
** after free on an error path fails too.  The calls: the summary (with the
** import's knobs and others), the Markdown report (with the KPI table), a
** compare, a question, the HTML report and the JSON pretty-printer.  Not
** profsum_history_summary_json: it selects the records with SQLite's
** json_valid(), which in SQLite 3.40 answers 0 when it runs out of memory,
** so a record can drop out of its counts without an error.
**
**   build/asan/oom_test TRACE_A TRACE_B [STRIDE]
**
** STRIDE (default 1) tries every STRIDE-th allocation.  Prints a line per
** SQL call, then "N passed, N failed"; exit 1 on any failure.
*/
#include "oom_common.h"

int main(int argc, char **argv){
  static const char *azCall[] = {
    "SELECT profsum_summary_json('a')",
    "SELECT profsum_summary_json('b', '{\"hot_op_limit\": 2, \"warmup_steps\": 1}')",
    "SELECT profsum_report_md('a', 3)",
    "SELECT profsum_report_md('b', 2, '{\"kpis\": true}')",
    "SELECT profsum_compare_json('a', 'b')",
    "SELECT profsum_query_json('a', 'which ops take the most time?')",
    "SELECT profsum_report_html('a')",
    "SELECT profsum_json_pretty('{\"b\": [1, 2.5, \"x\\u00e9\"], \"a\": {\"c\": null}}')",
  };
  sqlite3 *db = 0;
  char zSql[4096];
  long stride = argc>3 ? atol(argv[3]) : 1;
  int i, rc, nPass = 0, nFail = 0;

  if( argc<3 || stride<1 ){
    fprintf(stderr, "usage: oom_test TRACE_A TRACE_B [STRIDE]\n");
    return 2;
  }
  if( oomOpen("oom_test", &db) ) return 2;
  for(i=0; i<2; i++){
    char *zOut;
    sqlite3_snprintf(sizeof(zSql), zSql, "SELECT profsum_import(%Q, %Q)", argv[1+i], i ? "b" : "a");
    zOut = runOne(db, zSql, &rc);
    if( zOut==0 ){
      fprintf(stderr, "oom_test: %s: %s\n", zSql, sqlite3_errmsg(db));
      return 2;
    }
    free(zOut);
  }
  for(i=0; i<(int)(sizeof(azCall)/sizeof(azCall[0])); i++){
    if( oomCheckCall(db, azCall[i], stride) ) nPass++; else nFail++;
  }
  return oomFinish(db, nPass, nFail);
}
