/*
** timelater.h — a ts or dur whose value the scanning thread leaves to the
** reader on the other side of the pipe (profsumScanTimesLater, scanpipe.c).
**
** With the pipe, the scanning thread is the slower of the two sides (it
** inflates and tokenizes; the engine's side waits for it a fifth of the
** read), so the part of a time's conversion that needs no decision is moved
** across: the scanner finds the number's end and the lengths of its digit
** runs, decides whether it is rounded (a digit past the sixth decimal
** that is not 0) and queues the diagnostics as it would have; the value,
** and the digits its double is made from, are made by profsumEventTimes
** (trace_fields.c) when the reader takes the event.  Both sides use the
** same conversion (profsumMicrosOfRuns, jsonlex.h), so the bits are the
** same as one thread's.  The text stays readable that long: its window
** goes with the batch (profsumScanHoldWindows).
**
** Included by trace_json.c only (its numberMember and applyMember).
*/
#ifndef PROFSUM_TIMELATER_H
#define PROFSUM_TIMELATER_H

#include "jsonlex.h"
#include "trace_json_int.h"

/* numberMember's ts (isTs) or dur at p, left for the reader's side
** (profsumScanTimesLater): when the number has the common shape (1 to 15
** integer digits without a leading 0, a point, 1 to 23 decimals, all
** within the 32 bytes at p, 40 readable) and its diagnostics need no
** value (not rounded, or a time_rounded past its cap, only counted), the
** event gets what timeTaken would give it but the value and its digits
** (the span, with bit 1 or 2 of timesLater; profsumEventTimes makes
** them) and 1 is returned with *ppEnd past the number.  0: the caller
** converts it now.  Fifteen integer digits are below 10^21 ps, where the
** ns column always holds the time. */
static inline int timeLater(ProfsumScan *s, int isTs, const unsigned char *p,
                            const unsigned char *e, const unsigned char **ppEnd){
  ProfsumEvent *ev = s->pEv;
  ProfsumSpan v;
  uint32_t d;
  unsigned ni, nF, end;
  int r = 0;
  if( e-p<40 ) return 0;
  d = profsumDigitMask32(p);
  ni = (unsigned)__builtin_ctzll(~(uint64_t)d);
  if( ni==0 || ni>15 || (p[0]=='0' && ni>1) || p[ni]!='.' ) return 0;
  nF = (unsigned)__builtin_ctz(~(d >> (ni+1)));
  end = ni + 1 + nF;
  if( nF==0 || nF>23 || end>=32 || p[end]=='e' || p[end]=='E' ) return 0;
  if( nF>6 ){
    /* rounded: a digit past the sixth decimal is not 0 */
    uint32_t nz = (d & ~profsumZeroMask32(p)) >> (ni+7);
    r = (nz & ((1u<<(nF-6))-1))!=0;
  }
  if( r && s->xDiag ){
    if( !s->roundedCapped || !(s->flags & PROFSUM_SCAN_QUIETROUND) ) return 0;
    scanPendQuiet(s);
  }
  v.z = (const char*)p;
  v.n = end;
  v.type = PROFSUM_JT_NUMBER;
  v.flags = 0;
  if( isTs ) ev->tsPresent = 1;
  *(isTs ? &ev->hasTs : &ev->hasDur) = 1;
  *(isTs ? &ev->tsRounded : &ev->durRounded) = r;
  spanCopy(isTs ? &ev->tsSpan : &ev->durSpan, &v);
  *(isTs ? &ev->tsDigits : &ev->durDigits) = 0;
  *(isTs ? &ev->tsExp : &ev->durExp) = (int)(ni | nF<<8);   /* (profsumEventTimes) */
  ev->timesLater |= isTs ? 1 : 2;
  *ppEnd = p + end;
  return 1;
}

/* A ts (bit 1) or dur (bit 2) left for later is set again now (a key
** seen twice: the last counts): forget it, and its span as timeLater's
** caller would not have set it. */
static inline void timeNow(ProfsumEvent *ev, int bit){
  if( !(ev->timesLater & bit) ) return;
  ev->timesLater &= ~bit;
  *(bit==1 ? &ev->tsExp : &ev->durExp) = 0;
  if( !(bit==1 ? ev->tsRounded : ev->durRounded) ){
    ProfsumSpan *pSpan = bit==1 ? &ev->tsSpan : &ev->durSpan;
    memset(pSpan, 0, sizeof(*pSpan));
  }
}

#endif /* PROFSUM_TIMELATER_H */
