"""CLI fidelity to the reference tool (summary-v1-tools-spec.md §1-§6):
paths as argparse type=Path gives them (str(pathlib.Path(arg))), track
--top-k, report/bundle leniency for v1 files written elsewhere, bundle
errors, Python float() thresholds and negative --top-k slicing (CLI and
SQL).  Expected values are computed here the way the reference computes
them (pathlib, format(), list slicing).  PROFSUM_CLI / PROFSUM_SO select
the binaries."""
import json
import os
import pathlib
import re
import unittest

import fixtures
from util import connect, TempDir, ROOT
from test_cli import CliBase

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))

F1_BEFORE = fixtures.f1([100, 110, 120, 130, 140, 150], 60)
F1_AFTER = fixtures.f1([90, 100, 110, 120, 130, 140], 40)
F10_AFTER = fixtures.f1([130, 140, 150, 160, 170, 180], 60, psum=False, threading=False)


def ops_trace(durs):
    """Device ops fusion.0, fusion.1, ... with these durations."""
    return fixtures.ops_only([{"name": "fusion.%d" % i, "ts": i * 1000, "dur": d}
                              for i, d in enumerate(durs)])


# 4 regressed, 2 improved ops (distinct deltas)
OPS_BEFORE = ops_trace([10, 20, 30, 40, 50, 60])
OPS_AFTER = ops_trace([15, 30, 33, 35, 20, 61])


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def py_path(s):
    """What the reference prints for an argparse type=Path argument."""
    return str(pathlib.Path(s))


class Base(CliBase):
    """test_cli.CliBase (run_cli, a temporary folder) without progress lines."""

    def setUp(self):
        super().setUp()
        self.env["PROFSUM_NO_PROGRESS"] = "1"

    def write(self, name, obj):
        path = os.path.join(self.td.path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return name

    def summary_file(self, name, trace, **knobs):
        """A v1 summary written by profsum summarize (relative name)."""
        t = self.write(name + ".trace.json", trace)
        out, _ = self.run_cli("summarize", "--trace-file", t, "--output", name)
        self.assertEqual(out, name + "\n")
        return name

    def read_json(self, name):
        with open(os.path.join(self.td.path, name)) as f:
            return json.load(f)


class PathsAsPython(Base):
    """argparse type=Path arguments are str(Path(arg)) in the CLI."""

    def test_summarize_source_path(self):
        self.write("before.json", F1_BEFORE)
        for arg in ["./before.json", ".//before.json", "before.json"]:
            out, _ = self.run_cli("summarize", "--trace-file", arg)
            self.assertEqual(json.loads(out)["source_path"], py_path(arg), arg)
        sub = self.write("sub/t.json", F1_BEFORE)
        out, _ = self.run_cli("summarize", "--trace-file", "./sub//./t.json")
        self.assertEqual(json.loads(out)["source_path"], py_path("./sub//./t.json"))
        self.assertEqual(py_path("./sub//./t.json"), sub)

    def test_sql_import_keeps_the_path(self):
        # summary-v1-spec §3.1: profsum_import from SQL keeps source_path as passed
        with TempDir() as td:
            p = os.path.join(td.path, "t.json")
            with open(p, "w") as f:
                json.dump(F1_BEFORE, f)
            weird = td.path + "/./t.json"
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (weird,))
            got = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
            self.assertEqual(got["source_path"], weird)
            db.close()

    def test_history_path(self):
        self.write("h10.jsonl", "")
        for arg in ["./h10.jsonl", "h10.jsonl", "./missing//h.jsonl"]:
            out, _ = self.run_cli("history", "--history", arg)
            self.assertEqual(json.loads(out)["history_path"], py_path(arg), arg)

    def test_output_echo(self):
        self.write("t.json", F1_BEFORE)
        out, _ = self.run_cli("report", "--summary", "t.json", "--output", "./out//r.md")
        self.assertEqual(out, py_path("./out//r.md") + "\n")
        self.assertTrue(os.path.exists(os.path.join(self.td.path, "out", "r.md")))
        out, _ = self.run_cli("summarize", "--trace-file", "t.json", "--output", "./o/./s.json/")
        self.assertEqual(out, py_path("./o/./s.json/") + "\n")
        self.assertEqual(self.read_json("o/s.json")["source_path"], "t.json")

    def test_same_source_path_rule(self):
        # provenance rule 2 fires for ./a.json vs a.json (the same file)
        self.write("a.json", F1_BEFORE)
        out, _ = self.run_cli("compare", "--before", "./a.json", "--after", "a.json")
        cmp = json.loads(out)
        self.assertEqual(cmp["before_source"], py_path("./a.json"))
        self.assertEqual(cmp["after_source"], "a.json")
        self.assertIn("Before and after summaries have the same source_path.",
                      cmp["provenance_checks"]["messages"])


