-- profsum_trend: the steady-state step time of every run of a series
-- (profsum_import option "series") in import order, with the change from
-- the previous run of the same series.  Runs are ordered by imported_at
-- (then trace_id); traces without a series are not listed.  The change in
-- percent is ((this − previous) / previous) × 100, NULL when the previous
-- value is NULL or not positive (the §3 pct rule).
-- Requires: profsum_trace, profsum_sec_step_stats, profsum_series_runs.
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
-- The run order comes from profsum_series_runs (the index profsum_trace(
-- series, imported_at, trace_id), read for the rows a query asks for: one
-- label or trace_id counts that run's place in its series, one series reads
-- that series in order); the step statistics are read for the rows
-- returned and their previous runs only.
SELECT t.trace_id, t.label, r.series, t.imported_at, r.run_index, r.runs_back,
       s.count, s.median, s.p90,
       r.prev_trace_id, p.label, ps.median, s.median - ps.median,
       CASE WHEN ps.median > 0 THEN ((s.median - ps.median) / ps.median) * 100.0 END,
       ps.p90, s.p90 - ps.p90,
       CASE WHEN ps.p90 > 0 THEN ((s.p90 - ps.p90) / ps.p90) * 100.0 END
FROM profsum_series_runs AS r
JOIN profsum_trace AS t ON t.trace_id = r.trace_id
LEFT JOIN profsum_sec_step_stats AS s ON s.trace_id = t.trace_id AND s.scope = 'steady'
LEFT JOIN profsum_trace AS p ON p.trace_id = r.prev_trace_id
LEFT JOIN profsum_sec_step_stats AS ps ON ps.trace_id = r.prev_trace_id AND ps.scope = 'steady';

-- profsum_series_runs: the run order of every series (ext/history/series.c),
-- one in each database that holds profsum's tables, reading that
-- database's profsum_trace through the index profsum_trace(series,
-- imported_at, trace_id) for the runs a query asks for (WHERE trace_id = ?
-- or series = ?).  Runs are ordered by imported_at, then trace_id; traces
-- without a series are not listed.  profsum_trend and profsum_op_growth
-- take their run order from it (a view may name a table made after it:
-- names are resolved when the view is read).
-- Columns:
--   series: the series name (profsum_import option "series")
--   trace_id: the run (profsum_trace.trace_id)
--   run_index: its position in the series, 1 = the oldest run
--   runs_back: its position counted from the newest, 1 = the newest run
--   prev_trace_id: the trace_id of the run before it in the series, NULL for the first
CREATE VIRTUAL TABLE IF NOT EXISTS main.profsum_series_runs USING profsum_series_runs;
