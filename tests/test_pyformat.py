"""Python-exact float formatting in the texts profsum writes.

The reference tool formats floats with Python format specs ({x:.1%},
{x:.3f}, {x:.2f}, {x:.3e}, {x*100:.2f}%): the exact binary value of the
double is rounded half-even (summary-v1-spec.md §4.12, tools-spec §5, §10).
SQLite's printf rounds half-up on ~16 decimal digits instead, which differs
exactly on binary ties such as 9/80 -> 11.25 %.  Every fixture here hits
such a tie; the expected text is computed with Python's own format() from
the document's numbers, and each test first checks that the value really
is a tie (half-up rounding of its decimal repr gives another text), so the
test cannot pass by accident.
"""
import decimal
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

import fixtures
from util import SO
from test_summary import Base as SummaryBase


def half_up(x, spec):
    """What a decimal half-up formatter (SQLite's printf) gives for x."""
    with decimal.localcontext() as ctx:
        ctx.rounding = decimal.ROUND_HALF_UP
        return format(decimal.Decimal(repr(x)), spec)


def steps_trace(durations, ops=None):
    """A TPU trace with one step per duration (Steps thread) and XLA ops."""
    ev = list(fixtures.TPU_META[:3])
    for i, d in enumerate(durations):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(i), "ts": i * 10, "dur": d})
    for e in ops or [{"name": "fusion.1", "ts": 0, "dur": 5}]:
        ev.append(dict({"ph": "X", "pid": 1, "tid": 2}, **e))
    return fixtures.doc(ev)


def back_to_back(ops):
    """ops_only trace of (name, dur[, args]) run one after the other (no gaps)."""
    ev, t = [], 0
    for o in ops:
        e = {"name": o[0], "ts": t, "dur": o[1]}
        if len(o) > 2:
            e["args"] = o[2]
        ev.append(e)
        t += o[1]
    return fixtures.ops_only(ev)


# 11 steady steps: median = v[5], p90 = v[9] exactly (numpy linear, w = 0).
STEPS_MEDIAN_P90_TIE = [1.0] * 5 + [1.0625] * 4 + [2.0625, 3.0]      # .3f ties
STEPS_JITTER_TIE = [1.0] * 9 + [1.625, 2.0]                          # j = 1.625


class Base(SummaryBase):
    """test_summary.Base (a history database in a temporary folder); the
    summary of a trace given as an object or text, the document only."""

    def summary(self, trace, label, opts=None):
        p = self.td.write(label + ".json", trace)
        self.db.execute("SELECT profsum_import(?, ?, ?)", (p, label, json.dumps(opts or {})))
        return json.loads(self.db.execute("SELECT profsum_summary_json(?)", (label,)).fetchone()[0])

    def candidate(self, d, cid):
        c = [x for x in d["optimization_candidates"] if x["candidate_id"] == cid]
        self.assertEqual(len(c), 1, [x["candidate_id"] for x in d["optimization_candidates"]])
        return c[0]

    def assertTie(self, x, spec):
        """x formatted with spec is a rounding tie: Python and half-up differ."""
        self.assertNotEqual(format(x, spec), half_up(x, spec), (x, spec))

    def md(self, label, top_k=10):
        return self.db.execute("SELECT profsum_report_md(?, ?)", (label, top_k)).fetchone()[0]


