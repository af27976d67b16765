/*
** sha256_speed.c — throughput of profsum's SHA-256 (ext/hash.c), the hash
** of every imported trace file: the block code the CPU allows (the x86 SHA
** extensions when present) and, with PROFSUM_SHA256=portable, the portable
** C code.  Built and run by `make bench-sha256`; prints one line per run:
**   <implementation> <MB> MB in <s> s: <MB/s> MB/s (digest <hex>)
** The data are 256 MiB of a fixed pseudo-random pattern (not from a file:
** the figure is the hash alone, without I/O).
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "hash.h"

int main(void){
  const size_t n = (size_t)256<<20;
  unsigned char *a = malloc(n);
  uint32_t x = 2463534242u;
  char zHex[65];
  struct timespec t0, t1;
  double dt;
  size_t i;
  ProfsumSha256 s;
  if( a==0 ){ fprintf(stderr, "sha256_speed: out of memory\n"); return 1; }
  for(i=0; i<n; i++){ x ^= x<<13; x ^= x>>17; x ^= x<<5; a[i] = (unsigned char)x; }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  profsumSha256Init(&s);
  profsumSha256Update(&s, a, n);
  profsumSha256Hex(&s, zHex);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec)/1e9;
  printf("%s: %.0f MB in %.3f s: %.0f MB/s (digest %s)\n", profsumSha256Impl(), n/1e6, dt, n/1e6/dt, zHex);
  free(a);
  return 0;
}
