/*
** import.c — profsum_import(source [, label [, options_json]]) → trace_id.
**
**   SELECT profsum_import('run1/plugins/profile/2026_01_01/host.trace.json.gz');
**   SELECT profsum_import('run1', 'baseline', '{"warmup_steps": 2, "series": "llama"}');
**   SELECT profsum_import('summary.json');      -- a profile_summary.v1 made elsewhere
**
** source: a W&B artifact ("wandb:entity/project/name[:alias]"), a W&B run
** ("wandb-run:<target>" or a run URL: its latest jax_profile) — fetched to
** the cache, then imported as a folder with the run's metadata — or a
** trace file (gzip or plain JSON), an artifact folder (the JSON
** trace that summary-v1 §1.1 step 4 picks is read; a quality warning says
** when the reference tool would have read an XPlane instead), or a
** profile_summary.v1 JSON file.  A file is a summary when its top-level
** object has "schema_version": "profile_summary.v1" (before any
** "traceEvents"), a trace when it has "traceEvents" or is an array; the
** top level is walked over the streamed bytes and the walk stops at the
** first of those keys (json_kind.c).  An object with neither key is read
** as a trace (with no events, as the trace reader allows); one with
** another schema_version and no traceEvents is an error.
**
** options_json keys: warmup_steps (5), hot_op_limit (25), breakdown_mode
** ('exclusive_per_track' | 'exclusive_global'), series (NULL), store_events
** (false: when true the raw rows of trace_events are kept in
** profsum_event), schema ('main': an attached database to write into),
** replace (false: re-importing under an existing label is an error).
**
** The trace is parsed before any lock is taken; the writing is one
** transaction with the write lock taken first (busy.c: retries SQLITE_BUSY
** within the connection's busy timeout), so a failure leaves the database
** exactly as it was and concurrent importers do not see "database is
** locked".  The schema (sql/schema.sql) and views (views/) are created in the
** target schema on first use, in that same transaction, so a failed first
** import leaves nothing behind.  The parse probes for sqlite3_interrupt()
** (see importInOneWrite).
**
** Security: reads files, so SQLITE_DIRECTONLY (never from a view or
** trigger stored in a database).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "summary_doc.h"
#include "hash.h"
#include "find.h"
#include "busy.h"
#include "pycompat.h"
#include "jsontree.h"
#include "json_kind.h"
#include "insights.h"

#include <errno.h>
#include <pthread.h>
#if !defined(__APPLE__)
#define PROFSUM_BG_PARSE 1      /* the first import's parse thread (BgParse) */
#include <semaphore.h>
#if defined(__GLIBC__) && (__GLIBC__>2 || (__GLIBC__==2 && __GLIBC_MINOR__>=30))
#define PROFSUM_SEM_CLOCK 1     /* sem_clockwait: waits on CLOCK_MONOTONIC */
#endif
#endif
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define FN "profsum_import"

/* Parsed options. */
typedef struct ImportOpts {
  int warmup, hotOpLimit, globalMode, storeEvents, replace;
  int reuse;                  /* return a stored trace of the same file and options */
  int uniqueLabel;            /* a taken label gets a -2, -3, ... suffix */
  char *zSeries;              /* sqlite3_malloc'd or NULL */
  char *zAlias;               /* W&B run sources: the artifact alias (NULL: latest) */
  char *zSchema;              /* sqlite3_malloc'd ("main" by default) */
  char *zDevicePeaks;         /* "device_peaks": the JSON object's text, or NULL */
  char *zSession;             /* "session": reference (NULL), latest, all or a folder name */
  int hostsAll;               /* "hosts": 'all' (1) or 'one' (0, the default) */
  int diagAll;                /* "store_diagnostics": 'all' (1) or 'compact' (0) */
} ImportOpts;

/*
** Phase timers, for profiling only: a build with -DPROFSUM_PHASE_TIMES
** (`make build/phases/profsum.so`; bench/phases.py reads its output) writes
** one line per import to stderr, the milliseconds of each phase:
**   profsum phases ms: pre P parse P begin P schema P label P write P
**   warnings P sections-build P sections-store P commit P free P
** where "commit" is everything from the stored sections to the end of the
** transaction (COMMIT and its fdatasync).  Other builds compile the marks
** to nothing.  The marks of one import are kept per thread: imports in
** several threads at once do not mix them.
*/
#ifdef PROFSUM_PHASE_TIMES
# include <stdio.h>
# include <time.h>
# define PHASE_N 12
static _Thread_local double phaseAt[PHASE_N];
static void phaseMark(int i){
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  phaseAt[i] = (double)t.tv_sec*1e3 + (double)t.tv_nsec/1e6;
}
static void phaseReport(void){
  static const char *azName[PHASE_N] = {"", "pre", "parse", "begin", "schema", "label", "write",
      "warnings", "sections-build", "sections-store", "commit", "free"};
  char z[512];
  int i, n = 0;
  n += snprintf(z+n, sizeof(z)-(size_t)n, "profsum phases ms:");
  for(i=1; i<PHASE_N && n<(int)sizeof(z); i++){
    n += snprintf(z+n, sizeof(z)-(size_t)n, " %s %.3f", azName[i], phaseAt[i]-phaseAt[i-1]);
  }
  fprintf(stderr, "%s\n", z);
}
# define PHASE(i) phaseMark(i)
#else
# define PHASE(i) ((void)0)
#endif

