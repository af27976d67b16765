/*
** busy.c — run a write function's body as one atomic write on a database
** that other connections and processes write at the same time: WAL, write
** lock first, bounded retry of SQLITE_BUSY / SQLITE_BUSY_SNAPSHOT.  The
** rules (which states can be retried and why) are in busy.h.
**
** Usage from a write function (see ext/compare.c):
**
**   rc = profsumWriteRun(db, "main", myBody, &myState, &zErr);
**
** Limitations: the retry loop sleeps in the calling thread (sqlite3_sleep),
** so a write function waits at most the busy budget; a body must be
** restartable (it may run several times; only its last run's changes are
** kept).
*/
#include "profsum_int.h"
#include "busy.h"

#include <string.h>
#include <time.h>

/* See busy.h. */
sqlite3_int64 profsumNowMs(void){
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (sqlite3_int64)ts.tv_sec*1000 + ts.tv_nsec/1000000;
}

/* True when rc (primary or extended) is a busy code worth retrying. */
static int isBusy(int rc){ return (rc & 0xff)==SQLITE_BUSY; }

/* The extended code for a failure rc just returned by a call on db: the
** connection's extended error code when it agrees with rc's primary code
** (sqlite3_exec returns primary codes unless extended codes are on). */
static int extendedRc(sqlite3 *db, int rc){
  int x = sqlite3_extended_errcode(db);
  if( (x & 0xff)==(rc & 0xff) ) return x;
  return rc;
}

/* See busy.h. */
sqlite3_int64 profsumBusyBudgetMs(sqlite3 *db){
  sqlite3_stmt *p = 0;
  sqlite3_int64 ms = 0;
  if( sqlite3_prepare_v2(db, "PRAGMA busy_timeout", -1, &p, 0)==SQLITE_OK
   && sqlite3_step(p)==SQLITE_ROW ){
    ms = sqlite3_column_int64(p, 0);
  }
  sqlite3_finalize(p);
  return ms>0 ? ms : PROFSUM_BUSY_DEFAULT_MS;
}

/*
** Sleep before retry number nTry (0-based): 1 ms doubling up to 64 ms, plus
** up to the same amount of random jitter so that processes that collided
** do not retry in lock step; never past the deadline.  Returns 0 when the
** deadline has passed (no sleep), 1 after sleeping.
*/
static int backoff(int nTry, sqlite3_int64 deadline){
  sqlite3_int64 left = deadline - profsumNowMs();
  int base = nTry>=6 ? 64 : (1<<nTry);
  unsigned int r = 0;
  int ms;
  if( left<=0 ) return 0;
  sqlite3_randomness((int)sizeof(r), &r);
  ms = base + (int)(r % (unsigned)base);
  if( ms>left ) ms = (int)left;
  sqlite3_sleep(ms);
  return 1;
}

/* Run one SQL text, ignoring its result rows; returns the extended code. */
static int execX(sqlite3 *db, const char *zSql){
  int rc = sqlite3_exec(db, zSql, 0, 0, 0);
  return rc ? extendedRc(db, rc) : SQLITE_OK;
}

/* See busy.h. */
int profsumEnsureWal(sqlite3 *db, const char *zSchema){
  const char *zFile;
  sqlite3_stmt *p = 0;
  char *z;
  int isWal = 0, rc;
  if( !sqlite3_get_autocommit(db) || sqlite3_txn_state(db, 0)!=SQLITE_TXN_NONE ) return SQLITE_OK;
  zFile = sqlite3_db_filename(db, zSchema);
  if( zFile==0 || zFile[0]==0 ) return SQLITE_OK;           /* :memory:, temp */
  if( sqlite3_db_readonly(db, zSchema)!=0 ) return SQLITE_OK;
  z = sqlite3_mprintf("PRAGMA \"%w\".journal_mode", zSchema);
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  if( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
    const char *zMode = (const char*)sqlite3_column_text(p, 0);
    isWal = zMode && sqlite3_stricmp(zMode, "wal")==0;
  }
  sqlite3_finalize(p);
  if( isWal ) return SQLITE_OK;
  z = sqlite3_mprintf("PRAGMA \"%w\".journal_mode=WAL", zSchema);
  if( z==0 ) return SQLITE_NOMEM;
  sqlite3_exec(db, z, 0, 0, 0);          /* best effort: see busy.h */
  sqlite3_free(z);
  return SQLITE_OK;
}

