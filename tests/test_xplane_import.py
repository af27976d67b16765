"""profsum_import of an XPlane (.xplane.pb): summary-v1-spec §6.1 and
fixture F11 of §7, the artifact-folder pick of §1.1, the CLI.

Fixtures are XSpace files written by tests/xspace_writer.py.  Times in the
fixtures are given in µs and stored in ps (µs × 1e6)."""
import glob
import gzip
import json
import os
import sqlite3
import subprocess
import unittest

import fixtures
import xspace_writer as W
from util import CORPUS, ROOT, DbTestCase, connect, env_var, wait_for_task_count

US = 10 ** 6
NO_EVENTS = "XPlane protobuf contained no direct timeline events with offset/duration data."


def f11_planes():
    """F11: one /device:TPU:0 plane, a Steps line and an XLA Ops line."""
    smeta = [(1, W.stat_meta(1, "tf_op")), (2, W.stat_meta(2, "long_name")),
             (3, W.stat_meta(3, "run_id"))]
    emeta = [(1, W.event_meta(1, name="0")), (2, W.event_meta(2, name="1")),
             (3, W.event_meta(3, name="%fusion.1 = f32[8,8] fusion()", display_name="fusion.1")),
             (4, W.event_meta(4, name="%iota.296 = s32[8] iota()", display_name="iota.296")),
             (5, W.event_meta(5, name="%dot.1 = f32[8,8] dot()", display_name="dot.1")),
             (6, W.event_meta(6, name="all-reduce.1"))]
    steps = W.line(id=1, name="Steps", events=[
        W.event(1, offset_ps=0, duration_ps=100 * US),
        W.event(2, offset_ps=100 * US, duration_ps=120 * US)])
    ops = W.line(id=2, name="XLA Ops", events=[
        W.event(3, offset_ps=0, duration_ps=10 * US, stats=[
            W.stat(1, s="train_step/block_0/fusion"), W.stat(2, s="%fusion.1 = f32[8,8] fusion()"),
            W.stat(3, u64=7)]),
        W.event(6, offset_ps=10 * US, duration_ps=20 * US),
        W.event(4, offset_ps=100 * US, duration_ps=1 * US),
        W.event(5, offset_ps=101 * US, duration_ps=30 * US, stats=[
            W.stat(1, s="train_step/block_0/matmul"),
            W.stat(2, s="%dot.1 = f32[8,8] dot(f32[8,8] %lhs, f32[8,8] %rhs)")])])
    return [W.plane(name="/device:TPU:0", lines=[steps, ops], event_metadata=emeta,
                    stat_metadata=smeta)]


def f11():
    return W.xspace(f11_planes())


def one_line(events, name="XLA Ops", plane="/device:TPU:0", timestamp_ns=0, stats=(), **kw):
    """A one-plane, one-line XSpace from (shown name, offset µs, duration µs
    [, stats]) tuples; stats name stat metadata by name (PlaneBuilder)."""
    pb = W.PlaneBuilder(plane)
    evs = []
    for e in events:
        st = [pb.stat(k, **v) for k, v in (e[3] if len(e) > 3 else [])]
        evs.append(pb.event(e[0], offset_ps=round(e[1] * US), duration_ps=round(e[2] * US), stats=st))
    pb.line(id=kw.pop("id", 1), name=name, timestamp_ns=timestamp_ns, events=evs)
    return W.xspace([pb.build()], **kw)


class XPlaneTestCase(DbTestCase):
    def write(self, name, data):
        return self.td.write(name, data)

    def imp(self, path, label=None, opts=None):
        tid = self.db.execute("SELECT profsum_import(?, ?, ?)", (path, label, opts)).fetchone()[0]
        return json.loads(self.db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])

    def doc(self, data, opts=None, name="t.xplane.pb"):
        return self.imp(self.write(name, data), None, opts)

    def tf_ops(self, d):
        return {o["name"]: o["tf_op_path"] for o in d["hot_ops"]}


