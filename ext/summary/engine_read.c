/*
** engine_read.c — stage A's read pass: the JSON scanner's events into
** accepted records (summary-v1-spec.md §1.3), their keys, signatures and
** diagnostics; and the intake of other readers (engine_intake.h).
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "hash.h"
#include "pytext.h"
#include "funcs.h"
#include "jsontree.h"
#include "insights.h"
#include "spanmemo.h"
#include "growarray.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Format an error into *pzErr. */
int profsumEngErr(Engine *e, int rc, const char *zFmt, ...){
  va_list ap;
  char *z;
  va_start(ap, zFmt);
  z = sqlite3_vmprintf(zFmt, ap);
  va_end(ap);
  sqlite3_free(*e->pzErr);
  *e->pzErr = z ? sqlite3_mprintf("%s: %s", e->zFunc, z) : 0;
  sqlite3_free(z);
  return rc;
}

/* Out of memory with no message yet: say so with the function, the file
** and the phase (zWhat), so that a trace too large for the memory at hand
** is told apart from other failures.  Returns SQLITE_NOMEM. */
int profsumEngNoMem(Engine *e, const char *zWhat){
  if( e->pzErr && *e->pzErr==0 ){
    *e->pzErr = sqlite3_mprintf("%s: '%s': out of memory %s (%lld complete events read)",
                                e->zFunc, e->zPath ? e->zPath : "?", zWhat, (long long)e->nEv);
  }
  return SQLITE_NOMEM;
}

/* Count a complete event left out of the summary (zWhy: static text for the
** import's quality warning). */
static void noteLeftOut(Engine *e, int64_t idx, const char *zWhy){
  if( e->nLeftOut++==0 ){ e->iFirstLeftOut = idx; e->zFirstLeftOutWhy = zWhy; }
}

/* Count entry idx among those the reference summarizer would reject the
** whole file for (once per entry, whatever the number of reasons). */
static void noteRejected(Engine *e, int64_t idx, const char *zKind){
  if( e->nRejected>0 && idx==e->iLastRejected ) return;
  e->iLastRejected = idx;
  if( e->nRejected++==0 ){ e->iFirstRejected = idx; e->zFirstRejected = zKind; }
}

/* zUtf8 when the string span sp holds bytes that are not UTF-8, zSurr when
** it holds a lone surrogate escape (\ud800): the text the reference's
** decoder (msgspec) refuses in a field it decodes as str; else 0. */
static const char *badText(const ProfsumSpan *sp, const char *zUtf8, const char *zSurr){
  if( sp->type!=PROFSUM_JT_STRING ) return 0;
  if( sp->flags & PROFSUM_SF_BADUTF8 ) return zUtf8;
  if( (sp->flags & PROFSUM_SF_SURR) && profsumSpanLoneSurrogate(sp) ) return zSurr;
  return 0;
}

/* Why the reference's decoder rejects the text of a field of ev that it
** decodes as str (summary-v1-spec §1.2): ph, name, and with an args
** object its name, tf_op, source, long_name, and a run_id or step_num
** that is a string; bytes that are not UTF-8 or a lone surrogate escape
** in one.  Its decoder checks no text of a field it ignores (cat, args
** keys it does not know, any key): those are accepted.  (process_name and
** thread_name: the scanner's zRefBad.)  0 when none: one test of the
** flags for the common event. */
static const char *refTextProblem(const ProfsumEvent *ev){
  static const struct { int k; const char *zUtf8, *zSurr; } aArg[] = {
    {PROFSUM_AK_NAME, "invalid_utf8 in args.name", "lone surrogate escape in args.name"},
    {PROFSUM_AK_TF_OP, "invalid_utf8 in args.tf_op", "lone surrogate escape in args.tf_op"},
    {PROFSUM_AK_SOURCE, "invalid_utf8 in args.source", "lone surrogate escape in args.source"},
    {PROFSUM_AK_LONG_NAME, "invalid_utf8 in args.long_name", "lone surrogate escape in args.long_name"},
    {PROFSUM_AK_RUN_ID, "invalid_utf8 in args.run_id", "lone surrogate escape in args.run_id"},
    {PROFSUM_AK_STEP_NUM, "invalid_utf8 in args.step_num", "lone surrogate escape in args.step_num"},
  };
  const int bArgs = ev->args.type==PROFSUM_JT_OBJECT;
  unsigned f = ev->ph.flags | ev->name.flags;
  const char *zWhy;
  int i;
  if( bArgs ){
    for(i=0; i<(int)(sizeof(aArg)/sizeof(aArg[0])); i++) f |= ev->aArg[aArg[i].k].flags;
  }
  if( !(f & (PROFSUM_SF_BADUTF8|PROFSUM_SF_SURR)) ) return 0;
  if( (zWhy = badText(&ev->ph, "invalid_utf8 in ph", "lone surrogate escape in ph"))!=0 ) return zWhy;
  if( (zWhy = badText(&ev->name, "invalid_utf8 in name", "lone surrogate escape in name"))!=0 ) return zWhy;
  if( !bArgs ) return 0;
  for(i=0; i<(int)(sizeof(aArg)/sizeof(aArg[0])); i++){
    zWhy = badText(&ev->aArg[aArg[i].k], aArg[i].zUtf8, aArg[i].zSurr);
    if( zWhy ) return zWhy;
  }
  return 0;
}

/* Why the reference's typed decoder (summary-v1-spec §1.2) would reject the
** whole file for entry ev, beyond what the reader's diagnostics and the
** pid/tid and ts/dur checks count: what the scanner found (ev->zRefBad: a
** null name, an event-level process_name or thread_name that is not a
** string); args that is not an object; args.name,
** tf_op, source or long_name that is not a string (the typed args of every
** entry, not only of metadata); args.run_id that is not a string or a number; args.step_num that
** is not an integer or a string.  null is taken as absent.  0 when none. */
static const char *refTypeProblem(const ProfsumEvent *ev, int ph){
  static const struct { int k; const char *zWhy; } aStr[] = {
    {PROFSUM_AK_TF_OP, "args.tf_op not a string"},
    {PROFSUM_AK_SOURCE, "args.source not a string"},
    {PROFSUM_AK_LONG_NAME, "args.long_name not a string"},
  };
  const ProfsumSpan *a = ev->aArg;
  int t, i;
  if( ev->zRefBad ) return ev->zRefBad;
  t = ev->args.type;
  if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_OBJECT ) return "args not a JSON object";
  if( t!=PROFSUM_JT_OBJECT ) return 0;
  for(i=0; i<(int)(sizeof(aStr)/sizeof(aStr[0])); i++){
    t = a[aStr[i].k].type;
    if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING ) return aStr[i].zWhy;
  }
  t = a[PROFSUM_AK_NAME].type;
  if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING ){
    return ph=='M' ? "args.name of a metadata entry not a string" : "args.name not a string";
  }
  t = a[PROFSUM_AK_RUN_ID].type;
  if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING && t!=PROFSUM_JT_NUMBER ){
    return "args.run_id not a string or a number";
  }
  t = a[PROFSUM_AK_STEP_NUM].type;
  if( t==PROFSUM_JT_NUMBER ){
    const ProfsumSpan *s = &a[PROFSUM_AK_STEP_NUM];
    int64_t j;
    for(j=0; j<s->n; j++){
      char c = s->z[j];
      if( c=='.' || c=='e' || c=='E' ) return "args.step_num not an integer or a string";
    }
  }else if( t!=PROFSUM_JT_NONE && t!=PROFSUM_JT_NULL && t!=PROFSUM_JT_STRING ){
    return "args.step_num not an integer or a string";
  }
  return 0;
}

/* 1 for the reader's diagnostic kinds that alone say the reference's
** decoder rejects the whole file (by first letter first: this runs for
** every diagnostic, e.g. a time_rounded per event of a converted XPlane):
** an entry that is not an object or whose ph is not a string (no event
** comes of it), and outside the entries (idx < 0) a bad_field (the
** top level's displayTimeUnit) or bytes that are not UTF-8 (in it).  An
** entry's bad_field or invalid_utf8 counts only for a field the reference
** decodes typed, which noteRefRejects tells from the event (a non-string
** cat, bytes that are not UTF-8 in a field it ignores: accepted). */
static int isRejectKind(const char *z, int64_t idx){
  switch( z[0] ){
    case 'n': return strcmp(z, "not_an_object")==0;
    case 'p': return strcmp(z, "ph_not_string")==0;
    case 'b': return idx<0 && strcmp(z, "bad_field")==0;
    case 'i': return idx<0 && strcmp(z, "invalid_utf8")==0;
    default:  return 0;
  }
}
/* Count a diagnostic under its kind and keep it to store (all of them
** with e->diagAll, else the first ENG_DIAG_KEEP of a kind): the part of
** engDiag that every reader's diagnostics go through. */
static void engDiagKeep(Engine *e, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  int k;
  for(k=0; k<e->nKind; k++) if( e->aKind[k].zKind==zKind || strcmp(e->aKind[k].zKind, zKind)==0 ) break;
  if( k==e->nKind && e->nKind<48 ){ e->aKind[k].zKind = zKind; e->aKind[k].n = 0; e->nKind++; }
  /* every row counted; kept until the write phase: all of them, or the
  ** first ENG_DIAG_KEEP of a kind (the compact set, bounded) */
  if( k<e->nKind && ++e->aKind[k].n > ENG_DIAG_KEEP && !e->diagAll ) return;
  if( e->diagRc ) return;
  if( profsumDiagListAdd(&e->diag, idx, off, zKind, zDetail) ) e->diagRc = SQLITE_NOMEM;
}

