"""profsum_trim: a smaller trace with only the selected events and their
metadata, readable again."""
import gzip
import json
import os
import sqlite3
import unittest

import fixtures
from util import connect, TempDir


class Trim(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db = connect()
        self.src = self.td.write("f9.json.gz", json.dumps(fixtures.f9()), gz=True)

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def test_round_trip(self):
        dest = os.path.join(self.td.path, "out", "gpu-stream.json.gz")
        os.makedirs(os.path.dirname(dest))
        n = self.db.execute("SELECT profsum_trim(?, ?, 'pid = 1 AND tid = 11')", (self.src, dest)).fetchone()[0]
        # 2 events of stream 11, plus the process_name and both thread_names of pid 1
        self.assertEqual(n, 5)
        doc = json.loads(gzip.decompress(open(dest, "rb").read()))
        self.assertEqual(doc["displayTimeUnit"], "ns")
        self.assertEqual([e["name"] for e in doc["traceEvents"] if e["ph"] == "X"],
                         ["ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_ReduceScatter_RING_LL"])
        rows = self.db.execute("SELECT name, thread_name, dur FROM trace_events(?) WHERE ph='X'", (dest,)).fetchall()
        self.assertEqual(rows, [("ncclDevKernel_AllGather_RING_LL", "Stream #1(nccl)", 50000),
                                ("ncclDevKernel_ReduceScatter_RING_LL", "Stream #1(nccl)", 40000)])
        self.assertEqual(os.listdir(os.path.dirname(dest)), ["gpu-stream.json.gz"])   # no temp file left
        # the trimmed trace imports and summarizes
        tid = self.db.execute("SELECT profsum_import(?, 'trimmed')", (dest,)).fetchone()[0]
        self.assertEqual(self.db.execute("SELECT num_complete_events FROM profsum_trace WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 2)

    def test_all_and_time_window(self):
        dest = os.path.join(self.td.path, "all.json.gz")
        n = self.db.execute("SELECT profsum_trim(?, ?)", (self.src, dest)).fetchone()[0]
        self.assertEqual(n, 12)
        dest2 = os.path.join(self.td.path, "window.json.gz")
        n2 = self.db.execute("SELECT profsum_trim(?, ?, 'ph = ''X'' AND ts >= 200000 AND ts < 500000')",
                             (self.src, dest2)).fetchone()[0]
        names = [r[0] for r in self.db.execute("SELECT name FROM trace_events(?) WHERE ph='X'", (dest2,))]
        self.assertEqual(names, ["ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_ReduceScatter_RING_LL"])
        self.assertEqual(n2, 2 + 3)   # the two events + the 3 M entries of their process (pid 1)

    def test_display_time_unit_written_as_json(self):
        # the unit is decoded text: written back escaped, the output parses
        src = self.td.write("u.json", '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}],'
                            '"displayTimeUnit":"ns\\"}, \\"x\\":\\"y"}')
        dest = os.path.join(self.td.path, "u.json.gz")
        self.assertEqual(self.db.execute("SELECT profsum_trim(?, ?)", (src, dest)).fetchone()[0], 1)
        doc = json.loads(gzip.decompress(open(dest, "rb").read()))
        self.assertEqual(doc["displayTimeUnit"], 'ns"}, "x":"y')
        self.assertEqual(sorted(doc), ["displayTimeUnit", "traceEvents"])

    def test_output_mode_follows_the_umask(self):
        for um, mode in ((0o022, 0o644), (0o027, 0o640)):
            dest = os.path.join(self.td.path, "m%o.json.gz" % um)
            old = os.umask(um)
            try:
                self.db.execute("SELECT profsum_trim(?, ?)", (self.src, dest)).fetchone()
            finally:
                os.umask(old)
            self.assertEqual(os.stat(dest).st_mode & 0o777, mode)

    def test_pipe_source_refused(self):
        fifo = os.path.join(self.td.path, "pipe")
        os.mkfifo(fifo)
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (fifo, os.path.join(self.td.path, "p.json.gz"))).fetchone()
        self.assertIn("profsum_trim: '%s' is not a regular file (a pipe?)" % fifo, str(cm.exception))

    def test_errors_leave_nothing(self):
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?, 'no_such_column = 1')",
                            (self.src, os.path.join(self.td.path, "x.json.gz"))).fetchone()
        self.assertIn("profsum_trim: bad WHERE clause", str(cm.exception))
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (os.path.join(self.td.path, "none.json"),
                                                          os.path.join(self.td.path, "y.json.gz"))).fetchone()
        self.assertRegex(str(cm.exception), r"^profsum_trim: trace_events: '.*none.json': cannot open")
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (self.src, self.td.path)).fetchone()
        self.assertIn("is a directory", str(cm.exception))
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (self.src, os.path.join(self.td.path, "nodir", "x.gz"))).fetchone()
        self.assertIn("cannot create a file there", str(cm.exception))
        self.assertEqual(sorted(os.listdir(self.td.path)), ["f9.json.gz"])

    def test_directonly(self):
        self.db.execute("CREATE VIEW v AS SELECT profsum_trim('a', 'b')")
        with self.assertRaises(sqlite3.Error):
            self.db.execute("SELECT * FROM v").fetchall()


if __name__ == "__main__":
    unittest.main()
