"""profsum_step_wall: each instant of a step counted once (collective over
transfer over compute, idle where no device op runs), and the host_wait KPI
built on it."""
import os
import unittest

import fixtures
from util import DbTestCase

META = fixtures.TPU_META


def trace(steps, ops, warmup=None):
    """A TPU trace with Steps (name, ts, dur) and XLA Ops (name, ts, dur)."""
    ev = list(META)
    for name, ts, dur in steps:
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": name, "ts": ts, "dur": dur})
    for name, ts, dur in ops:
        ev.append({"ph": "X", "pid": 1, "tid": 2, "name": name, "ts": ts, "dur": dur})
    return fixtures.doc(ev)


# step 0 [0,100): compute 0-30 under an all-reduce 20-50; idle 50-60; infeed
# 60-80 over a fusion 70-90; idle 90-100.
#   collective 30 (20-50), transfer 20 (60-80), compute 20+10 (0-20, 80-90),
#   idle 20 (50-60, 90-100)
# step 1 [100,200): one fusion 100-175, idle 25.
KNOWN = trace([("0", 0, 100), ("1", 100, 100)],
              [("fusion.1", 0, 30), ("all-reduce.1", 20, 30), ("infeed", 60, 20),
               ("fusion.2", 70, 20), ("fusion.3", 100, 75)])


class StepWall(DbTestCase):
    def load(self, doc, opts='{"warmup_steps": 0}'):
        p = self.td.write("t.json", doc)
        self.db.execute("SELECT profsum_import(?, 't', ?)", (p, opts))

    def rows(self):
        return self.db.execute(
            "SELECT step, device, wall_us, compute_us, collective_us, transfer_us, idle_us "
            "FROM profsum_step_wall ORDER BY step").fetchall()

    def test_known_split(self):
        self.load(KNOWN)
        self.assertEqual(self.rows(), [
            (0, "/device:TPU:0", 100.0, 30.0, 30.0, 20.0, 20.0),
            (1, "/device:TPU:0", 100.0, 75.0, 0.0, 0.0, 25.0)])

    def test_parts_sum_to_wall(self):
        self.load(KNOWN)
        for r in self.rows():
            self.assertAlmostEqual(sum(r[3:]), r[2], places=9)

    def test_host_wait_kpi(self):
        self.load(KNOWN)
        v, band = self.db.execute(
            "SELECT value, band FROM profsum_kpis WHERE kpi='host_wait'").fetchone()
        self.assertAlmostEqual(v, 45.0 / 200.0)
        self.assertEqual(band, "bad")

    def test_host_wait_steady_steps_only(self):
        self.load(KNOWN, '{"warmup_steps": 1}')
        v, band = self.db.execute(
            "SELECT value, band FROM profsum_kpis WHERE kpi='host_wait'").fetchone()
        self.assertAlmostEqual(v, 0.25)
        self.assertEqual(band, "bad")
        self.assertEqual(self.db.execute(
            "SELECT group_concat(is_warmup) FROM profsum_step_wall").fetchone()[0], "1,0")

    def test_good_band(self):
        self.load(trace([("0", 0, 100)], [("fusion.1", 0, 95)]))
        self.assertEqual(self.db.execute(
            "SELECT band FROM profsum_kpis WHERE kpi='host_wait'").fetchone()[0], "good")

    def test_no_steps_unavailable(self):
        self.load(fixtures.ops_only([{"name": "fusion.1", "ts": 0, "dur": 10}]))
        self.assertEqual(self.rows(), [])
        self.assertEqual(self.db.execute(
            "SELECT value, band FROM profsum_kpis WHERE kpi='host_wait'").fetchone(), (None, "unavailable"))

    def test_abutting_and_nested_ops(self):
        # nested ops and abutting ops leave no hole and count nothing twice
        self.load(trace([("0", 0, 100)],
                        [("while.1", 0, 50), ("fusion.1", 10, 10), ("fusion.2", 50, 50)]))
        self.assertEqual(self.rows(), [(0, "/device:TPU:0", 100.0, 100.0, 0.0, 0.0, 0.0)])

    def test_host_train_steps_measure_every_device(self):
        ev = [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
            {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
            {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:GPU:1"}},
            {"ph": "M", "pid": 2, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
            {"ph": "M", "pid": 9, "name": "process_name", "args": {"name": "/host:CPU"}},
            {"ph": "M", "pid": 9, "tid": 1, "name": "thread_name", "args": {"name": "main"}},
            {"ph": "X", "pid": 9, "tid": 1, "name": "train", "ts": 0, "dur": 100, "args": {"step_num": 3}},
            {"ph": "X", "pid": 1, "tid": 7, "name": "gemm", "ts": 10, "dur": 40},
            {"ph": "X", "pid": 2, "tid": 7, "name": "MemcpyH2D", "ts": 0, "dur": 10},
            {"ph": "X", "pid": 2, "tid": 7, "name": "nccl_all_reduce", "ts": 50, "dur": 60},
        ]
        self.load(fixtures.doc(ev))
        self.assertEqual(self.db.execute(
            "SELECT step, device, wall_us, compute_us, collective_us, transfer_us, idle_us "
            "FROM profsum_step_wall ORDER BY device").fetchall(), [
            (3, "/device:GPU:0", 100.0, 40.0, 0.0, 0.0, 60.0),
            (3, "/device:GPU:1", 100.0, 0.0, 50.0, 10.0, 40.0)])

    def test_many_steps_beside_the_aggregation(self):
        # 4,000 steps of KNOWN's two patterns: 24,000 complete events, past
        # the size at which the covers run on a thread of their own beside
        # the aggregation; the one-thread import gives the same rows
        steps, ops = [], []
        for k in range(2000):
            t = 200 * k
            steps += [(str(2 * k), t, 100), (str(2 * k + 1), t + 100, 100)]
            ops += [("fusion.1", t, 30), ("all-reduce.1", t + 20, 30), ("infeed", t + 60, 20),
                    ("fusion.2", t + 70, 20), ("fusion.3", t + 100, 75)]
        doc = trace(steps, ops)
        want = [(s, "/device:TPU:0", 100.0, 30.0, 30.0, 20.0, 20.0) if s % 2 == 0 else
                (s, "/device:TPU:0", 100.0, 75.0, 0.0, 0.0, 25.0) for s in range(4000)]
        old = os.environ.get("PROFSUM_THREADS")
        try:
            for threads in (None, "0"):
                if threads is None:
                    os.environ.pop("PROFSUM_THREADS", None)
                else:
                    os.environ["PROFSUM_THREADS"] = threads
                label = "threads-%s" % threads
                p = self.td.write("many.json", doc)
                self.db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 0}')", (p, label))
                got = self.db.execute(
                    "SELECT step, device, wall_us, compute_us, collective_us, transfer_us, idle_us "
                    "FROM profsum_step_wall WHERE label=? ORDER BY step", (label,)).fetchall()
                self.assertEqual(got, want, threads)
        finally:
            if old is None:
                os.environ.pop("PROFSUM_THREADS", None)
            else:
                os.environ["PROFSUM_THREADS"] = old


if __name__ == "__main__":
    unittest.main()
