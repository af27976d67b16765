"""Sessions and pods (docs/sessions.md): the import options "session" and
"hosts", profsum_find_traces(dir, options), the session tables and views
(profsum_hosts, profsum_host_steps, profsum_stragglers) and
profsum_session_json.

Fixtures are built here: XSpace files (tests/xspace_writer.py) of one TPU
device with a Steps line and an XLA Ops line (a compute op and an
all-reduce per step) and a Task Environment plane with
profile_start_time, and JSON traces of the same shape.  Times are µs,
stored in ps in the XSpaces."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import unittest

import xspace_writer as W
from test_schema_upgrade import strip_columns
from util import ROOT, SO, DbTestCase, TempDir, connect, run_interrupted_at

US = 10 ** 6
BASE_NS = 10 ** 12
SESSION = "plugins/profile/2024_01_01_00_00_00"


def host_xspace(start_ns, steps, hostnames=(), task_env=True, shift=0):
    """An XSpace of one TPU: steps = [(step, compute µs, collective µs)],
    step k's window at local (k - first) * 100 + shift, 100 µs long; its
    compute op at the window's start, its all-reduce 5 µs after."""
    pb = W.PlaneBuilder("/device:TPU:0", id=0)
    sev, oev = [], []
    first = steps[0][0]
    for (k, c, r) in steps:
        s = (k - first) * 100 + shift
        sev.append(pb.event(str(k), offset_ps=s * US, duration_ps=100 * US))
        oev.append(pb.event("fusion.1", offset_ps=s * US, duration_ps=c * US))
        oev.append(pb.event("all-reduce.1", offset_ps=(s + c + 5) * US, duration_ps=r * US))
    pb.line(id=1, name="Steps", timestamp_ns=0, events=sev)
    pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=oev)
    planes = [pb.build()]
    if task_env:
        te = W.PlaneBuilder("Task Environment", id=1)
        te.plane_stat("profile_start_time", u64=start_ns)
        te.plane_stat("profile_stop_time", u64=start_ns + 10 ** 9)
        planes.append(te.build())
    return W.xspace(planes, hostnames=hostnames)


def json_trace(starts):
    """A JSON trace of one TPU: {step: start µs}, each step 100 µs with a
    50 µs compute op and a 20 µs all-reduce."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "Steps"}},
          {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "XLA Ops"}}]
    for k, s in sorted(starts.items()):
        ev.append({"ph": "X", "name": str(k), "pid": 1, "tid": 1, "ts": s, "dur": 100})
        ev.append({"ph": "X", "name": "fusion.1", "pid": 1, "tid": 2, "ts": s, "dur": 50})
        ev.append({"ph": "X", "name": "all-reduce.1", "pid": 1, "tid": 2, "ts": s + 55, "dur": 20})
    return {"traceEvents": ev}


def pod_files(td, root="pod"):
    """The 4-host pod of the tests: h0 starts at the origin, h1 300 µs and
    h2 100 µs later; h3 has no Task Environment and its steps come 40 µs
    after h0's (local times).  h1 computes 80 µs in step 2 (the straggler)
    with a 5 µs all-reduce; h2 waits 35 µs in that all-reduce."""
    plain = [(1, 50, 20), (2, 50, 20), (3, 50, 20)]
    files = {
        "h0": host_xspace(BASE_NS, plain, hostnames=["host-0"]),
        "h1": host_xspace(BASE_NS + 300000, [(1, 50, 20), (2, 80, 5), (3, 50, 20)], hostnames=["host-1"]),
        "h2": host_xspace(BASE_NS + 100000, [(1, 50, 20), (2, 50, 35), (3, 50, 20)], hostnames=["host-2"]),
        "h3": host_xspace(0, plain, task_env=False, shift=40),
    }
    for h, data in files.items():
        td.write(os.path.join(root, SESSION, h + ".xplane.pb"), data)
    return os.path.join(td.path, root)


class Pod(DbTestCase):
    def setUp(self):
        super().setUp()
        self.dir = pod_files(self.td)
        self.first = self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')",
                                     (self.dir,)).fetchone()[0]

    def rows(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def test_traces_and_session(self):
        self.assertEqual(self.first, 1)
        self.assertEqual(self.rows("SELECT trace_id, label, session_id, host FROM profsum_trace ORDER BY trace_id"),
                         [(1, "pod/h0", 1, "h0"), (2, "pod/h1", 1, "h1"), (3, "pod/h2", 1, "h2"),
                          (4, "pod/h3", 1, "h3")])
        self.assertEqual(self.rows("SELECT * FROM profsum_session"),
                         [(1, "pod", self.dir, BASE_NS, "steps")])
        self.assertEqual(self.rows("SELECT quality_warnings FROM profsum_trace"), [("[]",)] * 4)

    def test_hosts(self):
        self.assertEqual(self.rows("SELECT * FROM profsum_hosts ORDER BY trace_id"), [
            (1, "pod", 1, "pod/h0", "h0", "host-0", 1, 0.0, "profile_start_time", 300.0, 3, 100.0, 0),
            (1, "pod", 2, "pod/h1", "h1", "host-1", 1, 300.0, "profile_start_time", 300.0, 3, 100.0, 1),
            (1, "pod", 3, "pod/h2", "h2", "host-2", 1, 100.0, "profile_start_time", 300.0, 3, 100.0, 0),
            (1, "pod", 4, "pod/h3", "h3", None, 1, -40.0, "steps", 300.0, 3, 100.0, 0)])
        self.assertEqual(self.rows("SELECT trace_id, common_steps, profile_start_ns FROM profsum_agg_host"),
                         [(1, None, BASE_NS), (2, None, BASE_NS + 300000), (3, None, BASE_NS + 100000),
                          (4, 3, None)])

    def test_host_steps(self):
        got = self.rows("SELECT host, step, start_us, duration_us, busy_us, collective_us, idle_us "
                        "FROM profsum_host_steps ORDER BY host, step")
        want = []
        for h, off in (("h0", 0), ("h1", 300), ("h2", 100), ("h3", 0)):
            for k in (1, 2, 3):
                c, r = {("h1", 2): (80, 5), ("h2", 2): (50, 35)}.get((h, k), (50, 20))
                want.append((h, k, float(off + (k - 1) * 100), 100.0, float(c + r), float(r),
                             float(100 - c - r)))
        self.assertEqual(got, want)

    def test_stragglers(self):
        self.assertEqual(self.rows("SELECT * FROM profsum_stragglers ORDER BY step"), [
            (1, "pod", 1, "h0", 50.0, 50.0, 0.0, 0.0),
            # h1 computes 80 µs; the median of 50, 80, 50, 50 is 50; the
            # others wait in their all-reduce 15 (h0), 30 (h2), 15 (h3) µs
            # longer than h1's 5 µs
            (1, "pod", 2, "h1", 80.0, 50.0, 30.0, 60.0),
            (1, "pod", 3, "h0", 50.0, 50.0, 0.0, 0.0)])

    def test_session_json(self):
        doc = self.db.execute("SELECT profsum_session_json('pod', '{\"top_k\": 1}')").fetchone()[0]
        d = json.loads(doc)
        self.assertEqual(doc, json.dumps(d, indent=2, sort_keys=True))
        self.assertEqual(d["schema_version"], "profsum_session.v1")
        self.assertEqual(d["session"], {"session_id": 1, "label": "pod", "source_path": self.dir,
                                        "origin_ns": BASE_NS, "alignment": "steps"})
        self.assertEqual([h["host"] for h in d["hosts"]], ["h0", "h1", "h2", "h3"])
        self.assertEqual(d["hosts"][1], {"trace_id": 2, "label": "pod/h1", "host": "h1", "hostname": "host-1",
                                         "num_devices": 1, "offset_us": 300.0, "alignment": "profile_start_time",
                                         "span_us": 300.0, "step_count": 3, "median_step_us": 100.0,
                                         "times_slowest": 1})
        self.assertEqual(d["pod"], {"num_hosts": 4, "common_steps": 3, "slowest_host": "h1", "max_lag_us": 30.0,
                                    "total_collective_wait_us": 60.0, "offset_spread_us": 340.0,
                                    "stragglers": [{"step": 2, "slowest_host": "h1", "slowest_compute_us": 80.0,
                                                    "median_compute_us": 50.0, "lag_us": 30.0,
                                                    "collective_wait_us": 60.0}]})
        self.assertEqual(d["field_scope"]["$.hosts[*].offset_us"], "per_host")
        self.assertEqual(d["field_scope"]["$.pod.stragglers"], "pod")
        self.assertEqual(set(d["field_scope"]),
                         {"$.hosts[*].%s" % k for k in d["hosts"][0]} | {"$.pod.%s" % k for k in d["pod"]}
                         | {"$.session.%s" % k for k in d["session"]})
        self.assertEqual(self.db.execute("SELECT profsum_session_json(1)").fetchone()[0],
                         self.db.execute("SELECT profsum_session_json('pod')").fetchone()[0])
        with self.assertRaisesRegex(sqlite3.OperationalError, "profsum_session_json: no session 'nope'"):
            self.db.execute("SELECT profsum_session_json('nope')").fetchone()
        with self.assertRaisesRegex(sqlite3.OperationalError, "unknown key 'topk'"):
            self.db.execute("SELECT profsum_session_json(1, '{\"topk\": 1}')").fetchone()

    def test_each_host_as_alone(self):
        """Each host's aggregates equal those of its file imported alone."""
        for i, h in enumerate(("h0", "h1", "h2", "h3")):
            alone = self.db.execute("SELECT profsum_import(?, ?)", (os.path.join(self.dir, SESSION, h + ".xplane.pb"),
                                                                     "alone-" + h)).fetchone()[0]
            for table in ("profsum_agg_op", "profsum_agg_step", "profsum_agg_breakdown"):
                q = "SELECT * FROM %s WHERE trace_id=? ORDER BY 2, 3" % table
                self.assertEqual([r[1:] for r in self.rows(q, alone)], [r[1:] for r in self.rows(q, i + 1)])

    def test_labels_taken(self):
        with self.assertRaisesRegex(sqlite3.IntegrityError, "profsum_import: a session with label 'pod' exists "
                                    r"already \(session_id 1\)"):
            self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (self.dir,))
        tid = self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\", \"unique_label\": true}')",
                              (self.dir,)).fetchone()[0]
        self.assertEqual(tid, 5)
        self.assertEqual(self.rows("SELECT label FROM profsum_trace WHERE trace_id>4"),
                         [("pod-2/h0",), ("pod-2/h1",), ("pod-2/h2",), ("pod-2/h3",)])
        tid = self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\", \"replace\": true}')",
                              (self.dir,)).fetchone()[0]
        self.assertEqual(tid, 9)
        self.assertEqual(self.rows("SELECT label, session_id FROM profsum_session ORDER BY session_id"),
                         [("pod-2", 2), ("pod", 3)])
        self.assertEqual(self.rows("SELECT count(*) FROM profsum_hosts WHERE session_label='pod'"), [(4,)])
        # a host's label taken by a trace imported alone: the hint is the
        # session's (unique_label moves the whole session; reuse does not apply)
        self.db.execute("SELECT profsum_import(?, 'other/h0')",
                        (os.path.join(self.dir, SESSION, "h0.xplane.pb"),))
        with self.assertRaisesRegex(sqlite3.IntegrityError, "label 'other/h0' exists already.*store this session "
                                    r"under the first free '<label>-N' \(its hosts as '<label>-N/<host>'\)"):
            self.db.execute("SELECT profsum_import(?, 'other', '{\"hosts\": \"all\", \"reuse\": true}')",
                            (self.dir,))


