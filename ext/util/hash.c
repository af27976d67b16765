/*
** hash.c — SHA-256 (FIPS 180-4), for trace provenance (of a file: shabg.c); MD5
** (RFC 1321) and base64 (RFC 4648 §4) for W&B artifact digests.
**
** Written here rather than taken from a library: the only Debian
** libraries at hand that have them (OpenSSL's libcrypto, GnuTLS/nettle)
** would add a link dependency for ~200 lines.  On x86-64 CPUs with the SHA
** extensions (Intel since Ice Lake / Goldmont, AMD since Zen) SHA-256 uses
** them, chosen at run time: several times the portable code's speed
** (`make bench-sha256`; the figures are in docs/performance.md), so hashing
** a gzipped trace costs the inflate thread a small part of its time.
** PROFSUM_SHA256=portable in the environment
** forces the portable code (the tests compare both); valgrind hides the
** CPUID bit, so `make valgrind` runs the portable code and `make asan` the
** other.  (libcurl links a TLS
** library that has MD5, but does not export it, and the NETWORK=0 build has
** no libcurl.)
*/
#include "profsum_int.h"
#include "hash.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
# define PROFSUM_SHANI 1
# include <cpuid.h>
# include <immintrin.h>
#endif

static const uint32_t K256[64] = {
  0x428a2f98,0x71374491,0xb5c0fbcf,0xe9b5dba5,0x3956c25b,0x59f111f1,0x923f82a4,0xab1c5ed5,
  0xd807aa98,0x12835b01,0x243185be,0x550c7dc3,0x72be5d74,0x80deb1fe,0x9bdc06a7,0xc19bf174,
  0xe49b69c1,0xefbe4786,0x0fc19dc6,0x240ca1cc,0x2de92c6f,0x4a7484aa,0x5cb0a9dc,0x76f988da,
  0x983e5152,0xa831c66d,0xb00327c8,0xbf597fc7,0xc6e00bf3,0xd5a79147,0x06ca6351,0x14292967,
  0x27b70a85,0x2e1b2138,0x4d2c6dfc,0x53380d13,0x650a7354,0x766a0abb,0x81c2c92e,0x92722c85,
  0xa2bfe8a1,0xa81a664b,0xc24b8b70,0xc76c51a3,0xd192e819,0xd6990624,0xf40e3585,0x106aa070,
  0x19a4c116,0x1e376c08,0x2748774c,0x34b0bcb5,0x391c0cb3,0x4ed8aa4a,0x5b9cca4f,0x682e6ff3,
  0x748f82ee,0x78a5636f,0x84c87814,0x8cc70208,0x90befffa,0xa4506ceb,0xbef9a3f7,0xc67178f2
};

#define ROR(x,n) (((x)>>(n)) | ((x)<<(32-(n))))

