#include "profsum_int.h"
/*
** oprules.c — the op-name rules of the summary (docs/spec/summary.md):
** op and event categories (§1.4), canonical op names (§1.4), collectives
** (§4.7), semantic families, shape signatures and flop proxies (§4.6),
** and the tf_op region parts (§4.9).  The summary engine, the report,
** the query answering and the comparison call them directly (funcs.h);
** ext/sql/funcs_sql.c gives them their SQL names (classify_op,
** tf_region, profsum_canonical_op, ...).
**
** Choices where the spec leaves room: the §4.6 family list is the
** extended one (the spec's decision for profsum); the §4.9 blacklist is
** the mainline one (without the B-variant's `command_buffer`); substring
** rules are applied literally (the spec's "`descend` contains `send`" is
** not true: descend is compute).
**
** Fidelity.  The reference tool is Python; its string rules are imitated
** exactly: str.strip() whitespace and re's \s are the 29 Python whitespace
** code points; \d is any Unicode decimal digit (Unicode 15.1 set);
** re.IGNORECASE also equates U+0130/U+0131 with i, U+017F with s and U+212A
** with k; str.lower() in the blacklist test maps U+212A to k and U+0130 to
** "i" + a non-word character; `.` does not match a newline; `$` also
** matches before a final newline; \b's word characters are re's \w, the
** letters, digits and numbers of every script (ext/util/pytext.c).
*/
#include "funcs.h"
#include "pytext.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char u8;

#define ArraySize(X) ((int)(sizeof(X)/sizeof((X)[0])))

/* Python's character classes (ext/util/pytext.c), with this file's int
** indices.  A byte that does not start a valid UTF-8 sequence decodes as
** PROFSUM_BADBYTE with length 1: no space, digit or letter. */
static int utf8Decode(const u8 *z, int n, int i, int *pLen){
  return profsumUtf8Decode(z, n, i, pLen);
}
#define pyIsSpace profsumPyIsSpace
#define pyDigit profsumPyDigit

/* ASCII classes used by the regexes of the reference (which spell them as
** explicit ASCII sets). */
static int isAsciiAlpha(int c){ return (c>='a' && c<='z') || (c>='A' && c<='Z'); }
static int isAsciiDigit(int c){ return c>='0' && c<='9'; }
static int isIdentChar(int c){ return isAsciiAlpha(c) || isAsciiDigit(c) || c=='_'; }
static int asciiLower(int c){ return (c>='A' && c<='Z') ? c+32 : c; }

/* Python str.strip() on z[*pi..*pe) (profsumPyStrip). */
static void spanStripWs(const u8 *z, int *pi, int *pe){
  int64_t i = *pi, e = *pe;
  profsumPyStrip(z, &i, &e);
  *pi = (int)i;
  *pe = (int)e;
}

/* Python str.strip(c) for one ASCII character c on z[*pi..*pe). */
static void spanStripChar(const u8 *z, int *pi, int *pe, int c){
  while( *pi<*pe && z[*pi]==c ) (*pi)++;
  while( *pe>*pi && z[*pe-1]==c ) (*pe)--;
}

/* Advance i past Python whitespace (re's \s*) in z[0..n). */
static int skipWs(const u8 *z, int n, int i){
  int len;
  while( i<n && pyIsSpace(utf8Decode(z, n, i, &len)) ) i += len;
  return i;
}

/*
** Case-fold the character at z[i] for matching against a lower-case ASCII
** literal under Python's re.IGNORECASE: ASCII letters are lowered, and
** U+0130, U+0131 -> 'i', U+017F -> 's', U+212A -> 'k'.  Any other byte is
** returned unchanged (bytes >= 0x80 never equal an ASCII literal).  Sets
** *pLen to the number of bytes consumed.
*/
static int foldAt(const u8 *z, int n, int i, int *pLen){
  int c = z[i];
  *pLen = 1;
  if( c<0x80 ) return asciiLower(c);
  if( c==0xC4 && i+1<n && (z[i+1]==0xB0 || z[i+1]==0xB1) ){ *pLen = 2; return 'i'; }
  if( c==0xC5 && i+1<n && z[i+1]==0xBF ){ *pLen = 2; return 's'; }
  if( c==0xE2 && i+2<n && z[i+1]==0x84 && z[i+2]==0xAA ){ *pLen = 3; return 'k'; }
  return c;
}

/*
** If the lower-case ASCII literal zLit matches z at byte i under Python's
** re.IGNORECASE, return the index just past the match; else -1.
*/
static int ciMatchAt(const u8 *z, int n, int i, const char *zLit){
  int len;
  for(; *zLit; zLit++){
    if( i>=n || foldAt(z, n, i, &len)!=(u8)*zLit ) return -1;
    i += len;
  }
  return i;
}

/* The set of the first characters (bytes) of the 0-terminated list of
** literals azLit, as 256 bits in aFirst[4]; IN_FIRST(aFirst, c) tests a
** byte c.  The name searches below try a position only when its character
** is in the set. */
static void firstChars(const char *const *azLit, uint64_t aFirst[4]){
  int k;
  aFirst[0] = aFirst[1] = aFirst[2] = aFirst[3] = 0;
  for(k=0; azLit[k]; k++){
    u8 c0 = (u8)azLit[k][0];
    aFirst[c0>>6] |= (uint64_t)1<<(c0&63);
  }
}
#define IN_FIRST(aFirst, c) (((aFirst)[(c)>>6]>>((c)&63)) & 1)

