/*
** query.c — profsum_query_json(trace, question [, top_k]): the answer of
** query_profile_summary() (docs/spec/tools.md
** §2) for an imported trace, as JSON text (Python json.dumps(indent=2,
** sort_keys=True), jsontree.c).
**
**   SELECT profsum_query_json('baseline', 'What are the top 3 ops by exclusive time?', 3);
**   SELECT profsum_query_json(1, 'what is the gap before iota.296?');
**   SELECT profsum_query_json('baseline', 'show context for op copy.564');
**
** The answer is built from the trace's profile_summary.v1 document
** (profsumDocBuild() with the trace's stored knobs), so a trace imported
** from a v1 file is answered from that file.
**
** Intents are tested in the order of §2 by plain substring tests on the
** lower-cased question.  Targets ("the gap before X", "context for X")
** are extracted from the original text as the reference's regular
** expressions do, with Python 3 semantics for str.lower(), str.strip(),
** \b, \w, \s and \d over all of Unicode: the character tables below were
** generated from Python 3.11's re and str.lower (tests/test_query.py checks
** samples against Python).  IGNORECASE keyword matching folds the only
** non-ASCII code points Python's re equates with the letters involved
** (U+0130 and U+0131 match 'i', in "operation").
**
** Reads tables only: not DIRECTONLY, not DETERMINISTIC (the tables change).
*/
#include "profsum_int.h"
#include "query.h"
#include "summary_doc.h"
#include "doc_int.h"
#include "funcs.h"
#include "jsontree.h"
#include "sqlcall.h"
#include "pytext.h"

#include <string.h>

