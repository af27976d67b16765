/*
** utf8rule.c — text SQLite can keep whole: valid UTF-8 (RFC 3629) without
** U+0000, checked for the text arguments that profsum stores (labels,
** series, history text) (see utf8rule.h).
*/
#include "profsum_int.h"
#include "utf8rule.h"

/* See utf8rule.h. */
int profsumUtf8SeqLen(const unsigned char *u, const unsigned char *e){
  unsigned char c = u[0], lo = 0x80, hi = 0xBF;
  int n, i;
  if( c>=0xC2 && c<=0xDF ) n = 2;
  else if( c>=0xE0 && c<=0xEF ){
    n = 3;
    if( c==0xE0 ) lo = 0xA0;          /* overlong below U+0800 */
    else if( c==0xED ) hi = 0x9F;     /* U+D800..U+DFFF: surrogates */
  }else if( c>=0xF0 && c<=0xF4 ){
    n = 4;
    if( c==0xF0 ) lo = 0x90;          /* overlong below U+10000 */
    else if( c==0xF4 ) hi = 0x8F;     /* beyond U+10FFFF */
  }else{
    return 0;
  }
  if( e-u<n || u[1]<lo || u[1]>hi ) return 0;
  for(i=2; i<n; i++) if( (u[i] & 0xC0)!=0x80 ) return 0;
  return n;
}

/* Offset of the first byte of z[0..n) that breaks the text rule (a NUL, or
** a byte that starts no UTF-8 sequence), or -1 when none does. */
static sqlite3_int64 utf8Fault(const char *z, sqlite3_int64 n){
  const unsigned char *u = (const unsigned char*)z, *e = u + n, *p = u;
  while( p<e ){
    int k;
    if( *p==0 ) return p-u;
    if( *p<0x80 ){ p++; continue; }
    if( (k = profsumUtf8SeqLen(p, e))==0 ) return p-u;
    p += k;
  }
  return -1;
}

/* See utf8rule.h. */
int profsumTextKeepsRule(const char *z, sqlite3_int64 n){
  return utf8Fault(z, n)<0;
}

/* See utf8rule.h. */
int profsumTextArgFault(const char *zWhat, const char *z, int n, char **pzErr){
  sqlite3_int64 i = utf8Fault(z, n);
  if( i<0 ) return 0;
  if( z[i]==0 ){
    *pzErr = sqlite3_mprintf("%s holds U+0000 (a NUL byte at byte %lld), which SQLite text "
                             "cannot keep whole", zWhat, (long long)i);
  }else{
    *pzErr = sqlite3_mprintf("%s is not valid UTF-8 (byte 0x%02x at byte %lld)",
                             zWhat, (unsigned char)z[i], (long long)i);
  }
  return 1;
}

/* See utf8rule.h. */
char *profsumUtf8Scrub(char *z){
  const unsigned char *u = (const unsigned char*)z, *e, *p;
  sqlite3_str *pOut;
  char *zNew;
  sqlite3_int64 iBad;
  if( z==0 ) return 0;
  e = u + strlen(z);
  if( (iBad = utf8Fault(z, e-u))<0 ) return z;          /* valid: the text as it is */
  pOut = sqlite3_str_new(0);
  sqlite3_str_append(pOut, z, (int)iBad);
  for(p=u+iBad; p<e; ){
    int k = *p<0x80 ? 1 : profsumUtf8SeqLen(p, e);
    if( k==0 ){ sqlite3_str_append(pOut, "\xEF\xBF\xBD", 3); p++; }
    else{ sqlite3_str_append(pOut, (const char*)p, k); p += k; }
  }
  zNew = sqlite3_str_finish(pOut);
  if( zNew==0 ){
    /* out of memory: every byte that starts no sequence becomes '?' in
    ** place, so that the message still reads */
    sqlite3_int64 n = e - u;
    while( iBad>=0 ){
      sqlite3_int64 iNext;
      z[iBad] = '?';
      iNext = utf8Fault(z+iBad+1, n-iBad-1);
      iBad = iNext<0 ? -1 : iBad+1+iNext;
    }
    return z;
  }
  sqlite3_free(z);
  return zNew;
}
