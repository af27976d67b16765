"""profsum_report_md(trace, top_k, '{"profsum": true}') and `report
--profsum`: the reference's report unchanged, then profsum's sections (data
quality first, wall-clock time, advice, the reference's candidates), none
of which a warning below contradicts."""
import json
import os
import re
import sqlite3
import subprocess
import sys
import unittest

import fixtures
from util import connect, DbTestCase, TempDir, ROOT, CORPUS
from test_cli import CliBase, F1_BEFORE
from test_step_wall import KNOWN

HEADS = ["## profsum: data quality", "## profsum: wall-clock time", "## profsum: advice",
         "## profsum: the reference tool's candidates"]


def check_report(tc, db, trace, where=""):
    base = db.execute("SELECT profsum_report_md(?, 10)", (trace,)).fetchone()[0]
    md = db.execute("SELECT profsum_report_md(?, 10, '{\"profsum\": true}')", (trace,)).fetchone()[0]
    tc.assertTrue(md.startswith(base), where)
    extra = md[len(base):]
    pos = [extra.find(h) for h in HEADS]
    tc.assertTrue(all(p >= 0 for p in pos), (where, pos))
    tc.assertEqual(pos, sorted(pos), where)
    ours = extra[pos[2]:pos[3]]
    tc.assertNotIn("balanced", ours.lower(), where)
    for m in re.findall(r"(\d+(?:\.\d+)?)% of step wall time", ours):
        tc.assertLessEqual(float(m), 100.0, where)
    # the KPI table and the sections together, KPIs first
    both = db.execute("SELECT profsum_report_md(?, 10, '{\"kpis\": true, \"profsum\": true}')",
                      (trace,)).fetchone()[0]
    kpis = db.execute("SELECT profsum_report_md(?, 10, '{\"kpis\": true}')", (trace,)).fetchone()[0]
    tc.assertTrue(both.startswith(kpis), where)
    tc.assertEqual(both[len(kpis):], extra, where)
    return extra


