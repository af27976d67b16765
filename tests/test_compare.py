"""Compare, track, history and bundle (summary-v1-tools-spec.md §3, §4, §6)
on the fixtures of summary-v1-spec.md §7 (F1 compare / track, F10), plus
the JSONL history round trip, the history views and every bad input
(each must give a clear error and change nothing)."""
import collections
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import stat
import unittest

import fixtures
from util import connect, TempDir, SO, UNPRIVILEGED_ID, unreachable_by_others

SQLITE_DIRECTONLY = 0x80000
SQLITE_INNOCUOUS = 0x200000

F1_BEFORE = ([100, 110, 120, 130, 140, 150], 60)
F1_AFTER = ([90, 100, 110, 120, 130, 140], 40)
BUNDLE_FILES = ["before.summary.json", "after.summary.json", "compare.json", "track.json",
                "before.report.md", "after.report.md"]

# the hint after "no trace with label" when labels exist (doc_knobs.c)
NEWEST = r"; the newest labels: '[^']*'(, '[^']*')* \(of \d+\)"


def dumps(obj):
    return json.dumps(obj, indent=2, sort_keys=True)


def py_pct(before, after):
    """query.py _pct_delta, as the reference computes it."""
    if before is None or after is None or before <= 0:
        return None
    return ((after - before) / before) * 100.0


def summarize_history(records, tail=20):
    """summarize_regression_history() of tools-spec §4.3 on loaded records
    (without history_path), written from the spec for cross-checking."""
    status, fails, warns = collections.Counter(), collections.Counter(), collections.Counter()
    for r in records:
        a = r.get("assessment")
        if not isinstance(a, dict):
            continue
        if isinstance(a.get("status"), str):
            status[a["status"]] += 1
        for m in a.get("failures", []):
            if isinstance(m, str):
                fails[m] += 1
        for m in a.get("warnings", []):
            if isinstance(m, str):
                warns[m] += 1
    return {"num_records": len(records), "status_counts": dict(status),
            "top_failures": [{"message": m, "count": c} for m, c in fails.most_common(10)],
            "top_warnings": [{"message": m, "count": c} for m, c in warns.most_common(10)],
            "latest_record": records[-1] if records else None,
            "recent_records": records[-tail:] if tail > 0 else []}


class Base(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db_path = os.path.join(self.td.path, "h.db")
        self.db = connect(self.db_path)

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def imp(self, trace, label, opts=None, name=None):
        p = self.td.write((name or label) + ".json.gz", json.dumps(trace), gz=True)
        self.db.execute("SELECT profsum_import(?, ?, ?)", (p, label, json.dumps(opts or {})))
        return p

    def f1_pair(self):
        self.imp(fixtures.f1(*F1_BEFORE), "before", {"warmup_steps": 2, "hot_op_limit": 10})
        self.imp(fixtures.f1(*F1_AFTER), "after", {"warmup_steps": 2, "hot_op_limit": 10})

    def f10_pair(self):
        self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60, psum=False, threading=False), "f10-before",
                 {"warmup_steps": 2})
        self.imp(fixtures.f1([130, 140, 150, 160, 170, 180], 60, psum=False, threading=False), "f10-after",
                 {"warmup_steps": 2})

    def one(self, sql, args=()):
        return self.db.execute(sql, args).fetchone()[0]

    def exact(self, text):
        """Byte-exact Python json.dumps(indent=2, sort_keys=True); returns the value."""
        self.assertEqual(text, dumps(json.loads(text)))
        return json.loads(text)

    def n_records(self):
        try:
            return self.one("SELECT count(*) FROM profsum_history_record")
        except sqlite3.OperationalError:
            return 0

    def assertError(self, sql, args, pattern):
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute(sql, args).fetchall()
        self.assertRegex(str(cm.exception), pattern)
        return str(cm.exception)


