/*
** tests/hash_test.c — unit tests of profsumBytesHash (ext/util/hash.c), the
** hash of the string pool, the kernel tally and the signature cache.  Built
** with AddressSanitizer and UBSan by `make build/hash_test` (run by
** tests/test_hash.py in `make test`), so a read outside the text fails it
** (each text is copied to an allocation of its exact length).
**
**   build/hash_test            one line per check, then "N passed, N failed";
**                              exit 1 on any failure
**
** The checks:
**   - below 64 bytes the hash is the one-chain definition written out here
**     (eight bytes a step, the rest as a zero-filled little-endian word,
**     the final mix), for every length and eight alignments;
**   - every length from 0 to 300: the same bytes at any alignment give the
**     same hash, and flipping any one bit changes it;
**   - 200,000 texts of typical shapes (long common prefixes, a counter at
**     the end, lengths around 64): the low 16 bits that pick a slot spread
**     them as a uniform hash would (the largest bucket, and the empty
**     buckets, within bounds far outside chance);
**   - the two long_names of a test that needs a collision do collide.
*/
#include "profsum_int.h"
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nPass = 0, nFail = 0;

static void check(int ok, const char *zWhat){
  printf("%s %s\n", ok ? "ok  " : "FAIL", zWhat);
  if( ok ) nPass++; else nFail++;
}

/* profsumBytesHash of z[0..n) copied to an allocation of exactly n bytes
** placed at offset off of a larger one's end (a read past it, or before
** it, is a sanitizer error). */
static uint64_t hashAt(const unsigned char *z, int64_t n, int off){
  unsigned char *a = malloc((size_t)(n + off) + 1);
  uint64_t h;
  if( a==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
  memcpy(a + off, z, (size_t)n);
  h = profsumBytesHash((const char*)a + off, n);
  free(a);
  return h;
}

/* The one-chain definition the hash keeps below 64 bytes. */
static uint64_t oneChain(const unsigned char *z, int64_t n){
  uint64_t h = 0x243f6a8885a308d3ULL ^ (uint64_t)n, w;
  int64_t i = 0, j;
  unsigned __int128 r;
  for(; i+8<=n; i+=8){
    w = 0;
    for(j=0; j<8; j++) w |= (uint64_t)z[i+j] << (8*j);
    r = (unsigned __int128)(h ^ w) * 0x9e3779b97f4a7c15ULL;
    h = (uint64_t)r ^ (uint64_t)(r>>64);
  }
  if( i<n ){
    w = 0;
    for(j=0; i+j<n; j++) w |= (uint64_t)z[i+j] << (8*j);
    r = (unsigned __int128)(h ^ w) * 0xd6e8feb86659fd93ULL;
    h = (uint64_t)r ^ (uint64_t)(r>>64);
  }
  h ^= h>>33; h *= 0xff51afd7ed558ccdULL; h ^= h>>33;
  h *= 0xc4ceb9fe1a85ec53ULL; h ^= h>>33;
  return h;
}

/* A 64-bit generator for test bytes (xorshift*). */
static uint64_t rngState = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void){
  rngState ^= rngState>>12; rngState ^= rngState<<25; rngState ^= rngState>>27;
  return rngState * 0x2545f4914f6cdd1dULL;
}

int main(void){
  unsigned char z[320];
  char zMsg[160];
  int64_t n;
  int off, bit, ok;
  for(n=0; n<(int64_t)sizeof(z); n++) z[n] = (unsigned char)rnd();

  /* below 64 bytes: the one-chain definition, at eight alignments */
  ok = 1;
  for(n=0; n<64 && ok; n++){
    for(off=0; off<8; off++){
      if( hashAt(z, n, off)!=oneChain(z, n) ){ ok = 0; break; }
    }
  }
  snprintf(zMsg, sizeof(zMsg), "lengths 0-63 equal the one-chain definition%s",
           ok ? "" : " (not at some length)");
  check(ok, zMsg);

  /* every length to 300: alignment does not matter, every bit counts */
  for(n=0; n<=300; n++){
    uint64_t h0 = hashAt(z, n, 0);
    int same = 1, flips = 1;
    for(off=1; off<8; off++) if( hashAt(z, n, off)!=h0 ) same = 0;
    for(bit=0; bit<8*n; bit++){
      z[bit/8] ^= (unsigned char)(1u << (bit%8));
      if( hashAt(z, n, bit%8)==h0 ) flips = 0;
      z[bit/8] ^= (unsigned char)(1u << (bit%8));
    }
    if( n%50==0 || !same || !flips ){
      snprintf(zMsg, sizeof(zMsg), "length %d: alignment-free %s, every bit flip changes it %s",
               (int)n, same ? "yes" : "NO", flips ? "yes" : "NO");
      check(same && flips, zMsg);
    }
  }
  /* a length changes the hash even when the bytes added are zeros */
  memset(z, 0, 200);
  ok = 1;
  for(n=0; n<200; n++) if( hashAt(z, n, 0)==hashAt(z, n+1, 0) ) ok = 0;
  check(ok, "runs of zero bytes of different lengths hash differently");

  /* slot spread of 200,000 kernel-like names over 65,536 slots */
  {
    enum { NKEY = 200000, NSLOT = 65536 };
    static unsigned cnt[NSLOT];
    static const char *azPre[4] = {
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(Params)#",
      "fusion.", "ampere_sgemm_128x64_nn_", "%convolution.42 = f32[8,128,128,256]{3,2,1,0} convolution(%p.1, %p.2), id=" };
    unsigned mx = 0, nEmpty = 0;
    int i;
    memset(cnt, 0, sizeof(cnt));
    for(i=0; i<NKEY; i++){
      char zKey[200];
      int m = snprintf(zKey, sizeof(zKey), "%s%d", azPre[i%4], i);
      cnt[profsumBytesHash(zKey, m) & (NSLOT-1)]++;
    }
    for(i=0; i<NSLOT; i++){ if( cnt[i]>mx ) mx = cnt[i]; if( cnt[i]==0 ) nEmpty++; }
    /* a uniform hash: mean 3.05 per slot, about 3,100 empty slots (e^-3.05
    ** of 65,536, sd ~54), a largest bucket near 13 */
    snprintf(zMsg, sizeof(zMsg), "200,000 names over 65,536 slots: largest %u (at most 20), empty %u (2,800-3,400)",
             mx, nEmpty);
    check(mx<=20 && nEmpty>=2800 && nEmpty<=3400, zMsg);
  }

  /* Two texts the hash does not tell apart (a 16-byte text's second word
  ** is mixed as the first word's state XOR it, so a second word can be
  ** picked to meet any state).  tests/test_reference_edges.py gives them
  ** to two ops as long_names and checks each op keeps its own shape
  ** signature: the check is only meaningful while they collide. */
  {
    static const char zA[] = "=f32[00]#    !  ", zB[] = "=f32[25]^1MPR#X!";
    check(profsumBytesHash(zA, 16)==profsumBytesHash(zB, 16),
          "the two long_names of the signature-collision test share a hash");
  }

  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
