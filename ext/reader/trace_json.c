/*
** trace_json.c — a streaming scanner for Chrome Trace Event Format JSON.
**
** Input: a ProfsumSrc (gz.c) delivering decompressed bytes.  Output: one
** ProfsumEvent per traceEvents entry that is an object with a string "ph"
** (the rows of trace_events), in file order, plus diagnostics for every
** oddity met on the way (through an optional callback).
**
** Accepted document forms: a top-level object (keys in any order; unknown
** keys skipped; "traceEvents" an array; "displayTimeUnit" remembered), or a
** bare array of events (the "JSON Array Format").
**
** Tolerated, each with a diagnostic: trailing commas; raw control
** characters inside strings; bare NaN/Infinity tokens; a missing "]" or
** "}" at the end of the file (what is there is kept; a last entry cut off
** mid-way is dropped).  Any other syntax error is an error naming the
** byte offset (in the decompressed JSON) and the entry index.
**
** Memory: a window buffer that holds at least one whole entry.  Entries
** are parsed in place; an entry that straddles the end of the window is
** re-parsed after the window is refilled (and doubled when one entry is
** larger than the window), so memory is bounded by the largest single
** entry (at most PROFSUM_MAX_ENTRY bytes), never by the file.
**
** Exact times: "ts"/"dur" (numbers, or numbers written as strings) are
** converted from their decimal text to integer picoseconds with no
** floating point; more than 6 decimals are rounded half-even (diagnostic).
*/
#include "profsum_int.h"
#include "cnum.h"
#include "profsum_reader.h"
#include "strindex.h"
#include "jsonlex.h"
#include "jsonskip.h"
#include "trace_json_int.h"
#include "timelater.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <string.h>

/* The parse window: it grows for a longer entry.  64 KiB at first for a
** file under PROFSUM_SMALL_FILE bytes on disk, where the larger window was
** a tenth of a 10 MB import's peak memory and saved no time; 256 KiB for a
** larger one.  A build may set PROFSUM_WINDOW_INIT for every file (the
** fuzz build: a small value exercises refills). */
#ifdef PROFSUM_WINDOW_INIT
# define windowInit(nFile) ((void)(nFile), (int64_t)PROFSUM_WINDOW_INIT)
#else
# define windowInit(nFile) ((nFile)<PROFSUM_SMALL_FILE ? (int64_t)64*1024 : (int64_t)256*1024)
#endif

/* Parser status codes (internal). */
#define P_OK    0
#define P_MORE  1     /* ran into the end of the window: refill and retry */
#define P_ERR   2     /* syntax error: s->zErrWhy and s->pErrAt are set */
_Static_assert(P_OK==PROFSUM_LEX_OK && P_MORE==PROFSUM_LEX_MORE, "jsonlex.h's codes");

/* Scanner states. */
#define ST_START        0   /* before the first byte of the document */
#define ST_TOP_KEY      1   /* in the top object: expect a key or '}' */
#define ST_TOP_AFTER    2   /* in the top object: expect ',' or '}' */
#define ST_ARR_ELEM     3   /* in traceEvents: expect an element or ']' */
#define ST_ARR_AFTER    4   /* in traceEvents: expect ',' or ']' */
#define ST_END          5   /* after the document: only white space */
#define ST_DONE         6



/* ------------------------------------------------------------------ */
/* Character classes                                                   */
/* ------------------------------------------------------------------ */
static const u8 aWs[256] = {
  [' ']=1, ['\t']=1, ['\n']=1, ['\r']=1,
};
/* In strings: 1 = quote, 2 = backslash, 3 = control (< 0x20). */
static const u8 aStrClass[256] = {
  [0]=3,[1]=3,[2]=3,[3]=3,[4]=3,[5]=3,[6]=3,[7]=3,[8]=3,[9]=3,[10]=3,
  [11]=3,[12]=3,[13]=3,[14]=3,[15]=3,[16]=3,[17]=3,[18]=3,[19]=3,[20]=3,
  [21]=3,[22]=3,[23]=3,[24]=3,[25]=3,[26]=3,[27]=3,[28]=3,[29]=3,[30]=3,
  [31]=3, ['"']=1, ['\\']=2,
};


/* ------------------------------------------------------------------ */
/* Lexical primitives on a contiguous window [p, e)                    */
/* ------------------------------------------------------------------ */

/* The escape at p (a backslash, p+1 < e needed): P_OK with *pp past it,
** with PROFSUM_SF_SURR added to *pf for a \u escape of the surrogate
** range (the hint profsumSpanLoneSurrogate needs); P_MORE, or P_ERR. */
static int scanEscape(ProfsumScan *s, const u8 **pp, const u8 *e, unsigned *pf){
  const u8 *p = *pp;
  if( p+1>=e ) return P_MORE;
  switch( p[1] ){
    case '"': case '\\': case '/': case 'b': case 'f':
    case 'n': case 'r': case 't':
      *pp = p+2;
      return P_OK;
    case 'u':
      if( p+6>e ) return P_MORE;
      if( !profsumIsHexDigit(p[2]) || !profsumIsHexDigit(p[3]) || !profsumIsHexDigit(p[4]) || !profsumIsHexDigit(p[5]) ){
        s->zErrWhy = "invalid \\u escape in a string";
        s->pErrAt = p;
        return P_ERR;
      }
      if( profsumIsSurrogateHex(p+2) ) *pf |= PROFSUM_SF_SURR;
      *pp = p+6;
      return P_OK;
    default:
      s->zErrWhy = "invalid escape in a string";
      s->pErrAt = p;
      return P_ERR;
  }
}

/* Scan a string starting at the opening quote *p.  On P_OK *ppEnd is past
** the closing quote and *pFlags gets PROFSUM_SF_ESCAPE/SURR/CTRL/BADUTF8
** bits. */
static int scanString(ProfsumScan *s, const u8 *p, const u8 *e,
                      const u8 **ppEnd, unsigned *pFlags){
  unsigned f = 0, hi = 0;
  const u8 *pStart = ++p;
  int rc;
  if( s->idx.aStop && e==s->aBuf + s->nBuf ){
    /* the index (strindex.h): the next marked byte by its bit */
    const uint64_t *aStop = s->idx.aStop;
    size_t i = (size_t)(p - s->aBuf), n = s->nBuf;
    for(;;){
      size_t w = i/64;
      uint64_t m;
      if( i>=n ) return P_MORE;
      m = aStop[w] & (~(uint64_t)0 << (i%64));
      while( m==0 ){
        if( ++w*64>=n ) return P_MORE;
        m = aStop[w];
      }
      i = w*64 + (size_t)__builtin_ctzll(m);
      if( i>=n ) return P_MORE;
      p = s->aBuf + i;
      if( *p=='"' ){
        size_t i0 = (size_t)(pStart - s->aBuf);
        if( profsumStrIndexHi(&s->idx, i0, i) && !profsumUtf8Valid(pStart, p) ) f |= PROFSUM_SF_BADUTF8;
        *ppEnd = p+1;
        *pFlags |= f;
        return P_OK;
      }
      if( *p=='\\' ){
        f |= PROFSUM_SF_ESCAPE;
        rc = scanEscape(s, &p, e, &f);
        if( rc ) return rc;
      }else{
        f |= PROFSUM_SF_CTRL;
        p++;
      }
      i = (size_t)(p - s->aBuf);
    }
  }
  /* the portable path: byte by byte */
  for(;;){
    while( p<e && aStrClass[*p]==0 ){ hi |= *p; p++; }
    if( p>=e ) return P_MORE;
    switch( aStrClass[*p] ){
      case 1:
        /* bytes >= 0x80 seen: check the string's UTF-8, rarely needed */
        if( (hi & 0x80) && !profsumUtf8Valid(pStart, p) ) f |= PROFSUM_SF_BADUTF8;
        *ppEnd = p+1;
        *pFlags |= f;
        return P_OK;
      case 2:
        f |= PROFSUM_SF_ESCAPE;
        rc = scanEscape(s, &p, e, &f);
        if( rc ) return rc;
        break;
      default:
        f |= PROFSUM_SF_CTRL;
        p++;
        break;
    }
  }
}

