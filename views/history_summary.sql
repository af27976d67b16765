-- profsum_history_summary: the history summary of summary-v1-tools-spec
-- §4.3 (summarize_regression_history) as rows: one row for the whole
-- history (scope 'all', always present, also when it is empty) and one per
-- record label (scope 'label'; records without a label form the row with
-- label NULL).  Statuses are counted as §4.3 does: string statuses of
-- records whose assessment is an object.  Most common messages: ties go to
-- the message seen first (record order, then position in the record), as
-- Counter.most_common does.  The full document (with recent records) is
-- profsum_history_summary_json([tail]).
-- Requires: profsum_history_record.
CREATE VIEW IF NOT EXISTS main.profsum_history_summary(
  -- 'all' (the whole history) or 'label' (one record label) (TEXT).
  scope,
  -- The record label for scope 'label'; NULL for 'all' and for unlabeled records (TEXT).
  label,
  -- Number of records (INTEGER).
  num_records,
  -- Records with status pass (INTEGER).
  num_pass,
  -- Records with status warn (INTEGER).
  num_warn,
  -- Records with status fail (INTEGER).
  num_fail,
  -- status → count, JSON object as §4.3's status_counts (TEXT).
  status_counts,
  -- record_id of the first record (INTEGER or NULL).
  first_record_id,
  -- record_id of the latest record (INTEGER or NULL).
  latest_record_id,
  -- recorded_at_utc of the latest record (TEXT or NULL).
  latest_recorded_at_utc,
  -- Status of the latest record (TEXT or NULL).
  latest_status,
  -- The most common failure message (TEXT or NULL).
  top_failure,
  -- How many times it occurs (INTEGER or NULL).
  top_failure_count,
  -- The most common warning message (TEXT or NULL).
  top_warning,
  -- How many times it occurs (INTEGER or NULL).
  top_warning_count
) AS
-- A filter on label reaches the records of that label only: std and rec
-- are read inline (NOT MATERIALIZED), the label is the expression of the
-- index profsum_history_record_jlabel, and the status counts and top
-- messages of a label row are correlated subqueries over its records (the
-- 'all' row's are computed once, over every record).
WITH
std AS NOT MATERIALIZED (
  -- NaN / Infinity / -Infinity (Python's json.dumps writes them; SQLite's
  -- JSON functions reject them) read as null / ±9e999, as in profsum_history
  -- The label as record_json holds it (as in profsum_history: the column
  -- only for a record with NaN or Infinity; the expression of the index
  -- profsum_history_record_jlabel, written the same way)
  SELECT record_id,
         CASE WHEN NOT json_valid(record_json) THEN label
              WHEN json_type(record_json, '$.label') = 'text'
              THEN json_extract(record_json, '$.label') END AS label,
         CASE WHEN json_valid(record_json) THEN record_json ELSE
         replace(replace(replace(replace(replace(replace(replace(replace(replace(record_json,
           ': -Infinity', ': -9e999'), '[-Infinity', '[-9e999'), ', -Infinity', ', -9e999'),
           ': Infinity', ': 9e999'), '[Infinity', '[9e999'), ', Infinity', ', 9e999'),
           ': NaN', ': null'), '[NaN', '[null'), ', NaN', ', null') END AS record_json
  FROM profsum_history_record
),
rec AS NOT MATERIALIZED (
  SELECT record_id, label, record_json,
         CASE WHEN json_type(record_json, '$.assessment') = 'object'
               AND json_type(record_json, '$.assessment.status') = 'text'
              THEN json_extract(record_json, '$.assessment.status') END AS st
  FROM std
),
counts AS (
  -- the whole history's row reads every record only when it is asked for
  -- (a filter on label rules it out before its subquery runs)
  SELECT 'all' AS scope, NULL AS label, a.* FROM (
    SELECT count(*) AS n,
           coalesce(sum(st = 'pass'), 0) AS n_pass, coalesce(sum(st = 'warn'), 0) AS n_warn,
           coalesce(sum(st = 'fail'), 0) AS n_fail, min(record_id) AS first_id, max(record_id) AS last_id
    FROM rec) AS a
  UNION ALL
  SELECT 'label', label, count(*), coalesce(sum(st = 'pass'), 0), coalesce(sum(st = 'warn'), 0),
         coalesce(sum(st = 'fail'), 0), min(record_id), max(record_id)
  FROM rec GROUP BY label
),
msgs AS NOT MATERIALIZED (
  SELECT r.label, k.kind, j.value AS message, r.record_id * 1000000 + j.key AS pos
  FROM rec AS r
  JOIN (SELECT 'failures' AS kind UNION ALL SELECT 'warnings') AS k
  JOIN json_each(r.record_json, '$.assessment.' || k.kind) AS j
  WHERE json_type(r.record_json, '$.assessment') = 'object'
    AND json_type(r.record_json, '$.assessment.' || k.kind) = 'array'
    AND j.type = 'text'
),
-- the whole history's messages, counted once
msg_all AS (
  SELECT kind, message, count(*) AS n, min(pos) AS first FROM msgs GROUP BY kind, message
)
SELECT c.scope, c.label, c.n, c.n_pass, c.n_warn, c.n_fail,
       coalesce(CASE WHEN c.scope = 'all'
         THEN (SELECT json_group_object(st, n)
               FROM (SELECT st, count(*) AS n FROM rec WHERE st IS NOT NULL GROUP BY st))
         ELSE (SELECT json_group_object(st, n)
               FROM (SELECT x.st, count(*) AS n FROM rec AS x
                     WHERE x.label IS c.label AND x.st IS NOT NULL GROUP BY x.st)) END, '{}'),
       c.first_id, c.last_id,
       json_extract(l.record_json, '$.recorded_at_utc'), l.st,
       CASE WHEN c.scope = 'all'
         THEN (SELECT message FROM msg_all WHERE kind = 'failures' ORDER BY n DESC, first LIMIT 1)
         ELSE (SELECT m.message FROM msgs AS m WHERE m.label IS c.label AND m.kind = 'failures'
               GROUP BY m.message ORDER BY count(*) DESC, min(m.pos) LIMIT 1) END,
       CASE WHEN c.scope = 'all'
         THEN (SELECT n FROM msg_all WHERE kind = 'failures' ORDER BY n DESC, first LIMIT 1)
         ELSE (SELECT count(*) FROM msgs AS m WHERE m.label IS c.label AND m.kind = 'failures'
               GROUP BY m.message ORDER BY count(*) DESC, min(m.pos) LIMIT 1) END,
       CASE WHEN c.scope = 'all'
         THEN (SELECT message FROM msg_all WHERE kind = 'warnings' ORDER BY n DESC, first LIMIT 1)
         ELSE (SELECT m.message FROM msgs AS m WHERE m.label IS c.label AND m.kind = 'warnings'
               GROUP BY m.message ORDER BY count(*) DESC, min(m.pos) LIMIT 1) END,
       CASE WHEN c.scope = 'all'
         THEN (SELECT n FROM msg_all WHERE kind = 'warnings' ORDER BY n DESC, first LIMIT 1)
         ELSE (SELECT count(*) FROM msgs AS m WHERE m.label IS c.label AND m.kind = 'warnings'
               GROUP BY m.message ORDER BY count(*) DESC, min(m.pos) LIMIT 1) END
FROM counts AS c
LEFT JOIN rec AS l ON l.record_id = c.last_id;
