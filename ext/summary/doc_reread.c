/*
** doc_reread.c — a stored profile_summary.v1 document as the reference
** writes a summary it has read back: the fields of its record types only,
** with the reader's defaults and legacy names applied (docs/spec/summary.md,
** "Reader leniency").  A document profsum made itself comes out as it
** went in; one written by an older reference, or by hand, gains the keys
** added since (suspected_truncation, quality_warnings, payload_op,
** marker_op, ...), loses keys the record types do not have
** (total_overlap_duration, device_op_region_aggregates, unknown keys) and
** reads its legacy names under the current ones.
**
** The shape of each record is a table of fields (ReField); a field is a
** value copied as it is (null when absent), a record, a list of records,
** or one with a rule of its own (a default, a legacy name, a value
** recomputed when empty).  Values keep their JSON type: the reader does
** not convert them.
*/
#include "profsum_int.h"
#include "summary_doc.h"
#include "jsontree.h"
#include "funcs.h"

#include <string.h>

typedef struct ReField ReField;

/* How a field is read. */
enum {
  RE_VALUE,        /* as it is; null when absent */
  RE_RECORD,       /* a record of pSub (absent: every field absent) */
  RE_RECORDS,      /* a list of records of pSub; absent → [] */
  RE_LIST,         /* a list of values; absent → [] */
  RE_FALSE,        /* as it is; absent → false */
  RE_ALIAS,        /* as it is; absent → the member zAlias; both absent → null */
  RE_OR_NAME,      /* empty (Python-false) → the record's "name" */
  RE_OR_CANON      /* empty (Python-false) → the canonical form of "name" */
};

struct ReField {
  const char *zKey;
  int eKind;
  const ReField *pSub;  /* RE_RECORD, RE_RECORDS */
  const char *zAlias;   /* RE_ALIAS */
};

#define END { 0, 0, 0, 0 }

