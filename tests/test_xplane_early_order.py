"""The ordering of an XPlane's lines while they are read (engine_order.c,
"Ordering each XPlane line as it comes"): the import orders each line's
events, computes their exclusive times (the §2 nesting sweep) and moves
their run_ids batch by batch as the lines come, and falls back to
ordering every line after the read when a line is out of order.  The
captures here are built to reach each part of it, and the results are
checked against values computed in the test from the fixture: exclusive
time per op (profsum_agg_op, the v1 document's hot ops), the run_id
counts, the diagnostics of left-out events, with and without
PROFSUM_THREADS=0 (every batch consumed at once), on the early path
(every line in order) and on the fallback (one line out of order, early
in the file or after lines already done, within one batch or across
several).

Every op name is its own, so an op's exclusive_duration is one event's
exclusive time: its dur minus the durs of its direct children, in µs."""
import json
import os
import tempfile
import unittest

import xspace_writer as W
from util import connect

BIG_DUR = 2 ** 31 + 5               # a dur kept outside the record (DUR32_BIG)
HUGE_DUR = 6 * 10 ** 9              # its exclusive time passes 2^32 ps


def nest(events):
    """Exclusive ps per name of events (name, off, dur), one line, by the
    §2 rule on exact times: an event is a child of the innermost open one
    that contains it."""
    order = sorted(events, key=lambda e: (e[1], -(e[1] + e[2])))
    excl, stack = {}, []
    for name, off, dur in order:
        while stack and off >= stack[-1][1] + stack[-1][2]:
            stack.pop()
        while stack and off + dur > stack[-1][1] + stack[-1][2]:
            stack.pop()
        if stack:
            excl[stack[-1][0]] -= dur
        excl[name] = dur
        stack.append((name, off, dur))
    return {k: max(v, 0) for k, v in excl.items()}


def device_line(prefix, base_off):
    """Nested device ops of one line: (name, off, dur) in time order."""
    p = prefix
    return [
        (p + "outer", base_off, 1000000),
        (p + "child1", base_off + 100000, 300000),
        (p + "child2", base_off + 500000, 200000),
        (p + "grandchild", base_off + 550000, 50000),
        (p + "big", base_off + 2000000, BIG_DUR),
        (p + "inbig", base_off + 2000010, 1000),
        (p + "huge", base_off + 10 ** 10, HUGE_DUR),
        (p + "inhuge", base_off + 10 ** 10 + 7, 1000000),
        (p + "after", base_off + 2 * 10 ** 10, 40000),
    ]


