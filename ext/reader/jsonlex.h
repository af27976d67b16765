/*
** jsonlex.h — pieces of the JSON scanner (trace_json.c) that other files
** of the reader share or that are kept out of it to keep it readable,
** inlined where they are used: the length of a UTF-8 sequence (also
** jsonspan.c's), the one-pass scan and conversion of the numbers of
** ts, dur, pid and tid, and the keys the scanner knows.  Return codes: PROFSUM_LEX_OK, PROFSUM_LEX_MORE
** (the text may go on past the window's end: refill and retry), -1 (not
** the shape these read: the general code decides).
*/
#ifndef PROFSUM_JSONLEX_H
#define PROFSUM_JSONLEX_H

#include "profsum_int.h"
#include "profsum_reader.h" /* ProfsumSpan, PROFSUM_AK_*, profsumSpanText */
#include "strindex.h"     /* profsumDigitRun, profsumDigitsValue */

#include <string.h>
#if defined(__SSE2__)
# include <emmintrin.h>   /* profsumDigitMask32 */
#endif

#define PROFSUM_LEX_OK    0
#define PROFSUM_LEX_MORE  1

/* Length of the valid UTF-8 sequence at p (at most e-p bytes available):
** 2..4, 0 when the bytes there are not UTF-8 (a stray continuation byte,
** an overlong form, a surrogate, beyond U+10FFFF, a cut sequence), -1
** when the sequence may continue past e. */
static inline int profsumUtf8Len(const unsigned char *p, const unsigned char *e){
  unsigned char c = p[0];
  int n, i;
  unsigned lo = 0x80, hi = 0xBF;
  if( c>=0xC2 && c<=0xDF ) n = 2;
  else if( c>=0xE0 && c<=0xEF ){
    n = 3;
    if( c==0xE0 ) lo = 0xA0;              /* overlong */
    if( c==0xED ) hi = 0x9F;              /* surrogates */
  }else if( c>=0xF0 && c<=0xF4 ){
    n = 4;
    if( c==0xF0 ) lo = 0x90;              /* overlong */
    if( c==0xF4 ) hi = 0x8F;              /* beyond U+10FFFF */
  }else return 0;
  for(i=1; i<n; i++){
    if( p+i>=e ) return -1;
    if( p[i]<lo || p[i]>hi ) return 0;
    lo = 0x80; hi = 0xBF;
  }
  return n;
}

/* 1 when hex, the four hex digits of a \u escape, name a UTF-16
** surrogate (D800 to DFFF, either case). */
static inline int profsumIsSurrogateHex(const unsigned char *hex){
  return (hex[0]|0x20)=='d' && hex[1]>='8';
}

/* 1 when p[0..e) is all valid UTF-8 (profsumUtf8Len's rule), else 0. */
static inline int profsumUtf8Valid(const unsigned char *p, const unsigned char *e){
  while( p<e ){
    int n;
    if( *p<0x80 ){ p++; continue; }
    n = profsumUtf8Len(p, e);
    if( n<=0 ) return 0;
    p += n;
  }
  return 1;
}

