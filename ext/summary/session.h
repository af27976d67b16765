/*
** session.h — the hosts of a profiling session imported together
** (profsum_import with "hosts": "all" or "session": "all"): each host's
** file parsed in a thread of its own (session_parse.c), then stored by the
** import as a trace of its own and linked by a profsum_session row, the
** hosts aligned on one time axis (session.c), and profsum_session_json().
*/
#ifndef PROFSUM_SESSION_H
#define PROFSUM_SESSION_H

#include "profsum_int.h"
#include "summary_engine.h"

/* One (step, device) of a host: the step's window on that device and the
** device's op time inside it (exact ps after the trace's origin). */
typedef struct ProfsumDevStep {
  sqlite3_int64 step;
  int iDev;                    /* index into ProfsumHost.azDev */
  sqlite3_int64 startPs, endPs;   /* the window (absolute: origin included) */
  sqlite3_int64 busyPs;        /* union of its device ops inside the window */
  sqlite3_int64 collPs;        /* union of its collectives inside the window */
} ProfsumDevStep;

/* One host of a session: the file, and what its parse gives. */
typedef struct ProfsumHost {
  const char *zPath;           /* in: the file (out: zAlt when it was read instead) */
  const char *zAlt;            /* in: an XPlane's: the host's trace JSON, read
                               ** instead when the XPlane does not decode, or 0 */
  char *zFellBack;             /* out: why zAlt was read (the XPlane's error), or 0 */
  const char *zFileHost;       /* in: <host> of its name (0: perfetto_trace.json.gz) */
  const char *zSession;        /* in: its session folder name */
  ProfsumEngine *pEngine;      /* out: the parsed trace (owned) */
  ProfsumEngineInfo info;
  int hasStart;                /* the XPlane has a usable Task Environment.profile_start_time */
  sqlite3_int64 startNs;       /* the first such, ns since the epoch (> 0) */
  char *zHostnames;            /* JSON array of XSpace.hostnames ("[]" for JSON) */
  ProfsumDevStep *aStep; int nStep;
  char **azDev; int nDev;      /* device (process) names */
  char *zHost;                 /* set by the import: the host in labels (maybe <host>-2) */
  int nSameName;               /* set by the import: the host name was taken n times before */
  int unnamed;                 /* set by the import: with hosts 'all', a session's
                               ** perfetto_trace.json.gz read for want of host files */
  sqlite3_int64 traceId;       /* set by the import */
} ProfsumHost;


/* Parse the files of a[0..n) (session_parse.c): at most as many at once
** as the machine has cores (the calling thread waits, and answers the
** connection's interrupt through pProbe: the parses then stop), each
** host's engine, profile start, hostnames and per-step device time
** filled in (flags: profsumEngineParse's).  SQLITE_OK, or the first
** failing host's error (in path order) with *pzErr set (sqlite3_malloc'd,
** prefixed with zFunc). */
int profsumSessionParse(const char *zFunc, ProfsumHost *a, int n, unsigned flags,
                        ProfsumProbe *pProbe, char **pzErr);

/* Free what profsumSessionParse and the import put into h (not h). */
void profsumHostClear(ProfsumHost *h);

/* session.c: store host h's rows for its trace h->traceId of session
** sessionId in zSchema (profsum_agg_host without the alignment,
** profsum_agg_device_step, a host_unnamed diagnostic when h->unnamed,
** and a duplicate_host
** diagnostic when h->nSameName).  SQLITE_OK or an error with *pzErr. */
int profsumSessionWriteHost(sqlite3 *db, const char *zSchema, sqlite3_int64 sessionId,
                            const ProfsumHost *h, const char *zFunc, char **pzErr);

/* session.c: align the hosts of session sessionId (already written) and
** set the session's origin_ns and alignment.  SQLITE_OK or an error. */
int profsumSessionAlign(sqlite3 *db, const char *zSchema, sqlite3_int64 sessionId,
                        const char *zFunc, char **pzErr);

/* session_json.c: register profsum_session_json.  SQLITE_OK or an error. */
int profsumRegisterSession(sqlite3 *db, char **pzErr);

#endif /* PROFSUM_SESSION_H */
