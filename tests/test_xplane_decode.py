"""The XSpace decoder (ext/reader/xplane_pb.c) and its table-valued functions
profsum_xplane_planes / profsum_xplane_lines (ext/sql/vtab_xplane.c).

Fixtures are written byte by byte by tests/xspace_writer.py.  The SQL
functions show planes, lines and plane stats; the event-level API (names
resolved through the maps, metadata stats then event stats, ordinals, byte
offsets, diagnostics, the lenient UTF-8 mode, skipping) is checked through
tests/fuzz_xplane.c built as a dump tool (-DPROFSUM_XPLANE_DUMP, with
AddressSanitizer and UBSan), in two builds: the default window sizes, and
a 64-byte read-ahead with 256-byte whole lines and bytes values of 16
bytes or more left in the file until read, which makes small files move
the pread window and take the lazy path; both must print the same.

On the corpus (tests/util.py's CORPUS, skipped when absent) every .xplane.pb must
decode and give the per-plane and per-line event counts of
expected_xplane_counts.json.
"""
import gzip
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

from util import connect, TempDir, CORPUS, ROOT, import_memory, sqlrun_mem
import xspace_writer as W

SRC = ["tests/fuzz_xplane.c", "ext/reader/xplane_pb.c", "ext/reader/xplane_schema.c", "ext/reader/i64map.c", "ext/reader/pbwire.c", "ext/reader/gz.c", "ext/util/hash.c", "ext/util/shabg.c", "ext/util/prefault.c", "ext/util/demote.c"]
FUNC = "profsum_xplane_planes"
PLANE_COLS = ("plane_index, pid, plane_id, name, num_lines, num_events, num_event_metadata, "
              "num_stat_metadata, stats, hostnames")
LINE_COLS = ("plane_index, pid, plane_name, line_index, tid, line_id, display_id, name, "
             "display_name, timestamp_ns, duration_ps, num_events")

_BUILD = {}


def dump_tools():
    """(default build, small-window build) of the dump tool, compiled once
    per run into a temporary directory; None when there is no compiler."""
    if "tools" in _BUILD:
        return _BUILD["tools"]
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    tools = None
    if cc:
        d = tempfile.mkdtemp(prefix="profsum-xplane-dump-")
        _BUILD["dir"] = d
        tools = []
        for name, extra in (("dump", []), ("dump_small", ["-DPROFSUM_XP_READAHEAD=64",
                                                          "-DPROFSUM_XP_LINE_WHOLE=256",
                                                          "-DPROFSUM_XP_LAZY_MIN=16"])):
            out = os.path.join(d, name)
            args = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
                    "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                    "-fno-omit-frame-pointer", "-D_GNU_SOURCE", "-DSQLITE_CORE",
                    "-DPROFSUM_XPLANE_DUMP", "-Iext/util", "-Iext/reader", "-Ibuild/gen"] + extra + \
                ["-o", out] + SRC + ["-lsqlite3", "-lz", "-lpthread", "-lm"]
            p = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
            if p.returncode != 0:
                raise AssertionError("cannot build the dump tool:\n" + p.stderr[-3000:])
            tools.append(out)
    _BUILD["tools"] = tools
    return tools


def tearDownModule():
    if _BUILD.get("dir"):
        shutil.rmtree(_BUILD["dir"], ignore_errors=True)


def run_dump(tool, path, *opts):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    env.pop("LD_PRELOAD", None)
    p = subprocess.run([tool] + list(opts) + [path], capture_output=True, timeout=120, env=env)
    if p.returncode not in (0, 1) or p.stderr:
        raise AssertionError("dump tool failed (%d): %s" % (p.returncode, p.stderr.decode()[-3000:]))
    return p.returncode, [json.loads(l) for l in p.stdout.decode("utf-8").splitlines()]


def strip_offsets(x):
    """x without its "off" members, at any depth."""
    if isinstance(x, dict):
        return {k: strip_offsets(v) for k, v in x.items() if k != "off"}
    if isinstance(x, list):
        return [strip_offsets(v) for v in x]
    return x


