-- profsum_regions: hierarchical_regions of profile_summary.v1 — device-op
-- exclusive time rolled up along the JAX name stack (args.tf_op, wrappers
-- like jit(...) removed) or along `=>`/`::` in op names; a region with a
-- single child of the same time is pruned.
-- Requires: profsum_trace, profsum_agg_region.
CREATE VIEW IF NOT EXISTS main.profsum_regions(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based rank: inclusive desc, exclusive desc, path; ties of exact sums as the reference's sums order them (INTEGER).
  rank,
  -- Parts joined by '=>', e.g. train_step=>block_0=>matmul (TEXT).
  path,
  -- Number of parts (INTEGER).
  depth,
  -- Events at or below the region (INTEGER).
  count,
  -- Σ exclusive time of events at or below, µs (REAL).
  inclusive_duration,
  -- Σ exclusive time of events exactly here, µs (REAL).
  exclusive_duration,
  -- inclusive / the total of its root region (REAL).
  inclusive_share_of_total,
  -- exclusive / the total of its root region (REAL).
  exclusive_share_of_total,
  -- 1 when the row is within the summary's limit, max(hot_op_limit, 500) (INTEGER).
  in_summary
) AS
-- One trace's rows are ranked and shared in windows partitioned by the
-- trace (a query for one label or trace_id reads that trace's regions
-- only): tot is the listed depth-1 region of the row's root path, else the
-- largest listed depth-1 region of the trace, else 0.
SELECT trace_id, label, rank, path, depth, count, inclusive_duration, exclusive_duration,
       CASE WHEN tot > 0 THEN inclusive_duration / tot ELSE 0.0 END,
       CASE WHEN tot > 0 THEN exclusive_duration / tot ELSE 0.0 END,
       rank < lim
FROM (SELECT y.*,
             coalesce(root_tot, max(CASE WHEN depth = 1 AND rank < lim THEN max(0.0, inclusive_duration) END)
                                  OVER (PARTITION BY trace_id, label), 0.0) AS tot
      FROM (SELECT x.*,
                   max(CASE WHEN depth = 1 AND rank < lim THEN max(0.0, inclusive_duration) END)
                     OVER (PARTITION BY trace_id, label, root) AS root_tot
            FROM (SELECT r.*, t.label, max(json_extract(t.options, '$.hot_op_limit'), 500) AS lim,
                         CASE WHEN instr(r.path, '=>') > 0 THEN substr(r.path, 1, instr(r.path, '=>') - 1)
                              ELSE r.path END AS root,
                         row_number() OVER (PARTITION BY r.trace_id, t.label
                                            ORDER BY coalesce(r.inclusive_ref, r.inclusive_duration) DESC,
                                            coalesce(r.exclusive_ref, r.exclusive_duration) DESC, r.path) - 1 AS rank
                  FROM profsum_agg_region AS r JOIN profsum_trace AS t USING (trace_id)) AS x) AS y)
ORDER BY trace_id, rank;
