/*
** fileio.c — writing files whole or not at all: a temporary file beside
** the target, fsync, rename; and mkdir -p with undo (see fileio.h).
*/
#include "profsum_int.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Names tried for one temporary file before giving up. */
#define FILEIO_TRIES 100

/* The longest file name the temporary names keep of zPath's own, so that
** with ".tmp-" and 12 hex digits they stay within the 255 bytes a name may
** have. */
#define FILEIO_NAME_KEEP (255 - 17)

/* A buffer for the temporary names of zPath: zPath (its file name cut to
** FILEIO_NAME_KEEP bytes), ".tmp-" and room for 12 hex digits (filled in
** by tempOpen).  sqlite3_malloc'd, 0 on OOM. */
static char *tempNameBuf(const char *zPath){
  const char *zSlash = strrchr(zPath, '/');
  size_t nDir = zSlash ? (size_t)(zSlash - zPath) + 1 : 0;
  size_t nName = strlen(zPath + nDir);
  if( nName>FILEIO_NAME_KEEP ) nName = FILEIO_NAME_KEEP;
  return sqlite3_mprintf("%.*s.tmp-............", (int)(nDir + nName), zPath);
}

/* Create the temporary file named by zName (from tempNameBuf: its last 12
** bytes are replaced by random hex digits, again for every name taken).
** Returns the descriptor, or -1 with errno set. */
static int tempOpen(char *zName){
  static const char hx[] = "0123456789abcdef";
  size_t n = strlen(zName);
  int i, k;
  for(i=0; i<FILEIO_TRIES; i++){
    unsigned char a[6];
    int fd;
    sqlite3_randomness((int)sizeof(a), a);
    for(k=0; k<6; k++){
      zName[n-12+2*k] = hx[a[k]>>4];
      zName[n-11+2*k] = hx[a[k]&15];
    }
    fd = open(zName, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0666);
    if( fd>=0 ) return fd;
    if( errno!=EEXIST && errno!=ELOOP && errno!=EINTR ) return -1;
  }
  errno = EEXIST;
  return -1;
}

/* 1 when the folder of zPath, its links resolved, is /dev or lies under
** /dev or /proc: where a link names an open descriptor (/dev/stdout,
** /dev/fd/N, /proc/self/fd/N) or the system's own devices. */
static int inSystemDir(const char *zPath){
  const char *zSlash = strrchr(zPath, '/');
  char *zDir, *zReal;
  int r = 0;
  if( zSlash==0 ) zDir = sqlite3_mprintf(".");
  else if( zSlash==zPath ) zDir = sqlite3_mprintf("/");
  else zDir = sqlite3_mprintf("%.*s", (int)(zSlash - zPath), zPath);
  if( zDir==0 ) return 0;
  zReal = realpath(zDir, 0);
  if( zReal ){
    r = strcmp(zReal, "/dev")==0 || strncmp(zReal, "/dev/", 5)==0 || strcmp(zReal, "/proc")==0
     || strncmp(zReal, "/proc/", 6)==0;
    free(zReal);                   /* realpath's malloc */
  }
  sqlite3_free(zDir);
  return r;
}

/* See fileio.h. */
const char *profsumFileSpecial(const char *zPath){
  struct stat st;
  if( lstat(zPath, &st)!=0 ) return 0;
  if( S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ) return "a device";
  if( S_ISFIFO(st.st_mode) ) return "a pipe";
  if( S_ISSOCK(st.st_mode) ) return "a socket";
  if( S_ISLNK(st.st_mode) && stat(zPath, &st)==0 ){
    /* a link to what the CLI writes into in place (a device, a pipe, an
    ** open descriptor); any other link: profsumFileIsLink() */
    if( S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ) return "a link to a device";
    if( S_ISFIFO(st.st_mode) ) return "a link to a pipe";
    if( S_ISSOCK(st.st_mode) ) return "a link to a socket";
    if( inSystemDir(zPath) ) return "a link to an open file (a descriptor)";
  }
  return 0;
}

/* See fileio.h. */
int profsumFileIsLink(const char *zPath, char **pzWhat){
  struct stat st;
  char aTarget[1024];
  ssize_t n;
  const char *zKind;
  *pzWhat = 0;
  if( lstat(zPath, &st)!=0 || !S_ISLNK(st.st_mode) || profsumFileSpecial(zPath) ) return 0;
  n = readlink(zPath, aTarget, sizeof(aTarget)-1);
  if( n<0 ) n = 0;
  aTarget[n] = 0;
  if( stat(zPath, &st)!=0 ) zKind = "which does not exist";
  else if( S_ISDIR(st.st_mode) ) zKind = "a directory";
  else zKind = "a file";
  *pzWhat = sqlite3_mprintf("a symbolic link (to '%s%s', %s)", aTarget,
                            n==(ssize_t)sizeof(aTarget)-1 ? "..." : "", zKind);
  return 1;
}

