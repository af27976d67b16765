"""profsum_advice: every bad KPI and detected pattern has its advice row,
and no advice contradicts the numbers beside it (no 'balanced' while a
category passes 50 %, 'dominant' only over 50 %, no share above 100 %, the
time at stake the share of the steps' wall time it names), on
fixtures with known answers, on generated TPU/GPU traces and on the
corpus when it is present."""
import json
import os
import re
import subprocess
import sys
import unittest

import fixtures
import xspace_writer as W
from util import connect, progress_calls, DbTestCase, TempDir, ROOT, CORPUS

# KPI or pattern -> the advice_id that must answer it when bad / detected
ADVICE_OF = {
    "kernel_duration": "many_small_kernels", "many_small_kernels": "many_small_kernels",
    "device_utilization": "device_idle_gaps", "device_idle_gaps": "device_idle_gaps",
    "memory_bandwidth": "low_memory_bandwidth", "occupancy": "low_occupancy",
}


def check_invariants(tc, db, where=""):
    """Assert the advice invariants for every trace of db."""
    for tid, in db.execute("SELECT trace_id FROM profsum_trace").fetchall():
        adv = db.execute("SELECT rank, advice_id, source, kpi, title, evidence, fixes, "
                         "time_at_stake_us, share_of_step FROM profsum_advice WHERE trace_id=? "
                         "ORDER BY rank", (tid,)).fetchall()
        ids = [a[1] for a in adv]
        tc.assertEqual([a[0] for a in adv], list(range(1, len(adv) + 1)), where)
        tc.assertEqual(len(ids), len(set(ids)), where)
        for kpi, band in db.execute("SELECT kpi, band FROM profsum_kpis WHERE trace_id=? "
                                    "AND band IN ('bad','detected')", (tid,)):
            tc.assertIn(ADVICE_OF.get(kpi, kpi), ids, "%s: %s %s has no advice" % (where, kpi, band))
        shares = {r[0]: r[1] for r in db.execute(
            "SELECT category, share_of_total FROM profsum_breakdown WHERE trace_id=? AND is_summary_mode",
            (tid,))}
        for rank, aid, source, kpi, title, ev, fixes, stake, share in adv:
            msg = "%s: %s" % (where, title)
            tc.assertIn(source, ("kpi", "pattern", "xprof_rule"), msg)
            tc.assertNotIn("balanced", title.lower(), msg)
            if share is not None:
                tc.assertTrue(0.0 <= share <= 1.0, msg)
            if stake is not None:
                tc.assertGreaterEqual(stake, 0.0, msg)
            for pct in re.findall(r"(\d+(?:\.\d+)?)%", title):
                # above 100 % only a utilization the title says is above its peak
                if float(pct) > 100.0:
                    tc.assertIn(aid, ("compute_bound", "memory_bound"), msg)
                    tc.assertRegex(title, r"%s%% (used|utilized) \(more than " % re.escape(pct), msg)
            evidence = json.loads(ev)
            tc.assertTrue(evidence and all(set(e) == {"name", "value", "unit"} for e in evidence), msg)
            tc.assertTrue(json.loads(fixes), msg)
            if aid == "large_transfers":
                tc.assertLessEqual(db.execute("SELECT value FROM profsum_kpis WHERE trace_id=? AND "
                                              "kpi='large_transfers'", (tid,)).fetchone()[0], 1.0, msg)
            if "domina" in title.lower():
                tc.assertEqual(aid, "one_op_dominating", msg)
                op_share = [e["value"] for e in evidence if e["name"] == "op_share"][0]
                tc.assertGreater(op_share, 0.5, msg)
            if share is not None and stake is not None:
                # the time at stake is that share of the steady steps' wall time
                tc.assertAlmostEqual(stake, share * steady_wall(db, tid), delta=1e-9 * max(stake, 1.0), msg=msg)
        if max(shares.values() or [0]) > 0.5:
            for a in adv:
                tc.assertNotIn("balanced", a[4].lower())


def steady_wall(db, tid):
    """The steady steps' wall time of trace tid summed over devices (every
    step's when all are warmup steps), as profsum_advice shares it."""
    rows = db.execute("SELECT is_warmup, wall_us FROM profsum_step_wall WHERE trace_id=?", (tid,)).fetchall()
    steady = [w for warm, w in rows if not warm]
    return sum(steady if steady else [w for _, w in rows])


def util_plane(dev, flops, nbytes):
    """The XPlane of /device:TPU:<dev> with peaks 100 TFLOP/s and 1000 GB/s,
    two 100 µs steps each with one 100 µs op of the given flops and
    bytes_accessed."""
    import xspace_writer as W
    us = 10 ** 6
    d = W.PlaneBuilder("/device:TPU:%d" % dev, id=dev + 1)
    d.plane_stat("peak_teraflops_per_second", double=100.0)
    d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
    d.line(id=1, name="Steps", timestamp_ns=0, events=[
        d.event(str(k), offset_ps=k * 100 * us, duration_ps=100 * us) for k in (1, 2)])
    d.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
        d.event("dot", offset_ps=k * 100 * us, duration_ps=100 * us,
                stats=[d.stat("flops", i64=flops), d.stat("bytes_accessed", i64=nbytes)]) for k in (1, 2)])
    return d.build()


def load(db, td, name, doc, opts='{"warmup_steps": 0}'):
    p = td.write(name, doc)
    return db.execute("SELECT profsum_import(?, ?, ?)", (p, name, opts)).fetchone()[0]


tpu = fixtures.tpu_doc
US = 10 ** 6


