"""Query plans of the table-valued functions (xBestIndex / xFilter): a
query over a function gives the rows the same query gives over a table
holding the function's rows, whatever join order, argument form or extra
constraint SQLite plans it with."""
import json
import os
import unittest

from util import DbTestCase, connect
from xspace_writer import PlaneBuilder, xspace


class FindTracesOptionsFromAJoinTest(DbTestCase):
    """profsum_find_traces(dir, options) with the options read from a
    column of another table: the plan must wait for that column, not list
    the rows of no options and let the options constraint drop them all."""

    def setUp(self):
        super().setUp()
        for s in ("s1", "s2"):
            for h in ("a", "b"):
                self.td.write("plugins/profile/%s/%s.trace.json" % (s, h), "{\"traceEvents\": []}")

    def picked(self, sql, *args):
        return [(o, os.path.relpath(p, self.td.path), k) for o, p, k in self.db.execute(sql, args)]

    def test_options_column_of_an_earlier_table(self):
        self.db.execute("CREATE TEMP TABLE o(opts)")
        self.db.execute("INSERT INTO o VALUES ('{\"hosts\": \"all\"}'), ('{\"session\": \"s2\"}')")
        got = self.picked("SELECT o.opts, f.path, f.picked FROM o, profsum_find_traces(?, o.opts) AS f "
                          "ORDER BY o.rowid, f.path", self.td.path)
        all_hosts, s2 = '{"hosts": "all"}', '{"session": "s2"}'
        self.assertEqual(got, [
            (all_hosts, "plugins/profile/s1/a.trace.json", 1),
            (all_hosts, "plugins/profile/s1/b.trace.json", 1),
            (all_hosts, "plugins/profile/s2/a.trace.json", 0),
            (all_hosts, "plugins/profile/s2/b.trace.json", 0),
            (s2, "plugins/profile/s1/a.trace.json", 0),
            (s2, "plugins/profile/s1/b.trace.json", 0),
            (s2, "plugins/profile/s2/a.trace.json", 1),
            (s2, "plugins/profile/s2/b.trace.json", 0),
        ])
        # the same through the hidden columns, and the plan that reads them
        self.assertEqual(self.picked("SELECT o.opts, f.path, f.picked FROM profsum_find_traces AS f "
                                     "JOIN o ON f.dir = ? AND f.options = o.opts ORDER BY o.rowid, f.path",
                                     self.td.path), got)
        plan = [r[3] for r in self.db.execute("EXPLAIN QUERY PLAN SELECT f.path FROM o, "
                                              "profsum_find_traces(?, o.opts) AS f", (self.td.path,))]
        self.assertEqual(plan, ["SCAN o", "SCAN f VIRTUAL TABLE INDEX 3:"])

    def test_dir_and_options_from_two_tables(self):
        self.db.execute("CREATE TEMP TABLE d(dir)")
        self.db.execute("CREATE TEMP TABLE o(opts)")
        self.db.execute("INSERT INTO d VALUES (?)", (self.td.path,))
        self.db.execute("INSERT INTO o VALUES ('{\"session\": \"s1\", \"hosts\": \"all\"}')")
        got = self.db.execute("SELECT count(*), sum(f.picked) FROM d, o, profsum_find_traces(d.dir, o.opts) AS f"
                              ).fetchall()
        self.assertEqual(got, [(4, 2)])


