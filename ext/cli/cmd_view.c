/*
** cmd_view.c — the commands on raw trace files: `trim` (profsum_trim into
** a smaller trace) and `view` (serve a trace, or a window of it, to the
** Perfetto UI through serve.c; list or copy a log directory's traces).
*/
#include "cli.h"
#include "fileio.h"
#include "cnum.h"
#include "profsum_reader.h"    /* profsumSniffFormat */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve.h"              /* the loopback HTTP server of `view` */

/* One --start-us/--end-us limit of trim. */
typedef struct TrimLimit {
  const char *zOpt;        /* "start-us" or "end-us" */
  int bSet;                /* the option was given */
  int bExact;              /* ps holds the limit exactly (else zNs only) */
  profsum_ps ps;           /* the limit in exact picoseconds */
  profsum_ps ns;           /* floor(ps / 1000): the ns of trace_events' ts */
  char zNs[400];           /* the ns as an SQL integer literal */
  Buf idx;                 /* ", <idx>" of each event in the ns of the limit
                           ** on the kept side of it (trimBoundary) */
} TrimLimit;

/* Read the --start-us/--end-us value zVal into *p (zOpt names the option):
** a number of µs as Python's float() reads it (parseNum, as every float
** option).  Its decimal text is read exactly into picoseconds as the reader
** reads an event's ts (profsumParseMicros: no double, half-even beyond the
** ps); p->ns is its floor in ns, the scale of trace_events' ts.  A value
** beyond the reader's 128-bit picoseconds (about 1.7e32 µs), which no event
** time reaches, keeps only the floor of its double ns (p->bExact 0).  Not a
** number, or not finite (inf, nan, 1e400): a usage error naming the option
** and the value. */
static void trimLimitRead(TrimLimit *p, const char *zOpt, const char *zVal){
  char *zText = 0;
  double v = 0;
  memset(p, 0, sizeof(*p));
  p->zOpt = zOpt;
  if( zVal==0 ) return;
  p->bSet = 1;
  if( !parseNumText(zVal, &v, &zText) ) fail(EXIT_USAGE, "--%s must be a number, not '%s'", zOpt, zVal);
  if( zText==0 || !isfinite(v) || !isfinite(v*1000.0) ){
    free(zText);
    fail(EXIT_USAGE, "--%s must be a finite number, not '%s'", zOpt, zVal);
  }
  if( profsumParseMicros(zText, (int64_t)strlen(zText), &p->ps)>=0 ){
    char z[64], *q = z + sizeof(z);
    unsigned __int128 u;
    p->bExact = 1;
    p->ns = p->ps/1000 - (p->ps%1000<0 ? 1 : 0);      /* floor, also below 0 */
    u = p->ns<0 ? (unsigned __int128)0 - (unsigned __int128)p->ns : (unsigned __int128)p->ns;
    *--q = 0;
    do{ *--q = (char)('0' + (int)(u%10)); u /= 10; }while( u );
    if( p->ns<0 ) *--q = '-';
    snprintf(p->zNs, sizeof(p->zNs), "%s", q);
  }else{
    snprintf(p->zNs, sizeof(p->zNs), "%.0f", floor(v*1000.0));   /* at most 309 digits */
  }
  free(zText);
}

/* 1 if limit p falls inside a nanosecond (sub-ns digits): the events of
** that ns (ts equal to p->ns) lie on both sides of it, and only their exact
** picoseconds tell which. */
static int trimLimitSubNs(const TrimLimit *p){
  return p->bSet && p->bExact && p->ps - p->ns*1000!=0;
}

