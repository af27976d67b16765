/*
** pytext.c — Python's reading of text (pytext.h).
*/
#include "pytext.h"

/* The first code point of every run of ten Unicode decimal digits above
** ASCII (general category Nd, Unicode 15.1): each run is 0-9 in order. */
static const int aDigitBlock[] = {
  0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66,
  0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810,
  0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
  0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30,
  0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
  0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50,
  0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6,
  0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950, 0x1FBF0
};

/* See pytext.h. */
int profsumUtf8Decode(const unsigned char *z, int64_t n, int64_t i, int *pLen){
  int c = z[i];
  *pLen = 1;
  if( c<0x80 ) return c;
  if( c>=0xC2 && c<=0xDF ){
    if( i+1<n && (z[i+1]&0xC0)==0x80 ){
      *pLen = 2;
      return ((c&0x1F)<<6) | (z[i+1]&0x3F);
    }
  }else if( c>=0xE0 && c<=0xEF ){
    if( i+2<n && (z[i+1]&0xC0)==0x80 && (z[i+2]&0xC0)==0x80 ){
      int v = ((c&0x0F)<<12) | ((z[i+1]&0x3F)<<6) | (z[i+2]&0x3F);
      if( v>=0x800 ){ *pLen = 3; return v; }
    }
  }else if( c>=0xF0 && c<=0xF4 ){
    if( i+3<n && (z[i+1]&0xC0)==0x80 && (z[i+2]&0xC0)==0x80 && (z[i+3]&0xC0)==0x80 ){
      int v = ((c&0x07)<<18) | ((z[i+1]&0x3F)<<12) | ((z[i+2]&0x3F)<<6) | (z[i+3]&0x3F);
      if( v>=0x10000 && v<=0x10FFFF ){ *pLen = 4; return v; }
    }
  }
  return PROFSUM_BADBYTE;
}

/* See pytext.h. */
int profsumPyIsSpace(int c){
  if( c<0x80 ) return (c>=0x09 && c<=0x0D) || (c>=0x1C && c<=0x20);
  return c==0x85 || c==0xA0 || c==0x1680 || (c>=0x2000 && c<=0x200A)
      || c==0x2028 || c==0x2029 || c==0x202F || c==0x205F || c==0x3000;
}

/* See pytext.h. */
int profsumPyDigit(int c){
  int lo = 0, hi = (int)(sizeof(aDigitBlock)/sizeof(aDigitBlock[0])) - 1;
  if( c>='0' && c<='9' ) return c - '0';
  if( c<aDigitBlock[0] ) return -1;
  while( lo<hi ){                      /* the last block starting at or before c */
    int mid = (lo+hi+1)/2;
    if( aDigitBlock[mid]<=c ) lo = mid; else hi = mid-1;
  }
  return c<aDigitBlock[lo]+10 ? c - aDigitBlock[lo] : -1;
}

/* The start of the character that ends at z[e-1] (e > i): the lead byte of
** a valid sequence ending exactly there, else e-1 (a lone byte). */
static int64_t charBefore(const unsigned char *z, int64_t i, int64_t e, int *pc){
  int64_t s = e - 1;
  int len;
  while( s>i && s>e-4 && (z[s]&0xC0)==0x80 ) s--;
  *pc = profsumUtf8Decode(z, e, s, &len);
  if( s+len!=e ){ *pc = PROFSUM_BADBYTE; return e-1; }
  return s;
}

/* See pytext.h. */
void profsumPyStrip(const unsigned char *z, int64_t *pi, int64_t *pe){
  int64_t i = *pi, e = *pe;
  int len, c;
  while( i<e && profsumPyIsSpace(profsumUtf8Decode(z, e, i, &len)) ) i += len;
  while( e>i ){
    int64_t s = charBefore(z, i, e, &c);
    if( !profsumPyIsSpace(c) ) break;
    e = s;
  }
  *pi = i;
  *pe = e;
}

/* Whitespace to int(): it maps every non-ASCII whitespace character to a
** space, then strips C's isspace() (so 0x1C-0x1F, which strip() removes,
** stay and make the text no integer). */
static int intSpace(int c){
  return c<0x80 ? (c==' ' || (c>=0x09 && c<=0x0D)) : profsumPyIsSpace(c);
}

/* See pytext.h. */
int profsumPyInt(const char *zText, int64_t n, int64_t *pOut){
  const unsigned char *z = (const unsigned char*)zText;
  int64_t i = 0, e = n;
  int neg = 0, nd = 0, prevUnder = 0, len, d, c;
  uint64_t v = 0;
  while( i<e && intSpace(profsumUtf8Decode(z, e, i, &len)) ) i += len;
  while( e>i ){
    int64_t s = charBefore(z, i, e, &c);
    if( !intSpace(c) ) break;
    e = s;
  }
  if( i<e && (z[i]=='+' || z[i]=='-') ){ neg = z[i]=='-'; i++; }
  while( i<e ){
    if( z[i]=='_' ){
      /* only between two digits */
      if( nd==0 || prevUnder || i+1>=e ) return -1;
      prevUnder = 1;
      i++;
      continue;
    }
    d = profsumPyDigit(profsumUtf8Decode(z, e, i, &len));
    if( d<0 ) return -1;
    if( v > (UINT64_C(0x7fffffffffffffff) + (uint64_t)neg - (uint64_t)d)/10 ) return -1;
    v = v*10 + (uint64_t)d;
    nd++;
    prevUnder = 0;
    i += len;
  }
  if( nd==0 || prevUnder ) return -1;
  *pOut = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}
