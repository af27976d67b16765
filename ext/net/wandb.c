/*
** wandb.c — Weights & Biases input side over libcurl: wandb_fetch(),
** wandb_fetch_run(), the fetch step of profsum_import for W&B sources, and
** wandb_publish() (publishing a profile_summary artifact, §6).
**
** Protocol: wandb-http.md, the W&B HTTP protocol notes (GraphQL queries
** §2–§4, the manifest §3, errors and retries §7).  User documentation:
** docs/wandb.md.
**
** Security rules kept here:
**   - the API key goes only to the API routes profsum builds from
**     WANDB_BASE_URL: POST {base}/graphql, POST {base}/files/.../file_stream
**     and the legacy download GET {base}/artifacts[V2]/... (the request's
**     WbSink has bApi set).  A URL the API hands out (manifest and file
**     directUrls, upload URLs) never gets it, whatever its host: a
**     self-hosted server serves storage from its own host and port, and an
**     S3-style store refuses a presigned URL sent with a second credential.
**     wbPerform() decides per hop: the header only on a hop with the API
**     origin (scheme, host, port); redirects of keyed requests are
**     followed by hand (curl never follows them with the header, and
**     CURLOPT_UNRESTRICTED_AUTH stays off); a POST is re-sent with the key
**     only to the API origin (another origin is refused), and a redirected
**     GET continues without the key, since its Location is storage;
**   - error messages pass through wbScrub(), which masks the key, its
**     base64 credential and any 6-byte piece of either; a server's text is
**     masked whole before it is cut (wbBodyMessage);
**   - a download stops at its manifest entry's size (wbFetchEntry), and at
**     the call's PROFSUM_WANDB_MAX_BYTES;
**   - manifest file names are checked (no absolute paths, no "." / ".."
**     / empty components) and every directory below dest_dir is opened with
**     O_NOFOLLOW, so a symlink planted inside dest_dir is never followed;
**   - files are written to an O_EXCL|O_NOFOLLOW temporary file next to the
**     target and renamed only after the size and MD5 checks.
**
** Built with PROFSUM_OMIT_NETWORK the functions exist and fail with a
** clear message; nothing then references libcurl.
*/
#include "wandb.h"
#include "hash.h"
#include "jsontree.h"
#include "summary_doc.h"

#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <stdarg.h>

/*
** Pure string test (see wandb.h): "wandb:", "wandb-run:", "http://",
** "https://" prefixes (the URL schemes case-insensitively).
*/
int profsumWandbIsSource(const char *zSource){
  if( zSource==0 ) return 0;
  return strncmp(zSource, "wandb:", 6)==0
      || strncmp(zSource, "wandb-run:", 10)==0
      || strncasecmp(zSource, "http://", 7)==0
      || strncasecmp(zSource, "https://", 8)==0;
}

#ifdef PROFSUM_OMIT_NETWORK
/* ======================================================================
** Build without network support: every entry point fails clearly.
*/
#define WB_NONET "profsum was built without network support (make NETWORK=0)"

/* wandb_fetch(...): always the no-network error. */
static void wbFetchFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_error(ctx, "wandb_fetch: " WB_NONET, -1);
}
/* wandb_fetch_run(...): always the no-network error. */
static void wbFetchRunFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_error(ctx, "wandb_fetch_run: " WB_NONET, -1);
}
/* wandb_publish(...): always the no-network error. */
static void wbPublishFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_error(ctx, "wandb_publish: " WB_NONET, -1);
}