class BadHost(DbTestCase):
    def test_a_damaged_host_fails_the_import(self):
        d = pod_files(self.td)
        bad = os.path.join(d, SESSION, "h2.xplane.pb")
        with open(bad, "rb") as f:
            data = f.read()
        with open(bad, "wb") as f:
            f.write(data[:40])
        with self.assertRaisesRegex(sqlite3.DatabaseError, r"profsum_import: .%s.: byte 0 \(plane 0\): "
                                    r"XSpace field 1 \(planes\): length \d+ runs past the end of the file"
                                    % bad):
            self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT count(*) FROM sqlite_master WHERE name GLOB 'profsum_*'").fetchone()[0], 0)

    def test_a_damaged_xplane_falls_back_to_its_hosts_json(self):
        """A host stopped while writing its XPlane, with its trace JSON
        beside it: that host is read from the JSON (placed by its steps), a
        diagnostic says why; the others from their XPlanes."""
        for i, h in enumerate(("h0", "h1")):
            x = host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20)])
            self.td.write(os.path.join("fb", SESSION, h + ".xplane.pb"), x[:40] if h == "h1" else x)
            self.td.write(os.path.join("fb", SESSION, h + ".trace.json.gz"), json_trace({1: 0, 2: 100}), gz=True)
        d = os.path.join(self.td.path, "fb")
        self.db.execute("SELECT profsum_import(?, 'fb', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual([(l, f, os.path.basename(p)) for l, f, p in self.db.execute(
            "SELECT label, source_format, trace_path FROM profsum_trace ORDER BY label")],
            [("fb/h0", "xplane_pb", "h0.xplane.pb"), ("fb/h1", "perfetto_trace_json", "h1.trace.json.gz")])
        self.assertEqual(self.db.execute("SELECT host, alignment FROM profsum_hosts ORDER BY host").fetchall(),
                         [("h0", "profile_start_time"), ("h1", "steps")])
        diag = self.db.execute("SELECT t.label, g.detail FROM profsum_diagnostic AS g JOIN profsum_trace AS t "
                               "USING (trace_id) WHERE g.kind = 'xplane_not_decoded'").fetchall()
        self.assertEqual(len(diag), 1)
        self.assertEqual(diag[0][0], "fb/h1")
        self.assertIn("h1.xplane.pb': byte 0 (plane 0): XSpace field 1 (planes): length", diag[0][1])


    def test_an_empty_xplane_falls_back_to_its_hosts_json(self):
        """A host killed as it began its XPlane (0 bytes) with its trace
        JSON beside it: read from the JSON, not as a host without events."""
        for h in ("h0", "h1"):
            x = host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20)])
            self.td.write(os.path.join("e", SESSION, h + ".xplane.pb"), b"" if h == "h1" else x)
            self.td.write(os.path.join("e", SESSION, h + ".trace.json.gz"), json_trace({1: 0, 2: 100}), gz=True)
        d = os.path.join(self.td.path, "e")
        self.db.execute("SELECT profsum_import(?, 'e', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual([(l, f) for l, f in self.db.execute(
            "SELECT label, source_format FROM profsum_trace ORDER BY label")],
            [("e/h0", "xplane_pb"), ("e/h1", "perfetto_trace_json")])
        self.assertEqual(self.db.execute("SELECT num_complete_events FROM profsum_trace WHERE label='e/h1'")
                         .fetchone()[0], 6)
        diag = self.db.execute("SELECT g.detail FROM profsum_diagnostic AS g JOIN profsum_trace AS t "
                               "USING (trace_id) WHERE g.kind = 'xplane_not_decoded'").fetchall()
        self.assertEqual(len(diag), 1)
        self.assertIn("h1.xplane.pb': the file is empty (0 bytes)", diag[0][0])


