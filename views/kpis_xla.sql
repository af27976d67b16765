-- profsum_kpis_xla: the KPIs that need device limits.  Same columns as
-- profsum_kpis; profsum_kpis adds these rows to its own.
--   memory_bandwidth  per device: Σ bytes_accessed of its ops / (its busy time × its peak
--                     memory bandwidth) over the capture (profsum_utilization, step NULL):
--                     good > 0.60, warning 0.40-0.60, bad < 0.40.  A row only where the bytes and
--                     the bandwidth are both known; else profsum_kpis keeps its 'unavailable' row.
--                     A device whose ops carry bytes_accessed but say 0 in all while it was busy
--                     (XLA counts no bytes for a custom call, such as a Pallas or Mosaic kernel,
--                     that declares none) has an 'unavailable' row, value NULL: its bandwidth use
--                     is unknown, not 0.
-- Requires: profsum_trace, profsum_agg_xla_util, profsum_agg_xla_device.
CREATE VIEW IF NOT EXISTS main.profsum_kpis_xla(
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
WITH bw AS (
  SELECT u.trace_id, u.device, u.bytes_accessed AS bytes, u.busy_us, d.peak_mem_bw_bytes_per_s AS pb,
         u.bytes_accessed * 1e6 / u.busy_us / d.peak_mem_bw_bytes_per_s AS v
  FROM profsum_agg_xla_util AS u
  JOIN profsum_agg_xla_device AS d USING (trace_id, device)
  WHERE u.step IS NULL AND u.bytes_accessed IS NOT NULL AND u.busy_us > 0 AND d.peak_mem_bw_bytes_per_s > 0
)
SELECT bw.trace_id, t.label, 'kpi', 'memory_bandwidth', bw.device,
       CASE WHEN bw.bytes > 0 THEN bw.v END, 'fraction',
       CASE WHEN NOT bw.bytes > 0 THEN 'unavailable' WHEN bw.v > 0.60 THEN 'good' WHEN bw.v >= 0.40 THEN 'warning'
            ELSE 'bad' END,
       CASE WHEN NOT bw.bytes > 0
            THEN printf('%s: its ops say they accessed 0 bytes in all (bytes_accessed) while it was busy %.3f ms: '
                        || 'XLA counts no bytes for a custom call (a Pallas or Mosaic kernel) that declares none, '
                        || 'so its bandwidth use is unknown (profsum_roofline, status zero_bytes)',
                        bw.device, bw.busy_us / 1e3)
            ELSE printf('%s moved %s%% of its peak memory bandwidth (%.4g GB/s) while busy%s', bw.device,
                        profsum_format_near(100.0 * bw.v, 1, 5), bw.pb / 1e9,
                        CASE WHEN bw.v < 0.40 THEN ': ops are latency- or compute-bound, or bytes_accessed is undercounted'
                             ELSE '' END) END
FROM bw JOIN profsum_trace AS t USING (trace_id);
