/*
** busy.h — running the body of a write function (profsum_track,
** profsum_bundle, profsum_history_import, and profsum_import when wired
** in) safely on a .db that other processes write at the same time
** (busy.c).
**
** The write functions are SQL functions, so they run inside the statement
** that calls them (SELECT profsum_track(...)).  What can be retried depends
** on the transaction state of the connection at the call:
**
**   1. Standalone statement (autocommit, no read transaction open: the
**      calling SELECT reads no table).  The normal case.  A file database is
**      switched to WAL if it is not already; then the body runs inside
**      BEGIN IMMEDIATE ... COMMIT: the write lock is taken FIRST, so the
**      body never reads a snapshot it cannot upgrade (no SQLITE_BUSY_SNAPSHOT
**      half-way).  SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT from BEGIN, from the
**      body or from COMMIT are retried from the start with bounded
**      exponential backoff (1 ms doubling to 64 ms, with jitter) until the
**      busy budget is spent.
**   2. Inside a read transaction of the calling statement or inside the
**      user's own BEGIN ... COMMIT.  The snapshot belongs to the caller: the
**      body runs inside a SAVEPOINT; SQLITE_BUSY is retried within the
**      budget (rolling back to the savepoint) while the caller's snapshot is
**      still current; SQLITE_BUSY_SNAPSHOT cannot be cured from inside and
**      is reported with advice to call the function as its own statement.
**
** The busy budget is the connection's busy timeout (sqlite3_busy_timeout,
** the shell's .timeout, Python's sqlite3.connect(timeout=...)) read with
** PRAGMA busy_timeout; when none is set (0), PROFSUM_BUSY_DEFAULT_MS.
** SQLite's own busy handler (when set) already waits inside one attempt; the
** budget bounds the total across attempts, so the total wait is about the
** timeout the user chose.
*/
#ifndef PROFSUM_BUSY_H
#define PROFSUM_BUSY_H

#include "profsum_int.h"

/* Busy budget when the connection has no busy timeout, in milliseconds. */
#define PROFSUM_BUSY_DEFAULT_MS 10000

/*
** The body of a write.  Runs inside a transaction of its own (case 1) or
** inside SAVEPOINT profsum_write (case 2) on db, and may
** run more than once (each retry starts from a rolled-back state), so it
** must not keep side effects outside the database between attempts.
** Returns SQLITE_OK or an SQLite error code; on an error it may set *pzErr
** (sqlite3_malloc'd, the caller of profsumWriteRun frees it).  A return
** code whose primary code is SQLITE_BUSY (including SQLITE_BUSY_SNAPSHOT)
** means "retry"; the body then leaves *pzErr unset.
*/
typedef int (*ProfsumWriteBody)(sqlite3 *db, void *pArg, char **pzErr);

/*
** Run xBody(db, pArg, pzErr) as one atomic write on db (see the header
** comment for the two cases).  zSchema names the attached database written
** ("main", an ATTACH name): it is the one switched to WAL.
**
** Returns SQLITE_OK when the body succeeded and its changes are committed
** (case 1) or released into the caller's transaction (case 2).  Otherwise
** nothing the body did remains and the return is an SQLite error code:
**   - the body's own error (its *pzErr message, if any, is passed on);
**   - SQLITE_BUSY when the budget ran out: *pzErr says so ("the database
**     stayed busy (written by other connections) for N ms, the busy budget;
**     nothing was written");
**   - SQLITE_BUSY_SNAPSHOT in case 2: *pzErr explains that the calling
**     statement holds an outdated snapshot.
** Messages carry no function-name prefix: the SQL-level caller adds it.
*/
int profsumWriteRun(sqlite3 *db, const char *zSchema, ProfsumWriteBody xBody,
                    void *pArg, char **pzErr);

/*
** Switch the file database zSchema of db to WAL when it is not in WAL
** already.  Does nothing (returns SQLITE_OK) for in-memory and temporary
** databases, read-only databases, and when the connection is inside a
** transaction (sqlite3_get_autocommit() false or a read transaction open):
** journal_mode cannot change there.  A failure to switch (e.g. another
** connection holds a lock, or the VFS has no shared memory) is not an
** error either: the write still works in rollback-journal mode, and the
** next write tries again.  Returns SQLITE_NOMEM only when out of memory.
*/
int profsumEnsureWal(sqlite3 *db, const char *zSchema);

/* Milliseconds on the monotonic clock (not moved by changes of the time
** of day): for deadlines. */
sqlite3_int64 profsumNowMs(void);

/*
** The busy budget of db in milliseconds: PRAGMA busy_timeout when it is
** positive, else PROFSUM_BUSY_DEFAULT_MS.
*/
sqlite3_int64 profsumBusyBudgetMs(sqlite3 *db);

#endif /* PROFSUM_BUSY_H */