/* See wandb.h.  Always fails: no network in this build. */
int profsumWandbFetchForImport(sqlite3 *db, const char *zSource, const char *zAlias,
                               char **pzLocalDir, char **pzRunMetadataJson,
                               char **pzErr){
  (void)db; (void)zSource; (void)zAlias;
  *pzLocalDir = 0;
  *pzRunMetadataJson = 0;
  *pzErr = sqlite3_mprintf("%s", WB_NONET);
  return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

#else /* !PROFSUM_OMIT_NETWORK */
/* ======================================================================
** Network build.
*/
#include "curl_lazy.h"
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define WB_UA            "profsum/" PROFSUM_VERSION " (libcurl)"
#define WB_MAX_RETRIES   5                 /* retries after the first try */
#define WB_MAX_HOPS      5                 /* manual redirects per request */
#define WB_MEM_LIMIT     ((sqlite3_int64)256<<20)  /* JSON response cap */
#define WB_ERRBODY       4096              /* kept bytes of error bodies */
#define WB_PAGE_FILES    1000              /* ArtifactFileURLs perPage */
#define WB_PAGE_RUNS     100               /* RunOutputArtifacts perPage */
#define WB_MAX_PAGES     100000            /* guard against cursor loops */
#define WB_MAX_TIMEOUT   2147483           /* seconds: INT_MAX/1000, the most
                                           ** CURLOPT_TIMEOUT accepts */

/* GraphQL texts (wandb-http.md §8; RunOutputArtifacts also asks for the
** aliases as §4.3 recommends; ArtifactCreatedBy is profsum's own, used
** best-effort for the run that logged an artifact). */
static const char wbQArtifactByName[] =
  "query ArtifactByName($entity: String!, $project: String!, $name: String!) "
  "{ project(name: $project, entityName: $entity) { artifact(name: $name) "
  "{ id state digest size fileCount versionIndex createdAt artifactType "
  "{ name } artifactSequence { name project { name entity { name } } } "
  "aliases { alias } currentManifest { file { directUrl } } } } }";
static const char wbQFetchManifest[] =
  "query FetchArtifactManifest($id: ID!) { artifact(id: $id) "
  "{ currentManifest { file { directUrl } } } }";
static const char wbQFileUrls[] =
  "query ArtifactFileURLs($id: ID!, $cursor: String, $perPage: Int) "
  "{ artifact(id: $id) { files(after: $cursor, first: $perPage) "
  "{ pageInfo { hasNextPage endCursor } edges { node { name directUrl } } "
  "} } }";
/* One file's URL again, by name, when its presigned URL failed (expired):
** the by-id form of the Python SDK's refresh (wandb-http.md §3.3 "URL
** expiry": files(names: [<path>], first: 1)). */
static const char wbQFileUrlByName[] =
  "query ArtifactFileURLByName($id: ID!, $names: [String!]) "
  "{ artifact(id: $id) { files(names: $names, first: 1) "
  "{ edges { node { name directUrl } } } } }";
static const char wbQRunOutputs[] =
  "query RunOutputArtifacts($entity: String!, $project: String!, "
  "$run: String!, $cursor: String, $perPage: Int) { project(name: $project, "
  "entityName: $entity) { run(name: $run) { outputArtifacts(after: $cursor, "
  "first: $perPage) { totalCount pageInfo { endCursor hasNextPage } edges "
  "{ cursor node { id state versionIndex createdAt artifactType { name } "
  "artifactSequence { name project { name entity { name } } } "
  "aliases { alias } } } } } } }";
static const char wbQRunInfo[] =
  "query RunInfo($entity: String!, $project: String!, $run: String!) "
  "{ project(name: $project, entityName: $entity) { run(name: $run) "
  "{ id name displayName state createdAt host commit config summaryMetrics "
  "} } }";
static const char wbQCreatedBy[] =
  "query ArtifactCreatedBy($id: ID!) { artifact(id: $id) { createdBy "
  "{ __typename ... on Run { name project { name entity { name } } } } } }";

/* ---------------------------------------------------------------------
** The state of one W&B operation (one SQL call or one import fetch).
*/
typedef struct Wb {
  char *zBase;            /* WANDB_BASE_URL without trailing '/' */
  char *zOrigin;          /* "scheme://host:port" of zBase, lower case */
  char *zNetloc;          /* host[:port] as written (netrc machine name) */
  char *zHost;            /* host only */
  char *zKey;             /* API key */
  char *zAuthHdr;         /* "Authorization: Basic ..." */
  char *zAuthB64;         /* the base64 part of zAuthHdr (scrubbed too) */
  long nConnect, nTotal;  /* curl timeouts, seconds */
  double rRetryBudget;    /* max seconds spent waiting between retries */
  sqlite3_int64 nMaxBytes;/* download size limit for the whole call */
  sqlite3_int64 nUsed;    /* bytes downloaded so far */
  CURL *curl;             /* reused handle (keeps connections) */
  int rc;                 /* first error code, SQLITE_OK if none */
  char *zErr;             /* first error message (sqlite3_malloc'd) */
  long iHttpFail;         /* HTTP status the last wbRequest failed with,
                          ** 0 if it succeeded or failed otherwise */
} Wb;

/* Description of one artifact version being fetched. */
typedef struct WbArt {
  char *zId, *zEntity, *zProject, *zName, *zType, *zState, *zManifestUrl;
  char *zCreatedAt;
  sqlite3_int64 iVersion;
  char **azAlias; int nAlias;
} WbArt;

/* Record the first error of p (later ones are ignored).  Out of memory
** while formatting leaves rc==SQLITE_NOMEM without a message. */
static void wbErr(Wb *p, const char *zFmt, ...){
  va_list ap;
  if( p->rc ) return;
  va_start(ap, zFmt);
  p->zErr = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  p->rc = p->zErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Record an out-of-memory error (unless an error is already recorded). */
static void wbOom(Wb *p){
  if( p->rc==SQLITE_OK ) p->rc = SQLITE_NOMEM;
}

/* Forget the recorded error (used by best-effort steps). */
static void wbClearErr(Wb *p){
  sqlite3_free(p->zErr);
  p->zErr = 0;
  p->rc = SQLITE_OK;
}

/* Bytes that XML whitespace folding (wbXmlText) or a line break inserted
** by a server may put inside an echoed secret: skipped while matching. */
static int wbIsGap(char c){
  return (unsigned char)c<=' ' || c==0x7f;
}

/* Mask zSecret in z (in place) with '*': every occurrence of the whole
** secret, and every run of at least nMinFrag bytes of z that equals a
** piece (substring) of it, so that neither the secret nor a part of it
** that a cut left behind survives.  Whitespace and control bytes inside
** such a run are skipped while matching (a key split by a line break or
** folded by wbXmlText is still found) and masked with it.  Secrets
** shorter than 4 bytes are left alone (they would mask ordinary text).
** At each position the longest match over every start in the secret is
** taken: O(strlen(z) * strlen(zSecret)^2) at worst, for short texts. */
static void wbMask(char *z, const char *zSecret, size_t nMinFrag){
  size_t nS, i, j;
  if( z==0 || zSecret==0 ) return;
  nS = strlen(zSecret);
  if( nS<4 ) return;
  for(i=0; z[i]; ){
    size_t nBest = 0, iEnd = 0;
    for(j=0; j<nS && nBest<nS-j; j++){
      size_t k = i, m = 0, kEnd = i;
      while( j+m<nS && z[k] ){
        if( z[k]==zSecret[j+m] ){ m++; k++; kEnd = k; }
        else if( m>0 && wbIsGap(z[k]) ) k++;
        else break;
      }
      if( m>nBest ){ nBest = m; iEnd = kEnd; }
    }
    if( nBest>0 && (nBest==nS || nBest>=nMinFrag) ){
      memset(z+i, '*', iEnd-i);
      i = iEnd;
    }else{
      i++;
    }
  }
}

/* Shortest piece of a secret masked by itself (see wbMask). */
#define WB_MIN_FRAG 6

/* Mask the API key, the base64 credential "api:<key>" of the
** Authorization header, and any piece of either of WB_MIN_FRAG bytes or
** more, in z (in place). */
static void wbScrubText(Wb *p, char *z){
  wbMask(z, p->zKey, WB_MIN_FRAG);
  wbMask(z, p->zAuthB64, WB_MIN_FRAG);
}

/* Remove the API key (and its base64 form) from the error message of p. */
static void wbScrub(Wb *p){
  wbScrubText(p, p->zErr);
}

/* Cut z (in place) to at most nMax bytes, not inside a UTF-8 sequence. */
static void wbCut(char *z, size_t nMax){
  size_t n = strlen(z);
  if( n<=nMax ) return;
  while( nMax>0 && ((unsigned char)z[nMax]&0xC0)==0x80 ) nMax--;
  z[nMax] = 0;
}

/* sqlite3_mprintf("%s") that records OOM in p.  z==0 gives 0. */
static char *wbDup(Wb *p, const char *z){
  char *r;
  if( z==0 ) return 0;
  r = sqlite3_mprintf("%s", z);
  if( r==0 ) wbOom(p);
  return r;
}

/* Sleep r seconds (r<=0: no sleep; more than WB_MAX_SLEEP: that long),
** resuming after signals. */
#define WB_MAX_SLEEP 1.0e9
static void wbSleep(double r){
  struct timespec ts, rem;
  if( !(r>0) ) return;
  if( r>WB_MAX_SLEEP ) r = WB_MAX_SLEEP;   /* (time_t)r must be defined */
  ts.tv_sec = (time_t)r;
  ts.tv_nsec = (long)((r - (double)ts.tv_sec)*1e9);
  while( nanosleep(&ts, &rem)!=0 && errno==EINTR ) ts = rem;
}

/* A positive number from environment variable zName, else rDefault.
** Invalid or negative values give rDefault. */
static double wbEnvNum(const char *zName, double rDefault){
  const char *z = getenv(zName);
  char *zEnd = 0;
  double r;
  if( z==0 || z[0]==0 ) return rDefault;
  r = strtod(z, &zEnd);
  if( zEnd==z || *zEnd!=0 || !(r>=0) || isinf(r) ) return rDefault;
  return r;
}

/* ---------------------------------------------------------------------
** JSON helpers.
*/

/* Follow object keys from p (NULL-terminated list); 0 when missing. */
static JNode *wbPath(JNode *p, ...){
  va_list ap;
  const char *zKey;
  va_start(ap, p);
  while( p && (zKey = va_arg(ap, const char*))!=0 ){
    p = (p->type==JT_OBJECT) ? jGet(p, zKey) : 0;
  }
  va_end(ap);
  return p;
}

/* The string value of p, or 0 when p is not a (NUL-free) string. */
static const char *wbStr(const JNode *p){
  if( p==0 || p->type!=JT_STRING || p->z==0 ) return 0;
  if( (int)strlen(p->z)!=p->n ) return 0;
  return p->z;
}

/* GraphQL paging: with pInfo the connection's pageInfo object, move
** *pzCursor to its endCursor.  1 when there is a next page (hasNextPage true
** and a cursor that moves on), 0 at the end or when out of memory (p->rc). */
static int wbNextPage(Wb *p, JNode *pInfo, char **pzCursor){
  JNode *pMore = wbPath(pInfo, "hasNextPage", (char*)0);
  const char *zEnd = wbStr(wbPath(pInfo, "endCursor", (char*)0));
  char *z;
  if( pMore==0 || pMore->type!=JT_TRUE || zEnd==0
   || (*pzCursor && strcmp(*pzCursor, zEnd)==0) ) return 0;
  z = wbDup(p, zEnd);
  sqlite3_free(*pzCursor);
  *pzCursor = z;
  return z!=0;
}

/* Longest server-supplied text kept in a message (after masking), and
** how much of it is masked before the cut: enough for a key that starts
** before the cut to be seen whole even with line breaks inside it. */
#define WB_MSG_MAX  200
#define WB_MSG_SCAN (WB_MSG_MAX + WB_ERRBODY)

/* A server's text z (0: nothing) as a message shows it: the key masked in
** the whole of it, then cut to WB_MSG_MAX bytes (a cut first could leave a
** piece of the key too short to be recognized). */
static void wbScrubCut(Wb *p, char *z){
  if( z==0 ) return;
  wbScrubText(p, z);
  wbCut(z, WB_MSG_MAX);
}

/* The text of XML element <zTag>...</zTag> in z[0..n) with whitespace
** runs and control bytes turned into single spaces, at most WB_MSG_SCAN
** bytes (the caller masks the key in it before cutting it to WB_MSG_MAX),
** sqlite3_malloc'd, or 0 when absent, empty or out of memory. */
static char *wbXmlText(const char *z, int n, const char *zTag){
  char zOpen[24], zClose[24];
  const char *zEnd = z+n, *zA, *zB;
  size_t nOpen, nClose;
  sqlite3_str *s;
  int bSpace = 0;
  snprintf(zOpen, sizeof(zOpen), "<%s>", zTag);
  snprintf(zClose, sizeof(zClose), "</%s>", zTag);
  nOpen = strlen(zOpen);
  nClose = strlen(zClose);
  for(zA=z; zA+nOpen<=zEnd && memcmp(zA, zOpen, nOpen)!=0; zA++){}
  if( zA+nOpen>zEnd ) return 0;
  zA += nOpen;
  for(zB=zA; zB+nClose<=zEnd && memcmp(zB, zClose, nClose)!=0; zB++){}
  if( zB+nClose>zEnd ) return 0;
  s = sqlite3_str_new(0);
  for(; zA<zB && sqlite3_str_length(s)<WB_MSG_SCAN; zA++){
    unsigned char c = (unsigned char)*zA;
    if( c<=' ' || c==0x7f ){
      bSpace = sqlite3_str_length(s)>0;
    }else{
      if( bSpace ) sqlite3_str_appendchar(s, 1, ' ');
      bSpace = 0;
      sqlite3_str_appendchar(s, 1, (char)c);
    }
  }
  if( sqlite3_str_errcode(s) || sqlite3_str_length(s)==0 ){
    sqlite3_free(sqlite3_str_finish(s));
    return 0;
  }
  return sqlite3_str_finish(s);
}

/* The first message of a W&B error body: {"errors":[{"message":..}|".."]}
** or {"error":".."|{"message":..}} (wandb-http.md §7), or of an object
** store's XML error (S3, GCS, Azure: <Error><Code>..</Code><Message>..
** </Message>, shown as "Code: Message"), as a presigned download URL
** answers when it has expired.  The key is masked in the whole text
** (wbScrubText) before it is cut to WB_MSG_MAX bytes, so a cut never
** leaves a piece of an unmasked key.  Returns a sqlite3_malloc'd string
** of at most ~400 bytes, or 0. */
static char *wbBodyMessage(Wb *p, const char *z, int n){
  JNode *pRoot, *pE;
  const char *zMsg = 0;
  char *zErr = 0, *zOut = 0;
  if( z==0 || n<=0 ) return 0;
  if( z[0]=='<' ){
    char *zCode = wbXmlText(z, n, "Code"), *zText = wbXmlText(z, n, "Message");
    wbScrubCut(p, zCode);
    wbScrubCut(p, zText);
    if( zCode && zText ) zOut = sqlite3_mprintf("%s: %s", zCode, zText);
    else if( zCode || zText ) zOut = sqlite3_mprintf("%s", zCode ? zCode : zText);
    sqlite3_free(zCode);
    sqlite3_free(zText);
    return zOut;
  }
  pRoot = jParse(z, n, &zErr);
  sqlite3_free(zErr);
  if( pRoot==0 ) return 0;
  pE = jGet(pRoot, "errors");
  if( pE && pE->type==JT_ARRAY && pE->nChild>0 ){
    JNode *p0 = jAt(pE, 0);
    zMsg = wbStr(p0) ? wbStr(p0) : wbStr(wbPath(p0, "message", (char*)0));
  }else if( (pE = jGet(pRoot, "error"))!=0 ){
    zMsg = wbStr(pE) ? wbStr(pE) : wbStr(wbPath(pE, "message", (char*)0));
  }
  if( zMsg ){
    zOut = sqlite3_mprintf("%.*s", WB_MSG_SCAN, zMsg);
    wbScrubCut(p, zOut);
  }
  jFree(pRoot);
  return zOut;
}

/* Append p as Python's json.dumps(sort_keys=True) would (separators ", "
** and ": ", ensure_ascii). */
static void wbPyDump(sqlite3_str *s, const JNode *p);

/* Append the JSON string literal of z[0..n) with ensure_ascii escapes. */
static void wbPyStr(sqlite3_str *s, const char *z, int n){
  const unsigned char *u = (const unsigned char*)z;
  int i = 0;
  sqlite3_str_appendchar(s, 1, '"');
  while( i<n ){
    unsigned c = u[i], cp;
    int len = 1;
    if( c<0x80 ){ cp = c; }
    else if( (c&0xE0)==0xC0 && i+1<n ){ cp = ((c&0x1F)<<6)|(u[i+1]&0x3F); len = 2; }
    else if( (c&0xF0)==0xE0 && i+2<n ){
      cp = ((c&0x0F)<<12)|((u[i+1]&0x3F)<<6)|(u[i+2]&0x3F); len = 3;
    }else if( (c&0xF8)==0xF0 && i+3<n ){
      cp = ((c&0x07)<<18)|((u[i+1]&0x3F)<<12)|((u[i+2]&0x3F)<<6)|(u[i+3]&0x3F);
      len = 4;
    }else{ cp = 0xFFFD; }
    i += len;
    switch( cp ){
      case '"':  sqlite3_str_appendall(s, "\\\""); continue;
      case '\\': sqlite3_str_appendall(s, "\\\\"); continue;
      case '\n': sqlite3_str_appendall(s, "\\n"); continue;
      case '\r': sqlite3_str_appendall(s, "\\r"); continue;
      case '\t': sqlite3_str_appendall(s, "\\t"); continue;
      case '\b': sqlite3_str_appendall(s, "\\b"); continue;
      case '\f': sqlite3_str_appendall(s, "\\f"); continue;
      default: break;
    }
    if( cp>=0x20 && cp<0x7F ){
      sqlite3_str_appendchar(s, 1, (char)cp);
    }else if( cp<0x10000 ){
      sqlite3_str_appendf(s, "\\u%04x", cp);
    }else{
      cp -= 0x10000;
      sqlite3_str_appendf(s, "\\u%04x\\u%04x", 0xD800|(cp>>10), 0xDC00|(cp&0x3FF));
    }
  }
  sqlite3_str_appendchar(s, 1, '"');
}

/* qsort comparator: object members by key (UTF-8 byte order = code point
** order, as Python's sort_keys). */
static int wbCmpKey(const void *a, const void *b){
  const JNode *x = *(const JNode*const*)a, *y = *(const JNode*const*)b;
  return strcmp(x->zKey, y->zKey);
}

static void wbPyDump(sqlite3_str *s, const JNode *p){
  int i;
  char buf[40];
  switch( p->type ){
    case JT_NULL:   sqlite3_str_appendall(s, "null"); break;
    case JT_FALSE:  sqlite3_str_appendall(s, "false"); break;
    case JT_TRUE:   sqlite3_str_appendall(s, "true"); break;
    case JT_INT:    sqlite3_str_appendf(s, "%lld", p->i); break;
    case JT_REAL:   jReprDouble(p->r, buf); sqlite3_str_appendall(s, buf); break;
    case JT_STRING: wbPyStr(s, p->z, p->n); break;
    case JT_ARRAY:
      sqlite3_str_appendchar(s, 1, '[');
      for(i=0; i<p->nChild; i++){
        if( i ) sqlite3_str_appendall(s, ", ");
        wbPyDump(s, p->a[i]);
      }
      sqlite3_str_appendchar(s, 1, ']');
      break;
    default: {
      JNode **a = sqlite3_malloc64(sizeof(JNode*)*(p->nChild+1));
      if( a==0 ){ sqlite3_str_appendall(s, "\x01oom"); break; }
      if( p->nChild>0 ) memcpy(a, p->a, sizeof(JNode*)*p->nChild);
      qsort(a, p->nChild, sizeof(JNode*), wbCmpKey);
      sqlite3_str_appendchar(s, 1, '{');
      for(i=0; i<p->nChild; i++){
        if( i ) sqlite3_str_appendall(s, ", ");
        wbPyStr(s, a[i]->zKey, (int)strlen(a[i]->zKey));
        sqlite3_str_appendall(s, ": ");
        wbPyDump(s, a[i]);
      }
      sqlite3_str_appendchar(s, 1, '}');
      sqlite3_free(a);
      break;
    }
  }
}

/* ---------------------------------------------------------------------
** URLs, configuration and credentials.
*/

/* Parse zUrl; return "scheme://host:port" (lower case, default port
** explicit) sqlite3_malloc'd, or 0 when it is not an http(s) URL.  When
** pzNetloc/pzHost are given they receive host[:port] as written and the
** host (sqlite3_malloc'd). */
static char *wbOriginOf(const char *zUrl, char **pzNetloc, char **pzHost){
  CURLU *u;
  char *zScheme = 0, *zH = 0, *zPort = 0, *zPortW = 0, *zRes = 0, *q;
  if( profsumCurlLoad() ) return 0;
  u = curl_url();
  if( u==0 ) return 0;
  if( curl_url_set(u, CURLUPART_URL, zUrl, 0)==CURLUE_OK
   && curl_url_get(u, CURLUPART_SCHEME, &zScheme, 0)==CURLUE_OK
   && curl_url_get(u, CURLUPART_HOST, &zH, 0)==CURLUE_OK
   && curl_url_get(u, CURLUPART_PORT, &zPort, CURLU_DEFAULT_PORT)==CURLUE_OK
   && (strcasecmp(zScheme, "http")==0 || strcasecmp(zScheme, "https")==0) ){
    for(q=zScheme; *q; q++) if( *q>='A' && *q<='Z' ) *q += 32;
    for(q=zH; *q; q++) if( *q>='A' && *q<='Z' ) *q += 32;
    zRes = sqlite3_mprintf("%s://%s:%s", zScheme, zH, zPort);
    if( curl_url_get(u, CURLUPART_PORT, &zPortW, 0)!=CURLUE_OK ) zPortW = 0;
    if( pzNetloc ){
      *pzNetloc = zPortW ? sqlite3_mprintf("%s:%s", zH, zPortW)
                         : sqlite3_mprintf("%s", zH);
    }
    if( pzHost ) *pzHost = sqlite3_mprintf("%s", zH);
  }
  curl_free(zScheme); curl_free(zH); curl_free(zPort); curl_free(zPortW);
  curl_url_cleanup(u);
  return zRes;
}

/* Does zUrl have the API origin of p (a hop may carry the key only there,
** and only for an API route: see wbPerform)? */
static int wbIsApiOrigin(Wb *p, const char *zUrl){
  char *z = wbOriginOf(zUrl, 0, 0);
  int r = z!=0 && strcmp(z, p->zOrigin)==0;
  sqlite3_free(z);
  return r;
}

/* Read the whole (small) file zPath; sqlite3_malloc'd NUL-terminated text
** or 0 (missing, unreadable, larger than 1 MiB, out of memory). */
static char *wbReadSmallFile(const char *zPath){
  FILE *f = fopen(zPath, "rb");
  char *z;
  size_t n;
  if( f==0 ) return 0;
  z = sqlite3_malloc(1<<20);
  if( z==0 ){ fclose(f); return 0; }
  n = fread(z, 1, (1<<20)-1, f);
  fclose(f);
  z[n] = 0;
  return z;
}

/* The password of the netrc entry for machine zMachine (or of the
** "default" entry), from $NETRC, else ~/.netrc, else ~/_netrc.  Returns
** sqlite3_malloc'd text or 0. */
static char *wbNetrcKey(const char *zMachine){
  const char *zEnv = getenv("NETRC"), *zHome = getenv("HOME");
  char *zText = 0, *zTok, *zSave = 0, *zPw = 0, *zDef = 0;
  int eIn = 0;      /* 0: other entry, 1: our machine, 2: default */
  if( zEnv && zEnv[0] ){
    zText = wbReadSmallFile(zEnv);
  }else if( zHome && zHome[0] ){
    char *zP = sqlite3_mprintf("%s/.netrc", zHome);
    if( zP ) zText = wbReadSmallFile(zP);
    sqlite3_free(zP);
    if( zText==0 ){
      zP = sqlite3_mprintf("%s/_netrc", zHome);
      if( zP ) zText = wbReadSmallFile(zP);
      sqlite3_free(zP);
    }
  }
  if( zText==0 ) return 0;
  for(zTok = strtok_r(zText, " \t\r\n", &zSave); zTok;
      zTok = strtok_r(0, " \t\r\n", &zSave)){
    if( strcmp(zTok, "machine")==0 ){
      char *zM = strtok_r(0, " \t\r\n", &zSave);
      if( zM==0 ) break;
      eIn = strcmp(zM, zMachine)==0 ? 1 : 0;
    }else if( strcmp(zTok, "default")==0 ){
      eIn = 2;
    }else if( strcmp(zTok, "password")==0 ){
      char *zV = strtok_r(0, " \t\r\n", &zSave);
      if( zV==0 ) break;
      if( eIn==1 && zPw==0 ) zPw = sqlite3_mprintf("%s", zV);
      if( eIn==2 && zDef==0 ) zDef = sqlite3_mprintf("%s", zV);
    }else if( strcmp(zTok, "login")==0 || strcmp(zTok, "account")==0
           || strcmp(zTok, "macdef")==0 ){
      if( strtok_r(0, " \t\r\n", &zSave)==0 ) break;
    }
  }
  if( zText ){
    memset(zText, 0, strlen(zText));
    sqlite3_free(zText);
  }
  if( zPw ){ sqlite3_free(zDef); return zPw; }
  return zDef;
}

/* Release everything held by p (safe on a partly set up p). */
static void wbEnd(Wb *p){
  if( p->curl ) curl_easy_cleanup(p->curl);
  if( p->zKey ) memset(p->zKey, 0, strlen(p->zKey));
  if( p->zAuthHdr ) memset(p->zAuthHdr, 0, strlen(p->zAuthHdr));
  if( p->zAuthB64 ) memset(p->zAuthB64, 0, strlen(p->zAuthB64));
  sqlite3_free(p->zBase); sqlite3_free(p->zOrigin); sqlite3_free(p->zNetloc);
  sqlite3_free(p->zHost); sqlite3_free(p->zKey); sqlite3_free(p->zAuthHdr);
  sqlite3_free(p->zAuthB64); sqlite3_free(p->zErr);
  memset(p, 0, sizeof(*p));
}

/* Set up p from the environment (WANDB_BASE_URL, WANDB_API_KEY / netrc,
** PROFSUM_WANDB_TIMEOUT, PROFSUM_WANDB_MAX_RETRY_SECONDS,
** PROFSUM_WANDB_MAX_BYTES) and create the curl handle.  Returns p->rc;
** the caller calls wbEnd() in every case. */
static int wbBegin(Wb *p){
  const char *zB = getenv("WANDB_BASE_URL"), *zK = getenv("WANDB_API_KEY");
  char *zUser;
  size_t n;
  double r;
  memset(p, 0, sizeof(*p));
  {
    const char *zCurlErr = profsumCurlLoad();   /* dlopen + global init, once */
    if( zCurlErr ){
      wbErr(p, "%s", zCurlErr);
      return p->rc;
    }
  }
  if( zB==0 || zB[0]==0 ) zB = "https://api.wandb.ai";
  p->zBase = wbDup(p, zB);
  if( p->zBase==0 ) return p->rc;
  n = strlen(p->zBase);
  while( n>0 && p->zBase[n-1]=='/' ) p->zBase[--n] = 0;
  p->zOrigin = wbOriginOf(p->zBase, &p->zNetloc, &p->zHost);
  if( p->zOrigin==0 || p->zNetloc==0 || p->zHost==0 ){
    wbErr(p, "invalid WANDB_BASE_URL '%s' (expected http(s)://host[:port])", p->zBase);
    return p->rc;
  }
  if( zK && zK[0] ){
    p->zKey = wbDup(p, zK);
  }else{
    p->zKey = wbNetrcKey(p->zNetloc);
    if( p->zKey==0 && strcmp(p->zNetloc, p->zHost)!=0 ) p->zKey = wbNetrcKey(p->zHost);
  }
  if( p->rc ) return p->rc;
  if( p->zKey==0 || p->zKey[0]==0 ){
    wbErr(p, "no api key for '%s': set WANDB_API_KEY or add a netrc entry "
             "(machine %s) to $NETRC or ~/.netrc", p->zNetloc, p->zNetloc);
    return p->rc;
  }
  if( strpbrk(p->zKey, "\r\n")!=0 ){
    wbErr(p, "the api key contains a line break");
    return p->rc;
  }
  zUser = sqlite3_mprintf("api:%s", p->zKey);
  if( zUser==0 ){ wbOom(p); return p->rc; }
  n = strlen(zUser);
  p->zAuthB64 = sqlite3_malloc64(PROFSUM_BASE64_LEN(n)+1);
  if( p->zAuthB64 ) profsumBase64Encode((const unsigned char*)zUser, n, p->zAuthB64);
  memset(zUser, 0, n);
  sqlite3_free(zUser);
  if( p->zAuthB64==0 ){ wbOom(p); return p->rc; }
  p->zAuthHdr = sqlite3_mprintf("Authorization: Basic %s", p->zAuthB64);
  if( p->zAuthHdr==0 ){ wbOom(p); return p->rc; }

  r = wbEnvNum("PROFSUM_WANDB_TIMEOUT", -1);
  if( r>0 ){
    /* Clamped before the conversion (a huge value would overflow long)
    ** to libcurl's own bound for CURLOPT_TIMEOUT, INT_MAX/1000 seconds. */
    if( r>WB_MAX_TIMEOUT ) r = WB_MAX_TIMEOUT;
    p->nTotal = (long)ceil(r);
    p->nConnect = p->nTotal<30 ? p->nTotal : 30;
  }else{
    p->nConnect = 30;
    p->nTotal = 600;
  }
  p->rRetryBudget = wbEnvNum("PROFSUM_WANDB_MAX_RETRY_SECONDS", 120);
  r = wbEnvNum("PROFSUM_WANDB_MAX_BYTES", -1);
  p->nMaxBytes = (r>=0 && r<9.0e18) ? (sqlite3_int64)r : ((sqlite3_int64)8)<<30;
  p->curl = curl_easy_init();
  if( p->curl==0 ) wbErr(p, "curl_easy_init failed");
  return p->rc;
}

/* ---------------------------------------------------------------------
** HTTP transfers.
*/
#define WB_FAIL_LIMIT 1   /* body larger than the size limit */
#define WB_FAIL_WRITE 2   /* write to the output file failed */
#define WB_FAIL_OOM   3   /* out of memory growing the memory body */

/* Where a response body goes: a file descriptor (downloads, MD5 computed
** on the fly) or a growing memory buffer (JSON).  Bodies of non-2xx
** responses go to zErrBody (truncated). */
typedef struct WbSink {
  Wb *p;
  int fd;                       /* >=0: write the body here */
  char *zMem;                   /* fd<0: the body, NUL-terminated */
  sqlite3_int64 nMem, nMemAlloc;
  char zErrBody[WB_ERRBODY+1];  /* body of a non-2xx response */
  int nErrBody;
  ProfsumMd5 md5;               /* MD5 of the body so far */
  sqlite3_int64 nBody;          /* 2xx body bytes so far */
  sqlite3_int64 nLimit;         /* max 2xx body bytes */
  const char *zSizedFile;       /* non-0: a manifest file whose declared
                                ** size (nDeclared) is part of nLimit */
  sqlite3_int64 nDeclared;      /* its declared size */
  sqlite3_int64 nSeen;          /* bytes received when nLimit stopped it */
  int eFail;                    /* WB_FAIL_* set by the write callback */
  int iErrno;                   /* errno of a failed write */
  double rRetryAfter;           /* Retry-After seconds, <0 if none */
  double rRateReset;            /* RateLimit-Reset seconds, <0 if none */
  int bRateZero;                /* RateLimit-Remaining was 0 */
  int bApi;                     /* an API route built from WANDB_BASE_URL
                                ** (GraphQL, file_stream, legacy download):
                                ** the only requests that carry the key */
  /* Uploads (wandb_publish): PUT these bytes with these extra headers,
  ** never with the Authorization header, never following redirects. */
  const char *zPutData;         /* non-0: the request is a PUT of this */
  size_t nPutData;
  const struct curl_slist *pPutHdr;  /* extra headers of the PUT */
} WbSink;

/* Prepare s for a new attempt: empty body, fresh MD5, headers forgotten,
** and the output file (if any) truncated. */
static void wbSinkReset(WbSink *s){
  s->nMem = 0;
  if( s->zMem ) s->zMem[0] = 0;
  s->nErrBody = 0;
  s->zErrBody[0] = 0;
  s->nBody = 0;
  s->nSeen = 0;
  s->eFail = 0;
  s->iErrno = 0;
  s->rRetryAfter = -1;
  s->rRateReset = -1;
  s->bRateZero = 0;
  profsumMd5Init(&s->md5);
  if( s->fd>=0 ){
    if( ftruncate(s->fd, 0)!=0 || lseek(s->fd, 0, SEEK_SET)!=0 ){
      s->eFail = WB_FAIL_WRITE;
      s->iErrno = errno;
    }
  }
}

/* curl write callback: append to the sink, enforcing the size limit.
** Returning less than asked aborts the transfer (CURLE_WRITE_ERROR). */
static size_t wbWriteCb(char *ptr, size_t sz, size_t nmemb, void *pArg){
  WbSink *s = (WbSink*)pArg;
  size_t n = sz*nmemb;
  long code = 0;
  curl_easy_getinfo(s->p->curl, CURLINFO_RESPONSE_CODE, &code);
  if( code<200 || code>=300 ){
    size_t k = WB_ERRBODY - s->nErrBody;
    if( k>n ) k = n;
    memcpy(s->zErrBody+s->nErrBody, ptr, k);
    s->nErrBody += (int)k;
    s->zErrBody[s->nErrBody] = 0;
    return n;
  }
  if( s->eFail ) return 0;
  if( (sqlite3_int64)n > s->nLimit - s->nBody ){
    s->nSeen = s->nBody + (sqlite3_int64)n;
    s->eFail = WB_FAIL_LIMIT;
    return 0;
  }
  if( s->fd>=0 ){
    size_t off = 0;
    while( off<n ){
      ssize_t w = write(s->fd, ptr+off, n-off);
      if( w<0 && errno==EINTR ) continue;
      if( w<=0 ){ s->eFail = WB_FAIL_WRITE; s->iErrno = errno; return 0; }
      off += (size_t)w;
    }
  }else{
    if( s->nMem + (sqlite3_int64)n + 1 > s->nMemAlloc ){
      sqlite3_int64 nNew = s->nMemAlloc ? s->nMemAlloc*2 : 16384;
      char *zNew;
      while( nNew < s->nMem + (sqlite3_int64)n + 1 ) nNew *= 2;
      zNew = sqlite3_realloc64(s->zMem, nNew);
      if( zNew==0 ){ s->eFail = WB_FAIL_OOM; return 0; }
      s->zMem = zNew;
      s->nMemAlloc = nNew;
    }
    memcpy(s->zMem+s->nMem, ptr, n);
    s->nMem += n;
    s->zMem[s->nMem] = 0;
  }
  profsumMd5Update(&s->md5, ptr, n);
  s->nBody += n;
  return n;
}

/* If header line b[0..n) is "zName: value", return the value as a number
** (seconds); -1 otherwise. */
static double wbHeaderNum(const char *b, size_t n, const char *zName){
  size_t k = strlen(zName), i;
  char buf[64];
  char *zEnd;
  double r;
  if( n<=k || strncasecmp(b, zName, k)!=0 || b[k]!=':' ) return -1;
  for(i=k+1; i<n && (b[i]==' ' || b[i]=='\t'); i++){}
  k = 0;
  while( i<n && k<sizeof(buf)-1 && b[i]!='\r' && b[i]!='\n' ) buf[k++] = b[i++];
  buf[k] = 0;
  r = strtod(buf, &zEnd);
  if( zEnd==buf || !(r>=0) || isinf(r) ) return -1;
  return r;
}

/* curl header callback: remember Retry-After and RateLimit-* values of the
** current response (reset at each status line). */
static size_t wbHeaderCb(char *b, size_t sz, size_t nmemb, void *pArg){
  WbSink *s = (WbSink*)pArg;
  size_t n = sz*nmemb;
  double r;
  if( n>=5 && strncmp(b, "HTTP/", 5)==0 ){
    s->rRetryAfter = -1; s->rRateReset = -1; s->bRateZero = 0;
  }else if( (r = wbHeaderNum(b, n, "retry-after"))>=0 ){
    s->rRetryAfter = r;
  }else if( (r = wbHeaderNum(b, n, "ratelimit-reset"))>=0 ){
    s->rRateReset = r;
  }else if( (r = wbHeaderNum(b, n, "ratelimit-remaining"))>=0 ){
    s->bRateZero = (r==0);
  }
  return n;
}

/* One attempt: GET zUrl (or POST zPost as JSON, or PUT s->zPutData when
** that is set: an upload to storage, redirects not followed) into s.
** Whether a hop carries the Authorization header is decided per hop: only
** when s->bApi (an API route built from WANDB_BASE_URL; never a URL the
** API handed out, whatever its host), the hop's URL has the API origin,
** and no earlier hop dropped the key.  Redirects of a keyed request are
** followed here, by hand: a POST (307/308 only) is re-sent with the key to
** the API origin and refused to another one; a GET continues without the
** key (the Location is storage) and curl follows any further hop.
** Requests without the header let curl follow redirects (no credential is
** set on the handle: CURLOPT_UNRESTRICTED_AUTH off, curl's netrc off).
** Returns the CURLcode (CURLE_OK when an HTTP response arrived) and puts
** the final status in *pCode.  zCurlErr (CURL_ERROR_SIZE) receives curl's
** message.  Sets p->rc only for out-of-memory and refused redirects. */
static CURLcode wbPerform(Wb *p, const char *zUrl, const char *zPost,
                          WbSink *s, long *pCode, char *zCurlErr){
  char *zCur = wbDup(p, zUrl);
  CURLcode rc = CURLE_OK;
  int nHop = 0;
  int bKeyOk = s->bApi && s->zPutData==0;   /* the key may still go along */
  *pCode = 0;
  while( zCur ){
    struct curl_slist *pHdr = 0, *pNew;
    int bAuth = bKeyOk && wbIsApiOrigin(p, zCur);
    CURL *c = p->curl;
    long code = 0;
    curl_easy_reset(c);
    zCurlErr[0] = 0;
    curl_easy_setopt(c, CURLOPT_URL, zCur);
    curl_easy_setopt(c, CURLOPT_USERAGENT, WB_UA);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, p->nConnect);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, p->nTotal);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, zCurlErr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, wbWriteCb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, wbHeaderCb);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, bAuth ? 0L : 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)WB_MAX_HOPS);
    curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
    if( zPost ){
      pNew = curl_slist_append(pHdr, "Content-Type: application/json");
      if( pNew ) pHdr = pNew;
      pNew = curl_slist_append(pHdr, "Accept: application/json");
      if( pNew ) pHdr = pNew;
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, zPost);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(zPost));
    }
    if( s->zPutData ){
      const struct curl_slist *q;
      int bOom = 0;
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, s->zPutData);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)s->nPutData);
      curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
      for(q=s->pPutHdr; q && !bOom; q=q->next){
        pNew = curl_slist_append(pHdr, q->data);
        if( pNew ) pHdr = pNew; else bOom = 1;
      }
      if( bOom ){ curl_slist_free_all(pHdr); wbOom(p); break; }
    }
    if( bAuth ){
      pNew = curl_slist_append(pHdr, p->zAuthHdr);
      if( pNew==0 ){ curl_slist_free_all(pHdr); wbOom(p); break; }
      pHdr = pNew;
    }
    if( zPost && pHdr==0 ){ wbOom(p); break; }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, pHdr);
    rc = curl_easy_perform(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist*)0);
    curl_slist_free_all(pHdr);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    *pCode = code;
    if( rc==CURLE_OK && bAuth
     && (code==301 || code==302 || code==303 || code==307 || code==308) ){
      char *zLoc = 0;
      curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &zLoc);
      if( zLoc==0 ) break;
      if( ++nHop > WB_MAX_HOPS ){
        wbErr(p, "too many redirects (more than %d)", WB_MAX_HOPS);
        break;
      }
      if( zPost && (code!=307 && code!=308) ){
        wbErr(p, "graphql request answered with redirect %ld; not following", code);
        break;
      }
      if( zPost && !wbIsApiOrigin(p, zLoc) ){
        wbErr(p, "graphql request redirected to another host; not following");
        break;
      }
      if( zPost==0 ) bKeyOk = 0;   /* a GET's Location is storage: no key */
      sqlite3_free(zCur);
      zCur = wbDup(p, zLoc);
      wbSinkReset(s);
      continue;
    }
    break;
  }
  sqlite3_free(zCur);
  return rc;
}

