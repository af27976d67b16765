"""The capped_export diagnostic once the latest start of the events is
found by the counting pass of the ordering (engine_order.c: the XPlane
line tolerance pass, or the track count of a JSON trace) instead of a pass
of its own: the detail's figures (the latest start's distance to the
latest end, and the profile's span) against those computed here, for an
XPlane whose latest start is on its first line and not its last event,
and for a JSON trace whose events come unordered."""
import json
import os
import tempfile
import unittest

import xspace_writer as W
from util import connect

N = 100000


def detail(path):
    db = connect()
    try:
        db.execute("SELECT profsum_import(?, 'c')", (path,))
        rows = db.execute("SELECT detail FROM profsum_diagnostic WHERE kind='capped_export'").fetchall()
    finally:
        db.close()
    return [r[0] for r in rows]


def figures(n, spans):
    """The detail the engine writes for complete events spans [(ts, end)] ps."""
    lo = min(s for s, _ in spans)
    hi = max(e for _, e in spans)
    last = max(s for s, _ in spans)
    tail, span = (hi - last) / 1e6, (hi - lo) / 1e6
    return "%d complete events; the latest starts %.3f us (%.1f%% of the %.3f us profile)" % (
        n, tail, 100.0 * tail / span, span)


class FuseCappedTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_xplane_latest_start_on_first_line(self):
        pb = W.PlaneBuilder("/device:TPU:0", id=0)
        # line 1: many short ops, then one whose start is the latest of all
        # though it is not the last event read; line 2: one long op
        ops, spans = [], []
        for j in range(N - 2):
            ops.append(pb.event("op%d" % (j % 3), offset_ps=j * 1000, duration_ps=500))
            spans.append((j * 1000, j * 1000 + 500))
        late = N * 1000
        ops.insert(N // 2, pb.event("late", offset_ps=late, duration_ps=700))
        spans.append((late, late + 700))
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=ops)
        pb.line(id=2, name="XLA Modules", timestamp_ns=1000,
                events=[pb.event("module", offset_ps=0, duration_ps=20 * N * 1000)])
        spans.append((0, 20 * N * 1000))
        path = os.path.join(self.tmp.name, "c.xplane.pb")
        with open(path, "wb") as f:
            f.write(W.xspace([pb.build()]))
        rows = detail(path)
        self.assertEqual(len(rows), 1)
        self.assertTrue(rows[0].startswith(figures(N, spans)), (rows[0], figures(N, spans)))

    def test_json_unordered(self):
        ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}}]
        spans = []
        for j in range(N):
            ts = ((j * 7919) % N) * 2       # µs, a permutation
            tid = 2 + j % 3
            ev.append({"ph": "X", "pid": 1, "tid": tid, "name": "op", "ts": ts, "dur": 1})
            spans.append((ts * 10 ** 6, (ts + 1) * 10 ** 6))
        ev.append({"ph": "X", "pid": 1, "tid": 9, "name": "long", "ts": 0, "dur": 30 * N})
        spans.append((0, 30 * N * 10 ** 6))
        path = os.path.join(self.tmp.name, "c.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": ev}, f)
        rows = detail(path)
        self.assertEqual(len(rows), 1)
        self.assertTrue(rows[0].startswith(figures(N + 1, spans)), (rows[0], figures(N + 1, spans)))


if __name__ == "__main__":
    unittest.main()