/* ================================================================== */
/* Unicode tables                                                      */
/* ================================================================== */
/* Generated from Python 3.11.2 (str.lower), code points >= 0x80
** (surrogates excluded; re's \w, \d and \s are in ext/util/pytext.c):
**   aLowerRun: the cp with len(chr(cp).lower())==1 and a different lower
**     case, merged into runs of equal delta ord(lower)-cp and stride 1 or 2
**     (U+0130, whose lower case is two code points, is handled in code). */
/* {first, last, delta, stride}: cp in [first,last] with (cp-first)%stride==0 lowers to cp+delta. */
static const int aLowerRun[][4] = {
  {0xC0,0xD6,32,1},{0xD8,0xDE,32,1},{0x100,0x12E,1,2},{0x132,0x136,1,2},
  {0x139,0x147,1,2},{0x14A,0x176,1,2},{0x178,0x178,-121,1},{0x179,0x17D,1,2},
  {0x181,0x181,210,1},{0x182,0x184,1,2},{0x186,0x186,206,1},{0x187,0x187,1,1},
  {0x189,0x18A,205,1},{0x18B,0x18B,1,1},{0x18E,0x18E,79,1},
  {0x18F,0x18F,202,1},{0x190,0x190,203,1},{0x191,0x191,1,1},
  {0x193,0x193,205,1},{0x194,0x194,207,1},{0x196,0x196,211,1},
  {0x197,0x197,209,1},{0x198,0x198,1,1},{0x19C,0x19C,211,1},
  {0x19D,0x19D,213,1},{0x19F,0x19F,214,1},{0x1A0,0x1A4,1,2},
  {0x1A6,0x1A6,218,1},{0x1A7,0x1A7,1,1},{0x1A9,0x1A9,218,1},{0x1AC,0x1AC,1,1},
  {0x1AE,0x1AE,218,1},{0x1AF,0x1AF,1,1},{0x1B1,0x1B2,217,1},{0x1B3,0x1B5,1,2},
  {0x1B7,0x1B7,219,1},{0x1B8,0x1B8,1,1},{0x1BC,0x1BC,1,1},{0x1C4,0x1C4,2,1},
  {0x1C5,0x1C5,1,1},{0x1C7,0x1C7,2,1},{0x1C8,0x1C8,1,1},{0x1CA,0x1CA,2,1},
  {0x1CB,0x1DB,1,2},{0x1DE,0x1EE,1,2},{0x1F1,0x1F1,2,1},{0x1F2,0x1F4,1,2},
  {0x1F6,0x1F6,-97,1},{0x1F7,0x1F7,-56,1},{0x1F8,0x21E,1,2},
  {0x220,0x220,-130,1},{0x222,0x232,1,2},{0x23A,0x23A,10795,1},
  {0x23B,0x23B,1,1},{0x23D,0x23D,-163,1},{0x23E,0x23E,10792,1},
  {0x241,0x241,1,1},{0x243,0x243,-195,1},{0x244,0x244,69,1},
  {0x245,0x245,71,1},{0x246,0x24E,1,2},{0x370,0x372,1,2},{0x376,0x376,1,1},
  {0x37F,0x37F,116,1},{0x386,0x386,38,1},{0x388,0x38A,37,1},
  {0x38C,0x38C,64,1},{0x38E,0x38F,63,1},{0x391,0x3A1,32,1},{0x3A3,0x3AB,32,1},
  {0x3CF,0x3CF,8,1},{0x3D8,0x3EE,1,2},{0x3F4,0x3F4,-60,1},{0x3F7,0x3F7,1,1},
  {0x3F9,0x3F9,-7,1},{0x3FA,0x3FA,1,1},{0x3FD,0x3FF,-130,1},
  {0x400,0x40F,80,1},{0x410,0x42F,32,1},{0x460,0x480,1,2},{0x48A,0x4BE,1,2},
  {0x4C0,0x4C0,15,1},{0x4C1,0x4CD,1,2},{0x4D0,0x52E,1,2},{0x531,0x556,48,1},
  {0x10A0,0x10C5,7264,1},{0x10C7,0x10C7,7264,1},{0x10CD,0x10CD,7264,1},
  {0x13A0,0x13EF,38864,1},{0x13F0,0x13F5,8,1},{0x1C90,0x1CBA,-3008,1},
  {0x1CBD,0x1CBF,-3008,1},{0x1E00,0x1E94,1,2},{0x1E9E,0x1E9E,-7615,1},
  {0x1EA0,0x1EFE,1,2},{0x1F08,0x1F0F,-8,1},{0x1F18,0x1F1D,-8,1},
  {0x1F28,0x1F2F,-8,1},{0x1F38,0x1F3F,-8,1},{0x1F48,0x1F4D,-8,1},
  {0x1F59,0x1F5F,-8,2},{0x1F68,0x1F6F,-8,1},{0x1F88,0x1F8F,-8,1},
  {0x1F98,0x1F9F,-8,1},{0x1FA8,0x1FAF,-8,1},{0x1FB8,0x1FB9,-8,1},
  {0x1FBA,0x1FBB,-74,1},{0x1FBC,0x1FBC,-9,1},{0x1FC8,0x1FCB,-86,1},
  {0x1FCC,0x1FCC,-9,1},{0x1FD8,0x1FD9,-8,1},{0x1FDA,0x1FDB,-100,1},
  {0x1FE8,0x1FE9,-8,1},{0x1FEA,0x1FEB,-112,1},{0x1FEC,0x1FEC,-7,1},
  {0x1FF8,0x1FF9,-128,1},{0x1FFA,0x1FFB,-126,1},{0x1FFC,0x1FFC,-9,1},
  {0x2126,0x2126,-7517,1},{0x212A,0x212A,-8383,1},{0x212B,0x212B,-8262,1},
  {0x2132,0x2132,28,1},{0x2160,0x216F,16,1},{0x2183,0x2183,1,1},
  {0x24B6,0x24CF,26,1},{0x2C00,0x2C2F,48,1},{0x2C60,0x2C60,1,1},
  {0x2C62,0x2C62,-10743,1},{0x2C63,0x2C63,-3814,1},{0x2C64,0x2C64,-10727,1},
  {0x2C67,0x2C6B,1,2},{0x2C6D,0x2C6D,-10780,1},{0x2C6E,0x2C6E,-10749,1},
  {0x2C6F,0x2C6F,-10783,1},{0x2C70,0x2C70,-10782,1},{0x2C72,0x2C72,1,1},
  {0x2C75,0x2C75,1,1},{0x2C7E,0x2C7F,-10815,1},{0x2C80,0x2CE2,1,2},
  {0x2CEB,0x2CED,1,2},{0x2CF2,0x2CF2,1,1},{0xA640,0xA66C,1,2},
  {0xA680,0xA69A,1,2},{0xA722,0xA72E,1,2},{0xA732,0xA76E,1,2},
  {0xA779,0xA77B,1,2},{0xA77D,0xA77D,-35332,1},{0xA77E,0xA786,1,2},
  {0xA78B,0xA78B,1,1},{0xA78D,0xA78D,-42280,1},{0xA790,0xA792,1,2},
  {0xA796,0xA7A8,1,2},{0xA7AA,0xA7AA,-42308,1},{0xA7AB,0xA7AB,-42319,1},
  {0xA7AC,0xA7AC,-42315,1},{0xA7AD,0xA7AD,-42305,1},{0xA7AE,0xA7AE,-42308,1},
  {0xA7B0,0xA7B0,-42258,1},{0xA7B1,0xA7B1,-42282,1},{0xA7B2,0xA7B2,-42261,1},
  {0xA7B3,0xA7B3,928,1},{0xA7B4,0xA7C2,1,2},{0xA7C4,0xA7C4,-48,1},
  {0xA7C5,0xA7C5,-42307,1},{0xA7C6,0xA7C6,-35384,1},{0xA7C7,0xA7C9,1,2},
  {0xA7D0,0xA7D0,1,1},{0xA7D6,0xA7D8,1,2},{0xA7F5,0xA7F5,1,1},
  {0xFF21,0xFF3A,32,1},{0x10400,0x10427,40,1},{0x104B0,0x104D3,40,1},
  {0x10570,0x1057A,39,1},{0x1057C,0x1058A,39,1},{0x1058C,0x10592,39,1},
  {0x10594,0x10595,39,1},{0x10C80,0x10CB2,64,1},{0x118A0,0x118BF,32,1},
  {0x16E40,0x16E5F,32,1},{0x1E900,0x1E921,34,1},
};

#define N_ELEM(a) ((int)(sizeof(a)/sizeof(a[0])))

/* Python re \w (str patterns): Unicode letters and digits, and '_'
** (ext/util/pytext.c).  BAD_BYTE values are none. */
static int isWordCp(unsigned int cp){
  return cp<=0x10FFFF && profsumPyIsWord((int)cp);
}

/* Python re \d: Unicode decimal digits (ext/util/pytext.c).  BAD_BYTE
** values are none. */
static int isDigitCp(unsigned int cp){
  return cp<=0x10FFFF && profsumPyDigit((int)cp)>=0;
}

/* Python str.isspace() (= re \s): the 29 whitespace code points. */
static int isWsCp(unsigned int cp){
  return cp<=0x10FFFF && profsumPyIsSpace((int)cp);
}

