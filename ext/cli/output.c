/*
** output.c — where a command's text goes: stdout (shown visible on a
** terminal, term.c; a closed pipe ends the program quietly), or a file
** written atomically (a new temporary file beside it, fsync'ed, renamed
** over it), and emit(), the reference tool's choice between the two.
*/
#include "cli.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Write all n bytes of z to stdout; a closed pipe (EPIPE: `| head -1`)
** ends the program quietly as SIGPIPE ends most Unix tools: cleanup(),
** then SIGPIPE with its default action (status 141 in a shell), no
** message.  When stdout is a terminal the text is shown visible (term.c;
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
    if( e==EPIPE ){
      cleanup();
      signal(SIGPIPE, SIG_DFL);
      raise(SIGPIPE);
      _exit(128 + SIGPIPE);                 /* not reached */
    }
    fail(EXIT_FAIL, "cannot write to stdout: %s", strerror(e));
  }
  free(zVis);
}

/* writeStdoutVis, newlines kept (text of several lines). */
void writeStdout(const char *z, size_t n){ writeStdoutVis(z, n, 1); }

/* Create the temporary file for zPath's output beside it
** (profsumFileTempBeside: a new random name, never through an existing
** file or symlink) and record it as the scratch output (removed on a
** signal; the caller clears it with scratchSet(0, 0) before it renames or
** removes the file).  Returns the descriptor and sets *pzTmp
** (sqlite3_free), or -1 with errno set and *pzTmp = 0. */
static int createTempBeside(const char *zPath, char **pzTmp){
  int fd = profsumFileTempBeside(zPath, pzTmp);
  if( fd>=0 ) scratchSet(*pzTmp, 0);
  return fd;
}

/* Refuse (exit 1) an --output zPath that no file can be written to: a
** directory, or a symbolic link other than those profsumFileSpecial()
** names (a link to a file, to a directory, or to nothing: neither
** followed, which could write outside the directory the user gave, nor
** replaced, which would delete it; fileio.h).  Run before a command does
** any work (main) and again just before the write.  0 does nothing. */
void failOutputUnwritable(const char *zPath){
  struct stat st;
  char *zLink = 0;
  if( zPath==0 ) return;
  if( lstat(zPath, &st)==0 && S_ISDIR(st.st_mode) ){
    fail(EXIT_FAIL, "cannot write '%s': it is a directory (--output names the file to write)", zPath);
  }
  if( profsumFileIsLink(zPath, &zLink) ){
    char *zMsg;
    if( zLink==0 ) fail(EXIT_FAIL, "out of memory");
    zMsg = xprintf("cannot write '%s': it is %s; %s", zPath, zLink, PROFSUM_FILE_LINK_ADVICE);
    sqlite3_free(zLink);
    fail(EXIT_FAIL, "%s", zMsg);
  }
}

/* Write z (+ a final newline if missing) to zPath atomically: a new
** temporary file in the same directory (createTempBeside: never through
** an existing file or symlink), fsync'ed, then renamed over zPath.  The
** file gets mode 0666 less the umask.  Parent directories are created
** (links in the directory part are followed: the user named it).  A
** device or a pipe at zPath (--output /dev/null, a named pipe), a link to
** one, or a link in /dev or /proc (--output /dev/stdout) is written into
** as it is, never replaced; a socket, a directory or any other symbolic
** link is refused (failOutputUnwritable).  Errors are fatal (exit 1, the
** temporary file removed) and say which step failed. */
static void writeFileAtomic(const char *zPath, const char *z){
  size_t n = strlen(z);
  char *zTmp;
  int fd, e;
  int bNl = n==0 || z[n-1]!='\n';
  const char *zSpecial = profsumFileSpecial(zPath);
  struct stat st;
  failOutputUnwritable(zPath);
  if( zSpecial ){
    struct stat so;
    if( stat(zPath, &st)==0 && fstat(STDOUT_FILENO, &so)==0 && st.st_dev==so.st_dev
     && st.st_ino==so.st_ino ){
      /* this process's own stdout (/dev/stdout, /proc/self/fd/1): written
      ** through it, at its offset, as the text printed after it, and as
      ** stdout is written (a closed pipe ends quietly) */
      writeStdoutVis(z, n, 1);
      if( bNl ) writeStdoutVis("\n", 1, 1);
      return;
    }
    if( strstr(zSpecial, "socket") ) fail(EXIT_FAIL, "cannot write '%s': it is %s", zPath, zSpecial);
    /* appended: a descriptor link (/dev/stdout redirected to a file) adds
    ** to what the file holds, as a write to stdout itself would */
    fd = open(zPath, O_WRONLY|O_APPEND|O_NOCTTY|O_CLOEXEC);
    if( fd<0 ) fail(EXIT_FAIL, "cannot write '%s': %s", zPath, strerror(errno));
    if( profsumFileWriteAll(fd, z, n)!=0 || (bNl && profsumFileWriteAll(fd, "\n", 1)!=0) ){
      e = errno;
      close(fd);
      fail(EXIT_FAIL, "cannot write '%s': %s", zPath, strerror(e));
    }
    close(fd);
    return;
  }
  makeDirs(zPath, 1);
  fd = createTempBeside(zPath, &zTmp);
  if( fd<0 ){
    const char *zSlash = strrchr(zPath, '/');
    e = errno;
    fail(EXIT_FAIL, "cannot write '%s': cannot create a new file in '%.*s' to write it and rename "
         "it over '%s': %s", zPath, zSlash ? (zSlash==zPath ? 1 : (int)(zSlash-zPath)) : 1,
         zSlash ? zPath : ".", zPath, strerror(e));
  }
  if( profsumFileWriteAll(fd, z, n)!=0 || (bNl && profsumFileWriteAll(fd, "\n", 1)!=0) || fsync(fd)!=0 ){
    e = errno;
    close(fd);
  }else{
    e = close(fd)!=0 ? errno : 0;
  }
  scratchSet(0, 0);
  if( e ){
    unlink(zTmp);
    fail(EXIT_FAIL, "cannot write '%s': %s", zPath, strerror(e));
  }
  if( rename(zTmp, zPath)!=0 ){
    e = errno;
    unlink(zTmp);
    fail(EXIT_FAIL, "cannot write '%s': cannot rename the new file '%s' over it: %s", zPath, zTmp,
         strerror(e));
  }
  sqlite3_free(zTmp);
}

/* Before a command reads anything: refuse (exit 2) an --output zOutput
** that is the file zInput it reads, which option zOpt names ("--summary",
** "--trace-file", ...): emit() would rename the output over the input.
** Nothing to check when either is 0, or zInput is a remote source, or
** not a regular file: missing (the command then says so itself: a label
** of --db, a missing file), a directory (--profile-dir: an output inside
** it is another file) or a device (/dev/stdin and /dev/stdout can be one
** terminal).  The same file: the same device and inode, a symlink or a
** hard link included (isSameFile), as trim's source itself is told. */
void failOutputOverInput(const char *zOutput, const char *zInput, const char *zOpt){
  struct stat st;
  char *zReal;
  if( zOutput==0 || zInput==0 || isRemoteSource(zInput) ) return;
  if( stat(zInput, &st)!=0 || !S_ISREG(st.st_mode) ) return;
  zReal = realPathFollow(zInput);
  if( isSameFile(zOutput, zReal) ){
    free(zReal);
    fail(EXIT_USAGE, "--output '%s' is the input of %s '%s' (the output would replace it): choose "
         "another file", zOutput, zOpt, zInput);
  }
  free(zReal);
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
