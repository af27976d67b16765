-- The table-valued functions profsum registers, as profsum_catalog lists them
-- (kind 'table-valued function').  Documentation only: this file is compiled
-- into the extension for the catalog and never executed.  Each block is a
-- description, a "Columns:" line and one "  name: doc" line per visible
-- column, in the function's column order (tests/test_views.py checks the
-- names against pragma_table_xinfo), ended by a "FUNCTION name" line.
-- docs/trace_events.md, docs/xplane.md and docs/find_traces.md say more.

-- trace_events(path): one row per event of a trace file (trace JSON, gzip or
-- not; an XPlane .xplane.pb, one row per timeline event).  Times in ns
-- (floor of exact ps) and exact ps.  Direct-only: call it in direct SQL or a
-- TEMP view.  Example: SELECT name, sum(excl_ps) FROM trace_events('t.json.gz')
-- WHERE ph = 'X' GROUP BY name ORDER BY 2 DESC LIMIT 10.
-- Columns:
--   idx: 0-based index of the entry in traceEvents, counting entries that make no row (an XPlane: the XEvent's ordinal); also the rowid (INTEGER).
--   ph: the phase as written: X, B, E, i, C, M, ... (TEXT).
--   name: event name; NULL when absent or not a string (TEXT).
--   cat: category (TEXT).
--   pid: process id; INTEGER, or TEXT when the file writes a non-numeric string.
--   tid: thread id; INTEGER, or TEXT as pid.
--   ts: start in ns, floor of the exact ps, absolute as in the file (INTEGER).
--   dur: duration in ns (floor); X: the file's, B: to the matching E, E and unmatched B: NULL (INTEGER).
--   dur_ps: the same duration in exact picoseconds (INTEGER).
--   process_name: args.name of the process_name M event of this pid (TEXT).
--   thread_name: args.name of the thread_name M event of this (pid, tid) (TEXT).
--   tf_op: args.tf_op (TEXT).
--   hlo_op: args.hlo_op (TEXT).
--   hlo_module: args.hlo_module (TEXT).
--   hlo_category: args.hlo_category (TEXT).
--   long_name: args.long_name (TEXT).
--   source: args.source (TEXT).
--   run_id: args.run_id (TEXT).
--   step_num: args.step_num; integers written as strings are INTEGER.
--   flops: args.flops (INTEGER; other numbers REAL).
--   bytes_accessed: args.bytes_accessed (INTEGER; other numbers REAL).
--   correlation_id: args.correlation_id (INTEGER).
--   group_id: args.group_id (INTEGER).
--   args: the args object as valid JSON ('{}' when absent) (TEXT).
--   depth: nesting depth on its track (pid, tid), 0 at roots; NULL off the tracks (INTEGER).
--   parent_idx: idx of the enclosing slice; NULL at roots (INTEGER).
--   excl: exclusive (self) time in ns, as exclusive_time(ts, dur) over these rows gives it (INTEGER).
--   excl_ps: exclusive time in exact ps, nesting decided on exact times (INTEGER).
FUNCTION trace_events

-- profsum_diagnostics(path): what reading a trace file met that is not
-- plainly valid (rounded times, fields of the wrong type, entries that make
-- no row, ...), one row each; docs/trace_events.md lists the kinds.
-- Direct-only.
-- Columns:
--   idx: the entry (XPlane: the XEvent ordinal) it concerns; NULL for facts of the whole file (INTEGER).
--   byte_offset: where, in the decompressed data (INTEGER).
--   kind: the kind, e.g. time_rounded, bad_field, partial_overlap (TEXT).
--   detail: what was found, in words (TEXT).
FUNCTION profsum_diagnostics

-- profsum_find_traces(dir [, options_json]): the profiler trace files under
-- a folder (searched recursively), with the one profsum reads and the one the
-- reference tool reads.  Direct-only.
-- Columns:
--   path: dir + '/' + the path relative to dir (TEXT).
--   host: <host> of <host>.trace.json[.gz] or <host>.xplane.pb; NULL for perfetto_trace.json.gz (TEXT).
--   session: name of the parent folder (TEXT).
--   size: file size in bytes (INTEGER).
--   format: perfetto_trace_json_gz, trace_json_gz, trace_json, xplane_pb or xplane_riegeli (TEXT).
--   picked: 1 on the file profsum reads, else 0 (INTEGER).
--   reference_pick: 1 on the file the reference tool reads, else 0 (INTEGER).
FUNCTION profsum_find_traces

-- profsum_xplane_planes(path): one row per plane of an XPlane file (a device,
-- the host, Task Environment, ...), with its own stats (device limits).
-- Direct-only.
-- Columns:
--   plane_index: 0-based, in file order (INTEGER).
--   pid: plane_index + 1, the pid of the plane's trace_events rows (INTEGER).
--   plane_id: XPlane.id (INTEGER).
--   name: XPlane.name, '' when absent (TEXT).
--   num_lines: lines of the plane (INTEGER).
--   num_events: every XEvent of its lines (INTEGER).
--   num_event_metadata: entries of its event_metadata map (INTEGER).
--   num_stat_metadata: entries of its stat_metadata map (INTEGER).
--   stats: the plane's own stats as a JSON object (TEXT).
--   hostnames: the XSpace's hostnames as a JSON array, the same on every row (TEXT).
FUNCTION profsum_xplane_planes

-- profsum_xplane_lines(path): one row per line (a timeline: a stream, a
-- thread, XLA Ops, Steps, ...) of an XPlane file.  Direct-only.
-- Columns:
--   plane_index: its plane, as in profsum_xplane_planes (INTEGER).
--   pid: plane_index + 1 (INTEGER).
--   plane_name: the plane's name (TEXT).
--   line_index: 0-based within its plane, in file order (INTEGER).
--   tid: line_id, or line_index + 1 when line_id is 0: the tid of the line's trace_events rows (INTEGER).
--   line_id: XLine.id, may be negative (INTEGER).
--   display_id: XLine.display_id (INTEGER).
--   name: XLine.name (TEXT).
--   display_name: XLine.display_name, '' when absent (TEXT).
--   timestamp_ns: the line's base time in ns (JAX: since the session start) (INTEGER).
--   duration_ps: XLine.duration_ps (INTEGER).
--   num_events: XEvents of the line (INTEGER).
FUNCTION profsum_xplane_lines
