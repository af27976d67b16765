-- profsum_overview: one row per imported trace — what was read, its
-- provenance, the overview counts of profile_summary.v1 (trace_overview and
-- trace_provenance) and the knobs the summary was computed with.
-- Requires: profsum_trace.
CREATE VIEW IF NOT EXISTS main.profsum_overview(
  -- Trace id (INTEGER).
  trace_id,
  -- Unique label of the trace (TEXT).
  label,
  -- Series the run belongs to, for trends (TEXT or NULL).
  series,
  -- Path given to profsum_import (TEXT).
  source_path,
  -- File that was read (the pick inside an artifact folder) (TEXT).
  trace_path,
  -- 'perfetto_trace_json' for a JSON trace, 'xplane_pb' for an XPlane; for an imported
  -- profile_summary.v1 file, the document's own source_format (that of the trace it
  -- summarizes) (TEXT).
  source_format,
  -- SHA-256 of the trace file's bytes as stored on disk, lower-case hex; for an imported
  -- profile_summary.v1 file, its trace_provenance.trace_sha256 (the summarized trace's) (TEXT).
  trace_sha256,
  -- File size in bytes (INTEGER).
  size_bytes,
  -- displayTimeUnit of the trace, echoed, never applied (TEXT or NULL).
  display_time_unit,
  -- traceEvents entries (INTEGER).
  num_events_total,
  -- Complete events accepted by the summary (INTEGER).
  num_complete_events,
  -- Processes with a process_name (INTEGER).
  num_processes,
  -- Threads with a thread_name (INTEGER).
  num_threads,
  -- Earliest start of a complete event, µs (REAL or NULL).
  profile_start_ts,
  -- Latest end of a complete event, µs (REAL or NULL).
  profile_end_ts,
  -- Always 'exclusive_duration_per_track' (TEXT), as in trace_overview.
  duration_basis,
  -- 1 if exactly 1,000,000 or 5,000,000 complete events (an exporter cap) (INTEGER).
  suspected_truncation,
  -- JSON array of quality warnings (TEXT).
  quality_warnings,
  -- JSON array: most frequent args.run_id values, at most 20 (TEXT).
  run_ids,
  -- JSON array: most frequent args.source values, at most 20 (TEXT).
  source_file_hints,
  -- generated_at_utc of the summary: the import time, ISO-8601 (TEXT).
  generated_at_utc,
  -- Steps numbered below this are warmup (INTEGER).
  warmup_steps,
  -- How many hot ops the summary keeps (INTEGER).
  hot_op_limit,
  -- 'exclusive_per_track' or 'exclusive_global' (TEXT).
  breakdown_mode,
  -- profsum version that imported the trace (TEXT).
  profsum_version
) AS
SELECT trace_id, label, series, source_path, trace_path, source_format, sha256, size,
       display_time_unit, num_events_total, num_complete_events, num_processes, num_threads,
       profile_start_ts, profile_end_ts, 'exclusive_duration_per_track', suspected_truncation,
       quality_warnings, run_ids, source_file_hints, generated_at_utc,
       json_extract(options, '$.warmup_steps'), json_extract(options, '$.hot_op_limit'),
       json_extract(options, '$.breakdown_mode'), profsum_version
FROM profsum_trace;
