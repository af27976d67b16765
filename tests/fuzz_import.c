/*
** fuzz_import.c — libFuzzer target for what comes after the readers: the
** import (profsum_import: the summary engine, the XPlane intake, the
** insights computed at import) and the v1 document
** (profsum_summary_json), with the views that read what the import wrote.
**
** Built by `make build/fuzz_import` (clang -fsanitize=fuzzer,address,
** undefined, -DSQLITE_CORE, linked with the extension sources and the
** system libsqlite3); `make fuzz-import` runs it over
** tests/fuzz_import_corpus/ (seeds written by
** tests/gen_fuzz_import_corpus.py).
**
** The first byte of an input says how to run it; the rest is the file:
**   bit 0     the file's name: "in.xplane.pb" (1) or "in.trace.json" (0)
**             (the import tells the format by content; the name only
**             changes the paths through the label and the sniff order)
**   bit 1     the first import runs with PROFSUM_THREADS=0 (1) or with
**             threads (0: the JSON scanning thread too); the third import
**             runs the other way
**   bits 2-3  the import options: none; small warmup and hot-op limit;
**             device peaks for every device; stored events, the global
**             breakdown and every diagnostic
**
** For every input, on a fresh in-memory database with the extension
** registered (sqlite3_profsum_init, as tests/sqlrun.c does):
**  1. SELECT profsum_import(path, 'x', options); an error ends the input
**     (errors are fine: crashes, leaks, undefined behaviour and hangs are
**     not);
**  2. profsum_summary_json(id), then every row of profsum_kpis and of the
**     views that read the XPlane-only tables and the insights (memory,
**     kernel stats, devices, roofline, utilization, op profile, advice,
**     ...), each value read as text, and profsum_report_md with its KPI
**     and profsum sections;
**  3. the same file imported again as 'y' (same thread mode) and as 'z'
**     (the other thread mode) must succeed too and give the same summary
**     document, byte for byte, apart from generated_at_utc (the import
**     time; summary_doc.c's buildTrace takes it from profsum_trace).
**     PROFSUM_THREADS is read at every import (profsumThreadsAllowed), so
**     setting it between imports switches the mode.
**
** A broken invariant prints what was wrong and calls abort().
** FUZZ_IMPORT_VERBOSE=1 in the environment prints each import's outcome
** (to see what a seed reaches: build/fuzz_import -runs=0 DIR).
*/
#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

/* UBSan: make every report fatal (the Makefile target does not set
** -fno-sanitize-recover, and libFuzzer ignores non-fatal reports). */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void){
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char gDir[64];             /* per-process temp folder */
static char gPath[2][96];         /* its two file names */

/* The options of bits 2-3 of the first byte. */
static const char *const azOpts[4] = {
  0,
  "{\"warmup_steps\":1,\"hot_op_limit\":3}",
  "{\"device_peaks\":{\"*\":{\"peak_flops_per_s\":1e12,\"peak_mem_bw_bytes_per_s\":1e9}}}",
  "{\"store_events\":true,\"breakdown_mode\":\"exclusive_global\",\"store_diagnostics\":\"all\"}",
};

/* Views read after a successful import: the KPIs and every view over the
** XPlane-only tables and the insights, then the core summary views. */
static const char *const azView[] = {
  "profsum_kpis", "profsum_memory", "profsum_memory_timeline", "profsum_kernel_stats",
  "profsum_devices", "profsum_roofline", "profsum_utilization", "profsum_op_profile",
  "profsum_advice", "profsum_hosts", "profsum_host_steps", "profsum_stragglers",
  "profsum_step_wall", "profsum_overview", "profsum_steps", "profsum_step_stats",
  "profsum_breakdown", "profsum_hot_ops", "profsum_gaps", "profsum_diagnostic",
};

static void fail(const char *zFmt, ...) __attribute__((noreturn, format(printf,1,2)));
static void fail(const char *zFmt, ...){
  va_list ap;
  fprintf(stderr, "fuzz_import: invariant broken: ");
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  abort();
}

/* Remove the temp folder and its files (atexit). */
static void cleanup(void){
  unlink(gPath[0]);
  unlink(gPath[1]);
  rmdir(gDir);
}

/* Make the per-process folder: in /dev/shm when there is one (no disk
** writes per input), else in /tmp. */
int LLVMFuzzerInitialize(int *argc, char ***argv){
  struct stat st;
  (void)argc; (void)argv;
  snprintf(gDir, sizeof(gDir), "%s/fuzz_import.XXXXXX",
           stat("/dev/shm", &st)==0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK)==0
             ? "/dev/shm" : "/tmp");
  if( mkdtemp(gDir)==0 ) fail("mkdtemp %s: %s", gDir, strerror(errno));
  snprintf(gPath[0], sizeof(gPath[0]), "%s/in.trace.json", gDir);
  snprintf(gPath[1], sizeof(gPath[1]), "%s/in.xplane.pb", gDir);
  atexit(cleanup);
  return 0;
}

