"""profsum_step_wall over the spans of a step: one step number given by
several events is one row measured over their union (trace JSON, XPlane,
host 'train' events nested or on two threads); a device with steps of its
own and no op is idle through them; overlapping steps of different numbers
each count their own instants in their rows, and the sums the KPIs, the
advice, the report and the comparison read count each instant once
(docs/advice.md, "Step wall time")."""
import unittest

import fixtures
from util import DbTestCase

US = 10 ** 6          # ps per µs

WALL = ("SELECT step, device, start_us, wall_us, compute_us, collective_us, transfer_us, idle_us "
        "FROM profsum_step_wall WHERE trace_id = ? ORDER BY step, device")


tpu = fixtures.tpu_doc


def gpu(trains, ops):
    """A GPU trace: /device:GPU:0 with a Stream line (ops: name, ts, dur)
    and a /host:CPU whose trains (tid, ts, dur, step_num) are 'train'
    events."""
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
          {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
          {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
          {"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "main"}},
          {"ph": "M", "pid": 2, "tid": 5, "name": "thread_name", "args": {"name": "worker"}}]
    ev += [{"ph": "X", "pid": 2, "tid": tid, "name": "train", "ts": ts, "dur": d, "args": {"step_num": k}}
           for tid, ts, d, k in trains]
    ev += [{"ph": "X", "pid": 1, "tid": 7, "name": n, "ts": ts, "dur": d} for n, ts, d in ops]
    return fixtures.doc(ev)


class StepWallSpans(DbTestCase):
    def load(self, name, doc):
        p = self.td.write(name, doc)
        return self.db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 0}')", (p, name)).fetchone()[0]

    def wall(self, tid):
        return self.db.execute(WALL, (tid,)).fetchall()

    def host_wait(self, tid):
        return self.db.execute("SELECT value FROM profsum_kpis WHERE trace_id = ? AND kpi = 'host_wait'",
                               (tid,)).fetchone()[0]

    def stakes(self, tid):
        return dict(self.db.execute("SELECT advice_id, time_at_stake_us FROM profsum_advice WHERE trace_id = ?",
                                    (tid,)).fetchall())

    def util_steps(self, tid):
        return self.db.execute("SELECT device, step, wall_us, busy_us FROM profsum_utilization "
                               "WHERE trace_id = ? AND step IS NOT NULL ORDER BY device, step",
                               (tid,)).fetchall()

    def check_one_op_in_union(self, tid, dev, wall, busy):
        """Step 6 of dev: its union `wall` µs from 0, one compute op busy
        `busy` µs; host_wait, the stakes and profsum_utilization agree."""
        self.assertEqual(self.wall(tid), [(6, dev, 0.0, wall, busy, 0.0, 0.0, wall - busy)])
        self.assertEqual(self.host_wait(tid), (wall - busy) / wall)
        stakes = self.stakes(tid)
        self.assertEqual(stakes["one_op_dominating"], busy)
        self.assertEqual(stakes["host_wait"], wall - busy)
        self.assertEqual(self.util_steps(tid), [(dev, 6, wall, busy)])

    def test_json_steps_line_gives_a_step_twice(self):
        # step 6 as [0,1000) and [500,1500), one op [0,600): the union is
        # 1500 µs, idle 900 µs (not 2000 µs, 700 µs compute, 1300 idle)
        tid = self.load("dup.json", tpu([("6", 0, 1000), ("6", 500, 1000)], [("fusion.1", 0, 600)]))
        self.check_one_op_in_union(tid, "/device:TPU:0", 1500.0, 600.0)

    def test_json_step_twice_with_a_gap(self):
        # step 6 as [0,1000) and [2000,3000): one row over both pieces
        # (2000 µs), ops in each; starts at the earlier event's start
        tid = self.load("gap.json", tpu([("6", 2000, 1000), ("6", 0, 1000)],
                                        [("fusion.1", 0, 600), ("all-reduce.1", 2500, 200)]))
        self.assertEqual(self.wall(tid), [(6, "/device:TPU:0", 0.0, 2000.0, 600.0, 200.0, 0.0, 1200.0)])
        self.assertEqual(self.host_wait(tid), 0.6)
        # profsum_utilization measures the same union (not the 3000 µs from
        # the first start to the last end)
        self.assertEqual(self.util_steps(tid), [("/device:TPU:0", 6, 2000.0, 800.0)])

    def test_gpu_train_step_twice_with_a_gap(self):
        # train step 6 as [0,1000) on one host thread and [2000,2500) on
        # another; ops in both pieces and one in the gap (not counted)
        tid = self.load("gpugap.json", gpu([(1, 0, 1000, 6), (5, 2000, 500, 6)],
                                           [("gemm", 100, 300), ("gemm", 1200, 500), ("gemm", 2100, 100)]))
        self.assertEqual(self.wall(tid), [(6, "/device:GPU:0", 0.0, 1500.0, 400.0, 0.0, 0.0, 1100.0)])
        self.assertEqual(self.util_steps(tid), [("/device:GPU:0", 6, 1500.0, 400.0)])

    def test_xplane_steps_line_gives_a_step_twice(self):
        import xspace_writer as W
        d = W.PlaneBuilder("/device:TPU:0", id=1)
        d.line(id=1, name="Steps", timestamp_ns=0, events=[
            d.event("6", offset_ps=0, duration_ps=1000 * US),
            d.event("6", offset_ps=500 * US, duration_ps=1000 * US)])
        d.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            d.event("fusion.1", offset_ps=0, duration_ps=600 * US)])
        p = self.td.write("dup.xplane.pb", W.xspace([d.build()], hostnames=["h"]))
        tid = self.db.execute("SELECT profsum_import(?, 'x', '{\"warmup_steps\": 0}')", (p,)).fetchone()[0]
        self.check_one_op_in_union(tid, "/device:TPU:0", 1500.0, 600.0)

    def test_gpu_train_step_nested_on_one_thread(self):
        # train step 6 [0,1000) with another step 6 [200,700) inside it
        tid = self.load("nested.json", gpu([(1, 0, 1000, 6), (1, 200, 500, 6)], [("gemm", 0, 600)]))
        self.check_one_op_in_union(tid, "/device:GPU:0", 1000.0, 600.0)

    def test_gpu_train_step_on_two_threads(self):
        # the same train step 6 [0,1000) on two host threads
        tid = self.load("two.json", gpu([(1, 0, 1000, 6), (5, 0, 1000, 6)], [("gemm", 0, 600)]))
        self.check_one_op_in_union(tid, "/device:GPU:0", 1000.0, 600.0)

    def test_device_with_steps_and_no_op_is_idle(self):
        # TPU:0 and TPU:1 both have steps 0 and 1 (1000 µs each); only TPU:0
        # runs ops (900 µs a step): host_wait = (200 + 2000) / 4000
        ev = []
        for pid, dev in ((1, "/device:TPU:0"), (3, "/device:TPU:1")):
            ev += [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": dev}},
                   {"ph": "M", "pid": pid, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}},
                   {"ph": "M", "pid": pid, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
            ev += [{"ph": "X", "pid": pid, "tid": 1, "name": str(k), "ts": 1000 * k, "dur": 1000}
                   for k in range(2)]
        ev += [{"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 1000 * k, "dur": 900} for k in range(2)]
        tid = self.load("idle.json", fixtures.doc(ev))
        self.assertEqual(self.wall(tid), [
            (0, "/device:TPU:0", 0.0, 1000.0, 900.0, 0.0, 0.0, 100.0),
            (0, "/device:TPU:1", 0.0, 1000.0, 0.0, 0.0, 0.0, 1000.0),
            (1, "/device:TPU:0", 1000.0, 1000.0, 900.0, 0.0, 0.0, 100.0),
            (1, "/device:TPU:1", 1000.0, 1000.0, 0.0, 0.0, 0.0, 1000.0)])
        self.assertEqual(self.host_wait(tid), 0.55)
        self.assertEqual(self.stakes(tid)["host_wait"], 2200.0)

    def test_who_is_measured(self):
        # TPU:0: Steps and ops; TPU:1: ops, no Steps line (the host's train
        # step 3 measures it, as profsum_utilization's host_steps rows);
        # TPU:2: a line that is neither (no rows)
        ev = list(fixtures.TPU_META)
        ev += [{"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/device:TPU:1"}},
               {"ph": "M", "pid": 3, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
               {"ph": "M", "pid": 4, "name": "process_name", "args": {"name": "/device:TPU:2"}},
               {"ph": "M", "pid": 4, "tid": 3, "name": "thread_name", "args": {"name": "XLA Modules"}},
               {"ph": "X", "pid": 1, "tid": 1, "name": "0", "ts": 0, "dur": 1000},
               {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 0, "dur": 400},
               {"ph": "X", "pid": 3, "tid": 2, "name": "fusion.1", "ts": 100, "dur": 300},
               {"ph": "X", "pid": 4, "tid": 3, "name": "jit_step", "ts": 0, "dur": 1000},
               {"ph": "X", "pid": 2, "tid": 1, "name": "train", "ts": 0, "dur": 800, "args": {"step_num": 3}}]
        tid = self.load("who.json", fixtures.doc(ev))
        self.assertEqual(self.wall(tid), [
            (0, "/device:TPU:0", 0.0, 1000.0, 400.0, 0.0, 0.0, 600.0),
            (3, "/device:TPU:1", 0.0, 800.0, 300.0, 0.0, 0.0, 500.0)])
        self.assertEqual(self.db.execute(
            "SELECT device, step, wall_us, busy_us, step_source FROM profsum_utilization "
            "WHERE trace_id = ? AND step IS NOT NULL ORDER BY device", (tid,)).fetchall(), [
            ("/device:TPU:0", 0, 1000.0, 400.0, "device_steps"),
            ("/device:TPU:1", 3, 800.0, 300.0, "host_steps")])

    def test_steps_without_any_device_op_line(self):
        # a Steps line and no device-op line anywhere: no rows
        tid = self.load("steps.json", fixtures.doc([fixtures.TPU_META[0], fixtures.TPU_META[1],
                                                    {"ph": "X", "pid": 1, "tid": 1, "name": "0",
                                                     "ts": 0, "dur": 1000}]))
        self.assertEqual(self.wall(tid), [])
        self.assertIsNone(self.host_wait(tid))

    def overlap(self, tid):
        """The facts step_overlap_* of trace tid, by part."""
        return dict(self.db.execute(
            "SELECT substr(name, 14), value FROM profsum_agg_fact "
            "WHERE trace_id = ? AND name LIKE 'step\\_overlap\\_%' ESCAPE '\\'", (tid,)).fetchall())

    def test_overlapping_steps_count_their_own_instants(self):
        # steps 0 [0,1000) and 1 [500,1500) under one all-reduce [0,1500):
        # each row is its step's, but the sums the KPIs and the advice read
        # count [500,1000) once: 1500 µs at stake, the span the steps cover
        tid = self.load("ov.json", tpu([("0", 0, 1000), ("1", 500, 1000)], [("all-reduce.1", 0, 1500)]))
        self.assertEqual(self.wall(tid), [
            (0, "/device:TPU:0", 0.0, 1000.0, 0.0, 1000.0, 0.0, 0.0),
            (1, "/device:TPU:0", 500.0, 1000.0, 0.0, 1000.0, 0.0, 0.0)])
        self.assertEqual(self.overlap(tid), {"wall": 500.0, "compute": 0.0, "collective": 500.0,
                                             "transfer": 0.0, "idle": 0.0})
        self.assertEqual(self.db.execute(
            "SELECT time_at_stake_us, share_of_step FROM profsum_advice "
            "WHERE trace_id = ? AND advice_id = 'collective_bound'", (tid,)).fetchone(), (1500.0, 1.0))
        self.assertEqual(self.host_wait(tid), 0.0)

    def test_overlap_of_every_part_counted_once(self):
        # steps 0 [0,1000) and 1 [500,1500); an all-reduce [0,300) in step 0
        # only, a fusion [600,800) in both: the rows add 2000 µs of wall time
        # (400 compute, 300 collective, 1300 idle), the steps cover 1500
        # (200, 300, 1000); the KPI, the advice, the report and the
        # comparison all read the 1500
        tid = self.load("ov2.json", tpu([("0", 0, 1000), ("1", 500, 1000)],
                                        [("all-reduce.1", 0, 300), ("fusion.1", 600, 200)]))
        self.assertEqual(self.wall(tid), [
            (0, "/device:TPU:0", 0.0, 1000.0, 200.0, 300.0, 0.0, 500.0),
            (1, "/device:TPU:0", 500.0, 1000.0, 200.0, 0.0, 0.0, 800.0)])
        self.assertEqual(self.overlap(tid), {"wall": 500.0, "compute": 200.0, "collective": 0.0,
                                             "transfer": 0.0, "idle": 300.0})
        self.assertEqual(self.host_wait(tid), 1000 / 1500)
        got = self.db.execute("SELECT advice_id, share_of_step, time_at_stake_us FROM profsum_advice "
                              "WHERE trace_id = ? AND share_of_step IS NOT NULL ORDER BY rank",
                              (tid,)).fetchall()
        self.assertEqual(got, [("host_wait", 1000 / 1500, 1000.0), ("one_op_dominating", 0.2, 300.0)])
        md = self.db.execute("SELECT profsum_report_md('ov2.json', 10, '{\"profsum\": true}')").fetchone()[0]
        for line in ("| Compute | 200.000 | 13.33% |", "| Collective | 300.000 | 20.00% |",
                     "| Idle | 1000.000 | 66.67% |", "| Wall | 1500.000 | 100.00% |"):
            self.assertIn(line, md)
        # a comparison with the same ops in steps that do not overlap
        # ([0,1000) and [1000,2000): 2000 µs, 1500 of them idle)
        self.load("apart.json", tpu([("0", 0, 1000), ("1", 1000, 1000)],
                                    [("all-reduce.1", 0, 300), ("fusion.1", 600, 200)]))
        cmp_md = self.db.execute("SELECT profsum_compare_md('ov2.json', 'apart.json', 10)").fetchone()[0]
        for line in ("| compute | 13.33% | 10.00% | -3.33 pp |", "| collective | 20.00% | 15.00% | -5.00 pp |",
                     "| idle | 66.67% | 75.00% | +8.33 pp |"):
            self.assertIn(line, cmp_md)

    def test_overlap_of_the_steps_the_kpis_read(self):
        # the set is the steady steps, else (all warmup) every step: with
        # warmup_steps 1 only step 1 is read, which overlaps nothing
        doc = tpu([("0", 0, 1000), ("1", 500, 1000)], [("fusion.1", 600, 200)])
        p = self.td.write("w1.json", doc)
        tid = self.db.execute("SELECT profsum_import(?, 'w1', '{\"warmup_steps\": 1}')", (p,)).fetchone()[0]
        self.assertEqual(self.overlap(tid), {})
        self.assertEqual(self.host_wait(tid), 0.8)
        tid = self.db.execute("SELECT profsum_import(?, 'w5', '{\"warmup_steps\": 5}')", (p,)).fetchone()[0]
        self.assertEqual(self.overlap(tid)["wall"], 500.0)
        self.assertEqual(self.host_wait(tid), 1300 / 1500)
        # steps that only touch do not overlap
        tid = self.load("touch.json", tpu([("0", 0, 1000), ("1", 1000, 1000)], [("fusion.1", 600, 200)]))
        self.assertEqual(self.overlap(tid), {})

    def test_overlapping_host_steps(self):
        # a GPU measured over the host's train events: step 1 [0,100) on
        # one thread, step 2 [50,150) on another, a kernel through both
        tid = self.load("gpu_ov.json", gpu([(1, 0, 100, 1), (5, 50, 100, 2)], [("kernel", 0, 150)]))
        self.assertEqual(self.wall(tid), [
            (1, "/device:GPU:0", 0.0, 100.0, 100.0, 0.0, 0.0, 0.0),
            (2, "/device:GPU:0", 50.0, 100.0, 100.0, 0.0, 0.0, 0.0)])
        self.assertEqual(self.overlap(tid), {"wall": 50.0, "compute": 50.0, "collective": 0.0,
                                             "transfer": 0.0, "idle": 0.0})
        self.assertEqual(self.host_wait(tid), 0.0)

if __name__ == "__main__":
    unittest.main()
