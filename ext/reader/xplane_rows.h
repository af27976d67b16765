/*
** xplane_rows.h — the XPlane adapter: the XEvents of an XSpace file
** (xplane_pb.c) as ProfsumEvent rows, the shape the JSON scanner gives, so
** that trace_events, profsum_diagnostics, the track pass and profsum_trim
** read an .xplane.pb as they read a trace JSON.  Used through the event
** stream of evstream.c (profsum_reader.h); docs/xplane.md ("As trace
** events") says what each column holds.
**
** One row per XEvent whose data is offset_ps (zero and negative durations
** included), ph "X".  An XEvent with num_occurrences, or with no data,
** makes no row but a diagnostic (xplane_aggregated_event,
** xplane_no_event_data), so rows + those diagnostics = every XEvent.
** Row fields (summary §6.1):
**   idx       the XEvent's ordinal over all planes and lines (file order)
**   iOffset   the byte offset of its tag in the file (decompressed data)
**   pid, tid  plane index + 1; line id, or line index + 1 when the id is 0
**   iTrack    1 + the line's ordinal over the file: each line is a track
**   ts, dur   timestamp_ns*1000 + offset_ps and duration_ps, exact (128-bit)
**   name      the metadata's display_name, else its name; absent (NULL)
**             when the plane has no such metadata (xplane_unknown_metadata)
**   procName  plane name, or "xplane:{i}"
**   threadName  line display_name, else name, else "xline:{j}"
**   args      (PROFSUM_SCAN_ARGS) metadata stats then event stats, the
**             event's winning, as a JSON object (typed values)
**   aArg[]    (PROFSUM_SCAN_ARGKEYS) the stats of the known names, typed
**             as JSON spans (strings without escapes, numbers as text)
** A line whose rows are not in (start ascending, end descending) order
** gets one xplane_unsorted_line diagnostic (the track pass sorts anyway).
*/
#ifndef PROFSUM_XPLANE_ROWS_H
#define PROFSUM_XPLANE_ROWS_H

#include "profsum_reader.h"

typedef struct ProfsumXRows ProfsumXRows;

/* Open zPath (an XSpace, plain or gzip).  String fields that are not
** UTF-8 are read with U+FFFD (the decoder's PROFSUM_XP_LENIENT_UTF8) and
** reported as invalid_utf8.  flags: PROFSUM_SCAN_ARGKEYS, PROFSUM_SCAN_ARGS,
** PROFSUM_SCAN_ALLDETAILS (every diagnostic with its detail, the decoder's
** too: PROFSUM_XP_ALLDETAILS).
** xDiag (may be 0) receives the decoder's and the adapter's diagnostics.
** Errors: *pzErr set ("<zFunc>: '<path>': ..."). */
int profsumXRowsOpen(const char *zFunc, const char *zPath, unsigned flags,
                     ProfsumDiagFn xDiag, void *pDiagCtx,
                     ProfsumXRows **pp, char **pzErr);

/* The next row: SQLITE_ROW with *ppEv (valid until the next call),
** SQLITE_DONE, or an error code with *pzErr set (decode errors name the
** function, the file, the byte offset and the plane/line/event). */
int profsumXRowsNext(ProfsumXRows *p, ProfsumEvent **ppEv, char **pzErr);

/* XEvents walked (complete after SQLITE_DONE). */
int64_t profsumXRowsEvents(ProfsumXRows *p);
void profsumXRowsClose(ProfsumXRows *p);   /* 0 is a no-op */
/* Rows whose args came from the metadata memo (xplane_rows.c), over the
** cursors this process closed (profsum_debug; the tests read it). */
int64_t profsumXRowsMemoHits(void);

#endif /* PROFSUM_XPLANE_ROWS_H */
