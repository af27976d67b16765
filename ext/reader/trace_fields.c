/*
** trace_fields.c — the JSON scanner's (trace_json.c) reading of the values
** of pid, tid, ts and dur that its one-pass number readers (jsonlex.h) do
** not take: strings, null, exponents, values out of range, with their
** diagnostics; a ph written with an escape; the top-level
** displayTimeUnit and the other top-level members kept (declared in
** trace_json_int.h); and the values of the
** times the scanning thread left to the reader (profsumEventTimes,
** declared in profsum_reader.h; timelater.h).
*/
#include "profsum_int.h"
#include "cnum.h"
#include "profsum_reader.h"
#include <math.h>
#include "trace_json_int.h"
#include "jsonlex.h"

#include <string.h>

/* Interpret a pid/tid value.  One that is neither an integer, a string
** nor null (true, 1.5, an object) gets a bad_field diagnostic and sets
** ev.typedBadField (the reference's decoder rejects the file for it). */
void profsumScanSetId(ProfsumScan *s, const char *zKey, const ProfsumSpan *v, ProfsumId *pId){
  memset(pId, 0, sizeof(*pId));
  if( v->type==PROFSUM_JT_NUMBER ){
    profsum_ps ps;
    if( profsumParseInt(v->z, v->n, &pId->iVal)==0 ){
      pId->kind = PROFSUM_ID_INT;
      return;
    }
    /* 1.0, 1e3: integral values written as non-integers. */
    if( profsumParseMicros(v->z, v->n, &ps)==0 && ps%1000000==0 ){
      profsum_ps q = ps/1000000;
      if( q>=INT64_MIN && q<=INT64_MAX ){
        pId->kind = PROFSUM_ID_INT;
        pId->iVal = (int64_t)q;
        pId->notJsonInt = 1;
        return;
      }
    }
  }else if( v->type==PROFSUM_JT_STRING ){
    pId->notJsonInt = 1;
    if( !(v->flags & PROFSUM_SF_ESCAPE) && profsumParseInt(v->z, v->n, &pId->iVal)==0 ){
      pId->kind = PROFSUM_ID_INT;
    }else{
      pId->kind = PROFSUM_ID_TEXT;
      pId->s = *v;
    }
    return;
  }else if( v->type==PROFSUM_JT_NULL ){
    pId->kind = PROFSUM_ID_NULL;
    pId->notJsonInt = 1;
    return;
  }
  pId->kind = PROFSUM_ID_NULL;
  if( v->type==PROFSUM_JT_NUMBER ){
    /* an integer literal beyond 64 bits: a pid of no row here, an int for
    ** the reference's decoder (which reads it) */
    int64_t j = (v->n>0 && v->z[0]=='-') ? 1 : 0;
    while( j<v->n && v->z[j]>='0' && v->z[j]<='9' ) j++;
    if( j==v->n && v->n>(v->z[0]=='-') ){
      pId->tooBig = 1;
      if( s->xDiag ){
        char zq[64] = "";
        if( profsumScanDiagWanted(s, "id_out_of_range") ) profsumScanQuote(zq, sizeof(zq), v->z, v->n);
        profsumScanPendDiag(s, "id_out_of_range", "%s: %s is an integer beyond the 64-bit "
                            "range: no value (the reference reads it)", zKey, zq);
      }
      return;
    }
  }
  s->pEv->typedBadField = 1;       /* the reference's pid/tid: int */
  if( s->xDiag ){
    char zq[64] = "";
    if( profsumScanDiagWanted(s, "bad_field") ) profsumScanQuote(zq, sizeof(zq), v->z, v->n);
    profsumScanPendDiag(s, "bad_field", "%s: %s is %s", zKey, zq,
             v->type==PROFSUM_JT_NUMBER ? "a number outside the 64-bit integer range, or not integral"
                                        : "not an integer or a string");
  }
}

