"""PyTorch's memory events in a trace JSON (docs/memory.md, "PyTorch's
memory events"): the instant events named [memory] that the profiler writes
with profile_memory=True become profsum_memory rows, sized by the trace's
deviceProperties, with the memory_peak KPI and advice that follow.

Every figure asserted is worked out by hand from the events written.  When
the shared corpus is present, each of its PyTorch traces with such events
is checked against an independent pass in Python over its trace_events
rows."""
import glob
import gzip
import json
import os
import tempfile
import unittest

from util import CORPUS, OOM_SQL, DbTestCase, run_oom_sql


def mem(ts, nbytes, addr, allocated, reserved=None, dtype=1, did=0, pid=7, tid=7, **extra):
    """A [memory] event as PyTorch's profiler writes it (None: the arg absent)."""
    args = {"Total Reserved": reserved, "Total Allocated": allocated, "Bytes": nbytes,
            "Device Id": did, "Device Type": dtype, "Addr": addr}
    args = {k: v for k, v in args.items() if v is not None}
    args.update(extra)
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
            "pid": pid, "tid": tid, "ts": ts, "args": args}


def op(ts, dur, name="aten::mm", pid=7, tid=7):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}


DEVICES = [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 1000},
           {"id": 1, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 0},    # no size: ignored
           "not an object"]


