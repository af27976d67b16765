-- profsum_utilization: per device and step, how busy the device was and
-- how close to its peaks: model FLOPs utilization (MFU) and HBM bandwidth
-- utilization, over the busy time and over the step's wall time.  Steps
-- are chosen per device (its own Steps line, else the host's 'train'
-- events, also when other devices have a Steps line: step_source); the row with step NULL is the whole capture, from the
-- device's first op to its last (busy and span as profsum_agg_device has
-- them).  An op's FLOPs and bytes are spread over the steps it overlaps, in
-- proportion of its time in each (as its busy time is).  MFU uses model_flops, else flops, per op.  NULL where FLOPs,
-- bytes or a peak are unknown, with status saying which (bytes that are 0 while
-- the device was busy are unknown too: XLA counts none for a custom call, such
-- as a Pallas or Mosaic kernel, that declares none); a trace imported
-- without these tables has one row with NULL device and its status.
-- Formulas: docs/roofline.md.
-- Requires: profsum_trace, profsum_agg_xla_trace, profsum_agg_xla_util, profsum_agg_xla_device.
CREATE VIEW IF NOT EXISTS main.profsum_utilization(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- Device (TEXT).
  device,
  -- Step number; NULL: the whole capture (INTEGER).
  step,
  -- The step's span (first to last device op for step NULL), µs (REAL).
  wall_us,
  -- Union of the device's op intervals within it, µs (REAL).
  busy_us,
  -- busy_us / wall_us, 0-1 (REAL).
  busy_share,
  -- Σ over its ops of model_flops, else flops, each op's share by its time in it (REAL).
  flops,
  -- Σ bytes_accessed of its ops, each op's share by its time in it, rounded to the nearest integer; hbm_util_busy/_wall use the unrounded share (INTEGER).
  bytes_accessed,
  -- flops / (busy_us × peak FLOP/s), 0-1 (REAL).
  mfu_busy,
  -- flops / (wall_us × peak FLOP/s), 0-1 (REAL).
  mfu_wall,
  -- bytes_accessed / (busy_us × peak bandwidth), 0 or more: bytes_accessed counts on-chip traffic too, so it can be above 1; NULL when the ops say 0 bytes while busy (status zero_bytes) (REAL).
  hbm_util_busy,
  -- bytes_accessed / (wall_us × peak bandwidth), 0 or more: bytes_accessed counts on-chip traffic too, so it can be above 1; NULL when the ops say 0 bytes while busy (status zero_bytes) (REAL).
  hbm_util_wall,
  -- device_steps (its Steps line), host_steps (host train events), NULL for the capture row (TEXT).
  step_source,
  -- 1; 0 when the step's figures are prorated: a line with more than 1,024 idle gaps (or ops with FLOPs) keeps them merged, and the step's start or end fell inside a merged span (INTEGER).
  exact,
  -- ok, no_flops_or_bytes, no_flops, no_bytes, no_device_limits, zero_bytes (the ops say 0 bytes while the device was busy: hbm_util_* NULL; with no FLOPs either, no_flops_or_bytes), reimport_needed, v1_summary (TEXT).
  status
) AS
SELECT u.trace_id, t.label, u.device, u.step, u.wall_us, u.busy_us,
       CASE WHEN u.wall_us > 0 THEN u.busy_us / u.wall_us END,
       -- a step's bytes are kept unrounded (REAL where an op's share by
       -- time is not whole): shown rounded, the rates use them as kept
       u.mfu_flops,
       CASE WHEN typeof(u.bytes_accessed) = 'real' AND abs(u.bytes_accessed) < 9.0e18
            THEN CAST(round(u.bytes_accessed) AS INTEGER) ELSE u.bytes_accessed END,
       CASE WHEN u.busy_us > 0 AND d.peak_flops_per_s > 0 THEN u.mfu_flops * 1e6 / u.busy_us / d.peak_flops_per_s END,
       CASE WHEN u.wall_us > 0 AND d.peak_flops_per_s > 0 THEN u.mfu_flops * 1e6 / u.wall_us / d.peak_flops_per_s END,
       CASE WHEN u.busy_us > 0 AND d.peak_mem_bw_bytes_per_s > 0 AND u.bytes_accessed > 0
            THEN u.bytes_accessed * 1e6 / u.busy_us / d.peak_mem_bw_bytes_per_s END,
       CASE WHEN u.wall_us > 0 AND d.peak_mem_bw_bytes_per_s > 0 AND NOT (u.bytes_accessed = 0 AND u.busy_us > 0)
            THEN u.bytes_accessed * 1e6 / u.wall_us / d.peak_mem_bw_bytes_per_s END,
       u.step_source, u.exact,
       CASE WHEN u.mfu_flops IS NULL AND (u.bytes_accessed IS NULL OR (u.bytes_accessed = 0 AND u.busy_us > 0))
            THEN 'no_flops_or_bytes'
            WHEN u.mfu_flops IS NULL THEN 'no_flops' WHEN u.bytes_accessed IS NULL THEN 'no_bytes'
            WHEN d.peak_flops_per_s IS NULL OR d.peak_mem_bw_bytes_per_s IS NULL THEN 'no_device_limits'
            WHEN u.bytes_accessed = 0 AND u.busy_us > 0 THEN 'zero_bytes'
            ELSE 'ok' END
FROM profsum_agg_xla_util AS u
JOIN profsum_trace AS t USING (trace_id)
LEFT JOIN profsum_agg_xla_device AS d USING (trace_id, device)
UNION ALL
SELECT t.trace_id, t.label, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       CASE WHEN t.summary_json IS NOT NULL THEN 'v1_summary' ELSE 'reimport_needed' END
FROM profsum_trace AS t
WHERE NOT EXISTS (SELECT 1 FROM profsum_agg_xla_trace AS x WHERE x.trace_id = t.trace_id);