class TrackTopK(Base):
    """track --top-k cuts the record's regressed_ops / improved_ops as
    assess_profile_regression(…, top_k) does."""

    def test_top_k(self):
        self.write("b.json", OPS_BEFORE)
        self.write("a.json", OPS_AFTER)
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", "--top-k", "100")
        full = json.loads(out)
        self.assertEqual(len(full["regressed_ops"]), 4)
        self.assertEqual(len(full["improved_ops"]), 2)
        for k in [0, 1, 3, 10]:
            out, err = self.run_cli("track", "--before", "b.json", "--after", "a.json", "--top-k", str(k))
            # these traces have no step markers: only track's notes saying so
            self.assertEqual([l for l in err.splitlines() if not l.startswith("profsum track: note: ")], [])
            self.assertEqual(err.count("has no steps (no step markers found)"), 2)
            cmp = json.loads(out)["assessment"]["comparison"]
            self.assertEqual(cmp["regressed_ops"], full["regressed_ops"][:k], k)
            self.assertEqual(cmp["improved_ops"], full["improved_ops"][:k], k)

    def test_history_record_and_sql(self):
        self.write("b.json", OPS_BEFORE)
        self.write("a.json", OPS_AFTER)
        out, _ = self.run_cli("track", "--before", "b.json", "--after", "a.json", "--top-k", "2",
                              "--history", "./h//x.jsonl")
        with open(os.path.join(self.td.path, "h", "x.jsonl")) as f:
            line = json.loads(f.read())
        self.assertEqual(len(line["assessment"]["comparison"]["regressed_ops"]), 2)
        self.assertEqual(line, json.loads(out))
        db = connect()
        db.execute("SELECT profsum_import(?, 'b')", (os.path.join(self.td.path, "b.json"),))
        db.execute("SELECT profsum_import(?, 'a')", (os.path.join(self.td.path, "a.json"),))
        rec = json.loads(db.execute("SELECT profsum_track('b', 'a', NULL, '{\"top_k\": 1}')").fetchone()[0])
        self.assertEqual(len(rec["assessment"]["comparison"]["regressed_ops"]), 1)
        rec = json.loads(db.execute("SELECT profsum_track('b', 'a', NULL, '{\"top_k\": -1}')").fetchone()[0])
        self.assertEqual(len(rec["assessment"]["comparison"]["regressed_ops"]), 3)
        with self.assertRaisesRegex(Exception, "top_k must be an integer"):
            db.execute("SELECT profsum_track('b', 'a', NULL, '{\"top_k\": 1.5}')").fetchone()
        rec = json.loads(db.execute("SELECT profsum_track('b', 'a', NULL)").fetchone()[0])
        self.assertEqual(len(rec["assessment"]["comparison"]["regressed_ops"]), 4)
        db.close()


def md_rows(report, heading):
    """The table rows of section `heading` of a markdown report."""
    lines = report.split("\n")
    i = lines.index(heading) + 3                # the heading, the header, the rule
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        rows.append(lines[i])
        i += 1
    return rows