class F11(XPlaneTestCase):
    def test_asserted_values(self):
        d = self.doc(f11(), '{"warmup_steps": 1}')
        ov = d["trace_overview"]
        self.assertEqual(d["source_format"], "xplane_pb")
        self.assertEqual(ov["display_time_unit"], "us")
        self.assertEqual((ov["num_complete_events"], ov["num_processes"], ov["num_threads"]), (6, 1, 2))
        self.assertEqual(ov["num_events_total"], 6)
        self.assertEqual(ov["quality_warnings"], [])
        self.assertEqual((ov["profile_start_ts"], ov["profile_end_ts"]), (0.0, 220.0))
        st = d["step_time"]
        self.assertEqual(st["all_steps"]["count"], 2)
        self.assertEqual(st["steady_state_steps"]["median"], 120.0)
        self.assertEqual(st["warmup_steps_ignored"], 1)
        names = [o["name"] for o in d["hot_ops"]]
        self.assertEqual(names, ["dot.1", "all-reduce.1", "fusion.1", "iota.296"])
        top = d["gap_before_ops"][0]
        self.assertEqual((top["name"], top["payload_op"], top["marker_op"], top["total_gap_duration"]),
                         ("dot.1", "dot.1", "iota.296", 70.0))
        self.assertEqual(d["trace_provenance"]["run_ids"], ["7"])
        self.assertEqual(len(d["trace_provenance"]["trace_sha256"]), 64)
        # derived values
        sig = {o["name"]: o["shape_signature"] for o in d["hot_ops"]}
        self.assertEqual(sig, {"dot.1": "8,8", "fusion.1": "8,8", "iota.296": "8", "all-reduce.1": None})
        tb = d["time_breakdown"]
        self.assertEqual((tb["compute"]["total_duration"], tb["communication"]["total_duration"],
                          tb["total_duration"]), (41.0, 20.0, 61.0))
        regions = [(r["path"], r["inclusive_duration"], r["exclusive_duration"])
                   for r in d["hierarchical_regions"]]
        self.assertEqual(regions, [("train_step", 40.0, 0.0), ("train_step=>block_0", 40.0, 0.0),
                                   ("train_step=>block_0=>matmul", 30.0, 30.0), ("all-reduce", 20.0, 20.0),
                                   ("train_step=>block_0=>fusion", 10.0, 10.0), ("iota", 1.0, 1.0)])
        self.assertEqual(self.tf_ops(d)["dot.1"], "train_step/block_0/matmul")

    def test_same_sections_as_its_json_equivalent(self):
        # the same events written as a JSON trace (what the derived fields
        # give: the raw metadata name as long_name where a display name
        # differs, run_id "7") summarize to the same sections
        meta = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
                {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}},
                {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
        X = lambda tid, name, ts, dur, **args: dict({"ph": "X", "pid": 1, "tid": tid, "name": name, "ts": ts,
                                                    "dur": dur}, **({"args": args} if args else {}))
        events = meta + [X(1, "0", 0, 100), X(1, "1", 100, 120),
                         X(2, "fusion.1", 0, 10, tf_op="train_step/block_0/fusion",
                           long_name="%fusion.1 = f32[8,8] fusion()", run_id=7),
                         X(2, "all-reduce.1", 10, 20),
                         X(2, "iota.296", 100, 1, long_name="%iota.296 = s32[8] iota()"),
                         X(2, "dot.1", 101, 30, tf_op="train_step/block_0/matmul",
                           long_name="%dot.1 = f32[8,8] dot(f32[8,8] %lhs, f32[8,8] %rhs)")]
        for mode in ("exclusive_per_track", "exclusive_global"):
            opts = json.dumps({"warmup_steps": 1, "breakdown_mode": mode})
            x = self.doc(f11(), opts, name="%s.xplane.pb" % mode)
            j = self.imp(self.write("j-%s.json" % mode, json.dumps({"traceEvents": events})), None, opts)
            for k in ("generated_at_utc", "source_path", "source_format", "trace_provenance"):
                x.pop(k), j.pop(k)
            for d in (x, j):
                d["trace_overview"].pop("display_time_unit")
                d["trace_overview"].pop("num_events_total")
            self.assertEqual(x, j, mode)

    def test_default_label_gzip_and_global_mode(self):
        p = self.write("run/f11.xplane.pb.gz", gzip.compress(f11()))
        d = self.imp(p, None, '{"breakdown_mode": "exclusive_global", "warmup_steps": 1}')
        self.assertEqual(self.db.execute("SELECT label, source_format FROM profsum_trace").fetchall(),
                         [("f11", "xplane_pb")])
        tb = d["time_breakdown"]
        # window [0, 131) over the compute ops; the all-reduce covers 20,
        # compute the rest of the union (61 - 20), the idle 70 is stall
        self.assertEqual(tb["duration_basis"], "exclusive_duration_global_timeline")
        self.assertEqual((tb["compute"]["total_duration"], tb["communication"]["total_duration"],
                          tb["stall"]["total_duration"], tb["total_duration"]), (41.0, 20.0, 70.0, 131.0))
        self.assertEqual(d["step_time"]["steady_state_steps"]["median"], 120.0)

    def test_multi_plane_variant(self):
        planes = []
        for i, (name, a, b) in enumerate([("fusion.host0", 0, 10), ("fusion.host1", 100, 120)]):
            pb = W.PlaneBuilder("/device:TPU:%d" % i)
            pb.line(id=7, name="XLA Ops", events=[pb.event(name, offset_ps=a * US, duration_ps=(b - a) * US)])
            planes.append(pb.build())
        d = self.doc(W.xspace(planes))
        ov = d["trace_overview"]
        self.assertEqual((ov["num_processes"], ov["num_threads"], ov["num_complete_events"]), (2, 2, 2))
        self.assertEqual(sorted(o["name"] for o in d["hot_ops"]), ["fusion.host0", "fusion.host1"])
        self.assertEqual(d["time_breakdown"]["total_duration"], 30.0)


class ArtifactFolder(XPlaneTestCase):
    """§1.1: XPlane first; a decode error or several XPlanes fall back to the
    JSON trace (F1 with steps 100, 120, 140 and softmax 30: median 130)."""

    def folder(self, xplanes, json_doc=b"not json"):
        d = os.path.join(self.td.path, "art%d" % len(os.listdir(self.td.path)))
        sess = os.path.join(d, "plugins", "profile", "2026_01_01_00_00_00")
        os.makedirs(sess)
        with open(os.path.join(sess, "perfetto_trace.json.gz"), "wb") as f:
            f.write(gzip.compress(json_doc if isinstance(json_doc, bytes) else json.dumps(json_doc).encode()))
        for name, data in xplanes:
            with open(os.path.join(sess, name), "wb") as f:
                f.write(data)
        return d

    def median(self, d, opts='{"warmup_steps": 1}'):
        return self.imp(d, None, opts)["step_time"]["steady_state_steps"]["median"]

    def test_xplane_first_over_an_invalid_json(self):
        d = self.folder([("h.xplane.pb", f11())])
        doc = self.imp(d, None, '{"warmup_steps": 1, "breakdown_mode": "exclusive_global"}')
        self.assertEqual(doc["source_format"], "xplane_pb")
        self.assertEqual(doc["step_time"]["steady_state_steps"]["median"], 120.0)
        self.assertEqual(doc["time_breakdown"]["total_duration"], 131.0)
        self.assertEqual(doc["trace_overview"]["quality_warnings"], [])
        picked = self.db.execute("SELECT path FROM profsum_find_traces(?) WHERE picked", (d,)).fetchall()
        self.assertEqual(picked, [(os.path.join(d, "plugins/profile/2026_01_01_00_00_00/h.xplane.pb"),)])
        # the reference summarizes the file it picked: that file is the
        # document's source_path (as a pathlib path), the folder stays the
        # trace's source_path
        self.assertEqual(doc["source_path"], os.path.join(d, "plugins/profile/2026_01_01_00_00_00/h.xplane.pb"))
        doc = self.imp(d + "//./", None, None)
        self.assertEqual(doc["source_path"], os.path.join(d, "plugins/profile/2026_01_01_00_00_00/h.xplane.pb"))
        self.assertEqual(self.db.execute("SELECT source_path FROM profsum_trace ORDER BY trace_id DESC "
                                         "LIMIT 1").fetchone()[0], d + "//./")

    def test_two_xplanes_fall_back_to_json(self):
        f1 = fixtures.f1([100, 120, 140], 30)
        d = self.folder([("a.xplane.pb", f11()), ("b.xplane.pb", f11())], f1)
        self.assertEqual(self.median(d), 130.0)

    def test_decode_error_falls_back_to_json(self):
        f1 = fixtures.f1([100, 120, 140], 30)
        # not protobuf; not UTF-8; gzip, which the reference parses as it is
        # (0x1F: a tag of wire type 7) where profsum's reader would inflate it
        for bad in (b"\xff", W.xspace([W.plane(name=b"bad\xff")]), gzip.compress(f11())):
            d = self.folder([("h.xplane.pb", bad)], f1)
            self.assertEqual(self.median(d), 130.0)
            self.assertEqual(self.db.execute("SELECT format FROM profsum_find_traces(?) WHERE reference_pick",
                                             (d,)).fetchall(), [("perfetto_trace_json_gz",)])
            self.assertEqual(self.db.execute("SELECT source_format FROM profsum_trace ORDER BY trace_id DESC "
                                             "LIMIT 1").fetchall(), [("perfetto_trace_json",)])

    def test_unsorted_xplane_is_still_the_pick(self):
        # not a decode error: the reference would stop on it, not fall back;
        # profsum reads it sorted and says so
        f1 = fixtures.f1([100, 120, 140], 30)
        d = self.folder([("h.xplane.pb", one_line([("b.1", 50, 10), ("a.1", 0, 100)]))], f1)
        doc = self.imp(d)
        self.assertEqual(doc["source_format"], "xplane_pb")
        self.assertIn("not in timeline order", doc["trace_overview"]["quality_warnings"][0])

    def test_two_xplanes_without_json_is_an_error(self):
        d = os.path.join(self.td.path, "only")
        os.makedirs(d)
        for n in ("a", "b"):
            with open(os.path.join(d, n + ".xplane.pb"), "wb") as f:
                f.write(f11())
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT profsum_import(?)", (d,)).fetchone()
        # the reference's error (summary §1.1): the XPlane step's, the files in path order
        self.assertTrue(str(cm.exception).startswith(
            "profsum_import: Found multiple *.xplane.pb files under '%s': %s/a.xplane.pb, %s/b.xplane.pb. "
            % (d, d, d)), str(cm.exception))
        # a folder named with a quote is printed as it is
        q = os.path.join(self.td.path, "it's")
        os.makedirs(q)
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT profsum_import(?)", (q,)).fetchone()
        self.assertTrue(str(cm.exception).startswith(
            "profsum_import: No *.xplane.pb file found under '%s'. " % q), str(cm.exception))


class Rules(XPlaneTestCase):
    def test_xlamodule_rule(self):
        cases = [
            ("a.1", [("tf_op", dict(s="XlaModule:")), ("name", dict(s="jit(matmul)/dot_general"))],
             "jit(matmul)/dot_general"),
            ("b.1", [("tf_op", dict(s=" XlaModule:: ")), ("name", dict(s="jit(f)/x"))], "jit(f)/x"),
            ("c.1", [("tf_op", dict(s="XlaModule:foo")), ("name", dict(s="jit(f)/x"))], "XlaModule:foo"),
            ("d.1", [("tf_op", dict(s="XlaModule:"))], "XlaModule:"),
            ("e.1", [("tf_op", dict(s="XlaModule:")), ("name", dict(s=""))], "XlaModule:"),
            ("f.1", [("name", dict(s="jit(f)/x"))], None),
            # GPU captures: both as refs to stat metadata names
            ("g.1", [("tf_op", dict(ref="XlaModule:")), ("name", dict(ref="jit(g)/dot_general"))],
             "jit(g)/dot_general"),
            ("h.1", [("tf_op", dict(ref=999))], "999"),      # no such key: the decimal
            # Python's strip(): every Unicode whitespace, and 0x1C-0x1F
            ("i.1", [("tf_op", dict(s="\u00a0XlaModule:\u3000")), ("name", dict(s="jit(i)/x"))], "jit(i)/x"),
            ("j.1", [("tf_op", dict(s="\x1cXlaModule\x1f")), ("name", dict(s="jit(j)/x"))], "jit(j)/x"),
            ("k.1", [("tf_op", dict(s="\u200bXlaModule:")), ("name", dict(s="jit(k)/x"))],
             "\u200bXlaModule:"),                     # U+200B is no whitespace to Python
        ]
        d = self.doc(one_line([(n, i * 10, 5, st) for i, (n, st, _) in enumerate(cases)]))
        self.assertEqual(self.tf_ops(d), {n: want for n, _, want in cases})
        paths = {r["path"] for r in d["hierarchical_regions"]}
        self.assertTrue({"matmul", "matmul=>dot_general", "XlaModule"} <= paths, paths)

    def test_step_names_read_as_python_int(self):
        """A Steps event counts when int() of its name succeeds (§4.3): any
        script's decimal digits, whitespace around (not 0x1C-0x1F, which
        int() keeps though strip() removes them), single underscores
        between digits (each case checked with CPython's int())."""
        names = {"\u0663": 3, " 4\u2003": 4, "1_0": 10, "\x1c5": None, "\t5\x0b": 5, "\uff16": 6,
                 "-2": -2, "1__1": None, "_7": None, "8_": None, "\u00b9": None, "": None, "x": None}
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="Steps", events=[pb.event(n, offset_ps=i * 10 * US, duration_ps=5 * US)
                                            for i, n in enumerate(names)])
        pb.line(id=2, name="XLA Ops", events=[pb.event("op.1", offset_ps=0, duration_ps=US)])
        self.doc(W.xspace([pb.build()]))
        got = sorted(r[0] for r in self.db.execute("SELECT step FROM profsum_agg_step_span"))
        self.assertEqual(got, sorted(v for v in names.values() if v is not None))

    def test_metadata_stats_then_event_stats(self):
        pb = W.PlaneBuilder("/device:TPU:0")
        m = pb.eid("op.1", stats=[pb.stat("tf_op", s="meta/level"), pb.stat("source", s="m.py"),
                                  pb.stat("run_id", double=-3.9)])
        pb.line(id=1, name="XLA Ops", events=[
            W.event(m, offset_ps=0, duration_ps=US),
            W.event(m, offset_ps=2 * US, duration_ps=US, stats=[pb.stat("tf_op", s="event/level")])])
        d = self.doc(W.xspace([pb.build()]))
        self.assertEqual([(o["name"], o["count"]) for o in d["hot_ops"]], [("op.1", 2)])
        self.assertEqual(d["trace_provenance"]["run_ids"], ["-3"])
        self.assertEqual(d["trace_provenance"]["source_file_hints"], ["m.py"])
        regions = {r["path"] for r in d["hierarchical_regions"]}
        self.assertEqual(regions, {"meta", "meta=>level", "event", "event=>level"})

    def test_compressed_string_is_unknown_to_the_summary(self):
        """The reference's schema stops at ref_value (7): compressed_str_value
        (8) is an unknown field to it, so a stat's value is the last member
        of fields 2-7 (summary-v1 §6.1), while trace_events, which knows the
        field, shows the inflated string (protobuf: the last member wins)."""
        cz = W.compress("zipped/path")
        pb = W.PlaneBuilder("/device:TPU:0")
        m = pb.eid("op.1", stats=[pb.stat("tf_op", s="meta/level")])
        pb.line(id=1, name="XLA Ops", events=[
            # str then compressed: the summary keeps the str
            W.event(m, offset_ps=0, duration_ps=US, stats=[
                pb.stat("tf_op", s="a/b", cstr=cz), pb.stat("source", s="x.py", cstr=cz)]),
            # only compressed: no value, the metadata's tf_op stays
            W.event(m, offset_ps=2 * US, duration_ps=US, stats=[pb.stat("tf_op", cstr=cz)]),
            # an integer then compressed: the integer
            W.event(m, offset_ps=4 * US, duration_ps=US, stats=[pb.stat("run_id", i64=42, cstr=cz)]),
            # a ref then compressed: the referenced name
            W.event(m, offset_ps=6 * US, duration_ps=US, stats=[
                pb.stat("tf_op", ref=pb.sid("ref/target"), cstr=cz)])])
        path = self.write("c.xplane.pb", W.xspace([pb.build()]))
        d = self.imp(path)
        regions = {r["path"]: r["count"] for r in d["hierarchical_regions"]}
        self.assertEqual(regions, {"a": 1, "a=>b": 1, "meta": 2, "meta=>level": 2,
                                   "ref": 1, "ref=>target": 1})
        self.assertEqual(d["trace_provenance"]["run_ids"], ["42"])
        self.assertEqual(d["trace_provenance"]["source_file_hints"], ["x.py"])
        self.assertEqual([r[0] for r in self.db.execute("SELECT tf_op FROM trace_events(?)", (path,))],
                         ["zipped/path", "zipped/path", "meta/level", "zipped/path"])

    def test_stray_line_at_time_zero_is_left_out(self):
        """A line at timestamp_ns 0 with one event beside a line at epoch
        times with twenty: the one event is left out (more than 2^61 ps
        from the others), not the twenty, though it comes first."""
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops", timestamp_ns=0, events=[pb.event("stray.1", offset_ps=0, duration_ps=US)])
        pb.line(id=2, name="XLA Ops", timestamp_ns=1_700_000_000_000_000_000, events=[
            pb.event("f.%d" % (i % 3), offset_ps=i * 10 * US, duration_ps=5 * US) for i in range(20)])
        d = self.doc(W.xspace([pb.build()]))
        ov = d["trace_overview"]
        self.assertEqual((ov["num_complete_events"], ov["profile_start_ts"]), (20, 1.7e15))
        self.assertEqual(sorted(o["name"] for o in d["hot_ops"]), ["f.0", "f.1", "f.2"])
        self.assertIn("1 complete event is left out", ov["quality_warnings"][0])

    def test_two_lines_with_one_id_are_two_tracks(self):
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.line(id=5, name="XLA Ops", events=[pb.event("a.1", offset_ps=0, duration_ps=100 * US)])
        pb.line(id=5, name="XLA Ops", events=[pb.event("b.1", offset_ps=10 * US, duration_ps=10 * US)])
        d = self.doc(W.xspace([pb.build()]))
        excl = {o["name"]: o["exclusive_duration"] for o in d["hot_ops"]}
        self.assertEqual(excl, {"a.1": 100.0, "b.1": 10.0})      # b is not a's child
        self.assertEqual(d["trace_overview"]["num_threads"], 1)  # one (pid, tid) key
        self.assertEqual(d["gap_before_ops"], [])                # no gap across the lines

    def test_epoch_line_orders_on_its_doubles(self):
        # A line at an epoch timestamp (1.7e18 ns: its µs doubles are 0.25
        # apart): a.1 starts 0.05 µs before b.1 exactly, but both starts
        # round to the line's timestamp, so the doubles tie on ts and put
        # the longer b.1 first, with a.1 nested in it (b.1 self 1 µs). On
        # the exact times b.1 would only overlap a.1 (self 2 µs). The
        # ordering's shortcut for points far apart on one line must leave
        # such near points to the doubles.
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops", timestamp_ns=1700000000000000000, events=[
            pb.event("a.1", offset_ps=50000, duration_ps=US),
            pb.event("b.1", offset_ps=100000, duration_ps=2 * US),
            pb.event("c.1", offset_ps=40 * US, duration_ps=3 * US),
            pb.event("d.1", offset_ps=41 * US, duration_ps=US)])
        d = self.doc(W.xspace([pb.build()]))
        excl = {o["name"]: o["exclusive_duration"] for o in d["hot_ops"]}
        self.assertEqual(excl, {"a.1": 1.0, "b.1": 1.0, "c.1": 2.0, "d.1": 1.0})

    def test_line_kinds_by_own_name_and_tids(self):
        pb = W.PlaneBuilder("/device:TPU:0")
        # id 0 → tid j+1 = 2, which is line 0's id: one thread key, two tracks
        pb.line(id=2, name="XLA Modules", events=[pb.event("jit_f", offset_ps=0, duration_ps=50 * US)])
        pb.line(id=0, name="x", display_name="XLA Ops", events=[pb.event("op.1", offset_ps=0, duration_ps=50 * US)])
        pb.line(id=-7, events=[pb.event("z", offset_ps=0, duration_ps=US)])    # name xline:2
        d = self.doc(W.xspace([pb.build(), W.plane()]))
        ov = d["trace_overview"]
        self.assertEqual((ov["num_processes"], ov["num_threads"]), (2, 2))
        self.assertEqual([o["name"] for o in d["hot_ops"]], ["op.1"])
        self.assertEqual(d["time_breakdown"]["compute"]["total_duration"], 101.0)

    def test_line_kind_by_the_whole_name(self):
        # a NUL byte inside a line name is part of it: "XLA Ops\0x" is no
        # device-op line and "Steps\0" no Steps line (the reference compares
        # whole strings)
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops\x00x", events=[pb.event("fusion.1", offset_ps=0, duration_ps=10 * US)])
        pb.line(id=2, name="Steps\x00", events=[pb.event("1", offset_ps=0, duration_ps=50 * US),
                                                pb.event("2", offset_ps=50 * US, duration_ps=60 * US)])
        d = self.doc(W.xspace([pb.build()]), '{"warmup_steps": 0}')
        self.assertEqual(d["hot_ops"], [])
        self.assertEqual(d["step_time"]["all_steps"]["count"], 0)
        self.assertEqual(sum(v["total_duration"] for v in d["time_breakdown"].values()
                             if isinstance(v, dict)), 120.0)

    def test_skipped_events(self):
        pb = W.PlaneBuilder("/device:TPU:0")
        ok = pb.eid("ok.1")
        nameless = 99
        pb.emeta.append((nameless, W.event_meta(nameless)))
        pb.line(id=1, name="XLA Ops", events=[
            W.event(ok, offset_ps=0, duration_ps=US),
            W.event(ok, offset_ps=2 * US, duration_ps=0),           # zero duration
            W.event(ok, offset_ps=3 * US, duration_ps=-5),          # negative
            W.event(ok, num_occurrences=4, duration_ps=US),         # an aggregate
            W.event(ok, duration_ps=US),                            # no data
            W.event(123, offset_ps=0, duration_ps=US),              # unknown metadata
            W.event(nameless, offset_ps=0, duration_ps=US),         # nameless metadata
            W.event(ok, offset_ps=0, duration_ps=US)])              # offset 0 is present
        d = self.doc(W.xspace([pb.build()]))
        ov = d["trace_overview"]
        self.assertEqual((ov["num_events_total"], ov["num_complete_events"]), (8, 2))
        kinds = {k for (k,) in self.db.execute("SELECT DISTINCT kind FROM profsum_agg_diagnostic")}
        self.assertIn("zero_duration", kinds)

    def test_steps_from_host_train_events(self):
        host = W.PlaneBuilder("/host:CPU")
        host.line(id=1, name="python3", events=[
            host.event("train", offset_ps=0, duration_ps=10 * US, stats=[host.stat("step_num", i64=0)]),
            host.event("train", offset_ps=20 * US, duration_ps=30 * US, stats=[host.stat("step_num", s=" 1_0 ")]),
            host.event("train", offset_ps=60 * US, duration_ps=50 * US, stats=[host.stat("step_num", s="x"),
                                                                              host.stat("step", double=11.9)]),
            host.event("train", offset_ps=120 * US, duration_ps=7 * US)])           # no step
        gpu = W.PlaneBuilder("/device:GPU:0")
        gpu.line(id=3, name="Stream #1(compute)", events=[gpu.event("k", offset_ps=0, duration_ps=US)])
        d = self.doc(W.xspace([gpu.build(), host.build()]), '{"warmup_steps": 0}')
        st = d["step_time"]["all_steps"]
        self.assertEqual((st["count"], st["min"], st["max"]), (3, 10.0, 50.0))

    def test_out_of_range_step_num_is_no_step(self):
        # a step_num the reference reads (Python ints have no range) but
        # 64 bits cannot hold is no step, and its `step` stat is not read
        # in its place; an unparsable string moves on to `step`
        host = W.PlaneBuilder("/host:CPU")
        cases = [([("step_num", dict(u64=2 ** 63)), ("step", dict(i64=5))], 10),
                 ([("step_num", dict(double=1e19)), ("step", dict(i64=6))], 20),
                 ([("step_num", dict(s="99999999999999999999")), ("step", dict(i64=7))], 30),
                 ([("step_num", dict(s="-9_223_372_036_854_775_809")), ("step", dict(i64=9))], 35),
                 ([("step_num", dict(s="9_")), ("step", dict(i64=8))], 40),
                 ([("step_num", dict(i64=3))], 50),
                 # int() refuses more than 4,300 digits (ValueError, as for
                 # "9_"): `step` is read; 4,300 digits are a number, too big
                 ([("step_num", dict(s="1" * 4301)), ("step", dict(i64=11))], 60),
                 ([("step_num", dict(s="-" + "0_1" * 2150 + "1")), ("step", dict(i64=12))], 70),
                 ([("step_num", dict(s="1" * 4300)), ("step", dict(i64=13))], 80)]
        evs, t = [], 0
        for stats, dur in cases:
            evs.append(host.event("train", offset_ps=t * US, duration_ps=dur * US,
                                  stats=[host.stat(k, **v) for k, v in stats]))
            t += dur + 10
        host.line(id=1, name="python3", events=evs)
        gpu = W.PlaneBuilder("/device:GPU:0")
        gpu.line(id=3, name="Stream #1(compute)", events=[gpu.event("k", offset_ps=0, duration_ps=US)])
        d = self.doc(W.xspace([gpu.build(), host.build()]), '{"warmup_steps": 0}')
        st = d["step_time"]["all_steps"]
        self.assertEqual((st["count"], st["min"], st["max"]), (4, 40.0, 70.0))

    def test_xspace_warnings_then_errors_then_no_events(self):
        d = self.doc(W.xspace([W.plane(name="/host:CPU")], errors=["e1"], warnings=["w1", "w2"]))
        self.assertEqual(d["trace_overview"]["quality_warnings"], ["w1", "w2", "e1", NO_EVENTS])
        self.assertEqual(d["trace_overview"]["num_processes"], 1)

    def test_store_events(self):
        # trace_events reads XPlanes: store_events keeps its rows
        p = self.write("s.xplane.pb", f11())
        self.imp(p, None, '{"store_events": true}')
        self.assertEqual(self.db.execute("SELECT count(*), count(DISTINCT tid) FROM profsum_event").fetchone(),
                         (6, 2))

    def test_interrupt_during_the_read(self):
        # sqlite3_interrupt is seen while the XSpace is read (every 16,384
        # events): "interrupted", nothing written
        import threading
        ev = W.f_bytes(4, W.event(1, offset_ps=0, duration_ps=US))
        n = 3000000
        ln = W.f_varint(1, 1) + W.f_bytes(2, "XLA Ops") + ev * n
        pl = W.f_bytes(2, "/device:TPU:0") + W.f_bytes(3, ln) + W.f_bytes(4, W.map_entry(1, W.event_meta(1, name="a")))
        p = self.write("big.xplane.pb", W.f_bytes(1, pl))
        timer = threading.Timer(0.05, self.db.interrupt)
        timer.start()
        try:
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.db.execute("SELECT profsum_import(?)", (p,)).fetchone()
        finally:
            timer.cancel()
        self.assertEqual(str(cm.exception), "profsum_import: interrupted")
        self.assertEqual(self.db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0], 0)

    def test_truncation_warning_first(self):
        # exactly 1,000,000 complete events: the truncation warning, then
        # the XSpace's warnings (§4.1)
        ev = W.f_bytes(4, W.event(1, offset_ps=0, duration_ps=US))
        ln = W.f_varint(1, 1) + W.f_bytes(2, "XLA Ops") + ev * 1000000
        pl = W.f_bytes(2, "/device:TPU:0") + W.f_bytes(3, ln) + W.f_bytes(4, W.map_entry(1, W.event_meta(1, name="a")))
        d = self.doc(W.f_bytes(1, pl) + W.f_bytes(3, "w1"))
        ov = d["trace_overview"]
        self.assertTrue(ov["suspected_truncation"])
        self.assertEqual(ov["quality_warnings"], [
            "Trace contains exactly 1,000,000 complete events; this often indicates export truncation "
            "at a collector cap.", "w1"])

    def test_empty_file(self):
        d = self.doc(b"")
        ov = d["trace_overview"]
        self.assertEqual((ov["num_events_total"], ov["num_complete_events"], ov["num_processes"]), (0, 0, 0))
        self.assertEqual(ov["quality_warnings"], [NO_EVENTS])
        self.assertEqual(d["source_format"], "xplane_pb")

    def test_digest_beside_the_decoding(self):
        """The SHA-256 and size stored for an XPlane are the file's, whether
        the hashing thread (idle scheduling class, taken over at the end by
        the import's thread) hashed it or the import hashed it at once
        (PROFSUM_THREADS=0): a file of several 256 KiB pieces, an empty one,
        and no thread left behind."""
        import hashlib
        events = [("op%d" % (i % 97), i * 2.0, 1.5, [("long_name", {"s": "x" * (i % 300)})])
                  for i in range(9000)]
        data = one_line(events)
        self.assertGreater(len(data), 4 * 256 * 1024)
        before = len(os.listdir("/proc/self/task"))
        for name, blob in (("big.xplane.pb", data), ("none.xplane.pb", b"")):
            path = self.write(name, blob)
            for threads in ("1", "0"):
                with self.subTest(file=name, threads=threads), env_var("PROFSUM_THREADS", threads):
                    db = connect()
                    db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
                    got = db.execute("SELECT sha256, size FROM profsum_trace").fetchone()
                    db.close()
                    self.assertEqual(got, (hashlib.sha256(blob).hexdigest(), len(blob)))
        self.assertEqual(wait_for_task_count(before), before)

    def test_unsorted_line_is_sorted_with_a_warning(self):
        events = [("b.1", 50, 10), ("a.1", 0, 100), ("c.1", 20, 5)]
        d = self.doc(one_line(events))
        excl = {o["name"]: o["exclusive_duration"] for o in d["hot_ops"]}
        self.assertEqual(excl, {"a.1": 85.0, "b.1": 10.0, "c.1": 5.0})     # nested as if sorted
        w = d["trace_overview"]["quality_warnings"]
        self.assertEqual(len(w), 1, w)
        self.assertIn("1 XPlane line is not in timeline order, which the reference summarizer rejects", w[0])
        self.assertIn("'Events on trace track (1, 1) are not in timeline order.'", w[0])
        rows = self.db.execute("SELECT kind FROM profsum_agg_diagnostic WHERE kind='xplane_unsorted_line'").fetchall()
        self.assertEqual(len(rows), 1)
        d = self.doc(one_line(events, name="XLA Modules"), name="m.xplane.pb")
        # a device line the global mode details: the reference's words for both modes
        self.assertIn("'Events on XPlane track (1, 1) are not in timeline order.' ('Events on trace "
                      "track ...' with breakdown_mode exclusive_global)", d["trace_overview"]["quality_warnings"][0])
        d = self.doc(one_line(events, name="Steps"), name="s.xplane.pb")
        self.assertIn("'Events on XPlane track (1, 1) are not in timeline order.'; profsum sorted",
                      d["trace_overview"]["quality_warnings"][0])

    def test_invalid_utf8_given_directly(self):
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.emeta.append((1, W.event_meta(1, name=b"op\xff.1")))
        pb.line(id=1, name="XLA Ops", events=[W.event(1, offset_ps=0, duration_ps=US)])
        d = self.doc(W.xspace([pb.build()]))
        self.assertEqual([o["name"] for o in d["hot_ops"]], ["op\ufffd.1"])
        w = d["trace_overview"]["quality_warnings"]
        self.assertEqual(len(w), 1, w)
        self.assertIn("not valid UTF-8, which the reference summarizer rejects", w[0])

    def test_nan_step_or_run_id_is_read_as_absent_with_a_warning(self):
        # the reference's int() of a NaN or infinite double fails, and its
        # summary with it: for the stats of any named metadata (used or
        # not) and of any event it takes that has stats; a step_num it
        # reads first (an integer, a string int() reads) hides a later one
        nan, inf = float("nan"), float("inf")
        warn = "NaN or infinite double, which the reference summarizer cannot read"
        cases = [
            ([("step_num", dict(double=nan))], [], 1),                  # on the metadata
            ([], [("run_id", dict(double=-inf))], 1),                   # on an event
            ([("step_num", dict(s="x")), ("step", dict(double=inf))], [], 1),   # int("x") fails: step read
            ([("step_num", dict(i64=3)), ("step", dict(double=nan))], [], 0),   # step_num 3 wins
            ([("step_num", dict(s=" 7 ")), ("step", dict(double=nan))], [], 0),
            # a step_num beyond 64 bits is still read first by the reference
            ([("step_num", dict(s="99999999999999999999")), ("step", dict(double=nan))], [], 0),
            ([("run_id", dict(double=2.5))], [], 0),
        ]
        for i, (mstats, estats, n) in enumerate(cases):
            pb = W.PlaneBuilder("/host:CPU")
            pb.emeta.append((1, W.event_meta(1, name="train", stats=[pb.stat(k, **v) for k, v in mstats])))
            pb.line(id=1, name="python", events=[
                W.event(1, offset_ps=0, duration_ps=US, stats=[pb.stat(k, **v) for k, v in estats])])
            d = self.doc(W.xspace([pb.build()]), name="n%d.xplane.pb" % i)
            w = [x for x in d["trace_overview"]["quality_warnings"] if warn in x]
            self.assertEqual(len(w), n, (i, d["trace_overview"]["quality_warnings"]))
            if n:
                self.assertTrue(w[0].startswith("1 step_num, step or run_id stat of the XPlane is a NaN"), w)
        # a metadata no event uses counts too
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.emeta.append((1, W.event_meta(1, name="fusion.1")))
        pb.emeta.append((2, W.event_meta(2, name="unused", stats=[pb.stat("step_num", double=nan)])))
        pb.line(id=1, name="XLA Ops", events=[W.event(1, offset_ps=0, duration_ps=US)])
        d = self.doc(W.xspace([pb.build()]), name="u.xplane.pb")
        self.assertEqual(len([x for x in d["trace_overview"]["quality_warnings"] if warn in x]), 1)

    def test_top_op_text_from_the_reference_sum(self):
        # five 300 ps ops: exactly 0.0015 µs, which the reference's doubles
        # add to 0.0014999999999999998: its candidate text says 0.001
        # (hot_ops has the same sum; profsum_agg_op keeps the exact 0.0015)
        d = self.doc(one_line([("fusion.1", 0.001 * k, 0.0003) for k in range(5)]))
        self.assertEqual(d["hot_ops"][0]["exclusive_duration"], 0.0014999999999999998)
        ev = [c["evidence"] for c in d["optimization_candidates"] if c["candidate_id"] == "single-hot-op"][0]
        self.assertEqual(ev[1], "Top op exclusive duration: 0.001")

    def test_abutting_ops_gap_decided_on_doubles(self):
        # at an epoch timestamp the doubles are 0.25 µs apart: b starts
        # exactly where a ends, but the reference's doubles put a gap there
        ts_ns = 1_700_000_000_000_000_000
        base = float(ts_ns) / 1000
        a_ts = base + 100000 / 1e6
        a_end = a_ts + 100000 / 1e6
        b_ts = base + 200000 / 1e6
        self.assertGreater(b_ts, a_end)
        d = self.doc(one_line([("a.1", 0.1, 0.1), ("b.1", 0.2, 0.1)], timestamp_ns=ts_ns))
        gaps = [(g["name"], g["total_gap_duration"]) for g in d["gap_before_ops"]]
        self.assertEqual(gaps, [("b.1", b_ts - a_end)])
        self.assertEqual(d["trace_overview"]["profile_start_ts"], a_ts)

    def test_child_ending_with_parent_decided_on_doubles(self):
        # the child's exact end is the parent's, its double end is later: a
        # partial overlap for the reference, so not a child
        ts_ns = 1_700_000_000_000_000_000
        base = float(ts_ns) / 1000
        p_end = (base + 0.0) + 0.6
        c_ts = base + 0.2
        c_end = c_ts + 0.4
        self.assertTrue(c_ts < p_end < c_end)
        d = self.doc(one_line([("p.1", 0.0, 0.6), ("c.1", 0.2, 0.4)], timestamp_ns=ts_ns))
        excl = {o["name"]: o["exclusive_duration"] for o in d["hot_ops"]}
        self.assertEqual(excl, {"p.1": 0.6, "c.1": 0.4})       # nested, p.1 would have 0.2


