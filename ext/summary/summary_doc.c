/*
** summary_doc.c — stage B of the summary: aggregates + knobs → the
** profile_summary.v1 document (summary-v1-spec.md §3–§4), its markdown
** report (summary-v1-tools-spec.md §5) and the knob-dependent section
** tables (profsum_sec_*).
**
**   SELECT profsum_summary_json('baseline');                  -- import knobs
**   SELECT profsum_summary_json(1, '{"hot_op_limit": 5}');   -- other knobs
**   SELECT profsum_report_md('baseline', 10);
**   SELECT profsum_json_pretty('{"b":1,"a":[2.0]}');          -- Python json.dumps(indent=2, sort_keys=True)
**
** The document is built as a JSON tree (jsontree.c) from profsum_trace and
** the profsum_agg_* tables, so any knob can be applied again without the
** trace.  A trace imported from a v1 file returns that file's document,
** written as the reference writes a summary it read (indent 2, sorted
** keys, Python's number and escape forms), whatever the file's layout.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "jsontree.h"
#include "funcs.h"
#include "doc_int.h"
#include "report_util.h"
#include "sqlcall.h"
#include "pycompat.h"         /* profsumPyPathStr */

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ProfsumDoc {
  JNode *pRoot;         /* the document */
  char *zStored;        /* text of a stored v1 document (or 0) */
  JArena *pArena;       /* where pRoot's nodes lie (docBuild), or 0 */
};

/* ------------------------------------------------------------------ */
/* Statistics                                                          */
/* ------------------------------------------------------------------ */
static int cmpDouble(const void *pa, const void *pb){
  double a = *(const double*)pa, b = *(const double*)pb;
  return a<b ? -1 : (a>b);
}

/* numpy 'linear' quantile of sorted v[0..n). */
static double quantile(const double *v, int n, double q){
  double pos, w;
  int lo, hi;
  if( n==1 ) return v[0];
  pos = (double)(n-1)*q;
  lo = (int)floor(pos);
  hi = lo+1 < n-1 ? lo+1 : n-1;
  w = pos - lo;
  return v[lo]*(1.0-w) + v[hi]*w;
}

/* DurationStats of values a[0..n) (copied and sorted), and their median
** in *pMedian (if not 0; 0.0 when n is 0 or memory ran out: the result is
** then marked, see jOom). */
static JNode *durationStats(const double *a, int n, double *pMedian){
  JNode *o = jObj();
  double *v, sum = 0.0;
  int i;
  jSetLit(o, "count", jInt(n));
  if( n==0 ){
    jSetLit(o, "mean", jNull()); jSetLit(o, "median", jNull()); jSetLit(o, "p90", jNull());
    jSetLit(o, "min", jNull()); jSetLit(o, "max", jNull());
    if( pMedian ) *pMedian = 0.0;
    return o;
  }
  v = sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)n);
  if( v==0 ){
    if( pMedian ) *pMedian = 0.0;
    if( o ) o->oom = 1;
    return o;
  }
  memcpy(v, a, sizeof(double)*(size_t)n);
  qsort(v, (size_t)n, sizeof(double), cmpDouble);
  for(i=0; i<n; i++) sum += v[i];
  jSetLit(o, "mean", jReal(sum/(double)n));
  jSetLit(o, "median", jReal(quantile(v, n, 0.5)));
  jSetLit(o, "p90", jReal(quantile(v, n, 0.9)));
  jSetLit(o, "min", jReal(v[0]));
  jSetLit(o, "max", jReal(v[n-1]));
  if( pMedian ) *pMedian = quantile(v, n, 0.5);
  sqlite3_free(v);
  return o;
}

/* qsort order of 64-bit integers. */
static int cmpInt64(const void *pa, const void *pb){
  sqlite3_int64 a = *(const sqlite3_int64*)pa, b = *(const sqlite3_int64*)pb;
  return a<b ? -1 : (a>b);
}

/* One step class (typical/light/heavy) over the given steps. */
static JNode *stepClass(const char *zName, const sqlite3_int64 *aStep, const double *aDur,
                        int n, int nSteady, int wantPeriod){
  JNode *o = jObj();
  double med = 0.0;
  int i, best = -1;
  jSetLit(o, "name", jStr(zName, -1));
  jSetLit(o, "count", jInt(n));
  jSetLit(o, "fraction_of_steady", jReal(nSteady ? (double)n/(double)nSteady : 0.0));
  jSetLit(o, "duration_stats", durationStats(aDur, n, &med));
  for(i=0; i<n; i++){
    double d = fabs(aDur[i]-med), db = best>=0 ? fabs(aDur[best]-med) : 0.0;
    if( best<0 || d<db || (d==db && aStep[i]<aStep[best]) ) best = i;
  }
  jSetLit(o, "representative_step", best>=0 ? jInt(aStep[best]) : jNull());
  jSetLit(o, "representative_duration", best>=0 ? jReal(aDur[best]) : jNull());
  if( wantPeriod && n>=3 ){
    /* Most frequent difference > 1 between sorted step numbers (ties: the
    ** smallest), by sorting: a heavy class can hold most of a trace's
    ** steps (a count per difference was quadratic in them). */
    sqlite3_int64 *s = sqlite3_malloc64(sizeof(sqlite3_int64)*(sqlite3_uint64)n);
    sqlite3_int64 *d = sqlite3_malloc64(sizeof(sqlite3_int64)*(sqlite3_uint64)n);
    int nd = 0, j, bestN = 0;
    sqlite3_int64 bestD = 0;
    if( s==0 || d==0 ){ sqlite3_free(s); sqlite3_free(d); o->oom = 1; return o; }
    memcpy(s, aStep, sizeof(sqlite3_int64)*(size_t)n);
    qsort(s, (size_t)n, sizeof(sqlite3_int64), cmpInt64);
    for(i=1; i<n; i++){
      /* in unsigned arithmetic: steady steps are >= 0 (warmup_steps is),
      ** so a difference fits; one past 2^63 would be no period */
      sqlite3_uint64 u = (sqlite3_uint64)s[i] - (sqlite3_uint64)s[i-1];
      if( u>1 && u<=(sqlite3_uint64)INT64_MAX ) d[nd++] = (sqlite3_int64)u;
    }
    if( nd>=2 ){
      qsort(d, (size_t)nd, sizeof(sqlite3_int64), cmpInt64);
      for(i=0; i<nd; i=j){
        for(j=i+1; j<nd && d[j]==d[i]; j++){}
        if( j-i>bestN ){ bestN = j-i; bestD = d[i]; }   /* ascending: ties keep the smallest */
      }
    }
    sqlite3_free(s); sqlite3_free(d);
    jSetLit(o, "periodicity", (nd>=2 && bestN>=2) ? jInt(bestD) : jNull());
  }else{
    jSetLit(o, "periodicity", jNull());
  }
  return o;
}

/* 2-means on log durations (§4.3).  Fills aLab (0/1) and returns 1 with
** *pLowLabel, 0 when there is no split, or -1 when out of memory (not "no
** split": the document would then say "typical" where it has classes). */
static int kmeans2(const double *aDur, int n, int *aLab, int *pLowLabel){
  double mn = aDur[0], mx = aDur[0], a, b;
  double *x;
  int i, it, n0, n1;
  if( n<6 ) return 0;
  for(i=1; i<n; i++){ if( aDur[i]<mn ) mn = aDur[i]; if( aDur[i]>mx ) mx = aDur[i]; }
  if( mn<=0 || mx/mn<1.25 ) return 0;
  x = sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)n);
  if( x==0 ) return -1;
  for(i=0; i<n; i++){ x[i] = log(aDur[i]); aLab[i] = 0; }
  a = x[0]; b = x[0];
  for(i=1; i<n; i++){ if( x[i]<a ) a = x[i]; if( x[i]>b ) b = x[i]; }
  for(it=0; it<40; it++){
    int changed = 0;
    double s0 = 0, s1 = 0, na, nb;
    n0 = n1 = 0;
    for(i=0; i<n; i++){
      int l = fabs(x[i]-a) <= fabs(x[i]-b) ? 0 : 1;
      if( l!=aLab[i] ) changed = 1;
      aLab[i] = l;
      if( l ){ s1 += x[i]; n1++; } else { s0 += x[i]; n0++; }
    }
    if( n0==0 || n1==0 ){ sqlite3_free(x); return 0; }
    na = s0/n0; nb = s1/n1;
    if( fabs(na-a)<1e-9 && fabs(nb-b)<1e-9 && !changed ) break;
    a = na; b = nb;
  }
  sqlite3_free(x);
  n0 = n1 = 0;
  for(i=0; i<n; i++){ if( aLab[i] ) n1++; else n0++; }
  if( n0<2 || n1<2 || n0<0.1*n || n1<0.1*n ) return 0;
  *pLowLabel = a<=b ? 0 : 1;
  return 1;
}

/* ------------------------------------------------------------------ */
/* Building                                                            */
/* ------------------------------------------------------------------ */

/* Column i of p as a JSON node (NULL → null, integer, real, text). */
static JNode *colNode(sqlite3_stmt *p, int i){
  switch( sqlite3_column_type(p, i) ){
    case SQLITE_NULL: return jNull();
    case SQLITE_INTEGER: return jInt(sqlite3_column_int64(p, i));
    case SQLITE_FLOAT: return jReal(sqlite3_column_double(p, i));
    default: {
      const char *z = (const char*)sqlite3_column_text(p, i);
      /* 0 (no node: the parent is marked out of memory) when the text
      ** could not be made, not a null that would look like the value */
      return z ? jStr(z, sqlite3_column_bytes(p, i)) : 0;
    }
  }
}

