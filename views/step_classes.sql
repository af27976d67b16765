-- profsum_step_classes: step_time.classes — steady steps split into
-- light/heavy by 2-means on log durations, or one 'typical' class.
-- Requires: profsum_trace, profsum_sec_step_class.
CREATE VIEW IF NOT EXISTS main.profsum_step_classes(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based order of the class in the summary (INTEGER).
  rank,
  -- 'typical', 'light' or 'heavy' (TEXT).
  name,
  -- Steps in the class (INTEGER).
  count,
  -- count / steady steps (REAL).
  fraction_of_steady,
  -- Mean duration of the class, µs (REAL).
  mean,
  -- Median, µs (REAL).
  median,
  -- 90th percentile, µs (REAL).
  p90,
  -- Shortest, µs (REAL).
  min,
  -- Longest, µs (REAL).
  max,
  -- Step whose duration is closest to the class median (INTEGER).
  representative_step,
  -- Its duration, µs (REAL).
  representative_duration,
  -- Most common gap between heavy steps, when regular (INTEGER or NULL).
  periodicity
) AS
SELECT c.trace_id, t.label, c.rank, c.name, c.count, c.fraction_of_steady, c.mean, c.median,
       c.p90, c.min, c.max, c.representative_step, c.representative_duration, c.periodicity
FROM profsum_sec_step_class AS c JOIN profsum_trace AS t USING (trace_id);
