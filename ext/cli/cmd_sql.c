/*
** cmd_sql.c — the `sql` command: the sqlite3 shell run with profsum.so
** loaded (found through $PROFSUM_SO, next to this program, or in ../lib).
*/
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* The sqlite3 shell's command ".load PATH" for zPath (malloc'd): PATH in
** double quotes, in which the shell resolves C escapes, so '"' and '\\'
** are given as \" and \\, and control characters (a newline would end
** the command) as three-digit octal escapes; any other byte, a single
** quote included, stands for itself. */
static char *loadCommand(const char *zPath){
  Buf b;
  const unsigned char *c;
  memset(&b, 0, sizeof(b));
  bufPuts(&b, ".load \"");
  for(c=(const unsigned char*)zPath; *c; c++){
    if( *c=='"' || *c=='\\' ){
      char z[2] = {'\\', (char)*c};
      bufAppend(&b, z, 2);
    }else if( *c<0x20 || *c==0x7f ){
      bufPrintf(&b, "\\%03o", *c);
    }else{
      bufAppend(&b, (const char*)c, 1);
    }
  }
  bufPuts(&b, "\"");
  return b.z;
}

/* profsum sql [DB] [sqlite3 arguments]: replace this process with the
** sqlite3 shell ($PROFSUM_SQLITE3, default sqlite3) that loads profsum.so
** first, given every argument after the command as it is (o->azRest:
** sqlite3's own options such as -json or -readonly too; only -h/--help
** and a first "--" are profsum's).  Returns only on failure (exit 1). */
int cmdSql(Opts *o){
  char *zSo = findExtension(), *zLoad;
  char **azArg;
  int i, n = 0;
  const char *zShell = getenv("PROFSUM_SQLITE3");
  if( zShell==0 || zShell[0]==0 ) zShell = "sqlite3";
  zLoad = loadCommand(zSo);
  azArg = xmalloc(sizeof(char*)*(size_t)(o->nRest+4));
  azArg[n++] = (char*)zShell;
  azArg[n++] = "-cmd";
  azArg[n++] = zLoad;
  for(i=0; i<o->nRest; i++) azArg[n++] = o->azRest[i];
  azArg[n] = 0;
  fflush(stdout);
  execvp(zShell, azArg);
  fail(EXIT_FAIL, "cannot run %s: %s (install the sqlite3 package)", zShell, strerror(errno));
  return EXIT_FAIL;
}
