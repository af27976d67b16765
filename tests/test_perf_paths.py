"""The reading paths chosen for speed give the answers of the plain ones:
dur/dur_ps in one pass while no B row comes (a late B still paired)."""
import json
import os
import unittest

from util import connect, TempDir


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


class DurOnePass(unittest.TestCase):
    """dur and dur_ps of X rows need no B/E pairing pass."""

    def setUp(self):
        self.td = TempDir()
        self.db = connect()

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

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


if __name__ == "__main__":
    unittest.main()