/* Python str.lower() of one code point, when it is one code point (every
** case but U+0130, handled by the caller). */
static unsigned int lowerCp(unsigned int cp){
  int lo = 0, hi = N_ELEM(aLowerRun)-1, k = -1;
  if( cp<0x80 ) return (cp>='A' && cp<='Z') ? cp+32 : cp;
  while( lo<=hi ){                    /* last run with first <= cp */
    int mid = (lo+hi)/2;
    if( (unsigned int)aLowerRun[mid][0]<=cp ){ k = mid; lo = mid+1; }
    else hi = mid-1;
  }
  if( k>=0 && cp<=(unsigned int)aLowerRun[k][1]
   && (cp-(unsigned int)aLowerRun[k][0]) % (unsigned int)aLowerRun[k][3]==0 ){
    return (unsigned int)((int)cp + aLowerRun[k][2]);
  }
  return cp;
}

/* Invalid UTF-8 bytes decode to U+DC80+byte (as Python's surrogateescape
** would): not a word, digit or space character, never lower-cased. */
#define BAD_BYTE(b) (0xDC00u + (unsigned int)(b))

/* Decode the code point at z[i] (n bytes in z); returns its length. */
static int utf8At(const unsigned char *z, int n, int i, unsigned int *pCp){
  unsigned int c = z[i], cp;
  int len, k;
  if( c<0x80 ){ *pCp = c; return 1; }
  if( c>=0xC2 && c<=0xDF ){ len = 2; cp = c & 0x1F; }
  else if( c>=0xE0 && c<=0xEF ){ len = 3; cp = c & 0x0F; }
  else if( c>=0xF0 && c<=0xF4 ){ len = 4; cp = c & 0x07; }
  else { *pCp = BAD_BYTE(c); return 1; }
  if( i+len>n ){ *pCp = BAD_BYTE(c); return 1; }
  for(k=1; k<len; k++){
    unsigned int d = z[i+k];
    if( (d & 0xC0)!=0x80 ){ *pCp = BAD_BYTE(c); return 1; }
    cp = (cp<<6) | (d & 0x3F);
  }
  if( (len==3 && (cp<0x800 || (cp>=0xD800 && cp<=0xDFFF))) || (len==4 && (cp<0x10000 || cp>0x10FFFF)) ){
    *pCp = BAD_BYTE(c);
    return 1;
  }
  *pCp = cp;
  return len;
}

/* Start of the code point that ends just before byte i (i > 0), decoded
** consistently with utf8At(). */
static int utf8Before(const unsigned char *z, int n, int i, unsigned int *pCp){
  int s;
  for(s=i-1; s>0 && s>i-4 && (z[s] & 0xC0)==0x80; s--){}
  if( utf8At(z, n, s, pCp)==i-s ) return s;
  *pCp = BAD_BYTE(z[i-1]);
  return i-1;
}

/* Append code point cp as UTF-8 (BAD_BYTE values as the raw byte). */
static void appendCp(sqlite3_str *s, unsigned int cp){
  char b[4];
  if( cp>=0xDC80 && cp<=0xDCFF ){ b[0] = (char)(cp-0xDC00); sqlite3_str_append(s, b, 1); }
  else if( cp<0x80 ){ b[0] = (char)cp; sqlite3_str_append(s, b, 1); }
  else if( cp<0x800 ){
    b[0] = (char)(0xC0|(cp>>6)); b[1] = (char)(0x80|(cp&0x3F));
    sqlite3_str_append(s, b, 2);
  }else if( cp<0x10000 ){
    b[0] = (char)(0xE0|(cp>>12)); b[1] = (char)(0x80|((cp>>6)&0x3F)); b[2] = (char)(0x80|(cp&0x3F));
    sqlite3_str_append(s, b, 3);
  }else{
    b[0] = (char)(0xF0|(cp>>18)); b[1] = (char)(0x80|((cp>>12)&0x3F));
    b[2] = (char)(0x80|((cp>>6)&0x3F)); b[3] = (char)(0x80|(cp&0x3F));
    sqlite3_str_append(s, b, 4);
  }
}

/* Python str.lower() of z[0..n): a new string (sqlite3_malloc'd), 0 on OOM. */
static char *pyLower(const char *z, int n){
  const unsigned char *u = (const unsigned char*)z;
  sqlite3_str *s = sqlite3_str_new(0);
  int i = 0;
  while( i<n ){
    unsigned int cp;
    int l = utf8At(u, n, i, &cp);
    if( cp==0x130 ) sqlite3_str_appendall(s, "i\xCC\x87");
    else appendCp(s, lowerCp(cp));
    i += l;
  }
  return sqlite3_str_finish(s);   /* 0 for OOM, and for "" (see lowerOf) */
}

/* pyLower() that never confuses "" with OOM: *pOom is set on OOM. */
static char *lowerOf(const char *z, int n, int *pOom){
  char *r;
  if( n==0 ){ r = sqlite3_mprintf(""); }
  else r = pyLower(z, n);
  if( r==0 ) *pOom = 1;
  return r;
}

/* ================================================================== */
/* Target extraction (Python semantics)                                */
/* ================================================================== */

/* str.strip(): trim Unicode whitespace from z[*pi..*pe). */
static void stripWs(const char *z, int n, int *pi, int *pe){
  const unsigned char *u = (const unsigned char*)z;
  unsigned int cp;
  while( *pi<*pe ){
    int l = utf8At(u, *pe, *pi, &cp);
    if( !isWsCp(cp) ) break;
    *pi += l;
  }
  while( *pe>*pi ){
    int s = utf8Before(u, *pe, *pe, &cp);
    if( s<*pi || !isWsCp(cp) ) break;
    *pe = s;
  }
  (void)n;
}

