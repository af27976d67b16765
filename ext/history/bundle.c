/*
** bundle.c — profsum_bundle: the comparison bundle of a before/after pair,
** six files written into a directory (tools-spec §6), with the manifest as
** the result.
**
**   SELECT profsum_bundle('baseline', 'candidate', 'out/cmp');
**   SELECT profsum_bundle('baseline', 'candidate', 'out/cmp',
**                         '{"label": "x", "history": true}');       -- → manifest
**
** Semantics: docs/spec/tools.md §6.  The files: both summaries, the
** comparison and the tracking record (byte-exact Python json.dumps(indent=2,
** sort_keys=True), jsontree.c) and both markdown reports (exactly
** profsum_report_md's).  All six are written to temporary files first
** (fileio.h), then renamed: on error none is left behind, nor a directory
** the call created.  With "history": true the record is also appended to
** profsum_history_record (history.c), in the same write as the files are
** prepared (busy.c); the renames come after its commit.
**
** SQLITE_DIRECTONLY: it writes files (and with "history" a table), so a
** view or trigger of an untrusted database must not call it.
*/
#include "profsum_int.h"
#include "history_int.h"
#include "compare.h"
#include "busy.h"
#include "fileio.h"
#include "jsontree.h"
#include "pycompat.h"
#include "sqlcall.h"
#include "summary_doc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* profsum_bundle(before, after, dir [, options_json])                 */
/* ------------------------------------------------------------------ */

#define BUNDLE_N 6
/* The six files of tools-spec §6, in writing order, and their manifest keys. */
static const char *azBundleName[BUNDLE_N] = {
  "before.summary.json", "after.summary.json", "compare.json", "track.json",
  "before.report.md", "after.report.md"};
static const char *azBundleKey[BUNDLE_N] = {
  "before_summary_path", "after_summary_path", "comparison_path", "tracking_path",
  "before_report_path", "after_report_path"};

/* The name of bundle file i (0 to 5, in writing order), or 0 past the
** last: a program that checks the files before it calls profsum_bundle
** (the command line, against its JSONL history) reads them here. */
const char *profsumBundleFileName(int i){
  return i>=0 && i<BUNDLE_N ? azBundleName[i] : 0;
}

/* State of one bundle call. */
typedef struct BundleJob {
  ProfsumHistPairArgs pair; /* the traces, options.thresholds, options.top_k */
  const char *zDir;         /* the directory as given */
  char *zLabel;             /* options.label or 0 */
  int history;              /* options.history: append the record */
  int strict;               /* options.strict_provenance */
  char *azText[BUNDLE_N];   /* file contents (sqlite3_malloc'd) */
  char *azTmp[BUNDLE_N];    /* temporary files written, to rename or remove */
  char zStatus[16];         /* assessment status */
  ProfsumMadeDirs made;     /* directories created */
} BundleJob;

/* Remove the temporary files and free the contents of the last attempt. */
static void bundleReset(BundleJob *j){
  int i;
  for(i=0; i<BUNDLE_N; i++){
    if( j->azTmp[i] ){ unlink(j->azTmp[i]); sqlite3_free(j->azTmp[i]); j->azTmp[i] = 0; }
    sqlite3_free(j->azText[i]); j->azText[i] = 0;
  }
}

/* Text + "\n" (sqlite3_malloc'd; frees z).  0 on OOM. */
static char *withNewline(char *z){
  char *r = z ? sqlite3_mprintf("%s\n", z) : 0;
  sqlite3_free(z);
  return r;
}

/* The final path of file i: zDir + "/" + name.  sqlite3_malloc'd. */
static char *bundlePath(const char *zDir, int i){
  size_t n = strlen(zDir);
  if( n>0 && zDir[n-1]=='/' ) return sqlite3_mprintf("%s%s", zDir, azBundleName[i]);
  return sqlite3_mprintf("%s/%s", zDir, azBundleName[i]);
}

/*
** The markdown report of trace id with top_k rows, exactly as
** profsum_report_md(id, topK) returns it (the §5 report plus profsum's KPI
** section), by calling that function: one definition of the report.
*/
static int reportText(sqlite3 *db, sqlite3_int64 id, int topK, char **pz, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT profsum_report_md(?1, ?2)", -1, &p, 0);
  if( rc ) return profsumHistStmtFail(db, rc, pzErr);
  sqlite3_bind_int64(p, 1, id);
  sqlite3_bind_int(p, 2, topK);
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ){
    *pz = sqlite3_mprintf("%s", sqlite3_column_text(p, 0));
    rc = *pz ? SQLITE_OK : SQLITE_NOMEM;
  }else{
    rc = profsumHistStmtFail(db, rc, pzErr);
  }
  sqlite3_finalize(p);
  return rc;
}

