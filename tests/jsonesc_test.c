/*
** tests/jsonesc_test.c — unit tests of profsumJsonPlainRun
** (ext/util/jsonesc.h): how many bytes at the start of a text a JSON
** string writes as they are.  Built with AddressSanitizer and UBSan by
** `make build/jsonesc_test` (run by tests/test_jsonesc.py in `make test`),
** so a read outside the text fails it: each text is copied to an
** allocation of its exact length, and the word-wide paths must never read
** past it.
**
**   build/jsonesc_test         one line per group of checks, then
**                              "N passed, N failed"; exit 1 on any failure
**   build/jsonesc_test_words   the same built with -U__SSE2__: the word
**                              loop over whole strings
**
** Every answer is compared with a byte-wise walk written here (a byte
** below 0x20, a quote or a backslash ends the run):
**   - every length from 0 to 80, every position of each kind of byte that
**     ends a run (0x00, 0x1f, '"', '\\'), alone and with a second one
**     after it, over plain ASCII and over bytes of 0x80 and up (UTF-8
**     sequences and the bytes just above each ending byte: 0x20, 0x23,
**     0x5d, 0xa0, 0xdc, 0xff, which a word-wide test must not take for
**     ending bytes);
**   - every text of up to 4 bytes over an alphabet of ending and
**     neighbouring bytes;
**   - two million random texts of up to 40 bytes, skewed toward those
**     bytes.
*/
#include "profsum_int.h"
#include "jsonesc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nPass = 0, nFail = 0;

/* The run as a byte-wise walk decides it. */
static int64_t plainRunRef(const unsigned char *z, int64_t n){
  int64_t i;
  for(i=0; i<n; i++){
    if( z[i]<0x20 || z[i]=='"' || z[i]=='\\' ) break;
  }
  return i;
}

/* profsumJsonPlainRun of a[0..n), copied to an allocation of exactly n
** bytes, against the walk; 1 when they agree (a failure is printed once
** per group by the caller's count). */
static int checkOne(const unsigned char *a, int64_t n){
  unsigned char *z = malloc(n>0 ? (size_t)n : 1);
  int64_t got, want;
  if( z==0 ){ fprintf(stderr, "out of memory\n"); exit(2); }
  if( n>0 ) memcpy(z, a, (size_t)n);
  got = profsumJsonPlainRun(z, n);
  want = plainRunRef(z, n);
  free(z);
  if( got!=want ){
    int64_t i;
    printf("FAIL n=%lld got %lld want %lld:", (long long)n, (long long)got, (long long)want);
    for(i=0; i<n; i++) printf(" %02x", a[i]);
    printf("\n");
    return 0;
  }
  return 1;
}

/* Record the outcome of a group of checks. */
static void report(const char *zGroup, int64_t nChecked, int64_t nBad){
  if( nBad==0 ){
    nPass++;
    printf("ok   %s (%lld texts)\n", zGroup, (long long)nChecked);
  }else{
    nFail++;
    printf("FAIL %s: %lld of %lld texts\n", zGroup, (long long)nBad, (long long)nChecked);
  }
}

static const unsigned char aEnd[] = { 0x00, 0x1f, '"', '\\' };
/* bytes next to the ending ones, and high bytes: never ending */
static const unsigned char aNear[] = { 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xa0,
                                       0xa2, 0xdc, 0xe2, 0xff };

/* Every length and position over the background byte bg (or a pattern
** of high bytes when bg is 0). */
static void positions(const char *zGroup, unsigned char bg){
  unsigned char a[96];
  int64_t n, p, q, nChecked = 0, nBad = 0;
  size_t e, e2;
  for(n=0; n<=80; n++){
    for(p=0; p<n; p++) a[p] = bg ? bg : (unsigned char)(0x80 + (p*37)%128);
    nChecked++; nBad += !checkOne(a, n);
    for(p=0; p<n; p++){
      for(e=0; e<sizeof(aEnd); e++){
        unsigned char keep = a[p];
        a[p] = aEnd[e];
        nChecked++; nBad += !checkOne(a, n);
        for(q=p+1; q<n && q<p+10; q++){
          for(e2=0; e2<sizeof(aEnd); e2++){
            unsigned char keep2 = a[q];
            a[q] = aEnd[e2];
            nChecked++; nBad += !checkOne(a, n);
            a[q] = keep2;
          }
        }
        a[p] = keep;
      }
    }
  }
  report(zGroup, nChecked, nBad);
}

/* Every text of up to 4 bytes over the ending and neighbouring bytes. */
static void smallTexts(void){
  unsigned char alpha[sizeof(aEnd)+sizeof(aNear)+1], a[4];
  int nAlpha = 0, n, k;
  int64_t nChecked = 0, nBad = 0;
  long idx, total;
  memcpy(alpha, aEnd, sizeof(aEnd)); nAlpha += (int)sizeof(aEnd);
  memcpy(alpha+nAlpha, aNear, sizeof(aNear)); nAlpha += (int)sizeof(aNear);
  alpha[nAlpha++] = 'a';
  for(n=0; n<=4; n++){
    total = 1;
    for(k=0; k<n; k++) total *= nAlpha;
    for(idx=0; idx<total; idx++){
      long v = idx;
      for(k=0; k<n; k++){ a[k] = alpha[v % nAlpha]; v /= nAlpha; }
      nChecked++; nBad += !checkOne(a, n);
    }
  }
  report("every text of up to 4 bytes over ending and neighbouring bytes", nChecked, nBad);
}

/* Random texts, most bytes plain, some ending or neighbouring. */
static void randomTexts(void){
  unsigned char a[40];
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  int64_t i, nChecked = 0, nBad = 0;
  for(i=0; i<2000000; i++){
    int n, k;
    s = s*6364136223846793005ULL + 1442695040888963407ULL;
    n = (int)((s>>33) % 41);
    for(k=0; k<n; k++){
      unsigned r;
      s = s*6364136223846793005ULL + 1442695040888963407ULL;
      r = (unsigned)(s>>40);
      if( r%97==0 ) a[k] = aEnd[(r>>8)%sizeof(aEnd)];
      else if( r%5==0 ) a[k] = aNear[(r>>8)%sizeof(aNear)];
      else a[k] = (unsigned char)(0x20 + (r>>8)%0x60);
      if( a[k]=='"' || a[k]=='\\' ) a[k] = 'x';
    }
    nChecked++; nBad += !checkOne(a, n);
  }
  report("two million random texts of up to 40 bytes", nChecked, nBad);
}

int main(void){
  positions("every length to 80, every position, over ASCII", 'a');
  positions("every length to 80, every position, over spaces", ' ');
  positions("every length to 80, every position, over high bytes", 0);
  smallTexts();
  randomTexts();
  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
