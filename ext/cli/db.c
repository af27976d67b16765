/*
** db.c — the working connection: opening it (a private temporary
** database, or the one the user named), one-row queries with bound
** arguments, and SQL errors said in the command line's terms (a WAL
** database in a directory this process cannot write gets its remedy).
*/
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The busy timeout of the working connection, in milliseconds:
** $PROFSUM_BUSY_TIMEOUT_MS when it is set and not empty, else 10000.  It
** bounds how long a statement waits for a lock another connection holds
** (sqlite3_busy_timeout), and the profsum functions that write take it as
** their busy budget (ext/util/busy.c).  0 asks not to wait, and is given
** as 1: a connection without a busy timeout (0) would leave those
** functions their own default budget of 10 s.  A value that is not a whole
** number of milliseconds from 0 to 86400000 (a day), digits only, is a
** usage error (exit 2) naming the variable. */
static int busyTimeoutMs(void){
  const char *z = getenv("PROFSUM_BUSY_TIMEOUT_MS");
  long long v = 0;
  size_t i;
  if( z==0 || z[0]==0 ) return 10000;
  for(i=0; z[i]>='0' && z[i]<='9'; i++){
    if( v<=86400000 ) v = v*10 + (z[i]-'0');       /* stops growing past the range */
  }
  if( i==0 || z[i]!=0 || v>86400000 ){
    fail(EXIT_USAGE, "PROFSUM_BUSY_TIMEOUT_MS='%s': the environment variable must be a whole "
         "number of milliseconds from 0 to 86400000, digits only", z);
  }
  return v==0 ? 1 : (int)v;
}

/* Open zPath (0: a new temporary database, deleted on exit).
**
** The temporary database is "profsum.db" in a directory of its own made by
** mkdtemp in $TMPDIR (default /tmp), mode 0700: SQLite creates the side
** files (-journal, -wal, -shm) under names derived from the database's, and
** in a shared directory such as /tmp anyone could plant a file or symlink
** under those names once the database's name is known (a hot journal that
** SQLite would roll back into the database).  In a private directory no
** one else can.
**
** A database the user named (zOpt: the option that named it, "--db" or
** "--history", for messages) gets its missing parent directories created,
** as --output and a JSONL --history do; a directory there, or a file that
** is not an SQLite database, is an error (exit 1) naming the option and the
** path.  ":memory:" and "file:" URIs are passed to SQLite as they are.
** The connection waits for locks as long as busyTimeoutMs says. */
void openDb(const char *zPath, const char *zOpt){
  int rc, iBusyMs = busyTimeoutMs();
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
    int bFile = zPath[0] && strcmp(zPath, ":memory:")!=0 && strncmp(zPath, "file:", 5)!=0;
    g_zUserDb = zPath;
    if( bFile && isDir(zPath) ){
      fail(EXIT_FAIL, "%s '%s' is a directory, not a database file", zOpt ? zOpt : "--db", zPath);
    }
    if( bFile ) makeDirs(zPath, 1);
  }
  rc = sqlite3_open_v2(zPath, &g_db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
  if( rc!=SQLITE_OK ){
    fail(EXIT_FAIL, "cannot open database '%s': %s", zPath, g_db ? sqlite3_errmsg(g_db) : sqlite3_errstr(rc));
  }
  if( g_zUserDb && sqlite3_exec(g_db, "SELECT count(*) FROM main.sqlite_schema", 0, 0, 0)==SQLITE_NOTADB ){
    fail(EXIT_FAIL, "%s '%s' is not an SQLite database (%s)", zOpt ? zOpt : "--db", zPath, sqlite3_errmsg(g_db));
  }
  sqlite3_busy_timeout(g_db, iBusyMs);
  if( g_zTempDb[0] ){
    /* scratch data: no need to survive a crash */
    sqlite3_exec(g_db, "PRAGMA synchronous=OFF", 0, 0, 0);
  }
}

/* The value of hexadecimal digit c, or -1. */
static int hexValue(char c){
  if( c>='0' && c<='9' ) return c-'0';
  if( c>='a' && c<='f' ) return c-'a'+10;
  if( c>='A' && c<='F' ) return c-'A'+10;
  return -1;
}

/* The file SQLite opens for zDb, the database argument of openDb, as a
** malloc'd path, or 0 when it opens none (":memory:", "" for a temporary
** database, or a "file:" URI of an in-memory database).  When this SQLite
** reads URIs, a "file:" URI gives its path: after "//" an authority that
** is empty or "localhost" (another is an error SQLite reports; 0 here),
** the query and fragment cut off, %HH decoded. */
static char *dbFilePath(const char *zDb){
  const char *z;
  size_t n, i;
  char *zOut;
  int j = 0;
  if( zDb[0]==0 || strcmp(zDb, ":memory:")==0 ) return 0;
  if( strncmp(zDb, "file:", 5)!=0 || !sqlite3_compileoption_used("SQLITE_USE_URI") ){
    return xstrdup(zDb);
  }
  z = zDb + 5;
  if( z[0]=='/' && z[1]=='/' ){
    size_t nAuth = strcspn(z+2, "/?#");
    if( !(nAuth==0 || (nAuth==9 && strncmp(z+2, "localhost", 9)==0)) ) return 0;
    z += 2 + nAuth;
  }
  n = strcspn(z, "?#");
  if( z[n]=='?' ){
    /* mode=memory anywhere in the query: an in-memory database */
    const char *q = z+n+1;
    while( *q && *q!='#' ){
      size_t nParam = strcspn(q, "&#");
      if( nParam==11 && strncmp(q, "mode=memory", 11)==0 ) return 0;
      q += nParam;
      if( *q=='&' ) q++;
    }
  }
  zOut = xmalloc(n+1);
  for(i=0; i<n; i++){
    int hi, lo;
    if( z[i]=='%' && i+2<n && (hi = hexValue(z[i+1]))>=0 && (lo = hexValue(z[i+2]))>=0 ){
      zOut[j++] = (char)(hi*16 + lo);
      i += 2;
    }else{
      zOut[j++] = z[i];
    }
  }
  zOut[j] = 0;
  if( zOut[0]==0 || strcmp(zOut, ":memory:")==0 ){ free(zOut); return 0; }
  return zOut;
}

