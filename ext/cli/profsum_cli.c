/*
** profsum_cli.c — the `profsum` command line: main, the options of every
** command and their parsing, and the dispatch to the command.
**
**   profsum summarize --trace-file host.trace.json.gz --output out/summary.json
**   profsum report    --summary out/summary.json --top-k 10
**   profsum query     --summary out/summary.json --question "what is the gap before copy.1?"
**   profsum compare   --before a.json.gz --after b.json.gz
**   profsum track     --before a.json.gz --after b.json.gz --history hist.db --fail-on fail
**   profsum history   --history hist.db --tail 5
**   profsum bundle    --before-summary a.json --after-summary b.json --output-dir cmp/
**   profsum publish   --summary out/summary.json --dry-run
**   profsum trim      --trace-file big.json.gz --output small.json.gz --pid 3
**   profsum sql       [DB]          (the sqlite3 shell with profsum.so loaded)
**   profsum view      TRACE|DIR     (serve it to the Perfetto UI; serve.c)
**
** A separate program, not part of profsum.so: the extension is compiled
** into it (SQLITE_CORE) and registered with sqlite3_auto_extension() on the
** system libsqlite3, so every command is a few SQL calls on one connection
** (profsum_import, profsum_summary_json, profsum_report_md,
** profsum_query_json, profsum_compare_json, profsum_track,
** profsum_history_*, profsum_bundle, wandb_publish).  Behaviour follows the
** reference tool (docs/spec/tools.md §1): same commands and flags, same
** output convention ("emit": with --output PATH the text plus a final
** newline goes to PATH, whose parent directories are created, and PATH is
** printed; otherwise the text is printed).  See docs/cli.md.
**
** Files named on the command line are imported into a temporary database
** that is deleted on exit, or into --db (or the --history .db) when given.
**
** Exit codes: 0 ok, 1 failure, 2 usage, 3 `track --fail-on` triggered.
** Errors go to stderr as "profsum <cmd>: <message>".
**
** The other files of ext/cli/ are listed in cli.h: the commands are in
** cmd_*.c, what they share below them.
*/
#include "cli.h"
#include "cnum.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PROFSUM_VERSION
# define PROFSUM_VERSION "0.0.0-dev"
#endif

#include "pycompat.h"        /* profsumPyPathStr (linked in statically) */
#include "profsum_reader.h"   /* profsumSniffFormat */

/* The extension's entry point (ext/sql/profsum.c), linked in statically. */
int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi);

/* ================================================================== */
/* Options                                                             */
/* ================================================================== */
/* A command: its name and help texts, its options, the function that runs
** it (returns the exit code) and how many positional arguments it takes. */
typedef struct Cmd {
  const char *zName;
  const char *zSummary;     /* one line for the command list */
  const char *zUsage;       /* synopsis line(s) */
  const char *zDesc;        /* paragraph after the synopsis */
  const OptSpec *aSpec;
  int (*xRun)(Opts*);
  int nMaxPos;              /* positional arguments allowed */
  int bPassThrough;         /* every argument goes to o->azRest (sql) */
} Cmd;

/* Write the help of command c (usage, description, one line an option,
** argparse's layout) to f. */
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

/* The index in o->aSpec of the option named zName[0..nName) (without
** "--"), or -1 when the command has no such option. */
int specIndex(const Opts *o, const char *zName, size_t nName){
  int i;
  for(i=0; i<o->nSpec; i++){
    if( strlen(o->aSpec[i].zName)==nName && memcmp(o->aSpec[i].zName, zName, nName)==0 ) return i;
  }
  return -1;
}

