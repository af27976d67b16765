/*
** summary_engine.c — stage A of the summary (see summary_engine.h).
**
** One streaming pass collects the complete events the reference accepts
** (summary-v1-spec.md §1.3: ph X, integer pid/tid >= 0, non-empty string
** name, numeric ts and dur, dur > 0) as 56-byte records with interned
** strings, and the M-event names.  Then, in the reference's processing
** order (tracks in order of first appearance, each track in (ts asc, end
** desc) order), it computes with exact integer picoseconds:
**   exclusive time (§2) · breakdown per track and global (§4.4) · steps
**   (§4.3) · per-op aggregates (§4.5) · collectives (§4.7) · gaps with
**   marker/payload resolution (§4.8) · regions with pruning (§4.9) ·
**   gap contexts (§4.10) · run_id / source counters (§4.2).
** Results are written to the profsum_agg_* tables; stage B
** (summary_doc.c) turns them into the document for given knobs.
**
** Memory: 56 bytes per accepted event plus the distinct strings (names,
** tf_op paths, shape signatures; long_name texts are hashed, not kept).
**
** This file holds the entry points (profsumEngineParse, profsumEngineWrite,
** profsumEngineFree) and the output helpers of the writes.  The work is in
** engine_store.c (hash map, string pool), engine_read.c (the read pass and
** the intake of other readers), engine_order.c (order, exclusive time),
** engine_gaps.c (gaps, regions, gap contexts) and engine_aggregate.c (the
** other aggregates); engine_int.h is what they share.
*/
#include "profsum_int.h"
#include "profsum_reader.h"
#include "summary_engine.h"
#include "engine_intake.h"
#include "engine_int.h"
#include "rowbuf.h"
#include "funcs.h"
#include "jsontree.h"
#include "insights.h"
#include "summary_doc.h"
#include "filestamp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Output helpers                                                      */
/* ------------------------------------------------------------------ */

/* See summary_engine.h. */
double profsumPsToMicros(profsum_ps v){
  char z[64];
  int neg = v<0, i = 0, k;
  unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
  char digits[48];
  int nd = 0;
  do{ digits[nd++] = (char)('0' + (int)(u % 10)); u /= 10; }while( u );
  while( nd<7 ) digits[nd++] = '0';
  if( neg ) z[i++] = '-';
  for(k=nd-1; k>=6; k--) z[i++] = digits[k];
  z[i++] = '.';
  for(k=5; k>=0; k--) z[i++] = digits[k];
  z[i] = 0;
  return strtod(z, 0);
}

/* Prepare "INSERT INTO <schema>.<zTable> VALUES(...)". */
int profsumEngPrepare(Engine *e, sqlite3_stmt **pp, const char *zSql){
  char *z = sqlite3_mprintf(zSql, e->zSchema);
  int rc;
  if( z==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(e->db, z, -1, pp, 0);
  sqlite3_free(z);
  if( rc ) return profsumEngErr(e, rc, "%s", sqlite3_errmsg(e->db));
  return SQLITE_OK;
}

/* Step and reset an insert. */
int profsumEngStep(Engine *e, sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  if( rc!=SQLITE_DONE ){
    rc = sqlite3_reset(p);
    return profsumEngErr(e, rc ? rc : SQLITE_ERROR, "%s", sqlite3_errmsg(e->db));
  }
  return sqlite3_reset(p);
}


void profsumEngBindStrId(Engine *e, sqlite3_stmt *p, int i, int32_t id){
  if( id<0 ) sqlite3_bind_null(p, i);
  else sqlite3_bind_text(p, i, SP_STR(&e->pool, id), SP_LEN(&e->pool, id), SQLITE_STATIC);
}

void profsumEngRowStrId(Engine *e, ProfsumRowBuf *b, int32_t id){
  if( id<0 ) profsumRowBufNull(b);
  else profsumRowBufTextStatic(b, SP_STR(&e->pool, id), SP_LEN(&e->pool, id));
}

/* See engine_int.h. */
int profsumEngRowsErr(Engine *e, int rc){
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ) return profsumEngErr(e, rc, "%s", sqlite3_errmsg(e->db));
  return rc;
}

/* A row's key strings (z 0: NULL) and its index, for profsumEngStrOrder. */
typedef struct EngStrKey {
  const char *z1, *z2;
  int64_t n1, n2;
  int64_t i;
} EngStrKey;

