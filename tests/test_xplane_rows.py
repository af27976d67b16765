"""trace_events, profsum_diagnostics and profsum_trim over XPlane files
(.xplane.pb, .xplane.pb.gz): rows per summary §6.1, diagnostics, exact
times, typed args, decode errors, the trim round trip; and, when the corpus
is present, its XPlane files against their expected counts and against the
JSON converted from them."""
import glob
import gzip
import json
import os
import sqlite3
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import OOM_SQL, DbTestCase, CORPUS, run_oom_sql, sqlrun_mem  # noqa: E402
import xspace_writer as xw  # noqa: E402
from xspace_writer import compress as W_compress  # noqa: E402

TS0 = 1_700_000_000_123_456_789      # an epoch-based line time (ns)
I64 = (1 << 63) - 1


def q(db, sql, *args):
    return db.execute(sql, args).fetchall()


def diags(db, path):
    return q(db, "SELECT idx, byte_offset, kind, detail FROM profsum_diagnostics(?)", path)


def kinds(db, path):
    return dict(q(db, "SELECT kind, count(*) FROM profsum_diagnostics(?) GROUP BY kind", path))


class Fixture:
    """A two-plane XSpace with every case the tests look at."""

    def __init__(self):
        dev = xw.PlaneBuilder("/device:GPU:0", id=7)
        sm = dev.stat_ids
        dev.sid("tf_op")
        dev.sid("XlaModule:")       # a stat metadata name that a ref points at
        # metadata with its own stats (the event's win)
        fus = dev.eid("fusion.1", display_name="fusion", stats=[
            dev.stat("hlo_category", s="convolution"), dev.stat("flops", i64=1)])
        self.ev = {}
        # line 0: id 0 → tid 1; nested events; events of every data kind
        e_parent = xw.event(fus, offset_ps=0, duration_ps=100_000, stats=[
            dev.stat("flops", u64=(1 << 64) - 1), dev.stat("tf_op", ref="XlaModule:")])
        e_child = dev.event("copy.2", offset_ps=20_000, duration_ps=40_000)
        e_zero = dev.event("zero", offset_ps=200_000, duration_ps=0)
        e_neg = dev.event("neg", offset_ps=300_000, duration_ps=-5)
        e_agg = dev.event("agg", num_occurrences=12, duration_ps=50)
        e_nodata = dev.event("nodata", duration_ps=50)
        e_unknown = xw.event(999, offset_ps=400_000, duration_ps=1000)
        self.ev.update(parent=e_parent, child=e_child, zero=e_zero, neg=e_neg,
                       agg=e_agg, nodata=e_nodata, unknown=e_unknown)
        dev.line(id=0, name="XLA Ops", timestamp_ns=TS0,
                 events=[e_parent, e_child, e_zero, e_neg, e_agg, e_nodata, e_unknown])
        # line 1: id 5 "Async XLA Ops"; line 2: id 5 again (two lines, one tid)
        dev.line(id=5, name="Async XLA Ops", timestamp_ns=TS0,
                 events=[dev.event("async.1", offset_ps=0, duration_ps=1_000_000)])
        dev.line(id=5, name="other", display_name="Other shown", timestamp_ns=TS0,
                 events=[dev.event("inner", offset_ps=10_000, duration_ps=5_000)])
        # line 3: negative id; line 4: id 0 and no names (xline:4); unsorted
        dev.line(id=-3, name="neg id", timestamp_ns=0,
                 events=[dev.event("late", offset_ps=500, duration_ps=10),
                         dev.event("early", offset_ps=0, duration_ps=1000),
                         dev.event("in_early", offset_ps=100, duration_ps=10)])
        dev.line(id=0, timestamp_ns=-5,
                 events=[dev.event("n", offset_ps=-1500, duration_ps=7)])
        self.dev_sm = sm
        # plane 1: empty name (xplane:1), a host line with epoch times near
        # the int64 limits
        host = xw.PlaneBuilder("", id=1)
        host.line(id=42, name="python", timestamp_ns=TS0, events=[
            host.event("big", offset_ps=I64, duration_ps=I64),
            host.event("small", offset_ps=-I64 - 1, duration_ps=1)])
        # plane 2: a plane without lines
        self.data = xw.xspace([dev.build(), host.build(), xw.plane(name="Task Environment")],
                              hostnames=["h0"])


