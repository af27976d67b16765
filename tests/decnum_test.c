/*
** tests/decnum_test.c — differential tests of profsumTextDouble and
** profsumDecimalHint (ext/reader/decnum.c), the double nearest to a
** decimal text, against the C library's strtod.  Built with
** AddressSanitizer and UBSan by `make build/decnum_test` (run by
** tests/test_decnum.py in `make test`).
**
**   build/decnum_test          one line per check, then "N passed, N failed";
**                              exit 1 on any failure
**
** This file stands in for profsumStrtod (ext/util/cnum.c) with a counting
** strtod, so that a check can also say how many texts took the slow path.
** The checks, each over many texts made by a fixed pseudo-random sequence
** (a text without a hint may go to strtod when it lies within 2^-62 of a
** midpoint, about one in 250 of random digits, hence the bounds):
**   - %.17g texts of doubles of trace-like magnitudes (as converted XPlanes
**     write them), with the right hint and with none;
**   - times with 7 to 22 fixed decimals, 20 to 32 digits in all, with the
**     hint an import gives (the double of the time rounded to a
**     picosecond) and with none: equal to strtod, and never strtod's
**     work (the fast path of 20 to 38 digits);
**   - digit strings of any length to 45 (leading zeros, with and without
**     a fraction and an exponent), with hints that are right, a few
**     doubles off, far off, of the other sign, or none;
**   - texts within a few units of their last digit of a midpoint between
**     two doubles, 17 to 40 digits: the slow path's cases;
**   - fixed texts: zeros, signs, exponents out of range, subnormals, 38,
**     39 and 60 digits;
**   - profsumDecimalHint alone: 1 only with the nearest double.
*/
#include "profsum_int.h"
#include "cnum.h"
#include "profsum_reader.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nPass = 0, nFail = 0;
static long nSlow = 0;        /* calls of the stand-in strtod */

/* The stand-in for ext/util/cnum.c's: counts, then the C library's (this
** program never sets a locale, so "C" reads '.'). */
double profsumStrtod(const char *z, char **pzEnd){
  nSlow++;
  return strtod(z, pzEnd);
}

static void check(int ok, const char *zWhat){
  printf("%s %s\n", ok ? "ok  " : "FAIL", zWhat);
  if( ok ) nPass++; else nFail++;
}

static uint64_t rngState = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void){
  uint64_t x = rngState;
  x ^= x<<13; x ^= x>>7; x ^= x<<17;
  return rngState = x;
}
static double rndUnit(void){ return (double)(rnd()>>11) * 0x1p-53; }

/* bitwise equality (a -0.0 is not a 0.0) */
static int sameBits(double a, double b){ return memcmp(&a, &b, sizeof(a))==0; }