/* Set a ts/dur from value v of key zKey, converted by profsumParseMicros
** (its answer rc; *pVal already set when rc >= 0): exact picoseconds, or
** not set (diagnostic; a value that is not a number also sets
** ev.typedBadField, the reference's decoder rejecting the file for it). */
void profsumScanTimeTaken(ProfsumScan *s, const char *zKey, const ProfsumSpan *v, int rc,
                      int *pHas, profsum_ps *pVal, int *pRounded, ProfsumSpan *pText){
  *pHas = 0;
  *pRounded = 0;
  if( rc>=0 ){
    *pHas = 1;
    if( rc==1 ){
      *pRounded = 1;
      spanCopy(pText, v);   /* its double, when needed: profsumTextDouble */
    }
    if( rc==1 && s->xDiag ){
      /* every event of some traces: past the cap of details, only queued */
      if( !s->roundedCapped && !profsumScanDiagWanted(s, "time_rounded") ) s->roundedCapped = 1;
      if( s->roundedCapped ){
        if( s->flags & PROFSUM_SCAN_QUIETROUND ) scanPendQuiet(s);
        else scanPendCapped(s, "time_rounded");
      }else{
        char zq[64];
        profsumScanQuote(zq, sizeof(zq), v->z, v->n);
        profsumScanPendDiag(s, "time_rounded", "%s: %s has more than 6 decimals (µs); "
                 "rounded half-even to a picosecond", zKey, zq);
      }
    }
    if( s->xDiag && zKey[0]=='t' && !profsumPsNsFits(*pVal) ){
      /* exact, but the INTEGER ns column cannot hold it (past the year 2262) */
      char zq[64] = "";
      if( profsumScanDiagWanted(s, "time_out_of_range") ) profsumScanQuote(zq, sizeof(zq), v->z, v->n);
      profsumScanPendDiag(s, "time_out_of_range", "ts: %s µs does not fit a 64-bit integer of ns: "
               "the column ts is NULL (the event keeps its place on its track)", zq);
    }
    return;
  }
  if( v->type==PROFSUM_JT_NUMBER && isfinite(profsumTextDouble(v->z, v->n, NAN)) ){
    /* a number of 1e32 µs or more (10^38 ps, past the exact times) whose
    ** double is finite: the reference reads it, so it is no malformed
    ** field; it has no value here, and the summary leaves its event out */
    s->pEv->timeHuge |= zKey[0]=='t' ? 1 : (v->z[0]=='-' ? 4 : 2);
    if( s->xDiag ){
      char zq[64] = "";
      if( profsumScanDiagWanted(s, "time_out_of_range") ) profsumScanQuote(zq, sizeof(zq), v->z, v->n);
      profsumScanPendDiag(s, "time_out_of_range", "%s: %s µs is beyond the range of exact times "
                          "(1e32 µs): no value", zKey, zq);
    }
    return;
  }
  s->pEv->typedBadField = 1;       /* the reference's ts/dur: float */
  if( s->xDiag ){
    char zq[64] = "";
    if( profsumScanDiagWanted(s, "bad_field") ) profsumScanQuote(zq, sizeof(zq), v->z, v->n);
    profsumScanPendDiag(s, "bad_field", "%s: %s%s%s is not a number", zKey,
             v->type==PROFSUM_JT_STRING ? "\"" : "", zq,
             v->type==PROFSUM_JT_STRING ? "\"" : "");
  }
}

/* Interpret a ts/dur value: exact picoseconds, or not set (diagnostic). */
void profsumScanSetTime(ProfsumScan *s, const char *zKey, const ProfsumSpan *v,
                    int *pHas, profsum_ps *pVal, int *pRounded, ProfsumSpan *pText){
  int rc = -1;
  if( v->type==PROFSUM_JT_NUMBER ){
    rc = profsumParseMicros(v->z, v->n, pVal);
  }else if( v->type==PROFSUM_JT_STRING && !(v->flags & PROFSUM_SF_ESCAPE) ){
    s->pEv->timeNotNumber = 1;
    rc = profsumParseMicros(v->z, v->n, pVal);
  }else if( v->type==PROFSUM_JT_NULL ){
    s->pEv->timeNotNumber = 1;
    *pHas = 0;
    *pRounded = 0;
    return;
  }
  profsumScanTimeTaken(s, zKey, v, rc, pHas, pVal, pRounded, pText);
}