/* Write a[0..n) to zPath (replacing it). */
static void writeFile(const char *zPath, const uint8_t *a, size_t n){
  int fd = open(zPath, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0600);
  size_t done = 0;
  if( fd<0 ) fail("open %s: %s", zPath, strerror(errno));
  while( done<n ){
    ssize_t k = write(fd, a+done, n-done);
    if( k<=0 ) fail("write %s: %s", zPath, strerror(errno));
    done += (size_t)k;
  }
  close(fd);
}

/* Set the thread mode of the next import: no threads when off; else
** threads, the JSON scanning thread among them whatever the file's size
** (PROFSUM_SCAN_PIPE=1: with this build's small windows, a window handed
** over every few entries). */
static void setThreads(int off){
  if( off ){
    setenv("PROFSUM_THREADS", "0", 1);
    unsetenv("PROFSUM_SCAN_PIPE");
  }else{
    unsetenv("PROFSUM_THREADS");
    setenv("PROFSUM_SCAN_PIPE", "1", 1);
  }
}

/* Import zPath as zLabel with zOpts (may be NULL).  Returns 1 and sets
** *pId on success, 0 on an SQL error. */
static int import(sqlite3 *db, const char *zPath, const char *zLabel, const char *zOpts,
                  sqlite3_int64 *pId){
  sqlite3_stmt *p = 0;
  int rc, ok = 0;
  if( sqlite3_prepare_v2(db, "SELECT profsum_import(?1, ?2, ?3)", -1, &p, 0)!=SQLITE_OK ){
    fail("prepare profsum_import: %s", sqlite3_errmsg(db));
  }
  sqlite3_bind_text(p, 1, zPath, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 2, zLabel, -1, SQLITE_STATIC);
  if( zOpts ) sqlite3_bind_text(p, 3, zOpts, -1, SQLITE_STATIC);
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ){
    if( sqlite3_column_type(p, 0)!=SQLITE_INTEGER ) fail("profsum_import returned no trace id");
    *pId = sqlite3_column_int64(p, 0);
    ok = 1;
    if( sqlite3_step(p)!=SQLITE_DONE ) fail("profsum_import returned two rows");
  }
  if( getenv("FUZZ_IMPORT_VERBOSE") ){
    fprintf(stderr, "fuzz_import: import %s as '%s': %s\n", zPath, zLabel,
            ok ? "ok" : sqlite3_errmsg(db));
  }
  sqlite3_finalize(p);
  if( !ok && sqlite3_get_autocommit(db)==0 ) fail("a failed import left a transaction open");
  return ok;
}

/* The summary document of trace iId (sqlite3_malloc'd), NULL on an
** error; *pnOut its length. */
static char *summary(sqlite3 *db, sqlite3_int64 iId, int *pnOut){
  sqlite3_stmt *p = 0;
  char *z = 0;
  *pnOut = 0;
  if( sqlite3_prepare_v2(db, "SELECT profsum_summary_json(?1)", -1, &p, 0)!=SQLITE_OK ){
    fail("prepare profsum_summary_json: %s", sqlite3_errmsg(db));
  }
  sqlite3_bind_int64(p, 1, iId);
  if( sqlite3_step(p)==SQLITE_ROW && sqlite3_column_type(p, 0)==SQLITE_TEXT ){
    int n = sqlite3_column_bytes(p, 0);
    z = sqlite3_malloc(n+1);
    if( z==0 ) fail("out of memory");
    memcpy(z, sqlite3_column_text(p, 0), (size_t)n+1);
    *pnOut = n;
  }
  sqlite3_finalize(p);
  return z;
}