class UnmatchedSteps(DbTestCase):
    def test_hosts_without_a_common_step_number_say_so(self):
        """Steps are compared across hosts by number: two hosts whose steps
        run together but are numbered 1-3 and 101-103 have nothing to
        compare, and each says so (no silent "no straggler")."""
        self.td.write(os.path.join("u", SESSION, "a.xplane.pb"),
                      host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20), (3, 50, 20)]))
        self.td.write(os.path.join("u", SESSION, "b.xplane.pb"),
                      host_xspace(BASE_NS, [(101, 50, 20), (102, 90, 20), (103, 50, 20)]))
        d = os.path.join(self.td.path, "u")
        self.db.execute("SELECT profsum_import(?, 'u', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_stragglers").fetchone()[0], 0)
        self.assertEqual(self.db.execute("SELECT label FROM profsum_diagnostic WHERE kind='host_steps_unmatched' "
                                         "ORDER BY label").fetchall(), [("u/a",), ("u/b",)])
        # hosts that share step numbers say nothing
        pod = pod_files(self.td, "pod2")
        self.db.execute("SELECT profsum_import(?, 'pod2', '{\"hosts\": \"all\"}')", (pod,))
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_diagnostic WHERE kind='host_steps_unmatched' "
                                         "AND label GLOB 'pod2/*'").fetchone()[0], 0)


class OneHostLeftOut(DbTestCase):
    def stragglers(self, third):
        """Hosts a and b share steps 1-3 (b is slow in step 2); the third
        host is `third`."""
        self.td.write(os.path.join("u", SESSION, "a.xplane.pb"),
                      host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20), (3, 50, 20)]))
        self.td.write(os.path.join("u", SESSION, "b.xplane.pb"),
                      host_xspace(BASE_NS, [(1, 50, 20), (2, 90, 20), (3, 50, 20)]))
        self.td.write(os.path.join("u", SESSION, "c.xplane.pb"), third)
        d = os.path.join(self.td.path, "u")
        self.db.execute("SELECT profsum_import(?, 'u', '{\"hosts\": \"all\"}')", (d,))
        rows = self.db.execute("SELECT step, slowest_host, lag_us FROM profsum_stragglers ORDER BY step").fetchall()
        diag = self.db.execute("SELECT label, detail FROM profsum_diagnostic "
                               "WHERE kind='host_steps_unmatched'").fetchall()
        pod = json.loads(self.db.execute("SELECT profsum_session_json('u')").fetchone()[0])["pod"]
        return rows, diag, pod

    def test_unmatched_host_leaves_the_others_compared(self):
        rows, diag, pod = self.stragglers(host_xspace(BASE_NS, [(101, 50, 20), (102, 50, 20), (103, 50, 20)]))
        self.assertEqual(rows, [(1, "a", 0.0), (2, "b", 20.0), (3, "a", 7.5)])
        self.assertEqual([d[0] for d in diag], ["u/c"])
        self.assertEqual((pod["common_steps"], pod["max_lag_us"]), (3, 20.0))

    def test_host_without_steps_says_so(self):
        pb = W.PlaneBuilder("/device:TPU:0", id=0)
        pb.line(id=2, name="XLA Ops", timestamp_ns=0,
                events=[pb.event("fusion.1", offset_ps=0, duration_ps=50 * US)])
        rows, diag, _ = self.stragglers(W.xspace([pb.build()]))
        self.assertEqual(rows, [(1, "a", 0.0), (2, "b", 20.0), (3, "a", 7.5)])
        self.assertEqual(diag, [("u/c", "it has no step measured on a device: it is not compared "
                                        "in profsum_stragglers")])


class IdleCore(DbTestCase):
    def test_a_core_without_ops_is_not_in_the_mean(self):
        """Host a: TPU:0 computes 50 µs a step, TPU:1 has a Steps line and no
        op; host b: one TPU computing 50 µs.  a's mean is over the device
        that ran ops (num_devices 1): 50 µs, so no host lags."""
        def plane(dv, ops):
            pb = W.PlaneBuilder("/device:TPU:%d" % dv, id=dv)
            pb.line(id=1, name="Steps", timestamp_ns=0,
                    events=[pb.event(str(k), offset_ps=(k - 1) * 100 * US, duration_ps=100 * US) for k in (1, 2)])
            if ops:
                pb.line(id=2, name="XLA Ops", timestamp_ns=0,
                        events=[pb.event("fusion.1", offset_ps=(k - 1) * 100 * US, duration_ps=50 * US)
                                for k in (1, 2)])
            return pb.build()
        te = W.PlaneBuilder("Task Environment", id=9)
        te.plane_stat("profile_start_time", u64=BASE_NS)
        self.td.write(os.path.join("ic", SESSION, "a.xplane.pb"), W.xspace([plane(0, True), plane(1, False), te.build()]))
        self.td.write(os.path.join("ic", SESSION, "b.xplane.pb"), W.xspace([plane(0, True), te.build()]))
        self.db.execute("SELECT profsum_import(?, 'ic', '{\"hosts\": \"all\"}')", (os.path.join(self.td.path, "ic"),))
        self.assertEqual(self.db.execute("SELECT host, num_devices FROM profsum_hosts ORDER BY host").fetchall(),
                         [("a", 1), ("b", 1)])
        self.assertEqual(self.db.execute("SELECT host, step, busy_us FROM profsum_host_steps ORDER BY host, step").fetchall(),
                         [("a", 1, 50.0), ("a", 2, 50.0), ("b", 1, 50.0), ("b", 2, 50.0)])
        self.assertEqual(self.db.execute("SELECT max(lag_us) FROM profsum_stragglers").fetchone()[0], 0.0)


class FloatTies(DbTestCase):
    def test_equal_hosts_have_no_straggler(self):
        """Two hosts of three TPUs with the same per-device compute (0.1,
        0.2 and 0.3 µs) in another device order: their sums differ in the
        last bit of a double, which makes no straggler."""
        for h, per_dev in (("a", (0.1, 0.2, 0.3)), ("b", (0.3, 0.2, 0.1))):
            planes = []
            for dev, c in enumerate(per_dev):
                pb = W.PlaneBuilder("/device:TPU:%d" % dev, id=dev)
                pb.line(id=1, name="Steps", timestamp_ns=0, events=[
                    pb.event(str(k), offset_ps=(k - 1) * 100 * US, duration_ps=100 * US) for k in (1, 2)])
                pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
                    pb.event("fusion.1", offset_ps=(k - 1) * 100 * US, duration_ps=round(c * US)) for k in (1, 2)])
                planes.append(pb.build())
            te = W.PlaneBuilder("Task Environment", id=1000)
            te.plane_stat("profile_start_time", u64=BASE_NS)
            self.td.write(os.path.join("ties", SESSION, h + ".xplane.pb"), W.xspace(planes + [te.build()]))
        d = os.path.join(self.td.path, "ties")
        self.db.execute("SELECT profsum_import(?, 'ties', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT step, lag_us FROM profsum_stragglers ORDER BY step").fetchall(),
                         [(1, 0.0), (2, 0.0)])
        self.assertEqual(self.db.execute("SELECT host, times_slowest FROM profsum_hosts ORDER BY host").fetchall(),
                         [("a", 0), ("b", 0)])
        pod = json.loads(self.db.execute("SELECT profsum_session_json('ties')").fetchone()[0])["pod"]
        self.assertIsNone(pod["slowest_host"])


