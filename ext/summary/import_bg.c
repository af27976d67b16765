/*
** import_bg.c — the first import's parse on a thread of its own: while the
** connection's thread creates the schema of a new database (SQLite's
** parsing of the CREATE statements, most of a small import's fixed cost),
** the trace is parsed beside it.  See import_int.h for the contract of each
** function, import.c for where the import uses them.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "import_int.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#if !defined(__APPLE__)
#define PROFSUM_BG_PARSE 1      /* the first import's parse thread (ImportBg) */
#include <semaphore.h>
#if defined(__GLIBC__) && (__GLIBC__>2 || (__GLIBC__==2 && __GLIBC_MINOR__>=30))
#define PROFSUM_SEM_CLOCK 1     /* sem_clockwait: waits on CLOCK_MONOTONIC */
#endif
#endif

#if PROFSUM_BG_PARSE
/* A first import parses in a thread of its own while this one creates the
** schema (SQLite's parsing of the CREATE statements, most of a small
** import's fixed cost): the parse needs no connection, and the two
** cores are not both busy during a parse (the inflate thread waits for the
** scanner most of the time). */
struct ImportBg {
  const char *zTrace;
  unsigned flags;                /* profsumEngineParse's */
  pthread_t thread;
  sem_t done;                    /* posted by the parse thread when it returns */
  int stop;                      /* set by the connection's thread: give up */
  int rc;                        /* the parse's result, once done */
  char *zErr;
  ProfsumEngine *pEngine;
  ProfsumEngineInfo info;
};

/* ProfsumStopFn of the parse thread: the stop flag (the connection is the
** other thread's, which watches the interrupt). */
static int bgStop(void *pArg){
  return __atomic_load_n(&((ImportBg*)pArg)->stop, __ATOMIC_RELAXED);
}

/* The parse thread. */
static void *bgMain(void *pArg){
  ImportBg *b = (ImportBg*)pArg;
  /* the file's reads hear the stop flag too (profsumStopPush) */
  ProfsumStopCheck prev = profsumStopPush(bgStop, b);
  b->rc = profsumEngineParse("profsum_import", b->zTrace, b->flags, bgStop, b, &b->pEngine,
                             &b->info, &b->zErr);
  profsumStopPop(prev);
  sem_post(&b->done);
  return 0;
}

/* See import_int.h. */
ImportBg *profsumImportBgStart(const char *zTrace, unsigned flags){
  ImportBg *b = sqlite3_malloc64(sizeof(*b));
  if( b==0 ) return 0;
  memset(b, 0, sizeof(*b));
  b->zTrace = zTrace;
  b->flags = flags;
  if( sem_init(&b->done, 0, 0) ){ sqlite3_free(b); return 0; }
  if( pthread_create(&b->thread, 0, bgMain, b) ){
    sem_destroy(&b->done);
    sqlite3_free(b);
    return 0;
  }
  return b;
}

/* See import_int.h. */
void profsumImportBgDiscard(ImportBg *b){
  if( b==0 ) return;
  __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
  pthread_join(b->thread, 0);
  sem_destroy(&b->done);
  profsumEngineFree(b->pEngine);
  sqlite3_free(b->zErr);
  sqlite3_free(b);
}

/* See import_int.h. */
int profsumImportBgFinish(sqlite3 *db, ImportBg **ppBg, ProfsumEngine **ppEngine,
                          ProfsumEngineInfo *pInfo, char **pzErr){
  ImportBg *b = *ppBg;
  ProfsumProbe probe;
  int rc;
  memset(&probe, 0, sizeof(probe));
  probe.db = db;
  for(;;){
    struct timespec t;
    int ok;
#if PROFSUM_SEM_CLOCK
    clock_gettime(CLOCK_MONOTONIC, &t);          /* not moved by clock changes */
#else
    clock_gettime(CLOCK_REALTIME, &t);
#endif
    t.tv_nsec += 10*1000*1000;
    if( t.tv_nsec>=1000000000 ){ t.tv_sec++; t.tv_nsec -= 1000000000; }
#if PROFSUM_SEM_CLOCK
    ok = sem_clockwait(&b->done, CLOCK_MONOTONIC, &t)==0;
#else
    ok = sem_timedwait(&b->done, &t)==0;
#endif
    if( ok ) break;
    if( errno!=ETIMEDOUT && errno!=EINTR ){
      /* cannot wait with a timeout: wait for the thread's end, without
      ** watching the interrupt (pthread_join below) */
      while( sem_wait(&b->done)!=0 && errno==EINTR ){}
      break;
    }
    if( profsumInterrupted(&probe) ) __atomic_store_n(&b->stop, 1, __ATOMIC_RELAXED);
  }
  profsumProbeDone(&probe);
  pthread_join(b->thread, 0);
  sem_destroy(&b->done);
  rc = b->rc;
  *ppEngine = b->pEngine;
  *pInfo = b->info;
  *pzErr = b->zErr;
  sqlite3_free(b);
  *ppBg = 0;
  return rc;
}
#else
/* Without unnamed semaphores (macOS): every import parses first. */
struct ImportBg { int unused; };
ImportBg *profsumImportBgStart(const char *zTrace, unsigned flags){ (void)zTrace; (void)flags; return 0; }
void profsumImportBgDiscard(ImportBg *b){ (void)b; }
int profsumImportBgFinish(sqlite3 *db, ImportBg **ppBg, ProfsumEngine **ppEngine,
                          ProfsumEngineInfo *pInfo, char **pzErr){
  (void)db; (void)ppBg; (void)ppEngine; (void)pInfo; *pzErr = 0; return SQLITE_OK;
}
#endif

/* Is this import one that parses in a thread while it creates the schema
** (see ImportBg)?  Only the first import into a new database (an empty
** file, or an in-memory database without the schema), called outside any
** transaction, of a trace of at most PROFSUM_BG_MAX_BYTES on disk: the
** write lock is then held during the parse, which must not keep the
** writers of a shared database waiting (an existing file takes the usual
** path: parse, then a short write), nor for the seconds a big trace takes
** (where the schema's cost would not show anyway).  Decided without reading the
** database (a read could wait for a lock). */
#define PROFSUM_BG_MAX_BYTES (64*1024*1024)
int profsumImportBgWanted(sqlite3 *db, const char *zSchema, const char *zTrace){
#if !PROFSUM_BG_PARSE
  (void)db; (void)zSchema; (void)zTrace;
  return 0;                           /* no unnamed semaphores (sem_init) */
#else
  struct stat st;
  const char *zFile;
  if( !profsumThreadsAllowed() || !sqlite3_get_autocommit(db)
   || sqlite3_txn_state(db, 0)!=SQLITE_TXN_NONE ) return 0;
  if( stat(zTrace, &st)!=0 || !S_ISREG(st.st_mode) || st.st_size>PROFSUM_BG_MAX_BYTES ) return 0;
  zFile = sqlite3_db_filename(db, zSchema);
  if( zFile==0 ) return 0;                           /* no such schema */
  if( zFile[0]==0 ) return !profsumSchemaCurrent(db, zSchema);   /* in memory */
  return stat(zFile, &st)!=0 || st.st_size==0;
#endif
}
