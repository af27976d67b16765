/*
** trace_diag.c — the diagnostics of the JSON scanner (trace_json.c): those
** of an entry are held back until it parsed completely (an entry that
** straddles a window refill is parsed twice), counted per kind, their
** details formatted up to a cap per kind (every one with
** PROFSUM_SCAN_ALLDETAILS); the syntax error message and the diagnostic
** of a top-level object without traceEvents.  See trace_json_int.h.
*/
#include "trace_json_int.h"

#include <stdarg.h>

/* Queue a diagnostic for the entry being parsed (emitted once it parsed).
** Beyond PROFSUM_DIAG_DETAIL_CAP of a kind the detail is not formatted
** (unless PROFSUM_SCAN_ALLDETAILS). */
void profsumScanPendDiag(ProfsumScan *s, const char *zKind, const char *zFmt, ...){
  va_list ap;
  PendingDiag *d;
  int k;
  if( s->xDiag==0 ) return;
  if( s->nPending + s->nQuietPend>=PROFSUM_MAX_PENDING ){ s->nPendingLost++; return; }
  d = &s->aPending[s->nPending++];
  d->zKind = zKind;
  for(k=0; k<s->nKindSeen; k++){
    if( s->aKindSeen[k].zKind==zKind || strcmp(s->aKindSeen[k].zKind, zKind)==0 ) break;
  }
  if( k==s->nKindSeen && k<(int)(sizeof(s->aKindSeen)/sizeof(s->aKindSeen[0])) ){
    s->aKindSeen[k].zKind = zKind;
    s->aKindSeen[k].n = 0;
    s->nKindSeen++;
  }
  /* Counted when emitted (profsumScanFlushDiag): an entry re-parsed after a refill
  ** queues its diagnostics again.  Those of this entry queued so far count
  ** toward the cap too. */
  if( k<s->nKindSeen && !(s->flags & PROFSUM_SCAN_ALLDETAILS) ){
    int64_t n = s->aKindSeen[k].n;
    int j;
    for(j=0; j<s->nPending-1; j++){
      if( s->aPending[j].zKind==zKind || strcmp(s->aPending[j].zKind, zKind)==0 ) n++;
    }
    if( n >= PROFSUM_DIAG_DETAIL_CAP ){
      d->hasDetail = 0;
      return;
    }
  }
  d->hasDetail = 1;
  va_start(ap, zFmt);
  sqlite3_vsnprintf((int)sizeof(d->zDetail), d->zDetail, zFmt, ap);
  va_end(ap);
}

/* Would a diagnostic of this kind still get its detail formatted?  (Used
** to skip costly preparation of details past the cap.)  Always 1 with
** PROFSUM_SCAN_ALLDETAILS, so that time_rounded never goes quiet. */
int profsumScanDiagWanted(ProfsumScan *s, const char *zKind){
  int k;
  if( s->xDiag==0 ) return 0;
  if( s->flags & PROFSUM_SCAN_ALLDETAILS ) return 1;
  for(k=0; k<s->nKindSeen; k++){
    if( s->aKindSeen[k].zKind==zKind || strcmp(s->aKindSeen[k].zKind, zKind)==0 ){
      return s->aKindSeen[k].n < PROFSUM_DIAG_DETAIL_CAP;
    }
  }
  return 1;
}

/* Emit the queued diagnostics of the entry idx at iOffset. */
void profsumScanFlushDiag(ProfsumScan *s, int64_t idx, int64_t iOffset){
  int i;
  if( s->xDiag==0 ) return;
  for(i=0; i<s->nPending; i++){
    int k;
    for(k=0; k<s->nKindSeen; k++){
      if( s->aKindSeen[k].zKind==s->aPending[i].zKind
       || strcmp(s->aKindSeen[k].zKind, s->aPending[i].zKind)==0 ){
        s->aKindSeen[k].n++;
        break;
      }
    }
    s->xDiag(s->pDiagCtx, idx, iOffset, s->aPending[i].zKind,
             s->aPending[i].hasDetail ? s->aPending[i].zDetail : 0);
  }
  if( s->nPendingLost ){
    char z[80];
    sqlite3_snprintf(sizeof(z), z, "%d more diagnostics for this entry not listed",
                     s->nPendingLost);
    s->xDiag(s->pDiagCtx, idx, iOffset, "more_diagnostics", z);
  }
  s->nPending = 0;
  s->nPendingLost = 0;
}

/* Quote up to 40 bytes of a value for a diagnostic detail. */
void profsumScanQuote(char *zOut, int nOut, const char *z, int64_t n){
  int k = n>40 ? 40 : (int)n;
  sqlite3_snprintf(nOut, zOut, "%.*s%s", k, z, n>40 ? "..." : "");
}


/* See trace_json_int.h. */
int profsumScanSyntaxError(ProfsumScan *s, char **pzErr){
  int64_t off = s->iBase + (s->pErrAt - s->aBuf);
  *pzErr = sqlite3_mprintf("%s: '%s': JSON syntax error at byte %lld (entry %lld): %s",
      s->zFunc, profsumSrcPath(s->pSrc), (long long)off, (long long)s->nEntries,
      s->zErrWhy);
  return SQLITE_ERROR;
}

/* See trace_json_int.h. */
void profsumScanNoEventsDiag(ProfsumScan *s){
  if( s->seenEvents ) return;
  scanEmitDiag(s, -1, s->iBase + (int64_t)s->iPos, "no_trace_events",
           "the top-level object has no \"traceEvents\" array (absent or null): no events");
}