/* Column i as a REAL node (integers converted). */
static JNode *colReal(sqlite3_stmt *p, int i){
  if( sqlite3_column_type(p, i)==SQLITE_NULL ) return jNull();
  return jReal(sqlite3_column_double(p, i));
}

/* Parse a JSON column (array/object text) into a node; an empty one for
** NULL or text that is not JSON, and one marked out of memory (jOom) when
** the parse ran out of memory (the document is then an error, not a
** document without that member). */
static JNode *colJson(sqlite3_stmt *p, int i, int wantArray){
  const char *z = (const char*)sqlite3_column_text(p, i);
  char *zErr = 0;
  JNode *n;
  if( z==0 ){
    if( sqlite3_column_type(p, i)!=SQLITE_NULL ) return 0;    /* text conversion: OOM */
    return wantArray ? jArr() : jObj();
  }
  n = jParse(z, -1, &zErr);
  if( n==0 ){
    int bOom = zErr==0;
    sqlite3_free(zErr);
    n = wantArray ? jArr() : jObj();
    if( n && bOom ) n->oom = 1;
  }
  return n;
}

/* Python {x:.1%}: x*100 (in double, as Python) with 1 decimal and '%',
** rounded as Python does (profsumPyFormat, never sqlite3_mprintf); 0 when
** out of memory, which then marks pOom (the candidates' array: no text
** without its share). */
static char *pct1(double x, JNode *pOom){
  char *z = profsumPyFormat("%.1f%%", x*100.0);
  if( z==0 && pOom ) pOom->oom = 1;
  return z;
}

/* One op of profsum_agg_op.  Its texts are copied with their lengths:
** a name may hold a NUL character (U+0000), which the document keeps. */
typedef struct HotOp {
  char *zName; int nName;
  sqlite3_int64 count;
  double totalRef, exclRef;      /* the sums as the reference's doubles add them */
  char *zShape, *zSource, *zTf;  /* 0: NULL */
  int nShape, nSource, nTf;
  int hasFlop; double flop;
} HotOp;

/* Python's order of two strings (code points, as UTF-8 bytes compare). */
static int cmpBytes(const char *a, int na, const char *b, int nb){
  int c = memcmp(a, b, (size_t)(na<nb ? na : nb));
  if( c ) return c;
  return (na>nb) - (na<nb);
}

/* §4.5's order (exclusive desc, total desc, name) on the reference's
** sums, so that ops whose exact sums tie come out as there. */
static int cmpHot(const void *pa, const void *pb){
  const HotOp *a = (const HotOp*)pa, *b = (const HotOp*)pb;
  if( a->exclRef!=b->exclRef ) return a->exclRef>b->exclRef ? -1 : 1;
  if( a->totalRef!=b->totalRef ) return a->totalRef>b->totalRef ? -1 : 1;
  return cmpBytes(a->zName, a->nName, b->zName, b->nName);
}

/* How a member of a listed section's entry (communication_ops,
** gap_before_ops, ...) is made from a row of its query: column iCol as it
** is ('v', colNode), as an integer ('i'), as a real, null kept ('r',
** colReal) or null as 0.0 ('d'); or ('a') the average of the total in
** column iCol over the count in column iCol-1 (0.0 for no count).  A
** list of them ends with a zKey of 0. */
typedef struct DocMember { const char *zKey; char cKind; int iCol; } DocMember;

/* The entry object of a row of p, its members as aMem says. */
static JNode *rowMembers(sqlite3_stmt *p, const DocMember *aMem){
  JNode *o = jObj();
  const DocMember *m;
  for(m=aMem; m->zKey; m++){
    JNode *v = 0;
    switch( m->cKind ){
      case 'v': v = colNode(p, m->iCol); break;
      case 'i': v = jInt(sqlite3_column_int64(p, m->iCol)); break;
      case 'r': v = colReal(p, m->iCol); break;
      case 'd': v = jReal(sqlite3_column_double(p, m->iCol)); break;
      default: {
        sqlite3_int64 c = sqlite3_column_int64(p, m->iCol-1);
        v = jReal(c ? sqlite3_column_double(p, m->iCol)/(double)c : 0.0);
      }
    }
    jSetLit(o, m->zKey, v);
  }
  return o;
}

/* Run the query zSqlFmt (its %w: the schema; ?1: the trace), with
** " LIMIT zLim" appended when zLim is not 0, and append each row as an
** object (rowMembers) to the array pArr. */
static int rowsInto(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace, char **pzErr,
                    const char *zSqlFmt, const char *zLim, JNode *pArr, const DocMember *aMem){
  sqlite3_stmt *p = 0;
  char *zSql = zLim ? sqlite3_mprintf("%s LIMIT %s", zSqlFmt, zLim) : 0;
  int rc;
  if( zLim && zSql==0 ) return SQLITE_NOMEM;
  rc = profsumDocPrep(db, &p, pzErr, zSql ? zSql : zSqlFmt, zSchema);
  sqlite3_free(zSql);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, iTrace);
  while( sqlite3_step(p)==SQLITE_ROW ) jPush(pArr, rowMembers(p, aMem));
  rc = sqlite3_finalize(p);
  if( rc && pzErr ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc;
}

/* The fixed texts of the rules of optimization_candidates, in the order
** they are tested: id, title and suggestions (0 after the last). */
enum { CAND_COMM, CAND_STALL, CAND_HOT_OP, CAND_GAP, CAND_JITTER, CAND_NONE };
static const struct CandRule { const char *zId, *zTitle, *azSug[3]; } aCandRule[] = {
  { "communication-heavy", "Communication appears dominant",
    { "Evaluate sharding/layout choices to reduce collective volume.",
      "Try overlapping collectives with compute where possible.",
      "Inspect all-reduce/all-gather callsites for avoidable synchronization." } },
  { "stall-heavy", "Stall/wait time is significant",
    { "Investigate dependency waits and synchronization barriers.",
      "Check host input pipeline and device dispatch overlap.",
      "Reduce unnecessary host-side blocking calls around step execution." } },
  { "single-hot-op", "Single op has outsized exclusive time",
    { "Inspect kernel implementation and tiling/fusion opportunities for this op.",
      "Try alternative algorithmic variants or precision/layout adjustments.",
      "Run a focused microbenchmark on this op before/after tuning changes." } },
  { "pre-op-gap", "Large idle gaps appear before specific ops",
    { "Inspect upstream dependencies immediately before this op.",
      "Look for host dispatch or synchronization barriers causing the gap.",
      "Use hierarchical region totals to localize where the waiting accumulates." } },
  { "step-jitter", "Steady-state step time has high jitter",
    { "Correlate slow steps with collective spikes and host wait events.",
      "Check for periodic checkpoint/eval/input stalls during profiled range.",
      "Compare traces before/after disabling optional callbacks or host work." } },
  { "no-dominant-bottleneck", "No single dominant bottleneck found",
    { "Prioritize low-risk wins on top 3 hot ops and re-profile.",
      "Use before/after summary comparison to confirm throughput impact.", 0 } },
};

/* The candidate object of rule iRule (aCandRule) with its rationale and
** nEv evidence texts; takes ownership of zRationale and azEv[]. */
static JNode *candidateN(int iRule, char *zRationale, int nRationale, char **azEv, const int *anEv,
                         int nEv){
  const struct CandRule *r = &aCandRule[iRule];
  JNode *o = jObj(), *ev = jArr(), *sg = jArr();
  int i;
  jSetLit(o, "candidate_id", jStr(r->zId, -1));
  jSetLit(o, "title", jStr(r->zTitle, -1));
  jSetLit(o, "rationale", jStr(zRationale, nRationale));
  for(i=0; i<nEv; i++) jPush(ev, jStr(azEv[i], anEv ? anEv[i] : -1));
  for(i=0; i<3 && r->azSug[i]; i++) jPush(sg, jStr(r->azSug[i], -1));
  /* a text that could not be formatted (out of memory) is no null member */
  if( o && zRationale==0 ) o->oom = 1;
  for(i=0; i<nEv; i++) if( o && azEv[i]==0 ) o->oom = 1;
  jSetLit(o, "evidence", ev);
  jSetLit(o, "suggestions", sg);
  sqlite3_free(zRationale);
  for(i=0; i<nEv; i++) sqlite3_free(azEv[i]);
  return o;
}

/* candidateN() for texts without NUL characters. */
static JNode *candidate(int iRule, char *zRationale, char **azEv, int nEv){
  return candidateN(iRule, zRationale, -1, azEv, 0, nEv);
}

/* "zBefore" (not empty) + the n bytes of z (NUL characters kept) +
** "zAfter", in sqlite3_malloc'd memory, its length in *pn; 0 when out of
** memory (sqlite3_str_finish's answer then). */
static char *textAround(const char *zBefore, const char *z, int n, const char *zAfter, int *pn){
  sqlite3_str *p = sqlite3_str_new(0);
  sqlite3_str_appendall(p, zBefore);
  sqlite3_str_append(p, z, n);
  sqlite3_str_appendall(p, zAfter);
  *pn = sqlite3_str_length(p);
  return sqlite3_str_finish(p);
}