class Sections(DbTestCase):
    def test_known_wall_split(self):
        p = self.td.write("k.json", KNOWN)
        self.db.execute("SELECT profsum_import(?, 'k', '{\"warmup_steps\": 0}')", (p,))
        extra = check_report(self, self.db, "k")
        self.assertIn("- Steps split: `2` steady steps on `1` device(s)", extra)
        self.assertIn("| Compute | 105.000 | 52.50% |", extra)
        self.assertIn("| Collective | 30.000 | 15.00% |", extra)
        self.assertIn("| Transfer | 20.000 | 10.00% |", extra)
        self.assertIn("| Idle | 45.000 | 22.50% |", extra)
        self.assertIn("| Wall | 200.000 | 100.00% |", extra)
        self.assertIn("Median step wall time (per device): `100.000` us", extra)
        self.assertIn("### 1. Devices wait", extra)
        self.assertIn("it is not wall time", extra)

    def test_balanced_rule_gets_a_note(self):
        p = self.td.write("f1.json", F1_BEFORE)
        self.db.execute("SELECT profsum_import(?, 'f1', '{\"warmup_steps\": 2}')", (p,))
        extra = check_report(self, self.db, "f1")
        cands = [r[0] for r in self.db.execute("SELECT candidate_id FROM profsum_candidates")]
        for c in cands:
            self.assertIn("- `%s`:" % c, extra)

    def test_figures_agree_with_their_neighbours(self):
        """F1's steady steps 120-150: the step wall median is the median
        (135, as the step time beside it), communication under half gets a
        note on the reference's "dominant", and global mode names its total
        for what it is."""
        p = self.td.write("f1.json", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)))
        self.db.execute("SELECT profsum_import(?, 'f1', '{\"warmup_steps\": 2}')", (p,))
        md = self.db.execute("SELECT profsum_report_md('f1', 10, '{\"profsum\": true}')").fetchone()[0]
        self.assertIn("- Median step wall time (per device): `135.000` us", md)
        self.assertIn("Communication appears dominant (communication is 19.4% of the breakdown total; "
                      "profsum calls a category dominant from 50%)", md)
        html = self.db.execute("SELECT profsum_report_html('f1')").fetchone()[0]
        self.assertIn("median step wall time 135.000 µs per device", html)
        self.assertIn("(profsum: communication is 19.4% of the breakdown total", html)
        p = self.td.write("f2.json", json.dumps(fixtures.f2()))
        self.db.execute("SELECT profsum_import(?, 'g', '{\"breakdown_mode\": \"exclusive_global\"}')", (p,))
        md = self.db.execute("SELECT profsum_report_md('g', 10, '{\"profsum\": true}')").fetchone()[0]
        self.assertIn("is the window of one device timeline", md)
        self.assertNotIn("it is not wall time", md)
        html = self.db.execute("SELECT profsum_report_html('g')").fetchone()[0]
        self.assertIn("The total is the window of one device timeline", html)
        self.assertNotIn("it is not wall time", html)

    def test_kpi_table_cells_escaped(self):
        ev = list(fixtures.TPU_META) + [
            {"ph": "X", "pid": 1, "tid": 2, "name": "evil|op\n# Heading", "ts": 0, "dur": 5000},
            {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.2", "ts": 5000, "dur": 10}]
        p = self.td.write("e.json", fixtures.doc(ev))
        self.db.execute("SELECT profsum_import(?, 'e')", (p,))
        md = self.db.execute("SELECT profsum_report_md('e', 10, '{\"kpis\": true}')").fetchone()[0]
        kpis = md[md.index("\n## KPIs\n"):]      # the reference's sections above write names as it does
        self.assertNotIn("\n# Heading", kpis)
        row = [l for l in kpis.splitlines() if l.startswith("| pattern | one_op_dominating |")][0]
        self.assertIn("top op evil\\|op # Heading takes", row)
        self.assertEqual(row.count(" | "), 6)

    def test_no_steps(self):
        p = self.td.write("o.json", fixtures.ops_only([{"name": "fusion.1", "ts": 0, "dur": 10}]))
        self.db.execute("SELECT profsum_import(?, 'o')", (p,))
        extra = check_report(self, self.db, "o")
        self.assertIn("No steps measured on a device", extra)

    def test_trace_of_an_older_profsum_has_steps(self):
        # a trace an older profsum imported (profsum_build NULL, kept by
        # profsum_upgrade) has steps but no step wall time stored: the
        # report and host_wait say to re-import it, not that it has no steps
        p = self.td.write("f1.json", F1_BEFORE)
        old = self.db.execute("SELECT profsum_import(?, 'old', '{\"warmup_steps\": 2}')", (p,)).fetchone()[0]
        new = self.db.execute("SELECT profsum_import(?, 'new', '{\"warmup_steps\": 2}')", (p,)).fetchone()[0]
        self.db.execute("UPDATE profsum_trace SET profsum_build = NULL WHERE trace_id = ?", (old,))
        self.db.execute("DELETE FROM profsum_agg_step_wall WHERE trace_id = ?", (old,))
        self.assertGreater(self.db.execute("SELECT count FROM profsum_step_stats WHERE trace_id = ? AND scope = 'all'",
                                           (old,)).fetchone()[0], 0)
        hw = "SELECT band, explanation FROM profsum_kpis WHERE trace_id = ? AND kpi = 'host_wait'"
        self.assertEqual(self.db.execute(hw, (old,)).fetchall(), [
            ("unavailable", "no step wall time stored for this trace (imported by an older profsum): re-import it")])
        self.assertNotEqual(self.db.execute(hw, (new,)).fetchone()[0], "unavailable")
        extra = check_report(self, self.db, "old")
        self.assertIn("- No step wall time stored for this trace (imported by an older profsum): re-import it "
                      "to split the step wall time.\n", extra)
        self.assertNotIn("No steps measured", extra)
        html = self.db.execute("SELECT profsum_report_html('old')").fetchone()[0]
        self.assertIn("No step wall time stored for this trace (imported by an older profsum)", html)
        self.assertNotIn("No steps measured", html)
        # a trace of this build without step wall time still has no steps
        self.db.execute("DELETE FROM profsum_agg_step_wall WHERE trace_id = ?", (new,))
        self.assertEqual(self.db.execute(hw, (new,)).fetchall(), [
            ("unavailable", "no steps measured on a device: step wall time is not split")])
        self.assertIn("No steps measured on a device", check_report(self, self.db, "new"))
        self.assertIn("No steps measured on a device", self.db.execute("SELECT profsum_report_html('new')").fetchone()[0])

    def test_empty_trace_has_no_span(self):
        # no event has a time: the span is none, not 0.000 µs
        p = self.td.write("e.json", '{"traceEvents": []}')
        self.db.execute("SELECT profsum_import(?, 'e')", (p,))
        extra = check_report(self, self.db, "e")
        self.assertIn("- Profile span: none (no event of the trace has a time)\n", extra)
        self.assertNotIn("Profile span (first event", extra)

    def test_default_report_unchanged(self):
        p = self.td.write("f1.json", F1_BEFORE)
        self.db.execute("SELECT profsum_import(?, 'f1')", (p,))
        two = self.db.execute("SELECT profsum_report_md('f1', 10)").fetchone()[0]
        three = self.db.execute("SELECT profsum_report_md('f1', 10, NULL)").fetchone()[0]
        self.assertEqual(two, three)
        self.assertNotIn("profsum:", two)

    def test_older_database_without_the_views(self):
        # a database made by an older profsum, read without an import that
        # would upgrade it: the sections say what they lack, no error
        p = self.td.write("f1.json", F1_BEFORE)
        self.db.execute("SELECT profsum_import(?, 'f1', '{\"warmup_steps\": 2}')", (p,))
        self.db.execute("SELECT profsum_import(?, 'f2', '{\"warmup_steps\": 2}')", (p,))
        # as before step wall time: no advice or step wall view, an empty
        # profsum_kpis_wall
        for v in ("profsum_advice", "profsum_kpis_wall", "profsum_step_wall"):
            self.db.execute("DROP VIEW %s" % v)
        self.db.execute("CREATE VIEW profsum_kpis_wall(trace_id, label, kind, kpi, device, value, unit, band, "
                        "explanation) AS SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL WHERE 0")
        extra = self.db.execute("SELECT profsum_report_md('f1', 10, '{\"profsum\": true}')").fetchone()[0]
        self.assertIn("## profsum: advice\n- (This section reads a view this database does not have", extra)
        self.assertIn("## profsum: wall-clock time\n- (This section", extra)
        self.assertIn("## profsum: the reference tool's candidates\nThe", extra)
        md = self.db.execute("SELECT profsum_compare_md('f1', 'f2')").fetchone()[0]
        self.assertIn("Wall-clock shift", md)
        html = self.db.execute("SELECT profsum_report_html('f1')").fetchone()[0]
        self.assertIn("Provenance", html)

    def test_unknown_option(self):
        p = self.td.write("f1.json", F1_BEFORE)
        self.db.execute("SELECT profsum_import(?, 'f1')", (p,))
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_report_md('f1', 10, '{\"profsun\": true}')").fetchone()
        self.assertIn("unknown key 'profsun' (known: schema, kpis, profsum)", str(cm.exception))


class Generated(unittest.TestCase):
    def test_tpu_and_gpu(self):
        with TempDir() as td:
            db = connect()
            for shape in ("tpu", "gpu"):
                out = os.path.join(td.path, "%s.json.gz" % shape)
                subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "1M",
                                "--shape", shape, "--out", out], check=True, stdout=subprocess.DEVNULL)
                db.execute("SELECT profsum_import(?, ?)", (out, shape))
                extra = check_report(self, db, shape, shape)
                self.assertIn("| Wall |", extra)


