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
** for byte, in file order.  Returns the number of entries written.
**
** Safety: DEST is written to a temporary file in DEST's own directory, then
** renamed over DEST: nothing is written anywhere else, and a failure leaves
** no partial file.  DEST must not be a directory; its directory must exist.
** Reads and writes files, so SQLITE_DIRECTONLY.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "jsontree.h"
#include "compare.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FN "profsum_trim"

/* A gzip writer on a file descriptor (zlib deflate with the gzip wrapper). */
typedef struct GzOut {
  int fd;
  z_stream z;
  unsigned char aOut[65536];
  int err;                  /* errno of a failed write, or -1 for zlib */
} GzOut;

static int gzFlush(GzOut *g, int flush){
  int zrc;
  do{
    g->z.next_out = g->aOut;
    g->z.avail_out = sizeof(g->aOut);
    zrc = deflate(&g->z, flush);
    if( zrc==Z_STREAM_ERROR ){ g->err = -1; return 1; }
    {
      size_t n = sizeof(g->aOut) - g->z.avail_out, off = 0;
      while( off<n ){
        ssize_t w = write(g->fd, g->aOut+off, n-off);
        if( w<0 ){ if( errno==EINTR ) continue; g->err = errno; return 1; }
        off += (size_t)w;
      }
    }
  }while( g->z.avail_out==0 || (flush==Z_FINISH && zrc!=Z_STREAM_END) );
  return 0;
}

/* Append n bytes. */
static int gzPut(GzOut *g, const void *p, size_t n){
  g->z.next_in = (unsigned char*)p;
  g->z.avail_in = (uInt)n;
  while( g->z.avail_in>0 ){
    if( gzFlush(g, Z_NO_FLUSH) ) return 1;
  }
  return 0;
}

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