/* scanString's common case, inlined where strings are met most (keys and
** scalar values): the string index says at once where the string ends
** (in this word of the index or a later one) when it has no escape, no
** control character and the window no byte of 0x80 or more.  Anything
** else goes to scanString. */
static inline int scanStringFast(ProfsumScan *s, const u8 *p, const u8 *e,
                                 const u8 **ppEnd, unsigned *pFlags){
  if( s->idx.aStop && !s->idx.anyHi && e==s->aBuf + s->nBuf ){
    size_t i = (size_t)(p + 1 - s->aBuf), q;
    uint64_t m = s->idx.aStop[i/64] >> (i%64);
    if( m ){
      q = i + (size_t)__builtin_ctzll(m);
    }else{
      /* a string past this word (an HLO text): the next marked word */
      size_t w = i/64;
      do{
        if( ++w*64>=s->nBuf ) return scanString(s, p, e, ppEnd, pFlags);
        m = s->idx.aStop[w];
      }while( m==0 );
      q = w*64 + (size_t)__builtin_ctzll(m);
    }
    if( q<s->nBuf && s->aBuf[q]=='"' ){
      *ppEnd = s->aBuf + q + 1;
      return P_OK;
    }
  }
  return scanString(s, p, e, ppEnd, pFlags);
}

/* *pSpan = the string from the quote at p to the end of its closing quote
** at pEnd (exclusive), with the SF_* flags f. */
static inline void stringSpan(ProfsumSpan *pSpan, const u8 *p, const u8 *pEnd, unsigned f){
  pSpan->z = (const char*)p+1;
  pSpan->n = (pEnd - p) - 2;
  pSpan->type = PROFSUM_JT_STRING;
  pSpan->flags = (unsigned char)f;
}

/* Scan a JSON number at p.  On P_OK *ppEnd is past it. */
static int scanNumber(ProfsumScan *s, const u8 *p, const u8 *e, const u8 **ppEnd){
  const u8 *q = p;
  if( q<e && *q=='-' ) q++;
  if( q>=e ) return P_MORE;
  if( *q=='0' ){
    q++;
  }else if( *q>='1' && *q<='9' ){
    q = profsumDigitRun(q, e);
  }else{
    s->zErrWhy = "invalid number";
    s->pErrAt = p;
    return P_ERR;
  }
  if( q>=e ) return P_MORE;
  if( *q=='.' ){
    q++;
    if( q>=e ) return P_MORE;
    if( !(*q>='0' && *q<='9') ){
      s->zErrWhy = "invalid number (no digit after '.')";
      s->pErrAt = p;
      return P_ERR;
    }
    q = profsumDigitRun(q, e);
    if( q>=e ) return P_MORE;
  }
  if( *q=='e' || *q=='E' ){
    q++;
    if( q<e && (*q=='+' || *q=='-') ) q++;
    if( q>=e ) return P_MORE;
    if( !(*q>='0' && *q<='9') ){
      s->zErrWhy = "invalid number (bad exponent)";
      s->pErrAt = p;
      return P_ERR;
    }
    while( q<e && *q>='0' && *q<='9' ) q++;
    if( q>=e ) return P_MORE;
  }
  *ppEnd = q;
  return P_OK;
}

/* Match literal zLit (length n) at p, a value of JSON type `type`
** (pSpan->type set; scanScalar sets the rest). */
static int scanLiteral(ProfsumScan *s, const u8 *p, const u8 *e, ProfsumSpan *pSpan,
                       int type, const char *zLit, int n, const u8 **ppEnd){
  int i;
  pSpan->type = (unsigned char)type;
  for(i=0; i<n; i++){
    if( p+i>=e ) return P_MORE;
    if( p[i]!=(u8)zLit[i] ){
      s->zErrWhy = "invalid literal";
      s->pErrAt = p;
      return P_ERR;
    }
  }
  *ppEnd = p+n;
  return P_OK;
}

/* Scan a scalar (not object/array) at p into *pSpan. */
static inline __attribute__((always_inline)) int scanScalar(ProfsumScan *s, const u8 *p, const u8 *e,
                      const u8 **ppEnd, ProfsumSpan *pSpan){
  int rc;
  unsigned f = 0;
  if( *p=='"' ){
    /* most values of traces: tested before the switch, whose indirect
    ** jump the CPU predicts less well than this branch */
    rc = scanStringFast(s, p, e, ppEnd, &f);
    if( rc==P_OK ){
      stringSpan(pSpan, p, *ppEnd, f);
    }
    return rc;
  }
  switch( *p ){
    case '-':
      if( p+1<e && p[1]=='I' ){
        rc = scanLiteral(s, p, e, pSpan, PROFSUM_JT_NONFIN, "-Infinity", 9, ppEnd);
        break;
      }
      if( p+1>=e ) return P_MORE;
      /* fall through */
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      pSpan->type = PROFSUM_JT_NUMBER;
      rc = scanNumber(s, p, e, ppEnd);
      break;
    default: {
      /* the literals, by their first byte */
      static const struct { char c; unsigned char type; int n; const char *z; } aLit[] = {
        {'t', PROFSUM_JT_TRUE, 4, "true"}, {'f', PROFSUM_JT_FALSE, 5, "false"},
        {'n', PROFSUM_JT_NULL, 4, "null"}, {'N', PROFSUM_JT_NONFIN, 3, "NaN"},
        {'I', PROFSUM_JT_NONFIN, 8, "Infinity"},
      };
      int i;
      for(i=0; i<(int)(sizeof(aLit)/sizeof(aLit[0])) && aLit[i].c!=(char)*p; i++){}
      if( i==(int)(sizeof(aLit)/sizeof(aLit[0])) ){
        s->zErrWhy = "expected a value";
        s->pErrAt = p;
        return P_ERR;
      }
      rc = scanLiteral(s, p, e, pSpan, aLit[i].type, aLit[i].z, aLit[i].n, ppEnd);
      break;
    }
  }
  if( rc==P_OK ){
    pSpan->z = (const char*)p;
    pSpan->n = *ppEnd - p;
    pSpan->flags = pSpan->type==PROFSUM_JT_NONFIN ? PROFSUM_SF_NONFIN : 0;
  }
  return rc;
}

static void applyMember(ProfsumScan *s, int mode, const char *k, int64_t nk,
                        const ProfsumSpan *v);

/* Can strMemberRun read the window at [p, e)?  The index must cover all of
** it, and no byte of it be 0x80 or more (a string then has no flag). */
#define MEMBER_RUN_OK(s, e) ((s)->idx.aStop && !(s)->idx.anyHi && (e)==(s)->aBuf + (s)->nBuf)

/* The run of members "key":"string" of an object from p, the opening quote
** of a key, read from the string index alone (MEMBER_RUN_OK must hold):
** a key ends at the next marked byte, which must be its closing quote; a
** value too, past its escapes (checked as scanEscape does; the value then
** has PROFSUM_SF_ESCAPE, and PROFSUM_SF_SURR as scanEscape gives it, also
** added to *pFlags as the general loop adds them); and the compact form must join them (':' right after the key,
** the value's quote right after it, ',' or anything else right after the
** value; after a ',', the next key's quote).  The marks are taken one
** after the other from the words of the index, so finding a string's end
** waits on no load of the bytes before it.  mode 1 applies each member
** (applyMember), mode 0 only skips it.  Returns the position right after
** the last value taken (a ',' or whatever follows it), or p when the
** first member is of another form: the caller goes on from there as after
** a value (or from p as before it), and reads the members the run left. */
static const u8 *strMemberRun(ProfsumScan *s, const u8 *p, int mode, unsigned *pFlags){
  const uint64_t *aStop = s->idx.aStop;
  const u8 *a = s->aBuf;
  size_t n = s->nBuf, i = (size_t)(p - a), w = i/64;
  uint64_t m = aStop[w] & (~(uint64_t)0 << (i%64));
  const u8 *pDone = p;
  /* the next marked position into x; the run ends where the window does */
#define NEXT_MARK(x) do{ \
    while( m==0 ){ if( ++w*64>=n ) return pDone; m = aStop[w]; } \
    (x) = w*64 + (size_t)__builtin_ctzll(m); m &= m-1; \
  }while(0)
  for(;;){
    size_t k0, k1, v0, v1;
    unsigned vf;
    NEXT_MARK(k0);                 /* the key's opening quote */
    NEXT_MARK(k1);
    if( a[k1]!='"' ) return pDone;
    NEXT_MARK(v0);
    if( v0!=k1+2 || a[k1+1]!=':' || a[v0]!='"' ) return pDone;
    NEXT_MARK(v1);
    vf = 0;
    while( a[v1]=='\\' ){
      /* an escape in the value (scanEscape's checks): past it, and past the
      ** mark of the character it escapes when that is one ('"', '\\') */
      u8 c;
      if( v1+1>=n ) return pDone;
      c = a[v1+1];
      if( c=='u' ){
        if( v1+6>n || !profsumIsHexDigit(a[v1+2]) || !profsumIsHexDigit(a[v1+3]) || !profsumIsHexDigit(a[v1+4]) || !profsumIsHexDigit(a[v1+5]) ){
          return pDone;
        }
        if( profsumIsSurrogateHex(a+v1+2) ) vf |= PROFSUM_SF_SURR;
      }else if( c=='"' || c=='\\' ){
        size_t x;
        NEXT_MARK(x);              /* x == v1+1 */
        (void)x;
      }else if( c!='/' && c!='b' && c!='f' && c!='n' && c!='r' && c!='t' ){
        return pDone;
      }
      vf |= PROFSUM_SF_ESCAPE;
      NEXT_MARK(v1);
    }
    if( a[v1]!='"' || v1+1>=n ) return pDone;
    if( mode ){
      /* applyMember's mode 1, inline: a known key's span */
      int ak = argKeyIndex((const char*)a + k0 + 1, (int64_t)(k1 - k0 - 1));
      if( ak>=0 ){
        stringSpan(&s->pEv->aArg[ak], a + v0, a + v1 + 1, vf);
        s->argSet |= 1u<<ak;
      }
    }
    *pFlags |= vf;
    pDone = a + v1 + 1;
    if( a[v1+1]!=',' || v1+2>=n || a[v1+2]!='"' ) return pDone;
  }