class Cli(XPlaneTestCase):
    def run_cli(self, *args):
        exe = os.path.join(ROOT, "profsum")
        r = subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout, r.stderr

    def test_summarize_xplane_file_and_profile_dir(self):
        p = self.write("f11.xplane.pb", f11())
        rc, out, err = self.run_cli("summarize", "--xplane-file", p, "--warmup-steps", "1",
                                    "--xplane-output-dir", self.td.path, "--xplane-count-trace-events")
        self.assertEqual(rc, 0, err)
        d = json.loads(out)
        self.assertEqual((d["source_format"], d["step_time"]["steady_state_steps"]["median"]), ("xplane_pb", 120.0))
        self.assertIn("profsum does not run xprof's converter", err)
        rc, out, err = self.run_cli("summarize", "--profile-dir", self.td.path)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["source_format"], "xplane_pb")
        self.assertEqual(err, "")
        # the content tells an XSpace, whatever its name
        rc, out, err = self.run_cli("summarize", "--xplane-file", self.write("capture.pb", f11()))
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["trace_overview"]["num_complete_events"], 6)


    def test_compare_and_track_note_a_change_of_source(self):
        x = self.write("f11.xplane.pb", f11())
        x2 = self.write("g11.xplane.pb", f11() + W.f_bytes(3, "a warning"))
        j = self.write("f1.trace.json", json.dumps(fixtures.f1([100, 120, 140], 30)))
        note = "before and after come from different sources (source_format xplane_pb and perfetto_trace_json)"
        for cmd in ("compare", "track"):
            rc, out, err = self.run_cli(cmd, "--before", x, "--after", j)
            self.assertEqual(rc, 0, err)
            self.assertIn("profsum %s: note: %s" % (cmd, note), err)
            json.loads(out)
            rc, out, err = self.run_cli(cmd, "--before", x, "--after", x2)
            self.assertEqual(rc, 0, err)
            self.assertNotIn("different sources", err)


