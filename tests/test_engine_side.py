"""The write phase's side jobs (ext/summary/engine_side.c): the devices'
KPI walk, the global breakdown's sweep and the steps' wall cover run on one
worker thread of the engine's, in the order the write joins them, once a
trace has 16,384 complete events or more; a join of a job the worker has
not taken yet runs it in the joining thread.  Whichever thread runs a job,
and whether there is a worker at all (PROFSUM_THREADS=0), the tables are
the same; an allocation that fails anywhere in the write (the worker's
own, a job's on the worker, the calling thread's while the worker runs)
ends the import with an error, leaks nothing and leaves no thread behind.

The traces are written by bench/gen_trace.py and bench/gen_xplane.py: TPU
shaped, several devices with device ops, communication, steps, so that all
three jobs have work."""
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import threading
import unittest

from util import OOM_SQL, ROOT, TempDir, connect, env_var, run_oom_sql, wait_for_task_count

CHUNK_SO = os.path.join(ROOT, "build", "chunk", "profsum.so")

TABLES = ["profsum_agg_device", "profsum_agg_fact", "profsum_agg_breakdown", "profsum_agg_step_wall",
          "profsum_agg_step_span", "profsum_agg_xla_util", "profsum_agg_xla_op", "profsum_agg_xla_device",
          "profsum_agg_op", "profsum_agg_diagnostic"]


def gen(script, *args):
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", script)] + list(args), check=True,
                   stdout=subprocess.DEVNULL)


def stored(path, so=None):
    """Every row of TABLES for an import of path (trace_id left out), and
    the v1 document without its time of making (with build so, else the
    default one)."""
    if so is None:
        db = connect()
    else:
        db = sqlite3.connect(":memory:")
        db.enable_load_extension(True)
        db.load_extension(so)
    db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
    out = {}
    for t in TABLES:
        cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % t) if r[1] != "trace_id"]
        out[t] = db.execute("SELECT %s FROM %s" % (", ".join(cols), t)).fetchall()   # stored order
    doc = db.execute("SELECT profsum_summary_json('x')").fetchone()[0]
    out["n"] = db.execute("SELECT num_complete_events FROM profsum_trace").fetchone()[0]
    db.close()
    out["doc"] = doc.split('"generated_at_utc"')[0]
    return out


def float_facts(path):
    """The float_nesting facts and diagnostic of an import of path."""
    db = connect()
    db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
    got = dict(db.execute("SELECT name, value FROM profsum_agg_fact WHERE name IN "
                          "('exact_breakdown_total', 'float_nesting_events', 'float_nesting_moved')"))
    got["diag"] = db.execute("SELECT detail FROM profsum_diagnostic WHERE kind = 'float_nesting'").fetchall()
    db.close()
    return got


def facts_alike(tc, path):
    """The float_nesting facts (float_facts) and the stored tables (stored)
    of an import of path with one thread, checked equal to those with the
    worker: (facts, tables)."""
    with env_var("PROFSUM_THREADS", "0"):
        one = float_facts(path)
        one_all = stored(path)
    tc.assertEqual(float_facts(path), one)
    tc.assertEqual(stored(path), one_all)
    return one, one_all


def busy_track(pairs, group, tie):
    """One track at epoch-scale µs: a span over all of it, groups of
    `group` pairs under it, in each pair a parent [X.0, +1.0) and a child
    [X.9, +0.1) that the doubles move to the parent's end; with tie, two
    events in the gap after the middle group whose doubles tie (.13 and .2
    µs in are both 0.25 µs in doubles, and then the longer goes first) and
    so order them otherwise than their exact starts.  The trace's text."""
    base = 1700000000000000
    groups = pairs // group
    parts = ['{"ph":"X","pid":1,"tid":1,"name":"span","ts":%d,"dur":%d}' % (base - 1, 4 * pairs + 4)]
    for g in range(groups):
        g0 = base + 4 * g * group
        parts.append('{"ph":"X","pid":1,"tid":1,"name":"group","ts":%d,"dur":%d}' % (g0, 4 * group - 2))
        for i in range(g * group, (g + 1) * group):
            x = base + 4 * i
            parts.append('{"ph":"X","pid":1,"tid":1,"name":"fusion","ts":%d.0,"dur":1.0}' % x)
            parts.append('{"ph":"X","pid":1,"tid":1,"name":"copy","ts":%d.9,"dur":0.1}' % x)
        if tie and g == groups // 2:
            gap = g0 + 4 * group - 2
            parts.append('{"ph":"X","pid":1,"tid":1,"name":"a","ts":%d.13,"dur":0.3}' % gap)
            parts.append('{"ph":"X","pid":1,"tid":1,"name":"b","ts":%d.2,"dur":0.5}' % gap)
    return '{"traceEvents":[' + ",".join(parts) + "]}"