/* optimization_candidates (§4.12) from the built sections.  aExclRef: the
** listed hot ops' exclusive durations as the reference's doubles add them
** (0: their exclusive_duration), of which the first hot op's is used: the
** reference formats its own sum, and
** where the exact sum sits on a rounding tie (0.0015 against the
** reference's 0.0014999999999999998) the text follows the reference's.
** aBreakRef (0: none stored): the per-track breakdown as the reference's
** doubles add it, compute .. other and the total, whose shares then decide
** the cuts and fill the texts. */
static JNode *candidates(JNode *pDoc, const double *aExclRef, const double *aBreakRef){
  static const char *azPart[4] = {"compute", "communication", "host", "stall"};
  JNode *arr = jArr();
  JNode *tb = jGet(pDoc, "time_breakdown");
  JNode *hot = jGet(pDoc, "hot_ops"), *gaps = jGet(pDoc, "gap_before_ops");
  JNode *cops = jGet(pDoc, "communication_ops");
  JNode *steady = jGet(jGet(pDoc, "step_time"), "steady_state_steps");
  double T = aBreakRef ? aBreakRef[5] : jNum(jGet(tb, "total_duration"));
  double aShare[4], comm, stall;
  int k;
  for(k=0; k<4; k++){
    /* the reference's own shares, when stored, decide the cuts and make
    ** the texts (the exact share 0.2 can be 0.19999999999999996 there) */
    aShare[k] = aBreakRef ? (T>0 ? aBreakRef[k]/T : 0.0)
                          : jNum(jGet(jGet(tb, azPart[k]), "share_of_total"));
  }
  comm = aShare[1];
  stall = aShare[3];
  if( T==0.0 ) T = 1.0;
  if( comm>=0.15 ){
    char *ev[2];
    JNode *c0 = jAt(cops, 0);
    JNode *cn = jGet(c0, "collective");
    char *zPct = pct1(comm, arr);
    ev[0] = sqlite3_mprintf("Communication share: %s", zPct);
    ev[1] = sqlite3_mprintf("Top collective: %s", (cn && cn->type==JT_STRING && cn->n>0) ? cn->z : "collectives");
    jPush(arr, candidate(CAND_COMM, sqlite3_mprintf("Communication accounts for %s of exclusive profiled "
                                                    "duration.", zPct), ev, 2));
    sqlite3_free(zPct);
  }
  if( stall>=0.20 ){
    char *ev[1];
    char *zPct = pct1(stall, arr);
    ev[0] = sqlite3_mprintf("Stall share: %s", zPct);
    jPush(arr, candidate(CAND_STALL, sqlite3_mprintf("Stall-like events account for %s of profiled "
                                                     "duration.", zPct), ev, 1));
    sqlite3_free(zPct);
  }
  if( hot && hot->nChild>0 ){
    JNode *h0 = jAt(hot, 0);
    double ex = aExclRef ? aExclRef[0] : jNum(jGet(h0, "exclusive_duration"));
    double h = ex/T;
    JNode *nm0 = jGet(h0, "name");
    if( h<0.08 ){
      /* no candidate */
    }else if( nm0==0 || nm0->type!=JT_STRING ){
      if( arr ) arr->oom = 1;     /* the hot op's members could not all be set */
    }else{
      /* the name may hold a NUL character: texts with their lengths */
      char *ev[3], *zWhy, *zTail;
      int anEv[3] = {-1, -1, -1}, nWhy = 0;
      char *zPct = pct1(h, arr);
      ev[0] = textAround("Top op: ", nm0->z, nm0->n, "", &anEv[0]);
      ev[1] = profsumPyFormat("Top op exclusive duration: %.3f", ex);
      ev[2] = sqlite3_mprintf("Top op share: %s", zPct);
      zTail = sqlite3_mprintf("' contributes %s of profiled exclusive duration.", zPct);
      zWhy = zTail ? textAround("Top op '", nm0->z, nm0->n, zTail, &nWhy) : 0;
      sqlite3_free(zTail);
      jPush(arr, candidateN(CAND_HOT_OP, zWhy, nWhy, ev, anEv, 3));
      sqlite3_free(zPct);
    }
  }
  if( gaps && gaps->nChild>0 ){
    JNode *g0 = jAt(gaps, 0);
    double tot = jNum(jGet(g0, "total_gap_duration"));
    double mx = jNum(jGet(g0, "max_gap_duration"));
    double g = tot/T;
    JNode *gn = jGet(g0, "name"), *gc = jGet(g0, "count");
    if( !(tot>0 && (g>=0.05 || mx>=1000.0)) ){
      /* no candidate */
    }else if( gn==0 || gn->type!=JT_STRING || gc==0 ){
      if( arr ) arr->oom = 1;     /* the gap row's members could not all be set */
    }else{
      /* the names may hold a NUL character: texts with their lengths */
      char *ev[5], *zWhy, *zTail;
      int anEv[5] = {-1, -1, -1, -1, -1}, nWhy = 0;
      JNode *pn = jGet(g0, "payload_op"), *mn = jGet(g0, "marker_op");
      const JNode *p = (pn && pn->type==JT_STRING && pn->n) ? pn : gn;
      const JNode *m = (mn && mn->type==JT_STRING && mn->n) ? mn : p;
      char *zPct = pct1(g, arr);
      ev[0] = textAround("Payload op with largest pre-gap: ", p->z, p->n, "", &anEv[0]);
      ev[1] = textAround("Observed first op after gap (marker): ", m->z, m->n, "", &anEv[1]);
      ev[2] = profsumPyFormat("Total pre-gap: %.3f", tot);
      ev[3] = profsumPyFormat("Max pre-gap: %.3f", mx);
      ev[4] = sqlite3_mprintf("Occurrences: %lld", (long long)gc->i);
      zTail = sqlite3_mprintf("' accumulates significant pre-op idle gap (%s of "
                              "total profiled exclusive duration).", zPct);
      zWhy = zTail ? textAround("Op '", p->z, p->n, zTail, &nWhy) : 0;
      sqlite3_free(zTail);
      jPush(arr, candidateN(CAND_GAP, zWhy, nWhy, ev, anEv, 5));
      sqlite3_free(zPct);
    }
  }
  {
    JNode *md = jGet(steady, "median"), *p9 = jGet(steady, "p90");
    sqlite3_int64 cnt = jGet(steady, "count") ? jGet(steady, "count")->i : 0;
    if( cnt>=4 && md && p9 && md->type==JT_REAL && p9->type==JT_REAL && md->r!=0.0 && p9->r!=0.0
     && md->r>0 && p9->r/md->r>=1.4 ){
      double j = p9->r/md->r;
      char *ev[3];
      ev[0] = profsumPyFormat("Steady median: %.3f", md->r);
      ev[1] = profsumPyFormat("Steady p90: %.3f", p9->r);
      ev[2] = profsumPyFormat("p90/median: %.2f", j);
      jPush(arr, candidate(CAND_JITTER, profsumPyFormat("Steady-state p90/median ratio is %.2f, indicating "
                                                        "intermittent slow steps.", j), ev, 3));
    }
  }
  if( arr && arr->nChild==0 ){
    char *ev[4];
    char *a = pct1(aShare[0], arr), *b = pct1(comm, arr), *d = pct1(aShare[2], arr), *s = pct1(stall, arr);
    ev[0] = sqlite3_mprintf("Compute: %s", a);
    ev[1] = sqlite3_mprintf("Communication: %s", b);
    ev[2] = sqlite3_mprintf("Host: %s", d);
    ev[3] = sqlite3_mprintf("Stall: %s", s);
    sqlite3_free(a); sqlite3_free(b); sqlite3_free(d); sqlite3_free(s);
    jPush(arr, candidate(CAND_NONE, sqlite3_mprintf("Compute, communication, host, and stall shares are "
                                                    "relatively balanced."), ev, 4));
  }
  return arr;
}

/* See summary_doc.h. */
JNode *profsumFamilyObject(const char *zFam, sqlite3_int64 count, double total, double excl,
                           double share, const char *zExample, const char *zDominant,
                           int hasFlop, double flop){
  return profsumFamilyObjectN(zFam, count, total, excl, share, zExample, -1, zDominant, hasFlop, flop);
}

/* See summary_doc.h. */
JNode *profsumFamilyObjectN(const char *zFam, sqlite3_int64 count, double total, double excl,
                            double share, const char *zExample, int nExample,
                            const char *zDominant, int hasFlop, double flop){
  JNode *o = jObj();
  jSetLit(o, "family", jStr(zFam, -1));
  jSetLit(o, "count", jInt(count));
  jSetLit(o, "total_duration", jReal(total));
  jSetLit(o, "exclusive_duration", jReal(excl));
  jSetLit(o, "share_of_total", jReal(share));
  jSetLit(o, "avg_duration", jReal(count ? total/(double)count : 0.0));
  jSetLit(o, "avg_exclusive_duration", jReal(count ? excl/(double)count : 0.0));
  jSetLit(o, "example_op", jStr(zExample, nExample));
  jSetLit(o, "dominant_shape_signature", zDominant ? jStr(zDominant, -1) : jNull());
  jSetLit(o, "flop_proxy_total", hasFlop ? jReal(flop) : jNull());
  jSetLit(o, "time_per_flop_proxy", hasFlop && flop>0 ? jReal(excl/flop) : jNull());
  if( o && o->oom ){ jFree(o); return 0; }
  return o;
}