static const ReField aStats[] = {
  {"count", RE_VALUE, 0, 0}, {"mean", RE_VALUE, 0, 0}, {"median", RE_VALUE, 0, 0},
  {"p90", RE_VALUE, 0, 0}, {"min", RE_VALUE, 0, 0}, {"max", RE_VALUE, 0, 0}, END
};
static const ReField aStepClass[] = {
  {"name", RE_VALUE, 0, 0}, {"count", RE_VALUE, 0, 0}, {"fraction_of_steady", RE_VALUE, 0, 0},
  {"duration_stats", RE_RECORD, aStats, 0}, {"representative_step", RE_VALUE, 0, 0},
  {"representative_duration", RE_VALUE, 0, 0}, {"periodicity", RE_VALUE, 0, 0}, END
};
static const ReField aStepTime[] = {
  {"warmup_steps_ignored", RE_VALUE, 0, 0}, {"all_steps", RE_RECORD, aStats, 0},
  {"steady_state_steps", RE_RECORD, aStats, 0}, {"classes", RE_RECORDS, aStepClass, 0}, END
};
static const ReField aRunMeta[] = {
  {"run_path", RE_VALUE, 0, 0}, {"run_id", RE_VALUE, 0, 0}, {"artifact_ref", RE_VALUE, 0, 0},
  {"artifact_name", RE_VALUE, 0, 0}, {"hardware_type", RE_VALUE, 0, 0},
  {"mesh_or_topology", RE_VALUE, 0, 0}, {"git_sha", RE_VALUE, 0, 0},
  {"config_hash", RE_VALUE, 0, 0}, {"num_devices", RE_VALUE, 0, 0},
  {"num_hosts", RE_VALUE, 0, 0}, END
};
static const ReField aOverview[] = {
  {"display_time_unit", RE_VALUE, 0, 0}, {"num_events_total", RE_VALUE, 0, 0},
  {"num_complete_events", RE_VALUE, 0, 0}, {"num_processes", RE_VALUE, 0, 0},
  {"num_threads", RE_VALUE, 0, 0}, {"profile_start_ts", RE_VALUE, 0, 0},
  {"profile_end_ts", RE_VALUE, 0, 0}, {"duration_basis", RE_VALUE, 0, 0},
  {"suspected_truncation", RE_FALSE, 0, 0}, {"quality_warnings", RE_LIST, 0, 0}, END
};
static const ReField aProvenance[] = {
  {"trace_sha256", RE_VALUE, 0, 0}, {"run_ids", RE_LIST, 0, 0},
  {"source_file_hints", RE_LIST, 0, 0}, END
};
static const ReField aPart[] = {
  {"total_duration", RE_VALUE, 0, 0}, {"share_of_total", RE_VALUE, 0, 0}, END
};
static const ReField aBreakdown[] = {
  {"duration_basis", RE_VALUE, 0, 0}, {"total_duration", RE_VALUE, 0, 0},
  {"compute", RE_RECORD, aPart, 0}, {"communication", RE_RECORD, aPart, 0},
  {"host", RE_RECORD, aPart, 0}, {"stall", RE_RECORD, aPart, 0},
  {"other", RE_RECORD, aPart, 0}, END
};
static const ReField aHotOp[] = {
  {"name", RE_VALUE, 0, 0}, {"canonical_name", RE_OR_CANON, 0, 0}, {"category", RE_VALUE, 0, 0},
  {"count", RE_VALUE, 0, 0}, {"total_duration", RE_VALUE, 0, 0},
  {"exclusive_duration", RE_VALUE, 0, 0}, {"avg_duration", RE_VALUE, 0, 0},
  {"shape_signature", RE_VALUE, 0, 0}, {"source_file", RE_VALUE, 0, 0},
  {"tf_op_path", RE_VALUE, 0, 0},
  {"flop_proxy_per_invocation", RE_ALIAS, 0, "work_proxy_per_invocation"}, END
};
static const ReField aFamily[] = {
  {"family", RE_VALUE, 0, 0}, {"count", RE_VALUE, 0, 0}, {"total_duration", RE_VALUE, 0, 0},
  {"exclusive_duration", RE_VALUE, 0, 0}, {"share_of_total", RE_VALUE, 0, 0},
  {"avg_duration", RE_VALUE, 0, 0}, {"avg_exclusive_duration", RE_VALUE, 0, 0},
  {"example_op", RE_VALUE, 0, 0}, {"dominant_shape_signature", RE_VALUE, 0, 0},
  {"flop_proxy_total", RE_ALIAS, 0, "work_proxy_total"},
  {"time_per_flop_proxy", RE_ALIAS, 0, "normalized_exclusive_per_work"}, END
};
static const ReField aComm[] = {
  {"collective", RE_VALUE, 0, 0}, {"count", RE_VALUE, 0, 0}, {"total_duration", RE_VALUE, 0, 0},
  {"avg_duration", RE_VALUE, 0, 0}, END
};
static const ReField aGap[] = {
  {"name", RE_VALUE, 0, 0}, {"count", RE_VALUE, 0, 0}, {"total_gap_duration", RE_VALUE, 0, 0},
  {"max_gap_duration", RE_VALUE, 0, 0}, {"avg_gap_duration", RE_VALUE, 0, 0},
  {"payload_op", RE_OR_NAME, 0, 0}, {"marker_op", RE_OR_NAME, 0, 0}, END
};
static const ReField aRegion[] = {
  {"path", RE_VALUE, 0, 0}, {"depth", RE_VALUE, 0, 0}, {"count", RE_VALUE, 0, 0},
  {"inclusive_duration", RE_VALUE, 0, 0}, {"exclusive_duration", RE_VALUE, 0, 0}, END
};
static const ReField aContext[] = {
  {"op_name", RE_VALUE, 0, 0}, {"region_path", RE_VALUE, 0, 0}, {"count", RE_VALUE, 0, 0},
  {"total_gap_duration", RE_VALUE, 0, 0}, {"avg_gap_duration", RE_VALUE, 0, 0}, END
};
static const ReField aCandidate[] = {
  {"candidate_id", RE_VALUE, 0, 0}, {"title", RE_VALUE, 0, 0}, {"rationale", RE_VALUE, 0, 0},
  {"evidence", RE_LIST, 0, 0}, {"suggestions", RE_LIST, 0, 0}, END
};
static const ReField aSummary[] = {
  {"schema_version", RE_VALUE, 0, 0}, {"generated_at_utc", RE_VALUE, 0, 0},
  {"source_format", RE_VALUE, 0, 0}, {"source_path", RE_VALUE, 0, 0},
  {"run_metadata", RE_RECORD, aRunMeta, 0}, {"trace_overview", RE_RECORD, aOverview, 0},
  {"trace_provenance", RE_RECORD, aProvenance, 0}, {"step_time", RE_RECORD, aStepTime, 0},
  {"time_breakdown", RE_RECORD, aBreakdown, 0}, {"hot_ops", RE_RECORDS, aHotOp, 0},
  {"semantic_families", RE_RECORDS, aFamily, 0}, {"communication_ops", RE_RECORDS, aComm, 0},
  {"gap_before_ops", RE_RECORDS, aGap, 0}, {"hierarchical_regions", RE_RECORDS, aRegion, 0},
  {"gap_region_contexts", RE_RECORDS, aContext, 0},
  {"optimization_candidates", RE_RECORDS, aCandidate, 0}, END
};

