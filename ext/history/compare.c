/*
** compare.c — compare a before/after pair of imported traces, track the
** result into a regression history kept in the database, read and write
** the reference tool's JSONL history, and write the comparison bundle.
**
**   SELECT profsum_compare_json('baseline', 'candidate');          -- tools-spec §3
**   SELECT profsum_compare_json(1, 2, 5);                           -- top_k 5
**   SELECT profsum_track('baseline', 'candidate', 'ci-1234');       -- §4.1/§4.2
**   SELECT profsum_track(1, 2, NULL, '{"max_step_median_regression_pct": 2}');
**   SELECT profsum_track(1, 2, NULL, '{"top_k": 3}');               -- top_k 3
**   SELECT profsum_history_summary_json();                          -- §4.3 (tail 20)
**   SELECT profsum_history_import('history.jsonl');                 -- → records read
**   SELECT profsum_history_export('history.jsonl');                 -- → records written
**   SELECT profsum_bundle('baseline', 'candidate', 'out/cmp',
**                         '{"label": "x", "history": true}');       -- §6 → manifest
**
** Semantics: ../shared/reference/summary-v1-tools-spec.md §3, §4, §6.  The
** documents compared are profile_summary.v1 trees built by summary_doc.c
** with each trace's own stored knobs; every JSON result is byte-exact
** Python json.dumps(indent=2, sort_keys=True) (jsontree.c), every history
** line is json.dumps(sort_keys=True).
**
** The history lives in the table profsum_history_record (sql/schema.sql):
** one row per tracked pair, per bundle with "history": true, per imported
** JSONL line; record_json holds the §4.2 record as its JSONL line.
**
** Write functions (profsum_track, profsum_history_import, profsum_bundle)
** are SQLITE_DIRECTONLY (they write tables and files: never from a view or
** trigger of an untrusted database) and run their database writes through
** profsumWriteRun() (busy.c): one transaction, write lock first, bounded
** retry of SQLITE_BUSY/SQLITE_BUSY_SNAPSHOT; on error nothing is written.
** profsum_history_export writes a file: DIRECTONLY too.  The readers
** (profsum_compare_json, profsum_history_summary_json) read tables only.
**
** Files are written atomically: a temporary file in the target directory,
** fsync, rename.  Limitations: JSON integers beyond int64 are read as
** floats; JSONL lines are split at '\n' (a "\r\n" ending is trimmed);
** history files larger than 1 GiB and lines longer than 16 MiB are
** refused (a history is read a line at a time, never whole).
*/
#include "profsum_int.h"
#include "compare.h"
#include "busy.h"
#include "jsontree.h"
#include "summary_doc.h"
#include "funcs.h"
#include "pycompat.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ================================================================== */
/* JSON helpers                                                        */
/* ================================================================== */

/* Clone of member zKey of object pObj (null when absent). */
static JNode *cloneMember(const JNode *pObj, const char *zKey){
  return jClone(jGet(pObj, zKey));
}

/* String value of member zKey, or 0 when absent or not a string. */
static const char *memberStr(const JNode *pObj, const char *zKey){
  const JNode *p = jGet(pObj, zKey);
  return p && p->type==JT_STRING ? p->z : 0;
}

/* ================================================================== */
/* The text rule: what text may enter the history                      */
/* ================================================================== */
/*
** Every string that enters profsum_history_record from outside — each
** string and key of a record read by profsum_history_import, the label of
** profsum_track and every string of profsum_bundle's options_json — must be
** text SQLite can keep whole and every reader can decode: valid UTF-8 (RFC
** 3629: no overlong form, no encoded surrogate, nothing beyond U+10FFFF, no
** cut sequence), no \u escape of a lone surrogate (JSON can write one, but
** it names no character: json_extract() would turn it into bytes that are
** not UTF-8), and no U+0000 (SQLite's C interfaces and json_extract() end a
** text there).  Such a string is refused with its place; nothing is
** repaired and nothing is written.  The text profsum puts into a record
** itself (source paths, op names from its tables) is written as jDump()
** writes any text, a byte that is not UTF-8 as U+FFFD (and
** profsumJsonCompact() never leaves a lone surrogate escape).
*/

/* Length of the UTF-8 sequence at u (2 to 4 bytes), or 0 when the bytes
** from u (before e) are not one.  Requires u[0] >= 0x80. */
static int utf8SeqLen(const unsigned char *u, const unsigned char *e){
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
    if( (k = utf8SeqLen(p, e))==0 ) return p-u;
    p += k;
  }
  return -1;
}

