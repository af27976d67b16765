/*
** textrule.c — the text rule: what text may enter the history.
**
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
**
** The checks: profsumTextArgFault() (utf8rule.h) for a text argument, profsumJsonTextRule()
** for every string and key of a JSON text (history_int.h).
*/
#include "profsum_int.h"
#include "history_int.h"
#include "utf8rule.h"

#include <string.h>


/* Append n bytes of z for a message: UTF-8 sequences and printable ASCII
** as they are, any other byte as \xNN; at most mx bytes of z, then "...". */
static void appendShown(sqlite3_str *s, const char *z, int n, int mx){
  const unsigned char *u = (const unsigned char*)z, *e = u + n, *p = u;
  while( p<e ){
    int k = *p>=0x80 ? profsumUtf8SeqLen(p, e) : (*p>=0x20 && *p<0x7F);
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

/* State of profsumJsonTextRule(): the text, the cursor, the first fault. */
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
      unsigned u = e-p>=6 && p[1]=='u' ? jHex4(p+2) : 0x110000;
      if( u>0xFFFF ){ p += 2; continue; }           /* any escape but a \u with 4 hex digits */
      if( u>=0xD800 && u<=0xDBFF && e-p>=12 && p[6]=='\\' && p[7]=='u' ){
        unsigned u2 = jHex4(p+8);
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
      int k = profsumUtf8SeqLen((const unsigned char*)p, (const unsigned char*)e);
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

/* Move r->p past JSON whitespace. */
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

/* See history_int.h. */
int profsumJsonTextRule(const char *z, int n, char **pzErr){
  JRule r;
  memset(&r, 0, sizeof(r));
  r.z = r.p = z;
  r.e = z + n;
  jrValue(&r, 0);
  *pzErr = r.zErr;
  return r.rc;
}