def side_threads():
    """Threads of this process now."""
    return len(os.listdir("/proc/self/task"))


class EngineSide(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        cls.json = os.path.join(cls.td.path, "g.json.gz")
        gen("gen_trace.py", "--size", "6M", "--devices", "2", "--out", cls.json)
        cls.xp = os.path.join(cls.td.path, "g.xplane.pb")
        gen("gen_xplane.py", "--size", "400KB", "--out", cls.xp)

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__()

    def test_same_with_and_without_the_worker(self):
        for path in (self.json, self.xp):
            with self.subTest(trace=os.path.basename(path)):
                with env_var("PROFSUM_THREADS", "0"):
                    one = stored(path)
                two = stored(path)
                self.assertGreaterEqual(one["n"], 16384)      # the jobs go to the worker
                self.assertEqual(two, one)
                self.assertGreater(len(one["profsum_agg_step_wall"]), 0)
                self.assertGreater(len(one["profsum_agg_device"]), 0)
                self.assertGreater(len(one["profsum_agg_xla_util"]) + len(one["profsum_agg_breakdown"]), 0)

    def test_rounded_texts_reference_breakdown_beside(self):
        """Time texts of seven decimals: the reference's per-track
        breakdown is walked on the worker beside the event pass (aggRefStart):
        the same tables and document as in one thread, duration_ref set."""
        parts = ['{"ph":"M","name":"process_name","pid":1,"args":{"name":"/device:TPU:0"}}',
                 '{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"XLA Ops"}}']
        for i in range(30000):
            parts.append('{"ph":"X","pid":1,"tid":2,"name":"fusion.%d","ts":%d,"dur":5.0000004}' % (i % 5, i * 10))
            parts.append('{"ph":"X","pid":1,"tid":2,"name":"all-reduce.1","ts":%d,"dur":2.0000003}' % (i * 10 + 1))
        parts += ['{"ph":"X","pid":2,"tid":1,"name":"host_op","ts":%d.1234567,"dur":3.3333333}' % (i * 10)
                  for i in range(10000)]
        path = self.td.write("rounded.json", '{"traceEvents":[' + ",".join(parts) + "]}")
        with env_var("PROFSUM_THREADS", "0"):
            one = stored(path)
        two = stored(path)
        self.assertGreater(one["n"], 65536)     # past the small-trace rule
        self.assertEqual(two, one)
        refs = [r for r in one["profsum_agg_breakdown"] if r[0] == "exclusive_per_track"]
        self.assertEqual(len(refs), 6)
        self.assertTrue(all(r[3] is not None for r in refs), refs)

    def test_imports_side_by_side_leave_no_thread(self):
        """Four imports at once, each with its own worker: the same tables,
        and the process has its threads of before once they are done."""
        before = side_threads()
        ref = stored(self.xp)
        got = [None] * 4

        def run(i):
            got[i] = stored(self.xp)
        ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for g in got:
            self.assertEqual(g, ref)
        self.assertEqual(wait_for_task_count(before), before)

    def test_tracks_ordered_in_pieces(self):
        """Events of 16 tracks shuffled together: the tracks are put in
        order in pieces that the worker and the reading thread share
        (orderTracks): the same tables as one thread, and the breakdown
        made by construction (each parent [t, t+10) holds two children of
        2 and 3 us)."""
        import random
        rng = random.Random(5)
        evs = []
        tracks, parents = 16, 400
        for tr in range(tracks):
            for i in range(parents):
                t = 1000 + 20 * i
                evs.append((tr, "fusion.%d" % tr, "%d.0" % t, "10.0"))
                evs.append((tr, "copy.%d" % tr, "%d.5" % (t + 1), "2.0"))
                evs.append((tr, "all-reduce.%d" % tr, "%d.0" % (t + 5), "3.0"))
        rng.shuffle(evs)
        parts = ['{"ph":"M","name":"process_name","pid":%d,"args":{"name":"/device:TPU:%d"}}' % (p, p)
                 for p in range(1, 5)]
        parts += ['{"ph":"X","pid":%d,"tid":%d,"name":"%s","ts":%s,"dur":%s}'
                  % (1 + tr // 4, tr % 4, name, ts, dur) for tr, name, ts, dur in evs]
        path = self.td.write("shuffled.json", '{"traceEvents":[' + ",".join(parts) + "]}")
        with env_var("PROFSUM_THREADS", "0"):
            one = stored(path)
        two = stored(path)
        self.assertEqual(one["n"], tracks * parents * 3)
        self.assertGreaterEqual(one["n"], 16384)      # the worker takes pieces
        self.assertEqual(two, one)
        rows = {r[1]: r[2] for r in one["profsum_agg_breakdown"] if r[0] == "exclusive_per_track"}
        self.assertAlmostEqual(rows["total"], tracks * parents * 10.0, places=6)
        self.assertAlmostEqual(rows["communication"], tracks * parents * 3.0, places=6)

    def test_exact_nesting_check_in_pieces(self):
        """When the doubles nest events otherwise than their exact times,
        the check on exact times (the float_nesting facts and diagnostic)
        is cut into pieces of tracks that the worker and the calling thread
        share: the same facts as one thread, and the count made by
        construction.  Each track holds pairs at epoch-scale times: a
        parent [X.0, +1.0) and a child [X.9, +0.1) that its doubles move to
        the parent's end (docs/summary.md, "Decisions in doubles")."""
        tracks, pairs = 12, 800
        parts = []
        for tr in range(tracks):
            for i in range(pairs):
                base = 1700000000000000 + 4 * i
                for name, ts, dur in (("fusion.%d" % tr, "%d.0" % base, "1.0"),
                                      ("copy.%d" % tr, "%d.9" % base, "0.1")):
                    parts.append('{"ph":"X","pid":%d,"tid":%d,"name":"%s","ts":%s,"dur":%s}'
                                 % (1 + tr // 4, tr % 4, name, ts, dur))
        path = self.td.write("flips.json", '{"traceEvents":[' + ",".join(parts) + "]}")

        with env_var("PROFSUM_THREADS", "0"):
            one = float_facts(path)
        two = float_facts(path)
        self.assertEqual(two, one)
        self.assertEqual(one["float_nesting_events"], tracks * pairs)
        self.assertAlmostEqual(one["exact_breakdown_total"], tracks * pairs * 1.0, places=6)
        self.assertAlmostEqual(one["float_nesting_moved"], tracks * pairs * 0.1, places=6)
        self.assertEqual(len(one["diag"]), 1)
        self.assertIn("%d events' exclusive times differ" % (tracks * pairs), one["diag"][0][0])

    def test_one_large_track_merged_in_halves(self):
        """One track of 140,000 events written as two runs, each in time
        order (the parents, then their children), and a second track
        interleaved with it event by event, 280,000 events in all: the
        events are grouped by track in two halves (the worker places the
        second from the end), and each level of the large track's merge is
        made in two halves of its positions, the second starting mid-pair.
        Each parent [X.0, +1.0) at epoch scale holds a child [X.9, +0.1)
        that the doubles move to its end, so the merge's comparisons decide
        whether the exact check runs: the same tables, facts and
        diagnostic as one thread, and the count made by construction."""
        pairs = 70000
        a_par = ['{"ph":"X","pid":1,"tid":1,"name":"fusion","ts":%d.0,"dur":1.0}'
                 % (1700000000000000 + 4 * i) for i in range(pairs)]
        a_kid = ['{"ph":"X","pid":1,"tid":1,"name":"copy","ts":%d.9,"dur":0.1}'
                 % (1700000000000000 + 4 * i) for i in range(pairs)]
        b = ['{"ph":"X","pid":1,"tid":2,"name":"step","ts":%d.0,"dur":1.0}'
             % (1700000000000000 + 2 * i) for i in range(2 * pairs)]
        a = a_par + a_kid
        parts = [x for ab in zip(a, b) for x in ab]
        path = self.td.write("halves.json", '{"traceEvents":[' + ",".join(parts) + "]}")

        one, one_all = facts_alike(self, path)
        self.assertEqual(one_all["n"], 4 * pairs)
        self.assertEqual(one["float_nesting_events"], pairs)
        self.assertAlmostEqual(one["float_nesting_moved"], pairs * 0.1, places=4)
        self.assertEqual(len(one["diag"]), 1)
        self.assertIn("%d events' exclusive times differ" % pairs, one["diag"][0][0])

    def test_one_busy_track_checked_in_slices(self):
        """One track of 264,133 events (a busy thread): a span over all of
        it, groups of 1,000 pairs under it, and in each pair a parent
        [X.0, +1.0) at epoch scale and a child [X.9, +0.1) that the doubles
        move to the parent's end.  The exact nesting check cuts the track
        into slices swept from an empty stack and joined in order (the span
        and a group are open at every cut), so its facts are those of one
        sweep: every parent and every group differs (the doubles give the
        group the children too), the exact per-track total is the span's
        dur.  With two events whose doubles tie and order them otherwise
        than their exact starts, the slice that holds them is out of exact
        order and the track is checked whole: two events more differ (the
        longer holds the other in the doubles, and so the span's children
        differ)."""
        for (pairs, group), tie in itertools.product([(132000, 1000), (150, 10)], (0, 1)):
            # (the small one: in slices in the sanitizer builds, which cut
            # from 64 events on)
            groups = pairs // group
            path = self.td.write("slices%d_%d.json" % (pairs, tie), busy_track(pairs, group, tie))
            one, one_all = facts_alike(self, path)
            self.assertEqual(one_all["n"], 1 + groups + 2 * pairs + 2 * tie)
            self.assertEqual(one["float_nesting_events"], pairs + groups + 2 * tie)
            self.assertAlmostEqual(one["exact_breakdown_total"], 4 * pairs + 4, places=6)
            self.assertEqual(len(one["diag"]), 1)
            self.assertIn("%d events' exclusive times differ" % (pairs + groups + 2 * tie), one["diag"][0][0])

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_exact_slices_out_of_memory(self):
        """The check in slices and its join, and the whole-track check it
        falls back to, with every allocation of the import made to fail in
        turn (the ASan build cuts the slices from 64 events on): an error
        each time, nothing leaked."""
        small0 = self.td.write("small0.json", busy_track(150, 10, 0))
        small1 = self.td.write("small1.json", busy_track(150, 10, 1))
        run_oom_sql(self, ["SELECT profsum_import('%s','x')" % small0,
                           "SELECT profsum_import('%s','y')" % small1])

    def test_tracks_swept_in_pieces(self):
        """Ten tracks, 300,000 events written round robin a thousand at a
        time: the §2 sweep runs in pieces of tracks, all but the first on
        the worker, each into entries of its own appended in order.  The
        same tables and document as one thread; the run_ids (whose groups
        meet at the pieces' edges) as the reference counts them; and the
        exclusive times, among them parents of 10 ms with a 1 ms child
        (9 ms: more than 2^32 ps, kept in a map that the pieces merge),
        made by construction."""
        from test_record_side import expected_run_ids
        devices, parents = 8, 12000
        events, parts = [], []
        for d in range(devices):
            parts.append('{"ph":"M","name":"process_name","pid":%d,"args":{"name":"/device:TPU:%d"}}' % (d + 1, d))
            parts.append('{"ph":"M","name":"thread_name","pid":%d,"tid":1,"args":{"name":"XLA Ops"}}' % (d + 1))
        per = []
        for d in range(devices + 2):
            evs = []
            pid, tid = (d + 1, 1) if d < devices else (20, d)
            for i in range(parents if d < devices else 6000):
                t = 1000 + 20 * i
                rid = "r%d" % ((i // 3000 + d) % 4)
                name = "fusion" if d < devices else "host_fn"
                evs.append({"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": t, "dur": 10,
                            "args": {"run_id": rid}})
                evs.append({"ph": "X", "pid": pid, "tid": tid, "name": "copy", "ts": t + 1, "dur": 2,
                            "args": {"run_id": rid}})
                evs.append({"ph": "X", "pid": pid, "tid": tid, "name": "all-reduce", "ts": t + 5, "dur": 3})
            t = 1000 + 20 * parents + 100
            evs.append({"ph": "X", "pid": pid, "tid": tid, "name": "fusion.big", "ts": t, "dur": 10000})
            evs.append({"ph": "X", "pid": pid, "tid": tid, "name": "copy.big", "ts": t + 1000, "dur": 1000})
            per.append(evs)
        while any(per):
            for evs in per:
                chunk, evs[:] = evs[:1000], evs[1000:]
                events.extend(chunk)
        parts += [json.dumps(e, separators=(",", ":")) for e in events]
        path = self.td.write("pieces.json", '{"traceEvents":[' + ",".join(parts) + "]}")
        with env_var("PROFSUM_THREADS", "0"):
            one = stored(path)
        two = stored(path)
        self.assertEqual(one["n"], len(events))
        self.assertGreaterEqual(len(events), 262144)
        self.assertEqual(two, one)
        db = connect()
        db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchone()
        got = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
        ops = {r[0]: (r[1], r[2]) for r in db.execute(
            "SELECT name, count, exclusive_duration FROM profsum_agg_op")}
        db.close()
        self.assertEqual(got["trace_provenance"]["run_ids"], expected_run_ids(events))
        self.assertEqual(ops["fusion.big"][0], devices)
        self.assertAlmostEqual(ops["fusion.big"][1], devices * 9000.0, places=3)
        self.assertEqual(ops["fusion"][0], devices * parents)
        self.assertAlmostEqual(ops["fusion"][1], devices * parents * 5.0, places=2)

    def test_record_blocks_mapped_ahead(self):
        """A trace of more than a few blocks of event records (65,536 each):
        from the second block on, the next block is allocated ahead and its
        pages mapped on the worker while the block before fills.  The
        blocks are taken (profsum_debug counts them), and the tables are
        those of an import without threads, which allocates every block
        itself."""
        path = os.path.join(self.td.path, "blocks.xplane.pb")
        gen("gen_xplane.py", "--size", "4MB", "--out", path)
        # (the count lives in the library: this connection keeps it loaded
        # while the others open and close)
        keep = connect()
        self.addCleanup(keep.close)

        def ahead():
            dbg = keep.execute("SELECT profsum_debug()").fetchone()[0]
            return int(dbg.split("record blocks mapped ahead: ")[1].split()[0])
        with env_var("PROFSUM_THREADS", "0"):
            before = ahead()
            one = stored(path)
            self.assertEqual(ahead(), before)              # no thread: none ahead
        self.assertGreaterEqual(one["n"], 3 * 65536)
        two = stored(path)
        # blocks 2, 3, ... came ahead (block 1 is the one that asks first)
        self.assertGreaterEqual(ahead() - before, one["n"] // 65536 - 1)
        self.assertEqual(two, one)

    @unittest.skipUnless(os.path.exists(CHUNK_SO), "build/chunk/profsum.so not built (make test builds it)")
    def test_xplane_insights_applied_by_either_side(self):
        """The insights' per-op records of an XPlane's batches are applied
        in order by whichever side of the reader's pipe gets to a batch
        first.  build/chunk has the decoding thread apply every batch it
        can as it hands it over (the engine's thread takes the others), so
        that this test runs that side's apply on any machine: its XLA
        tables and document are those of an import without threads, and
        the decoding thread did apply batches (profsum_debug counts them)."""
        path = os.path.join(self.td.path, "ins.xplane.pb")
        gen("gen_xplane.py", "--size", "2MB", "--out", path)
        keep = sqlite3.connect(":memory:")
        keep.enable_load_extension(True)
        keep.load_extension(CHUNK_SO)
        self.addCleanup(keep.close)

        def by_producer():
            dbg = keep.execute("SELECT profsum_debug()").fetchone()[0]
            return int(dbg.split("applied by the decoding thread: ")[1].split()[0])
        with env_var("PROFSUM_THREADS", "0"):
            one = stored(path)
        before = by_producer()
        two = stored(path, CHUNK_SO)
        self.assertGreater(by_producer(), before)
        self.assertGreater(len(one["profsum_agg_xla_util"]), 0)
        self.assertEqual(two, one)

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_out_of_memory_with_the_worker(self):
        """Every 53rd (JSON) or 97th (XPlane) allocation of an import made to
        fail in turn, under ASan: an error or the same result each time."""
        run_oom_sql(self, ["SELECT profsum_import('%s','x')" % self.json], step=53)
        run_oom_sql(self, ["SELECT profsum_import('%s','x')" % self.xp], step=97)


if __name__ == "__main__":
    unittest.main()
