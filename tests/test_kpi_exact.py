"""profsum_kpis and profsum_advice on values exactly on, or just past, a
band's threshold: the bands compare whole picoseconds (a value exactly on a
threshold gets the band docs/advice.md gives it), the texts and the
reports' tables never write a value past a threshold as the threshold;
compute_bound / memory_bound read both figures from the same devices;
one_op_dominating is there with hot_op_limit 0; device ops of 0 ps give
'unavailable' rows with a reason, never a figure-less text."""
import json
import math
import re
import unittest

import fixtures
from util import DbTestCase

PF, PB = 1e14, 1e12          # 100 TFLOP/s, 1000 GB/s


tpu = fixtures.tpu_doc


class Base(DbTestCase):
    def load(self, name, doc, opts=None):
        o = {"warmup_steps": 0}
        o.update(opts or {})
        p = self.td.write(name, doc)
        return self.db.execute("SELECT profsum_import(?, ?, ?)", (p, name, json.dumps(o))).fetchone()[0]

    def kpi(self, tid, kpi, device=None):
        return self.db.execute("SELECT value, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi=? "
                               "AND device IS ?", (tid, kpi, device)).fetchall()

    def advice(self, tid):
        return {r[0]: r[1:] for r in self.db.execute(
            "SELECT advice_id, source, title, share_of_step, evidence FROM profsum_advice WHERE trace_id=?", (tid,))}


