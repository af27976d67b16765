/*
** jsonesc.h — where the next byte that a JSON string must escape is: the
** writers of JSON strings (jsontree.c's jAppendJsonStr, the XPlane rows'
** args in xplane_rows.c) copy the runs between such bytes whole.
**
** The bytes a JSON string escapes are the control bytes (below 0x20), the
** quote and the backslash; every other byte, UTF-8 sequences included,
** stands as it is.  With SSE2 (every x86-64 CPU) sixteen bytes are tested
** at a time; what is left (most strings of trace args are shorter than
** sixteen bytes) eight or four at a time in a 64-bit word on little-endian
** CPUs, the last word overlapping the one before; a byte-wise loop does the
** last three bytes and everything on other CPUs.
*/
#ifndef PROFSUM_JSONESC_H
#define PROFSUM_JSONESC_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
# include <emmintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
# define PROFSUM_JSONESC_SWAR 1
/* The bytes of word x (little-endian: byte 0 lowest) that a JSON string
** escapes, as the high bit of each such byte.  Only the lowest bit set is
** exact (a borrow can mark a byte above a marked one), which is all the
** callers read: a byte below 0x20 wraps when 0x20 is taken from it, and a
** quote or backslash is zero once xored with itself; bytes of 0x80 and up
** never count (~x drops them). */
static inline uint64_t profsumJsonEscMask(uint64_t x){
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  const uint64_t q = x ^ (ones*'"'), s = x ^ (ones*'\\');
  /* (a quote or backslash xored away keeps x's high bit: ~q's high bits
  ** are ~x's) */
  return ((x - ones*0x20) | (q - ones) | (s - ones)) & ~x & high;
}
#endif

/* The number of bytes at the start of z[0..n) that need no escape in a
** JSON string (n when none does). */
static inline int64_t profsumJsonPlainRun(const unsigned char *z, int64_t n){
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128i vQuote = _mm_set1_epi8('"');
  const __m128i vSlash = _mm_set1_epi8('\\');
  const __m128i v1f = _mm_set1_epi8(0x1f);
  for(; i+16<=n; i+=16){
    __m128i x = _mm_loadu_si128((const __m128i*)(const void*)(z+i));
    /* x <= 0x1f unsigned: min(x, 0x1f) == x */
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, vQuote), _mm_cmpeq_epi8(x, vSlash)),
                             _mm_cmpeq_epi8(_mm_min_epu8(x, v1f), x));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if( mask ) return i + __builtin_ctz(mask);
  }
#endif
#if defined(PROFSUM_JSONESC_SWAR)
  if( n>=8 ){
    while( i<n ){
      /* a word at i, or the string's last word: the bytes before i that it
      ** takes again are plain, so its lowest marked byte is i or later */
      const int64_t j = i+8<=n ? i : n-8;
      uint64_t w, m;
      memcpy(&w, z+j, 8);
      if( (m = profsumJsonEscMask(w))!=0 ) return j + (__builtin_ctzll(m)>>3);
      i = j+8;
    }
    return n;
  }
  if( n>=4 ){
    /* 4 to 7 bytes: two halves that may overlap, the word's upper half
    ** filled with plain spaces */
    uint32_t h;
    uint64_t m;
    memcpy(&h, z, 4);
    if( (m = profsumJsonEscMask(h | 0x2020202000000000ULL))!=0 ) return __builtin_ctzll(m)>>3;
    memcpy(&h, z+n-4, 4);
    if( (m = profsumJsonEscMask(h | 0x2020202000000000ULL))!=0 ) return n-4 + (__builtin_ctzll(m)>>3);
    return n;
  }
#endif
  for(; i<n; i++){
    unsigned char c = z[i];
    if( c<0x20 || c=='"' || c=='\\' ) break;
  }
  return i;
}

#endif /* PROFSUM_JSONESC_H */
