"""Device limits, roofline, utilization and the op profile computed at import
(ext/summary/insights_xla.c; views profsum_devices, profsum_roofline,
profsum_utilization, profsum_op_profile, the memory_bandwidth KPI;
docs/roofline.md).

Fixtures are XSpace files written by tests/xspace_writer.py and trace JSON
written here, with known device stats, FLOPs and bytes: every expected
value below is computed by hand in the comments.  Times in the XSpace
fixtures are given in µs and stored in ps (µs × 1e6)."""
import glob
import json
import os
import unittest

import xspace_writer as W
from util import CORPUS, OOM_SQL, DbTestCase, run_oom_sql

US = 10 ** 6


def rows(db, sql, args=()):
    cur = db.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def tpu_xspace(unsorted=False):
    """/device:TPU:0 with limits (peak 100 TFLOP/s = 1e14, HBM 1000 GB/s =
    1e12 bytes/s: ridge 100 FLOPs/byte), two steps of 100 µs and these ops:
      fusion.1  [0,10) and [100,110) µs  flops 5e8, model_flops 4e8, bytes 1e6
                                         each (metadata stats), convolution
      copy.1    [20,40)   flops 1.6e6, bytes 1.6e7 (event stats), data formatting
      while.1   [140,170) no stats; fusion.2 [145,155) nested in it
    and /device:TPU:1 declared without events or stats."""
    d0 = W.PlaneBuilder("/device:TPU:0", id=1)
    d0.plane_stat("peak_teraflops_per_second", double=100.0)
    d0.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
    d0.plane_stat("device_vendor", s="Google")
    d0.plane_stat("device_type_string", s="TPU v4")
    d0.plane_stat("core_count", i64=2)
    d0.plane_stat("clock_rate", u64=1050000)
    d0.plane_stat("memory_size", u64=34359738368)
    fus = d0.eid("fusion.1", stats=[d0.stat("flops", i64=500000000), d0.stat("model_flops", double=4e8),
                                    d0.stat("bytes_accessed", i64=1000000),
                                    d0.stat("hlo_category", s="convolution")])
    steps = [d0.event("1", offset_ps=0, duration_ps=100 * US), d0.event("2", offset_ps=100 * US, duration_ps=100 * US)]
    ops = [W.event(fus, offset_ps=0, duration_ps=10 * US),
           d0.event("copy.1", offset_ps=20 * US, duration_ps=20 * US,
                    stats=[d0.stat("flops", u64=1600000), d0.stat("bytes_accessed", i64=16000000),
                           d0.stat("hlo_category", s="data formatting")]),
           W.event(fus, offset_ps=100 * US, duration_ps=10 * US),
           d0.event("while.1", offset_ps=140 * US, duration_ps=30 * US),
           d0.event("fusion.2", offset_ps=145 * US, duration_ps=10 * US)]
    if unsorted:
        ops = [ops[1], ops[0]] + ops[2:]
    d0.line(id=1, name="Steps", timestamp_ns=1000, events=steps)
    d0.line(id=2, name="XLA Ops", timestamp_ns=1000, events=ops)
    d1 = W.PlaneBuilder("/device:TPU:1", id=2)
    host = W.PlaneBuilder("/host:CPU", id=3)
    host.line(id=1, name="python", timestamp_ns=1000, events=[host.event("train", offset_ps=0, duration_ps=5 * US)])
    return W.xspace([d0.build(), d1.build(), host.build()], hostnames=["h"])


def gpu_xspace():
    """/device:GPU:0 (clock 1,410,000 kHz, 108 SMs, 40 GiB, memory_bandwidth
    1.555e12 bytes/s, compute capability 8.0) with a kernel line: two
    kernels of HLO op dot.3 (module jit_train, name jit(train)/dot_general)
    [0,30) and [40,60) µs, a copy kernel without HLO stats [60,70) µs, and
    a kernel with a 100-character name of fusion.7 [70,75) µs; a host plane
    with 'train' events of steps 5 [0,50) and 6 [50,100) µs."""
    g = W.PlaneBuilder("/device:GPU:0", id=1)
    g.plane_stat("clock_rate", i64=1410000)
    g.plane_stat("core_count", i64=108)
    g.plane_stat("memory_size", i64=42949672960)
    g.plane_stat("memory_bandwidth", u64=1555000000000)
    g.plane_stat("compute_cap_major", i64=8)
    g.plane_stat("compute_cap_minor", i64=0)
    g.plane_stat("device_vendor", s="Nvidia")
    dot = [g.stat("hlo_op", s="dot.3"), g.stat("hlo_module", s="jit_train"),
           g.stat("name", s="jit(train)/dot_general")]
    long_name = "void cutlass::Kernel<" + "x" * 78 + ">"
    assert len(long_name) == 100
    g.line(id=1, name="Stream #7(Kernel)", timestamp_ns=0, events=[
        g.event("sm80_gemm_a", offset_ps=0, duration_ps=30 * US, stats=dot),
        g.event("sm80_gemm_b", offset_ps=40 * US, duration_ps=20 * US, stats=dot),
        g.event("copyBuffer", offset_ps=60 * US, duration_ps=10 * US),
        g.event(long_name, offset_ps=70 * US, duration_ps=5 * US,
                stats=[g.stat("hlo_op", s="fusion.7"), g.stat("hlo_module", s="jit_train")])])
    host = W.PlaneBuilder("/host:CPU", id=2)
    host.line(id=1, name="python", timestamp_ns=0, events=[
        host.event("train", offset_ps=0, duration_ps=50 * US, stats=[host.stat("step_num", i64=5)]),
        host.event("train", offset_ps=50 * US, duration_ps=50 * US, stats=[host.stat("step_num", i64=6)])])
    return W.xspace([g.build(), host.build()], hostnames=["h"]), long_name


