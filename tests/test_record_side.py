"""What the summary engine keeps beside its 16-byte event records
(engine_int.h, "Records"): the run_ids, by block of 65,536 events, as runs
of equal ids or, where they change at most events, an array; the
exclusive times of the events that have a child, in 32 bits with the
longer ones (2^32 - 1 ps and more) kept in a map; the step_num of the
events that have one, in event order.  Each test builds a trace
whose expected values are computed here from the fixture, and fails when
any of those paths loses or misplaces a value."""
import json
import os
import unittest
from unittest import mock

from util import connect, TempDir

BLOCK = 1 << 16


def doc_of(path):
    db = connect()
    try:
        db.execute("SELECT profsum_import(?, 't')", (path,))
        return json.loads(db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
    finally:
        db.close()


def expected_run_ids(events):
    """The reference's run_ids list: the run_id values of the X events by
    count, ties to the one seen first in processing order (tracks in order
    of first appearance, each by (ts, -end)), at most 20."""
    tracks = []
    for e in events:
        if (e["pid"], e["tid"]) not in tracks:
            tracks.append((e["pid"], e["tid"]))
    order = sorted(events, key=lambda e: (tracks.index((e["pid"], e["tid"])), e["ts"], -(e["ts"] + e["dur"])))
    count, first = {}, {}
    for pos, e in enumerate(order):
        r = e.get("args", {}).get("run_id")
        if r is None:
            continue
        count[r] = count.get(r, 0) + 1
        first.setdefault(r, pos)
    return sorted(count, key=lambda r: (-count[r], first[r]))[:20]


class RunIds(unittest.TestCase):

    def trace(self):
        meta = [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
            {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Modules"}},
        ]
        evs = []
        ta = tb = 0
        # 1. The two tracks interleaved event by event, each with its own
        #    run_ids: the id changes at every event (the first block's runs
        #    become its array), and the tracks' events are far apart in the
        #    file (the lookups by event leave the last run found).
        for i in range(45000):
            evs.append({"ph": "X", "pid": 1, "tid": 1, "ts": ta, "dur": 3, "name": "op%d" % (i % 7),
                        "args": {"run_id": "a%d" % (i % 3)}})
            ta += 5
            args = {"run_id": "b%d" % (i % 5)} if i % 4 else {}
            evs.append({"ph": "X", "pid": 1, "tid": 2, "ts": tb, "dur": 4, "name": "mod%d" % (i % 2),
                        "args": args})
            tb += 5
        # 2. Long runs of one id, and stretches without any (runs, in the
        #    blocks after it)
        for i in range(90000):
            args = {"run_id": "c%d" % (i // 7000)} if (i // 3000) % 4 else {}
            evs.append({"ph": "X", "pid": 1, "tid": 1, "ts": ta, "dur": 3, "name": "op%d" % (i % 7),
                        "args": args})
            ta += 5
        # 3. A block whose every other event has an id
        for i in range(40000):
            args = {"run_id": "d%d" % (i % 11)} if i % 2 else {}
            evs.append({"ph": "X", "pid": 1, "tid": 2, "ts": tb, "dur": 4, "name": "mod%d" % (i % 2),
                        "args": args})
            tb += 5
        return meta, evs

    def test_run_ids_over_blocks(self):
        meta, evs = self.trace()
        self.assertGreater(len(evs), 3 * BLOCK)
        want = expected_run_ids(evs)
        self.assertEqual(len(want), 20)
        with TempDir() as td:
            p = td.write("runs.json", json.dumps({"traceEvents": meta + evs}))
            d = doc_of(p)
            # and the counts as trace_events reads them from the file
            db = connect()
            rows = dict(db.execute("SELECT run_id, count(*) FROM trace_events(?) WHERE ph = 'X' "
                                   "AND run_id IS NOT NULL GROUP BY 1", (p,)).fetchall())
            db.close()
        self.assertEqual(d["trace_provenance"]["run_ids"], want)
        total = sum(1 for e in evs if "run_id" in e.get("args", {}))
        self.assertEqual(sum(rows.values()), total)

    def test_run_ids_one_thread(self):
        # the same with every batch consumed at once (no reading thread)
        meta, evs = self.trace()
        evs = evs[:100000]
        want = expected_run_ids(evs)
        with TempDir() as td:
            p = td.write("runs.json", json.dumps({"traceEvents": meta + evs}))
            with mock.patch.dict(os.environ, {"PROFSUM_THREADS": "0"}):
                d = doc_of(p)
        self.assertEqual(d["trace_provenance"]["run_ids"], want)


class ParentExclusive(unittest.TestCase):
    """Exclusive times of events with a child around 2^32 ps, on a
    device-op track (kept with the device ops' doubles) and on a host track
    (kept apart): each is dur minus the child's dur."""

    def test_boundaries(self):
        meta = [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "XLA Ops"}},
            {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
        ]
        # exclusive ps of each parent: below, at and above the 32-bit limit
        cases = [("p.below", 2 ** 32 - 2), ("p.edge", 2 ** 32 - 1), ("p.above", 2 ** 32), ("p.far", 9 * 10 ** 12)]
        evs, t = [], 0
        for name, ex_ps in cases:
            child_ps = 1000000               # 1 us
            dur_ps = ex_ps + child_ps
            evs.append({"ph": "X", "pid": 1, "tid": 1, "ts": t, "dur": dur_ps / 1e6, "name": name})
            evs.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 1, "dur": 1, "name": name + ".child"})
            t += dur_ps / 1e6 + 10
        # host: nested three deep, the outer two with long exclusive times
        host = [("h.outer", 0, 12000000), ("h.mid", 10, 4294.967296 + 2), ("h.in", 11, 2)]
        for name, ts, dur in host:
            evs.append({"ph": "X", "pid": 2, "tid": 9, "ts": ts, "dur": dur, "name": name})
        with TempDir() as td:
            p = td.write("t.json", json.dumps({"traceEvents": meta + evs}))
            d = doc_of(p)
            db = connect()
            excl = dict(db.execute("SELECT name, excl_ps FROM trace_events(?) WHERE ph = 'X'", (p,)).fetchall())
            db.close()
        ex = {h["name"]: h["exclusive_duration"] for h in d["hot_ops"]}
        for name, ex_ps in cases:
            self.assertEqual(ex[name], ex_ps / 1e6, name)
            self.assertEqual(excl[name], ex_ps, name)
            self.assertEqual(ex[name + ".child"], 1.0, name)
        # the host events' exclusive times add up to the outer one's dur
        self.assertEqual(d["time_breakdown"]["host"]["total_duration"], 12000000.0)
        self.assertEqual(excl["h.outer"], 12000000 * 10 ** 6 - round((4294.967296 + 2) * 10 ** 6))



class StepNumbers(unittest.TestCase):
    """Host `train` events with a step_num (the GPU fallback of the steps)
    among many other events: each step's wall time on the device is its
    own event's dur, found again by event for every step."""

    def test_train_steps_over_blocks(self):
        ev = [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
            {"ph": "M", "pid": 1, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
            {"ph": "M", "pid": 9, "name": "process_name", "args": {"name": "/host:CPU"}},
            {"ph": "M", "pid": 9, "tid": 1, "name": "thread_name", "args": {"name": "main"}},
        ]
        want = {}
        t = 0
        for s in range(400):
            dur = 1000 + 7 * s
            # a train event without a step_num now and then: not a step
            args = {"step_num": 5000 - s} if s % 10 else {}
            ev.append({"ph": "X", "pid": 9, "tid": 1, "name": "train", "ts": t, "dur": dur, "args": args})
            if s % 10:
                want[5000 - s] = float(dur)
            for i in range(400):
                ev.append({"ph": "X", "pid": 1, "tid": 7, "name": "gemm%d" % (i % 3), "ts": t + 2 * i, "dur": 1})
            t += dur + 50
        self.assertGreater(len(ev), 2 * BLOCK)
        with TempDir() as td:
            p = td.write("steps.json", json.dumps({"traceEvents": ev}))
            db = connect()
            db.execute("SELECT profsum_import(?, 't', '{\"warmup_steps\": 0}')", (p,))
            got = dict(db.execute("SELECT step, wall_us FROM profsum_step_wall").fetchall())
            db.close()
        self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