/* Message for a spent budget: the database file of zSchema in db ('' for
** one in memory) and what may hold it. */
static char *budgetMsg(sqlite3 *db, const char *zSchema, sqlite3_int64 budget){
  const char *zFile = sqlite3_db_filename(db, zSchema);
  return sqlite3_mprintf("the database %s%s%s (schema '%s') stayed busy for %lld ms, the busy "
                         "budget: another connection held it (one writing, or with a rollback "
                         "journal, one still reading); set the budget with "
                         "sqlite3_busy_timeout, the sqlite3 shell's .timeout or the CLI's "
                         "PROFSUM_BUSY_TIMEOUT_MS; nothing was written",
                         zFile && zFile[0] ? "'" : "", zFile && zFile[0] ? zFile : "in memory",
                         zFile && zFile[0] ? "'" : "", zSchema, (long long)budget);
}

/* After a failed attempt (code *pRc, the body's message zErr, which this
** takes): 1 to try again (busy, within the budget, after a backoff); else
** 0 with *pzErr set (zErr, or the code's text, or the budget message) and
** *pRc the code to return. */
static int retryOrFail(sqlite3 *db, const char *zSchema, int *pRc, char *zErr, char **pzErr,
                       int *pnTry, sqlite3_int64 deadline, sqlite3_int64 budget){
  if( !isBusy(*pRc) ){
    if( zErr ) *pzErr = zErr;
    else if( *pRc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errstr(*pRc));
    return 0;
  }
  sqlite3_free(zErr);
  if( !backoff((*pnTry)++, deadline) ){
    *pzErr = budgetMsg(db, zSchema, budget);
    *pRc = SQLITE_BUSY;
    return 0;
  }
  return 1;
}

/*
** Ending a transaction after an interrupt.  Once sqlite3_interrupt() (or
** Ctrl-C in the shell) has hit, SQLite 3.40 prepares no statement, not even
** ROLLBACK, until the statement that called the write function ends; and a
** statement that ends on the interrupt rolls the transaction back only if
** it counts as a writer (a read-only one, as the calling SELECT, leaves it
** open).  So each attempt keeps a "rescue": "PRAGMA <schema>.journal_mode",
** which reads nothing, takes no lock and only reports the journal mode, yet
** counts as a writer (its opcode may change the journal).  Stepped while the
** connection is interrupted, it stops before its next instruction, and
** SQLite's end of an interrupted writer rolls back the whole transaction.
**
** The rescue is prepared before the attempt's BEGIN (or SAVEPOINT), stepped
** to its row right after it (a running writer forbids SAVEPOINT), and kept
** running: a running statement is never "expired" (DDL such as CREATE INDEX
** expires every prepared statement, and an expired one must be prepared
** again before it runs, which an interrupt forbids).  A running writer
** forbids COMMIT and RELEASE too, so before those a second one is prepared
** (it stays unstepped, and no DDL comes after it) and the first is
** finalized.  There is no moment without one: an interrupt before the first
** is stepped makes that step roll back (the BEGIN); one before the second is
** prepared finds the first still running.
*/
typedef struct Rescue {
  sqlite3_stmt *pRun;        /* stepped to its row, kept running, or 0 */
  sqlite3_stmt *pLast;       /* prepared before COMMIT/RELEASE, or 0 */
} Rescue;

static int rescuePrepare(sqlite3 *db, const char *zSchema, sqlite3_stmt **pp){
  char *z = sqlite3_mprintf("PRAGMA \"%w\".journal_mode", zSchema);
  int rc;
  *pp = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  return rc;
}

