/*
** process.c — the `profsum` process's state and how it ends.
**
** The working connection and the temporary database behind it (openDb,
** db.c, fills them in), the scratch output of a command (a temporary file
** or directory to remove if the process dies before it is renamed), their
** removal on a normal exit, on failure and on a signal, and the error
** exit itself: fail() prints "profsum <cmd>: <message>" and exits, and the
** x* allocators make running out of memory such a failure.
*/
#include "cli.h"
#include "pyformat.h"       /* profsumPyVformat */

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *g_zCmd = 0;      /* current subcommand (error prefix) */
sqlite3 *g_db = 0;           /* the working connection */
char g_zTempDb[PATH_MAX];    /* temporary database to delete ("" if none) */
const char *g_zUserDb = 0;   /* the database the user named (not owned), or 0 */
/* its private directory (mkdtemp), "" if none; shorter than g_zTempDb by
** more than "/profsum.db" */
char g_zTempDbDir[PATH_MAX - 16];

/* A scratch output (a temporary file beside --output, and a directory if
** one is given) to remove on a signal or a failure.  g_bScratch is
** cleared before the buffers change and set after, so the signal handler
** never reads a half-written path. */
static char g_zScratchFile[PATH_MAX];
static char g_zScratchDir[PATH_MAX];
static volatile sig_atomic_t g_bScratch = 0;

/* Record zFile (0: none) and zDir (0: none) as the scratch output.  Paths
** that do not fit are not recorded (they are still removed by the code
** that made them, only not on a signal). */
void scratchSet(const char *zFile, const char *zDir){
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

/* The end of every command, normal or not: close the working connection,
** remove the temporary database and the scratch output, and forget them
** (a second call does nothing). */
void cleanup(void){
  if( g_db ){ sqlite3_close_v2(g_db); g_db = 0; }
  removeTempFiles();
  g_bScratch = 0;
  g_zTempDb[0] = 0;
  g_zTempDbDir[0] = 0;
}

/* The handler of SIGINT, SIGTERM and SIGHUP (set in main): remove what
** removeTempFiles removes and exit 128 + sig, as a shell reports it. */
void onSignal(int sig){
  removeTempFiles();
  _exit(128 + sig);
}

/* One line of text on stderr: the formatted message and a newline.  On a
** terminal the message is shown visible (errors quote file names, labels
** and trace text), a newline inside it as "\n". */
void errLine(const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = profsumPyVformat(zFmt, ap);     /* C's printf, in the C locale */
  va_end(ap);
  if( z ){
    writeVisible(stderr, g_bErrTty, z, strlen(z), 0);
    sqlite3_free(z);
  }else{
    fputs(zFmt, stderr);                 /* out of memory: the bare format */
  }
  fputc('\n', stderr);
  fflush(stderr);
}

/* Print "profsum <cmd>: <message>" to stderr and exit with rc.  On a
** terminal the message is shown visible (errLine). */
void fail(int rc, const char *zFmt, ...){
  va_list ap;
  char *zMsg;
  progressAbandon();
  fflush(stdout);
  va_start(ap, zFmt);
  zMsg = profsumPyVformat(zFmt, ap);
  va_end(ap);
  errLine("profsum%s%s: %s", g_zCmd ? " " : "", g_zCmd ? g_zCmd : "", zMsg ? zMsg : zFmt);
  sqlite3_free(zMsg);
  if( rc==EXIT_USAGE ){
    errLine("Try 'profsum%s%s --help'.", g_zCmd ? " " : "", g_zCmd ? g_zCmd : "");
  }
  cleanup();
  exit(rc);
}

/* malloc(n) (at least 1 byte); out of memory is fatal.  Freed with free. */
void *xmalloc(size_t n){
  void *p = malloc(n ? n : 1);
  if( p==0 ) fail(EXIT_FAIL, "out of memory");
  return p;
}
/* A malloc'd copy of z; out of memory is fatal.  Freed with free. */
char *xstrdup(const char *z){
  size_t n = strlen(z);
  char *r = xmalloc(n+1);
  memcpy(r, z, n+1);
  return r;
}
/* sqlite3_vmprintf(); out of memory is fatal.  Freed with sqlite3_free. */
char *xvprintf(const char *zFmt, va_list ap){
  char *z = sqlite3_vmprintf(zFmt, ap);
  if( z==0 ) fail(EXIT_FAIL, "out of memory");
  return z;
}
/* sqlite3_mprintf() (SQLite's formatting: %q, %lld, ...); out of memory
** is fatal.  Freed with sqlite3_free. */
char *xprintf(const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = xvprintf(zFmt, ap);
  va_end(ap);
  return z;                       /* freed with sqlite3_free */
}