class Known(DbTestCase):
    def advice(self, tid):
        return self.db.execute("SELECT advice_id, source, kpi, share_of_step, time_at_stake_us "
                               "FROM profsum_advice WHERE trace_id=? ORDER BY rank", (tid,)).fetchall()

    def test_idle_steps_give_host_wait_first(self):
        # two 1000 µs steps, each with 600 µs of one long op: 40 % idle
        tid = load(self.db, self.td, "idle.json", tpu(
            [("0", 0, 1000), ("1", 1000, 1000)],
            [("fusion.1", 0, 600), ("fusion.2", 1000, 600)]))
        adv = self.advice(tid)
        self.assertEqual(adv[0][:3], ("host_wait", "kpi", "host_wait"))
        self.assertAlmostEqual(adv[0][3], 0.4)
        self.assertAlmostEqual(adv[0][4], 800.0)
        check_invariants(self, self.db)

    def two_devices(self, name, gap0, gap1, dev_names=("/device:TPU:0", "/device:TPU:1")):
        """Two devices, each with two ops 400 us long and a gap between
        them: device_idle_gaps names the least busy, the first by name
        among equals."""
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": dev_names[0]}},
              {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
              {"ph": "M", "pid": 3, "name": "process_name", "args": {"name": dev_names[1]}},
              {"ph": "M", "pid": 3, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
        for pid, gap in ((1, gap0), (3, gap1)):
            ev += [{"ph": "X", "pid": pid, "tid": 2, "name": "fusion.1", "ts": 0, "dur": 400},
                   {"ph": "X", "pid": pid, "tid": 2, "name": "fusion.2", "ts": 400 + gap, "dur": 400}]
        tid = load(self.db, self.td, name, fixtures.doc(ev))
        row = self.db.execute("SELECT title, evidence, time_at_stake_us FROM profsum_advice "
                              "WHERE trace_id=? AND advice_id='device_idle_gaps'", (tid,)).fetchone()
        self.assertIsNotNone(row)
        ev = {e["name"]: e["value"] for e in json.loads(row[1])}
        return row[0], ev, row[2]

    def test_idle_gaps_name_the_least_busy_device(self):
        title, ev, stake = self.two_devices("g1.json", 200, 800)
        self.assertIn("/device:TPU:1 is busy 50.0%", title)
        self.assertEqual(ev["device"], "/device:TPU:1")
        self.assertEqual(ev["device_utilization"], 0.5)
        self.assertEqual(stake, 1000.0)           # the idle time of both devices
        title, ev, stake = self.two_devices("g2.json", 800, 200)
        self.assertIn("/device:TPU:0 is busy 50.0%", title)

    def test_idle_gaps_equal_devices_first_by_name(self):
        # the same busy share on both: the first name wins, whatever the pids
        title, ev, _ = self.two_devices("g3.json", 600, 600, ("/device:TPU:1", "/device:TPU:0"))
        self.assertEqual(ev["device"], "/device:TPU:0")
        self.assertIn("/device:TPU:0 is busy 57.1%", title)

    def test_figures_never_read_as_the_threshold(self):
        """A device busy 79.99 % of its span is 'warning' (good needs more
        than 80 %): its texts say 79.99 %, not 80.0 %."""
        tid = load(self.db, self.td, "th.json", tpu([("0", 0, 10000)],
                                                     [("fusion.1", 0, 7998), ("fusion.2", 9999, 1)]))
        band, text = self.db.execute("SELECT band, explanation FROM profsum_kpis WHERE trace_id=? AND "
                                     "kpi='device_utilization' AND device IS NOT NULL", (tid,)).fetchone()
        self.assertEqual(band, "warning")
        self.assertIn("busy 79.99% of the time", text)

    def test_xprof_idle_rule_between_10_and_20(self):
        tid = load(self.db, self.td, "w.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 850)]))
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["host_wait"][1:3], ("xprof_rule", None))
        self.assertAlmostEqual(adv["host_wait"][3], 0.15)

    def test_collective_bound(self):
        tid = load(self.db, self.td, "c.json", tpu(
            [("0", 0, 1000)], [("fusion.1", 0, 600), ("all-reduce.1", 600, 380)]))
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["collective_bound"][1], "xprof_rule")
        self.assertAlmostEqual(adv["collective_bound"][3], 0.38)

    def test_one_op_dominating(self):
        tid = load(self.db, self.td, "d.json", tpu(
            [("0", 0, 1000)], [("fusion.1", 0, 900), ("fusion.2", 900, 100)]))
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["one_op_dominating"][1:3], ("pattern", "one_op_dominating"))
        title = self.db.execute("SELECT title FROM profsum_advice WHERE advice_id='one_op_dominating'").fetchone()[0]
        self.assertIn("fusion.1 takes 90.0%", title)
        check_invariants(self, self.db)

    def test_one_op_share_of_device_op_time(self):
        # 600 of 1000 µs of device ops, beside 2000 µs of host time: the op
        # takes 60 % of device-op time (20 % of the per-track total, which
        # counts the host): dominant, said with the figure the op profile shows
        ev = tpu([("0", 0, 1000)], [("fusion.1", 0, 600), ("fusion.2", 600, 400)])
        ev["traceEvents"].append({"ph": "X", "pid": 2, "tid": 1, "name": "python", "ts": 0, "dur": 2000})
        tid = load(self.db, self.td, "h.json", ev)
        kpi = self.db.execute("SELECT value, band FROM profsum_kpis WHERE trace_id=? AND kpi='one_op_dominating'",
                              (tid,)).fetchone()
        self.assertEqual((round(kpi[0], 6), kpi[1]), (0.6, "detected"))
        title, share = self.db.execute("SELECT title, share_of_step FROM profsum_advice WHERE trace_id=? "
                                       "AND advice_id='one_op_dominating'", (tid,)).fetchone()
        self.assertEqual(title, "One op dominates: fusion.1 takes 60.0% of device-op time")
        self.assertAlmostEqual(share, 0.6)
        check_invariants(self, self.db)

    def test_transfers_counted_once_on_devices(self):
        # two transfers overlapping on two op lines of one device, and a
        # host memcpy: the device's transfer time is their union (800 µs of
        # its 1000 µs busy), never above its busy time
        ev = tpu([("0", 0, 1000)], [("MemcpyH2D.1", 0, 800), ("fusion.1", 800, 200)])
        ev["traceEvents"] += [
            {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Async XLA Ops"}},
            {"ph": "X", "pid": 1, "tid": 3, "name": "MemcpyH2D.2", "ts": 100, "dur": 600},
            {"ph": "X", "pid": 2, "tid": 1, "name": "cudaMemcpyH2D", "ts": 0, "dur": 3000}]
        tid = load(self.db, self.td, "x.json", ev)
        v, band, why = self.db.execute("SELECT value, band, explanation FROM profsum_kpis WHERE trace_id=? "
                                       "AND kpi='large_transfers'", (tid,)).fetchone()
        self.assertAlmostEqual(v, 0.8)
        self.assertEqual(band, "detected")
        self.assertIn("80.0% of device busy time", why)
        check_invariants(self, self.db)

    def test_titles_without_steady_steps(self):
        # one step, below warmup_steps: the figures are of every step, and
        # the title and the KPI call them warmup steps, not steady ones
        tid = load(self.db, self.td, "w5.json", tpu(
            [("0", 0, 1000)], [("fusion.1", 0, 600)]), '{"warmup_steps": 5}')
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND advice_id='host_wait'",
                                (tid,)).fetchone()[0]
        self.assertEqual(title, "Devices wait: no device op runs during 40.0% of the warmup steps' wall time")
        why = self.db.execute("SELECT explanation FROM profsum_kpis WHERE trace_id=? AND kpi='host_wait'",
                              (tid,)).fetchone()[0]
        self.assertEqual(why, "devices run no op during 40.0% of the wall time of 1 warmup step (the capture "
                              "has no steady step; warmup steps can carry compilation and first-run costs): "
                              "they wait on the host (dispatch, input, synchronization)")
        # past the warmup: steady steps, counted as such
        tid = load(self.db, self.td, "w0.json", tpu(
            [("0", 0, 1000), ("1", 1000, 1000)], [("fusion.1", 0, 600), ("fusion.1", 1000, 950)]),
            '{"warmup_steps": 0}')
        why = self.db.execute("SELECT explanation FROM profsum_kpis WHERE trace_id=? AND kpi='host_wait'",
                              (tid,)).fetchone()[0]
        self.assertEqual(why, "devices run no op during 22.5% of the wall time of 2 steady steps: "
                              "they wait on the host (dispatch, input, synchronization)")

    def test_long_op_name_cut_in_titles(self):
        name = "fusion." + "x" * 200
        tid = load(self.db, self.td, "l.json", tpu([("0", 0, 1000)], [(name, 0, 900), ("f.2", 900, 100)]))
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND "
                                "advice_id='one_op_dominating'", (tid,)).fetchone()[0]
        self.assertEqual(title, "One op dominates: %s… takes 90.0%% of device-op time" % name[:79])
        why = self.db.execute("SELECT explanation FROM profsum_kpis WHERE trace_id=? AND kpi='one_op_dominating'",
                              (tid,)).fetchone()[0]
        self.assertIn(name[:79] + "…", why)
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertNotIn(name, md[md.index("## profsum"):])

    def test_no_dominance_below_half(self):
        tid = load(self.db, self.td, "n.json", tpu(
            [("0", 0, 1000)], [("fusion.%d" % i, 100 * i, 100) for i in range(10)]))
        ids = [a[0] for a in self.advice(tid)]
        self.assertNotIn("one_op_dominating", ids)
        check_invariants(self, self.db)

    def test_equal_ops_are_not_dominant(self):
        # two ops of exactly equal time take half each: not over 50 %,
        # whatever the rounding of their sums of doubles (0.1 µs three times
        # each; 33.3 µs seven times each)
        for name, d, n in (("t1.json", 0.1, 3), ("t2.json", 33.3, 7)):
            ops = [("fusion.%d" % (i % 2 + 1), round(i * d, 6), d) for i in range(2 * n)]
            tid = load(self.db, self.td, name, tpu([("0", 0, 2 * n * d + 1)], ops))
            v, band = self.db.execute("SELECT value, band FROM profsum_kpis WHERE trace_id=? "
                                      "AND kpi='one_op_dominating'", (tid,)).fetchone()
            self.assertEqual((v, band), (0.5, "not_detected"), name)
            self.assertNotIn("one_op_dominating", [a[0] for a in self.advice(tid)], name)
        check_invariants(self, self.db)

    def test_transfer_stake_is_the_steady_steps(self):
        # a warmup step with a long transfer, a steady one with 300 of 1000
        # µs: the share and the time at stake are both the steady step's
        tid = load(self.db, self.td, "xs.json", tpu(
            [("0", 0, 1000), ("1", 1000, 1000)],
            [("MemcpyH2D.1", 0, 900), ("fusion.1", 1000, 600), ("MemcpyH2D.2", 1600, 300)]),
            '{"warmup_steps": 1}')
        stake, share = self.db.execute("SELECT time_at_stake_us, share_of_step FROM profsum_advice "
                                       "WHERE trace_id=? AND advice_id='large_transfers'", (tid,)).fetchone()
        self.assertAlmostEqual(share, 0.3)
        self.assertAlmostEqual(stake, 300.0)
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertIn("at stake: 30.0% of step wall time, 300.000 us", md)
        check_invariants(self, self.db)

    def test_stake_outside_the_steady_steps(self):
        # what the advice is about lies all before the steady step (the
        # transfers; the ops, the step idle throughout): no share of the
        # step's wall time to claim, the capture's time at stake
        for name, ops, aid, stake in (
                ("xo.json", [("MemcpyH2D.1", 0, 60), ("fusion.1", 1000, 400)], "large_transfers", 60.0),
                ("do.json", [("fusion.1", 0, 600), ("fusion.2", 600, 100)], "one_op_dominating", 600.0)):
            tid = load(self.db, self.td, name, tpu([("0", 1000, 1000)], ops))
            row = self.db.execute("SELECT time_at_stake_us, share_of_step FROM profsum_advice "
                                  "WHERE trace_id=? AND advice_id=?", (tid, aid)).fetchone()
            self.assertEqual(row, (stake, None), aid)
        check_invariants(self, self.db)

    def test_compile_evidence_as_the_title(self):
        # 10.0000005 s of compilation (bad from 10 s): the evidence says what
        # the title says, not 10.000 s
        ev = tpu([("0", 0, 1000)], [("fusion.1", 0, 900)])
        ev["traceEvents"].append({"ph": "X", "pid": 2, "tid": 1, "name": "backend_compile", "ts": 0,
                                  "dur": 10000000.5})
        tid = load(self.db, self.td, "cc.json", ev)
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND "
                                "advice_id='compilation_time'", (tid,)).fetchone()[0]
        figure = re.search(r"profile: (\S+) s", title).group(1)
        self.assertNotEqual(figure, "10.000")
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertIn("compilation_time = %s s" % figure, md)

    def test_report_figures_never_read_as_the_threshold(self):
        # idle 20.00002 % of the step (host_wait bad from 20 %): the report's
        # evidence and time at stake say so, as the title does
        tid = load(self.db, self.td, "hw.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 799.9998)]))
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND advice_id='host_wait'",
                                (tid,)).fetchone()[0]
        self.assertIn("20.00002%", title)
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        block = md[md.index("Devices wait"):]
        block = block[:block.index("- Try:")]
        self.assertIn("at stake: 20.00002% of step wall time, 200.000 us", block)
        self.assertIn("host_wait = 20.00002%; idle_us = 200.000 us; step_wall_us = 1000.000 us", block)
        self.assertNotIn("20.0%", block)
        html = self.db.execute("SELECT profsum_report_html(?)", (tid,)).fetchone()[0]
        self.assertIn("host_wait = 20.00002%", html)

    def test_many_small_kernels_from_kernel_duration(self):
        tid = load(self.db, self.td, "s.json", tpu(
            [("0", 0, 100)], [("fusion.%d" % i, 10 * i, 9) for i in range(10)]))
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["many_small_kernels"][1:3], ("pattern", "many_small_kernels"))
        check_invariants(self, self.db)

    def test_too_few_ops_for_many_small_kernels(self):
        # nine 9 µs ops (a kernel's micro-benchmark): too few to tell launch
        # overhead or poor fusion by; the tenth op makes them many
        for n, band in ((9, "unavailable"), (10, "bad")):
            tid = load(self.db, self.td, "few%d.json" % n, tpu(
                [("0", 0, 100)], [("fusion.%d" % i, 10 * i, 9) for i in range(n)]))
            kpis = dict((k, (b, v, e)) for k, b, v, e in self.db.execute(
                "SELECT kpi, band, value, explanation FROM profsum_kpis WHERE trace_id=? "
                "AND kpi IN ('kernel_duration', 'many_small_kernels')", (tid,)))
            ids = [a[0] for a in self.advice(tid)]
            if n == 9:
                self.assertEqual(kpis["kernel_duration"], ("unavailable", None, "9 device ops (median 0.009 ms): too "
                                 "few to tell launch overhead or poor fusion by (10 or more are needed)"))
                self.assertEqual(kpis["many_small_kernels"], ("unavailable", None, "9 device ops (100.0% shorter "
                                 "than 0.1 ms): too few to call them many (10 or more are needed)"))
                self.assertNotIn("many_small_kernels", ids)
            else:
                self.assertEqual(kpis["kernel_duration"][:2], ("bad", 0.009))
                self.assertEqual(kpis["many_small_kernels"][:2], ("detected", 1.0))
                self.assertIn("many_small_kernels", ids)
            check_invariants(self, self.db)

    def test_small_ops_share_of_device_time(self):
        # twenty small ops beside one large one: 95.2 % of the ops are small;
        # 2 µs each beside 5 ms, they take 0.8 % of the device-op time, which
        # the texts and the advice say; 60 µs each beside 200 µs, 85.7 %
        for small, big, share, pat, kd in (
                (2, 5000, "0.8", "95.2% of device ops are shorter than 0.1 ms, only 0.8% of device-op time: "
                                 "little to gain by fusing them",
                 "median device op takes 0.002 ms: many tiny kernels, but they take 0.8% of device-op time: "
                 "most of it is in the larger ops"),
                (60, 200, "85.7", "95.2% of device ops are shorter than 0.1 ms, 85.7% of device-op time: poor fusion",
                 "median device op takes 0.060 ms: many tiny kernels, 85.7% of device-op time: launch overhead "
                 "and unfused memory traffic weigh; fuse ops")):
            ops = [("fusion.%d" % i, 100 * i, small) for i in range(20)] + [("convolution.1", 2100, big)]
            tid = load(self.db, self.td, "small%d.json" % big, tpu([], ops))
            facts = dict(self.db.execute("SELECT name, value FROM profsum_agg_fact WHERE trace_id=? AND name IN "
                                         "('small_op_duration', 'op_duration')", (tid,)))
            self.assertEqual(facts, {"small_op_duration": 20.0 * small, "op_duration": 20.0 * small + big})
            kpis = dict(self.db.execute("SELECT kpi, explanation FROM profsum_kpis WHERE trace_id=? "
                                        "AND kpi IN ('kernel_duration', 'many_small_kernels')", (tid,)))
            self.assertEqual(kpis, {"many_small_kernels": pat, "kernel_duration": kd})
            title, ev, fixes, stake = self.db.execute(
                "SELECT title, evidence, fixes, time_at_stake_us FROM profsum_advice "
                "WHERE trace_id=? AND advice_id='many_small_kernels'", (tid,)).fetchone()
            self.assertTrue(title.endswith(", %s%% of device-op time" % share), title)
            ev = dict((e["name"], e["value"]) for e in json.loads(ev))
            self.assertEqual((ev["small_op_us"], round(ev["small_op_time_share"], 6)),
                             (20.0 * small, round(20.0 * small / (20.0 * small + big), 6)))
            self.assertEqual(stake, 20.0 * small)
            fixes = json.loads(fixes)
            if big == 5000:
                self.assertEqual(fixes[0], "they take only 0.8% of the device-op time (40.000 us): the larger ops "
                                 "come first; fusing these saves at most that time and the gaps between them")
            else:
                self.assertEqual(fixes[0], "jax.jit larger functions, so that XLA compiles the step as one program")
            check_invariants(self, self.db)

    def test_compute_heavy_is_not_balanced(self):
        # 87 % compute: the reference's rules say 'balanced'; profsum never does
        tid = load(self.db, self.td, "f.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        cands = [r[0] for r in self.db.execute("SELECT candidate_id FROM profsum_candidates")]
        self.assertTrue(cands)
        check_invariants(self, self.db)
        self.assertTrue(tid)

    def test_kpis_of_other_views(self):
        # KPI rows that profsum_kpis_mem / profsum_kpis_xla add (memory,
        # occupancy, device limits) become advice rows when bad
        tid = load(self.db, self.td, "m.json", tpu([("0", 0, 1000)], [("fusion.1", 0, 990)]))
        cols = "trace_id, label, kind, kpi, device, value, unit, band, explanation"
        self.db.execute("DROP VIEW profsum_kpis_mem")
        self.db.execute("CREATE VIEW profsum_kpis_mem(%s) AS "
                        "SELECT trace_id, label, 'kpi', 'memory_peak', '/device:TPU:0', 0.97, 'fraction', 'bad', "
                        "'peak memory 97%% of capacity' FROM profsum_trace UNION ALL "
                        "SELECT trace_id, label, 'kpi', 'occupancy', NULL, 0.2, 'fraction', 'bad', "
                        "'kernels at 20%% occupancy' FROM profsum_trace" % cols)
        self.db.execute("DROP VIEW profsum_kpis_xla")
        self.db.execute("CREATE VIEW profsum_kpis_xla(%s) AS "
                        "SELECT trace_id, label, 'kpi', 'memory_bandwidth', NULL, 0.2, 'fraction', 'bad', "
                        "'HBM 20%% used' FROM profsum_trace UNION ALL "
                        "SELECT trace_id, label, 'kpi', 'flops_utilization', NULL, 0.3, 'fraction', 'warning', "
                        "'30%% of peak FLOP/s' FROM profsum_trace" % cols)
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["memory_peak"][1:3], ("kpi", "memory_peak"))
        self.assertEqual(adv["low_occupancy"][1:3], ("kpi", "occupancy"))
        # low memory bandwidth use is not memory-bound
        self.assertEqual(adv["low_memory_bandwidth"][1:3], ("kpi", "memory_bandwidth"))
        self.assertNotIn("memory_bound", adv)
        fixes = json.loads(self.db.execute("SELECT fixes FROM profsum_advice WHERE advice_id='memory_peak'")
                           .fetchone()[0])
        self.assertTrue(any("donate" in f for f in fixes))
        check_invariants(self, self.db)

    def xplane_util(self, name, flops, nbytes):
        """A TPU plane with peaks 100 TFLOP/s and 1000 GB/s, two 100 µs steps
        each with one 100 µs op of the given flops and bytes_accessed."""
        import xspace_writer as W
        path = self.td.write(name, W.xspace([util_plane(0, flops, nbytes)], hostnames=["h"]))
        return self.db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 0}')", (path, name)).fetchone()[0]

    def test_compute_and_memory_bound_from_utilization(self):
        """xprof's rules on the capture's utilization over busy time: 90 %
        of peak FLOP/s with 10 % of the bandwidth is compute-bound, the
        converse memory-bound; the low-bandwidth KPI of the first says
        low_memory_bandwidth, never memory_bound."""
        # 100 µs at 100 TFLOP/s = 1e10 FLOPs; at 1000 GB/s = 1e8 bytes
        tid = self.xplane_util("cb.xplane.pb", 9 * 10 ** 9, 10 ** 7)
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["compute_bound"][1], "xprof_rule")
        self.assertNotIn("memory_bound", adv)
        self.assertEqual(adv["low_memory_bandwidth"][1:3], ("kpi", "memory_bandwidth"))
        ev = {e["name"]: e["value"] for e in json.loads(self.db.execute(
            "SELECT evidence FROM profsum_advice WHERE trace_id=? AND advice_id='compute_bound'", (tid,)).fetchone()[0])}
        self.assertAlmostEqual(ev["compute_utilization"], 0.9)
        self.assertAlmostEqual(ev["memory_bandwidth"], 0.1)
        tid = self.xplane_util("mb.xplane.pb", 2 * 10 ** 9, 8 * 10 ** 7)
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["memory_bound"][1], "xprof_rule")
        self.assertNotIn("compute_bound", adv)
        self.assertNotIn("low_memory_bandwidth", adv)
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND advice_id='memory_bound'",
                                (tid,)).fetchone()[0]
        self.assertIn("memory bandwidth 80.0% used while compute units are 20.0% utilized", title)
        # above the peak (bytes_accessed counts on-chip traffic): said so
        tid = self.xplane_util("mb2.xplane.pb", 2 * 10 ** 9, 17 * 10 ** 7)
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND advice_id='memory_bound'",
                                (tid,)).fetchone()[0]
        self.assertIn("memory bandwidth 170.0% used (more than HBM can carry: the ops' bytes_accessed count "
                      "on-chip traffic too", title)
        tid = self.xplane_util("cb2.xplane.pb", 12 * 10 ** 9, 10 ** 7)
        title = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND advice_id='compute_bound'",
                                (tid,)).fetchone()[0]
        self.assertIn("compute units 120.0% utilized (more than the peak: check the device's peak FLOP/s", title)
        check_invariants(self, self.db)

    def test_no_memory_bound_when_a_device_is_low(self):
        """Two devices, one at 150 % of its bandwidth and one at 10 %: the
        capture's 80 % describes neither, so no memory_bound row contradicts
        the low device's low_memory_bandwidth row."""
        import xspace_writer as W
        planes = [util_plane(dev, 5 * 10 ** 8, nbytes) for dev, nbytes in ((0, 15 * 10 ** 7), (1, 10 ** 7))]
        path = self.td.write("two.xplane.pb", W.xspace(planes, hostnames=["h"]))
        tid = self.db.execute("SELECT profsum_import(?, 'two', '{\"warmup_steps\": 0}')", (path,)).fetchone()[0]
        hbm = self.db.execute("SELECT sum(bytes_accessed) * 1e6 / sum(busy_us * 1e12) FROM profsum_agg_xla_util "
                              "WHERE trace_id=? AND step IS NULL", (tid,)).fetchone()[0]
        self.assertAlmostEqual(hbm, 0.8)              # the capture's figure: over 70 %
        adv = dict((a[0], a) for a in self.advice(tid))
        self.assertEqual(adv["low_memory_bandwidth"][1:3], ("kpi", "memory_bandwidth"))
        self.assertNotIn("memory_bound", adv)
        check_invariants(self, self.db)

    def test_spec_fixtures(self):
        for i, f in enumerate([fixtures.f2(), fixtures.f3()]):
            load(self.db, self.td, "f%d.json" % i, f)
        check_invariants(self, self.db)


