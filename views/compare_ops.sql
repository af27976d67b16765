-- profsum_compare_ops: per-op deltas of every compared pair (each record of
-- profsum_track / profsum_bundle names a before and an after trace): the
-- exclusive time of each device op before and after, as in the
-- regressed_ops / improved_ops of the comparison, but for all ops.
-- Requires: profsum_history_record, profsum_trace, profsum_agg_op.
CREATE VIEW IF NOT EXISTS main.profsum_compare_ops(
  -- The history record of the comparison (INTEGER).
  record_id,
  -- The record's label (TEXT or NULL).
  label,
  -- Label of the before trace (TEXT).
  before_label,
  -- Label of the after trace (TEXT).
  after_label,
  -- Op name (TEXT).
  name,
  -- Exclusive time before, µs; 0.0 when the op is absent before (REAL).
  before_exclusive,
  -- Exclusive time after, µs; 0.0 when the op is absent after (REAL).
  after_exclusive,
  -- after - before, µs: positive = slower (REAL).
  delta,
  -- delta / before * 100, NULL when the op is new (REAL).
  delta_pct
) AS
-- The ops are read for the pairs a query keeps: a filter on label reaches
-- the records through the index profsum_history_record_label, and each
-- pair's ops are the after trace's plus the before trace's that the after
-- trace lacks (as profsum_op_growth), in name order per record.
WITH pairs AS (
  SELECT r.record_id, r.label, r.before_trace_id AS b, r.after_trace_id AS a
  FROM profsum_history_record AS r
  WHERE r.before_trace_id IS NOT NULL AND r.after_trace_id IS NOT NULL
)
SELECT p.record_id, p.label, tb.label, ta.label, n.name,
       coalesce(ob.exclusive_duration, 0.0), coalesce(oa.exclusive_duration, 0.0),
       coalesce(oa.exclusive_duration, 0.0) - coalesce(ob.exclusive_duration, 0.0),
       CASE WHEN ob.exclusive_duration > 0
            THEN (coalesce(oa.exclusive_duration, 0.0) - ob.exclusive_duration) / ob.exclusive_duration * 100.0 END
FROM pairs AS p
JOIN profsum_trace AS tb ON tb.trace_id = p.b
JOIN profsum_trace AS ta ON ta.trace_id = p.a
JOIN (SELECT trace_id AS tid, name FROM profsum_agg_op) AS n ON n.tid IN (p.b, p.a)
LEFT JOIN profsum_agg_op AS ob ON ob.trace_id = p.b AND ob.name = n.name
LEFT JOIN profsum_agg_op AS oa ON oa.trace_id = p.a AND oa.name = n.name
-- an op of both traces once: from the after trace's rows
WHERE n.tid = p.a OR oa.trace_id IS NULL
ORDER BY p.record_id, n.name;