/* Check the text rule on the text argument zWhat (n bytes at z): 0 when it
** holds, else 1 with *pzErr a message (0 when out of memory) such as
** "label is not valid UTF-8 (byte 0xff at byte 3)". */
static int textArgFault(const char *zWhat, const char *z, int n, char **pzErr){
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

/* Value of 4 hex digits at p (stops at the first other character, the
** NUL included), or 0x110000 when they are not 4 hex digits. */
static unsigned hex4(const char *p){
  unsigned v = 0;
  int i;
  for(i=0; i<4; i++){
    char c = p[i];
    v <<= 4;
    if( c>='0' && c<='9' ) v |= (unsigned)(c-'0');
    else if( c>='a' && c<='f' ) v |= (unsigned)(c-'a'+10);
    else if( c>='A' && c<='F' ) v |= (unsigned)(c-'A'+10);
    else return 0x110000;
  }
  return v;
}

/* Append n bytes of z for a message: UTF-8 sequences and printable ASCII
** as they are, any other byte as \xNN; at most mx bytes of z, then "...". */
static void appendShown(sqlite3_str *s, const char *z, int n, int mx){
  const unsigned char *u = (const unsigned char*)z, *e = u + n, *p = u;
  while( p<e ){
    int k = *p>=0x80 ? utf8SeqLen(p, e) : (*p>=0x20 && *p<0x7F);
    if( p-u+(k ? k : 1)>mx ){ sqlite3_str_appendall(s, "..."); return; }
    if( k ){ sqlite3_str_append(s, (const char*)p, k); p += k; }
    else{ sqlite3_str_appendf(s, "\\x%02x", *p); p++; }
  }
}

/* The place of a JSON value in the document being scanned: a member of an
** object (zKey, nKey: its key as written between the quotes) or an element
** of an array (zKey 0, idx); 0 for the document itself. */
typedef struct JPlace JPlace;
struct JPlace {
  const JPlace *pUp;        /* the place of the parent, 0 at the top */
  const char *zKey;         /* member key (raw JSON text), or 0 */
  int nKey;                 /* its length */
  sqlite3_int64 idx;        /* element index (zKey 0) */
};

/* Append the JSONPath of place p at level k (1: a member of the document)
** of n: "$", then ".key" (letters, digits and '_', not starting with a
** digit), ["key"] (any other key, as written, at most 40 bytes shown) or
** [i] per level; past 16 levels only the first 4 and the last 11 show. */
static void placePath(sqlite3_str *s, const JPlace *p, int k, int n){
  int i, ident;
  if( p==0 ){ sqlite3_str_appendchar(s, 1, '$'); return; }
  placePath(s, p->pUp, k-1, n);
  if( n>16 && k>4 && k<=n-11 ){
    if( k==5 ) sqlite3_str_appendall(s, "...");
    return;
  }
  if( p->zKey==0 ){ sqlite3_str_appendf(s, "[%lld]", (long long)p->idx); return; }
  ident = p->nKey>0 && !(p->zKey[0]>='0' && p->zKey[0]<='9');
  for(i=0; ident && i<p->nKey; i++){
    char c = p->zKey[i];
    ident = (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9') || c=='_';
  }
  if( ident ){
    sqlite3_str_appendchar(s, 1, '.');
    sqlite3_str_append(s, p->zKey, p->nKey);
  }else{
    sqlite3_str_appendall(s, "[\"");
    appendShown(s, p->zKey, p->nKey, 40);
    sqlite3_str_appendall(s, "\"]");
  }
}

/* Deepest nesting jrValue() follows (jParse() refuses more than 2000). */
#define JR_MAX_DEPTH 2100

/* State of jsonTextRule(): the text, the cursor, the first fault. */
typedef struct JRule {
  const char *z, *p, *e;    /* the JSON text, the cursor, the end */
  int depth;                /* nesting of the value scanned */
  int rc;                   /* SQLITE_OK, SQLITE_ERROR (a fault), SQLITE_NOMEM */
  char *zErr;               /* the fault's message (rc SQLITE_ERROR) */
} JRule;

/* Record the fault at q (in the string at place pAt; isKey: in its key):
** "$.path: <problem> (<shown> at byte N)". */
static void jrFault(JRule *r, const JPlace *pAt, int isKey, const char *q,
                    const char *zProblem, const char *zShown){
  sqlite3_str *s = sqlite3_str_new(0);
  int n = 0;
  const JPlace *x;
  for(x=pAt; x; x=x->pUp) n++;
  if( isKey ) sqlite3_str_appendall(s, "the key of ");
  placePath(s, pAt, n, n);
  sqlite3_str_appendf(s, ": %s (%s at byte %lld)", zProblem, zShown, (long long)(q - r->z));
  r->zErr = sqlite3_str_finish(s);
  r->rc = r->zErr ? SQLITE_ERROR : SQLITE_NOMEM;
}

/* Check the string at r->p (its opening quote) and move past it. */
static void jrString(JRule *r, const JPlace *pAt, int isKey){
  const char *p = r->p + 1, *e = r->e;
  char zWhat[40];
  while( p<e && *p!='"' ){
    unsigned char c = (unsigned char)*p;
    if( c=='\\' ){
      unsigned u = e-p>=6 && p[1]=='u' ? hex4(p+2) : 0x110000;
      if( u>0xFFFF ){ p += 2; continue; }           /* any escape but \uXXXX */
      if( u>=0xD800 && u<=0xDBFF && e-p>=12 && p[6]=='\\' && p[7]=='u' ){
        unsigned u2 = hex4(p+8);
        if( u2>=0xDC00 && u2<=0xDFFF ){ p += 12; continue; }   /* a pair */
      }
      if( u==0 ){
        jrFault(r, pAt, isKey, p, "holds U+0000, which SQLite text cannot keep whole", "\\u0000");
        return;
      }
      if( u>=0xD800 && u<=0xDFFF ){
        sqlite3_snprintf(sizeof(zWhat), zWhat, "\\u%.4s", p+2);
        jrFault(r, pAt, isKey, p, "holds a lone surrogate (half of a UTF-16 pair: no character)", zWhat);
        return;
      }
      p += 6;
    }else if( c<0x80 ){
      if( c==0 ){
        jrFault(r, pAt, isKey, p, "holds U+0000, which SQLite text cannot keep whole", "a NUL byte");
        return;
      }
      p++;
    }else{
      int k = utf8SeqLen((const unsigned char*)p, (const unsigned char*)e);
      if( k==0 ){
        sqlite3_snprintf(sizeof(zWhat), zWhat, "byte 0x%02x", c);
        jrFault(r, pAt, isKey, p, "not valid UTF-8", zWhat);
        return;
      }
      p += k;
    }
  }
  r->p = p<e ? p+1 : e;
}

/* Move r->p past the string at r->p (its opening quote), unchecked. */
static const char *jrStringEnd(const char *p, const char *e){
  for(p++; p<e && *p!='"'; p++){
    if( *p=='\\' && p+1<e ) p++;
  }
  return p<e ? p+1 : e;
}

static void jrWs(JRule *r){
  while( r->p<r->e && (*r->p==' ' || *r->p=='\t' || *r->p=='\n' || *r->p=='\r') ) r->p++;
}

/* Check the value at r->p (at place pAt) and move past it.  The text is
** JSON jParse() accepted; on anything else the scan stops early (every
** loop moves forward or returns). */
static void jrValue(JRule *r, const JPlace *pAt){
  JPlace m;
  jrWs(r);
  if( r->rc || r->p>=r->e ) return;
  if( ++r->depth>JR_MAX_DEPTH ){ r->p = r->e; return; }
  m.pUp = pAt; m.zKey = 0; m.nKey = 0; m.idx = 0;
  switch( *r->p ){
    case '"':
      jrString(r, pAt, 0);
      break;
    case '{':
      for(r->p++; r->rc==SQLITE_OK; ){
        jrWs(r);
        if( r->p>=r->e ) break;
        if( *r->p==',' ){ r->p++; continue; }
        if( *r->p!='"' ){ r->p++; break; }          /* '}' */
        m.zKey = r->p + 1;
        m.nKey = (int)(jrStringEnd(r->p, r->e) - 1 - m.zKey);
        jrString(r, &m, 1);
        jrWs(r);
        if( r->p<r->e && *r->p==':' ) r->p++;
        jrValue(r, &m);
      }
      break;
    case '[':
      r->p++;
      jrWs(r);
      if( r->p<r->e && *r->p==']' ){ r->p++; break; }
      for(; r->rc==SQLITE_OK && r->p<r->e; m.idx++){
        jrValue(r, &m);
        jrWs(r);
        if( r->p<r->e && *r->p==',' ){ r->p++; continue; }
        if( r->p<r->e ) r->p++;                     /* ']' */
        break;
      }
      break;
    default:
      /* a number, true, false, null, NaN, Infinity, -Infinity */
      while( r->p<r->e && *r->p!=',' && *r->p!=']' && *r->p!='}' && *r->p!=' '
             && *r->p!='\t' && *r->p!='\n' && *r->p!='\r' ) r->p++;
  }
  r->depth--;
}

/*
** Check the text rule on every string and key of the JSON text z (n bytes;
** text jParse() accepted).  Returns SQLITE_OK; SQLITE_ERROR with *pzErr
** naming the first string that breaks it — its JSONPath, what is wrong and
** where ("$.label: not valid UTF-8 (byte 0xff at byte 12)", "the key of
** $.a[\"x\"]: ...", "$.x: holds a lone surrogate (...) (\ud800 at byte
** 30)"; byte offsets count from z); or SQLITE_NOMEM (*pzErr 0).
*/
static int jsonTextRule(const char *z, int n, char **pzErr){
  JRule r;
  memset(&r, 0, sizeof(r));
  r.z = r.p = z;
  r.e = z + n;
  jrValue(&r, 0);
  *pzErr = r.zErr;
  return r.rc;
}

/* ================================================================== */
/* Numbers with Python's int/float distinction                         */
/* ================================================================== */
#define NUM_NULL 0
#define NUM_INT  1
#define NUM_REAL 2
typedef struct Num {
  int t;              /* NUM_NULL | NUM_INT | NUM_REAL */
  sqlite3_int64 i;    /* NUM_INT value */
  double r;           /* NUM_REAL value */
} Num;

/* Constructors of Num values: None, a float, an int. */
static Num numNull(void){ Num n; n.t = NUM_NULL; n.i = 0; n.r = 0.0; return n; }
static Num numReal(double r){ Num n; n.t = NUM_REAL; n.i = 0; n.r = r; return n; }
static Num numInt(sqlite3_int64 i){ Num n; n.t = NUM_INT; n.i = i; n.r = 0.0; return n; }

/* The number held by a JSON node (null for anything but INT/REAL). */
static Num numOf(const JNode *p){
  if( p && p->type==JT_INT ) return numInt(p->i);
  if( p && p->type==JT_REAL ) return numReal(p->r);
  return numNull();
}

/* tracking.py's _as_float(): an int or float as float, else None. */
static Num numAsFloat(const JNode *p){
  if( p && p->type==JT_INT ) return numReal((double)p->i);
  if( p && p->type==JT_REAL ) return numReal(p->r);
  return numNull();
}

/* The value as a C double (0.0 for None). */
static double numD(Num n){ return n.t==NUM_INT ? (double)n.i : n.r; }

/* A JSON node for n (null, int or float).  0 when out of memory. */
static JNode *numNode(Num n){
  if( n.t==NUM_INT ) return jInt(n.i);
  if( n.t==NUM_REAL ) return jReal(n.r);
  return jNull();
}

/* a − b (None if either is None; int when both are ints and the result
** fits int64). */
static Num numSub(Num a, Num b){
  if( a.t==NUM_NULL || b.t==NUM_NULL ) return numNull();
  if( a.t==NUM_INT && b.t==NUM_INT ){
    sqlite3_int64 d;
    if( !__builtin_sub_overflow(a.i, b.i, &d) ) return numInt(d);
    return numReal((double)a.i - (double)b.i);
  }
  return numReal(numD(a) - numD(b));
}

/* Sign-aware comparison: <0, 0, >0 (ints compared exactly). */
static int numCmp(Num a, Num b){
  if( a.t==NUM_INT && b.t==NUM_INT ) return a.i<b.i ? -1 : a.i>b.i;
  return numD(a)<numD(b) ? -1 : numD(a)>numD(b);
}

/* query.py _pct_delta(before, after): ((after − before) / before) * 100.0,
** None when either is None or before <= 0. */
static Num pctDelta(Num b, Num a){
  Num d;
  if( b.t==NUM_NULL || a.t==NUM_NULL || numD(b)<=0.0 ) return numNull();
  d = numSub(a, b);
  return numReal((numD(d) / numD(b)) * 100.0);
}

/* query.py _ratio(before, after): after / before, None as for pctDelta. */
static Num ratio(Num b, Num a){
  if( b.t==NUM_NULL || a.t==NUM_NULL || numD(b)<=0.0 ) return numNull();
  return numReal(numD(a) / numD(b));
}

/* ================================================================== */
/* Union of two lists of objects by a string key                       */
/* ================================================================== */

/* One member of the union: the key and the last object with it on each
** side (Python {row.key: row for row in rows} keeps the last). */
typedef struct KeyPair {
  const char *z;        /* the key (borrowed from a document) */
  const JNode *pB;      /* before-side object or 0 */
  const JNode *pA;      /* after-side object or 0 */
} KeyPair;

/* Sort entry: key, side (0 before, 1 after), position. */
typedef struct KeyEnt { const char *z; int side; int idx; const JNode *p; } KeyEnt;

/* qsort order of KeyEnt: key (strcmp), then side, then position. */
static int keyEntCmp(const void *pa, const void *pb){
  const KeyEnt *a = (const KeyEnt*)pa, *b = (const KeyEnt*)pb;
  int c = strcmp(a->z, b->z);
  if( c ) return c;
  if( a->side!=b->side ) return a->side - b->side;
  return a->idx - b->idx;
}

/*
** The sorted union (by code point, = strcmp on UTF-8) of the zKey values
** of the objects in arrays arrB and arrA (either may be 0 or not an array;
** elements without a string zKey are skipped).  On success *paOut is an
** sqlite3_malloc'd array of *pnOut KeyPairs (possibly 0 with *paOut 0).
** Returns SQLITE_OK or SQLITE_NOMEM.
*/
static int unionByKey(const JNode *arrB, const JNode *arrA, const char *zKey,
                      KeyPair **paOut, int *pnOut){
  int nB = arrB && arrB->type==JT_ARRAY ? arrB->nChild : 0;
  int nA = arrA && arrA->type==JT_ARRAY ? arrA->nChild : 0;
  KeyEnt *aE;
  KeyPair *aP;
  int nE = 0, nP = 0, i;
  *paOut = 0;
  *pnOut = 0;
  if( nB+nA==0 ) return SQLITE_OK;
  aE = sqlite3_malloc64(sizeof(KeyEnt)*(sqlite3_uint64)(nB+nA));
  if( aE==0 ) return SQLITE_NOMEM;
  for(i=0; i<nB+nA; i++){
    const JNode *o = i<nB ? arrB->a[i] : arrA->a[i-nB];
    const char *z = memberStr(o, zKey);
    if( z==0 ) continue;
    aE[nE].z = z; aE[nE].side = i<nB ? 0 : 1; aE[nE].idx = i; aE[nE].p = o;
    nE++;
  }
  if( nE==0 ){ sqlite3_free(aE); return SQLITE_OK; }
  qsort(aE, (size_t)nE, sizeof(KeyEnt), keyEntCmp);
  aP = sqlite3_malloc64(sizeof(KeyPair)*(sqlite3_uint64)nE);
  if( aP==0 ){ sqlite3_free(aE); return SQLITE_NOMEM; }
  for(i=0; i<nE; i++){
    if( nP==0 || strcmp(aP[nP-1].z, aE[i].z)!=0 ){
      aP[nP].z = aE[i].z; aP[nP].pB = 0; aP[nP].pA = 0;
      nP++;
    }
    /* entries are in position order within a side: the last one wins */
    if( aE[i].side==0 ) aP[nP-1].pB = aE[i].p; else aP[nP-1].pA = aE[i].p;
  }
  sqlite3_free(aE);
  *paOut = aP;
  *pnOut = nP;
  return SQLITE_OK;
}

/* ================================================================== */
/* compare_profile_summaries (tools-spec §3)                           */
/* ================================================================== */

/* provenance_checks. */
static JNode *provenance(const JNode *b, const JNode *a){
  JNode *o = jObj(), *msgs = jArr();
  const JNode *bp = jGet(b, "trace_provenance"), *ap = jGet(a, "trace_provenance");
  const JNode *bh = jGet(bp, "trace_sha256"), *ah = jGet(ap, "trace_sha256");
  const JNode *brm = jGet(b, "run_metadata"), *arm = jGet(a, "run_metadata");
  const JNode *bRun = jGet(brm, "run_id"), *aRun = jGet(arm, "run_id");
  const JNode *bArt = jGet(brm, "artifact_ref"), *aArt = jGet(arm, "artifact_ref");
  const char *zStatus = "pass";
  if( profsumPyTruthy(bh) && profsumPyTruthy(ah) && profsumPyEq(bh, ah) ){
    zStatus = "fail";
    jPush(msgs, jStr("Before and after summaries point to identical trace content (matching SHA256).", -1));
  }
  if( profsumPyEq(jGet(b, "source_path"), jGet(a, "source_path")) ){
    if( strcmp(zStatus, "fail")!=0 ) zStatus = "warn";
    jPush(msgs, jStr("Before and after summaries have the same source_path.", -1));
  }
  if( profsumPyTruthy(bRun) && profsumPyTruthy(aRun) && profsumPyEq(bRun, aRun) ){
    if( strcmp(zStatus, "fail")!=0 ) zStatus = "warn";
    jPush(msgs, jStr("Before and after summaries have the same W&B run_id.", -1));
  }
  if( profsumPyTruthy(bArt) && profsumPyTruthy(aArt) && profsumPyEq(bArt, aArt) ){
    if( strcmp(zStatus, "fail")!=0 ) zStatus = "warn";
    jPush(msgs, jStr("Before and after summaries reference the same W&B artifact.", -1));
  }
  if( !profsumPyTruthy(bh) || !profsumPyTruthy(ah) ){
    if( strcmp(zStatus, "pass")==0 ) zStatus = "warn";
    jPush(msgs, jStr("One or both summaries are missing trace SHA256 provenance.", -1));
  }
  jSetLit(o, "status", jStr(zStatus, -1));
  jSetLit(o, "messages", msgs);
  jSetLit(o, "before_trace_sha256", jClone(bh));
  jSetLit(o, "after_trace_sha256", jClone(ah));
  jSetLit(o, "before_run_id", jClone(bRun));
  jSetLit(o, "after_run_id", jClone(aRun));
  return o;
}

/* step_time: steady-state median and p90, before/after/delta. */
static JNode *stepTime(const JNode *b, const JNode *a){
  JNode *o = jObj();
  const JNode *sb = jGet(jGet(b, "step_time"), "steady_state_steps");
  const JNode *sa = jGet(jGet(a, "step_time"), "steady_state_steps");
  Num mb = numOf(jGet(sb, "median")), ma = numOf(jGet(sa, "median"));
  Num pb = numOf(jGet(sb, "p90")), pa = numOf(jGet(sa, "p90"));
  jSetLit(o, "steady_state_median_before", numNode(mb));
  jSetLit(o, "steady_state_median_after", numNode(ma));
  jSetLit(o, "steady_state_median_delta", numNode(numSub(ma, mb)));
  jSetLit(o, "steady_state_p90_before", numNode(pb));
  jSetLit(o, "steady_state_p90_after", numNode(pa));
  jSetLit(o, "steady_state_p90_delta", numNode(numSub(pa, pb)));
  return o;
}

/* step_classes.before / .after: the document's classes, flattened. */
static JNode *classRows(const JNode *doc){
  const JNode *cl = jGet(jGet(doc, "step_time"), "classes");
  JNode *arr = jArr();
  int i;
  for(i=0; cl && cl->type==JT_ARRAY && i<cl->nChild; i++){
    const JNode *c = cl->a[i], *ds = jGet(c, "duration_stats");
    JNode *o;
    if( c->type!=JT_OBJECT ) continue;
    o = jObj();
    jSetLit(o, "name", cloneMember(c, "name"));
    jSetLit(o, "count", cloneMember(c, "count"));
    jSetLit(o, "fraction_of_steady", cloneMember(c, "fraction_of_steady"));
    jSetLit(o, "median_duration", cloneMember(ds, "median"));
    jSetLit(o, "p90_duration", cloneMember(ds, "p90"));
    jSetLit(o, "representative_step", cloneMember(c, "representative_step"));
    jSetLit(o, "representative_duration", cloneMember(c, "representative_duration"));
    jSetLit(o, "periodicity", cloneMember(c, "periodicity"));
    jPush(arr, o);
  }
  return arr;
}

/* step_classes: {before, after, delta}. */
static JNode *stepClasses(const JNode *b, const JNode *a){
  JNode *o = jObj(), *delta = jArr();
  const JNode *cb = jGet(jGet(b, "step_time"), "classes");
  const JNode *ca = jGet(jGet(a, "step_time"), "classes");
  KeyPair *aP = 0;
  int nP = 0, i;
  jSetLit(o, "before", classRows(b));
  jSetLit(o, "after", classRows(a));
  if( unionByKey(cb, ca, "name", &aP, &nP) ){ jFree(delta); jFree(o); return 0; }
  for(i=0; i<nP; i++){
    const JNode *rb = aP[i].pB, *ra = aP[i].pA;
    Num mb = rb ? numOf(jGet(jGet(rb, "duration_stats"), "median")) : numNull();
    Num ma = ra ? numOf(jGet(jGet(ra, "duration_stats"), "median")) : numNull();
    JNode *r = jObj();
    jSetLit(r, "name", jStr(aP[i].z, -1));
    jSetLit(r, "before_count", rb ? cloneMember(rb, "count") : jInt(0));
    jSetLit(r, "after_count", ra ? cloneMember(ra, "count") : jInt(0));
    jSetLit(r, "before_fraction", rb ? cloneMember(rb, "fraction_of_steady") : jReal(0.0));
    jSetLit(r, "after_fraction", ra ? cloneMember(ra, "fraction_of_steady") : jReal(0.0));
    jSetLit(r, "median_before", numNode(mb));
    jSetLit(r, "median_after", numNode(ma));
    jSetLit(r, "median_delta", numNode(numSub(ma, mb)));
    jSetLit(r, "median_regression_pct", numNode(pctDelta(mb, ma)));
    jPush(delta, r);
  }
  sqlite3_free(aP);
  jSetLit(o, "delta", delta);
  return o;
}

/* time_breakdown_share_delta: after share − before share of each bucket. */
static JNode *shareDelta(const JNode *b, const JNode *a){
  static const char *azCat[] = {"compute", "communication", "host", "stall", "other"};
  const JNode *tb = jGet(b, "time_breakdown"), *ta = jGet(a, "time_breakdown");
  JNode *o = jObj();
  size_t k;
  for(k=0; k<sizeof(azCat)/sizeof(azCat[0]); k++){
    Num sb = numOf(jGet(jGet(tb, azCat[k]), "share_of_total"));
    Num sa = numOf(jGet(jGet(ta, azCat[k]), "share_of_total"));
    jSetLit(o, azCat[k], numNode(numSub(sa, sb)));
  }
  return o;
}

/* A bucket of the families fallback. */
typedef struct FamBucket {
  const char *zFam;         /* family (static string) */
  sqlite3_int64 count;      /* Σ op count */
  double total, excl;       /* Σ total / exclusive duration */
  double flop;              /* Σ flop proxy × count */
  const char *zExample;     /* first op name (borrowed) */
} FamBucket;

/*
** query.py _semantic_families_for_summary() for a document without
** semantic_families (older files): families recomputed from the hot ops.
** Returns a new array, or 0 when out of memory.
*/
static JNode *fallbackFamilies(const JNode *doc){
  const JNode *hot = jGet(doc, "hot_ops");
  Num tot = numOf(jGet(jGet(doc, "time_breakdown"), "total_duration"));
  double totalDur = numD(tot);
  int nHot = hot && hot->type==JT_ARRAY ? hot->nChild : 0, n = 0, i, j;
  FamBucket *a;
  JNode *arr = jArr();
  if( arr==0 ) return 0;
  if( nHot==0 ) return arr;
  a = sqlite3_malloc64(sizeof(FamBucket)*(sqlite3_uint64)nHot);
  if( a==0 ){ jFree(arr); return 0; }
  for(i=0; i<nHot; i++){
    const JNode *op = hot->a[i], *sh;
    const char *zName = memberStr(op, "name"), *zFam = "other";
    Num cnt, fp;
    if( zName==0 ) continue;
    if( profsumSemanticFamily(zName, (int)strlen(zName), 0, 0, &zFam) ){
      sqlite3_free(a); jFree(arr); return 0;
    }
    for(j=0; j<n; j++) if( strcmp(a[j].zFam, zFam)==0 ) break;
    if( j==n ){
      memset(&a[n], 0, sizeof(FamBucket));
      a[n].zFam = zFam;
      a[n].zExample = zName;
      n++;
    }
    cnt = numOf(jGet(op, "count"));
    a[j].count += (sqlite3_int64)numD(cnt);
    a[j].total += numD(numOf(jGet(op, "total_duration")));
    a[j].excl += numD(numOf(jGet(op, "exclusive_duration")));
    fp = numOf(jGetOr(op, "flop_proxy_per_invocation", "work_proxy_per_invocation"));
    sh = jGet(op, "shape_signature");
    if( fp.t==NUM_NULL && profsumPyTruthy(sh) && sh->type==JT_STRING ){
      int64_t iv = 0;
      double rv = 0.0;
      int k = profsumFlopProxy(zFam, (int)strlen(zFam), sh->z, sh->n, &iv, &rv);
      if( k==PROFSUM_FLOP_INT ) fp = numInt(iv);
      else if( k==PROFSUM_FLOP_REAL ) fp = numReal(rv);
    }
    if( fp.t!=NUM_NULL && numD(cnt)>0 ) a[j].flop += numD(fp)*numD(cnt);
  }
  /* sort (exclusive desc, family asc); insertion sort keeps it stable */
  for(i=1; i<n; i++){
    FamBucket x = a[i];
    j = i-1;
    while( j>=0 && (a[j].excl<x.excl || (a[j].excl==x.excl && strcmp(a[j].zFam, x.zFam)>0)) ){
      a[j+1] = a[j];
      j--;
    }
    a[j+1] = x;
  }
  for(i=0; i<n; i++){
    /* no dominant shape here; a flop proxy when the sum is positive */
    jPush(arr, profsumFamilyObject(a[i].zFam, a[i].count, a[i].total, a[i].excl,
                                   totalDur>0 ? a[i].excl/totalDur : 0.0, a[i].zExample, 0,
                                   a[i].flop>0, a[i].flop));
  }
  sqlite3_free(a);
  if( arr->oom ){ jFree(arr); return 0; }
  return arr;
}

/* The semantic families of a document: its own list when non-empty, else
** the fallback (then *ppOwned holds it, for the caller to free).  Returns
** 0 only when out of memory. */
static const JNode *familiesOf(const JNode *doc, JNode **ppOwned){
  const JNode *f = jGet(doc, "semantic_families");
  *ppOwned = 0;
  if( f && f->type==JT_ARRAY && f->nChild>0 ) return f;
  *ppOwned = fallbackFamilies(doc);
  return *ppOwned;
}

/* semantic_family_delta. */
static JNode *familyDelta(const JNode *b, const JNode *a){
  JNode *ownB = 0, *ownA = 0, *arr;
  const JNode *fb = familiesOf(b, &ownB), *fa = familiesOf(a, &ownA);
  KeyPair *aP = 0;
  int nP = 0, i;
  if( fb==0 || fa==0 || unionByKey(fb, fa, "family", &aP, &nP) ){
    jFree(ownB); jFree(ownA);
    return 0;
  }
  arr = jArr();
  for(i=0; i<nP; i++){
    const JNode *rb = aP[i].pB, *ra = aP[i].pA;
    Num bEx = rb ? numOf(jGet(rb, "exclusive_duration")) : numReal(0.0);
    Num aEx = ra ? numOf(jGet(ra, "exclusive_duration")) : numReal(0.0);
    Num bTpf = rb ? numOf(jGetOr(rb, "time_per_flop_proxy", "normalized_exclusive_per_work")) : numNull();
    Num aTpf = ra ? numOf(jGetOr(ra, "time_per_flop_proxy", "normalized_exclusive_per_work")) : numNull();
    Num bFl = rb ? numOf(jGetOr(rb, "flop_proxy_total", "work_proxy_total")) : numNull();
    Num aFl = ra ? numOf(jGetOr(ra, "flop_proxy_total", "work_proxy_total")) : numNull();
    Num tr = ratio(bEx, aEx), fr = ratio(bFl, aFl);
    Num eff = (tr.t!=NUM_NULL && fr.t!=NUM_NULL && numD(fr)!=0.0) ? numReal(numD(tr)/numD(fr)) : numNull();
    JNode *r = jObj();
    jSetLit(r, "family", jStr(aP[i].z, -1));
    jSetLit(r, "before_exclusive_duration", numNode(bEx));
    jSetLit(r, "after_exclusive_duration", numNode(aEx));
    jSetLit(r, "exclusive_duration_delta", numNode(numSub(aEx, bEx)));
    jSetLit(r, "exclusive_regression_pct", numNode(pctDelta(bEx, aEx)));
    jSetLit(r, "before_flop_proxy_total", numNode(bFl));
    jSetLit(r, "after_flop_proxy_total", numNode(aFl));
    jSetLit(r, "flop_proxy_ratio", numNode(fr));
    jSetLit(r, "before_time_per_flop_proxy", numNode(bTpf));
    jSetLit(r, "after_time_per_flop_proxy", numNode(aTpf));
    jSetLit(r, "time_per_flop_regression_pct", numNode(pctDelta(bTpf, aTpf)));
    jSetLit(r, "time_ratio", numNode(tr));
    jSetLit(r, "work_ratio", numNode(fr));
    jSetLit(r, "efficiency_ratio", numNode(eff));
    jSetLit(r, "example_before", rb ? cloneMember(rb, "example_op") : jNull());
    jSetLit(r, "example_after", ra ? cloneMember(ra, "example_op") : jNull());
    jSetLit(r, "shape_signature_before", rb ? cloneMember(rb, "dominant_shape_signature") : jNull());
    jSetLit(r, "shape_signature_after", ra ? cloneMember(ra, "dominant_shape_signature") : jNull());
    jPush(arr, r);
  }
  sqlite3_free(aP);
  jFree(ownB);
  jFree(ownA);
  return arr;
}

/* One op's exclusive-duration delta. */
typedef struct OpDelta { const char *z; Num b, a, d; } OpDelta;

/* regressed: (delta desc, name asc). */
static int opRegCmp(const void *pa, const void *pb){
  const OpDelta *x = (const OpDelta*)pa, *y = (const OpDelta*)pb;
  int c = numCmp(y->d, x->d);
  return c ? c : strcmp(x->z, y->z);
}
/* improved: (delta asc, name asc). */
static int opImpCmp(const void *pa, const void *pb){
  const OpDelta *x = (const OpDelta*)pa, *y = (const OpDelta*)pb;
  int c = numCmp(x->d, y->d);
  return c ? c : strcmp(x->z, y->z);
}

/* Rows {name, before, after, delta} of a[0..min(n, topK)). */
static JNode *opRows(const OpDelta *a, int n, int topK){
  JNode *arr = jArr();
  int i;
  for(i=0; i<n && i<topK; i++){
    JNode *o = jObj();
    jSetLit(o, "name", jStr(a[i].z, -1));
    jSetLit(o, "before", numNode(a[i].b));
    jSetLit(o, "after", numNode(a[i].a));
    jSetLit(o, "delta", numNode(a[i].d));
    jPush(arr, o);
  }
  return arr;
}

/* regressed_ops and improved_ops into out.  Returns SQLITE_OK/NOMEM. */
static int opDeltas(JNode *out, const JNode *b, const JNode *a, int topK){
  KeyPair *aP = 0;
  OpDelta *aReg = 0, *aImp = 0;
  int nP = 0, nReg = 0, nImp = 0, i;
  if( unionByKey(jGet(b, "hot_ops"), jGet(a, "hot_ops"), "name", &aP, &nP) ) return SQLITE_NOMEM;
  if( nP>0 ){
    aReg = sqlite3_malloc64(sizeof(OpDelta)*(sqlite3_uint64)nP);
    aImp = sqlite3_malloc64(sizeof(OpDelta)*(sqlite3_uint64)nP);
    if( aReg==0 || aImp==0 ){
      sqlite3_free(aP); sqlite3_free(aReg); sqlite3_free(aImp);
      return SQLITE_NOMEM;
    }
  }
  for(i=0; i<nP; i++){
    OpDelta x;
    x.z = aP[i].z;
    x.b = aP[i].pB ? numOf(jGet(aP[i].pB, "exclusive_duration")) : numReal(0.0);
    x.a = aP[i].pA ? numOf(jGet(aP[i].pA, "exclusive_duration")) : numReal(0.0);
    x.d = numSub(x.a, x.b);
    if( x.d.t==NUM_NULL ) continue;
    if( numD(x.d)>0 ) aReg[nReg++] = x;
    else if( numD(x.d)<0 ) aImp[nImp++] = x;
  }
  if( nReg>1 ) qsort(aReg, (size_t)nReg, sizeof(OpDelta), opRegCmp);
  if( nImp>1 ) qsort(aImp, (size_t)nImp, sizeof(OpDelta), opImpCmp);
  jSetLit(out, "regressed_ops", opRows(aReg, nReg, topK));
  jSetLit(out, "improved_ops", opRows(aImp, nImp, topK));
  sqlite3_free(aP);
  sqlite3_free(aReg);
  sqlite3_free(aImp);
  return SQLITE_OK;
}

/* See compare.h. */
JNode *profsumCompareDocs(const JNode *b, const JNode *a, int topK){
  JNode *out = jObj();
  if( out==0 ) return 0;
  if( topK<0 ) topK = 0;
  jSetLit(out, "before_source", cloneMember(b, "source_path"));
  jSetLit(out, "after_source", cloneMember(a, "source_path"));
  jSetLit(out, "provenance_checks", provenance(b, a));
  jSetLit(out, "step_time", stepTime(b, a));
  jSetLit(out, "step_classes", stepClasses(b, a));
  jSetLit(out, "time_breakdown_share_delta", shareDelta(b, a));
  jSetLit(out, "semantic_family_delta", familyDelta(b, a));
  if( opDeltas(out, b, a, topK) || jOom(out) ){
    jFree(out);
    return 0;
  }
  return out;
}

/* ================================================================== */
/* Tracking (tools-spec §4.1, §4.2)                                    */
/* ================================================================== */

/* See compare.h. */
void profsumThresholdsInit(ProfsumThresholds *pT){
  pT->medianPct = 5.0;
  pT->p90Pct = 10.0;
  pT->commAbs = 0.05;
  pT->stallAbs = 0.05;
}

/* See compare.h. */
int profsumThresholdsApply(const JNode *pObj, const char *zWhat, const char *zAlsoKnown,
                           ProfsumThresholds *pT, char **pzErr){
  static const char *azKey[] = {"max_step_median_regression_pct", "max_step_p90_regression_pct",
                                "max_communication_share_regression_abs", "max_stall_share_regression_abs"};
  ProfsumThresholds t = *pT;
  double *apVal[4];
  int i, k;
  apVal[0] = &t.medianPct; apVal[1] = &t.p90Pct; apVal[2] = &t.commAbs; apVal[3] = &t.stallAbs;
  if( pObj==0 || pObj->type!=JT_OBJECT ){
    *pzErr = sqlite3_mprintf("%s must be a JSON object", zWhat);
    return SQLITE_ERROR;
  }
  for(i=0; i<pObj->nChild; i++){
    const JNode *v = pObj->a[i];
    for(k=0; k<4; k++) if( strcmp(v->zKey, azKey[k])==0 ) break;
    if( k==4 ){
      *pzErr = sqlite3_mprintf("%s: unknown key '%s' (known: max_step_median_regression_pct, "
          "max_step_p90_regression_pct, max_communication_share_regression_abs, "
          "max_stall_share_regression_abs%s%s)", zWhat, v->zKey,
          zAlsoKnown ? ", " : "", zAlsoKnown ? zAlsoKnown : "");
      return SQLITE_ERROR;
    }
    /* any float, as Python's RegressionThresholds takes it: also
    ** Infinity/-Infinity/NaN (the CLI's inf, as argparse type=float) */
    if( v->type!=JT_INT && v->type!=JT_REAL ){
      *pzErr = sqlite3_mprintf("%s: %s must be a number (Infinity and NaN included)", zWhat, azKey[k]);
      return SQLITE_ERROR;
    }
    *apVal[k] = jNum(v);
  }
  *pT = t;
  return SQLITE_OK;
}

/* When the metric v is above limit, push the message zFmt % (v, limit)
** (Python %-format, two floats: Python-exact through profsumPyFormat) to
** the list pList. */
static void overThreshold(JNode *pList, Num v, double limit, const char *zFmt){
  char *z;
  if( v.t==NUM_NULL || !(v.r>limit) ) return;
  z = profsumPyFormat(zFmt, v.r, limit);
  jPush(pList, z ? jStr(z, -1) : 0);
  sqlite3_free(z);
}

/* See compare.h. */
JNode *profsumAssess(const JNode *b, const JNode *a, const ProfsumThresholds *pT, int topK){
  JNode *cmp = profsumCompareDocs(b, a, topK);
  JNode *out, *fail, *warn, *met;
  const JNode *st, *td;
  Num mb, ma, pb, pa, mp, pp, comm, stall;
  const char *zStatus;
  if( cmp==0 ) return 0;
  st = jGet(cmp, "step_time");
  td = jGet(cmp, "time_breakdown_share_delta");
  mb = numAsFloat(jGet(st, "steady_state_median_before"));
  ma = numAsFloat(jGet(st, "steady_state_median_after"));
  pb = numAsFloat(jGet(st, "steady_state_p90_before"));
  pa = numAsFloat(jGet(st, "steady_state_p90_after"));
  mp = pctDelta(mb, ma);
  pp = pctDelta(pb, pa);
  comm = numAsFloat(jGet(td, "communication"));
  stall = numAsFloat(jGet(td, "stall"));
  out = jObj();
  fail = jArr();
  warn = jArr();
  met = jObj();
  overThreshold(fail, mp, pT->medianPct,
                "Steady-state median step time regressed by %.2f%% (threshold %.2f%%).");
  overThreshold(fail, pp, pT->p90Pct,
                "Steady-state p90 step time regressed by %.2f%% (threshold %.2f%%).");
  overThreshold(warn, comm, pT->commAbs, "Communication share increased by %.4f (threshold %.4f).");
  overThreshold(warn, stall, pT->stallAbs, "Stall share increased by %.4f (threshold %.4f).");
  zStatus = (fail && fail->nChild) ? "fail" : (warn && warn->nChild) ? "warn" : "pass";
  jSetLit(met, "steady_state_median_regression_pct", numNode(mp));
  jSetLit(met, "steady_state_p90_regression_pct", numNode(pp));
  jSetLit(met, "communication_share_delta", numNode(comm));
  jSetLit(met, "stall_share_delta", numNode(stall));
  jSetLit(out, "status", jStr(zStatus, -1));
  jSetLit(out, "failures", fail);
  jSetLit(out, "warnings", warn);
  jSetLit(out, "metrics", met);
  jSetLit(out, "comparison", cmp);
  if( out==0 || jOom(out) ){ jFree(out); return 0; }
  return out;
}

/* The {source_path, run_path, run_id, artifact_ref} of one side. */
static JNode *recordSide(const JNode *doc){
  const JNode *rm = jGet(doc, "run_metadata");
  JNode *o = jObj();
  jSetLit(o, "source_path", cloneMember(doc, "source_path"));
  jSetLit(o, "run_path", cloneMember(rm, "run_path"));
  jSetLit(o, "run_id", cloneMember(rm, "run_id"));
  jSetLit(o, "artifact_ref", cloneMember(rm, "artifact_ref"));
  return o;
}

/* See compare.h. */
JNode *profsumMakeRecord(const JNode *b, const JNode *a, JNode *pAssessment,
                         const char *zLabel, const char *zRecordedAt){
  JNode *o = jObj();
  if( o==0 || pAssessment==0 ){ jFree(o); jFree(pAssessment); return 0; }
  jSetLit(o, "recorded_at_utc", jStr(zRecordedAt, -1));
  jSetLit(o, "label", zLabel ? jStr(zLabel, -1) : jNull());
  jSetLit(o, "before", recordSide(b));
  jSetLit(o, "after", recordSide(a));
  jSetLit(o, "assessment", pAssessment);
  if( jOom(o) ){ jFree(o); return 0; }
  return o;
}

/* ================================================================== */
/* Database glue                                                       */
/* ================================================================== */
#define SCHEMA "main"

/* Message for a failed SQLite call: the connection's error text. */
static char *dbErr(sqlite3 *db){ return sqlite3_mprintf("%s", sqlite3_errmsg(db)); }

/* The code to return for a failed statement: the extended code for busy
** errors (busy.c retries them; then no message), else rc with *pzErr set
** from the connection. */
static int stmtFail(sqlite3 *db, int rc, char **pzErr){
  int x = sqlite3_extended_errcode(db);
  if( (x & 0xff)==SQLITE_BUSY ) return x;
  if( rc==SQLITE_NOMEM ) return rc;
  if( *pzErr==0 ) *pzErr = dbErr(db);
  return rc==SQLITE_OK || rc==SQLITE_ROW || rc==SQLITE_DONE ? SQLITE_ERROR : rc;
}

/*
** SQLITE_OK when the write transaction profsumWriteRun opened for the body
** is still open.  SQLite may end it under the body: a statement that runs
** out of memory (or meets an I/O error) rolls the whole transaction back,
** also one whose failure its caller absorbed (profsumCreateSchema takes a
** failed check for "not current").  Each write after that would commit on
** its own, and the COMMIT at the end would fail: check before writing.
** Otherwise SQLITE_ABORT with *pzErr saying so.
*/
static int writeStillOpen(sqlite3 *db, char **pzErr){
  if( !sqlite3_get_autocommit(db) ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("SQLite rolled the write transaction back (after an error inside "
                           "it, such as running out of memory); nothing was written");
  return *pzErr ? SQLITE_ABORT : SQLITE_NOMEM;
}

/* Prepare the INSERT of a record into zSchema.profsum_history_record
** (historyInsertRun binds and runs it).  The schema must exist
** (profsumCreateSchema, once per write).  Returns an SQLite code (busy
** codes without a message, see stmtFail). */
static int historyInsertPrepare(sqlite3 *db, const char *zSchema, sqlite3_stmt **pp, char **pzErr){
  char *z = sqlite3_mprintf("INSERT INTO \"%w\".profsum_history_record(created_at, label, status, "
      "before_trace_id, after_trace_id, series, origin, record_json) "
      "VALUES(?1, ?2, ?3, ?4, ?5, (SELECT series FROM \"%w\".profsum_trace WHERE trace_id=?5), ?6, ?7)",
      zSchema, zSchema);
  int rc;
  *pp = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  return rc ? stmtFail(db, rc, pzErr) : SQLITE_OK;
}

/* Bind a string node (its whole length) to parameter i; a string that
** breaks the text rule (section above) is an error here, the last door:
** the writers check their input before. */
static int bindStr(sqlite3_stmt *p, int i, const JNode *pStr, const char *zWhat, char **pzErr){
  if( pStr==0 || pStr->type!=JT_STRING ) return SQLITE_OK;
  if( textArgFault(zWhat, pStr->z, pStr->n, pzErr) ) return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  return sqlite3_bind_text(p, i, pStr->z, pStr->n, SQLITE_STATIC);
}

/*
** Insert one record with the statement of historyInsertPrepare (reset
** afterwards).  pRecord is the §4.2 record tree; the label and status
** columns come from it.  idB/idA: trace ids (0 → NULL); the series is the
** after trace's.  Returns an SQLite code (busy codes without a message,
** see stmtFail); *piRow the new record_id.
*/
static int historyInsertRun(sqlite3 *db, sqlite3_stmt *p, const JNode *pRecord,
                            const char *zCreated, sqlite3_int64 idB, sqlite3_int64 idA,
                            const char *zOrigin, sqlite3_int64 *piRow, char **pzErr){
  const JNode *as = jGet(pRecord, "assessment");
  char *zJson = profsumJsonCompact(pRecord);
  int rc;
  if( zJson==0 ) return SQLITE_NOMEM;
  rc = sqlite3_bind_text(p, 7, zJson, -1, sqlite3_free);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(p, 1, zCreated, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = bindStr(p, 2, jGet(pRecord, "label"), "the record's label", pzErr);
  if( rc==SQLITE_OK && as && as->type==JT_OBJECT ){
    rc = bindStr(p, 3, jGet(as, "status"), "the record's status", pzErr);
  }
  if( rc==SQLITE_OK && idB>0 ) rc = sqlite3_bind_int64(p, 4, idB);
  if( rc==SQLITE_OK && idA>0 ) rc = sqlite3_bind_int64(p, 5, idA);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(p, 6, zOrigin, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(p);
    if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
      if( piRow ) *piRow = sqlite3_last_insert_rowid(db);
    }else{
      rc = stmtFail(db, rc, pzErr);
    }
  }else if( rc!=SQLITE_ERROR || *pzErr==0 ){
    rc = stmtFail(db, rc, pzErr);
  }
  sqlite3_reset(p);
  sqlite3_clear_bindings(p);
  return rc;
}

/* Insert one record (historyInsertPrepare + historyInsertRun). */
static int insertRecord(sqlite3 *db, const char *zSchema, const JNode *pRecord,
                        const char *zCreated, sqlite3_int64 idB, sqlite3_int64 idA,
                        const char *zOrigin, sqlite3_int64 *piRow, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc = historyInsertPrepare(db, zSchema, &p, pzErr);
  if( rc==SQLITE_OK ) rc = historyInsertRun(db, p, pRecord, zCreated, idB, idA, zOrigin, piRow, pzErr);
  sqlite3_finalize(p);
  return rc;
}

/* True when the last call on db failed because the database was busy
** (locked by another connection, or a stale WAL snapshot). */
static int busyNow(sqlite3 *db){
  return (sqlite3_extended_errcode(db) & 0xff)==SQLITE_BUSY;
}

/* Message of a read that failed because the database was busy. */
static char *busyMsg(void){
  return sqlite3_mprintf("the database is busy (another connection is writing it); "
                         "set a busy timeout (sqlite3_busy_timeout, .timeout) or retry");
}

/*
** Resolve the before/after arguments; the same trace on both sides is an
** error.  Messages name the argument ("before: no trace with label 'x'").
** A lookup that failed because the database was busy returns SQLITE_BUSY
** (with a message saying so, not "no trace"): the write functions retry
** then (busy.c), the readers report it.
*/
static int resolvePair(sqlite3 *db, const char *zSchema, sqlite3_value *vB, sqlite3_value *vA,
                       sqlite3_int64 *pB, sqlite3_int64 *pA, char **pzErr){
  char *zE = 0;
  int rc = profsumResolveTrace(db, zSchema, vB, pB, &zE);
  if( rc==SQLITE_OK ){
    rc = profsumResolveTrace(db, zSchema, vA, pA, &zE);
    if( rc && zE && !busyNow(db) ){ *pzErr = sqlite3_mprintf("after: %s", zE); }
  }else if( zE && !busyNow(db) ){
    *pzErr = sqlite3_mprintf("before: %s", zE);
  }
  sqlite3_free(zE);
  if( rc && busyNow(db) ){
    *pzErr = busyMsg();
    return SQLITE_BUSY;
  }
  if( rc ) return rc;
  if( *pB==*pA ){
    *pzErr = sqlite3_mprintf("before and after are the same trace (id %lld)", (long long)*pB);
    return SQLITE_ERROR;
  }
  return SQLITE_OK;
}

/* Build the document of trace id with its stored knobs; zSide names it in
** messages. */
static int buildDoc(sqlite3 *db, const char *zSchema, sqlite3_int64 id, const char *zSide,
                    ProfsumDoc **ppDoc, char **pzErr){
  ProfsumKnobs k;
  char *zE = 0;
  int rc = profsumTraceKnobs(db, zSchema, id, &k, &zE);
  if( rc==SQLITE_OK ) rc = profsumDocBuild(db, zSchema, id, &k, ppDoc, &zE);
  if( rc && busyNow(db) ){
    sqlite3_free(zE);
    *pzErr = busyMsg();
    return SQLITE_BUSY;
  }
  if( rc && zE ) *pzErr = sqlite3_mprintf("%s: %s", zSide, zE);
  sqlite3_free(zE);
  return rc;
}

/* The documents of a resolved pair.  On error both are 0. */
static int buildPair(sqlite3 *db, const char *zSchema, sqlite3_int64 idB, sqlite3_int64 idA,
                     ProfsumDoc **ppB, ProfsumDoc **ppA, char **pzErr){
  int rc = buildDoc(db, zSchema, idB, "before", ppB, pzErr);
  if( rc==SQLITE_OK ) rc = buildDoc(db, zSchema, idA, "after", ppA, pzErr);
  if( rc ){
    profsumDocFree(*ppB); *ppB = 0;
    profsumDocFree(*ppA); *ppA = 0;
  }
  return rc;
}

/* Report an error: "zFunc: message" (SQLITE_NOMEM without a message →
** result_error_nomem). */
static void reportErr(sqlite3_context *ctx, const char *zFunc, int rc, const char *zErr){
  if( rc==SQLITE_NOMEM && zErr==0 ){ sqlite3_result_error_nomem(ctx); return; }
  profsumCtxErr(ctx, "%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
  if( rc!=SQLITE_ERROR && rc!=SQLITE_OK ) sqlite3_result_error_code(ctx, rc);
}

/* A top_k argument: NULL → default, else a non-negative integer (capped at
** 1,000,000).  Returns 0 on success, 1 after reporting the error. */
static int topKArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v, int *pTopK){
  sqlite3_int64 k;
  *pTopK = PROFSUM_COMPARE_TOP_K;
  if( v==0 || sqlite3_value_type(v)==SQLITE_NULL ) return 0;
  if( sqlite3_value_numeric_type(v)!=SQLITE_INTEGER || sqlite3_value_int64(v)<0 ){
    profsumCtxErr(ctx, "%s: top_k must be a non-negative integer", zFunc);
    return 1;
  }
  k = sqlite3_value_int64(v);
  *pTopK = k>1000000 ? 1000000 : (int)k;
  return 0;
}

/* ------------------------------------------------------------------ */
/* profsum_compare_json(before, after [, top_k])                       */
/* ------------------------------------------------------------------ */

/* profsum_compare_json(before, after [, top_k [, options_json]]): the §3
** comparison (indent 2) of the two traces' documents, each built with its
** own stored knobs.  Reads tables only: of main, or of the attached database
** options_json names ({"schema": "h"}). */
static void compareJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_compare_json";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 idB = 0, idA = 0;
  ProfsumDoc *pB = 0, *pA = 0;
  JNode *cmp;
  char *zErr = 0, *z, *zSchema = 0;
  int topK, rc;
  if( topKArg(ctx, FN, argc>2 ? argv[2] : 0, &topK) ) return;
  rc = argc>3 && sqlite3_value_type(argv[3])!=SQLITE_NULL
       ? profsumSchemaOption(db, (const char*)sqlite3_value_text(argv[3]), 0, 0, &zSchema, &zErr)
       : SQLITE_OK;
  if( rc==SQLITE_OK ) rc = resolvePair(db, zSchema ? zSchema : SCHEMA, argv[0], argv[1], &idB, &idA, &zErr);
  if( rc==SQLITE_OK ) rc = buildPair(db, zSchema ? zSchema : SCHEMA, idB, idA, &pB, &pA, &zErr);
  sqlite3_free(zSchema);
  if( rc ){ reportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); return; }
  cmp = profsumCompareDocs(profsumDocRoot(pB), profsumDocRoot(pA), topK);
  z = cmp ? jDump(cmp) : 0;
  jFree(cmp);
  profsumDocFree(pB);
  profsumDocFree(pA);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* ------------------------------------------------------------------ */
/* profsum_track(before, after, label [, thresholds_json])             */
/* ------------------------------------------------------------------ */

/* State of one track call (the body may run several times). */
typedef struct TrackJob {
  sqlite3_value *vB, *vA;   /* the trace arguments */
  const char *zLabel;       /* record label or 0 (null) */
  ProfsumThresholds thr;    /* thresholds */
  int topK;                 /* comparison top_k */
  char *zPretty;            /* out: the record, indent 2 (sqlite3_malloc'd) */
} TrackJob;

/* Compute the record of a pair (resolving and building the documents).
** On success *ppRecord is a new tree and *pB, *pA the trace ids. */
static int computeRecord(sqlite3 *db, sqlite3_value *vB, sqlite3_value *vA,
                         const char *zLabel, const ProfsumThresholds *pT, int topK,
                         sqlite3_int64 *pB, sqlite3_int64 *pA, JNode **ppRecord,
                         ProfsumDoc **ppDocB, ProfsumDoc **ppDocA, char **pzErr){
  ProfsumDoc *dB = 0, *dA = 0;
  JNode *as, *rec;
  char zNow[40];
  int rc = resolvePair(db, SCHEMA, vB, vA, pB, pA, pzErr);
  if( rc==SQLITE_OK ) rc = buildPair(db, SCHEMA, *pB, *pA, &dB, &dA, pzErr);
  if( rc ) return rc;
  as = profsumAssess(profsumDocRoot(dB), profsumDocRoot(dA), pT, topK);
  profsumNowIso(zNow, sizeof(zNow));
  rec = profsumMakeRecord(profsumDocRoot(dB), profsumDocRoot(dA), as, zLabel, zNow);
  if( rec==0 ){
    profsumDocFree(dB); profsumDocFree(dA);
    return SQLITE_NOMEM;
  }
  *ppRecord = rec;
  if( ppDocB ) *ppDocB = dB; else profsumDocFree(dB);
  if( ppDocA ) *ppDocA = dA; else profsumDocFree(dA);
  return SQLITE_OK;
}

/* The write body of profsum_track: compute the record from the current
** snapshot (after the write lock is held) and append it. */
static int trackBody(sqlite3 *db, void *pArg, char **pzErr){
  TrackJob *j = (TrackJob*)pArg;
  sqlite3_int64 idB = 0, idA = 0;
  JNode *rec = 0;
  int rc;
  sqlite3_free(j->zPretty);
  j->zPretty = 0;
  rc = computeRecord(db, j->vB, j->vA, j->zLabel, &j->thr, j->topK, &idB, &idA, &rec, 0, 0, pzErr);
  if( rc ) return rc;
  rc = profsumCreateSchema(db, SCHEMA, pzErr);
  if( rc==SQLITE_OK ) rc = writeStillOpen(db, pzErr);
  if( rc==SQLITE_OK ) rc = insertRecord(db, SCHEMA, rec, memberStr(rec, "recorded_at_utc"), idB, idA, "track", 0, pzErr);
  if( rc==SQLITE_OK ){
    j->zPretty = jDump(rec);
    if( j->zPretty==0 ) rc = SQLITE_NOMEM;
  }
  jFree(rec);
  return rc;
}

/* Parse an optional thresholds_json argument into *pT and *pTopK: the four
** threshold keys, plus "top_k" (a non-negative integer, capped at
** 1,000,000; absent: *pTopK unchanged).  Returns 0, or 1 after reporting
** the error. */
static int thresholdsArg(sqlite3_context *ctx, const char *zFunc, sqlite3_value *v,
                         ProfsumThresholds *pT, int *pTopK){
  JNode *p, *pK;
  char *zE = 0, *zErr = 0;
  profsumThresholdsInit(pT);
  if( v==0 || sqlite3_value_type(v)==SQLITE_NULL ) return 0;
  if( sqlite3_value_type(v)!=SQLITE_TEXT ){
    profsumCtxErr(ctx, "%s: thresholds_json must be a JSON object (text)", zFunc);
    return 1;
  }
  p = jParse((const char*)sqlite3_value_text(v), sqlite3_value_bytes(v), &zE);
  if( p==0 ){
    if( zE ) profsumCtxErr(ctx, "%s: thresholds_json is not valid JSON: %s", zFunc, zE);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(zE);
    return 1;
  }
  pK = p->type==JT_OBJECT ? jGet(p, "top_k") : 0;
  if( pK ){
    /* top_k is not a threshold: read it, then apply the other keys */
    if( pK->type!=JT_INT || pK->i<0 ){
      profsumCtxErr(ctx, "%s: thresholds_json: top_k must be a non-negative integer", zFunc);
      jFree(p);
      return 1;
    }
    *pTopK = pK->i>1000000 ? 1000000 : (int)pK->i;
    jRemove(p, "top_k");
  }
  if( profsumThresholdsApply(p, "thresholds_json", "top_k", pT, &zErr) ){
    profsumCtxErr(ctx, "%s: %s", zFunc, zErr ? zErr : "out of memory");
    sqlite3_free(zErr);
    jFree(p);
    return 1;
  }
  jFree(p);
  return 0;
}

/*
** profsum_track(before, after, label [, thresholds_json]) → the record
** (indent 2).  thresholds_json may also hold "top_k" (absent: 10), that of
** assess_profile_regression(…, top_k): the record's comparison keeps the
** first top_k regressed_ops / improved_ops.  Arguments are checked before
** the database is touched; the
** record is then computed and appended under the write lock (busy.c).  On
** any error the history is unchanged.
*/
static void trackFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_track";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  TrackJob j;
  sqlite3_int64 idB, idA;
  char *zErr = 0;
  int rc;
  memset(&j, 0, sizeof(j));
  j.vB = argv[0];
  j.vA = argv[1];
  j.topK = PROFSUM_COMPARE_TOP_K;
  if( sqlite3_value_type(argv[2])==SQLITE_TEXT ){
    j.zLabel = (const char*)sqlite3_value_text(argv[2]);
    if( j.zLabel==0 ){ sqlite3_result_error_nomem(ctx); return; }
    if( textArgFault("label", j.zLabel, sqlite3_value_bytes(argv[2]), &zErr) ){
      /* the text rule (see above): refused before anything is written */
      reportErr(ctx, FN, zErr ? SQLITE_ERROR : SQLITE_NOMEM, zErr);
      sqlite3_free(zErr);
      return;
    }
  }else if( sqlite3_value_type(argv[2])!=SQLITE_NULL ){
    profsumCtxErr(ctx, "%s: label must be text or NULL", FN);
    return;
  }
  if( thresholdsArg(ctx, FN, argc>3 ? argv[3] : 0, &j.thr, &j.topK) ) return;
  /* Check the arguments before touching the database (no WAL switch, no
  ** lock for a call that fails anyway); the body resolves them again. */
  rc = resolvePair(db, SCHEMA, j.vB, j.vA, &idB, &idA, &zErr);
  if( rc==SQLITE_BUSY ){
    /* busy while checking: the body checks again under the write lock */
    sqlite3_free(zErr); zErr = 0;
    rc = SQLITE_OK;
  }
  if( rc==SQLITE_OK ) rc = profsumWriteRun(db, SCHEMA, trackBody, &j, &zErr);
  if( rc ){
    reportErr(ctx, FN, rc, zErr);
  }else{
    sqlite3_result_text(ctx, j.zPretty, -1, sqlite3_free);
    j.zPretty = 0;
  }
  sqlite3_free(zErr);
  sqlite3_free(j.zPretty);
}

/* ------------------------------------------------------------------ */
/* Files                                                               */
/* ------------------------------------------------------------------ */

/*
** The SQLite code of a failed profsumFileWrite*() step (fileio.h) for the
** file zPath in directory zDir, with *pzErr its message: "cannot write in
** directory 'zDir': <strerror>" when no complete temporary file could be
** written there (SQLITE_CANTOPEN when none could be created,
** PROFSUM_RC_FILEIO when writing it failed), "'zPath': <strerror>" when
** the rename failed (PROFSUM_RC_FILEIO); SQLITE_NOMEM for NOMEM.
*/
static int fileWriteErr(int step, int e, const char *zDir, const char *zPath, char **pzErr){
  if( step==PROFSUM_FILE_NOMEM ) return SQLITE_NOMEM;
  if( step==PROFSUM_FILE_RENAME ){
    *pzErr = sqlite3_mprintf("'%s': %s", zPath, strerror(e));
    return PROFSUM_RC_FILEIO;
  }
  *pzErr = sqlite3_mprintf("cannot write in directory '%s': %s", zDir, strerror(e));
  return step==PROFSUM_FILE_CREATE ? SQLITE_CANTOPEN : PROFSUM_RC_FILEIO;
}

/*
** Write zPath atomically (profsumFileWriteAtomic), its parent directories
** created as needed.  On error nothing is left behind (no temporary file,
** no new directory) and *pzErr names the path or its directory.
*/
static int writeFileAtomic(const char *zPath, const char *z, size_t n, char **pzErr){
  char *zDir;
  ProfsumMadeDirs m;
  int rc, e = 0;
  memset(&m, 0, sizeof(m));
  if( zPath[0]==0 || zPath[strlen(zPath)-1]=='/' ){
    *pzErr = sqlite3_mprintf("'%s': not a file name", zPath);
    return SQLITE_CANTOPEN;
  }
  zDir = profsumPathDir(zPath);
  if( zDir==0 ) return SQLITE_NOMEM;
  rc = profsumMkdirs(zDir, &m, pzErr);
  if( rc==SQLITE_OK ){
    int step = profsumFileWriteAtomic(zPath, z, n, &e);
    if( step ) rc = fileWriteErr(step, e, zDir, zPath, pzErr);
  }
  if( rc ) profsumMadeDirsUndo(&m); else profsumMadeDirsKeep(&m);
  sqlite3_free(zDir);
  return rc;
}

/* The largest history file profsum_history_import reads. */
#define HISTORY_MAX_FILE ((sqlite3_int64)1<<30)

/* The longest line of a history file (without its newline): the most
** bytes jParse() accepts whatever they hold is 32 MiB; a record profsum
** writes stays far below 16 MiB unless top_k and hot_op_limit are both in
** the hundred thousands. */
#ifndef HISTORY_MAX_LINE
# define HISTORY_MAX_LINE ((size_t)16<<20)
#endif

/* Bytes read at a time, and the first size of the line buffer. */
#define HISTORY_CHUNK ((size_t)64<<10)

/* Lines of a file read through a bounded buffer (lineNext). */
typedef struct LineReader {
  int fd;                   /* the file (not owned) */
  char *a;                  /* buffer (sqlite3_malloc'd), at most
                            ** HISTORY_MAX_LINE + HISTORY_CHUNK bytes */
  size_t nAlloc;            /* its size */
  size_t iStart, iEnd;      /* the bytes read but not yet returned */
  size_t iScan;             /* a[iStart..iScan) holds no newline */
  sqlite3_int64 nRead;      /* bytes read from the file */
  int eof;                  /* the file is read to its end */
} LineReader;

/*
** The next line of r: *pz (in r's buffer, valid until the next call) and
** *pn, its length without the '\n' (the last line may have none).  Returns
** SQLITE_ROW for a line, SQLITE_DONE at the end of the file, SQLITE_TOOBIG
** for a line longer than HISTORY_MAX_LINE (*pzErr 0: the caller knows the
** line) or a file that grew past HISTORY_MAX_FILE (*pzErr says so),
** SQLITE_NOMEM, or PROFSUM_RC_FILEIO with *pzErr the read error.
*/
static int lineNext(LineReader *r, const char **pz, size_t *pn, char **pzErr){
  for(;;){
    char *q = r->iScan<r->iEnd ? memchr(r->a + r->iScan, '\n', r->iEnd - r->iScan) : 0;
    ssize_t got;
    if( q || (r->eof && r->iStart<r->iEnd) ){
      size_t iNext = q ? (size_t)(q - r->a) + 1 : r->iEnd;
      *pz = r->a + r->iStart;
      *pn = (q ? (size_t)(q - r->a) : r->iEnd) - r->iStart;
      r->iStart = r->iScan = iNext;
      return *pn>HISTORY_MAX_LINE ? SQLITE_TOOBIG : SQLITE_ROW;
    }
    if( r->eof ) return SQLITE_DONE;
    r->iScan = r->iEnd;
    if( r->iEnd - r->iStart > HISTORY_MAX_LINE ) return SQLITE_TOOBIG;
    /* Make room: move the start of the line to the front, else grow. */
    if( r->iStart>0 ){
      memmove(r->a, r->a + r->iStart, r->iEnd - r->iStart);
      r->iEnd -= r->iStart;
      r->iScan -= r->iStart;
      r->iStart = 0;
    }
    if( r->iEnd==r->nAlloc ){
      size_t nNew = r->nAlloc ? r->nAlloc*2 : HISTORY_CHUNK;
      char *aNew;
      if( nNew>HISTORY_MAX_LINE + HISTORY_CHUNK ) nNew = HISTORY_MAX_LINE + HISTORY_CHUNK;
      aNew = sqlite3_realloc64(r->a, nNew);
      if( aNew==0 ) return SQLITE_NOMEM;
      r->a = aNew;
      r->nAlloc = nNew;
    }
    do{
      got = read(r->fd, r->a + r->iEnd, r->nAlloc - r->iEnd);
    }while( got<0 && errno==EINTR );
    if( got<0 ){
      *pzErr = sqlite3_mprintf("read error: %s", strerror(errno));
      return *pzErr ? PROFSUM_RC_FILEIO : SQLITE_NOMEM;
    }
    if( got==0 ){ r->eof = 1; continue; }
    r->iEnd += (size_t)got;
    r->nRead += got;
    if( r->nRead>HISTORY_MAX_FILE ){
      *pzErr = sqlite3_mprintf("larger than 1 GiB");
      return *pzErr ? SQLITE_TOOBIG : SQLITE_NOMEM;
    }
  }
}

/* A path argument: non-empty TEXT.  Returns it, or 0 after reporting. */
static const char *pathArg(sqlite3_context *ctx, const char *zFunc, const char *zWhat, sqlite3_value *v){
  const char *z = sqlite3_value_type(v)==SQLITE_TEXT ? (const char*)sqlite3_value_text(v) : 0;
  if( z==0 || z[0]==0 ){
    profsumCtxErr(ctx, "%s: %s must be a non-empty path (text)", zFunc, zWhat);
    return 0;
  }
  return z;
}

/* ------------------------------------------------------------------ */
/* profsum_history_import(path) / profsum_history_export(path)          */
/* ------------------------------------------------------------------ */

/* One profsum_history_import call (the body may run several times). */
typedef struct ImportJob {
  const char *zPath;        /* the file, as given */
  int fd;                   /* open on it, read from its start by each attempt */
  sqlite3_int64 nRec;       /* out: the records appended */
} ImportJob;

/* Is c Python str.strip() whitespace (ASCII part)? */
static int isPyWs(char c){ return c==' ' || c=='\t' || c=='\n' || c=='\r' || c=='\v' || c=='\f'; }

/*
** One line (n bytes at z, without its newline) of a JSONL history, as
** load_regression_history() reads it: blank, nothing; a JSON object, a
** record, checked against the text rule (jsonTextRule) and appended with
** pIns (*pAdded 1); any other JSON value, skipped.  Errors: SQLITE_ERROR
** with *pzWhy (text that is not JSON, a string that breaks the rule), busy
** codes without a message, SQLITE_NOMEM (*pzWhy 0), another SQLite code.
*/
static int importLine(sqlite3 *db, sqlite3_stmt *pIns, const char *z, size_t n,
                      const char *zNow, int *pAdded, char **pzWhy){
  const char *b = z, *x = z + n;
  JNode *pRec;
  int rc;
  *pAdded = 0;
  while( b<x && isPyWs(*b) ) b++;
  while( x>b && isPyWs(x[-1]) ) x--;
  if( b==x ) return SQLITE_OK;
  pRec = jParse(b, (int)(x-b), pzWhy);
  if( pRec==0 ) return *pzWhy ? SQLITE_ERROR : SQLITE_NOMEM;
  if( pRec->type!=JT_OBJECT ){ jFree(pRec); return SQLITE_OK; }
  rc = jsonTextRule(b, (int)(x-b), pzWhy);
  if( rc==SQLITE_OK ){
    rc = historyInsertRun(db, pIns, pRec, zNow, 0, 0, "import", 0, pzWhy);
    *pAdded = rc==SQLITE_OK;
  }
  jFree(pRec);
  return rc;
}

/*
** Write body of profsum_history_import: read the file from its start, line
** by line through a bounded buffer (one line and its tree in memory at a
** time), appending every record (origin 'import', no trace ids).  Messages
** name the file and the line: "'h.jsonl': line 3: ...".
*/
static int importBody(sqlite3 *db, void *pArg, char **pzErr){
  ImportJob *j = (ImportJob*)pArg;
  LineReader r;
  sqlite3_stmt *pIns = 0;
  sqlite3_int64 iLine = 0;
  char zNow[40];
  int rc;
  memset(&r, 0, sizeof(r));
  r.fd = j->fd;
  j->nRec = 0;
  if( lseek(j->fd, 0, SEEK_SET)!=0 ){
    *pzErr = sqlite3_mprintf("'%s': cannot read from its start: %s", j->zPath, strerror(errno));
    return *pzErr ? PROFSUM_RC_FILEIO : SQLITE_NOMEM;
  }
  profsumNowIso(zNow, sizeof(zNow));
  rc = profsumCreateSchema(db, SCHEMA, pzErr);
  if( rc==SQLITE_OK ) rc = historyInsertPrepare(db, SCHEMA, &pIns, pzErr);
  while( rc==SQLITE_OK ){
    const char *z = 0;
    size_t n = 0;
    char *zWhy = 0;
    int added = 0;
    if( (rc = writeStillOpen(db, pzErr))!=SQLITE_OK ) break;
    rc = lineNext(&r, &z, &n, &zWhy);
    if( rc==SQLITE_DONE ){ rc = SQLITE_OK; break; }
    iLine++;
    if( rc==SQLITE_ROW ) rc = importLine(db, pIns, z, n, zNow, &added, &zWhy);
    else if( rc==SQLITE_TOOBIG && zWhy==0 ){
      zWhy = sqlite3_mprintf("longer than %d MiB (the longest line a history may have)",
                             (int)(HISTORY_MAX_LINE>>20));
      if( zWhy==0 ) rc = SQLITE_NOMEM;
    }
    j->nRec += added;
    if( rc && (rc & 0xff)!=SQLITE_BUSY ){
      /* every error names the file and the line, out of memory too */
      sqlite3_free(*pzErr);
      *pzErr = sqlite3_mprintf("'%s': line %lld: %s", j->zPath, (long long)iLine,
                               zWhy ? zWhy : rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errstr(rc));
    }
    sqlite3_free(zWhy);
  }
  sqlite3_finalize(pIns);
  sqlite3_free(r.a);
  if( rc && (rc & 0xff)!=SQLITE_BUSY && iLine==0 ){
    /* before the first line (the tables, the INSERT): name the file too */
    char *z = sqlite3_mprintf("'%s': %s", j->zPath, *pzErr ? *pzErr
                              : rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errstr(rc));
    sqlite3_free(*pzErr);
    *pzErr = z;
  }
  return rc;
}

/*
** profsum_history_import(path) → number of records read.  The file is
** opened and checked (a regular file of at most 1 GiB) before the database
** is touched, then read and appended in one write (busy.c): a line that is
** not JSON, a string that breaks the text rule or a line longer than
** HISTORY_MAX_LINE is an error naming the file and the line, and nothing
** is imported.
*/
static void historyImportFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_history_import";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zPath = pathArg(ctx, FN, "path", argv[0]);
  ImportJob j;
  struct stat st;
  char *zErr = 0;
  int rc = SQLITE_OK;
  (void)argc;
  if( zPath==0 ) return;
  memset(&j, 0, sizeof(j));
  j.zPath = zPath;
  j.fd = open(zPath, O_RDONLY|O_CLOEXEC|O_NONBLOCK);      /* a FIFO: refused below, not waited on */
  if( j.fd<0 ){
    zErr = sqlite3_mprintf("'%s': %s", zPath, strerror(errno));
    rc = SQLITE_CANTOPEN;
  }else if( fstat(j.fd, &st)!=0 || !S_ISREG(st.st_mode) ){
    zErr = sqlite3_mprintf("'%s': not a regular file", zPath);
    rc = SQLITE_CANTOPEN;
  }else if( st.st_size>HISTORY_MAX_FILE ){
    zErr = sqlite3_mprintf("'%s': larger than 1 GiB", zPath);
    rc = SQLITE_TOOBIG;
  }
  if( rc==SQLITE_OK ) rc = profsumWriteRun(db, SCHEMA, importBody, &j, &zErr);
  if( j.fd>=0 ) close(j.fd);
  if( rc ){
    /* Every message names the file: also one from outside the body (the
    ** transaction, out of memory there) */
    size_t nPath = strlen(zPath);
    if( zErr==0 || zErr[0]!='\'' || strncmp(zErr+1, zPath, nPath)!=0 || zErr[nPath+1]!='\'' ){
      char *z = sqlite3_mprintf("'%s': %s", zPath, zErr ? zErr
                                : rc==SQLITE_NOMEM ? "out of memory" : sqlite3_errstr(rc));
      sqlite3_free(zErr);
      zErr = z;
    }
  }
  if( rc ) reportErr(ctx, FN, rc, zErr);
  else sqlite3_result_int64(ctx, j.nRec);
  sqlite3_free(zErr);
}