/* Python's int() of an argparse value (type=int): surrounding whitespace,
** an optional sign, decimal digits with single '_' between digits
** ("1_000"; leading zeros allowed).  No other base ("0x10"), no fraction,
** no trailing text.  Returns 1 and sets *pV; -1 for a well-formed integer
** that does not fit a long long (Python would take it: the caller says it
** is out of range); 0 for text that is not an integer. */
static int parseInt(const char *z, long long *pV){
  static const char *zWs = " \t\n\r\f\v";
  size_t n, i = 0;
  int neg = 0, bBig = 0, nDig = 0;
  unsigned long long u = 0, lim;
  while( *z && strchr(zWs, *z) ) z++;
  n = strlen(z);
  while( n>0 && strchr(zWs, z[n-1]) ) n--;
  if( n>0 && (z[0]=='+' || z[0]=='-') ){ neg = z[0]=='-'; i = 1; }
  lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
  for(; i<n; i++){
    int d;
    if( z[i]=='_' ){
      if( nDig==0 || i+1>=n || z[i+1]<'0' || z[i+1]>'9' ) return 0;
      continue;
    }
    if( z[i]<'0' || z[i]>'9' ) return 0;
    d = z[i]-'0';
    nDig++;
    if( bBig || u > (lim - (unsigned long long)d)/10 ) bBig = 1;
    else u = u*10 + (unsigned long long)d;
  }
  if( nDig==0 ) return 0;
  if( bBig ) return -1;
  if( neg ) *pV = u==(unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)u;
  else *pV = (long long)u;
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
int parseNum(const char *z, double *pV){
  return parseNumText(z, pV, 0);
}

/* parseNum, and when pzText is not 0 and the value is a finite decimal
** (not inf or nan): *pzText set to its text as read -- a sign, the digits
** without '_', the '.' and the exponent (malloc'd) -- for a caller that
** needs it exactly (trim's --start-us/--end-us), else to 0. */
int parseNumText(const char *z, double *pV, char **pzText){
  static const char *zWs = " \t\n\r\f\v";
  Buf b;
  size_t n, i = 0, k;
  int neg = 0, ok = 0;
  while( *z && strchr(zWs, *z) ) z++;
  n = strlen(z);
  while( n>0 && strchr(zWs, z[n-1]) ) n--;
  if( n>0 && (z[0]=='+' || z[0]=='-') ){ neg = z[0]=='-'; i = 1; }
  if( pzText ) *pzText = 0;
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
  if( ok && i==n ) *pV = profsumStrtod(b.z, 0);     /* overflow gives ±inf, as Python */
  if( pzText && ok && i==n ){
    *pzText = b.z;
  }else{
    free(b.z);
  }
  return ok && i==n;
}

/* 1 if z is a negative number as argparse tells one from an option
** ("-5", "-.5", "-1.25": ^-\d+$|^-\d*\.\d+$). */
static int isNegNumber(const char *z){
  size_t nInt, nFrac;
  if( z[0]!='-' ) return 0;
  nInt = strspn(z+1, "0123456789");
  if( z[1+nInt]==0 ) return nInt>0;
  if( z[1+nInt]!='.' ) return 0;
  nFrac = strspn(z+2+nInt, "0123456789");
  return nFrac>0 && z[2+nInt+nFrac]==0;
}

/* 1 if the argument z, met where a value is expected, is an option
** instead, as argparse sees it: it starts with '-' and is not "-" alone,
** not a negative number, and holds no space. */
static int looksLikeOption(const char *z){
  return z[0]=='-' && z[1]!=0 && !isNegNumber(z) && strchr(z, ' ')==0;
}

/* 1 if the argument z can be the value of option s when it follows it as
** the next argument: a number its parser reads for OPT_INT and OPT_NUM
** (so "-5", "-inf" and " -1" are values: the options of a number document
** negative values and inf), else anything that does not look like an
** option (looksLikeOption).  "--name=value" takes any value. */
static int takesAsValue(const OptSpec *s, const char *z){
  long long i;
  double v;
  if( s->eKind==OPT_INT && parseInt(z, &i)!=0 ) return 1;
  if( s->eKind==OPT_NUM && parseNum(z, &v) ) return 1;
  return !looksLikeOption(z);
}

/* The index in o->aSpec of the option written zName[0..nName) (without
** "--"): its full name, or else a prefix of exactly one option's name, as
** argparse's allow_abbrev reads "--out" for "--output".  -1 when no option
** matches; a prefix of several is a usage error (exit 2) naming them. */
static int findOpt(const Opts *o, const char *zName, size_t nName){
  int i, k = specIndex(o, zName, nName), nHit = 0;
  Buf b;
  if( k>=0 || nName==0 ) return k;
  memset(&b, 0, sizeof(b));
  for(i=0; i<o->nSpec; i++){
    if( strncmp(o->aSpec[i].zName, zName, nName)==0 ){
      bufPrintf(&b, "%s--%s", nHit ? ", " : "", o->aSpec[i].zName);
      k = i;
      nHit++;
    }
  }
  if( nHit>1 ){
    fail(EXIT_USAGE, "ambiguous option '--%.*s': it could be %s", (int)nName, zName, b.z);
  }
  free(b.z);
  return k;
}

/* Exit after output to stdout (help, usage, version) with its status:
** EXIT_OK, or EXIT_FAIL with a message when it could not be written (a
** full disk, /dev/full, a closed pipe: no line of it is lost silently). */
static _Noreturn void exitAfterStdout(void){
  if( fflush(stdout)!=0 || ferror(stdout) ){
    int e = errno;
    errLine("profsum%s%s: cannot write to stdout: %s", g_zCmd ? " " : "", g_zCmd ? g_zCmd : "",
            strerror(e ? e : EIO));
    exit(EXIT_FAIL);
  }
  exit(EXIT_OK);
}

/* The option argument argv[i] (starting "--") of command c: the index of
** its option (findOpt), and in *pzEq the '=' of "--name=value" or 0.
** -1 for an unknown option. */
static int optionOf(const Opts *o, const char *z, const char **pzEq){
  const char *zName = z+2, *zEq = strchr(zName, '=');
  *pzEq = zEq;
  return findOpt(o, zName, zEq ? (size_t)(zEq-zName) : strlen(zName));
}

/* The first pass of parseOpts: -h or --help before "--" prints the help
** and exits 0, as argparse's help action does wherever it stands; on the
** way an option that takes a value and is followed by none (the end, or an
** argument that is an option, takesAsValue) is a usage error: "--question
** -h" asks for a value, not for help, and "--top-k --list" takes no
** option as a value.  Other errors are left to the second pass. */
static void scanHelp(const Cmd *c, const Opts *o, int argc, char **argv){
  int i;
  for(i=0; i<argc; i++){
    const char *z = argv[i], *zEq;
    int k;
    if( strcmp(z, "--")==0 ) return;
    if( strcmp(z, "-h")==0 || strcmp(z, "--help")==0 ){
      printHelp(c, stdout);
      exitAfterStdout();
    }
    if( c->bPassThrough || z[0]!='-' || z[1]!='-' ) continue;
    k = optionOf(o, z, &zEq);
    if( k<0 || o->aSpec[k].eKind==OPT_FLAG || zEq ) continue;
    if( i+1<argc && takesAsValue(&o->aSpec[k], argv[i+1]) ){ i++; continue; }
    if( i+1<argc ){
      fail(EXIT_USAGE, "option '--%s' expects a value (%s), and '%s' is an option (a value that "
           "starts with '-' is given as --%s=VALUE)", o->aSpec[k].zName,
           o->aSpec[k].zMeta ? o->aSpec[k].zMeta : "VALUE", argv[i+1], o->aSpec[k].zName);
    }
    fail(EXIT_USAGE, "option '--%s' expects a value (%s)", o->aSpec[k].zName,
         o->aSpec[k].zMeta ? o->aSpec[k].zMeta : "VALUE");
  }
}

/* The values allowed for integer options that have a range of their own
** (the import knobs: profsum_import takes 0 to 2^31-1).  Others take any
** long long, a negative one refused by the command where it makes no sense
** (optNonNeg). */
static const struct IntRange { const char *zName; long long iMin, iMax; } aIntRange[] = {
  {"warmup-steps", 0, 2147483647},
  {"hot-op-limit", 0, 2147483647},
};

/* Check the value zVal of option s (OPT_INT: Python's int() and the
** option's range, aIntRange; OPT_NUM: Python's float()); a bad one is a
** usage error (exit 2) that names the option and what it takes. */
static void checkValue(const OptSpec *s, const char *zVal){
  if( s->eKind==OPT_INT ){
    long long v = 0, iMin = LLONG_MIN, iMax = LLONG_MAX;
    int r = parseInt(zVal, &v);
    size_t j;
    for(j=0; j<sizeof(aIntRange)/sizeof(aIntRange[0]); j++){
      if( strcmp(aIntRange[j].zName, s->zName)==0 ){ iMin = aIntRange[j].iMin; iMax = aIntRange[j].iMax; }
    }
    if( r==0 ){
      fail(EXIT_USAGE, "option '--%s' needs an integer (as Python's int() reads it: digits, a sign, "
           "'_' between digits), not '%s'", s->zName, zVal);
    }
    if( r<0 || v<iMin || v>iMax ){
      fail(EXIT_USAGE, "option '--%s' must be an integer from %lld to %lld, not '%s'",
           s->zName, iMin, iMax, zVal);
    }
  }else if( s->eKind==OPT_NUM ){
    double v;
    if( !parseNum(zVal, &v) ){
      fail(EXIT_USAGE, "option '--%s' needs a finite number, inf or nan (as Python's float() reads it), "
           "not '%s'", s->zName, zVal);
    }
  }
}

/* The edit distance (insertions, deletions, substitutions of bytes) of
** a[0..na) and b[0..nb), counted up to 3: 3 means 3 or more.  Names of
** commands and options are short; longer inputs are simply "far". */
static int nearDistance(const char *a, size_t na, const char *b, size_t nb){
  int d[64], prev, cur, i, j, best;
  if( na>=sizeof(d)/sizeof(d[0]) || nb>=sizeof(d)/sizeof(d[0]) ) return 3;
  if( (na>nb ? na-nb : nb-na)>=3 ) return 3;
  for(j=0; j<=(int)nb; j++) d[j] = j;
  for(i=1; i<=(int)na; i++){
    prev = d[0];
    d[0] = i;
    best = d[0];
    for(j=1; j<=(int)nb; j++){
      cur = d[j];
      d[j] = prev + (a[i-1]!=b[j-1]);
      if( d[j-1]+1<d[j] ) d[j] = d[j-1]+1;
      if( cur+1<d[j] ) d[j] = cur+1;
      if( d[j]<best ) best = d[j];
      prev = cur;
    }
    if( best>=3 ) return 3;
  }
  return d[nb]<3 ? d[nb] : 3;
}

/* The one name of az[0..n) (0 ends the list early) nearest to z[0..nz)
** by nearDistance, when it is at most 2 away (1 for names of up to four
** bytes) and no other is as near; else 0.  For "did you mean" hints. */
static const char *nearestName(const char *z, size_t nz, const char *const *az, size_t n){
  const char *zBest = 0;
  int best = 3, nBest = 0;
  size_t i;
  for(i=0; i<n && az[i]; i++){
    int dd = nearDistance(z, nz, az[i], strlen(az[i]));
    if( dd<best ){ best = dd; zBest = az[i]; nBest = 1; }
    else if( dd==best ) nBest++;
  }
  if( zBest==0 || nBest!=1 || best>(nz<=4 ? 1 : 2) ) return 0;
  return zBest;
}

/* Does command o have the option zName, not given yet? */
static int optUnset(const Opts *o, const char *zName){
  int k = specIndex(o, zName, strlen(zName));
  return k>=0 && o->azVal[k]==0;
}

/* The option a path given without one was most likely meant for, for the
** message about an unexpected argument z of a command that takes none
** there ("summarize trace.xplane.pb"): words with a space that name no
** file to --question (query), a folder to --profile-dir, an
** XPlane (profsumSniffFormat: its content, else its name) to --xplane-file,
** else the command's first of --trace-file,
** --summary, --before-summary, --after-summary, --before, --after,
** --history that is not given yet; 0 when there is none. */
static const char *positionalHint(const Opts *o, const char *z){
  static const char *const azPlain[] = {
    "trace-file", "summary", "before-summary", "after-summary", "before", "after", "history"
  };
  size_t i;
  if( optUnset(o, "question") && strchr(z, ' ') && access(z, F_OK)!=0 ) return "question";
  if( optUnset(o, "profile-dir") && isDir(z) ) return "profile-dir";
  if( optUnset(o, "xplane-file") && profsumSniffFormat(z)==PROFSUM_FMT_XPLANE ) return "xplane-file";
  for(i=0; i<sizeof(azPlain)/sizeof(azPlain[0]); i++){
    if( optUnset(o, azPlain[i]) ) return azPlain[i];
  }
  return 0;
}

/* Parse argv[0..argc) (what follows the command name) into o by the
** option table of c, as the reference's argparse would: "--name value" or
** "--name=value" (an unambiguous prefix of a name works too, findOpt),
** "--" ends the options, the last value of an option wins (OPT_MULTI:
** each is kept), OPT_INT and OPT_NUM values are checked now (checkValue),
** OPT_PATH values normalized (profsumPyPathStr; free with optsFree).  An
** option takes the next argument as its value unless that is an option
** (takesAsValue).  -h or --help before "--" prints the help and exits 0
** (scanHelp); a usage error exits 2 (fail).  A pass-through command (sql)
** gets its arguments in o->azRest, the first "--" taken out. */
static void parseOpts(const Cmd *c, Opts *o, int argc, char **argv){
  int i;
  int bOnlyPos = 0;
  memset(o, 0, sizeof(*o));
  o->aSpec = c->aSpec;
  for(o->nSpec=0; c->aSpec && c->aSpec[o->nSpec].zName; o->nSpec++){}
  scanHelp(c, o, argc, argv);
  if( c->bPassThrough ){
    o->azRest = xmalloc(sizeof(char*)*(size_t)(argc+1));
    for(i=0; i<argc; i++){
      if( !bOnlyPos && strcmp(argv[i], "--")==0 ){ bOnlyPos = 1; continue; }
      o->azRest[o->nRest++] = argv[i];
    }
    o->azRest[o->nRest] = 0;
    return;
  }
  for(i=0; i<argc; i++){
    const char *z = argv[i], *zEq, *zVal = 0;
    int k;
    if( bOnlyPos || z[0]!='-' || z[1]==0 ){
      if( o->nPos>=c->nMaxPos ){
        const char *zOpt = c->nMaxPos==0 ? positionalHint(o, z) : 0;
        if( zOpt ){
          static char *zWord;       /* kept until the exit that follows */
          zWord = shellQuote(z);
          /* a value that starts with '-' is given as --name=VALUE */
          fail(EXIT_USAGE, "unexpected argument '%s': a %s goes after its option (did you mean "
               "--%s%s%s?)", z, strcmp(zOpt, "question")==0 ? "question" : "path", zOpt,
               z[0]=='-' ? "=" : " ", zWord);
        }
        fail(EXIT_USAGE, "unexpected argument '%s'", z);
      }
      o->azPos[o->nPos++] = z;
      continue;
    }
    if( strcmp(z, "--")==0 ){ bOnlyPos = 1; continue; }
    if( z[1]!='-' ) fail(EXIT_USAGE, "unknown option '%s'", z);
    k = optionOf(o, z, &zEq);
    if( k<0 ){
      int nName = zEq ? (int)(zEq-z-2) : (int)strlen(z+2);
      const char *azName[MAX_OPTS];
      const char *zNear;
      int m;
      for(m=0; m<o->nSpec && m<MAX_OPTS; m++) azName[m] = o->aSpec[m].zName;
      zNear = nearestName(z+2, (size_t)nName, azName, (size_t)m);
      if( zNear ) fail(EXIT_USAGE, "unknown option '--%.*s' (did you mean '--%s'?)", nName, z+2, zNear);
      fail(EXIT_USAGE, "unknown option '--%.*s'", nName, z+2);
    }
    if( o->aSpec[k].eKind==OPT_FLAG ){
      if( zEq ) fail(EXIT_USAGE, "option '--%s' takes no value", o->aSpec[k].zName);
      o->azVal[k] = "1";
      continue;
    }
    if( zEq ) zVal = zEq+1;
    else if( i+1<argc && takesAsValue(&o->aSpec[k], argv[i+1]) ) zVal = argv[++i];
    else fail(EXIT_USAGE, "option '--%s' expects a value (%s)", o->aSpec[k].zName,
              o->aSpec[k].zMeta ? o->aSpec[k].zMeta : "VALUE");
    checkValue(&o->aSpec[k], zVal);
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
  free(o->azRest);
  o->azRest = 0;
}

/* The index of option zName in o's table; a name the table lacks is a
** mistake in this program (abort). */
int optIdx(const Opts *o, const char *zName){
  int k = specIndex(o, zName, strlen(zName));
  if( k<0 ){ fprintf(stderr, "internal error: option %s\n", zName); abort(); }
  return k;
}
/* The value of option zName (normalized for OPT_PATH; "1" for a flag
** given), 0 when absent. */
const char *optStr(const Opts *o, const char *zName){ return o->azVal[optIdx(o, zName)]; }
/* The value as given on the command line (OPT_PATH: not normalized). */
const char *optRaw(const Opts *o, const char *zName){ return o->azRaw[optIdx(o, zName)]; }
/* 1 if option zName was given. */
int optFlag(const Opts *o, const char *zName){ return o->azVal[optIdx(o, zName)]!=0; }
/* The integer value of option zName (checked by parseOpts), or iDefault
** when absent. */
long long optInt(const Opts *o, const char *zName, long long iDefault){
  const char *z = optStr(o, zName);
  long long v = iDefault;
  if( z ) parseInt(z, &v);
  return v;
}
/* The value of option zName; a usage error (exit 2) when absent. */
const char *optReq(const Opts *o, const char *zName){
  const char *z = optStr(o, zName);
  if( z==0 ) fail(EXIT_USAGE, "the option '--%s' is required", zName);
  return z;
}
/* optInt, and a usage error (exit 2) when the value is negative. */
long long optNonNeg(const Opts *o, const char *zName, long long iDefault){
  long long v = optInt(o, zName, iDefault);
  if( v<0 ) fail(EXIT_USAGE, "option '--%s' must be a non-negative integer", zName);
  return v;
}

/* ================================================================== */
/* Option tables                                                       */
/* ================================================================== */
#define KNOB_OPTS \
  {"warmup-steps", OPT_INT, "N", "steps numbered below N are warmup (default 5)"}, \
  {"hot-op-limit", OPT_INT, "N", "hot ops kept in the summary (default 25)"}, \
  {"breakdown-mode", OPT_STR, "MODE", "exclusive_per_track (default) or exclusive_global"}, \
  {"session", OPT_STR, "S", "a folder's session: reference (default), latest, all, or a session folder name"}, \
  {"all-hosts", OPT_FLAG, 0, "import every host of the folder's session, each as a trace <label>/<host>"}

#define THRESHOLD_OPTS \
  {"max-step-median-regression-pct", OPT_NUM, "PCT", "fail above this median step-time regression (default 5.0)"}, \
  {"max-step-p90-regression-pct", OPT_NUM, "PCT", "fail above this p90 step-time regression (default 10.0)"}, \
  {"max-communication-share-regression-abs", OPT_NUM, "X", "warn above this communication share increase (default 0.05)"}, \
  {"max-stall-share-regression-abs", OPT_NUM, "X", "warn above this stall share increase (default 0.05)"}

static const OptSpec SUMMARIZE_OPTS[] = {
  {"trace-file", OPT_PATH, "PATH", "a trace JSON file (.json or .json.gz)"},
  {"xplane-file", OPT_PATH, "PATH", "an .xplane.pb file (XSpace; .xplane.pb.gz too)"},
  {"xplane-output-dir", OPT_PATH, "DIR", "(reference tool's xprof tables; accepted, ignored)"},
  {"xplane-count-trace-events", OPT_FLAG, 0, "(reference tool's xprof count; accepted, ignored)"},
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
  {"profsum", OPT_FLAG, 0, "append profsum's sections (wall-clock time, advice, ...) after the reference's"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the report here and print PATH"},
  {0,0,0,0}
};

static const OptSpec TRIM_OPTS[] = {
  {"trace-file", OPT_STR, "PATH", "the trace to trim: trace JSON (gzip or plain) or an .xplane.pb"},
  {"output", OPT_STR, "PATH", "the smaller trace to write (gzipped JSON)"},
  {"where", OPT_STR, "SQL", "any condition on the columns of trace_events (e.g. \"pid = 3\")"},
  {"pid", OPT_INT, "PID", "only this process (a device), plus its metadata"},
  {"start-us", OPT_NUM, "US", "only events starting at or after this time (µs, as in the file)"},
  {"end-us", OPT_NUM, "US", "only events starting before this time (µs)"},
  {0,0,0,0}
};

static const OptSpec QUERY_OPTS[] = {
  {"summary", OPT_PATH, "PATH", "a profile_summary.v1 JSON file (or a trace, summarized first)"},
  {"db", OPT_STR, "DB", "a profsum database (with --trace)"},
  {"trace", OPT_STR, "LABEL", "label or trace_id of a trace in --db"},
  {"question", OPT_STR, "TEXT", "the question (see --list)"},
  {"top-k", OPT_INT, "N", "rows per answer (default 10)"},
  {"list", OPT_FLAG, 0, "list the kinds of questions understood, with examples"},
  {"advice", OPT_FLAG, 0, "add profsum's advice and question_recognized to the answer (not in the reference's)"},
  KNOB_OPTS,
  {"output", OPT_PATH, "PATH", "write the answer JSON here and print PATH"},
  {0,0,0,0}
};

static const OptSpec COMPARE_OPTS[] = {
  {"before", OPT_PATH, "PATH", "before: a summary or trace file (or a label/id of --db)"},
  {"after", OPT_PATH, "PATH", "after: a summary or trace file (or a label/id of --db)"},
  {"strict-provenance", OPT_FLAG, 0, "fail when the provenance checks fail"},
  {"top-k", OPT_INT, "N", "regressed/improved ops listed (default 10)"},
  {"format", OPT_STR, "json|md|html", "json (default: the reference's), or profsum's comparison for people"},
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
  {"artifact-name", OPT_STR, "NAME", "artifact name (default profile-summary-<run_id>, else profile-summary-<UTC YYYYmmdd-HHMMSS>)"},
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
/* Command table, main                                                 */
/* ================================================================== */
static const Cmd aCmd[] = {
  {"summarize", "summarize a profile into a profile_summary.v1 JSON document",
   "(--trace-file PATH | --xplane-file PATH | --profile-dir DIR | --artifact REF | --run-target RUN) [options]",
   "Import the profile (into a temporary database, or --db) and emit its profile_summary.v1 JSON.",
   SUMMARIZE_OPTS, cmdSummarize, 0, 0},
  {"report", "the markdown report of a summary",
   "(--summary PATH | --db DB --trace LABEL) [--top-k N] [--output PATH]",
   "Emit the markdown report of a profile_summary.v1 file (or of a trace of --db).",
   REPORT_OPTS, cmdReport, 0, 0},
  {"query", "answer a question about a summary (top ops, gaps, regions, ...)",
   "(--summary PATH | --db DB --trace LABEL) --question TEXT [--top-k N] | --list",
   "Answer a profiling question with JSON (tools-spec section 2); --list shows what can be asked.",
   QUERY_OPTS, cmdQuery, 0, 0},
  {"compare", "compare a before/after pair",
   "--before PATH --after PATH [--strict-provenance] [--top-k N]",
   "Emit the comparison JSON of two summaries or traces (step time, shares, regressed/improved ops).",
   COMPARE_OPTS, cmdCompare, 0, 0},
  {"track", "assess a before/after pair against thresholds and record it",
   "--before PATH --after PATH [--history PATH] [--label L] [--fail-on fail|warn] [thresholds]",
   "Compare, classify pass/warn/fail against the thresholds, append the record to --history\n"
   "(a .db, or a .jsonl file as the reference tool writes) and emit the record JSON.\n"
   "With --fail-on fail (or warn) the exit code is 3 when the status is fail (or warn/fail).\n"
   "Into a .db, a file stored before (same path, content, knobs and profsum build) is used\n"
   "again: one baseline tracked run after run, or by concurrent jobs, is stored once.",
   TRACK_OPTS, cmdTrack, 0, 0},
  {"history", "summarize a regression history",
   "--history PATH [--tail N] [--output PATH]",
   "Emit the history summary JSON (status counts, top failures and warnings, recent records).",
   HISTORY_OPTS, cmdHistory, 0, 0},
  {"bundle", "write the comparison bundle of a before/after pair",
   "(--before-summary PATH | --before-run-target RUN) (--after-summary PATH | --after-run-target RUN) --output-dir DIR",
   "Write before/after summaries, compare.json, track.json and the two reports into --output-dir;\n"
   "emit the manifest JSON.",
   BUNDLE_OPTS, cmdBundle, 0, 0},
  {"publish", "publish a summary to Weights & Biases",
   "(--summary PATH | --db DB --trace LABEL) [--report PATH] [--dry-run] [W&B options]",
   "Upload the summary (and report) as a profile_summary artifact; --dry-run only shows what would be sent.",
   PUBLISH_OPTS, cmdPublish, 0, 0},
  {"trim", "write a smaller trace (selected events + their metadata)",
   "--trace-file PATH --output PATH [--pid PID] [--start-us US] [--end-us US] [--where SQL]",
   "Write a valid gzipped trace JSON with only the selected events and the metadata of their\n"
   "processes, so that Perfetto or TensorBoard can open a part of a trace that is too big.",
   TRIM_OPTS, cmdTrim, 0, 0},
  {"sql", "open the sqlite3 shell with profsum loaded",
   "[DB] [sqlite3 arguments...]",
   "Run the sqlite3 shell on DB with `.load profsum.so` done (profsum.so is found next to this\n"
   "program, in ../lib, or at $PROFSUM_SO).  Every argument goes to sqlite3 as it is (-json,\n"
   "-readonly, SQL text, ...), but -h/--help and a first `--`, which ends profsum's own.",
   SQL_OPTS, cmdSql, 0, 1},
  {"view", "serve a trace to the Perfetto UI; list or copy a log directory's traces",
   "TRACE|DIR [--window WHERE] [--port N] [--timeout SECONDS] | DIR --list | DIR --extract DEST",
   "Serve the trace (a file, or the one profsum reads in the log directory DIR; --window: only the\n"
   "events for which WHERE holds) on http://127.0.0.1:9001/ to the Perfetto UI, and print the link\n"
   "to open and the TensorBoard command for the log directory.  Loopback only; stops after\n"
   "--timeout seconds (600) or on Ctrl-C.  --list and --extract work on DIR without a server.",
   VIEW_OPTS, cmdView, 1, 0},
};

/* Write the program's usage (the command list, exit codes) to f. */
static void mainUsage(FILE *f){
  size_t i;
  fprintf(f, "usage: profsum <command> [options]\n\n"
             "profsum %s: JAX/XLA profiler traces into profile_summary.v1, reports, comparisons and SQL.\n\n"
             "commands:\n", PROFSUM_VERSION);
  for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++) fprintf(f, "  %-10s %s\n", aCmd[i].zName, aCmd[i].zSummary);
  fprintf(f, "\n'profsum <command> --help' shows the options of a command.\n"
             "Exit codes: 0 ok, 1 failure, 2 usage, 3 track --fail-on triggered.\n");
}

/* Say on stderr that z is no command (zWho: "profsum" or "profsum
** help"), with the nearest command name when one is close (nearestName)
** or the only one z begins. */
static void unknownCommand(const char *zWho, const char *z){
  const char *azName[sizeof(aCmd)/sizeof(aCmd[0])];
  const char *zNear, *zPrefix = 0;
  size_t i, nPrefix = 0;
  for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++){
    azName[i] = aCmd[i].zName;
    if( z[0] && strncmp(aCmd[i].zName, z, strlen(z))==0 ){ zPrefix = aCmd[i].zName; nPrefix++; }
  }
  zNear = nPrefix==1 ? zPrefix : nearestName(z, strlen(z), azName, sizeof(aCmd)/sizeof(aCmd[0]));
  if( zNear ) errLine("%s: unknown command '%s' (did you mean '%s'?)", zWho, z, zNear);
  else errLine("%s: unknown command '%s'", zWho, z);
}

/* profsum <command> [options]: find the command (or answer --help,
** --version, help CMD: exit 1 when that text cannot be written, 2 for an
** unknown command), set up the terminal flags, the signal handlers
** (cleanup on SIGINT/SIGTERM/SIGHUP; a closed pipe is an EPIPE write
** error, writeStdoutVis) and the extension, parse the options and run the command.
** Returns its exit code (EXIT_*). */
int main(int argc, char **argv){
  size_t i;
  Opts o;
  int rc;
  if( argc<2 ){ mainUsage(stderr); return EXIT_USAGE; }
  if( strcmp(argv[1], "-h")==0 || strcmp(argv[1], "--help")==0 ){ mainUsage(stdout); exitAfterStdout(); }
  if( strcmp(argv[1], "--version")==0 || strcmp(argv[1], "version")==0 ){
    printf("profsum %s (SQLite %s)\n", PROFSUM_VERSION, sqlite3_libversion());
    exitAfterStdout();
  }
  if( strcmp(argv[1], "help")==0 ){
    if( argc>2 ){
      for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++){
        if( strcmp(argv[2], aCmd[i].zName)==0 ){ printHelp(&aCmd[i], stdout); exitAfterStdout(); }
      }
      g_bErrTty = isatty(2);
      unknownCommand("profsum help", argv[2]);
      mainUsage(stderr);
      return EXIT_USAGE;
    }
    mainUsage(stdout);
    exitAfterStdout();
  }
  for(i=0; i<sizeof(aCmd)/sizeof(aCmd[0]); i++){
    if( strcmp(argv[1], aCmd[i].zName)==0 ) break;
  }
  if( i==sizeof(aCmd)/sizeof(aCmd[0]) ){
    g_bErrTty = isatty(2);
    unknownCommand("profsum", argv[1]);
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
