"""The `profsum` command line (ext/cli/profsum_cli.c, docs/cli.md): commands
and flags of summary-v1-tools-spec.md §1, the emit convention, exit codes
0/1/2/3, --help everywhere, the progress line (only on a terminal)."""
import gzip
import json
import os
import pty
import select
import shutil
import subprocess
import time
import unittest

import fixtures
from util import connect, TempDir, ROOT

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))
COMMANDS = ["summarize", "report", "query", "compare", "track", "history", "bundle", "publish", "sql", "view"]

F1_BEFORE = fixtures.f1([100, 110, 120, 130, 140, 150], 60)
F1_AFTER = fixtures.f1([90, 100, 110, 120, 130, 140], 40)
F10_BEFORE = fixtures.f1([100, 110, 120, 130, 140, 150], 60, psum=False, threading=False)
F10_AFTER = fixtures.f1([130, 140, 150, 160, 170, 180], 60, psum=False, threading=False)


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def has_function(name):
    db = connect()
    try:
        return db.execute("SELECT count(*) FROM pragma_function_list WHERE name=?", (name,)).fetchone()[0] > 0
    finally:
        db.close()


def without_generated_at(d):
    d = dict(d)
    d.pop("generated_at_utc", None)
    return d


class CliBase(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.env = dict(os.environ)
        self.env.pop("PROFSUM_PROGRESS_DELAY_MS", None)
        self.env.pop("PROFSUM_NO_PROGRESS", None)
        # `make asan` preloads the sanitizer runtime for Python: the CLI is a
        # separate, uninstrumented program, so it must not inherit it.
        self.env.pop("LD_PRELOAD", None)
        self.env["TMPDIR"] = self.td.path

    def tearDown(self):
        self.td.__exit__()

    def run_cli(self, *args, rc=0, env=None):
        p = subprocess.run([CLI] + list(args), cwd=self.td.path, env=env or self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        out, err = p.stdout.decode(), p.stderr.decode()
        if rc is not None:
            self.assertEqual(p.returncode, rc, "profsum %s\nstdout: %s\nstderr: %s" % (" ".join(args), out[:2000], err))
        return out, err

    def trace(self, name, doc):
        return self.td.write(name, json.dumps(doc), gz=name.endswith(".gz"))

    def temp_files_left(self):
        return [f for f in os.listdir(self.td.path) if f.startswith("profsum-")]


class Summarize(CliBase):
    def test_summary_equals_sql(self):
        p = self.trace("before.json.gz", F1_BEFORE)
        out, err = self.run_cli("summarize", "--trace-file", p, "--warmup-steps", "2", "--hot-op-limit", "10")
        self.assertEqual(err, "")
        self.assertTrue(out.endswith("}\n"))
        text = out[:-1]
        got = json.loads(text)
        self.assertEqual(text, json.dumps(got, indent=2, sort_keys=True))
        db = connect()
        db.execute("SELECT profsum_import(?, 'b', '{\"warmup_steps\": 2, \"hot_op_limit\": 10}')", (p,))
        want = json.loads(db.execute("SELECT profsum_summary_json('b')").fetchone()[0])
        self.assertEqual(without_generated_at(got), without_generated_at(want))
        self.assertEqual(got["schema_version"], "profile_summary.v1")
        self.assertEqual(got["source_path"], p)
        self.assertEqual(got["step_time"]["steady_state_steps"]["median"], 135.0)
        self.assertEqual(got["time_breakdown"]["total_duration"], 310.0)
        self.assertEqual(self.temp_files_left(), [])          # the temporary database is gone

    def test_output_and_knobs(self):
        p = self.trace("t.json", F1_BEFORE)
        target = os.path.join(self.td.path, "deep", "er", "s.json")
        out, _ = self.run_cli("summarize", "--trace-file", p, "--output", target,
                              "--breakdown-mode", "exclusive_global", "--warmup-steps=2")
        self.assertEqual(out, target + "\n")
        with open(target) as f:
            text = f.read()
        self.assertTrue(text.endswith("}\n") and not text.endswith("\n\n"))
        d = json.loads(text)
        self.assertEqual(d["time_breakdown"]["duration_basis"], "exclusive_duration_global_timeline")
        self.assertEqual(d["time_breakdown"]["total_duration"], 180.0)
        self.assertEqual(d["step_time"]["warmup_steps_ignored"], 2)

    def test_missing_db_is_not_created(self):
        # a mistyped --db with labels only: said so before anything is
        # created (nothing to delete afterwards, so nothing of anyone else's)
        for cmd in (["report", "--trace", "conv"], ["query", "--trace", "conv", "--question", "top ops"],
                    ["compare", "--before", "a", "--after", "b"]):
            _, err = self.run_cli(*cmd, "--db", "nonexist.db", rc=1)
            self.assertIn("--db 'nonexist.db': no such database: the traces named are labels", err)
            self.assertFalse([f for f in os.listdir(self.td.path) if f.startswith("nonexist")], cmd)
        # a --summary file that does not exist: the same, before --db is opened
        _, err = self.run_cli("query", "--summary", "nosuch.json", "--question", "top ops",
                              "--db", "nonexist.db", rc=1)
        self.assertIn("'nosuch.json': No such file or directory", err)
        self.assertFalse([f for f in os.listdir(self.td.path) if f.startswith("nonexist")])
        # a file to import creates the database: then a missing label is
        # just that, and the database with the import stays
        p = self.trace("t.json.gz", F1_BEFORE)
        _, err = self.run_cli("compare", "--before", p, "--after", "nolabel", "--db", "new.db", rc=1)
        self.assertIn("--after 'nolabel': no such file, and no trace with that label", err)
        self.assertGreater(os.path.getsize(os.path.join(self.td.path, "new.db")), 0)
        self.run_cli("summarize", "--trace-file", p, "--db", "new2.db", "--label", "x")
        self.assertGreater(os.path.getsize(os.path.join(self.td.path, "new2.db")), 0)

    def test_profile_dir(self):
        self.td.write("run/plugins/profile/2026_01_01_00_00_00/host.trace.json.gz", json.dumps(F1_BEFORE), gz=True)
        out, _ = self.run_cli("summarize", "--profile-dir", os.path.join(self.td.path, "run"))
        self.assertEqual(json.loads(out)["trace_overview"]["num_complete_events"], 13)

    def test_db_and_label(self):
        p = self.trace("t.json.gz", F1_BEFORE)
        dbp = os.path.join(self.td.path, "store.db")
        self.run_cli("summarize", "--trace-file", p, "--db", dbp, "--label", "base")
        _, err = self.run_cli("summarize", "--trace-file", p, "--db", dbp, "--label", "base", rc=1)
        self.assertIn("profsum summarize: ", err)
        self.assertIn("exists already", err)
        self.assertIn("choose another --label or pass --replace", err)   # the CLI's terms, not the SQL option
        self.run_cli("summarize", "--trace-file", p, "--db", dbp, "--label", "base", "--replace")
        db = connect(dbp)
        self.assertEqual(db.execute("SELECT label FROM profsum_trace").fetchall(), [("base",)])
        # report / query from the database by label
        out, _ = self.run_cli("report", "--db", dbp, "--trace", "base", "--top-k", "2")
        self.assertTrue(out.startswith("# Profile Report (profile_summary.v1)\n"))
        out, _ = self.run_cli("query", "--db", dbp, "--trace", "base", "--question", "top ops", "--top-k", "1")
        self.assertEqual(json.loads(out)["results"][0]["name"], "fusion.1")


class ReportQuery(CliBase):
    def summary_file(self, doc=F1_BEFORE, opts=("--warmup-steps", "2")):
        p = self.trace("t.json.gz", doc)
        s = os.path.join(self.td.path, "s.json")
        self.run_cli("summarize", "--trace-file", p, "--output", s, *opts)
        return s

    def test_report(self):
        s = self.summary_file()
        out, _ = self.run_cli("report", "--summary", s, "--top-k", "2")
        db = connect()
        db.execute("SELECT profsum_import(?, 's')", (s,))
        want = db.execute("SELECT profsum_report_md('s', 2)").fetchone()[0]
        self.assertEqual(out, want + "\n")            # print(text)
        for h in ["# Profile Report (profile_summary.v1)", "## Trace Overview",
                  "## Time Breakdown (`exclusive_duration_per_track`)", "## Pre-Op Gaps",
                  "## Gap Context (Region-First)", "## Hierarchical Regions", "Inclusive %", "Exclusive %",
                  "## Optimization Candidates"]:
            self.assertIn(h, out)
        target = os.path.join(self.td.path, "r", "report.md")
        out, _ = self.run_cli("report", "--summary", s, "--output", target)
        self.assertEqual(out, target + "\n")
        with open(target) as f:
            self.assertTrue(f.read().endswith("_\n") or True)

    def test_report_reads_legacy_family_keys(self):
        """summary-v1 §3.2: an older file's families say work_proxy_total and
        normalized_exclusive_per_work; the report reads them as
        flop_proxy_total and time_per_flop_proxy (compare did already)."""
        s = self.summary_file()
        with open(s) as f:
            doc = json.load(f)
        fam = doc["semantic_families"][0]
        fam.pop("flop_proxy_total", None)
        fam.pop("time_per_flop_proxy", None)
        fam["work_proxy_total"] = 1000
        fam["normalized_exclusive_per_work"] = 0.17
        old = os.path.join(self.td.path, "old.json")
        with open(old, "w") as f:
            json.dump(doc, f)
        out, _ = self.run_cli("report", "--summary", old)
        row = [l for l in out.splitlines() if l.startswith("| `%s` |" % fam["family"])][0]
        self.assertIn(" | 1000.000 | 5.882e+00 | ", row)

    def test_report_from_trace(self):
        p = self.trace("t.json.gz", F1_BEFORE)
        out, _ = self.run_cli("report", "--summary", p)
        self.assertIn("## Top Ops", out)

    def test_query(self):
        p = self.trace("f3.json", fixtures.f3())
        s = os.path.join(self.td.path, "f3.summary.json")
        self.run_cli("summarize", "--trace-file", p, "--output", s, "--warmup-steps", "0", "--hot-op-limit", "20")
        op = "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1"
        out, _ = self.run_cli("query", "--summary", s, "--question", "what is the gap before %s?" % op)
        a = json.loads(out)
        self.assertEqual(a["query_type"], "pre_op_gap")
        self.assertEqual(a["match"]["name"], op)
        self.assertEqual(a["context"][0]["region_path"],
                         "_train_step=>apply_rotary_embedding=>linear_softmax_cross_entropy_loss_bwd")
        out, _ = self.run_cli("query", "--summary", s, "--question", "show hierarchical regions", "--top-k", "2")
        a = json.loads(out)
        self.assertEqual(len(a["results"]), 2)
        self.assertIn("inclusive_share_of_total", a["results"][0])
        out, _ = self.run_cli("query", "--summary", s, "--question", "anything at all")
        self.assertEqual(json.loads(out)["query_type"], "optimization_candidates")

    def test_query_list_and_usage(self):
        out, _ = self.run_cli("query", "--list")
        for t in ["top_ops", "compute_vs_communication", "collective_breakdown", "pre_op_gap",
                  "gap_region_context", "hierarchical_regions", "bound_analysis", "comparison_hint",
                  "optimization_candidates"]:
            self.assertIn(t, out)
        self.assertIn("matched by substrings of the lower-cased question", out)
        self.assertNotIn("contains contains", out)
        _, err = self.run_cli("query", "--summary", "x.json", rc=2)
        self.assertIn("profsum query: the option '--question' is required", err)
        _, err = self.run_cli("query", "--question", "top ops", rc=2)
        self.assertIn("--summary", err)


class CompareTrack(CliBase):
    def test_compare(self):
        b = self.trace("before.json.gz", F1_BEFORE)
        a = self.trace("after.json.gz", F1_AFTER)
        out, _ = self.run_cli("compare", "--before", b, "--after", a, "--top-k", "5", "--warmup-steps", "2")
        c = json.loads(out)
        self.assertEqual(c["step_time"]["steady_state_median_delta"], -10.0)
        self.assertEqual(c["regressed_ops"], [])
        self.assertEqual(c["improved_ops"][0]["name"], "softmax")
        self.assertEqual(c["provenance_checks"]["status"], "pass")
        # the same trace twice: identical SHA-256 → strict provenance fails
        _, err = self.run_cli("compare", "--before", b, "--after", b, "--strict-provenance", rc=1)
        self.assertIn("profsum compare: Provenance checks failed. Before and after summaries point to "
                      "identical trace content (matching SHA256).", err)

    def test_compare_db_labels(self):
        b = self.trace("before.json.gz", F1_BEFORE)
        a = self.trace("after.json.gz", F1_AFTER)
        dbp = os.path.join(self.td.path, "x.db")
        self.run_cli("summarize", "--trace-file", b, "--db", dbp, "--label", "b", "--warmup-steps", "2")
        self.run_cli("summarize", "--trace-file", a, "--db", dbp, "--label", "a", "--warmup-steps", "2")
        out, _ = self.run_cli("compare", "--db", dbp, "--before", "b", "--after", "a")
        self.assertEqual(json.loads(out)["step_time"]["steady_state_median_delta"], -10.0)
        _, err = self.run_cli("compare", "--db", dbp, "--before", "nope", "--after", "a", rc=1)
        self.assertIn("'nope': no such file, and no trace with that label", err)

    def require_track(self):
        if not has_function("profsum_track"):
            self.skipTest("profsum_track() does not exist in this build")

    def test_track_fail_on_f10(self):
        self.require_track()
        b = self.trace("before.json.gz", F10_BEFORE)
        a = self.trace("after.json.gz", F10_AFTER)
        hist = os.path.join(self.td.path, "h", "history.jsonl")
        args = ["track", "--before", b, "--after", a, "--warmup-steps", "2", "--label", "unit-test",
                "--max-step-median-regression-pct", "5", "--max-step-p90-regression-pct", "5",
                "--history", hist, "--fail-on", "fail"]
        out, err = self.run_cli(*args, rc=3)
        rec = json.loads(out)
        self.assertEqual(rec["assessment"]["status"], "fail")
        self.assertEqual(rec["label"], "unit-test")
        self.assertEqual(rec["assessment"]["failures"], [
            "Steady-state median step time regressed by 22.22% (threshold 5.00%).",
            "Steady-state p90 step time regressed by 20.41% (threshold 5.00%)."])
        self.assertIn("profsum track: status fail", err)
        with open(hist) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 1)
        self.assertEqual(json.loads(lines[0])["label"], "unit-test")
        out, _ = self.run_cli("history", "--history", hist)
        h = json.loads(out)
        self.assertEqual(h["num_records"], 1)
        self.assertEqual(h["status_counts"], {"fail": 1})
        self.assertEqual(h["history_path"], hist)
        # a second run appends (the JSONL is re-written atomically)
        self.run_cli(*args[:-2], rc=0)
        with open(hist) as f:
            lines2 = f.read().splitlines()
        self.assertEqual(lines2[0], lines[0])
        self.assertEqual(len(lines2), 2)
        # without --fail-on the status does not change the exit code
        self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "2")

    def test_track_and_history_with_an_infinite_regression(self):
        """A steady median of 5e-324 before makes the regression infinite:
        track records it (Infinity, as Python's json writes it), fails the
        assessment, and history reads the record back."""
        self.require_track()
        b = self.trace("before.json.gz", F1_BEFORE)
        a = self.trace("after.json.gz", F1_AFTER)
        out, _ = self.run_cli("summarize", "--trace-file", b, "--warmup-steps", "2")
        doc = json.loads(out)
        doc["step_time"]["steady_state_steps"]["median"] = 5e-324
        tiny = os.path.join(self.td.path, "tiny.json")
        with open(tiny, "w") as f:
            json.dump(doc, f)
        hist = os.path.join(self.td.path, "inf.jsonl")
        out, _ = self.run_cli("track", "--before", tiny, "--after", a, "--warmup-steps", "2", "--history", hist)
        rec = json.loads(out)
        self.assertEqual(rec["assessment"]["status"], "fail")
        self.assertEqual(rec["assessment"]["metrics"]["steady_state_median_regression_pct"], float("inf"))
        self.assertIn("Steady-state median step time regressed by inf% (threshold 5.00%).",
                      rec["assessment"]["failures"])
        out, _ = self.run_cli("history", "--history", hist)
        h = json.loads(out)
        self.assertEqual((h["num_records"], h["status_counts"]), (1, {"fail": 1}))
        self.assertEqual(h["latest_record"]["assessment"]["metrics"]["steady_state_median_regression_pct"],
                         float("inf"))

    def test_track_db_history_and_warn_gate(self):
        self.require_track()
        b = self.trace("before.json.gz", F1_BEFORE)
        a = self.trace("after.json.gz", F1_AFTER)
        hist = os.path.join(self.td.path, "hist.db")
        out, _ = self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "2", "--history", hist,
                              "--fail-on", "warn")
        self.assertEqual(json.loads(out)["assessment"]["status"], "pass")
        # stall share rose by 0.011: a 0.001 threshold makes it a warning
        self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "2", "--history", hist,
                     "--max-stall-share-regression-abs", "0.001", "--fail-on", "warn", rc=3)
        self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "2", "--history", hist,
                     "--max-stall-share-regression-abs", "0.001", "--fail-on", "fail", rc=0)
        out, _ = self.run_cli("history", "--history", hist, "--tail", "1")
        h = json.loads(out)
        self.assertEqual(h["num_records"], 3)
        self.assertEqual(h["status_counts"], {"pass": 1, "warn": 2})
        self.assertEqual(len(h["recent_records"]), 1)
        self.assertEqual(h["history_path"], hist)
        # the history db holds the imported traces too: track by label
        db = connect(hist)
        labels = [r[0] for r in db.execute("SELECT label FROM profsum_trace ORDER BY trace_id")]
        # the same two files with the same knobs, three times: stored once
        self.assertEqual(labels, ["before", "after"])
        self.run_cli("track", "--history", hist, "--before", "before", "--after", "after")
        # other knobs, or other bytes under the same path: imported again
        self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "1", "--history", hist)
        self.trace("after.json.gz", F10_AFTER)
        self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "2", "--history", hist)
        self.run_cli("compare", "--before", b, "--after", a, "--warmup-steps", "2", "--db", hist)
        self.run_cli("report", "--summary", a, "--warmup-steps", "2", "--db", hist)
        labels = [r[0] for r in db.execute("SELECT label FROM profsum_trace ORDER BY trace_id")]
        self.assertEqual(labels, ["before", "after", "before-2", "after-2", "after-3"])
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0], 6)
        # one file on both sides: read twice, as without a database (the
        # reference's provenance check fails; the record is written)
        out, _ = self.run_cli("track", "--before", b, "--after", b, "--warmup-steps", "2", "--history", hist)
        rec = json.loads(out)
        self.assertEqual(rec["assessment"]["comparison"]["provenance_checks"]["status"], "fail")
        labels = [r[0] for r in db.execute("SELECT label FROM profsum_trace ORDER BY trace_id")]
        self.assertEqual(labels[-1], "before-3")
        # ... and that second copy is used again by the next such run
        self.run_cli("track", "--before", b, "--after", b, "--warmup-steps", "2", "--history", hist)
        self.run_cli("compare", "--before", b, "--after", b, "--warmup-steps", "2", "--db", hist)
        n = db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0]
        self.assertEqual(n, len(labels))
        db.close()

    def test_track_concurrent_jobs_share_one_db(self):
        """Four CI jobs tracking the same pair into one new database at once:
        every job succeeds, the pair is stored once, four records."""
        self.require_track()
        b = self.trace("base.json.gz", F1_BEFORE)
        a = self.trace("pr.json.gz", F1_AFTER)
        hist = os.path.join(self.td.path, "ci.db")
        env = dict(self.env)
        procs = [subprocess.Popen([CLI, "track", "--before", b, "--after", a, "--history", hist,
                                   "--label", "run%d" % i, "--warmup-steps", "2"], cwd=self.td.path, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(4)]
        for pr in procs:
            out, err = pr.communicate(timeout=120)
            self.assertEqual(pr.returncode, 0, err.decode())
        db = connect(hist)
        self.assertEqual(db.execute("SELECT label FROM profsum_trace ORDER BY label").fetchall(),
                         [("base",), ("pr",)])
        self.assertEqual(db.execute("SELECT label FROM profsum_history_record ORDER BY label").fetchall(),
                         [("run0",), ("run1",), ("run2",), ("run3",)])
        db.close()

    def test_track_notes_when_no_steady_steps(self):
        """A side whose steps are all warmup steps gets a note on stderr (its
        step-time checks cannot fail); stdout stays the record."""
        self.require_track()
        b = self.trace("b.json.gz", F1_BEFORE)
        a = self.trace("a.json.gz", F1_AFTER)
        out, err = self.run_cli("track", "--before", b, "--after", a)      # 6 steps, warmup 5
        self.assertIn("status", json.loads(out)["assessment"])
        self.assertEqual(err.count("profsum track: note:"), 0, err)
        out, err = self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "6")
        self.assertIn("profsum track: note: --before '%s' (trace 'b'): its 6 steps are all warmup "
                      "(--warmup-steps 6): no steady-state steps, so the step-time checks cannot fail" % b, err)
        self.assertIn("profsum track: note: --after '%s' (trace 'a'): " % a, err)
        json.loads(out)
        # a summary file: its own warmup_steps, so no advice about the flag
        s = os.path.join(self.td.path, "s.json")
        self.run_cli("summarize", "--trace-file", b, "--warmup-steps", "6", "--output", s)
        out, err = self.run_cli("track", "--before", s, "--after", a, "--warmup-steps", "1")
        self.assertEqual(err, "profsum track: note: --before '%s' (trace 's', a summary file) has no "
                              "steady-state steps: the step-time checks cannot fail\n" % s)

    def test_track_usage(self):
        _, err = self.run_cli("track", "--before", "a", "--after", "b", "--fail-on", "maybe", rc=2)
        self.assertIn("invalid choice 'maybe'", err)
        _, err = self.run_cli("track", "--before", "a", rc=2)
        self.assertIn("the option '--after' is required", err)
        _, err = self.run_cli("track", "--before", "a", "--after", "b", "--max-step-p90-regression-pct", "x", rc=2)
        self.assertIn("needs a finite number", err)

    def test_history_missing_file(self):
        if not has_function("profsum_history_summary_json"):
            self.skipTest("profsum_history_summary_json() does not exist in this build")
        for name in ["none.jsonl", "none.db"]:
            out, _ = self.run_cli("history", "--history", name)
            h = json.loads(out)
            self.assertEqual((h["num_records"], h["latest_record"], h["history_path"]), (0, None, name))
            self.assertFalse(os.path.exists(os.path.join(self.td.path, name)))

    def test_bundle(self):
        if not has_function("profsum_bundle"):
            self.skipTest("profsum_bundle() does not exist in this build")
        b = self.trace("before.json.gz", F1_BEFORE)
        a = self.trace("after.json.gz", F1_AFTER)
        out, _ = self.run_cli("bundle", "--before-summary", b, "--after-summary", a, "--warmup-steps", "2",
                              "--output-dir", "cmp", "--label", "l1")
        m = json.loads(out)
        self.assertEqual(m["status"], "pass")
        self.assertEqual(sorted(os.listdir(os.path.join(self.td.path, "cmp"))),
                         ["after.report.md", "after.summary.json", "before.report.md", "before.summary.json",
                          "compare.json", "track.json"])
        _, err = self.run_cli("bundle", "--before-summary", b, "--output-dir", "cmp2", rc=1)
        self.assertIn("Bundle requires either a summary path or a run target for both before and after.", err)


