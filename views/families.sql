-- profsum_families: semantic_families of profile_summary.v1 — the hot ops
-- grouped by what they do (attention, matmul-like fusion, copy, collective…).
-- Requires: profsum_trace, profsum_sec_family.
CREATE VIEW IF NOT EXISTS main.profsum_families(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based rank: exclusive desc, family (INTEGER).
  rank,
  -- Family name, e.g. attention_flash, collective, other (TEXT).
  family,
  -- Σ op occurrences (INTEGER).
  count,
  -- Σ duration, µs (REAL).
  total_duration,
  -- Σ exclusive time, µs (REAL).
  exclusive_duration,
  -- exclusive / max(breakdown total, Σ hot-op exclusive) (REAL).
  share_of_total,
  -- total_duration / count, µs (REAL).
  avg_duration,
  -- exclusive_duration / count, µs (REAL).
  avg_exclusive_duration,
  -- Highest-ranked op of the family (TEXT).
  example_op,
  -- Most common shape signature, weighted by count (TEXT or NULL).
  dominant_shape_signature,
  -- Σ flop proxy × count (REAL or NULL).
  flop_proxy_total,
  -- exclusive / flop_proxy_total, µs per unit (REAL or NULL).
  time_per_flop_proxy
) AS
SELECT f.trace_id, t.label, f.rank, f.family, f.count, f.total_duration, f.exclusive_duration,
       f.share_of_total, f.avg_duration, f.avg_exclusive_duration, f.example_op,
       f.dominant_shape_signature, f.flop_proxy_total, f.time_per_flop_proxy
FROM profsum_sec_family AS f JOIN profsum_trace AS t USING (trace_id);
