"""The reading paths chosen for speed give the answers of the plain ones:
dur/dur_ps in one pass while no B row comes (a late B still paired); the
tokenizer's string index (AVX2 or SSE2, chosen at run time) and its
portable byte loop, with and without the inflate thread, give the same
rows, diagnostics and stored summary."""
import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
import unittest

from util import connect, run_child_json, DbTestCase, TempDir, SO, ROOT


def proc_rchar():
    """Bytes this process (all its threads) has read through read calls."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return None


def x_events(n, pid=1, tid=2, t0=1000.0):
    """n complete events one after the other on one track."""
    return [{"ph": "X", "pid": pid, "tid": tid, "ts": t0 + 10 * i, "dur": 7.125 + (i % 5),
             "name": "op%d" % (i % 17), "args": {"hlo_op": "fusion.%d" % i}} for i in range(n)]


class DurOnePass(DbTestCase):
    """dur and dur_ps of X rows need no B/E pairing pass."""

    def rows(self, path, cols):
        return self.db.execute("SELECT idx, %s FROM trace_events(?) ORDER BY idx" % cols,
                               (path,)).fetchall()

    def eager(self, path):
        # depth needs the track pass before the first row: the reference
        return [r[:3] for r in self.rows(path, "dur, dur_ps, depth")]

    def test_x_only_reads_the_file_once(self):
        # an uncompressed file so that the bytes read are the file's size
        p = self.td.write("x.json", {"traceEvents": x_events(20000)})
        size = os.path.getsize(p)
        before = proc_rchar()
        if before is None:
            self.skipTest("no /proc/self/io")
        got = self.db.execute("SELECT count(*), sum(dur_ps), sum(dur) FROM trace_events(?)",
                              (p,)).fetchone()
        read = proc_rchar() - before
        self.assertEqual(got[0], 20000)
        self.assertEqual(got[1], sum(7125000 + 1000000 * (i % 5) for i in range(20000)))
        self.assertLess(read, 1.5 * size, "the file was read more than once")
        self.assertGreaterEqual(read, size)

    def test_late_b_is_paired(self):
        ev = x_events(3000)
        ev.append({"ph": "B", "pid": 1, "tid": 9, "ts": 50000.5, "name": "late"})
        ev += x_events(50, t0=60000.0)
        ev.append({"ph": "E", "pid": 1, "tid": 9, "ts": 50012.25})
        p = self.td.write("late.json.gz", {"traceEvents": ev}, gz=True)
        got = self.rows(p, "dur, dur_ps")
        self.assertEqual(got, self.eager(p))
        b = [r for r in got if r[0] == 3000][0]
        self.assertEqual(b, (3000, 11750, 11750000))
        # E rows have no duration
        self.assertIsNone(got[-1][1])

    def test_first_row_b_and_several_b(self):
        ev = [{"ph": "B", "pid": 1, "tid": 1, "ts": 1, "name": "a"},
              {"ph": "X", "pid": 1, "tid": 2, "ts": 2, "dur": 3, "name": "x"},
              {"ph": "B", "pid": 1, "tid": 1, "ts": 2, "name": "b"},
              {"ph": "E", "pid": 1, "tid": 1, "ts": 4},
              {"ph": "B", "pid": 1, "tid": 1, "ts": 5, "name": "c"},
              {"ph": "E", "pid": 1, "tid": 1, "ts": 9}]
        p = self.td.write("b.json", {"traceEvents": ev})
        got = self.rows(p, "dur, dur_ps")
        self.assertEqual(got, self.eager(p))
        self.assertEqual([r[2] for r in got], [None, 3000000, 2000000, None, 4000000, None])

    def test_b_only_after_where(self):
        ev = x_events(100) + [{"ph": "B", "pid": 1, "tid": 5, "ts": 2000, "name": "s"},
                              {"ph": "E", "pid": 1, "tid": 5, "ts": 2001.5}]
        p = self.td.write("w.json", {"traceEvents": ev})
        got = self.db.execute("SELECT name, dur_ps FROM trace_events(?) WHERE ph='B'", (p,)).fetchall()
        self.assertEqual(got, [("s", 1500000)])

    def test_unpaired_b_late(self):
        ev = x_events(10) + [{"ph": "B", "pid": 1, "tid": 5, "ts": 2000, "name": "open"}]
        p = self.td.write("u.json", {"traceEvents": ev})
        got = self.rows(p, "dur, dur_ps")
        self.assertEqual(got, self.eager(p))


class LongTimes(unittest.TestCase):
    """Times with 13 to 18 integer digits (Kineto's epoch microseconds) take
    the integer fast path now: exact, rounded half-even like the rest."""

    def test_against_exact_decimals(self):
        from decimal import Decimal, ROUND_HALF_EVEN, ROUND_FLOOR
        rng = random.Random(11)
        texts = []
        for k in range(1500):
            nint = rng.randrange(1, 19)
            ip = str(rng.randrange(10 ** (nint - 1), 10 ** nint))
            nf = rng.choice([0, 0, 3, 6, 7, 9])
            fp = "".join(rng.choice("0123456789") for _ in range(nf))
            if nf >= 7 and rng.random() < 0.3:
                fp = fp[:6] + "5" + "0" * (nf - 7)          # a tie
            texts.append(ip + ("." + fp if nf else ""))
        ev = ",".join('{"ph":"X","pid":1,"tid":%d,"name":"e","ts":%s,"dur":%s}'
                      % (i, t, t if len(t.split(".")[0]) <= 12 else "1") for i, t in enumerate(texts))
        td = TempDir()
        try:
            p = td.write("long.json", '{"traceEvents":[' + ev + "]}")
            db = connect()
            got = db.execute("SELECT ts, dur_ps FROM trace_events(?) ORDER BY idx", (p,)).fetchall()
            db.close()
        finally:
            td.__exit__()
        for t, (ts, dur_ps) in zip(texts, got):
            ps = (Decimal(t) * 1000000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
            ns = int((ps / 1000).to_integral_value(rounding=ROUND_FLOOR))
            with self.subTest(t=t):
                self.assertEqual(ts, ns if ns < 2 ** 63 else None)
                if len(t.split(".")[0]) <= 12:
                    self.assertEqual(dur_ps, int(ps))


class NumberShapes(unittest.TestCase):
    """ts and dur of every shape the one-pass conversion meets (1 to 18
    integer digits, 0 to 28 decimals, ties, trailing zeros, a number that
    ends past the 32 bytes the fast conversion looks at, signs, exponents,
    leading zeros, a dot without decimals): the rows equal the exact
    decimal values, and the rows, diagnostics and v1 document are the same
    with the default and the portable tokenizer (which keeps the general
    conversion)."""

    @staticmethod
    def texts():
        rng = random.Random(23)
        out = []
        for _ in range(3000):
            nint = rng.randrange(1, 19)
            ip = str(rng.randrange(10 ** (nint - 1), 10 ** nint)) if nint > 1 else rng.choice("0123456789")
            nf = rng.choice([0, 1, 5, 6, 7, 8, 10, 13, 15, 16, 17, 20, 23, 24, 28])
            fp = "".join(rng.choice("0123456789") for _ in range(nf))
            if nf >= 7 and rng.random() < 0.3:
                fp = fp[:6] + "5" + "0" * (nf - 7)              # a tie
            elif nf >= 7 and rng.random() < 0.2:
                fp = fp[:6] + "0" * (nf - 6)                    # zeros only
            out.append(ip + ("." + fp if nf else ""))
        return out

    ODD = ["-12.5", "-0.0000005", "1e3", "1.5E2", "0", "0.0", "0.0000005", "2.5e-1",
           "-1234567890123456.78901234567", "12345678901234567.5", "123456789012345678.0000001",
           "2" * 40, "3" * 32 + ".5", "1." + "4" * 40]

    def trace(self, td):
        texts = self.texts()
        ev = []
        for i, t in enumerate(texts):
            dur = t if len(t.split(".")[0]) <= 9 else "1"   # sum(dur_ps) fits
            ev.append('{"ph":"X","pid":1,"tid":%d,"name":"e%d","ts":%s,"dur":%s}' % (i % 7, i % 5, t, dur))
        for i, t in enumerate(self.ODD):
            ev.append('{"ph":"X","pid":2,"tid":1,"name":"odd","ts":%s,"dur":%s}' % (t, t))
        return texts, td.write("shapes.json", '{"traceEvents":[' + ",".join(ev) + "]}")

    def test_exact(self):
        from decimal import Decimal, ROUND_HALF_EVEN, ROUND_FLOOR
        td = TempDir()
        try:
            texts, p = self.trace(td)
            db = connect()
            got = db.execute("SELECT ts, dur_ps FROM trace_events(?) WHERE pid = 1 ORDER BY idx", (p,)).fetchall()
            db.close()
        finally:
            td.__exit__()
        self.assertEqual(len(got), len(texts))
        for t, (ts, dur_ps) in zip(texts, got):
            ps = (Decimal(t) * 1000000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
            ns = int((ps / 1000).to_integral_value(rounding=ROUND_FLOOR))
            with self.subTest(t=t):
                self.assertEqual(ts, ns if ns < 2 ** 63 else None)
                if len(t.split(".")[0]) <= 9:
                    self.assertEqual(dur_ps, int(ps))

    def test_same_in_both_tokenizers(self):
        td = TempDir()
        try:
            _, p = self.trace(td)
            ref = run_child_json(self, CHILD, p, td.path, {}, "default")
            port = run_child_json(self, CHILD, p, td.path, {"PROFSUM_TOKENIZER": "portable"}, "portable")
        finally:
            td.__exit__()
        self.assertNotIn("error", ref["summary"])
        self.assertEqual(port, ref)

    def test_bad_numbers_same_error(self):
        """Texts JSON does not allow: the same error in both tokenizers."""
        from util import error_messages
        td = TempDir()
        try:
            for t in ["012", "00.5", "1.", "1.e5", "-", "1.5.5", "0x10"]:
                pad = '"name":"%s",' % ("p" * 40)       # the number far from the end
                p = td.write("bad.json", '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":%s,%s"dur":1}]}' % (t, pad))
                with self.subTest(t=t):
                    msgs = error_messages(p, "SELECT * FROM trace_events(?)")
                    self.assertEqual(len(msgs), 1, msgs)
                    self.assertIn("byte", msgs.pop())
        finally:
            td.__exit__()


class StoredDiagnostics(unittest.TestCase):
    """An import stores per kind the first 5 diagnostics and a count;
    store_diagnostics 'all' keeps every row."""

    def setUp(self):
        self.td = TempDir()
        self.db = connect()
        ev = ",".join('{"ph":"X","pid":1,"tid":1,"name":"z","ts":%d,"dur":0}' % i for i in range(1500))
        ev += ',{"ph":"X","pid":1,"tid":1,"name":"a","ts":2000.1234567,"dur":5}'
        self.path = self.td.write("many.json", "[" + ev + "]")

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def kinds(self, tid):
        return dict(self.db.execute("SELECT kind, count(*) FROM profsum_diagnostic WHERE trace_id=? "
                                    "GROUP BY kind", (tid,)).fetchall())

    def test_compact_by_default(self):
        tid = self.db.execute("SELECT profsum_import(?, 'c')", (self.path,)).fetchone()[0]
        self.assertEqual(self.kinds(tid), {"zero_duration": 5, "suppressed": 1, "time_rounded": 1})
        self.assertEqual(self.db.execute("SELECT idx FROM profsum_diagnostic WHERE trace_id=? AND "
                                         "kind='zero_duration' ORDER BY idx", (tid,)).fetchall(),
                         [(0,), (1,), (2,), (3,), (4,)])
        self.assertEqual(self.db.execute("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                         "AND kind='suppressed'", (tid,)).fetchone()[0],
                         "zero_duration: 1500 occurrences in all; only the first 5 are stored "
                         "(profsum_diagnostics(path) lists them all)")
        # the file itself lists them all
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_diagnostics(?) WHERE "
                                         "kind='zero_duration'", (self.path,)).fetchone()[0], 1500)

    def test_all_keeps_every_listed_row(self):
        tid = self.db.execute("SELECT profsum_import(?, 'a', '{\"store_diagnostics\": \"all\"}')",
                              (self.path,)).fetchone()[0]
        # every row, none suppressed
        self.assertEqual(self.kinds(tid), {"zero_duration": 1500, "time_rounded": 1})
        self.assertEqual(self.db.execute("SELECT min(idx), max(idx), count(DISTINCT idx) FROM "
                                         "profsum_diagnostic WHERE trace_id=? AND kind='zero_duration'",
                                         (tid,)).fetchone(), (0, 1499, 1500))
        # the view reads them as before: the label is joined
        self.assertEqual(self.db.execute("SELECT DISTINCT label FROM profsum_diagnostic WHERE trace_id=?",
                                         (tid,)).fetchall(), [("a",)])

    def test_few_rows_no_count(self):
        p = self.td.write("few.json", '[{"ph":"X","pid":1,"tid":1,"name":"z","ts":1,"dur":0},'
                          '{"ph":"X","pid":1,"tid":1,"name":"z","ts":2,"dur":0}]')
        tid = self.db.execute("SELECT profsum_import(?, 'f')", (p,)).fetchone()[0]
        self.assertEqual(self.kinds(tid), {"zero_duration": 2})


class HistoryPlans(unittest.TestCase):
    """A database of many runs: a view asked for one label reads that
    trace's rows through the keys (no full scan of a per-trace table), the
    run order of a series comes from its index, one op across runs is found
    by name through an index; the rewritten views answer as before."""

    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
              {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
              {"ph": "M", "pid": 1, "tid": 3, "name": "thread_name", "args": {"name": "Steps"}}]
        for step in range(4):
            t0 = 1000.0 * step
            ev.append({"ph": "X", "pid": 1, "tid": 3, "ts": t0, "dur": 900, "name": str(step),
                       "args": {"group_id": str(step)}})
            for k in range(6):
                ev.append({"ph": "X", "pid": 1, "tid": 2, "ts": t0 + 100 * k, "dur": 50 + 10 * k + step,
                           "name": "fusion.%d" % k, "args": {"long_name": "fusion.%d = f()" % k}})
        p = cls.td.write("t.json", {"traceEvents": ev})
        cls.dbs = {}
        for n in (6, 36):
            db = connect(os.path.join(cls.td.path, "h%d.db" % n))
            for i in range(n):
                db.execute("SELECT profsum_import(?, ?, ?)", (p, "r%d" % i, json.dumps({"series": "s%d" % (i % 2)})))
            cls.dbs[n] = db
        cls.db = cls.dbs[6]

    @classmethod
    def tearDownClass(cls):
        for db in cls.dbs.values():
            db.close()
        cls.td.__exit__()

    def plan(self, sql, *args):
        return [r[3] for r in self.db.execute("EXPLAIN QUERY PLAN " + sql, args)]

    def steps(self, db, sql, *args):
        """Virtual-machine steps (in hundreds) the query takes."""
        calls = [0]

        def tick():
            calls[0] += 1
            return 0
        db.set_progress_handler(tick, 100)
        try:
            db.execute(sql, args).fetchall()
        finally:
            db.set_progress_handler(None, 0)
        return calls[0]

    def test_one_label_reads_one_trace(self):
        """Six times as many runs: a view for one label does about the same
        work (the per-label views other than trend and op_growth, whose run
        order needs the whole series index)."""
        views = [r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_schema WHERE type='view' AND name LIKE 'profsum_%' ORDER BY name")]
        for v in views:
            cols = [r[1] for r in self.db.execute("SELECT * FROM pragma_table_info(?)", (v,))]
            if "label" not in cols or v in ("profsum_trend", "profsum_op_growth"):
                continue
            with self.subTest(view=v):
                sql = "SELECT * FROM %s WHERE label = ?" % v
                small, big = self.steps(self.dbs[6], sql, "r3"), self.steps(self.dbs[36], sql, "r3")
                self.assertLessEqual(big, small * 1.3 + 2, "%s: %d vs %d" % (v, small, big))

    def test_kpis_one_label(self):
        plan = self.plan("SELECT * FROM profsum_kpis WHERE label = ?", "r3")
        self.assertFalse([p for p in plan if p.startswith("MATERIALIZE") and "profsum_kpis_" not in p], plan)
        self.assertTrue(any("(label=?)" in p for p in plan), plan)
        # the same rows, in the same order, as the whole view filtered afterwards
        one = self.db.execute("SELECT * FROM profsum_kpis WHERE label = 'r3'").fetchall()
        every = [r for r in self.db.execute("SELECT * FROM profsum_kpis").fetchall() if r[1] == "r3"]
        self.assertEqual(one, every)
        self.assertGreater(len(one), 5)

    def test_few_temporary_btrees(self):
        """A window, a DISTINCT, ORDER BY ... LIMIT or an IN list of three
        values or more opens a temporary b-tree, and SQLite allocates its
        page cache (about 85 KB) anew each time: in a query for one label
        most of the time went there, so the views keep few of them."""
        bounds = {"profsum_advice": 24, "profsum_kpis": 6, "profsum_kpis_mem": 4, "profsum_kpis_wall": 0}
        for v, most in bounds.items():
            with self.subTest(view=v):
                ops = [r[1] for r in self.db.execute("EXPLAIN SELECT * FROM %s WHERE label = ?" % v, ("r3",))]
                self.assertLessEqual(ops.count("OpenEphemeral"), most)

    def test_series_order_and_op_by_name_use_indexes(self):
        plan = self.plan("SELECT * FROM profsum_trend WHERE series = ?", "s1")
        self.assertTrue(any("profsum_trace_series" in p for p in plan), plan)
        plan = self.plan("SELECT trace_id, exclusive_duration FROM profsum_agg_op WHERE name = ?", "fusion.1")
        self.assertTrue(any("profsum_agg_op_name" in p for p in plan), plan)

    def test_trend_and_growth_values(self):
        tr = self.db.execute("SELECT label, run_index, runs_back, prev_label FROM profsum_trend "
                             "WHERE series = 's1' ORDER BY run_index").fetchall()
        self.assertEqual(tr, [("r1", 1, 3, None), ("r3", 2, 2, "r1"), ("r5", 3, 1, "r3")])
        g = self.db.execute("SELECT label, runs_back, prev_label, count(*), sum(delta) FROM profsum_op_growth "
                            "WHERE series = 's0' GROUP BY label ORDER BY label").fetchall()
        self.assertEqual([r[:3] for r in g], [("r2", 2, "r0"), ("r4", 1, "r2")])
        self.assertEqual({r[4] for r in g}, {0.0})
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_op_growth WHERE label = 'r4'").fetchone(),
                         (g[1][3],))


# Run in a child process (the tokenizer mode and the thread switch are read
# from the environment once per process): every column of every row, the
# diagnostics, and the import's stored summary, as digests.
CHILD = r"""
import hashlib, json, sqlite3, sys
so, trace, dbpath = sys.argv[1:4]
db = sqlite3.connect(dbpath)
db.enable_load_extension(True)
db.load_extension(so)
out = {}
h = hashlib.sha256()
for row in db.execute("SELECT * FROM trace_events(?) ORDER BY idx", (trace,)):
    h.update(repr(row).encode())
out["rows"] = h.hexdigest()
h = hashlib.sha256()
for row in db.execute("SELECT * FROM profsum_diagnostics(?)", (trace,)):
    h.update(repr(row).encode())
out["diagnostics"] = h.hexdigest()
out["scan4"] = repr(db.execute("SELECT count(*), total(ts), sum(dur_ps), count(name) "
                               "FROM trace_events(?)", (trace,)).fetchone())
db.execute("SELECT profsum_import(?, 'x')", (trace,))
def strip(v):
    # the document's time of making is the one field that may differ
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "generated_at_utc"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
doc = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
out["summary"] = hashlib.sha256(json.dumps(strip(doc), sort_keys=True).encode()).hexdigest()
h = hashlib.sha256()
for row in db.execute("SELECT kind, count(*) FROM profsum_diagnostic GROUP BY kind ORDER BY kind"):
    h.update(repr(row).encode())
out["stored"] = h.hexdigest()
print(json.dumps(out, sort_keys=True))
"""


def odd_events(rng, n):
    """Entries whose strings exercise the index: escapes, \\u escapes (a
    surrogate pair, a lone one), UTF-8 and bytes that are not, raw control
    characters, long strings crossing 64-byte words and window refills."""
    out = []
    for i in range(n):
        k = i % 9
        name = "op%d" % i
        if k == 1:
            name = "a\\\"quoted\\\" \\\\ name\\n%d" % i
        elif k == 2:
            name = "caf\\u00e9 \\ud83d\\ude00 \\ud800 %d" % i
        elif k == 3:
            name = "\u00fcber \u6f22\u5b57 %d" % i
        elif k == 4:
            name = "x" * rng.randrange(40, 300) + "\\t" + "y" * rng.randrange(0, 70)
        elif k == 5:
            name = "ctrl\x01in\x1fname %d" % i
        elif k == 6:
            name = "bad\udcff\udcfeutf8 \udcc3 %d" % i  # raw 0xff 0xfe 0xc3
        ph = "X" if k != 7 else ("B" if i % 2 else "E")
        ent = '{"ph":"%s","pid":%d,"tid":%d,"ts":%d.%03d,"dur":%d.5,"name":"%s","args":{"long_name":"%s","group_id":"%d"}}' % (
            ph, 1 + i % 3, i % 4, 1000 + 7 * i, i % 1000, 1 + i % 13, name, name + "/long", i % 11)
        out.append(ent)
    return out


class TokenizerModes(unittest.TestCase):
    """One thread, two threads, the portable tokenizer, SSE2 and the import's
    scanning on a thread of its own: the same."""

    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        rng = random.Random(7)
        body = "{\"traceEvents\":[\n" + ",\n".join(odd_events(rng, 6000)) + ",\n{}]}\n"
        raw = body.encode("utf-8", "surrogateescape")
        cls.odd = cls.td.write("odd.json.gz", gzip.compress(raw, 1))
        cls.gen = os.path.join(cls.td.path, "gen.json.gz")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "3M",
                        "--out", cls.gen], check=True, stdout=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__()

    def run_child(self, trace, env_extra, tag):
        return run_child_json(self, CHILD, trace, self.td.path, env_extra, tag)

    def test_same_everywhere(self):
        modes = {"default": {}, "one_thread": {"PROFSUM_THREADS": "0"},
                 "portable": {"PROFSUM_TOKENIZER": "portable"},
                 "portable_one_thread": {"PROFSUM_TOKENIZER": "portable", "PROFSUM_THREADS": "0"},
                 "sse2": {"PROFSUM_TOKENIZER": "sse2"},
                 "scan_thread": {"PROFSUM_SCAN_PIPE": "1"},
                 "scan_thread_portable": {"PROFSUM_SCAN_PIPE": "1", "PROFSUM_TOKENIZER": "portable"}}
        for trace in (self.odd, self.gen):
            # both files are big enough for the inflate thread
            self.assertGreater(os.path.getsize(trace), 128 * 1024)
            ref = self.run_child(trace, modes["default"], "default")
            for tag, env in modes.items():
                if tag == "default":
                    continue
                with self.subTest(trace=os.path.basename(trace), mode=tag):
                    self.assertEqual(self.run_child(trace, env, tag), ref)

    def test_indented_reads_as_compact(self):
        """White space between tokens (indented JSON, tabs, CRLF, runs longer
        than eight bytes at every offset) is skipped eight bytes at a time:
        the rows and the summary are those of the compact file."""
        rng = random.Random(3)
        ev = [json.loads(e.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
              for e in odd_events(rng, 300) if "\\u" not in e and "ctrl" not in e]
        compact = self.td.write("c.json", json.dumps({"traceEvents": ev}, separators=(",", ":")))
        pretty = json.dumps({"traceEvents": ev}, indent=rng.choice([3, 11, 17]))
        pretty = "".join(c + (" " * rng.randrange(0, 13) + "\t\r\n" * rng.randrange(0, 2)
                              if c in ",:[{" else "") for c in pretty)
        spaced = self.td.write("p.json", pretty)
        cols = "idx, ph, name, cat, pid, tid, ts, dur_ps, long_name, group_id, depth, excl_ps"
        db = connect()
        try:
            a = db.execute("SELECT %s FROM trace_events(?)" % cols, (compact,)).fetchall()
            b = db.execute("SELECT %s FROM trace_events(?)" % cols, (spaced,)).fetchall()
            sa = json.loads(db.execute("SELECT profsum_summary_json(profsum_import(?, 'a'))", (compact,)).fetchone()[0])
            sb = json.loads(db.execute("SELECT profsum_summary_json(profsum_import(?, 'b'))", (spaced,)).fetchone()[0])
        finally:
            db.close()
        self.assertEqual(len(a), 300 - 300 // 9 * 2 - 1)
        self.assertEqual(a, b)
        for key in ("communication_ops", "gap_before_ops", "gap_region_contexts", "hierarchical_regions",
                    "hot_ops", "optimization_candidates", "semantic_families", "step_time",
                    "time_breakdown", "trace_overview"):
            self.assertEqual(sa[key], sb[key], key)

    def test_odd_file_reads_as_written(self):
        db = connect()
        try:
            rows = db.execute("SELECT name FROM trace_events(?) WHERE idx IN (1, 2, 5)",
                              (self.odd,)).fetchall()
            kinds = dict(db.execute("SELECT kind, count(*) FROM profsum_diagnostics(?) GROUP BY kind",
                                    (self.odd,)).fetchall())
        finally:
            db.close()
        self.assertEqual(rows, [('a"quoted" \\ name\n1',), ("caf\u00e9 \U0001F600 \ufffd 2",),
                                ("ctrl\x01in\x1fname 5",)])
        self.assertEqual(kinds.get("control_character"), 667)
        self.assertEqual(kinds.get("invalid_utf8"), 666)



def device_meta(pid=1, tid=2):
    return [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": "XLA Ops"}}]


class CollectorsReadScannerKeys(DbTestCase):
    """The import's collectors take the args keys the scanner found and the
    engine's event keys: an op whose events repeat one key and one args text
    is read once; events of one key with other args still go where their
    own args say; only top-level args count."""

    def imp(self, name, events):
        p = self.td.write(name, {"traceEvents": device_meta() + events})
        return self.db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]

    def ops(self, tid):
        return self.db.execute(
            "SELECT name, hlo_op, hlo_category, framework_op, count, time_us, flops, model_flops, "
            "bytes_accessed FROM profsum_agg_xla_op WHERE trace_id=? "
            "ORDER BY name, hlo_op, hlo_category, framework_op", (tid,)).fetchall()

    def test_one_key_other_args(self):
        # one name and long_name on one track (one engine key), args that
        # change from event to event and back; an escape and a number
        # written as a string give the texts and numbers of the plain ones
        base = {"long_name": "%f = f32[8] fusion(x)", "hlo_module": "m"}
        variants = [
            dict(base, hlo_op="f.1", hlo_category="loop fusion", flops="100", bytes_accessed="10"),
            dict(base, hlo_op="f.1", hlo_category="output fusion", flops="100", bytes_accessed="10"),
            dict(base, hlo_op="f.1", hlo_category="loop fusion", flops=100, bytes_accessed=10),
            dict(base, hlo_op="f\\u002e1", hlo_category="loop fusion", flops="100", bytes_accessed="10"),
            dict(base, hlo_op="f.1", hlo_category="loop fusion", flops="300", bytes_accessed="10",
                 model_flops="50", name="jit(f)/add"),
        ]
        events = []
        for i in range(40):
            events.append({"ph": "X", "pid": 1, "tid": 2, "ts": 10 * i, "dur": 2, "name": "fusion",
                           "args": variants[[0, 1, 2, 3, 4, 0, 0, 1][i % 8]]})
        text = json.dumps({"traceEvents": device_meta() + events}).replace("\\\\u002e", "\\u002e")
        self.assertIn('"f\\u002e1"', text)
        p = self.td.write("k.json", text)
        tid = self.db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]
        got = self.ops(tid)
        # variants 0, 2, 3 are one aggregate: 25 events (i%8 in 0, 2, 3, 5, 6)
        self.assertEqual(got, [
            ("fusion", "f.1", "loop fusion", None, 25, 50.0, 2500.0, None, 250),
            ("fusion", "f.1", "loop fusion", "jit(f)/add", 5, 10.0, 1500.0, 250.0, 50),
            ("fusion", "f.1", "output fusion", None, 10, 20.0, 1000.0, None, 100)])

    def test_model_flops_top_level_only(self):
        events = [
            {"ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 2, "name": "a",
             "args": {"flops": "100", "extra": {"model_flops": "999"}}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 10, "dur": 2, "name": "b",
             "args": {"note": {"model_flops": 7}, "model_flops": "40"}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 20, "dur": 2, "name": "c",
             "args": {"long_name": "\"model_flops\": 5", "flops": 8}},
        ]
        tid = self.imp("m.json", events)
        got = {r[0]: (r[6], r[7]) for r in self.ops(tid)}
        self.assertEqual(got, {"a": (100.0, None), "b": (None, 40.0), "c": (8.0, None)})
        self.assertEqual(self.db.execute("SELECT n_model_flops_ops FROM profsum_agg_xla_trace WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 1)

    def test_kernel_details_top_level_only(self):
        kd = "regs:16 block:32,1,1 grid:4,1,1 occ_pct:50"
        events = [
            {"ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 2, "name": "k1",
             "args": {"kernel_details": kd, "hlo_op": "f.1"}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 10, "dur": 2, "name": "k2",
             "args": {"extra": {"kernel_details": kd}}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 20, "dur": 2, "name": "k3",
             "args": {"note": "\"kernel_details\": x"}},
        ]
        tid = self.imp("kd.json", events)
        got = self.db.execute("SELECT kernel_name, hlo_op, registers_per_thread, occurrences "
                              "FROM profsum_kernel_stats WHERE trace_id=?", (tid,)).fetchall()
        self.assertEqual(got, [("k1", "f.1", 16, 1)])



def number_texts(rng, n):
    """Decimal texts of the shapes a trace writes and of the odd ones."""
    fixed = ["0", "-0", "0.5", "-0.5", "1.0000005", "1.0000015", "1.00000050", "1.00000051",
             "2.9999995", "7.1234564999", "123456789012345678", "1234567890123456789",
             "12345678901234567890.5", "1e3", "1.5E-3", "-2.25e+2", "0.0000004", "0.0000005",
             "1700081882.8395342", "165.97800000000001", "3735928562", "99999999999999999.9999999"]
    out = list(fixed)
    while len(out) < n:
        ip = str(rng.randrange(0, 10 ** rng.randrange(1, 20)))
        t = ("-" if rng.random() < 0.1 else "") + ip
        if rng.random() < 0.8:
            t += "." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 18)))
        if rng.random() < 0.05:
            t += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 12))
        out.append(t)
    return out


class NumbersInOnePass(unittest.TestCase):
    """ts, dur, pid and tid written as plain numbers are scanned and
    converted in one pass: the rows are those of the same texts written as
    strings (converted by the general code), across window refills."""

    def test_numbers_as_strings(self):
        rng = random.Random(11)
        texts = number_texts(rng, 6000)
        ints = [str(rng.randrange(-10 ** rng.randrange(1, 19), 10 ** rng.randrange(1, 19)))
                for _ in range(len(texts))] + ["0", "-0", "007"]
        num, txt = [], []
        for i, t in enumerate(texts):
            d = (t if i < 22 else texts[(i * 7) % len(texts)]).lstrip("-")
            pid, tid = ints[i % len(ints)], ints[(i * 3) % len(ints)]
            if pid == "007":
                pid = "7"
            num.append('{"ph":"X","name":"e%d","pid":%s,"tid":%s,"ts":%s,"dur":%s}' % (i, pid, tid, t, d))
            txt.append('{"ph":"X","name":"e%d","pid":"%s","tid":"%s","ts":"%s","dur":"%s"}' % (i, pid, tid, t, d))
        with TempDir() as td:
            a = td.write("n.json", '{"traceEvents":[' + ",".join(num) + "]}")
            b = td.write("s.json", '{"traceEvents":[' + ",".join(txt) + "]}")
            self.assertGreater(os.path.getsize(a), 3 * 64 * 1024)   # several windows
            db = connect()
            try:
                q = "SELECT idx, pid, tid, ts, dur, dur_ps FROM trace_events(?) ORDER BY idx"
                ra = db.execute(q, (a,)).fetchall()
                rb = db.execute(q, (b,)).fetchall()
                da = db.execute("SELECT kind, count(*) FROM profsum_diagnostics(?) GROUP BY kind", (a,)).fetchall()
                db_ = db.execute("SELECT kind, count(*) FROM profsum_diagnostics(?) GROUP BY kind", (b,)).fetchall()
            finally:
                db.close()
        self.assertEqual(len(ra), len(texts))
        self.assertEqual(ra, rb)
        # a few known values: half-even at the picosecond, 18 integer digits
        by = {r[0]: r for r in ra}
        self.assertEqual([by[i][5] for i in (4, 5, 6, 7, 19)],
                         [1000000, 1000002, 1000000, 1000001, 165978000])
        self.assertEqual(by[18][3], 1700081882839)         # ns
        # the numbers' diagnostics are the strings' but for the string ones
        self.assertEqual(dict(da).get("time_rounded"), dict(db_).get("time_rounded"))

    def test_rounded_doubles_as_the_text(self):
        """The doubles of times with more than 6 decimals (the summary's
        float decisions) come from the digits the scanner kept: the summary
        is that of the same texts written as strings (read by the general
        code and converted from the text)."""
        rng = random.Random(5)
        num, txt = [], []
        t = 1700000000.0
        for i in range(3000):
            t += rng.choice([0.0, 1e-7, 3e-7, 0.5, 2.25])
            ts = "%.7f" % t if rng.random() < 0.7 else repr(t)
            d = rng.choice(["%.17g" % rng.uniform(0.1, 50), "%.7f" % rng.uniform(0.1, 5), "2.0000005", "0.0000015"])
            name = "op%d" % rng.randrange(40)
            num.append('{"ph":"X","name":"%s","pid":1,"tid":2,"ts":%s,"dur":%s}' % (name, ts, d))
            txt.append('{"ph":"X","name":"%s","pid":1,"tid":2,"ts":"%s","dur":"%s"}' % (name, ts, d))
        meta = ('{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:TPU:0"}},'
                '{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops"}},')
        with TempDir() as td:
            a = td.write("n.json", '{"traceEvents":[' + meta + ",".join(num) + "]}")
            b = td.write("s.json", '{"traceEvents":[' + meta + ",".join(txt) + "]}")
            db = connect()
            try:
                sa = json.loads(db.execute("SELECT profsum_summary_json(profsum_import(?, 'a'))", (a,)).fetchone()[0])
                sb = json.loads(db.execute("SELECT profsum_summary_json(profsum_import(?, 'b'))", (b,)).fetchone()[0])
            finally:
                db.close()
        for key in ("gap_before_ops", "hierarchical_regions", "hot_ops", "step_time", "time_breakdown"):
            self.assertEqual(sa[key], sb[key], key)
        self.assertEqual(sa["trace_overview"]["profile_start_ts"], sb["trace_overview"]["profile_start_ts"])



class ArgsOfAName(unittest.TestCase):
    """The engine keeps the tf_op and source of each name's last event and
    the last run_id, compared byte for byte: args that change from event
    to event (and back, and written otherwise: an escape, a number for a
    string) give what interning every one of them gives."""

    def test_changing_args(self):
        def ev(i, tf_op=None, source=None, run_id=None, name="op"):
            a = {}
            if tf_op is not None:
                a["tf_op"] = tf_op
            if source is not None:
                a["source"] = source
            if run_id is not None:
                a["run_id"] = run_id
            return {"ph": "X", "pid": 1, "tid": 2, "ts": 10 * i, "dur": 5, "name": name, "args": a}
        evs = [ev(0, "a", "s.py", 7), ev(1, "a", "s.py", 7), ev(2, "b", None, "7"), ev(3, "b", "t.py", 7.50),
               ev(4, "a", "t.py", "x"), ev(5, "ESC", "t.py", "x"), ev(6, None, None, None),
               ev(7, "b", "s.py", "x", name="other"), ev(8, "a", "t.py", "x"), ev(9, "b", "t.py", 7.5)]
        text = json.dumps({"traceEvents": device_meta() + evs}).replace('"ESC"', '"\\u0061"')
        with TempDir() as td:
            p = td.write("a.json", text)
            db = connect()
            try:
                tid = db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]
                ops = db.execute("SELECT name, count, tf_op_path, source_file FROM profsum_agg_op "
                                 "WHERE trace_id=? ORDER BY name", (tid,)).fetchall()
                run_ids = json.loads(db.execute("SELECT run_ids FROM profsum_trace WHERE trace_id=?",
                                                (tid,)).fetchone()[0])
            finally:
                db.close()
        # "op": tf_op a ×4 (one written \u0061), b ×3; source t.py ×5, s.py ×2
        self.assertEqual(ops, [("op", 9, "a", "t.py"), ("other", 1, "b", "s.py")])
        # run_id 7 and "7" are one text, 7.50 and 7.5 are "7.5"
        self.assertEqual(sorted(run_ids), ["7", "7.5", "x"])

    def test_past_the_names_kept_in_arrays(self):
        # names interned after 2^18 other strings keep their last long_name
        # in the map instead of the array: the same signatures
        n = 134000
        parts = ['{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:TPU:0"}}',
                 '{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops"}}']
        for rep in range(2):
            for i in range(n):
                parts.append('{"ph":"X","pid":1,"tid":2,"ts":%d,"dur":1,"name":"n%d","args":'
                             '{"tf_op":"t%d","long_name":"%%n%d = f32[%d]{0} add(f32[%d]{0} %%a)"}}'
                             % (rep * 10 * n + 10 * i, i, i, i, 8 + i % 3, 8 + i % 3))
        with TempDir() as td:
            p = td.write("many.json", '{"traceEvents":[' + ",".join(parts) + "]}")
            db = connect()
            try:
                tid = db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]
                got = db.execute("SELECT count(*), count(shape_signature), count(DISTINCT shape_signature), "
                                 "min(count), max(count) FROM profsum_agg_op WHERE trace_id=?", (tid,)).fetchone()
                last = db.execute("SELECT tf_op_path, shape_signature FROM profsum_agg_op WHERE trace_id=? "
                                  "AND name=?", (tid, "n%d" % (n - 1))).fetchone()
                sig1 = db.execute("SELECT shape_signature FROM profsum_agg_op WHERE trace_id=? AND name='n1'",
                                  (tid,)).fetchone()[0]
            finally:
                db.close()
        self.assertEqual(got, (n, n, 3, 2, 2))
        # n-1 and 1 have the same shapes (8 + i % 3)
        self.assertEqual(last, ("t%d" % (n - 1), sig1))

    def test_args_keys_cleared_per_entry(self):
        # the scanner clears only the args keys the entry before set
        evs = [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "name": "a",
                "args": {"tf_op": "t", "hlo_op": "h", "group_id": 3, "long_name": "l"}},
               {"ph": "X", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "name": "b", "args": {"source": "s"}},
               {"ph": "X", "pid": 1, "tid": 1, "ts": 3, "dur": 1, "name": "c"},
               {"ph": "X", "pid": 1, "tid": 1, "ts": 4, "dur": 1, "name": "d", "args": {"hlo_op": "h2"}}]
        with TempDir() as td:
            p = td.write("c.json", {"traceEvents": evs})
            db = connect()
            try:
                got = db.execute("SELECT name, tf_op, hlo_op, group_id, long_name, source "
                                 "FROM trace_events(?) ORDER BY idx", (p,)).fetchall()
            finally:
                db.close()
        self.assertEqual(got, [("a", "t", "h", 3, "l", None), ("b", None, None, None, None, "s"),
                               ("c", None, None, None, None, None), ("d", None, "h2", None, None, None)])


if __name__ == "__main__":
    unittest.main()
