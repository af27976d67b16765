"""sqlite3_interrupt (Ctrl-C in the shell, a notebook's stop button) stops
every long read of a trace within a few MB of data: a trace_events scan that
gives SQLite no row to look at (entries without "ph"), the first pass of a
two-pass query, profsum_diagnostics, profsum_import and profsum_trim; an
interrupted import stores nothing.

The traces are gzip files made of one compressed block repeated (a
multi-member gzip: written in a moment, some 100 times smaller than their
JSON), sized on this machine so that a plain scan of them takes about
FULL_S seconds (the other operations take at least as long).  Each
operation is interrupted DELAY_S after it starts, from a threading.Timer,
and must end with "interrupted" within a quarter of that scan time.
"""
import gzip
import os
import sqlite3
import threading
import time
import unittest

from util import TempDir, connect

FULL_S = 2.5          # seconds a plain scan of the big traces takes (target)
DELAY_S = 0.2         # the interrupt comes this long after the call starts
MAX_BLOCKS = 6000     # at most about 4.5 GB of JSON (60 MB on disk)


def block(with_ph, n=1000):
    """n entries (each followed by a comma) of about 700 bytes: X events on
    three threads with an args value of nested arrays (read byte by byte,
    as the scanner skips it), or the same entries without "ph" (no row)."""
    out = []
    pairs = ",".join("[%d,%d]" % (k, k * 7 % 13) for k in range(60))
    for i in range(n):
        ph = '"ph":"X",' if with_ph else ""
        out.append('{%s"name":"op%d","pid":1,"tid":%d,"ts":%d.25,"dur":%d,"args":{"v":[%s]}},\n'
                   % (ph, i % 17, i % 3, 10 * i, 3 + i % 5, pairs))
    return "".join(out).encode()


