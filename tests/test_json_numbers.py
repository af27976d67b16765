"""The scanner converts the digits of ts, dur, pid and tid eight at a time
(two loads for up to 16 digits, where 16 bytes of the window are there):
every number of digits before and after the point gives the exact value,
rounded half-even to the picosecond, also at the end of a window and of
the file, and with digits of every value in every place."""
import random
import unittest
from decimal import Decimal, ROUND_HALF_EVEN, ROUND_FLOOR

from util import connect, TempDir


def exact(t):
    """(ns floor, ps) of the decimal text t of microseconds."""
    ps = (Decimal(t) * 1000000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)
    return int((ps / 1000).to_integral_value(rounding=ROUND_FLOOR)), int(ps)


def digits(rng, n, lead=True):
    s = "".join(rng.choice("0123456789") for _ in range(n))
    if lead and n > 1 and s[0] == "0":
        s = rng.choice("123456789") + s[1:]
    return s


class EveryLength(unittest.TestCase):

    def check(self, texts, ints, tail):
        ev = ",".join('{"ph":"X","pid":%s,"tid":%s,"name":"e","ts":%s,"dur":%s}'
                      % (ints[i % len(ints)], ints[(i * 5 + 1) % len(ints)], t,
                         t if len(t.split(".")[0]) <= 12 else "1")
                      for i, t in enumerate(texts))
        with TempDir() as td:
            p = td.write("n.json", '{"traceEvents":[' + ev + tail)
            db = connect()
            try:
                got = db.execute("SELECT pid, tid, ts, dur_ps FROM trace_events(?) ORDER BY idx",
                                 (p,)).fetchall()
            finally:
                db.close()
        self.assertEqual(len(got), len(texts))
        bad = []
        for i, (t, (pid, tid, ts, dur_ps)) in enumerate(zip(texts, got)):
            ns, ps = exact(t)
            want = (int(ints[i % len(ints)]), int(ints[(i * 5 + 1) % len(ints)]),
                    ns if ns < 2 ** 63 else None,
                    ps if len(t.split(".")[0]) <= 12 else 1000000)
            if (pid, tid, ts, dur_ps) != want:
                bad.append((t, (pid, tid, ts, dur_ps), want))
        self.assertEqual(bad[:5], [])

    def test_every_length(self):
        rng = random.Random(17)
        texts = []
        for nint in range(1, 19):
            for nfrac in range(0, 27):
                for _ in range(3):
                    t = digits(rng, nint) + ("." + digits(rng, nfrac, False) if nfrac else "")
                    if nfrac >= 7 and rng.random() < 0.3:
                        t = t[:t.index(".") + 7] + "5" + "0" * (nfrac - 7)   # a tie
                    texts.append(t)
        rng.shuffle(texts)
        ints = [digits(rng, n) for n in range(1, 19)] + ["-" + digits(rng, n) for n in range(1, 19)]
        ints += ["0", "9", "99999999", "100000000", "999999999999999999"]
        self.check(texts, ints, "]}")
        # the last number right at the end of the file (no closing brackets)
        self.check(texts[:40], ints, "")

    def test_all_nines_and_zeros(self):
        texts = []
        for nint in range(1, 19):
            for nfrac in range(0, 20):
                for d in "09":
                    ip = d * nint if d == "9" or nint == 1 else "1" + "0" * (nint - 1)
                    texts.append(ip + ("." + d * nfrac if nfrac else ""))
        self.check(texts, ["9" * n for n in range(1, 19)] + ["1" + "0" * n for n in range(0, 18)], "]}")


class Int64Ends(unittest.TestCase):
    """ts and dur in ns are floor(ps / 1000): -2^63 ns and 2^63-1 ns (up to
    its last ps) fit the INTEGER columns; 1 ps below the one or 2^63 ns is
    NULL, a ts with a time_out_of_range diagnostic."""

    CASES = [("-9223372036854775.808", -2 ** 63, False),
             ("-9223372036854775.8080004", -2 ** 63, False),   # rounded to the ps
             ('"-9223372036854775.808"', -2 ** 63, False),     # a string is read too
             ("-9223372036854775.808001", None, True),
             ("9223372036854775.807999", 2 ** 63 - 1, False),
             ("9223372036854775.808", None, True)]

    def test_ts_and_dur(self):
        ev = ",".join('{"ph":"X","pid":1,"tid":%d,"name":"e","ts":%s,"dur":%s}' % (i, t, t)
                      for i, (t, _, _) in enumerate(self.CASES))
        with TempDir() as td:
            p = td.write("ends.json", '{"traceEvents":[' + ev + "]}")
            db = connect()
            try:
                got = db.execute("SELECT ts, dur FROM trace_events(?) ORDER BY idx", (p,)).fetchall()
                far = db.execute("SELECT idx FROM profsum_diagnostics(?) WHERE kind='time_out_of_range' "
                                 "AND detail LIKE 'ts:%'", (p,)).fetchall()
            finally:
                db.close()
        self.assertEqual(got, [(ns, ns) for _, ns, _ in self.CASES])
        self.assertEqual([r[0] for r in far], [i for i, c in enumerate(self.CASES) if c[2]])


if __name__ == "__main__":
    unittest.main()
