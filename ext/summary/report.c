/*
** report.c — the markdown report of a profile_summary.v1 document
** (summary-v1-tools-spec.md §5, build_markdown_report(summary, top_k)).
**
** Works from the document tree, so it renders summaries built here and v1
** files imported from elsewhere alike.  For the latter it reads what the
** reference's profile_summary_from_dict() gives (summary-v1-spec §3.3
** "Reader leniency"): a missing or empty canonical_name is recomputed from
** the name (profsumCanonicalOp), a missing/empty payload_op or marker_op is
** the name; the report's own "x or 'n/a'" / "or 'unknown'" rules apply to
** the values as Python tests them (an empty string is false).
**
** Every float goes through profsumStrAppendPy (Python-exact rounding,
** profsum_int.h), never through sqlite3_str_appendf's %f/%e.
*/
#include <limits.h>
#include "profsum_int.h"
#include "summary_doc.h"
#include "funcs.h"
#include "jsontree.h"
#include "sqlcall.h"

#include <string.h>

/* A step number of §5.6 (representative step, periodicity) as the
** reference prints it: an integer, a float in Python's repr (a summary file
** may hold 2.0), or "n/a" when null or absent (another JSON type, which no
** summary writes, too). */
static void stepOrNa(sqlite3_str *s, const JNode *v){
  if( v && v->type==JT_INT ){
    sqlite3_str_appendf(s, "%lld", (long long)v->i);
  }else if( v && v->type==JT_REAL ){
    char z[40];
    jReprDouble(v->r, z);
    sqlite3_str_appendall(s, z);
  }else{
    sqlite3_str_appendall(s, "n/a");
  }
}

/* fmt(x): "n/a" for null/missing, else {x:.3f}. */
static void fmt3(sqlite3_str *s, const JNode *v){
  if( v==0 || (v->type!=JT_INT && v->type!=JT_REAL) ){ sqlite3_str_appendall(s, "n/a"); return; }
  profsumStrAppendPy(s, "%.3f", jNum(v));
}

/* pct(x) of a double: {x*100:.2f}% (x*100 computed in double first). */
static void pct2d(sqlite3_str *s, double x){ profsumStrAppendPy(s, "%.2f%%", x*100.0); }

/* pct(x): "n/a" for null/missing, else pct2d. */
static void pct2(sqlite3_str *s, const JNode *v){
  if( v==0 || (v->type!=JT_INT && v->type!=JT_REAL) ){ sqlite3_str_appendall(s, "n/a"); return; }
  pct2d(s, jNum(v));
}

/* code(s): backticks, with ` and | escaped. */
static void code(sqlite3_str *s, const char *z){
  sqlite3_str_appendchar(s, 1, '`');
  for(; *z; z++){
    if( *z=='`' || *z=='|' ) sqlite3_str_appendchar(s, 1, '\\');
    sqlite3_str_appendchar(s, 1, *z);
  }
  sqlite3_str_appendchar(s, 1, '`');
}

/* The text of a string member, or zDefault. */
static const char *str(const JNode *o, const char *zKey, const char *zDefault){
  const JNode *v = jGet(o, zKey);
  return (v && v->type==JT_STRING && v->n>0) ? v->z : zDefault;
}

/* Append "`<value or unknown>`" of a member (strings and numbers). */
static void ticked(sqlite3_str *s, const JNode *o, const char *zKey){
  const JNode *v = jGet(o, zKey);
  sqlite3_str_appendchar(s, 1, '`');
  if( v && v->type==JT_STRING && v->n>0 ) sqlite3_str_appendall(s, v->z);
  else if( v && v->type==JT_INT ) sqlite3_str_appendf(s, "%lld", (long long)v->i);
  else sqlite3_str_appendall(s, "unknown");
  sqlite3_str_appendchar(s, 1, '`');
}

/* An integer member (a count), as jNumI64 reads it. */
static sqlite3_int64 ival(const JNode *o, const char *zKey){
  return jNumI64(jGet(o, zKey));
}