/* Is curl error rc worth a retry (connection trouble, timeout, cut-off
** body)? */
static int wbCurlTransient(CURLcode rc){
  switch( rc ){
    case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR: case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE: case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_SSL_CONNECT_ERROR: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
      return 1;
    default:
      return 0;
  }
}

/* Text for a failed HTTP status (sqlite3_malloc'd, may be 0 on OOM). */
static char *wbStatusText(Wb *p, long code, WbSink *s){
  char *zMsg = wbBodyMessage(p, s->zErrBody, s->nErrBody);
  char *zRes;
  const char *zSep = zMsg ? ": " : "";
  const char *zM = zMsg ? zMsg : "";
  switch( code ){
    case 401:
      zRes = sqlite3_mprintf("authentication failed (http 401%s%s); check "
             "WANDB_API_KEY or the netrc entry for '%s'", zSep, zM, p->zNetloc);
      break;
    case 403:
      zRes = sqlite3_mprintf("permission denied (http 403%s%s)", zSep, zM);
      break;
    case 404:
      zRes = sqlite3_mprintf("not found (http 404%s%s)", zSep, zM);
      break;
    default:
      zRes = sqlite3_mprintf("http %ld%s%s", code, zSep, zM);
      break;
  }
  sqlite3_free(zMsg);
  return zRes;
}

/* Perform a request with retries: connection errors, timeouts, truncated
** bodies and HTTP 408/429/500/502/503/504 are retried up to WB_MAX_RETRIES
** times with exponential backoff (1 s, x2, up to 25 % jitter, cap 60 s),
** or the Retry-After / RateLimit-Reset the server asked for, as long as
** the total waiting stays within p->rRetryBudget.  Succeeds (returns
** SQLITE_OK) only on a 2xx response; otherwise records "<zWhat>: <why>"
** and returns p->rc. */
static int wbRequest(Wb *p, const char *zWhat, const char *zUrl,
                     const char *zPost, WbSink *s){
  char zCurlErr[CURL_ERROR_SIZE+1];
  double rWaited = 0;
  int nTry;
  p->iHttpFail = 0;
  for(nTry=1; p->rc==SQLITE_OK; nTry++){
    long code = 0;
    CURLcode rc;
    char *zWhy = 0;
    int bRetry = 0;
    double rWait;
    wbSinkReset(s);
    if( s->eFail==WB_FAIL_WRITE ){
      wbErr(p, "%s: cannot write the temporary file: %s", zWhat, strerror(s->iErrno));
      break;
    }
    rc = wbPerform(p, zUrl, zPost, s, &code, zCurlErr);
    if( p->rc ){
      if( p->zErr ){
        char *z = sqlite3_mprintf("%s: %s", zWhat, p->zErr);
        sqlite3_free(p->zErr);
        p->zErr = z;
        if( z==0 ) p->rc = SQLITE_NOMEM;
      }
      break;
    }
    if( s->eFail==WB_FAIL_LIMIT && s->zSizedFile && s->nSeen>s->nDeclared ){
      wbErr(p, "size mismatch for '%s': manifest says %lld bytes, got more "
               "(download stopped at %lld bytes received)",
            s->zSizedFile, s->nDeclared, s->nSeen);
      break;
    }
    if( s->eFail==WB_FAIL_LIMIT ){
      wbErr(p, "%s: exceeds the size limit of %lld bytes (PROFSUM_WANDB_MAX_BYTES)",
            zWhat, p->nMaxBytes);
      break;
    }
    if( s->eFail==WB_FAIL_WRITE ){
      wbErr(p, "%s: cannot write the temporary file: %s", zWhat, strerror(s->iErrno));
      break;
    }
    if( s->eFail==WB_FAIL_OOM ){ wbOom(p); break; }
    if( rc!=CURLE_OK ){
      bRetry = wbCurlTransient(rc);
      if( rc==CURLE_OPERATION_TIMEDOUT ){
        zWhy = sqlite3_mprintf("timed out (limits: connect %lds, total %lds; "
                               "PROFSUM_WANDB_TIMEOUT)", p->nConnect, p->nTotal);
      }else if( rc==CURLE_PARTIAL_FILE ){
        zWhy = sqlite3_mprintf("truncated response (connection closed before "
                               "the end of the body)");
      }else{
        zWhy = sqlite3_mprintf("%s", zCurlErr[0] ? zCurlErr : curl_easy_strerror(rc));
      }
    }else if( code>=200 && code<300 ){
      return SQLITE_OK;
    }else{
      bRetry = code==408 || code==429 || code==500 || code==502
            || code==503 || code==504;
      zWhy = wbStatusText(p, code, s);
    }
    if( zWhy==0 ){ wbOom(p); break; }
    if( bRetry && nTry<=WB_MAX_RETRIES ){
      unsigned int u = 0;
      double rBack = ldexp(1.0, nTry-1);
      if( rBack>60 ) rBack = 60;
      sqlite3_randomness(sizeof(u), &u);
      rBack += rBack*0.25*(u/4294967296.0);
      rWait = rBack;
      if( s->rRetryAfter>=0 ) rWait = s->rRetryAfter;
      if( s->bRateZero && s->rRateReset>rWait ) rWait = s->rRateReset;
      if( rWaited + rWait <= p->rRetryBudget ){
        sqlite3_free(zWhy);
        wbSleep(rWait);
        rWaited += rWait;
        continue;
      }
    }
    if( bRetry ){
      wbErr(p, "%s: %s (gave up after %d attempt%s)", zWhat, zWhy, nTry,
            nTry>1 ? "s" : "");
    }else{
      wbErr(p, "%s: %s", zWhat, zWhy);
    }
    if( rc==CURLE_OK ) p->iHttpFail = code;
    sqlite3_free(zWhy);
    break;
  }
  return p->rc;
}

/* Run GraphQL operation zOp (query text zQuery, variables pVars, which is
** consumed) against {base}/graphql.  On success returns the parsed
** response (caller jFree()s it) and sets *ppData to its "data" object;
** GraphQL "errors" and malformed responses are errors ("graphql zOp: ..."). */
static JNode *wbGraphql(Wb *p, const char *zOp, const char *zQuery,
                        JNode *pVars, JNode **ppData){
  JNode *pBody = jObj(), *pRoot = 0, *pErrs, *pData;
  char *zBody = 0, *zUrl = 0, *zWhat = 0, *zJsonErr = 0;
  WbSink s;
  memset(&s, 0, sizeof(s));
  s.p = p; s.fd = -1; s.nLimit = WB_MEM_LIMIT; s.bApi = 1;
  *ppData = 0;
  if( pBody ){
    jSet(pBody, "query", jStr(zQuery, -1));
    jSet(pBody, "variables", pVars);
    pVars = 0;
    if( !jOom(pBody) ) zBody = jDump(pBody);
  }
  jFree(pVars);
  jFree(pBody);
  zUrl = sqlite3_mprintf("%s/graphql", p->zBase);
  zWhat = sqlite3_mprintf("graphql %s", zOp);
  if( zBody==0 || zUrl==0 || zWhat==0 ){ wbOom(p); goto done; }
  if( wbRequest(p, zWhat, zUrl, zBody, &s) ) goto done;
  pRoot = jParse(s.zMem ? s.zMem : "", (int)s.nMem, &zJsonErr);
  if( pRoot==0 ){
    if( zJsonErr ) wbErr(p, "%s: invalid JSON response (%s)", zWhat, zJsonErr);
    else wbOom(p);
    goto done;
  }
  pErrs = jGet(pRoot, "errors");
  if( pErrs && pErrs->type==JT_ARRAY && pErrs->nChild>0 ){
    char *zMsg = wbBodyMessage(p, s.zMem, (int)s.nMem);
    wbErr(p, "%s failed: %s", zWhat, zMsg ? zMsg : "unknown graphql error");
    sqlite3_free(zMsg);
    goto fail;
  }
  pData = jGet(pRoot, "data");
  if( pData==0 || pData->type!=JT_OBJECT ){
    wbErr(p, "%s: malformed response (no data)", zWhat);
    goto fail;
  }
  *ppData = pData;
  goto done;
fail:
  jFree(pRoot);
  pRoot = 0;
done:
  sqlite3_free(zBody); sqlite3_free(zUrl); sqlite3_free(zWhat);
  sqlite3_free(zJsonErr); sqlite3_free(s.zMem);
  return pRoot;
}

