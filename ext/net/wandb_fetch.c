/*
** wandb_fetch.c — fetching from W&B: an artifact version by reference
** (ArtifactByName), the jax_profile output of a run (RunOutputArtifacts:
** the version with an alias, else the newest), and the download of an
** artifact's stored files into a directory (the manifest, per-file URLs,
** a fresh URL when a presigned one has expired, size and MD5 checks, a
** default cache directory).  Also the fetch step of profsum_import for W&B
** sources (profsumWandbFetchForImport, wandb.h).
**
** Protocol: wandb-http.md, the W&B HTTP protocol notes (GraphQL queries
** §2–§4, the manifest §3).  User documentation: docs/wandb.md.  Requests
** go through http.c, which keeps the rules on the API key.
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
** Built with PROFSUM_OMIT_NETWORK the import fetch exists and fails with a
** clear message; nothing then references libcurl.
*/
#include "wandb.h"
#include "cnum.h"
#include "wandb_int.h"
#include "strpool.h"

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
** Build without network support: the import fetch fails clearly.
*/

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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define WB_PAGE_FILES    1000              /* ArtifactFileURLs perPage */
#define WB_PAGE_RUNS     100               /* RunOutputArtifacts perPage */
/* Most pages of one listing.  A manifest is at most WB_MEM_LIMIT (256 MiB)
** and an entry takes at least about 40 bytes, so no artifact lists more
** than about 7 million files: 7,000 pages of WB_PAGE_FILES; the same cap
** allows a run 1 million output artifacts (WB_PAGE_RUNS each).  Loops end
** sooner: a repeated cursor is an error, a page that adds nothing ends the
** listing (wbNextPage). */
#define WB_MAX_PAGES     10000
#define WB_SHOW_NAME     200    /* most bytes of a manifest file name or
                                ** digest an error shows (wbShow) */

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

/* The paging state of one GraphQL listing. */
typedef struct WbPager {
  ProfsumStrPool seen;    /* every endCursor received */
  int nPage;              /* pages received */
  const char *zCursor;    /* the cursor to send next (in seen), 0 at first */
} WbPager;

/* Longest part of a cursor an error shows. */
#define WB_SHOW_CURSOR 60

/* GraphQL paging: page g->nPage+1 of listing zWhat has arrived, with pInfo
** its connection's pageInfo object; bNew says whether it added anything.
** Returns 1 when there is a next page to ask for (g->zCursor is then its
** cursor), 0 at the end or on error (p->rc).  The end: hasNextPage not
** true, no endCursor, or a page that added nothing (a server repeating
** itself).  Errors: an endCursor seen before (a cursor loop, which
** comparing with the previous cursor alone would miss when cursors
** alternate), and more than WB_MAX_PAGES pages. */
static int wbNextPage(Wb *p, WbPager *g, JNode *pInfo, int bNew, const char *zWhat){
  JNode *pMore = wbPath(pInfo, "hasNextPage", (char*)0);
  const char *zEnd = wbStr(wbPath(pInfo, "endCursor", (char*)0));
  int32_t nOld = g->seen.n, id = 0;
  g->nPage++;
  if( pMore==0 || pMore->type!=JT_TRUE || zEnd==0 || !bNew ) return 0;
  if( profsumStrPoolIntern(&g->seen, zEnd, (int64_t)strlen(zEnd), &id) ){
    wbOom(p);
    return 0;
  }
  if( id<nOld ){
    char *zShow = wbShow(zEnd, strlen(zEnd), WB_SHOW_CURSOR);
    if( zShow==0 ){ wbOom(p); return 0; }
    wbErr(p, "%s: page %d repeats the paging cursor '%s' of an earlier page "
             "(a cursor loop); stopped", zWhat, g->nPage, zShow);
    sqlite3_free(zShow);
    return 0;
  }
  if( g->nPage>=WB_MAX_PAGES ){
    wbErr(p, "%s: more than %d pages; stopped", zWhat, WB_MAX_PAGES);
    return 0;
  }
  g->zCursor = g->seen.az[id];
  return 1;
}

/* ---------------------------------------------------------------------
** Artifacts.
*/

