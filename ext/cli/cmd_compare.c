/*
** cmd_compare.c — the commands on a before/after pair and their history:
** `compare`, `track`, `history` and `bundle`, with the history file they
** record into (a .db, or a JSONL file as the reference tool writes), the
** thresholds and the strict provenance check.
*/
#include "cli.h"
#include "fileio.h"
#include "compare.h"           /* profsumHistQuietSources */
#include "jsontree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The kinds of --history file (historyKind). */
#define HIST_DB    1
#define HIST_JSONL 2

/* A .db (SQLite header, or a new or empty file not named *.jsonl,
** *.ndjson, *.json or *.txt, in any case: H.JSONL is a JSONL name) or a
** JSONL history (the reference tool's format). */
static int historyKind(const char *z){
  struct stat st;
  size_t n = strlen(z);
  if( stat(z, &st)==0 && S_ISREG(st.st_mode) && st.st_size>0 ){
    char aHdr[16];
    int fd = open(z, O_RDONLY|O_CLOEXEC);
    ssize_t got = -1;
    if( fd>=0 ){ got = read(fd, aHdr, 16); close(fd); }
    if( got==16 && memcmp(aHdr, "SQLite format 3", 16)==0 ) return HIST_DB;
    return HIST_JSONL;
  }
#define ENDS(s) (n>=strlen(s) && strcasecmp(z+n-strlen(s), s)==0)
  if( ENDS(".jsonl") || ENDS(".ndjson") || ENDS(".json") || ENDS(".txt") ) return HIST_JSONL;
#undef ENDS
  return HIST_DB;
}