/* Process nBlock 64-byte blocks, portable C. */
static void sha256BlocksC(uint32_t *h, const unsigned char *p, size_t nBlock){
  for(; nBlock>0; nBlock--, p+=64){
    uint32_t w[64], a, b, c, d, e, f, g, hh;
    int i;
    for(i=0; i<16; i++){
      w[i] = ((uint32_t)p[4*i]<<24) | ((uint32_t)p[4*i+1]<<16) | ((uint32_t)p[4*i+2]<<8) | p[4*i+3];
    }
    for(i=16; i<64; i++){
      uint32_t s0 = ROR(w[i-15],7) ^ ROR(w[i-15],18) ^ (w[i-15]>>3);
      uint32_t s1 = ROR(w[i-2],17) ^ ROR(w[i-2],19) ^ (w[i-2]>>10);
      w[i] = w[i-16] + s0 + w[i-7] + s1;
    }
    a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
    for(i=0; i<64; i++){
      uint32_t S1 = ROR(e,6) ^ ROR(e,11) ^ ROR(e,25);
      uint32_t ch = (e & f) ^ (~e & g);
      uint32_t t1 = hh + S1 + ch + K256[i] + w[i];
      uint32_t S0 = ROR(a,2) ^ ROR(a,13) ^ ROR(a,22);
      uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = S0 + mj;
      hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
}

#ifdef PROFSUM_SHANI
/* The same with the x86 SHA extensions.  The state lives in two registers
** as the instructions want it, (A,B,E,F) and (C,D,G,H); each
** sha256rnds2 does two rounds, so a group of four rounds is two of them
** with the message words W[4g..4g+3] + K in the low, then the high half.
** aMsg[g%4] holds W[4g..4g+3]: the first four groups load them from the
** block; sha256msg1/sha256msg2 (plus W[t-7] through alignr) compute the
** later ones in place, three groups ahead of their use. */
__attribute__((target("sha,sse4.1,ssse3")))
static void sha256BlocksNi(uint32_t *h, const unsigned char *p, size_t nBlock){
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i t = _mm_loadu_si128((const __m128i*)&h[0]);          /* A B C D */
  __m128i s1 = _mm_loadu_si128((const __m128i*)&h[4]);         /* E F G H */
  __m128i s0;
  t = _mm_shuffle_epi32(t, 0xB1);                               /* B A D C */
  s1 = _mm_shuffle_epi32(s1, 0x1B);                             /* H G F E */
  s0 = _mm_alignr_epi8(t, s1, 8);                               /* ABEF */
  s1 = _mm_blend_epi16(s1, t, 0xF0);                            /* CDGH */
  for(; nBlock>0; nBlock--, p+=64){
    __m128i save0 = s0, save1 = s1, aMsg[4], m;
    int g;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 16
#endif
    for(g=0; g<16; g++){
      __m128i *cur = &aMsg[g&3];
      if( g<4 ) *cur = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i*)(p+16*g)), bswap);
      m = _mm_add_epi32(*cur, _mm_loadu_si128((const __m128i*)&K256[4*g]));
      s1 = _mm_sha256rnds2_epu32(s1, s0, m);
      if( g>=3 && g<15 ){
        /* W for group g+1: msg1 (from group g-3) + W[t-7] words, then msg2 */
        __m128i *nxt = &aMsg[(g+1)&3];
        *nxt = _mm_add_epi32(*nxt, _mm_alignr_epi8(*cur, aMsg[(g+3)&3], 4));
        *nxt = _mm_sha256msg2_epu32(*nxt, *cur);
      }
      m = _mm_shuffle_epi32(m, 0x0E);
      s0 = _mm_sha256rnds2_epu32(s0, s1, m);
      if( g>=1 && g<13 ){
        __m128i *prv = &aMsg[(g+3)&3];
        *prv = _mm_sha256msg1_epu32(*prv, *cur);
      }
    }
    s0 = _mm_add_epi32(s0, save0);
    s1 = _mm_add_epi32(s1, save1);
  }
  t = _mm_shuffle_epi32(s0, 0x1B);                              /* F E B A */
  s1 = _mm_shuffle_epi32(s1, 0xB1);                             /* D C H G */
  s0 = _mm_blend_epi16(t, s1, 0xF0);                            /* D C B A */
  s1 = _mm_alignr_epi8(s1, t, 8);                               /* H G F E */
  _mm_storeu_si128((__m128i*)&h[0], s0);
  _mm_storeu_si128((__m128i*)&h[4], s1);
}
#endif

/* The block function: the SHA extensions when the CPU has them (CPUID
** leaf 7, EBX bit 29) unless PROFSUM_SHA256=portable; decided once. */
static void (*sha256Blocks)(uint32_t*, const unsigned char*, size_t) = sha256BlocksC;
static pthread_once_t sha256Once = PTHREAD_ONCE_INIT;
static void sha256Pick(void){
#ifdef PROFSUM_SHANI
  unsigned int a = 0, b = 0, c = 0, d = 0;
  const char *z = getenv("PROFSUM_SHA256");
  if( (z==0 || strcmp(z, "portable")!=0)
   && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u<<29))!=0 ){
    sha256Blocks = sha256BlocksNi;
  }
#endif
}

/* The high and low halves of a*b, xor-ed. */
static uint64_t hashFold(uint64_t a, uint64_t b){
  unsigned __int128 r = (unsigned __int128)a * b;
  return (uint64_t)r ^ (uint64_t)(r>>64);
}

/* The n bytes at z (0 < n < 8) as a little-endian word, as memcpy into a
** zeroed word gives them, from at most three loads and no call: two
** overlapping 4-byte loads from 4 bytes on, else the first, middle and last
** byte (the same byte where they overlap, so or-ing them is exact). */
static uint64_t hashTail(const unsigned char *z, int64_t n){
  if( n>=4 ){
    uint32_t lo, hi;
    memcpy(&lo, z, 4);
    memcpy(&hi, z+n-4, 4);
    return (uint64_t)lo | ((uint64_t)hi << (8*(n-4)));
  }
  return (uint64_t)z[0] | ((uint64_t)z[n>>1] << (8*(n>>1))) | ((uint64_t)z[n-1] << (8*(n-1)));
}

