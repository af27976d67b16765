/*
** fuzz_xplane.c — libFuzzer target for the XSpace decoder (xplane_pb.c),
** and, built with -DPROFSUM_XPLANE_DUMP, a command-line dump of what the
** decoder's walk gives (used by tests/test_xplane_decode.py).
**
** Fuzz build (clang -fsanitize=fuzzer,address,undefined, -DSQLITE_CORE,
** the extension sources, -DPROFSUM_XP_READAHEAD=64
** -DPROFSUM_XP_LINE_WHOLE=256 -DPROFSUM_XP_LAZY_MIN=16 so that small
** inputs move the window and leave bytes values in the file).  For
** every input it renders the whole walk (planes, lines, events, every
** stat with its text, the XSpace strings, or the error) and checks:
**   1. the walk over memory and over the same bytes in a file (a memfd,
**      read through the pread window) render the same text;
**   2. invariants: event ordinals consecutive from 0, a line gives as many
**      events as it counted, a plane's event count is the sum of its
**      lines', byte offsets inside the input (plain input), every name and
**      stat text is valid UTF-8;
**   3. with PROFSUM_XP_LENIENT_UTF8, an input that decodes strictly
**      renders the same;
**   4. a walk that takes only the first line of each plane and the first
**      event of each line ends at the same event count (skipped events keep
**      their ordinals) and with the same outcome.
** Any broken invariant prints what was wrong and calls abort().
**
** Dump build (cc -DPROFSUM_XPLANE_DUMP ... tests/fuzz_xplane.c
** ext/reader/xplane_pb.c ext/reader/xplane_schema.c ext/reader/pbwire.c ext/reader/gz.c ext/util/hash.c
** ext/util/shabg.c ext/util/prefault.c ext/util/demote.c -lsqlite3 -lz):
**   xplane_dump [--lenient] [--mem] [--lines=K] [--events=K] [--truncate=N] FILE
** prints one JSON object per line: {"plane":…}, {"line":…}, {"event":…},
** {"diag":…}, then {"end":…} or {"error":…,"rc":N} (exit status 0 / 1).
** --mem reads the file into memory first (profsumXpOpenMem); --lines /
** --events take only the first K lines of a plane / events of a line;
** --truncate cuts the file to N bytes once the first plane was returned.
*/
#include "profsum_int.h"
#include "xplane_pb.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* What a walk takes and how. */
typedef struct WalkOpt {
  unsigned flags;          /* PROFSUM_XP_* */
  int useMem;              /* 1: profsumXpOpenMem over (aMem, nMem) */
  const unsigned char *aMem;
  int64_t nMem;
  const char *zPath;       /* the file (or the name of the memory input) */
  int64_t maxLines;        /* -1: all */
  int64_t maxEvents;       /* -1: all */
  int checkOffsets;        /* byte offsets must lie inside nMem */
  int64_t truncateAt;      /* >=0: cut the file to this size once the first
                           ** plane was returned (a file that shrinks) */
} WalkOpt;

static void fail(const char *zWhat, const char *zPath){
  fprintf(stderr, "fuzz_xplane: broken invariant: %s (%s)\n", zWhat, zPath);
  abort();
}

/* 1 if z[0..n) is valid UTF-8 (a plain check, independent of the decoder's). */
static int isUtf8(const unsigned char *z, int64_t n){
  int64_t i = 0;
  while( i<n ){
    unsigned c = z[i];
    int k, j;
    unsigned cp;
    if( c<0x80 ){ i++; continue; }
    if( (c & 0xE0)==0xC0 ){ k = 1; cp = c & 0x1F; }
    else if( (c & 0xF0)==0xE0 ){ k = 2; cp = c & 0x0F; }
    else if( (c & 0xF8)==0xF0 ){ k = 3; cp = c & 0x07; }
    else return 0;
    for(j=1; j<=k; j++){
      if( i+j>=n || (z[i+j] & 0xC0)!=0x80 ) return 0;
      cp = (cp<<6) | (z[i+j] & 0x3F);
    }
    if( (k==1 && cp<0x80) || (k==2 && cp<0x800) || (k==3 && cp<0x10000) ) return 0;
    if( cp>0x10FFFF || (cp>=0xD800 && cp<=0xDFFF) ) return 0;
    i += k+1;
  }
  return 1;
}

