/*
** scanpipe.c — the JSON scanner read ahead on a thread of its own, for a
** caller whose handling of each event costs about as much as scanning it
** (the summary engine's read pass).  The scanning thread parses each
** event into its place in a batch (profsumScanSetTarget), notes each
** diagnostic between them, and hands the batches over in order; the caller takes
** them one event at a time (profsumScanPipeNext), the diagnostics passed
** on just before the event that followed them, as one thread would have.
**
** Spans point into the scanner's windows: the scanner takes a new window
** at each refill (profsumScanHoldWindows), and the window it leaves goes
** with the batch being filled; once the caller is done with that batch,
** no event it still holds points there, and the window is reused.  So at
** most PIPE_NSLOT batches and as many windows beside the scanner's are in
** memory (for an entry larger than the window, which doubles it until it
** holds the entry, the smaller windows too: less than the largest again).
**
** A side that waits is woken once the other has made PIPE_WAKE batches
** ready (or free), not at each batch: with the two sides about as fast,
** waking at each batch made a wake-up, and often a context switch, every
** few batches on both sides.  Nothing waits on a partial group: the last
** batch always wakes the caller, and a waiting caller asks the stop check
** every PIPE_ASK_MS, taking what is ready then.  Before it waits, a side
** does a step of the source's SHA-256 when one is waiting (an import's
** hash, left behind the reading: profsumSrcHashBehind).
**
** The source's stop check was taken on the caller's thread, where it must
** be asked (it may run SQL on the caller's connection): the scanning
** thread's source hears the pipe's stop flag instead, and the caller asks
** the original check as the source would have (every PROFSUM_STOP_BYTES
** bytes of events it takes).  See profsum_reader.h for the contract.
*/
#include "profsum_int.h"
#include "profsum_reader.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PIPE_BATCH_N 128      /* events per batch: about 100 KB */
#ifndef PIPE_NSLOT
# define PIPE_NSLOT  24       /* batches handed over or being filled */
#endif
#define PIPE_NWIN    (PIPE_NSLOT + 1)   /* windows kept for reuse */
#ifndef PIPE_WAKE
# define PIPE_WAKE   8        /* a side that waits is woken once this many
                              ** batches are ready (the caller) or free (the
                              ** scanning thread), not at each one */
#endif
#define PIPE_ASK_MS  100      /* the stop check while the caller waits */
#define PIPE_WIN_KEEP (1024*1024)  /* larger windows (one entry's) are freed
                                   ** once used, not kept for reuse */

/* A diagnostic noted between events: passed on before event iBefore of
** its batch (or at the batch's end). */
typedef struct PipeDiag {
  int iBefore;
  int64_t idx, iOffset;
  const char *zKind;          /* static */
  int64_t iDetail;            /* offset of the detail in the batch's aTxt,
                              ** -1: none */
} PipeDiag;

typedef struct PipeBatch {
  void *pEvMem;               /* the allocation that holds aEv */
  ProfsumEvent *aEv;          /* PIPE_BATCH_N events, from a 64-byte
                              ** boundary (each event takes the fewest cache
                              ** lines: they move between two cores) */
  unsigned *aArgSet;          /* the aArg spans set, per event
                              ** (profsumScanSetTarget) */
  int nEv;
  PipeDiag *aDiag; int nDiag, nDiagAlloc;
  char *aTxt; int64_t nTxt, nTxtAlloc;   /* the details, NUL-terminated */
  unsigned char *aRetire;     /* a window the scanner left while this
                              ** batch was filled: free once it was used */
  size_t nRetire;
  int bZeroed;                /* aEv and aArgSet were zeroed (pipeTarget):
                              ** on the scanning thread, at the slot's first
                              ** use, so that the thread that opens the pipe
                              ** (the engine's) does not fault in every
                              ** slot's pages before it reads an event */
  int bEnd;                   /* the scanner's last answer follows nEv */
  int rc;                     /* that answer (SQLITE_DONE or an error) */
  char *zErr;
} PipeBatch;