#undef NEXT_MARK
}

/* Make room for container depth d in the skip stack. */
static int stkReserve(ProfsumScan *s, size_t d){
  if( d>=s->nStk ){
    size_t n = s->nStk ? s->nStk*2 : 256;
    u8 *a;
    while( n<=d ) n *= 2;
    a = sqlite3_realloc64(s->aStk, n);
    if( a==0 ) return SQLITE_NOMEM;
    s->aStk = a;
    s->nStk = n;
  }
  return SQLITE_OK;
}

/* Skip (and validate) the object or array starting at p.  Iterative: any
** depth, bounded only by memory.  *pFlags gets SF_* bits of everything
** inside.  Returns P_OK/P_MORE/P_ERR, or -SQLITE_NOMEM. */
static int skipContainer(ProfsumScan *s, const u8 *p, const u8 *e,
                         const u8 **ppEnd, unsigned *pFlags){
  size_t depth = 0;
  int rc;
  unsigned f = 0;
  /* expect: 0 = key or close, 1 = ':', 2 = value (or close in arrays),
  **         3 = ',' or close */
  int expect;
  int afterComma = 0;
  const u8 *p0 = p;
  int quick;
  if( e-p>=2 && p[1]==(u8)(*p+2) ){        /* "[]" or "{}" ('['+2 is ']') */
    *ppEnd = p+2;                           /* (most of a PyTorch trace's */
    return P_OK;                            /* args arrays): no flags */
  }
  quick = MEMBER_RUN_OK(s, e);              /* profsumSkipQuick not tried yet */
  if( quick && (*p!='{' || e-p<2 || p[1]!='"') ){
    /* an array, or an object that does not open with a key at once (white
    ** space: Kineto's): the quick pass first */
    quick = 0;
    if( profsumSkipQuick(s, p, e, ppEnd, pFlags)==0 ) return P_OK;
  }
  if( stkReserve(s, 1) ) return -SQLITE_NOMEM;
  s->aStk[depth++] = *p;
  expect = (*p=='{') ? 0 : 2;
  p++;
  for(;;){
    u8 c;
    p = profsumSkipSpace(p, e);
    if( p>=e ) return P_MORE;
    c = *p;
    switch( expect ){
      case 0:
        if( c=='}' ){
          if( afterComma ) f |= PROFSUM_SF_TRAIL;
          goto close_container;
        }
        if( c!='"' ){
          s->zErrWhy = "expected a string key";
          s->pErrAt = p;
          return P_ERR;
        }
        if( MEMBER_RUN_OK(s, e) ){
          const u8 *q = strMemberRun(s, p, 0, &f);
          if( q!=p ){ p = q; expect = 3; afterComma = 0; break; }
          if( quick && p==p0+1 ){
            /* the first key opens no compact string run (xprof's args do):
            ** the quick pass from the object's start */
            quick = 0;
            if( profsumSkipQuick(s, p0, e, ppEnd, pFlags)==0 ) return P_OK;
          }
        }
        rc = scanStringFast(s, p, e, &p, &f);
        if( rc ) return rc;
        expect = 1;
        break;
      case 1:
        if( c!=':' ){
          s->zErrWhy = "expected ':' after a key";
          s->pErrAt = p;
          return P_ERR;
        }
        p++;
        expect = 2;
        afterComma = 0;
        break;
      case 2:
        if( c==']' && s->aStk[depth-1]=='[' ){
          if( afterComma ) f |= PROFSUM_SF_TRAIL;
          goto close_container;
        }
        afterComma = 0;
        if( c=='{' || c=='[' ){
          if( stkReserve(s, depth+1) ) return -SQLITE_NOMEM;
          s->aStk[depth++] = c;
          expect = (c=='{') ? 0 : 2;
          p++;
          break;
        }else{
          ProfsumSpan sp;
          rc = scanScalar(s, p, e, &p, &sp);
          if( rc ) return rc;
          f |= sp.flags;
          expect = 3;
        }
        break;
      default: /* 3 */
        if( c==',' ){
          p++;
          afterComma = 1;
          expect = (s->aStk[depth-1]=='{') ? 0 : 2;
          break;
        }
        if( (c=='}' && s->aStk[depth-1]=='{') || (c==']' && s->aStk[depth-1]=='[') ){
          goto close_container;
        }
        s->zErrWhy = s->aStk[depth-1]=='{' ? "expected ',' or '}'" : "expected ',' or ']'";
        s->pErrAt = p;
        return P_ERR;
    }
    continue;
close_container:
    p++;
    depth--;
    afterComma = 0;
    if( depth==0 ){
      *ppEnd = p;
      *pFlags |= f;
      return P_OK;
    }
    expect = 3;
  }
}

/* Scan any value at p into *pSpan (containers: the whole text). */
static inline __attribute__((always_inline)) int scanValue(ProfsumScan *s, const u8 *p, const u8 *e,
                     const u8 **ppEnd, ProfsumSpan *pSpan){
  if( p>=e ) return P_MORE;
  if( *p=='{' || *p=='[' ){
    unsigned f = 0;
    int rc = skipContainer(s, p, e, ppEnd, &f);
    if( rc==P_OK ){
      pSpan->z = (const char*)p;
      pSpan->n = *ppEnd - p;
      pSpan->type = (*p=='{') ? PROFSUM_JT_OBJECT : PROFSUM_JT_ARRAY;
      pSpan->flags = (unsigned char)f;
    }
    return rc;
  }
  return scanScalar(s, p, e, ppEnd, pSpan);
}

/* ------------------------------------------------------------------ */
/* Event fields                                                        */
/* ------------------------------------------------------------------ */

/* 1 when timeTaken would queue nothing for a ts/dur of ps picoseconds
** (r: rounded) but a time_rounded past the cap with PROFSUM_SCAN_QUIETROUND,
** which this queues (scanPendQuiet); then the caller sets the value as
** without a callback.  0: the caller calls timeTaken. */
static inline int timeQuiet(ProfsumScan *s, int r, profsum_ps ps){
  if( !profsumPsNsFits(ps) ) return 0;
  if( r==0 ) return 1;
  if( !s->roundedCapped || !(s->flags & PROFSUM_SCAN_QUIETROUND) ) return 0;
  scanPendQuiet(s);
  return 1;
}

