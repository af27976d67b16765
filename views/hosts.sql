-- profsum_hosts: one row per host of a session imported with its hosts
-- (docs/sessions.md): its place on the session's time axis, its steps and
-- how often it was the straggler.
-- Requires: profsum_session, profsum_agg_host, profsum_trace,
-- profsum_agg_device, profsum_agg_step_span, profsum_host_steps,
-- profsum_stragglers.
CREATE VIEW IF NOT EXISTS main.profsum_hosts(
  -- Session id (INTEGER).
  session_id,
  -- Session label (TEXT).
  session_label,
  -- The host's trace id (INTEGER).
  trace_id,
  -- The host's trace label, <session label>/<host> (TEXT).
  label,
  -- Host name: <host> of the file name, -2, -3, ... when repeated in the session (TEXT).
  host,
  -- First XSpace hostname of the file, NULL for JSON (TEXT).
  hostname,
  -- Devices with device-op events (INTEGER).
  num_devices,
  -- The host's start after the session's origin, µs (REAL).
  offset_us,
  -- How the host was placed: profile_start_time, steps or none (TEXT).
  alignment,
  -- First event start to last event end of the trace, µs (REAL).
  span_us,
  -- Step numbers of the trace (INTEGER).
  step_count,
  -- Median of the host's step durations (profsum_host_steps.duration_us), µs (REAL).
  median_step_us,
  -- Steps of profsum_stragglers in which this host was the slowest, with lag_us > 0 (INTEGER).
  times_slowest
) AS
SELECT h.session_id, s.label, h.trace_id, t.label, h.host, json_extract(h.hostnames, '$[0]'),
       (SELECT count(*) FROM profsum_agg_device AS d WHERE d.trace_id = h.trace_id),
       h.offset_us, h.alignment, t.profile_end_ts - t.profile_start_ts,
       (SELECT count(DISTINCT step) FROM profsum_agg_step_span AS p WHERE p.trace_id = h.trace_id),
       (SELECT avg(d) FROM (SELECT x.duration_us AS d,
                                   row_number() OVER (ORDER BY x.duration_us) AS rn,
                                   count(*) OVER () AS cnt
                            FROM profsum_host_steps AS x WHERE x.trace_id = h.trace_id)
         WHERE rn IN ((cnt + 1) / 2, (cnt + 2) / 2)),
       (SELECT count(*) FROM profsum_stragglers AS g
         WHERE g.session_id = h.session_id AND g.slowest_host IS h.host AND g.lag_us > 0)
FROM profsum_agg_host AS h
JOIN profsum_session AS s ON s.session_id = h.session_id
JOIN profsum_trace AS t ON t.trace_id = h.trace_id;