/* The text z (NUL-terminated) through profsumTextDouble with hint h, from
** an allocation of exactly its length (a read past it is an ASan error);
** compared with strtod.  Returns 1 when equal, else prints the first few
** differences. */
static int oneText(const char *z, double h, int *pnShown){
  size_t n = strlen(z);
  char *a = malloc(n ? n : 1);
  double got, want = strtod(z, 0);
  if( a==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
  memcpy(a, z, n);
  got = profsumTextDouble(a, (int64_t)n, h);
  free(a);
  if( sameBits(got, want) ) return 1;
  if( (*pnShown)++ < 5 ){
    printf("  '%s' hint %.17g: %.17g, strtod %.17g\n", z, h, got, want);
  }
  return 0;
}

/* A hint like the import's: the double of the time rounded to a whole
** picosecond (the value in µs, six decimals). */
static double psHint(const char *z){
  long double v = strtold(z, 0);
  return (double)(roundl(v*1e6L)/1e6L);
}

static void checkCount(const char *zWhat, long nTexts, long nBad, long nSlowHere,
                       long nSlowMax){
  char zMsg[300];
  snprintf(zMsg, sizeof(zMsg), "%s: %ld texts, %ld differ from strtod, %ld by strtod (at most %ld)",
           zWhat, nTexts, nBad, nSlowHere, nSlowMax);
  check(nBad==0 && nSlowHere<=nSlowMax, zMsg);
}

/* %.17g of doubles of magnitudes 1e-9 to 1e16 (trace times and spans). */
static void checkShortest(void){
  char z[64];
  long i, nBad = 0, s0 = nSlow, N = 400000;
  int nShown = 0;
  for(i=0; i<N; i++){
    double x = rndUnit() * pow(10.0, (double)(rnd()%26) - 9.0);
    if( rnd()&1 ) x = -x;
    snprintf(z, sizeof(z), "%.17g", x);
    if( !oneText(z, (i&1) ? x : NAN, &nShown) ) nBad++;
  }
  checkCount("%.17g texts, right hint or none", N, nBad, nSlow - s0, N/1000);
}

/* Times with nd fixed decimals (7..22): 20 to 32 digits in all when the
** integer part is large, as a long capture or an epoch-based clock writes
** them.  These must not go to strtod (apart from near-midpoint ones). */
static void checkFixed(void){
  char z[80];
  long i, nBad = 0, s0 = nSlow, N = 400000, nLong = 0;
  int nShown = 0;
  for(i=0; i<N; i++){
    int nd = 7 + (int)(rnd()%16), ni = 1 + (int)(rnd()%12), j, p = 0;
    /* digits written out: no binary value behind them */
    z[p++] = (char)('1' + rnd()%9);
    for(j=1; j<ni; j++) z[p++] = (char)('0' + rnd()%10);
    z[p++] = '.';
    for(j=0; j<nd; j++) z[p++] = (char)('0' + rnd()%10);
    z[p] = 0;
    if( ni + nd>19 ) nLong++;
    if( !oneText(z, (i%3)==2 ? NAN : psHint(z), &nShown) ) nBad++;
  }
  checkCount("times with 7 to 22 decimals (ps hint or none)", N, nBad, nSlow - s0, N/200);
  check(nLong > N/3, "  ... of which over a third have more than 19 digits");
}

/* Digit strings of 1 to 45 digits, leading zeros, fraction and exponent
** optional, with hints right, near, far, of the other sign, or none. */
static void checkDigits(void){
  char z[120];
  long i, nBad = 0, s0 = nSlow, N = 600000, nSlowMax;
  int nShown = 0;
  for(i=0; i<N; i++){
    int p = 0, j, nz = (int)(rnd()%4), ni = (int)(rnd()%20), nf = (int)(rnd()%26);
    double want, h;
    if( rnd()%4==0 ) z[p++] = '-';
    for(j=0; j<nz; j++) z[p++] = '0';
    for(j=0; j<ni; j++) z[p++] = (char)('0' + rnd()%10);
    if( nz + ni==0 ) z[p++] = '0';
    if( nf>0 ){
      z[p++] = '.';
      if( rnd()%3==0 ){ int l = (int)(rnd()%6); while( l-- && nf>1 ){ z[p++] = '0'; nf--; } }
      for(j=0; j<nf; j++) z[p++] = (char)('0' + rnd()%10);
    }
    if( rnd()%5==0 ) p += snprintf(z+p, 12, "e%d", (int)(rnd()%61) - 30);
    z[p] = 0;
    want = strtod(z, 0);
    switch( rnd()%6 ){
      case 0: h = NAN; break;
      case 1: h = want; break;
      case 2: h = nextafter(want, INFINITY); break;
      case 3: { uint64_t b; memcpy(&b, &want, 8); b += (uint64_t)((int64_t)(rnd()%9) - 4); memcpy(&h, &b, 8); break; }
      case 4: h = want*1.5 + 1.0; break;
      default: h = -want; break;
    }
    if( !oneText(z, h, &nShown) ) nBad++;
  }
  /* texts of 39 digits and more, and exponents beyond ±27, go to strtod */
  nSlowMax = N/4;
  checkCount("digit strings to 45 digits, any hint", N, nBad, nSlow - s0, nSlowMax);
}

/* Texts within a few units of their last digit of the midpoint between a
** double and the next: 17 to 40 significant digits. */
static void checkMidpoints(void){
  char zFull[128], z[128];
  long i, nBad = 0, N = 200000, s0 = nSlow;
  int nShown = 0;
  for(i=0; i<N; i++){
    double d = rndUnit() * pow(10.0, (double)(rnd()%20) - 6.0), u = nextafter(d, INFINITY);
    long double mid = ((long double)d + (long double)u)/2;   /* exact: 54 bits */
    int nSig = 17 + (int)(rnd()%24), p, q = 0, nDig = 0, last = -1;
    snprintf(zFull, sizeof(zFull), "%.45Le", mid);
    /* keep nSig significant digits of the mantissa, then move the last
    ** one by -2..+2 (without carrying) */
    for(p=0; zFull[p] && zFull[p]!='e'; p++){
      if( zFull[p]=='.' ){ z[q++] = '.'; continue; }
      if( nDig<nSig ){ z[q++] = zFull[p]; last = q-1; nDig++; }
    }
    if( last>=0 ){
      int v = z[last] - '0' + (int)(rnd()%5) - 2;
      if( v>=0 && v<=9 ) z[last] = (char)('0' + v);
    }
    snprintf(z+q, sizeof(z)-(size_t)q, "%s", zFull+p);
    if( !oneText(z, (i&1) ? d : NAN, &nShown) ) nBad++;
  }
  checkCount("near midpoints, 17 to 40 digits", N, nBad, nSlow - s0, N);
  check(nSlow - s0 > N/10, "  ... of which over a tenth were left to strtod (the slow path ran)");
}

/* Fixed texts at the edges. */
static void checkEdges(void){
  static const char *azText[] = {
    "0", "-0", "0.0", "-0.000000000000000000000000", "000", "0e10", "-0e-10",
    "00012.5", "0.00060000000000000001", "0.000000000000000000000000000001",
    "1e400", "-1e400", "1e-400", "4.9406564584124654e-324",
    "2.2250738585072011e-308", "2.2250738585072014e-308",
    "1.7976931348623157e308", "1.7976931348623159e308",
    "99999999999999999999999999999999999999",            /* 38 nines */
    "999999999999999999999999999999999999999",           /* 39 */
    "123456789012345678901234567890123456789012345678901234567890",
    "1006228725.0000000630", "1006228726.9530000631", "9609447.4860000005",
    "18446744073709551615", "18446744073709551616", "9007199254740993",
    "0.1", "1.5", "1e23", "8.589973e9", "1e-5", "12345678901234567890e-30",
    "1234567890.1234567890123456789", "+3.25", "-17.000000000000000001",
    "1.", ".5", "-.5", "1e", "1e+", ".", "-", "", "e5", "1x",
  };
  size_t i;
  int nShown = 0;
  long nBad = 0;
  for(i=0; i<sizeof(azText)/sizeof(azText[0]); i++){
    double want = strtod(azText[i], 0);
    if( !oneText(azText[i], NAN, &nShown) ) nBad++;
    if( isfinite(want) && !oneText(azText[i], want, &nShown) ) nBad++;
  }
  check(nBad==0, "edge texts (zeros, signs, out of range, subnormals, 38+ digits, not numbers)");
}

/* Whether w·10^-K lies exactly on an end of the rounding interval of the
** double d (a tie, which strtod breaks to even and profsumDecimalHint
** leaves to its caller), by exact integer arithmetic: d = m·2^-sh, and
** the end is at half a gap (a quarter below a power of two). */
static int isTie(uint64_t w, int K, double d){
  uint64_t bits, m, p10 = 1;
  int E, sh, i;
  unsigned __int128 A2, B2, D;
  memcpy(&bits, &d, sizeof(bits));
  E = (int)(bits>>52);
  m = (bits & (((uint64_t)1<<52)-1)) | ((uint64_t)1<<52);
  sh = 1075 - E;
  if( E==0 || sh<0 || sh>60 ) return 0;
  for(i=0; i<K; i++) p10 *= 10;
  A2 = (unsigned __int128)w << (sh+1);
  B2 = (unsigned __int128)m * p10 * 2;
  D = A2>=B2 ? A2-B2 : B2-A2;
  return D==p10 || (A2<B2 && D*2==p10);
}

/* profsumDecimalHint: 1 exactly when it finds the nearest double. */
static void checkHintAlone(void){
  long i, nBad = 0, nFound = 0, nBelow = 0, N = 300000;
  char z[40];
  for(i=0; i<N; i++){
    uint64_t w = rnd() % 10000000000000000000ULL;
    int k = -(int)(rnd()%20);
    double want, h, got;
    int rc;
    snprintf(z, sizeof(z), "%llue%d", (unsigned long long)w, k);
    want = strtod(z, 0);
    h = (rnd()&1) ? want : nextafter(want, (rnd()&1) ? INFINITY : 0.0);
    rc = profsumDecimalHint(w, k, 0, h, &got);
    if( rc ){ nFound++; if( !sameBits(got, want) ) nBad++; }
    else if( w!=0 && want<0x1p53 && !isTie(w, -k, want) ){
      /* a hint that is right or one double off is always resolved below
      ** 2^53 (above, where doubles are integers, the caller decides) */
      if( nBad<3 ) printf("  missed %s hint %.17g, strtod %.17g\n", z, h, want);
      nBad++;
    }
    if( w!=0 && want<0x1p53 && !isTie(w, -k, want) ) nBelow++;
  }
  {
    char zMsg[200];
    snprintf(zMsg, sizeof(zMsg), "profsumDecimalHint: %ld of %ld resolved (%ld below 2^53), %ld wrong or missed",
             nFound, N, nBelow, nBad);
    check(nBad==0 && nFound>=nBelow && nBelow > N/2, zMsg);
  }
}

int main(void){
  checkShortest();
  checkFixed();
  checkDigits();
  checkMidpoints();
  checkEdges();
  checkHintAlone();
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
