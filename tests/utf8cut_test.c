/*
** tests/utf8cut_test.c — unit tests of profsumUtf8Cut (ext/util/utf8cut.c):
** a text cut to a byte budget at a UTF-8 character boundary.  Built with
** AddressSanitizer and UBSan by `make build/utf8cut_test` (run by
** tests/test_utf8cut.py in `make test`), so a read outside the text fails
** it (each text is copied to an allocation of its exact length).
**
**   build/utf8cut_test         one line per check, then "N passed, N failed";
**                              exit 1 on any failure
**
** The checks:
**   - edge cases: a text within the budget, a budget of 0, a cut before,
**     inside and after characters of 2, 3 and 4 bytes, a stray
**     continuation byte, a cut sequence, an overlong form, an encoded
**     surrogate, a code point beyond U+10FFFF;
**   - every text of up to 5 bytes over an alphabet of lead, continuation
**     and ASCII bytes, every budget: the cut is the one a forward walk over
**     the characters gives (a whole RFC 3629 sequence, or any other byte
**     alone), decoded here independently of ext/util;
**   - every text of up to 6 characters of 1 to 4 bytes, every budget: the
**     cut is valid UTF-8, the longest such prefix within the budget, and
**     the one that moving back over continuation bytes gives.
*/
#include "profsum_int.h"
#include "utf8cut.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nPass = 0, nFail = 0;

static void check(int ok, const char *zWhat){
  printf("%s %s\n", ok ? "ok  " : "FAIL", zWhat);
  if( ok ) nPass++; else nFail++;
}

/* profsumUtf8Cut of z[0..n) with budget nMax, z copied to an allocation
** of exactly n bytes (a read past it is a sanitizer error). */
static int64_t cut(const char *z, int64_t n, int64_t nMax){
  char *c = malloc(n ? (size_t)n : 1);
  int64_t r;
  if( c==0 ){ printf("FAIL out of memory\n"); exit(1); }
  memcpy(c, z, (size_t)n);
  r = profsumUtf8Cut(c, n, nMax);
  free(c);
  return r;
}

/* The length of the RFC 3629 sequence at u[0..n) (n >= 1), or 0 when it
** is none: decoded to its code point, which must need exactly that many
** bytes, be no surrogate and be at most U+10FFFF. */
static int seqLen(const unsigned char *u, int64_t n){
  int len, i;
  unsigned c;
  if( u[0]<0x80 ) return 1;
  if( (u[0] & 0xE0)==0xC0 ){ len = 2; c = u[0] & 0x1F; }
  else if( (u[0] & 0xF0)==0xE0 ){ len = 3; c = u[0] & 0x0F; }
  else if( (u[0] & 0xF8)==0xF0 ){ len = 4; c = u[0] & 0x07; }
  else return 0;
  if( n<len ) return 0;
  for(i=1; i<len; i++){
    if( (u[i] & 0xC0)!=0x80 ) return 0;
    c = (c<<6) | (u[i] & 0x3F);
  }
  if( (len==2 && c<0x80) || (len==3 && c<0x800) || (len==4 && c<0x10000) ) return 0;
  if( (c>=0xD800 && c<=0xDFFF) || c>0x10FFFF ) return 0;
  return len;
}

/* The cut a forward walk gives: characters taken while they fit. */
static int64_t cutByWalk(const unsigned char *u, int64_t n, int64_t nMax){
  int64_t i = 0;
  while( i<n ){
    int k = seqLen(u+i, n-i);
    if( k==0 ) k = 1;
    if( i+k>nMax ) break;
    i += k;
  }
  return i;
}

/* The cut that moving back over continuation bytes from nMax gives. */
static int64_t cutByBackWalk(const unsigned char *u, int64_t n, int64_t nMax){
  if( n<=nMax ) return n;
  while( nMax>0 && (u[nMax] & 0xC0)==0x80 ) nMax--;
  return nMax;
}

/* 1 when u[0..n) is valid UTF-8. */
static int isValid(const unsigned char *u, int64_t n){
  int64_t i = 0;
  while( i<n ){
    int k = seqLen(u+i, n-i);
    if( k==0 ) return 0;
    i += k;
  }
  return 1;
}

/* One edge case: the cut of z (n bytes) with budget nMax is want. */
static void edge(const char *zWhat, const char *z, int64_t n, int64_t nMax, int64_t want){
  char zMsg[200];
  int64_t got = cut(z, n, nMax);
  snprintf(zMsg, sizeof(zMsg), "%s (got %lld, want %lld)", zWhat, (long long)got, (long long)want);
  check(got==want, zMsg);
}

