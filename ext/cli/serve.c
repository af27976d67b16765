/*
** serve.c — the loopback HTTP server of `profsum view` (see serve.h).
**
** One connection at a time: accept, read the request head (at most
** SERVE_MAX_HEAD bytes, within SERVE_CONN_TIMEOUT seconds), answer, close.
** The only file it ever reads is the descriptor it was given; a request
** names it by the exact path "/" + name (a query string is ignored), and
** everything else is 404 — so "..", "%2e%2e", "//etc/passwd" and a
** directory listing are all simply not there.  The Host header must name
** the loopback address (127.0.0.1 or localhost, with the port when one is
** given), so a web page that rebinds its own host name to 127.0.0.1 (DNS
** rebinding) cannot read the trace.  Every response carries
** Access-Control-Allow-Origin for the one origin given (the Perfetto UI)
** and "Connection: close".
**
** Signals: from serveCatchSignals on, SIGINT, SIGTERM and SIGHUP are
** blocked except inside ppoll(), and their handler only sets a flag, so a
** signal always ends the wait it arrives in or the next one (no lost
** wake-up) and the server returns normally, letting the caller remove its
** temporary files.
*/
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t s_bStop = 0;

static void serveOnSignal(int sig){
  (void)sig;
  s_bStop = 1;
}

/* A malloc'd message (vsnprintf), or 0 when out of memory. */
static char *serveMsg(const char *zFmt, ...){
  va_list ap, ap2;
  int n;
  char *z;
  va_start(ap, zFmt);
  va_copy(ap2, ap);
  n = vsnprintf(0, 0, zFmt, ap2);
  va_end(ap2);
  z = n<0 ? 0 : malloc((size_t)n + 1);
  if( z ) vsnprintf(z, (size_t)n + 1, zFmt, ap);
  va_end(ap);
  return z;
}

static double serveNow(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec*1e-9;
}