/* SQLite's BINARY order of two texts (z 0: NULL, first). */
static int engStrCmp(const char *x, int64_t nx, const char *y, int64_t ny){
  int c;
  if( x==0 || y==0 ) return (x!=0) - (y!=0);
  c = memcmp(x, y, (size_t)(nx<ny ? nx : ny));
  if( c ) return c;
  return nx<ny ? -1 : nx>ny;
}

/* qsort order of EngStrKey: the first string, then the second. */
static int engStrKeyCmp(const void *pa, const void *pb){
  const EngStrKey *a = pa, *b = pb;
  int c = engStrCmp(a->z1, a->n1, b->z1, b->n1);
  return c ? c : engStrCmp(a->z2, a->n2, b->z2, b->n2);
}

/* See engine_int.h. */
int profsumEngStrOrder(Engine *e, int64_t n, const int32_t *aId1, const int32_t *aId2,
                       int64_t **paOrd){
  EngStrKey *aK;
  int64_t i, *aOrd;
  *paOrd = 0;
  aOrd = sqlite3_malloc64(sizeof(int64_t)*(sqlite3_uint64)(n+1));
  aK = sqlite3_malloc64(sizeof(EngStrKey)*(sqlite3_uint64)(n+1));
  if( aOrd==0 || aK==0 ){ sqlite3_free(aOrd); sqlite3_free(aK); return SQLITE_NOMEM; }
  for(i=0; i<n; i++){
    int32_t a = aId1[i], b = aId2 ? aId2[i] : -1;
    aK[i].z1 = a<0 ? 0 : SP_STR(&e->pool, a);
    aK[i].n1 = a<0 ? 0 : SP_LEN(&e->pool, a);
    aK[i].z2 = b<0 ? 0 : SP_STR(&e->pool, b);
    aK[i].n2 = b<0 ? 0 : SP_LEN(&e->pool, b);
    aK[i].i = i;
  }
  qsort(aK, (size_t)n, sizeof(EngStrKey), engStrKeyCmp);
  for(i=0; i<n; i++) aOrd[i] = aK[i].i;
  sqlite3_free(aK);
  *paOrd = aOrd;
  return SQLITE_OK;
}

/* Append z[0..n) as a JSON string literal (UTF-8 kept, controls escaped). */
void profsumEngJsonAppendStr(sqlite3_str *p, const char *z, int64_t n){
  int64_t i;
  sqlite3_str_appendchar(p, 1, '"');
  for(i=0; i<n; i++){
    unsigned char c = (unsigned char)z[i];
    if( c=='"' || c=='\\' ){ sqlite3_str_appendchar(p, 1, '\\'); sqlite3_str_appendchar(p, 1, (char)c); }
    else if( c<0x20 ) sqlite3_str_appendf(p, "\\u%04x", c);
    else sqlite3_str_appendchar(p, 1, (char)c);
  }
  sqlite3_str_appendchar(p, 1, '"');
}

/* See summary_engine.h. */
void profsumEngineSetWarmup(ProfsumEngine *e, int64_t nWarmup){
  e->warmupSteps = nWarmup;
}

/* Free an engine (0 is a no-op). */
void profsumEngineFree(ProfsumEngine *e){
  if( e==0 ) return;
  profsumEngRefFree(e);
  profsumEngSideStop(e);
  sqlite3_free(e->aKeyCat);
  sqlite3_free(e->aNameFlag);
  profsumDiagListFree(&e->diag);
  profsumEngSpFree(&e->pool);
  {
    int64_t b;
    for(b=0; b<e->nBlk; b++) sqlite3_free(e->apBlk[b]);
    for(b=0; b<e->nAllocBlk; b++){
      sqlite3_free(e->aRun[b].aDense);
      sqlite3_free(e->aRun[b].aOff);
      sqlite3_free(e->aRun[b].aId);
    }
    sqlite3_free(e->apBlk);
    sqlite3_free(e->aRun);
    sqlite3_free(e->aDurBig);
  }
  sqlite3_free(e->aTrk);
  sqlite3_free(e->aKey);
  sqlite3_free(e->aKeySlot);
  sqlite3_free(e->aOrd);
  sqlite3_free(e->zUnit);
  sqlite3_free(e->zPath);
  sqlite3_free(e->zXpWarn);
  profsumInsFree(e->pIns);
  profsumEngSigFree(e);
  profsumEngHmFree(&e->trkMap); profsumEngHmFree(&e->procMap); profsumEngHmFree(&e->threadMap);
  sqlite3_free(e->aStepEv); sqlite3_free(e->aStepNum);
  sqlite3_free(e->aXrPos); sqlite3_free(e->aXrVal);
  sqlite3_free(e->aRunPos); sqlite3_free(e->aRunId); sqlite3_free(e->aRunN);
  sqlite3_free(e->aParPos); sqlite3_free(e->aParEx); sqlite3_free(e->aXrEx);
  profsumEngHmFree(&e->exclBig);
  profsumEngEarlyFree(e);
  sqlite3_free(e->aFloatTs); sqlite3_free(e->aFloatDur);
  sqlite3_free(e->aFloatBit); sqlite3_free(e->aFloatRank);
  sqlite3_free(e->aSpan);
  sqlite3_free(e);
}