/* a + b, saturated at the 64-bit range (counts summed from a file). */
static sqlite3_int64 satAdd(sqlite3_int64 a, sqlite3_int64 b){
  if( b>0 && a>LLONG_MAX-b ) return LLONG_MAX;
  if( b<0 && a<LLONG_MIN-b ) return LLONG_MIN;
  return a+b;
}

/* How a cell of a markdown table row is written from a member zKey of the
** row's object: 'c' code() of the string (zElse when missing or empty),
** 't' the string in backticks as it is, 's' the string as it is, 'i' the
** integer, 'f' fmt3, 'p' pct2, 'r' stepOrNa.  A list ends at cKind 0. */
typedef struct MdCol { char cKind; const char *zKey; const char *zElse; } MdCol;

/* Append the cells aCol of the object o, each as " text |" (a row starts
** with "|" and ends with "\n", both the caller's). */
static void mdCells(sqlite3_str *s, const JNode *o, const MdCol *aCol){
  const MdCol *c;
  for(c=aCol; c->cKind; c++){
    const JNode *v = jGet(o, c->zKey);
    sqlite3_str_appendchar(s, 1, ' ');
    switch( c->cKind ){
      case 'c': code(s, str(o, c->zKey, c->zElse)); break;
      case 't': sqlite3_str_appendf(s, "`%s`", str(o, c->zKey, c->zElse)); break;
      case 's': sqlite3_str_appendall(s, str(o, c->zKey, c->zElse)); break;
      case 'i': sqlite3_str_appendf(s, "%lld", (long long)jNumI64(v)); break;
      case 'f': fmt3(s, v); break;
      case 'p': pct2(s, v); break;
      default:  stepOrNa(s, v); break;
    }
    sqlite3_str_appendall(s, " |");
  }
}

/* Append z as a code() cell: " `z` |". */
static void codeCell(sqlite3_str *s, const char *z){
  sqlite3_str_appendchar(s, 1, ' ');
  code(s, z);
  sqlite3_str_appendall(s, " |");
}

/* The number of rows of arr a section shows: topK at most, or with a
** negative topK all but the last -topK (Python's arr[:topK]). */
static int nTop(const JNode *arr, int topK){
  return profsumTopKLen(arr ? arr->nChild : 0, topK);
}

/* A section of up to topK rows (nTop) of the array arr: zHead (its
** heading and table head), then per row "|", the cells xLead writes (when
** not 0), the cells aCol and "\n"; then a blank line.  SQLITE_OK, or
** SQLITE_NOMEM when xLead ran out of memory (the section stops there). */
static int mdSection(sqlite3_str *s, const char *zHead, const JNode *arr, int topK,
                     int (*xLead)(sqlite3_str*, const JNode*), const MdCol *aCol){
  int i, n = nTop(arr, topK);
  sqlite3_str_appendall(s, zHead);
  for(i=0; i<n; i++){
    const JNode *o = jAt(arr, i);
    sqlite3_str_appendchar(s, 1, '|');
    if( xLead && xLead(s, o) ) return SQLITE_NOMEM;
    mdCells(s, o, aCol);
    sqlite3_str_appendchar(s, 1, '\n');
  }
  sqlite3_str_appendall(s, "\n");
  return SQLITE_OK;
}

