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

/* Monotonic clock in milliseconds. */
static sqlite3_int64 nowMs(void){
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
  sqlite3_int64 left = deadline - nowMs();
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

/* Message for a spent budget. */
static char *budgetMsg(sqlite3_int64 budget){
  return sqlite3_mprintf("the database stayed busy (written by other connections) for %lld ms, "
                         "the busy budget (set it with sqlite3_busy_timeout or .timeout); "
                         "nothing was written", (long long)budget);
}

/* After a failed attempt (code *pRc, the body's message zErr, which this
** takes): 1 to try again (busy, within the budget, after a backoff); else
** 0 with *pzErr set (zErr, or the code's text, or the budget message) and
** *pRc the code to return. */
static int retryOrFail(int *pRc, char *zErr, char **pzErr, int *pnTry,
                       sqlite3_int64 deadline, sqlite3_int64 budget){
  if( !isBusy(*pRc) ){
    if( zErr ) *pzErr = zErr;
    else if( *pRc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errstr(*pRc));
    return 0;
  }
  sqlite3_free(zErr);
  if( !backoff((*pnTry)++, deadline) ){
    *pzErr = budgetMsg(budget);
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
** it writes (a read-only one, as the calling SELECT, leaves it open).  So
** each attempt prepares, before it starts, a writer that is never run: a
** statement stepped while the connection is interrupted stops before its
** first instruction, and SQLite then rolls back the whole transaction, as
** for any interrupted write.  PRAGMA user_version=<its current value>: even
** if it ever ran, it would change nothing.  SQLite expires prepared
** statements when a body creates an index (an expired statement is prepared
** again when stepped, which an interrupt forbids): a body that creates one
** renews the rescue with profsumWriteRefreshRescue() right after.
*/
static sqlite3_stmt *rescuePrepare(sqlite3 *db, const char *zSchema){
  sqlite3_stmt *p = 0;
  sqlite3_int64 v = 0;
  char *z = sqlite3_mprintf("PRAGMA \"%w\".user_version", zSchema);
  if( z==0 ) return 0;
  if( sqlite3_prepare_v2(db, z, -1, &p, 0)==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
    v = sqlite3_column_int64(p, 0);
  }
  sqlite3_finalize(p);
  sqlite3_free(z);
  p = 0;
  z = sqlite3_mprintf("PRAGMA \"%w\".user_version=%lld", zSchema, (long long)v);
  if( z==0 ) return 0;
  if( sqlite3_prepare_v2(db, z, -1, &p, 0)!=SQLITE_OK ) p = 0;
  sqlite3_free(z);
  return p;
}

/* After zUndo (ROLLBACK, or ROLLBACK TO of a savepoint) returned rc: when
** it failed because the connection is interrupted and a transaction is
** still open, step the rescue statement (see above) to end it. */
static void rescueIfInterrupted(sqlite3 *db, int rc, sqlite3_stmt *pRescue){
  if( rc==SQLITE_OK || pRescue==0 || sqlite3_get_autocommit(db) ) return;
  if( (rc & 0xff)!=SQLITE_INTERRUPT ) return;
  sqlite3_step(pRescue);
  sqlite3_reset(pRescue);
}

/* The attempts running in this thread, innermost first: where
** profsumWriteRefreshRescue() finds the rescue statement to renew. */
typedef struct Attempt {
  sqlite3 *db;
  const char *zSchema;
  sqlite3_stmt *pRescue;
  struct Attempt *pOuter;
} Attempt;
static _Thread_local Attempt *tlAttempt = 0;

/* Begin attempt a on db: its rescue statement (see above), or *pRc set to
** SQLITE_INTERRUPT when the connection is interrupted already (the attempt
** must not start: nothing could end its transaction).  Out of memory or
** another failure to prepare the rescue: *pRc SQLITE_OK, the attempt runs
** without it. */
static void attemptBegin(Attempt *a, sqlite3 *db, const char *zSchema, int *pRc){
  a->db = db;
  a->zSchema = zSchema;
  a->pRescue = rescuePrepare(db, zSchema);
  a->pOuter = tlAttempt;
  *pRc = SQLITE_OK;
  if( a->pRescue==0 && (sqlite3_errcode(db) & 0xff)==SQLITE_INTERRUPT ) *pRc = SQLITE_INTERRUPT;
  tlAttempt = a;
}

static void attemptEnd(Attempt *a){
  sqlite3_finalize(a->pRescue);
  a->pRescue = 0;
  tlAttempt = a->pOuter;
}

/* See busy.h. */
void profsumWriteRefreshRescue(sqlite3 *db){
  Attempt *a;
  for(a=tlAttempt; a && a->db!=db; a=a->pOuter){}
  if( a ){
    sqlite3_stmt *p = rescuePrepare(db, a->zSchema);
    if( p ){
      sqlite3_finalize(a->pRescue);
      a->pRescue = p;
    }
  }
}

/*
** Case 1 of busy.h: standalone statement.  BEGIN IMMEDIATE, body, COMMIT;
** any busy code restarts the whole attempt.  No SAVEPOINT: this function
** owns the transaction, so ROLLBACK undoes a failed body, and a savepoint
** would make SQLite copy every page that existed before it and is written
** again into a sub-journal (a temporary file past 64 KiB).
*/
static int runStandalone(sqlite3 *db, const char *zSchema, ProfsumWriteBody xBody,
                         void *pArg, char **pzErr, sqlite3_int64 budget){
  sqlite3_int64 deadline = nowMs() + budget;
  int nTry = 0, rc;
  rc = profsumEnsureWal(db, zSchema);
  if( rc ) return rc;
  for(;;){
    char *zErr = 0;
    Attempt a;
    attemptBegin(&a, db, zSchema, &rc);
    if( rc==SQLITE_OK ) rc = execX(db, "BEGIN IMMEDIATE");
    if( rc==SQLITE_OK ){
      rc = xBody(db, pArg, &zErr);
      if( rc && isBusy(rc) ) rc = extendedRc(db, rc);
      if( rc==SQLITE_OK ){
        /* A busy COMMIT leaves the transaction open: retry the COMMIT. */
        int nCommit = 0;
        while( isBusy(rc = execX(db, "COMMIT")) && backoff(nCommit++, deadline) ){}
        if( rc==SQLITE_OK ){ attemptEnd(&a); return SQLITE_OK; }
      }
      if( !sqlite3_get_autocommit(db) ) rescueIfInterrupted(db, execX(db, "ROLLBACK"), a.pRescue);
    }
    attemptEnd(&a);
    if( !retryOrFail(&rc, zErr, pzErr, &nTry, deadline, budget) ) return rc;
  }
}

/*
** Case 2 of busy.h: the caller owns the transaction or the snapshot.  The
** body runs inside a SAVEPOINT; plain SQLITE_BUSY is retried within the
** budget, a stale snapshot is reported.
*/
static int runNested(sqlite3 *db, const char *zSchema, ProfsumWriteBody xBody, void *pArg,
                     char **pzErr, sqlite3_int64 budget){
  sqlite3_int64 deadline = nowMs() + budget;
  int nTry = 0, rc;
  for(;;){
    char *zErr = 0;
    Attempt a;
    attemptBegin(&a, db, zSchema, &rc);
    if( rc==SQLITE_OK ) rc = execX(db, "SAVEPOINT profsum_write");
    if( rc==SQLITE_OK ){
      rc = xBody(db, pArg, &zErr);
      if( rc==SQLITE_OK ){
        /* RELEASE commits when the savepoint began the transaction; a busy
        ** RELEASE keeps the savepoint: retry it. */
        int nRel = 0;
        while( isBusy(rc = execX(db, "RELEASE profsum_write")) && backoff(nRel++, deadline) ){}
        if( rc==SQLITE_OK ){ attemptEnd(&a); return SQLITE_OK; }
      }else if( isBusy(rc) ){
        rc = extendedRc(db, rc);
      }
      if( !sqlite3_get_autocommit(db) ){
        /* interrupted: the rescue ends the caller's transaction too, as
        ** SQLite does for any write statement that is interrupted */
        rescueIfInterrupted(db, execX(db, "ROLLBACK TO profsum_write"), a.pRescue);
        if( !sqlite3_get_autocommit(db) ) execX(db, "RELEASE profsum_write");
      }
    }
    attemptEnd(&a);
    if( rc==SQLITE_BUSY_SNAPSHOT ){
      sqlite3_free(zErr);
      *pzErr = sqlite3_mprintf("another connection wrote to the database after the calling "
          "statement started reading it (SQLITE_BUSY_SNAPSHOT), and a write cannot move the "
          "statement's snapshot forward; call the function in a statement of its own "
          "(SELECT f(...); not inside BEGIN ... COMMIT nor in a query that reads tables); "
          "nothing was written");
      return rc;
    }
    if( !retryOrFail(&rc, zErr, pzErr, &nTry, deadline, budget) ) return rc;
  }
}

/* See busy.h. */
int profsumWriteRun(sqlite3 *db, const char *zSchema, ProfsumWriteBody xBody,
                    void *pArg, char **pzErr){
  sqlite3_int64 budget = profsumBusyBudgetMs(db);
  if( sqlite3_get_autocommit(db) && sqlite3_txn_state(db, 0)==SQLITE_TXN_NONE ){
    return runStandalone(db, zSchema, xBody, pArg, pzErr, budget);
  }
  return runNested(db, zSchema, xBody, pArg, pzErr, budget);
}