/* Diagnostics callback: count every row per kind, keep those to store
** (all of them with e->diagAll, else the first ENG_DIAG_KEEP of a kind),
** and count the entries the reference summarizer would reject the whole
** file for. */
static void engDiag(void *pCtx, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  Engine *e = (Engine*)pCtx;
  if( isRejectKind(zKind, idx) ){
    if( idx>=0 ){
      noteRejected(e, idx, zKind);
    }else if( e->topRejected==0 ){
      /* outside every entry: the top level's displayTimeUnit (the one
      ** bad_field there), or bytes that are not UTF-8 */
      e->topRejected = strcmp(zKind, "bad_field")==0 ? 1 : 2;
    }
  }
  switch( zKind[0] ){     /* the reader's file-level tolerances (cheap for
                          ** time_rounded, which can come once per event) */
    case 'b': if( strcmp(zKind, "byte_order_mark")==0 ) e->byteOrderMark = 1; break;
    case 't':
      if( zKind[1]!='r' ) break;
      if( strcmp(zKind, "trailing_comma")==0 ) e->laxSyntax = 1;
      else if( strcmp(zKind, "truncated_entry")==0 ) e->cutOff = 1;
      break;
    case 'c': if( strcmp(zKind, "control_character")==0 ) e->laxSyntax = 1; break;
    case 'n': if( strcmp(zKind, "no_trace_events")==0 ) e->noEvents = 1; break;
    case 'u':
      if( strcmp(zKind, "unterminated_array")==0 || strcmp(zKind, "unterminated_object")==0 ) e->cutOff = 1;
      break;
  }
  engDiagKeep(e, idx, off, zKind, zDetail);
}