/* Append z[0..n) as a JSON string (the bytes must be UTF-8). */
static void jStr(sqlite3_str *s, const char *z, int64_t n, const char *zPath){
  int64_t i;
  if( z==0 ){ sqlite3_str_appendall(s, "null"); return; }
  if( !isUtf8((const unsigned char*)z, n) ) fail("a text is not valid UTF-8", zPath);
  sqlite3_str_appendchar(s, 1, '"');
  for(i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    if( c=='"' || c=='\\' ) sqlite3_str_appendf(s, "\\%c", c);
    else if( c<0x20 ) sqlite3_str_appendf(s, "\\u%04x", c);
    else sqlite3_str_appendchar(s, 1, (char)c);
  }
  sqlite3_str_appendchar(s, 1, '"');
}

static const char *const azType[] = {
  "none", "double", "uint64", "int64", "str", "bytes", "ref", "cstr"
};

/* Append a stat as a JSON object; its text through profsumXpStatText. */
static int jStat(ProfsumXp *p, sqlite3_str *s, const ProfsumXpStat *st, const WalkOpt *o){
  const char *z;
  int64_t n;
  int rc;
  sqlite3_str_appendf(s, "{\"id\":%lld,\"name\":", (long long)st->metadataId);
  jStr(s, st->zName, st->nName, o->zPath);
  sqlite3_str_appendf(s, ",\"type\":\"%s\"", azType[st->eType]);
  switch( st->eType ){
    case PROFSUM_XV_DOUBLE: {
      /* exact bits: no float formatting question */
      uint64_t b;
      memcpy(&b, &st->rVal, 8);
      sqlite3_str_appendf(s, ",\"bits\":\"%016llx\"", (unsigned long long)b);
      break;
    }
    case PROFSUM_XV_UINT64: case PROFSUM_XV_REF:
      sqlite3_str_appendf(s, ",\"u\":\"%llu\"", (unsigned long long)st->uVal);
      break;
    case PROFSUM_XV_INT64:
      sqlite3_str_appendf(s, ",\"i\":%lld", (long long)st->iVal);
      break;
  }
  if( st->eType>=PROFSUM_XV_STR ){
    rc = profsumXpStatText(p, st, &z, &n);
    if( rc ) return rc;
    sqlite3_str_appendall(s, ",\"text\":");
    jStr(s, z, n, o->zPath);
  }
  if( o->checkOffsets && (st->iOffset<0 || st->iOffset>=o->nMem) ) fail("stat offset", o->zPath);
  sqlite3_str_appendf(s, ",\"off\":%lld}", (long long)st->iOffset);
  return SQLITE_OK;
}

static int jStats(ProfsumXp *p, sqlite3_str *s, const ProfsumXpStat *a, int n, const WalkOpt *o){
  int i, rc;
  sqlite3_str_appendchar(s, 1, '[');
  for(i=0; i<n; i++){
    if( i ) sqlite3_str_appendchar(s, 1, ',');
    rc = jStat(p, s, &a[i], o);
    if( rc ) return rc;
  }
  sqlite3_str_appendchar(s, 1, ']');
  return SQLITE_OK;
}