/* semantic_families (§4.6) from the truncated hot ops. */
static JNode *families(JNode *hot, const double *aExclRef, double breakdownTotal){
  typedef struct Fam {
    const char *zFam; sqlite3_int64 count; double total, excl, flop; int hasFlop;
    double exclRef;                         /* Σ aExclRef: the order */
    const char *zExample; int nExample;
    JNode *shapes;                          /* object: signature → count (insertion order) */
  } Fam;
  Fam *a;
  int n = 0, i, j, nHot = hot ? hot->nChild : 0, bOom = 0;
  double sumExcl = 0.0, D;
  JNode *arr = jArr();
  a = sqlite3_malloc64(sizeof(Fam)*(sqlite3_uint64)(nHot+1));
  if( a==0 ){ if( arr ) arr->oom = 1; return arr; }
  for(i=0; i<nHot; i++){
    JNode *h = jAt(hot, i);
    JNode *nm = h ? jGet(h, "name") : 0, *ct = h ? jGet(h, "count") : 0;
    const char *zName;
    const char *zFam = "other";
    JNode *sh, *fp;
    sqlite3_int64 cnt;
    /* a hot op whose members could not all be set (out of memory) */
    if( nm==0 || nm->z==0 || ct==0 ){ bOom = 1; break; }
    zName = nm->z;
    sh = jGet(h, "shape_signature");
    fp = jGet(h, "flop_proxy_per_invocation");
    cnt = ct->i;
    if( profsumSemanticFamily(zName, nm->n, 0, 0, &zFam) ){ bOom = 1; break; }
    for(j=0; j<n; j++) if( strcmp(a[j].zFam, zFam)==0 ) break;
    if( j==n ){
      memset(&a[n], 0, sizeof(Fam));
      a[n].zFam = zFam;
      a[n].zExample = zName;
      a[n].nExample = nm->n;
      a[n].shapes = jObj();
      if( a[n].shapes==0 ){ bOom = 1; break; }
      n++;
    }
    a[j].count += cnt;
    a[j].total += jNum(jGet(h, "total_duration"));
    a[j].excl += jNum(jGet(h, "exclusive_duration"));
    a[j].exclRef += aExclRef ? aExclRef[i] : jNum(jGet(h, "exclusive_duration"));
    sumExcl += jNum(jGet(h, "exclusive_duration"));
    if( sh && sh->type==JT_STRING ){
      JNode *c = jGet(a[j].shapes, sh->z);
      if( c ) c->i += cnt; else jSet(a[j].shapes, sh->z, jInt(cnt));
    }
    if( fp && (fp->type==JT_REAL || fp->type==JT_INT) && cnt>0 ){
      a[j].flop += jNum(fp)*(double)cnt;
      a[j].hasFlop = 1;
    }
  }
  if( bOom || arr==0 ){
    /* out of memory: the caller sees it in the array (jOom) or its absence */
    for(i=0; i<n; i++) jFree(a[i].shapes);
    sqlite3_free(a);
    if( arr ) arr->oom = 1;
    return arr;
  }
  if( breakdownTotal>0 && sumExcl>0 ) D = breakdownTotal>sumExcl ? breakdownTotal : sumExcl;
  else if( breakdownTotal>0 ) D = breakdownTotal;
  else D = sumExcl;
  /* sort (exclusive desc, family asc) */
  for(i=1; i<n; i++){
    Fam x = a[i]; j = i-1;
    while( j>=0 && (a[j].exclRef<x.exclRef || (a[j].exclRef==x.exclRef && strcmp(a[j].zFam, x.zFam)>0)) ){
      a[j+1] = a[j]; j--;
    }
    a[j+1] = x;
  }
  for(i=0; i<n; i++){
    const char *zDom = 0;
    sqlite3_int64 best = 0;
    for(j=0; j<a[i].shapes->nChild; j++){
      JNode *c = a[i].shapes->a[j];
      if( c->i>best ){ best = c->i; zDom = c->zKey; }
    }
    jPush(arr, profsumFamilyObjectN(a[i].zFam, a[i].count, a[i].total, a[i].excl,
                                    D>0 ? a[i].excl/D : 0.0, a[i].zExample, a[i].nExample, zDom,
                                    a[i].hasFlop, a[i].flop));
  }
  for(i=0; i<n; i++) jFree(a[i].shapes);
  sqlite3_free(a);
  return arr;
}

/* ------------------------------------------------------------------ */
/* Sections: one build step each, run in order by the section table    */
/* ------------------------------------------------------------------ */

/* What the build steps of one document share (docBuild).  A step adds
** its section's keys to doc and returns SQLITE_OK, or an error code with
** *pzErr set where SQLite gave a message (the caller frees doc). */
typedef struct DocBuild {
  sqlite3 *db;
  const char *zS;             /* the schema of the tables */
  sqlite3_int64 iTrace;
  const ProfsumKnobs *pK;
  int forSections;            /* profsumDocBuildSections(): what no stored section reads is left empty */
  char zLim[32];              /* LIMIT of the listed sections: max(hot_op_limit, 500) */
  double *aExclRef;           /* exclRef of the listed hot ops, for the families and the
                              ** candidates (owned; freed when the build ends) */
  double aBreakRef[6];        /* the per-track breakdown as the reference adds it
                              ** (compute .. other, total), for the candidates'
                              ** cuts; hasBreakRef: stored for this trace */
  int hasBreakRef;
  JNode *doc;                 /* the document being built */
  char **pzErr;
} DocBuild;

/* The header: schema_version, source_format, source_path,
** generated_at_utc, run_metadata, trace_overview, trace_provenance (§3),
** from the trace's profsum_trace row. */
static int buildTrace(DocBuild *b){
  static const char *azRm[] = {"run_path","run_id","artifact_ref","artifact_name","hardware_type",
                               "mesh_or_topology","git_sha","config_hash","num_devices","num_hosts"};
  JNode *doc = b->doc, *ov, *pv, *rm, *src;
  sqlite3_stmt *p = 0;
  size_t k;
  int rc = profsumDocPrep(b->db, &p, b->pzErr, "SELECT source_format, source_path, generated_at_utc, run_metadata, "
      "display_time_unit, num_events_total, num_complete_events, num_processes, num_threads, "
      "profile_start_ts, profile_end_ts, suspected_truncation, quality_warnings, sha256, run_ids, "
      "source_file_hints, summary_json IS NULL AND trace_path IS NOT NULL AND trace_path IS NOT "
      "source_path, trace_path FROM \"%w\".profsum_trace WHERE trace_id=?1", b->zS);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, b->iTrace);
  if( (rc = sqlite3_step(p))!=SQLITE_ROW ){
    rc = profsumDocNoTraceRow(b->db, rc, b->iTrace, b->pzErr);
    sqlite3_finalize(p);
    return rc;
  }
  ov = jObj(); pv = jObj(); rm = jObj(); src = colJson(p, 3, 0);
  jSetLit(doc, "schema_version", jStr("profile_summary.v1", -1));
  jSetLit(doc, "source_format", colNode(p, 0));
  if( sqlite3_column_int(p, 16) ){
    /* a folder (or a download) was given: the reference passes the file it
    ** picked on, as a pathlib path, so that file is the document's
    ** source_path (summary §1.1) */
    char *zPick = profsumPyPathStr((const char*)sqlite3_column_text(p, 17));
    jSetLit(doc, "source_path", zPick ? jStr(zPick, -1) : 0);
    sqlite3_free(zPick);
  }else{
    jSetLit(doc, "source_path", colNode(p, 1));
  }
  jSetLit(doc, "generated_at_utc", colNode(p, 2));
  for(k=0; k<sizeof(azRm)/sizeof(azRm[0]); k++){
    JNode *v = jGet(src, azRm[k]);
    if( v && (v->type==JT_STRING || v->type==JT_INT) ){
      jSetLit(rm, azRm[k], v->type==JT_STRING ? jStr(v->z, v->n) : jInt(v->i));
    }else{
      jSetLit(rm, azRm[k], jNull());
    }
  }
  if( (src==0 || jOom(src)) && rm ) rm->oom = 1;   /* out of memory reading it */
  jFree(src);
  jSetLit(doc, "run_metadata", rm);
  jSetLit(ov, "display_time_unit", colNode(p, 4));
  jSetLit(ov, "num_events_total", jInt(sqlite3_column_int64(p, 5)));
  jSetLit(ov, "num_complete_events", jInt(sqlite3_column_int64(p, 6)));
  jSetLit(ov, "num_processes", jInt(sqlite3_column_int64(p, 7)));
  jSetLit(ov, "num_threads", jInt(sqlite3_column_int64(p, 8)));
  jSetLit(ov, "profile_start_ts", colReal(p, 9));
  jSetLit(ov, "profile_end_ts", colReal(p, 10));
  jSetLit(ov, "duration_basis", jStr("exclusive_duration_per_track", -1));
  jSetLit(ov, "suspected_truncation", jBool(sqlite3_column_int(p, 11)));
  jSetLit(ov, "quality_warnings", colJson(p, 12, 1));
  jSetLit(doc, "trace_overview", ov);
  jSetLit(pv, "trace_sha256", colNode(p, 13));
  jSetLit(pv, "run_ids", colJson(p, 14, 1));
  jSetLit(pv, "source_file_hints", colJson(p, 15, 1));
  jSetLit(doc, "trace_provenance", pv);
  sqlite3_finalize(p);
  return SQLITE_OK;
}

/* Read the trace's step durations in step order into two arrays, sized
** at the first row by the count of rows (free both with sqlite3_free,
** also on error; both 0 without steps). */
static int readSteps(DocBuild *b, sqlite3_int64 **paStep, double **paDur, int *pn){
  sqlite3_int64 *aStep = 0;
  double *aDur = 0;
  int n = 0, rc;
  sqlite3_stmt *p = 0;
  rc = profsumDocPrep(b->db, &p, b->pzErr, "SELECT step, duration, count(*) OVER () "
                      "FROM \"%w\".profsum_agg_step WHERE trace_id=?1 ORDER BY step", b->zS);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, b->iTrace);
  while( sqlite3_step(p)==SQLITE_ROW ){
    if( n==0 ){
      sqlite3_uint64 nRow = (sqlite3_uint64)sqlite3_column_int64(p, 2);
      aStep = sqlite3_malloc64(sizeof(sqlite3_int64)*nRow);
      aDur = sqlite3_malloc64(sizeof(double)*nRow);
      if( aStep==0 || aDur==0 ){ rc = SQLITE_NOMEM; break; }
    }
    aStep[n] = sqlite3_column_int64(p, 0);
    aDur[n] = sqlite3_column_double(p, 1);
    n++;
  }
  rc = profsumFinishRows(b->db, p, rc, b->pzErr);
  *paStep = aStep; *paDur = aDur; *pn = n;
  return rc;
}

