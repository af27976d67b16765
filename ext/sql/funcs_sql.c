#include "profsum_int.h"
#include "utf8rule.h"
/*
** funcs_sql.c — the pure SQL functions of profsum (no I/O, no state):
** the SQL face of the op-name rules of ext/summary/oprules.c and of the
** exclusive time of ext/summary/exclusive.c (both declared in funcs.h).
**
** Usage:
**
**   SELECT classify_op('all-reduce.1');                      -- 'communication'
**   SELECT classify_op(name, process_name) FROM trace_events('t.json.gz');
**   SELECT classify_op(name, process_name, thread_name) ...; -- NULL on 'Steps'
**   SELECT tf_region('jit(_train_step)/shard_map/apply_rotary_embedding/pallas_call');
**                                               -- '_train_step=>apply_rotary_embedding'
**   SELECT tf_region(tf_op, 1) ...;                          -- first part only
**   SELECT profsum_canonical_op('%fusion.12');               -- 'fusion'
**   SELECT profsum_collective('ncclDevKernel_AllGather_RING_LL'); -- 'all-gather'
**   SELECT profsum_semantic_family('add', 'jit(train_step)/apply_updates/add');
**                                                            -- 'optimizer_apply'
**   SELECT profsum_shape_signature('%dot.1 = f32[8,8]{1,0} dot(f32[8,8] %lhs)');
**                                                            -- '8,8'
**   SELECT profsum_flop_proxy('other', '8,8');               -- 64
**   SELECT profsum_format_near(20.026, 1, 5);                -- '20.03'
**   SELECT exclusive_time(ts, dur) OVER (PARTITION BY pid, tid ORDER BY idx
**          ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
**     FROM trace_events('t.json.gz') WHERE ph = 'X';
**
** Functions (all SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS: pure,
** so they are safe in views, triggers, indexes and generated columns):
**
**   classify_op(name)                      op category (§1.4): stall,
**                                          communication or compute
**   classify_op(name, process_name)        event category (§1.4): stall,
**                                          host, communication, compute, other
**   classify_op(name, process_name, thread_name)
**                                          the same, NULL on a 'Steps' thread
**   tf_region(tf_op [, depth])             §4.9 rule-1 parts joined by '=>'
**                                          (the first depth parts), NULL when
**                                          nothing remains; depth < 1 is an
**                                          error
**   profsum_canonical_op(name)             §1.4 canonical op name
**   profsum_collective(name)               §4.7 collective, NULL if name is
**                                          not a communication name
**   profsum_semantic_family(name [, tf_op_path])
**                                          §4.6 family, extended list
**   profsum_shape_signature(long_name)     §4.6 shape signature or NULL
**   profsum_flop_proxy(family, signature)  §4.6 flop proxy: INTEGER, REAL if
**                                          it overflows int64, or NULL
**   profsum_format_near(x, decimals, step) x as text, with more decimals when
**                                          it would read as the multiple of
**                                          step it is not (KPI texts)
**   exclusive_time(ts, dur) OVER (...)     §2 exclusive time (window function)
**
** A NULL in a text argument gives NULL (tf_region: a NULL depth too).
** Numbers given as text arguments are read as their text.
**
** Sections are those of docs/spec/summary.md; the choices the rules make
** where the spec leaves room are told in oprules.c.
**
** exclusive_time.  Only the frame in the usage line above is supported.
** SQLite steps the whole partition and then asks for the value once per row
** in ORDER BY order (checked with SQLite 3.40), so the first xValue computes
** §2 for the partition and the i-th xValue returns row i.  Rows whose ts or
** dur is NULL, or whose dur < 0, get NULL and take no part; rows with dur
** exactly 0 get 0 and take no part (a zero-length slice contains nothing
** and adds nothing to its parent).  Ties in
** (ts, end) keep the ORDER BY order.  All-INTEGER input is computed exactly
** in int64 and gives INTEGER; if any non-NULL input is REAL the partition
** is computed in double, as the reference does, and gives REAL.  Running
** frames (xStep after xValue), sliding frames (xInverse), EXCLUDE (xFinal
** used as the value) and plain aggregate use are errors naming the
** required form; RANGE/GROUPS UNBOUNDED..UNBOUNDED with an ORDER BY give
** the same numbers (one xValue per row).  Without ORDER BY every row is a
** peer: SQLite calls xValue once per partition and copies that value to
** every row, and ignores an error set in xFinal then, so such a query is
** wrong without an error (checked with SQLite 3.40; documented in
** docs/functions.md, nothing here can detect it).  TEXT and BLOB inputs are
** errors.
*/
#include "funcs.h"
#include "nearfmt.h"

