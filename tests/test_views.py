"""The views of views/: documented (lint), created by import, and their
values on the spec fixtures."""
import json
import os
import re
import unittest

import fixtures
from util import connect, TempDir, ROOT

VIEWS = os.path.join(ROOT, "views")


def manifest():
    with open(os.path.join(VIEWS, "MANIFEST")) as f:
        return [line.strip() for line in f if line.strip()]


class Lint(unittest.TestCase):
    """Every public view: a description block, the profsum_ prefix, the
    column-list form with a comment above every column, trace_id and label
    first (except the history views, whose rows are records); every file
    listed in MANIFEST."""

    def test_manifest_lists_every_file(self):
        files = sorted("views/" + f for f in os.listdir(VIEWS) if f.endswith(".sql"))
        self.assertEqual(sorted(manifest()), files)

    def test_each_view_documented(self):
        for rel in manifest():
            text = open(os.path.join(ROOT, rel)).read()
            with self.subTest(view=rel):
                m = re.search(r"CREATE VIEW IF NOT EXISTS main\.(\w+)\(\n(.*?)\n\) AS\n", text, re.S)
                self.assertIsNotNone(m, "column-list form expected")
                name, cols = m.group(1), m.group(2)
                self.assertTrue(name.startswith("profsum_"), name)
                head = text[:m.start()].strip().splitlines()
                self.assertTrue(len(head) >= 2 and all(h.startswith("--") for h in head),
                                "description block above CREATE VIEW")
                self.assertTrue(head[0].startswith("-- %s:" % name), head[0])
                lines = [l.strip() for l in cols.splitlines()]
                names = []
                for i, l in enumerate(lines):
                    if l.startswith("--"):
                        continue
                    self.assertTrue(i > 0 and lines[i - 1].startswith("--"), "no comment above column %s" % l)
                    names.append(l.rstrip(","))
                if names[:2] == ["session_id", "session_label"]:   # a session's views (docs/sessions.md)
                    continue
                if not name.startswith(("profsum_history", "profsum_compare")):   # rows are records, not traces
                    self.assertEqual(names[:2], ["trace_id", "label"])