/* Before track or bundle append to the existing JSONL history zHist:
** check that it is one, read as `history` reads it (profsum_history_import
** into a private in-memory database: every non-blank line a JSON value).
** A file that is something else -- a pretty-printed summary, other text --
** is refused (exit 2) with the reason, and nothing is appended.  A
** symbolic link at zHist (to a file, or to nothing) is refused (exit 1):
** the append would write through it (fileio.h).  An empty or missing
** file is a new history. */
static void checkJsonlHistory(const char *zHist){
  struct stat st;
  sqlite3 *db = 0;
  sqlite3_stmt *p = 0;
  char *zWhy = 0;
  int rc;
  if( profsumFileIsLink(zHist, &zWhy) ){
    char *zMsg;
    if( zWhy==0 ) fail(EXIT_FAIL, "out of memory");
    zMsg = xprintf("--history '%s' is %s, and track and bundle append to the history; %s", zHist,
                   zWhy, PROFSUM_FILE_LINK_ADVICE);
    sqlite3_free(zWhy);
    fail(EXIT_FAIL, "%s", zMsg);
  }
  if( stat(zHist, &st)!=0 || (S_ISREG(st.st_mode) && st.st_size==0) ) return;
  if( sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, 0)!=SQLITE_OK ){
    sqlite3_close(db);
    fail(EXIT_FAIL, "out of memory");
  }
  rc = sqlite3_prepare_v2(db, "SELECT profsum_history_import(?1)", -1, &p, 0);
  if( rc==SQLITE_OK ){
    sqlite3_bind_text(p, 1, zHist, -1, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW || rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  if( rc!=SQLITE_OK ) zWhy = xstrdup(sqlite3_errmsg(db));
  sqlite3_finalize(p);
  sqlite3_close(db);
  if( zWhy ){
    char *zMsg = xprintf("--history '%s' is not a JSONL history (one JSON record a line, as track "
                         "writes it), so nothing is appended to it: %s", zHist, zWhy);
    free(zWhy);
    fail(EXIT_USAGE, "%s", zMsg);
  }
}

/* Refuse (failOutputOver, exit 2) an --output zOutput that is the history
** zHist, which option zOpt names ("--db": a database whatever its name),
** or a side file of it when it is a database (historyKind). */
static void failOutputOverHistory(const char *zOutput, const char *zHist, const char *zOpt){
  if( zOutput==0 || zHist==0 ) return;
  failOutputOver(zOutput, zHist, zOpt, strcmp(zOpt, "--db")==0 || historyKind(zHist)==HIST_DB);
}

/* Before bundle writes anything: refuse (exit 2) an --output-dir zDir one
** of whose six files (profsumBundleFileName) is the history zHist, which
** option zOpt names: the bundle would rename that file over the history
** (a JSONL file track and bundle append to, or the database itself, as
** failOutputOver tells the same file). */
static void failBundleOverHistory(const char *zDir, const char *zHist, const char *zOpt){
  const char *zName;
  char *zReal, *zPath;
  size_t n;
  int i, bDb;
  if( zDir==0 || zHist==0 ) return;
  bDb = strcmp(zOpt, "--db")==0 || historyKind(zHist)==HIST_DB;
  if( bDb && (zHist[0]==0 || strcmp(zHist, ":memory:")==0 || strncmp(zHist, "file:", 5)==0) ) return;
  zReal = realPathFollow(zHist);
  n = strlen(zDir);
  for(i=0; (zName = profsumBundleFileName(i))!=0; i++){
    zPath = xprintf("%s%s%s", zDir, n>0 && zDir[n-1]=='/' ? "" : "/", zName);
    if( isSameFile(zPath, zReal) ){
      fail(EXIT_USAGE, "--output-dir '%s': its file '%s' is the %s of %s '%s' (the bundle would "
           "replace it): choose another directory or another %s", zDir, zPath,
           bDb ? "database" : "history file", zOpt, zHist, zOpt);
    }
    sqlite3_free(zPath);
  }
  free(zReal);
}

/* Before bundle does any work: refuse (exit 1) an --output-dir zDir one
** of whose six files is a symbolic link (to a file, a directory, or
** nothing): profsum_bundle would refuse it only after the imports.  The
** directory itself may be a link the user named; links in it are neither
** followed nor replaced (fileio.h). */
static void failBundleLinks(const char *zDir){
  const char *zName;
  size_t n;
  int i;
  if( zDir==0 ) return;
  n = strlen(zDir);
  for(i=0; (zName = profsumBundleFileName(i))!=0; i++){
    char *zPath = xprintf("%s%s%s", zDir, n>0 && zDir[n-1]=='/' ? "" : "/", zName);
    char *zLink = 0;
    if( profsumFileIsLink(zPath, &zLink) ){
      char *zMsg;
      if( zLink==0 ) fail(EXIT_FAIL, "out of memory");
      zMsg = xprintf("--output-dir '%s': its file '%s' is %s; %s", zDir, zPath, zLink,
                     PROFSUM_FILE_LINK_ADVICE);
      sqlite3_free(zLink);
      sqlite3_free(zPath);
      fail(EXIT_FAIL, "%s", zMsg);
    }
    sqlite3_free(zPath);
  }
}

/* Open the working database for a --history argument: the .db itself, or
** a temporary one, with the JSONL records imported when bRead (the
** `history` command; track and bundle only append to a JSONL file,
** appendHistory, after checkJsonlHistory).  zOpt names the option that
** gave zHist, for messages. */
static int openHistory(const char *zHist, const char *zOpt, const char *zDb, int bRead){
  int k;
  if( zHist==0 ){ openDb(zDb, "--db"); return 0; }
  k = strcmp(zOpt, "--db")==0 ? HIST_DB : historyKind(zHist);    /* --db is a database */
  if( k==HIST_DB ){
    if( zDb && strcmp(zDb, zHist)!=0 ) fail(EXIT_USAGE, "--history is a database: --db must be the same file or absent");
    makeDirs(zHist, 1);
    openDb(zHist, zOpt);
  }else{
    if( zDb ) fail(EXIT_USAGE, "--history '%s' is a JSONL file: it cannot be combined with --db "
                   "(give the database as --history instead)", zHist);
    if( !bRead ) checkJsonlHistory(zHist);
    openDb(0, 0);
    if( bRead && pathExists(zHist) ){
      char *z = sqlText("SELECT profsum_history_import(?1)", "t", zHist);
      free(z);
    }
  }
  return k;
}

/* Append the record just written to the working database (profsum_track,
** or profsum_bundle with "history": true) to a JSONL history, as the
** reference does (tools-spec §4.2): one line, the record as
** json.dumps(record, sort_keys=True) (record_json) and "\n"; parent
** directories are created.  The file is opened O_APPEND|O_NOFOLLOW (a
** symbolic link there is refused, checkJsonlHistory) and locked
** (flock) while its last byte is checked (a file not ending in "\n" gets
** one first, so two records are never glued together) and the line is
** written with one write(), then fsync'd: concurrent appenders each add
** their line whole, and nothing else in the file is touched. */
static void appendHistory(const char *zHist, int k){
  char *zLine, *zBuf;
  size_t n, off = 0;
  struct stat st;
  int fd, e;
  if( k!=HIST_JSONL ) return;
  zLine = sqlText("SELECT record_json FROM main.profsum_history_record ORDER BY record_id DESC LIMIT 1", "");
  if( zLine==0 ) fail(EXIT_FAIL, "no record to append to '%s'", zHist);
  n = strlen(zLine);
  zBuf = xmalloc(n+2);
  memcpy(zBuf+1, zLine, n);
  zBuf[1+n] = '\n';
  free(zLine);
  makeDirs(zHist, 1);
  fd = open(zHist, O_WRONLY|O_APPEND|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0666);
  if( fd<0 ){
    e = errno;
    free(zBuf);
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist,
         e==ELOOP ? "it is a symbolic link (" PROFSUM_FILE_LINK_ADVICE ")" : strerror(e));
  }
  while( flock(fd, LOCK_EX)!=0 ){
    if( errno!=EINTR ){
      e = errno;
      close(fd);
      free(zBuf);
      fail(EXIT_FAIL, "cannot lock '%s': %s", zHist, strerror(e));
    }
  }
  /* Under the lock: does the file end with a newline? */
  off = 1;
  if( fstat(fd, &st)==0 && st.st_size>0 ){
    char c = '\n';
    int rfd = open(zHist, O_RDONLY|O_CLOEXEC);
    if( rfd>=0 ){
      if( pread(rfd, &c, 1, st.st_size-1)==1 && c!='\n' ){
        zBuf[0] = '\n';
        off = 0;
      }
      close(rfd);
    }
  }
  if( profsumFileWriteAll(fd, zBuf+off, n+2-off)!=0 ){
    e = errno;
    close(fd);
    free(zBuf);
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
  }
  if( fsync(fd)!=0 && errno!=EINVAL && errno!=EROFS ){
    e = errno;
    close(fd);
    free(zBuf);
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
  }
  free(zBuf);
  if( close(fd)!=0 ){               /* also releases the lock */
    e = errno;
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
  }
}

