/*
** wandb_publish.c — wandb_publish(): the plan (the summary file, or the
** trace's summary JSON, and the report file if one is given, their
** digests, the artifact's name, aliases, metadata and run) and its
** publication as one W&B artifact of type
** profile_summary: create the artifact, upload its files and manifest to
** the URLs the server hands out, commit it, and create and finish a run
** for it when the profiled run is not in the target project.
**
** Protocol: wandb-http.md §6 (publishing, §6.1 steps P1–P7, §6.3 the
** run), the manifest §3.2; behaviour of the reference tool:
** summary-v1-tools-spec.md §7.  User documentation: docs/wandb.md.
**
** Built with PROFSUM_OMIT_NETWORK this file is empty.
*/
#include "wandb_int.h"
#include "summary_doc.h"

#ifndef PROFSUM_OMIT_NETWORK
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define WB_PUB_TYPE     "profile_summary"
#define WB_PUB_JOB      "profile-summary-publish"  /* job type of a created run */
#define WB_PUB_SUMMARY  "profile_summary.json"     /* a summary without a file */
#define WB_NAME_MAX     128                /* W&B artifact name length */
#define WB_FILE_MAX     ((sqlite3_int64)64<<20)  /* summary/report file size cap */

/* GraphQL texts of §6.1 (P1 asks for versionIndex too, P7 likewise) and
** §6.2 option 2 (UpsertBucket). */
static const char wbMCreateArtifact[] =
  "mutation CreateArtifact($entityName: String!, $projectName: String!, "
  "$artifactTypeName: String!, $artifactCollectionName: String!, "
  "$runName: String, $digest: String!, $description: String, "
  "$aliases: [ArtifactAliasInput!], $metadata: JSONString, "
  "$clientID: ID!, $sequenceClientID: ID!) { createArtifact(input: { "
  "entityName: $entityName, projectName: $projectName, "
  "artifactTypeName: $artifactTypeName, artifactCollectionName: "
  "$artifactCollectionName, runName: $runName, digest: $digest, "
  "digestAlgorithm: MANIFEST_MD5, description: $description, aliases: "
  "$aliases, metadata: $metadata, enableDigestDeduplication: true, "
  "clientID: $clientID, sequenceClientID: $sequenceClientID }) "
  "{ artifact { id state versionIndex artifactSequence { latestArtifact "
  "{ id } } } } }";
static const char wbMCreateManifest[] =
  "mutation CreateArtifactManifest($artifactID: ID!, $baseArtifactID: ID, "
  "$name: String!, $digest: String!, $entityName: String!, "
  "$projectName: String!, $runName: String!, $manifestType: "
  "ArtifactManifestType!, $includeUpload: Boolean!) { "
  "createArtifactManifest(input: { artifactID: $artifactID, "
  "baseArtifactID: $baseArtifactID, name: $name, digest: $digest, "
  "entityName: $entityName, projectName: $projectName, runName: $runName, "
  "type: $manifestType }) { artifactManifest { id file { id "
  "uploadUrl @include(if: $includeUpload) uploadHeaders @include(if: "
  "$includeUpload) } } } }";
static const char wbMCreateFiles[] =
  "mutation CreateArtifactFiles($artifactFiles: [CreateArtifactFileSpecInput!]!, "
  "$storageLayout: ArtifactStorageLayout!) { createArtifactFiles(input: { "
  "artifactFiles: $artifactFiles, storageLayout: $storageLayout }) { files "
  "{ edges { node { storagePath uploadUrl uploadHeaders artifact { id } } } } } }";
static const char wbMCommit[] =
  "mutation CommitArtifact($artifactID: ID!) { commitArtifact(input: "
  "{ artifactID: $artifactID }) { artifact { id digest versionIndex } } }";
static const char wbMUpsertBucket[] =
  "mutation UpsertBucket($id: String, $name: String, $project: String, "
  "$entity: String, $groupName: String, $description: String, "
  "$displayName: String, $notes: String, $commit: String, $config: "
  "JSONString, $host: String, $debug: Boolean, $program: String, $repo: "
  "String, $jobType: String, $state: String, $sweep: String, $tags: "
  "[String!], $summaryMetrics: JSONString) { upsertBucket(input: { id: $id, "
  "name: $name, groupName: $groupName, modelName: $project, entityName: "
  "$entity, description: $description, displayName: $displayName, notes: "
  "$notes, config: $config, commit: $commit, host: $host, debug: $debug, "
  "jobProgram: $program, jobRepo: $repo, jobType: $jobType, state: $state, "
  "sweep: $sweep, tags: $tags, summaryMetrics: $summaryMetrics }) { bucket "
  "{ id name displayName description config sweepName project { id name "
  "entity { id name } } historyLineCount } inserted } }";

/* Free what a plan owns. */
void wbPlanClear(WbPlan *pl){
  int i;
  sqlite3_free(pl->zName);
  sqlite3_free(pl->zRun);
  jFree(pl->pAliases);
  jFree(pl->pMeta);
  for(i=0; i<2; i++) sqlite3_free(pl->aFile[i].zData);
  memset(pl, 0, sizeof(*pl));
}

/* Base64 MD5 of z[0..n) into zB64[25]. */
static void wbMd5B64(const void *z, size_t n, char *zB64){
  ProfsumMd5 m;
  unsigned char dig[16];
  profsumMd5Init(&m);
  profsumMd5Update(&m, z, n);
  profsumMd5Final(&m, dig);
  profsumBase64Encode(dig, 16, zB64);
}