class Attached(DbTestCase):
    def test_schema_option(self):
        d = pod_files(self.td)
        self.db.execute("ATTACH ':memory:' AS h")
        self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\", \"schema\": \"h\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT count(*) FROM h.profsum_hosts").fetchone()[0], 4)
        doc = json.loads(self.db.execute("SELECT profsum_session_json('pod', '{\"schema\": \"h\"}')").fetchone()[0])
        self.assertEqual((doc["session"]["label"], doc["pod"]["slowest_host"], len(doc["hosts"])), ("pod", "h1", 4))
        with self.assertRaisesRegex(sqlite3.OperationalError, "profsum_session_json: no such table: main.profsum_session"):
            self.db.execute("SELECT profsum_session_json('pod')").fetchone()


class Interrupt(DbTestCase):
    def test_interrupt_leaves_nothing(self):
        d = pod_files(self.td)
        self.db.execute("CREATE TABLE keep(x)")
        msg = run_interrupted_at(self.db, 1, "SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (d,))
        self.assertIn("interrupted", msg)
        self.assertEqual(self.db.execute("SELECT count(*) FROM sqlite_master WHERE name GLOB 'profsum_*'").fetchone()[0], 0)
        # and the next import works
        self.assertEqual(self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (d,)).fetchone()[0], 1)


class EightHosts(DbTestCase):
    def test_parallel_equals_one_by_one(self):
        starts = [BASE_NS + 1000 * i * 37 for i in range(8)]
        for i, s in enumerate(starts):
            steps = [(k, 50 + (i if k == 2 else 0), 20) for k in range(1, 5)]
            self.td.write(os.path.join("p8", SESSION, "host%d.xplane.pb" % i), host_xspace(s, steps))
        d = os.path.join(self.td.path, "p8")
        self.assertEqual(self.db.execute("SELECT profsum_import(?, 'p8', '{\"hosts\": \"all\"}')",
                                         (d,)).fetchone()[0], 1)
        self.assertEqual(self.db.execute("SELECT group_concat(offset_us) FROM profsum_hosts").fetchone()[0],
                         ",".join(repr(37.0 * i) for i in range(8)))
        self.assertEqual(self.db.execute("SELECT step, slowest_host, lag_us FROM profsum_stragglers ORDER BY step").fetchall(),
                         [(1, "host0", 0.0), (2, "host7", 3.5), (3, "host0", 0.0), (4, "host0", 0.0)])
        for i in range(8):
            alone = self.db.execute("SELECT profsum_import(?, ?)", (os.path.join(d, SESSION, "host%d.xplane.pb" % i),
                                                                     "a%d" % i)).fetchone()[0]
            q = "SELECT name, count, total_duration, exclusive_duration FROM profsum_agg_op WHERE trace_id=? ORDER BY name"
            self.assertEqual(self.db.execute(q, (alone,)).fetchall(), self.db.execute(q, (i + 1,)).fetchall())


class JsonOnly(DbTestCase):
    def test_aligned_by_steps_or_not_at_all(self):
        self.td.write(os.path.join("j", SESSION, "a.trace.json.gz"), json_trace({1: 1000, 2: 1100, 3: 1200}), gz=True)
        self.td.write(os.path.join("j", SESSION, "b.trace.json.gz"), json_trace({2: 5030, 3: 5130, 4: 5230}), gz=True)
        self.td.write(os.path.join("j", SESSION, "c.trace.json.gz"), json_trace({10: 10, 11: 110}), gz=True)
        d = os.path.join(self.td.path, "j")
        self.db.execute("SELECT profsum_import(?, 'j', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT host, offset_us, alignment, hostname FROM profsum_hosts "
                                         "ORDER BY trace_id").fetchall(),
                         [("a", 0.0, "steps", None), ("b", -3930.0, "steps", None), ("c", 0.0, "none", None)])
        self.assertEqual(self.db.execute("SELECT origin_ns, alignment FROM profsum_session").fetchall(),
                         [(None, "none")])
        self.assertEqual(self.db.execute("SELECT label, kind FROM profsum_diagnostic WHERE kind='host_not_aligned'").fetchall(),
                         [("j/c", "host_not_aligned")])
        # b's step 2 starts on the session's axis where a's does
        self.assertEqual(self.db.execute("SELECT host, start_us FROM profsum_host_steps WHERE step=2 ORDER BY host").fetchall(),
                         [("a", 1100.0), ("b", 1100.0)])
        # c's steps (10, 11) are no other host's: c is left out, and a and b
        # are compared on the steps they both ran
        self.assertEqual(self.db.execute("SELECT step FROM profsum_stragglers ORDER BY step").fetchall(),
                         [(2,), (3,)])
        self.assertEqual(self.db.execute("SELECT label FROM profsum_diagnostic "
                                         "WHERE kind='host_steps_unmatched'").fetchall(), [("j/c",)])


def gpu_trace(t0, steps):
    """A JSON trace of a GPU host: 'train' events with args.step_num on the
    host (each 100 µs from t0 + 100 * i), and two GPUs whose kernels in step
    i last steps[i] = ((compute, nccl) on GPU 0, (compute, nccl) on GPU 1)."""
    ev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/host:CPU"}},
          {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "/device:GPU:0"}},
          {"ph": "M", "name": "process_name", "pid": 3, "args": {"name": "/device:GPU:1"}},
          {"ph": "M", "name": "thread_name", "pid": 2, "tid": 7, "args": {"name": "Stream #7"}},
          {"ph": "M", "name": "thread_name", "pid": 3, "tid": 7, "args": {"name": "Stream #7"}}]
    for i, per_gpu in enumerate(steps):
        s = t0 + 100 * i
        ev.append({"ph": "X", "name": "train", "pid": 1, "tid": 1, "ts": s, "dur": 100, "args": {"step_num": i}})
        for g, (c, r) in enumerate(per_gpu):
            ev.append({"ph": "X", "name": "gemm_kernel", "pid": 2 + g, "tid": 7, "ts": s, "dur": c})
            ev.append({"ph": "X", "name": "ncclAllReduceKernel", "pid": 2 + g, "tid": 7, "ts": s + c + 1, "dur": r})
    return {"traceEvents": ev}