class Compare(Base):
    def test_f1_compare(self):
        self.f1_pair()
        c = self.exact(self.one("SELECT profsum_compare_json('before', 'after', 5)"))
        self.assertEqual(sorted(c), ["after_source", "before_source", "improved_ops", "provenance_checks",
                                     "regressed_ops", "semantic_family_delta", "step_classes", "step_time",
                                     "time_breakdown_share_delta"])
        self.assertTrue(c["before_source"].endswith("before.json.gz"))
        self.assertEqual(c["step_time"], {"steady_state_median_before": 135.0, "steady_state_median_after": 125.0,
                                          "steady_state_median_delta": -10.0, "steady_state_p90_before": 147.0,
                                          "steady_state_p90_after": 137.0, "steady_state_p90_delta": -10.0})
        self.assertEqual(c["regressed_ops"], [])
        self.assertEqual(c["improved_ops"], [{"name": "softmax", "before": 60.0, "after": 40.0, "delta": -20.0}])
        self.assertEqual(c["time_breakdown_share_delta"], {
            "compute": -0.0422691879866518, "communication": 0.01334816462736374, "host": 0.017797552836484987,
            "stall": 0.01112347052280313, "other": 0.0})
        self.assertEqual(c["step_classes"]["delta"], [{
            "name": "typical", "before_count": 4, "after_count": 4, "before_fraction": 1.0, "after_fraction": 1.0,
            "median_before": 135.0, "median_after": 125.0, "median_delta": -10.0,
            "median_regression_pct": -7.4074074074074066}])
        self.assertEqual(c["step_classes"]["before"], [{
            "name": "typical", "count": 4, "fraction_of_steady": 1.0, "median_duration": 135.0,
            "p90_duration": 147.0, "representative_step": 3, "representative_duration": 130.0,
            "periodicity": None}])
        pc = c["provenance_checks"]
        self.assertEqual(pc["status"], "pass")
        self.assertEqual(pc["messages"], [])
        self.assertEqual(pc["before_trace_sha256"], self.one("SELECT sha256 FROM profsum_trace WHERE label='before'"))
        self.assertIsNone(pc["before_run_id"])
        fam = {f["family"]: f for f in c["semantic_family_delta"]}
        self.assertEqual(list(fam), ["collective", "other"])   # sorted by family
        self.assertEqual(fam["other"]["before_exclusive_duration"], 170.0)
        self.assertEqual(fam["other"]["after_exclusive_duration"], 150.0)
        self.assertEqual(fam["other"]["exclusive_duration_delta"], -20.0)
        self.assertEqual(fam["other"]["exclusive_regression_pct"], py_pct(170.0, 150.0))
        self.assertEqual(fam["other"]["time_ratio"], 150.0 / 170.0)
        self.assertIsNone(fam["other"]["flop_proxy_ratio"])
        self.assertIsNone(fam["other"]["efficiency_ratio"])
        self.assertEqual(fam["collective"]["example_before"], "all-reduce.1")
        self.assertEqual(len(fam["other"]), 18)

    def test_ids_and_top_k(self):
        self.f1_pair()
        by_id = self.one("SELECT profsum_compare_json(1, 2)")
        self.assertEqual(by_id, self.one("SELECT profsum_compare_json('before', 'after')"))
        c = json.loads(self.one("SELECT profsum_compare_json(2, 1)"))
        self.assertEqual([o["name"] for o in c["regressed_ops"]], ["softmax"])
        self.assertEqual(json.loads(self.one("SELECT profsum_compare_json(1, 2, 0)"))["improved_ops"], [])

    def test_op_union_and_ordering(self):
        # ops missing from one side count 0.0; ties in delta sort by name
        self.imp(fixtures.ops_only([{"name": "a.1", "ts": 0, "dur": 10}, {"name": "b.1", "ts": 20, "dur": 10},
                                    {"name": "c.1", "ts": 40, "dur": 30}]), "x", {"warmup_steps": 0})
        self.imp(fixtures.ops_only([{"name": "b.1", "ts": 0, "dur": 20}, {"name": "a.1", "ts": 30, "dur": 20},
                                    {"name": "d.1", "ts": 60, "dur": 5}]), "y", {"warmup_steps": 0})
        c = self.exact(self.one("SELECT profsum_compare_json('x', 'y')"))
        self.assertEqual(c["regressed_ops"], [{"name": "a.1", "before": 10.0, "after": 20.0, "delta": 10.0},
                                              {"name": "b.1", "before": 10.0, "after": 20.0, "delta": 10.0},
                                              {"name": "d.1", "before": 0.0, "after": 5.0, "delta": 5.0}])
        self.assertEqual(c["improved_ops"], [{"name": "c.1", "before": 30.0, "after": 0.0, "delta": -30.0}])
        self.assertEqual(c["step_time"]["steady_state_median_delta"], None)
        self.assertEqual(c["step_classes"], {"before": [], "after": [], "delta": []})
        c1 = json.loads(self.one("SELECT profsum_compare_json('x', 'y', 1)"))
        self.assertEqual([o["name"] for o in c1["regressed_ops"]], ["a.1"])

    def test_same_sha_provenance_fail(self):
        trace = fixtures.f1(*F1_BEFORE)
        p = self.imp(trace, "one", {"warmup_steps": 2})
        # the same file under another label: same sha AND same source_path
        self.db.execute("SELECT profsum_import(?, 'two', '{\"warmup_steps\": 2}')", (p,))
        pc = json.loads(self.one("SELECT profsum_compare_json('one', 'two')"))["provenance_checks"]
        self.assertEqual(pc["status"], "fail")
        self.assertEqual(pc["messages"], [
            "Before and after summaries point to identical trace content (matching SHA256).",
            "Before and after summaries have the same source_path."])
        self.assertEqual(pc["before_trace_sha256"], pc["after_trace_sha256"])
        # a byte-identical copy elsewhere: only the SHA check fires
        q = os.path.join(self.td.path, "copy.json.gz")
        shutil.copyfile(p, q)
        self.db.execute("SELECT profsum_import(?, 'three', '{\"warmup_steps\": 2}')", (q,))
        pc = json.loads(self.one("SELECT profsum_compare_json('one', 'three')"))["provenance_checks"]
        self.assertEqual(pc["status"], "fail")
        self.assertEqual(pc["messages"], [
            "Before and after summaries point to identical trace content (matching SHA256)."])
        rec = json.loads(self.one("SELECT profsum_track('one', 'three', 'same')"))
        self.assertEqual(rec["assessment"]["comparison"]["provenance_checks"]["status"], "fail")

    def test_v1_documents_and_family_fallback(self):
        """A summary imported from a v1 file compares like the trace; without
        semantic_families the families are recomputed from the hot ops."""
        self.f1_pair()
        doc = json.loads(self.one("SELECT profsum_summary_json('before')"))
        del doc["semantic_families"]
        doc["trace_provenance"]["trace_sha256"] = None
        v1 = self.td.write("before.v1.json", json.dumps(doc))
        self.db.execute("SELECT profsum_import(?, 'before-v1')", (v1,))
        a = json.loads(self.one("SELECT profsum_compare_json('before', 'after')"))
        b = self.exact(self.one("SELECT profsum_compare_json('before-v1', 'after')"))
        self.assertEqual(b["semantic_family_delta"], a["semantic_family_delta"])
        self.assertEqual(b["improved_ops"], a["improved_ops"])
        self.assertEqual(b["step_time"], a["step_time"])
        self.assertEqual(b["provenance_checks"]["status"], "warn")
        self.assertEqual(b["provenance_checks"]["messages"],
                         ["One or both summaries are missing trace SHA256 provenance."])

    def test_flags(self):
        rows = self.db.execute("SELECT name, narg, flags FROM pragma_function_list WHERE name IN "
                               "('profsum_compare_json', 'profsum_track', 'profsum_bundle', "
                               "'profsum_history_import', 'profsum_history_export', "
                               "'profsum_history_summary_json')").fetchall()
        got = {(n, a): f for n, a, f in rows}
        self.assertEqual(sorted(got), sorted([
            ("profsum_compare_json", 2), ("profsum_compare_json", 3), ("profsum_compare_json", 4), ("profsum_track", 3), ("profsum_track", 4),
            ("profsum_bundle", 3), ("profsum_bundle", 4), ("profsum_history_import", 1),
            ("profsum_history_export", 1), ("profsum_history_summary_json", 0),
            ("profsum_history_summary_json", 1)]))
        for (name, narg), flags in got.items():
            writes = name in ("profsum_track", "profsum_bundle", "profsum_history_import", "profsum_history_export")
            self.assertEqual(bool(flags & SQLITE_DIRECTONLY), writes, name)
            self.assertFalse(flags & SQLITE_INNOCUOUS, name)


