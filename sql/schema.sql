-- profsum schema: the tables an import fills (see docs/summary.md).
--
-- Three layers, all keyed by trace_id:
--   profsum_trace        one row per imported trace: provenance, overview, options
--   profsum_agg_*        knob-independent aggregates computed in one pass over
--                        the trace (C, ext/summary/summary_engine.c); every view and
--                        every export is derived from these
--   profsum_sec_*        the summary sections for the knobs given at import
--                        (ext/summary/summary_doc.c); the public views read these
-- Durations are REAL microseconds computed from exact integer picoseconds
-- (correctly rounded), the unit of the profile_summary.v1 document; step
-- durations and gap lengths are the reference's own doubles instead
-- (docs/summary.md, "Decisions in doubles, sums exact").  The *_ref
-- columns hold sums as the reference's doubles add them (its order, its
-- rounding): rows whose exact sums tie are ordered by them, as the
-- reference orders them.
--
-- The file is executed by profsum_import() with "main." replaced by the
-- target schema; every statement must be idempotent (IF NOT EXISTS).  A
-- database made by another profsum is brought up to this file
-- (ext/summary/schema.c): views made again, missing columns added at the end of
-- their table.  So a new column goes at the end of its table, one per
-- line, and is nullable or has a DEFAULT.

-- One row per import: a trace (or a profile_summary.v1 document), its
-- provenance, its overview counts and the options it was imported with.
CREATE TABLE IF NOT EXISTS main.profsum_trace(
  trace_id INTEGER PRIMARY KEY AUTOINCREMENT, -- stable id; never reused, even after replace
  label TEXT NOT NULL UNIQUE,          -- unique name (default: derived from the file)
  series TEXT,                         -- groups runs for trends (options.series)
  source_path TEXT,                    -- the path exactly as given to profsum_import
  trace_path TEXT,                     -- the file actually read (the pick in a folder)
  source_format TEXT NOT NULL,         -- 'perfetto_trace_json'; a v1 file: its own source_format
  sha256 TEXT,                         -- SHA-256 (hex) of the trace file as stored; a v1 file: its trace_sha256
  size INTEGER,                        -- size in bytes of the file read
  imported_at TEXT NOT NULL,           -- import time, ISO-8601 UTC with microseconds and Z (six decimals always, `.000000` at a whole second, so that a series' runs order by it as text; traces stored before 2026-12-04 may lack them there)
  generated_at_utc TEXT NOT NULL,      -- the document's generated_at_utc (the instant of imported_at, written as Python writes it: no decimals at a whole second; or from a v1 file)
  options TEXT NOT NULL,               -- options_json as used (JSON object, defaults filled in)
  profsum_version TEXT NOT NULL,       -- profsum_version() of the importer
  display_time_unit TEXT,              -- displayTimeUnit of the trace (echoed, never applied)
  num_events_total INTEGER,            -- traceEvents entries
  num_complete_events INTEGER,         -- X events accepted by summary-v1 §1.3
  num_processes INTEGER,               -- pids with a process_name M event
  num_threads INTEGER,                 -- (pid, tid) with a thread_name M event
  profile_start_ts REAL,               -- min ts of accepted X events, µs (NULL if none)
  profile_end_ts REAL,                 -- max ts+dur of accepted X events, µs (NULL if none)
  suspected_truncation INTEGER NOT NULL DEFAULT 0, -- 1 if exactly 1,000,000 or 5,000,000 complete events
  quality_warnings TEXT NOT NULL DEFAULT '[]',     -- JSON array of strings
  run_ids TEXT NOT NULL DEFAULT '[]',              -- JSON array: up to 20 args.run_id by frequency
  source_file_hints TEXT NOT NULL DEFAULT '[]',    -- JSON array: up to 20 args.source by frequency
  run_metadata TEXT NOT NULL DEFAULT '{}',         -- JSON object of summary-v1 run_metadata (all null locally)
  summary_json TEXT,                   -- the v1 document as imported (NULL for a trace: marks v1 imports)
  session_id INTEGER,                  -- profsum_session.session_id of a host imported with its session (hosts/session 'all'), else NULL
  host TEXT,                           -- that host's name in the session (from the file name; a repeated name gets -2, -3, ...), else NULL
  profsum_build TEXT                   -- fingerprint of the importer's sources (profsum_debug()'s build_id): option reuse takes only a trace of the same; NULL for one imported before it was kept
);