struct ProfsumScanPipe {
  ProfsumScan *pScan;
  ProfsumSrc *pSrc;           /* its source (profsumSrcHashSome on waits) */
  const char *zFunc;          /* for messages (static) */
  ProfsumDiagFn xDiag; void *pDiagCtx;   /* the caller's */
  ProfsumStopCheck srcStop;   /* the source's check, asked by the caller */
  int64_t nextStop;           /* byte offset of the next ask */
  int stopped;                /* it said stop */
  int bThread;                /* the scanning thread runs (until Close) */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  PipeBatch aSlot[PIPE_NSLOT];
  int iFill;                  /* the slot the scanning thread fills */
  int iTake;                  /* the slot the caller reads */
  int nReady;                 /* slots handed over, not yet released */
  int bFillWait, bTakeWait;   /* a side waits for the other */
  int stopFlag;               /* the caller closes: stop (atomic) */
  int nomem;                  /* a diagnostic could not be noted */
  unsigned char *aWin[PIPE_NWIN];  /* free windows, for reuse */
  size_t aWinSz[PIPE_NWIN];
  int nWin;
  int bHolding;               /* slot iTake is the caller's */
  int iEv, iDiag;             /* the caller's place in it */
  int finalRc;                /* once the last answer was given: it */
};

/* The scanning thread's source stop check: the caller closes. */
static int pipeStopped(void *pArg){
  return __atomic_load_n(&((ProfsumScanPipe*)pArg)->stopFlag, __ATOMIC_RELAXED);
}

/* Hand slot iFill over and take the next free one (waiting for it).
** 0, or 1 when the caller stops. */
static int pipePublish(ProfsumScanPipe *p){
  int rc = 0;
  pthread_mutex_lock(&p->mu);
  p->nReady++;
  if( p->bTakeWait && p->nReady>=PIPE_WAKE ) pthread_cond_signal(&p->cv);
  p->iFill = (p->iFill + 1) % PIPE_NSLOT;
  while( p->nReady==PIPE_NSLOT && !pipeStopped(p) ){
    int bHashed;
    /* no free batch: a step of the source's hash first, if it has one
    ** waiting (profsumSrcHashSome) */
    pthread_mutex_unlock(&p->mu);
    bHashed = profsumSrcHashSome(p->pSrc);
    pthread_mutex_lock(&p->mu);
    if( bHashed ) continue;
    p->bFillWait = 1;
    pthread_cond_wait(&p->cv, &p->mu);
    p->bFillWait = 0;
  }
  if( pipeStopped(p) ) rc = 1;
  pthread_mutex_unlock(&p->mu);
  return rc;
}

/* Point the scanner at the next event of slot iFill, zeroing the slot at
** its first use (the scanner clears each event but the args spans it did
** not set: those start zero). */
static void pipeTarget(ProfsumScanPipe *p){
  PipeBatch *b = &p->aSlot[p->iFill];
  if( !b->bZeroed ){
    memset(b->aEv, 0, sizeof(ProfsumEvent)*PIPE_BATCH_N);
    memset(b->aArgSet, 0, sizeof(unsigned)*PIPE_BATCH_N);
    b->bZeroed = 1;
  }
  profsumScanSetTarget(p->pScan, &b->aEv[b->nEv], &b->aArgSet[b->nEv]);
}

/* The window swap (ProfsumWindowSwapFn), on the scanning thread: a free
** window of nNew bytes or a new one; aOld goes with the batch being
** filled (handed over first when it holds a window already). */
static unsigned char *pipeSwap(void *pCtx, unsigned char *aOld, size_t nOld,
                               size_t iFrom, size_t nKeep, size_t nNew){
  ProfsumScanPipe *p = (ProfsumScanPipe*)pCtx;
  unsigned char *a = 0;
  PipeBatch *b = &p->aSlot[p->iFill];
  int i;
  if( b->aRetire ){
    if( pipePublish(p) ) return 0;
    /* the entry being parsed is parsed again from its start, in the
    ** next batch */
    b = &p->aSlot[p->iFill];
    pipeTarget(p);
  }
  pthread_mutex_lock(&p->mu);
  for(i=0; i<p->nWin; i++){
    if( p->aWinSz[i]==nNew ){
      a = p->aWin[i];
      p->nWin--;
      p->aWin[i] = p->aWin[p->nWin];
      p->aWinSz[i] = p->aWinSz[p->nWin];
      break;
    }
  }
  pthread_mutex_unlock(&p->mu);
  if( a==0 && (a = sqlite3_malloc64(nNew))==0 ) return 0;
  if( nKeep ) memcpy(a, aOld + iFrom, nKeep);
  b->aRetire = aOld;
  b->nRetire = nOld;
  return a;
}

