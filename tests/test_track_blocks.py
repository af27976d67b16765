"""The track pass keeps its per-event memory in blocks (ext/track.c): no
single allocation grows with the trace, so the two-pass columns of
trace_events and profsum_diagnostics are no longer stopped by SQLite's
limit of 2 GiB per allocation (one array of 80-byte records stopped near 25
million events, with a bare "out of memory").  And when memory does run
out, the message names the function and the file.

build/chunk/profsum.so (make build/chunk/profsum.so) is the same code with
blocks of 8 records and sorted runs of 8 elements, so that small traces
cross every block edge and merge hundreds of runs: it must give what the
default build gives.  The out-of-memory messages are read from the C
driver (build/sqlrun) with PRAGMA hard_heap_limit (a process-wide limit:
not in this process).
"""
import ctypes
import ctypes.util
import json
import os
import re
import random
import sqlite3
import subprocess
import unittest

from util import ROOT, SO, TempDir

CHUNK_SO = os.path.join(ROOT, "build", "chunk", "profsum.so")
SQLRUN = os.path.join(ROOT, "build", "sqlrun")

TWO_PASS = ("SELECT idx, ph, dur, dur_ps, depth, parent_idx, excl, excl_ps, process_name, "
            "thread_name FROM trace_events(?)")
DIAG = "SELECT * FROM profsum_diagnostics(?)"


def load(so):
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(so)
    return db


def random_trace(seed, n):
    """X, B, E and M events on a few tracks: nesting, partial overlaps,
    zero durations, unmatched and mismatched B/E, sub-ns times."""
    rnd = random.Random(seed)
    ev = []
    for _ in range(n):
        pid, tid = rnd.randint(1, 3), rnd.randint(1, 3)
        ts = rnd.randint(0, 300) * rnd.choice([1, 0.5, 0.001, 1.0000005])
        k = rnd.random()
        name = "n%d" % rnd.randint(0, 4)
        if k < 0.55:
            ev.append({"ph": "X", "pid": pid, "tid": tid, "ts": ts, "name": name,
                       "dur": rnd.choice([0, 1, 2.5, 10, 50, 0.0004, 100, 400])})
        elif k < 0.75:
            ev.append({"ph": "B", "pid": pid, "tid": tid, "ts": ts, "name": name})
        elif k < 0.95:
            ev.append({"ph": "E", "pid": pid, "tid": tid, "ts": ts, "name": name})
        else:
            ev.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                       "args": {"name": "t%d" % tid}})
    return {"traceEvents": ev}


def staircase(n):
    """n slices on one thread, each inside the one before (depth n-1), then
    n siblings: the open-slice stack crosses many blocks."""
    ev = [{"ph": "X", "pid": 1, "tid": 1, "ts": i, "dur": 2 * n - 2 * i, "name": "s"} for i in range(n)]
    ev += [{"ph": "X", "pid": 1, "tid": 2, "ts": 3 * i, "dur": 2, "name": "t"} for i in range(n)]
    ev += [{"ph": "B", "pid": 2, "tid": 1, "ts": i, "name": "b"} for i in range(n)]
    ev += [{"ph": "E", "pid": 2, "tid": 1, "ts": 3 * n - i, "name": "b"} for i in range(n)]
    return {"traceEvents": ev}


def largest_allocation(db, sql, args):
    """The largest single allocation SQLite was asked for while sql ran
    (sqlite3_status(SQLITE_STATUS_MALLOC_SIZE)), in the library this
    process's sqlite3 module uses."""
    lib = ctypes.CDLL(ctypes.util.find_library("sqlite3") or "libsqlite3.so.0")
    cur, high = ctypes.c_int(), ctypes.c_int()
    lib.sqlite3_status(5, ctypes.byref(cur), ctypes.byref(high), 1)     # reset
    db.execute(sql, args).fetchall()
    lib.sqlite3_status(5, ctypes.byref(cur), ctypes.byref(high), 0)
    return high.value