class Candidates(Base):
    def test_single_hot_op_share_9_of_80(self):
        # fusion.1 9 of a total of 80: h = 0.1125 -> Python '11.2%' (half-up '11.3%').
        d = self.summary(back_to_back([("fusion.1", 9)] + [("mul.%d" % i, 8) for i in range(8)]
                                      + [("add.1", 7)]), "hot")
        T = d["time_breakdown"]["total_duration"]
        ex = d["hot_ops"][0]["exclusive_duration"]
        self.assertEqual((d["hot_ops"][0]["name"], ex, T), ("fusion.1", 9.0, 80.0))
        h = ex / T
        self.assertTie(h, ".1%")
        self.assertEqual(format(h, ".1%"), "11.2%")
        c = self.candidate(d, "single-hot-op")
        self.assertEqual(c["rationale"], f"Top op 'fusion.1' contributes {h:.1%} of profiled exclusive duration.")
        self.assertEqual(c["evidence"], ["Top op: fusion.1", f"Top op exclusive duration: {ex:.3f}",
                                         f"Top op share: {h:.1%}"])
        # The profsum_candidates view and the markdown report carry the same text.
        self.assertEqual(self.db.execute("SELECT rationale FROM profsum_candidates WHERE label='hot' "
                                         "AND candidate_id='single-hot-op'").fetchone()[0], c["rationale"])
        self.assertIn("\n" + c["rationale"] + "\n", self.md("hot"))

    def test_pre_op_gap_share_90_of_32(self):
        # A 90 µs gap before b.1, total exclusive time 32: g = 2.8125 -> '281.2%'.
        d = self.summary(fixtures.ops_only([{"name": "a.1", "ts": 0, "dur": 16},
                                            {"name": "b.1", "ts": 106, "dur": 16}]), "gap")
        T = d["time_breakdown"]["total_duration"]
        g0 = d["gap_before_ops"][0]
        tot, mx = g0["total_gap_duration"], g0["max_gap_duration"]
        self.assertEqual((tot, T), (90.0, 32.0))
        g = tot / T
        self.assertTie(g, ".1%")
        self.assertEqual(format(g, ".1%"), "281.2%")
        c = self.candidate(d, "pre-op-gap")
        self.assertEqual(c["rationale"], f"Op 'b.1' accumulates significant pre-op idle gap ({g:.1%} of total "
                                         "profiled exclusive duration).")
        self.assertEqual(c["evidence"][2:4], [f"Total pre-gap: {tot:.3f}", f"Max pre-gap: {mx:.3f}"])

    def test_step_jitter_ratio_tie(self):
        # p90/median = 1.625/1.0 -> Python '1.62' (half-up '1.63').
        d = self.summary(steps_trace(STEPS_JITTER_TIE), "jit", {"warmup_steps": 0})
        ss = d["step_time"]["steady_state_steps"]
        self.assertEqual((ss["count"], ss["median"], ss["p90"]), (11, 1.0, 1.625))
        j = ss["p90"] / ss["median"]
        self.assertTie(j, ".2f")
        c = self.candidate(d, "step-jitter")
        self.assertEqual(c["rationale"], f"Steady-state p90/median ratio is {j:.2f}, indicating intermittent "
                                         "slow steps.")
        self.assertEqual(c["evidence"], [f"Steady median: {ss['median']:.3f}", f"Steady p90: {ss['p90']:.3f}",
                                         f"p90/median: {j:.2f}"])
        self.assertEqual(c["evidence"][2], "p90/median: 1.62")

    def test_step_jitter_median_p90_ties(self):
        # median 1.0625 -> '1.062', p90 2.0625 -> '2.062' (half-up: .063).
        d = self.summary(steps_trace(STEPS_MEDIAN_P90_TIE), "jit2", {"warmup_steps": 0})
        ss = d["step_time"]["steady_state_steps"]
        self.assertEqual((ss["median"], ss["p90"]), (1.0625, 2.0625))
        self.assertTie(ss["median"], ".3f")
        self.assertTie(ss["p90"], ".3f")
        c = self.candidate(d, "step-jitter")
        j = ss["p90"] / ss["median"]
        self.assertEqual(c["evidence"], [f"Steady median: {ss['median']:.3f}", f"Steady p90: {ss['p90']:.3f}",
                                         f"p90/median: {j:.2f}"])
        self.assertEqual(c["evidence"][:2], ["Steady median: 1.062", "Steady p90: 2.062"])

    def test_no_dominant_bottleneck_shares(self):
        # Shares 0.0625 / 0.0625 (6.25 % -> '6.2%') in the fallback candidate:
        # compute 14 (three ops < 8 % of the total each), comm 1, host 0, stall 1.
        d = self.summary(back_to_back([("fusion.%d" % i, 1) for i in range(14)]
                                      + [("all-reduce.1", 1), ("dependency-wait", 1)]), "bal")
        tb = d["time_breakdown"]
        self.assertEqual(tb["total_duration"], 16.0)
        c = self.candidate(d, "no-dominant-bottleneck")
        shares = [tb[k]["share_of_total"] for k in ("compute", "communication", "host", "stall")]
        self.assertTie(shares[1], ".1%")
        self.assertEqual(c["evidence"], [f"Compute: {shares[0]:.1%}", f"Communication: {shares[1]:.1%}",
                                         f"Host: {shares[2]:.1%}", f"Stall: {shares[3]:.1%}"])
        self.assertEqual(c["evidence"][1], "Communication: 6.2%")


