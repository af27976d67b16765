/*
** cli.h — what the files of the `profsum` command line share (ext/cli/).
**
** The command line is one program: main and the options in profsum_cli.c,
** the commands in cmd_*.c, and below them the process state and the error
** exit (process.c), terminal-safe text (term.c), text buffers (buf.c), the
** working connection (db.c), paths (paths.c), output (output.c), the
** progress line (progress.c) and the import of trace arguments
** (sources.c).  The declarations here are grouped by the file that defines
** them; the contract of each function is the comment above its definition.
**
** Conventions: strings returned are malloc'd (free) unless a comment says
** sqlite3_free; errors that end the command call fail(), which prints
** "profsum <cmd>: <message>", removes what the process made and exits.
*/
#ifndef PROFSUM_CLI_H
#define PROFSUM_CLI_H

#include <sqlite3.h>

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Exit codes of every command. */
#define EXIT_OK      0
#define EXIT_FAIL    1
#define EXIT_USAGE   2
#define EXIT_GATE    3          /* track --fail-on triggered */

/* ---- process.c: process state, cleanup, the error exit -------------- */
extern const char *g_zCmd;      /* current subcommand (error prefix) */
extern sqlite3 *g_db;           /* the working connection */
extern char g_zTempDb[PATH_MAX];        /* temporary database ("" if none) */
extern const char *g_zUserDb;   /* the database the user named, or 0 */
extern char g_zTempDbDir[PATH_MAX - 16];  /* its private directory, or "" */

void scratchSet(const char *zFile, const char *zDir);
void cleanup(void);
void onSignal(int sig);
void errLine(const char *zFmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fail(int rc, const char *zFmt, ...) __attribute__((format(printf, 2, 3)));
void *xmalloc(size_t n);
char *xstrdup(const char *z);
char *xvprintf(const char *zFmt, va_list ap);     /* sqlite3_free */
char *xprintf(const char *zFmt, ...);             /* sqlite3_free */

/* ---- buf.c: text buffers and JSON objects --------------------------- */
typedef struct Buf { char *z; size_t n, nAlloc; } Buf;   /* zero it to start */
typedef struct JObj { Buf b; int n; } JObj;              /* zero it to start */

void bufAppend(Buf *b, const char *z, size_t n);
void bufPuts(Buf *b, const char *z);
void bufPrintf(Buf *b, const char *zFmt, ...);
void bufJsonStr(Buf *b, const char *z);
void jobjStr(JObj *o, const char *zKey, const char *zVal);
void jobjRaw(JObj *o, const char *zKey, const char *zRaw);
void jobjInt(JObj *o, const char *zKey, long long v);
void jobjNum(JObj *o, const char *zKey, double v);
const char *jobjEnd(JObj *o);
char *shellQuote(const char *z);   /* for a POSIX shell; malloc'd */

/* ---- term.c: terminal-safe text ------------------------------------- */
extern int g_bOutTty;           /* stdout is a terminal (set in main) */
extern int g_bErrTty;           /* stderr is a terminal (set in main) */

size_t visibleInto(char *zOut, size_t nOut, const char *z, size_t n, int bKeepNl);
char *visibleAlloc(const char *z, size_t n, int bKeepNl, size_t *pnOut);
void writeVisible(FILE *f, int bTty, const char *z, size_t n, int bKeepNl);
char *jsonVisible(const char *zJson);
void bufCellVisible(Buf *b, const char *z);

/* ---- profsum_cli.c: options ----------------------------------------- */
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
  char **azRest;                       /* a pass-through command (sql): its */
  int nRest;                           /* arguments, `--` and -h/--help taken out */
} Opts;

int specIndex(const Opts *o, const char *zName, size_t nName);
int parseNum(const char *z, double *pV);
int parseNumText(const char *z, double *pV, char **pzText);
int optIdx(const Opts *o, const char *zName);
const char *optStr(const Opts *o, const char *zName);
const char *optRaw(const Opts *o, const char *zName);
int optFlag(const Opts *o, const char *zName);
long long optInt(const Opts *o, const char *zName, long long iDefault);
const char *optReq(const Opts *o, const char *zName);
long long optNonNeg(const Opts *o, const char *zName, long long iDefault);

/* ---- db.c: the working connection ----------------------------------- */
void openDb(const char *zPath, const char *zOpt);
void failOutputOver(const char *zOutput, const char *zFile, const char *zOpt, int bDb);
_Noreturn void failSqlMsg(const char *zMsg);
_Noreturn void failSql(const char *zSql);
char *sqlText(const char *zSql, const char *zTypes, ...);
char *sqlTextTry(char **pzErr, const char *zSql, const char *zTypes, ...);
int tableExists(const char *zName);

/* ---- paths.c: paths ------------------------------------------------- */
int pathExists(const char *z);
int isDir(const char *z);
int isRemoteSource(const char *z);
void makeDirs(const char *zPath, int bParentOnly);
char *absolutePath(const char *zPath);
char *realPathAhead(const char *zPath);
int pathWithin(const char *zIn, const char *zDir);
char *realPathFollow(const char *zPath);
int isSameFile(const char *zPath, const char *zReal);

/* ---- output.c: stdout, atomic files, emit --------------------------- */
void writeStdoutVis(const char *z, size_t n, int bKeepNl);
void writeStdout(const char *z, size_t n);
void emit(const char *zText, const char *zOutput);
void failOutputOverInput(const char *zOutput, const char *zInput, const char *zOpt);
void failOutputUnwritable(const char *zPath);

/* ---- progress.c: the progress line of an import --------------------- */
void progressStart(const char *zFile);
void progressAbandon(void);
void progressFinish(sqlite3_int64 iTrace);

/* ---- sources.c: trace arguments into the working database ----------- */
char *knobOptions(const Opts *o, int bReplace, const char *zSeries);
sqlite3_int64 importSource(const char *zSource, const char *zLabel, const char *zOpts);
sqlite3_int64 traceArg(const char *zOpt, const char *zArg, const char *zRaw, int bHaveDb,
                       const char *zOpts, sqlite3_int64 idOther);
sqlite3_int64 summaryArg(const Opts *o, const char *zOpts);
void failMissingDbForLabels(const char *zDb, const char *const *azArg, int nArg);
void failBeforeDb(const Opts *o);

/* ---- cmd_wandb.c: W&B flags, run targets ---------------------------- */
void wandbEnv(const Opts *o);
sqlite3_int64 importRunTarget(const char *zTarget, const char *zAlias, const char *zLabel,
                              const char *zOpts);

/* ---- the commands (cmd_*.c): each returns the exit code ------------- */
int cmdSummarize(Opts *o);      /* cmd_summary.c */
int cmdReport(Opts *o);
int cmdQuery(Opts *o);
int cmdCompare(Opts *o);        /* cmd_compare.c */
int cmdTrack(Opts *o);
int cmdHistory(Opts *o);
int cmdBundle(Opts *o);
int cmdPublish(Opts *o);        /* cmd_wandb.c */
int cmdTrim(Opts *o);           /* cmd_view.c */
int cmdView(Opts *o);
int cmdSql(Opts *o);            /* cmd_sql.c */

#endif /* PROFSUM_CLI_H */