/* The number of diagnostics of kind zKind met while reading. */
static int64_t engKindCount(const Engine *e, const char *zKind){
  int k;
  for(k=0; k<e->nKind; k++) if( strcmp(e->aKind[k].zKind, zKind)==0 ) return e->aKind[k].n;
  return 0;
}

/* After reading a JSON file: SQLITE_OK when it is a trace, else SQLITE_ERROR
** with the message set.  Not a trace (a deliberate departure from the
** reference, which summarizes such a file as an empty trace): a top level
** without a "traceEvents" array ({"lr": 0.001}), or entries none of which
** is an object with a "ph" ([1,2,3]).  No entries at all ({"traceEvents":
** []}, []) is an empty trace. */
static int engNotATrace(Engine *e){
  int64_t nNoPh;
  if( e->noEvents ){
    return profsumEngErr(e, SQLITE_ERROR, "'%s': not a trace: its top level has no \"traceEvents\" "
        "array (give the profiler's *.trace.json.gz, perfetto_trace.json.gz, an .xplane.pb or "
        "the profile folder)", e->zPath);
  }
  nNoPh = engKindCount(e, "not_an_object") + engKindCount(e, "no_ph") + engKindCount(e, "ph_not_string");
  if( e->nEntries>0 && nNoPh>=e->nEntries ){
    return profsumEngErr(e, SQLITE_ERROR, "'%s': not a trace: none of its %lld traceEvents entries "
        "is an object with a \"ph\" (see profsum_diagnostics('%s'))", e->zPath,
        (long long)e->nEntries, e->zPath);
  }
  return SQLITE_OK;
}

/* A capped export (the profiler's converter keeps the earliest events up
** to a cap, so later steps vanish from every track): the exact cap counts,
** or at least 100,000 events whose latest start lies more than 10 % of the
** profile's span before its latest end.  Noted as diagnostic
** capped_export, not as a quality warning of the v1 document. */
static void engCappedExport(Engine *e){
  char z[300];
  if( !e->hasRange || e->nEv==0 ) return;
  {
    double span = US(e->endMax - e->tsMin), tail = US(e->endMax - e->tsMax);
    int atCap = e->nEv==1000000 || e->nEv==5000000;
    if( !atCap && !(e->nEv>=100000 && tail>0.10*span) ) return;
    sqlite3_snprintf(sizeof(z), z, "%lld complete events%s; the latest starts %.3f us (%.1f%% of "
        "the %.3f us profile) before the latest end: the export looks capped (its later events "
        "dropped); summaries cover only the start of the profile", (long long)e->nEv,
        atCap ? ", exactly a converter's cap" : "", tail, span>0 ? 100.0*tail/span : 0.0, span);
    profsumEngDiag(e, -1, -1, "capped_export", z);
  }
}

