/*
** decnum.c — decimal numbers in trace text, converted exactly: times in
** microseconds to integer picoseconds (rounded half-even beyond 6
** decimals), integers within int64, and the double nearest to a decimal
** text (as strtod and Python's float() give it) without a second parse
** when a hint is right.  Used by the JSON scanner (trace_json.c) and the
** summary engine.
*/
#include "profsum_int.h"
#include "cnum.h"
#include "profsum_reader.h"
#include "strindex.h"      /* profsumDigitRun, profsumDigitsValue */

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char u8;

/* ------------------------------------------------------------------ */
/* Numbers: exact decimal → integer conversions                        */
/* ------------------------------------------------------------------ */

/* Parse the decimal text z[0..n) into digits and a power of ten.  On
** success: *pNeg, aDig[] (without leading zeros, at most nDigMax kept,
** *pSticky set if a nonzero digit was dropped), *pnDig, *pExp10 such that
** value = digits × 10^exp10.  Returns 0, or -1 if not a JSON-like number. */
static int decimalParse(const char *z, int64_t n, int *pNeg, u8 *aDig, int nDigMax,
                        int *pnDig, int64_t *pExp10, int *pSticky){
  int64_t i = 0;
  int nDig = 0, sticky = 0, any = 0;
  int64_t exp10 = 0, nFrac = 0, e = 0;
  int eNeg = 0;
  *pNeg = 0;
  if( i<n && (z[i]=='-' || z[i]=='+') ){ *pNeg = (z[i]=='-'); i++; }
  while( i<n && z[i]>='0' && z[i]<='9' ){
    any = 1;
    if( nDig>0 || z[i]!='0' ){
      if( nDig<nDigMax ) aDig[nDig++] = (u8)(z[i]-'0');
      else{ exp10++; if( z[i]!='0' ) sticky = 1; }
    }
    i++;
  }
  if( i<n && z[i]=='.' ){
    i++;
    while( i<n && z[i]>='0' && z[i]<='9' ){
      any = 1;
      if( nDig>0 || z[i]!='0' ){
        if( nDig<nDigMax ){ aDig[nDig++] = (u8)(z[i]-'0'); nFrac++; }
        else if( z[i]!='0' ) sticky = 1;
      }else{
        nFrac++;
      }
      i++;
    }
  }
  if( !any ) return -1;
  if( i<n && (z[i]=='e' || z[i]=='E') ){
    int anyE = 0;
    i++;
    if( i<n && (z[i]=='+' || z[i]=='-') ){ eNeg = (z[i]=='-'); i++; }
    while( i<n && z[i]>='0' && z[i]<='9' ){
      anyE = 1;
      if( e<100000 ) e = e*10 + (z[i]-'0');
      i++;
    }
    if( !anyE ) return -1;
  }
  if( i!=n ) return -1;
  exp10 += (eNeg ? -e : e) - nFrac;
  *pnDig = nDig;
  *pExp10 = exp10;
  *pSticky = sticky;
  return 0;
}

/* profsumParseMicros() for the common shape, "[-]d{1,18}[.d+]" (what
** xprof writes, and Kineto's 16-digit epoch microseconds): the digits in
** 64-bit integers, without the digit buffer, the picoseconds in 128 bits.
** Returns what profsumParseMicros() returns, or -2 when z has another
** shape (an exponent, a '+', "5.", more than 18 integer digits): the
** general code decides then. */
static int parseMicrosFast(const char *z, int64_t n, profsum_ps *pOut){
  static const int64_t aPow[7] = {1000000, 100000, 10000, 1000, 100, 10, 1};
  int64_t i = 0, iStart, ip, frac = 0;
  profsum_ps ps;
  int neg = 0, nf = 0, rd = 0, rest = 0;
  if( i<n && z[i]=='-' ){ neg = 1; i++; }
  iStart = i;
  ip = 0;
  while( i<n && z[i]>='0' && z[i]<='9' ){
    if( i-iStart>=18 ) return -2;
    ip = ip*10 + (z[i]-'0');
    i++;
  }
  if( i==iStart ) return -2;
  if( i<n && z[i]=='.' ){
    int64_t iFrac = ++i;
    while( i<n && nf<6 && z[i]>='0' && z[i]<='9' ){ frac = frac*10 + (z[i]-'0'); nf++; i++; }
    if( i==iFrac ) return -2;
    if( i<n && z[i]>='0' && z[i]<='9' ){
      rd = z[i++]-'0';
      while( i<n && z[i]>='0' && z[i]<='9' ){ if( z[i]!='0' ) rest = 1; i++; }
    }
  }
  if( i!=n ) return -2;
  ps = (profsum_ps)ip*1000000 + frac*aPow[nf];
  /* Round half to even on the first dropped digit (as the general code). */
  if( rd>5 || (rd==5 && (rest || (ps & 1))) ) ps++;
  *pOut = neg ? -ps : ps;
  return (rd || rest) ? 1 : 0;
}