/* Parse options_json (NULL → defaults).  Unknown keys are an error (a
** typo must not be silently ignored). */
static int parseOpts(sqlite3 *db, const char *zJson, ImportOpts *o, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc;
  memset(o, 0, sizeof(*o));
  o->warmup = 5;
  o->hotOpLimit = 25;
  o->zSchema = sqlite3_mprintf("main");
  if( o->zSchema==0 ) return SQLITE_NOMEM;
  if( zJson==0 ) return SQLITE_OK;
  {
    /* SQLite's JSON functions say only "malformed JSON": jParse() says where */
    char *zE = 0;
    JNode *pChk = jParse(zJson, -1, &zE);
    if( pChk==0 ){
      if( zE==0 ) return SQLITE_NOMEM;
      *pzErr = sqlite3_mprintf(FN ": options_json: %s", zE);
      sqlite3_free(zE);
      return SQLITE_ERROR;
    }
    if( pChk->type!=JT_OBJECT ){     /* json_each() of [] would give no row */
      jFree(pChk);
      *pzErr = sqlite3_mprintf(FN ": options_json must be a JSON object");
      return SQLITE_ERROR;
    }
    jFree(pChk);
  }
  rc = sqlite3_prepare_v2(db, "SELECT json_type(?1), key, value, type FROM json_each(?1)", -1, &p, 0);
  if( rc ){
    /* the database's or the connection's failure (the JSON is checked above) */
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_bind_text(p, 1, zJson, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    const char *zType = (const char*)sqlite3_column_text(p, 0);
    const char *zKey = (const char*)sqlite3_column_text(p, 1);
    const char *zVT = (const char*)sqlite3_column_text(p, 3);
    int isInt = zVT && strcmp(zVT, "integer")==0;
    int isText = zVT && strcmp(zVT, "text")==0;
    int isBool = zVT && (strcmp(zVT, "true")==0 || strcmp(zVT, "false")==0);
    /* a flag: true/false, or the integers 1/0 (not 2 or -1: a slip) */
    int isFlag = isBool || (isInt && (unsigned long long)sqlite3_column_int64(p, 2)<=1);
    int flagOn = isFlag && (isBool ? zVT[0]=='t' : sqlite3_column_int64(p, 2)==1);
    if( zType==0 || strcmp(zType, "object")!=0 ){
      *pzErr = sqlite3_mprintf(FN ": options_json must be a JSON object");
      rc = SQLITE_ERROR; break;
    }
    if( zKey==0 ) continue;
    if( strcmp(zKey, "warmup_steps")==0 && isInt && sqlite3_column_int64(p, 2)>=0 ){
      o->warmup = (int)sqlite3_column_int64(p, 2);
    }else if( strcmp(zKey, "hot_op_limit")==0 && isInt && sqlite3_column_int64(p, 2)>=0 ){
      o->hotOpLimit = (int)sqlite3_column_int64(p, 2);
    }else if( strcmp(zKey, "breakdown_mode")==0 && isText ){
      const char *z = (const char*)sqlite3_column_text(p, 2);
      if( strcmp(z, "exclusive_per_track")==0 ) o->globalMode = 0;
      else if( strcmp(z, "exclusive_global")==0 ) o->globalMode = 1;
      else{
        *pzErr = sqlite3_mprintf(FN ": options_json: breakdown_mode must be "
            "'exclusive_per_track' or 'exclusive_global', not '%s'", z);
        rc = SQLITE_ERROR; break;
      }
    }else if( strcmp(zKey, "series")==0 && (isText || (zVT && strcmp(zVT, "null")==0)) ){
      sqlite3_free(o->zSeries);
      o->zSeries = isText ? sqlite3_mprintf("%s", sqlite3_column_text(p, 2)) : 0;
    }else if( strcmp(zKey, "store_events")==0 && isFlag ){
      o->storeEvents = flagOn;
    }else if( strcmp(zKey, "replace")==0 && isFlag ){
      o->replace = flagOn;
    }else if( strcmp(zKey, "reuse")==0 && isFlag ){
      o->reuse = flagOn;
    }else if( strcmp(zKey, "unique_label")==0 && isFlag ){
      o->uniqueLabel = flagOn;
    }else if( strcmp(zKey, "alias")==0 && ((isText && sqlite3_column_bytes(p, 2)>0)
                                            || (zVT && strcmp(zVT, "null")==0)) ){
      sqlite3_free(o->zAlias);
      o->zAlias = isText ? sqlite3_mprintf("%s", sqlite3_column_text(p, 2)) : 0;
      if( isText && o->zAlias==0 ){ rc = SQLITE_NOMEM; break; }
    }else if( strcmp(zKey, "device_peaks")==0 && zVT && strcmp(zVT, "object")==0 ){
      sqlite3_free(o->zDevicePeaks);
      o->zDevicePeaks = sqlite3_mprintf("%s", sqlite3_column_text(p, 2));
      if( o->zDevicePeaks==0 ){ rc = SQLITE_NOMEM; break; }
    }else if( strcmp(zKey, "session")==0 && isText && sqlite3_column_bytes(p, 2)>0 ){
      const char *z = (const char*)sqlite3_column_text(p, 2);
      sqlite3_free(o->zSession);
      o->zSession = strcmp(z, "reference")==0 ? 0 : sqlite3_mprintf("%s", z);
      if( o->zSession==0 && strcmp(z, "reference")!=0 ){ rc = SQLITE_NOMEM; break; }
    }else if( strcmp(zKey, "hosts")==0 && isText
              && (strcmp((const char*)sqlite3_column_text(p, 2), "one")==0
                  || strcmp((const char*)sqlite3_column_text(p, 2), "all")==0) ){
      o->hostsAll = ((const char*)sqlite3_column_text(p, 2))[0]=='a';
    }else if( strcmp(zKey, "store_diagnostics")==0 && isText
              && (strcmp((const char*)sqlite3_column_text(p, 2), "compact")==0
                  || strcmp((const char*)sqlite3_column_text(p, 2), "all")==0) ){
      o->diagAll = ((const char*)sqlite3_column_text(p, 2))[0]=='a';
    }else if( strcmp(zKey, "schema")==0 && isText ){
      sqlite3_free(o->zSchema);
      o->zSchema = sqlite3_mprintf("%s", sqlite3_column_text(p, 2));
      if( o->zSchema==0 ){ rc = SQLITE_NOMEM; break; }
    }else{
      /* what each key takes, for the message (the keys handled above) */
      static const char *azWant[] = {
        "warmup_steps", "a non-negative integer", "hot_op_limit", "a non-negative integer",
        "breakdown_mode", "'exclusive_per_track' or 'exclusive_global'",
        "series", "a string or null", "store_events", "true or false (or 1/0)",
        "schema", "a string (the name of an attached database)",
        "replace", "true or false (or 1/0)", "reuse", "true or false (or 1/0)",
        "unique_label", "true or false (or 1/0)",
        "alias", "a non-empty string or null",
        "device_peaks", "an object: device name or \"*\" -> {\"peak_flops_per_s\": x, \"peak_mem_bw_bytes_per_s\": y}",
        "session", "'reference', 'latest', 'all' or a session folder name",
        "hosts", "'one' or 'all'",
        "store_diagnostics", "'compact' or 'all'" };
      const char *zWant = 0;
      size_t w;
      for(w=0; w<sizeof(azWant)/sizeof(azWant[0]); w+=2){
        if( strcmp(zKey, azWant[w])==0 ){ zWant = azWant[w+1]; break; }
      }
      if( zWant ){
        /* the value as written: a string quoted, true/false/null as words */
        const char *zV = (const char*)sqlite3_column_text(p, 2);
        *pzErr = isText ? sqlite3_mprintf(FN ": options_json: '%s' must be %s, not \"%s\"", zKey, zWant, zV)
               : sqlite3_mprintf(FN ": options_json: '%s' must be %s, not %s", zKey, zWant,
                                 isBool || (zVT && strcmp(zVT, "null")==0) ? zVT : zV ? zV : "?");
      }else{
        sqlite3_str *pKnown = sqlite3_str_new(db);
        char *zKnown;
        for(w=0; w<sizeof(azWant)/sizeof(azWant[0]); w+=2){
          sqlite3_str_appendf(pKnown, "%s%s", w ? ", " : "", azWant[w]);
        }
        zKnown = sqlite3_str_finish(pKnown);
        *pzErr = zKnown ? sqlite3_mprintf(FN ": options_json: unknown key '%s' (known: %s)", zKey, zKnown) : 0;
        sqlite3_free(zKnown);
        if( *pzErr==0 ){ rc = SQLITE_NOMEM; break; }
      }
      rc = SQLITE_ERROR; break;
    }
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  if( rc==SQLITE_ERROR && *pzErr==0 ){
    *pzErr = sqlite3_mprintf(FN ": options_json is not valid JSON: %s", sqlite3_errmsg(db));
  }else if( rc && rc!=SQLITE_NOMEM && *pzErr==0 ){
    /* not the JSON's fault: an interrupt, a disk I/O error, ... */
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
  }
  if( rc==SQLITE_OK && o->replace && (o->reuse || o->uniqueLabel) ){
    *pzErr = o->reuse
      ? sqlite3_mprintf(FN ": options_json: 'reuse' and 'replace' exclude each other "
                        "(reuse keeps a stored trace of the same file, replace stores the file again)")
      : sqlite3_mprintf(FN ": options_json: 'unique_label' and 'replace' exclude each other "
                        "(unique_label keeps the trace that has the label, replace deletes it)");
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  sqlite3_finalize(p);
  return rc;
}

static char *prefixFn(char *zErr, int rc);
static int readAll(const char *zPath, char **pz, char **pzErr);

/* Option 'reuse': the trace_id of a trace stored in zSchema from the same
** source (source_path as given, trace_path as resolved), with the same
** options (a v1 summary file keeps its own knobs: only the series is
** compared), by the same profsum version, of the same content, and with the
** label zLabel when it is not NULL (a label the caller chose; with
** bSuffixed, also zLabel-N, the labels unique_label gives); 0 in *pId when
** there is none.
** The same content: for a trace, the same SHA-256 and size of the file
** (zSha, 64 hex digits, when the caller has them, else the file is hashed
** here, only when a stored trace matches the rest); for a v1 summary file
** (isV1; size is its size), the same size and the same document text (its
** sha256 column holds the trace's hash, from the document).  The newest
** match wins. */
static int findReusable(sqlite3 *db, const char *zSchema, const char *zSource, const char *zTrace,
                        const char *zOptsJson, int isV1, sqlite3_int64 size, const char *zSha,
                        const char *zLabel, int bSuffixed, sqlite3_int64 *pId, char **pzErr){
  sqlite3_stmt *p = 0;
  char zHex[65];
  char *z, *zDoc = 0;
  int rc, haveHash = 0;
  *pId = 0;
  if( !isV1 && zSha && zSha[0] ){ memcpy(zHex, zSha, 65); haveHash = 1; }
  rc = SQLITE_OK;
  if( profsumTableExists(db, zSchema, "profsum_trace", &rc)!=1 ){
    /* nothing imported yet, no such schema (the import says so), or a
    ** lock (checked again under the write lock); another failure (a disk
    ** I/O error, an interrupt) is said as SQLite says it */
    if( rc==SQLITE_OK || (rc & 0xff)==SQLITE_ERROR
     || (rc & 0xff)==SQLITE_BUSY || (rc & 0xff)==SQLITE_LOCKED ) return SQLITE_OK;
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    return rc;
  }
  z = sqlite3_mprintf("SELECT trace_id, sha256, size, summary_json FROM \"%w\".profsum_trace "
      "WHERE source_path=?1 AND trace_path=?2 AND profsum_version=?4 AND (summary_json IS NOT NULL)=?5 "
      "AND CASE WHEN ?5 THEN json_extract(options, '$.series') IS json_extract(?3, '$.series') "
      "ELSE options=?3 END "
      "AND (?6 IS NULL OR label=?6 OR (?7 AND substr(label, 1, length(?6)+1)=?6 || '-' "
      "AND substr(label, length(?6)+2) GLOB '[1-9]*' AND NOT substr(label, length(?6)+2) GLOB '*[^0-9]*')) "
      "ORDER BY trace_id DESC", zSchema);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc ){
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_bind_text(p, 1, zSource, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 2, zTrace, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 3, zOptsJson, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 4, PROFSUM_VERSION, -1, SQLITE_STATIC);
  sqlite3_bind_int(p, 5, isV1!=0);        /* only a v1 import keeps its document */
  if( zLabel ) sqlite3_bind_text(p, 6, zLabel, -1, SQLITE_STATIC);
  sqlite3_bind_int(p, 7, bSuffixed!=0);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    int same;
    if( isV1 ){
      const char *zStored = (const char*)sqlite3_column_text(p, 3);
      if( sqlite3_column_int64(p, 2)!=size || zStored==0 ) continue;
      if( zDoc==0 ){
        rc = readAll(zTrace, &zDoc, pzErr);
        if( rc ) break;
      }
      same = strcmp(zStored, zDoc)==0;
    }else{
      const char *zStored = (const char*)sqlite3_column_text(p, 1);
      if( zStored==0 ) continue;
      if( !haveHash ){
        rc = profsumSha256File(zTrace, zHex, &size, pzErr);
        if( rc ){ *pzErr = prefixFn(*pzErr, rc); break; }
        haveHash = 1;
      }
      same = strcmp(zStored, zHex)==0 && sqlite3_column_int64(p, 2)==size;
    }
    if( same ){
      *pId = sqlite3_column_int64(p, 0);
      rc = SQLITE_DONE;
      break;
    }
  }
  sqlite3_finalize(p);
  sqlite3_free(zDoc);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  if( rc && *pzErr==0 ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
  return rc;
}


/* Default label: the folder name, or the file name without its trace
** suffixes. */
char *profsumDefaultLabel(const char *zSource){
  const char *zBase;
  size_t n = strlen(zSource);
  static const char *azSuf[] = {".xplane.pb.gz", ".xplane.pb", ".trace.json.gz", ".json.gz",
                                 ".trace.json", ".json", ".gz"};
  size_t k;
  while( n>1 && zSource[n-1]=='/' ) n--;
  zBase = zSource + n;
  while( zBase>zSource && zBase[-1]!='/' ) zBase--;
  n = (size_t)(zSource + n - zBase);
  for(k=0; k<sizeof(azSuf)/sizeof(azSuf[0]); k++){
    size_t m = strlen(azSuf[k]);
    if( n>m && memcmp(zBase+n-m, azSuf[k], m)==0 ){ n -= m; break; }
  }
  return sqlite3_mprintf("%.*s", (int)n, zBase);
}

/* See profsum_int.h. */
int profsumTableExists(sqlite3 *db, const char *zSchema, const char *zTable, int *pRc){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_master WHERE type='table' AND name=?1", zSchema);
  int rc, yes = 0;
  if( z==0 ){ *pRc = SQLITE_NOMEM; return -1; }
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc==SQLITE_OK ){
    sqlite3_bind_text(p, 1, zTable, -1, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_ROW ){ yes = 1; rc = SQLITE_OK; }
    else if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  sqlite3_finalize(p);
  if( rc ){ *pRc = rc; return -1; }
  return yes;
}

/* The message zErr (or rc's text when there is none) prefixed with the
** function's name; takes zErr. */
static char *prefixFn(char *zErr, int rc){
  char *z = sqlite3_mprintf(FN ": %s", zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  return z;
}

/* Run one statement with printf-style formatting (%w for identifiers). */
static int execf(sqlite3 *db, char **pzErr, const char *zFmt, ...){
  va_list ap;
  char *z;
  int rc;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_exec(db, z, 0, 0, 0);
  if( rc && pzErr && *pzErr==0 ) *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
  sqlite3_free(z);
  return rc;
}

/* Append zText to the quality_warnings of trace id in schema zSchema. */
static int addWarning(sqlite3 *db, const char *zSchema, sqlite3_int64 id, char **pzErr,
                      const char *zText){
  return execf(db, pzErr, "UPDATE \"%w\".profsum_trace SET quality_warnings = "
      "json_insert(quality_warnings, '$[#]', %Q) WHERE trace_id=%lld", zSchema, zText, (long long)id);
}

/* Delete every row of trace id in schema: from each table of profsum's
** (a name starting with profsum_agg_ or profsum_sec_, or profsum_event)
** that has a trace_id column, then its profsum_trace row.  Tables are
** found in the schema, so a table added to sql/schema.sql is covered. */
static int deleteTrace(sqlite3 *db, const char *zSchema, sqlite3_int64 id, char **pzErr){
  sqlite3_stmt *q = 0;
  sqlite3_str *pList = sqlite3_str_new(db);
  char *zList = 0, *z;
  int rc;
  z = sqlite3_mprintf("SELECT m.name FROM \"%w\".sqlite_schema AS m "
      "WHERE m.type='table' AND (m.name GLOB 'profsum_agg_*' OR m.name GLOB 'profsum_sec_*' "
      "OR m.name='profsum_event') AND EXISTS (SELECT 1 FROM pragma_table_info(m.name, %Q) "
      "WHERE name='trace_id') ORDER BY m.name", zSchema, zSchema);
  if( z==0 ){ sqlite3_free(sqlite3_str_finish(pList)); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(db, z, -1, &q, 0);
  sqlite3_free(z);
  if( rc ){
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    sqlite3_free(sqlite3_str_finish(pList));
    return rc;
  }
  while( sqlite3_step(q)==SQLITE_ROW ){
    sqlite3_str_appendf(pList, "DELETE FROM \"%w\".\"%w\" WHERE trace_id=%lld;", zSchema,
                        (const char*)sqlite3_column_text(q, 0), (long long)id);
  }
  rc = sqlite3_finalize(q);
  if( rc==SQLITE_OK ) rc = sqlite3_str_errcode(pList);
  zList = sqlite3_str_finish(pList);
  if( rc==SQLITE_NOMEM ){ sqlite3_free(zList); return rc; }
  if( rc ){
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    sqlite3_free(zList);
    return rc;
  }
  if( zList ){
    rc = execf(db, pzErr, "%s", zList);
    sqlite3_free(zList);
    if( rc ) return rc;
  }
  return execf(db, pzErr, "DELETE FROM \"%w\".profsum_trace WHERE trace_id=%lld", zSchema, (long long)id);
}

/* Read a whole (possibly gzipped) file as text, at most 512 MiB. */
static int readAll(const char *zPath, char **pz, char **pzErr){
  ProfsumSrc *pSrc = 0;
  char *zErr = 0, *z = 0;
  size_t n = 0, nAlloc = 0, got;
  int rc = profsumSrcOpenFile(zPath, &pSrc, &zErr);
  while( rc==SQLITE_OK ){
    if( n+65536+1>nAlloc ){
      char *zNew;
      nAlloc = nAlloc ? nAlloc*2 : 1<<20;
      if( nAlloc>((size_t)512<<20) ){ rc = SQLITE_TOOBIG; break; }
      zNew = sqlite3_realloc64(z, nAlloc);
      if( zNew==0 ){ rc = SQLITE_NOMEM; break; }
      z = zNew;
    }
    rc = profsumSrcRead(pSrc, (unsigned char*)z+n, nAlloc-n-1, &got, &zErr);
    if( rc || got==0 ) break;
    n += got;
  }
  profsumSrcClose(pSrc);
  if( rc ){
    if( zErr ) *pzErr = sqlite3_mprintf(FN ": %s", zErr);
    else if( rc==SQLITE_TOOBIG ) *pzErr = sqlite3_mprintf(FN ": '%s': summary file larger than 512 MiB", zPath);
    sqlite3_free(zErr);
    sqlite3_free(z);
    return rc;
  }
  z[n] = 0;
  *pz = z;
  return SQLITE_OK;
}

/* Fill the tables of a trace from a stored profile_summary.v1 document
** (summary_json of its profsum_trace row), so the views work for it: each
** section's fill step (summary_doc.c's section table). */
static int fillFromV1(sqlite3 *db, const char *zS, sqlite3_int64 id, const char *zPath,
                      char **pzErr){
  return profsumDocFillFromV1(db, zS, id, FN, zPath, pzErr);
}

/* Everything one import writes, as the body of profsumWriteRun(): it runs
** inside a savepoint with the write lock held, and may run again after
** SQLITE_BUSY (so it only reads the parsed engine, never consumes it). */
typedef struct ImportJob {
  ImportOpts o;
  const char *zLabel, *zSource, *zTrace, *zRefPick, *zNow, *zOptsJson;
  const char *zPickNote;       /* a folder's other traces left aside, or 0 */
  const char *zSha;                /* v1 files: their SHA-256 (traces: the engine's) */
  const char *zRunMeta;            /* W&B run metadata JSON, or NULL */
  sqlite3_int64 size;
  int isV1;
  ProfsumEngine *pEngine;          /* the parsed trace (not v1) */
  ProfsumEngineInfo info;
  struct BgParse *pBg;             /* a parse still running in a thread, or 0 */
  ProfsumProbe *pProbe;            /* the connection's interrupt (profsum_int.h) */
  int labelGiven;                  /* zLabel was the caller's, not derived */
  sqlite3_int64 traceId;           /* out */
} ImportJob;

static int bgParseFinish(sqlite3 *db, ImportJob *j, char **pzErr);

/* Option 'unique_label': the first of zBase-2, zBase-3, ... that no trace
** in zSchema has, in *pz (sqlite3_malloc'd).  Run under the write lock, so
** two imports never choose the same. */
static int freeLabel(sqlite3 *db, const char *zSchema, const char *zBase, char **pz, char **pzErr){
  sqlite3_stmt *p = 0;
  char *z = sqlite3_mprintf("SELECT 1 FROM \"%w\".profsum_trace WHERE label=?1", zSchema);
  int rc, i;
  *pz = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc ){
    *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    return rc;
  }
  for(i=2; ; i++){
    char *zTry = sqlite3_mprintf("%s-%d", zBase, i);
    if( zTry==0 ){ rc = SQLITE_NOMEM; break; }
    sqlite3_bind_text(p, 1, zTry, -1, SQLITE_STATIC);
    rc = sqlite3_step(p);
    if( rc==SQLITE_DONE ){ *pz = zTry; rc = SQLITE_OK; break; }
    sqlite3_free(zTry);
    if( rc!=SQLITE_ROW ){
      *pzErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
      break;
    }
    sqlite3_reset(p);
  }
  sqlite3_finalize(p);
  return rc;
}

static int importBody(sqlite3 *db, void *pArg, char **pzErr){
  ImportJob *j = (ImportJob*)pArg;
  ImportOpts o = j->o;
  const char *zLabel = j->zLabel, *zSource = j->zSource, *zTrace = j->zTrace;
  const char *zRefPick = j->zRefPick, *zNow = j->zNow, *zOptsJson = j->zOptsJson;
  const char *zSha = j->zSha;
  sqlite3_int64 size = j->size, traceId = 0;
  int isV1 = j->isV1, rc;
  char *zErr = 0;
  char *zOwnLabel = 0;             /* unique_label: the free label chosen */
  sqlite3_stmt *p = 0;
  PHASE(3);
  rc = profsumCreateSchema(db, o.zSchema, &zErr);
  PHASE(4);
  if( j->pBg ){
    /* the schema was created while the trace was parsed: the parse now;
    ** its error wins over the schema's, as when it runs first */
    char *zParseErr = 0;
    int rcParse = bgParseFinish(db, j, &zParseErr);
    if( rcParse==SQLITE_OK ){ sqlite3_free(zParseErr); zParseErr = 0; }
    if( rcParse ){
      sqlite3_free(zErr);
      zErr = zParseErr;
      rc = rcParse;
      goto body_done;
    }
  }
  if( rc ){
    char *z2 = zErr ? sqlite3_mprintf(FN ": %s", zErr) : 0;
    sqlite3_free(zErr);
    zErr = z2;
    goto body_done;
  }
  if( o.reuse ){
    /* Again, under the write lock: another connection may have stored the
    ** same trace since the check before the parse (concurrent CI jobs). */
    sqlite3_int64 id = 0;
    rc = findReusable(db, o.zSchema, zSource, zTrace, zOptsJson, isV1, isV1 ? size : j->info.nFileBytes,
                      isV1 ? 0 : j->info.zSha256, j->labelGiven ? zLabel : 0, o.uniqueLabel, &id, &zErr);
    if( rc ) goto body_done;
    if( id ){ traceId = id; goto body_done; }          /* nothing written */
  }
  {
    char *z = sqlite3_mprintf("SELECT trace_id, source_path, sha256, options, profsum_version "
                              "FROM \"%w\".profsum_trace WHERE label=?1", o.zSchema);
    if( z==0 ){ rc = SQLITE_NOMEM; goto body_done; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    if( rc ){ zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db)); goto body_done; }
    sqlite3_bind_text(p, 1, zLabel, -1, SQLITE_STATIC);
    if( sqlite3_step(p)==SQLITE_ROW ){
      sqlite3_int64 old = sqlite3_column_int64(p, 0);
      if( o.uniqueLabel ){
        /* the first free label-N, chosen under the write lock */
        sqlite3_finalize(p); p = 0;
        rc = freeLabel(db, o.zSchema, zLabel, &zOwnLabel, &zErr);
        if( rc ) goto body_done;
        zLabel = zOwnLabel;
      }else if( !o.replace ){
        if( o.reuse ){
          /* say why the stored trace was not taken */
          const char *zOldSha = (const char*)sqlite3_column_text(p, 2);
          zErr = sqlite3_mprintf(FN ": a trace with label '%s' exists already (trace_id %lld) and "
              "'reuse' did not take it: that trace was imported from '%s' (SHA-256 %.12s..., options %s, "
              "profsum %s), and '%s'%s differs from it in source path, content, options or profsum "
              "version; choose another label, or pass "
              "'{\"reuse\": true, \"unique_label\": true}' to store this one as the first free '%s-N' "
              "(and take it again next time)",
              zLabel, (long long)old, sqlite3_column_text(p, 1), zOldSha ? zOldSha : "?",
              sqlite3_column_text(p, 3), sqlite3_column_text(p, 4), zSource,
              isV1 ? " (a summary file)" : "", zLabel);
        }else{
          zErr = sqlite3_mprintf(FN ": a trace with label '%s' exists already (trace_id %lld); "
              "choose another label, pass '{\"unique_label\": true}' to store this one as the first "
              "free '%s-N' (both kept), or '{\"replace\": true}' to delete that trace and store this "
              "one", zLabel, (long long)old, zLabel);
        }
        sqlite3_finalize(p); p = 0;
        rc = zErr ? SQLITE_CONSTRAINT : SQLITE_NOMEM; goto body_done;
      }else{
        sqlite3_finalize(p); p = 0;
        rc = deleteTrace(db, o.zSchema, old, &zErr);
        if( rc ) goto body_done;
      }
    }
    sqlite3_finalize(p); p = 0;
  }
  {
    char *z = sqlite3_mprintf("INSERT INTO \"%w\".profsum_trace(label, series, source_path, trace_path, "
        "source_format, sha256, size, imported_at, generated_at_utc, options, profsum_version, summary_json) "
        "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?8,?9,?10,?11)", o.zSchema);
    char *zDoc = 0;
    if( z==0 ){ rc = SQLITE_NOMEM; goto body_done; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    if( rc ){ zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db)); goto body_done; }
    if( isV1 ){
      char *zE = 0;
      rc = readAll(zTrace, &zDoc, &zErr);
      if( rc ) goto body_done;
      /* jParse()'s size limit, checked before SQLite's JSON functions read
      ** the document below (a tree of it for each statement) */
      if( jCheckSize(zDoc, -1, &zE) ){
        zErr = zE ? sqlite3_mprintf(FN ": '%s': %s", zTrace, zE) : 0;
        rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
        sqlite3_free(zE);
        sqlite3_free(zDoc);
        goto body_done;
      }
    }
    sqlite3_bind_text(p, 1, zLabel, -1, SQLITE_STATIC);
    if( o.zSeries ) sqlite3_bind_text(p, 2, o.zSeries, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 3, zSource, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 4, zTrace, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 5, isV1 ? "profile_summary_v1" : "perfetto_trace_json", -1, SQLITE_STATIC);
    if( zSha[0] ) sqlite3_bind_text(p, 6, zSha, -1, SQLITE_STATIC);
    if( isV1 ) sqlite3_bind_int64(p, 7, size);
    sqlite3_bind_text(p, 8, zNow, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 9, zOptsJson, -1, SQLITE_STATIC);
    sqlite3_bind_text(p, 10, PROFSUM_VERSION, -1, SQLITE_STATIC);
    if( zDoc ) sqlite3_bind_text(p, 11, zDoc, -1, sqlite3_free);
    rc = sqlite3_step(p);
    sqlite3_finalize(p); p = 0;
    if( rc!=SQLITE_DONE ){ zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db)); rc = SQLITE_ERROR; goto body_done; }
    traceId = sqlite3_last_insert_rowid(db);
  }
  if( isV1 ){
    char *z = 0;
    sqlite3_stmt *q = 0;
    z = sqlite3_mprintf("SELECT json_valid(summary_json) AND json_type(summary_json)='object' "
        "AND json_extract(summary_json,'$.schema_version')='profile_summary.v1' "
        "FROM \"%w\".profsum_trace WHERE trace_id=%lld", o.zSchema, (long long)traceId);
    if( z==0 ){ rc = SQLITE_NOMEM; goto body_done; }
    rc = sqlite3_prepare_v2(db, z, -1, &q, 0);
    sqlite3_free(z);
    if( rc==SQLITE_OK && sqlite3_step(q)==SQLITE_ROW && sqlite3_column_int(q, 0)==1 ){
      sqlite3_finalize(q);
      rc = fillFromV1(db, o.zSchema, traceId, zTrace, &zErr);
    }else{
      sqlite3_finalize(q);
      zErr = sqlite3_mprintf(FN ": '%s': not a valid profile_summary.v1 JSON document", zTrace);
      rc = SQLITE_ERROR;
    }
    if( rc ) goto body_done;
  }else{
    PHASE(5);
    profsumEngineSetDiagAll(j->pEngine, o.diagAll);
    rc = profsumEngineWrite(j->pEngine, db, o.zSchema, traceId, &zErr);
    if( rc==SQLITE_OK ){
      rc = profsumInsWrite(profsumEngineInsights(j->pEngine), db, o.zSchema, traceId,
                           o.zDevicePeaks, FN, &zErr);
    }
    PHASE(6);
    if( rc ) goto body_done;
    /* Extra quality warnings: where the reference would do otherwise. */
    {
      const char *azWarn[6];
      int nWarn = 0, w;
      if( j->zPickNote ) azWarn[nWarn++] = j->zPickNote;
      if( zRefPick && strcmp(zRefPick, zTrace)!=0 ) azWarn[nWarn++] =
          "The reference summarizer would read the XPlane protobuf in this folder; profsum "
          "read the JSON trace instead (same events, converted by the profiler).";
      if( j->info.arrayForm ) azWarn[nWarn++] =
          "The trace is in the JSON array form ([...] without {\"traceEvents\": ...}), which "
          "the reference summarizer rejects (it needs a top-level object); profsum read it.";
      if( j->info.noEvents ) azWarn[nWarn++] =
          "The file has no traceEvents array (absent or null): it is likely not a trace, and "
          "this summary is empty. Give the profiler's trace JSON (*.trace.json.gz or "
          "perfetto_trace.json.gz) or its profile folder.";
      if( j->info.cutOff ) azWarn[nWarn++] =
          "The trace JSON ends early (inside an entry or before its closing bracket): the file "
          "looks cut off, e.g. copied while the profiler was still writing it. The reference "
          "summarizer would reject it; profsum summarized the events before the cut: see "
          "profsum_diagnostic.";
      if( j->info.laxSyntax ) azWarn[nWarn++] =
          "The trace is not strict JSON (trailing commas or raw control characters in strings), "
          "which the reference summarizer rejects; profsum read it: see profsum_diagnostic.";
      for(w=0; rc==SQLITE_OK && w<nWarn; w++) rc = addWarning(db, o.zSchema, traceId, &zErr, azWarn[w]);
    }
    if( rc==SQLITE_OK && j->info.nRejectedByRef>0 ){
      char *zW = sqlite3_mprintf("%lld %s malformed for the reference summarizer "
          "(it would reject the whole file; first: entry %lld, %s); profsum summarized the "
          "valid events: see profsum_diagnostic.", (long long)j->info.nRejectedByRef,
          j->info.nRejectedByRef==1 ? "entry is" : "entries are",
          (long long)j->info.iFirstRejected, j->info.zFirstRejectedKind ? j->info.zFirstRejectedKind : "?");
      rc = zW ? addWarning(db, o.zSchema, traceId, &zErr, zW) : SQLITE_NOMEM;
      sqlite3_free(zW);
    }
    if( rc==SQLITE_OK && j->info.nLeftOut>0 ){
      char *zW = sqlite3_mprintf("%lld complete %s left out of the summary (first: entry %lld, "
          "%s): see profsum_diagnostic (kinds bad_ts, time_out_of_range).",
          (long long)j->info.nLeftOut, j->info.nLeftOut==1 ? "event is" : "events are",
          (long long)j->info.iFirstLeftOut,
          j->info.zFirstLeftOutWhy ? j->info.zFirstLeftOutWhy : "?");
      rc = zW ? addWarning(db, o.zSchema, traceId, &zErr, zW) : SQLITE_NOMEM;
      sqlite3_free(zW);
    }
    if( rc ) goto body_done;
    if( o.storeEvents ){
      rc = execf(db, &zErr, "CREATE TABLE IF NOT EXISTS \"%w\".profsum_event(trace_id INTEGER NOT NULL, "
          "idx INTEGER NOT NULL, ph TEXT, name TEXT, cat TEXT, pid, tid, ts INTEGER, dur INTEGER, "
          "dur_ps INTEGER, process_name TEXT, thread_name TEXT, tf_op TEXT, hlo_op TEXT, "
          "hlo_module TEXT, hlo_category TEXT, long_name TEXT, source TEXT, run_id TEXT, "
          "step_num INTEGER, flops INTEGER, bytes_accessed INTEGER, correlation_id INTEGER, "
          "group_id INTEGER, args TEXT, depth INTEGER, parent_idx INTEGER, excl INTEGER, "
          "excl_ps INTEGER, PRIMARY KEY(trace_id, idx)) WITHOUT ROWID", o.zSchema);
      if( rc==SQLITE_OK ) rc = execf(db, &zErr, "INSERT INTO \"%w\".profsum_event SELECT %lld, idx, ph, "
          "name, cat, pid, tid, ts, dur, dur_ps, process_name, thread_name, tf_op, hlo_op, hlo_module, "
          "hlo_category, long_name, source, run_id, step_num, flops, bytes_accessed, correlation_id, "
          "group_id, args, depth, parent_idx, excl, excl_ps FROM trace_events(%Q)",
          o.zSchema, (long long)traceId, zTrace);
      if( rc ) goto body_done;
    }
  }
  if( j->zRunMeta ){
    rc = execf(db, &zErr, "UPDATE \"%w\".profsum_trace SET run_metadata=%Q WHERE trace_id=%lld",
               o.zSchema, j->zRunMeta, (long long)traceId);
    if( rc ) goto body_done;
  }
  /* Stage B: the sections for the import's knobs. */
  {
    ProfsumKnobs k;
    ProfsumDoc *pDoc = 0;
    k.warmupSteps = o.warmup;
    k.hotOpLimit = o.hotOpLimit;
    k.globalMode = o.globalMode;
    PHASE(7);
    rc = profsumDocBuildSections(db, o.zSchema, traceId, &k, &pDoc, &zErr);
    PHASE(8);
    if( rc==SQLITE_OK ) rc = profsumDocStoreSections(db, o.zSchema, traceId, pDoc, &zErr);
    PHASE(9);
    profsumDocFree(pDoc);
    if( rc ){
      if( zErr && strncmp(zErr, FN, strlen(FN))!=0 ){
        char *z2 = sqlite3_mprintf(FN ": %s", zErr);
        sqlite3_free(zErr);
        zErr = z2;
      }
      goto body_done;
    }
  }

body_done:
  sqlite3_finalize(p);
  sqlite3_free(zOwnLabel);
  j->traceId = traceId;
  if( (rc & 0xff)==SQLITE_BUSY ){ sqlite3_free(zErr); zErr = 0; }   /* retried */
  *pzErr = zErr;
  return rc;
}