/* Push the step classes of the nSt (> 0) steady steps onto classes: "light"
** and "heavy" when two clusters (kmeans2, from 6 steps) have medians at
** least 1.5 apart, else one "typical" class (§4.3). */
static int stepClasses(const sqlite3_int64 *aStepSt, const double *aDurSt, int nSt, JNode *classes){
  int *aLab = sqlite3_malloc64(sizeof(int)*(sqlite3_uint64)(nSt+1));
  int low = 0, split = 0, km = 0, rc = SQLITE_OK;
  if( aLab==0 ){ rc = SQLITE_NOMEM; }
  else if( nSt>=6 && (km = kmeans2(aDurSt, nSt, aLab, &low))<0 ){ rc = SQLITE_NOMEM; }
  else if( km>0 ){
    /* medians of the clusters */
    sqlite3_int64 *s0 = sqlite3_malloc64(sizeof(sqlite3_int64)*(sqlite3_uint64)nSt*2);
    double *d0 = sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)nSt*2);
    if( s0 && d0 ){
      int nL = 0, nH = 0, k;
      sqlite3_int64 *sL = s0, *sH = s0+nSt;
      double *dL = d0, *dH = d0+nSt, mL, mH;
      JNode *tmp;
      for(k=0; k<nSt; k++){
        if( aLab[k]==low ){ sL[nL] = aStepSt[k]; dL[nL++] = aDurSt[k]; }
        else{ sH[nH] = aStepSt[k]; dH[nH++] = aDurSt[k]; }
      }
      tmp = durationStats(dL, nL, &mL);
      if( jOom(tmp) ) rc = SQLITE_NOMEM;
      jFree(tmp);
      tmp = durationStats(dH, nH, &mH);
      if( jOom(tmp) ) rc = SQLITE_NOMEM;
      jFree(tmp);
      if( rc==SQLITE_OK && !(mL<=0 || mH/mL<1.5) ){
        split = 1;
        jPush(classes, stepClass("light", sL, dL, nL, nSt, 0));
        jPush(classes, stepClass("heavy", sH, dH, nH, nSt, 1));
      }
    }else{
      rc = SQLITE_NOMEM;
    }
    sqlite3_free(s0); sqlite3_free(d0);
  }
  if( rc==SQLITE_OK && !split ){
    jPush(classes, stepClass("typical", aStepSt, aDurSt, nSt, nSt, 0));
  }
  sqlite3_free(aLab);
  return rc;
}

/* step_time (§4.3): all and steady-state step statistics and the classes. */
static int buildStepTime(DocBuild *b){
  sqlite3_int64 *aStep = 0;
  double *aDur = 0;
  int n = 0, i, nSt, rc;
  JNode *st, *classes;
  rc = readSteps(b, &aStep, &aDur, &n);
  if( rc ){ sqlite3_free(aStep); sqlite3_free(aDur); return rc; }
  st = jObj(); classes = jArr();
  jSetLit(st, "warmup_steps_ignored", jInt(b->pK->warmupSteps));
  jSetLit(st, "all_steps", durationStats(aDur, n, 0));
  /* steady steps: step number >= warmup (the array is sorted by step) */
  for(i=0; i<n && aStep[i]<b->pK->warmupSteps; i++){}
  nSt = n - i;
  /* the steady steps' arrays: none without steps (aDur, aStep are then
  ** NULL, and NULL + 0 is undefined) */
  jSetLit(st, "steady_state_steps", durationStats(nSt>0 ? aDur+i : 0, nSt, 0));
  if( nSt>0 ) rc = stepClasses(aStep+i, aDur+i, nSt, classes);
  jSetLit(st, "classes", classes);
  jSetLit(b->doc, "step_time", st);
  sqlite3_free(aStep); sqlite3_free(aDur);
  return rc;
}

/* time_breakdown (§4.4): the categories of the knobs' breakdown mode,
** from duration_ref where the table has it (per-track mode). */
static int buildBreakdown(DocBuild *b){
  static const char *azCat[6] = {"compute","communication","host","stall","other","total"};
  double v[6] = {0,0,0,0,0,0};
  sqlite3_stmt *p = 0;
  JNode *tb;
  int k, rc;
  int nRef = 0;
  rc = profsumDocPrep(b->db, &p, b->pzErr, "SELECT category, duration, duration_ref FROM \"%w\".profsum_agg_breakdown "
            "WHERE trace_id=?1 AND mode=?2", b->zS);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, b->iTrace);
  sqlite3_bind_text(p, 2, b->pK->globalMode ? "exclusive_global" : "exclusive_per_track", -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(p)==SQLITE_ROW ){
    const char *z = profsumColText(p, 0, &rc);
    for(k=0; k<6; k++) if( z && strcmp(z, azCat[k])==0 ){
      v[k] = sqlite3_column_double(p, 1);
      if( sqlite3_column_type(p, 2)!=SQLITE_NULL ){ b->aBreakRef[k] = sqlite3_column_double(p, 2); nRef++; }
    }
  }
  rc = profsumFinishRows(b->db, p, rc, b->pzErr);
  if( rc ) return rc;
  b->hasBreakRef = nRef==6;
  /* the sums as the reference's doubles add them where the engine made
  ** them (the exact ones otherwise: within the reference's own rounding) */
  if( b->hasBreakRef ) memcpy(v, b->aBreakRef, sizeof(v));
  tb = jObj();
  jSetLit(tb, "duration_basis", jStr(b->pK->globalMode ? "exclusive_duration_global_timeline"
                                                       : "exclusive_duration_per_track", -1));
  jSetLit(tb, "total_duration", jReal(v[5]));
  for(k=0; k<5; k++){
    JNode *part = jObj();
    jSetLit(part, "total_duration", jReal(v[k]));
    jSetLit(part, "share_of_total", jReal(v[5]>0 ? v[k]/v[5] : 0.0));
    jSetLit(tb, azCat[k], part);
  }
  jSetLit(b->doc, "time_breakdown", tb);
  return SQLITE_OK;
}

/* Free the texts of *h. */
static void hotOpClear(HotOp *h){
  sqlite3_free(h->zName); sqlite3_free(h->zShape);
  sqlite3_free(h->zSource); sqlite3_free(h->zTf);
}

/* Free the texts of a[0..n-1] and the array. */
static void hotOpsFree(HotOp *a, int n){
  int i;
  for(i=0; i<n; i++) hotOpClear(&a[i]);
  sqlite3_free(a);
}

/* A copy of the text of column i of p with its length (*pn), NUL
** characters in it kept; 0 for NULL, or when out of memory (then *pRc is
** SQLITE_NOMEM). */
static char *colCopy(sqlite3_stmt *p, int i, int *pn, int *pRc){
  const unsigned char *z;
  char *zCopy;
  int n;
  *pn = 0;
  if( sqlite3_column_type(p, i)==SQLITE_NULL ) return 0;
  z = sqlite3_column_text(p, i);
  n = sqlite3_column_bytes(p, i);
  if( z==0 ){ *pRc = SQLITE_NOMEM; return 0; }
  zCopy = sqlite3_malloc64((sqlite3_uint64)n + 1);
  if( zCopy==0 ){ *pRc = SQLITE_NOMEM; return 0; }
  memcpy(zCopy, z, (size_t)n);
  zCopy[n] = 0;
  *pn = n;
  return zCopy;
}

/* Restore the heap of a[0..n) (the op that sorts last by cmpHot on top)
** after a[i] changed: up toward the top (bUp), or down from it. */
static void hotHeapFix(HotOp *a, int n, int i, int bUp){
  HotOp x = a[i];
  if( bUp ){
    while( i>0 && cmpHot(&x, &a[(i-1)/2])>0 ){ a[i] = a[(i-1)/2]; i = (i-1)/2; }
  }else{
    for(;;){
      int c = 2*i+1;
      if( c>=n ) break;
      if( c+1<n && cmpHot(&a[c+1], &a[c])>0 ) c++;
      if( cmpHot(&a[c], &x)<=0 ) break;
      a[i] = a[c]; i = c;
    }
  }
  a[i] = x;
}

/* Fill *h from the row of p (its texts copied; *pRc on a copy's failure). */
static void hotOpFill(HotOp *h, sqlite3_stmt *p, int *pRc){
  memset(h, 0, sizeof(*h));
  /* each text copied, or the document is out of memory (not an op
  ** without its shape, source or tf_op) */
  h->zName = colCopy(p, 0, &h->nName, pRc);
  if( h->zName==0 && *pRc==SQLITE_OK ) h->zName = sqlite3_mprintf("");   /* NULL: "" */
  h->zShape = colCopy(p, 2, &h->nShape, pRc);
  h->zSource = colCopy(p, 3, &h->nSource, pRc);
  h->zTf = colCopy(p, 4, &h->nTf, pRc);
  h->count = sqlite3_column_int64(p, 1);
  h->hasFlop = sqlite3_column_type(p, 5)!=SQLITE_NULL;
  h->flop = sqlite3_column_double(p, 5);
  h->exclRef = sqlite3_column_double(p, 6);
  h->totalRef = sqlite3_column_double(p, 7);
  if( h->zName==0 ) *pRc = SQLITE_NOMEM;
}