/* GET zUrl, a storage URL the API handed out (sent without the key), into
** memory (at most WB_MEM_LIMIT bytes, not counted against
** PROFSUM_WANDB_MAX_BYTES) and parse it as JSON.
** Returns the tree (caller frees) or 0 with the error recorded. */
static JNode *wbGetJson(Wb *p, const char *zWhat, const char *zUrl){
  WbSink s;
  JNode *pRoot = 0;
  char *zJsonErr = 0;
  memset(&s, 0, sizeof(s));
  s.p = p; s.fd = -1; s.nLimit = WB_MEM_LIMIT;
  if( wbRequest(p, zWhat, zUrl, 0, &s)==SQLITE_OK ){
    pRoot = jParse(s.zMem ? s.zMem : "", (int)s.nMem, &zJsonErr);
    if( pRoot==0 && zJsonErr ) wbErr(p, "%s: invalid JSON (%s)", zWhat, zJsonErr);
    else if( pRoot==0 ) wbOom(p);
  }
  sqlite3_free(zJsonErr);
  sqlite3_free(s.zMem);
  return pRoot;
}

/* ---------------------------------------------------------------------
** Artifacts.
*/

/* Free the strings of a (zero-initialised or filled) WbArt. */
static void wbArtClear(WbArt *a){
  int i;
  sqlite3_free(a->zId); sqlite3_free(a->zEntity); sqlite3_free(a->zProject);
  sqlite3_free(a->zName); sqlite3_free(a->zType); sqlite3_free(a->zState);
  sqlite3_free(a->zManifestUrl); sqlite3_free(a->zCreatedAt);
  for(i=0; i<a->nAlias; i++) sqlite3_free(a->azAlias[i]);
  sqlite3_free(a->azAlias);
  memset(a, 0, sizeof(*a));
}

/* Fill a (cleared first) from an artifact node of a GraphQL response.
** Missing id or sequence names are errors naming zWhat. */
static int wbArtFromNode(Wb *p, JNode *pNode, WbArt *a, const char *zWhat){
  JNode *pAl = jGet(pNode, "aliases"), *pV = jGet(pNode, "versionIndex");
  int i;
  wbArtClear(a);
  a->zId = wbDup(p, wbStr(jGet(pNode, "id")));
  a->zState = wbDup(p, wbStr(jGet(pNode, "state")));
  a->zCreatedAt = wbDup(p, wbStr(jGet(pNode, "createdAt")));
  a->zType = wbDup(p, wbStr(wbPath(pNode, "artifactType", "name", (char*)0)));
  a->zName = wbDup(p, wbStr(wbPath(pNode, "artifactSequence", "name", (char*)0)));
  a->zProject = wbDup(p, wbStr(wbPath(pNode, "artifactSequence", "project",
                                       "name", (char*)0)));
  a->zEntity = wbDup(p, wbStr(wbPath(pNode, "artifactSequence", "project",
                                      "entity", "name", (char*)0)));
  a->zManifestUrl = wbDup(p, wbStr(wbPath(pNode, "currentManifest", "file",
                                           "directUrl", (char*)0)));
  a->iVersion = (pV && pV->type==JT_INT) ? pV->i : -1;
  if( pAl && pAl->type==JT_ARRAY && pAl->nChild>0 ){
    a->azAlias = sqlite3_malloc64(sizeof(char*)*pAl->nChild);
    if( a->azAlias==0 ){ wbOom(p); return p->rc; }
    for(i=0; i<pAl->nChild; i++){
      const char *z = wbStr(wbPath(pAl->a[i], "alias", (char*)0));
      if( z==0 ) z = wbStr(pAl->a[i]);
      if( z ) a->azAlias[a->nAlias++] = wbDup(p, z);
    }
  }
  if( p->rc ) return p->rc;
  if( a->zId==0 || a->zName==0 || a->zEntity==0 || a->zProject==0 || a->iVersion<0 ){
    wbErr(p, "malformed artifact description for %s (missing id, name or version)", zWhat);
  }
  return p->rc;
}

/* Is z usable as one path component (non-empty, not "." / "..", no '/',
** at most 255 bytes)? */
static int wbSafeComponent(const char *z){
  size_t n = z ? strlen(z) : 0;
  if( n==0 || n>255 || strchr(z, '/')!=0 ) return 0;
  if( strcmp(z, ".")==0 || strcmp(z, "..")==0 ) return 0;
  return 1;
}

/* Is manifest path z[0..n) a safe relative path: not absolute, no NUL,
** no empty, "." or ".." components, no backslash, each component at most
** 255 bytes? */
static int wbSafeRelPath(const char *z, int n){
  int i = 0;
  if( z==0 || n<=0 || (int)strlen(z)!=n || z[0]=='/' ) return 0;
  if( strchr(z, '\\')!=0 ) return 0;
  while( i<n ){
    int j = i;
    while( j<n && z[j]!='/' ) j++;
    if( j==i || j-i>255 ) return 0;
    if( j-i==1 && z[i]=='.' ) return 0;
    if( j-i==2 && z[i]=='.' && z[i+1]=='.' ) return 0;
    i = j+1;
    if( j<n && i==n ) return 0;          /* trailing '/' */
  }
  return 1;
}

/* mkdir -p zDir (permissions 0777 & ~umask); the result must be a
** directory.  Errors name zDir. */
static int wbMkdirs(Wb *p, const char *zDir){
  char *z = wbDup(p, zDir);
  size_t i, n;
  struct stat st;
  if( z==0 ) return p->rc;
  n = strlen(z);
  for(i=1; i<=n; i++){
    if( z[i]=='/' || z[i]==0 ){
      char c = z[i];
      z[i] = 0;
      if( mkdir(z, 0777)!=0 && errno!=EEXIST ){
        wbErr(p, "cannot create directory '%s': %s", z, strerror(errno));
        sqlite3_free(z);
        return p->rc;
      }
      z[i] = c;
    }
  }
  if( stat(z, &st)!=0 || !S_ISDIR(st.st_mode) ){
    wbErr(p, "'%s' is not a directory", z);
  }
  sqlite3_free(z);
  return p->rc;
}

/* Base64 MD5 of the open file fd (read from its start) into zB64[25]. */
static int wbMd5Fd(int fd, char *zB64){
  ProfsumMd5 m;
  unsigned char buf[65536], dig[16];
  ssize_t r;
  profsumMd5Init(&m);
  if( lseek(fd, 0, SEEK_SET)!=0 ) return -1;
  while( (r = read(fd, buf, sizeof(buf)))!=0 ){
    if( r<0 ){ if( errno==EINTR ) continue; return -1; }
    profsumMd5Update(&m, buf, (size_t)r);
  }
  profsumMd5Final(&m, dig);
  profsumBase64Encode(dig, 16, zB64);
  return 0;
}

/* One manifest entry to download. */
typedef struct WbEntry {
  const char *zPath;      /* artifact-relative path (in the manifest tree) */
  const char *zDigest;    /* base64 MD5 (or an unverifiable digest) */
  const char *zBirth;     /* birthArtifactID or 0 */
  sqlite3_int64 nSize;    /* declared size, -1 if absent */
} WbEntry;