#if PROFSUM_BG_PARSE
/* A first import parses in a thread of its own while this one creates the
** schema (3 to 4 ms of SQLite's parsing of the CREATE statements, most of a
** small import's fixed cost): the parse needs no connection, and the two
** cores are not both busy during a parse (the inflate thread waits for the
** scanner most of the time). */
typedef struct BgParse {
  const char *zTrace;
  pthread_t thread;
  sem_t done;                    /* posted by the parse thread when it returns */
  int stop;                      /* set by the connection's thread: give up */
  int rc;                        /* the parse's result, once done */
  char *zErr;
  ProfsumEngine *pEngine;
  ProfsumEngineInfo info;
} BgParse;

/* ProfsumStopFn of the parse thread: the stop flag (the connection is the
** other thread's, which watches the interrupt). */
static int bgStop(void *pArg){
  return __atomic_load_n(&((BgParse*)pArg)->stop, __ATOMIC_RELAXED);
}

static void *bgMain(void *pArg){
  BgParse *b = (BgParse*)pArg;
  /* the file's reads hear the stop flag too (profsumStopPush) */
  ProfsumStopCheck prev = profsumStopPush(bgStop, b);
  b->rc = profsumEngineParse(FN, b->zTrace, bgStop, b, &b->pEngine, &b->info, &b->zErr);
  profsumStopPop(prev);
  sem_post(&b->done);
  return 0;
}