# HLO texts of TPU ops: a buffer in host memory is S(5) in its layout
HOST = "f32[1024]{0:T(1024)S(5)}"
DEV = "f32[1024]{0:T(1024)}"
VMEM = "f32[1024]{0:T(1024)S(1)}"
OFFLOAD_OPS = [
    # (name, HLO text, start µs, dur µs) on XLA Ops; steps 0-1000 µs
    ("copy-start.1", "%%copy-start.1 = (%s, %s, u32[]{:S(2)}) copy-start(%s %%p)" % (DEV, HOST, HOST), 0, 10),
    ("fusion.1", "%%fusion.1 = %s fusion(%s %%a)" % (DEV, HOST), 10, 490),
    ("copy-done.1", "%%copy-done.1 = %s copy-done((%s, %s, u32[]{:S(2)}) %%copy-start.1)" % (DEV, DEV, HOST), 500, 400),
    ("copy-start.2", "%%copy-start.2 = (%s, %s, u32[]{:S(2)}) copy-start(%s %%q)" % (VMEM, DEV, DEV), 900, 10),
    ("copy-done.2", "%%copy-done.2 = %s copy-done((%s, %s, u32[]{:S(2)}) %%copy-start.2)" % (VMEM, VMEM, DEV), 910, 50),
]