/* A new engine for zPath (the arguments as profsumEngineParse's) read to
** its end, its origin the first event's start, or origin when bOrigin.
** SQLITE_OK or an error code; *pp is the engine either way (0 when it
** could not be made: SQLITE_NOMEM). */
static int engReadOnce(const char *zFunc, const char *zPath, unsigned flags, ProfsumStopFn xStop,
                       void *pStopArg, char **pzErr, int bOrigin, profsum_ps origin,
                       int nSkipArrays, Engine **pp){
  Engine *e;
  int rc, k;
  *pp = 0;
  e = sqlite3_malloc64(sizeof(Engine));
  if( e==0 ) return SQLITE_NOMEM;
  memset(e, 0, sizeof(*e));
  e->zFunc = zFunc;
  e->pzErr = pzErr;
  e->iFirstRejected = -1;
  e->iFirstLeftOut = -1;
  e->warmupSteps = PROFSUM_DEFAULT_WARMUP_STEPS;
  e->diagAll = (flags & PROFSUM_ENGINE_DIAG_ALL)!=0;
  e->xStop = xStop;
  e->pStopArg = pStopArg;
  if( bOrigin ){ e->origin = origin; e->hasOrigin = 1; }
  e->nSkipArrays = nSkipArrays;
  e->zPath = sqlite3_mprintf("%s", zPath);
  if( e->zPath==0 ){ sqlite3_free(e); return SQLITE_NOMEM; }
  if( profsumInsNew(&e->pIns) ){ sqlite3_free(e->zPath); sqlite3_free(e); return SQLITE_NOMEM; }
  if( e->diagAll ) profsumInsDiagAll(e->pIns);
  *pp = e;
  k = profsumSniffFormat(zPath);
  if( k==PROFSUM_FMT_NOMEM ){
    rc = SQLITE_NOMEM;
  }else if( k==PROFSUM_FMT_XPLANE ){
    e->isXPlane = 1;
    rc = profsumEngineReadXPlane(e, zPath);
    profsumEngSigFree(e);                       /* needed only while reading */
  }else{
    rc = profsumEngRead(e, zPath);
    if( rc==SQLITE_OK ) rc = engNotATrace(e);
  }
  return rc;
}

/* See summary_engine.h. */
int profsumEngineParse(const char *zFunc, const char *zPath, unsigned flags, ProfsumStopFn xStop,
                       void *pStopArg, ProfsumEngine **pp, ProfsumEngineInfo *pInfo,
                       char **pzErr){
  Engine *e;
  ProfsumFileStamp stamp;
  char *zWhy = 0;                          /* what changed in the file */
  int rc;
  *pp = 0;
  memset(pInfo, 0, sizeof(*pInfo));
  if( (rc = profsumRefuseUnsupported(zFunc, zPath, pzErr))!=SQLITE_OK ) return rc;
  profsumFileStampTake(zPath, &stamp);     /* before the first read */
  rc = engReadOnce(zFunc, zPath, flags, xStop, pStopArg, pzErr, 0, 0, 0, &e);
  if( e==0 ) return rc;
  if( rc==SQLITE_OK && e->nEventArrays>1 ){
    /* traceEvents given more than once: the reference's decoder keeps the
    ** last array, so the summary is made of it alone (read again, past
    ** the others; rare enough that reading twice costs nothing) */
    int nSkip = e->nEventArrays - 1;
    profsumEngineFree(e);
    sqlite3_free(*pzErr);
    *pzErr = 0;
    rc = engReadOnce(zFunc, zPath, flags, xStop, pStopArg, pzErr, 0, 0, nSkip, &e);
    if( e==0 ) return rc;
  }
  if( rc==SQLITE_OK && e->nFar>e->nEv ){
    /* Times are kept as 64-bit ps from the first event: an event more than
    ** 2^61 ps (26 days) from it is left out.  When those outnumber the
    ** events taken, the first event was the stray one (a ts of 0, or none,
    ** in a trace of epoch times): read again from the first far event, so
    ** that the few are left out, not the many. */
    profsum_ps o = e->farTs;
    int nSkip = e->nSkipArrays;
    profsumEngineFree(e);
    sqlite3_free(*pzErr);
    *pzErr = 0;
    rc = engReadOnce(zFunc, zPath, flags, xStop, pStopArg, pzErr, 1, o, nSkip, &e);
    if( e==0 ) return rc;
  }
  /* every read is over (the hash's too): were they all of one content? */
  if( rc==SQLITE_OK && !profsumFileStampSame(zPath, &stamp, &zWhy) ){
    *pzErr = zWhy==0 ? 0 : sqlite3_mprintf("%s: '%s' changed while it was read: %s; the summary "
        "and the file's hash could be of different bytes: import it again once it is complete",
        zFunc, zPath, zWhy);
    rc = *pzErr ? PROFSUM_RC_FILEIO : SQLITE_NOMEM;
    sqlite3_free(zWhy);
  }
  if( rc==SQLITE_OK ) rc = e->diagRc;
  if( rc==SQLITE_NOMEM ) profsumEngNoMem(e, "reading the events");
  if( rc==SQLITE_OK && (rc = profsumEngOrder(e))==SQLITE_NOMEM ){
    profsumEngNoMem(e, "ordering the events and their nesting");
  }
  if( rc==SQLITE_OK ) engCappedExport(e);
  /* (a kind's total, when it had more rows than are stored, is written as
  ** a 'suppressed' row with the rest: engine_diag.c) */
  pInfo->nEntries = e->nEntries;
  pInfo->nComplete = e->nEv;
  pInfo->nRejectedByRef = e->nRejected;
  pInfo->iFirstRejected = e->iFirstRejected;
  pInfo->zFirstRejectedKind = e->zFirstRejected;
  pInfo->nLeftOut = e->nLeftOut;
  pInfo->iFirstLeftOut = e->iFirstLeftOut;
  pInfo->zFirstLeftOutWhy = e->zFirstLeftOutWhy;
  pInfo->arrayForm = e->arrayForm;
  pInfo->laxSyntax = e->laxSyntax;
  pInfo->byteOrderMark = e->byteOrderMark;
  pInfo->gzipByContent = e->gzipByContent;
  pInfo->topRejected = e->topRejected;
  pInfo->cutOff = e->cutOff;
  pInfo->noEvents = e->noEvents;
  memcpy(pInfo->zSha256, e->zSha, sizeof(e->zSha));
  pInfo->nFileBytes = e->nFileBytes;
  pInfo->isXPlane = e->isXPlane;
  if( rc==SQLITE_NOMEM ) profsumEngNoMem(e, "keeping the diagnostics");
  e->pzErr = 0;
  if( rc ){ profsumEngineFree(e); return rc; }
  *pp = e;
  return SQLITE_OK;
}