/*
** True if any literal of the 0-terminated list azLit (lower-case ASCII)
** occurs in z[0..n) under re.IGNORECASE, i.e. re.search() of the
** alternation finds a match.
*/
static int ciSearchAny(const u8 *z, int n, const char *const *azLit){
  uint64_t aFirst[4];
  int i, k, len;
  firstChars(azLit, aFirst);
  for(i=0; i<n; i++){
    int c = foldAt(z, n, i, &len);
    if( !IN_FIRST(aFirst, c) ) continue;
    for(k=0; azLit[k]; k++){
      if( (u8)azLit[k][0]==c && ciMatchAt(z, n, i, azLit[k])>=0 ) return 1;
    }
  }
  return 0;
}

/*
** True if the ASCII-lower-cased z[0..n) contains any literal of the
** 0-terminated list azLit (lower-case, non-empty).  For each literal this
** is exactly Python's `lit in name.lower()` for the literals used here: no
** non-ASCII character lowers into one of them (U+212A gives 'k', which
** none contains; U+0130 gives "i" + U+0307, which cannot complete one).
** One walk over the name, trying at each position only the literals that
** start with its character (firstChars: the names are walked once each,
** not once a literal; classify_op runs it for every row it is given).
*/
static int lcContainsAny(const u8 *z, int n, const char *const *azLit){
  uint64_t aFirst[4];
  int i, j, k;
  firstChars(azLit, aFirst);
  for(i=0; i<n; i++){
    u8 c = asciiLower(z[i]);
    if( !IN_FIRST(aFirst, c) ) continue;
    for(k=0; azLit[k]; k++){
      const u8 *p = (const u8*)azLit[k];
      if( p[0]!=c ) continue;
      for(j=1; p[j] && i+j<n && asciiLower(z[i+j])==p[j]; j++){}
      if( p[j]==0 ) return 1;
    }
  }
  return 0;
}

/* =====================================================================
** Names and categories (§1.4, §4.7)
*/

/* The stall regex of §1.4, one literal per alternative. */
static const char *const azStall[] = {
  "wait", "barrier", "dependency-wait", "donation holds", "semaphore",
  "acquire", "idle", "blocked", "sleep", 0
};

/* The communication substrings of §1.4 (GPU ones last). */
static const char *const azComm[] = {
  "all-reduce", "all_gather", "all-gather", "reduce-scatter", "all-to-all",
  "alltoall", "collective", "collective-permute", "permute", "psum", "send",
  "recv", "nccl", "allgather", "allreduce", "reducescatter", 0
};

/* See funcs.h. */
int profsumIsStallName(const char *z, int n){
  return ciSearchAny((const u8*)z, n, azStall);
}

/* See funcs.h. */
int profsumIsCommName(const char *z, int n){
  return lcContainsAny((const u8*)z, n, azComm);
}

/* See funcs.h. */
const char *profsumOpCategory(const char *z, int n){
  if( profsumIsStallName(z, n) ) return "stall";
  if( profsumIsCommName(z, n) ) return "communication";
  return "compute";
}

/* See funcs.h. */
const char *profsumEventCategory(const char *zName, int nName,
                                 const char *zProc, int nProc){
  if( profsumIsStallName(zName, nName) ) return "stall";
  if( zProc && nProc>=6 && memcmp(zProc, "/host:", 6)==0 ) return "host";
  if( profsumIsCommName(zName, nName) ) return "communication";
  if( zProc && nProc>=8 && memcmp(zProc, "/device:", 8)==0 ) return "compute";
  return "other";
}

/* The §4.7 rules in order: a name containing any literal of azLit[] gets
** zCollective. */
static const struct {
  const char *zCollective;      /* Result */
  const char *azLit[4];         /* 0-terminated lower-case substrings */
} aCollective[] = {
  { "all-reduce",         { "all-reduce", "allreduce", "psum", 0 } },
  { "all-gather",         { "all-gather", "all_gather", "allgather", 0 } },
  { "reduce-scatter",     { "reduce-scatter", "reducescatter", 0 } },
  { "all-to-all",         { "all-to-all", "alltoall", 0 } },
  { "collective-permute", { "collective-permute", "permute", 0 } },
  { "async-collective",   { "async-collective", 0 } },
  { "send-recv",          { "send", "recv", 0 } },
};

/* See funcs.h. */
const char *profsumCollective(const char *z, int n){
  int k;
  if( !profsumIsCommName(z, n) ) return 0;
  for(k=0; k<ArraySize(aCollective); k++){
    if( lcContainsAny((const u8*)z, n, aCollective[k].azLit) ){
      return aCollective[k].zCollective;
    }
  }
  return "other-collective";
}

/* See funcs.h. */
ProfsumSlice profsumCanonicalOp(const char *zIn, int n){
  const u8 *z = (const u8*)zIn;
  ProfsumSlice s;
  int i = 0, e = n, j, len, iDot = -1, nDigit = 0;
  if( zIn==0 ){
    s.z = "";
    s.n = 0;
    return s;
  }
  spanStripWs(z, &i, &e);
  while( i<e && z[i]=='%' ) i++;
  /* Remove one trailing \.\d+$: iDot is the last '.' seen with only
  ** digits after it so far. */
  for(j=i; j<e; j+=len){
    int c = utf8Decode(z, e, j, &len);
    if( c=='.' ){
      iDot = j;
      nDigit = 0;
    }else if( pyDigit(c)>=0 ){
      nDigit++;
    }else{
      iDot = -1;
    }
  }
  if( iDot>=0 && nDigit>0 ) e = iDot;
  s.z = zIn + i;
  s.n = e - i;
  return s;
}

/* =====================================================================
** Semantic families (§4.6)
*/

/* How the literals of a family pattern must sit in the text. */
#define FAM_ANY   0             /* Anywhere (plain alternation) */
#define FAM_WORD  1             /* (^|\b)(lit|lit...) */
#define FAM_COPY  2             /* (^|\b)copy(\.|-|$) */

