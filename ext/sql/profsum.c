/*
** profsum.c — entry point of the profsum SQLite extension.
**
** Load with:   .load ./profsum        (sqlite3 shell)
**              conn.load_extension("./profsum.so")   (Python)
**
** This is the only file that defines the sqlite3_api pointer
** (SQLITE_EXTENSION_INIT1).  It registers every part of the extension
** (each file exposes one profsumRegisterX function, see profsum_int.h) and
** holds the two informational functions:
**
**   profsum_version()  → the profsum version string, e.g. '0.1.0'
**   profsum_debug()    → multi-line text: versions of profsum, SQLite
**                        (compile time and run time), zlib and libcurl,
**                        the build flags and the sources' fingerprint.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include "profsum_int.h"
#include "utf8rule.h"
#include "hash.h"
#include "wandb.h"
#include "session.h"

#include <stdarg.h>
#include <zlib.h>
#include "curl_lazy.h"
#include "report_profsum.h"
#include "summary_engine.h"
#include "xplane_rows.h"    /* profsumXRowsMemoHits */
#include "build_id.h"     /* generated: PROFSUM_BUILD_ID (Makefile) */

#ifndef PROFSUM_BUILD_FLAGS
# define PROFSUM_BUILD_FLAGS "unknown"
#endif
#ifndef PROFSUM_COMMIT
# define PROFSUM_COMMIT "unknown"
#endif

/* The calls that would bring up the attached databases (temp aside) that
** hold profsum tables of another profsum's schema, "SELECT
** profsum_upgrade('h')" joined by " and ", or 0 when there is none (or
** out of memory).  For an error message: a failure to read leaves it out. */
static char *staleSchemas(sqlite3 *db){
  sqlite3_stmt *p = 0;
  sqlite3_str *pOut;
  int n = 0;
  if( sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list WHERE name<>'temp'", -1, &p, 0) ){
    sqlite3_finalize(p);
    return 0;
  }
  pOut = sqlite3_str_new(db);
  while( sqlite3_step(p)==SQLITE_ROW ){
    const char *zS = (const char*)sqlite3_column_text(p, 0);
    int rc = SQLITE_OK;
    if( zS && profsumTableExists(db, zS, "profsum_trace", &rc)==1 && !profsumSchemaCurrent(db, zS) ){
      if( strcmp(zS, "main")==0 ){
        sqlite3_str_appendf(pOut, "%sSELECT profsum_upgrade()", n++ ? " and " : "");
      }else{
        sqlite3_str_appendf(pOut, "%sSELECT profsum_upgrade(%Q)", n++ ? " and " : "", zS);
      }
    }
  }
  sqlite3_finalize(p);
  if( n==0 ){ sqlite3_free(sqlite3_str_finish(pOut)); return 0; }
  return sqlite3_str_finish(pOut);
}

/* See profsum_int.h. */
int profsumCtxErrV(sqlite3_context *ctx, const char *zFmt, va_list ap){
  char *z = profsumUtf8Scrub(sqlite3_vmprintf(zFmt, ap));
  if( z==0 ){
    sqlite3_result_error_nomem(ctx);
    return SQLITE_NOMEM;
  }
  if( strstr(z, "no such column")!=0 || strstr(z, "no such table")!=0 ){
    /* a database made by another profsum (a reading function does not
    ** change the schema): say how to bring it up */
    char *zOld = staleSchemas(sqlite3_context_db_handle(ctx));
    if( zOld ){
      char *z2 = sqlite3_mprintf("%s (made by another profsum build: %s brings its schema to "
                                 "this one's, as any import does)", z, zOld);
      if( z2 ){ sqlite3_free(z); z = z2; }
      sqlite3_free(zOld);
    }
  }
  sqlite3_result_error(ctx, z, -1);
  sqlite3_free(z);
  return SQLITE_OK;
}

/* See profsum_int.h. */
void profsumCtxErr(sqlite3_context *ctx, const char *zFmt, ...){
  va_list ap;
  va_start(ap, zFmt);
  profsumCtxErrV(ctx, zFmt, ap);
  va_end(ap);
}

/* See profsum_int.h. */
void profsumErrSetV(char **pzErr, const char *zFunc, const char *zPath, const char *zFmt,
                    va_list ap){
  char *z = sqlite3_vmprintf(zFmt, ap);
  sqlite3_free(*pzErr);
  if( z==0 ) *pzErr = 0;
  else if( zPath ) *pzErr = sqlite3_mprintf("%s: '%s': %s", zFunc, zPath, z);
  else *pzErr = sqlite3_mprintf("%s: %s", zFunc, z);
  sqlite3_free(z);
  *pzErr = profsumUtf8Scrub(*pzErr);
}

/* See profsum_int.h. */
void profsumVtabErr(sqlite3_vtab *pVtab, const char *zFmt, ...){
  va_list ap;
  sqlite3_free(pVtab->zErrMsg);
  va_start(ap, zFmt);
  pVtab->zErrMsg = profsumUtf8Scrub(sqlite3_vmprintf(zFmt, ap));
  va_end(ap);
}