/* str.strip("`\"'?.!, "). */
static int isStripChar(char c){
  return c=='`' || c=='"' || c=='\'' || c=='?' || c=='.' || c=='!' || c==',' || c==' ';
}
static void stripSet(const char *z, int *pi, int *pe){
  while( *pi<*pe && isStripChar(z[*pi]) ) (*pi)++;
  while( *pe>*pi && isStripChar(z[*pe-1]) ) (*pe)--;
}

/* Case-insensitive (re.IGNORECASE) match of the ASCII lower-case word zKw
** at z[i..e).  Returns the number of bytes matched, or -1. */
static int matchWordCI(const char *z, int i, int e, const char *zKw){
  int j = i;
  for(; *zKw; zKw++){
    unsigned char c;
    if( j>=e ) return -1;
    c = (unsigned char)z[j];
    if( c<0x80 ){
      if( c>='A' && c<='Z' ) c = (unsigned char)(c+32);
      if( c!=(unsigned char)*zKw ) return -1;
      j++;
    }else if( *zKw=='i' && c==0xC4 && j+1<e
           && ((unsigned char)z[j+1]==0xB0 || (unsigned char)z[j+1]==0xB1) ){
      j += 2;                          /* U+0130, U+0131 */
    }else{
      return -1;
    }
  }
  return j-i;
}

/* re.sub(r"^(op|operation)\s+", "", t, flags=re.IGNORECASE) on z[*pi..e). */
static void dropOpPrefix(const char *z, int *pi, int e){
  static const char *azKw[] = {"op", "operation"};
  int k;
  for(k=0; k<2; k++){
    int m = matchWordCI(z, *pi, e, azKw[k]);
    int j, nWs = 0;
    unsigned int cp;
    if( m<0 ) continue;
    j = *pi + m;
    while( j<e ){
      int l = utf8At((const unsigned char*)z, e, j, &cp);
      if( !isWsCp(cp) ) break;
      j += l;
      nWs++;
    }
    if( nWs>0 ){ *pi = j; return; }
  }
}

/*
** _normalize_target(): strip, strip the punctuation set, drop a leading
** "op "/"operation "; empty → 0 (None).  Returns a new string or 0; *pOom
** is set when 0 means out of memory.
*/
static char *normTarget(const char *z, int i, int e, int *pOom){
  char *r;
  stripWs(z, e, &i, &e);
  stripSet(z, &i, &e);
  dropOpPrefix(z, &i, e);
  if( e<=i ) return 0;
  r = sqlite3_mprintf("%.*s", e-i, z+i);
  if( r==0 ) *pOom = 1;
  return r;
}

/* Is there a \b word boundary at byte i of z[0..n)? (given that one side
** is known to be a word character, only the other side is tested) */
static int wordBefore(const char *z, int n, int i){
  unsigned int cp;
  if( i==0 ) return 0;
  utf8Before((const unsigned char*)z, n, i, &cp);
  return isWordCp(cp);
}
static int wordAt(const char *z, int n, int i){
  unsigned int cp;
  if( i>=n ) return 0;
  utf8At((const unsigned char*)z, n, i, &cp);
  return isWordCp(cp);
}

/*
** _extract_target_after_keyword(question, kw): the first whole-word,
** case-insensitive occurrence of kw; the rest of the question, stripped,
** normalized.  0 (None) when kw does not occur or nothing remains.
*/
static char *targetAfter(const char *z, int n, const char *zKw, int *pOom){
  int i = 0;
  while( i<n ){
    unsigned int cp;
    int m = matchWordCI(z, i, n, zKw);
    if( m>0 && !wordBefore(z, n, i) && !wordAt(z, n, i+m) ){
      int b = i+m, e = n;
      stripWs(z, n, &b, &e);
      stripSet(z, &b, &e);
      return normTarget(z, b, e, pOom);
    }
    i += utf8At((const unsigned char*)z, n, i, &cp);
  }
  return 0;
}

/* _extract_op_like_token(): the first \b[A-Za-z_][A-Za-z0-9_]*\.\d+\b,
** normalized; 0 when none. */
static char *opLikeToken(const char *z, int n, int *pOom){
  int i = 0;
  while( i<n ){
    unsigned int cp;
    char c = z[i];
    if( ((c>='A' && c<='Z') || (c>='a' && c<='z') || c=='_') && !wordBefore(z, n, i) ){
      int j = i+1;
      while( j<n && ((z[j]>='A' && z[j]<='Z') || (z[j]>='a' && z[j]<='z')
                     || (z[j]>='0' && z[j]<='9') || z[j]=='_') ) j++;
      if( j<n && z[j]=='.' ){
        int k = j+1, nDigit = 0;
        while( k<n ){
          int l = utf8At((const unsigned char*)z, n, k, &cp);
          if( !isDigitCp(cp) ) break;
          k += l;
          nDigit++;
        }
        /* \d+ is greedy; a shorter run ends before a digit (no \b), so
        ** only the longest run can be followed by a boundary. */
        if( nDigit>0 && !wordAt(z, n, k) ) return normTarget(z, i, k, pOom);
      }
    }
    i += utf8At((const unsigned char*)z, n, i, &cp);
  }
  return 0;
}

/* ================================================================== */
/* Answer building                                                     */
/* ================================================================== */

