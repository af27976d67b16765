"""The import's bulk rows (ext/summary/rowbuf.c): the step spans, the step
wall times and the XLA utilization rows are gathered a few thousand at a
time and inserted by one INSERT ... SELECT over the virtual table
profsum_rowsrc, which reads them from a pointer only C can bind.

A capture of 5,000 steps (more than two batches of 2,048 rows) checks
that every row arrives, in order, with the values and the types a bound
insert gave them (INTEGER picoseconds, REAL µs, a whole byte count as
INTEGER and a fractional share as REAL, NULL for the capture's step); and
that the table has nothing to give SQL, nor can a view use it."""
import json
import os
import sqlite3
import unittest

from util import TempDir, connect

N_STEPS = 5000


def capture(path):
    """One device: a Steps line of N_STEPS 10 µs steps and one 4 µs op
    (10^6 FLOPs, 1,024 bytes) 3 µs into each."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Steps"}}]
    for k in range(N_STEPS):
        ev.append({"ph": "X", "pid": 1, "tid": 2, "name": str(k), "ts": 1000 + 10 * k, "dur": 10})
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": "fusion.1", "ts": 1000 + 10 * k + 3, "dur": 4,
                   "args": {"flops": "1000000", "bytes_accessed": "1024"}})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


class BulkRows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        path = os.path.join(cls.tmp.path, "steps.json")
        capture(path)
        cls.db = connect()
        cls.db.execute("SELECT profsum_import(?, 'r')", (path,))

    @classmethod
    def tearDownClass(cls):
        cls.db.close()
        cls.tmp.__exit__(None, None, None)

    def q(self, sql):
        return self.db.execute(sql).fetchall()

    def test_step_spans(self):
        self.assertEqual(self.q("SELECT count(*), sum(dur_ps), min(step), max(step), typeof(start_ps), "
                                "typeof(start_us), min(device) FROM profsum_agg_step_span"),
                         [(N_STEPS, N_STEPS * 10 * 10**6, 0, N_STEPS - 1, "integer", "real", "/device:TPU:0")])
        # in the order written: by step
        self.assertEqual(self.q("SELECT count(*) FROM (SELECT step, lag(step) OVER (ORDER BY rowid) p "
                                "FROM profsum_agg_step_span) WHERE p IS NOT NULL AND step <> p + 1"), [(0,)])
        self.assertEqual(self.q("SELECT start_us, end_us, start_ps FROM profsum_agg_step_span WHERE step = 4999"),
                         [(1000.0 + 10 * 4999, 1000.0 + 10 * 5000, 10 * 4999 * 10**6)])

    def test_step_wall(self):
        self.assertEqual(self.q("SELECT count(*), total(wall_us), total(compute_us), total(idle_us), "
                                "total(collective_us), total(transfer_us), typeof(step), typeof(pid) "
                                "FROM profsum_agg_step_wall"),
                         [(N_STEPS, 10.0 * N_STEPS, 4.0 * N_STEPS, 6.0 * N_STEPS, 0.0, 0.0, "integer", "integer")])
        self.assertEqual(self.q("SELECT count(*) FROM (SELECT step, lag(step) OVER (ORDER BY rowid) p "
                                "FROM profsum_agg_step_wall) WHERE p IS NOT NULL AND step <> p + 1"), [(0,)])

    def test_xla_util(self):
        # the capture's row first (step NULL), then one per step in order
        self.assertEqual(self.q("SELECT count(*), sum(step IS NULL) FROM profsum_agg_xla_util"),
                         [(N_STEPS + 1, 1)])
        self.assertEqual(self.q("SELECT step, busy_us, mfu_flops, bytes_accessed, typeof(bytes_accessed), "
                                "step_source, exact FROM profsum_agg_xla_util ORDER BY rowid LIMIT 1"),
                         [(None, 4.0 * N_STEPS, 1e6 * N_STEPS, 1024 * N_STEPS, "integer", None, 1)])
        self.assertEqual(self.q("SELECT wall_us, busy_us, mfu_flops, bytes_accessed, typeof(bytes_accessed), "
                                "step_source FROM profsum_agg_xla_util WHERE step = 4999"),
                         [(10.0, 4.0, 1e6, 1024, "integer", "device_steps")])
        # a whole byte count is INTEGER, a share of one REAL: never a whole REAL
        self.assertEqual(self.q("SELECT count(*) FROM profsum_agg_xla_util WHERE typeof(bytes_accessed) = 'real' "
                                "AND bytes_accessed = round(bytes_accessed)"), [(0,)])
        self.assertEqual(self.q("SELECT count(*) FROM (SELECT step, lag(step) OVER (ORDER BY rowid) p "
                                "FROM profsum_agg_xla_util WHERE step IS NOT NULL) "
                                "WHERE p IS NOT NULL AND step <> p + 1"), [(0,)])


class FromSql(unittest.TestCase):
    def test_nothing_to_read(self):
        db = connect()
        for sql in ("SELECT * FROM profsum_rowsrc", "SELECT * FROM profsum_rowsrc(1)",
                    "SELECT c0 FROM profsum_rowsrc('x')"):
            with self.subTest(sql=sql):
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    db.execute(sql).fetchall()
                self.assertIn("profsum_rowsrc: profsum_import's own rows", str(cm.exception))
        db.close()

    def test_not_from_a_view(self):
        db = connect()
        db.execute("CREATE VIEW v AS SELECT c0 FROM profsum_rowsrc(1)")
        with self.assertRaises(sqlite3.OperationalError) as cm:
            db.execute("SELECT * FROM v").fetchall()
        self.assertIn("unsafe use of virtual table", str(cm.exception))
        db.close()


if __name__ == "__main__":
    unittest.main()
