/*
** trim.c — profsum_trim(source, dest [, where_sql]): write a smaller trace.
**
**   SELECT profsum_trim('big.trace.json.gz', 'step3.trace.json.gz',
**                       'ts BETWEEN 1700000000000 AND 1700000500000');
**   SELECT profsum_trim('big.trace.json.gz', 'tpu0.json.gz', 'process_name = ''/device:TPU:0''');
**
** Writes a valid gzipped trace JSON ({"traceEvents": [...], "displayTimeUnit":
** ...}) holding the entries of SOURCE for which WHERE_SQL (any condition on
** the columns of trace_events, default: all) is true, plus the metadata (M)
** entries of the processes and threads they belong to, so that Perfetto or
** TensorBoard can open a trace that was too big.  Entries are copied byte
** for byte, in file order (one with a defect the reader tolerated is
** written repaired, so that the output is valid JSON); a B or E selected
** without its partner brings it.  Returns the number of entries written.
**
** An XPlane source (an .xplane.pb, told by content as trace_events tells
** it) has no JSON to copy: each selected row is written as an X event
** (pid, tid, name, args as trace_events shows them; ts and dur in µs with
** up to 6 decimals, exact from the picoseconds), then one process_name M
** event per process and one thread_name M event per (pid, tid) of the
** rows written (of two lines that share a tid, the later line's name, as
** summary §6.1 fills its map).  trace_events of the output gives the same
** name, pid, tid, ts and dur_ps for every row written.
**
** Safety: DEST is written to a temporary file in DEST's own directory, then
** renamed over DEST: nothing is written anywhere else, and a failure leaves
** no partial file.  DEST must not be a directory nor a symbolic link (to
** anything: neither followed nor replaced, fileio.h); its directory must
** exist, and may be reached through links.
** Reads and writes files, so SQLITE_DIRECTONLY.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "jsontree.h"
#include "fileio.h"
#include "psfmt.h"
#include "sqlcall.h"
#include "growarray.h"
#include "gzwrite.h"
#include "strpool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FN "profsum_trim"

/* The selected entries: one bit per entry index, grown as indexes come
** (an eighth of a byte per entry of the file, where a list of the selected
** indexes took 8 bytes per selected entry). */
typedef struct IdxBits { unsigned char *a; sqlite3_int64 nByte; } IdxBits;