/* n random lowercase alphanumerics into z (NUL-terminated; z holds n+1),
** as the SDK's generate_id(). */
static void wbRandomId(char *z, int n){
  static const char az[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  int i;
  for(i=0; i<n; i++){
    unsigned char u;
    do{ sqlite3_randomness(1, &u); }while( u>=252 );   /* 252 = 7*36 */
    z[i] = az[u%36];
  }
  z[n] = 0;
}

/* Is c allowed in a W&B artifact name (alphanumerics, '-', '_', '.')? */
static int wbNameChar(char c){
  return (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
      || c=='-' || c=='_' || c=='.';
}

/* Is z a valid artifact name (allowed characters, 1..128 bytes)? */
static int wbValidName(const char *z){
  size_t i, n = strlen(z);
  if( n==0 || n>WB_NAME_MAX ) return 0;
  for(i=0; i<n; i++) if( !wbNameChar(z[i]) ) return 0;
  return 1;
}

/* The default artifact name (tools-spec §7): "profile-summary-<run id>"
** when zRunId is a non-empty string, else "profile-summary-<UTC now as
** YYYYmmdd-HHMMSS>"; every byte not allowed in a name replaced by '-',
** cut to 128 bytes (sqlite3_malloc'd, 0 on OOM). */
static char *wbDefaultName(const char *zRunId){
  char *z;
  size_t i;
  if( zRunId && zRunId[0] ){
    z = sqlite3_mprintf("profile-summary-%s", zRunId);
  }else{
    time_t t = time(0);
    struct tm tm;
    gmtime_r(&t, &tm);
    z = sqlite3_mprintf("profile-summary-%04d%02d%02d-%02d%02d%02d", tm.tm_year+1900,
                        tm.tm_mon+1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  if( z==0 ) return 0;
  for(i=0; z[i]; i++) if( !wbNameChar(z[i]) ) z[i] = '-';
  if( i>WB_NAME_MAX ) z[WB_NAME_MAX] = 0;
  return z;
}

/* A copy of p, or JSON null when p is missing. */
static JNode *wbCopyOrNull(const JNode *p){
  return p ? jClone(p) : jNull();
}

/* Copy into m the members of pFrom (may be 0) named by the arguments, a
** list ending with a null pointer, under the same names: JSON null for
** one that pFrom lacks. */
static void wbCopyMembers(JNode *m, const JNode *pFrom, ...){
  va_list ap;
  const char *zName;
  va_start(ap, pFrom);
  while( (zName = va_arg(ap, const char*))!=0 ){
    jSet(m, zName, wbCopyOrNull(jGet(pFrom, zName)));
  }
  va_end(ap);
}

/* Number of elements of array p as JSON (null when not an array). */
static JNode *wbLenOrNull(const JNode *p){
  return (p && p->type==JT_ARRAY) ? jInt(p->nChild) : jNull();
}

/* The artifact metadata of summary-v1-tools-spec §7 from document pDoc. */
static JNode *wbPubMetadata(const JNode *pDoc){
  JNode *m = jObj(), *pRm = jGet(pDoc, "run_metadata");
  JNode *pSs = wbPath((JNode*)pDoc, "step_time", "steady_state_steps", (char*)0);
  JNode *pTb = jGet(pDoc, "time_breakdown"), *pGap = jGet(pDoc, "gap_before_ops");
  JNode *pG0 = (pGap && pGap->type==JT_ARRAY && pGap->nChild>0) ? jAt(pGap, 0) : 0;
  if( m==0 ) return 0;
  wbCopyMembers(m, pDoc, "schema_version", "source_format", "source_path", (char*)0);
  wbCopyMembers(m, pRm, "run_path", "run_id", (char*)0);
  jSet(m, "source_artifact_ref", wbCopyOrNull(jGet(pRm, "artifact_ref")));
  wbCopyMembers(m, pRm, "hardware_type", "mesh_or_topology", "git_sha", "config_hash", (char*)0);
  jSet(m, "step_median", wbCopyOrNull(jGet(pSs, "median")));
  jSet(m, "step_p90", wbCopyOrNull(jGet(pSs, "p90")));
  jSet(m, "compute_share", wbCopyOrNull(wbPath(pTb, "compute", "share_of_total", (char*)0)));
  jSet(m, "communication_share",
       wbCopyOrNull(wbPath(pTb, "communication", "share_of_total", (char*)0)));
  jSet(m, "host_share", wbCopyOrNull(wbPath(pTb, "host", "share_of_total", (char*)0)));
  jSet(m, "stall_share", wbCopyOrNull(wbPath(pTb, "stall", "share_of_total", (char*)0)));
  jSet(m, "top_pre_gap_op", wbCopyOrNull(jGet(pG0, "name")));
  jSet(m, "top_pre_gap_total", wbCopyOrNull(jGet(pG0, "total_gap_duration")));
  jSet(m, "num_hierarchical_regions", wbLenOrNull(jGet(pDoc, "hierarchical_regions")));
  jSet(m, "num_gap_region_contexts", wbLenOrNull(jGet(pDoc, "gap_region_contexts")));
  wbCopyMembers(m, pDoc, "generated_at_utc", (char*)0);
  if( jOom(m) ){ jFree(m); return 0; }
  return m;
}

/* The manifest digest (§3.2) of the plan's files (sorted by path) into
** pl->zDigest. */
static void wbPlanDigest(WbPlan *pl){
  ProfsumMd5 m;
  unsigned char dig[16];
  int i;
  profsumMd5Init(&m);
  profsumMd5Update(&m, "wandb-artifact-manifest-v1\n", 27);
  for(i=0; i<pl->nFile; i++){
    profsumMd5Update(&m, pl->aFile[i].zPath, strlen(pl->aFile[i].zPath));
    profsumMd5Update(&m, ":", 1);
    profsumMd5Update(&m, pl->aFile[i].zDigest, strlen(pl->aFile[i].zDigest));
    profsumMd5Update(&m, "\n", 1);
  }
  profsumMd5Final(&m, dig);
  for(i=0; i<16; i++) sqlite3_snprintf(3, pl->zDigest+2*i, "%02x", dig[i]);
}

/* Text of sqlite3_value v as an sqlite3_malloc'd NUL-terminated copy of
** exactly its bytes (0 when NULL; *pOom set on out of memory). */
static char *wbValueDup(sqlite3_stmt *pStmt, int iCol, size_t *pn, int *pOom){
  const unsigned char *z = sqlite3_column_text(pStmt, iCol);
  int n = sqlite3_column_bytes(pStmt, iCol);
  char *r;
  if( z==0 ){ *pOom = sqlite3_errcode(sqlite3_db_handle(pStmt))==SQLITE_NOMEM; return 0; }
  r = sqlite3_malloc64((sqlite3_uint64)n+2);
  if( r==0 ){ *pOom = 1; return 0; }
  memcpy(r, z, n);
  r[n] = 0;
  *pn = (size_t)n;
  return r;
}

/* Read the whole file zPath, given as option zOpt, (at most WB_FILE_MAX
** bytes) into *pz and *pn (sqlite3_malloc'd, NUL-terminated).  Returns
** SQLITE_OK; SQLITE_NOMEM; or SQLITE_ERROR with *pzErr an sqlite3_malloc'd
** message naming the option (0 when that message could not be made: out
** of memory).  *pz is 0 on every error. */
static int wbReadFile(const char *zOpt, const char *zPath, char **pz, size_t *pn, char **pzErr){
  FILE *f = fopen(zPath, "rb");
  char *z = 0;
  size_t n = 0, nAlloc = 0;
  *pz = 0; *pn = 0; *pzErr = 0;
  if( f==0 ){
    *pzErr = sqlite3_mprintf("cannot read %s '%s': %s", zOpt, zPath, strerror(errno));
    return SQLITE_ERROR;
  }
  for(;;){
    size_t k;
    if( n+65536+1 > nAlloc ){
      char *zNew;
      nAlloc = nAlloc ? nAlloc*2 : 131072;
      zNew = sqlite3_realloc64(z, nAlloc);
      if( zNew==0 ){ sqlite3_free(z); fclose(f); return SQLITE_NOMEM; }
      z = zNew;
    }
    k = fread(z+n, 1, 65536, f);
    n += k;
    if( (sqlite3_int64)n > WB_FILE_MAX ){
      sqlite3_free(z); fclose(f);
      *pzErr = sqlite3_mprintf("%s '%s' is larger than %lld bytes", zOpt, zPath, WB_FILE_MAX);
      return SQLITE_ERROR;
    }
    if( k<65536 ) break;
  }
  if( ferror(f) ){
    sqlite3_free(z); fclose(f);
    *pzErr = sqlite3_mprintf("cannot read %s '%s'", zOpt, zPath);
    return SQLITE_ERROR;
  }
  fclose(f);
  z[n] = 0;
  *pz = z; *pn = n;
  return SQLITE_OK;
}

/* Parse uploadHeaders (a list of "Name:value" strings, or null) into a
** curl header list, adding "Content-Type:" (send none, as the SDK) unless
** one is given and "Expect:" (no 100-continue).  Returns p->rc. */
static int wbUploadHeaders(Wb *p, const JNode *pList, const char *zWhat,
                           struct curl_slist **ppOut){
  struct curl_slist *pH = 0, *pNew;
  int i, bType = 0;
  *ppOut = 0;
  if( pList && pList->type!=JT_ARRAY && pList->type!=JT_NULL ){
    wbErr(p, "%s: malformed uploadHeaders", zWhat);
    return p->rc;
  }
  for(i=0; pList && pList->type==JT_ARRAY && i<pList->nChild; i++){
    const char *z = wbStr(pList->a[i]), *zColon;
    char *zLine;
    size_t nName;
    if( z==0 || (zColon = strchr(z, ':'))==0 || zColon==z || strpbrk(z, "\r\n")!=0 ){
      wbErr(p, "%s: malformed upload header", zWhat);
      break;
    }
    nName = (size_t)(zColon - z);
    if( strcspn(z, " \t")<nName ){
      wbErr(p, "%s: malformed upload header", zWhat);
      break;
    }
    if( nName==12 && strncasecmp(z, "content-type", 12)==0 ) bType = 1;
    zColon++;
    while( *zColon==' ' || *zColon=='\t' ) zColon++;
    zLine = sqlite3_mprintf("%.*s: %s", (int)nName, z, zColon);
    pNew = zLine ? curl_slist_append(pH, zLine) : 0;
    sqlite3_free(zLine);
    if( pNew==0 ){ wbOom(p); break; }
    pH = pNew;
  }
  if( p->rc==SQLITE_OK && !bType ){
    pNew = curl_slist_append(pH, "Content-Type:");
    if( pNew ) pH = pNew; else wbOom(p);
  }
  if( p->rc==SQLITE_OK ){
    pNew = curl_slist_append(pH, "Expect:");
    if( pNew ) pH = pNew; else wbOom(p);
  }
  if( p->rc ){ curl_slist_free_all(pH); return p->rc; }
  *ppOut = pH;
  return SQLITE_OK;
}

/* PUT z[0..n) to storage URL zUrl with the headers of pHdrList (a JSON
** list of "Name:value" or null), with the retries of wbRequest and never
** with the API key.  zWhat names the file in errors. */
static int wbPut(Wb *p, const char *zFile, const char *zUrl,
                 const JNode *pHdrList, const char *z, size_t n){
  WbSink s;
  struct curl_slist *pH = 0;
  char *zWhat = sqlite3_mprintf("upload of '%s'", zFile);
  char *zOrig;
  if( zWhat==0 ){ wbOom(p); return p->rc; }
  zOrig = wbOriginOf(zUrl, 0, 0);
  if( zOrig==0 ){
    wbErr(p, "%s: the server gave no usable upload url", zWhat);
  }else if( wbUploadHeaders(p, pHdrList, zWhat, &pH)==SQLITE_OK ){
    memset(&s, 0, sizeof(s));
    s.p = p; s.fd = -1; s.nLimit = WB_MEM_LIMIT;
    s.zPutData = z; s.nPutData = n; s.pPutHdr = pH;
    wbRequest(p, zWhat, zUrl, 0, &s);
    sqlite3_free(s.zMem);
  }
  curl_slist_free_all(pH);
  sqlite3_free(zOrig);
  sqlite3_free(zWhat);
  return p->rc;
}

/* The final manifest (§3.2, §6.1 P5) of pl: every entry born in the
** artifact whose CreateArtifactFiles edge named it (azBirth).  Returns
** JSON text (sqlite3_malloc'd) or 0 on OOM. */
static char *wbPubManifest(const WbPlan *pl, char **azBirth){
  JNode *m = jObj(), *c = jObj(), *cfg = jObj();
  char *z = 0;
  int i;
  jSet(m, "version", jInt(1));
  jSet(m, "storagePolicy", jStr("wandb-storage-policy-v1", -1));
  jSet(cfg, "storageLayout", jStr("V2", -1));
  jSet(m, "storagePolicyConfig", cfg);
  for(i=0; c && i<pl->nFile; i++){
    JNode *e = jObj();
    jSet(e, "digest", jStr(pl->aFile[i].zDigest, -1));
    jSet(e, "birthArtifactID", jStr(azBirth[i], -1));
    jSet(e, "size", jInt((sqlite3_int64)pl->aFile[i].nData));
    jSet(c, pl->aFile[i].zPath, e);
  }
  jSet(m, "contents", c);
  if( m && !jOom(m) ) z = profsumJsonCompact(m);    /* json.dumps(m, sort_keys=True) */
  jFree(m);
  return z;
}

/* Mark run zRun finished through file_stream (§6.2 option 2). */
static int wbFinishRun(Wb *p, const WbPlan *pl, const char *zRun, int iExit){
  WbSink s;
  char *zE, *zP, *zR, *zUrl = 0, *zBody = 0;
  if( wbCheckComponent(p, "entity", pl->zEntity)
   || wbCheckComponent(p, "project", pl->zProject)
   || wbCheckComponent(p, "run name", zRun) ){
    return p->rc;
  }
  zE = wbQuote(pl->zEntity); zP = wbQuote(pl->zProject); zR = wbQuote(zRun);
  if( zE && zP && zR ){
    zUrl = sqlite3_mprintf("%s/files/%s/%s/%s/file_stream", p->zBase, zE, zP, zR);
    zBody = sqlite3_mprintf("{\"files\":{},\"complete\":true,\"exitcode\":%d}", iExit);
  }
  if( zUrl==0 || zBody==0 ){
    wbOom(p);
  }else{
    memset(&s, 0, sizeof(s));
    s.p = p; s.fd = -1; s.nLimit = WB_MEM_LIMIT; s.bApi = 1;
    wbRequest(p, "file_stream (finishing the publishing run)", zUrl, zBody, &s);
    sqlite3_free(s.zMem);
  }
  sqlite3_free(zE); sqlite3_free(zP); sqlite3_free(zR);
  sqlite3_free(zUrl); sqlite3_free(zBody);
  return p->rc;
}

/* createArtifactManifest (§6.1 P2 with zDigest "" and !bUpload, P6
** otherwise).  Returns the parsed response (caller frees) with *ppMan
** pointing at artifactManifest, or 0. */
static JNode *wbCreateManifest(Wb *p, const WbPlan *pl, const char *zRun,
                               const char *zArtId, const char *zBaseId,
                               const char *zDigest, int bUpload, JNode **ppMan){
  JNode *v = jObj(), *pData = 0, *pRoot;
  *ppMan = 0;
  if( v==0 ){ wbOom(p); return 0; }
  jSet(v, "artifactID", jStr(zArtId, -1));
  jSet(v, "baseArtifactID", jStr(zBaseId, -1));
  jSet(v, "name", jStr("wandb_manifest.json", -1));
  jSet(v, "digest", jStr(zDigest, -1));
  jSet(v, "entityName", jStr(pl->zEntity, -1));
  jSet(v, "projectName", jStr(pl->zProject, -1));
  jSet(v, "runName", jStr(zRun, -1));
  jSet(v, "manifestType", jStr("FULL", -1));
  jSet(v, "includeUpload", jBool(bUpload));
  if( jOom(v) ){ jFree(v); wbOom(p); return 0; }
  pRoot = wbGraphql(p, "CreateArtifactManifest", wbMCreateManifest, v, &pData);
  if( pRoot==0 ) return 0;
  *ppMan = wbPath(pData, "createArtifactManifest", "artifactManifest", (char*)0);
  if( wbStr(jGet(*ppMan, "id"))==0 ){
    wbErr(p, "graphql CreateArtifactManifest: malformed response (no manifest id)");
    jFree(pRoot);
    *ppMan = 0;
    return 0;
  }
  return pRoot;
}

/* The run of a publication without one (§6.3): a dedicated run, created
** with UpsertBucket under the random id zRunId (9 bytes).  Returns the
** response (caller frees; *pzRun points into it, or at zRunId) or 0 with
** the error recorded. */
static JNode *wbPubCreateRun(Wb *p, const WbPlan *pl, char *zRunId,
                             const char **pzRun){
  JNode *v, *pData, *pR1;
  wbRandomId(zRunId, 8);
  v = jObj();
  jSet(v, "name", jStr(zRunId, -1));
  jSet(v, "project", jStr(pl->zProject, -1));
  jSet(v, "entity", jStr(pl->zEntity, -1));
  jSet(v, "jobType", jStr(WB_PUB_JOB, -1));
  {
    char *zDisp = sqlite3_mprintf("publish-%s", pl->zName);
    jSet(v, "displayName", jStr(zDisp, -1));
    if( zDisp==0 ) wbOom(p);
    sqlite3_free(zDisp);
  }
  if( v==0 || jOom(v) ){ jFree(v); wbOom(p); return 0; }
  pR1 = wbGraphql(p, "UpsertBucket", wbMUpsertBucket, v, &pData);
  if( pR1==0 ) return 0;
  *pzRun = wbStr(wbPath(pData, "upsertBucket", "bucket", "name", (char*)0));
  if( *pzRun==0 ) *pzRun = zRunId;
  /* The name goes into the file_stream URL on the API host (wbFinishRun):
  ** refused here, before anything is attached to the run. */
  if( wbCheckComponent(p, "the run name of the UpsertBucket response", *pzRun) ){
    jFree(pR1);
    return 0;
  }
  return pR1;
}

/* The variables of createArtifact (§6.1 P1) for plan pl attached to run
** zRun, with fresh random client ids.  Returns them or 0 with the error
** recorded (out of memory). */
static JNode *wbPubArtifactVars(Wb *p, const WbPlan *pl, const char *zRun){
  char zClient[129], zSeq[129];
  JNode *v;
  int i;
  wbRandomId(zClient, 128);
  wbRandomId(zSeq, 128);
  v = jObj();
  if( v ){
    JNode *pAl = jArr();
    char *zMeta;
    for(i=0; pAl && i<pl->pAliases->nChild; i++){
      JNode *o = jObj();
      jSet(o, "artifactCollectionName", jStr(pl->zName, -1));
      jSet(o, "alias", jStr(pl->pAliases->a[i]->z, -1));
      jPush(pAl, o);
    }
    zMeta = profsumJsonCompact(pl->pMeta);     /* json.dumps(metadata, sort_keys=True) */
    jSet(v, "entityName", jStr(pl->zEntity, -1));
    jSet(v, "projectName", jStr(pl->zProject, -1));
    jSet(v, "artifactTypeName", jStr(WB_PUB_TYPE, -1));
    jSet(v, "artifactCollectionName", jStr(pl->zName, -1));
    jSet(v, "runName", jStr(zRun, -1));
    jSet(v, "digest", jStr(pl->zDigest, -1));
    jSet(v, "description", jNull());
    jSet(v, "aliases", pAl);
    jSet(v, "metadata", jStr(zMeta, -1));
    jSet(v, "clientID", jStr(zClient, -1));
    jSet(v, "sequenceClientID", jStr(zSeq, -1));
    if( zMeta==0 ) wbOom(p);
    sqlite3_free(zMeta);
  }
  if( v==0 || jOom(v) || p->rc ){ jFree(v); wbOom(p); return 0; }
  return v;
}

/* The files of a new artifact version zArtId (§6.1 P2–P7): placeholder
** manifest, createArtifactFiles, the uploads the server asks for, the
** final manifest registered and uploaded, commit.  zBase: the latest
** version of the sequence (0 if none).  Sets *piVersion when the commit
** answers with the version index.  Returns p->rc. */
static int wbPubUpload(Wb *p, WbPlan *pl, const char *zRun,
                       const char *zArtId, const char *zBase,
                       sqlite3_int64 *piVersion){
  JNode *v, *pData, *pR3 = 0, *pR4 = 0, *pR5 = 0, *pArt, *pEdges, *pMan;
  JNode *pFiles, *pSpecs;
  const char *zManId;
  char *azBirth[2] = {0, 0}, *zManifest = 0, zManDigest[25];
  int i;
  /* P2 placeholder manifest. */
  pR3 = wbCreateManifest(p, pl, zRun, zArtId, zBase, "", 0, &pMan);
  if( pR3==0 ) goto done;
  zManId = wbStr(jGet(pMan, "id"));
  /* P3 createArtifactFiles. */
  v = jObj();
  pSpecs = jArr();
  for(i=0; pSpecs && i<pl->nFile; i++){
    JNode *o = jObj();
    jSet(o, "artifactID", jStr(zArtId, -1));
    jSet(o, "name", jStr(pl->aFile[i].zPath, -1));
    jSet(o, "md5", jStr(pl->aFile[i].zDigest, -1));
    jSet(o, "artifactManifestID", jStr(zManId, -1));
    jPush(pSpecs, o);
  }
  jSet(v, "artifactFiles", pSpecs);
  jSet(v, "storageLayout", jStr("V2", -1));
  if( v==0 || jOom(v) ){ jFree(v); wbOom(p); goto done; }
  pR4 = wbGraphql(p, "CreateArtifactFiles", wbMCreateFiles, v, &pData);
  if( pR4==0 ) goto done;
  pFiles = wbPath(pData, "createArtifactFiles", "files", (char*)0);
  pEdges = jGet(pFiles, "edges");
  if( pEdges==0 || pEdges->type!=JT_ARRAY || pEdges->nChild!=pl->nFile ){
    wbErr(p, "graphql CreateArtifactFiles: malformed response (expected %d file "
             "edge%s)", pl->nFile, pl->nFile==1 ? "" : "s");
    goto done;
  }
  /* P4 uploads (edges come back in request order). */
  for(i=0; i<pl->nFile; i++){
    JNode *pNode = jGet(jAt(pEdges, i), "node");
    const char *zUrl = wbStr(jGet(pNode, "uploadUrl"));
    const char *zBirth = wbStr(wbPath(pNode, "artifact", "id", (char*)0));
    azBirth[i] = wbDup(p, zBirth ? zBirth : zArtId);
    if( p->rc ) goto done;
    if( zUrl==0 ) continue;         /* the server has these bytes */
    if( wbPut(p, pl->aFile[i].zPath, zUrl, jGet(pNode, "uploadHeaders"),
              pl->aFile[i].zData, pl->aFile[i].nData) ) goto done;
    pl->aFile[i].bUploaded = 1;
  }
  /* P5 final manifest; P6 register it and upload it. */
  zManifest = wbPubManifest(pl, azBirth);
  if( zManifest==0 ){ wbOom(p); goto done; }
  wbMd5B64(zManifest, strlen(zManifest), zManDigest);
  pR5 = wbCreateManifest(p, pl, zRun, zArtId, zBase, zManDigest, 1, &pMan);
  if( pR5==0 ) goto done;
  {
    const char *zUrl = wbStr(wbPath(pMan, "file", "uploadUrl", (char*)0));
    if( zUrl==0 ){
      wbErr(p, "graphql CreateArtifactManifest: no upload url for the manifest");
      goto done;
    }
    if( wbPut(p, "wandb_manifest.json", zUrl,
              wbPath(pMan, "file", "uploadHeaders", (char*)0),
              zManifest, strlen(zManifest)) ) goto done;
  }
  /* P7 commit. */
  jFree(pR3); pR3 = 0;
  v = jObj();
  jSet(v, "artifactID", jStr(zArtId, -1));
  if( v==0 || jOom(v) ){ jFree(v); wbOom(p); goto done; }
  pR3 = wbGraphql(p, "CommitArtifact", wbMCommit, v, &pData);
  if( pR3==0 ) goto done;
  pArt = wbPath(pData, "commitArtifact", "artifact", (char*)0);
  if( jGet(pArt, "versionIndex") && jGet(pArt, "versionIndex")->type==JT_INT ){
    *piVersion = jGet(pArt, "versionIndex")->i;
  }
done:
  for(i=0; i<2; i++) sqlite3_free(azBirth[i]);
  sqlite3_free(zManifest);
  jFree(pR3); jFree(pR4); jFree(pR5);
  return p->rc;
}

/* The members tools-spec §7 gives both answers of wandb_publish, after
** "status" (zStatus): entity, project, artifact_name, artifact_type,
** aliases, summary_path, report_path (the options, null when absent).
** Returns the object, or 0 (out of memory). */
static JNode *wbPubAnswer(const WbPlan *pl, const char *zStatus){
  JNode *r = jObj();
  if( r==0 ) return 0;
  jSet(r, "status", jStr(zStatus, -1));
  jSet(r, "entity", jStr(pl->zEntity, -1));
  jSet(r, "project", jStr(pl->zProject, -1));
  jSet(r, "artifact_name", jStr(pl->zName, -1));
  jSet(r, "artifact_type", jStr(WB_PUB_TYPE, -1));
  jSet(r, "aliases", jClone(pl->pAliases));
  jSet(r, "summary_path", jStr(pl->zSummaryPath, -1));
  jSet(r, "report_path", jStr(pl->zReportPath, -1));
  if( jOom(r) ){ jFree(r); return 0; }
  return r;
}

/* The result of wandb_publish (tools-spec §7): the members of
** wbPubAnswer with status "published" and artifact_version, "v<N>" of
** version iVersion (null when -1: unknown).  The same answer when the
** server already had this content (deduplicated), as the SDK gives.
** Returns the object, or 0 (out of memory, recorded). */
static JNode *wbPubResult(Wb *p, const WbPlan *pl, sqlite3_int64 iVersion){
  JNode *pRes = wbPubAnswer(pl, "published");
  char *zVer = iVersion>=0 ? sqlite3_mprintf("v%lld", iVersion) : 0;
  if( pRes ) jSet(pRes, "artifact_version", jStr(zVer, -1));
  if( pRes==0 || jOom(pRes) || (iVersion>=0 && zVer==0) ){
    jFree(pRes);
    pRes = 0;
    wbOom(p);
  }
  sqlite3_free(zVer);
  return pRes;
}

/* Publish plan pl (§6.1 P1–P7, run per §6.3).  Returns the result object
** or 0 (error in p). */
JNode *wbPublish(Wb *p, WbPlan *pl){
  JNode *pRes = 0, *v, *pData, *pR1 = 0, *pR2 = 0, *pArt;
  char zRunId[9];
  const char *zRun = pl->zRun, *zArtId, *zState, *zBase;
  sqlite3_int64 iVersion = -1;
  int bCreated = 0, bDedup = 0;

  /* The run: the profiled one, else a dedicated run (§6.3). */
  if( zRun==0 ){
    pR1 = wbPubCreateRun(p, pl, zRunId, &zRun);
    if( pR1==0 ) goto done;
    bCreated = 1;
  }

  /* P1 createArtifact. */
  v = wbPubArtifactVars(p, pl, zRun);
  if( v==0 ) goto fail;
  pR2 = wbGraphql(p, "CreateArtifact", wbMCreateArtifact, v, &pData);
  if( pR2==0 ) goto fail;
  pArt = wbPath(pData, "createArtifact", "artifact", (char*)0);
  zArtId = wbStr(jGet(pArt, "id"));
  zState = wbStr(jGet(pArt, "state"));
  zBase = wbStr(wbPath(pArt, "artifactSequence", "latestArtifact", "id", (char*)0));
  if( jGet(pArt, "versionIndex") && jGet(pArt, "versionIndex")->type==JT_INT ){
    iVersion = jGet(pArt, "versionIndex")->i;
  }
  if( zArtId==0 || zState==0 ){
    wbErr(p, "graphql CreateArtifact: malformed response (no artifact id or state)");
    goto fail;
  }
  if( strcmp(zState, "COMMITTED")==0 ){
    bDedup = 1;          /* identical content exists: nothing to upload */
  }else if( strcmp(zState, "PENDING")!=0 && strcmp(zState, "DELETED")!=0 ){
    wbErr(p, "graphql CreateArtifact: unexpected artifact state '%s'", zState);
    goto fail;
  }
  /* P2–P7: the files, the manifest, the commit. */
  if( !bDedup && wbPubUpload(p, pl, zRun, zArtId, zBase, &iVersion) ) goto fail;
  if( bCreated && wbFinishRun(p, pl, zRun, 0) ) goto done;

  pRes = wbPubResult(p, pl, iVersion);
  goto done;

fail:
  /* Best effort: a run created here is marked finished, as failed. */
  if( bCreated && p->rc!=SQLITE_NOMEM ){
    int rc = p->rc;
    char *zErr = p->zErr;
    p->rc = SQLITE_OK; p->zErr = 0;
    wbFinishRun(p, pl, zRun, 1);
    sqlite3_free(p->zErr);
    p->rc = rc; p->zErr = zErr;
  }
done:
  if( p->rc ){ jFree(pRes); pRes = 0; }
  jFree(pR1); jFree(pR2);
  return pRes;
}

/* The options of wandb_publish (pOpt, an object, or 0): *pzE, *pzP,
** *pzName, *pzSummaryPath, *pzReportPath and *ppAliases (borrowed from
** pOpt) are set for the options given and left as they are otherwise;
** *pbDry is set when dry_run is.  Errors are reported on ctx as "wandb_publish: ..."
** (returns nonzero). */
static int wbPlanOptions(sqlite3_context *ctx, JNode *pOpt, const char **pzE,
                         const char **pzP, const char **pzName,
                         const char **pzSummaryPath, const char **pzReportPath,
                         JNode **ppAliases, int *pbDry){
  int i;
  for(i=0; pOpt && i<pOpt->nChild; i++){
    JNode *v = pOpt->a[i];
    const char *k = v->zKey;
    if( v->type==JT_NULL ) continue;
    if( strcmp(k, "dry_run")==0 ){
      if( v->type!=JT_TRUE && v->type!=JT_FALSE ){
        profsumCtxErr(ctx, "wandb_publish: option 'dry_run' must be true or false");
        return 1;
      }
      *pbDry = v->type==JT_TRUE;
    }else if( strcmp(k, "aliases")==0 ){
      int j, k2;
      if( v->type!=JT_ARRAY ){
        profsumCtxErr(ctx, "wandb_publish: option 'aliases' must be an array of strings");
        return 1;
      }
      if( v->nChild==0 ) continue;    /* as the reference: `aliases or ["latest"]` */
      for(j=0; j<v->nChild; j++){
        const char *zA = wbStr(v->a[j]);
        if( zA==0 || zA[0]==0 || strpbrk(zA, "/:")!=0 || strlen(zA)>WB_NAME_MAX ){
          profsumCtxErr(ctx, "wandb_publish: invalid alias %s%s%s (aliases are "
                        "non-empty strings without '/' or ':')",
                        zA ? "'" : "", zA ? zA : "(not a string)", zA ? "'" : "");
          return 1;
        }
        for(k2=0; k2<j; k2++){
          if( strcmp(v->a[k2]->z, zA)==0 ){
            profsumCtxErr(ctx, "wandb_publish: duplicate alias '%s'", zA);
            return 1;
          }
        }
      }
      *ppAliases = v;
    }else if( strcmp(k, "entity")==0 || strcmp(k, "project")==0
           || strcmp(k, "artifact_name")==0 || strcmp(k, "report_path")==0
           || strcmp(k, "summary_path")==0 ){
      if( k[0]=='a' && v->type==JT_STRING && v->n==0 ) continue;   /* as the
                                      ** reference: `artifact_name or <default>` */
      if( wbStr(v)==0 || v->n==0 ){
        profsumCtxErr(ctx, "wandb_publish: option '%s' must be a non-empty string", k);
        return 1;
      }
      if( k[0]=='e' ) *pzE = v->z;
      else if( k[0]=='p' ) *pzP = v->z;
      else if( k[0]=='a' ) *pzName = v->z;
      else if( k[0]=='r' ) *pzReportPath = v->z;
      else *pzSummaryPath = v->z;
    }else{
      profsumCtxErr(ctx, "wandb_publish: unknown option '%s' (expected entity, "
                    "project, artifact_name, aliases, dry_run, report_path, "
                    "summary_path)", k);
      return 1;
    }
  }
  if( *pzName && !wbValidName(*pzName) ){
    profsumCtxErr(ctx, "wandb_publish: invalid artifact_name '%s' (1-%d characters "
                  "among letters, digits, '-', '_' and '.')", *pzName, WB_NAME_MAX);
    return 1;
  }
  return 0;
}

/* The base name of path z: what follows its last '/' (z itself when it
** has none). */
static const char *wbBaseName(const char *z){
  const char *zSlash = strrchr(z, '/');
  return zSlash ? zSlash+1 : z;
}

/* Is trace iTrace a profile_summary.v1 document (summary_json set by the
** import)?  1 yes, 0 no; -1 after reporting an error on ctx. */
static int wbTraceIsSummary(sqlite3_context *ctx, sqlite3_int64 iTrace){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0;
  int rc, bV1 = -1;
  rc = sqlite3_prepare_v2(db, "SELECT summary_json IS NOT NULL FROM main.profsum_trace "
                          "WHERE trace_id=?1", -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, iTrace);
    rc = sqlite3_step(pStmt);
  }
  if( rc==SQLITE_ROW ){
    bV1 = sqlite3_column_int(pStmt, 0);
  }else if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    profsumCtxErr(ctx, "wandb_publish: %s", rc==SQLITE_DONE ? "the trace vanished"
                                                             : sqlite3_errmsg(db));
  }
  sqlite3_finalize(pStmt);
  return bV1;
}

/* profsum_summary_json(iTrace) with a final newline (as the reference tool
** writes a summary file) into f, as profile_summary.json.  0, or nonzero
** after reporting an error on ctx. */
static int wbRenderedSummary(sqlite3_context *ctx, sqlite3_int64 iTrace, WbPubFile *f){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0;
  int rc, bOom = 0;
  rc = sqlite3_prepare_v2(db, "SELECT profsum_summary_json(?1)", -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    sqlite3_bind_int64(pStmt, 1, iTrace);
    rc = sqlite3_step(pStmt);
  }
  if( rc!=SQLITE_ROW ){
    if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "wandb_publish: %s", sqlite3_errmsg(db));
    sqlite3_finalize(pStmt);
    return 1;
  }
  f->zPath = WB_PUB_SUMMARY;
  f->zData = wbValueDup(pStmt, 0, &f->nData, &bOom);
  sqlite3_finalize(pStmt);
  if( f->zData==0 ){
    if( bOom ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "wandb_publish: the trace has no summary");
    return 1;
  }
  f->zData[f->nData++] = '\n';        /* wbValueDup left room for it */
  f->zData[f->nData] = 0;
  return 0;
}

/* The files of plan pl for trace pTrace (tools-spec §7: the summary file
** and the report file, if any, each under its base name), sorted by path
** into pl->aFile[0..pl->nFile), pl->iSummary set:
**   * the summary: when zSummaryPath is a regular file and the trace was
**     imported from a profile_summary.v1 document, that file's own bytes
**     under its base name; otherwise (no summary_path, the trace was
**     summarized from a trace or profile, or the file is gzip, which
**     profsum_import reads but is no JSON to publish)
**     profsum_summary_json(trace) plus a newline, as profile_summary.json;
**   * the report: only when zReportPath is given, its bytes under its
**     base name.
** Errors are reported on ctx as "wandb_publish: ..." (returns nonzero;
** the caller clears pl). */
static int wbPlanTexts(sqlite3_context *ctx, sqlite3_value *pTrace,
                       const char *zSummaryPath, const char *zReportPath,
                       WbPlan *pl){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 iTrace;
  char *zErr = 0;
  int rc, bV1, bRendered = 1;
  struct stat st;
  WbPubFile *pSum = &pl->aFile[0];
  rc = profsumResolveTrace(db, "main", pTrace, &iTrace, &zErr);
  if( rc ){
    if( rc==SQLITE_NOMEM && zErr==0 ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "wandb_publish: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    return 1;
  }
  bV1 = wbTraceIsSummary(ctx, iTrace);
  if( bV1<0 ) return 1;
  pl->nFile = 1;
  rc = SQLITE_OK;
  if( bV1 && zSummaryPath && stat(zSummaryPath, &st)==0 && S_ISREG(st.st_mode) ){
    rc = wbReadFile("summary_path", zSummaryPath, &pSum->zData, &pSum->nData, &zErr);
    if( rc==SQLITE_OK && pSum->nData>=2 && (unsigned char)pSum->zData[0]==0x1f
     && (unsigned char)pSum->zData[1]==0x8b ){
      /* a gzip summary: the document profsum read from it is sent */
      sqlite3_free(pSum->zData);
      pSum->zData = 0;
      pSum->nData = 0;
    }else if( rc==SQLITE_OK ){
      pSum->zPath = wbBaseName(zSummaryPath);
      bRendered = 0;
    }
  }
  if( rc==SQLITE_OK && bRendered && wbRenderedSummary(ctx, iTrace, pSum) ) return 1;
  if( rc==SQLITE_OK && zReportPath ){
    WbPubFile *pRep = &pl->aFile[1];
    pRep->zPath = wbBaseName(zReportPath);
    if( pRep->zPath[0]==0 ){
      zErr = sqlite3_mprintf("report_path '%s' names no file", zReportPath);
      rc = SQLITE_ERROR;
    }else if( strcmp(pRep->zPath, pSum->zPath)==0 ){
      zErr = sqlite3_mprintf("the summary and the report have the same base name '%s' "
                             "(the artifact holds each file under its base name)",
                             pRep->zPath);
      rc = SQLITE_ERROR;
    }else{
      rc = wbReadFile("report_path", zReportPath, &pRep->zData, &pRep->nData, &zErr);
    }
    if( rc==SQLITE_OK ) pl->nFile = 2;
  }
  if( rc!=SQLITE_OK ){
    /* an error whose message could not be made is out of memory */
    if( rc==SQLITE_NOMEM || zErr==0 ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "wandb_publish: %s", zErr);
    sqlite3_free(zErr);
    return 1;
  }
  /* Sorted by path, as the manifest and its digest list them. */
  if( pl->nFile==2 && strcmp(pl->aFile[0].zPath, pl->aFile[1].zPath)>0 ){
    WbPubFile t = pl->aFile[0];
    pl->aFile[0] = pl->aFile[1];
    pl->aFile[1] = t;
    pl->iSummary = 1;
  }
  return 0;
}

/* Build the plan of wandb_publish for trace argument pTrace and parsed
** options pOpt (may be 0).  Errors are reported on ctx (returns nonzero). */
int wbPlanBuild(sqlite3_context *ctx, sqlite3_value *pTrace, JNode *pOpt,
                WbPlan *pl, int *pbDry){
  char *zErr = 0;
  const char *zE = getenv("WANDB_ENTITY"), *zP = getenv("WANDB_PROJECT");
  const char *zName = 0, *zSummaryPath = 0, *zReportPath = 0, *zRunId, *zRunPath;
  JNode *pAliases = 0, *pDoc = 0, *pRm;
  WbPubFile *pSum;
  int i, bOom = 0, bSame = 1;

  memset(pl, 0, sizeof(*pl));
  *pbDry = 0;
  if( wbPlanOptions(ctx, pOpt, &zE, &zP, &zName, &zSummaryPath, &zReportPath,
                    &pAliases, pbDry) ){
    return 1;
  }
  /* The files. */
  if( wbPlanTexts(ctx, pTrace, zSummaryPath, zReportPath, pl) ) return 1;
  for(i=0; i<pl->nFile; i++){
    wbMd5B64(pl->aFile[i].zData, pl->aFile[i].nData, pl->aFile[i].zDigest);
  }
  wbPlanDigest(pl);

  /* Target. */
  if( (zE==0 || zE[0]==0) || (zP==0 || zP[0]==0) ){
    const char *zMissing = (zE==0 || zE[0]==0)
        ? ((zP==0 || zP[0]==0) ? "an entity and a project" : "an entity")
        : "a project";
    profsumCtxErr(ctx, "wandb_publish: no target: needs %s (options entity/project "
                  "or WANDB_ENTITY/WANDB_PROJECT)", zMissing);
    return 1;
  }
  pl->zEntity = zE;
  pl->zProject = zP;
  pl->zSummaryPath = zSummaryPath;
  pl->zReportPath = zReportPath;
  if( pAliases ){
    pl->pAliases = jClone(pAliases);
  }else{
    pl->pAliases = jArr();
    if( pl->pAliases ) jPush(pl->pAliases, jStr("latest", -1));
  }

  /* The summary document: metadata, default name, run. */
  pSum = &pl->aFile[pl->iSummary];
  pDoc = jParse(pSum->zData, (int)pSum->nData, &zErr);
  if( pDoc==0 ){
    if( zErr ) profsumCtxErr(ctx, "wandb_publish: the summary is not JSON: %s", zErr);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(zErr);
    return 1;
  }
  pRm = jGet(pDoc, "run_metadata");
  zRunId = wbStr(jGet(pRm, "run_id"));
  zRunPath = wbStr(jGet(pRm, "run_path"));
  pl->zName = zName ? sqlite3_mprintf("%s", zName) : wbDefaultName(zRunId);

  /* The run (§6.3): the profiled run when run_metadata names one in the
  ** target project, else a dedicated run is created. */
  if( zRunPath ){
    size_t nE = strlen(zE), nP = strlen(zP);
    bSame = strncmp(zRunPath, zE, nE)==0 && zRunPath[nE]=='/'
         && strncmp(zRunPath+nE+1, zP, nP)==0 && zRunPath[nE+1+nP]=='/';
  }
  if( zRunId && zRunId[0] && bSame ){
    pl->zRun = sqlite3_mprintf("%s", zRunId);
    if( pl->zRun==0 ) bOom = 1;
  }
  pl->pMeta = wbPubMetadata(pDoc);
  jFree(pDoc);
  if( bOom || pl->zName==0 || pl->pAliases==0 || jOom(pl->pAliases) || pl->pMeta==0 ){
    sqlite3_result_error_nomem(ctx);
    return 1;
  }
  return 0;
}

/* The dry-run answer (tools-spec §7): status "dry_run", the members of
** wbPubAnswer and the artifact's metadata; no request made.  0 when out
** of memory. */
JNode *wbPlanJson(const WbPlan *pl){
  JNode *r = wbPubAnswer(pl, "dry_run");
  if( r==0 ) return 0;
  jSet(r, "metadata", jClone(pl->pMeta));
  if( jOom(r) ){ jFree(r); r = 0; }
  return r;
}

#endif /* !PROFSUM_OMIT_NETWORK */