/* A list member of the document (0 when absent or not a list). */
static const JNode *docList(const JNode *pDoc, const char *zKey){
  const JNode *p = jGet(pDoc, zKey);
  return p && p->type==JT_ARRAY ? p : 0;
}
static int listLen(const JNode *p){ return p ? p->nChild : 0; }

/* A string member, or 0 when absent, not a string, or empty. */
static const char *strMember(const JNode *pObj, const char *zKey){
  const JNode *p = jGet(pObj, zKey);
  return p && p->type==JT_STRING && p->n>0 ? p->z : 0;
}

/* New object with the listed members of pSrc (absent → null). */
static JNode *pick(const JNode *pSrc, const char *const *azKey){
  JNode *o = jObj();
  for(; o && *azKey; azKey++) jSet(o, *azKey, jClone(jGet(pSrc, *azKey)));
  return o;
}

/* The first profsumTopKLen() items of a list, each picked. */
static JNode *pickList(const JNode *pList, int topK, const char *const *azKey){
  JNode *a = jArr();
  int i, n = profsumTopKLen(listLen(pList), topK);
  for(i=0; a && i<n; i++) jPush(a, pick(pList->a[i], azKey));
  return a;
}

static const char *const azComm[] = {"collective", "count", "total_duration", "avg_duration", 0};
static const char *const azContext[] = {"op_name", "region_path", "count", "total_gap_duration",
                                        "avg_gap_duration", 0};
static const char *const azCandidate[] = {"candidate_id", "title", "rationale", "evidence",
                                          "suggestions", 0};
static const char *const azGapNum[] = {"name", "count", "total_gap_duration", "max_gap_duration",
                                       "avg_gap_duration", 0};
static const char *const azHotOp[] = {"name", "category", "count", "exclusive_duration",
                                      "total_duration", "avg_duration", "shape_signature",
                                      "source_file", "tf_op_path", 0};

/* _hot_op_to_dict(): the eleven fields; legacy work_proxy_per_invocation;
** a missing or empty canonical_name is recomputed from the name. */
static JNode *hotOp(const JNode *h){
  JNode *o = pick(h, azHotOp);
  const JNode *f = jGetOr(h, "flop_proxy_per_invocation", "work_proxy_per_invocation");
  const char *zCanon = strMember(h, "canonical_name");
  jSet(o, "flop_proxy_per_invocation", jClone(f));
  if( zCanon ){
    jSet(o, "canonical_name", jStr(zCanon, -1));
  }else{
    const JNode *nm = jGet(h, "name");
    if( nm && nm->type==JT_STRING ){
      ProfsumSlice c = profsumCanonicalOp(nm->z, nm->n);
      jSet(o, "canonical_name", jStr(c.z ? c.z : "", c.z ? c.n : 0));
    }else{
      jSet(o, "canonical_name", jNull());
    }
  }
  return o;
}

/* A GapBeforeOp object; missing/empty payload_op and marker_op → name. */
static JNode *gapObj(const JNode *g){
  JNode *o = pick(g, azGapNum);
  const JNode *nm = jGet(g, "name");
  static const char *const az[] = {"payload_op", "marker_op"};
  int k;
  for(k=0; k<2; k++){
    const char *z = strMember(g, az[k]);
    jSet(o, az[k], z ? jStr(z, -1) : jClone(nm));
  }
  return o;
}

static JNode *topGaps(const JNode *pGaps, int topK){
  JNode *a = jArr();
  int i, n = profsumTopKLen(listLen(pGaps), topK);
  for(i=0; a && i<n; i++) jPush(a, gapObj(pGaps->a[i]));
  return a;
}

/* Does candidate zKey of gap g, lower-cased, equal (bSub==0) or contain
** (bSub) zLow?  payload_op and marker_op default to the name when missing
** or empty (the reader's leniency). */
static int gapCandidateHit(const JNode *g, const char *zKey, const char *zLow, int bSub, int *pOom){
  const JNode *v = jGet(g, zKey);
  char *zL;
  int hit;
  if( zKey[0]!='n' && (v==0 || v->type!=JT_STRING || v->n==0) ) v = jGet(g, "name");
  if( v==0 || v->type!=JT_STRING ) return 0;
  zL = lowerOf(v->z, v->n, pOom);
  if( zL==0 ) return 0;
  hit = bSub ? strstr(zL, zLow)!=0 : strcmp(zL, zLow)==0;
  sqlite3_free(zL);
  return hit;
}

/* Gap matching (§2, intent 4): exact candidate, else substring; 0 if none. */
static const JNode *findGap(const JNode *pGaps, const char *zTarget, int *pOom){
  static const char *const az[] = {"name", "payload_op", "marker_op"};
  char *zLow = lowerOf(zTarget, (int)strlen(zTarget), pOom);
  const JNode *hit = 0;
  int pass, i, k;
  if( zLow==0 ) return 0;
  for(pass=0; pass<2 && hit==0; pass++){
    for(i=0; i<listLen(pGaps) && hit==0; i++){
      for(k=0; k<3 && hit==0; k++){
        if( gapCandidateHit(pGaps->a[i], az[k], zLow, pass, pOom) ) hit = pGaps->a[i];
      }
    }
  }
  sqlite3_free(zLow);
  return hit;
}