/* Blank the value of every "generated_at_utc":"..." of z (a quote inside
** a JSON string is escaped, so the pattern with its bare quotes is the
** key itself). */
static void blankGenerated(char *z){
  static const char zKey[] = "\"generated_at_utc\":";
  char *p = z;
  while( (p = strstr(p, zKey))!=0 ){
    p += sizeof(zKey)-1;
    while( *p==' ' ) p++;
    if( *p=='"' ){
      for(p++; *p && *p!='"'; p++){
        if( *p=='\\' && p[1] ) *p++ = '_';
        *p = '_';
      }
    }
  }
}

/* Step every row of zSql, reading every column as text. */
static void stepAll(sqlite3 *db, const char *zSql){
  sqlite3_stmt *p = 0;
  int rc, i, n;
  if( sqlite3_prepare_v2(db, zSql, -1, &p, 0)!=SQLITE_OK ){
    fail("prepare %s: %s", zSql, sqlite3_errmsg(db));
  }
  n = sqlite3_column_count(p);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    for(i=0; i<n; i++){
      const unsigned char *zV = sqlite3_column_text(p, i);
      int nV = sqlite3_column_bytes(p, i);
      volatile unsigned char acc = 0;
      int k;
      for(k=0; zV && k<nV; k++) acc ^= zV[k];
      (void)acc;
    }
  }
  sqlite3_finalize(p);
  (void)rc;           /* an error reading a view is an answer too */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  sqlite3 *db = 0;
  char *zErr = 0;
  const char *zPath, *zOpts;
  sqlite3_int64 idX = 0, idY = 0, idZ = 0;
  int firstOff, okX, okY, okZ, nX, nY, nZ;
  char *zX, *zY, *zZ;
  size_t i;
  if( size<1 ) return 0;
  zPath = gPath[data[0] & 1];
  firstOff = (data[0]>>1) & 1;
  zOpts = azOpts[(data[0]>>2) & 3];
  writeFile(zPath, data+1, size-1);

  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) fail("sqlite3_open");
  if( sqlite3_profsum_init(db, &zErr, 0)!=SQLITE_OK ) fail("sqlite3_profsum_init: %s", zErr);

  /* 1. the first import (a first import into a new database: the schema
  ** is created while the parse runs, when threads are allowed) */
  setThreads(firstOff);
  okX = import(db, zPath, "x", zOpts, &idX);
  if( okX ){
    /* 2. the document and the views */
    zX = summary(db, idX, &nX);
    if( zX==0 ) fail("profsum_summary_json failed after a successful import: %s", sqlite3_errmsg(db));
    for(i=0; i<sizeof(azView)/sizeof(azView[0]); i++){
      char *zSql = sqlite3_mprintf("SELECT * FROM %s", azView[i]);
      if( zSql==0 ) fail("out of memory");
      stepAll(db, zSql);
      sqlite3_free(zSql);
    }
    /* the markdown report with the KPI and profsum sections (it reads
    ** the insights' tables through the document) */
    {
      char *zSql = sqlite3_mprintf("SELECT profsum_report_md(%lld, 10, "
                                   "'{\"kpis\":true,\"profsum\":true}')", (long long)idX);
      if( zSql==0 ) fail("out of memory");
      stepAll(db, zSql);
      sqlite3_free(zSql);
    }

    /* 3. again: the same document */
    okY = import(db, zPath, "y", zOpts, &idY);
    setThreads(!firstOff);
    okZ = import(db, zPath, "z", zOpts, &idZ);
    if( !okY || !okZ ){
      fail("the first import succeeded, a later one failed (%s threads): %s",
           !okY ? "same" : "other", sqlite3_errmsg(db));
    }
    zY = summary(db, idY, &nY);
    zZ = summary(db, idZ, &nZ);
    if( zY==0 || zZ==0 ) fail("profsum_summary_json failed for a second import");
    blankGenerated(zX);
    blankGenerated(zY);
    blankGenerated(zZ);
    if( nX!=nY || strcmp(zX, zY)!=0 ){
      fprintf(stderr, "x:\n%s\ny:\n%s\n", zX, zY);
      fail("a second import gives another summary document");
    }
    if( nX!=nZ || strcmp(zX, zZ)!=0 ){
      fprintf(stderr, "x (PROFSUM_THREADS%s):\n%s\nz:\n%s\n", firstOff ? "=0" : " unset", zX, zZ);
      fail("the summary document depends on the thread mode");
    }
    sqlite3_free(zX);
    sqlite3_free(zY);
    sqlite3_free(zZ);
  }
  setThreads(0);
  if( sqlite3_close(db)!=SQLITE_OK ) fail("sqlite3_close: %s", sqlite3_errmsg(db));
  return 0;
}
