/*
** sqlrun.c — a tiny SQL runner with the profsum extension linked in.
**
** Built by the Makefile (build/sqlrun, build/asan/sqlrun) together with
** the ext/ sources and -DSQLITE_CORE, against the system libsqlite3.  Used by
** tests/run_driver.py under AddressSanitizer and valgrind: unlike a Python
** host, every allocation of this process can be checked for leaks.
**
** Usage:  sqlrun [-k] [-m] [-f FILE.sql] [SQL ...]
**
**   SQL        SQL text to run (any number of statements)
**   -f FILE    read SQL text from FILE ("-" = standard input)
**   -k         keep going after an error (the exit code is still 1)
**   -m         after each SQL argument or file, print the line
**              "#mem|<bytes in use>|<peak bytes while it ran>" (SQLite's
**              allocator: sqlite3_memory_used / sqlite3_memory_highwater,
**              the peak reset before each argument); the memory tests
**              measure the import's peak bytes per event with it
**
** Arguments run in the order given, on one in-memory database.  Result rows
** are printed to standard output, values separated by '|', NULL as the
** empty string, one row per line.  Errors go to standard error as
** "error: <message>"; without -k the first one ends the run.
**
** Exit codes: 0 success, 1 an SQL error (or the extension failed to
** initialize), 2 usage or I/O error.
**
** With SQLITE_CORE, SQLITE_EXTENSION_INIT2(pApi) expands to "(void)pApi;",
** and every sqlite3_* call of the extension goes straight to the library,
** so sqlite3_profsum_init() is called directly with a NULL API pointer.
*/
#include <sqlite3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi);

/* Report an error: flush pending rows first so the order is kept when
** both streams go to the same place. */
static void reportError(const char *zMsg){
  fflush(stdout);
  fprintf(stderr, "error: %s\n", zMsg ? zMsg : "(no message)");
  fflush(stderr);
}

/* Print one result row. */
static void printRow(sqlite3_stmt *pStmt){
  int i, n = sqlite3_column_count(pStmt);
  for(i=0; i<n; i++){
    if( i>0 ) fputc('|', stdout);
    switch( sqlite3_column_type(pStmt, i) ){
      case SQLITE_NULL:
        break;
      case SQLITE_BLOB: {
        const unsigned char *a = sqlite3_column_blob(pStmt, i);
        int j, nb = sqlite3_column_bytes(pStmt, i);
        for(j=0; j<nb; j++) fprintf(stdout, "%02x", a[j]);
        break;
      }
      default: {
        /* INTEGER, FLOAT and TEXT: SQLite's own text conversion. */
        const unsigned char *z = sqlite3_column_text(pStmt, i);
        int nb = sqlite3_column_bytes(pStmt, i);
        if( z && nb>0 ) fwrite(z, 1, (size_t)nb, stdout);
        break;
      }
    }
  }
  fputc('\n', stdout);
}

/* Run every statement of zSql.  Returns the number of errors (with
** keepGoing==0, at most 1: it stops at the first). */
static int runSql(sqlite3 *db, const char *zSql, int keepGoing){
  int nErr = 0;
  const char *zTail = zSql;
  while( zTail && zTail[0] ){
    sqlite3_stmt *pStmt = 0;
    const char *zNext = 0;
    int rc = sqlite3_prepare_v2(db, zTail, -1, &pStmt, &zNext);
    if( rc!=SQLITE_OK ){
      reportError(sqlite3_errmsg(db));
      sqlite3_finalize(pStmt);
      /* The rest of this text cannot be split reliably after a parse
      ** error: go on with the next argument (with -k). */
      return nErr+1;
    }
    if( pStmt==0 ){            /* white space or a comment */
      zTail = zNext;
      continue;
    }
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      printRow(pStmt);
    }
    if( rc!=SQLITE_DONE ){
      reportError(sqlite3_errmsg(db));
      nErr++;
    }
    sqlite3_finalize(pStmt);
    if( nErr && !keepGoing ) return nErr;
    zTail = zNext;
  }
  return nErr;
}