class HostOffload(DbTestCase):
    """TPU host offloading: a copy-start/copy-done (or dynamic-(update-)
    slice-start/-done) whose HLO text puts a buffer in host memory, S(5),
    is a transfer (xprof's rule for its Host Offload Ops line), though its
    name says nothing of one.  In OFFLOAD_OPS: copy-start.1 (10 µs) and
    copy-done.1 (400 µs) move to and from host memory; copy-*.2 stay on
    the device (S(1)); fusion.1 reads a host buffer but is no copy; an
    Async XLA Ops span of the whole copy is no transfer either.  Busy
    [0, 960): transfers 410 µs, 42.7 %, all of them host-offload copies."""

    def check(self, tid, where):
        facts = dict(self.db.execute("SELECT name, value FROM profsum_agg_fact WHERE trace_id=?", (tid,)))
        self.assertEqual((facts["transfer_duration"], facts["host_offload_duration"],
                          facts["device_busy_duration"]), (410.0, 410.0, 960.0), where)
        v, band, why = self.db.execute("SELECT value, band, explanation FROM profsum_kpis WHERE trace_id=? "
                                       "AND kpi='large_transfers'", (tid,)).fetchone()
        self.assertAlmostEqual(v, 410 / 960, msg=where)
        self.assertEqual(band, "detected", where)
        self.assertEqual(why, "host<->device transfer ops cover 42.7% of device busy time (host-offload "
                              "copies 42.7%): keep data on device, prefetch, overlap transfers", where)
        self.assertEqual(self.db.execute("SELECT transfer_us, compute_us, idle_us FROM profsum_step_wall "
                                         "WHERE trace_id=?", (tid,)).fetchall(), [(410.0, 550.0, 40.0)], where)
        ev, fixes = self.db.execute("SELECT evidence, fixes FROM profsum_advice WHERE trace_id=? AND "
                                    "advice_id='large_transfers'", (tid,)).fetchone()
        self.assertEqual(json.loads(ev)[-1], {"name": "host_offload_us", "value": 410.0, "unit": "us"}, where)
        self.assertTrue(json.loads(fixes)[0].startswith("host offloading"), where)
        check_invariants(self, self.db, where)

    def test_trace_json_long_name(self):
        ev = list(fixtures.TPU_META) + [
            {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Async XLA Ops"}},
            {"ph": "X", "pid": 1, "tid": 1, "name": "0", "ts": 0, "dur": 1000},
            {"ph": "X", "pid": 1, "tid": 3, "name": "async-copy", "ts": 0, "dur": 900,
             "args": {"long_name": OFFLOAD_OPS[0][1]}}]
        ev += [{"ph": "X", "pid": 1, "tid": 2, "name": n, "ts": ts, "dur": d, "args": {"long_name": ln}}
               for n, ln, ts, d in OFFLOAD_OPS]
        self.check(load(self.db, self.td, "o.json", fixtures.doc(ev)), "json")

    def test_xplane_metadata_name(self):
        # the HLO text is the event metadata's name, the op's name its display name
        d = W.PlaneBuilder("/device:TPU:0", id=1)
        d.line(id=1, name="Steps", timestamp_ns=0, events=[d.event("0", offset_ps=0, duration_ps=1000 * US)])
        d.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            event_of(d, n, ln, ts, dur) for n, ln, ts, dur in OFFLOAD_OPS])
        d.line(id=3, name="Async XLA Ops", timestamp_ns=0, events=[
            event_of(d, "async-copy", OFFLOAD_OPS[0][1] + " ", 0, 900)])
        path = self.td.write("o.xplane.pb", W.xspace([d.build()], hostnames=["h"]))
        tid = self.db.execute("SELECT profsum_import(?, NULL, '{\"warmup_steps\": 0}')", (path,)).fetchone()[0]
        self.check(tid, "xplane")

    def test_low_bandwidth_while_waiting_on_transfers(self):
        # the ops carry their bytes (about 1 MB over 960 µs of a 1 TB/s peak:
        # 0.1 %): the memory idles because the device waits on the host
        # link, which the low_memory_bandwidth advice says first
        ev = list(fixtures.TPU_META) + [{"ph": "X", "pid": 1, "tid": 1, "name": "0", "ts": 0, "dur": 1000}]
        ev += [{"ph": "X", "pid": 1, "tid": 2, "name": n, "ts": ts, "dur": d,
                "args": {"long_name": ln, "bytes_accessed": 10 ** 6 if n == "copy-done.1" else 1000}}
               for n, ln, ts, d in OFFLOAD_OPS]
        p = self.td.write("bw.json", fixtures.doc(ev))
        opts = json.dumps({"warmup_steps": 0, "device_peaks": {"*": {"peak_mem_bw_bytes_per_s": 1e12}}})
        tid = self.db.execute("SELECT profsum_import(?, 'bw', ?)", (p, opts)).fetchone()[0]
        fixes = self.db.execute("SELECT fixes FROM profsum_advice WHERE trace_id=? AND "
                                "advice_id='low_memory_bandwidth'", (tid,)).fetchone()[0]
        self.assertEqual(json.loads(fixes)[0], "across the devices, host<->device transfers take 42.7% of "
                         "their busy time (large_transfers): the memory idles while a device waits on them; "
                         "shorten or overlap them first")
        check_invariants(self, self.db)

    def test_xplane_raw_name_and_async_line(self):
        # as xprof reads it, the S(5) may be in the raw metadata name only:
        # (a) no display name, the name is the HLO text; (b) a long_name
        # stat without it, the raw name with it.  An Async XLA Ops op named
        # like a copy does not count (its span is the whole copy).
        d = W.PlaneBuilder("/device:TPU:0", id=1)
        d.line(id=1, name="Steps", timestamp_ns=0, events=[d.event("0", offset_ps=0, duration_ps=1000 * US)])
        hlo_a = OFFLOAD_OPS[2][1]
        hlo_b = OFFLOAD_OPS[0][1]
        lstat = d.stat("long_name", s="%copy-start.1 = copy-start()")
        d.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            W.event(d.eid(hlo_a), offset_ps=0, duration_ps=100 * US),
            W.event(d.eid(hlo_b, display_name="copy-start.1", stats=[lstat]), offset_ps=100 * US,
                    duration_ps=50 * US),
            d.event("fusion.1", offset_ps=150 * US, duration_ps=250 * US)])
        d.line(id=3, name="Async XLA Ops", timestamp_ns=0, events=[
            event_of(d, "copy-done.9", hlo_a + " ", 0, 900)])
        path = self.td.write("r.xplane.pb", W.xspace([d.build()], hostnames=["h"]))
        tid = self.db.execute("SELECT profsum_import(?, NULL, '{\"warmup_steps\": 0}')", (path,)).fetchone()[0]
        facts = dict(self.db.execute("SELECT name, value FROM profsum_agg_fact WHERE trace_id=?", (tid,)))
        self.assertEqual((facts["transfer_duration"], facts["host_offload_duration"],
                          facts["device_busy_duration"]), (150.0, 150.0, 900.0))

    def test_other_transfers_keep_their_fixes(self):
        # a host-offload copy beside a longer memcpy: both transfers, the
        # copies under half of them, so the usual fixes
        ev = list(fixtures.TPU_META) + [
            {"ph": "X", "pid": 1, "tid": 1, "name": "0", "ts": 0, "dur": 1000},
            {"ph": "X", "pid": 1, "tid": 2, "name": "copy-done.1", "ts": 0, "dur": 100,
             "args": {"long_name": OFFLOAD_OPS[2][1]}},
            {"ph": "X", "pid": 1, "tid": 2, "name": "MemcpyH2D.1", "ts": 100, "dur": 300},
            {"ph": "X", "pid": 1, "tid": 2, "name": "Copy-Done.3", "ts": 400, "dur": 100,
             "args": {"long_name": OFFLOAD_OPS[2][1]}}]
        tid = load(self.db, self.td, "m.json", fixtures.doc(ev))
        facts = dict(self.db.execute("SELECT name, value FROM profsum_agg_fact WHERE trace_id=?", (tid,)))
        # Copy-Done.3: the names are compared with case, as xprof does
        self.assertEqual((facts["transfer_duration"], facts["host_offload_duration"]), (400.0, 100.0))
        fixes = self.db.execute("SELECT fixes FROM profsum_advice WHERE trace_id=? AND "
                                "advice_id='large_transfers'", (tid,)).fetchone()[0]
        self.assertEqual(json.loads(fixes)[0], "jax.device_put the inputs ahead of time")
        why = self.db.execute("SELECT explanation FROM profsum_kpis WHERE trace_id=? AND kpi='large_transfers'",
                              (tid,)).fetchone()[0]
        self.assertIn("(host-offload copies 20.0%)", why)


