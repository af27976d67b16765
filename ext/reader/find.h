/*
** find.h — trace discovery inside artifact folders (implemented in find.c).
**
** The SQL surface is the eponymous table-valued function
** profsum_find_traces(dir), registered by profsumRegisterFind() (declared in
** profsum_int.h).  This header exports the C helper that the import code
** uses to choose which file of an artifact folder to read.
*/
#ifndef PROFSUM_FIND_H
#define PROFSUM_FIND_H

#include "profsum_int.h"

/*
** profsumPickTrace() — choose the trace file of an artifact folder.
**
** Walks zDir exactly like profsum_find_traces(zDir) and reports:
**   *pzPath           the trace profsum reads (summary-v1-spec.md §1.1): a
**                     lone *.xplane.pb that decodes as an XSpace; otherwise
**                     (none, several, or one that does not decode) the JSON
**                     trace of step 4: first perfetto_trace.json.gz in path
**                     order, else first *.trace.json.gz, else first
**                     *.trace.json;
**   *pzReferencePick  the file the reference tool would read: the same file,
**                     except where the folder holds entries with a
**                     candidate's name that are not files (a directory or
**                     a dangling link named *.xplane.pb, ...), which the
**                     reference counts; NULL when it finds nothing or
**                     would fail (its pick is such an entry).  May be
**                     passed as NULL when the caller does not need it.
** Both strings are sqlite3_malloc'd and owned by the caller (sqlite3_free).
**
** Return codes:
**   SQLITE_OK        *pzPath is set (never NULL).
**   SQLITE_NOTFOUND  the walk succeeded but found nothing to read: *pzPath is
**                    NULL, *pzReferencePick too,
**                    *pzErr explains (it mentions .xplane.pb files if any).
**   SQLITE_ERROR     the directory is missing, not a directory, unreadable,
**                    too deep or too large; *pzErr explains.
**   SQLITE_NOMEM     out of memory; *pzErr is NULL.
** On every non-OK return the out-paths are NULL except as stated above.
**
** *pzErr (sqlite3_malloc'd, caller frees) carries no function-name prefix;
** it starts with the quoted directory, e.g. "'/data/run1': no such
** directory", so the caller prepends its own SQL name
** ("profsum_import: %s").  pzErr may be NULL.
*/
int profsumPickTrace(const char *zDir, char **pzPath, char **pzReferencePick,
                     char **pzErr);

/*
** profsumPickTrace, and *pzNote (sqlite3_malloc'd, or NULL when there is
** nothing to say) a sentence for the import's folder_pick diagnostic when
** the pick left other traces aside: the folder's JSON traces span several
** session folders (perfetto_trace.json.gz first, else the first by path:
** the oldest session when they are named by time), or the picked session
** holds several hosts' *.trace.json(.gz) files; *pzRefNote (the same way)
** a sentence for the import's quality warnings when the reference would
** read another file than *pzPath, or fail, and why.  pzNote and pzRefNote
** may be NULL.
*/
int profsumPickTraceNote(const char *zDir, char **pzPath, char **pzReferencePick,
                         char **pzNote, char **pzRefNote, char **pzErr);

/* One file of a pick by the import options "session" and "hosts". */
typedef struct ProfsumPickFile {
  char *zPath;        /* the file (dir + '/' + its path below dir) */
  char *zHost;        /* <host> of its name; NULL for perfetto_trace.json.gz */
  char *zSession;     /* its session: the parent folder's name ("" when none) */
  char *zAlt;         /* an XPlane's: the same host's trace JSON in its folder
                      ** (the better ranked), read instead when the XPlane
                      ** does not decode; else NULL */
} ProfsumPickFile;

/* The files an import reads, in path order (sqlite3_malloc'd, freed by
** profsumPickSetFree). */
typedef struct ProfsumPickSet {
  ProfsumPickFile *a;
  int n;
  char *zNote;        /* the folder_pick note on files left aside, or NULL */
} ProfsumPickSet;

/*
** The files of folder zDir that an import with the options session
** (zSession: 0 for 'reference', else 'latest', 'all' or a session name)
** and hosts (hostsAll) reads:
**   session  reference: the session (parent folder name) of the
**            reference's pick; latest: the greatest session name in byte
**            order (the newest when named by capture time, as JAX names
**            them); all: every session; a name: that session.
**   hosts    one: §1.1 over the session's files (with 'reference': the
**            reference's pick itself, and its note as
**            profsumPickTraceNote makes it); all: per host of each
**            folder of the session its XPlane, else *.trace.json.gz, else
**            *.trace.json (a session without host files: its first
**            perfetto_trace.json.gz).
** SQLITE_OK with pSet filled (at least one file), SQLITE_NOTFOUND when
** nothing is found (with hosts one and a session chosen by 'latest' or by
** name where §1.1 finds nothing: the message names the session and says
** why; no other session is read in its place), SQLITE_ERROR (no such
** session, or the directory's errors) or SQLITE_NOMEM; *pzErr as
** profsumPickTrace's.
*/
int profsumPickSession(const char *zDir, const char *zSession, int hostsAll,
                       ProfsumPickSet *pSet, char **pzErr);
void profsumPickSetFree(ProfsumPickSet *pSet);

/*
** The keys "session" and "hosts" of an options_json (other keys are
** ignored: the options of profsum_import may be given as they are).
** *pzSession: 0 for 'reference' (or absent), else sqlite3_malloc'd.
** SQLITE_OK, SQLITE_ERROR with *pzErr ("options_json: ...", no function
** prefix), or SQLITE_NOMEM.
*/
int profsumPickOptions(const char *zJson, char **pzSession, int *pHostsAll, char **pzErr);

#endif /* PROFSUM_FIND_H */
