-- profsum_host_steps: one row per host and step of a session imported with
-- its hosts (docs/sessions.md): where the step sits on the session's time
-- axis and how the host's devices spent it (the mean over its devices that
-- ran device ops, those profsum_hosts.num_devices counts).
-- Requires: profsum_session, profsum_agg_host, profsum_trace,
-- profsum_agg_step_span, profsum_agg_device_step, profsum_agg_device.
CREATE VIEW IF NOT EXISTS main.profsum_host_steps(
  -- Session id (INTEGER).
  session_id,
  -- Session label (TEXT).
  session_label,
  -- Step number (INTEGER).
  step,
  -- Host name in the session (TEXT).
  host,
  -- The host's trace id (INTEGER).
  trace_id,
  -- The step's start on the session's time axis: µs after the session's origin (REAL).
  start_us,
  -- First start to last end of the step over the host's devices, µs (REAL).
  duration_us,
  -- Device-op time inside the step (union per device), mean over the host's devices, µs (REAL).
  busy_us,
  -- Collective time inside the step (union per device), mean over the host's devices, µs (REAL).
  collective_us,
  -- duration_us - busy_us, µs (REAL).
  idle_us
) AS
WITH sp AS (
  SELECT trace_id, step, min(start_us) AS s, min(start_ps) AS s_ps, max(start_ps + dur_ps) AS e_ps
  FROM profsum_agg_step_span GROUP BY trace_id, step
), ds AS (          -- the devices that ran ops (profsum_hosts.num_devices): an idle core with
                     -- a Steps line only would lower the host's mean
  SELECT d.trace_id, d.step, avg(d.busy_us) AS busy, avg(d.collective_us) AS coll
  FROM profsum_agg_device_step AS d
  WHERE EXISTS (SELECT 1 FROM profsum_agg_device AS a WHERE a.trace_id = d.trace_id AND a.device = d.device)
  GROUP BY d.trace_id, d.step
)
SELECT h.session_id, s.label, sp.step, h.host, h.trace_id, sp.s + h.to_session_us,
       (sp.e_ps - sp.s_ps) / 1e6, ds.busy, ds.coll, (sp.e_ps - sp.s_ps) / 1e6 - ds.busy
FROM profsum_agg_host AS h
JOIN profsum_session AS s ON s.session_id = h.session_id
JOIN sp ON sp.trace_id = h.trace_id
LEFT JOIN ds ON ds.trace_id = sp.trace_id AND ds.step = sp.step;