class HistoryNameAndSeries(CliBase):
    def test_jsonl_history_name_in_any_case(self):
        """--history H.JSONL (and .Json, .NDJSON, .TXT) names a JSONL history
        as its lower-case spelling does: one line a record, no database."""
        t = self.trace("t.json", fixtures.f2())
        for name in ("H.JSONL", "h2.Json", "h3.NDJSON", "h4.TXT"):
            for _ in range(2):
                self.run_cli("track", "--before", t, "--after", t, "--history", name)
            with open(os.path.join(self.td.path, name), "rb") as f:
                data = f.read()
            self.assertFalse(data.startswith(b"SQLite format 3"), name)
            self.assertEqual([json.loads(line)["assessment"]["status"] for line in data.splitlines()],
                             ["pass", "pass"], name)
            out, _ = self.run_cli("history", "--history", name)
            self.assertEqual(json.loads(out)["num_records"], 2, name)
        # any other new name is a database
        self.run_cli("track", "--before", t, "--after", t, "--history", "h.jsonl.db")
        with open(os.path.join(self.td.path, "h.jsonl.db"), "rb") as f:
            self.assertTrue(f.read(16).startswith(b"SQLite format 3"))

    def test_jsonl_label_that_is_not_a_string(self):
        """A record whose label is a number, an object, ... was imported with
        a NULL label; `history` now fails naming the file, the line and the
        field, and track will not append to such a file."""
        t = self.trace("t.json", fixtures.f2())
        self.run_cli("track", "--before", t, "--after", t, "--history", "h.jsonl", "--label", "ok")
        with open(os.path.join(self.td.path, "h.jsonl"), "a") as f:
            f.write('{"assessment": {"status": "pass"}, "label": null}\n')
            f.write('{"assessment": {"status": "fail"}, "label": 1234}\n')
        with open(os.path.join(self.td.path, "h.jsonl"), "rb") as f:
            before = f.read()
        out, err = self.run_cli("history", "--history", "h.jsonl", rc=1)
        self.assertEqual((out, err), ("", "profsum history: profsum_history_import: 'h.jsonl': line 3: $.label: "
                                      "must be a string or null, not a number (1234)\n"))
        _, err = self.run_cli("track", "--before", t, "--after", t, "--history", "h.jsonl", rc=2)
        self.assertIn("line 3: $.label: must be a string or null, not a number (1234)", err)
        with open(os.path.join(self.td.path, "h.jsonl"), "rb") as f:
            self.assertEqual(f.read(), before)
        # written as a string, the record is read, under its label
        with open(os.path.join(self.td.path, "h.jsonl"), "wb") as f:
            f.write(before.replace(b'"label": 1234', b'"label": "1234"'))
        out, _ = self.run_cli("history", "--history", "h.jsonl")
        h = json.loads(out)
        self.assertEqual(h["num_records"], 3)
        self.assertEqual([r.get("label") for r in h["recent_records"]], ["ok", None, "1234"])

    def test_empty_series_refused_as_an_empty_label(self):
        t = self.trace("t.json", fixtures.f2())
        for opt in ("--label", "--series"):
            _, err = self.run_cli("summarize", "--trace-file", t, "--db", "s.db", opt, "", rc=1)
            self.assertIn("profsum summarize: profsum_import: the %s must not be empty" % opt[2:], err)
        db = connect()
        try:
            db.execute("ATTACH ? AS s", (os.path.join(self.td.path, "s.db"),))
            if db.execute("SELECT count(*) FROM s.sqlite_schema WHERE name = 'profsum_trace'").fetchone()[0]:
                self.assertEqual(db.execute("SELECT count(*) FROM s.profsum_trace").fetchone()[0], 0)
            with self.assertRaisesRegex(Exception, "profsum_import: the series must not be empty"):
                db.execute("SELECT profsum_import(?, 'x', '{\"series\": \"\"}')", (t,)).fetchone()
            tid = db.execute("SELECT profsum_import(?, 'y', '{\"series\": null}')", (t,)).fetchone()[0]
            self.assertEqual(db.execute("SELECT label, series FROM profsum_trace").fetchall(), [("y", None)])
            self.assertEqual(tid, 1)
        finally:
            db.close()