def event_of(pb, name, hlo, ts_us, dur_us):
    """An event of plane builder pb shown as name whose metadata name is
    the HLO text hlo (one metadata entry per text), at ts_us for dur_us."""
    return W.event(pb.eid(hlo, display_name=name), offset_ps=ts_us * US, duration_ps=dur_us * US)


class Cost(DbTestCase):
    """One label's advice reads profsum_kpis about once, not once per rule."""

    def test_one_label_costs_about_its_kpis(self):
        labels = []
        for i in range(6):
            labels.append("t%d" % i)
            load(self.db, self.td, "t%d.json" % i, tpu(
                [("0", 0, 1000), ("1", 1000, 1000)],
                [("fusion.1", 0, 400), ("all-reduce.1", 400, 350 + 20 * i),
                 ("fusion.2", 1000, 300 + 50 * i), ("all-reduce.2", 1400, 350)]))
        one = "SELECT * FROM profsum_advice WHERE label = ?"
        kpis = "SELECT * FROM profsum_kpis WHERE label = ?"
        steps_one = progress_calls(self.db, one, ("t3",), 1)
        steps_kpis = progress_calls(self.db, kpis, ("t3",), 1)
        self.assertGreater(steps_kpis, 0)
        # the rules share one expansion of the KPIs (and the per-KPI rows a
        # second): about 5 times the KPIs' steps on traces this small; a plan
        # that expanded them once per rule took 12 times
        self.assertLess(steps_one, 8 * steps_kpis)
        self.assertLess(steps_one * 4, progress_calls(self.db, "SELECT * FROM profsum_advice", (), 1))
        ops = lambda q: len(self.db.execute("EXPLAIN " + q, ("t3",)).fetchall())
        self.assertLess(ops(one), 6 * ops(kpis))
        # and a label's rows are the whole view's rows of that label
        every = self.db.execute("SELECT * FROM profsum_advice ORDER BY trace_id, rank").fetchall()
        for lab in labels:
            self.assertEqual(self.db.execute(one + " ORDER BY rank", (lab,)).fetchall(),
                             [r for r in every if r[1] == lab])
        self.assertTrue(any(r[3] == "collective_bound" for r in every))