class Capture:
    """An XSpace of three planes: two TPUs (nested device ops, run_ids,
    a second line sharing the first's id, a line with zero and negative
    durations) and a host.  unsorted: where a line out of order goes
    (None, "first": the first line of the file, "late": a long line of
    the last TPU plane, after the others were done)."""

    def __init__(self, unsorted=None, long_n=3000):
        self.excl = {}          # device op name -> exclusive ps
        self.run_ids = {}       # run_id text -> events
        self.device_ops = {}    # device op name -> dur ps
        planes = []
        for dev in range(2):
            pb = W.PlaneBuilder("/device:TPU:%d" % dev, id=dev)
            lines = []
            evs = device_line("d%d." % dev, 0)
            if unsorted == "first" and dev == 0:
                evs = evs[1:2] + evs[:1] + evs[2:]     # child1 before outer
            lines.append(("XLA Ops", 1, evs, {"d%d.child1" % dev: "run-a", "d%d.huge" % dev: "run-b"}))
            # the same line id, its own track: overlapping events do not nest
            # in the first line's
            lines.append(("Async XLA Ops", 1, [("d%d.async" % dev, 100000, 100000)], {}))
            if dev == 1:
                # a long line (several batches), in order unless "late"
                long_evs = [("d1.long%d" % i, 5 * 10 ** 10 + i * 1000, 900) for i in range(long_n)]
                if unsorted == "late":
                    k = long_n - 10
                    long_evs[k], long_evs[k + 1] = long_evs[k + 1], long_evs[k]
                # run_ids on every 5th event, as often as 1 : 2 : 3
                runs = {n: ("run-0" if i % 30 == 0 else "run-1" if i % 30 in (5, 10) else "run-2")
                        for i, (n, _, _) in enumerate(long_evs) if i % 5 == 0}
                lines.append(("XLA Ops", 7, long_evs, runs))
            for lname, lid, events, runs in lines:
                out = []
                for name, off, dur in events:
                    st = [pb.stat("run_id", s=runs[name].encode())] if name in runs else []
                    out.append(pb.event(name, offset_ps=off, duration_ps=dur, stats=st))
                    self.device_ops[name] = dur
                for name, rid in runs.items():
                    self.run_ids[rid] = self.run_ids.get(rid, 0) + 1
                pb.line(id=lid, name=lname, timestamp_ns=1000 + dev, events=out)
                self.excl.update(nest(events))
            # zero and negative durations: left out, with a diagnostic each
            pb.line(id=3, name="Stream #3", timestamp_ns=2000, events=[
                pb.event("d%d.zero" % dev, offset_ps=10, duration_ps=0),
                pb.event("d%d.neg" % dev, offset_ps=20, duration_ps=-5),
                pb.event("d%d.kept" % dev, offset_ps=30, duration_ps=77)])
            self.excl["d%d.kept" % dev] = 77
            self.device_ops["d%d.kept" % dev] = 77
            planes.append(pb.build())
        hb = W.PlaneBuilder("/host:CPU", id=9)
        hb.line(id=1, name="python", timestamp_ns=500, events=[
            hb.event("h.step", offset_ps=0, duration_ps=10 ** 9),
            hb.event("h.inner", offset_ps=10, duration_ps=10 ** 6)])
        planes.append(hb.build())
        self.data = W.xspace(planes)


def import_capture(cap, threads=None):
    """Import cap in a fresh database: (op exclusive µs by name, op count
    by name, hot op exclusive µs by name from the v1 document, run_ids,
    diagnostic counts by kind, every profsum_agg_* row)."""
    with tempfile.TemporaryDirectory(prefix="profsum-early-") as tmp:
        path = os.path.join(tmp, "c.xplane.pb")
        with open(path, "wb") as f:
            f.write(cap.data)
        old = os.environ.get("PROFSUM_THREADS")
        if threads is not None:
            os.environ["PROFSUM_THREADS"] = threads
        db = connect()
        try:
            tid = db.execute("SELECT profsum_import(?, 'c')", (path,)).fetchone()[0]
            ops = {n: (x, c, r) for n, x, c, r in db.execute(
                "SELECT name, exclusive_duration, count, exclusive_ref FROM profsum_agg_op WHERE trace_id=?",
                (tid,))}
            doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
            run_ids = json.loads(db.execute("SELECT run_ids FROM profsum_trace WHERE trace_id=?",
                                            (tid,)).fetchone()[0])
            diags = dict(db.execute("SELECT kind, count(*) FROM profsum_agg_diagnostic "
                                    "WHERE trace_id=? GROUP BY kind", (tid,)).fetchall())
            tables = {}
            for (t,) in db.execute("SELECT name FROM sqlite_schema WHERE type='table' AND "
                                   "name LIKE 'profsum_agg%' ORDER BY 1").fetchall():
                tables[t] = sorted(db.execute("SELECT * FROM %s" % t).fetchall(), key=repr)
        finally:
            db.close()
            if threads is not None:
                if old is None:
                    del os.environ["PROFSUM_THREADS"]
                else:
                    os.environ["PROFSUM_THREADS"] = old
    doc.pop("generated_at_utc", None)
    doc.pop("source_path", None)            # the temporary directory's
    return ops, doc, run_ids, diags, tables