class Errors(CliBase):
    def test_wal_database_in_read_only_directory(self):
        """A WAL database (as profsum leaves one) cannot be read where SQLite
        cannot create its -shm file: the CLI says why and what to do, for
        `history` and for `report`/`compare` with --db, and the immutable URI
        it names does read the database.  The read-only directory is a
        read-only bind mount inside a private mount namespace (`unshare -m`:
        nothing outlives the child), or a chmod 555 directory when not root;
        skipped when neither is possible."""
        ro = os.path.join(self.td.path, "ro")
        os.mkdir(ro)
        hist = os.path.join(ro, "h.db")
        db = os.path.join(ro, "d.db")
        t = self.trace("t.json", fixtures.f2())
        self.run_cli("track", "--before", t, "--after", t, "--history", hist)
        self.run_cli("summarize", "--trace-file", t, "--db", db, "--label", "base")
        self.assertFalse(os.path.exists(hist + "-wal") or os.path.exists(hist + "-shm"))
        cmds = [[CLI, "history", "--history", hist],
                [CLI, "report", "--db", db, "--trace", "base"],
                [CLI, "compare", "--db", db, "--before", "base", "--after", "base"]]
        probe = ["sqlite3", "file:%s?immutable=1" % hist, "SELECT count(*) FROM profsum_history_record"]
        if os.geteuid() != 0:
            os.chmod(ro, 0o555)
            if os.access(ro, os.W_OK):
                os.chmod(ro, 0o755)
                self.skipTest("chmod 555 does not make this directory read-only")

            def run(argv):
                return subprocess.run(argv, cwd=self.td.path, env=self.env, capture_output=True, text=True)
        else:
            if not (shutil.which("unshare") and shutil.which("mount")):
                self.skipTest("root without unshare/mount: cannot make a read-only directory")
            pre = "mount --bind \"$0\" \"$0\" && mount -o remount,bind,ro \"$0\" && exec \"$@\""
            ok = subprocess.run(["unshare", "-m", "sh", "-c", pre, ro, "true"], capture_output=True)
            if ok.returncode != 0:
                self.skipTest("cannot mount a read-only directory here: %s" % ok.stderr.decode()[:200])

            def run(argv):
                return subprocess.run(["unshare", "-m", "sh", "-c", pre, ro] + argv, cwd=self.td.path,
                                      env=self.env, capture_output=True, text=True)
        try:
            for argv, path in zip(cmds, (hist, db, db)):
                r = run(argv)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("unable to open database file ('%s' is a WAL database in a directory this "
                              "process cannot write" % path, r.stderr)
                self.assertIn("'file:%s?immutable=1'" % path, r.stderr)
            if shutil.which("sqlite3"):
                r = run(probe)
                self.assertEqual((r.returncode, r.stdout.strip()), (0, "1"), r.stderr)
        finally:
            if os.geteuid() != 0:
                os.chmod(ro, 0o755)

    def test_wal_database_in_directory_of_another_user(self):
        """A WAL database in a directory another user owns (mode 755: no
        read-only mount) makes SQLite say "attempt to write a readonly
        database" rather than "unable to open database file": `history`,
        `report`, `compare` and `query` still say why and name the immutable
        URI, and none of them claims that the trace is not in the database.
        Run as the user nobody (setpriv), the files staying root's."""
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            self.skipTest("setpriv is missing: cannot run as another user")
        nobody = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        os.chmod(self.td.path, 0o755)
        probe = subprocess.run(nobody + [CLI, "--version"], capture_output=True)
        if probe.returncode != 0:
            self.skipTest("the user nobody cannot run %s: %s" % (CLI, probe.stderr.decode()[:200]))
        shared = os.path.join(self.td.path, "shared")
        os.mkdir(shared)
        hist = os.path.join(shared, "runs.db")
        t = self.trace("t.json", fixtures.f2())
        self.run_cli("track", "--before", t, "--after", t, "--history", hist)
        self.run_cli("summarize", "--trace-file", t, "--db", hist, "--label", "base")
        self.assertFalse(os.path.exists(hist + "-wal") or os.path.exists(hist + "-shm"))
        cmds = [["history", "--history", hist],
                ["report", "--db", hist, "--trace", "base"],
                ["report", "--db", hist, "--trace", "1"],
                ["compare", "--db", hist, "--before", "base", "--after", "base"],
                ["query", "--db", hist, "--trace", "base", "--question", "What is slow?"]]
        for owner in (0, 65534):
            # the database file root's (read-only to nobody), then nobody's
            os.chown(hist, owner, -1)
            for argv in cmds:
                r = subprocess.run(nobody + [CLI] + argv, cwd=self.td.path, env=self.env,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 1, (owner, argv, r.stderr))
                self.assertNotIn("no trace with that label", r.stderr)
                self.assertIn("profsum %s: " % argv[0], r.stderr)
                self.assertIn("('%s' is a WAL database in a directory this process cannot write" % hist,
                              r.stderr)
                self.assertIn("SQLite needs to create '%s-shm' beside it" % hist, r.stderr)
                self.assertIn("'file:%s?immutable=1'" % hist, r.stderr)
        self.assertFalse(os.path.exists(hist + "-wal") or os.path.exists(hist + "-shm"))

    def test_help_everywhere(self):
        out, _ = self.run_cli("--help")
        for c in COMMANDS:
            self.assertIn(c, out)
        for c in COMMANDS:
            out, err = self.run_cli(c, "--help")
            self.assertTrue(out.startswith("usage: profsum %s" % c), out)
            self.assertEqual(err, "")
            out, _ = self.run_cli("help", c)
            self.assertTrue(out.startswith("usage: profsum %s" % c), out)

    def test_usage_errors(self):
        cases = [
            (["summarize"], "profsum summarize: Specify one of --trace-file, --xplane-file, --profile-dir, "
                            "--artifact, or --run-target."),
            (["summarize", "--trace-file"], "profsum summarize: option '--trace-file' expects a value"),
            (["summarize", "--bogus", "1"], "profsum summarize: unknown option '--bogus'"),
            (["summarize", "--trace-file", "x", "--warmup-steps", "two"], "needs an integer (as Python's int() reads it: digits, a sign, '_' between digits), not 'two'"),
            (["summarize", "--trace-file", "x", "--warmup-steps", "-1"], "must be an integer from 0 to 2147483647"),
            (["summarize", "--trace-file", "x", "--breakdown-mode", "wall"], "invalid choice 'wall'"),
            (["trim", "--trace-file", "x", "--output", "y", "--pid", "-3"], "must be a non-negative integer"),
            (["report", "--trace", "x"], "give --db too"),
            (["compare", "--before", "x"], "the option '--after' is required"),
            (["history"], "the option '--history' is required"),
            (["help", "nosuchcommand"], "profsum help: unknown command 'nosuchcommand'"),
            (["nosuchcommand"], "profsum: unknown command 'nosuchcommand'"),
        ]
        for args, msg in cases:
            _, err = self.run_cli(*args, rc=2)
            self.assertIn(msg, err, args)
        _, err = self.run_cli(rc=2)
        self.assertIn("usage: profsum", err)

    def test_missing_files(self):
        for args in [["summarize", "--trace-file", "missing.json.gz"],
                     ["report", "--summary", "missing.json"],
                     ["query", "--summary", "missing.json", "--question", "top ops"],
                     ["compare", "--before", "missing1.json", "--after", "missing2.json"]]:
            _, err = self.run_cli(*args, rc=1)
            self.assertTrue(err.startswith("profsum %s: " % args[0]), err)
            self.assertIn("missing", err)
            if args[0] == "summarize":   # the reference's words
                self.assertEqual(err.strip(), "profsum summarize: Trace file does not exist: missing.json.gz")
            else:
                self.assertIn("No such file or directory", err)
        self.assertEqual(self.temp_files_left(), [])

    def test_bad_input(self):
        p = self.td.write("bad.json", b'{"traceEvents": [{"ph": "X", "ts": 1,, }')
        _, err = self.run_cli("summarize", "--trace-file", p, rc=1)
        self.assertTrue(err.startswith("profsum summarize: profsum_import: "), err)
        self.assertIn("bad.json", err)
        # the reference's words for what is missing
        _, err = self.run_cli("summarize", "--xplane-file", "x.xplane.pb", rc=1)
        self.assertEqual(err.strip(), "profsum summarize: XPlane protobuf does not exist: x.xplane.pb")
        _, err = self.run_cli("summarize", "--profile-dir", "nodir", rc=1)
        self.assertEqual(err.strip(), "profsum summarize: Profile directory does not exist: nodir")
        os.makedirs(os.path.join(self.td.path, "emptydir"), exist_ok=True)
        d = os.path.join(self.td.path, "emptydir")
        _, err = self.run_cli("summarize", "--profile-dir", d, rc=1)
        self.assertEqual(err.strip(), "profsum summarize: profsum_import: No *.xplane.pb file found "
                         "under '%s'. No trace JSON either (perfetto_trace.json.gz or *.trace.json(.gz))." % d)
        # a path below a file does not exist; a file is no folder: nothing under it
        f = self.td.write("plain.json", b"{}")
        for opt, want in (("--trace-file", "Trace file does not exist: %s/x"),
                          ("--xplane-file", "XPlane protobuf does not exist: %s/x"),
                          ("--profile-dir", "Profile directory does not exist: %s/x")):
            _, err = self.run_cli("summarize", opt, f + "/x", rc=1)
            self.assertEqual(err.strip(), "profsum summarize: " + want % f)
        _, err = self.run_cli("summarize", "--profile-dir", f, rc=1)
        self.assertEqual(err.strip(), "profsum summarize: No *.xplane.pb file found under '%s'. "
                         "'%s' is not a directory." % (f, f))

    def test_file_options_refuse_a_folder(self):
        # --trace-file reads one JSON trace, --xplane-file one XPlane (summary
        # §1.1): a folder is refused (the reference fails to open it, exit 1),
        # never summarized as --profile-dir would
        d = os.path.join(self.td.path, "prof")
        self.td.write("prof/a.xplane.pb", b"")
        self.trace("prof/perfetto_trace.json.gz", F1_BEFORE)
        for opt, what in (("--trace-file", "one trace file (Perfetto/Chrome JSON, .json or .json.gz)"),
                          ("--xplane-file", "one XPlane protobuf file (.xplane.pb)")):
            for arg, shown in ((d, d), ("prof/", "prof"), ("./prof", "prof")):
                out, err = self.run_cli("summarize", opt, arg, rc=1)
                self.assertEqual(out, "")
                self.assertEqual(err.strip(), "profsum summarize: option '%s': '%s' is a directory, not %s; "
                                 "to summarize the profile in a folder use --profile-dir '%s'"
                                 % (opt, shown, what, shown), (opt, arg))
            # first given wins: the folder is refused whatever follows
            _, err = self.run_cli("summarize", opt, d, "--profile-dir", d, rc=1)
            self.assertIn("is a directory", err)
        os.symlink(d, os.path.join(self.td.path, "link"))
        _, err = self.run_cli("summarize", "--trace-file", "link", rc=1)
        self.assertIn("option '--trace-file': 'link' is a directory", err)
        # --profile-dir reads the folder (XPlane first)
        out, _ = self.run_cli("summarize", "--profile-dir", d)
        self.assertEqual(json.loads(out)["source_format"], "xplane_pb")
        self.assertEqual(self.temp_files_left(), [])

    def test_publish(self):
        p = self.trace("t.json.gz", F1_BEFORE)
        env = dict(self.env)
        env.pop("WANDB_ENTITY", None)
        env.pop("WANDB_PROJECT", None)
        # a dry run needs no key and sends nothing
        r = subprocess.run([CLI, "publish", "--summary", p, "--dry-run", "--entity", "e", "--project", "p",
                            "--alias", "a", "--alias", "b"], cwd=self.td.path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        # tools-spec §7: exactly these keys; the name from the UTC time (no run id)
        self.assertEqual(set(d), {"status", "entity", "project", "artifact_name", "artifact_type",
                                  "aliases", "summary_path", "report_path", "metadata"})
        self.assertEqual((d["status"], d["entity"], d["project"], d["artifact_type"], d["aliases"],
                          d["summary_path"], d["report_path"]),
                         ("dry_run", "e", "p", "profile_summary", ["a", "b"], p, None))
        self.assertRegex(d["artifact_name"], r"^profile-summary-\d{8}-\d{6}$")
        # a summary file whose run_metadata names its run, and a report
        doc = json.loads(self.run_cli("summarize", "--trace-file", p)[0])
        doc["run_metadata"]["run_id"] = "abc123"
        s1 = os.path.join(self.td.path, "s1.json")
        with open(s1, "w") as f:
            json.dump(doc, f)
        rep = os.path.join(self.td.path, "r.md")
        with open(rep, "w") as f:
            f.write("# r\n")
        r = subprocess.run([CLI, "publish", "--summary", s1, "--report", rep, "--dry-run",
                            "--entity", "e", "--project", "p"], cwd=self.td.path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        self.assertEqual((d["artifact_name"], d["summary_path"], d["report_path"], d["aliases"],
                          d["metadata"]["run_id"]),
                         ("profile-summary-abc123", s1, rep, ["latest"], "abc123"))
        # without a target: a clear error, exit 1
        _, err = self.run_cli("publish", "--summary", p, "--dry-run", rc=1, env=env)
        self.assertIn("needs an entity and a project (--entity/--project or WANDB_ENTITY/WANDB_PROJECT)", err)

    def test_sql_shell(self):
        if shutil.which("sqlite3") is None:
            self.skipTest("no sqlite3 shell installed")
        env = dict(self.env)
        if os.path.dirname(os.path.abspath(CLI)) == ROOT:
            env.pop("PROFSUM_SO", None)     # found next to the binary
        else:                               # e.g. a sanitizer build elsewhere: the plain one
            env["PROFSUM_SO"] = os.path.join(ROOT, "profsum.so")
        out, _ = self.run_cli("sql", ":memory:", "SELECT profsum_version();", env=env)
        with open(os.path.join(ROOT, "VERSION")) as f:
            self.assertEqual(out.strip(), f.read().strip())
        env["PROFSUM_SO"] = os.path.join(self.td.path, "nope.so")
        _, err = self.run_cli("sql", env=env, rc=1)
        self.assertIn("PROFSUM_SO", err)

    def test_sql_shell_extension_path_with_quotes(self):
        """profsum.so in a directory whose name has a ', a " and a \\: the
        shell's .load gets the path quoted, and the extension loads."""
        if shutil.which("sqlite3") is None:
            self.skipTest("no sqlite3 shell installed")
        d = os.path.join(self.td.path, "it's a \"dir\" \\x")
        os.mkdir(d)
        shutil.copy(CLI, d)
        shutil.copy(os.path.join(ROOT, "profsum.so"), d)
        env = dict(self.env)
        env.pop("PROFSUM_SO", None)                       # found next to the copy
        for e in (env, dict(env, PROFSUM_SO=os.path.join(d, "profsum.so"))):
            p = subprocess.run([os.path.join(d, "profsum"), "sql", ":memory:", "SELECT profsum_version();"],
                               cwd=self.td.path, env=e, capture_output=True, text=True, timeout=60)
            self.assertEqual((p.returncode, p.stderr), (0, ""))
            with open(os.path.join(ROOT, "VERSION")) as f:
                self.assertEqual(p.stdout.strip(), f.read().strip())


def big_trace(n_steps=4000):
    """A trace of a few MB (many steps and ops)."""
    ev = list(fixtures.TPU_META)
    for i in range(n_steps):
        t = i * 1000
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(i), "ts": t, "dur": 900})
        for j in range(8):
            ev.append({"ph": "X", "pid": 1, "tid": 2, "name": "fusion.%d" % j, "ts": t + j * 100, "dur": 90,
                       "args": {"tf_op": "jit(train_step)/layer_%d/dot_general" % j}})
    return fixtures.doc(ev)