/* Member k (nk bytes) of an event object whose value at p is a number:
** ts, dur, pid and tid of the common shapes are scanned and set in one
** pass (profsumLexMicros, profsumLexInt: jsonlex.h), as applyMember would set them.
** P_OK with *ppEnd past the value, P_MORE, or -1: not such a member, or
** another shape (the caller scans the value and applies it then). */
static inline int numberMember(ProfsumScan *s, const char *k, int64_t nk,
                               const u8 *p, const u8 *e, const u8 **ppEnd){
  ProfsumEvent *ev = s->pEv;
  const u8 *q;
  int rc;
  if( nk==2 ? (k[0]=='t' && k[1]=='s') : (nk==3 && k[0]=='d' && k[1]=='u' && k[2]=='r') ){
    ProfsumSpan v;
    profsum_ps ps;
    int r;
    uint64_t w = 0;
    int x = 0;
    if( s->timesLater && timeLater(s, nk==2, p, e, ppEnd) ) return P_OK;
    timeNow(ev, nk==2 ? 1 : 2);
    /* the portable tokenizer keeps the general conversion (tests compare) */
    rc = s->idx.xClassify ? profsumLexMicrosFast(p, e, &q, &ps, &r, &w, &x)
                          : profsumLexMicros(p, e, &q, &ps, &r, &w, &x);
    if( rc!=P_OK ) return rc;
    v.z = (const char*)p;
    v.n = q - p;
    v.type = PROFSUM_JT_NUMBER;
    v.flags = 0;
    if( nk==2 ){
      ev->tsPresent = 1;
      ev->ts = ps;
      ev->tsDigits = w;
      ev->tsExp = x;
      if( s->xDiag && !timeQuiet(s, r, ps) ){
        profsumScanTimeTaken(s, "ts", &v, r, &ev->hasTs, &ev->ts, &ev->tsRounded, &ev->tsSpan);
      }else{
        /* timeTaken without a diagnostic to queue (trace_events), inline */
        ev->hasTs = 1;
        ev->tsRounded = r;
        if( r ) spanCopy(&ev->tsSpan, &v);
      }
    }else{
      ev->dur = ps;
      ev->durDigits = w;
      ev->durExp = x;
      if( s->xDiag && !timeQuiet(s, r, ps) ){
        profsumScanTimeTaken(s, "dur", &v, r, &ev->hasDur, &ev->dur, &ev->durRounded, &ev->durSpan);
      }else{
        ev->hasDur = 1;
        ev->durRounded = r;
        if( r ) spanCopy(&ev->durSpan, &v);
      }
    }
  }else if( nk==3 && (k[0]=='p' || k[0]=='t') && k[1]=='i' && k[2]=='d' ){
    ProfsumId *pId = k[0]=='p' ? &ev->pid : &ev->tid;
    int64_t v;
#define NM_DIGIT(c) ((c)>='0' && (c)<='9')
#define NM_INTEND(c) (!NM_DIGIT(c) && (c)!='.' && (c)!='e' && (c)!='E')
    if( e-p>=2 && NM_DIGIT(p[0]) && NM_INTEND(p[1]) ){
      /* one digit (the pid of most devices, many a tid): what
      ** profsumLexInt gives, without its digit-run scan */
      v = p[0] - '0';
      q = p + 1;
    }else if( e-p>=4 && p[0]>='1' && p[0]<='9' && NM_DIGIT(p[1])
           && (NM_INTEND(p[2]) || (NM_DIGIT(p[2]) && NM_INTEND(p[3]))) ){
      /* two or three digits (a host's pid, PyTorch's): the same */
      v = (p[0] - '0')*10 + (p[1] - '0');
      q = p + 2;
      if( NM_DIGIT(p[2]) ){ v = v*10 + (p[2] - '0'); q++; }
    }else{
      rc = profsumLexInt(p, e, &q, &v);
      if( rc!=P_OK ) return rc;
    }
#undef NM_DIGIT
#undef NM_INTEND
    memset(pId, 0, sizeof(*pId));
    pId->kind = PROFSUM_ID_INT;
    pId->iVal = v;
  }else{
    return -1;
  }
  *ppEnd = q;
  return P_OK;
}

/* Zero the spans of ev.aArg that were set (argSet), and argSet. */
static void clearArgKeys(ProfsumScan *s){
  unsigned m = s->argSet;
  while( m ){
    int i = __builtin_ctz(m);
    memset(&s->pEv->aArg[i], 0, sizeof(s->pEv->aArg[i]));
    m &= m-1;
  }
  s->argSet = 0;
}

/* Zero the event for the next entry: all but aArg, then the spans of aArg
** that were set.  With 16-byte stores: one memset of the 400 bytes before
** aArg became a string instruction (rep stos) that cost more than the
** stores it replaces. */
#define EV_HEAD ((size_t)offsetof(ProfsumEvent, aArg))
#define EV_TAIL (sizeof(ProfsumEvent) - offsetof(ProfsumEvent, raw))
_Static_assert(EV_HEAD%8==0 && EV_TAIL%8==0, "clearEvent's 8-byte pieces");
typedef uint64_t EvZero16 __attribute__((vector_size(16), may_alias, aligned(8)));
typedef uint64_t EvZero8 __attribute__((may_alias, aligned(8)));
static inline void clearEvent(ProfsumScan *s){
  char *a = (char*)s->pEv, *b = (char*)&s->pEv->raw;
  const EvZero16 z = {0, 0};
  size_t i;
#if defined(__GNUC__) && !defined(__clang__)
# pragma GCC unroll 32
#endif
  for(i=0; i<EV_HEAD/16; i++) ((EvZero16*)a)[i] = z;
  if( EV_HEAD%16 ) *(EvZero8*)(a + EV_HEAD - 8) = 0;
#if defined(__GNUC__) && !defined(__clang__)
# pragma GCC unroll 8
#endif
  for(i=0; i<EV_TAIL/16; i++) ((EvZero16*)b)[i] = z;
  if( EV_TAIL%16 ) *(EvZero8*)(b + EV_TAIL - 8) = 0;
  if( s->argSet ) clearArgKeys(s);
}

/* Apply one member of an event object (mode 0) or of its args (mode 1),
** noting in ev what the reference's typed decoder rejects the file for
** where only the scanner sees it: a name that is null or not a string
** (zRefBad, typedBadField), an event-level process_name / thread_name that
** is not a string or null or whose text is not valid (bytes that are not
** UTF-8, a lone surrogate escape: zRefBad).  A non-string cat gets its
** bad_field diagnostic only: the reference ignores cat. */
static void applyMember(ProfsumScan *s, int mode, const char *k, int64_t nk,
                        const ProfsumSpan *v){
  ProfsumEvent *ev = s->pEv;
  if( mode==1 ){
    int i = argKeyIndex(k, nk);
    if( i>=0 ){
      spanCopy(&ev->aArg[i], v);
      s->argSet |= 1u<<i;
    }
    return;
  }
  switch( nk ){
    case 2:
      if( k[0]=='p' && k[1]=='h' ){ spanCopy(&ev->ph, v); return; }
      if( k[0]=='t' && k[1]=='s' ){
        ev->tsPresent = 1;
        ev->tsDigits = 0;
        timeNow(ev, 1);
        profsumScanSetTime(s, "ts", v, &ev->hasTs, &ev->ts, &ev->tsRounded, &ev->tsSpan);
        return;
      }
      break;
    case 3:
      if( KEYIS(k,nk,"pid") ){ profsumScanSetId(s, "pid", v, &ev->pid); return; }
      if( KEYIS(k,nk,"tid") ){ profsumScanSetId(s, "tid", v, &ev->tid); return; }
      if( KEYIS(k,nk,"dur") ){
        ev->durDigits = 0;
        timeNow(ev, 2);
        profsumScanSetTime(s, "dur", v, &ev->hasDur, &ev->dur, &ev->durRounded, &ev->durSpan);
        return;
      }
      if( KEYIS(k,nk,"cat") ) goto text_field;
      break;
    case 4:
      if( KEYIS(k,nk,"name") ) goto text_field;
      if( KEYIS(k,nk,"args") ){ spanCopy(&ev->args, v); return; }
      break;
    case 7:
      if( KEYIS(k,nk,"entries") ){ spanCopy(&ev->entries, v); return; }
      break;
    case 11: case 12:
      /* typed string fields of the reference's event (null allowed); a
      ** string is all a reader uses them as */
      if( nk==11 ? KEYIS(k,nk,"thread_name") : KEYIS(k,nk,"process_name") ){
        if( v->type!=PROFSUM_JT_STRING && v->type!=PROFSUM_JT_NULL ){
          ev->zRefBad = nk==11 ? "thread_name not a string" : "process_name not a string";
        }else if( v->flags & PROFSUM_SF_BADUTF8 ){
          ev->zRefBad = nk==11 ? "invalid_utf8 in thread_name" : "invalid_utf8 in process_name";
        }else if( (v->flags & PROFSUM_SF_SURR) && profsumSpanLoneSurrogate(v) ){
          ev->zRefBad = nk==11 ? "lone surrogate escape in thread_name"
                               : "lone surrogate escape in process_name";
        }
      }
      return;
  }
  return;
text_field:
  {
    ProfsumSpan *pDst = (k[0]=='n') ? &ev->name : &ev->cat;
    if( v->type==PROFSUM_JT_STRING ){
      spanCopy(pDst, v);
    }else{
      memset(pDst, 0, sizeof(*pDst));
      if( v->type==PROFSUM_JT_NULL && k[0]=='n' ){
        ev->zRefBad = "name not a string";     /* the reference's name: str */
      }else if( v->type!=PROFSUM_JT_NULL ){
        char zq[64] = "";
        /* name is typed (the reference rejects the file); cat is no field
        ** of the reference's event, which ignores it: a diagnostic only */
        if( k[0]=='n' ) ev->typedBadField = 1;
        if( !s->xDiag ) return;
        if( profsumScanDiagWanted(s, "bad_field") ) profsumScanQuote(zq, sizeof(zq), v->z, v->n);
        profsumScanPendDiag(s, "bad_field", "%s: %s is not a string", k[0]=='n' ? "name" : "cat", zq);
      }
    }
  }
}

