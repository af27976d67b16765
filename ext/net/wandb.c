/*
** wandb.c — Weights & Biases input side: wandb_fetch(), wandb_fetch_run(),
** the fetch step of profsum_import for W&B sources, and wandb_publish()
** (publishing a profile_summary artifact, §6), over the transport of
** http.c (where the rules on the API key, redirects, retries and bounds
** are kept).
**
** Protocol: wandb-http.md, the W&B HTTP protocol notes (GraphQL queries
** §2–§4, the manifest §3).  User documentation: docs/wandb.md.
**
** Security rules kept here:
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
#include "wandb_int.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define WB_PAGE_FILES    1000              /* ArtifactFileURLs perPage */
#define WB_PAGE_RUNS     100               /* RunOutputArtifacts perPage */
#define WB_MAX_PAGES     100000            /* guard against cursor loops */

/* GraphQL texts (wandb-http.md §8; RunOutputArtifacts also asks for the
** aliases as §4.3 recommends). */
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