/* The title, Run Metadata and Trace Provenance. */
static void mdHead(sqlite3_str *s, const JNode *d){
  const JNode *rm = jGet(d, "run_metadata"), *pv = jGet(d, "trace_provenance");
  int i, n;
  sqlite3_str_appendf(s, "# Profile Report (%s)\n\n", str(d, "schema_version", "profile_summary.v1"));

  sqlite3_str_appendall(s, "## Run Metadata\n- Run: "); ticked(s, rm, "run_path");
  sqlite3_str_appendall(s, "\n- Artifact: "); ticked(s, rm, "artifact_ref");
  sqlite3_str_appendall(s, "\n- Hardware: "); ticked(s, rm, "hardware_type");
  sqlite3_str_appendall(s, "\n- Topology: "); ticked(s, rm, "mesh_or_topology");
  sqlite3_str_appendall(s, "\n- Git SHA: "); ticked(s, rm, "git_sha");
  /* f"`{summary.generated_at_utc}`": no "or 'unknown'" here */
  sqlite3_str_appendf(s, "\n- Generated At (UTC): `%s`", str(d, "generated_at_utc", ""));
  sqlite3_str_appendall(s, "\n\n");

  sqlite3_str_appendall(s, "## Trace Provenance\n- Trace SHA256: "); ticked(s, pv, "trace_sha256");
  sqlite3_str_appendall(s, "\n- Observed run_ids: `");
  {
    /* ', '.join(run_ids[:8]) or 'unknown': an empty join ([] or [""]) is
    ** unknown; ["", ""] gives ", " */
    const JNode *ids = jGet(pv, "run_ids");
    int n0 = sqlite3_str_length(s);
    n = ids ? ids->nChild : 0;
    for(i=0; i<n && i<8; i++){
      const JNode *v = jAt(ids, i);
      if( i ) sqlite3_str_appendall(s, ", ");
      if( v->type==JT_STRING ) sqlite3_str_appendall(s, v->z);
      else if( v->type==JT_INT ) sqlite3_str_appendf(s, "%lld", (long long)v->i);
    }
    if( sqlite3_str_length(s)==n0 ) sqlite3_str_appendall(s, "unknown");
  }
  sqlite3_str_appendall(s, "`\n\n");
}

/* Trace Overview with its quality warnings. */
static void mdOverview(sqlite3_str *s, const JNode *d){
  const JNode *ov = jGet(d, "trace_overview");
  int i;
  sqlite3_str_appendf(s, "## Trace Overview\n- Complete events: `%lld`\n- Total events: `%lld`\n"
      "- Processes: `%lld`\n- Threads: `%lld`\n- Suspected truncation: `%s`\n",
      (long long)ival(ov, "num_complete_events"), (long long)ival(ov, "num_events_total"),
      (long long)ival(ov, "num_processes"), (long long)ival(ov, "num_threads"),
      (jGet(ov, "suspected_truncation") && jGet(ov, "suspected_truncation")->type==JT_TRUE) ? "yes" : "no");
  {
    const JNode *w = jGet(ov, "quality_warnings");
    if( w && w->nChild>0 ){
      sqlite3_str_appendall(s, "- Quality warnings:\n");
      for(i=0; i<w->nChild; i++){
        const JNode *v = jAt(w, i);
        sqlite3_str_appendf(s, "  - %s\n", v->type==JT_STRING ? v->z : "");
      }
    }
  }
  sqlite3_str_appendall(s, "\n");
}

/* Step Time (Steady State) and Step Classes. */
static void mdSteps(sqlite3_str *s, const JNode *d){
  const JNode *st = jGet(d, "step_time");
  int i;
  {
    const JNode *ss = jGet(st, "steady_state_steps");
    sqlite3_str_appendf(s, "## Step Time (Steady State)\n- Steps counted: `%lld`\n- Median: `",
                        (long long)ival(ss, "count"));
    fmt3(s, jGet(ss, "median")); sqlite3_str_appendall(s, "`\n- P90: `");
    fmt3(s, jGet(ss, "p90")); sqlite3_str_appendall(s, "`\n- Mean: `");
    fmt3(s, jGet(ss, "mean")); sqlite3_str_appendall(s, "`\n\n");
  }

  {
    const JNode *cl = jGet(st, "classes");
    if( cl && cl->nChild>0 ){
      sqlite3_str_appendall(s, "## Step Classes\n| Class | Count | Fraction | Median | P90 | "
          "Representative Step | Periodicity |\n|---|---:|---:|---:|---:|---:|---:|\n");
      for(i=0; i<cl->nChild; i++){
        static const MdCol aHead[] = {{'t', "name", ""}, {'i', "count", 0}, {'p', "fraction_of_steady", 0}, {0}};
        static const MdCol aStats[] = {{'f', "median", 0}, {'f', "p90", 0}, {0}};
        static const MdCol aTail[] = {{'r', "representative_step", 0}, {'r', "periodicity", 0}, {0}};
        const JNode *c = jAt(cl, i);
        sqlite3_str_appendchar(s, 1, '|');
        mdCells(s, c, aHead);
        mdCells(s, jGet(c, "duration_stats"), aStats);
        mdCells(s, c, aTail);
        sqlite3_str_appendchar(s, 1, '\n');
      }
      sqlite3_str_appendall(s, "\n");
    }
  }
}

