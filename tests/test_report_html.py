"""profsum_report_html: one self-contained HTML page with inline SVG charts,
rendered in headless Chromium when it is installed (the screenshot is kept
in build/test-output/report.png)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import fixtures
from util import connect, TempDir, ROOT


class ReportHtml(unittest.TestCase):
    def make(self, td):
        db = connect(os.path.join(td.path, "r.db"))
        p = td.write("f1.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
        db.execute("SELECT profsum_import(?, 'before', '{\"warmup_steps\": 2}')", (p,))
        html = db.execute("SELECT profsum_report_html('before', 10)").fetchone()[0]
        db.close()
        return html

    def test_self_contained(self):
        with TempDir() as td:
            html = self.make(td)
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        self.assertEqual(html.count("<svg"), 5)          # breakdown, steps, wall clock, top ops, regions
        self.assertNotIn("<script", html)
        self.assertNotIn("http://", html.replace('xmlns="http://www.w3.org/2000/svg"', ""))
        self.assertIn("fusion.1", html)
        self.assertIn("<title>step 0: 100.000 µs</title>", html)
        self.assertIn('fill="#bbbbbb"', html)             # warmup steps marked
        self.assertNotIn("warmup, so the statistics above count none", html)
        self.assertIn('<td class="good">good</td>', html)  # KPI bands
        self.assertIn("Communication appears dominant", html)

    def test_contents_link_every_section(self):
        import re
        with TempDir() as td:
            html = self.make(td)
        nav = re.search(r"<nav>(.*?)</nav>", html).group(1)
        links = re.findall(r'<a href="#([^"]+)">', nav)
        body = html[html.index("</nav>"):]
        self.assertEqual(links, re.findall(r'<section id="([^"]+)"', body))
        self.assertIn("profsum-op-profile", links)
        self.assertLess(links.index("families"), links.index("regions"))

    def test_text_from_a_summary_file_is_escaped(self):
        # a profile_summary.v1 from elsewhere: its strings are data, not markup;
        # out-of-range counts do not break the page
        with TempDir() as td:
            db = connect()
            p = td.write("f1.json", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)))
            db.execute("SELECT profsum_import(?, 't')", (p,))
            doc = json.loads(db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
            doc["generated_at_utc"] = "<script>alert(1)</script>"
            doc["schema_version"] = "profile_summary.v1"
            doc["time_breakdown"]["duration_basis"] = "<img src=x onerror=alert(2)>\x01\x1b[31m\x7f\tend"
            doc["trace_overview"]["num_events_total"] = 1e300
            doc["step_time"]["steady_state_steps"]["count"] = -1e300
            v = td.write("v1.json", json.dumps(doc))
            db.execute("SELECT profsum_import(?, 'v')", (v,))
            html = db.execute("SELECT profsum_report_html('v', 10)").fetchone()[0]
            db.close()
        self.assertNotIn("<script", html)
        self.assertNotIn("<img", html)
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", html)
        self.assertIn("&lt;img src=x onerror=alert(2)&gt;\ufffd\ufffd[31m\ufffd\tend", html)
        # no control character but tab, newline and carriage return in the page
        self.assertEqual([c for c in html if (ord(c) < 32 and c not in "\t\n\r") or ord(c) == 127], [])

    def test_long_names_cut_at_characters(self):
        # labels are cut to 40 characters, never inside a UTF-8 sequence (the
        # page must decode), with an ellipsis and the full name as a tooltip;
        # a region path keeps its end (paths differ at their leaves)
        long_jp = "\u3042" * 60 + ".1"
        long_path = "/".join(["train_step", "transformer", "layer_0", "attention", "query_projection",
                              "dot_general"])
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
              {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
              {"ph": "X", "pid": 1, "tid": 1, "name": long_jp, "ts": 0, "dur": 50,
               "args": {"tf_op": long_path}},
              {"ph": "X", "pid": 1, "tid": 1, "name": "\u00e9" * 45, "ts": 60, "dur": 20}]
        with TempDir() as td:
            db = connect()
            db.execute("SELECT profsum_import(?, 'long')", (td.write("l.json", json.dumps({"traceEvents": ev})),))
            raw = db.execute("SELECT CAST(profsum_report_html('long') AS BLOB)").fetchone()[0]
            db.close()
        html = raw.decode("utf-8")                         # strict: raises on a split sequence
        self.assertIn("<title>" + long_jp + ": 50.000 µs</title>", html)
        self.assertIn(">" + "\u3042" * 39 + "…</text>", html)
        self.assertIn(">" + "\u00e9" * 39 + "…</text>", html)
        full = "=>".join(long_path.split("/"))
        self.assertIn(">…" + full[-39:].replace(">", "&gt;") + "</text>", html)
        self.assertIn("<title>profsum report: long</title>", html)
        self.assertIn('viewBox="0 0 900 ', html)           # charts scale with the window
        self.assertIn("No steps detected", html)
        self.assertIn("median n/a µs, p90 n/a µs", html)   # a null median is not 0

    def test_empty_sections_say_so(self):
        with TempDir() as td:
            db = connect()
            db.execute("SELECT profsum_import(?, 'e')", (td.write("e.json", '{"traceEvents": []}'),))
            html = db.execute("SELECT profsum_report_html('e')").fetchone()[0]
            # a summary document has no per-step rows: the chart says why it is empty
            p = td.write("f1.json", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)))
            db.execute("SELECT profsum_import(?, 't')", (p,))
            v = td.write("v1.json", db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
            db.execute("SELECT profsum_import(?, 'v')", (v,))
            html_v1 = db.execute("SELECT profsum_report_html('v')").fetchone()[0]
            db.close()
        self.assertEqual(html.count("<svg"), 0)
        for msg in ["No device or host time in the trace.", "No steps detected",
                    "No device ops in the trace", "No regions",
                    '<p class="lead">No event of the trace has a time',
                    "Profile span: none (no event of the trace has a time)."]:
            self.assertIn(msg, html)
        self.assertNotIn("Profile span 0.000", html)
        self.assertIn("No per-step durations: the trace was imported from a summary document", html_v1)
        self.assertIn("Imported from a summary document: only the KPIs", html_v1)

    def test_only_warmup_steps(self):
        # every step below warmup_steps: the chart says why the statistics are empty
        with TempDir() as td:
            db = connect()
            p = td.write("f1.json", json.dumps(fixtures.f1([100, 110, 120], 60)))
            db.execute("SELECT profsum_import(?, 'w', '{\"warmup_steps\": 9}')", (p,))
            html = db.execute("SELECT profsum_report_html('w')").fetchone()[0]
            db.close()
        self.assertIn("all 3 steps are warmup, so the statistics above count none", html)
        self.assertIn("steady state: 0 steps, median n/a µs", html)

    def test_errors(self):
        db = connect()
        with self.assertRaises(Exception) as cm:
            db.execute("SELECT profsum_report_html('nope')").fetchone()
        self.assertIn("profsum_report_html: no trace with label 'nope'", str(cm.exception))

    def test_renders_in_chromium(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if chromium is None:
            self.skipTest("chromium is not installed (apt-get install chromium)")
        with TempDir() as td:
            page = td.write("report.html", self.make(td))
            out = os.path.join(ROOT, "build", "test-output")
            os.makedirs(out, exist_ok=True)
            png = os.path.join(out, "report.png")
            if os.path.exists(png):
                os.remove(png)
            profile = tempfile.mkdtemp(prefix="profsum-chromium-")
            try:
                subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                "--user-data-dir=" + profile, "--window-size=1000,1400",
                                "--screenshot=" + png, "file://" + page],
                               check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
            finally:
                shutil.rmtree(profile, ignore_errors=True)
            data = open(png, "rb").read()
            self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
            self.assertGreater(len(data), 20000)          # a real page, not a blank one


if __name__ == "__main__":
    unittest.main()
