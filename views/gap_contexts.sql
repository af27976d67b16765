-- profsum_gap_contexts: gap_region_contexts of profile_summary.v1 — each
-- gap's payload op placed in model terms: its region path (first 4 parts of
-- the name stack; for ops without one, the op's most frequent path), copies
-- labelled copy(<path>).
-- Requires: profsum_trace, profsum_agg_gap_context.
CREATE VIEW IF NOT EXISTS main.profsum_gap_contexts(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based rank: total desc, op_name, region_path (INTEGER).
  rank,
  -- Payload op name (TEXT).
  op_name,
  -- Region path, e.g. copy(model.params.blocks[0].attn.w_k) (TEXT).
  region_path,
  -- Gaps (INTEGER).
  count,
  -- Σ gap, µs (REAL).
  total_gap_duration,
  -- total / count, µs (REAL).
  avg_gap_duration,
  -- 1 when the row is within the summary's limit, max(hot_op_limit, 500) (INTEGER).
  in_summary
) AS
SELECT trace_id, label, rank, op_name, region_path, count, total_gap_duration,
       total_gap_duration / count, rank < max(json_extract(options, '$.hot_op_limit'), 500)
FROM (SELECT c.*, t.label, t.options,
             row_number() OVER (PARTITION BY c.trace_id, t.label ORDER BY c.total_gap_duration DESC,
                                c.op_name, c.region_path) - 1 AS rank
      FROM profsum_agg_gap_context AS c JOIN profsum_trace AS t USING (trace_id));