class GpuHosts(DbTestCase):
    def test_train_steps_and_two_gpus(self):
        # host b's GPU 1 computes 70 µs in step 1: its mean over the two
        # GPUs is 60 of compute
        self.td.write(os.path.join("g", SESSION, "a.trace.json.gz"),
                      gpu_trace(0, [((40, 10), (40, 10)), ((40, 10), (40, 10))]), gz=True)
        self.td.write(os.path.join("g", SESSION, "b.trace.json.gz"),
                      gpu_trace(1000, [((40, 10), (40, 10)), ((50, 4), (70, 2))]), gz=True)
        d = os.path.join(self.td.path, "g")
        self.db.execute("SELECT profsum_import(?, 'g', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT trace_id, step, device, busy_us, collective_us FROM profsum_agg_device_step "
                                         "WHERE trace_id=2 ORDER BY step, device").fetchall(),
                         [(2, 0, "/device:GPU:0", 50.0, 10.0), (2, 0, "/device:GPU:1", 50.0, 10.0),
                          (2, 1, "/device:GPU:0", 54.0, 4.0), (2, 1, "/device:GPU:1", 72.0, 2.0)])
        self.assertEqual(self.db.execute("SELECT host, step, start_us, busy_us, collective_us, idle_us FROM profsum_host_steps "
                                         "ORDER BY host, step").fetchall(),
                         [("a", 0, 0.0, 50.0, 10.0, 50.0), ("a", 1, 100.0, 50.0, 10.0, 50.0),
                          ("b", 0, 0.0, 50.0, 10.0, 50.0), ("b", 1, 100.0, 63.0, 3.0, 37.0)])
        self.assertEqual(self.db.execute("SELECT step, slowest_host, slowest_compute_us, median_compute_us, lag_us, "
                                         "collective_wait_us FROM profsum_stragglers ORDER BY step").fetchall(),
                         [(0, "a", 40.0, 40.0, 0.0, 0.0), (1, "b", 60.0, 50.0, 10.0, 7.0)])
        self.assertEqual(self.db.execute("SELECT host, offset_us, alignment, num_devices FROM profsum_hosts").fetchall(),
                         [("a", 0.0, "steps", 2), ("b", -1000.0, "steps", 2)])


class BothFormats(DbTestCase):
    def test_xplane_read_per_host_json_left(self):
        for i, h in enumerate(("h0", "h1")):
            self.td.write(os.path.join("bf", SESSION, h + ".xplane.pb"),
                          host_xspace(BASE_NS + i * 1000, [(1, 50, 20)]))
            self.td.write(os.path.join("bf", SESSION, h + ".trace.json.gz"), json_trace({1: 0}), gz=True)
        d = os.path.join(self.td.path, "bf")
        self.assertEqual([os.path.basename(r[0]) for r in self.db.execute(
            "SELECT path FROM profsum_find_traces(?, '{\"hosts\": \"all\"}') WHERE picked", (d,))],
            ["h0.xplane.pb", "h1.xplane.pb"])
        # the reference reads the first JSON (two XPlanes): one host
        self.assertEqual([os.path.basename(r[0]) for r in self.db.execute(
            "SELECT path FROM profsum_find_traces(?) WHERE picked", (d,))], ["h0.trace.json.gz"])
        self.db.execute("SELECT profsum_import(?, 'bf', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT label, source_format, quality_warnings FROM profsum_trace").fetchall(),
                         [("bf/h0", "xplane_pb", "[]"), ("bf/h1", "xplane_pb", "[]")])
        self.assertEqual(self.db.execute("SELECT host, offset_us FROM profsum_hosts").fetchall(),
                         [("h0", 0.0), ("h1", 1.0)])


class SameName(DbTestCase):
    def test_second_host_gets_a_suffix(self):
        steps = [(1, 50, 20)]
        self.td.write(os.path.join("two", "a", SESSION, "h.xplane.pb"), host_xspace(BASE_NS, steps))
        self.td.write(os.path.join("two", "b", SESSION, "h.xplane.pb"), host_xspace(BASE_NS + 5000, steps))
        d = os.path.join(self.td.path, "two")
        self.db.execute("SELECT profsum_import(?, 's', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT label, host, offset_us FROM profsum_hosts ORDER BY trace_id").fetchall(),
                         [("s/h", "h", 0.0), ("s/h-2", "h-2", 5.0)])
        self.assertEqual(self.db.execute("SELECT label, kind, detail FROM profsum_diagnostic WHERE kind='duplicate_host'").fetchall(),
                         [("s/h-2", "duplicate_host", "another host of this session has the name 'h' (file '%s'): "
                           "this one is labelled 'h-2'" % os.path.join(d, "b", SESSION, "h.xplane.pb"))])


class SuffixTaken(DbTestCase):
    def test_suffix_skips_a_real_host_name(self):
        """Hosts h (twice, in two folders) and h-2: the second h is h-3,
        not a second h-2."""
        steps = [(1, 50, 20)]
        self.td.write(os.path.join("st", "a", SESSION, "h.xplane.pb"), host_xspace(BASE_NS, steps))
        self.td.write(os.path.join("st", "b", SESSION, "h.xplane.pb"), host_xspace(BASE_NS + 1000, steps))
        self.td.write(os.path.join("st", "a", SESSION, "h-2.xplane.pb"), host_xspace(BASE_NS + 2000, steps))
        d = os.path.join(self.td.path, "st")
        self.db.execute("SELECT profsum_import(?, 's', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(sorted(self.db.execute("SELECT host, offset_us FROM profsum_hosts").fetchall()),
                         [("h", 0.0), ("h-2", 2.0), ("h-3", 1.0)])


class ReplaceSession(DbTestCase):
    def test_replace_takes_the_old_hosts_with_it(self):
        """The pod's four hosts, then the same folder without h3 with
        replace: h3's trace goes with the session it belonged to."""
        d = pod_files(self.td)
        self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (d,))
        os.remove(os.path.join(d, SESSION, "h3.xplane.pb"))
        self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\", \"replace\": true}')", (d,))
        self.assertEqual(self.db.execute("SELECT label FROM profsum_trace ORDER BY label").fetchall(),
                         [("pod/h0",), ("pod/h1",), ("pod/h2",)])
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_session").fetchone()[0], 1)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_host").fetchone()[0], 3)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_op WHERE trace_id NOT IN "
                                         "(SELECT trace_id FROM profsum_trace)").fetchone()[0], 0)


class RepeatedStepNumber(DbTestCase):
    def test_busy_time_of_every_window_of_a_step(self):
        """A Steps line named 1, 2, 1, 2 (100 µs windows at 0, 100, 200, 300,
        50 µs of compute in each): step 1 spans 0-300 µs and its busy time
        is both windows' 100 µs, not the last window's alone."""
        for h in ("a", "b"):
            pb = W.PlaneBuilder("/device:TPU:0", id=0)
            pb.line(id=1, name="Steps", timestamp_ns=0, events=[
                pb.event(str(k), offset_ps=i * 100 * US, duration_ps=100 * US) for i, k in enumerate((1, 2, 1, 2))])
            pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
                pb.event("fusion.1", offset_ps=i * 100 * US, duration_ps=50 * US) for i in range(4)])
            te = W.PlaneBuilder("Task Environment", id=1000)
            te.plane_stat("profile_start_time", u64=BASE_NS)
            self.td.write(os.path.join("rep", SESSION, h + ".xplane.pb"), W.xspace([pb.build(), te.build()]))
        d = os.path.join(self.td.path, "rep")
        self.db.execute("SELECT profsum_import(?, 'rep', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT step, duration_us, busy_us, idle_us FROM profsum_host_steps "
                                         "WHERE host='a' ORDER BY step").fetchall(),
                         [(1, 300.0, 100.0, 200.0), (2, 300.0, 100.0, 200.0)])


