/*
** serve.h — a minimal, single-threaded HTTP/1.1 file server on the loopback
** interface, for `profsum view` (docs/cli.md): it serves one open file at
** one URL path to the Perfetto UI, and nothing else.
**
** Plain POSIX sockets, no dependency.  It binds 127.0.0.1 only, answers
** GET, HEAD and OPTIONS (a CORS preflight) for exactly "/" + the file's
** name and 404 for any other path (no directory listing, no path is ever
** opened from a request), bounds the request head (SERVE_MAX_HEAD bytes)
** and the time a connection may take without progress, closes every
** connection after one response, and stops after a deadline or on
** SIGINT/SIGTERM/SIGHUP.
*/
#ifndef PROFSUM_CLI_SERVE_H
#define PROFSUM_CLI_SERVE_H

#include <stddef.h>

#define SERVE_MAX_HEAD 8192         /* request line + headers, bytes */
#define SERVE_CONN_TIMEOUT 10.0     /* seconds a connection may stall */

/* What is served, and how. */
typedef struct ServeSpec {
  int fd;                   /* the file, open for reading (a regular file) */
  const char *zName;        /* served at "/" + zName; [A-Za-z0-9._-] only */
  const char *zType;        /* its Content-Type */
  const char *zOrigin;      /* Access-Control-Allow-Origin value */
  int port;                 /* the port bound (for the Host check) */
  double timeout;           /* seconds until the server stops by itself */
  int bLog;                 /* one line on stderr per request */
} ServeSpec;

/* How serveRun ended. */
#define SERVE_TIMEOUT   0   /* the deadline passed */
#define SERVE_SIGNAL    1   /* SIGINT, SIGTERM or SIGHUP */
#define SERVE_ERROR    -1   /* *pzErr says what */

/*
** Open a listening TCP socket on 127.0.0.1:port (SO_REUSEADDR, close on
** exec, non-blocking).  Returns the descriptor, or -1 with *pzErr set (a
** malloc'd message naming the port and the system's reason; "in use" says
** so).
*/
int serveListen(int port, char **pzErr);

/* The signal state serveCatchSignals replaced, for serveRestoreSignals. */
#include <signal.h>
typedef struct ServeSignals {
  struct sigaction aOld[3];     /* SIGINT, SIGTERM, SIGHUP */
  sigset_t oldMask;
} ServeSignals;

/*
** From now on SIGINT, SIGTERM and SIGHUP stop the server instead of their
** usual action: they are blocked, and serveRun receives them inside its
** waits (a signal that came before is pending, and ends the first wait).
** Call it before telling anyone where the server is, so that no stop
** request can be lost.  Undo with serveRestoreSignals.
*/
void serveCatchSignals(ServeSignals *pSave);

/* Restore the handlers and the signal mask serveCatchSignals replaced (a
** stop signal still pending is taken by the server's handler first). */
void serveRestoreSignals(ServeSignals *pSave);

/*
** Serve pSpec on the listening socket fdListen until pSpec->timeout
** seconds have passed or SIGINT, SIGTERM or SIGHUP arrives (between
** serveCatchSignals and serveRestoreSignals).  Never exits the process.
** Returns SERVE_TIMEOUT, SERVE_SIGNAL, or SERVE_ERROR with *pzErr set
** (malloc'd).  The caller closes fdListen and pSpec->fd.
*/
int serveRun(int fdListen, const ServeSpec *pSpec, char **pzErr);

/*
** 1 if z (NUL-terminated) is a name serveRun can serve: 1 to 200 bytes of
** [A-Za-z0-9._-], not starting with '.'.
*/
int serveNameOk(const char *z);

#endif /* PROFSUM_CLI_SERVE_H */
