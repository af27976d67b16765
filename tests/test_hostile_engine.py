"""Hostile inputs for the summary engine (ext/summary_engine.c) and the
document builder (ext/summary_doc.c): deep and many region paths, many
devices, huge timestamps, deeply nested device ops, and lookups that fail
for a reason other than a missing trace.

Imports that crashed (a read of freed memory) or ran for minutes before the
fixes run in a subprocess with a timeout, so that such a build fails the
test instead of taking the runner down.  Memory is checked with SQLite's
own counters (`build/sqlrun -m`, as tests/test_memory.py) or a heap limit
(PRAGMA hard_heap_limit), never by wall-clock figures.  The reproducer
files (PROFSUM_REPRO, default: the folder "repro" beside the corpus) are
read when they are there; every test also stands on a generated input.
"""
import json
import os
import random
import sqlite3
import subprocess
import sys
import unittest

from util import REPRO, SO, SQLRUN, TempDir, connect, import_memory

# Runs in a subprocess: imports argv[1] (with a heap limit of argv[2] bytes
# when not 0) and prints the regions, the ops and the breakdown as JSON.
CHILD = r"""
import json, sqlite3, sys
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(sys.argv[3])
if int(sys.argv[2]):
    db.execute("PRAGMA hard_heap_limit=%d" % int(sys.argv[2]))
try:
    db.execute("SELECT profsum_import(?, 't')", (sys.argv[1],)).fetchone()
except sqlite3.Error as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))
    sys.exit(0)
out = {
  "regions": db.execute("SELECT path, depth, count, inclusive_duration, exclusive_duration "
                        "FROM profsum_agg_region").fetchall(),
  "ops": db.execute("SELECT name, count, exclusive_duration FROM profsum_agg_op").fetchall(),
}
print(json.dumps(out))
"""