/* See serve.h. */
int serveNameOk(const char *z){
  size_t i;
  if( z==0 || z[0]==0 || z[0]=='.' ) return 0;
  for(i=0; z[i]; i++){
    char c = z[i];
    if( i>=200 ) return 0;
    if( !((c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9') || c=='.' || c=='_' || c=='-') ) return 0;
  }
  return 1;
}

/* See serve.h. */
int serveListen(int port, char **pzErr){
  struct sockaddr_in a;
  int fd, one = 1, e;
  *pzErr = 0;
  if( port<1 || port>65535 ){
    *pzErr = serveMsg("port %d is out of range (1 to 65535)", port);
    return -1;
  }
  fd = socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0);
  if( fd<0 ){
    e = errno;
    *pzErr = serveMsg("cannot create a socket: %s", strerror(e));
    return -1;
  }
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if( bind(fd, (struct sockaddr*)&a, sizeof(a))!=0 || listen(fd, 16)!=0 ){
    e = errno;
    close(fd);
    if( e==EADDRINUSE ){
      *pzErr = serveMsg("127.0.0.1:%d is already in use (another profsum view, or a trace_processor "
                        "server?): stop it or choose another --port", port);
    }else{
      *pzErr = serveMsg("cannot listen on 127.0.0.1:%d: %s", port, strerror(e));
    }
    return -1;
  }
  return fd;
}

/* Wait until fd is ready for ev (POLLIN/POLLOUT), at most until the
** monotonic time tEnd, with the stop signals unblocked (pWait).  Returns 1
** ready, 0 timed out or stopped, -1 error. */
static int serveWait(int fd, short ev, double tEnd, const sigset_t *pWait){
  for(;;){
    struct pollfd pf;
    struct timespec ts;
    double left = tEnd - serveNow();
    int r;
    if( s_bStop || left<=0 ) return 0;
    pf.fd = fd;
    pf.events = ev;
    pf.revents = 0;
    ts.tv_sec = (time_t)left;
    ts.tv_nsec = (long)((left - (double)ts.tv_sec)*1e9);
    r = ppoll(&pf, 1, &ts, pWait);
    if( r<0 && errno==EINTR ) continue;
    if( r<0 ) return -1;
    if( r>0 ) return 1;
  }
}

/* Send all n bytes of z on the non-blocking socket fd; each wait for
** room lasts at most SERVE_CONN_TIMEOUT seconds, and none past tEnd.
** Returns 0, or -1 (timed out, stopped, or the peer went away). */
static int serveSend(int fd, const char *z, size_t n, double tEnd, const sigset_t *pWait){
  while( n>0 ){
    ssize_t w = send(fd, z, n, MSG_NOSIGNAL);
    if( w>0 ){
      z += w;
      n -= (size_t)w;
      continue;
    }
    if( w<0 && errno==EINTR ) continue;
    if( w<0 && (errno==EAGAIN || errno==EWOULDBLOCK) ){
      double t = serveNow() + SERVE_CONN_TIMEOUT;
      if( serveWait(fd, POLLOUT, t<tEnd ? t : tEnd, pWait)!=1 ) return -1;
      continue;
    }
    return -1;
  }
  return 0;
}

/* The value of header zName (case-insensitive) in the header lines of
** zHead (NUL-terminated, lines ending in "\n" with the "\r" removed), in
** zOut (capacity nOut, cut to fit); 1 when present. */
static int serveHeader(const char *zHead, const char *zName, char *zOut, size_t nOut){
  size_t nName = strlen(zName);
  const char *z = strchr(zHead, '\n');      /* skip the request line */
  while( z && z[1] ){
    const char *zLine = z+1, *zEnd = strchr(zLine, '\n');
    size_t nLine = zEnd ? (size_t)(zEnd-zLine) : strlen(zLine);
    if( nLine>nName && zLine[nName]==':' && strncasecmp(zLine, zName, nName)==0 ){
      const char *v = zLine + nName + 1;
      size_t nv = nLine - nName - 1;
      while( nv>0 && (*v==' ' || *v=='\t') ){ v++; nv--; }
      while( nv>0 && (v[nv-1]==' ' || v[nv-1]=='\t') ) nv--;
      if( nv>=nOut ) nv = nOut-1;
      memcpy(zOut, v, nv);
      zOut[nv] = 0;
      return 1;
    }
    z = zEnd;
  }
  return 0;
}

/* Append to z (capacity n) a form of the request text zIn (nIn bytes) that
** is safe to log: printable ASCII but '%' as is, every other byte as %XX,
** at most 120 characters of output. */
static void serveLogText(char *z, size_t n, const char *zIn, size_t nIn){
  size_t i, j = strlen(z);
  for(i=0; i<nIn && j+4<n && i<120; i++){
    unsigned char c = (unsigned char)zIn[i];
    if( c>0x20 && c<0x7f && c!='%' ) z[j++] = (char)c;
    else j += (size_t)snprintf(z+j, n-j, "%%%02X", c);
  }
  z[j] = 0;
}

/* Send a response without a file body: status iStatus (zReason), extra
** header lines zExtra ("" or lines each ending "\r\n"), the text body
** zBody unless bHead. */
static void serveSimple(int fd, const ServeSpec *p, int iStatus, const char *zReason,
                        const char *zExtra, const char *zBody, int bHead,
                        double tEnd, const sigset_t *pWait){
  char zBuf[2048];
  int n = snprintf(zBuf, sizeof(zBuf),
      "HTTP/1.1 %d %s\r\nAccess-Control-Allow-Origin: %s\r\nCache-Control: no-cache\r\n"
      "X-Content-Type-Options: nosniff\r\nConnection: close\r\n%s"
      "Content-Type: text/plain; charset=utf-8\r\nContent-Length: %zu\r\n\r\n%s",
      iStatus, zReason, p->zOrigin, zExtra, strlen(zBody), bHead ? "" : zBody);
  if( n>0 && (size_t)n<sizeof(zBuf) ) serveSend(fd, zBuf, (size_t)n, tEnd, pWait);
}

/* Is zHost (a Host header value) the loopback address, with our port when
** it names one? */
static int serveHostOk(const char *zHost, int port){
  static const char *az[] = {"127.0.0.1", "localhost"};
  size_t i;
  for(i=0; i<sizeof(az)/sizeof(az[0]); i++){
    size_t n = strlen(az[i]);
    if( strncasecmp(zHost, az[i], n)!=0 ) continue;
    if( zHost[n]==0 ) return 1;
    if( zHost[n]==':' ){
      char zPort[16];
      snprintf(zPort, sizeof(zPort), "%d", port);
      if( strcmp(zHost+n+1, zPort)==0 ) return 1;
    }
  }
  return 0;
}

/* The value of Access-Control-Request-Headers as it may be echoed: header
** names (letters, digits, '-') separated by commas and spaces, else "". */
static void servePreflightHeaders(const char *zIn, char *zOut, size_t nOut){
  size_t i;
  for(i=0; zIn[i] && i+1<nOut; i++){
    char c = zIn[i];
    if( !((c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9') || c=='-' || c==',' || c==' ') ){
      zOut[0] = 0;
      return;
    }
    zOut[i] = c;
  }
  zOut[zIn[i] ? 0 : i] = 0;
}

/* Answer one connection (fd, non-blocking): read the request head, check
** it and answer.  Returns when the response is sent or the connection
** failed, stalled, or the server is stopping. */
static void serveConn(int fd, const ServeSpec *p, double tEnd, const sigset_t *pWait){
  char zHead[SERVE_MAX_HEAD + 1], zMethod[16], zHost[256], zVal[256], zLog[512];
  char *zTarget, *zEnd, *zVersion, *zSp;
  size_t n = 0, nTarget;
  double tConn = serveNow() + SERVE_CONN_TIMEOUT;
  int bHead = 0, iStatus = 0;
  if( tConn>tEnd ) tConn = tEnd;
  /* the head: up to an empty line */
  for(;;){
    ssize_t r;
    zHead[n] = 0;
    if( strstr(zHead, "\r\n\r\n") || strstr(zHead, "\n\n") ) break;
    if( n>=SERVE_MAX_HEAD ){
      serveSimple(fd, p, 431, "Request Header Fields Too Large", "", "request head too large\n", 0, tEnd, pWait);
      return;
    }
    r = recv(fd, zHead+n, SERVE_MAX_HEAD-n, 0);
    if( r>0 ){
      if( memchr(zHead+n, 0, (size_t)r) ){
        serveSimple(fd, p, 400, "Bad Request", "", "bad request\n", 0, tEnd, pWait);
        return;
      }
      n += (size_t)r;
      continue;
    }
    if( r==0 ) return;                               /* the client closed */
    if( errno==EINTR ) continue;
    if( errno!=EAGAIN && errno!=EWOULDBLOCK ) return;
    if( serveWait(fd, POLLIN, tConn, pWait)!=1 ) return;   /* stalled or stopping */
  }
  /* "\r\n" → "\n" so that lines end in "\n" alone */
  {
    size_t i, j = 0;
    for(i=0; i<n; i++) if( zHead[i]!='\r' ) zHead[j++] = zHead[i];
    zHead[j] = 0;
  }
  /* request line: METHOD SP TARGET SP HTTP/1.x */
  zEnd = strchr(zHead, '\n');
  *zEnd = 0;
  zSp = strchr(zHead, ' ');
  zTarget = zSp ? zSp+1 : 0;
  zVersion = zTarget ? strchr(zTarget, ' ') : 0;
  zLog[0] = 0;
  if( zSp==0 || zVersion==0 || (size_t)(zSp-zHead)>=sizeof(zMethod) || strchr(zVersion+1, ' ')
   || strncmp(zVersion+1, "HTTP/1.", 7)!=0 || zTarget==zVersion ){
    serveSimple(fd, p, 400, "Bad Request", "", "bad request\n", 0, tEnd, pWait);
    if( p->bLog ) fprintf(stderr, "profsum view: bad request (400)\n");
    return;
  }
  memcpy(zMethod, zHead, (size_t)(zSp-zHead));
  zMethod[zSp-zHead] = 0;
  nTarget = (size_t)(zVersion - zTarget);
  serveLogText(zLog, sizeof(zLog), zMethod, strlen(zMethod));
  strcat(zLog, " ");                       /* zLog holds at most 2*16+1 bytes so far */
  serveLogText(zLog, sizeof(zLog), zTarget, nTarget);
  {
    int bHttp11 = strcmp(zVersion+1, "HTTP/1.0")!=0;
    *zEnd = '\n';                          /* headers follow the first "\n" */
    if( !serveHeader(zHead, "Host", zHost, sizeof(zHost)) ){
      if( bHttp11 ) iStatus = 400;         /* HTTP/1.1 requires Host */
    }else if( !serveHostOk(zHost, p->port) ){
      iStatus = 403;
    }
  }
  if( iStatus==400 ){
    serveSimple(fd, p, 400, "Bad Request", "", "a Host header is required\n", 0, tEnd, pWait);
  }else if( iStatus==403 ){
    serveSimple(fd, p, 403, "Forbidden", "", "the Host must be 127.0.0.1 or localhost\n", 0, tEnd, pWait);
  }else if( strcmp(zMethod, "GET")!=0 && strcmp(zMethod, "HEAD")!=0 && strcmp(zMethod, "OPTIONS")!=0 ){
    iStatus = 405;
    serveSimple(fd, p, 405, "Method Not Allowed", "Allow: GET, HEAD, OPTIONS\r\n",
                "method not allowed\n", 0, tEnd, pWait);
  }else{
    size_t nPath = strcspn(zTarget, "? ");
    size_t nName = strlen(p->zName);
    bHead = strcmp(zMethod, "HEAD")==0;
    if( nPath!=nName+1 || zTarget[0]!='/' || memcmp(zTarget+1, p->zName, nName)!=0 ){
      iStatus = 404;
      serveSimple(fd, p, 404, "Not Found", "", "not found\n", bHead, tEnd, pWait);
    }else if( strcmp(zMethod, "OPTIONS")==0 ){
      /* a CORS preflight */
      char zExtra[1024], zAllow[300];
      zAllow[0] = 0;
      if( serveHeader(zHead, "Access-Control-Request-Headers", zVal, sizeof(zVal)) ){
        servePreflightHeaders(zVal, zAllow, sizeof(zAllow));
      }
      snprintf(zExtra, sizeof(zExtra),
               "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n%s%s%s%s"
               "Access-Control-Max-Age: 600\r\n",
               zAllow[0] ? "Access-Control-Allow-Headers: " : "", zAllow, zAllow[0] ? "\r\n" : "",
               serveHeader(zHead, "Access-Control-Request-Private-Network", zVal, sizeof(zVal))
                 ? "Access-Control-Allow-Private-Network: true\r\n" : "");
      iStatus = 204;
      {
        char zBuf[2048];
        int k = snprintf(zBuf, sizeof(zBuf),
            "HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Origin: %s\r\n%s"
            "Cache-Control: no-cache\r\nConnection: close\r\n\r\n", p->zOrigin, zExtra);
        if( k>0 && (size_t)k<sizeof(zBuf) ) serveSend(fd, zBuf, (size_t)k, tEnd, pWait);
      }
    }else{
      /* the file: its size now, then that many bytes from offset 0 */
      struct stat st;
      char zBuf[65536];
      long long nBody, off = 0;
      int k;
      if( fstat(p->fd, &st)!=0 ){
        iStatus = 500;
        serveSimple(fd, p, 500, "Internal Server Error", "", "cannot read the file\n", bHead, tEnd, pWait);
      }else{
        iStatus = 200;
        nBody = (long long)st.st_size;
        k = snprintf(zBuf, sizeof(zBuf),
            "HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: %s\r\nCache-Control: no-cache\r\n"
            "X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Type: %s\r\n"
            "Content-Length: %lld\r\n\r\n", p->zOrigin, p->zType, nBody);
        if( k>0 && (size_t)k<sizeof(zBuf) && serveSend(fd, zBuf, (size_t)k, tEnd, pWait)==0 && !bHead ){
          while( off<nBody ){
            size_t want = (size_t)(nBody-off < (long long)sizeof(zBuf) ? nBody-off : (long long)sizeof(zBuf));
            ssize_t r = pread(p->fd, zBuf, want, (off_t)off);
            if( r<0 && errno==EINTR ) continue;
            if( r<=0 ) break;                /* the file shrank: cut short */
            if( serveSend(fd, zBuf, (size_t)r, tEnd, pWait)!=0 ) break;
            off += r;
          }
        }
      }
    }
  }
  if( p->bLog ) fprintf(stderr, "profsum view: %s %d\n", zLog, iStatus);
}

static const int aStopSig[3] = {SIGINT, SIGTERM, SIGHUP};

/* See serve.h. */
void serveCatchSignals(ServeSignals *pSave){
  struct sigaction sa;
  sigset_t block;
  int i;
  s_bStop = 0;
  sigemptyset(&block);
  for(i=0; i<3; i++) sigaddset(&block, aStopSig[i]);
  sigprocmask(SIG_BLOCK, &block, &pSave->oldMask);
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = serveOnSignal;
  sigemptyset(&sa.sa_mask);
  for(i=0; i<3; i++) sigaction(aStopSig[i], &sa, &pSave->aOld[i]);
}

/* See serve.h. */
void serveRestoreSignals(ServeSignals *pSave){
  int i;
  sigprocmask(SIG_SETMASK, &pSave->oldMask, 0);
  for(i=0; i<3; i++) sigaction(aStopSig[i], &pSave->aOld[i], 0);
}

/* See serve.h. */
int serveRun(int fdListen, const ServeSpec *p, char **pzErr){
  sigset_t waitMask;
  double tEnd = serveNow() + p->timeout;
  int rc = SERVE_TIMEOUT, i;
  *pzErr = 0;
  /* the waits run with the current mask less the stop signals */
  sigprocmask(SIG_BLOCK, 0, &waitMask);
  for(i=0; i<3; i++) sigdelset(&waitMask, aStopSig[i]);
  for(;;){
    int r, fd;
    r = serveWait(fdListen, POLLIN, tEnd, &waitMask);
    if( r==0 ){ rc = s_bStop ? SERVE_SIGNAL : SERVE_TIMEOUT; break; }
    if( r<0 ){
      int e = errno;
      *pzErr = serveMsg("waiting for connections: %s", strerror(e));
      rc = SERVE_ERROR;
      break;
    }
    fd = accept4(fdListen, 0, 0, SOCK_NONBLOCK|SOCK_CLOEXEC);
    if( fd<0 ){
      if( errno==EMFILE || errno==ENFILE || errno==ENOBUFS || errno==ENOMEM ){
        struct timespec ts = {0, 100*1000*1000};    /* out of descriptors: let them go */
        ppoll(0, 0, &ts, &waitMask);
      }
      continue;                              /* EAGAIN, ECONNABORTED, EINTR, ... */
    }
    serveConn(fd, p, tEnd, &waitMask);
    shutdown(fd, SHUT_WR);
    close(fd);
    if( s_bStop ){ rc = SERVE_SIGNAL; break; }
  }
  return rc;
}
