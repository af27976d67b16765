/*
** scanwin.c — the JSON scanner's window (trace_json.c): its refill, in
** place or, for a reader on another thread, into a new window that a
** swap function supplies (profsumScanHoldWindows); where the events are
** parsed for such a reader (profsumScanSetTarget).  See profsum_reader.h and
** trace_json_int.h for the contracts.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "strindex.h"
#include "trace_json_int.h"

#include <string.h>

/* See profsum_reader.h. */
void profsumScanHoldWindows(ProfsumScan *p, ProfsumWindowSwapFn xSwap, void *pCtx){
  p->xSwap = xSwap;
  p->pSwapCtx = pCtx;
}

/* See profsum_reader.h. */
void profsumScanSetDiag(ProfsumScan *p, ProfsumDiagFn xDiag, void *pCtx){
  p->xDiag = xDiag;
  p->pDiagCtx = pCtx;
}

/* See profsum_reader.h.  (The portable tokenizer keeps converting at once:
** the tests compare its conversion with the fast one's.) */
void profsumScanTimesLater(ProfsumScan *p, int on){
  p->timesLater = on && p->xSwap && p->idx.xClassify;
}

/* See profsum_reader.h. */
void profsumScanSetTarget(ProfsumScan *p, ProfsumEvent *pEv, unsigned *pArgSet){
  /* the mask of the event being left is kept with it; the scanner works
  ** on argSet, in its own struct, for speed */
  if( p->pArgSet ) *p->pArgSet = p->argSet;
  else p->evArgSet = p->argSet;
  if( pEv==0 ){
    p->pEv = &p->ev;
    p->pArgSet = 0;
    p->argSet = p->evArgSet;
  }else{
    p->pEv = pEv;
    p->pArgSet = pArgSet;
    p->argSet = *pArgSet;
  }
}

/* The message of a window that cannot be had (nNew bytes). */
static int windowNomem(ProfsumScan *s, size_t nNew, char **pzErr){
  *pzErr = sqlite3_mprintf("%s: '%s': out of memory for entry %lld at byte %lld "
      "(a window of %lld bytes)", s->zFunc, profsumSrcPath(s->pSrc),
      (long long)s->nEntries, (long long)s->iBase, (long long)nNew);
  return SQLITE_NOMEM;
}

/* See trace_json_int.h. */
int profsumScanRefill(ProfsumScan *s, char **pzErr){
  size_t nNew = s->nAlloc;
  int rc;
  if( s->iPos==0 && s->nBuf==s->nAlloc ){
    /* one entry fills the window: it doubles */
    nNew = s->nAlloc*2;
    if( (int64_t)nNew>PROFSUM_MAX_ENTRY ){
      *pzErr = sqlite3_mprintf("%s: '%s': entry %lld at byte %lld is larger than %lld bytes",
          s->zFunc, profsumSrcPath(s->pSrc), (long long)s->nEntries,
          (long long)s->iBase, (long long)s->nAlloc);
      return SQLITE_TOOBIG;
    }
  }
  if( s->xSwap && (s->iPos>0 || nNew!=s->nAlloc) ){
    /* the events returned point into this window: a new one */
    size_t nKeep = s->nBuf - s->iPos;
    u8 *a = s->xSwap(s->pSwapCtx, s->aBuf, s->nAlloc, s->iPos, nKeep, nNew);
    if( a==0 ) return windowNomem(s, nNew, pzErr);
    s->aBuf = a;
    s->nAlloc = nNew;
    s->iBase += (int64_t)s->iPos;
    s->nBuf = nKeep;
    s->iPos = 0;
  }else{
    if( s->iPos>0 ){
      size_t nKeep = s->nBuf - s->iPos;
      if( nKeep ) memmove(s->aBuf, s->aBuf + s->iPos, nKeep);
      s->iBase += (int64_t)s->iPos;
      s->nBuf = nKeep;
      s->iPos = 0;
    }
    if( nNew!=s->nAlloc ){
      u8 *a = sqlite3_realloc64(s->aBuf, nNew);
      if( a==0 ) return windowNomem(s, nNew, pzErr);
      s->aBuf = a;
      s->nAlloc = nNew;
    }
  }
  while( s->nBuf<s->nAlloc && !s->srcEof ){
    size_t nGot = 0;
    char *zErr = 0;
    rc = profsumSrcRead(s->pSrc, s->aBuf + s->nBuf, s->nAlloc - s->nBuf, &nGot, &zErr);
    if( rc ){
      if( zErr ){
        *pzErr = sqlite3_mprintf("%s: %s", s->zFunc, zErr);
        sqlite3_free(zErr);
      }
      return rc;
    }
    if( nGot==0 ) s->srcEof = 1;
    s->nBuf += nGot;
  }
  if( profsumStrIndexBuild(&s->idx, s->aBuf, s->nBuf, s->nAlloc) ){
    *pzErr = sqlite3_mprintf("%s: '%s': out of memory for the index of a window of %lld bytes",
        s->zFunc, profsumSrcPath(s->pSrc), (long long)s->nAlloc);
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}
