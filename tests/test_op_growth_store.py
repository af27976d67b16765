"""profsum_op_growth with stored ranks (profsum_agg_op_growth): the same
rows, in the same order, whether a pair's ranks are stored, missing or
left stale by a change of the series, and one op over a series read
through the stored rows' key.

Every case compares the whole view (and its per-label, per-series, per-op
queries) with a reference computed here in Python from profsum_trace and
profsum_agg_op, and with the view's own answer once the stored rows are
deleted (each pair then ranked by the view itself, as before the store).
"""
import json
import os
import unittest

from util import TempDir, connect, progress_calls


def make_trace(td, seed, name=None):
    """A one-device trace whose ops differ with the seed (some ops only in
    some runs, ties of delta between ops)."""
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
          {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Steps"}}]
    for step in range(4):
        t0 = 1000.0 * step
        ev.append({"ph": "X", "pid": 1, "tid": 3, "ts": t0, "dur": 900 + seed, "name": str(step),
                   "args": {"group_id": str(step)}})
        for k in range(4 + seed % 4):
            ev.append({"ph": "X", "pid": 1, "tid": 2, "ts": t0 + 100 * k, "dur": 20 + 10 * k + seed * (k % 3),
                       "name": "fusion.%d" % (k + seed % 3), "args": {"long_name": "fusion.%d = f()" % k}})
    return td.write(name or ("t%d.json" % seed), {"traceEvents": ev})


def reference(db):
    """profsum_op_growth computed here: every row, in (trace_id, growth_rank) order."""
    runs = {}
    info = {}
    for tid, label, series, at in db.execute("SELECT trace_id, label, series, imported_at FROM profsum_trace"):
        info[tid] = (label, at)
        if series is not None:
            runs.setdefault(series, []).append((at, tid))
    ops = {}
    for tid, name, x in db.execute("SELECT trace_id, name, exclusive_duration FROM profsum_agg_op"):
        ops.setdefault(tid, {})[name] = x
    out = []
    for series, rs in runs.items():
        rs.sort()
        for i in range(1, len(rs)):
            tid, prev = rs[i][1], rs[i - 1][1]
            a, b = ops.get(tid, {}), ops.get(prev, {})
            rows = []
            for name in set(a) | set(b):
                x, y = b.get(name, 0.0), a.get(name, 0.0)
                rows.append((name, x, y, y - x, ((y - x) / x) * 100.0 if x > 0 else None))
            rows.sort(key=lambda r: (-r[3], r[0]))
            for k, r in enumerate(rows):
                out.append((tid, info[tid][0], series, info[tid][1], len(rs) - i, prev, info[prev][0])
                           + r + (k + 1,))
    out.sort(key=lambda r: (r[0], r[12]))
    return out


class OpGrowthStore(unittest.TestCase):

    def setUp(self):
        self.td = TempDir()
        self.path = os.path.join(self.td.path, "h.db")
        self.db = connect(self.path)
        self.traces = [make_trace(self.td, s) for s in range(6)]
        for i in range(8):
            self.imp(self.traces[i % 6], "a%d" % i, "sa")
        for i in range(4):
            self.imp(self.traces[(i + 2) % 6], "b%d" % i, "sb")
        self.imp(self.traces[1], "loose", None)

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def imp(self, path, label, series, **opts):
        if series is not None:
            opts["series"] = series
        return self.db.execute("SELECT profsum_import(?, ?, ?)", (path, label, json.dumps(opts))).fetchone()[0]

    def tid(self, label):
        return self.db.execute("SELECT trace_id FROM profsum_trace WHERE label = ?", (label,)).fetchone()[0]

    def stored_pairs(self):
        return dict(self.db.execute("SELECT DISTINCT trace_id, prev_trace_id FROM profsum_agg_op_growth"))

    def current_pairs(self):
        return dict(self.db.execute("SELECT trace_id, prev_trace_id FROM profsum_series_runs "
                                    "WHERE prev_trace_id IS NOT NULL"))

    def answers(self):
        """The view's answers to the queries a user asks, in its order."""
        db = self.db
        out = {"all": db.execute("SELECT * FROM profsum_op_growth").fetchall()}
        for (label,) in db.execute("SELECT label FROM profsum_trace ORDER BY label").fetchall():
            out["label " + label] = db.execute("SELECT * FROM profsum_op_growth WHERE label = ?", (label,)).fetchall()
            out["id " + label] = db.execute("SELECT * FROM profsum_op_growth WHERE trace_id = ?",
                                            (self.tid(label),)).fetchall()
            # a trace id as text or real compares as SQLite compares it
            for v in (str(self.tid(label)), float(self.tid(label))):
                self.assertEqual(db.execute("SELECT * FROM profsum_op_growth WHERE trace_id = ?", (v,)).fetchall(),
                                 out["id " + label])
        for s in ("sa", "sb", "nothing"):
            out["series " + s] = db.execute("SELECT * FROM profsum_op_growth WHERE series = ?", (s,)).fetchall()
            out["last3 " + s] = db.execute("SELECT * FROM profsum_op_growth WHERE series = ? AND runs_back <= 3",
                                           (s,)).fetchall()
            for n in ("fusion.0", "fusion.2", "fusion.5", "absent"):
                out["op %s %s" % (s, n)] = db.execute(
                    "SELECT * FROM profsum_op_growth WHERE series = ? AND name = ?", (s, n)).fetchall()
        out["top"] = db.execute("SELECT label, name, delta FROM profsum_op_growth WHERE growth_rank = 1").fetchall()
        out["sum"] = db.execute("SELECT series, name, sum(delta) FROM profsum_op_growth WHERE runs_back < 3 "
                                "GROUP BY series, name ORDER BY 1, 2").fetchall()
        return out

    def without_store(self, f, *args):
        """f(*args) with the stored rows deleted (put back after)."""
        self.db.commit()
        self.db.execute("SAVEPOINT bare")
        try:
            self.db.execute("DELETE FROM profsum_agg_op_growth")
            return f(*args)
        finally:
            self.db.execute("ROLLBACK TO bare")
            self.db.execute("RELEASE bare")

    def check_exact(self):
        """The view as the Python reference, and as itself without the
        stored rows (deleted, then put back)."""
        got = self.answers()
        self.assertEqual(got["all"], reference(self.db))
        self.assertGreater(len(got["all"]), 50)
        bare = self.without_store(self.answers)
        self.assertEqual(got.keys(), bare.keys())
        for k in got:
            self.assertEqual(got[k], bare[k], k)
        return got

    def test_import_stores_each_pair(self):
        self.assertEqual(self.stored_pairs(), self.current_pairs())
        self.assertEqual(len(self.current_pairs()), 7 + 3)
        n = self.db.execute("SELECT count(*) FROM profsum_agg_op_growth").fetchone()[0]
        self.assertEqual(n, len(reference(self.db)))
        # a run without a series stores nothing
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_op_growth WHERE trace_id = ?",
                                         (self.tid("loose"),)).fetchone(), (0,))
        got = self.check_exact()
        self.assertTrue(got["op sa fusion.2"])
        # the ranks are the stored ones: a changed stored rank shows
        self.db.execute("UPDATE profsum_agg_op_growth SET growth_rank = 99 WHERE trace_id = ? AND name = 'fusion.2'",
                        (self.tid("a5"),))
        self.assertEqual(self.db.execute("SELECT growth_rank FROM profsum_op_growth WHERE label = 'a5' "
                                         "AND name = 'fusion.2'").fetchall(), [(99,)])

    def test_store_function_fills_what_is_missing(self):
        want = self.answers()
        self.db.execute("DELETE FROM profsum_agg_op_growth")
        self.assertEqual(self.db.execute("SELECT profsum_op_growth_store('a3')").fetchone()[0],
                         len([r for r in want["all"] if r[1] == "a3"]))
        self.assertEqual(self.stored_pairs(), {self.tid("a3"): self.tid("a2")})
        self.assertEqual(self.db.execute("SELECT profsum_op_growth_store(?)", (self.tid("a0"),)).fetchone(), (0,))
        self.assertEqual(self.db.execute("SELECT profsum_op_growth_store('loose')").fetchone(), (0,))
        self.assertEqual(self.db.execute("SELECT profsum_op_growth_store()").fetchone(), (len(want["all"]),))
        self.assertEqual(self.stored_pairs(), self.current_pairs())
        self.assertEqual(self.answers(), want)

    def test_run_inserted_mid_series(self):
        # an import whose time falls between a2 and a3 (a copied run, or a
        # clock set back): a3's stored pair (a3, a2) is stale
        new = self.imp(self.traces[5], "mid", "sa")
        at = self.db.execute("SELECT imported_at FROM profsum_trace WHERE label = 'a2'").fetchone()[0]
        self.db.execute("UPDATE profsum_trace SET imported_at = ? WHERE trace_id = ?", (at, new))
        self.assertNotEqual(self.stored_pairs()[self.tid("a3")], self.current_pairs()[self.tid("a3")])
        got = self.check_exact()
        self.assertEqual([r[6] for r in got["label a3"]][:1], ["mid"])
        self.assertEqual([r[6] for r in got["label mid"]][:1], ["a2"])
        # stored again: the same answers
        self.db.execute("SELECT profsum_op_growth_store()").fetchone()
        self.assertEqual(self.stored_pairs(), self.current_pairs())
        self.assertEqual(self.answers(), got)

    def test_import_before_the_newest_run_stores_the_next_pair(self):
        # a run imported with a time before the newest (a clock behind):
        # both pairs it changes are stored at its import
        last = self.db.execute("SELECT imported_at FROM profsum_trace WHERE label = 'a7'").fetchone()[0]
        self.db.execute("UPDATE profsum_trace SET imported_at = '9999-01-01T00:00:00.000000Z' WHERE label = 'a7'")
        self.imp(self.traces[3], "late", "sa")
        self.assertEqual(self.stored_pairs(), self.current_pairs())
        self.assertEqual(self.current_pairs()[self.tid("a7")], self.tid("late"))
        self.assertLess(last, "9999")
        self.check_exact()

    def test_deleted_trace(self):
        # removed by hand (its rows left behind): a4's previous run is a2 now
        self.db.execute("DELETE FROM profsum_trace WHERE label = 'a3'")
        self.assertNotIn(self.tid("a4"), [k for k, v in self.stored_pairs().items()
                                         if self.current_pairs().get(k) == v])
        got = self.check_exact()
        self.assertEqual({r[6] for r in got["label a4"]}, {"a2"})
        # and the first run of a series removed: the second has no pair now
        self.db.execute("DELETE FROM profsum_trace WHERE label = 'b0'")
        got = self.check_exact()
        self.assertEqual(got["label b1"], [])

    def test_reimported_label(self):
        # replace: the old a3 is deleted (its stored rows with it), a4 pairs
        # with a2 (stored again at once), the new a3 is the newest run
        old = self.tid("a3")
        self.imp(self.traces[4], "a3", "sa", replace=True)
        new = self.tid("a3")
        self.assertNotEqual(old, new)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_op_growth WHERE trace_id = ? "
                                         "OR prev_trace_id = ?", (old, old)).fetchone(), (0,))
        self.assertEqual(self.stored_pairs(), self.current_pairs())
        self.assertEqual(self.current_pairs()[self.tid("a4")], self.tid("a2"))
        self.assertEqual(self.current_pairs()[new], self.tid("a7"))
        self.check_exact()
        # into another series: both series change
        self.imp(self.traces[0], "a5", "sb", replace=True)
        self.assertEqual(self.stored_pairs(), self.current_pairs())
        self.check_exact()

    def test_series_changed_by_hand(self):
        self.db.execute("UPDATE profsum_trace SET series = 'sb' WHERE label IN ('a1', 'a6')")
        self.db.execute("UPDATE profsum_trace SET series = NULL WHERE label = 'a4'")
        self.check_exact()

    def test_one_op_reads_one_stored_row_per_pair(self):
        sql = "SELECT * FROM profsum_op_growth WHERE series = ? AND name = ?"
        plan = [r[3] for r in self.db.execute("EXPLAIN QUERY PLAN " + sql, ("sa", "fusion.2"))]
        self.assertIn("SEARCH g USING PRIMARY KEY (trace_id=? AND name=?)", plan)
        self.assertTrue(any("VIRTUAL TABLE INDEX 2:series=?" in x for x in plan), plan)
        self.assertFalse([x for x in plan if x.startswith("MATERIALIZE") or x.startswith("SCAN profsum_agg")], plan)
        # the ranked pairs' ops are read only for pairs without stored rows
        for _ in range(3):
            for i in range(8):
                self.imp(self.traces[i % 6], "c%d-%d" % (_, i), "sa", unique_label=True)
        stored = progress_calls(self.db, sql, ("sa", "fusion.2"), 100)
        ranked = self.without_store(progress_calls, self.db, sql, ("sa", "fusion.2"), 100)
        self.assertLess(stored * 3, ranked)

    def test_per_label_plan_reads_one_pair(self):
        plan = [r[3] for r in self.db.execute("EXPLAIN QUERY PLAN SELECT * FROM profsum_op_growth WHERE label = ?",
                                              ("a3",))]
        self.assertTrue(any("(label=?)" in x for x in plan), plan)
        self.assertTrue(any("VIRTUAL TABLE INDEX 1:trace_id=?" in x for x in plan), plan)
        self.assertIn("SEARCH g USING PRIMARY KEY (trace_id=?)", plan)

    def test_store_function_errors(self):
        for arg, msg in (("'nope'", "profsum_op_growth_store: no trace with label 'nope'"),
                         ("12345", "profsum_op_growth_store: no trace with id 12345"),
                         ("x'00'", "profsum_op_growth_store: trace must be a label (text) or a trace id"),
                         ("NULL", "profsum_op_growth_store: trace must be a label (text) or a trace id")):
            with self.subTest(arg=arg):
                with self.assertRaises(Exception) as cm:
                    self.db.execute("SELECT profsum_op_growth_store(%s)" % arg).fetchone()
                self.assertIn(msg, str(cm.exception))
        empty = connect()
        try:
            with self.assertRaises(Exception) as cm:
                empty.execute("SELECT profsum_op_growth_store()").fetchone()
            self.assertIn("profsum_op_growth_store: the database holds no imported traces", str(cm.exception))
        finally:
            empty.close()
        # not from a view: it writes
        self.db.execute("CREATE VIEW v AS SELECT profsum_op_growth_store() AS n")
        with self.assertRaises(Exception):
            self.db.execute("SELECT n FROM v").fetchone()

    def test_attached_schema(self):
        self.db.execute("ATTACH ? AS h", (os.path.join(self.td.path, "other.db"),))
        for i in range(3):
            self.db.execute("SELECT profsum_import(?, ?, ?)", (self.traces[i], "h%d" % i,
                                                               json.dumps({"series": "s", "schema": "h"}))).fetchone()
        got = self.db.execute("SELECT DISTINCT trace_id, prev_trace_id FROM h.profsum_agg_op_growth "
                              "ORDER BY trace_id").fetchall()
        self.assertEqual(got, self.db.execute("SELECT trace_id, prev_trace_id FROM h.profsum_series_runs "
                                              "WHERE prev_trace_id IS NOT NULL ORDER BY trace_id").fetchall())
        self.assertEqual(len(got), 2)