/* See profsum_int.h. */
int profsumFinishRows(sqlite3 *db, sqlite3_stmt *p, int rc, char **pzErr){
  int rcF = sqlite3_finalize(p);
  if( rc==SQLITE_OK && rcF!=SQLITE_OK ){
    rc = rcF;
    if( rc!=SQLITE_NOMEM && pzErr && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }
  return rc;
}

/* See profsum_int.h. */
const char *profsumColText(sqlite3_stmt *p, int i, int *pRc){
  const char *z = (const char*)sqlite3_column_text(p, i);
  if( z==0 && sqlite3_column_type(p, i)!=SQLITE_NULL ) *pRc = SQLITE_NOMEM;
  return z;
}

/* See profsum_int.h. */
int profsumInterrupted(void *pArg){
  ProfsumProbe *p = (ProfsumProbe*)pArg;
  int rc;
  if( p->pStmt==0 && sqlite3_prepare_v2(p->db, "SELECT 1", -1, &p->pStmt, 0)!=SQLITE_OK ){
    return sqlite3_errcode(p->db)==SQLITE_INTERRUPT;
  }
  rc = sqlite3_step(p->pStmt);
  sqlite3_reset(p->pStmt);
  return rc==SQLITE_INTERRUPT;
}

/* See profsum_int.h. */
void profsumProbeDone(ProfsumProbe *p){
  sqlite3_finalize(p->pStmt);
  p->pStmt = 0;
}

/* profsum_version() → TEXT.  Static string, no allocation. */
static void profsumVersionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_text(ctx, PROFSUM_VERSION, -1, SQLITE_STATIC);
}

/* profsum_debug() → TEXT, one "key: value" line per fact.  INNOCUOUS (it
** may run from a view of an untrusted database), so it opens nothing:
** libcurl's version is reported only when an earlier network call of this
** process opened it, else "not loaded". */
static void profsumDebugFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  char *z;
#ifndef PROFSUM_OMIT_NETWORK
  const char *zCurl = profsumCurlLoadedVersion();
#endif
  (void)argc; (void)argv;
  z = sqlite3_mprintf(
    "profsum: %s\n"
    "commit: %s\n"
    "build_id: %s\n"
    "sqlite (compiled): %s\n"
    "sqlite (runtime): %s\n"
    "zlib (compiled): %s\n"
    "zlib (runtime): %s\n"
    "libcurl: %s\n"
    "network: %s\n"
    "sha256: %s\n"
    "build flags: %s\n"
    "record blocks mapped ahead: %lld\n"
    "xplane insight batches applied by the decoding thread: %lld\n"
    "xplane rows whose args came from their metadata's memo: %lld",
    PROFSUM_VERSION, PROFSUM_COMMIT, PROFSUM_BUILD_ID, SQLITE_VERSION, sqlite3_libversion(),
    ZLIB_VERSION, zlibVersion(),
#ifndef PROFSUM_OMIT_NETWORK
    zCurl ? zCurl : "not loaded (opened at the first network call)",
    "enabled (libcurl opened on first use)",
#else
    "not linked", "disabled (built with PROFSUM_OMIT_NETWORK)",
#endif
    profsumSha256Impl(), PROFSUM_BUILD_FLAGS, (long long)profsumEngineBlocksAhead(),
    (long long)profsumXpInsByProducer(), (long long)profsumXRowsMemoHits());
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* Every part of the extension, registered in this order (each file's
** profsumRegisterX, see profsum_int.h). */
static int (*const aRegister[])(sqlite3*, char**) = {
  profsumRegisterFuncs,      profsumRegisterTraceVtab, profsumRegisterXplane,
  profsumRegisterFind,       profsumRegisterImport,    profsumRegisterCatalog,
  profsumRegisterTrim,       profsumRegisterReportHtml, profsumRegisterSummaryDoc,
  profsumRegisterCompare,    profsumRegisterQuery,     profsumRegisterWandb,
  profsumRegisterReportProfsum, profsumRegisterSession,    profsumRegisterSchema,
};

/* The W&B sources of profsum_import (net layer). */
static const ProfsumRemoteSource wandbRemote = {
  profsumWandbIsSource, profsumWandbFetchForImport
};

/*
** Extension entry point.  Registers everything; on the first failure
** returns its code with *pzErrMsg naming the part that failed.  The only
** symbol profsum.so exports (the Makefile builds it with
** -fvisibility=hidden).
*/
#ifdef _WIN32
__declspec(dllexport)
#elif defined(__GNUC__)
__attribute__((visibility("default")))
#endif
int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg,
                         const sqlite3_api_routines *pApi){
  int rc, i;
  SQLITE_EXTENSION_INIT2(pApi);
  /* Pure: DETERMINISTIC|INNOCUOUS (safe in views, triggers, indexes). */
  rc = sqlite3_create_function(db, "profsum_version", 0,
         SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS, 0,
         profsumVersionFunc, 0, 0);
  /* Not DETERMINISTIC: reports the run-time library versions. */
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_debug", 0,
         SQLITE_UTF8|SQLITE_INNOCUOUS, 0, profsumDebugFunc, 0, 0);
  /* Sources profsum_import reads through the network layer (W&B refs):
  ** the summary layer below cannot include it, so it is told here. */
  profsumImportSetRemote(&wandbRemote);
  for(i=0; rc==SQLITE_OK && i<(int)(sizeof(aRegister)/sizeof(aRegister[0])); i++){
    rc = aRegister[i](db, pzErrMsg);
  }
  if( rc!=SQLITE_OK && pzErrMsg && *pzErrMsg==0 ){
    *pzErrMsg = sqlite3_mprintf("profsum: registration failed: %s",
                                sqlite3_errstr(rc));
  }
  return rc;
}