/* Time Breakdown. */
static void mdBreakdown(sqlite3_str *s, const JNode *d){
  const JNode *tb = jGet(d, "time_breakdown");
  int i;
  static const char *azCat[5][2] = {{"Compute","compute"},{"Communication","communication"},
    {"Host","host"},{"Stall","stall"},{"Other","other"}};
  static const MdCol aCol[] = {{'f', "total_duration", 0}, {'p', "share_of_total", 0}, {0}};
  sqlite3_str_appendf(s, "## Time Breakdown (`%s`)\n| Category | Duration | Share |\n|---|---:|---:|\n",
                      str(tb, "duration_basis", ""));
  for(i=0; i<5; i++){
    sqlite3_str_appendf(s, "| %s |", azCat[i][0]);
    mdCells(s, jGet(tb, azCat[i][1]), aCol);
    sqlite3_str_appendchar(s, 1, '\n');
  }
  sqlite3_str_appendall(s, "\n");
}

/* Hierarchical Regions (topK rows). */
static void mdRegions(sqlite3_str *s, const JNode *d, int topK){
  int i, n;
  static const MdCol aHead[] = {{'t', "path", ""}, {'i', "depth", 0}, {'i', "count", 0},
                                {'f', "inclusive_duration", 0}, {0}};
  static const MdCol aExcl[] = {{'f', "exclusive_duration", 0}, {0}};
  const JNode *rg = jGet(d, "hierarchical_regions");
  double fallback = 0.0;
  int k;
  sqlite3_str_appendall(s, "## Hierarchical Regions\n| Region Path | Depth | Count | Inclusive | "
      "Inclusive % | Exclusive | Exclusive % |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for(k=0; rg && k<rg->nChild; k++){
    const JNode *r = jAt(rg, k);
    if( ival(r, "depth")==1 ){ double t = jNum(jGet(r, "inclusive_duration")); if( t<0 ) t = 0; if( t>fallback ) fallback = t; }
  }
  n = nTop(rg, topK);
  for(i=0; i<n; i++){
    const JNode *r = jAt(rg, i);
    const char *zPath = str(r, "path", "");
    const char *zSep = strstr(zPath, "=>");
    int nRoot = zSep ? (int)(zSep - zPath) : (int)strlen(zPath);
    double tot = fallback;
    int found = 0;
    for(k=0; rg && k<rg->nChild; k++){
      const JNode *q = jAt(rg, k);
      const char *zq = str(q, "path", "");
      if( ival(q, "depth")==1 && (int)strlen(zq)==nRoot && memcmp(zq, zPath, (size_t)nRoot)==0 ){
        /* the last depth-1 entry with that path wins, as in a dict */
        double t = jNum(jGet(q, "inclusive_duration"));
        tot = t<0 ? 0 : t;
        found = 1;
      }
    }
    (void)found;
    sqlite3_str_appendchar(s, 1, '|');
    mdCells(s, r, aHead);
    sqlite3_str_appendchar(s, 1, ' ');
    pct2d(s, tot>0 ? jNum(jGet(r, "inclusive_duration"))/tot : 0.0);
    sqlite3_str_appendall(s, " |");
    mdCells(s, r, aExcl);
    sqlite3_str_appendchar(s, 1, ' ');
    pct2d(s, tot>0 ? jNum(jGet(r, "exclusive_duration"))/tot : 0.0);
    sqlite3_str_appendall(s, " |\n");
  }
  sqlite3_str_appendall(s, "\n");
}