/* Set bit i.  SQLITE_OK or SQLITE_NOMEM.  An i outside [0, 2^40) is no
** entry index of a trace (a WHERE clause can add rows of its own with a
** UNION): nothing to set, no entry has it. */
static int bitsSet(IdxBits *b, sqlite3_int64 i){
  sqlite3_int64 k = i>>3;
  if( i<0 || i>=((sqlite3_int64)1<<40) ) return SQLITE_OK;
  if( k>=b->nByte ){
    sqlite3_int64 nNew = b->nByte ? b->nByte : 4096;
    unsigned char *a;
    while( nNew<=k ) nNew *= 2;
    a = sqlite3_realloc64(b->a, (sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    memset(a + b->nByte, 0, (size_t)(nNew - b->nByte));
    b->a = a;
    b->nByte = nNew;
  }
  b->a[k] |= (unsigned char)(1u<<(i&7));
  return SQLITE_OK;
}

/* Is bit i set? */
static int bitsHas(const IdxBits *b, sqlite3_int64 i){
  return i>=0 && (i>>3)<b->nByte && (b->a[i>>3]>>(i&7)&1);
}

/* A set of int64 (the pids of the selected entries): appended, kept sorted
** and without duplicates by setCompact, which runs before the array would
** grow, so its size follows the distinct values, not the rows. */
typedef struct I64Set { sqlite3_int64 *a; sqlite3_int64 n, nAlloc; } I64Set;
static int cmpI64(const void *pa, const void *pb){
  sqlite3_int64 a = *(const sqlite3_int64*)pa, b = *(const sqlite3_int64*)pb;
  return a<b ? -1 : (a>b);
}
/* Sort s and drop its duplicates. */
static void setCompact(I64Set *s){
  sqlite3_int64 i, j = 0;
  if( s->n<2 ) return;
  qsort(s->a, (size_t)s->n, sizeof(sqlite3_int64), cmpI64);
  for(i=1; i<s->n; i++) if( s->a[i]!=s->a[j] ) s->a[++j] = s->a[i];
  s->n = j+1;
}
/* Add v.  SQLITE_OK or SQLITE_NOMEM. */
static int setAdd(I64Set *s, sqlite3_int64 v){
  if( s->n>0 && s->a[s->n-1]==v ) return SQLITE_OK;    /* the usual repeat */
  if( s->n>=s->nAlloc ){
    sqlite3_int64 nNew;
    sqlite3_int64 *a;
    setCompact(s);
    if( s->n < s->nAlloc/2 ){ s->a[s->n++] = v; return SQLITE_OK; }
    nNew = s->nAlloc ? s->nAlloc*2 : 64;
    a = sqlite3_realloc64(s->a, sizeof(sqlite3_int64)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    s->a = a;
    s->nAlloc = nNew;
  }
  s->a[s->n++] = v;
  return SQLITE_OK;
}
/* Is v in s (compacted)? */
static int setHas(const I64Set *s, sqlite3_int64 v){
  sqlite3_int64 lo = 0, hi = s->n-1;
  while( lo<=hi ){
    sqlite3_int64 mid = (lo+hi)/2;
    if( s->a[mid]==v ) return 1;
    if( s->a[mid]<v ) lo = mid+1; else hi = mid-1;
  }
  return 0;
}

/* What the selection gives the copy: the entries, and the processes whose
** metadata goes with them (integer pids, and pids that are strings). */
typedef struct TrimSel {
  IdxBits bits;
  I64Set pids;
  ProfsumStrPool txtPids;  /* the pids that are strings (PyTorch's "Spans"):
                           ** ids below nTxtSel are the selection's, those
                           ** the copy interns after them are not */
  int32_t nTxtSel;
} TrimSel;

/* Report an error of profsum_trim with its message and SQLite code rc
** (SQLITE_ERROR when rc is 0): an interrupt stays SQLITE_INTERRUPT, a
** failed write of the database SQLITE_IOERR_..., out of memory
** SQLITE_NOMEM (with a message that names the file), so callers can tell
** them apart.  Out of memory for the message itself: SQLITE_NOMEM. */
static void trimErr(sqlite3_context *ctx, int rc, const char *zFmt, ...){
  va_list ap;
  int rcMsg;
  va_start(ap, zFmt);
  rcMsg = profsumCtxErrV(ctx, zFmt, ap);
  va_end(ap);
  if( rcMsg==SQLITE_OK && rc!=SQLITE_OK && rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
}

/* Out of memory in profsum_trim on zSrc: the error names both. */
static void trimNomem(sqlite3_context *ctx, const char *zSrc){
  trimErr(ctx, SQLITE_NOMEM, FN ": '%s': out of memory", zSrc);
}

/* ------------------------------------------------------------------ */
/* XPlane sources: rows written as JSON                                */
/* ------------------------------------------------------------------ */


/* Append picoseconds v as exact microseconds (profsumStrAppendMicros). */
static void appendMicros(sqlite3_str *s, profsum_ps v){ profsumStrAppendMicros(s, v); }

/* The process and thread names of the rows written (XPlane): one entry
** per line met, in file order; the last of a key wins. */
typedef struct TrimName {
  int64_t pid, tid;
  int isThread;
  int64_t seq;
  char *z;
} TrimName;
typedef struct TrimNames {
  TrimName *a;
  int64_t n, nAlloc;
  int64_t iLastTrack;            /* the line of the last entries */
} TrimNames;

static void trimNamesFree(TrimNames *p){
  int64_t i;
  for(i=0; i<p->n; i++) sqlite3_free(p->a[i].z);
  sqlite3_free(p->a);
  memset(p, 0, sizeof(*p));
}

/* Note one name.  SQLITE_OK or SQLITE_NOMEM. */
static int trimNameAdd(TrimNames *p, const ProfsumEvent *ev, int isThread){
  const ProfsumSpan *sp = isThread ? &ev->threadName : &ev->procName;
  TrimName *e;
  TrimName *a = profsumGrowArray(p->a, p->n, &p->nAlloc, sizeof(TrimName), 32);
  if( a==0 ) return SQLITE_NOMEM;
  p->a = a;
  e = &a[p->n];
  e->z = sqlite3_malloc64((sqlite3_uint64)sp->n + 1);
  if( e->z==0 ) return SQLITE_NOMEM;
  if( sp->n>0 ) memcpy(e->z, sp->z, (size_t)sp->n);
  e->z[sp->n] = 0;
  e->pid = ev->pid.iVal;
  e->tid = isThread ? ev->tid.iVal : 0;
  e->isThread = isThread;
  e->seq = p->n;
  p->n++;
  return SQLITE_OK;
}

/* Finish s and write it.  SQLITE_OK, SQLITE_NOMEM or SQLITE_IOERR. */
static int trimPutStr(ProfsumGzOut *g, sqlite3_str *s){
  int rc = sqlite3_str_errcode(s);
  int n = sqlite3_str_length(s);
  char *z = sqlite3_str_finish(s);
  if( rc==SQLITE_OK && z && profsumGzOutPut(g, z, (size_t)n) ) rc = SQLITE_IOERR;
  sqlite3_free(z);
  return rc==SQLITE_TOOBIG ? SQLITE_NOMEM : rc;
}

/* Write one XPlane row as an X event (after ",\n" when bComma). */
static int trimXEvent(ProfsumGzOut *g, const ProfsumEvent *ev, TrimNames *pNames, int bComma){
  sqlite3_str *s;
  if( ev->iTrack!=pNames->iLastTrack ){
    if( trimNameAdd(pNames, ev, 0) || trimNameAdd(pNames, ev, 1) ) return SQLITE_NOMEM;
    pNames->iLastTrack = ev->iTrack;
  }
  s = sqlite3_str_new(0);
  if( bComma ) sqlite3_str_append(s, ",\n", 2);
  sqlite3_str_appendf(s, "{\"ph\":\"X\",\"pid\":%lld,\"tid\":%lld,\"ts\":",
                      (long long)ev->pid.iVal, (long long)ev->tid.iVal);
  appendMicros(s, ev->ts);
  sqlite3_str_appendall(s, ",\"dur\":");
  appendMicros(s, ev->dur);
  if( ev->name.type==PROFSUM_JT_STRING ){
    sqlite3_str_appendall(s, ",\"name\":");
    jAppendJsonStr(s, ev->name.z, ev->name.n);
  }
  if( ev->args.type==PROFSUM_JT_OBJECT ){
    sqlite3_str_appendall(s, ",\"args\":");
    sqlite3_str_append(s, ev->args.z, (int)ev->args.n);
  }
  sqlite3_str_appendchar(s, 1, '}');
  return trimPutStr(g, s);
}

/* (isThread, pid, tid, seq) order. */
static int cmpTrimName(const void *pa, const void *pb){
  const TrimName *a = (const TrimName*)pa, *b = (const TrimName*)pb;
  if( a->isThread!=b->isThread ) return a->isThread - b->isThread;
  if( a->pid!=b->pid ) return a->pid<b->pid ? -1 : 1;
  if( a->tid!=b->tid ) return a->tid<b->tid ? -1 : 1;
  return a->seq<b->seq ? -1 : (a->seq>b->seq);
}

/* Write the M events of the names noted (the last of each key). */
static int trimXNames(ProfsumGzOut *g, TrimNames *p, sqlite3_int64 *pnOut){
  int64_t i;
  int rc = SQLITE_OK;
  if( p->n>1 ) qsort(p->a, (size_t)p->n, sizeof(TrimName), cmpTrimName);
  for(i=0; i<p->n && rc==SQLITE_OK; i++){
    const TrimName *e = &p->a[i];
    sqlite3_str *s;
    if( i+1<p->n && e[1].isThread==e->isThread && e[1].pid==e->pid && e[1].tid==e->tid ) continue;
    s = sqlite3_str_new(0);
    if( *pnOut>0 ) sqlite3_str_append(s, ",\n", 2);
    if( e->isThread ){
      sqlite3_str_appendf(s, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"thread_name\",\"args\":{\"name\":",
                          (long long)e->pid, (long long)e->tid);
    }else{
      sqlite3_str_appendf(s, "{\"ph\":\"M\",\"pid\":%lld,\"name\":\"process_name\",\"args\":{\"name\":",
                          (long long)e->pid);
    }
    jAppendJsonStr(s, e->z, (int64_t)strlen(e->z));
    sqlite3_str_append(s, "}}", 2);
    rc = trimPutStr(g, s);
    (*pnOut)++;
  }
  return rc;
}

/* The B and E entries selected without their partner (a condition on
** name or dur keeps a B and drops its E, whose name and dur are NULL; a
** time window cuts a pair): the partners added to sel, from the pairing
** of trace_events (track.c), so that every slice written keeps both ends.
** The pass reads the file again; it runs only when a B or E entry was
** selected.  0 on success; otherwise the error is reported on ctx and 1
** returned. */
static int trimPairs(sqlite3_context *ctx, const char *zSrc, TrimSel *sel, ProfsumProbe *probe){
  ProfsumTrackInfo *pInfo = 0;
  ProfsumStopCheck prevStop;
  char *zErr = 0;
  int64_t i;
  int rc;
  prevStop = profsumStopPush(profsumInterrupted, probe);
  rc = profsumTrackAnalyze(FN, zSrc, PROFSUM_NEED_DUR, 0, 0, &pInfo, &zErr);
  profsumStopPop(prevStop);
  for(i=0; rc==SQLITE_OK && i<pInfo->nRec; i++){
    const ProfsumTrackRec *r = profsumTrackRec(pInfo, i);
    int inB, inE;
    if( r->ph!='E' || r->beginIdx<0 ) continue;
    inB = bitsHas(&sel->bits, r->beginIdx);
    inE = bitsHas(&sel->bits, r->idx);
    if( inB!=inE && (bitsSet(&sel->bits, inB ? r->idx : r->beginIdx)) ) rc = SQLITE_NOMEM;
  }
  profsumTrackFree(pInfo);
  if( rc==SQLITE_NOMEM && zErr==0 ) trimNomem(ctx, zSrc);
  else if( rc ) trimErr(ctx, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  return rc!=SQLITE_OK;
}

/* How the SQL text z, pasted as the condition of "WHERE (z\n)", would leave
** that condition, read as SQLite's tokenizer reads it (string literals,
** quoted identifiers and comments skipped): WHERE_ONE when it does not;
** WHERE_SEMI at a ';' (the statement ends there); WHERE_CLOSE at a ')' that
** has no '(' before it in z (it closes the condition early: a LIMIT, GROUP
** BY, ORDER BY or UNION after it would be part of the statement);
** WHERE_COMMENT at a '/' '*' comment without its end (it would swallow the
** ')' that closes the condition).  *piAt is the byte offset of that
** character in z.  An unclosed '(' or quote is left to SQLite, whose parse
** of the statement fails on it. */
#define WHERE_ONE     0
#define WHERE_SEMI    1
#define WHERE_CLOSE   2
#define WHERE_COMMENT 3
static int whereShape(const char *z, sqlite3_int64 *piAt){
  const char *z0 = z;
  sqlite3_int64 nDepth = 0;
  while( *z ){
    char c = *z;
    *piAt = (sqlite3_int64)(z - z0);
    if( c==';' ) return WHERE_SEMI;
    if( c=='(' ){
      nDepth++;
      z++;
    }else if( c==')' ){
      if( nDepth==0 ) return WHERE_CLOSE;
      nDepth--;
      z++;
    }else if( c=='\'' || c=='"' || c=='`' || c=='[' ){
      char cEnd = c=='[' ? ']' : c;
      for(z++; *z; z++){
        if( *z==cEnd ){
          if( cEnd!=']' && z[1]==cEnd ){ z++; continue; }   /* '' "" `` */
          break;
        }
      }
      if( *z==0 ) return WHERE_ONE;
      z++;
    }else if( c=='-' && z[1]=='-' ){
      while( *z && *z!='\n' ) z++;
    }else if( c=='/' && z[1]=='*' ){
      const char *e = strstr(z+2, "*/");
      if( e==0 ) return WHERE_COMMENT;
      z = e+2;
    }else{
      z++;
    }
  }
  return WHERE_ONE;
}

/* Step 1 of profsum_trim: the entries of zSrc that zWhere selects into
** sel->bits, and their processes (for the metadata) into sel->pids and
** sel->txtPids; a B or E selected without its partner brings it
** (trimPairs).  zWhere is one condition: a newline ends it, so that a
** trailing -- comment stays a comment, and text that would leave it (a
** ';', a ')' closing it early, an endless comment: whereShape) is refused
** before the source is read.  0 on success; otherwise the error is reported on ctx
** and 1 returned. */
static int trimSelect(sqlite3_context *ctx, sqlite3 *db, const char *zSrc, const char *zWhere,
                      TrimSel *sel, ProfsumProbe *probe){
  sqlite3_stmt *p = 0;
  sqlite3_int64 nSel = 0;
  sqlite3_int64 iAt = 0;
  char *zSql;
  int32_t idTxt;
  int rc, nBE = 0;
  switch( whereShape(zWhere, &iAt) ){
    case WHERE_SEMI:
      profsumCtxErr(ctx, FN ": bad WHERE clause '%s': it must be one condition (its ';' ends "
                    "the statement)", zWhere);
      return 1;
    case WHERE_CLOSE:
      profsumCtxErr(ctx, FN ": bad WHERE clause '%s': it must be one condition (its ')' at "
                    "byte %lld closes it early and adds SQL after it)", zWhere, (long long)iAt);
      return 1;
    case WHERE_COMMENT:
      profsumCtxErr(ctx, FN ": bad WHERE clause '%s': it must be one condition (its '/*' at "
                    "byte %lld has no '*/' and hides the end of the condition)", zWhere, (long long)iAt);
      return 1;
    default:
      break;
  }
  zSql = sqlite3_mprintf("SELECT idx, pid, ph FROM trace_events(?1) WHERE (%s\n)", zWhere);
  if( zSql==0 ){ trimNomem(ctx, zSrc); return 1; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  if( rc==SQLITE_OK && sqlite3_bind_parameter_count(p)>1 ){
    /* ?1 is the source; another parameter would be NULL and select nothing */
    profsumCtxErr(ctx, FN ": bad WHERE clause '%s': it has a parameter ('?'), which nothing binds",
                  zWhere);
    sqlite3_finalize(p);
    sqlite3_free(zSql);
    return 1;
  }
  sqlite3_free(zSql);
  if( rc ){
    rc = sqlite3_extended_errcode(db);
    /* SQLITE_ERROR is the statement's own fault (syntax, an unknown
    ** column or function): the WHERE clause.  Any other code is the
    ** database's or the connection's (a disk I/O error reading the schema,
    ** a lock, an interrupt, out of memory): said as SQLite says it. */
    if( (rc & 0xff)==SQLITE_ERROR ){
      profsumCtxErr(ctx, FN ": bad WHERE clause '%s': %s", zWhere, sqlite3_errmsg(db));
    }else if( rc==SQLITE_NOMEM ){
      trimNomem(ctx, zSrc);
    }else{
      trimErr(ctx, rc, FN ": %s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(p);
    return 1;
  }
  sqlite3_bind_text(p, 1, zSrc, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    const char *zPh = (const char*)sqlite3_column_text(p, 2);
    int tPid = sqlite3_column_type(p, 1);
    const char *zPid = tPid==SQLITE_TEXT ? (const char*)sqlite3_column_text(p, 1) : 0;
    if( bitsSet(&sel->bits, sqlite3_column_int64(p, 0))
     || (tPid==SQLITE_INTEGER && setAdd(&sel->pids, sqlite3_column_int64(p, 1)))
     || (tPid==SQLITE_TEXT && (zPid==0                  /* its copy as text: out of memory */
         || profsumStrPoolIntern(&sel->txtPids, zPid, sqlite3_column_bytes(p, 1), &idTxt))) ){
      /* the selection's own memory */
      trimErr(ctx, SQLITE_NOMEM, FN ": '%s': out of memory after %lld selected entries",
              zSrc, (long long)nSel);
      sqlite3_finalize(p);
      return 1;
    }
    if( zPh && (zPh[0]=='B' || zPh[0]=='E') && zPh[1]==0 ) nBE++;
    nSel++;
  }
  if( rc!=SQLITE_DONE ){
    /* the statement's error: the trace's (its message names trace_events),
    ** an interrupt, the database's, or the WHERE clause's own (an integer
    ** overflow, a bad JSON path: the clause quoted); with SQLite's code */
    const char *zM = sqlite3_errmsg(db);
    rc = sqlite3_extended_errcode(db);
    if( rc==SQLITE_NOMEM && strncmp(zM, "trace_events:", 13)!=0 ) trimNomem(ctx, zSrc);
    else if( strncmp(zM, FN ":", sizeof(FN))==0 ) trimErr(ctx, rc, "%s", zM);
    else if( strncmp(zM, "trace_events:", 13)==0 || rc==SQLITE_INTERRUPT || (rc & 0xff)!=SQLITE_ERROR ){
      trimErr(ctx, rc, FN ": %s", zM);
    }else{
      trimErr(ctx, rc, FN ": '%s': WHERE clause '%s': %s", zSrc, zWhere, zM);
    }
    sqlite3_finalize(p);
    return 1;
  }
  sqlite3_finalize(p);
  setCompact(&sel->pids);
  sel->nTxtSel = sel->txtPids.n;
  return nBE>0 ? trimPairs(ctx, zSrc, sel, probe) : 0;
}

/* Step 2 of profsum_trim: a temporary file beside zDest (*pzTmp, *pFd)
** and its gzip writer *pg (gzwrite.h).  0 on success;
** otherwise the error is reported on ctx and 1 returned (what was taken
** is in the out-parameters, for the caller to release). */
static int trimOpenOut(sqlite3_context *ctx, const char *zSrc, const char *zDest,
                       char **pzTmp, int *pFd, ProfsumGzOut **pg){
  *pFd = profsumFileTempBeside(zDest, pzTmp);
  if( *pFd<0 ){
    if( errno==ENOMEM ){ trimNomem(ctx, zSrc); return 1; }
    profsumCtxErr(ctx, FN ": '%s': cannot create a file there (%s)", zDest, strerror(errno));
    return 1;
  }
  if( profsumGzOutOpen(*pFd, pg)!=SQLITE_OK ){ trimNomem(ctx, zSrc); return 1; }
  return 0;
}

/* The end of the JSON output of a trace_events source read by pStream:
** its displayTimeUnit when it has one.  Written and flushed to g.
** SQLITE_OK, SQLITE_NOMEM or SQLITE_IOERR. */
static int trimJsonTail(ProfsumGzOut *g, ProfsumStream *pStream){
  const char *zU = profsumScanDisplayTimeUnit(profsumStreamScan(pStream));
  char *zTail;
  int rc = SQLITE_OK;
  if( zU ){
    /* the unit as a JSON string again (the scanner gives decoded text) */
    JNode *u = jStr(zU, -1);
    char *zQ = u ? profsumJsonCompact(u) : 0;
    jFree(u);
    zTail = zQ ? sqlite3_mprintf("],\"displayTimeUnit\":%s}\n", zQ) : 0;
    sqlite3_free(zQ);
  }else{
    zTail = sqlite3_mprintf("]}\n");
  }
  if( zTail==0 ) rc = SQLITE_NOMEM;
  else if( profsumGzOutPut(g, zTail, strlen(zTail)) || profsumGzOutFinish(g) ) rc = SQLITE_IOERR;
  sqlite3_free(zTail);
  return rc;
}

/* ProfsumDiagFn of the copy: notes a source whose top level has no
** traceEvents array (pCtx: an int set to 1), which is no trace to trim. */
static void trimNoteDiag(void *pCtx, int64_t idx, int64_t iOffset, const char *zKind,
                         const char *zDetail){
  (void)idx; (void)iOffset; (void)zDetail;
  if( strcmp(zKind, "no_trace_events")==0 ) *(int*)pCtx = 1;
}

/* Step 3 of profsum_trim: copy the entries of zSrc in sel and the metadata
** of the processes in pids to g, the stream in *ppStream (closed by the
** caller), the count in *pnOut; an XPlane source's rows are written as
** JSON with their names noted in pNames.  The copy's reads stop at the
** connection's interrupt (probe).  SQLITE_OK when all is written and
** flushed; otherwise an error code, with the message in *pzErr where
** there is one. */
static int trimCopy(ProfsumGzOut *g, const char *zSrc, TrimSel *sel, TrimNames *pNames,
                    ProfsumProbe *probe, ProfsumStream **ppStream, sqlite3_int64 *pnOut,
                    char **pzErr){
  ProfsumStopCheck prevStop;
  ProfsumEvent *ev;
  char *zFix = 0, *zPid = 0;
  int64_t nFix = 0, nPid = 0;
  int isX = 0, noEvents = 0, rc;
  prevStop = profsumStopPush(profsumInterrupted, probe);
  rc = profsumStreamOpen(FN, zSrc, PROFSUM_SCAN_ARGS, trimNoteDiag, &noEvents, ppStream, pzErr);
  profsumStopPop(prevStop);
  if( rc==SQLITE_NOMEM && *pzErr==0 ){
    *pzErr = sqlite3_mprintf(FN ": '%s': out of memory opening it", zSrc);
  }else if( rc && *pzErr==0 ){
    *pzErr = sqlite3_mprintf(FN ": '%s': %s", zSrc, sqlite3_errstr(rc));
  }
  if( rc==SQLITE_OK ) isX = profsumStreamFormat(*ppStream)==PROFSUM_FMT_XPLANE;
  if( rc==SQLITE_OK && profsumGzOutPut(g, "{\"traceEvents\":[", 16) ) rc = SQLITE_IOERR;
  while( rc==SQLITE_OK ){
    int keep;
    rc = profsumStreamNext(*ppStream, &ev, pzErr);
    if( rc!=SQLITE_ROW ) break;
    rc = SQLITE_OK;
    keep = bitsHas(&sel->bits, ev->idx);
    if( isX ){
      if( !keep ) continue;
      rc = trimXEvent(g, ev, pNames, *pnOut>0);
      (*pnOut)++;
      continue;
    }
    if( !keep && ev->ph.n==1 && ev->ph.z[0]=='M' ){
      if( ev->pid.kind==PROFSUM_ID_INT ){
        keep = setHas(&sel->pids, ev->pid.iVal);
      }else if( ev->pid.kind==PROFSUM_ID_TEXT && sel->nTxtSel>0 ){
        const char *z;
        int64_t n;
        int32_t id;
        if( profsumSpanText(&ev->pid.s, &zPid, &nPid, &z, &n)
         || profsumStrPoolIntern(&sel->txtPids, z, n, &id) ){ rc = SQLITE_NOMEM; break; }
        keep = id<sel->nTxtSel;
      }
    }
    if( !keep ) continue;
    {
      /* the entry as written, or repaired where the reader tolerated what
      ** JSON does not allow (profsumSpanJson): the output stays valid */
      const char *z = ev->raw.z;
      int64_t n = ev->raw.n;
      if( (ev->raw.flags & PROFSUM_SF_FIXUP) && profsumSpanJson(&ev->raw, &zFix, &nFix, &z, &n) ){
        rc = SQLITE_NOMEM;
        break;
      }
      if( (*pnOut>0 && profsumGzOutPut(g, ",\n", 2)) || profsumGzOutPut(g, z, (size_t)n) ) rc = SQLITE_IOERR;
    }
    (*pnOut)++;
  }
  sqlite3_free(zFix);
  sqlite3_free(zPid);
  if( rc==SQLITE_DONE && isX ){
    rc = trimXNames(g, pNames, pnOut);
    if( rc==SQLITE_OK && (profsumGzOutPut(g, "],\"displayTimeUnit\":\"ns\"}\n", 26) || profsumGzOutFinish(g)) ){
      rc = SQLITE_IOERR;
    }
  }else if( rc==SQLITE_DONE && noEvents ){
    /* {"lr": 0.001}, a summary document: not an empty trace to write */
    *pzErr = sqlite3_mprintf(FN ": '%s': not a trace: its top level has no \"traceEvents\" array",
                             zSrc);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }else if( rc==SQLITE_DONE ){
    rc = trimJsonTail(g, *ppStream);
  }
  return rc;
}

/* profsum_trim(SOURCE, DEST [, WHERE]): see docs/api.md.  The steps:
** select the entries (trimSelect), open the output beside DEST
** (trimOpenOut), copy (trimCopy), then sync and rename into place. */
static void trimFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zSrc = (const char*)sqlite3_value_text(argv[0]);
  const char *zDest = (const char*)sqlite3_value_text(argv[1]);
  const char *zWhere = argc>2 && sqlite3_value_type(argv[2])!=SQLITE_NULL
                       ? (const char*)sqlite3_value_text(argv[2]) : "1";
  TrimSel sel;
  char *zTmp = 0, *zErr = 0;
  const char *zSpecial;
  ProfsumGzOut *g = 0;
  ProfsumStream *pStream = 0;
  TrimNames names = {0,0,0,0};
  ProfsumProbe probe;
  sqlite3_int64 nOut = 0;
  int rc, fd = -1, errSync = 0;
  struct stat st;

  memset(&probe, 0, sizeof(probe));
  memset(&sel, 0, sizeof(sel));
  probe.db = db;
  if( zSrc==0 || zDest==0 ){ profsumCtxErr(ctx, FN ": SOURCE and DEST must be paths"); return; }
  if( profsumValueHasNul(argv[0]) || profsumValueHasNul(argv[1]) ){
    profsumCtxErr(ctx, FN ": '%s': path contains a NUL byte", profsumValueHasNul(argv[0]) ? zSrc : zDest);
    return;
  }
  if( argc>2 && sqlite3_value_type(argv[2])!=SQLITE_NULL && sqlite3_value_type(argv[2])!=SQLITE_TEXT ){
    profsumCtxErr(ctx, FN ": WHERE must be text (a condition on the columns of trace_events) or NULL");
    return;
  }
  {
    /* a link at dest (to a file, a directory, or nothing): neither
    ** followed nor replaced (fileio.h) */
    char *zLink = 0;
    if( profsumFileIsLink(zDest, &zLink) ){
      if( zLink==0 ){ sqlite3_result_error_nomem(ctx); return; }
      profsumCtxErr(ctx, FN ": '%s' is %s: %s", zDest, zLink, PROFSUM_FILE_LINK_ADVICE);
      sqlite3_free(zLink);
      return;
    }
  }
  if( stat(zDest, &st)==0 && S_ISDIR(st.st_mode) ){
    profsumCtxErr(ctx, FN ": '%s': is a directory", zDest);
    return;
  }
  if( (zSpecial = profsumFileSpecial(zDest))!=0 ){
    /* the output is a new file renamed over dest: it would replace it */
    profsumCtxErr(ctx, FN ": '%s' is %s, not a file: the trimmed trace is written to a new "
                  "file renamed over it, which would replace it", zDest, zSpecial);
    return;
  }
  {
    char *zDb = 0;
    if( profsumFileIsDatabase(sqlite3_context_db_handle(ctx), zDest, &zDb) ){
      if( zDb==0 ){ sqlite3_result_error_nomem(ctx); return; }
      profsumCtxErr(ctx, FN ": '%s' is %s: the trimmed trace is written to a new file renamed "
                    "over it, which would replace it", zDest, zDb);
      sqlite3_free(zDb);
      return;
    }
  }
  {
    struct stat sd;
    if( stat(zSrc, &st)==0 && stat(zDest, &sd)==0 && st.st_dev==sd.st_dev && st.st_ino==sd.st_ino ){
      /* the rename would put the trimmed trace in place of the source */
      profsumCtxErr(ctx, FN ": '%s' is the source itself: write the trimmed trace to another file",
                    zDest);
      return;
    }
  }
  if( stat(zSrc, &st)==0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISBLK(st.st_mode) ){
    /* Read twice (the selection, then the copy): a pipe would be drained
    ** by the first pass. */
    profsumCtxErr(ctx, FN ": '%s' is not a regular file (%s): the source is read twice; "
                  "write it to a file first", zSrc, S_ISFIFO(st.st_mode) ? "a pipe?" : "a device or socket");
    return;
  }
  if( trimSelect(ctx, db, zSrc, zWhere, &sel, &probe) ) goto done;
  if( trimOpenOut(ctx, zSrc, zDest, &zTmp, &fd, &g) ) goto done;
  rc = trimCopy(g, zSrc, &sel, &names, &probe, &pStream, &nOut, &zErr);
  if( rc==SQLITE_OK && fsync(fd)!=0 ){ errSync = errno; rc = SQLITE_IOERR; }
  if( rc==SQLITE_OK ){
    close(fd); fd = -1;
    if( rename(zTmp, zDest)!=0 ){
      profsumCtxErr(ctx, FN ": '%s': cannot rename into place (%s)", zDest, strerror(errno));
      goto done;
    }
    sqlite3_free(zTmp); zTmp = 0;       /* renamed: nothing to remove */
    sqlite3_result_int64(ctx, nOut);
  }else if( rc==SQLITE_IOERR ){
    /* the output file, not the database: PROFSUM_RC_FILEIO (profsum_int.h) */
    int e = errSync ? errSync : profsumGzOutErrno(g);
    profsumCtxErr(ctx, FN ": '%s': write error (%s)", zDest, e>0 ? strerror(e) : "compression failed");
  }else if( rc==SQLITE_NOMEM && zErr==0 ){
    trimNomem(ctx, zSrc);
  }else{
    trimErr(ctx, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
  }
done:
  profsumStreamClose(pStream);
  trimNamesFree(&names);
  profsumProbeDone(&probe);
  profsumGzOutFree(g);
  if( fd>=0 ) close(fd);
  if( zTmp ){ unlink(zTmp); sqlite3_free(zTmp); }
  sqlite3_free(zErr);
  sqlite3_free(sel.bits.a);
  sqlite3_free(sel.pids.a);
  profsumStrPoolFree(&sel.txtPids);
}

/* See profsum_int.h. */
int profsumRegisterTrim(sqlite3 *db, char **pzErr){
  int rc;
  (void)pzErr;
  /* Reads and writes files: DIRECTONLY, never DETERMINISTIC. */
  rc = profsumCreateFunctions(db, "profsum_trim", 2, 3, SQLITE_UTF8|SQLITE_DIRECTONLY, trimFunc);
  return rc;
}
