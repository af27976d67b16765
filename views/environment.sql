-- profsum_environment: one row per trace, what its capture says of where and
-- when it ran: the JAX and jaxlib versions (the /host:metadata plane of an
-- XPlane), its accelerators (TPU and GPU planes with events, SparseCore
-- planes not counted: they are parts of a chip) and the profiling session's
-- wall-clock start and length (the Task Environment plane).  Of a trace
-- JSON, what its top-level object states beside traceEvents: PyTorch's
-- profiler (Kineto) writes the GPUs' properties (device_model and n_devices
-- come from them), the runtime versions and the rank; a JAX trace JSON
-- states none of this (NULL columns, metadata '{}').  A run that moved to
-- another JAX, jaxlib or device is compared with care: profsum_compare_md
-- says so.  A trace imported before profsum kept these has none: import
-- it again.
-- Requires: profsum_trace, profsum_agg_env, profsum_agg_xla_device.
CREATE VIEW IF NOT EXISTS main.profsum_environment(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- xplane_pb, perfetto_trace_json, ... (profsum_trace.source_format) (TEXT).
  source_format,
  -- jax_version of /host:metadata, else NULL (TEXT).
  jax_version,
  -- jaxlib_version of /host:metadata, else NULL (TEXT).
  jaxlib_version,
  -- The device_type_string of the TPU and GPU planes with events, e.g. 'TPU v6 Lite'; several distinct ones joined with ', ' in name order; without such planes, a trace JSON's deviceProperties names (the same way); NULL when none says (TEXT).
  device_model,
  -- TPU and GPU planes (processes) with events, SparseCore planes not counted; without such planes, the entries of a trace JSON's deviceProperties (the GPUs the process could see, used or not); else 0 (INTEGER).
  n_devices,
  -- Task Environment's profile_start_time as ISO-8601 UTC with microseconds, e.g. 2026-07-09T06:46:19.390989Z; NULL when absent (TEXT).
  profile_start_utc,
  -- profile_stop_time − profile_start_time, s; NULL unless both are known and in order (REAL).
  profile_duration_s,
  -- Every stored name → value of profsum_agg_env as a JSON object, names in order (TEXT).
  metadata
) AS
SELECT t.trace_id, t.label, t.source_format,
       (SELECT e.value FROM profsum_agg_env AS e WHERE e.trace_id = t.trace_id AND e.name = 'jax_version'),
       (SELECT e.value FROM profsum_agg_env AS e WHERE e.trace_id = t.trace_id AND e.name = 'jaxlib_version'),
       CASE WHEN EXISTS (SELECT 1 FROM profsum_agg_xla_device AS d
                         WHERE d.trace_id = t.trace_id AND d.kind IN ('TPU', 'GPU') AND d.has_events
                           AND d.device NOT LIKE '% SparseCore%')
            THEN (SELECT group_concat(m.model, ', ')
                  FROM (SELECT DISTINCT d.model FROM profsum_agg_xla_device AS d
                        WHERE d.trace_id = t.trace_id AND d.kind IN ('TPU', 'GPU') AND d.has_events
                          AND d.model IS NOT NULL AND d.device NOT LIKE '% SparseCore%'
                        ORDER BY d.model) AS m)
            ELSE (SELECT e.value FROM profsum_agg_env AS e WHERE e.trace_id = t.trace_id AND e.name = 'device_model') END,
       coalesce(nullif((SELECT count(*) FROM profsum_agg_xla_device AS d
                        WHERE d.trace_id = t.trace_id AND d.kind IN ('TPU', 'GPU') AND d.has_events
                          AND d.device NOT LIKE '% SparseCore%'), 0),
                (SELECT CAST(e.value AS INTEGER) FROM profsum_agg_env AS e
                 WHERE e.trace_id = t.trace_id AND e.name = 'device_count'
                   AND e.value GLOB '[1-9]*' AND NOT e.value GLOB '*[^0-9]*' AND length(e.value) <= 9), 0),
       (SELECT strftime('%Y-%m-%dT%H:%M:%S', s.ns / 1000000000, 'unixepoch') || printf('.%06dZ', (s.ns / 1000) % 1000000)
        FROM (SELECT CAST(e.value AS INTEGER) AS ns FROM profsum_agg_env AS e
              WHERE e.trace_id = t.trace_id AND e.name = 'profile_start_time'
                AND e.value GLOB '[0-9]*' AND NOT e.value GLOB '*[^0-9]*' AND length(e.value) <= 19) AS s),
       (SELECT (b.ns - a.ns) / 1e9
        FROM (SELECT CAST(e.value AS INTEGER) AS ns FROM profsum_agg_env AS e
              WHERE e.trace_id = t.trace_id AND e.name = 'profile_start_time'
                AND e.value GLOB '[0-9]*' AND NOT e.value GLOB '*[^0-9]*' AND length(e.value) <= 19) AS a,
             (SELECT CAST(e.value AS INTEGER) AS ns FROM profsum_agg_env AS e
              WHERE e.trace_id = t.trace_id AND e.name = 'profile_stop_time'
                AND e.value GLOB '[0-9]*' AND NOT e.value GLOB '*[^0-9]*' AND length(e.value) <= 19) AS b
        WHERE b.ns >= a.ns),
       coalesce((SELECT json_group_object(o.name, o.value)
                 FROM (SELECT e.name, e.value FROM profsum_agg_env AS e
                       WHERE e.trace_id = t.trace_id ORDER BY e.name) AS o), '{}')
FROM profsum_trace AS t;
