/*
** http.c — the HTTP transport of the W&B functions over libcurl: the
** operation's configuration and credentials (WANDB_BASE_URL, the API key
** from WANDB_API_KEY or netrc, timeouts and limits from the environment),
** one request with its redirects, retries with backoff, GraphQL calls, and
** error messages cleaned of the key.
**
** Protocol: wandb-http.md, the W&B HTTP protocol notes (errors and retries
** §7).  User documentation: docs/wandb.md.
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
**   - every body is bounded by its sink's nLimit (a download by its
**     manifest entry's size and the call's PROFSUM_WANDB_MAX_BYTES, see
**     wandb_fetch.c; JSON by WB_MEM_LIMIT), every attempt of a request
**     (all its redirect hops together) by the PROFSUM_WANDB_TIMEOUT
**     timeouts, and the waits between retries by
**     PROFSUM_WANDB_MAX_RETRY_SECONDS.
**
** Built with PROFSUM_OMIT_NETWORK this file is empty.
*/
#include "http.h"
#include "cnum.h"
#include "busy.h"
#include "utf8cut.h"

#ifndef PROFSUM_OMIT_NETWORK
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include <stdarg.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define WB_UA            "profsum/" PROFSUM_VERSION " (libcurl)"
#define WB_MAX_RETRIES   5                 /* retries after the first try */
#define WB_MAX_HOPS      5                 /* manual redirects per request */
#define WB_MAX_TIMEOUT   2147483           /* seconds: INT_MAX/1000, the most
                                           ** CURLOPT_TIMEOUT accepts */

/* ---------------------------------------------------------------------
** Errors and the key.
*/