/* Prepare the rescue of an attempt, before its BEGIN or SAVEPOINT.  Returns
** SQLITE_INTERRUPT when the connection is interrupted already (the attempt
** must not begin: nothing could end its transaction), a busy code when the
** prepare had to read the schema and another connection's lock stopped it
** (the attempt is busy: retried, as a busy BEGIN, without waiting a second
** time in BEGIN); otherwise SQLITE_OK, with or without a rescue (out of
** memory, a schema name that does not exist: the attempt runs without). */
static int rescueStart(sqlite3 *db, const char *zSchema, Rescue *r){
  int rc;
  memset(r, 0, sizeof(*r));
  rc = rescuePrepare(db, zSchema, &r->pRun);
  if( rc && (rc & 0xff)!=SQLITE_INTERRUPT && !isBusy(rc) ) rc = SQLITE_OK;
  return rc ? extendedRc(db, rc) : SQLITE_OK;
}

/* Right after BEGIN or SAVEPOINT: step the rescue to its row (a running
** writer forbids SAVEPOINT, so not before).  SQLITE_INTERRUPT when the
** interrupt came already: the step stopped on it, and SQLite rolled the
** transaction back. */
static int rescueArm(Rescue *r){
  int rc;
  if( r->pRun==0 ) return SQLITE_OK;
  rc = sqlite3_step(r->pRun);
  if( rc==SQLITE_ROW ) return SQLITE_OK;
  sqlite3_finalize(r->pRun);
  r->pRun = 0;
  return (rc & 0xff)==SQLITE_INTERRUPT ? SQLITE_INTERRUPT : SQLITE_OK;
}

/* Before COMMIT or RELEASE: the second rescue prepared, then the running
** one finalized.  SQLITE_INTERRUPT when the second cannot be prepared
** because of an interrupt (the first stays running for the rollback). */
static int rescueBeforeCommit(sqlite3 *db, const char *zSchema, Rescue *r){
  int rc = rescuePrepare(db, zSchema, &r->pLast);
  if( (rc & 0xff)==SQLITE_INTERRUPT ) return SQLITE_INTERRUPT;
  sqlite3_finalize(r->pRun);
  r->pRun = 0;
  return SQLITE_OK;
}

/* After ROLLBACK (or ROLLBACK TO of a savepoint) returned rcUndo: when it
** failed because the connection is interrupted, or out of memory (SQLite
** then prepares nothing more until the calling statement ends, as after an
** interrupt), and a transaction is still open, step a rescue to end it. */
static void rescueRollback(sqlite3 *db, int rcUndo, Rescue *r){
  sqlite3_stmt *p = r->pRun ? r->pRun : r->pLast;
  if( rcUndo==SQLITE_OK || p==0 || sqlite3_get_autocommit(db) ) return;
  if( (rcUndo & 0xff)!=SQLITE_INTERRUPT && (rcUndo & 0xff)!=SQLITE_NOMEM ) return;
  sqlite3_step(p);
  sqlite3_reset(p);
}

static void rescueEnd(Rescue *r){
  sqlite3_finalize(r->pRun);
  sqlite3_finalize(r->pLast);
  r->pRun = r->pLast = 0;
}

/* Undo an attempt whose transaction (savepoint) is open: ROLLBACK, or
** ROLLBACK TO and RELEASE of its savepoint; when the connection is
** interrupted, the rescue ends the caller's transaction too, as SQLite
** does for any write statement that is interrupted.  A savepoint that was
** never opened makes ROLLBACK TO and RELEASE fail: nothing is undone. */
static void undoAttempt(sqlite3 *db, int bNested, Rescue *r){
  if( !bNested ){
    rescueRollback(db, execX(db, "ROLLBACK"), r);
  }else{
    int rcUndo = execX(db, "ROLLBACK TO profsum_write");
    rescueRollback(db, rcUndo, r);
    if( !sqlite3_get_autocommit(db) ) execX(db, "RELEASE profsum_write");
  }
}

