/*
** fuzz_reader.c — libFuzzer target for the trace reader (gz.c,
** trace_json.c, track.c).
**
** Built by `make build/fuzz_reader` (clang -fsanitize=fuzzer,address,
** undefined, -DSQLITE_CORE, linked with the extension sources and the
** system libsqlite3); `make fuzz` runs it over tests/fuzz_corpus/.
**
** For every input (plain JSON or gzip bytes) it:
**
**  1. scans the bytes from memory (profsumSrcOpenMem + profsumScanOpen,
**     PROFSUM_SCAN_ARGKEYS, a diagnostics callback that reads every field)
**     to the end, and for every event:
**       - checks idx (increasing), iOffset (the '{' of the entry, for plain
**         input), the span fields;
**       - renders every span with profsumSpanJson and checks the result
**         with SQLite's json_valid() (abort() on 0);
**       - decodes every string span with profsumSpanText and compares it
**         with SQLite's json_extract() when both must agree (no \u0000,
**         no surrogate escapes, no raw control characters); other spans
**         go through profsumSpanText too, for memory safety only;
**  2. scans again without ARGKEYS and without a callback: same events,
**     same end (the args fast path and the key-collecting path must
**     accept the same JSON);
**  3. writes the bytes to a memfd and runs the first pass
**     (profsumTrackAnalyze) twice, without and with NEED_DIAG: same
**     outcome and the same entry/row counts as the memory scan, the same
**     scanner diagnostics, identical records, and consistent records
**     (depth/parent/excl invariants);
**  4. checks profsumParseMicros / profsumParseInt on short number-like
**     tokens of the input (and on the whole input when short) against a
**     reference computed with strtold / strtoll.
**
** Any broken invariant calls abort() after printing what was wrong.
*/
#include "profsum_int.h"
#include "profsum_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* UBSan: make every report fatal (the Makefile target does not set
** -fno-sanitize-recover, and libFuzzer ignores non-fatal reports). */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void){
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *gDb;              /* in-memory db for json_valid() */
static sqlite3_stmt *gValid;      /* SELECT json_valid(?1) */
static sqlite3_stmt *gExtract;    /* SELECT json_extract(?1, '$') */
static int gFd = -1;              /* memfd (or temp file) for the first pass */
static char gPath[64];            /* its path */

#define FUNC "trace_events"

static void fail(const char *zFmt, ...) __attribute__((noreturn, format(printf,1,2)));
static void fail(const char *zFmt, ...){
  va_list ap;
  fprintf(stderr, "fuzz_reader: invariant broken: ");
  va_start(ap, zFmt);
  vfprintf(stderr, zFmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv){
  (void)argc; (void)argv;
  if( sqlite3_open(":memory:", &gDb)!=SQLITE_OK ) fail("sqlite3_open");
  if( sqlite3_prepare_v2(gDb, "SELECT json_valid(?1)", -1, &gValid, 0)!=SQLITE_OK ){
    fail("prepare json_valid: %s", sqlite3_errmsg(gDb));
  }
  if( sqlite3_prepare_v2(gDb, "SELECT json_extract(?1, '$')", -1, &gExtract, 0)!=SQLITE_OK ){
    fail("prepare json_extract: %s", sqlite3_errmsg(gDb));
  }
  gFd = memfd_create("fuzz_reader", MFD_CLOEXEC);
  if( gFd>=0 ){
    snprintf(gPath, sizeof(gPath), "/proc/self/fd/%d", gFd);
  }else{
    snprintf(gPath, sizeof(gPath), "/tmp/fuzz_reader.%d.json", (int)getpid());
    gFd = open(gPath, O_RDWR|O_CREAT|O_TRUNC|O_CLOEXEC, 0600);
    if( gFd<0 ) fail("cannot create %s: %s", gPath, strerror(errno));
    unlink(gPath);     /* gone from /tmp; reopen through /proc/self/fd */
    snprintf(gPath, sizeof(gPath), "/proc/self/fd/%d", gFd);
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* Diagnostics                                                         */
/* ------------------------------------------------------------------ */

typedef struct DiagCtx {
  int64_t n;            /* diagnostics received */
  uint64_t h;           /* hash of (idx, offset, kind, detail) in order */
  int64_t nPlain;       /* input size when the input is not gzip, else -1 */
} DiagCtx;

static uint64_t hashBytes(uint64_t h, const void *p, size_t n){
  const unsigned char *a = (const unsigned char*)p;
  size_t i;
  for(i=0; i<n; i++){ h ^= a[i]; h *= 1099511628211ULL; }
  return h;
}

static void diagCb(void *pCtx, int64_t idx, int64_t iOffset,
                   const char *zKind, const char *zDetail){
  DiagCtx *d = (DiagCtx*)pCtx;
  size_t nKind, nDetail;
  if( zKind==0 || zDetail==0 ) fail("diagnostic with a NULL kind or detail");
  nKind = strlen(zKind);
  nDetail = strlen(zDetail);
  if( nKind==0 ) fail("diagnostic with an empty kind");
  if( idx<-1 ) fail("diagnostic idx %lld", (long long)idx);
  if( iOffset<-1 ) fail("diagnostic offset %lld", (long long)iOffset);
  if( d->nPlain>=0 && iOffset>d->nPlain ){
    fail("diagnostic %s at offset %lld beyond the input (%lld bytes)",
         zKind, (long long)iOffset, (long long)d->nPlain);
  }
  d->n++;
  d->h = hashBytes(d->h, &idx, sizeof(idx));
  d->h = hashBytes(d->h, &iOffset, sizeof(iOffset));
  d->h = hashBytes(d->h, zKind, nKind+1);
  d->h = hashBytes(d->h, zDetail, nDetail+1);
}

/* Track diagnostics (second first pass): every field read, no hash. */
static void diagTouch(void *pCtx, int64_t idx, int64_t iOffset,
                      const char *zKind, const char *zDetail){
  DiagCtx *d = (DiagCtx*)pCtx;
  if( zKind==0 || zDetail==0 || zKind[0]==0 ) fail("bad track diagnostic");
  if( idx<-1 || iOffset<-1 ) fail("track diagnostic idx/offset %lld/%lld",
                                  (long long)idx, (long long)iOffset);
  d->n++;
  d->h = hashBytes(d->h, zDetail, strlen(zDetail));
}

/* ------------------------------------------------------------------ */
/* JSON checks through SQLite                                          */
/* ------------------------------------------------------------------ */

/* Maximum container nesting of JSON text z[0..n) (outside strings). */
static int64_t jsonDepth(const char *z, int64_t n){
  int64_t i, d = 0, dMax = 0;
  int inStr = 0;
  for(i=0; i<n; i++){
    char c = z[i];
    if( inStr ){
      if( c=='\\' ) i++;
      else if( c=='"' ) inStr = 0;
    }else if( c=='"' ){
      inStr = 1;
    }else if( c=='[' || c=='{' ){
      if( ++d>dMax ) dMax = d;
    }else if( c==']' || c=='}' ){
      d--;
    }
  }
  return dMax;
}

static void checkJsonValid(const char *zWhat, const char *z, int64_t n){
  int rc, v;
  if( n>=0x7fffffff ) return;
  if( jsonDepth(z, n)>=1990 ) return;        /* SQLite's JSON depth limit: 2000 */
  sqlite3_bind_text(gValid, 1, z, (int)n, SQLITE_STATIC);
  rc = sqlite3_step(gValid);
  if( rc!=SQLITE_ROW ) fail("json_valid step: %s", sqlite3_errmsg(gDb));
  v = sqlite3_column_int(gValid, 0);
  sqlite3_reset(gValid);
  sqlite3_clear_bindings(gValid);
  if( v!=1 ){
    fprintf(stderr, "%s: profsumSpanJson output is not valid JSON (%lld bytes): %.*s\n",
            zWhat, (long long)n, n>400 ? 400 : (int)n, z);
    fail("json_valid returned %d", v);
  }
}

static unsigned hex4(const char *z){
  unsigned u = 0;
  int i;
  for(i=0; i<4; i++){
    char c = z[i];
    u <<= 4;
    if( c>='0' && c<='9' ) u |= (unsigned)(c-'0');
    else if( c>='a' && c<='f' ) u |= (unsigned)(c-'a'+10);
    else if( c>='A' && c<='F' ) u |= (unsigned)(c-'A'+10);
  }
  return u;
}

/* Compare profsumSpanText's decoding of a string span with SQLite's
** json_extract, for strings where both are specified to agree. */
static void checkTextAgainstSqlite(const char *zWhat, const ProfsumSpan *s,
                                   const char *zDec, int64_t nDec){
  int64_t i;
  char *zQ;
  const unsigned char *zRef;
  int nRef, rc;
  if( (s->flags & (PROFSUM_SF_CTRL|PROFSUM_SF_BADUTF8)) || !(s->flags & PROFSUM_SF_ESCAPE) ) return;
  if( s->n>4096 ) return;
  for(i=0; i<s->n; i++){
    if( s->z[i]=='\\' ){
      if( s->z[i+1]=='u' ){
        unsigned u = hex4(s->z+i+2);
        if( u==0 || (u>=0xD800 && u<=0xDFFF) ) return;   /* SQLite differs */
        i += 5;
      }else{
        i++;
      }
    }else if( s->z[i]==0 ){
      return;
    }
  }
  zQ = sqlite3_mprintf("\"%.*s\"", (int)s->n, s->z);
  if( zQ==0 ) fail("oom");
  sqlite3_bind_text(gExtract, 1, zQ, (int)s->n+2, SQLITE_STATIC);
  rc = sqlite3_step(gExtract);
  if( rc!=SQLITE_ROW ) fail("json_extract step: %s", sqlite3_errmsg(gDb));
  if( sqlite3_column_type(gExtract, 0)!=SQLITE_NULL ){
    zRef = sqlite3_column_text(gExtract, 0);
    nRef = sqlite3_column_bytes(gExtract, 0);
    if( nRef!=nDec || memcmp(zRef, zDec, (size_t)nDec)!=0 ){
      fprintf(stderr, "%s: span %.*s\n  profsumSpanText: %.*s\n  json_extract:    %.*s\n",
              zWhat, (int)s->n, s->z, (int)nDec, zDec, nRef, zRef);
      fail("profsumSpanText disagrees with json_extract");
    }
  }
  sqlite3_reset(gExtract);
  sqlite3_clear_bindings(gExtract);
  sqlite3_free(zQ);
}

/* Is z[0..n) valid UTF-8 (RFC 3629: no overlongs, surrogates or code
** points beyond U+10FFFF)?  Written independently of the reader's check. */
static int validUtf8(const unsigned char *z, int64_t n){
  int64_t i = 0;
  while( i<n ){
    unsigned c = z[i], cp, k, need;
    if( c<0x80 ){ i++; continue; }
    if( (c & 0xE0)==0xC0 ){ need = 1; cp = c & 0x1F; }
    else if( (c & 0xF0)==0xE0 ){ need = 2; cp = c & 0x0F; }
    else if( (c & 0xF8)==0xF0 ){ need = 3; cp = c & 0x07; }
    else return 0;
    for(k=1; k<=need; k++){
      if( i+(int64_t)k>=n || (z[i+k] & 0xC0)!=0x80 ) return 0;
      cp = (cp<<6) | (z[i+k] & 0x3F);
    }
    if( (need==1 && cp<0x80) || (need==2 && cp<0x800) || (need==3 && cp<0x10000) ) return 0;
    if( cp>0x10FFFF || (cp>=0xD800 && cp<=0xDFFF) ) return 0;
    i += need+1;
  }
  return 1;
}

/* Exercise one span: text decoding (strings) and JSON rendering. */
static void checkSpan(const char *zWhat, const ProfsumSpan *s,
                      char **ppBuf, int64_t *pnBuf){
  const char *z;
  int64_t n;
  if( s->type==PROFSUM_JT_NONE ) return;
  if( s->type>PROFSUM_JT_NONFIN ) fail("%s: span type %d", zWhat, s->type);
  if( s->z==0 || s->n<0 ) fail("%s: span z=%p n=%lld", zWhat, (void*)s->z, (long long)s->n);
  if( s->type==PROFSUM_JT_STRING ){
    if( profsumSpanText(s, ppBuf, pnBuf, &z, &n) ) fail("%s: profsumSpanText error", zWhat);
    if( n<0 || (n>0 && z==0) ) fail("%s: profsumSpanText n=%lld", zWhat, (long long)n);
    if( !(s->flags & (PROFSUM_SF_ESCAPE|PROFSUM_SF_BADUTF8)) && (z!=s->z || n!=s->n) ){
      fail("%s: profsumSpanText changed a string without escapes or bad UTF-8", zWhat);
    }
    if( n > ((s->flags & PROFSUM_SF_BADUTF8) ? 3*s->n : s->n) ){
      fail("%s: decoded string longer than its JSON text allows", zWhat);
    }
    if( !validUtf8((const unsigned char*)z, n) ){
      fail("%s: decoded string is not valid UTF-8", zWhat);
    }
    {
      /* Touch every byte (ASan checks the reads). */
      volatile unsigned char acc = 0;
      int64_t i;
      for(i=0; i<n; i++) acc ^= (unsigned char)z[i];
      (void)acc;
    }
    checkTextAgainstSqlite(zWhat, s, z, n);
  }else{
    /* Not a string: outside profsumSpanText's contract, so only memory
    ** safety is checked (ASan), not the result. */
    if( profsumSpanText(s, ppBuf, pnBuf, &z, &n) ) fail("%s: profsumSpanText error", zWhat);
    if( n<0 || n>((s->flags & PROFSUM_SF_BADUTF8) ? 3*s->n : s->n) ){
      fail("%s: profsumSpanText n=%lld of %lld", zWhat, (long long)n, (long long)s->n);
    }
  }
  if( profsumSpanJson(s, ppBuf, pnBuf, &z, &n) ) fail("%s: profsumSpanJson error", zWhat);
  if( z==0 || n<=0 ) fail("%s: profsumSpanJson n=%lld", zWhat, (long long)n);
  if( !validUtf8((const unsigned char*)z, n) ) fail("%s: profsumSpanJson gave invalid UTF-8", zWhat);
  checkJsonValid(zWhat, z, n);
}

/* ------------------------------------------------------------------ */
/* Scanning                                                            */
/* ------------------------------------------------------------------ */

/* What one scan saw, for comparing two scans. */
typedef struct ScanSummary {
  int rcOpen;           /* profsumScanOpen / profsumSrcOpenMem result */
  int rcEnd;            /* SQLITE_DONE or the error of profsumScanNext */
  char *zErr;           /* error message (sqlite3_malloc'd) or NULL */
  int64_t nRows;
  int64_t nEntries;     /* profsumScanEntries at SQLITE_DONE */
  uint64_t hEvents;     /* hash of per-event facts */
} ScanSummary;

static uint64_t hashSpanText(uint64_t h, const ProfsumSpan *s){
  h = hashBytes(h, &s->type, 1);
  h = hashBytes(h, &s->n, sizeof(s->n));
  if( s->type!=PROFSUM_JT_NONE && s->z ) h = hashBytes(h, s->z, (size_t)s->n);
  return h;
}

static uint64_t hashId(uint64_t h, const ProfsumId *id){
  h = hashBytes(h, &id->kind, sizeof(id->kind));
  if( id->kind==PROFSUM_ID_INT ) h = hashBytes(h, &id->iVal, sizeof(id->iVal));
  if( id->kind==PROFSUM_ID_TEXT ) h = hashSpanText(h, &id->s);
  return h;
}

static void summaryClear(ScanSummary *p){
  sqlite3_free(p->zErr);
  memset(p, 0, sizeof(*p));
}

/* Scan data[0..size) from memory.  full: ARGKEYS + diagnostics + every
** per-event check; otherwise a bare scan (flags 0, no callback). */
static void scanMem(const uint8_t *data, size_t size, int full, DiagCtx *pDiag,
                    ScanSummary *pSum){
  ProfsumSrc *pSrc = 0;
  ProfsumScan *pScan = 0;
  ProfsumEvent *ev;
  char *zErr = 0;
  char *aBuf = 0;
  int64_t nBuf = 0;
  int64_t lastIdx = -1;
  int rc, isGzip;
  memset(pSum, 0, sizeof(*pSum));
  pSum->hEvents = 1469598103934665603ULL;
  rc = profsumSrcOpenMem(data, size, gPath, &pSrc, &zErr);
  pSum->rcOpen = rc;
  if( rc ){
    if( pSrc ) fail("profsumSrcOpenMem failed but returned a source");
    pSum->zErr = zErr;
    return;
  }
  isGzip = profsumSrcIsGzip(pSrc);
  if( profsumSrcFileSize(pSrc)!=(int64_t)size ) fail("profsumSrcFileSize");
  if( pDiag ) pDiag->nPlain = isGzip ? -1 : (int64_t)size;
  rc = profsumScanOpen(pSrc, FUNC, full ? PROFSUM_SCAN_ARGKEYS : 0,
                       full ? diagCb : 0, pDiag, &pScan, &zErr);
  pSum->rcOpen = rc;
  if( rc ){
    pSum->zErr = zErr;
    profsumScanClose(pScan);
    return;
  }
  for(;;){
    rc = profsumScanNext(pScan, &ev, &zErr);
    if( rc!=SQLITE_ROW ) break;
    if( ev==0 ) fail("SQLITE_ROW without an event");
    if( ev->idx<=lastIdx ) fail("event idx %lld after %lld", (long long)ev->idx, (long long)lastIdx);
    lastIdx = ev->idx;
    if( ev->iOffset<0 ) fail("event offset %lld", (long long)ev->iOffset);
    if( !isGzip ){
      if( ev->iOffset>=(int64_t)size || data[ev->iOffset]!='{' ){
        fail("event %lld: offset %lld is not a '{'", (long long)ev->idx, (long long)ev->iOffset);
      }
    }
    if( ev->ph.type!=PROFSUM_JT_STRING ) fail("event ph is not a string");
    if( ev->name.type!=PROFSUM_JT_NONE && ev->name.type!=PROFSUM_JT_STRING ) fail("name type");
    if( ev->cat.type!=PROFSUM_JT_NONE && ev->cat.type!=PROFSUM_JT_STRING ) fail("cat type");
    pSum->nRows++;
    pSum->hEvents = hashBytes(pSum->hEvents, &ev->idx, sizeof(ev->idx));
    pSum->hEvents = hashBytes(pSum->hEvents, &ev->iOffset, sizeof(ev->iOffset));
    pSum->hEvents = hashSpanText(pSum->hEvents, &ev->ph);
    pSum->hEvents = hashSpanText(pSum->hEvents, &ev->name);
    pSum->hEvents = hashSpanText(pSum->hEvents, &ev->cat);
    pSum->hEvents = hashSpanText(pSum->hEvents, &ev->args);
    pSum->hEvents = hashSpanText(pSum->hEvents, &ev->entries);
    pSum->hEvents = hashId(pSum->hEvents, &ev->pid);
    pSum->hEvents = hashId(pSum->hEvents, &ev->tid);
    pSum->hEvents = hashBytes(pSum->hEvents, &ev->hasTs, sizeof(int));
    pSum->hEvents = hashBytes(pSum->hEvents, &ev->hasDur, sizeof(int));
    if( ev->hasTs ){ profsum_ps v = ev->ts; pSum->hEvents = hashBytes(pSum->hEvents, &v, sizeof(v)); }
    if( ev->hasDur ){ profsum_ps v = ev->dur; pSum->hEvents = hashBytes(pSum->hEvents, &v, sizeof(v)); }
    if( full ){
      int k;
      char zWhat[32];
      checkSpan("ph", &ev->ph, &aBuf, &nBuf);
      checkSpan("name", &ev->name, &aBuf, &nBuf);
      checkSpan("cat", &ev->cat, &aBuf, &nBuf);
      checkSpan("args", &ev->args, &aBuf, &nBuf);
      checkSpan("entries", &ev->entries, &aBuf, &nBuf);
      if( ev->pid.kind==PROFSUM_ID_TEXT ) checkSpan("pid", &ev->pid.s, &aBuf, &nBuf);
      if( ev->tid.kind==PROFSUM_ID_TEXT ) checkSpan("tid", &ev->tid.s, &aBuf, &nBuf);
      if( ev->pid.kind<PROFSUM_ID_ABSENT || ev->pid.kind>PROFSUM_ID_NULL ) fail("pid kind");
      if( ev->tid.kind<PROFSUM_ID_ABSENT || ev->tid.kind>PROFSUM_ID_NULL ) fail("tid kind");
      for(k=0; k<PROFSUM_AK_COUNT; k++){
        sqlite3_snprintf(sizeof(zWhat), zWhat, "aArg[%d]", k);
        if( ev->aArg[k].type!=PROFSUM_JT_NONE && ev->args.type!=PROFSUM_JT_OBJECT ){
          fail("aArg[%d] set but args is not an object", k);
        }
        checkSpan(zWhat, &ev->aArg[k], &aBuf, &nBuf);
      }
    }
  }
  pSum->rcEnd = rc;
  if( rc==SQLITE_DONE ){
    if( zErr ) fail("SQLITE_DONE with an error message");
    pSum->nEntries = profsumScanEntries(pScan);
    if( pSum->nEntries<pSum->nRows ) fail("fewer entries than rows");
    if( profsumScanBytes(pScan)<0 ) fail("profsumScanBytes");
    if( !isGzip && profsumScanBytes(pScan)>(int64_t)size ) fail("profsumScanBytes beyond input");
    (void)profsumScanDisplayTimeUnit(pScan);
  }else{
    if( zErr==0 ) fail("scan error %d without a message", rc);
    if( strncmp(zErr, FUNC ": ", sizeof(FUNC ": ")-1)!=0 ){
      fail("error message without the function name: %s", zErr);
    }
    pSum->zErr = zErr;
  }
  if( profsumSrcRawPos(profsumScanSrc(pScan))>(int64_t)size ) fail("profsumSrcRawPos");
  profsumScanClose(pScan);
  sqlite3_free(aBuf);
}

/* ------------------------------------------------------------------ */
/* First pass                                                          */
/* ------------------------------------------------------------------ */

/* Find the record of entry idx (records are in file order). */
static const ProfsumTrackRec *findRec(const ProfsumTrackInfo *p, int64_t idx){
  int64_t lo = 0, hi = p->nRec-1;
  while( lo<=hi ){
    int64_t mid = lo + (hi-lo)/2;
    if( profsumTrackRec(p, mid)->idx==idx ) return profsumTrackRec(p, mid);
    if( profsumTrackRec(p, mid)->idx<idx ) lo = mid+1; else hi = mid-1;
  }
  return 0;
}

static void checkTrackInfo(const ProfsumTrackInfo *p){
  int64_t i;
  if( p->nRec<0 || (p->nRec>0 && p->apRec==0) ) fail("nRec %lld", (long long)p->nRec);
  if( p->nRows>p->nEntries || p->nX>p->nRows || p->nAccepted>p->nX || p->nAccepted<0 ){
    fail("counts: entries %lld rows %lld X %lld accepted %lld", (long long)p->nEntries,
         (long long)p->nRows, (long long)p->nX, (long long)p->nAccepted);
  }
  if( p->nRec>p->nRows ) fail("more records than rows");
  for(i=0; i<p->nRec; i++){
    const ProfsumTrackRec *r = profsumTrackRec(p, i);
    if( i>0 && r->idx<=profsumTrackRec(p, i-1)->idx ) fail("records not in file order");
    if( r->idx<0 || r->idx>=p->nEntries ) fail("record idx %lld", (long long)r->idx);
    if( r->ph!='X' && r->ph!='B' && r->ph!='E' ) fail("record ph %d", r->ph);
    if( r->depth<-1 ) fail("record depth %d", r->depth);
    if( r->ph=='E' && r->depth>=0 ) fail("E record on a track");
    if( r->dur<-1 ) fail("record dur %lld", (long long)r->dur);
    if( r->depth>=0 ){
      /* matched B slices of any length are on tracks (docs/trace_events.md);
      ** X events only with dur > 0 */
      if( r->dur<0 || (r->dur==0 && r->ph!='B') ){
        fail("record (ph %c) on a track with dur %lld", r->ph, (long long)r->dur);
      }
      if( r->excl<0 || r->excl>r->dur ){
        fail("record %lld: excl %lld, dur %lld", (long long)r->idx, (long long)r->excl,
             (long long)r->dur);
      }
      /* The ns-domain sweep (excl column): within the floored duration. */
      if( r->exclNs<0 || r->exclNs>r->dur/1000 ){
        fail("record %lld: exclNs %lld, dur %lld ps", (long long)r->idx,
             (long long)r->exclNs, (long long)r->dur);
      }
    }else{
      if( r->excl!=-1 ) fail("record off track with excl %lld", (long long)r->excl);
      if( r->ph=='E' ){
        /* an E record's ns slot holds the entry of the B it closes (a
        ** union, profsum_reader.h): -1, or a B record of its track */
        if( r->beginIdx!=-1 ){
          const ProfsumTrackRec *b = findRec(p, r->beginIdx);
          if( b==0 || b->ph!='B' || b->trk!=r->trk ){
            fail("E record %lld closes entry %lld, not a B of its track",
                 (long long)r->idx, (long long)r->beginIdx);
          }
        }
      }else if( r->exclNs!=-1 ){
        fail("record off track with exclNs %lld", (long long)r->exclNs);
      }
    }
    if( r->depth>0 ){
      const ProfsumTrackRec *q = findRec(p, r->parent);
      if( q==0 ) fail("record %lld: parent %lld has no record", (long long)r->idx,
                      (long long)r->parent);
      if( q->depth!=r->depth-1 ) fail("record %lld: depth %d, parent depth %d",
                                      (long long)r->idx, r->depth, q->depth);
      if( q->trk!=r->trk ) fail("record %lld: parent on another track", (long long)r->idx);
      if( q->ts>r->ts ) fail("record %lld: parent starts later", (long long)r->idx);
    }else if( r->depth==0 && r->parent!=-1 ){
      fail("root record %lld with parent %lld", (long long)r->idx, (long long)r->parent);
    }
  }
}

static int sameRecs(const ProfsumTrackInfo *a, const ProfsumTrackInfo *b){
  int64_t i;
  if( a->nRec!=b->nRec ) return 0;
  for(i=0; i<a->nRec; i++){
    const ProfsumTrackRec *x = profsumTrackRec(a, i), *y = profsumTrackRec(b, i);
    if( x->idx!=y->idx || x->iOffset!=y->iOffset || x->ts!=y->ts || x->dur!=y->dur
     || x->excl!=y->excl || x->exclNs!=y->exclNs || x->parent!=y->parent || x->depth!=y->depth
     || x->trk!=y->trk || x->nameHash!=y->nameHash || x->ph!=y->ph ) return 0;
  }
  return a->nEntries==b->nEntries && a->nRows==b->nRows && a->nX==b->nX
      && a->nAccepted==b->nAccepted;
}

static void writeFile(const uint8_t *data, size_t size){
  size_t off = 0;
  if( ftruncate(gFd, 0)!=0 ) fail("ftruncate: %s", strerror(errno));
  while( off<size ){
    ssize_t n = pwrite(gFd, data+off, size-off, (off_t)off);
    if( n<0 ){
      if( errno==EINTR ) continue;
      fail("pwrite: %s", strerror(errno));
    }
    off += (size_t)n;
  }
}

static void firstPass(const uint8_t *data, size_t size, const ScanSummary *pMem,
                      const DiagCtx *pMemDiag){
  ProfsumTrackInfo *pA = 0, *pB = 0;
  char *zErrA = 0, *zErrB = 0;
  DiagCtx dA, dB;
  int rcA, rcB;
  unsigned needs = PROFSUM_NEED_DUR|PROFSUM_NEED_TRACK|PROFSUM_NEED_NAMES|PROFSUM_NEED_EXCLNS;
  writeFile(data, size);
  memset(&dA, 0, sizeof(dA));
  dA.h = 1469598103934665603ULL;
  dA.nPlain = pMemDiag->nPlain;
  if( profsumSniffFormat(gPath)==PROFSUM_FMT_XPLANE ){
    /* A first byte that starts an XSpace (0x0A, 0x12, 0x1A, 0x22: the keys
    ** of its fields): the file is read as one (docs/trace_events.md), so
    ** the JSON scan of the same bytes is no reference for it.  The XSpace
    ** reader has its own target (fuzz_xplane); here it must only run
    ** clean and say why when it fails. */
    rcA = profsumTrackAnalyze(FUNC, gPath, needs, diagCb, &dA, &pA, &zErrA);
    if( rcA!=SQLITE_OK && (zErrA==0 || strncmp(zErrA, FUNC ": ", sizeof(FUNC ": ")-1)!=0) ){
      fail("XSpace first pass error without the function name: %s", zErrA ? zErrA : "-");
    }
    profsumTrackFree(pA);
    sqlite3_free(zErrA);
    return;
  }
  rcA = profsumTrackAnalyze(FUNC, gPath, needs, diagCb, &dA, &pA, &zErrA);

  /* Same outcome as the memory scan (same bytes, same name). */
  if( pMem->rcOpen==SQLITE_OK && pMem->rcEnd==SQLITE_DONE ){
    if( rcA!=SQLITE_OK ) fail("first pass failed (%d: %s) where the scan succeeded",
                              rcA, zErrA ? zErrA : "");
    if( pA==0 ) fail("first pass: no info");
    if( pA->nEntries!=pMem->nEntries || pA->nRows!=pMem->nRows ){
      fail("first pass: %lld entries / %lld rows, the scan: %lld / %lld",
           (long long)pA->nEntries, (long long)pA->nRows,
           (long long)pMem->nEntries, (long long)pMem->nRows);
    }
    if( dA.n!=pMemDiag->n || dA.h!=pMemDiag->h ){
      fail("first pass scanner diagnostics differ from the memory scan (%lld vs %lld)",
           (long long)dA.n, (long long)pMemDiag->n);
    }
    checkTrackInfo(pA);
  }else{
    if( rcA==SQLITE_OK ) fail("first pass succeeded where the scan failed (%s)",
                              pMem->zErr ? pMem->zErr : "?");
    if( zErrA==0 ) fail("first pass error %d without a message", rcA);
    if( strncmp(zErrA, FUNC ": ", sizeof(FUNC ": ")-1)!=0 ){
      fail("first pass error without the function name: %s", zErrA);
    }
    if( pMem->zErr ){
      const char *zMem = pMem->zErr;
      const char *zA = zErrA + sizeof(FUNC ": ")-1;
      if( strncmp(zMem, FUNC ": ", sizeof(FUNC ": ")-1)==0 ) zMem += sizeof(FUNC ": ")-1;
      if( strcmp(zMem, zA)!=0 ){
        fail("error messages differ:\n  memory: %s\n  file:   %s", pMem->zErr, zErrA);
      }
    }
    if( pA ) fail("first pass failed but returned info");
  }

  /* Again with track diagnostics: the same records. */
  memset(&dB, 0, sizeof(dB));
  dB.nPlain = pMemDiag->nPlain;
  rcB = profsumTrackAnalyze(FUNC, gPath, needs|PROFSUM_NEED_DIAG, diagTouch, &dB, &pB, &zErrB);
  if( rcB!=rcA ) fail("first pass with NEED_DIAG: rc %d, without: %d", rcB, rcA);
  if( rcB==SQLITE_OK ){
    int64_t pid;
    if( !sameRecs(pA, pB) ) fail("first pass records differ with NEED_DIAG");
    checkTrackInfo(pB);
    /* Name lookups on a few integer ids (process and thread). */
    for(pid=-1; pid<=3; pid++){
      ProfsumId a, b;
      int64_t n = 0;
      const char *z;
      memset(&a, 0, sizeof(a));
      memset(&b, 0, sizeof(b));
      a.kind = PROFSUM_ID_INT; a.iVal = pid;
      b.kind = PROFSUM_ID_INT; b.iVal = pid+1;
      z = profsumNameLookup(pB->pNames, &a, 0, &n);
      if( z ){ volatile char c = n>0 ? z[n-1] : 0; (void)c; }
      z = profsumNameLookup(pB->pNames, &a, &b, &n);
      if( z ){ volatile char c = n>0 ? z[n-1] : 0; (void)c; }
    }
  }else if( zErrA && zErrB && strcmp(zErrA, zErrB)!=0 ){
    fail("first pass errors differ with NEED_DIAG:\n  %s\n  %s", zErrA, zErrB);
  }
  profsumTrackFree(pA);
  profsumTrackFree(pB);
  sqlite3_free(zErrA);
  sqlite3_free(zErrB);
}

/* ------------------------------------------------------------------ */
/* Number parsing against a reference                                  */
/* ------------------------------------------------------------------ */

static int isDigit(char c){ return c>='0' && c<='9'; }

/* The grammar profsumParseMicros documents: [+-]? (d+ .? d* | . d+)
** ([eE] [+-]? d+)? — checked here with a separate little matcher. */
static int grammarMicros(const char *z, int n){
  int i = 0, nInt = 0, nFrac = 0;
  if( i<n && (z[i]=='+' || z[i]=='-') ) i++;
  while( i<n && isDigit(z[i]) ){ i++; nInt++; }
  if( i<n && z[i]=='.' ){
    i++;
    while( i<n && isDigit(z[i]) ){ i++; nFrac++; }
  }
  if( nInt+nFrac==0 ) return 0;
  if( i<n && (z[i]=='e' || z[i]=='E') ){
    int nExp = 0;
    i++;
    if( i<n && (z[i]=='+' || z[i]=='-') ) i++;
    while( i<n && isDigit(z[i]) ){ i++; nExp++; }
    if( nExp==0 ) return 0;
  }
  return i==n;
}

static int grammarInt(const char *z, int n){
  int i = 0;
  if( i<n && z[i]=='-' ) i++;
  if( i>=n ) return 0;
  for(; i<n; i++) if( !isDigit(z[i]) ) return 0;
  return 1;
}

static void checkNumber(const char *z, int n){
  char zBuf[80];
  profsum_ps ps = 0;
  int64_t iv = 0;
  int r, ri;
  if( n<=0 || n>64 ) return;
  memcpy(zBuf, z, (size_t)n);
  zBuf[n] = 0;

  /* profsumParseInt vs strtoll */
  ri = profsumParseInt(z, n, &iv);
  if( !grammarInt(zBuf, n) ){
    if( ri!=-1 ) fail("profsumParseInt accepted \"%s\"", zBuf);
  }else{
    char *zEnd = 0;
    long long ref;
    errno = 0;
    ref = strtoll(zBuf, &zEnd, 10);
    if( zEnd!=zBuf+n ) fail("strtoll did not parse \"%s\"", zBuf);
    if( errno==ERANGE ){
      if( ri!=-1 ) fail("profsumParseInt accepted out-of-range \"%s\"", zBuf);
    }else{
      if( ri!=0 ) fail("profsumParseInt rejected \"%s\"", zBuf);
      if( iv!=(int64_t)ref ) fail("profsumParseInt(\"%s\") = %lld, strtoll: %lld",
                                  zBuf, (long long)iv, ref);
    }
  }

  /* profsumParseMicros vs strtold */
  r = profsumParseMicros(z, n, &ps);
  if( r<-1 || r>1 ) fail("profsumParseMicros returned %d", r);
  if( !grammarMicros(zBuf, n) ){
    if( r!=-1 ) fail("profsumParseMicros accepted \"%s\"", zBuf);
    return;
  }
  {
    char *zEnd = 0;
    long double w = strtold(zBuf, &zEnd);
    long double aw, tol, d;
    if( zEnd!=zBuf+n ) fail("strtold did not parse \"%s\"", zBuf);
    w *= 1e6L;                       /* µs → ps */
    aw = fabsl(w);
    if( aw>1.0000001e38L ){
      if( r!=-1 ) fail("profsumParseMicros accepted a too large value \"%s\"", zBuf);
      return;
    }
    if( aw<0.9999999e38L && r==-1 ){
      fail("profsumParseMicros rejected \"%s\"", zBuf);
    }
    if( r==-1 ) return;
    /* strtold and the product are each within 2^-64 relative. */
    tol = aw*0x1p-60L + 0x1p-10L;
    d = fabsl((long double)ps - w);
    if( d>0.5L+tol ){
      fail("profsumParseMicros(\"%s\") = %.1Lf ps, reference %.6Lf", zBuf, (long double)ps, w);
    }
    if( r==0 && d>tol ){
      fail("profsumParseMicros(\"%s\") claims exact %.1Lf ps, reference %.6Lf",
           zBuf, (long double)ps, w);
    }
    if( r!=1 && d>tol ) fail("profsumParseMicros(\"%s\"): rounded but not flagged", zBuf);
    if( ri==0 ){
      /* An integer number of µs is exact. */
      if( r!=0 || ps!=(profsum_ps)iv*1000000 ){
        fail("profsumParseMicros(\"%s\") disagrees with profsumParseInt", zBuf);
      }
    }
  }
}

static int isNumChar(unsigned char c){
  return isDigit((char)c) || c=='.' || c=='e' || c=='E' || c=='+' || c=='-';
}

/* Check the whole input when short, and every run of number characters
** (at most 256 runs). */
static void checkNumbers(const uint8_t *data, size_t size){
  size_t i = 0;
  int nRun = 0;
  if( size>0 && size<=64 ) checkNumber((const char*)data, (int)size);
  while( i<size && nRun<256 ){
    size_t j;
    while( i<size && !isNumChar(data[i]) ) i++;
    j = i;
    while( j<size && isNumChar(data[j]) ) j++;
    if( j>i ){
      checkNumber((const char*)data+i, (int)(j-i>64 ? 64 : j-i));
      nRun++;
    }
    i = j;
  }
}

/* ------------------------------------------------------------------ */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  ScanSummary a, b;
  DiagCtx d;
  memset(&d, 0, sizeof(d));
  d.h = 1469598103934665603ULL;
  d.nPlain = -1;

  scanMem(data, size, 1, &d, &a);
  scanMem(data, size, 0, 0, &b);

  /* The bare scan must see exactly the same events and the same end. */
  if( a.rcOpen!=b.rcOpen || a.rcEnd!=b.rcEnd || a.nRows!=b.nRows
   || a.nEntries!=b.nEntries || a.hEvents!=b.hEvents ){
    fail("scan with ARGKEYS+diagnostics differs from the bare scan: rc %d/%d vs %d/%d, "
         "rows %lld vs %lld, entries %lld vs %lld\n  %s\n  %s",
         a.rcOpen, a.rcEnd, b.rcOpen, b.rcEnd, (long long)a.nRows, (long long)b.nRows,
         (long long)a.nEntries, (long long)b.nEntries,
         a.zErr ? a.zErr : "-", b.zErr ? b.zErr : "-");
  }
  if( (a.zErr==0)!=(b.zErr==0) || (a.zErr && strcmp(a.zErr, b.zErr)!=0) ){
    fail("error messages differ:\n  %s\n  %s", a.zErr ? a.zErr : "-", b.zErr ? b.zErr : "-");
  }
  summaryClear(&b);

  firstPass(data, size, &a, &d);
  summaryClear(&a);

  checkNumbers(data, size);
  return 0;
}