class Track(Base):
    def test_f1_track_pass(self):
        self.f1_pair()
        rec = self.exact(self.one("SELECT profsum_track('before', 'after', 'f1')"))
        self.assertEqual(sorted(rec), ["after", "assessment", "before", "label", "recorded_at_utc"])
        self.assertEqual(rec["label"], "f1")
        self.assertRegex(rec["recorded_at_utc"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$")
        self.assertEqual(rec["before"], {"source_path": os.path.join(self.td.path, "before.json.gz"),
                                         "run_path": None, "run_id": None, "artifact_ref": None})
        a = rec["assessment"]
        self.assertEqual(sorted(a), ["comparison", "failures", "metrics", "status", "warnings"])
        self.assertEqual((a["status"], a["failures"], a["warnings"]), ("pass", [], []))
        m = a["metrics"]
        # §7 states "median −7.41 %": the reference's ((after − before) / before) * 100.0
        # on floats gives -7.4074074074074066 (= step_classes' median_regression_pct);
        # 100 * (after - before) / before would give -7.407407407407407 (one ulp away).
        self.assertEqual(m["steady_state_median_regression_pct"], py_pct(135.0, 125.0))
        self.assertEqual(m["steady_state_median_regression_pct"], -7.4074074074074066)
        self.assertAlmostEqual(m["steady_state_median_regression_pct"], -7.407407407407407, places=12)
        self.assertEqual(m["steady_state_p90_regression_pct"], -6.802721088435375)
        self.assertEqual(m["communication_share_delta"], 0.01334816462736374)
        self.assertEqual(m["stall_share_delta"], 0.01112347052280313)
        self.assertEqual(a["comparison"], json.loads(self.one("SELECT profsum_compare_json('before', 'after')")))
        # stored: one row, its JSONL line is the record
        row = self.db.execute("SELECT label, status, before_trace_id, after_trace_id, origin, record_json, "
                              "created_at FROM profsum_history_record").fetchall()
        self.assertEqual(len(row), 1)
        self.assertEqual(row[0][:5], ("f1", "pass", 1, 2, "track"))
        self.assertEqual(row[0][5], json.dumps(rec, sort_keys=True))
        # created_at: the record's time with its microseconds always written
        # (".000000" at a whole second, which Python's isoformat leaves out)
        t = rec["recorded_at_utc"]
        self.assertEqual(row[0][6], t if "." in t else t[:-1] + ".000000Z")
        self.assertRegex(row[0][6], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

    def test_f10_fail(self):
        self.f10_pair()
        rec = self.exact(self.one("SELECT profsum_track('f10-before', 'f10-after', 'unit-test', ?)",
                                  (json.dumps({"max_step_median_regression_pct": 5.0,
                                               "max_step_p90_regression_pct": 5}),)))
        a = rec["assessment"]
        self.assertEqual(a["status"], "fail")
        self.assertEqual(a["failures"], ["Steady-state median step time regressed by 22.22% (threshold 5.00%).",
                                         "Steady-state p90 step time regressed by 20.41% (threshold 5.00%)."])
        self.assertEqual(a["warnings"], [])
        self.assertEqual(a["metrics"]["steady_state_median_regression_pct"], 22.22222222222222)
        self.assertEqual(a["metrics"]["steady_state_p90_regression_pct"], 20.408163265306122)
        s = self.exact(self.one("SELECT profsum_history_summary_json()"))
        self.assertEqual(s["num_records"], 1)
        self.assertEqual(s["status_counts"], {"fail": 1})
        self.assertEqual(s["top_failures"], [{"message": m, "count": 1} for m in a["failures"]])
        self.assertEqual(s["latest_record"], rec)
        self.assertEqual(s["recent_records"], [rec])
        self.assertEqual(s["history_path"], self.db_path)
        v = self.db.execute("SELECT scope, label, num_records, num_fail, status_counts, top_failure, "
                            "top_failure_count FROM profsum_history_summary ORDER BY scope").fetchall()
        self.assertEqual(v, [("all", None, 1, 1, '{"fail":1}', a["failures"][0], 1),
                             ("label", "unit-test", 1, 1, '{"fail":1}', a["failures"][0], 1)])
        # default thresholds: p90 20.41 % is above 10 % as well
        rec = json.loads(self.one("SELECT profsum_track('f10-before', 'f10-after', NULL)"))
        self.assertIsNone(rec["label"])
        self.assertEqual(rec["assessment"]["failures"][1],
                         "Steady-state p90 step time regressed by 20.41% (threshold 10.00%).")

    def test_warn_and_threshold_keys(self):
        self.f1_pair()
        rec = json.loads(self.one("SELECT profsum_track('before', 'after', 'w', ?)", (json.dumps({
            "max_communication_share_regression_abs": 0.01, "max_stall_share_regression_abs": 0.011,
            "max_step_median_regression_pct": -100, "max_step_p90_regression_pct": 0}),)))
        a = rec["assessment"]
        self.assertEqual(a["status"], "fail")
        self.assertEqual(a["failures"], ["Steady-state median step time regressed by -7.41% (threshold -100.00%)."])
        self.assertEqual(a["warnings"], ["Communication share increased by 0.0133 (threshold 0.0100).",
                                         "Stall share increased by 0.0111 (threshold 0.0110)."])
        rec = json.loads(self.one("SELECT profsum_track('before', 'after', 'w2', ?)",
                                  ('{"max_stall_share_regression_abs": 0.001}',)))
        self.assertEqual((rec["assessment"]["status"], len(rec["assessment"]["warnings"])), ("warn", 1))

    def test_history_view(self):
        self.f1_pair()
        self.f10_pair()
        self.one("SELECT profsum_track('before', 'after', 'a')")
        self.one("SELECT profsum_track('f10-before', 'f10-after', 'b')")
        rows = self.db.execute("SELECT record_id, label, status, origin, before_label, after_label, "
                               "median_regression_pct, p90_regression_pct, communication_share_delta, "
                               "n_failures, n_warnings, provenance_status FROM profsum_history "
                               "ORDER BY record_id").fetchall()
        self.assertEqual(rows[0], (1, "a", "pass", "track", "before", "after", -7.4074074074074066,
                                   -6.802721088435375, 0.01334816462736374, 0, 0, "pass"))
        self.assertEqual(rows[1][:7], (2, "b", "fail", "track", "f10-before", "f10-after", 22.22222222222222))
        self.assertEqual(rows[1][9], 2)

    def test_nested_transaction(self):
        """Inside the user's transaction the record joins it (rolled back with it)."""
        self.f1_pair()
        self.db.isolation_level = None
        self.db.execute("BEGIN")
        self.one("SELECT profsum_track('before', 'after', 'x')")
        self.db.execute("ROLLBACK")
        self.assertEqual(self.n_records(), 0)
        self.db.execute("BEGIN")
        self.one("SELECT profsum_track('before', 'after', 'x')")
        self.db.execute("COMMIT")
        self.assertEqual(self.n_records(), 1)
        # called from a statement that reads tables (a read transaction is open)
        got = self.db.execute("SELECT profsum_track(b.label, a.label, 'y') FROM profsum_trace AS b "
                              "JOIN profsum_trace AS a ON b.label = 'before' AND a.label = 'after'").fetchall()
        self.assertEqual(len(got), 1)
        self.assertEqual(self.n_records(), 2)


class BadInput(Base):
    """Every bad input: a clear error naming it, nothing written."""

    def test_errors_change_nothing(self):
        self.f1_pair()
        self.one("SELECT profsum_track('before', 'after', 'ok')")
        before = self.db.execute("SELECT * FROM profsum_history_record").fetchall()
        cases = [
            ("SELECT profsum_compare_json('before', 'nope')", (),
             r"^profsum_compare_json: after: no trace with label 'nope'" + NEWEST + "$"),
            ("SELECT profsum_compare_json(99, 'after')", (), r"^profsum_compare_json: before: no trace with id 99$"),
            ("SELECT profsum_compare_json('before', 'before')", (),
             r"^profsum_compare_json: before and after are the same trace \(id 1\)$"),
            ("SELECT profsum_compare_json(1, 1.0)", (),
             r"^profsum_compare_json: before and after are the same trace \(id 1\)$"),
            ("SELECT profsum_compare_json(1, 2, 1.5)", (), r"^profsum_compare_json: top_k must be an integer$"),
            ("SELECT profsum_compare_json(1, x'00')", (), r"^profsum_compare_json: after: a trace is given by"),
            ("SELECT profsum_track('nope', 'after', 'l')", (), r"^profsum_track: before: no trace with label 'nope'" + NEWEST + "$"),
            ("SELECT profsum_track('after', 'after', 'l')", (),
             r"^profsum_track: before and after are the same trace \(id 2\)$"),
            ("SELECT profsum_track(1, 2, 'l', '[1, 2]')", (), r"^profsum_track: thresholds_json must be a JSON object$"),
            ("SELECT profsum_track(1, 2, 'l', '5')", (), r"^profsum_track: thresholds_json must be a JSON object$"),
            ("SELECT profsum_track(1, 2, 'l', '{\"max_step_median\": 1}')", (),
             r"^profsum_track: thresholds_json: unknown key 'max_step_median' \(known: "),
            ("SELECT profsum_track(1, 2, 'l', '{\"max_stall_share_regression_abs\": \"0.1\"}')", (),
             r"^profsum_track: thresholds_json: max_stall_share_regression_abs must be a number \(Infinity and NaN included\)$"),
            ("SELECT profsum_track(1, 2, 'l', '{\"max_stall_share_regression_abs\": true}')", (),
             r"must be a number \(Infinity and NaN included\)$"),
            ("SELECT profsum_track(1, 2, 'l', '{nope')", (), r"^profsum_track: thresholds_json is not valid JSON: "),
            ("SELECT profsum_track(1, 2, 3)", (), r"^profsum_track: label must be text or NULL$"),
            ("SELECT profsum_history_summary_json('x')", (), r"^profsum_history_summary_json: tail must be an integer$"),
        ]
        for sql, args, pat in cases:
            with self.subTest(sql=sql):
                self.assertError(sql, args, pat)
        self.assertEqual(self.db.execute("SELECT * FROM profsum_history_record").fetchall(), before)

    def test_numeric_looking_label_is_a_label(self):
        # a TEXT '1' names the trace labelled '1', not trace_id 1
        self.f1_pair()
        self.imp(fixtures.f1(*F1_AFTER), "1", {"warmup_steps": 2, "hot_op_limit": 10})
        self.assertEqual(self.one("SELECT trace_id FROM profsum_trace WHERE label = '1'"), 3)
        self.assertError("SELECT profsum_compare_json('1', 3)", (),
                         r"^profsum_compare_json: before and after are the same trace \(id 3\)$")
        got = json.loads(self.one("SELECT profsum_compare_json('1', 1)"))
        self.assertEqual(got, json.loads(self.one("SELECT profsum_compare_json(3, 1)")))
        self.assertError("SELECT profsum_summary_json('2')", (),
                         r"^profsum_summary_json: no trace with label '2' \(a trace_id is given as an "
                         r"integer: 2, not a text\)" + NEWEST + "$")

    def test_unknown_label_before_any_import(self):
        self.assertError("SELECT profsum_compare_json('a', 'b')", (),
                         r"^profsum_compare_json: before: no trace with label 'a' \(no trace imported")
        self.assertError("SELECT profsum_track('a', 'b', 'c')", (), r"^profsum_track: before: no trace with label 'a'")
        self.assertEqual(self.n_records(), 0)
        self.assertEqual(self.one("PRAGMA journal_mode"), "delete")   # a failed call switches nothing


class History(Base):
    def reference_jsonl(self):
        """A history file as the reference tool writes it: one json.dumps(record,
        sort_keys=True) line per record, appended."""
        self.f1_pair()
        self.f10_pair()
        recs = [json.loads(self.one("SELECT profsum_track('before', 'after', 'r1')")),
                json.loads(self.one("SELECT profsum_track('f10-before', 'f10-after', 'r2')")),
                json.loads(self.one("SELECT profsum_track('f10-before', 'f10-after', NULL, "
                                    "'{\"max_step_p90_regression_pct\": 50}')"))]
        self.db.execute("DELETE FROM profsum_history_record")
        odd = {"recorded_at_utc": "2026-01-02T03:04:05Z", "label": "caf\u00e9 \U0001F600 \"q\" \\ \n\t",
               "before": {"source_path": None, "run_path": "e/p/r", "run_id": "r", "artifact_ref": None},
               "after": {"source_path": "x", "run_path": None, "run_id": "r", "artifact_ref": "a:v1"},
               "assessment": {"status": "warn", "failures": [], "warnings": ["w"] * 3,
                              "metrics": {"a": 1e-05, "b": 1e16, "c": -0.0, "d": 12345678901234567,
                                          "e": 0.1, "f": 1.5e300, "g": [], "h": {}, "i": True}}}
        recs.insert(1, odd)
        recs.append({"assessment": "not an object", "extra": [1, [2, {"z": None}]]})
        lines = [json.dumps(r, sort_keys=True) for r in recs]
        text = lines[0] + "\n\n" + lines[1] + "\n  \n[1, 2]\n" + "\n".join(lines[2:]) + "\n"
        return recs, lines, self.td.write("hist/history.jsonl", text)

    def test_jsonl_round_trip(self):
        recs, lines, path = self.reference_jsonl()
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), len(recs))
        out = os.path.join(self.td.path, "out", "deep", "exported.jsonl")
        self.assertEqual(self.one("SELECT profsum_history_export(?)", (out,)), len(recs))
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(text, "".join(l + "\n" for l in lines))          # byte-exact lines, same order
        self.assertEqual([json.loads(l) for l in text.splitlines()], recs)  # equal values
        self.assertEqual(os.listdir(os.path.dirname(out)), ["exported.jsonl"])   # no temp file left
        # import what was exported: the same records again, in order
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (out,)), len(recs))
        rows = [json.loads(r[0]) for r in self.db.execute(
            "SELECT record_json FROM profsum_history_record ORDER BY record_id")]
        self.assertEqual(rows, recs + recs)
        self.assertEqual(self.db.execute("SELECT DISTINCT origin FROM profsum_history_record").fetchall(),
                         [("import",)])

    def test_summary_matches_reference(self):
        recs, _, path = self.reference_jsonl()
        self.one("SELECT profsum_history_import(?)", (path,))
        for tail in (20, 2, 1, 0, -3):
            with self.subTest(tail=tail):
                s = self.exact(self.one("SELECT profsum_history_summary_json(?)", (tail,)))
                self.assertEqual(s.pop("history_path"), self.db_path)
                self.assertEqual(s, summarize_history(recs, tail))
        v = dict(self.db.execute("SELECT scope || ':' || coalesce(label, ''), num_records "
                                 "FROM profsum_history_summary").fetchall())
        self.assertEqual(v["all:"], len(recs))
        top = self.db.execute("SELECT top_warning, top_warning_count FROM profsum_history_summary "
                              "WHERE scope = 'all'").fetchone()
        self.assertEqual(top, ("w", 3))

    def test_non_finite_numbers(self):
        # Python's json.dumps writes NaN, Infinity and -Infinity, which
        # SQLite's JSON functions reject: a record holding one (a reference
        # line with a NaN metric; a regression from a subnormal median is
        # inf %) must still count in the history summary, and the history
        # views must still read every record (they failed with "malformed
        # JSON" on the build before, and the summary left the record out)
        self.f1_pair()
        tracked = json.loads(self.one("SELECT profsum_track('before', 'after', 'tracked')"))
        line = self.one("SELECT record_json FROM profsum_history_record")
        nan_rec = {"label": "nan", "before": {"source_path": "/runs/Infinity-NaN/a.json.gz"},
                   "after": {"source_path": "/runs/b.json.gz"},
                   "assessment": {"status": "fail", "failures": ["regressed by inf% (threshold 5.00%)."],
                                  "warnings": ["w"],
                                  "metrics": {"steady_state_median_regression_pct": float("inf"),
                                              "steady_state_p90_regression_pct": float("nan"),
                                              "x": [float("-inf"), float("nan"), 1]}}}
        last = {"label": "last", "assessment": {"status": "pass", "failures": [], "warnings": ["w"],
                                                 "metrics": {"steady_state_median_regression_pct": -1.5}}}
        path = self.td.write("nonfinite.jsonl", json.dumps(nan_rec, sort_keys=True) + "\n"
                             + json.dumps(last, sort_keys=True) + "\n")
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 2)
        recs = [tracked, nan_rec, last]
        # the summary document counts every record (NaN compares unequal: the
        # records themselves are compared through their JSON text)
        s = json.loads(self.one("SELECT profsum_history_summary_json(1)"))
        ref = summarize_history(recs, 1)
        for k in ("num_records", "status_counts", "top_failures", "top_warnings", "recent_records"):
            self.assertEqual(s[k], ref[k], k)
        self.assertEqual(sum(s["status_counts"].values()), 3)
        self.assertIn({"message": "regressed by inf% (threshold 5.00%).", "count": 1}, s["top_failures"])
        # the views read every record; non-finite numbers as +/-Inf and NULL
        rows = self.db.execute("SELECT label, status, median_regression_pct, p90_regression_pct, "
                               "before_source, n_failures, n_warnings FROM profsum_history "
                               "ORDER BY record_id").fetchall()
        self.assertEqual([r[0] for r in rows], ["tracked", "nan", "last"])
        self.assertEqual(rows[1][1:], ("fail", float("inf"), None, "/runs/Infinity-NaN/a.json.gz", 1, 1))
        self.assertEqual(rows[2][1:3], ("pass", -1.5))
        v = self.db.execute("SELECT num_records, num_fail, num_pass, top_failure, top_warning, "
                            "top_warning_count FROM profsum_history_summary WHERE scope = 'all'").fetchone()
        self.assertEqual(v[:2], (3, 1 + (tracked["assessment"]["status"] == "fail")))
        self.assertEqual(v[4:], ("w", 2 + tracked["assessment"]["warnings"].count("w")))
        # the records are kept as written: export gives the same lines back
        out = os.path.join(self.td.path, "out.jsonl")
        self.assertEqual(self.one("SELECT profsum_history_export(?)", (out,)), 3)
        with open(out, encoding="utf-8") as f:
            exported = f.read().splitlines()
        self.assertEqual(exported[0], line)
        self.assertEqual(exported[1:], [json.dumps(nan_rec, sort_keys=True), json.dumps(last, sort_keys=True)])

    def test_empty_history(self):
        s = self.exact(self.one("SELECT profsum_history_summary_json()"))
        self.assertEqual(s, {"history_path": self.db_path, "num_records": 0, "status_counts": {},
                             "top_failures": [], "top_warnings": [], "latest_record": None, "recent_records": []})
        out = os.path.join(self.td.path, "empty.jsonl")
        self.assertEqual(self.one("SELECT profsum_history_export(?)", (out,)), 0)
        self.assertEqual(open(out).read(), "")
        # a pipe (or a device) is not replaced by the new file
        fifo = os.path.join(self.td.path, "h.fifo")
        os.mkfifo(fifo)
        self.assertError("SELECT profsum_history_export(?)", (fifo,),
                         r"^profsum_history_export: '.*h\.fifo' is a pipe, not a file")
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_import_errors_change_nothing(self):
        self.f1_pair()
        self.one("SELECT profsum_track('before', 'after', 'keep')")
        bad = self.td.write("bad.jsonl", '{"label": "a"}\n{"label": \n')
        self.assertError("SELECT profsum_history_import(?)", (bad,),
                         r"^profsum_history_import: '.*bad\.jsonl': line 2: invalid JSON at byte \d+")
        self.assertError("SELECT profsum_history_import(?)", (os.path.join(self.td.path, "missing.jsonl"),),
                         r"^profsum_history_import: '.*missing\.jsonl': No such file or directory$")
        self.assertError("SELECT profsum_history_import(?)", (self.td.path,),
                         r"^profsum_history_import: '.*': not a regular file$")
        self.assertError("SELECT profsum_history_import(NULL)", (), r"^profsum_history_import: path must be")
        self.assertEqual(self.n_records(), 1)
        d = os.path.join(self.td.path, "isdir.jsonl")
        os.mkdir(d)
        self.assertError("SELECT profsum_history_export(?)", (d,), r"^profsum_history_export: '.*isdir\.jsonl': ")
        self.assertEqual(os.listdir(self.td.path).count("isdir.jsonl"), 1)
        self.assertEqual([f for f in os.listdir(self.td.path) if ".tmp-" in f], [])

    def test_import_into_fresh_database(self):
        recs, _, path = self.reference_jsonl()
        db2 = connect(os.path.join(self.td.path, "fresh.db"))
        try:
            self.assertEqual(db2.execute("SELECT profsum_history_import(?)", (path,)).fetchone()[0], len(recs))
            self.assertEqual(db2.execute("SELECT count(*) FROM profsum_history").fetchone()[0], len(recs))
        finally:
            db2.close()