/* classify_semantic_family() patterns, extended list, in priority order.
** Every pattern is an IGNORECASE alternation of literals. */
static const struct {
  const char *zFamily;          /* Family name */
  u8 eKind;                     /* FAM_* */
  const char *azLit[12];        /* 0-terminated lower-case literals */
} aFamily[] = {
  { "optimizer_muon", FAM_ANY,
    { "muon", "newton_schulz", "zeropower", "orthogonalize", 0 } },
  { "optimizer_adam", FAM_ANY,
    { "adamh", "adam", "update_first_moment", "update_second_moment", 0 } },
  { "optimizer_apply", FAM_ANY,
    { "optimizer_update", "apply_updates", "apply_qb_betas", 0 } },
  { "moe", FAM_ANY, { "moe", "ragged", "expert", 0 } },
  { "attention_splash", FAM_ANY, { "splash_mha", "splash_attention", 0 } },
  { "attention_flash", FAM_ANY,
    { "flash_attention", "fused_attention", "fa4_cute", 0 } },
  { "attention_dense", FAM_ANY,
    { "causalselfattention", "apply_rotary_embedding", 0 } },
  { "dense_mlp", FAM_ANY, { "densemlp", 0 } },
  /* The reference's `jit\\(silu\\)` is "jit", a backslash, then a group
  ** "silu" + backslash: it matches the literal text jit\silu\ only. */
  { "norm_gating", FAM_ANY, { "rmsnorm", "gatednorm", "jit\\silu\\", 0 } },
  { "loss_xent", FAM_ANY,
    { "linear_softmax_cross_entropy_loss", "softmax_cross_entropy", "xent", 0 } },
  { "fusion", FAM_WORD, { "fusion.", "exponential_reduce_fusion", 0 } },
  { "copy", FAM_COPY, { "copy", 0 } },
  { "convert", FAM_ANY, { "convert_element_type", 0 } },
  { "collective", FAM_ANY,
    { "all-reduce", "all_gather", "all-gather", "reduce-scatter", "all-to-all",
      "alltoall", "collective", "nccl", "allgather", "allreduce",
      "reducescatter", 0 } },
};

/* Whether the character that ends just before b[i] (i > 0) of the
** case-folded text is a word character for \b (Python's re \w: every
** script's letters and digits; the folded special letters are ASCII, the
** rest keeps its UTF-8). */
static int wordBefore(const u8 *b, int i){
  int c;
  profsumUtf8Before(b, 0, i, &c);
  return c!=PROFSUM_BADBYTE && profsumPyIsWord(c);
}

/*
** True if family pattern iFam matches the case-folded text b[0..m)
** (re.search semantics).  Each literal is looked for with memchr() on its
** first byte, then checked in place.
*/
static int familyMatch(const u8 *b, int m, int iFam){
  int k;
  int eKind = aFamily[iFam].eKind;
  for(k=0; aFamily[iFam].azLit[k]; k++){
    const char *zLit = aFamily[iFam].azLit[k];
    int nLit = (int)strlen(zLit);
    const u8 *p = b, *pLast;
    if( nLit>m ) continue;
    pLast = b + m - nLit;             /* Last possible start */
    while( p<=pLast && (p = memchr(p, zLit[0], pLast - p + 1))!=0 ){
      int i = (int)(p - b);
      p++;
      if( memcmp(b+i, zLit, nLit)!=0 ) continue;
      if( eKind!=FAM_ANY && i>0 && wordBefore(b, i) ) continue;
      if( eKind==FAM_COPY ){
        int j = i + nLit;
        int bOk = (j<m && (b[j]=='.' || b[j]=='-'))
               || j==m || (j==m-1 && b[j]=='\n');
        if( !bOk ) continue;
      }
      return 1;
    }
  }
  return 0;
}

/*
** Append the case-folded form of z[0..n) to b[] at *pm (see foldAt()).
** b[] must have room for n more bytes.
*/
static void foldAppend(u8 *b, int *pm, const u8 *z, int n){
  int i, len;
  for(i=0; i<n; i+=len) b[(*pm)++] = (u8)foldAt(z, n, i, &len);
}

/* See funcs.h. */
int profsumSemanticFamily(const char *zName, int nName,
                          const char *zPath, int nPath,
                          const char **pzFamily){
  u8 aStatic[512];
  u8 *b = aStatic;
  int m = 0, k;
  sqlite3_int64 nNeed;
  ProfsumSlice canon = profsumCanonicalOp(zName, nName);
  if( zPath==0 ) nPath = 0;
  nNeed = (sqlite3_int64)canon.n + 1 + nPath;
  if( nNeed>(sqlite3_int64)sizeof(aStatic) ){
    b = sqlite3_malloc64(nNeed);
    if( b==0 ) return SQLITE_NOMEM;
  }
  foldAppend(b, &m, (const u8*)canon.z, canon.n);
  if( nPath>0 ){
    b[m++] = ' ';
    foldAppend(b, &m, (const u8*)zPath, nPath);
  }
  *pzFamily = "other";
  for(k=0; k<ArraySize(aFamily); k++){
    if( familyMatch(b, m, k) ){ *pzFamily = aFamily[k].zFamily; break; }
  }
  if( b!=aStatic ) sqlite3_free(b);
  return SQLITE_OK;
}

/* =====================================================================
** Shape signatures (§4.6 extract_shape_signature)
*/

/* The dtypes of (?:bf16|f32|f16|s32|u32|s8|u8|pred)\[([^\]]+)\] */
static const char *const azDtype[] = {
  "bf16", "f32", "f16", "s32", "u32", "s8", "u8", "pred", 0
};

/* Finds "the first ']' at or after q" for non-decreasing q (or q a few
** bytes back) in amortized linear time. */
typedef struct CloseCache CloseCache;
struct CloseCache {
  int q;                        /* Position last searched from */
  int c;                        /* First ']' at or after q, or n if none */
};

