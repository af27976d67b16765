-- profsum_kpis_wall: the KPIs of step wall time.  Same columns as
-- profsum_kpis; profsum_kpis adds these rows to its own.
--   host_wait  device idle time (no device op running) as a share of the
--              steady steps' wall time, all devices (profsum_step_wall; all
--              steps when every step is a warmup step): good < 10 %,
--              warning 10-20 %, bad > 20 %; 'unavailable' (value NULL) for a
--              trace without steps measured on a device.  Unlike
--              host_overhead (host events' share of the per-track total),
--              it is a share of wall-clock time.
-- Requires: profsum_trace, profsum_step_wall.
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
pick AS (
  SELECT trace_id, min(is_warmup) AS only_warmup FROM profsum_step_wall GROUP BY trace_id
),
w AS (
  SELECT s.trace_id, count(DISTINCT s.step) AS n_steps,
         CASE WHEN sum(s.wall_us) > 0 THEN sum(s.idle_us) / sum(s.wall_us) END AS v
  FROM profsum_step_wall AS s JOIN pick AS p USING (trace_id)
  WHERE s.is_warmup = p.only_warmup
  GROUP BY s.trace_id
)
SELECT t.trace_id, t.label, 'kpi', 'host_wait', NULL, w.v, 'fraction',
       CASE WHEN w.v IS NULL THEN 'unavailable' WHEN w.v < 0.10 THEN 'good'
            WHEN w.v <= 0.20 THEN 'warning' ELSE 'bad' END,
       CASE WHEN w.v IS NULL THEN 'no steps measured on a device: step wall time is not split'
            ELSE printf('devices run no op during %.1f%% of the wall time of %d %ssteps%s', 100.0 * w.v,
                        w.n_steps, CASE WHEN p.only_warmup THEN '' ELSE 'steady ' END,
                        CASE WHEN w.v >= 0.10 THEN ': they wait on the host (dispatch, input, synchronization)'
                             ELSE '' END) END
FROM profsum_trace AS t LEFT JOIN w USING (trace_id) LEFT JOIN pick AS p USING (trace_id);