/* Read the nKeep ops of the trace that sort first by cmpHot into *pa (*pn
** entries, in no order; free with hotOpsFree, also on error).  They are
** kept in a heap whose top sorts last: once the heap is full, an op that
** sorts after its top is passed over without copying its texts, so a
** trace of many distinct ops costs a scan, not a copy and a sort of all. */
static int readHotOps(DocBuild *b, int nKeep, HotOp **pa, int *pn){
  HotOp *a = 0;
  int n = 0, nAlloc = 0, rc;
  sqlite3_stmt *p = 0;
  /* the sums as the reference's doubles add them (the exact ones where a
  ** table has none: a stored v1 summary's) */
  rc = profsumDocPrep(b->db, &p, b->pzErr, "SELECT name, count, shape_signature, "
            "source_file, tf_op_path, flop_proxy_per_invocation, coalesce(exclusive_ref, exclusive_duration), "
            "coalesce(total_ref, total_duration) FROM \"%w\".profsum_agg_op WHERE trace_id=?1", b->zS);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, b->iTrace);
  while( rc==SQLITE_OK && nKeep>0 && sqlite3_step(p)==SQLITE_ROW ){
    if( n<nKeep ){
      if( n>=nAlloc ){
        int nNew = nAlloc ? nAlloc*2 : 64;
        HotOp *aNew;
        if( nNew>nKeep ) nNew = nKeep;
        aNew = sqlite3_realloc64(a, sizeof(HotOp)*(sqlite3_uint64)nNew);
        if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
        a = aNew; nAlloc = nNew;
      }
      hotOpFill(&a[n++], p, &rc);
      if( rc==SQLITE_OK ) hotHeapFix(a, n, n-1, 1);
    }else{
      /* the row's sort key, its name not copied */
      HotOp k;
      k.zName = sqlite3_column_type(p, 0)==SQLITE_NULL ? (char*)"" : (char*)sqlite3_column_text(p, 0);
      k.nName = sqlite3_column_bytes(p, 0);
      if( k.zName==0 ){ rc = SQLITE_NOMEM; break; }
      k.exclRef = sqlite3_column_double(p, 6);
      k.totalRef = sqlite3_column_double(p, 7);
      if( cmpHot(&k, &a[0])<0 ){
        hotOpClear(&a[0]);
        hotOpFill(&a[0], p, &rc);
        if( rc==SQLITE_OK ) hotHeapFix(a, n, 0, 0);
      }
    }
  }
  *pa = a; *pn = n;
  return profsumFinishRows(b->db, p, rc, b->pzErr);
}

/* One entry of hot_ops (§4.5). */
static JNode *hotOpObject(const HotOp *h){
  JNode *o = jObj();
  int nName = h->nName;
  ProfsumSlice c = profsumCanonicalOp(h->zName, nName);
  jSetLit(o, "name", jStr(h->zName, nName));
  jSetLit(o, "canonical_name", jStr(c.z ? c.z : "", c.n));
  jSetLit(o, "category", jStr(profsumOpCategory(h->zName, nName), -1));
  jSetLit(o, "count", jInt(h->count));
  /* the sums as the reference's doubles add them (equal to the exact
  ** sums up to their rounding, but not where a difference cancels:
  ** docs/summary.md) */
  jSetLit(o, "total_duration", jReal(h->totalRef));
  jSetLit(o, "exclusive_duration", jReal(h->exclRef));
  jSetLit(o, "avg_duration", jReal(h->count ? h->totalRef/(double)h->count : 0.0));
  jSetLit(o, "shape_signature", jStr(h->zShape, h->nShape));
  jSetLit(o, "source_file", jStr(h->zSource, h->nSource));
  jSetLit(o, "tf_op_path", jStr(h->zTf, h->nTf));
  jSetLit(o, "flop_proxy_per_invocation", h->hasFlop ? jReal(h->flop) : jNull());
  return o;
}

/* hot_ops (§4.5): the first hot_op_limit ops sorted in C (bytewise
** names); keeps their exclRef in b->aExclRef (families, candidates). */
static int buildHotOps(DocBuild *b){
  HotOp *a = 0;
  int n = 0, i, nRef, rc;
  JNode *arr = jArr();
  jSetLit(b->doc, "hot_ops", arr);
  rc = readHotOps(b, b->pK->hotOpLimit, &a, &n);
  if( rc==SQLITE_OK ){
    if( n>1 ) qsort(a, (size_t)n, sizeof(HotOp), cmpHot);
    nRef = n<b->pK->hotOpLimit ? n : b->pK->hotOpLimit;
    b->aExclRef = sqlite3_malloc64(sizeof(double)*(sqlite3_uint64)(nRef+1));
    if( b->aExclRef==0 ) rc = SQLITE_NOMEM;
    for(i=0; rc==SQLITE_OK && i<nRef; i++) b->aExclRef[i] = a[i].exclRef;
  }
  for(i=0; rc==SQLITE_OK && i<n && i<b->pK->hotOpLimit; i++) jPush(arr, hotOpObject(&a[i]));
  hotOpsFree(a, n);
  return rc;
}

/* semantic_families (§4.6) from the listed hot ops, at most
** max(hot_op_limit, 50) of them. */
static int buildFamilies(DocBuild *b){
  JNode *fam = families(jGet(b->doc, "hot_ops"), b->aExclRef,
                        jNum(jGet(jGet(b->doc, "time_breakdown"), "total_duration")));
  int lim = b->pK->hotOpLimit>50 ? b->pK->hotOpLimit : 50;
  jSetLit(b->doc, "semantic_families", fam);
  fam = jGet(b->doc, "semantic_families");
  while( fam && fam->nChild>lim ){ jFree(fam->a[fam->nChild-1]); fam->nChild--; }
  return SQLITE_OK;
}

/* The listed sections below are ordered and limited in SQL: REAL and
** BINARY-collated TEXT orders are the reference's. */

/* A listed section: the array zKey of the document, holding the rows of
** zSqlFmt limited to zLim (rowsInto), or none when zSqlFmt is 0. */
static int buildList(DocBuild *b, const char *zKey, const char *zSqlFmt, const char *zLim,
                     const DocMember *aMem){
  JNode *a = jArr();
  jSetLit(b->doc, zKey, a);
  if( zSqlFmt==0 ) return SQLITE_OK;
  return rowsInto(b->db, b->zS, b->iTrace, b->pzErr, zSqlFmt, zLim, a, aMem);
}

/* communication_ops (§4.7). */
static int buildComm(DocBuild *b){
  static const DocMember aMem[] = {{"collective", 'v', 0}, {"count", 'i', 1}, {"total_duration", 'd', 2},
                                   {"avg_duration", 'a', 2}, {0, 0, 0}};
  return buildList(b, "communication_ops", "SELECT collective, count, coalesce(total_ref, total_duration) "
                   "FROM \"%w\".profsum_agg_comm WHERE trace_id=?1 "
                   "ORDER BY coalesce(total_ref, total_duration) DESC, collective", 0, aMem);
}

/* gap_before_ops (§4.8): one row for the section tables (forSections). */
static int buildGaps(DocBuild *b){
  static const DocMember aMem[] = {{"name", 'v', 0}, {"payload_op", 'v', 0}, {"marker_op", 'v', 1},
                                   {"count", 'i', 2}, {"total_gap_duration", 'd', 3},
                                   {"max_gap_duration", 'r', 4}, {"avg_gap_duration", 'a', 3}, {0, 0, 0}};
  return buildList(b, "gap_before_ops", "SELECT name, marker_op, count, total_gap_duration, "
      "max_gap_duration FROM \"%w\".profsum_agg_gap WHERE trace_id=?1 ORDER BY total_gap_duration DESC, "
      "max_gap_duration DESC, name", b->forSections ? "1" : b->zLim, aMem);
}

/* hierarchical_regions (§4.9): read by no section table (empty with
** forSections). */
static int buildRegions(DocBuild *b){
  static const DocMember aMem[] = {{"path", 'v', 0}, {"depth", 'i', 1}, {"count", 'i', 2},
                                   {"inclusive_duration", 'r', 3}, {"exclusive_duration", 'r', 4}, {0, 0, 0}};
  return buildList(b, "hierarchical_regions", b->forSections ? 0 : "SELECT path, depth, count, "
      "coalesce(inclusive_ref, inclusive_duration), coalesce(exclusive_ref, exclusive_duration) "
      "FROM \"%w\".profsum_agg_region WHERE trace_id=?1 "
      "ORDER BY coalesce(inclusive_ref, inclusive_duration) DESC, coalesce(exclusive_ref, exclusive_duration) DESC, "
      "path", b->zLim, aMem);
}

/* gap_region_contexts (§4.10): as the regions, empty with forSections. */
static int buildContexts(DocBuild *b){
  static const DocMember aMem[] = {{"op_name", 'v', 0}, {"region_path", 'v', 1}, {"count", 'i', 2},
                                   {"total_gap_duration", 'd', 3}, {"avg_gap_duration", 'a', 3}, {0, 0, 0}};
  return buildList(b, "gap_region_contexts", b->forSections ? 0 : "SELECT op_name, region_path, count, "
      "total_gap_duration FROM \"%w\".profsum_agg_gap_context WHERE trace_id=?1 "
      "ORDER BY total_gap_duration DESC, op_name, region_path", b->zLim, aMem);
}

/* optimization_candidates (§4.12), from the sections built before it. */
static int buildCandidates(DocBuild *b){
  /* aExclRef has an entry per listed hot op (none: 0, or no hot op) */
  jSetLit(b->doc, "optimization_candidates", candidates(b->doc, b->aExclRef,
                                                       b->hasBreakRef ? b->aBreakRef : 0));
  return SQLITE_OK;
}

/* The v1 fill of the listed sections: their table's columns after
** trace_id, each a member of the entry or an SQL expression over h.value
** (profsumDocFillRows). */
static const char *const azFillOp[] = {"name", "count", "total_duration", "exclusive_duration",
  "shape_signature", "source_file", "tf_op_path", ("coalesce(json_extract(h.value,'$.flop_proxy_per_invocation'), "
  "json_extract(h.value,'$.work_proxy_per_invocation'))"), "exclusive_duration", "total_duration"};