#include <math.h>
#include <string.h>

typedef unsigned char u8;

#define ArraySize(X) ((int)(sizeof(X)/sizeof((X)[0])))

/* The one window frame exclusive_time() supports. */
#define EXCL_FRAME "OVER (PARTITION BY pid, tid ORDER BY idx ROWS BETWEEN " \
                   "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)"
#define EXCL_FRAME_ERR "exclusive_time: requires the frame " EXCL_FRAME

/* One input number. */
typedef union ExclNum ExclNum;
union ExclNum {
  int64_t i;                    /* SQLITE_INTEGER */
  double r;                     /* SQLITE_FLOAT */
};

/* One stepped row.  After the computation, ts holds the result and eTs
** says its type (SQLITE_NULL for no value). */
typedef struct ExclRow ExclRow;
struct ExclRow {
  ExclNum ts, dur;              /* Arguments */
  u8 eTs, eDur;                 /* SQLITE_INTEGER, SQLITE_FLOAT or SQLITE_NULL */
};

/* Aggregate context of exclusive_time(): one partition. */
typedef struct ExclState ExclState;
struct ExclState {
  ExclRow *aRow;                /* Rows in partition order (sqlite3_malloc) */
  int nRow;                     /* Rows stepped */
  int nAlloc;                   /* Capacity of aRow[] */
  int bReal;                    /* Some non-NULL argument was REAL */
  int nValue;                   /* xValue calls so far */
  int bErr;                     /* An error was reported; state is freed */
};

/* Most rows one partition may hold (keeps every size in an int). */
#define EXCL_MAX_ROWS 0x3FFFFFFF

/* Free the rows of p (the context itself belongs to SQLite). */
static void exclStateFree(ExclState *p){
  sqlite3_free(p->aRow);
  p->aRow = 0;
  p->nRow = 0;
  p->nAlloc = 0;
}

/* Report an error on ctx with the static message zMsg and drop the state. */
static void exclFail(sqlite3_context *ctx, ExclState *p, const char *zMsg){
  sqlite3_result_error(ctx, zMsg, -1);
  if( p ){
    exclStateFree(p);
    p->bErr = 1;
  }
}

/* True if row r takes part in §2: ts and dur present and dur > 0. */
static int exclRowValid(const ExclRow *r){
  if( r->eTs==SQLITE_NULL || r->eDur==SQLITE_NULL ) return 0;
  return r->eDur==SQLITE_INTEGER ? r->dur.i>0 : r->dur.r>0.0;
}

/* True if row r is a zero-length slice (ts present, dur exactly 0): it
** takes no part in nesting (it can contain nothing and adds nothing to
** its parent) and its exclusive time is 0. */
static int exclRowZero(const ExclRow *r){
  if( r->eTs==SQLITE_NULL || r->eDur==SQLITE_NULL ) return 0;
  return r->eDur==SQLITE_INTEGER ? r->dur.i==0 : r->dur.r==0.0;
}