def json_trace(names_last=False):
    """A trace JSON as TSL writes it (args as strings): /device:TPU:0 (pid 2)
    XLA Ops thread (tid 1): fusion.1 [0,10) µs model_flops "2000000"
    bytes_accessed "1000" (intensity 2000), fusion.1 again [20,30) µs with
    numbers model_flops 2e6, bytes 1000; copy.2 [30,35) µs bytes only 5000;
    a /host:CPU event with model_flops that is not a device op."""
    meta = [{"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
            {"ph": "M", "pid": 1, "tid": 9, "name": "thread_name", "args": {"name": "python"}}]
    evs = [{"ph": "X", "pid": 2, "tid": 1, "ts": 0, "dur": 10, "name": "fusion.1",
            "args": {"model_flops": "2000000", "bytes_accessed": "1000", "hlo_category": "convolution"}},
           {"ph": "X", "pid": 2, "tid": 1, "ts": 20, "dur": 10, "name": "fusion.1",
            "args": {"model_flops": 2000000, "bytes_accessed": 1000, "hlo_category": "convolution"}},
           {"ph": "X", "pid": 2, "tid": 1, "ts": 30, "dur": 5, "name": "copy.2",
            "args": {"bytes_accessed": "5000"}},
           {"ph": "X", "pid": 1, "tid": 9, "ts": 0, "dur": 40, "name": "host_op",
            "args": {"model_flops": "999"}}]
    return {"traceEvents": (evs + meta) if names_last else (meta + evs)}


class XlaTestCase(DbTestCase):
    def imp(self, name, data, opts=None, label=None):
        path = self.td.write(name, data)
        return self.db.execute("SELECT profsum_import(?, ?, ?)", (path, label, opts)).fetchone()[0]

    def assertClose(self, a, b, msg=None):
        self.assertIsNotNone(a, msg)
        self.assertAlmostEqual(a, b, delta=abs(b) * 1e-12 + 1e-15, msg=msg)


class Devices(XlaTestCase):
    def test_tpu_plane_stats(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        d = rows(self.db, "SELECT * FROM profsum_devices WHERE trace_id=? ORDER BY device", (tid,))
        self.assertEqual([r["device"] for r in d], ["/device:TPU:0", "/device:TPU:1"])
        r = d[0]
        self.assertEqual((r["kind"], r["vendor"], r["model"], r["compute_capability"], r["core_count"],
                          r["clock_hz"], r["memory_bytes"], r["peak_source"], r["has_events"], r["status"]),
                         ("TPU", "Google", "TPU v4", None, 2, 1050000000, 34359738368, "plane_stats", 1, "ok"))
        self.assertEqual(r["peak_flops_per_s"], 1e14)
        self.assertEqual(r["peak_mem_bw_bytes_per_s"], 1e12)
        r = d[1]
        self.assertEqual((r["kind"], r["vendor"], r["peak_flops_per_s"], r["peak_mem_bw_bytes_per_s"],
                          r["peak_source"], r["has_events"]), ("TPU", None, None, None, None, 0))
        # the host plane is no device
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_xla_device").fetchone()[0], 2)

    def test_gpu_plane_stats_and_options(self):
        data, _ = gpu_xspace()
        opts = json.dumps({"device_peaks": {"/device:GPU:0": {"peak_flops_per_s": 3.12e14},
                                            "*": {"peak_flops_per_s": 1.0, "peak_mem_bw_bytes_per_s": 2.0}}})
        tid = self.imp("g.xplane.pb", data, opts)
        r = rows(self.db, "SELECT * FROM profsum_devices WHERE trace_id=?", (tid,))[0]
        self.assertEqual((r["kind"], r["vendor"], r["compute_capability"], r["core_count"], r["clock_hz"],
                          r["memory_bytes"]), ("GPU", "Nvidia", "8.0", 108, 1410000000, 42949672960))
        # flops from the option by name (before "*"), bandwidth from memory_bandwidth
        self.assertEqual(r["peak_flops_per_s"], 3.12e14)
        self.assertEqual(r["peak_mem_bw_bytes_per_s"], 1.555e12)
        self.assertEqual(r["peak_source"], "plane_stats+options")

    def test_options_star_only(self):
        opts = json.dumps({"device_peaks": {"*": {"peak_flops_per_s": 5e13, "peak_mem_bw_bytes_per_s": 8e11}}})
        tid = self.imp("t.xplane.pb", tpu_xspace(), opts)
        r = rows(self.db, "SELECT * FROM profsum_devices WHERE trace_id=? AND device='/device:TPU:1'", (tid,))[0]
        self.assertEqual((r["peak_flops_per_s"], r["peak_mem_bw_bytes_per_s"], r["peak_source"]),
                         (5e13, 8e11, "options"))
        # the plane's own stats win over the option
        r = rows(self.db, "SELECT * FROM profsum_devices WHERE trace_id=? AND device='/device:TPU:0'", (tid,))[0]
        self.assertEqual((r["peak_flops_per_s"], r["peak_source"]), (1e14, "plane_stats"))

    def test_bad_option(self):
        for bad in ({"*": {"peak_flops_per_s": -1}}, {"*": {"peak_flops_per_s": "fast"}}, {"*": 3}):
            with self.assertRaises(Exception) as cm:
                self.imp("t.xplane.pb", tpu_xspace(), json.dumps({"device_peaks": bad}), label="bad")
            self.assertIn("device_peaks", str(cm.exception))
        if self.db.execute("SELECT count(*) FROM sqlite_master WHERE name='profsum_trace'").fetchone()[0]:
            self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0], 0)

    def test_json_devices(self):
        tid = self.imp("t.json", json_trace())
        d = rows(self.db, "SELECT * FROM profsum_devices WHERE trace_id=?", (tid,))
        self.assertEqual(len(d), 1)
        r = d[0]
        self.assertEqual((r["device"], r["kind"], r["peak_flops_per_s"], r["peak_mem_bw_bytes_per_s"],
                          r["peak_source"], r["has_events"], r["status"]),
                         ("/device:TPU:0", "TPU", None, None, None, 1, "ok"))
        self.assertEqual(self.db.execute("SELECT source, n_device_ops, n_model_flops_ops, n_bytes_ops "
                                         "FROM profsum_agg_xla_trace").fetchone(), ("json", 3, 2, 3))


    def test_json_device_pids_beyond_2_31(self):
        # any non-negative pid names a process, as the summary reads it: a
        # /device: process at pid 2^31, 2^32 + 2 (2 with bit 32 set) or
        # 2^63 - 1 has its row and its ops, each on its own device
        pids = {"/device:TPU:0": 2, "/device:TPU:1": 2 ** 31, "/device:TPU:2": 2 ** 32 + 2,
                "/device:TPU:3": 2 ** 63 - 1}
        evs = []
        for i, (dev, pid) in enumerate(sorted(pids.items())):
            evs += [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": dev}},
                    {"ph": "M", "pid": pid, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}}]
            evs += [{"ph": "X", "pid": pid, "tid": 1, "ts": 10 * k, "dur": 5, "name": "op%d" % i,
                     "args": {"model_flops": 100, "bytes_accessed": 10}} for k in range(i + 1)]
        tid = self.imp("big.json", {"traceEvents": evs})
        self.assertEqual(self.db.execute("SELECT device, kind, has_events, status FROM profsum_devices "
                                         "WHERE trace_id=? ORDER BY device", (tid,)).fetchall(),
                         [(d, "TPU", 1, "ok") for d in sorted(pids)])
        self.assertEqual(self.db.execute("SELECT device, name, count, model_flops FROM profsum_roofline "
                                         "WHERE trace_id=? AND level='op' ORDER BY device", (tid,)).fetchall(),
                         [(d, "op%d" % i, i + 1, 100.0 * (i + 1)) for i, d in enumerate(sorted(pids))])
        self.assertEqual(self.db.execute("SELECT n_device_ops FROM profsum_agg_xla_trace WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 1 + 2 + 3 + 4)
        # the summary counts the same devices and ops
        self.assertEqual(self.db.execute("SELECT device, n_ops FROM profsum_agg_device WHERE trace_id=? "
                                         "ORDER BY device", (tid,)).fetchall(),
                         [(d, i + 1) for i, d in enumerate(sorted(pids))])


class Roofline(XlaTestCase):
    def roof(self, tid, level="op"):
        return {(r["name"], r["device"]): r for r in
                rows(self.db, "SELECT * FROM profsum_roofline WHERE trace_id=? AND level=?", (tid, level))}

    def test_tpu_roofline(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        r = self.roof(tid)
        self.assertEqual(set(n for n, _ in r), {"fusion.1", "copy.1", "while.1", "fusion.2"})
        f = r[("fusion.1", "/device:TPU:0")]
        # 2 events, 20 µs; flops 1e9, model_flops 8e8, bytes 2e6
        self.assertEqual((f["count"], f["flops"], f["model_flops"], f["bytes_accessed"]), (2, 1e9, 8e8, 2000000))
        self.assertClose(f["device_time_us"], 20.0)
        self.assertClose(f["intensity"], 500.0)                 # 1e9 / 2e6
        self.assertClose(f["achieved_flops_per_s"], 5e13)       # 1e9 / 20e-6
        self.assertClose(f["achieved_bytes_per_s"], 1e11)       # 2e6 / 20e-6
        self.assertClose(f["flops_fraction"], 0.5)              # 5e13 / 1e14
        self.assertClose(f["bw_fraction"], 0.1)                 # 1e11 / 1e12
        self.assertClose(f["ridge_intensity"], 100.0)           # 1e14 / 1e12
        self.assertEqual((f["bound"], f["status"]), ("compute", "ok"))
        c = r[("copy.1", "/device:TPU:0")]
        self.assertClose(c["intensity"], 0.1)                   # 1.6e6 / 1.6e7
        self.assertClose(c["achieved_bytes_per_s"], 8e11)       # 1.6e7 / 20e-6
        self.assertClose(c["bw_fraction"], 0.8)
        self.assertClose(c["flops_fraction"], 8e-4)             # 8e10 / 1e14
        self.assertEqual((c["bound"], c["status"]), ("memory", "ok"))
        w = r[("while.1", "/device:TPU:0")]
        self.assertEqual((w["flops"], w["bytes_accessed"], w["intensity"], w["flops_fraction"], w["bound"],
                          w["status"]), (None, None, None, None, None, "no_flops_or_bytes"))
        cat = self.roof(tid, "hlo_category")
        self.assertEqual(set(n for n, _ in cat), {"convolution", "data formatting", "(none)"})
        self.assertClose(cat[("(none)", "/device:TPU:0")]["device_time_us"], 40.0)

    def test_memory_bound_query(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        got = self.db.execute("SELECT name FROM profsum_roofline WHERE trace_id=? AND level='op' "
                              "AND bound='memory' ORDER BY device_time_us DESC", (tid,)).fetchall()
        self.assertEqual(got, [("copy.1",)])

    def test_json_model_flops(self):
        # no flops in JSON: model_flops stands in; limits from the option
        opts = json.dumps({"device_peaks": {"/device:TPU:0": {"peak_flops_per_s": 1e12,
                                                               "peak_mem_bw_bytes_per_s": 1e9}}})
        for names_last in (False, True):
            tid = self.imp("t%d.json" % names_last, json_trace(names_last), opts)
            r = self.roof(tid)
            self.assertEqual(set(r), {("fusion.1", "/device:TPU:0"), ("copy.2", "/device:TPU:0")})
            f = r[("fusion.1", "/device:TPU:0")]
            self.assertEqual((f["count"], f["flops"], f["model_flops"], f["bytes_accessed"]), (2, None, 4e6, 2000))
            self.assertClose(f["intensity"], 2000.0)               # 4e6 / 2000
            self.assertClose(f["achieved_flops_per_s"], 2e11)      # 4e6 / 20e-6
            self.assertClose(f["flops_fraction"], 0.2)             # 2e11 / 1e12
            self.assertClose(f["achieved_bytes_per_s"], 1e8)       # 2000 / 20e-6
            self.assertClose(f["bw_fraction"], 0.1)
            self.assertEqual((f["bound"], f["status"]), ("compute", "ok"))   # ridge 1000
            c = r[("copy.2", "/device:TPU:0")]
            self.assertEqual((c["intensity"], c["bound"], c["status"]), (None, None, "no_flops"))
            self.assertClose(c["bw_fraction"], 1.0)                # 5000 / 5e-6 / 1e9

    def test_bound_needs_every_operand(self):
        """bound is NULL when any of FLOPs, bytes or the two peaks is unknown
        (a NULL comparison must not fall through to 'memory'): an op with
        FLOPs and no bytes, and a GPU with a bandwidth but no FLOP/s peak."""
        d = W.PlaneBuilder("/device:TPU:0", id=1)
        d.plane_stat("peak_teraflops_per_second", double=100.0)
        d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
        d.line(id=1, name="XLA Ops", timestamp_ns=0, events=[
            d.event("a.1", offset_ps=0, duration_ps=10 * US, stats=[d.stat("flops", i64=10 ** 9)])])
        g = W.PlaneBuilder("/device:GPU:0", id=2)
        g.plane_stat("memory_bandwidth", u64=10 ** 12)
        g.line(id=1, name="Stream #1(Kernel)", timestamp_ns=0, events=[
            g.event("k2", offset_ps=0, duration_ps=10 * US,
                    stats=[g.stat("flops", i64=10 ** 9), g.stat("bytes_accessed", i64=10)])])
        tid = self.imp("b.xplane.pb", W.xspace([d.build(), g.build()], hostnames=["h"]))
        r = self.roof(tid)
        a, k = r[("a.1", "/device:TPU:0")], r[("k2", "/device:GPU:0")]
        self.assertEqual((a["bound"], a["status"]), (None, "no_bytes"))
        self.assertEqual((k["bound"], k["status"]), (None, "no_device_limits"))
        self.assertClose(k["intensity"], 1e8)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_roofline WHERE trace_id=? AND bound='memory'",
                                         (tid,)).fetchone()[0], 0)

    def test_gpu_without_flops(self):
        data, _ = gpu_xspace()
        tid = self.imp("g.xplane.pb", data)
        st = self.db.execute("SELECT DISTINCT status FROM profsum_roofline WHERE trace_id=?", (tid,)).fetchall()
        self.assertEqual(st, [("no_flops_or_bytes",)])
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_roofline WHERE trace_id=? AND "
                                         "(intensity IS NOT NULL OR flops_fraction IS NOT NULL)", (tid,)).fetchone()[0], 0)


