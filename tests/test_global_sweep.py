"""The global breakdown (§4.4, profsum_agg_breakdown rows of mode
exclusive_global): the window of the devices' compute events is cut into
pieces at every start and end of their compute and communication events,
and each piece is added, in time order, to communication, compute or the
stall (engine_sweep.c: each device track's points from a cursor and a heap
of pending ends, the tracks merged by a heap).  The window is found by the
event pass (aggEventPass), or, in a large trace where the sweep runs on a
thread beside that pass, by the thread itself (unionWindow, taken only when
it is the event pass's).

The reference's arithmetic, rebuilt here in Python floats: every event of
a device track other than Steps is (float(ts), float(ts) + float(dur)),
clipped to the window [smallest compute start, largest compute end); the
boundary points sorted by time, and each piece between two successive
times added to communication when a communication event is open over it,
else to compute when a compute event is, else to the stall; total =
window.  Equal to the last bit, where lengths of unions (b - a + (c - b)
against c - a) would differ in the last digits.  The captures have several
devices with several lines each, runs that touch, nest and overlap across
lines, communication events on some lines only, a Steps line and a host
thread (both left out), and timestamps whose doubles lose digits (epoch
microseconds)."""
import json
import random
import unittest

from util import connect, TempDir


def sweep(ws, we, clip):
    """clip: [(start, end, is_comm)], each inside [ws, we] and not empty."""
    pts = []
    for a, b, c in clip:
        pts.append((a, 1, c))
        pts.append((b, -1, c))
    pts.sort(key=lambda p: (p[0], p[1]))
    out = {"communication": 0.0, "compute": 0.0, "stall": 0.0}
    open_comm = open_comp = 0
    prev, i = ws, 0

    def bucket():
        return "communication" if open_comm > 0 else "compute" if open_comp > 0 else "stall"
    while i < len(pts):
        t = pts[i][0]
        if t > prev:
            out[bucket()] += t - prev
        while i < len(pts) and pts[i][0] == t:
            _, d, c = pts[i]
            if c:
                open_comm += d
            else:
                open_comp += d
            i += 1
        prev = t
    if prev < we:
        out[bucket()] += we - prev
    return out


def reference(tracks):
    """tracks: {(pid, tid): (is_device_line, [(name, ts_text, dur_text)])}."""
    ev = []
    for (dev, evs) in tracks.values():
        if not dev:
            continue
        for name, ts, dur in evs:
            t = float(ts)
            ev.append((t, t + float(dur), name.startswith("all-reduce")))
    comp = [e for e in ev if not e[2]]
    if not comp:
        return None
    ws, we = min(e[0] for e in comp), max(e[1] for e in comp)
    if not we > ws:
        return None
    clip = [(max(a, ws), min(b, we), c) for a, b, c in ev]
    clip = [x for x in clip if x[1] > x[0]]
    out = sweep(ws, we, clip)
    out["total"] = we - ws
    return out


def trace_text(ndev, tracks):
    parts = []
    for d in range(ndev):
        parts.append(json.dumps({"ph": "M", "name": "process_name", "pid": d + 1,
                                 "args": {"name": "/device:TPU:%d" % d}}))
    parts.append(json.dumps({"ph": "M", "name": "process_name", "pid": 99,
                             "args": {"name": "/host:CPU"}}))
    for (pid, tid), (_, evs) in tracks.items():
        tname = "Steps" if tid == 1 and pid != 99 else ("python" if pid == 99 else "XLA Ops %d" % tid)
        parts.append(json.dumps({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                                 "args": {"name": tname}}))
        for name, ts, dur in evs:
            parts.append('{"ph":"X","pid":%d,"tid":%d,"name":%s,"ts":%s,"dur":%s}'
                         % (pid, tid, json.dumps(name), ts, dur))
    return '{"displayTimeUnit":"ns","traceEvents":[' + ",".join(parts) + "]}"