/*
** Compute §2 for the collected partition and store each row's result in
** its ts field (eTs = result type, SQLITE_NULL for none).  SQLITE_OK or
** SQLITE_NOMEM.
*/
static int exclCompute(ExclState *p){
  int i, n, nValid = 0, rc;
  double *aR = 0;               /* bReal: ts, dur and result of each valid row */
  int64_t *aI = 0;              /* else the same as integers */
  for(i=0; i<p->nRow; i++) nValid += exclRowValid(&p->aRow[i]);
  if( p->bReal ) aR = sqlite3_malloc64(sizeof(double)*3*(sqlite3_uint64)(nValid ? nValid : 1));
  else aI = sqlite3_malloc64(sizeof(int64_t)*3*(sqlite3_uint64)(nValid ? nValid : 1));
  if( aR==0 && aI==0 ) return SQLITE_NOMEM;
  for(i=0, n=0; i<p->nRow; i++){
    ExclRow *r = &p->aRow[i];
    if( !exclRowValid(r) ) continue;
    if( aR ){
      aR[n] = r->eTs==SQLITE_INTEGER ? (double)r->ts.i : r->ts.r;
      aR[nValid+n] = r->eDur==SQLITE_INTEGER ? (double)r->dur.i : r->dur.r;
    }else{
      aI[n] = r->ts.i;
      aI[nValid+n] = r->dur.i;
    }
    n++;
  }
  if( aR ) rc = profsumExclusiveDouble(nValid, aR, aR+nValid, aR+2*nValid);
  else rc = profsumExclusiveInt64(nValid, aI, aI+nValid, aI+2*nValid);
  /* the result of each row: its exclusive time, 0 for a zero-length
  ** slice, NULL for the others */
  for(i=0, n=0; rc==SQLITE_OK && i<p->nRow; i++){
    ExclRow *r = &p->aRow[i];
    int bValid = exclRowValid(r);
    if( !bValid && !exclRowZero(r) ){ r->eTs = SQLITE_NULL; continue; }
    if( aR ) r->ts.r = bValid ? aR[2*nValid+n] : 0.0;
    else r->ts.i = bValid ? aI[2*nValid+n] : 0;
    r->eTs = aR ? SQLITE_FLOAT : SQLITE_INTEGER;
    n += bValid;
  }
  sqlite3_free(aR);
  sqlite3_free(aI);
  return rc;
}

/*
** Read argument v (named zArg) of exclusive_time() into *pNum / *peType.
** Returns 0, or 1 after reporting an error (TEXT or BLOB).
*/
static int exclReadArg(sqlite3_context *ctx, ExclState *p, sqlite3_value *v,
                       const char *zArg, ExclNum *pNum, u8 *peType){
  char *zMsg;
  switch( sqlite3_value_type(v) ){
    case SQLITE_INTEGER:
      pNum->i = sqlite3_value_int64(v);
      *peType = SQLITE_INTEGER;
      return 0;
    case SQLITE_FLOAT:
      pNum->r = sqlite3_value_double(v);
      *peType = SQLITE_FLOAT;
      p->bReal = 1;
      return 0;
    case SQLITE_NULL:
      pNum->i = 0;
      *peType = SQLITE_NULL;
      return 0;
    case SQLITE_TEXT:
      /* the text quoted up to 80 bytes (a cut sequence reads as U+FFFD) */
      zMsg = profsumUtf8Scrub(sqlite3_mprintf("exclusive_time: %s must be a number or NULL, "
                             "got text '%.80s'%s", zArg, sqlite3_value_text(v),
                             sqlite3_value_bytes(v)>80 ? " (cut)" : ""));
      break;
    default:
      zMsg = sqlite3_mprintf("exclusive_time: %s must be a number or NULL, "
                             "got a blob", zArg);
      break;
  }
  if( zMsg==0 ){
    sqlite3_result_error_nomem(ctx);
    exclStateFree(p);
    p->bErr = 1;
  }else{
    exclFail(ctx, p, zMsg);
    sqlite3_free(zMsg);
  }
  return 1;
}

/* xStep: collect (ts, dur) of the next row of the partition. */
static void exclStep(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ExclState *p = sqlite3_aggregate_context(ctx, sizeof(ExclState));
  ExclRow row;
  (void)argc;
  if( p==0 ){ sqlite3_result_error_nomem(ctx); return; }
  if( p->bErr ) return;
  if( p->nValue>0 ){ exclFail(ctx, p, EXCL_FRAME_ERR); return; }
  if( exclReadArg(ctx, p, argv[0], "ts", &row.ts, &row.eTs) ) return;
  if( exclReadArg(ctx, p, argv[1], "dur", &row.dur, &row.eDur) ) return;
  if( p->nRow>=p->nAlloc ){
    int nNew = p->nAlloc ? p->nAlloc*2 : 64;
    ExclRow *aNew;
    if( p->nRow>=EXCL_MAX_ROWS ){
      exclFail(ctx, p, "exclusive_time: too many rows in one partition");
      return;
    }
    if( nNew>EXCL_MAX_ROWS ) nNew = EXCL_MAX_ROWS;
    aNew = sqlite3_realloc64(p->aRow, sizeof(ExclRow)*(sqlite3_uint64)nNew);
    if( aNew==0 ){
      sqlite3_result_error_nomem(ctx);
      exclStateFree(p);
      p->bErr = 1;
      return;
    }
    p->aRow = aNew;
    p->nAlloc = nNew;
  }
  p->aRow[p->nRow++] = row;
}