/*
** profsum_history_export(path) → number of records written: every record in
** record_id order as its JSONL line, written atomically (writeFileAtomic).
** A database without the history table exports an empty file.
*/
static void historyExportFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_history_export";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zPath = pathArg(ctx, FN, "path", argv[0]);
  sqlite3_stmt *p = 0;
  sqlite3_str *s;
  char *zText = 0, *zErr = 0, *zSql;
  int rc = SQLITE_OK, nRec = 0, e, nText;
  (void)argc;
  if( zPath==0 ) return;
  s = sqlite3_str_new(db);
  e = profsumTableExists(db, SCHEMA, "profsum_history_record", &rc);
  if( e>0 ){
    zSql = sqlite3_mprintf("SELECT record_id, record_json FROM \"%w\".profsum_history_record "
                           "ORDER BY record_id", SCHEMA);
    if( zSql==0 ) rc = SQLITE_NOMEM;
    else{
      rc = sqlite3_prepare_v2(db, zSql, -1, &p, 0);
      sqlite3_free(zSql);
      if( rc ) zErr = dbErr(db);
    }
    while( rc==SQLITE_OK ){
      char *zE = 0, *zLine;
      JNode *r;
      if( (rc = sqlite3_step(p))!=SQLITE_ROW ) break;
      rc = SQLITE_OK;
      r = jParse((const char*)sqlite3_column_text(p, 1), sqlite3_column_bytes(p, 1), &zE);
      if( r==0 ){
        if( zE ){
          zErr = sqlite3_mprintf("record %lld: %s", (long long)sqlite3_column_int64(p, 0), zE);
          rc = SQLITE_ERROR;
        }else rc = SQLITE_NOMEM;
        sqlite3_free(zE);
        break;
      }
      zLine = profsumJsonCompact(r);
      jFree(r);
      if( zLine==0 ){ rc = SQLITE_NOMEM; break; }
      sqlite3_str_appendall(s, zLine);
      sqlite3_str_appendchar(s, 1, '\n');
      sqlite3_free(zLine);
      nRec++;
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
    else if( rc!=SQLITE_OK && zErr==0 && rc!=SQLITE_NOMEM ) zErr = dbErr(db);
    sqlite3_finalize(p);
  }else if( e<0 ){
    zErr = dbErr(db);
  }
  nText = sqlite3_str_length(s);
  if( sqlite3_str_errcode(s) && rc==SQLITE_OK ) rc = sqlite3_str_errcode(s);
  zText = sqlite3_str_finish(s);
  if( rc==SQLITE_OK ) rc = writeFileAtomic(zPath, zText ? zText : "", (size_t)nText, &zErr);
  if( rc ) reportErr(ctx, FN, rc, zErr);
  else sqlite3_result_int(ctx, nRec);
  sqlite3_free(zErr);
  sqlite3_free(zText);
}

