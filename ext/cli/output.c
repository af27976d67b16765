/*
** output.c — where a command's text goes: stdout (shown visible on a
** terminal, term.c; a closed pipe ends the program quietly), or a file
** written atomically (a new temporary file beside it, fsync'ed, renamed
** over it), and emit(), the reference tool's choice between the two.
*/
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write all n bytes of z to stdout; a closed pipe ends the program
** quietly.  When stdout is a terminal the text is shown visible (term.c;
** newlines kept when bKeepNl); to a file or a pipe the bytes go as they
** are. */
void writeStdoutVis(const char *z, size_t n, int bKeepNl){
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
void writeStdout(const char *z, size_t n){ writeStdoutVis(z, n, 1); }

/* Write all n bytes of z to fd (short writes and EINTR retried).  Returns
** 0, or -1 with errno set. */
int writeAll(int fd, const char *z, size_t n){
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

/* The reference's emit(): to --output (printing the path) or stdout
** (print(text): the text and a newline). */
void emit(const char *zText, const char *zOutput){
  if( zOutput ){
    writeFileAtomic(zOutput, zText);
    writeStdoutVis(zOutput, strlen(zOutput), 0);
    writeStdout("\n", 1);
  }else{
    writeStdout(zText, strlen(zText));
    writeStdout("\n", 1);
  }
}