#undef END

/* Is p false as a Python value is (absent, null, false, 0, 0.0, "", [],
** {})? */
static int pyFalse(const JNode *p){
  if( p==0 ) return 1;
  switch( p->type ){
    case JT_NULL: case JT_FALSE: return 1;
    case JT_INT: return p->i==0;
    case JT_REAL: return p->r==0.0;
    case JT_STRING: return p->n==0;
    case JT_ARRAY: case JT_OBJECT: return p->nChild==0;
  }
  return 0;
}

static JNode *rereadRecord(const JNode *pIn, const ReField *aField);

/* The value of field f of the record pIn (0 when pIn is not an object: a
** record read from a value of another type has every field absent), as a
** new node; 0 when out of memory. */
static JNode *rereadField(const JNode *pIn, const ReField *f){
  const JNode *v = pIn && pIn->type==JT_OBJECT ? jGet(pIn, f->zKey) : 0;
  switch( f->eKind ){
    case RE_RECORD:
      return rereadRecord(v, f->pSub);
    case RE_RECORDS: {
      JNode *a;
      int i;
      if( v && v->type!=JT_ARRAY ) return jClone(v);
      a = jArr();
      for(i=0; a && v && i<v->nChild; i++) jPush(a, rereadRecord(v->a[i], f->pSub));
      return a;
    }
    case RE_LIST:
      return v ? jClone(v) : jArr();
    case RE_FALSE:
      return v ? jClone(v) : jBool(0);
    case RE_ALIAS:
      if( v==0 && pIn && pIn->type==JT_OBJECT ) v = jGet(pIn, f->zAlias);
      return jClone(v);
    case RE_OR_NAME:
      return jClone(pyFalse(v) && pIn ? jGet(pIn, "name") : v);
    case RE_OR_CANON: {
      const JNode *nm = pIn ? jGet(pIn, "name") : 0;
      ProfsumSlice c;
      if( !pyFalse(v) ) return jClone(v);
      if( nm==0 || nm->type!=JT_STRING ) return jNull();
      c = profsumCanonicalOp(nm->z, nm->n);
      return jStr(c.n ? c.z : "", c.n);
    }
  }
  return jClone(v);
}

/* A new object with the fields of aField read from pIn (any JSON value);
** 0 when out of memory. */
static JNode *rereadRecord(const JNode *pIn, const ReField *aField){
  JNode *o = jObj();
  const ReField *f;
  for(f=aField; o && f->zKey; f++) jSetNew(o, f->zKey, rereadField(pIn, f));
  return o;
}

/* See summary_doc.h. */
JNode *profsumDocReread(const JNode *pDoc){
  JNode *o = rereadRecord(pDoc, aSummary);
  if( o && jOom(o) ){ jFree(o); return 0; }
  return o;
}
