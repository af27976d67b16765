-- profsum_diagnostic: the oddities met while reading each imported trace
-- (the kinds of profsum_diagnostics(); the first 5 rows of each kind are
-- stored, plus a 'suppressed' row with the full count of a kind that had
-- more; every row with the import option store_diagnostics 'all';
-- profsum_diagnostics(path) lists every row of the file).
-- Requires: profsum_trace, profsum_agg_diagnostic.
CREATE VIEW IF NOT EXISTS main.profsum_diagnostic(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- traceEvents entry index, NULL for file-level facts (INTEGER).
  idx,
  -- Byte offset in the decompressed JSON (INTEGER or NULL).
  byte_offset,
  -- Kind, e.g. no_ph, bad_field, partial_overlap (TEXT).
  kind,
  -- What was found (TEXT).
  detail
) AS
SELECT d.trace_id, t.label, d.idx, d.byte_offset, d.kind, d.detail
FROM profsum_agg_diagnostic AS d JOIN profsum_trace AS t USING (trace_id);
