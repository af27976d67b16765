/*
** insights_mem_util.c — what the parts of the InsMem collector share
** (insights_mem_int.h): the statements of the write, parsers of integer
** and address text, a reader of the
** top-level members of a JSON object with the decoding of JSON string
** escapes (trace JSON args), and a check of JSON number text.
*/
#include "insights_mem_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ===================================================================== */
/* The statements of the write (insights_mem_int.h)                      */
/* ===================================================================== */

/* See insights_mem_int.h. */
int memPrepare(sqlite3 *db, const char *zFunc, char **pzErr, sqlite3_stmt **pp,
                      const char *zFmt, const char *zSchema){
  char *z = sqlite3_mprintf(zFmt, zSchema);
  int rc;
  *pp = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  if( rc ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  return rc;
}

/* See insights_mem_int.h. */
int memStep(sqlite3 *db, sqlite3_stmt *p, const char *zFunc, char **pzErr){
  int rc = sqlite3_step(p);
  sqlite3_reset(p);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  rc = sqlite3_errcode(db);
  if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
  if( *pzErr==0 ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  return rc;
}

/* ===================================================================== */
/* Numbers (insights_mem_int.h)                                           */
/* ===================================================================== */

/* See insights_mem_int.h. */
int memAddrText(const char *z, int64_t n, int bSigned, uint64_t *pv){
  uint64_t v = 0;
  int64_t i = bSigned && n>1 && z[0]=='-';
  if( n<=i || n>20 ) return MV_BAD;
  for(; i<n; i++){
    if( z[i]<'0' || z[i]>'9' || v>(UINT64_MAX-(uint64_t)(z[i]-'0'))/10 ) return MV_BAD;
    v = v*10 + (uint64_t)(z[i]-'0');
  }
  if( z[0]=='-' ){
    if( v>(uint64_t)1<<63 ) return MV_BAD;    /* below INT64_MIN */
    v = (uint64_t)0 - v;
  }
  *pv = v;
  return MV_OK;
}

/* See insights_mem_int.h. */
int memNumText(const char *z, int64_t n, int64_t *pv){
  char buf[64];
  char *zEnd = 0;
  double r;
  int64_t i = 0, v = 0;
  int neg = 0;
  if( n<=0 || n>=(int64_t)sizeof(buf) ) return MV_BAD;
  if( z[0]=='-' || z[0]=='+' ){ neg = z[0]=='-'; i = 1; }
  if( i<n ){
    int64_t j = i;
    while( j<n && z[j]>='0' && z[j]<='9' ){
      if( v>(INT64_MAX-(z[j]-'0'))/10 ) return MV_BAD;
      v = v*10 + (z[j]-'0');
      j++;
    }
    if( j==n && j>i ){ *pv = neg ? -v : v; return MV_OK; }
  }
  memcpy(buf, z, (size_t)n);
  buf[n] = 0;
  r = strtod(buf, &zEnd);
  if( zEnd!=buf+n || !isfinite(r) || r!=floor(r) || fabs(r)>=9.2e18 ) return MV_BAD;
  *pv = (int64_t)r;
  return MV_OK;
}

/* See insights_mem_int.h. */
int memByteCheck(int e, int64_t v){
  if( e!=MV_OK ) return e;
  return (v<0 || v>=MEM_ABSURD_BYTES) ? MV_BAD : MV_OK;
}

/* See insights_mem_int.h. */
int memGpuOfAllocator(const char *z, int64_t n){
  int64_t i;
  int v = 0;
  if( n<9 || memcmp(z, "GPU_", 4)!=0 || memcmp(z+n-4, "_bfc", 4)!=0 ) return -1;
  for(i=4; i<n-4; i++){
    if( z[i]<'0' || z[i]>'9' || v>100000 ) return -1;
    v = v*10 + (z[i]-'0');
  }
  return v;
}

/* ===================================================================== */
/* JSON object members (insights_mem_int.h)                               */
/* ===================================================================== */

/* The end of the JSON string whose body starts at z[i] (after the
** quote): the index of its closing quote, or n.  Eight bytes a step where
** eight remain (a word has a quote or a backslash when one of its bytes,
** xor'ed with it, is zero: the usual test for a zero byte), one at a time
** after; the strings here are short (keys, ids, a kernel's details), where
** two memchr calls a string cost more than the search. */
static int64_t jsonStrEnd(const char *z, int64_t n, int64_t i){
  const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  const uint64_t q = ones*(unsigned char)'"', b = ones*(unsigned char)'\\';
  for(;;){
    while( i+8<=n ){
      uint64_t w, xq, xb;
      memcpy(&w, z+i, 8);
      xq = w ^ q; xb = w ^ b;
      if( ((xq - ones) & ~xq & highs) | ((xb - ones) & ~xb & highs) ) break;
      i += 8;
    }
    while( i<n && z[i]!='"' && z[i]!='\\' ) i++;
    if( i>=n ) return n;
    if( z[i]=='"' ) return i;
    i += 2;                       /* past the backslash and what it escapes */
  }
}

/* See insights_mem_int.h. */
void memJsonMembers(const char *z, int64_t n, MemJsonMemberFn xMember, void *pCtx){
  int64_t i = 0;
  if( z==0 ) return;
  while( i<n && (z[i]==' ' || z[i]=='\t' || z[i]=='\n' || z[i]=='\r') ) i++;
  if( i>=n || z[i]!='{' ) return;
  i++;
  for(;;){
    int64_t k0, k1, v0, v1;
    int bStr = 0;
    while( i<n && (z[i]==' ' || z[i]=='\t' || z[i]=='\n' || z[i]=='\r' || z[i]==',') ) i++;
    if( i>=n || z[i]!='"' ) return;
    k0 = i+1;
    k1 = jsonStrEnd(z, n, k0);
    if( k1>=n ) return;
    i = k1+1;
    while( i<n && (z[i]==' ' || z[i]=='\t' || z[i]=='\n' || z[i]=='\r') ) i++;
    if( i>=n || z[i]!=':' ) return;
    i++;
    while( i<n && (z[i]==' ' || z[i]=='\t' || z[i]=='\n' || z[i]=='\r') ) i++;
    if( i>=n ) return;
    if( z[i]=='"' ){
      v0 = i+1;
      v1 = jsonStrEnd(z, n, v0);
      if( v1>=n ) return;
      i = v1+1;
      bStr = 1;
    }else if( z[i]=='{' || z[i]=='[' ){
      int depth = 0;
      v0 = i;
      while( i<n ){
        char c = z[i];
        if( c=='"' ){ i = jsonStrEnd(z, n, i+1); if( i>=n ) return; }
        else if( c=='{' || c=='[' ) depth++;
        else if( c=='}' || c==']' ){ if( --depth==0 ){ i++; break; } }
        i++;
      }
      v1 = i;
    }else{
      v0 = i;
      while( i<n && z[i]!=',' && z[i]!='}' && z[i]!=' ' && z[i]!='\n' && z[i]!='\t' && z[i]!='\r' ) i++;
      v1 = i;
    }
    if( xMember(pCtx, z+k0, k1-k0, z+v0, v1-v0, bStr) ) return;
  }
}

/* Append code point c as UTF-8 to s. */
static void utf8Append(sqlite3_str *s, unsigned c){
  char a[4]; int n;
  if( c<0x80 ){ a[0] = (char)c; n = 1; }
  else if( c<0x800 ){ a[0] = (char)(0xc0|(c>>6)); a[1] = (char)(0x80|(c&0x3f)); n = 2; }
  else if( c<0x10000 ){ a[0] = (char)(0xe0|(c>>12)); a[1] = (char)(0x80|((c>>6)&0x3f)); a[2] = (char)(0x80|(c&0x3f)); n = 3; }
  else { a[0] = (char)(0xf0|(c>>18)); a[1] = (char)(0x80|((c>>12)&0x3f)); a[2] = (char)(0x80|((c>>6)&0x3f)); a[3] = (char)(0x80|(c&0x3f)); n = 4; }
  sqlite3_str_append(s, a, n);
}

/* The value of 4 hex digits at z, or -1. */
static int hex4(const char *z){
  int i, v = 0;
  for(i=0; i<4; i++){
    char c = z[i];
    v <<= 4;
    if( c>='0' && c<='9' ) v |= c-'0';
    else if( c>='a' && c<='f' ) v |= c-'a'+10;
    else if( c>='A' && c<='F' ) v |= c-'A'+10;
    else return -1;
  }
  return v;
}

/* See insights_mem_int.h. */
int memJsonUnescape(const char *z, int64_t n, char **pzOut, int64_t *pnOut){
  sqlite3_str *s = sqlite3_str_new(0);
  int64_t i = 0;
  int rc;
  while( i<n ){
    int64_t j = i;
    while( j<n && z[j]!='\\' ) j++;
    if( j>i ) sqlite3_str_append(s, z+i, (int)(j-i));
    if( j>=n ) break;
    i = j+1;
    if( i>=n ) break;
    switch( z[i] ){
      case 'n': sqlite3_str_appendchar(s, 1, '\n'); i++; break;
      case 't': sqlite3_str_appendchar(s, 1, '\t'); i++; break;
      case 'r': sqlite3_str_appendchar(s, 1, '\r'); i++; break;
      case 'b': sqlite3_str_appendchar(s, 1, '\b'); i++; break;
      case 'f': sqlite3_str_appendchar(s, 1, '\f'); i++; break;
      case 'u': {
        int c = i+5<=n ? hex4(z+i+1) : -1;
        i += 5;
        if( c<0 ){ utf8Append(s, 0xfffd); if( i>n ) i = n; break; }
        if( c>=0xd800 && c<0xdc00 && i+6<=n && z[i]=='\\' && z[i+1]=='u' ){
          int c2 = hex4(z+i+2);
          if( c2>=0xdc00 && c2<0xe000 ){
            utf8Append(s, 0x10000 + (((unsigned)c-0xd800)<<10) + ((unsigned)c2-0xdc00));
            i += 6;
            break;
          }
        }
        utf8Append(s, (c>=0xd800 && c<0xe000) ? 0xfffd : (unsigned)c);
        break;
      }
      default: sqlite3_str_appendchar(s, 1, z[i]); i++; break;
    }
  }
  *pnOut = sqlite3_str_length(s);
  rc = sqlite3_str_errcode(s);
  *pzOut = sqlite3_str_finish(s);
  if( rc==SQLITE_OK && *pzOut==0 ){
    *pzOut = sqlite3_malloc(1);
    if( *pzOut ) (*pzOut)[0] = 0;
  }
  if( rc || *pzOut==0 ){ sqlite3_free(*pzOut); *pzOut = 0; return SQLITE_NOMEM; }
  return SQLITE_OK;
}

/* See insights_mem_int.h. */
int memIsJsonNumber(const char *z, int64_t n){
  int64_t i = 0, d;
  if( i<n && z[i]=='-' ) i++;
  if( i>=n ) return 0;
  if( z[i]=='0' ) i++;
  else if( z[i]>='1' && z[i]<='9' ){ while( i<n && z[i]>='0' && z[i]<='9' ) i++; }
  else return 0;
  if( i<n && z[i]=='.' ){
    for(i++, d=i; i<n && z[i]>='0' && z[i]<='9'; i++){}
    if( i==d ) return 0;
  }
  if( i<n && (z[i]=='e' || z[i]=='E') ){
    i++;
    if( i<n && (z[i]=='+' || z[i]=='-') ) i++;
    for(d=i; i<n && z[i]>='0' && z[i]<='9'; i++){}
    if( i==d ) return 0;
  }
  return i==n;
}