/* The first ']' at or after q in z[0..n), or n if there is none. */
static int closeFind(CloseCache *p, const u8 *z, int n, int q){
  int c;
  if( q>=p->q && q<=p->c ) return p->c;
  if( q<p->q ){
    for(c=q; c<p->q && z[c]!=']'; c++){}
    return c<p->q ? c : p->c;
  }
  for(c=q; c<n && z[c]!=']'; c++){}
  p->q = q;
  p->c = c;
  return c;
}

/*
** Match the dtype-shape token regex (IGNORECASE) at z[i], confined to
** z[0..n).  On a match set [*piDims, *peDims) to the dims group and return
** the index just past the closing ']'; else return -1.
*/
static int dtypeTokenAt(const u8 *z, int n, int i, CloseCache *pCache,
                        int *piDims, int *peDims){
  int k;
  for(k=0; azDtype[k]; k++){
    int j = ciMatchAt(z, n, i, azDtype[k]);
    if( j>=0 && j<n && z[j]=='[' ){
      int e = closeFind(pCache, z, n, j+1);
      if( e<n && e>j+1 ){
        *piDims = j + 1;
        *peDims = e;
        return e + 1;
      }
    }
  }
  return -1;
}

/* Output of a shape signature under construction. */
typedef struct SigOut SigOut;
struct SigOut {
  char *z;                      /* Buffer, room for the whole input + 1 */
  int n;                        /* Bytes used */
  int nTok;                     /* Tokens appended */
};

/*
** Append one normalized token (_normalize_shape_token: split the dims on
** ',', strip each, drop empties, join with ',') to p, after a '|' if it is
** not the first.  The output never outgrows the input, so no check.
*/
static void sigAddToken(SigOut *p, const u8 *z, int iDims, int eDims){
  int i = iDims, nPiece = 0;
  if( p->nTok>0 ) p->z[p->n++] = '|';
  while( i<=eDims ){
    int j = i, a, b;
    while( j<eDims && z[j]!=',' ) j++;
    a = i; b = j;
    spanStripWs(z, &a, &b);
    if( b>a ){
      if( nPiece>0 ) p->z[p->n++] = ',';
      memcpy(p->z + p->n, z + a, b - a);
      p->n += b - a;
      nPiece++;
    }
    i = j + 1;
  }
  p->nTok++;
}

/*
** re.findall() of the dtype-shape token regex over z[a..b), appending at
** most nLimit tokens (all if nLimit <= 0) to p.
*/
static void sigFindAll(SigOut *p, const u8 *z, int a, int b, int nLimit){
  int i = a, nFound = 0;
  int q = -1;                    /* The first '[' at or after i+2, once found */
  uint64_t aFirst[4];            /* The dtypes' first letters (firstChars) */
  CloseCache cache;
  cache.q = cache.c = -1;        /* Nothing cached */
  firstChars(azDtype, aFirst);
  while( i<b && (nLimit<=0 || nFound<nLimit) ){
    int iDims, eDims, j;
    if( q<i+2 ){
      /* A dtype is 2 to 4 bytes (U+017F takes two) and its '[' follows
      ** it: no position more than 5 bytes before the next '[' can start
      ** a token, so the search resumes there. */
      const u8 *pOpen = i+2<b ? memchr(z+i+2, '[', (size_t)(b-i-2)) : 0;
      if( pOpen==0 ) break;
      q = (int)(pOpen - z);
      if( q-5>i ) i = q-5;
    }
    /* a byte whose folded form starts no dtype is passed over: only
    ** 0xC5 among the others, the lead byte of U+017F, folds to one ('s') */
    if( !IN_FIRST(aFirst, asciiLower(z[i])) && z[i]!=0xC5 ){ i++; continue; }
    j = dtypeTokenAt(z, b, i, &cache, &iDims, &eDims);
    if( j<0 ){ i++; continue; }
    sigAddToken(p, z, iDims, eDims);
    nFound++;
    i = j;
  }
}

/* [A-Za-z0-9_.-] */
static int isOpNameChar(int c){ return isIdentChar(c) || c=='.' || c=='-'; }

/*
** re.search() of =\s*\((.*?)\)\s*[A-Za-z0-9_.-]+\( with DOTALL.  On a match
** set [*pa, *pb) to group 1 and return 1.
**
** Only the first '=' followed by \s*\( can match: a later one starts its
** group further right, so it could only end the group at a ')' the first
** one already tried.  The non-greedy group ends at the first ')' after
** which \s*[A-Za-z0-9_.-]+\( matches (those tails are deterministic: no
** backtracking can help them).  Linear time.
*/
static int sigTupleGroup(const u8 *z, int n, int *pa, int *pb){
  int i, e, g0 = -1;
  for(i=0; i<n && g0<0; i++){
    if( z[i]=='=' ){
      int j = skipWs(z, n, i+1);
      if( j<n && z[j]=='(' ) g0 = j + 1;
    }
  }
  if( g0<0 ) return 0;
  for(e=g0; e<n; e++){
    if( z[e]==')' ){
      int k = skipWs(z, n, e+1), m = k;
      while( m<n && isOpNameChar(z[m]) ) m++;
      if( m>k && m<n && z[m]=='(' ){
        *pa = g0;
        *pb = e;
        return 1;
      }
    }
  }
  return 0;
}

