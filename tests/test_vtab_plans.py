"""Query plans of the table-valued functions (xBestIndex / xFilter): a
query over a function gives the rows the same query gives over a table
holding the function's rows, whatever join order, argument form or extra
constraint SQLite plans it with."""
import os
import unittest

from util import DbTestCase


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


if __name__ == "__main__":
    unittest.main()