/* xValue: the result of the next row (computing all of them first). */
static void exclValue(sqlite3_context *ctx){
  ExclState *p = sqlite3_aggregate_context(ctx, 0);
  ExclRow *r;
  if( p==0 || p->bErr ) return;   /* No row stepped (FILTER): NULL */
  if( p->nValue==0 && exclCompute(p)!=SQLITE_OK ){
    sqlite3_result_error_nomem(ctx);
    exclStateFree(p);
    p->bErr = 1;
    return;
  }
  if( p->nValue>=p->nRow ){
    exclFail(ctx, p, "exclusive_time: more rows than were stepped (FILTER is "
                     "not supported); requires the frame " EXCL_FRAME);
    return;
  }
  r = &p->aRow[p->nValue++];
  if( r->eTs==SQLITE_INTEGER ){
    sqlite3_result_int64(ctx, r->ts.i);
  }else if( r->eTs==SQLITE_FLOAT ){
    sqlite3_result_double(ctx, r->ts.r);
  }
}

/* xInverse: only sliding frames remove rows; they are not supported. */
static void exclInverse(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  exclFail(ctx, sqlite3_aggregate_context(ctx, 0), EXCL_FRAME_ERR);
}

/* xFinal: end of the partition; free everything.  Reached without any
** xValue only in aggregate use or with an EXCLUDE clause (SQLite then uses
** xFinal as each row's value): an error. */
static void exclFinal(sqlite3_context *ctx){
  ExclState *p = sqlite3_aggregate_context(ctx, 0);
  if( p==0 ) return;
  if( p->nValue==0 && !p->bErr ) sqlite3_result_error(ctx, EXCL_FRAME_ERR, -1);
  exclStateFree(p);
}

/* =====================================================================
** SQL wrappers
*/

/*
** Text of argument v and its length in *pn.  Returns 0 for NULL (and
** reports SQLITE_NOMEM on ctx if a non-NULL value could not be converted,
** with *pbErr set).
*/
static const char *argText(sqlite3_context *ctx, sqlite3_value *v, int *pn,
                           int *pbErr){
  const char *z;
  *pn = 0;
  if( sqlite3_value_type(v)==SQLITE_NULL ) return 0;
  z = (const char*)sqlite3_value_text(v);
  if( z==0 ){
    sqlite3_result_error_nomem(ctx);
    *pbErr = 1;
    return 0;
  }
  *pn = sqlite3_value_bytes(v);
  return z;
}

/* classify_op(name [, process_name [, thread_name]]): NULL for a NULL
** name or a 'Steps' thread; a NULL process_name or thread_name is not
** known (neither host nor device; not 'Steps'), as docs/functions.md
** says. */
static void classifyOpFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int nName, nProc = 0, nThread, bErr = 0;
  const char *zName, *zProc = 0, *zThread;
  if( argc>=3 ){
    zThread = argText(ctx, argv[2], &nThread, &bErr);
    if( bErr ) return;
    if( zThread && nThread==5 && memcmp(zThread, "Steps", 5)==0 ) return;
  }
  zName = argText(ctx, argv[0], &nName, &bErr);
  if( zName==0 ) return;
  if( argc==1 ){
    sqlite3_result_text(ctx, profsumOpCategory(zName, nName), -1, SQLITE_STATIC);
    return;
  }
  zProc = argText(ctx, argv[1], &nProc, &bErr);
  if( bErr ) return;
  sqlite3_result_text(ctx, profsumEventCategory(zName, nName, zProc, nProc),
                      -1, SQLITE_STATIC);
}