/* Thresholds JSON from the four flags (only those given), with "top_k":
** topK when bTopK (profsum_track's thresholds_json; topK may be negative,
** a Python slice bound). */
static char *thresholdsJson(const Opts *o, int bTopK, long long topK){
  static const char *az[] = {
    "max-step-median-regression-pct", "max_step_median_regression_pct",
    "max-step-p90-regression-pct", "max_step_p90_regression_pct",
    "max-communication-share-regression-abs", "max_communication_share_regression_abs",
    "max-stall-share-regression-abs", "max_stall_share_regression_abs",
  };
  JObj j;
  size_t i;
  memset(&j, 0, sizeof(j));
  for(i=0; i<sizeof(az)/sizeof(az[0]); i+=2){
    const char *z = optStr(o, az[i]);
    double v;
    if( z && parseNum(z, &v) ) jobjNum(&j, az[i+1], v);
  }
  if( bTopK ) jobjInt(&j, "top_k", topK);
  return (char*)jobjEnd(&j);
}

/* The documents of compare and track are read with the project's JSON
** reader, not SQLite's: they may hold NaN and Infinity (a metric that
** became infinite), which Python's json writes and reads and SQLite's
** JSON functions refuse. */

/* The string member zKey of member zObj of document zJson, as a malloc'd
** copy, or 0 (no such string, or out of memory). */
static char *docString(const char *zJson, const char *zObj, const char *zKey){
  JNode *p = zJson ? jParse(zJson, -1, 0) : 0;
  const JNode *v = jGet(jGet(p, zObj), zKey);
  char *z = (v && v->type==JT_STRING) ? strdup(v->z) : 0;
  jFree(p);
  return z;
}