static const char *const azFillComm[] = {"collective", "count", "total_duration", "total_duration"};
static const char *const azFillGap[] = {"name", ("coalesce(nullif(json_extract(h.value,'$.marker_op'),''), "
  "json_extract(h.value,'$.name'))"), "count", "total_gap_duration", "max_gap_duration"};
static const char *const azFillRegion[] = {"path", "depth", "count", "inclusive_duration",
  "exclusive_duration", "inclusive_duration", "exclusive_duration"};
static const char *const azFillContext[] = {"op_name", "region_path", "count", "total_gap_duration"};
#define FILL(zTable, az) zTable, az, (int)(sizeof(az)/sizeof(az[0]))

/*
** The sections of the document, in the order they are built (a step may
** read the sections before it).  Each entry: the section's top-level key
** ("trace": the header keys of buildTrace), how it is built from the
** tables, how a v1 import fills its aggregate table from the stored
** document (a function of doc_tables.c, or for a listed section the table
** and its columns for profsumDocFillRows; neither when no table holds it),
** the key that is unique among its entries (for the fill's error
** message), and how its knob-dependent profsum_sec_* rows are stored
** (doc_tables.c; 0 for none).  A new section is one entry here plus its
** functions (docs/internals.md).
*/
typedef struct DocSection {
  const char *zKey;
  int (*xBuild)(DocBuild*);
  int (*xFill)(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, char **pzErr);
  const char *zFillTable;
  const char *const *azFillCol;
  int nFillCol;
  const char *zUnique;
  int (*xStore)(sqlite3 *db, const char *zS, sqlite3_int64 iTrace, const JNode *pRoot, char **pzErr);
} DocSection;

#define NOFILL 0, 0, 0
static const DocSection aSection[] = {
  /* key, build step, fill (a function, or 0 and FILL(table, columns)),
  ** unique key, store step */
  { "trace", buildTrace,
    profsumDocFillTrace, NOFILL, 0, 0 },
  { "step_time", buildStepTime,
    0, NOFILL, 0, profsumDocStoreSteps },
  { "time_breakdown", buildBreakdown,
    profsumDocFillBreakdown, NOFILL, 0, 0 },
  { "hot_ops", buildHotOps,
    0, FILL("profsum_agg_op", azFillOp), "name", profsumDocStoreHotOps },
  { "semantic_families", buildFamilies,
    0, NOFILL, 0, profsumDocStoreFamilies },
  { "communication_ops", buildComm,
    0, FILL("profsum_agg_comm", azFillComm), "collective", 0 },
  { "gap_before_ops", buildGaps,
    0, FILL("profsum_agg_gap", azFillGap), "name", 0 },
  { "hierarchical_regions", buildRegions,
    0, FILL("profsum_agg_region", azFillRegion), "path", 0 },
  { "gap_region_contexts", buildContexts,
    0, FILL("profsum_agg_gap_context", azFillContext), "op_name and region_path", 0 },
  { "optimization_candidates", buildCandidates,
    0, NOFILL, 0, profsumDocStoreCandidates },
};
#undef NOFILL
#undef FILL
#define N_SECTION ((int)(sizeof(aSection)/sizeof(aSection[0])))

/* Build the document of trace iTrace from the tables: every section's
** step in table order.  On success *ppRoot is the document; on error it
** is untouched and *pzErr may be set. */
static int buildFromTables(sqlite3 *db, const char *zS, sqlite3_int64 iTrace,
                           const ProfsumKnobs *pK, int forSections, JNode **ppRoot, char **pzErr){
  DocBuild b;
  int i, rc = SQLITE_OK;
  memset(&b, 0, sizeof(b));
  b.db = db; b.zS = zS; b.iTrace = iTrace; b.pK = pK; b.forSections = forSections; b.pzErr = pzErr;
  sqlite3_snprintf(sizeof(b.zLim), b.zLim, "%d", pK->hotOpLimit>500 ? pK->hotOpLimit : 500);
  b.doc = jObj();
  if( b.doc==0 ) return SQLITE_NOMEM;
  for(i=0; rc==SQLITE_OK && i<N_SECTION; i++) rc = aSection[i].xBuild(&b);
  if( rc==SQLITE_OK && jOom(b.doc) ) rc = SQLITE_NOMEM;
  sqlite3_free(b.aExclRef);
  if( rc ){ jFree(b.doc); return rc; }
  *ppRoot = b.doc;
  return SQLITE_OK;
}

/* profsumDocBuild() and profsumDocBuildSections(). */
static int docBuild(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                    const ProfsumKnobs *pK, int forSections, ProfsumDoc **ppDoc, char **pzErr){
  ProfsumDoc *d;
  sqlite3_stmt *p = 0;
  int rc;
  *ppDoc = 0;
  rc = profsumDocPrep(db, &p, pzErr, "SELECT summary_json, label FROM \"%w\".profsum_trace WHERE trace_id=?1", zSchema);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, iTrace);
  if( (rc = sqlite3_step(p))!=SQLITE_ROW ){
    rc = profsumDocNoTraceRow(db, rc, iTrace, pzErr);
    sqlite3_finalize(p);
    return rc;
  }
  d = sqlite3_malloc64(sizeof(*d));
  if( d==0 ){ sqlite3_finalize(p); return SQLITE_NOMEM; }
  memset(d, 0, sizeof(*d));
  if( sqlite3_column_type(p, 0)!=SQLITE_NULL ){
    ProfsumKnobs k;
    char *zE = 0;
    const char *zLabel = (const char*)sqlite3_column_text(p, 1);
    rc = profsumTraceKnobs(db, zSchema, iTrace, &k, pzErr);
    if( rc==SQLITE_OK && (k.warmupSteps!=pK->warmupSteps || k.hotOpLimit!=pK->hotOpLimit
                          || k.globalMode!=pK->globalMode) ){
      if( pzErr ) *pzErr = sqlite3_mprintf("trace '%s' was imported from a profile_summary.v1 file; "
                                           "its summary cannot be recomputed with other options", zLabel);
      rc = SQLITE_ERROR;
    }
    if( rc==SQLITE_OK ){
      d->zStored = sqlite3_mprintf("%s", sqlite3_column_text(p, 0));
      d->pRoot = d->zStored ? jParse(d->zStored, -1, &zE) : 0;
      if( d->pRoot==0 ){
        rc = zE ? SQLITE_ERROR : SQLITE_NOMEM;
        if( zE && pzErr ) *pzErr = sqlite3_mprintf("stored summary: %s", zE);
        sqlite3_free(zE);
      }
    }
  }else{
    /* The tree's nodes in an arena of the document's (jsontree.h): only
    ** the document is built here, and profsumDocFree() frees both. */
    rc = jArenaBegin(&d->pArena);
    if( rc==SQLITE_OK ){
      rc = buildFromTables(db, zSchema, iTrace, pK, forSections, &d->pRoot, pzErr);
      jArenaEnd(d->pArena);
    }
  }
  sqlite3_finalize(p);
  if( rc ){ profsumDocFree(d); return rc; }
  *ppDoc = d;
  return SQLITE_OK;
}

/* See summary_doc.h. */
int profsumDocBuild(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                    const ProfsumKnobs *pK, ProfsumDoc **ppDoc, char **pzErr){
  return docBuild(db, zSchema, iTrace, pK, 0, ppDoc, pzErr);
}

/* See summary_doc.h. */
int profsumDocBuildSections(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                            const ProfsumKnobs *pK, ProfsumDoc **ppDoc, char **pzErr){
  return docBuild(db, zSchema, iTrace, pK, 1, ppDoc, pzErr);
}

int profsumDocFromJson(const char *zJson, int nJson, ProfsumDoc **ppDoc, char **pzErr){
  ProfsumDoc *d = sqlite3_malloc64(sizeof(*d));
  char *zE = 0;
  *ppDoc = 0;
  if( d==0 ) return SQLITE_NOMEM;
  memset(d, 0, sizeof(*d));
  d->zStored = nJson<0 ? sqlite3_mprintf("%s", zJson) : sqlite3_mprintf("%.*s", nJson, zJson);
  if( d->zStored==0 ){ sqlite3_free(d); return SQLITE_NOMEM; }
  d->pRoot = jParse(d->zStored, -1, &zE);
  if( d->pRoot==0 || d->pRoot->type!=JT_OBJECT ){
    int rc = d->pRoot==0 && zE==0 ? SQLITE_NOMEM : SQLITE_ERROR;
    if( pzErr && rc==SQLITE_ERROR ) *pzErr = zE ? sqlite3_mprintf("%s", zE) : sqlite3_mprintf("not a JSON object");
    sqlite3_free(zE);
    profsumDocFree(d);
    return rc;
  }
  *ppDoc = d;
  return SQLITE_OK;
}

char *profsumDocJson(ProfsumDoc *pDoc){
  if( pDoc->zStored ){
    /* as the reference writes a summary it read: its record types with the
    ** reader's defaults (profsumDocReread), json.dumps(indent=2,
    ** sort_keys=True), whatever the file's layout */
    JNode *r = pDoc->pRoot ? profsumDocReread(pDoc->pRoot) : 0;
    char *z;
    if( r ){
      z = jDump(r);               /* no trailing newline, as jDump */
      jFree(r);
      if( z ) return z;
    }
    return 0;
  }
  return jDump(pDoc->pRoot);
}

const struct JNode *profsumDocRoot(ProfsumDoc *pDoc){ return pDoc->pRoot; }

void profsumDocFree(ProfsumDoc *pDoc){
  if( pDoc==0 ) return;
  jFree(pDoc->pRoot);                 /* first: it may hold nodes from the heap */
  jArenaFree(pDoc->pArena);
  sqlite3_free(pDoc->zStored);
  sqlite3_free(pDoc);
}