@unittest.skipUnless(os.path.isdir(CORPUS), "corpus absent")
class Corpus(unittest.TestCase):
    """Every corpus XPlane imports; beside each, derived/<name>/ holds the
    JSON trace xprof's converter made of it: the device-op events agree,
    and the fields that differ differ for the reasons listed."""

    def files(self):
        return sorted(glob.glob(os.path.join(CORPUS, "**", "*.xplane.pb"), recursive=True))

    def test_every_xplane_imports(self):
        files = self.files()
        self.assertGreater(len(files), 0)
        for p in files:
            db = connect()
            try:
                tid = db.execute("SELECT profsum_import(?, 'x')", (p,)).fetchone()[0]
                d = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
                self.assertEqual(d["source_format"], "xplane_pb")
                self.assertGreater(d["trace_overview"]["num_complete_events"], 0, p)
            finally:
                db.close()

    # Why the summaries of an XPlane and of its converted JSON differ:
    #  - the JSON's display_time_unit is "ns", the XPlane's "us" (§6.1);
    #  - num_events_total, num_complete_events, num_processes: the converter
    #    adds metadata entries and flow/counter events, drops events of
    #    some lines and writes planes without events as no process;
    #  - trace_sha256: other bytes;
    #  - tf_op_path, hierarchical_regions, gap_region_contexts: the JSON
    #    carries tf_op "XlaModule:" where the XPlane reader applies the
    #    XlaModule rule (AMD GPU JAX captures);
    #  - time_breakdown (host, stall, and their shares): host lines the
    #    converter does not write, or writes in part;
    #  - gap_before_ops, gap_region_contexts: the gaps are decided on each
    #    reading's doubles (the JSON's µs texts; the XPlane's
    #    timestamp_ns/1000 + offset_ps/1e6): ops that abut exactly leave a
    #    gap of one rounding step (2.3e-10 µs at a 1.6e9 ns line timestamp)
    #    in one reading and none in the other, which adds a gap to a row's
    #    count, or a row of its own; the totals agree to 1e-6 µs;
    #  - optimization_candidates, semantic_families: shares of the above.
    EXPLAINED = {"trace_overview", "trace_provenance", "hot_ops", "hierarchical_regions",
                 "gap_region_contexts", "time_breakdown", "gap_before_ops",
                 "optimization_candidates", "semantic_families"}

    def test_against_the_converted_json(self):
        for p in self.files():
            name = os.path.relpath(p, CORPUS).replace(os.sep, "__")[:-len(".xplane.pb")]
            conv = glob.glob(os.path.join(CORPUS, "derived", name, "plugins", "profile", "*", "*.trace.json.gz"))
            if not conv:
                continue
            db = connect()
            try:
                docs = []
                for src, label in ((p, "x"), (conv[0], "j")):
                    tid = db.execute("SELECT profsum_import(?, ?)", (src, label)).fetchone()[0]
                    docs.append(json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0]))
                x, j = docs
                differ = {k for k in x if k not in ("generated_at_utc", "source_path", "source_format")
                          and x[k] != j[k]}
                self.assertLessEqual(differ, self.EXPLAINED, (p, differ - self.EXPLAINED))
                self.assertEqual(x["step_time"], j["step_time"], p)
                self.assertEqual(x["communication_ops"], j["communication_ops"], p)
                # the device-op events: same ops, counts and total durations
                ops = lambda d: {o["name"]: (o["count"], round(o["total_duration"], 6)) for o in d["hot_ops"]}
                self.assertEqual(ops(x), ops(j), p)
                # gap totals per payload agree; a row of one side only holds
                # rounding steps
                gx = {g["name"]: g["total_gap_duration"] for g in x["gap_before_ops"]}
                gj = {g["name"]: g["total_gap_duration"] for g in j["gap_before_ops"]}
                for name in set(gx) | set(gj):
                    self.assertAlmostEqual(gx.get(name, 0.0), gj.get(name, 0.0), delta=1e-6, msg=(p, name))
            finally:
                db.close()


if __name__ == "__main__":
    unittest.main()
