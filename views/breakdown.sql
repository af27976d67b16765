-- profsum_breakdown: time_breakdown in both modes.  'exclusive_per_track'
-- sums the exclusive time of every event (Steps threads excluded) into
-- its category, over all tracks (the total can exceed wall time);
-- 'exclusive_global' sweeps one device timeline from the first to the last
-- compute op (communication > compute > uncovered = stall).
-- Requires: profsum_trace, profsum_agg_breakdown.
CREATE VIEW IF NOT EXISTS main.profsum_breakdown(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 'exclusive_per_track' or 'exclusive_global' (TEXT).
  mode,
  -- duration_basis of the mode in profile_summary.v1 (TEXT).
  duration_basis,
  -- compute, communication, host, stall or other (TEXT).
  category,
  -- Time in the category, µs (REAL).
  total_duration,
  -- total_duration / the mode's total, 0.0 when the total is 0 (REAL).
  share_of_total,
  -- The mode's total, µs (REAL).
  mode_total,
  -- 1 for the mode the summary was imported with (INTEGER).
  is_summary_mode
) AS
SELECT b.trace_id, t.label, b.mode,
       CASE b.mode WHEN 'exclusive_global' THEN 'exclusive_duration_global_timeline'
                   ELSE 'exclusive_duration_per_track' END,
       b.category, b.duration,
       CASE WHEN tot.duration > 0 THEN b.duration / tot.duration ELSE 0.0 END,
       tot.duration, b.mode = json_extract(t.options, '$.breakdown_mode')
FROM profsum_agg_breakdown AS b
JOIN profsum_trace AS t USING (trace_id)
JOIN profsum_agg_breakdown AS tot
  ON tot.trace_id = b.trace_id AND tot.mode = b.mode AND tot.category = 'total'
WHERE b.category <> 'total';
