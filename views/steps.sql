-- profsum_steps: one row per step number with its duration (the mean over
-- the devices that ran it), from the TPU `Steps` thread, or when there is
-- none from host `train` events carrying args.step_num (GPU).
-- Requires: profsum_trace, profsum_agg_step.
CREATE VIEW IF NOT EXISTS main.profsum_steps(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- Step number (INTEGER).
  step,
  -- Step duration: mean over its events, µs (REAL).
  duration,
  -- Events averaged, usually one per device (INTEGER).
  n_events,
  -- 1 when the step number is below warmup_steps (INTEGER).
  is_warmup
) AS
SELECT s.trace_id, t.label, s.step, s.duration, s.n_events,
       s.step < json_extract(t.options, '$.warmup_steps')
FROM profsum_agg_step AS s JOIN profsum_trace AS t USING (trace_id);
