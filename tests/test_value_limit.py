"""A value longer than SQLite's limit on one value (SQLITE_LIMIT_LENGTH):
the table functions say which file, which entry or plane and which column,
instead of SQLite's bare "string or blob too big".  The limit is lowered on
the connection (Connection.setlimit), so that small files reach it."""
import json
import os
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import connect, TempDir  # noqa: E402
import xspace_writer as xw  # noqa: E402

LIMIT = 1000


@unittest.skipUnless(hasattr(sqlite3.Connection, "setlimit"), "Connection.setlimit needs Python 3.11")
class ValueLimit(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db = connect()
        self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, LIMIT)

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def error(self, sql, *args):
        with self.assertRaises(sqlite3.DataError) as cm:       # SQLITE_TOOBIG
            self.db.execute(sql, args).fetchall()
        return str(cm.exception)

    def test_json_entry_column(self):
        text = json.dumps({"traceEvents": [
            {"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": "short"},
            {"ph": "X", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "name": "n" * 1500},
        ]})
        path = self.td.write("long.json", text)
        off = text.index('{"ph": "X", "pid": 1, "tid": 1, "ts": 2')
        self.assertEqual(
            self.error("SELECT name FROM trace_events(?)", path),
            "trace_events: '%s': entry 1 (byte %d): its name is 1500 bytes, more than SQLite's "
            "limit on one value (%d bytes, SQLITE_LIMIT_LENGTH)" % (path, off, LIMIT))
        # the columns that fit are read as usual
        self.assertEqual(self.db.execute("SELECT idx, length(ph) FROM trace_events(?)", (path,)).fetchall(),
                         [(0, 1), (1, 1)])

    def test_args_of_an_xplane_row(self):
        pb = xw.PlaneBuilder("/device:TPU:0", id=1)
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=[
            pb.event("fusion.1", offset_ps=0, duration_ps=5, stats=[pb.stat("long_name", s="x" * 2000)])])
        data = xw.xspace([pb.build()])
        path = self.td.write("long.xplane.pb", data)
        msg = self.error("SELECT args FROM trace_events(?)", path)
        self.assertRegex(msg, r"^trace_events: '%s': entry 0 \(byte \d+\): its args is 20\d\d bytes, "
                         r"more than SQLite's limit on one value \(1000 bytes, SQLITE_LIMIT_LENGTH\)$"
                         % path.replace(".", r"\."))
        self.assertIn("its long_name is 2000 bytes",
                      self.error("SELECT long_name FROM trace_events(?)", path))

    def test_xplane_plane_and_line_names(self):
        pb = xw.PlaneBuilder("/device:TPU:" + "9" * 1200, id=1)
        pb.line(id=1, name="L" * 1100, timestamp_ns=1000, events=[pb.event("a", offset_ps=0, duration_ps=5)])
        path = self.td.write("names.xplane.pb", xw.xspace([pb.build()]))
        self.assertEqual(
            self.error("SELECT name FROM profsum_xplane_planes(?)", path),
            "profsum_xplane_planes: '%s': plane 0: its name is 1212 bytes, more than SQLite's limit on "
            "one value (%d bytes, SQLITE_LIMIT_LENGTH)" % (path, LIMIT))
        self.assertEqual(
            self.error("SELECT name FROM profsum_xplane_lines(?)", path),
            "profsum_xplane_lines: '%s': plane 0, line 0: its name is 1100 bytes, more than SQLite's "
            "limit on one value (%d bytes, SQLITE_LIMIT_LENGTH)" % (path, LIMIT))
        self.assertEqual(self.db.execute("SELECT num_events FROM profsum_xplane_planes(?)", (path,)).fetchall(),
                         [(1,)])

    def test_import_of_a_name_over_the_limit(self):
        # the import stores the op's name (hot ops, aggregates): it fails
        # whole, saying so, and leaves nothing; the limit is 1 MB here, so
        # that the schema's own statements fit
        self.db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1000000)
        path = self.td.write("name.json", json.dumps({"traceEvents": [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 1, "dur": 5, "name": "f" * 1500000},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 10, "dur": 5, "name": "short"}]}))
        self.assertEqual(
            self.error("SELECT profsum_import(?, 'long')", path),
            "profsum_import: '%s': a value of the trace to store (a name or an argument) is longer than "
            "SQLite's limit on one value (1000000 bytes, SQLITE_LIMIT_LENGTH)" % path)
        # rolled back whole: not even the schema of this new database stays
        self.assertEqual(self.db.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'profsum_trace'")
                         .fetchone(), (0,))


if __name__ == "__main__":
    unittest.main()