class Trend(Base):
    def test_trend_and_op_growth(self):
        opts = {"warmup_steps": 2, "series": "llama"}
        self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "r1", opts)
        self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 50), "r2", opts)
        self.imp(fixtures.f1([130, 140, 150, 160, 170, 180], 80), "r3", opts)
        self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "other", {"warmup_steps": 2, "series": "gpt"})
        self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "no-series", {"warmup_steps": 2})
        t = self.db.execute("SELECT label, run_index, runs_back, median, prev_label, median_delta, "
                            "median_change_pct FROM profsum_trend WHERE series = 'llama' "
                            "ORDER BY run_index").fetchall()
        self.assertEqual(t, [("r1", 1, 3, 135.0, None, None, None),
                             ("r2", 2, 2, 135.0, "r1", 0.0, 0.0),
                             ("r3", 3, 1, 165.0, "r2", 30.0, py_pct(135.0, 165.0))])
        self.assertEqual(self.one("SELECT count(*) FROM profsum_trend WHERE label = 'no-series'"), 0)
        g = self.db.execute("SELECT label, prev_label, name, before_exclusive, after_exclusive, delta, growth_rank "
                            "FROM profsum_op_growth WHERE series = 'llama' AND growth_rank = 1 "
                            "ORDER BY runs_back").fetchall()
        self.assertEqual(g, [("r3", "r2", "softmax", 50.0, 80.0, 30.0, 1),
                             ("r2", "r1", "all-reduce.1", 40.0, 40.0, 0.0, 1)])
        # the cookbook queries of docs/compare.md
        doc = open(os.path.join(os.path.dirname(__file__), "..", "docs", "compare.md")).read()
        first = re.search(r"```sql\n(-- First run of each series where a regression appeared.*?)```", doc, re.S)
        self.assertIsNotNone(first)
        self.assertEqual(self.db.execute(first.group(1)).fetchall(), [("llama", "r3", "r2", py_pct(135.0, 165.0))])
        grew = re.search(r"```sql\n(-- Ops whose exclusive time grew most over the last 3 runs.*?)```", doc, re.S)
        self.assertIsNotNone(grew)
        self.assertEqual(self.db.execute(grew.group(1)).fetchall()[0], ("llama", "softmax", 20.0))


    def test_runs_imported_in_one_second_keep_their_order(self):
        # imported_at is written with its six decimals even at a whole
        # second (Python's isoformat() leaves them out there, and
        # "...:40Z" sorts after "...:40.250000Z"): a series' runs keep
        # their import order; the document's generated_at_utc keeps
        # Python's form.  The clock is a shim preloaded into the shell.
        shim_c = self.td.write("clock.c", CLOCK_SHIM)
        shim = os.path.join(self.td.path, "clock.so")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", shim, shim_c, "-ldl"], check=True)
        self.db.close()
        opts = json.dumps({"warmup_steps": 2, "series": "s"})
        for label, median, at in [("run1", 60, "1700000040.000000000"), ("run2", 80, "1700000040.250000000")]:
            p = self.td.write(label + ".json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], median)),
                              gz=True)
            env = dict(os.environ, FAKE_REALTIME=at,
                       LD_PRELOAD=(os.environ.get("LD_PRELOAD", "") + " " + shim).strip())
            sql = "SELECT profsum_import('%s', '%s', '%s')" % (p, label, opts)
            subprocess.run(["sqlite3", self.db_path, ".load " + os.path.splitext(SO)[0], sql],
                           env=env, check=True, capture_output=True)
        self.db = connect(self.db_path)
        self.assertEqual(self.db.execute("SELECT label, imported_at, generated_at_utc FROM profsum_trace "
                                         "ORDER BY trace_id").fetchall(),
                         [("run1", "2023-11-14T22:14:00.000000Z", "2023-11-14T22:14:00Z"),
                          ("run2", "2023-11-14T22:14:00.250000Z", "2023-11-14T22:14:00.250000Z")])
        self.assertEqual(self.db.execute("SELECT label, run_index, prev_label FROM profsum_trend "
                                         "WHERE series = 's' ORDER BY run_index").fetchall(),
                         [("run1", 1, None), ("run2", 2, "run1")])


