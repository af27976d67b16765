/*
** strindex.h — the string index of the JSON scanner's window (trace_json.c).
**
** After every refill the window's bytes are classified 64 at a time into
** two bitmaps: bit i of aStop is set when byte i is '"', '\\' or below
** 0x20 (where a string ends or needs a look), bit i of aHi when it is 0x80
** or above (UTF-8 to check).  The scanner then finds the end of a string
** by counting trailing zeros instead of testing bytes: the cost of a
** string no longer grows with its length, and no branch depends on the
** bytes inside it.
**
** The classifier is AVX2 or SSE2 when the CPU has them, chosen at run
** time (__builtin_cpu_supports; the AVX2 code is compiled with a target
** attribute, so the build needs no -mavx2).  The environment variable
** PROFSUM_TOKENIZER, read once per process, caps the choice: "portable"
** turns the index off (the scanner then reads byte by byte in plain C, as
** on a CPU that is not x86-64, or in a build with -DPROFSUM_PORTABLE_ONLY),
** "sse2" stops at SSE2.  The results are the same in every mode
** (tests/test_perf_paths.py).
*/
#ifndef PROFSUM_STRINDEX_H
#define PROFSUM_STRINDEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Classify n bytes (a multiple of 64) of a into n/64 words of each map. */
typedef void (*ProfsumClassifyFn)(const unsigned char *a, size_t n,
                                  uint64_t *aStop, uint64_t *aHi);

typedef struct ProfsumStrIndex {
  ProfsumClassifyFn xClassify;   /* NULL: no index (the portable mode) */
  uint64_t *aStop;               /* '"', '\\', < 0x20 */
  uint64_t *aHi;                 /* >= 0x80 */
  size_t nWords;                 /* allocated words of each map */
  int anyHi;                     /* 1 when some aHi bit is set */
} ProfsumStrIndex;

/* The classifier of this process's mode, or NULL for the portable mode. */
ProfsumClassifyFn profsumStrIndexClassifier(void);

/* The mode's name: "avx2", "sse2" or "portable". */
const char *profsumStrIndexModeName(void);

/* Index a[0..n) of a window of nAlloc bytes (n <= nAlloc): both maps, and
** zero words past n.  A no-op without a classifier.  SQLITE_OK or
** SQLITE_NOMEM (the index is then unchanged). */
int profsumStrIndexBuild(ProfsumStrIndex *p, const unsigned char *a, size_t n, size_t nAlloc);

/* Any aHi bit in [i, j)?  (Offsets of the indexed bytes.) */
int profsumStrIndexHi(const ProfsumStrIndex *p, size_t i, size_t j);

/* Free the maps (the struct itself is the caller's). */
void profsumStrIndexFree(ProfsumStrIndex *p);

/* Past the run of ASCII digits at q (at most up to e): eight bytes per
** step where eight are there (a byte is a digit when its high nibble is 3
** and adding 6 keeps it so; the first byte that is not is found by its
** flag), then byte by byte.  (Here to be inlined by the scanner.) */
static inline const unsigned char *profsumDigitRun(const unsigned char *q,
                                                   const unsigned char *e){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
  const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, k30 = 0x3030303030303030ULL;
  const uint64_t k7f = 0x7F7F7F7F7F7F7F7FULL;
  while( e-q>=8 ){
    uint64_t x, nd, isDig;
    memcpy(&x, q, 8);
    nd = ((x & hi) ^ k30) | (((x + 0x0606060606060606ULL) & hi) ^ k30);
    /* 0x80 in the bytes where nd is 0 (digits), 0 elsewhere; a carry out
    ** of a byte only ever follows a byte that is no digit, so the first
    ** flag is exact */
    isDig = ~(((nd & k7f) + k7f) | nd | k7f);
    if( isDig!=0x8080808080808080ULL ){
      return q + __builtin_ctzll(~isDig & 0x8080808080808080ULL)/8;
    }
    q += 8;
  }
#endif
  while( q<e && *q>='0' && *q<='9' ) q++;
  return q;
}