class BeforeTheStore(unittest.TestCase):
    """A database made by a profsum without the stored ranks: the import
    brings it to this schema (the table made, the view made again), its
    old pairs are ranked by the view, new imports store theirs, and
    profsum_op_growth_store() fills the rest."""

    def test_upgrade(self):
        with TempDir() as td:
            path = os.path.join(td.path, "old.db")
            db = connect(path)
            traces = [make_trace(td, s) for s in range(4)]
            for i in range(5):
                db.execute("SELECT profsum_import(?, ?, '{\"series\": \"s\"}')", (traces[i % 4], "r%d" % i)).fetchone()
            self.assertEqual(db.execute("SELECT * FROM profsum_op_growth").fetchall(), reference(db))
            # as the profsum before the store left it
            db.execute("DROP VIEW profsum_op_growth")
            db.execute("DROP TABLE profsum_agg_op_growth")
            db.execute("UPDATE profsum_meta SET value = 'older' WHERE key = 'schema_id'")
            db.close()
            db = connect(path)
            try:
                db.execute("SELECT profsum_import(?, 'r5', '{\"series\": \"s\"}')", (traces[1],)).fetchone()
                r5 = db.execute("SELECT trace_id FROM profsum_trace WHERE label = 'r5'").fetchone()[0]
                self.assertEqual(db.execute("SELECT DISTINCT trace_id FROM profsum_agg_op_growth").fetchall(), [(r5,)])
                got = db.execute("SELECT * FROM profsum_op_growth").fetchall()
                self.assertEqual(got, reference(db))
                n = db.execute("SELECT profsum_op_growth_store()").fetchone()[0]
                self.assertEqual(n, len(got))
                self.assertEqual(db.execute("SELECT * FROM profsum_op_growth").fetchall(), got)
            finally:
                db.close()


if __name__ == "__main__":
    unittest.main()