/* See hash.h. */
uint64_t profsumBytesHash(const char *zIn, int64_t n){
  const unsigned char *z = (const unsigned char*)zIn;
  uint64_t h = 0x243f6a8885a308d3ULL ^ (uint64_t)n, w;
  int64_t i = 0;
  if( n>=64 ){
    /* long texts (kernel names, signatures): four independent chains, so
    ** that one multiply does not wait for the one before, joined after */
    uint64_t h1 = h ^ 0x13198a2e03707344ULL, h2 = h ^ 0xa4093822299f31d0ULL;
    uint64_t h3 = h ^ 0x082efa98ec4e6c89ULL, w1, w2, w3;
    for(; i+32<=n; i+=32){
      memcpy(&w, z+i, 8);
      memcpy(&w1, z+i+8, 8);
      memcpy(&w2, z+i+16, 8);
      memcpy(&w3, z+i+24, 8);
      h = hashFold(h ^ w, 0x9e3779b97f4a7c15ULL);
      h1 = hashFold(h1 ^ w1, 0x9e3779b97f4a7c15ULL);
      h2 = hashFold(h2 ^ w2, 0x9e3779b97f4a7c15ULL);
      h3 = hashFold(h3 ^ w3, 0x9e3779b97f4a7c15ULL);
    }
    h = hashFold(h ^ h1, 0xd6e8feb86659fd93ULL);
    h = hashFold(h ^ h2, 0xd6e8feb86659fd93ULL);
    h = hashFold(h ^ h3, 0xd6e8feb86659fd93ULL);
  }
  for(; i+8<=n; i+=8){
    memcpy(&w, z+i, 8);
    h = hashFold(h ^ w, 0x9e3779b97f4a7c15ULL);
  }
  if( i<n ){
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_LITTLE_ENDIAN__
    if( n>=8 ){
      /* the last 8 bytes, those hashed already shifted out */
      memcpy(&w, z+n-8, 8);
      w >>= 8*(8-(n-i));
    }else{
      w = hashTail(z, n);
    }
#else
    w = 0;
    memcpy(&w, z+i, (size_t)(n-i));
#endif
    h = hashFold(h ^ w, 0xd6e8feb86659fd93ULL);
  }
  /* the final mix of MurmurHash3 (every input bit reaches every output bit) */
  h ^= h>>33; h *= 0xff51afd7ed558ccdULL; h ^= h>>33;
  h *= 0xc4ceb9fe1a85ec53ULL; h ^= h>>33;
  return h;
}

/* See hash.h. */
const char *profsumSha256Impl(void){
  pthread_once(&sha256Once, sha256Pick);
  return sha256Blocks==sha256BlocksC ? "portable" : "x86 SHA extensions";
}

/* See hash.h. */
void profsumSha256Init(ProfsumSha256 *s){
  static const uint32_t h0[8] = {0x6a09e667,0xbb67ae85,0x3c6ef372,0xa54ff53a,
                                 0x510e527f,0x9b05688c,0x1f83d9ab,0x5be0cd19};
  memcpy(s->h, h0, sizeof(h0));
  s->b.nTotal = 0;
  s->b.nBuf = 0;
}

/* Feed n bytes to a 64-byte block hash: complete the partial block of b,
** then whole blocks straight from p, then keep the rest.  Shared by
** SHA-256 and MD5, which differ only in xBlocks and the state h. */
static void blockUpdate(uint32_t *h, ProfsumHashBlock *b,
                        void (*xBlocks)(uint32_t*, const unsigned char*, size_t),
                        const unsigned char *p, size_t n){
  b->nTotal += n;
  if( b->nBuf ){
    size_t k = 64 - b->nBuf;
    if( k>n ) k = n;
    memcpy(b->buf + b->nBuf, p, k);
    b->nBuf += k; p += k; n -= k;
    if( b->nBuf==64 ){ xBlocks(h, b->buf, 1); b->nBuf = 0; }
  }
  if( n>=64 ){ xBlocks(h, p, n/64); p += n/64*64; n %= 64; }
  if( n ){ memcpy(b->buf, p, n); b->nBuf = n; }
}