static int parseMembers(ProfsumScan *s, const u8 *p, const u8 *e,
                        const u8 **ppEnd, unsigned *pFlags, int mode);

/* The value at p of member k (nk bytes, an unescaped key or its decoded
** text) of an event object (mode 0) or of its args (mode 1), applied: what
** parseMembers does after the ':' (and the white space after it), shared
** with eventRun.  P_OK with *ppEnd past the value, or the code of its
** parse (P_MORE, P_ERR, -SQLITE_NOMEM). */
static inline __attribute__((always_inline)) int memberValue(ProfsumScan *s, int mode,
    const char *k, int64_t nk, const u8 *p, const u8 *e, const u8 **ppEnd, unsigned *pFlags){
  ProfsumSpan val;
  int rc;
  if( mode==0 && nk<=3 && ((*p>='0' && *p<='9') || *p=='-') ){
    rc = numberMember(s, k, nk, p, e, ppEnd);
    if( rc==P_OK || rc==P_MORE ) return rc;
  }
  if( mode==0 && s->argSet && KEYIS(k,nk,"args") ){
    /* A repeated "args" replaces the earlier one: forget its keys. */
    clearArgKeys(s);
  }
  if( mode==0 && *p=='{' && (s->flags & PROFSUM_SCAN_ARGKEYS) && KEYIS(k,nk,"args") ){
    /* args: collect the known keys while skipping it. */
    unsigned af = 0;
    rc = parseMembers(s, p, e, ppEnd, &af, 1);
    if( rc ) return rc;
    val.z = (const char*)p;
    val.n = *ppEnd - p;
    val.type = PROFSUM_JT_OBJECT;
    val.flags = (unsigned char)af;
  }else{
    rc = scanValue(s, p, e, ppEnd, &val);
    if( rc ) return rc;
  }
  *pFlags |= val.flags;
  applyMember(s, mode, k, nk, &val);
  return P_OK;
}

/* memberValue of an event's member, out of line (eventRun's rarer values:
** kept out of its loop). */
static __attribute__((noinline)) int memberValueOut(ProfsumScan *s, int mode, const char *k,
    int64_t nk, const u8 *p, const u8 *e, const u8 **ppEnd, unsigned *pFlags){
  return memberValue(s, mode, k, nk, p, e, ppEnd, pFlags);
}

/* parseMembers' members (mode 0: of an event object, 1: of its args) for keys without
** escapes: each key ends where the string index says (no look at its
** bytes), a string value without escapes is taken from the index too,
** (mode 0) ts, dur, pid, tid of the common shapes by numberMember, any other
** value by memberValue as the general loop reads it.  ws 0: the compact
** form only (':' right after the key, the value right after it, ',' and
** the next key's quote right after the value: xprof's); ws 1: white space
** around the ':' and the ',' passed over in place (Kineto writes ", " and
** ": ", and indents).  MEMBER_RUN_OK holds; p is the '{' when first is 1,
** else right after a value taken.  Returns P_OK with *ppDone right after
** the last value taken (or at p when none was): the general loop goes on
** from there as after a value (a key with an escape or a control
** character, a ',' not followed by a key, the '}', an error); or the code
** of a value's parse (P_MORE, P_ERR, -SQLITE_NOMEM), as the general loop
** would have returned it. */
static inline __attribute__((always_inline)) int eventRunT(ProfsumScan *s, const u8 *p,
    const u8 *e, const u8 **ppDone, unsigned *pFlags, int mode, int ws, int first){
  const u8 *a = s->aBuf;
  size_t n = s->nBuf, k0;
  const u8 *q = p;
  *ppDone = p;
  if( !first ){
    if( q<e && *q!=',' ) q = profsumSkipSpace(q, e);
    if( q>=e || *q!=',' ) return P_OK;
  }
  q++;
  if( ws && q<e ) PROFSUM_WS(q, e);
  k0 = (size_t)(q - a);
  while( k0<n && a[k0]=='"' ){
    size_t k1 = profsumNextMark(s, k0+1);
    const char *k = (const char*)a + k0 + 1;
    int64_t nk = (int64_t)(k1 - k0 - 1);
    const u8 *v;
    if( k1+2>=n || a[k1]!='"' ) return P_OK;
    v = a + k1 + 1;
    if( ws && v+2<e && profsumPair(v)==PROFSUM_PAIR(':', ' ') && v[2]>' ' ){
      v += 2;                               /* ": " then the value */
    }else{
      if( *v!=':' ){
        if( !ws || *v>' ' ) return P_OK;
        v = profsumSkipSpace(v, e);
        if( v>=e || *v!=':' ) return P_OK;
      }
      v++;
      if( ws && v<e ) PROFSUM_WS(v, e);
      if( v>=e ) return P_OK;
    }
    if( *v=='"' ){
      size_t v1 = profsumNextMark(s, (size_t)(v + 1 - a));
      ProfsumSpan val;
      if( v1>=n || a[v1]!='"' ) return P_OK;
      if( mode==0 && s->argSet && KEYIS(k,nk,"args") ) clearArgKeys(s);
      stringSpan(&val, v, a + v1 + 1, 0);
      /* applyMember, the keys of most string values inline */
      if( mode==0 && nk==2 && k[0]=='p' && k[1]=='h' ) spanCopy(&s->pEv->ph, &val);
      else if( mode==0 && nk==4 && memcmp(k, "name", 4)==0 ) spanCopy(&s->pEv->name, &val);
      else if( mode==0 && nk==3 && memcmp(k, "cat", 3)==0 ) spanCopy(&s->pEv->cat, &val);
      else applyMember(s, mode, k, nk, &val);
      q = a + v1 + 1;
    }else if( !ws && *v<=' ' ){
      return P_OK;
    }else if( mode==0 && *v=='{' && KEYIS(k,nk,"args") ){
      /* memberValue's args, inline: most events have it */
      ProfsumSpan val;
      unsigned af = 0;
      int rc;
      if( s->argSet ) clearArgKeys(s);
      if( s->flags & PROFSUM_SCAN_ARGKEYS ){
        rc = parseMembers(s, v, e, &q, &af, 1);
      }else{
        rc = skipContainer(s, v, e, &q, &af);
      }
      if( rc ) return rc;
      val.z = (const char*)v;
      val.n = q - v;
      val.type = PROFSUM_JT_OBJECT;
      val.flags = (unsigned char)af;
      *pFlags |= af;
      applyMember(s, 0, k, nk, &val);
    }else if( mode==1 && (*v=='[' || *v=='{' || (*v>='0' && *v<='9')
                          || (*v=='-' && v+1<e && v[1]!='I')) ){
      /* memberValue's scanValue of an args member, inline: a container
      ** (skipContainer) or a number (scanNumber) */
      ProfsumSpan val;
      unsigned vf = 0;
      int rc;
      if( *v=='[' || *v=='{' ){
        rc = skipContainer(s, v, e, &q, &vf);
        val.type = *v=='{' ? PROFSUM_JT_OBJECT : PROFSUM_JT_ARRAY;
      }else{
        rc = scanNumber(s, v, e, &q);
        val.type = PROFSUM_JT_NUMBER;
      }
      if( rc ) return rc;
      val.z = (const char*)v;
      val.n = q - v;
      val.flags = (unsigned char)vf;
      *pFlags |= vf;
      applyMember(s, 1, k, nk, &val);
    }else{
      int rc = -1;
      if( mode==0 && nk<=3 && ((*v>='0' && *v<='9') || *v=='-') ) rc = numberMember(s, k, nk, v, e, &q);
      if( rc<0 ) rc = memberValueOut(s, mode, k, nk, v, e, &q, pFlags);
      if( rc ) return rc;
    }
    *ppDone = q;
    if( ws && q+2<e && profsumPair(q)==PROFSUM_PAIR(',', ' ') && q[2]>' ' ){
      k0 = (size_t)(q + 2 - a);             /* ", " then the key */
      continue;
    }
    if( q+1>=e ) return P_OK;
    if( *q!=',' ){
      if( !ws || *q>' ' ) return P_OK;
      q = profsumSkipSpace(q, e);
      if( q+1>=e || *q!=',' ) return P_OK;
    }
    q++;
    if( ws ) PROFSUM_WS(q, e);
    k0 = (size_t)(q - a);
  }
  return P_OK;
}