/* Intern a string-valued args field (strings decoded; numbers as text);
** empty or absent → -1.  Returns SQLITE_OK or SQLITE_NOMEM. */
static int internArg(Engine *e, const ProfsumSpan *s, char **ppB, int64_t *pnB, int32_t *pId){
  const char *z; int64_t n;
  *pId = -1;
  if( s->type==PROFSUM_JT_STRING ){
    if( profsumSpanText(s, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
  }else if( s->type==PROFSUM_JT_NUMBER ){
    z = s->z; n = s->n;
  }else{
    return SQLITE_OK;
  }
  if( n==0 ) return SQLITE_OK;
  *pId = profsumEngSpIntern(&e->pool, z, n);
  return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* args.run_id: a string as is; a number as Python's str() of what
** json.loads gives (§1.3): an integer literal is its int, written as is
** (JSON has no leading zeros) but "-0" → "0"; anything else → the float's
** repr ("7.50" → "7.5", "1e3" → "1000.0"). */
static int internRunId(Engine *e, const ProfsumSpan *s, char **ppB, int64_t *pnB, int32_t *pId){
  const char *z = s->z;
  int64_t n = s->n, j;
  char zBuf[40];
  if( s->type!=PROFSUM_JT_NUMBER ) return internArg(e, s, ppB, pnB, pId);
  *pId = -1;
  if( n==0 ) return SQLITE_OK;
  for(j=(z[0]=='-'); j<n && z[j]>='0' && z[j]<='9'; j++){}
  if( j==n ){
    if( n==2 && z[0]=='-' && z[1]=='0' ){ z++; n--; }
    *pId = profsumEngSpIntern(&e->pool, z, n);
    return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
  }
  {
    double r = profsumTextDouble(z, n, NAN);
    if( isinf(r) ) memcpy(zBuf, r<0 ? "-inf" : "inf", r<0 ? 5 : 4);   /* Python str() */
    else if( isnan(r) ) memcpy(zBuf, "nan", 4);
    else jReprDouble(r, zBuf);
  }
  *pId = profsumEngSpIntern(&e->pool, zBuf, (int64_t)strlen(zBuf));
  return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* The raw spans of tf_op and source of the last event of a name, and the
** ids they gave (internArg), and that event's key: an op's events repeat
** them, so comparing their bytes (and the key's five ids) replaces
** decoding and hashing them.  Kept for names of ids
** below ARGMEMO_MAX_NAMES, at most ARGMEMO_MAX_BYTES of text in all.  (The
** run_id changes with the step, not with the name: the last one, when it
** is at most RUNMEMO_MAX_BYTES long, is kept for all names, in
** Engine.runMemo.) */
#define ARGMEMO_N 2
_Static_assert(ARGMEMO_N<=SPANMEMO_MAX, "ArgMemo's spans in a SpanMemo");
#define ARGMEMO_MAX_NAMES ((int32_t)1<<18)
#define ARGMEMO_MAX_BYTES ((int64_t)8<<20)
#define RUNMEMO_MAX_BYTES ((int64_t)64)
static const int aRunMemoKey[1] = { PROFSUM_AK_RUN_ID };
typedef struct ArgMemo {
  SpanMemo sm;                    /* the spans (spanmemo.h) */
  int32_t aId[ARGMEMO_N];         /* the ids they gave: tf_op, source (-1 absent) */
  int64_t sigCopy, sigId;         /* sigOf's sigLast entry of the name (its v1
                                  ** and v2), kept here for names of ids below
                                  ** ARGMEMO_MAX_NAMES: no hash lookup */
  EvKey key;                      /* the event key of the name's last event */
  int32_t keyId;                  /* its index + 1 (0: none yet) */
} ArgMemo;

/* The args spans an ArgMemo keeps, in order. */
static const int aArgMemoKey[ARGMEMO_N] = { PROFSUM_AK_TF_OP, PROFSUM_AK_SOURCE };

/* 1 with the ids in aId[] when name's memo holds the args spans of ev. */
static int argMemoHit(const Engine *e, int32_t name, const ProfsumEvent *ev, int32_t *aId){
  const ArgMemo *m;
  int i;
  if( name>=e->nArgMemo ) return 0;
  m = &e->aArgMemo[name];
  if( !profsumSpanMemoSame(&m->sm, ev, aArgMemoKey, ARGMEMO_N) ) return 0;
  for(i=0; i<ARGMEMO_N; i++) aId[i] = m->aId[i];
  return 1;
}

/* The memo of name id `name` (made empty when new) in *ppM: 0 for an id
** of ARGMEMO_MAX_NAMES or more.  SQLITE_OK or SQLITE_NOMEM. */
static int argMemoAt(Engine *e, int32_t name, ArgMemo **ppM){
  *ppM = 0;
  if( name>=ARGMEMO_MAX_NAMES ) return SQLITE_OK;
  if( name>=e->nArgMemo ){
    int32_t nNew = e->nArgMemo ? e->nArgMemo*2 : 256;
    ArgMemo *a;
    while( nNew<=name ) nNew *= 2;
    a = sqlite3_realloc64(e->aArgMemo, sizeof(ArgMemo)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    memset(a + e->nArgMemo, 0, sizeof(ArgMemo)*(size_t)(nNew - e->nArgMemo));
    e->aArgMemo = a;
    e->nArgMemo = nNew;
  }
  *ppM = &e->aArgMemo[name];
  return SQLITE_OK;
}

/* Make name's memo hold the args spans of ev and their ids aId[] (within
** the bounds above: else nothing is kept).  SQLITE_OK or SQLITE_NOMEM. */
static int argMemoSet(Engine *e, int32_t name, const ProfsumEvent *ev, const int32_t *aId){
  ArgMemo *m;
  int i;
  if( argMemoAt(e, name, &m) ) return SQLITE_NOMEM;
  if( m==0 ) return SQLITE_OK;
  for(i=0; i<ARGMEMO_N; i++) m->aId[i] = aId[i];
  return profsumSpanMemoSet(&m->sm, ev, aArgMemoKey, ARGMEMO_N, &e->nArgMemoBytes, ARGMEMO_MAX_BYTES);
}

#define SIGLAST_MAX_BYTES ((int64_t)8<<20)   /* long_name copies kept by sigLast */
#define SIGCACHE_MAX_BYTES ((int64_t)64<<20) /* long_name texts kept by sigCache:
                                            ** past it, a new text's signature
                                            ** is computed each time it comes */

/* See engine_intake.h: "S(5)", a layout's memory space 5 (a buffer in
** host memory). */
int profsumEngHasHostMem(const char *z, int64_t n){
  int64_t i;
  for(i=0; i+4<=n; i++){
    if( z[i]=='S' && z[i+1]=='(' && z[i+2]=='5' && z[i+3]==')' ) return 1;
  }
  return 0;
}

/* What sigCompute finds of a long_name text, packed as the caches keep
** it: the signature id + 1 in the low 32 bits, the host-memory flag
** (profsumEngHasHostMem) in bit 32. */
#define SIG_PACK(id, hm) ((int64_t)((id)+1) | ((int64_t)((hm)!=0)<<32))
#define SIG_ID(v) ((int32_t)((v) & 0xffffffff) - 1)
#define SIG_HM(v) ((int32_t)(((v)>>32) & 1))

/* The signature id of the long_name text z[0..n) into *pId: -1 when it
** has none, or when its signature is the empty string (a text whose only
** shapes are like `f32[ ]`): the reference counts a signature only when
** it is truthy, so an empty one is no signature for an op or a family.
** Its host-memory flag (profsumEngHasHostMem) into *pHm.  SQLITE_OK or
** SQLITE_NOMEM. */
static int sigCompute(Engine *e, const char *z, int64_t n, int32_t *pId, int32_t *pHm){
  char *zSig = 0;
  int nSig = 0;
  int32_t id = -1;
  *pHm = profsumEngHasHostMem(z, n);
  if( profsumShapeSignature(z, (int)(n>0x7fffffff ? 0x7fffffff : n), &zSig, &nSig) ) return SQLITE_NOMEM;
  if( zSig && nSig>0 ){
    id = profsumEngSpIntern(&e->pool, zSig, nSig);
    if( id<0 ){ sqlite3_free(zSig); return SQLITE_NOMEM; }
  }
  sqlite3_free(zSig);
  *pId = id;
  return SQLITE_OK;
}

/* The signature id of the decoded long_name text z[0..n) (n > 0) through
** sigCache: a text met before (the same bytes) has its id at once; a
** new one is computed and, within SIGCACHE_MAX_BYTES, kept with a copy
** of its text; a text whose hash and length match another's but whose
** bytes do not is computed and not kept.  The host-memory flag into
** *pHm.  SQLITE_OK or SQLITE_NOMEM. */
static int sigCached(Engine *e, const char *z, int64_t n, int32_t *pId, int32_t *pHm){
  int64_t key = (int64_t)profsumBytesHash(z, n);
  HEnt *h = profsumEngHmGet(&e->sigCache, key, n, 0, 0);
  char *zKept;
  int isNew;
  if( h ){
    if( memcmp((const char*)(intptr_t)h->v2, z, (size_t)n)==0 ){
      *pId = SIG_ID(h->v1);
      *pHm = SIG_HM(h->v1);
      return SQLITE_OK;
    }
    return sigCompute(e, z, n, pId, pHm);
  }
  if( sigCompute(e, z, n, pId, pHm) ) return SQLITE_NOMEM;
  if( e->nSigCacheBytes + n > SIGCACHE_MAX_BYTES ) return SQLITE_OK;
  zKept = sqlite3_malloc64((sqlite3_uint64)n);
  if( zKept==0 ) return SQLITE_NOMEM;
  h = profsumEngHmGet(&e->sigCache, key, n, 1, &isNew);
  if( h==0 ){ sqlite3_free(zKept); return SQLITE_NOMEM; }
  memcpy(zKept, z, (size_t)n);
  h->v1 = SIG_PACK(*pId, *pHm);
  h->v2 = (int64_t)(intptr_t)zKept;
  e->nSigCacheBytes += n;
  return SQLITE_OK;
}

/* The shape signature id (-1: none) of the long_name span s of an event
** named `name`: first the raw JSON bytes of the span are compared with
** those of the last long_name seen with that name (sigLast: the same bytes
** decode to the same text, so the escapes of an HLO text are decoded only
** when it changes), else the decoded text is looked up in sigCache
** (sigCached) and the signature computed on a miss.  The text's
** host-memory flag (profsumEngHasHostMem; 0 without a text) into *pHm.  Returns
** SQLITE_OK or SQLITE_NOMEM. */
static int sigOf(Engine *e, int32_t name, const ProfsumSpan *s, char **ppB, int64_t *pnB,
                 int32_t *pId, int32_t *pHm){
  const char *z; int64_t n;
  int64_t *pCopy, *pV1, *pV2;   /* the name's sigLast entry: copy, SIG_PACK */
  ArgMemo *m;
  *pId = -1;
  *pHm = 0;
  if( s->type!=PROFSUM_JT_STRING || s->n==0 ) return SQLITE_OK;
  if( argMemoAt(e, name, &m) ) return SQLITE_NOMEM;
  if( m ){
    pV1 = &m->sigCopy; pV2 = &m->sigId;
  }else{
    HEnt *hl = profsumEngHmGet(&e->sigLast, name, 0, 1, 0);
    if( hl==0 ) return SQLITE_NOMEM;
    pV1 = &hl->v1; pV2 = &hl->v2;
  }
  pCopy = (int64_t*)(intptr_t)*pV1;
  if( pCopy && pCopy[0]==s->n && memcmp(pCopy+2, s->z, (size_t)s->n)==0 ){
    *pId = SIG_ID(*pV2);
    *pHm = SIG_HM(*pV2);
    return SQLITE_OK;
  }
  if( profsumSpanText(s, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
  if( n==0 ) return SQLITE_OK;
  if( sigCached(e, z, n, pId, pHm) ) return SQLITE_NOMEM;
  /* Remember this long_name for the next event of the same name, in the
  ** name's buffer ({length, capacity, bytes}; reallocated only to grow, so
  ** a name whose HLO text keeps changing costs no allocation per event).
  ** The buffers are bounded (traces whose names never repeat gain nothing). */
  if( pCopy==0 || s->n>pCopy[1] ){
    int64_t cap = pCopy ? pCopy[1] : 0;
    int64_t newCap = (s->n + 63) & ~(int64_t)63;
    int64_t *pNew;
    if( e->nSigLastBytes - cap + newCap > SIGLAST_MAX_BYTES ) return SQLITE_OK;
    pNew = sqlite3_realloc64(pCopy, 2*sizeof(int64_t) + (sqlite3_uint64)newCap);
    if( pNew==0 ){ sqlite3_free(pCopy); *pV1 = 0; return SQLITE_NOMEM; }
    e->nSigLastBytes += newCap - cap;
    pCopy = pNew;
    pCopy[1] = newCap;
  }
  pCopy[0] = s->n;
  memcpy(pCopy+2, s->z, (size_t)s->n);
  *pV1 = (int64_t)(intptr_t)pCopy;
  *pV2 = SIG_PACK(*pId, *pHm);
  return SQLITE_OK;
}

/* Free the signature caches, the args memos and the name memo (needed
** only while reading). */
void profsumEngSigFree(Engine *e){
  int64_t i;
  for(i=0; i<e->nArgMemo; i++){
    sqlite3_free(e->aArgMemo[i].sm.aRaw);
    sqlite3_free((void*)(intptr_t)e->aArgMemo[i].sigCopy);
  }
  sqlite3_free(e->aArgMemo);
  e->aArgMemo = 0;
  e->nArgMemo = 0;
  e->nArgMemoBytes = 0;
  for(i=0; i<e->sigLast.nSlot; i++){
    if( e->sigLast.a[i].used ) sqlite3_free((void*)(intptr_t)e->sigLast.a[i].v1);
  }
  profsumEngHmFree(&e->sigLast);
  for(i=0; i<e->sigCache.nSlot; i++){
    if( e->sigCache.a[i].used ) sqlite3_free((void*)(intptr_t)e->sigCache.a[i].v2);
  }
  profsumEngHmFree(&e->sigCache);
  e->nSigLastBytes = 0;
  e->nSigCacheBytes = 0;
  sqlite3_free(e->aNameMemo);
  e->aNameMemo = 0;
  sqlite3_free(e->runMemo.aRaw);
  memset(&e->runMemo, 0, sizeof(e->runMemo));
  e->nRunMemoBytes = 0;
}

/* Record an M event's process/thread name (era C: pid >= 0, tid >= 0). */
static int noteMeta(Engine *e, const ProfsumEvent *ev, char **ppB, int64_t *pnB){
  const ProfsumSpan *nm = &ev->name;
  const ProfsumSpan *v = &ev->aArg[PROFSUM_AK_NAME];
  int isProc, isThread;
  int32_t id;
  const char *z; int64_t n;
  HEnt *h;
  if( nm->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  /* as decoded: "process\u005fname" is "process_name" */
  isProc = profsumSpanIs(nm, "process_name", 12);
  isThread = !isProc && profsumSpanIs(nm, "thread_name", 11);
  if( !isProc && !isThread ) return SQLITE_OK;
  if( v->type!=PROFSUM_JT_STRING ) return SQLITE_OK;
  if( ev->pid.kind!=PROFSUM_ID_INT || ev->pid.iVal<0 ) return SQLITE_OK;
  if( isThread && (ev->tid.kind!=PROFSUM_ID_INT || ev->tid.iVal<0) ) return SQLITE_OK;
  if( profsumSpanText(v, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
  id = profsumEngSpIntern(&e->pool, z, n);
  if( id<0 ) return SQLITE_NOMEM;
  h = isProc ? profsumEngHmGet(&e->procMap, ev->pid.iVal, 0, 1, 0)
             : profsumEngHmGet(&e->threadMap, ev->pid.iVal, ev->tid.iVal, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1 = id;
  return SQLITE_OK;
}

/* The name memo: a slot holds a pooled name (its text never moves: SPool)
** and its id.  A name of 8 to NAMEMEMO_MAX_LEN bytes without escapes picks
** its slot from its length and its first and last eight bytes; a slot whose
** name has the same bytes gives the id without hashing the whole name and
** probing the pool's table (a trace repeats its ops' names). */
#define NAMEMEMO_N 1024
#define NAMEMEMO_MAX_LEN 256
typedef struct NameMemo { const char *z; int32_t n, id; } NameMemo;

/* The id of the name span s of an X event (profsumEngSpIntern of its text),
** or -1 when out of memory. */
static int32_t nameIntern(Engine *e, const ProfsumSpan *s, char **ppB, int64_t *pnB){
  const char *z; int64_t n;
  if( !(s->flags & PROFSUM_SF_ESCAPE) && s->n>=8 && s->n<=NAMEMEMO_MAX_LEN ){
    uint64_t a, b, h;
    NameMemo *m;
    memcpy(&a, s->z, 8);
    memcpy(&b, s->z + s->n - 8, 8);
    h = (a ^ (b*0x9e3779b97f4a7c15ULL) ^ (uint64_t)s->n) * 0xff51afd7ed558ccdULL;
    if( e->aNameMemo==0 ){
      e->aNameMemo = sqlite3_malloc64(sizeof(NameMemo)*NAMEMEMO_N);
      if( e->aNameMemo==0 ) return -1;
      memset(e->aNameMemo, 0, sizeof(NameMemo)*NAMEMEMO_N);
    }
    m = &e->aNameMemo[h>>54];
    _Static_assert(NAMEMEMO_N==1<<10, "the slot is the hash's top 10 bits");
    if( m->z && m->n==s->n && memcmp(m->z, s->z, (size_t)s->n)==0 ) return m->id;
    m->id = profsumEngSpIntern(&e->pool, s->z, s->n);
    if( m->id<0 ){ m->z = 0; return -1; }
    m->z = SP_STR(&e->pool, m->id);
    m->n = (int32_t)s->n;
    return m->id;
  }
  if( profsumSpanText(s, ppB, pnB, &z, &n) ) return -1;
  return profsumEngSpIntern(&e->pool, z, n);
}

static uint64_t keyHash(const EvKey *k){
  return profsumEngHmix(((uint64_t)(uint32_t)k->trk<<32 | (uint32_t)k->name)
              ^ profsumEngHmix((uint64_t)(uint32_t)k->tfop<<32 | (uint32_t)k->source)
              ^ ((uint64_t)(uint32_t)k->sig * 0x9e3779b97f4a7c15ULL)
              ^ (uint64_t)(uint32_t)k->hostMem);
}

/* The hash of event key j of engine pCtx (profsumEngSlotsFor). */
static uint64_t keyHashOf(const void *pCtx, int64_t j){
  return keyHash(&((const Engine*)pCtx)->aKey[j]);
}

/* Intern an event key; its index, or -1 when out of memory. */
static int32_t keyIntern(Engine *e, const EvKey *k){
  int64_t i;
  if( profsumEngSlotsFor(&e->aKeySlot, &e->nKeySlot, e->nKey+1, keyHashOf, e) ) return -1;
  i = (int64_t)(keyHash(k) & (uint64_t)(e->nKeySlot-1));
  while( e->aKeySlot[i] ){
    const EvKey *x = &e->aKey[e->aKeySlot[i]-1];
    if( x->trk==k->trk && x->name==k->name && x->tfop==k->tfop
     && x->source==k->source && x->sig==k->sig && x->hostMem==k->hostMem ) return e->aKeySlot[i]-1;
    i = (i+1) & (e->nKeySlot-1);
  }
  if( e->nKey>=e->nAllocKey ){
    int32_t nNew = e->nAllocKey ? e->nAllocKey*2 : 256;
    EvKey *a = sqlite3_realloc64(e->aKey, sizeof(EvKey)*(sqlite3_uint64)nNew);
    if( a==0 ) return -1;
    e->aKey = a;
    e->nAllocKey = nNew;
  }
  e->aKey[e->nKey] = *k;
  e->aKeySlot[i] = e->nKey + 1;
  return e->nKey++;
}

/* See engine_int.h.  A second call for the same event replaces the first. */
int profsumEngSetStep(Engine *e, int64_t i, int64_t v){
  if( e->nStep>0 && e->aStepEv[e->nStep-1]==i ){ e->aStepNum[e->nStep-1] = v; return SQLITE_OK; }
  if( e->nStep>=e->nAllocStep ){
    void **aa[] = {(void**)&e->aStepEv, (void**)&e->aStepNum};
    static const size_t aSz[] = {sizeof(int32_t), sizeof(int64_t)};
    if( profsumEngGrowParallel(2, aa, aSz, &e->nAllocStep, e->nStep+1, 0) ) return SQLITE_NOMEM;
  }
  e->aStepEv[e->nStep] = (int32_t)i;
  e->aStepNum[e->nStep++] = v;
  return SQLITE_OK;
}

/* See engine_int.h (profsumEngSetRun).  A block's runs grow by doubling;
** once half a block of them would be needed, they become the array. */
int profsumEngSetRunSlow(Engine *e, int64_t i, int32_t id){
  EvRunBlk *b = &e->aRun[i>>EV_SHIFT];
  uint32_t off = (uint32_t)(i & (EV_BLOCK-1));
  if( id>=0 ) e->nRunEv++;
  if( b->aDense ){ b->aDense[off] = id; return SQLITE_OK; }
  if( id==(b->n ? b->aId[b->n-1] : -1) ) return SQLITE_OK;   /* the run goes on */
  if( b->n>=b->nAlloc ){
    if( (b->nAlloc ? b->nAlloc*2 : 64)>=EV_BLOCK/2 ){
      /* the array: 4 bytes per event of the block, no more than the runs */
      int32_t *a = sqlite3_malloc64(sizeof(int32_t)*(sqlite3_uint64)EV_BLOCK);
      int64_t k;
      uint32_t o;
      if( a==0 ) return SQLITE_NOMEM;
      for(o=0; o<b->aOff[0]; o++) a[o] = -1;
      for(k=0; k<b->n; k++){
        uint32_t oEnd = k+1<b->n ? b->aOff[k+1] : off;
        for(o=b->aOff[k]; o<oEnd; o++) a[o] = b->aId[k];
      }
      for(o=off; o<(uint32_t)EV_BLOCK; o++) a[o] = -1;
      a[off] = id;
      sqlite3_free(b->aOff); sqlite3_free(b->aId);
      b->aOff = 0; b->aId = 0;
      b->n = b->nAlloc = 0;
      b->aDense = a;
      return SQLITE_OK;
    }else{
      void **aa[] = {(void**)&b->aOff, (void**)&b->aId};
      static const size_t aSz[] = {sizeof(uint32_t), sizeof(int32_t)};
      if( profsumEngGrowParallel(2, aa, aSz, &b->nAlloc, b->n+1, 0) ) return SQLITE_NOMEM;
    }
  }
  b->aOff[b->n] = off;
  b->aId[b->n++] = id;
  return SQLITE_OK;
}

/* A new event record e->nEv for an accepted event (entry idx at byte
** iOffset) at exact ts for dur picoseconds: *ppR is the zeroed record with
** ts (relative to the origin) and dur set, or 0 when the event is left out
** (too far in time: a diagnostic and the count).  The caller fills the rest
** and then counts it (e->nEv++).  SQLITE_OK, SQLITE_NOMEM or SQLITE_TOOBIG. */
static int evNew(Engine *e, int64_t idx, int64_t iOffset, profsum_ps ts, profsum_ps dur, SEv **ppR){
  SEv *r;
  profsum_ps rel, end = ts + dur;
  *ppR = 0;
  if( !e->hasOrigin ){ e->origin = ts; e->hasOrigin = 1; }
  rel = ts - e->origin;
  if( rel>((int64_t)1<<61) || rel<-((int64_t)1<<61) || dur>((int64_t)1<<61) ){
    if( dur<=((int64_t)1<<61) && e->nFar++==0 ) e->farTs = ts;   /* far from the origin */
    engDiag(e, idx, iOffset, "time_out_of_range",
            "complete event longer than 26 days (2^61 ps) or that far from the events kept: "
            "left out of the summary");
    noteLeftOut(e, idx, "more than 26 days (2^61 ps) long or away from the events kept");
    return SQLITE_OK;
  }
  if( !e->hasRange || ts<e->tsMin ) e->tsMin = ts;
  if( !e->hasRange || ts>e->tsMax ) e->tsMax = ts;
  if( !e->hasRange || end>e->endMax ) e->endMax = end;
  e->hasRange = 1;
  if( e->nEv>=0x7fffffff ){
    /* Event indices are 32-bit (the order array: 4 bytes per event). */
    return profsumEngErr(e, SQLITE_TOOBIG, "entry %lld (byte %lld): more than 2147483647 complete "
                  "events: a trace this large cannot be summarized",
                  (long long)idx, (long long)iOffset);
  }
  if( e->nEv>=e->nEvCap ){
    if( e->nBlk==1 && e->nEvCap<EV_BLOCK ){
      /* The first block grows from EV_FIRST records by doubling, so that a
      ** small trace does not hold a 1.25 MiB block for a few thousand events
      ** (at most four reallocs, up to 65,536 records; glibc moves a chunk
      ** above its mmap threshold with mremap, without a copy, and copies
      ** one below it, both blocks live for that moment).  No record
      ** pointer is kept across calls: every access goes through EV(). */
      int64_t nNew = e->nEvCap*2 < EV_BLOCK ? e->nEvCap*2 : EV_BLOCK;
      SEv *a = sqlite3_realloc64(e->apBlk[0], sizeof(SEv)*(sqlite3_uint64)nNew);
      if( a==0 ) return SQLITE_NOMEM;
      e->apBlk[0] = a;
      e->nEvCap = nNew;
    }else{
      /* A new block: later blocks never move, and peak memory is what is used. */
      int64_t nRec = e->nBlk==0 ? EV_FIRST : EV_BLOCK;
      if( e->nBlk>=e->nAllocBlk ){
        int64_t nNew = e->nAllocBlk ? e->nAllocBlk*2 : 64;
        SEv **a = sqlite3_realloc64(e->apBlk, sizeof(SEv*)*(sqlite3_uint64)nNew);
        EvRunBlk *aR;
        if( a==0 ) return SQLITE_NOMEM;
        e->apBlk = a;
        aR = sqlite3_realloc64(e->aRun, sizeof(EvRunBlk)*(sqlite3_uint64)nNew);
        if( aR==0 ) return SQLITE_NOMEM;
        memset(aR + e->nAllocBlk, 0, sizeof(EvRunBlk)*(size_t)(nNew - e->nAllocBlk));
        e->aRun = aR;
        e->nAllocBlk = nNew;
      }
      /* (blocks after the first: one the side worker mapped, if it has) */
      e->apBlk[e->nBlk] = nRec==EV_BLOCK ? profsumEngBlockTake(e) : 0;
      e->blkMapped = e->apBlk[e->nBlk]!=0;
      if( !e->blkMapped ){
        e->apBlk[e->nBlk] = sqlite3_malloc64(sizeof(SEv)*(sqlite3_uint64)nRec);
        if( e->apBlk[e->nBlk]==0 ) return SQLITE_NOMEM;
        if( nRec==EV_BLOCK ) profsumEngBlockAhead(e);   /* the next one */
      }
      e->nBlk++;
      e->nEvCap += nRec;
    }
  }
  if( (e->nEv & (EV_PREFAULT-1))==0 && !e->blkMapped ){
    /* The next EV_PREFAULT records' pages in one call (ext/prefault.c):
    ** they lie in one block, as every block holds a multiple of
    ** EV_PREFAULT records from an index that is one. */
    profsumPrefault(EV(e, e->nEv), sizeof(SEv)*(size_t)EV_PREFAULT);
  }
  if( dur>=(profsum_ps)DUR32_BIG ){
    /* a dur of 2^31 ps or more: kept aside, its index in the record (few
    ** events: steps, modules, host spans) */
    int64_t *a = profsumGrowArray(e->aDurBig, e->nDurBig, &e->nAllocDurBig, sizeof(int64_t), 64);
    if( a==0 ) return SQLITE_NOMEM;
    e->aDurBig = a;
    e->aDurBig[e->nDurBig] = (int64_t)dur;
  }
  r = EV(e, e->nEv);
  memset(r, 0, sizeof(*r));
  r->ts = (int64_t)rel;
  if( dur>=(profsum_ps)DUR32_BIG ){
    /* below 2^31 entries, as the events are (the check above) */
    r->dur32 = DUR32_BIG | (uint32_t)e->nDurBig++;
  }else{
    r->dur32 = (uint32_t)dur;
  }
  *ppR = r;
  return SQLITE_OK;
}

/* Keep the doubles fTs and fDur of event e->nEv (the next one) in the
** aFloat arrays (engine_int.h).  SQLITE_OK or SQLITE_NOMEM. */
static int floatPush(Engine *e, double fTs, double fDur){
  int64_t w = e->nEv>>6;
  if( e->nFloat>=e->nAllocFloat ){
    int64_t nNew = e->nAllocFloat ? e->nAllocFloat*2 : 256;
    double *a2, *a3;
    a2 = sqlite3_realloc64(e->aFloatTs, sizeof(double)*(sqlite3_uint64)nNew);
    if( a2==0 ) return SQLITE_NOMEM;
    e->aFloatTs = a2;
    a3 = sqlite3_realloc64(e->aFloatDur, sizeof(double)*(sqlite3_uint64)nNew);
    if( a3==0 ) return SQLITE_NOMEM;
    e->aFloatDur = a3;
    e->nAllocFloat = nNew;
  }
  if( w>=e->nFloatWord ){
    /* the words up to this event's: no entry yet, all entries before them */
    int64_t k;
    uint64_t *a1 = profsumGrowArray(e->aFloatBit, w, &e->nAllocFloatBit, sizeof(uint64_t), 64);
    int32_t *a4;
    if( a1==0 ) return SQLITE_NOMEM;
    e->aFloatBit = a1;
    a4 = profsumGrowArray(e->aFloatRank, w, &e->nAllocFloatRank, sizeof(int32_t), 64);
    if( a4==0 ) return SQLITE_NOMEM;
    e->aFloatRank = a4;
    for(k=e->nFloatWord; k<=w; k++){
      e->aFloatBit[k] = 0;
      e->aFloatRank[k] = (int32_t)e->nFloat;
    }
    e->nFloatWord = w + 1;
  }
  e->aFloatBit[w] |= (uint64_t)1 << (e->nEv & 63);
  e->aFloatTs[e->nFloat] = fTs;
  e->aFloatDur[e->nFloat] = fDur;
  e->nFloat++;
  return SQLITE_OK;
}

/* The double of a rounded time's text s (Python's float()), hDouble the
** double of its rounded picoseconds: from the digits the scanner kept
** (w·10^k, w 0 when it kept none) when the hint or its neighbour is the
** answer, else from the text. */
static double roundedDouble(uint64_t w, int k, const ProfsumSpan *s, double hDouble){
  double d;
  if( w && profsumDecimalHint(w, k, 0, hDouble, &d) ) return d;
  return profsumTextDouble(s->z, s->n, hDouble);
}

/* Take one accepted X event; its event key in *pKey (left alone when the
** event is left out). */
static int noteX(Engine *e, const ProfsumEvent *ev, char **ppB, int64_t *pnB, int32_t *pKey){
  SEv *r;
  HEnt *h;
  int isNew, rc;
  rc = evNew(e, ev->idx, ev->iOffset, ev->ts, ev->dur, &r);
  if( rc || r==0 ) return rc;
  if( e->nTrk==0 || ev->pid.iVal!=e->lastPid || ev->tid.iVal!=e->lastTid ){
    /* not the previous event's track (usually it is) */
    h = profsumEngHmGet(&e->trkMap, ev->pid.iVal, ev->tid.iVal, 1, &isNew);
    if( h==0 ) return SQLITE_NOMEM;
    if( isNew ){
      int32_t trk;
      if( profsumEngNewTrack(e, ev->pid.iVal, ev->tid.iVal, 0, 0, &trk) ) return SQLITE_NOMEM;
      h->v1 = trk;
    }
    e->lastPid = ev->pid.iVal;
    e->lastTid = ev->tid.iVal;
    e->lastTrk = (int32_t)h->v1;
  }
  {
    EvKey k;
    int32_t aId[ARGMEMO_N];
    k.trk = e->lastTrk;
    k.name = nameIntern(e, &ev->name, ppB, pnB);
    if( k.name<0 ) return SQLITE_NOMEM;
    if( argMemoHit(e, k.name, ev, aId) ){
      /* the name's last event had these args: their ids */
      k.tfop = aId[0]; k.source = aId[1];
    }else{
      rc = internArg(e, &ev->aArg[PROFSUM_AK_TF_OP], ppB, pnB, &k.tfop);
      if( rc==SQLITE_OK ) rc = internArg(e, &ev->aArg[PROFSUM_AK_SOURCE], ppB, pnB, &k.source);
      if( rc==SQLITE_OK ){
        aId[0] = k.tfop; aId[1] = k.source;
        rc = argMemoSet(e, k.name, ev, aId);
      }
    }
    if( rc==SQLITE_OK ){
      int32_t runid;
      if( profsumSpanMemoSame(&e->runMemo, ev, aRunMemoKey, 1) ){
        runid = e->lastRunId;      /* the run_id of the event before */
      }else{
        rc = internRunId(e, &ev->aArg[PROFSUM_AK_RUN_ID], ppB, pnB, &runid);
        if( rc==SQLITE_OK ){
          e->lastRunId = runid;
          rc = profsumSpanMemoSet(&e->runMemo, ev, aRunMemoKey, 1, &e->nRunMemoBytes, RUNMEMO_MAX_BYTES);
        }
      }
      if( rc==SQLITE_OK ) rc = profsumEngSetRun(e, e->nEv, runid);
    }
    if( rc==SQLITE_OK ) rc = sigOf(e, k.name, &ev->aArg[PROFSUM_AK_LONG_NAME], ppB, pnB, &k.sig, &k.hostMem);
    if( rc==SQLITE_OK ){
      /* the key of the name's last event, when this one has the same */
      ArgMemo *m = k.name<e->nArgMemo ? &e->aArgMemo[k.name] : 0;
      if( m && m->keyId>0 && memcmp(&m->key, &k, sizeof(k))==0 ){
        r->key = m->keyId - 1;
      }else if( (r->key = keyIntern(e, &k))<0 ){
        rc = SQLITE_NOMEM;
      }else if( m ){
        m->key = k;
        m->keyId = r->key + 1;
      }
    }
  }
  if( rc ) return rc;
  *pKey = r->key;
  {
    const ProfsumSpan *s = &ev->aArg[PROFSUM_AK_STEP_NUM];
    int64_t v;
    int has = 0;
    if( s->type==PROFSUM_JT_NUMBER && profsumParseInt(s->z, s->n, &v)==0 ) has = 1;
    else if( s->type==PROFSUM_JT_STRING ){
      /* Python's int() of the decoded text ("\u0035", "6\n") */
      const char *z; int64_t n;
      if( profsumSpanText(s, ppB, pnB, &z, &n) ) return SQLITE_NOMEM;
      has = profsumPyInt(z, n, &v)==0;
    }
    /* rare (host `train` events): kept aside, by event */
    if( has && profsumEngSetStep(e, e->nEv, v) ) return SQLITE_NOMEM;
  }
  if( ev->tsRounded || ev->durRounded ){
    /* Rare but for converted XPlanes (17-digit µs texts): keep the text's
    ** doubles only when the rounded picoseconds give other doubles. */
    double pTs = profsumEngPsFloat(ev->ts), pDur = profsumEngPsFloat(ev->dur);
    double fTs = ev->tsRounded ? roundedDouble(ev->tsDigits, ev->tsExp, &ev->tsSpan, pTs) : pTs;
    double fDur = ev->durRounded ? roundedDouble(ev->durDigits, ev->durExp, &ev->durSpan, pDur) : pDur;
    e->anyRounded = 1;
    if( fTs!=pTs || fDur!=pDur ){
      if( floatPush(e, fTs, fDur) ) return SQLITE_NOMEM;
    }
  }
  /* the ordering's count of the track's events, here rather than in a
  ** pass over every record after the read */
  e->aTrk[e->lastTrk].nEv++;
  if( e->lastTrk<e->cntPrevTrk ) e->cntUngrouped = 1;
  e->cntPrevTrk = e->lastTrk;
  e->nCounted++;
  e->nEv++;
  return SQLITE_OK;
}

/* Count n time_rounded diagnostics that the scanner counted without
** passing them to engDiag (PROFSUM_SCAN_QUIETROUND, the compact set only):
** as engDiag would have, past the rows it keeps of the kind (the scanner
** counts only after its cap of details, PROFSUM_DIAG_DETAIL_CAP
** diagnostics of the kind went through engDiag, which registered the kind
** then if it had room). */
_Static_assert(ENG_DIAG_KEEP<=PROFSUM_DIAG_DETAIL_CAP, "engDiag keeps no row of those");
static void quietRoundedAdd(Engine *e, int64_t n){
  int k;
  if( n==0 ) return;
  for(k=0; k<e->nKind; k++){
    if( strcmp(e->aKind[k].zKind, "time_rounded")==0 ){ e->aKind[k].n += n; return; }
  }
}

/* What the reference's typed decoder rejects the whole file for in entry
** ev of phase ph (0: not one known character), counted once per entry
** (noteRejected; the first reason names it): a typed field of the wrong
** type that has its bad_field diagnostic (typedBadField: no other row);
** text it refuses in a field it decodes as str (refTextProblem); the first
** of a pid/tid that is not a JSON integer ("1", "Spans", 1.0), a string
** ts/dur, or what refTypeProblem finds; each of the last two with a
** reference_rejects diagnostic row (the quality warning points there). */
static void noteRefRejects(Engine *e, const ProfsumEvent *ev, char ph){
  const char *zText;
  /* the first reason counted names the entry in the warning (noteRejected
  ** counts an entry once); each has its row */
  if( ev->typedBadField ){
    /* its bad_field diagnostic is the row the warning points to */
    noteRejected(e, ev->idx, "bad_field");
  }
  if( (zText = refTextProblem(ev))!=0 ){
    char zD[200];
    sqlite3_snprintf(sizeof(zD), zD, "%s: the reference summarizer rejects the file "
                     "(its decoder refuses that text); profsum reads it with U+FFFD", zText);
    engDiag(e, ev->idx, ev->iOffset, "reference_rejects", zD);
    noteRejected(e, ev->idx, zText);
  }
  if( ev->pid.notJsonInt || ev->tid.notJsonInt ){
    engDiag(e, ev->idx, ev->iOffset, "reference_rejects",
            "pid/tid not a JSON integer: the reference summarizer rejects the file; "
            "profsum reads it as trace_events does (an integer string as that integer)");
    noteRejected(e, ev->idx, "pid/tid not a JSON integer");
  }else if( ev->timeNotNumber ){
    engDiag(e, ev->idx, ev->iOffset, "reference_rejects",
            "ts/dur not a JSON number: the reference summarizer rejects the file; "
            "profsum reads a number written as a string as that number");
    noteRejected(e, ev->idx, "ts/dur not a JSON number");
  }else{
    const char *zWhy = refTypeProblem(ev, ph);
    if( zWhy ){
      char zD[160];
      sqlite3_snprintf(sizeof(zD), zD, "%s: the reference summarizer rejects the file; "
                       "profsum reads the entry anyway", zWhy);
      engDiag(e, ev->idx, ev->iOffset, "reference_rejects", zD);
      noteRejected(e, ev->idx, zWhy);
    }
  }
}

/* Take the error of the track diagnostics d, if it has one, as *pzErr
** (the read pass's error; the one there before is freed). */
static void trackDiagErr(const ProfsumTrackDiag *d, char **pzErr){
  const char *z = profsumTrackDiagErr(d);
  if( z==0 ) return;
  sqlite3_free(*pzErr);
  *pzErr = sqlite3_mprintf("%s", z);
}

/* The read pass's next event (profsumScanNext's answer), from the scanner
** or, once the first MB told that scanning on a thread of its own pays
** (profsumScanPipeWanted; *pnAsk counts the events until then, -1
** after), from *ppPipe, which this starts. */
static int readNext(Engine *e, ProfsumScan *pScan, ProfsumScanPipe **ppPipe,
                    int64_t *pnAsk, ProfsumEvent **ppEv, char **pzErr){
  if( *pnAsk>=0 && ((*pnAsk)++ & 255)==0 ){
    int w = profsumScanPipeWanted(pScan);
    if( w>=0 ){
      *pnAsk = -1;
      if( w==1 ){
        int rc = profsumScanPipeOpen(pScan, e->zFunc, engDiag, e, ppPipe);
        if( rc ){
          *pzErr = sqlite3_mprintf("%s: out of memory for the scanning thread", e->zFunc);
          return rc;
        }
      }
    }
  }
  return *ppPipe ? profsumScanPipeNext(*ppPipe, ppEv, pzErr) : profsumScanNext(pScan, ppEv, pzErr);
}

/* Hand the members of the top-level object the scanner kept (all of the
** file read) to the insights, which keep what they say of the
** environment.  SQLITE_OK, or SQLITE_NOMEM with the engine's error set. */
static int engTopMembers(Engine *e, ProfsumScan *pScan, const char *zPath){
  int i, rc = SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<profsumScanTopCount(pScan); i++){
    const char *zK, *zV;
    int nV;
    profsumScanTopAt(pScan, i, &zK, &zV, &nV);
    rc = profsumInsJsonTop(e->pIns, zK, zV, nV);
    if( rc ) profsumEngErr(e, rc, "'%s': out of memory keeping the top-level member '%s'", zPath, zK);
  }
  return rc;
}

/* The read pass. */
int profsumEngRead(Engine *e, const char *zPath){
  ProfsumSrc *pSrc = 0;
  ProfsumScan *pScan = 0;
  ProfsumScanPipe *pPipe = 0;     /* the scanning on a thread of its own */
  int64_t nPipeAsk = 0;           /* events until it is decided, -1 after */
  ProfsumTrackDiag *pTd = 0;
  ProfsumEvent *ev;
  char *zErr = 0, *pB = 0;
  int64_t nB = 0;
  int rc = profsumSrcOpenFile(zPath, &pSrc, &zErr);
  if( rc ){
    profsumEngErr(e, rc, "%s", zErr ? zErr : sqlite3_errstr(rc));
    sqlite3_free(zErr);
    return rc;
  }
  rc = profsumSrcHashInit(pSrc);
  if( rc ){ profsumSrcClose(pSrc); return rc; }
  e->nFileBytes = profsumSrcFileSize(pSrc);
  {
    /* gzip is told by its content; the reference goes by the name */
    size_t n = strlen(zPath);
    int byName = n>=3 && strcmp(zPath+n-3, ".gz")==0;   /* Path.suffix, case and all */
    if( profsumSrcIsGzip(pSrc)!=byName ) e->gzipByContent = byName ? 2 : 1;
  }
  /* The compact set (QUIETROUND): engDiag keeps none of the time_rounded
  ** past the scanner's cap of details (it keeps ENG_DIAG_KEEP of a kind),
  ** so the scanner only counts those (the fast path of converted traces:
  ** one per event), and they are added below (quietRoundedAdd).  With
  ** store_diagnostics 'all', every diagnostic with its detail. */
  rc = profsumScanOpen(pSrc, e->zFunc, PROFSUM_SCAN_ARGKEYS
                       | (e->diagAll ? PROFSUM_SCAN_ALLDETAILS : PROFSUM_SCAN_QUIETROUND)
                       | PROFSUM_SCAN_NOPH       /* their typed fields checked below */
                       | PROFSUM_SCAN_TOPMEMBERS, /* the environment (insights) */
                       engDiag, e, &pScan, &zErr);
  if( rc==SQLITE_OK && e->nSkipArrays>0 ) profsumScanSkipArrays(pScan, e->nSkipArrays);
  if( rc==SQLITE_OK ) rc = profsumTrackDiagOpen(e->zFunc, zPath, engDiag, e, &pTd);
  while( rc==SQLITE_OK ){
    char ph;
    int32_t iKey = -1;      /* the event key of an X event taken */
    rc = readNext(e, pScan, &pPipe, &nPipeAsk, &ev, &zErr);
    if( rc!=SQLITE_ROW ) break;
    rc = SQLITE_OK;
    if( e->xStop && (ev->idx & 0x3fff)==0 && e->xStop(e->pStopArg) ){
      sqlite3_free(zErr);
      zErr = sqlite3_mprintf("%s: interrupted", e->zFunc);
      rc = SQLITE_INTERRUPT;
      break;
    }
    ph = (ev->ph.n==1 && !(ev->ph.flags & PROFSUM_SF_ESCAPE)) ? ev->ph.z[0] : 0;
    noteRefRejects(e, ev, ph);
    if( ev->ph.type!=PROFSUM_JT_STRING ) continue;   /* no "ph": checked only */
    if( ph=='M' ){
      rc = noteMeta(e, ev, &pB, &nB);
    }else if( ph=='X' ){
      /* dur > 0 as the reference's double: a positive text below half a
      ** picosecond (1e-13, left by float arithmetic in a converter) rounds
      ** to 0 ps but is a complete event there; its double is kept with
      ** the event (noteX), so nesting and gaps see it as the reference
      ** does, and it adds 0 ps to the exact sums. */
      double dTiny = (ev->hasDur && ev->dur==0 && ev->durRounded)
                     ? profsumTextDouble(ev->durSpan.z, ev->durSpan.n, 0.0) : 0.0;
      int durPositive = (ev->hasDur && (ev->dur>0 || dTiny>0)) || (ev->timeHuge & 2);
      if( ev->pid.kind==PROFSUM_ID_INT && ev->pid.iVal>=0
       && ev->tid.kind==PROFSUM_ID_INT && ev->tid.iVal>=0
       && ev->name.type==PROFSUM_JT_STRING && ev->name.n>0
       && durPositive ){
        if( ev->timeHuge & 3 ){
          /* a ts or dur of 1e32 µs or more: a complete event for the
          ** reference, which reads the number; no exact time here */
          noteLeftOut(e, ev->idx, "its ts or dur is 1e32 µs or more, past the exact times");
          engDiag(e, ev->idx, ev->iOffset, "time_out_of_range",
                  "complete event whose ts or dur is 1e32 µs or more: left out of the summary");
        }else if( !ev->hasTs && ev->tsPresent ){
          /* A ts that is there but is not a number ("NaN", null, 1e400, a
          ** word): the reference's typed decoder rejects the file (its
          ** lenient eras skipped the event); placing the event at ts 0 would
          ** be a wrong number in every time of its track, so it is left out,
          ** as trace_events leaves it off its track (column ts NULL). */
          noteLeftOut(e, ev->idx, "its ts is not a number");
          engDiag(e, ev->idx, ev->iOffset, "bad_ts",
                  "complete event whose ts is not a number: left out of the summary");
        }else{
          if( !ev->hasTs ){
            /* The reference's typed decoder defaults a missing ts to 0.0. */
            ev->ts = 0;
            ev->tsRounded = 0;
            engDiag(e, ev->idx, ev->iOffset, "missing_ts",
                    "complete event without ts: read as ts 0, the reference's default");
          }
          rc = noteX(e, ev, &pB, &nB, &iKey);
        }
      }else if( durPositive && (ev->pid.tooBig || ev->tid.tooBig)
             && ev->name.type==PROFSUM_JT_STRING && ev->name.n>0 ){
        /* a complete event for the reference, whose decoder reads any
        ** integer; no 64-bit pid/tid here (diagnostic id_out_of_range) */
        noteLeftOut(e, ev->idx, "its pid or tid is an integer outside the signed 64-bit range");
      }
      /* an X event with dur <= 0 is no complete event for the summary:
      ** its zero_duration or negative_duration row comes from the track
      ** diagnostics below, as profsum_diagnostics(path) lists it */
    }
    /* the track diagnostics of every event with a string ph (unknown_ph,
    ** zero and negative durations, the B/E pairing, ...) */
    if( rc==SQLITE_OK ){
      rc = profsumTrackDiagEvent(pTd, ev);
      if( rc ) trackDiagErr(pTd, &zErr);
    }
    /* the collectors of insights.h: every entry, with the key just made */
    if( rc==SQLITE_OK ) rc = profsumInsJsonEvent(e->pIns, ev, iKey);
    if( rc==SQLITE_OK && e->diagRc ) rc = e->diagRc;
  }
  sqlite3_free(pB);
  profsumEngSigFree(e);
  profsumScanPipeClose(pPipe);    /* the scanner's facts below are final */
  if( pScan ) quietRoundedAdd(e, profsumScanQuietRounded(pScan));
  if( rc==SQLITE_DONE ){
    /* the pairing of B and E events, once all are read */
    int rc2 = profsumTrackDiagFinish(pTd);
    if( rc2==SQLITE_OK && e->diagRc ) rc2 = e->diagRc;
    if( rc2 ){
      trackDiagErr(pTd, &zErr);
      rc = rc2;
    }
  }
  if( rc==SQLITE_DONE ){
    const char *zU = profsumScanDisplayTimeUnit(pScan);
    rc = profsumSrcHashHex(profsumScanSrc(pScan), e->zSha);
    if( rc ) profsumEngErr(e, rc, "'%s': cannot read the file to its end for its SHA-256", zPath);
    e->nEntries = profsumScanEntries(pScan);
    e->nEventArrays = profsumScanEventArrays(pScan);
    e->arrayForm = profsumScanIsArrayForm(pScan);
    if( rc==SQLITE_OK ) rc = engTopMembers(e, pScan, zPath);
    if( zU ){
      e->zUnit = sqlite3_mprintf("%s", zU);
      if( e->zUnit==0 ) rc = SQLITE_NOMEM;
    }
  }else if( rc ){
    sqlite3_free(*e->pzErr);
    *e->pzErr = zErr;
    zErr = 0;
  }
  sqlite3_free(zErr);
  profsumTrackDiagFree(pTd);
  profsumScanClose(pScan);
  return rc;
}

/* ------------------------------------------------------------------ */
/* The intake of other readers (engine_intake.h)                        */
/* ------------------------------------------------------------------ */


/* See engine_intake.h. */
const char *profsumEngFunc(ProfsumEngine *e){ return e->zFunc; }
int64_t profsumEngCount(ProfsumEngine *e){ return e->nEv; }
const char *profsumEngStr(ProfsumEngine *e, int32_t id){ return SP_STR(&e->pool, id); }

/* See engine_intake.h. */
int profsumEngThreadKind(ProfsumEngine *e, int32_t id){
  const char *z;
  int32_t n;
  if( id<0 ) return 0;
  z = SP_STR(&e->pool, id);
  n = SP_LEN(&e->pool, id);
  if( (n==7 && memcmp(z, "XLA Ops", 7)==0) || (n==13 && memcmp(z, "Async XLA Ops", 13)==0)
   || (n>=8 && memcmp(z, "Stream #", 8)==0) ){
    return PROFSUM_THREAD_DEVOP;
  }
  return n==5 && memcmp(z, "Steps", 5)==0 ? PROFSUM_THREAD_STEPS : 0;
}

/* See engine_intake.h. */
int profsumEngIntern(ProfsumEngine *e, const char *z, int64_t n, int32_t *pId){
  *pId = -1;
  if( n==0 ) return SQLITE_OK;
  *pId = profsumEngSpIntern(&e->pool, z, n);
  return *pId<0 ? SQLITE_NOMEM : SQLITE_OK;
}

/* See engine_intake.h. */
int profsumEngSig(ProfsumEngine *e, int32_t name, const char *z, int64_t n, int32_t *pId,
                  int32_t *pHm){
  ProfsumSpan sp;
  char *pB = 0; int64_t nB = 0;
  int rc;
  sp.z = z; sp.n = n; sp.type = PROFSUM_JT_STRING; sp.flags = 0;
  rc = sigOf(e, name, &sp, &pB, &nB, pId, pHm);
  sqlite3_free(pB);
  return rc;
}

/* See engine_intake.h. */
int profsumEngName(ProfsumEngine *e, int isThread, int64_t pid, int64_t tid, int32_t id){
  HEnt *h = isThread ? profsumEngHmGet(&e->threadMap, pid, tid, 1, 0) : profsumEngHmGet(&e->procMap, pid, 0, 1, 0);
  if( h==0 ) return SQLITE_NOMEM;
  h->v1 = id;
  return SQLITE_OK;
}

/* See engine_intake.h. */
void profsumEngDiag(ProfsumEngine *e, int64_t idx, int64_t off, const char *zKind, const char *zDetail){
  engDiagKeep(e, idx, off, zKind, zDetail);
}
int profsumEngDiagRc(ProfsumEngine *e){ return e->diagRc; }
int profsumEngDiagAll(ProfsumEngine *e){ return e->diagAll; }

/* See engine_intake.h. */
int profsumEngStopAsked(ProfsumEngine *e){
  return e->xStop && e->xStop(e->pStopArg);
}

/* See engine_intake.h. */
int profsumEngNewTrack(ProfsumEngine *e, int64_t pid, int64_t tid, int32_t proc, int32_t thread,
                       int32_t *pTrk){
  STrack *t;
  if( e->nTrk>=e->nAllocTrk ){
    int32_t nNew = e->nAllocTrk ? e->nAllocTrk*2 : 64;
    STrack *a = sqlite3_realloc64(e->aTrk, sizeof(STrack)*(sqlite3_uint64)nNew);
    if( a==0 ) return SQLITE_NOMEM;
    e->aTrk = a;
    e->nAllocTrk = nNew;
  }
  t = &e->aTrk[e->nTrk];
  memset(t, 0, sizeof(*t));
  t->pid = pid;
  t->tid = tid;
  t->proc = proc;
  t->thread = thread;
  *pTrk = e->nTrk++;
  return SQLITE_OK;
}

/* See engine_intake.h. */
void profsumEngTrackLineNs(ProfsumEngine *e, int32_t trk, int64_t tsNs){
  e->aTrk[trk].xpTsNs = tsNs;
  e->aTrk[trk].xpTsUs = (double)tsNs / 1000.0;
}

/* See engine_intake.h. */
int profsumEngAdd(ProfsumEngine *e, const ProfsumEngEvent *x, int32_t *pKey){
  SEv *r;
  int rc = evNew(e, x->idx, x->iOffset, x->ts, x->dur, &r);
  if( rc || r==0 ) return rc;
  if( (rc = profsumEngSetRun(e, e->nEv, x->runid))!=SQLITE_OK ) return rc;
  if( x->key>=0 ){
    r->key = x->key;
  }else{
    EvKey k;
    k.trk = x->trk;
    k.name = x->name;
    k.tfop = x->tfop;
    k.source = x->source;
    k.sig = x->sig;
    k.hostMem = x->hostMem;
    if( (r->key = keyIntern(e, &k))<0 ) return SQLITE_NOMEM;
  }
  *pKey = r->key;
  if( x->hasStep && profsumEngSetStep(e, e->nEv, x->step) ) return SQLITE_NOMEM;
  if( e->isXPlane ){
    /* its doubles are made again from its line's timestamp (xpTsOf) */
    STrack *t = &e->aTrk[x->trk];
    if( !t->xpHasBase ){
      t->xpBase = e->origin - (profsum_ps)t->xpTsNs*1000;
      t->xpHasBase = 1;
    }
    goto added;
  }
  /* its doubles: one aFloat entry per event (floatEntry's identity case) */
  if( floatPush(e, x->fTs, x->fDur) ) return SQLITE_NOMEM;
added:
  if( e->nEv==0 || x->fTs<e->xpTsMin ) e->xpTsMin = x->fTs;
  if( e->nEv==0 || x->fTs+x->fDur>e->xpEndMax ) e->xpEndMax = x->fTs + x->fDur;
  e->nEv++;
  return e->diagRc;
}

/* See engine_intake.h. */
int profsumEngFinish(ProfsumEngine *e, int64_t nEntries, const char *zUnit, const char *zSha,
                     int64_t nFileBytes, sqlite3_str *pWarn){
  e->nEntries = nEntries;
  memcpy(e->zSha, zSha, sizeof(e->zSha)-1);
  e->zSha[sizeof(e->zSha)-1] = 0;
  e->nFileBytes = nFileBytes;
  e->zUnit = sqlite3_mprintf("%s", zUnit);
  if( e->zUnit==0 ) return SQLITE_NOMEM;
  if( pWarn && sqlite3_str_length(pWarn)>0 ){
    e->zXpWarn = sqlite3_mprintf("%s", sqlite3_str_value(pWarn));
    if( e->zXpWarn==0 ) return SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

/* See engine_intake.h. */
void profsumEngWarnAppend(sqlite3_str *pW, const char *z, int64_t n){
  if( sqlite3_str_length(pW)>0 ) sqlite3_str_appendchar(pW, 1, ',');
  profsumEngJsonAppendStr(pW, z, n);
}

/* See engine_intake.h. */
int profsumEngSetError(ProfsumEngine *e, char *zErr){
  if( zErr ){
    sqlite3_free(*e->pzErr);
    *e->pzErr = zErr;
  }
  return SQLITE_OK;
}