/*
** re.search() of =\s*([A-Za-z0-9_]+\[[^\]]+\]).  On a match set [*pa, *pb)
** to group 1 and return 1.  iClose caches the first ']' at or after the
** last '[' tried (the '[' positions only grow), so this is linear.
*/
static int sigSingleGroup(const u8 *z, int n, int *pa, int *pb){
  int i, iClose = -1;
  for(i=0; i<n; i++){
    int j, k;
    if( z[i]!='=' ) continue;
    j = skipWs(z, n, i+1);
    for(k=j; k<n && isIdentChar(z[k]); k++){}
    if( k==j || k>=n || z[k]!='[' ) continue;
    if( iClose<k+1 ){
      for(iClose=k+1; iClose<n && z[iClose]!=']'; iClose++){}
    }
    if( iClose>=n ) return 0;     /* No ']' after here: nothing can match */
    if( iClose==k+1 ) continue;   /* "[]": [^\]]+ needs a character */
    *pa = j;
    *pb = iClose + 1;
    return 1;
  }
  return 0;
}

/* See funcs.h. */
int profsumShapeSignature(const char *zIn, int n, char **pzSig, int *pnSig){
  const u8 *z = (const u8*)zIn;
  SigOut out;
  int a, b;
  *pzSig = 0;
  *pnSig = 0;
  if( zIn==0 || n<=0 ) return SQLITE_OK;
  out.z = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if( out.z==0 ) return SQLITE_NOMEM;
  out.n = 0;
  out.nTok = 0;
  if( sigTupleGroup(z, n, &a, &b) ){
    sigFindAll(&out, z, a, b, 0);
  }else if( sigSingleGroup(z, n, &a, &b) ){
    sigFindAll(&out, z, a, b, 0);
  }else{
    sigFindAll(&out, z, 0, n, 8);
  }
  if( out.nTok==0 ){
    sqlite3_free(out.z);
    return SQLITE_OK;
  }
  assert( out.n<=n );
  out.z[out.n] = 0;
  *pzSig = out.z;
  *pnSig = out.n;
  return SQLITE_OK;
}

/* =====================================================================
** Flop proxy (§4.6 estimate_flop_proxy)
*/

/* An integer of the reference (Python int): exact in int64 while it fits,
** a double once it overflows. */
typedef struct ProxyNum ProxyNum;
struct ProxyNum {
  int bReal;                    /* True: the value is r */
  int64_t i;                    /* The value when !bReal */
  double r;                     /* The value as a double (always set) */
};

/* A ProxyNum holding the int64 v. */
static ProxyNum pnInt(int64_t v){
  ProxyNum x;
  x.bReal = 0;
  x.i = v;
  x.r = (double)v;
  return x;
}

/* a*b (bMul) or a+b: exact while both are integers and the result fits
** in int64, else in double (as a Python int past 2**63 here). */
static ProxyNum pnArith(ProxyNum a, ProxyNum b, int bMul){
  ProxyNum x;
  int bOver = bMul ? __builtin_mul_overflow(a.i, b.i, &x.i) : __builtin_add_overflow(a.i, b.i, &x.i);
  if( !a.bReal && !b.bReal && !bOver ) return pnInt(x.i);
  x.bReal = 1;
  x.i = 0;
  x.r = bMul ? a.r * b.r : a.r + b.r;
  return x;
}

/* a*b, switching to double on int64 overflow. */
static ProxyNum pnMul(ProxyNum a, ProxyNum b){ return pnArith(a, b, 1); }

/* a+b, switching to double on int64 overflow. */
static ProxyNum pnAdd(ProxyNum a, ProxyNum b){ return pnArith(a, b, 0); }

/* Compare two ProxyNums: <0, 0, >0. */
static int pnCmp(ProxyNum a, ProxyNum b){
  if( !a.bReal && !b.bReal ) return (a.i>b.i) - (a.i<b.i);
  return (a.r>b.r) - (a.r<b.r);
}

/* True if a > 0. */
static int pnPositive(ProxyNum a){
  return a.bReal ? a.r>0.0 : a.i>0;
}

/* Running aggregates of estimate_flop_proxy over the shapes of a
** signature (parse_shape_signature + the three rules). */
typedef struct ProxyAgg ProxyAgg;
struct ProxyAgg {
  int bAnyShape;                /* Some token held an integer */
  ProxyNum best;                /* Largest _shape_product() so far */
  int bRank4;                   /* Some shape of rank >= 4 */
  ProxyNum maxB, maxH, maxS;    /* _max_positive of dims 0..2 (rank >= 4) */
  int bHead;                    /* Some positive dim 3 (rank >= 4) */
  ProxyNum hdMax, hdMin;        /* Largest and smallest positive dim 3 */
  int bRank2;                   /* Some shape of rank >= 2 */
  ProxyNum maxR, maxC;          /* _max_positive of dims 0..1 (rank >= 2) */
};

/* One parsed shape: its first four dims, rank and product. */
typedef struct ProxyShape ProxyShape;
struct ProxyShape {
  int nDim;                     /* Rank (integers found in the token) */
  ProxyNum aDim[4];             /* The first four dims */
  ProxyNum prod;                /* Product of all dims */
  int bNonPos;                  /* Some dim <= 0 (product is then 0) */
};

/* *pMax = max(*pMax, v) when v > 0 (the _max_positive() fold). */
static void pnMaxPositive(ProxyNum *pMax, ProxyNum v){
  if( pnPositive(v) && pnCmp(v, *pMax)>0 ) *pMax = v;
}

/* Fold one finished shape into the aggregates. */
static void proxyAddShape(ProxyAgg *p, const ProxyShape *s){
  ProxyNum prod;
  if( s->nDim==0 ) return;
  prod = s->bNonPos ? pnInt(0) : s->prod;
  if( !p->bAnyShape || pnCmp(prod, p->best)>0 ) p->best = prod;
  p->bAnyShape = 1;
  if( s->nDim>=4 ){
    p->bRank4 = 1;
    pnMaxPositive(&p->maxB, s->aDim[0]);
    pnMaxPositive(&p->maxH, s->aDim[1]);
    pnMaxPositive(&p->maxS, s->aDim[2]);
    if( pnPositive(s->aDim[3]) ){
      if( !p->bHead || pnCmp(s->aDim[3], p->hdMax)>0 ) p->hdMax = s->aDim[3];
      if( !p->bHead || pnCmp(s->aDim[3], p->hdMin)<0 ) p->hdMin = s->aDim[3];
      p->bHead = 1;
    }
  }
  if( s->nDim>=2 ){
    p->bRank2 = 1;
    pnMaxPositive(&p->maxR, s->aDim[0]);
    pnMaxPositive(&p->maxC, s->aDim[1]);
  }
}

