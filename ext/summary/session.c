/*
** session.c — a session's hosts once parsed (session.h): their rows
** (profsum_agg_host, profsum_agg_device_step), their alignment on the
** session's time axis, and the SQL function
**
**   profsum_session_json(session [, options_json]) → TEXT
**
** session: a profsum_session.session_id (an integer) or label (text; a
** text of digits that is no label is taken as an id).  options_json keys:
** top_k (10): the stragglers listed in "pod"; schema ("main"): an attached
** database to read.  The document (sorted keys,
** indent 2): {"schema_version": "profsum_session.v1", "session": {...},
** "hosts": [one object per host, trace_id order], "pod": {...},
** "field_scope": {"<json path>": "per_host" | "pod"}}.
**
** Alignment (docs/sessions.md).  origin_ns = min over the hosts of their
** XPlane's Task Environment.profile_start_time (the first usable one of
** the file: session_parse.c); such a host's offset is
** its start - origin.  Each other host is aligned to the first aligned
** host (trace_id order; the first host of a session where none has a
** start, which itself gets offset 0) by the median over their common step
** numbers of (its step start - that host's step start), step starts from
** profsum_agg_step_span; no common step: offset 0, alignment 'none' and a
** diagnostic host_not_aligned.  A host left out of profsum_stragglers
** (no step number shared with another host, or no step at all while
** another host or none has steps) gets a diagnostic host_steps_unmatched.
*/
#include "profsum_int.h"
#include "session.h"
#include "jsontree.h"
#include "sqlcall.h"
#include "import_int.h"

#include <stdlib.h>
#include <string.h>

/* Prepare zSql (its %w, up to three: zSchema); message into *pzErr (none
** for SQLITE_NOMEM). */
static int sessPrepare(sqlite3 *db, const char *zFunc, char **pzErr, sqlite3_stmt **pp,
                       const char *zSql, const char *zSchema){
  return profsumImportPrepare(db, pp, zFunc, 0, pzErr, zSql, zSchema, zSchema, zSchema);
}

/* Step an insert and reset it; message into *pzErr. */
static int sessStep(sqlite3 *db, const char *zFunc, char **pzErr, sqlite3_stmt *p){
  int rc = sqlite3_step(p);
  sqlite3_reset(p);
  if( rc==SQLITE_DONE ) return SQLITE_OK;
  rc = sqlite3_errcode(db);
  if( rc==SQLITE_OK ) rc = SQLITE_ERROR;
  if( rc!=SQLITE_NOMEM && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  return rc;
}

/* See session.h. */
int profsumSessionWriteHost(sqlite3 *db, const char *zSchema, sqlite3_int64 sessionId,
                            const ProfsumHost *h, const char *zFunc, char **pzErr){
  sqlite3_stmt *p = 0;
  int rc, i;
  rc = sessPrepare(db, zFunc, pzErr, &p, "INSERT INTO \"%w\".profsum_agg_host(trace_id, session_id, "
                   "host, file_host, hostnames, profile_start_ns) VALUES(?1,?2,?3,?4,?5,?6)", zSchema);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, h->traceId);
  sqlite3_bind_int64(p, 2, sessionId);
  sqlite3_bind_text(p, 3, h->zHost, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 4, h->zFileHost, -1, SQLITE_STATIC);
  sqlite3_bind_text(p, 5, h->zHostnames ? h->zHostnames : "[]", -1, SQLITE_STATIC);
  if( h->hasStart ) sqlite3_bind_int64(p, 6, h->startNs);
  rc = sessStep(db, zFunc, pzErr, p);
  sqlite3_finalize(p);
  if( rc ) return rc;
  /* a step number met twice on a device (a Steps line that repeats it):
  ** one row from its first start to its last end, with the busy and
  ** collective time of all its windows */
  rc = sessPrepare(db, zFunc, pzErr, &p, "INSERT INTO \"%w\".profsum_agg_device_step(trace_id, "
                   "step, device, start_us, end_us, busy_us, collective_us) VALUES(?1,?2,?3,?4,?5,?6,?7) "
                   "ON CONFLICT(trace_id, step, device) DO UPDATE SET start_us=min(start_us, excluded.start_us), "
                   "end_us=max(end_us, excluded.end_us), busy_us=busy_us+excluded.busy_us, "
                   "collective_us=collective_us+excluded.collective_us", zSchema);
  for(i=0; rc==SQLITE_OK && i<h->nStep; i++){
    const ProfsumDevStep *s = &h->aStep[i];
    sqlite3_bind_int64(p, 1, h->traceId);
    sqlite3_bind_int64(p, 2, s->step);
    sqlite3_bind_text(p, 3, h->azDev[s->iDev], -1, SQLITE_STATIC);
    sqlite3_bind_double(p, 4, profsumPsToMicros(s->startPs));
    sqlite3_bind_double(p, 5, profsumPsToMicros(s->endPs));
    sqlite3_bind_double(p, 6, profsumPsToMicros(s->busyPs));
    sqlite3_bind_double(p, 7, profsumPsToMicros(s->collPs));
    rc = sessStep(db, zFunc, pzErr, p);
  }
  sqlite3_finalize(p);
  if( rc==SQLITE_OK && h->unnamed ){
    /* a session of a perfetto_trace.json.gz alone (no host's file): JAX
    ** writes it as a copy of one host's trace, and its name says not
    ** which, nor does its content (the copy drops the metadata) */
    char *zD = sqlite3_mprintf("this session holds no file named after a host (<host>.xplane.pb, "
        "<host>.trace.json.gz or <host>.trace.json), only '%s', whose name carries none: it is read as "
        "the session's one trace, with host NULL, labelled as the session", h->zPath);
    if( zD==0 ) return SQLITE_NOMEM;
    rc = profsumImportExec(db, zFunc, 0, pzErr, "INSERT INTO \"%w\".profsum_agg_diagnostic(trace_id, idx, "
        "byte_offset, kind, detail) VALUES(%lld, NULL, NULL, 'host_unnamed', %Q)", zSchema,
        (long long)h->traceId, zD);
    sqlite3_free(zD);
  }
  if( rc==SQLITE_OK && h->nSameName>0 ){
    char *zD = sqlite3_mprintf("another host of this session has the name '%s' (file '%s'): "
        "this one is labelled '%s'", h->zFileHost ? h->zFileHost : "", h->zPath, h->zHost);
    if( zD==0 ) return SQLITE_NOMEM;
    rc = profsumImportExec(db, zFunc, 0, pzErr, "INSERT INTO \"%w\".profsum_agg_diagnostic(trace_id, idx, "
        "byte_offset, kind, detail) VALUES(%lld, NULL, NULL, 'duplicate_host', %Q)", zSchema,
        (long long)h->traceId, zD);
    sqlite3_free(zD);
  }
  return rc;
}

