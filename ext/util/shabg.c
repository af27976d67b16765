/*
** shabg.c — a file's SHA-256 hashed beside the caller's work (shabg.h).
**
** An import needs its file's digest only at its end.  Hashing it on the
** thread that sets the pace of the import costs that thread the time of
** the hash (SHA-256 with the x86 extensions: about 1.5 GB/s); hashing it on
** a thread of normal priority takes a core from the import's own threads
** on a two-core machine.  So the hash runs at the idle scheduling class
** (SCHED_IDLE): it gets a core only where one would otherwise wait.  A
** thread of that class can starve while every core is busy with other
** work, so the file is hashed in steps of SHABG_STEP bytes under a mutex,
** and the caller, when it wants the digest, takes over: it hashes what is
** left itself and the thread ends at its next step.
**
** The steps read with pread() at their own offset: the caller may read the
** same descriptor meanwhile.  profsumSha256File, a file's digest at once,
** is the same steps in the calling thread.
*/
#include "profsum_int.h"
#include "shabg.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define SHABG_STEP (256*1024)      /* bytes per step: as fast as larger */

struct ProfsumShaBg {
  int fd;                       /* the file */
  int bOwnFd;                   /* fd is closed with p (profsumShaBgOpen) */
  const char *zPath;            /* for messages */
  sqlite3_int64 iOff;           /* the next byte to hash */
  ProfsumSha256 s;              /* the digest so far */
  unsigned char *buf;           /* SHABG_STEP bytes */
  int bDone;                    /* the file's end was reached, or rc */
  int rc;                       /* a read error (then zErr) */
  char *zErr;
  int bThread;                  /* a thread runs shabgMain */
  int bTaken;                   /* the caller took over: the thread ends */
  pthread_t thread;
  pthread_mutex_t mu;           /* held for a step while a thread runs */
};

/* Hash the next step of the file into p (under p->mu when a thread runs). */
static void shabgStep(ProfsumShaBg *p){
  ssize_t got;
  while( (got = pread(p->fd, p->buf, SHABG_STEP, (off_t)p->iOff))<0 ){
    if( errno!=EINTR ){
      p->zErr = sqlite3_mprintf("'%s': read error at byte %lld (%s)", p->zPath,
                                (long long)p->iOff, strerror(errno));
      p->rc = PROFSUM_RC_FILEIO;
      p->bDone = 1;
      return;
    }
  }
  if( got==0 ){ p->bDone = 1; return; }
  profsumSha256Update(&p->s, p->buf, (size_t)got);
  p->iOff += got;
}

/* The thread: steps at the idle class until the end or the take-over. */
static void *shabgMain(void *pArg){
  ProfsumShaBg *p = (ProfsumShaBg*)pArg;
  struct sched_param sp;
  memset(&sp, 0, sizeof(sp));
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);  /* best effort */
  for(;;){
    int bEnd;
    pthread_mutex_lock(&p->mu);
    bEnd = p->bTaken || p->bDone;
    if( !bEnd ) shabgStep(p);
    pthread_mutex_unlock(&p->mu);
    if( bEnd ) break;
  }
  return 0;
}

/* Start p's thread (best effort: without one, the caller does it all). */
static void shabgThread(ProfsumShaBg *p){
  if( pthread_mutex_init(&p->mu, 0) ) return;
  if( pthread_create(&p->thread, 0, shabgMain, p)==0 ){
    p->bThread = 1;
  }else{
    pthread_mutex_destroy(&p->mu);
  }
}

/* See shabg.h. */
int profsumShaBgStart(int fd, const char *zPath, sqlite3_int64 iFrom,
                      const ProfsumSha256 *pState, int bThread, ProfsumShaBg **pp){
  ProfsumShaBg *p = sqlite3_malloc64(sizeof(*p));
  *pp = 0;
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  p->buf = sqlite3_malloc64(SHABG_STEP);
  if( p->buf==0 ){ sqlite3_free(p); return SQLITE_NOMEM; }
  p->fd = fd;
  p->zPath = zPath;
  p->iOff = iFrom;
  if( pState ) p->s = *pState; else profsumSha256Init(&p->s);
  if( bThread ) shabgThread(p);
  *pp = p;
  return SQLITE_OK;
}

/* See shabg.h. */
int profsumShaBgOpen(const char *zPath, int bThread, ProfsumShaBg **pp, char **pzErr){
  int rc;
  int fd = open(zPath, O_RDONLY|O_CLOEXEC);
  *pp = 0;
  if( fd<0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot open (%s)", zPath, strerror(errno));
    return SQLITE_CANTOPEN;
  }
  rc = profsumShaBgStart(fd, zPath, 0, 0, 0, pp);
  if( rc ){ close(fd); return rc; }
  (*pp)->bOwnFd = 1;
  if( bThread ) shabgThread(*pp);
  return SQLITE_OK;
}

/* See hash.h. */
int profsumSha256File(const char *zPath, char *zHex, sqlite3_int64 *pnSize, char **pzErr){
  ProfsumShaBg *p;
  int rc = profsumShaBgOpen(zPath, 0, &p, pzErr);
  if( rc==SQLITE_OK ) rc = profsumShaBgFinish(p, zHex, pnSize, pzErr);
  return rc;
}

/* See shabg.h. */
int profsumShaBgHelp(ProfsumShaBg *p){
  int bDid = 0;
  if( !p->bThread ){
    if( !p->bDone ){ shabgStep(p); bDid = 1; }
    return bDid;
  }
  if( pthread_mutex_trylock(&p->mu) ) return 0;
  if( !p->bDone && !p->bTaken ){ shabgStep(p); bDid = 1; }
  pthread_mutex_unlock(&p->mu);
  return bDid;
}

/* End the thread, if one runs: it stops at its next step. */
static void shabgTake(ProfsumShaBg *p){
  if( !p->bThread ) return;
  pthread_mutex_lock(&p->mu);
  p->bTaken = 1;
  pthread_mutex_unlock(&p->mu);
  pthread_join(p->thread, 0);
  pthread_mutex_destroy(&p->mu);
  p->bThread = 0;
}

/* Free p (no thread runs). */
static void shabgFree(ProfsumShaBg *p){
  if( p->bOwnFd ) close(p->fd);
  sqlite3_free(p->zErr);
  sqlite3_free(p->buf);
  sqlite3_free(p);
}

/* See shabg.h. */
int profsumShaBgFinish(ProfsumShaBg *p, char *zHex, sqlite3_int64 *pnEnd, char **pzErr){
  int rc;
  /* the rest here, under the mutex: the thread, once it runs again, finds
  ** the hash taken and ends */
  if( p->bThread ) pthread_mutex_lock(&p->mu);
  p->bTaken = 1;
  while( !p->bDone ) shabgStep(p);
  if( p->bThread ) pthread_mutex_unlock(&p->mu);
  shabgTake(p);
  rc = p->rc;
  if( rc ){
    *pzErr = p->zErr;
    p->zErr = 0;
  }else{
    profsumSha256Hex(&p->s, zHex);
    if( pnEnd ) *pnEnd = p->iOff;
  }
  shabgFree(p);
  return rc;
}

/* See shabg.h. */
void profsumShaBgStop(ProfsumShaBg *p){
  if( p==0 ) return;
  shabgTake(p);
  shabgFree(p);
}