/* Finish a 64-byte block hash with the padding SHA-256 and MD5 share:
** 0x80, zeros, then the length in bits as 8 bytes, big-endian when
** bBigEndian (SHA-256), else little-endian (MD5). */
static void blockFinish(uint32_t *h, ProfsumHashBlock *b,
                        void (*xBlocks)(uint32_t*, const unsigned char*, size_t), int bBigEndian){
  uint64_t bits = b->nTotal*8;
  unsigned char pad[72];
  size_t nPad = (b->nBuf<56) ? 56 - b->nBuf : 120 - b->nBuf;
  int i;
  memset(pad, 0, sizeof(pad));
  pad[0] = 0x80;
  for(i=0; i<8; i++) pad[nPad+i] = (unsigned char)(bits>>(bBigEndian ? 56-8*i : 8*i));
  blockUpdate(h, b, xBlocks, pad, nPad+8);
}

/* See hash.h. */
void profsumSha256Update(ProfsumSha256 *s, const unsigned char *p, size_t n){
  pthread_once(&sha256Once, sha256Pick);
  blockUpdate(s->h, &s->b, sha256Blocks, p, n);
}

/* See hash.h. */
void profsumSha256Hex(ProfsumSha256 *s, char *zHex){
  static const char hx[] = "0123456789abcdef";
  int i;
  pthread_once(&sha256Once, sha256Pick);
  blockFinish(s->h, &s->b, sha256Blocks, 1);
  for(i=0; i<32; i++){
    unsigned char b = (unsigned char)(s->h[i/4]>>(24-8*(i%4)));
    zHex[2*i] = hx[b>>4];
    zHex[2*i+1] = hx[b&15];
  }
  zHex[64] = 0;
}

/* ------------------------------------------------------------------ */
/* MD5 (RFC 1321)                                                      */
/* ------------------------------------------------------------------ */

/* Per-round shift amounts and the sine-derived constants of RFC 1321. */
static const unsigned char md5S[64] = {
  7,12,17,22,7,12,17,22,7,12,17,22,7,12,17,22,
  5,9,14,20,5,9,14,20,5,9,14,20,5,9,14,20,
  4,11,16,23,4,11,16,23,4,11,16,23,4,11,16,23,
  6,10,15,21,6,10,15,21,6,10,15,21,6,10,15,21
};
static const uint32_t md5K[64] = {
  0xd76aa478,0xe8c7b756,0x242070db,0xc1bdceee,0xf57c0faf,0x4787c62a,0xa8304613,0xfd469501,
  0x698098d8,0x8b44f7af,0xffff5bb1,0x895cd7be,0x6b901122,0xfd987193,0xa679438e,0x49b40821,
  0xf61e2562,0xc040b340,0x265e5a51,0xe9b6c7aa,0xd62f105d,0x02441453,0xd8a1e681,0xe7d3fbc8,
  0x21e1cde6,0xc33707d6,0xf4d50d87,0x455a14ed,0xa9e3e905,0xfcefa3f8,0x676f02d9,0x8d2a4c8a,
  0xfffa3942,0x8771f681,0x6d9d6122,0xfde5380c,0xa4beea44,0x4bdecfa9,0xf6bb4b60,0xbebfbc70,
  0x289b7ec6,0xeaa127fa,0xd4ef3085,0x04881d05,0xd9d4d039,0xe6db99e5,0x1fa27cf8,0xc4ac5665,
  0xf4292244,0x432aff97,0xab9423a7,0xfc93a039,0x655b59c3,0x8f0ccc92,0xffeff47d,0x85845dd1,
  0x6fa87e4f,0xfe2ce6e0,0xa3014314,0x4e0811a1,0xf7537e82,0xbd3af235,0x2ad7d2bb,0xeb86d391
};

#define ROL(x,n) (((x)<<(n)) | ((x)>>(32-(n))))

/* Process one 64-byte block (little-endian words). */
static void md5Block(uint32_t *h, const unsigned char *p){
  uint32_t m[16], a = h[0], b = h[1], c = h[2], d = h[3];
  int i;
  for(i=0; i<16; i++){
    m[i] = (uint32_t)p[4*i] | ((uint32_t)p[4*i+1]<<8) | ((uint32_t)p[4*i+2]<<16) | ((uint32_t)p[4*i+3]<<24);
  }
  for(i=0; i<64; i++){
    uint32_t f;
    int g;
    if( i<16 ){      f = (b & c) | (~b & d); g = i; }
    else if( i<32 ){ f = (d & b) | (~d & c); g = (5*i+1) & 15; }
    else if( i<48 ){ f = b ^ c ^ d;          g = (3*i+5) & 15; }
    else{            f = c ^ (b | ~d);       g = (7*i) & 15; }
    f = f + a + md5K[i] + m[g];
    a = d; d = c; c = b;
    b = b + ROL(f, md5S[i]);
  }
  h[0] += a; h[1] += b; h[2] += c; h[3] += d;
}

