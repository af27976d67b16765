/*
** strindex.c — the string index of the JSON scanner's window: the byte
** classifiers (portable C, SSE2, AVX2), the choice among them at run time,
** and the maps' upkeep.  See strindex.h.
*/
#include "profsum_int.h"
#include "strindex.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PROFSUM_PORTABLE_ONLY)
# define PROFSUM_X86_SIMD 1
# include <immintrin.h>      /* SSE2 (every x86-64), AVX2 (chosen at run time) */
#endif

typedef unsigned char u8;

#define TOK_PORTABLE 0
#define TOK_SSE2     1
#define TOK_AVX2     2

/* Classify n bytes of a (n a multiple of 64) into 64-bit words: the byte
** loop, for a CPU without SSE2 and for the tail of a window. */
static void classifyPortable(const u8 *a, size_t n, uint64_t *aStop, uint64_t *aHi){
  size_t w, i;
  for(w=0; w<n/64; w++){
    uint64_t st = 0, hi = 0;
    for(i=0; i<64; i++){
      u8 c = a[w*64+i];
      st |= (uint64_t)(c=='"' || c=='\\' || c<0x20) << i;
      hi |= (uint64_t)(c>>7) << i;
    }
    aStop[w] = st;
    aHi[w] = hi;
  }
}

#ifdef PROFSUM_X86_SIMD
/* The same with SSE2: 16 bytes per compare. */
static void classifySse2(const u8 *a, size_t n, uint64_t *aStop, uint64_t *aHi){
  const __m128i vQuote = _mm_set1_epi8('"'), vBack = _mm_set1_epi8('\\');
  const __m128i v1f = _mm_set1_epi8(0x1f);
  size_t w;
  int k;
  for(w=0; w<n/64; w++){
    uint64_t st = 0, hi = 0;
    for(k=0; k<4; k++){
      __m128i v = _mm_loadu_si128((const __m128i*)(a + w*64 + k*16));
      __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, vQuote), _mm_cmpeq_epi8(v, vBack)),
                                 _mm_cmpeq_epi8(_mm_max_epu8(v, v1f), v1f));
      st |= (uint64_t)(unsigned)_mm_movemask_epi8(hit) << (16*k);
      hi |= (uint64_t)(unsigned)_mm_movemask_epi8(v) << (16*k);
    }
    aStop[w] = st;
    aHi[w] = hi;
  }
}

/* The same with AVX2: 32 bytes per compare. */
__attribute__((target("avx2")))
static void classifyAvx2(const u8 *a, size_t n, uint64_t *aStop, uint64_t *aHi){
  const __m256i vQuote = _mm256_set1_epi8('"'), vBack = _mm256_set1_epi8('\\');
  const __m256i v1f = _mm256_set1_epi8(0x1f);
  size_t w;
  for(w=0; w<n/64; w++){
    __m256i v0 = _mm256_loadu_si256((const __m256i*)(a + w*64));
    __m256i v1 = _mm256_loadu_si256((const __m256i*)(a + w*64 + 32));
    __m256i h0 = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v0, vQuote), _mm256_cmpeq_epi8(v0, vBack)),
                                 _mm256_cmpeq_epi8(_mm256_max_epu8(v0, v1f), v1f));
    __m256i h1 = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v1, vQuote), _mm256_cmpeq_epi8(v1, vBack)),
                                 _mm256_cmpeq_epi8(_mm256_max_epu8(v1, v1f), v1f));
    aStop[w] = (uint64_t)(uint32_t)_mm256_movemask_epi8(h0)
             | ((uint64_t)(uint32_t)_mm256_movemask_epi8(h1) << 32);
    aHi[w] = (uint64_t)(uint32_t)_mm256_movemask_epi8(v0)
           | ((uint64_t)(uint32_t)_mm256_movemask_epi8(v1) << 32);
  }
}
#endif

/* The tokenizer mode of this process: the best the CPU has, capped by
** PROFSUM_TOKENIZER (portable | sse2 | avx2).  Decided once; a race
** between two first calls decides the same. */
static int tokenizerMode(void){
  static int iMode = -1;
  int m = __atomic_load_n(&iMode, __ATOMIC_RELAXED);
  if( m<0 ){
    const char *z = getenv("PROFSUM_TOKENIZER");
    int cap = TOK_AVX2;
    m = TOK_PORTABLE;
    if( z && strcmp(z, "portable")==0 ) cap = TOK_PORTABLE;
    else if( z && strcmp(z, "sse2")==0 ) cap = TOK_SSE2;
#ifdef PROFSUM_X86_SIMD
    __builtin_cpu_init();
    if( cap>=TOK_SSE2 && __builtin_cpu_supports("sse2") ) m = TOK_SSE2;
    if( cap>=TOK_AVX2 && __builtin_cpu_supports("avx2") ) m = TOK_AVX2;
#else
    (void)cap;
#endif
    __atomic_store_n(&iMode, m, __ATOMIC_RELAXED);
  }
  return m;
}

/* See strindex.h. */
ProfsumClassifyFn profsumStrIndexClassifier(void){
  switch( tokenizerMode() ){
#ifdef PROFSUM_X86_SIMD
    case TOK_AVX2: return classifyAvx2;
    case TOK_SSE2: return classifySse2;
#endif
    default: return 0;
  }
}

/* See strindex.h. */
const char *profsumStrIndexModeName(void){
  static const char *az[] = {"portable", "sse2", "avx2"};
  return az[tokenizerMode()];
}

/* See strindex.h.  Whole words by the classifier, the last partial word
** from a copy padded with spaces (no mark). */
int profsumStrIndexBuild(ProfsumStrIndex *p, const u8 *a, size_t n, size_t nAlloc){
  size_t nWord = nAlloc/64 + 2, nFull = n/64, w;
  uint64_t any = 0;
  if( p->xClassify==0 ) return SQLITE_OK;
  if( nWord>p->nWords ){
    uint64_t *aNew = sqlite3_realloc64(p->aStop, nWord*2*sizeof(uint64_t));
    if( aNew==0 ) return SQLITE_NOMEM;
    p->aStop = aNew;
    p->aHi = aNew + nWord;
    p->nWords = nWord;
  }
  p->xClassify(a, nFull*64, p->aStop, p->aHi);
  if( n>nFull*64 ){
    u8 aTail[64];
    memset(aTail, ' ', sizeof(aTail));
    memcpy(aTail, a + nFull*64, n - nFull*64);
    classifyPortable(aTail, 64, p->aStop + nFull, p->aHi + nFull);
    nFull++;
  }
  p->aStop[nFull] = 0;
  p->aHi[nFull] = 0;
  for(w=0; w<nFull; w++) any |= p->aHi[w];
  p->anyHi = any!=0;
  return SQLITE_OK;
}

/* See strindex.h. */
int profsumStrIndexHi(const ProfsumStrIndex *p, size_t i, size_t j){
  size_t w;
  if( !p->anyHi || i>=j ) return 0;
  for(w=i/64; w<=(j-1)/64; w++){
    uint64_t m = p->aHi[w];
    if( w==i/64 ) m &= ~(uint64_t)0 << (i%64);
    if( w==(j-1)/64 && (j%64)!=0 ) m &= ((uint64_t)1 << (j%64)) - 1;
    if( m ) return 1;
  }
  return 0;
}

/* See strindex.h. */
void profsumStrIndexFree(ProfsumStrIndex *p){
  sqlite3_free(p->aStop);
  p->aStop = p->aHi = 0;
  p->nWords = 0;
}
