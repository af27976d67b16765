-- profsum_devices: one row per distinct /device: plane of an XPlane (with or
-- without events), or /device: process of a trace JSON, with what the file
-- says of the device and its limits.  Peaks come from the plane's stats
-- (peak_teraflops_per_second, peak_hbm_bw_gigabytes_per_second, else
-- memory_bandwidth), else from the import option device_peaks (by device
-- name, else "*"), else NULL: no constant is guessed.  Trace JSON carries no
-- device stats: its rows have NULL limits unless the option gives them.  A
-- stat outside its bounds (a peak must be finite and at least 1 per second
-- once converted) is left out, with a device_stat_out_of_range or
-- device_stat_unreadable diagnostic; the next plane of the same name, or
-- the option, gives it instead.  A
-- trace imported by a profsum without these tables, or from a v1 summary
-- file, has one row with NULL device and a status saying so.
-- Requires: profsum_trace, profsum_agg_xla_trace, profsum_agg_xla_device.
CREATE VIEW IF NOT EXISTS main.profsum_devices(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- Plane or process name, e.g. /device:GPU:0; the device of profsum_kpis (TEXT).
  device,
  -- TPU, GPU or CUSTOM (NULL: another /device: kind) (TEXT).
  kind,
  -- device_vendor stat, e.g. Nvidia, AMD (TEXT).
  vendor,
  -- device_type_string stat, else NULL (TEXT).
  model,
  -- compute_cap_major.compute_cap_minor, else NULL (TEXT).
  compute_capability,
  -- core_count stat: SMs or compute units; NULL unless from 1 to below 2^63 (INTEGER).
  core_count,
  -- clock_rate stat × 1000: the stat is in kHz; NULL unless from 1 to below 2^63 Hz (INTEGER).
  clock_hz,
  -- memory_size stat, bytes; NULL unless from 1 to below 2^63 (INTEGER).
  memory_bytes,
  -- Peak FLOP/s: peak_teraflops_per_second × 1e12, else the option, else NULL (REAL).
  peak_flops_per_s,
  -- Peak memory bandwidth, bytes/s: peak_hbm_bw_gigabytes_per_second × 1e9, else memory_bandwidth, else the option (REAL).
  peak_mem_bw_bytes_per_s,
  -- Where the peaks come from: plane_stats, options, plane_stats+options, or NULL when none is known (TEXT).
  peak_source,
  -- 1 when the plane (process) has events, 0 when it is only declared (INTEGER).
  has_events,
  -- ok; reimport_needed (imported by a profsum that did not read devices); v1_summary (imported from a summary file: no events) (TEXT).
  status
) AS
SELECT d.trace_id, t.label, d.device, d.kind, d.vendor, d.model, d.compute_capability, d.core_count,
       d.clock_hz, d.memory_bytes, d.peak_flops_per_s, d.peak_mem_bw_bytes_per_s, d.peak_source,
       d.has_events, 'ok'
FROM profsum_agg_xla_device AS d JOIN profsum_trace AS t USING (trace_id)
UNION ALL
SELECT t.trace_id, t.label, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       CASE WHEN t.summary_json IS NOT NULL THEN 'v1_summary' ELSE 'reimport_needed' END
FROM profsum_trace AS t
WHERE NOT EXISTS (SELECT 1 FROM profsum_agg_xla_trace AS x WHERE x.trace_id = t.trace_id);
