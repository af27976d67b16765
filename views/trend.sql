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
-- The run order comes from a window over profsum_trace's (series,
-- imported_at, trace_id) index alone; the step statistics are read for the
-- rows returned and their previous runs only.  A query for one series
-- (WHERE series = ?) orders that series only.
SELECT t.trace_id, t.label, r.series, t.imported_at, r.run_index, c.n_runs - r.run_index + 1,
       s.count, s.median, s.p90,
       r.prev_trace_id, p.label, ps.median, s.median - ps.median,
       CASE WHEN ps.median > 0 THEN ((s.median - ps.median) / ps.median) * 100.0 END,
       ps.p90, s.p90 - ps.p90,
       CASE WHEN ps.p90 > 0 THEN ((s.p90 - ps.p90) / ps.p90) * 100.0 END
FROM (SELECT trace_id, series,
             row_number() OVER w AS run_index,
             lag(trace_id) OVER w AS prev_trace_id
      FROM profsum_trace
      WHERE series IS NOT NULL
      WINDOW w AS (PARTITION BY series ORDER BY imported_at, trace_id)) AS r
JOIN (SELECT series, count(*) AS n_runs FROM profsum_trace WHERE series IS NOT NULL GROUP BY series) AS c
  ON c.series = r.series
JOIN profsum_trace AS t ON t.trace_id = r.trace_id
LEFT JOIN profsum_sec_step_stats AS s ON s.trace_id = t.trace_id AND s.scope = 'steady'
LEFT JOIN profsum_trace AS p ON p.trace_id = r.prev_trace_id
LEFT JOIN profsum_sec_step_stats AS ps ON ps.trace_id = r.prev_trace_id AND ps.scope = 'steady';
