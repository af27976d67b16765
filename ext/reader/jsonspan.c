/*
** jsonspan.c — the text of a JSON value span of the scanner
** (profsum_reader.h): a string decoded (escapes, U+FFFD for bytes that
** are not UTF-8), any value repaired into valid JSON.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "jsonlex.h"      /* profsumUtf8Len */

#include <string.h>

typedef unsigned char u8;

/* The longest escaped text profsumSpanIs decodes (6 × its longest literal). */
#define SPAN_IS_MAX 256


/* Grow the scratch buffer to at least n bytes. */
static int scratchReserve(char **ppBuf, int64_t *pnBuf, int64_t n){
  if( n>*pnBuf ){
    int64_t nNew = *pnBuf ? *pnBuf : 256;
    char *a;
    while( nNew<n ) nNew *= 2;
    a = sqlite3_realloc64(*ppBuf, (sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    *ppBuf = a;
    *pnBuf = nNew;
  }
  return SQLITE_OK;
}

static unsigned hexVal(char c){
  if( c>='0' && c<='9' ) return (unsigned)(c-'0');
  if( c>='a' && c<='f' ) return (unsigned)(c-'a'+10);
  return (unsigned)(c-'A'+10);
}

/* Append the UTF-8 encoding of code point u at *pz. */
static char *putUtf8(char *z, unsigned u){
  if( u<0x80 ){ *z++ = (char)u; }
  else if( u<0x800 ){ *z++ = (char)(0xC0|(u>>6)); *z++ = (char)(0x80|(u&0x3F)); }
  else if( u<0x10000 ){
    *z++ = (char)(0xE0|(u>>12)); *z++ = (char)(0x80|((u>>6)&0x3F));
    *z++ = (char)(0x80|(u&0x3F));
  }else{
    *z++ = (char)(0xF0|(u>>18)); *z++ = (char)(0x80|((u>>12)&0x3F));
    *z++ = (char)(0x80|((u>>6)&0x3F)); *z++ = (char)(0x80|(u&0x3F));
  }
  return z;
}

/* Decode the string span s (escapes, U+FFFD for bytes that are not UTF-8)
** into o, which has room for 3*s->n+1 bytes (s->n+1 without
** PROFSUM_SF_BADUTF8).  Returns the length written. */
static int64_t spanDecode(const ProfsumSpan *s, char *o0){
  const char *z = s->z, *e = s->z + s->n;
  char *o = o0;
  int bBad = (s->flags & PROFSUM_SF_BADUTF8)!=0;
  while( z<e ){
    if( bBad && (u8)*z>=0x80 ){
      int n = profsumUtf8Len((const u8*)z, (const u8*)e);
      if( n<=0 ){ o = putUtf8(o, 0xFFFD); z++; }
      else{ memcpy(o, z, (size_t)n); o += n; z += n; }
      continue;
    }
    if( *z!='\\' ){ *o++ = *z++; continue; }
    switch( z[1] ){
      case 'b': *o++ = '\b'; z += 2; break;
      case 'f': *o++ = '\f'; z += 2; break;
      case 'n': *o++ = '\n'; z += 2; break;
      case 'r': *o++ = '\r'; z += 2; break;
      case 't': *o++ = '\t'; z += 2; break;
      case 'u': {
        unsigned u = (hexVal(z[2])<<12)|(hexVal(z[3])<<8)|(hexVal(z[4])<<4)|hexVal(z[5]);
        z += 6;
        if( u>=0xD800 && u<=0xDBFF ){
          if( e-z>=6 && z[0]=='\\' && z[1]=='u' ){
            unsigned u2 = (hexVal(z[2])<<12)|(hexVal(z[3])<<8)|(hexVal(z[4])<<4)|hexVal(z[5]);
            if( u2>=0xDC00 && u2<=0xDFFF ){
              u = 0x10000 + ((u-0xD800)<<10) + (u2-0xDC00);
              z += 6;
            }else{
              u = 0xFFFD;
            }
          }else{
            u = 0xFFFD;
          }
        }else if( u>=0xDC00 && u<=0xDFFF ){
          u = 0xFFFD;
        }
        o = putUtf8(o, u);
        break;
      }
      default: *o++ = z[1]; z += 2; break;   /* \" \\ \/ */
    }
  }
  return o - o0;
}

/* See profsum_reader.h. */
int profsumSpanLoneSurrogate(const ProfsumSpan *s){
  const char *z = s->z, *e = s->z + s->n;
  if( s->type!=PROFSUM_JT_STRING ) return 0;
  while( z<e ){
    unsigned u;
    if( *z!='\\' ){ z++; continue; }
    if( e-z<6 || z[1]!='u' ){ z += 2; continue; }
    u = (hexVal(z[2])<<12)|(hexVal(z[3])<<8)|(hexVal(z[4])<<4)|hexVal(z[5]);
    z += 6;
    if( u>=0xDC00 && u<=0xDFFF ) return 1;          /* a low half alone */
    if( u>=0xD800 && u<=0xDBFF ){
      unsigned u2;
      if( e-z<6 || z[0]!='\\' || z[1]!='u' ) return 1;
      u2 = (hexVal(z[2])<<12)|(hexVal(z[3])<<8)|(hexVal(z[4])<<4)|hexVal(z[5]);
      if( u2<0xDC00 || u2>0xDFFF ) return 1;
      z += 6;                                        /* a pair */
    }
  }
  return 0;
}

/* See profsum_reader.h. */
int profsumSpanText(const ProfsumSpan *s, char **ppBuf, int64_t *pnBuf,
                    const char **pzOut, int64_t *pnOut){
  if( !(s->flags & (PROFSUM_SF_ESCAPE|PROFSUM_SF_BADUTF8)) ){
    *pzOut = s->z;
    *pnOut = s->n;
    return SQLITE_OK;
  }
  /* a byte that is not UTF-8 becomes U+FFFD (3 bytes) */
  if( scratchReserve(ppBuf, pnBuf, ((s->flags & PROFSUM_SF_BADUTF8) ? 3*s->n : s->n)+1) ){
    return SQLITE_NOMEM;
  }
  *pzOut = *ppBuf;
  *pnOut = spanDecode(s, *ppBuf);
  return SQLITE_OK;
}

/* See profsum_reader.h. */
int64_t profsumSpanDecodeInto(const ProfsumSpan *s, char *a, int64_t nA){
  if( 3*s->n+1 > nA ) return -1;
  return spanDecode(s, a);
}

/* See profsum_reader.h. */
int profsumSpanIs(const ProfsumSpan *s, const char *zLit, int64_t nLit){
  char a[3*SPAN_IS_MAX+1];
  if( s->type!=PROFSUM_JT_STRING ) return 0;
  if( !(s->flags & (PROFSUM_SF_ESCAPE|PROFSUM_SF_BADUTF8)) ){
    return s->n==nLit && memcmp(s->z, zLit, (size_t)nLit)==0;
  }
  /* every byte decoded takes at most 6 of the text (\u0041), so a text
  ** longer than 6*nLit cannot decode to nLit bytes */
  if( s->n > 6*nLit ) return 0;
  return profsumSpanDecodeInto(s, a, sizeof(a))==nLit && memcmp(a, zLit, (size_t)nLit)==0;
}

/* See profsum_reader.h. */
int profsumSpanJson(const ProfsumSpan *s, char **ppBuf, int64_t *pnBuf,
                    const char **pzOut, int64_t *pnOut){
  const char *z, *e;
  char *o;
  int inStr = 0;
  if( s->type==PROFSUM_JT_STRING ){ z = s->z-1; e = s->z + s->n + 1; }
  else{ z = s->z; e = s->z + s->n; }
  if( !(s->flags & PROFSUM_SF_FIXUP) ){
    *pzOut = z;
    *pnOut = e - z;
    return SQLITE_OK;
  }
  /* Worst case: every byte a control char (6 bytes) or NaN quoting. */
  if( scratchReserve(ppBuf, pnBuf, (e-z)*6+16) ) return SQLITE_NOMEM;
  o = *ppBuf;
  while( z<e ){
    char c = *z;
    if( inStr ){
      if( c=='\\' ){ *o++ = c; *o++ = z[1]; z += 2; continue; }
      if( (u8)c>=0x80 && (s->flags & PROFSUM_SF_BADUTF8) ){
        int n = profsumUtf8Len((const u8*)z, (const u8*)e);
        if( n<=0 ){ memcpy(o, "\\ufffd", 6); o += 6; z++; }
        else{ memcpy(o, z, (size_t)n); o += n; z += n; }
        continue;
      }
      if( c=='"' ){ inStr = 0; *o++ = c; z++; continue; }
      if( (unsigned char)c<0x20 ){
        static const char hx[] = "0123456789abcdef";
        *o++ = '\\'; *o++ = 'u'; *o++ = '0'; *o++ = '0';
        *o++ = hx[(c>>4)&0xF]; *o++ = hx[c&0xF];
        z++;
        continue;
      }
      *o++ = c; z++;
      continue;
    }
    if( c=='"' ){ inStr = 1; *o++ = c; z++; continue; }
    if( c==',' ){
      const char *q = z+1;
      while( q<e && (*q==' ' || *q=='\t' || *q=='\n' || *q=='\r') ) q++;
      if( q<e && (*q=='}' || *q==']') ){ z++; continue; }   /* trailing comma */
      *o++ = c; z++;
      continue;
    }
    if( c=='N' || c=='I' || (c=='-' && z+1<e && z[1]=='I') ){
      int n = c=='N' ? 3 : (c=='I' ? 8 : 9);
      *o++ = '"'; memcpy(o, z, (size_t)n); o += n; *o++ = '"';
      z += n;
      continue;
    }
    *o++ = c; z++;
  }
  *pzOut = *ppBuf;
  *pnOut = o - *ppBuf;
  return SQLITE_OK;
}
