/*
** engine_intake.h — how a reader other than the JSON scanner feeds stage A
** (summary_engine.c): tracks, names and accepted events, each event with
** its exact picoseconds and the doubles the reference computes for it.
** Used by xplane_intake.c (summary §6.1); not part of the SQL surface.
**
** The engine is the one of profsumEngineParse: the functions below are
** called while it reads (before ordering), in processing order.  Strings
** are interned in the engine's pool; an id is valid for the engine's life.
*/
#ifndef PROFSUM_ENGINE_INTAKE_H
#define PROFSUM_ENGINE_INTAKE_H

#include "summary_engine.h"

/* One accepted event.  String ids: -1 absent. */
typedef struct ProfsumEngEvent {
  int64_t idx;          /* entry ordinal in the file (diagnostics) */
  int64_t iOffset;      /* its byte offset */
  profsum_ps ts, dur;   /* exact picoseconds, dur > 0 */
  double fTs, fDur;     /* the reference's doubles (µs): every order, nesting
                        ** and gap decision is made on fTs and fTs + fDur */
  int32_t trk;          /* from profsumEngNewTrack */
  int32_t name, tfop, source;
  int32_t sig;          /* shape signature (profsumEngSig) */
  int32_t hostMem;      /* its long_name names host memory (profsumEngSig) */
  int32_t runid;
  int hasStep;          /* step_num given: step */
  int64_t step;
  int32_t key;          /* the event key an earlier event of the same trk,
                        ** name, tfop, source and sig got (profsumEngAdd's
                        ** *pKey), which spares interning it; -1: unknown */
} ProfsumEngEvent;


/* The SQL function's name, for messages. */
const char *profsumEngFunc(ProfsumEngine *e);
/* Events accepted so far. */
int64_t profsumEngCount(ProfsumEngine *e);

/* Intern z[0..n): *pId, or -1 when n is 0 (empty counts as absent).
** SQLITE_OK or SQLITE_NOMEM. */
int profsumEngIntern(ProfsumEngine *e, const char *z, int64_t n, int32_t *pId);
/* The text of string id (NUL-terminated). */
const char *profsumEngStr(ProfsumEngine *e, int32_t id);
/* What the thread name of string id (-1: none) makes of its track
** (summary §1.4), by the whole name (a NUL byte in it included):
** PROFSUM_THREAD_DEVOP ("XLA Ops", "Async XLA Ops", "Stream #..."),
** PROFSUM_THREAD_STEPS ("Steps"), else 0. */
#define PROFSUM_THREAD_DEVOP 1
#define PROFSUM_THREAD_STEPS 2
int profsumEngThreadKind(ProfsumEngine *e, int32_t id);
/* The shape signature id (-1: none) of long_name z[0..n) of an event named
** `name` (summary §4.6) into *pId, and into *pHm 1 when the text names the
** host memory space "S(5)" (EvKey.hostMem), else 0.  SQLITE_OK or
** SQLITE_NOMEM. */
int profsumEngSig(ProfsumEngine *e, int32_t name, const char *z, int64_t n, int32_t *pId,
                  int32_t *pHm);
/* 1 when z[0..n) names the host memory space of an XLA layout, "S(5)"
** (as in f32[8]{0:T(8)S(5)}), else 0. */
int profsumEngHasHostMem(const char *z, int64_t n);

/* The process name of pid (isThread 0) or the thread name of (pid, tid)
** (isThread 1) is string id: a later call replaces it; num_processes and
** num_threads count the distinct keys.  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngName(ProfsumEngine *e, int isThread, int64_t pid, int64_t tid, int32_t id);

/* A new track (always new, whatever its pid and tid: an XPlane line is a
** track of its own) named proc and thread (string ids): its kind (device,
** host, device ops, Steps) comes from these names.  *pTrk is its index.
** Tracks are processed in the order they are made.  SQLITE_OK or
** SQLITE_NOMEM. */
int profsumEngNewTrack(ProfsumEngine *e, int64_t pid, int64_t tid, int32_t proc, int32_t thread,
                       int32_t *pTrk);