/* tf_region(tf_op [, depth]) */
static void tfRegionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ProfsumParts parts;
  sqlite3_int64 iDepth = 0;
  int n, nOut, bErr = 0;
  const char *z;
  char *zOut;
  if( argc>=2 ){
    int eType = sqlite3_value_numeric_type(argv[1]);
    if( eType==SQLITE_NULL ) return;
    if( eType==SQLITE_INTEGER ){
      iDepth = sqlite3_value_int64(argv[1]);
    }else if( eType==SQLITE_FLOAT ){
      double r = sqlite3_value_double(argv[1]);
      iDepth = (r>=1.0 && r<=2147483647.0 && r==(double)(sqlite3_int64)r)
             ? (sqlite3_int64)r : 0;
    }
    if( iDepth<1 ){
      profsumCtxErr(ctx, "tf_region: depth must be a positive integer, got '%s'",
                    sqlite3_value_text(argv[1]));
      return;
    }
    if( iDepth>0x7FFFFFFF ) iDepth = 0x7FFFFFFF;
  }
  z = argText(ctx, argv[0], &n, &bErr);
  if( z==0 || n==0 ) return;
  profsumPartsInit(&parts);
  if( profsumTfOpParts(z, n, &parts) ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( parts.nPart>0 ){
    zOut = profsumPartsJoin(&parts, (int)iDepth, &nOut);
    if( zOut==0 ){
      sqlite3_result_error_nomem(ctx);
    }else{
      sqlite3_result_text(ctx, zOut, nOut, sqlite3_free);
    }
  }
  profsumPartsClear(&parts);
}

/* profsum_canonical_op(name) */
static void canonicalOpFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int n, bErr = 0;
  const char *z = argText(ctx, argv[0], &n, &bErr);
  ProfsumSlice s;
  (void)argc;
  if( z==0 ) return;
  s = profsumCanonicalOp(z, n);
  sqlite3_result_text(ctx, s.z, s.n, SQLITE_TRANSIENT);
}

/* profsum_collective(name) */
static void collectiveFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int n, bErr = 0;
  const char *z = argText(ctx, argv[0], &n, &bErr);
  const char *zColl;
  (void)argc;
  if( z==0 ) return;
  zColl = profsumCollective(z, n);
  if( zColl ) sqlite3_result_text(ctx, zColl, -1, SQLITE_STATIC);
}

/* profsum_semantic_family(name [, tf_op_path]): NULL for a NULL name; a
** NULL tf_op_path is no path (the one-argument result). */
static void semanticFamilyFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int nName, nPath = 0, bErr = 0;
  const char *zName = argText(ctx, argv[0], &nName, &bErr);
  const char *zPath = 0, *zFamily;
  if( zName==0 ) return;
  if( argc>=2 ){
    zPath = argText(ctx, argv[1], &nPath, &bErr);
    if( bErr ) return;
  }
  if( profsumSemanticFamily(zName, nName, zPath, nPath, &zFamily) ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, zFamily, -1, SQLITE_STATIC);
}

/* profsum_shape_signature(long_name) */
static void shapeSignatureFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int n, nSig, bErr = 0;
  const char *z = argText(ctx, argv[0], &n, &bErr);
  char *zSig;
  (void)argc;
  if( z==0 ) return;
  if( profsumShapeSignature(z, n, &zSig, &nSig) ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( zSig ) sqlite3_result_text(ctx, zSig, nSig, sqlite3_free);
}

/* profsum_flop_proxy(family, signature) */
static void flopProxyFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int nFam, nSig, bErr = 0, eRes;
  const char *zFam = argText(ctx, argv[0], &nFam, &bErr);
  const char *zSig;
  int64_t iVal = 0;
  double rVal = 0.0;
  (void)argc;
  if( zFam==0 ) return;
  zSig = argText(ctx, argv[1], &nSig, &bErr);
  if( zSig==0 ) return;
  eRes = profsumFlopProxy(zFam, nFam, zSig, nSig, &iVal, &rVal);
  if( eRes==PROFSUM_FLOP_INT ) sqlite3_result_int64(ctx, iVal);
  if( eRes==PROFSUM_FLOP_REAL ) sqlite3_result_double(ctx, rVal);
}