/* Read a whole file (or stdin for "-") into a NUL-terminated malloc'd
** buffer.  Returns NULL on error (message printed). */
static char *readFile(const char *zPath){
  FILE *f = strcmp(zPath, "-")==0 ? stdin : fopen(zPath, "rb");
  char *z = 0;
  size_t n = 0, nAlloc = 0;
  if( f==0 ){
    fflush(stdout);
    fprintf(stderr, "sqlrun: cannot open %s\n", zPath);
    return 0;
  }
  for(;;){
    size_t got;
    if( nAlloc-n<4096 ){
      size_t nNew = nAlloc ? nAlloc*2 : 65536;
      char *zNew = realloc(z, nNew);
      if( zNew==0 ){
        free(z);
        if( f!=stdin ) fclose(f);
        fprintf(stderr, "sqlrun: out of memory reading %s\n", zPath);
        return 0;
      }
      z = zNew;
      nAlloc = nNew;
    }
    got = fread(z+n, 1, nAlloc-n-1, f);
    n += got;
    if( got==0 ) break;
  }
  if( ferror(f) ){
    fprintf(stderr, "sqlrun: read error on %s\n", zPath);
    free(z);
    if( f!=stdin ) fclose(f);
    return 0;
  }
  if( f!=stdin ) fclose(f);
  z[n] = 0;
  return z;
}

static void usage(void){
  fprintf(stderr, "usage: sqlrun [-k] [-m] [-f FILE.sql] [SQL ...]\n");
}

int main(int argc, char **argv){
  sqlite3 *db = 0;
  char *zErr = 0;
  int i, rc, keepGoing = 0, showMem = 0, nErr = 0, exitCode = 0;

  /* Options may appear anywhere; check them before doing any work. */
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "-k")==0 ){
      keepGoing = 1;
    }else if( strcmp(argv[i], "-m")==0 ){
      showMem = 1;
    }else if( strcmp(argv[i], "-f")==0 ){
      if( i+1>=argc ){ usage(); return 2; }
      i++;
    }else if( strcmp(argv[i], "-h")==0 || strcmp(argv[i], "--help")==0 ){
      usage();
      return 0;
    }else if( argv[i][0]=='-' && argv[i][1]!=0 && strcmp(argv[i], "--")!=0 ){
      /* Anything else starting with '-' is an option we do not know
      ** (SQL never starts with '-' except a comment "--..."). */
      if( strncmp(argv[i], "--", 2)!=0 ){ usage(); return 2; }
    }
  }

  rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
  if( rc!=SQLITE_OK ){
    reportError(db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    sqlite3_shutdown();
    return 1;
  }
  rc = sqlite3_profsum_init(db, &zErr, 0);
  if( rc!=SQLITE_OK ){
    char *z = sqlite3_mprintf("sqlite3_profsum_init failed (%d): %s", rc,
                              zErr ? zErr : sqlite3_errstr(rc));
    reportError(z);
    sqlite3_free(z);
    sqlite3_free(zErr);
    sqlite3_close(db);
    sqlite3_shutdown();
    return 1;
  }
  sqlite3_free(zErr);   /* NULL on success; freed in case it was set */
  zErr = 0;

  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "-k")==0 || strcmp(argv[i], "-m")==0 || strcmp(argv[i], "--")==0 ) continue;
    sqlite3_memory_highwater(1);
    if( strcmp(argv[i], "-f")==0 ){
      char *zSql = readFile(argv[++i]);
      if( zSql==0 ){ exitCode = 2; break; }
      nErr += runSql(db, zSql, keepGoing);
      free(zSql);
    }else{
      nErr += runSql(db, argv[i], keepGoing);
    }
    if( showMem ){
      printf("#mem|%lld|%lld\n", (long long)sqlite3_memory_used(),
             (long long)sqlite3_memory_highwater(0));
    }
    if( nErr && !keepGoing ) break;
  }
  if( nErr && exitCode==0 ) exitCode = 1;

  fflush(stdout);
  rc = sqlite3_close(db);
  if( rc!=SQLITE_OK ){
    /* Unfinalized statements or open blobs: a bug in this program. */
    fprintf(stderr, "sqlrun: sqlite3_close failed: %s\n", sqlite3_errstr(rc));
    exitCode = 3;
  }
  sqlite3_shutdown();
  if( fflush(stdout)!=0 || ferror(stdout) ){
    if( exitCode==0 ) exitCode = 2;
  }
  return exitCode;
}
