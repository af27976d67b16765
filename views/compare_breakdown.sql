-- profsum_compare_breakdown: the time-breakdown shares of every compared
-- pair (profsum_history_record with both trace ids), before and after, in
-- each trace's summary mode, with the change in share.
-- Requires: profsum_history_record, profsum_breakdown.
CREATE VIEW IF NOT EXISTS main.profsum_compare_breakdown(
  -- The history record of the comparison (INTEGER).
  record_id,
  -- The record's label (TEXT or NULL).
  label,
  -- Label of the before trace (TEXT).
  before_label,
  -- Label of the after trace (TEXT).
  after_label,
  -- compute, communication, host, stall or other (TEXT).
  category,
  -- Share of the breakdown total before (REAL).
  before_share,
  -- Share after (REAL).
  after_share,
  -- after_share - before_share (REAL).
  share_delta,
  -- Time in the category before, µs (REAL).
  before_duration,
  -- Time in the category after, µs (REAL).
  after_duration
) AS
SELECT r.record_id, r.label, bb.label, ba.label, bb.category, bb.share_of_total, ba.share_of_total,
       ba.share_of_total - bb.share_of_total, bb.total_duration, ba.total_duration
FROM profsum_history_record AS r
JOIN profsum_breakdown AS bb ON bb.trace_id = r.before_trace_id AND bb.is_summary_mode
JOIN profsum_breakdown AS ba ON ba.trace_id = r.after_trace_id AND ba.is_summary_mode
                            AND ba.category = bb.category;