/* Diagnostics are collected apart (one may come in the middle of a
** record: a compressed string inflated for its text) and moved into the
** rendering between records (flushDiags). */
static void diagFn(void *pCtx, int64_t idx, int64_t iOffset, const char *zKind, const char *zDetail){
  sqlite3_str *s = (sqlite3_str*)pCtx;
  sqlite3_str_appendf(s, "{\"diag\":{\"kind\":\"%s\",\"idx\":%lld,\"off\":%lld,\"detail\":",
                      zKind, (long long)idx, (long long)iOffset);
  if( zDetail ){
    /* the detail names no path: safe to compare across inputs */
    int64_t n = (int64_t)strlen(zDetail), i;
    sqlite3_str_appendchar(s, 1, '"');
    for(i=0; i<n; i++){
      unsigned char c = (unsigned char)zDetail[i];
      if( c=='"' || c=='\\' ) sqlite3_str_appendf(s, "\\%c", c);
      else if( c<0x20 ) sqlite3_str_appendf(s, "\\u%04x", c);
      else sqlite3_str_appendchar(s, 1, (char)c);
    }
    sqlite3_str_appendchar(s, 1, '"');
  }else{
    sqlite3_str_appendall(s, "null");
  }
  sqlite3_str_appendall(s, "}}\n");
}

/* Move the diagnostics collected in pend to the end of s. */
static void flushDiags(sqlite3_str *s, sqlite3_str *pend){
  if( sqlite3_str_length(pend)>0 ){
    sqlite3_str_appendall(s, sqlite3_str_value(pend));
    sqlite3_str_reset(pend);
  }
}