char *profsumJsonPretty(const char *zJson, int nJson, char **pzErr){
  JNode *p = jParse(zJson, nJson, pzErr);
  char *z;
  if( p==0 ) return 0;
  z = jDump(p);
  jFree(p);
  return z;
}

/* ------------------------------------------------------------------ */
/* Section tables (the store and fill steps: doc_tables.c)             */
/* ------------------------------------------------------------------ */

/* See summary_doc.h: each section's store step, in table order. */
int profsumDocStoreSections(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                            ProfsumDoc *pDoc, char **pzErr){
  int i, rc = SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<N_SECTION; i++){
    if( aSection[i].xStore ) rc = aSection[i].xStore(db, zSchema, iTrace, pDoc->pRoot, pzErr);
  }
  return rc;
}

/* See summary_doc.h: each section's fill step, in table order; a
** constraint error names the section and its rule. */
int profsumDocFillFromV1(sqlite3 *db, const char *zSchema, sqlite3_int64 iTrace,
                         const char *zFunc, const char *zPath, char **pzErr){
  int i, rc = SQLITE_OK;
  char *zE = 0, *z;
  for(i=0; rc==SQLITE_OK && i<N_SECTION; i++){
    const DocSection *pS = &aSection[i];
    if( pS->xFill ) rc = pS->xFill(db, zSchema, iTrace, &zE);
    else if( pS->zFillTable ){
      rc = profsumDocFillRows(db, zSchema, iTrace, pS->zFillTable, pS->azFillCol, pS->nFillCol, pS->zKey, &zE);
    }
  }
  if( rc==SQLITE_OK ) return SQLITE_OK;
  i--;
  if( zE==0 ){
    z = 0;
  }else if( (rc&0xff)==SQLITE_CONSTRAINT ){
    /* the section and the rule instead of SQLite's table and column */
    const char *zPart = aSection[i].xBuild==buildTrace ? "its top-level fields" : aSection[i].zKey;
    if( aSection[i].zUnique && strstr(zE, "UNIQUE") ){
      z = sqlite3_mprintf("%s: '%s': cannot store this profile_summary.v1 document: %s has two "
                          "entries with the same %s (%s)", zFunc, zPath, zPart, aSection[i].zUnique, zE);
    }else{
      z = sqlite3_mprintf("%s: '%s': cannot store this profile_summary.v1 document: %s lack a "
                          "required value or hold one of the wrong type (%s)", zFunc, zPath, zPart, zE);
    }
  }else if( (rc&0xff)==SQLITE_ERROR ){
    /* SQLite's JSON functions on a section of another shape ("malformed
    ** JSON": a string where a list is, a string where an entry is) */
    const char *zPart = aSection[i].xBuild==buildTrace ? "its top-level fields" : aSection[i].zKey;
    z = sqlite3_mprintf("%s: '%s': cannot store this profile_summary.v1 document: %s have the "
                        "wrong shape: a list of objects (one object for a record section) (%s)",
                        zFunc, zPath, zPart, zE);
  }else{
    z = sqlite3_mprintf("%s: %s", zFunc, zE);
  }
  sqlite3_free(zE);
  if( pzErr && *pzErr==0 ) *pzErr = z; else sqlite3_free(z);
  return rc;
}

/* ------------------------------------------------------------------ */
/* SQL functions                                                       */
/* ------------------------------------------------------------------ */

/* See summary_doc.h. */
int profsumDocIn(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                 const char *zSchema, const char *zKnobs, ProfsumDoc **ppDoc,
                 sqlite3_int64 *pId){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  ProfsumKnobs k;
  char *zErr = 0;
  int rc = profsumResolveTrace(db, zSchema, pTrace, pId, &zErr);
  if( rc==SQLITE_OK ) rc = profsumTraceKnobs(db, zSchema, *pId, &k, &zErr);
  if( rc==SQLITE_OK ) rc = profsumParseKnobs(zKnobs, &k, 1, &zErr);
  if( rc==SQLITE_OK ) rc = profsumDocBuild(db, zSchema, *pId, &k, ppDoc, &zErr);
  if( rc ){
    if( rc==SQLITE_NOMEM && zErr==0 ) sqlite3_result_error_nomem(ctx);
    else profsumCtxErr(ctx, "%s: %s", zFunc, zErr ? zErr : sqlite3_errstr(rc));
  }
  sqlite3_free(zErr);
  return rc;
}

/* The document for a function whose options_json zOpts may hold the knobs
** and the "schema". */
static int callDoc(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                   const char *zOpts, ProfsumDoc **ppDoc){
  const char *zSchema = "main";
  char *zSchemaOwned = 0;
  sqlite3_int64 id;
  int rc;
  if( zOpts ){
    /* the schema first: the trace is looked up in it (the knobs, strict
    ** about unknown keys, are read by docIn) */
    JNode *o = jParse(zOpts, -1, 0);
    JNode *sch = jGet(o, "schema");
    if( sch && sch->type!=JT_STRING ){
      profsumCtxErr(ctx, "%s: options_json: schema must be the name of an attached database (text)", zFunc);
      jFree(o);
      return SQLITE_ERROR;
    }
    if( sch && !profsumSchemaAttached(sqlite3_context_db_handle(ctx), sch->z) ){
      /* not "no trace": as every function that takes a schema says it */
      profsumCtxErr(ctx, "%s: options_json: schema '%s' is not an attached database", zFunc, sch->z);
      jFree(o);
      return SQLITE_ERROR;
    }
    if( sch ){
      zSchema = zSchemaOwned = sqlite3_mprintf("%s", sch->z);
      if( zSchemaOwned==0 ){ jFree(o); sqlite3_result_error_nomem(ctx); return SQLITE_NOMEM; }
    }
    jFree(o);
  }
  rc = profsumDocIn(ctx, zFunc, pTrace, zSchema, zOpts, ppDoc, &id);
  sqlite3_free(zSchemaOwned);
  return rc;
}

/* See summary_doc.h. */
int profsumDocForCall(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pTrace,
                      sqlite3_value *pOpts, ProfsumDoc **ppDoc, sqlite3_int64 *pId,
                      char **pzSchema){
  char *zErr = 0, *zSchema = 0;
  int rc = SQLITE_OK;
  *ppDoc = 0;
  *pzSchema = 0;
  if( pOpts && sqlite3_value_type(pOpts)!=SQLITE_NULL ){
    rc = profsumSchemaOption(sqlite3_context_db_handle(ctx), (const char*)sqlite3_value_text(pOpts),
                             0, 0, &zSchema, &zErr);
    if( rc ){
      if( zErr ) profsumCtxErr(ctx, "%s: %s", zFunc, zErr);
      else sqlite3_result_error_nomem(ctx);
      sqlite3_free(zErr);
      return rc;
    }
  }
  if( zSchema==0 && (zSchema = sqlite3_mprintf("main"))==0 ){
    sqlite3_result_error_nomem(ctx);
    return SQLITE_NOMEM;
  }
  rc = profsumDocIn(ctx, zFunc, pTrace, zSchema, 0, ppDoc, pId);
  if( rc ){
    sqlite3_free(zSchema);
    return rc;
  }
  *pzSchema = zSchema;
  return SQLITE_OK;
}

/* profsum_summary_json(trace [, options_json]) → the v1 document text. */
static void summaryJsonFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ProfsumDoc *d = 0;
  char *z;
  const char *zOpts = argc>1 && sqlite3_value_type(argv[1])!=SQLITE_NULL
                      ? (const char*)sqlite3_value_text(argv[1]) : 0;
  if( callDoc(ctx, "profsum_summary_json", argv[0], zOpts, &d) ) return;
  z = profsumDocJson(d);
  profsumDocFree(d);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* profsum_report_md(trace [, top_k]) → the markdown report of tools-spec
** §5.  The form with options_json is report_profsum.c's, registered after
** this one. */
static void reportMdFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  ProfsumDoc *d = 0;
  char *z;
  sqlite3_int64 topK = 10, id;
  if( argc>1 && profsumTopKArg(ctx, "profsum_report_md", argv[1], &topK) ) return;
  if( profsumDocIn(ctx, "profsum_report_md", argv[0], "main", 0, &d, &id) ) return;
  z = profsumDocReportMd(d, (int)topK);
  profsumDocFree(d);
  if( z==0 ){ sqlite3_result_error_nomem(ctx); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* profsum_json_pretty(json) → Python json.dumps(indent=2, sort_keys=True). */
static void jsonPrettyFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  char *zErr = 0, *z;
  (void)argc;
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ) return;
  z = profsumJsonPretty((const char*)sqlite3_value_text(argv[0]), sqlite3_value_bytes(argv[0]), &zErr);
  if( z==0 ){
    if( zErr ) profsumCtxErr(ctx, "profsum_json_pretty: %s", zErr);
    else sqlite3_result_error_nomem(ctx);
    sqlite3_free(zErr);
    return;
  }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

int profsumRegisterSummaryDoc(sqlite3 *db, char **pzErr){
  int rc;
  (void)pzErr;
  /* They read tables only: usable anywhere, but not DETERMINISTIC (the
  ** tables change). */
  rc = profsumCreateFunctions(db, "profsum_summary_json", 1, 2, SQLITE_UTF8|PROFSUM_FN_READS, summaryJsonFunc);
  if( rc==SQLITE_OK ) rc = profsumCreateFunctions(db, "profsum_report_md", 1, 2, SQLITE_UTF8|PROFSUM_FN_READS, reportMdFunc);
  if( rc==SQLITE_OK ) rc = sqlite3_create_function(db, "profsum_json_pretty", 1,
                           SQLITE_UTF8|SQLITE_DETERMINISTIC|SQLITE_INNOCUOUS, 0, jsonPrettyFunc, 0, 0);
  return rc;
}
