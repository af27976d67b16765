-- profsum_step_stats: step_time.all_steps and step_time.steady_state_steps
-- of profile_summary.v1 (DurationStats, quantiles by linear interpolation).
-- Requires: profsum_trace, profsum_sec_step_stats.
CREATE VIEW IF NOT EXISTS main.profsum_step_stats(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 'all' or 'steady' (steps numbered >= warmup_steps) (TEXT).
  scope,
  -- Number of steps (INTEGER).
  count,
  -- Mean step duration, µs (REAL or NULL when count = 0).
  mean,
  -- Median, µs (REAL or NULL).
  median,
  -- 90th percentile, µs (REAL or NULL).
  p90,
  -- Shortest step, µs (REAL or NULL).
  min,
  -- Longest step, µs (REAL or NULL).
  max
) AS
SELECT s.trace_id, t.label, s.scope, s.count, s.mean, s.median, s.p90, s.min, s.max
FROM profsum_sec_step_stats AS s JOIN profsum_trace AS t USING (trace_id);
