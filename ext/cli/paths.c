/*
** paths.c — small questions and answers about paths: does it exist, is it
** a directory, is it a remote source (no local file), mkdir -p, and the
** absolute form of a relative path.
*/
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 if something (a file, a directory, ...) is at z, following links. */
int pathExists(const char *z){
  struct stat st;
  return stat(z, &st)==0;
}
/* 1 if z is a directory (or a link to one). */
int isDir(const char *z){
  struct stat st;
  return stat(z, &st)==0 && S_ISDIR(st.st_mode);
}
/* A source profsum_import fetches itself (no local file). */
int isRemoteSource(const char *z){
  return strncmp(z, "wandb:", 6)==0 || strncmp(z, "wandb-run:", 10)==0
      || strncmp(z, "http://", 7)==0 || strncmp(z, "https://", 8)==0;
}

/* mkdir -p of the directory part of zPath (bParentOnly) or of zPath. */
void makeDirs(const char *zPath, int bParentOnly){
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

/* zPath as an absolute path: itself when it starts with '/', else the
** current directory joined with it ("." gives the current directory).
** The path need not exist; nothing is resolved (no symlinks, no "..").
** Returns a malloc'd string; errors are fatal. */
char *absolutePath(const char *zPath){
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

/* The real path zPath has, or would have once created: realpath() of its
** longest leading part that exists, then the rest of it with "." and ".."
** resolved by name (those components do not exist yet, so none of them is
** a symbolic link).  Returns a malloc'd string; errors are fatal. */
char *realPathAhead(const char *zPath){
  char *zAbs = absolutePath(zPath), zReal[PATH_MAX];
  size_t n = strlen(zAbs), nRes;
  Buf res;
  const char *zRest;
  /* n: the length of the leading part that realpath() resolves */
  for(;;){
    char c = zAbs[n];
    zAbs[n] = 0;
    if( realpath(n ? zAbs : "/", zReal) ){ zAbs[n] = c; break; }
    zAbs[n] = c;
    if( n==0 ) fail(EXIT_FAIL, "'%s': cannot resolve '/': %s", zPath, strerror(errno));
    while( n>0 && zAbs[n-1]!='/' ) n--;       /* drop the last component */
    while( n>0 && zAbs[n-1]=='/' ) n--;
  }
  memset(&res, 0, sizeof(res));
  bufPuts(&res, zReal);
  for(zRest=zAbs+n; *zRest; ){
    size_t nComp;
    while( *zRest=='/' ) zRest++;
    nComp = strcspn(zRest, "/");
    if( nComp==0 || (nComp==1 && zRest[0]=='.') ){
      /* nothing */
    }else if( nComp==2 && zRest[0]=='.' && zRest[1]=='.' ){
      nRes = res.n;
      while( nRes>1 && res.z[nRes-1]!='/' ) nRes--;
      if( nRes>1 ) nRes--;                    /* the '/' before it, not the root */
      res.n = nRes;
      res.z[nRes] = 0;
    }else{
      if( res.n==0 || res.z[res.n-1]!='/' ) bufPuts(&res, "/");
      bufAppend(&res, zRest, nComp);
    }
    zRest += nComp;
  }
  free(zAbs);
  return res.z;
}

/* 1 if the real path zIn is zDir or below it (both absolute, without
** "." or ".." components and without a trailing '/', as realPathAhead and
** realpath() give them), else 0. */
int pathWithin(const char *zIn, const char *zDir){
  size_t n = strlen(zDir);
  if( n==1 && zDir[0]=='/' ) return 1;       /* everything is below the root */
  return strncmp(zIn, zDir, n)==0 && (zIn[n]==0 || zIn[n]=='/');
}

/* The real path of the file that opening zPath reaches, or would create:
** realPathAhead, then, while the last component is a symbolic link that
** leads nowhere yet, its target (relative to the link's directory) in turn,
** as SQLite and open(O_CREAT) follow it to create the file there.  At most
** 40 links are followed, as the kernel does.  Returns a malloc'd string;
** errors are fatal. */
char *realPathFollow(const char *zPath){
  char *zReal = realPathAhead(zPath);
  int nLink;
  for(nLink=0; nLink<40; nLink++){
    char zLink[PATH_MAX];
    struct stat st;
    ssize_t n;
    char *zNext;
    if( lstat(zReal, &st)!=0 || !S_ISLNK(st.st_mode) ) break;
    n = readlink(zReal, zLink, sizeof(zLink)-1);
    if( n<=0 ) break;
    zLink[n] = 0;
    if( zLink[0]=='/' ){
      zNext = realPathAhead(zLink);
    }else{
      char *zSlash = strrchr(zReal, '/'), *zJoin;
      zJoin = xmalloc(strlen(zReal) + (size_t)n + 2);
      sprintf(zJoin, "%.*s/%s", (int)(zSlash ? zSlash-zReal : 0), zReal, zLink);
      zNext = realPathAhead(zJoin);
      free(zJoin);
    }
    free(zReal);
    zReal = zNext;
  }
  return zReal;
}

/* 1 if zPath names the file whose real path is zReal (realPathFollow):
** the same device and inode when both exist (zPath followed if it is a
** link), else the same real path, so that two names of a file that does
** not exist yet are told too; else 0. */
int isSameFile(const char *zPath, const char *zReal){
  struct stat a, b;
  char *z;
  int bSame;
  if( stat(zPath, &a)==0 && stat(zReal, &b)==0 ){
    return a.st_dev==b.st_dev && a.st_ino==b.st_ino;
  }
  z = realPathAhead(zPath);
  bSame = strcmp(z, zReal)==0;
  free(z);
  return bSame;
}
