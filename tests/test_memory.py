"""Import peak memory per event (the target: at most 50 bytes per event
plus the stored aggregates; docs/performance.md).

Measured with SQLite's own allocator counters: every allocation of the
extension goes through sqlite3_malloc64, and `build/sqlrun -m` prints, after
each SQL argument, the bytes in use and the peak bytes while it ran
(sqlite3_memory_used / sqlite3_memory_highwater).  These are byte counts,
not timings: the same on a loaded machine as on an idle one.

The import runs into an in-memory database, so the stored aggregates are the
growth of the bytes in use; what the import needs beyond them is
peak - stored.  The marginal cost is taken between two traces of the same
shape, n and 2n events, so that fixed buffers (reader window, inflate state,
hash tables' first sizes) do not count as per-event memory; the absolute
figure is also bounded.
"""
import os
import random
import subprocess
import unittest

from util import ROOT, SO, SQLRUN, TempDir, connect, import_memory, sqlrun_mem
LIMIT = 50            # bytes per event, the target
FIXED = 1 << 20       # allowance for buffers that do not grow with the trace (the
                      # reader window is 256 KiB; a need of 44.5 B/event at 121,500
                      # events, all included, is below LIMIT already)


def xprof_like(n_steps, devices=4, ops_per_step=100, run_ids=True):
    """A TPU-shaped trace: per device an "XLA Ops" line and a "Steps" line,
    ops with long_name / tf_op / source args (and run_id unless run_ids is
    false), a host thread; returns (json text, number of complete events)."""
    out = ['{"displayTimeUnit":"ns","traceEvents":[']
    n = 0
    first = True

    def put(s):
        nonlocal first
        out.append(s if first else "," + s)
        first = False

    for d in range(devices):
        put('{"ph":"M","pid":%d,"name":"process_name","args":{"name":"/device:TPU:%d"}}' % (d + 1, d))
        put('{"ph":"M","pid":%d,"tid":1,"name":"thread_name","args":{"name":"XLA Ops"}}' % (d + 1))
        put('{"ph":"M","pid":%d,"tid":2,"name":"thread_name","args":{"name":"Steps"}}' % (d + 1))
    put('{"ph":"M","pid":100,"name":"process_name","args":{"name":"/host:CPU"}}')
    kinds = ["fusion", "convolution", "all-reduce", "copy", "dot"]
    t = 1000.0
    for s in range(n_steps):
        step_start = t
        for d in range(devices):
            u = step_start
            for k in range(ops_per_step):
                kind = kinds[k % len(kinds)]
                name = "%s.%d" % (kind, k)
                dur = 1.0 + (k % 7) * 0.25
                put('{"ph":"X","pid":%d,"tid":1,"ts":%.3f,"dur":%.3f,"name":"%s","args":'
                    '{"long_name":"%s = f32[%d,128]{1,0} %s(f32[8]{0} p)","tf_op":"jit(train)/layer_%d/%s",'
                    '"source":"model.py:%d"%s}}'
                    % (d + 1, u, dur, name, name, 8 + k % 4, kind, k % 6, kind, k,
                       ',"run_id":"%d"' % s if run_ids else ""))
                n += 1
                u += dur + 0.125
            put('{"ph":"X","pid":%d,"tid":2,"ts":%.3f,"dur":%.3f,"name":"%d","args":{}}'
                % (d + 1, step_start, u - step_start, s))
            n += 1
            t = max(t, u)
        put('{"ph":"X","pid":100,"tid":7,"ts":%.3f,"dur":%.3f,"name":"train","args":{"step_num":%d}}'
            % (step_start, t - step_start, s))
        n += 1
        t += 5.0
    out.append("]}")
    return "".join(out), n


def one_track(n, seed=3):
    """A single host thread of nested, shuffled events (the worst case for
    scratch memory sized by the largest track); returns (json text, n)."""
    rnd = random.Random(seed)
    evs = []
    t = 0
    while len(evs) < n:
        # a parent and three children, then a gap
        evs.append((t, 40, "parent"))
        for c in range(3):
            if len(evs) < n:
                evs.append((t + 2 + 12 * c, 10, "child%d" % c))
        t += 50
    rnd.shuffle(evs)
    body = ",".join('{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":%d,"name":"%s"}' % e for e in evs)
    return '{"traceEvents":[' + body + "]}", len(evs)


