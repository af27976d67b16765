"""The import's bulk rows (ext/summary/rowbuf.c): rows are gathered 512
at a time (fewer when their copied texts pass 1 MiB) and inserted by one
INSERT ... SELECT over the virtual table profsum_rowsrc, which reads them
from a pointer only C can bind.

A capture of 5,000 steps (ten batches) checks that every step span, step
wall time and XLA utilization row arrives, in order, with the values and
the types a bound insert gave them (INTEGER picoseconds, REAL µs, a whole
byte count as INTEGER and a fractional share as REAL, NULL for the
capture's step).  A capture of 1,300 distinct op names, first seen in no
order, checks the per-name tables, which are written in the order of
their keys: every op, gap, gap context and XLA op row, and region paths of
3 KB each, whose copies fill a batch's text before its rows do.  And the
table has nothing to give SQL, nor can a view use it."""
import json
import os
import random
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


class Imported(unittest.TestCase):
    """One capture, written by cls.write(path) (its return value kept in
    cls.made), imported into a connection of its own."""
    FILE = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        path = os.path.join(cls.tmp.path, cls.FILE)
        cls.made = cls.write(path)
        cls.db = connect()
        cls.db.execute("SELECT profsum_import(?, 'r')", (path,))

    @classmethod
    def tearDownClass(cls):
        cls.db.close()
        cls.tmp.__exit__(None, None, None)

    def q(self, sql):
        return self.db.execute(sql).fetchall()


class BulkRows(Imported):
    FILE = "steps.json"
    write = staticmethod(capture)

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


N_NAMES = 1300
N_BRANCH = 600
PAD = "x" * 3000


def names_capture(path):
    """One device-op line: N_NAMES ops of 3 µs, 1 µs apart, their names
    first seen in a shuffled order; op k under tf_op
    root/branch<k % 600>_<3,000 x>/leaf<k % 2>."""
    rng = random.Random(7)
    order = ["op.%04d" % i for i in range(N_NAMES)]
    rng.shuffle(order)
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}}]
    for k, name in enumerate(order):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": name, "ts": 1000 + 4 * k, "dur": 3,
                   "args": {"tf_op": "root/branch%03d_%s/leaf%d" % (k % N_BRANCH, PAD, k % 2)}})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)
    return order


class PerNameRows(Imported):
    FILE = "names.json"
    write = staticmethod(names_capture)

    @property
    def order(self):
        return self.made

    def test_ops(self):
        rows = self.q("SELECT name, count, total_duration, exclusive_duration, typeof(count), "
                      "typeof(total_duration), tf_op_path FROM profsum_agg_op ORDER BY name")
        self.assertEqual([r[0] for r in rows], sorted(self.order))
        k_of = {name: k for k, name in enumerate(self.order)}
        for name, count, total, excl, tc, tt, tf in rows:
            k = k_of[name]
            self.assertEqual((count, total, excl, tc, tt), (1, 3.0, 3.0, "integer", "real"), name)
            self.assertEqual(tf, "root/branch%03d_%s/leaf%d" % (k % N_BRANCH, PAD, k % 2), name)
        self.assertEqual(self.q("SELECT count(*) FROM profsum_agg_xla_op WHERE count = 1 AND time_us = 3.0"),
                         [(N_NAMES,)])

    def test_gaps(self):
        # every op but the first follows a 1 µs gap, which it is the payload of
        got = self.q("SELECT name, marker_op, count, total_gap_duration, max_gap_duration "
                     "FROM profsum_agg_gap ORDER BY name")
        self.assertEqual(got, [(name, name, 1, 1.0, 1.0) for name in sorted(self.order[1:])])
        got = self.q("SELECT op_name, region_path, count, total_gap_duration FROM profsum_agg_gap_context "
                     "ORDER BY op_name")
        k_of = {name: k for k, name in enumerate(self.order)}
        self.assertEqual(len(got), N_NAMES - 1)
        for name, region, count, total in got:
            k = k_of[name]
            self.assertEqual((region, count, total),
                             ("root=>branch%03d_%s=>leaf%d" % (k % N_BRANCH, PAD, k % 2), 1, 1.0), name)

    def test_regions(self):
        # 600 branches, each with one leaf (k % 600 fixes k % 2): the
        # branch and its leaf are one region, of 2 or 3 ops
        want = {"root": (1, N_NAMES)}
        for br in range(N_BRANCH):
            n = len(range(br, N_NAMES, N_BRANCH))
            want["root=>branch%03d_%s=>leaf%d" % (br, PAD, br % 2)] = (3, n)
        got = {p: (d, c) for p, d, c in self.q("SELECT path, depth, count FROM profsum_agg_region")}
        self.assertEqual(got, want)
        self.assertEqual(self.q("SELECT DISTINCT typeof(path), typeof(inclusive_duration) FROM profsum_agg_region"),
                         [("text", "real")])


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