/* nBlock blocks, for blockUpdate. */
static void md5Blocks(uint32_t *h, const unsigned char *p, size_t nBlock){
  for(; nBlock>0; nBlock--, p+=64) md5Block(h, p);
}

/* See hash.h. */
void profsumMd5Init(ProfsumMd5 *s){
  s->h[0] = 0x67452301; s->h[1] = 0xefcdab89; s->h[2] = 0x98badcfe; s->h[3] = 0x10325476;
  s->b.nTotal = 0;
  s->b.nBuf = 0;
}

/* See hash.h. */
void profsumMd5Update(ProfsumMd5 *s, const void *pData, size_t n){
  blockUpdate(s->h, &s->b, md5Blocks, (const unsigned char*)pData, n);
}

/* See hash.h. */
void profsumMd5Final(ProfsumMd5 *s, unsigned char *aOut){
  int i;
  blockFinish(s->h, &s->b, md5Blocks, 0);
  for(i=0; i<16; i++) aOut[i] = (unsigned char)(s->h[i/4]>>(8*(i%4)));
}

/* ------------------------------------------------------------------ */
/* Base64 (standard alphabet, padded)                                  */
/* ------------------------------------------------------------------ */
static const char b64Alphabet[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* See hash.h. */
size_t profsumBase64Encode(const unsigned char *p, size_t n, char *zOut){
  size_t i, j = 0;
  for(i=0; i+2<n; i+=3){
    uint32_t v = ((uint32_t)p[i]<<16) | ((uint32_t)p[i+1]<<8) | p[i+2];
    zOut[j++] = b64Alphabet[(v>>18)&63];
    zOut[j++] = b64Alphabet[(v>>12)&63];
    zOut[j++] = b64Alphabet[(v>>6)&63];
    zOut[j++] = b64Alphabet[v&63];
  }
  if( i<n ){
    uint32_t v = (uint32_t)p[i]<<16;
    if( i+1<n ) v |= (uint32_t)p[i+1]<<8;
    zOut[j++] = b64Alphabet[(v>>18)&63];
    zOut[j++] = b64Alphabet[(v>>12)&63];
    zOut[j++] = i+1<n ? b64Alphabet[(v>>6)&63] : '=';
    zOut[j++] = '=';
  }
  zOut[j] = 0;
  return j;
}

/* Value of one base64 character, -1 for anything else. */
static int b64Value(char c){
  if( c>='A' && c<='Z' ) return c-'A';
  if( c>='a' && c<='z' ) return c-'a'+26;
  if( c>='0' && c<='9' ) return c-'0'+52;
  if( c=='+' ) return 62;
  if( c=='/' ) return 63;
  return -1;
}

/* See hash.h. */
long profsumBase64Decode(const char *zIn, size_t nIn, unsigned char *aOut, size_t nOutMax){
  size_t i, j = 0;
  if( nIn%4 ) return -1;
  for(i=0; i<nIn; i+=4){
    int v0 = b64Value(zIn[i]), v1 = b64Value(zIn[i+1]);
    int v2 = zIn[i+2]=='=' ? -2 : b64Value(zIn[i+2]);
    int v3 = zIn[i+3]=='=' ? -2 : b64Value(zIn[i+3]);
    int last = i+4==nIn;
    if( v0<0 || v1<0 || v2==-1 || v3==-1 ) return -1;
    if( (v2==-2 || v3==-2) && !last ) return -1;
    if( v2==-2 && v3!=-2 ) return -1;
    if( j>=nOutMax ) return -1;
    aOut[j++] = (unsigned char)((v0<<2) | (v1>>4));
    if( v2>=0 ){
      if( j>=nOutMax ) return -1;
      aOut[j++] = (unsigned char)(((v1&15)<<4) | (v2>>2));
      if( v3>=0 ){
        if( j>=nOutMax ) return -1;
        aOut[j++] = (unsigned char)(((v2&3)<<6) | v3);
      }
    }
  }
  return (long)j;
}
