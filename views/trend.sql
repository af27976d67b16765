-- profsum_trend: the steady-state step time of every run of a series
-- (profsum_import option "series") in import order, with the change from
-- the previous run of the same series.  Runs are ordered by imported_at
-- (then trace_id); traces without a series are not listed.  The change in
-- percent is ((this − previous) / previous) × 100, NULL when the previous
-- value is NULL or not positive (the §3 pct rule).
-- Requires: profsum_trace, profsum_sec_step_stats.
CREATE VIEW IF NOT EXISTS main.profsum_trend(
  -- Trace id of this run (INTEGER).
  trace_id,
  -- Trace label of this run (TEXT).
  label,
  -- The series (TEXT).
  series,
  -- Import time of this run, ISO-8601 UTC (TEXT).
  imported_at,
  -- Position in the series, 1 = the oldest run (INTEGER).
  run_index,
  -- Position from the newest run, 1 = the newest (INTEGER).
  runs_back,
  -- Steady-state steps counted (INTEGER or NULL).
  steady_steps,
  -- Steady-state median step time, µs (REAL or NULL).
  median,
  -- Steady-state p90 step time, µs (REAL or NULL).
  p90,
  -- Trace id of the previous run of the series (INTEGER or NULL for the first).
  prev_trace_id,
  -- Label of the previous run (TEXT or NULL).
  prev_label,
  -- Median of the previous run, µs (REAL or NULL).
  prev_median,
  -- median − prev_median, µs (REAL or NULL).
  median_delta,
  -- Change of the median in percent (REAL or NULL).
  median_change_pct,
  -- p90 of the previous run, µs (REAL or NULL).
  prev_p90,
  -- p90 − prev_p90, µs (REAL or NULL).
  p90_delta,
  -- Change of the p90 in percent (REAL or NULL).
  p90_change_pct
) AS
WITH runs AS (
  SELECT t.trace_id, t.label, t.series, t.imported_at, s.count AS steady_steps, s.median, s.p90,
         row_number() OVER w AS run_index,
         row_number() OVER (PARTITION BY t.series ORDER BY t.imported_at DESC, t.trace_id DESC) AS runs_back,
         lag(t.trace_id) OVER w AS prev_trace_id,
         lag(t.label) OVER w AS prev_label,
         lag(s.median) OVER w AS prev_median,
         lag(s.p90) OVER w AS prev_p90
  FROM profsum_trace AS t
  LEFT JOIN profsum_sec_step_stats AS s ON s.trace_id = t.trace_id AND s.scope = 'steady'
  WHERE t.series IS NOT NULL
  WINDOW w AS (PARTITION BY t.series ORDER BY t.imported_at, t.trace_id)
)
SELECT trace_id, label, series, imported_at, run_index, runs_back, steady_steps, median, p90,
       prev_trace_id, prev_label, prev_median, median - prev_median,
       CASE WHEN prev_median > 0 THEN ((median - prev_median) / prev_median) * 100.0 END,
       prev_p90, p90 - prev_p90,
       CASE WHEN prev_p90 > 0 THEN ((p90 - prev_p90) / prev_p90) * 100.0 END
FROM runs;
