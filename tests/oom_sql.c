/*
** tests/oom_sql.c — out of memory at every allocation of the SQL calls
** given as arguments (each must give one row of one column): each is run
** once for reference, then again with its 1st, 2nd, ... allocation made to
** fail.  Each run must end in an error or give the reference result byte
** for byte.  Built with AddressSanitizer + UBSan like tests/oom_test.c, so
** a leak or a use after free on an error path fails too.  Used by
** tests/test_xplane_rows.py (the XPlane rows, diagnostics and trim) when
** build/asan/oom_sql exists:
**
**   make build/asan/oom_sql   (built and used by make asan)
**   build/asan/oom_sql [-s STRIDE] SQL...
**
** Prints a line per call, then "N passed, N failed"; exit 1 on any failure.
*/
#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

static sqlite3_mem_methods memDefault;
static long nCall = 0, iFailAt = -1;
static int bArmed = 0;

static void *oomMalloc(int n){
  if( bArmed && ++nCall==iFailAt ) return 0;
  return memDefault.xMalloc(n);
}
static void *oomRealloc(void *p, int n){
  if( bArmed && ++nCall==iFailAt ) return 0;
  return memDefault.xRealloc(p, n);
}

/* Run zSql (one row, one column); its text (malloc'd, "NULL" for NULL) or
** 0 with *pRc the error. */
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
        rc = SQLITE_NOMEM;
      }
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_ERROR;
    }
  }
  if( sqlite3_finalize(p)!=SQLITE_OK && rc==SQLITE_OK ) rc = SQLITE_ERROR;
  if( rc ){ free(z); z = 0; }
  *pRc = rc;
  return z;
}

int main(int argc, char **argv){
  sqlite3 *db = 0;
  sqlite3_mem_methods m;
  char *zErr = 0;
  long stride = 1;
  int i = 1, rc, nPass = 0, nFail = 0;
  if( argc>2 && strcmp(argv[1], "-s")==0 ){ stride = atol(argv[2]); i = 3; }
  if( i>=argc || stride<1 ){
    fprintf(stderr, "usage: oom_sql [-s STRIDE] SQL...\n");
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
    fprintf(stderr, "oom_sql: cannot open a database with profsum: %s\n", zErr ? zErr : "?");
    return 2;
  }
  for(; i<argc; i++){
    const char *zSql = argv[i];
    char *zRef;
    long k, nAll, nErr = 0, nSame = 0, nDiff = 0, firstDiff = 0;
    bArmed = 1;
    nCall = 0;
    iFailAt = -1;
    zRef = runOne(db, zSql, &rc);
    nAll = nCall;
    if( zRef==0 ){
      printf("FAIL %s: %s (without a failure)\n", zSql, sqlite3_errmsg(db));
      nFail++;
      bArmed = 0;
      continue;
    }
    for(k=1; k<=nAll; k+=stride){
      char *z;
      nCall = 0;
      iFailAt = k;
      z = runOne(db, zSql, &rc);
      if( z==0 ) nErr++;
      else if( strcmp(z, zRef)==0 ) nSame++;
      else{ nDiff++; if( firstDiff==0 ) firstDiff = k; }
      free(z);
    }
    bArmed = 0;
    iFailAt = -1;
    if( nDiff==0 ){
      printf("ok   %s: %ld allocations, %ld errors, %ld same results\n", zSql, nAll, nErr, nSame);
      nPass++;
    }else{
      printf("FAIL %s: %ld of %ld failed allocations gave another result (first: allocation %ld)\n",
             zSql, nDiff, nAll, firstDiff);
      nFail++;
    }
    free(zRef);
  }
  sqlite3_close(db);
  sqlite3_shutdown();
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
