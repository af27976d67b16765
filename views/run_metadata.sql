-- profsum_run_metadata: run_metadata of profile_summary.v1 — filled when the
-- trace came from Weights & Biases, else all NULL.
-- Requires: profsum_trace.
CREATE VIEW IF NOT EXISTS main.profsum_run_metadata(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- entity/project/run_id (TEXT or NULL).
  run_path,
  -- W&B run id (TEXT or NULL).
  run_id,
  -- Artifact reference entity/project/name:version (TEXT or NULL).
  artifact_ref,
  -- Artifact name (TEXT or NULL).
  artifact_name,
  -- Accelerator type (TEXT or NULL).
  hardware_type,
  -- Mesh or topology (TEXT or NULL).
  mesh_or_topology,
  -- Git commit (TEXT or NULL).
  git_sha,
  -- Hash of the run config (TEXT or NULL).
  config_hash,
  -- Number of devices (INTEGER or NULL).
  num_devices,
  -- Number of hosts (INTEGER or NULL).
  num_hosts
) AS
SELECT trace_id, label,
       json_extract(run_metadata, '$.run_path'), json_extract(run_metadata, '$.run_id'),
       json_extract(run_metadata, '$.artifact_ref'), json_extract(run_metadata, '$.artifact_name'),
       json_extract(run_metadata, '$.hardware_type'), json_extract(run_metadata, '$.mesh_or_topology'),
       json_extract(run_metadata, '$.git_sha'), json_extract(run_metadata, '$.config_hash'),
       json_extract(run_metadata, '$.num_devices'), json_extract(run_metadata, '$.num_hosts')
FROM profsum_trace;