class Utilization(XlaTestCase):
    def util(self, tid):
        return {(r["device"], r["step"]): r for r in
                rows(self.db, "SELECT * FROM profsum_utilization WHERE trace_id=?", (tid,))}

    def test_tpu_steps(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        u = self.util(tid)
        self.assertEqual(set(u), {("/device:TPU:0", None), ("/device:TPU:0", 1), ("/device:TPU:0", 2)})
        s1 = u[("/device:TPU:0", 1)]
        # busy [0,10) + [20,40) = 30 µs; MFU FLOPs 4e8 (model_flops) + 1.6e6 (flops) = 4.016e8;
        # bytes 1e6 + 1.6e7 = 1.7e7
        self.assertClose(s1["wall_us"], 100.0)
        self.assertClose(s1["busy_us"], 30.0)
        self.assertClose(s1["busy_share"], 0.3)
        self.assertClose(s1["flops"], 4.016e8)
        self.assertEqual(s1["bytes_accessed"], 17000000)
        self.assertClose(s1["mfu_busy"], 4.016e8 / 3e9)      # / (30e-6 × 1e14)
        self.assertClose(s1["mfu_wall"], 0.04016)            # / (100e-6 × 1e14)
        self.assertClose(s1["hbm_util_busy"], 1.7e7 / 3e7)   # / (30e-6 × 1e12)
        self.assertClose(s1["hbm_util_wall"], 0.17)
        self.assertEqual((s1["step_source"], s1["status"]), ("device_steps", "ok"))
        s2 = u[("/device:TPU:0", 2)]
        # busy [100,110) + [140,170) (fusion.2 inside) = 40 µs; 4e8 FLOPs, 1e6 bytes
        self.assertClose(s2["busy_us"], 40.0)
        self.assertClose(s2["mfu_busy"], 0.1)
        self.assertClose(s2["mfu_wall"], 0.04)
        self.assertClose(s2["hbm_util_busy"], 0.025)
        self.assertClose(s2["hbm_util_wall"], 0.01)
        cap = u[("/device:TPU:0", None)]
        self.assertClose(cap["wall_us"], 170.0)
        self.assertClose(cap["busy_us"], 70.0)
        self.assertEqual(cap["bytes_accessed"], 18000000)

    def test_epoch_steps_exact(self):
        # Line times since the epoch (as JAX writes them): the absolute µs of
        # a step's start is not a double exactly (1700000000123456.789 µs
        # rounds by 0.039 µs), yet the steps cut the ops where they are: an
        # op that ends where step 1 ends is all in step 1.
        d0 = W.PlaneBuilder("/device:TPU:0", id=1)
        d0.plane_stat("peak_teraflops_per_second", double=100.0)
        ts = 1700000000123456789
        d0.line(id=1, name="Steps", timestamp_ns=ts, events=[
            d0.event("1", offset_ps=0, duration_ps=100 * US),
            d0.event("2", offset_ps=100 * US, duration_ps=100 * US)])
        d0.line(id=2, name="XLA Ops", timestamp_ns=ts, events=[
            d0.event("fusion.1", offset_ps=90 * US, duration_ps=10 * US,
                     stats=[d0.stat("flops", i64=1000)]),
            d0.event("fusion.2", offset_ps=100 * US, duration_ps=5 * US,
                     stats=[d0.stat("flops", i64=2000)])])
        tid = self.imp("e.xplane.pb", W.xspace([d0.build()], hostnames=["h"]))
        u = self.util(tid)
        self.assertEqual(u[("/device:TPU:0", 1)]["busy_us"], 10.0)
        self.assertEqual(u[("/device:TPU:0", 1)]["flops"], 1000)
        self.assertEqual(u[("/device:TPU:0", 2)]["busy_us"], 5.0)
        self.assertEqual(u[("/device:TPU:0", 2)]["flops"], 2000)

    def test_op_straddling_a_step_boundary(self):
        """An op [90, 190) µs at 90 % of peak FLOP/s and 50 % of the
        bandwidth, steps [0, 100) and [100, 200): its FLOPs and bytes are
        spread by time as its busy time is (10 µs in step 1, 90 in step 2),
        so each step shows 0.9 and 0.5, never more than 1."""
        d = W.PlaneBuilder("/device:TPU:0", id=1)
        d.plane_stat("peak_teraflops_per_second", double=100.0)
        d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
        d.line(id=1, name="Steps", timestamp_ns=0, events=[
            d.event(str(k), offset_ps=(k - 1) * 100 * US, duration_ps=100 * US) for k in (1, 2)])
        d.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            d.event("dot", offset_ps=90 * US, duration_ps=100 * US,
                    stats=[d.stat("flops", i64=9 * 10 ** 9), d.stat("bytes_accessed", i64=5 * 10 ** 7)])])
        tid = self.imp("s.xplane.pb", W.xspace([d.build()], hostnames=["h"]))
        u = {r["step"]: r for r in rows(self.db, "SELECT * FROM profsum_utilization WHERE trace_id=?", (tid,))}
        for step, busy in ((1, 10.0), (2, 90.0)):
            self.assertClose(u[step]["busy_us"], busy)
            self.assertClose(u[step]["flops"], 9e9 * busy / 100)
            self.assertClose(u[step]["mfu_busy"], 0.9)
            self.assertClose(u[step]["hbm_util_busy"], 0.5)
            self.assertEqual(u[step]["exact"], 1)
        self.assertClose(u[None]["mfu_busy"], 0.9)
        self.assertClose(u[None]["flops"], 9e9)

    def test_host_steps_gpu(self):
        data, _ = gpu_xspace()
        tid = self.imp("g.xplane.pb", data)
        u = self.util(tid)
        self.assertEqual(set(u), {("/device:GPU:0", None), ("/device:GPU:0", 5), ("/device:GPU:0", 6)})
        # step 5 [0,50): kernels [0,30) [40,50) → 40 µs; step 6 [50,100): [50,60) [60,70) [70,75) → 25 µs
        self.assertClose(u[("/device:GPU:0", 5)]["busy_us"], 40.0)
        self.assertClose(u[("/device:GPU:0", 6)]["busy_us"], 25.0)
        self.assertEqual(u[("/device:GPU:0", 5)]["step_source"], "host_steps")
        self.assertEqual(u[("/device:GPU:0", 5)]["status"], "no_flops_or_bytes")
        self.assertIsNone(u[("/device:GPU:0", 5)]["mfu_busy"])
        self.assertClose(u[("/device:GPU:0", None)]["busy_us"], 65.0)

    def test_streams_overlap(self):
        # two streams of one GPU: [0,10) [20,30) and [5,25) µs → busy [0,30); host steps 5 [0,15)
        # and 6 [15,40): 15 µs each; the second stream read out of order
        g = W.PlaneBuilder("/device:GPU:0")
        g.line(id=1, name="Stream #1", timestamp_ns=0, events=[
            g.event("a", offset_ps=0, duration_ps=10 * US), g.event("b", offset_ps=20 * US, duration_ps=10 * US)])
        g.line(id=2, name="Stream #2", timestamp_ns=0, events=[
            g.event("d", offset_ps=12 * US, duration_ps=1 * US), g.event("c", offset_ps=5 * US, duration_ps=20 * US)])
        h = W.PlaneBuilder("/host:CPU")
        h.line(id=1, name="python", timestamp_ns=0, events=[
            h.event("train", offset_ps=0, duration_ps=15 * US, stats=[h.stat("step_num", i64=5)]),
            h.event("train", offset_ps=15 * US, duration_ps=25 * US, stats=[h.stat("step_num", i64=6)])])
        tid = self.imp("s.xplane.pb", W.xspace([g.build(), h.build()]))
        u = self.util(tid)
        self.assertClose(u[("/device:GPU:0", None)]["busy_us"], 30.0)
        self.assertClose(u[("/device:GPU:0", None)]["wall_us"], 30.0)
        self.assertClose(u[("/device:GPU:0", 5)]["busy_us"], 15.0)
        self.assertClose(u[("/device:GPU:0", 6)]["busy_us"], 15.0)
        self.assertClose(u[("/device:GPU:0", 6)]["wall_us"], 25.0)

    def big_line(self, step_gap_us):
        """/device:TPU:0 with 3 steps of 1,000 ops each (1 µs ops every 2 µs,
        flops 1e6 and 10 bytes each): more idle gaps and FLOP records than a
        line keeps (1,024), so they are merged; steps step_gap_us apart."""
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.plane_stat("peak_teraflops_per_second", double=1.0)
        pb.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1.0)
        op = pb.eid("fusion.1", stats=[pb.stat("flops", i64=1000000), pb.stat("bytes_accessed", i64=10)])
        steps, ops = [], []
        for k in range(3):
            base = k * (1999 + step_gap_us)
            steps.append(pb.event(str(k), offset_ps=base * US, duration_ps=1999 * US))
            ops += [W.event(op, offset_ps=(base + 2 * i) * US, duration_ps=US) for i in range(1000)]
        pb.line(id=1, name="Steps", timestamp_ns=0, events=steps)
        pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=ops)
        return W.xspace([pb.build()])

    def test_many_gaps_exact_at_idle_step_boundaries(self):
        # merged spans never reach across the 101 µs between steps: exact
        tid = self.imp("m.xplane.pb", self.big_line(101))
        u = self.util(tid)
        for k in range(3):
            r = u[("/device:TPU:0", k)]
            self.assertEqual(r["exact"], 1, k)
            self.assertClose(r["busy_us"], 1000.0)
            self.assertClose(r["wall_us"], 1999.0)
            self.assertClose(r["flops"], 1e9)
            self.assertEqual(r["bytes_accessed"], 10000)
            self.assertClose(r["mfu_busy"], 1e9 / (1000e-6 * 1e12))
        cap = u[("/device:TPU:0", None)]
        self.assertEqual((cap["exact"], cap["bytes_accessed"]), (1, 30000))
        self.assertClose(cap["busy_us"], 3000.0)
        self.assertClose(cap["flops"], 3e9)
        # the op aggregate is exact whatever was merged
        r = rows(self.db, "SELECT * FROM profsum_roofline WHERE trace_id=? AND level='op'", (tid,))[0]
        self.assertEqual((r["count"], r["flops"], r["bytes_accessed"]), (3000, 3e9, 30000))

    def test_many_gaps_prorated(self):
        # steps 1 µs apart, as close as the ops: a merged span may straddle a
        # step boundary; such a step says exact = 0 and its figures stay close
        tid = self.imp("p.xplane.pb", self.big_line(1))
        u = self.util(tid)
        tot_busy = tot_fl = 0
        for k in range(3):
            r = u[("/device:TPU:0", k)]
            self.assertIn(r["exact"], (0, 1))
            self.assertAlmostEqual(r["busy_us"], 1000.0, delta=5.0)
            self.assertAlmostEqual(r["flops"], 1e9, delta=5e6)
            tot_busy += r["busy_us"]
            tot_fl += r["flops"]
        self.assertAlmostEqual(tot_busy, 3000.0, delta=3.0)
        self.assertAlmostEqual(tot_fl, 3e9, delta=3e6)
        self.assertEqual(u[("/device:TPU:0", None)]["exact"], 1)

    def test_kpi_memory_bandwidth(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        k = rows(self.db, "SELECT * FROM profsum_kpis WHERE trace_id=? AND kpi='memory_bandwidth'", (tid,))
        self.assertEqual(len(k), 1)
        # 1.8e7 bytes / (70e-6 s busy × 1e12 bytes/s) = 0.257142…, but while.1 (self 20 µs) and
        # fusion.2 (10 µs) carry no bytes_accessed: 30 of the 70 µs of op self time (42.9 %)
        # have no byte count, so 0.257 is a lower bound under 0.60: 'unavailable'
        self.assertEqual((k[0]["device"], k[0]["unit"], k[0]["band"], k[0]["value"]),
                         ("/device:TPU:0", "fraction", "unavailable", None))
        self.assertIn("moved at least 25.7% of its peak", k[0]["explanation"])
        self.assertIn("take 42.9% of its op time", k[0]["explanation"])
        # without bytes or a bandwidth limit the reference's 'unavailable' row stays
        data, _ = gpu_xspace()
        tid2 = self.imp("g.xplane.pb", data)
        k = rows(self.db, "SELECT * FROM profsum_kpis WHERE trace_id=? AND kpi='memory_bandwidth'", (tid2,))
        self.assertEqual([(r["band"], r["value"]) for r in k], [("unavailable", None)])

    def test_kpi_bands(self):
        # copy.1 alone: 1.6e7 bytes in 20 µs at 1e12 → 0.8: good; with 1e9/... of the option: warning
        for bw, band in ((1.0e12, "good"), (1.6e12, "warning"), (2.0e12, "warning"), (2.1e12, "bad")):
            pb = W.PlaneBuilder("/device:TPU:0")
            pb.plane_stat("peak_hbm_bw_gigabytes_per_second", double=bw / 1e9)
            pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
                pb.event("copy.1", offset_ps=0, duration_ps=20 * US, stats=[pb.stat("bytes_accessed", i64=16000000)])])
            tid = self.imp("b%d.xplane.pb" % int(bw / 1e9), W.xspace([pb.build()]))
            v, b = self.db.execute("SELECT value, band FROM profsum_kpis WHERE trace_id=? AND "
                                   "kpi='memory_bandwidth'", (tid,)).fetchone()
            self.assertClose(v, 1.6e7 / 20e-6 / bw)
            self.assertEqual(b, band, bw)

    def test_zero_bytes_while_busy_is_unknown(self):
        """A device whose ops all say bytes_accessed 0 (a Pallas kernel's
        custom call, which XLA cannot cost) has no bandwidth figure: the
        KPI is 'unavailable' with value NULL and says why, profsum_utilization
        has NULL hbm_util_* with status zero_bytes (the MFU stays), no
        low_memory_bandwidth advice, and the xprof compute_bound rule, which
        would read the 0 as an idle HBM, does not fire.  A second device with
        real bytes (and no FLOPs) keeps its figures."""
        d0 = W.PlaneBuilder("/device:TPU:0", id=1)
        d0.plane_stat("peak_teraflops_per_second", double=1.0)        # 1e12 FLOP/s
        d0.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
        kern = [d0.stat("flops", i64=9 * 10 ** 6), d0.stat("bytes_accessed", i64=0),
                d0.stat("hlo_category", s="custom-call")]
        # 9e6 FLOPs in 10 µs at 1e12: MFU 0.9 (> 70 %, compute_bound's side)
        d0.line(id=1, name="Steps", timestamp_ns=0, events=[d0.event("1", offset_ps=0, duration_ps=40 * US)])
        d0.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            d0.event("matmul_kernel.1", offset_ps=0, duration_ps=10 * US, stats=kern),
            d0.event("matmul_kernel.1", offset_ps=20 * US, duration_ps=10 * US, stats=kern)])
        d1 = W.PlaneBuilder("/device:TPU:1", id=2)
        d1.plane_stat("peak_teraflops_per_second", double=1.0)
        d1.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
        d1.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            d1.event("copy.1", offset_ps=0, duration_ps=20 * US, stats=[d1.stat("bytes_accessed", i64=4 * 10 ** 6)])])
        tid = self.imp("z.xplane.pb", W.xspace([d0.build(), d1.build()], hostnames=["h"]))
        k = {r["device"]: r for r in rows(self.db, "SELECT * FROM profsum_kpis WHERE trace_id=? "
                                                    "AND kpi='memory_bandwidth'", (tid,))}
        self.assertEqual(sorted(k), ["/device:TPU:0", "/device:TPU:1"])
        z = k["/device:TPU:0"]
        self.assertEqual((z["value"], z["band"]), (None, "unavailable"))
        self.assertIn("0 bytes", z["explanation"])
        self.assertIn("busy 0.020 ms", z["explanation"])
        # 4e6 bytes / (20e-6 s × 1e12 bytes/s) = 0.2: bad
        self.assertEqual(k["/device:TPU:1"]["band"], "bad")
        self.assertClose(k["/device:TPU:1"]["value"], 0.2)
        u = {(r["device"], r["step"]): r for r in rows(self.db, "SELECT * FROM profsum_utilization WHERE trace_id=?",
                                                       (tid,))}
        for key in (("/device:TPU:0", None), ("/device:TPU:0", 1)):
            self.assertEqual((u[key]["bytes_accessed"], u[key]["hbm_util_busy"], u[key]["hbm_util_wall"],
                              u[key]["status"]), (0, None, None, "zero_bytes"), key)
        self.assertClose(u[("/device:TPU:0", None)]["mfu_busy"], 0.9)
        self.assertClose(u[("/device:TPU:1", None)]["hbm_util_busy"], 0.2)
        self.assertEqual(u[("/device:TPU:1", None)]["status"], "no_flops")
        adv = [r[0] for r in self.db.execute("SELECT advice_id FROM profsum_advice WHERE trace_id=?", (tid,))]
        self.assertEqual(adv.count("low_memory_bandwidth"), 1)        # TPU:1's, not TPU:0's
        ti = self.db.execute("SELECT title FROM profsum_advice WHERE trace_id=? AND advice_id='low_memory_bandwidth'",
                             (tid,)).fetchone()[0]
        self.assertIn("/device:TPU:1", ti)
        self.assertNotIn("compute_bound", adv)
        self.assertNotIn("memory_bound", adv)

    def test_some_ops_with_zero_bytes(self):
        """Ops that say 0 bytes beside ops with bytes: the device's figure
        is a lower bound.  Self time in zero-byte ops / all op self time:
          TPU:0  kernel 2 × 10 µs (9e6 FLOPs, 0 bytes), add.1 1 µs 4096 B:
                 share 20/21, figure 4096 / (21e-6 × 1e12) ≈ 0.0002 < 0.60:
                 'unavailable' (a lower bound tells no bad band), no advice
                 from it, no compute_bound (MFU 18e6 / 21e-6 / 1e12 = 0.857)
          TPU:1  copy.1 19 µs 1.9e7 B, kernel 1 µs 0 B: share 0.05, figure
                 1.9e7 / (20e-6 × 1e12) = 0.95: good, said to be a lower bound
          TPU:2  copy.2 19 µs 1.9e6 B, kernel 1 µs 0 B: share 0.05 under
                 10 %: bad (0.095), as the bytes given say."""
        planes = []
        spec = [("/device:TPU:0", [("matmul_kernel.1", 0, 10, 9 * 10 ** 6, 0), ("matmul_kernel.1", 20, 10, 9 * 10 ** 6, 0),
                                   ("add.1", 40, 1, None, 4096)]),
                ("/device:TPU:1", [("copy.1", 0, 19, None, 19 * 10 ** 6), ("k.1", 19, 1, None, 0)]),
                ("/device:TPU:2", [("copy.2", 0, 19, None, 19 * 10 ** 5), ("k.2", 19, 1, None, 0)])]
        for i, (dev, ops) in enumerate(spec):
            d = W.PlaneBuilder(dev, id=i + 1)
            d.plane_stat("peak_teraflops_per_second", double=1.0)
            d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
            evs = []
            for name, t0, dur, fl, by in ops:
                st = [d.stat("bytes_accessed", i64=by)]
                if fl is not None:
                    st.append(d.stat("flops", i64=fl))
                evs.append(d.event(name, offset_ps=t0 * US, duration_ps=dur * US, stats=st))
            d.line(id=2, name="XLA Ops", timestamp_ns=0, events=evs)
            planes.append(d.build())
        tid = self.imp("m.xplane.pb", W.xspace(planes, hostnames=["h"]))
        k = {r["device"]: r for r in rows(self.db, "SELECT * FROM profsum_kpis WHERE trace_id=? "
                                                    "AND kpi='memory_bandwidth'", (tid,))}
        z = k["/device:TPU:0"]
        self.assertEqual((z["value"], z["band"]), (None, "unavailable"))
        self.assertIn("at least 0.02% of its peak", z["explanation"])
        self.assertIn("take 95.2% of its op time", z["explanation"])
        g = k["/device:TPU:1"]
        self.assertEqual(g["band"], "good")
        self.assertClose(g["value"], 0.95)
        self.assertEqual(g["explanation"], "/device:TPU:1 moved at least 95.0% of its peak memory bandwidth "
                                           "(1000 GB/s) while busy (ops that take 5.0% of its op time have no "
                                           "byte count)")
        b = k["/device:TPU:2"]
        self.assertEqual(b["band"], "bad")
        self.assertClose(b["value"], 0.095)
        adv = [r[0] for r in self.db.execute("SELECT advice_id FROM profsum_advice WHERE trace_id=?", (tid,))]
        self.assertNotIn("compute_bound", adv)
        ti = self.db.execute("SELECT group_concat(title) FROM profsum_advice WHERE trace_id=? "
                             "AND advice_id='low_memory_bandwidth'", (tid,)).fetchone()[0]
        self.assertIn("/device:TPU:2", ti)
        self.assertNotIn("/device:TPU:0", ti)
        # the edges (peaks 1e12 FLOP/s and bytes/s; ops of 10 µs):
        #   TPU:0  exactly 0.60 (6e6 B in 10 µs) beside a zero-byte op: share 0.5: a lower bound
        #          at the threshold tells no band
        #   TPU:1  copy 10 µs 3e6 B on XLA Ops; a zero-byte op only on the Async XLA Ops line
        #          (overlapping): not counted, share 0: bad (0.30)
        #   TPU:2  9e6 FLOPs and 9e6 B in 10 µs, a 1 µs op without bytes_accessed and a 5 µs
        #          zero-byte op: share 6/16, figure 9e6 / 16e-6 / 1e12 = 0.5625: unavailable,
        #          and left out of the compute_bound / memory_bound figures
        def dev(i, xla, asy=()):
            d = W.PlaneBuilder("/device:TPU:%d" % i, id=i + 1)
            d.plane_stat("peak_teraflops_per_second", double=1.0)
            d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)

            def evs(ops):
                out = []
                for name, t0, dur, fl, by in ops:
                    st = [] if by is None else [d.stat("bytes_accessed", i64=by)]
                    if fl is not None:
                        st.append(d.stat("flops", i64=fl))
                    out.append(d.event(name, offset_ps=t0 * US, duration_ps=dur * US, stats=st))
                return out
            d.line(id=2, name="XLA Ops", timestamp_ns=0, events=evs(xla))
            if asy:
                d.line(id=3, name="Async XLA Ops", timestamp_ns=0, events=evs(asy))
            return d.build()
        t3 = self.imp("e.xplane.pb", W.xspace([
            dev(0, [("copy.1", 0, 10, None, 12 * 10 ** 6), ("k.1", 10, 10, None, 0)]),
            dev(1, [("copy.2", 0, 10, None, 3 * 10 ** 6)], [("async.1", 0, 10, None, 0)]),
            dev(2, [("fusion.1", 0, 10, 9 * 10 ** 6, 9 * 10 ** 6), ("x.1", 10, 1, None, None),
                    ("k.2", 11, 5, None, 0)])], hostnames=["h"]))
        k = {r["device"]: r for r in rows(self.db, "SELECT * FROM profsum_kpis WHERE trace_id=? "
                                                    "AND kpi='memory_bandwidth'", (t3,))}
        self.assertEqual((k["/device:TPU:0"]["value"], k["/device:TPU:0"]["band"]), (None, "unavailable"))
        self.assertIn("at least 60.0%", k["/device:TPU:0"]["explanation"])
        self.assertEqual(k["/device:TPU:1"]["band"], "bad")
        self.assertClose(k["/device:TPU:1"]["value"], 0.3)
        self.assertNotIn("at least", k["/device:TPU:1"]["explanation"])
        self.assertEqual((k["/device:TPU:2"]["value"], k["/device:TPU:2"]["band"]), (None, "unavailable"))
        self.assertIn("take 37.5% of its op time", k["/device:TPU:2"]["explanation"])
        adv = [r[0] for r in self.db.execute("SELECT advice_id FROM profsum_advice WHERE trace_id=?", (t3,))]
        self.assertNotIn("memory_bound", adv)
        self.assertNotIn("compute_bound", adv)
        # a lower bound above 0.60 still tells: copy.1 9e6 B and 1e6 FLOPs in 10 µs, a 2 µs
        # zero-byte op (share 2/12 ≥ 10 %): HBM at least 9e6 / 12e-6 / 1e12 = 0.75 (good, and
        # ≥ 0.70) with compute 1e6 / 12e-6 / 1e12 = 0.083 (< 0.50): memory_bound stays
        t4 = self.imp("f.xplane.pb", W.xspace([
            dev(0, [("copy.1", 0, 10, 10 ** 6, 9 * 10 ** 6), ("k.1", 10, 2, None, 0)])], hostnames=["h"]))
        self.assertEqual(self.db.execute("SELECT band FROM profsum_kpis WHERE trace_id=? AND kpi='memory_bandwidth'",
                                         (t4,)).fetchone()[0], "good")
        self.assertIn("memory_bound", [r[0] for r in self.db.execute(
            "SELECT advice_id FROM profsum_advice WHERE trace_id=?", (t4,))])
        # the device without FLOPs and with only zero-byte ops: no_flops_or_bytes
        d = W.PlaneBuilder("/device:TPU:0", id=1)
        d.plane_stat("peak_teraflops_per_second", double=1.0)
        d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
        d.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
            d.event("k.1", offset_ps=0, duration_ps=US, stats=[d.stat("bytes_accessed", i64=0)])])
        t2 = self.imp("n.xplane.pb", W.xspace([d.build()], hostnames=["h"]))
        self.assertEqual(self.db.execute("SELECT hbm_util_busy, status FROM profsum_utilization WHERE trace_id=?",
                                         (t2,)).fetchone(), (None, "no_flops_or_bytes"))