class XplaneRows(DbTestCase):
    def setUp(self):
        super().setUp()
        self.fx = Fixture()
        self.p = self.td.write("host.xplane.pb", self.fx.data)

    def rows(self, cols, where="1", path=None):
        return q(self.db, "SELECT %s FROM trace_events(?) WHERE %s ORDER BY idx" % (cols, where),
                 path or self.p)

    def test_counts_rows_plus_no_row_diagnostics(self):
        n_rows = q(self.db, "SELECT count(*) FROM trace_events(?)", self.p)[0][0]
        total = q(self.db, "SELECT sum(num_events) FROM profsum_xplane_planes(?)", self.p)[0][0]
        k = kinds(self.db, self.p)
        self.assertEqual(total, 15)
        self.assertEqual(k["xplane_aggregated_event"], 1)
        self.assertEqual(k["xplane_no_event_data"], 1)
        self.assertEqual(n_rows + 2, total)
        # no M rows, ph X, cat NULL
        self.assertEqual(q(self.db, "SELECT DISTINCT ph, cat FROM trace_events(?)", self.p), [("X", None)])

    def test_idx_is_the_xevent_ordinal_and_offsets(self):
        idx = [r[0] for r in self.rows("idx")]
        self.assertEqual(idx, [0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 14])   # 4, 5: no row
        d = {r[2]: r for r in diags(self.db, self.p)}
        data = self.fx.data
        for kind, key, i in (("xplane_aggregated_event", "agg", 4),
                             ("xplane_no_event_data", "nodata", 5),
                             ("zero_duration", "zero", 2),
                             ("negative_duration", "neg", 3),
                             ("xplane_unknown_metadata", "unknown", 6)):
            tagged = xw.f_bytes(4, self.fx.ev[key])
            self.assertEqual(data.count(tagged), 1, key)
            self.assertEqual(d[kind][0], i, kind)
            self.assertEqual(d[kind][1], data.find(tagged), kind)

    def test_pid_tid_and_names(self):
        got = q(self.db, "SELECT DISTINCT pid, tid, process_name, thread_name FROM trace_events(?) "
                "ORDER BY idx", self.p)
        self.assertEqual(got, [
            (1, 1, "/device:GPU:0", "XLA Ops"),
            (1, 5, "/device:GPU:0", "Async XLA Ops"),
            (1, 5, "/device:GPU:0", "Other shown"),
            (1, -3, "/device:GPU:0", "neg id"),
            (1, 5, "/device:GPU:0", "xline:4"),       # id 0 at index 4 → tid 5 too
            (2, 42, "xplane:1", "python")])
        # as profsum_xplane_lines maps them
        lines = q(self.db, "SELECT pid, tid FROM profsum_xplane_lines(?) ORDER BY plane_index, line_index",
                  self.p)
        self.assertEqual(lines, [(1, 1), (1, 5), (1, 5), (1, -3), (1, 5), (2, 42)])
        # names only: no first pass needed, same values
        self.assertEqual(q(self.db, "SELECT thread_name FROM trace_events(?) WHERE idx=8", self.p),
                         [("Other shown",)])

    def test_names(self):
        got = dict(self.rows("idx, name"))
        self.assertEqual(got[0], "fusion")          # display_name wins
        self.assertEqual(got[1], "copy.2")
        self.assertIsNone(got[6])                   # unknown metadata
        d = [r for r in diags(self.db, self.p) if r[2] == "xplane_unknown_metadata"]
        self.assertEqual(len(d), 1)
        self.assertIn("metadata_id 999", d[0][3])

    def test_ts_exact(self):
        got = {r[0]: r[1:] for r in self.rows("name, ts, dur, dur_ps")}
        self.assertEqual(got["fusion"], (TS0, 100, 100_000))
        self.assertEqual(got["copy.2"], (TS0 + 20, 40, 40_000))
        self.assertEqual(got["neg"], (TS0 + 300, -1, -5))   # floor of -5 ps in ns
        self.assertEqual(got["n"], (-5 - 2, 0, 7))          # -5 ns - 1.5 ns, floored
        self.assertEqual(got["big"], (TS0 + I64 // 1000, I64 // 1000, I64))
        self.assertEqual(got["small"], (TS0 + (-I64 - 1) // 1000, 0, 1))
        # "big" lasts more than 2^61 ps: on no track; no ts is out of range
        d = [r for r in diags(self.db, self.p) if r[2] == "time_out_of_range"]
        self.assertEqual([(r[0], "2^61" in r[3]) for r in d], [(13, True)])
        # a ts beyond int64 ns: NULL, with a diagnostic, the row kept
        pb = xw.PlaneBuilder("/host:CPU")
        pb.line(id=1, name="l", timestamp_ns=I64,
                events=[pb.event("far", offset_ps=1000, duration_ps=5),
                        pb.event("near", offset_ps=-1000, duration_ps=5)])
        p = self.td.write("far.xplane.pb", xw.xspace([pb.build()]))
        self.assertEqual(self.rows("name, ts, dur_ps", path=p), [("far", None, 5), ("near", I64 - 1, 5)])
        d = [r for r in diags(self.db, p) if r[2] == "time_out_of_range"]
        self.assertEqual([r[0] for r in d], [0])

    def test_empty_string_stats_are_empty_text(self):
        # a stat of an empty str, bytes or compressed string is '' in the
        # named TEXT columns, as "" is in a JSON trace's (also for the first
        # rows of a file, before any text was kept)
        text = ["tf_op", "hlo_op", "hlo_module", "hlo_category", "long_name", "source", "run_id"]
        pb = xw.PlaneBuilder("/device:TPU:0")
        kinds_ = [dict(s=""), dict(b=b""), dict(cstr=W_compress(""))]
        evs = [pb.event("e%d" % i, offset_ps=i * 10, duration_ps=5,
                        stats=[pb.stat(k, **kw) for k in text]) for i, kw in enumerate(kinds_)]
        evs.append(pb.event("x", offset_ps=40, duration_ps=5, stats=[pb.stat("tf_op", s="x")]))
        evs.append(pb.event("e3", offset_ps=50, duration_ps=5, stats=[pb.stat(k, s="") for k in text]))
        pb.line(id=1, name="XLA Ops", events=evs)
        p = self.td.write("empty.xplane.pb", xw.xspace([pb.build()]))
        cols = ", ".join(text)
        empty = ("",) * len(text)
        self.assertEqual(self.rows(cols, path=p), [empty, empty, empty, ("x",) + (None,) * 6, empty])
        j = self.td.write("empty.json", json.dumps({"traceEvents": [
            {"ph": "X", "pid": 1, "tid": 1, "name": "e", "ts": 0, "dur": 1, "args": {k: "" for k in text}}]}))
        self.assertEqual(self.rows(cols, path=j), [empty])

    def test_ts_at_the_ends_of_int64(self):
        # ts is floor(ps / 1000) ns: -2^63 ns and 2^63-1 ns (up to its last
        # ps) fit; 1 ps below the one and 2^63 ns are beyond int64
        pb = xw.PlaneBuilder("/host:CPU")
        for i, (t0, off) in enumerate([(-I64 - 1, 0), (-I64 - 1, -1), (-I64, -1),
                                       (I64, 999), (I64, 1000)]):
            pb.line(id=i + 1, name="l%d" % i, timestamp_ns=t0,
                    events=[pb.event("e%d" % i, offset_ps=off, duration_ps=1)])
        p = self.td.write("ends.xplane.pb", xw.xspace([pb.build()]))
        self.assertEqual(self.rows("name, ts", path=p), [
            ("e0", -I64 - 1), ("e1", None), ("e2", -I64 - 1), ("e3", I64), ("e4", None)])
        d = [r for r in diags(self.db, p) if r[2] == "time_out_of_range"]
        self.assertEqual([r[0] for r in d], [1, 4])

    def test_tracks_per_line(self):
        got = {r[0]: r[1:] for r in self.rows("name, depth, parent_idx, excl_ps")}
        self.assertEqual(got["fusion"], (0, None, 60_000))
        self.assertEqual(got["copy.2"], (1, 0, 40_000))
        self.assertEqual(got["zero"], (None, None, None))
        self.assertEqual(got["neg"], (None, None, None))
        # same tid 5, but "inner" is on its own line: not a child of async.1
        self.assertEqual(got["async.1"], (0, None, 1_000_000))
        self.assertEqual(got["inner"], (0, None, 5_000))
        # unsorted line: nested as if sorted
        self.assertEqual(got["early"], (0, None, 1000 - 10 - 10))
        self.assertEqual(got["in_early"], (1, 10, 10))
        self.assertEqual(got["late"], (1, 10, 10))
        d = [r for r in diags(self.db, self.p) if r[2] == "xplane_unsorted_line"]
        self.assertEqual([r[0] for r in d], [10, 14])   # "early" after "late"; "small" after "big"
        # exclusive_time over (pid, tid) merges the lines that share tid 5
        merged = dict(q(self.db, "SELECT name, exclusive_time(ts, dur) OVER (PARTITION BY pid, tid "
                        "ORDER BY idx ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
                        "FROM trace_events(?) WHERE dur > 0", self.p))
        self.assertEqual(merged["async.1"], 1_000 - 5)

    def test_args_typing(self):
        args = json.loads(self.rows("args", "idx=0")[0][0])
        # metadata stats first, the event's flops replacing the metadata's in place
        self.assertEqual(list(args), ["hlo_category", "flops", "tf_op"])
        self.assertEqual(args["flops"], str((1 << 64) - 1))
        self.assertEqual(args["tf_op"], "XlaModule:")
        self.assertEqual(self.rows("tf_op, hlo_category, flops", "idx=0"),
                         [("XlaModule:", "convolution", str((1 << 64) - 1))])

    def test_every_stat_kind(self):
        pb = xw.PlaneBuilder("/device:TPU:0")
        stats = [pb.stat("d", double=1.5), pb.stat("nan", double=float("nan")),
                 pb.stat("inf", double=float("inf")), pb.stat("ninf", double=float("-inf")),
                 pb.stat("u", u64=5), pb.stat("ubig", u64=1 << 63), pb.stat("i", i64=-7),
                 pb.stat("s", s='a "q"\n'), pb.stat("b", b=b"\xff\xfeab"),
                 pb.stat("r", ref="target"), pb.stat("c", cstr=xw.compress("inflated")),
                 xw.stat(777, i64=1),                       # unknown stat key: skipped
                 pb.stat("novalue"),                        # no value: skipped
                 pb.stat("hlo_op", s="dot.1"), pb.stat("hlo_module", s="jit_f"),
                 pb.stat("long_name", s="%dot.1 = f32[] dot()"), pb.stat("source", s="a.py:3"),
                 pb.stat("run_id", i64=7), pb.stat("step_num", i64=3),
                 pb.stat("bytes_accessed", u64=4096), pb.stat("correlation_id", i64=11),
                 pb.stat("group_id", i64=-2)]
        pb.sid("target")
        pb.line(id=1, name="XLA Ops", timestamp_ns=0,
                events=[pb.event("dot.1", offset_ps=0, duration_ps=10, stats=stats)])
        p = self.td.write("k.xplane.pb", xw.xspace([pb.build()]))
        args = json.loads(self.rows("args", path=p)[0][0])
        self.assertEqual(args["d"], 1.5)
        self.assertEqual((args["nan"], args["inf"], args["ninf"]), ("NaN", "Infinity", "-Infinity"))
        self.assertEqual((args["u"], args["ubig"], args["i"]), (5, str(1 << 63), -7))
        self.assertEqual(args["s"], 'a "q"\n')
        self.assertEqual(args["b"], "\ufffd\ufffdab")
        self.assertEqual(args["r"], "target")
        self.assertEqual(args["c"], "inflated")
        self.assertNotIn("novalue", args)
        self.assertEqual(len(args), 20)
        got = self.rows("hlo_op, hlo_module, long_name, source, run_id, step_num, "
                        "bytes_accessed, correlation_id, group_id, typeof(step_num)", path=p)
        self.assertEqual(got, [("dot.1", "jit_f", "%dot.1 = f32[] dot()", "a.py:3", "7", 3,
                                4096, 11, -2, "integer")])

    def test_invalid_utf8_given_directly(self):
        pb = xw.PlaneBuilder("/host:CPU")
        pb.line(id=1, name=b"bad\xffname", timestamp_ns=0,
                events=[pb.event("e", offset_ps=0, duration_ps=10)])
        p = self.td.write("u.xplane.pb", xw.xspace([pb.build()]))
        self.assertEqual(self.rows("thread_name", path=p), [("bad\ufffdname",)])
        self.assertIn("invalid_utf8", kinds(self.db, p))

    def test_gzip_and_sniffing(self):
        pz = self.td.write("host.xplane.pb.gz", gzip.compress(self.fx.data))
        cols = "idx, name, pid, tid, ts, dur_ps, args, depth, excl_ps, process_name, thread_name"
        self.assertEqual(self.rows(cols, path=pz), self.rows(cols))
        # by content: an XSpace under another name, gzip or not
        pb = self.td.write("capture.bin", self.fx.data)
        self.assertEqual(self.rows(cols, path=pb), self.rows(cols))
        pbz = self.td.write("capture.gz", gzip.compress(self.fx.data))
        self.assertEqual(self.rows(cols, path=pbz), self.rows(cols))
        # JSON named .xplane.pb is still JSON
        pj = self.td.write("j.xplane.pb", {"traceEvents": [{"ph": "X", "name": "a", "pid": 1,
                                                             "tid": 1, "ts": 1, "dur": 2}]})
        self.assertEqual(q(self.db, "SELECT name, dur_ps FROM trace_events(?)", pj), [("a", 2_000_000)])
        # an empty .xplane.pb is an empty XSpace
        pe = self.td.write("e.xplane.pb", b"")
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", pe), [(0,)])

    def test_sniff_small_first_plane(self):
        """An XSpace starts with 0x0A (a newline to JSON) and its first
        plane's length: a plane of 91 or 123 bytes puts '[' or '{' there.
        Such a file is an XSpace whatever its name; JSON that starts with a
        newline and '[' or '{' stays JSON."""
        def padded(n):
            for k in range(200):
                p = xw.plane(id=0, name="/host:metadata" + "x" * k)
                if len(p) == n:
                    return p
        dev = xw.PlaneBuilder("/device:TPU:0")
        dev.line(id=1, name="XLA Ops", timestamp_ns=0,
                 events=[dev.event("fusion.1", offset_ps=0, duration_ps=10_000_000)])
        for n, ch in ((91, b"["), (123, b"{")):
            data = xw.xspace([padded(n), dev.build()], hostnames=["h"])
            self.assertEqual(data[:2], b"\n" + ch)
            for name in ("h.xplane.pb", "h.bin"):
                with self.subTest(n=n, name=name):
                    path = self.td.write(name, data)
                    self.assertEqual(q(self.db, "SELECT name, pid, dur_ps FROM trace_events(?)", path),
                                     [("fusion.1", 2, 10_000_000)])
                    tid = q(self.db, "SELECT profsum_import(?, ?)", path, "s%d%s" % (n, name))[0][0]
                    self.assertEqual(q(self.db, "SELECT source_format, num_complete_events FROM "
                                       "profsum_overview WHERE trace_id=?", tid), [("xplane_pb", 1)])
        # a plane that is all there is (the file ends after it)
        path = self.td.write("only.bin", xw.xspace([padded(91)]))
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", path), [(0,)])
        # JSON after a newline, under both names
        for name in ("n.xplane.pb", "n.json"):
            for text in ('\n[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]',
                         '\n{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}'):
                with self.subTest(name=name, text=text[:3]):
                    path = self.td.write(name, text.encode())
                    self.assertEqual(q(self.db, "SELECT name, dur_ps FROM trace_events(?)", path),
                                     [("a", 2_000_000)])
        # an XSpace whose first field is a hostname, under another name
        data = xw.xspace(hostnames=["h"]) + xw.xspace([dev.build()])
        self.assertEqual(data[:1], b"\x22")
        path = self.td.write("hosts_first.bin", data)
        self.assertEqual(q(self.db, "SELECT name FROM trace_events(?)", path), [("fusion.1",)])

    def test_sniff_xspace_named_so_that_looks_like_json(self):
        """A file named *.xplane.pb whose first byte is '{' or '[' (or
        after bytes JSON takes for blanks) is an XSpace when protobuf reads
        it as one: the reference parses it, so profsum does too, given
        directly or picked in a profile folder.  Trace JSON under that name
        stays JSON: its bytes are not protobuf."""
        dev = xw.PlaneBuilder("/device:TPU:0")
        dev.line(id=1, name="XLA Ops", timestamp_ns=0,
                 events=[dev.event("fusion.1", offset_ps=0, duration_ps=10_000_000)])
        plane = xw.xspace([dev.build()])
        long_plane = xw.xspace([next(b for b in (xw.plane(id=0, name="/host:metadata" + "x" * k)
                                                  for k in range(200)) if len(b) == 91)])
        self.assertEqual(long_plane[:2], b"\n[")
        cases = {
            # an unknown group (field 15: '{', its end '|'), then the planes
            "group15": xw.f_group(15) + plane,
            # field 11's group ('['), holding a varint field
            "group11": xw.f_group(11, xw.f_varint(1, 5)) + plane,
            # field 1 with wire type 5 ("\r[...": a blank, then '['), an
            # unknown field protobuf skips
            "fixed32": b"\x0d[\x00\x00\x00" + plane,
            # a 91-byte first plane followed by an unknown field
            "plane91": long_plane + xw.f_varint(9, 1) + plane,
            # a group longer than the bytes the sniff reads
            "long_group": xw.f_group(15, xw.f_bytes(1, b"g" * 5000)) + plane,
        }
        for key, data in sorted(cases.items()):
            self.assertIn(data.lstrip(b" \t\r\n")[:1], (b"{", b"["))
            with self.subTest(case=key):
                path = self.td.write("%s.xplane.pb" % key, data)
                self.assertEqual(q(self.db, "SELECT name, dur_ps FROM trace_events(?)", path),
                                 [("fusion.1", 10_000_000)])
                self.assertEqual(q(self.db, "SELECT count(*) FROM profsum_diagnostics(?) WHERE kind LIKE 'json%'",
                                   path), [(0,)])
                tid = q(self.db, "SELECT profsum_import(?, ?)", path, "named_" + key)[0][0]
                self.assertEqual(q(self.db, "SELECT source_format, num_complete_events FROM "
                                   "profsum_overview WHERE trace_id=?", tid), [("xplane_pb", 1)])
                # in a profile folder beside a trace JSON: the XPlane is read
                folder = os.path.join(self.td.path, "art_" + key, "plugins", "profile", "2026_01_01")
                os.makedirs(folder)
                with open(os.path.join(folder, "h.xplane.pb"), "wb") as f:
                    f.write(data)
                with gzip.open(os.path.join(folder, "h.trace.json.gz"), "wt") as f:
                    f.write('{"traceEvents":[]}')
                tid = q(self.db, "SELECT profsum_import(?, ?)", os.path.join(self.td.path, "art_" + key),
                        "folder_" + key)[0][0]
                self.assertEqual(q(self.db, "SELECT source_format, num_complete_events FROM "
                                   "profsum_overview WHERE trace_id=?", tid), [("xplane_pb", 1)])
        # a 91-byte first plane that holds a group is an XSpace under any
        # name, as one without
        grouped = xw.xspace([next(b for b in (xw.plane(id=0, name="/host:metadata" + "x" * k,
                                                       extra=xw.f_group(9, xw.f_varint(1, 1)))
                                               for k in range(200)) if len(b) == 91)]) + plane
        self.assertEqual(grouped[:2], b"\n[")
        path = self.td.write("grouped.bin", grouped)
        self.assertEqual(q(self.db, "SELECT name FROM trace_events(?)", path), [("fusion.1",)])
        # trace JSON under an XPlane's name, short and past the sniffed
        # bytes: JSON
        small = '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}'
        big = '{"traceEvents":[' + ",".join(
            '{"ph":"X","name":"a%d","pid":1,"tid":1,"ts":%d,"dur":1}' % (i, 2 * i) for i in range(200)) + "]}"
        self.assertGreater(len(big), 8192)
        for key, text, n in (("small", small, 1), ("big", big, 200), ("array", "[]", 0), ("object", "{}", 0),
                             ("spaced", ' \n {"traceEvents": []}', 0)):
            with self.subTest(json=key):
                path = self.td.write("json_%s.xplane.pb" % key, text.encode())
                self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", path), [(n,)])

    def test_compressed_string_diagnostics(self):
        """A compressed_str_value that inflates past 16 MiB or is not
        complete gzip/zlib data is left out with a diagnostic: reported by
        profsum_diagnostics and the import, which never read the args, once
        per stat (a metadata stat once, not once per event)."""
        big = W_compress(b"a" * (16 * 1024 * 1024 + 1))
        pb = xw.PlaneBuilder("/device:TPU:0")
        m = pb.eid("meta.op", stats=[pb.stat("c", cstr=b"\x1f\x8bnot gzip")])
        pb.line(id=1, name="XLA Ops", timestamp_ns=0, events=[
            pb.event("big", offset_ps=0, duration_ps=10, stats=[pb.stat("c", cstr=big)]),
            pb.event("ok", offset_ps=10, duration_ps=10, stats=[pb.stat("c", cstr=W_compress(b"fine"))]),
            xw.event(m, offset_ps=20, duration_ps=10), xw.event(m, offset_ps=30, duration_ps=10)])
        path = self.td.write("c.xplane.pb", xw.xspace([pb.build()]))
        want = [(0, "compressed_too_large"), (None, "compressed_invalid")]
        self.assertEqual(sorted(q(self.db, "SELECT idx, kind FROM profsum_diagnostics(?)", path),
                                key=repr), sorted(want, key=repr))
        self.assertEqual(q(self.db, "SELECT name, json_extract(args, '$.c') FROM trace_events(?)", path),
                         [("big", None), ("ok", "fine"), ("meta.op", None), ("meta.op", None)])
        tid = q(self.db, "SELECT profsum_import(?)", path)[0][0]
        self.assertEqual(sorted(q(self.db, "SELECT kind, count(*) FROM profsum_diagnostic WHERE trace_id=? "
                                  "AND kind LIKE 'compressed%' GROUP BY kind", tid)),
                         [("compressed_invalid", 1), ("compressed_too_large", 1)])

    def test_compressed_string_of_several_gzip_members(self):
        """gzip allows several members (RFC 1952): their texts joined, the
        16 MiB bound over all of them; bytes after the end that are no gzip
        member (zero padding too) leave the value out, as does zlib data
        followed by a gzip member."""
        import zlib
        half = W_compress(b"a" * (8 * 1024 * 1024))
        cases = [("two", W_compress("one") + W_compress("two"), "onetwo"),
                 ("three", W_compress("a") + W_compress("") + W_compress("é"), "aé"),
                 ("at_bound", half + half, "a" * (16 * 1024 * 1024)),
                 ("past_bound", half + half + W_compress("b"), None),
                 ("padded", W_compress("x") + b"\0\0\0\0", None),
                 ("garbage", W_compress("x") + b"junk", None),
                 ("cut_member", W_compress("x") + W_compress("y")[:-3], None),
                 ("zlib_then_gzip", zlib.compress(b"z") + W_compress("y"), None)]
        pb = xw.PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops", timestamp_ns=0, events=[
            pb.event(name, offset_ps=10 * i, duration_ps=5, stats=[pb.stat("c", cstr=data)])
            for i, (name, data, _) in enumerate(cases)])
        path = self.td.write("members.xplane.pb", xw.xspace([pb.build()]))
        self.assertEqual(q(self.db, "SELECT name, json_extract(args, '$.c') FROM trace_events(?)", path),
                         [(name, want) for name, _, want in cases])
        self.assertEqual(q(self.db, "SELECT idx, kind FROM profsum_diagnostics(?)", path),
                         [(3, "compressed_too_large")] + [(i, "compressed_invalid") for i in range(4, 8)])

    def test_decode_errors(self):
        bad = self.td.write("t.xplane.pb", self.fx.data[:-40])
        for fn in ("trace_events", "profsum_diagnostics"):
            with self.assertRaises(sqlite3.DatabaseError) as cm:
                q(self.db, "SELECT count(*) FROM %s(?)" % fn, bad)
            msg = str(cm.exception)
            self.assertTrue(msg.startswith("%s: '%s': byte " % (fn, bad)), msg)
        # an error inside an event names plane, line and event
        pb = xw.PlaneBuilder("/host:CPU")
        pb.line(id=1, name="l", timestamp_ns=0,
                events=[pb.event("e", offset_ps=0, duration_ps=1),
                        pb.event("e", offset_ps=0, duration_ps=1, extra=xw.tag(9, 7))])
        p = self.td.write("w.xplane.pb", xw.xspace([pb.build()]))
        with self.assertRaises(sqlite3.DatabaseError) as cm:
            q(self.db, "SELECT name FROM trace_events(?)", p)
        self.assertIn("(plane 0, line 0, event 1", str(cm.exception))

    def test_trim_round_trip(self):
        out = os.path.join(self.td.path, "out.json.gz")
        n = q(self.db, "SELECT profsum_trim(?, ?)", self.p, out)[0][0]
        cols = "name, pid, tid, ts, dur_ps"
        self.assertEqual(sorted(self.rows(cols), key=repr),
                         sorted(self.rows(cols, "ph = 'X'", path=out), key=repr))
        doc = json.load(gzip.open(out))
        ms = [e for e in doc["traceEvents"] if e["ph"] == "M"]
        self.assertEqual(n, len(doc["traceEvents"]))
        self.assertEqual(len(ms), 2 + 4)      # 2 processes; (1,1) (1,5) (1,-3) (2,42)
        # names as §6.1: tid 5's name is the last line's with that key
        names = dict(((r[0], r[1]), r[2]) for r in q(self.db, "SELECT DISTINCT pid, tid, thread_name "
                                                     "FROM trace_events(?) WHERE ph='X'", out))
        self.assertEqual(names[(1, 5)], "xline:4")
        self.assertEqual(names[(2, 42)], "python")
        self.assertEqual(q(self.db, "SELECT DISTINCT process_name FROM trace_events(?) WHERE pid=2", out),
                         [("xplane:1",)])
        # exact microseconds with up to 6 decimals
        big = [e for e in doc["traceEvents"] if e.get("name") == "fusion"][0]
        self.assertEqual(big["dur"], 0.1)
        # args typed as trace_events shows them
        self.assertEqual(big["args"], json.loads(self.rows("args", "idx=0")[0][0]))
        # a WHERE clause: only the device's XLA Ops line, with its metadata
        out2 = os.path.join(self.td.path, "out2.json.gz")
        q(self.db, "SELECT profsum_trim(?, ?, 'tid = 1 AND pid = 1')", self.p, out2)
        self.assertEqual(sorted(self.rows(cols, "tid = 1 AND pid = 1"), key=repr),
                         sorted(self.rows(cols, "ph = 'X'", path=out2), key=repr))
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?) WHERE ph='M'", out2), [(2,)])

    def test_escapes_at_every_position(self):
        # a string stat and an event name with each byte JSON escapes (and
        # some it does not) at every position of texts of 0 to 40 bytes:
        # the args and the trimmed trace give each text back exactly (the
        # escape scan takes 16 bytes at a time, the rest one by one)
        pb = xw.PlaneBuilder("/device:TPU:0", id=1)
        texts = []
        for n in range(0, 41):
            for ch in ('"', "\\", "\n", "\t", "\r", "\x01", "\x1f", "\x7f", " ", "\u00e9", "\u20ac"):
                for pos in sorted({0, n // 2, max(n - 1, 0), 15, 16, 17, 31, 32} if n else {0}):
                    if pos > n:
                        continue
                    base = "".join(chr(0x61 + (k * 7) % 26) for k in range(n))
                    texts.append(base[:pos] + ch + base[pos + 1:] if n else ch)
        evs = [pb.event("op" + t, offset_ps=10 * i, duration_ps=5, stats=[pb.stat("note", s=t)])
               for i, t in enumerate(texts)]
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
        path = self.td.write("esc.xplane.pb", xw.xspace([pb.build()]))
        rows = q(self.db, "SELECT name, args FROM trace_events(?) ORDER BY idx", path)
        self.assertEqual([r[0] for r in rows], ["op" + t for t in texts])
        self.assertEqual([json.loads(r[1])["note"] for r in rows], texts)
        out = os.path.join(self.td.path, "esc.json.gz")
        q(self.db, "SELECT profsum_trim(?, ?)", path, out)
        doc = json.load(gzip.open(out))
        xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
        self.assertEqual([(e["name"], e["args"]["note"]) for e in xs], [("op" + t, t) for t in texts])

    def test_args_of_repeated_metadata(self):
        # events without stats of their own take their metadata entry's
        # args as built for the first such event of the plane: the same
        # args and typed columns as built each time, a metadata id that
        # means another entry in the next plane, events of that entry with
        # stats of their own in between, entries past the memo's bounds
        big = "z" * (70 * 1024)                          # over one entry's bound
        planes, want = [], []
        for k, (tf, extra) in enumerate([("a/b", dict(flops=("i64", 10))),
                                         ("c", dict(hlo_module=("s", "m"), source=("s", "")))]):
            pb = xw.PlaneBuilder("/device:TPU:%d" % k, id=k)
            st = [pb.stat("tf_op", s=tf)] + [pb.stat(n, **{t: v}) for n, (t, v) in extra.items()]
            pb.eid("op", stats=st)                        # metadata id 1 in both planes
            pb.eid("big", stats=[pb.stat("long_name", s=big)])
            many = ["m%d" % i for i in range(300)]       # 300 x 20 KB: past the 4 MiB bound
            for name in many:
                pb.eid(name, stats=[pb.stat("long_name", s=name * (20000 // len(name)))])
            base = {"tf_op": tf}
            base.update({n: v for n, (t, v) in extra.items()})
            seq = [("op", None), ("op", None), ("big", None), ("op", 7), ("op", None), ("big", None)]
            seq += [(n, None) for n in many] + [(n, None) for n in many[::-1]] + [("op", None)]
            evs = []
            for i, (name, own) in enumerate(seq):
                stats = [pb.stat("flops", u64=own), pb.stat("step_num", i64=-1)] if own else []
                evs.append(pb.event(name, offset_ps=10 * i, duration_ps=5, stats=stats))
                if name == "op":
                    a = dict(base)
                    if own:
                        a.update(flops=own, step_num=-1)
                elif name == "big":
                    a = {"long_name": big}
                else:
                    a = {"long_name": name * (20000 // len(name))}
                want.append(a)
            pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
            planes.append(pb.build())
        path = self.td.write("memo.xplane.pb", xw.xspace(planes))
        rows = q(self.db, "SELECT args, tf_op, flops, source, hlo_module, long_name, step_num "
                 "FROM trace_events(?) ORDER BY idx", path)
        self.assertEqual(len(rows), len(want))
        self.assertEqual([json.loads(r[0]) for r in rows], want)
        self.assertEqual([rows[i][0] for i in (0, 1, 3, 4)],
                         ['{"tf_op":"a/b","flops":10}'] * 2 + ['{"tf_op":"a/b","flops":7,"step_num":-1}',
                                                               '{"tf_op":"a/b","flops":10}'])
        self.assertEqual(rows[len(want) // 2][0], '{"tf_op":"c","hlo_module":"m","source":""}')
        self.assertEqual([r[1:] for r in rows],
                         [(a.get("tf_op"), a.get("flops"), a.get("source"), a.get("hlo_module"),
                           a.get("long_name"), a.get("step_num")) for a in want])
        # args alone and the typed columns alone: the same values
        self.assertEqual([r[0] for r in q(self.db, "SELECT args FROM trace_events(?) ORDER BY idx",
                                          path)], [r[0] for r in rows])
        self.assertEqual(q(self.db, "SELECT tf_op, flops, source FROM trace_events(?) ORDER BY idx",
                           path), [r[1:4] for r in rows])

    def memo_hits(self):
        text = q(self.db, "SELECT profsum_debug()")[0][0]
        line = [l for l in text.splitlines() if l.startswith("xplane rows whose args came from")][0]
        return int(line.rsplit(":", 1)[1])

    def test_args_memo_serves_and_is_bounded(self):
        # the memo serves every later event without stats of its own of an
        # entry (profsum_debug counts them), per plane; the args are those
        # built each time
        planes = []
        for k, tf in enumerate(["x/y", "z"]):
            pb = xw.PlaneBuilder("/device:TPU:%d" % k, id=k)
            pb.eid("op", stats=[pb.stat("tf_op", s=tf), pb.stat("flops", u64=3)])
            evs = [pb.event("op", offset_ps=10 * i, duration_ps=5) for i in range(5)]
            evs.insert(2, pb.event("op", offset_ps=15, duration_ps=1, stats=[pb.stat("flops", u64=4)]))
            pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
            planes.append(pb.build())
        path = self.td.write("hits.xplane.pb", xw.xspace(planes))
        before = self.memo_hits()
        rows = q(self.db, "SELECT args FROM trace_events(?) ORDER BY idx", path)
        self.assertEqual(self.memo_hits() - before, 8)          # 4 of 5 in each plane
        want = []
        for tf in ["x/y", "z"]:
            a = '{"tf_op":"%s","flops":3}' % tf
            want += [a, a, '{"tf_op":"%s","flops":4}' % tf, a, a, a]
        self.assertEqual([r[0] for r in rows], want)
        # at most 4 MiB kept per plane: 300 entries of about 60 KB of args,
        # each met twice, take about 4 MB more at the peak than the rows
        # without args (18 MB when kept whole)
        pb = xw.PlaneBuilder("/device:TPU:0", id=1)
        names = ["k%d" % i for i in range(300)]
        for n in names:
            pb.eid(n, stats=[pb.stat("long_name", s=(n * 20000)[:60000])])
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000,
                events=[pb.event(n, offset_ps=10 * i, duration_ps=5) for i, n in enumerate(names * 2)])
        big = self.td.write("memo-bound.xplane.pb", xw.xspace([pb.build()]))
        b0, _, p0 = sqlrun_mem("SELECT count(*) FROM trace_events('%s')" % big)
        b1, _, p1 = sqlrun_mem("SELECT sum(length(args)) FROM trace_events('%s')" % big)
        self.assertLess((p1 - b1) - (p0 - b0), 6 << 20)

    def test_trim_round_trip_exact_decimals(self):
        pb = xw.PlaneBuilder("/device:GPU:0")
        evs = [pb.event("e%d" % i, offset_ps=o, duration_ps=d) for i, (o, d) in enumerate(
            [(1, 1), (999_999, 1_000_001), (123_456_789_012, 7), (-1, 3)])]
        pb.line(id=3, name="Stream #3", timestamp_ns=TS0, events=evs)
        p = self.td.write("d.xplane.pb", xw.xspace([pb.build()]))
        out = os.path.join(self.td.path, "d.json.gz")
        q(self.db, "SELECT profsum_trim(?, ?)", p, out)
        cols = "name, pid, tid, ts, dur_ps"
        self.assertEqual(self.rows(cols, path=p), self.rows(cols, "ph='X'", path=out))
        text = gzip.open(out).read().decode()
        self.assertIn('"ts":%d.789001,"dur":0.000001,' % (TS0 // 1000), text)
        self.assertIn('"ts":%d.788999,"dur":0.000003,' % (TS0 // 1000), text)
        self.assertIn('"ts":%d.788999,"dur":1.000001,' % (TS0 // 1000 + 1), text)


class XplaneInterrupt(DbTestCase):
    """sqlite3_interrupt stops an XPlane read that gives SQLite no row."""

    def test_interrupt_without_rows(self):
        ev = xw.f_bytes(4, xw.event(1, num_occurrences=3, duration_ps=5))   # no row each
        body = xw.f_bytes(2, "/host:CPU") + xw.f_bytes(3, xw.f_varint(1, 1) + ev * 3_000_000)
        body += xw.f_bytes(4, xw.map_entry(1, xw.event_meta(1, name="a")))
        p = self.td.write("big.xplane.pb", xw.f_bytes(1, body))
        for sql in ("SELECT count(*) FROM trace_events(?)",
                    "SELECT count(*) FROM profsum_diagnostics(?)"):
            t = threading.Timer(0.02, self.db.interrupt)
            t.start()
            with self.assertRaises(sqlite3.OperationalError) as cm:
                q(self.db, sql, p)
            t.join()
            self.assertIn("interrupted", str(cm.exception))




@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
class XplaneOutOfMemory(unittest.TestCase):
    """Every allocation of the XPlane paths failed in turn (tests/oom_sql.c,
    ASan): each run is an error or the reference result, nothing leaks."""

    def test_every_allocation(self):
        import tempfile
        with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
            p = os.path.join(tmp, "capture.bin")          # told XPlane by content
            with open(p, "wb") as f:
                f.write(Fixture().data)
            out = os.path.join(tmp, "o.json.gz")
            calls = [
                "SELECT count(*) || ',' || sum(length(args)) || ',' || total(depth) || ',' || "
                "total(excl) || ',' || count(process_name) || ',' || count(tf_op) || ',' || "
                "total(excl_ps) FROM trace_events('%s')" % p,
                "SELECT group_concat(kind || idx || byte_offset) FROM profsum_diagnostics('%s')" % p,
                "SELECT group_concat(thread_name) FROM trace_events('%s')" % p,
                "SELECT profsum_trim('%s', '%s', 'pid = 1')" % (p, out)]
            run_oom_sql(self, calls)


def corpus_xplanes():
    return sorted(glob.glob(os.path.join(CORPUS, "**", "*.xplane.pb"), recursive=True))


@unittest.skipUnless(os.path.exists(os.path.join(CORPUS, "expected_xplane_counts.json")),
                     "corpus not present")
class XplaneCorpus(DbTestCase):
    NO_ROW = ("xplane_aggregated_event", "xplane_no_event_data")

    def test_counts_per_plane_and_line(self):
        """Rows + no-row diagnostics = the XEvents of each plane and line."""
        exp = json.load(open(os.path.join(CORPUS, "expected_xplane_counts.json")))
        files = [f for f in corpus_xplanes() if "/derived/" not in f]
        self.assertTrue(files)
        for path in files:
            rel = os.path.relpath(path, CORPUS)
            e = exp[rel]
            idx = [r[0] for r in q(self.db, "SELECT idx FROM trace_events(?)", path)]
            # every no-row XEvent is listed (no cap per kind)
            listed = [r[0] for r in q(self.db, "SELECT idx FROM profsum_diagnostics(?) "
                                      "WHERE kind IN (?, ?)", path, *self.NO_ROW)]
            self.assertEqual(len(idx) + len(listed), e["events_total"], rel)
            self.assertEqual(len(set(idx + listed)), len(idx) + len(listed), rel)   # each once
            # each line's XEvents are a range of ordinals, in file order
            lines = q(self.db, "SELECT plane_index, coalesce(nullif(display_name, ''), name), "
                      "num_events FROM profsum_xplane_lines(?) ORDER BY plane_index, line_index", path)
            seen = sorted(idx + listed)
            start, per_plane, per_line, j = 0, {}, {}, 0
            for plane, lname, n in lines:
                k = j
                while k < len(seen) and seen[k] < start + n:
                    k += 1
                got = k - j
                j, start = k, start + n
                self.assertEqual(got, n, (rel, plane, lname))
                per_plane[plane] = per_plane.get(plane, 0) + n
                per_line[(plane, lname)] = per_line.get((plane, lname), 0) + n
            for i, pl in enumerate(e["planes"]):
                self.assertEqual(per_plane.get(i, 0), pl["events"], (rel, i))
                for lname, n in pl.get("events_per_line", {}).items():
                    self.assertEqual(per_line.get((i, lname), 0), n, (rel, i, lname))

    def test_device_ops_agree_with_the_converted_json(self):
        sql = ("SELECT process_name, thread_name, ts, name, dur_ps FROM trace_events(?) WHERE ph='X' "
               "AND process_name LIKE '/device:%' AND (thread_name IN ('XLA Ops', 'Async XLA Ops') "
               "OR thread_name LIKE 'Stream #%')")
        dirs = sorted(glob.glob(os.path.join(CORPUS, "derived", "*", "plugins", "profile", "*")))
        self.assertTrue(dirs)
        for d in dirs:
            name = os.path.relpath(d, os.path.join(CORPUS, "derived")).split(os.sep)[0]
            xp = os.path.join(CORPUS, name.replace("__", "/") + ".xplane.pb")
            js = glob.glob(os.path.join(d, "*.trace.json.gz"))
            if not os.path.exists(xp) or not js:
                continue
            a = sorted(r for r in q(self.db, sql, xp) if r[1] != "Async XLA Ops")  # JSON skips it
            b = sorted(q(self.db, sql, js[0]))
            self.assertEqual(len(a), len(b), name)
            self.assertTrue(a, name)
            for x, y in zip(a, b):
                self.assertEqual((x[0], x[1], x[3]), (y[0], y[1], y[3]), name)
                self.assertLessEqual(abs(x[2] - y[2]), 1, (name, x, y))     # ns, rounding
                self.assertLessEqual(abs(x[4] - y[4]), 1, (name, x, y))     # JSON dur >= 1 ps


if __name__ == "__main__":
    unittest.main()