/* Start the parse of zTrace in a thread: 0 when it could not start (the
** caller then parses in its own thread). */
static BgParse *bgStart(const char *zTrace){
  BgParse *b = sqlite3_malloc64(sizeof(*b));
  if( b==0 ) return 0;
  memset(b, 0, sizeof(*b));
  b->zTrace = zTrace;
  if( sem_init(&b->done, 0, 0) ){ sqlite3_free(b); return 0; }
  if( pthread_create(&b->thread, 0, bgMain, b) ){
    sem_destroy(&b->done);
    sqlite3_free(b);
    return 0;
  }
  return b;
}

/* Stop (when still running) and join the parse thread, free b and what the
** parse made. */
static void bgDiscard(BgParse *b){
  if( b==0 ) return;
  __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
  pthread_join(b->thread, 0);
  sem_destroy(&b->done);
  profsumEngineFree(b->pEngine);
  sqlite3_free(b->zErr);
  sqlite3_free(b);
}

/* In importBody, once the schema is created: wait for the parse thread,
** asking the connection every 10 ms whether it was interrupted (then the
** parse is told to stop, and returns within PROFSUM_STOP_BYTES of data),
** and take its engine into j.  Returns the parse's result (its message in
** *pzErr). */
static int bgParseFinish(sqlite3 *db, ImportJob *j, char **pzErr){
  BgParse *b = j->pBg;
  ProfsumProbe probe;
  int rc;
  memset(&probe, 0, sizeof(probe));
  probe.db = db;
  for(;;){
    struct timespec t;
    int ok;
#if PROFSUM_SEM_CLOCK
    clock_gettime(CLOCK_MONOTONIC, &t);          /* not moved by clock changes */
#else
    clock_gettime(CLOCK_REALTIME, &t);
#endif
    t.tv_nsec += 10*1000*1000;
    if( t.tv_nsec>=1000000000 ){ t.tv_sec++; t.tv_nsec -= 1000000000; }
#if PROFSUM_SEM_CLOCK
    ok = sem_clockwait(&b->done, CLOCK_MONOTONIC, &t)==0;
#else
    ok = sem_timedwait(&b->done, &t)==0;
#endif
    if( ok ) break;
    if( errno!=ETIMEDOUT && errno!=EINTR ){
      /* cannot wait with a timeout: wait for the thread's end, without
      ** watching the interrupt (pthread_join below) */
      while( sem_wait(&b->done)!=0 && errno==EINTR ){}
      break;
    }
    if( profsumInterrupted(&probe) ) __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
  }
  profsumProbeDone(&probe);
  pthread_join(b->thread, 0);
  sem_destroy(&b->done);
  rc = b->rc;
  j->pEngine = b->pEngine;
  j->info = b->info;
  *pzErr = b->zErr;
  sqlite3_free(b);
  j->pBg = 0;
  return rc;
}
#else
/* Without unnamed semaphores (macOS): every import parses first. */
typedef struct BgParse BgParse;
static BgParse *bgStart(const char *zTrace){ (void)zTrace; return 0; }
static void bgDiscard(BgParse *b){ (void)b; }
static int bgParseFinish(sqlite3 *db, ImportJob *j, char **pzErr){
  (void)db; (void)j; *pzErr = 0; return SQLITE_OK;
}
#endif

