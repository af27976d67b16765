"""profsum_agg_env and profsum_environment: what an XPlane says of where
and when it ran (the /host:metadata plane's stats, Task Environment's
session times, the accelerators), what a trace JSON's top-level object
says (PyTorch's profiler writes the GPUs' properties, runtime versions and
the rank there), and the notes of profsum_compare_md and the CLI when two
runs differ in it.  The XPlane fixtures are XSpace files written with
tests/xspace_writer.py; the JSON ones are built here."""
import json
import os
import subprocess
import unittest

import fixtures
import xspace_writer as W
from util import OOM_SQL, ROOT, DbTestCase, TempDir, run_oom_sql

US = 10 ** 6
START_NS = 1_783_579_579_390_989_132      # 2026-07-09T06:46:19.390989132Z


def capture(jax="0.4.30", model="TPU v5 lite", n_tpu=1, extra_meta=(), task=True):
    """An XSpace: /host:metadata (jax_version, jaxlib_version, ...), a Task
    Environment, n_tpu TPU planes with one op each (plus a SparseCore plane
    and a TPU plane without events, neither counted)."""
    planes = []
    meta = W.PlaneBuilder("/host:metadata", id=1)
    if jax is not None:
        meta.plane_stat("jax_version", s=jax)
        meta.plane_stat("jaxlib_version", s=jax)
    for name, kw in extra_meta:
        meta.plane_stat(name, **kw)
    planes.append(meta.build())
    for i in range(n_tpu):
        d = W.PlaneBuilder("/device:TPU:%d" % i, id=10 + i)
        d.plane_stat("device_type_string", s=model)
        d.line(id=1, name="XLA Ops", timestamp_ns=START_NS, events=[
            d.event("fusion.1", offset_ps=0, duration_ps=10 * US)])
        planes.append(d.build())
    sc = W.PlaneBuilder("/device:TPU:0 SparseCore 0", id=30)
    sc.plane_stat("device_type_string", s="SparseCore")
    sc.line(id=1, name="XLA Ops", timestamp_ns=START_NS, events=[sc.event("sc.1", offset_ps=0, duration_ps=US)])
    planes.append(sc.build())
    idle = W.PlaneBuilder("/device:TPU:%d" % n_tpu, id=40)
    idle.plane_stat("device_type_string", s="TPU v9 idle")
    planes.append(idle.build())
    if task:
        t = W.PlaneBuilder("Task Environment", id=50)
        t.plane_stat("profile_start_time", u64=START_NS)
        t.plane_stat("profile_stop_time", u64=START_NS + 681_879_439)
        t.plane_stat("profile_options", b=b"\x08\x01\x10\x02")
        planes.append(t.build())
    return W.xspace(planes, hostnames=["h"])