/* _find_gap_contexts(): the context objects for target zTarget (0: none). */
static JNode *findContexts(const JNode *pDoc, const char *zTarget, int topK, int *pOom){
  const JNode *ctxs = docList(pDoc, "gap_region_contexts");
  JNode *a = jArr();
  char *zNorm, *zLow;
  int pass, i, n;
  if( a==0 ){ *pOom = 1; return 0; }
  if( listLen(ctxs)==0 ) return a;
  zNorm = zTarget ? normTarget(zTarget, 0, (int)strlen(zTarget), pOom) : 0;
  if( zNorm==0 ){
    jFree(a);
    return *pOom ? 0 : pickList(ctxs, topK, azContext);
  }
  zLow = lowerOf(zNorm, (int)strlen(zNorm), pOom);
  sqlite3_free(zNorm);
  if( zLow==0 ){ jFree(a); return 0; }
  for(pass=0; pass<2 && a->nChild==0; pass++){
    /* collect all hits, then slice (Python builds the list, then [:top_k]) */
    for(i=0; i<ctxs->nChild; i++){
      const char *zOp = 0;
      const JNode *nm = jGet(ctxs->a[i], "op_name");
      char *zL;
      int hit;
      if( nm && nm->type==JT_STRING ) zOp = nm->z;
      if( zOp==0 ) continue;
      zL = lowerOf(zOp, nm->n, pOom);
      if( zL==0 ) break;
      hit = pass ? strstr(zL, zLow)!=0 : strcmp(zL, zLow)==0;
      sqlite3_free(zL);
      if( hit ) jPush(a, pick(ctxs->a[i], azContext));
    }
  }
  sqlite3_free(zLow);
  /* [:top_k] */
  n = profsumTopKLen(a->nChild, topK);
  while( a->nChild>n ) jFree(a->a[--a->nChild]);
  return a;
}

/* Region rows with shares of their root's inclusive duration (intent 6). */
static JNode *regionRows(const JNode *pDoc, int topK){
  const JNode *rg = docList(pDoc, "hierarchical_regions");
  JNode *a = jArr();
  double fallback = 0.0;
  int i, k, n = profsumTopKLen(listLen(rg), topK);
  /* root totals: {depth-1 path: max(0, inclusive)}; fallback = max of them */
  for(k=0; k<listLen(rg); k++){
    const JNode *r = rg->a[k];
    if( jNum(jGet(r, "depth"))==1.0 ){
      double t = jNum(jGet(r, "inclusive_duration"));
      if( t<0 ) t = 0;
      if( t>fallback ) fallback = t;
    }
  }
  for(i=0; a && i<n; i++){
    const JNode *r = rg->a[i];
    const char *zPath = strMember(r, "path");
    const char *zSep = zPath ? strstr(zPath, "=>") : 0;
    int nRoot = zPath ? (zSep ? (int)(zSep-zPath) : (int)strlen(zPath)) : 0;
    double tot = fallback, incl = jNum(jGet(r, "inclusive_duration")), excl = jNum(jGet(r, "exclusive_duration"));
    JNode *o;
    for(k=0; k<listLen(rg); k++){
      const JNode *q = rg->a[k];
      const JNode *qp = jGet(q, "path");
      if( jNum(jGet(q, "depth"))==1.0 && qp && qp->type==JT_STRING
       && qp->n==nRoot && (nRoot==0 || memcmp(qp->z, zPath, (size_t)nRoot)==0) ){
        double t = jNum(jGet(q, "inclusive_duration"));
        tot = t<0 ? 0 : t;               /* the last one wins, as in a dict */
      }
    }
    o = jObj();
    jSet(o, "path", jClone(jGet(r, "path")));
    jSet(o, "depth", jClone(jGet(r, "depth")));
    jSet(o, "count", jClone(jGet(r, "count")));
    jSet(o, "inclusive_duration", jClone(jGet(r, "inclusive_duration")));
    jSet(o, "exclusive_duration", jClone(jGet(r, "exclusive_duration")));
    jSet(o, "inclusive_share_of_total", jReal(tot>0 ? incl/tot : 0.0));
    jSet(o, "exclusive_share_of_total", jReal(tot>0 ? excl/tot : 0.0));
    jPush(a, o);
  }
  return a;
}

