/*
** compare.c — the documents of a comparison: compare_profile_summaries
** (tools-spec §3), assess_profile_regression with its thresholds (§4.1)
** and the regression record (§4.2), as pure functions over trees (see
** compare.h).  Nothing here reads the database or a file: the SQL
** functions that build the documents from imported traces and store or
** write the results are in pair.c, history.c and bundle.c.
**
** Semantics: docs/spec/tools.md §3, §4.1, §4.2.
** The documents compared are profile_summary.v1 trees (summary_doc.c),
** read leniently: a missing member is None.  Numbers keep Python's
** int/float distinction (Num below), so that every result dumps as
** Python's json.dumps() writes the reference tool's.
*/
#include "profsum_int.h"
#include "compare.h"
#include "history_int.h"
#include "jsontree.h"
#include "funcs.h"
#include "pycompat.h"
#include "sqlcall.h"

#include <stdlib.h>
#include <string.h>

/* ================================================================== */
/* JSON helpers                                                        */
/* ================================================================== */

/* Clone of member zKey of object pObj (null when absent). */
static JNode *cloneMember(const JNode *pObj, const char *zKey){
  return jClone(jGet(pObj, zKey));
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
    const char *z = profsumMemberStr(o, zKey);
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
    const char *zName = profsumMemberStr(op, "name"), *zFam = "other";
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

/* Rows {name, before, after, delta} of a[:topK] (Python's slice: the
** first topK rows, or with a negative topK all but the last -topK;
** profsumTopKLen). */
static JNode *opRows(const OpDelta *a, int n, int topK){
  JNode *arr = jArr();
  int i, nRow = profsumTopKLen(n, topK);
  for(i=0; i<nRow; i++){
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