/*
** Compute the six texts (and the record, returned in *ppRecord) from the
** current snapshot, then write them to temporary files in the directory
** (created as needed).  With strict_provenance, a failed provenance check
** is an error before anything is written.
*/
static int bundlePrepare(sqlite3 *db, BundleJob *j, JNode **ppRecord,
                         sqlite3_int64 *pB, sqlite3_int64 *pA, char **pzErr){
  ProfsumDoc *dB = 0, *dA = 0;
  JNode *rec = 0;
  const JNode *cmp, *pc, *as;
  int rc, i;
  bundleReset(j);
  rc = profsumHistComputeRecord(db, j->pair.vB, j->pair.vA, j->zLabel, &j->pair.thr, j->pair.topK,
                                pB, pA, &rec, &dB, &dA, pzErr);
  if( rc ) return rc;
  as = jGet(rec, "assessment");
  cmp = jGet(as, "comparison");
  pc = jGet(cmp, "provenance_checks");
  if( j->strict && profsumMemberStr(pc, "status") && strcmp(profsumMemberStr(pc, "status"), "fail")==0 ){
    const JNode *m = jGet(pc, "messages");
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_str_appendall(s, "provenance checks failed.");
    for(i=0; m && m->type==JT_ARRAY && i<m->nChild; i++){
      if( m->a[i]->type==JT_STRING ) sqlite3_str_appendf(s, " %s", m->a[i]->z);
    }
    *pzErr = sqlite3_str_finish(s);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  sqlite3_snprintf(sizeof(j->zStatus), j->zStatus, "%s",
                   profsumMemberStr(as, "status") ? profsumMemberStr(as, "status") : "unknown");
  j->azText[0] = withNewline(profsumDocJson(dB));
  j->azText[1] = withNewline(profsumDocJson(dA));
  j->azText[2] = withNewline(jDump(cmp));
  j->azText[3] = withNewline(jDump(rec));
  for(i=0; i<4; i++) if( j->azText[i]==0 ){ rc = SQLITE_NOMEM; goto done; }
  rc = reportText(db, *pB, j->pair.topK, &j->azText[4], pzErr);
  if( rc==SQLITE_OK ) rc = reportText(db, *pA, j->pair.topK, &j->azText[5], pzErr);
  if( rc ) goto done;
  rc = profsumMkdirs(j->zDir, &j->made, pzErr);
  for(i=0; rc==SQLITE_OK && i<BUNDLE_N; i++){
    int e = 0, step;
    const char *zSpecial;
    char *zPath = bundlePath(j->zDir, i);
    if( zPath==0 ){ rc = SQLITE_NOMEM; break; }
    if( (zSpecial = profsumFileSpecial(zPath))!=0 ){
      /* a device or a pipe the rename would replace (the write refuses it) */
      *pzErr = sqlite3_mprintf("'%s' is %s, not a file: it would be replaced", zPath, zSpecial);
      rc = SQLITE_CANTOPEN;
      sqlite3_free(zPath);
      break;
    }else{
      char *zDb = 0;
      if( profsumFileIsLink(zPath, &zDb) ){
        /* a link in the directory: neither followed nor replaced */
        *pzErr = zDb ? sqlite3_mprintf("'%s' is %s: %s", zPath, zDb, PROFSUM_FILE_LINK_ADVICE) : 0;
        rc = zDb ? SQLITE_CANTOPEN : SQLITE_NOMEM;
        sqlite3_free(zDb);
        sqlite3_free(zPath);
        break;
      }
      if( profsumFileIsDatabase(db, zPath, &zDb) ){
        *pzErr = zDb ? sqlite3_mprintf("'%s' is %s: it would be replaced", zPath, zDb) : 0;
        rc = zDb ? SQLITE_CANTOPEN : SQLITE_NOMEM;
        sqlite3_free(zDb);
        sqlite3_free(zPath);
        break;
      }
    }
    step = profsumFileWriteTemp(zPath, j->azText[i], strlen(j->azText[i]), &j->azTmp[i], &e);
    if( step ) rc = profsumHistFileErr(step, e, j->zDir, zPath, pzErr);
    sqlite3_free(zPath);
  }
  /* A target name taken by a directory would make a rename fail half-way:
  ** refuse before anything is renamed (or any record committed). */
  for(i=0; rc==SQLITE_OK && i<BUNDLE_N; i++){
    struct stat st;
    char *zPath = bundlePath(j->zDir, i);
    if( zPath==0 ){ rc = SQLITE_NOMEM; break; }
    if( lstat(zPath, &st)==0 && S_ISDIR(st.st_mode) ){
      *pzErr = sqlite3_mprintf("'%s' is a directory", zPath);
      rc = SQLITE_CANTOPEN;
    }
    sqlite3_free(zPath);
  }
done:
  profsumDocFree(dB);
  profsumDocFree(dA);
  if( rc ){ jFree(rec); return rc; }
  *ppRecord = rec;
  return SQLITE_OK;
}

/* Write body (history: true): prepare the files, append the record. */
static int bundleBody(sqlite3 *db, void *pArg, char **pzErr){
  BundleJob *j = (BundleJob*)pArg;
  JNode *rec = 0;
  sqlite3_int64 idB = 0, idA = 0;
  /* the schema first, as profsum_track does: the reads need it current */
  int rc = profsumCreateSchema(db, HIST_SCHEMA, pzErr);
  if( rc==SQLITE_OK ) rc = bundlePrepare(db, j, &rec, &idB, &idA, pzErr);
  if( rc==SQLITE_OK ){
    rc = profsumHistWriteStillOpen(db, pzErr);
    if( rc==SQLITE_OK ) rc = profsumHistInsertRecord(db, HIST_SCHEMA, rec, profsumMemberStr(rec, "recorded_at_utc"), idB, idA, "bundle", 0, pzErr);
  }
  jFree(rec);
  return rc;
}

/* Rename the six temporary files to their names.  First checks that no
** target is a directory (so that a rename cannot fail half-way for that
** reason) nor a symbolic link made since bundlePrepare looked (a rename
** would replace it). */
static int bundleRename(BundleJob *j, char **pzErr){
  char *az[BUNDLE_N];
  int i, rc = SQLITE_OK;
  memset(az, 0, sizeof(az));
  for(i=0; i<BUNDLE_N && rc==SQLITE_OK; i++){
    struct stat st;
    az[i] = bundlePath(j->zDir, i);
    if( az[i]==0 ){ rc = SQLITE_NOMEM; break; }
    if( lstat(az[i], &st)==0 && S_ISDIR(st.st_mode) ){
      *pzErr = sqlite3_mprintf("'%s' is a directory", az[i]);
      rc = SQLITE_CANTOPEN;
    }else{
      char *zLink = 0;
      if( profsumFileIsLink(az[i], &zLink) ){
        *pzErr = zLink ? sqlite3_mprintf("'%s' is %s: %s", az[i], zLink, PROFSUM_FILE_LINK_ADVICE) : 0;
        rc = zLink ? SQLITE_CANTOPEN : SQLITE_NOMEM;
        sqlite3_free(zLink);
      }
    }
  }
  for(i=0; i<BUNDLE_N && rc==SQLITE_OK; i++){
    if( rename(j->azTmp[i], az[i])!=0 ){
      *pzErr = sqlite3_mprintf("'%s': %s", az[i], strerror(errno));
      rc = PROFSUM_RC_FILEIO;
      break;
    }
    sqlite3_free(j->azTmp[i]);
    j->azTmp[i] = 0;
  }
  for(i=0; i<BUNDLE_N; i++) sqlite3_free(az[i]);
  return rc;
}

/* The manifest of §6 as a new tree. */
static JNode *bundleManifest(const BundleJob *j){
  JNode *o = jObj();
  char *zNorm = profsumPyPathStr(j->zDir);
  int i;
  if( zNorm==0 ){ jFree(o); return 0; }
  jSetLit(o, "output_dir", jStr(zNorm, -1));
  for(i=0; i<BUNDLE_N; i++){
    char *zP;
    if( strcmp(zNorm, ".")==0 ) zP = sqlite3_mprintf("%s", azBundleName[i]);
    else if( zNorm[strlen(zNorm)-1]=='/' ) zP = sqlite3_mprintf("%s%s", zNorm, azBundleName[i]);
    else zP = sqlite3_mprintf("%s/%s", zNorm, azBundleName[i]);
    jSet(o, azBundleKey[i], zP ? jStr(zP, -1) : 0);
    sqlite3_free(zP);
  }
  jSetLit(o, "status", jStr(j->zStatus, -1));
  sqlite3_free(zNorm);
  if( o==0 || jOom(o) ){ jFree(o); return 0; }
  return o;
}

/* Parse options_json of profsum_bundle into *j.  Unknown keys and wrong
** types are errors (*pzErr). */
static int bundleOptions(const char *zJson, int nJson, BundleJob *j, char **pzErr){
  JNode *p;
  int i, rc = SQLITE_OK;
  if( zJson==0 ) return SQLITE_OK;
  p = jParseOptions(zJson, nJson, &rc, pzErr);
  if( p==0 ) return rc;
  /* the label enters the history: every string must keep the text rule */
  rc = profsumJsonTextRule(zJson, nJson, pzErr);
  if( rc==SQLITE_ERROR ){
    char *z = sqlite3_mprintf("options_json: %s", *pzErr);
    sqlite3_free(*pzErr);
    *pzErr = z;
    if( z==0 ) rc = SQLITE_NOMEM;
  }
  if( rc ){ jFree(p); return rc; }
  for(i=0; i<p->nChild && rc==SQLITE_OK; i++){
    const JNode *v = p->a[i];
    const char *k = v->zKey;
    if( strcmp(k, "top_k")==0 ){
      if( v->type!=JT_INT ){
        *pzErr = sqlite3_mprintf("options_json: top_k must be an integer");
        rc = SQLITE_ERROR;
      }else j->pair.topK = profsumTopKClamp(v->i);
    }else if( strcmp(k, "label")==0 ){
      if( v->type!=JT_STRING && v->type!=JT_NULL ){
        *pzErr = sqlite3_mprintf("options_json: label must be a string or null");
        rc = SQLITE_ERROR;
      }else if( v->type==JT_STRING ){
        sqlite3_free(j->zLabel);
        j->zLabel = sqlite3_mprintf("%s", v->z);
        if( j->zLabel==0 ) rc = SQLITE_NOMEM;
      }
    }else if( strcmp(k, "thresholds")==0 ){
      rc = profsumThresholdsApply(v, "options_json: thresholds", 0, &j->pair.thr, pzErr);
    }else if( strcmp(k, "history")==0 || strcmp(k, "strict_provenance")==0 ){
      if( v->type!=JT_TRUE && v->type!=JT_FALSE ){
        *pzErr = sqlite3_mprintf("options_json: %s must be true or false", k);
        rc = SQLITE_ERROR;
      }else if( k[0]=='h' ) j->history = v->type==JT_TRUE;
      else j->strict = v->type==JT_TRUE;
    }else{
      *pzErr = sqlite3_mprintf("options_json: unknown key '%s' (known: top_k, label, "
                               "thresholds, history, strict_provenance)", k);
      rc = SQLITE_ERROR;
    }
  }
  jFree(p);
  return rc;
}

/*
** profsum_bundle(before, after, dir [, options_json]) → the manifest
** (indent 2).  Order: options and traces checked; texts computed and written
** to temporary files in dir (inside the write when "history" is true, with
** the record appended there); then the six renames.  On error: temporary
** files and created directories removed, no record.
*/
static void bundleFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_bundle";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  BundleJob j;
  JNode *man = 0;
  sqlite3_int64 idB, idA;
  char *zErr = 0;
  int rc;
  memset(&j, 0, sizeof(j));
  profsumHistPairArgsInit(&j.pair, argv);
  j.zDir = profsumHistPathArg(ctx, FN, "dir", argv[2]);
  if( j.zDir==0 ) return;
  if( argc>3 && sqlite3_value_type(argv[3])!=SQLITE_NULL ){
    if( sqlite3_value_type(argv[3])!=SQLITE_TEXT ){
      profsumCtxErr(ctx, "%s: options_json must be a JSON object (text)", FN);
      return;
    }
    rc = bundleOptions((const char*)sqlite3_value_text(argv[3]), sqlite3_value_bytes(argv[3]), &j, &zErr);
    if( rc ){ profsumHistReportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); sqlite3_free(j.zLabel); return; }
  }
  rc = profsumHistPairCheck(db, &j.pair, j.history, &zErr);
  if( rc==SQLITE_OK ){
    if( j.history ){
      rc = profsumWriteRun(db, HIST_SCHEMA, bundleBody, &j, &zErr);
    }else{
      JNode *rec = 0;
      rc = bundlePrepare(db, &j, &rec, &idB, &idA, &zErr);
      jFree(rec);
    }
  }
  if( rc==SQLITE_OK ) rc = bundleRename(&j, &zErr);
  if( rc==SQLITE_OK ){
    man = bundleManifest(&j);
    if( man==0 ) rc = SQLITE_NOMEM;
  }
  if( rc ){
    bundleReset(&j);
    profsumMadeDirsUndo(&j.made);
    profsumHistReportErr(ctx, FN, rc, zErr);
  }else{
    char *z = jDump(man);
    profsumMadeDirsKeep(&j.made);
    if( z ) sqlite3_result_text(ctx, z, -1, sqlite3_free);
    else sqlite3_result_error_nomem(ctx);
  }
  jFree(man);
  bundleReset(&j);
  sqlite3_free(zErr);
  sqlite3_free(j.zLabel);
}

/* See history_int.h. */
int profsumRegisterBundle(sqlite3 *db, char **pzErr){
  /* Writes files (and, with "history": true, a table): DIRECTONLY, so that
  ** a view or trigger stored in a hostile database cannot call it. */
  static const ProfsumHistFunc aFunc[] = {
    {"profsum_bundle", 3, SQLITE_UTF8|SQLITE_DIRECTONLY, bundleFunc},
    {"profsum_bundle", 4, SQLITE_UTF8|SQLITE_DIRECTONLY, bundleFunc},
  };
  return profsumHistRegister(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), pzErr);
}