def capture(rng, base):
    ndev = rng.randint(1, 3)
    tracks = {}
    for d in range(ndev):
        for tid in range(1, rng.randint(2, 5)):
            evs, t = [], base
            comm_line = rng.random() < 0.5
            for k in range(rng.randint(1, 60)):
                t += rng.choice([0.0, 0.0, 0.1, 0.7, 1.3, 5.0])
                name = ("all-reduce.%d" % k) if comm_line and rng.random() < 0.4 else "fusion.%d" % k
                dur = rng.choice(["0.7", "0.1", "2.2", "10.5", "0.106", "1.3"])
                evs.append((name, repr(t), dur))
                if rng.random() < 0.5:
                    t += float(dur)        # the next one touches this one's end
            tracks[(d + 1, tid)] = (tid != 1, evs)
    tracks[(99, 5)] = (False, [("fusion.host", repr(base - 50.0), "1000")])
    return ndev, tracks


class GlobalSweepTest(unittest.TestCase):
    def check(self, td, i, ndev, tracks):
        path = td.write("u%d.json" % i, trace_text(ndev, tracks))
        db = connect()
        try:
            tid = db.execute("SELECT profsum_import(?)", (path,)).fetchone()[0]
            got = dict(db.execute("SELECT category, duration FROM profsum_agg_breakdown WHERE trace_id=? "
                                  "AND mode='exclusive_global'", (tid,)).fetchall())
        finally:
            db.close()
        want = reference(tracks)
        if want is None:
            self.assertEqual(got.get("total"), 0.0)
            return
        for k in ("communication", "compute", "stall", "total"):
            self.assertEqual(got[k], want[k], (i, k))

    def test_fixed(self):
        # two lines of one device: back-to-back ops on one, a collective
        # nested in a long op on the other, a Steps line and a host thread
        tracks = {(1, 2): (True, [("fusion.1", "0", "1"), ("fusion.2", "1", "1"),
                                  ("fusion.3", "2.5", "1"), ("all-reduce.1", "2.6", "0.2")]),
                  (1, 3): (True, [("fusion.4", "0.5", "4"), ("all-reduce.2", "1", "1"),
                                  ("all-reduce.3", "1.5", "2"), ("fusion.5", "9", "1")]),
                  (1, 1): (False, [("1", "0", "20")]),
                  (99, 5): (False, [("fusion.h", "-5", "100")])}
        with TempDir() as td:
            self.check(td, 0, 1, tracks)

    def test_random(self):
        rng = random.Random(20261129)
        with TempDir() as td:
            for i in range(40):
                base = rng.choice([0.0, 0.01, 1929316.68, 1700000000.1, 1700000000000000.0])
                ndev, tracks = capture(rng, base)
                with self.subTest(case=i):
                    self.check(td, i + 1, ndev, tracks)

    def test_large_beside_event_pass(self):
        # 3 devices × 3 lines × 2,200 events: past the size at which the
        # sweep runs on a thread of its own beside the event pass (which
        # then finds the window itself); epoch microseconds (every length
        # exact: the unions' lengths) and times from 0.1 µs (not exact: the
        # pieces one by one), with collectives nested in long ops
        for base in (1700000000000000.0, 0.1):
            rng = random.Random(7)
            tracks = {}
            for d in range(3):
                for tid in (1, 2, 3, 4):
                    evs, t = [], base + d * 0.25
                    for k in range(2200 if tid != 1 else 3):
                        t += rng.choice([0.0, 0.1, 0.7, 1.3])
                        name = ("all-reduce.%d" % k) if tid == 3 and k % 3 == 0 else "fusion.%d" % k
                        dur = rng.choice(["0.7", "0.1", "2.2", "0.106", "13.3"])
                        evs.append((name, repr(t), dur))
                        if k % 2:
                            t += float(dur)
                    tracks[(d + 1, tid)] = (tid != 1, evs)
            tracks[(99, 5)] = (False, [("fusion.host", repr(base - 1000.0), "1000")])
            self.assertGreater(sum(len(v[1]) for v in tracks.values()), 16384)
            with self.subTest(base=base), TempDir() as td:
                self.check(td, 100, 3, tracks)

if __name__ == "__main__":
    unittest.main()