def import_in_child(path, heap_limit=0, timeout=120):
    """Import path in a fresh Python process (heap_limit: PRAGMA
    hard_heap_limit, 0 none); the decoded JSON it prints.  A crash or a
    timeout fails the calling test."""
    p = subprocess.run([sys.executable, "-c", CHILD, path, str(heap_limit), SO],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("the import's process ended with %d: %s" % (p.returncode, p.stderr[-2000:]))
    return json.loads(p.stdout)


def device_trace(ops):
    """A one-device trace: ops is a list of (name, tf_op or None, ts, dur)
    in µs on the device's "XLA Ops" line."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}}]
    for name, tf, ts, dur in ops:
        e = {"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
        if tf is not None:
            e["args"] = {"tf_op": tf}
        ev.append(e)
    return {"traceEvents": ev}


def model_regions(events):
    """§4.9 for events whose tf_op pieces are plain (no wrappers, nothing
    blacklisted, no blank piece): events is a list of (tf_op, exclusive µs).
    The paths are texts: joined by "=>", keyed by their text, a path's
    parent is its text before the last "=>"."""
    buckets = {}
    for tf, x in events:
        parts = [p for p in tf.split("/") if p.strip()]
        for d in range(1, len(parts) + 1):
            path = "=>".join(parts[:d])
            b = buckets.setdefault(path, [d, 0, 0.0, 0.0])
            b[1] += 1
            b[2] += x
            if d == len(parts):
                b[3] += x
    children = {}
    for p in buckets:
        i = p.rfind("=>")
        if i >= 0 and p[:i] in buckets:
            children.setdefault(p[:i], []).append(p)
    kept = {}
    for p, b in buckets.items():
        ch = children.get(p, [])
        if b[0] > 1 and len(ch) == 1:
            a, c = b[2], buckets[ch[0]][2]
            if abs(a - c) <= max(1e-9 * max(abs(a), abs(c)), 1e-6):
                continue
        kept[p] = (b[0], b[1], b[2], b[3])
    return kept


def as_regions(rows):
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def jax_stack_trace(n_ops=3000, depth=12, seed=5):
    """n_ops device ops, each with its own `depth`-level JAX-like name stack
    (about 830 KB): every op's parts are new text, so the string pool grows
    many times while region paths are made."""
    rnd = random.Random(seed)
    ops, evs, t = [], [], 0
    for i in range(n_ops):
        parts = ["jit(train_step_%d)" % (i % 7)] + [
            "layer_%06d_%s" % (rnd.randrange(10 ** 6), "x" * rnd.randrange(4, 24)) for _ in range(depth - 1)]
        tf = "/".join(parts)
        dur = 1 + i % 5
        ops.append(("fusion.%d" % i, tf, t, dur))
        # the model sees the canonical first piece (jit(...) unwrapped)
        evs.append(("/".join(["train_step_%d" % (i % 7)] + parts[1:]), dur))
        t += dur + 1
    return device_trace(ops), evs


class RegionPaths(unittest.TestCase):
    """Region paths: each op's parts point into the engine's string pool
    while the paths are interned; the pool must never move a text (a read
    of freed memory: segfaults, wrong and spurious regions).  And the paths
    of every prefix of an n-part tf_op are not all stored as text (O(n²))."""

    def test_pool_growth_during_region_paths(self):
        trace, evs = jax_stack_trace()
        with TempDir() as td:
            path = td.write("jax.json", trace)
            self.assertGreater(os.path.getsize(path), 700000)
            got = import_in_child(path)
        self.assertNotIn("error", got)
        self.assertEqual(as_regions(got["regions"]), model_regions(evs))

    def test_repro_uaf_min(self):
        p = os.path.join(REPRO, "uaf_min.json")
        if not os.path.exists(p):
            self.skipTest("no uaf_min.json in %s" % REPRO)
        with open(p) as f:
            doc = json.load(f)
        evs = [(e["args"]["tf_op"], e["dur"]) for e in doc["traceEvents"] if e.get("ph") == "X"]
        got = import_in_child(p)
        self.assertEqual(as_regions(got["regions"]), model_regions(evs))

    def check_deep(self, n, path):
        # one op: the root and the leaf stay, every path between has one child
        # with the same inclusive time (pruned)
        got = import_in_child(path, heap_limit=64 << 20)
        self.assertNotIn("error", got)
        leaf = "=>".join("p%d" % i for i in range(n))
        self.assertEqual(as_regions(got["regions"]),
                         {"p0": (1, 1, 10.0, 0.0), leaf: (n, 1, 10.0, 10.0)})

    def test_deep_tf_op_in_bounded_memory(self):
        # 20,000 parts: every prefix as text would be about 1.3 GB (the
        # import failed at 1.06 GB for 129 KB of input); within 64 MB now
        n = 20000
        with TempDir() as td:
            path = td.write("deep.json", device_trace(
                [("fusion", "/".join("p%d" % i for i in range(n)), 0, 10)]))
            self.check_deep(n, path)

    def test_repro_tfdeep_5000(self):
        p = os.path.join(REPRO, "tfdeep_5000.json")
        if not os.path.exists(p):
            self.skipTest("no tfdeep_5000.json in %s" % REPRO)
        self.check_deep(5000, p)

    def test_many_deep_ops_share_prefixes(self):
        # 300 ops under one 2,000-part prefix, branching at its end: the
        # shared prefix is one chain of nodes, each op adds its leaf
        base = "/".join("s%d" % i for i in range(2000))
        ops, evs = [], []
        for i in range(300):
            tf = base + "/leaf%d/op%d" % (i % 10, i)
            ops.append(("dot.%d" % i, tf, 3 * i, 2))
            evs.append((tf, 2.0))
        with TempDir() as td:
            got = import_in_child(td.write("share.json", device_trace(ops)), heap_limit=64 << 20)
        self.assertNotIn("error", got)
        self.assertEqual(as_regions(got["regions"]), model_regions(evs))

    def test_regions_match_the_text_rules(self):
        # paths are keyed by their text: a part may hold "=>" (a tf_op piece
        # "a=>b"), so ["a=>b", "c"] and ["a", "b", "c"] make the same paths,
        # and "a=>b" is a child of "a"; parts ending in "=" or starting
        # with ">" do not run into the separator
        rnd = random.Random(11)
        pieces = ["a", "b", "c", "a=>b", "b=>c", "x=", ">y", "a==>b", "q"]
        ops, evs, t = [], [], 0
        for i in range(400):
            tf = "/".join(rnd.choice(pieces) for _ in range(rnd.randrange(1, 6)))
            dur = rnd.randrange(1, 9)
            ops.append(("op%d" % (i % 13), tf, t, dur))
            evs.append((tf, float(dur)))
            t += dur + rnd.randrange(0, 2)
        with TempDir() as td:
            got = import_in_child(td.write("text.json", device_trace(ops)))
        self.assertNotIn("error", got)
        self.assertEqual(as_regions(got["regions"]), model_regions(evs))


class ManyDevices(unittest.TestCase):
    """The KPI pass walked every track for every device (80,000 device
    processes: about 30 s); it groups the tracks by device now."""

    def test_80k_devices_import_quickly(self):
        n = 80000
        parts = ['{"traceEvents":[']
        for p in range(n):
            parts.append('%s{"ph":"M","name":"process_name","pid":%d,"args":{"name":"/device:GPU:%d"}},'
                         '{"ph":"M","name":"thread_name","pid":%d,"tid":1,"args":{"name":"XLA Ops"}},'
                         '{"ph":"X","name":"fusion.%d","pid":%d,"tid":1,"ts":%d,"dur":2}'
                         % ("," if p else "", p, p, p, p % 7, p, p))
        parts.append("]}")
        script = ("import sqlite3, sys\n"
                  "db = sqlite3.connect(':memory:')\n"
                  "db.enable_load_extension(True)\n"
                  "db.load_extension(sys.argv[2])\n"
                  "db.execute(\"SELECT profsum_import(?, 't')\", (sys.argv[1],))\n"
                  "print(db.execute('SELECT count(*), sum(n_ops) FROM profsum_agg_device').fetchone())\n")
        with TempDir() as td:
            path = td.write("devices.json", "".join(parts))
            # linear: well under a second; the quadratic pass took about 30 s
            try:
                p = subprocess.run([sys.executable, "-c", script, path, SO], capture_output=True,
                                   text=True, timeout=10)
            except subprocess.TimeoutExpired:
                self.fail("importing %d one-track devices took more than 10 s" % n)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "(%d, %d)" % (n, n))

    def test_devices_with_many_tracks_each(self):
        # the busy union merges a device's tracks by a heap: 3 devices of
        # 400 streams each, the union and span as the sums say
        ev, spans = [], []
        for d in range(3):
            ev.append({"ph": "M", "name": "process_name", "pid": d, "args": {"name": "/device:GPU:%d" % d}})
            for s in range(400):
                ev.append({"ph": "M", "name": "thread_name", "pid": d, "tid": s,
                           "args": {"name": "Stream #%d" % s}})
                # stream s busy over [10 s, 10 s + 5) (µs); every other one
                # overlaps the next
                ev.append({"ph": "X", "name": "k", "pid": d, "tid": s, "ts": 10 * s, "dur": 5 + 6 * (s % 2)})
                if d == 0:
                    spans.append((10 * s, 10 * s + 5 + 6 * (s % 2)))
        with TempDir() as td:
            db = connect()
            db.execute("SELECT profsum_import(?, 't')", (td.write("s.json", {"traceEvents": ev}),))
            rows = db.execute("SELECT device, n_ops, busy_duration, span_duration FROM profsum_agg_device "
                              "ORDER BY device").fetchall()
            db.close()
        busy, lo, hi = 0, None, None
        for a, b in sorted(spans):
            if hi is None or a > hi:
                busy += 0 if hi is None else hi - lo
                lo, hi = a, b
            else:
                hi = max(hi, b)
        busy += hi - lo
        self.assertEqual(busy, 3001)
        self.assertEqual(rows, [("/device:GPU:%d" % d, 400, float(busy), 4001.0) for d in range(3)])


class Steps(unittest.TestCase):
    """The heavy step class's periodicity counted each difference against
    every other (quadratic: 400,000 alternating steps took 12 s to import
    and 19 s per summary); it sorts them now.  And a trace without steps
    made NULL + 0 (undefined behaviour, reported by clang's UBSan)."""

    def test_200k_alternating_steps(self):
        n = 200000
        out = ['{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"/device:TPU:0"}},'
               '{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"Steps"}}']
        t = 0
        for s in range(n):
            d = 100 if s % 2 else 300          # light and heavy steps, alternating
            out.append(',{"ph":"X","name":"%d","pid":1,"tid":2,"ts":%d,"dur":%d}' % (s, t, d))
            t += d + 1
        out.append("]}")
        script = ("import json, sqlite3, sys\n"
                  "db = sqlite3.connect(':memory:')\n"
                  "db.enable_load_extension(True)\n"
                  "db.load_extension(sys.argv[2])\n"
                  "db.execute(\"SELECT profsum_import(?, 't')\", (sys.argv[1],))\n"
                  "doc = json.loads(db.execute(\"SELECT profsum_summary_json('t')\").fetchone()[0])\n"
                  "print(json.dumps([(c['name'], c['count'], c['periodicity']) for c in doc['step_time']['classes']]))\n")
        with TempDir() as td:
            path = td.write("steps.json", "".join(out))
            try:
                p = subprocess.run([sys.executable, "-c", script, path, SO], capture_output=True,
                                   text=True, timeout=8)
            except subprocess.TimeoutExpired:
                self.fail("importing and summarizing %d steps took more than 8 s" % n)
        self.assertEqual(p.returncode, 0, p.stderr)
        # steps 0..4 are warmup; heavy: the even steps from 6, every 2
        self.assertEqual(json.loads(p.stdout), [["light", 99998, None], ["heavy", 99997, 2]])

    def test_periodicity_ties(self):
        # heavy steps 10, 13, 16, 21, 26, 28: differences 3, 3, 5, 5, 2: the
        # most frequent, ties to the smallest
        def classes(steps, heavy):
            ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
                  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Steps"}}]
            t = 0
            for s in steps:
                d = 300 if s in heavy else 100
                ev.append({"ph": "X", "name": str(s), "pid": 1, "tid": 2, "ts": t, "dur": d})
                t += d + 1
            with TempDir() as td:
                db = connect()
                db.execute("SELECT profsum_import(?, 't', '{\"warmup_steps\": 0}')",
                           (td.write("p.json", {"traceEvents": ev}),))
                doc = json.loads(db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
                db.close()
            return [(c["name"], c["count"], c["periodicity"]) for c in doc["step_time"]["classes"]]
        heavy = [10, 13, 16, 21, 26, 28]
        light = [11, 12, 14, 15, 17, 18, 19, 20]
        self.assertEqual(classes(sorted(heavy + light), set(heavy)),
                         [("light", 8, None), ("heavy", 6, 3)])

    def test_summary_without_steps(self):
        # no steps: the steady steps' arrays are none (was NULL + 0, which
        # clang's UBSan reports; run this file against a UBSan build)
        with TempDir() as td:
            db = connect()
            db.execute("SELECT profsum_import(?, 't')",
                       (td.write("nosteps.json", device_trace([("fusion", None, 0, 5)])),))
            doc = json.loads(db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
            db.close()
        self.assertEqual(doc["step_time"]["steady_state_steps"]["count"], 0)
        self.assertEqual(doc["step_time"]["classes"], [])


class HugeTimes(unittest.TestCase):
    """Timestamps near 1e28 µs (the reader keeps them exact): the bound
    under which the doubles decide passed INT64_MAX and was converted
    anyway (undefined; on x86-64 it became INT64_MIN, so that the exact
    times decided every comparison)."""

    def test_nesting_decided_by_the_doubles(self):
        # at 1e28 µs an ulp is 2.2e12 µs: the parent's end (dur 2e12 µs)
        # rounds one ulp up, the child's (dur 1 µs) to its start, so the
        # child nests in the parent as the reference's doubles have it
        t = 1e28
        trace = device_trace([("parent", None, t, 2e12), ("child", None, t, 1)])
        with TempDir() as td:
            got = import_in_child(td.write("huge.json", trace))
        self.assertNotIn("error", got)
        ops = {r[0]: (r[1], r[2]) for r in got["ops"]}
        self.assertEqual(ops, {"parent": (1, 2e12 - 1), "child": (1, 1.0)})

    def test_repro_float_cast(self):
        p = os.path.join(REPRO, "ubsan_float_cast.trace.json")
        with TempDir() as td:
            if not os.path.exists(p):
                p = td.write("cast.json", '{"traceEvents":[{"ph":"X","name":"op","pid":1,"tid":1,"ts":-1e30,"dur":1},'
                                          '{"ph":"X","name":"op","pid":1,"tid":1,"ts":1,"dur":-1e30}]}')
            db = connect()
            db.execute("SELECT profsum_import(?, 't')", (p,))
            self.assertEqual(db.execute("SELECT num_complete_events, profile_start_ts FROM profsum_trace").fetchone(),
                             (1, -1e30))
            doc = json.loads(db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
            db.close()
        self.assertEqual(doc["step_time"]["all_steps"]["count"], 0)


class LookupErrors(unittest.TestCase):
    """The trace lookup reported every failure as "no trace with label":
    a database locked by another connection, an unreadable file."""

    def test_locked_database_is_reported_as_locked(self):
        with TempDir() as td:
            dbpath = os.path.join(td.path, "locked.db")
            trace = td.write("t.json", device_trace([("fusion", "a/b", 0, 5)]))
            db = connect(dbpath)
            db.execute("SELECT profsum_import(?, 'x')", (trace,))
            # a rollback journal (a first import makes the database WAL,
            # where readers are not blocked): an exclusive lock then
            # blocks every reader
            self.assertEqual(db.execute("PRAGMA journal_mode=DELETE").fetchone()[0], "delete")
            db.close()
            holder = sqlite3.connect(dbpath, timeout=0, isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
            try:
                for fresh in (True, False):
                    # a fresh connection (its prepare reads the schema) and
                    # one whose schema is loaded (its step fails)
                    db = sqlite3.connect(dbpath, timeout=0)
                    db.enable_load_extension(True)
                    db.load_extension(SO)
                    if not fresh:
                        holder.execute("COMMIT")
                        db.execute("SELECT count(*) FROM profsum_trace").fetchone()
                        holder.execute("BEGIN EXCLUSIVE")
                    for sql in ("SELECT profsum_summary_json('x')", "SELECT profsum_summary_json(1)",
                                "SELECT profsum_report_md('x')"):
                        with self.assertRaises(sqlite3.OperationalError) as cm:
                            db.execute(sql).fetchone()
                        msg = str(cm.exception)
                        self.assertIn("database is locked", msg, (fresh, sql))
                        self.assertNotIn("no trace", msg, (fresh, sql))
                        self.assertTrue(msg.startswith("profsum_"), msg)
                    db.close()
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            # unlocked: the same calls work, and a missing label is still "no trace"
            db = connect(dbpath)
            self.assertTrue(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
            with self.assertRaises(sqlite3.OperationalError) as cm:
                db.execute("SELECT profsum_summary_json('nope')").fetchone()
            self.assertIn("no trace with label 'nope'", str(cm.exception))
            db.close()

    def test_empty_database_still_says_nothing_imported(self):
        db = connect()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            db.execute("SELECT profsum_summary_json('x')").fetchone()
        self.assertIn("no trace with label 'x' (no trace imported in schema 'main')", str(cm.exception))
        db.close()


def nested_device_ops(n):
    """n device ops on one line, each inside the previous one (n deep)."""
    out = ['{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"/device:GPU:0"}},'
           '{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"XLA Ops"}}']
    for i in range(n):
        out.append(',{"ph":"X","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":%d}' % (i % 5, i, 2 * (n - i) + 1))
    out.append("]}")
    return "".join(out)


class NestedDeviceOpsMemory(unittest.TestCase):
    """Device ops nested in each other kept, per op with a child, a hash
    entry of the doubles' exclusive time (40 bytes at half load, rehashed by
    doubling) and three stacks as deep as the nesting: about 230 bytes per
    event.  Now 16 bytes per op with a child (in processing order: the
    doubles' exclusive time and the exact one) and a 12-byte stack: 45.8
    bytes per event measured with the 16-byte record and one thread
    (docs/summary.md)."""

    def test_nested_device_ops(self):
        # 2^17 and 2^18 events: whole blocks of event records, so that the
        # margin is per event
        n1, n2 = 1 << 17, 1 << 18
        with TempDir() as td:
            s1, p1 = import_memory(td.write("n1.json", nested_device_ops(n1)))
            s2, p2 = import_memory(td.write("n2.json", nested_device_ops(n2)))
        marginal = ((p2 - s2) - (p1 - s1)) / (n2 - n1)
        self.assertLessEqual(marginal, 48, "%.1f B/event" % marginal)

    def test_out_of_memory_names_the_function_and_the_file(self):
        # heap limits that stop the import while it reads, orders or
        # aggregates the events: each error says where (it was a bare "out
        # of memory")
        phases = set()
        if not os.path.exists(SQLRUN):
            raise AssertionError("build/sqlrun is missing: run `make test` (it builds it)")
        with TempDir() as td:
            path = td.write("n.json", nested_device_ops(1 << 16))
            tiny = td.write("tiny.json", device_trace([("a", None, 0, 1)]))
            # (the limits start above what the connection holds once the
            # schema's views are parsed, so that they stop the engine)
            for limit in (2000000, 3000000, 4000000, 5000000):
                # a first import creates the schema (out of memory there is
                # the importer's, not the engine's)
                p = subprocess.run([SQLRUN, "SELECT profsum_import('%s')" % tiny,
                                    "PRAGMA hard_heap_limit=%d" % limit,
                                    "SELECT profsum_import('%s')" % path], capture_output=True,
                                   text=True, timeout=120)
                if p.returncode == 0:
                    continue
                self.assertIn("profsum_import: '%s': out of memory " % path, p.stderr)
                phases.add(p.stderr.split("out of memory ")[1].split(" (")[0])
        self.assertGreaterEqual(len(phases), 2, phases)


if __name__ == "__main__":
    unittest.main()
