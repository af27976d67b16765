/*
** tests/history_oom.c — out of memory at every allocation of one
** profsum_history_import call: the call is run once for reference, then
** again with its 1st, 2nd, ... allocation made to fail (SQLite's allocator
** replaced, lookaside off).  Each run must either give the reference count
** or fail with a message that names the function and the file
** ("profsum_history_import: 'PATH': ..."), and must leave no record behind.
** Built and run by tests/test_history_hostile.py; loads the extension as a
** host would (sqlite3_load_extension), so the ASan build runs it too when
** its runtime is preloaded.
**
**   history_oom EXTENSION HISTORY.jsonl [STRIDE]
**
** STRIDE (default 1) tries every STRIDE-th allocation.  Prints one line
** per failed check and "runs N, failed N, injected N"; exit 1 on any
** failure, 2 on a usage or setup error.
*/
#define _GNU_SOURCE
#include <sqlite3.h>

#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sqlite3_mem_methods memDefault;
static long nCall = 0, iFailAt = -1;
static int bArmed = 0, nInjected = 0;
static void *pExtBase = 0;          /* where the extension is mapped */
static char zCaller[128];           /* the SQLite function the extension called */

/* At an injected failure: note in zCaller the SQLite function the
** extension called (the frame just below the first frame of the
** extension), "" when the extension is not on the stack. */
static void noteCaller(void){
  void *a[128];
  int n = backtrace(a, 128), i;
  zCaller[0] = 0;
  for(i=2; i<n; i++){
    Dl_info d, c;
    if( dladdr(a[i], &d) && d.dli_fbase==pExtBase ){
      if( dladdr(a[i-1], &c) && c.dli_sname ) snprintf(zCaller, sizeof(zCaller), "%s", c.dli_sname);
      else snprintf(zCaller, sizeof(zCaller), "?");
      return;
    }
  }
}

static void *oomMalloc(int n){
  if( bArmed && ++nCall==iFailAt ){ nInjected++; noteCaller(); return 0; }
  return memDefault.xMalloc(n);
}
static void *oomRealloc(void *p, int n){
  if( bArmed && ++nCall==iFailAt ){ nInjected++; noteCaller(); return 0; }
  return memDefault.xRealloc(p, n);
}

/* Is zName (the SQLite function the extension called) one that only
** allocates for the extension: sqlite3_malloc64() and its kin, the
** printf and sqlite3_str functions (they allocate without the connection,
** so a failure there leaves it unmarked)?  Allocations inside SQLite's
** statement machinery (prepare, step, exec) mark the connection instead:
** SQLite then ends the calling statement with its own "out of memory" and
** takes no message from the function. */
static int isOwnAlloc(const char *zName){
  static const char *az[] = {"sqlite3_malloc", "sqlite3_malloc64", "sqlite3_realloc",
    "sqlite3_realloc64", "sqlite3Malloc", "sqlite3Realloc", "sqlite3_mprintf", "sqlite3_vmprintf"};
  size_t i;
  for(i=0; i<sizeof(az)/sizeof(az[0]); i++) if( strcmp(zName, az[i])==0 ) return 1;
  return strncmp(zName, "sqlite3_str_", 12)==0;
}

/* Number of records in the history (-1 on error). */
static long long nRecords(sqlite3 *db){
  sqlite3_stmt *p = 0;
  long long n = -1;
  if( sqlite3_prepare_v2(db, "SELECT count(*) FROM profsum_history_record", -1, &p, 0)==SQLITE_OK
      && sqlite3_step(p)==SQLITE_ROW ){
    n = sqlite3_column_int64(p, 0);
  }
  sqlite3_finalize(p);
  return n;
}

/* Run the import of zPath once (armed: the iFailAt-th allocation fails).
** Returns the count, or -1 with the error message copied to zMsg. */
static long long importOnce(sqlite3 *db, const char *zPath, int armed, char *zMsg, int nMsg){
  sqlite3_stmt *p = 0;
  long long n = -1;
  int rc;
  zMsg[0] = 0;
  if( sqlite3_prepare_v2(db, "SELECT profsum_history_import(?1)", -1, &p, 0)!=SQLITE_OK ){
    snprintf(zMsg, (size_t)nMsg, "prepare: %s", sqlite3_errmsg(db));
    return -1;
  }
  sqlite3_bind_text(p, 1, zPath, -1, SQLITE_STATIC);
  nCall = 0;
  bArmed = armed;
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ) n = sqlite3_column_int64(p, 0);
  else snprintf(zMsg, (size_t)nMsg, "%s", sqlite3_errmsg(db));
  sqlite3_finalize(p);
  bArmed = 0;
  return n;
}

