/*
** jsonskip.h — the JSON scanner's (trace_json.c) quick pass over an object
** or array it does not keep member by member (the args of a trace_events
** scan, the arrays and objects inside args), included there only.
**
** The general skipper (skipContainer) is a loop over one token at a time
** that asks a state variable what may come next, and a Kineto (PyTorch
** profiler) trace's args is many short tokens with white space between
** them ("Input dims": [[1, 3], []], "Device": 0, ...).  This pass follows
** the grammar by its position in the code instead (one label per state,
** the container stack a word of bits), takes the end of each string from
** the window's string index (strindex.h) and passes over white space in
** place.  It reads the common forms only: anything else (a trailing comma,
** a control character or a byte of 0x80 or more in a string, NaN or
** Infinity, a number of an odd form, a syntax error, the window's end,
** nesting deeper than 64) makes it answer -1, and the caller then skips
** the value with the general code from its start, which decides, diagnoses
** and reports exactly as without this pass.  What it accepts, the general
** code accepts too, ending at the same byte with the same flags.
*/
#ifndef PROFSUM_JSONSKIP_H
#define PROFSUM_JSONSKIP_H

#include "trace_json_int.h"
#include "strindex.h"

/* The next marked byte of the string index at i or after it (the index
** must cover the window), or s->nBuf when there is none in the window. */
static inline size_t profsumNextMark(const ProfsumScan *s, size_t i){
  size_t w = i/64;
  uint64_t m = s->idx.aStop[w] & (~(uint64_t)0 << (i%64));
  while( m==0 ){
    if( ++w*64>=s->nBuf ) return s->nBuf;
    m = s->idx.aStop[w];
  }
  return w*64 + (size_t)__builtin_ctzll(m);
}

/* Is c a hexadecimal digit (of a \u escape)? */
static inline int profsumIsHexDigit(u8 c){
  return (c>='0' && c<='9') || (c>='a' && c<='f') || (c>='A' && c<='F');
}

/* profsumSkipStr's case of a string with an escape: i is the offset of the
** first mark after its opening quote, which is not its closing quote. */
static __attribute__((noinline, unused)) size_t profsumSkipStrEsc(const ProfsumScan *s,
                                                                 size_t i, unsigned *pF){
  const u8 *a = s->aBuf;
  size_t n = s->nBuf;
  for(; i<n; i = profsumNextMark(s, i)){
    u8 c;
    if( a[i]=='"' ) return i+1;
    if( a[i]!='\\' || i+1>=n ) return 0;
    c = a[i+1];
    if( c=='u' ){
      if( i+6>n || !profsumIsHexDigit(a[i+2]) || !profsumIsHexDigit(a[i+3])
       || !profsumIsHexDigit(a[i+4]) || !profsumIsHexDigit(a[i+5]) ) return 0;
      i += 6;
    }else if( c=='"' || c=='\\' || c=='/' || c=='b' || c=='f' || c=='n'
           || c=='r' || c=='t' ){
      i += 2;
    }else{
      return 0;
    }
    *pF |= PROFSUM_SF_ESCAPE;
  }
  return 0;
}

/* Past the string whose opening quote is at offset i of the window, its
** end found from the index: the offset right after its closing quote, or
** 0 for a form the general code must read (a control character, an escape
** that is not valid, the window's end).  *pF gets PROFSUM_SF_ESCAPE when
** the string has escapes (each checked as scanEscape checks it). */
static inline __attribute__((always_inline)) size_t profsumSkipStr(const ProfsumScan *s,
                                                                 size_t i, unsigned *pF){
  i = profsumNextMark(s, i+1);
  if( i<s->nBuf && s->aBuf[i]=='"' ) return i+1;
  return profsumSkipStrEsc(s, i, pF);
}

/* The two bytes at p as one number (PROFSUM_PAIR of the same two). */
static inline unsigned profsumPair(const u8 *p){
  uint16_t x;
  memcpy(&x, p, 2);
  return x;
}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__==__ORDER_BIG_ENDIAN__
# define PROFSUM_PAIR(a, b) ((unsigned)(u8)(a)<<8 | (unsigned)(u8)(b))
#else
# define PROFSUM_PAIR(a, b) ((unsigned)(u8)(b)<<8 | (unsigned)(u8)(a))
#endif

/* Past the white space at p (p < e): most often none, or one space (", "
** and ": "), tested in place; else profsumSkipSpace. */
#define PROFSUM_WS(p, e) do{ \
    if( *(p)<=' ' ){ \
      if( *(p)==' ' && (p)+1<(e) && (p)[1]>' ' ) (p)++; \
      else (p) = profsumSkipSpace((p), (e)); \
    } \
  }while(0)

