"""profsum_compare_md and `compare --format md|html`: the step delta with
its noise, breakdown and wall-clock shifts, ops matched exact / canonical /
before only / after only, the source_format note; the stderr warnings of
profsum_compare_json and profsum_track on a change of source; `track
--fail-on` reasons and the warning on a trace tracked against itself."""
import json
import os
import subprocess
import sys
import unittest

import fixtures
from util import connect, DbTestCase, SO
from test_cli import CliBase


def trace(steps, ops):
    ev = list(fixtures.TPU_META)
    t = 0
    for i, d in enumerate(steps):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(i), "ts": t, "dur": d})
        t += d
    ev += [{"ph": "X", "pid": 1, "tid": 2, "name": n, "ts": ts, "dur": d} for n, ts, d in ops]
    return fixtures.doc(ev)


BEFORE = trace([1000, 1000, 1010, 1000, 1020],
               [("fusion.1", 0, 300), ("convolution.308", 300, 400), ("all-reduce.5", 700, 100)])
AFTER = trace([900, 905, 900, 910, 900],
              [("fusion.1", 0, 250), ("convolution.311", 250, 450), ("copy.9", 700, 50)])
AFTER_NOISY = trace([1000, 1050, 1000, 990, 1000],
                    [("fusion.1", 0, 300), ("convolution.308", 300, 400), ("all-reduce.5", 700, 100)])


class CompareMd(DbTestCase):
    def load(self, name, doc, opts=None):
        p = self.td.write(name + ".json", doc)
        return self.db.execute("SELECT profsum_import(?, ?, ?)",
                               (p, name, json.dumps(opts or {"warmup_steps": 1}))).fetchone()[0]

    def md(self, *args):
        return self.db.execute("SELECT profsum_compare_md(%s)" % ", ".join("?" * len(args)), args).fetchone()[0]

    def test_match_column(self):
        self.load("b", BEFORE)
        self.load("a", AFTER)
        md = self.md("b", "a")
        rows = {l.split(" | ")[0].lstrip("| "): l for l in md.splitlines() if l.startswith("| `") or l.startswith("| —")}
        self.assertIn("| `fusion.1` | `fusion.1` | exact | 300.000 | 250.000 | -50.000 |", md)
        self.assertIn("| `convolution.308` | `convolution.311` | canonical | 400.000 | 450.000 | +50.000 |", md)
        self.assertIn("| `all-reduce.5` | — | before only | 100.000 | 0.000 | -100.000 |", md)
        self.assertIn("| — | `copy.9` | after only | 0.000 | 50.000 | +50.000 |", md)
        self.assertTrue(rows)

    def test_op_beyond_the_other_sides_hot_ops(self):
        # two hot ops a side: A leaves after's top two, C enters it; both
        # ran on both sides, so their rows are `exact` with both times
        b = trace([1000] * 5, [("A.1", 0, 500), ("B.1", 500, 400), ("C.1", 900, 100)])
        a = trace([1000] * 5, [("B.1", 0, 600), ("C.1", 600, 350), ("A.1", 950, 50)])
        opts = {"warmup_steps": 1, "hot_op_limit": 2}
        self.load("b", b, opts)
        self.load("a", a, opts)
        md = self.md("b", "a")
        self.assertIn("| `A.1` | `A.1` | exact | 500.000 | 50.000 | -450.000 |", md)
        self.assertIn("| `C.1` | `C.1` | exact | 100.000 | 350.000 | +250.000 |", md)
        self.assertIn("| `B.1` | `B.1` | exact | 400.000 | 600.000 | +200.000 |", md)
        self.assertNotIn("before only", md)
        self.assertNotIn("after only", md)

    def test_breakdown_in_one_mode_on_both_sides(self):
        # summarized in different modes: both sides' per-track shares
        self.load("b", BEFORE, {"warmup_steps": 1, "breakdown_mode": "exclusive_global"})
        self.load("a", AFTER, {"warmup_steps": 1})
        md = self.md("b", "a")
        self.assertIn("## Breakdown shift (per-track exclusive time, shares)", md)
        share = dict(self.db.execute(
            "SELECT label, share_of_total FROM profsum_breakdown WHERE mode = 'exclusive_per_track' "
            "AND category = 'compute'").fetchall())
        self.assertNotEqual(share["b"], self.db.execute(
            "SELECT share_of_total FROM profsum_breakdown WHERE label = 'b' AND mode = 'exclusive_global' "
            "AND category = 'compute'").fetchone()[0])
        line = [l for l in md.splitlines() if l.startswith("| compute |")][0]
        self.assertEqual(line.split(" | ")[1:3], ["%.2f%%" % (100 * share["b"]), "%.2f%%" % (100 * share["a"])])

    def test_wall_split_of_warmup_steps_says_so(self):
        self.load("b", BEFORE, {"warmup_steps": 10})
        self.load("a", AFTER, {"warmup_steps": 1})
        md = self.md("b", "a")
        self.assertIn("- No steady-state steps on before: the step time is not compared.", md)
        self.assertIn("- Before has no steady steps: the split of its warmup steps is shown instead.", md)
        self.load("a2", AFTER, {"warmup_steps": 10})
        self.assertIn("- Neither side has steady steps: the split of their warmup steps is shown instead.",
                      self.md("b", "a2"))
        self.load("a3", AFTER, {"warmup_steps": 1})
        self.assertNotIn("warmup steps is shown", self.md("a", "a3"))

    def test_step_delta_beyond_noise(self):
        self.load("b", BEFORE)
        self.load("a", AFTER)
        md = self.md("b", "a")
        self.assertIn("- Median: before `1005.000` us, after `902.500` us: -102.500 us (-10.20%)", md)
        self.assertIn("the step got faster beyond the noise", md)

    def test_within_noise(self):
        self.load("b", BEFORE)
        self.load("a", AFTER_NOISY)
        md = self.md("b", "a")
        # noise: max(p90 - median) over both sides; after: p90 1035, median 1000
        self.assertIn("Noise (the larger p90 − median of the two sides): `35.000` us", md)
        self.assertIn("**within noise**", md)

    def test_shift_tables(self):
        self.load("b", BEFORE)
        self.load("a", AFTER)
        md = self.md("b", "a", 5)
        self.assertIn("## Breakdown shift", md)
        self.assertIn("## Wall-clock shift", md)
        self.assertIn("| idle |", md)

    def test_top_k_and_html(self):
        self.load("b", BEFORE)
        self.load("a", AFTER)
        md = self.md("b", "a", 1)
        self.assertEqual(sum(1 for l in md.splitlines() if l.startswith("| `") or l.startswith("| —")), 1)
        html = self.md("b", "a", 10, '{"html": true}')
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        self.assertIn("<td>canonical</td>", html)
        self.assertIn("<code>convolution.311</code>", html)
        self.assertNotIn("| ", html)

    def test_long_names_are_shortened(self):
        long = "k" * 300 + ".1"
        self.load("b", trace([100], [(long, 0, 50)]))
        self.load("a", trace([100], [(long, 0, 60)]))
        md = self.md("b", "a")
        self.assertIn("`" + "k" * 80 + "…`", md)
        self.assertNotIn("k" * 81, md)

    def test_source_format_note(self):
        self.load("b", BEFORE)
        self.load("a", AFTER)
        self.db.execute("UPDATE profsum_trace SET source_format='xplane_pb' WHERE label='a'")
        md = self.md("b", "a")
        self.assertIn("Source formats: before `perfetto_trace_json`, after `xplane_pb`", md)
        self.assertIn("different sources", md)

    def test_errors(self):
        self.load("b", BEFORE)
        for sql, msg in (("SELECT profsum_compare_md('b', 'b')", "same trace"),
                         ("SELECT profsum_compare_md('b', 'zz')", "after: no trace with label 'zz'"),
                         ("SELECT profsum_compare_md('b', 'b', 1.5)", "profsum_compare_md: top_k must be an integer"),
                         ("SELECT profsum_compare_md('b', 'b', 3, '{\"htm\": 1}')", "unknown key")):
            with self.assertRaises(Exception) as cm:
                self.db.execute(sql).fetchone()
            self.assertIn(msg, str(cm.exception))


