-- profsum_candidates: optimization_candidates of profile_summary.v1 — what
-- to try next, from six rules (communication-heavy, stall-heavy,
-- single-hot-op, pre-op-gap, step-jitter, else no-dominant-bottleneck).
-- Requires: profsum_trace, profsum_sec_candidate.
CREATE VIEW IF NOT EXISTS main.profsum_candidates(
  -- Trace id (INTEGER).
  trace_id,
  -- Trace label (TEXT).
  label,
  -- 0-based order (INTEGER).
  rank,
  -- Rule id, e.g. communication-heavy (TEXT).
  candidate_id,
  -- One-line title (TEXT).
  title,
  -- Why it fired, with the figure (TEXT).
  rationale,
  -- JSON array of evidence lines (TEXT).
  evidence,
  -- JSON array of suggestions (TEXT).
  suggestions
) AS
SELECT c.trace_id, t.label, c.rank, c.candidate_id, c.title, c.rationale, c.evidence, c.suggestions
FROM profsum_sec_candidate AS c JOIN profsum_trace AS t USING (trace_id);
