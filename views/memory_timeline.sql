-- profsum_memory_timeline: bytes in use over time per allocator, for plotting: the
-- span from its first to its last memory event cut into min(500, events) equal
-- buckets (one bucket when they share one time).  An empty bucket repeats the
-- bytes in use of the one before.
-- Requires: profsum_trace, profsum_agg_memory, profsum_agg_memory_timeline.
CREATE VIEW IF NOT EXISTS main.profsum_memory_timeline(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- The allocator, as profsum_memory names it (TEXT).
  allocator,
  -- Its device, as profsum_memory gives it (TEXT or NULL).
  device,
  -- Bucket number, 0-based (INTEGER).
  bucket,
  -- Start of the bucket, µs on the trace's clock (REAL).
  ts_us,
  -- Largest bytes_allocated in the bucket (INTEGER bytes).
  max_bytes_in_use,
  -- bytes_allocated after the bucket's last event (INTEGER bytes).
  end_bytes_in_use,
  -- Memory events in the bucket (INTEGER).
  num_events
) AS
SELECT l.trace_id, t.label, l.allocator, m.device, l.bucket, l.ts_us, l.max_bytes_in_use,
       l.end_bytes_in_use, l.num_events
FROM profsum_agg_memory_timeline AS l
JOIN profsum_trace AS t USING (trace_id)
LEFT JOIN profsum_agg_memory AS m ON m.trace_id = l.trace_id AND m.allocator = l.allocator;
