/*
** compare_md.c — profsum_compare_md(before, after [, top_k [, options_json]]):
** a comparison for people, in markdown (or HTML with {"html": true}),
** beside the reference's JSON (profsum_compare_json, unchanged):
**
**   - the source formats, with a note when they differ (an XPlane and a
**     JSON trace of one capture give other numbers for that reason alone);
**   - the environments (profsum_environment: JAX and jaxlib versions, the
**     accelerators), when either side's capture states one, with a note
**     when both state a value and they differ;
**   - the steady-state step time delta with its noise: the larger over both
**     sides of (steady p90 − steady median); a delta inside it is "within
**     noise";
**   - the breakdown's share shifts, in one mode on both sides (per-track
**     when both have it, else the global timeline's), and the steady
**     steps' wall-clock shifts (profsum_step_wall; a side with warmup
**     steps only: those, and it says so);
**   - the ops that moved most, matched by name: `exact`, `canonical` (the
**     same name modulo XLA's numeric suffix, convolution.308 ↔
**     convolution.311, paired in order of exclusive time), `before only`,
**     `after only`; the hot ops of each side, and an op of one side's
**     hot ops that the other's lack is looked up among all the other
**     side's ops (profsum_agg_op) by its exact name before it is called
**     one side's only; names shortened to 80 characters.
**
** Also profsumHistWarnSources(), the stderr warning of profsum_compare_json
** and profsum_track when the two sides' source_format differ.
*/
#include "profsum_int.h"
#include "history_int.h"
#include "summary_doc.h"
#include "funcs.h"
#include "sqlcall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD_NAME_MAX 80        /* op names shown at most this long */

/* One hot op of one side. */
typedef struct CmdOp {
  char *zName, *zCanon;
  double excl;
  int iMatch;                  /* index in the other side's array, -1 none */
  int kind;                    /* 0 exact, 1 canonical */
  int hasOut;                  /* unmatched there, but the other side has
                               ** an op of this exact name beyond its hot
                               ** ops: its exclusive time is outExcl */
  double outExcl;
} CmdOp;

/* What the comparison reads of one side. */
typedef struct CmdSide {
  sqlite3_int64 id;
  char *zLabel, *zFormat;
  int hasSteady;
  double median, p90;
  double aShare[2][5];         /* per-track [0] and global [1]: compute,
                               ** communication, host, stall, other */
  int hasMode[2];              /* the side has rows of that mode */
  int hasWall;
  int wallWarmup;              /* the wall split is of warmup steps (no
                               ** steady ones) */
  double aWall[4];             /* compute, collective, transfer, idle shares */
  CmdOp *aOp; int nOp;
  char *azEnv[3];              /* jax_version, jaxlib_version, device_model
                               ** (profsum_environment), 0: unknown */
  sqlite3_int64 nDev;          /* its n_devices */
} CmdSide;

static const char *const azCmdCat[5] = {"compute", "communication", "host", "stall", "other"};

/* Free what side p holds. */
static void cmdSideFree(CmdSide *p){
  int i;
  for(i=0; i<p->nOp; i++){ sqlite3_free(p->aOp[i].zName); sqlite3_free(p->aOp[i].zCanon); }
  sqlite3_free(p->aOp);
  sqlite3_free(p->zLabel);
  sqlite3_free(p->zFormat);
  for(i=0; i<3; i++) sqlite3_free(p->azEnv[i]);
  memset(p, 0, sizeof(*p));
}

/* Prepare zFmt (each %w: zSchema) and bind id to ?1. */
static int cmdPrep(sqlite3 *db, const char *zSchema, const char *zFmt, sqlite3_int64 id,
                   sqlite3_stmt **pp, char **pzErr){
  char *z = sqlite3_mprintf(zFmt, zSchema, zSchema, zSchema);
  int rc;
  *pp = 0;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, z, -1, pp, 0);
  sqlite3_free(z);
  if( rc ) return profsumHistStmtFail(db, rc, pzErr);
  sqlite3_bind_int64(*pp, 1, id);
  return SQLITE_OK;
}

/* Finish a statement stepped to its end (rc: the last step's). */
static int cmdDone(sqlite3 *db, sqlite3_stmt *p, int rc, char **pzErr){
  if( rc==SQLITE_DONE || rc==SQLITE_ROW ) rc = SQLITE_OK;
  sqlite3_finalize(p);
  if( rc ) return profsumHistStmtFail(db, rc, pzErr);
  return SQLITE_OK;
}