/* Record the first error of p (later ones are ignored).  Out of memory
** while formatting leaves rc==SQLITE_NOMEM without a message. */
void wbErr(Wb *p, const char *zFmt, ...){
  va_list ap;
  if( p->rc ) return;
  va_start(ap, zFmt);
  p->zErr = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  p->rc = p->zErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Record an out-of-memory error (unless an error is already recorded). */
void wbOom(Wb *p){
  if( p->rc==SQLITE_OK ) p->rc = SQLITE_NOMEM;
}

/* Forget the recorded error (used by best-effort steps). */
void wbClearErr(Wb *p){
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
void wbScrub(Wb *p){
  wbScrubText(p, p->zErr);
}

/* Cut z (in place) to at most nMax bytes, not inside a UTF-8 sequence. */
static void wbCut(char *z, size_t nMax){
  size_t n = strlen(z);
  if( n<=nMax ) return;
  z[profsumUtf8Cut(z, (int64_t)n, (int64_t)nMax)] = 0;
}

/* sqlite3_mprintf("%s") that records OOM in p.  z==0 gives 0. */
char *wbDup(Wb *p, const char *z){
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
  r = profsumStrtod(z, &zEnd);
  if( zEnd==z || *zEnd!=0 || !(r>=0) || isinf(r) ) return rDefault;
  return r;
}

/* ---------------------------------------------------------------------
** JSON lookups and server messages.
*/

/* Follow object keys from p (NULL-terminated list); 0 when missing. */
JNode *wbPath(JNode *p, ...){
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
const char *wbStr(const JNode *p){
  if( p==0 || p->type!=JT_STRING || p->z==0 ) return 0;
  if( (int)strlen(p->z)!=p->n ) return 0;
  return p->z;
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

/* ---------------------------------------------------------------------
** URLs, configuration and credentials.
*/

/* Parse zUrl; return "scheme://host:port" (lower case, default port
** explicit) sqlite3_malloc'd, or 0 when it is not an http(s) URL.  When
** pzNetloc/pzHost are given they receive host[:port] as written and the
** host (sqlite3_malloc'd). */
char *wbOriginOf(const char *zUrl, char **pzNetloc, char **pzHost){
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

/* z percent-encoded as one URL path component: every byte but the
** unreserved ones (RFC 3986: A-Z a-z 0-9 - . _ ~) as %XX, '/' included,
** like Python's urllib.parse.quote(z, safe='').  sqlite3_malloc'd, 0 when
** out of memory. */
char *wbQuote(const char *z){
  sqlite3_str *s = sqlite3_str_new(0);
  for(; *z; z++){
    unsigned char c = (unsigned char)*z;
    if( (c>='A' && c<='Z') || (c>='a' && c<='z') || (c>='0' && c<='9')
     || c=='_' || c=='.' || c=='-' || c=='~' ){
      sqlite3_str_appendchar(s, 1, (char)c);
    }else{
      sqlite3_str_appendf(s, "%%%02X", c);
    }
  }
  return sqlite3_str_finish(s);
}

/* z[0..n) as a message shows a name it did not choose: at most nMax bytes
** of it (then "..." and the full length), each control byte, DEL and
** backslash written as \xNN.  sqlite3_malloc'd, 0 when out of memory. */
char *wbShow(const char *z, size_t n, size_t nMax){
  sqlite3_str *s = sqlite3_str_new(0);
  size_t i;
  for(i=0; i<n && i<nMax; i++){
    unsigned char c = (unsigned char)z[i];
    if( c<0x20 || c==0x7f || c=='\\' ) sqlite3_str_appendf(s, "\\x%02x", c);
    else sqlite3_str_appendchar(s, 1, (char)c);
  }
  if( i<n ) sqlite3_str_appendf(s, "... (%llu bytes)", (unsigned long long)n);
  return sqlite3_str_finish(s);
}

/* Longest part of a refused path component an error shows. */
#define WB_SHOW_COMPONENT 80

/* Check z, a name a server supplied (zField says which), before it
** becomes one path component of a URL on the API host, where the key
** goes: refused when it is absent, empty, "." or "..", or holds '/', '\\',
** '?', '#', '%' or a control byte (any of them could move the request to
** another route of {base}, or out of it).  Returns p->rc. */
int wbCheckComponent(Wb *p, const char *zField, const char *z){
  const char *q;
  char *zShow;
  int bBad = z==0 || z[0]==0 || strcmp(z, ".")==0 || strcmp(z, "..")==0;
  for(q=z; !bBad && *q; q++){
    unsigned char c = (unsigned char)*q;
    bBad = c<0x20 || c==0x7f || strchr("/\\?#%", c)!=0;
  }
  if( !bBad ) return p->rc;
  zShow = z ? wbShow(z, strlen(z), WB_SHOW_COMPONENT) : 0;
  if( z && zShow==0 ){ wbOom(p); return p->rc; }
  wbErr(p, "refusing %s '%s' as a URL path component on the API host (empty, "
           "'.', '..', or contains '/', '\\', '?', '#', '%%' or a control "
           "character)", zField, z ? zShow : "(missing)");
  sqlite3_free(zShow);
  return p->rc;
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
  {
    /* comments: a token that starts with '#' runs to the end of its line */
    char *z;
    for(z=zText; *z; z++){
      if( *z=='#' && (z==zText || strchr(" \t\r\n", z[-1])) ){
        while( *z && *z!='\n' ) *z++ = ' ';
        if( *z==0 ) break;
      }
    }
  }
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
    }else if( strcmp(zTok, "login")==0 || strcmp(zTok, "account")==0 ){
      if( strtok_r(0, " \t\r\n", &zSave)==0 ) break;
    }else if( strcmp(zTok, "macdef")==0 ){
      /* a macro: its name, then its body up to an empty line (not tokens) */
      char *z;
      if( strtok_r(0, " \t\r\n", &zSave)==0 || zSave==0 ) break;
      for(z=zSave;;){          /* z: the start of a line of the body */
        char *q = z;
        while( *q==' ' || *q=='\t' || *q=='\r' ) q++;
        if( *q=='\n' || *q==0 ){ z = q; break; }       /* an empty line ends it */
        q = strchr(q, '\n');
        if( q==0 ){ z += strlen(z); break; }
        z = q+1;
      }
      zSave = z;
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
void wbEnd(Wb *p){
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
int wbBegin(Wb *p){
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

/* Prepare s for a new attempt: empty body, fresh MD5, headers forgotten,
** and the output file (if any) truncated. */
static void wbSinkReset(WbSink *s){
  s->nMem = 0;
  if( s->zMem ) s->zMem[0] = 0;
  s->nErrBody = 0;
  s->zErrBody[0] = 0;
  s->nErrRead = 0;
  s->bErrCut = 0;
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
    s->nErrRead += (sqlite3_int64)n;
    if( s->nErrRead > WB_ERRBODY_READ ){
      /* enough of an error page: stop (wbPerform takes the status as is) */
      s->bErrCut = 1;
      return 0;
    }
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
  r = profsumStrtod(buf, &zEnd);
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

/* Is zUrl an http:// or https:// URL (any case)?  Every URL profsum
** requests is, the ones a server hands out (file URLs, redirects) too. */
static int wbSchemeOk(const char *zUrl){
  return sqlite3_strnicmp(zUrl, "http://", 7)==0 || sqlite3_strnicmp(zUrl, "https://", 8)==0;
}

/* Allow only http and https on handle c, for the request and for any
** redirect curl follows: the string options of libcurl 7.85 and later,
** else the bit masks of older ones (by number: the headers deprecate
** them).  0 when neither took: the caller then follows redirects itself,
** checking each Location (wbSchemeOk). */
static int wbOnlyHttp(CURL *c){
  const long mask = CURLPROTO_HTTP | CURLPROTO_HTTPS;
  if( curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https")==CURLE_OK
   && curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")==CURLE_OK ){
    return 1;
  }
  return curl_easy_setopt(c, (CURLoption)(CURLOPTTYPE_LONG + 181), mask)==CURLE_OK    /* PROTOCOLS */
      && curl_easy_setopt(c, (CURLoption)(CURLOPTTYPE_LONG + 182), mask)==CURLE_OK;   /* REDIR_PROTOCOLS */
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
** set on the handle: CURLOPT_UNRESTRICTED_AUTH off, curl's netrc off),
** unless this libcurl cannot be told to follow http and https only
** (wbOnlyHttp): then a GET's redirects are followed here too.  Every URL
** requested, a Location followed here included, must be http or https.
** All hops share one deadline, p->nTotal seconds from the call (a
** redirect does not restart the timer).  Returns the CURLcode (CURLE_OK
** when an HTTP response arrived) and puts the final status in *pCode.  zCurlErr (CURL_ERROR_SIZE) receives curl's
** message.  Sets p->rc only for out-of-memory and refused redirects. */
static CURLcode wbPerform(Wb *p, const char *zUrl, const char *zPost,
                          WbSink *s, long *pCode, char *zCurlErr){
  char *zCur = wbDup(p, zUrl);
  CURLcode rc = CURLE_OK;
  int nHop = 0;
  sqlite3_int64 tEnd = profsumNowMs() + (sqlite3_int64)p->nTotal*1000;   /* one deadline for all hops */
  int bKeyOk = s->bApi && s->zPutData==0;   /* the key may still go along */
  *pCode = 0;
  while( zCur ){
    struct curl_slist *pHdr = 0, *pNew;
    int bAuth = bKeyOk && wbIsApiOrigin(p, zCur);
    int bByHand;              /* redirects followed here, not by curl */
    CURL *c = p->curl;
    long code = 0;
    if( !wbSchemeOk(zCur) ){
      wbErr(p, "refusing a URL that is not http or https: %.60s%s", zCur, strlen(zCur)>60 ? "..." : "");
      rc = CURLE_UNSUPPORTED_PROTOCOL;
      break;
    }
    curl_easy_reset(c);
    zCurlErr[0] = 0;
    curl_easy_setopt(c, CURLOPT_URL, zCur);
    curl_easy_setopt(c, CURLOPT_USERAGENT, WB_UA);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
    bByHand = bAuth || !wbOnlyHttp(c);
    {
      /* what is left of the attempt's PROFSUM_WANDB_TIMEOUT: a redirect
      ** does not restart the timer */
      long nMs = (long)(tEnd - profsumNowMs());
      if( nMs<=0 ){
        sqlite3_snprintf(CURL_ERROR_SIZE, zCurlErr, "timed out");
        rc = CURLE_OPERATION_TIMEDOUT;
        break;
      }
      curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                       p->nConnect*1000L < nMs ? p->nConnect*1000L : nMs);
      curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, nMs);
    }
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, zCurlErr);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, wbWriteCb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, wbHeaderCb);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, bByHand ? 0L : 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)WB_MAX_HOPS);
    curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);   /* never rewrite "../" */
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
    if( rc==CURLE_WRITE_ERROR && s->bErrCut ) rc = CURLE_OK;   /* an error page cut short */
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, (struct curl_slist*)0);
    curl_slist_free_all(pHdr);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    *pCode = code;
    if( rc==CURLE_OK && (bAuth || (bByHand && zPost==0 && s->zPutData==0))
     && (code==301 || code==302 || code==303 || code==307 || code==308) ){
      /* a keyed request, or a GET on a libcurl that cannot restrict the
      ** protocols of redirects (the next hop's scheme is checked above) */
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
int wbRequest(Wb *p, const char *zWhat, const char *zUrl,
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
JNode *wbGraphql(Wb *p, const char *zOp, const char *zQuery,
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

/* The offset in JSON text z[0..n) of the first \u0000 escape inside a
** string (a NUL once decoded), or -1 when there is none. */
static sqlite3_int64 wbJsonNul(const char *z, sqlite3_int64 n){
  sqlite3_int64 i;
  int bIn = 0;
  for(i=0; i<n; i++){
    if( z[i]=='"' ){
      bIn = !bIn;
    }else if( bIn && z[i]=='\\' && i+1<n ){
      if( z[i+1]=='u' && i+5<n && memcmp(z+i+2, "0000", 4)==0 ) return i;
      i++;                        /* the escaped byte: never a quote */
    }
  }
  return -1;
}

/* GET zUrl, a storage URL the API handed out (sent without the key), into
** memory (at most WB_MEM_LIMIT bytes, not counted against
** PROFSUM_WANDB_MAX_BYTES) and parse it as JSON.  A string holding a NUL
** (\u0000) is an error: the parsed tree keeps object keys as C strings,
** so "a\u0000x" would read as "a" (and two such names as one).
** Returns the tree (caller frees) or 0 with the error recorded. */
JNode *wbGetJson(Wb *p, const char *zWhat, const char *zUrl){
  WbSink s;
  JNode *pRoot = 0;
  char *zJsonErr = 0;
  memset(&s, 0, sizeof(s));
  s.p = p; s.fd = -1; s.nLimit = WB_MEM_LIMIT;
  if( wbRequest(p, zWhat, zUrl, 0, &s)==SQLITE_OK ){
    sqlite3_int64 iNul = wbJsonNul(s.zMem ? s.zMem : "", s.nMem);
    if( iNul>=0 ){
      wbErr(p, "%s: a string holds a NUL character (\\u0000 at byte %lld)", zWhat, iNul);
      sqlite3_free(s.zMem);
      return 0;
    }
    pRoot = jParse(s.zMem ? s.zMem : "", (int)s.nMem, &zJsonErr);
    if( pRoot==0 && zJsonErr ) wbErr(p, "%s: invalid JSON (%s)", zWhat, zJsonErr);
    else if( pRoot==0 ) wbOom(p);
  }
  sqlite3_free(zJsonErr);
  sqlite3_free(s.zMem);
  return pRoot;
}

#endif /* !PROFSUM_OMIT_NETWORK */