class XplaneBase(unittest.TestCase):
    def setUp(self):
        self.db = connect()
        self.td = TempDir()

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def write(self, name, data):
        path = os.path.join(self.td.path, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def planes(self, path):
        return [dict(zip([c.strip() for c in PLANE_COLS.split(",")], r)) for r in
                self.db.execute("SELECT %s FROM profsum_xplane_planes(?)" % PLANE_COLS, (path,))]

    def lines(self, path):
        return [dict(zip([c.strip() for c in LINE_COLS.split(",")], r)) for r in
                self.db.execute("SELECT %s FROM profsum_xplane_lines(?)" % LINE_COLS, (path,))]

    def error(self, path, func=FUNC):
        with self.assertRaises(sqlite3.DatabaseError) as cm:
            self.db.execute("SELECT * FROM %s(?)" % func, (path,)).fetchall()
        return str(cm.exception)

    def dump(self, path, *opts):
        """The dump tool's records (both builds must agree, and a read from
        memory too); skips without a compiler."""
        tools = dump_tools()
        if not tools:
            self.skipTest("no C compiler for the dump tool")
        rc, recs = run_dump(tools[0], path, *opts)
        rc2, recs2 = run_dump(tools[1], path, *opts)
        self.assertEqual((rc, recs), (rc2, recs2), "small-window build differs")
        if "--truncate" not in " ".join(opts):
            rc3, recs3 = run_dump(tools[0], path, "--mem", *opts)
            self.assertEqual((rc, recs), (rc3, recs3), "memory read differs")
        return rc, recs

    def events(self, recs):
        return [r["event"] for r in recs if "event" in r]


def two_plane_space():
    """A device plane with two lines and a host plane; three hostnames."""
    dev = W.PlaneBuilder("/device:TPU:0", id=7)
    dev.line(id=1, name="XLA Ops", display_name="XLA Ops", timestamp_ns=1000, events=[
        dev.event("%fusion.1 = f32[8] fusion()", offset_ps=0, duration_ps=500,
                  stats=[dev.stat("flops", i64=64)]),
        dev.event("%fusion.1 = f32[8] fusion()", offset_ps=600, duration_ps=100),
        dev.event("copy.2", offset_ps=800, duration_ps=0),
    ])
    dev.line(id=0, name="Steps", timestamp_ns=1000, events=[
        dev.event("1", offset_ps=0, duration_ps=1000)])
    dev.plane_stat("peak_teraflops_per_second", double=918.0)
    host = W.PlaneBuilder("/host:CPU", id=0)
    host.line(id=-559038734, name="python", timestamp_ns=-5, events=[
        host.event("train", offset_ps=-100, duration_ps=20, stats=[host.stat("step_num", i64=3)])])
    host.line(id=0, name="", display_name="", timestamp_ns=0)
    return W.xspace([dev.build(), host.build()], hostnames=["h0", "h1", "h\"2"])


class PlanesAndLines(XplaneBase):

    def test_counts_and_rows(self):
        path = self.write("a.xplane.pb", two_plane_space())
        rows = self.planes(path)
        self.assertEqual([(r["plane_index"], r["pid"], r["plane_id"], r["name"], r["num_lines"],
                           r["num_events"], r["num_event_metadata"], r["num_stat_metadata"])
                          for r in rows],
                         [(0, 1, 7, "/device:TPU:0", 2, 4, 3, 2),
                          (1, 2, 0, "/host:CPU", 2, 1, 1, 1)])
        for r in rows:
            self.assertEqual(json.loads(r["hostnames"]), ["h0", "h1", 'h"2'])
        self.assertEqual(json.loads(rows[0]["stats"]), {"peak_teraflops_per_second": 918.0})
        self.assertEqual(rows[1]["stats"], "{}")
        lines = self.lines(path)
        self.assertEqual([(l["plane_index"], l["pid"], l["plane_name"], l["line_index"], l["tid"],
                           l["line_id"], l["name"], l["display_name"], l["timestamp_ns"],
                           l["num_events"]) for l in lines],
                         [(0, 1, "/device:TPU:0", 0, 1, 1, "XLA Ops", "XLA Ops", 1000, 3),
                          (0, 1, "/device:TPU:0", 1, 2, 0, "Steps", "", 1000, 1),
                          (1, 2, "/host:CPU", 0, -559038734, -559038734, "python", "", -5, 1),
                          (1, 2, "/host:CPU", 1, 2, 0, "", "", 0, 0)])

    def test_same_name_planes_are_rows_and_empty_space(self):
        p = W.plane(name="/host:CPU", lines=[W.line(id=3, events=[W.event(1, offset_ps=0)])])
        path = self.write("b.xplane.pb", W.xspace([p, p, W.plane()]))
        rows = self.planes(path)
        self.assertEqual([(r["plane_index"], r["name"], r["num_events"]) for r in rows],
                         [(0, "/host:CPU", 1), (1, "/host:CPU", 1), (2, "", 0)])
        self.assertEqual(rows[0]["hostnames"], "[]")
        # a 0-byte file is an empty XSpace
        empty = self.write("empty.xplane.pb", b"")
        self.assertEqual(self.planes(empty), [])
        self.assertEqual(self.lines(empty), [])
        rc, recs = self.dump(empty)
        self.assertEqual((rc, recs), (0, [{"end": {"events": 0, "errors": [], "warnings": [],
                                                   "hostnames": []}}]))

    def test_sql_surface(self):
        path = self.write("c.xplane.pb", two_plane_space())
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_xplane_planes(NULL)").fetchone(), (0,))
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT * FROM profsum_xplane_planes").fetchall()
        self.assertIn("profsum_xplane_planes: missing required argument PATH", str(cm.exception))
        missing = os.path.join(self.td.path, "nope.xplane.pb")
        self.assertEqual(self.error(missing), "profsum_xplane_planes: '%s': cannot open "
                         "(No such file or directory)" % missing)
        self.assertIn("is a directory", self.error(self.td.path, "profsum_xplane_lines"))
        # a FIFO without a writer is refused at once, not waited on in
        # open(): in a subprocess, with a timeout
        fifo = os.path.join(self.td.path, "f.xplane.pb")
        os.mkfifo(fifo)
        script = ("import sqlite3, sys\n"
                  "db = sqlite3.connect(':memory:'); db.enable_load_extension(True); db.load_extension(sys.argv[1])\n"
                  "for f in ('profsum_xplane_planes', 'profsum_xplane_lines'):\n"
                  "    try:\n        db.execute('SELECT count(*) FROM %s(?)' % f, (sys.argv[2],)).fetchall()\n"
                  "    except sqlite3.Error as e:\n        print(e)\n")
        from util import SO
        p = subprocess.run([sys.executable, "-c", script, SO, fifo], capture_output=True, text=True, timeout=60)
        self.assertEqual(len(p.stdout.splitlines()), 2, p.stdout + p.stderr)
        for line in p.stdout.splitlines():
            self.assertRegex(line, r"^profsum_xplane_(planes|lines): '.*f\.xplane\.pb': not a regular file")
        # the hidden path column; a join over several files
        self.assertEqual(self.db.execute("SELECT DISTINCT path FROM profsum_xplane_lines(?)", (path,)).fetchall(),
                         [(path,)])
        self.db.execute("CREATE TEMP TABLE files(p)")
        self.db.executemany("INSERT INTO files VALUES (?)", [(path,), (path,)])
        self.assertEqual(self.db.execute("SELECT count(*) FROM files, profsum_xplane_planes(files.p)").fetchone(), (4,))
        # DIRECTONLY: not from a view stored in the database; a TEMP view can
        self.db.execute("CREATE VIEW v AS SELECT * FROM profsum_xplane_planes('%s')" % path)
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT * FROM v").fetchall()
        self.assertIn("unsafe use of virtual table", str(cm.exception))
        self.db.execute("CREATE TEMP VIEW tv AS SELECT name FROM profsum_xplane_planes('%s')" % path)
        self.assertEqual(len(self.db.execute("SELECT * FROM tv").fetchall()), 2)
        with self.assertRaises(sqlite3.OperationalError):
            self.db.execute("CREATE VIRTUAL TABLE t USING profsum_xplane_planes('%s')" % path)

    def test_value_oneof_set_twice_keeps_last(self):
        """An XStat whose value oneof is set twice on the wire keeps the last
        member, as protobuf does: a string then a ref, a ref then a string,
        a double then an int64, an int64 then a compressed string; the first
        member's value is never shown."""
        pb = W.PlaneBuilder("/device:TPU:0")
        ref_id = pb.sid("XlaModule:")
        cases = [("str_then_ref", dict(s="first"), W.f_varint(7, ref_id), "XlaModule:"),
                 ("ref_then_str", dict(ref=ref_id), W.f_bytes(5, "last"), "last"),
                 ("double_then_int", dict(double=2.5), W.f_varint(4, 7), 7),
                 ("int_then_cstr", dict(i64=-3), W.f_bytes(8, W.compress("inflated")), "inflated"),
                 ("bytes_then_uint", dict(b=b"\xff"), W.f_varint(3, 2**64 - 1), "18446744073709551615")]
        for name, kw, extra, _ in cases:
            pb.stats.append(W.stat(pb.sid(name), extra=extra, **kw))
        # on an event too: metadata stats then event stats, the last member each
        pb.line(name="XLA Ops", timestamp_ns=1000, events=[
            pb.event("fusion.1", offset_ps=0, duration_ps=5,
                     stats=[W.stat(pb.sid("tf_op"), s="first", extra=W.f_varint(7, ref_id))])])
        path = self.write("oneof.xplane.pb", W.xspace([pb.build()]))
        stats = json.loads(self.planes(path)[0]["stats"])
        for name, _, _, want in cases:
            self.assertEqual(stats[name], want, name)
        row = self.db.execute("SELECT tf_op, args FROM trace_events(?)", (path,)).fetchone()
        self.assertEqual(row[0], "XlaModule:")
        self.assertEqual(json.loads(row[1]), {"tf_op": "XlaModule:"})

    def test_plane_stats_every_kind(self):
        pb = W.PlaneBuilder("/device:GPU:0")
        big = "x" * (16 * 1024 * 1024 + 1)
        for name, kw in [
                ("d", dict(double=1.5)), ("tiny", dict(double=5e-324)), ("nan", dict(double=float("nan"))),
                ("inf", dict(double=float("inf"))), ("ninf", dict(double=float("-inf"))),
                ("whole", dict(double=3.0)), ("u", dict(u64=7)), ("ubig", dict(u64=2**64 - 1)),
                ("umax", dict(u64=2**63 - 1)), ("i", dict(i64=-2**63)), ("s", dict(s="héllo\n\"q\"")),
                ("b", dict(b=b"ok\xff\xfe\xe2\x82")), ("r", dict(ref="XlaModule:")),
                ("c", dict(cstr=W.compress("inflated ✓"))), ("cbig", dict(cstr=W.compress(big))),
                ("cbad", dict(cstr=b"\x1f\x8bnot gzip")), ("none", dict()),
                ("d", dict(s="later wins, in the first place"))]:
            pb.plane_stat(name, **kw)
        pb.stats.append(W.stat(999, i64=1))            # unknown stat metadata: left out
        pb.plane_stat("rnum", ref=12345)               # ref to no key: its decimal
        pb.stat_ids.setdefault("", 500)
        pb.stats.append(W.stat(500, i64=2))            # empty name: left out
        path = self.write("s.xplane.pb", W.xspace([pb.build()]))
        stats = self.planes(path)[0]["stats"]
        self.assertEqual(json.loads(stats), {
            "d": "later wins, in the first place", "tiny": 5e-324, "nan": "NaN", "inf": "Infinity",
            "ninf": "-Infinity", "whole": 3.0, "u": 7, "ubig": "18446744073709551615",
            "umax": 9223372036854775807, "i": -9223372036854775808, "s": "héllo\n\"q\"",
            "b": "ok\ufffd\ufffd\ufffd", "r": "XlaModule:", "c": "inflated ✓", "rnum": "12345"})
        # the first name's place, Python's float repr, integers exact
        self.assertTrue(stats.startswith('{"d":"later wins, in the first place","tiny":5e-324,'
                                         '"nan":"NaN","inf":"Infinity","ninf":"-Infinity",'
                                         '"whole":3.0,"u":7,"ubig":"18446744073709551615",'))
        # through the dump: every stat with its kind; the ref to no key
        rc, recs = self.dump(path)
        self.assertEqual(rc, 0)
        ps = [r for r in recs if "plane" in r][0]["plane"]["stats"]
        by = {(s["name"], s["type"]): s for s in ps}
        self.assertEqual(by[("d", "str")]["text"], "later wins, in the first place")
        self.assertEqual(by[("d", "double")]["bits"], "3ff8000000000000")
        self.assertEqual(by[(None, "int64")]["id"], 999)
        self.assertEqual(by[("rnum", "ref")]["text"], "12345")
        self.assertIsNone(by[("cbig", "cstr")]["text"])      # omitted
        diags = [r["diag"] for r in recs if "diag" in r]
        self.assertEqual([d["kind"] for d in diags], ["compressed_too_large", "compressed_invalid"])
        self.assertIn("inflates to more than 16777216 bytes: stat omitted", diags[0]["detail"])

    def test_gzip_file(self):
        data = two_plane_space()
        plain = self.write("g.xplane.pb", data)
        gz = self.write("g.xplane.pb.gz", gzip.compress(data))
        self.assertEqual(self.planes(gz), self.planes(plain))
        self.assertEqual(self.lines(gz), self.lines(plain))
        self.assertEqual(self.dump(gz)[1], self.dump(plain)[1])
        bad = self.write("bad.xplane.pb.gz", gzip.compress(data)[:-12])
        self.assertRegex(self.error(bad), r"^profsum_xplane_planes: '%s': .*truncated" % bad)
        # a gzip plane that claims 2 GB: no 2 GB buffer (see ClaimsTwoGigabytes)
        claim = W.tag(1, W.LEN) + W.varint(2000000000) + b"\x08\x01" * 1000
        gzc = self.write("claim.xplane.pb.gz", gzip.compress(claim))
        self.assertEqual(self.error(gzc), "profsum_xplane_planes: '%s': byte 0 (plane 0): XSpace field 1 "
                         "(planes): length 2000000000 runs past the end of the data (2000 bytes left)" % gzc)


class EventLevel(XplaneBase):

    def test_event_field_forms(self):
        """Events of metadata_id, offset_ps and duration_ps only, which the
        decoder reads in place, in every form protobuf allows: any order,
        repeats (the last counts), non-minimal varints, 9- and 10-byte
        varints, an empty event, a length of two bytes and a non-minimal
        one; the same in the small-window build and from memory."""
        V = W.f_varint
        def ev(*fields):
            return b"".join(V(f, v) for f, v in fields)
        events = [
            ev((1, 1), (2, 10), (3, 5)),                       # protobuf's order
            ev((3, 6), (1, 2), (2, 20)),                       # another order
            ev((1, 1), (2, 5), (1, 2), (3, 7), (2, 30)),       # repeats
            ev((1, 1), (3, 5)),                                # no offset: no data
            ev((1, 1), (2, 40), (3, -5 & (2**64 - 1))),       # a 10-byte varint: -5
            ev((1, 2), (2, 2**63 - 1), (3, 1)),                # a 9-byte varint
            b"\x08\x81\x00\x10\x80\x80\x00\x18\x82\x80\x00",  # non-minimal: 1, 0, 2
            b"",                                               # empty: metadata 0, no data
            ev(*([(3, 1)] * 70 + [(1, 1), (2, 50)])),          # 144 bytes: a 2-byte length
        ]
        raw = W.tag(4, 2) + b"\x86\x00" + ev((1, 2), (2, 60), (3, 9))   # length 6 as 0x86 0x00
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.eid("a")
        pb.eid("b")
        pb.lines.append(W.line(id=1, name="XLA Ops", timestamp_ns=1000, events=events, extra=raw))
        path = self.write("forms.xplane.pb", W.xspace([pb.build()]))
        rc, recs = self.dump(path)
        self.assertEqual(rc, 0)
        got = [(e["mid"], e["name"], e.get("offset_ps"), e["dur"]) for e in self.events(recs)]
        self.assertEqual(got, [(1, "a", 10, 5), (2, "b", 20, 6), (2, "b", 30, 7), (1, "a", None, 5),
                               (1, "a", 40, -5), (2, "b", 2**63 - 1, 1), (1, "a", 0, 2),
                               (0, "", None, 0), (1, "a", 50, 1), (2, "b", 60, 9)])

    def test_events_names_stats_offsets(self):
        data = two_plane_space()
        path = self.write("e.xplane.pb", data)
        rc, recs = self.dump(path)
        self.assertEqual(rc, 0)
        evs = self.events(recs)
        self.assertEqual([e["ord"] for e in evs], [0, 1, 2, 3, 4])
        self.assertEqual([(e["i"], e["name"], e.get("offset_ps"), e["dur"]) for e in evs],
                         [(0, "%fusion.1 = f32[8] fusion()", 0, 500),
                          (1, "%fusion.1 = f32[8] fusion()", 600, 100),
                          (2, "copy.2", 800, 0), (0, "1", 0, 1000), (0, "train", -100, 20)])
        self.assertEqual([(s["name"], s["i"]) for s in evs[0]["stats"]], [("flops", 64)])
        self.assertEqual([(s["name"], s["i"]) for s in evs[4]["stats"]], [("step_num", 3)])
        # each event's byte offset is its tag: field 4, length-delimited
        for e in evs:
            self.assertEqual(data[e["off"]], 0x22)
        for r in recs:
            if "line" in r:
                self.assertEqual(data[r["line"]["off"]], 0x1a)
            if "plane" in r:
                self.assertEqual(data[r["plane"]["off"]], 0x0a)
        self.assertEqual(recs[-1], {"end": {"events": 5, "errors": [], "warnings": [],
                                            "hostnames": ["h0", "h1", 'h"2']}})

    def test_metadata_ids_small_sparse_and_replaced(self):
        """Event and stat metadata found by id whatever the ids are: the
        small ids writers give (1..n, with gaps; found through an array by
        id), ids that are not small (2^40, a negative one; through the
        table), an id given twice (the later entry wins), and ids no entry
        has (0, past the largest, negative): the same names either way."""
        def space(ids, stat_ids):
            em = [(k, W.event_meta(k, name="op%d" % k if k != 7 else "first")) for k in ids]
            em += [(7, W.event_meta(7, name="seven"))] if 7 in ids else []     # replaces
            sm = [(k, W.stat_meta(k, name="s%d" % k)) for k in stat_ids]
            asked = list(ids) + [0, max(ids) + 1, -5, 2**40 + 1]
            evs = [W.event(k, offset_ps=10 * i, duration_ps=5, stats=[W.stat(stat_ids[i % len(stat_ids)], i64=i)])
                   for i, k in enumerate(asked)]
            return W.xspace([W.plane(id=1, name="/device:TPU:0", lines=[W.line(id=1, name="XLA Ops",
                             timestamp_ns=0, events=evs)], event_metadata=em, stat_metadata=sm)]), asked
        small = [1, 2, 3, 5, 7, 8, 40]
        cases = [("small", small, [1, 2, 3]),
                 ("large", [2**40, 2**40 + 7, 3, 7], [2**33, 9]),
                 ("negative", [-3, 1, 2, 7], [-1, 4])]
        for tag, ids, stat_ids in cases:
            with self.subTest(ids=tag):
                data, asked = space(ids, stat_ids)
                path = self.write("ids-%s.xplane.pb" % tag, data)
                got = self.db.execute("SELECT name, args FROM trace_events(?) ORDER BY idx", (path,)).fetchall()
                self.assertEqual(len(got), len(asked))
                for i, (k, (name, args)) in enumerate(zip(asked, got)):
                    want = ("seven" if k == 7 else "op%d" % k) if k in ids else None
                    self.assertEqual(name, want, (tag, k))
                    sk = stat_ids[i % len(stat_ids)]
                    self.assertEqual(json.loads(args), {"s%d" % sk: i}, (tag, k, sk))

    def test_metadata_stats_then_event_stats_and_display_name(self):
        pb = W.PlaneBuilder("/device:GPU:0")
        md = [pb.stat("hlo_category", s="convolution"), pb.stat("tf_op", ref="XlaModule:"),
              pb.stat("name", ref="jit(f)/conv")]
        pb.eid("%convolution.3 = f32[] convolution()", display_name="convolution.3", stats=md,
               child_ids=[5, -1, 2**40])
        pb.line(id=9, name="Stream #1(Kernel)", timestamp_ns=10, events=[
            pb.event("%convolution.3 = f32[] convolution()", offset_ps=5, duration_ps=7,
                     stats=[pb.stat("correlation_id", u64=77), pb.stat("hlo_category", s="event wins")])])
        path = self.write("m.xplane.pb", W.xspace([pb.build()]))
        rc, recs = self.dump(path)
        ev = self.events(recs)[0]
        self.assertEqual((ev["name"], ev["display"], ev["known"]),
                         ("%convolution.3 = f32[] convolution()", "convolution.3", 1))
        self.assertEqual([(s["name"], s.get("text")) for s in ev["meta_stats"]],
                         [("hlo_category", "convolution"), ("tf_op", "XlaModule:"), ("name", "jit(f)/conv")])
        self.assertEqual([(s["name"], s["type"]) for s in ev["stats"]],
                         [("correlation_id", "uint64"), ("hlo_category", "str")])
        em = recs[0]["plane"]["emeta"][0]
        self.assertEqual(em["children"], [5, -1, 2**40])
        # an event whose metadata key is unknown: no names
        pb2 = W.PlaneBuilder("p")
        pb2.line(events=[W.event(42, offset_ps=1, duration_ps=1)])
        rc, recs = self.dump(self.write("m2.xplane.pb", W.xspace([pb2.build()])))
        ev = self.events(recs)[0]
        self.assertEqual((ev["mid"], ev["known"], ev["name"], ev["display"]), (42, 0, "", ""))

    def test_field_order_does_not_matter(self):
        def build(metadata_first, names_first, reverse_event):
            ev_fields = [W.f_varint(1, 1), W.f_varint(2, 50), W.f_varint(3, 9),
                         W.f_bytes(4, W.stat(1, i64=-4))]
            if reverse_event:
                ev_fields.reverse()
            ln = W.line(id=4, name="L", display_name="Shown", timestamp_ns=-8, duration_ps=99,
                        display_id=3, events=[b"".join(ev_fields)], names_first=names_first)
            p = W.plane(id=2, name="P", lines=[ln], event_metadata=[(1, W.event_meta(1, name="op"))],
                        stat_metadata=[(1, W.stat_meta(1, name="k", description="d"))],
                        stats=[W.stat(1, s="v")], metadata_first=metadata_first)
            return W.xspace([p], hostnames=["h"])
        outs = []
        for i, args in enumerate([(False, False, False), (True, True, True), (True, False, True),
                                  (False, True, False)]):
            path = self.write("o%d.xplane.pb" % i, build(*args))
            rc, recs = self.dump(path)
            self.assertEqual(rc, 0)
            outs.append([strip_offsets(list(r.values())[0]) for r in recs])
            self.assertEqual(self.planes(path)[0]["stats"], '{"k":"v"}')
        for o in outs[1:]:
            self.assertEqual(o, outs[0])        # offsets aside, the same walk
        ln = [r for r in outs[0] if "display_id" in r][0]
        self.assertEqual((ln["id"], ln["display"], ln["ts"], ln["dur"], ln["display_id"]),
                         (4, "Shown", -8, 99, 3))
        ev = [r for r in outs[0] if "ord" in r][0]
        self.assertEqual((ev["name"], ev["offset_ps"], ev["dur"], ev["stats"][0]["i"]),
                         ("op", 50, 9, -4))

    def test_oneofs_maps_and_merges(self):
        ev_bytes = W.event(1, offset_ps=10, duration_ps=1) + W.f_varint(5, 3)   # offset then occurrences
        ev2 = W.event(1, num_occurrences=4) + W.f_varint(2, 0)                 # occurrences then offset 0
        ev3 = W.f_varint(1, 1) + W.f_varint(3, 5)                               # neither
        st = W.stat(1, i64=5) + W.f_bytes(5, "s wins")                          # int64 then str
        st2 = W.stat(1, s="x") + W.f_varint(4, -1)                              # str then int64
        emeta = [(1, W.event_meta(1, name="first")), (2, W.event_meta(2, name="two")),
                 (1, W.event_meta(1, name="second", display_name="2nd"))]       # key 1 again: last wins
        merged = W.f_varint(1, 3) + W.f_bytes(2, W.event_meta(3, name="a", stats=[W.stat(1, i64=1)])) \
            + W.f_bytes(2, W.f_bytes(2, "b") + W.f_bytes(5, W.stat(1, i64=2)))   # one entry, two values
        p = W.plane(name="P", lines=[W.line(events=[ev_bytes, ev2, ev3, W.event(3, stats=[st, st2])])],
                    event_metadata=emeta, stat_metadata=[(1, W.stat_meta(1, name="k"))],
                    extra=W.f_bytes(4, merged))
        rc, recs = self.dump(self.write("x.xplane.pb", W.xspace([p])))
        self.assertEqual(recs[0]["plane"]["event_metadata"], 3)
        self.assertEqual([(m["key"], m["name"], m["display"]) for m in recs[0]["plane"]["emeta"]],
                         [(1, "second", "2nd"), (2, "two", ""), (3, "b", "")])
        self.assertEqual([s["i"] for s in recs[0]["plane"]["emeta"][2]["stats"]], [1, 2])
        evs = self.events(recs)
        self.assertEqual((evs[0].get("offset_ps"), evs[0].get("occurrences")), (None, 3))
        self.assertEqual((evs[1].get("offset_ps"), evs[1].get("occurrences")), (0, None))
        self.assertEqual((evs[2].get("offset_ps"), evs[2].get("occurrences"), evs[2]["dur"]), (None, None, 5))
        self.assertEqual(evs[0]["name"], "second")
        self.assertEqual([(s["type"], s.get("text"), s.get("i")) for s in evs[3]["stats"]],
                         [("str", "s wins", None), ("int64", None, -1)])

    def test_map_entry_with_a_skipped_field_stays_in_the_map(self):
        # as protobuf's C++ parser reads it (upb leaves such an entry out of
        # the map; docs/xplane.md): an extra field, a key or a value of
        # another wire type is skipped, the entry read from the rest
        em = [W.map_entry(1, W.event_meta(1, name="extra")) + W.f_varint(3, 0),
              W.f_fixed64(1, 9) + W.map_entry(2, W.event_meta(2, name="later key")),
              W.f_varint(1, 3) + W.f_varint(2, 7)]
        sm = [W.map_entry(1, W.stat_meta(1, name="k")) + W.f_bytes(9, b"x")]
        p = W.plane(name="P", lines=[W.line(id=1, events=[
            W.event(k, offset_ps=k, duration_ps=1, stats=[W.stat(1, i64=k)]) for k in (1, 2, 3)])],
            extra=b"".join(W.f_bytes(4, e) for e in em) + b"".join(W.f_bytes(5, e) for e in sm))
        path = self.write("entries.xplane.pb", W.xspace([p]))
        self.assertEqual([(r["num_event_metadata"], r["num_stat_metadata"]) for r in self.planes(path)],
                         [(3, 1)])
        self.assertEqual(self.db.execute("SELECT name, args FROM trace_events(?) ORDER BY idx",
                                         (path,)).fetchall(),
                         [("extra", '{"k":1}'), ("later key", '{"k":2}'), ("", '{"k":3}')])
        self.assertEqual([r[0] for r in self.db.execute(
            "SELECT kind FROM profsum_diagnostics(?) ORDER BY byte_offset", (path,))],
            ["unknown_field", "wrong_wire_type", "wrong_wire_type", "unknown_field"])

    def test_unknown_fields_and_wrong_wire_types(self):
        unk = (W.f_varint(99, 1) + W.f_fixed64(98, 2) + W.f_fixed32(97, 3) + W.f_bytes(96, b"zz")
               + W.f_group(95, W.f_varint(1, 1) + W.f_group(2)))
        ev = W.event(1, offset_ps=1, duration_ps=2, stats=[W.stat(1, i64=1, extra=unk)], extra=unk)
        ln = W.line(id=1, name="L", events=[ev], extra=unk + W.f_bytes(3, b"ts as bytes"))
        em = W.event_meta(1, name="op", extra=unk + W.f_fixed64(2, 5))   # name as fixed64
        p = W.plane(name="P", lines=[ln], event_metadata=[(1, em)],
                    stat_metadata=[(1, W.stat_meta(1, name="k") + unk)],
                    stats=[W.stat(1, extra=W.f_bytes(4, b"int64 as bytes"))], extra=unk)
        data = W.xspace([p], hostnames=["h"], extra=unk + W.f_varint(4, 5))
        path = self.write("u.xplane.pb", data)
        self.assertEqual([(r["num_lines"], r["num_events"], r["stats"]) for r in self.planes(path)],
                         [(1, 1, "{}")])
        rc, recs = self.dump(path)
        self.assertEqual(rc, 0)
        diags = [r["diag"] for r in recs if "diag" in r]
        kinds = {}
        for d in diags:
            kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
        # 5 unknown fields in each of: XSpace, XPlane, map entry value (XStatMetadata),
        # XEventMetadata, XLine, XEvent, XStat
        self.assertEqual(kinds, {"unknown_field": 35, "wrong_wire_type": 4})
        wrong = sorted(d["detail"].split(": ", 1)[1] for d in diags if d["kind"] == "wrong_wire_type")
        self.assertEqual(wrong, [
            "XEventMetadata field 2 (name) has wire type 1, not 2: skipped",
            "XLine field 3 (timestamp_ns) has wire type 2, not 0: skipped",
            "XSpace field 4 (hostnames) has wire type 0, not 2: skipped",
            "XStat field 4 (int64_value) has wire type 2, not 0: skipped"])
        ev = self.events(recs)[0]
        self.assertEqual((ev["name"], ev["stats"][0]["i"]), ("op", 1))
        self.assertEqual(ev["stats"][0]["off"], data.index(W.f_bytes(4, W.stat(1, i64=1, extra=unk))))
        self.assertEqual(recs[-1]["end"]["hostnames"], ["h"])
        self.assertEqual([d["idx"] for d in diags if "XEvent " in d["detail"]], [0] * 5)

    def test_string_stat_forms(self):
        """A string stat read in place (metadata_id, then str_value, valid
        UTF-8) and the same texts in the forms the general loop reads: the
        same values on events, event metadata and planes."""
        pb = W.PlaneBuilder("/device:GPU:0")
        texts = ["regs:32 grid:1,1,1", "", "x" * 300, "caf\u00e9 \u4e2d"]
        enc = [t.encode("utf-8") for t in texts]
        sid = pb.sid("kernel_details")
        swapped = [W.f_bytes(5, e) + W.f_varint(1, sid) for e in enc]   # id after the text
        pb.stats += [W.stat(pb.sid("p%d" % i), s=e) for i, e in enumerate(enc)]
        evs = []
        for i, e in enumerate(enc):
            mid = pb.eid("k%d" % i, stats=[W.stat(pb.sid("m"), s=e)])
            evs.append(W.event(mid, offset_ps=10 * i, duration_ps=5, stats=[W.stat(sid, s=e)]))
            evs.append(W.event(mid, offset_ps=10 * i + 5, duration_ps=5, stats=[swapped[i]]))
        pb.lines.append(W.line(id=1, name=b"Stream #1", timestamp_ns=1000, events=evs))
        path = self.write("strforms.xplane.pb", W.xspace([pb.build()]))
        stats = json.loads(self.planes(path)[0]["stats"])
        self.assertEqual([stats["p%d" % i] for i in range(4)], texts)
        rows = self.db.execute("SELECT name, args FROM trace_events(?) ORDER BY idx", (path,)).fetchall()
        self.assertEqual([r[0] for r in rows], ["k0", "k0", "k1", "k1", "k2", "k2", "k3", "k3"])
        got = [json.loads(r[1]) for r in rows]
        want = [{"m": t, "kernel_details": t} for t in texts for _ in range(2)]
        self.assertEqual(got, want)
        # the decoder itself, in the default and the 64-byte-window builds
        # and from memory (self.dump compares them): each event's own stat
        rc, recs = self.dump(path)
        self.assertEqual(rc, 0)
        self.assertEqual([(s["name"], s["text"]) for e in self.events(recs) for s in e["stats"]],
                         [("kernel_details", t) for t in texts for _ in range(2)])

    def test_integer_args_extremes(self):
        """Integer stats in trace_events' args: every digit exact at both
        ends of int64 and uint64 (uint64 past int64 as a string)."""
        pb = W.PlaneBuilder("/device:TPU:0")
        vals = [("u0", dict(u64=0)), ("u9", dict(u64=9)), ("u10", dict(u64=10)),
                ("umax", dict(u64=2**63 - 1)), ("ubig", dict(u64=2**63)), ("uall", dict(u64=2**64 - 1)),
                ("i0", dict(i64=0)), ("ineg", dict(i64=-1)), ("imin", dict(i64=-2**63)),
                ("imax", dict(i64=2**63 - 1)), ("i10", dict(i64=-10))]
        pb.line(name="XLA Ops", timestamp_ns=1000, events=[
            pb.event("op", offset_ps=0, duration_ps=5, stats=[pb.stat(n, **kw) for n, kw in vals])])
        path = self.write("ints.xplane.pb", W.xspace([pb.build()]))
        args = self.db.execute("SELECT args FROM trace_events(?)", (path,)).fetchone()[0]
        self.assertEqual(args, '{"u0":0,"u9":9,"u10":10,"umax":9223372036854775807,'
                               '"ubig":"9223372036854775808","uall":"18446744073709551615",'
                               '"i0":0,"ineg":-1,"imin":-9223372036854775808,'
                               '"imax":9223372036854775807,"i10":-10}')

    def test_lenient_utf8(self):
        p = W.plane(name=b"bad\xff", lines=[W.line(name=b"\xe2\x82", events=[
            W.event(1, stats=[W.stat(1, s=b"\xed\xa0\x80x")])])],
            event_metadata=[(1, W.event_meta(1, name=b"op\xc0"))],
            stat_metadata=[(1, W.stat_meta(1, name="k", description=b"\xf5"))])
        path = self.write("l.xplane.pb", W.xspace([p], hostnames=[b"h\x80"]))
        self.assertIn("XPlane field 2 (name) is not valid UTF-8", self.error(path))
        rc, recs = self.dump(path, "--lenient")
        self.assertEqual(rc, 0)
        self.assertEqual([r["plane"]["name"] for r in recs if "plane" in r], ["bad\ufffd"])
        ln = [r["line"] for r in recs if "line" in r][0]
        self.assertEqual(ln["name"], "\ufffd")                       # E2 82: one maximal subpart
        ev = self.events(recs)[0]
        self.assertEqual(ev["name"], "op\ufffd")
        self.assertEqual(ev["stats"][0]["text"], "\ufffd\ufffd\ufffdx")   # a surrogate: three
        self.assertEqual(recs[-1]["end"]["hostnames"], ["h\ufffd"])
        self.assertEqual(sum(1 for r in recs if r.get("diag", {}).get("kind") == "invalid_utf8"), 6)

    def test_skipping_keeps_ordinals(self):
        pb = W.PlaneBuilder("P")
        for k in range(3):
            pb.line(id=k + 1, name="L%d" % k, events=[pb.event("e", offset_ps=i, duration_ps=1)
                                                      for i in range(4)])
        data = W.xspace([pb.build(), pb.build()])
        path = self.write("k.xplane.pb", data)
        rc, recs = self.dump(path, "--lines=2", "--events=1")
        self.assertEqual(rc, 0)
        self.assertEqual([e["ord"] for e in self.events(recs)], [0, 4, 12, 16])
        self.assertEqual(recs[-1]["end"]["events"], 24)

    def test_file_that_shrinks(self):
        pb = W.PlaneBuilder("P")
        pb.line(id=1, name="L", events=[pb.event("e", offset_ps=i, duration_ps=1) for i in range(200)])
        data = W.xspace([pb.build(), pb.build(), pb.build()])
        path = self.write("t.xplane.pb", data)
        tools = dump_tools()
        if not tools:
            self.skipTest("no C compiler for the dump tool")
        # small window: the rest of the file is read after the cut
        rc, recs = run_dump(tools[1], path, "--truncate=%d" % (len(data) // 2))
        self.assertEqual(rc, 1)
        self.assertRegex(recs[-1]["error"], r"^fuzz_xplane: '%s': the file shrank while it was read "
                         r"\(it had %d bytes; it ends before byte \d+\)$" % (path, len(data)))


class DecodeErrors(XplaneBase):
    """Each input protobuf's parser refuses; the message names the function,
    the file, the byte offset and where in the walk."""

    def check(self, data, expected, func=FUNC):
        path = self.write("err.xplane.pb", data)
        self.assertEqual(self.error(path, func), "%s: '%s': %s" % (func, path, expected))
        rc, recs = self.dump(path)
        self.assertEqual(rc, 1)
        self.assertEqual(recs[-1]["error"], "fuzz_xplane: '%s': %s" % (path, expected))
        return path

    def good_plane(self):
        return W.plane(name="P", lines=[W.line(id=1, name="L", events=[W.event(1, offset_ps=1)])],
                       event_metadata=[(1, W.event_meta(1, name="op"))])

    def test_truncated(self):
        data = W.xspace([self.good_plane()])
        self.check(data[:-1], "byte 0 (plane 0): XSpace field 1 (planes): length %d runs past the end "
                   "of the file (%d bytes left)" % (len(data) - 2, len(data) - 3))
        # a cut in a later plane names that plane (a file copied while written)
        first = W.xspace([self.good_plane()])
        two = W.xspace([self.good_plane(), self.good_plane()])
        self.check(two[:-1], "byte %d (plane 1): XSpace field 1 (planes): length %d runs past the end "
                   "of the file (%d bytes left)" % (len(first), len(first) - 2, len(first) - 3))
        # every cut inside the plane is an error; none is a crash
        path = self.write("cut.xplane.pb", b"")
        for n in range(1, len(data)):
            with open(path, "wb") as f:
                f.write(data[:n])
            msg = self.error(path)
            self.assertRegex(msg, r"^profsum_xplane_planes: '%s': byte \d+( \(plane 0[^)]*\))?: " % path)
        # a varint cut by its message's end
        ev = W.f_varint(1, 1) + b"\x10\xff"          # offset_ps varint with its continuation cut
        p = W.plane(lines=[W.line(events=[ev])])
        data = W.xspace([p])
        self.check(data, "byte %d (plane 0, line 0, event 0): XEvent: truncated varint"
                   % (data.index(b"\x10\xff") + 1))
        # a fixed64 cut
        st = W.f_varint(1, 1) + W.tag(2, 1) + b"\x00" * 5
        data = W.xspace([W.plane(stats=[st])])
        self.check(data, "byte %d (plane 0, stat 0): XStat: truncated fixed64 field" % (data.index(st) + 3))

    def test_length_past_message_end(self):
        ev = W.f_varint(1, 1) + W.tag(4, 2) + W.varint(50) + W.stat(1, i64=1)
        data = W.xspace([W.plane(name="P", lines=[W.line(id=1, events=[W.event(1), ev])])])
        self.check(data, "byte %d (plane 0, line 0, event 1): XEvent field 4 (stats): length 50 runs "
                   "past the end of its message (4 bytes left)" % (data.index(ev) + 2))
        ln = W.tag(2, 2) + W.varint(9) + b"ab"
        data = W.xspace([W.plane(lines=[ln])])
        self.check(data, "byte 4 (plane 0, line 0): XLine field 2 (name): length 9 runs past the end "
                   "of its message (2 bytes left)", "profsum_xplane_lines")
        big = W.tag(1, 2) + W.varint(2**31 - 1)
        self.check(big, "byte 0 (plane 0): XSpace field 1 (planes): length 2147483647 is over protobuf's "
                   "limit (2 GiB)")

    def test_varint_over_ten_bytes(self):
        data = W.xspace([W.plane(lines=[W.line(id=1)])])
        bad = W.tag(1, 0) + b"\xff" * 10 + b"\x01"
        data = W.xspace([W.plane(lines=[bad])])
        self.check(data, "byte 5 (plane 0, line 0): XLine: varint longer than 10 bytes")
        # 10 bytes are fine: a negative int64
        self.assertEqual(self.lines(self.write("neg.xplane.pb", W.xspace([W.plane(lines=[W.line(id=-1)])])))[0]["tid"], -1)

    def test_wire_types_6_and_7_and_field_zero(self):
        for wt in (6, 7):
            data = W.xspace([W.plane(name="P", stats=[W.stat(1) + W.tag(3, wt) + b"\x00"])])
            self.check(data, "byte %d (plane 0, stat 0): XStat: invalid wire type %d (field 3)"
                       % (len(data) - 2, wt))
        data = W.xspace([W.plane(name="P")]) + b"\x00\x01"
        self.check(data, "byte %d: XSpace: field number 0" % (len(data) - 2))
        data = W.xspace([W.plane(event_metadata=[(1, W.event_meta(1) + b"\x02\x00")])])
        self.check(data, "byte 10 (plane 0, event_metadata entry 0): XEventMetadata: field number 0")

    def test_groups(self):
        data = W.xspace([W.plane(name="P")]) + W.tag(5, W.EGROUP)
        self.check(data, "byte %d: XSpace: end-group tag of field 5 without a group" % (len(data) - 1))
        data = W.xspace([W.plane(name="P", extra=W.tag(9, W.SGROUP) + W.f_varint(1, 1))])
        self.check(data, "byte 5 (plane 0): XPlane: group of field 9 has no end-group tag")
        data = W.xspace([W.plane(name="P", extra=W.tag(9, W.SGROUP) + W.tag(8, W.EGROUP))])
        self.check(data, "byte 6 (plane 0): XPlane: end-group tag of field 8 closes the group of field 9")
        deep = W.tag(9, W.SGROUP) * 100 + W.tag(9, W.EGROUP) * 100
        data = W.xspace([W.plane(name="P", extra=deep)])
        self.assertIn("groups nested deeper than 100 levels", self.error(self.write("deep.xplane.pb", data)))
        # protobuf's limit: 100 levels of messages and groups below the
        # XSpace itself (checked against protobuf 3.21's C++ parser)
        def groups(n):
            return W.tag(9, W.SGROUP) * n + W.tag(9, W.EGROUP) * n
        for n, ok in ((100, True), (101, False)):
            path = self.write("top%d.xplane.pb" % n, W.xspace([W.plane(name="P")]) + groups(n))
            with self.subTest(where="XSpace", n=n):
                if ok:
                    self.assertEqual([p["name"] for p in self.planes(path)], ["P"])
                else:
                    self.assertIn("groups nested deeper than 100 levels", self.error(path))
        # inside a plane (99 levels below it) and a line (98): the limit is
        # the same whichever pass over the plane meets the groups
        for n, ok in ((99, True), (100, False)):
            path = self.write("plane%d.xplane.pb" % n, W.xspace([W.plane(name="P", extra=groups(n))]))
            with self.subTest(where="XPlane", n=n):
                if ok:
                    self.assertEqual([p["name"] for p in self.planes(path)], ["P"])
                    self.assertEqual(self.db.execute("SELECT count(*) FROM trace_events(?)", (path,)).fetchone(), (0,))
                else:
                    self.assertIn("groups nested deeper than 100 levels", self.error(path))
        for n, ok in ((98, True), (99, False)):
            ev = W.event(1, offset_ps=0, duration_ps=1)
            data = W.xspace([W.plane(name="P", lines=[W.line(id=1, events=[ev], extra=groups(n))],
                                     event_metadata=[(1, W.event_meta(1, name="e"))])])
            path = self.write("line%d.xplane.pb" % n, data)
            with self.subTest(where="XLine", n=n):
                if ok:
                    self.assertEqual(self.db.execute("SELECT name FROM trace_events(?)", (path,)).fetchall(), [("e",)])
                else:
                    self.assertIn("groups nested deeper than 100 levels", self.error(path))
        for n, ok in ((96, True), (97, False)):    # XSpace > plane > line > event > stat
            ev = W.event(1, offset_ps=0, duration_ps=1, stats=[W.stat(1, i64=1, extra=groups(n))])
            data = W.xspace([W.plane(name="P", lines=[W.line(id=1, events=[ev])],
                                     event_metadata=[(1, W.event_meta(1, name="e"))],
                                     stat_metadata=[(1, W.stat_meta(1, "s"))])])
            path = self.write("stat%d.xplane.pb" % n, data)
            with self.subTest(where="XStat", n=n):
                if ok:
                    self.assertEqual(self.db.execute("SELECT name, args FROM trace_events(?)", (path,)).fetchall(),
                                     [("e", '{"s":1}')])
                else:
                    self.assertIn("groups nested deeper than 100 levels", self.error(path))

    def test_invalid_utf8_in_string_fields(self):
        def at(data, bad):
            return data.index(bad)
        d1 = W.xspace([W.plane(name=b"/host:\xc3")])
        d2 = W.xspace([W.plane(lines=[W.line(display_name=b"a\xed\xbf\xbf")])])
        d3 = W.xspace([W.plane(lines=[W.line(events=[W.event(1, stats=[W.stat(1, s=b"\xf4\x90\x80\x80")])])])])
        d4 = W.xspace([W.plane(stat_metadata=[(1, W.stat_meta(1, name="n", description=b"\xc0\xaf"))])])
        d5 = W.xspace(warnings=[b"w\xfe"])
        cases = [
            (d1, "byte %d (plane 0): XPlane field 2 (name) is not valid UTF-8" % at(d1, b"\xc3")),
            (d2, "byte %d (plane 0, line 0): XLine field 11 (display_name) is not valid UTF-8" % at(d2, b"\xed")),
            (d3, "byte %d (plane 0, line 0, event 0, stat 0): XStat field 5 (str_value) is not valid UTF-8"
             % at(d3, b"\xf4")),
            (d4, "byte %d (plane 0, stat_metadata entry 0): XStatMetadata field 3 (description) is not "
             "valid UTF-8" % at(d4, b"\xc0")),
            (d5, "byte 3: XSpace field 3 (warnings) is not valid UTF-8"),
        ]
        for data, expected in cases:
            self.check(data, expected)
        # bytes_value is not checked
        ok = W.xspace([W.plane(stat_metadata=[(1, W.stat_meta(1, name="b"))], stats=[W.stat(1, b=b"\xff")])])
        self.assertEqual(self.planes(self.write("ok.xplane.pb", ok))[0]["stats"], '{"b":"\ufffd"}')


class ClaimsTwoGigabytes(XplaneBase):
    """A length that claims 2 GB is checked against the bytes left before
    anything is allocated: with the address space capped at 1 GiB the query
    still fails with the decoder's message, not out of memory."""

    def test_no_big_allocation(self):
        claim = W.tag(1, W.LEN) + W.varint(2000000000) + b"\x08\x01" * 10
        inner = W.xspace([W.plane(name="P", extra=W.tag(3, W.LEN) + W.varint(2000000000))])
        p1 = self.write("claim.xplane.pb", claim)
        p2 = self.write("claim2.xplane.pb", inner)
        code = r"""
import resource, sqlite3, sys
sys.path.insert(0, %r)
from util import connect
db = connect()
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
for p in sys.argv[1:]:
    try:
        db.execute("SELECT * FROM profsum_xplane_planes(?)", (p,)).fetchall()
        print("no error")
    except sqlite3.DatabaseError as e:
        print(e)
""" % os.path.dirname(os.path.abspath(__file__))
        env = dict(os.environ)
        if "asan" in env.get("PROFSUM_SO", "") or env.get("LD_PRELOAD"):
            self.skipTest("an address-space cap does not suit AddressSanitizer")
        r = subprocess.run([sys.executable, "-c", code, p1, p2], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "profsum_xplane_planes: '%s': byte 0 (plane 0): XSpace field 1 (planes): length 2000000000 "
            "runs past the end of the file (20 bytes left)" % p1,
            "profsum_xplane_planes: '%s': byte 5 (plane 0): XPlane field 3 (lines): length 2000000000 "
            "runs past the end of its message (0 bytes left)" % p2])


class PastFourGigabytes(XplaneBase):
    """A file over 4 GiB: offsets past 2^32 and a whole file past protobuf's
    2 GiB per field.  Three unknown XSpace fields of 1.5 GB each (a sparse
    file: holes, no disk blocks) come before the plane, so the events and
    their diagnostics lie beyond 4.5 GB; the reader skips the fields without
    reading them."""

    def test_offsets_beyond_32_bits(self):
        n = 1500000000
        hole = W.tag(99, W.LEN) + W.varint(n)
        ln = W.line(id=1, name="XLA Ops", timestamp_ns=1000, events=[
            W.event(1, offset_ps=0, duration_ps=5000),
            W.event(1, num_occurrences=3, duration_ps=7),
            W.event(1, offset_ps=6000, duration_ps=3000)])
        body = W.xspace([W.plane(id=1, name="/device:TPU:0", lines=[ln],
                                 event_metadata=[(1, W.event_meta(1, name="fusion.1"))])])
        path = os.path.join(self.td.path, "huge.xplane.pb")
        step = len(hole) + n
        try:
            with open(path, "wb") as f:
                for k in range(3):
                    f.seek(k * step)
                    f.write(hole)
                f.seek(3 * step)
                f.write(body)
        except OSError as e:
            self.skipTest("no sparse file of 4.5 GB here: %s" % e)
        if os.stat(path).st_blocks * 512 > (64 << 20):
            os.remove(path)
            self.skipTest("this file system does not keep holes")
        self.assertGreater(os.path.getsize(path), 1 << 32)
        self.assertEqual(self.db.execute(
            "SELECT idx, name, ts, dur_ps FROM trace_events(?)", (path,)).fetchall(),
            [(0, "fusion.1", 1000, 5000), (2, "fusion.1", 1006, 3000)])
        diags = self.db.execute(
            "SELECT kind, byte_offset, idx FROM profsum_diagnostics(?) ORDER BY byte_offset", (path,)).fetchall()
        ev = 3 * step + body.index(W.event(1, num_occurrences=3, duration_ps=7)) - 2
        self.assertEqual(diags[:3], [("unknown_field", k * step, None) for k in range(3)])
        self.assertEqual(diags[3:], [("xplane_aggregated_event", ev, 1)])
        self.assertGreater(ev, 1 << 32)
        rows = self.planes(path)
        self.assertEqual([(r["name"], r["num_events"]) for r in rows], [("/device:TPU:0", 3)])


def hlo_metadata_space(n_protos=8, proto_bytes=1 << 20, seed=5):
    """An XSpace shaped like JAX's with HLO protos: a /host:metadata plane
    whose event metadata carry n_protos large bytes values (the "Hlo Proto"
    stat, and the metadata field), and a device plane whose ops refer to a
    metadata entry with a 300 KB bytes stat that is not valid UTF-8.
    Returns (data, the text the device ops' "blob" arg must have)."""
    import random
    rng = random.Random(seed)
    meta = W.PlaneBuilder("/host:metadata", id=0)
    for i in range(n_protos):
        meta.eid("jit_step_%d" % i, stats=[meta.stat("Hlo Proto", b=rng.randbytes(proto_bytes))],
                 metadata=rng.randbytes(200000))
    blob = b"ok \xff\xfe " + rng.randbytes(300000) + b" end"
    dev = W.PlaneBuilder("/device:TPU:0", id=1)
    dev.eid("fusion.0", stats=[dev.stat("blob", b=blob), dev.stat("tf_op", s="a/b")])
    evs = [dev.event("fusion.0", offset_ps=i * 5000, duration_ps=4000,
                     stats=[dev.stat("flops", i64=i)]) for i in range(50)]
    dev.line(id=1, name="XLA Ops", timestamp_ns=1_700_000_000_000_000_000, events=evs)
    data = W.xspace([meta.build(), dev.build()], hostnames=["h"])
    return data, blob.decode("utf-8", "replace")


class LargeMetadataBytes(XplaneBase):
    """Long bytes values of a plane's metadata (the HLO protos JAX writes in
    /host:metadata) stay in a plain file until something reads them: rows,
    documents and errors are those of the eager read (a gzip file, read
    from memory), and the memory does not grow with them."""

    def rows(self, path):
        return self.db.execute("SELECT idx, name, ts, dur_ps, args, tf_op FROM trace_events(?) "
                               "ORDER BY idx", (path,)).fetchall()

    def test_rows_and_documents_as_the_eager_read(self):
        data, text = hlo_metadata_space()
        plain = self.write("h.xplane.pb", data)
        gz = self.write("h.xplane.pb.gz", gzip.compress(data, mtime=0))
        rows = self.rows(plain)
        self.assertEqual(len(rows), 50)
        self.assertEqual(rows, self.rows(gz))
        args = json.loads(rows[7][4])
        self.assertEqual(args, {"blob": text, "tf_op": "a/b", "flops": 7})
        self.assertEqual(rows[7][5], "a/b")
        self.assertEqual(self.planes(plain), self.planes(gz))
        docs = []
        for i, path in enumerate((plain, gz)):
            self.db.execute("SELECT profsum_import(?, ?)", (path, "l%d" % i)).fetchall()
            doc = json.loads(self.db.execute("SELECT profsum_summary_json(?)", ("l%d" % i,)).fetchone()[0])
            # what names the file and the time: the rest must be equal
            self.assertEqual(doc.pop("source_path"), path)
            doc["trace_provenance"].pop("trace_sha256")
            doc.pop("generated_at_utc")
            docs.append(doc)
        self.assertEqual(docs[0], docs[1])
        self.assertEqual(docs[0]["trace_overview"]["num_complete_events"], 50)

    def test_memory_does_not_hold_them(self):
        data, _ = hlo_metadata_space(n_protos=16)      # 16 MiB of HLO protos
        plain = self.write("h.xplane.pb", data)
        before, _, peak = sqlrun_mem("SELECT count(*), sum(length(args)) FROM trace_events('%s')" % plain)
        # a row holds the 300 KB blob a few times over (its text, args, the
        # U+FFFD copy): a few MB, not the 16 MiB of protos
        self.assertLess(peak - before, 5 << 20, "the scan held the metadata's bytes")
        stored, peak = import_memory(plain)
        self.assertLess(peak, 6 << 20, "the import held the metadata's bytes")
        # the eager read of the same bytes holds them (what the bound tells apart)
        gz = self.write("h.xplane.pb.gz", gzip.compress(data, mtime=0, compresslevel=1))
        before, _, peak = sqlrun_mem("SELECT count(*) FROM trace_events('%s')" % gz)
        self.assertGreater(peak - before, 16 << 20)

    def test_row_whose_value_is_gone_is_an_error(self):
        # two metadata entries with 100 KB blobs, their events alternating:
        # the file is cut after the first rows, and the next row whose
        # blob is not the one last read fails with the decoder's message
        import random
        rng = random.Random(3)
        dev = W.PlaneBuilder("/device:TPU:0", id=1)
        dev.eid("a", stats=[dev.stat("blob", b=rng.randbytes(100000))])
        dev.eid("b", stats=[dev.stat("blob", b=rng.randbytes(100000))])
        dev.line(id=1, name="XLA Ops", timestamp_ns=1000,
                 events=[dev.event("ab"[i % 2], offset_ps=i * 5000, duration_ps=4000) for i in range(6)])
        data = W.xspace([dev.build()])
        path = self.write("cut.xplane.pb", data)
        cur = self.db.execute("SELECT name, length(args) FROM trace_events(?)", (path,))
        self.assertEqual(cur.fetchone()[0], "a")
        os.truncate(path, len(data) - 150000)
        with self.assertRaises(sqlite3.OperationalError) as cm:
            cur.fetchall()
        self.assertRegex(str(cm.exception), r"^trace_events: '%s': the file shrank while it was read "
                         r"\(it had %d bytes; it ends before byte \d+\)$" % (path, len(data)))

    def test_file_that_shrinks_before_a_value_is_read(self):
        data, _ = hlo_metadata_space(n_protos=2, proto_bytes=100000)
        path = self.write("s.xplane.pb", data)
        tools = dump_tools()
        if not tools:
            self.skipTest("no C compiler for the dump tool")
        # the default build: the first plane's protos (100 KB each) stay in
        # the file, and the dump asks for their text after the cut
        rc, recs = run_dump(tools[0], path, "--truncate=1000")
        self.assertEqual(rc, 1)
        self.assertRegex(recs[-1]["error"], r"^fuzz_xplane: '%s': the file shrank while it was read "
                         r"\(it had %d bytes; it ends before byte \d+\)$" % (path, len(data)))


def expected_counts():
    path = os.path.join(CORPUS, "expected_xplane_counts.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {k: v for k, v in json.load(f).items() if not k.startswith("_")}


class Corpus(XplaneBase):
    """Every .xplane.pb of the corpus decodes, with the expected counts."""

    def test_corpus_counts(self):
        exp = expected_counts()
        if exp is None:
            self.skipTest("corpus not found (%s)" % CORPUS)
        self.assertTrue(exp)
        for rel, e in sorted(exp.items()):
            path = os.path.join(CORPUS, rel)
            with self.subTest(rel):
                rows = self.planes(path)
                self.assertEqual([(r["name"], r["num_lines"], r["num_events"]) for r in rows],
                                 [(p["name"], p["lines"], p["events"]) for p in e["planes"]])
                self.assertEqual(sum(r["num_events"] for r in rows), e["events_total"])
                self.assertEqual(json.loads(rows[0]["hostnames"]), e["hostnames"])
                lines = self.lines(path)
                for p in e["planes"]:
                    if "events_per_line" not in p:
                        continue
                    got = {}
                    for l in lines:
                        if l["plane_name"] == p["name"] and l["plane_index"] == e["planes"].index(p):
                            k = l["display_name"] or l["name"]
                            got[k] = got.get(k, 0) + l["num_events"]
                    self.assertEqual(got, p["events_per_line"])
                # the event walk: every event once, ordinals in order, both window sizes
                rc, recs = self.dump(path)
                self.assertEqual(rc, 0)
                evs = self.events(recs)
                self.assertEqual(len(evs), e["events_total"])
                self.assertEqual(recs[-1]["end"]["events"], e["events_total"])
                # gzip gives the same rows
                gz = self.write("c.xplane.pb.gz", gzip.compress(open(path, "rb").read()))
                self.assertEqual(self.planes(gz), rows)


if __name__ == "__main__":
    unittest.main()