/* Add one dim to a shape under construction. */
static void proxyAddDim(ProxyShape *s, ProxyNum v){
  if( s->nDim<4 ) s->aDim[s->nDim] = v;
  s->prod = s->nDim==0 ? v : pnMul(s->prod, v);
  if( !pnPositive(v) ) s->bNonPos = 1;
  s->nDim++;
}

/* Store a finished ProxyNum as the result of profsumFlopProxy(). */
static int proxyResult(ProxyNum v, int64_t *piVal, double *prVal){
  if( v.bReal ){ *prVal = v.r; return PROFSUM_FLOP_REAL; }
  *piVal = v.i;
  return PROFSUM_FLOP_INT;
}

/* See funcs.h. */
int profsumFlopProxy(const char *zFamily, int nFamily,
                     const char *zSig, int nSig,
                     int64_t *piVal, double *prVal){
  const u8 *z = (const u8*)zSig;
  ProxyAgg agg;
  ProxyShape shape;
  int i = 0, len;
  memset(&agg, 0, sizeof(agg));
  agg.maxB = agg.maxH = agg.maxS = agg.maxR = agg.maxC = pnInt(0);
  memset(&shape, 0, sizeof(shape));
  if( zSig==0 ) nSig = 0;
  /* parse_shape_signature: tokens split on '|', the -?\d+ integers of
  ** each (any Unicode decimal digits, as int() accepts). */
  while( i<nSig ){
    int c = utf8Decode(z, nSig, i, &len);
    int bNeg = 0, j = i, lenD;
    if( c=='|' ){
      proxyAddShape(&agg, &shape);
      memset(&shape, 0, sizeof(shape));
      i += len;
      continue;
    }
    if( c=='-' ){
      if( i+1<nSig && pyDigit(utf8Decode(z, nSig, i+1, &lenD))>=0 ){
        bNeg = 1;
        j = i + 1;
      }
    }
    if( bNeg || pyDigit(c)>=0 ){
      ProxyNum v = pnInt(0);
      int d;
      while( j<nSig && (d = pyDigit(utf8Decode(z, nSig, j, &lenD)))>=0 ){
        v = pnAdd(pnMul(v, pnInt(10)), pnInt(d));
        j += lenD;
      }
      if( bNeg ) v = pnMul(v, pnInt(-1));
      proxyAddDim(&shape, v);
      i = j;
      continue;
    }
    i += len;
  }
  proxyAddShape(&agg, &shape);
  if( !agg.bAnyShape || zFamily==0 ) return PROFSUM_FLOP_NULL;

  if( nFamily>=9 && memcmp(zFamily, "attention", 9)==0 && agg.bRank4
   && pnPositive(agg.maxB) && pnPositive(agg.maxH) && pnPositive(agg.maxS)
   && agg.bHead ){
    /* 2 * B * H * S * S * (d_qk + d_v), left to right as the reference */
    ProxyNum v = pnMul(pnInt(2), agg.maxB);
    v = pnMul(v, agg.maxH);
    v = pnMul(v, agg.maxS);
    v = pnMul(v, agg.maxS);
    v = pnMul(v, pnAdd(agg.hdMax, agg.hdMin));
    return proxyResult(v, piVal, prVal);
  }
  if( nFamily==9 && memcmp(zFamily, "loss_xent", 9)==0 && agg.bRank2
   && pnPositive(agg.maxR) && pnPositive(agg.maxC) ){
    ProxyNum v = pnMul(pnMul(pnInt(2), agg.maxR), agg.maxC);
    return proxyResult(v, piVal, prVal);
  }
  if( pnPositive(agg.best) ) return proxyResult(agg.best, piVal, prVal);
  return PROFSUM_FLOP_NULL;
}

/* =====================================================================
** Region paths (§4.9)
*/

/* Normalized form of a piece for the blacklist test, built one character
** at a time without allocating: the first 16 characters, the length, and a
** 7-character window for the "contains" tokens. */
typedef struct BlackNorm BlackNorm;
struct BlackNorm {
  u8 aHead[16];                 /* First characters after the leading '_'s */
  int nNorm;                    /* Characters emitted (after leading '_'s) */
  int nLast;                    /* Length without trailing '_'s */
  uint64_t win;                 /* The last 8 characters emitted, the last
                                ** in the low byte */
  int bContains;                /* A "contains" token was seen */
};

/* Blacklist tables of §4.9 (mainline: no `command_buffer`).  The switch
** in profsumIsBlacklistedSegment lists the first letters of the exact and
** prefix tokens: keep it in step with them. */
typedef struct BlackLit { const char *z; int n; } BlackLit;   /* a token and its length */
#define BLACK_LIT(s) { s, (int)sizeof(s)-1 }
static const BlackLit aBlackExact[] = {
  BLACK_LIT("xla"), BLACK_LIT("xla_ops"), BLACK_LIT("xla_modules"), BLACK_LIT("xla_traceme"),
  BLACK_LIT("xla_trace_me"), BLACK_LIT("pallas_call"), BLACK_LIT("shard_map"), BLACK_LIT("call"),
  BLACK_LIT("execute"), BLACK_LIT("launch"), BLACK_LIT("tpu_launch"), { 0, 0 }
};
static const BlackLit aBlackPrefix[] = {
  BLACK_LIT("pjrt"), BLACK_LIT("xla_"), BLACK_LIT("tpu_"), BLACK_LIT("stream_executor"), { 0, 0 }
};
static const BlackLit aBlackContains[] = {       /* blackEmit() relies on */
  BLACK_LIT("launch"), BLACK_LIT("execute"),      /* the last letters h,e,k */
  BLACK_LIT("thunk"), BLACK_LIT("runtime"), { 0, 0 }
};

