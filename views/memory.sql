-- profsum_memory: per trace and allocator, the peak of device memory in use within
-- the capture and what held it, from the XPlane's MemoryAllocation /
-- MemoryDeallocation events, or a PyTorch trace JSON's [memory] events
-- (docs/memory.md).  A trace without such events has
-- one row with allocator NULL and a status saying why; its numbers are NULL.
-- Requires: profsum_trace, profsum_agg_memory.
CREATE VIEW IF NOT EXISTS main.profsum_memory(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- allocator_name of the events, e.g. 'GPU_0_bfc'; for events that give index_on_host or device_ordinal instead (PJRT on TPU), that index as text, '0'; PyTorch's device, 'cuda:0', 'hip:0', 'cpu' (TEXT or NULL on a status row).
  allocator,
  -- '/device:GPU:N' for an allocator GPU_N_bfc, cuda:N or hip:N; for an allocator named by index N, the capture's /device:TPU:N plane, else its /device:GPU:N; else NULL (TEXT).
  device,
  -- Largest bytes_allocated (bytes in use after an event; PyTorch: Total Allocated) over the capture's events (INTEGER bytes).
  peak_bytes,
  -- When it was first reached, µs on the trace's clock (as trace_events and the step spans) (REAL).
  peak_ts_us,
  -- The step whose interval (a device Steps event, else a host 'train' event; PyTorch: a ProfilerStep#N event) contains the peak (INTEGER or NULL).
  peak_step,
  -- Largest peak_bytes_in_use: the allocator's peak since it started, possibly before the capture (INTEGER bytes).
  lifetime_peak_bytes,
  -- The device plane's memory_size (PyTorch: the GPU's totalGlobalMem in deviceProperties); without it, for an allocator named by index, the capacity its peak event states (bytes_allocated + bytes_reserved + bytes_available; note says so) (INTEGER bytes or NULL: no device, or neither).
  device_memory_bytes,
  -- peak_bytes / device_memory_bytes (REAL fraction or NULL).
  peak_share,
  -- MemoryAllocation events (PyTorch: [memory] events with Bytes >= 0) (INTEGER).
  num_allocations,
  -- MemoryDeallocation events (PyTorch: [memory] events with Bytes < 0) (INTEGER).
  num_deallocations,
  -- Σ allocation_bytes of the allocations (INTEGER bytes).
  allocated_bytes,
  -- Allocations made within the capture and still live at the peak (INTEGER).
  live_allocations_at_peak,
  -- Their Σ allocation_bytes (INTEGER bytes).
  known_live_bytes_at_peak,
  -- peak_bytes − known_live_bytes_at_peak: held by allocations made before the capture (INTEGER bytes, 0 or more).
  unknown_live_bytes_at_peak,
  -- JSON array of up to 10 live allocations at the peak, bytes desc: addr, bytes, requested_bytes, tf_op, region_type, data_type, shape, allocated_at_us (TEXT).
  top_holders,
  -- JSON array of {step, allocations, bytes} per step, NULL without steps (TEXT).
  per_step,
  -- ok | no_allocation_events | not_in_trace_json | peak_unknown (over 1,048,576 memory events: the peak is not known) | not_computed (imported by a profsum without memory figures: re-import) (TEXT).
  status,
  -- What the figures leave out, or why there are none (TEXT).
  note
) AS
SELECT t.trace_id, t.label, m.allocator, m.device, m.peak_bytes, m.peak_ts_us, m.peak_step,
       m.lifetime_peak_bytes, m.device_memory_bytes,
       CASE WHEN m.device_memory_bytes > 0 THEN CAST(m.peak_bytes AS REAL) / m.device_memory_bytes END,
       m.num_allocations, m.num_deallocations, m.allocated_bytes, m.live_allocations_at_peak,
       m.known_live_bytes_at_peak,
       CASE WHEN m.known_live_bytes_at_peak IS NOT NULL THEN max(0, m.peak_bytes - m.known_live_bytes_at_peak) END,
       m.top_holders, m.per_step,
       coalesce(m.status, 'not_computed'),
       CASE WHEN m.status IS NULL THEN
         CASE WHEN t.summary_json IS NOT NULL THEN 'imported from a summary document: no events to read'
              ELSE 'imported by a profsum without memory figures: re-import the trace' END
         ELSE m.note END
FROM profsum_trace AS t LEFT JOIN profsum_agg_memory AS m USING (trace_id);