class NegativeTopK(Base):
    """--top-k (argparse int) and top_k cut lists as Python's list[:top_k]:
    0 keeps none, a negative value drops the last rows (all of them when it
    reaches past the list's start), the others keep their order; the same
    in compare, track, bundle, report and query, and in their SQL
    functions.  history --tail ≤ 0 lists no record, as the reference says."""

    # regressed: fusion.1 +10, fusion.0 +5, fusion.2 +3, fusion.5 +1;
    # improved: fusion.4 -30, fusion.3 -5
    REGRESSED = ["fusion.1", "fusion.0", "fusion.2", "fusion.5"]
    IMPROVED = ["fusion.4", "fusion.3"]

    def full(self):
        self.write("b.json", OPS_BEFORE)
        self.write("a.json", OPS_AFTER)
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", "--top-k", "100")
        full = json.loads(out)
        self.assertEqual([r["name"] for r in full["regressed_ops"]], self.REGRESSED)
        self.assertEqual([r["name"] for r in full["improved_ops"]], self.IMPROVED)
        return full

    def test_compare(self):
        full = self.full()
        for k in [-1, -2, -3, -4, -5, -100, 0, 3]:
            for args in (["--top-k", str(k)], ["--top-k=%d" % k]):
                out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", *args)
                cmp = json.loads(out)
                self.assertEqual(cmp["regressed_ops"], full["regressed_ops"][:k], args)
                self.assertEqual(cmp["improved_ops"], full["improved_ops"][:k], args)
                # nothing else depends on top_k
                rest = dict(cmp, regressed_ops=None, improved_ops=None)
                self.assertEqual(rest, dict(full, regressed_ops=None, improved_ops=None), args)
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", "--top-k", "-1")
        cmp = json.loads(out)
        self.assertEqual([r["name"] for r in cmp["regressed_ops"]], self.REGRESSED[:3])
        self.assertEqual([r["name"] for r in cmp["improved_ops"]], self.IMPROVED[:1])
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", "--top-k", "-100")
        cmp = json.loads(out)
        self.assertEqual((cmp["regressed_ops"], cmp["improved_ops"]), ([], []))
        # profsum's comparison for people cuts its op table the same way
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", "--format", "md",
                              "--top-k", "100")
        moved = md_rows(out, "## Ops that moved most")
        self.assertEqual(len(moved), 6)
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json", "--format", "md",
                              "--top-k", "-2")
        self.assertEqual(md_rows(out, "## Ops that moved most"), moved[:-2])

    def test_track_and_bundle(self):
        full = self.full()
        out, _ = self.run_cli("track", "--before", "b.json", "--after", "a.json", "--top-k", "-1",
                              "--history", "h.jsonl")
        cmp = json.loads(out)["assessment"]["comparison"]
        self.assertEqual(cmp["regressed_ops"], full["regressed_ops"][:-1])
        self.assertEqual(cmp["improved_ops"], full["improved_ops"][:-1])
        out, _ = self.run_cli("bundle", "--before-summary", "b.json", "--after-summary", "a.json",
                              "--top-k", "-2", "--output-dir", "cmp", "--history", "h.jsonl")
        self.assertEqual(json.loads(out)["output_dir"], "cmp")
        for name in ["compare.json", "track.json"]:
            doc = self.read_json("cmp/" + name)
            cmp = doc["assessment"]["comparison"] if name == "track.json" else doc
            self.assertEqual(cmp["regressed_ops"], full["regressed_ops"][:-2], name)
            self.assertEqual(cmp["improved_ops"], [], name)
        hot = [o["name"] for o in self.read_json("cmp/before.summary.json")["hot_ops"]]
        self.assertEqual(len(hot), 6)
        with open(os.path.join(self.td.path, "cmp", "before.report.md")) as f:
            rows = md_rows(f.read(), "## Top Ops")
        self.assertEqual([r.split("`")[1] for r in rows], hot[:-2])
        # history: two records; --tail -1 lists none (tail ≤ 0), 1 the last
        out, _ = self.run_cli("history", "--history", "h.jsonl", "--tail", "-1")
        doc = json.loads(out)
        self.assertEqual((doc["num_records"], doc["recent_records"]), (2, []))
        out, _ = self.run_cli("history", "--history", "h.jsonl", "--tail", "1")
        self.assertEqual(json.loads(out)["recent_records"], [doc["latest_record"]])

    def test_report_and_query(self):
        self.write("b.json", OPS_BEFORE)
        out, _ = self.run_cli("summarize", "--trace-file", "b.json")
        hot = [o["name"] for o in json.loads(out)["hot_ops"]]
        self.assertEqual(len(hot), 6)
        for k in [-1, -2, -5, -6, -100, 0, 2]:
            out, _ = self.run_cli("report", "--summary", "b.json", "--top-k", str(k))
            self.assertEqual([r.split("`")[1] for r in md_rows(out, "## Top Ops")], hot[:k], k)
            out, _ = self.run_cli("query", "--summary", "b.json", "--question", "top ops", "--top-k", str(k))
            self.assertEqual([r["name"] for r in json.loads(out)["results"]], hot[:k], k)
        # the HTML report keeps its own range
        _, err = self.run_cli("report", "--summary", "b.json", "--format", "html", "--top-k", "-1", rc=2)
        self.assertIn("--top-k must be from 1 to 64 with --format html", err)

    def test_sql(self):
        full = self.full()
        db = connect()
        db.execute("SELECT profsum_import(?, 'b')", (os.path.join(self.td.path, "b.json"),))
        db.execute("SELECT profsum_import(?, 'a')", (os.path.join(self.td.path, "a.json"),))
        one = lambda sql, *a: db.execute(sql, a).fetchone()[0]
        for k in [-1, -3, -4, -2147483648, -9223372036854775808, 0, 2]:
            cmp = json.loads(one("SELECT profsum_compare_json('b', 'a', ?)", k))
            self.assertEqual(cmp["regressed_ops"], full["regressed_ops"][:k], k)
            self.assertEqual(cmp["improved_ops"], full["improved_ops"][:k], k)
            rec = json.loads(one("SELECT profsum_track('b', 'a', NULL, ?)", json.dumps({"top_k": k})))
            self.assertEqual(rec["assessment"]["comparison"]["regressed_ops"], full["regressed_ops"][:k], k)
            hot = [o["name"] for o in json.loads(one("SELECT profsum_summary_json('b')"))["hot_ops"]]
            md = one("SELECT profsum_report_md('b', ?)", k)
            self.assertEqual([r.split("`")[1] for r in md_rows(md, "## Top Ops")], hot[:k], k)
            md = one("SELECT profsum_report_md('b', ?, '{\"kpis\": true}')", k)
            self.assertEqual([r.split("`")[1] for r in md_rows(md, "## Top Ops")], hot[:k], k)
            ans = json.loads(one("SELECT profsum_query_json('b', 'top ops', ?)", k))
            self.assertEqual([r["name"] for r in ans["results"]], hot[:k], k)
        moved = md_rows(one("SELECT profsum_compare_md('b', 'a', 100)"), "## Ops that moved most")
        self.assertEqual(md_rows(one("SELECT profsum_compare_md('b', 'a', -1)"), "## Ops that moved most"),
                         moved[:-1])
        with TempDir() as td:
            man = json.loads(one("SELECT profsum_bundle('b', 'a', ?, '{\"top_k\": -3}')", td.path))
            with open(man["comparison_path"]) as f:
                cmp = json.load(f)
            self.assertEqual(cmp["regressed_ops"], full["regressed_ops"][:-3])
            self.assertEqual(cmp["improved_ops"], [])
        # still an integer: a real, text that is no number, a JSON float
        for sql, arg in [("SELECT profsum_compare_json('b', 'a', ?)", 1.5),
                         ("SELECT profsum_compare_json('b', 'a', ?)", "x"),
                         ("SELECT profsum_report_md('b', ?)", -0.5),
                         ("SELECT profsum_track('b', 'a', NULL, ?)", '{"top_k": -1.0}')]:
            with self.assertRaisesRegex(Exception, "top_k must be an integer$"):
                one(sql, arg)
        db.close()