/* Walk the input as o says; render everything into s.  Returns the walk's
** result code (SQLITE_OK at a clean end); *pnEvents = the events seen. */
static int walk(const WalkOpt *o, sqlite3_str *s, int64_t *pnEvents){
  ProfsumXp *p = 0;
  const ProfsumXpPlane *pl;
  char *zErr = 0;
  int rc, rcR;
  int64_t nOrd = 0;
  sqlite3_str *pend = sqlite3_str_new(0);
  *pnEvents = 0;
  if( o->useMem ){
    rc = profsumXpOpenMem("fuzz_xplane", o->aMem, o->nMem, o->zPath, o->flags, diagFn, pend, &p, &zErr);
  }else{
    rc = profsumXpOpen("fuzz_xplane", o->zPath, o->flags, diagFn, pend, &p, &zErr);
  }
  if( rc ) goto done;
  while( (rc = profsumXpNextPlane(p, &pl, &zErr))==SQLITE_ROW ){
    const ProfsumXpLine *L;
    int64_t nLines = 0, nEvPlane = 0, i;
    int full = o->maxLines<0 && o->maxEvents<0;
    /* a skipping walk cannot see the skipped events: check in-plane only */
    if( full && pl->iFirstEvent!=nOrd ) fail("plane iFirstEvent", o->zPath);
    flushDiags(s, pend);
    nOrd = pl->iFirstEvent;
    if( o->truncateAt>=0 && pl->iPlane==0 && truncate(o->zPath, (off_t)o->truncateAt)!=0 ){
      perror(o->zPath);
    }
    sqlite3_str_appendf(s, "{\"plane\":{\"index\":%lld,\"off\":%lld,\"bytes\":%lld,\"id\":%lld,"
        "\"name\":", (long long)pl->iPlane, (long long)pl->iOffset, (long long)pl->nBytes,
        (long long)pl->id);
    jStr(s, pl->zName, pl->nName, o->zPath);
    sqlite3_str_appendf(s, ",\"lines\":%lld,\"event_metadata\":%lld,\"stat_metadata\":%lld,"
        "\"stats\":", (long long)pl->nLines, (long long)pl->nEventMetadata,
        (long long)pl->nStatMetadata);
    rcR = jStats(p, s, pl->aStat, pl->nStat, o);
    if( rcR ){ rc = rcR; goto done; }
    /* the metadata in first-appearance order */
    sqlite3_str_appendall(s, ",\"emeta\":[");
    for(i=0; i<pl->nEventMetadata; i++){
      const ProfsumXpEventMeta *m = profsumXpEventMetaAt(p, i);
      int64_t c;
      if( m==0 || profsumXpEventMeta(p, m->key)!=m ) fail("event metadata lookup", o->zPath);
      if( i ) sqlite3_str_appendchar(s, 1, ',');
      sqlite3_str_appendf(s, "{\"key\":%lld,\"id\":%lld,\"name\":", (long long)m->key, (long long)m->id);
      jStr(s, m->zName, m->nName, o->zPath);
      sqlite3_str_appendall(s, ",\"display\":");
      jStr(s, m->zDisplay, m->nDisplay, o->zPath);
      sqlite3_str_appendf(s, ",\"meta_bytes\":%lld,\"children\":[", (long long)m->nMeta);
      for(c=0; c<m->nChild; c++) sqlite3_str_appendf(s, "%s%lld", c ? "," : "", (long long)m->aChild[c]);
      sqlite3_str_appendall(s, "],\"stats\":");
      rcR = jStats(p, s, m->aStat, m->nStat, o);
      if( rcR ){ rc = rcR; goto done; }
      sqlite3_str_appendchar(s, 1, '}');
    }
    sqlite3_str_appendall(s, "]}}\n");
    while( (o->maxLines<0 || nLines<o->maxLines)
        && (rc = profsumXpNextLine(p, &L, &zErr))==SQLITE_ROW ){
      const ProfsumXpEvent *ev;
      int64_t nEv = 0;
      nLines++;
      if( L->iFirstEvent!=nOrd ) fail("line iFirstEvent", o->zPath);
      nEvPlane += L->nEvents;
      flushDiags(s, pend);
      sqlite3_str_appendf(s, "{\"line\":{\"plane\":%lld,\"index\":%lld,\"off\":%lld,\"id\":%lld,"
          "\"display_id\":%lld,\"name\":", (long long)pl->iPlane, (long long)L->iLine,
          (long long)L->iOffset, (long long)L->id, (long long)L->displayId);
      jStr(s, L->zName, L->nName, o->zPath);
      sqlite3_str_appendall(s, ",\"display\":");
      jStr(s, L->zDisplay, L->nDisplay, o->zPath);
      sqlite3_str_appendf(s, ",\"ts\":%lld,\"dur\":%lld,\"events\":%lld}}\n",
          (long long)L->timestampNs, (long long)L->durationPs, (long long)L->nEvents);
      if( o->checkOffsets && (L->iOffset<pl->iOffset || L->iOffset>=o->nMem) ) fail("line offset", o->zPath);
      while( (o->maxEvents<0 || nEv<o->maxEvents)
          && (rc = profsumXpNextEvent(p, &ev, &zErr))==SQLITE_ROW ){
        if( ev->iEvent!=L->iFirstEvent+nEv ) fail("event ordinal", o->zPath);
        if( ev->iLineEvent!=nEv ) fail("event index in line", o->zPath);
        if( ev->pLine!=L || ev->pPlane!=pl ) fail("event parents", o->zPath);
        if( o->checkOffsets && (ev->iOffset<L->iOffset || ev->iOffset>=o->nMem) ) fail("event offset", o->zPath);
        nEv++;
        flushDiags(s, pend);
        sqlite3_str_appendf(s, "{\"event\":{\"ord\":%lld,\"i\":%lld,\"off\":%lld,\"mid\":%lld,"
            "\"known\":%d,\"name\":", (long long)ev->iEvent, (long long)ev->iLineEvent,
            (long long)ev->iOffset, (long long)ev->metadataId, ev->pMeta!=0);
        jStr(s, ev->zName, ev->nName, o->zPath);
        sqlite3_str_appendall(s, ",\"display\":");
        jStr(s, ev->zDisplay, ev->nDisplay, o->zPath);
        if( ev->eData==PROFSUM_XD_OFFSET ) sqlite3_str_appendf(s, ",\"offset_ps\":%lld", (long long)ev->offsetPs);
        if( ev->eData==PROFSUM_XD_OCCURRENCES ) sqlite3_str_appendf(s, ",\"occurrences\":%lld", (long long)ev->numOccurrences);
        sqlite3_str_appendf(s, ",\"dur\":%lld,\"meta_stats\":", (long long)ev->durationPs);
        /* (rc keeps SQLITE_ROW: the loop's test reads it) */
        rcR = jStats(p, s, ev->pMeta ? ev->pMeta->aStat : 0, ev->pMeta ? ev->pMeta->nStat : 0, o);
        if( rcR==SQLITE_OK ){
          sqlite3_str_appendall(s, ",\"stats\":");
          rcR = jStats(p, s, ev->aStat, ev->nStat, o);
        }
        if( rcR ){ rc = rcR; goto done; }
        sqlite3_str_appendall(s, "}}\n");
      }
      if( o->maxEvents<0 ){
        if( rc!=SQLITE_DONE ) goto done;
        if( nEv!=L->nEvents ) fail("events of a line != its count", o->zPath);
      }else if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
        goto done;
      }
      nOrd = L->iFirstEvent + L->nEvents;
    }
    if( o->maxLines<0 ){
      if( rc!=SQLITE_DONE ) goto done;
      if( nLines!=pl->nLines ) fail("lines of a plane != its count", o->zPath);
      if( nEvPlane!=pl->nEvents ) fail("events of a plane != the sum of its lines'", o->zPath);
    }else if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ){
      goto done;
    }
    if( full && nOrd!=pl->iFirstEvent+pl->nEvents ) fail("plane event count", o->zPath);
  }
  if( rc!=SQLITE_DONE ) goto done;
  rc = SQLITE_OK;
  {
    static const char *const azW[] = {"errors", "warnings", "hostnames"};
    int k;
    flushDiags(s, pend);
    sqlite3_str_appendf(s, "{\"end\":{\"events\":%lld", (long long)profsumXpEventsSeen(p));
    for(k=0; k<3; k++){
      const ProfsumXpStr *a;
      int64_t n, i;
      profsumXpStrings(p, k, &a, &n);
      sqlite3_str_appendf(s, ",\"%s\":[", azW[k]);
      for(i=0; i<n; i++){
        if( i ) sqlite3_str_appendchar(s, 1, ',');
        jStr(s, a[i].z, a[i].n, o->zPath);
      }
      sqlite3_str_appendchar(s, 1, ']');
    }
    sqlite3_str_appendall(s, "}}\n");
  }
