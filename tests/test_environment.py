"""profsum_agg_env and profsum_environment: what an XPlane says of where
and when it ran (the /host:metadata plane's stats, Task Environment's
session times, the accelerators), and the notes of profsum_compare_md and
the CLI when two runs differ in it.  The fixtures are XSpace files written
with tests/xspace_writer.py."""
import json
import os
import subprocess
import unittest

import fixtures
import xspace_writer as W
from util import ROOT, DbTestCase, TempDir

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
        # nothing stated: no section
        tid = self.imp(capture(jax=None, task=False), "n")
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