/* ------------------------------------------------------------------ */
/* profsum_history_summary_json([tail])                                */
/* ------------------------------------------------------------------ */

/* A record's JSON as SQLite's JSON functions read it: record_json keeps the
** NaN, Infinity and -Infinity that Python's json.dumps writes (a reference
** line with a NaN metric, a regression from a subnormal median), which json_valid() and every
** other JSON function of SQLite reject (the record would drop out of the
** counts); here they become null and +/-9e999 (read as +/-Inf).  Only the
** bare words after ': ', '[' or ', ' (json.dumps' separators) are replaced.
** The same expression is in views/history.sql and views/history_summary.sql.
** An SQL expression over the column record_json. */
#define HISTORY_STD_JSON \
  "CASE WHEN json_valid(record_json) THEN record_json ELSE " \
  "replace(replace(replace(replace(replace(replace(replace(replace(replace(record_json, " \
  "': -Infinity', ': -9e999'), '[-Infinity', '[-9e999'), ', -Infinity', ', -9e999'), " \
  "': Infinity', ': 9e999'), '[Infinity', '[9e999'), ', Infinity', ', 9e999'), " \
  "': NaN', ': null'), '[NaN', '[null'), ', NaN', ', null') END"

/* top_failures / top_warnings: the 10 most common strings of the
** assessments' zList arrays, ties in first-seen order. */
static int topMessages(sqlite3 *db, const char *zList, JNode **ppOut){
  sqlite3_stmt *p = 0;
  JNode *arr = jArr();
  char *z = sqlite3_mprintf(
      "SELECT j.value, count(*) AS n, min(r.record_id*1000000 + j.key) AS first "
      "FROM (SELECT record_id, " HISTORY_STD_JSON " AS rj FROM \"%w\".profsum_history_record) AS r, "
      "  json_each(r.rj, '$.assessment.%s') AS j "
      "WHERE json_valid(r.rj) AND json_type(r.rj, '$.assessment') = 'object' "
      "  AND json_type(r.rj, '$.assessment.%s') = 'array' AND j.type = 'text' "
      "GROUP BY j.value ORDER BY n DESC, first LIMIT 10", SCHEMA, zList, zList);
  int rc;
  if( z==0 || arr==0 ){ sqlite3_free(z); jFree(arr); return SQLITE_NOMEM; }
  rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
  sqlite3_free(z);
  while( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
    JNode *o = jObj();
    const char *zM = profsumColText(p, 0, &rc);
    jSetLit(o, "message", jStr(zM, sqlite3_column_bytes(p, 0)));
    jSetLit(o, "count", jInt(sqlite3_column_int64(p, 1)));
    jPush(arr, o);
  }
  rc = profsumFinishRows(db, p, rc, 0);
  if( rc ){ jFree(arr); return rc; }
  *ppOut = arr;
  return SQLITE_OK;
}