def canonical(name):
    """The reader's recomputed canonical name (summary-v1-spec §1.4)."""
    return re.sub(r"\.\d+$", "", name.strip().lstrip("%"))


def md_code(value):
    return "`%s`" % value.replace("`", "\\`").replace("|", "\\|")


class ReportLeniency(Base):
    """v1 files written elsewhere, read as profile_summary_from_dict()
    reads them, rendered as build_markdown_report() renders them."""

    def edited_summary(self):
        t = self.write("f7.json", fixtures.f7())
        out, _ = self.run_cli("summarize", "--trace-file", t, "--warmup-steps", "0")
        s = json.loads(out)
        self.assertGreaterEqual(len(s["hot_ops"]), 2)
        self.assertTrue(s["semantic_families"] and s["gap_before_ops"])
        return s

    def report_lines(self, s, name="edge.summary.json"):
        self.write(name, s)
        out, _ = self.run_cli("report", "--summary", name)
        return out.split("\n")

    def test_canonical_example_op_marker(self):
        s = self.edited_summary()
        s["hot_ops"][0]["canonical_name"] = ""
        s["hot_ops"][1]["canonical_name"] = ""
        s["semantic_families"][0]["example_op"] = None
        g = s["gap_before_ops"][0]
        g["payload_op"] = "payload-x"
        del g["marker_op"]
        lines = self.report_lines(s)
        for op in s["hot_ops"][:2]:
            row = [l for l in lines if l.startswith("| %s | " % md_code(op["name"]))]
            self.assertEqual(len(row), 1, op["name"])
            self.assertTrue(row[0].startswith("| %s | %s | " % (md_code(op["name"]), md_code(canonical(op["name"])))), row[0])
        fam = s["semantic_families"][0]
        row = [l for l in lines if l.startswith("| `%s` | %d | " % (fam["family"], fam["count"]))]
        self.assertEqual(len(row), 1)
        self.assertTrue(row[0].endswith(" | `%s` |" % (fam["example_op"] or "n/a")), row[0])
        # parsed marker_op = marker_op or name; the report: marker or payload
        payload = g["payload_op"] or g["name"]
        marker = g.get("marker_op") or g["name"] or payload
        want = "| %s | %s | %d | " % (md_code(payload), md_code(marker), g["count"])
        self.assertEqual(len([l for l in lines if l.startswith(want)]), 1, want)

    def test_run_ids(self):
        s = self.edited_summary()
        for ids in [[""], [], ["", ""], ["a", "", "b"], ["r%d" % i for i in range(10)]]:
            s["trace_provenance"]["run_ids"] = ids
            lines = self.report_lines(s)
            want = "- Observed run_ids: `%s`" % (", ".join(ids[:8]) or "unknown")
            self.assertIn(want, lines, ids)

    def test_generated_at_as_is(self):
        s = self.edited_summary()
        s["generated_at_utc"] = ""
        lines = self.report_lines(s)
        self.assertIn("- Generated At (UTC): `%s`" % s["generated_at_utc"], lines)