/* The leading cells of a Top Ops row: the op's name and its canonical
** name (recomputed from the name, as the reader does, when missing or
** empty).  SQLITE_OK or SQLITE_NOMEM. */
static int topOpLead(sqlite3_str *s, const JNode *h){
  const char *zName = str(h, "name", ""), *zCanon = str(h, "canonical_name", 0);
  codeCell(s, zName);
  if( zCanon ){
    codeCell(s, zCanon);
  }else{
    ProfsumSlice c = profsumCanonicalOp(zName, (int)strlen(zName));
    char *zC = sqlite3_mprintf("%.*s", c.z ? c.n : 0, c.z ? c.z : "");
    if( zC==0 ) return SQLITE_NOMEM;
    codeCell(s, zC);
    sqlite3_free(zC);
  }
  return SQLITE_OK;
}

/* Top Ops (topK rows); SQLITE_NOMEM when out of memory. */
static int mdTopOps(sqlite3_str *s, const JNode *d, int topK){
  static const MdCol aCol[] = {{'s', "category", ""}, {'i', "count", 0}, {'f', "exclusive_duration", 0},
                               {'f', "avg_duration", 0}, {'c', "shape_signature", "n/a"},
                               {'c', "tf_op_path", "n/a"}, {0}};
  return mdSection(s, "## Top Ops\n| Op | Canonical | Category | Count | Exclusive | Avg | "
      "Shape Signature | HLO/TF Path |\n|---|---|---|---:|---:|---:|---|---|\n",
      jGet(d, "hot_ops"), topK, topOpLead, aCol);
}

/* Semantic Families (topK rows). */
static void mdFamilies(sqlite3_str *s, const JNode *d, int topK){
  int i, n;
  static const MdCol aHead[] = {{'t', "family", ""}, {'i', "count", 0}, {'f', "exclusive_duration", 0},
                                {'p', "share_of_total", 0}, {'f', "avg_exclusive_duration", 0}, {0}};
  const JNode *fa = jGet(d, "semantic_families");
  sqlite3_str_appendall(s, "## Semantic Families\n_Note: FLOP proxy metrics are relative scaling "
      "heuristics from trace shapes, not hardware MFU._\n| Family | Count | Exclusive | Share | "
      "Avg Exclusive | FLOP Proxy Total | FLOP Proxy/s | Example Op |\n"
      "|---|---:|---:|---:|---:|---:|---:|---|\n");
  n = nTop(fa, topK);
  for(i=0; i<n; i++){
    /* legacy keys of older files (summary-v1 §3.2): work_proxy_total,
    ** normalized_exclusive_per_work */
    const JNode *f = jAt(fa, i);
    const JNode *tp = jGetOr(f, "time_per_flop_proxy", "normalized_exclusive_per_work");
    sqlite3_str_appendchar(s, 1, '|');
    mdCells(s, f, aHead);
    sqlite3_str_appendchar(s, 1, ' ');
    fmt3(s, jGetOr(f, "flop_proxy_total", "work_proxy_total"));
    sqlite3_str_appendall(s, " | ");
    if( tp && (tp->type==JT_REAL || tp->type==JT_INT) && jNum(tp)>0 ) profsumStrAppendPy(s, "%.3e", 1.0/jNum(tp));
    else sqlite3_str_appendall(s, "n/a");
    /* f"`{family.example_op or 'n/a'}`" */
    sqlite3_str_appendf(s, " | `%s` |\n", str(f, "example_op", "n/a"));
  }
  sqlite3_str_appendall(s, "\n");
}

/* Communication Collectives (topK rows). */
static void mdCollectives(sqlite3_str *s, const JNode *d, int topK){
  static const MdCol aCol[] = {{'s', "collective", ""}, {'i', "count", 0}, {'f', "total_duration", 0},
                               {'f', "avg_duration", 0}, {0}};
  mdSection(s, "## Communication Collectives\n| Collective | Count | Exclusive | Avg |\n|---|---:|---:|---:|\n",
            jGet(d, "communication_ops"), topK, 0, aCol);
}