/* profsum_format_near(x, decimals, step): x as text, with more decimals
** where `decimals` would make it read as the multiple of step it is not
** (profsumStrAppendNear); NULL when x is NULL. */
static void formatNearFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3_str *s;
  int k;
  (void)argc;
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return;
  for(k=0; k<3; k++){
    /* numbers only (a text that reads as one counts: SQLite's affinity),
    ** not 'abc' read as 0; decimals an integer 0..9, step finite */
    int t = sqlite3_value_numeric_type(argv[k]);
    double d = sqlite3_value_double(argv[k]);
    if( (t!=SQLITE_INTEGER && t!=SQLITE_FLOAT) || (k==2 && !isfinite(d))
     || (k==1 && (t!=SQLITE_INTEGER || sqlite3_value_int64(argv[1])<0 || sqlite3_value_int64(argv[1])>9)) ){
      profsumCtxErr(ctx, "profsum_format_near: %s must be %s", k==0 ? "x" : k==1 ? "decimals" : "step",
                    k==1 ? "an integer from 0 to 9" : k==0 ? "a number" : "a finite number");
      return;
    }
  }
  s = sqlite3_str_new(sqlite3_context_db_handle(ctx));
  profsumStrAppendNear(s, sqlite3_value_double(argv[0]), sqlite3_value_int(argv[1]),
                       sqlite3_value_double(argv[2]));
  if( sqlite3_str_errcode(s) ){
    sqlite3_free(sqlite3_str_finish(s));
    sqlite3_result_error_nomem(ctx);
    return;
  }
  sqlite3_result_text(ctx, sqlite3_str_finish(s), -1, sqlite3_free);
}

/* =====================================================================
** Registration
*/

/* Pure functions: same result for the same arguments, no side effects.
** DETERMINISTIC lets SQLite use them in indexes and factor them out;
** INNOCUOUS lets views and triggers of an untrusted schema call them. */
#define PROFSUM_PURE (SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS)

/* The scalar functions of this file. */
static const struct {
  const char *zName;            /* SQL name */
  signed char nArg;             /* Number of arguments */
  int flags;                    /* Encoding and trust flags */
  void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
} aFunc[] = {
  { "classify_op",             1, PROFSUM_PURE, classifyOpFunc },
  { "classify_op",             2, PROFSUM_PURE, classifyOpFunc },
  { "classify_op",             3, PROFSUM_PURE, classifyOpFunc },
  { "tf_region",               1, PROFSUM_PURE, tfRegionFunc },
  { "tf_region",               2, PROFSUM_PURE, tfRegionFunc },
  { "profsum_canonical_op",    1, PROFSUM_PURE, canonicalOpFunc },
  { "profsum_collective",      1, PROFSUM_PURE, collectiveFunc },
  { "profsum_semantic_family", 1, PROFSUM_PURE, semanticFamilyFunc },
  { "profsum_semantic_family", 2, PROFSUM_PURE, semanticFamilyFunc },
  { "profsum_shape_signature", 1, PROFSUM_PURE, shapeSignatureFunc },
  { "profsum_flop_proxy",      2, PROFSUM_PURE, flopProxyFunc },
  { "profsum_format_near",     3, PROFSUM_PURE, formatNearFunc },
};

/*
** Register the functions of this file on db.  Returns SQLITE_OK, or the
** first failure's code with *pzErr (if pzErr is not 0) set to a
** sqlite3_malloc'd message naming the function.
*/
int profsumRegisterFuncs(sqlite3 *db, char **pzErr){
  int rc = SQLITE_OK, k;
  const char *zFailed = 0;
  for(k=0; k<ArraySize(aFunc) && rc==SQLITE_OK; k++){
    rc = sqlite3_create_function(db, aFunc[k].zName, aFunc[k].nArg,
                                 aFunc[k].flags, 0, aFunc[k].xFunc, 0, 0);
    if( rc ) zFailed = aFunc[k].zName;
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_window_function(db, "exclusive_time", 2, PROFSUM_PURE,
                                        0, exclStep, exclFinal, exclValue,
                                        exclInverse, 0);
    if( rc ) zFailed = "exclusive_time";
  }
  if( rc && pzErr ){
    sqlite3_free(*pzErr);
    *pzErr = sqlite3_mprintf("profsum: cannot register %s(): %s", zFailed,
                             sqlite3_errmsg(db));
  }
  return rc;
}