/* A ts or dur written as a JSON number of the common shape
** "[-]d{1,18}[.d+]" (xprof's, Kineto's epoch microseconds), scanned and
** converted in one pass (scanNumber and profsumParseMicros make two):
** PROFSUM_LEX_OK with *ppEnd past it, *pPs and *pRound (1: more than 6
** decimals, rounded half-even; the values profsumParseMicros gives), and
** for a rounded text that is not negative and has at most 19 digits those
** digits as one integer in *pDigits and its power of ten in *pExp (left
** alone otherwise: for profsumDecimalHint); PROFSUM_LEX_MORE when the
** number may go on past e; -1 for any other shape (an exponent, a leading
** zero before a digit, more than 18 integer digits, no digit after '.'):
** the general path scans and converts it then, and reports what is wrong
** with it. */
static inline int profsumLexMicros(const unsigned char *p, const unsigned char *e,
                                   const unsigned char **ppEnd, profsum_ps *pPs,
                                   int *pRound, uint64_t *pDigits, int *pExp){
  static const int64_t aPow[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
  static const uint64_t aP10[13] = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull,
    1000000ull, 10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
    100000000000ull, 1000000000000ull };
  const unsigned char *q = p, *q1;
  uint64_t ip, frac = 0, tail = 0;
  int neg = 0, nf = 0, rd = 0, rest = 0;
  int64_t nFr = 0;
  profsum_ps ps;
  if( *q=='-' ){ neg = 1; q++; }
  q1 = profsumDigitRun16(q, e);
  if( q1>=e ) return PROFSUM_LEX_MORE;
  if( q1==q || q1-q>18 || (*q=='0' && q1-q>1) ) return -1;
  ip = profsumDigitsValueE((const char*)q, q1-q, (const char*)e);
  q = q1;
  if( *q=='.' ){
    const unsigned char *f0 = q+1, *f1 = profsumDigitRun16(q+1, e);
    if( f1>=e ) return PROFSUM_LEX_MORE;
    if( f1==f0 ) return -1;
    nFr = f1 - f0;
    nf = nFr>6 ? 6 : (int)nFr;
    frac = profsumDigitsValueE((const char*)f0, nf, (const char*)e);
    if( nFr>6 ){
      rd = f0[6] - '0';
      if( nFr-7<=19 ){
        /* the digits after the first dropped one: any not 0? (and their
        ** value, for the text's double below) */
        tail = profsumDigitsValueE((const char*)f0+7, nFr-7, (const char*)e);
        rest = tail!=0;
      }else{
        const unsigned char *r;
        for(r=f0+7; r<f1; r++) if( *r!='0' ){ rest = 1; break; }
      }
    }
    q = f1;
  }
  if( *q=='e' || *q=='E' ) return -1;
  if( (rd || rest) && !neg && (q1 - p) + nFr<=19 ){
    /* rounded: all its digits as one integer, for its double
    ** (profsumDecimalHint); nFr - 7 <= 12 here */
    *pDigits = ((ip*1000000 + frac)*10 + (uint64_t)rd)*aP10[nFr-7] + tail;
    *pExp = -(int)nFr;
  }
  ps = (profsum_ps)ip*1000000 + (profsum_ps)(frac*(uint64_t)aPow[nf]);
  /* round half to even on the first dropped digit (as profsumParseMicros) */
  if( rd>5 || (rd==5 && (rest || (ps & 1))) ) ps++;
  *pPs = neg ? -ps : ps;
  *pRound = (rd || rest);
  *ppEnd = q;
  return PROFSUM_LEX_OK;
}

/* The digit bytes among the 32 at p, as bit i for byte i (32 bytes
** readable at p): two 16-byte compares where SSE2 is there, else a test
** of each byte. */
static inline __attribute__((always_inline)) uint32_t profsumDigitMask32(const unsigned char *p){
#if defined(__SSE2__)
  const __m128i k0 = _mm_set1_epi8('0'), k9 = _mm_set1_epi8(9);
  __m128i a = _mm_sub_epi8(_mm_loadu_si128((const __m128i*)p), k0);
  __m128i b = _mm_sub_epi8(_mm_loadu_si128((const __m128i*)(p+16)), k0);
  /* a byte less '0' is a digit when it is at most 9, unsigned */
  a = _mm_cmpeq_epi8(_mm_max_epu8(a, k9), k9);
  b = _mm_cmpeq_epi8(_mm_max_epu8(b, k9), k9);
  return (uint32_t)_mm_movemask_epi8(a) | ((uint32_t)_mm_movemask_epi8(b)<<16);
#else
  uint32_t m = 0;
  int i;
  for(i=0; i<32; i++) m |= (uint32_t)(p[i]>='0' && p[i]<='9')<<i;
  return m;
#endif
}

/* The '0' bytes among the 32 at p, as bit i for byte i (32 bytes
** readable at p). */
static inline __attribute__((always_inline)) uint32_t profsumZeroMask32(const unsigned char *p){
#if defined(__SSE2__)
  const __m128i k0 = _mm_set1_epi8('0');
  __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)p), k0);
  __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i*)(p+16)), k0);
  return (uint32_t)_mm_movemask_epi8(a) | ((uint32_t)_mm_movemask_epi8(b)<<16);
#else
  uint32_t m = 0;
  int i;
  for(i=0; i<32; i++) m |= (uint32_t)(p[i]=='0')<<i;
  return m;
#endif
}