/* The range of a JSON trace's doubles (profsumEngFloatRange), a pass over
** every record that the trace row needs last: a side job queued before
** the aggregation, which the worker takes once the others are done. */
typedef struct RangeJob {
  EngSide side;
  Engine *e;
  double fMin, fMax;
} RangeJob;

/* The job's thread (or the caller's, when the worker did not take it). */
static void *rangeMain(void *pArg){
  RangeJob *j = (RangeJob*)pArg;
  profsumEngFloatRange(j->e, &j->fMin, &j->fMax);
  return 0;
}

/* See summary_engine.h. */
int profsumEngineWrite(ProfsumEngine *e, sqlite3 *db, const char *zSchema,
                       sqlite3_int64 traceId, int (*xBeside)(void*), void *pBesideArg,
                       char **pzErr){
  EngWallJob *pWall = 0;
  RangeJob range;
  int rc, rc2, bRange = e->hasRange && !e->isXPlane && e->nEv>0;
  e->db = db;
  e->zSchema = zSchema;
  e->traceId = traceId;
  e->pzErr = pzErr;
  memset(&range, 0, sizeof(range));
  range.e = e;
  if( bRange ) profsumEngSideStart(e, &range.side, ENG_SIDE_RANK_RANGE, rangeMain, &range);
  /* the step spans first: the wall cover works them out beside the
  ** aggregation (started by it, after its own side jobs), and their rows
  ** are written by it */
  rc = profsumEngStepSpansKeep(e);
  if( rc==SQLITE_NOMEM ) profsumEngNoMem(e, "splitting the steps' wall time");
  if( rc==SQLITE_OK && (rc = profsumEngAggregate(e, &pWall))==SQLITE_NOMEM ){
    profsumEngNoMem(e, "computing the summary's aggregates");
  }
  /* the diagnostics before the caller's rows of the same table */
  if( rc==SQLITE_OK && (rc = profsumEngWriteDiag(e))==SQLITE_NOMEM ){
    profsumEngNoMem(e, "writing the diagnostics");
  }
  if( rc==SQLITE_OK && xBeside ) rc = xBeside(pBesideArg);
  rc2 = profsumEngWallFinish(e, pWall, rc==SQLITE_OK);
  if( rc==SQLITE_OK ) rc = rc2;
  if( bRange && !profsumEngSideJoin(&range.side) ) rangeMain(&range);
  profsumEngSideStop(e);             /* every side job is joined */
  if( rc==SQLITE_NOMEM ) profsumEngNoMem(e, "writing the step wall time");
  if( rc==SQLITE_OK ){
    sqlite3_stmt *pUp = 0;
    char *z = sqlite3_mprintf("UPDATE \"%w\".profsum_trace SET display_time_unit=?1, "
        "num_events_total=?2, num_complete_events=?3, num_processes=?4, num_threads=?5, "
        "profile_start_ts=?6, profile_end_ts=?7, suspected_truncation=?8, "
        "quality_warnings=?9, sha256=?11, size=?12, source_format=coalesce(?13, source_format) "
        "WHERE trace_id=?10", zSchema);
    if( z==0 ) rc = SQLITE_NOMEM;
    else{
      rc = sqlite3_prepare_v2(db, z, -1, &pUp, 0);
      sqlite3_free(z);
    }
    if( rc==SQLITE_OK ){
      int trunc = e->nEv==1000000 || e->nEv==5000000;
      if( e->zUnit ) sqlite3_bind_text(pUp, 1, e->zUnit, -1, SQLITE_STATIC);
      sqlite3_bind_int64(pUp, 2, e->nEntries);
      sqlite3_bind_int64(pUp, 3, e->nEv);
      sqlite3_bind_int64(pUp, 4, e->procMap.nUsed);
      sqlite3_bind_int64(pUp, 5, e->threadMap.nUsed);
      if( e->hasRange && e->isXPlane ){
        /* the reference's doubles (their timestamp_ns rounded to a double) */
        sqlite3_bind_double(pUp, 6, e->xpTsMin);
        sqlite3_bind_double(pUp, 7, e->xpEndMax);
      }else if( bRange ){
        /* the reference's doubles: ts + dur rounds (0.1 + 0.2) */
        sqlite3_bind_double(pUp, 6, range.fMin);
        sqlite3_bind_double(pUp, 7, range.fMax);
      }
      sqlite3_bind_int(pUp, 8, trunc);
      if( trunc ){
        sqlite3_bind_text(pUp, 9, e->nEv==1000000
          ? "[\"Trace contains exactly 1,000,000 complete events; this often indicates export truncation at a collector cap.\"]"
          : "[\"Trace contains exactly 5,000,000 complete events; this often indicates export truncation at a collector cap.\"]",
          -1, SQLITE_STATIC);
      }else{
        sqlite3_bind_text(pUp, 9, "[]", 2, SQLITE_STATIC);
      }
      if( e->isXPlane ){
        /* its reader's warnings after the truncation warning (§4.1) */
        if( e->zXpWarn ){
          char *zW = trunc ? sqlite3_mprintf("[\"Trace contains exactly %s complete events; this often "
              "indicates export truncation at a collector cap.\",%s]",
              e->nEv==1000000 ? "1,000,000" : "5,000,000", e->zXpWarn)
              : sqlite3_mprintf("[%s]", e->zXpWarn);
          if( zW==0 ){ sqlite3_finalize(pUp); e->pzErr = 0; return SQLITE_NOMEM; }
          sqlite3_bind_text(pUp, 9, zW, -1, sqlite3_free);
        }
        sqlite3_bind_text(pUp, 13, "xplane_pb", -1, SQLITE_STATIC);
      }
      sqlite3_bind_int64(pUp, 10, traceId);
      if( e->zSha[0] ) sqlite3_bind_text(pUp, 11, e->zSha, -1, SQLITE_STATIC);
      sqlite3_bind_int64(pUp, 12, e->nFileBytes);
      rc = profsumEngStep(e, pUp);
    }else if( rc!=SQLITE_NOMEM ){
      profsumEngErr(e, rc, "%s", sqlite3_errmsg(db));
    }                              /* out of memory formatting it: no text */
    sqlite3_finalize(pUp);
  }
  e->pzErr = 0;
  return rc;
}

/* See summary_engine.h. */
struct ProfsumInsights *profsumEngineInsights(ProfsumEngine *e){ return e->pIns; }

