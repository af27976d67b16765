"""A history of many runs: the per-label views read the rows they return.

A database of 300 runs in 3 series (4 real imports of a small generated
trace, the rest copies of their stored rows, as bench/history_bench.py
makes them) with a regression record per run that has a previous run:
profsum_trend and profsum_op_growth take their run order from
profsum_series_runs (a search for one trace or one series, never a window
over every series), the history views find one label's records through
an index, and every view answers as a reference computed here in Python.
"""
import importlib.util
import json
import os
import shutil
import sqlite3
import unittest

from util import ROOT, SO, TempDir, connect, progress_calls

RUNS = 300


def bench_module():
    spec = importlib.util.spec_from_file_location("history_bench", os.path.join(ROOT, "bench", "history_bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_trace(td, seed):
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
          {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Steps"}}]
    for step in range(6):
        t0 = 1000.0 * step
        ev.append({"ph": "X", "pid": 1, "tid": 3, "ts": t0, "dur": 900 + seed * 7 + step, "name": str(step),
                   "args": {"group_id": str(step)}})
        for k in range(5 + seed % 3):
            ev.append({"ph": "X", "pid": 1, "tid": 2, "ts": t0 + 100 * k, "dur": 40 + 9 * k + seed * (k % 2),
                       "name": "fusion.%d" % (k + seed % 2), "args": {"long_name": "fusion.%d = f()" % k}})
    return td.write("t%d.json" % seed, {"traceEvents": ev})


def plan(db, sql, *args):
    return [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql, args)]


def steps(db, sql, *args):
    """Virtual-machine steps (in hundreds) the query takes."""
    return progress_calls(db, sql, args, 100)


class HistoryScale(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        bench = bench_module()
        traces = [make_trace(cls.td, s) for s in range(4)]
        cls.path = os.path.join(cls.td.path, "h.db")
        db = bench.connect(cls.path, SO)
        bench.build(db, traces, RUNS, 3, False)
        # a series of one run, a run without a series, two runs at the same time
        db.execute("UPDATE profsum_trace SET series = 'solo' WHERE label = 'run-00150'")
        db.execute("UPDATE profsum_trace SET series = NULL WHERE label = 'run-00151'")
        db.execute("UPDATE profsum_trace SET imported_at = (SELECT imported_at FROM profsum_trace "
                   "WHERE label = 'run-00158') WHERE label = 'run-00152'")
        cls.n_real, cls.n_copied = bench.add_records(db, 3)
        db.close()
        cls.db = connect(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.db.close()
        cls.td.__exit__()

    def order(self):
        """Reference run order: {trace_id: (series, run_index, runs_back, prev)}."""
        by = {}
        for tid, series, at in self.db.execute("SELECT trace_id, series, imported_at FROM profsum_trace "
                                               "WHERE series IS NOT NULL"):
            by.setdefault(series, []).append((at, tid))
        out = {}
        for series, runs in by.items():
            runs.sort()
            for i, (_, tid) in enumerate(runs):
                out[tid] = (series, i + 1, len(runs) - i, runs[i - 1][1] if i else None)
        return out

    def labels(self):
        """First, second, middle and last run of a series, the one-run series,
        the tied runs, a real import, a run without series."""
        o = self.order()
        lab = dict(self.db.execute("SELECT trace_id, label FROM profsum_trace"))
        s1 = sorted((v[1], k) for k, v in o.items() if v[0] == "s1")
        pick = [s1[0][1], s1[1][1], s1[len(s1) // 2][1], s1[-1][1]]
        return [lab[t] for t in pick] + ["run-00150", "run-00151", "run-00152", "run-00158", "run-00002"]

    def test_series_runs_is_the_run_order(self):
        o = self.order()
        got = self.db.execute("SELECT trace_id, series, run_index, runs_back, prev_trace_id "
                              "FROM profsum_series_runs").fetchall()
        self.assertEqual({r[0]: r[1:] for r in got}, o)
        self.assertEqual(len(got), RUNS - 1)
        for tid in list(o)[:40]:
            self.assertEqual(self.db.execute("SELECT series, run_index, runs_back, prev_trace_id FROM "
                                             "profsum_series_runs WHERE trace_id = ?", (tid,)).fetchall(),
                             [o[tid]])
        s2 = self.db.execute("SELECT trace_id, run_index FROM profsum_series_runs WHERE series = 's2'").fetchall()
        self.assertEqual([r[1] for r in s2], list(range(1, len(s2) + 1)))
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_series_runs WHERE trace_id = "
                                         "(SELECT trace_id FROM profsum_trace WHERE label = 'run-00151')").fetchone(),
                         (0,))
        with self.assertRaises(Exception):
            self.db.execute("DELETE FROM profsum_series_runs")

    def test_trend_matches_reference(self):
        o = self.order()
        stats = {r[0]: r[1:] for r in self.db.execute("SELECT trace_id, count, median, p90 FROM "
                                                       "profsum_sec_step_stats WHERE scope = 'steady'")}
        info = {r[0]: r[1:] for r in self.db.execute("SELECT trace_id, label, imported_at FROM profsum_trace")}

        def pct(a, b):
            return ((a - b) / b) * 100.0 if b is not None and b > 0 and a is not None else None

        want = {}
        for tid, (series, ri, rb, prev) in o.items():
            c, m, p = stats.get(tid, (None, None, None))
            pm, pp = (stats.get(prev, (None, None, None))[1:] if prev else (None, None))
            want[info[tid][0]] = (tid, info[tid][0], series, info[tid][1], ri, rb, c, m, p, prev,
                                  info[prev][0] if prev else None, pm,
                                  m - pm if pm is not None else None, pct(m, pm), pp,
                                  p - pp if pp is not None else None, pct(p, pp))
        every = self.db.execute("SELECT * FROM profsum_trend").fetchall()
        self.assertEqual({r[1]: r for r in every}, want)
        for label in self.labels():
            with self.subTest(label=label):
                got = self.db.execute("SELECT * FROM profsum_trend WHERE label = ?", (label,)).fetchall()
                self.assertEqual(got, [want[label]] if label in want else [])
        s0 = self.db.execute("SELECT * FROM profsum_trend WHERE series = 's0'").fetchall()
        self.assertEqual(s0, [r for r in every if r[2] == "s0"])
        last = self.db.execute("SELECT label FROM profsum_trend WHERE series = 's0' AND runs_back <= 3 "
                               "ORDER BY run_index").fetchall()
        self.assertEqual(last, [(r[1],) for r in sorted(s0, key=lambda r: r[4])[-3:]])

    def growth_reference(self, label):
        o = self.order()
        tid = self.db.execute("SELECT trace_id FROM profsum_trace WHERE label = ?", (label,)).fetchone()[0]
        if tid not in o or o[tid][3] is None:
            return []
        prev = o[tid][3]
        ops = lambda t: dict(self.db.execute("SELECT name, exclusive_duration FROM profsum_agg_op "
                                             "WHERE trace_id = ?", (t,)))
        a, b = ops(tid), ops(prev)
        rows = []
        for name in set(a) | set(b):
            x, y = b.get(name, 0.0), a.get(name, 0.0)
            rows.append((name, x, y, y - x, ((y - x) / x) * 100.0 if x > 0 else None))
        rows.sort(key=lambda r: (-r[3], r[0]))
        return [(r[0], r[1], r[2], r[3], r[4], i + 1, o[tid][2]) for i, r in enumerate(rows)]

    def test_op_growth_matches_reference(self):
        for label in self.labels():
            with self.subTest(label=label):
                got = self.db.execute("SELECT name, before_exclusive, after_exclusive, delta, growth_pct, "
                                      "growth_rank, runs_back FROM profsum_op_growth WHERE label = ? "
                                      "ORDER BY growth_rank", (label,)).fetchall()
                self.assertEqual(got, self.growth_reference(label))
        one = self.db.execute("SELECT label, growth_rank, delta FROM profsum_op_growth "
                              "WHERE series = 's1' AND name = 'fusion.1' ORDER BY trace_id").fetchall()
        every = [(r[0], r[1], r[2]) for r in self.db.execute(
            "SELECT label, growth_rank, delta, series, name FROM profsum_op_growth ORDER BY trace_id")
            if r[3] == "s1" and r[4] == "fusion.1"]
        self.assertEqual(one, every)
        self.assertGreater(len(one), 50)

    def test_per_label_plans_search_not_scan(self):
        for view in ("profsum_trend", "profsum_op_growth"):
            with self.subTest(view=view):
                p = plan(self.db, "SELECT * FROM %s WHERE label = ?" % view, "run-00299")
                self.assertTrue(any("(label=?)" in x for x in p), p)
                self.assertTrue(any("VIRTUAL TABLE INDEX 1:trace_id=?" in x for x in p), p)
                self.assertFalse([x for x in p if "profsum_trace_series" in x and "VIRTUAL" not in x], p)
                self.assertFalse([x for x in p if x.startswith("MATERIALIZE")], p)
                p = plan(self.db, "SELECT * FROM %s WHERE series = ?" % view, "s1")
                self.assertTrue(any("VIRTUAL TABLE INDEX 2:series=?" in x for x in p), p)
        p = plan(self.db, "SELECT * FROM profsum_history WHERE label = ?", "run-00299")
        self.assertTrue(any("profsum_history_record_jlabel" in x for x in p), p)
        p = plan(self.db, "SELECT * FROM profsum_history WHERE series = ?", "s1")
        self.assertTrue(any("profsum_history_record_series (series=?)" in x for x in p), p)
        p = plan(self.db, "SELECT * FROM profsum_compare_ops WHERE label = ?", "run-00299")
        self.assertTrue(any("profsum_history_record_label (label=?)" in x for x in p), p)

    def test_one_label_costs_a_fraction_of_the_history(self):
        for view, every in (("profsum_history_summary", "SELECT * FROM profsum_history_summary WHERE scope = 'all'"),
                            ("profsum_compare_ops", "SELECT * FROM profsum_compare_ops"),
                            ("profsum_history", "SELECT * FROM profsum_history"),
                            ("profsum_op_growth", "SELECT * FROM profsum_op_growth"),
                            ("profsum_trend", "SELECT * FROM profsum_trend")):
            with self.subTest(view=view):
                one = steps(self.db, "SELECT * FROM %s WHERE label = ?" % view, "run-00297")
                self.assertLess(one * 20, steps(self.db, every), view)

    def test_history_views_per_label_as_the_whole_view(self):
        n = self.db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0]
        self.assertEqual(n, self.n_real + self.n_copied)
        self.assertGreater(n, 250)
        for view in ("profsum_history", "profsum_history_summary", "profsum_compare_ops"):
            every = self.db.execute("SELECT * FROM %s" % view).fetchall()
            col = [r[1] for r in self.db.execute("SELECT * FROM pragma_table_info(?)", (view,))].index("label")
            for label in ("run-00297", "run-00010", "run-00002", "nothing"):
                with self.subTest(view=view, label=label):
                    self.assertEqual(self.db.execute("SELECT * FROM %s WHERE label = ?" % view, (label,)).fetchall(),
                                     [r for r in every if r[col] == label])
        s = self.db.execute("SELECT num_records, num_pass + num_warn + num_fail, latest_record_id FROM "
                            "profsum_history_summary WHERE label = 'run-00297'").fetchall()
        rid = self.db.execute("SELECT record_id FROM profsum_history_record WHERE label = 'run-00297'").fetchone()[0]
        self.assertEqual(s, [(1, 1, rid)])

    def test_attached_under_another_name(self):
        copy = os.path.join(self.td.path, "copy.db")
        shutil.copyfile(self.path, copy)
        db = connect()
        try:
            db.execute("ATTACH ? AS other", (copy,))
            self.assertEqual(db.execute("SELECT * FROM other.profsum_trend ORDER BY trace_id").fetchall(),
                             self.db.execute("SELECT * FROM profsum_trend ORDER BY trace_id").fetchall())
            # not eponymous: the connection's main database has no such table
            with self.assertRaises(sqlite3.OperationalError):
                db.execute("SELECT count(*) FROM main.profsum_series_runs").fetchall()
        finally:
            db.close()


OOM_SQL = os.path.join(ROOT, "build", "asan", "oom_sql")


@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds it)")
class OutOfMemory(unittest.TestCase):
    """Every 3rd allocation of the run order's queries (profsum_series_runs
    by trace id, by series, all of it), of the imports that store the op
    growth ranks, of profsum_op_growth_store and of profsum_track failed in turn
    (tests/oom_sql.c, ASan): each run is an error or the reference result,
    and nothing leaks."""

    def test_run_order_fails_cleanly(self):
        import subprocess
        with TempDir() as td:
            p = make_trace(td, 1)
            imp = "SELECT profsum_import('%s', '%%s', '{\"series\": \"s\"}') > 0" % p
            calls = [imp % "a", imp % "b", imp % "c",
                     "SELECT group_concat(label || ':' || run_index || ':' || runs_back || ':' || "
                     "coalesce(prev_label, '-'), ',') FROM profsum_trend",
                     "SELECT group_concat(label || ':' || run_index, ',') FROM profsum_trend WHERE label = 'c'",
                     "SELECT group_concat(label || ':' || run_index, ',') FROM profsum_trend WHERE series = 's'",
                     "SELECT count(*) FROM profsum_op_growth WHERE label = 'c'",
                     "SELECT profsum_op_growth_store('c') > 0",
                     "SELECT group_concat(label || ':' || growth_rank, ',') FROM profsum_op_growth "
                     "WHERE series = 's' AND name = 'fusion.1'",
                     "SELECT length(profsum_track('a', 'c', 't')) > 0",
                     "SELECT num_records > 0 FROM profsum_history_summary WHERE label = 't'"]
            env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
                       UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
            env.pop("LD_PRELOAD", None)
            r = subprocess.run([OOM_SQL, "-s", "3"] + calls, env=env, capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("%d passed, 0 failed" % len(calls), r.stdout)


if __name__ == "__main__":
    unittest.main()