class OpProfile(XlaTestCase):
    def prof(self, tid, level):
        return {r["name"]: r for r in rows(self.db, "SELECT * FROM profsum_op_profile WHERE trace_id=? AND level=?",
                                           (tid, level))}

    def test_tpu_self_time(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        p = self.prof(tid, "hlo_op")
        # device time of all device ops: 10+20+10+30+10 = 80 µs
        self.assertEqual(p["fusion.1"]["count"], 2)
        self.assertClose(p["fusion.1"]["total_us"], 20.0)
        self.assertClose(p["fusion.1"]["share"], 0.25)
        self.assertClose(p["while.1"]["total_us"], 30.0)
        self.assertClose(p["while.1"]["self_us"], 20.0)       # less fusion.2
        self.assertClose(p["while.1"]["self_share"], 0.25)
        self.assertClose(p["fusion.2"]["self_us"], 10.0)
        self.assertEqual(p["while.1"]["attribution"], "event_name")
        self.assertEqual([(r["rank"], r["name"]) for r in sorted(p.values(), key=lambda r: r["rank"])],
                         [(0, "while.1"), (1, "copy.1"), (2, "fusion.1"), (3, "fusion.2")])
        c = self.prof(tid, "hlo_category")
        self.assertClose(c["convolution"]["share"], 0.25)
        self.assertClose(c["(none)"]["total_us"], 40.0)
        self.assertClose(c["(none)"]["self_us"], 30.0)
        self.assertClose(sum(r["share"] for r in c.values()), 1.0)

    def test_unsorted_line(self):
        tid = self.imp("u.xplane.pb", tpu_xspace(unsorted=True))
        p = self.prof(tid, "hlo_op")
        self.assertIsNone(p["while.1"]["self_us"])
        self.assertClose(p["while.1"]["total_us"], 30.0)
        self.assertEqual(self.db.execute("SELECT unsorted_lines FROM profsum_agg_xla_trace WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 1)

    def test_gpu_attribution(self):
        data, long_name = gpu_xspace()
        tid = self.imp("g.xplane.pb", data)
        p = self.prof(tid, "hlo_op")
        self.assertEqual(set(p), {"dot.3", "copyBuffer", "fusion.7"})
        d = p["dot.3"]
        self.assertEqual((d["count"], d["kernels"], d["devices"], d["hlo_module"], d["framework_op"],
                          d["attribution"]), (2, 2, 1, "jit_train", "jit(train)/dot_general", "hlo_op"))
        self.assertClose(d["total_us"], 50.0)
        self.assertClose(d["share"], 50.0 / 65.0)          # of 30 + 20 + 10 + 5 µs
        self.assertEqual(p["copyBuffer"]["attribution"], "unattributed")
        m = self.prof(tid, "hlo_module")
        self.assertClose(m["jit_train"]["total_us"], 55.0)
        self.assertClose(m["(none)"]["total_us"], 10.0)
        # a kernel name of 100 characters: shown cut to 80
        k = rows(self.db, "SELECT * FROM profsum_roofline WHERE trace_id=? AND level='op'", (tid,))
        self.assertIn("fusion.7", [r["name"] for r in k])

    def test_display_name(self):
        pb = W.PlaneBuilder("/device:GPU:0")
        long_name = "k" * 100
        pb.line(id=1, name="Stream #1", timestamp_ns=0, events=[pb.event(long_name, offset_ps=0, duration_ps=US)])
        tid = self.imp("d.xplane.pb", W.xspace([pb.build()]))
        r = rows(self.db, "SELECT name, display_name FROM profsum_op_profile WHERE trace_id=? AND level='hlo_op'",
                 (tid,))[0]
        self.assertEqual(r["name"], long_name)
        self.assertEqual(r["display_name"], "k" * 79 + "\u2026")
        self.assertEqual(len(r["display_name"]), 80)

    def test_json_matches_xplane_shape(self):
        tid = self.imp("t.json", json_trace())
        p = self.prof(tid, "hlo_op")
        self.assertEqual(set(p), {"fusion.1", "copy.2"})      # the host op is no device op
        self.assertClose(p["fusion.1"]["total_us"], 20.0)
        self.assertClose(p["fusion.1"]["share"], 0.8)


class NotComputed(XlaTestCase):
    VIEWS = ("profsum_devices", "profsum_roofline", "profsum_utilization", "profsum_op_profile")

    def test_older_import(self):
        tid = self.imp("t.xplane.pb", tpu_xspace())
        # what an import by a profsum without these tables leaves
        for t in ("profsum_agg_xla_trace", "profsum_agg_xla_device", "profsum_agg_xla_op", "profsum_agg_xla_util"):
            self.db.execute("DELETE FROM %s" % t)
        for v in self.VIEWS:
            got = rows(self.db, "SELECT * FROM %s WHERE trace_id=?" % v, (tid,))
            self.assertEqual(len(got), 1, v)
            self.assertEqual(got[0]["status"], "reimport_needed", v)
            self.assertTrue(all(val is None for k, val in got[0].items() if k not in ("trace_id", "label", "status")), v)
        k = rows(self.db, "SELECT * FROM profsum_kpis WHERE trace_id=? AND kpi='memory_bandwidth'", (tid,))
        self.assertEqual([(r["band"], r["value"]) for r in k], [("unavailable", None)])

    def test_database_of_an_older_profsum(self):
        # a database written before these tables existed: the next import
        # upgrades it (tables and views made); the old trace says
        # reimport_needed, the new one has its rows
        from util import connect
        path = os.path.join(self.td.path, "old.db")
        db = connect(path)
        xp = self.td.write("t.xplane.pb", tpu_xspace())
        old = db.execute("SELECT profsum_import(?, 'old')", (xp,)).fetchone()[0]
        for v in self.VIEWS + ("profsum_kpis", "profsum_kpis_xla"):
            db.execute("DROP VIEW %s" % v)
        for t in ("profsum_agg_xla_trace", "profsum_agg_xla_device", "profsum_agg_xla_op", "profsum_agg_xla_util"):
            db.execute("DROP TABLE %s" % t)
        db.execute("UPDATE profsum_meta SET value='0000000000000000' WHERE key='schema_id'")
        db.commit()
        db.close()
        db = connect(path)
        new = db.execute("SELECT profsum_import(?, 'new')", (xp,)).fetchone()[0]
        for v in self.VIEWS:
            got = db.execute("SELECT trace_id, status FROM %s WHERE status IN ('reimport_needed', 'v1_summary') "
                             "ORDER BY trace_id" % v).fetchall()
            self.assertEqual(got, [(old, "reimport_needed")], v)
            self.assertGreater(db.execute("SELECT count(*) FROM %s WHERE trace_id=? AND status NOT IN "
                                          "('reimport_needed', 'v1_summary')" % v,
                                          (new,)).fetchone()[0], 0, v)
        db.close()

    def test_v1_summary_import(self):
        tid = self.imp("t.xplane.pb", tpu_xspace(), label="a")
        doc = self.db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0]
        tid2 = self.imp("s.json", doc, label="b")
        self.assertNotEqual(tid, tid2)
        for v in self.VIEWS:
            got = rows(self.db, "SELECT * FROM %s WHERE trace_id=?" % v, (tid2,))
            self.assertEqual([r["status"] for r in got], ["v1_summary"], v)

    def test_deleting_trace(self):
        tid = self.imp("t.xplane.pb", tpu_xspace(), label="a")
        self.imp("t.xplane.pb", tpu_xspace(), json.dumps({"replace": True}), label="a")
        for t in ("profsum_agg_xla_trace", "profsum_agg_xla_device", "profsum_agg_xla_op", "profsum_agg_xla_util"):
            self.assertEqual(self.db.execute("SELECT count(*) FROM %s WHERE trace_id=?" % t, (tid,)).fetchone()[0], 0, t)


class Catalog(XlaTestCase):
    def test_catalog_lists_views(self):
        names = {r[0] for r in self.db.execute("SELECT DISTINCT object FROM profsum_catalog WHERE kind='view'")}
        for v in NotComputed.VIEWS + ("profsum_kpis_xla",):
            self.assertIn(v, names)
            cols = self.db.execute("SELECT column_name, doc FROM profsum_catalog WHERE object=? AND position>0 "
                                   "ORDER BY position", (v,)).fetchall()
            self.assertEqual([c for c, _ in cols[:2]], ["trace_id", "label"], v)
            self.assertTrue(all(d for _, d in cols), v)


REPORT_DRIVER = r"""
#include <sqlite3.h>
#include <stdio.h>
int sqlite3_profsum_init(sqlite3 *db, char **pzErrMsg, const void *pApi);
int insXlaReportMd(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
int insXlaReportHtml(sqlite3 *db, const char *zSchema, sqlite3_int64 traceId, sqlite3_str *pOut);
/* argv[1..]: files imported in turn; prints each trace's sections after a line "== <rc>" */
int main(int argc, char **argv){
  sqlite3 *db; char *zErr = 0; int i;
  if( sqlite3_open(":memory:", &db) || sqlite3_profsum_init(db, &zErr, 0) ) return 2;
  for(i=1; i<argc; i++){
    char *q = sqlite3_mprintf("SELECT profsum_import('%q')", argv[i]);
    sqlite3_str *s;
    int rc;
    if( sqlite3_exec(db, q, 0, 0, &zErr) ){ fprintf(stderr, "%s\n", zErr); return 1; }
    sqlite3_free(q);
    s = sqlite3_str_new(db);
    rc = insXlaReportMd(db, "main", i, s);
    if( rc==0 ) rc = insXlaReportHtml(db, "main", i, s);
    printf("== %d\n%s", rc, sqlite3_str_value(s) ? sqlite3_str_value(s) : "");
    sqlite3_free(sqlite3_str_finish(s));
  }
  sqlite3_close(db);
  return 0;
}
"""


class Reports(unittest.TestCase):
    """The report sections (insXlaReportMd / insXlaReportHtml), through a
    small C driver linked with the objects of `make build/sqlrun`: skipped
    when they are not built or no compiler links them."""

    def test_sections(self):
        import shutil
        import subprocess
        import tempfile
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        # the objects of sources that exist (a source removed since the
        # last build leaves its object behind)
        objs = sorted(o for o in glob.glob(os.path.join(root, "build", "obj", "core", "*", "*.o"))
                      if os.path.exists(os.path.join(root, "ext", os.path.basename(os.path.dirname(o)),
                                                     os.path.basename(o)[:-2] + ".c")))
        if not objs or not shutil.which("cc"):
            self.skipTest("build/obj/core not built")
        with tempfile.TemporaryDirectory(prefix="profsum-rep-") as tmp:
            src = os.path.join(tmp, "drv.c")
            with open(src, "w") as f:
                f.write(REPORT_DRIVER)
            exe = os.path.join(tmp, "drv")
            r = subprocess.run(["cc", "-std=c11", "-o", exe, src] + objs +
                               ["-lsqlite3", "-lisal", "-lz", "-ldl", "-lpthread", "-lm"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                self.skipTest("the driver does not link here: " + r.stderr[-300:])
            paths = []
            data_gpu, _ = gpu_xspace()
            for name, data in (("t.xplane.pb", tpu_xspace()), ("g.xplane.pb", data_gpu)):
                paths.append(os.path.join(tmp, name))
                with open(paths[-1], "wb") as f:
                    f.write(data)
            js = os.path.join(tmp, "empty.json")
            with open(js, "w") as f:
                f.write('{"traceEvents": []}')
            r = subprocess.run([exe] + paths + [js], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            parts = r.stdout.split("== ")[1:]
            self.assertEqual([p[:2] for p in parts], ["0\n"] * 3)
            tpu, gpu, empty = parts
            for h in ("## profsum: Devices", "## profsum: Op profile", "## profsum: Roofline",
                      "## profsum: Utilization", '<section id="profsum-roofline">', "<svg", "</svg>",
                      '<section id="profsum-utilization">', "<td>/device:TPU:0</td><td>70.000</td><td>41.2%</td>"):
                self.assertIn(h, tpu)
            self.assertIn("| copy.1 | /device:TPU:0 | 1 | 20.000 | 0.10 | 0.080 | 800.0 | 0.1% | 80.0% | memory |", tpu)
            self.assertIn("| fusion.1 | /device:TPU:0 | 2 | 20.000 | 500.00 | 50.000 | 100.0 | 50.0% | 10.0% | compute |", tpu)
            # no FLOPs or bytes: devices and op profile, no roofline
            self.assertIn("## profsum: Devices", gpu)
            self.assertIn("| hlo_op | dot.3 | hlo_op | jit_train | 2 | 50.000 | 50.000 | 76.9% |", gpu)
            self.assertNotIn("Roofline", gpu)
            self.assertNotIn("Utilization", gpu)
            self.assertEqual(empty, "0\n")                 # nothing for a trace without devices




@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds it)")
class OutOfMemory(unittest.TestCase):
    """Imports of an XSpace and a JSON trace with every 13th allocation
    failed in turn (tests/oom_sql.c, ASan): each run is an error or the
    reference result (the collector's tables included), nothing leaks."""

    def test_import_allocations(self):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
            xp = os.path.join(tmp, "t.xplane.pb")
            with open(xp, "wb") as f:
                f.write(tpu_xspace())
            js = os.path.join(tmp, "j.json")
            with open(js, "w") as f:
                json.dump(json_trace(True), f)
            empty = os.path.join(tmp, "e.json")
            with open(empty, "w") as f:
                f.write('{"traceEvents": []}')

            def call(path):
                return ("SELECT (SELECT count(*) FROM (SELECT profsum_import('%s', 'a', '{\"replace\": true, "
                        "\"device_peaks\": {\"*\": {\"peak_flops_per_s\": 5}}}'))) || ',' || "
                        "(SELECT count(*) || ':' || sum(count) || ':' || total(self_us) || ':' || total(flops) || ':' "
                        "|| total(model_flops) FROM profsum_agg_xla_op) || ',' || "
                        "(SELECT group_concat(device || peak_source) FROM profsum_agg_xla_device) || ',' || "
                        "(SELECT count(*) || ':' || total(busy_us) || ':' || total(mfu_flops) FROM profsum_agg_xla_util)"
                        % path)
            calls = ["SELECT profsum_import('%s', 'e') > 0" % empty, call(xp), call(js)]
            run_oom_sql(self, calls, step=13)


@unittest.skipUnless(os.path.isdir(CORPUS), "corpus not available")
class CorpusDevices(XlaTestCase):
    def test_device_rows_equal_plane_stats(self):
        paths = sorted(glob.glob(os.path.join(CORPUS, "**", "*.xplane.pb"), recursive=True))
        self.assertTrue(paths)
        for i, path in enumerate(paths):
            tid = self.db.execute("SELECT profsum_import(?, ?)", (path, "c%d" % i)).fetchone()[0]
            want = {}
            for name, n_events, stats in self.db.execute(
                    "SELECT name, num_events, stats FROM profsum_xplane_planes(?)", (path,)):
                if not name.startswith("/device:"):
                    continue
                s = json.loads(stats or "{}")
                w = want.setdefault(name, {"has_events": 0})
                w["has_events"] |= 1 if n_events else 0
                w["vendor"] = s.get("device_vendor")
                w["core_count"] = s.get("core_count")
                w["clock_hz"] = s["clock_rate"] * 1000 if "clock_rate" in s else None
                w["memory_bytes"] = s.get("memory_size")
                w["compute_capability"] = ("%d.%d" % (s["compute_cap_major"], s["compute_cap_minor"])
                                           if "compute_cap_major" in s and "compute_cap_minor" in s else None)
                if "peak_teraflops_per_second" in s:
                    w["peak_flops_per_s"] = s["peak_teraflops_per_second"] * 1e12
                else:
                    w["peak_flops_per_s"] = None
                if "peak_hbm_bw_gigabytes_per_second" in s:
                    w["peak_mem_bw_bytes_per_s"] = s["peak_hbm_bw_gigabytes_per_second"] * 1e9
                else:
                    w["peak_mem_bw_bytes_per_s"] = s.get("memory_bandwidth")
            got = {r["device"]: r for r in rows(self.db, "SELECT * FROM profsum_devices WHERE trace_id=?", (tid,))}
            self.assertEqual(set(got), set(want), path)
            for dev, w in want.items():
                for k, v in w.items():
                    self.assertEqual(got[dev][k], v, (path, dev, k))

    def test_kernels_attributed_as_trace_events_say(self):
        # an independent tally: device-op rows of trace_events by hlo_op (else their name)
        for i, path in enumerate(sorted(glob.glob(os.path.join(CORPUS, "**", "*.xplane.pb"), recursive=True))):
            tid = self.db.execute("SELECT profsum_import(?, ?)", (path, "k%d" % i)).fetchone()[0]
            want = {}
            for name, hlo_op, dur_ps in self.db.execute(
                    "SELECT name, hlo_op, dur_ps FROM trace_events(?) WHERE process_name LIKE '/device:%' "
                    "AND (thread_name IN ('XLA Ops', 'Async XLA Ops') OR thread_name LIKE 'Stream #%') "
                    "AND dur_ps > 0", (path,)):
                w = want.setdefault(hlo_op if hlo_op is not None else name, [0, 0])
                w[0] += 1
                w[1] += dur_ps
            got = {r[0]: (r[1], r[2]) for r in self.db.execute(
                "SELECT name, count, total_us FROM profsum_op_profile WHERE trace_id=? AND level='hlo_op'", (tid,))}
            self.assertEqual(set(got), set(want), path)
            for k, (c, ps) in want.items():
                self.assertEqual(got[k][0], c, (path, k))
                self.assertAlmostEqual(got[k][1], ps / 1e6, delta=1e-6 * max(1.0, ps / 1e6), msg=(path, k))

    def test_roofline_says_why(self):
        for i, path in enumerate(sorted(glob.glob(os.path.join(CORPUS, "**", "*.xplane.pb"), recursive=True))):
            tid = self.db.execute("SELECT profsum_import(?, ?)", (path, "r%d" % i)).fetchone()[0]
            st = {r[0] for r in self.db.execute("SELECT status FROM profsum_roofline WHERE trace_id=?", (tid,))}
            self.assertEqual(st, {"no_flops_or_bytes"}, path)
            share = self.db.execute("SELECT sum(share) FROM profsum_op_profile WHERE trace_id=? AND level='hlo_op'",
                                    (tid,)).fetchone()[0]
            self.assertAlmostEqual(share, 1.0, places=9)


if __name__ == "__main__":
    unittest.main()