/* See query.h. */
JNode *profsumQueryDoc(const JNode *pDoc, const char *zQ, int nQ, int topK){
  JNode *o = jObj();
  char *q;
  int oom = 0;
  if( nQ<0 ) nQ = (int)strlen(zQ);
  if( o==0 ) return 0;
  /* q = question.lower().strip(): stripping never changes a substring
  ** test of the (whitespace-free) keywords. */
  q = lowerOf(zQ, nQ, &oom);
  if( q==0 ){ jFree(o); return 0; }

#define HAS(s) (strstr(q, s)!=0)
  if( HAS("top") && HAS("op") ){
    const JNode *ho = docList(pDoc, "hot_ops");
    JNode *a = jArr();
    int i, n = profsumTopKLen(listLen(ho), topK);
    for(i=0; a && i<n; i++) jPush(a, hotOp(ho->a[i]));
    jSet(o, "query_type", jStr("top_ops", -1));
    jSet(o, "results", a);
  }else if( (HAS("comm") || HAS("collective"))
         && (HAS("compute") || HAS("dominating") || HAS("dominant") || HAS("worst")) ){
    const JNode *tb = jGet(pDoc, "time_breakdown");
    const JNode *cs = jGet(jGet(tb, "compute"), "share_of_total");
    const JNode *ms = jGet(jGet(tb, "communication"), "share_of_total");
    jSet(o, "query_type", jStr("compute_vs_communication", -1));
    jSet(o, "dominant", jStr(jNum(ms)>jNum(cs) ? "communication" : "compute", -1));
    jSet(o, "compute_share", jClone(cs));
    jSet(o, "communication_share", jClone(ms));
    jSet(o, "communication_breakdown", pickList(docList(pDoc, "communication_ops"), topK, azComm));
  }else if( HAS("collective") || HAS("communication") ){
    jSet(o, "query_type", jStr("collective_breakdown", -1));
    jSet(o, "results", pickList(docList(pDoc, "communication_ops"), topK, azComm));
  }else if( HAS("gap") && HAS("before") ){
    const JNode *gaps = docList(pDoc, "gap_before_ops");
    char *zT = targetAfter(zQ, nQ, "before", &oom);
    jSet(o, "query_type", jStr("pre_op_gap", -1));
    if( zT ){
      const JNode *m = findGap(gaps, zT, &oom);
      jSet(o, "target", jStr(zT, -1));
      jSet(o, "match", m ? gapObj(m) : jNull());
      jSet(o, "context", findContexts(pDoc, zT, topK, &oom));
      sqlite3_free(zT);
    }
    jSet(o, "top_gaps", topGaps(gaps, topK));
  }else if( HAS("context") && (HAS("gap") || HAS("op") || HAS("copy")) ){
    static const char *const azKw[] = {"for", "of", "op"};
    char *zT = 0;
    int k;
    for(k=0; k<3 && zT==0 && !oom; k++) zT = targetAfter(zQ, nQ, azKw[k], &oom);
    if( zT==0 && !oom ) zT = opLikeToken(zQ, nQ, &oom);
    jSet(o, "query_type", jStr("gap_region_context", -1));
    jSet(o, "target", zT ? jStr(zT, -1) : jNull());
    jSet(o, "results", findContexts(pDoc, zT, topK, &oom));
    sqlite3_free(zT);
  }else if( HAS("region") || HAS("hierarch") ){
    jSet(o, "query_type", jStr("hierarchical_regions", -1));
    jSet(o, "results", regionRows(pDoc, topK));
  }else if( HAS("memory-bound") || HAS("compute-bound") ){
    jSet(o, "query_type", jStr("bound_analysis", -1));
    jSet(o, "result", jStr("unsupported_from_trace_only", -1));
    jSet(o, "details", jStr("The current summary is derived from trace timings and does not include "
                            "hardware-counter evidence needed for memory-vs-compute bound "
                            "classification.", -1));
  }else if( HAS("improve") || HAS("regress") || HAS("compare") ){
    jSet(o, "query_type", jStr("comparison_hint", -1));
    jSet(o, "details", jStr("Use compare_profile_summaries(before, after) to measure "
                            "regressions/improvements.", -1));
  }else{
    const JNode *c = docList(pDoc, "optimization_candidates");
    jSet(o, "query_type", jStr("optimization_candidates", -1));
    jSet(o, "results", pickList(c, listLen(c), azCandidate));
  }
#undef HAS
  sqlite3_free(q);
  if( oom || jOom(o) ){ jFree(o); return 0; }
  return o;
}

/* ================================================================== */
/* SQL function                                                        */
/* ================================================================== */

/* See query.h. */
const char *profsumQueryKind(const char *zQ, int nQ, int *pbAsked){
  char *q;
  int oom = 0;
  const char *zKind;
  *pbAsked = 1;
  if( nQ<0 ) nQ = (int)strlen(zQ);
  q = lowerOf(zQ, nQ, &oom);
  if( q==0 ) return 0;
#define HAS(s) (strstr(q, s)!=0)
  /* the order of profsumQueryDoc's tests */
  if( HAS("top") && HAS("op") ) zKind = "top_ops";
  else if( (HAS("comm") || HAS("collective"))
        && (HAS("compute") || HAS("dominating") || HAS("dominant") || HAS("worst")) ) zKind = "compute_vs_communication";
  else if( HAS("collective") || HAS("communication") ) zKind = "collective_breakdown";
  else if( HAS("gap") && HAS("before") ) zKind = "pre_op_gap";
  else if( HAS("context") && (HAS("gap") || HAS("op") || HAS("copy")) ) zKind = "gap_region_context";
  else if( HAS("region") || HAS("hierarch") ) zKind = "hierarchical_regions";
  else if( HAS("memory-bound") || HAS("compute-bound") ) zKind = "bound_analysis";
  else if( HAS("improve") || HAS("regress") || HAS("compare") ) zKind = "comparison_hint";
  else{
    zKind = "optimization_candidates";
    /* the fallback answers any question; it is what was asked only when
    ** the question is about what to do */
    *pbAsked = HAS("next") || HAS("try") || HAS("candidate") || HAS("optimi") || HAS("suggest")
            || HAS("recommend") || HAS("bottleneck") || HAS("advice") || HAS("advise")
            || HAS("fix") || HAS("faster") || HAS("slow") || HAS("speed") || HAS("should");
  }
#undef HAS
  sqlite3_free(q);
  return zKind;
}

