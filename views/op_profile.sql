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
-- the three levels in one grouping over the trace's rows, and the
-- window partitioned by trace: a query for one label reads that trace's
-- rows only
WITH
g AS (
  SELECT x.trace_id, t.label, lv.level,
         CASE lv.level WHEN 'hlo_op' THEN CASE WHEN x.hlo_op IS NOT NULL THEN x.hlo_op ELSE x.name END
                       WHEN 'hlo_category' THEN coalesce(x.hlo_category, '(none)')
                       ELSE coalesce(x.hlo_module, '(none)') END AS name,
         min(CASE lv.level
               WHEN 'hlo_op' THEN CASE WHEN x.hlo_op IS NOT NULL THEN 'hlo_op' WHEN x.line_kind <> 'stream' THEN 'event_name'
                                       ELSE 'unattributed' END
               WHEN 'hlo_category' THEN CASE WHEN x.hlo_category IS NULL THEN 'unattributed' ELSE 'hlo_category' END
               ELSE CASE WHEN x.hlo_module IS NULL THEN 'unattributed' ELSE 'hlo_module' END END) AS attribution,
         CASE WHEN lv.level = 'hlo_op' AND count(DISTINCT x.hlo_module) = 1 AND count(x.hlo_module) = count(*)
              THEN max(x.hlo_module) END AS hlo_module,
         CASE WHEN lv.level = 'hlo_op' AND count(DISTINCT x.framework_op) = 1 AND count(x.framework_op) = count(*)
              THEN max(x.framework_op) END AS framework_op,
         count(DISTINCT x.device) AS devices,
         count(DISTINCT CASE WHEN x.line_kind = 'stream' THEN x.name END) AS kernels,
         sum(x.count) AS count, sum(x.time_us) AS total_us,
         CASE WHEN count(x.self_us) = count(*) THEN sum(x.self_us) END AS self_us,
         (SELECT sum(b.time_us) FROM profsum_agg_xla_op AS b WHERE b.trace_id = x.trace_id) AS total
  FROM profsum_trace AS t JOIN profsum_agg_xla_op AS x USING (trace_id)
  JOIN (SELECT 'hlo_op' AS level UNION ALL SELECT 'hlo_category' UNION ALL SELECT 'hlo_module') AS lv
  GROUP BY x.trace_id, t.label, lv.level, 4
)
SELECT * FROM (
  SELECT g.trace_id, g.label, g.level,
         row_number() OVER (PARTITION BY g.trace_id, g.label, g.level ORDER BY g.total_us DESC, g.name) - 1,
         g.name,
         CASE WHEN length(g.name) > 80 THEN substr(g.name, 1, 79) || '…' ELSE g.name END,
         g.attribution, g.hlo_module, g.framework_op, g.devices, g.kernels, g.count, g.total_us, g.self_us,
         CASE WHEN g.total > 0 THEN g.total_us / g.total END,
         CASE WHEN g.total > 0 THEN g.self_us / g.total END,
         'ok'
  FROM g)
UNION ALL
SELECT t.trace_id, t.label, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       CASE WHEN t.summary_json IS NOT NULL THEN 'v1_summary' ELSE 'reimport_needed' END
FROM profsum_trace AS t
WHERE NOT EXISTS (SELECT 1 FROM profsum_agg_xla_trace AS x WHERE x.trace_id = t.trace_id);