class BoundSameDevices(Base):
    def test_compute_and_bandwidth_from_the_same_devices(self):
        # TPU:0: FLOPs at 90 % of its peak, bytes at 30 %; TPU:1: bytes
        # only (10 % of its bandwidth over 900 us), no FLOPs: it must count
        # in neither figure (else the bandwidth figure would be 12 %)
        ev = []
        for pid, dev in ((1, "/device:TPU:0"), (3, "/device:TPU:1")):
            ev += [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": dev}},
                   {"ph": "M", "pid": pid, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
        ev.append({"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 0, "dur": 100,
                   "args": {"model_flops": int(0.9 * PF * 100e-6), "bytes_accessed": int(0.3 * PB * 100e-6)}})
        ev.append({"ph": "X", "pid": 3, "tid": 2, "name": "copy.1", "ts": 0, "dur": 900,
                   "args": {"bytes_accessed": int(0.1 * PB * 900e-6)}})
        tid = self.load("bound.json", fixtures.doc(ev), {"device_peaks": {"*": {
            "peak_flops_per_s": PF, "peak_mem_bw_bytes_per_s": PB}}})
        adv = self.advice(tid)
        self.assertEqual(adv["compute_bound"][1],
                         "Compute-bound: compute units 90.0% utilized while memory bandwidth is 30.0% used "
                         "(devices' busy time)")
        ev = {e["name"]: e["value"] for e in json.loads(adv["compute_bound"][3])}
        self.assertAlmostEqual(ev["compute_utilization"], 0.9, places=12)
        self.assertAlmostEqual(ev["memory_bandwidth"], 0.3, places=12)


class ExactThresholds(Base):
    def test_host_wait_exactly_20_percent_is_warning(self):
        # idle 204.818 us of a 1024.090 us step: 204818000 * 5 = 1024090000 ps
        tid = self.load("hw20.json", tpu([("0", 0, 1024.09)], [("fusion.1", 0, 819.272)]))
        self.assertEqual(self.kpi(tid, "host_wait"), [(
            0.2, "warning", "devices run no op during 20.0% of the wall time of 1 steady step: "
            "they wait on the host (dispatch, input, synchronization)")])
        adv = self.advice(tid)
        self.assertEqual(adv["host_wait"][:3], (
            "xprof_rule", "Devices wait: no device op runs during 20.0% of the steady steps' wall time", 0.2))

    def test_device_utilization_exactly_80_percent_is_warning(self):
        # busy 819.272 of a 1024.090 us span
        tid = self.load("du80.json", tpu([], [("fusion.1", 0, 819.271), ("fusion.2", 1024.089, 0.001)]))
        self.assertEqual(self.kpi(tid, "device_utilization", "/device:TPU:0"), [
            (0.8, "warning", "/device:TPU:0 busy 80.0% of the time between its first and last op")])
        self.assertEqual(self.kpi(tid, "device_utilization"), [
            (0.8, "warning", "all devices busy 80.0% of the time between their first and last op")])
        self.assertEqual(self.kpi(tid, "device_idle_gaps"), [(0.8, "not_detected", "lowest device utilization 80.0%")])

    def test_collectives_exactly_30_percent_are_collective_bound(self):
        # 307.239 of a 1024.130 us step: 307239000 * 10 = 3 * 1024130000 ps
        tid = self.load("coll30.json", tpu([("0", 0, 1024.13)],
                                           [("all-reduce.1", 0, 307.239), ("fusion.1", 307.239, 716.891)]))
        adv = self.advice(tid)
        self.assertEqual(adv["collective_bound"][:3], (
            "xprof_rule", "Collective-bound: communication ops run during 30.0% of the steady steps' wall time", 0.3))

    def test_transfers_exactly_10_percent_are_not_large(self):
        # 102.409 of 1024.090 us of device busy time
        tid = self.load("xfer10.json", tpu([], [("MemcpyH2D.1", 0, 102.409), ("fusion.1", 102.409, 921.681)]))
        self.assertEqual(self.kpi(tid, "large_transfers"), [
            (0.1, "not_detected", "host<->device transfer ops cover 10.0% of device busy time")])
        self.assertNotIn("large_transfers", self.advice(tid))

    def test_one_ulp_past_a_threshold_does_not_read_as_it(self):
        up = math.nextafter(0.2, 1.0)
        q = "SELECT profsum_format_near(?, ?, ?)"
        self.assertEqual(self.db.execute(q, (100.0 * up, 1, 5)).fetchone()[0], "20.000000000000004")
        self.assertEqual(self.db.execute(q, (up, 1, 0.05)).fetchone()[0], "0.20000000000000004")
        self.assertEqual(self.db.execute(q, (20.0, 1, 5)).fetchone()[0], "20.0")


class TransferNames(Base):
    # the rule of the large_transfers KPI: memcpy, h2d, d2h, infeed,
    # outfeed, transfer, host.?to.?device or device.?to.?host anywhere in
    # the name, ASCII letters without case
    RULE = re.compile(r"memcpy|h2d|d2h|infeed|outfeed|transfer|host.?to.?device|device.?to.?host",
                      re.IGNORECASE | re.ASCII | re.DOTALL)
    NAMES = ["MemcpyH2D.1", "memcpy", "xMEMCPY", "memcp", "fusion.h2d", "D2H", "d2", "Infeed.3",
             "outfeed", "OUTFEE", "data_transfer", "transfe", "HostToDevice", "host_to_device",
             "host-to_device", "hosttodevice", "host__to_device", "host_to__device",
             "DeviceToHost", "device.to.host", "devicetohos", "hostto", "dh2d", "mmemcpy",
             "hhost2device", "ddevice_to_host", "toDevice", "copy-start.1", "h2", "ttransfer",
             "send-done", "iinfeed", "oooutfeed"]

    def test_names_follow_the_rule(self):
        # op k lasts 2^k us, alone in time: the transfer time says which
        # ops counted
        ops, t = [], 0.0
        for k, name in enumerate(self.NAMES):
            ops.append((name, t, float(2 ** k)))
            t += 2 ** k + 1
        tid = self.load("xfernames.json", tpu([], ops))
        got = self.db.execute("SELECT value FROM profsum_agg_fact WHERE trace_id=? AND name='transfer_duration'",
                              (tid,)).fetchone()[0]
        want = [name for name in self.NAMES if self.RULE.search(name)]
        self.assertEqual(got, float(sum(2 ** k for k, name in enumerate(self.NAMES) if name in want)),
                         "transfers: %s" % want)
        self.assertGreater(len(want), 10)
        self.assertLess(len(want), len(self.NAMES) - 10)


class KpiTables(Base):
    def md_row(self, tid, kpi):
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"kpis\": true}')", (tid,)).fetchone()[0]
        return [line for line in md.splitlines() if line.startswith("| kpi | %s | all |" % kpi)]

    def html_cells(self, tid, kpi):
        html = self.db.execute("SELECT profsum_report_html(?)", (tid,)).fetchone()[0]
        return re.findall(r"<tr><td>%s</td><td>all</td><td>([^<]*)</td><td>([^<]*)</td><td class=\"([^\"]*)\"" % kpi,
                          html)

    def test_values_past_a_threshold_keep_their_digits(self):
        cases = [
            ("hw.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 799.96)]), "host_wait", "0.20004", "fraction"),
            ("du.json", tpu([], [("fusion.1", 0, 499.95), ("fusion.2", 999.99, 0.01)]),
             "device_utilization", "0.49996", "fraction"),
            ("kd.json", tpu([], [("fusion.%d" % i, 100 * i, 99.996) for i in range(11)]),
             "kernel_duration", "0.099996", "ms"),
        ]
        for name, doc, kpi, want, unit in cases:
            with self.subTest(kpi=kpi):
                tid = self.load(name, doc)
                row = self.md_row(tid, kpi)
                self.assertEqual(len(row), 1, row)
                self.assertTrue(row[0].startswith("| kpi | %s | all | %s | %s | bad | " % (kpi, want, unit)), row)
                self.assertEqual(self.html_cells(tid, kpi), [(want, unit, "bad")])

    def test_plain_values_keep_four_digits(self):
        tid = self.load("plain.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 600)]))
        self.assertTrue(self.md_row(tid, "host_wait")[0].startswith("| kpi | host_wait | all | 0.4 | fraction | bad |"))

    def test_wall_table_shares(self):
        tid = self.load("hw.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 799.96)]))
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertIn("| Idle | 200.040 | 20.004% |", md)
        self.assertIn("| Compute | 799.960 | 79.996% |", md)
        html = self.db.execute("SELECT profsum_report_html(?)", (tid,)).fetchone()[0]
        self.assertIn('<tr><td>idle</td><td class="num">200.040</td><td class="num">20.004%</td></tr>', html)
        self.assertIn(">idle 20.004%</text>", html)


class CandidatesNote(Base):
    def test_single_hot_op_note_below_half(self):
        tid = self.load("cand50.json", tpu([("0", 0, 10000)], [
            ("fusion.1", 0, 4999.6), ("fusion.2", 4999.6, 4000), ("fusion.3", 8999.6, 1000.4)]))
        note = ("the top op takes 49.996% of device-op time; profsum calls an op dominant only over 50%)")
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertEqual([line for line in md.splitlines() if "single-hot-op" in line and "profsum calls" in line],
                         ["- `single-hot-op`: Single op has outsized exclusive time (" + note])
        html = self.db.execute("SELECT profsum_report_html(?)", (tid,)).fetchone()[0]
        self.assertIn("<em>(profsum: " + note + "</em>", html)


class HotOpLimitZero(Base):
    def test_one_op_dominating_without_hot_ops(self):
        doc = tpu([("0", 0, 1000)], [("fusion.1", 0, 900), ("fusion.2", 900, 50)])
        want = [(900 / 950, "detected", "top op fusion.1 takes 94.7% of device-op time: optimize that op first")]
        for lim in (0, 1):
            with self.subTest(hot_op_limit=lim):
                tid = self.load("hol%d.json" % lim, doc, {"hot_op_limit": lim})
                self.assertEqual(self.kpi(tid, "one_op_dominating"), want)
                adv = self.advice(tid)
                self.assertEqual(adv["one_op_dominating"][1], "One op dominates: fusion.1 takes 94.7% of device-op time")
                ev = {e["name"]: e["value"] for e in json.loads(adv["one_op_dominating"][3])}
                self.assertEqual(ev["exclusive_us"], 900.0)


class ZeroTimeOps(Base):
    def test_zero_ps_ops_are_unavailable(self):
        tid = self.load("zero.json", tpu([("0", 0, 1000)], [("fusion.1", 5, 1e-13), ("fusion.2", 5, 1e-13)]))
        rows = self.db.execute("SELECT kpi, device, value, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi IN "
                               "('device_utilization', 'device_idle_gaps', 'one_op_dominating')", (tid,)).fetchall()
        self.assertEqual(rows, [
            ("device_utilization", "/device:TPU:0", None, "unavailable",
             "/device:TPU:0: no time between its first and last op (its ops take 0 ps): no utilization"),
            ("device_utilization", None, None, "unavailable",
             "no time between the devices' first and last ops (their ops take 0 ps): no utilization"),
            ("device_idle_gaps", None, None, "unavailable",
             "no device has time between its first and last op (their ops take 0 ps): no utilization"),
            ("one_op_dominating", None, None, "unavailable",
             "the device ops take 0 ps of exclusive time in all: no op has a share of it"),
        ])
        for (expl,) in self.db.execute("SELECT explanation FROM profsum_kpis WHERE trace_id=?", (tid,)):
            self.assertNotRegex(expl, r"(^|[^0-9.])%", expl)


    def test_missing_facts_are_unavailable(self):
        # a database whose trace lacks a fact the KPI is made from
        tid = self.load("facts.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 600), ("MemcpyH2D.1", 600, 100)]))
        self.db.execute("DELETE FROM profsum_agg_fact WHERE trace_id=? AND name IN "
                        "('compile_duration', 'n_small_ops', 'transfer_duration')", (tid,))
        rows = self.db.execute("SELECT kpi, value, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi IN "
                               "('compilation_time', 'many_small_kernels', 'large_transfers')", (tid,)).fetchall()
        self.assertEqual(rows, [
            ("compilation_time", None, "unavailable",
             "no compile time stored for this trace (imported by an older profsum): re-import it"),
            ("many_small_kernels", None, "unavailable",
             "no count of small ops stored for this trace (imported by an older profsum): re-import it"),
            ("large_transfers", None, "unavailable",
             "no transfer time stored for this trace (imported by an older profsum): re-import it"),
        ])


class FormatNear(Base):
    def test_decimals_of_a_multiple_of_a_fractional_step(self):
        q = "SELECT profsum_format_near(?, 3, 0.1)"
        self.assertEqual([self.db.execute(q, (x,)).fetchone()[0] for x in (0.2, 0.3, 0.7, 0.30004)],
                         ["0.200", "0.300", "0.700", "0.30004"])


if __name__ == "__main__":
    unittest.main()
