/*
** utf8cut.c — a text cut to a byte budget at a UTF-8 character boundary
** (see utf8cut.h).
*/
#include "profsum_int.h"
#include "utf8rule.h"
#include "utf8cut.h"

/* See utf8cut.h. */
int64_t profsumUtf8Cut(const char *z, int64_t n, int64_t nMax){
  const unsigned char *u = (const unsigned char*)z;
  int64_t s = nMax;
  if( n<=nMax ) return n;
  if( nMax<=0 ) return 0;
  /* z[nMax] is inside a sequence only when it is a continuation byte
  ** (10xxxxxx) of a lead byte at most 3 bytes before it whose sequence is
  ** whole and reaches past nMax */
  while( s>0 && nMax-s<3 && (u[s] & 0xC0)==0x80 ) s--;
  if( s<nMax && u[s]>=0xC0 ){
    int k = profsumUtf8SeqLen(u+s, u+n);
    if( k>0 && s+k>nMax ) return s;
  }
  return nMax;
}