/* The diagnostic callback on the scanning thread: noted in the batch
** being filled (p->nomem when it cannot be). */
static void pipeDiag(void *pCtx, int64_t idx, int64_t iOffset,
                     const char *zKind, const char *zDetail){
  ProfsumScanPipe *p = (ProfsumScanPipe*)pCtx;
  PipeBatch *b = &p->aSlot[p->iFill];
  PipeDiag *d;
  if( b->nDiag==b->nDiagAlloc ){
    int nNew = b->nDiagAlloc ? b->nDiagAlloc*2 : 16;
    PipeDiag *a = sqlite3_realloc64(b->aDiag, sizeof(PipeDiag)*(size_t)nNew);
    if( a==0 ){ p->nomem = 1; return; }
    b->aDiag = a;
    b->nDiagAlloc = nNew;
  }
  d = &b->aDiag[b->nDiag];
  d->iBefore = b->nEv;
  d->idx = idx;
  d->iOffset = iOffset;
  d->zKind = zKind;
  d->iDetail = -1;
  if( zDetail ){
    int64_t n = (int64_t)strlen(zDetail) + 1;
    if( b->nTxt + n > b->nTxtAlloc ){
      int64_t nNew = (b->nTxt + n)*2 + 256;
      char *a = sqlite3_realloc64(b->aTxt, (sqlite3_uint64)nNew);
      if( a==0 ){ p->nomem = 1; return; }
      b->aTxt = a;
      b->nTxtAlloc = nNew;
    }
    memcpy(b->aTxt + b->nTxt, zDetail, (size_t)n);
    d->iDetail = b->nTxt;
    b->nTxt += n;
  }
  b->nDiag++;
}

/* The scanning thread: events into batches until the scanner's last
** answer, which ends the last batch, or until the caller stops. */
static void *pipeMain(void *pArg){
  ProfsumScanPipe *p = (ProfsumScanPipe*)pArg;
  PipeBatch *b;
  for(;;){
    ProfsumEvent *ev;
    char *zErr = 0;
    int rc;
    pipeTarget(p);
    rc = profsumScanNext(p->pScan, &ev, &zErr);
    if( pipeStopped(p) ){ sqlite3_free(zErr); return 0; }
    b = &p->aSlot[p->iFill];      /* (a refill may have handed one over) */
    if( p->nomem && (rc==SQLITE_ROW || rc==SQLITE_DONE) ){
      /* a diagnostic was lost: the answer is no summary, as without the
      ** pipe (the engine's own diagnostics fail it likewise) */
      rc = SQLITE_NOMEM;
      zErr = sqlite3_mprintf("%s: out of memory for the diagnostics at byte %lld",
                             p->zFunc, (long long)profsumScanBytes(p->pScan));
    }
    if( rc!=SQLITE_ROW ){
      b->bEnd = 1;
      b->rc = rc;
      b->zErr = zErr;
      break;
    }
    b->nEv++;                     /* (ev is &b->aEv[b->nEv]) */
    if( b->nEv==PIPE_BATCH_N && pipePublish(p) ) return 0;
  }
  pthread_mutex_lock(&p->mu);
  p->nReady++;
  if( p->bTakeWait ) pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  return 0;
}

/* See profsum_reader.h. */
int profsumScanPipeWanted(ProfsumScan *pScan){
  const char *zEnv = getenv("PROFSUM_SCAN_PIPE");
  int nCpu;
  if( zEnv && (zEnv[0]=='0' || zEnv[0]=='1') ) return zEnv[0]=='1';
  if( profsumScanBytes(pScan)<PROFSUM_PIPE_PROBE ) return -1;
  nCpu = profsumCpusUsable();
  if( nCpu<2 ) return 0;          /* one core: the threads would take turns */
  return profsumSrcInflateShare(profsumScanSrc(pScan))
         < (nCpu>=3 ? PROFSUM_PIPE_SHARE_MANY : PROFSUM_PIPE_SHARE);
}

/* See profsum_reader.h. */
int profsumScanInflatesWanted(ProfsumScan *pScan){
  const char *zEnv = getenv("PROFSUM_SCAN_INFLATES");
  if( zEnv && (zEnv[0]=='0' || zEnv[0]=='1') ) return zEnv[0]=='1';
  if( profsumCpusUsable()>=3 ) return 0;   /* the inflate thread has a core */
  return profsumSrcInflateShare(profsumScanSrc(pScan)) < PROFSUM_HANDBACK_SHARE;
}