/* The leading cells of a Pre-Op Gaps row: the payload op (payload_op, else
** the name) and the marker op (the reader's marker_op, else the name,
** else the payload).  SQLITE_OK. */
static int gapLead(sqlite3_str *s, const JNode *g){
  const char *zP = str(g, "payload_op", str(g, "name", ""));
  codeCell(s, zP);
  codeCell(s, str(g, "marker_op", str(g, "name", zP)));
  return SQLITE_OK;
}

/* Pre-Op Gaps (topK rows). */
static void mdGaps(sqlite3_str *s, const JNode *d, int topK){
  static const MdCol aCol[] = {{'i', "count", 0}, {'f', "total_gap_duration", 0}, {'f', "max_gap_duration", 0},
                               {'f', "avg_gap_duration", 0}, {0}};
  mdSection(s, "## Pre-Op Gaps\n| Payload Op | Marker Op | Count | Total Gap | Max Gap | "
      "Avg Gap |\n|---|---|---:|---:|---:|---:|\n", jGet(d, "gap_before_ops"), topK, gapLead, aCol);
}

/* Gap Context (Region-First), the contexts regrouped by region path (topK
** rows); SQLITE_NOMEM when out of memory. */
static int mdGapContext(sqlite3_str *s, const JNode *d, int topK){
  int n;
  /* Regroup contexts by region path. */
  const JNode *cx = jGet(d, "gap_region_contexts");
  JNode *groups = jObj();   /* path → {count, total, ops: {name: count}} (insertion order) */
  int k, nG, bOom = 0;      /* out of memory: no report (not one without these rows) */
  JNode **a;
  sqlite3_str_appendall(s, "## Gap Context (Region-First)\n| Region Path | Count | Total Gap | Avg Gap | "
      "Top Payload Ops |\n|---|---:|---:|---:|---|\n");
  for(k=0; cx && k<cx->nChild; k++){
    const JNode *c = jAt(cx, k);
    const char *zPath = str(c, "region_path", "");
    const char *zOp = str(c, "op_name", "");
    JNode *g = jGet(groups, zPath), *ops, *oc;
    if( g==0 ){
      g = jObj();
      jSet(g, "count", jInt(0)); jSet(g, "total", jReal(0.0)); jSet(g, "ops", jObj());
      jSet(groups, zPath, g);
      g = jGet(groups, zPath);
      if( g==0 ){ bOom = 1; break; }
    }
    {
      JNode *gc = jGet(g, "count"), *gt = jGet(g, "total");
      if( gc==0 || gt==0 ){ bOom = 1; break; }   /* out of memory */
      gc->i = satAdd(gc->i, ival(c, "count"));
      gt->r += jNum(jGet(c, "total_gap_duration"));
    }
    ops = jGet(g, "ops");
    if( ops==0 ){ bOom = 1; break; }
    oc = jGet(ops, zOp);
    if( oc ) oc->i = satAdd(oc->i, ival(c, "count")); else jSet(ops, zOp, jInt(ival(c, "count")));
  }
  nG = groups ? groups->nChild : 0;
  a = sqlite3_malloc64(sizeof(JNode*)*(sqlite3_uint64)(nG+1));
  if( a==0 || jOom(groups) ) bOom = 1;
  if( !bOom ){
    for(k=0; k<nG; k++) a[k] = groups->a[k];
    /* stable insertion sort: total desc, path asc */
    for(k=1; k<nG; k++){
      JNode *x = a[k]; int j = k-1;
      while( j>=0 && (jGet(a[j], "total")->r < jGet(x, "total")->r
             || (jGet(a[j], "total")->r == jGet(x, "total")->r && strcmp(a[j]->zKey, x->zKey)>0)) ){
        a[j+1] = a[j]; j--;
      }
      a[j+1] = x;
    }
    n = profsumTopKLen(nG, topK);
    for(k=0; k<n; k++){
      JNode *g = a[k], *ops = jGet(g, "ops");
      sqlite3_int64 cnt = jGet(g, "count")->i;
      double tot = jGet(g, "total")->r;
      int m, shown = 0;
      sqlite3_str_appendall(s, "| "); code(s, g->zKey);
      profsumStrAppendPy(s, " | %lld | %.3f | ", (long long)cnt, tot);
      if( cnt ) profsumStrAppendPy(s, "%.3f", tot/(double)cnt); else sqlite3_str_appendall(s, "0.000");
      sqlite3_str_appendall(s, " | ");
      /* up to 3 most common op names, ties first seen */
      {
        int used[3] = {-1,-1,-1};
        for(shown=0; shown<3; shown++){
          int best = -1;
          for(m=0; m<ops->nChild; m++){
            if( m==used[0] || m==used[1] || m==used[2] ) continue;
            if( best<0 || ops->a[m]->i > ops->a[best]->i ) best = m;
          }
          if( best<0 ) break;
          used[shown] = best;
        }
        if( shown==0 ){
          code(s, "n/a");
        }else{
          sqlite3_str *t = sqlite3_str_new(0);
          char *zt;
          for(m=0; m<shown; m++){
            if( m ) sqlite3_str_appendall(t, ", ");
            sqlite3_str_appendall(t, ops->a[used[m]]->zKey);
          }
          zt = sqlite3_str_finish(t);
          if( zt==0 ) bOom = 1;
          code(s, zt ? zt : "");
          sqlite3_free(zt);
        }
      }
      sqlite3_str_appendall(s, " |\n");
    }
  }
  sqlite3_free(a);
  jFree(groups);
  if( bOom ) return SQLITE_NOMEM;
  sqlite3_str_appendall(s, "\n");
  return SQLITE_OK;
}