class EarlyOrderTest(unittest.TestCase):
    def check(self, cap):
        ops, doc, run_ids, diags, tables = import_capture(cap)
        # every device op's exclusive time, in µs, as the nesting gives it
        got = {n: x for n, (x, c, r) in ops.items()}
        want = {n: cap.excl[n] / 1e6 for n in cap.device_ops}
        self.assertEqual(got, want)
        self.assertTrue(all(c == 1 for x, c, r in ops.values()))
        # the document's hot ops (as many as its limit) have the reference's
        # exclusive times: its doubles' max(0, dur - children), within an
        # ulp or so of the exact ones (the table keeps both)
        ref = {n: r for n, (x, c, r) in ops.items()}
        hot = {h["name"]: h for h in doc["hot_ops"]}
        self.assertEqual(len(hot), min(len(want), 25))
        self.assertIn("d0.huge", hot)
        for name, h in hot.items():
            self.assertEqual(h["exclusive_duration"], ref[name], name)
            self.assertAlmostEqual(h["exclusive_duration"], want[name], delta=abs(want[name]) * 1e-12, msg=name)
            self.assertEqual(h["total_duration"], cap.device_ops[name] / 1e6, name)
        # run_ids: every event that has one, counted (the most frequent first)
        self.assertEqual(sorted(run_ids), sorted(cap.run_ids))
        counts = [cap.run_ids[r] for r in run_ids]
        self.assertEqual(counts, sorted(counts, reverse=True))
        # the left-out events
        self.assertEqual(diags.get("zero_duration"), 2)
        self.assertEqual(diags.get("negative_duration"), 2)
        # one thread: the same rows and document
        ops0, doc0, run_ids0, diags0, tables0 = import_capture(cap, threads="0")
        self.assertEqual((ops0, doc0, run_ids0, diags0), (ops, doc, run_ids, diags))
        self.assertEqual(tables0, tables)
        return ops, doc, tables

    def test_values(self):
        cap = Capture()
        # the values the fixture was built for
        self.assertEqual(cap.excl["d0.outer"], 500000)
        self.assertEqual(cap.excl["d0.child2"], 150000)
        self.assertEqual(cap.excl["d0.big"], BIG_DUR - 1000)
        self.assertGreaterEqual(cap.excl["d0.huge"], 2 ** 32)
        self.assertEqual(cap.excl["d1.async"], 100000)
        ops, doc, tables = self.check(cap)
        self.assertEqual(ops["d0.huge"][0], (HUGE_DUR - 1000000) / 1e6)
        self.assertEqual(ops["d1.big"][0], (BIG_DUR - 1000) / 1e6)

    def test_unsorted_first_line(self):
        # the file's first line out of order: nothing done early
        cap = Capture(unsorted="first")
        ops, doc, tables = self.check(cap)
        self.assertIn("xplane_unsorted_line", {r[3] for r in tables["profsum_agg_diagnostic"]})

    def test_unsorted_late_line(self):
        # lines done early, then a line found out of order after several
        # batches of it were swept: everything undone and ordered after
        # the read, with the same results as when no line was done early
        cap = Capture(unsorted="late")
        ops, doc, tables = self.check(cap)
        self.assertIn("xplane_unsorted_line", {r[3] for r in tables["profsum_agg_diagnostic"]})
        late, ordered = import_capture(cap), import_capture(Capture())
        self.assertEqual(late[0], ordered[0])                        # ops
        self.assertEqual(late[1]["hot_ops"], ordered[1]["hot_ops"])
        self.assertEqual(late[2], ordered[2])                        # run_ids

    def test_short_lines(self):
        # a long line of one batch only, and of a few events
        for n in (1, 2, 1000):
            with self.subTest(n=n):
                self.check(Capture(long_n=n))
                self.check(Capture(unsorted="late" if n >= 20 else None, long_n=n))