/* Emit one character c of the normalized string (strip('_') at the front
** is done here; at the back by nLast). */
static void blackEmit(BlackNorm *p, int c){
  int k;
  if( c=='_' && p->nNorm==0 ) return;
  if( p->nNorm<(int)sizeof(p->aHead) ) p->aHead[p->nNorm] = (u8)c;
  p->nNorm++;
  p->win = (p->win<<8) | (u8)c;
  if( c=='_' ) return;
  p->nLast = p->nNorm;
  if( c!='h' && c!='e' && c!='k' ) return;    /* No token ends otherwise */
  for(k=0; aBlackContains[k].z; k++){
    const char *zTok = aBlackContains[k].z;
    int nTok = aBlackContains[k].n, j;
    uint64_t w = p->win;
    if( (u8)zTok[nTok-1]!=c || p->nNorm<nTok ) continue;
    for(j=nTok-1; j>=0 && (u8)zTok[j]==(u8)w; j--) w >>= 8;
    if( j<0 ) p->bContains = 1;
  }
}

/* See funcs.h.
**
** The reference: lowered = part.lower().strip(); normalized =
** re.sub(r"[^a-z0-9_]+", "_", lowered).strip("_").  Every non-ASCII
** character lowers to something outside [a-z0-9_] except U+212A ('k') and
** U+0130 ("i" + U+0307), so a run of other characters becomes one '_'.
*/
int profsumIsBlacklistedSegment(const char *zIn, int n){
  const u8 *z = (const u8*)zIn;
  BlackNorm b;
  int i, k, len, bSep = 0;
  memset(&b, 0, sizeof(b));
  for(i=0; i<n; i+=len){
    int c = z[i]<0x80 ? (len = 1, z[i]) : utf8Decode(z, n, i, &len);
    int w = -1;                   /* ASCII character emitted, if any */
    if( c>=0 && c<0x80 && isIdentChar(c) ) w = asciiLower(c);
    else if( c==0x212A ) w = 'k';
    else if( c==0x130 ) w = 'i';
    if( w<0 ){ bSep = 1; continue; }
    if( bSep ){ blackEmit(&b, '_'); bSep = 0; }
    blackEmit(&b, w);
    if( c==0x130 ) bSep = 1;      /* The U+0307 after the 'i' */
  }
  if( b.nLast==0 ) return 1;
  if( b.bContains ) return 1;
  switch( b.aHead[0] ){            /* the first letters of the tokens below */
    case 'c': case 'e': case 'l': case 'p': case 's': case 't': case 'x': break;
    default: return 0;
  }
  for(k=0; aBlackExact[k].z; k++){
    int nTok = aBlackExact[k].n;
    if( b.nLast==nTok && memcmp(b.aHead, aBlackExact[k].z, nTok)==0 ) return 1;
  }
  for(k=0; aBlackPrefix[k].z; k++){
    int nTok = aBlackPrefix[k].n;
    if( b.nLast>=nTok && memcmp(b.aHead, aBlackPrefix[k].z, nTok)==0 ) return 1;
  }
  return 0;
}

/* The wrappers unwrapped from tf_op pieces. */
static const BlackLit aWrapper[] = {
  BLACK_LIT("jit"), BLACK_LIT("jvp"), BLACK_LIT("transpose"), BLACK_LIT("vmap"), BLACK_LIT("pjit"),
  BLACK_LIT("named_call"), BLACK_LIT("remat"), BLACK_LIT("checkpoint"), { 0, 0 }
};

/* True if z[0..n) is exactly one of the wrapper words. */
static int isWrapperWord(const u8 *z, int n){
  int k;
  for(k=0; aWrapper[k].z; k++){
    if( aWrapper[k].n==n && memcmp(z, aWrapper[k].z, n)==0 ) return 1;
  }
  return 0;
}

/* See funcs.h.  Mirrors the reference's _canonical_tf_op_part(). */
ProfsumSlice profsumCanonicalTfOpPiece(const char *zIn, int n){
  const u8 *z = (const u8*)zIn;
  ProfsumSlice s;
  int i = 0, e = n;
  int iNl = -1;                 /* First '\n' after the last '(' tried, or n */
  s.z = zIn;
  s.n = 0;
  spanStripWs(z, &i, &e);
  spanStripChar(z, &i, &e, ':');
  if( i>=e ) return s;
  for(;;){
    /* re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\((.*)\)"): the name runs to
    ** the first '(' and the piece ends with ')'; `.` excludes '\n'.  The
    ** inner text only shrinks, so iNl moves forward only (linear time for
    ** deeply nested wrappers). */
    int k, a, b;
    if( !isAsciiAlpha(z[i]) && z[i]!='_' ) break;
    for(k=i+1; k<e && isIdentChar(z[k]); k++){}
    if( k>=e || z[k]!='(' || e-k<2 || z[e-1]!=')' ) break;
    if( iNl<k+1 ){
      const u8 *pNl = memchr(z+k+1, '\n', n-(k+1));
      iNl = pNl ? (int)(pNl-z) : n;
    }
    if( iNl<e-1 ) break;
    if( !isWrapperWord(z+i, k-i) ) break;
    a = k + 1;
    b = e - 1;
    spanStripWs(z, &a, &b);
    if( a>=b ) return s;
    i = a;
    e = b;
  }
  if( isWrapperWord(z+i, e-i) ) return s;
  spanStripWs(z, &i, &e);
  spanStripChar(z, &i, &e, ':');
  if( e-i>=15 && memcmp(z+i, "dynamic_donated", 15)==0 ){
    const u8 *pDot = memchr(z+i, '.', e-i);
    if( pDot!=0 && (int)(pDot-z)+1<e ) i = (int)(pDot-z) + 1;
  }
  s.z = zIn + i;
  s.n = e - i;
  return s;
}