/* Build the §4.3 summary of the history table with the last nTail
** records.  Returns SQLITE_OK with *ppOut, or an error (*pzErr). */
static int historySummary(sqlite3 *db, sqlite3_int64 nTail, JNode **ppOut, char **pzErr){
  JNode *o = jObj(), *counts = jObj(), *recent = jArr(), *latest = 0, *tf = 0, *tw = 0;
  sqlite3_stmt *p = 0;
  const char *zFile = sqlite3_db_filename(db, SCHEMA);
  sqlite3_int64 nRec = 0;
  char *z;
  int rc = SQLITE_OK, e, i;
  e = profsumTableExists(db, SCHEMA, "profsum_history_record", &rc);
  if( e<0 ){ *pzErr = dbErr(db); goto fail; }
  if( e>0 ){
    z = sqlite3_mprintf("SELECT count(*) FROM \"%w\".profsum_history_record", SCHEMA);
    if( z==0 ){ rc = SQLITE_NOMEM; goto fail; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    if( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ) nRec = sqlite3_column_int64(p, 0);
    rc = profsumFinishRows(db, p, rc, 0); p = 0;
    if( rc ){ if( rc!=SQLITE_NOMEM ) *pzErr = dbErr(db); goto fail; }
    /* status_counts: string statuses of records whose assessment is an object */
    z = sqlite3_mprintf("SELECT json_extract(rj, '$.assessment.status') AS s, count(*) "
        "FROM (SELECT " HISTORY_STD_JSON " AS rj FROM \"%w\".profsum_history_record) "
        "WHERE json_valid(rj) AND json_type(rj, '$.assessment') = 'object' "
        "AND json_type(rj, '$.assessment.status') = 'text' GROUP BY s", SCHEMA);
    if( z==0 ){ rc = SQLITE_NOMEM; goto fail; }
    rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
    sqlite3_free(z);
    while( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
      const char *zStatus = profsumColText(p, 0, &rc);              /* text (WHERE) */
      if( zStatus ) jSet(counts, zStatus, jInt(sqlite3_column_int64(p, 1)));
    }
    rc = profsumFinishRows(db, p, rc, 0); p = 0;
    if( rc ){ if( rc!=SQLITE_NOMEM ) *pzErr = dbErr(db); goto fail; }
    rc = topMessages(db, "failures", &tf);
    if( rc==SQLITE_OK ) rc = topMessages(db, "warnings", &tw);
    if( rc ){ if( rc!=SQLITE_NOMEM ) *pzErr = dbErr(db); goto fail; }
    /* the last max(tail, 1) records, oldest first */
    if( nRec>0 ){
      sqlite3_int64 nLast = nTail>1 ? nTail : 1;
      z = sqlite3_mprintf("SELECT record_id, record_json FROM (SELECT record_id, record_json FROM "
          "\"%w\".profsum_history_record ORDER BY record_id DESC LIMIT %lld) ORDER BY record_id",
          SCHEMA, (long long)nLast);
      if( z==0 ){ rc = SQLITE_NOMEM; goto fail; }
      rc = sqlite3_prepare_v2(db, z, -1, &p, 0);
      sqlite3_free(z);
      while( rc==SQLITE_OK ){
        char *zE = 0;
        JNode *r;
        const char *zRec;
        if( (rc = sqlite3_step(p))!=SQLITE_ROW ) break;
        rc = SQLITE_OK;
        zRec = profsumColText(p, 1, &rc);
        if( rc ) break;
        r = jParse(zRec, sqlite3_column_bytes(p, 1), &zE);
        if( r==0 ){
          if( zE ){
            *pzErr = sqlite3_mprintf("record %lld: %s", (long long)sqlite3_column_int64(p, 0), zE);
            rc = SQLITE_ERROR;
          }else rc = SQLITE_NOMEM;
          sqlite3_free(zE);
          break;
        }
        jPush(recent, r);
      }
      if( rc==SQLITE_DONE ) rc = SQLITE_OK;
      else if( rc!=SQLITE_OK && *pzErr==0 && rc!=SQLITE_NOMEM ) *pzErr = dbErr(db);
      sqlite3_finalize(p); p = 0;
      if( rc ) goto fail;
      if( recent && recent->nChild>0 ) latest = jClone(recent->a[recent->nChild-1]);
      if( nTail<=0 && recent ){
        for(i=0; i<recent->nChild; i++) jFree(recent->a[i]);
        recent->nChild = 0;
      }
    }
  }
  jSetLit(o, "history_path", jStr(zFile && zFile[0] ? zFile : ":memory:", -1));
  jSetLit(o, "num_records", jInt(nRec));
  jSetLit(o, "status_counts", counts);
  jSetLit(o, "top_failures", tf ? tf : jArr());
  jSetLit(o, "top_warnings", tw ? tw : jArr());
  jSetLit(o, "latest_record", latest ? latest : jNull());
  jSetLit(o, "recent_records", recent);
  if( o==0 || jOom(o) ){ jFree(o); return SQLITE_NOMEM; }
  *ppOut = o;
  return SQLITE_OK;
fail:
  jFree(o); jFree(counts); jFree(recent); jFree(latest); jFree(tf); jFree(tw);
  return rc ? rc : SQLITE_ERROR;
}

/* profsum_history_summary_json([tail]) → the §4.3 document (indent 2);
** tail defaults to 20, ≤ 0 gives no recent records. */
static void historySummaryFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_history_summary_json";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_int64 nTail = 20;
  JNode *o = 0;
  char *zErr = 0, *z;
  int rc;
  if( argc>0 && sqlite3_value_type(argv[0])!=SQLITE_NULL ){
    if( sqlite3_value_numeric_type(argv[0])!=SQLITE_INTEGER ){
      profsumCtxErr(ctx, "%s: tail must be an integer", FN);
      return;
    }
    nTail = sqlite3_value_int64(argv[0]);
    if( nTail>1000000 ) nTail = 1000000;
  }
  rc = historySummary(db, nTail, &o, &zErr);
  if( rc ){ reportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); return; }
  z = jDump(o);
  jFree(o);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* ------------------------------------------------------------------ */