def write_trace(path, member, n_blocks, head=b""):
    """{"traceEvents":[ <head> <member x n_blocks> {}]} as a multi-member gzip."""
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"traceEvents":[\n' + head))
        for _ in range(n_blocks):
            f.write(member)
        f.write(gzip.compress(b'{}]}\n'))


def best_scan(db, path, runs=3):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        db.execute("SELECT count(*) FROM trace_events(?)", (path,)).fetchone()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


class InterruptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        cls.members = {k: gzip.compress(block(k), 6) for k in (True, False)}
        # The time per block of a scan, from a trace of 60 blocks (enough
        # that the fixed cost of a scan does not count).
        small = os.path.join(cls.td.path, "calib.json.gz")
        write_trace(small, cls.members[True], 60)
        db = connect()
        per_block = best_scan(db, small) / 60
        db.close()
        cls.n_blocks = max(200, min(MAX_BLOCKS, int(FULL_S / per_block)))
        cls.full_s = cls.n_blocks * per_block        # the scan's estimated time
        cls.paths = {}
        for rows in (True, False):
            p = os.path.join(cls.td.path, "big-%s.json.gz" % ("rows" if rows else "norows"))
            write_trace(p, cls.members[rows], cls.n_blocks)
            cls.paths[rows] = p
        # a B row first: dur then needs the B/E pairing pass (X rows alone
        # carry their durations and are read once)
        p = os.path.join(cls.td.path, "big-b.json.gz")
        write_trace(p, cls.members[True], cls.n_blocks,
                    head=b'{"ph":"B","name":"b","pid":1,"tid":9,"ts":0},\n')
        cls.paths["b"] = p

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__(None, None, None)

    def interrupted(self, db, sql, args, delay=DELAY_S, after=None):
        """Run sql with db.interrupt() `delay` seconds after it starts (or,
        with `after`, a function, `delay` seconds after after() first
        returns true, polled every 5 ms); assert it fails with
        "interrupted" within a quarter of the scan's time after the
        interrupt; return the message."""
        sent = []
        done = threading.Event()

        def fire():
            if after is not None:
                while not after():
                    if done.wait(0.005):
                        return
            if done.wait(delay):
                return
            sent.append(time.perf_counter())
            db.interrupt()

        worker = threading.Thread(target=fire)
        worker.start()
        try:
            with self.assertRaises(sqlite3.OperationalError, msg="%s: not interrupted" % sql) as cm:
                db.execute(sql, args).fetchall()
        finally:
            done.set()
            worker.join()
        late = time.perf_counter() - sent[0]
        self.assertTrue(str(cm.exception).endswith("interrupted"), str(cm.exception))
        bound = self.full_s / 4
        self.assertLess(late, bound, "%s: ended %.2f s after the interrupt (the whole scan: "
                        "about %.1f s)" % (sql, late, self.full_s))
        return str(cm.exception)

    def test_fixture_takes_long_enough(self):
        # the premise: the bound is a small part of what the calls take
        self.assertGreater(self.full_s, 4 * DELAY_S, "the machine reads the trace too fast "
                           "even at %d blocks" % MAX_BLOCKS)

    def test_scan_without_rows(self):
        db = connect()
        for sql in ("SELECT count(*) FROM trace_events(?)",
                    "SELECT name FROM trace_events(?) WHERE name = 'no such op'"):
            with self.subTest(sql=sql):
                msg = self.interrupted(db, sql, (self.paths[False],))
                self.assertIn(msg, ("interrupted", "trace_events: interrupted"))
        # the connection works on
        self.assertEqual(db.execute("SELECT 1").fetchone(), (1,))

    def test_first_pass_of_two_pass_queries(self):
        db = connect()
        for sql, path in (("SELECT count(*) FROM trace_events(?) WHERE excl_ps < 0", True),      # nesting
                          ("SELECT count(*) FROM trace_events(?) WHERE dur < 0", "b"),          # B/E pairing
                          ("SELECT count(*) FROM trace_events(?) WHERE thread_name = 'x'", True)):  # names
            with self.subTest(sql=sql):
                self.assertEqual(self.interrupted(db, sql, (self.paths[path],)), "trace_events: interrupted")

    def test_diagnostics(self):
        db = connect()
        self.assertEqual(self.interrupted(db, "SELECT count(*) FROM profsum_diagnostics(?)",
                                          (self.paths[True],)),
                         "profsum_diagnostics: interrupted")

    def test_import_stores_nothing(self):
        small = os.path.join(self.td.path, "small.json")
        with open(small, "w") as f:
            f.write('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}]}')
        for first in (True, False):
            for rows in (True, False):
                with self.subTest(first_import=first, rows=rows):
                    path = os.path.join(self.td.path, "i-%d-%d.db" % (first, rows))
                    db = connect(path)
                    db.isolation_level = None
                    if not first:
                        db.execute("SELECT profsum_import(?, 'small')", (small,)).fetchone()
                    before = list(db.iterdump())
                    self.assertEqual(self.interrupted(db, "SELECT profsum_import(?, 'big')",
                                                      (self.paths[rows],)),
                                     "profsum_import: interrupted")
                    self.assertFalse(db.in_transaction)
                    self.assertEqual(list(db.iterdump()), before)
                    db.close()

    def test_trim(self):
        db = connect()
        dest = os.path.join(self.td.path, "trimmed.json.gz")
        # during the selection (no row reaches the WHERE), then during the copy
        msg = self.interrupted(db, "SELECT profsum_trim(?, ?, 'name = ''x''')", (self.paths[False], dest))
        self.assertTrue(msg.startswith("profsum_trim: "), msg)
        # the copy starts when the temporary output file appears
        msg = self.interrupted(db, "SELECT profsum_trim(?, ?, 'idx < 10')", (self.paths[True], dest),
                               after=lambda: any(n.startswith("trimmed.json.gz.tmp")
                                                 for n in os.listdir(self.td.path)))
        self.assertTrue(msg.startswith("profsum_trim: "), msg)
        self.assertEqual(os.listdir(self.td.path).count("trimmed.json.gz"), 0)
        self.assertFalse([n for n in os.listdir(self.td.path) if n.startswith("trimmed.json.gz.tmp")])


if __name__ == "__main__":
    unittest.main()
