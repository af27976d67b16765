-- profsum_host_steps: one row per host and step of a session imported with
-- its hosts (docs/sessions.md): where the step sits on the session's time
-- axis and how the host's devices spent it (the mean over its devices).
-- Requires: profsum_session, profsum_agg_host, profsum_trace,
-- profsum_agg_step_span, profsum_agg_device_step.
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
), ds AS (
  SELECT trace_id, step, avg(busy_us) AS busy, avg(collective_us) AS coll
  FROM profsum_agg_device_step GROUP BY trace_id, step
)
SELECT h.session_id, s.label, sp.step, h.host, h.trace_id, sp.s + h.to_session_us,
       (sp.e_ps - sp.s_ps) / 1e6, ds.busy, ds.coll, (sp.e_ps - sp.s_ps) / 1e6 - ds.busy
FROM profsum_agg_host AS h
JOIN profsum_session AS s ON s.session_id = h.session_id
JOIN sp ON sp.trace_id = h.trace_id
LEFT JOIN ds ON ds.trace_id = sp.trace_id AND ds.step = sp.step;
