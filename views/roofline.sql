-- profsum_roofline: each op and each HLO category of a device on the
-- roofline: its FLOPs and bytes over its device time against the device's
-- peaks (profsum_devices).  Level 'op': the hlo_op stat (arg), else the
-- event's shown name (on GPU the kernel name); level 'hlo_category': the
-- hlo_category stat, '(none)' without it.  FLOPs are the flops stat, else
-- model_flops (trace JSON never has flops).  A row whose ops carry no
-- FLOPs or bytes stats (JAX writes them on TPU; GPU captures lack them) has
-- NULL rates and status saying what is missing; a trace imported without
-- these tables has one row with NULL level and its status.  Formulas:
-- docs/roofline.md.
-- Requires: profsum_trace, profsum_agg_xla_trace, profsum_agg_xla_op, profsum_agg_xla_device.
CREATE VIEW IF NOT EXISTS main.profsum_roofline(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- op or hlo_category (TEXT).
  level,
  -- The op (hlo_op, else the event name) or the HLO category (TEXT).
  name,
  -- Device (TEXT).
  device,
  -- Events (INTEGER).
  count,
  -- Σ event duration on the device, µs (REAL).
  device_time_us,
  -- Σ flops stat; NULL when no event had it (REAL).
  flops,
  -- Σ model_flops; NULL when no event had it (REAL).
  model_flops,
  -- Σ bytes_accessed; NULL when no event had it (INTEGER).
  bytes_accessed,
  -- Arithmetic intensity: FLOPs (flops, else model_flops) per byte accessed; NULL when bytes_accessed is 0 (status zero_bytes) (REAL).
  intensity,
  -- FLOPs / device time, per second (REAL).
  achieved_flops_per_s,
  -- bytes_accessed / device time, per second (REAL).
  achieved_bytes_per_s,
  -- The device's peak FLOP/s (REAL).
  peak_flops_per_s,
  -- The device's peak memory bandwidth, bytes per second (REAL).
  peak_mem_bw_bytes_per_s,
  -- achieved_flops_per_s / peak_flops_per_s, 0-1 (REAL).
  flops_fraction,
  -- achieved_bytes_per_s / peak_mem_bw_bytes_per_s, 0 or more: bytes_accessed counts on-chip traffic too, so it can be above 1 (REAL).
  bw_fraction,
  -- Ridge point: peak FLOP/s / peak bandwidth, FLOPs per byte (REAL).
  ridge_intensity,
  -- compute (intensity >= ridge, or bytes_accessed 0 with FLOPs > 0), memory (below), NULL when an operand is unknown or FLOPs and bytes are both 0 (TEXT).
  bound,
  -- ok, no_flops_or_bytes, no_flops, no_bytes, no_device_limits, zero_bytes, reimport_needed, v1_summary (TEXT).
  status
) AS
WITH
-- both levels in one grouping over the trace's rows: a query for one
-- label reaches it and reads that trace's rows only
g AS (
  SELECT x.trace_id, t.label, lv.level,
         CASE lv.level WHEN 'op' THEN coalesce(x.hlo_op, x.name) ELSE coalesce(x.hlo_category, '(none)') END AS name,
         x.device, sum(x.count) AS count, sum(x.time_us) AS t, sum(x.flops) AS flops,
         sum(x.model_flops) AS mf, sum(x.bytes_accessed) AS bytes
  FROM profsum_trace AS t JOIN profsum_agg_xla_op AS x USING (trace_id)
  JOIN (SELECT 'op' AS level UNION ALL SELECT 'hlo_category') AS lv
  GROUP BY x.trace_id, t.label, lv.level, 4, x.device
),
r AS (
  SELECT g.*, coalesce(g.flops, g.mf) AS fl,
         (SELECT d.peak_flops_per_s FROM profsum_agg_xla_device AS d
          WHERE d.trace_id = g.trace_id AND d.device = g.device) AS pf,
         (SELECT d.peak_mem_bw_bytes_per_s FROM profsum_agg_xla_device AS d
          WHERE d.trace_id = g.trace_id AND d.device = g.device) AS pb
  FROM g
)
SELECT r.trace_id, r.label, r.level, r.name, r.device, r.count, r.t, r.flops, r.mf, r.bytes,
       CASE WHEN r.fl IS NOT NULL AND r.bytes > 0 THEN r.fl / r.bytes END,
       CASE WHEN r.t > 0 THEN r.fl * 1e6 / r.t END,
       CASE WHEN r.t > 0 THEN r.bytes * 1e6 / r.t END,
       r.pf, r.pb,
       CASE WHEN r.t > 0 AND r.pf > 0 THEN r.fl * 1e6 / r.t / r.pf END,
       CASE WHEN r.t > 0 AND r.pb > 0 THEN r.bytes * 1e6 / r.t / r.pb END,
       CASE WHEN r.pf > 0 AND r.pb > 0 THEN r.pf / r.pb END,
       -- every operand known, the peaks positive, else NULL (a NULL
       -- comparison is neither true nor false: it must not fall through to
       -- 'memory'); FLOPs over zero bytes are past any ridge: compute (no
       -- FLOPs and no bytes: NULL)
       CASE WHEN r.fl IS NOT NULL AND r.bytes >= 0 AND r.pf > 0 AND r.pb > 0
            THEN CASE WHEN r.bytes = 0 THEN CASE WHEN r.fl > 0 THEN 'compute' END
                      WHEN r.fl / r.bytes >= r.pf / r.pb THEN 'compute' ELSE 'memory' END END,
       CASE WHEN r.fl IS NULL AND r.bytes IS NULL THEN 'no_flops_or_bytes'
            WHEN r.fl IS NULL THEN 'no_flops' WHEN r.bytes IS NULL THEN 'no_bytes'
            WHEN r.pf IS NULL OR r.pb IS NULL THEN 'no_device_limits'
            WHEN r.bytes = 0 THEN 'zero_bytes' ELSE 'ok' END
FROM r
UNION ALL
SELECT t.trace_id, t.label, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL,
       CASE WHEN t.summary_json IS NOT NULL THEN 'v1_summary' ELSE 'reimport_needed' END
FROM profsum_trace AS t
WHERE NOT EXISTS (SELECT 1 FROM profsum_agg_xla_trace AS x WHERE x.trace_id = t.trace_id);
