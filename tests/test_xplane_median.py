"""The device-op duration medians of an XPlane import (profsum_agg_device
median_op_duration per device, the median_op_duration fact for all
devices) against the durations' median computed here, on captures built
to reach each way the engine finds a rank: a bucket of equal durations, a
bucket too large to copy that a second digit narrows, the rank after the
middle one in the next bucket, odd and even counts, several devices.
The medians start from the log-scale histogram the busy-union walk of
each device fills (engine_aggregate.c, logBucket), so the captures also
reach each way that histogram hands over to the digit passes: a middle
duration below 128 ps (its bucket is one value) whose successor lies in a
wider bucket, durations on the buckets' edges (127/128, 255/256, powers of
two), a middle bucket of many different durations, and many devices of
few ops each.

The engine takes the median as (a/1e6)*0.5 + (b/1e6)*0.5 of the middle
durations a, b in ps (one of them for an odd count), in doubles."""
import os
import random
import tempfile
import unittest

import xspace_writer as W
from util import connect


def median_us(durs):
    s = sorted(durs)
    n = len(s)
    a, b = s[(n - 1) // 2], s[n // 2]
    if n % 2:
        return a / 1e6
    return (a / 1e6) * 0.5 + (b / 1e6) * 0.5


def capture(devices):
    """An XSpace of one /device:TPU:i plane per list of durations (ps), an
    XLA Ops line each, the events back to back."""
    planes = []
    for i, durs in enumerate(devices):
        pb = W.PlaneBuilder("/device:TPU:%d" % i, id=i)
        evs, off = [], 0
        for j, d in enumerate(durs):
            evs.append(pb.event("op%d" % (j % 7), offset_ps=off, duration_ps=d))
            off += d
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
        planes.append(pb.build())
    return W.xspace(planes)


class XPlaneMedianTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, devices):
        path = os.path.join(self.tmp.name, "m.xplane.pb")
        with open(path, "wb") as f:
            f.write(capture(devices))
        db = connect()
        try:
            tid = db.execute("SELECT profsum_import(?)", (path,)).fetchone()[0]
            rows = dict(db.execute("SELECT device, median_op_duration FROM profsum_agg_device "
                                   "WHERE trace_id=?", (tid,)).fetchall())
            fact = db.execute("SELECT value FROM profsum_agg_fact WHERE trace_id=? AND "
                              "name='median_op_duration'", (tid,)).fetchone()
        finally:
            db.close()
        for i, durs in enumerate(devices):
            self.assertEqual(rows["/device:TPU:%d" % i], median_us(durs), "device %d" % i)
        self.assertEqual(float(fact[0]), median_us([d for ds in devices for d in ds]))

    def test_equal_durations(self):
        # the middle bucket is one value, far more of it than is copied
        self.check([[1000000] * 20001 + [3000000] * 5, [7] * 4 + [2 ** 31] * 2])

    def test_second_digit_narrows(self):
        # 40,000 durations in one or two buckets of the first digit (the
        # largest needs 30 bits), spread over a few thousand values
        rnd = random.Random(7)
        durs = [500000000 + rnd.randrange(200000) for _ in range(40000)] + [1000000000]
        self.check([durs, durs[:20001]])
        # and the rank after the middle one in the next bucket of the first
        # digit, while the middle one's bucket still needs the second
        low = [500000000 + rnd.randrange(100000) for _ in range(20000)]
        high = [900000000 + rnd.randrange(200000) for _ in range(20000)]
        self.check([low + high])

    def test_next_rank_in_next_bucket(self):
        # even counts whose two middle durations lie far apart
        self.check([[1000] * 3 + [900000000] * 3, [5000] * 10 + [6000] * 10,
                    [123456789, 2], [4096, 4095, 8191, 8192]])

    def test_random_durations(self):
        rnd = random.Random(11)
        for n in (1, 2, 3, 17, 4096, 5001):
            self.check([[rnd.randrange(1, 10 ** rnd.randrange(1, 12)) for _ in range(n)]
                        for _ in range(2)])


    def test_exact_middle_wide_successor(self):
        # the middle duration's bucket is one value (below 128 ps), the
        # next one's holds a range: a pass finds the smallest there
        self.check([[5, 5, 201, 300], [1, 127, 129, 129], [100] * 3 + [255] * 3])

    def test_bucket_edges(self):
        self.check([[127, 128], [255, 256], [128, 129, 130, 131],
                    [2 ** 20 - 1, 2 ** 20, 2 ** 20 + 1, 2 ** 21],
                    [2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 40]])

    def test_wide_middle_bucket(self):
        # 30,000 durations within one histogram bucket, all different: a
        # digit pass narrows it before the copy; and an even count whose
        # second middle duration opens the next bucket
        rnd = random.Random(3)
        wide = [2 ** 30 + rnd.randrange(2 ** 24) for _ in range(30000)]
        self.check([wide, [2 ** 30 + 5] * 15000 + [2 ** 30 + 2 ** 24 + 9] * 15000])

    def test_many_small_devices(self):
        rnd = random.Random(5)
        self.check([[rnd.randrange(1, 10 ** rnd.randrange(1, 10)) for _ in range(rnd.randrange(1, 9))]
                    for _ in range(40)])

    def test_random_scales(self):
        rnd = random.Random(17)
        for n in (1, 2, 6, 255, 20000):
            self.check([[rnd.randrange(1, 10 ** rnd.randrange(1, 13)) for _ in range(n)]
                        for _ in range(3)])


if __name__ == "__main__":
    unittest.main()
