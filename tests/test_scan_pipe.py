"""The import's scanning on a thread of its own (ext/reader/scanpipe.c)
gives what one thread gives: every stored diagnostic in the same order,
the same summary, the same errors at the same bytes, the same interrupt;
and it is used where it pays (a large file whose inflating leaves the
second core idle), not on a small one.

PROFSUM_SCAN_PIPE=1 asks for it on any file, =0 never; PROFSUM_SCAN_INFLATES=1
makes the scanning thread take the inflating over from the inflate thread,
=0 never.  The extension reads the variables at each import, so this
process sets them around each call."""
import gzip
import json
import os
import random
import threading
import time
import unittest

from util import TempDir, connect, env_var


def odd_entries(rng, n):
    """n entries that give diagnostics of many kinds (rounded times, control
    characters, bytes that are not UTF-8, trailing commas, negative
    durations, B/E pairs, entries without ph, a key given twice, times of
    unusual shapes), with args
    the engine reads (tf_op, long_name, hlo_op) and GPU kernels."""
    out = []
    for i in range(n):
        k = i % 11
        name = "op%d" % (i % 23)
        if k == 1:
            name = "ctl\x01%d" % i
        elif k == 2:
            name = "bad\udcff%d" % i
        args = '"tf_op":"jit(step)/layer%d/dot","long_name":"%%fusion.%d = f32[%d,128]"' % (
            i % 5, i % 9, 8 + i % 4)
        if k == 3:
            args += ',"hlo_op":"fusion.%d"' % (i % 9)
        if k == 4:
            args += ',"kernel_details":"regs:%d static_shared:0 block:128,1,1 grid:%d,1,1"' % (
                16 + i % 3, 1 + i % 40)
        ph = "X"
        if k == 5:
            ph = "B" if i % 2 else "E"
        dur = "-1" if k == 6 else "%d.%07d" % (1 + i % 13, i % 9999999)
        ent = '{"ph":"%s","pid":%d,"tid":%d,"ts":%d.%07d,"dur":%s,"name":"%s","args":{%s}%s}' % (
            ph, 1 + i % 3, i % 4, 1000 + 9 * i, rng.randrange(10 ** 7), dur, name, args,
            "," if k == 7 else "")
        if k == 8:
            ent = '{"name":"no ph %d","ts":%d}' % (i, i)
        if k == 9 and i % 2:
            ent = ent[:-1] + ',"name":"twice"}'
        if k == 10:
            # times the scanning thread leaves to the engine's side
            # (profsumScanTimesLater) next to those it converts itself: a
            # key given twice either way (the second with an exponent, or
            # not a number: not the scanner's fast shape), 16 integer
            # digits, 23 decimals, a rounded dur given again exact
            v = (i // 11) % 7
            if v == 0:
                ent = ent[:-1] + ',"ts":%d.%07d}' % (2000 + i, rng.randrange(10 ** 7))
            elif v == 1:
                ent = ent[:-1] + ',"ts":%d}' % (9000000 + i)
            elif v == 2:
                ent = ent.replace('"ts":', '"ts":1%015d.5,"x":' % i, 1)
            elif v == 3:
                ent = ent.replace('"dur":', '"dur":0.%023d,"y":' % (i * 7919), 1)
            elif v == 4:
                ent = ent[:-1] + ',"dur":1.5}'
            elif v == 5:
                ent = ent[:-1] + ',"ts":%de3,"dur":%de-3}' % (9000 + i, 4000 + i)
            else:
                ent = ent[:-1] + (',"ts":"%d","dur":null}' % i if i % 2 else
                                  ',"t\\u0073":%d.25,"d\\u0075r":7.5}' % (8000000 + i))
        out.append(ent)
        out.append(ent)
    return out


def trace_bytes(entries, meta=True):
    head = []
    if meta:
        head = ['{"ph":"M","name":"process_name","pid":1,"args":{"name":"/device:GPU:0"}}',
                '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"Stream #7"}}']
    body = "{\"traceEvents\":[\n" + ",\n".join(head + entries) + "\n]}\n"
    return body.encode("utf-8", "surrogateescape")


def with_pipe(value, fn):
    """fn() with PROFSUM_SCAN_PIPE=value (None: unset)."""
    with env_var("PROFSUM_SCAN_PIPE", value):
        return fn()


def imported(path, options=None):
    """What an import of path into a new database stores: every stored
    diagnostic in order, the v1 document (its time of making left out),
    the kernel rows, the breakdown; or the error's text."""
    db = connect()
    try:
        if options:
            db.execute("SELECT profsum_import(?, 'x', ?)", (path, json.dumps(options))).fetchone()
        else:
            db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
    except Exception as e:      # the error is part of the answer
        db.close()
        return ("error", str(e))
    doc = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
    doc.pop("generated_at_utc", None)
    out = {"doc": doc,
           "diag": db.execute("SELECT * FROM profsum_diagnostic ORDER BY rowid").fetchall(),
           "kernels": db.execute("SELECT * FROM profsum_kernel_stats ORDER BY 1, 2, 3").fetchall(),
           "breakdown": db.execute("SELECT * FROM profsum_breakdown ORDER BY 1, 2, 3, 4").fetchall()}
    db.close()
    return out


def thread_names():
    """The names of this process's threads now."""
    out = set()
    for t in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/comm" % t) as f:
                out.add(f.read().strip())
        except OSError:
            pass
    return out


class ScanThreadSeen:
    """Whether this process had the scanning thread (named profsum-scan)
    while the block ran (polled); also whether the inflate thread
    (profsum-inflate) was seen, and whether it was still seen 10 ms after
    a listing that had the scanning thread (it must not be where the
    scanning thread takes the inflating over; a thread just joined can
    stay listed for a moment, hence the margin)."""

    def __init__(self, until_done=False):
        self.until_done = until_done

    def __enter__(self):
        self.seen = False
        self.inflate_seen = False
        self.inflate_after_scan = False
        self.done = False

        def poll():
            first_scan = None
            while not self.done and (self.until_done or not self.seen):
                t = time.monotonic()
                names = thread_names()
                if self.seen and "profsum-inflate" in names and t - first_scan >= 0.01:
                    self.inflate_after_scan = True
                if "profsum-scan" in names and not self.seen:
                    self.seen = True
                    first_scan = t
                if "profsum-inflate" in names:
                    self.inflate_seen = True
                time.sleep(0.0005)
        self.t = threading.Thread(target=poll)
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.done = True
        self.t.join()


class ScanPipe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        rng = random.Random(11)
        odd = trace_bytes(odd_entries(rng, 30000))
        cls.odd_gz = cls.td.write("odd.json.gz", gzip.compress(odd, 1))
        cls.odd_plain = cls.td.write("odd.json", odd)
        # entries larger than the first window (64 KiB), which doubles
        big = ['{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"big%d","args":{"long_name":"%s"}}'
               % (10 * i, i, "x" * (40000 * (1 + i % 7))) for i in range(40)]
        cls.big = cls.td.write("big.json", trace_bytes(big))
        # a second traceEvents array: the summary reads the last one only
        two = b'{"traceEvents":[' + b",".join(odd_entries(rng, 800)[j].encode("utf-8", "surrogateescape")
                                                for j in range(800)) + b'],"traceEvents":[' + \
            b",".join(e.encode("utf-8", "surrogateescape") for e in odd_entries(rng, 900)) + b"]}"
        cls.two = cls.td.write("two.json.gz", gzip.compress(two, 1))

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__()

    def same_both_ways(self, path, options=None):
        one = with_pipe("0", lambda: imported(path, options))
        piped = with_pipe("1", lambda: imported(path, options))
        self.assertEqual(piped, one)
        return one

    def test_same_results(self):
        for path in (self.odd_gz, self.odd_plain, self.big, self.two):
            for options in (None, {"store_diagnostics": "all"}):
                with self.subTest(trace=os.path.basename(path), options=options):
                    got = self.same_both_ways(path, options)
                    self.assertNotIn("error", got)
                    self.assertEqual(got["doc"]["schema_version"], "profile_summary.v1")
                    if path != self.big:
                        self.assertGreater(len(got["diag"]), 0)

    def test_digest_with_the_pipe(self):
        """With the scanning thread, the SHA-256 is hashed off it, by a
        second read of the file (a step at a time on either side's waits
        and on a thread of the idle scheduling class, finished at the
        end).  The
        digest and size stored are hashlib's and the file's, with the pipe,
        without it and without threads."""
        import hashlib
        for path in (self.odd_plain, self.odd_gz, self.big):
            with open(path, "rb") as f:
                want = (hashlib.sha256(f.read()).hexdigest(), os.path.getsize(path))
            for pipe, threads in (("1", "1"), ("0", "1"), ("1", "0")):
                with self.subTest(trace=os.path.basename(path), pipe=pipe, threads=threads), \
                        env_var("PROFSUM_SCAN_PIPE", pipe), env_var("PROFSUM_THREADS", threads):
                    db = connect()
                    db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
                    got = db.execute("SELECT sha256, size FROM profsum_trace").fetchone()
                    db.close()
                    self.assertEqual(got, want)

    def test_fixture_has_what_the_pipe_must_carry(self):
        got = with_pipe("1", lambda: imported(self.odd_gz, {"store_diagnostics": "all"}))
        kinds = {r[4] for r in got["diag"]}
        for kind in ("time_rounded", "control_character", "invalid_utf8", "trailing_comma",
                     "no_ph", "negative_duration", "unmatched_begin", "reference_rejects"):
            self.assertIn(kind, kinds)
        self.assertGreater(len(got["kernels"]), 0)
        self.assertGreater(len(got["doc"]["hot_ops"]), 0)

    def test_same_errors(self):
        """A syntax error after thousands of entries, a gzip cut off, damaged
        gzip: the same message (byte offset and entry index) either way."""
        raw = gzip.decompress(open(self.odd_gz, "rb").read())
        cut = raw.index(b"\n", len(raw) * 2 // 3)
        cases = {
            "syntax.json": raw[:cut] + b"@" + raw[cut:],
            "truncated.json.gz": gzip.compress(raw, 1)[:-90000],
            "damaged.json.gz": (lambda z: z[:len(z) // 2] + bytes(4096) + z[len(z) // 2 + 4096:])(
                gzip.compress(raw, 1)),
        }
        for name, data in cases.items():
            path = self.td.write(name, data)
            with self.subTest(case=name):
                got = self.same_both_ways(path)
                self.assertEqual(got[0], "error")
                if name == "syntax.json":
                    self.assertIn("JSON syntax error at byte %d" % cut, got[1])
                elif name == "truncated.json.gz":
                    self.assertIn("truncated gzip data", got[1])

    def test_used_where_it_pays(self):
        """A plain JSON file of more than 16 MB gets the scanning thread by
        itself; a smaller one never unless PROFSUM_SCAN_PIPE=1 asks for it;
        PROFSUM_SCAN_PIPE=0 turns it off."""
        rng = random.Random(5)
        large = self.td.write("large.json", trace_bytes(odd_entries(rng, 130000)))
        self.assertGreater(os.path.getsize(large), 16 << 20)

        def piped(path, value, tries=1):
            """Whether the scanning thread was seen in one of tries imports.
            The poll can miss a thread that lives a few milliseconds on a
            loaded machine, so a check that it runs tries more than once;
            a check that it does not run needs one import only."""
            def run():
                with ScanThreadSeen() as m:
                    imported(path)
                return m.seen
            return any(with_pipe(value, run) for _ in range(tries))
        self.assertTrue(piped(large, None, 5))
        self.assertTrue(piped(large, "1", 5))
        self.assertFalse(piped(large, "0"))
        self.assertFalse(piped(self.big, None))
        # Forced on a file under the threshold: one of many events, so that
        # the scanning thread lives as long as the engine takes over them
        # (it runs at most a few thousand events ahead) rather than the few
        # milliseconds it takes to scan the forty long entries of self.big,
        # which a poll on a loaded machine could miss five times running.
        mid = self.td.write("mid.json", trace_bytes(odd_entries(rng, 45000)))
        self.assertLess(os.path.getsize(mid), 16 << 20)
        self.assertFalse(piped(mid, None))
        self.assertTrue(piped(mid, "1", 5))

    def test_not_on_one_cpu(self):
        """On one CPU (this process's affinity), the scanning thread would
        only take turns with the engine's: a large plain JSON file, which
        gets it on two CPUs, does not by default; PROFSUM_SCAN_PIPE=1
        still asks for it, and the results are the same."""
        if not hasattr(os, "sched_setaffinity"):
            self.skipTest("no sched_setaffinity")
        cpus = os.sched_getaffinity(0)
        if len(cpus) < 2:
            self.skipTest("this machine has one CPU for this process")
        rng = random.Random(5)
        large = self.td.write("large1.json", trace_bytes(odd_entries(rng, 130000)))

        def run():
            with ScanThreadSeen() as m:
                got = imported(large)
            return m.seen, got
        os.sched_setaffinity(0, {min(cpus)})
        try:
            seen, got = with_pipe(None, run)
            self.assertFalse(seen)
            forced = [with_pipe("1", run) for _ in range(5)]
        finally:
            os.sched_setaffinity(0, cpus)
        self.assertTrue(any(s for s, _ in forced))
        for _, g in forced:
            self.assertEqual(g, got)
        self.assertTrue(with_pipe(None, run)[0] or with_pipe(None, run)[0])

    def test_cgroup_quota_counts_as_cpus(self):
        """A CPU quota of the process's cgroup counts as its CPUs, rounded
        up (a container limited to one CPU on a larger machine): with a
        quota of one CPU on an ancestor of its cgroup (v2's cpu.max) or
        half a CPU (v1's cpu.cfs_quota_us), a large plain JSON file does not
        get the scanning thread; with "max" on every level it does, as on
        this machine's CPUs.  PROFSUM_CGROUP_ROOT points the reading at a
        tree the test builds; the results are the same."""
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
        if len(cpus) < 2:
            self.skipTest("this machine has one CPU for this process")
        rng = random.Random(7)
        large = self.td.write("large_cg.json", trace_bytes(odd_entries(rng, 130000)))

        def tree(name, self_cgroup, files):
            root = os.path.join(self.td.path, name)
            os.makedirs(root)
            with open(os.path.join(root, "self_cgroup"), "w") as f:
                f.write(self_cgroup)
            for rel, text in files.items():
                path = os.path.join(root, "fs", rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            return root

        v2_one = tree("v2one", "0::/kube/pod1/c1\n",
                      {"kube/pod1/c1/cpu.max": "max 100000\n", "kube/pod1/cpu.max": "100000 100000\n",
                       "kube/cpu.max": "max 100000\n"})
        v1_half = tree("v1half", "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n",
                       {"cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
                        "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
                        "cpu,cpuacct/docker/cpu.cfs_quota_us": "-1\n"})
        v2_max = tree("v2max", "0::/a/b\n", {"a/b/cpu.max": "max 100000\n", "a/cpu.max": "max 100000\n",
                                              "cpu.max": "max 100000\n"})

        def run():
            with ScanThreadSeen() as m:
                got = imported(large)
            return m.seen, got
        base = with_pipe("0", run)[1]
        for root in (v2_one, v1_half):
            with self.subTest(tree=os.path.basename(root)):
                with env_var("PROFSUM_CGROUP_ROOT", root):
                    for _ in range(3):
                        seen, got = with_pipe(None, run)
                        self.assertFalse(seen)
                        self.assertEqual(got, base)
        with env_var("PROFSUM_CGROUP_ROOT", v2_max):
            runs = [with_pipe(None, run) for _ in range(3)]
        self.assertTrue(any(seen for seen, _ in runs))
        for _, got in runs:
            self.assertEqual(got, base)

    def test_inflating_handed_to_the_scanning_thread(self):
        """A gzip trace large enough for the scanning thread by itself: the
        inflate thread reads ahead until then; with PROFSUM_SCAN_INFLATES=1
        (by default: when inflating took less than a quarter of a core) it
        ends when the scanning thread starts, which inflates the rest (from
        the slots already filled on); with =0 it goes on.  Results, SHA-256
        and the error of a truncated copy are those of one thread."""
        import hashlib
        rng = random.Random(17)
        raw = trace_bytes(odd_entries(rng, 200000))
        self.assertGreater(len(raw) * 4 // 5, 18 << 20)   # the cut copy too
        z = gzip.compress(raw, 1)
        path = self.td.write("handback.json.gz", z)

        def sha(p):
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (p,)).fetchone()
            got = db.execute("SELECT sha256, size FROM profsum_trace").fetchone()
            db.close()
            return got
        with env_var("PROFSUM_THREADS", "0"):
            one = imported(path)
            one["sha"] = sha(path)
        with env_var("PROFSUM_SCAN_INFLATES", "1"), ScanThreadSeen(until_done=True) as m:
            piped = imported(path)
        self.assertTrue(m.seen)
        self.assertTrue(m.inflate_seen)
        self.assertFalse(m.inflate_after_scan)
        piped["sha"] = sha(path)
        self.assertEqual(piped, one)
        # =0: the inflate thread goes on beside the scanning thread
        with env_var("PROFSUM_SCAN_INFLATES", "0"), ScanThreadSeen(until_done=True) as m:
            kept = imported(path)
        self.assertTrue(m.seen)
        self.assertTrue(m.inflate_after_scan)
        kept["sha"] = sha(path)
        self.assertEqual(kept, one)
        self.assertEqual(one["sha"][1], len(z))
        # the hand-back leaves the SHA-256 behind the reading (a second read
        # in 256 KiB steps: this file is many steps long)
        self.assertGreater(len(z), 64 * 65536)
        self.assertEqual(one["sha"][0], hashlib.sha256(z).hexdigest())
        cut = self.td.write("handback_cut.json.gz", z[:len(z) * 4 // 5])
        with env_var("PROFSUM_THREADS", "0"):
            one = imported(cut)
        with env_var("PROFSUM_SCAN_INFLATES", "1"), ScanThreadSeen() as m:
            piped = imported(cut)
        self.assertTrue(m.seen)
        self.assertEqual(piped, one)
        self.assertEqual(one[0], "error")
        self.assertIn("truncated gzip data", one[1])

    def test_inflate_thread_done_before_the_hand_back(self):
        """A gzip file of many tiny members whose whole text fits the
        inflate ring: the inflate thread has usually read it all and ended
        before the scanning thread asks for the inflating; the import still
        reads every slot, and its SHA-256 (which waits for that thread)
        is hashlib's."""
        import hashlib
        ents = ['{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"op%d"}' % (10 * i, i % 7)
                for i in range(1500)]
        body = ('{"traceEvents":[' + ",".join(ents) + ']}').encode()
        data = b"".join(gzip.compress(body[i:i + 8], 1) for i in range(0, len(body), 8))
        self.assertGreater(len(data), 256 * 1024)    # an inflate thread
        path = self.td.write("members.json.gz", data)
        def sha():
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
            got = db.execute("SELECT sha256, num_complete_events FROM profsum_trace").fetchone()
            db.close()
            return got
        for _ in range(3):
            with env_var("PROFSUM_SCAN_INFLATES", "1"), env_var("PROFSUM_SCAN_PIPE", "1"):
                got = imported(path)
                sha_got = sha()
            self.assertEqual(sha_got, (hashlib.sha256(data).hexdigest(), 1500))
            self.assertEqual(got["doc"]["schema_version"], "profile_summary.v1")

    def test_interrupt(self):
        """An import interrupted while the scanning thread runs stops with
        the function's message, stores nothing, and the connection goes on."""
        rng = random.Random(9)
        member = gzip.compress(("".join(e + ",\n" for e in odd_entries(rng, 4000))).encode(
            "utf-8", "surrogateescape"), 1)
        path = os.path.join(self.td.path, "long.json.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(b'{"traceEvents":[\n'))
            for _ in range(400):
                f.write(member)
            f.write(gzip.compress(b'{}]}\n'))
        db = connect()
        db.execute("SELECT profsum_import(?, 'small')", (self.big,)).fetchone()
        before = db.execute("SELECT count(*) FROM profsum_trace").fetchone()
        timer = threading.Timer(0.5, db.interrupt)

        def run():
            timer.start()
            t = time.perf_counter()
            try:
                db.execute("SELECT profsum_import(?, 'long')", (path,)).fetchone()
                return None, time.perf_counter() - t
            except Exception as e:
                return str(e), time.perf_counter() - t
        msg, took = with_pipe("1", run)
        timer.cancel()
        self.assertEqual(msg, "profsum_import: interrupted")
        self.assertLess(took, 5.0)
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_trace").fetchone(), before)
        self.assertEqual(db.execute("SELECT 1").fetchone(), (1,))
        db.close()


if __name__ == "__main__":
    unittest.main()