/* Read side p (p->id) from zSchema. */
static int cmdSideRead(sqlite3 *db, const char *zSchema, CmdSide *p, char **pzErr){
  sqlite3_stmt *q = 0;
  int rc, k;
  rc = cmdPrep(db, zSchema, "SELECT t.label, t.source_format, s.median, s.p90, s.count "
               "FROM \"%w\".profsum_trace AS t LEFT JOIN \"%w\".profsum_step_stats AS s "
               "ON s.trace_id = t.trace_id AND s.scope = 'steady' WHERE t.trace_id=?1", p->id, &q, pzErr);
  if( rc ) return rc;
  if( (rc = sqlite3_step(q))==SQLITE_ROW ){
    p->zLabel = sqlite3_mprintf("%s", sqlite3_column_text(q, 0) ? (const char*)sqlite3_column_text(q, 0) : "");
    p->zFormat = sqlite3_mprintf("%s", sqlite3_column_text(q, 1) ? (const char*)sqlite3_column_text(q, 1) : "?");
    p->hasSteady = sqlite3_column_int64(q, 4)>0;
    p->median = sqlite3_column_double(q, 2);
    p->p90 = sqlite3_column_double(q, 3);
    if( p->zLabel==0 || p->zFormat==0 ){ sqlite3_finalize(q); return SQLITE_NOMEM; }
  }else if( rc==SQLITE_DONE ){
    /* gone since it was resolved: a replace between the statements of a
    ** call made inside the caller's own transaction cannot happen, nor in
    ** the snapshot the function is registered to read in; say so if it
    ** ever does instead of writing a half report */
    sqlite3_finalize(q);
    sqlite3_free(*pzErr);
    *pzErr = sqlite3_mprintf("trace %lld left the database while it was read", (long long)p->id);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( (rc = cmdDone(db, q, rc, pzErr))!=SQLITE_OK ) return rc;
  rc = cmdPrep(db, zSchema, "SELECT jax_version, jaxlib_version, device_model, n_devices "
               "FROM \"%w\".profsum_environment WHERE trace_id=?1", p->id, &q, pzErr);
  if( rc ) return rc;
  if( (rc = sqlite3_step(q))==SQLITE_ROW ){
    for(k=0; k<3; k++){
      const char *z = (const char*)sqlite3_column_text(q, k);
      if( z && (p->azEnv[k] = sqlite3_mprintf("%s", z))==0 ){ sqlite3_finalize(q); return SQLITE_NOMEM; }
    }
    p->nDev = sqlite3_column_int64(q, 3);
  }
  if( (rc = cmdDone(db, q, rc, pzErr))!=SQLITE_OK ) return rc;
  rc = cmdPrep(db, zSchema, "SELECT mode, category, share_of_total FROM \"%w\".profsum_breakdown "
               "WHERE trace_id=?1", p->id, &q, pzErr);
  if( rc ) return rc;
  while( (rc = sqlite3_step(q))==SQLITE_ROW ){
    const char *zM = (const char*)sqlite3_column_text(q, 0);
    const char *zC = (const char*)sqlite3_column_text(q, 1);
    int m = zM && strcmp(zM, "exclusive_per_track")==0 ? 0 : zM && strcmp(zM, "exclusive_global")==0 ? 1 : -1;
    if( m<0 ) continue;
    p->hasMode[m] = 1;
    for(k=0; zC && k<5; k++) if( strcmp(zC, azCmdCat[k])==0 ) p->aShare[m][k] = sqlite3_column_double(q, 2);
  }
  if( (rc = cmdDone(db, q, rc, pzErr))!=SQLITE_OK ) return rc;
  /* (less what overlapping steps count twice: each instant of a device
  ** once, as the KPIs and the advice count) */
  rc = cmdPrep(db, zSchema, "WITH w AS (SELECT * FROM \"%w\".profsum_step_wall WHERE trace_id=?1), "
               "k AS (SELECT min(is_warmup) AS only FROM w), "
               "x AS (SELECT coalesce(sum(CASE name WHEN 'step_overlap_wall' THEN value END), 0) AS wall, "
               "coalesce(sum(CASE name WHEN 'step_overlap_compute' THEN value END), 0) AS comp, "
               "coalesce(sum(CASE name WHEN 'step_overlap_collective' THEN value END), 0) AS coll, "
               "coalesce(sum(CASE name WHEN 'step_overlap_transfer' THEN value END), 0) AS xfer, "
               "coalesce(sum(CASE name WHEN 'step_overlap_idle' THEN value END), 0) AS idle "
               "FROM \"%w\".profsum_agg_fact WHERE trace_id=?1 AND name IN ('step_overlap_wall', "
               "'step_overlap_compute', 'step_overlap_collective', 'step_overlap_transfer', "
               "'step_overlap_idle')) "
               "SELECT sum(wall_us) - max(x.wall), sum(compute_us) - max(x.comp), "
               "sum(collective_us) - max(x.coll), sum(transfer_us) - max(x.xfer), "
               "sum(idle_us) - max(x.idle), max(k.only) "
               "FROM w, k, x WHERE w.is_warmup = k.only", p->id, &q, pzErr);
  if( rc==SQLITE_ERROR && *pzErr && strncmp(*pzErr, "no such table", 13)==0 ){
    sqlite3_free(*pzErr);        /* a database of an older profsum: no split */
    *pzErr = 0;
    rc = SQLITE_OK;
  }else if( rc ) return rc;
  if( q ){
    if( (rc = sqlite3_step(q))==SQLITE_ROW && sqlite3_column_double(q, 0)>0 ){
      double w = sqlite3_column_double(q, 0);
      p->hasWall = 1;
      p->wallWarmup = sqlite3_column_int(q, 5)!=0;
      for(k=0; k<4; k++) p->aWall[k] = sqlite3_column_double(q, 1+k)/w;
    }
    if( (rc = cmdDone(db, q, rc, pzErr))!=SQLITE_OK ) return rc;
  }
  rc = cmdPrep(db, zSchema, "SELECT name, canonical_name, exclusive_duration FROM \"%w\".profsum_hot_ops "
               "WHERE trace_id=?1 ORDER BY rank", p->id, &q, pzErr);
  if( rc ) return rc;
  while( (rc = sqlite3_step(q))==SQLITE_ROW ){
    CmdOp *o;
    const char *zN = (const char*)sqlite3_column_text(q, 0);
    const char *zC = (const char*)sqlite3_column_text(q, 1);
    if( (p->nOp & (p->nOp-1))==0 ){
      CmdOp *aNew = sqlite3_realloc64(p->aOp, sizeof(CmdOp)*(sqlite3_uint64)(p->nOp ? 2*p->nOp : 16));
      if( aNew==0 ){ sqlite3_finalize(q); return SQLITE_NOMEM; }
      p->aOp = aNew;
    }
    o = &p->aOp[p->nOp];
    o->zName = sqlite3_mprintf("%s", zN ? zN : "");
    o->zCanon = sqlite3_mprintf("%s", zC ? zC : (zN ? zN : ""));
    o->excl = sqlite3_column_double(q, 2);
    o->iMatch = -1;
    o->kind = 0;
    o->hasOut = 0;
    o->outExcl = 0.0;
    p->nOp++;
    if( o->zName==0 || o->zCanon==0 ){ sqlite3_finalize(q); return SQLITE_NOMEM; }
  }
  return cmdDone(db, q, rc, pzErr);
}

/* Match the ops of b and a: exact names first, then the same canonical
** name, the unmatched of each canonical name paired in order of rank. */
static void cmdMatch(CmdSide *b, CmdSide *a){
  int i, j, pass;
  for(pass=0; pass<2; pass++){
    for(i=0; i<b->nOp; i++){
      if( b->aOp[i].iMatch>=0 ) continue;
      for(j=0; j<a->nOp; j++){
        if( a->aOp[j].iMatch>=0 ) continue;
        if( strcmp(pass ? b->aOp[i].zCanon : b->aOp[i].zName, pass ? a->aOp[j].zCanon : a->aOp[j].zName)==0 ){
          b->aOp[i].iMatch = j; b->aOp[i].kind = pass;
          a->aOp[j].iMatch = i; a->aOp[j].kind = pass;
          break;
        }
      }
    }
  }
}

/* For each op of p that found no match among o's hot ops: o's op of that
** exact name among all its ops (profsum_agg_op, the value hot ops show:
** the reference's sum where kept), if o has one. */
static int cmdFindOutside(sqlite3 *db, const char *zSchema, CmdSide *p, const CmdSide *o,
                          char **pzErr){
  sqlite3_stmt *q = 0;
  int rc = SQLITE_OK, i;
  for(i=0; i<p->nOp; i++){
    CmdOp *op = &p->aOp[i];
    if( op->iMatch>=0 ) continue;
    if( q==0 ){
      rc = cmdPrep(db, zSchema, "SELECT coalesce(exclusive_ref, exclusive_duration) FROM \"%w\".profsum_agg_op "
                   "WHERE trace_id=?1 AND name=?2", o->id, &q, pzErr);
      if( rc ) return rc;
    }
    sqlite3_bind_text(q, 2, op->zName, -1, SQLITE_STATIC);
    if( (rc = sqlite3_step(q))==SQLITE_ROW ){
      op->hasOut = 1;
      op->outExcl = sqlite3_column_double(q, 0);
    }
    if( rc!=SQLITE_ROW && rc!=SQLITE_DONE ) break;
    rc = SQLITE_OK;
    sqlite3_reset(q);
  }
  return cmdDone(db, q, rc, pzErr);
}

/* Append op name z, cut to CMD_NAME_MAX characters (UTF-8 aware) with an
** ellipsis, as a code span ('`' and '|' escaped). */
static void cmdName(sqlite3_str *s, const char *z){
  int n = 0, i = 0;
  sqlite3_str_appendchar(s, 1, '`');
  while( z[i] && n<CMD_NAME_MAX ){
    int l = 1;
    unsigned char c = (unsigned char)z[i];
    if( c>=0xf0 ) l = 4; else if( c>=0xe0 ) l = 3; else if( c>=0xc0 ) l = 2;
    if( c=='`' || c=='|' ) sqlite3_str_appendchar(s, 1, '\\');
    if( c=='\n' || c=='\r' ) sqlite3_str_appendchar(s, 1, ' ');
    else{
      int k;
      for(k=0; k<l && z[i+k]; k++) sqlite3_str_appendchar(s, 1, z[i+k]);
      l = k;
    }
    i += l;
    n++;
  }
  if( z[i] ) sqlite3_str_appendall(s, "…");
  sqlite3_str_appendchar(s, 1, '`');
}

/* A moved op: index in b (or -1) and in a (or -1), |delta|. */
typedef struct CmdMove { int ib, ia; double d; } CmdMove;
static int cmdMoveCmp(const void *x, const void *y){
  const CmdMove *p = x, *q = y;
  return p->d<q->d ? 1 : p->d>q->d ? -1 : 0;
}

/* The "## Ops that moved most" section: the ops by size of their move,
** cut as Python's list[:topK] (a negative topK drops the last -topK). */
static int cmdOps(sqlite3_str *s, CmdSide *b, CmdSide *a, int topK){
  static const char *const azKind[2] = {"exact", "canonical"};
  CmdMove *aM = sqlite3_malloc64(sizeof(CmdMove)*(sqlite3_uint64)(b->nOp + a->nOp + 1));
  int n = 0, i;
  if( aM==0 ) return SQLITE_NOMEM;
  for(i=0; i<b->nOp; i++){
    int j = b->aOp[i].iMatch;
    double d = (j>=0 ? a->aOp[j].excl : b->aOp[i].hasOut ? b->aOp[i].outExcl : 0.0) - b->aOp[i].excl;
    aM[n].ib = i; aM[n].ia = j; aM[n].d = d<0 ? -d : d; n++;
  }
  for(i=0; i<a->nOp; i++){
    double d;
    if( a->aOp[i].iMatch>=0 ) continue;
    d = a->aOp[i].excl - (a->aOp[i].hasOut ? a->aOp[i].outExcl : 0.0);
    aM[n].ib = -1; aM[n].ia = i; aM[n].d = d<0 ? -d : d; n++;
  }
  qsort(aM, (size_t)n, sizeof(CmdMove), cmdMoveCmp);
  sqlite3_str_appendall(s, "\n## Ops that moved most\n"
      "| Op (before) | Op (after) | Match | Before (us) | After (us) | Delta (us) |\n"
      "|---|---|---|---:|---:|---:|\n");
  n = profsumTopKLen(n, topK);        /* aM[:topK], as the JSON's lists */
  for(i=0; i<n; i++){
    const CmdOp *ob = aM[i].ib>=0 ? &b->aOp[aM[i].ib] : 0;
    const CmdOp *oa = aM[i].ia>=0 ? &a->aOp[aM[i].ia] : 0;
    /* an op the other side has beyond its hot ops (hasOut) */
    const CmdOp *pOut = ob && !oa && ob->hasOut ? ob : oa && !ob && oa->hasOut ? oa : 0;
    double eb = ob ? ob->excl : pOut ? pOut->outExcl : 0.0;
    double ea = oa ? oa->excl : pOut ? pOut->outExcl : 0.0;
    sqlite3_str_appendall(s, "| ");
    if( ob || pOut ) cmdName(s, ob ? ob->zName : pOut->zName); else sqlite3_str_appendall(s, "—");
    sqlite3_str_appendall(s, " | ");
    if( oa || pOut ) cmdName(s, oa ? oa->zName : pOut->zName); else sqlite3_str_appendall(s, "—");
    sqlite3_str_appendf(s, " | %s | ", ob && oa ? azKind[ob->kind] : pOut ? "exact" : ob ? "before only" : "after only");
    profsumStrAppendPy(s, "%.3f | %.3f | %+.3f |\n", eb, ea, ea - eb);
  }
  if( n==0 ) sqlite3_str_appendall(s, "| — | — | — | | | |\n");
  sqlite3_str_appendall(s, "\nThe hot ops of each side; one that the other side's hot ops lack is "
                           "looked up among all of that side's ops by its exact name.\n");
  sqlite3_free(aM);
  return SQLITE_OK;
}

/* The step time lines: the delta, its noise, "within noise". */
static void cmdStep(sqlite3_str *s, const CmdSide *b, const CmdSide *a){
  sqlite3_str_appendall(s, "\n## Step time (steady state)\n");
  if( !b->hasSteady || !a->hasSteady ){
    sqlite3_str_appendf(s, "- No steady-state steps on %s: the step time is not compared.\n",
                        !b->hasSteady && !a->hasSteady ? "either side" : !b->hasSteady ? "before" : "after");
    return;
  }
  {
    double d = a->median - b->median;
    double nb = b->p90 - b->median, na = a->p90 - a->median;
    double noise = nb>na ? nb : na;
    if( noise<0 ) noise = 0;
    profsumStrAppendPy(s, "- Median: before `%.3f` us, after `%.3f` us: ", b->median, a->median);
    profsumStrAppendPy(s, "%+.3f us", d);
    if( b->median>0 ) profsumStrAppendPy(s, " (%+.2f%%)", 100.0*d/b->median);
    sqlite3_str_appendall(s, "\n");
    profsumStrAppendPy(s, "- P90: before `%.3f` us, after `%.3f` us\n", b->p90, a->p90);
    profsumStrAppendPy(s, "- Noise (the larger p90 − median of the two sides): `%.3f` us: ", noise);
    sqlite3_str_appendall(s, (d<0 ? -d : d)<=noise ? "the delta is **within noise**\n"
                             : d<0 ? "the step got faster beyond the noise\n"
                             : "the step got slower beyond the noise\n");
  }
}

/* The breakdown and wall-clock shift tables. */
static void cmdShifts(sqlite3_str *s, const CmdSide *b, const CmdSide *a){
  static const char *const azWall[4] = {"compute", "collective", "transfer", "idle"};
  int k;
  /* one mode on both sides: per-track when both have it (a trace read
  ** from a v1 file has its document's mode only) */
  int m = b->hasMode[0] && a->hasMode[0] ? 0 : b->hasMode[1] && a->hasMode[1] ? 1 : -1;
  if( m<0 ){
    sqlite3_str_appendall(s, "\n## Breakdown shift\n"
        "- Not available: the two sides have no breakdown mode in common (profsum_breakdown).\n");
  }else{
    sqlite3_str_appendf(s, "\n## Breakdown shift (%s, shares)\n"
                           "| Category | Before | After | Delta |\n|---|---:|---:|---:|\n",
                        m==0 ? "per-track exclusive time" : "global device timeline");
    for(k=0; k<5; k++){
      profsumStrAppendPy(s, "| %s | %.2f%% | %.2f%% | ", azCmdCat[k], 100.0*b->aShare[m][k], 100.0*a->aShare[m][k]);
      profsumStrAppendPy(s, "%+.2f pp |\n", 100.0*(a->aShare[m][k] - b->aShare[m][k]));
    }
  }
  sqlite3_str_appendall(s, "\n## Wall-clock shift (steady steps, shares of step wall time)\n");
  if( !b->hasWall || !a->hasWall ){
    sqlite3_str_appendall(s, "- Not available: a side has no steps measured on a device (profsum_step_wall).\n");
    return;
  }
  if( b->wallWarmup || a->wallWarmup ){
    sqlite3_str_appendf(s, "- %s steady steps: the split of %s warmup steps is shown instead.\n",
                        b->wallWarmup && a->wallWarmup ? "Neither side has" : b->wallWarmup ? "Before has no" : "After has no",
                        b->wallWarmup && a->wallWarmup ? "their" : "its");
  }
  sqlite3_str_appendall(s, "| Part | Before | After | Delta |\n|---|---:|---:|---:|\n");
  for(k=0; k<4; k++){
    profsumStrAppendPy(s, "| %s | %.2f%% | %.2f%% | ", azWall[k], 100.0*b->aWall[k], 100.0*a->aWall[k]);
    profsumStrAppendPy(s, "%+.2f pp |\n", 100.0*(a->aWall[k] - b->aWall[k]));
  }
}

/* The names of CmdSide.azEnv, as profsum_environment's columns. */
static const char *const azCmdEnv[3] = {"jax_version", "jaxlib_version", "device_model"};

/* Append z as the inside of a code span, as cmdName writes a name ('`'
** and '|' escaped, line breaks as spaces, cut to CMD_NAME_MAX characters
** with an ellipsis). */
static void cmdCodeText(sqlite3_str *s, const char *z){
  int n = 0;
  for(; *z && n<CMD_NAME_MAX; z++){
    if( (*z & 0xC0)!=0x80 ) n++;
    if( *z=='`' || *z=='|' ) sqlite3_str_appendchar(s, 1, '\\');
    sqlite3_str_appendchar(s, 1, (*z=='\n' || *z=='\r') ? ' ' : *z);
  }
  while( *z && (*z & 0xC0)==0x80 ){ sqlite3_str_appendchar(s, 1, *z); z++; }   /* the last character's tail */
  if( *z ) sqlite3_str_appendall(s, "…");
}

/* Side p's environment in words ("jax 0.4.30, jaxlib 0.4.30, 4 × TPU v6
** Lite"; "unknown" when it states none), as a code span. */
static void cmdEnvText(sqlite3_str *s, const CmdSide *p){
  int n = 0;
  sqlite3_str_appendchar(s, 1, '`');
  if( p->azEnv[0] ){ sqlite3_str_appendall(s, "jax "); cmdCodeText(s, p->azEnv[0]); n++; }
  if( p->azEnv[1] ){
    sqlite3_str_appendall(s, n++ ? ", jaxlib " : "jaxlib ");
    cmdCodeText(s, p->azEnv[1]);
  }
  if( p->nDev>0 ){
    sqlite3_str_appendf(s, "%s%lld × ", n++ ? ", " : "", (long long)p->nDev);
    cmdCodeText(s, p->azEnv[2] ? p->azEnv[2] : "device");
  }
  if( n==0 ) sqlite3_str_appendall(s, "unknown");
  sqlite3_str_appendchar(s, 1, '`');
}

/* The environment lines: each side's, then a note naming what both state
** and differ in (versions, device model, device count).  Nothing when
** neither side states a version or a device model. */
static void cmdEnv(sqlite3_str *s, const CmdSide *b, const CmdSide *a){
  int k, nDiff = 0;
  if( !b->azEnv[0] && !b->azEnv[1] && !b->azEnv[2] && !a->azEnv[0] && !a->azEnv[1] && !a->azEnv[2] ) return;
  sqlite3_str_appendall(s, "- Environment: before ");
  cmdEnvText(s, b);
  sqlite3_str_appendall(s, ", after ");
  cmdEnvText(s, a);
  sqlite3_str_appendall(s, "\n");
  for(k=0; k<4; k++){
    char zB[32], zA[32];
    const char *pB, *pA;
    if( k<3 ){
      pB = b->azEnv[k]; pA = a->azEnv[k];
    }else{
      if( b->nDev<=0 || a->nDev<=0 ) continue;
      sqlite3_snprintf(sizeof(zB), zB, "%lld", (long long)b->nDev); pB = zB;
      sqlite3_snprintf(sizeof(zA), zA, "%lld", (long long)a->nDev); pA = zA;
    }
    if( pB==0 || pA==0 || strcmp(pB, pA)==0 ) continue;
    sqlite3_str_appendall(s, nDiff++ ? "; " : "- **Note:** the software or hardware changed between the runs (");
    sqlite3_str_appendf(s, "%s ", k<3 ? azCmdEnv[k] : "n_devices");
    cmdName(s, pB);
    sqlite3_str_appendall(s, " → ");
    cmdName(s, pA);
  }
  if( nDiff ){
    sqlite3_str_appendall(s, "): the numbers can move for that reason alone, not because of the change "
                             "compared.\n");
  }
}

/* The markdown of the comparison of b and a. */
static char *cmdMarkdown(CmdSide *b, CmdSide *a, int topK){
  sqlite3_str *s = sqlite3_str_new(0);
  int rc;
  sqlite3_str_appendall(s, "# profsum comparison: ");
  cmdName(s, b->zLabel);
  sqlite3_str_appendall(s, " → ");
  cmdName(s, a->zLabel);
  sqlite3_str_appendf(s, "\n\n- Source formats: before `%s`, after `%s`\n", b->zFormat, a->zFormat);
  if( strcmp(b->zFormat, a->zFormat)!=0 ){
    sqlite3_str_appendall(s, "- **Note:** before and after were read from different sources: event counts, "
        "op paths, regions and float rounding can differ for that reason alone, not because of the change.\n");
  }
  cmdEnv(s, b, a);
  cmdStep(s, b, a);
  cmdShifts(s, b, a);
  rc = cmdOps(s, b, a, topK);
  if( rc || sqlite3_str_errcode(s) ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  return sqlite3_str_finish(s);
}

/* Append z[0..n) HTML-escaped. */
static void cmdEsc(sqlite3_str *s, const char *z, int n){
  int i;
  for(i=0; i<n; i++){
    switch( z[i] ){
      case '<': sqlite3_str_appendall(s, "&lt;"); break;
      case '>': sqlite3_str_appendall(s, "&gt;"); break;
      case '&': sqlite3_str_appendall(s, "&amp;"); break;
      case '"': sqlite3_str_appendall(s, "&quot;"); break;
      default: sqlite3_str_appendchar(s, 1, z[i]);
    }
  }
}

/* Append the inline text z[0..n): `code` spans and **bold**, escaped. */
static void cmdInline(sqlite3_str *s, const char *z, int n){
  int i = 0;
  while( i<n ){
    if( z[i]=='`' ){
      int j = i+1;
      while( j<n && !(z[j]=='`' && z[j-1]!='\\') ) j++;
      sqlite3_str_appendall(s, "<code>");
      {
        int k;
        for(k=i+1; k<j; k++){
          if( z[k]=='\\' && k+1<j && (z[k+1]=='`' || z[k+1]=='|') ) continue;
          cmdEsc(s, z+k, 1);
        }
      }
      sqlite3_str_appendall(s, "</code>");
      i = j<n ? j+1 : j;
    }else if( z[i]=='*' && i+1<n && z[i+1]=='*' ){
      const char *e = 0;
      int j;
      for(j=i+2; j+1<n; j++) if( z[j]=='*' && z[j+1]=='*' ){ e = z+j; break; }
      if( e==0 ){ cmdEsc(s, z+i, n-i); return; }
      sqlite3_str_appendall(s, "<strong>");
      cmdEsc(s, z+i+2, (int)(e - (z+i+2)));
      sqlite3_str_appendall(s, "</strong>");
      i = (int)(e - z) + 2;
    }else{
      cmdEsc(s, z+i, 1);
      i++;
    }
  }
}

/* One table row "| a | b |" as <tr> of <th> (bHead) or <td> cells. */
static void cmdRow(sqlite3_str *s, const char *z, int n, int bHead){
  int i = 1, start = 1;
  sqlite3_str_appendall(s, "<tr>");
  for(; i<n; i++){
    if( z[i]=='|' && z[i-1]!='\\' ){
      int a = start, b = i;
      while( a<b && z[a]==' ' ) a++;
      while( b>a && z[b-1]==' ' ) b--;
      sqlite3_str_appendall(s, bHead ? "<th>" : "<td>");
      cmdInline(s, z+a, b-a);
      sqlite3_str_appendall(s, bHead ? "</th>" : "</td>");
      start = i+1;
    }
  }
  sqlite3_str_appendall(s, "</tr>\n");
}

/* The markdown zMd (the subset cmdMarkdown writes: headings, bullets,
** tables) as one self-contained HTML page. */
static char *cmdHtml(const char *zMd){
  sqlite3_str *s = sqlite3_str_new(0);
  const char *z = zMd;
  int inList = 0, inTable = 0, row = 0;
  sqlite3_str_appendall(s, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>profsum comparison</title><style>"
      "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;"
      "text-align:right}td:first-child,th:first-child,td:nth-child(2){text-align:left}"
      "th{background:#f3f3f3}code{font-size:90%}@media print{body{max-width:none}}"
      "</style></head><body>\n");
  while( *z ){
    const char *e = strchr(z, '\n');
    int n = e ? (int)(e - z) : (int)strlen(z);
    int isRow = n>0 && z[0]=='|', isItem = n>1 && z[0]=='-' && z[1]==' ';
    if( inList && !isItem ){ sqlite3_str_appendall(s, "</ul>\n"); inList = 0; }
    if( inTable && !isRow ){ sqlite3_str_appendall(s, "</table>\n"); inTable = 0; }
    if( n>2 && z[0]=='#' && z[1]==' ' ){
      sqlite3_str_appendall(s, "<h1>"); cmdInline(s, z+2, n-2); sqlite3_str_appendall(s, "</h1>\n");
    }else if( n>3 && z[0]=='#' && z[1]=='#' && z[2]==' ' ){
      sqlite3_str_appendall(s, "<h2>"); cmdInline(s, z+3, n-3); sqlite3_str_appendall(s, "</h2>\n");
    }else if( isItem ){
      if( !inList ){ sqlite3_str_appendall(s, "<ul>\n"); inList = 1; }
      sqlite3_str_appendall(s, "<li>"); cmdInline(s, z+2, n-2); sqlite3_str_appendall(s, "</li>\n");
    }else if( isRow ){
      if( !inTable ){ sqlite3_str_appendall(s, "<table>\n"); inTable = 1; row = 0; }
      if( !(n>2 && z[1]=='-') && !(n>3 && z[2]=='-') ) cmdRow(s, z, n, row++==0);
    }else if( n>0 ){
      sqlite3_str_appendall(s, "<p>"); cmdInline(s, z, n); sqlite3_str_appendall(s, "</p>\n");
    }
    z += n + (e ? 1 : 0);
  }
  if( inList ) sqlite3_str_appendall(s, "</ul>\n");
  if( inTable ) sqlite3_str_appendall(s, "</table>\n");
  sqlite3_str_appendall(s, "</body></html>\n");
  if( sqlite3_str_errcode(s) ){ sqlite3_free(sqlite3_str_finish(s)); return 0; }
  return sqlite3_str_finish(s);
}

/* Set by the command line, which says it in its own words. */
static int g_bQuietSources = 0;

/* See compare.h. */
void profsumHistQuietSources(int bQuiet){ g_bQuietSources = bQuiet; }

/* See history_int.h. */
void profsumHistWarnSources(sqlite3 *db, const char *zSchema, sqlite3_int64 idB, sqlite3_int64 idA,
                            const char *zFunc){
  sqlite3_stmt *p = 0;
  char *z;
  if( g_bQuietSources ) return;
  z = sqlite3_mprintf("SELECT b.source_format, a.source_format FROM \"%w\".profsum_trace AS b, "
                            "\"%w\".profsum_trace AS a WHERE b.trace_id=?1 AND a.trace_id=?2 "
                            "AND b.source_format IS NOT a.source_format", zSchema, zSchema);
  if( z==0 ) return;
  if( sqlite3_prepare_v2(db, z, -1, &p, 0)==SQLITE_OK ){
    sqlite3_bind_int64(p, 1, idB);
    sqlite3_bind_int64(p, 2, idA);
    if( sqlite3_step(p)==SQLITE_ROW ){
      const char *zB = (const char*)sqlite3_column_text(p, 0), *zA = (const char*)sqlite3_column_text(p, 1);
      fprintf(stderr, "%s: warning: before and after come from different sources (source_format %s "
              "and %s): counts, tf_op paths, regions and float rounding can differ for that reason alone\n",
              zFunc, zB ? zB : "NULL", zA ? zA : "NULL");
      fflush(stderr);
    }
  }
  sqlite3_finalize(p);
  sqlite3_free(z);
}

/* profsum_compare_md(before, after [, top_k [, options_json]]): the
** comparison for people; options_json may name the "schema" and ask for
** "html": true (a self-contained page instead of markdown). */
static void compareMdFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char *FN = "profsum_compare_md";
  static const char *const azBool[] = {"html", 0};
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  CmdSide b, a;
  char *zErr = 0, *zSchema = 0, *z = 0;
  const char *zSch;
  int rc = SQLITE_OK, bHtml = 0;
  sqlite3_int64 topK = PROFSUM_COMPARE_TOP_K;
  memset(&b, 0, sizeof(b));
  memset(&a, 0, sizeof(a));
  if( argc>2 && profsumTopKArg(ctx, FN, argv[2], &topK) ) return;
  if( argc>3 && sqlite3_value_type(argv[3])!=SQLITE_NULL ){
    rc = profsumSchemaOption(db, (const char*)sqlite3_value_text(argv[3]), azBool, &bHtml, &zSchema, &zErr);
  }
  zSch = zSchema ? zSchema : HIST_SCHEMA;
  if( rc==SQLITE_OK ) rc = profsumHistResolvePair(db, zSch, argv[0], argv[1], &b.id, &a.id, &zErr);
  if( rc==SQLITE_OK ) rc = cmdSideRead(db, zSch, &b, &zErr);
  if( rc==SQLITE_OK ) rc = cmdSideRead(db, zSch, &a, &zErr);
  if( rc==SQLITE_OK ){
    cmdMatch(&b, &a);
    rc = cmdFindOutside(db, zSch, &b, &a, &zErr);
  }
  if( rc==SQLITE_OK ) rc = cmdFindOutside(db, zSch, &a, &b, &zErr);
  if( rc==SQLITE_OK ){
    z = cmdMarkdown(&b, &a, (int)topK);
    if( z && bHtml ){
      char *zH = cmdHtml(z);
      sqlite3_free(z);
      z = zH;
    }
    if( z==0 ) rc = SQLITE_NOMEM;
  }
  sqlite3_free(zSchema);
  cmdSideFree(&b);
  cmdSideFree(&a);
  if( rc ){ profsumHistReportErr(ctx, FN, rc, zErr); sqlite3_free(zErr); return; }
  sqlite3_result_text(ctx, z, -1, sqlite3_free);
}

/* See history_int.h. */
int profsumRegisterCompareMd(sqlite3 *db, char **pzErr){
  static const ProfsumHistFunc aFunc[] = {
    {"profsum_compare_md", 2, SQLITE_UTF8|PROFSUM_FN_READS, compareMdFunc},
    {"profsum_compare_md", 3, SQLITE_UTF8|PROFSUM_FN_READS, compareMdFunc},
    {"profsum_compare_md", 4, SQLITE_UTF8|PROFSUM_FN_READS, compareMdFunc},
  };
  return profsumHistRegister(db, aFunc, (int)(sizeof(aFunc)/sizeof(aFunc[0])), pzErr);
}