done:
  flushDiags(s, pend);
  sqlite3_free(sqlite3_str_finish(pend));
  if( p ) *pnEvents = profsumXpEventsSeen(p);
  if( rc!=SQLITE_OK && zErr==0 && p ) zErr = profsumXpErrMsg(p);   /* a stat's text failed */
  if( rc!=SQLITE_OK && sqlite3_str_length(s)>0 && sqlite3_str_value(s)[sqlite3_str_length(s)-1]!='\n' ){
    /* a record cut short (a stat's text failed): dropped, whole lines kept */
    char *zAll = sqlite3_mprintf("%s", sqlite3_str_value(s));
    char *zNl = zAll ? strrchr(zAll, '\n') : 0;
    sqlite3_str_reset(s);
    if( zNl ){ zNl[1] = 0; sqlite3_str_appendall(s, zAll); }
    sqlite3_free(zAll);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_str_appendf(s, "{\"error\":");
    jStr(s, zErr ? zErr : "", zErr ? (int64_t)strlen(zErr) : 0, o->zPath);
    sqlite3_str_appendf(s, ",\"rc\":%d}\n", rc);
  }
  sqlite3_free(zErr);
  profsumXpClose(p);
  return rc;
}

#ifdef PROFSUM_XPLANE_DUMP
int main(int argc, char **argv){
  WalkOpt o;
  sqlite3_str *s;
  int64_t nEv;
  unsigned char *aMem = 0;
  int i, rc;
  char *zOut;
  memset(&o, 0, sizeof(o));
  o.maxLines = o.maxEvents = o.truncateAt = -1;
  for(i=1; i<argc; i++){
    if( strcmp(argv[i], "--lenient")==0 ) o.flags |= PROFSUM_XP_LENIENT_UTF8;
    else if( strcmp(argv[i], "--mem")==0 ) o.useMem = 1;
    else if( strncmp(argv[i], "--lines=", 8)==0 ) o.maxLines = atoll(argv[i]+8);
    else if( strncmp(argv[i], "--events=", 9)==0 ) o.maxEvents = atoll(argv[i]+9);
    else if( strncmp(argv[i], "--truncate=", 11)==0 ) o.truncateAt = atoll(argv[i]+11);
    else o.zPath = argv[i];
  }
  if( o.zPath==0 ){
    fprintf(stderr, "usage: %s [--lenient] [--mem] [--lines=K] [--events=K] FILE\n", argv[0]);
    return 2;
  }
  if( o.useMem ){
    FILE *f = fopen(o.zPath, "rb");
    long n;
    if( f==0 ){ perror(o.zPath); return 2; }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    aMem = malloc((size_t)n + 1);
    if( aMem==0 || fread(aMem, 1, (size_t)n, f)!=(size_t)n ){ fclose(f); return 2; }
    fclose(f);
    o.aMem = aMem;
    o.nMem = n;
  }
  s = sqlite3_str_new(0);
  rc = walk(&o, s, &nEv);
  zOut = sqlite3_str_finish(s);
  if( zOut ) fputs(zOut, stdout);
  sqlite3_free(zOut);
  free(aMem);
  return rc==SQLITE_OK ? 0 : 1;
}
#else