@unittest.skipUnless(os.path.exists(CHUNK_SO), "build/chunk/profsum.so not built (make build/chunk/profsum.so)")
class SmallBlocksTest(unittest.TestCase):
    def test_same_results_as_the_default_build(self):
        big, small = load(SO), load(CHUNK_SO)
        with TempDir() as td:
            cases = [("r%d" % s, random_trace(s, [1, 7, 8, 9, 300, 2000][s % 6])) for s in range(18)]
            cases.append(("stairs", staircase(700)))
            for name, doc in cases:
                path = td.write(name + ".json", doc)
                for sql in (TWO_PASS, DIAG):
                    with self.subTest(trace=name, sql=sql[:40]):
                        want = big.execute(sql, (path,)).fetchall()
                        self.assertEqual(small.execute(sql, (path,)).fetchall(), want)
            # the staircase really nests: depth 699, every slice's parent the one before
            path = os.path.join(td.path, "stairs.json")
            self.assertEqual(big.execute("SELECT max(depth), sum(excl_ps) FROM trace_events(?) "
                                         "WHERE tid=1 AND pid=1", (path,)).fetchone(),
                             (699, 700 * 2 * 10 ** 6))

    def test_no_allocation_grows_with_the_trace(self):
        db = load(CHUNK_SO)
        with TempDir() as td:
            sizes = []
            for n in (5000, 20000):
                path = td.write("s%d.json" % n, staircase(n // 4))
                sizes.append(largest_allocation(db, "SELECT sum(excl), sum(dur) FROM trace_events(?)", (path,)))
            self.assertEqual(sizes[0], sizes[1])
            self.assertLess(sizes[1], 1 << 20)


@unittest.skipUnless(os.path.exists(SQLRUN), "build/sqlrun not built")
class OutOfMemoryMessageTest(unittest.TestCase):
    """An allocation refused (PRAGMA hard_heap_limit) is an error that names
    the function and the file, not a bare "out of memory"."""

    def run_limited(self, limit, sql, env=None):
        p = subprocess.run([SQLRUN, "PRAGMA hard_heap_limit=%d" % limit, sql],
                           capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        return p.stderr.strip()

    def test_messages_name_function_and_file(self):
        with TempDir() as td:
            # 400,000 slices: records of 80 bytes in blocks (about 37 MB in
            # all), then 48 bytes a slice for the excl column's ordering
            ev = [{"ph": "X", "name": "a", "pid": 1, "tid": i % 4, "ts": i, "dur": 2} for i in range(400000)]
            path = td.write("big.json", {"traceEvents": ev})
            q = path.replace("'", "''")
            for sql, func in (("SELECT sum(excl_ps) FROM trace_events('%s')" % q, "trace_events"),
                              ("SELECT count(*) FROM profsum_diagnostics('%s')" % q, "profsum_diagnostics")):
                with self.subTest(func=func):
                    err = self.run_limited(8 << 20, sql)
                    self.assertRegex(err, r"^error: %s: '%s': out of memory after \d+ events \(the track "
                                     r"pass holds \d+ records of 80 bytes" % (func, path))
            # one thread: a first import parses in a thread of its own while
            # SQLite creates the schema, and the limit may then bite inside
            # SQLite, which has no memory left for more than its own "out
            # of memory"; in one thread the parse comes first
            err = self.run_limited(8 << 20, "SELECT profsum_import('%s')" % q,
                                   env=dict(os.environ, PROFSUM_THREADS="0"))
            self.assertRegex(err, r"^error: profsum_import: '%s': out of memory( (reading|ordering) the "
                                  r"events.* \(\d+ complete events read\))?$" % re.escape(path))
            # profsum_trim: its selection's statement cannot open the file
            err = self.run_limited(200000, "SELECT profsum_trim('%s', '%s')" % (q, q + ".out.gz"))
            self.assertRegex(err, r"^error: profsum_trim: (trace_events: )?'%s': out of memory" % path)
            # the orderings of the pass, once the records fit
            err = self.run_limited(46 << 20, "SELECT sum(excl) FROM trace_events('%s')" % q)
            self.assertEqual(err, "error: trace_events: '%s': out of memory ordering 400000 slices (excl)" % path)


if __name__ == "__main__":
    unittest.main()