/* The rows of profsum_advice of trace id in zSchema as a JSON array (an
** empty one in a database made before the view); 0 with *pzErr on error,
** 0 without when out of memory. */
static JNode *adviceRows(sqlite3 *db, const char *zSchema, sqlite3_int64 id, char **pzErr){
  static const char *const azCol[] = {"rank", "advice_id", "source", "kpi", "title", "evidence",
                                      "fixes", "time_at_stake_us", "share_of_step"};
  sqlite3_stmt *p = 0;
  JNode *a = jArr();
  char *zSql = sqlite3_mprintf("SELECT rank, advice_id, source, kpi, title, evidence, fixes, "
                               "time_at_stake_us, share_of_step FROM \"%w\".profsum_advice "
                               "WHERE trace_id=?1 ORDER BY rank", zSchema);
  int rc;
  if( a==0 || zSql==0 ){ jFree(a); sqlite3_free(zSql); return 0; }
  rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
  sqlite3_free(zSql);
  if( rc ){
    if( profsumDocNoSuchTable(db, rc) ) return a;
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    jFree(a);
    return 0;
  }
  sqlite3_bind_int64(p, 1, id);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    JNode *o = jObj();
    int c;
    for(c=0; o && c<9; c++){
      int t = sqlite3_column_type(p, c);
      JNode *v;
      if( t==SQLITE_NULL ) v = jNull();
      else if( c==5 || c==6 ) v = jParse((const char*)sqlite3_column_text(p, c), -1, 0);
      else if( t==SQLITE_INTEGER ) v = jInt(sqlite3_column_int64(p, c));
      else if( t==SQLITE_FLOAT ) v = jReal(sqlite3_column_double(p, c));
      else v = jStr((const char*)sqlite3_column_text(p, c), -1);
      jSet(o, azCol[c], v ? v : jNull());
    }
    jPush(a, o);
  }
  if( rc!=SQLITE_DONE ){
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    jFree(a);
    a = 0;
  }
  sqlite3_finalize(p);
  if( a && jOom(a) ){ jFree(a); return 0; }
  return a;
}

/* The document of trace pTrace in zSchema with its stored knobs; on error
** the error is set on ctx. */
static int queryDoc(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                    const char *zSchema, ProfsumDoc **ppDoc, sqlite3_int64 *pId){
  return profsumDocIn(ctx, zFunc, pTrace, zSchema, 0, ppDoc, pId);
}

/* profsum_query_json(trace, question [, top_k | options_json [, options_json]])
** → the answer JSON.  options_json may name the "schema" (an attached
** database to read) and "advice": true, which adds profsum's own members
** (never in the reference's answer): "question_recognized" (false when the
** question matched no intent and the answer is the fallback) and
** "profsum_advice" (the rows of profsum_advice). */
static void queryJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_query_json";
  static const char *const azBool[] = {"advice", 0};
  sqlite3_int64 id, topK = PROFSUM_QUERY_TOP_K;
  ProfsumDoc *d = 0;
  JNode *ans;
  sqlite3_value *pOpts = 0;
  char *z, *zSchema = 0, *zErr = 0;
  int bAdvice = 0;
  if( argc==3 && sqlite3_value_type(argv[2])==SQLITE_TEXT
   && sqlite3_value_numeric_type(argv[2])==SQLITE_TEXT
   && strspn((const char*)sqlite3_value_text(argv[2]), " \t\r\n")
      < (size_t)sqlite3_value_bytes(argv[2])
   && ((const char*)sqlite3_value_text(argv[2]))[strspn((const char*)sqlite3_value_text(argv[2]), " \t\r\n")]=='{' ){
    pOpts = argv[2];                      /* (trace, question, options_json) */
  }else{
    if( argc>2 && profsumTopKArg(ctx, FN, argv[2], &topK) ) return;
    if( argc>3 ) pOpts = argv[3];
  }
  if( sqlite3_value_type(argv[1])!=SQLITE_TEXT ){   /* a number would answer as "anything else" */
    profsumCtxErr(ctx, "%s: the question must be text", FN);
    return;
  }
  if( pOpts && sqlite3_value_type(pOpts)!=SQLITE_NULL ){
    int rc = profsumSchemaOption(sqlite3_context_db_handle(ctx), (const char*)sqlite3_value_text(pOpts),
                                 azBool, &bAdvice, &zSchema, &zErr);
    if( rc ){
      if( zErr ) profsumCtxErr(ctx, "%s: %s", FN, zErr);
      else sqlite3_result_error_nomem(ctx);
      sqlite3_free(zErr);
      return;
    }
  }
  if( queryDoc(ctx, FN, argv[0], zSchema ? zSchema : "main", &d, &id) ){
    sqlite3_free(zSchema);
    return;
  }
  ans = profsumQueryDoc(profsumDocRoot(d), (const char*)sqlite3_value_text(argv[1]),
                        sqlite3_value_bytes(argv[1]), (int)topK);
  profsumDocFree(d);
  if( ans && bAdvice ){
    int bAsked;
    JNode *a;
    if( profsumQueryKind((const char*)sqlite3_value_text(argv[1]), sqlite3_value_bytes(argv[1]), &bAsked)==0 ){
      jFree(ans);
      ans = 0;
    }else{
      jSet(ans, "question_recognized", jBool(bAsked));
      a = adviceRows(sqlite3_context_db_handle(ctx), zSchema ? zSchema : "main", id, &zErr);
      if( a==0 ){
        jFree(ans);
        sqlite3_free(zSchema);
        if( zErr ){ profsumCtxErr(ctx, "%s: %s", FN, zErr); sqlite3_free(zErr); }
        else sqlite3_result_error_nomem(ctx);
        return;
      }
      jSet(ans, "profsum_advice", a);
    }
  }
  sqlite3_free(zSchema);
  z = ans ? jDump(ans) : 0;
  jFree(ans);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* See query.h. */
int profsumRegisterQuery(sqlite3 *db, char **pzErr){
  int rc;
  rc = profsumCreateFunctions(db, "profsum_query_json", 2, 4, SQLITE_UTF8|PROFSUM_FN_READS, queryJsonFunc);
  if( rc && pzErr ){
    *pzErr = sqlite3_mprintf("profsum: registering profsum_query_json failed: %s", sqlite3_errstr(rc));
  }
  return rc;
}