/* The value of a number of the shape profsumLexMicrosFast takes, from
** the lengths of its runs: ni integer digits (1 to 16) at z, a point, nF
** decimals (1 to 23); e is the end of what is readable (at least z+40).
** *pPs and *pRound as profsumLexMicros; *pDigits and *pExp set only for
** a rounded number of at most 19 digits. */
static inline __attribute__((always_inline)) void profsumMicrosOfRuns(
    const char *z, unsigned ni, unsigned nF, const char *e,
    profsum_ps *pPs, int *pRound, uint64_t *pDigits, int *pExp){
  static const uint64_t aP10[17] = { 1ull, 10ull, 100ull, 1000ull, 10000ull,
    100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull };
  uint64_t ip = profsumDigitsValueE(z, ni, e), frac;
  profsum_ps ps;
  if( nF<=6 ){
    static const int64_t aPow[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
    frac = profsumDigits8(z+ni+1, nF);
    *pPs = (profsum_ps)ip*1000000 + (profsum_ps)(frac*(uint64_t)aPow[nF]);
    *pRound = 0;
  }else{
    const char *f7 = z + ni + 8;             /* past the first dropped digit */
    unsigned n2 = nF - 7;
    int rd = z[ni+7] - '0';
    uint64_t tail = profsumDigitsValueE(f7, n2, e);    /* 0 when n2 is 0 */
    frac = profsumDigits8(z+ni+1, 6);
    if( (rd || tail) && ni + nF<=19 ){
      *pDigits = ((ip*1000000 + frac)*10 + (uint64_t)rd)*aP10[n2] + tail;
      *pExp = -(int)nF;
    }
    ps = (profsum_ps)ip*1000000 + (profsum_ps)frac;
    if( rd>5 || (rd==5 && (tail || (ps & 1))) ) ps++;
    *pPs = ps;
    *pRound = (rd || tail);
  }
}

/* profsumLexMicros where 40 bytes are readable at p and the number is
** not negative, in fewer steps: one mask of the digit bytes among the
** first 32 gives the lengths of both digit runs, whose values take one or
** two profsumDigits8 each (profsumDigitsValueE: 16 bytes are readable
** past every run start here).  The same results as profsumLexMicros (its
** contract), which it calls for any other shape: a sign, a run of more
** than 16 integer or 23 decimal digits, a number that does not end within
** the 32 bytes. */
static inline __attribute__((always_inline)) int profsumLexMicrosFast(
    const unsigned char *p, const unsigned char *e, const unsigned char **ppEnd,
    profsum_ps *pPs, int *pRound, uint64_t *pDigits, int *pExp){
  uint32_t d;
  unsigned ni, nF, end;
  if( e-p<40 || *p=='-' ) return profsumLexMicros(p, e, ppEnd, pPs, pRound, pDigits, pExp);
  d = profsumDigitMask32(p);
  ni = (unsigned)__builtin_ctzll(~(uint64_t)d);  /* 32 when all 32 are digits */
  if( ni==0 || ni>16 || (p[0]=='0' && ni>1) ){
    return profsumLexMicros(p, e, ppEnd, pPs, pRound, pDigits, pExp);
  }
  if( p[ni]!='.' ){
    if( p[ni]=='e' || p[ni]=='E' ) return -1;
    *pPs = (profsum_ps)profsumDigitsValueE((const char*)p, ni, (const char*)e)*1000000;
    *pRound = 0;
    *ppEnd = p + ni;
    return PROFSUM_LEX_OK;
  }
  /* the decimals: the bits above them came in as zeros, so ~ ends the run */
  nF = (unsigned)__builtin_ctz(~(d >> (ni+1)));
  end = ni + 1 + nF;
  if( nF==0 || end>=32 || nF>23 ) return profsumLexMicros(p, e, ppEnd, pPs, pRound, pDigits, pExp);
  if( p[end]=='e' || p[end]=='E' ) return -1;
  profsumMicrosOfRuns((const char*)p, ni, nF, (const char*)e, pPs, pRound, pDigits, pExp);
  *ppEnd = p + end;
  return PROFSUM_LEX_OK;
}

/* A pid or tid written as a JSON integer of at most 18 digits, scanned
** and converted in one pass: PROFSUM_LEX_OK with *ppEnd and *pV, PROFSUM_LEX_MORE when it may
** go on past e, -1 for any other shape (the general path decides). */
static inline int profsumLexInt(const unsigned char *p, const unsigned char *e,
                                const unsigned char **ppEnd, int64_t *pV){
  const unsigned char *q = p, *q1;
  int neg = 0;
  uint64_t v;
  if( *q=='-' ){ neg = 1; q++; }
  q1 = profsumDigitRun16(q, e);
  if( q1>=e ) return PROFSUM_LEX_MORE;
  if( q1==q || q1-q>18 || (*q=='0' && q1-q>1) || *q1=='.' || *q1=='e' || *q1=='E' ) return -1;
  v = profsumDigitsValueE((const char*)q, q1-q, (const char*)e);
  *pV = neg ? -(int64_t)v : (int64_t)v;
  *ppEnd = q1;
  return PROFSUM_LEX_OK;
}

/* Compare key k (length n, no escapes) with literal. */
#define KEYIS(k,n,lit) ((n)==(int64_t)sizeof(lit)-1 && memcmp((k),(lit),sizeof(lit)-1)==0)

/* Index of a known args key, or -1. */
static inline int argKeyIndex(const char *k, int64_t n){
  switch( n ){
    case 4:  if( KEYIS(k,n,"name") ) return PROFSUM_AK_NAME; break;
    case 5:  if( KEYIS(k,n,"tf_op") ) return PROFSUM_AK_TF_OP;
             if( KEYIS(k,n,"flops") ) return PROFSUM_AK_FLOPS;
             break;
    case 6:  if( KEYIS(k,n,"hlo_op") ) return PROFSUM_AK_HLO_OP;
             if( KEYIS(k,n,"source") ) return PROFSUM_AK_SOURCE;
             if( KEYIS(k,n,"run_id") ) return PROFSUM_AK_RUN_ID;
             break;
    case 8:  if( KEYIS(k,n,"step_num") ) return PROFSUM_AK_STEP_NUM;
             if( KEYIS(k,n,"group_id") ) return PROFSUM_AK_GROUP_ID;
             break;
    case 9:  if( KEYIS(k,n,"long_name") ) return PROFSUM_AK_LONG_NAME; break;
    case 10: if( KEYIS(k,n,"hlo_module") ) return PROFSUM_AK_HLO_MODULE; break;
    case 11: if( KEYIS(k,n,"model_flops") ) return PROFSUM_AK_MODEL_FLOPS; break;
    case 12: if( KEYIS(k,n,"hlo_category") ) return PROFSUM_AK_HLO_CATEGORY; break;
    case 14: if( KEYIS(k,n,"bytes_accessed") ) return PROFSUM_AK_BYTES_ACCESSED;
             if( KEYIS(k,n,"correlation_id") ) return PROFSUM_AK_CORRELATION_ID;
             if( KEYIS(k,n,"kernel_details") ) return PROFSUM_AK_KERNEL_DETAILS;
             break;
  }
  return -1;
}

/* keyText's escaped case (out of line: rare). */
static __attribute__((noinline, unused)) const char *keyTextEsc(const ProfsumSpan *k, char *zBuf, int nBuf, int64_t *pn){
  if( (k->flags & PROFSUM_SF_ESCAPE) && k->n < nBuf ){
    char *pB = 0;
    int64_t nB = 0;
    const char *z;
    int64_t n;
    if( profsumSpanText(k, &pB, &nB, &z, &n)==SQLITE_OK && n<nBuf ){
      memcpy(zBuf, z, (size_t)n);
      sqlite3_free(pB);
      *pn = n;
      return zBuf;
    }
    sqlite3_free(pB);
  }
  *pn = k->n;
  return k->z;
}

/* Resolve a key span that may contain escapes into plain bytes.  Returns
** the key text (possibly zBuf) and its length in *pn; keys longer than the
** buffer are returned undecoded (they match no known key anyway). */
static inline const char *keyText(const ProfsumSpan *k, char *zBuf, int nBuf, int64_t *pn){
  if( !(k->flags & PROFSUM_SF_ESCAPE) ){ *pn = k->n; return k->z; }
  return keyTextEsc(k, zBuf, nBuf, pn);
}

#endif /* PROFSUM_JSONLEX_H */
