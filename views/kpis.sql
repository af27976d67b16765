-- profsum_kpis: the KPIs of the profiling guides, each with its value, unit,
-- band (good / warning / bad) and a one-line explanation, plus patterns to
-- look for (detected / not_detected).  Per device where it applies
-- (device not NULL).  Bands, KPI by KPI:
--   device_utilization (busy union / span of device ops): good > 80 %, warning 50-80 %,
--   bad < 50 %; 'unavailable' (value NULL) for a device whose ops take 0 ps in all.
--   kernel_duration (median device-op duration): good > 1 ms, warning 0.1-1 ms, bad < 0.1 ms;
--   'unavailable' (value NULL) with fewer than 10 device ops (a micro-benchmark of a kernel or
--   two): too few to tell launch overhead or poor fusion by; the explanation gives the median.
--   host_overhead (host share of the per-track breakdown): good < 10 %, warning 10-20 %,
--   bad > 20 %.
--   compilation_time (Σ host events named *compile*): good < 2 s, warning 2-10 s, bad > 10 s.
--   memory_bandwidth: profsum_kpis_xla's value where bytes and a bandwidth are known, else
--   band 'unavailable', value NULL (never 0); also for a trace imported from a v1 summary
--   file, which carries neither.
--   A trace without device ops (no XLA Ops / Stream threads of a /device: process, e.g. a
--   PyTorch/Kineto trace) has no XLA naming to measure host or compile time by: those
--   KPIs and the device patterns are 'unavailable' with value NULL, never a 'good' 0.
--   A trace imported from a v1 summary file has no device timeline: device_utilization,
--   kernel_duration, compilation_time, many_small_kernels, device_idle_gaps and
--   large_transfers are one 'unavailable' row each (value NULL) saying so.
--   patterns: many_small_kernels (>= 50 % of device ops under 0.1 ms; 'unavailable', value
--   NULL, with fewer than 10 device ops, as kernel_duration; when kernel_duration is bad or
--   the pattern detected, their explanations give the small ops' share of device-op time
--   (facts small_op_duration / op_duration, stored by imports from 2026-12-07 on) and say
--   when it is under 10 %, or for kernel_duration under 50 %, that the time is elsewhere), device_idle_gaps
--   (a device under 80 % utilization; 'unavailable' when no device has time between its
--   first and last op), large_transfers (trace-wide: Σ over devices of the union of each
--   device's transfer ops > 10 % of Σ device busy time; a transfer op is one named like
--   memcpy, h2d, infeed, ... or a TPU host-offload copy (copy-start/-done, dynamic-slice or
--   dynamic-update-slice -start/-done whose HLO text holds host memory, S(5); not on an
--   Async XLA Ops line), whose share the explanation gives apart), one_op_dominating (top hot op,
--   or with no hot op listed (hot_op_limit 0) the op of most exclusive time, > 50 % of
--   device-op time: the exclusive time of all device ops, compared in whole picoseconds, so
--   that two ops of equal time are not over 50 %; 'unavailable' for a trace imported from a
--   v1 summary file, which holds only the hot ops, and when the device ops take 0 ps),
--   float_nesting (the summary decides order and nesting in the timestamps' doubles, as the
--   reference tool does; where that nests events otherwise than their exact times, as with
--   epoch-microsecond timestamps, the per-track breakdown's categories differ from those on
--   exact times: value = Σ over the five categories of |summary − exact| / exact total,
--   detected from 1 %; 'unavailable' for traces imported by a profsum without the check; no
--   row for a trace imported from a v1 summary file, which has no events).
--   device_utilization, device_idle_gaps and large_transfers compare whole picoseconds (each
--   µs figure rounded back to ps, cross-multiplied as integers), so a value exactly on a
--   threshold gets the band above; their values are the correctly rounded quotients.
--   Figures in the explanations have one decimal (percent) or three (ms, s), and more
--   when that would read as a multiple of 5 % (0.1 ms, 1 s) the value is not: 20.026 %
--   is '20.03%', so a value past a band's threshold never reads as the threshold
--   (profsum_format_near; one ulp past it has up to 17 significant digits).
--   Rows of profsum_kpis_xla (device limits), profsum_kpis_mem (memory, kernels) and
--   profsum_kpis_wall (step wall time) are added as they are.
-- Requires: profsum_trace, profsum_agg_device, profsum_agg_fact, profsum_breakdown, profsum_hot_ops,
--   profsum_kpis_xla, profsum_kpis_mem, profsum_kpis_wall, profsum_agg_op.
CREATE VIEW IF NOT EXISTS main.profsum_kpis(
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
-- Each row's arm reads one trace's rows only: a query for one label or
-- trace_id (WHERE label = ? / trace_id = ?) reaches every arm and every
-- grouped subquery (each groups by trace_id and label), so it reads that
-- trace's rows through the tables' keys and never builds the other traces'
-- rows.  Arms come in this order for a trace; within an arm, by the keys.
SELECT trace_id, label, kind, kpi, device, value, unit, band, explanation FROM (
  -- (busy and span in whole picoseconds, b and sp: the bands compare them
  -- exactly, and the value is their correctly rounded quotient)
  SELECT u.trace_id, t.label, 'kpi' AS kind, 'device_utilization' AS kpi, u.device, u.v AS value,
         'fraction' AS unit,
         CASE WHEN u.v IS NULL THEN 'unavailable' WHEN 10 * u.b > 8 * u.sp THEN 'good' WHEN 2 * u.b >= u.sp THEN 'warning'
              ELSE 'bad' END AS band,
         CASE WHEN u.v IS NULL THEN printf('%s: no time between its first and last op (its ops take 0 ps): no utilization', u.device)
              ELSE printf('%s %s%% of the time between %s first and last op%s',
                coalesce(u.device || ' busy', 'all devices busy'), profsum_format_near(100.0 * u.v, 1, 5),
                CASE WHEN u.device IS NULL THEN 'their' ELSE 'its' END,
                CASE WHEN 5 * u.b < 4 * u.sp THEN ': idle gaps, look for host-bound dispatch or synchronization' ELSE '' END) END
           AS explanation
  FROM (SELECT trace_id, device, b, sp, CASE WHEN sp > 0 THEN CAST(b AS REAL) / sp END AS v
        FROM (SELECT trace_id, device, CAST(round(busy_duration * 1e6) AS INTEGER) AS b,
                     CAST(round(span_duration * 1e6) AS INTEGER) AS sp
              FROM profsum_agg_device)) AS u
  JOIN profsum_trace AS t USING (trace_id)
  UNION ALL
  SELECT trace_id, label, 'kpi', 'device_utilization', NULL, v, 'fraction',
         CASE WHEN v IS NULL THEN 'unavailable' WHEN 10 * b > 8 * sp THEN 'good' WHEN 2 * b >= sp THEN 'warning' ELSE 'bad' END,
         CASE WHEN v IS NULL THEN 'no time between the devices'' first and last ops (their ops take 0 ps): no utilization'
              ELSE printf('%s %s%% of the time between %s first and last op%s', 'all devices busy', profsum_format_near(100.0 * v, 1, 5), 'their',
                CASE WHEN 5 * b < 4 * sp THEN ': idle gaps, look for host-bound dispatch or synchronization' ELSE '' END) END
  FROM (SELECT trace_id, label, b, sp, CASE WHEN sp > 0 THEN CAST(b AS REAL) / sp END AS v
        FROM (SELECT d.trace_id, t.label, sum(CAST(round(d.busy_duration * 1e6) AS INTEGER)) AS b,
                     sum(CAST(round(d.span_duration * 1e6) AS INTEGER)) AS sp
              FROM profsum_agg_device AS d JOIN profsum_trace AS t USING (trace_id)
              GROUP BY d.trace_id, t.label))
  UNION ALL
  -- (fewer than 10 device ops: too few to judge; n_ops NULL, a trace imported before the
  -- count was stored, is judged as before)
  SELECT trace_id, label, 'kpi', 'kernel_duration', NULL, CASE WHEN NOT few THEN median_op / 1000.0 END, 'ms',
         CASE WHEN median_op IS NULL OR few THEN 'unavailable' WHEN median_op > 1000 THEN 'good'
              WHEN median_op >= 100 THEN 'warning' ELSE 'bad' END,
         CASE WHEN median_op IS NULL THEN 'no device ops in the trace'
              WHEN few THEN printf('%d device ops (median %s ms): too few to tell launch overhead or poor fusion by (10 or more are needed)',
                                   CAST(n_ops AS INTEGER), profsum_format_near(median_op / 1000.0, 3, 0.1))
              -- (the small ops' share of device-op time, when stored, says whether their
              -- number is where the time goes; compared in whole picoseconds)
              ELSE printf('median device op takes %s ms%s', profsum_format_near(median_op / 1000.0, 3, 0.1),
                          CASE WHEN median_op >= 100 THEN ''
                               WHEN small_ps IS NULL OR coalesce(all_ps, 0) <= 0
                               THEN ': many tiny kernels, launch overhead dominates; fuse ops'
                               WHEN 2 * small_ps >= all_ps
                               THEN printf(': many tiny kernels, %s%% of device-op time: launch overhead and unfused memory traffic weigh; fuse ops',
                                           profsum_format_near(100.0 * small_ps / all_ps, 1, 5))
                               ELSE printf(': many tiny kernels, but they take %s%% of device-op time: most of it is in the larger ops',
                                           profsum_format_near(100.0 * small_ps / all_ps, 1, 5)) END) END
  FROM (SELECT f.trace_id, t.label, max(CASE f.name WHEN 'median_op_duration' THEN f.value END) AS median_op,
               max(CASE f.name WHEN 'n_ops' THEN f.value END) AS n_ops,
               coalesce(max(CASE f.name WHEN 'n_ops' THEN f.value END) < 10, 0) AS few,
               CAST(round(max(CASE f.name WHEN 'small_op_duration' THEN f.value END) * 1e6) AS INTEGER) AS small_ps,
               CAST(round(max(CASE f.name WHEN 'op_duration' THEN f.value END) * 1e6) AS INTEGER) AS all_ps
        FROM profsum_agg_fact AS f JOIN profsum_trace AS t USING (trace_id)
        GROUP BY f.trace_id, t.label)
  UNION ALL
  -- (a trace imported from a v1 summary has no facts: its breakdown's share counts)
  SELECT trace_id, label, 'kpi', 'host_overhead', NULL, v, 'fraction',
         CASE WHEN v IS NULL THEN 'unavailable' WHEN v < 0.10 THEN 'good' WHEN v <= 0.20 THEN 'warning' ELSE 'bad' END,
         CASE WHEN v IS NULL THEN 'no device ops in the trace (no XLA Ops or Stream threads of a /device: process): host time is not told apart'
              ELSE printf('host events take %s%% of the per-track exclusive time%s', profsum_format_near(100.0 * v, 1, 5),
                CASE WHEN v > 0.10 THEN ': the input pipeline or Python dispatch may hold the devices back' ELSE '' END) END
  FROM (SELECT b.trace_id, b.label,
               CASE WHEN NOT EXISTS (SELECT 1 FROM profsum_agg_fact AS f WHERE f.trace_id = b.trace_id)
                      OR (SELECT f.value FROM profsum_agg_fact AS f WHERE f.trace_id = b.trace_id AND f.name = 'n_ops') > 0
                    THEN b.share_of_total END AS v
        FROM profsum_breakdown AS b
        WHERE b.mode = 'exclusive_per_track' AND b.category = 'host')
  UNION ALL
  SELECT trace_id, label, 'kpi', 'compilation_time', NULL, CASE WHEN n_ops > 0 THEN compile / 1e6 END, 's',
         CASE WHEN coalesce(n_ops, 0) <= 0 OR compile IS NULL THEN 'unavailable' WHEN compile < 2e6 THEN 'good'
              WHEN compile <= 10e6 THEN 'warning' ELSE 'bad' END,
         CASE WHEN coalesce(n_ops, 0) <= 0 THEN 'no device ops in the trace (not an XLA trace): compile events are not told apart'
              WHEN compile IS NULL THEN 'no compile time stored for this trace (imported by an older profsum): re-import it'
              ELSE printf('%s s in host events named *compile* within the profile%s', profsum_format_near(compile / 1e6, 3, 1),
                CASE WHEN compile >= 2e6 THEN ': recompilation inside the profiled steps; check for changing shapes or static args' ELSE '' END) END
  FROM (SELECT f.trace_id, t.label, max(CASE f.name WHEN 'n_ops' THEN f.value END) AS n_ops,
               max(CASE f.name WHEN 'compile_duration' THEN f.value END) AS compile
        FROM profsum_agg_fact AS f JOIN profsum_trace AS t USING (trace_id)
        GROUP BY f.trace_id, t.label)
  UNION ALL
  -- (a v1 import stores no devices and no facts: the figures read from them
  -- are unavailable, one row each; the list is read once, as the outer loop,
  -- and each of its rows finds the traces through the label's key)
  SELECT t.trace_id, t.label, k.column1, k.column2, NULL, NULL, k.column3, 'unavailable',
         'imported from a profile_summary.v1 document, which carries no ' || k.column4
         || ': import the trace for this figure'
  FROM (VALUES ('kpi', 'device_utilization', 'fraction', 'per-device busy time'),
               ('kpi', 'kernel_duration', 'ms', 'device-op durations'),
               ('kpi', 'compilation_time', 's', 'compile time'),
               ('pattern', 'many_small_kernels', 'fraction', 'device-op durations'),
               ('pattern', 'device_idle_gaps', 'fraction', 'per-device busy time'),
               ('pattern', 'large_transfers', 'fraction', 'transfer time')) AS k
  CROSS JOIN profsum_trace AS t
  WHERE t.summary_json IS NOT NULL
  UNION ALL
  -- (every trace with facts, and every v1 import, which has none)
  SELECT trace_id, label, 'kpi', 'memory_bandwidth', NULL, NULL, 'fraction', 'unavailable',
         CASE WHEN v1 THEN 'imported from a profile_summary.v1 document, which carries no bytes_accessed or device '
                           || 'bandwidth: import the trace for this figure'
              ELSE 'memory bandwidth utilization needs the ops'' bytes_accessed and the device''s bandwidth (plane stats '
                   || 'or the device_peaks import option): this trace lacks one of them (docs/roofline.md)' END
  FROM (SELECT t.trace_id, t.label, t.summary_json IS NOT NULL AS v1
        FROM profsum_trace AS t
        WHERE t.summary_json IS NOT NULL
           OR EXISTS (SELECT 1 FROM profsum_agg_fact AS f WHERE f.trace_id = t.trace_id)) AS m
  WHERE NOT EXISTS (SELECT 1 FROM profsum_kpis_xla AS x
                    WHERE x.trace_id = m.trace_id AND x.kpi = 'memory_bandwidth')
  UNION ALL
  SELECT trace_id, label, 'pattern', 'many_small_kernels', NULL,
         CASE WHEN n_ops >= 10 THEN n_small / n_ops END, 'fraction',
         CASE WHEN coalesce(n_ops, 0) < 10 OR n_small IS NULL THEN 'unavailable' WHEN n_small / n_ops >= 0.5 THEN 'detected'
              ELSE 'not_detected' END,
         CASE WHEN coalesce(n_ops, 0) <= 0 THEN 'no device ops in the trace'
              WHEN n_small IS NULL THEN 'no count of small ops stored for this trace (imported by an older profsum): re-import it'
              WHEN n_ops < 10 THEN printf('%d device ops (%s%% shorter than 0.1 ms): too few to call them many (10 or more are needed)',
                                          CAST(n_ops AS INTEGER), profsum_format_near(100.0 * n_small / n_ops, 1, 5))
              ELSE printf('%s%% of device ops are shorter than 0.1 ms%s', profsum_format_near(100.0 * n_small / n_ops, 1, 5),
                CASE WHEN n_small / n_ops < 0.5 THEN ''
                     WHEN small_ps IS NULL OR coalesce(all_ps, 0) <= 0 THEN ': poor fusion'
                     WHEN 10 * small_ps >= all_ps
                     THEN printf(', %s%% of device-op time: poor fusion', profsum_format_near(100.0 * small_ps / all_ps, 1, 5))
                     ELSE printf(', only %s%% of device-op time: little to gain by fusing them', profsum_format_near(100.0 * small_ps / all_ps, 1, 5))
                END) END
  FROM (SELECT f.trace_id, t.label, max(CASE f.name WHEN 'n_ops' THEN f.value END) AS n_ops,
               max(CASE f.name WHEN 'n_small_ops' THEN f.value END) AS n_small,
               CAST(round(max(CASE f.name WHEN 'small_op_duration' THEN f.value END) * 1e6) AS INTEGER) AS small_ps,
               CAST(round(max(CASE f.name WHEN 'op_duration' THEN f.value END) * 1e6) AS INTEGER) AS all_ps
        FROM profsum_agg_fact AS f JOIN profsum_trace AS t USING (trace_id)
        GROUP BY f.trace_id, t.label)
  UNION ALL
  -- (low: a device under 80 %, compared in whole picoseconds)
  SELECT trace_id, label, 'pattern', 'device_idle_gaps', NULL, min(v), 'fraction',
         CASE WHEN min(v) IS NULL THEN 'unavailable' WHEN max(low) THEN 'detected' ELSE 'not_detected' END,
         CASE WHEN min(v) IS NULL THEN 'no device has time between its first and last op (their ops take 0 ps): no utilization'
              ELSE printf('lowest device utilization %s%%%s', profsum_format_near(100.0 * min(v), 1, 5),
                CASE WHEN max(low) THEN ': devices wait on the host or on synchronization' ELSE '' END) END
  FROM (SELECT trace_id, label, CASE WHEN sp > 0 THEN CAST(b AS REAL) / sp END AS v,
               CASE WHEN sp > 0 THEN 5 * b < 4 * sp END AS low
        FROM (SELECT d.trace_id, t.label, CAST(round(d.busy_duration * 1e6) AS INTEGER) AS b,
                     CAST(round(d.span_duration * 1e6) AS INTEGER) AS sp
              FROM profsum_agg_device AS d JOIN profsum_trace AS t USING (trace_id)
              WHERE d.device IS NOT NULL))
  GROUP BY trace_id, label
  UNION ALL
  -- (transfer and busy time in whole picoseconds: compared exactly, the
  -- share their correctly rounded quotient)
  SELECT trace_id, label, 'pattern', 'large_transfers', NULL,
         CASE WHEN busy > 0 THEN CAST(transfer AS REAL) / busy END, 'fraction',
         CASE WHEN coalesce(busy, 0) <= 0 OR transfer IS NULL THEN 'unavailable' WHEN 10 * transfer > busy THEN 'detected'
              ELSE 'not_detected' END,
         CASE WHEN coalesce(busy, 0) <= 0 THEN 'no device busy time in the trace'
              WHEN transfer IS NULL THEN 'no transfer time stored for this trace (imported by an older profsum): re-import it'
              ELSE printf('host<->device transfer ops cover %s%% of device busy time%s%s',
                profsum_format_near(100.0 * transfer / busy, 1, 5),
                CASE WHEN offload > 0
                     THEN printf(' (host-offload copies %s%%)', profsum_format_near(100.0 * offload / busy, 1, 5))
                     ELSE '' END,
                CASE WHEN 10 * transfer > busy THEN ': keep data on device, prefetch, overlap transfers' ELSE '' END) END
  FROM (SELECT f.trace_id, t.label,
               CAST(round(max(CASE f.name WHEN 'transfer_duration' THEN f.value END) * 1e6) AS INTEGER) AS transfer,
               CAST(round(max(CASE f.name WHEN 'host_offload_duration' THEN f.value END) * 1e6) AS INTEGER) AS offload,
               CAST(round(max(CASE f.name WHEN 'device_busy_duration' THEN f.value END) * 1e6) AS INTEGER) AS busy
        FROM profsum_agg_fact AS f JOIN profsum_trace AS t USING (trace_id)
        GROUP BY f.trace_id, t.label)
  UNION ALL
  -- a trace imported from a v1 summary file stores only its hot ops, not
  -- the exclusive time of all device ops: no share can be made of them
  -- the share in whole picoseconds (each op's exact sum, rounded back from
  -- its µs): an op that takes exactly half is not over 50 %, whatever the
  -- rounding of a sum of doubles would say.  The top op is the first hot
  -- op; with no hot op listed (the import option hot_op_limit 0), the op
  -- of most exclusive time (the first by name among equals).  Device ops
  -- that take 0 ps in all give no share: 'unavailable'.
  SELECT h.trace_id, h.label, 'pattern', 'one_op_dominating', NULL, v, 'fraction',
         CASE WHEN v1 OR v IS NULL THEN 'unavailable' WHEN dom THEN 'detected' ELSE 'not_detected' END,
         CASE WHEN v1 THEN 'a v1 summary file holds only the hot ops, not the exclusive time of all '
                           || 'device ops: import the trace for this share'
              WHEN v IS NULL THEN 'the device ops take 0 ps of exclusive time in all: no op has a share of it'
              ELSE printf('top op %s takes %s%% of device-op time%s',
                CASE WHEN length(name) > 80 THEN substr(name, 1, 79) || '…' ELSE name END,
                profsum_format_near(100.0 * v, 1, 5), CASE WHEN dom THEN ': optimize that op first' ELSE '' END) END
  FROM (SELECT p.*, CASE WHEN all_ps > 0 THEN top_ps / all_ps END AS v,
               coalesce(all_ps > 0 AND 2 * top_ps > all_ps, 0) AS dom
        FROM (SELECT n.trace_id, n.label, n.name, n.v1,
                     CASE WHEN NOT n.v1 THEN
                       (SELECT total(round(o.exclusive_duration * 1e6)) FROM profsum_agg_op AS o
                        WHERE o.trace_id = n.trace_id AND o.name = n.name) END AS top_ps,
                     CASE WHEN NOT n.v1 THEN
                       (SELECT total(round(o.exclusive_duration * 1e6)) FROM profsum_agg_op AS o
                        WHERE o.trace_id = n.trace_id) END AS all_ps
              FROM (SELECT t.trace_id, t.label, t.summary_json IS NOT NULL AS v1,
                           coalesce((SELECT h.name FROM profsum_hot_ops AS h WHERE h.trace_id = t.trace_id AND h.rank = 0),
                                    CASE WHEN t.summary_json IS NULL THEN
                                      (SELECT min(o.name) FROM profsum_agg_op AS o
                                       WHERE o.trace_id = t.trace_id
                                         AND round(o.exclusive_duration * 1e6)
                                             = (SELECT max(round(e.exclusive_duration * 1e6)) FROM profsum_agg_op AS e
                                                WHERE e.trace_id = t.trace_id)) END) AS name
                    FROM profsum_trace AS t) AS n
              WHERE n.name IS NOT NULL) AS p) AS h
  UNION ALL
  SELECT trace_id, label, 'pattern', 'float_nesting', NULL, v, 'fraction',
         CASE WHEN v IS NULL THEN 'unavailable' WHEN v >= 0.01 THEN 'detected' ELSE 'not_detected' END,
         CASE WHEN v IS NULL THEN 'no exact-time check stored (a trace imported by an older profsum)'
              WHEN coalesce(n_float, 0) = 0 THEN 'every order and nesting decision of the summary agrees with the exact times'
              ELSE printf('%d events nest otherwise on their exact times than in the timestamps'' doubles the summary '
                          || 'decides in (as the reference tool does): its per-track breakdown categories differ from '
                          || 'those on exact times by %.3f us in all, %s the exact total %.3f us (summary total '
                          || '%.3f us)%s', CAST(n_float AS INTEGER), moved,
                          -- a share reads as one up to 100 %; beyond, a ratio
                          CASE WHEN v > 1 THEN printf('%.2f times', v) ELSE printf('%.2f%% of', 100.0 * v) END,
                          exact_total, total,
                          CASE WHEN v >= 0.01 THEN '; read exact per-op times from trace_events'' excl_ps' ELSE '' END) END
  FROM (SELECT trace_id, label, n_float, exact_total, moved, total,
               CASE WHEN exact_total IS NULL OR moved IS NULL OR total IS NULL THEN NULL
                    WHEN exact_total > 0 THEN moved / exact_total
                    WHEN moved > 0 THEN 1.0 ELSE 0.0 END AS v
        FROM (SELECT f.trace_id, t.label,
                     max(CASE f.name WHEN 'float_nesting_events' THEN f.value END) AS n_float,
                     max(CASE f.name WHEN 'exact_breakdown_total' THEN f.value END) AS exact_total,
                     max(CASE f.name WHEN 'float_nesting_moved' THEN f.value END) AS moved,
                     (SELECT tot.duration FROM profsum_agg_breakdown AS c
                      JOIN profsum_agg_breakdown AS tot
                        ON tot.trace_id = c.trace_id AND tot.mode = c.mode AND tot.category = 'total'
                      WHERE c.trace_id = f.trace_id AND c.mode = 'exclusive_per_track'
                        AND c.category = 'compute') AS total
              FROM profsum_agg_fact AS f JOIN profsum_trace AS t USING (trace_id)
              GROUP BY f.trace_id, t.label))
  UNION ALL
  SELECT x.trace_id, x.label, x.kind, x.kpi, x.device, x.value, x.unit, x.band, x.explanation
  FROM profsum_kpis_xla AS x
  UNION ALL
  SELECT x.trace_id, x.label, x.kind, x.kpi, x.device, x.value, x.unit, x.band, x.explanation
  FROM profsum_kpis_mem AS x
  UNION ALL
  SELECT x.trace_id, x.label, x.kind, x.kpi, x.device, x.value, x.unit, x.band, x.explanation
  FROM profsum_kpis_wall AS x
);