class Sessions(DbTestCase):
    """A folder of two sessions: 2024_01_01 with host h, 2024_02_01 with
    hosts g and h."""

    def setUp(self):
        super().setUp()
        for s, hosts in (("2024_01_01", "h"), ("2024_02_01", "gh")):
            for h in hosts:
                self.td.write(os.path.join("run", "plugins/profile", s, h + ".trace.json.gz"),
                              json_trace({1: 0, 2: 100}), gz=True)
        self.dir = os.path.join(self.td.path, "run")
        self.p = lambda s, h: os.path.join(self.dir, "plugins/profile", s, h + ".trace.json.gz")

    def picked(self, opts):
        return [os.path.relpath(r[0], self.dir) for r in self.db.execute(
            "SELECT path FROM profsum_find_traces(?, ?) WHERE picked", (self.dir, opts))]

    def imp(self, opts, label="r"):
        # what a pick left aside is a folder_pick diagnostic (third column);
        # the v1 document's quality warnings stay the reference's: none here
        tid = self.db.execute("SELECT profsum_import(?, ?, ?)", (self.dir, label, opts)).fetchone()[0]
        self.assertEqual(self.db.execute("SELECT DISTINCT quality_warnings FROM profsum_trace "
                                         "WHERE trace_id>=?", (tid,)).fetchall(), [("[]",)])
        return tid, self.db.execute("SELECT label, trace_path, (SELECT json_group_array(detail) FROM "
                                    "profsum_agg_diagnostic AS d WHERE d.trace_id=t.trace_id AND "
                                    "d.kind='folder_pick') FROM profsum_trace AS t "
                                    "WHERE trace_id>=? ORDER BY trace_id", (tid,)).fetchall()

    def test_picks(self):
        j = "plugins/profile/2024_01_01/h.trace.json.gz"
        self.assertEqual(self.picked(None), [j])
        self.assertEqual(self.picked('{"session": "reference", "hosts": "one"}'), [j])
        self.assertEqual(self.picked('{"session": "latest"}'), ["plugins/profile/2024_02_01/g.trace.json.gz"])
        self.assertEqual(self.picked('{"session": "latest", "hosts": "all"}'),
                         ["plugins/profile/2024_02_01/g.trace.json.gz", "plugins/profile/2024_02_01/h.trace.json.gz"])
        self.assertEqual(self.picked('{"session": "all"}'),
                         [j, "plugins/profile/2024_02_01/g.trace.json.gz"])
        self.assertEqual(len(self.picked('{"session": "all", "hosts": "all", "warmup_steps": 1}')), 3)
        with self.assertRaisesRegex(sqlite3.OperationalError,
                                    r"profsum_find_traces: '.*': no session 'x' \(the sessions found: "
                                    r"'2024_01_01' '2024_02_01'\)"):
            self.picked('{"session": "x"}')
        with self.assertRaisesRegex(sqlite3.OperationalError, "'hosts' must be 'one' or 'all', not \"many\""):
            self.picked('{"hosts": "many"}')
        with self.assertRaisesRegex(sqlite3.OperationalError, "'session' must be .* folder name, not 5"):
            self.picked('{"session": 5}')

    def test_default_unchanged(self):
        tid, rows = self.imp(None)
        self.assertEqual(rows[0][:2], ("r", self.p("2024_01_01", "h")))
        self.assertIn("This folder holds the traces of 2 profiling sessions", json.loads(rows[0][2])[0])
        self.assertEqual(self.db.execute("SELECT session_id, host FROM profsum_trace").fetchall(), [(None, None)])

    def test_latest_one_host(self):
        tid, rows = self.imp('{"session": "latest"}')
        self.assertEqual(rows[0][:2], ("r", self.p("2024_02_01", "g")))
        self.assertEqual(json.loads(rows[0][2]), [
            "With session 'latest' and hosts 'one', profsum read 1 of the 3 trace files of this folder "
            "and left 2 aside: '%s', '%s'. See profsum_find_traces(dir, options) for the pick."
            % (self.p("2024_01_01", "h"), self.p("2024_02_01", "h"))])

    def test_latest_of_several_xplanes_with_one_host(self):
        """The newest session holds two hosts' XPlanes and no trace JSON:
        hosts 'one' has nothing to read there, and says so, naming it and
        what reads it, rather than reading an older session instead."""
        for h in ("h0", "h1"):
            self.td.write(os.path.join("run", "plugins/profile/2024_03_01", h + ".xplane.pb"),
                          host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20)]))
        msg = ("profsum_import: '%s': session '2024_03_01'%s holds 2 *.xplane.pb files, one per host, and "
               "no trace JSON, and with hosts 'one' an XPlane is read only when it is the session's only "
               "one (summary §1.1): read its hosts with hosts 'all' (CLI: --all-hosts), give one of its "
               "files, or name another session")
        for opts, which in (('{"session": "latest"}', " (the latest)"),
                            ('{"session": "2024_03_01", "hosts": "one"}', "")):
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.imp(opts)
            self.assertEqual(str(cm.exception), msg % (self.dir, which))
        # nothing stored (not even the schema), and the listing marks
        # nothing: no older session in its place
        self.assertEqual(self.db.execute("SELECT count(*) FROM sqlite_master WHERE name='profsum_trace'")
                         .fetchone()[0], 0)
        self.assertEqual(self.picked('{"session": "latest"}'), [])
        tid, rows = self.imp('{"session": "latest", "hosts": "all"}')
        self.assertEqual([r[0] for r in rows], ["r/h0", "r/h1"])
        # a lone XPlane that does not decode, and no trace JSON
        self.td.write(os.path.join("run", "plugins/profile/2024_04_01", "h0.xplane.pb"), b"\xff")
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.imp('{"session": "latest"}')
        self.assertEqual(str(cm.exception), "profsum_import: '%s': session '2024_04_01' (the latest) holds "
                         "one *.xplane.pb, which does not decode as an XSpace protobuf, and no trace JSON: "
                         "nothing to read with hosts 'one' (give the file itself to see where it fails, or "
                         "name another session)" % self.dir)

    def test_named_session_all_hosts(self):
        tid, rows = self.imp('{"session": "2024_02_01", "hosts": "all"}')
        self.assertEqual([r[:2] for r in rows], [("r/g", self.p("2024_02_01", "g")), ("r/h", self.p("2024_02_01", "h"))])
        self.assertIn("left 1 aside: '%s'." % self.p("2024_01_01", "h"), json.loads(rows[0][2])[0])
        self.assertEqual(json.loads(rows[1][2]), json.loads(rows[0][2]))

    def test_note_names_every_file_not_read(self):
        """hosts 'all' in the newest session of a folder whose sessions
        also hold perfetto_trace.json.gz files: the note counts the files
        read, left aside and read in another form (they add up to the
        folder's), and names each of the last two kinds."""
        d = self.p("2024_02_01", "x")[:-len("/x.trace.json.gz")]
        self.td.write(os.path.join("run", "plugins/profile/2024_02_01", "perfetto_trace.json.gz"),
                      json_trace({1: 0, 2: 100}), gz=True)
        self.td.write(os.path.join("run", "plugins/profile/2024_01_01", "perfetto_trace.json.gz"),
                      json_trace({1: 0, 2: 100}), gz=True)
        self.td.write(os.path.join("run", "plugins/profile/2024_02_01", "g.trace.json"),
                      json_trace({1: 0, 2: 100}))
        old = os.path.join(self.dir, "plugins/profile/2024_01_01")
        tid, rows = self.imp('{"session": "latest", "hosts": "all"}')
        self.assertEqual([r[0] for r in rows], ["r/g", "r/h"])
        self.assertEqual(json.loads(rows[0][2]), [
            "With session 'latest' and hosts 'all', profsum read 2 of the 6 trace files of this folder and "
            "left 2 aside: the 2 trace files directly in '%s'; 2 more hold what it read in another form "
            "(another format of a host it read, or the perfetto_trace.json.gz JAX copies from the host "
            "trace beside it): '%s/g.trace.json', '%s/perfetto_trace.json.gz'. See "
            "profsum_find_traces(dir, options) for the pick." % (old, d, d)])
        self.assertEqual(json.loads(rows[1][2]), json.loads(rows[0][2]))
        # a file of a folder read in part is named by itself
        self.td.write(os.path.join("run", "plugins/profile/2024_01_01", "k.trace.json.gz"),
                      json_trace({1: 0, 2: 100}), gz=True)
        tid, rows = self.imp('{"session": "2024_01_01", "hosts": "all"}', "o")
        self.assertEqual([r[0] for r in rows], ["o/h", "o/k"])
        self.assertEqual(json.loads(rows[0][2]), [
            "With session '2024_01_01' and hosts 'all', profsum read 2 of the 7 trace files of this folder "
            "and left 4 aside: the 4 trace files directly in '%s'; 1 more holds what it read in another "
            "form (another format of a host it read, or the perfetto_trace.json.gz JAX copies from the "
            "host trace beside it): '%s/perfetto_trace.json.gz'. See profsum_find_traces(dir, options) "
            "for the pick." % (d, old)])

    def test_session_of_a_perfetto_trace_alone(self):
        """hosts 'all' and a session holding only a perfetto_trace.json.gz:
        no host can be named (not by the file's name, not by its content),
        so it is the session's one trace with host NULL, labelled as the
        session, and a host_unnamed diagnostic says why."""
        pf = self.td.write(os.path.join("run", "plugins/profile/2024_03_01", "perfetto_trace.json.gz"),
                           json_trace({1: 0, 2: 100}), gz=True)
        why = ("this session holds no file named after a host (<host>.xplane.pb, <host>.trace.json.gz or "
               "<host>.trace.json), only '%s', whose name carries none: it is read as the session's one "
               "trace, with host NULL, labelled as the session" % pf)

        def unnamed(tid):
            return self.db.execute("SELECT label, detail FROM profsum_diagnostic WHERE kind='host_unnamed' "
                                   "AND trace_id>=? ORDER BY 1", (tid,)).fetchall()
        tid, rows = self.imp('{"session": "latest", "hosts": "all"}', "p")
        self.assertEqual([r[:2] for r in rows], [("p", pf)])
        self.assertEqual(self.db.execute("SELECT host, session_label, alignment FROM profsum_hosts "
                                         "WHERE trace_id=?", (tid,)).fetchall(), [(None, "p", "steps")])
        self.assertEqual(self.db.execute("SELECT host, session_id IS NOT NULL FROM profsum_trace "
                                         "WHERE trace_id=?", (tid,)).fetchone(), (None, 1))
        self.assertEqual(unnamed(tid), [("p", why)])
        tid, rows = self.imp('{"session": "all", "hosts": "all"}', "a")
        self.assertEqual([r[0] for r in rows], ["a/2024_01_01/h", "a/2024_02_01/g", "a/2024_02_01/h",
                                                "a/2024_03_01"])
        self.assertEqual(unnamed(tid), [("a/2024_03_01", why)])
        # with hosts 'one' no host is expected: no diagnostic
        tid, rows = self.imp('{"session": "all"}', "o")
        self.assertEqual([r[0] for r in rows], ["o/2024_01_01", "o/2024_02_01", "o/2024_03_01"])
        self.assertEqual(unnamed(tid), [])

    def test_all_sessions(self):
        tid, rows = self.imp('{"session": "all", "hosts": "all"}')
        self.assertEqual([(r[0], r[2]) for r in rows],
                         [("r/2024_01_01/h", "[]"), ("r/2024_02_01/g", "[]"), ("r/2024_02_01/h", "[]")])
        self.assertEqual(self.db.execute("SELECT session_id, label FROM profsum_session").fetchall(),
                         [(1, "r/2024_01_01"), (2, "r/2024_02_01")])
        tid, rows = self.imp('{"session": "all"}', "one")
        self.assertEqual([r[0] for r in rows], ["one/2024_01_01", "one/2024_02_01"])
        self.assertIn("left 1 aside", json.loads(rows[1][2])[0])

    def test_replace_all_sessions_drops_those_gone(self):
        """session 'all' with replace takes the place of every session the
        label names: one removed from the folder goes with its traces."""
        self.imp('{"session": "all", "hosts": "all"}')
        shutil.rmtree(os.path.join(self.dir, "plugins/profile/2024_01_01"))
        self.imp('{"session": "all", "hosts": "all", "replace": true}')
        self.assertEqual(self.db.execute("SELECT label FROM profsum_session").fetchall(), [("r/2024_02_01",)])
        self.assertEqual(self.db.execute("SELECT label FROM profsum_trace ORDER BY label").fetchall(),
                         [("r/2024_02_01/g",), ("r/2024_02_01/h",)])
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_agg_op WHERE trace_id NOT IN "
                                         "(SELECT trace_id FROM profsum_trace)").fetchone()[0], 0)
        # another label's sessions, and a deeper label under it, stay
        self.imp('{"session": "all"}', "r/x")
        self.imp('{"session": "all", "hosts": "all"}', "other")
        self.imp('{"session": "all", "hosts": "all", "replace": true}')
        self.assertEqual([r[0] for r in self.db.execute("SELECT label FROM profsum_session ORDER BY label")],
                         ["other/2024_02_01", "r/2024_02_01", "r/x/2024_02_01"])

    def test_riegeli_only_first_session(self):
        """hosts 'all' with the reference's session and no reference pick
        (two XPlanes, no JSON): a first session of .xplane.riegeli files
        alone (nothing profsum reads) is passed over."""
        for h in ("h0", "h1"):
            self.td.write(os.path.join("rg", "2024_01_01", h + ".xplane.pb"),
                          host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20)]))
        self.td.write(os.path.join("rg", "2023_12_01", "h.xplane.riegeli"), b"\x00" * 16)
        d = os.path.join(self.td.path, "rg")
        self.assertEqual([os.path.relpath(r[0], d) for r in self.db.execute(
            "SELECT path FROM profsum_find_traces(?, '{\"hosts\": \"all\"}') WHERE picked", (d,))],
            ["2024_01_01/h0.xplane.pb", "2024_01_01/h1.xplane.pb"])
        self.db.execute("SELECT profsum_import(?, 'rg', '{\"hosts\": \"all\"}')", (d,))
        self.assertEqual(self.db.execute("SELECT group_concat(label, ' ') FROM (SELECT label FROM profsum_trace "
                                         "ORDER BY 1)").fetchone()[0], "rg/h0 rg/h1")

    def test_files_directly_in_dot(self):
        """Files directly in a folder given as '.' have no session name:
        their session is labelled by the label alone, not '<label>//<host>'."""
        d = os.path.join(self.dir, "plugins/profile/2024_02_01")
        script = ("import sqlite3, sys\n"
                  "db = sqlite3.connect(sys.argv[1]); db.enable_load_extension(True); db.load_extension(sys.argv[2])\n"
                  "db.execute(\"SELECT profsum_import('.', 'p', ?)\", (sys.argv[3],))\n"
                  "print(*[r[0] for r in db.execute('SELECT label FROM profsum_trace ORDER BY 1')])\n"
                  "print(*[r[0] for r in db.execute('SELECT label FROM profsum_session')])\n")
        out = subprocess.run(["/usr/bin/python3", "-c", script, os.path.join(self.td.path, "dot.db"), SO,
                              '{"session": "all", "hosts": "all"}'], cwd=d, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.splitlines(), ["p/g p/h", "p"])

    def test_errors(self):
        with self.assertRaisesRegex(sqlite3.OperationalError, r"profsum_import: '.*': no session '2023'"):
            self.imp('{"session": "2023"}')
        with self.assertRaisesRegex(sqlite3.OperationalError, "'session' and 'hosts' apply to a folder"):
            self.db.execute("SELECT profsum_import(?, 'x', '{\"hosts\": \"all\"}')", (self.p("2024_01_01", "h"),))
        with self.assertRaisesRegex(sqlite3.OperationalError, "'hosts' must be 'one' or 'all', not \"every\""):
            self.imp('{"hosts": "every"}')