# A clock_gettime that answers CLOCK_REALTIME with $FAKE_REALTIME (seconds.nanoseconds).
CLOCK_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
int clock_gettime(clockid_t c, struct timespec *t){
  static int (*real)(clockid_t, struct timespec*);
  const char *z = getenv("FAKE_REALTIME");
  if( c==CLOCK_REALTIME && z && strchr(z, '.') ){
    t->tv_sec = (time_t)atoll(z);
    t->tv_nsec = atol(strchr(z, '.') + 1);
    return 0;
  }
  if( real==0 ) real = (int(*)(clockid_t, struct timespec*))dlsym(RTLD_NEXT, "clock_gettime");
  return real(c, t);
}
"""


class Bundle(Base):
    def listing(self, d):
        return sorted(os.listdir(d)) if os.path.isdir(d) else None

    def test_bundle(self):
        self.f1_pair()
        out = os.path.join(self.td.path, "bundles", "x", "run1") + "//"
        man = self.exact(self.one("SELECT profsum_bundle('before', 'after', ?, ?)",
                                  (out, json.dumps({"top_k": 3, "label": "b1", "history": True}))))
        d = os.path.join(self.td.path, "bundles", "x", "run1")
        self.assertEqual(man, {"output_dir": d, "before_summary_path": d + "/before.summary.json",
                               "after_summary_path": d + "/after.summary.json",
                               "comparison_path": d + "/compare.json", "tracking_path": d + "/track.json",
                               "before_report_path": d + "/before.report.md",
                               "after_report_path": d + "/after.report.md", "status": "pass"})
        self.assertEqual(self.listing(d), sorted(BUNDLE_FILES))    # nothing else (no temporary files)
        read = lambda n: open(os.path.join(d, n), encoding="utf-8").read()
        self.assertEqual(read("before.summary.json"), self.one("SELECT profsum_summary_json('before')") + "\n")
        self.assertEqual(read("after.summary.json"), self.one("SELECT profsum_summary_json('after')") + "\n")
        self.assertEqual(read("compare.json"), self.one("SELECT profsum_compare_json('before', 'after', 3)") + "\n")
        self.exact(read("compare.json")[:-1])
        track = self.exact(read("track.json")[:-1])
        self.assertEqual(track["label"], "b1")
        self.assertEqual(track["assessment"]["status"], "pass")
        self.assertEqual(read("before.report.md"), self.one("SELECT profsum_report_md('before', 3)"))
        self.assertEqual(read("after.report.md"), self.one("SELECT profsum_report_md('after', 3)"))
        # history: true appended the same record
        row = self.db.execute("SELECT origin, label, record_json FROM profsum_history_record").fetchall()
        self.assertEqual(len(row), 1)
        self.assertEqual((row[0][0], row[0][1], json.loads(row[0][2])), ("bundle", "b1", track))
        # again without history, relative directory, overwriting: no new record
        cwd = os.getcwd()
        os.chdir(self.td.path)
        try:
            man = json.loads(self.one("SELECT profsum_bundle(2, 1, './rel/', ?)",
                                      ('{"thresholds": {"max_step_median_regression_pct": 1.0}}',)))
            self.assertEqual(man["output_dir"], "rel")
            self.assertEqual(man["comparison_path"], "rel/compare.json")
            self.assertEqual(man["status"], "fail")
            man = json.loads(self.one("SELECT profsum_bundle(2, 1, '.')"))
            self.assertEqual((man["output_dir"], man["tracking_path"]), (".", "track.json"))
        finally:
            os.chdir(cwd)
        self.assertEqual(self.n_records(), 1)

    def test_strict_provenance(self):
        p = self.imp(fixtures.f1(*F1_BEFORE), "one", {"warmup_steps": 2})
        self.db.execute("SELECT profsum_import(?, 'two')", (p,))
        out = os.path.join(self.td.path, "strict")
        self.assertError("SELECT profsum_bundle('one', 'two', ?, '{\"strict_provenance\": true, \"history\": true}')",
                         (out,), r"^profsum_bundle: provenance checks failed\. Before and after summaries point "
                                 r"to identical trace content \(matching SHA256\)\. Before and after summaries "
                                 r"have the same source_path\.$")
        self.assertFalse(os.path.exists(out))
        self.assertEqual(self.n_records(), 0)

    def test_bad_inputs_write_nothing(self):
        self.f1_pair()
        self.one("SELECT profsum_track('before', 'after', 'keep')")
        rec0 = self.n_records()
        afile = self.td.write("plain.txt", "x")
        cases = [
            ("SELECT profsum_bundle('before', 'nope', ?)", os.path.join(self.td.path, "b1", "c"),
             r"^profsum_bundle: after: no trace with label 'nope'" + NEWEST + "$"),
            ("SELECT profsum_bundle('after', 2, ?)", os.path.join(self.td.path, "b2"),
             r"^profsum_bundle: before and after are the same trace \(id 2\)$"),
            ("SELECT profsum_bundle(1, 2, ?, '{\"thresholds\": [1]}')", os.path.join(self.td.path, "b3"),
             r"^profsum_bundle: options_json: thresholds must be a JSON object$"),
            ("SELECT profsum_bundle(1, 2, ?, '{\"topk\": 3}')", os.path.join(self.td.path, "b4"),
             r"^profsum_bundle: options_json: unknown key 'topk'"),
            ("SELECT profsum_bundle(1, 2, ?, '{\"history\": 1}')", os.path.join(self.td.path, "b5"),
             r"^profsum_bundle: options_json: history must be true or false$"),
            ("SELECT profsum_bundle(1, 2, ?, '[]')", os.path.join(self.td.path, "b6"),
             r"^profsum_bundle: options_json must be a JSON object$"),
            ("SELECT profsum_bundle(1, 2, ?, '{\"history\": true}')", afile,
             r"^profsum_bundle: '.*plain\.txt': not a directory$"),
            ("SELECT profsum_bundle(1, 2, ?, '{\"history\": true}')", os.path.join(afile, "sub", "dir"),
             r"^profsum_bundle: '.*plain\.txt': not a directory$"),
            ("SELECT profsum_bundle(1, 2, ?)", "", r"^profsum_bundle: dir must be a non-empty path"),
        ]
        for sql, d, pat in cases:
            with self.subTest(sql=sql, d=d):
                self.assertError(sql, (d,), pat)
                if d and not d.startswith(afile):
                    self.assertFalse(os.path.exists(d), d)
        self.assertEqual(self.n_records(), rec0)
        self.assertEqual(sorted(os.listdir(self.td.path)),
                         sorted(["h.db", "before.json.gz", "after.json.gz", "plain.txt"]
                                + [f for f in os.listdir(self.td.path) if f.startswith("h.db-")]))

    def test_atomic_when_a_target_is_a_directory(self):
        """One target name is taken by a directory: the error names it, none of
        the six files appears, no temporary file stays, no history record."""
        self.f1_pair()
        d = os.path.join(self.td.path, "out")
        os.makedirs(os.path.join(d, "compare.json"))
        self.assertError("SELECT profsum_bundle(1, 2, ?, '{\"history\": true}')", (d,),
                         r"^profsum_bundle: '.*out/compare\.json' is a directory$")
        self.assertEqual(self.listing(d), ["compare.json"])
        self.assertEqual(self.n_records(), 0)
        # created directories are removed again on failure
        d2 = os.path.join(self.td.path, "new", "deeper")
        os.makedirs(os.path.join(self.td.path, "new"))
        self.assertError("SELECT profsum_bundle(1, 1, ?)", (d2,), r"same trace")
        self.assertFalse(os.path.exists(d2))

    def test_not_writable_directory(self):
        """A directory the caller cannot write: error naming it, nothing written.
        As root (permissions do not apply) the call runs in a child process
        that drops to an unprivileged user."""
        self.f1_pair()
        self.db.commit()
        d = os.path.join(self.td.path, "ro")
        os.mkdir(d, 0o555)
        os.chmod(d, 0o555)
        code = ("import sqlite3, sys\n"
                "db = sqlite3.connect(sys.argv[1]); db.enable_load_extension(True); db.load_extension(sys.argv[2])\n"
                "try:\n"
                "    db.execute(\"SELECT profsum_bundle('before', 'after', ?)\", (sys.argv[3],)).fetchall()\n"
                "    print('OK')\n"
                "except sqlite3.Error as e:\n"
                "    print(e)\n")
        if os.geteuid() == 0:
            nobody = UNPRIVILEGED_ID
            for p in (self.td.path, d):
                os.chmod(p, os.stat(p).st_mode | 0o055 if p != d else 0o555)
            for f in os.listdir(self.td.path):
                os.chmod(os.path.join(self.td.path, f), os.stat(os.path.join(self.td.path, f)).st_mode | 0o044)
            # the unprivileged user must reach the extension and Python's path
            why = unreachable_by_others(SO, self.td.path)
            if why:
                self.skipTest("the unprivileged user cannot reach the extension or the temp dir: " + why)
            res = subprocess.run([sys.executable, "-c", code, self.db_path, SO, d], capture_output=True,
                                 text=True, preexec_fn=lambda: (os.setgid(nobody), os.setuid(nobody)), timeout=60)
        else:
            res = subprocess.run([sys.executable, "-c", code, self.db_path, SO, d], capture_output=True,
                                 text=True, timeout=60)
        self.assertEqual(res.stdout.strip(), "profsum_bundle: cannot write in directory '%s': "
                         "Permission denied" % d, res.stderr)
        self.assertEqual(os.listdir(d), [])
        self.assertEqual(self.n_records(), 0)


TRACK_AT_WHOLE_SECOND = r"""
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "op", "ts": 10 * i, "dur": 5} for i in range(20)]
open(sys.argv[3], "w").write(json.dumps({"traceEvents": ev}))
db.execute("SELECT profsum_import(?, 'a')", (sys.argv[3],))
db.execute("SELECT profsum_import(?, 'b')", (sys.argv[3],))
rec = json.loads(db.execute("SELECT profsum_track('a', 'b', 'lbl')").fetchone()[0])
print(json.dumps([rec["recorded_at_utc"], db.execute("SELECT created_at FROM profsum_history_record").fetchone()[0]]))
"""


class CreatedAtAtWholeSecond(unittest.TestCase):
    """A record made at a whole second: its recorded_at_utc has no fraction
    (Python's isoformat), its row's created_at has ".000000", so that the
    column's texts are of one width and sort in time order.  The clock is
    the shim of test_runs_imported_in_one_second_keep_their_order, set to a
    whole second."""

    def test_created_at_keeps_its_microseconds(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler to build the clock shim")
        with TempDir() as td:
            src = os.path.join(td.path, "clock.c")
            lib = os.path.join(td.path, "clock.so")
            with open(src, "w") as f:
                f.write(CLOCK_SHIM)
            subprocess.run([cc, "-shared", "-fPIC", "-o", lib, src, "-ldl"], check=True)
            env = dict(os.environ, FAKE_REALTIME="1700000040.000000000",
                       LD_PRELOAD=(os.environ.get("LD_PRELOAD", "") + " " + lib).strip())
            out = subprocess.run(["/usr/bin/python3", "-c", TRACK_AT_WHOLE_SECOND, os.path.abspath(SO),
                                  os.path.join(td.path, "h.db"), os.path.join(td.path, "t.json")],
                                 env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)
            recorded, created = json.loads(out.stdout)
            self.assertEqual(recorded, "2023-11-14T22:14:00Z")
            self.assertEqual(created, "2023-11-14T22:14:00.000000Z")


if __name__ == "__main__":
    unittest.main()
