/*
** http.h — the HTTP transport of the W&B functions (http.c): the state of
** one W&B operation (configuration, credentials, the first error), the
** requests with their retries and bounds, GraphQL calls, and the security
** rules on where the API key may go (see http.c's header).
**
** Protocol: wandb-http.md (errors and retries §7).  Used by wandb_fetch.c,
** wandb_runmeta.c, wandb_publish.c and wandb_sql.c only.
**
** Conventions: every function taking a Wb records its first error in it
** (p->rc, p->zErr, see wbErr) and later ones are ignored; functions
** returning int return p->rc.  Messages may hold the API key until
** wbScrub() masks it: everything that leaves the W&B files is scrubbed.
**
** Built with PROFSUM_OMIT_NETWORK this header is empty.
*/
#ifndef PROFSUM_HTTP_H
#define PROFSUM_HTTP_H
#ifndef PROFSUM_OMIT_NETWORK

#include "profsum_int.h"
#include "curl_lazy.h"
#include "hash.h"
#include "jsontree.h"

#define WB_MEM_LIMIT     ((sqlite3_int64)256<<20)  /* JSON response cap */
#define WB_ERRBODY       4096              /* kept bytes of error bodies */
#define WB_ERRBODY_READ  (1024*1024)       /* read of one: then the transfer stops */

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
  long nConnect, nTotal;  /* timeouts, seconds: connect, and one attempt of
                          ** a request with all its redirect hops */
  double rRetryBudget;    /* max seconds spent waiting between retries */
  sqlite3_int64 nMaxBytes;/* download size limit for the whole call */
  sqlite3_int64 nUsed;    /* bytes downloaded so far */
  CURL *curl;             /* reused handle (keeps connections) */
  int rc;                 /* first error code, SQLITE_OK if none */
  char *zErr;             /* first error message (sqlite3_malloc'd) */
  long iHttpFail;         /* HTTP status the last wbRequest failed with,
                          ** 0 if it succeeded or failed otherwise */
} Wb;

#define WB_FAIL_LIMIT 1   /* body larger than the size limit */
#define WB_FAIL_WRITE 2   /* write to the output file failed */
#define WB_FAIL_OOM   3   /* out of memory growing the memory body */

/* Where a response body goes: a file descriptor (downloads, MD5 computed
** on the fly) or a growing memory buffer (JSON).  Bodies of non-2xx
** responses go to zErrBody (truncated).  The caller zeroes it, sets p, fd
** (-1 for memory), nLimit and the request's fields below, and frees zMem
** after the request. */
typedef struct WbSink {
  Wb *p;
  int fd;                       /* >=0: write the body here */
  char *zMem;                   /* fd<0: the body, NUL-terminated */
  sqlite3_int64 nMem, nMemAlloc;
  char zErrBody[WB_ERRBODY+1];  /* body of a non-2xx response */
  int nErrBody;
  sqlite3_int64 nErrRead;       /* bytes of it received */
  int bErrCut;                  /* the transfer stopped past WB_ERRBODY_READ */
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

/* ---------------------------------------------------------------------
** Errors.
*/

/* Record the first error of p (later ones are ignored).  Out of memory
** while formatting leaves rc==SQLITE_NOMEM without a message. */
void wbErr(Wb *p, const char *zFmt, ...);

/* Record an out-of-memory error (unless an error is already recorded). */
void wbOom(Wb *p);

/* Forget the recorded error (used by best-effort steps). */
void wbClearErr(Wb *p);

/* Remove the API key (and its base64 form, and any piece of either of 6
** bytes or more) from the error message of p, in place. */
void wbScrub(Wb *p);

/* sqlite3_mprintf("%s") that records OOM in p.  z==0 gives 0. */
char *wbDup(Wb *p, const char *z);

/* ---------------------------------------------------------------------
** JSON lookups in responses.
*/

/* Follow object keys from p (NULL-terminated list); 0 when missing. */
JNode *wbPath(JNode *p, ...);

/* The string value of p, or 0 when p is not a (NUL-free) string. */
const char *wbStr(const JNode *p);

/* ---------------------------------------------------------------------
** URLs.
*/

/* Parse zUrl; return "scheme://host:port" (lower case, default port
** explicit) sqlite3_malloc'd, or 0 when it is not an http(s) URL.  When
** pzNetloc/pzHost are given they receive host[:port] as written and the
** host (sqlite3_malloc'd). */
char *wbOriginOf(const char *zUrl, char **pzNetloc, char **pzHost);

/* z percent-encoded as one URL path component: every byte but A-Z a-z
** 0-9 - . _ ~ as %XX, '/' included (urllib.parse.quote(z, safe='')).
** sqlite3_malloc'd, 0 when out of memory. */
char *wbQuote(const char *z);

/* z[0..n) for an error message: at most nMax bytes (then "..." and the
** length), control bytes, DEL and backslash as \xNN.  sqlite3_malloc'd,
** 0 when out of memory. */
char *wbShow(const char *z, size_t n, size_t nMax);

/* Refuse z, a name from a server (zField names it in the error), as a
** URL path component on the API host: absent, empty, "." / "..", or with
** '/', '\\', '?', '#', '%' or a control byte.  Returns p->rc. */
int wbCheckComponent(Wb *p, const char *zField, const char *z);

/* ---------------------------------------------------------------------
** One operation: set up, requests, release.
*/

/* Set up p from the environment (WANDB_BASE_URL, WANDB_API_KEY / netrc,
** PROFSUM_WANDB_TIMEOUT, PROFSUM_WANDB_MAX_RETRY_SECONDS,
** PROFSUM_WANDB_MAX_BYTES) and create the curl handle.  Returns p->rc;
** the caller calls wbEnd() in every case. */
int wbBegin(Wb *p);

/* Release everything held by p (safe on a partly set up p). */
void wbEnd(Wb *p);

/* Perform a request (GET zUrl, POST zPost as JSON when zPost, or PUT
** s->zPutData) into s with retries and backoff.  Succeeds (returns
** SQLITE_OK) only on a 2xx response; otherwise records "<zWhat>: <why>"
** and returns p->rc (p->iHttpFail: the HTTP status it failed with, if
** any).  The key goes along only when s->bApi (see http.c). */
int wbRequest(Wb *p, const char *zWhat, const char *zUrl,
              const char *zPost, WbSink *s);

/* Run GraphQL operation zOp (query text zQuery, variables pVars, which is
** consumed) against {base}/graphql.  On success returns the parsed
** response (caller jFree()s it) and sets *ppData to its "data" object;
** GraphQL "errors" and malformed responses are errors ("graphql zOp: ..."). */
JNode *wbGraphql(Wb *p, const char *zOp, const char *zQuery,
                 JNode *pVars, JNode **ppData);

/* GET zUrl, a storage URL the API handed out (sent without the key), into
** memory (at most WB_MEM_LIMIT bytes, not counted against
** PROFSUM_WANDB_MAX_BYTES) and parse it as JSON; a string holding a NUL
** (\u0000) is an error.
** Returns the tree (caller frees) or 0 with the error recorded. */
JNode *wbGetJson(Wb *p, const char *zWhat, const char *zUrl);

#endif /* !PROFSUM_OMIT_NETWORK */
#endif /* PROFSUM_HTTP_H */