/* See funcs.h. */
void profsumPartsInit(ProfsumParts *p){
  p->nPart = 0;
  p->nAlloc = ArraySize(p->aStatic);
  p->aPart = p->aStatic;
}

/* See funcs.h. */
void profsumPartsClear(ProfsumParts *p){
  if( p->aPart!=p->aStatic ) sqlite3_free(p->aPart);
  profsumPartsInit(p);
}

/* Append span (z, n) to p.  SQLITE_OK or SQLITE_NOMEM. */
static int partsAppend(ProfsumParts *p, const char *z, int n){
  if( p->nPart>=p->nAlloc ){
    int nNew = p->nAlloc*2;
    ProfsumSlice *aNew;
    if( p->aPart==p->aStatic ){
      aNew = sqlite3_malloc64(sizeof(ProfsumSlice)*(sqlite3_uint64)nNew);
      if( aNew ) memcpy(aNew, p->aStatic, sizeof(ProfsumSlice)*p->nPart);
    }else{
      aNew = sqlite3_realloc64(p->aPart, sizeof(ProfsumSlice)*(sqlite3_uint64)nNew);
    }
    if( aNew==0 ) return SQLITE_NOMEM;
    p->aPart = aNew;
    p->nAlloc = nNew;
  }
  p->aPart[p->nPart].z = z;
  p->aPart[p->nPart].n = n;
  p->nPart++;
  return SQLITE_OK;
}

/* True if z[i..e) is empty or whitespace only (not `part.strip()`). */
static int isBlankRange(const u8 *z, int i, int e){
  spanStripWs(z, &i, &e);
  return i>=e;
}

/* See funcs.h. */
int profsumTfOpParts(const char *zIn, int n, ProfsumParts *p){
  const u8 *z = (const u8*)zIn;
  int i = 0;
  p->nPart = 0;
  if( zIn==0 ) return SQLITE_OK;
  while( i<=n ){
    int j = i;
    while( j<n && z[j]!='/' ) j++;
    if( !isBlankRange(z, i, j) ){
      ProfsumSlice s = profsumCanonicalTfOpPiece(zIn+i, j-i);
      if( s.n>0 && !profsumIsBlacklistedSegment(s.z, s.n) ){
        if( partsAppend(p, s.z, s.n) ){
          profsumPartsClear(p);
          return SQLITE_NOMEM;
        }
      }
    }
    i = j + 1;
  }
  return SQLITE_OK;
}

/* Find the 2-byte delimiter zDelim in z[i..n); its index or -1. */
static int findDelim(const u8 *z, int n, int i, const char *zDelim){
  for(; i+1<n; i++){
    if( z[i]==(u8)zDelim[0] && z[i+1]==(u8)zDelim[1] ) return i;
  }
  return -1;
}

/* See funcs.h. */
int profsumHierarchyParts(const char *zName, int nName,
                          const char *zTfOp, int nTfOp,
                          ProfsumParts *p, int *pbFallback){
  const u8 *z = (const u8*)zName;
  ProfsumSlice canon;
  p->nPart = 0;
  if( zName==0 ) nName = 0;
  /* Rule 1: tf_op */
  if( zTfOp && nTfOp>0 ){
    int rc = profsumTfOpParts(zTfOp, nTfOp, p);
    if( rc ) return rc;
  }
  /* Rule 2: split the name on "=>" (checked first) or "::" */
  if( p->nPart==0 && nName>0 ){
    const char *zDelim = findDelim(z, nName, 0, "=>")>=0 ? "=>"
                       : findDelim(z, nName, 0, "::")>=0 ? "::" : 0;
    if( zDelim ){
      int i = 0;
      while( i<=nName ){
        int j = findDelim(z, nName, i, zDelim), a = i, b;
        if( j<0 ) j = nName;
        b = j;
        spanStripWs(z, &a, &b);
        if( b>a && !profsumIsBlacklistedSegment(zName+a, b-a) ){
          if( partsAppend(p, zName+a, b-a) ){
            profsumPartsClear(p);
            return SQLITE_NOMEM;
          }
        }
        i = j + 2;
      }
    }
  }
  /* Rule 3: the canonical name (the fallback) */
  canon = profsumCanonicalOp(zName ? zName : "", nName);
  if( p->nPart==0 ){
    if( partsAppend(p, canon.z, canon.n) ) return SQLITE_NOMEM;
  }
  if( pbFallback ){
    *pbFallback = p->nPart==1 && p->aPart[0].n==canon.n
               && memcmp(p->aPart[0].z, canon.z, canon.n)==0;
  }
  return SQLITE_OK;
}

/* See funcs.h. */
char *profsumPartsJoin(const ProfsumParts *p, int nMax, int *pn){
  sqlite3_int64 nByte = 0;
  int k, nUse = p->nPart, m = 0;
  char *z;
  if( nMax>0 && nMax<nUse ) nUse = nMax;
  for(k=0; k<nUse; k++) nByte += p->aPart[k].n + (k>0 ? 2 : 0);
  z = sqlite3_malloc64(nByte + 1);
  if( z==0 ) return 0;
  for(k=0; k<nUse; k++){
    if( k>0 ){ z[m++] = '='; z[m++] = '>'; }
    memcpy(z+m, p->aPart[k].z, p->aPart[k].n);
    m += p->aPart[k].n;
  }
  z[m] = 0;
  if( pn ) *pn = m;
  return z;
}
