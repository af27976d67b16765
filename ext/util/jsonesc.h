/*
** jsonesc.h — where the next byte that a JSON string must escape is: the
** writers of JSON strings (jsontree.c's jAppendJsonStr, the XPlane rows'
** args in xplane_rows.c) copy the runs between such bytes whole.
**
** The bytes a JSON string escapes are the control bytes (below 0x20), the
** quote and the backslash; every other byte, UTF-8 sequences included,
** stands as it is.  With SSE2 (every x86-64 CPU) sixteen bytes are tested
** at a time; the loop in plain C does the rest and every other CPU.
*/
#ifndef PROFSUM_JSONESC_H
#define PROFSUM_JSONESC_H

#include <stdint.h>
#if defined(__SSE2__)
# include <emmintrin.h>
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
  for(; i<n; i++){
    unsigned char c = z[i];
    if( c<0x20 || c=='"' || c=='\\' ) break;
  }
  return i;
}

#endif /* PROFSUM_JSONESC_H */