-- Per step number: the mean duration over the events of that step (summary-v1 §4.3).
CREATE TABLE IF NOT EXISTS main.profsum_agg_step(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  step INTEGER NOT NULL,               -- step number
  duration REAL NOT NULL,              -- mean duration of the step's events, µs
  n_events INTEGER NOT NULL,           -- events averaged (one per device)
  PRIMARY KEY(trace_id, step)
) WITHOUT ROWID;

-- Time breakdown buckets in both modes (summary-v1 §4.4).
CREATE TABLE IF NOT EXISTS main.profsum_agg_breakdown(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  mode TEXT NOT NULL,                  -- 'exclusive_per_track' | 'exclusive_global'
  category TEXT NOT NULL,              -- compute | communication | host | stall | other | total
  duration REAL NOT NULL,              -- µs ('total' = total_duration of the mode)
  duration_ref REAL,                   -- per-track mode: duration as the reference's doubles add it, which the v1 document shows (NULL: a v1 file's rows, or a trace imported before 2026-12-04: use duration)
  PRIMARY KEY(trace_id, mode, category)
) WITHOUT ROWID;

-- Every device op name (hot-op candidates before ranking and the limit; §4.5).
CREATE TABLE IF NOT EXISTS main.profsum_agg_op(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  name TEXT NOT NULL,                  -- exact event name
  count INTEGER NOT NULL,              -- complete events of this name on device-op threads
  total_duration REAL NOT NULL,        -- Σ dur, µs
  exclusive_duration REAL NOT NULL,    -- Σ exclusive time (§2), µs
  shape_signature TEXT,                -- most common signature of args.long_name; an empty one (a text whose only shapes are like `f32[ ]`) counts as none, as the reference tests it for truth
  source_file TEXT,                    -- most common args.source
  tf_op_path TEXT,                     -- most common raw args.tf_op
  flop_proxy_per_invocation REAL,      -- mean flop proxy over events that have one
  exclusive_ref REAL,                  -- exclusive_duration as the reference's doubles add it: the v1 document's value, orders ties (NULL: use exclusive_duration)
  total_ref REAL,                      -- total_duration as the reference's doubles add it: the v1 document's value, orders ties (NULL: use total_duration)
  PRIMARY KEY(trace_id, name)
) WITHOUT ROWID;

-- Communication ops by collective (§4.7), all of them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_comm(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  collective TEXT NOT NULL,            -- all-reduce | all-gather | reduce-scatter | all-to-all | ... (profsum_collective)
  count INTEGER NOT NULL,              -- communication op events of this collective
  total_duration REAL NOT NULL,        -- Σ exclusive time, µs
  total_ref REAL,                      -- total_duration as the reference's doubles add it: the v1 document's value, orders ties (NULL: use total_duration)
  PRIMARY KEY(trace_id, collective)
) WITHOUT ROWID;

-- Idle gaps before device ops, by payload op (§4.8), all of them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_gap(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  name TEXT NOT NULL,                  -- payload op name
  marker_op TEXT NOT NULL,             -- most frequent first op after the gap
  count INTEGER NOT NULL,              -- gaps counted for this payload op
  total_gap_duration REAL NOT NULL,    -- µs
  max_gap_duration REAL NOT NULL,      -- µs
  PRIMARY KEY(trace_id, name)
) WITHOUT ROWID;

-- Hierarchical regions after unary-path pruning (§4.9), all of them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_region(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  path TEXT NOT NULL,                  -- parts joined by '=>'
  depth INTEGER NOT NULL,              -- number of parts (1 for a root region)
  count INTEGER NOT NULL,              -- device-op events at or below this path
  inclusive_duration REAL NOT NULL,    -- Σ exclusive time of events at or below, µs
  exclusive_duration REAL NOT NULL,    -- Σ exclusive time of events exactly here, µs
  inclusive_ref REAL,                  -- inclusive_duration as the reference's doubles add it: the v1 document's value, orders ties, decides pruning (NULL: use inclusive_duration)
  exclusive_ref REAL,                  -- exclusive_duration as the reference's doubles add it: the v1 document's value, orders ties (NULL: use exclusive_duration)
  PRIMARY KEY(trace_id, path)
) WITHOUT ROWID;

-- Gap contexts by (payload op, region path) (§4.10), all of them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_gap_context(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  op_name TEXT NOT NULL,               -- payload op name
  region_path TEXT NOT NULL,           -- the payload op's first <= 4 region parts, '=>'-joined (§4.10)
  count INTEGER NOT NULL,              -- gaps counted
  total_gap_duration REAL NOT NULL,    -- µs
  PRIMARY KEY(trace_id, op_name, region_path)
) WITHOUT ROWID;