/* The strings of the arrays zArr1 then zArr2 (zArr2 may be 0) of member zObj
** of document zJson, joined by cSep, as a malloc'd text ("" when none), or
** 0 when out of memory. */
static char *docJoin(const char *zJson, const char *zObj, const char *zArr1, const char *zArr2, char cSep){
  JNode *p = jParse(zJson, -1, 0);
  const JNode *o = jGet(p, zObj);
  const char *az[2];
  size_t n = 0, k;
  int a, i;
  char *z;
  az[0] = zArr1; az[1] = zArr2;
  for(a=0; a<2; a++){
    const JNode *arr = az[a] ? jGet(o, az[a]) : 0;
    for(i=0; arr && arr->type==JT_ARRAY && i<arr->nChild; i++){
      if( arr->a[i]->type==JT_STRING ) n += (size_t)arr->a[i]->n + 1;
    }
  }
  z = malloc(n + 1);
  if( z ){
    k = 0;
    for(a=0; a<2; a++){
      const JNode *arr = az[a] ? jGet(o, az[a]) : 0;
      for(i=0; arr && arr->type==JT_ARRAY && i<arr->nChild; i++){
        const JNode *v = arr->a[i];
        if( v->type!=JT_STRING ) continue;
        if( k ) z[k++] = cSep;
        memcpy(z+k, v->z, (size_t)v->n);
        k += (size_t)v->n;
      }
    }
    z[k] = 0;
  }
  jFree(p);
  return z;
}

/* Strict provenance (compare, track): fail when the comparison's
** provenance status is "fail". */
static void checkProvenance(const char *zCompare){
  char *zStatus = docString(zCompare, "provenance_checks", "status");
  if( zStatus && strcmp(zStatus, "fail")==0 ){
    char *zMsg;
    free(zStatus);
    zMsg = docJoin(zCompare, "provenance_checks", "messages", 0, ' ');
    if( zMsg && zMsg[0] ) fail(EXIT_FAIL, "Provenance checks failed. %s", zMsg);
    fail(EXIT_FAIL, "Provenance checks failed.");
  }
  free(zStatus);
}

/* On stderr (stdout is the reference's JSON), when zSql (?1 before, ?2
** after) gives a text: "profsum <zCmd>: note: <zWhat> (<text>): <zWhy>".
** A note only: never an error. */
static void notePair(const char *zCmd, const char *zSql, const char *zWhat, const char *zWhy,
                     sqlite3_int64 idB, sqlite3_int64 idA){
  char *zErr = 0;
  char *z = sqlTextTry(&zErr, zSql, "ii", idB, idA);
  if( z ) errLine("profsum %s: note: %s (%s): %s", zCmd, zWhat, z, zWhy);
  free(z);
  free(zErr);
}

/* Before and after were read from different sources (source_format: an
** XPlane and a JSON trace, or a summary file of either), whose numbers can
** differ for that reason alone (event counts, tf_op paths and regions of
** the XlaModule rule, float rounding).  zCmd: the command's name. */
static void noteSourceFormats(const char *zCmd, sqlite3_int64 idB, sqlite3_int64 idA){
  notePair(zCmd, "SELECT 'source_format ' || b.source_format || ' and ' || a.source_format "
           "FROM main.profsum_trace AS b, main.profsum_trace AS a WHERE b.trace_id=?1 AND a.trace_id=?2 "
           "AND b.source_format IS NOT a.source_format",
           "before and after come from different sources",
           "counts, tf_op paths, regions and float rounding can differ for that reason alone", idB, idA);
}