/* Optimization Candidates. */
static void mdCandidates(sqlite3_str *s, const JNode *d){
  int i;
  const JNode *ca = jGet(d, "optimization_candidates");
  sqlite3_str_appendall(s, "## Optimization Candidates\n");
  for(i=0; ca && i<ca->nChild; i++){
    const JNode *c = jAt(ca, i), *ev = jGet(c, "evidence"), *sg = jGet(c, "suggestions");
    int k;
    sqlite3_str_appendf(s, "### %s\n%s\n\nEvidence:\n", str(c, "title", ""), str(c, "rationale", ""));
    for(k=0; ev && k<ev->nChild; k++) sqlite3_str_appendf(s, "- %s\n", jAt(ev, k)->type==JT_STRING ? jAt(ev, k)->z : "");
    sqlite3_str_appendall(s, "\nSuggestions:\n");
    for(k=0; sg && k<sg->nChild; k++) sqlite3_str_appendf(s, "- %s\n", jAt(sg, k)->type==JT_STRING ? jAt(sg, k)->z : "");
    sqlite3_str_appendall(s, "\n");
  }
}

/* See summary_doc.h. */
char *profsumDocReportMd(ProfsumDoc *pDoc, int topK){
  const JNode *d = profsumDocRoot(pDoc);
  sqlite3_str *s = sqlite3_str_new(0);
  char *z;
  mdHead(s, d);
  mdOverview(s, d);
  mdSteps(s, d);
  mdBreakdown(s, d);
  mdRegions(s, d, topK);
  if( mdTopOps(s, d, topK) ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  mdFamilies(s, d, topK);
  mdCollectives(s, d, topK);
  mdGaps(s, d, topK);
  if( mdGapContext(s, d, topK) ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  mdCandidates(s, d);
  if( sqlite3_str_errcode(s) ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  z = sqlite3_str_finish(s);
  if( z ){
    /* strip trailing whitespace/newlines, then exactly one newline */
    size_t len = strlen(z), n0 = len;
    while( len>0 && (z[len-1]=='\n' || z[len-1]==' ' || z[len-1]=='\t' || z[len-1]=='\r') ) len--;
    if( len==n0 ){
      char *z2 = sqlite3_realloc64(z, n0+2);
      if( z2==0 ){ sqlite3_free(z); return 0; }
      z = z2;
    }
    z[len] = '\n';
    z[len+1] = 0;
  }
  return z;
}