int main(void){
  static const unsigned char aAlpha[] = {
    'a', 0x80, 0xBF, 0x9F, 0xA0, 0x8F, 0x90, 0xC2, 0xC0, 0xE0, 0xE2, 0xED, 0xF0, 0xF4, 0xF5
  };
  static const char *const azChar[] = { "a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80" };
  const int nAlpha = (int)sizeof(aAlpha);
  unsigned char a[8];
  int64_t nCase = 0, nBad = 0;
  int len, i, j;

  setvbuf(stdout, 0, _IOLBF, 0);

  /* 1. edge cases */
  edge("within the budget: the whole text", "abc", 3, 3, 3);
  edge("within a larger budget", "\xE2\x82\xAC", 3, 10, 3);
  edge("an empty text", "", 0, 0, 0);
  edge("a budget of 0", "abc", 3, 0, 0);
  edge("a budget of 0 before a character", "\xC3\xA9", 2, 0, 0);
  edge("ASCII cut at the budget", "abcdef", 6, 4, 4);
  edge("before a 2-byte character", "ab\xC3\xA9", 4, 2, 2);
  edge("inside a 2-byte character", "ab\xC3\xA9", 4, 3, 2);
  edge("after a 2-byte character", "ab\xC3\xA9z", 5, 4, 4);
  edge("a 3-byte character, 1 byte of it in", "a\xE2\x82\xAC", 4, 2, 1);
  edge("a 3-byte character, 2 bytes of it in", "a\xE2\x82\xAC", 4, 3, 1);
  edge("a 4-byte character, 1 byte of it in", "a\xF0\x9F\x98\x80", 5, 2, 1);
  edge("a 4-byte character, 3 bytes of it in", "a\xF0\x9F\x98\x80", 5, 4, 1);
  edge("a 4-byte character whole", "a\xF0\x9F\x98\x80z", 6, 5, 5);
  edge("a 4-byte character at the start, cut inside", "\xF0\x9F\x98\x80", 4, 3, 0);
  edge("a stray continuation byte is a character", "ab\x80\x80", 4, 3, 3);
  edge("stray continuation bytes after a whole character", "\xC3\xA9\x80\x80", 4, 3, 3);
  edge("a continuation byte 4 back is no lead", "\x80\x80\x80\x80\x80", 5, 4, 4);
  edge("a cut sequence is bytes alone", "a\xE2\x82z", 4, 2, 2);
  edge("a lead byte at the end of a short text", "ab\xE2", 3, 2, 2);
  edge("a cut sequence at the end of the text", "a\xE2\x82", 3, 2, 2);
  edge("an overlong form (C0 80) is bytes alone", "a\xC0\x80", 3, 2, 2);
  edge("an overlong 3-byte form is bytes alone", "a\xE0\x80\x80", 4, 3, 3);
  edge("an encoded surrogate is bytes alone", "a\xED\xA0\x80", 4, 3, 3);
  edge("the last code point below surrogates is whole", "a\xED\x9F\xBF", 4, 3, 1);
  edge("beyond U+10FFFF is bytes alone", "a\xF4\x90\x80\x80", 5, 4, 4);
  edge("U+10FFFF is whole", "a\xF4\x8F\xBF\xBF", 5, 4, 1);
  edge("a byte F5 is alone", "a\xF5\x80\x80\x80", 5, 3, 3);

  /* 2. every short text over the alphabet, every budget: the forward walk */
  for(len=0; len<=5; len++){
    int64_t nText = 1, t;
    for(i=0; i<len; i++) nText *= nAlpha;
    for(t=0; t<nText; t++){
      int64_t v = t, nMax;
      for(i=0; i<len; i++){ a[i] = aAlpha[v % nAlpha]; v /= nAlpha; }
      for(nMax=0; nMax<=len+1; nMax++){
        int64_t got = cut((const char*)a, len, nMax);
        nCase++;
        if( got!=cutByWalk(a, len, nMax) ){
          if( nBad++<5 ){
            printf("     text");
            for(j=0; j<len; j++) printf(" %02x", a[j]);
            printf(", budget %lld: got %lld, want %lld\n", (long long)nMax, (long long)got,
                   (long long)cutByWalk(a, len, nMax));
          }
        }
      }
    }
  }
  {
    char zMsg[200];
    snprintf(zMsg, sizeof(zMsg), "%lld cuts of every text of up to 5 bytes are the forward walk's",
             (long long)nCase);
    check(nBad==0, zMsg);
  }

  /* 3. valid UTF-8: valid, longest, and as moving back gives */
  nCase = nBad = 0;
  for(len=0; len<=6; len++){
    int64_t nText = 1, t;
    for(i=0; i<len; i++) nText *= 4;
    for(t=0; t<nText; t++){
      unsigned char b[32];
      int64_t v = t, n = 0, nMax;
      for(i=0; i<len; i++){
        const char *c = azChar[v % 4];
        memcpy(b+n, c, strlen(c)); n += (int64_t)strlen(c);
        v /= 4;
      }
      for(nMax=0; nMax<=n+1; nMax++){
        int64_t got = cut((const char*)b, n, nMax), k;
        int longest = 1;
        for(k=got+1; k<=nMax && k<=n; k++) if( isValid(b, k) ) longest = 0;
        nCase++;
        if( got>nMax && got!=n ) nBad++;
        else if( !isValid(b, got) || !longest || got!=cutByBackWalk(b, n, nMax) ) nBad++;
      }
    }
  }
  {
    char zMsg[200];
    snprintf(zMsg, sizeof(zMsg), "%lld cuts of valid UTF-8 are valid, the longest, and the same "
             "as moving back over continuation bytes", (long long)nCase);
    check(nBad==0, zMsg);
  }

  printf("%d passed, %d failed\n", nPass, nFail);
  return nFail ? 1 : 0;
}