/* Free the strings of a (zero-initialised or filled) WbArt. */
void wbArtClear(WbArt *a){
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

/* Is manifest path z[0..n) a safe relative path: not absolute, no NUL
** or other control character, no empty, "." or ".." components, no
** backslash, each component at most 255 bytes?  (A NUL written \u0000 in
** the manifest's JSON is refused before: the parsed keys carry no length,
** see wbGetJson.) */
static int wbSafeRelPath(const char *z, int n){
  int i = 0;
  if( z==0 || n<=0 || (int)strlen(z)!=n || z[0]=='/' ) return 0;
  if( strchr(z, '\\')!=0 ) return 0;
  for(i=0; i<n; i++) if( (unsigned char)z[i]<0x20 || z[i]==0x7f ) return 0;
  i = 0;
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

/* Most directory levels below the cache root walked or pruned. */
#define WB_MAX_DEPTH 64

/* Create and open directory zDir (permissions 0777 & ~umask) and return
** its descriptor, or -1 with the error recorded.  Its first nTrust bytes
** (a path the user chose: dest_dir, or the cache root) are made with a
** plain mkdir -p, following symlinks; each component after them (the
** default cache path below its root) is created and opened with
** mkdirat/openat and O_NOFOLLOW, so that a symlink planted there is
** refused, not followed.  Errors name zDir and the component. */
static int wbMkdirs(Wb *p, const char *zDir, size_t nTrust){
  char *z = wbDup(p, zDir);
  size_t i, n;
  int fd = -1, nLevel = 0;
  if( z==0 ) return -1;
  n = strlen(z);
  if( nTrust>n ) nTrust = n;
  for(i=1; i<=nTrust; i++){
    if( z[i]=='/' || i==nTrust ){
      char c = z[i];
      z[i] = 0;
      if( mkdir(z, 0777)!=0 && errno!=EEXIST ){
        wbErr(p, "cannot create directory '%s': %s", z, strerror(errno));
        goto done;
      }
      z[i] = c;
    }
  }
  z[nTrust] = 0;
  fd = open(nTrust ? z : "/", O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( fd<0 ){
    wbErr(p, "cannot open directory '%s': %s", z, strerror(errno));
    goto done;
  }
  if( nTrust<n ) z[nTrust] = '/';
  for(i=nTrust; i<n; ){
    size_t j;
    int nfd;
    char c;
    while( i<n && z[i]=='/' ) i++;
    if( i>=n ) break;
    for(j=i; j<n && z[j]!='/'; j++){}
    if( ++nLevel>WB_MAX_DEPTH ){
      wbErr(p, "cannot create directory '%s': more than %d levels", zDir, WB_MAX_DEPTH);
      close(fd); fd = -1;
      goto done;
    }
    c = z[j];
    z[j] = 0;
    if( mkdirat(fd, z+i, 0777)!=0 && errno!=EEXIST ){
      wbErr(p, "cannot create directory '%s': %s", z, strerror(errno));
      close(fd); fd = -1;
      goto done;
    }
    nfd = openat(fd, z+i, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
    if( nfd<0 ){
      if( errno==ELOOP || errno==ENOTDIR ){
        wbErr(p, "refusing the cache directory '%s': '%s' is a symlink or not "
                 "a directory", zDir, z);
      }else{
        wbErr(p, "cannot open directory '%s': %s", z, strerror(errno));
      }
      close(fd); fd = -1;
      goto done;
    }
    close(fd);
    fd = nfd;
    z[j] = c;
    i = j;
  }
done:
  sqlite3_free(z);
  return fd;
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
  char *zUrl;             /* its directUrl from ArtifactFileURLs
                          ** (sqlite3_malloc'd), 0 if not listed */
} WbEntry;

/* qsort() / bsearch() order of WbEntry by path. */
static int wbEntryCmp(const void *a, const void *b){
  return strcmp(((const WbEntry*)a)->zPath, ((const WbEntry*)b)->zPath);
}

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
      char *zShow = wbShow(e->zDigest, strlen(e->zDigest), WB_SHOW_NAME);
      if( zShow==0 ){ wbOom(p); goto done; }
      wbErr(p, "digest mismatch for '%s': manifest says %s, downloaded file has %s",
            e->zPath, zShow, zGot);
      sqlite3_free(zShow);
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
** host, where the key goes: sqlite3_malloc'd, or 0 when the digest is not
** an MD5 (p->rc unset) or with the error recorded.  Every name in its path
** comes from the server (the entity of the artifact, the manifest's
** storageRegion and the entry's birthArtifactID) and is refused unless it
** is one plain path component (wbCheckComponent), then percent-encoded. */
static char *wbLegacyUrl(Wb *p, const WbArt *a, const WbEntry *e,
                         const char *zLayout, const char *zRegion){
  unsigned char d[16];
  char zHex[33];
  int i;
  if( profsumBase64Decode(e->zDigest, strlen(e->zDigest), d, sizeof(d))!=16 ) return 0;
  for(i=0; i<16; i++) sprintf(zHex+2*i, "%02x", d[i]);
  if( wbCheckComponent(p, "the artifact's entity name", a->zEntity) ) return 0;
  if( zLayout && strcmp(zLayout, "V2")==0 && e->zBirth ){
    char *zE, *zB, *zR, *zUrl;
    if( wbCheckComponent(p, "the manifest's storagePolicyConfig.storageRegion", zRegion)
     || wbCheckComponent(p, "the birthArtifactID of a manifest entry", e->zBirth) ){
      return 0;
    }
    zE = wbQuote(a->zEntity); zB = wbQuote(e->zBirth); zR = wbQuote(zRegion);
    zUrl = (zE && zB && zR)
      ? sqlite3_mprintf("%s/artifactsV2/%s/%s/%s/%s", p->zBase, zR, zE, zB, zHex) : 0;
    sqlite3_free(zE); sqlite3_free(zB); sqlite3_free(zR);
    if( zUrl==0 ) wbOom(p);
    return zUrl;
  }else{
    char *zE = wbQuote(a->zEntity);
    char *zUrl = zE ? sqlite3_mprintf("%s/artifacts/%s/%s", p->zBase, zE, zHex) : 0;
    sqlite3_free(zE);
    if( zUrl==0 ) wbOom(p);
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

/* Check the entries of a manifest (pContents, its "contents" object)
** before anything is written: safe relative names, an object with a digest
** (at most WB_SHOW_NAME bytes) each, a size that is absent, null or a
** non-negative integer, and a total size within p->nMaxBytes for artifact
** a.  Names in errors are cut to WB_SHOW_NAME bytes, control characters
** escaped (wbShow).  The stored
** files go to aE (room for pContents->nChild entries; they borrow from
** pContents) and their count to *pnE; references are listed in pSkipped.
** zWhat names the manifest in errors.  Returns p->rc. */
static int wbCheckEntries(Wb *p, const WbArt *a, const char *zWhat,
                          JNode *pContents, WbEntry *aE, int *pnE,
                          JNode *pSkipped){
  sqlite3_int64 nTotal = 0;
  int i, nE = 0;
  for(i=0; i<pContents->nChild && p->rc==SQLITE_OK; i++){
    JNode *pEnt = pContents->a[i], *pSz;
    const char *zPath = pEnt->zKey;
    char *zShow = wbShow(zPath, strlen(zPath), WB_SHOW_NAME);
    if( zShow==0 ){ wbOom(p); break; }
    if( !wbSafeRelPath(zPath, (int)strlen(zPath)) ){
      wbErr(p, "refusing manifest file name '%s' (absolute, empty or '.'/'..' "
               "component, or a control character)", zShow);
    }else if( pEnt->type!=JT_OBJECT ){
      wbErr(p, "%s: malformed entry '%s'", zWhat, zShow);
    }else if( jGet(pEnt, "ref") && jGet(pEnt, "ref")->type!=JT_NULL ){
      jPush(pSkipped, jStr(zPath, -1));   /* a reference, not a stored file */
    }else{
      aE[nE].zPath = zPath;
      aE[nE].zDigest = wbStr(jGet(pEnt, "digest"));
      aE[nE].zBirth = wbStr(jGet(pEnt, "birthArtifactID"));
      pSz = jGet(pEnt, "size");
      aE[nE].nSize = (pSz && pSz->type==JT_INT) ? pSz->i : -1;
      if( pSz && pSz->type!=JT_NULL && (pSz->type!=JT_INT || pSz->i<0) ){
        wbErr(p, "%s: entry '%s' has an invalid size (expected a non-negative "
                 "integer)", zWhat, zShow);
      }else if( aE[nE].zDigest==0 ){
        wbErr(p, "%s: entry '%s' has no digest", zWhat, zShow);
      }else if( strlen(aE[nE].zDigest)>WB_SHOW_NAME ){
        wbErr(p, "%s: entry '%s' has a digest of %d bytes (at most %d)", zWhat,
              zShow, (int)strlen(aE[nE].zDigest), WB_SHOW_NAME);
      }else if( aE[nE].nSize > p->nMaxBytes - nTotal ){
        wbErr(p, "artifact '%s/%s/%s:v%lld' exceeds the size limit of %lld bytes "
                 "(PROFSUM_WANDB_MAX_BYTES)", a->zEntity, a->zProject, a->zName,
                 a->iVersion, p->nMaxBytes);
      }else{
        if( aE[nE].nSize>0 ) nTotal += aE[nE].nSize;
        nE++;
      }
    }
    sqlite3_free(zShow);
  }
  *pnE = nE;
  return p->rc;
}

/* The download URLs of the entries aE[0..nE) of artifact a, sorted by
** path (ArtifactFileURLs, page by page), into their zUrl; an entry the
** server does not list keeps zUrl 0, and a listed name the manifest does
** not have is ignored.  Each name is looked up by binary search, so a
** listing of n names costs O(n log nE).  The listing ends early once
** every entry has its URL.  Returns p->rc; *pbPaging is set when the
** error is the listing's paging (a cursor loop, too many pages), not the
** query itself. */
static int wbFileUrls(Wb *p, const WbArt *a, WbEntry *aE, int nE, int *pbPaging){
  WbPager g;
  int i, nHave = 0;
  char *zWhat = sqlite3_mprintf("file list of '%s/%s/%s:v%lld'", a->zEntity,
                                a->zProject, a->zName, a->iVersion);
  memset(&g, 0, sizeof(g));
  if( zWhat==0 ){ wbOom(p); return p->rc; }
  while( nHave<nE ){
    JNode *pVars = jObj(), *pData, *pRoot, *pF, *pEdges;
    int bMore, nNew = 0;
    if( pVars ){
      jSet(pVars, "id", jStr(a->zId, -1));
      jSet(pVars, "cursor", g.zCursor ? jStr(g.zCursor, -1) : jNull());
      jSet(pVars, "perPage", jInt(WB_PAGE_FILES));
    }
    pRoot = wbGraphql(p, "ArtifactFileURLs", wbQFileUrls, pVars, &pData);
    if( pRoot==0 ) break;
    pF = wbPath(pData, "artifact", "files", (char*)0);
    if( pF==0 || pF->type!=JT_OBJECT ){
      jFree(pRoot);
      wbErr(p, "artifact '%s/%s/%s:v%lld' not found (file list)",
            a->zEntity, a->zProject, a->zName, a->iVersion);
      break;
    }
    pEdges = jGet(pF, "edges");
    for(i=0; pEdges && pEdges->type==JT_ARRAY && i<pEdges->nChild && !p->rc; i++){
      WbEntry key, *e;
      const char *zU = wbStr(wbPath(pEdges->a[i], "node", "directUrl", (char*)0));
      key.zPath = wbStr(wbPath(pEdges->a[i], "node", "name", (char*)0));
      if( key.zPath==0 || zU==0 ) continue;
      e = bsearch(&key, aE, (size_t)nE, sizeof(WbEntry), wbEntryCmp);
      if( e==0 || e->zUrl ) continue;
      e->zUrl = wbDup(p, zU);
      nHave++;
      nNew++;
    }
    bMore = p->rc==SQLITE_OK && nHave<nE
         && wbNextPage(p, &g, wbPath(pF, "pageInfo", (char*)0), nNew>0, zWhat);
    *pbPaging = p->rc!=SQLITE_OK && p->rc!=SQLITE_NOMEM;
    jFree(pRoot);
    if( p->rc || !bMore ) break;
  }
  profsumStrPoolFree(&g.seen);
  sqlite3_free(zWhat);
  return p->rc;
}

/* Is zDir a directory on the way to an entry of aE[0..nE) (sorted by
** path): does some entry's path start with "zDir/"? */
static int wbIsDirOf(const WbEntry *aE, int nE, const char *zDir){
  size_t n = strlen(zDir);
  int lo = 0, hi = nE;
  while( lo<hi ){                 /* the first entry not below zDir+"/" */
    int mid = lo + (hi-lo)/2, c = strncmp(aE[mid].zPath, zDir, n);
    if( c<0 || (c==0 && (unsigned char)aE[mid].zPath[n] < '/') ) lo = mid+1;
    else hi = mid;
  }
  return lo<nE && strncmp(aE[lo].zPath, zDir, n)==0 && aE[lo].zPath[n]=='/';
}

/* Is zName the temporary file of a download in progress (wbFetchEntry),
** perhaps by another process fetching the same version? */
static int wbIsPartName(const char *zName){
  size_t n = strlen(zName);
  return n==30 && strncmp(zName, ".profsum-", 9)==0 && strcmp(zName+25, ".part")==0;
}

/* Remove from directory dfd (zRel below the version folder zDest, "" for
** the folder itself) everything that is not a file of aE[0..nE) (sorted
** by path) or a directory on the way to one, never following a symlink;
** with bAll, remove everything (the contents of a directory being
** removed).  Downloads in progress (wbIsPartName) are left alone.  Used on
** the default cache folder, so that what profsum_import reads there is
** the manifest's files only.  Errors name the file.  Returns p->rc. */
static int wbPrune(Wb *p, int dfd, const char *zDest, const char *zRel,
                   const WbEntry *aE, int nE, int bAll, int nDepth){
  int fd2 = dup(dfd);
  DIR *d = fd2>=0 ? fdopendir(fd2) : 0;
  struct dirent *de;
  if( d==0 ){
    wbErr(p, "cannot read directory '%s/%s': %s", zDest, zRel, strerror(errno));
    if( fd2>=0 ) close(fd2);
    return p->rc;
  }
  while( p->rc==SQLITE_OK && (de = readdir(d))!=0 ){
    const char *zName = de->d_name;
    struct stat st;
    char *zPath;
    WbEntry key;
    int bDir, bKeep = 0;
    if( strcmp(zName, ".")==0 || strcmp(zName, "..")==0 ) continue;
    if( !bAll && wbIsPartName(zName) ) continue;
    zPath = zRel[0] ? sqlite3_mprintf("%s/%s", zRel, zName) : sqlite3_mprintf("%s", zName);
    if( zPath==0 ){ wbOom(p); break; }
    if( fstatat(dfd, zName, &st, AT_SYMLINK_NOFOLLOW)!=0 ){
      if( errno!=ENOENT ) wbErr(p, "cannot read '%s/%s': %s", zDest, zPath, strerror(errno));
      sqlite3_free(zPath);
      continue;
    }
    bDir = S_ISDIR(st.st_mode);
    key.zPath = zPath;
    if( !bAll ){
      bKeep = bDir ? wbIsDirOf(aE, nE, zPath)
                   : S_ISREG(st.st_mode)
                     && bsearch(&key, aE, (size_t)nE, sizeof(WbEntry), wbEntryCmp)!=0;
    }
    if( bDir ){
      int sfd = nDepth<WB_MAX_DEPTH
        ? openat(dfd, zName, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC) : -1;
      if( sfd<0 ){
        wbErr(p, "cannot open directory '%s/%s': %s", zDest, zPath,
              nDepth<WB_MAX_DEPTH ? strerror(errno) : "too deep");
      }else{
        wbPrune(p, sfd, zDest, zPath, aE, nE, !bKeep, nDepth+1);
        close(sfd);
      }
    }
    if( p->rc==SQLITE_OK && !bKeep
     && unlinkat(dfd, zName, bDir ? AT_REMOVEDIR : 0)!=0 && errno!=ENOENT ){
      wbErr(p, "cannot remove '%s/%s' (not in the manifest) from the cache: %s",
            zDest, zPath, strerror(errno));
    }
    sqlite3_free(zPath);
  }
  closedir(d);
  return p->rc;
}

/* Download all stored files of artifact a into zDest (created if needed):
** manifest (by a->zManifestUrl, else FetchArtifactManifest), names and
** total size checked (wbCheckEntries), per-file URLs (wbFileUrls; files
** missing there use the legacy URL), then wbFetchEntry for
** each (a presigned URL that fails with an HTTP status is asked for again
** once: wbFetchEntryFresh).  Returns the result object (id, entity,
** project, name, version, type, ref, dest_dir, files, skipped) or 0 on
** error. */
static JNode *wbDownloadArtifact(Wb *p, WbArt *a, const char *zDest,
                                 size_t nTrust, int bPrune){
  JNode *pMan = 0, *pContents, *pRes = 0, *pFiles = 0, *pSkipped = 0;
  WbEntry *aE = 0;
  int nE = 0, i, rootFd = -1, bPaging = 0;
  char *zWhat = 0;
  const char *zLayout, *zRegion;
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
  memset(aE, 0, sizeof(WbEntry)*(pContents->nChild+1));
  if( wbCheckEntries(p, a, zWhat, pContents, aE, &nE, pSkipped) ) goto done;

  /* Per-file URLs, all pages.  When the query fails (an older server,
  ** an error answer) every file takes the legacy route instead, as it
  ** does for a file the list leaves out; not when the key is refused or
  ** memory runs out, which that route would meet again, nor when the
  ** server's paging loops. */
  qsort(aE, (size_t)nE, sizeof(WbEntry), wbEntryCmp);
  if( wbFileUrls(p, a, aE, nE, &bPaging) && p->rc!=SQLITE_NOMEM
   && p->iHttpFail!=401 && p->iHttpFail!=403 && !bPaging ){
    for(i=0; i<nE; i++){ sqlite3_free(aE[i].zUrl); aE[i].zUrl = 0; }
    wbClearErr(p);
    p->iHttpFail = 0;
  }
  if( p->rc ) goto done;

  /* Download. */
  rootFd = wbMkdirs(p, zDest, nTrust);
  if( rootFd<0 ) goto done;
  pFiles = jArr();
  if( pFiles==0 ){ wbOom(p); goto done; }
  for(i=0; i<nE; i++){
    const char *zU = aE[i].zUrl;
    char *zLegacy = zU ? 0 : wbLegacyUrl(p, a, &aE[i], zLayout, zRegion);
    if( p->rc ) goto done;
    wbFetchEntry(p, rootFd, zDest, &aE[i], zU ? zU : zLegacy, zU==0, pFiles);
    sqlite3_free(zLegacy);
    if( p->rc && zU && p->iHttpFail ){
      wbFetchEntryFresh(p, a, rootFd, zDest, &aE[i], pFiles);
    }
    if( p->rc ) goto done;
  }
  if( bPrune && wbPrune(p, rootFd, zDest, "", aE, nE, 0, 0) ) goto done;

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
  for(i=0; aE && i<nE; i++) sqlite3_free(aE[i].zUrl);
  jFree(pMan); jFree(pFiles); jFree(pSkipped);
  sqlite3_free(aE); sqlite3_free(zWhat);
  return p->rc ? (jFree(pRes), (JNode*)0) : pRes;
}

/* The server's directory name in the cache: the host of WANDB_BASE_URL,
** lower case, with ":<port>" when the port is not the scheme's default;
** bytes other than A-Z a-z 0-9 . - _ : become '_' (an IPv6 address's
** brackets, say).  sqlite3_malloc'd, 0 with the error recorded. */
static char *wbCacheHost(Wb *p){
  const char *zPort = strrchr(p->zOrigin, ':');
  int bDefault = zPort==0
    || (strncmp(p->zOrigin, "https:", 6)==0 && strcmp(zPort, ":443")==0)
    || (strncmp(p->zOrigin, "http:", 5)==0 && strcmp(zPort, ":80")==0);
  char *z = sqlite3_mprintf("%s%s", p->zHost, bDefault ? "" : zPort), *q;
  if( z==0 ){ wbOom(p); return 0; }
  for(q=z; *q; q++){
    unsigned char c = (unsigned char)*q;
    if( !((c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
       || c=='.' || c=='-' || c=='_' || c==':') ) *q = '_';
  }
  if( z[0]==0 || strcmp(z, ".")==0 || strcmp(z, "..")==0 ){
    wbErr(p, "cannot name the cache directory of host '%s'; pass dest_dir", p->zHost);
    sqlite3_free(z);
    return 0;
  }
  return z;
}

/* The default destination of artifact a:
** ${XDG_CACHE_HOME:-$HOME/.cache}/profsum/wandb/<host>/<entity>/<project>/
** <name>/vN, <host> the server's (wbCacheHost), so that two servers never
** share a folder (sqlite3_malloc'd; 0 with the error recorded).  *pnRoot
** receives the length of the cache root, below which wbMkdirs follows no
** symlink.  Each part must be a safe path component. */
static char *wbDefaultDest(Wb *p, const WbArt *a, size_t *pnRoot){
  const char *zX = getenv("XDG_CACHE_HOME"), *zH = getenv("HOME");
  char *zRoot, *zRes, *zHost;
  size_t n;
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
  n = strlen(zRoot);
  while( n>1 && zRoot[n-1]=='/' ) zRoot[--n] = 0;
  zHost = wbCacheHost(p);
  zRes = zHost ? sqlite3_mprintf("%s/profsum/wandb/%s/%s/%s/%s/v%lld", zRoot, zHost,
                                 a->zEntity, a->zProject, a->zName, a->iVersion) : 0;
  *pnRoot = n;
  sqlite3_free(zRoot);
  sqlite3_free(zHost);
  if( zRes==0 ) wbOom(p);
  return zRes;
}

/* Split artifact reference "entity/project/name[:alias|:vN]" into
** sqlite3_malloc'd *pzE, *pzP and *pzNameAlias (":latest" appended when no
** alias is given).  Errors name the reference. */
int wbParseRef(Wb *p, const char *zRef, char **pzE, char **pzP,
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
    if( *z==':' ){ sec = profsumStrtod(z+1, &zEnd); z = zEnd; }
  }
  y = Y - (M<=2);
  era = (y>=0 ? y : y-399)/400;
  yoe = y - era*400;
  doy = (153*(M + (M>2 ? -3 : 9)) + 2)/5 + D - 1;
  doe = yoe*365 + yoe/4 - yoe/100 + doy;
  days = (long long)era*146097 + doe - 719468;
  r = (double)days*86400 + h*3600 + m*60 + sec;
  if( *z=='+' || *z=='-' ){
    /* +HH, +HH:MM or +HHMM (all ISO 8601) */
    const char *q = z+1;
    int zh = -1, zm = 0;
    if( q[0]>='0' && q[0]<='9' && q[1]>='0' && q[1]<='9' ){
      zh = (q[0]-'0')*10 + (q[1]-'0');
      q += 2;
      if( *q==':' ) q++;
      if( q[0]>='0' && q[0]<='9' && q[1]>='0' && q[1]<='9' ) zm = (q[0]-'0')*10 + (q[1]-'0');
    }
    if( zh>=0 ){
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
  int bBest = 0, bAliased = 0, i;
  double rBest = 0;
  WbPager g;
  char *zWhat = sqlite3_mprintf("output artifacts of run '%s/%s/%s'", zE, zP, zRun);
  memset(&g, 0, sizeof(g));
  memset(&best, 0, sizeof(best));
  memset(&cur, 0, sizeof(cur));
  memset(&aliased, 0, sizeof(aliased));
  if( zWhat==0 ){ wbOom(p); goto done; }
  while( !bAliased ){
    JNode *pVars = jObj(), *pData, *pRoot, *pProj, *pRun, *pEdges;
    int bMore;
    if( pVars ){
      jSet(pVars, "entity", jStr(zE, -1));
      jSet(pVars, "project", jStr(zP, -1));
      jSet(pVars, "run", jStr(zRun, -1));
      jSet(pVars, "cursor", g.zCursor ? jStr(g.zCursor, -1) : jNull());
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
    bMore = !bAliased && wbNextPage(p, &g, wbPath(pRun, "outputArtifacts", "pageInfo", (char*)0),
                                    pEdges && pEdges->type==JT_ARRAY && pEdges->nChild>0, zWhat);
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
  profsumStrPoolFree(&g.seen);
  sqlite3_free(zWhat);
  return p->rc;
}

/* Fetch artifact reference zRef into zDest (0: the default cache
** directory).  Returns the result object or 0 (error in p). */
JNode *wbFetchRef(Wb *p, const char *zRef, const char *zDest, WbArt *a){
  char *zDef = 0;
  JNode *pRes = 0;
  size_t nTrust = zDest ? strlen(zDest) : 0;
  if( wbResolveRef(p, zRef, a) ) return 0;
  if( zDest==0 ){
    zDef = wbDefaultDest(p, a, &nTrust);
    if( zDef==0 ) return 0;
    zDest = zDef;
  }
  pRes = wbDownloadArtifact(p, a, zDest, nTrust, zDef!=0);
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
** host must map to the configured API host (checked only once wbBegin
** has set p->zNetloc).  The errors of §8.1 use its sentences, a hint
** after them. */
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
      wbErr(p, "Could not parse run information from URL: %s", zTarget);
    }else if( p->zNetloc ){
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
    wbErr(p, "Could not parse run information from URL: %s", zTarget);
  }else if( nSeg==1 ){
    if( zDefE==0 || zDefE[0]==0 || zDefP==0 || zDefP[0]==0 ){
      wbErr(p, "Bare run ids require --entity and --project. (run id '%s'; give "
               "options entity/project or WANDB_ENTITY/WANDB_PROJECT)", az[0]);
    }else{
      *pzE = sqlite3_mprintf("%s", zDefE);
      *pzP = sqlite3_mprintf("%s", zDefP);
      *pzR = sqlite3_mprintf("%s", az[0]);
    }
  }else if( nSeg<3 ){
    /* 0 segments ('' or '/'): not a form of §8.1 either */
    wbErr(p, "Unrecognized run target: %s (expected run_id, entity/project/run_id, "
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

/* See wandb_int.h. */
int wbCheckRunTarget(Wb *p, const char *zTarget, const char *zDefE, const char *zDefP){
  char *zE = 0, *zP = 0, *zR = 0;
  int rc = wbParseRunTarget(p, zTarget, zDefE, zDefP, &zE, &zP, &zR);
  sqlite3_free(zE); sqlite3_free(zP); sqlite3_free(zR);
  return rc;
}

/* Fetch the profile of run target zTarget: pick (alias zAlias), fetch into
** zDest (0: default), read run_metadata.  Returns the result object with
** "run_metadata" and "run" added, or 0 (error in p). */
JNode *wbFetchRun(Wb *p, const char *zTarget, const char *zDest,
                  const char *zEnt, const char *zProj, const char *zAlias,
                  WbArt *a){
  char *zE = 0, *zP = 0, *zR = 0, *zDef = 0, *zRef = 0, *zName = 0;
  JNode *pRes = 0, *pMeta = 0;
  size_t nTrust = zDest ? strlen(zDest) : 0;
  if( wbParseRunTarget(p, zTarget, zEnt, zProj, &zE, &zP, &zR) ) goto done;
  if( wbPickRunProfile(p, zE, zP, zR, zAlias ? zAlias : "latest", a) ) goto done;
  zRef = sqlite3_mprintf("%s/%s/%s:v%lld", a->zEntity, a->zProject, a->zName, a->iVersion);
  zName = sqlite3_mprintf("%s:v%lld", a->zName, a->iVersion);
  if( zRef==0 || zName==0 ){ wbOom(p); goto done; }
  pMeta = wbRunMetadata(p, zE, zP, zR, zRef, zName);
  if( pMeta==0 ) goto done;
  if( zDest==0 ){
    zDef = wbDefaultDest(p, a, &nTrust);
    if( zDef==0 ) goto done;
    zDest = zDef;
  }
  pRes = wbDownloadArtifact(p, a, zDest, nTrust, zDef!=0);
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
  memset(&w, 0, sizeof(w));
  /* A run target's form first (§8.1 parses it before the API is set up):
  ** its error says more than a missing key. */
  if( strncmp(zSource, "wandb:", 6)==0
   || wbCheckRunTarget(&w, strncmp(zSource, "wandb-run:", 10)==0 ? zSource+10 : zSource,
                       getenv("WANDB_ENTITY"), getenv("WANDB_PROJECT"))==SQLITE_OK ){
    wbBegin(&w);
  }
  if( w.rc==SQLITE_OK ){
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