/* Give the scanner back as it was before the pipe (its own window
** refills, event, diagnostics and stop check) and free the pipe's mutex
** and condition: the scanning thread is not running. */
static void pipeUnhook(ProfsumScanPipe *p){
  profsumScanHoldWindows(p->pScan, 0, 0);
  profsumScanTimesLater(p->pScan, 0);
  profsumScanSetTarget(p->pScan, 0, 0);
  profsumScanSetDiag(p->pScan, p->xDiag, p->pDiagCtx);
  profsumSrcSetStop(profsumScanSrc(p->pScan), p->srcStop);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
}

/* See profsum_reader.h. */
int profsumScanPipeOpen(ProfsumScan *pScan, const char *zFunc, ProfsumDiagFn xDiag,
                        void *pDiagCtx, ProfsumScanPipe **pp){
  ProfsumScanPipe *p;
  ProfsumStopCheck mine;
  int i;
  *pp = 0;
  if( !profsumThreadsAllowed() || profsumScanPipeWanted(pScan)!=1 ) return SQLITE_OK;
  p = sqlite3_malloc64(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  memset(p, 0, sizeof(*p));
  for(i=0; i<PIPE_NSLOT; i++){
    PipeBatch *b = &p->aSlot[i];
    b->pEvMem = sqlite3_malloc64(sizeof(ProfsumEvent)*PIPE_BATCH_N + 64);
    b->aArgSet = sqlite3_malloc64(sizeof(unsigned)*PIPE_BATCH_N);
    if( b->pEvMem==0 || b->aArgSet==0 ){
      profsumScanPipeClose(p);
      return SQLITE_NOMEM;
    }
    b->aEv = (ProfsumEvent*)profsumAlign64(b->pEvMem);
  }
  if( pthread_mutex_init(&p->mu, 0) ){ profsumScanPipeClose(p); return SQLITE_OK; }
  if( pthread_cond_init(&p->cv, 0) ){
    pthread_mutex_destroy(&p->mu);
    profsumScanPipeClose(p);
    return SQLITE_OK;
  }
  p->pScan = pScan;
  p->zFunc = zFunc;
  p->xDiag = xDiag;
  p->pDiagCtx = pDiagCtx;
  p->nextStop = PROFSUM_STOP_BYTES;
  mine.xStop = pipeStopped;
  mine.pArg = p;
  p->srcStop = profsumSrcSetStop(profsumScanSrc(pScan), mine);
  profsumScanHoldWindows(pScan, pipeSwap, p);
  profsumScanTimesLater(pScan, 1);      /* made in profsumScanPipeNext */
  if( xDiag ) profsumScanSetDiag(pScan, pipeDiag, p);
  if( profsumScanInflatesWanted(pScan) ) profsumSrcRingEnd(profsumScanSrc(pScan));
  /* the SHA-256 of the raw bytes (an import's) moves off the scanning
  ** thread, to either side's waits (profsumSrcHashSome) */
  p->pSrc = profsumScanSrc(pScan);
  profsumSrcHashBehind(p->pSrc);
  if( pthread_create(&p->thread, 0, pipeMain, p)!=0 ){
    /* no thread: the scanner as it was, read by the caller */
    pipeUnhook(p);
    profsumScanPipeClose(p);
    return SQLITE_OK;
  }
  /* named, for those who look at an import's threads (ps, perf, tests) */
  pthread_setname_np(p->thread, "profsum-scan");
  p->bThread = 1;
  *pp = p;
  return SQLITE_OK;
}

/* The caller's stop check, asked as the source would have: SQLITE_INTERRUPT
** with its message once it said stop, else SQLITE_OK. */
static int pipeAskStop(ProfsumScanPipe *p, char **pzErr){
  if( !p->stopped && p->srcStop.xStop && p->srcStop.xStop(p->srcStop.pArg) ) p->stopped = 1;
  if( !p->stopped ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("%s: interrupted", p->zFunc);
  return SQLITE_INTERRUPT;
}

/* Give slot iTake back to the scanning thread, with its window. */
static void pipeRelease(ProfsumScanPipe *p){
  PipeBatch *b = &p->aSlot[p->iTake];
  unsigned char *aFree = 0;
  b->nEv = 0;
  b->nDiag = 0;
  b->nTxt = 0;
  pthread_mutex_lock(&p->mu);
  if( b->aRetire ){
    if( p->nWin<PIPE_NWIN && b->nRetire<=PIPE_WIN_KEEP ){
      p->aWin[p->nWin] = b->aRetire;
      p->aWinSz[p->nWin++] = b->nRetire;
    }else{
      aFree = b->aRetire;
    }
    b->aRetire = 0;
  }
  p->nReady--;
  p->iTake = (p->iTake + 1) % PIPE_NSLOT;
  if( p->bFillWait && p->nReady<=PIPE_NSLOT-PIPE_WAKE ) pthread_cond_signal(&p->cv);
  pthread_mutex_unlock(&p->mu);
  sqlite3_free(aFree);
  p->bHolding = 0;
}

/* See profsum_reader.h. */
int profsumScanPipeNext(ProfsumScanPipe *p, ProfsumEvent **ppEv, char **pzErr){
  *ppEv = 0;
  if( p->finalRc ) return p->finalRc;
  for(;;){
    PipeBatch *b;
    if( !p->bHolding ){
      int bAsk = 0;
      pthread_mutex_lock(&p->mu);
      while( p->nReady==0 ){
        int bHashed;
        /* nothing to take: a step of the source's hash first, if it
        ** has one waiting (profsumSrcHashSome) */
        pthread_mutex_unlock(&p->mu);
        bHashed = profsumSrcHashSome(p->pSrc);
        pthread_mutex_lock(&p->mu);
        if( bHashed ) continue;
        /* a long wait (a stretch of the file without entries) asks the
        ** stop check every PIPE_ASK_MS */
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += PIPE_ASK_MS*1000000L;
        if( t.tv_nsec>=1000000000L ){ t.tv_sec++; t.tv_nsec -= 1000000000L; }
        p->bTakeWait = 1;
        bAsk = pthread_cond_timedwait(&p->cv, &p->mu, &t)==ETIMEDOUT;
        p->bTakeWait = 0;
        if( bAsk ) break;
      }
      pthread_mutex_unlock(&p->mu);
      if( bAsk ){
        int rc = pipeAskStop(p, pzErr);
        if( rc ) return rc;
        continue;
      }
      p->bHolding = 1;
      p->iEv = p->iDiag = 0;
    }
    b = &p->aSlot[p->iTake];
    while( p->iDiag<b->nDiag && b->aDiag[p->iDiag].iBefore<=p->iEv ){
      const PipeDiag *d = &b->aDiag[p->iDiag++];
      p->xDiag(p->pDiagCtx, d->idx, d->iOffset, d->zKind,
               d->iDetail<0 ? 0 : b->aTxt + d->iDetail);
    }
    if( p->iEv<b->nEv ){
      ProfsumEvent *ev = &b->aEv[p->iEv++];
      if( ev->iOffset>=p->nextStop ){
        int rc;
        p->nextStop = ev->iOffset + PROFSUM_STOP_BYTES;
        if( (rc = pipeAskStop(p, pzErr))!=SQLITE_OK ) return rc;
      }
      if( ev->timesLater ) profsumEventTimes(ev);
      *ppEv = ev;
      return SQLITE_ROW;
    }
    if( b->bEnd ){
      p->finalRc = b->rc;
      *pzErr = b->zErr;
      b->zErr = 0;
      return b->rc;
    }
    pipeRelease(p);
  }
}

/* See profsum_reader.h. */
void profsumScanPipeClose(ProfsumScanPipe *p){
  int i;
  if( p==0 ) return;
  if( p->bThread ){
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->stopFlag, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, 0);
    pipeUnhook(p);
  }
  for(i=0; i<PIPE_NSLOT; i++){
    PipeBatch *b = &p->aSlot[i];
    sqlite3_free(b->pEvMem);
    sqlite3_free(b->aArgSet);
    sqlite3_free(b->aDiag);
    sqlite3_free(b->aTxt);
    sqlite3_free(b->aRetire);
    sqlite3_free(b->zErr);
  }
  for(i=0; i<p->nWin; i++) sqlite3_free(p->aWin[i]);
  sqlite3_free(p);
}