/* 1 (errno set) when zPath is a target the writers here refuse: one that
** profsumFileSpecial() names (EINVAL) or a symbolic link (ELOOP). */
static int refusedTarget(const char *zPath){
  char *zWhat = 0;
  if( profsumFileSpecial(zPath) ){ errno = EINVAL; return 1; }
  if( profsumFileIsLink(zPath, &zWhat) ){ sqlite3_free(zWhat); errno = ELOOP; return 1; }
  return 0;
}

/* See fileio.h. */
int profsumFileTempBeside(const char *zPath, char **pzTmp){
  char *zName;
  int fd;
  *pzTmp = 0;
  if( refusedTarget(zPath) ) return -1;
  zName = tempNameBuf(zPath);
  if( zName==0 ){ errno = ENOMEM; return -1; }
  fd = tempOpen(zName);
  if( fd<0 ){
    int e = errno;
    sqlite3_free(zName);
    errno = e;
    return -1;
  }
  *pzTmp = zName;
  return fd;
}

/* See fileio.h. */
int profsumFileWriteAll(int fd, const void *z, size_t n){
  const char *p = (const char*)z;
  while( n>0 ){
    ssize_t w = write(fd, p, n);
    if( w<0 && errno==EINTR ) continue;
    if( w<=0 ){ if( w==0 ) errno = EIO; return -1; }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* See fileio.h. */
int profsumFileSyncClose(int fd){
  if( fsync(fd)!=0 ){
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return close(fd)!=0 ? -1 : 0;
}

/* See fileio.h. */
int profsumFileWriteTemp(const char *zPath, const void *z, size_t n, char **pzTmp, int *pErrno){
  char *zName;
  int fd, bad = 0;
  *pzTmp = 0;
  *pErrno = 0;
  if( refusedTarget(zPath) ){ *pErrno = errno; return PROFSUM_FILE_CREATE; }
  zName = tempNameBuf(zPath);
  if( zName==0 ) return PROFSUM_FILE_NOMEM;
  fd = tempOpen(zName);
  if( fd<0 ){
    *pErrno = errno;
    sqlite3_free(zName);
    return PROFSUM_FILE_CREATE;
  }
  if( profsumFileWriteAll(fd, z, n)!=0 ){
    *pErrno = errno;
    close(fd);
    bad = 1;
  }else if( profsumFileSyncClose(fd)!=0 ){
    *pErrno = errno;
    bad = 1;
  }
  if( bad ){
    unlink(zName);
    sqlite3_free(zName);
    return PROFSUM_FILE_WRITE;
  }
  *pzTmp = zName;
  return PROFSUM_FILE_OK;
}

/* See fileio.h. */
int profsumFileWriteAtomic(const char *zPath, const void *z, size_t n, int *pErrno){
  char *zTmp = 0;
  int rc = profsumFileWriteTemp(zPath, z, n, &zTmp, pErrno);
  if( rc ) return rc;
  if( rename(zTmp, zPath)!=0 ){
    *pErrno = errno;
    unlink(zTmp);
    rc = PROFSUM_FILE_RENAME;
  }
  sqlite3_free(zTmp);
  return rc;
}

/* See fileio.h. */
char *profsumPathDir(const char *zPath){
  const char *zSlash = strrchr(zPath, '/');
  if( zSlash==0 ) return sqlite3_mprintf(".");
  if( zSlash==zPath ) return sqlite3_mprintf("/");
  return sqlite3_mprintf("%.*s", (int)(zSlash-zPath), zPath);
}

/* See fileio.h. */
void profsumMadeDirsUndo(ProfsumMadeDirs *pM){
  while( pM->n>0 ){
    pM->n--;
    rmdir(pM->az[pM->n]);
    sqlite3_free(pM->az[pM->n]);
  }
}

/* See fileio.h. */
void profsumMadeDirsKeep(ProfsumMadeDirs *pM){
  while( pM->n>0 ){ pM->n--; sqlite3_free(pM->az[pM->n]); }
}

/* See fileio.h. */
int profsumMkdirs(const char *zDir, ProfsumMadeDirs *pM, char **pzErr){
  char *z = sqlite3_mprintf("%s", zDir);
  int n, i;
  if( z==0 ) return SQLITE_NOMEM;
  n = (int)strlen(z);
  while( n>1 && z[n-1]=='/' ) z[--n] = 0;
  for(i=1; i<=n; i++){
    struct stat st;
    char save;
    if( i<n && z[i]!='/' ) continue;
    if( i<n && z[i-1]=='/' ) continue;
    save = z[i];
    z[i] = 0;
    if( stat(z, &st)==0 ){
      if( !S_ISDIR(st.st_mode) ){
        *pzErr = sqlite3_mprintf("'%s': not a directory", z);
        sqlite3_free(z);
        return SQLITE_CANTOPEN;
      }
    }else if( errno==ENOENT ){
      if( mkdir(z, 0777)==0 ){
        if( pM->n<(int)(sizeof(pM->az)/sizeof(pM->az[0])) ){
          pM->az[pM->n] = sqlite3_mprintf("%s", z);
          if( pM->az[pM->n] ) pM->n++;
        }
      }else if( errno!=EEXIST ){
        *pzErr = sqlite3_mprintf("cannot create directory '%s': %s", z, strerror(errno));
        sqlite3_free(z);
        return SQLITE_CANTOPEN;
      }
    }else{
      *pzErr = sqlite3_mprintf("'%s': %s", z, strerror(errno));
      sqlite3_free(z);
      return SQLITE_CANTOPEN;
    }
    z[i] = save;
  }
  sqlite3_free(z);
  return SQLITE_OK;
}

/* 1 when a and b (stat results) are the same file. */
static int sameFile(const struct stat *a, const struct stat *b){
  return a->st_dev==b->st_dev && a->st_ino==b->st_ino;
}

/* The phrases of the database files: the database and its side files. */
static const char *const azDbSuffix[] = { "", "-wal", "-shm", "-journal" };
static const char *const azDbWhat[] = { "the database", "the write-ahead log",
                                        "the shared-memory index", "the rollback journal" };
#define N_DB_SUFFIX ((int)(sizeof(azDbSuffix)/sizeof(azDbSuffix[0])))

/* profsumFileIsDatabase's work: the phrase (sqlite3_malloc'd) or 0; *pOom
** set when an allocation failed (the answer is then unknown). */
static char *fileDbWhat(sqlite3 *db, const char *zPath, int *pOom){
  struct stat st;
  sqlite3_stmt *p = 0;
  char *zOut = 0;
  size_t n = zPath ? strlen(zPath) : 0;
  int fd, k, bExists;
  if( zPath==0 ) return 0;
  bExists = stat(zPath, &st)==0 && S_ISREG(st.st_mode);
  /* a database of this connection, or one of its side files */
  if( bExists && db
   && sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list", -1, &p, 0)==SQLITE_OK ){
    while( zOut==0 && !*pOom && sqlite3_step(p)==SQLITE_ROW ){
      const char *zSchema = (const char*)sqlite3_column_text(p, 0);
      const char *zFile = zSchema ? sqlite3_db_filename(db, zSchema) : 0;
      if( zFile==0 || zFile[0]==0 ) continue;           /* :memory:, temp */
      for(k=0; zOut==0 && k<N_DB_SUFFIX; k++){
        char *zF = sqlite3_mprintf("%s%s", zFile, azDbSuffix[k]);
        struct stat sf;
        if( zF==0 ){ *pOom = 1; break; }
        if( stat(zF, &sf)==0 && sameFile(&st, &sf) ){
          zOut = sqlite3_mprintf("%s of schema '%s' of this connection", azDbWhat[k], zSchema);
          if( zOut==0 ) *pOom = 1;
        }
        sqlite3_free(zF);
      }
    }
  }
  sqlite3_finalize(p);
  /* a -wal, -shm or -journal beside a database, whether or not it exists
  ** yet (SQLite would delete or read a journal put there) */
  for(k=1; zOut==0 && !*pOom && k<N_DB_SUFFIX; k++){
    size_t m = strlen(azDbSuffix[k]);
    if( n>m && memcmp(zPath+n-m, azDbSuffix[k], m)==0 ){
      char *zBase = sqlite3_mprintf("%.*s", (int)(n-m), zPath);
      char *zWhat = zBase ? fileDbWhat(0, zBase, pOom) : 0;
      if( zBase==0 ) *pOom = 1;
      if( zWhat ){
        zOut = sqlite3_mprintf("%s of the SQLite database '%s'", azDbWhat[k], zBase);
        if( zOut==0 ) *pOom = 1;
      }
      sqlite3_free(zWhat);
      sqlite3_free(zBase);
    }
  }
  if( zOut || *pOom || !bExists ) return zOut;
  /* by its first bytes: a database, a write-ahead log, a rollback journal
  ** (another process's: one this connection has not attached) */
  fd = open(zPath, O_RDONLY|O_CLOEXEC|O_NONBLOCK);
  if( fd>=0 ){
    static const unsigned char aJournal[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
    unsigned char aHdr[16];
    ssize_t nRead = read(fd, aHdr, 16);
    const char *zKind = 0;
    if( nRead==16 && memcmp(aHdr, "SQLite format 3", 16)==0 ){
      zKind = "an SQLite database";
    }else if( nRead>=4 && aHdr[0]==0x37 && aHdr[1]==0x7f && aHdr[2]==0x06 && (aHdr[3]&0xfe)==0x82 ){
      zKind = "an SQLite write-ahead log";
    }else if( nRead>=8 && memcmp(aHdr, aJournal, 8)==0 ){
      zKind = "an SQLite rollback journal";
    }
    close(fd);
    if( zKind && (zOut = sqlite3_mprintf("%s", zKind))==0 ) *pOom = 1;
  }
  return zOut;
}

/* See fileio.h. */
int profsumFileIsDatabase(sqlite3 *db, const char *zPath, char **pzWhat){
  int oom = 0;
  *pzWhat = fileDbWhat(db, zPath, &oom);
  return *pzWhat!=0 || oom;
}
