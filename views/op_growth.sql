-- profsum_op_growth: how the exclusive time of every device op changed
-- between consecutive runs of a series (import order, as profsum_trend).
-- One row per (run, op) for every run that has a previous run in its
-- series, over the union of the ops of both runs (profsum_agg_op: all ops,
-- not only the hot-op top N; an op missing from a run counts 0 µs there;
-- for a trace imported from a profile_summary.v1 file only its hot ops are
-- known).  Definition of "grew most across the last N runs": the pairs of
-- the last N runs of a series are the rows with runs_back < N, and an op's
-- growth over them is sum(delta) (= its time in the newest run − its time
-- in the oldest of the N); growth_rank ranks the ops within one pair.
-- Rows in the order (trace_id, growth_rank).
-- Requires: profsum_trace, profsum_agg_op, profsum_agg_op_growth,
-- profsum_series_runs.
CREATE VIEW IF NOT EXISTS main.profsum_op_growth(
  -- Trace id of the later run of the pair (INTEGER).
  trace_id,
  -- Trace label of the later run (TEXT).
  label,
  -- The series (TEXT).
  series,
  -- Import time of the later run (TEXT).
  imported_at,
  -- Position of the later run from the newest run of the series, 1 = newest (INTEGER).
  runs_back,
  -- Trace id of the previous run (INTEGER).
  prev_trace_id,
  -- Label of the previous run (TEXT).
  prev_label,
  -- Op name (TEXT).
  name,
  -- Exclusive time in the previous run, µs, 0.0 when absent (REAL).
  before_exclusive,
  -- Exclusive time in the later run, µs, 0.0 when absent (REAL).
  after_exclusive,
  -- after_exclusive − before_exclusive, µs (REAL).
  delta,
  -- delta / before_exclusive × 100, NULL when before_exclusive is 0 (REAL).
  growth_pct,
  -- Rank within the pair by delta descending, then name; 1 = grew most (INTEGER).
  growth_rank
) AS
-- The pairs come from profsum_series_runs (the index profsum_trace(series,
-- imported_at, trace_id), read for the pairs a query asks for); a filter
-- on series, label, trace_id or runs_back reaches the pairs before their
-- ops are read, so the cost follows the rows returned.  growth_rank ranks
-- an op among every op of its pair, so a pair is read one of two ways:
--   stored   the pair's ranks in profsum_agg_op_growth, written for the
--            pair (trace_id, prev_trace_id) when the later run was
--            imported: one row per op, found by (trace_id, name), so a
--            filter on the op's name reads one row per pair;
--   ranked   a pair without such rows (a database made before them, the
--            pair changed since by a run inserted between the two or by a
--            removed run): every op of both runs joined and ranked by a
--            window partitioned by the pair's columns (which one trace_id
--            decides; a filter on them reaches the pairs first).
-- Both give the same rows: the stored ranks are this view's, written for
-- a pair of runs whose ops never change (trace ids are never reused).
-- The compound's arms may not hold a window themselves (SQLite pushes no
-- filter into a compound with one): the ranking is a subquery of its arm;
-- pairs is NOT MATERIALIZED for the same reason (both arms read it).
-- Its trace_id is the run order's, so that the ranked arm asks for the
-- stored rows of a pair before it reads the pair's traces.
WITH
pairs AS NOT MATERIALIZED (
  SELECT r.trace_id, t.label, r.series, t.imported_at, r.runs_back,
         r.prev_trace_id, p.label AS prev_label
  FROM profsum_series_runs AS r
  JOIN profsum_trace AS t ON t.trace_id = r.trace_id
  JOIN profsum_trace AS p ON p.trace_id = r.prev_trace_id
),
d AS (
  SELECT p.trace_id, p.label, p.series, p.imported_at, p.runs_back, p.prev_trace_id, p.prev_label, n.name,
         coalesce(b.exclusive_duration, 0.0) AS before_excl,
         coalesce(a.exclusive_duration, 0.0) AS after_excl
  FROM pairs AS p
  JOIN (SELECT trace_id AS tid, name FROM profsum_agg_op) AS n
    ON n.tid IN (p.trace_id, p.prev_trace_id)
  LEFT JOIN profsum_agg_op AS b ON b.trace_id = p.prev_trace_id AND b.name = n.name
  LEFT JOIN profsum_agg_op AS a ON a.trace_id = p.trace_id AND a.name = n.name
  -- an op of both runs once: from the later run's rows
  WHERE (n.tid = p.trace_id OR a.trace_id IS NULL)
    -- the pairs without stored ranks
    AND NOT EXISTS (SELECT 1 FROM profsum_agg_op_growth AS g
                    WHERE g.trace_id = p.trace_id AND g.prev_trace_id = p.prev_trace_id)
)
SELECT * FROM (
  SELECT trace_id, label, series, imported_at, runs_back, prev_trace_id, prev_label, name,
         before_excl, after_excl, after_excl - before_excl,
         CASE WHEN before_excl > 0 THEN ((after_excl - before_excl) / before_excl) * 100.0 END,
         row_number() OVER (PARTITION BY trace_id, label, series, imported_at, runs_back, prev_trace_id, prev_label
                            ORDER BY after_excl - before_excl DESC, name)
  FROM d)
UNION ALL
SELECT p.trace_id, p.label, p.series, p.imported_at, p.runs_back, p.prev_trace_id, p.prev_label, g.name,
       coalesce(b.exclusive_duration, 0.0), coalesce(a.exclusive_duration, 0.0),
       coalesce(a.exclusive_duration, 0.0) - coalesce(b.exclusive_duration, 0.0),
       CASE WHEN coalesce(b.exclusive_duration, 0.0) > 0
            THEN ((coalesce(a.exclusive_duration, 0.0) - coalesce(b.exclusive_duration, 0.0))
                  / coalesce(b.exclusive_duration, 0.0)) * 100.0 END,
       g.growth_rank
FROM pairs AS p
JOIN profsum_agg_op_growth AS g ON g.trace_id = p.trace_id AND g.prev_trace_id = p.prev_trace_id
LEFT JOIN profsum_agg_op AS b ON b.trace_id = p.prev_trace_id AND b.name = g.name
LEFT JOIN profsum_agg_op AS a ON a.trace_id = p.trace_id AND a.name = g.name
ORDER BY 1, 13;