/* What both captures state of their environment and differ in
** (profsum_environment: jax_version, jaxlib_version, device_model,
** n_devices when both have devices), as profsum_compare_md notes it. */
static void noteEnvironment(const char *zCmd, sqlite3_int64 idB, sqlite3_int64 idA){
  notePair(zCmd, "SELECT group_concat(k || ' ' || vb || ' -> ' || va, '; ') FROM ("
           "SELECT v.column1 AS k, v.column2 AS o, "
           "CASE v.column2 WHEN 1 THEN b.jax_version WHEN 2 THEN b.jaxlib_version WHEN 3 THEN b.device_model "
           "  ELSE CASE WHEN b.n_devices > 0 AND a.n_devices > 0 THEN CAST(b.n_devices AS TEXT) END END AS vb, "
           "CASE v.column2 WHEN 1 THEN a.jax_version WHEN 2 THEN a.jaxlib_version WHEN 3 THEN a.device_model "
           "  ELSE CASE WHEN b.n_devices > 0 AND a.n_devices > 0 THEN CAST(a.n_devices AS TEXT) END END AS va "
           "FROM main.profsum_environment AS b, main.profsum_environment AS a, "
           "(VALUES ('jax_version', 1), ('jaxlib_version', 2), ('device_model', 3), ('n_devices', 4)) AS v "
           "WHERE b.trace_id=?1 AND a.trace_id=?2 ORDER BY o) "
           "WHERE vb IS NOT NULL AND va IS NOT NULL AND vb <> va",
           "the software or hardware changed between the runs",
           "the numbers can move for that reason alone", idB, idA);
}