/* For each limit of aLim[0] (start) and aLim[1] (end) that falls inside a
** nanosecond: read the trace zTrace once (the reader trace_events uses,
** profsumStreamOpen) and list in its idx Buf every event of that ns on the
** kept side -- at or after the start, before the end -- by its exact
** picoseconds.  Only a regular file is read (profsum_trim refuses others
** itself, with its own message); an error reading it is fatal (exit 1)
** and names the file. */
static void trimBoundary(const char *zTrace, TrimLimit *aLim){
  ProfsumStream *pStream = 0;
  ProfsumEvent *ev;
  char *zErr = 0;
  struct stat st;
  int rc, k;
  if( !trimLimitSubNs(&aLim[0]) && !trimLimitSubNs(&aLim[1]) ) return;
  if( stat(zTrace, &st)!=0 || !S_ISREG(st.st_mode) ) return;
  rc = profsumStreamOpen("profsum trim", zTrace, 0, 0, 0, &pStream, &zErr);
  while( rc==SQLITE_OK && (rc = profsumStreamNext(pStream, &ev, &zErr))==SQLITE_ROW ){
    profsum_ps ns;
    rc = SQLITE_OK;
    if( !ev->hasTs ) continue;
    ns = ev->ts/1000 - (ev->ts%1000<0 ? 1 : 0);
    for(k=0; k<2; k++){
      if( !trimLimitSubNs(&aLim[k]) || ns!=aLim[k].ns ) continue;
      if( k==0 ? ev->ts>=aLim[k].ps : ev->ts<aLim[k].ps ){
        bufPrintf(&aLim[k].idx, ", %lld", (long long)ev->idx);
      }
    }
  }
  profsumStreamClose(pStream);
  if( rc!=SQLITE_DONE ){
    char *zMsg = zErr ? xstrdup(zErr) : xstrdup(sqlite3_errstr(rc));
    sqlite3_free(zErr);
    for(k=0; k<2; k++) free(aLim[k].idx.z);
    fail(EXIT_FAIL, "--trace-file '%s': cannot read it for --%s: %s", zTrace,
         trimLimitSubNs(&aLim[0]) ? aLim[0].zOpt : aLim[1].zOpt, zMsg);
  }
}

/* Append limit p (k: 0 the start, 1 the end) to the condition b: events
** starting at or after the start, before the end, on their exact times.
** trace_events' ts is the floor of an event's time in ns, so a limit on a
** whole ns compares ts with it; one inside a nanosecond (trimLimitSubNs)
** keeps the events past that ns on the kept side, and of that ns those
** trimBoundary listed.  Frees p->idx. */
static void trimLimitCond(Buf *b, TrimLimit *p, int k){
  if( !p->bSet ) return;
  if( trimLimitSubNs(p) ){
    bufPrintf(b, " AND (ts %s %s OR idx IN (%s))", k==0 ? ">" : "<", p->zNs,
              p->idx.z ? p->idx.z+2 : "");
  }else{
    bufPrintf(b, " AND ts %s %s", k==0 ? ">=" : "<", p->zNs);
  }
  free(p->idx.z);
  memset(&p->idx, 0, sizeof(p->idx));
}

/* Run profsum_trim(zTrace, zOut, zCond): it writes a temporary file beside
** zOut (mkstemp: an unpredictable name, created exclusively), gives it mode
** 0666 less the umask and renames it over zOut (a symbolic link at zOut
** is refused: neither followed nor replaced).  Returns its result (the number of entries
** written, malloc'd text); an error is fatal and leaves nothing behind.
** zShown (0: none) is the condition as the user wrote it (--where): an
** error that quotes the condition built from the options quotes it
** instead. */
static char *trimToFile(const char *zTrace, const char *zOut, const char *zCond, const char *zShown){
  char *zErr = 0;
  char *zN = sqlTextTry(&zErr, "SELECT profsum_trim(?1, ?2, ?3)", "ttt", zTrace, zOut, zCond);
  if( zErr ){
    char *zQuoted = zCond ? xprintf("'%s'", zCond) : 0;
    char *zAt = zQuoted && zShown ? strstr(zErr, zQuoted) : 0;
    if( zAt ){
      char *zMsg = xprintf("%.*s'%s'%s", (int)(zAt-zErr), zErr, zShown, zAt+strlen(zQuoted));
      sqlite3_free(zQuoted);
      free(zErr);
      fail(EXIT_FAIL, "%s", zMsg);
    }
    sqlite3_free(zQuoted);
    failSqlMsg(zErr);
  }
  return zN;
}