def one_track_float_ties(n, seed=3):
    """one_track with decimal texts whose children end on their parent's
    picosecond but one ulp later as doubles: the summary nests them as the
    doubles do, and the import sweeps the track again on exact times (the
    exact check of summary_engine.c, which must stay within the bound)."""
    rnd = random.Random(seed)
    evs = []
    t = 1000
    while len(evs) < n:
        evs.append(("%d.0" % t, "40.3", "parent"))
        for c in range(3):
            if len(evs) < n:
                evs.append(("%d.1" % (t + 2 + 14 * c), "%d.2" % (38 - 14 * c), "child%d" % c))
        t += 50
    rnd.shuffle(evs)
    body = ",".join('{"ph":"X","pid":1,"tid":1,"ts":%s,"dur":%s,"name":"%s"}' % e for e in evs)
    return '{"traceEvents":[' + body + "]}", len(evs)


class ImportMemory(unittest.TestCase):
    def check_shape(self, make, n_small, n_big):
        with TempDir() as td:
            text1, n1 = make(n_small)
            text2, n2 = make(n_big)
            stored1, peak1 = import_memory(td.write("small.json", text1))
            stored2, peak2 = import_memory(td.write("big.json", text2))
        need1, need2 = peak1 - stored1, peak2 - stored2
        marginal = (need2 - need1) / (n2 - n1)
        msg = "n=%d: peak %d B, stored %d B; n=%d: peak %d B, stored %d B; %.1f B/event" % (
            n1, peak1, stored1, n2, peak2, stored2, marginal)
        self.assertGreater(n2, n1)
        self.assertLessEqual(marginal, LIMIT, msg)
        self.assertLessEqual(need2, LIMIT * n2 + FIXED, msg)
        return marginal

    def test_xprof_shaped_trace(self):
        # 4 devices x 100 ops + 5 per step: 150 and 300 steps
        self.check_shape(lambda s: xprof_like(s), 150, 300)

    def test_event_record_is_small(self):
        # ops without run_id: 16 bytes of event record (ts, a 32-bit dur and
        # the key; run ids and exclusive times live beside it), 4 of
        # processing order, the rest the keys' tables: 21.5 B/event measured
        m = self.check_shape(lambda s: xprof_like(s, run_ids=False), 150, 300)
        self.assertLessEqual(m, 24.0)

    def test_one_big_unsorted_track(self):
        # every event on one track, out of order: sorted in place, no
        # per-track scratch of pointers
        self.check_shape(lambda n: one_track(n), 60000, 120000)

    def test_one_track_nested_otherwise_in_doubles(self):
        # the exact check re-sorts a copy of the track's order (4 B/event)
        # with stacks as deep as the nesting: 79 B/event marginal when it
        # copied 40 B/event of times and stacks
        with TempDir() as td:
            text, _ = one_track_float_ties(4000)
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (td.write("t.json", text),))
            n = db.execute("SELECT value FROM profsum_agg_fact WHERE name = 'float_nesting_events'").fetchone()[0]
            db.close()
        self.assertGreater(n, 0)                  # the check does run on this shape
        self.check_shape(lambda n: one_track_float_ties(n), 60000, 120000)


