/*
** profsum_cli.c — the `profsum` command line.
**
**   profsum summarize --trace-file host.trace.json.gz --output out/summary.json
**   profsum report    --summary out/summary.json --top-k 10
**   profsum query     --summary out/summary.json --question "what is the gap before copy.1?"
**   profsum compare   --before a.json.gz --after b.json.gz
**   profsum track     --before a.json.gz --after b.json.gz --history hist.db --fail-on fail
**   profsum history   --history hist.db --tail 5
**   profsum bundle    --before-summary a.json --after-summary b.json --output-dir cmp/
**   profsum publish   --summary out/summary.json --dry-run
**   profsum sql       [DB]          (the sqlite3 shell with profsum.so loaded)
**   profsum view      TRACE|DIR     (serve it to the Perfetto UI; serve.c)
**
** A separate program, not part of profsum.so: the extension is compiled
** into it (SQLITE_CORE) and registered with sqlite3_auto_extension() on the
** system libsqlite3, so every command is a few SQL calls on one connection
** (profsum_import, profsum_summary_json, profsum_report_md,
** profsum_query_json, profsum_compare_json, profsum_track,
** profsum_history_*, profsum_bundle, wandb_publish).  Behaviour follows the
** reference tool (../shared/reference/summary-v1-tools-spec.md §1): same
** commands and flags, same output convention ("emit": with --output PATH
** the text plus a final newline goes to PATH, whose parent directories are
** created, and PATH is printed; otherwise the text is printed).  See
** docs/cli.md.
**
** Files named on the command line are imported into a temporary database
** that is deleted on exit, or into --db (or the --history .db) when given.
**
** Exit codes: 0 ok, 1 failure, 2 usage, 3 `track --fail-on` triggered.
** Errors go to stderr as "profsum <cmd>: <message>".
**
** Progress: while a local file is imported and stderr is a terminal, a
** thread polls the read position of the trace (the descriptor that the
** import opened, found in /proc/self/fd, position from
** /proc/self/fdinfo/<fd>) and redraws one status line; nothing is printed
** when stderr is not a terminal.
*/
#include <sqlite3.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PROFSUM_VERSION
# define PROFSUM_VERSION "0.0.0-dev"
#endif

#include "compare.h"         /* profsumPyPathStr (linked in statically) */
#include "summary_doc.h"     /* profsumDocFromJson, profsumDocReportMd */
#include "serve.h"              /* the loopback HTTP server of `view` */

/* The extension's entry point (ext/profsum.c), linked in statically. */
int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

#define EXIT_OK      0
#define EXIT_FAIL    1
#define EXIT_USAGE   2
#define EXIT_GATE    3

/* ================================================================== */
/* Process state, cleanup, errors                                      */
/* ================================================================== */

static const char *g_zCmd = 0;      /* current subcommand (error prefix) */
static sqlite3 *g_db = 0;           /* the working connection */
static char g_zTempDb[PATH_MAX];    /* temporary database to delete ("" if none) */
static const char *g_zUserDb = 0;   /* the database the user named (not owned), or 0 */
/* its private directory (mkdtemp), "" if none; shorter than g_zTempDb by
** more than "/profsum.db" */
static char g_zTempDbDir[PATH_MAX - 16];

/* A scratch output (a temporary file beside --output, and a directory if
** one is given) to remove on a signal or a failure.  g_bScratch is cleared before the buffers change and set after,
** so the signal handler never reads a half-written path. */
static char g_zScratchFile[PATH_MAX];
static char g_zScratchDir[PATH_MAX];
static volatile sig_atomic_t g_bScratch = 0;

/* Record zFile (0: none) and zDir (0: none) as the scratch output.  Paths
** that do not fit are not recorded (they are still removed by the code
** that made them, only not on a signal). */
static void scratchSet(const char *zFile, const char *zDir){
  g_bScratch = 0;
  g_zScratchFile[0] = g_zScratchDir[0] = 0;
  if( zFile && strlen(zFile)<sizeof(g_zScratchFile) ) strcpy(g_zScratchFile, zFile);
  if( zDir && strlen(zDir)<sizeof(g_zScratchDir) ) strcpy(g_zScratchDir, zDir);
  g_bScratch = g_zScratchFile[0] || g_zScratchDir[0];
}

/* Remove the temporary database, its side files and its directory, and
** the scratch output.  Async-signal-safe (only unlink/rmdir on prepared
** buffers). */
static void removeTempFiles(void){
  static const char *azSuffix[] = {"", "-journal", "-wal", "-shm"};
  char z[PATH_MAX + 16];
  size_t n, k;
  if( g_bScratch ){
    if( g_zScratchFile[0] ) unlink(g_zScratchFile);
    if( g_zScratchDir[0] ) rmdir(g_zScratchDir);
  }
  if( g_zTempDb[0]==0 ) return;
  n = strlen(g_zTempDb);
  for(k=0; k<sizeof(azSuffix)/sizeof(azSuffix[0]); k++){
    size_t m = strlen(azSuffix[k]);
    memcpy(z, g_zTempDb, n);
    memcpy(z+n, azSuffix[k], m+1);
    unlink(z);
  }
  if( g_zTempDbDir[0] ) rmdir(g_zTempDbDir);
}

static void cleanup(void){
  if( g_db ){ sqlite3_close_v2(g_db); g_db = 0; }
  removeTempFiles();
  g_bScratch = 0;
  g_zTempDb[0] = 0;
  g_zTempDbDir[0] = 0;
}

static void onSignal(int sig){
  removeTempFiles();
  _exit(128 + sig);
}

static void progressAbandon(void);
static int isRemoteSource(const char *z);
static void fmtJsonNum(char *z, size_t n, double v);

/* ================================================================== */
/* Terminal-safe text                                                  */
/* ================================================================== */
/*
** Trace-derived text (op names, region paths, process names, labels, file
** names) may hold terminal control sequences (ESC [ ... CSI, ESC ] ... OSC
** that sets the window title or writes the clipboard, bare C1 controls)
** and newlines that would break a markdown table.  Written to a file or a
** pipe, every byte stays as the reference tool writes it; written to a
** terminal (isatty), each unsafe character is shown as a visible escape:
**
**   \n  \r          newline (where it is not the text's own line end), CR
**   \xNN            any other C0 control but TAB, DEL (0x7f), and each byte
**                   that is not part of valid UTF-8 (0x80..0xff alone)
**   \uNNNN          a C1 control (U+0080..U+009F) and the bidirectional
**                   embedding, override and isolate controls (U+202A..U+202E,
**                   U+2066..U+2069), which reorder what the terminal shows
**
** TAB stays.  A backslash is not doubled, so a name that holds the
** characters "\x1b" looks the same as one that holds ESC: the bytes of a
** file written with --output are the reference.
*/
static int g_bOutTty = 0;           /* stdout is a terminal (set in main) */
static int g_bErrTty = 0;           /* stderr is a terminal (set in main) */

/* The length (1..4) of the valid UTF-8 sequence at z (n bytes available,
** n >= 1), its code point in *pC; 0 when z[0] does not start one (a stray
** continuation byte, an overlong form, a surrogate, above U+10FFFF, or a
** sequence cut short). */
static int utf8Seq(const unsigned char *z, size_t n, unsigned *pC){
  unsigned c = z[0], min;
  int len, i;
  if( c<0x80 ){ *pC = c; return 1; }
  if( c>=0xc2 && c<=0xdf ){ len = 2; c &= 0x1f; min = 0x80; }
  else if( c>=0xe0 && c<=0xef ){ len = 3; c &= 0x0f; min = 0x800; }
  else if( c>=0xf0 && c<=0xf4 ){ len = 4; c &= 0x07; min = 0x10000; }
  else return 0;
  if( n<(size_t)len ) return 0;
  for(i=1; i<len; i++){
    if( (z[i]&0xc0)!=0x80 ) return 0;
    c = (c<<6) | (z[i]&0x3f);
  }
  if( c<min || c>0x10ffff || (c>=0xd800 && c<=0xdfff) ) return 0;
  *pC = c;
  return len;
}

/* 1 if code point c must not reach a terminal as is (see above); a
** newline only when !bKeepNl. */
static int visUnsafe(unsigned c, int bKeepNl){
  if( c=='\t' ) return 0;
  if( c=='\n' ) return !bKeepNl;
  if( c<0x20 || c==0x7f ) return 1;
  if( c>=0x80 && c<0xa0 ) return 1;
  if( (c>=0x202a && c<=0x202e) || (c>=0x2066 && c<=0x2069) ) return 1;
  return 0;
}

/* The visible form of an unsafe code point c (visUnsafe) into z, which
** holds at least 8 bytes; returns its length (2 to 6). */
static int visForm(unsigned c, char *z){
  if( c=='\n' ){ memcpy(z, "\\n", 3); return 2; }
  if( c=='\r' ){ memcpy(z, "\\r", 3); return 2; }
  if( c<0x80 ) return snprintf(z, 8, "\\x%02x", c);
  return snprintf(z, 8, "\\u%04x", c);
}

/* Append the first n bytes of z to the buffer zOut (capacity nOut, at
** least 1) as a terminal may show them (the rules above; newlines kept when
** bKeepNl), NUL-terminated.  Stops before a unit that would not fit, so the
** result never ends inside a UTF-8 sequence or an escape.  Returns the
** length written.  Needs no allocation (used on error paths). */
static size_t visibleInto(char *zOut, size_t nOut, const char *z, size_t n, int bKeepNl){
  const unsigned char *u = (const unsigned char*)z;
  size_t i = 0, j = 0;
  while( i<n ){
    unsigned c;
    char e[8];
    int len = utf8Seq(u+i, n-i, &c), k;
    const char *zUnit;
    if( len==0 ){                          /* a byte that is not UTF-8 */
      k = snprintf(e, sizeof(e), "\\x%02x", u[i]);
      zUnit = e;
      len = 1;
    }else if( visUnsafe(c, bKeepNl) ){
      k = visForm(c, e);
      zUnit = e;
    }else{
      k = len;
      zUnit = (const char*)u+i;
    }
    if( j+(size_t)k+1>nOut ) break;
    memcpy(zOut+j, zUnit, (size_t)k);
    j += (size_t)k;
    i += (size_t)len;
  }
  zOut[j] = 0;
  return j;
}

/* The visible form of z[0..n) (visibleInto) in a new malloc'd buffer,
** its length in *pnOut; 0 when out of memory (the caller decides). */
static char *visibleAlloc(const char *z, size_t n, int bKeepNl, size_t *pnOut){
  size_t nOut = n*4 + 1;                 /* each byte gives at most 4 */
  char *zOut;
  if( n>(SIZE_MAX-1)/4 ) return 0;
  zOut = malloc(nOut);
  if( zOut==0 ) return 0;
  *pnOut = visibleInto(zOut, nOut, z, n, bKeepNl);
  return zOut;
}

/* Write n bytes of z to stream f, as visible text when bTty (newlines
** kept when bKeepNl).  Out of memory: written as is, since an error
** message must still come out (an error path). */
static void writeVisible(FILE *f, int bTty, const char *z, size_t n, int bKeepNl){
  size_t nVis;
  char *zVis = bTty ? visibleAlloc(z, n, bKeepNl, &nVis) : 0;
  if( zVis ){
    fwrite(zVis, 1, nVis, f);
    free(zVis);
  }else{
    fwrite(z, 1, n, f);
  }
}

/* printf-style formatting (C's vsnprintf) into a new malloc'd string; 0
** when out of memory. */
static char *fmtAlloc(const char *zFmt, va_list ap){
  va_list ap2;
  int n;
  char *z;
  va_copy(ap2, ap);
  n = vsnprintf(0, 0, zFmt, ap2);
  va_end(ap2);
  if( n<0 ) return 0;
  z = malloc((size_t)n + 1);
  if( z ) vsnprintf(z, (size_t)n + 1, zFmt, ap);
  return z;
}

/* One line of text on stderr: the formatted message and a newline.  On a
** terminal the message is shown visible (errors quote file names, labels
** and trace text), a newline inside it as "\n". */
static void errLine(const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = fmtAlloc(zFmt, ap);
  va_end(ap);
  if( z ){
    writeVisible(stderr, g_bErrTty, z, strlen(z), 0);
    free(z);
  }else{
    fputs(zFmt, stderr);                 /* out of memory: the bare format */
  }
  fputc('\n', stderr);
  fflush(stderr);
}

/* Print "profsum <cmd>: <message>" to stderr and exit with rc.  On a
** terminal the message is shown visible (errLine). */
static void fail(int rc, const char *zFmt, ...){
  va_list ap;
  char *zMsg;
  progressAbandon();
  fflush(stdout);
  va_start(ap, zFmt);
  zMsg = fmtAlloc(zFmt, ap);
  va_end(ap);
  errLine("profsum%s%s: %s", g_zCmd ? " " : "", g_zCmd ? g_zCmd : "", zMsg ? zMsg : zFmt);
  free(zMsg);
  if( rc==EXIT_USAGE ){
    errLine("Try 'profsum%s%s --help'.", g_zCmd ? " " : "", g_zCmd ? g_zCmd : "");
  }
  cleanup();
  exit(rc);
}

static void *xmalloc(size_t n){
  void *p = malloc(n ? n : 1);
  if( p==0 ) fail(EXIT_FAIL, "out of memory");
  return p;
}
static char *xstrdup(const char *z){
  size_t n = strlen(z);
  char *r = xmalloc(n+1);
  memcpy(r, z, n+1);
  return r;
}
/* sqlite3_vmprintf(); out of memory is fatal.  Freed with sqlite3_free. */
static char *xvprintf(const char *zFmt, va_list ap){
  char *z = sqlite3_vmprintf(zFmt, ap);
  if( z==0 ) fail(EXIT_FAIL, "out of memory");
  return z;
}
static char *xprintf(const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = xvprintf(zFmt, ap);
  va_end(ap);
  return z;                       /* freed with sqlite3_free */
}

/* ================================================================== */
/* Small buffer for building text (JSON options)                       */
/* ================================================================== */
typedef struct Buf { char *z; size_t n, nAlloc; } Buf;

