-- profsum_kpis_xla: the KPIs that need device limits.  Same columns as
-- profsum_kpis; profsum_kpis adds these rows to its own.
--   memory_bandwidth  per device: Σ bytes_accessed of its ops / (its busy time × its peak
--                     memory bandwidth) over the capture (profsum_utilization, step NULL):
--                     good > 0.60, warning 0.40-0.60, bad < 0.40.  A row only where the bytes and
--                     the bandwidth are both known; else profsum_kpis keeps its 'unavailable' row.
--                     A device whose ops carry bytes_accessed but say 0 in all while it was busy
--                     (XLA counts no bytes for a custom call, such as a Pallas or Mosaic kernel,
--                     that declares none) has an 'unavailable' row, value NULL: its bandwidth use
--                     is unknown, not 0.  So has a device whose figure is 0.60 or under while
--                     ops without a byte count (0 bytes, or no bytes_accessed stat) take 10 % or
--                     more of its op time (their self time on its XLA Ops and stream lines, in
--                     profsum_agg_xla_op): the figure is then only a lower bound, which cannot
--                     tell a bad or warning band; above 0.60 the band holds, and the explanation
--                     says the figure is a lower bound whenever such ops ran.
-- Requires: profsum_trace, profsum_agg_xla_util, profsum_agg_xla_device, profsum_agg_xla_op.
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
         u.bytes_accessed * 1e6 / u.busy_us / d.peak_mem_bw_bytes_per_s AS v,
         -- the share of its op time (self time on its XLA Ops and stream lines, which
         -- do not overlap as an Async XLA Ops line does) in ops whose bytes are not
         -- known: that say 0 bytes, or have no bytes_accessed stat
         coalesce((SELECT sum(CASE WHEN coalesce(x.bytes_accessed, 0) = 0 THEN coalesce(x.self_us, x.time_us) ELSE 0 END)
                          / sum(coalesce(x.self_us, x.time_us))
                   FROM profsum_agg_xla_op AS x
                   WHERE x.trace_id = u.trace_id AND x.device = u.device AND x.line_kind IN ('xla_ops', 'stream')),
                  0) AS zs
  FROM profsum_agg_xla_util AS u
  JOIN profsum_agg_xla_device AS d USING (trace_id, device)
  WHERE u.step IS NULL AND u.bytes_accessed IS NOT NULL AND u.busy_us > 0 AND d.peak_mem_bw_bytes_per_s > 0
),
k AS (
  SELECT bw.*, NOT bw.bytes > 0 AS zero, bw.bytes > 0 AND NOT bw.v > 0.60 AND bw.zs >= 0.10 AS partial FROM bw
)
SELECT k.trace_id, t.label, 'kpi', 'memory_bandwidth', k.device,
       CASE WHEN NOT (k.zero OR k.partial) THEN k.v END, 'fraction',
       CASE WHEN k.zero OR k.partial THEN 'unavailable' WHEN k.v > 0.60 THEN 'good' WHEN k.v >= 0.40 THEN 'warning'
            ELSE 'bad' END,
       CASE WHEN k.zero
            THEN printf('%s: its ops say they accessed 0 bytes in all (bytes_accessed) while it was busy %.3f ms: '
                        || 'XLA counts no bytes for a custom call (a Pallas or Mosaic kernel) that declares none, '
                        || 'so its bandwidth use is unknown (profsum_roofline, status zero_bytes)',
                        k.device, k.busy_us / 1e3)
            WHEN k.partial
            THEN printf('%s moved at least %s%% of its peak memory bandwidth (%.4g GB/s) while busy, but ops that '
                        || 'take %s%% of its op time say they accessed 0 bytes (custom calls such as Pallas or Mosaic '
                        || 'kernels that declare none) or carry no bytes_accessed: the true figure may be higher, '
                        || 'by an unknown amount '
                        || '(profsum_roofline, status zero_bytes)',
                        k.device, profsum_format_near(100.0 * k.v, 1, 5), k.pb / 1e9,
                        profsum_format_near(100.0 * k.zs, 1, 5))
            ELSE printf('%s moved %s%s%% of its peak memory bandwidth (%.4g GB/s) while busy%s%s', k.device,
                        CASE WHEN k.zs > 0 THEN 'at least ' ELSE '' END, profsum_format_near(100.0 * k.v, 1, 5),
                        k.pb / 1e9,
                        CASE WHEN k.zs > 0 THEN printf(' (ops that take %s%% of its op time have no byte count)',
                                                       profsum_format_near(100.0 * k.zs, 1, 5))
                             ELSE '' END,
                        CASE WHEN k.v < 0.40 THEN ': ops are latency- or compute-bound, or bytes_accessed is undercounted'
                             ELSE '' END) END
FROM k JOIN profsum_trace AS t USING (trace_id);
