-- profsum_hot_ops: hot_ops of profile_summary.v1 — device ops (XLA Ops /
-- Stream threads of /device: processes) by exclusive time, the first
-- hot_op_limit of them.
-- Requires: profsum_trace, profsum_sec_hot_op.
CREATE VIEW IF NOT EXISTS main.profsum_hot_ops(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based rank: exclusive desc, total desc, name (INTEGER).
  rank,
  -- Op name as in the trace, e.g. fusion.12 (TEXT).
  name,
  -- Name without leading % and trailing .N, e.g. fusion (TEXT).
  canonical_name,
  -- stall, communication or compute (TEXT).
  category,
  -- Occurrences (INTEGER).
  count,
  -- Σ duration, µs (REAL).
  total_duration,
  -- Σ exclusive (self) time, µs (REAL).
  exclusive_duration,
  -- total_duration / count, µs (REAL).
  avg_duration,
  -- Most common shape signature from args.long_name, e.g. 8,128|128,512 (TEXT or NULL).
  shape_signature,
  -- Most common args.source (TEXT or NULL).
  source_file,
  -- Most common args.tf_op, the JAX name stack (TEXT or NULL).
  tf_op_path,
  -- Relative work estimate per invocation from the shapes, not FLOPs (REAL or NULL).
  flop_proxy_per_invocation
) AS
SELECT h.trace_id, t.label, h.rank, h.name, h.canonical_name, h.category, h.count,
       h.total_duration, h.exclusive_duration, h.avg_duration, h.shape_signature,
       h.source_file, h.tf_op_path, h.flop_proxy_per_invocation
FROM profsum_sec_hot_op AS h JOIN profsum_trace AS t USING (trace_id);