/* profsum_bundle(before, after, dir [, options_json])                 */
/* ------------------------------------------------------------------ */

#define BUNDLE_N 6
/* The six files of tools-spec §6, in writing order, and their manifest keys. */
static const char *azBundleName[BUNDLE_N] = {
  "before.summary.json", "after.summary.json", "compare.json", "track.json",
  "before.report.md", "after.report.md"};
static const char *azBundleKey[BUNDLE_N] = {
  "before_summary_path", "after_summary_path", "comparison_path", "tracking_path",
  "before_report_path", "after_report_path"};

/* State of one bundle call. */
typedef struct BundleJob {
  sqlite3_value *vB, *vA;   /* the trace arguments */
  const char *zDir;         /* the directory as given */
  char *zLabel;             /* options.label or 0 */
  ProfsumThresholds thr;    /* options.thresholds */
  int topK;                 /* options.top_k */
  int history;              /* options.history: append the record */
  int strict;               /* options.strict_provenance */
  char *azText[BUNDLE_N];   /* file contents (sqlite3_malloc'd) */
  char *azTmp[BUNDLE_N];    /* temporary files written, to rename or remove */
  char zStatus[16];         /* assessment status */
  ProfsumMadeDirs made;     /* directories created */
} BundleJob;

/* Remove the temporary files and free the contents of the last attempt. */
static void bundleReset(BundleJob *j){
  int i;
  for(i=0; i<BUNDLE_N; i++){
    if( j->azTmp[i] ){ unlink(j->azTmp[i]); sqlite3_free(j->azTmp[i]); j->azTmp[i] = 0; }
    sqlite3_free(j->azText[i]); j->azText[i] = 0;
  }
}