/* Before a command does any work: refuse (exit 2) an --output zOutput
** that would replace zFile, which option zOpt names (0 for either: no
** check).  bDb: zFile is a database (dbFilePath reads it), and its -wal,
** -shm and -journal files are refused as well (SQLite names them after the
** database's real path); else it is a file the command reads or appends to
** (a JSONL history).  emit() renames the output over its path, after the
** command wrote the database: the data would be lost, and a database
** without its -wal, or beside a foreign one, reads as malformed. */
void failOutputOver(const char *zOutput, const char *zFile, const char *zOpt, int bDb){
  static const char *azSide[] = {"-wal", "-shm", "-journal"};
  char *zPath, *zReal, *zOf;
  size_t k;
  if( zOutput==0 || zFile==0 ) return;
  zPath = bDb ? dbFilePath(zFile) : xstrdup(zFile);
  if( zPath==0 ) return;
  zReal = realPathFollow(zPath);
  free(zPath);
  /* "--db" alone when the two are spelled alike, else with its path */
  zOf = strcmp(zOutput, zFile)==0 ? xprintf("%s", zOpt) : xprintf("%s '%s'", zOpt, zFile);
  if( isSameFile(zOutput, zReal) ){
    fail(EXIT_USAGE, "--output '%s' is the %s of %s (the output would replace it): choose "
         "another file", zOutput, bDb ? "database" : "history file", zOf);
  }
  for(k=0; bDb && k<sizeof(azSide)/sizeof(azSide[0]); k++){
    char *zSide = xprintf("%s%s", zReal, azSide[k]);
    if( isSameFile(zOutput, zSide) ){
      fail(EXIT_USAGE, "--output '%s' is the %s file of the database of %s '%s' (the output "
           "would replace it): choose another file", zOutput, azSide[k], zOpt, zFile);
    }
    sqlite3_free(zSide);
  }
  sqlite3_free(zOf);
  free(zReal);
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

/* 1 if zMsg is what SQLite says when it cannot create a side file of the
** database (-shm, -wal, -journal) where the database is: "unable to open
** database file" (SQLITE_CANTOPEN: a read-only mount) or "attempt to write
** a readonly database" (SQLITE_READONLY_DIRECTORY: a directory this
** process may not write, such as one another user owns), else 0. */
static int isSideFileMsg(const char *zMsg){
  return strstr(zMsg, "unable to open database file")!=0
      || strstr(zMsg, "attempt to write a readonly database")!=0;
}

/* After a side-file error (isSideFileMsg) on g_zUserDb: when it is a WAL
** database (as profsum leaves one) in a directory this process cannot
** write, say so and what to do, and exit; else return.  SQLite reads a WAL
** database only where it can create its -shm file beside it (not on a
** read-only mount, nor in a directory of another user).  An immutable open reads the database file alone, so
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

/* When zMsg is the readers' "is a directory" error, whose hint names the
** SQL function profsum_find_traces('DIR'), fail with the hint in the
** CLI's terms (profsum view DIR --list, DIR shell-quoted); else return. */
static void failFolderHint(const char *zMsg){
  static const char zCall[] = "(profsum_find_traces('";
  static const char zTail[] = " lists the traces under it)";
  const char *zAt = strstr(zMsg, zCall), *p;
  Buf dir;
  char *zQ;
  if( zAt==0 ) return;
  memset(&dir, 0, sizeof(dir));
  for(p=zAt+sizeof(zCall)-1; *p; p++){       /* the SQL literal, '' for ' */
    if( *p=='\'' && p[1]=='\'' ){ bufAppend(&dir, p, 1); p++; continue; }
    if( *p=='\'' ) break;
    bufAppend(&dir, p, 1);
  }
  if( *p!='\'' || p[1]!=')' || strncmp(p+2, zTail, sizeof(zTail)-1)!=0 ){ free(dir.z); return; }
  zQ = shellQuote(dir.z ? dir.z : "");
  free(dir.z);
  fail(EXIT_FAIL, "%.*s(to list the traces under it: profsum view %s --list)%s", (int)(zAt-zMsg), zMsg,
       zQ, p+2+sizeof(zTail)-1);
}

/* Report the error message of an SQL function: "no such function" gets a
** hint, a WAL database in a read-only directory too, and advice given in
** SQL terms is said in the CLI's.  (A spent busy budget's message names
** PROFSUM_BUSY_TIMEOUT_MS itself: busyTimeoutMs.) */
void failSqlMsg(const char *zMsg){
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
  if( isSideFileMsg(zMsg) && g_zUserDb ) failWalReadOnly(zMsg);
  failFolderHint(zMsg);
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
void failSql(const char *zSql){
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
char *sqlText(const char *zSql, const char *zTypes, ...){
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
char *sqlTextTry(char **pzErr, const char *zSql, const char *zTypes, ...){
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
int tableExists(const char *zName){
  char *zErr = 0;
  char *z = sqlTextTry(&zErr, "SELECT 1 FROM main.sqlite_schema WHERE type='table' AND name=?1", "t", zName);
  int bExists = z!=0;
  /* a database that cannot be read is not one without the table */
  if( zErr && isSideFileMsg(zErr) ) failSqlMsg(zErr);
  free(zErr);
  free(z);
  return bExists;
}