/* See profsum_reader.h. */
int profsumParseMicros(const char *z, int64_t n, profsum_ps *pOut){
  u8 aDig[48];
  int neg, nDig, sticky, i, inexact = 0;
  int64_t exp10, nInt;
  profsum_ps v = 0;
  int rcFast = parseMicrosFast(z, n, pOut);
  if( rcFast!=-2 ) return rcFast;
  if( decimalParse(z, n, &neg, aDig, 48, &nDig, &exp10, &sticky) ) return -1;
  exp10 += 6;                        /* µs → ps */
  nInt = nDig + exp10;               /* digits that form the integer part */
  if( nDig==0 ){ *pOut = 0; return sticky ? 1 : 0; }
  if( nInt>38 ) return -1;           /* beyond int128: not a time */
  for(i=0; i<nDig && i<nInt; i++) v = v*10 + aDig[i];
  for(; i<nInt; i++) v = v*10;       /* exp10 > 0: append zeros */
  if( nInt<nDig ){
    /* Round half-even at digit index nInt (if nInt<0 the value is < 0.1). */
    int64_t r = nInt;
    int rd = r>=0 ? aDig[r] : 0;
    int rest = sticky;
    int64_t k;
    for(k = (r>=0 ? r+1 : 0); k<nDig; k++) if( aDig[k] ){ rest = 1; break; }
    if( r<0 ){ rest = 1; rd = 0; }
    if( rd>5 || (rd==5 && (rest || (v & 1))) ) v += 1;
    if( rd || rest ) inexact = 1;
  }else if( sticky ){
    inexact = 1;
  }
  *pOut = neg ? -v : v;
  return inexact;
}

