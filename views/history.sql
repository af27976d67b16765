-- profsum_history: one row per regression-history record (profsum_track,
-- profsum_bundle with "history": true, profsum_history_import), with the
-- assessment of summary-v1-tools-spec §4.1 unpacked from record_json.
-- Records read from a JSONL file have no trace ids (before_label and
-- after_label are NULL).  A record holding a non-finite number (Python's
-- json.dumps writes NaN, Infinity, -Infinity: a reference line with a NaN
-- metric, a regression from a subnormal median) is read with them as null
-- and ±9e999 (±Inf), since SQLite's JSON functions reject those words;
-- record_json keeps them as written.  Percentages are percent units
-- (22.2 = 22.2 %), share deltas absolute (0.05 = 5 points).
-- Requires: profsum_history_record, profsum_trace.
CREATE VIEW IF NOT EXISTS main.profsum_history(
  -- Record id: the record order, = JSONL line order on export (INTEGER).
  record_id,
  -- When the row was written, ISO-8601 UTC (TEXT).
  created_at,
  -- The record's recorded_at_utc (TEXT or NULL).
  recorded_at_utc,
  -- The record's label (TEXT or NULL).
  label,
  -- Assessment status: pass, warn or fail (TEXT or NULL).
  status,
  -- 'track', 'bundle' or 'import' (TEXT).
  origin,
  -- Series of the after trace (TEXT or NULL).
  series,
  -- trace_id of the before trace (INTEGER or NULL).
  before_trace_id,
  -- Label of the before trace, NULL when unknown or since removed (TEXT).
  before_label,
  -- trace_id of the after trace (INTEGER or NULL).
  after_trace_id,
  -- Label of the after trace, NULL when unknown or since removed (TEXT).
  after_label,
  -- source_path of the before summary (TEXT or NULL).
  before_source,
  -- source_path of the after summary (TEXT or NULL).
  after_source,
  -- Steady-state median step time before, µs (REAL or NULL).
  median_before,
  -- Steady-state median step time after, µs (REAL or NULL).
  median_after,
  -- Steady-state median step-time regression, percent (REAL or NULL).
  median_regression_pct,
  -- Steady-state p90 step-time regression, percent (REAL or NULL).
  p90_regression_pct,
  -- Compute share after − before (REAL or NULL).
  compute_share_delta,
  -- Communication share after − before (REAL or NULL).
  communication_share_delta,
  -- Host share after − before (REAL or NULL).
  host_share_delta,
  -- Stall share after − before (REAL or NULL).
  stall_share_delta,
  -- Other share after − before (REAL or NULL).
  other_share_delta,
  -- provenance_checks.status of the comparison: pass, warn or fail (TEXT or NULL).
  provenance_status,
  -- Number of failure messages (INTEGER).
  n_failures,
  -- Number of warning messages (INTEGER).
  n_warnings,
  -- Failure messages, JSON array (TEXT or NULL).
  failures,
  -- Warning messages, JSON array (TEXT or NULL).
  warnings,
  -- The whole record, compact JSON with sorted keys (TEXT).
  record_json
) AS
SELECT r.record_id, r.created_at,
       json_extract(r.rj, '$.recorded_at_utc'),
       r.lbl, r.st, r.origin, r.series,
       r.before_trace_id, tb.label, r.after_trace_id, ta.label,
       json_extract(r.rj, '$.before.source_path'),
       json_extract(r.rj, '$.after.source_path'),
       json_extract(r.rj, '$.assessment.comparison.step_time.steady_state_median_before'),
       json_extract(r.rj, '$.assessment.comparison.step_time.steady_state_median_after'),
       json_extract(r.rj, '$.assessment.metrics.steady_state_median_regression_pct'),
       json_extract(r.rj, '$.assessment.metrics.steady_state_p90_regression_pct'),
       json_extract(r.rj, '$.assessment.comparison.time_breakdown_share_delta.compute'),
       json_extract(r.rj, '$.assessment.comparison.time_breakdown_share_delta.communication'),
       json_extract(r.rj, '$.assessment.comparison.time_breakdown_share_delta.host'),
       json_extract(r.rj, '$.assessment.comparison.time_breakdown_share_delta.stall'),
       json_extract(r.rj, '$.assessment.comparison.time_breakdown_share_delta.other'),
       json_extract(r.rj, '$.assessment.comparison.provenance_checks.status'),
       coalesce(json_array_length(r.rj, '$.assessment.failures'), 0),
       coalesce(json_array_length(r.rj, '$.assessment.warnings'), 0),
       json_extract(r.rj, '$.assessment.failures'),
       json_extract(r.rj, '$.assessment.warnings'),
       r.record_json
FROM (SELECT *, CASE WHEN json_valid(record_json) THEN record_json ELSE
         replace(replace(replace(replace(replace(replace(replace(replace(replace(record_json,
           ': -Infinity', ': -9e999'), '[-Infinity', '[-9e999'), ', -Infinity', ', -9e999'),
           ': Infinity', ': 9e999'), '[Infinity', '[9e999'), ', Infinity', ', 9e999'),
           ': NaN', ': null'), '[NaN', '[null'), ', NaN', ', null') END AS rj,
         -- label and status as record_json holds them: the same text as the
         -- columns, but record_json is ASCII (\u escapes), while an older
         -- build could fill the columns with bytes that are not UTF-8
         -- (unreadable for Python's sqlite3 and others); the columns only
         -- for a record with NaN or Infinity.  The expression of the index
         -- profsum_history_record_jlabel (sql/schema.sql): written the
         -- same way, a filter on label reads that label's records only
         CASE WHEN NOT json_valid(record_json) THEN label
              WHEN json_type(record_json, '$.label') = 'text'
              THEN json_extract(record_json, '$.label') END AS lbl,
         CASE WHEN NOT json_valid(record_json) THEN status
              WHEN json_type(record_json, '$.assessment') = 'object'
               AND json_type(record_json, '$.assessment.status') = 'text'
              THEN json_extract(record_json, '$.assessment.status') END AS st
      FROM profsum_history_record) AS r
LEFT JOIN profsum_trace AS tb ON tb.trace_id = r.before_trace_id
LEFT JOIN profsum_trace AS ta ON ta.trace_id = r.after_trace_id;