SCRIPT = r"""
import sqlite3, sys
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
for p, l in ((sys.argv[2], 'b'), (sys.argv[3], 'a')):
    db.execute("SELECT profsum_import(?, ?)", (p, l))
db.execute("UPDATE profsum_trace SET source_format = ? WHERE label = 'a'", (sys.argv[4],))
db.execute("SELECT profsum_compare_json('b', 'a')").fetchone()
db.execute("SELECT profsum_track('b', 'a', NULL)").fetchone()
"""


class SourceWarning(DbTestCase):
    def run_script(self, fmt):
        b = self.td.write("b.json", BEFORE)
        a = self.td.write("a.json", AFTER)
        # the environment as is: an ASan run's preload goes with its PROFSUM_SO
        p = subprocess.run(["/usr/bin/python3", "-c", SCRIPT, SO, b, a, fmt],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stderr

    def test_sql_functions_warn(self):
        err = self.run_script("xplane_pb")
        self.assertIn("profsum_compare_json: warning: before and after come from different sources "
                      "(source_format perfetto_trace_json and xplane_pb)", err)
        self.assertIn("profsum_track: warning: before and after come from different sources", err)

    def test_same_source_is_quiet(self):
        self.assertEqual(self.run_script("perfetto_trace_json"), "")


class Cli(CliBase):
    def test_compare_format(self):
        b = self.trace("b.json", BEFORE)
        a = self.trace("a.json", AFTER)
        out, err = self.run_cli("compare", "--before", b, "--after", a, "--format", "md")
        self.assertIn("| `convolution.308` | `convolution.311` | canonical |", out)
        out, _ = self.run_cli("compare", "--before", b, "--after", a, "--format", "html")
        self.assertIn("<table>", out)
        out, _ = self.run_cli("compare", "--before", b, "--after", a)
        json.loads(out)
        _, err = self.run_cli("compare", "--before", b, "--after", a, "--format", "xml", rc=2)
        self.assertIn("--format", err)

    def test_track_reasons_and_self(self):
        b = self.trace("b.json", AFTER)
        a = self.trace("a.json", BEFORE)      # slower: a failure
        hist = os.path.join(self.td.path, "h.jsonl")
        out, err = self.run_cli("track", "--before", b, "--after", a, "--history", hist,
                                "--fail-on", "fail", "--warmup-steps", "1", rc=3)
        self.assertIn("profsum track: status fail (--fail-on fail)", err)
        self.assertIn("Steady-state median step time regressed by", err)
        same = self.trace("b2.json", AFTER)
        out, err = self.run_cli("track", "--before", b, "--after", same, "--history", hist,
                                "--warmup-steps", "1")
        self.assertIn("same content (SHA-256", err)
        self.assertNotIn("different sources", err)


if __name__ == "__main__":
    unittest.main()