class Reports(Base):
    def test_md_avg_column_tie(self):
        # fusion.1 run twice, 1.0 and 2.001: avg 1.5005 -> Python '1.500'.
        d = self.summary(fixtures.ops_only([{"name": "fusion.1", "ts": 0, "dur": 1.0},
                                            {"name": "fusion.1", "ts": 1, "dur": 2.001}]), "avg")
        h = d["hot_ops"][0]
        self.assertEqual((h["name"], h["count"]), ("fusion.1", 2))
        self.assertTie(h["avg_duration"], ".3f")
        row = (f"| `fusion.1` | `fusion` | compute | 2 | {h['exclusive_duration']:.3f} | "
               f"{h['avg_duration']:.3f} | `n/a` | `n/a` |")
        md = self.md("avg")
        self.assertIn("\n" + row + "\n", md)
        self.assertIn("| 3.001 | 1.500 |", row)

    def test_md_share_and_sci_ties(self):
        # compute 1 of 160 -> share 0.00625 -> {x*100:.2f}% = '0.62%';
        # family `other` (1 µs, flop proxy 123450) -> FLOP Proxy/s {x:.3e} of ~123450.
        d = self.summary(back_to_back([("fusion.1", 1, {"long_name": "%fusion.1 = f32[123450]{0} fusion(f32[123450] %p)"}),
                                       ("all-reduce.1", 159)]), "pct")
        tb = d["time_breakdown"]
        cs = tb["compute"]["share_of_total"]
        self.assertTie(cs * 100, ".2f")
        md = self.md("pct")
        self.assertIn(f"\n| Compute | {tb['compute']['total_duration']:.3f} | {cs * 100:.2f}% |\n", md)
        self.assertIn("\n| Compute | 1.000 | 0.62% |\n", md)
        fam = [f for f in d["semantic_families"] if f["family"] == "other"][0]
        inv = 1 / fam["time_per_flop_proxy"]
        self.assertTie(inv, ".3e")
        self.assertIn(f" | {fam['flop_proxy_total']:.3f} | {inv:.3e} | `fusion.1` |\n", md)
        self.assertIn(" | 1.234e+05 | ", md)

    def test_md_steady_state_ties(self):
        d = self.summary(steps_trace(STEPS_MEDIAN_P90_TIE), "st", {"warmup_steps": 0})
        ss = d["step_time"]["steady_state_steps"]
        md = self.md("st")
        self.assertIn(f"\n- Median: `{ss['median']:.3f}`\n- P90: `{ss['p90']:.3f}`\n- Mean: `{ss['mean']:.3f}`\n", md)
        self.assertIn("- Median: `1.062`\n- P90: `2.062`", md)
        cl = d["step_time"]["classes"]
        for c in cl:
            ds = c["duration_stats"]
            self.assertIn(f"| `{c['name']}` | {c['count']} | {c['fraction_of_steady'] * 100:.2f}% | "
                          f"{ds['median']:.3f} | {ds['p90']:.3f} | ", md)

    def test_html_values_tie(self):
        d = self.summary(steps_trace(STEPS_MEDIAN_P90_TIE), "html", {"warmup_steps": 0})
        ss = d["step_time"]["steady_state_steps"]
        html = self.db.execute("SELECT profsum_report_html('html')").fetchone()[0]
        self.assertIn(f"median {ss['median']:.3f} µs, p90 {ss['p90']:.3f} µs", html)
        self.assertIn("median 1.062 µs, p90 2.062 µs", html)

    def test_track_message_tie(self):
        # steady median 160 -> 161: +0.625 % -> '0.62%' (threshold 0).
        self.summary(steps_trace([160.0] * 4), "b", {"warmup_steps": 0})
        self.summary(steps_trace([161.0] * 4), "a", {"warmup_steps": 0})
        pct = (161.0 - 160.0) / 160.0 * 100.0
        self.assertTie(pct, ".2f")
        rec = json.loads(self.db.execute("SELECT profsum_track('b', 'a', NULL, ?)", (json.dumps(
            {"max_step_median_regression_pct": 0}),)).fetchone()[0])
        self.assertEqual(rec["assessment"]["failures"],
                         [f"Steady-state median step time regressed by {pct:.2f}% (threshold {0.0:.2f}%)."])


