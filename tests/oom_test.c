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
#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

static sqlite3_mem_methods memDefault;
static long nCall = 0, iFailAt = -1;
static int bArmed = 0, nInjected = 0;

static void *oomMalloc(int n){
  if( bArmed && ++nCall==iFailAt ){ nInjected++; return 0; }
  return memDefault.xMalloc(n);
}
static void *oomRealloc(void *p, int n){
  if( bArmed && ++nCall==iFailAt ){ nInjected++; return 0; }
  return memDefault.xRealloc(p, n);
}

/* Run zSql (one row, one column expected); its text (malloc'd, "NULL" for
** NULL) or 0 with *pRc the error. */
static char *runOne(sqlite3 *db, const char *zSql, int *pRc){
  sqlite3_stmt *p = 0;
  char *z = 0;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW ){
      const char *t = (const char*)sqlite3_column_text(p, 0);
      if( t || sqlite3_column_type(p, 0)==SQLITE_NULL ){
        z = strdup(t ? t : "NULL");
        rc = z ? SQLITE_OK : SQLITE_NOMEM;
      }else{
        rc = SQLITE_NOMEM;              /* the text conversion itself */
      }
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_ERROR;                /* no row: not what these calls do */
    }
  }
  if( sqlite3_finalize(p)!=SQLITE_OK && rc==SQLITE_OK ) rc = SQLITE_ERROR;
  if( rc ){ free(z); z = 0; }
  *pRc = rc;
  return z;
}

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
  sqlite3_mem_methods m;
  char *zErr = 0, zSql[4096];
  long stride = argc>3 ? atol(argv[3]) : 1;
  int i, rc, nPass = 0, nFail = 0;

  if( argc<3 || stride<1 ){
    fprintf(stderr, "usage: oom_test TRACE_A TRACE_B [STRIDE]\n");
    return 2;
  }
  setvbuf(stdout, 0, _IOLBF, 0);
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memDefault);
  m = memDefault;
  m.xMalloc = oomMalloc;
  m.xRealloc = oomRealloc;
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK || sqlite3_profsum_init(db, &zErr, 0)!=SQLITE_OK ){
    fprintf(stderr, "oom_test: cannot open a database with profsum: %s\n", zErr ? zErr : "?");
    return 2;
  }
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
    char *zRef;
    long k, nAll, nErr = 0, nSame = 0, nDiff = 0, firstDiff = 0;
    bArmed = 1;
    nCall = 0;
    iFailAt = -1;
    zRef = runOne(db, azCall[i], &rc);
    nAll = nCall;
    if( zRef==0 ){
      printf("FAIL %s: %s (without a failure)\n", azCall[i], sqlite3_errmsg(db));
      nFail++;
      bArmed = 0;
      continue;
    }
    for(k=1; k<=nAll; k+=stride){
      char *z;
      nCall = 0;
      iFailAt = k;
      nInjected = 0;
      z = runOne(db, azCall[i], &rc);
      if( z==0 ) nErr++;
      else if( strcmp(z, zRef)==0 ) nSame++;
      else{ nDiff++; if( firstDiff==0 ) firstDiff = k; }
      free(z);
    }
    bArmed = 0;
    iFailAt = -1;
    if( nDiff==0 ){
      printf("ok   %s: %ld allocations, %ld errors, %ld same results\n", azCall[i], nAll, nErr, nSame);
      nPass++;
    }else{
      printf("FAIL %s: %ld of %ld failed allocations gave another result (first: allocation %ld)\n",
             azCall[i], nDiff, nAll, firstDiff);
      nFail++;
    }
    free(zRef);
  }
  sqlite3_close(db);
  sqlite3_shutdown();
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