/* One host of a session while it is aligned. */
typedef struct AlignHost {
  sqlite3_int64 traceId;
  int hasStart;
  sqlite3_int64 startNs;
  int hasTs;              /* profile_start_ts known */
  double tsUs;            /* the trace's first event, µs */
  double offsetUs, toSessionUs;
  const char *zAlign;     /* static */
  sqlite3_int64 nCommon;  /* -1: not aligned by steps */
} AlignHost;

/* The median over the step numbers common to traces a and b of (b's step
** start - a's step start), step start = min start_us of the step's spans;
** *pn the common steps (0: *pMed unset). */
static int medianStepShift(sqlite3 *db, const char *zSchema, sqlite3_int64 a, sqlite3_int64 b,
                           const char *zFunc, char **pzErr, double *pMed, sqlite3_int64 *pn){
  sqlite3_stmt *p = 0;
  double *aD = 0;
  sqlite3_int64 n = 0, nAlloc = 0;
  int rc = sessPrepare(db, zFunc, pzErr, &p,
      "SELECT y.s - x.s FROM (SELECT step, min(start_us) AS s FROM \"%w\".profsum_agg_step_span "
      "WHERE trace_id=?1 GROUP BY step) AS x JOIN (SELECT step, min(start_us) AS s FROM "
      "\"%w\".profsum_agg_step_span WHERE trace_id=?2 GROUP BY step) AS y USING (step) ORDER BY 1",
      zSchema);
  *pn = 0;
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, a);
  sqlite3_bind_int64(p, 2, b);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    if( n>=nAlloc ){
      double *aNew;
      nAlloc = nAlloc ? nAlloc*2 : 64;
      aNew = sqlite3_realloc64(aD, sizeof(double)*(sqlite3_uint64)nAlloc);
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      aD = aNew;
    }
    aD[n++] = sqlite3_column_double(p, 0);
  }
  if( rc==SQLITE_DONE ){
    rc = SQLITE_OK;
    if( n>0 ) *pMed = n%2 ? aD[n/2] : (aD[n/2-1] + aD[n/2]) / 2.0;
    *pn = n;
  }else if( rc!=SQLITE_NOMEM && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  }
  sqlite3_finalize(p);
  sqlite3_free(aD);
  return rc;
}

