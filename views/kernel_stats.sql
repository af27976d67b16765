-- profsum_kernel_stats: GPU kernels with kernel_details (XPlane stat or trace JSON
-- arg), one row per (kernel_name, block_dim, grid_dim, registers_per_thread,
-- static_shared_bytes, dynamic_shared_bytes, hlo_op) over all devices.  A value
-- of kernel_details out of its range (registers above 65536, a dimension above
-- 2^31, occ_pct 0) is NULL, with a kernel_details_out_of_range diagnostic
-- (docs/memory.md).
-- Requires: profsum_trace, profsum_agg_kernel.
CREATE VIEW IF NOT EXISTS main.profsum_kernel_stats(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- Kernel name: the event's name (TEXT).
  kernel_name,
  -- hlo_op of the event (TEXT or NULL).
  hlo_op,
  -- hlo_module of the event; the first in sort order when its executions differ (TEXT or NULL).
  hlo_module,
  -- Threads per block 'x,y,z' (missing dimensions are 1) (TEXT or NULL).
  block_dim,
  -- Blocks per grid 'x,y,z' (TEXT or NULL).
  grid_dim,
  -- Registers per thread (regs) (INTEGER or NULL).
  registers_per_thread,
  -- Static shared memory per block: static_shared, shm, or AMD group_mem (LDS) (INTEGER bytes or NULL).
  static_shared_bytes,
  -- Dynamic shared memory per block: dynamic_shared (INTEGER bytes or NULL).
  dynamic_shared_bytes,
  -- occ_pct, 0-100; the largest seen over the executions (REAL or NULL when absent or 0).
  occupancy_pct,
  -- Distinct devices the kernel ran on (INTEGER).
  devices,
  -- Executions (INTEGER).
  occurrences,
  -- Σ duration, µs (REAL).
  total_duration_us,
  -- total_duration_us / occurrences, µs (REAL).
  avg_duration_us,
  -- Shortest execution, µs (REAL).
  min_duration_us,
  -- Longest execution, µs (REAL).
  max_duration_us
) AS
SELECT k.trace_id, t.label, k.kernel_name, k.hlo_op, k.hlo_module, k.block_dim, k.grid_dim,
       k.registers_per_thread, k.static_shared_bytes, k.dynamic_shared_bytes, k.occupancy_pct,
       k.devices, k.occurrences, k.total_duration_us, k.total_duration_us / k.occurrences,
       k.min_duration_us, k.max_duration_us
FROM profsum_agg_kernel AS k JOIN profsum_trace AS t USING (trace_id);