int main(int argc, char **argv){
  sqlite3 *db = 0;
  sqlite3_mem_methods m;
  char *zErr = 0, zMsg[4096], zWant[4096];
  long stride = argc>3 ? atol(argv[3]) : 1, k, nAll, nRuns = 0, nFail = 0, nOwn = 0;
  long long nRef, nBase, n;
  if( argc<3 || stride<1 ){
    fprintf(stderr, "usage: history_oom EXTENSION HISTORY.jsonl [STRIDE]\n");
    return 2;
  }
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &memDefault);
  m = memDefault;
  m.xMalloc = oomMalloc;
  m.xRealloc = oomRealloc;
  sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0);
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK
   || sqlite3_enable_load_extension(db, 1)!=SQLITE_OK
   || sqlite3_load_extension(db, argv[1], 0, &zErr)!=SQLITE_OK ){
    fprintf(stderr, "history_oom: cannot load %s: %s\n", argv[1], zErr ? zErr : sqlite3_errmsg(db));
    return 2;
  }
  {
    Dl_info d;
    void *pInit = dlsym(RTLD_DEFAULT, "sqlite3_profsum_init"), *a[4];
    if( pInit==0 || dladdr(pInit, &d)==0 ){
      fprintf(stderr, "history_oom: cannot find the extension's entry point\n");
      return 2;
    }
    pExtBase = d.dli_fbase;
    backtrace(a, 4);                /* loads what backtrace() needs, before any failure */
  }
  /* The reference run (it also creates the tables), then the count the
  ** failing runs must keep or reach by exactly nRef. */
  nRef = importOnce(db, argv[2], 0, zMsg, sizeof(zMsg));
  if( nRef<0 ){ fprintf(stderr, "history_oom: reference run: %s\n", zMsg); return 2; }
  bArmed = 1; nCall = 0; iFailAt = -1;
  importOnce(db, argv[2], 1, zMsg, sizeof(zMsg));
  nAll = nCall;
  snprintf(zWant, sizeof(zWant), "profsum_history_import: '%s': ", argv[2]);
  for(k=1; k<=nAll+1; k+=stride){
    int nBefore = nInjected;
    nBase = nRecords(db);
    iFailAt = k;
    n = importOnce(db, argv[2], 1, zMsg, sizeof(zMsg));
    iFailAt = -1;
    nRuns++;
    if( getenv("HISTORY_OOM_TRACE") ) printf("%ld %s | %s\n", k, zCaller, zMsg);
    if( n>=0 ){
      if( n!=nRef || nRecords(db)!=nBase + nRef ){
        printf("FAIL at allocation %ld: returned %lld (want %lld), %lld records added\n",
               k, n, nRef, nRecords(db) - nBase);
        nFail++;
      }
    }else if( nInjected==nBefore ){
      printf("FAIL at allocation %ld: an error without a failed allocation: %s\n", k, zMsg);
      nFail++;
    }else if( nRecords(db)!=nBase ){
      printf("FAIL at allocation %ld: a failed import left %lld records\n", k, nRecords(db) - nBase);
      nFail++;
    }else if( isOwnAlloc(zCaller) ){
      nOwn++;
      if( strncmp(zMsg, zWant, strlen(zWant))!=0 ){
        printf("FAIL at allocation %ld (%s): the message does not name the function and the "
               "file: %s\n", k, zCaller, zMsg);
        nFail++;
      }
    }else if( strncmp(zMsg, zWant, strlen(zWant))!=0 && strcmp(zMsg, "out of memory")!=0 ){
      printf("FAIL at allocation %ld (%s): %s\n", k, zCaller[0] ? zCaller : "outside", zMsg);
      nFail++;
    }
  }
  printf("runs %ld, failed %ld, injected %d, in profsum's own allocations %ld\n",
         nRuns, nFail, nInjected, nOwn);
  sqlite3_close(db);
  return nFail ? 1 : 0;
}