/* Track trk is an XPlane line whose timestamp_ns is tsNs: the reference's
** doubles of its events are double(tsNs)/1000 + double(offset_ps)/1e6 and
** double(duration_ps)/1e6, with offset_ps = ts - tsNs*1000 (ProfsumEngEvent's
** fTs and fDur must be those).  Call before its first profsumEngAdd. */
void profsumEngTrackLineNs(ProfsumEngine *e, int32_t trk, int64_t tsNs);

/* Take an accepted event (left out, with a diagnostic, when it lies more
** than 2^61 ps from the first).  *pKey: its event key (x->key when that is
** not -1), to pass as the key of a later event of the same trk, name,
** tfop, source and sig; left alone when the event is left out.  SQLITE_OK,
** SQLITE_NOMEM or SQLITE_TOOBIG (with the engine's message set). */
int profsumEngAdd(ProfsumEngine *e, const ProfsumEngEvent *x, int32_t *pKey);

/* Track trk (an XPlane line whose events are being added) has its events
** so far: do its share of profsumEngOrder's per-track work on them now
** (the sorted check, the §2 sweep with exclusive times, the run_ids), with
** the decisions profsumEngOrder would make.  profsumEngTrackDone: the
** track is complete (no event will be added to it), its work is finished
** (its tolerance and kind too).  Tracks must come in the order they were
** made, each with its events appended together after the previous one's.
** When that does not hold, or the track is out of order, or memory runs
** out, what was done is undone and profsumEngOrder orders every track
** after the read as it does for a JSON trace: the results are the same
** either way, so neither call can fail.  No-ops for a JSON read. */
void profsumEngTrackPart(ProfsumEngine *e, int32_t trk);
void profsumEngTrackDone(ProfsumEngine *e, int32_t trk);

/* The tracks will not all be done as they come (a line found out of
** order): undo what profsumEngTrackPart/Done did and leave every track to
** profsumEngOrder (later calls of them are no-ops). */
void profsumEngOrderLater(ProfsumEngine *e);

/* A diagnostic row (profsum_agg_diagnostic; zKind static; capped per kind
** unless the import stores them all) and the sticky out-of-memory code of
** storing them. */
void profsumEngDiag(ProfsumEngine *e, int64_t idx, int64_t off, const char *zKind, const char *zDetail);
int profsumEngDiagRc(ProfsumEngine *e);
/* 1 when the import stores every diagnostic (store_diagnostics 'all'):
** the readers are then asked for every detail. */
int profsumEngDiagAll(ProfsumEngine *e);

/* 1 when the caller of the import asked to stop (an interrupt). */
int profsumEngStopAsked(ProfsumEngine *e);

/* Append the JSON string z[0..n) to a list of quality warnings (JSON array
** items, comma-separated). */
void profsumEngWarnAppend(sqlite3_str *pW, const char *z, int64_t n);

/* The end of a successful read: the entry count (num_events_total), the
** display unit, the file's SHA-256 (hex) and size, and the reader's quality
** warnings (pW: items of profsumEngWarnAppend, or 0), which follow the
** truncation warning.  SQLITE_OK or SQLITE_NOMEM. */
int profsumEngFinish(ProfsumEngine *e, int64_t nEntries, const char *zUnit, const char *zSha,
                     int64_t nFileBytes, sqlite3_str *pW);

/* The read failed with message zErr (sqlite3_malloc'd, owned by the engine
** from here; 0: keep the engine's own message, if any).  Returns SQLITE_OK. */
int profsumEngSetError(ProfsumEngine *e, char *zErr);

/* The XPlane reader (xplane_intake.c): read zPath into e.  SQLITE_OK or an
** error code with the engine's message set. */
int profsumEngineReadXPlane(ProfsumEngine *e, const char *zPath);

#endif /* PROFSUM_ENGINE_INTAKE_H */