/* Read the hosts of session id (trace_id order) into *pa. */
static int alignRead(sqlite3 *db, const char *zSchema, sqlite3_int64 id, const char *zFunc,
                     char **pzErr, AlignHost **pa, int *pn){
  sqlite3_stmt *p = 0;
  AlignHost *a = 0;
  int n = 0, rc;
  rc = sessPrepare(db, zFunc, pzErr, &p, "SELECT h.trace_id, h.profile_start_ns, t.profile_start_ts "
      "FROM \"%w\".profsum_agg_host AS h JOIN \"%w\".profsum_trace AS t USING (trace_id) "
      "WHERE h.session_id=?1 ORDER BY h.trace_id", zSchema);
  if( rc ) return rc;
  sqlite3_bind_int64(p, 1, id);
  while( (rc = sqlite3_step(p))==SQLITE_ROW ){
    AlignHost *aNew = sqlite3_realloc64(a, sizeof(AlignHost)*(sqlite3_uint64)(n+1));
    if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
    a = aNew;
    memset(&a[n], 0, sizeof(AlignHost));
    a[n].traceId = sqlite3_column_int64(p, 0);
    a[n].hasStart = sqlite3_column_type(p, 1)!=SQLITE_NULL;
    a[n].startNs = sqlite3_column_int64(p, 1);
    a[n].hasTs = sqlite3_column_type(p, 2)!=SQLITE_NULL;
    a[n].tsUs = sqlite3_column_double(p, 2);
    a[n].nCommon = -1;
    n++;
  }
  if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  else if( rc!=SQLITE_NOMEM && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s: %s", zFunc, sqlite3_errmsg(db));
  sqlite3_finalize(p);
  if( rc ){ sqlite3_free(a); return rc; }
  *pa = a;
  *pn = n;
  return SQLITE_OK;
}

/* Place every host of a[0..n) on the session's axis (see the header);
** *pOrigin, *pHasOrigin: the session's origin. */
static int alignPlace(sqlite3 *db, const char *zSchema, AlignHost *a, int n, const char *zFunc,
                      char **pzErr, sqlite3_int64 *pOrigin, int *pHasOrigin){
  int i, iAnchor = -1, rc = SQLITE_OK;
  sqlite3_int64 origin = 0;
  *pHasOrigin = 0;
  for(i=0; i<n; i++){
    if( a[i].hasStart && (!*pHasOrigin || a[i].startNs<origin) ){ origin = a[i].startNs; *pHasOrigin = 1; }
    if( a[i].hasStart && iAnchor<0 ) iAnchor = i;
  }
  for(i=0; i<n; i++){
    if( !a[i].hasStart ) continue;
    a[i].offsetUs = (double)(a[i].startNs - origin) / 1e3;
    /* times relative to the profile's start (a normalised XSpace), or
    ** absolute ones (the trace starts near the profile's start itself) */
    a[i].toSessionUs = a[i].hasTs && a[i].tsUs*1e3 >= (double)a[i].startNs/2
                     ? -(double)origin / 1e3 : a[i].offsetUs;
    a[i].zAlign = "profile_start_time";
  }
  if( iAnchor<0 && n>0 ){
    iAnchor = 0;
    a[0].offsetUs = a[0].toSessionUs = 0.0;
    a[0].zAlign = "steps";
  }
  for(i=0; rc==SQLITE_OK && i<n; i++){
    double med = 0.0;
    if( a[i].zAlign ) continue;
    rc = medianStepShift(db, zSchema, a[iAnchor].traceId, a[i].traceId, zFunc, pzErr, &med, &a[i].nCommon);
    if( rc ) break;
    if( a[i].nCommon>0 ){
      a[i].toSessionUs = a[iAnchor].toSessionUs - med;
      a[i].offsetUs = a[i].toSessionUs;
      a[i].zAlign = "steps";
    }else{
      a[i].offsetUs = a[i].toSessionUs = 0.0;
      a[i].zAlign = "none";
      rc = profsumImportExec(db, zFunc, 0, pzErr, "INSERT INTO \"%w\".profsum_agg_diagnostic(trace_id, idx, "
          "byte_offset, kind, detail) SELECT %lld, NULL, NULL, 'host_not_aligned', "
          "'no usable Task Environment profile_start_time, and no step number in common with the first "
          "aligned host, ' || quote(label) || ' (trace_id %lld): placed at offset 0, alignment none' "
          "FROM \"%w\".profsum_trace WHERE trace_id=%lld", zSchema,
          (long long)a[i].traceId, (long long)a[iAnchor].traceId, zSchema, (long long)a[iAnchor].traceId);
    }
  }
  *pOrigin = origin;
  return rc;
}

/* See session.h. */
int profsumSessionAlign(sqlite3 *db, const char *zSchema, sqlite3_int64 sessionId,
                        const char *zFunc, char **pzErr){
  AlignHost *a = 0;
  sqlite3_stmt *p = 0;
  sqlite3_int64 origin = 0;
  int n = 0, i, rc, hasOrigin = 0, weakest = 0;
  static const char *azAlign[] = {"profile_start_time", "steps", "none"};
  rc = alignRead(db, zSchema, sessionId, zFunc, pzErr, &a, &n);
  if( rc ) return rc;
  rc = alignPlace(db, zSchema, a, n, zFunc, pzErr, &origin, &hasOrigin);
  if( rc==SQLITE_OK ) rc = sessPrepare(db, zFunc, pzErr, &p, "UPDATE \"%w\".profsum_agg_host SET "
      "offset_us=?2, to_session_us=?3, alignment=?4, common_steps=?5 WHERE trace_id=?1", zSchema);
  for(i=0; rc==SQLITE_OK && i<n; i++){
    int k = a[i].zAlign[0]=='p' ? 0 : a[i].zAlign[0]=='s' ? 1 : 2;
    if( k>weakest ) weakest = k;
    sqlite3_bind_int64(p, 1, a[i].traceId);
    sqlite3_bind_double(p, 2, a[i].offsetUs);
    sqlite3_bind_double(p, 3, a[i].toSessionUs);
    sqlite3_bind_text(p, 4, a[i].zAlign, -1, SQLITE_STATIC);
    if( a[i].nCommon>=0 ) sqlite3_bind_int64(p, 5, a[i].nCommon);
    else sqlite3_bind_null(p, 5);
    rc = sessStep(db, zFunc, pzErr, p);
  }
  sqlite3_finalize(p);
  if( rc==SQLITE_OK ){
    char zOrigin[32];
    if( hasOrigin ) sqlite3_snprintf(sizeof(zOrigin), zOrigin, "%lld", (long long)origin);
    else sqlite3_snprintf(sizeof(zOrigin), zOrigin, "NULL");
    rc = profsumImportExec(db, zFunc, 0, pzErr, "UPDATE \"%w\".profsum_session SET origin_ns=%s, alignment=%Q "
        "WHERE session_id=%lld", zSchema, zOrigin, azAlign[weakest], (long long)sessionId);
  }
  if( rc==SQLITE_OK ){
    /* Steps are compared across hosts by number (profsum_stragglers): a
    ** host with steps of which no number is another host's, or without any
    ** step while another host has some, is left out of that comparison,
    ** which must not pass for "no straggler" unsaid; nor must a session of
    ** which no host has a step, whose comparison is empty. */
    rc = profsumImportExec(db, zFunc, 0, pzErr, "INSERT INTO \"%w\".profsum_agg_diagnostic(trace_id, idx, "
        "byte_offset, kind, detail) SELECT h.trace_id, NULL, NULL, 'host_steps_unmatched', "
        "CASE WHEN EXISTS (SELECT 1 FROM \"%w\".profsum_agg_device_step AS s WHERE s.trace_id=h.trace_id) "
        "THEN 'none of its step numbers is another host''s: its steps are not compared in profsum_stragglers "
        "(steps are matched across hosts by number)' "
        "WHEN EXISTS (SELECT 1 FROM \"%w\".profsum_agg_host AS o JOIN \"%w\".profsum_agg_device_step AS t "
        "ON t.trace_id=o.trace_id WHERE o.session_id=h.session_id) "
        "THEN 'it has no step measured on a device: it is not compared in profsum_stragglers' "
        "ELSE 'no host of this session has a step measured on a device (a Steps line of step numbers, or "
        "host ''train'' events with a step_num): profsum_stragglers has no row for this session' END "
        "FROM \"%w\".profsum_agg_host AS h WHERE h.session_id=%lld "
        "AND (EXISTS (SELECT 1 FROM \"%w\".profsum_agg_host AS o JOIN \"%w\".profsum_agg_device_step AS t "
        "ON t.trace_id=o.trace_id WHERE o.session_id=h.session_id AND o.trace_id<>h.trace_id) "
        "OR NOT EXISTS (SELECT 1 FROM \"%w\".profsum_agg_device_step AS s WHERE s.trace_id=h.trace_id)) "
        "AND NOT EXISTS (SELECT 1 FROM \"%w\".profsum_agg_device_step AS s JOIN \"%w\".profsum_agg_device_step AS t "
        "ON t.step=s.step JOIN \"%w\".profsum_agg_host AS o ON o.trace_id=t.trace_id "
        "WHERE s.trace_id=h.trace_id AND o.session_id=h.session_id AND o.trace_id<>h.trace_id)",
        zSchema, zSchema, zSchema, zSchema, zSchema, (long long)sessionId, zSchema, zSchema, zSchema,
        zSchema, zSchema, zSchema);
  }
  sqlite3_free(a);
  return rc;
}
