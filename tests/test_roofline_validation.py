"""What the import does with device stats and op counts that cannot be
used (docs/roofline.md): a negative flops, model_flops or bytes_accessed
is left out as a NaN is; a device stat that is not usable (0, negative,
NaN, infinite, not a number, a peak that overflows or is below 1 per
second once converted, a count past 2^63) is NULL with a diagnostic, and
a later plane of the same device gives it instead; the device_peaks
option has the same bounds; bytes_accessed 0 says zero_bytes; a device
without a Steps line takes the host's train steps; a step's prorated
bytes are kept unrounded for its rates.

Fixtures are XSpace files written by tests/xspace_writer.py with known
values; every expected value is worked out in the comments.  Times are
given in µs and stored in ps (µs × 1e6)."""
import json
import os
import tempfile
import unittest

import xspace_writer as W
from util import OOM_SQL, DbTestCase, run_oom_sql

US = 10 ** 6
# peak 100 TFLOP/s = 1e14 FLOP/s, HBM 1000 GB/s = 1e12 bytes/s
PEAKS = [("peak_teraflops_per_second", dict(double=100.0)),
         ("peak_hbm_bw_gigabytes_per_second", dict(double=1000.0))]
RULE_TF = "TFLOP/s: at least 1 FLOP/s and finite once converted"