LOCALE_SCRIPT = r"""
import json, locale, sqlite3, sys
if sys.argv[4] == "de":
    locale.setlocale(locale.LC_ALL, "de_DE.UTF-8")
so, pa, pb = sys.argv[1:4]
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(so)
db.execute("SELECT profsum_import(?, 'b', '{\"warmup_steps\": 0}')", (pb,))
db.execute("SELECT profsum_import(?, 'a', '{\"warmup_steps\": 0}')", (pa,))
track = db.execute("SELECT profsum_track('b', 'a', NULL, '{\"max_step_median_regression_pct\": 0}')").fetchone()[0]
print(json.dumps({
    "md": db.execute("SELECT profsum_report_md('a')").fetchone()[0],
    "track": track,
    "summary": db.execute("SELECT profsum_summary_json('a')").fetchone()[0],
    "pretty": db.execute("SELECT profsum_json_pretty('[1.5, 2.25e-7, 0.1, -3e300]')").fetchone()[0],
    "ts": db.execute("SELECT sum(ts), total(dur_ps) FROM trace_events(?)", (pa,)).fetchone(),
    "odd": db.execute("SELECT ts, dur_ps, flops, bytes_accessed, args FROM trace_events(?)", (sys.argv[5],)).fetchall(),
}))
"""


class Locale(Base):
    def test_decimal_point_whatever_the_locale(self):
        """A host that sets a decimal-comma LC_NUMERIC (Python's
        locale.setlocale) does not change the texts: Python's format() is
        locale-independent."""
        if not shutil.which("localedef"):
            self.skipTest("localedef not available")
        loc = os.path.join(self.td.path, "loc")
        os.makedirs(loc)
        r = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(loc, "de_DE.UTF-8")],
                           capture_output=True)
        # localedef exits 1 for warnings with a usable locale, and also when it
        # cannot build one (no locale sources: Debian's `locales` package,
        # which `make deps` installs); only a directory that holds the
        # compiled categories is a locale.
        built = os.path.join(loc, "de_DE.UTF-8")
        if r.returncode not in (0, 1) or not os.path.isfile(os.path.join(built, "LC_NUMERIC")):
            self.skipTest("cannot build the de_DE.UTF-8 locale (localedef: %s)"
                          % (r.stderr.decode(errors="replace").strip() or "exit %d" % r.returncode))
        pb = self.td.write("b.json", steps_trace([1.0] * 4))
        pa = self.td.write("a.json", steps_trace(STEPS_MEDIAN_P90_TIE))
        # Numbers that take the slow paths: more than 6 decimals, exponents.
        odd = self.td.write("odd.json", '{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, '
                            '"ts": 1.2345678901234e3, "dur": 2.5e-1, '
                            '"args": {"flops": 1.5e3, "bytes_accessed": "2.25"}}]}')
        env = dict(os.environ, LOCPATH=loc)
        runs = {}
        for which in ("C", "de"):
            out = subprocess.run([sys.executable, "-c", LOCALE_SCRIPT, SO, pa, pb, which, odd], env=env,
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            runs[which] = json.loads(out.stdout)
        res = runs["de"]
        # Every text, JSON number and parsed value is the same as in the C
        # locale: JSON is read and written with '.' whatever LC_NUMERIC says.
        self.assertEqual(res["pretty"], "[\n  1.5,\n  2.25e-07,\n  0.1,\n  -3e+300\n]")
        def stamp_free(v):
            return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<time>", v) if isinstance(v, str) else v
        self.assertEqual(res["odd"][0][2:4], [1500.0, 2.25])
        for key in ("md", "track", "summary", "pretty", "ts", "odd"):
            self.assertEqual(stamp_free(res[key]), stamp_free(runs["C"][key]), key)
        self.assertIn("- Median: `1.062`\n- P90: `2.062`", res["md"])
        self.assertIn("\n- Steady median: 1.062\n", res["md"])
        # The record's failure message.
        pct = (1.0625 - 1.0) / 1.0 * 100.0
        self.assertIn(json.dumps(f"Steady-state median step time regressed by {pct:.2f}% (threshold {0.0:.2f}%)."),
                      res["track"])


if __name__ == "__main__":
    unittest.main()
