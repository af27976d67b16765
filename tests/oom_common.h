/*
** tests/oom_common.h — the out-of-memory driver shared by tests/oom_test.c
** and tests/oom_sql.c (included by both; not a separate object, so the
** Makefile's one-source rules stay as they are).
**
** SQLite's allocator is replaced (lookaside off) by one that fails its
** iFailAt-th call while armed.  oomCheckCall() runs one SQL call once for
** reference, then again with its 1st, 2nd, ... allocation failing: each
** run must end in an error or give the reference result byte for byte.
*/
#ifndef PROFSUM_OOM_COMMON_H
#define PROFSUM_OOM_COMMON_H

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

/* Install the failing allocator and open an in-memory database with
** profsum registered into *pDb.  0, or 2 with a message on stderr naming
** zProg. */
static int oomOpen(const char *zProg, sqlite3 **pDb){
  sqlite3_mem_methods m;
  char *zErr = 0;
  setvbuf(stdout, 0, _IOLBF, 0);
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memDefault);
  m = memDefault;
  m.xMalloc = oomMalloc;
  m.xRealloc = oomRealloc;
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
  if( sqlite3_open(":memory:", pDb)!=SQLITE_OK || sqlite3_profsum_init(*pDb, &zErr, 0)!=SQLITE_OK ){
    fprintf(stderr, "%s: cannot open a database with profsum: %s\n", zProg, zErr ? zErr : "?");
    return 2;
  }
  return 0;
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

/* Failure points swept per call at most: a call with more allocations is
** swept at every (nAll / OOM_MAX_POINTS)-th one (each point runs the whole
** call again, so a full sweep grows with the square of its allocations). */
#define OOM_MAX_POINTS 3000

/* Run zSql for reference, then with every stride-th allocation failing
** (a wider stride for a call of more than OOM_MAX_POINTS allocations);
** print "ok ..." or "FAIL ..." and return 1 when it passed, else 0. */
static int oomCheckCall(sqlite3 *db, const char *zSql, long stride){
  char *zRef;
  long k, nAll, nErr = 0, nSame = 0, nDiff = 0, firstDiff = 0;
  int rc;
  bArmed = 1;
  nCall = 0;
  iFailAt = -1;
  zRef = runOne(db, zSql, &rc);
  nAll = nCall;
  if( zRef==0 ){
    printf("FAIL %s: %s (without a failure)\n", zSql, sqlite3_errmsg(db));
    bArmed = 0;
    return 0;
  }
  if( nAll/stride > OOM_MAX_POINTS ) stride = (nAll + OOM_MAX_POINTS - 1)/OOM_MAX_POINTS;
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
  free(zRef);
  if( nDiff==0 ){
    printf("ok   %s: %ld allocations, %ld errors, %ld same results%s\n", zSql, nAll, nErr, nSame,
           stride>1 ? " (every few allocations: see OOM_MAX_POINTS)" : "");
    return 1;
  }
  printf("FAIL %s: %ld of %ld failed allocations gave another result (first: allocation %ld)\n",
         zSql, nDiff, nAll, firstDiff);
  return 0;
}

/* Close, shut down, print the totals; the exit status. */
static int oomFinish(sqlite3 *db, int nPass, int nFail){
  sqlite3_close(db);
  sqlite3_shutdown();
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}

#endif /* PROFSUM_OOM_COMMON_H */