def rich_capture(unsorted_last):
    """Four planes of many lines whose names recur across lines and planes
    and keep coming new: device ops with steps, collectives, a stall name,
    XlaModule regions and flops; host threads with a compilation and
    "train" steps.  unsorted_last: the last line's two events swapped (the
    reader then orders every line after the read); they do not overlap, so
    every aggregate is the same either way."""
    planes = []
    for dev in range(3):
        pb = W.PlaneBuilder("/device:TPU:%d" % dev, id=dev)
        steps = [pb.event(str(s), offset_ps=s * 10 ** 7, duration_ps=10 ** 7 - 1000) for s in range(6)]
        pb.line(id=0, name="Steps", timestamp_ns=10 ** 6, events=steps)
        for k in range(12):
            evs = []
            for s in range(6):
                base = s * 10 ** 7 + k * 700000
                names = ["fusion.%d" % (k % 5), "all-reduce.%d" % (k % 3), "op.%d.%d" % (dev, k),
                         "Idle" if k % 4 == 0 else "copy.%d" % k]
                for i, n in enumerate(names):
                    st = [pb.stat("tf_op", s="jit_train/layer%d/%s" % (k % 3, n)),
                          pb.stat("flops", i64=1000 * (i + 1))]
                    evs.append(pb.event(n, offset_ps=base + i * 150000, duration_ps=100000 + 37 * k + i,
                                        stats=st))
            pb.line(id=100 + k, name="XLA Ops" if k < 10 else "Async XLA Ops", timestamp_ns=10 ** 6,
                    events=evs)
        mods = [pb.event("jit_train(%d)" % s, offset_ps=s * 10 ** 7, duration_ps=9 * 10 ** 6,
                         stats=[pb.stat("run_id", i64=s)]) for s in range(6)]
        pb.line(id=50, name="XLA Modules", timestamp_ns=10 ** 6, events=mods)
        planes.append(pb.build())
    hb = W.PlaneBuilder("/host:CPU", id=9)
    for t in range(8):
        evs = [hb.event("train" if t == 0 else "host.%d" % (t % 3), offset_ps=s * 10 ** 7,
                        duration_ps=5 * 10 ** 6, stats=[hb.stat("step_num", i64=s)]) for s in range(6)]
        evs.append(hb.event("backend_compile.%d" % t, offset_ps=7 * 10 ** 7, duration_ps=3 * 10 ** 6))
        if unsorted_last and t == 7:
            evs[-1], evs[-2] = evs[-2], evs[-1]
        hb.line(id=t + 1, name="thread %d" % t, timestamp_ns=10 ** 6 - 5, events=evs)
    planes.append(hb.build())
    return W.xspace(planes, hostnames=["h0"])


class LinesOrderedAsReadTest(unittest.TestCase):
    def load(self, data, threads=None):
        """What the import made of data, without what the swapped line
        changes: its quality warning and diagnostic, and the file's hash."""
        cap = Capture()
        cap.data = data
        ops, doc, run_ids, diags, tables = import_capture(cap, threads=threads)
        doc["trace_overview"].pop("quality_warnings")
        doc["trace_provenance"].pop("trace_sha256")
        tables.pop("profsum_agg_diagnostic")
        return ops, doc, run_ids, tables

    def test_same_as_after_the_read(self):
        # the same aggregates, document and tables whether the lines were
        # ordered as the capture was read or after the read
        early = self.load(rich_capture(False))
        ops, doc = early[0], early[1]
        self.assertEqual(len(ops), 3 * 12 + 5 + 3 + 1 + 9)    # op.d.k, fusion, all-reduce, Idle, copy
        self.assertEqual(doc["trace_overview"]["num_complete_events"], 956)
        self.assertEqual(doc["step_time"]["all_steps"]["count"], 6)
        self.assertEqual([(c["collective"], c["count"]) for c in doc["communication_ops"]],
                         [("all-reduce", 216)])
        tb = doc["time_breakdown"]
        for cat in ("compute", "communication", "stall", "host"):
            self.assertGreater(tb[cat]["total_duration"], 0, cat)
        self.assertEqual(tb["host"]["total_duration"], 8 * (6 * 5.0 + 3.0))
        late = self.load(rich_capture(True))
        for a, b, what in zip(early, late, ("ops", "doc", "run_ids", "tables")):
            self.assertEqual(a, b, what)
        self.assertEqual(self.load(rich_capture(False), threads="0"), early)
        self.assertEqual(self.load(rich_capture(True), threads="0"), early)

if __name__ == "__main__":
    unittest.main()