class TorchMemory(DbTestCase):
    def imp(self, events, devices=DEVICES, name="t.json"):
        doc = {"schemaVersion": 1, "traceEvents": events}
        if devices is not None:
            doc["deviceProperties"] = devices
        path = self.td.write(name, doc)
        return self.db.execute("SELECT profsum_import(?)", (path,)).fetchone()[0]

    def rows(self, sql, args=()):
        cur = self.db.execute(sql, args)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def test_peak_holders_and_device_size(self):
        tid = self.imp([
            op(9, 10),
            mem(10, 300, 100, 300, 512),
            mem(10.5, 8, 5, 8, 0, dtype=0, did=-1),        # the CPU allocator
            mem(11, 200, 200, 500, 512),
            mem(11.5, -8, 5, 0, 0, dtype=0, did=-1),
            mem(12, -300, 100, 200, 512),
            mem(13, 650, 300, 850, 1024),                  # the peak
            mem(14, -650, 300, 200, 1024),
            mem(15, -50, 999, 150, 1024),                  # allocated before the capture
        ])
        got = {r["allocator"]: r for r in self.rows(
            "SELECT * FROM profsum_memory WHERE trace_id=?", (tid,))}
        self.assertEqual(sorted(got), ["cpu", "cuda:0"])
        g = got["cuda:0"]
        self.assertEqual(
            (g["device"], g["status"], g["peak_bytes"], g["peak_ts_us"], g["lifetime_peak_bytes"],
             g["device_memory_bytes"], g["peak_share"], g["num_allocations"], g["num_deallocations"],
             g["allocated_bytes"], g["live_allocations_at_peak"], g["known_live_bytes_at_peak"],
             g["unknown_live_bytes_at_peak"]),
            ("/device:GPU:0", "ok", 850, 13.0, None, 1000, 0.85, 3, 3, 1150, 2, 850, 0))
        holders = json.loads(g["top_holders"])
        self.assertEqual([(h["addr"], h["bytes"], h["allocated_at_us"], h["tf_op"], h["shape"]) for h in holders],
                         [(300, 650, 13, None, None), (200, 200, 11, None, None)])
        self.assertEqual(g["note"], "every byte in use at the peak was allocated within the capture; "
                                    "PyTorch's caching allocator: peak_bytes counts the bytes of the blocks it "
                                    "handed out ('Total Allocated'); the memory it reserved from the device (cached "
                                    "blocks included, 'Total Reserved') peaked at 1024 bytes")
        c = got["cpu"]
        self.assertEqual((c["device"], c["peak_bytes"], c["peak_ts_us"], c["device_memory_bytes"],
                          c["num_allocations"], c["num_deallocations"]), (None, 8, 10.5, None, 1, 1))
        # no cache and no reservation on the CPU: the note does not speak of them
        self.assertEqual(c["note"], "every byte in use at the peak was allocated within the capture; "
                                    "PyTorch's allocator: peak_bytes counts the bytes of the blocks it handed out "
                                    "('Total Allocated')")
        # the free of an address allocated before the capture is said
        d = [r["detail"] for r in self.rows("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                            "AND kind='memory_unmatched_deallocation'", (tid,))]
        self.assertEqual(len(d), 1)
        self.assertTrue(d[0].startswith("allocator 'cuda:0': 1 deallocations free an address"), d)
        # the timeline ends at the last event's bytes in use
        tl = self.rows("SELECT max(max_bytes_in_use) AS mx, sum(num_events) AS n FROM profsum_memory_timeline "
                       "WHERE trace_id=? AND allocator='cuda:0'", (tid,))[0]
        self.assertEqual((tl["mx"], tl["n"]), (850, 6))
        k = self.rows("SELECT device, value, band FROM profsum_kpis WHERE trace_id=? AND kpi='memory_peak'", (tid,))
        self.assertEqual(k, [{"device": "/device:GPU:0", "value": 0.85, "band": "warning"}])

    def test_profiler_steps(self):
        """No step spans in a PyTorch trace: its ProfilerStep#N ranges are the steps."""
        tid = self.imp([
            op(5, 7, name="ProfilerStep#1"), op(12, 8, name="ProfilerStep#2"),
            # Kineto's copy of a step on the GPU's timeline (later, longer): not a step
            dict(op(15, 30, name="ProfilerStep#2", pid=0, tid=7), cat="gpu_user_annotation"),
            op(20, 5, name="ProfilerStep#x"),               # no number: no step
            mem(6, 100, 1, 100, 100), mem(7, -100, 1, 0, 100),
            mem(13, 300, 2, 300, 300), mem(14, 50, 3, 350, 400), mem(16, -300, 2, 50, 400),
            mem(21, 10, 4, 60, 400)])                      # after the last step
        r = self.rows("SELECT peak_bytes, peak_ts_us, peak_step, per_step FROM profsum_memory WHERE trace_id=?",
                      (tid,))
        self.assertEqual(r, [{"peak_bytes": 350, "peak_ts_us": 14.0, "peak_step": 2,
                              "per_step": '[{"step":1,"allocations":1,"bytes":100},'
                                          '{"step":2,"allocations":2,"bytes":350}]'}])
        # the summary takes no steps from them (the reference's rules are JAX's)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_steps WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 0)

    def test_advice_names_the_framework(self):
        """A full PyTorch GPU gets PyTorch's fixes; a JAX allocator in the same
        shape of trace keeps JAX's."""
        t1 = self.imp([op(9, 10), mem(10, 950, 1, 950, 960), mem(12, -950, 1, 0, 960)], name="a.json")
        fixes = json.loads(self.db.execute("SELECT fixes FROM profsum_advice WHERE trace_id=? AND "
                                           "advice_id='memory_peak'", (t1,)).fetchone()[0])
        self.assertIn("checkpoint large activations (torch.utils.checkpoint)", fixes)
        self.assertFalse([f for f in fixes if "jax" in f or "donate" in f], fixes)
        jax = [op(9, 10),
               {"ph": "X", "pid": 1, "tid": 1, "name": "MemoryAllocation", "ts": 10, "dur": 0,
                "args": {"allocator_name": "GPU_0_bfc", "bytes_allocated": 950, "addr": 1, "allocation_bytes": 950}}]
        t2 = self.imp(jax, name="b.json")
        m = self.rows("SELECT allocator, device, device_memory_bytes FROM profsum_memory WHERE trace_id=?", (t2,))
        self.assertEqual(m, [{"allocator": "GPU_0_bfc", "device": "/device:GPU:0", "device_memory_bytes": 1000}])
        fixes = json.loads(self.db.execute("SELECT fixes FROM profsum_advice WHERE trace_id=? AND "
                                           "advice_id='memory_peak'", (t2,)).fetchone()[0])
        self.assertIn("donate buffers (donate_argnums)", fixes)

    def test_out_of_memory_events(self):
        """A failed allocation: counted in the note, said in a diagnostic, no record."""
        def oom(ts, nbytes, **kw):
            e = mem(ts, nbytes, None, 900, 1000, **kw)
            e["name"] = "[OutOfMemory]"
            if ts is None:
                del e["ts"]
            return e
        tid = self.imp([op(9, 10), mem(10, 900, 1, 900, 1000),
                        oom(14, 8192), oom(13, 4096),              # the earlier one later in the file
                        oom(None, "x"),                            # no time, Bytes no number
                        mem(15, -900, 1, 0, 1000)])
        g = self.rows("SELECT allocator, peak_bytes, num_allocations, num_deallocations, note FROM profsum_memory "
                      "WHERE trace_id=?", (tid,))
        self.assertEqual([(r["allocator"], r["peak_bytes"], r["num_allocations"], r["num_deallocations"])
                          for r in g], [("cuda:0", 900, 1, 1)])
        self.assertTrue(g[0]["note"].endswith(
            "peaked at 1000 bytes; 3 allocations failed for lack of memory ([OutOfMemory]), the first of "
            "4096 bytes at 13.000 us"), g[0]["note"])
        d = [r["detail"] for r in self.rows("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                            "AND kind='memory_out_of_memory' ORDER BY detail", (tid,))]
        self.assertEqual(d, [
            "out of memory: an allocation of (invalid) bytes on allocator 'cuda:0' failed at an unknown time "
            "('Total Allocated' 900, 'Total Reserved' 1000 bytes; -1: not given)",
            "out of memory: an allocation of 4096 bytes on allocator 'cuda:0' failed at 13.000 us "
            "('Total Allocated' 900, 'Total Reserved' 1000 bytes; -1: not given)",
            "out of memory: an allocation of 8192 bytes on allocator 'cuda:0' failed at 14.000 us "
            "('Total Allocated' 900, 'Total Reserved' 1000 bytes; -1: not given)"])
        # only a failure without a time: the note says so
        t4 = self.imp([mem(10, 900, 1, 900, 1000), oom(None, 64)], name="nots.json")
        n = self.db.execute("SELECT note FROM profsum_memory WHERE trace_id=?", (t4,)).fetchone()[0]
        self.assertTrue(n.endswith("the first of 64 bytes at an unknown time"), n)
        # one without a device, and no [memory] event: said, on no allocator
        bare = {"ph": "i", "name": "[OutOfMemory]", "pid": 7, "tid": 7, "ts": 20, "args": {}}
        t2 = self.imp([op(9, 10), bare], name="bare.json")
        d = [r["detail"] for r in self.rows("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                            "AND kind='memory_out_of_memory'", (t2,))]
        self.assertEqual(d, ["out of memory: an allocation of (not given) bytes on allocator 'unnamed' "
                             "failed at 20.000 us ('Total Allocated' -1, 'Total Reserved' -1 bytes; -1: not given)"])
        self.assertEqual(self.rows("SELECT status, note FROM profsum_memory WHERE trace_id=?", (t2,)), [
            {"status": "no_allocation_events",
             "note": "the trace holds no PyTorch [memory] event; 1 allocations failed for lack of memory "
                     "([OutOfMemory], in profsum_diagnostic)"}])
        # every [memory] event left out: said so, not "no memory events"
        t3 = self.imp([op(9, 10), mem(10, 5, 1, None), mem(11, 5, 2, -1)], name="none.json")
        self.assertEqual(self.rows("SELECT status, note FROM profsum_memory WHERE trace_id=?", (t3,)), [
            {"status": "no_allocation_events",
             "note": "every PyTorch [memory] event of the trace was left out (see profsum_diagnostic)"}])
        k = self.rows("SELECT band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi='memory_peak'", (t3,))
        self.assertEqual(k, [{"band": "unavailable", "explanation": "no usable allocation events (memory activity "
                              "was not recorded, or every event was left out: profsum_diagnostic)"}])

    def test_allocator_names(self):
        tid = self.imp([
            mem(10, 10, 1, 10, dtype=6, did=2),            # PyTorch on ROCm
            mem(11, 10, 2, 10, dtype=8, did=0),            # a type renamed across versions
            mem(12, 10, 3, 10, dtype=1, did=-1),           # a CUDA event without an index
            mem(13, 10, 4, 10, dtype=13, did=0),
        ], devices=None)
        got = self.rows("SELECT allocator, device, device_memory_bytes, peak_share FROM profsum_memory "
                        "WHERE trace_id=? ORDER BY allocator", (tid,))
        self.assertEqual(got, [
            {"allocator": "cuda", "device": None, "device_memory_bytes": None, "peak_share": None},
            {"allocator": "device_type_8:0", "device": None, "device_memory_bytes": None, "peak_share": None},
            {"allocator": "hip:2", "device": "/device:GPU:2", "device_memory_bytes": None, "peak_share": None},
            {"allocator": "mps:0", "device": None, "device_memory_bytes": None, "peak_share": None}])
        k = self.rows("SELECT device, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi='memory_peak'",
                      (tid,))
        self.assertEqual([(r["device"], r["band"], r["explanation"]) for r in k], [
            ("/device:GPU:2", "unavailable",
             "allocator hip:2 peaks at 10 bytes in use, but the trace's deviceProperties give no totalGlobalMem "
             "for /device:GPU:2")])

    def test_signed_addresses(self):
        """PyTorch writes the pointer as a signed integer: a negative one is
        its 64 bits, so its free matches its allocation."""
        tid = self.imp([mem(10, 100, -16, 100), mem(11, 50, 2 ** 63 - 1, 150), mem(12, -100, -16, 50),
                        mem(13, 200, -(2 ** 63), 250), mem(14, -200, -(2 ** 63), 50)])
        r = self.rows("SELECT peak_bytes, live_allocations_at_peak, known_live_bytes_at_peak, top_holders "
                      "FROM profsum_memory WHERE trace_id=?", (tid,))[0]
        self.assertEqual((r["peak_bytes"], r["live_allocations_at_peak"], r["known_live_bytes_at_peak"]),
                         (250, 2, 250))
        # (an address above 2^63 - 1 is written as its decimal text, as in the XPlane path)
        self.assertEqual([(h["addr"], h["bytes"]) for h in json.loads(r["top_holders"])],
                         [("9223372036854775808", 200), (2 ** 63 - 1, 50)])
        d = [x["detail"] for x in self.rows("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                            "AND kind='memory_unmatched_deallocation'", (tid,))]
        self.assertEqual(d, [])

    def test_events_left_out_say_why(self):
        tid = self.imp([
            mem(10, 10, 1, None),                          # no Total Allocated
            mem(11, 10, 2, 10, dtype=None),                # no Device Type
            mem(11.5, 10, 2, 10, dtype="cuda"),            # one that is no number
            mem(12, 10, 3, -5),                            # a negative Total Allocated
            mem(13, "ten", 4, 10),                         # Bytes as text
            mem(14, None, 5, 40),                          # no Bytes: an allocation of unknown size
            mem(15, -(2 ** 63) - 1, 6, 10),                # a Bytes below the 64-bit range
            mem(16, 20, 7, 60),
        ])
        d = {}
        for kind, detail in self.db.execute(
                "SELECT kind, detail FROM profsum_diagnostic WHERE trace_id=? AND kind LIKE 'memory%' "
                "AND kind NOT IN ('memory_unfreed_allocation') ORDER BY kind, detail", (tid,)):
            d.setdefault(kind, []).append(detail)
        self.assertEqual(d["memory_event_incomplete"], [
            "PyTorch [memory] event without 'Total Allocated' (or a ts): left out of the memory views",
            "PyTorch [memory] event without a usable 'Device Type': left out of the memory views",
            "PyTorch [memory] event without a usable 'Device Type': left out of the memory views"])
        self.assertEqual(sorted(d["memory_bytes_out_of_range"]), [
            "PyTorch [memory] event of allocator 'cuda:0': 'Bytes' is negative, not an integer or 2^50 bytes "
            "or more: the event is left out of the memory views",
            "PyTorch [memory] event of allocator 'cuda:0': 'Bytes' is negative, not an integer or 2^50 bytes "
            "or more: the event is left out of the memory views",
            "PyTorch [memory] event of allocator 'cuda:0': 'Total Allocated' is negative, not an integer or "
            "2^50 bytes or more: the event is left out of the memory views"])
        m = self.rows("SELECT peak_bytes, peak_ts_us, num_allocations, num_deallocations, allocated_bytes "
                      "FROM profsum_memory WHERE trace_id=?", (tid,))
        self.assertEqual(m, [{"peak_bytes": 60, "peak_ts_us": 16.0, "num_allocations": 2,
                              "num_deallocations": 0, "allocated_bytes": 20}])

    def test_a_trace_without_memory_events(self):
        tid = self.imp([op(9, 10)])
        m = self.rows("SELECT allocator, status, note FROM profsum_memory WHERE trace_id=?", (tid,))
        self.assertEqual(m, [{"allocator": None, "status": "not_in_trace_json",
                              "note": "the trace JSON holds no memory events: JAX's profiler keeps them in the "
                                      "capture's .xplane.pb (import it for memory figures); PyTorch's writes "
                                      "them when run with profile_memory=True"}])
        # trace_events and the v1 document do not depend on the memory rows
        a = self.td.write("plain.json", {"traceEvents": [op(9, 10), mem(10, 5, 1, 5)]})
        b = self.td.write("props.json", {"traceEvents": [op(9, 10), mem(10, 5, 1, 5)],
                                           "deviceProperties": DEVICES})
        ra = self.db.execute("SELECT count(*), sum(ph='i') FROM trace_events(?)", (a,)).fetchone()
        rb = self.db.execute("SELECT count(*), sum(ph='i') FROM trace_events(?)", (b,)).fetchone()
        self.assertEqual(ra, (2, 1))
        self.assertEqual(ra, rb)


@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan)")
class OutOfMemory(unittest.TestCase):
    """Every allocation of an import with PyTorch memory events and device
    properties failed in turn (tests/oom_sql.c, ASan): each run is an error
    or the full result, and nothing leaks."""

    def test_import_fails_cleanly(self):
        doc = {"traceEvents": [op(9, 10), op(9, 3, name="ProfilerStep#1"), op(12, 9, name="ProfilerStep#2"),
                               mem(10, 300, 100, 300, 512), mem(11, -300, 100, 0, 512),
                               mem(12, 8, 5, 8, 0, dtype=0, did=-1), mem(13, 10, 1, None),
                               mem(14, 950, 7, 950, 960, dtype=6, did=0),
                               dict(mem(15, 99, None, 950, 960, dtype=6, did=0), name="[OutOfMemory]"),
                               {"ph": "i", "name": "[OutOfMemory]", "pid": 7, "tid": 7, "args": {"Bytes": 1}}],
               "deviceProperties": DEVICES}
        with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
            pj = os.path.join(tmp, "t.json")
            with open(pj, "w") as f:
                json.dump(doc, f)
            run_oom_sql(self, ["SELECT profsum_import('%s', 'j')" % pj,
                               "SELECT count(*) FROM profsum_advice"])


def corpus_torch_traces():
    """The corpus's trace JSON files that hold [memory] events."""
    out = []
    for p in sorted(glob.glob(os.path.join(CORPUS, "**", "*.json*"), recursive=True)):
        if "derived" in p or not (p.endswith(".json") or p.endswith(".json.gz")):
            continue
        opener = gzip.open if p.endswith(".gz") else open
        with opener(p, "rb") as f:
            if b'"[memory]"' in f.read(64 << 20):
                out.append(p)
    return out


@unittest.skipUnless(os.path.isdir(CORPUS), "the shared corpus is not present")
class Corpus(DbTestCase):
    def test_peaks_equal_a_python_pass(self):
        paths = corpus_torch_traces()
        self.assertTrue(paths)
        names = {0: "cpu", 1: "cuda", 6: "hip", 9: "xla", 12: "xpu", 13: "mps", 15: "hpu"}
        for path in paths:
            with self.subTest(path=os.path.basename(path)):
                tid = self.db.execute("SELECT profsum_import(?, NULL, '{\"unique_label\": true}')",
                                      (path,)).fetchone()[0]
                by = {}
                for ts, args in self.db.execute("SELECT ts, args FROM trace_events(?) WHERE name='[memory]' "
                                                "AND ph='i' ORDER BY ts, idx", (path,)):
                    a = json.loads(args)
                    name = names.get(a["Device Type"], "device_type_%d" % a["Device Type"]) + \
                        (":%d" % a["Device Id"] if a["Device Id"] >= 0 else "")
                    by.setdefault(name, []).append((ts, a))
                got = {r[0]: r[1:] for r in self.db.execute(
                    "SELECT allocator, peak_bytes, peak_ts_us, num_allocations, num_deallocations, "
                    "allocated_bytes, status FROM profsum_memory WHERE trace_id=?", (tid,))}
                self.assertEqual(sorted(got), sorted(by))
                for name, evs in by.items():
                    peak = max(a["Total Allocated"] for _, a in evs)
                    first = min(ts for ts, a in evs if a["Total Allocated"] == peak)
                    allocs = [a for _, a in evs if a["Bytes"] >= 0]
                    r = got[name]
                    self.assertEqual(r[0], peak)
                    self.assertLess(abs(r[1] * 1000 - first), 1.0)   # trace_events.ts is in ns
                    self.assertEqual((r[2], r[3]), (len(allocs), len(evs) - len(allocs)))
                    self.assertEqual(r[4], sum(a["Bytes"] for a in allocs))
                    self.assertEqual(r[5], "ok")


if __name__ == "__main__":
    unittest.main()