class OldDatabase(unittest.TestCase):
    def test_database_without_the_session_columns(self):
        """A database made before the session tables gets them, and its
        traces keep working (session_id and host NULL)."""
        with TempDir() as td:
            dbp = os.path.join(td.path, "old.db")
            d = pod_files(td)
            db = connect(dbp)
            db.execute("SELECT profsum_import(?, 'one')", (os.path.join(d, SESSION, "h0.xplane.pb"),))
            db.executescript("DROP VIEW profsum_hosts; DROP VIEW profsum_stragglers; DROP VIEW profsum_host_steps;"
                             "DROP TABLE profsum_session; DROP TABLE profsum_agg_host; DROP TABLE profsum_agg_device_step;"
                             "UPDATE profsum_meta SET value='0000000000000000' WHERE key='schema_id';")
            sql = db.execute("SELECT sql FROM sqlite_master WHERE name='profsum_trace'").fetchone()[0]
            db.execute("CREATE TABLE tmp_old AS SELECT * FROM profsum_trace")
            db.execute("DROP TABLE profsum_trace")
            db.execute(strip_columns(sql, ["session_id", "host", "profsum_build"]))
            cols = ", ".join(r[1] for r in db.execute("PRAGMA table_info(profsum_trace)"))
            db.execute("INSERT INTO profsum_trace SELECT %s FROM tmp_old" % cols)
            db.execute("DROP TABLE tmp_old")
            db.commit()
            self.assertNotIn("host", [r[1] for r in db.execute("PRAGMA table_info(profsum_trace)")])
            db.close()
            db = connect(dbp)
            self.assertEqual(db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (d,)).fetchone()[0], 2)
            self.assertEqual(db.execute("SELECT label, session_id, host FROM profsum_trace ORDER BY trace_id").fetchall(),
                             [("one", None, None), ("pod/h0", 1, "h0"), ("pod/h1", 1, "h1"), ("pod/h2", 1, "h2"),
                              ("pod/h3", 1, "h3")])
            self.assertEqual(db.execute("SELECT count(*) FROM profsum_hosts").fetchone()[0], 4)
            db.close()