/* profsum compare: the comparison JSON of --before and --after
** (profsum_compare_json), each a file or a label/trace_id of --db;
** --strict-provenance fails (exit 1) when the provenance checks fail. */
int cmdCompare(Opts *o){
  const char *zB = optReq(o, "before"), *zA = optReq(o, "after"), *zDb = optStr(o, "db");
  long long k = optInt(o, "top-k", 10);    /* any int: a slice bound */
  const char *zFormat = optStr(o, "format");
  char *zOpts, *zCmp;
  sqlite3_int64 idB, idA;
  if( zFormat && strcmp(zFormat, "json")!=0 && strcmp(zFormat, "md")!=0 && strcmp(zFormat, "html")!=0 ){
    fail(EXIT_USAGE, "--format must be json, md or html, not '%s'", zFormat);
  }
  failOutputOver(optStr(o, "output"), zDb, "--db", 1);
  failOutputOverInput(optStr(o, "output"), zB, "--before");
  failOutputOverInput(optStr(o, "output"), zA, "--after");
  failOutputUnwritable(optStr(o, "output"));
  zOpts = knobOptions(o, 0, 0);
  {
    const char *az[2] = {zB, zA};
    failMissingDbForLabels(zDb, az, 2);
  }
  openDb(zDb, "--db");
  idB = traceArg("before", zB, optRaw(o, "before"), zDb!=0, zOpts, 0);
  idA = traceArg("after", zA, optRaw(o, "after"), zDb!=0, zOpts, idB);
  profsumHistQuietSources(1);               /* noteSourceFormats says it */
  zCmp = sqlText("SELECT profsum_compare_json(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
  if( zCmp==0 ) fail(EXIT_FAIL, "profsum_compare_json returned nothing");
  noteSourceFormats("compare", idB, idA);
  noteEnvironment("compare", idB, idA);
  if( optFlag(o, "strict-provenance") ) checkProvenance(zCmp);
  if( zFormat && strcmp(zFormat, "json")!=0 ){
    /* profsum's comparison for people instead of the reference's JSON */
    free(zCmp);
    zCmp = sqlText(strcmp(zFormat, "html")==0 ? "SELECT profsum_compare_md(?1, ?2, ?3, '{\"html\": true}')"
                   : "SELECT profsum_compare_md(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
    if( zCmp==0 ) fail(EXIT_FAIL, "profsum_compare_md returned nothing");
  }
  emit(zCmp, optStr(o, "output"));
  free(zCmp);
  free(zOpts);
  return EXIT_OK;
}

/* On stderr (stdout is the reference's record): a side without steady-state
** steps, whose step-time checks can never fail -- a CI gate that looks
** green for that reason alone (the reference says nothing).  zB, zA: the
** --before/--after arguments as given. */
static void noteNoSteadySteps(sqlite3_int64 idB, sqlite3_int64 idA, const char *zB, const char *zA){
  sqlite3_stmt *p = 0;
  if( sqlite3_prepare_v2(g_db, "SELECT t.trace_id, t.label, coalesce(a.count, 0), "
        "json_extract(t.options, '$.warmup_steps'), t.summary_json IS NOT NULL FROM main.profsum_trace AS t "
        "LEFT JOIN main.profsum_step_stats AS a ON a.trace_id=t.trace_id AND a.scope='all' "
        "LEFT JOIN main.profsum_step_stats AS s ON s.trace_id=t.trace_id AND s.scope='steady' "
        "WHERE t.trace_id IN (?1, ?2) AND coalesce(s.count, 0)=0 ORDER BY t.trace_id=?2",
        -1, &p, 0)!=SQLITE_OK ){
    sqlite3_finalize(p);
    return;                                   /* a note only: never an error */
  }
  sqlite3_bind_int64(p, 1, idB);
  sqlite3_bind_int64(p, 2, idA);
  while( sqlite3_step(p)==SQLITE_ROW ){
    int isAfter = sqlite3_column_int64(p, 0)==idA;
    const char *zLabel = (const char*)sqlite3_column_text(p, 1);
    long long nAll = sqlite3_column_int64(p, 2);
    char zSide[1200];
    snprintf(zSide, sizeof(zSide), "--%s '%s' (trace '%s'%s)", isAfter ? "after" : "before",
             isAfter ? zA : zB, zLabel ? zLabel : "?", sqlite3_column_int(p, 4) ? ", a summary file" : "");
    if( sqlite3_column_int(p, 4) ){
      /* a summary file: its warmup_steps were set when it was made */
      errLine("profsum track: note: %s has no steady-state steps: the step-time checks "
              "cannot fail", zSide);
    }else if( nAll==0 ){
      errLine("profsum track: note: %s has no steps (no step markers found): "
              "the step-time checks cannot fail", zSide);
    }else{
      errLine("profsum track: note: %s: its %lld step%s %s warmup (--warmup-steps %lld): "
              "no steady-state steps, so the step-time checks cannot fail; lower --warmup-steps or "
              "profile more steps", zSide, nAll, nAll==1 ? "" : "s", nAll==1 ? "is" : "are all",
              (long long)sqlite3_column_int64(p, 3));
    }
  }
  sqlite3_finalize(p);
}

/* On stderr: before and after hold the same content (same SHA-256): the
** record compares a run with itself, so it can only pass. */
static void noteSameContent(sqlite3_int64 idB, sqlite3_int64 idA){
  char *z = sqlText("SELECT b.sha256 FROM main.profsum_trace AS b, main.profsum_trace AS a "
                    "WHERE b.trace_id=?1 AND a.trace_id=?2 AND b.sha256 IS NOT NULL AND b.sha256 <> '' "
                    "AND b.sha256 = a.sha256", "ii", idB, idA);
  if( z ){
    errLine("profsum track: warning: before and after have the same content (SHA-256 %s): the record "
            "compares a trace with itself", z);
    free(z);
  }
}

/* profsum track: compare --before and --after, assess the pair against
** the thresholds and record it (profsum_track) into --history (a .db, or
** a JSONL file, appendHistory); emit the record.  Returns EXIT_GATE when
** --fail-on is given and the status reaches it. */
int cmdTrack(Opts *o){
  const char *zB = optReq(o, "before"), *zA = optReq(o, "after");
  const char *zHist = optStr(o, "history"), *zDb = optStr(o, "db"), *zFailOn = optStr(o, "fail-on");
  long long k = optInt(o, "top-k", 10);    /* any int: a slice bound */
  char *zOpts = knobOptions(o, 0, 0), *zThr = thresholdsJson(o, 1, k), *zRec, *zStatus;
  sqlite3_int64 idB, idA;
  int kind, bGate = 0;
  const char *zHistOpt = "--history";
  if( zFailOn && strcmp(zFailOn, "fail")!=0 && strcmp(zFailOn, "warn")!=0 ){
    fail(EXIT_USAGE, "option '--fail-on': invalid choice '%s' (choose from 'fail', 'warn')", zFailOn);
  }
  if( zHist==0 && zDb ){ zHist = zDb; zDb = 0; zHistOpt = "--db"; }
  failOutputOverHistory(optStr(o, "output"), zHist, zHistOpt);
  failOutputOver(optStr(o, "output"), zDb, "--db", 1);
  failOutputOverInput(optStr(o, "output"), zB, "--before");
  failOutputOverInput(optStr(o, "output"), zA, "--after");
  failOutputUnwritable(optStr(o, "output"));
  kind = openHistory(zHist, zHistOpt, zDb, 0);
  idB = traceArg("before", zB, optRaw(o, "before"), kind==HIST_DB, zOpts, 0);
  idA = traceArg("after", zA, optRaw(o, "after"), kind==HIST_DB, zOpts, idB);
  profsumHistQuietSources(1);               /* noteSourceFormats says it */
  noteSourceFormats("track", idB, idA);
  noteEnvironment("track", idB, idA);
  noteSameContent(idB, idA);
  if( optFlag(o, "strict-provenance") ){
    /* checked before anything is recorded */
    char *zCmp = sqlText("SELECT profsum_compare_json(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
    if( zCmp ) checkProvenance(zCmp);
    free(zCmp);
  }
  zRec = sqlText("SELECT profsum_track(?1, ?2, ?3, ?4)", "iitt", idB, idA, optStr(o, "label"), zThr);
  if( zRec==0 ) fail(EXIT_FAIL, "profsum_track returned nothing");
  appendHistory(zHist, kind);
  zStatus = docString(zRec, "assessment", "status");
  noteNoSteadySteps(idB, idA, optRaw(o, "before") ? optRaw(o, "before") : zB,
                    optRaw(o, "after") ? optRaw(o, "after") : zA);
  if( zFailOn && zStatus ){
    if( strcmp(zStatus, "fail")==0 ) bGate = 1;
    if( strcmp(zFailOn, "warn")==0 && strcmp(zStatus, "warn")==0 ) bGate = 1;
  }
  emit(zRec, optStr(o, "output"));
  if( zFailOn && zStatus && strcmp(zStatus, "pass")!=0 ){
    /* why: the assessment's failures and warnings, one line each */
    char *zWhy = docJoin(zRec, "assessment", "failures", "warnings", '\n');
    errLine("profsum track: status %s (--fail-on %s)%s", zStatus, zFailOn,
            bGate ? "" : ": below the gate, exit 0");
    if( zWhy ){
      char *zLine = zWhy, *zNl;
      while( zLine && *zLine ){
        zNl = strchr(zLine, '\n');
        if( zNl ) *zNl = 0;
        errLine("profsum track:   %s", zLine);
        zLine = zNl ? zNl+1 : 0;
      }
    }
    free(zWhy);
  }
  free(zRec);
  free(zStatus);
  free(zOpts);
  free(zThr);
  return bGate ? EXIT_GATE : EXIT_OK;
}

/* profsum history: the summary JSON of a history (.db or JSONL), its
** last --tail records listed; a history that does not exist has none. */
int cmdHistory(Opts *o){
  const char *zHist = optReq(o, "history");
  long long nTail = optInt(o, "tail", 20);
  char *zSum;
  failOutputOverHistory(optStr(o, "output"), zHist, "--history");
  failOutputUnwritable(optStr(o, "output"));
  if( historyKind(zHist)==HIST_DB && !pathExists(zHist) ){
    openDb(0, 0);                   /* a missing history has no records */
  }else{
    openHistory(zHist, "--history", 0, 1);
  }
  zSum = sqlText("SELECT profsum_history_summary_json(?1)", "i", (sqlite3_int64)nTail);
  if( zSum==0 ) fail(EXIT_FAIL, "profsum_history_summary_json returned nothing");
  {
    /* with history_path, printed as Python's json.dumps(indent=2,
    ** sort_keys=True); NaN and Infinity in a record stay as they are */
    JNode *p = jParse(zSum, -1, 0);
    char *zOut;
    if( p==0 ) fail(EXIT_FAIL, "profsum history: the summary of the history is not JSON");
    jSet(p, "history_path", jStr(zHist, -1));
    zOut = jOom(p) ? 0 : jDump(p);
    jFree(p);
    if( zOut==0 ) fail(EXIT_FAIL, "out of memory");
    emit(zOut, optStr(o, "output"));
    sqlite3_free(zOut);
  }
  free(zSum);
  return EXIT_OK;
}

/* One side of a bundle: a summary/trace file (or a label of --db), else a
** run target. */
static sqlite3_int64 bundleSide(const Opts *o, const char *zSide, int bHaveDb, const char *zOpts,
                                sqlite3_int64 idOther){
  char zOpt[32], zRunOpt[32];
  const char *zSum, *zRaw, *zRun;
  snprintf(zOpt, sizeof(zOpt), "%s-summary", zSide);
  snprintf(zRunOpt, sizeof(zRunOpt), "%s-run-target", zSide);
  zSum = optStr(o, zOpt);
  zRaw = optRaw(o, zOpt);
  if( zSum==0 ){ zSum = optStr(o, zSide); zRaw = optRaw(o, zSide); }
  zRun = optStr(o, zRunOpt);
  if( zSum ) return traceArg(zOpt, zSum, zRaw, bHaveDb, zOpts, idOther);
  return importRunTarget(zRun, 0, 0, zOpts);
}

/* profsum bundle: write the before/after summaries, the comparison, the
** tracking record and the reports into --output-dir (profsum_bundle),
** also recorded into --history when given; emit the manifest.  With
** --strict-provenance nothing is written when the checks fail. */
int cmdBundle(Opts *o){
  const char *zOut = optReq(o, "output-dir"), *zHist = optStr(o, "history"), *zDb = optStr(o, "db");
  long long k = optInt(o, "top-k", 10);    /* any int: a slice bound */
  char *zOpts = knobOptions(o, 0, 0), *zThr = thresholdsJson(o, 0, 0), *zMan;
  sqlite3_int64 idB, idA;
  int kind;
  JObj j;
  if( !(optStr(o, "before-summary") || optStr(o, "before") || optStr(o, "before-run-target"))
   || !(optStr(o, "after-summary") || optStr(o, "after") || optStr(o, "after-run-target")) ){
    /* the reference raises ValueError here: exit 1, not a usage error */
    fail(EXIT_FAIL, "Bundle requires either a summary path or a run target for both before and after.");
  }
  failOutputOverHistory(optStr(o, "output"), zHist, "--history");
  failOutputOver(optStr(o, "output"), zDb, "--db", 1);
  failBundleOverHistory(zOut, zHist, "--history");
  failBundleOverHistory(zOut, zDb, "--db");
  failOutputUnwritable(optStr(o, "output"));
  failBundleLinks(zOut);
  memset(&j, 0, sizeof(j));
  jobjInt(&j, "top_k", k);
  if( optStr(o, "label") ) jobjStr(&j, "label", optStr(o, "label"));
  jobjRaw(&j, "thresholds", zThr);
  jobjRaw(&j, "history", zHist ? "true" : "false");
  jobjRaw(&j, "strict_provenance", optFlag(o, "strict-provenance") ? "true" : "false");
  wandbEnv(o);
  kind = openHistory(zHist, "--history", zDb, 0);
  idB = bundleSide(o, "before", kind==HIST_DB || zDb!=0, zOpts, 0);
  idA = bundleSide(o, "after", kind==HIST_DB || zDb!=0, zOpts, idB);
  noteSourceFormats("bundle", idB, idA);
  noteEnvironment("bundle", idB, idA);
  if( optFlag(o, "strict-provenance") ){
    /* the reference's preflight comparison: its ValueError text, exit 1,
    ** before any file is written */
    char *zCmp = sqlText("SELECT profsum_compare_json(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
    if( zCmp ) checkProvenance(zCmp);
    free(zCmp);
  }
  zMan = sqlText("SELECT profsum_bundle(?1, ?2, ?3, ?4)", "iitt", idB, idA, zOut, jobjEnd(&j));
  if( zMan==0 ) fail(EXIT_FAIL, "profsum_bundle returned nothing");
  appendHistory(zHist, kind);
  emit(zMan, optStr(o, "output"));
  free(zMan);
  free(zOpts);
  free(zThr);
  free(j.b.z);
  return EXIT_OK;
}