class Environment(DbTestCase):
    def imp(self, data, label, name="c.xplane.pb"):
        p = self.td.write(label + "-" + name, data)
        return self.db.execute("SELECT profsum_import(?, ?)", (p, label)).fetchone()[0]

    def env(self, tid):
        cur = self.db.execute("SELECT * FROM profsum_environment WHERE trace_id=?", (tid,))
        return dict(zip([d[0] for d in cur.description], cur.fetchone()))

    def test_values_and_view(self):
        big = "x" * 4097
        meta = [("tpu_version", {"s": "PJRT C API\nTFRT TPU v5 lite"}), ("process_id", {"i64": 4146827}),
                ("ratio", {"double": 0.1}), ("huge", {"s": big}), ("nothing", {"s": ""}),
                ("alias", {"ref": "jax_version"}), ("process_id", {"i64": 7})]
        tid = self.imp(capture(extra_meta=meta), "a")
        rows = dict(self.db.execute("SELECT name, value FROM profsum_agg_env WHERE trace_id=?", (tid,)))
        self.assertEqual(rows, {
            "jax_version": "0.4.30", "jaxlib_version": "0.4.30", "tpu_version": "PJRT C API\nTFRT TPU v5 lite",
            "process_id": "7",              # a later stat of the plane replaces the earlier
            "ratio": "0.1", "alias": "jax_version",
            "profile_start_time": str(START_NS), "profile_stop_time": str(START_NS + 681_879_439)})
        e = self.env(tid)
        self.assertEqual((e["source_format"], e["jax_version"], e["jaxlib_version"], e["device_model"],
                          e["n_devices"], e["profile_start_utc"]),
                         ("xplane_pb", "0.4.30", "0.4.30", "TPU v5 lite", 1, "2026-07-09T06:46:19.390989Z"))
        self.assertAlmostEqual(e["profile_duration_s"], 0.681879439)
        self.assertEqual(json.loads(e["metadata"]), rows)
        self.assertEqual(list(json.loads(e["metadata"])), sorted(rows))

    def test_names_with_a_nul_byte_are_left_out(self):
        meta = W.PlaneBuilder("/host:metadata", id=1)
        meta.plane_stat("jax_version", s="0.4.30")
        bad = W.stat_meta(90, name="a\x00b")
        data = W.xspace([W.plane(id=1, name="/host:metadata",
                                 stat_metadata=[(1, W.stat_meta(1, name="jax_version")), (90, bad)],
                                 stats=[W.stat(1, s="0.4.30"), W.stat(90, s="x"), W.stat(90, s="y")])],
                        hostnames=["h"])
        tid = self.imp(data, "nul")
        self.assertEqual(self.db.execute("SELECT name, value FROM profsum_agg_env WHERE trace_id=?",
                                         (tid,)).fetchall(), [("jax_version", "0.4.30")])

    def test_first_plane_wins_and_several_models(self):
        # a second /host:metadata plane (a chunked capture) does not replace
        # the first's values; two models are both named, in order
        data = capture(jax="0.4.30", model="TPU v5 lite", n_tpu=2)
        meta2 = W.PlaneBuilder("/host:metadata", id=2)
        meta2.plane_stat("jax_version", s="9.9.9")
        meta2.plane_stat("python_version", s="3.12")
        d = W.PlaneBuilder("/device:TPU:7", id=17)
        d.plane_stat("device_type_string", s="TPU v4")
        d.line(id=1, name="XLA Ops", timestamp_ns=START_NS, events=[d.event("f.1", offset_ps=0, duration_ps=US)])
        data += W.f_bytes(1, meta2.build()) + W.f_bytes(1, d.build())
        tid = self.imp(data, "b")
        e = self.env(tid)
        self.assertEqual((e["jax_version"], e["device_model"], e["n_devices"]),
                         ("0.4.30", "TPU v4, TPU v5 lite", 3))
        self.assertEqual(json.loads(e["metadata"])["python_version"], "3.12")

    def test_nothing_stated(self):
        # no versions, no Task Environment: NULLs, '{}'; a JSON trace too
        tid = self.imp(capture(jax=None, task=False), "c")
        e = self.env(tid)
        self.assertEqual((e["jax_version"], e["profile_start_utc"], e["profile_duration_s"], e["metadata"],
                          e["n_devices"]), (None, None, None, "{}", 1))
        p = self.td.write("j.json", json.dumps(fixtures.f1([100, 120], 30)))
        tid = self.db.execute("SELECT profsum_import(?, 'j')", (p,)).fetchone()[0]
        e = self.env(tid)
        self.assertEqual((e["source_format"], e["jax_version"], e["device_model"], e["metadata"]),
                         ("perfetto_trace_json", None, None, "{}"))
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_env WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 0)

    def test_replace_and_delete_drop_the_rows(self):
        tid = self.imp(capture(), "r")
        tid2 = self.db.execute("SELECT profsum_import(?, 'r', '{\"replace\": true}')",
                               (self.td.write("r2.xplane.pb", capture(jax="0.5.0")),)).fetchone()[0]
        self.assertNotEqual(tid, tid2)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_env WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 0)
        self.assertEqual(self.env(tid2)["jax_version"], "0.5.0")

    def test_report_section(self):
        tid = self.imp(capture(), "r")
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertIn("## profsum: Environment\n\nWhat the capture states (profsum_environment).\n\n"
                      "| jax | jaxlib | devices | model | session start (UTC) | session s |\n"
                      "|---|---|---:|---|---|---:|\n"
                      "| 0.4.30 | 0.4.30 | 1 | TPU v5 lite | 2026-07-09T06:46:19.390989Z | 0.682 |\n", md)
        self.assertLess(md.index("## profsum: Environment"), md.index("## profsum: Devices"))
        html = self.db.execute("SELECT profsum_report_html(?, 5)", (tid,)).fetchone()[0]
        self.assertIn("<tr><td>0.4.30</td><td>0.4.30</td><td>1</td><td>TPU v5 lite</td>"
                      "<td>2026-07-09T06:46:19.390989Z</td><td>0.682</td></tr>", html)
        # no versions nor session: the accelerators only
        tid = self.imp(capture(jax=None, task=False), "n")
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertIn("| n/a | n/a | 1 | TPU v5 lite | n/a | n/a |\n", md)
        # nothing stated (a JAX trace JSON): no section
        p = self.td.write("j.json", json.dumps(fixtures.f1([100, 120], 30)))
        tid = self.db.execute("SELECT profsum_import(?, 'j')", (p,)).fetchone()[0]
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertNotIn("Environment", md)

    def test_compare_md_notes_a_change(self):
        a = self.imp(capture(jax="0.4.30", n_tpu=4), "a")
        b = self.imp(capture(jax="0.4.31", n_tpu=4), "b")
        c = self.imp(capture(jax="0.4.31", n_tpu=4), "c")
        md = self.db.execute("SELECT profsum_compare_md(?, ?)", (a, b)).fetchone()[0]
        self.assertIn("- Environment: before `jax 0.4.30, jaxlib 0.4.30, 4 × TPU v5 lite`, after "
                      "`jax 0.4.31, jaxlib 0.4.31, 4 × TPU v5 lite`\n", md)
        self.assertIn("- **Note:** the software or hardware changed between the runs (jax_version `0.4.30` → "
                      "`0.4.31`; jaxlib_version `0.4.30` → `0.4.31`): the numbers can move for that reason "
                      "alone, not because of the change compared.\n", md)
        md = self.db.execute("SELECT profsum_compare_md(?, ?)", (b, c)).fetchone()[0]
        self.assertIn("- Environment: before `jax 0.4.31", md)
        self.assertNotIn("changed between the runs", md)
        html = self.db.execute("SELECT profsum_compare_md(?, ?, 10, '{\"html\": true}')", (a, b)).fetchone()[0]
        self.assertIn("<li>Environment: before <code>jax 0.4.30, jaxlib 0.4.30, 4 × TPU v5 lite</code>", html)

    def test_compare_md_cuts_long_values(self):
        a = self.imp(capture(jax="1." + "9" * 100), "long")
        b = self.imp(capture(jax="2.0"), "short")
        md = self.db.execute("SELECT profsum_compare_md(?, ?)", (a, b)).fetchone()[0]
        self.assertIn("jax_version `1.%s…` → `2.0`" % ("9" * 78), md)
        self.assertIn("before `jax 1.%s…, jaxlib 1.%s…, 1 × TPU v5 lite`" % ("9" * 78, "9" * 78), md)

    def test_compare_md_with_an_unknown_side(self):
        # a JSON trace states nothing: its side is unknown, no note
        a = self.imp(capture(), "x")
        p = self.td.write("j.json", json.dumps(fixtures.f1([100, 120, 140], 30)))
        j = self.db.execute("SELECT profsum_import(?, 'j')", (p,)).fetchone()[0]
        md = self.db.execute("SELECT profsum_compare_md(?, ?)", (j, a)).fetchone()[0]
        self.assertIn("- Environment: before `1 × device`, after `jax 0.4.30, jaxlib 0.4.30, 1 × TPU v5 lite`", md)
        self.assertNotIn("changed between the runs", md)
        # two JSON traces: no environment line at all
        p = self.td.write("j2.json", json.dumps(fixtures.f1([100, 130, 140], 30)))
        j2 = self.db.execute("SELECT profsum_import(?, 'j2')", (p,)).fetchone()[0]
        md = self.db.execute("SELECT profsum_compare_md(?, ?)", (j, j2)).fetchone()[0]
        self.assertNotIn("Environment", md)


