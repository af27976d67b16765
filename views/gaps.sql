-- profsum_gaps: gap_before_ops of profile_summary.v1 — idle time on device-op
-- tracks before an op.  The op right after a gap is the marker; when it is
-- a cheap marker op (iota, constant, copy-start…) the gap is charged to the
-- payload op that follows it.
-- Requires: profsum_trace, profsum_agg_gap.
CREATE VIEW IF NOT EXISTS main.profsum_gaps(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based rank: total desc, max desc, name (INTEGER).
  rank,
  -- Payload op the gap is charged to (TEXT).
  name,
  -- Same as name (TEXT).
  payload_op,
  -- Most frequent first op after the gap (TEXT).
  marker_op,
  -- Gaps (INTEGER).
  count,
  -- Σ gap, µs (REAL).
  total_gap_duration,
  -- Longest gap, µs (REAL).
  max_gap_duration,
  -- total / count, µs (REAL).
  avg_gap_duration,
  -- 1 when the row is within the summary's limit, max(hot_op_limit, 500) (INTEGER).
  in_summary
) AS
SELECT trace_id, label, rank, name, name, marker_op, count, total_gap_duration, max_gap_duration,
       total_gap_duration / count, rank < max(json_extract(options, '$.hot_op_limit'), 500)
FROM (SELECT g.*, t.label, t.options,
             row_number() OVER (PARTITION BY g.trace_id, t.label ORDER BY g.total_gap_duration DESC,
                                g.max_gap_duration DESC, g.name) - 1 AS rank
      FROM profsum_agg_gap AS g JOIN profsum_trace AS t USING (trace_id));