/* eventRunT for an event object at p ('{'): the compact form first, then
** with white space from where it stopped (at white space, or at a ','
** that white space follows). */
static int eventRun(ProfsumScan *s, const u8 *p, const u8 *e, const u8 **ppDone,
                    unsigned *pFlags){
  int rc = eventRunT(s, p, e, ppDone, pFlags, 0, 0, 1);
  const u8 *q = *ppDone;
  if( rc==P_OK ){
    if( q==p ){
      rc = eventRunT(s, p, e, ppDone, pFlags, 0, 1, 1);
    }else if( q<e && (*q<=' ' || *q==',') ){
      rc = eventRunT(s, q, e, ppDone, pFlags, 0, 1, 0);
    }
  }
  return rc;
}

/* eventRunT for the args object at p ('{') of white-space form (an
** object that opens with a compact string member is read by strMemberRun
** first). */
static int argsRun(ProfsumScan *s, const u8 *p, const u8 *e, const u8 **ppDone,
                   unsigned *pFlags){
  return eventRunT(s, p, e, ppDone, pFlags, 1, 1, 1);
}

/* Parse the members of the object at p (which is '{'): mode 0 fills the
** event *s->pEv, mode 1 collects known args keys.  *pFlags gets the SF_*
** bits of everything inside.  Returns P_OK/P_MORE/P_ERR or -SQLITE_NOMEM. */
static int parseMembers(ProfsumScan *s, const u8 *p, const u8 *e,
                        const u8 **ppEnd, unsigned *pFlags, int mode){
  int afterComma = 0;
  int first = 1;
  const u8 *p0 = p;
  int run = mode==1 && MEMBER_RUN_OK(s, e);   /* argsRun not tried yet */
  if( MEMBER_RUN_OK(s, e) && (mode==0 || e-p<2 || p[1]!='"') ){
    const u8 *q;
    int rc = mode==0 ? eventRun(s, p, e, &q, pFlags) : argsRun(s, p, e, &q, pFlags);
    run = 0;
    if( rc ) return rc;
    if( q!=p ){ p = q; first = 0; }
    else p++;
  }else{
    p++;
  }
  for(;;){
    ProfsumSpan key;
    const u8 *pKey;
    const char *k;
    int64_t nk;
    char zKeyBuf[32];
    unsigned kf = 0;
    int rc;
    p = profsumSkipSpace(p, e);
    if( p>=e ) return P_MORE;
    if( *p=='}' ){
      if( afterComma ) *pFlags |= PROFSUM_SF_TRAIL;
      *ppEnd = p+1;
      return P_OK;
    }
    if( !first ){
      if( *p!=',' ){
        s->zErrWhy = "expected ',' or '}'";
        s->pErrAt = p;
        return P_ERR;
      }
      p++;
      afterComma = 1;
      p = profsumSkipSpace(p, e);
      if( p>=e ) return P_MORE;
      if( *p=='}' ) continue;
    }
    first = 0;
    if( *p!='"' ){
      s->zErrWhy = "expected a string key";
      s->pErrAt = p;
      return P_ERR;
    }
    if( mode==1 && MEMBER_RUN_OK(s, e) ){
      const u8 *q = strMemberRun(s, p, 1, pFlags);
      if( q!=p ){ p = q; afterComma = 0; continue; }
      if( run && p==p0+1 ){
        /* the first key opens no compact string run: argsRun from the
        ** object's start (nothing of it taken yet) */
        int rc = argsRun(s, p0, e, &q, pFlags);
        run = 0;
        if( rc ) return rc;
        if( q!=p0 ){ p = q; afterComma = 0; continue; }
      }
    }
    pKey = p;
    rc = scanStringFast(s, p, e, &p, &kf);
    if( rc ) return rc;
    *pFlags |= (kf & (PROFSUM_SF_CTRL|PROFSUM_SF_BADUTF8));
    stringSpan(&key, pKey, p, kf);
    k = keyText(&key, zKeyBuf, (int)sizeof(zKeyBuf), &nk);
    p = profsumSkipSpace(p, e);
    if( p>=e ) return P_MORE;
    if( *p!=':' ){
      s->zErrWhy = "expected ':' after a key";
      s->pErrAt = p;
      return P_ERR;
    }
    p++;
    p = profsumSkipSpace(p, e);
    if( p>=e ) return P_MORE;
    rc = memberValue(s, mode, k, nk, p, e, &p, pFlags);
    if( rc ) return rc;
    afterComma = 0;
  }
}

/* ------------------------------------------------------------------ */
/* Window management                                                   */
/* ------------------------------------------------------------------ */

/* Skip white space; refill as needed.  Returns SQLITE_OK with
** s->iPos<s->nBuf, SQLITE_DONE at the end of the data, or an error. */
static int skipWs(ProfsumScan *s, char **pzErr){
  for(;;){
    while( s->iPos<s->nBuf && aWs[s->aBuf[s->iPos]] ) s->iPos++;
    if( s->iPos<s->nBuf ) return SQLITE_OK;
    if( s->srcEof ) return SQLITE_DONE;
    {
      int rc = profsumScanRefill(s, pzErr);
      if( rc ) return rc;
    }
  }
}

/* Run one in-window parse step (an entry or a top-level value) and retry
** after a refill while it reports P_MORE.  kind: 0 = event object,
** 1 = any value (skipped), 2 = string (top-level key).  Returns P_OK with
** *ppEnd set, P_MORE when the data ended first, or an SQLite error code
** (negative) with *pzErr set. */
static int parseInWindow(ProfsumScan *s, int kind, const u8 **ppStart,
                         const u8 **ppEnd, ProfsumSpan *pSpan, char **pzErr){
  for(;;){
    const u8 *p = s->aBuf + s->iPos;
    const u8 *e = s->aBuf + s->nBuf;
    int rc;
    if( kind==0 ){
      unsigned f = 0;
      s->nPending = 0;
      s->nPendingLost = 0;
      s->nQuietPend = 0;
      /* aArg: only the spans the last entry set (argSet; none without
      ** ARGKEYS) are not zero */
      clearEvent(s);
      rc = parseMembers(s, p, e, ppEnd, &f, 0);
      s->entryFix = (unsigned char)(f & PROFSUM_SF_FIXUP);
      if( rc==P_OK ){
        if( f & PROFSUM_SF_TRAIL ) profsumScanPendDiag(s, "trailing_comma", "trailing comma inside the entry");
        if( f & PROFSUM_SF_CTRL ) profsumScanPendDiag(s, "control_character", "raw control character inside a string");
        if( f & PROFSUM_SF_NONFIN ) profsumScanPendDiag(s, "nonfinite_number", "bare NaN or Infinity (kept as a string in args)");
        if( f & PROFSUM_SF_BADUTF8 ) profsumScanPendDiag(s, "invalid_utf8", "bytes that are not UTF-8 inside a string (read as U+FFFD)");
      }
    }else if( kind==1 ){
      rc = scanValue(s, p, e, ppEnd, pSpan);
    }else{
      unsigned f = 0;
      rc = scanString(s, p, e, ppEnd, &f);
      if( rc==P_OK ){
        stringSpan(pSpan, p, *ppEnd, f);
      }
    }
    if( rc==-SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("%s: '%s': out of memory for the nesting of entry %lld at byte %lld",
          s->zFunc, profsumSrcPath(s->pSrc), (long long)s->nEntries,
          (long long)(s->iBase + (int64_t)s->iPos));
      return rc;
    }
    if( rc<0 ) return rc;
    if( rc==P_ERR ){ profsumScanSyntaxError(s, pzErr); return -SQLITE_ERROR; }
    if( rc==P_OK ){ *ppStart = p; return P_OK; }
    if( s->srcEof ) return P_MORE;
    rc = profsumScanRefill(s, pzErr);
    if( rc ) return -rc;
  }
}