-- Oddities met while reading the trace (profsum_diagnostics kinds): the
-- first 5 of each kind and a 'suppressed' row with the total of a kind that
-- had more; every one with the import option store_diagnostics 'all'
-- (profsum_diagnostics(path) lists every one).
CREATE TABLE IF NOT EXISTS main.profsum_agg_diagnostic(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  idx INTEGER,                         -- entry index (NULL: file-level)
  byte_offset INTEGER,                 -- in the decompressed JSON
  kind TEXT NOT NULL,                  -- e.g. time_rounded, trailing_comma (docs/trace_events.md lists them)
  detail TEXT NOT NULL                 -- what was met and what was done about it
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_diagnostic_trace ON profsum_agg_diagnostic(trace_id);

-- ---------------------------------------------------------------------
-- Sections for the knobs given at import (ext/summary/summary_doc.c and
-- doc_tables.c write them).

-- step_time.all_steps and step_time.steady_state_steps of the document.
CREATE TABLE IF NOT EXISTS main.profsum_sec_step_stats(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  scope TEXT NOT NULL,                 -- 'all' | 'steady'
  count INTEGER NOT NULL,              -- steps
  mean REAL,                           -- µs, NULL when count = 0
  median REAL,                         -- µs, NULL when count = 0
  p90 REAL,                            -- µs, NULL when count = 0
  min REAL,                            -- µs, NULL when count = 0
  max REAL,                            -- µs, NULL when count = 0
  PRIMARY KEY(trace_id, scope)
) WITHOUT ROWID;

-- step_time.classes of the document (steady steps split by duration, §4.3).
CREATE TABLE IF NOT EXISTS main.profsum_sec_step_class(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  rank INTEGER NOT NULL,               -- 0-based order in step_time.classes
  name TEXT NOT NULL,                  -- typical | light | heavy
  count INTEGER NOT NULL,              -- steady steps in the class
  fraction_of_steady REAL NOT NULL,    -- count / steady steps
  mean REAL,                           -- µs
  median REAL,                         -- µs
  p90 REAL,                            -- µs
  min REAL,                            -- µs
  max REAL,                            -- µs
  representative_step INTEGER,         -- the step whose duration is closest to the class median (ties: smaller step)
  representative_duration REAL,        -- that step's duration, µs
  periodicity INTEGER,                 -- heavy class: the most frequent step distance (> 1) between its steps; else NULL
  PRIMARY KEY(trace_id, rank)
) WITHOUT ROWID;

-- hot_ops of the document: device ops by exclusive time, hot_op_limit of them.
CREATE TABLE IF NOT EXISTS main.profsum_sec_hot_op(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  rank INTEGER NOT NULL,               -- 0-based order in hot_ops
  name TEXT NOT NULL,                  -- exact event name
  canonical_name TEXT NOT NULL,        -- profsum_canonical_op(name)
  category TEXT NOT NULL,              -- classify_op(name): stall | communication | compute
  count INTEGER NOT NULL,              -- events
  total_duration REAL NOT NULL,        -- Σ dur, µs
  exclusive_duration REAL NOT NULL,    -- Σ exclusive time, µs
  avg_duration REAL NOT NULL,          -- total_duration / count, µs
  shape_signature TEXT,                -- most common signature of args.long_name
  source_file TEXT,                    -- most common args.source
  tf_op_path TEXT,                     -- most common args.tf_op
  flop_proxy_per_invocation REAL,      -- mean flop proxy (profsum_flop_proxy), NULL when none
  PRIMARY KEY(trace_id, rank)
) WITHOUT ROWID;

-- semantic_families of the document: the hot ops (after hot_op_limit) grouped by family.
CREATE TABLE IF NOT EXISTS main.profsum_sec_family(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  rank INTEGER NOT NULL,               -- 0-based order in semantic_families
  family TEXT NOT NULL,                -- profsum_semantic_family(name)
  count INTEGER NOT NULL,              -- Σ count of the family's hot ops
  total_duration REAL NOT NULL,        -- Σ dur, µs
  exclusive_duration REAL NOT NULL,    -- Σ exclusive time, µs
  share_of_total REAL NOT NULL,        -- exclusive_duration / max(breakdown total, Σ hot-op exclusive)
  avg_duration REAL NOT NULL,          -- total_duration / count, µs
  avg_exclusive_duration REAL NOT NULL,-- exclusive_duration / count, µs
  example_op TEXT,                     -- the family's highest-ranked hot op
  dominant_shape_signature TEXT,       -- most common shape signature of its ops, weighted by count
  flop_proxy_total REAL,               -- Σ flop_proxy_per_invocation × count over its ops, NULL when none
  time_per_flop_proxy REAL,            -- exclusive_duration / flop_proxy_total, NULL when not > 0
  PRIMARY KEY(trace_id, rank)
) WITHOUT ROWID;

-- optimization_candidates of the document ("what should we try next?").
CREATE TABLE IF NOT EXISTS main.profsum_sec_candidate(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  rank INTEGER NOT NULL,               -- 0-based order in optimization_candidates
  candidate_id TEXT NOT NULL,          -- the rule that fired: communication-heavy, stall-heavy, ... (summary-v1 §4.12)
  title TEXT NOT NULL,                 -- one line
  rationale TEXT NOT NULL,             -- why, with the numbers
  evidence TEXT NOT NULL,              -- JSON array of strings
  suggestions TEXT NOT NULL,           -- JSON array of strings
  PRIMARY KEY(trace_id, rank)
) WITHOUT ROWID;

-- ---------------------------------------------------------------------
-- Inputs of the KPIs (profsum_kpis), computed in the same pass.

-- Per device (process named /device:...): its device-op events (XLA Ops,
-- Async XLA Ops, Stream #... threads).
CREATE TABLE IF NOT EXISTS main.profsum_agg_device(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  device TEXT NOT NULL,                -- process name, e.g. /device:TPU:0
  n_ops INTEGER NOT NULL,              -- device-op events
  n_small_ops INTEGER NOT NULL,        -- of which shorter than 0.1 ms
  busy_duration REAL NOT NULL,         -- union of device-op intervals, µs
  span_duration REAL NOT NULL,         -- first device-op start to last device-op end, µs
  median_op_duration REAL,             -- median device-op duration, µs
  PRIMARY KEY(trace_id, device)
) WITHOUT ROWID;

-- Trace-level facts: name → value.
--   median_op_duration   median duration of all device-op events, µs
--   n_ops, n_small_ops   device-op events; those under 0.1 ms
--   op_duration, small_op_duration  Σ dur of the device-op events; of those under
--                        0.1 ms, µs (overlapping ops count each)
--   compile_duration     Σ dur of host events whose name contains "compile" (any case), µs
--   transfer_duration    Σ over devices of the union of their transfer ops, µs: at most
--                        device_busy_duration.  A transfer op is a device op named like
--                        memcpy|h2d|d2h|host?to?device|device?to?host|infeed|outfeed|
--                        transfer (any case), or a host-offload copy (below)
--   host_offload_duration Σ over devices of the union of their host-offload copies, µs:
--                        at most transfer_duration.  A host-offload copy is xprof's: a
--                        name holding copy-start, copy-done, dynamic-slice-start/-done or
--                        dynamic-update-slice-start/-done (with case) whose HLO text (its
--                        long_name, an XPlane's raw metadata name, or the name itself) holds
--                        "S(5)", the host memory space of a TPU layout; not on an Async
--                        XLA Ops line
--   device_busy_duration Σ over devices of busy_duration, µs
--   exact_breakdown_total the per-track breakdown's total with the nesting (§2) decided on
--                        exact times, µs (the summary decides it in the timestamps' doubles,
--                        as the reference; equal to its total when no decision differed)
--   float_nesting_events events whose exclusive time differs between the two nestings
--   float_nesting_moved  Σ over the five categories of |summary − exact nesting|, µs
--   step_overlap_wall, step_overlap_compute, step_overlap_collective,
--   step_overlap_transfer, step_overlap_idle
--                        what the profsum_agg_step_wall rows of the steps the KPIs read
--                        (the steady steps; every step when all are warmup steps) count
--                        more than each device's union of those steps, per part, summed
--                        over devices, µs; only when such steps overlap (the KPIs, the
--                        advice and the reports subtract them: each instant once)
CREATE TABLE IF NOT EXISTS main.profsum_agg_fact(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  name TEXT NOT NULL,                  -- one of the names above
  value REAL,                          -- its value (µs for durations); NULL when unknown
  PRIMARY KEY(trace_id, name)
) WITHOUT ROWID;

-- ---------------------------------------------------------------------

-- Regression history (ext/history/history.c; docs/compare.md).  One row per
-- profsum_track() call, per profsum_bundle() with "history": true and per
-- line of a JSONL history read by profsum_history_import(); record_json is
-- the summary-v1-tools-spec §4.2 record exactly as its JSONL line
-- (json.dumps(record, sort_keys=True)), so profsum_history_export() writes
-- the records back unchanged, in record_id order.
CREATE TABLE IF NOT EXISTS main.profsum_history_record(
  record_id INTEGER PRIMARY KEY AUTOINCREMENT, -- record order (= JSONL line order)
  created_at TEXT NOT NULL,            -- when the row was written, ISO-8601 UTC with microseconds and Z
  label TEXT,                          -- the record's label (NULL when none)
  status TEXT,                         -- assessment.status: pass | warn | fail (NULL if absent)
  before_trace_id INTEGER,             -- profsum_trace.trace_id of before (NULL for imported records)
  after_trace_id INTEGER,              -- profsum_trace.trace_id of after (NULL for imported records)
  series TEXT,                         -- profsum_trace.series of the after trace (NULL if none)
  origin TEXT NOT NULL,                -- 'track' | 'bundle' | 'import'
  record_json TEXT NOT NULL            -- the §4.2 record: compact JSON with sorted keys
);
CREATE INDEX IF NOT EXISTS main.profsum_history_record_label ON profsum_history_record(label, record_id);

-- What shaped this database's profsum objects (ext/summary/schema.c): the
-- fingerprint of the schema that created or last upgraded them, and the
-- profsum that did it.  An import by a profsum with another schema drops
-- and recreates profsum's views, adds the columns a table lacks, and
-- rewrites these rows; the rows of the other tables are kept as stored.
CREATE TABLE IF NOT EXISTS main.profsum_meta(
  key TEXT PRIMARY KEY,                -- 'schema_id' (16 hex digits) | 'profsum_version'
  value TEXT NOT NULL                  -- the fingerprint, or the profsum_version() that wrote it
) WITHOUT ROWID;

-- Step spans: every event that makes a step (summary §4.3: a Steps-line
-- event of a device, else a host 'train' event with args.step_num), with
-- its place in time, for the views that cut time by step.
CREATE TABLE IF NOT EXISTS main.profsum_agg_step_span(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  step INTEGER NOT NULL,               -- step number
  device TEXT,                         -- process name of the event (a /device: or /host: name)
  pid INTEGER,                         -- its pid
  start_us REAL NOT NULL,              -- start, µs on the clock of trace_events.ts (ns): ts = start_us × 1000
  end_us REAL NOT NULL,                -- end, µs
  start_ps INTEGER NOT NULL,           -- start, ps after the trace's first event (exact)
  dur_ps INTEGER NOT NULL              -- duration, ps (exact)
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_step_span_i ON profsum_agg_step_span(trace_id, step);

-- Step wall time (ext/summary/engine_wall.c): one row per step and device,
-- over the union of that step's spans, each instant counted once:
-- collective over transfer over compute, idle where no device op runs;
-- the four add up to wall_us.
CREATE TABLE IF NOT EXISTS main.profsum_agg_step_wall(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  step INTEGER NOT NULL,               -- step number
  device TEXT,                         -- process name of the device measured
  pid INTEGER,                         -- its pid
  start_us REAL NOT NULL,              -- the step's start, µs on the clock of trace_events.ts (ns): ts = start_us × 1000
  wall_us REAL NOT NULL,               -- the step's duration, µs
  compute_us REAL NOT NULL,            -- covered by compute ops only, µs
  collective_us REAL NOT NULL,         -- covered by a communication op, µs
  transfer_us REAL NOT NULL,           -- covered by a transfer op and no communication op, µs
  idle_us REAL NOT NULL                -- covered by no device op, µs
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_step_wall_i ON profsum_agg_step_wall(trace_id, step);
-- ---------------------------------------------------------------------
-- Memory and GPU kernels (ext/summary/insights_mem*.c; docs/memory.md).

-- Per (trace, allocator): the peak of bytes in use and what held it, from
-- the XPlane's MemoryAllocation / MemoryDeallocation events, or a PyTorch
-- trace JSON's [memory] events (allocators cuda:N, hip:N, cpu).  A trace
-- without such events has one row, allocator NULL, status saying why.
CREATE TABLE IF NOT EXISTS main.profsum_agg_memory(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  allocator TEXT,                      -- allocator_name, else index_on_host / device_ordinal as text (NULL on a status row)
  device TEXT,                         -- /device:GPU:N for GPU_N_bfc, /device:TPU:N (or GPU:N) for index N, else NULL
  status TEXT NOT NULL,                -- ok | no_allocation_events | not_in_trace_json | peak_unknown
  peak_bytes INTEGER,                  -- max bytes_allocated over the capture's events
  peak_ts_us REAL,                     -- time of the first event at the peak, µs (as trace_events)
  peak_step INTEGER,                   -- the step whose interval contains it
  lifetime_peak_bytes INTEGER,         -- max peak_bytes_in_use (since the allocator started)
  device_memory_bytes INTEGER,         -- the device plane's memory_size, else an index-named allocator's stated capacity
  num_allocations INTEGER,             -- MemoryAllocation events kept
  num_deallocations INTEGER,           -- MemoryDeallocation events kept
  allocated_bytes INTEGER,             -- Σ allocation_bytes of the allocations
  live_allocations_at_peak INTEGER,    -- allocations of the capture live at the peak
  known_live_bytes_at_peak INTEGER,    -- their Σ allocation_bytes
  top_holders TEXT,                    -- JSON array, ≤ 10 of them, bytes desc
  per_step TEXT,                       -- JSON array: step, allocations, bytes (NULL: no steps)
  note TEXT                            -- what the figures leave out
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_memory_trace ON profsum_agg_memory(trace_id);

-- Per allocator: bytes in use over time, the span of its events cut into
-- at most 500 equal buckets.
CREATE TABLE IF NOT EXISTS main.profsum_agg_memory_timeline(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  allocator TEXT NOT NULL,             -- allocator_name
  bucket INTEGER NOT NULL,             -- 0-based
  ts_us REAL NOT NULL,                 -- bucket start, µs
  max_bytes_in_use INTEGER NOT NULL,   -- max bytes_allocated in the bucket (the last value when empty)
  end_bytes_in_use INTEGER NOT NULL,   -- bytes_allocated after its last event
  num_events INTEGER NOT NULL,         -- memory events in the bucket
  PRIMARY KEY(trace_id, allocator, bucket)
) WITHOUT ROWID;

-- GPU kernels with kernel_details, per (kernel_name, block, grid,
-- registers, static and dynamic shared bytes, hlo_op) over all devices.
CREATE TABLE IF NOT EXISTS main.profsum_agg_kernel(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  kernel_name TEXT NOT NULL,           -- the event's name
  hlo_op TEXT,                         -- hlo_op stat/arg
  hlo_module TEXT,                     -- hlo_module (the first in sort order when several)
  block_dim TEXT,                      -- 'x,y,z' (NULL: absent or out of range)
  grid_dim TEXT,                       -- 'x,y,z'
  registers_per_thread INTEGER,        -- regs
  static_shared_bytes INTEGER,         -- static_shared, shm or group_mem
  dynamic_shared_bytes INTEGER,        -- dynamic_shared
  occupancy_pct REAL,                  -- occ_pct, 0-100 (the largest seen)
  devices INTEGER NOT NULL,            -- distinct devices it ran on
  occurrences INTEGER NOT NULL,        -- executions
  total_duration_us REAL NOT NULL,     -- Σ duration, µs
  min_duration_us REAL NOT NULL,       -- shortest, µs
  max_duration_us REAL NOT NULL        -- longest, µs
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_kernel_trace ON profsum_agg_kernel(trace_id);

-- ---------------------------------------------------------------------

-- Sessions and pods (ext/summary/session*.c; docs/sessions.md): the hosts
-- of a profiling session imported together ("hosts": "all" or "session":
-- "all"), one trace per host, on one time axis.
CREATE TABLE IF NOT EXISTS main.profsum_session(
  session_id INTEGER PRIMARY KEY AUTOINCREMENT, -- stable id; never reused
  label TEXT NOT NULL UNIQUE,          -- the import's label (<label>/<session> with session 'all'); its hosts are <label>/<host>
  source_path TEXT,                    -- the folder as given to profsum_import
  origin_ns INTEGER,                   -- min over its hosts of their start (the first usable Task Environment profile_start_time of each XPlane), ns since the epoch (NULL: none has one)
  alignment TEXT                       -- the weakest of its hosts': 'profile_start_time' | 'steps' | 'none'
);

-- Per host trace of a session: where it sits on the session's time axis.
CREATE TABLE IF NOT EXISTS main.profsum_agg_host(
  trace_id INTEGER NOT NULL PRIMARY KEY, -- profsum_trace.trace_id
  session_id INTEGER NOT NULL,         -- profsum_session.session_id
  host TEXT,                           -- profsum_trace.host
  file_host TEXT,                      -- <host> of the file name (NULL for perfetto_trace.json.gz)
  hostnames TEXT NOT NULL DEFAULT '[]', -- JSON array of XSpace.hostnames ('[]' for JSON)
  profile_start_ns INTEGER,            -- the first usable Task Environment profile_start_time of the host's XPlane (an integer from 1 to 2^63-1), ns since the epoch (NULL: none)
  offset_us REAL,                      -- the host's start after the session's origin, µs
  to_session_us REAL,                  -- added to the trace's own µs times gives session time
  alignment TEXT,                      -- 'profile_start_time' | 'steps' | 'none'
  common_steps INTEGER                 -- step numbers shared with the first aligned host (alignment 'steps')
);

-- Per host trace, step and device: the device's op time inside the step
-- (its Steps event, or the host's 'train' event on every device).
CREATE TABLE IF NOT EXISTS main.profsum_agg_device_step(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  step INTEGER NOT NULL,               -- step number
  device TEXT NOT NULL,                -- process name, e.g. /device:TPU:0
  start_us REAL NOT NULL,              -- the step's start on the device, µs on the clock of trace_events.ts (ns): ts = start_us × 1000
  end_us REAL NOT NULL,                -- its end, µs
  busy_us REAL NOT NULL,               -- union of the device's op events inside the step, µs
  collective_us REAL NOT NULL,         -- union of its collectives (communication names) inside the step, µs
  PRIMARY KEY(trace_id, step, device)
) WITHOUT ROWID;
-- ---------------------------------------------------------------------
-- Device limits, roofline, utilization and op profile (insights_xla.c;
-- docs/roofline.md).  Written by every import of a trace (not of a v1
-- summary file); a trace without a profsum_agg_xla_trace row was imported
-- by a profsum without them, and its views say so.

-- One row per import that computed them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_xla_trace(
  trace_id INTEGER PRIMARY KEY,        -- profsum_trace.trace_id
  source TEXT NOT NULL,                -- 'xplane' | 'json'
  n_device_ops INTEGER NOT NULL,       -- device-op events (XLA Ops, Async XLA Ops, Stream # lines of /device:)
  n_flops_ops INTEGER NOT NULL,        -- of which with a flops stat / arg
  n_model_flops_ops INTEGER NOT NULL,  -- with model_flops
  n_bytes_ops INTEGER NOT NULL,        -- with bytes_accessed
  unsorted_lines INTEGER NOT NULL      -- device-op lines not in time order (their ops' self time is NULL)
);

-- One row per distinct /device: plane (XPlane) or process name (JSON).
CREATE TABLE IF NOT EXISTS main.profsum_agg_xla_device(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  device TEXT NOT NULL,                -- plane / process name, e.g. /device:GPU:0
  kind TEXT,                           -- TPU | GPU | CUSTOM (NULL: another /device: kind)
  vendor TEXT,                         -- device_vendor stat
  model TEXT,                          -- device_type_string stat
  compute_capability TEXT,             -- compute_cap_major.compute_cap_minor
  core_count INTEGER,                  -- core_count stat
  clock_hz INTEGER,                    -- clock_rate stat (kHz) × 1000
  memory_bytes INTEGER,                -- memory_size stat
  peak_flops_per_s REAL,               -- peak_teraflops_per_second × 1e12, else the option device_peaks
  peak_mem_bw_bytes_per_s REAL,        -- peak_hbm_bw_gigabytes_per_second × 1e9, else memory_bandwidth, else the option
  peak_source TEXT,                    -- plane_stats | options | plane_stats+options | NULL (no peak known)
  has_events INTEGER NOT NULL,         -- 1 when the plane / process has events
  PRIMARY KEY(trace_id, device)
) WITHOUT ROWID;

-- Device-op events aggregated per (device, line kind, shown name, hlo_op,
-- hlo_module, hlo_category, framework op name); the views group them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_xla_op(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  device TEXT NOT NULL,                -- /device: name
  line_kind TEXT NOT NULL,             -- xla_ops | async_xla_ops | stream (a GPU kernel)
  name TEXT NOT NULL,                  -- the event's shown name (HLO op on TPU, kernel on GPU)
  hlo_op TEXT,                         -- hlo_op stat / arg
  hlo_module TEXT,                     -- hlo_module stat / arg
  hlo_category TEXT,                   -- hlo_category stat / arg
  framework_op TEXT,                   -- the name stat / arg, e.g. jit(forward)/conv_general_dilated
  count INTEGER NOT NULL,              -- events
  time_us REAL NOT NULL,               -- Σ duration, µs
  self_us REAL,                        -- Σ duration less the events nested in them on their line, µs
  flops REAL,                          -- Σ flops (NULL: no event had it)
  model_flops REAL,                    -- Σ model_flops
  bytes_accessed INTEGER               -- Σ bytes_accessed
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_xla_op_dev ON profsum_agg_xla_op(trace_id, device);

-- Per device: busy time, FLOPs and bytes per step and (step NULL) over the capture.
CREATE TABLE IF NOT EXISTS main.profsum_agg_xla_util(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  device TEXT NOT NULL,                -- /device: name
  step INTEGER,                        -- step number; NULL: the capture (first to last device op)
  wall_us REAL NOT NULL,               -- the step's span (or the capture's), µs
  busy_us REAL NOT NULL,               -- union of the device's op intervals inside it, µs
  mfu_flops REAL,                      -- Σ per op overlapping it, its share by time: model_flops, else flops (NULL: none had either)
  bytes_accessed INTEGER,              -- Σ bytes_accessed of the ops overlapping it, each its share by time, unrounded: INTEGER when whole, else REAL (NULL: none had it)
  step_source TEXT,                    -- device_steps (its Steps line) | host_steps (host train events) | NULL
  exact INTEGER NOT NULL               -- 1; 0 when a line's kept intervals were merged and a step cut one (prorated)
);
CREATE INDEX IF NOT EXISTS main.profsum_agg_xla_util_i ON profsum_agg_xla_util(trace_id, device);
-- History of many runs: the run order of a series (profsum_trend,
-- profsum_op_growth read it from this index alone), and one op across runs
-- by name.
CREATE INDEX IF NOT EXISTS main.profsum_trace_series ON profsum_trace(series, imported_at, trace_id);
CREATE INDEX IF NOT EXISTS main.profsum_agg_op_name ON profsum_agg_op(name, trace_id);
-- The regression history by label and by series (profsum_history,
-- profsum_history_summary, profsum_compare_ops): the label as the views
-- read it (record_json's, the column only for a record with NaN or
-- Infinity; the same expression as in views/history.sql and
-- history_summary.sql, or SQLite does not match it), and the series.
CREATE INDEX IF NOT EXISTS main.profsum_history_record_jlabel ON profsum_history_record(
  (CASE WHEN NOT json_valid(record_json) THEN label
        WHEN json_type(record_json, '$.label') = 'text'
        THEN json_extract(record_json, '$.label') END), record_id);
CREATE INDEX IF NOT EXISTS main.profsum_history_record_series ON profsum_history_record(series, record_id);
-- Op growth ranks stored per pair of runs (profsum_op_growth): for a run of
-- a series and the run before it when the rows were written, every op of
-- either run with its growth_rank in that pair.  Written by profsum_import
-- for the run it stores (and for the run after it, or after a trace it
-- replaces: the pairs that changed) and by profsum_op_growth_store(); the
-- view takes them only while prev_trace_id is still the run's previous run
-- (trace ids are never reused, a run's ops never change), else ranks the
-- pair's ops itself.  So a filter on the op's name reads one row per pair.
CREATE TABLE IF NOT EXISTS main.profsum_agg_op_growth(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id of the later run
  name TEXT NOT NULL,                  -- op name (profsum_agg_op.name of either run)
  prev_trace_id INTEGER NOT NULL,      -- the previous run of the series when the rows were written
  growth_rank INTEGER NOT NULL,        -- rank within the pair by delta descending, then name; 1 = grew most
  PRIMARY KEY(trace_id, name)
) WITHOUT ROWID;

-- What a capture says of where and when it ran, name → value (text).  Of an
-- XPlane: every stat of its /host:metadata plane (JAX writes jax_version,
-- jaxlib_version and its backends' versions there: tpu_version, cpu_version,
-- ...) and profile_start_time / profile_stop_time of its Task Environment
-- plane (ns since the Unix epoch).  Of a trace JSON: what the members of its
-- top-level object beside traceEvents state (PyTorch's profiler: the GPUs'
-- deviceProperties as device_count, device_model, device_memory_bytes,
-- device_compute_capability, device_sm_count; distributedInfo as
-- distributed_backend, _rank, _world_size; runtime versions; see
-- docs/xplane.md); a JAX trace JSON states none.  The first plane or member
-- that has a name gives its value; values over 4,096 bytes, empty ones and
-- names with a NUL byte are left out, and names past the first 256.  No rows
-- for a trace imported before the table was added.  profsum_environment
-- reads them.
CREATE TABLE IF NOT EXISTS main.profsum_agg_env(
  trace_id INTEGER NOT NULL,           -- profsum_trace.trace_id
  name TEXT NOT NULL,                  -- the stat's or member's name, e.g. jax_version
  value TEXT NOT NULL,                 -- its value as text (integers in decimal)
  PRIMARY KEY(trace_id, name)
) WITHOUT ROWID;