/* Past the JSON number at p (a '-' or a digit there), of the forms
** scanNumber reads, ending where it ends; NULL when the number may go on
** past e or is not valid (the general code then says why). */
static inline const u8 *profsumSkipNum(const u8 *p, const u8 *e){
  if( *p=='-' && ++p>=e ) return 0;
  if( *p=='0' ) p++;
  else if( *p>='1' && *p<='9' ){
    /* one digit alone at once (ids, flags: most numbers of args) */
    if( ++p<e && *p>='0' && *p<='9' ) p = profsumDigitRun(p, e);
  }else return 0;
  if( p>=e ) return 0;
  if( *p=='.' ){
    const u8 *q = p+1;
    p = profsumDigitRun(q, e);
    if( p==q || p>=e ) return 0;
  }
  if( *p=='e' || *p=='E' ){
    const u8 *q;
    p++;
    if( p<e && (*p=='+' || *p=='-') ) p++;
    q = p;
    p = profsumDigitRun(q, e);
    if( p==q || p>=e ) return 0;
  }
  return p;
}

/* Skip the object or array at p ('{' or '['): P_OK (0) with *ppEnd past
** it and its SF_* flags added to *pFlags (only PROFSUM_SF_ESCAPE can be
** among them: the other flags come from forms this leaves to the general
** code), or -1: the caller skips it with the general code.  The string
** index must cover the window [s->aBuf, e) and no byte of the window be
** 0x80 or more (MEMBER_RUN_OK). */
static inline int profsumSkipQuick(const ProfsumScan *s, const u8 *p, const u8 *e,
                                   const u8 **ppEnd, unsigned *pFlags){
  const u8 *a = s->aBuf;
  uint64_t stk = 0;          /* bit 0: the innermost container is an object */
  int depth = 0;
  unsigned f = 0;
  size_t j;
open:                        /* at a '{' or a '[' */
  if( depth==64 ) return -1;
  depth++;
  stk = (stk<<1) | (*p=='{');
  if( ++p>=e ) return -1;
  PROFSUM_WS(p, e);
  if( p>=e ) return -1;
  if( stk & 1 ){
    if( *p=='}' ){ p++; goto closed; }
    goto key;
  }
  if( *p==']' ){ p++; goto closed; }
  goto value;
key:                         /* a key expected at p */
  if( *p!='"' ) return -1;
  j = profsumSkipStr(s, (size_t)(p - a), &f);
  if( j==0 ) return -1;
  p = a + j;
  if( e-p>=3 && profsumPair(p)==PROFSUM_PAIR(':', ' ') && p[2]>' ' ){
    p += 2;                                   /* ": " then the value */
  }else{
    if( p<e && *p<=' ' ) p = profsumSkipSpace(p, e);
    if( p>=e || *p!=':' ) return -1;
    if( ++p>=e ) return -1;
    PROFSUM_WS(p, e);
    if( p>=e ) return -1;
  }
value:                       /* a value expected at p (p < e) */
  /* tests in the order of the values' frequency (a switch's indirect
  ** jump was predicted less well) */
  if( *p=='"' ){
    j = profsumSkipStr(s, (size_t)(p - a), &f);
    if( j==0 ) return -1;
    p = a + j;
  }else if( *p=='[' ){
    if( p+1>=e || p[1]!=']' ) goto open;
    p += 2;                                   /* [] (common in Kineto's) */
  }else if( (*p>='0' && *p<='9') || *p=='-' ){
    p = profsumSkipNum(p, e);
    if( p==0 ) return -1;
  }else if( *p=='{' ){
    goto open;
  }else if( *p=='t' ){
    if( e-p<4 || memcmp(p, "true", 4)!=0 ) return -1;
    p += 4;
  }else if( *p=='f' ){
    if( e-p<5 || memcmp(p, "false", 5)!=0 ) return -1;
    p += 5;
  }else if( *p=='n' ){
    if( e-p<4 || memcmp(p, "null", 4)!=0 ) return -1;
    p += 4;
  }else{
    return -1;
  }
after:                       /* after a value: ',' or the close expected */
  if( e-p>=3 && profsumPair(p)==PROFSUM_PAIR(',', ' ') && p[2]>' ' ){
    p += 2;                                   /* ", " then a key or a value */
    if( stk & 1 ) goto key;
    if( *p==']' ) return -1;
    goto value;
  }
  if( p<e && *p<=' ' ) p = profsumSkipSpace(p, e);
  if( p>=e ) return -1;
  if( *p==',' ){
    if( ++p>=e ) return -1;
    PROFSUM_WS(p, e);
    if( p>=e ) return -1;
    if( stk & 1 ) goto key;
    if( *p==']' ) return -1;            /* a trailing comma */
    goto value;
  }
  if( *p!=((stk & 1) ? '}' : ']') ) return -1;
  p++;
closed:                      /* past a container's close */
  stk >>= 1;
  if( --depth>0 ) goto after;
  *ppEnd = p;
  *pFlags |= f;
  return 0;
}

#endif /* PROFSUM_JSONSKIP_H */