/* ------------------------------------------------------------------ */
/* Public interface                                                    */
/* ------------------------------------------------------------------ */

/* See profsum_reader.h. */
int profsumScanOpen(ProfsumSrc *pSrc, const char *zFunc, unsigned flags,
                    ProfsumDiagFn xDiag, void *pDiagCtx,
                    ProfsumScan **pp, char **pzErr){
  ProfsumScan *s;
  *pp = 0;
  s = sqlite3_malloc64(sizeof(*s));
  if( s==0 ){
    *pzErr = sqlite3_mprintf("%s: '%s': out of memory opening it", zFunc, profsumSrcPath(pSrc));
    profsumSrcClose(pSrc);
    return SQLITE_NOMEM;
  }
  memset(s, 0, sizeof(*s));
  s->pSrc = pSrc;
  s->zFunc = zFunc;
  s->flags = flags;
  s->xDiag = xDiag;
  s->pDiagCtx = pDiagCtx;
  s->idx.xClassify = profsumStrIndexClassifier();
  s->pEv = &s->ev;
  s->nAlloc = (size_t)windowInit(profsumSrcFileSize(pSrc));
  s->aBuf = sqlite3_malloc64(s->nAlloc);
  if( s->aBuf==0 ){
    *pzErr = sqlite3_mprintf("%s: '%s': out of memory opening it (a window of %lld bytes)",
                             zFunc, profsumSrcPath(pSrc), (long long)s->nAlloc);
    profsumScanClose(s);
    return SQLITE_NOMEM;
  }
  *pp = s;
  return SQLITE_OK;
}

/* Handle one element of traceEvents at s->iPos.  Returns SQLITE_ROW when
** it is a row, SQLITE_OK when it was consumed without a row, SQLITE_DONE
** when the data ended inside it, or an error. */
static int scanElement(ProfsumScan *s, char **pzErr){
  const u8 *pStart, *pEnd;
  ProfsumSpan sp;
  int64_t idx = s->nEntries;
  int64_t off = s->iBase + (int64_t)s->iPos;
  int rc;
  u8 c = s->aBuf[s->iPos];
  rc = parseInWindow(s, c=='{' ? 0 : 1, &pStart, &pEnd, &sp, pzErr);
  if( rc<0 ) return -rc;
  off = s->iBase + (int64_t)s->iPos;      /* the entry starts at iPos (refills keep that) */
  if( rc==P_MORE ){
    char z[96];
    sqlite3_snprintf(sizeof(z), z, "the data ends inside entry %lld; it is dropped",
                     (long long)idx);
    scanEmitDiag(s, idx, off, "truncated_entry", z);
    s->iPos = s->nBuf;
    s->state = ST_DONE;
    if( s->xDiag ){
      scanEmitDiag(s, -1, s->iBase + (int64_t)s->nBuf, "unterminated_array",
               "traceEvents has no closing ']' (all complete entries kept)");
      if( !s->bareArray ){
        scanEmitDiag(s, -1, s->iBase + (int64_t)s->nBuf, "unterminated_object",
                 "the top-level object has no closing '}'");
      }
    }
    return SQLITE_DONE;
  }
  s->iPos = (size_t)(pEnd - s->aBuf);
  s->nEntries++;
  s->state = ST_ARR_AFTER;
  s->afterComma = 0;
  if( s->skipping ){
    /* an entry of a traceEvents array a later one replaces
    ** (profsumScanSkipArrays): no row, no count, no diagnostic */
    s->nSkipped++;
    s->nPending = 0;
    s->nPendingLost = 0;
    s->nQuietPend = 0;
    return SQLITE_OK;
  }
  if( c!='{' ){
    char z[96];
    static const char *azType[] = {"", "null", "true", "false", "a number",
                                   "a string", "an array", "an object", "NaN/Infinity"};
    sqlite3_snprintf(sizeof(z), z, "entry is %s, not an object; no row", azType[sp.type]);
    scanEmitDiag(s, idx, off, "not_an_object", z);
    return SQLITE_OK;
  }
  if( s->pEv->ph.type!=PROFSUM_JT_STRING ){
    if( s->pEv->ph.type==PROFSUM_JT_NONE ){
      profsumScanPendDiag(s, "no_ph", (pEnd - pStart)<=2 || s->pEv->name.z==0
               ? "entry has no \"ph\" (e.g. the trailing {}); no row"
               : "entry has no \"ph\"; no row");
      /* PROFSUM_SCAN_NOPH: out all the same (ph absent), for its typed
      ** fields' checks */
      if( s->flags & PROFSUM_SCAN_NOPH ) goto out;
    }else{
      profsumScanPendDiag(s, "ph_not_string", "\"ph\" is not a string; no row");
    }
    scanFlushDiag(s, idx, off);
    return SQLITE_OK;
  }
out:
  if( s->pEv->ph.flags & PROFSUM_SF_ESCAPE ) profsumScanPhUnescape(s->pEv);
  s->pEv->idx = idx;
  s->pEv->iOffset = off;
  s->pEv->raw.z = (const char*)pStart;
  s->pEv->raw.n = pEnd - pStart;
  s->pEv->raw.type = PROFSUM_JT_OBJECT;
  s->pEv->raw.flags = s->entryFix;        /* what profsumSpanJson must repair */
  scanFlushDiag(s, idx, off);
  return SQLITE_ROW;
}