/* Download entry e into directory zDest (open as rootFd): create the parent
** directories without following symlinks, reuse an existing file with the
** right digest, else download zUrl into an O_EXCL temporary file, check
** size and MD5, and rename it into place.  zUrl is the legacy download
** route on the API host when bApi (sent with the key), else a presigned
** URL the API handed out (sent without it).  Appends a description to
** pFiles.  Returns p->rc. */
static int wbFetchEntry(Wb *p, int rootFd, const char *zDest, const WbEntry *e,
                        const char *zUrl, int bApi, JNode *pFiles){
  char *zRel = wbDup(p, e->zPath), *zBase, *zComp, *zSlash;
  char zTmp[64], zGot[32];
  unsigned char aWant[16];
  long nWant;
  int dfd = rootFd, bCached = 0, fd = -1, bTmp = 0;
  sqlite3_int64 nSize = -1;
  WbSink *s = 0;
  p->iHttpFail = 0;
  if( zRel==0 ) return p->rc;
  nWant = profsumBase64Decode(e->zDigest, strlen(e->zDigest), aWant, sizeof(aWant));
  /* Parent directories, one by one, never through a symlink. */
  zComp = zRel;
  while( (zSlash = strchr(zComp, '/'))!=0 ){
    int nfd;
    *zSlash = 0;
    if( mkdirat(dfd, zComp, 0777)!=0 && errno!=EEXIST ){
      wbErr(p, "cannot create directory for '%s': %s", e->zPath, strerror(errno));
      goto done;
    }
    nfd = openat(dfd, zComp, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
    if( nfd<0 ){
      if( errno==ELOOP || errno==ENOTDIR ){
        wbErr(p, "refusing manifest file '%s': '%s' inside dest_dir is a "
                 "symlink or not a directory", e->zPath, zComp);
      }else{
        wbErr(p, "cannot open directory for '%s': %s", e->zPath, strerror(errno));
      }
      goto done;
    }
    if( dfd!=rootFd ) close(dfd);
    dfd = nfd;
    zComp = zSlash+1;
  }
  zBase = zComp;

  /* Already there with the right digest? */
  if( nWant==16 ){
    int rfd = openat(dfd, zBase, O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC);
    if( rfd>=0 ){
      struct stat st;
      if( fstat(rfd, &st)==0 && S_ISREG(st.st_mode)
       && (e->nSize<0 || st.st_size==e->nSize)
       && wbMd5Fd(rfd, zGot)==0 && strcmp(zGot, e->zDigest)==0 ){
        bCached = 1;
        nSize = st.st_size;
      }
      close(rfd);
    }
  }

  if( !bCached ){
    unsigned char aRand[8];
    char *zWhat;
    int i;
    unsigned char dig[16];
    if( zUrl==0 ){
      wbErr(p, "no download url for manifest file '%s'", e->zPath);
      goto done;
    }
    sqlite3_randomness(sizeof(aRand), aRand);
    memcpy(zTmp, ".profsum-", 9);
    for(i=0; i<8; i++) sprintf(zTmp+9+2*i, "%02x", aRand[i]);
    strcpy(zTmp+25, ".part");
    fd = openat(dfd, zTmp, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644);
    if( fd<0 ){
      wbErr(p, "cannot create a temporary file for '%s': %s", e->zPath, strerror(errno));
      goto done;
    }
    bTmp = 1;
    s = sqlite3_malloc(sizeof(*s));
    if( s==0 ){ wbOom(p); goto done; }
    memset(s, 0, sizeof(*s));
    s->p = p; s->fd = fd; s->nLimit = p->nMaxBytes - p->nUsed; s->bApi = bApi;
    if( e->nSize>=0 ){
      /* A server sending more than the manifest declares is stopped at
      ** the declared size, not at the call's remaining budget. */
      s->zSizedFile = e->zPath;
      s->nDeclared = e->nSize;
      if( e->nSize < s->nLimit ) s->nLimit = e->nSize;
    }
    zWhat = sqlite3_mprintf("download of '%s'", e->zPath);
    if( zWhat==0 ){ wbOom(p); goto done; }
    wbRequest(p, zWhat, zUrl, 0, s);
    sqlite3_free(zWhat);
    if( p->rc ) goto done;
    nSize = s->nBody;
    p->nUsed += s->nBody;
    if( e->nSize>=0 && s->nBody!=e->nSize ){
      wbErr(p, "size mismatch for '%s': manifest says %lld bytes, got %lld",
            e->zPath, e->nSize, s->nBody);
      goto done;
    }
    profsumMd5Final(&s->md5, dig);
    profsumBase64Encode(dig, 16, zGot);
    if( nWant==16 && strcmp(zGot, e->zDigest)!=0 ){
      wbErr(p, "digest mismatch for '%s': manifest says %s, downloaded file has %s",
            e->zPath, e->zDigest, zGot);
      goto done;
    }
    if( close(fd)!=0 ){
      fd = -1;
      wbErr(p, "cannot write '%s': %s", e->zPath, strerror(errno));
      goto done;
    }
    fd = -1;
    if( renameat(dfd, zTmp, dfd, zBase)!=0 ){
      wbErr(p, "cannot rename the download of '%s' into place: %s",
            e->zPath, strerror(errno));
      goto done;
    }
    bTmp = 0;
  }

  {
    JNode *pF = jObj();
    char *zLocal = sqlite3_mprintf("%s/%s", zDest, e->zPath);
    if( pF && zLocal ){
      jSet(pF, "path", jStr(e->zPath, -1));
      jSet(pF, "local_path", jStr(zLocal, -1));
      jSet(pF, "size", jInt(nSize));
      jSet(pF, "digest", jStr(e->zDigest, -1));
      jSet(pF, "verified", jBool(nWant==16));
      jSet(pF, "cached", jBool(bCached));
    }
    sqlite3_free(zLocal);
    jPush(pFiles, pF);
    if( jOom(pFiles) ) wbOom(p);
  }

done:
  if( fd>=0 ) close(fd);
  if( bTmp ) unlinkat(dfd, zTmp, 0);
  if( dfd!=rootFd ) close(dfd);
  sqlite3_free(s);
  sqlite3_free(zRel);
  return p->rc;
}

/* Python's urllib.parse.quote(z, safe='/') (sqlite3_malloc'd). */
static char *wbQuote(const char *z){
  sqlite3_str *s = sqlite3_str_new(0);
  for(; *z; z++){
    unsigned char c = (unsigned char)*z;
    if( (c>='A' && c<='Z') || (c>='a' && c<='z') || (c>='0' && c<='9')
     || c=='_' || c=='.' || c=='-' || c=='~' || c=='/' ){
      sqlite3_str_appendchar(s, 1, (char)c);
    }else{
      sqlite3_str_appendf(s, "%%%02X", c);
    }
  }
  return sqlite3_str_finish(s);
}

/* The legacy download URL of an entry (wandb-http.md §3.4), on the API
** host, or 0 when the digest is not an MD5 (sqlite3_malloc'd). */
static char *wbLegacyUrl(Wb *p, const WbArt *a, const WbEntry *e,
                         const char *zLayout, const char *zRegion){
  unsigned char d[16];
  char zHex[33];
  int i;
  if( profsumBase64Decode(e->zDigest, strlen(e->zDigest), d, sizeof(d))!=16 ) return 0;
  for(i=0; i<16; i++) sprintf(zHex+2*i, "%02x", d[i]);
  if( zLayout && strcmp(zLayout, "V2")==0 && e->zBirth ){
    char *zE = wbQuote(a->zEntity), *zB = wbQuote(e->zBirth), *zR = wbQuote(zRegion);
    char *zUrl = (zE && zB && zR)
      ? sqlite3_mprintf("%s/artifactsV2/%s/%s/%s/%s", p->zBase, zR, zE, zB, zHex) : 0;
    sqlite3_free(zE); sqlite3_free(zB); sqlite3_free(zR);
    return zUrl;
  }else{
    char *zE = wbQuote(a->zEntity);
    char *zUrl = zE ? sqlite3_mprintf("%s/artifacts/%s/%s", p->zBase, zE, zHex) : 0;
    sqlite3_free(zE);
    return zUrl;
  }
}

/* Entry e's download from its presigned URL failed with an HTTP status
** (p holds that error).  Presigned URLs expire (about an hour,
** wandb-http.md §3.3), so, as the Python SDK does, ask for this one file's
** URL again (ArtifactFileURLByName) and download once more from it.
** Returns p->rc: SQLITE_OK when the second download succeeded.  When no
** fresh URL can be had the first error stands, with the reason appended;
** when the fresh URL fails too, its error says the URL was refreshed. */
static int wbFetchEntryFresh(Wb *p, const WbArt *a, int rootFd,
                             const char *zDest, const WbEntry *e, JNode *pFiles){
  char *zFirst = p->zErr;
  JNode *pVars, *pNames, *pRoot, *pData, *pEdges;
  const char *zFresh = 0;
  int i;
  if( p->rc==SQLITE_NOMEM || zFirst==0 ) return p->rc;
  p->zErr = 0;
  p->rc = SQLITE_OK;
  pVars = jObj();
  pNames = jArr();
  if( pVars && pNames ){
    jPush(pNames, jStr(e->zPath, -1));
    jSet(pVars, "id", jStr(a->zId, -1));
    jSet(pVars, "names", pNames);
    pNames = 0;
  }
  jFree(pNames);
  pRoot = wbGraphql(p, "ArtifactFileURLByName", wbQFileUrlByName, pVars, &pData);
  pEdges = pRoot ? wbPath(pData, "artifact", "files", "edges", (char*)0) : 0;
  for(i=0; pEdges && pEdges->type==JT_ARRAY && i<pEdges->nChild; i++){
    const char *zN = wbStr(wbPath(pEdges->a[i], "node", "name", (char*)0));
    if( zN && strcmp(zN, e->zPath)==0 ){
      zFresh = wbStr(wbPath(pEdges->a[i], "node", "directUrl", (char*)0));
      break;
    }
  }
  if( zFresh ){
    wbFetchEntry(p, rootFd, zDest, e, zFresh, 0, pFiles);
    if( p->rc && p->zErr ){
      char *z = sqlite3_mprintf("%s (also with a fresh download URL; the first "
                                "URL failed: %s)", p->zErr, zFirst);
      sqlite3_free(p->zErr);
      p->zErr = z;
      if( z==0 ) p->rc = SQLITE_NOMEM;
    }
    sqlite3_free(zFirst);
  }else if( p->rc==SQLITE_NOMEM ){
    sqlite3_free(zFirst);
  }else{
    char *z = sqlite3_mprintf("%s (asking for a fresh download URL: %s)", zFirst,
                              p->rc ? (p->zErr ? p->zErr : "failed")
                                    : "the server returned none");
    int rcFirst = p->rc ? p->rc : SQLITE_ERROR;
    sqlite3_free(zFirst);
    sqlite3_free(p->zErr);
    p->zErr = z;
    p->rc = z ? rcFirst : SQLITE_NOMEM;
  }
  jFree(pRoot);
  return p->rc;
}

/* Download all stored files of artifact a into zDest (created if needed):
** manifest (by a->zManifestUrl, else FetchArtifactManifest), names
** checked, total size checked, per-file URLs from ArtifactFileURLs (all
** pages; files missing there use the legacy URL), then wbFetchEntry for
** each (a presigned URL that fails with an HTTP status is asked for again
** once: wbFetchEntryFresh).  Returns the result object (id, entity,
** project, name, version, type, ref, dest_dir, files, skipped) or 0 on
** error. */
static JNode *wbDownloadArtifact(Wb *p, WbArt *a, const char *zDest){
  JNode *pMan = 0, *pContents, *pUrls = 0, *pRes = 0, *pFiles = 0, *pSkipped = 0;
  WbEntry *aE = 0;
  int nE = 0, i, rootFd = -1, nPage;
  char *zCursor = 0, *zWhat = 0;
  const char *zLayout, *zRegion;
  sqlite3_int64 nTotal = 0;
  JNode *pV;

  if( a->zManifestUrl==0 ){
    JNode *pVars = jObj(), *pData, *pRoot;
    if( pVars ) jSet(pVars, "id", jStr(a->zId, -1));
    pRoot = wbGraphql(p, "FetchArtifactManifest", wbQFetchManifest, pVars, &pData);
    if( pRoot==0 ) return 0;
    a->zManifestUrl = wbDup(p, wbStr(wbPath(pData, "artifact", "currentManifest",
                                              "file", "directUrl", (char*)0)));
    jFree(pRoot);
    if( p->rc ) return 0;
    if( a->zManifestUrl==0 ){
      wbErr(p, "artifact '%s/%s/%s:v%lld' has no manifest",
            a->zEntity, a->zProject, a->zName, a->iVersion);
      return 0;
    }
  }
  zWhat = sqlite3_mprintf("manifest of '%s/%s/%s:v%lld'",
                          a->zEntity, a->zProject, a->zName, a->iVersion);
  if( zWhat==0 ){ wbOom(p); return 0; }
  pMan = wbGetJson(p, zWhat, a->zManifestUrl);
  if( pMan==0 ) goto done;
  pV = jGet(pMan, "version");
  if( pV==0 || pV->type!=JT_INT || pV->i!=1 ){
    wbErr(p, "%s: unsupported manifest version (expected 1)", zWhat);
    goto done;
  }
  pContents = jGet(pMan, "contents");
  if( pContents==0 || pContents->type!=JT_OBJECT ){
    wbErr(p, "%s: no contents", zWhat);
    goto done;
  }
  zLayout = wbStr(wbPath(pMan, "storagePolicyConfig", "storageLayout", (char*)0));
  zRegion = wbStr(wbPath(pMan, "storagePolicyConfig", "storageRegion", (char*)0));
  if( zRegion==0 ) zRegion = "default";

  /* Check every entry before anything is written. */
  pSkipped = jArr();
  aE = sqlite3_malloc64(sizeof(WbEntry)*(pContents->nChild+1));
  if( aE==0 || pSkipped==0 ){ wbOom(p); goto done; }
  for(i=0; i<pContents->nChild; i++){
    JNode *pEnt = pContents->a[i], *pSz;
    const char *zPath = pEnt->zKey;
    if( !wbSafeRelPath(zPath, (int)strlen(zPath)) ){
      wbErr(p, "refusing manifest file name '%s' (absolute, empty or '.'/'..' "
               "component)", zPath);
      goto done;
    }
    if( pEnt->type!=JT_OBJECT ){
      wbErr(p, "%s: malformed entry '%s'", zWhat, zPath);
      goto done;
    }
    if( jGet(pEnt, "ref") && jGet(pEnt, "ref")->type!=JT_NULL ){
      jPush(pSkipped, jStr(zPath, -1));   /* a reference, not a stored file */
      continue;
    }
    aE[nE].zPath = zPath;
    aE[nE].zDigest = wbStr(jGet(pEnt, "digest"));
    aE[nE].zBirth = wbStr(jGet(pEnt, "birthArtifactID"));
    pSz = jGet(pEnt, "size");
    aE[nE].nSize = (pSz && pSz->type==JT_INT && pSz->i>=0) ? pSz->i : -1;
    if( aE[nE].zDigest==0 ){
      wbErr(p, "%s: entry '%s' has no digest", zWhat, zPath);
      goto done;
    }
    if( aE[nE].nSize>0 ){
      if( aE[nE].nSize > p->nMaxBytes - nTotal ){
        wbErr(p, "artifact '%s/%s/%s:v%lld' exceeds the size limit of %lld bytes "
                 "(PROFSUM_WANDB_MAX_BYTES)", a->zEntity, a->zProject, a->zName,
                 a->iVersion, p->nMaxBytes);
        goto done;
      }
      nTotal += aE[nE].nSize;
    }
    nE++;
  }

  /* Per-file URLs, all pages. */
  pUrls = jObj();
  if( pUrls==0 ){ wbOom(p); goto done; }
  for(nPage=0; nE>0 && nPage<WB_MAX_PAGES; nPage++){
    JNode *pVars = jObj(), *pData, *pRoot, *pF, *pEdges;
    int bMore;
    if( pVars ){
      jSet(pVars, "id", jStr(a->zId, -1));
      jSet(pVars, "cursor", zCursor ? jStr(zCursor, -1) : jNull());
      jSet(pVars, "perPage", jInt(WB_PAGE_FILES));
    }
    pRoot = wbGraphql(p, "ArtifactFileURLs", wbQFileUrls, pVars, &pData);
    if( pRoot==0 ) goto done;
    pF = wbPath(pData, "artifact", "files", (char*)0);
    if( pF==0 || pF->type!=JT_OBJECT ){
      jFree(pRoot);
      wbErr(p, "artifact '%s/%s/%s:v%lld' not found (file list)",
            a->zEntity, a->zProject, a->zName, a->iVersion);
      goto done;
    }
    pEdges = jGet(pF, "edges");
    for(i=0; pEdges && pEdges->type==JT_ARRAY && i<pEdges->nChild; i++){
      const char *zN = wbStr(wbPath(pEdges->a[i], "node", "name", (char*)0));
      const char *zU = wbStr(wbPath(pEdges->a[i], "node", "directUrl", (char*)0));
      if( zN && zU ) jSet(pUrls, zN, jStr(zU, -1));
    }
    bMore = wbNextPage(p, wbPath(pF, "pageInfo", (char*)0), &zCursor);
    jFree(pRoot);
    if( p->rc ) goto done;
    if( !bMore ) break;
  }
  if( jOom(pUrls) ){ wbOom(p); goto done; }

  /* Download. */
  if( wbMkdirs(p, zDest) ) goto done;
  rootFd = open(zDest, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( rootFd<0 ){
    wbErr(p, "cannot open '%s': %s", zDest, strerror(errno));
    goto done;
  }
  pFiles = jArr();
  if( pFiles==0 ){ wbOom(p); goto done; }
  for(i=0; i<nE; i++){
    const char *zU = wbStr(jGet(pUrls, aE[i].zPath));
    char *zLegacy = zU ? 0 : wbLegacyUrl(p, a, &aE[i], zLayout, zRegion);
    wbFetchEntry(p, rootFd, zDest, &aE[i], zU ? zU : zLegacy, zU==0, pFiles);
    sqlite3_free(zLegacy);
    if( p->rc && zU && p->iHttpFail ){
      wbFetchEntryFresh(p, a, rootFd, zDest, &aE[i], pFiles);
    }
    if( p->rc ) goto done;
  }

  pRes = jObj();
  if( pRes ){
    char *zRef = sqlite3_mprintf("%s/%s/%s:v%lld", a->zEntity, a->zProject,
                                 a->zName, a->iVersion);
    char *zVer = sqlite3_mprintf("v%lld", a->iVersion);
    jSet(pRes, "id", jStr(a->zId, -1));
    jSet(pRes, "entity", jStr(a->zEntity, -1));
    jSet(pRes, "project", jStr(a->zProject, -1));
    jSet(pRes, "name", jStr(a->zName, -1));
    jSet(pRes, "version", jStr(zVer, -1));
    jSet(pRes, "type", jStr(a->zType, -1));
    jSet(pRes, "ref", jStr(zRef, -1));
    jSet(pRes, "dest_dir", jStr(zDest, -1));
    jSet(pRes, "files", pFiles); pFiles = 0;
    jSet(pRes, "skipped", pSkipped); pSkipped = 0;
    sqlite3_free(zRef); sqlite3_free(zVer);
    if( jOom(pRes) ){ jFree(pRes); pRes = 0; }
  }
  if( pRes==0 ) wbOom(p);

done:
  if( rootFd>=0 ) close(rootFd);
  jFree(pMan); jFree(pUrls); jFree(pFiles); jFree(pSkipped);
  sqlite3_free(aE); sqlite3_free(zCursor); sqlite3_free(zWhat);
  return p->rc ? (jFree(pRes), (JNode*)0) : pRes;
}

/* The default destination of artifact a:
** ${XDG_CACHE_HOME:-$HOME/.cache}/profsum/wandb/<entity>/<project>/<name>/vN
** (sqlite3_malloc'd; 0 with the error recorded).  Each part must be a
** safe path component. */
static char *wbDefaultDest(Wb *p, const WbArt *a){
  const char *zX = getenv("XDG_CACHE_HOME"), *zH = getenv("HOME");
  char *zRoot, *zRes;
  if( !wbSafeComponent(a->zEntity) || !wbSafeComponent(a->zProject)
   || !wbSafeComponent(a->zName) ){
    wbErr(p, "artifact '%s/%s/%s' cannot be cached: unsafe name for a "
             "directory; pass dest_dir", a->zEntity, a->zProject, a->zName);
    return 0;
  }
  if( zX && zX[0]=='/' ){
    zRoot = sqlite3_mprintf("%s", zX);
  }else if( zH && zH[0] ){
    zRoot = sqlite3_mprintf("%s/.cache", zH);
  }else{
    wbErr(p, "no cache directory: set XDG_CACHE_HOME or HOME, or pass dest_dir");
    return 0;
  }
  if( zRoot==0 ){ wbOom(p); return 0; }
  zRes = sqlite3_mprintf("%s/profsum/wandb/%s/%s/%s/v%lld", zRoot, a->zEntity,
                         a->zProject, a->zName, a->iVersion);
  sqlite3_free(zRoot);
  if( zRes==0 ) wbOom(p);
  return zRes;
}

/* Split artifact reference "entity/project/name[:alias|:vN]" into
** sqlite3_malloc'd *pzE, *pzP and *pzNameAlias (":latest" appended when no
** alias is given).  Errors name the reference. */
static int wbParseRef(Wb *p, const char *zRef, char **pzE, char **pzP,
                      char **pzNameAlias){
  const char *z1 = strchr(zRef, '/'), *z2 = z1 ? strchr(z1+1, '/') : 0;
  const char *zColon;
  *pzE = *pzP = *pzNameAlias = 0;
  if( z1==0 || z2==0 || z1==zRef || z2==z1+1 || z2[1]==0 || strchr(z2+1, '/')
   || memchr(zRef, ':', z2-zRef) ){
    wbErr(p, "invalid artifact reference '%s' (expected "
             "entity/project/name[:alias|:vN])", zRef);
    return p->rc;
  }
  zColon = strchr(z2+1, ':');
  if( zColon && (zColon==z2+1 || zColon[1]==0 || strchr(zColon+1, ':')) ){
    wbErr(p, "invalid artifact reference '%s' (expected "
             "entity/project/name[:alias|:vN])", zRef);
    return p->rc;
  }
  *pzE = sqlite3_mprintf("%.*s", (int)(z1-zRef), zRef);
  *pzP = sqlite3_mprintf("%.*s", (int)(z2-z1-1), z1+1);
  *pzNameAlias = zColon ? sqlite3_mprintf("%s", z2+1)
                        : sqlite3_mprintf("%s:latest", z2+1);
  if( *pzE==0 || *pzP==0 || *pzNameAlias==0 ) wbOom(p);
  return p->rc;
}

/* Resolve artifact reference zRef (ArtifactByName) into a.  Errors:
** "project 'e/p' not found", "artifact 'e/p/n:a' not found in project
** 'e/p'", "... is not committed (state S)". */
static int wbResolveRef(Wb *p, const char *zRef, WbArt *a){
  char *zE = 0, *zP = 0, *zNA = 0;
  JNode *pVars, *pData = 0, *pRoot = 0, *pProj, *pArt;
  if( wbParseRef(p, zRef, &zE, &zP, &zNA) ) goto done;
  pVars = jObj();
  if( pVars ){
    jSet(pVars, "entity", jStr(zE, -1));
    jSet(pVars, "project", jStr(zP, -1));
    jSet(pVars, "name", jStr(zNA, -1));
  }
  pRoot = wbGraphql(p, "ArtifactByName", wbQArtifactByName, pVars, &pData);
  if( pRoot==0 ) goto done;
  pProj = jGet(pData, "project");
  if( pProj==0 || pProj->type!=JT_OBJECT ){
    wbErr(p, "project '%s/%s' not found", zE, zP);
    goto done;
  }
  pArt = jGet(pProj, "artifact");
  if( pArt==0 || pArt->type!=JT_OBJECT ){
    wbErr(p, "artifact '%s/%s/%s' not found in project '%s/%s'", zE, zP, zNA, zE, zP);
    goto done;
  }
  if( wbArtFromNode(p, pArt, a, zRef) ) goto done;
  if( a->zState==0 || strcmp(a->zState, "COMMITTED")!=0 ){
    wbErr(p, "artifact '%s/%s/%s' is not committed (state %s)", zE, zP, zNA,
          a->zState ? a->zState : "unknown");
  }
done:
  jFree(pRoot);
  sqlite3_free(zE); sqlite3_free(zP); sqlite3_free(zNA);
  return p->rc;
}

/* Parse an ISO-8601 time "YYYY-MM-DDTHH:MM:SS[.frac][Z|±HH:MM]" into
** seconds since the epoch (UTC when no zone is given); -1e300 when it
** cannot be parsed (sorts first). */
static double wbParseTime(const char *z){
  int Y, M, D, h = 0, m = 0, n = 0;
  double sec = 0, r;
  long long days;
  int y, era, yoe, doy, doe;
  if( z==0 || sscanf(z, "%4d-%2d-%2d%n", &Y, &M, &D, &n)!=3 ) return -1e300;
  z += n;
  if( *z=='T' || *z=='t' || *z==' ' ){
    char *zEnd;
    if( sscanf(z+1, "%2d:%2d%n", &h, &m, &n)!=2 ) return -1e300;
    z += 1+n;
    if( *z==':' ){ sec = strtod(z+1, &zEnd); z = zEnd; }
  }
  y = Y - (M<=2);
  era = (y>=0 ? y : y-399)/400;
  yoe = y - era*400;
  doy = (153*(M + (M>2 ? -3 : 9)) + 2)/5 + D - 1;
  doe = yoe*365 + yoe/4 - yoe/100 + doy;
  days = (long long)era*146097 + doe - 719468;
  r = (double)days*86400 + h*3600 + m*60 + sec;
  if( *z=='+' || *z=='-' ){
    int zh = 0, zm = 0;
    if( sscanf(z+1, "%2d:%2d", &zh, &zm)>=1 || sscanf(z+1, "%2d%2d", &zh, &zm)>=1 ){
      double off = zh*3600 + zm*60;
      r += (*z=='+') ? -off : off;
    }
  }
  return r;
}

/* Does artifact a carry alias zAlias? */
static int wbHasAlias(const WbArt *a, const char *zAlias){
  int i;
  for(i=0; i<a->nAlias; i++) if( strcmp(a->azAlias[i], zAlias)==0 ) return 1;
  return 0;
}

/* Pick the profile of run e/p/run (wandb-http.md §4.3): among committed
** jax_profile outputs (all pages), the first carrying zAlias, else the
** newest by createdAt (ties: greatest versionIndex).  Errors name the
** run ("run 'e/p/r' not found", "no committed artifact of type
** 'jax_profile' found for run 'e/p/r'"). */
static int wbPickRunProfile(Wb *p, const char *zE, const char *zP,
                            const char *zRun, const char *zAlias, WbArt *aOut){
  WbArt best, cur, aliased;
  int bBest = 0, bAliased = 0, nPage, i;
  double rBest = 0;
  char *zCursor = 0;
  memset(&best, 0, sizeof(best));
  memset(&cur, 0, sizeof(cur));
  memset(&aliased, 0, sizeof(aliased));
  for(nPage=0; nPage<WB_MAX_PAGES && !bAliased; nPage++){
    JNode *pVars = jObj(), *pData, *pRoot, *pProj, *pRun, *pEdges;
    int bMore;
    if( pVars ){
      jSet(pVars, "entity", jStr(zE, -1));
      jSet(pVars, "project", jStr(zP, -1));
      jSet(pVars, "run", jStr(zRun, -1));
      jSet(pVars, "cursor", zCursor ? jStr(zCursor, -1) : jNull());
      jSet(pVars, "perPage", jInt(WB_PAGE_RUNS));
    }
    pRoot = wbGraphql(p, "RunOutputArtifacts", wbQRunOutputs, pVars, &pData);
    if( pRoot==0 ) goto done;
    pProj = jGet(pData, "project");
    pRun = pProj ? jGet(pProj, "run") : 0;
    if( pProj==0 || pProj->type!=JT_OBJECT ){
      wbErr(p, "project '%s/%s' not found", zE, zP);
    }else if( pRun==0 || pRun->type!=JT_OBJECT ){
      wbErr(p, "run '%s/%s/%s' not found", zE, zP, zRun);
    }
    if( p->rc ){ jFree(pRoot); goto done; }
    pEdges = wbPath(pRun, "outputArtifacts", "edges", (char*)0);
    for(i=0; pEdges && pEdges->type==JT_ARRAY && i<pEdges->nChild; i++){
      JNode *pNode = jGet(pEdges->a[i], "node");
      const char *zT = wbStr(wbPath(pNode, "artifactType", "name", (char*)0));
      const char *zS = wbStr(jGet(pNode, "state"));
      double t;
      if( zT==0 || strcmp(zT, "jax_profile")!=0 ) continue;
      if( zS==0 || strcmp(zS, "COMMITTED")!=0 ) continue;
      if( wbArtFromNode(p, pNode, &cur, "a run output") ){ jFree(pRoot); goto done; }
      if( wbHasAlias(&cur, zAlias) ){
        aliased = cur; memset(&cur, 0, sizeof(cur));
        bAliased = 1;
        break;
      }
      t = wbParseTime(cur.zCreatedAt);
      if( !bBest || t>rBest || (t==rBest && cur.iVersion>best.iVersion) ){
        wbArtClear(&best);
        best = cur; memset(&cur, 0, sizeof(cur));
        rBest = t; bBest = 1;
      }
    }
    bMore = wbNextPage(p, wbPath(pRun, "outputArtifacts", "pageInfo", (char*)0), &zCursor);
    jFree(pRoot);
    if( p->rc ) goto done;
    if( !bMore ) break;
  }
  if( bAliased ){
    *aOut = aliased; memset(&aliased, 0, sizeof(aliased));
  }else if( bBest ){
    *aOut = best; memset(&best, 0, sizeof(best));
  }else{
    wbErr(p, "no committed artifact of type 'jax_profile' found for run '%s/%s/%s'",
          zE, zP, zRun);
  }
done:
  wbArtClear(&best); wbArtClear(&cur); wbArtClear(&aliased);
  sqlite3_free(zCursor);
  return p->rc;
}

/* Python truthiness of a JSON value (absent = false). */
static int wbTruthy(const JNode *v){
  if( v==0 ) return 0;
  switch( v->type ){
    case JT_NULL: case JT_FALSE: return 0;
    case JT_INT:  return v->i!=0;
    case JT_REAL: return v->r!=0.0;
    case JT_STRING: return v->n>0;
    case JT_ARRAY: case JT_OBJECT: return v->nChild>0;
    default: return 1;
  }
}

/* §8.4 integer conversion: int → int, float → truncated int, else null. */
static JNode *wbIntOrNull(const JNode *v){
  if( v && v->type==JT_INT ) return jInt(v->i);
  if( v && v->type==JT_REAL && isfinite(v->r) && fabs(v->r)<9.2e18 ){
    return jInt((sqlite3_int64)v->r);
  }
  return jNull();
}

/* First non-empty string among the members zA, zB, zC (0-terminated
** list, up to 3) of object p, as a new node (null when none). */
static JNode *wbFirstStr(const JNode *p, const char *zA, const char *zB,
                         const char *zC){
  const char *az[3];
  int i;
  az[0] = zA; az[1] = zB; az[2] = zC;
  for(i=0; i<3 && az[i]; i++){
    const char *z = (p && p->type==JT_OBJECT) ? wbStr(jGet(p, az[i])) : 0;
    if( z && z[0] ) return jStr(z, -1);
  }
  return jNull();
}

/* A JSON value that may be given as a JSON string (config,
** summaryMetrics): the parsed object, or 0.  Caller frees. */
static JNode *wbJsonField(const JNode *v){
  char *zErr = 0;
  JNode *r = 0;
  if( v && v->type==JT_STRING ){
    r = jParse(v->z, v->n, &zErr);
    sqlite3_free(zErr);
  }else if( v && v->type==JT_OBJECT ){
    r = jClone(v);
  }
  if( r && r->type!=JT_OBJECT ){ jFree(r); r = 0; }
  return r;
}

/* Build run_metadata (summary-v1-tools-spec §8.4) for run e/p/run with the
** given artifact_ref / artifact_name, from the RunInfo query.  Returns the
** object (caller frees) or 0 with the error recorded ("run ... not
** found"). */
static JNode *wbRunMetadata(Wb *p, const char *zE, const char *zP,
                            const char *zRun, const char *zArtRef,
                            const char *zArtName){
  JNode *pVars = jObj(), *pData, *pRoot, *pRun, *pRawCfg = 0, *pSum = 0;
  JNode *pCfg = 0, *pMeta = 0, *pRes, *pNum;
  const char *zId;
  char *zPath = 0;
  int i;
  if( pVars ){
    jSet(pVars, "entity", jStr(zE, -1));
    jSet(pVars, "project", jStr(zP, -1));
    jSet(pVars, "run", jStr(zRun, -1));
  }
  pRoot = wbGraphql(p, "RunInfo", wbQRunInfo, pVars, &pData);
  if( pRoot==0 ) return 0;
  if( wbPath(pData, "project", (char*)0)==0
   || wbPath(pData, "project", (char*)0)->type!=JT_OBJECT ){
    wbErr(p, "project '%s/%s' not found", zE, zP);
    goto done;
  }
  pRun = wbPath(pData, "project", "run", (char*)0);
  if( pRun==0 || pRun->type!=JT_OBJECT ){
    wbErr(p, "run '%s/%s/%s' not found", zE, zP, zRun);
    goto done;
  }
  pRawCfg = wbJsonField(jGet(pRun, "config"));
  pSum = wbJsonField(jGet(pRun, "summaryMetrics"));
  /* run.config: the "value" of each top-level key, "_" keys skipped. */
  pCfg = jObj();
  for(i=0; pCfg && pRawCfg && i<pRawCfg->nChild; i++){
    JNode *c = pRawCfg->a[i];
    JNode *v = (c->type==JT_OBJECT && jGet(c, "value")) ? jGet(c, "value") : c;
    if( c->zKey[0]=='_' ) continue;
    jSetNew(pCfg, c->zKey, jClone(v));      /* keys of a parsed object: unique */
  }
  pMeta = jObj();
  if( pMeta==0 || pCfg==0 || jOom(pCfg) ){ wbOom(p); goto done; }
  zId = wbStr(jGet(pRun, "name"));
  if( zId==0 ) zId = zRun;
  zPath = sqlite3_mprintf("%s/%s/%s", zE, zP, zId);
  jSet(pMeta, "run_path", jStr(zPath, -1));
  jSet(pMeta, "run_id", jStr(zId, -1));
  jSet(pMeta, "artifact_ref", jStr(zArtRef, -1));
  jSet(pMeta, "artifact_name", jStr(zArtName, -1));
  jSet(pMeta, "hardware_type",
       wbFirstStr(pSum, "throughput/device_kind", "device_kind", 0));
  jSet(pMeta, "mesh_or_topology",
       wbFirstStr(wbPath(pCfg, "trainer", "resources", (char*)0),
                  "topology", "tpu_topology", "mesh_shape"));
  jSet(pMeta, "git_sha", wbFirstStr(pCfg, "git_commit", "git_sha", 0));
  {
    sqlite3_str *s = sqlite3_str_new(0);
    char *zText;
    wbPyDump(s, pCfg);
    zText = sqlite3_str_finish(s);
    if( zText && strstr(zText, "\x01oom")==0 ){
      ProfsumSha256 h;
      char zHex[65];
      profsumSha256Init(&h);
      profsumSha256Update(&h, (const unsigned char*)zText, strlen(zText));
      profsumSha256Hex(&h, zHex);
      zHex[16] = 0;
      jSet(pMeta, "config_hash", jStr(zHex, -1));
    }else{
      wbOom(p);
    }
    sqlite3_free(zText);
  }
  pNum = pSum ? jGet(pSum, "num_devices") : 0;
  jSet(pMeta, "num_devices", wbIntOrNull(wbTruthy(pNum) ? pNum : jGet(pCfg, "num_devices")));
  pNum = pSum ? jGet(pSum, "num_hosts") : 0;
  jSet(pMeta, "num_hosts", wbIntOrNull(wbTruthy(pNum) ? pNum : jGet(pCfg, "num_hosts")));
  if( jOom(pMeta) ) wbOom(p);
done:
  pRes = p->rc ? 0 : pMeta;
  if( pRes==0 ) jFree(pMeta);
  jFree(pRawCfg); jFree(pSum); jFree(pCfg); jFree(pRoot);
  sqlite3_free(zPath);
  return pRes;
}

/* Minimal run_metadata: only artifact_ref and artifact_name set. */
static JNode *wbMinimalMetadata(const char *zRef, const char *zName){
  JNode *m = jObj();
  static const char *const azNull[] = {"run_path", "run_id", "hardware_type",
    "mesh_or_topology", "git_sha", "config_hash", "num_devices", "num_hosts"};
  size_t i;
  if( m==0 ) return 0;
  for(i=0; i<sizeof(azNull)/sizeof(azNull[0]); i++) jSet(m, azNull[i], jNull());
  jSet(m, "artifact_ref", jStr(zRef, -1));
  jSet(m, "artifact_name", jStr(zName, -1));
  return m;
}

/* Best effort: run_metadata of the run that logged artifact a
** (ArtifactCreatedBy), else the minimal metadata.  Never fails except for
** out of memory. */
static JNode *wbArtifactMetadata(Wb *p, const WbArt *a, const char *zRef){
  JNode *pVars = jObj(), *pData, *pRoot, *pBy, *pMeta = 0;
  char *zName = sqlite3_mprintf("%s:v%lld", a->zName, a->iVersion);
  if( zName==0 ){ jFree(pVars); wbOom(p); return 0; }
  if( pVars ) jSet(pVars, "id", jStr(a->zId, -1));
  pRoot = wbGraphql(p, "ArtifactCreatedBy", wbQCreatedBy, pVars, &pData);
  if( pRoot ){
    const char *zR, *zE, *zP;
    pBy = wbPath(pData, "artifact", "createdBy", (char*)0);
    zR = wbStr(jGet(pBy, "name"));
    zP = wbStr(wbPath(pBy, "project", "name", (char*)0));
    zE = wbStr(wbPath(pBy, "project", "entity", "name", (char*)0));
    if( zR && zP && zE ) pMeta = wbRunMetadata(p, zE, zP, zR, zRef, zName);
    jFree(pRoot);
  }
  if( p->rc!=SQLITE_NOMEM ) wbClearErr(p);
  if( pMeta==0 && p->rc==SQLITE_OK ){
    pMeta = wbMinimalMetadata(zRef, zName);
    if( pMeta==0 || jOom(pMeta) ){ jFree(pMeta); pMeta = 0; wbOom(p); }
  }
  sqlite3_free(zName);
  return pMeta;
}

/* Fetch artifact reference zRef into zDest (0: the default cache
** directory).  Returns the result object or 0 (error in p). */
static JNode *wbFetchRef(Wb *p, const char *zRef, const char *zDest, WbArt *a){
  char *zDef = 0;
  JNode *pRes = 0;
  if( wbResolveRef(p, zRef, a) ) return 0;
  if( zDest==0 ){
    zDef = wbDefaultDest(p, a);
    if( zDef==0 ) return 0;
    zDest = zDef;
  }
  pRes = wbDownloadArtifact(p, a, zDest);
  sqlite3_free(zDef);
  return pRes;
}

/* Map a W&B UI host to its API host (wandb-http.md §5): wandb.ai →
** api.wandb.ai, app.X → api.X, otherwise the same (sqlite3_malloc'd). */
static char *wbApiHostOf(const char *zHost){
  if( strcasecmp(zHost, "wandb.ai")==0 ) return sqlite3_mprintf("api.wandb.ai");
  if( strncasecmp(zHost, "app.", 4)==0 ) return sqlite3_mprintf("api.%s", zHost+4);
  return sqlite3_mprintf("%s", zHost);
}

/* Parse a run target (summary-v1-tools-spec §8.1) into sqlite3_malloc'd
** entity, project, run id.  zDefE/zDefP complete a bare run id.  A URL's
** host must map to the configured API host. */
static int wbParseRunTarget(Wb *p, const char *zTarget, const char *zDefE,
                            const char *zDefP, char **pzE, char **pzP, char **pzR){
  char *zCopy = 0, *az[4], *zTok, *zSave = 0, *zPathPart;
  int nSeg = 0, bUrl = 0;
  *pzE = *pzP = *pzR = 0;
  if( strncasecmp(zTarget, "http://", 7)==0 || strncasecmp(zTarget, "https://", 8)==0 ){
    char *zNetloc = 0, *zHost = 0, *zOrig, *zApi = 0, *zPort;
    bUrl = 1;
    zOrig = wbOriginOf(zTarget, &zNetloc, &zHost);
    if( zOrig==0 || zNetloc==0 || zHost==0 ){
      wbErr(p, "could not parse run information from url '%s'", zTarget);
    }else{
      zApi = wbApiHostOf(zHost);
      zPort = strrchr(zNetloc, ':');
      if( zApi && zPort && zHost[0]!='[' ){
        char *z = sqlite3_mprintf("%s%s", zApi, zPort);
        sqlite3_free(zApi);
        zApi = z;
      }
      if( zApi==0 ) wbOom(p);
      else if( strcasecmp(zApi, p->zNetloc)!=0 && strcasecmp(zNetloc, p->zNetloc)!=0 ){
        wbErr(p, "run url host '%s' is not the configured w&b host '%s' "
                 "(set WANDB_BASE_URL)", zNetloc, p->zNetloc);
      }
    }
    sqlite3_free(zOrig); sqlite3_free(zNetloc); sqlite3_free(zHost); sqlite3_free(zApi);
    if( p->rc ) return p->rc;
    zPathPart = strstr(zTarget, "://") + 3;
    zPathPart = strchr(zPathPart, '/');
    zCopy = sqlite3_mprintf("%s", zPathPart ? zPathPart : "");
    if( zCopy ) zCopy[strcspn(zCopy, "?#")] = 0;
  }else{
    zCopy = sqlite3_mprintf("%s", zTarget);
  }
  if( zCopy==0 ){ wbOom(p); return p->rc; }
  for(zTok = strtok_r(zCopy, "/", &zSave); zTok && nSeg<4;
      zTok = strtok_r(0, "/", &zSave)){
    az[nSeg++] = zTok;
  }
  if( bUrl && nSeg<3 ){
    wbErr(p, "could not parse run information from url '%s'", zTarget);
  }else if( nSeg==1 ){
    if( zDefE==0 || zDefE[0]==0 || zDefP==0 || zDefP[0]==0 ){
      wbErr(p, "bare run id '%s' needs an entity and a project (options "
               "entity/project or WANDB_ENTITY/WANDB_PROJECT)", zTarget);
    }else{
      *pzE = sqlite3_mprintf("%s", zDefE);
      *pzP = sqlite3_mprintf("%s", zDefP);
      *pzR = sqlite3_mprintf("%s", az[0]);
    }
  }else if( nSeg<3 ){
    wbErr(p, "unrecognized run target '%s' (expected run_id, entity/project/run_id, "
             "entity/project/runs/run_id or a run url)", zTarget);
  }else{
    const char *zR = (strcmp(az[2], "runs")==0 && nSeg>=4) ? az[3] : az[2];
    *pzE = sqlite3_mprintf("%s", az[0]);
    *pzP = sqlite3_mprintf("%s", az[1]);
    *pzR = sqlite3_mprintf("%s", zR);
  }
  if( p->rc==SQLITE_OK && (*pzE==0 || *pzP==0 || *pzR==0) ) wbOom(p);
  sqlite3_free(zCopy);
  return p->rc;
}

/* Fetch the profile of run target zTarget: pick (alias zAlias), fetch into
** zDest (0: default), read run_metadata.  Returns the result object with
** "run_metadata" and "run" added, or 0 (error in p). */
static JNode *wbFetchRun(Wb *p, const char *zTarget, const char *zDest,
                         const char *zEnt, const char *zProj, const char *zAlias,
                         WbArt *a){
  char *zE = 0, *zP = 0, *zR = 0, *zDef = 0, *zRef = 0, *zName = 0;
  JNode *pRes = 0, *pMeta = 0;
  if( wbParseRunTarget(p, zTarget, zEnt, zProj, &zE, &zP, &zR) ) goto done;
  if( wbPickRunProfile(p, zE, zP, zR, zAlias ? zAlias : "latest", a) ) goto done;
  zRef = sqlite3_mprintf("%s/%s/%s:v%lld", a->zEntity, a->zProject, a->zName, a->iVersion);
  zName = sqlite3_mprintf("%s:v%lld", a->zName, a->iVersion);
  if( zRef==0 || zName==0 ){ wbOom(p); goto done; }
  pMeta = wbRunMetadata(p, zE, zP, zR, zRef, zName);
  if( pMeta==0 ) goto done;
  if( zDest==0 ){
    zDef = wbDefaultDest(p, a);
    if( zDef==0 ) goto done;
    zDest = zDef;
  }
  pRes = wbDownloadArtifact(p, a, zDest);
  if( pRes ){
    char *zRun = sqlite3_mprintf("%s/%s/%s", zE, zP, zR);
    jSet(pRes, "run", jStr(zRun, -1));
    jSet(pRes, "run_metadata", pMeta); pMeta = 0;
    sqlite3_free(zRun);
    if( jOom(pRes) ){ jFree(pRes); pRes = 0; wbOom(p); }
  }
done:
  jFree(pMeta);
  sqlite3_free(zE); sqlite3_free(zP); sqlite3_free(zR); sqlite3_free(zDef);
  sqlite3_free(zRef); sqlite3_free(zName);
  return pRes;
}

/* Report p's (scrubbed) error on ctx as "zFunc: message". */
static void wbCtxError(sqlite3_context *ctx, Wb *p, const char *zFunc){
  if( p->rc==SQLITE_NOMEM || p->zErr==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  wbScrub(p);
  profsumCtxErr(ctx, "%s: %s", zFunc, p->zErr);
}

/* Return tree pRes as JSON text on ctx (frees pRes). */
static void wbCtxResult(sqlite3_context *ctx, JNode *pRes){
  char *z = jDump(pRes);
  jFree(pRes);
  if( z==0 ) sqlite3_result_error_nomem(ctx);
  else sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/*
** wandb_fetch(ref [, dest_dir]) → JSON text describing the fetched
** artifact (see docs/wandb.md).  NULL dest_dir: the default cache
** directory.
*/
static void wbFetchFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Wb w;
  WbArt a;
  JNode *pRes = 0;
  const char *zRef = (const char*)sqlite3_value_text(argv[0]);
  const char *zDest = argc>1 ? (const char*)sqlite3_value_text(argv[1]) : 0;
  memset(&a, 0, sizeof(a));
  if( zRef==0 ){
    sqlite3_result_error(ctx, "wandb_fetch: ref must be an artifact reference "
                              "(entity/project/name[:alias|:vN])", -1);
    return;
  }
  if( zDest && zDest[0]==0 ){
    sqlite3_result_error(ctx, "wandb_fetch: dest_dir must not be empty", -1);
    return;
  }
  memset(&w, 0, sizeof(w));
  {
    /* The reference's form first: its error says more than a missing key. */
    char *zE = 0, *zP = 0, *zNA = 0;
    int rc = wbParseRef(&w, zRef, &zE, &zP, &zNA);
    sqlite3_free(zE); sqlite3_free(zP); sqlite3_free(zNA);
    if( rc ){
      wbCtxError(ctx, &w, "wandb_fetch");
      wbEnd(&w);
      return;
    }
  }
  if( wbBegin(&w)==SQLITE_OK ) pRes = wbFetchRef(&w, zRef, zDest, &a);
  if( pRes ) wbCtxResult(ctx, pRes);
  else wbCtxError(ctx, &w, "wandb_fetch");
  wbArtClear(&a);
  wbEnd(&w);
}

/*
** wandb_fetch_run(target [, dest_dir [, options_json]]) → JSON text as
** wandb_fetch plus "run" and "run_metadata".  options_json keys: entity,
** project (for a bare run id; default WANDB_ENTITY / WANDB_PROJECT) and
** alias (default "latest").
*/
static void wbFetchRunFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Wb w;
  WbArt a;
  JNode *pRes = 0, *pOpt = 0;
  const char *zTarget = (const char*)sqlite3_value_text(argv[0]);
  const char *zDest = argc>1 ? (const char*)sqlite3_value_text(argv[1]) : 0;
  const char *zOpt = argc>2 ? (const char*)sqlite3_value_text(argv[2]) : 0;
  const char *zE = getenv("WANDB_ENTITY"), *zP = getenv("WANDB_PROJECT");
  const char *zAlias = "latest";
  int i;
  memset(&a, 0, sizeof(a));
  memset(&w, 0, sizeof(w));
  if( zTarget==0 ){
    sqlite3_result_error(ctx, "wandb_fetch_run: target must be a run id, "
                              "entity/project/run_id or a run url", -1);
    return;
  }
  if( zDest && zDest[0]==0 ){
    sqlite3_result_error(ctx, "wandb_fetch_run: dest_dir must not be empty", -1);
    return;
  }
  if( zOpt ){
    char *zErr = 0;
    pOpt = jParse(zOpt, -1, &zErr);
    if( pOpt==0 || pOpt->type!=JT_OBJECT ){
      profsumCtxErr(ctx, "wandb_fetch_run: options_json must be a JSON object%s%s",
                    zErr ? ": " : "", zErr ? zErr : "");
      sqlite3_free(zErr);
      jFree(pOpt);
      return;
    }
    for(i=0; i<pOpt->nChild; i++){
      JNode *v = pOpt->a[i];
      const char *k = v->zKey;
      if( strcmp(k, "entity")!=0 && strcmp(k, "project")!=0 && strcmp(k, "alias")!=0 ){
        profsumCtxErr(ctx, "wandb_fetch_run: unknown option '%s' (expected "
                      "entity, project, alias)", k);
        jFree(pOpt);
        return;
      }
      if( v->type==JT_NULL ) continue;
      if( wbStr(v)==0 || v->n==0 ){
        profsumCtxErr(ctx, "wandb_fetch_run: option '%s' must be a non-empty string", k);
        jFree(pOpt);
        return;
      }
      if( strcmp(k, "entity")==0 ) zE = v->z;
      else if( strcmp(k, "project")==0 ) zP = v->z;
      else zAlias = v->z;
    }
  }
  if( wbBegin(&w)==SQLITE_OK ) pRes = wbFetchRun(&w, zTarget, zDest, zE, zP, zAlias, &a);
  if( pRes ) wbCtxResult(ctx, pRes);
  else wbCtxError(ctx, &w, "wandb_fetch_run");
  jFree(pOpt);
  wbArtClear(&a);
  wbEnd(&w);
}

/* ---------------------------------------------------------------------
** Publishing (wandb-http.md §6): wandb_publish().
*/
#define WB_PUB_TYPE     "profile_summary"
#define WB_PUB_SUMMARY  "profile_summary.json"
#define WB_PUB_REPORT   "profile_report.md"
#define WB_NAME_MAX     128                /* W&B artifact name length */
#define WB_REPORT_MAX   ((sqlite3_int64)64<<20)  /* report_path size cap */

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

/* One file of the published artifact. */
typedef struct WbPubFile {
  const char *zPath;      /* artifact path (WB_PUB_SUMMARY / WB_PUB_REPORT) */
  char *zData;            /* the bytes (sqlite3_malloc'd) */
  size_t nData;
  char zDigest[25];       /* base64 MD5 */
  int bUploaded;          /* PUT done (0: the server had the bytes) */
} WbPubFile;

/* What wandb_publish will do. */
typedef struct WbPlan {
  const char *zEntity, *zProject;   /* target (borrowed) */
  char *zName;            /* artifact (collection) name */
  JNode *pAliases;        /* JSON array of alias strings */
  char *zRun;             /* run id to attach to; 0: create a run */
  char zDigest[33];       /* manifest digest, hex (§3.2) */
  JNode *pMeta;           /* artifact metadata (tools-spec §7) */
  WbPubFile aFile[2];     /* sorted by path: report, summary */
} WbPlan;

/* Free what a plan owns. */
static void wbPlanClear(WbPlan *pl){
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

/* "profile-summary-<label>" with every byte not allowed in a name
** replaced by '-', cut to 128 bytes (sqlite3_malloc'd, 0 on OOM). */
static char *wbDefaultName(const char *zLabel){
  char *z = sqlite3_mprintf("profile-summary-%s", zLabel ? zLabel : "trace");
  size_t i;
  if( z==0 ) return 0;
  for(i=0; z[i]; i++) if( !wbNameChar(z[i]) ) z[i] = '-';
  if( i>WB_NAME_MAX ) z[WB_NAME_MAX] = 0;
  return z;
}

/* A copy of p, or JSON null when p is missing. */
static JNode *wbCopyOrNull(const JNode *p){
  return p ? jClone(p) : jNull();
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
  jSet(m, "schema_version", wbCopyOrNull(jGet(pDoc, "schema_version")));
  jSet(m, "source_format", wbCopyOrNull(jGet(pDoc, "source_format")));
  jSet(m, "source_path", wbCopyOrNull(jGet(pDoc, "source_path")));
  jSet(m, "run_path", wbCopyOrNull(jGet(pRm, "run_path")));
  jSet(m, "run_id", wbCopyOrNull(jGet(pRm, "run_id")));
  jSet(m, "source_artifact_ref", wbCopyOrNull(jGet(pRm, "artifact_ref")));
  jSet(m, "hardware_type", wbCopyOrNull(jGet(pRm, "hardware_type")));
  jSet(m, "mesh_or_topology", wbCopyOrNull(jGet(pRm, "mesh_or_topology")));
  jSet(m, "git_sha", wbCopyOrNull(jGet(pRm, "git_sha")));
  jSet(m, "config_hash", wbCopyOrNull(jGet(pRm, "config_hash")));
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
  jSet(m, "generated_at_utc", wbCopyOrNull(jGet(pDoc, "generated_at_utc")));
  if( jOom(m) ){ jFree(m); return 0; }
  return m;
}

/* The manifest digest (§3.2) of the plan's files into pl->zDigest. */
static void wbPlanDigest(WbPlan *pl){
  ProfsumMd5 m;
  unsigned char dig[16];
  int i;
  profsumMd5Init(&m);
  profsumMd5Update(&m, "wandb-artifact-manifest-v1\n", 27);
  for(i=0; i<2; i++){
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

/* Read the whole file zPath (at most WB_REPORT_MAX bytes) into *pz and *pn.
** Returns 0, or an sqlite3_malloc'd error message. */
static char *wbReadFile(const char *zPath, char **pz, size_t *pn){
  FILE *f = fopen(zPath, "rb");
  char *z = 0;
  size_t n = 0, nAlloc = 0;
  *pz = 0; *pn = 0;
  if( f==0 ) return sqlite3_mprintf("cannot read report_path '%s': %s", zPath, strerror(errno));
  for(;;){
    size_t k;
    if( n+65536+1 > nAlloc ){
      char *zNew;
      nAlloc = nAlloc ? nAlloc*2 : 131072;
      zNew = sqlite3_realloc64(z, nAlloc);
      if( zNew==0 ){ sqlite3_free(z); fclose(f); return sqlite3_mprintf("out of memory"); }
      z = zNew;
    }
    k = fread(z+n, 1, 65536, f);
    n += k;
    if( (sqlite3_int64)n > WB_REPORT_MAX ){
      sqlite3_free(z); fclose(f);
      return sqlite3_mprintf("report_path '%s' is larger than %lld bytes", zPath, WB_REPORT_MAX);
    }
    if( k<65536 ) break;
  }
  if( ferror(f) ){
    sqlite3_free(z); fclose(f);
    return sqlite3_mprintf("cannot read report_path '%s'", zPath);
  }
  fclose(f);
  z[n] = 0;
  *pz = z; *pn = n;
  return 0;
}

/* The "files" array of a plan (with "uploaded" when bUploads). */
static JNode *wbPlanFiles(const WbPlan *pl, int bUploads){
  JNode *a = jArr();
  int i;
  for(i=0; a && i<2; i++){
    JNode *f = jObj();
    jSet(f, "path", jStr(pl->aFile[i].zPath, -1));
    jSet(f, "size", jInt((sqlite3_int64)pl->aFile[i].nData));
    jSet(f, "digest", jStr(pl->aFile[i].zDigest, -1));
    if( bUploads ) jSet(f, "uploaded", jBool(pl->aFile[i].bUploaded));
    jPush(a, f);
  }
  return a;
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
  for(i=0; c && i<2; i++){
    JNode *e = jObj();
    jSet(e, "digest", jStr(pl->aFile[i].zDigest, -1));
    jSet(e, "birthArtifactID", jStr(azBirth[i], -1));
    jSet(e, "size", jInt((sqlite3_int64)pl->aFile[i].nData));
    jSet(c, pl->aFile[i].zPath, e);
  }
  jSet(m, "contents", c);
  if( m && !jOom(m) ){
    sqlite3_str *s = sqlite3_str_new(0);
    wbPyDump(s, m);
    z = sqlite3_str_finish(s);
    if( z && strstr(z, "\x01oom") ){ sqlite3_free(z); z = 0; }
  }
  jFree(m);
  return z;
}

/* Mark run zRun finished through file_stream (§6.2 option 2). */
static int wbFinishRun(Wb *p, const WbPlan *pl, const char *zRun, int iExit){
  WbSink s;
  char *zE = wbQuote(pl->zEntity), *zP = wbQuote(pl->zProject), *zR = wbQuote(zRun);
  char *zUrl = 0, *zBody = 0;
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

/* Publish plan pl (§6.1 P1–P7, run per §6.3).  Returns the result object
** or 0 (error in p). */
static JNode *wbPublish(Wb *p, WbPlan *pl){
  JNode *pRes = 0, *v, *pData, *pR1 = 0, *pR2 = 0, *pR3 = 0, *pR4 = 0, *pR5 = 0;
  JNode *pArt, *pEdges, *pMan;
  char zRunId[9], zClient[129], zSeq[129];
  const char *zRun = pl->zRun, *zArtId, *zState, *zBase, *zManId;
  char *azBirth[2] = {0, 0}, *zManifest = 0, zManDigest[25];
  sqlite3_int64 iVersion = -1;
  int bCreated = 0, bDedup = 0, i;

  /* The run: the profiled one, else a dedicated run (§6.3). */
  if( zRun==0 ){
    wbRandomId(zRunId, 8);
    v = jObj();
    jSet(v, "name", jStr(zRunId, -1));
    jSet(v, "project", jStr(pl->zProject, -1));
    jSet(v, "entity", jStr(pl->zEntity, -1));
    jSet(v, "jobType", jStr(WB_PUB_TYPE, -1));
    {
      char *zDisp = sqlite3_mprintf("publish-%s", pl->zName);
      jSet(v, "displayName", jStr(zDisp, -1));
      if( zDisp==0 ) wbOom(p);
      sqlite3_free(zDisp);
    }
    if( v==0 || jOom(v) ){ jFree(v); wbOom(p); goto done; }
    pR1 = wbGraphql(p, "UpsertBucket", wbMUpsertBucket, v, &pData);
    if( pR1==0 ) goto done;
    zRun = wbStr(wbPath(pData, "upsertBucket", "bucket", "name", (char*)0));
    if( zRun==0 ) zRun = zRunId;
    bCreated = 1;
  }

  /* P1 createArtifact. */
  wbRandomId(zClient, 128);
  wbRandomId(zSeq, 128);
  v = jObj();
  if( v ){
    JNode *pAl = jArr();
    char *zMeta;
    sqlite3_str *s = sqlite3_str_new(0);
    for(i=0; pAl && i<pl->pAliases->nChild; i++){
      JNode *o = jObj();
      jSet(o, "artifactCollectionName", jStr(pl->zName, -1));
      jSet(o, "alias", jStr(pl->pAliases->a[i]->z, -1));
      jPush(pAl, o);
    }
    wbPyDump(s, pl->pMeta);
    zMeta = sqlite3_str_finish(s);
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
    if( zMeta==0 || strstr(zMeta, "\x01oom") ) wbOom(p);
    sqlite3_free(zMeta);
  }
  if( v==0 || jOom(v) || p->rc ){ jFree(v); wbOom(p); goto fail; }
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
  if( !bDedup ){
    JNode *pFiles, *pSpecs;
    /* P2 placeholder manifest. */
    pR3 = wbCreateManifest(p, pl, zRun, zArtId, zBase, "", 0, &pMan);
    if( pR3==0 ) goto fail;
    zManId = wbStr(jGet(pMan, "id"));
    /* P3 createArtifactFiles. */
    v = jObj();
    pSpecs = jArr();
    for(i=0; pSpecs && i<2; i++){
      JNode *o = jObj();
      jSet(o, "artifactID", jStr(zArtId, -1));
      jSet(o, "name", jStr(pl->aFile[i].zPath, -1));
      jSet(o, "md5", jStr(pl->aFile[i].zDigest, -1));
      jSet(o, "artifactManifestID", jStr(zManId, -1));
      jPush(pSpecs, o);
    }
    jSet(v, "artifactFiles", pSpecs);
    jSet(v, "storageLayout", jStr("V2", -1));
    if( v==0 || jOom(v) ){ jFree(v); wbOom(p); goto fail; }
    pR4 = wbGraphql(p, "CreateArtifactFiles", wbMCreateFiles, v, &pData);
    if( pR4==0 ) goto fail;
    pFiles = wbPath(pData, "createArtifactFiles", "files", (char*)0);
    pEdges = jGet(pFiles, "edges");
    if( pEdges==0 || pEdges->type!=JT_ARRAY || pEdges->nChild!=2 ){
      wbErr(p, "graphql CreateArtifactFiles: malformed response (expected 2 file edges)");
      goto fail;
    }
    /* P4 uploads (edges come back in request order). */
    for(i=0; i<2; i++){
      JNode *pNode = jGet(jAt(pEdges, i), "node");
      const char *zUrl = wbStr(jGet(pNode, "uploadUrl"));
      const char *zBirth = wbStr(wbPath(pNode, "artifact", "id", (char*)0));
      azBirth[i] = wbDup(p, zBirth ? zBirth : zArtId);
      if( p->rc ) goto fail;
      if( zUrl==0 ) continue;         /* the server has these bytes */
      if( wbPut(p, pl->aFile[i].zPath, zUrl, jGet(pNode, "uploadHeaders"),
                pl->aFile[i].zData, pl->aFile[i].nData) ) goto fail;
      pl->aFile[i].bUploaded = 1;
    }
    /* P5 final manifest; P6 register it and upload it. */
    zManifest = wbPubManifest(pl, azBirth);
    if( zManifest==0 ){ wbOom(p); goto fail; }
    wbMd5B64(zManifest, strlen(zManifest), zManDigest);
    pR5 = wbCreateManifest(p, pl, zRun, zArtId, zBase, zManDigest, 1, &pMan);
    if( pR5==0 ) goto fail;
    {
      const char *zUrl = wbStr(wbPath(pMan, "file", "uploadUrl", (char*)0));
      if( zUrl==0 ){
        wbErr(p, "graphql CreateArtifactManifest: no upload url for the manifest");
        goto fail;
      }
      if( wbPut(p, "wandb_manifest.json", zUrl,
                wbPath(pMan, "file", "uploadHeaders", (char*)0),
                zManifest, strlen(zManifest)) ) goto fail;
    }
    /* P7 commit. */
    jFree(pR3); pR3 = 0;
    v = jObj();
    jSet(v, "artifactID", jStr(zArtId, -1));
    if( v==0 || jOom(v) ){ jFree(v); wbOom(p); goto fail; }
    pR3 = wbGraphql(p, "CommitArtifact", wbMCommit, v, &pData);
    if( pR3==0 ) goto fail;
    pArt = wbPath(pData, "commitArtifact", "artifact", (char*)0);
    if( jGet(pArt, "versionIndex") && jGet(pArt, "versionIndex")->type==JT_INT ){
      iVersion = jGet(pArt, "versionIndex")->i;
    }
  }
  if( bCreated && wbFinishRun(p, pl, zRun, 0) ) goto done;

  /* The result. */
  pRes = jObj();
  if( pRes ){
    char *zVer = iVersion>=0 ? sqlite3_mprintf("v%lld", iVersion) : 0;
    char *zRef = iVersion>=0 ? sqlite3_mprintf("%s/%s/%s:v%lld", pl->zEntity,
                                    pl->zProject, pl->zName, iVersion) : 0;
    char *zRunPath = sqlite3_mprintf("%s/%s/%s", pl->zEntity, pl->zProject, zRun);
    jSet(pRes, "status", jStr(bDedup ? "deduplicated" : "published", -1));
    jSet(pRes, "id", jStr(zArtId, -1));
    jSet(pRes, "name", jStr(pl->zName, -1));
    jSet(pRes, "version", jStr(zVer, -1));
    jSet(pRes, "ref", jStr(zRef, -1));
    jSet(pRes, "type", jStr(WB_PUB_TYPE, -1));
    jSet(pRes, "entity", jStr(pl->zEntity, -1));
    jSet(pRes, "project", jStr(pl->zProject, -1));
    jSet(pRes, "aliases", jClone(pl->pAliases));
    jSet(pRes, "run", jStr(zRunPath, -1));
    jSet(pRes, "new_run", jBool(bCreated));
    jSet(pRes, "digest", jStr(pl->zDigest, -1));
    jSet(pRes, "files", wbPlanFiles(pl, 1));
    if( zRunPath==0 || (iVersion>=0 && (zVer==0 || zRef==0)) ) wbOom(p);
    sqlite3_free(zVer); sqlite3_free(zRef); sqlite3_free(zRunPath);
  }
  if( pRes==0 || jOom(pRes) ) wbOom(p);
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
  for(i=0; i<2; i++) sqlite3_free(azBirth[i]);
  sqlite3_free(zManifest);
  jFree(pR1); jFree(pR2); jFree(pR3); jFree(pR4); jFree(pR5);
  return pRes;
}

/* Build the plan of wandb_publish for trace argument pTrace and parsed
** options pOpt (may be 0).  Errors are reported on ctx (returns nonzero). */
static int wbPlanBuild(sqlite3_context *ctx, sqlite3_value *pTrace, JNode *pOpt,
                       WbPlan *pl, int *pbDry){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 iTrace;
  char *zErr = 0, *zLabel = 0;
  const char *zE = getenv("WANDB_ENTITY"), *zP = getenv("WANDB_PROJECT");
  const char *zName = 0, *zReportPath = 0;
  JNode *pAliases = 0, *pDoc = 0, *pRm;
  int rc, i, bOom = 0;
  size_t nLabel = 0;

  memset(pl, 0, sizeof(*pl));
  *pbDry = 0;
  /* Options. */
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
      if( v->type!=JT_ARRAY || v->nChild==0 ){
        profsumCtxErr(ctx, "wandb_publish: option 'aliases' must be a non-empty array of strings");
        return 1;
      }
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
      pAliases = v;
    }else if( strcmp(k, "entity")==0 || strcmp(k, "project")==0
           || strcmp(k, "artifact_name")==0 || strcmp(k, "report_path")==0
           || strcmp(k, "summary_path")==0 ){
      if( wbStr(v)==0 || v->n==0 ){
        profsumCtxErr(ctx, "wandb_publish: option '%s' must be a non-empty string", k);
        return 1;
      }
      if( k[0]=='e' ) zE = v->z;
      else if( k[0]=='p' ) zP = v->z;
      else if( k[0]=='a' ) zName = v->z;
      else if( k[0]=='r' ) zReportPath = v->z;
      /* summary_path: informational (the CLI's --summary) */
    }else{
      profsumCtxErr(ctx, "wandb_publish: unknown option '%s' (expected entity, "
                    "project, artifact_name, aliases, dry_run, report_path, "
                    "summary_path)", k);
      return 1;
    }
  }
  if( zName && !wbValidName(zName) ){
    profsumCtxErr(ctx, "wandb_publish: invalid artifact_name '%s' (1-%d characters "
                  "among letters, digits, '-', '_' and '.')", zName, WB_NAME_MAX);
    return 1;
  }

  /* The trace and its texts (exactly what profsum_summary_json and
  ** profsum_report_md return). */
  rc = profsumResolveTrace(db, "main", pTrace, &iTrace, &zErr);
  if( rc ){
    if( rc==SQLITE_NOMEM && zErr==0 ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "wandb_publish: %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    return 1;
  }
  rc = sqlite3_prepare_v2(db, "SELECT profsum_summary_json(?1), profsum_report_md(?1), "
                          "label FROM main.profsum_trace WHERE trace_id=?1", -1, &pStmt, 0);
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
  pl->aFile[1].zPath = WB_PUB_SUMMARY;
  pl->aFile[1].zData = wbValueDup(pStmt, 0, &pl->aFile[1].nData, &bOom);
  pl->aFile[0].zPath = WB_PUB_REPORT;
  if( zReportPath==0 ){
    pl->aFile[0].zData = wbValueDup(pStmt, 1, &pl->aFile[0].nData, &bOom);
  }
  zLabel = wbValueDup(pStmt, 2, &nLabel, &bOom);
  sqlite3_finalize(pStmt);
  if( bOom || pl->aFile[1].zData==0 || (zReportPath==0 && pl->aFile[0].zData==0) ){
    sqlite3_free(zLabel);
    sqlite3_result_error_nomem(ctx);
    return 1;
  }
  /* The summary file ends with a newline (as the reference tool writes it). */
  pl->aFile[1].zData[pl->aFile[1].nData++] = '\n';
  pl->aFile[1].zData[pl->aFile[1].nData] = 0;
  if( zReportPath ){
    zErr = wbReadFile(zReportPath, &pl->aFile[0].zData, &pl->aFile[0].nData);
    if( zErr ){
      profsumCtxErr(ctx, "wandb_publish: %s", zErr);
      sqlite3_free(zErr); sqlite3_free(zLabel);
      return 1;
    }
  }
  for(i=0; i<2; i++) wbMd5B64(pl->aFile[i].zData, pl->aFile[i].nData, pl->aFile[i].zDigest);
  wbPlanDigest(pl);

  /* Target. */
  if( (zE==0 || zE[0]==0) || (zP==0 || zP[0]==0) ){
    const char *zMissing = (zE==0 || zE[0]==0)
        ? ((zP==0 || zP[0]==0) ? "an entity and a project" : "an entity")
        : "a project";
    profsumCtxErr(ctx, "wandb_publish: no target: needs %s (options entity/project "
                  "or WANDB_ENTITY/WANDB_PROJECT)", zMissing);
    sqlite3_free(zLabel);
    return 1;
  }
  pl->zEntity = zE;
  pl->zProject = zP;
  pl->zName = zName ? sqlite3_mprintf("%s", zName) : wbDefaultName(zLabel);
  sqlite3_free(zLabel);
  if( pAliases ){
    pl->pAliases = jClone(pAliases);
  }else{
    pl->pAliases = jArr();
    if( pl->pAliases ) jPush(pl->pAliases, jStr("latest", -1));
  }

  /* The run (§6.3): the profiled run when run_metadata names one in the
  ** target project, else a dedicated run is created. */
  pDoc = jParse(pl->aFile[1].zData, (int)pl->aFile[1].nData, &zErr);
  if( pDoc==0 ){
    if( zErr ) profsumCtxErr(ctx, "wandb_publish: the summary is not JSON: %s", zErr);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(zErr);
    return 1;
  }
  pRm = jGet(pDoc, "run_metadata");
  {
    const char *zRunId = wbStr(jGet(pRm, "run_id"));
    const char *zRunPath = wbStr(jGet(pRm, "run_path"));
    int bSame = 1;
    if( zRunPath ){
      size_t nE = strlen(zE), nP = strlen(zP);
      bSame = strncmp(zRunPath, zE, nE)==0 && zRunPath[nE]=='/'
           && strncmp(zRunPath+nE+1, zP, nP)==0 && zRunPath[nE+1+nP]=='/';
    }
    if( zRunId && zRunId[0] && bSame ){
      pl->zRun = sqlite3_mprintf("%s", zRunId);
      if( pl->zRun==0 ) bOom = 1;
    }
  }
  pl->pMeta = wbPubMetadata(pDoc);
  jFree(pDoc);
  if( bOom || pl->zName==0 || pl->pAliases==0 || jOom(pl->pAliases) || pl->pMeta==0 ){
    sqlite3_result_error_nomem(ctx);
    return 1;
  }
  return 0;
}

/* The dry-run answer: what would be published, no request made. */
static JNode *wbPlanJson(const WbPlan *pl, JNode *pOpt){
  JNode *r = jObj();
  char *zRun = pl->zRun ? sqlite3_mprintf("%s/%s/%s", pl->zEntity, pl->zProject, pl->zRun) : 0;
  if( r==0 ){ sqlite3_free(zRun); return 0; }
  jSet(r, "status", jStr("dry_run", -1));
  jSet(r, "name", jStr(pl->zName, -1));
  jSet(r, "type", jStr(WB_PUB_TYPE, -1));
  jSet(r, "entity", jStr(pl->zEntity, -1));
  jSet(r, "project", jStr(pl->zProject, -1));
  jSet(r, "aliases", jClone(pl->pAliases));
  jSet(r, "run", jStr(zRun, -1));
  jSet(r, "new_run", jBool(pl->zRun==0));
  jSet(r, "digest", jStr(pl->zDigest, -1));
  jSet(r, "files", wbPlanFiles(pl, 0));
  jSet(r, "metadata", jClone(pl->pMeta));
  jSet(r, "summary_path", wbCopyOrNull(jGet(pOpt, "summary_path")));
  jSet(r, "report_path", wbCopyOrNull(jGet(pOpt, "report_path")));
  if( (pl->zRun && zRun==0) || jOom(r) ){ jFree(r); r = 0; }
  sqlite3_free(zRun);
  return r;
}

/*
** wandb_publish(trace [, options_json]) → JSON text (see docs/wandb.md):
** upload the trace's summary JSON and markdown report as one artifact of
** type profile_summary, attached as wandb-http.md §6.3 decides.
*/
static void wbPublishFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Wb w;
  WbPlan pl;
  JNode *pOpt = 0, *pRes = 0;
  const char *zOpt = argc>1 ? (const char*)sqlite3_value_text(argv[1]) : 0;
  int bDry = 0;
  memset(&w, 0, sizeof(w));
  memset(&pl, 0, sizeof(pl));
  if( zOpt ){
    char *zErr = 0;
    pOpt = jParse(zOpt, -1, &zErr);
    if( pOpt==0 || pOpt->type!=JT_OBJECT ){
      if( pOpt==0 && zErr==0 ) sqlite3_result_error_nomem(ctx);
      else profsumCtxErr(ctx, "wandb_publish: options_json must be a JSON object%s%s",
                         zErr ? ": " : "", zErr ? zErr : "");
      sqlite3_free(zErr);
      jFree(pOpt);
      return;
    }
  }
  if( wbPlanBuild(ctx, argv[0], pOpt, &pl, &bDry)==0 ){
    if( bDry ){
      pRes = wbPlanJson(&pl, pOpt);
      if( pRes ) wbCtxResult(ctx, pRes);
      else sqlite3_result_error_nomem(ctx);
    }else{
      if( wbBegin(&w)==SQLITE_OK ) pRes = wbPublish(&w, &pl);
      if( pRes ) wbCtxResult(ctx, pRes);
      else wbCtxError(ctx, &w, "wandb_publish");
      wbEnd(&w);
    }
  }
  wbPlanClear(&pl);
  jFree(pOpt);
}

/* See wandb.h. */
int profsumWandbFetchForImport(sqlite3 *db, const char *zSource, const char *zAlias,
                               char **pzLocalDir, char **pzRunMetadataJson,
                               char **pzErr){
  Wb w;
  WbArt a;
  JNode *pRes = 0, *pMeta = 0;
  int rc;
  (void)db;
  *pzLocalDir = 0;
  *pzRunMetadataJson = 0;
  *pzErr = 0;
  memset(&a, 0, sizeof(a));
  if( wbBegin(&w)==SQLITE_OK ){
    if( strncmp(zSource, "wandb:", 6)==0 ){
      pRes = wbFetchRef(&w, zSource+6, 0, &a);
      if( pRes ) pMeta = wbArtifactMetadata(&w, &a, zSource+6);
    }else{
      const char *zT = strncmp(zSource, "wandb-run:", 10)==0 ? zSource+10 : zSource;
      pRes = wbFetchRun(&w, zT, 0, getenv("WANDB_ENTITY"), getenv("WANDB_PROJECT"),
                        zAlias ? zAlias : "latest", &a);
      if( pRes ){
        pMeta = jClone(jGet(pRes, "run_metadata"));
        if( pMeta==0 ) wbOom(&w);
      }
    }
  }
  if( w.rc==SQLITE_OK ){
    *pzLocalDir = wbDup(&w, wbStr(jGet(pRes, "dest_dir")));
    *pzRunMetadataJson = pMeta ? jDump(pMeta) : 0;
    if( *pzLocalDir==0 || *pzRunMetadataJson==0 ) wbOom(&w);
  }
  rc = w.rc;
  if( rc!=SQLITE_OK ){
    sqlite3_free(*pzLocalDir); *pzLocalDir = 0;
    sqlite3_free(*pzRunMetadataJson); *pzRunMetadataJson = 0;
    if( rc!=SQLITE_NOMEM && w.zErr ){
      wbScrub(&w);
      *pzErr = w.zErr;
      w.zErr = 0;
    }
  }
  jFree(pRes);
  jFree(pMeta);
  wbArtClear(&a);
  wbEnd(&w);
  return rc;
}

#endif /* !PROFSUM_OMIT_NETWORK */

/* See wandb.h: register the three functions, SQLITE_DIRECTONLY (never
** from views/triggers in a database), not DETERMINISTIC. */
int profsumRegisterWandb(sqlite3 *db, char **pzErr){
  const int f = SQLITE_UTF8|SQLITE_DIRECTONLY;
  int rc;
  (void)pzErr;
  rc = sqlite3_create_function(db, "wandb_fetch", 1, f, 0, wbFetchFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch", 2, f, 0, wbFetchFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch_run", 1, f, 0, wbFetchRunFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch_run", 2, f, 0, wbFetchRunFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_fetch_run", 3, f, 0, wbFetchRunFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_publish", 1, f, 0, wbPublishFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "wandb_publish", 2, f, 0, wbPublishFunc, 0, 0);
  return rc;
}