/* Is this import one that parses in a thread while it creates the schema
** (see BgParse)?  Only the first import into a new database (an empty
** file, or an in-memory database without the schema), called outside any
** transaction, of a trace of at most PROFSUM_BG_MAX_BYTES on disk: the
** write lock is then held during the parse, which must not keep the
** writers of a shared database waiting (an existing file takes the usual
** path: parse, then a short write), nor for the seconds a big trace takes
** (where the 3 to 4 ms would not show anyway).  Decided without reading the
** database (a read could wait for a lock). */
#define PROFSUM_BG_MAX_BYTES (64*1024*1024)
static int bgParseWanted(sqlite3 *db, const char *zSchema, const char *zTrace){
#if !PROFSUM_BG_PARSE
  (void)db; (void)zSchema; (void)zTrace;
  return 0;                           /* no unnamed semaphores (sem_init) */
#else
  struct stat st;
  const char *zFile;
  if( !profsumThreadsAllowed() || !sqlite3_get_autocommit(db)
   || sqlite3_txn_state(db, 0)!=SQLITE_TXN_NONE ) return 0;
  if( stat(zTrace, &st)!=0 || !S_ISREG(st.st_mode) || st.st_size>PROFSUM_BG_MAX_BYTES ) return 0;
  zFile = sqlite3_db_filename(db, zSchema);
  if( zFile==0 ) return 0;                           /* no such schema */
  if( zFile[0]==0 ) return !profsumSchemaCurrent(db, zSchema);   /* in memory */
  return stat(zFile, &st)!=0 || st.st_size==0;
#endif
}