/* profsum trim: profsum_trim() with a condition built from the options
** (in a growing buffer: --where may be of any length). */
int cmdTrim(Opts *o){
  const char *zTrace = optStr(o, "trace-file"), *zOut = optStr(o, "output");
  const char *zWhere = optStr(o, "where"), *zStart = optStr(o, "start-us"), *zEnd = optStr(o, "end-us");
  const char *zPid = optStr(o, "pid");
  TrimLimit aLim[2];
  Buf cond;
  char *zN;
  if( zTrace==0 || zOut==0 ) fail(EXIT_USAGE, "--trace-file and --output are required");
  trimLimitRead(&aLim[0], "start-us", zStart);
  trimLimitRead(&aLim[1], "end-us", zEnd);
  memset(&cond, 0, sizeof(cond));
  bufPuts(&cond, "1");
  if( zWhere ) bufPrintf(&cond, " AND (%s\n)", zWhere);   /* a newline ends a trailing -- comment */
  if( zPid ) bufPrintf(&cond, " AND pid = %lld", optNonNeg(o, "pid", 0));
  trimBoundary(zTrace, aLim);
  trimLimitCond(&cond, &aLim[0], 0);
  trimLimitCond(&cond, &aLim[1], 1);
  openDb(0, 0);
  zN = trimToFile(zTrace, zOut, cond.z, zWhere);
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

/* view: the trace in the Perfetto UI, the log directory in TensorBoard. */
#define VIEW_PORT 9001                        /* the port the Perfetto UI loads from */
#define VIEW_ORIGIN "https://ui.perfetto.dev"
#define VIEW_TIMEOUT 600.0
#define VIEW_MAX_TIMEOUT 86400.0

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
** leading '.' made '_'; with bWindow, "window-" before it.  With bJsonGz
** (what is served is profsum_trim's output, gzipped trace JSON: a window,
** or an XPlane converted) the name ends in ".json.gz": ".gz" is added to
** a name ending in ".json", ".json.gz" to any other (host.xplane.pb gives
** host.xplane.pb.json.gz, with a window too).  Malloc'd. */
static char *servedName(const char *zPath, int bWindow, int bJsonGz){
  const char *zBase = strrchr(zPath, '/') ? strrchr(zPath, '/')+1 : zPath;
  size_t n = strlen(zBase), i;
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
  if( bJsonGz && !(b.n>=8 && strcmp(b.z+b.n-8, ".json.gz")==0) ){
    bufPuts(&b, b.n>=5 && strcmp(b.z+b.n-5, ".json")==0 ? ".gz" : ".json.gz");
  }
  return b.z;
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
** file of this machine), a symbolic link at the copy's own name is
** refused (neither followed nor replaced), and the copy is written to a
** new file (O_CREAT|O_EXCL|O_NOFOLLOW) beside its name, then renamed over
** it.
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
    /* a link at the copy's name: neither followed nor replaced */
    struct stat sl;
    if( fstatat(d, zComp, &sl, AT_SYMLINK_NOFOLLOW)==0 && S_ISLNK(sl.st_mode) ){
      zMsg = xprintf("'%s' under '%s' is a symbolic link: refused (%s)", zRel, zDest,
                     PROFSUM_FILE_LINK_ADVICE);
      goto done;
    }
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
      if( profsumFileWriteAll(out, aBuf, (size_t)r)!=0 ){
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
** followed); DEST inside zDir (real paths) is a usage error.  Prints each copy's path, then the TensorBoard command; a
** file refused or failed is said on stderr and makes the exit code 1. */
static int viewExtract(const char *zDir, const char *zDest){
  sqlite3_stmt *p = 0;
  struct stat stS, stD;
  char *zPrefix, *zQ;
  size_t nPrefix, nDir = strlen(zDir), nDest = strlen(zDest);
  int sfd, dfd, rc, nOk = 0, nBad = 0;
  while( nDir>1 && zDir[nDir-1]=='/' ) nDir--;
  while( nDest>0 && zDest[nDest-1]=='/' ) nDest--;     /* "copy/" gives copy/plugins/... */
  zPrefix = nDir==1 && zDir[0]=='/' ? xprintf("/") : xprintf("%.*s/", (int)nDir, zDir);
  nPrefix = strlen(zPrefix);
  {
    /* DEST inside the log directory: the copies would be traces of the
    ** log directory, and change what view and summarize --profile-dir
    ** pick there.  Real paths, DEST's as it will be once created. */
    char zRealDir[PATH_MAX], *zRealDest;
    if( realpath(zDir, zRealDir)==0 ) fail(EXIT_FAIL, "'%s': %s", zDir, strerror(errno));
    zRealDest = realPathAhead(zDest);
    if( strcmp(zRealDest, zRealDir)==0 ){
      free(zRealDest);
      fail(EXIT_USAGE, "--extract '%s' is the log directory itself", zDest);
    }
    if( pathWithin(zRealDest, zRealDir) ){
      char *zMsg = xprintf("--extract '%s' is inside the log directory '%s' (as '%s'): the copies "
                           "would become traces of it and change what view and summarize "
                           "--profile-dir read there; give a DEST outside it", zDest, zDir, zRealDest);
      free(zRealDest);
      fail(EXIT_USAGE, "%s", zMsg);
    }
    free(zRealDest);
  }
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
      char *zOut = xprintf("%.*s/%s", (int)nDest, zDest, zPath+nPrefix);
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
int cmdView(Opts *o){
  const char *zArg = o->nPos>0 ? o->azPos[0] : 0;
  const char *zWindow = optStr(o, "window"), *zExtract = optStr(o, "extract");
  int bList = optFlag(o, "list"), fd, lfd, rc;
  long long port = optInt(o, "port", VIEW_PORT);
  double timeout = VIEW_TIMEOUT;
  char *zTrace, *zName, *zServe, *zErr = 0, *zLogDir, *zLine;
  int bConvert;
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
  openDb(0, 0);
  if( bList ) return viewList(zArg);
  if( zExtract ) return viewExtract(zArg, zExtract);

  /* the trace: the file given, or the one profsum would read in DIR; the
  ** Perfetto UI opens trace JSON, not an XSpace: when that pick is an
  ** XPlane, the folder's trace JSON (the pick's JSON rule), else the
  ** XPlane converted (bConvert: profsum_trim of all its rows) */
  if( isDir(zArg) ){
    /* one walk of the folder: its JSON pick (the first of the preferred
    ** format present, in path order), else its pick */
    zTrace = sqlText("SELECT path FROM (SELECT *, row_number() OVER () AS k FROM "
        "profsum_find_traces(?1)) WHERE picked OR format IN ('perfetto_trace_json_gz', "
        "'trace_json_gz', 'trace_json') ORDER BY CASE format WHEN 'perfetto_trace_json_gz' "
        "THEN 0 WHEN 'trace_json_gz' THEN 1 WHEN 'trace_json' THEN 2 ELSE 3 END, k LIMIT 1",
        "t", zArg);
    if( zTrace==0 ) fail(EXIT_FAIL, "'%s': no trace in it (see profsum view --list)", zArg);
  }else{
    zTrace = xstrdup(zArg);
  }
  bConvert = !zWindow && profsumSniffFormat(zTrace)==PROFSUM_FMT_XPLANE;
  zName = servedName(zTrace, zWindow!=0, zWindow || bConvert);   /* trim's gzipped JSON */
  if( zWindow || bConvert ){
    /* profsum_trim's output (a window, or all the XPlane's rows) */
    char *zN;
    char *zP = xprintf("%s/%s", g_zTempDbDir, zName);          /* in the private directory */
    zServe = xstrdup(zP);
    sqlite3_free(zP);
    scratchSet(zServe, 0);             /* removed on exit, also on a signal */
    zN = trimToFile(zTrace, zServe, zWindow, 0);
    if( zWindow ) errLine("profsum view: window: %s entries of '%s'", zN ? zN : "0", zTrace);
    else errLine("profsum view: '%s' is an XPlane, which the Perfetto UI does not open: serving "
                 "it converted to trace JSON (%s entries)", zTrace, zN ? zN : "0");
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