/* Report an error of profsum_trim with its message and SQLite code rc
** (SQLITE_ERROR when rc is 0): an interrupt stays SQLITE_INTERRUPT, a
** failed write of the database SQLITE_IOERR_..., out of memory
** SQLITE_NOMEM (with a message that names the file), so callers can tell
** them apart.  Out of memory for the message itself: SQLITE_NOMEM. */
static void trimErr(sqlite3_context *ctx, int rc, const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_error(ctx, z, -1);
  sqlite3_free(z);
  if( rc!=SQLITE_OK && rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
}

/* Out of memory in profsum_trim on zSrc: the error names both. */
static void trimNomem(sqlite3_context *ctx, const char *zSrc){
  trimErr(ctx, SQLITE_NOMEM, FN ": '%s': out of memory", zSrc);
}

/* The process umask, read from /proc/self/status (umask() can only be
** read by setting it, which would race with other threads of the host);
** 022 when it cannot be read. */
static mode_t processUmask(void){
  mode_t m = 022;
  char zLine[128];
  FILE *f = fopen("/proc/self/status", "r");
  if( f==0 ) return m;
  while( fgets(zLine, sizeof(zLine), f) ){
    if( strncmp(zLine, "Umask:", 6)==0 ){
      m = (mode_t)(strtol(zLine+6, 0, 8) & 0777);
      break;
    }
  }
  fclose(f);
  return m;
}

static void trimFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zSrc = (const char*)sqlite3_value_text(argv[0]);
  const char *zDest = (const char*)sqlite3_value_text(argv[1]);
  const char *zWhere = argc>2 && sqlite3_value_type(argv[2])!=SQLITE_NULL
                       ? (const char*)sqlite3_value_text(argv[2]) : "1";
  IdxBits sel = {0,0};
  I64Set pids = {0,0,0};
  sqlite3_int64 nSel = 0;
  sqlite3_stmt *p = 0;
  char *zSql = 0, *zTmp = 0, *zErr = 0;
  GzOut *g = 0;
  ProfsumSrc *pSrc = 0;
  ProfsumScan *pScan = 0;
  ProfsumEvent *ev;
  ProfsumProbe probe;
  ProfsumStopCheck prevStop;
  sqlite3_int64 nOut = 0;
  int rc, zInit = 0, fd = -1;
  struct stat st;

  memset(&probe, 0, sizeof(probe));
  probe.db = db;
  if( zSrc==0 || zDest==0 ){ profsumCtxErr(ctx, FN ": SOURCE and DEST must be paths"); return; }
  if( stat(zDest, &st)==0 && S_ISDIR(st.st_mode) ){
    profsumCtxErr(ctx, FN ": '%s': is a directory", zDest);
    return;
  }
  if( stat(zSrc, &st)==0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISBLK(st.st_mode) ){
    /* Read twice (the selection, then the copy): a pipe would be drained
    ** by the first pass. */
    profsumCtxErr(ctx, FN ": '%s' is not a regular file (%s): the source is read twice; "
                  "write it to a file first", zSrc, S_ISFIFO(st.st_mode) ? "a pipe?" : "a device or socket");
    return;
  }
  /* 1. The selected entries (and their processes, for the metadata). */
  zSql = sqlite3_mprintf("SELECT idx, pid FROM trace_events(?1) WHERE (%s)", zWhere);
  if( zSql==0 ){ trimNomem(ctx, zSrc); return; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
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
    goto done;
  }
  sqlite3_bind_text(p, 1, zSrc, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    if( bitsSet(&sel, sqlite3_column_int64(p, 0))
     || (sqlite3_column_type(p, 1)==SQLITE_INTEGER && setAdd(&pids, sqlite3_column_int64(p, 1))) ){
      /* the selection's own memory */
      trimErr(ctx, SQLITE_NOMEM, FN ": '%s': out of memory after %lld selected entries",
              zSrc, (long long)nSel);
      goto done;
    }
    nSel++;
  }
  if( rc!=SQLITE_DONE ){
    /* the statement's error: the trace's (its message names trace_events),
    ** the database's, or an interrupt; with SQLite's code */
    const char *zM = sqlite3_errmsg(db);
    rc = sqlite3_extended_errcode(db);
    if( rc==SQLITE_NOMEM && strncmp(zM, "trace_events:", 13)!=0 ) trimNomem(ctx, zSrc);
    else if( strncmp(zM, FN ":", sizeof(FN)) == 0 ) trimErr(ctx, rc, "%s", zM);
    else trimErr(ctx, rc, FN ": %s", zM);
    goto done;
  }
  sqlite3_finalize(p); p = 0;
  setCompact(&pids);

  /* 2. The output: a temporary file beside DEST. */
  zTmp = sqlite3_mprintf("%s.tmp-XXXXXX", zDest);
  if( zTmp==0 ){ trimNomem(ctx, zSrc); goto done; }
  fd = mkstemp(zTmp);
  if( fd<0 ){
    profsumCtxErr(ctx, FN ": '%s': cannot create a file there (%s)", zDest, strerror(errno));
    sqlite3_free(zTmp); zTmp = 0;
    goto done;
  }
  /* mkstemp makes 0600; the output gets the mode any new file gets (0666
  ** less the umask), so a viewer running as another user can read it. */
  (void)fchmod(fd, 0666 & ~processUmask());
  g = sqlite3_malloc64(sizeof(GzOut));
  if( g==0 ){ trimNomem(ctx, zSrc); goto done; }
  memset(g, 0, sizeof(*g));
  g->fd = fd;
  if( deflateInit2(&g->z, 6, Z_DEFLATED, 15+16, 8, Z_DEFAULT_STRATEGY)!=Z_OK ){
    trimNomem(ctx, zSrc); goto done;
  }
  zInit = 1;

  /* 3. Copy the selected entries and the metadata of their processes; the
  ** copy's reads stop at the connection's interrupt (profsumStopPush). */
  prevStop = profsumStopPush(profsumInterrupted, &probe);
  rc = profsumSrcOpenFile(zSrc, &pSrc, &zErr);
  profsumStopPop(prevStop);
  if( rc==SQLITE_OK ){
    rc = profsumScanOpen(pSrc, FN, 0, 0, 0, &pScan, &zErr);
    pSrc = 0;                            /* owned by the scanner now */
  }else{
    char *z = sqlite3_mprintf(FN ": %s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    zErr = z;
  }
  if( rc==SQLITE_NOMEM && zErr==0 ){
    zErr = sqlite3_mprintf(FN ": '%s': out of memory opening it", zSrc);
  }
  if( rc==SQLITE_OK && gzPut(g, "{\"traceEvents\":[", 16) ) rc = SQLITE_IOERR;
  while( rc==SQLITE_OK ){
    int keep;
    rc = profsumScanNext(pScan, &ev, &zErr);
    if( rc!=SQLITE_ROW ) break;
    rc = SQLITE_OK;
    keep = bitsHas(&sel, ev->idx);
    if( !keep && ev->ph.n==1 && ev->ph.z[0]=='M' && ev->pid.kind==PROFSUM_ID_INT ){
      keep = setHas(&pids, ev->pid.iVal);
    }
    if( !keep ) continue;
    if( (nOut>0 && gzPut(g, ",\n", 2)) || gzPut(g, ev->raw.z, (size_t)ev->raw.n) ) rc = SQLITE_IOERR;
    nOut++;
  }
  if( rc==SQLITE_DONE ){
    const char *zU = profsumScanDisplayTimeUnit(pScan);
    char *zTail;
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
    rc = SQLITE_OK;
    if( zTail==0 ) rc = SQLITE_NOMEM;
    else if( gzPut(g, zTail, strlen(zTail)) || gzFlush(g, Z_FINISH) ) rc = SQLITE_IOERR;
    sqlite3_free(zTail);
  }
  if( rc==SQLITE_OK && fsync(fd)!=0 ){ g->err = errno; rc = SQLITE_IOERR; }
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
    profsumCtxErr(ctx, FN ": '%s': write error (%s)", zDest,
                  g->err>0 ? strerror(g->err) : "compression failed");
  }else if( rc==SQLITE_NOMEM && zErr==0 ){
    trimNomem(ctx, zSrc);
  }else{
    trimErr(ctx, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
  }
done:
  sqlite3_finalize(p);
  profsumScanClose(pScan);
  profsumSrcClose(pSrc);
  profsumProbeDone(&probe);
  if( zInit ) deflateEnd(&g->z);
  sqlite3_free(g);
  if( fd>=0 ) close(fd);
  if( zTmp ){ unlink(zTmp); sqlite3_free(zTmp); }
  sqlite3_free(zSql);
  sqlite3_free(zErr);
  sqlite3_free(sel.a);
  sqlite3_free(pids.a);
}

/* See profsum_int.h. */
int profsumRegisterTrim(sqlite3 *db, char **pzErr){
  int rc;
  (void)pzErr;
  /* Reads and writes files: DIRECTONLY, never DETERMINISTIC. */
  rc = sqlite3_create_function(db, "profsum_trim", 2, SQLITE_UTF8|SQLITE_DIRECTONLY, 0, trimFunc, 0, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_trim", 3, SQLITE_UTF8|SQLITE_DIRECTONLY, 0, trimFunc, 0, 0);
  return rc;
}