class ThresholdsAndBundle(Base):
    """thresholds parsed as Python's float() (argparse type=float), the
    bundle's strict-provenance error as the reference raises it."""

    MEDIAN = "--max-step-median-regression-pct"

    def pair(self):
        self.write("b.json", F1_BEFORE)
        self.write("a.json", F10_AFTER)
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "a.json")
        st = json.loads(out)["step_time"]
        b, a = st["steady_state_median_before"], st["steady_state_median_after"]
        return (a - b) / b * 100

    def failures(self, value):
        out, _ = self.run_cli("track", "--before", "b.json", "--after", "a.json", self.MEDIAN, value)
        return json.loads(out)["assessment"]["failures"]

    def test_python_float_values(self):
        median_pct = self.pair()
        for text in ["inf", "-inf", "Infinity", "-INFINITY", "nan", "1_0.5", " 2.5 ", ".5", "1.e1", "1e999",
                     "-0", "-0.0", "-0e5", "0", "5", "-0.001"]:   # -0.0 prints as -0.00
            thr = float(text)                       # what argparse type=float gives
            want = [m for m in ["Steady-state median step time regressed by {:.2f}% (threshold {:.2f}%)."
                                .format(median_pct, thr)] if median_pct > thr]
            got = [m for m in self.failures(text) if m.startswith("Steady-state median")]
            self.assertEqual(got, want, text)

    def test_rejected_like_python(self):
        self.pair()
        for text in ["0x10", "1e", "1_", "_1", "nan(1)", "1.5f", "", "."]:
            with self.assertRaises(ValueError):
                float(text)
            _, err = self.run_cli("track", "--before", "b.json", "--after", "a.json", self.MEDIAN, text, rc=2)
            self.assertIn("needs a finite number", err)

    def test_bundle_inf_threshold(self):
        self.pair()
        out, _ = self.run_cli("bundle", "--before-summary", "b.json", "--after-summary", "a.json",
                              "--output-dir", "./cmp/", self.MEDIAN, "inf")
        m = json.loads(out)
        self.assertEqual(m["output_dir"], py_path("./cmp/"))
        rec = self.read_json("cmp/track.json")
        self.assertFalse([f for f in rec["assessment"]["failures"] if f.startswith("Steady-state median")])

    def test_bundle_strict_provenance_message(self):
        self.write("b.json", F1_BEFORE)
        _, err = self.run_cli("bundle", "--before-summary", "b.json", "--after-summary", "./b.json",
                              "--strict-provenance", "--output-dir", "cmp", rc=1)
        out, _ = self.run_cli("compare", "--before", "b.json", "--after", "./b.json")
        msgs = json.loads(out)["provenance_checks"]["messages"]
        self.assertEqual(err, "profsum bundle: Provenance checks failed. %s\n" % " ".join(msgs))
        self.assertFalse(os.path.exists(os.path.join(self.td.path, "cmp")))


if __name__ == "__main__":
    unittest.main()