@unittest.skipUnless(os.path.exists(os.path.join(CORPUS, "expected_counts.json")), "no corpus")
class Corpus(unittest.TestCase):
    def test_corpus(self):
        from test_advice import corpus_paths
        db = connect()
        n = 0
        for rel in corpus_paths():
            try:
                tid = db.execute("SELECT profsum_import(?, ?)", (os.path.join(CORPUS, rel), rel)).fetchone()[0]
            except sqlite3.Error:
                continue
            check_report(self, db, tid, rel)
            n += 1
        self.assertGreater(n, 10)

    def test_share_above_100_gets_a_note(self):
        # the TF demo capture: the reference's pre-op-gap rationale says 312.1 %
        p = os.path.join(CORPUS, "tf-profiler-demo-xplane", "34.83.195.179_6003.xplane.pb")
        if not os.path.exists(p):
            self.skipTest("capture absent")
        db = connect()
        db.execute("SELECT profsum_import(?, 'tf')", (p,))
        extra = check_report(self, db, "tf")
        self.assertIn("its percentage is above 100%", extra)
        html = db.execute("SELECT profsum_report_html('tf')").fetchone()[0]
        self.assertIn("its percentage is above 100%", html)


class Cli(CliBase):
    def test_report_profsum(self):
        p = self.trace("f1.json", F1_BEFORE)
        plain, _ = self.run_cli("report", "--summary", p)
        out, _ = self.run_cli("report", "--summary", p, "--profsum")
        gen = re.compile(r"Generated At \(UTC\): `[^`]*`")
        self.assertTrue(gen.sub("", out).startswith(gen.sub("", plain).rstrip("\n")))
        for h in HEADS:
            self.assertIn(h, out)
        _, err = self.run_cli("report", "--summary", p, "--profsum", "--format", "html", rc=2)
        self.assertIn("--profsum", err)


if __name__ == "__main__":
    unittest.main()