class Progress(CliBase):
    def test_progress_on_a_terminal(self):
        p = self.trace("big.json", big_trace())
        env = dict(self.env, PROFSUM_PROGRESS_DELAY_MS="0")
        master, slave = pty.openpty()
        proc = subprocess.Popen([CLI, "summarize", "--trace-file", p, "--output", "s.json"], cwd=self.td.path,
                                env=env, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        data = b""
        deadline = time.time() + 120
        while time.time() < deadline:
            r, _, _ = select.select([master], [], [], 1.0)
            if r:
                try:
                    chunk = os.read(master, 4096)
                except OSError:             # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                data += chunk
            elif proc.poll() is not None:
                break
        os.close(master)
        out = proc.stdout.read().decode()
        proc.stdout.close()
        self.assertEqual(proc.wait(), 0)
        self.assertEqual(out, "s.json\n")
        text = data.decode()
        self.assertRegex(text, r"profsum: importing big\.json  \d+\.\d/\d+\.\d MB +\d+%  \d+\.\d MB/s  "
                               r"ETA (\d+:\d\d|--:--)\x1b\[K")
        self.assertRegex(text, r"profsum: imported big\.json  \d+\.\d MB  36005 events  \d+\.\d s  [\d.]+ MB/s")
        self.assertTrue(text.rstrip("\r\n").endswith("\x1b[K"))

    def test_no_progress_on_a_pipe(self):
        p = self.trace("big.json", big_trace())
        env = dict(self.env, PROFSUM_PROGRESS_DELAY_MS="0")
        out, err = self.run_cli("summarize", "--trace-file", p, "--output", "s.json", env=env)
        self.assertEqual(out, "s.json\n")
        self.assertEqual(err, "")


if __name__ == "__main__":
    unittest.main()


class TrimAndHtml(CliBase):
    def test_trim(self):
        src = self.td.write("f9.json.gz", json.dumps(fixtures.f9()), gz=True)
        out = os.path.join(self.td.path, "small.json.gz")
        o, _ = self.run_cli("trim", "--trace-file", src, "--output", out, "--pid", "1", "--start-us", "200")
        self.assertEqual(o.splitlines(), [out, "5 entries written"])
        db = connect()
        names = [r[0] for r in db.execute("SELECT name FROM trace_events(?) WHERE ph='X' ORDER BY idx", (out,))]
        db.close()
        self.assertEqual(names, ["ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_ReduceScatter_RING_LL"])
        self.run_cli("trim", "--trace-file", src, rc=2)
        self.run_cli("trim", "--trace-file", src, "--output", out, "--start-us", "x", rc=2)

    def test_trim_window_edges_exact(self):
        """--start-us/--end-us are the half-open window [start, end) on the
        events' exact times, sub-ns digits included: an event exactly at the
        start is kept, one exactly at the end is not, and one a tenth of a ns
        on the wrong side of a limit (the same ns) is left out."""
        ev = [("before_start", "1700000000123.4566"), ("at_start", "1700000000123.4567"),
              ("in", "1700000000150"), ("before_end", "1700000000200.0006"),
              ("at_end", "1700000000200.0007"), ("ns_start", "1700000000123.456"),
              ("neg", "-0.0051")]
        body = ",".join('{"ph":"X","pid":1,"tid":1,"name":"%s","ts":%s,"dur":1}' % e for e in ev)
        src = self.td.write("prec.json", '{"traceEvents":[%s]}' % body)
        out = os.path.join(self.td.path, "p.json.gz")

        def kept(*limits):
            self.run_cli("trim", "--trace-file", src, "--output", out, *limits)
            db = connect()
            try:
                return [r[0] for r in db.execute("SELECT name FROM trace_events(?) WHERE ph='X' ORDER BY idx",
                                                 (out,))]
            finally:
                db.close()
        self.assertEqual(kept("--start-us", "1700000000123.4567", "--end-us", "1700000000200.0007"),
                         ["at_start", "in", "before_end"])
        self.assertEqual(kept("--start-us", "1_700_000_000_123.4566", "--end-us", "1.7000000002000006e12"),
                         ["before_start", "at_start", "in"])
        self.assertEqual(kept("--start-us", "1700000000123.4567006", "--end-us", "1700000000200.00071"),
                         ["in", "before_end", "at_end"])
        # past the ps, a limit is rounded half-even as the reader rounds ts
        self.assertEqual(kept("--start-us", "1700000000123.45670000049", "--end-us", "1700000000150"),
                         ["at_start"])
        # limits on a whole ns, and below 0
        self.assertEqual(kept("--start-us", "1700000000123.456", "--end-us", "1700000000123.4567"),
                         ["before_start", "ns_start"])
        self.assertEqual(kept("--start-us", "-0.0051", "--end-us", "-0.00509"), ["neg"])
        self.assertEqual(kept("--start-us", "-0.00509"), [e[0] for e in ev[:-1]])
        for v in ("1e400", "-1e400", "inf", "nan"):
            _, err = self.run_cli("trim", "--trace-file", src, "--output", out, "--start-us", v, rc=2)
            self.assertIn("profsum trim: --start-us must be a finite number, not '%s'" % v, err)

    def test_report_html(self):
        src = self.td.write("f1.json.gz", json.dumps(F1_BEFORE), gz=True)
        out = os.path.join(self.td.path, "r.html")
        o, _ = self.run_cli("report", "--summary", src, "--format", "html", "--output", out)
        self.assertEqual(o.strip(), out)
        html = open(out).read()
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        self.assertEqual(html.count("<svg"), 5)   # breakdown, steps, wall clock, top ops, regions
        _, err = self.run_cli("report", "--summary", src, "--format", "pdf", rc=2)
        self.assertIn("--format must be md or html", err)
