-- profsum_op_profile: device time by the names the compiler gave: per HLO
-- op, HLO category and HLO module, over every device-op event of the trace
-- (all devices).  On GPU each kernel counts for the HLO op and module of
-- its hlo_op / hlo_module stats (args); a kernel without them (a runtime
-- copy, a library kernel) is its own row under its kernel name with
-- attribution 'unattributed'.  On TPU an XLA Ops event is the HLO op.  Self
-- time is the duration less that of the events nested in it on its line.
-- Shares are of the device time of all device-op events (each level sums
-- to 1).  A trace imported without these tables has one row with NULL
-- level and its status.
-- Requires: profsum_trace, profsum_agg_xla_trace, profsum_agg_xla_op.
CREATE VIEW IF NOT EXISTS main.profsum_op_profile(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- hlo_op, hlo_category or hlo_module (TEXT).
  level,
  -- 0-based rank within the level: total_us desc, name (INTEGER).
  rank,
  -- The full name: HLO op, category or module; '(none)' for events without the stat (TEXT).
  name,
  -- name cut to 80 characters (79 and '…') for reports (TEXT).
  display_name,
  -- hlo_op: the hlo_op stat; event_name: the XLA Ops event's name (TPU); unattributed: a kernel without HLO stats, or '(none)'; hlo_category / hlo_module: from that stat (TEXT).
  attribution,
  -- The HLO module of an hlo_op row when it is one module, else NULL (TEXT).
  hlo_module,
  -- The framework op (the name stat / arg, e.g. jit(forward)/conv_general_dilated) of an hlo_op row when it is one, else NULL (TEXT).
  framework_op,
  -- Devices it ran on (INTEGER).
  devices,
  -- Distinct GPU kernels attributed to it (INTEGER).
  kernels,
  -- Events (INTEGER).
  count,
  -- Σ device time, µs (REAL).
  total_us,
  -- Σ self device time, µs; NULL when a line was not in time order or nested over 4,096 deep (REAL).
  self_us,
  -- total_us / Σ device time of the trace's device ops, 0-1 (REAL).
  share,
  -- self_us / Σ device time of the trace's device ops, 0-1 (REAL).
  self_share,
  -- ok, reimport_needed, v1_summary (TEXT).
  status
) AS
WITH
base AS (
  SELECT trace_id, device, line_kind, name AS ev_name, hlo_op, hlo_module, hlo_category, framework_op,
         count, time_us, self_us
  FROM profsum_agg_xla_op
),
lv AS (
  SELECT trace_id, 'hlo_op' AS level,
         CASE WHEN hlo_op IS NOT NULL THEN hlo_op ELSE ev_name END AS name,
         CASE WHEN hlo_op IS NOT NULL THEN 'hlo_op' WHEN line_kind <> 'stream' THEN 'event_name'
              ELSE 'unattributed' END AS attribution,
         hlo_module, framework_op, device, line_kind, ev_name, count, time_us, self_us
  FROM base
  UNION ALL
  SELECT trace_id, 'hlo_category', coalesce(hlo_category, '(none)'),
         CASE WHEN hlo_category IS NULL THEN 'unattributed' ELSE 'hlo_category' END,
         NULL, NULL, device, line_kind, ev_name, count, time_us, self_us
  FROM base
  UNION ALL
  SELECT trace_id, 'hlo_module', coalesce(hlo_module, '(none)'),
         CASE WHEN hlo_module IS NULL THEN 'unattributed' ELSE 'hlo_module' END,
         NULL, NULL, device, line_kind, ev_name, count, time_us, self_us
  FROM base
),
g AS (
  SELECT trace_id, level, name, min(attribution) AS attribution,
         CASE WHEN count(DISTINCT hlo_module) = 1 AND count(hlo_module) = count(*) THEN max(hlo_module) END AS hlo_module,
         CASE WHEN count(DISTINCT framework_op) = 1 AND count(framework_op) = count(*) THEN max(framework_op) END AS framework_op,
         count(DISTINCT device) AS devices,
         count(DISTINCT CASE WHEN line_kind = 'stream' THEN ev_name END) AS kernels,
         sum(count) AS count, sum(time_us) AS total_us,
         CASE WHEN count(self_us) = count(*) THEN sum(self_us) END AS self_us
  FROM lv GROUP BY trace_id, level, name
),
tot AS (SELECT trace_id, sum(time_us) AS total FROM base GROUP BY trace_id)
SELECT g.trace_id, t.label, g.level,
       row_number() OVER (PARTITION BY g.trace_id, g.level ORDER BY g.total_us DESC, g.name) - 1,
       g.name,
       CASE WHEN length(g.name) > 80 THEN substr(g.name, 1, 79) || '…' ELSE g.name END,
       g.attribution, g.hlo_module, g.framework_op, g.devices, g.kernels, g.count, g.total_us, g.self_us,
       CASE WHEN tot.total > 0 THEN g.total_us / tot.total END,
       CASE WHEN tot.total > 0 THEN g.self_us / tot.total END,
       'ok'
FROM g JOIN tot USING (trace_id) JOIN profsum_trace AS t USING (trace_id)
UNION ALL
SELECT t.trace_id, t.label, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       CASE WHEN t.summary_json IS NOT NULL THEN 'v1_summary' ELSE 'reimport_needed' END
FROM profsum_trace AS t
WHERE NOT EXISTS (SELECT 1 FROM profsum_agg_xla_trace AS x WHERE x.trace_id = t.trace_id);