/* See profsum_reader.h. */
int profsumScanNext(ProfsumScan *s, ProfsumEvent **ppEv, char **pzErr){
  int rc;
  *ppEv = 0;
  for(;;){
    if( s->state==ST_DONE ) return SQLITE_DONE;
    rc = skipWs(s, pzErr);
    if( rc==SQLITE_DONE ){
      switch( s->state ){
        case ST_START:
          *pzErr = sqlite3_mprintf("%s: '%s': no JSON data (only white space)",
                                   s->zFunc, profsumSrcPath(s->pSrc));
          return SQLITE_ERROR;
        case ST_ARR_ELEM: case ST_ARR_AFTER:
          scanEmitDiag(s, -1, s->iBase + (int64_t)s->nBuf, "unterminated_array",
                   "traceEvents has no closing ']' (all complete entries kept)");
          if( !s->bareArray ){
            scanEmitDiag(s, -1, s->iBase + (int64_t)s->nBuf, "unterminated_object",
                     "the top-level object has no closing '}'");
          }
          break;
        case ST_TOP_KEY: case ST_TOP_AFTER:
          scanEmitDiag(s, -1, s->iBase + (int64_t)s->nBuf, "unterminated_object",
                   "the top-level object has no closing '}'");
          break;
      }
      s->state = ST_DONE;
      return SQLITE_DONE;
    }
    if( rc ) return rc;
    {
      u8 c = s->aBuf[s->iPos];
      switch( s->state ){
        case ST_START:
          if( c=='{' ){ s->state = ST_TOP_KEY; s->iPos++; s->afterComma = 0; break; }
          if( c=='[' ){ s->state = ST_ARR_ELEM; s->bareArray = 1; s->iPos++; s->afterComma = 0; s->seenEvents = 1; break; }
          if( c==0xEF && s->iPos+2<s->nBuf && s->aBuf[s->iPos+1]==0xBB && s->aBuf[s->iPos+2]==0xBF ){
            /* a UTF-8 byte order mark: read past (JSON forbids it; the
            ** reference's decoder refuses the file) */
            scanEmitDiag(s, -1, s->iBase + (int64_t)s->iPos, "byte_order_mark",
                     "a UTF-8 byte order mark before the JSON text: read past it (the "
                     "reference summarizer rejects the file)");
            s->iPos += 3;
            break;
          }
          {
            /* the likeliest mistake of a JAX user: the profile's protobuf */
            const char *zP = profsumSrcPath(s->pSrc);
            size_t nP = zP ? strlen(zP) : 0;
            int isPb = nP>3 && strcmp(zP+nP-3, ".pb")==0;
            *pzErr = sqlite3_mprintf("%s: '%s': %s: expected '{' or '[' "
                "at byte %lld%s, found 0x%02x%s", s->zFunc, zP,
                profsumSrcIsGzip(s->pSrc) ? "gzip, but its content is not JSON"
                                          : "neither gzip nor JSON",
                (long long)(s->iBase + (int64_t)s->iPos),
                profsumSrcIsGzip(s->pSrc) ? " of the decompressed data" : "", c,
                isPb ? " (not an XSpace protobuf either: profsum reads trace JSON and "
                       "<host>.xplane.pb files)" : "");
          }
          return SQLITE_ERROR;
        case ST_TOP_KEY: {
          const u8 *pStart, *pEnd;
          ProfsumSpan key, val;
          char zKeyBuf[32];
          const char *k;
          int64_t nk;
          int isEvents, isUnit, nTopKey;
          char zTopKey[PROFSUM_TOP_KEY_MAX+1];
          if( c=='}' ){
            if( s->afterComma ){
              scanEmitDiag(s, -1, s->iBase + (int64_t)s->iPos, "trailing_comma",
                       "trailing comma in the top-level object");
            }
            profsumScanNoEventsDiag(s);
            s->iPos++;
            s->state = ST_END;
            break;
          }
          if( c!='"' ){
            s->zErrWhy = "expected a string key in the top-level object";
            s->pErrAt = s->aBuf + s->iPos;
            return profsumScanSyntaxError(s, pzErr);
          }
          rc = parseInWindow(s, 2, &pStart, &pEnd, &key, pzErr);
          if( rc<0 ) return -rc;
          if( rc==P_MORE ){ s->iPos = s->nBuf; continue; }   /* EOF inside a key */
          k = keyText(&key, zKeyBuf, (int)sizeof(zKeyBuf), &nk);
          /* Decide now: refills below may move the window under k. */
          isEvents = KEYIS(k, nk, "traceEvents");
          isUnit = KEYIS(k, nk, "displayTimeUnit");
          nTopKey = (s->flags & PROFSUM_SCAN_TOPMEMBERS) && !isEvents ? profsumScanTopKey(&key, zTopKey) : -1;
          if( nTopKey==-2 ){
            *pzErr = sqlite3_mprintf("%s: '%s': out of memory reading a top-level key at byte %lld", s->zFunc,
                                     profsumSrcPath(s->pSrc), (long long)(s->iBase + (int64_t)(pStart - s->aBuf)));
            return SQLITE_NOMEM;
          }
          s->iPos = (size_t)(pEnd - s->aBuf);
          rc = skipWs(s, pzErr);
          if( rc==SQLITE_DONE ) continue;
          if( rc ) return rc;
          if( s->aBuf[s->iPos]!=':' ){
            s->zErrWhy = "expected ':' after a key";
            s->pErrAt = s->aBuf + s->iPos;
            return profsumScanSyntaxError(s, pzErr);
          }
          s->iPos++;
          rc = skipWs(s, pzErr);
          if( rc==SQLITE_DONE ) continue;
          if( rc ) return rc;
          s->afterComma = 0;
          if( isEvents && s->aBuf[s->iPos]=='[' ){
            if( s->seenEvents ){
              scanEmitDiag(s, -1, s->iBase + (int64_t)s->iPos, "duplicate_key",
                       s->nSkipArrays>0
                       ? "another traceEvents array: the summary reads only the last one, "
                         "as the reference does; trace_events reads every array (entry "
                         "indexes continue)"
                       : "another traceEvents array: its entries are read too (entry "
                         "indexes continue; a summary reads only the last array, as the "
                         "reference does)");
            }
            s->seenEvents = 1;
            s->skipping = ++s->nEventArrays <= s->nSkipArrays;
            s->iPos++;
            s->state = ST_ARR_ELEM;
            break;
          }
          if( isEvents && s->aBuf[s->iPos]!='n' ){
            *pzErr = sqlite3_mprintf("%s: '%s': wrong type at byte %lld: traceEvents "
                "must be an array", s->zFunc, profsumSrcPath(s->pSrc),
                (long long)(s->iBase + (int64_t)s->iPos));
            return SQLITE_ERROR;
          }
          {
            rc = parseInWindow(s, 1, &pStart, &pEnd, &val, pzErr);
            if( rc<0 ) return -rc;
            if( rc==P_MORE ){ s->iPos = s->nBuf; continue; }
            if( isUnit ){
              rc = profsumScanSetUnit(s, &val, s->iBase + (int64_t)(pStart - s->aBuf), pzErr);
              if( rc ) return rc;
            }
            if( nTopKey>=0
             && (rc = profsumScanKeepTop(s, zTopKey, nTopKey, pStart, (size_t)(pEnd-pStart), pzErr))!=0 ) return rc;
            s->iPos = (size_t)(pEnd - s->aBuf);
          }
          s->state = ST_TOP_AFTER;
          break;
        }
        case ST_TOP_AFTER:
          if( c==',' ){ s->iPos++; s->state = ST_TOP_KEY; s->afterComma = 1; break; }
          if( c=='}' ){ profsumScanNoEventsDiag(s); s->iPos++; s->state = ST_END; break; }
          s->zErrWhy = "expected ',' or '}' in the top-level object";
          s->pErrAt = s->aBuf + s->iPos;
          return profsumScanSyntaxError(s, pzErr);
        case ST_ARR_ELEM:
          if( c==']' ){
            if( s->afterComma ){
              scanEmitDiag(s, -1, s->iBase + (int64_t)s->iPos, "trailing_comma",
                       "trailing comma at the end of traceEvents");
            }
            s->iPos++;
            s->state = s->bareArray ? ST_END : ST_TOP_AFTER;
            s->skipping = 0;
            break;
          }
          rc = scanElement(s, pzErr);
          if( rc==SQLITE_ROW ){ *ppEv = s->pEv; return SQLITE_ROW; }
          if( rc==SQLITE_DONE ) return SQLITE_DONE;
          if( rc ) return rc;
          break;
        case ST_ARR_AFTER:
          if( c==',' ){ s->iPos++; s->state = ST_ARR_ELEM; s->afterComma = 1; break; }
          if( c==']' ){
            s->iPos++;
            s->state = s->bareArray ? ST_END : ST_TOP_AFTER;
            s->skipping = 0;
            break;
          }
          s->zErrWhy = "expected ',' or ']' between entries";
          s->pErrAt = s->aBuf + s->iPos;
          return profsumScanSyntaxError(s, pzErr);
        case ST_END:
          *pzErr = sqlite3_mprintf("%s: '%s': unexpected data after the end of the "
              "JSON document at byte %lld", s->zFunc, profsumSrcPath(s->pSrc),
              (long long)(s->iBase + (int64_t)s->iPos));
          return SQLITE_ERROR;
      }
    }
  }
}

/* See profsum_reader.h. */
int64_t profsumScanEntries(ProfsumScan *p){ return p->nEntries - p->nSkipped; }
int profsumScanEventArrays(ProfsumScan *p){ return p->nEventArrays; }
void profsumScanSkipArrays(ProfsumScan *p, int n){ p->nSkipArrays = n; }
int64_t profsumScanQuietRounded(ProfsumScan *p){ return p->nQuietRounded; }
int profsumScanIsArrayForm(ProfsumScan *p){ return p->bareArray; }
int64_t profsumScanBytes(ProfsumScan *p){ return p->iBase + (int64_t)p->iPos; }
const char *profsumScanDisplayTimeUnit(ProfsumScan *p){ return p->zDisplayTimeUnit; }
ProfsumSrc *profsumScanSrc(ProfsumScan *p){ return p->pSrc; }

/* See profsum_reader.h. */
void profsumScanClose(ProfsumScan *p){
  if( p==0 ) return;
  profsumSrcClose(p->pSrc);
  sqlite3_free(p->aBuf);
  sqlite3_free(p->aStk);
  profsumStrIndexFree(&p->idx);
  sqlite3_free(p->zDisplayTimeUnit);
  profsumScanTopFree(p);
  sqlite3_free(p);
}
