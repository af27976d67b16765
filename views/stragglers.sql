-- profsum_stragglers: per session and step that every compared host of the
-- session ran, the host that computed longest and how long the others
-- waited for it (docs/sessions.md).  compute = busy - collective of
-- profsum_host_steps.  The hosts compared are those with a step number
-- another host of the session has: a host whose steps match none (or that
-- has no step) is left out, with a host_steps_unmatched diagnostic, and
-- does not empty the comparison of the others.  In a session where no host
-- has a step, every host gets that diagnostic.
-- Requires: profsum_host_steps, profsum_agg_host.
CREATE VIEW IF NOT EXISTS main.profsum_stragglers(
  -- Session id (INTEGER).
  session_id,
  -- Session label (TEXT).
  session_label,
  -- Step number (INTEGER).
  step,
  -- The host with the largest compute time in the step (ties: the first host name) (TEXT).
  slowest_host,
  -- Its compute time (busy - collective), µs (REAL).
  slowest_compute_us,
  -- Median over the hosts of the compute time, µs (REAL).
  median_compute_us,
  -- slowest_compute_us - median_compute_us, µs (REAL).
  lag_us,
  -- Sum over the other hosts of max(0, their collective time - the slowest host's), µs (REAL).
  collective_wait_us
) AS
WITH hs AS (
  -- to the picosecond: a host's per-device sums added in another order
  -- must not make one host slower by a rounding error
  SELECT session_id, session_label, step, host, trace_id,
         round(busy_us - collective_us, 6) AS compute, round(collective_us, 6) AS coll
  FROM profsum_host_steps WHERE busy_us IS NOT NULL
), cmp AS (          -- the hosts compared: one of their step numbers is another host's
  SELECT DISTINCT a.session_id, a.trace_id FROM hs AS a
  JOIN hs AS b ON b.session_id = a.session_id AND b.step = a.step AND b.trace_id <> a.trace_id
), nh AS (
  SELECT session_id, count(*) AS n FROM cmp GROUP BY session_id
), common AS (       -- the steps every compared host ran
  SELECT hs.session_id, hs.step FROM hs JOIN cmp USING (session_id, trace_id) JOIN nh USING (session_id)
  GROUP BY hs.session_id, hs.step HAVING count(*) = max(nh.n)
), ranked AS (
  SELECT hs.*,
         row_number() OVER (PARTITION BY hs.session_id, hs.step ORDER BY compute DESC, host, trace_id) AS rk,
         row_number() OVER (PARTITION BY hs.session_id, hs.step ORDER BY compute, host, trace_id) AS ra,
         count(*) OVER (PARTITION BY hs.session_id, hs.step) AS cnt
  FROM hs JOIN cmp USING (session_id, trace_id) JOIN common USING (session_id, step)
), med AS (
  SELECT session_id, step, avg(compute) AS m FROM ranked
  WHERE ra IN ((cnt + 1) / 2, (cnt + 2) / 2) GROUP BY session_id, step
)
SELECT w.session_id, w.session_label, w.step, w.host, w.compute, med.m, w.compute - med.m,
       (SELECT coalesce(sum(max(0.0, o.coll - w.coll)), 0.0) FROM ranked AS o
        WHERE o.session_id = w.session_id AND o.step = w.step AND o.trace_id <> w.trace_id)
FROM ranked AS w JOIN med USING (session_id, step)
WHERE w.rk = 1;
