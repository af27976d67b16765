-- profsum_advice: profsum's own advice, one row per problem found, the rows
-- with a share of the steps' wall time first, by that share, then the others
-- by time at stake.  Every KPI of profsum_kpis in band 'bad' and every pattern
-- 'detected' gives a row (several KPIs may feed one advice_id; the row names
-- the pattern when it is detected, else the KPI: kernel_duration,
-- device_utilization), and so do xprof's smart-suggestion thresholds where the
-- trace has the numbers: idle > 10 % of step time (host_wait), collectives
-- >= 30 % (collective_bound), transfers >= 30 % (large_transfers), compared in
-- whole picoseconds, compute (FLOP) utilization > 70 % with HBM < 50 %
-- (compute_bound) and HBM > 70 % with compute < 50 % (memory_bound), both over
-- the devices' busy time of the capture, both from the same devices: those
-- whose FLOPs, bytes and both peaks are known (profsum_agg_xla_util; bytes that are 0 in all while the
-- device was busy are not known, nor is a figure of 0.60 or under when ops without a byte count take
-- 10 % or more of its op time).  KPI -> advice_id: kernel_duration and
-- many_small_kernels -> many_small_kernels; device_utilization and
-- device_idle_gaps -> device_idle_gaps; memory_bandwidth (low use: bad)
-- -> low_memory_bandwidth;
-- occupancy -> low_occupancy; any other KPI -> its own name.  Shares are of
-- the steady steps' wall time (profsum_step_wall, each instant of a device
-- once where steps overlap: less the facts step_overlap_*), never above 1; an op is
-- called dominant only over 50 % (the one_op_dominating threshold).  The
-- reference's own advice stays in profsum_candidates.  See docs/advice.md.
-- Percentages in titles are written as in profsum_kpis (profsum_format_near:
-- more decimals where one would read as a threshold).
-- Requires: profsum_trace, profsum_kpis, profsum_agg_step_wall, profsum_agg_fact,
--   profsum_agg_device, profsum_hot_ops, profsum_breakdown, profsum_agg_xla_util,
--   profsum_agg_xla_device, profsum_agg_op, profsum_kpis_xla, profsum_agg_memory.
CREATE VIEW IF NOT EXISTS main.profsum_advice(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 1 = most time at stake (share_of_step, then time_at_stake_us; NULLs last; ties by advice_id; the float_nesting caveat last) (INTEGER).
  rank,
  -- Stable id: many_small_kernels, device_idle_gaps, large_transfers, one_op_dominating, host_wait, ... (TEXT).
  advice_id,
  -- 'kpi', 'pattern' or 'xprof_rule': what raised it (TEXT).
  source,
  -- The profsum_kpis.kpi it comes from, or NULL for an xprof rule on step wall time (TEXT).
  kpi,
  -- One line saying what was found, with its figure (TEXT).
  title,
  -- JSON array of {name, value, unit}: the numbers behind it (TEXT).
  evidence,
  -- JSON array of things to try (TEXT).
  fixes,
  -- Time at stake, µs summed over the devices (or host threads) it concerns: with a share_of_step, that share of the steady steps' wall time (share_of_step × their wall time); without, the capture's (NULL when no honest estimate) (REAL).
  time_at_stake_us,
  -- Share of the steady steps' wall time at stake, 0-1 (NULL when no honest estimate) (REAL).
  share_of_step
) AS
-- A query for one label reads that trace's rows only: the KPIs come
-- through windows partitioned by trace_id and label (a filter reaches
-- the view under a window, not under a GROUP BY), the other per-trace
-- figures through subqueries on the trace's keys (NOT MATERIALIZED: each
-- use is read for the trace at hand, not built for every trace).  Every
-- window, ORDER BY ... LIMIT, DISTINCT or IN list of three or more values
-- opens a temporary b-tree, whose page cache SQLite allocates anew (about
-- 85 KB) each time the subquery runs: they are kept out of what runs once
-- per use (min() picks the least busy device, a CASE the KPIs left out).
WITH
kt AS NOT MATERIALIZED (      -- per trace: each KPI's bad/detected flag (NULL without the KPI) and utilizations
  SELECT trace_id, label, kd, msk, du, dig, lt, ood, oov, hw, lmb FROM (
    SELECT trace_id, label,
           max(CASE WHEN kpi = 'kernel_duration' THEN band IN ('bad', 'detected') END) OVER w AS kd,
           max(CASE WHEN kpi = 'many_small_kernels' THEN band IN ('bad', 'detected') END) OVER w AS msk,
           max(CASE WHEN kpi = 'device_utilization' THEN band IN ('bad', 'detected') END) OVER w AS du,
           max(CASE WHEN kpi = 'device_idle_gaps' THEN band IN ('bad', 'detected') END) OVER w AS dig,
           max(CASE WHEN kpi = 'large_transfers' THEN band IN ('bad', 'detected') END) OVER w AS lt,
           max(CASE WHEN kpi = 'one_op_dominating' THEN band IN ('bad', 'detected') END) OVER w AS ood,
           max(CASE WHEN kpi = 'one_op_dominating' THEN value END) OVER w AS oov,
           max(CASE WHEN kpi = 'host_wait' THEN band IN ('bad', 'detected') END) OVER w AS hw,
           max(CASE WHEN kpi = 'memory_bandwidth' THEN band = 'bad' END) OVER w AS lmb,
           row_number() OVER w AS n
    FROM profsum_kpis WINDOW w AS (PARTITION BY trace_id, label))
  WHERE n = 1
),
fact AS NOT MATERIALIZED (
  SELECT t.trace_id,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'n_ops') AS n_ops,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'n_small_ops') AS n_small,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'median_op_duration') AS median_op,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'compile_duration') AS compile,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'transfer_duration') AS transfer,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'host_offload_duration') AS offload,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'device_busy_duration') AS busy,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'small_op_duration') AS small_us,
         (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id AND f.name = 'op_duration') AS ops_us
  FROM profsum_trace AS t
),
sw0 AS NOT MATERIALIZED (
  SELECT t.trace_id, json_extract(t.options, '$.warmup_steps') AS warm FROM profsum_trace AS t
),
sw1 AS NOT MATERIALIZED (   -- the steady steps' wall-clock split, all devices (every step when all are
                            -- warmup steps; st = 1 for a steady step), summed per step and device first,
                            -- in whole picoseconds (each row's µs rounded back to ps, added as integers);
                            -- less what overlapping steps count twice (the facts step_overlap_*), so
                            -- that each instant of a device counts once
  SELECT s.trace_id,
         (SELECT CASE WHEN max(g.st) = 1 THEN sum(CASE WHEN g.st = 1 THEN g.v END) ELSE sum(g.v) END
          FROM (SELECT 1 - coalesce(a.step < s.warm, 0) AS st, sum(CAST(round(a.wall_us * 1e6) AS INTEGER)) AS v FROM profsum_agg_step_wall AS a
                WHERE a.trace_id = s.trace_id GROUP BY a.step, a.device) AS g)
         - coalesce((SELECT CAST(round(f.value * 1e6) AS INTEGER) FROM profsum_agg_fact AS f
                     WHERE f.trace_id = s.trace_id AND f.name = 'step_overlap_wall'), 0) AS wall,
         (SELECT CASE WHEN max(g.st) = 1 THEN sum(CASE WHEN g.st = 1 THEN g.v END) ELSE sum(g.v) END
          FROM (SELECT 1 - coalesce(a.step < s.warm, 0) AS st, sum(CAST(round(a.idle_us * 1e6) AS INTEGER)) AS v FROM profsum_agg_step_wall AS a
                WHERE a.trace_id = s.trace_id GROUP BY a.step, a.device) AS g)
         - coalesce((SELECT CAST(round(f.value * 1e6) AS INTEGER) FROM profsum_agg_fact AS f
                     WHERE f.trace_id = s.trace_id AND f.name = 'step_overlap_idle'), 0) AS idle,
         (SELECT CASE WHEN max(g.st) = 1 THEN sum(CASE WHEN g.st = 1 THEN g.v END) ELSE sum(g.v) END
          FROM (SELECT 1 - coalesce(a.step < s.warm, 0) AS st, sum(CAST(round(a.collective_us * 1e6) AS INTEGER)) AS v FROM profsum_agg_step_wall AS a
                WHERE a.trace_id = s.trace_id GROUP BY a.step, a.device) AS g)
         - coalesce((SELECT CAST(round(f.value * 1e6) AS INTEGER) FROM profsum_agg_fact AS f
                     WHERE f.trace_id = s.trace_id AND f.name = 'step_overlap_collective'), 0) AS coll,
         (SELECT CASE WHEN max(g.st) = 1 THEN sum(CASE WHEN g.st = 1 THEN g.v END) ELSE sum(g.v) END
          FROM (SELECT 1 - coalesce(a.step < s.warm, 0) AS st, sum(CAST(round(a.transfer_us * 1e6) AS INTEGER)) AS v FROM profsum_agg_step_wall AS a
                WHERE a.trace_id = s.trace_id GROUP BY a.step, a.device) AS g)
         - coalesce((SELECT CAST(round(f.value * 1e6) AS INTEGER) FROM profsum_agg_fact AS f
                     WHERE f.trace_id = s.trace_id AND f.name = 'step_overlap_transfer'), 0) AS xfer,
         -- 1 when a steady step is there (the figures are the steady steps'), else 0
         (SELECT max(1 - coalesce(a.step < s.warm, 0)) FROM profsum_agg_step_wall AS a
          WHERE a.trace_id = s.trace_id) AS steady
  FROM sw0 AS s
),
sw AS NOT MATERIALIZED (      -- NULL figures for a trace without steady wall time; the rules compare
                              -- the ps (exact: a share exactly on a threshold is on the side the docs
                              -- give it), shares are quotients of them, times their µs
  SELECT trace_id, CASE WHEN wall > 0 THEN wall END AS wall_ps, CASE WHEN wall > 0 THEN idle END AS idle_ps,
         CASE WHEN wall > 0 THEN coll END AS coll_ps, CASE WHEN wall > 0 THEN xfer END AS xfer_ps,
         CASE WHEN wall > 0 THEN wall / 1e6 END AS wall, CASE WHEN wall > 0 THEN idle / 1e6 END AS idle,
         CASE WHEN wall > 0 THEN coll / 1e6 END AS coll, CASE WHEN wall > 0 THEN xfer / 1e6 END AS xfer,
         CASE WHEN steady = 1 THEN 'the steady steps''' ELSE 'the warmup steps''' END AS steps_of
  FROM sw1
),
worst0 AS NOT MATERIALIZED (  -- the least busy device (the first by name among equals), and the idle time of all
  SELECT t.trace_id,
         (SELECT min(d.device) FROM profsum_agg_device AS d
          WHERE d.trace_id = t.trace_id AND d.span_duration > 0
            AND d.busy_duration / d.span_duration = (SELECT min(e.busy_duration / e.span_duration)
                                                     FROM profsum_agg_device AS e
                                                     WHERE e.trace_id = t.trace_id AND e.span_duration > 0)) AS device,
         (SELECT sum(d.span_duration - d.busy_duration) FROM profsum_agg_device AS d WHERE d.trace_id = t.trace_id) AS idle
  FROM profsum_trace AS t
),
worst AS NOT MATERIALIZED (
  SELECT w.trace_id, w.device, w.idle,
         (SELECT d.busy_duration FROM profsum_agg_device AS d WHERE d.trace_id = w.trace_id AND d.device = w.device)
           AS busy_duration,
         (SELECT d.span_duration FROM profsum_agg_device AS d WHERE d.trace_id = w.trace_id AND d.device = w.device)
           AS span_duration
  FROM worst0 AS w
),
udev AS NOT MATERIALIZED (    -- the devices the capture's two utilizations below are over (their
                              -- capture rows): those whose FLOPs, bytes and both peaks are known (a
                              -- device with bytes only would add to one figure and not the other),
                              -- less those whose bandwidth profsum_kpis_xla calls 'unavailable'
                              -- (0 bytes in all while busy, or a lower bound of 0.60 or under)
  SELECT u.trace_id, u.mfu_flops, u.bytes_accessed, u.busy_us, d.peak_flops_per_s AS pf,
         d.peak_mem_bw_bytes_per_s AS pb
  FROM profsum_agg_xla_util AS u JOIN profsum_agg_xla_device AS d USING (trace_id, device)
  WHERE u.step IS NULL AND u.mfu_flops IS NOT NULL AND u.bytes_accessed IS NOT NULL AND u.busy_us > 0
    AND d.peak_flops_per_s > 0 AND d.peak_mem_bw_bytes_per_s > 0
    AND NOT EXISTS (SELECT 1 FROM profsum_kpis_xla AS k
                    WHERE k.trace_id = u.trace_id AND k.device = u.device
                      AND k.kpi = 'memory_bandwidth' AND k.band = 'unavailable')
),
util AS NOT MATERIALIZED (    -- the capture's compute and memory-bandwidth utilization over the
                              -- devices' busy time, both from the same devices (udev)
  SELECT t.trace_id,
         (SELECT sum(v.mfu_flops) * 1e6 / sum(v.busy_us * v.pf) FROM udev AS v WHERE v.trace_id = t.trace_id) AS mxu,
         (SELECT sum(v.bytes_accessed) * 1e6 / sum(v.busy_us * v.pb) FROM udev AS v WHERE v.trace_id = t.trace_id) AS hbm
  FROM profsum_trace AS t
),
-- the top op, as the one_op_dominating KPI takes it: the first hot op, or
-- with no hot op listed (hot_op_limit 0) the op of most exclusive time,
-- the first by name among equals (its share of all device-op time is the
-- KPI's value, kt.oov: the exclusive time of every device op, in whole
-- picoseconds)
top_op0 AS NOT MATERIALIZED (
  SELECT t.trace_id,
         (SELECT h.name FROM profsum_hot_ops AS h WHERE h.trace_id = t.trace_id AND h.rank = 0) AS hot,
         (SELECT min(o.name) FROM profsum_agg_op AS o
          WHERE o.trace_id = t.trace_id
            AND round(o.exclusive_duration * 1e6) = (SELECT max(round(e.exclusive_duration * 1e6))
                                                     FROM profsum_agg_op AS e WHERE e.trace_id = t.trace_id)) AS agg
  FROM profsum_trace AS t
),
top_op AS NOT MATERIALIZED (
  SELECT p.trace_id, coalesce(p.hot, p.agg) AS name,
         CASE WHEN p.hot IS NOT NULL
              THEN (SELECT h.exclusive_duration FROM profsum_hot_ops AS h WHERE h.trace_id = p.trace_id AND h.rank = 0)
              ELSE (SELECT o.exclusive_duration FROM profsum_agg_op AS o WHERE o.trace_id = p.trace_id AND o.name = p.agg)
         END AS exclusive_duration
  FROM top_op0 AS p
),
-- Every per-trace figure the built-in rules read, one row per trace: the
-- rules below read this row once, so profsum_kpis (behind kt) is expanded
-- once for all of them instead of once per rule.
base AS NOT MATERIALIZED (
  SELECT kt.trace_id, kt.label, kt.kd, kt.msk, kt.du, kt.dig, kt.lt, kt.ood, kt.hw, kt.lmb,
         (SELECT u.mxu FROM util AS u WHERE u.trace_id = kt.trace_id) AS mxu,
         (SELECT u.hbm FROM util AS u WHERE u.trace_id = kt.trace_id) AS hbm,
         f.n_ops, f.n_small, f.median_op, f.transfer, f.offload, f.busy,
         CASE WHEN f.ops_us > 0 THEN f.small_us END AS small_us,
         CASE WHEN f.ops_us > 0 THEN CAST(round(f.small_us * 1e6) AS INTEGER) END AS small_ps,
         CASE WHEN f.ops_us > 0 THEN CAST(round(f.ops_us * 1e6) AS INTEGER) END AS ops_ps,
         CASE WHEN f.ops_us > 0 THEN round(f.small_us * 1e6) / round(f.ops_us * 1e6) END AS small_share,
         sw.wall, sw.idle, sw.coll, sw.xfer, sw.wall_ps, sw.idle_ps, sw.coll_ps, sw.xfer_ps, sw.steps_of,
         w.device AS w_device, w.busy_duration AS w_busy, w.span_duration AS w_span, w.idle AS w_idle,
         (SELECT o.name FROM top_op AS o WHERE o.trace_id = kt.trace_id) AS op_name,
         (SELECT o.exclusive_duration FROM top_op AS o WHERE o.trace_id = kt.trace_id) AS op_excl,
         kt.oov AS op_v
  FROM kt JOIN fact AS f ON f.trace_id = kt.trace_id JOIN sw ON sw.trace_id = kt.trace_id
       JOIN worst AS w ON w.trace_id = kt.trace_id
),
-- The built-in rules: element k of the array is rule k's advice (its text
-- columns as a JSON object) when the rule fires, else null; its numbers
-- (time at stake, share of the step) are picked by k in raw, outside the
-- JSON, so that they keep every bit of their doubles.
rules AS (
  SELECT b.*, c.key AS k, c.value AS j
  FROM base AS b, json_each(json_array(
    -- 0: many small kernels
    CASE WHEN b.kd IS NOT NULL AND b.msk IS NOT NULL AND (b.kd OR b.msk) AND b.n_ops > 0 THEN json_object(
      'advice_id', 'many_small_kernels',
      'source', CASE WHEN b.msk THEN 'pattern' ELSE 'kpi' END,
      'kpi', CASE WHEN b.msk THEN 'many_small_kernels' ELSE 'kernel_duration' END,
      'title', printf('Many small kernels: %s%% of %d device ops are shorter than 0.1 ms (median %s ms)%s',
                      profsum_format_near(100.0 * b.n_small / b.n_ops, 1, 5), CAST(b.n_ops AS INTEGER),
                      profsum_format_near(b.median_op / 1000.0, 3, 0.1),
                      CASE WHEN b.small_share IS NOT NULL
                           THEN printf(', %s%% of device-op time', profsum_format_near(100.0 * b.small_share, 1, 5)) ELSE '' END),
      -- (with the small ops' time, stored by imports from 2026-12-07 on: their share of the
      -- device-op time and their µs, which are the time at stake)
      'evidence', CASE WHEN b.small_share IS NOT NULL
        THEN json_array(json_object('name', 'small_op_share', 'value', b.n_small / b.n_ops, 'unit', 'fraction'),
                        json_object('name', 'kernel_duration', 'value', b.median_op / 1000.0, 'unit', 'ms'),
                        json_object('name', 'n_ops', 'value', b.n_ops, 'unit', 'count'),
                        json_object('name', 'small_op_time_share', 'value', b.small_share, 'unit', 'fraction'),
                        json_object('name', 'small_op_us', 'value', b.small_us, 'unit', 'us'))
        ELSE json_array(json_object('name', 'small_op_share', 'value', b.n_small / b.n_ops, 'unit', 'fraction'),
                        json_object('name', 'kernel_duration', 'value', b.median_op / 1000.0, 'unit', 'ms'),
                        json_object('name', 'n_ops', 'value', b.n_ops, 'unit', 'count')) END,
      -- (under 10 % of the device-op time, fusing them gains little: said first)
      'fixes', CASE WHEN b.small_share IS NOT NULL AND 10 * b.small_ps < b.ops_ps
        THEN json_array(printf('they take only %s%% of the device-op time (%.3f us): the larger ops come first; fusing these saves at most that time and the gaps between them',
                               profsum_format_near(100.0 * b.small_share, 1, 5), b.small_us),
                        'jax.jit larger functions, so that XLA compiles the step as one program',
                        'let XLA fuse: no host callbacks or Python loops between small ops')
        ELSE json_array('jax.jit larger functions, so that XLA compiles the step as one program',
                        'let XLA fuse: no host callbacks or Python loops between small ops',
                        'fewer control-flow branches (lax.cond, lax.while_loop) in the hot path') END) END,
    -- 1: devices idle between their first and last op
    CASE WHEN b.du IS NOT NULL AND b.dig IS NOT NULL AND (b.du OR b.dig) AND b.w_device IS NOT NULL THEN json_object(
      'advice_id', 'device_idle_gaps',
      'source', CASE WHEN b.dig THEN 'pattern' ELSE 'kpi' END,
      'kpi', CASE WHEN b.dig THEN 'device_idle_gaps' ELSE 'device_utilization' END,
      'title', printf('Devices idle between ops: %s is busy %s%% of the time between its first and last op',
                      b.w_device, profsum_format_near(100.0 * round(b.w_busy * 1e6) / round(b.w_span * 1e6), 1, 5)),
      'evidence', json_array(json_object('name', 'device_utilization', 'value', round(b.w_busy * 1e6) / round(b.w_span * 1e6), 'unit', 'fraction'),
                             json_object('name', 'device', 'value', b.w_device, 'unit', NULL),
                             json_object('name', 'idle_us', 'value', b.w_idle, 'unit', 'us')),
      'fixes', json_array('call block_until_ready() only where the value is needed',
                          'prefetch the next batch to the device (jax.device_put ahead of the step)',
                          'keep dispatch asynchronous: no reads of device values on the host inside the step')) END,
    -- 2: host <-> device transfers
    CASE WHEN b.lt IS NOT NULL AND b.busy > 0 AND (b.lt OR 10 * b.xfer_ps >= 3 * b.wall_ps) THEN json_object(
      'advice_id', 'large_transfers',
      'source', CASE WHEN b.lt THEN 'pattern' ELSE 'xprof_rule' END,
      'kpi', CASE WHEN b.lt THEN 'large_transfers' END,
      'title', printf('Large host/device transfers: %s%% of device busy time%s',
                      profsum_format_near(100.0 * round(b.transfer * 1e6) / round(b.busy * 1e6), 1, 5),
                      CASE WHEN b.wall > 0 THEN printf(', %s%% of step wall time', profsum_format_near(100.0 * b.xfer_ps / b.wall_ps, 1, 5)) ELSE '' END),
      -- (host_offload_us last, only when host-offload copies ran)
      'evidence', CASE WHEN b.wall > 0 AND coalesce(b.offload, 0) > 0
        THEN json_array(json_object('name', 'transfer_share_of_busy', 'value', round(b.transfer * 1e6) / round(b.busy * 1e6), 'unit', 'fraction'),
                        json_object('name', 'transfer_share_of_step', 'value', CAST(b.xfer_ps AS REAL) / b.wall_ps, 'unit', 'fraction'),
                        json_object('name', 'transfer_us', 'value', b.transfer, 'unit', 'us'),
                        json_object('name', 'host_offload_us', 'value', b.offload, 'unit', 'us'))
        WHEN b.wall > 0
        THEN json_array(json_object('name', 'transfer_share_of_busy', 'value', round(b.transfer * 1e6) / round(b.busy * 1e6), 'unit', 'fraction'),
                        json_object('name', 'transfer_share_of_step', 'value', CAST(b.xfer_ps AS REAL) / b.wall_ps, 'unit', 'fraction'),
                        json_object('name', 'transfer_us', 'value', b.transfer, 'unit', 'us'))
        WHEN coalesce(b.offload, 0) > 0
        THEN json_array(json_object('name', 'transfer_share_of_busy', 'value', round(b.transfer * 1e6) / round(b.busy * 1e6), 'unit', 'fraction'),
                        json_object('name', 'transfer_us', 'value', b.transfer, 'unit', 'us'),
                        json_object('name', 'host_offload_us', 'value', b.offload, 'unit', 'us'))
        ELSE json_array(json_object('name', 'transfer_share_of_busy', 'value', round(b.transfer * 1e6) / round(b.busy * 1e6), 'unit', 'fraction'),
                        json_object('name', 'transfer_us', 'value', b.transfer, 'unit', 'us')) END,
      'fixes', CASE WHEN coalesce(b.offload, 0) > 0 AND 2 * round(b.offload * 1e6) >= round(b.transfer * 1e6)
        THEN json_array('host offloading (copies to and from memory_kind pinned_host, S(5)) takes half of it or more: offload fewer or smaller buffers',
                        'schedule the copies early enough to overlap compute (copy-start far from its copy-done)',
                        'jax.device_put the inputs ahead of time')
        ELSE json_array('jax.device_put the inputs ahead of time',
                        'keep intermediates on the device',
                        'no numpy() / np.asarray of device arrays inside the loop') END) END,
    -- 3: one op dominating
    CASE WHEN b.ood THEN json_object(
      'advice_id', 'one_op_dominating', 'source', 'pattern', 'kpi', 'one_op_dominating',
      'title', printf('One op dominates: %s takes %s%% of device-op time',
                      CASE WHEN length(b.op_name) > 80 THEN substr(b.op_name, 1, 79) || '…' ELSE b.op_name END,
                      profsum_format_near(100.0 * b.op_v, 1, 5)),
      'evidence', json_array(json_object('name', 'op', 'value', b.op_name, 'unit', NULL),
                             json_object('name', 'op_share', 'value', b.op_v, 'unit', 'fraction'),
                             json_object('name', 'exclusive_us', 'value', b.op_excl, 'unit', 'us')),
      'fixes', json_array('profile that op alone (a micro-benchmark of its shapes)',
                          'change the algorithm or the shapes it runs on',
                          'use a tuned library kernel for it')) END,
    -- 4: devices waiting on the host, as a share of step wall time
    CASE WHEN b.wall > 0 AND (coalesce(b.hw, 0) OR 10 * b.idle_ps > b.wall_ps) THEN json_object(
      'advice_id', 'host_wait',
      'source', CASE WHEN b.hw THEN 'kpi' ELSE 'xprof_rule' END,
      'kpi', CASE WHEN b.hw THEN 'host_wait' END,
      'title', printf('Devices wait: no device op runs during %s%% of %s wall time', profsum_format_near(100.0 * b.idle_ps / b.wall_ps, 1, 5), b.steps_of),
      'evidence', json_array(json_object('name', 'host_wait', 'value', CAST(b.idle_ps AS REAL) / b.wall_ps, 'unit', 'fraction'),
                             json_object('name', 'idle_us', 'value', b.idle, 'unit', 'us'),
                             json_object('name', 'step_wall_us', 'value', b.wall, 'unit', 'us')),
      'fixes', json_array('call block_until_ready() only where the value is needed',
                          'prefetch the next batch to the device (jax.device_put ahead of the step)',
                          'keep dispatch asynchronous: no reads of device values on the host inside the step')) END,
    -- 5: collectives
    CASE WHEN b.wall > 0 AND 10 * b.coll_ps >= 3 * b.wall_ps THEN json_object(
      'advice_id', 'collective_bound', 'source', 'xprof_rule', 'kpi', NULL,
      'title', printf('Collective-bound: communication ops run during %s%% of %s wall time', profsum_format_near(100.0 * b.coll_ps / b.wall_ps, 1, 5), b.steps_of),
      'evidence', json_array(json_object('name', 'collective_share_of_step', 'value', CAST(b.coll_ps AS REAL) / b.wall_ps, 'unit', 'fraction'),
                             json_object('name', 'collective_us', 'value', b.coll, 'unit', 'us')),
      'fixes', json_array('overlap collectives with compute (async collectives, the latency-hiding scheduler)',
                          'communicate fewer bytes (sharding choice, bf16 gradients)',
                          'match the mesh layout to the interconnect')) END,
    -- 6: compute bound (xprof), where both utilizations are known
    CASE WHEN b.mxu > 0.70 AND b.hbm < 0.50 THEN json_object(
      'advice_id', 'compute_bound', 'source', 'xprof_rule', 'kpi', NULL,
      'title', printf('Compute-bound: compute units %s%% utilized%s while memory bandwidth is %s%% used (devices'' busy time)', profsum_format_near(100.0 * b.mxu, 1, 5),
                      CASE WHEN b.mxu > 1.0 THEN ' (more than the peak: check the device''s peak FLOP/s, profsum_devices)' ELSE '' END, profsum_format_near(100.0 * b.hbm, 1, 5)),
      'evidence', json_array(json_object('name', 'compute_utilization', 'value', b.mxu, 'unit', 'fraction'),
                             json_object('name', 'memory_bandwidth', 'value', b.hbm, 'unit', 'fraction')),
      'fixes', json_array('reduce FLOPs: mixed precision (bf16), drop work the result does not need',
                          'keep matmul dimensions multiples of the matrix unit (128 on TPU)')) END,
    -- 7: memory bound (xprof)
    -- (not when a device's own bandwidth use is low, memory_bandwidth 'bad':
    -- the capture's figure then describes no device, and this row would
    -- contradict that device's low_memory_bandwidth row)
    CASE WHEN b.hbm > 0.70 AND b.mxu < 0.50 AND NOT coalesce(b.lmb, 0) THEN json_object(
      'advice_id', 'memory_bound', 'source', 'xprof_rule', 'kpi', NULL,
      'title', printf('Memory-bound: memory bandwidth %s%% used%s while compute units are %s%% utilized (devices'' busy time)', profsum_format_near(100.0 * b.hbm, 1, 5),
                      CASE WHEN b.hbm > 1.0 THEN ' (more than HBM can carry: the ops'' bytes_accessed count on-chip traffic too, so this overstates HBM use; see profsum_roofline)' ELSE '' END, profsum_format_near(100.0 * b.mxu, 1, 5)),
      'evidence', json_array(json_object('name', 'memory_bandwidth', 'value', b.hbm, 'unit', 'fraction'),
                             json_object('name', 'compute_utilization', 'value', b.mxu, 'unit', 'fraction')),
      'fixes', json_array('fuse element-wise ops to cut memory traffic', 'bf16 activations and weights',
                          'recompute cheap values instead of storing them')) END
  )) AS c
  WHERE c.type = 'object'
),
raw AS (
  SELECT r.trace_id, r.label, json_extract(r.j, '$.advice_id') AS advice_id, json_extract(r.j, '$.source') AS source,
         json_extract(r.j, '$.kpi') AS kpi, json_extract(r.j, '$.title') AS title,
         json_extract(r.j, '$.evidence') AS evidence, json_extract(r.j, '$.fixes') AS fixes,
         -- with a share of the steady steps' wall time, the time at stake is
         -- that share of it (share = stake / wall); without, the capture's
         CASE r.k WHEN 0 THEN r.small_us
                  WHEN 1 THEN r.w_idle
                  WHEN 2 THEN CASE WHEN r.wall > 0 AND r.xfer > 0 THEN r.xfer ELSE r.transfer END
                  WHEN 3 THEN CASE WHEN r.wall > r.idle THEN r.op_v * (r.wall - r.idle) ELSE r.op_excl END
                  WHEN 4 THEN r.idle WHEN 5 THEN r.coll END AS stake,
         -- (transfers found outside the steady steps only: no share of them)
         CASE r.k WHEN 2 THEN CASE WHEN r.wall > 0 AND r.xfer > 0 THEN min(1.0, CAST(r.xfer_ps AS REAL) / r.wall_ps) END
                  -- (devices idle through the steady steps: no share of them)
                  WHEN 3 THEN CASE WHEN r.wall > r.idle THEN min(1.0, r.op_v * (r.wall - r.idle) / r.wall) END
                  WHEN 4 THEN min(1.0, CAST(r.idle_ps AS REAL) / r.wall_ps)
                  WHEN 5 THEN min(1.0, CAST(r.coll_ps AS REAL) / r.wall_ps) END AS share,
         CASE r.k WHEN 7 THEN 2 ELSE 1 END AS pref
  FROM rules AS r
  UNION ALL
  -- every other bad KPI or detected pattern (also those of other views)
  SELECT x.trace_id, x.label,
         CASE x.kpi WHEN 'memory_bandwidth' THEN 'low_memory_bandwidth' WHEN 'occupancy' THEN 'low_occupancy' ELSE x.kpi END,
         x.kind, x.kpi,
         CASE x.kpi WHEN 'compilation_time' THEN printf('Compilation inside the profile: %s s', profsum_format_near(x.value, 3, 1))
                    WHEN 'host_overhead' THEN printf('Host-heavy: host events take %s%% of the per-track time', profsum_format_near(100.0 * x.value, 1, 5))
                    WHEN 'float_nesting' THEN printf('Float timestamps: the summary''s categories differ from those on exact '
                                                     || 'times by %.3f us (%s the exact total)',
                                                     x.value * (SELECT f.value FROM profsum_agg_fact AS f
                                                                WHERE f.trace_id = x.trace_id AND f.name = 'exact_breakdown_total'),
                                                     CASE WHEN x.value <= 1 THEN printf('%.2f%% of', 100.0 * x.value)
                                                          ELSE printf('%.2f times', x.value) END)
                    ELSE x.kpi || ': ' || x.explanation END,
         json_array(json_object('name', x.kpi, 'value', x.value,
                                'unit', CASE x.kpi WHEN 'float_nesting' THEN 'ratio' ELSE x.unit END)),
         CASE x.kpi
           WHEN 'compilation_time' THEN json_array('keep shapes and static arguments stable so jit does not recompile',
                                                   'compile (warm up) before the profiled steps',
                                                   'use the persistent compilation cache')
           WHEN 'host_overhead' THEN json_array('move input preprocessing off the step (prefetching input pipeline)',
                                                'less Python work per step', 'jax.jit more of the step')
           -- (the memory idles while a device waits on host transfers: when they
           -- are large, as the large_transfers pattern says, that comes first)
           WHEN 'memory_bandwidth' THEN CASE WHEN f.busy > 0 AND 10 * round(f.transfer * 1e6) > round(f.busy * 1e6)
             THEN json_array(printf('across the devices, host<->device transfers take %s%% of their busy time (large_transfers): '
                                    || 'the memory idles while a device waits on them; shorten or overlap them first',
                                    profsum_format_near(100.0 * round(f.transfer * 1e6) / round(f.busy * 1e6), 1, 5)),
                             'read profsum_roofline: ops bound by compute are not slowed by memory',
                             'check that the ops carry bytes_accessed (profsum_roofline.status)')
             ELSE json_array('read profsum_roofline: ops bound by compute are not slowed by memory',
                             'for ops neither compute- nor memory-bound (small, latency-bound): more work per op (fusion, a larger batch)',
                             'check that the ops carry bytes_accessed (profsum_roofline.status)') END
           -- (PyTorch's allocators are named cuda:N or hip:N: its own fixes)
           WHEN 'memory_peak' THEN CASE WHEN EXISTS (SELECT 1 FROM profsum_agg_memory AS m
                                                     WHERE m.trace_id = x.trace_id AND m.device = x.device
                                                       AND m.allocator GLOB '*:[0-9]*')
             THEN json_array('keep no references to tensors a step no longer needs (torch.cuda.empty_cache() does not lower this peak)',
                             'checkpoint large activations (torch.utils.checkpoint)',
                             'a smaller batch per device, or shard parameters and optimizer state (FSDP)',
                             'a server that reserves memory up front (vLLM''s KV cache, gpu_memory_utilization) stands at its setting by design')
             ELSE json_array('donate buffers (donate_argnums)', 'rematerialize large activations (jax.checkpoint)',
                             'a smaller batch per device, or shard over more devices') END
           WHEN 'occupancy' THEN json_array('more work per kernel (fusion, larger batch)',
                                            'fewer registers or less shared memory per thread in custom kernels')
           WHEN 'float_nesting' THEN json_array('read exact per-op times from trace_events'' excl_ps')
           ELSE json_array('see the explanation of ' || x.kpi || ' in profsum_kpis') END,
         CASE x.kpi WHEN 'compilation_time' THEN x.value * 1e6
                    WHEN 'host_overhead' THEN (SELECT b.total_duration FROM profsum_breakdown AS b
                                               WHERE b.trace_id = x.trace_id AND b.mode = 'exclusive_per_track'
                                                 AND b.category = 'host') END,
         NULL, 3
  -- one row per KPI: the trace's, else the device furthest into the bad
  -- band (memory_peak: the fullest; the others here: the lowest value)
  FROM (SELECT k.*, row_number() OVER (PARTITION BY trace_id, label, kpi
                                       ORDER BY device IS NOT NULL,
                                                CASE WHEN kpi = 'memory_peak' THEN -value ELSE value END,
                                                device) AS n
        FROM profsum_kpis AS k WHERE band IN ('bad', 'detected')) AS x
       LEFT JOIN fact AS f ON f.trace_id = x.trace_id
  WHERE x.n = 1 AND CASE x.kpi WHEN 'kernel_duration' THEN 0 WHEN 'many_small_kernels' THEN 0
                                WHEN 'device_utilization' THEN 0 WHEN 'device_idle_gaps' THEN 0
                                WHEN 'large_transfers' THEN 0 WHEN 'one_op_dominating' THEN 0
                                WHEN 'host_wait' THEN 0 ELSE 1 END
),
one AS (
  SELECT r.*, row_number() OVER (PARTITION BY trace_id, label, advice_id ORDER BY pref) AS n FROM raw AS r
)
SELECT o.trace_id, o.label,
       row_number() OVER (PARTITION BY o.trace_id, o.label
                          ORDER BY o.advice_id = 'float_nesting', o.share IS NULL, o.share DESC, o.stake IS NULL, o.stake DESC, o.advice_id),
       o.advice_id, o.source, o.kpi, o.title, o.evidence, o.fixes, o.stake, o.share
FROM one AS o
WHERE o.n = 1;