/* profsumDigitRun for the short runs of a trace's numbers, where 16
** bytes are there: both words tested, the first flag of either taken with
** no branch on which word holds it (the digit counts vary from one number
** to the next: a branch per word missed often). */
static inline __attribute__((always_inline)) const unsigned char *profsumDigitRun16(const unsigned char *q,
                                                     const unsigned char *e){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
  if( e-q>=16 ){
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ULL, k30 = 0x3030303030303030ULL;
    const uint64_t k7f = 0x7F7F7F7F7F7F7F7FULL, k80 = 0x8080808080808080ULL;
    uint64_t x0, x1, n0, n1;
    memcpy(&x0, q, 8);
    memcpy(&x1, q+8, 8);
    /* as profsumDigitRun: 0 in the digit bytes, then 0x80 in the others */
    n0 = ((x0 & hi) ^ k30) | (((x0 + 0x0606060606060606ULL) & hi) ^ k30);
    n1 = ((x1 & hi) ^ k30) | (((x1 + 0x0606060606060606ULL) & hi) ^ k30);
    n0 = (((n0 & k7f) + k7f) | n0) & k80;
    n1 = (((n1 & k7f) + k7f) | n1) & k80;
    if( (n0|n1)!=0 ){
      unsigned i = n0 ? (unsigned)__builtin_ctzll(n0) : 64 + (unsigned)__builtin_ctzll(n1);
      return q + i/8;
    }
    return profsumDigitRun(q+16, e);
  }
#endif
  return profsumDigitRun(q, e);
}

/* w·10^n + the value of the n decimal digits at p (digits only, checked
** by the caller; the result must stay below 2^64): eight at a time where
** bytes are little-endian (each byte minus '0', then pairs, quads and the
** two halves combined by multiplications), one at a time after.  (Here to
** be inlined by the scanner and decnum.c.) */
static inline uint64_t profsumDigitsValue(uint64_t w, const char *p, int64_t n){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
  while( n>=8 ){
    uint64_t x;
    memcpy(&x, p, 8);
    x -= 0x3030303030303030ULL;                       /* bytes 0..9 */
    x = x*10 + (x>>8);                                /* 2-digit values */
    x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL<<32)))
       + (((x>>16) & 0x000000FF000000FFULL) * (1 + (10000ULL<<32)))) >> 32;
    w = w*100000000ULL + x;
    p += 8; n -= 8;
  }
#endif
  while( n-- > 0 ) w = w*10 + (uint64_t)(*p++ - '0');
  return w;
}

/* The value of the n decimal digits at p, 1 <= n <= 8, with 8 bytes
** readable at p, in one step where bytes are little-endian: the 8 bytes
** less '0' each (a byte past the digits may borrow from those after it,
** never from a digit), shifted so that the n digits are the high bytes
** and zeros lead, then combined as profsumDigitsValue does.  No branch on
** n: a loop over the digits one by one missed its exit at every other
** number of a trace (the counts vary). */
static inline __attribute__((always_inline)) uint64_t profsumDigits8(const char *p, int64_t n){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
  uint64_t x;
  memcpy(&x, p, 8);
  x -= 0x3030303030303030ULL;
  x <<= 8*(8-n);
  x = x*10 + (x>>8);
  return (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL<<32)))
       + (((x>>16) & 0x000000FF000000FFULL) * (1 + (10000ULL<<32)))) >> 32;
#else
  return profsumDigitsValue(0, p, n);
#endif
}

/* The value of the n decimal digits at p (digits only, below 2^64), with
** the bytes up to e readable: by profsumDigits8 where 16 bytes are there
** (up to 16 digits in at most two steps), else by profsumDigitsValue. */
static inline __attribute__((always_inline)) uint64_t profsumDigitsValueE(const char *p,
                                                       int64_t n, const char *e){
  static const uint64_t aP10[9] = { 1ull, 10ull, 100ull, 1000ull, 10000ull,
    100000ull, 1000000ull, 10000000ull, 100000000ull };
  if( n>0 && e-p>=16 ){
    if( n<=8 ) return profsumDigits8(p, n);
    if( n<=16 ) return profsumDigits8(p, 8)*aP10[n-8] + profsumDigits8(p+8, n-8);
  }
  return profsumDigitsValue(0, p, n);
}

/* Past the JSON white space (space, tab, LF, CR) at q, at most up to e:
** nothing to do in compact JSON (one test: no byte above ' ' is white
** space); a run of spaces (the indentation of indented JSON) eight bytes
** per step where bytes are little-endian (the first byte that is not a
** space is the lowest one left by an exclusive or with eight spaces), a
** tab, LF or CR one by one.  (Here to be inlined by the scanner.) */
static inline const unsigned char *profsumSkipSpace(const unsigned char *q,
                                                    const unsigned char *e){
  if( q>=e || *q>' ' ) return q;
  for(;;){
    if( *q==' ' ){
      q++;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
      while( e-q>=8 ){
        uint64_t x;
        memcpy(&x, q, 8);
        x ^= 0x2020202020202020ULL;
        if( x ){ q += __builtin_ctzll(x)/8; break; }
        q += 8;
      }
#endif
      while( q<e && *q==' ' ) q++;
    }else if( *q=='\n' || *q=='\r' || *q=='\t' ){
      q++;
    }else{
      return q;
    }
    if( q>=e ) return q;
  }
}

#endif