static void bufAppend(Buf *b, const char *z, size_t n){
  if( b->n + n + 1 > b->nAlloc ){
    size_t nNew = (b->nAlloc ? b->nAlloc*2 : 128) + n;
    char *zNew = realloc(b->z, nNew);
    if( zNew==0 ) fail(EXIT_FAIL, "out of memory");
    b->z = zNew;
    b->nAlloc = nNew;
  }
  memcpy(b->z + b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}
static void bufPuts(Buf *b, const char *z){ bufAppend(b, z, strlen(z)); }

/* Append printf-style text (SQLite's formatting: %lld, %.0f, %s, ...); the
** buffer grows as needed, so the text may be of any length.  Out of
** memory is fatal. */
static void bufPrintf(Buf *b, const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = xvprintf(zFmt, ap);
  va_end(ap);
  bufPuts(b, z);
  sqlite3_free(z);
}

/* Append z as a JSON string literal. */
static void bufJsonStr(Buf *b, const char *z){
  const unsigned char *u = (const unsigned char*)z;
  bufPuts(b, "\"");
  for(; *u; u++){
    char esc[8];
    if( *u=='"' || *u=='\\' ){ esc[0] = '\\'; esc[1] = (char)*u; bufAppend(b, esc, 2); }
    else if( *u<0x20 ){ snprintf(esc, sizeof(esc), "\\u%04x", *u); bufPuts(b, esc); }
    else bufAppend(b, (const char*)u, 1);
  }
  bufPuts(b, "\"");
}

/* JSON object under construction: {"k": v, ...}. */
typedef struct JObj { Buf b; int n; } JObj;
static void jobjKey(JObj *o, const char *zKey){
  bufPuts(&o->b, o->n++ ? ", " : "{");
  bufJsonStr(&o->b, zKey);
  bufPuts(&o->b, ": ");
}
static void jobjStr(JObj *o, const char *zKey, const char *zVal){
  jobjKey(o, zKey);
  if( zVal ) bufJsonStr(&o->b, zVal); else bufPuts(&o->b, "null");
}
static void jobjRaw(JObj *o, const char *zKey, const char *zRaw){
  jobjKey(o, zKey);
  bufPuts(&o->b, zRaw);
}
static void jobjInt(JObj *o, const char *zKey, long long v){
  char z[32];
  snprintf(z, sizeof(z), "%lld", v);
  jobjRaw(o, zKey, z);
}
static void jobjNum(JObj *o, const char *zKey, double v){
  char z[40];
  fmtJsonNum(z, sizeof(z), v);
  jobjRaw(o, zKey, z);
}
/* Close the object; returns its text (owned by o, freed with free(o->b.z);
** "{}" when empty).  Call once. */
static const char *jobjEnd(JObj *o){
  if( o->n==0 ) bufPuts(&o->b, "{");
  bufPuts(&o->b, "}");
  return o->b.z;
}

/* ================================================================== */
/* Options                                                             */
/* ================================================================== */
#define OPT_FLAG  0   /* no value */
#define OPT_STR   1   /* a string */
#define OPT_INT   2   /* an integer */
#define OPT_NUM   3   /* a float as Python's float() reads it (parseNum) */
#define OPT_MULTI 4   /* a string, repeatable */
#define OPT_PATH  5   /* a path: the reference's argparse type=Path, so the
                      ** value is str(Path(value)) (profsumPyPathStr); a
                      ** remote source (wandb:, http(s)://) is kept as is */

typedef struct OptSpec {
  const char *zName;        /* without the leading "--" */
  int eKind;                /* OPT_* */
  const char *zMeta;        /* value name in the help text */
  const char *zHelp;        /* one line of help */
} OptSpec;

#define MAX_OPTS 48
#define MAX_MULTI 32
typedef struct Opts {
  const OptSpec *aSpec;
  int nSpec;
  const char *azVal[MAX_OPTS];         /* value (or "1" for a flag); 0 when absent */
  const char *azRaw[MAX_OPTS];         /* the value as given (before OPT_PATH normalization) */
  char *azOwned[MAX_OPTS];             /* normalized OPT_PATH values (sqlite3_free; optsFree) */
  const char *azMulti[MAX_OPTS][MAX_MULTI];
  int anMulti[MAX_OPTS];
  const char *azPos[16];               /* positional arguments */
  int nPos;
} Opts;

typedef struct Cmd {
  const char *zName;
  const char *zSummary;     /* one line for the command list */
  const char *zUsage;       /* synopsis line(s) */
  const char *zDesc;        /* paragraph after the synopsis */
  const OptSpec *aSpec;
  int (*xRun)(Opts*);
  int nMaxPos;              /* positional arguments allowed */
} Cmd;

static void printHelp(const Cmd *c, FILE *f){
  const OptSpec *s;
  fprintf(f, "usage: profsum %s %s\n\n%s\n\noptions:\n", c->zName, c->zUsage, c->zDesc);
  for(s=c->aSpec; s && s->zName; s++){
    char z[80];
    if( s->eKind==OPT_FLAG ) snprintf(z, sizeof(z), "--%s", s->zName);
    else snprintf(z, sizeof(z), "--%s %s", s->zName, s->zMeta ? s->zMeta : "VALUE");
    if( strlen(z)<=30 ) fprintf(f, "  %-30s %s\n", z, s->zHelp);
    else fprintf(f, "  %s\n  %-30s %s\n", z, "", s->zHelp);
  }
  fprintf(f, "  %-30s %s\n", "-h, --help", "show this help and exit");
}

static int specIndex(const Opts *o, const char *zName, size_t nName){
  int i;
  for(i=0; i<o->nSpec; i++){
    if( strlen(o->aSpec[i].zName)==nName && memcmp(o->aSpec[i].zName, zName, nName)==0 ) return i;
  }
  return -1;
}

/* Parse a decimal integer (Python int() of an argparse value: optional
** sign, digits, surrounding whitespace). */
static int parseInt(const char *z, long long *pV){
  char *zEnd;
  long long v;
  while( *z==' ' || *z=='\t' ) z++;
  if( *z==0 ) return 0;
  errno = 0;
  v = strtoll(z, &zEnd, 10);
  if( errno || zEnd==z ) return 0;
  while( *zEnd==' ' || *zEnd=='\t' ) zEnd++;
  if( *zEnd ) return 0;
  *pV = v;
  return 1;
}
/* An ASCII digit run with single underscores between digits (Python's
** float() grammar); returns the length, 0 if none.  Digits go to b. */
static size_t pyDigits(const char *z, Buf *b){
  size_t i = 0;
  if( z[0]<'0' || z[0]>'9' ) return 0;
  for(;;){
    bufAppend(b, z+i, 1);
    i++;
    if( z[i]>='0' && z[i]<='9' ) continue;
    if( z[i]=='_' && z[i+1]>='0' && z[i+1]<='9' ){ i++; continue; }
    return i;
  }
}

/* Python's float() of an argparse value (type=float): surrounding
** whitespace, an optional sign, then "inf", "infinity" or "nan" (any case),
** or decimal digits (single '_' between digits) with an optional fraction
** and exponent.  Hex ("0x10"), "nan(...)", "1e" and trailing text are
** rejected (strtod would take some of them).  Returns 1 and sets *pV. */
static int parseNum(const char *z, double *pV){
  static const char *zWs = " \t\n\r\f\v";
  Buf b;
  size_t n, i = 0, k;
  int neg = 0, ok = 0;
  while( *z && strchr(zWs, *z) ) z++;
  n = strlen(z);
  while( n>0 && strchr(zWs, z[n-1]) ) n--;
  if( n>0 && (z[0]=='+' || z[0]=='-') ){ neg = z[0]=='-'; i = 1; }
  if( (n-i==3 && strncasecmp(z+i, "inf", 3)==0) || (n-i==8 && strncasecmp(z+i, "infinity", 8)==0) ){
    *pV = neg ? -INFINITY : INFINITY;
    return 1;
  }
  if( n-i==3 && strncasecmp(z+i, "nan", 3)==0 ){ *pV = neg ? -NAN : NAN; return 1; }
  memset(&b, 0, sizeof(b));
  bufAppend(&b, neg ? "-" : "+", 1);
  k = pyDigits(z+i, &b);
  i += k;
  if( i<n && z[i]=='.' ){
    size_t f;
    bufAppend(&b, ".", 1);
    f = pyDigits(z+i+1, &b);
    if( k>0 || f>0 ){ ok = 1; i += 1+f; }
  }else{
    ok = k>0;
  }
  if( ok && i<n && (z[i]=='e' || z[i]=='E') ){
    size_t j = i+1, e;
    bufAppend(&b, "e", 1);
    if( j<n && (z[j]=='+' || z[j]=='-') ){ bufAppend(&b, z+j, 1); j++; }
    e = pyDigits(z+j, &b);
    if( e==0 ) ok = 0; else i = j+e;
  }
  if( ok && i==n ) *pV = strtod(b.z, 0);     /* overflow gives ±inf, as Python */
  free(b.z);
  return ok && i==n;
}

/* A double as a JSON number for profsum (jsontree reads Python's
** Infinity, -Infinity and NaN tokens). */
static void fmtJsonNum(char *z, size_t n, double v){
  if( isnan(v) ) snprintf(z, n, "NaN");
  else if( isinf(v) ) snprintf(z, n, "%s", v>0 ? "Infinity" : "-Infinity");
  else snprintf(z, n, "%.17g", v);
}

static void parseOpts(const Cmd *c, Opts *o, int argc, char **argv){
  int i;
  int bOnlyPos = 0;
  memset(o, 0, sizeof(*o));
  o->aSpec = c->aSpec;
  for(o->nSpec=0; c->aSpec && c->aSpec[o->nSpec].zName; o->nSpec++){}
  for(i=0; i<argc; i++){
    const char *z = argv[i];
    if( !bOnlyPos && (strcmp(z, "-h")==0 || strcmp(z, "--help")==0) ){
      printHelp(c, stdout);
      exit(EXIT_OK);
    }
  }
  for(i=0; i<argc; i++){
    const char *z = argv[i], *zEq, *zVal = 0;
    int k;
    if( bOnlyPos || z[0]!='-' || z[1]==0 ){
      if( o->nPos>=c->nMaxPos ) fail(EXIT_USAGE, "unexpected argument '%s'", z);
      o->azPos[o->nPos++] = z;
      continue;
    }
    if( strcmp(z, "--")==0 ){ bOnlyPos = 1; continue; }
    if( z[1]!='-' ) fail(EXIT_USAGE, "unknown option '%s'", z);
    z += 2;
    zEq = strchr(z, '=');
    k = specIndex(o, z, zEq ? (size_t)(zEq-z) : strlen(z));
    if( k<0 ) fail(EXIT_USAGE, "unknown option '--%.*s'", zEq ? (int)(zEq-z) : (int)strlen(z), z);
    if( o->aSpec[k].eKind==OPT_FLAG ){
      if( zEq ) fail(EXIT_USAGE, "option '--%s' takes no value", o->aSpec[k].zName);
      o->azVal[k] = "1";
      continue;
    }
    if( zEq ) zVal = zEq+1;
    else if( i+1<argc ) zVal = argv[++i];
    else fail(EXIT_USAGE, "option '--%s' needs a value (%s)", o->aSpec[k].zName,
              o->aSpec[k].zMeta ? o->aSpec[k].zMeta : "VALUE");
    if( o->aSpec[k].eKind==OPT_INT ){
      long long v;
      if( !parseInt(zVal, &v) ) fail(EXIT_USAGE, "option '--%s' needs an integer, not '%s'", o->aSpec[k].zName, zVal);
    }else if( o->aSpec[k].eKind==OPT_NUM ){
      double v;
      if( !parseNum(zVal, &v) ){
        fail(EXIT_USAGE, "option '--%s' needs a finite number, inf or nan (as Python's float() reads it), "
             "not '%s'", o->aSpec[k].zName, zVal);
      }
    }
    if( o->aSpec[k].eKind==OPT_MULTI ){
      if( o->anMulti[k]>=MAX_MULTI ) fail(EXIT_USAGE, "option '--%s' given too often", o->aSpec[k].zName);
      o->azMulti[k][o->anMulti[k]++] = zVal;
    }
    o->azRaw[k] = zVal;
    if( o->aSpec[k].eKind==OPT_PATH && !isRemoteSource(zVal) ){
      char *zNorm = profsumPyPathStr(zVal);
      if( zNorm==0 ) fail(EXIT_FAIL, "out of memory");
      sqlite3_free(o->azOwned[k]);
      o->azOwned[k] = zNorm;
      zVal = zNorm;
    }
    o->azVal[k] = zVal;          /* the last one wins, as with argparse */
  }
}

/* Free what parseOpts allocated. */
static void optsFree(Opts *o){
  int k;
  for(k=0; k<MAX_OPTS; k++){ sqlite3_free(o->azOwned[k]); o->azOwned[k] = 0; }
}

static int optIdx(const Opts *o, const char *zName){
  int k = specIndex(o, zName, strlen(zName));
  if( k<0 ){ fprintf(stderr, "internal error: option %s\n", zName); abort(); }
  return k;
}
static const char *optStr(const Opts *o, const char *zName){ return o->azVal[optIdx(o, zName)]; }
/* The value as given on the command line (OPT_PATH: not normalized). */
static const char *optRaw(const Opts *o, const char *zName){ return o->azRaw[optIdx(o, zName)]; }
static int optFlag(const Opts *o, const char *zName){ return o->azVal[optIdx(o, zName)]!=0; }
static long long optInt(const Opts *o, const char *zName, long long iDefault){
  const char *z = optStr(o, zName);
  long long v = iDefault;
  if( z ) parseInt(z, &v);
  return v;
}
static const char *optReq(const Opts *o, const char *zName){
  const char *z = optStr(o, zName);
  if( z==0 ) fail(EXIT_USAGE, "the option '--%s' is required", zName);
  return z;
}
static long long optNonNeg(const Opts *o, const char *zName, long long iDefault){
  long long v = optInt(o, zName, iDefault);
  if( v<0 ) fail(EXIT_USAGE, "option '--%s' must be a non-negative integer", zName);
  return v;
}

/* ================================================================== */
/* Database                                                            */
/* ================================================================== */

/* Open zPath (0: a new temporary database, deleted on exit).
**
** The temporary database is "profsum.db" in a directory of its own made by
** mkdtemp in $TMPDIR (default /tmp), mode 0700: SQLite creates the side
** files (-journal, -wal, -shm) under names derived from the database's, and
** in a shared directory such as /tmp anyone could plant a file or symlink
** under those names once the database's name is known (a hot journal that
** SQLite would roll back into the database).  In a private directory no
** one else can. */
static void openDb(const char *zPath){
  int rc;
  if( zPath==0 ){
    const char *zDir = getenv("TMPDIR");
    if( zDir==0 || zDir[0]==0 ) zDir = "/tmp";
    if( snprintf(g_zTempDbDir, sizeof(g_zTempDbDir), "%s/profsum-XXXXXX", zDir)>=(int)sizeof(g_zTempDbDir) ){
      g_zTempDbDir[0] = 0;
      fail(EXIT_FAIL, "TMPDIR is too long");
    }
    if( mkdtemp(g_zTempDbDir)==0 ){
      int e = errno;
      g_zTempDbDir[0] = 0;
      fail(EXIT_FAIL, "cannot create a temporary database in %s: %s", zDir, strerror(e));
    }
    snprintf(g_zTempDb, sizeof(g_zTempDb), "%s/profsum.db", g_zTempDbDir);
    zPath = g_zTempDb;
  }else{
    g_zUserDb = zPath;
  }
  rc = sqlite3_open_v2(zPath, &g_db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
  if( rc!=SQLITE_OK ){
    fail(EXIT_FAIL, "cannot open database '%s': %s", zPath, g_db ? sqlite3_errmsg(g_db) : sqlite3_errstr(rc));
  }
  sqlite3_busy_timeout(g_db, 10000);
  if( g_zTempDb[0] ){
    /* scratch data: no need to survive a crash */
    sqlite3_exec(g_db, "PRAGMA synchronous=OFF", 0, 0, 0);
  }
}

/* 1 if zPath is an SQLite database file in WAL mode (header bytes 18 and
** 19 are 2), else 0. */
static int isWalDbFile(const char *zPath){
  unsigned char a[20];
  FILE *f = fopen(zPath, "rb");
  int ok;
  if( f==0 ) return 0;
  ok = fread(a, 1, sizeof(a), f)==sizeof(a)
    && memcmp(a, "SQLite format 3", 16)==0 && a[18]==2 && a[19]==2;
  fclose(f);
  return ok;
}

/* zPath as the path of an SQLite file: URI ("file:" + the path, with '%',
** '?' and '#' escaped; a path starting with "//" gets an empty authority).
** Returns malloc'd text, or 0 when out of memory. */
static char *fileUri(const char *zPath){
  size_t n = strlen(zPath), i, j = 0;
  char *z = malloc(n*3 + 16);
  if( z==0 ) return 0;
  j += (size_t)sprintf(z, "file:%s", zPath[0]=='/' && zPath[1]=='/' ? "//" : "");
  for(i=0; i<n; i++){
    char c = zPath[i];
    if( c=='%' || c=='?' || c=='#' ) j += (size_t)sprintf(z+j, "%%%02x", (unsigned char)c);
    else z[j++] = c;
  }
  z[j] = 0;
  return z;
}

/* After "unable to open database file" on g_zUserDb: when it is a WAL
** database (as profsum leaves one) in a directory this process cannot
** write, say so and what to do, and exit; else return.  SQLite reads a WAL
** database only where it can create its -shm file beside it (not on a
** read-only mount).  An immutable open reads the database file alone, so
** it is offered only when no committed transactions wait in a -wal file. */
static void failWalReadOnly(const char *zMsg){
  char zReal[PATH_MAX], zDir[PATH_MAX], zWal[PATH_MAX + 8];   /* zWal: the real -wal */
  const char *zPath = realpath(g_zUserDb, zReal) ? zReal : g_zUserDb;
  const char *zSlash = strrchr(zPath, '/');
  struct stat st;
  int e;
  if( !isWalDbFile(zPath) ) return;
  if( zSlash==0 ) snprintf(zDir, sizeof(zDir), ".");
  else if( zSlash==zPath ) snprintf(zDir, sizeof(zDir), "/");
  else snprintf(zDir, sizeof(zDir), "%.*s", (int)(zSlash-zPath), zPath);
  if( access(zDir, W_OK)==0 ) return;
  e = errno;
  snprintf(zWal, sizeof(zWal), "%s-wal", zPath);
  if( stat(zWal, &st)==0 && st.st_size>0 ){
    fail(EXIT_FAIL, "%s ('%s' is a WAL database in a directory this process cannot write (%s): "
         "SQLite needs to create '%s-shm' beside it to read it; copy '%s' together with '%s-wal' "
         "to a directory you can write, and read the copy (its -wal holds transactions the "
         "database file does not have yet), see docs/compare.md)",
         zMsg, g_zUserDb, strerror(e), g_zUserDb, g_zUserDb, g_zUserDb);
  }else{
    char *zUri = fileUri(g_zUserDb);
    fail(EXIT_FAIL, "%s ('%s' is a WAL database in a directory this process cannot write (%s): "
         "SQLite needs to create '%s-shm' beside it to read it; copy it to a directory you "
         "can write, or read it in SQL as '%s?immutable=1', see docs/compare.md)",
         zMsg, g_zUserDb, strerror(e), g_zUserDb, zUri ? zUri : g_zUserDb);
  }
}

/* Report the error message of an SQL function: "no such function" gets a
** hint, a WAL database in a read-only directory too, and advice given in
** SQL terms is said in the CLI's. */
static void failSqlMsg(const char *zMsg){
  static const struct { const char *zSql, *zCli; int bToEnd; } aTerm[] = {
    /* the SQL text goes on with the label and the options' effects: the
    ** CLI has --replace (no unique label: it names each trace itself) */
    {"choose another label, pass '{\"unique_label\": true}'",
     "choose another --label or pass --replace (which deletes that trace and stores this one)", 1},
    {"options entity/project or ", "--entity/--project or ", 0},
  };
  size_t k;
  if( strstr(zMsg, "no such function")!=0 ){
    fail(EXIT_FAIL, "%s (this build of profsum does not provide that SQL function yet)", zMsg);
  }
  if( strstr(zMsg, "unable to open database file")!=0 && g_zUserDb ) failWalReadOnly(zMsg);
  for(k=0; k<sizeof(aTerm)/sizeof(aTerm[0]); k++){
    const char *zAt = strstr(zMsg, aTerm[k].zSql);
    if( zAt ){
      fail(EXIT_FAIL, "%.*s%s%s", (int)(zAt-zMsg), zMsg, aTerm[k].zCli,
           aTerm[k].bToEnd ? "" : zAt+strlen(aTerm[k].zSql));
    }
  }
  fail(EXIT_FAIL, "%s", zMsg);
}

/* Report the connection's SQL error (failSqlMsg). */
static void failSql(const char *zSql){
  (void)zSql;
  failSqlMsg(sqlite3_errmsg(g_db));
}

/* Prepare zSql and bind the arguments described by zTypes:
**   't' const char* (0 binds NULL), 'i' sqlite3_int64, 'd' double. */
static sqlite3_stmt *prepareV(const char *zSql, const char *zTypes, va_list ap){
  sqlite3_stmt *p = 0;
  int i;
  if( sqlite3_prepare_v2(g_db, zSql, -1, &p, 0)!=SQLITE_OK ) failSql(zSql);
  for(i=0; zTypes && zTypes[i]; i++){
    switch( zTypes[i] ){
      case 't': {
        const char *z = va_arg(ap, const char*);
        if( z ) sqlite3_bind_text(p, i+1, z, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(p, i+1);
        break;
      }
      case 'i': sqlite3_bind_int64(p, i+1, va_arg(ap, sqlite3_int64)); break;
      case 'd': sqlite3_bind_double(p, i+1, va_arg(ap, double)); break;
      default: abort();
    }
  }
  return p;
}

/* Run a one-row query; return column 0 as a malloc'd string (0 for NULL
** or no row).  Errors are fatal (exit 1). */
static char *sqlText(const char *zSql, const char *zTypes, ...){
  va_list ap;
  sqlite3_stmt *p;
  char *zRes = 0;
  int rc;
  va_start(ap, zTypes);
  p = prepareV(zSql, zTypes, ap);
  va_end(ap);
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(p, 0);
    if( z ) zRes = xstrdup(z);
    else if( sqlite3_errcode(g_db)==SQLITE_NOMEM ) fail(EXIT_FAIL, "out of memory");
  }else if( rc!=SQLITE_DONE ){
    sqlite3_finalize(p);
    failSql(zSql);
  }
  sqlite3_finalize(p);
  return zRes;
}

/* Like sqlText, but errors are returned: *pzErr (malloc'd) is set and 0
** returned. */
static char *sqlTextTry(char **pzErr, const char *zSql, const char *zTypes, ...){
  va_list ap;
  sqlite3_stmt *p = 0;
  char *zRes = 0;
  int rc, i;
  *pzErr = 0;
  va_start(ap, zTypes);
  if( sqlite3_prepare_v2(g_db, zSql, -1, &p, 0)!=SQLITE_OK ){
    va_end(ap);
    *pzErr = xstrdup(sqlite3_errmsg(g_db));
    return 0;
  }
  for(i=0; zTypes && zTypes[i]; i++){
    if( zTypes[i]=='t' ){
      const char *z = va_arg(ap, const char*);
      if( z ) sqlite3_bind_text(p, i+1, z, -1, SQLITE_TRANSIENT); else sqlite3_bind_null(p, i+1);
    }else{
      sqlite3_bind_int64(p, i+1, va_arg(ap, sqlite3_int64));
    }
  }
  va_end(ap);
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(p, 0);
    if( z ) zRes = xstrdup(z);
  }else if( rc!=SQLITE_DONE ){
    *pzErr = xstrdup(sqlite3_errmsg(g_db));
  }
  sqlite3_finalize(p);
  return zRes;
}

/* Does a table exist in main? */
static int tableExists(const char *zName){
  char *zErr = 0;
  char *z = sqlTextTry(&zErr, "SELECT 1 FROM main.sqlite_schema WHERE type='table' AND name=?1", "t", zName);
  int bExists = z!=0;
  /* a database that cannot be read is not one without the table */
  if( zErr && strstr(zErr, "unable to open database file")!=0 ) failSqlMsg(zErr);
  free(zErr);
  free(z);
  return bExists;
}

/* ================================================================== */
/* Files                                                               */
/* ================================================================== */
static int pathExists(const char *z){
  struct stat st;
  return stat(z, &st)==0;
}
static int isDir(const char *z){
  struct stat st;
  return stat(z, &st)==0 && S_ISDIR(st.st_mode);
}
/* A source profsum_import fetches itself (no local file). */
static int isRemoteSource(const char *z){
  return strncmp(z, "wandb:", 6)==0 || strncmp(z, "wandb-run:", 10)==0
      || strncmp(z, "http://", 7)==0 || strncmp(z, "https://", 8)==0;
}

/* mkdir -p of the directory part of zPath (bParentOnly) or of zPath. */
static void makeDirs(const char *zPath, int bParentOnly){
  char *z = xstrdup(zPath);
  size_t n = strlen(z), i;
  if( bParentOnly ){
    while( n>0 && z[n-1]!='/' ) n--;
    while( n>1 && z[n-1]=='/' ) n--;
    z[n] = 0;
  }
  for(i=1; i<=n; i++){
    if( z[i]=='/' || z[i]==0 ){
      char c = z[i];
      z[i] = 0;
      if( mkdir(z, 0777)!=0 && errno!=EEXIST ){
        int e = errno;
        fail(EXIT_FAIL, "cannot create directory '%s': %s", z, strerror(e));
      }
      z[i] = c;
    }
  }
  free(z);
}

/* Write all n bytes of z to stdout; a closed pipe ends the program
** quietly.  When stdout is a terminal the text is shown visible (see
** "Terminal-safe text"; newlines kept when bKeepNl); to a file or a pipe
** the bytes go as they are. */
static void writeStdoutVis(const char *z, size_t n, int bKeepNl){
  char *zVis = 0;
  if( g_bOutTty ){
    zVis = visibleAlloc(z, n, bKeepNl, &n);
    if( zVis==0 ) fail(EXIT_FAIL, "out of memory");
    z = zVis;
  }
  if( fwrite(z, 1, n, stdout)!=n || fflush(stdout)!=0 ){
    int e = errno;
    free(zVis);
    if( e==EPIPE ){ cleanup(); exit(EXIT_FAIL); }
    fail(EXIT_FAIL, "cannot write to stdout: %s", strerror(e));
  }
  free(zVis);
}

/* writeStdoutVis, newlines kept (text of several lines). */
static void writeStdout(const char *z, size_t n){ writeStdoutVis(z, n, 1); }

/* Write all n bytes of z to fd (short writes and EINTR retried).  Returns
** 0, or -1 with errno set. */
static int writeAll(int fd, const char *z, size_t n){
  while( n>0 ){
    ssize_t w = write(fd, z, n);
    if( w<0 && errno==EINTR ) continue;
    if( w<=0 ){ if( w==0 ) errno = EIO; return -1; }
    z += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Create a new, empty file beside zPath to write the output into:
** "<zPath>.tmp-" and 12 random hex digits, opened with
** O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC and mode 0666 (less the
** umask, as fopen would create it).  O_EXCL: nothing that exists under
** that name (a file, or a symlink planted by someone else who may write in
** that directory) is ever opened; another random name is tried then (100
** times at most).  The name is recorded as the scratch output (removed on
** a signal; the caller clears it with scratchSet(0, 0) before it renames
** or removes the file).  Returns the descriptor and sets *pzTmp
** (sqlite3_free), or -1 with errno set and *pzTmp = 0. */
static int createTempBeside(const char *zPath, char **pzTmp){
  int i;
  *pzTmp = 0;
  for(i=0; i<100; i++){
    unsigned char a[6];
    char *z;
    int fd;
    sqlite3_randomness((int)sizeof(a), a);
    z = xprintf("%s.tmp-%02x%02x%02x%02x%02x%02x", zPath, a[0], a[1], a[2], a[3], a[4], a[5]);
    fd = open(z, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0666);
    if( fd>=0 ){
      scratchSet(z, 0);
      *pzTmp = z;
      return fd;
    }
    sqlite3_free(z);
    if( errno!=EEXIST && errno!=ELOOP && errno!=EINTR ) return -1;
  }
  errno = EEXIST;
  return -1;
}

/* Write z (+ a final newline if missing) to zPath atomically: a new
** temporary file in the same directory (createTempBeside: never through
** an existing file or symlink), fsync'ed, then renamed over zPath (a
** symlink at zPath is replaced, not followed).  The file gets mode 0666
** less the umask.  Parent directories are created.  Errors are fatal
** (exit 1, the temporary file removed). */
static void writeFileAtomic(const char *zPath, const char *z){
  size_t n = strlen(z);
  char *zTmp;
  int fd, e;
  int bNl = n==0 || z[n-1]!='\n';
  makeDirs(zPath, 1);
  fd = createTempBeside(zPath, &zTmp);
  if( fd<0 ){
    e = errno;
    fail(EXIT_FAIL, "cannot write '%s': %s", zPath, strerror(e));
  }
  if( writeAll(fd, z, n)!=0 || (bNl && writeAll(fd, "\n", 1)!=0) || fsync(fd)!=0 ){
    e = errno;
    close(fd);
  }else{
    e = close(fd)!=0 ? errno : 0;
  }
  scratchSet(0, 0);
  if( e || rename(zTmp, zPath)!=0 ){
    if( e==0 ) e = errno;
    unlink(zTmp);
    fail(EXIT_FAIL, "cannot write '%s': %s", zPath, strerror(e));
  }
  sqlite3_free(zTmp);
}

/* zPath as an absolute path: itself when it starts with '/', else the
** current directory joined with it ("." gives the current directory).
** The path need not exist; nothing is resolved (no symlinks, no "..").
** Returns a malloc'd string; errors are fatal. */
static char *absolutePath(const char *zPath){
  char *zCwd, *zRes;
  size_t nCwd, nPath;
  if( zPath[0]=='/' ) return xstrdup(zPath);
  zCwd = getcwd(0, 0);                 /* glibc: malloc'd, any length */
  if( zCwd==0 ){
    int e = errno;
    fail(EXIT_FAIL, "'%s': cannot tell the current directory: %s", zPath, strerror(e));
  }
  if( strcmp(zPath, ".")==0 || zPath[0]==0 ) return zCwd;
  nCwd = strlen(zCwd);
  nPath = strlen(zPath);
  zRes = xmalloc(nCwd + 1 + nPath + 1);
  memcpy(zRes, zCwd, nCwd);
  if( nCwd==0 || zCwd[nCwd-1]!='/' ) zRes[nCwd++] = '/';
  memcpy(zRes+nCwd, zPath, nPath+1);
  free(zCwd);
  return zRes;
}

/* The reference's emit(): to --output (printing the path) or stdout
** (print(text): the text and a newline). */
static void emit(const char *zText, const char *zOutput){
  if( zOutput ){
    writeFileAtomic(zOutput, zText);
    writeStdoutVis(zOutput, strlen(zOutput), 0);
    writeStdout("\n", 1);
  }else{
    writeStdout(zText, strlen(zText));
    writeStdout("\n", 1);
  }
}

/* ================================================================== */
/* Progress line                                                       */
/* ================================================================== */
typedef struct Progress {
  int bActive;                /* thread running */
  int bShown;                 /* a line was drawn */
  int bStop;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char zReal[PATH_MAX];       /* realpath of the file read */
  char zName[256];            /* display name (visible, possibly cut short) */
  long long nTotal;           /* file size */
  long long nDone;            /* last position seen */
  double t0;                  /* start time (s) */
  double delay;               /* seconds before the first line */
} Progress;
static Progress g_prog;

static double nowSec(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec*1e-9;
}

/* The largest read position of any descriptor of this process open on
** zReal, from /proc/self/fdinfo; -1 when none is open. */
static long long fdPosition(const char *zReal){
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  long long best = -1;
  if( d==0 ) return -1;
  while( (e = readdir(d))!=0 ){
    char zLink[64], zTarget[PATH_MAX], zInfo[256];
    ssize_t n;
    FILE *f;
    int fd;
    if( e->d_name[0]<'0' || e->d_name[0]>'9' ) continue;
    fd = atoi(e->d_name);
    snprintf(zLink, sizeof(zLink), "/proc/self/fd/%d", fd);
    n = readlink(zLink, zTarget, sizeof(zTarget)-1);
    if( n<=0 ) continue;
    zTarget[n] = 0;
    if( strcmp(zTarget, zReal)!=0 ) continue;
    snprintf(zLink, sizeof(zLink), "/proc/self/fdinfo/%d", fd);
    f = fopen(zLink, "r");
    if( f==0 ) continue;
    while( fgets(zInfo, sizeof(zInfo), f) ){
      long long pos;
      if( sscanf(zInfo, "pos: %lld", &pos)==1 ){ if( pos>best ) best = pos; break; }
    }
    fclose(f);
  }
  closedir(d);
  return best;
}

static void fmtDuration(char *z, size_t n, double s){
  long long t = (long long)(s + 0.5);
  if( t>=3600 ) snprintf(z, n, "%lld:%02lld:%02lld", t/3600, (t/60)%60, t%60);
  else snprintf(z, n, "%lld:%02lld", t/60, t%60);
}

/* Draw the status line (called with g_prog.mu held, from the thread). */
static void progressDraw(void){
  Progress *p = &g_prog;
  double el = nowSec() - p->t0;
  double mb = (double)p->nDone/1e6, tot = (double)p->nTotal/1e6;
  double rate = el>0 ? mb/el : 0;
  char zEta[32] = "--:--";
  char zLine[512];
  if( rate>0 && p->nDone>0 && p->nTotal>=p->nDone ){
    fmtDuration(zEta, sizeof(zEta), (tot-mb)/rate);
  }
  snprintf(zLine, sizeof(zLine), "\rprofsum: importing %s  %.1f/%.1f MB  %3.0f%%  %.1f MB/s  ETA %s\033[K",
           p->zName, mb, tot, p->nTotal>0 ? 100.0*(double)p->nDone/(double)p->nTotal : 0.0, rate, zEta);
  fputs(zLine, stderr);
  fflush(stderr);
  p->bShown = 1;
}

static void *progressThread(void *pArg){
  Progress *p = &g_prog;
  (void)pArg;
  pthread_mutex_lock(&p->mu);
  if( p->delay<=0 ) progressDraw();
  while( !p->bStop ){
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200*1000*1000;
    if( ts.tv_nsec>=1000000000 ){ ts.tv_sec++; ts.tv_nsec -= 1000000000; }
    pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    if( p->bStop ) break;
    {
      long long pos = fdPosition(p->zReal);
      if( pos>p->nDone ) p->nDone = pos;
    }
    if( nowSec() - p->t0 >= p->delay ) progressDraw();
  }
  pthread_mutex_unlock(&p->mu);
  return 0;
}

/* Start the progress line for reading zFile, if stderr is a terminal. */
static void progressStart(const char *zFile){
  Progress *p = &g_prog;
  struct stat st;
  const char *z = getenv("PROFSUM_PROGRESS_DELAY_MS");
  memset(p, 0, sizeof(*p));
  if( !isatty(2) || getenv("PROFSUM_NO_PROGRESS") ) return;
  if( realpath(zFile, p->zReal)==0 || stat(p->zReal, &st)!=0 || !S_ISREG(st.st_mode) ) return;
  p->nTotal = (long long)st.st_size;
  {
    const char *zBase = strrchr(zFile, '/') ? strrchr(zFile, '/')+1 : zFile;
    visibleInto(p->zName, sizeof(p->zName), zBase, strlen(zBase), 0);
  }
  p->delay = z ? atof(z)/1000.0 : 0.5;
  p->t0 = nowSec();
  pthread_mutex_init(&p->mu, 0);
  pthread_cond_init(&p->cv, 0);
  if( pthread_create(&p->thread, 0, progressThread, 0)!=0 ) return;
  p->bActive = 1;
}

/* Stop the thread; returns whether a line is on the screen. */
static int progressStop(void){
  Progress *p = &g_prog;
  if( !p->bActive ) return 0;
  pthread_mutex_lock(&p->mu);
  p->bStop = 1;
  pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, 0);
  p->bActive = 0;
  return p->bShown;
}

/* Stop and erase the line (before an error message). */
static void progressAbandon(void){
  if( progressStop() ){
    fputs("\r\033[K", stderr);
    g_prog.bShown = 0;
  }
}

/* Stop and replace the line by the final one. */
static void progressFinish(sqlite3_int64 iTrace){
  Progress *p = &g_prog;
  double el;
  char *zEv, *zErr = 0;
  if( !progressStop() ) return;
  el = nowSec() - p->t0;
  zEv = sqlTextTry(&zErr, "SELECT num_events_total FROM main.profsum_trace WHERE trace_id=?1", "i", iTrace);
  fprintf(stderr, "\rprofsum: imported %s  %.1f MB  %s%s%.1f s  %.1f MB/s\033[K\n",
          p->zName, (double)p->nTotal/1e6, zEv ? zEv : "", zEv ? " events  " : "",
          el, el>0 ? (double)p->nTotal/1e6/el : 0.0);
  fflush(stderr);
  free(zEv);
  free(zErr);
  p->bShown = 0;
}

/* ================================================================== */
/* Import                                                              */
/* ================================================================== */

/* From ext/import.c, linked into this program (sqlite3_malloc'd results). */
char *profsumDefaultLabel(const char *zSource);
char *profsumSummaryFileProblem(const char *zPath);

/* The import options zOpts (JSON text or NULL) with key zKey set to the
** JSON value zJsonValue (malloc'd). */
static char *optsWith(const char *zOpts, const char *zKey, const char *zJsonValue){
  char *zPath = xprintf("$.%s", zKey);
  char *z = sqlText("SELECT json_set(coalesce(?1, '{}'), ?2, json(?3))", "ttt", zOpts, zPath, zJsonValue);
  sqlite3_free(zPath);
  if( z==0 ) fail(EXIT_FAIL, "cannot set '%s' in the import options", zKey);
  return z;
}

/* Import options from the knob flags (absent → profsum_import defaults). */
static char *knobOptions(const Opts *o, int bReplace, const char *zSeries){
  JObj j;
  const char *zMode = 0;
  memset(&j, 0, sizeof(j));
  if( specIndex(o, "warmup-steps", 12)>=0 && optStr(o, "warmup-steps") ){
    jobjInt(&j, "warmup_steps", optNonNeg(o, "warmup-steps", 5));
  }
  if( specIndex(o, "hot-op-limit", 12)>=0 && optStr(o, "hot-op-limit") ){
    jobjInt(&j, "hot_op_limit", optNonNeg(o, "hot-op-limit", 25));
  }
  if( specIndex(o, "breakdown-mode", 14)>=0 && (zMode = optStr(o, "breakdown-mode"))!=0 ){
    if( strcmp(zMode, "exclusive_per_track")!=0 && strcmp(zMode, "exclusive_global")!=0 ){
      fail(EXIT_USAGE, "option '--breakdown-mode': invalid choice '%s' (choose from "
           "'exclusive_per_track', 'exclusive_global')", zMode);
    }
    jobjStr(&j, "breakdown_mode", zMode);
  }
  if( zSeries ) jobjStr(&j, "series", zSeries);
  if( bReplace ) jobjRaw(&j, "replace", "true");
  return (char*)jobjEnd(&j);
}

/*
** Import zSource (a trace file, an artifact folder, a v1 summary file, or
** a wandb:/wandb-run:/URL source) under zLabel (0: derived from the file,
** made unique) with options zOpts.  Returns the trace_id.
*/
static sqlite3_int64 importSource(const char *zSource, const char *zLabel, const char *zOpts){
  char *zLab, *zId, *zErr = 0, *zWith = 0;
  sqlite3_int64 id;
  if( !isRemoteSource(zSource) && !pathExists(zSource) ){
    fail(EXIT_FAIL, "'%s': %s", zSource, strerror(ENOENT));
  }
  zLab = zLabel ? xstrdup(zLabel) : 0;
  if( zLab==0 ){
    /* The label profsum_import derives (a W&B source: its artifact name),
    ** made unique inside the import's write transaction ("unique_label":
    ** -2, -3, ...), so concurrent jobs never pick the same; NULL, so that
    ** 'reuse' takes a stored trace of the same file whatever its label. */
    if( !isRemoteSource(zSource) ){
      char *zL = profsumDefaultLabel(zSource);
      if( zL==0 || zL[0]==0 ) zLab = xstrdup("trace");   /* nothing to derive from */
      sqlite3_free(zL);
    }
    zWith = optsWith(zOpts, "unique_label", "true");
    zOpts = zWith;
  }
  if( !isRemoteSource(zSource) ){
    if( isDir(zSource) ){
      char *zPick = sqlTextTry(&zErr, "SELECT path FROM profsum_find_traces(?1) WHERE picked LIMIT 1", "t", zSource);
      free(zErr);
      zErr = 0;
      if( zPick ){ progressStart(zPick); free(zPick); }
    }else{
      progressStart(zSource);
    }
  }
  zId = sqlTextTry(&zErr, "SELECT profsum_import(?1, ?2, ?3)", "ttt", zSource, zLab, zOpts);
  if( zErr ) failSqlMsg(zErr);
  if( zId==0 ) fail(EXIT_FAIL, "profsum_import returned no trace id for '%s'", zSource);
  id = strtoll(zId, 0, 10);
  progressFinish(id);
  free(zId);
  free(zLab);
  free(zWith);
  return id;
}

/* Import a file given where a summary is expected (--summary, --before,
** --after, --before-summary, --after-summary): a profile_summary.v1
** summary, a trace, or a folder/remote source.  JSON that is neither is an
** error here (the reference: "Expected JSON object in summary '<path>'."
** for a non-object), where profsum_import would read it as a trace with no
** events. */
static sqlite3_int64 importSummary(const char *zSource, const char *zOpts){
  if( !isRemoteSource(zSource) && pathExists(zSource) && !isDir(zSource) ){
    char *zWhy = profsumSummaryFileProblem(zSource);
    if( zWhy ){
      char *z = xstrdup(zWhy);
      sqlite3_free(zWhy);
      fail(EXIT_FAIL, "%s", z);
    }
  }
  return importSource(zSource, 0, zOpts);
}

/* A trace argument: an existing path (or remote source) is imported (as a
** summary: importSummary); else, when a database was given, a label or
** trace_id in it.  zArg is the path as str(Path) gives it (OPT_PATH), zRaw
** the text as given (the label looked up; 0: zArg). */
static sqlite3_int64 traceArg(const char *zOpt, const char *zArg, const char *zRaw, int bHaveDb,
                              const char *zOpts, sqlite3_int64 idOther){
  char *zId;
  if( isRemoteSource(zArg) || pathExists(zArg) ){
    /* Into a database file: a trace stored before from the same file, with
    ** the same options and profsum version, is used again (profsum_import's
    ** 'reuse'), so a CI job that tracks one baseline run after run stores
    ** it once.  Not for the after side when that is the before side's
    ** trace (idOther): a file compared with itself is read twice, as
    ** without a database and as the reference does. */
    char *zReuse;
    sqlite3_int64 id;
    if( !bHaveDb ) return importSummary(zArg, zOpts);
    zReuse = optsWith(zOpts, "reuse", "true");
    id = importSummary(zArg, zReuse);
    free(zReuse);
    if( idOther && id==idOther ){
      /* another stored copy of the same file (one made by an earlier run
      ** of this same comparison), else a new one */
      char *zTwin = sqlText("SELECT t.trace_id FROM main.profsum_trace AS t, main.profsum_trace AS o "
          "WHERE o.trace_id=?1 AND t.trace_id<>?1 AND t.source_path IS o.source_path "
          "AND t.trace_path IS o.trace_path AND t.sha256 IS o.sha256 AND t.size IS o.size "
          "AND t.options IS o.options AND t.profsum_version IS o.profsum_version "
          "AND t.summary_json IS o.summary_json ORDER BY t.trace_id DESC LIMIT 1", "i", idOther);
      if( zTwin ){
        id = strtoll(zTwin, 0, 10);
        free(zTwin);
      }else{
        id = importSummary(zArg, zOpts);
      }
    }
    return id;
  }
  if( zRaw ) zArg = zRaw;
  if( !bHaveDb ) fail(EXIT_FAIL, "--%s '%s': %s", zOpt, zArg, strerror(ENOENT));
  zId = tableExists("profsum_trace")
      ? sqlText("SELECT trace_id FROM main.profsum_trace WHERE label=?1 "
                "UNION ALL SELECT trace_id FROM main.profsum_trace WHERE ?1 GLOB '[0-9]*' "
                "AND NOT ?1 GLOB '*[^0-9]*' AND trace_id=CAST(?1 AS INTEGER) LIMIT 1", "t", zArg)
      : 0;
  if( zId==0 ){
    fail(EXIT_FAIL, "--%s '%s': no such file, and no trace with that label or id in the database", zOpt, zArg);
  }
  {
    sqlite3_int64 id = strtoll(zId, 0, 10);
    free(zId);
    return id;
  }
}

/* The trace of report/query/publish: --summary PATH or --trace LABEL
** (with --db). */
static sqlite3_int64 summaryArg(const Opts *o, const char *zOpts){
  const char *zSum = optStr(o, "summary"), *zTrace = optStr(o, "trace");
  if( zSum && zTrace ) fail(EXIT_USAGE, "give either --summary or --trace, not both");
  if( zTrace ){
    if( optStr(o, "db")==0 ) fail(EXIT_USAGE, "--trace names a trace of a database: give --db too");
    return traceArg("trace", zTrace, 0, 1, zOpts, 0);
  }
  if( zSum==0 ) fail(EXIT_USAGE, "the option '--summary' is required (or --db with --trace)");
  if( optStr(o, "db") && (isRemoteSource(zSum) || pathExists(zSum)) ){
    return traceArg("summary", zSum, 0, 1, zOpts, 0);  /* imported once (reuse) */
  }
  return importSummary(zSum, zOpts);
}

/* ================================================================== */
/* W&B helpers                                                         */
/* ================================================================== */

/* --entity/--project/--download-root reach the fetch functions through the
** environment they read (WANDB_ENTITY, WANDB_PROJECT; the download cache
** lives under XDG_CACHE_HOME).  The extension ignores an XDG_CACHE_HOME
** that is not absolute (as the XDG spec says) and would fall back to
** $HOME/.cache, so a relative --download-root is made absolute against the
** current directory first (absolutePath); the directory is created. */
static void wandbEnv(const Opts *o){
  const char *z;
  if( specIndex(o, "entity", 6)>=0 && (z = optStr(o, "entity"))!=0 ) setenv("WANDB_ENTITY", z, 1);
  if( specIndex(o, "project", 7)>=0 && (z = optStr(o, "project"))!=0 ) setenv("WANDB_PROJECT", z, 1);
  if( specIndex(o, "download-root", 13)>=0 && (z = optStr(o, "download-root"))!=0 ){
    char *zAbs = absolutePath(z);
    makeDirs(zAbs, 0);
    if( setenv("XDG_CACHE_HOME", zAbs, 1)!=0 ) fail(EXIT_FAIL, "out of memory");
    free(zAbs);
  }
}

/* Import a W&B run target: its jax_profile artifact with alias zAlias
** (NULL: latest), through profsum_import's "alias" option, so that the
** trace keeps its wandb-run source and run metadata. */
static sqlite3_int64 importRunTarget(const char *zTarget, const char *zAlias, const char *zLabel,
                                      const char *zOpts){
  char *zSrc = xprintf("wandb-run:%s", zTarget);
  char *zWith = zAlias ? sqlText("SELECT json_set(?1, '$.alias', ?2)", "tt", zOpts, zAlias) : 0;
  sqlite3_int64 id;
  if( zAlias && zWith==0 ) fail(EXIT_FAIL, "cannot add the alias '%s' to the import options", zAlias);
  id = importSource(zSrc, zLabel, zWith ? zWith : zOpts);
  free(zWith);
  sqlite3_free(zSrc);
  return id;
}

/* ================================================================== */
/* History files                                                       */
/* ================================================================== */
#define HIST_DB    1
#define HIST_JSONL 2

/* A .db (SQLite header, or a new file not named *.jsonl/.ndjson/.json)
** or a JSONL history (the reference tool's format). */
static int historyKind(const char *z){
  struct stat st;
  size_t n = strlen(z);
  if( stat(z, &st)==0 && S_ISREG(st.st_mode) && st.st_size>0 ){
    char aHdr[16];
    int fd = open(z, O_RDONLY|O_CLOEXEC);
    ssize_t got = -1;
    if( fd>=0 ){ got = read(fd, aHdr, 16); close(fd); }
    if( got==16 && memcmp(aHdr, "SQLite format 3", 16)==0 ) return HIST_DB;
    return HIST_JSONL;
  }
#define ENDS(s) (n>=strlen(s) && strcmp(z+n-strlen(s), s)==0)
  if( ENDS(".jsonl") || ENDS(".ndjson") || ENDS(".json") || ENDS(".txt") ) return HIST_JSONL;
#undef ENDS
  return HIST_DB;
}

/* Open the working database for a --history argument: the .db itself, or
** a temporary one, with the JSONL records imported when bRead (the
** `history` command; track and bundle only append to a JSONL file,
** appendHistory). */
static int openHistory(const char *zHist, const char *zDb, int bRead){
  int k;
  if( zHist==0 ){ openDb(zDb); return 0; }
  k = historyKind(zHist);
  if( k==HIST_DB ){
    if( zDb && strcmp(zDb, zHist)!=0 ) fail(EXIT_USAGE, "--history is a database: --db must be the same file or absent");
    makeDirs(zHist, 1);
    openDb(zHist);
  }else{
    if( zDb ) fail(EXIT_USAGE, "--history '%s' is a JSONL file: it cannot be combined with --db "
                   "(give the database as --history instead)", zHist);
    openDb(0);
    if( bRead && pathExists(zHist) ){
      char *z = sqlText("SELECT profsum_history_import(?1)", "t", zHist);
      free(z);
    }
  }
  return k;
}

/* Append the record just written to the working database (profsum_track,
** or profsum_bundle with "history": true) to a JSONL history, as the
** reference does (tools-spec §4.2): one line, the record as
** json.dumps(record, sort_keys=True) (record_json) and "\n"; parent
** directories are created.  The file is opened O_APPEND and locked
** (flock) while its last byte is checked (a file not ending in "\n" gets
** one first, so two records are never glued together) and the line is
** written with one write(), then fsync'd: concurrent appenders each add
** their line whole, and nothing else in the file is touched. */
static void appendHistory(const char *zHist, int k){
  char *zLine, *zBuf;
  size_t n, off = 0;
  struct stat st;
  int fd, e;
  if( k!=HIST_JSONL ) return;
  zLine = sqlText("SELECT record_json FROM main.profsum_history_record ORDER BY record_id DESC LIMIT 1", "");
  if( zLine==0 ) fail(EXIT_FAIL, "no record to append to '%s'", zHist);
  n = strlen(zLine);
  zBuf = xmalloc(n+2);
  memcpy(zBuf+1, zLine, n);
  zBuf[1+n] = '\n';
  free(zLine);
  makeDirs(zHist, 1);
  fd = open(zHist, O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, 0666);
  if( fd<0 ){
    e = errno;
    free(zBuf);
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
  }
  while( flock(fd, LOCK_EX)!=0 ){
    if( errno!=EINTR ){
      e = errno;
      close(fd);
      free(zBuf);
      fail(EXIT_FAIL, "cannot lock '%s': %s", zHist, strerror(e));
    }
  }
  /* Under the lock: does the file end with a newline? */
  off = 1;
  if( fstat(fd, &st)==0 && st.st_size>0 ){
    char c = '\n';
    int rfd = open(zHist, O_RDONLY|O_CLOEXEC);
    if( rfd>=0 ){
      if( pread(rfd, &c, 1, st.st_size-1)==1 && c!='\n' ){
        zBuf[0] = '\n';
        off = 0;
      }
      close(rfd);
    }
  }
  {
    const char *z = zBuf+off;
    size_t nLeft = n+2-off;
    while( nLeft>0 ){
      ssize_t w = write(fd, z, nLeft);
      if( w<0 && errno==EINTR ) continue;
      if( w<=0 ){
        e = w<0 ? errno : EIO;
        close(fd);
        free(zBuf);
        fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
      }
      z += w;
      nLeft -= (size_t)w;
    }
  }
  if( fsync(fd)!=0 && errno!=EINVAL && errno!=EROFS ){
    e = errno;
    close(fd);
    free(zBuf);
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
  }
  free(zBuf);
  if( close(fd)!=0 ){               /* also releases the lock */
    e = errno;
    fail(EXIT_FAIL, "cannot append to '%s': %s", zHist, strerror(e));
  }
}

/* Thresholds JSON from the four flags (only those given), with "top_k":
** topK when topK >= 0 (profsum_track's thresholds_json). */
static char *thresholdsJson(const Opts *o, long long topK){
  static const char *az[] = {
    "max-step-median-regression-pct", "max_step_median_regression_pct",
    "max-step-p90-regression-pct", "max_step_p90_regression_pct",
    "max-communication-share-regression-abs", "max_communication_share_regression_abs",
    "max-stall-share-regression-abs", "max_stall_share_regression_abs",
  };
  JObj j;
  size_t i;
  memset(&j, 0, sizeof(j));
  for(i=0; i<sizeof(az)/sizeof(az[0]); i+=2){
    const char *z = optStr(o, az[i]);
    double v;
    if( z && parseNum(z, &v) ) jobjNum(&j, az[i+1], v);
  }
  if( topK>=0 ) jobjInt(&j, "top_k", topK);
  return (char*)jobjEnd(&j);
}

/* Strict provenance (compare, track): fail when the comparison's
** provenance status is "fail". */
static void checkProvenance(const char *zCompare){
  char *zStatus = sqlText("SELECT json_extract(?1, '$.provenance_checks.status')", "t", zCompare);
  if( zStatus && strcmp(zStatus, "fail")==0 ){
    char *zMsg;
    free(zStatus);
    zMsg = sqlText("SELECT group_concat(value, ' ') FROM "
                         "(SELECT value FROM json_each(?1, '$.provenance_checks.messages') ORDER BY key)",
                         "t", zCompare);
    if( zMsg && zMsg[0] ) fail(EXIT_FAIL, "Provenance checks failed. %s", zMsg);
    fail(EXIT_FAIL, "Provenance checks failed.");
  }
  free(zStatus);
}

/* ================================================================== */
/* Option tables                                                       */
/* ================================================================== */
#define KNOB_OPTS \
  {"warmup-steps", OPT_INT, "N", "steps numbered below N are warmup (default 5)"}, \
  {"hot-op-limit", OPT_INT, "N", "hot ops kept in the summary (default 25)"}, \
  {"breakdown-mode", OPT_STR, "MODE", "exclusive_per_track (default) or exclusive_global"}

#define THRESHOLD_OPTS \
  {"max-step-median-regression-pct", OPT_NUM, "PCT", "fail above this median step-time regression (default 5.0)"}, \
  {"max-step-p90-regression-pct", OPT_NUM, "PCT", "fail above this p90 step-time regression (default 10.0)"}, \
  {"max-communication-share-regression-abs", OPT_NUM, "X", "warn above this communication share increase (default 0.05)"}, \
  {"max-stall-share-regression-abs", OPT_NUM, "X", "warn above this stall share increase (default 0.05)"}

static const OptSpec SUMMARIZE_OPTS[] = {
  {"trace-file", OPT_PATH, "PATH", "a trace JSON file (.json or .json.gz)"},
  {"xplane-file", OPT_PATH, "PATH", "an .xplane.pb file (not supported: use the trace JSON)"},
  {"xplane-output-dir", OPT_PATH, "DIR", "(reference tool only; not supported)"},
  {"xplane-count-trace-events", OPT_FLAG, 0, "(reference tool only; ignored)"},
  {"artifact", OPT_STR, "REF", "a W&B jax_profile artifact entity/project/name:version"},
  {"run-target", OPT_STR, "RUN", "a W&B run: URL, entity/project/run_id or a bare run id"},
  {"alias", OPT_STR, "ALIAS", "with --run-target: the artifact alias to pick (default latest)"},
  {"entity", OPT_STR, "ENTITY", "W&B entity for a bare run id"},
  {"project", OPT_STR, "PROJECT", "W&B project for a bare run id"},
  {"download-root", OPT_PATH, "DIR", "where W&B downloads go (as XDG_CACHE_HOME)"},
  {"profile-dir", OPT_PATH, "DIR", "an artifact or profile folder (the trace in it is found)"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the summary JSON here and print PATH"},
  {"db", OPT_STR, "DB", "import into this database (default: a temporary one)"},
  {"label", OPT_STR, "LABEL", "label of the trace in --db (default: from the file name)"},
  {"series", OPT_STR, "NAME", "series of the trace in --db (for trends)"},
  {"replace", OPT_FLAG, 0, "replace a trace of the same label in --db"},
  {0,0,0,0}
};

static const OptSpec REPORT_OPTS[] = {
  {"summary", OPT_PATH, "PATH", "a profile_summary.v1 JSON file (or a trace, summarized first)"},
  {"db", OPT_STR, "DB", "a profsum database (with --trace)"},
  {"trace", OPT_STR, "LABEL", "label or trace_id of a trace in --db"},
  {"top-k", OPT_INT, "N", "rows per table (default 10)"},
  {"format", OPT_STR, "md|html", "markdown (default), or one self-contained HTML page with SVG charts"},
  {"kpis", OPT_FLAG, 0, "append profsum's KPI table to the markdown report (not in the reference's)"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the report here and print PATH"},
  {0,0,0,0}
};

static const OptSpec TRIM_OPTS[] = {
  {"trace-file", OPT_STR, "PATH", "the trace to trim (gzip or plain JSON)"},
  {"output", OPT_STR, "PATH", "the smaller trace to write (gzipped JSON)"},
  {"where", OPT_STR, "SQL", "any condition on the columns of trace_events (e.g. \"pid = 3\")"},
  {"pid", OPT_INT, "PID", "only this process (a device), plus its metadata"},
  {"start-us", OPT_STR, "US", "only events starting at or after this time (µs, as in the file)"},
  {"end-us", OPT_STR, "US", "only events starting before this time (µs)"},
  {0,0,0,0}
};

static const OptSpec QUERY_OPTS[] = {
  {"summary", OPT_PATH, "PATH", "a profile_summary.v1 JSON file (or a trace, summarized first)"},
  {"db", OPT_STR, "DB", "a profsum database (with --trace)"},
  {"trace", OPT_STR, "LABEL", "label or trace_id of a trace in --db"},
  {"question", OPT_STR, "TEXT", "the question (see --list)"},
  {"top-k", OPT_INT, "N", "rows per answer (default 10)"},
  {"list", OPT_FLAG, 0, "list the kinds of questions understood, with examples"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the answer JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec COMPARE_OPTS[] = {
  {"before", OPT_PATH, "PATH", "before: a summary or trace file (or a label/id of --db)"},
  {"after", OPT_PATH, "PATH", "after: a summary or trace file (or a label/id of --db)"},
  {"strict-provenance", OPT_FLAG, 0, "fail when the provenance checks fail"},
  {"top-k", OPT_INT, "N", "regressed/improved ops listed (default 10)"},
  {"db", OPT_STR, "DB", "import into / read traces from this database"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the comparison JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec TRACK_OPTS[] = {
  {"before", OPT_PATH, "PATH", "before: a summary or trace file (or a label/id of the history db)"},
  {"after", OPT_PATH, "PATH", "after: a summary or trace file (or a label/id of the history db)"},
  {"strict-provenance", OPT_FLAG, 0, "fail (before recording) when the provenance checks fail"},
  {"top-k", OPT_INT, "N", "regressed/improved ops in the record's comparison (default 10)"},
  THRESHOLD_OPTS,
  {"label", OPT_STR, "LABEL", "label of the record (not of the traces: theirs come from their files)"},
  {"history", OPT_PATH, "PATH", "record into this history: a .db, or a .jsonl file"},
  {"fail-on", OPT_STR, "fail|warn", "exit 3 when the status is fail (or warn or fail)"},
  {"db", OPT_STR, "DB", "same as --history DB.db"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the record JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec HISTORY_OPTS[] = {
  {"history", OPT_PATH, "PATH", "a history .db or .jsonl file"},
  {"tail", OPT_INT, "N", "recent records listed (default 20)"},
  {"output", OPT_PATH, "PATH", "write the JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec BUNDLE_OPTS[] = {
  {"before-summary", OPT_PATH, "PATH", "before: a summary or trace file"},
  {"after-summary", OPT_PATH, "PATH", "after: a summary or trace file"},
  {"before-run-target", OPT_STR, "RUN", "before: a W&B run (when no summary is given)"},
  {"after-run-target", OPT_STR, "RUN", "after: a W&B run (when no summary is given)"},
  {"before", OPT_PATH, "PATH", "same as --before-summary (or a label/id of --db)"},
  {"after", OPT_PATH, "PATH", "same as --after-summary (or a label/id of --db)"},
  {"strict-provenance", OPT_FLAG, 0, "fail before writing anything when provenance checks fail"},
  {"entity", OPT_STR, "ENTITY", "W&B entity for bare run ids"},
  {"project", OPT_STR, "PROJECT", "W&B project for bare run ids"},
  {"download-root", OPT_PATH, "DIR", "where W&B downloads go (as XDG_CACHE_HOME)"},
  KNOB_OPTS,
  {"top-k", OPT_INT, "N", "rows of the comparison and the reports (default 10)"},
  THRESHOLD_OPTS,
  {"label", OPT_STR, "LABEL", "label of the tracking record"},
  {"history", OPT_PATH, "PATH", "also record into this history: a .db, or a .jsonl file"},
  {"output-dir", OPT_PATH, "DIR", "directory for the bundle files (required)"},
  {"db", OPT_STR, "DB", "import into / read traces from this database"},
  {"output", OPT_PATH, "PATH", "write the manifest JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec PUBLISH_OPTS[] = {
  {"summary", OPT_PATH, "PATH", "a profile_summary.v1 JSON file (or a trace, summarized first)"},
  {"db", OPT_STR, "DB", "a profsum database (with --trace)"},
  {"trace", OPT_STR, "LABEL", "label or trace_id of a trace in --db"},
  {"report", OPT_PATH, "PATH", "a markdown report to upload with it"},
  {"entity", OPT_STR, "ENTITY", "W&B entity"},
  {"project", OPT_STR, "PROJECT", "W&B project"},
  {"artifact-name", OPT_STR, "NAME", "artifact name (default profile-summary-<run_id>)"},
  {"alias", OPT_MULTI, "ALIAS", "artifact alias, repeatable (default latest)"},
  {"dry-run", OPT_FLAG, 0, "print what would be published, without network"},
  {"output", OPT_PATH, "PATH", "write the response JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec SQL_OPTS[] = {{0,0,0,0}};

static const OptSpec VIEW_OPTS[] = {
  {"window", OPT_STR, "WHERE", "serve only the events for which WHERE holds (profsum_trim; trace_events columns, ns)"},
  {"port", OPT_INT, "N", "port on 127.0.0.1 (default 9001, the one the Perfetto UI loads from)"},
  {"timeout", OPT_NUM, "SECONDS", "stop serving after this many seconds (default 600, at most 86400)"},
  {"list", OPT_FLAG, 0, "list the log directory's traces, newest session first (no server)"},
  {"extract", OPT_STR, "DEST", "copy the log directory's traces into DEST, same layout (no server)"},
  {0,0,0,0}
};

/* ================================================================== */
/* Commands                                                            */
/* ================================================================== */

static int cmdSummarize(Opts *o){
  const char *zTrace = optStr(o, "trace-file"), *zX = optStr(o, "xplane-file");
  const char *zArt = optStr(o, "artifact"), *zRun = optStr(o, "run-target");
  const char *zDir = optStr(o, "profile-dir"), *zDb = optStr(o, "db");
  char *zOpts, *zJson;
  sqlite3_int64 id;
  if( !zTrace && !zX && !zArt && !zRun && !zDir ){
    fail(EXIT_USAGE, "Specify one of --trace-file, --xplane-file, --profile-dir, --artifact, or --run-target.");
  }
  if( (optStr(o, "label") || optStr(o, "series") || optFlag(o, "replace")) && !zDb ){
    fail(EXIT_USAGE, "--label, --series and --replace apply to --db");
  }
  zOpts = knobOptions(o, optFlag(o, "replace"), optStr(o, "series"));
  if( !zTrace && zX ){
    fail(EXIT_FAIL, "'%s': XPlane protobuf input is not supported; profsum reads the trace JSON "
         "of the same profile (*.trace.json.gz / perfetto_trace.json.gz): use --trace-file or --profile-dir", zX);
  }
  if( optStr(o, "xplane-output-dir") ) fail(EXIT_FAIL, "--xplane-output-dir requires the optional xprof package.");
  wandbEnv(o);
  openDb(zDb);
  if( zTrace ){
    id = importSource(zTrace, optStr(o, "label"), zOpts);
  }else if( zArt ){
    char *zSrc = xprintf("wandb:%s", zArt);
    id = importSource(zSrc, optStr(o, "label"), zOpts);
    sqlite3_free(zSrc);
  }else if( zRun ){
    id = importRunTarget(zRun, optStr(o, "alias"), optStr(o, "label"), zOpts);
  }else{
    if( !isDir(zDir) ) fail(EXIT_FAIL, "'%s': not a directory", zDir);
    id = importSource(zDir, optStr(o, "label"), zOpts);
  }
  zJson = sqlText("SELECT profsum_summary_json(?1)", "i", id);
  if( zJson==0 ) fail(EXIT_FAIL, "profsum_summary_json returned nothing");
  emit(zJson, optStr(o, "output"));
  free(zJson);
  free(zOpts);
  return EXIT_OK;
}

/* A --db that does not exist while every trace argument (azArg, nArg; 0
** entries skipped) is a label, not a file, folder or remote source: nothing
** to read and nothing to store, so say so before SQLite would create the
** file (a mistyped path).  Nothing is created, nothing deleted. */
static void failMissingDbForLabels(const char *zDb, const char *const *azArg, int nArg){
  int i;
  if( zDb==0 || zDb[0]==0 || strcmp(zDb, ":memory:")==0 || strncmp(zDb, "file:", 5)==0 ) return;
  if( pathExists(zDb) ) return;
  for(i=0; i<nArg; i++){
    if( azArg[i] && (isRemoteSource(azArg[i]) || pathExists(azArg[i])) ) return;
  }
  fail(EXIT_FAIL, "--db '%s': no such database: the traces named are labels, not files, so "
       "there is nothing to read (check the path)", zDb);
}

/* Before opening --db (SQLite would create a missing one): a --trace label
** of a --db that does not exist, or a --summary file that does not exist,
** is an error now, so no empty database is left behind by a typo. */
static void failBeforeDb(const Opts *o){
  const char *zSum = optStr(o, "summary"), *zTrace = optStr(o, "trace");
  if( zTrace ){                          /* --trace names a label of --db */
    const char *az[1] = {zTrace};
    failMissingDbForLabels(optStr(o, "db"), az, 1);
  }
  if( zSum && !zTrace && !isRemoteSource(zSum) && !pathExists(zSum) ){
    fail(EXIT_FAIL, "'%s': %s", zSum, strerror(ENOENT));
  }
}

/* Append to b the visible form (JSON-escaped) of an unsafe code point c,
** or, when bByte, of a byte c that is not UTF-8: "\\x1b" in the JSON text
** is the four characters \x1b in the string. */
static void bufJsonVisible(Buf *b, unsigned c, int bByte){
  char e[8];
  int k = bByte ? snprintf(e, sizeof(e), "\\x%02x", c) : visForm(c, e), i;
  for(i=0; i<k; i++){
    if( e[i]=='\\' ) bufAppend(b, "\\\\", 2);
    else bufAppend(b, e+i, 1);
  }
}

/* The JSON text zJson with every unsafe character inside its strings
** (visUnsafe, newlines included, whether written raw or as an escape such
** as \n or \u001b) replaced by its visible form, and bytes that are not
** UTF-8 by \xNN; everything else byte for byte.  Text that is not JSON is
** transformed all the same (the parser that reads the result says what is
** wrong).  Returns a malloc'd string. */
static char *jsonVisible(const char *zJson){
  const unsigned char *u = (const unsigned char*)zJson;
  size_t n = strlen(zJson), i = 0;
  int inStr = 0;
  Buf b;
  memset(&b, 0, sizeof(b));
  bufAppend(&b, "", 0);
  while( i<n ){
    unsigned c = u[i], cp = 0x110000;       /* 0x110000: no code point */
    size_t len = 1;
    if( !inStr || c=='"' ){
      if( c=='"' ) inStr = !inStr;
      bufAppend(&b, (const char*)u+i, 1);
      i++;
      continue;
    }
    if( c=='\\' && i+1<n ){
      len = 2;
      switch( u[i+1] ){
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'b': cp = 0x08; break;
        case 'f': cp = 0x0c; break;
        case 'u': {
          unsigned v = 0;
          size_t k;
          for(k=2; k<6 && i+k<n && isxdigit(u[i+k]); k++){
            v = v*16 + (unsigned)(isdigit(u[i+k]) ? u[i+k]-'0' : (u[i+k]|0x20)-'a'+10);
          }
          if( k==6 ){ cp = v; len = 6; }  /* a surrogate is never unsafe: kept */
          break;
        }
        default: break;                      /* \" \\ \/ : kept */
      }
      if( cp<0x110000 && visUnsafe(cp, 0) ) bufJsonVisible(&b, cp, 0);
      else bufAppend(&b, (const char*)u+i, len);
      i += len;
      continue;
    }
    len = (size_t)utf8Seq(u+i, n-i, &cp);
    if( len==0 ){ bufJsonVisible(&b, c, 1); len = 1; }
    else if( visUnsafe(cp, 0) ) bufJsonVisible(&b, cp, 0);
    else bufAppend(&b, (const char*)u+i, len);
    i += len;
  }
  return b.z;
}

/* Append to b the text z (0: "") as a terminal shows it in a table cell:
** visible, a newline as \n. */
static void bufCellVisible(Buf *b, const char *z){
  size_t n;
  char *zVis;
  if( z==0 ) return;
  zVis = visibleAlloc(z, strlen(z), 0, &n);
  if( zVis==0 ) fail(EXIT_FAIL, "out of memory");
  bufAppend(b, zVis, n);
  free(zVis);
}

/* Append to b the KPI section of report zReport (profsum_report_md(id, k,
** '{"kpis": true}')) as a terminal shows it: every row rebuilt from the
** rows of profsum_kpis with its text cells visible (bufCellVisible), after
** checking that the section is exactly those rows (the value cell is taken
** from the section as it is).  When the section is not what is expected,
** it is appended unchanged (the caller's output filter still shows its
** control characters escaped; only a newline in a cell then stays). */
static void kpisForTerminal(Buf *b, sqlite3_int64 id, long long k, const char *zReport){
  static const char zHead[] = "\n## KPIs\n| Kind | KPI | Device | Value | Unit | Band | Explanation |\n"
                              "|---|---|---|---:|---|---|---|\n";
  char *zBase = sqlText("SELECT profsum_report_md(?1, ?2)", "ii", id, (sqlite3_int64)k);
  const char *zKpi, *zAt;
  sqlite3_stmt *p = 0;
  size_t nBase = zBase ? strlen(zBase) : 0;
  int ok = 0;
  Buf out;
  memset(&out, 0, sizeof(out));
  if( zBase==0 || strncmp(zReport, zBase, nBase)!=0 ){
    free(zBase);
    bufPuts(b, zReport);                   /* not base + section: as it is */
    return;
  }
  free(zBase);
  zKpi = zReport + nBase;
  if( zKpi[0]==0 ) return;                 /* no KPI rows */
  if( strncmp(zKpi, zHead, sizeof(zHead)-1)==0
   && sqlite3_prepare_v2(g_db, "SELECT kind, kpi, coalesce(device, 'all'), unit, band, explanation "
                         "FROM main.profsum_kpis WHERE trace_id=?1", -1, &p, 0)==SQLITE_OK ){
    ok = 1;
    bufPuts(&out, zHead);
    zAt = zKpi + sizeof(zHead)-1;
    sqlite3_bind_int64(p, 1, id);
    while( ok && sqlite3_step(p)==SQLITE_ROW ){
      const char *az[6];
      char *zPre, *zSuf;
      size_t nPre, nSuf, nVal;
      int c;
      for(c=0; c<6; c++){
        az[c] = (const char*)sqlite3_column_text(p, c);
        if( az[c]==0 ) az[c] = "";
      }
      zPre = xprintf("| %s | %s | %s | ", az[0], az[1], az[2]);
      zSuf = xprintf(" | %s | %s | %s |\n", az[3], az[4], az[5]);
      nPre = strlen(zPre);
      nSuf = strlen(zSuf);
      ok = strncmp(zAt, zPre, nPre)==0;
      if( ok ){
        nVal = strcspn(zAt+nPre, " |\n");
        ok = nVal>0 && strncmp(zAt+nPre+nVal, zSuf, nSuf)==0;
        if( ok ){
          bufPuts(&out, "| ");
          bufCellVisible(&out, az[0]);
          bufPuts(&out, " | ");
          bufCellVisible(&out, az[1]);
          bufPuts(&out, " | ");
          bufCellVisible(&out, az[2]);
          bufPuts(&out, " | ");
          bufAppend(&out, zAt+nPre, nVal);
          bufPuts(&out, " | ");
          bufCellVisible(&out, az[3]);
          bufPuts(&out, " | ");
          bufCellVisible(&out, az[4]);
          bufPuts(&out, " | ");
          bufCellVisible(&out, az[5]);
          bufPuts(&out, " |\n");
          zAt += nPre + nVal + nSuf;
        }
      }
      sqlite3_free(zPre);
      sqlite3_free(zSuf);
    }
    if( sqlite3_finalize(p)!=SQLITE_OK ) ok = 0;
    if( ok && zAt[0]!=0 ) ok = 0;          /* rows the query did not give */
  }
  if( ok ) bufPuts(b, out.z);
  else bufPuts(b, zKpi);
  free(out.z);
}

/* The markdown report of trace id, top_k k, as a terminal shows it (zReport
** is what profsum_report_md gave; bKpis: with the KPI section): the
** reference's report of the trace's summary document whose strings were
** made visible (jsonVisible), so a name with a newline stays in its table
** cell ("a\nb") and no control character reaches the terminal; the KPI
** section likewise (kpisForTerminal).  Returns a malloc'd text, or 0 when
** the document cannot be rendered so (the caller then prints zReport,
** which its output filter still shows visible). */
static char *reportMdForTerminal(sqlite3_int64 id, long long k, int bKpis, const char *zReport){
  char *zJson = sqlText("SELECT profsum_summary_json(?1)", "i", id), *zVis, *zMd, *zErr = 0;
  ProfsumDoc *d = 0;
  Buf b;
  if( zJson==0 ) return 0;
  zVis = jsonVisible(zJson);
  free(zJson);
  if( profsumDocFromJson(zVis, -1, &d, &zErr)!=SQLITE_OK ){
    sqlite3_free(zErr);
    free(zVis);
    return 0;
  }
  free(zVis);
  zMd = profsumDocReportMd(d, k>1000000 ? 1000000 : (int)k);
  profsumDocFree(d);
  if( zMd==0 ) fail(EXIT_FAIL, "out of memory");
  memset(&b, 0, sizeof(b));
  bufPuts(&b, zMd);
  sqlite3_free(zMd);
  if( bKpis ) kpisForTerminal(&b, id, k, zReport);
  return b.z;
}

static int cmdReport(Opts *o){
  long long k = optNonNeg(o, "top-k", 10);
  const char *zFormat = optStr(o, "format");
  char *zOpts, *zMd;
  sqlite3_int64 id;
  int isHtml = 0;
  if( zFormat ){
    if( strcmp(zFormat, "html")==0 ) isHtml = 1;
    else if( strcmp(zFormat, "md")!=0 ) fail(EXIT_USAGE, "--format must be md or html, not '%s'", zFormat);
  }
  if( isHtml && (k<1 || k>64) ) fail(EXIT_USAGE, "--top-k must be from 1 to 64 with --format html");
  zOpts = knobOptions(o, 0, 0);
  failBeforeDb(o);
  openDb(optStr(o, "db"));
  id = summaryArg(o, zOpts);
  zMd = sqlText(isHtml ? "SELECT profsum_report_html(?1, ?2)"
                : optFlag(o, "kpis") ? "SELECT profsum_report_md(?1, ?2, '{\"kpis\": true}')"
                : "SELECT profsum_report_md(?1, ?2)", "ii", id, (sqlite3_int64)k);
  if( zMd==0 ) fail(EXIT_FAIL, "the report function returned nothing");
  if( g_bOutTty && !isHtml && optStr(o, "output")==0 ){
    char *zTerm = reportMdForTerminal(id, k, optFlag(o, "kpis"), zMd);
    if( zTerm ){ free(zMd); zMd = zTerm; }
  }
  emit(zMd, optStr(o, "output"));
  free(zMd);
  free(zOpts);
  return EXIT_OK;
}

/* Append " AND ts <zOp> <ns>" to b for a --start-us/--end-us value zVal
** (zOpt names the option): a number of µs (strtod), as an integer number
** of ns (%.0f).  A value that is not a number, or whose ns are not finite,
** is a usage error. */
static void trimTimeCond(Buf *b, const char *zOpt, const char *zVal, const char *zOp){
  char *e, z[400];                 /* %.0f of a finite double: at most 309 digits */
  double v = strtod(zVal, &e);
  if( *e || e==zVal || !isfinite(v*1000.0) ) fail(EXIT_USAGE, "--%s must be a number, not '%s'", zOpt, zVal);
  snprintf(z, sizeof(z), " AND ts %s %.0f", zOp, v*1000.0);
  bufPuts(b, z);
}

/* Run profsum_trim(zTrace, zOut, zCond): it writes a temporary file beside
** zOut (mkstemp: an unpredictable name, created exclusively), gives it mode
** 0666 less the umask and renames it over zOut (a symlink at zOut is
** replaced, not followed).  Returns its result (the number of entries
** written, malloc'd text); an error is fatal and leaves nothing behind. */
static char *trimToFile(const char *zTrace, const char *zOut, const char *zCond){
  char *zErr = 0;
  char *zN = sqlTextTry(&zErr, "SELECT profsum_trim(?1, ?2, ?3)", "ttt", zTrace, zOut, zCond);
  if( zErr ) fail(EXIT_FAIL, "%s", zErr);
  return zN;
}

/* profsum trim: profsum_trim() with a condition built from the options
** (in a growing buffer: --where may be of any length). */
static int cmdTrim(Opts *o){
  const char *zTrace = optStr(o, "trace-file"), *zOut = optStr(o, "output");
  const char *zWhere = optStr(o, "where"), *zStart = optStr(o, "start-us"), *zEnd = optStr(o, "end-us");
  const char *zPid = optStr(o, "pid");
  Buf cond;
  char *zN;
  if( zTrace==0 || zOut==0 ) fail(EXIT_USAGE, "--trace-file and --output are required");
  memset(&cond, 0, sizeof(cond));
  bufPuts(&cond, "1");
  if( zWhere ) bufPrintf(&cond, " AND (%s)", zWhere);
  if( zPid ) bufPrintf(&cond, " AND pid = %lld", optNonNeg(o, "pid", 0));
  if( zStart ) trimTimeCond(&cond, "start-us", zStart, ">=");
  if( zEnd ) trimTimeCond(&cond, "end-us", zEnd, "<");
  openDb(0);
  zN = trimToFile(zTrace, zOut, cond.z);
  writeStdoutVis(zOut, strlen(zOut), 0);
  writeStdout("\n", 1);
  {
    char z[64];
    snprintf(z, sizeof(z), "%s entries written\n", zN ? zN : "0");
    writeStdout(z, strlen(z));
  }
  free(zN);
  free(cond.z);
  return EXIT_OK;
}

/* The intents of tools-spec §2, for `query --list`. */
static const struct { const char *zType, *zWhen, *zExample; } aIntent[] = {
  {"top_ops", "contains \"top\" and \"op\"", "What are the top ops by exclusive time?"},
  {"compute_vs_communication", "contains \"comm\"/\"collective\" and one of \"compute\", \"dominating\", \"dominant\", \"worst\"",
   "Is comm or compute dominating? Which collective is worst?"},
  {"collective_breakdown", "contains \"collective\" or \"communication\"", "Show the collective breakdown"},
  {"pre_op_gap", "contains \"gap\" and \"before\" (target: the text after \"before\")", "What is the gap before copy.564?"},
  {"gap_region_context", "contains \"context\" and one of \"gap\", \"op\", \"copy\" (target: after \"for\"/\"of\"/\"op\", or a name like copy.1)",
   "show context for op copy.564"},
  {"hierarchical_regions", "contains \"region\" or \"hierarch\"", "show hierarchical regions"},
  {"bound_analysis", "contains \"memory-bound\" or \"compute-bound\"", "Is this memory-bound or compute-bound?"},
  {"comparison_hint", "contains \"improve\", \"regress\" or \"compare\"", "Did this change regress?"},
  {"optimization_candidates", "matches none of the above", "What should we try next?"},
};

static int cmdQuery(Opts *o){
  long long k = optNonNeg(o, "top-k", 10);
  const char *zQ = optStr(o, "question");
  char *zOpts, *zAns;
  sqlite3_int64 id;
  if( optFlag(o, "list") ){
    size_t i;
    Buf b;
    memset(&b, 0, sizeof(b));
    bufPuts(&b, "Questions are matched by substrings of the lower-cased question (\"stop\" contains \"top\"\n"
                "and \"op\"), in this order: the first that applies answers. The number of rows is\n"
                "--top-k (default 10), not a number in the question.\n");
    for(i=0; i<sizeof(aIntent)/sizeof(aIntent[0]); i++){
      char z[600];
      snprintf(z, sizeof(z), "\n%d. %s\n   when the question %s\n   e.g. profsum query --summary S --question \"%s\"\n",
               (int)i+1, aIntent[i].zType, aIntent[i].zWhen, aIntent[i].zExample);
      bufPuts(&b, z);
    }
    bufPuts(&b, "\nThe answer is JSON with \"query_type\" and the rows (tools-spec section 2).");
    emit(b.z, optStr(o, "output"));
    free(b.z);
    return EXIT_OK;
  }
  if( zQ==0 ) fail(EXIT_USAGE, "the option '--question' is required (or --list)");
  zOpts = knobOptions(o, 0, 0);
  failBeforeDb(o);
  openDb(optStr(o, "db"));
  id = summaryArg(o, zOpts);
  zAns = sqlText("SELECT profsum_query_json(?1, ?2, ?3)", "iti", id, zQ, (sqlite3_int64)k);
  if( zAns==0 ) fail(EXIT_FAIL, "profsum_query_json returned nothing");
  emit(zAns, optStr(o, "output"));
  free(zAns);
  free(zOpts);
  return EXIT_OK;
}

static int cmdCompare(Opts *o){
  const char *zB = optReq(o, "before"), *zA = optReq(o, "after"), *zDb = optStr(o, "db");
  long long k = optNonNeg(o, "top-k", 10);
  char *zOpts = knobOptions(o, 0, 0), *zCmp;
  sqlite3_int64 idB, idA;
  {
    const char *az[2] = {zB, zA};
    failMissingDbForLabels(zDb, az, 2);
  }
  openDb(zDb);
  idB = traceArg("before", zB, optRaw(o, "before"), zDb!=0, zOpts, 0);
  idA = traceArg("after", zA, optRaw(o, "after"), zDb!=0, zOpts, idB);
  zCmp = sqlText("SELECT profsum_compare_json(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
  if( zCmp==0 ) fail(EXIT_FAIL, "profsum_compare_json returned nothing");
  if( optFlag(o, "strict-provenance") ) checkProvenance(zCmp);
  emit(zCmp, optStr(o, "output"));
  free(zCmp);
  free(zOpts);
  return EXIT_OK;
}

/* On stderr (stdout is the reference's record): a side without steady-state
** steps, whose step-time checks can never fail -- a CI gate that looks
** green for that reason alone (the reference says nothing).  zB, zA: the
** --before/--after arguments as given. */
static void noteNoSteadySteps(sqlite3_int64 idB, sqlite3_int64 idA, const char *zB, const char *zA){
  sqlite3_stmt *p = 0;
  if( sqlite3_prepare_v2(g_db, "SELECT t.trace_id, t.label, coalesce(a.count, 0), "
        "json_extract(t.options, '$.warmup_steps'), t.summary_json IS NOT NULL FROM main.profsum_trace AS t "
        "LEFT JOIN main.profsum_step_stats AS a ON a.trace_id=t.trace_id AND a.scope='all' "
        "LEFT JOIN main.profsum_step_stats AS s ON s.trace_id=t.trace_id AND s.scope='steady' "
        "WHERE t.trace_id IN (?1, ?2) AND coalesce(s.count, 0)=0 ORDER BY t.trace_id=?2",
        -1, &p, 0)!=SQLITE_OK ){
    sqlite3_finalize(p);
    return;                                   /* a note only: never an error */
  }
  sqlite3_bind_int64(p, 1, idB);
  sqlite3_bind_int64(p, 2, idA);
  while( sqlite3_step(p)==SQLITE_ROW ){
    int isAfter = sqlite3_column_int64(p, 0)==idA;
    const char *zLabel = (const char*)sqlite3_column_text(p, 1);
    long long nAll = sqlite3_column_int64(p, 2);
    char zSide[1200];
    snprintf(zSide, sizeof(zSide), "--%s '%s' (trace '%s'%s)", isAfter ? "after" : "before",
             isAfter ? zA : zB, zLabel ? zLabel : "?", sqlite3_column_int(p, 4) ? ", a summary file" : "");
    if( sqlite3_column_int(p, 4) ){
      /* a summary file: its warmup_steps were set when it was made */
      errLine("profsum track: note: %s has no steady-state steps: the step-time checks "
              "cannot fail", zSide);
    }else if( nAll==0 ){
      errLine("profsum track: note: %s has no steps (no step markers found): "
              "the step-time checks cannot fail", zSide);
    }else{
      errLine("profsum track: note: %s: its %lld step%s %s warmup (--warmup-steps %lld): "
              "no steady-state steps, so the step-time checks cannot fail; lower --warmup-steps or "
              "profile more steps", zSide, nAll, nAll==1 ? "" : "s", nAll==1 ? "is" : "are all",
              (long long)sqlite3_column_int64(p, 3));
    }
  }
  sqlite3_finalize(p);
}

static int cmdTrack(Opts *o){
  const char *zB = optReq(o, "before"), *zA = optReq(o, "after");
  const char *zHist = optStr(o, "history"), *zDb = optStr(o, "db"), *zFailOn = optStr(o, "fail-on");
  long long k = optNonNeg(o, "top-k", 10);
  char *zOpts = knobOptions(o, 0, 0), *zThr = thresholdsJson(o, k), *zRec, *zStatus;
  sqlite3_int64 idB, idA;
  int kind, bGate = 0;
  if( zFailOn && strcmp(zFailOn, "fail")!=0 && strcmp(zFailOn, "warn")!=0 ){
    fail(EXIT_USAGE, "option '--fail-on': invalid choice '%s' (choose from 'fail', 'warn')", zFailOn);
  }
  if( zHist==0 && zDb ){ zHist = zDb; zDb = 0; }
  kind = openHistory(zHist, zDb, 0);
  idB = traceArg("before", zB, optRaw(o, "before"), kind==HIST_DB, zOpts, 0);
  idA = traceArg("after", zA, optRaw(o, "after"), kind==HIST_DB, zOpts, idB);
  if( optFlag(o, "strict-provenance") ){
    /* checked before anything is recorded */
    char *zCmp = sqlText("SELECT profsum_compare_json(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
    if( zCmp ) checkProvenance(zCmp);
    free(zCmp);
  }
  zRec = sqlText("SELECT profsum_track(?1, ?2, ?3, ?4)", "iitt", idB, idA, optStr(o, "label"), zThr);
  if( zRec==0 ) fail(EXIT_FAIL, "profsum_track returned nothing");
  appendHistory(zHist, kind);
  zStatus = sqlText("SELECT json_extract(?1, '$.assessment.status')", "t", zRec);
  noteNoSteadySteps(idB, idA, optRaw(o, "before") ? optRaw(o, "before") : zB,
                    optRaw(o, "after") ? optRaw(o, "after") : zA);
  if( zFailOn && zStatus ){
    if( strcmp(zStatus, "fail")==0 ) bGate = 1;
    if( strcmp(zFailOn, "warn")==0 && strcmp(zStatus, "warn")==0 ) bGate = 1;
  }
  emit(zRec, optStr(o, "output"));
  if( bGate ){
    errLine("profsum track: status %s (--fail-on %s)", zStatus, zFailOn);
  }
  free(zRec);
  free(zStatus);
  free(zOpts);
  free(zThr);
  return bGate ? EXIT_GATE : EXIT_OK;
}

static int cmdHistory(Opts *o){
  const char *zHist = optReq(o, "history");
  long long nTail = optInt(o, "tail", 20);
  char *zSum;
  if( historyKind(zHist)==HIST_DB && !pathExists(zHist) ){
    openDb(0);                      /* a missing history has no records */
  }else{
    openHistory(zHist, 0, 1);
  }
  zSum = sqlText("SELECT profsum_json_pretty(json_set(profsum_history_summary_json(?1), '$.history_path', ?2))",
                 "it", (sqlite3_int64)nTail, zHist);
  if( zSum==0 ) fail(EXIT_FAIL, "profsum_history_summary_json returned nothing");
  emit(zSum, optStr(o, "output"));
  free(zSum);
  return EXIT_OK;
}

/* One side of a bundle: a summary/trace file (or a label of --db), else a
** run target. */
static sqlite3_int64 bundleSide(const Opts *o, const char *zSide, int bHaveDb, const char *zOpts,
                                sqlite3_int64 idOther){
  char zOpt[32], zRunOpt[32];
  const char *zSum, *zRaw, *zRun;
  snprintf(zOpt, sizeof(zOpt), "%s-summary", zSide);
  snprintf(zRunOpt, sizeof(zRunOpt), "%s-run-target", zSide);
  zSum = optStr(o, zOpt);
  zRaw = optRaw(o, zOpt);
  if( zSum==0 ){ zSum = optStr(o, zSide); zRaw = optRaw(o, zSide); }
  zRun = optStr(o, zRunOpt);
  if( zSum ) return traceArg(zOpt, zSum, zRaw, bHaveDb, zOpts, idOther);
  return importRunTarget(zRun, 0, 0, zOpts);
}

static int cmdBundle(Opts *o){
  const char *zOut = optReq(o, "output-dir"), *zHist = optStr(o, "history"), *zDb = optStr(o, "db");
  long long k = optNonNeg(o, "top-k", 10);
  char *zOpts = knobOptions(o, 0, 0), *zThr = thresholdsJson(o, -1), *zMan;
  sqlite3_int64 idB, idA;
  int kind;
  JObj j;
  if( !(optStr(o, "before-summary") || optStr(o, "before") || optStr(o, "before-run-target"))
   || !(optStr(o, "after-summary") || optStr(o, "after") || optStr(o, "after-run-target")) ){
    /* the reference raises ValueError here: exit 1, not a usage error */
    fail(EXIT_FAIL, "Bundle requires either a summary path or a run target for both before and after.");
  }
  memset(&j, 0, sizeof(j));
  jobjInt(&j, "top_k", k);
  if( optStr(o, "label") ) jobjStr(&j, "label", optStr(o, "label"));
  jobjRaw(&j, "thresholds", zThr);
  jobjRaw(&j, "history", zHist ? "true" : "false");
  jobjRaw(&j, "strict_provenance", optFlag(o, "strict-provenance") ? "true" : "false");
  wandbEnv(o);
  kind = openHistory(zHist, zDb, 0);
  idB = bundleSide(o, "before", kind==HIST_DB || zDb!=0, zOpts, 0);
  idA = bundleSide(o, "after", kind==HIST_DB || zDb!=0, zOpts, idB);
  if( optFlag(o, "strict-provenance") ){
    /* the reference's preflight comparison: its ValueError text, exit 1,
    ** before any file is written */
    char *zCmp = sqlText("SELECT profsum_compare_json(?1, ?2, ?3)", "iii", idB, idA, (sqlite3_int64)k);
    if( zCmp ) checkProvenance(zCmp);
    free(zCmp);
  }
  zMan = sqlText("SELECT profsum_bundle(?1, ?2, ?3, ?4)", "iitt", idB, idA, zOut, jobjEnd(&j));
  if( zMan==0 ) fail(EXIT_FAIL, "profsum_bundle returned nothing");
  appendHistory(zHist, kind);
  emit(zMan, optStr(o, "output"));
  free(zMan);
  free(zOpts);
  free(zThr);
  free(j.b.z);
  return EXIT_OK;
}

static int cmdPublish(Opts *o){
  const char *zReport = optStr(o, "report");
  int k = optIdx(o, "alias"), i;
  char *zRes;
  sqlite3_int64 id;
  JObj j;
  Buf a;
  failBeforeDb(o);
  openDb(optStr(o, "db"));
  if( zReport && !pathExists(zReport) ) fail(EXIT_FAIL, "--report '%s': %s", zReport, strerror(ENOENT));
  id = summaryArg(o, "{}");
  memset(&j, 0, sizeof(j));
  memset(&a, 0, sizeof(a));
  if( optStr(o, "entity") ) jobjStr(&j, "entity", optStr(o, "entity"));
  if( optStr(o, "project") ) jobjStr(&j, "project", optStr(o, "project"));
  if( optStr(o, "artifact-name") ) jobjStr(&j, "artifact_name", optStr(o, "artifact-name"));
  if( o->anMulti[k]>0 ){
    bufPuts(&a, "[");
    for(i=0; i<o->anMulti[k]; i++){
      if( i ) bufPuts(&a, ", ");
      bufJsonStr(&a, o->azMulti[k][i]);
    }
    bufPuts(&a, "]");
    jobjRaw(&j, "aliases", a.z);
  }
  if( zReport ) jobjStr(&j, "report_path", zReport);
  if( optStr(o, "summary") ) jobjStr(&j, "summary_path", optStr(o, "summary"));
  jobjRaw(&j, "dry_run", optFlag(o, "dry-run") ? "true" : "false");
  zRes = sqlText("SELECT wandb_publish(?1, ?2)", "it", id, jobjEnd(&j));
  if( zRes==0 ) fail(EXIT_FAIL, "wandb_publish returned nothing");
  emit(zRes, optStr(o, "output"));
  free(zRes);
  free(a.z);
  free(j.b.z);
  return EXIT_OK;
}

/* The directory of this executable. */
static char *exeDir(void){
  char z[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", z, sizeof(z)-1);
  char *zSlash;
  if( n<=0 ) return 0;
  z[n] = 0;
  zSlash = strrchr(z, '/');
  if( zSlash==0 ) return 0;
  *zSlash = 0;
  return xstrdup(z);
}

/* profsum.so: $PROFSUM_SO, next to the binary, or in ../lib. */
static char *findExtension(void){
  const char *zEnv = getenv("PROFSUM_SO");
  char *zDir, *z;
  static const char *azRel[] = {"%s/profsum.so", "%s/../lib/profsum.so", "%s/../lib/profsum/profsum.so"};
  size_t i;
  if( zEnv && zEnv[0] ){
    if( !pathExists(zEnv) ) fail(EXIT_FAIL, "PROFSUM_SO='%s': %s", zEnv, strerror(ENOENT));
    return xstrdup(zEnv);
  }
  zDir = exeDir();
  for(i=0; zDir && i<sizeof(azRel)/sizeof(azRel[0]); i++){
    char zReal[PATH_MAX];
    z = xprintf(azRel[i], zDir);
    if( realpath(z, zReal) ){
      sqlite3_free(z);
      free(zDir);
      return xstrdup(zReal);
    }
    sqlite3_free(z);
  }
  free(zDir);
  fail(EXIT_FAIL, "cannot find profsum.so (looked next to the profsum binary and in ../lib); set PROFSUM_SO");
  return 0;
}

static int cmdSql(Opts *o){
  char *zSo = findExtension(), *zLoad;
  char **azArg;
  int i, n = 0;
  const char *zShell = getenv("PROFSUM_SQLITE3");
  if( zShell==0 || zShell[0]==0 ) zShell = "sqlite3";
  /* .load takes a quoted argument; ' inside is doubled by no one: refuse */
  if( strchr(zSo, '\'') ) fail(EXIT_FAIL, "the path of profsum.so contains a quote: '%s'", zSo);
  zLoad = xprintf(".load '%s'", zSo);
  azArg = xmalloc(sizeof(char*)*(size_t)(o->nPos+4));
  azArg[n++] = (char*)zShell;
  azArg[n++] = "-cmd";
  azArg[n++] = zLoad;
  for(i=0; i<o->nPos; i++) azArg[n++] = (char*)o->azPos[i];
  azArg[n] = 0;
  fflush(stdout);
  execvp(zShell, azArg);
  fail(EXIT_FAIL, "cannot run %s: %s (install the sqlite3 package)", zShell, strerror(errno));
  return EXIT_FAIL;
}


/* ================================================================== */
/* view: the trace in the Perfetto UI, the log dir in TensorBoard      */
/* ================================================================== */
#define VIEW_PORT 9001                        /* the port the Perfetto UI loads from */
#define VIEW_ORIGIN "https://ui.perfetto.dev"
#define VIEW_TIMEOUT 600.0
#define VIEW_MAX_TIMEOUT 86400.0

/* z quoted for a POSIX shell: as it is when it holds only characters no
** shell treats specially, else in single quotes ('\'' for a quote).
** Returns a malloc'd string. */
static char *shellQuote(const char *z){
  Buf b;
  const char *c;
  if( z[0] && strspn(z, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+:@,%=")==strlen(z) ){
    return xstrdup(z);
  }
  memset(&b, 0, sizeof(b));
  bufPuts(&b, "'");
  for(c=z; *c; c++){
    if( *c=='\'' ) bufPuts(&b, "'\\''");
    else bufAppend(&b, c, 1);
  }
  bufPuts(&b, "'");
  return b.z;
}

/* The TensorBoard log directory of a trace file at zPath: the part before
** "plugins/profile/<session>/<file>" ("." when the path starts there), or
** 0 when the file is not laid out so.  Returns a malloc'd string. */
static char *logDirOf(const char *zPath){
  static const char zPlug[] = "plugins/profile";
  size_t n = strlen(zPath), nPlug = sizeof(zPlug)-1, e;
  int k;
  const char *zDirEnd;
  /* e: the end of the directory that holds <session> (two '/' back) */
  e = n;
  for(k=0; k<2; k++){
    while( e>0 && zPath[e-1]!='/' ) e--;
    if( e==0 ) return 0;
    if( e>=2 && zPath[e-2]=='/' ) return 0;   /* an empty component */
    e--;                                      /* at that '/' */
  }
  zDirEnd = zPath + e;
  if( e<nPlug || memcmp(zDirEnd-nPlug, zPlug, nPlug)!=0 ) return 0;
  if( e==nPlug ) return xstrdup(".");
  if( zDirEnd[-(long)nPlug-1]!='/' ) return 0;
  if( e==nPlug+1 ) return xstrdup("/");
  {
    size_t nDir = e - nPlug - 1;
    char *z = xmalloc(nDir+1);
    memcpy(z, zPath, nDir);
    z[nDir] = 0;
    return z;
  }
}

/* The name a trace is served under: its file name with every character
** but [A-Za-z0-9._-] made '_' (no escaping needed in the URL, nothing a
** terminal could take for a command), its last 150 characters at most, a
** leading '.' made '_'; with bWindow, "window-" before it and ".gz" after
** it unless it ends so (profsum_trim writes gzip).  Malloc'd. */
static char *servedName(const char *zPath, int bWindow){
  const char *zBase = strrchr(zPath, '/') ? strrchr(zPath, '/')+1 : zPath;
  size_t n = strlen(zBase), i;
  char *z;
  Buf b;
  if( n>150 ){ zBase += n-150; n = 150; }
  memset(&b, 0, sizeof(b));
  if( bWindow ) bufPuts(&b, "window-");
  for(i=0; i<n; i++){
    char c = zBase[i];
    int ok = (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9') || c=='.' || c=='_' || c=='-';
    if( i==0 && c=='.' && !bWindow ) ok = 0;
    bufAppend(&b, ok ? &c : "_", 1);
  }
  if( n==0 ) bufPuts(&b, "trace.json");
  if( bWindow && (b.n<3 || strcmp(b.z+b.n-3, ".gz")!=0) ) bufPuts(&b, ".gz");
  z = b.z;
  return z;
}

/* `view --list`: the traces profsum_find_traces finds under zDir, newest
** session first (session names are the capture timestamps,
** YYYY_MM_DD_HH_MM_SS, so name order is time order), in path order within
** a session; tab-separated, with a header line. */
static int viewList(const char *zDir){
  sqlite3_stmt *p = 0;
  Buf b;
  int n = 0, rc;
  memset(&b, 0, sizeof(b));
  bufPuts(&b, "session\thost\tformat\tbytes\tpicked\tpath\n");
  if( sqlite3_prepare_v2(g_db, "SELECT session, host, format, size, picked, path FROM "
        "(SELECT *, row_number() OVER () AS k FROM profsum_find_traces(?1)) "
        "ORDER BY session IS NULL, session DESC, k", -1, &p, 0)!=SQLITE_OK ){
    failSql(0);
  }
  sqlite3_bind_text(p, 1, zDir, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    const char *zS = (const char*)sqlite3_column_text(p, 0), *zH = (const char*)sqlite3_column_text(p, 1);
    bufPrintf(&b, "%s\t%s\t%s\t%lld\t%s\t%s\n", zS ? zS : "-", zH ? zH : "-",
              (const char*)sqlite3_column_text(p, 2), (long long)sqlite3_column_int64(p, 3),
              sqlite3_column_int(p, 4) ? "*" : "", (const char*)sqlite3_column_text(p, 5));
    n++;
  }
  if( rc!=SQLITE_DONE ){
    sqlite3_finalize(p);
    free(b.z);
    failSql(0);
  }
  sqlite3_finalize(p);
  writeStdout(b.z, b.n);
  free(b.z);
  if( n==0 ) errLine("profsum view: no trace files under '%s'", zDir);
  return EXIT_OK;
}

/* Copy the file zRel (a path relative to the directory sfd, components
** separated by '/') to the same relative path under the directory dfd
** (zDest names it, for messages and the scratch record), creating the
** directories.  Nothing is ever written outside dfd: each component must
** be a plain name (not empty, ".", ".."), every directory is opened with
** O_NOFOLLOW (a symbolic link planted under DEST, or met in the log
** directory, is refused), the source must be a regular file that is not a
** symbolic link (a link in a downloaded log directory could point at any
** file of this machine), and the copy is written to a new file
** (O_CREAT|O_EXCL|O_NOFOLLOW) beside its name, then renamed over it.
** Returns 0, or a malloc'd message (the file is not copied, nothing is
** left behind). */
static char *extractOne(int sfd, int dfd, const char *zRel, const char *zDest){
  char *zCopy = xstrdup(zRel), *zComp, *zNext, *zMsg = 0, *zTmp = 0, *zTmpPath = 0;
  int s = dup(sfd), d = dup(dfd), src = -1, out = -1, depth = 0;
  struct stat st;
  if( s<0 || d<0 ){
    zMsg = xprintf("%s", strerror(errno));
    goto done;
  }
  for(zComp=zCopy; ; zComp=zNext){
    char *zSlash = strchr(zComp, '/');
    int ns, nd;
    if( zComp[0]==0 || strcmp(zComp, ".")==0 || strcmp(zComp, "..")==0 || ++depth>100 ){
      zMsg = xprintf("not a plain relative path");
      goto done;
    }
    if( zSlash==0 ) break;
    *zSlash = 0;
    zNext = zSlash+1;
    ns = openat(s, zComp, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
    if( ns<0 ){
      zMsg = xprintf("directory '%s' of the log directory: %s", zComp,
                     errno==ELOOP || errno==ENOTDIR ? "a symbolic link or not a directory" : strerror(errno));
      goto done;
    }
    close(s);
    s = ns;
    if( mkdirat(d, zComp, 0777)!=0 && errno!=EEXIST ){
      zMsg = xprintf("cannot create directory '%.*s' under '%s': %s", (int)(zComp-zCopy+strlen(zComp)), zRel,
                     zDest, strerror(errno));
      goto done;
    }
    nd = openat(d, zComp, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC);
    if( nd<0 ){
      zMsg = xprintf("'%.*s' under '%s' is %s", (int)(zComp-zCopy+strlen(zComp)), zRel, zDest,
                     errno==ELOOP || errno==ENOTDIR ? "a symbolic link or not a directory: refused" : strerror(errno));
      goto done;
    }
    close(d);
    d = nd;
  }
  src = openat(s, zComp, O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC);
  if( src<0 ){
    zMsg = xprintf("%s", errno==ELOOP ? "a symbolic link: refused" : strerror(errno));
    goto done;
  }
  if( fstat(src, &st)!=0 || !S_ISREG(st.st_mode) ){
    zMsg = xprintf("not a regular file: refused");
    goto done;
  }
  {
    int i;
    for(i=0; i<100 && out<0; i++){
      unsigned char a[6];
      sqlite3_free(zTmp);
      sqlite3_randomness((int)sizeof(a), a);
      zTmp = xprintf("%s.tmp-%02x%02x%02x%02x%02x%02x", zComp, a[0], a[1], a[2], a[3], a[4], a[5]);
      out = openat(d, zTmp, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0666);
      if( out<0 && errno!=EEXIST && errno!=ELOOP && errno!=EINTR ) break;
    }
    if( out<0 ){
      zMsg = xprintf("cannot create a file in '%s': %s", zDest, strerror(errno));
      goto done;
    }
    zTmpPath = xprintf("%s/%.*s%s", zDest, (int)(zComp-zCopy), zRel, zTmp);
    scratchSet(zTmpPath, 0);
  }
  {
    char aBuf[65536];
    long long left = (long long)st.st_size;     /* the size when opened */
    while( left>0 ){
      ssize_t r = read(src, aBuf, left<(long long)sizeof(aBuf) ? (size_t)left : sizeof(aBuf));
      if( r<0 && (errno==EINTR || errno==EAGAIN) ) continue;
      if( r<0 ){ zMsg = xprintf("cannot read: %s", strerror(errno)); break; }
      if( r==0 ) break;                          /* it shrank: what is there */
      if( writeAll(out, aBuf, (size_t)r)!=0 ){
        zMsg = xprintf("cannot write into '%s': %s", zDest, strerror(errno));
        break;
      }
      left -= r;
    }
  }
  if( zMsg==0 && fsync(out)!=0 ) zMsg = xprintf("cannot write into '%s': %s", zDest, strerror(errno));
  if( close(out)!=0 && zMsg==0 ) zMsg = xprintf("cannot write into '%s': %s", zDest, strerror(errno));
  out = -1;
  scratchSet(0, 0);
  if( zMsg==0 && renameat(d, zTmp, d, zComp)!=0 ){
    zMsg = xprintf("cannot create '%s' under '%s': %s", zRel, zDest, strerror(errno));
  }
  if( zMsg ) unlinkat(d, zTmp, 0);
done:
  if( out>=0 ){ close(out); scratchSet(0, 0); unlinkat(d, zTmp, 0); }
  if( src>=0 ) close(src);
  if( s>=0 ) close(s);
  if( d>=0 ) close(d);
  sqlite3_free(zTmp);
  sqlite3_free(zTmpPath);
  free(zCopy);
  if( zMsg ){
    char *z = xstrdup(zMsg);
    sqlite3_free(zMsg);
    return z;
  }
  return 0;
}

/* `view --extract DEST`: copy every file profsum_find_traces lists under
** zDir into zDest at the same relative path (extractOne), so that DEST is
** a log directory TensorBoard opens.  DEST is created when missing (DEST
** itself may be a symbolic link the user named; nothing below it is
** followed).  Prints each copy's path, then the TensorBoard command; a
** file refused or failed is said on stderr and makes the exit code 1. */
static int viewExtract(const char *zDir, const char *zDest){
  sqlite3_stmt *p = 0;
  struct stat stS, stD;
  char *zPrefix, *zQ;
  size_t nPrefix, nDir = strlen(zDir);
  int sfd, dfd, rc, nOk = 0, nBad = 0;
  while( nDir>1 && zDir[nDir-1]=='/' ) nDir--;
  zPrefix = nDir==1 && zDir[0]=='/' ? xprintf("/") : xprintf("%.*s/", (int)nDir, zDir);
  nPrefix = strlen(zPrefix);
  makeDirs(zDest, 0);
  sfd = open(zDir, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( sfd<0 ) fail(EXIT_FAIL, "'%s': %s", zDir, strerror(errno));
  dfd = open(zDest, O_RDONLY|O_DIRECTORY|O_CLOEXEC);
  if( dfd<0 ) fail(EXIT_FAIL, "--extract '%s': %s", zDest, strerror(errno));
  if( fstat(sfd, &stS)==0 && fstat(dfd, &stD)==0 && stS.st_dev==stD.st_dev && stS.st_ino==stD.st_ino ){
    fail(EXIT_USAGE, "--extract '%s' is the log directory itself", zDest);
  }
  if( sqlite3_prepare_v2(g_db, "SELECT path FROM profsum_find_traces(?1)", -1, &p, 0)!=SQLITE_OK ) failSql(0);
  sqlite3_bind_text(p, 1, zDir, -1, SQLITE_STATIC);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    const char *zPath = (const char*)sqlite3_column_text(p, 0);
    char *zMsg;
    if( zPath==0 ) continue;
    if( strncmp(zPath, zPrefix, nPrefix)!=0 ){
      zMsg = xstrdup("not under the log directory");
    }else{
      zMsg = extractOne(sfd, dfd, zPath+nPrefix, zDest);
    }
    if( zMsg ){
      errLine("profsum view: '%s' not copied: %s", zPath, zMsg);
      free(zMsg);
      nBad++;
    }else{
      char *zOut = xprintf("%s/%s", zDest, zPath+nPrefix);
      writeStdoutVis(zOut, strlen(zOut), 0);
      writeStdout("\n", 1);
      sqlite3_free(zOut);
      nOk++;
    }
  }
  if( rc!=SQLITE_DONE ){
    sqlite3_finalize(p);
    failSql(0);
  }
  sqlite3_finalize(p);
  close(sfd);
  close(dfd);
  sqlite3_free(zPrefix);
  errLine("profsum view: %d file%s copied into '%s'%s", nOk, nOk==1 ? "" : "s", zDest,
          nBad ? " (some refused or failed: see above)" : "");
  zQ = shellQuote(zDest);
  {
    char *z = xprintf("tensorboard --logdir %s", zQ);
    writeStdoutVis(z, strlen(z), 0);
    writeStdout("\n", 1);
    sqlite3_free(z);
  }
  free(zQ);
  return nBad ? EXIT_FAIL : EXIT_OK;
}

/* profsum view TRACE|DIR: serve the trace (or a window of it, profsum_trim)
** on 127.0.0.1 for the Perfetto UI (serve.c) and print its link and the
** TensorBoard command; --list / --extract work on the log directory
** without a server. */
static int cmdView(Opts *o){
  const char *zArg = o->nPos>0 ? o->azPos[0] : 0;
  const char *zWindow = optStr(o, "window"), *zExtract = optStr(o, "extract");
  int bList = optFlag(o, "list"), fd, lfd, rc;
  long long port = optInt(o, "port", VIEW_PORT);
  double timeout = VIEW_TIMEOUT;
  char *zTrace, *zName, *zServe, *zErr = 0, *zLogDir, *zLine;
  struct stat st;
  ServeSpec spec;
  ServeSignals sigSave;
  if( zArg==0 ) fail(EXIT_USAGE, "give a trace file or a log directory");
  if( bList && zExtract ) fail(EXIT_USAGE, "give --list or --extract, not both");
  if( (bList || zExtract) && (zWindow || optStr(o, "port") || optStr(o, "timeout")) ){
    fail(EXIT_USAGE, "--window, --port and --timeout are for serving, not for --list or --extract");
  }
  if( optStr(o, "timeout") ){
    if( !parseNum(optStr(o, "timeout"), &timeout) || !(timeout>0 && timeout<=VIEW_MAX_TIMEOUT) ){
      fail(EXIT_USAGE, "--timeout must be a number of seconds above 0 and at most %.0f, not '%s'",
           VIEW_MAX_TIMEOUT, optStr(o, "timeout"));
    }
  }
  if( port<1 || port>65535 ) fail(EXIT_USAGE, "--port must be from 1 to 65535, not %lld", port);
  if( !pathExists(zArg) ) fail(EXIT_FAIL, "'%s': %s", zArg, strerror(ENOENT));
  if( (bList || zExtract) && !isDir(zArg) ){
    fail(EXIT_USAGE, "--list and --extract take a log directory, and '%s' is not one", zArg);
  }
  openDb(0);
  if( bList ) return viewList(zArg);
  if( zExtract ) return viewExtract(zArg, zExtract);

  /* the trace: the file given, or the one profsum would read in DIR */
  if( isDir(zArg) ){
    zTrace = sqlText("SELECT path FROM profsum_find_traces(?1) WHERE picked LIMIT 1", "t", zArg);
    if( zTrace==0 ) fail(EXIT_FAIL, "'%s': no trace JSON in it (see profsum view --list)", zArg);
  }else{
    zTrace = xstrdup(zArg);
  }
  zName = servedName(zTrace, zWindow!=0);
  if( zWindow ){
    char *zN;
    char *zP = xprintf("%s/%s", g_zTempDbDir, zName);          /* in the private directory */
    zServe = xstrdup(zP);
    sqlite3_free(zP);
    scratchSet(zServe, 0);             /* removed on exit, also on a signal */
    zN = trimToFile(zTrace, zServe, zWindow);
    errLine("profsum view: window: %s entries of '%s'", zN ? zN : "0", zTrace);
    free(zN);
  }else{
    zServe = xstrdup(zTrace);
  }
  fd = open(zServe, O_RDONLY|O_CLOEXEC);
  if( fd<0 ) fail(EXIT_FAIL, "'%s': %s", zServe, strerror(errno));
  if( fstat(fd, &st)!=0 || !S_ISREG(st.st_mode) ) fail(EXIT_FAIL, "'%s': not a regular file", zServe);

  if( port!=VIEW_PORT ){
    errLine("profsum view: warning: the Perfetto UI may refuse to load from port %lld (its content "
            "security policy allows http://127.0.0.1:%d)", port, VIEW_PORT);
  }
  lfd = serveListen((int)port, &zErr);
  if( lfd<0 ){
    char *z = xstrdup(zErr ? zErr : "out of memory");
    free(zErr);
    fail(EXIT_FAIL, "%s", z);
  }
  serveCatchSignals(&sigSave);          /* Ctrl-C from now on stops the server */
  zLine = xprintf("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/%s\n", (int)port, zName);
  writeStdout(zLine, strlen(zLine));
  sqlite3_free(zLine);
  zLogDir = isDir(zArg) ? xstrdup(zArg) : logDirOf(zTrace);
  if( zLogDir ){
    char *zQ = shellQuote(zLogDir);
    zLine = xprintf("tensorboard --logdir %s", zQ);
    writeStdoutVis(zLine, strlen(zLine), 0);
    writeStdout("\n", 1);
    sqlite3_free(zLine);
    free(zQ);
    free(zLogDir);
  }else{
    errLine("profsum view: '%s' is not in a <logdir>/plugins/profile/<session>/ folder, so TensorBoard "
            "cannot open it as a log directory", zTrace);
  }
  errLine("profsum view: serving '%s' (%lld bytes) at http://127.0.0.1:%d/%s to %s; "
          "stops after %g s or on Ctrl-C", zServe, (long long)st.st_size, (int)port, zName, VIEW_ORIGIN, timeout);
  memset(&spec, 0, sizeof(spec));
  spec.fd = fd;
  spec.zName = zName;
  spec.zType = strlen(zName)>3 && strcmp(zName+strlen(zName)-3, ".gz")==0 ? "application/gzip"
             : strlen(zName)>5 && strcmp(zName+strlen(zName)-5, ".json")==0 ? "application/json"
             : "application/octet-stream";
  spec.zOrigin = VIEW_ORIGIN;
  spec.port = (int)port;
  spec.timeout = timeout;
  spec.bLog = 1;
  if( !serveNameOk(zName) ) fail(EXIT_FAIL, "internal error: cannot serve the name '%s'", zName);
  rc = serveRun(lfd, &spec, &zErr);
  serveRestoreSignals(&sigSave);
  close(lfd);
  close(fd);
  if( rc==SERVE_ERROR ){
    char *z = xstrdup(zErr ? zErr : "out of memory");
    free(zErr);
    fail(EXIT_FAIL, "%s", z);
  }
  errLine("profsum view: stopped (%s)", rc==SERVE_SIGNAL ? "interrupted" : "--timeout reached");
  free(zTrace);
  free(zName);
  free(zServe);
  return EXIT_OK;                     /* the window file goes with cleanup() */
}

/* ================================================================== */
/* Command table, main                                                 */
/* ================================================================== */
static const Cmd aCmd[] = {
  {"summarize", "summarize a profile into a profile_summary.v1 JSON document",
   "(--trace-file PATH | --profile-dir DIR | --artifact REF | --run-target RUN) [options]",
   "Import the profile (into a temporary database, or --db) and emit its profile_summary.v1 JSON.",
   SUMMARIZE_OPTS, cmdSummarize, 0},
  {"report", "the markdown report of a summary",
   "(--summary PATH | --db DB --trace LABEL) [--top-k N] [--output PATH]",
   "Emit the markdown report of a profile_summary.v1 file (or of a trace of --db).",
   REPORT_OPTS, cmdReport, 0},
  {"query", "answer a question about a summary (top ops, gaps, regions, ...)",
   "(--summary PATH | --db DB --trace LABEL) --question TEXT [--top-k N] | --list",
   "Answer a profiling question with JSON (tools-spec section 2); --list shows what can be asked.",
   QUERY_OPTS, cmdQuery, 0},
  {"compare", "compare a before/after pair",
   "--before PATH --after PATH [--strict-provenance] [--top-k N]",
   "Emit the comparison JSON of two summaries or traces (step time, shares, regressed/improved ops).",
   COMPARE_OPTS, cmdCompare, 0},
  {"track", "assess a before/after pair against thresholds and record it",
   "--before PATH --after PATH [--history PATH] [--label L] [--fail-on fail|warn] [thresholds]",
   "Compare, classify pass/warn/fail against the thresholds, append the record to --history\n"
   "(a .db, or a .jsonl file as the reference tool writes) and emit the record JSON.\n"
   "With --fail-on fail (or warn) the exit code is 3 when the status is fail (or warn/fail).\n"
   "Into a .db, a file stored before (same path, content, knobs and profsum version) is used\n"
   "again: one baseline tracked run after run, or by concurrent jobs, is stored once.",
   TRACK_OPTS, cmdTrack, 0},
  {"history", "summarize a regression history",
   "--history PATH [--tail N] [--output PATH]",
   "Emit the history summary JSON (status counts, top failures and warnings, recent records).",
   HISTORY_OPTS, cmdHistory, 0},
  {"bundle", "write the comparison bundle of a before/after pair",
   "(--before-summary PATH | --before-run-target RUN) (--after-summary PATH | --after-run-target RUN) --output-dir DIR",
   "Write before/after summaries, compare.json, track.json and the two reports into --output-dir;\n"
   "emit the manifest JSON.",
   BUNDLE_OPTS, cmdBundle, 0},
  {"publish", "publish a summary to Weights & Biases",
   "(--summary PATH | --db DB --trace LABEL) [--report PATH] [--dry-run] [W&B options]",
   "Upload the summary (and report) as a profile_summary artifact; --dry-run only shows what would be sent.",
   PUBLISH_OPTS, cmdPublish, 0},
  {"trim", "write a smaller trace (selected events + their metadata)",
   "--trace-file PATH --output PATH [--pid PID] [--start-us US] [--end-us US] [--where SQL]",
   "Write a valid gzipped trace JSON with only the selected events and the metadata of their\n"
   "processes, so that Perfetto or TensorBoard can open a part of a trace that is too big.",
   TRIM_OPTS, cmdTrim, 0},
  {"sql", "open the sqlite3 shell with profsum loaded",
   "[DB] [sqlite3 options...]",
   "Run the sqlite3 shell on DB with `.load profsum.so` done (profsum.so is found next to this\n"
   "program, in ../lib, or at $PROFSUM_SO).",
   SQL_OPTS, cmdSql, 15},
  {"view", "serve a trace to the Perfetto UI; list or copy a log directory's traces",
   "TRACE|DIR [--window WHERE] [--port N] [--timeout SECONDS] | DIR --list | DIR --extract DEST",
   "Serve the trace (a file, or the one profsum reads in the log directory DIR; --window: only the\n"
   "events for which WHERE holds) on http://127.0.0.1:9001/ to the Perfetto UI, and print the link\n"
   "to open and the TensorBoard command for the log directory.  Loopback only; stops after\n"
   "--timeout seconds (600) or on Ctrl-C.  --list and --extract work on DIR without a server.",
   VIEW_OPTS, cmdView, 1},
};

static void mainUsage(FILE *f){
  size_t i;
  fprintf(f, "usage: profsum <command> [options]\n\n"
             "profsum %s: JAX/XLA profiler traces into profile_summary.v1, reports, comparisons and SQL.\n\n"
             "commands:\n", PROFSUM_VERSION);
  for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++) fprintf(f, "  %-10s %s\n", aCmd[i].zName, aCmd[i].zSummary);
  fprintf(f, "\n'profsum <command> --help' shows the options of a command.\n"
             "Exit codes: 0 ok, 1 failure, 2 usage, 3 track --fail-on triggered.\n");
}

int main(int argc, char **argv){
  size_t i;
  Opts o;
  int rc;
  if( argc<2 ){ mainUsage(stderr); return EXIT_USAGE; }
  if( strcmp(argv[1], "-h")==0 || strcmp(argv[1], "--help")==0 ){ mainUsage(stdout); return EXIT_OK; }
  if( strcmp(argv[1], "--version")==0 || strcmp(argv[1], "version")==0 ){
    printf("profsum %s (SQLite %s)\n", PROFSUM_VERSION, sqlite3_libversion());
    return EXIT_OK;
  }
  if( strcmp(argv[1], "help")==0 ){
    if( argc>2 ){
      for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++){
        if( strcmp(argv[2], aCmd[i].zName)==0 ){ printHelp(&aCmd[i], stdout); return EXIT_OK; }
      }
    }
    mainUsage(stdout);
    return EXIT_OK;
  }
  for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++){
    if( strcmp(argv[1], aCmd[i].zName)==0 ) break;
  }
  if( i==sizeof(aCmd)/sizeof(aCmd[0]) ){
    g_bErrTty = isatty(2);
    errLine("profsum: unknown command '%s'", argv[1]);
    mainUsage(stderr);
    return EXIT_USAGE;
  }
  g_zCmd = aCmd[i].zName;
  g_bOutTty = isatty(1);
  g_bErrTty = isatty(2);
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, onSignal);
  signal(SIGTERM, onSignal);
  signal(SIGHUP, onSignal);
  if( sqlite3_auto_extension((void(*)(void))sqlite3_profsum_init)!=SQLITE_OK ){
    fail(EXIT_FAIL, "cannot register the profsum extension");
  }
  parseOpts(&aCmd[i], &o, argc-2, argv+2);
  rc = aCmd[i].xRun(&o);
  optsFree(&o);
  cleanup();
  return rc;
}