class Cli(unittest.TestCase):
    def run_cli(self, *args):
        p = subprocess.run([os.path.join(ROOT, "profsum")] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def test_all_hosts_and_session(self):
        with TempDir() as td:
            d = pod_files(td)
            dbp = os.path.join(td.path, "p.db")
            rc, out, err = self.run_cli("summarize", "--profile-dir", d, "--db", dbp, "--all-hosts")
            self.assertEqual((rc, err), (0, ""))
            self.assertEqual(json.loads(out)["trace_overview"]["num_complete_events"], 9)
            db = connect(dbp)
            self.assertEqual(db.execute("SELECT label FROM profsum_trace ORDER BY trace_id").fetchall(),
                             [("pod/h0",), ("pod/h1",), ("pod/h2",), ("pod/h3",)])
            db.close()
            td.write(os.path.join("pod", "plugins/profile/2024_05_05", "late.trace.json.gz"),
                     json_trace({1: 0}), gz=True)
            rc, out, err = self.run_cli("summarize", "--profile-dir", d, "--session", "latest")
            self.assertEqual(rc, 0, err)
            self.assertEqual(err, "profsum: warning: pod: With session 'latest' and hosts 'one', profsum read 1 "
                             "of the 5 trace files of this folder and left 4 aside: the 4 trace files directly "
                             "in '%s'. See profsum_find_traces(dir, options) for the pick.\n"
                             % os.path.join(d, SESSION))

    def test_all_hosts_says_what_it_did_with_a_host(self):
        """--all-hosts prints one line per host read from its trace JSON
        for an XPlane that does not decode, or left unaligned, in the style
        of the other warnings; the note on the files left aside, the same
        on every host, once."""
        with TempDir() as td:
            steps = [(1, 50, 20), (2, 50, 20)]
            td.write(os.path.join("p", SESSION, "h0.xplane.pb"), host_xspace(BASE_NS, steps))
            bad = td.write(os.path.join("p", SESSION, "h1.xplane.pb"), host_xspace(BASE_NS, steps)[:40])
            td.write(os.path.join("p", SESSION, "h1.trace.json.gz"), json_trace({1: 0, 2: 100}), gz=True)
            td.write(os.path.join("p", SESSION, "h2.trace.json.gz"), json_trace({7: 0, 8: 100}), gz=True)
            old = td.write(os.path.join("p", "plugins/profile/2023_12_01", "old.trace.json.gz"),
                           json_trace({1: 0}), gz=True)
            d = os.path.join(td.path, "p")
            rc, out, err = self.run_cli("summarize", "--profile-dir", d, "--all-hosts", "--session", "latest")
            self.assertEqual(rc, 0, err)
            lines = err.splitlines()
            self.assertEqual(len(lines), 3, err)
            self.assertRegex(lines[0], r"^profsum: warning: p/h0: With session 'latest' and hosts 'all', profsum "
                             r"read 3 of the 5 trace files of this folder and left 1 aside: '%s'; 1 more holds "
                             % re.escape(old))
            self.assertRegex(lines[1], r"^profsum: warning: p/h1: the host's XPlane does not decode, so its trace "
                             r"JSON was read: profsum_import: '%s': byte 0 \(plane 0\): XSpace field 1 "
                             r"\(planes\): length \d+ runs past the end of the file \(\d+ bytes left\)$"
                             % re.escape(bad))
            self.assertEqual(lines[2], "profsum: warning: p/h2: no usable Task Environment profile_start_time, "
                             "and no step number in common with the first aligned host, 'p/h0' (trace_id 1): "
                             "placed at offset 0, alignment none")


if __name__ == "__main__":
    unittest.main()
