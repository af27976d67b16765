"""The summary decides order, nesting (§2) and gaps (§4.8) as the reference
does: on the doubles Python's float() gives for the ts and dur texts, with
end = ts + dur computed in doubles (summary_engine.c, "Float decisions").
The tables' sums stay exact picoseconds; the document shows the
reference's sums where they can differ by more than rounding.  The global breakdown (§4.4, exclusive_global)
is the reference's sweep over those doubles.

Run: /usr/bin/python3 tests/run.py test_float_decisions.py
"""
import json
import math
import os
import random
import unittest

from util import OOM_SQL, connect, run_oom_sql, TempDir

DEV = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
       {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "XLA Ops"}}]


def trace_text(events):
    """A trace whose X events carry their ts/dur texts verbatim (strings of
    digits put into the JSON as numbers)."""
    parts = [json.dumps(m) for m in DEV]
    for name, ts, dur in events:
        parts.append('{"ph":"X","pid":1,"tid":2,"name":%s,"ts":%s,"dur":%s}'
                     % (json.dumps(name), ts, dur))
    return '{"displayTimeUnit":"ns","traceEvents":[' + ",".join(parts) + "]}"


def exclusive_pops(ev):
    """§2's stack walk over ev = [(name, ts, dur)] (floats) in the order
    (ts, -end): (index, exclusive time) of each event as the stack pops it,
    the exclusive time max(0, dur - its children's durs) in doubles."""
    order = sorted(range(len(ev)), key=lambda i: (ev[i][1], -(ev[i][1] + ev[i][2])))
    pops, stack = [], []

    def fin():
        i, child = stack.pop()
        pops.append((i, max(0.0, ev[i][2] - child)))
        if stack:
            stack[-1][1] += ev[i][2]
    for i in order:
        ts, end = ev[i][1], ev[i][1] + ev[i][2]
        while stack and ts >= ev[stack[-1][0]][1] + ev[stack[-1][0]][2]:
            fin()
        while stack and end > ev[stack[-1][0]][1] + ev[stack[-1][0]][2]:
            fin()
        stack.append([i, 0.0])
    while stack:
        fin()
    return pops


def reference(events):
    """§2 exclusive time and §4.8 gap counts with Python floats, as the
    reference computes them: name → [exclusive sum, gap count, gap sum]."""
    ev = [(name, float(ts), float(dur)) for name, ts, dur in events]
    out = {}
    for name, _, _ in ev:
        out.setdefault(name, [0.0, 0, 0.0])
    for i, ex in exclusive_pops(ev):
        out[ev[i][0]][0] += ex
    gorder = sorted(range(len(ev)), key=lambda i: (ev[i][1], ev[i][1] + ev[i][2]))
    prev = ev[gorder[0]][1] + ev[gorder[0]][2]
    for i in gorder[1:]:
        ts, end = ev[i][1], ev[i][1] + ev[i][2]
        if ts > prev:
            out[ev[i][0]][1] += 1
            out[ev[i][0]][2] += ts - prev
        prev = max(prev, end)
    return out


def profsum(events, td):
    db = imported(events, td, {"hot_op_limit": 100000})
    d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
    db.close()
    out = {}
    for h in d["hot_ops"]:
        out.setdefault(h["name"], [0.0, 0, 0.0])[0] = h["exclusive_duration"]
    for g in d["gap_before_ops"]:
        out.setdefault(g["name"], [0.0, 0, 0.0])[1:] = [g["count"], g["total_gap_duration"]]
    return out


def forest_of(rng, cap):
    """forest(t0, t1, depth, out, decimals): nested (name, ts, dur) events
    laid out left to right inside [t0, t1), children inside their parents,
    some ending with their parent, up to cap events in out."""
    def forest(t0, t1, depth, out, decimals):
        t = t0
        while t < t1 and len(out) < cap:
            if rng.random() < 0.3:
                t += rng.choice([0.0, 0.1, 1.3])
                continue
            end = min(t1, t + rng.choice([0.7, 3.3, 12.345678901, 55.295, 140.5, 400.25]))
            if depth and rng.random() < 0.2:
                end = t1                     # ends with its parent
            dur = end - t
            tss = repr(t) if decimals is None else "%.*f" % (decimals, t)
            durs = repr(dur) if decimals is None else "%.*f" % (decimals, dur)
            if float(durs) > 0:
                out.append(("op%d" % rng.randrange(8), tss, durs))
                if depth < 6 and dur > 1.0:
                    forest(t, end, depth + 1, out, decimals)
            t = end
        return out
    return forest


def time_order(events):
    """events in the order of §2: ts, then the longer first (a stable sort
    of the texts' doubles)."""
    return sorted(events, key=lambda e: (float(e[1]), -(float(e[1]) + float(e[2]))))


def end_order(events):
    """events as a writer that puts each out when it ends writes them."""
    return sorted(events, key=lambda e: (float(e[1]) + float(e[2]), -float(e[1])))


def imported(events, td, opts=None, n=[0]):
    """A connection to a new database where events were imported as 'x'
    (with the import options opts, a dict)."""
    n[0] += 1
    path = td.write("n%d.json" % n[0], trace_text(events))
    db = connect()
    db.execute("SELECT profsum_import(?, 'x', ?)", (path, json.dumps(opts or {})))
    return db


def exact_facts(db):
    """The facts of the check on exact times of db's import:
    exact_breakdown_total, float_nesting_events, float_nesting_moved."""
    return dict(db.execute("SELECT name, value FROM profsum_agg_fact WHERE name IN "
                           "('exact_breakdown_total', 'float_nesting_events', 'float_nesting_moved')"))