/*
** The attempts of a write, in one of the two cases of busy.h:
**
** Case 1 (bNested 0): standalone statement.  BEGIN IMMEDIATE, body,
** COMMIT; any busy code restarts the whole attempt.  No SAVEPOINT: this
** function owns the transaction, so ROLLBACK undoes a failed body, and a
** savepoint would make SQLite copy every page that existed before it and
** is written again into a sub-journal (a temporary file past 64 KiB).
**
** Case 2 (bNested 1): the caller owns the transaction or the snapshot.
** The body runs inside a SAVEPOINT; plain SQLITE_BUSY is retried within
** the budget, a stale snapshot is reported.
*/
static int runWrite(sqlite3 *db, const char *zSchema, ProfsumWriteBody xBody,
                    void *pArg, char **pzErr, sqlite3_int64 budget, int bNested){
  sqlite3_int64 deadline = profsumNowMs() + budget;
  int nTry = 0, rc;
  if( !bNested ){
    rc = profsumEnsureWal(db, zSchema);
    if( rc ) return rc;
  }
  for(;;){
    char *zErr = 0;
    Rescue res;
    rc = rescueStart(db, zSchema, &res);
    if( rc==SQLITE_OK ){
      rc = execX(db, bNested ? "SAVEPOINT profsum_write" : "BEGIN IMMEDIATE");
      if( (rc & 0xff)==SQLITE_INTERRUPT && !sqlite3_get_autocommit(db) ){
        /* SQLite asks the progress handler once more as a statement ends,
        ** after BEGIN (SAVEPOINT) took effect, and reports an interrupt
        ** then: the transaction (savepoint) is open though the statement
        ** failed.  Undone as after an interrupt in the body. */
        undoAttempt(db, bNested, &res);
      }
    }
    if( rc==SQLITE_OK ){
      rc = rescueArm(&res);
      if( rc==SQLITE_OK ) rc = xBody(db, pArg, &zErr);
      if( !bNested && rc && isBusy(rc) ) rc = extendedRc(db, rc);
      if( rc==SQLITE_OK ) rc = rescueBeforeCommit(db, zSchema, &res);
      if( rc==SQLITE_OK ){
        /* A busy COMMIT leaves the transaction open, a busy RELEASE keeps
        ** the savepoint (RELEASE commits when the savepoint began the
        ** transaction): retry it. */
        int nEnd = 0;
        while( isBusy(rc = execX(db, bNested ? "RELEASE profsum_write" : "COMMIT"))
               && backoff(nEnd++, deadline) ){}
        if( rc==SQLITE_OK ){ rescueEnd(&res); return SQLITE_OK; }
      }else if( bNested && isBusy(rc) ){
        rc = extendedRc(db, rc);
      }
      if( !sqlite3_get_autocommit(db) ) undoAttempt(db, bNested, &res);
    }
    rescueEnd(&res);
    if( bNested && rc==SQLITE_BUSY_SNAPSHOT ){
      sqlite3_free(zErr);
      *pzErr = sqlite3_mprintf("another connection wrote to the database after the calling "
          "statement started reading it (SQLITE_BUSY_SNAPSHOT), and a write cannot move the "
          "statement's snapshot forward; call the function in a statement of its own "
          "(SELECT f(...); not inside BEGIN ... COMMIT nor in a query that reads tables); "
          "nothing was written");
      return rc;
    }
    if( !retryOrFail(db, zSchema, &rc, zErr, pzErr, &nTry, deadline, budget) ) return rc;
  }
}

/* See busy.h. */
int profsumWriteRun(sqlite3 *db, const char *zSchema, ProfsumWriteBody xBody,
                    void *pArg, char **pzErr){
  sqlite3_int64 budget = profsumBusyBudgetMs(db);
  int bNested = !sqlite3_get_autocommit(db) || sqlite3_txn_state(db, 0)!=SQLITE_TXN_NONE;
  return runWrite(db, zSchema, xBody, pArg, pzErr, budget, bNested);
}