/* See profsum_reader.h. */
int profsumParseInt(const char *z, int64_t n, int64_t *pOut){
  int64_t i = 0;
  int neg = 0;
  uint64_t v = 0;
  if( n<=0 ) return -1;
  if( z[0]=='-' ){ neg = 1; i = 1; }
  if( i>=n ) return -1;
  if( n-i<=18 ){
    /* below 10^18: no overflow to test for; the digits checked eight at
    ** a time and converted as the scanner converts them (strindex.h) */
    if( profsumDigitRun((const unsigned char*)z+i, (const unsigned char*)z+n)
        !=(const unsigned char*)z+n ) return -1;
    v = profsumDigitsValue(0, z+i, n-i);
    *pOut = neg ? -(int64_t)v : (int64_t)v;
    return 0;
  }
  for(; i<n; i++){
    unsigned d;
    if( z[i]<'0' || z[i]>'9' ) return -1;
    d = (unsigned)(z[i]-'0');
    if( v > (UINT64_C(0x8000000000000000) - d)/10 ) return -1;
    v = v*10 + d;
  }
  if( !neg && v>(uint64_t)INT64_MAX ) return -1;
  *pOut = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

/* See profsum_reader.h.  X > 0 carries a relative error of at most
** 2^-63 (two roundings in extended precision); the double nearest to X is
** then the double nearest to the exact value unless X lies within 2^-62
** (relative) of a midpoint between two doubles. */
int profsumLdToDouble(long double X, double *pOut){
#if defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__>=64
  double r = (double)X;
  uint64_t bits;
  int E;
  memcpy(&bits, &r, sizeof(bits));
  E = (int)((bits>>52) & 0x7ff);
  if( X>0 && E>54 && E<0x7ff ){
    /* half the gap to the neighbours of r (below a power of two the lower
    ** gap is half as wide) */
    uint64_t hb = (uint64_t)(E-53)<<52;
    double hu;
    long double side, d;
    memcpy(&hu, &hb, sizeof(hu));
    side = hu;
    d = X - (long double)r;
    if( d<0 ){
      d = -d;
      if( (bits & (((uint64_t)1<<52)-1))==0 ) side = hu/2;
    }
    if( side - d > X*0x1p-62L ){ *pOut = r; return 1; }
  }
#else
  (void)X; (void)pOut;
#endif
  return 0;
}

/* profsumDecimalHint for w below 10^38 (so w·2^(sh+1) is checked to fit
** 127 bits, and m·10^-k·2 fits for k >= -19).  d = m·2^e; is |w·10^k − d|
** < half the gap around d?  Scaled by 10^-k·2^-e: |2·w·2^-e − 2·m·10^-k|
** < 10^-k (a quarter gap below a power of two).  When not, the double that
** many gaps away on the text's side (the difference over 2·10^-k, rounded:
** a hint made from the text rounded to a picosecond is often a few doubles
** off where the gap is below a picosecond) is tried the same way, then its
** neighbour on the text's side; the answer is only ever a double whose
** interval holds the text. */
static inline int decimalHint(unsigned __int128 w, int k, int neg, double dHint,
                              double *pOut){
  static const uint64_t aU10[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull,
    100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull };
  uint64_t bits, wHi = (uint64_t)(w>>64);
  int nbw, iTry;
  double dAbs;
  if( w==0 || k>0 || k<-19 || dHint!=dHint || (dHint<0)!=neg ) return 0;
  nbw = wHi ? 128 - __builtin_clzll(wHi) : 64 - __builtin_clzll((uint64_t)w);
  dAbs = dHint<0 ? -dHint : dHint;
  memcpy(&bits, &dAbs, sizeof(bits));
  for(iTry=0; iTry<3; iTry++){
    uint64_t m = (bits & (((uint64_t)1<<52)-1)) | ((uint64_t)1<<52);
    int E = (int)(bits>>52), sh = 1075 - E;   /* d = m·2^-sh */
    unsigned __int128 A2, B2, P;
    int bPow2, inside;
    if( !(E>0 && E<0x7ff && sh>=0 && nbw + sh + 1 <= 127) ) break;
    A2 = w << (sh+1);
    B2 = (unsigned __int128)m * aU10[-k] * 2;
    P = aU10[-k];
    bPow2 = (bits & (((uint64_t)1<<52)-1))==0 && E>1;
    inside = A2>=B2 ? A2-B2 < P : (bPow2 ? (B2-A2)*2 < P : B2-A2 < P);
    if( inside ){
      double r;
      memcpy(&r, &bits, sizeof(r));
      *pOut = neg ? -r : r;
      return 1;
    }
    if( iTry==0 ){
      /* |text| − d in gaps of d, rounded (at least one, at most 2^20) */
      unsigned __int128 D = A2>=B2 ? A2-B2 : B2-A2;
      unsigned __int128 j = (D + P)/(2*P);
      if( j==0 ) j = 1;
      if( j>((unsigned __int128)1<<20) ) break;
      if( A2>=B2 ) bits += (uint64_t)j; else bits -= (uint64_t)j;
    }else{
      if( A2>=B2 ) bits++; else bits--;   /* |text| above d, or below */
    }
  }
  return 0;
}

/* See profsum_reader.h. */
int profsumDecimalHint(uint64_t w, int k, int neg, double dHint, double *pOut){
  return decimalHint(w, k, neg, dHint, pOut);
}

/* w·10^n + the value of the n decimal digits at p, in 128 bits (the
** result must stay below 2^128): 19 digits a step. */
static unsigned __int128 digitsValue128(unsigned __int128 w, const char *p, int64_t n){
  static const uint64_t aP10[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull,
    100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull };
  while( n>0 ){
    int64_t c = n<19 ? n : 19;
    w = w*aP10[c] + profsumDigitsValue(0, p, c);
    p += c; n -= c;
  }
  return w;
}

/* The nearest double to the decimal text z[0..n) (correctly rounded, as
** strtod and Python's float() of the same text).  The summary decides
** nesting and gaps on the doubles the reference sees (summary_engine.c,
** "Float decisions"), and converted XPlanes write 17-digit times, so this
** runs for most events of such traces.  dHint is a guess (the double of
** the text rounded to a picosecond: usually the answer), NAN for none.
** The digits are read as an integer w (leading zeros skipped, so
** "0.00060000000000000001" has 17) and the text is w·10^k:
**   1. up to 38 significant digits and at most 19 decimals (less any
**      exponent): when the text lies strictly within dHint's rounding
**      interval, by exact 128-bit integer comparison, the answer is dHint
**      (no division); or the double a few gaps away that the comparison
**      points to;
**   2. a decimal exponent within ±22 (Clinger, when the digits fit 53
**      bits) or ±27 (x87 extended precision: w to long double, one
**      rounding beyond 64 bits, then the power of ten, one rounding; then
**      to double unless within 2^-62 of a midpoint);
**   3. strtod (more than 38 digits, an exponent beyond these, a text
**      near a midpoint, or no x87 long double).
** Times of 20 digits and more are common enough (a trace of µs since an
** epoch, or a long capture, written with 10 fixed decimals) that strtod,
** about 20 times slower, showed in whole imports.  tests/decnum_test.c
** compares every step with strtod on several million texts. */
double profsumTextDouble(const char *z, int64_t n, double dHint){
  char zBuf[128];
  char *zHeap = 0, *zUse = zBuf;
  double r;
#if defined(__LDBL_MANT_DIG__) && __LDBL_MANT_DIG__>=64
  {
    static const long double aP10[28] = {
      1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L,
      1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L,
      1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L };
    unsigned __int128 w;
    int64_t i = 0, k = 0, i0, nInt, f0 = 0, nFrac = 0, nSig;
    int neg = 0, kHint;
    if( i<n && (z[i]=='-' || z[i]=='+') ){ neg = z[i]=='-'; i++; }
    i0 = i;
    i = (const u8*)profsumDigitRun((const u8*)z+i, (const u8*)z+n) - (const u8*)z;
    nInt = i - i0;
    if( i<n && z[i]=='.' ){
      f0 = ++i;
      i = (const u8*)profsumDigitRun((const u8*)z+i, (const u8*)z+n) - (const u8*)z;
      nFrac = i - f0;
    }
    if( nInt+nFrac==0 ) goto slow;
    k = -nFrac;
    if( i<n && (z[i]=='e' || z[i]=='E') ){
      int eneg = 0, ne = 0;
      int64_t x = 0;
      i++;
      if( i<n && (z[i]=='-' || z[i]=='+') ){ eneg = z[i]=='-'; i++; }
      for(; i<n && z[i]>='0' && z[i]<='9'; i++){
        if( x<100000 ) x = x*10 + (z[i]-'0');
        ne++;
      }
      if( ne==0 ) goto slow;
      k += eneg ? -x : x;
    }
    if( i!=n ) goto slow;
    /* leading zeros add nothing to w */
    while( nInt>0 && z[i0]=='0' ){ i0++; nInt--; }
    if( nInt==0 ) while( nFrac>0 && z[f0]=='0' ){ f0++; nFrac--; }
    nSig = nInt + nFrac;
    if( nSig==0 ) return neg ? -0.0 : 0.0;
    kHint = (int)(k<-100 ? -100 : k>100 ? 100 : k);
    if( nSig<=19 ){
      uint64_t w64 = profsumDigitsValue(profsumDigitsValue(0, z+i0, nInt), z+f0, nFrac);
      if( decimalHint(w64, kHint, neg, dHint, &r) ) return r;
      if( w64<=((uint64_t)1<<53) && k>=-22 && k<=0 ){
        /* Clinger: w and 10^-k are exact doubles, one division rounds */
        static const double aD10[23] = {
          1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
          1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
        r = (double)w64 / aD10[-k];
        return neg ? -r : r;
      }
      w = w64;
    }else if( nSig<=38 ){
      w = digitsValue128(digitsValue128(0, z+i0, nInt), z+f0, nFrac);
      if( decimalHint(w, kHint, neg, dHint, &r) ) return r;
    }else{
      goto slow;
    }
    if( k>=-27 && k<=27 ){
      long double X = (long double)w;
      X = k<0 ? X / aP10[-k] : X * aP10[k];
      if( profsumLdToDouble(X, &r) ) return neg ? -r : r;
    }
  }
slow:
#endif
  if( n>=(int64_t)sizeof(zBuf) ){
    zHeap = sqlite3_malloc64((sqlite3_uint64)n+1);
    if( zHeap==0 ) n = sizeof(zBuf)-1;   /* out of memory: a prefix */
    else zUse = zHeap;
  }
  memcpy(zUse, z, (size_t)n);
  zUse[n] = 0;
  r = profsumStrtod(zUse, 0);
  sqlite3_free(zHeap);
  return r;
}