def close(a, b, mag):
    """Equal within the reference's own arithmetic: relative 1e-9, or the
    doubles' rounding at the trace's magnitude, or a picosecond (texts with
    more than 6 decimals are rounded to one)."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=2e-6 + 8 * math.ulp(mag))


def global_reference(events):
    """§4.4's exclusive_global sweep in Python floats, for one device-op
    line: compute/communication by name, the window over compute."""
    ev = []
    for name, ts, dur in events:
        t = float(ts)
        ev.append((t, t + float(dur), "communication" if name.startswith("all-reduce") else "compute"))
    out = {"compute": 0.0, "communication": 0.0, "stall": 0.0, "total": 0.0}
    comp = [e for e in ev if e[2] == "compute"]
    if not comp:
        return out
    ws, we = min(e[0] for e in comp), max(e[1] for e in comp)
    if we <= ws:
        return out
    pts = []
    for s, t, c in ev:
        s, t = max(s, ws), min(t, we)
        if t > s:
            pts += [(s, 1, c), (t, -1, c)]
    pts.sort(key=lambda p: (p[0], p[1]))
    act = {"compute": 0, "communication": 0}
    cur = ws

    def attr(length):
        if length <= 0:
            return
        if act["communication"]:
            out["communication"] += length
        elif act["compute"]:
            out["compute"] += length
        else:
            out["stall"] += length
    for t, d, c in pts:
        attr(t - cur)
        cur = t
        act[c] += d
    attr(we - cur)
    out["total"] = we - ws
    return out


class FloatDecisions(unittest.TestCase):
    def check(self, events, td):
        want, got = reference(events), profsum(events, td)
        mag = max(abs(float(ts)) + abs(float(dur)) for _, ts, dur in events)
        for name, (ex, n, gap) in want.items():
            g = got.get(name, [0.0, 0, 0.0])
            self.assertTrue(close(ex, g[0], mag), (name, "exclusive", ex, g[0], events))
            self.assertEqual(n, g[1], (name, "gap count", events))
            self.assertTrue(close(gap, g[2], mag), (name, "gap total", gap, g[2], events))

    def test_child_ending_with_its_parent_in_decimals(self):
        # exactly nested in decimals; in doubles fusion.2 ends one ulp after
        # while.1 (1929371.9749999999 < 1929371.975): a partial overlap, a root
        ev = [("while.1", "1929316.68", "55.295"), ("fusion.2", "1929334.087", "37.888")]
        with TempDir() as td:
            got = profsum(ev, td)
            self.assertEqual(got["while.1"][0], 55.295)
            self.assertEqual(got["fusion.2"][0], 37.888)
            self.check(ev, td)

    def test_abutting_events_leave_a_gap_in_doubles(self):
        ev = [("fusion.1", "1929316.68", "55.295"), ("fusion.2", "1929371.975", "1")]
        with TempDir() as td:
            got = profsum(ev, td)
            self.assertEqual(got["fusion.2"][1], 1)
            self.assertEqual(got["fusion.2"][2], float("1929371.975") - (1929316.68 + 55.295))
            self.assertEqual(got["fusion.2"][2], 2.3283064365386963e-10)
            self.check(ev, td)

    def test_seventeen_digit_texts(self):
        # converted XPlanes write µs as 17-digit doubles (more than 6 decimals:
        # rounded to a picosecond, the decisions still follow the texts)
        ev = [("a", "45317.129999999997", "10.000000000000002"),
              ("b", "45317.130000000001", "9.9999999999999982"),
              ("c", "45327.130000000005", "1"),
              ("d", "45327.129999999997", "0.5")]
        with TempDir() as td:
            self.check(ev, td)

    def test_two_rounded_texts_end_on_the_same_double(self):
        # each text is a half-ps tie: in picoseconds the ends are 2 ps apart
        # (2,000,006 vs 2,000,004), in doubles both are 2.000005: a nests in b
        ev = [("b", "1.0000005", "1.0000045"), ("a", "1.0000015", "1.0000035")]
        with TempDir() as td:
            got = profsum(ev, td)
            self.assertAlmostEqual(got["b"][0], 1e-06, delta=2e-6)
            self.check(ev, td)

    def test_epoch_gap_max_at_least_its_average(self):
        # at epoch-µs magnitudes a payload can have an exact gap and a gap
        # only the doubles see; its max is the larger of the two
        ev = [("Q", "1700000000000000.1", "1.03"), ("P", "1700000000000001.13", "1.0"),
              ("S", "1700000000000003.1", "1.03"), ("P", "1700000000000004.130001", "1.0")]
        with TempDir() as td:
            path = td.write("e.json", trace_text(ev))
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (path,))
            d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
            db.close()
        p = [g for g in d["gap_before_ops"] if g["name"] == "P"][0]
        self.assertEqual(p["count"], 2)
        self.assertGreaterEqual(p["max_gap_duration"], p["avg_gap_duration"])

    def test_global_breakdown_in_the_reference_doubles(self):
        # at epoch magnitudes the doubles of ts and ts + dur are far from the
        # exact times (ulp 0.25 µs at 1.7e15): the window, the clipping and
        # the sweep are the reference's, in those doubles
        cases = [
            [("fusion.1", "1700000000.1", "0.7")],
            [("a.1", "1700000000000000.0", "10.5"), ("b.1", "1700000000000010.5", "0.106"),
             ("c.1", "1700000000000010.8", "3.3"), ("d.1", "1700000000000014.0", "1")],
            [("a.1", "1700000000000000.123", "10.5"), ("b.1", "1700000000000010.623", "0.106"),
             ("all-reduce.1", "1700000000000010.7", "2.2"), ("c.1", "1700000000000010.729", "3.3"),
             ("d.1", "1700000000000014.1", "1")],
        ]
        rng = random.Random(20261123)
        for _ in range(80):
            base = rng.choice(["0", "0.01", "1929316.68", "1700000000.1", "1700000000000000.0"])
            ev, t = [], float(base)
            for k in range(rng.randint(2, 25)):
                t += rng.choice([0.0, 0.1, 0.7, 1.3, 5.0])
                name = rng.choice(["fusion.%d" % k, "all-reduce.%d" % k, "copy.%d" % k])
                ev.append((name, repr(t), rng.choice(["0.7", "0.1", "2.2", "10.5", "0.106"])))
            cases.append(ev)
        with TempDir() as td:
            for i, ev in enumerate(cases):
                with self.subTest(case=i, events=ev[:3]):
                    path = td.write("g%d.json" % i, trace_text(ev))
                    db = connect()
                    db.execute("SELECT profsum_import(?, 'x')", (path,))
                    d = json.loads(db.execute("SELECT profsum_summary_json('x', ?)",
                                              ('{"breakdown_mode": "exclusive_global"}',)).fetchone()[0])
                    db.close()
                    tb = d["time_breakdown"]
                    want = global_reference(ev)
                    self.assertEqual(tb["duration_basis"], "exclusive_duration_global_timeline")
                    # the same doubles; added as unions, not piece by piece
                    # in sweep order, so equal up to the last digits (the
                    # spec's "compare with ~1e-9 relative tolerance"): the
                    # exact times would miss by up to 0.25 µs here
                    for k in ("compute", "communication", "stall"):
                        self.assertTrue(math.isclose(tb[k]["total_duration"], want[k],
                                                     rel_tol=1e-12, abs_tol=1e-9),
                                        (k, tb[k]["total_duration"], want[k]))
                    self.assertEqual(tb["total_duration"], want["total"])

    def test_random_near_ties_against_python_floats(self):
        rng = random.Random(20261122)
        with TempDir() as td:
            for case in range(40):
                base = rng.choice([0.0, 1929316.68, 45317.13, 8203995.8386, 1.7e9, 1.7e15])
                decimals = rng.choice([3, 6, 9, None])     # None: Python repr (17 digits)
                events, t = [], base
                for k in range(rng.randint(5, 40)):
                    dur = rng.choice([55.295, 37.888, 0.001, 1.1, 0.7, 0.1, 3.3, 12.345678901])
                    if decimals is not None:
                        dur = round(dur, decimals)
                    kind = rng.random()
                    if kind < 0.3 and events:       # end exactly where an earlier one ends
                        _, pts, pdur = events[rng.randrange(len(events))]
                        end = float(pts) + float(pdur)
                        ts = end - dur
                    elif kind < 0.6 and events:     # start exactly at an earlier end
                        _, pts, pdur = events[-1]
                        ts = float(pts) + float(pdur)
                    else:
                        ts = t + rng.choice([0.0, 0.1, 1.0, 7.3])
                    if ts < 0:
                        ts = 0.0
                    t = max(t, ts)
                    if decimals is None:
                        tss, durs = repr(ts), repr(dur)
                    else:
                        tss, durs = "%.*f" % (decimals, ts), "%.*f" % (decimals, dur)
                    if float(durs) <= 0:
                        continue
                    events.append(("op%d.%d" % (rng.randrange(6), k), tss, durs))
                if events:
                    self.check(events, td)


    def test_track_written_in_runs(self):
        """A track whose events come as a few sequences, each in time order
        (as PyTorch's profiler writes a step's Python events after its
        operators), or with some events out of place, or shuffled (more
        runs than the merge of runs takes): ordered as the reference's
        doubles order them, near ties included."""
        rng = random.Random(20261204)
        with TempDir() as td:
            for case in range(12):
                base = rng.choice([1929316.68, 1.7e9, 1.7e15])
                decimals = rng.choice([3, 9, None])
                events, t = [], base
                for k in range(rng.choice([300, 700, 2600])):
                    dur = rng.choice([55.295, 0.001, 1.1, 0.7, 3.3, 12.345678901])
                    if decimals is not None:
                        dur = round(dur, decimals)
                    if rng.random() < 0.4 and events:   # start at an earlier end: near ties
                        _, pts, pdur = events[rng.randrange(len(events))]
                        ts = float(pts) + float(pdur)
                    else:
                        ts = t + rng.choice([0.0, 0.1, 1.0, 7.3])
                    t = max(t, ts)
                    tss = repr(ts) if decimals is None else "%.*f" % (decimals, ts)
                    durs = repr(dur) if decimals is None else "%.*f" % (decimals, dur)
                    if float(durs) > 0:
                        events.append(("op%d" % rng.randrange(8), tss, durs))
                events = time_order(events)
                shape = case % 3
                if shape == 0:                  # a few runs, each in order
                    runs = [[] for _ in range(rng.randint(2, 6))]
                    for e in events:
                        runs[rng.randrange(len(runs))].append(e)
                    events = [e for r in runs for e in r]
                elif shape == 1:                # a few events out of place
                    for _ in range(rng.randint(1, 20)):
                        e = events.pop(rng.randrange(len(events)))
                        events.insert(rng.randrange(len(events) + 1), e)
                else:                           # shuffled
                    rng.shuffle(events)
                self.check(events, td)

    def test_track_written_as_each_event_ends(self):
        """A track written as PyTorch's profiler and Kineto write a thread:
        each event when it ends, so a parent after its children (hundreds
        of runs of one or two events, more than the merge of runs takes),
        near ties included (children that end with their parent or start
        at a sibling's end), then maybe a sequence of short calls in time
        order over the same span (as Kineto writes a thread's CUDA runtime
        calls after its operators: set aside, sorted, merged back), or the
        same events written backwards (an order the insertion gives up
        on): ordered as the reference's doubles order them."""
        rng = random.Random(20261205)
        forest = forest_of(rng, 6000)
        with TempDir() as td:
            flips = 0
            for case in range(8):
                base = [1.7e15, 1929316.68, 1.7e9][case % 3]
                decimals = rng.choice([3, 9, None])
                events = end_order(forest(base, base + 30000.0, 0, [], decimals))
                if case % 4 == 2:
                    # then short calls in time order across the same span
                    # (Kineto's CUDA runtime events after a thread's operators)
                    calls = sorted(rng.uniform(base, base + 30000.0) for _ in range(2000))
                    for k, t in enumerate(calls):
                        if k % 50 == 0:             # one that starts at an op's end
                            _, pts, pdur = events[rng.randrange(len(events))]
                            t = float(pts) + float(pdur)
                        tss = repr(t) if decimals is None else "%.*f" % (decimals, t)
                        durs = "0.5" if decimals != 9 else "0.000000700"
                        events.append(("call%d" % rng.randrange(3), tss, durs))
                if case % 4 == 3:
                    events.reverse()
                starts = [float(ts) for _, ts, _ in events]
                runs = 1 + sum(1 for i in range(1, len(starts)) if starts[i] < starts[i - 1])
                self.assertGreater(runs, len(events) // 8, case)
                self.check(events, td)
                # the check on exact times runs when a decision in doubles
                # went otherwise, whatever order the sort met the events in
                dbs = [imported(evs, td) for evs in (events, time_order(events))]
                got, want = [exact_facts(db) for db in dbs]
                for db in dbs:
                    db.close()
                self.assertAlmostEqual(got["exact_breakdown_total"], want["exact_breakdown_total"],
                                       delta=1e-6, msg=case)
                flips += want["float_nesting_events"] > 0
            self.assertGreater(flips, 0)

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_end_order_sort_out_of_memory(self):
        """The end-order sort with every allocation of the import made to
        fail in turn (the ASan build looks at what it set aside, and grows
        its buffer, every 16 events): an error or the same result each
        time, nothing leaked.  Tracks in end order with calls appended
        (events set aside, sorted, merged back), and backwards (given up)."""
        rng = random.Random(20261206)
        forest = forest_of(rng, 300)
        with TempDir() as td:
            events = end_order(forest(1.7e9, 1.7e9 + 3000.0, 0, [], 3))
            for t in sorted(rng.uniform(1.7e9, 1.7e9 + 3000.0) for _ in range(80)):
                events.append(("call", "%.3f" % t, "0.5"))
            a = td.write("ends.json", trace_text(events))
            b = td.write("back.json", trace_text(events[::-1]))
            run_oom_sql(self, ["SELECT profsum_import('%s','x')" % a,
                               "SELECT profsum_import('%s','y')" % b])

    def test_sparse_text_doubles_over_many_events(self):
        """A few thousand events where only some, at irregular places (the
        first and last of a group of 64, long stretches without any, runs of
        them), carry a text whose double differs from its picoseconds':
        each is found again for its own decisions, none for another's."""
        rng = random.Random(20261202)
        special = set([0, 63, 64, 65, 127, 128, 640, 641, 2047, 2048, 2049])
        special |= set(rng.sample(range(2100, 2900), 60)) | set(range(3000, 3070))
        events, t = [], 1929316.68
        for k in range(3200):
            if k in special:
                # 17-digit texts of float sums: abutting in decimals, a gap
                # or an overlap of an ulp in doubles
                dur = 55.295
                ts = t
                tss, durs = repr(ts), repr(dur)
                t = ts + dur
            else:
                tss, durs = "%.3f" % t, "1.250"
                t = float(tss) + 1.25
            events.append(("op%d" % (k % 5), tss, durs))
        with TempDir() as td:
            self.check(events, td)


COLLECTIVES = ("all-reduce", "all-gather")


def trace_text_args(events):
    """trace_text with an args.tf_op per event: (name, ts, dur, tf_op)."""
    parts = [json.dumps(m) for m in DEV]
    for name, ts, dur, tf in events:
        parts.append('{"ph":"X","pid":1,"tid":2,"name":%s,"ts":%s,"dur":%s,"args":{"tf_op":%s}}'
                     % (json.dumps(name), ts, dur, json.dumps(tf)))
    return '{"displayTimeUnit":"ns","traceEvents":[' + ",".join(parts) + "]}"


def reference_orders(events):
    """The order of hot_ops (§4.5), communication_ops (§4.7) and
    hierarchical_regions (§4.9, with its pruning) as the reference's
    float sums give them, for one device-op line whose events are
    (name, ts, dur, tf_op) with tf_op of plain '/'-separated parts."""
    ev = [(name, float(ts), float(dur), tf) for name, ts, dur, tf in events]
    order = sorted(range(len(ev)), key=lambda i: (ev[i][1], -(ev[i][1] + ev[i][2])))
    excl = [0.0] * len(ev)
    stack = []

    def fin():
        i, child = stack.pop()
        excl[i] = max(0, ev[i][2] - child)
        if stack:
            stack[-1][1] += ev[i][2]
    for i in order:
        ts, end = ev[i][1], ev[i][1] + ev[i][2]
        while stack and ts >= ev[stack[-1][0]][1] + ev[stack[-1][0]][2]:
            fin()
        while stack and end > ev[stack[-1][0]][1] + ev[stack[-1][0]][2]:
            fin()
        stack.append([i, 0.0])
    while stack:
        fin()
    ops, comm, reg = {}, {}, {}
    for i in order:                         # processing order
        name, _, dur, tf = ev[i]
        o = ops.setdefault(name, [0.0, 0.0])
        o[0] += excl[i]
        o[1] += dur
        for c in COLLECTIVES:
            if name.startswith(c):
                comm[c] = comm.get(c, 0.0) + excl[i]
                break
        parts = tf.split("/")
        for d in range(1, len(parts) + 1):
            r = reg.setdefault("=>".join(parts[:d]), [0.0, 0.0])
            r[0] += excl[i]
            if d == len(parts):
                r[1] += excl[i]
    children = {}
    for p in reg:
        if "=>" in p:
            children.setdefault(p.rsplit("=>", 1)[0], []).append(p)
    removed = set()
    for p in reg:
        ch = children.get(p, [])
        if "=>" in p and len(ch) == 1:
            a, b = reg[p][0], reg[ch[0]][0]
            if abs(a - b) <= max(1e-9 * max(abs(a), abs(b)), 1e-6):
                removed.add(p)
    hot = sorted(ops, key=lambda n: (-ops[n][0], -ops[n][1], n))
    coll = sorted(comm, key=lambda c: (-comm[c], c))
    regions = sorted((p for p in reg if p not in removed), key=lambda p: (-reg[p][0], -reg[p][1], p))
    # §4.6: the families' exclusive sums add the hot ops' in their order
    db = connect()
    fam = {}
    for name in hot:
        f = db.execute("SELECT profsum_semantic_family(?)", (name,)).fetchone()[0]
        fam[f] = fam.get(f, 0.0) + ops[name][0]
    db.close()
    families = sorted(fam, key=lambda f: (-fam[f], f))
    return hot, coll, regions, families


def summary_of(td, name, data):
    """The v1 document of the trace `data` (text or bytes) written to td."""
    path = td.write(name, data)
    db = connect()
    db.execute("SELECT profsum_import(?, 'x')", (path,))
    d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
    db.close()
    return d


class OverviewRange(unittest.TestCase):
    """trace_overview.profile_start_ts / profile_end_ts are the reference's
    min ts and max ts + dur in doubles (§4.1), not the exact range."""

    def overview(self, events, td, n=[0]):
        n[0] += 1
        d = summary_of(td, "r%d.json" % n[0], trace_text(events))
        return d["trace_overview"]["profile_start_ts"], d["trace_overview"]["profile_end_ts"]

    def want(self, events):
        # over the accepted complete events: those with dur > 0 (§1.3)
        kept = [(float(ts), float(dur)) for _, ts, dur in events if float(dur) > 0]
        if not kept:
            return None, None
        return min(ts for ts, _ in kept), max(ts + dur for ts, dur in kept)

    def test_end_rounds_as_a_double_sum(self):
        ev = [("a", "0.1", "0.2")]
        with TempDir() as td:
            start, end = self.overview(ev, td)
            self.assertEqual(end, 0.30000000000000004)      # 0.1 + 0.2, not 0.3
            self.assertEqual(start, 0.1)
            self.assertEqual((start, end), self.want(ev))

    def test_the_largest_double_end_is_not_the_largest_exact_end(self):
        # exact ends 0.3 and 0.3: the one written as 0.1 + 0.2 is larger in
        # doubles; b's exact end is the last in file order
        ev = [("a", "0.1", "0.2"), ("b", "0.25", "0.05")]
        with TempDir() as td:
            self.assertEqual(self.overview(ev, td), self.want(ev))
            self.assertEqual(self.overview(ev, td)[1], 0.30000000000000004)

    def test_random_against_python_floats(self):
        rng = random.Random(20261201)
        with TempDir() as td:
            for _ in range(40):
                ev = []
                for k in range(rng.randint(1, 12)):
                    ts = "%d.%06d" % (rng.choice([0, 1, 1929316, 1700000000]), rng.randrange(10**6))
                    dur = rng.choice(["0.1", "0.2", "0.3", "0.7", "55.295", "0", "1e-3",
                                      "%d.%06d" % (rng.randrange(100), rng.randrange(10**6))])
                    ev.append(("op%d" % k, ts, dur))
                self.assertEqual(self.overview(ev, td), self.want(ev), ev)


class GlobalBreakdown(unittest.TestCase):
    """exclusive_global mode (§4.4): the reference adds the stretches of the
    sweep, each positive; profsum's differences of union lengths must not
    come out below 0 where its rounding differs."""

    def test_no_negative_share(self):
        import xspace_writer as W
        p = W.PlaneBuilder("/device:GPU:1", id=2)
        p.line(id=14, name="Stream #14(compute)", timestamp_ns=1000, events=[
            p.event("loop_add_fusion", offset_ps=7074720, duration_ps=71923),
            p.event("redzone_checker", offset_ps=7146643, duration_ps=3000000),
            p.event("ncclDevKernel_AllReduce_Sum_f32_RING_LL", offset_ps=10146643, duration_ps=500631),
            p.event("gemm_fusion_dot_3", offset_ps=10385492, duration_ps=207999999),
            p.event("triton_softmax_2", offset_ps=93035908, duration_ps=263999999)])
        with TempDir() as td:
            path = td.write("g.xplane.pb", W.xspace([p.build()]))
            db = connect()
            db.execute("SELECT profsum_import(?, 'g', '{\"breakdown_mode\": \"exclusive_global\"}')", (path,))
            d = json.loads(db.execute("SELECT profsum_summary_json('g')").fetchone()[0])
        tb = d["time_breakdown"]
        for cat in ("compute", "communication", "host", "stall", "other"):
            self.assertGreaterEqual(tb[cat]["total_duration"], 0.0, cat)
            self.assertGreaterEqual(tb[cat]["share_of_total"], 0.0, cat)
        # the window is the compute ops' span; one all-reduce inside it
        self.assertEqual(tb["total_duration"], 349.961187)          # the reference's
        self.assertAlmostEqual(tb["stall"]["total_duration"], 0.0, places=12)


class CandidateCuts(unittest.TestCase):
    """The candidates' cuts (§4.12: communication share >= 0.15, stall
    >= 0.20, ...) are decided on the breakdown as the reference's doubles
    add it: an exact share of 0.2 can be 0.19999999999999996 there."""

    def candidates(self, events, td, n=[0]):
        n[0] += 1
        d = summary_of(td, "c%d.json" % n[0], trace_text(events))
        return [c["candidate_id"] for c in d["optimization_candidates"]], d

    @staticmethod
    def stall_share(events):
        """The reference's stall share of sequential device ops: each
        category's durs added in event order, then the five totals."""
        cat = {"compute": 0.0, "stall": 0.0}
        for name, _, dur in events:
            cat["stall" if name.startswith("dependency-wait") else "compute"] += float(dur)
        total = 0.0 + cat["compute"] + 0.0 + 0.0 + cat["stall"] + 0.0
        return cat["stall"] / total

    def test_small_trace_at_the_cut(self):
        ev = [("fusion.1", "0", "0.1"), ("fusion.2", "1", "0.02"), ("dependency-wait.1", "2", "0.03")]
        self.assertEqual(self.stall_share(ev), 0.19999999999999996)
        with TempDir() as td:
            ids, d = self.candidates(ev, td)
            self.assertNotIn("stall-heavy", ids)       # the exact share is 0.2
            # the document shows the reference's sums too
            self.assertEqual(d["time_breakdown"]["stall"]["share_of_total"], 0.19999999999999996)

    def test_large_trace_at_the_cut(self):
        # 70,000 events (past the small-trace rule): four ops of 0.1 µs, then
        # a wait of 0.1 µs, over and over: the exact stall share is 0.2, the
        # reference's 0.1999999999998985, so no stall-heavy candidate
        ev = []
        for i in range(14000):
            for k in range(4):
                ev.append(("fusion.%d" % k, "%d" % (i * 5 + k), "0.1"))
            ev.append(("dependency-wait.1", "%d" % (i * 5 + 4), "0.1"))
        share = self.stall_share(ev)
        self.assertLess(share, 0.2)
        with TempDir() as td:
            ids, d = self.candidates(ev, td)
            self.assertEqual("stall-heavy" in ids, share >= 0.2)
            # near the cut the engine made the reference's sums: the
            # document shows them (the exact share is 0.2)
            self.assertEqual(d["time_breakdown"]["stall"]["share_of_total"], share)

    def test_balanced_shares_printed_from_the_reference_sums(self):
        # compute 0.1 + 0.2 on two devices and 4.5 µs elsewhere: the
        # reference's compute share is 0.30000000000000004 / 4.800000000000001,
        # 6.3 % where the exact 0.0625 prints 6.2 %
        events = [{"ph": "M", "name": "process_name", "pid": p, "args": {"name": "/device:TPU:%d" % (p - 1)}}
                  for p in (1, 2)]
        events += [{"ph": "M", "name": "thread_name", "pid": p, "tid": 2, "args": {"name": "XLA Ops"}} for p in (1, 2)]
        text = json.dumps({"traceEvents": events})[:-2] + (
            ',{"ph":"X","pid":1,"tid":2,"name":"fusion.a","ts":0,"dur":0.1}'
            ',{"ph":"X","pid":2,"tid":2,"name":"fusion.b","ts":0,"dur":0.2}'
            ',{"ph":"X","pid":3,"tid":1,"name":"opx","ts":0,"dur":4.5}]}')
        compute = 0.0 + 0.1 + 0.2
        total = 0.0 + compute + 0.0 + 0.0 + 0.0 + 4.5
        with TempDir() as td:
            d = summary_of(td, "b.json", text)
        c = d["optimization_candidates"]
        self.assertEqual([x["candidate_id"] for x in c], ["no-dominant-bottleneck"])
        self.assertEqual(c[0]["evidence"][0], "Compute: {:.1%}".format(compute / total))
        self.assertEqual(c[0]["evidence"][0], "Compute: 6.3%")

    def test_rounded_texts_in_a_large_trace(self):
        # texts of seven decimals are rounded to the picosecond: 0.0999996
        # µs is kept as 100,000 ps, so the exact stall share is 0.2000004;
        # the reference's doubles give 0.19999976: no stall-heavy
        ev = []
        for i in range(14000):
            for k, dur in enumerate(("0.099999", "0.1", "0.1", "0.1")):
                ev.append(("fusion.%d" % k, "%d" % (i * 5 + k), dur))
            ev.append(("dependency-wait.1", "%d" % (i * 5 + 4), "0.0999996"))
        share = self.stall_share(ev)
        self.assertLess(share, 0.2)
        with TempDir() as td:
            ids, d = self.candidates(ev, td)
        self.assertEqual(d["time_breakdown"]["stall"]["share_of_total"], share)
        self.assertNotIn("stall-heavy", ids)

    def test_sub_picosecond_durations_in_a_large_trace(self):
        # 70,000 durs of 1e-7 µs: every one rounds to 0 ps, so the exact
        # breakdown is empty, while the reference's doubles make a stall
        # share of 0.5: its stall-heavy candidate must be there too
        ev = [("dependency-wait.1" if i % 2 else "fusion.1", "%d" % i, "0.0000001") for i in range(70000)]
        with TempDir() as td:
            ids, d = self.candidates(ev, td)
        self.assertIn("stall-heavy", ids)
        c = [x for x in d["optimization_candidates"] if x["candidate_id"] == "stall-heavy"][0]
        self.assertEqual(c["evidence"][0], "Stall share: 50.0%")

    def test_breakdown_sums_past_64_bits(self):
        # five device ops of 2^61 ps on five lines: each category's exclusive
        # sum passes 2^63 ps; the breakdown and the candidates stay right
        # (70,000 events on a Steps line make the trace a large one)
        dur = "2305843009213.693"
        events = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
                  {"ph": "M", "name": "thread_name", "pid": 1, "tid": 9, "args": {"name": "Steps"}}]
        events += [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": "XLA Ops"}}
                   for t in range(1, 6)]
        parts = [json.dumps(m) for m in events]
        parts += ['{"ph":"X","pid":1,"tid":%d,"name":"fusion.1","ts":0,"dur":%s,'
                  '"args":{"tf_op":"jit(f)/dot"}}' % (t, dur) for t in range(1, 6)]
        parts += ['{"ph":"X","pid":1,"tid":9,"name":"%d","ts":%d,"dur":1}' % (i, i) for i in range(70000)]
        text = '{"traceEvents":[' + ",".join(parts) + "]}"
        with TempDir() as td:
            d = summary_of(td, "big.json", text)
        tb = d["time_breakdown"]
        self.assertAlmostEqual(tb["total_duration"] / (5 * float(dur)), 1.0, places=12)
        self.assertEqual(tb["compute"]["share_of_total"], 1.0)
        c = d["optimization_candidates"]
        self.assertEqual([(x["candidate_id"], x["evidence"]) for x in c],
                         [("single-hot-op", ["Top op: fusion.1", "Top op exclusive duration: 11529215046068.465",
                                             "Top op share: 100.0%"])])      # the reference's
        # one op's sums pass 2^63 ps as well, and so do its regions'
        op = d["hot_ops"][0]
        self.assertEqual((op["name"], op["count"]), ("fusion.1", 5))
        self.assertAlmostEqual(op["total_duration"] / (5 * float(dur)), 1.0, places=12)
        self.assertAlmostEqual(op["exclusive_duration"] / (5 * float(dur)), 1.0, places=12)

    def test_xplane_host_lines_add_their_line_totals(self):
        # §6.1: a host line's stall time is its own sum, added once at its
        # end (3 and 8 waits of 0.1 µs: 0.30000000000000004 + 0.7999999999999999
        # = 1.1 exactly, share 0.2: stall-heavy), where adding every wait to
        # the total as it ends would give 1.0999999999999999, share
        # 0.19999999999999998: none
        import xspace_writer as W
        US = 1000000

        def rep(k):
            x = 0.0
            for _ in range(k):
                x += 0.1
            return x
        line_wise = (0.0 + rep(3)) + rep(8)
        event_wise = rep(11)
        compute = rep(44)
        self.assertGreaterEqual(line_wise / (compute + line_wise), 0.2)
        self.assertLess(event_wise / (compute + event_wise), 0.2)
        dev = W.PlaneBuilder("/device:TPU:0")
        dev.line(id=1, name="XLA Ops", events=[dev.event("fusion.%d" % (i % 3), offset_ps=i * US, duration_ps=US // 10)
                                              for i in range(44)])
        host = W.PlaneBuilder("/host:CPU", id=1)
        for lid, k in ((1, 3), (2, 8)):
            host.line(id=lid, name="thread %d" % lid,
                      events=[host.event("dependency-wait", offset_ps=i * US, duration_ps=US // 10) for i in range(k)])
        with TempDir() as td:
            d = summary_of(td, "h.xplane.pb", W.xspace([dev.build(), host.build()]))
        self.assertEqual(d["time_breakdown"]["stall"]["total_duration"], 1.1)
        self.assertEqual(d["time_breakdown"]["compute"]["total_duration"], 4.4)
        self.assertIn("stall-heavy", [c["candidate_id"] for c in d["optimization_candidates"]])

    def test_random_small_traces_against_python_floats(self):
        rng = random.Random(20261202)
        with TempDir() as td:
            for _ in range(60):
                ev, t = [], 0
                for k in range(rng.randint(1, 12)):
                    name = rng.choice(["fusion.%d" % k, "dependency-wait.%d" % k])
                    ev.append((name, "%d" % t, rng.choice(["0.1", "0.2", "0.3", "0.02", "0.03", "0.7", "1"])))
                    t += 2
                ids, _ = self.candidates(ev, td)
                self.assertEqual("stall-heavy" in ids, self.stall_share(ev) >= 0.2, ev)


def reference_breakdown(events):
    """§4.4's per-track breakdown of one device-op line in Python floats, as
    the reference adds it: each event's max(0, dur - its children's durs)
    added to its category when the §2 stack pops it; the total is the five
    categories added in their order.  events: (name, ts text, dur text)."""
    ev = [(name, float(ts), float(dur)) for name, ts, dur in events]
    cats = ["compute", "communication", "host", "stall", "other"]
    out = dict.fromkeys(cats, 0.0)

    def cat(name):
        if name.startswith("dependency-wait"):
            return "stall"
        return "communication" if name.startswith("all-reduce") else "compute"
    for i, ex in exclusive_pops(ev):
        out[cat(ev[i][0])] += ex
    out["total"] = sum(out[c] for c in cats)
    return out


class BreakdownInReferenceSums(unittest.TestCase):
    """The document's per-track breakdown is the reference's sums (the
    table's duration_ref), whatever the trace's size: where time texts were
    rounded to the picosecond, or an exclusive time nearly cancels, the
    exact sums (the table's duration) are further from the reference's
    than its own rounding."""

    def check(self, events, td, name):
        d = summary_of(td, name, trace_text(events))
        want = reference_breakdown(events)
        tb = d["time_breakdown"]
        self.assertEqual(tb["total_duration"], want["total"])
        for c in ("compute", "communication", "host", "stall", "other"):
            self.assertEqual(tb[c]["total_duration"], want[c], c)
            self.assertEqual(tb[c]["share_of_total"], want[c] / want["total"] if want["total"] > 0 else 0.0, c)
        return d

    def test_rounded_durations_in_a_large_trace(self):
        # 70,000 events (past the small-trace rule), durations of seven
        # decimals: each is kept as whole picoseconds (5.0000004 µs as
        # 5,000,000 ps), 0.4 ps short of its double, event after event
        ev = []
        for i in range(35000):
            ev.append(("fusion.%d" % (i % 7), "%d" % (i * 10), "5.0000004"))
            ev.append(("all-reduce.%d" % (i % 3), "%d" % (i * 10 + 1), "2.0000003"))
        want = reference_breakdown(ev)
        # the exact sums are 105,000 and 70,000 µs: further from the
        # reference's than a relative 1e-9
        self.assertFalse(math.isclose(want["communication"], 70000.0, rel_tol=1e-9))
        self.assertFalse(math.isclose(want["compute"], 105000.0, rel_tol=1e-9))
        with TempDir() as td:
            d = self.check(ev, td, "r.json")
            # the exact sums stay in the table
            db = connect()
            db.execute("SELECT profsum_import(?, 'y')", (os.path.join(td.path, "r.json"),))
            got = dict(db.execute("SELECT category, duration FROM profsum_agg_breakdown "
                                  "WHERE mode = 'exclusive_per_track'"))
            db.close()
        self.assertEqual(got["communication"], 70000.0)
        self.assertEqual(got["compute"], 105000.0)
        self.assertEqual(d["time_breakdown"]["communication"]["total_duration"], want["communication"])

    def test_cancelling_exclusive_times_in_a_large_trace(self):
        # 66,000 events of six decimals at most (nothing rounded): ops of
        # 8388607.000001 µs, each around an all-reduce of 8388607 µs; the
        # exclusive time is 1e-6 µs exactly, 9.98377799987793e-07 in the
        # reference's doubles (a step between doubles there is 1.9e-9)
        ev = []
        for i in range(33000):
            ev.append(("fusion.%d" % (i % 7), "%d" % (i * 10000000), "8388607.000001"))
            ev.append(("all-reduce.1", "%d" % (i * 10000000), "8388607"))
        want = reference_breakdown(ev)
        self.assertFalse(math.isclose(want["compute"], 0.033, rel_tol=1e-6))
        with TempDir() as td:
            d = self.check(ev, td, "c.json")
        self.assertEqual(d["time_breakdown"]["compute"]["total_duration"], want["compute"])

    def test_deep_nesting(self):
        # 300 ops each inside the last (past the walk's 64 levels kept at
        # hand, whose doubles it looks up again), then two of 200 with
        # stall waits, then flat ops
        ev = []
        for base, depth in ((0, 300), (1000, 200), (2000, 200)):
            for i in range(depth):
                name = ("all-reduce.%d" % i) if i % 3 == 0 else (
                    "dependency-wait.%d" % i if base == 1000 and i % 5 == 0 else "fusion.%d" % (i % 4))
                ev.append((name, "%d.1" % (base + i), "%d.3" % (2 * (depth - i) + 1)))
        ev += [("fusion.9", "%d" % (3000 + 2 * i), "1.7") for i in range(50)]
        with TempDir() as td:
            self.check(ev, td, "deep.json")

    def test_small_traces_against_python_floats(self):
        rng = random.Random(20261204)
        with TempDir() as td:
            for n in range(40):
                ev, t = [], 0
                for k in range(rng.randint(1, 10)):
                    name = rng.choice(["fusion.%d" % k, "all-reduce.%d" % k, "dependency-wait.%d" % k])
                    ev.append((name, "%d" % t, rng.choice(["0.1", "0.2", "0.7", "0.03", "1.0000004",
                                                           "0.30000000000000004", "284.000001"])))
                    t += rng.choice([0, 1, 2, 300])
                self.check(ev, td, "s%d.json" % n)


class TiesInReferenceOrder(unittest.TestCase):
    """Rows whose exact sums tie are ordered as the reference's float sums
    order them (the *_ref columns)."""

    def orders(self, events, td, n=[0]):
        n[0] += 1
        path = td.write("o%d.json" % n[0], trace_text_args(events))
        db = connect()
        db.execute("SELECT profsum_import(?, 'x', ?)", (path, json.dumps({"hot_op_limit": 100000})))
        d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
        views = (db.execute("SELECT collective FROM profsum_comm_ops ORDER BY rank").fetchall(),
                 db.execute("SELECT path FROM profsum_regions ORDER BY rank").fetchall())
        db.close()
        got = ([h["name"] for h in d["hot_ops"]], [c["collective"] for c in d["communication_ops"]],
               [r["path"] for r in d["hierarchical_regions"]], [f["family"] for f in d["semantic_families"]])
        self.assertEqual([r[0] for r in views[0]], got[1])
        self.assertEqual([r[0] for r in views[1]], got[2])
        return got

    def test_child_subtracted_in_doubles(self):
        # 0.7 - 0.5 is 0.19999999999999996: the op of 0.2 ranks above the
        # parent whose exact exclusive time is also 0.2
        with TempDir() as td:
            hot, _, _, _ = self.orders([("parent", "10", "0.7", "m"), ("child", "10.1", "0.5", "m"),
                                     ("flat", "20", "0.2", "m")], td)
            self.assertEqual(hot, ["child", "flat", "parent"])
            # a child under half a picosecond (0 ps exact): the parent's
            # exclusive is 1.0 - 1e-13 there, under the other op's 1.0
            hot, _, _, _ = self.orders([("p", "10", "1.0", "m"), ("c", "10.5", "1e-13", "m"),
                                        ("z", "20", "1.0", "m")], td)
            self.assertEqual(hot, ["z", "p", "c"])

    def test_collectives_added_in_doubles(self):
        # 0.1 + 0.2 is 0.30000000000000004 > 0.3: all-reduce first
        with TempDir() as td:
            _, coll, _, _ = self.orders([("all-reduce.1", "0", "0.1", "m"), ("all-gather.1", "1", "0.3", "m"),
                                      ("all-reduce.2", "2", "0.2", "m")], td)
            self.assertEqual(coll, ["all-reduce", "all-gather"])

    def test_regions_added_in_doubles(self):
        with TempDir() as td:
            _, _, reg, _ = self.orders([("a.1", "0", "0.1", "r1/x"), ("b.1", "1", "0.3", "r2/y"),
                                     ("a.2", "2", "0.2", "r1/x")], td)
            self.assertEqual(reg, ["r1=>x", "r1", "r2=>y", "r2"])    # exact sums: r1=>x, r2=>y, r1, r2

    def test_families_added_in_doubles(self):
        # collective: 0.7 - 0.5 in doubles, under copy's 0.2 (exact sums
        # tie, and 'collective' < 'copy' would put it first)
        with TempDir() as td:
            _, _, _, fam = self.orders([("all-reduce.1", "10", "0.7", "m"), ("fusion.1", "10.1", "0.5", "m"),
                                        ("copy.1", "20", "0.2", "m")], td)
            self.assertEqual(fam, ["other", "copy", "collective"])

    def test_random_ties_against_python_floats(self):
        rng = random.Random(20261123)
        durs = ["0.1", "0.2", "0.3", "0.4", "0.5", "0.7", "1.1", "2.2", "3.3", "0.6"]
        names = ["fusion.1", "fusion.2", "copy.3", "all-reduce.4", "all-gather.5", "all-reduce.6", "dot.7",
                 "softmax.8", "convolution.9"]
        tfs = ["m1/a", "m1/b", "m2/a", "m2", "m1/a/c"]
        with TempDir() as td:
            for case in range(60):
                events, t = [], rng.choice([0.0, 1000.0, 45317.13])
                for k in range(rng.randint(3, 14)):
                    dur = rng.choice(durs)
                    if rng.random() < 0.35 and events:      # inside the previous event
                        _, pts, pdur, _ = events[-1]
                        ts = float(pts) + rng.choice([0.0, 0.1])
                        if float(dur) > float(pdur):
                            dur = pdur
                    else:
                        ts = t + rng.choice([0.5, 1.0, 5.0])
                        t = ts + float(dur)
                    events.append((rng.choice(names), "%.1f" % ts, dur, rng.choice(tfs)))
                want = reference_orders(events)
                self.assertEqual(self.orders(events, td), want, events)


def exact_nesting_total(events):
    """§2 exclusive times summed on exact decimal times (Fraction)."""
    from fractions import Fraction
    ev = [(Fraction(ts), Fraction(dur)) for _, ts, dur in events]
    order = sorted(range(len(ev)), key=lambda i: (ev[i][0], -(ev[i][0] + ev[i][1]), i))
    total, stack = Fraction(0), []

    def fin():
        nonlocal total
        i, child = stack.pop()
        total += max(Fraction(0), ev[i][1] - child)
        if stack:
            stack[-1][1] += ev[i][1]
    for i in order:
        ts, end = ev[i][0], ev[i][0] + ev[i][1]
        while stack and ts >= sum(ev[stack[-1][0]]):
            fin()
        while stack and end > sum(ev[stack[-1][0]]):
            fin()
        stack.append([i, Fraction(0)])
    while stack:
        fin()
    return total


class ExactNestingCheck(unittest.TestCase):
    """The summary keeps the reference's doubles; the import also sweeps on
    exact times when a decision in doubles went otherwise, and says by how
    much the per-track total differs (profsum_kpis float_nesting, a
    float_nesting diagnostic, facts exact_breakdown_total and
    float_nesting_events)."""

    def run_case(self, events, td):
        db = imported(events, td)
        facts = exact_facts(db)
        kpi = db.execute("SELECT value, band, explanation FROM profsum_kpis WHERE kpi = 'float_nesting'").fetchall()
        diag = [r[0] for r in db.execute("SELECT detail FROM profsum_diagnostic WHERE kind = 'float_nesting'")]
        doc = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
        db.close()
        return facts, kpi, diag, doc

    def test_epoch_timestamps_nest_otherwise_in_doubles(self):
        # At 1.7e15 us a double steps by 0.25 us: the child [.9, 1.0) of
        # [0, 1.0) becomes [1.0, 1.0) + 0.1, which starts at the parent's
        # end, so the reference does not nest it (parent exclusive 1.0)
        events = [("fusion.1", "1700000000000000.0", "1.0"), ("copy.2", "1700000000000000.9", "0.1")]
        self.assertEqual(exact_nesting_total(events), 1)
        with TempDir() as td:
            facts, kpi, diag, doc = self.run_case(events, td)
        # the summary is the reference's
        self.assertAlmostEqual(doc["time_breakdown"]["total_duration"], 1.1, places=9)
        self.assertEqual(doc["trace_overview"]["quality_warnings"], [])
        self.assertAlmostEqual(facts["exact_breakdown_total"], 1.0, places=9)
        self.assertEqual(facts["float_nesting_events"], 1)
        self.assertEqual(len(kpi), 1)
        self.assertAlmostEqual(kpi[0][0], 0.1, places=9)
        self.assertEqual(kpi[0][1], "detected")
        self.assertIn("1 events nest otherwise on their exact times", kpi[0][2])
        self.assertIn("categories differ from those on exact times by 0.100 us in all, 10.00% of the exact "
                      "total 1.000 us (summary total 1.100 us)", kpi[0][2])
        self.assertAlmostEqual(facts["float_nesting_moved"], 0.1, places=9)
        self.assertEqual(len(diag), 1)
        self.assertIn("1 events' exclusive times differ from the nesting of their exact times", diag[0])
        self.assertIn("compute 1.0,", diag[0])

    def test_nested_in_doubles_only(self):
        # the other way: copy.2 [.81, 1.01) ends after fusion.1 [0, 1.0) on
        # exact times, but its doubles [.75, 1.0) end with it, so the
        # reference nests it (fusion.1's exclusive time 0.8 there, 1.0 on
        # exact times): the one event whose exclusive time differs is the
        # one that has a child only in the doubles' nesting
        events = [("fusion.1", "1700000000000000.0", "1.0"), ("copy.2", "1700000000000000.81", "0.2")]
        with TempDir() as td:
            facts, kpi, diag, doc = self.run_case(events, td)
        self.assertAlmostEqual(doc["time_breakdown"]["total_duration"], 1.0, places=9)
        self.assertAlmostEqual(facts["exact_breakdown_total"], 1.2, places=9)
        self.assertEqual(facts["float_nesting_events"], 1)
        self.assertEqual(len(diag), 1)
        self.assertIn("1 events' exclusive times differ from the nesting of their exact times", diag[0])

    def test_time_moved_between_categories_same_total(self):
        # all-reduce.2 [1000.1, +0.3) holds copy.3 [1000.2, +0.2): both end on
        # the same picosecond, but copy.3 one ulp later in doubles, so the
        # reference nests it in fusion.1 instead: the totals agree (5.0 us)
        # while 0.2 us moved from compute to communication
        events = [("fusion.1", "999.0", "5.0"), ("all-reduce.2", "1000.1", "0.3"),
                  ("copy.3", "1000.200000", "0.2")]
        self.assertGreater(float("1000.200000") + float("0.2"), float("1000.1") + float("0.3"))
        with TempDir() as td:
            facts, kpi, diag, doc = self.run_case(events, td)
        tb = doc["time_breakdown"]
        self.assertAlmostEqual(tb["communication"]["total_duration"], 0.3, places=9)
        self.assertAlmostEqual(tb["total_duration"], 5.0, places=9)
        self.assertAlmostEqual(facts["exact_breakdown_total"], 5.0, places=9)
        self.assertEqual(facts["float_nesting_events"], 2)
        self.assertAlmostEqual(facts["float_nesting_moved"], 0.4, places=9)
        self.assertEqual(len(kpi), 1)
        self.assertAlmostEqual(kpi[0][0], 0.08, places=9)
        self.assertEqual(kpi[0][1], "detected")
        self.assertIn("categories differ from those on exact times by 0.400 us in all, 8.00% of the exact "
                      "total 5.000 us (summary total 5.000 us)", kpi[0][2])
        self.assertIn("(compute 4.9, communication 0.1, host 0.0, stall 0.0, other 0.0; the categories "
                      "differ by 0.4 us in all)", diag[0])

    def test_no_difference_no_pattern(self):
        events = [("fusion.1", "10.0", "1.0"), ("copy.2", "10.5", "0.5"), ("dot.3", "12", "0.25")]
        with TempDir() as td:
            facts, kpi, diag, _ = self.run_case(events, td)
        self.assertAlmostEqual(facts["exact_breakdown_total"], 1.25, places=9)
        self.assertEqual(facts["float_nesting_events"], 0)
        self.assertEqual([(k[0], k[1]) for k in kpi], [(0.0, "not_detected")])
        self.assertIn("agrees with the exact times", kpi[0][2])
        self.assertEqual(diag, [])

    def test_random_against_exact_sweep(self):
        # epoch-scale starts with sub-ulp offsets: the facts' exact total is
        # the exact §2 sweep's, whatever the doubles decided
        rng = random.Random(20261128)
        with TempDir() as td:
            for case in range(40):
                base = rng.choice([1700000000000000, 1773709742341309, 1800000])
                events, t = [], 0.0
                for k in range(rng.randint(2, 12)):
                    if rng.random() < 0.5 and events:
                        _, pts, pdur = events[-1]
                        off = rng.choice(["0.0", "0.1", "0.3", "0.9"])
                        ts = "%d.%s" % (int(float(pts.split(".")[0])), off.split(".")[1])
                        dur = rng.choice(["0.1", "0.2", "0.7", pdur])
                    else:
                        t += rng.choice([1.0, 2.0, 5.0])
                        ts = "%d.0" % (base + int(t))
                        dur = rng.choice(["0.1", "0.5", "1.0", "3.0"])
                    events.append(("op.%d" % k, ts, dur))
                facts, kpi, _, doc = self.run_case(events, td)
                want = float(exact_nesting_total(events))
                self.assertTrue(close(facts["exact_breakdown_total"], want, 1.0), (events, facts, want))
                got = doc["time_breakdown"]["total_duration"]
                rel = abs(got - want) / want if want else 0.0
                # one category: what moved is the difference of the totals
                self.assertTrue(abs(kpi[0][0] - rel) <= 1e-9 + 1e-9 * rel, (events, kpi, rel))

    def test_file_order_does_not_change_the_check(self):
        """The same events in time order and shuffled (the check then walks
        a processing order that is not the file's, and finds each event's
        kept exclusive time by its position): the same exact total and the
        same count of events whose exclusive time differs.  No two events
        share both start and end, in doubles or exactly, so the file order
        breaks no tie in either nesting."""
        rng = random.Random(20261205)
        n_differ = 0
        with TempDir() as td:
            for case in range(16):
                base = rng.choice([1700000000000000, 1773709742341309])
                events, seen, t = [], set(), 0.0
                for k in range(rng.randint(20, 60)):
                    if rng.random() < 0.6 and events:
                        _, pts, _ = events[rng.randrange(len(events))]
                        ts = "%s.%s" % (pts.split(".")[0], rng.choice(["0", "1", "3", "7", "9"]))
                        dur = rng.choice(["0.1", "0.2", "0.7", "1.0", "0.05"])
                    else:
                        t += rng.choice([1.0, 2.0, 5.0])
                        ts, dur = "%d.0" % (base + int(t)), rng.choice(["0.5", "1.0", "3.0"])
                    kx, kd = (ts, dur), (float(ts), float(ts) + float(dur))
                    if kx not in seen and kd not in seen:
                        seen.update((kx, kd))
                        events.append(("op.%d" % k, ts, dur))
                ordered = time_order(events)
                shuffled = list(events)
                rng.shuffle(shuffled)
                got = []
                for evs in (ordered, shuffled):
                    facts, _, _, _ = self.run_case(evs, td)
                    got.append((facts["exact_breakdown_total"], facts["float_nesting_events"]))
                want = float(exact_nesting_total(events))
                self.assertTrue(close(got[0][0], want, 1.0) and close(got[1][0], want, 1.0), (events, got, want))
                self.assertEqual(got[0][1], got[1][1], events)
                n_differ += got[0][1] > 0
        self.assertGreater(n_differ, 4)

    def test_check_past_its_insertion_sort(self):
        """2,000 events within one double of each other whose exact starts
        fall as the file goes on: the doubles' order is the file's, the
        exact order its reverse, more than the check's insertion sort
        moves; the check then sorts by event index, with the same facts as
        for the file written the other way round."""
        n = 2000
        desc = [("op.%d" % k, "1700000000000000.%08d" % (5000 * (n - k)), "1.0") for k in range(n)]
        asc = list(reversed(desc))
        want = float(exact_nesting_total(desc))
        with TempDir() as td:
            a, _, _, _ = self.run_case(desc, td)
            b, _, _, _ = self.run_case(asc, td)
        self.assertTrue(close(a["exact_breakdown_total"], want, 1.0), (a, want))
        self.assertTrue(close(b["exact_breakdown_total"], want, 1.0), (b, want))
        self.assertGreater(a["float_nesting_events"], 0)
        self.assertEqual(a["float_nesting_events"], b["float_nesting_events"])


if __name__ == "__main__":
    unittest.main()