class Generated(unittest.TestCase):
    def test_generated_traces(self):
        with TempDir() as td:
            db = connect()
            for shape in ("tpu", "gpu"):
                out = os.path.join(td.path, "%s.json.gz" % shape)
                subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"),
                                "--size", "1M", "--shape", shape, "--out", out],
                               check=True, stdout=subprocess.DEVNULL)
                db.execute("SELECT profsum_import(?, ?)", (out, shape))
            check_invariants(self, db, "generated")
            self.assertEqual(db.execute("SELECT count(DISTINCT trace_id) FROM profsum_advice").fetchone()[0], 2)


def corpus_paths():
    paths = []
    for name in ("expected_counts.json", "expected_xplane_counts.json"):
        p = os.path.join(CORPUS, name)
        if os.path.exists(p):
            paths += [k for k in json.load(open(p)) if not k.startswith("_")]
    return sorted(set(paths))


@unittest.skipUnless(os.path.exists(os.path.join(CORPUS, "expected_counts.json")), "no corpus")
class Corpus(unittest.TestCase):
    def test_every_corpus_trace(self):
        db = connect()
        for rel in corpus_paths():
            try:
                db.execute("SELECT profsum_import(?, ?)", (os.path.join(CORPUS, rel), rel))
            except Exception:   # files the import refuses (not traces) have no advice
                continue
        self.assertGreater(db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0], 10)
        check_invariants(self, db, "corpus")


if __name__ == "__main__":
    unittest.main()
