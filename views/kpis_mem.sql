-- profsum_kpis_mem: the KPIs of memory and kernels.  Same columns as profsum_kpis;
-- profsum_kpis adds these rows to its own (docs/memory.md).
--   memory_peak  per device: peak bytes in use / the device's memory_size
--                (profsum_memory.peak_share): good < 0.80, warning 0.80-0.90,
--                bad > 0.90; one 'unavailable' row (device NULL) when the trace
--                has no allocation events of a device allocator (PyTorch's
--                cuda:N and hip:N are, sized by the trace's deviceProperties); a device
--                without a size (memory_size, else the capacity its allocator's
--                events state) is 'unavailable' on its own row (device set).
--   occupancy    time-weighted mean of occupancy_pct / 100 over the kernels
--                (profsum_kernel_stats rows, longest total first) that make up
--                the first 90 % of kernel time, the one crossing 90 % included,
--                those without occupancy skipped: good >= 0.5, warning
--                0.25-0.5, bad < 0.25; 'unavailable' when none has occupancy.
--   A trace imported from a profile_summary.v1 document (no events, so no
--   memory or kernel data) has the 'unavailable' row of each, saying so.
-- Requires: profsum_trace, profsum_agg_memory, profsum_agg_kernel.
CREATE VIEW IF NOT EXISTS main.profsum_kpis_mem(
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
-- Each arm reads one trace's rows only (a query for one label reaches
-- every arm and reads that trace's rows through the tables' keys); arms
-- come in this order, each by trace.
WITH
-- The occupancy figures: a window query opens a temporary b-tree (SQLite
-- allocates its page cache, about 85 KB, each time), so they run only for
-- a trace that has kernel rows, and kern groups by trace so that each
-- figure is computed once per trace, not once per use below (a grouped
-- subquery is not merged into the query that reads it; a label's filter
-- still reaches it through the GROUP BY columns).
kern AS (
  SELECT t.trace_id, t.label,
         CASE WHEN EXISTS (SELECT 1 FROM profsum_agg_kernel AS a WHERE a.trace_id = t.trace_id) THEN
         (SELECT sum(k.occupancy_pct / 100.0 * k.d) / sum(k.d) FROM (
            SELECT occupancy_pct, total_duration_us AS d,
                   coalesce(sum(total_duration_us) OVER (PARTITION BY trace_id
                     ORDER BY total_duration_us DESC, kernel_name, hlo_op, block_dim, grid_dim,
                              registers_per_thread, static_shared_bytes, dynamic_shared_bytes
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before,
                   sum(total_duration_us) OVER (PARTITION BY trace_id) AS tot
            FROM profsum_agg_kernel AS a WHERE a.trace_id = t.trace_id) AS k
          WHERE k.before < 0.9 * k.tot AND k.occupancy_pct IS NOT NULL AND k.d > 0) END AS v,
         CASE WHEN EXISTS (SELECT 1 FROM profsum_agg_kernel AS a WHERE a.trace_id = t.trace_id) THEN
         (SELECT count(*) FROM (
            SELECT coalesce(sum(total_duration_us) OVER (PARTITION BY trace_id
                     ORDER BY total_duration_us DESC, kernel_name, hlo_op, block_dim, grid_dim,
                              registers_per_thread, static_shared_bytes, dynamic_shared_bytes
                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before,
                   sum(total_duration_us) OVER (PARTITION BY trace_id) AS tot
            FROM profsum_agg_kernel AS a WHERE a.trace_id = t.trace_id) AS k
          WHERE k.before < 0.9 * k.tot) ELSE 0 END AS n_top,
         (SELECT count(*) FROM profsum_agg_kernel AS a WHERE a.trace_id = t.trace_id) AS n_all,
         t.summary_json IS NOT NULL AS v1,
         -- (an import always stores a memory row, with the kernel rows:
         -- none, from an older profsum)
         NOT EXISTS (SELECT 1 FROM profsum_agg_memory AS a WHERE a.trace_id = t.trace_id) AS old
  FROM profsum_trace AS t
  GROUP BY t.trace_id, t.label
)
SELECT m.trace_id, t.label, 'kpi', 'memory_peak', m.device, m.v, 'fraction',
       CASE WHEN m.v IS NULL THEN 'unavailable' WHEN m.v < 0.80 THEN 'good' WHEN m.v <= 0.90 THEN 'warning' ELSE 'bad' END,
       CASE WHEN m.v IS NULL AND m.allocator GLOB '*:[0-9]*'
              THEN printf('allocator %s peaks at %d bytes in use, but the trace''s deviceProperties give no totalGlobalMem for %s',
                          m.allocator, m.peak_bytes, m.device)
            WHEN m.v IS NULL THEN printf('allocator %s peaks at %d bytes in use, but its device plane has no memory_size%s', m.allocator, m.peak_bytes,
                         CASE WHEN m.allocator GLOB '[0-9]*' AND NOT m.allocator GLOB '*[^0-9]*'
                              THEN ' and its events state no capacity'
                              ELSE ' (a BFC allocator''s bytes_available is what its own limit leaves, not the device''s memory)' END)
            ELSE printf('allocator %s peaks at %s%% of %s memory (%d of %d bytes)%s', m.allocator, profsum_format_near(100.0 * m.v, 1, 5), m.device,
                        m.peak_bytes, m.device_memory_bytes,
                        CASE WHEN m.v > 0.90 THEN ': close to out-of-memory; see profsum_memory.top_holders'
                             WHEN m.v >= 0.80 THEN ': little headroom left' ELSE '' END) END
FROM (SELECT trace_id, allocator, device, peak_bytes, device_memory_bytes,
             CASE WHEN device_memory_bytes > 0 THEN CAST(peak_bytes AS REAL) / device_memory_bytes END AS v
      FROM profsum_agg_memory WHERE status = 'ok' AND device IS NOT NULL) AS m
JOIN profsum_trace AS t USING (trace_id)
UNION ALL
SELECT t.trace_id, t.label, 'kpi', 'memory_peak', NULL, NULL, 'fraction', 'unavailable',
       CASE WHEN t.summary_json IS NOT NULL
         THEN 'imported from a profile_summary.v1 document, which carries no memory data: import the trace for memory figures'
       ELSE CASE (SELECT max(a.status) FROM profsum_agg_memory AS a WHERE a.trace_id = t.trace_id)
         WHEN 'not_in_trace_json' THEN 'the trace JSON holds no memory events: import JAX''s .xplane.pb for memory figures (PyTorch writes them with profile_memory=True)'
         WHEN 'no_allocation_events' THEN 'no usable allocation events (memory activity was not recorded, or every event was left out: profsum_diagnostic)'
         WHEN 'ok' THEN 'no allocator of a device (GPU_N_bfc, an index_on_host or device_ordinal naming a device plane, or PyTorch''s cuda:N or hip:N) in the allocation events'
         ELSE 'no memory figures stored (imported by a profsum without them: re-import)' END END
FROM profsum_trace AS t
WHERE NOT EXISTS (SELECT 1 FROM profsum_agg_memory AS a
                  WHERE a.trace_id = t.trace_id AND a.status = 'ok' AND a.device IS NOT NULL)
UNION ALL
SELECT trace_id, label, 'kpi', 'occupancy', NULL, v, 'fraction',
       CASE WHEN v IS NULL THEN 'unavailable' WHEN v >= 0.5 THEN 'good' WHEN v >= 0.25 THEN 'warning' ELSE 'bad' END,
       CASE WHEN v1 THEN 'imported from a profile_summary.v1 document, which carries no kernel data: import the '
                         || 'trace for occupancy'
            WHEN n_all = 0 AND old THEN 'no kernel figures stored (imported by a profsum without them: re-import)'
            WHEN n_all = 0 THEN 'no kernel with kernel_details in the trace (GPU captures only)'
            WHEN v IS NULL THEN 'none of the kernels making up 90% of kernel time has an occupancy (occ_pct absent or 0)'
            ELSE printf('time-weighted occupancy %s%% over the %d kernel rows making up 90%% of kernel time%s', profsum_format_near(100.0 * v, 1, 5), n_top,
                        CASE WHEN v < 0.25 THEN ': the GPU runs few warps at once; check registers, shared memory and block size'
                             WHEN v < 0.5 THEN ': moderate; registers or shared memory may limit it' ELSE '' END) END
FROM kern;