def gpu(name, mem, major=8, minor=0, sms=108, i=0):
    """One deviceProperties entry as PyTorch's profiler writes it."""
    return {"id": i, "name": name, "totalGlobalMem": mem, "computeMajor": major, "computeMinor": minor,
            "maxThreadsPerBlock": 1024, "warpSize": 32, "numSms": sms}


def kineto(devices, **top):
    """A trace JSON in PyTorch's layout: the top-level members first, then
    traceEvents with one kernel on the GPU's stream and one CPU op."""
    doc = {"schemaVersion": 1, "deviceProperties": devices}
    doc.update(top)
    doc["traceEvents"] = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1000, "dur": 20},
        {"ph": "X", "cat": "kernel", "name": "sm80_gemm", "pid": 0, "tid": 7, "ts": 1010, "dur": 30}]
    return json.dumps(doc)


class JsonTopLevel(DbTestCase):
    def imp(self, text, label):
        p = self.td.write(label + ".json", text)
        return self.db.execute("SELECT profsum_import(?, ?)", (p, label)).fetchone()[0]

    def rows(self, tid):
        return dict(self.db.execute("SELECT name, value FROM profsum_agg_env WHERE trace_id=?", (tid,)))

    def env(self, tid):
        cur = self.db.execute("SELECT * FROM profsum_environment WHERE trace_id=?", (tid,))
        return dict(zip([d[0] for d in cur.description], cur.fetchone()))

    def test_pytorch_members(self):
        devs = [gpu("NVIDIA A100-SXM4-80GB", 84990623744, i=0), gpu("NVIDIA A100-SXM4-80GB", 84990623744, i=1),
                gpu("NVIDIA H100", 102085492736, 9, 0, 132, i=2)]
        tid = self.imp(kineto(devs, cuda_runtime_version=12090, cupti_version=28, with_stack=True,
                              roctracer_version=4.1, traceName="/tmp/x.json", baseTimeNanoseconds=1775078550000000000,
                              distributedInfo={"backend": "nccl", "rank": 3, "world_size": 16,
                                               "pg_config": [{"pg_name": "0", "ranks": [0, 1]}]},
                              username="someone", displayTimeUnit="ms",
                              INFO=["INFO: Enabling GPU tracing"], nothing=None, empty=""), "k")
        self.assertEqual(self.rows(tid), {
            "schemaVersion": "1",
            "device_count": "3",
            "device_model": "NVIDIA A100-SXM4-80GB, NVIDIA H100",      # distinct, in byte order
            "device_memory_bytes": "102085492736, 84990623744",
            "device_compute_capability": "8.0, 9.0",
            "device_sm_count": "108, 132",
            "cuda_runtime_version": "12090", "cupti_version": "28", "with_stack": "true",
            "roctracer_version": "4.1", "traceName": "/tmp/x.json",
            "baseTimeNanoseconds": "1775078550000000000",
            "distributed_backend": "nccl", "distributed_rank": "3", "distributed_world_size": "16"})
        e = self.env(tid)
        self.assertEqual((e["source_format"], e["jax_version"], e["device_model"], e["n_devices"],
                          e["profile_start_utc"]),
                         ("perfetto_trace_json", None, "NVIDIA A100-SXM4-80GB, NVIDIA H100", 3, None))
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        self.assertIn("| n/a | n/a | 3 | NVIDIA A100-SXM4-80GB, NVIDIA H100 | n/a | n/a |\n", md)

    def test_members_after_the_events_escapes_and_repeats(self):
        # members anywhere around traceEvents; a key written with escapes;
        # a repeated key keeps its last value; a value over 64 KiB is not kept
        text = ('{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0, "dur": 1}],'
                ' "cuda_\\u0064river_version": 13000, "deviceProperties": [], "hostname_note": "a",'
                ' "hostname_note": "b", "long": "%s", "otherData": {"version": "PyTorch 2.5", "nested": {"x": 1}},'
                ' "metadata": {"hardwareConcurrency": 12, "username": "someone"}}' % ("y" * 70000))
        tid = self.imp(text, "e")
        self.assertEqual(self.rows(tid), {"cuda_driver_version": "13000", "hostname_note": "b",
                                          "version": "PyTorch 2.5", "hardwareConcurrency": "12"})
        e = self.env(tid)
        self.assertEqual((e["device_model"], e["n_devices"]), (None, 0))

    def test_what_is_left_out(self):
        ev = '"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0, "dur": 1}]'
        # xprof's header of a JAX trace JSON states nothing
        tid = self.imp('{"displayTimeUnit": "ns", "metadata": {"highres-ticks": true}, %s}' % ev, "jax")
        self.assertEqual((self.rows(tid), self.env(tid)["metadata"]), ({}, "{}"))
        # the scanner's limits: values of 64 KiB of JSON text (a container,
        # since a string over 4,096 bytes is left out anyway), keys of 128
        # bytes, 64 members; a key given again with too long a value loses
        # its first value too
        text = ('{%s, "otherData": {"version": "big", "pad": "%s"}, "k%s": 1, "K%s": 2, "again": "first",'
                ' "again": {"pad": "%s"}}' % (ev, "y" * 70000, "x" * 127, "x" * 128, "y" * 70000))
        self.assertEqual(self.rows(self.imp(text, "limits")), {"k" + "x" * 127: "1"})
        text = '{%s, "otherData": {"version": "ok", "pad": "%s"}}' % (ev, "y" * 60000)
        self.assertEqual(self.rows(self.imp(text, "fits")), {"version": "ok"})
        text = "{%s, %s}" % (ev, ", ".join('"m%02d": %d' % (i, i) for i in range(70)))
        self.assertEqual(self.rows(self.imp(text, "many")), dict(("m%02d" % i, str(i)) for i in range(64)))
        # integers past 64 bits keep their digits; bytes that are not UTF-8
        # become U+FFFD; a string with U+0000 is left out, and so is an
        # otherData object that writes \u0000 (its names would be cut there)
        data = ('{%s, "big": 18446744073709551616, "neg": -1.5e300, "nul": "a\\u0000b",'
                ' "bad": "x\xffy", "otherData": {"jax_version\\u0000x": "9", "v": "1"}}' % ev).encode("latin-1")
        rows = self.rows(self.imp(data, "odd"))
        self.assertEqual(rows, {"big": "18446744073709551616", "neg": "-1.5e+300", "bad": "x\ufffdy"})

    def test_the_summary_is_unchanged(self):
        # the members are the environment's only: the v1 document and the
        # rows of trace_events are those of the same trace without them
        plain = json.loads(kineto([]))
        del plain["deviceProperties"]
        a = self.imp(json.dumps(plain), "plain")
        b = self.imp(kineto([gpu("NVIDIA B200", 191503138816, 10, 0, 148)], cuda_runtime_version=12090), "rich")
        da = json.loads(self.db.execute("SELECT profsum_summary_json(?)", (a,)).fetchone()[0])
        db = json.loads(self.db.execute("SELECT profsum_summary_json(?)", (b,)).fetchone()[0])
        for d in (da, db):
            del d["generated_at_utc"], d["source_path"], d["trace_provenance"]["trace_sha256"]
        self.assertEqual(da, db)
        self.assertEqual(da["trace_overview"]["num_complete_events"], 2)
        q = "SELECT name, ts, dur_ps, pid, tid FROM trace_events(?) ORDER BY idx"
        self.assertEqual(self.db.execute(q, (os.path.join(self.td.path, "plain.json"),)).fetchall(),
                         self.db.execute(q, (os.path.join(self.td.path, "rich.json"),)).fetchall())

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_out_of_memory(self):
        """The members kept by the scanner and read by the collector, with
        every allocation of the import made to fail in turn: an error or
        the same result each time, nothing leaked."""
        text = kineto([gpu("NVIDIA H100", 102085492736, 9, 0, 132, i) for i in range(2)],
                      cuda_runtime_version=12090, otherData={"version": "2.5"},
                      distributedInfo={"backend": "nccl", "rank": 1, "world_size": 2})
        # a key written with an escape is decoded into an allocation
        p = self.td.write("oom.json", text.replace('"cuda_runtime_version"', '"cuda_\\u0072untime_version"'))
        run_oom_sql(self, ["SELECT profsum_import('%s','k')" % p], step=3)

    def test_compare_md_notes_another_gpu(self):
        a = self.imp(kineto([gpu("NVIDIA A100-SXM4-80GB", 84990623744)]), "a100")
        b = self.imp(kineto([gpu("NVIDIA H100", 102085492736, 9, 0, 132)] * 2), "h100")
        md = self.db.execute("SELECT profsum_compare_md(?, ?)", (a, b)).fetchone()[0]
        self.assertIn("- Environment: before `1 × NVIDIA A100-SXM4-80GB`, after `2 × NVIDIA H100`\n", md)
        self.assertIn("device_model `NVIDIA A100-SXM4-80GB` → `NVIDIA H100`; n_devices `1` → `2`", md)


class Cli(unittest.TestCase):
    def run_cli(self, *args):
        r = subprocess.run([os.path.join(ROOT, "profsum")] + list(args), capture_output=True, text=True,
                           timeout=60)
        return r.returncode, r.stdout, r.stderr

    def test_compare_and_track_note_a_change(self):
        with TempDir() as td:
            a = td.write("a.xplane.pb", capture(jax="0.4.30", model="TPU v5 lite"))
            b = td.write("b.xplane.pb", capture(jax="0.4.30", model="TPU v6 lite", n_tpu=2))
            same = td.write("s.xplane.pb", capture(jax="0.4.30", model="TPU v5 lite"))
            for cmd in ("compare", "track"):
                rc, out, err = self.run_cli(cmd, "--before", a, "--after", b)
                self.assertEqual(rc, 0, err)
                self.assertIn("profsum %s: note: the software or hardware changed between the runs "
                              "(device_model TPU v5 lite -> TPU v6 lite; n_devices 1 -> 2)" % cmd, err)
                json.loads(out)
                rc, out, err = self.run_cli(cmd, "--before", a, "--after", same)
                self.assertEqual(rc, 0, err)
                self.assertNotIn("changed between the runs", err)


if __name__ == "__main__":
    unittest.main()