/* Parse zTrace, then write it, as one write on db (busy.c): if anything
** fails, nothing is written, the schema of a first import included
** (importBody creates what is missing of it in the same transaction).
** The parse takes no lock and runs before the transaction begins, so an
** interrupt seen during it (the file's reads ask every PROFSUM_STOP_BYTES
** of data, the engine every 16,384 entries) ends the import cleanly.  The
** first import into a new database (bgParseWanted) instead
** parses in a thread while importBody creates the schema, and holds the
** write lock while it waits for the parse; an interrupt then rolls the
** transaction back (busy.c's rescue statement). */
static int importInOneWrite(sqlite3 *db, ImportJob *job, char **pzErr){
  int rc;
  if( bgParseWanted(db, job->o.zSchema, job->zTrace) ){
    job->pBg = bgStart(job->zTrace);
    if( job->pBg ){
      rc = profsumWriteRun(db, job->o.zSchema, importBody, job, pzErr);
      bgDiscard(job->pBg);                /* when the body ended before the wait */
      job->pBg = 0;
      return rc;
    }
  }
  PHASE(1);
  rc = profsumEngineParse(FN, job->zTrace, profsumInterrupted, job->pProbe, &job->pEngine,
                          &job->info, pzErr);
  PHASE(2);
  if( rc ) return rc;
  rc = profsumWriteRun(db, job->o.zSchema, importBody, job, pzErr);
  PHASE(10);
  return rc;
}