class ScanMemory(unittest.TestCase):
    """A plain scan needs a fixed amount of memory, sized by the file: the
    reader window (64 KiB for a file under 4 MiB on disk, else 256 KiB),
    the raw input buffer (64 KiB), the inflater's state and, for a gzip file
    of 128 KiB or more, the inflate thread's ring: 4 slots under 4 MiB, else
    8, of 1/32 of the file each (32 to 256 KiB).  A 1.2 MB gzip file's scan
    used 3.4 MB before the ring and the window were sized so (8 x 256 KiB,
    1 MiB), 0.8 MB with 8 slots and the 256 KiB window; now about 0.43 MB."""

    def peak_of_scan(self, path, threads):
        before, _, peak = sqlrun_mem("SELECT count(*) FROM trace_events('%s')" % path.replace("'", "''"),
                                     threads)
        return peak - before

    def skip_unless_threads(self):
        p = subprocess.run([SQLRUN, "SELECT sqlite_compileoption_used('THREADSAFE=0')"],
                           capture_output=True, text=True, timeout=60)
        if p.stdout.strip() == "1":
            self.skipTest("SQLite built without threads: the reader has no inflate thread")

    def check_ring(self, path, n_slots, window):
        size = os.path.getsize(path)
        slot = max(32 * 1024, min(256 * 1024, (size // 32 + 16383) // 16384 * 16384))
        threaded = self.peak_of_scan(path, "1")
        single = self.peak_of_scan(path, "0")
        # the thread adds its ring, and little else
        self.assertLess(abs(threaded - single - n_slots * slot), 64 * 1024, (threaded, single, slot))
        # the window, the raw buffer, the inflater (ISA-L 87 KiB, zlib 44)
        # and the row's own buffers
        self.assertLess(single, window + 64 * 1024 + 96 * 1024 + 96 * 1024, single)
        return single, threaded

    def test_small_gzip_scan_memory(self):
        import sys
        self.skip_unless_threads()
        with TempDir() as td:
            path = os.path.join(td.path, "t.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "10M",
                            "--shape", "tpu", "--out", path], check=True, stdout=subprocess.DEVNULL)
            size = os.path.getsize(path)
            self.assertTrue(512 * 1024 < size < 2 * 1024 * 1024, size)
            single, threaded = self.check_ring(path, 4, 64 * 1024)
            self.assertLess(threaded, 512 * 1024, threaded)

    def test_gzip_from_4_mib_keeps_the_big_ring(self):
        # a gzip file of 4 MiB or more on disk (stored, not compressed: made
        # in a moment) gets 8 slots and the 256 KiB window: the 1 GB scan
        # was 2-3 % slower with smaller buffers
        import gzip
        self.skip_unless_threads()
        ev = '{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":5,"name":"op%d"}'
        body = ",".join(ev % (10 * i, i % 50) for i in range(90000))
        text = '{"traceEvents":[' + body + "]}"
        with TempDir() as td:
            path = os.path.join(td.path, "big.json.gz")
            with open(path, "wb") as f:
                f.write(gzip.compress(text.encode(), compresslevel=0))
            self.assertTrue(4 * 1024 * 1024 <= os.path.getsize(path) < 8 * 1024 * 1024, os.path.getsize(path))
            single, _ = self.check_ring(path, 8, 256 * 1024)
            self.assertGreater(single, 256 * 1024, single)     # the big window, not the small one
            db = connect()
            self.assertEqual(db.execute("SELECT count(*), sum(dur) FROM trace_events(?)", (path,)).fetchone(),
                             (90000, 90000 * 5000))      # dur in ns
            db.close()


class BenchInProcess(unittest.TestCase):
    """bench/inproc.py, the import timed in a running connection: its
    answer is what bench/run.sh reports, so its fields are checked here."""

    def test_inproc_reports_times_memory_and_events(self):
        import gzip
        import json
        import sys
        text, n = xprof_like(40)
        with TempDir() as td:
            trace = os.path.join(td.path, "t.json.gz")
            empty = os.path.join(td.path, "empty.json.gz")
            with open(trace, "wb") as f:
                f.write(gzip.compress(text.encode()))
            with open(empty, "wb") as f:
                f.write(gzip.compress(b'{"traceEvents":[]}'))
            p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "inproc.py"), SO, empty, trace, "3",
                                td.path], capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            d = json.loads(p.stdout)
            left = os.listdir(td.path)
        self.assertEqual(len(d["times_s"]), 3)
        self.assertTrue(all(0 < t < 60 for t in d["times_s"]), d)
        self.assertEqual(d["num_complete_events"], n)
        self.assertGreater(d["summary_chars"], 1000)
        if os.access("/proc/self/clear_refs", os.W_OK):        # Linux: the peak can be reset
            self.assertIsNotNone(d["peak_above_kb"])
        if d["peak_above_kb"] is not None:
            self.assertGreater(d["peak_above_kb"], 0)               # an import takes memory
            self.assertLess(d["peak_above_kb"], 64 * 1024)
        self.assertEqual(sorted(left), ["empty.json.gz", "t.json.gz"])    # its database removed
        # then the plain scan in the same connection, once per run: every
        # traceEvents entry with a string ph is a row
        rows = sum(1 for e in json.loads(text)["traceEvents"] if isinstance(e.get("ph"), str))
        self.assertEqual(d["scan_rows"], rows)
        self.assertEqual(len(d["scan_times_s"]), 3)
        self.assertTrue(all(0 < t < 60 for t in d["scan_times_s"]), d)

    def test_phases_build_and_report(self):
        # bench/phases.py over the PROFSUM_PHASE_TIMES build (make test
        # builds it): every phase of every later import, in a table whose
        # medians add up in its last rows; the ordinary build
        # writes nothing to stderr (the marks compile to nothing), and
        # phases.py says so instead of printing zeros.
        import gzip
        import sys
        phases_so = os.environ.get("PROFSUM_PHASES_SO", os.path.join(ROOT, "build", "phases", "profsum.so"))
        if not os.path.exists(phases_so):
            self.skipTest("no %s: `make test` builds it (make build/phases/profsum.so)" % phases_so)
        text, n = xprof_like(40)
        with TempDir() as td:
            trace = os.path.join(td.path, "t.json.gz")
            with open(trace, "wb") as f:
                f.write(gzip.compress(text.encode()))
            script = os.path.join(ROOT, "bench", "phases.py")
            p = subprocess.run([sys.executable, script, phases_so, "--runs", "3", trace],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = {l.split("|")[1].strip(): l.split("|")[2].strip() for l in p.stdout.splitlines()
                    if l.startswith("| ") and not l.startswith("| phase")}
            for ph in ("pre", "parse", "begin", "schema", "label", "write", "warnings",
                       "sections-build", "sections-store", "commit", "free"):
                self.assertGreaterEqual(float(rows[ph]), 0.0, ph)
            self.assertGreater(float(rows["parse"]), 0.0)
            self.assertGreater(float(rows["commit"]), 0.0)
            names = ("pre", "parse", "begin", "schema", "label", "write", "warnings",
                     "sections-build", "sections-store", "commit", "free")
            self.assertAlmostEqual(float(rows["sum of the medians"]), sum(float(rows[x]) for x in names),
                                   delta=0.06)
            self.assertGreater(float(rows["import, wall (Python's clock)"]), 0.0)
            self.assertGreater(float(rows["profsum_summary_json, wall"]), 0.0)
            q = subprocess.run([sys.executable, script, SO, "--runs", "1", trace],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(q.returncode, 1)
            self.assertIn("0 phase lines for 2 imports", q.stderr)
            self.assertEqual(q.stdout, "")


if __name__ == "__main__":
    unittest.main()


class RecordWord(unittest.TestCase):
    """The event record keeps an exclusive time in 32 bits of picoseconds;
    longer ones (4.29 ms and more) are kept beside it: both read back the
    same as the exact value."""

    def test_long_exclusive_times(self):
        meta = [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
            {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
        ]
        evs = [
            # 10 ms with a 1 ms child: 9 ms exclusive (above 2^32 ps)
            {"ph": "X", "pid": 1, "tid": 1, "ts": 100, "dur": 10000, "name": "fusion.big",
             "args": {"run_id": "7"}},
            {"ph": "X", "pid": 1, "tid": 1, "ts": 200, "dur": 1000, "name": "convolution.small"},
            # 4294.967295 us: exactly 2^32 - 1 ps, the first value kept beside
            {"ph": "X", "pid": 1, "tid": 1, "ts": 20000, "dur": 4294.967295, "name": "fusion.edge"},
            {"ph": "X", "pid": 1, "tid": 1, "ts": 30000, "dur": 4294.967294, "name": "fusion.below"},
            # a host event of 5 s around a 1 s one
            {"ph": "X", "pid": 2, "tid": 9, "ts": 0, "dur": 5000000, "name": "outer"},
            {"ph": "X", "pid": 2, "tid": 9, "ts": 10, "dur": 1000000, "name": "inner"},
        ]
        import json
        with TempDir() as td:
            p = td.write("t.json", json.dumps({"traceEvents": meta + evs}))
            db = connect()
            db.execute("SELECT profsum_import(?, 't')", (p,))
            d = json.loads(db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
            db.close()
        ex = {h["name"]: h["exclusive_duration"] for h in d["hot_ops"]}
        self.assertEqual(ex["fusion.big"], 9000.0)
        self.assertEqual(ex["convolution.small"], 1000.0)
        self.assertEqual(ex["fusion.edge"], 4294.967295)
        self.assertEqual(ex["fusion.below"], 4294.967294)
        self.assertEqual(d["time_breakdown"]["host"]["total_duration"], 5000000.0)
