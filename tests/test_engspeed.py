"""The summary engine's compact event records and the XPlane intake's
shortcuts (ext/summary/engine_int.h, engine_read.c, xplane_intake.c):
what they keep aside or remember must give the same numbers as the plain
path.

- an event record holds a dur below 2^31 ps itself and keeps a longer one
  aside (Engine.aDurBig): durs at, just below and far beyond that bound,
  nested with short events, give exact totals, exclusive times and step
  spans;
- the XPlane intake reuses an event key per event metadata and line: one
  metadata on two lines (two tracks) and on two planes keeps its events
  apart.

Fixtures are built here (tests/xspace_writer.py for XSpace files)."""
import json
import os
import unittest

import xspace_writer as W
from util import DbTestCase

BIG = 2 ** 31          # the first dur (ps) an event record keeps aside


class EngSpeedCase(DbTestCase):
    def imp(self, name, data):
        path = self.td.write(name, data)
        tid = self.db.execute("SELECT profsum_import(?, ?)", (path, name)).fetchone()[0]
        doc = json.loads(self.db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
        return tid, doc

    def ops(self, tid):
        return {r[0]: r[1:] for r in self.db.execute(
            "SELECT name, count, total_duration, exclusive_duration FROM profsum_agg_op "
            "WHERE trace_id=? ORDER BY name", (tid,))}

    def steps(self, tid):
        return self.db.execute("SELECT step, start_ps, dur_ps FROM profsum_agg_step_span "
                               "WHERE trace_id=? ORDER BY step, start_ps", (tid,)).fetchall()


def long_durs_xplane():
    """A TPU plane: a Steps line of two long steps (one beyond 2^32 ps) and
    an XLA Ops line whose parents last 2^31 ps, 2^31 - 1 ps and 5 s, each
    with short children."""
    pb = W.PlaneBuilder("/device:TPU:0")
    pb.line(id=1, name="Steps", timestamp_ns=1000, events=[
        pb.event("1", offset_ps=0, duration_ps=2 ** 32 + 7),
        pb.event("2", offset_ps=2 ** 32 + 7, duration_ps=6 * 10 ** 12)])
    ops = []
    t = 0
    for parent, dur in (("while.a", BIG), ("while.b", BIG - 1), ("while.c", 5 * 10 ** 12)):
        ops.append(pb.event(parent, offset_ps=t, duration_ps=dur))
        ops.append(pb.event("fusion.1", offset_ps=t + 10, duration_ps=1000))
        ops.append(pb.event("copy.2", offset_ps=t + 2000, duration_ps=BIG // 4))
        t += dur
    pb.line(id=2, name="XLA Ops", timestamp_ns=1000, events=ops)
    return W.xspace([pb.build()])


class LongDurations(EngSpeedCase):
    def check(self, tid):
        ops = self.ops(tid)
        q = BIG // 4
        self.assertEqual(ops["while.a"], (1, BIG / 1e6, (BIG - 1000 - q) / 1e6))
        self.assertEqual(ops["while.b"], (1, (BIG - 1) / 1e6, (BIG - 1 - 1000 - q) / 1e6))
        self.assertEqual(ops["while.c"], (1, 5e6, (5 * 10 ** 12 - 1000 - q) / 1e6))
        self.assertEqual(ops["fusion.1"], (3, 3000 / 1e6, 3000 / 1e6))
        self.assertEqual(ops["copy.2"], (3, 3 * q / 1e6, 3 * q / 1e6))
        self.assertEqual(self.steps(tid), [(1, 0, 2 ** 32 + 7), (2, 2 ** 32 + 7, 6 * 10 ** 12)])

    def test_xplane(self):
        tid, doc = self.imp("long.xplane.pb", long_durs_xplane())
        self.check(tid)
        self.assertEqual(doc["trace_overview"]["num_complete_events"], 11)

    def test_json_equivalent(self):
        # the same events as a JSON trace (µs texts of the exact ps)
        def us(ps):
            return "%d.%06d" % divmod(ps, 10 ** 6)
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
              {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}},
              {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
        rows = [(1, "1", 0, 2 ** 32 + 7), (1, "2", 2 ** 32 + 7, 6 * 10 ** 12)]
        t = 0
        for parent, dur in (("while.a", BIG), ("while.b", BIG - 1), ("while.c", 5 * 10 ** 12)):
            rows += [(2, parent, t, dur), (2, "fusion.1", t + 10, 1000), (2, "copy.2", t + 2000, BIG // 4)]
            t += dur
        body = ",".join('{"ph":"X","pid":1,"tid":%d,"name":"%s","ts":%s,"dur":%s}'
                        % (tid, name, us(ts), us(dur)) for tid, name, ts, dur in rows)
        text = '{"traceEvents":[%s,%s]}' % (",".join(json.dumps(e) for e in ev), body)
        tid, doc = self.imp("long.json", text.encode())
        self.check(tid)

    def test_many_long_events(self):
        # more events kept aside than the first allocation of their array
        # (64), every one a parent of a short event
        pb = W.PlaneBuilder("/device:GPU:0")
        evs = []
        for i in range(300):
            evs.append(pb.event("long", offset_ps=i * 4 * BIG, duration_ps=BIG + i))
            evs.append(pb.event("short", offset_ps=i * 4 * BIG + 5, duration_ps=7))
        pb.line(id=1, name="XLA Ops", timestamp_ns=0, events=evs)
        tid, _ = self.imp("many.xplane.pb", W.xspace([pb.build()]))
        total = sum(BIG + i for i in range(300))
        ops = self.ops(tid)
        self.assertEqual(ops["long"][:2], (300, total / 1e6))
        self.assertAlmostEqual(ops["long"][2], (total - 300 * 7) / 1e6, places=6)
        self.assertEqual(ops["short"], (300, 2100 / 1e6, 2100 / 1e6))


class KeyPerLine(EngSpeedCase):
    def test_one_metadata_on_two_lines_and_planes(self):
        # The intake remembers the event key of a metadata's fields with the
        # line it was made on: the same metadata on a second line of the
        # plane, and on a second plane, gets keys of those tracks.
        planes = []
        for p in range(2):
            pb = W.PlaneBuilder("/device:TPU:%d" % p, id=p)
            for ln in (1, 2):
                pb.line(id=ln, name="XLA Ops" if ln == 1 else "Stream #%d" % ln, timestamp_ns=0, events=[
                    pb.event("fusion.7", offset_ps=i * 100, duration_ps=50 + p * 10 + ln) for i in range(3)])
            planes.append(pb.build())
        tid, doc = self.imp("keys.xplane.pb", W.xspace(planes))
        # every (device, line) pair is its own track with its own events
        rows = self.db.execute("SELECT pid, tid, count(*), sum(dur_ps) FROM trace_events(?) GROUP BY 1, 2",
                               (os.path.join(self.td.path, "keys.xplane.pb"),)).fetchall()
        self.assertEqual(sorted(rows), [(1, 1, 3, 153), (1, 2, 3, 156), (2, 1, 3, 183), (2, 2, 3, 186)])
        self.assertEqual(self.ops(tid)["fusion.7"], (12, (153 + 156 + 183 + 186) / 1e6,
                                                      (153 + 156 + 183 + 186) / 1e6))
        dev = self.db.execute("SELECT device, n_ops FROM profsum_agg_device WHERE trace_id=? ORDER BY 1",
                              (tid,)).fetchall()
        self.assertEqual(dev, [("/device:TPU:0", 6), ("/device:TPU:1", 6)])


class GapOrder(EngSpeedCase):
    """The gaps walk an ops line in gap order: its processing order but
    in a run of equal starts by end ascending.  A line without such a run
    is read in place; one with a run is copied and reordered."""

    def gaps(self, events):
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops", timestamp_ns=0, events=[
            pb.event(name, offset_ps=ts * 10 ** 6, duration_ps=dur * 10 ** 6) for name, ts, dur in events])
        _, doc = self.imp("g%d.xplane.pb" % len(events), W.xspace([pb.build()]))
        return [(r["name"], r["payload_op"], r["marker_op"], r["total_gap_duration"])
                for r in doc["gap_before_ops"]]

    def test_equal_starts(self):
        # fusion.2 and iota.1 (a marker) start together after a gap: in gap
        # order the shorter iota.1 comes first, and as a marker it passes
        # the gap on to fusion.2, which it counts as its marker (in
        # processing order fusion.2 would come first and take the gap
        # itself)
        self.assertEqual(self.gaps([("dot.0", 0, 10), ("fusion.2", 20, 10), ("iota.1", 20, 5),
                                    ("dot.0", 40, 5)]),
                         [("dot.0", "dot.0", "dot.0", 10.0), ("fusion.2", "fusion.2", "iota.1", 10.0)])

    def test_no_equal_starts(self):
        self.assertEqual(self.gaps([("dot.0", 0, 10), ("iota.1", 20, 5), ("fusion.2", 26, 10),
                                    ("dot.0", 40, 5)]),
                         [("iota.1", "iota.1", "iota.1", 10.0), ("dot.0", "dot.0", "dot.0", 4.0),
                          ("fusion.2", "fusion.2", "fusion.2", 1.0)])

if __name__ == "__main__":
    unittest.main()