/* The remote sources (W&B), set once at registration (atomic: several
** connections may load the extension at once). */
static const ProfsumRemoteSource *pImportRemote = 0;

/* See profsum_int.h. */
void profsumImportSetRemote(const ProfsumRemoteSource *p){
  __atomic_store_n(&pImportRemote, p, __ATOMIC_RELEASE);
}

/* The remote sources, or 0 when none were set. */
static const ProfsumRemoteSource *importRemote(void){
  return __atomic_load_n(&pImportRemote, __ATOMIC_ACQUIRE);
}

/* Is zSource a remote source (a W&B reference) rather than a path? */
static int isRemoteSource(const char *zSource){
  const ProfsumRemoteSource *r = importRemote();
  return r!=0 && r->xIsSource(zSource);
}

/* The SQL function. */
static void importFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zSource = 0;
  char *zLabel = 0, *zErr = 0, *zTrace = 0, *zRefPick = 0, *zOptsJson = 0;
  char *zPickNote = 0;         /* other traces of the folder left aside (find.h) */
  ImportOpts o;
  int rc, isDir = 0, isV1 = 0;
  ImportJob job;
  char *zWandbDir = 0, *zRunMeta = 0;   /* W&B sources: fetched folder, run metadata */
  const char *zReadFrom;                /* the local path read (zSource, or the fetched folder) */
  struct stat st;
  char zSha[65], zNow[40];
  sqlite3_int64 size = 0, traceId = 0;
  sqlite3_stmt *p = 0;
  ProfsumProbe probe;          /* the connection's interrupt, for every read */
  ProfsumStopCheck prevStop;

  memset(&o, 0, sizeof(o));
  memset(&job, 0, sizeof(job));
  memset(&probe, 0, sizeof(probe));
  probe.db = db;
  job.pProbe = &probe;
  PHASE(0);
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT ){
    profsumCtxErr(ctx, FN ": SOURCE must be a path (text)");
    return;
  }
  /* Every file this import reads in this thread (the kind check, the
  ** parse, a summary file) stops at an interrupt (profsumStopPush). */
  prevStop = profsumStopPush(profsumInterrupted, &probe);
  zSource = (const char*)sqlite3_value_text(argv[0]);
  zReadFrom = zSource;
  rc = parseOpts(db, argc>2 && sqlite3_value_type(argv[2])!=SQLITE_NULL
                     ? (const char*)sqlite3_value_text(argv[2]) : 0, &o, &zErr);
  if( rc ) goto done;
  if( o.zAlias && (!isRemoteSource(zSource) || strncmp(zSource, "wandb:", 6)==0) ){
    /* an artifact ref names its version itself (wandb:e/p/name:alias) */
    zErr = sqlite3_mprintf(FN ": options_json: 'alias' applies to W&B run sources "
        "(wandb-run:<target> or a run URL), not to '%s'%s", zSource,
        strncmp(zSource, "wandb:", 6)==0 ? "; put the alias in the reference: wandb:ENTITY/PROJECT/NAME:ALIAS" : "");
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  if( isRemoteSource(zSource) ){
    /* Fetch (or find in the cache) the artifact, then import its folder
    ** with the run's metadata. */
    rc = importRemote()->xFetch(db, zSource, o.zAlias, &zWandbDir, &zRunMeta, &zErr);
    if( rc ){
      zErr = prefixFn(zErr, rc);
      goto done;
    }
    zReadFrom = zWandbDir;
  }
  if( stat(zReadFrom, &st)!=0 ){
    zErr = sqlite3_mprintf(FN ": '%s': %s", zReadFrom, strerror(errno));
    rc = SQLITE_CANTOPEN; goto done;
  }
  isDir = S_ISDIR(st.st_mode);
  if( !isDir && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) ){
    /* The import reads a file more than once (its top-level keys, then the
    ** events, the summary's SHA-256 on the way): a pipe would lose data. */
    zErr = sqlite3_mprintf(FN ": '%s' is not a regular file (%s): the import reads "
        "the file more than once; write it to a file first", zReadFrom,
        S_ISFIFO(st.st_mode) ? "a pipe?" : S_ISCHR(st.st_mode) ? "a character device"
        : S_ISSOCK(st.st_mode) ? "a socket" : "an unusual file");
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  if( isDir ){
    rc = profsumPickTraceNote(zReadFrom, &zTrace, &zRefPick, &zPickNote, &zErr);
    if( rc ){
      /* No trace JSON in the folder: the code of a file that cannot be
      ** opened, as for a missing file (SQLITE_NOTFOUND is SQLite's code for
      ** an unknown file-control opcode; Python raises it as InternalError). */
      if( rc==SQLITE_NOTFOUND ) rc = SQLITE_CANTOPEN;
      zErr = prefixFn(zErr, rc);
      goto done;
    }
  }else{
    zTrace = sqlite3_mprintf("%s", zReadFrom);
    if( zTrace==0 ){ rc = SQLITE_NOMEM; goto done; }
    /* A summary or a trace: by the top-level keys (profsumJsonFileKind). */
    {
      char *zSchemaV = 0;
      int kind = profsumJsonFileKind(zTrace, &zSchemaV);
      isV1 = kind==PSK_V1;
      if( kind==PSK_NOMEM ){ rc = SQLITE_NOMEM; goto done; }
      if( kind==PSK_SCHEMA ){
        /* Not read as an empty trace: it says it is another document. */
        zErr = sqlite3_mprintf(FN ": '%s': its schema_version is %s, not 'profile_summary.v1', "
            "and it has no \"traceEvents\": neither a summary profsum reads nor a trace",
            zTrace, zSchemaV ? zSchemaV : "?");
        sqlite3_free(zSchemaV);
        rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
        goto done;
      }
      sqlite3_free(zSchemaV);
    }
  }
  if( argc>1 && sqlite3_value_type(argv[1])!=SQLITE_NULL ){
    zLabel = sqlite3_mprintf("%s", sqlite3_value_text(argv[1]));
  }else if( zRunMeta ){
    /* A W&B source: the artifact name (e.g. run-abc-profiler:v3). */
    JNode *m = jParse(zRunMeta, -1, 0);
    JNode *a = jGet(m, "artifact_name");
    zLabel = (a && a->type==JT_STRING) ? sqlite3_mprintf("%s", a->z) : profsumDefaultLabel(zReadFrom);
    jFree(m);
  }else{
    zLabel = profsumDefaultLabel(zSource);
  }
  if( zLabel==0 ){ rc = SQLITE_NOMEM; goto done; }
  if( zLabel[0]==0 ){
    zErr = sqlite3_mprintf(FN ": the label must not be empty");
    rc = SQLITE_ERROR; goto done;
  }
  if( isV1 ){
    /* A trace is hashed while the engine reads it; a v1 file here. */
    rc = profsumSha256File(zTrace, zSha, &size, &zErr);
    if( rc ){
      zErr = prefixFn(zErr, rc);
      goto done;
    }
  }else{
    zSha[0] = 0;
  }
  profsumNowIso(zNow, sizeof(zNow));   /* ISO-8601 UTC, µs, Z (compare.c) */
  zOptsJson = sqlite3_mprintf("{\"breakdown_mode\":\"%s\",\"hot_op_limit\":%d,\"series\":%s%s%s,"
      "\"store_events\":%s,\"warmup_steps\":%d}",
      o.globalMode ? "exclusive_global" : "exclusive_per_track", o.hotOpLimit,
      o.zSeries ? "\"" : "", o.zSeries ? o.zSeries : "null", o.zSeries ? "\"" : "",
      o.storeEvents ? "true" : "false", o.warmup);
  if( zOptsJson==0 ){ rc = SQLITE_NOMEM; goto done; }
  if( o.zSeries ){
    /* re-quote the series properly as JSON */
    char *z = sqlite3_mprintf("SELECT json_set(?1, '$.series', ?2)");
    sqlite3_stmt *q = 0;
    if( z==0 ){ rc = SQLITE_NOMEM; goto done; }
    rc = sqlite3_prepare_v2(db, z, -1, &q, 0);
    sqlite3_free(z);
    if( rc ){
      if( rc!=SQLITE_NOMEM ) zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
      goto done;
    }
    sqlite3_free(zOptsJson);
    zOptsJson = sqlite3_mprintf("{\"breakdown_mode\":\"%s\",\"hot_op_limit\":%d,\"series\":null,"
      "\"store_events\":%s,\"warmup_steps\":%d}", o.globalMode ? "exclusive_global" : "exclusive_per_track",
      o.hotOpLimit, o.storeEvents ? "true" : "false", o.warmup);
    sqlite3_bind_text(q, 1, zOptsJson, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, o.zSeries, -1, SQLITE_STATIC);
    rc = sqlite3_step(q);
    if( rc==SQLITE_ROW ){
      char *zNew = sqlite3_mprintf("%s", sqlite3_column_text(q, 0));
      sqlite3_free(zOptsJson);
      zOptsJson = zNew;
      rc = SQLITE_OK;
    }else{
      /* not stored with a null series: the step's own error */
      rc = sqlite3_extended_errcode(db);
      if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
      if( rc!=SQLITE_NOMEM ) zErr = sqlite3_mprintf(FN ": %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(q);
    if( rc ) goto done;
    if( zOptsJson==0 ){ rc = SQLITE_NOMEM; goto done; }
  }

  job.labelGiven = argc>1 && sqlite3_value_type(argv[1])!=SQLITE_NULL;
  if( o.reuse ){
    /* before the parse, to skip it (checked again under the write lock) */
    rc = findReusable(db, o.zSchema, zSource, zTrace, zOptsJson, isV1, size, 0,
                      job.labelGiven ? zLabel : 0, o.uniqueLabel, &traceId, &zErr);
    if( rc || traceId ) goto done;
    if( sqlite3_db_readonly(db, o.zSchema)==1 ){
      zErr = sqlite3_mprintf(FN ": '%s': no stored trace matches it for 'reuse' (the same source, "
          "content, options and profsum version%s), and the database is read-only", zSource,
          !job.labelGiven ? "" : o.uniqueLabel ? ", and this label or label-N" : ", and this label");
      rc = zErr ? SQLITE_READONLY : SQLITE_NOMEM;
      goto done;
    }
  }

  /* Parse and write in one transaction, with the write lock taken first
  ** and SQLITE_BUSY retried (busy.c). */
  job.o = o;
  job.zLabel = zLabel; job.zSource = zSource; job.zTrace = zTrace; job.zRefPick = zRefPick;
  job.zPickNote = zPickNote;
  job.zNow = zNow; job.zOptsJson = zOptsJson; job.zSha = zSha; job.size = size; job.isV1 = isV1;
  job.zRunMeta = zRunMeta;
  if( isV1 ){
    rc = profsumWriteRun(db, o.zSchema, importBody, &job, &zErr);
  }else{
    rc = importInOneWrite(db, &job, &zErr);
  }
  traceId = job.traceId;
  if( rc && zErr && strncmp(zErr, FN, strlen(FN))!=0 ){
    char *z2 = sqlite3_mprintf(FN ": %s", zErr);
    sqlite3_free(zErr);
    zErr = z2;
  }

done:
  profsumStopPop(prevStop);
  profsumProbeDone(&probe);
  sqlite3_finalize(p);
  profsumEngineFree(job.pEngine);
#ifdef PROFSUM_PHASE_TIMES
  PHASE(11);
  /* only an import that went through every mark in order: a trace parsed
  ** here, then written (not a v1 file, not the first import's background
  ** parse, not a stored trace taken again) */
  if( rc==SQLITE_OK && phaseAt[1]>=phaseAt[0] && phaseAt[9]>=phaseAt[1] && phaseAt[10]>=phaseAt[9] ){
    phaseReport();
  }
#endif
  sqlite3_free(zWandbDir);
  sqlite3_free(zRunMeta);
  if( rc==SQLITE_NOMEM && zErr==0 ){
    /* name the function and the source (SQLite's bare message when even
    ** that cannot be made) */
    zErr = sqlite3_mprintf(FN ": '%s': out of memory", zSource ? zSource : "");
  }
  if( rc==SQLITE_OK ){
    sqlite3_result_int64(ctx, traceId);
  }else if( rc==SQLITE_NOMEM && zErr==0 ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error(ctx, zErr ? zErr : sqlite3_errstr(rc), -1);
    sqlite3_result_error_code(ctx, rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc);
  }
  sqlite3_free(zErr);
  sqlite3_free(zLabel);
  sqlite3_free(zTrace);
  sqlite3_free(zRefPick);
  sqlite3_free(zPickNote);
  sqlite3_free(zOptsJson);
  sqlite3_free(o.zSeries);
  sqlite3_free(o.zAlias);
  sqlite3_free(o.zSchema);
  sqlite3_free(o.zDevicePeaks);
  sqlite3_free(o.zSession);
}

/* See profsum_int.h. */
int profsumRegisterImport(sqlite3 *db, char **pzErr){
  int rc = SQLITE_OK, n;
  (void)pzErr;
  /* Reads files and writes tables: DIRECTONLY, never DETERMINISTIC. */
  for(n=1; n<=3 && rc==SQLITE_OK; n++){
    rc = sqlite3_create_function(db, "profsum_import", n, SQLITE_UTF8|SQLITE_DIRECTONLY,
                                 0, importFunc, 0, 0);
  }
  return rc;
}