def rows(db, sql, args=()):
    cur = db.execute(sql, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def plane(name, pid, plane_stats=(), op_stats=None, offset_us=0):
    """Device plane `name` with plane_stats and one 10 µs op on XLA Ops at
    offset_us with op_stats (default flops 1e9, bytes_accessed 1e6)."""
    pb = W.PlaneBuilder(name, id=pid)
    for k, kw in plane_stats:
        pb.plane_stat(k, **kw)
    if op_stats is None:
        op_stats = [("flops", dict(i64=10 ** 9)), ("bytes_accessed", dict(i64=10 ** 6))]
    pb.line(id=1, name="XLA Ops", timestamp_ns=0,
            events=[pb.event("fusion.1", offset_ps=offset_us * US, duration_ps=10 * US,
                             stats=[pb.stat(k, **kw) for k, kw in op_stats])])
    return pb.build()


def one_device(plane_stats=(), op_stats=None):
    return W.xspace([plane("/device:TPU:0", 1, plane_stats, op_stats)], hostnames=["h"])


class Case(DbTestCase):
    def imp(self, data, opts=None, name="t.xplane.pb"):
        path = self.td.write(name, data)
        return self.db.execute("SELECT profsum_import(?, 'x', ?)", (path, opts)).fetchone()[0]

    def roof(self):
        return rows(self.db, "SELECT * FROM profsum_roofline WHERE level='op'")[0]

    def device(self):
        return rows(self.db, "SELECT * FROM profsum_devices")[0]

    def diags(self):
        return [(r["kind"], r["detail"]) for r in
                rows(self.db, "SELECT kind, detail FROM profsum_diagnostic "
                     "WHERE kind LIKE 'device_stat%' OR kind='suppressed' ORDER BY rowid")]


class NegativeCounts(Case):
    def test_negative_flops_left_out(self):
        # flops -1e9 is no count: NULL as if absent; bytes 1e6 over 10 µs
        # at 1e12 bytes/s: bw_fraction 1e11 / 1e12 = 0.1
        self.imp(one_device(PEAKS, [("flops", dict(i64=-10 ** 9)), ("bytes_accessed", dict(i64=10 ** 6))]))
        r = self.roof()
        self.assertEqual((r["flops"], r["flops_fraction"], r["bound"], r["status"]),
                         (None, None, None, "no_flops"))
        self.assertAlmostEqual(r["bw_fraction"], 0.1, delta=1e-15)
        u = rows(self.db, "SELECT * FROM profsum_utilization WHERE step IS NULL")[0]
        self.assertEqual((u["flops"], u["mfu_busy"], u["status"]), (None, None, "no_flops"))
        self.assertEqual(self.db.execute("SELECT n_flops_ops, n_bytes_ops FROM profsum_agg_xla_trace").fetchone(),
                         (0, 1))

    def test_negative_model_flops_left_out(self):
        # model_flops -4 is left out: utilization counts the flops 1e9,
        # 1e9 / 10 µs = 1e14 FLOP/s = the peak: mfu_busy 1.0
        self.imp(one_device(PEAKS, [("flops", dict(i64=10 ** 9)), ("model_flops", dict(double=-4.0))]))
        r = self.roof()
        self.assertEqual((r["flops"], r["model_flops"], r["flops_fraction"]), (1e9, None, 1.0))
        u = rows(self.db, "SELECT * FROM profsum_utilization WHERE step IS NULL")[0]
        self.assertEqual((u["flops"], u["mfu_busy"]), (1e9, 1.0))

    def test_negative_bytes_left_out(self):
        # bytes -5 is no count: no bytes (status no_bytes), no KPI row;
        # flops 1e9 over 10 µs at 1e14 FLOP/s: flops_fraction 1.0
        self.imp(one_device(PEAKS, [("flops", dict(i64=10 ** 9)), ("bytes_accessed", dict(i64=-5))]))
        r = self.roof()
        self.assertEqual((r["bytes_accessed"], r["bw_fraction"], r["intensity"], r["bound"], r["status"]),
                         (None, None, None, None, "no_bytes"))
        self.assertEqual(r["flops_fraction"], 1.0)
        u = rows(self.db, "SELECT * FROM profsum_utilization WHERE step IS NULL")[0]
        self.assertEqual((u["bytes_accessed"], u["hbm_util_busy"], u["status"]), (None, None, "no_bytes"))
        self.assertEqual(self.db.execute("SELECT value, band FROM profsum_kpis "
                                         "WHERE kpi='memory_bandwidth'").fetchall(), [(None, "unavailable")])

    def test_negative_json_args_left_out(self):
        # trace JSON: bytes_accessed "-7" (a string, as TSL writes numbers)
        # and model_flops -2 are left out; the op's other count stays
        tr = {"traceEvents": [
            {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
            {"ph": "X", "pid": 2, "tid": 1, "ts": 0, "dur": 10, "name": "fusion.1",
             "args": {"model_flops": "2000000", "bytes_accessed": "-7"}},
            {"ph": "X", "pid": 2, "tid": 1, "ts": 20, "dur": 10, "name": "copy.1",
             "args": {"model_flops": -2, "bytes_accessed": 1000}}]}
        self.imp(json.dumps(tr).encode(), name="t.json")
        r = {x["name"]: x for x in rows(self.db, "SELECT * FROM profsum_roofline WHERE level='op'")}
        self.assertEqual((r["fusion.1"]["model_flops"], r["fusion.1"]["bytes_accessed"], r["fusion.1"]["status"]),
                         (2e6, None, "no_bytes"))
        self.assertEqual((r["copy.1"]["model_flops"], r["copy.1"]["bytes_accessed"], r["copy.1"]["status"]),
                         (None, 1000, "no_flops"))


class PeakBounds(Case):
    def test_overflowing_plane_peak_gives_way_to_option(self):
        # 1e300 TFLOP/s is 1e312 FLOP/s: infinite, no peak; the option's
        # 2e14 is used: flops_fraction 1e14 / 2e14 = 0.5, ridge 2e14 / 1e12
        # = 200, intensity 1e9 / 1e6 = 1000: compute
        opts = json.dumps({"device_peaks": {"*": {"peak_flops_per_s": 2e14}}})
        self.imp(one_device([("peak_teraflops_per_second", dict(double=1e300)),
                             ("peak_hbm_bw_gigabytes_per_second", dict(double=1000.0))]), opts)
        d = self.device()
        self.assertEqual((d["peak_flops_per_s"], d["peak_mem_bw_bytes_per_s"], d["peak_source"]),
                         (2e14, 1e12, "plane_stats+options"))
        r = self.roof()
        self.assertEqual((r["flops_fraction"], r["ridge_intensity"], r["bound"], r["status"]),
                         (0.5, 200.0, "compute", "ok"))
        u = rows(self.db, "SELECT * FROM profsum_utilization WHERE step IS NULL")[0]
        self.assertEqual(u["mfu_busy"], 0.5)
        self.assertEqual(self.diags(), [("device_stat_out_of_range",
                                         "plane /device:TPU:0: device stat peak_teraflops_per_second = 1.0e+300 "
                                         "left out (NULL): a usable value is " + RULE_TF)])

    def test_overflowing_bandwidth_is_no_limit(self):
        self.imp(one_device([("peak_teraflops_per_second", dict(double=100.0)),
                             ("peak_hbm_bw_gigabytes_per_second", dict(double=1e300))]))
        d = self.device()
        self.assertEqual((d["peak_flops_per_s"], d["peak_mem_bw_bytes_per_s"]), (1e14, None))
        r = self.roof()
        self.assertEqual((r["bw_fraction"], r["ridge_intensity"], r["bound"], r["status"]),
                         (None, None, None, "no_device_limits"))

    def test_peak_below_one_per_second(self):
        # 1e-13 TFLOP/s = 0.1 FLOP/s: no device's peak
        self.imp(one_device([("peak_teraflops_per_second", dict(double=1e-13))]))
        self.assertIsNone(self.device()["peak_flops_per_s"])
        self.assertEqual([k for k, _ in self.diags()], ["device_stat_out_of_range"])

    def test_option_bounds(self):
        for key, val in (("peak_mem_bw_bytes_per_s", 1e-320), ("peak_flops_per_s", 0.5),
                         ("peak_flops_per_s", 1e400)):
            text = '{"device_peaks": {"/device:TPU:0": {"%s": %r}}}' % (key, val)
            with self.assertRaises(Exception) as cm:
                self.imp(one_device(), text.replace("inf", "1e400"))
            msg = str(cm.exception)
            self.assertIn('"/device:TPU:0".%s must be a finite number of at least 1' % key, msg)
            self.assertIn("not ", msg)
        # the value named: 0.5 as SQLite shows it
        with self.assertRaises(Exception) as cm:
            self.imp(one_device(), '{"device_peaks": {"*": {"peak_flops_per_s": 0.5}}}')
        self.assertIn('"*".peak_flops_per_s must be a finite number of at least 1 (per second), not 0.5',
                      str(cm.exception))
        # 1 per second is accepted
        self.imp(one_device(), '{"device_peaks": {"*": {"peak_flops_per_s": 1, "peak_mem_bw_bytes_per_s": 1}}}')
        d = self.device()
        self.assertEqual((d["peak_flops_per_s"], d["peak_mem_bw_bytes_per_s"]), (1.0, 1.0))


class ChunkedPlanes(Case):
    def test_first_usable_value_wins(self):
        # the device split over two planes of one name: an unusable peak in
        # the first (0, negative, NaN) gives way to the second's
        for stat, col, good, want in (
                ("peak_teraflops_per_second", "peak_flops_per_s", dict(double=100.0), 1e14),
                ("peak_hbm_bw_gigabytes_per_second", "peak_mem_bw_bytes_per_s", dict(double=1000.0), 1e12),
                ("memory_bandwidth", "peak_mem_bw_bytes_per_s", dict(u64=10 ** 12), 1e12)):
            for bad in (dict(double=0.0), dict(i64=-1), dict(double=float("nan"))):
                with self.subTest(stat=stat, bad=bad):
                    self.tearDown()
                    self.setUp()
                    data = W.xspace([plane("/device:TPU:0", 1, [(stat, bad)]),
                                     plane("/device:TPU:0", 2, [(stat, good)], offset_us=20)])
                    self.imp(data)
                    self.assertEqual(self.db.execute("SELECT %s, peak_source FROM profsum_devices" % col).fetchone(),
                                     (want, "plane_stats"))
                    self.assertEqual([k for k, _ in self.diags()], ["device_stat_out_of_range"])


class DeviceLimits(Case):
    def test_counts_and_sizes(self):
        cases = [
            ("memory_size", dict(i64=-1), "memory_bytes", None),
            ("memory_size", dict(u64=0), "memory_bytes", None),
            ("core_count", dict(i64=-3), "core_count", None),
            ("core_count", dict(double=0.5), "core_count", None),
            ("memory_size", dict(u64=2 ** 64 - 1), "memory_bytes", None),
            ("memory_size", dict(u64=2 ** 63), "memory_bytes", None),
            ("clock_rate", dict(i64=2 ** 62), "clock_hz", None),        # 4.6e21 Hz
            ("clock_rate", dict(i64=-5), "clock_hz", None),
            # kept: 2^53 kHz = 9,007,199,254,740,992,000 Hz < 2^63 (INTEGER)
            ("clock_rate", dict(i64=2 ** 53), "clock_hz", 9007199254740992000),
            ("memory_size", dict(u64=2 ** 62), "memory_bytes", 2 ** 62),
            ("core_count", dict(i64=1), "core_count", 1),
        ]
        for stat, kw, col, want in cases:
            with self.subTest(stat=stat, value=kw):
                self.tearDown()
                self.setUp()
                self.imp(one_device([(stat, kw)]))
                v, t = self.db.execute("SELECT %s, typeof(%s) FROM profsum_devices" % (col, col)).fetchone()
                self.assertEqual((v, t), (want, "null" if want is None else "integer"))
                self.assertEqual([k for k, _ in self.diags()], [] if want is not None else ["device_stat_out_of_range"])

    def test_detail_names_plane_stat_value(self):
        self.imp(one_device([("memory_size", dict(i64=-1)), ("clock_rate", dict(i64=2 ** 62))]))
        self.assertEqual(self.diags(), [
            ("device_stat_out_of_range", "plane /device:TPU:0: device stat memory_size = -1 left out (NULL): "
             "a usable value is a number from 1 to below 2^63"),
            ("device_stat_out_of_range", "plane /device:TPU:0: device stat clock_rate = 4611686018427387904 "
             "left out (NULL): a usable value is kHz: from 1 Hz to below 2^63 Hz once converted")])


class Diagnostics(Case):
    def test_each_unusable_peak_is_reported(self):
        for kw, kind, shown in ((dict(double=0.0), "device_stat_out_of_range", "0.0"),
                                (dict(double=-5.0), "device_stat_out_of_range", "-5.0"),
                                (dict(double=float("nan")), "device_stat_out_of_range", "NaN"),
                                (dict(double=float("inf")), "device_stat_out_of_range", "Inf"),
                                (dict(s="abc"), "device_stat_unreadable", "'abc'")):
            with self.subTest(value=kw):
                self.tearDown()
                self.setUp()
                self.imp(one_device([("peak_teraflops_per_second", kw)]))
                self.assertIsNone(self.device()["peak_flops_per_s"])
                self.assertEqual(self.diags(), [(kind, "plane /device:TPU:0: device stat peak_teraflops_per_second"
                                                 " = %s left out (NULL): a usable value is %s" % (shown, RULE_TF))])

    def test_stored_five_of_a_kind_and_suppressed(self):
        # 7 devices with a peak of 0: the first 5 rows, then the total
        planes = [plane("/device:TPU:%d" % i, i + 1, [("peak_teraflops_per_second", dict(double=0.0))])
                  for i in range(7)]
        self.imp(W.xspace(planes))
        d = self.diags()
        self.assertEqual([k for k, _ in d], ["device_stat_out_of_range"] * 5 + ["suppressed"])
        self.assertEqual([x.split(":")[1] for _, x in d[:5]], ["TPU"] * 5)
        self.assertTrue(d[0][1].startswith("plane /device:TPU:0: "))
        self.assertTrue(d[4][1].startswith("plane /device:TPU:4: "))
        self.assertEqual(d[5][1], "device_stat_out_of_range: 7 occurrences in all; only the first 5 are stored "
                                  "(the import option store_diagnostics 'all' stores them all)")
        # with store_diagnostics 'all', all seven and no suppressed row
        self.imp(W.xspace(planes), '{"store_diagnostics": "all", "replace": true}')
        d = self.diags()
        self.assertEqual([k for k, _ in d], ["device_stat_out_of_range"] * 7)
        self.assertTrue(d[6][1].startswith("plane /device:TPU:6: "))


class ZeroBytes(Case):
    def test_zero_bytes_with_flops(self):
        # FLOPs over 0 bytes: intensity has no finite value (NULL), past any
        # ridge: bound compute; status zero_bytes says why intensity is NULL
        self.imp(one_device(PEAKS, [("flops", dict(i64=10 ** 9)), ("bytes_accessed", dict(i64=0))]))
        r = self.roof()
        self.assertEqual((r["bytes_accessed"], r["intensity"], r["bound"], r["status"]),
                         (0, None, "compute", "zero_bytes"))
        self.assertEqual((r["flops_fraction"], r["bw_fraction"]), (1.0, 0.0))

    def test_zero_bytes_zero_flops(self):
        self.imp(one_device(PEAKS, [("flops", dict(i64=0)), ("bytes_accessed", dict(i64=0))]))
        r = self.roof()
        self.assertEqual((r["intensity"], r["bound"], r["status"]), (None, None, "zero_bytes"))

    def test_zero_bytes_without_peaks(self):
        self.imp(one_device((), [("flops", dict(i64=10 ** 9)), ("bytes_accessed", dict(i64=0))]))
        r = self.roof()
        self.assertEqual((r["intensity"], r["bound"], r["status"]), (None, None, "no_device_limits"))


class StepsOfADeviceWithoutSteps(Case):
    def test_host_steps_for_a_device_without_a_steps_line(self):
        # TPU:0 has a Steps line (steps 1 [0,50), 2 [50,100) µs), TPU:1 none:
        # it takes the host's train steps 1 [0,50), 2 [50,100) µs; its ops
        # [5,15) and [70,80) µs, 1e6 bytes each
        def dev(name, steps, ops, pid):
            pb = W.PlaneBuilder(name, id=pid)
            pb.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
            pb.line(id=1, name="XLA Ops", timestamp_ns=0,
                    events=[pb.event("f", offset_ps=s * US, duration_ps=d * US,
                                     stats=[pb.stat("bytes_accessed", i64=10 ** 6)]) for s, d in ops])
            if steps:
                pb.line(id=2, name="Steps", timestamp_ns=0,
                        events=[pb.event(str(k), offset_ps=s * US, duration_ps=d * US) for k, s, d in steps])
            return pb.build()
        h = W.PlaneBuilder("/host:CPU", id=3)
        h.line(id=1, name="python", timestamp_ns=0,
               events=[h.event("train", offset_ps=0, duration_ps=50 * US, stats=[h.stat("step_num", i64=1)]),
                       h.event("train", offset_ps=50 * US, duration_ps=50 * US, stats=[h.stat("step_num", i64=2)])])
        self.imp(W.xspace([dev("/device:TPU:0", [(1, 0, 50), (2, 50, 50)], [(0, 10), (60, 10)], 1),
                           dev("/device:TPU:1", None, [(5, 10), (70, 10)], 2), h.build()]))
        got = [(r["device"], r["step"], r["wall_us"], r["busy_us"], r["bytes_accessed"], r["step_source"])
               for r in rows(self.db, "SELECT * FROM profsum_utilization WHERE step IS NOT NULL "
                             "ORDER BY device, step")]
        self.assertEqual(got, [("/device:TPU:0", 1, 50.0, 10.0, 10 ** 6, "device_steps"),
                               ("/device:TPU:0", 2, 50.0, 10.0, 10 ** 6, "device_steps"),
                               ("/device:TPU:1", 1, 50.0, 10.0, 10 ** 6, "host_steps"),
                               ("/device:TPU:1", 2, 50.0, 10.0, 10 ** 6, "host_steps")])
        # hbm_util_busy: 1e6 bytes / 10 µs / 1e12 bytes/s = 0.1
        u = self.db.execute("SELECT hbm_util_busy FROM profsum_utilization "
                            "WHERE device='/device:TPU:1' AND step=2").fetchone()[0]
        self.assertAlmostEqual(u, 0.1, delta=1e-15)
        # the summary's steps stay the devices' (the host's make no row)
        self.assertEqual(self.db.execute("SELECT count(*), count(DISTINCT device) "
                                         "FROM profsum_agg_step_span").fetchone(), (2, 1))


class ProratedBytes(Case):
    def test_step_rates_from_unrounded_bytes(self):
        # op f [6,13) µs, 77 bytes; op g [13.5,20.5) µs, 0 bytes; steps 1
        # [5,11.5) and 2 [11.5,18) µs.  Step 1 holds 5.5 of f's 7 µs: 60.5
        # bytes, busy 5.5 µs; step 2: 1.5 µs of f (16.5 bytes) and 4.5 µs
        # of g, busy 6 µs.  Shown rounded (61, 17); the rates use 60.5 and
        # 16.5: 60.5 / 5.5e-6 / 1e12 = 1.1e-5, 16.5 / 6e-6 / 1e12 = 2.75e-6
        pb = W.PlaneBuilder("/device:TPU:0", id=1)
        pb.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
        pb.line(id=1, name="XLA Ops", timestamp_ns=0, events=[
            pb.event("f", offset_ps=6 * US, duration_ps=7 * US, stats=[pb.stat("bytes_accessed", i64=77)]),
            pb.event("g", offset_ps=13500000, duration_ps=7 * US, stats=[pb.stat("bytes_accessed", i64=0)])])
        pb.line(id=2, name="Steps", timestamp_ns=0, events=[
            pb.event("1", offset_ps=5 * US, duration_ps=6500000),
            pb.event("2", offset_ps=11500000, duration_ps=6500000)])
        self.imp(W.xspace([pb.build()]))
        r = {x["step"]: x for x in rows(self.db, "SELECT * FROM profsum_utilization")}
        self.assertEqual((r[None]["bytes_accessed"], r[1]["bytes_accessed"], r[2]["bytes_accessed"]), (77, 61, 17))
        self.assertEqual(self.db.execute("SELECT typeof(bytes_accessed) FROM profsum_utilization "
                                         "WHERE step=1").fetchone()[0], "integer")
        self.assertAlmostEqual(r[1]["hbm_util_busy"], 1.1e-5, delta=1e-18)
        self.assertAlmostEqual(r[2]["hbm_util_busy"], 2.75e-6, delta=1e-18)
        # the wall rates too: 60.5 / 6.5e-6 / 1e12
        self.assertAlmostEqual(r[1]["hbm_util_wall"], 60.5 / 6.5e-6 / 1e12, delta=1e-18)


class OutOfMemory(unittest.TestCase):
    """An import whose device stats are unusable (7 diagnostics: 5 stored
    and a suppressed row) and whose second device takes the host's steps,
    with every 3rd allocation failed in turn (tests/oom_sql.c, ASan): each
    run is an error or the full run's result, nothing leaks."""

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds it)")
    def test_import_allocations(self):
        planes = [plane("/device:TPU:%d" % i, i + 1, [("peak_teraflops_per_second", dict(double=0.0)),
                                                      ("memory_size", dict(s="lots"))], offset_us=5)
                  for i in range(7)]
        steps = W.PlaneBuilder("/device:TPU:0", id=20)
        steps.line(id=2, name="Steps", timestamp_ns=0,
                   events=[steps.event("1", offset_ps=0, duration_ps=10 * US),
                           steps.event("2", offset_ps=10 * US, duration_ps=10 * US)])
        h = W.PlaneBuilder("/host:CPU", id=30)
        h.line(id=1, name="python", timestamp_ns=0,
               events=[h.event("train", offset_ps=0, duration_ps=10 * US, stats=[h.stat("step_num", i64=1)]),
                       h.event("train", offset_ps=10 * US, duration_ps=10 * US, stats=[h.stat("step_num", i64=2)])])
        with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
            xp = os.path.join(tmp, "t.xplane.pb")
            with open(xp, "wb") as f:
                f.write(W.xspace(planes + [steps.build(), h.build()]))
            empty = os.path.join(tmp, "e.json")
            with open(empty, "w") as f:
                f.write('{"traceEvents": []}')
            call = ("SELECT (SELECT count(*) FROM (SELECT profsum_import('%s', 'a', '{\"replace\": true}'))) || ',' || "
                    "(SELECT group_concat(kind) FROM profsum_agg_diagnostic WHERE kind LIKE 'device%%' "
                    "OR kind='suppressed') || ',' || "
                    "(SELECT count(*) || ':' || group_concat(DISTINCT step_source) FROM profsum_agg_xla_util "
                    "WHERE step IS NOT NULL)" % xp)
            run_oom_sql(self, ["SELECT profsum_import('%s', 'e') > 0" % empty, call], step=3)
