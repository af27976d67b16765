-- profsum_step_wall: each step's wall time on each device, every instant
-- counted once: collective (a communication op runs) over transfer (a
-- host/device transfer op runs) over compute (any other device op runs);
-- idle where no device op runs.  compute_us + collective_us + transfer_us +
-- idle_us = wall_us.  A device is a /device: process with a device-op
-- line (XLA Ops, Async XLA Ops, Stream #...) or a Steps line of its own
-- (no device-op line: idle through its steps).  Its own Steps line gives
-- its steps, else the host's 'train' events.  The spans of one step
-- number on one device are one row, measured over their union.  No rows
-- for a trace without steps or without a device-op line.  See
-- docs/advice.md.
-- Requires: profsum_trace, profsum_agg_step_wall.
CREATE VIEW IF NOT EXISTS main.profsum_step_wall(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- Step number (INTEGER).
  step,
  -- Device (process name) measured (TEXT).
  device,
  -- 1 when the step number is below warmup_steps (INTEGER).
  is_warmup,
  -- The step's start, µs on the clock of trace_events.ts, which is in ns: ts = start_us × 1000 (REAL).
  start_us,
  -- The step's wall-clock duration, µs (REAL).
  wall_us,
  -- Time only compute ops cover, µs (REAL).
  compute_us,
  -- Time a communication op covers, µs (REAL).
  collective_us,
  -- Time a transfer op and no communication op covers, µs (REAL).
  transfer_us,
  -- Time no device op covers, µs (REAL).
  idle_us
) AS
SELECT w.trace_id, t.label, w.step, w.device,
       coalesce(w.step < json_extract(t.options, '$.warmup_steps'), 0),
       min(w.start_us), sum(w.wall_us), sum(w.compute_us), sum(w.collective_us),
       sum(w.transfer_us), sum(w.idle_us)
FROM profsum_agg_step_wall AS w JOIN profsum_trace AS t USING (trace_id)
GROUP BY w.trace_id, t.label, w.step, w.device;