/* UBSan: make every report fatal (libFuzzer ignores non-fatal ones). */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void){
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Render one walk to a string (sqlite3_malloc'd). */
static char *render(const WalkOpt *o, int *pRc, int64_t *pnEv){
  sqlite3_str *s = sqlite3_str_new(0);
  *pRc = walk(o, s, pnEv);
  return sqlite3_str_finish(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size){
  static int fd = -1;
  static char zPath[64];
  WalkOpt o;
  char *zA, *zB, *zC, *zD;
  int rcA, rcB, rcC, rcD;
  int64_t nA, nB, nC, nD;
  int isGz = size>=2 && data[0]==0x1f && data[1]==0x8b;
  if( fd<0 ){
    fd = memfd_create("fuzz_xplane", 0);
    if( fd<0 ){ perror("memfd_create"); abort(); }
    snprintf(zPath, sizeof(zPath), "/proc/self/fd/%d", fd);
  }
  if( ftruncate(fd, 0)!=0 || pwrite(fd, data, size, 0)!=(ssize_t)size ) abort();

  memset(&o, 0, sizeof(o));
  o.aMem = data;
  o.nMem = (int64_t)size;
  o.zPath = zPath;
  o.maxLines = o.maxEvents = o.truncateAt = -1;
  o.checkOffsets = !isGz;

  /* 1. memory and file agree */
  o.useMem = 1;
  zA = render(&o, &rcA, &nA);
  o.useMem = 0;
  zB = render(&o, &rcB, &nB);
  if( rcA!=rcB || nA!=nB || (zA && zB && strcmp(zA, zB)!=0) ){
    fprintf(stderr, "memory:\n%s\nfile:\n%s\n", zA ? zA : "(oom)", zB ? zB : "(oom)");
    fail("memory and file walks differ", zPath);
  }

  /* 3. lenient reads a valid input the same */
  o.useMem = 1;
  o.flags = PROFSUM_XP_LENIENT_UTF8;
  zC = render(&o, &rcC, &nC);
  if( rcA==SQLITE_OK && (rcC!=SQLITE_OK || nC!=nA || (zA && zC && strcmp(zA, zC)!=0)) ){
    fail("a lenient walk of a valid input differs", zPath);
  }
  o.flags = 0;

  /* 4. a walk that skips ends at the same count */
  o.maxLines = 1;
  o.maxEvents = 1;
  o.checkOffsets = 0;
  zD = render(&o, &rcD, &nD);
  if( rcA==SQLITE_OK && (rcD!=SQLITE_OK || nD!=nA) ){
    fprintf(stderr, "full:\n%s\nskipping:\n%s\n", zA ? zA : "", zD ? zD : "");
    fail("a skipping walk ends elsewhere", zPath);
  }

  sqlite3_free(zA);
  sqlite3_free(zB);
  sqlite3_free(zC);
  sqlite3_free(zD);
  return 0;
}
#endif