class Created(unittest.TestCase):
    def test_views_exist_after_import(self):
        with TempDir() as td:
            db = connect(os.path.join(td.path, "h.db"))
            p = td.write("f1.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
            db.execute("SELECT profsum_import(?, 'before', '{\"warmup_steps\":2,\"hot_op_limit\":10}')", (p,))
            have = set(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='view'"))
            for rel in manifest():
                name = re.search(r"CREATE VIEW IF NOT EXISTS main\.(\w+)", open(os.path.join(ROOT, rel)).read()).group(1)
                self.assertIn(name, have)
                db.execute("SELECT * FROM %s" % name).fetchall()
            self.assertEqual(db.execute("SELECT step, is_warmup FROM profsum_steps ORDER BY step").fetchall(),
                             [(0, 1), (1, 1), (2, 0), (3, 0), (4, 0), (5, 0)])
            b = dict((r[0], r[1:]) for r in db.execute(
                "SELECT category, total_duration, share_of_total FROM profsum_breakdown "
                "WHERE mode='exclusive_per_track'"))
            self.assertEqual(b["compute"], (120.0, 0.3870967741935484))
            self.assertEqual(b["communication"], (60.0, 0.1935483870967742))
            self.assertEqual(b["host"], (80.0, 0.25806451612903225))
            self.assertEqual(b["stall"], (50.0, 0.16129032258064516))
            self.assertEqual(db.execute("SELECT collective, count, total_duration, avg_duration FROM profsum_comm_ops"
                                        ).fetchall(), [("all-reduce", 2, 60.0, 30.0)])
            regions = db.execute("SELECT path, inclusive_share_of_total FROM profsum_regions ORDER BY rank").fetchall()
            self.assertEqual(regions[0], ("fusion", 1.0))
            kpis = dict(((r[0], r[1]), r[2:]) for r in db.execute(
                "SELECT kpi, device, value, band FROM profsum_kpis"))
            self.assertEqual(kpis[("host_overhead", None)], (80.0 / 310.0, "bad"))
            self.assertEqual(kpis[("memory_bandwidth", None)], (None, "unavailable"))
            # XLA Ops of /device:TPU:0: fusion.1 [0,100) ⊃ all-reduce [20,60); softmax [120,180);
            # dependency-wait [190,220); psum.1 [230,250) → busy 210 over the span 250.
            self.assertEqual(kpis[("device_utilization", "/device:TPU:0")], (210.0 / 250.0, "good"))
            # five device ops (median 40 µs, four under 0.1 ms: fusion.1 is 0.1 ms, not under):
            # too few to judge kernel durations by
            self.assertEqual(kpis[("kernel_duration", None)], (None, "unavailable"))
            self.assertEqual(kpis[("many_small_kernels", None)], (None, "unavailable"))
            self.assertEqual(db.execute("SELECT explanation FROM profsum_kpis WHERE kpi='many_small_kernels'").fetchone(),
                             ("5 device ops (80.0% shorter than 0.1 ms): too few to call them many (10 or more are needed)",))
            self.assertEqual(db.execute("SELECT explanation FROM profsum_kpis WHERE kpi='kernel_duration'").fetchone(),
                             ("5 device ops (median 0.040 ms): too few to tell launch overhead or poor fusion by "
                              "(10 or more are needed)",))
            self.assertEqual(kpis[("device_idle_gaps", None)], (0.84, "not_detected"))
            db.close()


if __name__ == "__main__":
    unittest.main()


class Catalog(unittest.TestCase):
    """profsum_catalog lists every view and table with its column docs."""

    def test_catalog(self):
        db = connect()
        rows = db.execute("SELECT object, kind, position, column_name, doc FROM profsum_catalog").fetchall()
        views = {r[0] for r in rows if r[1] == "view"}
        for rel in manifest():
            name = re.search(r"CREATE VIEW IF NOT EXISTS main\.(\w+)", open(os.path.join(ROOT, rel)).read()).group(1)
            self.assertIn(name, views)
        for obj, kind, pos, col, doc in rows:
            if kind == "view":
                self.assertTrue(doc, "%s.%s has no doc" % (obj, col))
        hot = [r for r in rows if r[0] == "profsum_hot_ops"]
        self.assertEqual(hot[0][2:4], (0, None))
        self.assertTrue(hot[0][4].startswith("profsum_hot_ops: hot_ops of profile_summary.v1"))
        self.assertEqual([r[3] for r in hot[1:4]], ["trace_id", "label", "rank"])
        # the columns listed are the view's real columns
        with TempDir() as td:
            d = connect(os.path.join(td.path, "c.db"))
            p = td.write("f2.json", json.dumps(fixtures.f2()))
            d.execute("SELECT profsum_import(?)", (p,))
            for v in views:
                cols = [r[1] for r in d.execute("PRAGMA table_info(%s)" % v)]
                self.assertEqual(cols, [r[3] for r in rows if r[0] == v and r[2] > 0], v)
            # the virtual tables the schema makes are listed too, each column
            # with a doc, in the module's column order
            vtabs = [r[0] for r in d.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
            self.assertIn("profsum_series_runs", vtabs)
            for v in vtabs:
                mine = [r for r in rows if r[0] == v]
                self.assertEqual(mine[0][1:4], ("virtual table", 0, None), v)
                cols = [r[1] for r in d.execute("PRAGMA table_info(%s)" % v)]
                self.assertEqual(cols, [r[3] for r in mine[1:]], v)
                for r in mine:
                    self.assertTrue(r[4], "%s.%s has no doc" % (v, r[3]))
            # the table store_events makes is listed with its columns, in order
            d.execute("SELECT profsum_import(?, 'ev', '{\"store_events\": true}')", (p,))
            mine = [r for r in rows if r[0] == "profsum_event"]
            self.assertEqual(mine[0][1:4], ("table", 0, None))
            self.assertEqual([r[1] for r in d.execute("PRAGMA table_info(profsum_event)")],
                             [r[3] for r in mine[1:]])
            self.assertTrue(all(r[4] for r in mine))
            d.close()
        # the table-valued functions that read files, each visible column with
        # a doc, in the module's column order (hidden inputs such as path left
        # out); every table-valued module profsum registers is there
        tvf = {r[0] for r in rows if r[1] == "table-valued function"}
        self.assertEqual(tvf, {"trace_events", "profsum_diagnostics", "profsum_find_traces",
                               "profsum_xplane_planes", "profsum_xplane_lines"})
        for f in sorted(tvf):
            mine = sorted((r for r in rows if r[0] == f), key=lambda r: r[2])
            self.assertEqual(mine[0][2:4], (0, None), f)
            self.assertTrue(mine[0][4].startswith(f + "("), f)
            cols = [r[1] for r in db.execute("SELECT * FROM pragma_table_xinfo(?)", (f,)) if r[6] == 0]
            self.assertEqual(cols, [r[3] for r in mine[1:]], f)
            for r in mine:
                self.assertTrue(r[4], "%s.%s has no doc" % (f, r[3]))
        self.assertEqual(len([r for r in rows if r[0] == "trace_events"]), 29)
        db.close()


class CompareViews(unittest.TestCase):
    def test_compare_ops_and_breakdown(self):
        with TempDir() as td:
            db = connect(os.path.join(td.path, "c.db"))
            for label, steps, softmax in (("before", [100, 110, 120, 130, 140, 150], 60),
                                          ("after", [90, 100, 110, 120, 130, 140], 40)):
                p = td.write(label + ".json.gz", json.dumps(fixtures.f1(steps, softmax)), gz=True)
                db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 2}')", (p, label))
            db.execute("SELECT profsum_track('before', 'after', 'pr-1')").fetchall()
            rows = db.execute("SELECT label, before_label, after_label, name, before_exclusive, after_exclusive, "
                              "delta, delta_pct FROM profsum_compare_ops ORDER BY delta, name").fetchall()
            self.assertEqual(rows[0], ("pr-1", "before", "after", "softmax", 60.0, 40.0, -20.0, -20.0 / 60.0 * 100.0))
            self.assertEqual(len(rows), 5)
            b = dict((r[0], r[1:]) for r in db.execute(
                "SELECT category, before_share, after_share, share_delta FROM profsum_compare_breakdown"))
            self.assertAlmostEqual(b["compute"][2], -0.0422691879866518, places=15)
            self.assertEqual(b["compute"][:2], (0.3870967741935484, 100.0 / 290.0))
            db.close()
