-- profsum_comm_ops: communication_ops of profile_summary.v1 — device ops with
-- a communication name, grouped by collective, by exclusive time.
-- Requires: profsum_trace, profsum_agg_comm.
CREATE VIEW IF NOT EXISTS main.profsum_comm_ops(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based rank: total desc, collective; ties of exact sums as the reference's sums order them (INTEGER).
  rank,
  -- all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute, async-collective, send-recv or other-collective (TEXT).
  collective,
  -- Occurrences (INTEGER).
  count,
  -- Σ exclusive time, µs (REAL).
  total_duration,
  -- total_duration / count, µs (REAL).
  avg_duration
) AS
SELECT c.trace_id, t.label,
       row_number() OVER (PARTITION BY c.trace_id, t.label ORDER BY coalesce(c.total_ref, c.total_duration) DESC, c.collective) - 1,
       c.collective, c.count, c.total_duration, c.total_duration / c.count
FROM profsum_agg_comm AS c JOIN profsum_trace AS t USING (trace_id);