/* Text + "\n" (sqlite3_malloc'd; frees z).  0 on OOM. */
static char *withNewline(char *z){
  char *r = z ? sqlite3_mprintf("%s\n", z) : 0;
  sqlite3_free(z);
  return r;
}

/* The final path of file i: zDir + "/" + name.  sqlite3_malloc'd. */
static char *bundlePath(const char *zDir, int i){
  size_t n = strlen(zDir);
  if( n>0 && zDir[n-1]=='/' ) return sqlite3_mprintf("%s%s", zDir, azBundleName[i]);
  return sqlite3_mprintf("%s/%s", zDir, azBundleName[i]);
}

/*
** The markdown report of trace id with top_k rows, exactly as
** profsum_report_md(id, topK) returns it (the §5 report plus profsum's KPI
** section), by calling that function: one definition of the report.
*/
static int reportText(sqlite3 *db, sqlite3_int64 id, int topK, char **pz, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT profsum_report_md(?1, ?2)", -1, &p, 0);
  if( rc ) return stmtFail(db, rc, pzErr);
  sqlite3_bind_int64(p, 1, id);
  sqlite3_bind_int(p, 2, topK);
  rc = sqlite3_step(p);
  if( rc==SQLITE_ROW ){
    *pz = sqlite3_mprintf("%s", sqlite3_column_text(p, 0));
    rc = *pz ? SQLITE_OK : SQLITE_NOMEM;
  }else{
    rc = stmtFail(db, rc, pzErr);
  }
  sqlite3_finalize(p);
  return rc;
}