/* Take the value v (at byte iOff) of the top-level displayTimeUnit: the
** last one given counts, as for the reference's decoder, which reads a
** string or null and refuses the file for any other type (read as absent
** here, with a bad_field diagnostic) and for a string whose bytes are not
** UTF-8 (read with U+FFFD here, with an invalid_utf8 diagnostic not tied
** to an entry).  SQLITE_OK, or SQLITE_NOMEM with *pzErr set. */
int profsumScanSetUnit(ProfsumScan *s, const ProfsumSpan *v, int64_t iOff, char **pzErr){
  char *pB = 0; int64_t nB = 0; const char *z; int64_t n;
  sqlite3_free(s->zDisplayTimeUnit);
  s->zDisplayTimeUnit = 0;
  if( v->type!=PROFSUM_JT_STRING ){
    if( v->type!=PROFSUM_JT_NULL && s->xDiag ){
      char zq[64] = "", zD[200];
      profsumScanQuote(zq, sizeof(zq), v->z, v->n);
      sqlite3_snprintf(sizeof(zD), zD, "displayTimeUnit: %s is not a string: read as absent "
                       "(the reference summarizer rejects the file)", zq);
      scanEmitDiag(s, -1, iOff, "bad_field", zD);
    }
    return SQLITE_OK;
  }
  if( (v->flags & PROFSUM_SF_BADUTF8) && s->xDiag ){
    scanEmitDiag(s, -1, iOff, "invalid_utf8", "displayTimeUnit: bytes that are not UTF-8 "
                 "(read as U+FFFD; the reference summarizer rejects the file)");
  }
  if( profsumSpanText(v, &pB, &nB, &z, &n)==SQLITE_OK ){
    s->zDisplayTimeUnit = sqlite3_mprintf("%.*s", (int)(n>64 ? 64 : n), z);
  }
  sqlite3_free(pB);
  if( s->zDisplayTimeUnit==0 ){
    *pzErr = sqlite3_mprintf("%s: '%s': out of memory for the displayTimeUnit at byte %lld",
                             s->zFunc, profsumSrcPath(s->pSrc), (long long)iOff);
    return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* See trace_json_int.h.  A "ph" written with an escape ("\u0058", "\/"):
** a JSON decoder gives the character it stands for, so when that is one
** ASCII character the span becomes it (kept in ev->aPhText, quotes around
** it as around any string span); any other escaped ph decodes to more
** than one byte or to no phase, and stays as it is. */
void profsumScanPhUnescape(ProfsumEvent *ev){
  char a[3*12+1];            /* two escapes' worth: one character is at most 12 */
  if( profsumSpanDecodeInto(&ev->ph, a, sizeof(a))!=1 || (unsigned char)a[0]>=0x80 ) return;
  ev->aPhText[0] = '"';
  ev->aPhText[1] = a[0];
  ev->aPhText[2] = '"';
  ev->aPhText[3] = 0;
  ev->ph.z = ev->aPhText + 1;
  ev->ph.n = 1;
  ev->ph.flags = 0;
}

/* One time of profsumEventTimes: its value *pVal and digits from the
** text at *pSpan, whose runs' lengths *pExp holds (integer digits,
** decimals << 8); the span cleared when the text is not rounded. */
static void eventTime(ProfsumSpan *pSpan, int rounded, profsum_ps *pVal,
                      uint64_t *pDigits, int *pExp){
  const char *z = pSpan->z;
  unsigned ni = (unsigned)*pExp & 0xff, nF = (unsigned)*pExp >> 8;
  int r;
  *pExp = 0;
  profsumMicrosOfRuns(z, ni, nF, z+40, pVal, &r, pDigits, pExp);
  if( !rounded ) memset(pSpan, 0, sizeof(*pSpan));
}

/* See profsum_reader.h.  timeLater (timelater.h) noted the runs' lengths
** in tsExp / durExp. */
void profsumEventTimes(ProfsumEvent *ev){
  if( ev->timesLater & 1 ) eventTime(&ev->tsSpan, ev->tsRounded, &ev->ts, &ev->tsDigits, &ev->tsExp);
  if( ev->timesLater & 2 ) eventTime(&ev->durSpan, ev->durRounded, &ev->dur, &ev->durDigits, &ev->durExp);
  ev->timesLater = 0;
}

/* See trace_json_int.h. */
int profsumScanTopKey(const ProfsumSpan *k, char *zBuf){
  char *pB = 0; int64_t nB = 0; const char *z; int64_t n;
  int r = -1;
  if( k->n>PROFSUM_TOP_KEY_MAX*6 ) return -1;     /* decodes to more than the limit */
  if( profsumSpanText(k, &pB, &nB, &z, &n)!=SQLITE_OK ) return -2;
  if( n<=PROFSUM_TOP_KEY_MAX && memchr(z, 0, (size_t)n)==0 ){
    memcpy(zBuf, z, (size_t)n);
    zBuf[n] = 0;
    r = (int)n;
  }
  sqlite3_free(pB);
  return r;
}

/* See trace_json_int.h.  A key met again takes the new value in its
** place; past PROFSUM_TOP_MAX keys, or for a value over
** PROFSUM_TOP_VAL_MAX bytes, nothing is kept (a repeated key whose new
** value is too long loses its old one too: it is no longer the value). */
int profsumScanKeepTop(ProfsumScan *s, const char *zKey, int nKey, const u8 *z, size_t n, char **pzErr){
  int i;
  char *zVal;
  for(i=0; i<s->nTop && strcmp(s->aTop[i].zKey, zKey)!=0; i++){}
  if( n>PROFSUM_TOP_VAL_MAX ){
    if( i<s->nTop ){
      sqlite3_free(s->aTop[i].zKey); sqlite3_free(s->aTop[i].zVal);
      memmove(&s->aTop[i], &s->aTop[i+1], sizeof(s->aTop[0])*(size_t)(s->nTop-i-1));
      s->nTop--;
    }
    return SQLITE_OK;
  }
  if( i==s->nTop && s->nTop>=PROFSUM_TOP_MAX ) return SQLITE_OK;
  zVal = sqlite3_malloc64(n+1);
  if( zVal==0 ) goto nomem;
  memcpy(zVal, z, n);
  zVal[n] = 0;
  if( i<s->nTop ){
    sqlite3_free(s->aTop[i].zVal);
    s->aTop[i].zVal = zVal;
    s->aTop[i].nVal = (int)n;
    return SQLITE_OK;
  }
  if( s->nTop>=s->nTopAlloc ){
    int nNew = s->nTopAlloc ? s->nTopAlloc*2 : 8;
    void *a = sqlite3_realloc64(s->aTop, sizeof(s->aTop[0])*(sqlite3_uint64)nNew);
    if( a==0 ){ sqlite3_free(zVal); goto nomem; }
    s->aTop = a;
    s->nTopAlloc = nNew;
  }
  s->aTop[s->nTop].zKey = sqlite3_mprintf("%.*s", nKey, zKey);
  if( s->aTop[s->nTop].zKey==0 ){ sqlite3_free(zVal); goto nomem; }
  s->aTop[s->nTop].zVal = zVal;
  s->aTop[s->nTop].nVal = (int)n;
  s->nTop++;
  return SQLITE_OK;
nomem:
  *pzErr = sqlite3_mprintf("%s: '%s': out of memory keeping the top-level member '%s'",
                           s->zFunc, profsumSrcPath(s->pSrc), zKey);
  return SQLITE_NOMEM;
}

/* See trace_json_int.h. */
void profsumScanTopFree(ProfsumScan *s){
  int i;
  for(i=0; i<s->nTop; i++){ sqlite3_free(s->aTop[i].zKey); sqlite3_free(s->aTop[i].zVal); }
  sqlite3_free(s->aTop);
  s->aTop = 0;
  s->nTop = s->nTopAlloc = 0;
}

/* See profsum_reader.h. */
int profsumScanTopCount(ProfsumScan *p){ return p->nTop; }

/* See profsum_reader.h. */
void profsumScanTopAt(ProfsumScan *p, int i, const char **pzKey, const char **pzVal, int *pnVal){
  *pzKey = p->aTop[i].zKey;
  *pzVal = p->aTop[i].zVal;
  *pnVal = p->aTop[i].nVal;
}
