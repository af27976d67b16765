-- profsum_kpis_wall: the KPIs of step wall time.  Same columns as
-- profsum_kpis; profsum_kpis adds these rows to its own.
--   host_wait  device idle time (no device op running) as a share of the
--              steady steps' wall time, all devices, each instant of a
--              device once where steps overlap (profsum_step_wall less the
--              facts step_overlap_*; all
--              steps when every step is a warmup step): good < 10 %,
--              warning 10-20 %, bad > 20 %; 'unavailable' (value NULL) for a
--              trace without steps measured on a device, or imported from
--              a v1 summary file (no device timeline).  Unlike
--              host_overhead (host events' share of the per-track total),
--              it is a share of wall-clock time.
-- Requires: profsum_trace, profsum_agg_step_wall, profsum_agg_fact.
CREATE VIEW IF NOT EXISTS main.profsum_kpis_wall(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 'kpi' or 'pattern' (TEXT).
  kind,
  -- KPI or pattern name (TEXT).
  kpi,
  -- Device (process name) for per-device rows, NULL for the whole trace (TEXT).
  device,
  -- The value in `unit` (REAL or NULL when unavailable).
  value,
  -- 'fraction', 'ms' or 's' (TEXT).
  unit,
  -- good, warning, bad, unavailable, detected or not_detected (TEXT).
  band,
  -- One line saying what the value means (TEXT).
  explanation
) AS
WITH
-- one trace at a time (a label's query reads only its rows): the steps
-- measured, grouped per step and device as profsum_step_wall does, read
-- from the base table in one pass each; st = 1 for a steady step.  The
-- steady steps when there are any, else every (warmup) step.  old = 1 for a
-- trace an older profsum imported (no profsum_build): it may have steps but
-- no step wall time stored, so its explanation says to re-import it; v1 = 1
-- for a trace imported from a v1 summary file, which carries none.
p AS (
  SELECT t.trace_id, t.label, o.warm, o.old, o.v1,
         -- what the rows count more than each device's union where steps
         -- overlap (ps; 0: they do not)
         coalesce((SELECT CAST(round(f.value * 1e6) AS INTEGER) FROM profsum_agg_fact AS f
                   WHERE f.trace_id = t.trace_id AND f.name = 'step_overlap_wall'), 0) AS ow,
         coalesce((SELECT CAST(round(f.value * 1e6) AS INTEGER) FROM profsum_agg_fact AS f
                   WHERE f.trace_id = t.trace_id AND f.name = 'step_overlap_idle'), 0) AS oi
  FROM profsum_trace AS t
  JOIN (SELECT trace_id, json_extract(options, '$.warmup_steps') AS warm,
               profsum_build IS NULL AND summary_json IS NULL AS old,
               summary_json IS NOT NULL AS v1 FROM profsum_trace) AS o USING (trace_id)
),
w AS (
  SELECT p.trace_id, p.label, p.old, p.v1,
         (SELECT 1 - max(1 - coalesce(a.step < p.warm, 0)) FROM profsum_agg_step_wall AS a
          WHERE a.trace_id = p.trace_id) AS only_warmup,
         -- the steps counted one row per step (st depends on the step
         -- alone), without count(DISTINCT), which opens a temporary b-tree
         (SELECT CASE WHEN max(g.st) = 1 THEN sum(g.st) ELSE count(*) END
          FROM (SELECT a.step, 1 - coalesce(a.step < p.warm, 0) AS st FROM profsum_agg_step_wall AS a
                WHERE a.trace_id = p.trace_id GROUP BY a.step) AS g) AS n_steps,
         -- (in whole picoseconds, added as integers: the share is their
         -- correctly rounded quotient, so that exactly 20 % is 0.2)
         -- (less what overlapping steps count twice, p.ow and p.oi: each
         -- instant of a device once)
         (SELECT CASE WHEN max(g.st) = 1
                      THEN CASE WHEN sum(CASE WHEN g.st = 1 THEN g.wall END) - p.ow > 0
                                THEN CAST(sum(CASE WHEN g.st = 1 THEN g.idle END) - p.oi AS REAL)
                                     / (sum(CASE WHEN g.st = 1 THEN g.wall END) - p.ow) END
                      ELSE CASE WHEN sum(g.wall) - p.ow > 0
                                THEN CAST(sum(g.idle) - p.oi AS REAL) / (sum(g.wall) - p.ow) END END
          FROM (SELECT 1 - coalesce(a.step < p.warm, 0) AS st, sum(CAST(round(a.wall_us * 1e6) AS INTEGER)) AS wall,
                       sum(CAST(round(a.idle_us * 1e6) AS INTEGER)) AS idle
                FROM profsum_agg_step_wall AS a WHERE a.trace_id = p.trace_id
                GROUP BY a.step, a.device) AS g) AS v
  FROM p
)
SELECT w.trace_id, w.label, 'kpi', 'host_wait', NULL, w.v, 'fraction',
       CASE WHEN w.v IS NULL THEN 'unavailable' WHEN w.v < 0.10 THEN 'good'
            WHEN w.v <= 0.20 THEN 'warning' ELSE 'bad' END,
       CASE WHEN w.v IS NULL AND w.old
            THEN 'no step wall time stored for this trace (imported by an older profsum): re-import it'
            WHEN w.v IS NULL AND w.v1
            THEN 'imported from a profile_summary.v1 document, which carries no per-device step wall time: '
                 || 'import the trace for this figure'
            WHEN w.v IS NULL THEN 'no steps measured on a device: step wall time is not split'
            ELSE printf('devices run no op during %s%% of the wall time of %d %s%s%s%s', profsum_format_near(100.0 * w.v, 1, 5),
                        w.n_steps, CASE WHEN w.only_warmup THEN 'warmup ' ELSE 'steady ' END,
                        CASE WHEN w.n_steps = 1 THEN 'step' ELSE 'steps' END,
                        CASE WHEN w.only_warmup THEN ' (the capture has no steady step; warmup steps '
                                                     || 'can carry compilation and first-run costs)' ELSE '' END,
                        CASE WHEN w.v >= 0.10 THEN ': they wait on the host (dispatch, input, synchronization)'
                             ELSE '' END) END
FROM w;