/*
** Compute the six texts (and the record, returned in *ppRecord) from the
** current snapshot, then write them to temporary files in the directory
** (created as needed).  With strict_provenance, a failed provenance check
** is an error before anything is written.
*/
static int bundlePrepare(sqlite3 *db, BundleJob *j, JNode **ppRecord,
                         sqlite3_int64 *pB, sqlite3_int64 *pA, char **pzErr){
  ProfsumDoc *dB = 0, *dA = 0;
  JNode *rec = 0;
  const JNode *cmp, *pc, *as;
  int rc, i;
  bundleReset(j);
  rc = computeRecord(db, j->vB, j->vA, j->zLabel, &j->thr, j->topK, pB, pA, &rec, &dB, &dA, pzErr);
  if( rc ) return rc;
  as = jGet(rec, "assessment");
  cmp = jGet(as, "comparison");
  pc = jGet(cmp, "provenance_checks");
  if( j->strict && memberStr(pc, "status") && strcmp(memberStr(pc, "status"), "fail")==0 ){
    const JNode *m = jGet(pc, "messages");
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_str_appendall(s, "provenance checks failed.");
    for(i=0; m && m->type==JT_ARRAY && i<m->nChild; i++){
      if( m->a[i]->type==JT_STRING ) sqlite3_str_appendf(s, " %s", m->a[i]->z);
    }
    *pzErr = sqlite3_str_finish(s);
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    goto done;
  }
  sqlite3_snprintf(sizeof(j->zStatus), j->zStatus, "%s",
                   memberStr(as, "status") ? memberStr(as, "status") : "unknown");
  j->azText[0] = withNewline(profsumDocJson(dB));
  j->azText[1] = withNewline(profsumDocJson(dA));
  j->azText[2] = withNewline(jDump(cmp));
  j->azText[3] = withNewline(jDump(rec));
  for(i=0; i<4; i++) if( j->azText[i]==0 ){ rc = SQLITE_NOMEM; goto done; }
  rc = reportText(db, *pB, j->topK, &j->azText[4], pzErr);
  if( rc==SQLITE_OK ) rc = reportText(db, *pA, j->topK, &j->azText[5], pzErr);
  if( rc ) goto done;
  rc = profsumMkdirs(j->zDir, &j->made, pzErr);
  for(i=0; rc==SQLITE_OK && i<BUNDLE_N; i++){
    int e = 0, step;
    char *zPath = bundlePath(j->zDir, i);
    if( zPath==0 ){ rc = SQLITE_NOMEM; break; }
    step = profsumFileWriteTemp(zPath, j->azText[i], strlen(j->azText[i]), &j->azTmp[i], &e);
    if( step ) rc = fileWriteErr(step, e, j->zDir, zPath, pzErr);
    sqlite3_free(zPath);
  }
  /* A target name taken by a directory would make a rename fail half-way:
  ** refuse before anything is renamed (or any record committed). */
  for(i=0; rc==SQLITE_OK && i<BUNDLE_N; i++){
    struct stat st;
    char *zPath = bundlePath(j->zDir, i);
    if( zPath==0 ){ rc = SQLITE_NOMEM; break; }
    if( lstat(zPath, &st)==0 && S_ISDIR(st.st_mode) ){
      *pzErr = sqlite3_mprintf("'%s' is a directory", zPath);
      rc = SQLITE_CANTOPEN;
    }
    sqlite3_free(zPath);
  }
done:
  profsumDocFree(dB);
  profsumDocFree(dA);
  if( rc ){ jFree(rec); return rc; }
  *ppRecord = rec;
  return SQLITE_OK;
}

/* Write body (history: true): prepare the files, append the record. */
static int bundleBody(sqlite3 *db, void *pArg, char **pzErr){
  BundleJob *j = (BundleJob*)pArg;
  JNode *rec = 0;
  sqlite3_int64 idB = 0, idA = 0;
  int rc = bundlePrepare(db, j, &rec, &idB, &idA, pzErr);
  if( rc==SQLITE_OK ){
    rc = profsumCreateSchema(db, SCHEMA, pzErr);
    if( rc==SQLITE_OK ) rc = writeStillOpen(db, pzErr);
    if( rc==SQLITE_OK ) rc = insertRecord(db, SCHEMA, rec, memberStr(rec, "recorded_at_utc"), idB, idA, "bundle", 0, pzErr);
  }
  jFree(rec);
  return rc;
}

/* Rename the six temporary files to their names.  First checks that no
** target is a directory (so that a rename cannot fail half-way for that
** reason). */
static int bundleRename(BundleJob *j, char **pzErr){
  char *az[BUNDLE_N];
  int i, rc = SQLITE_OK;
  memset(az, 0, sizeof(az));
  for(i=0; i<BUNDLE_N && rc==SQLITE_OK; i++){
    struct stat st;
    az[i] = bundlePath(j->zDir, i);
    if( az[i]==0 ){ rc = SQLITE_NOMEM; break; }
    if( lstat(az[i], &st)==0 && S_ISDIR(st.st_mode) ){
      *pzErr = sqlite3_mprintf("'%s' is a directory", az[i]);
      rc = SQLITE_CANTOPEN;
    }
  }
  for(i=0; i<BUNDLE_N && rc==SQLITE_OK; i++){
    if( rename(j->azTmp[i], az[i])!=0 ){
      *pzErr = sqlite3_mprintf("'%s': %s", az[i], strerror(errno));
      rc = PROFSUM_RC_FILEIO;
      break;
    }
    sqlite3_free(j->azTmp[i]);
    j->azTmp[i] = 0;
  }
  for(i=0; i<BUNDLE_N; i++) sqlite3_free(az[i]);
  return rc;
}

/* The manifest of §6 as a new tree. */
static JNode *bundleManifest(const BundleJob *j){
  JNode *o = jObj();
  char *zNorm = profsumPyPathStr(j->zDir);
  int i;
  if( zNorm==0 ){ jFree(o); return 0; }
  jSetLit(o, "output_dir", jStr(zNorm, -1));
  for(i=0; i<BUNDLE_N; i++){
    char *zP;
    if( strcmp(zNorm, ".")==0 ) zP = sqlite3_mprintf("%s", azBundleName[i]);
    else if( zNorm[strlen(zNorm)-1]=='/' ) zP = sqlite3_mprintf("%s%s", zNorm, azBundleName[i]);
    else zP = sqlite3_mprintf("%s/%s", zNorm, azBundleName[i]);
    jSet(o, azBundleKey[i], zP ? jStr(zP, -1) : 0);
    sqlite3_free(zP);
  }
  jSetLit(o, "status", jStr(j->zStatus, -1));
  sqlite3_free(zNorm);
  if( o==0 || jOom(o) ){ jFree(o); return 0; }
  return o;
}

/* Parse options_json of profsum_bundle into *j.  Unknown keys and wrong
** types are errors (*pzErr). */
static int bundleOptions(const char *zJson, int nJson, BundleJob *j, char **pzErr){
  JNode *p;
  int i, rc = SQLITE_OK;
  if( zJson==0 ) return SQLITE_OK;
  p = jParseOptions(zJson, nJson, &rc, pzErr);
  if( p==0 ) return rc;
  /* the label enters the history: every string must keep the text rule */
  rc = jsonTextRule(zJson, nJson, pzErr);
  if( rc==SQLITE_ERROR ){
    char *z = sqlite3_mprintf("options_json: %s", *pzErr);
    sqlite3_free(*pzErr);
    *pzErr = z;
    if( z==0 ) rc = SQLITE_NOMEM;
  }
  if( rc ){ jFree(p); return rc; }
  for(i=0; i<p->nChild && rc==SQLITE_OK; i++){
    const JNode *v = p->a[i];
    const char *k = v->zKey;
    if( strcmp(k, "top_k")==0 ){
      if( v->type!=JT_INT || v->i<0 ){
        *pzErr = sqlite3_mprintf("options_json: top_k must be a non-negative integer");
        rc = SQLITE_ERROR;
      }else j->topK = v->i>1000000 ? 1000000 : (int)v->i;
    }else if( strcmp(k, "label")==0 ){
      if( v->type!=JT_STRING && v->type!=JT_NULL ){
        *pzErr = sqlite3_mprintf("options_json: label must be a string or null");
        rc = SQLITE_ERROR;
      }else if( v->type==JT_STRING ){
        sqlite3_free(j->zLabel);
        j->zLabel = sqlite3_mprintf("%s", v->z);
        if( j->zLabel==0 ) rc = SQLITE_NOMEM;
      }
    }else if( strcmp(k, "thresholds")==0 ){
      rc = profsumThresholdsApply(v, "options_json: thresholds", 0, &j->thr, pzErr);
    }else if( strcmp(k, "history")==0 || strcmp(k, "strict_provenance")==0 ){
      if( v->type!=JT_TRUE && v->type!=JT_FALSE ){
        *pzErr = sqlite3_mprintf("options_json: %s must be true or false", k);
        rc = SQLITE_ERROR;
      }else if( k[0]=='h' ) j->history = v->type==JT_TRUE;
      else j->strict = v->type==JT_TRUE;
    }else{
      *pzErr = sqlite3_mprintf("options_json: unknown key '%s' (known: top_k, label, "
                               "thresholds, history, strict_provenance)", k);
      rc = SQLITE_ERROR;
    }
  }
  jFree(p);
  return rc;
}

/*
** profsum_bundle(before, after, dir [, options_json]) → the manifest
** (indent 2).  Order: options and traces checked; texts computed and written
** to temporary files in dir (inside the write when "history" is true, with
** the record appended there); then the six renames.  On error: temporary
** files and created directories removed, no record.
*/
static void bundleFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_bundle";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  BundleJob j;
  JNode *man = 0;
  sqlite3_int64 idB, idA;
  char *zErr = 0;
  int rc;
  memset(&j, 0, sizeof(j));
  j.vB = argv[0];
  j.vA = argv[1];
  j.topK = PROFSUM_COMPARE_TOP_K;
  profsumThresholdsInit(&j.thr);
  j.zDir = pathArg(ctx, FN, "dir", argv[2]);
  if( j.zDir==0 ) return;
  if( argc>3 && sqlite3_value_type(argv[3])!=SQLITE_NULL ){
    if( sqlite3_value_type(argv[3])!=SQLITE_TEXT ){
      profsumCtxErr(ctx, "%s: options_json must be a JSON object (text)", FN);
      return;
    }
    rc = bundleOptions((const char*)sqlite3_value_text(argv[3]), sqlite3_value_bytes(argv[3]), &j, &zErr);
    if( rc ){ reportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); sqlite3_free(j.zLabel); return; }
  }
  rc = resolvePair(db, SCHEMA, j.vB, j.vA, &idB, &idA, &zErr);
  if( rc==SQLITE_BUSY && j.history ){
    /* busy while checking: the body checks again under the write lock */
    sqlite3_free(zErr); zErr = 0;
    rc = SQLITE_OK;
  }
  if( rc==SQLITE_OK ){
    if( j.history ){
      rc = profsumWriteRun(db, SCHEMA, bundleBody, &j, &zErr);
    }else{
      JNode *rec = 0;
      rc = bundlePrepare(db, &j, &rec, &idB, &idA, &zErr);
      jFree(rec);
    }
  }
  if( rc==SQLITE_OK ) rc = bundleRename(&j, &zErr);
  if( rc==SQLITE_OK ){
    man = bundleManifest(&j);
    if( man==0 ) rc = SQLITE_NOMEM;
  }
  if( rc ){
    bundleReset(&j);
    profsumMadeDirsUndo(&j.made);
    reportErr(ctx, FN, rc, zErr);
  }else{
    char *z = jDump(man);
    profsumMadeDirsKeep(&j.made);
    if( z ) sqlite3_result_text(ctx, z, -1, sqlite3_free);
    else sqlite3_result_error_nomem(ctx);
  }
  jFree(man);
  bundleReset(&j);
  sqlite3_free(zErr);
  sqlite3_free(j.zLabel);
}

/* ================================================================== */
/* Registration                                                        */
/* ================================================================== */

/* See compare.h. */
int profsumRegisterCompare(sqlite3 *db, char **pzErr){
  /* Readers: tables only, usable anywhere; not DETERMINISTIC (the tables
  ** change).  Writers: they write tables and files (or only files), so
  ** SQLITE_DIRECTONLY: a view or trigger stored in a hostile database must
  ** not be able to call them. */
  static const struct {
    const char *zName; int nArg; int flags;
    void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  } aFunc[] = {
    {"profsum_compare_json",         2, SQLITE_UTF8,                    compareJsonFunc},
    {"profsum_compare_json",         3, SQLITE_UTF8,                    compareJsonFunc},
    {"profsum_compare_json",         4, SQLITE_UTF8,                    compareJsonFunc},
    {"profsum_track",                3, SQLITE_UTF8|SQLITE_DIRECTONLY,  trackFunc},
    {"profsum_track",                4, SQLITE_UTF8|SQLITE_DIRECTONLY,  trackFunc},
    {"profsum_history_import",       1, SQLITE_UTF8|SQLITE_DIRECTONLY,  historyImportFunc},
    {"profsum_history_export",       1, SQLITE_UTF8|SQLITE_DIRECTONLY,  historyExportFunc},
    {"profsum_history_summary_json", 0, SQLITE_UTF8,                    historySummaryFunc},
    {"profsum_history_summary_json", 1, SQLITE_UTF8,                    historySummaryFunc},
    {"profsum_bundle",               3, SQLITE_UTF8|SQLITE_DIRECTONLY,  bundleFunc},
    {"profsum_bundle",               4, SQLITE_UTF8|SQLITE_DIRECTONLY,  bundleFunc},
  };
  size_t i;
  int rc = SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<sizeof(aFunc)/sizeof(aFunc[0]); i++){
    rc = sqlite3_create_function(db, aFunc[i].zName, aFunc[i].nArg, aFunc[i].flags, 0,
                                 aFunc[i].xFunc, 0, 0);
    if( rc && pzErr ){
      *pzErr = sqlite3_mprintf("profsum: registering %s/%d failed: %s", aFunc[i].zName,
                               aFunc[i].nArg, sqlite3_errstr(rc));
    }
  }
  return rc;
}