class SeriesRunsCollationTest(DbTestCase):
    """profsum_series_runs reads one series through the index of
    profsum_trace for `series = ?`; a constraint of another collation, or
    on a number, matches series the index lookup would not find."""

    def setUp(self):
        super().setUp()
        trace = self.td.write("t.json", {"traceEvents": [
            {"ph": "X", "name": "op", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]})
        self.db.close()
        self.db = connect(os.path.join(self.td.path, "runs.db"))
        for i, series in enumerate(["abc", "ABC", "abc", "x", "Abc", "abc "]):
            self.db.execute("SELECT profsum_import(?, ?, ?)", (trace, "run%d" % i, json.dumps({"series": series})))
        self.ids = dict(self.db.execute("SELECT label, trace_id FROM profsum_trace"))

    def runs(self, where):
        return self.db.execute("SELECT series, trace_id, run_index, runs_back, prev_trace_id "
                               "FROM profsum_series_runs WHERE " + where + " ORDER BY trace_id").fetchall()

    def test_nocase_and_rtrim_match_every_spelling(self):
        i = self.ids
        abc = [("abc", i["run0"], 1, 2, None), ("abc", i["run2"], 2, 1, i["run0"])]
        self.assertEqual(self.runs("series = 'abc'"), abc)
        self.assertEqual(self.runs("series = 'ABC' COLLATE NOCASE"), sorted(abc + [
            ("ABC", i["run1"], 1, 1, None), ("Abc", i["run4"], 1, 1, None)], key=lambda r: r[1]))
        self.assertEqual(self.runs("series = 'abc' COLLATE RTRIM"), sorted(abc + [
            ("abc ", i["run5"], 1, 1, None)], key=lambda r: r[1]))
        # each row as the full scan numbers it
        self.db.execute("CREATE TEMP TABLE m AS SELECT * FROM profsum_series_runs")
        for where in ("series = 'ABC' COLLATE NOCASE", "series COLLATE RTRIM IN ('x', 'abc')",
                      "series = 'abc'", "trace_id = %d" % i["run2"]):
            self.assertEqual(self.runs(where), self.db.execute(
                "SELECT * FROM m WHERE " + where + " ORDER BY trace_id").fetchall(), where)

    def test_series_joined_on_a_number(self):
        # r.series = n.v with n.v INTEGER compares as numbers: '5' and '5.0'
        # are both 5, as they are in a table holding the same rows (n read
        # first: r is searched by series for each n.v)
        trace = os.path.join(self.td.path, "t.json")
        for label, series in (("run6", "5"), ("run7", "5.0"), ("run8", "5")):
            self.db.execute("SELECT profsum_import(?, ?, ?)", (trace, label, json.dumps({"series": series})))
        ids = dict(self.db.execute("SELECT label, trace_id FROM profsum_trace"))
        self.db.execute("CREATE TEMP TABLE n(v INTEGER)")
        self.db.execute("INSERT INTO n VALUES (5), (7)")
        self.db.execute("CREATE TEMP TABLE m AS SELECT * FROM profsum_series_runs")
        got = self.db.execute("SELECT n.v, r.series, r.trace_id, r.run_index FROM n CROSS JOIN profsum_series_runs AS r "
                              "ON r.series = n.v ORDER BY r.trace_id").fetchall()
        self.assertEqual(got, [(5, "5", ids["run6"], 1), (5, "5.0", ids["run7"], 1), (5, "5", ids["run8"], 2)])
        self.assertEqual(got, self.db.execute("SELECT n.v, r.series, r.trace_id, r.run_index FROM n CROSS JOIN m AS r "
                                              "ON r.series = n.v ORDER BY r.trace_id").fetchall())
        # a constant compares as text: '5' only, by the index
        self.assertEqual(self.runs("series = 5"), [("5", ids["run6"], 1, 2, None),
                                                   ("5", ids["run8"], 2, 1, ids["run6"])])

    def test_binary_lookup_keeps_the_index_plan(self):
        plan = " ".join(r[3] for r in self.db.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM profsum_series_runs WHERE series = 'abc'"))
        self.assertIn("INDEX 2:series=?", plan)
        plan = " ".join(r[3] for r in self.db.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM profsum_series_runs WHERE series = 'abc' COLLATE NOCASE"))
        self.assertIn("INDEX 0:every series", plan)


class InputColumnConstraintsTest(DbTestCase):
    """The argument of a table function is a constraint on its hidden input
    column; a query can add others on the same column.  Rows are those of
    the argument that meet every constraint: a second value that names no
    file is no error, and values that differ select no row."""

    def setUp(self):
        super().setUp()
        self.trace = self.td.write("t.trace.json", {"traceEvents": [
            {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
            {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 1}, {}]})
        pb = PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=[pb.event("op", offset_ps=0, duration_ps=5)])
        self.xplane = self.td.write("plugins/profile/s/h.xplane.pb", xspace([pb.build()]))
        self.missing = os.path.join(self.td.path, "missing.json")

    def q(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def test_trace_events_and_diagnostics(self):
        t, m = self.trace, self.missing
        names = [("a",), ("b",)]
        self.assertEqual(self.q("SELECT name FROM trace_events(?) WHERE path IN (?, ?)", t, m, t), names)
        self.assertEqual(self.q("SELECT name FROM trace_events(?) WHERE path = ?", t, m), [])
        self.assertEqual(self.q("SELECT name FROM trace_events(?) WHERE path = ?", m, t), [])
        self.assertEqual(self.q("SELECT name FROM trace_events WHERE path = ? AND path = ?", t, t), names)
        self.assertEqual(self.q("SELECT count(*) FROM trace_events(?) WHERE path = ?", t, None), [(0,)])
        # a path of another collation is SQLite's to check on the rows
        self.assertEqual(self.q("SELECT name FROM trace_events(?) WHERE path = upper(?) COLLATE NOCASE", t, t),
                         names)
        # joined on the hidden column: the rows of the argument's file only
        self.db.execute("CREATE TEMP TABLE f(p)")
        self.db.execute("INSERT INTO f VALUES (?), (?), (NULL)", (m, t))
        self.assertEqual(self.q("SELECT f.p = ?, e.name FROM f JOIN trace_events(?) AS e ON e.path = f.p", t, t),
                         [(1, "a"), (1, "b")])
        # the argument from a table, another value from a subquery: the
        # plan reads the file once both are known, not on the second alone
        self.db.execute("CREATE TEMP TABLE g(q)")
        self.db.execute("INSERT INTO g VALUES (?), (?)", (m, t))
        self.db.execute("CREATE TEMP TABLE h(p)")
        self.db.execute("INSERT INTO h VALUES (?)", (t,))
        self.assertEqual(self.q("SELECT e.name FROM h, trace_events(h.p) AS e WHERE e.path IN (SELECT q FROM g)"),
                         names)
        self.db.execute("UPDATE h SET p = ?", (self.xplane,))
        self.assertEqual(self.q("SELECT count(*) FROM h, profsum_xplane_lines(h.p) AS e "
                                "WHERE e.path IN (SELECT q FROM g)"), [(0,)])
        self.assertEqual(self.q("SELECT kind FROM profsum_diagnostics(?) WHERE path IN (?, ?)", t, m, t),
                         [("no_ph",)])
        self.assertEqual(self.q("SELECT kind FROM profsum_diagnostics(?) WHERE path = ?", t, m), [])

    def test_virtual_table_made_with_a_path(self):
        # CREATE VIRTUAL TABLE t USING trace_events(F): every row's path is
        # F; a constraint naming another file selects none, reads nothing
        t, m = self.trace, self.missing
        self.db.execute("CREATE VIRTUAL TABLE temp.tv USING trace_events('%s')" % t.replace("'", "''"))
        self.assertEqual(self.q("SELECT path, name FROM tv"), [(t, "a"), (t, "b")])
        self.assertEqual(self.q("SELECT name FROM tv WHERE path = ?", t), [("a",), ("b",)])
        self.assertEqual(self.q("SELECT name FROM tv WHERE path = ?", m), [])
        self.assertEqual(self.q("SELECT name FROM tv WHERE path = ?", self.xplane), [])
        self.assertEqual(self.q("SELECT name FROM tv WHERE path IN (?, ?)", m, t), [("a",), ("b",)])
        # a table made without one reads the path it is given, as before
        self.db.execute("CREATE VIRTUAL TABLE temp.tn USING trace_events")
        self.assertEqual(self.q("SELECT count(*) FROM tn WHERE path = ?", self.xplane), [(1,)])

    def test_xplane_functions(self):
        x, m = self.xplane, self.missing
        self.assertEqual(self.q("SELECT name FROM profsum_xplane_planes(?) WHERE path IN (?, ?)", x, m, x),
                         [("/device:TPU:0",)])
        self.assertEqual(self.q("SELECT name FROM profsum_xplane_lines(?) WHERE path IN (?, ?)", x, x, m),
                         [("XLA Ops",)])
        self.assertEqual(self.q("SELECT name FROM profsum_xplane_lines(?) WHERE path = ?", x, m), [])
        self.assertEqual(self.q("SELECT count(*) FROM profsum_xplane_planes WHERE path = ? AND path = ?", x, x),
                         [(1,)])

    def test_find_traces(self):
        d, m = os.path.join(self.td.path, "plugins"), self.missing
        one = [(self.xplane, 1)]
        self.assertEqual(self.q("SELECT path, picked FROM profsum_find_traces(?) WHERE dir IN (?, ?)", d, m, d), one)
        self.assertEqual(self.q("SELECT path FROM profsum_find_traces(?) WHERE dir = ?", d, m), [])
        self.assertEqual(self.q("SELECT path FROM profsum_find_traces(?, ?) WHERE options = 'not json'",
                                d, '{"hosts": "all"}'), [])
        self.assertEqual(self.q("SELECT path, picked FROM profsum_find_traces(?, ?) WHERE options IN (?, 'x')",
                                d, '{"hosts": "all"}', '{"hosts": "all"}'), one)


if __name__ == "__main__":
    unittest.main()
