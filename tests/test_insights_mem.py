"""Memory and GPU kernels computed at import: profsum_memory,
profsum_memory_timeline, profsum_kernel_stats and the KPIs memory_peak and
occupancy (docs/memory.md).

Fixtures are XSpace files written with tests/xspace_writer.py; every
figure asserted was worked out by hand from the events written.  Times in
the fixtures are given in µs and stored in ps (µs × 1e6).  When the shared
corpus is present, each of its XPlane captures is checked against an
independent pass in Python over its trace_events rows."""
import glob
import json
import os
import unittest

import xspace_writer as W
from util import CORPUS, OOM_SQL, SQLRUN, DbTestCase, import_memory, run_oom_sql

US = 10 ** 6
MEMSIZE = 2000


def mem_event(pb, name, off_us, allocator="GPU_0_bfc", addr=None, nbytes=None, in_use=None,
              life=1700, req=None, tf_op=None, region=None, dtype=None, shape=None, extra=()):
    """A MemoryAllocation / MemoryDeallocation XEvent (zero duration)."""
    st = []
    if allocator is not None:
        st.append(pb.stat("allocator_name", s=allocator))
    if in_use is not None:
        st.append(pb.stat("bytes_allocated", i64=in_use))
    if life is not None:
        st.append(pb.stat("peak_bytes_in_use", i64=life))
    if nbytes is not None:
        st.append(pb.stat("allocation_bytes", i64=nbytes))
        st.append(pb.stat("requested_bytes", i64=req if req is not None else nbytes))
    if addr is not None:
        st.append(pb.stat("addr", u64=addr))
    if tf_op is not None:
        st.append(pb.stat("tf_op", s=tf_op))
    if region is not None:
        st.append(pb.stat("region_type", s=region))
    if dtype is not None:
        st.append(pb.stat("data_type", i64=dtype))
    if shape is not None:
        st.append(pb.stat("shape", s=shape))
    st.extend(extra)
    return pb.event(name, offset_ps=round(off_us * US), duration_ps=0, stats=st)


def kernel(pb, name, off_us, dur_us, details, hlo_op=None, hlo_module=None):
    st = [pb.stat("kernel_details", s=details)]
    if hlo_op is not None:
        st.append(pb.stat("hlo_op", s=hlo_op))
    if hlo_module is not None:
        st.append(pb.stat("hlo_module", s=hlo_module))
    return pb.event(name, offset_ps=round(off_us * US), duration_ps=round(dur_us * US), stats=st)


def gpu_capture(with_memory=True):
    """Host plane: two lines of memory events (out of time order between
    them), host 'train' steps 1 [1, 4.5) µs and 2 [4.5, 11) µs; GPU:0 and
    GPU:1 planes with memory_size 2000 and kernels.  Line times start at
    1000 ns, so event offset t µs is 1 + t µs on the trace's clock.

    Replayed in time order (GPU_0_bfc; bytes in use after each event):
      t0 alloc A 0x1000 100 B -> 1100     t4 free B            -> 1300
      t1 free 0x9999 (unknown) -> 900     t5 alloc D 0x4000 50 -> 1350
      t2 alloc B 0x2000 300 B -> 1200     t6 free A            -> 1250
      t3 alloc C 0x3000 400 B -> 1600     t7 alloc E 0x5000 350 -> 1600 (tie)
    Peak 1600 first at t3 (4.0 µs, step 1); live then: C 400, B 300, A 100
    (800 bytes known, 800 held by allocations made before the capture)."""
    host = W.PlaneBuilder("/host:CPU", id=1)
    if with_memory:
        a = mem_event
        host.line(id=1, name="python", timestamp_ns=1000, events=[
            a(host, "MemoryAllocation", 0, addr=0x1000, nbytes=100, req=90, in_use=1100,
              tf_op="jit(f)/dot", region="output", dtype=1, shape="[25]"),
            a(host, "MemoryAllocation", 2, addr=0x2000, nbytes=300, in_use=1200, tf_op="b"),
            a(host, "MemoryAllocation", 3, addr=0x3000, nbytes=400, in_use=1600, life=1900,
              tf_op="c", region="temp", dtype=19, shape="[10,20]"),
            a(host, "MemoryAllocation", 5, addr=0x4000, nbytes=50, in_use=1350, tf_op="(null)"),
            a(host, "MemoryAllocation", 7, addr=0x5000, nbytes=350, in_use=1600, tf_op="e"),
            # bad input: each left out, none may move the peak
            a(host, "MemoryAllocation", 3.5, addr=0x6000, nbytes=10, in_use=-5),
            a(host, "MemoryAllocation", 3.6, addr=0x6100, nbytes=10, in_use=2 ** 60),
            a(host, "MemoryAllocation", 3.7, addr=0x6200, nbytes=-10, in_use=1610),
            a(host, "MemoryAllocation", 3.8, addr=0x6300, nbytes=10, in_use=3000),   # > memory_size
            a(host, "MemoryAllocation", 3.9, allocator=None, addr=0x6400, nbytes=10, in_use=1700),
            # a host allocator: no device
            a(host, "MemoryAllocation", 1, allocator="xla_gpu_host_bfc", addr=0x77, nbytes=256,
              in_use=256, life=256),
        ])
        host.line(id=2, name="callback", timestamp_ns=1000, events=[
            a(host, "MemoryDeallocation", 1, addr=0x9999, nbytes=200, in_use=900),
            a(host, "MemoryDeallocation", 4, addr=0x2000, nbytes=300, in_use=1300),
            a(host, "MemoryDeallocation", 6, addr=0x1000, nbytes=100, in_use=1250),
        ])
    host.line(id=3, name="steps", timestamp_ns=1000, events=[
        host.event("train", offset_ps=0, duration_ps=round(3.5 * US), stats=[host.stat("step_num", i64=1)]),
        host.event("train", offset_ps=round(3.5 * US), duration_ps=round(6.5 * US),
                   stats=[host.stat("step_num", i64=2)])])
    gpus = []
    for g in (0, 1):
        pb = W.PlaneBuilder("/device:GPU:%d" % g, id=10 + g)
        pb.plane_stat("memory_size", i64=MEMSIZE)
        pb.plane_stat("device_vendor", s="NVIDIA")
        gemm = "regs:32 static_shared:1024 dynamic_shared:0 grid:10,1,1 block:256,1,1 occ_pct:50"
        if g == 0:
            evs = [kernel(pb, "gemm", 0, 10, gemm, "dot.1", "jit_f"),
                   kernel(pb, "gemm", 20, 20, gemm, "dot.1", "jit_f"),
                   kernel(pb, "fusion", 50, 5,
                          "regs:2191500840 group_mem:512 grid:210453397508,1,1 block:128,1,1 occ_pct:0",
                          "fusion.3"),
                   kernel(pb, "copy", 60, 100,
                          "grid:1\nblock:64 shm:7 private_mem:99 occ_pct:12.5 regs:abc")]
        else:
            evs = [kernel(pb, "gemm", 0, 30, gemm, "dot.1", "jit_a")]
        pb.line(id=1, name="Stream #1(Kernel)", timestamp_ns=1000, events=evs)
        gpus.append(pb.build())
    return W.xspace([host.build()] + gpus, hostnames=["h0"])


class MemTestCase(DbTestCase):
    def imp(self, data, name="t.xplane.pb", opts=None):
        path = self.td.write(name, data)
        return self.db.execute("SELECT profsum_import(?, NULL, ?)", (path, opts)).fetchone()[0]

    def rows(self, sql, args=()):
        cur = self.db.execute(sql, args)
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]

    def one(self, sql, args=()):
        r = self.rows(sql, args)
        self.assertEqual(len(r), 1, r)
        return r[0]


class Memory(MemTestCase):
    def test_peak_and_holders(self):
        tid = self.imp(gpu_capture())
        m = self.one("SELECT * FROM profsum_memory WHERE trace_id=? AND allocator='GPU_0_bfc'", (tid,))
        holders = json.loads(m.pop("top_holders"))
        self.assertEqual(m, {
            "trace_id": tid, "label": "t", "allocator": "GPU_0_bfc", "device": "/device:GPU:0",
            "peak_bytes": 1600, "peak_ts_us": 4.0, "peak_step": 1, "lifetime_peak_bytes": 1900,
            "device_memory_bytes": MEMSIZE, "peak_share": 0.8, "num_allocations": 5,
            "num_deallocations": 3, "allocated_bytes": 1200, "live_allocations_at_peak": 3,
            "known_live_bytes_at_peak": 800, "unknown_live_bytes_at_peak": 800,
            "per_step": '[{"step":1,"allocations":3,"bytes":800},{"step":2,"allocations":2,"bytes":400}]',
            "status": "ok",
            "note": "800 of the 1600 bytes in use at the peak were allocated before the capture began "
                    "(or by events left out, or without an addr): their holders are unknown"})
        self.assertEqual(holders, [
            {"addr": 0x3000, "bytes": 400, "requested_bytes": 400, "tf_op": "c", "region_type": "temp",
             "data_type": 19, "shape": "[10,20]", "allocated_at_us": 4},
            {"addr": 0x2000, "bytes": 300, "requested_bytes": 300, "tf_op": "b", "region_type": None,
             "data_type": None, "shape": None, "allocated_at_us": 3},
            {"addr": 0x1000, "bytes": 100, "requested_bytes": 90, "tf_op": "jit(f)/dot",
             "region_type": "output", "data_type": 1, "shape": "[25]", "allocated_at_us": 1}])
        h = self.one("SELECT * FROM profsum_memory WHERE trace_id=? AND allocator='xla_gpu_host_bfc'", (tid,))
        self.assertEqual((h["device"], h["peak_bytes"], h["device_memory_bytes"], h["peak_share"],
                          h["peak_ts_us"], h["peak_step"], h["top_holders"]),
                         (None, 256, None, None, 2.0, 1,
                          '[{"addr":119,"bytes":256,"requested_bytes":256,"tf_op":null,"region_type":null,'
                          '"data_type":null,"shape":null,"allocated_at_us":2}]'))

    def steps_capture(self, timestamp_ns, steps, allocs):
        """A host plane: 'train' steps (number, start µs, dur µs) and
        GPU_0_bfc allocations (offset µs, bytes), all on lines that
        start at timestamp_ns; a GPU:0 plane with one kernel."""
        host = W.PlaneBuilder("/host:CPU", id=1)
        in_use, evs = 0, []
        for i, (off_us, n) in enumerate(allocs):
            in_use += n
            evs.append(mem_event(host, "MemoryAllocation", off_us, addr=0x1000 * (i + 1), nbytes=n,
                                 in_use=in_use, life=None))
        host.line(id=1, name="python", timestamp_ns=timestamp_ns, events=evs)
        host.line(id=3, name="steps", timestamp_ns=timestamp_ns, events=[
            host.event("train", offset_ps=round(t0 * US), duration_ps=round(d * US),
                       stats=[host.stat("step_num", i64=k)]) for k, t0, d in steps])
        pb = W.PlaneBuilder("/device:GPU:0", id=10)
        pb.line(id=1, name="Stream #1(Kernel)", timestamp_ns=timestamp_ns,
                events=[pb.event("gemm", offset_ps=0, duration_ps=10 * US)])
        return W.xspace([host.build(), pb.build()], hostnames=["h0"])

    def test_peak_step_on_epoch_times(self):
        """With line times since the epoch (as JAX writes them) a µs double
        has a quarter-µs resolution: an allocation 0.1 ns before the end of
        step 1 rounds onto step 2's start.  The steps are looked up in exact
        picoseconds: step 1 has it."""
        ts_ns = 1_700_000_000_000_000_000
        self.assertEqual(ts_ns / 1000 + 3.4999, ts_ns / 1000 + 3.5)    # the doubles meet
        tid = self.imp(self.steps_capture(ts_ns, [(1, 0, 3.5), (2, 3.5, 6.5)], [(1, 100), (3.4999, 400)]))
        m = self.one("SELECT peak_bytes, peak_step, per_step FROM profsum_memory WHERE trace_id=?", (tid,))
        self.assertEqual(m, {"peak_bytes": 500, "peak_step": 1,
                             "per_step": '[{"step":1,"allocations":2,"bytes":500},'
                                         '{"step":2,"allocations":0,"bytes":0}]'})

    def test_peak_step_when_steps_overlap(self):
        """Step 2 [2, 3) µs lies inside step 1 [0, 10) µs: a peak at 5 µs is
        in step 1 only (the latest-starting step that contains it), at 2.5 µs
        in both, and step 2 starts later."""
        for at_us, want in ((5, 1), (2.5, 2), (10, None)):
            with self.subTest(at_us=at_us):
                tid = self.imp(self.steps_capture(1000, [(1, 0, 10), (2, 2, 1)],
                                                  [(at_us, 100)]), name="o%s.xplane.pb" % at_us)
                m = self.one("SELECT peak_bytes, peak_step FROM profsum_memory WHERE trace_id=?", (tid,))
                self.assertEqual(m, {"peak_bytes": 100, "peak_step": want})

    def test_bad_input_diagnostics(self):
        tid = self.imp(gpu_capture())
        d = {}
        for kind, detail in self.db.execute(
                "SELECT kind, detail FROM profsum_diagnostic WHERE trace_id=? AND kind LIKE 'memory%' "
                "ORDER BY kind, detail", (tid,)):
            d.setdefault(kind, []).append(detail)
        self.assertEqual(sorted(d), ["memory_bytes_out_of_range", "memory_event_incomplete",
                                     "memory_unfreed_allocation", "memory_unmatched_deallocation"])
        self.assertEqual(len(d["memory_bytes_out_of_range"]), 4)
        self.assertIn("says 3000 bytes in use, more than its device's memory_size 2000",
                      " ".join(d["memory_bytes_out_of_range"]))
        self.assertEqual(d["memory_event_incomplete"],
                         ["MemoryAllocation without an allocator_name, index_on_host or device_ordinal: "
                          "left out of the memory views"])
        self.assertEqual(d["memory_unfreed_allocation"], [
            "allocator 'GPU_0_bfc': 3 allocations (800 bytes) made within the capture are not freed by its end",
            "allocator 'xla_gpu_host_bfc': 1 allocations (256 bytes) made within the capture are not freed by its end"])
        self.assertEqual(len(d["memory_unmatched_deallocation"]), 1)
        self.assertTrue(d["memory_unmatched_deallocation"][0].startswith(
            "allocator 'GPU_0_bfc': 1 deallocations free an address not allocated within the capture "
            "(the first at 2.000 us)"))

    def test_timeline(self):
        tid = self.imp(gpu_capture())
        tl = self.db.execute("SELECT bucket, ts_us, max_bytes_in_use, end_bytes_in_use, num_events, device "
                             "FROM profsum_memory_timeline WHERE trace_id=? AND allocator='GPU_0_bfc' "
                             "ORDER BY bucket", (tid,)).fetchall()
        # 8 events from 1 to 8 µs: 8 buckets of 7/8 µs, one event each
        self.assertEqual(tl, [(0, 1.0, 1100, 1100, 1, "/device:GPU:0"), (1, 1.875, 900, 900, 1, "/device:GPU:0"),
                              (2, 2.75, 1200, 1200, 1, "/device:GPU:0"), (3, 3.625, 1600, 1600, 1, "/device:GPU:0"),
                              (4, 4.5, 1300, 1300, 1, "/device:GPU:0"), (5, 5.375, 1350, 1350, 1, "/device:GPU:0"),
                              (6, 6.25, 1250, 1250, 1, "/device:GPU:0"), (7, 7.125, 1600, 1600, 1, "/device:GPU:0")])
        self.assertEqual(self.db.execute("SELECT bucket, ts_us, max_bytes_in_use, end_bytes_in_use, num_events "
                                         "FROM profsum_memory_timeline WHERE trace_id=? AND "
                                         "allocator='xla_gpu_host_bfc'", (tid,)).fetchall(),
                         [(0, 2.0, 256, 256, 1)])

    def test_empty_buckets_carry_the_last_value(self):
        pb = W.PlaneBuilder("/host:CPU")
        pb.line(id=1, name="python", timestamp_ns=0, events=[
            mem_event(pb, "MemoryAllocation", 0, addr=1, nbytes=10, in_use=10),
            mem_event(pb, "MemoryAllocation", 1, addr=2, nbytes=10, in_use=20),
            mem_event(pb, "MemoryDeallocation", 9, addr=1, nbytes=10, in_use=10)])
        tid = self.imp(W.xspace([pb.build()]))
        self.assertEqual(self.db.execute("SELECT bucket, ts_us, max_bytes_in_use, end_bytes_in_use, num_events "
                                         "FROM profsum_memory_timeline WHERE trace_id=?", (tid,)).fetchall(),
                         [(0, 0.0, 20, 20, 2), (1, 3.0, 20, 20, 0), (2, 6.0, 10, 10, 1)])
        m = self.one("SELECT peak_bytes, peak_ts_us, peak_step, per_step, device, top_holders "
                     "FROM profsum_memory WHERE trace_id=?", (tid,))
        self.assertEqual(m, {"peak_bytes": 20, "peak_ts_us": 1.0, "peak_step": None, "per_step": None,
                             "device": "/device:GPU:0",
                             "top_holders": '[{"addr":1,"bytes":10,"requested_bytes":10,"tf_op":null,'
                                            '"region_type":null,"data_type":null,"shape":null,"allocated_at_us":0},'
                                            '{"addr":2,"bytes":10,"requested_bytes":10,"tf_op":null,'
                                            '"region_type":null,"data_type":null,"shape":null,"allocated_at_us":1}]'})

    def test_statuses(self):
        tid = self.imp(gpu_capture(with_memory=False))
        m = self.one("SELECT * FROM profsum_memory WHERE trace_id=?", (tid,))
        self.assertEqual((m["status"], m["allocator"], m["peak_bytes"], m["peak_share"], m["num_allocations"],
                          m["top_holders"]), ("no_allocation_events", None, None, None, None, None))
        js = {"traceEvents": [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
            {"ph": "X", "pid": 1, "tid": 1, "name": "k", "ts": 1, "dur": 2,
             "args": {"kernel_details": "regs:16\nblock:32,2 grid:4,4,1 occ_pct:75", "hlo_op": "f.1"}},
            {"ph": "X", "pid": 1, "tid": 1, "name": "k", "ts": 5, "dur": 4,
             "args": {"kernel_details": "regs:16 block:32,2,1 grid:4,4,1 occ_pct:75", "hlo_op": "f.1"}}]}
        # one hlo_op written with an escape: the same text once decoded
        text = json.dumps(js).replace('"hlo_op": "f.1"', '"hlo_op": "f\\u002e1"', 1)
        self.assertIn("\\u002e", text)
        # and the other kernel's name: one row still (names are compared decoded)
        head, tail = text.rsplit('"name": "k"', 1)
        text = head + '"name": "\\u006b"' + tail
        self.assertIn('"name": "\\u006b"', text)
        tj = self.db.execute("SELECT profsum_import(?)", (self.td.write("j.json", text),)).fetchone()[0]
        m = self.one("SELECT status, allocator, peak_bytes, note FROM profsum_memory WHERE trace_id=?", (tj,))
        self.assertEqual(m["status"], "not_in_trace_json")
        self.assertIsNone(m["peak_bytes"])
        k = self.one("SELECT kernel_name, hlo_op, block_dim, grid_dim, registers_per_thread, occupancy_pct, "
                     "devices, occurrences, total_duration_us, avg_duration_us, min_duration_us, max_duration_us "
                     "FROM profsum_kernel_stats WHERE trace_id=?", (tj,))
        self.assertEqual(k, {"kernel_name": "k", "hlo_op": "f.1", "block_dim": "32,2,1", "grid_dim": "4,4,1",
                             "registers_per_thread": 16, "occupancy_pct": 75.0, "devices": 1, "occurrences": 2,
                             "total_duration_us": 6.0, "avg_duration_us": 3.0, "min_duration_us": 2.0,
                             "max_duration_us": 4.0})
        kp = self.rows("SELECT kpi, device, value, band FROM profsum_kpis WHERE trace_id=? AND kpi IN "
                       "('memory_peak', 'occupancy') ORDER BY kpi", (tj,))
        self.assertEqual(kp, [{"kpi": "memory_peak", "device": None, "value": None, "band": "unavailable"},
                              {"kpi": "occupancy", "device": None, "value": 0.75, "band": "good"}])

    def test_json_kernels_only_on_device_processes(self):
        # TensorFlow writes kernel_details on the host's launch events too
        # (their values uninitialised): only events of a /device: process
        # are kernels, whatever the order of the process names, and one row
        # key on two devices is one row
        det = "regs:16 block:32,1,1 grid:4,1,1"
        ev = []
        for pid, ts in ((1, 0), (2, 10), (3, 20), (1, 30), (2, 40), (4, 50)):
            ev.append({"ph": "X", "pid": pid, "tid": 1, "name": "k", "ts": ts, "dur": 2 + pid,
                       "args": {"kernel_details": det}})
        ev.append({"ph": "X", "pid": 3, "tid": 1, "name": "launch", "ts": 60, "dur": 1,
                   "args": {"kernel_details": "regs:687194767361 grid:672,1,1"}})
        ev += [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
               {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:GPU:1"}},
               {"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/host:CPU"}},
               {"ph": "M", "pid": 4, "name": "process_name", "args": {"name": "/device:GPU:9"}},
               {"ph": "M", "pid": 4, "name": "process_name", "args": {"name": "/host:CPU"}}]
        # one device name written with an escaped slash
        text = json.dumps({"traceEvents": ev}).replace('"/device:GPU:1"', '"\\/device:GPU:1"', 1)
        self.assertIn('"\\/device:GPU:1"', text)
        tj = self.db.execute("SELECT profsum_import(?)", (self.td.write("k.json", text),)).fetchone()[0]
        rows = self.rows("SELECT kernel_name, devices, occurrences, total_duration_us, min_duration_us, "
                         "max_duration_us FROM profsum_kernel_stats WHERE trace_id=?", (tj,))
        # pid 1: 3 + 3, pid 2: 4 + 4; pid 3 is the host, pid 4 was renamed a host
        self.assertEqual(rows, [{"kernel_name": "k", "devices": 2, "occurrences": 4,
                                 "total_duration_us": 14.0, "min_duration_us": 3.0, "max_duration_us": 4.0}])

    def test_json_memory_entries(self):
        """A converter that keeps the allocation events in JSON: read as in XPlane."""
        def ev(name, ts, **a):
            return {"ph": "X", "pid": 1, "tid": 1, "name": name, "ts": ts, "dur": 0, "args": a}
        js = {"traceEvents": [
            ev("MemoryAllocation", 10, allocator_name="GPU_1_bfc", bytes_allocated="500", addr="7",
               allocation_bytes=500, tf_op="x\\ty", shape="[5]"),
            ev("MemoryAllocation", 11, allocator_name="GPU_1_bfc", bytes_allocated=600, addr=8,
               allocation_bytes=100, data_type=float("nan")),     # a bare NaN: kept as text
            ev("MemoryDeallocation", 12, allocator_name="GPU_1_bfc", bytes_allocated=100, addr=7,
               allocation_bytes=500)]}
        tj = self.db.execute("SELECT profsum_import(?)", (self.td.write("j.json", js),)).fetchone()[0]
        m = self.one("SELECT allocator, device, status, peak_bytes, peak_ts_us, top_holders "
                     "FROM profsum_memory WHERE trace_id=?", (tj,))
        self.assertEqual(m, {"allocator": "GPU_1_bfc", "device": "/device:GPU:1", "status": "ok",
                             "peak_bytes": 600, "peak_ts_us": 11.0,
                             "top_holders": '[{"addr":7,"bytes":500,"requested_bytes":null,"tf_op":"x\\\\ty",'
                                            '"region_type":null,"data_type":null,"shape":"[5]",'
                                            '"allocated_at_us":10},{"addr":8,"bytes":100,"requested_bytes":null,'
                                            '"tf_op":null,"region_type":null,"data_type":"NaN","shape":null,'
                                            '"allocated_at_us":11}]'})
        self.assertEqual(self.db.execute("SELECT json_valid(top_holders) FROM profsum_memory WHERE trace_id=?",
                                         (tj,)).fetchone()[0], 1)

    def test_tpu_events_named_by_device_index(self):
        """PJRT on TPU writes memory events without allocator_name: the
        device's index (index_on_host, or device_ordinal) names the
        allocator, as xprof's memory ids do ('0', '1'), and the device is
        the XSpace's /device:TPU:<index>.  The TPU planes have no
        memory_size: device_memory_bytes is the capacity the peak event
        states, bytes_allocated + bytes_reserved + bytes_available (xprof's
        memory capacity), and the note says so.
          index 0: alloc 0xa 300 -> 1300 (reserved 64, available 8636:
                   capacity 10000), alloc 0xb 200 -> 1500 (available 8436),
                   free 0xa -> 1200                   peak 1500 at 2 µs
          ordinal 1: alloc 0xc 700 -> 700 (no bytes_available): no capacity
          an event with neither name nor index: left out (diagnostic)."""
        host = W.PlaneBuilder("/host:CPU", id=1)

        def ev(name, off, idx_stat, idx, in_use, nbytes=None, addr=None, avail=None):
            extra = [host.stat(idx_stat, i64=idx)] if idx_stat else []
            extra.append(host.stat("bytes_reserved", i64=64))
            if avail is not None:
                extra.append(host.stat("bytes_available", i64=avail))
            return mem_event(host, name, off, allocator=None, addr=addr, nbytes=nbytes, in_use=in_use,
                             life=None, extra=extra)
        host.line(id=1, name="main/77", timestamp_ns=0, events=[
            ev("MemoryAllocation", 1, "index_on_host", 0, 1300, 300, 0xa, 8636),
            ev("MemoryAllocation", 2, "index_on_host", 0, 1500, 200, 0xb, 8436),
            ev("MemoryDeallocation", 3, "index_on_host", 0, 1200, addr=0xa, avail=8736),
            ev("MemoryAllocation", 4, "device_ordinal", 1, 700, 700, 0xc),
            ev("MemoryAllocation", 5, None, 0, 900, 200, 0xd, 100)])
        planes = [host.build()]
        for i in range(2):
            d = W.PlaneBuilder("/device:TPU:%d" % i, id=10 + i)
            d.line(id=1, name="XLA Ops", timestamp_ns=0, events=[d.event("fusion", offset_ps=0, duration_ps=US)])
            planes.append(d.build())
        tid = self.imp(W.xspace(planes, hostnames=["h"]))
        m = {r["allocator"]: r for r in self.rows("SELECT * FROM profsum_memory WHERE trace_id=?", (tid,))}
        self.assertEqual(sorted(m), ["0", "1"])
        z = m["0"]
        self.assertEqual((z["device"], z["status"], z["peak_bytes"], z["peak_ts_us"], z["device_memory_bytes"],
                          z["peak_share"], z["num_allocations"], z["num_deallocations"]),
                         ("/device:TPU:0", "ok", 1500, 2.0, 10000, 0.15, 2, 1))
        self.assertIn("bytes_allocated + bytes_reserved + bytes_available", z["note"])
        o = m["1"]
        self.assertEqual((o["device"], o["peak_bytes"], o["device_memory_bytes"], o["peak_share"]),
                         ("/device:TPU:1", 700, None, None))
        kp = {r["device"]: r for r in self.rows("SELECT device, value, band, explanation FROM profsum_kpis "
                                                "WHERE trace_id=? AND kpi='memory_peak'", (tid,))}
        self.assertEqual((kp["/device:TPU:0"]["value"], kp["/device:TPU:0"]["band"]), (0.15, "good"))
        self.assertEqual(kp["/device:TPU:0"]["explanation"],
                         "allocator 0 peaks at 15.0% of /device:TPU:0 memory (1500 of 10000 bytes)")
        self.assertEqual((kp["/device:TPU:1"]["value"], kp["/device:TPU:1"]["band"]), (None, "unavailable"))
        d = self.rows("SELECT kind, detail FROM profsum_diagnostic WHERE trace_id=? "
                      "AND kind='memory_event_incomplete'", (tid,))
        self.assertEqual(len(d), 1)
        self.assertIn("index_on_host", d[0]["detail"])
        # a BFC allocator's bytes_available is its own limit, not the device's
        # memory: a GPU plane without memory_size keeps device_memory_bytes NULL
        g = W.PlaneBuilder("/host:CPU", id=1)
        g.line(id=1, name="python", timestamp_ns=0, events=[
            mem_event(g, "MemoryAllocation", 1, addr=1, nbytes=100, in_use=100, life=None,
                      extra=[g.stat("bytes_reserved", i64=0), g.stat("bytes_available", i64=900)])])
        gp = W.PlaneBuilder("/device:GPU:0", id=2)
        gp.line(id=1, name="Stream #1(Kernel)", timestamp_ns=0, events=[gp.event("k", offset_ps=0, duration_ps=US)])
        tg = self.imp(W.xspace([g.build(), gp.build()], hostnames=["h"]), name="g.xplane.pb")
        self.assertEqual(self.one("SELECT allocator, device, device_memory_bytes, peak_share, note FROM profsum_memory "
                                  "WHERE trace_id=?", (tg,)),
                         {"allocator": "GPU_0_bfc", "device": "/device:GPU:0", "device_memory_bytes": None,
                          "peak_share": None, "note": "every byte in use at the peak was allocated within the capture"})
        # trace JSON that keeps such events (a converter's): read alike
        js = {"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "MemoryAllocation", "ts": 5, "dur": 0,
                               "args": {"index_on_host": "2", "bytes_allocated": 40, "addr": 9,
                                        "allocation_bytes": 40}}]}
        tj = self.db.execute("SELECT profsum_import(?)", (self.td.write("j.json", js),)).fetchone()[0]
        self.assertEqual(self.one("SELECT allocator, device, peak_bytes FROM profsum_memory WHERE trace_id=?", (tj,)),
                         {"allocator": "2", "device": None, "peak_bytes": 40})

    def test_kpi_memory_peak_bands(self):
        tid = self.imp(gpu_capture())
        kp = self.rows("SELECT kpi, device, value, band, explanation FROM profsum_kpis "
                       "WHERE trace_id=? AND kpi='memory_peak'", (tid,))
        self.assertEqual(kp, [{"kpi": "memory_peak", "device": "/device:GPU:0", "value": 0.8, "band": "warning",
                               "explanation": "allocator GPU_0_bfc peaks at 80.0% of /device:GPU:0 memory (1600 of 2000 "
                                              "bytes): little headroom left"}])

    def test_report_share_never_reads_as_a_threshold(self):
        # a peak of 799,995 of 1,000,000 bytes is 'good' (warning from 80 %):
        # the reports say 79.9995%, as the KPI does, not 80.00%
        host = W.PlaneBuilder("/host:CPU", id=1)
        host.line(id=1, name="python", timestamp_ns=1000, events=[
            mem_event(host, "MemoryAllocation", 0, addr=0x10, nbytes=799995, in_use=799995, life=None)])
        pb = W.PlaneBuilder("/device:GPU:0", id=10)
        pb.plane_stat("memory_size", i64=10 ** 6)
        tid = self.imp(W.xspace([host.build(), pb.build()], hostnames=["h0"]), "share.xplane.pb")
        kpi = self.one("SELECT band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi='memory_peak'", (tid,))
        self.assertEqual(kpi["band"], "good")
        self.assertIn("79.9995%", kpi["explanation"])
        md = self.db.execute("SELECT profsum_report_md(?, 5, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        html = self.db.execute("SELECT profsum_report_html(?)", (tid,)).fetchone()[0]
        self.assertIn("| 79.9995% |", md)
        self.assertIn("(79.9995% of device memory)", html)
        self.assertNotIn("80.00%", md + html)

    def test_old_import_says_reimport(self):
        tid = self.imp(gpu_capture())
        self.db.execute("DELETE FROM profsum_agg_memory WHERE trace_id=?", (tid,))
        m = self.one("SELECT status, note, peak_bytes FROM profsum_memory WHERE trace_id=?", (tid,))
        self.assertEqual(m, {"status": "not_computed", "peak_bytes": None,
                             "note": "imported by a profsum without memory figures: re-import the trace"})
        # its kernel rows went with them (an older import stored neither):
        # occupancy says to re-import too, not that the trace has no kernel
        self.db.execute("DELETE FROM profsum_agg_kernel WHERE trace_id=?", (tid,))
        k = self.rows("SELECT kpi, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi IN "
                      "('memory_peak', 'occupancy') ORDER BY kpi", (tid,))
        self.assertEqual([(r["kpi"], r["band"]) for r in k], [("memory_peak", "unavailable"), ("occupancy", "unavailable")])
        for r in k:
            self.assertIn("re-import", r["explanation"], r)

    def test_v1_summary_import_has_unavailable_rows(self):
        # a profile_summary.v1 document carries no memory, kernel or
        # bandwidth data: one 'unavailable' row of each such KPI, saying so
        tid = self.imp(gpu_capture())
        doc = self.db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0]
        tv = self.imp(doc, name="s.json")
        self.assertIsNotNone(self.db.execute("SELECT summary_json FROM profsum_trace WHERE trace_id=?",
                                             (tv,)).fetchone()[0])
        kp = self.rows("SELECT kpi, device, value, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi IN "
                       "('memory_peak', 'occupancy', 'memory_bandwidth') ORDER BY kpi", (tv,))
        self.assertEqual([(r["kpi"], r["device"], r["value"], r["band"]) for r in kp],
                         [("memory_bandwidth", None, None, "unavailable"), ("memory_peak", None, None, "unavailable"),
                          ("occupancy", None, None, "unavailable")])
        for r in kp:
            self.assertTrue(r["explanation"].startswith("imported from a profile_summary.v1 document, which carries no "),
                            r)
        self.assertEqual(self.db.execute("SELECT kpi FROM profsum_kpis_mem WHERE trace_id=? ORDER BY kpi",
                                         (tv,)).fetchall(), [("memory_peak",), ("occupancy",)])
        # the source trace keeps its own figures
        self.assertEqual(self.db.execute("SELECT band FROM profsum_kpis WHERE trace_id=? AND kpi='memory_peak'",
                                         (tid,)).fetchall(), [("warning",)])
        # every KPI and pattern of the source has one row in the v1
        # import (float_nesting aside: a v1 document has no events); those
        # measured on the device timeline are unavailable, saying why
        src = {r[0] for r in self.db.execute("SELECT kpi FROM profsum_kpis WHERE trace_id=?", (tid,))}
        v1 = {r["kpi"]: r for r in self.rows("SELECT kpi, kind, unit, value, band, explanation FROM profsum_kpis "
                                             "WHERE trace_id=?", (tv,))}
        self.assertEqual(len(v1), self.db.execute("SELECT count(*) FROM profsum_kpis WHERE trace_id=?",
                                                  (tv,)).fetchone()[0])     # one row each
        self.assertEqual(set(v1), src - {"float_nesting"})
        timeline = {"host_wait": ("kpi", "fraction"),
                    "device_utilization": ("kpi", "fraction"), "kernel_duration": ("kpi", "ms"),
                    "compilation_time": ("kpi", "s"), "many_small_kernels": ("pattern", "fraction"),
                    "device_idle_gaps": ("pattern", "fraction"), "large_transfers": ("pattern", "fraction")}
        for k, (kind, unit) in timeline.items():
            r = v1[k]
            self.assertEqual((r["kind"], r["unit"], r["value"], r["band"]), (kind, unit, None, "unavailable"), r)
            self.assertTrue(r["explanation"].startswith("imported from a profile_summary.v1 document, which carries no "),
                            r)
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_advice WHERE trace_id=? AND kpi IN (%s)"
                                         % ",".join("'%s'" % k for k in timeline), (tv,)).fetchone()[0], 0)

    def test_replace_deletes_rows(self):
        path = self.td.write("t.xplane.pb", gpu_capture())
        self.db.execute("SELECT profsum_import(?)", (path,))
        tid = self.db.execute("SELECT profsum_import(?, NULL, '{\"replace\": true}')", (path,)).fetchone()[0]
        for tab in ("profsum_agg_memory", "profsum_agg_memory_timeline", "profsum_agg_kernel"):
            self.assertEqual(self.db.execute("SELECT count(DISTINCT trace_id), min(trace_id) FROM %s" % tab).fetchone(),
                             (1, tid), tab)


class Cookbook(MemTestCase):
    def test_cookbook_memory_queries_run(self):
        """The XPlane queries of docs/cookbook.md's memory section, on a fixture."""
        import re
        from util import ROOT
        with open(os.path.join(ROOT, "docs", "cookbook.md"), encoding="utf-8") as f:
            text = f.read()
        sec = text[text.index("## 14. What is my peak memory"):]
        sql = re.search(r"```sql\n(.*?)```", sec, re.S).group(1)
        self.db.execute("SELECT profsum_import(?, 'run-7-xplane')", (self.td.write("t.xplane.pb", gpu_capture()),))
        out = [self.db.execute(q).fetchall() for q in sql.split(";") if q.strip()]
        self.assertEqual(out[0][0], ("GPU_0_bfc", "/device:GPU:0", 1600, 0.8, 4.0, 1, 1900, 800))
        self.assertEqual(out[1], [("GPU_0_bfc", 400, "c", "[10,20]", 4), ("GPU_0_bfc", 300, "b", None, 3),
                                  ("GPU_0_bfc", 100, "jit(f)/dot", "[25]", 1)])
        self.assertEqual(len(out[2]), 8)
        self.assertEqual(out[3][0][:2], ("/device:GPU:0", 0.8))


class Kernels(MemTestCase):
    def test_kernel_rows(self):
        tid = self.imp(gpu_capture())
        rows = self.rows("SELECT kernel_name, hlo_op, hlo_module, block_dim, grid_dim, registers_per_thread, "
                         "static_shared_bytes, dynamic_shared_bytes, occupancy_pct, devices, occurrences, "
                         "total_duration_us, avg_duration_us, min_duration_us, max_duration_us "
                         "FROM profsum_kernel_stats WHERE trace_id=? ORDER BY kernel_name", (tid,))
        self.assertEqual(rows, [
            {"kernel_name": "copy", "hlo_op": None, "hlo_module": None, "block_dim": "64,1,1", "grid_dim": "1,1,1",
             "registers_per_thread": None, "static_shared_bytes": 7, "dynamic_shared_bytes": None,
             "occupancy_pct": 12.5, "devices": 1, "occurrences": 1, "total_duration_us": 100.0,
             "avg_duration_us": 100.0, "min_duration_us": 100.0, "max_duration_us": 100.0},
            {"kernel_name": "fusion", "hlo_op": "fusion.3", "hlo_module": None, "block_dim": "128,1,1",
             "grid_dim": None, "registers_per_thread": None, "static_shared_bytes": 512,
             "dynamic_shared_bytes": None, "occupancy_pct": None, "devices": 1, "occurrences": 1,
             "total_duration_us": 5.0, "avg_duration_us": 5.0, "min_duration_us": 5.0, "max_duration_us": 5.0},
            {"kernel_name": "gemm", "hlo_op": "dot.1", "hlo_module": "jit_a", "block_dim": "256,1,1",
             "grid_dim": "10,1,1", "registers_per_thread": 32, "static_shared_bytes": 1024,
             "dynamic_shared_bytes": 0, "occupancy_pct": 50.0, "devices": 2, "occurrences": 3,
             "total_duration_us": 60.0, "avg_duration_us": 20.0, "min_duration_us": 10.0,
             "max_duration_us": 30.0}])

    def test_chunked_device_and_zero_length_kernels(self):
        """A device whose plane comes in two chunks (one name) is one device;
        kernel events of zero duration are no kernels run."""
        gemm = "regs:32 static_shared:0 dynamic_shared:0 grid:1,1,1 block:32,1,1 occ_pct:25"
        planes = []
        for chunk in (0, 1):
            pb = W.PlaneBuilder("/device:GPU:0", id=10 + chunk)
            pb.line(id=1, name="Stream #1(Kernel)", timestamp_ns=0, events=[
                kernel(pb, "gemm", 10 * chunk, 2, gemm),
                kernel(pb, "gemm", 10 * chunk + 5, 0, gemm)])
            planes.append(pb.build())
        tid = self.imp(W.xspace(planes, hostnames=["h"]), "chunks.xplane.pb")
        self.assertEqual(self.rows("SELECT devices, occurrences, avg_duration_us, min_duration_us "
                                   "FROM profsum_kernel_stats WHERE trace_id=?", (tid,)),
                         [{"devices": 1, "occurrences": 2, "avg_duration_us": 2.0, "min_duration_us": 2.0}])

    def test_out_of_range_diagnostics(self):
        tid = self.imp(gpu_capture())
        d = self.db.execute("SELECT kind, detail FROM profsum_diagnostic WHERE trace_id=? AND kind LIKE "
                            "'kernel_details%' ORDER BY kind", (tid,)).fetchall()
        self.assertEqual(d, [
            ("kernel_details_out_of_range",
             "kernel fusion: kernel_details value out of range: regs:2191500840 (above 65536), "
             "grid:210453397508,1,1 (a dimension above 2^31), occ_pct:0 (0: not measured): "
             "NULL in profsum_kernel_stats"),
            ("kernel_details_unreadable",
             "kernel copy: kernel_details value not a number: regs:abc: NULL in profsum_kernel_stats")])

    def test_null_dimensions_are_one_key(self):
        """A block or grid that is NULL is one key whatever made it NULL: out
        of range (its other parts read), unreadable, or absent."""
        pb = W.PlaneBuilder("/device:GPU:0", id=1)
        pb.line(id=1, name="Stream #1", timestamp_ns=0, events=[
            kernel(pb, "kB", 0, 1, "static_shared:2048 block:3000000000,1,1 grid:210453397508,2,1 occ_pct:50"),
            kernel(pb, "kB", 3, 2, "regs:x static_shared:2048 block:1,y grid:7,8,9,10"),
            kernel(pb, "kB", 6, 3, "static_shared:2048")])
        tid = self.imp(W.xspace([pb.build()], hostnames=["h"]), "nulls.xplane.pb")
        self.assertEqual(self.rows("SELECT block_dim, grid_dim, registers_per_thread, static_shared_bytes, "
                                   "occupancy_pct, occurrences, total_duration_us FROM profsum_kernel_stats "
                                   "WHERE trace_id=?", (tid,)),
                         [{"block_dim": None, "grid_dim": None, "registers_per_thread": None,
                           "static_shared_bytes": 2048, "occupancy_pct": 50.0, "occurrences": 3,
                           "total_duration_us": 6.0}])

    def test_diagnostics_kept_per_kind(self):
        """The first 5 of a kind are stored, then a 'suppressed' row with the
        total; store_diagnostics 'all' stores every one."""
        def capture():
            pb = W.PlaneBuilder("/device:GPU:0", id=1)
            pb.line(id=1, name="Stream #1", timestamp_ns=0, events=[
                kernel(pb, "k%d" % i, 2 * i, 1, "regs:%d" % (70000 + i)) for i in range(8)])
            return W.xspace([pb.build()], hostnames=["h"])
        sql = ("SELECT kind, detail FROM profsum_diagnostic WHERE trace_id=? "
               "AND (kind='kernel_details_out_of_range' OR kind='suppressed') ORDER BY rowid")
        detail = "kernel k%d: kernel_details value out of range: regs:%d (above 65536): NULL in profsum_kernel_stats"
        tid = self.imp(capture(), "compact.xplane.pb")
        self.assertEqual(self.db.execute(sql, (tid,)).fetchall(),
                         [("kernel_details_out_of_range", detail % (i, 70000 + i)) for i in range(5)]
                         + [("suppressed", "kernel_details_out_of_range: 8 occurrences in all; only the first 5 "
                                           "are stored (the import option store_diagnostics 'all' stores them all)")])
        tid = self.imp(capture(), "all.xplane.pb", '{"store_diagnostics": "all"}')
        self.assertEqual(self.db.execute(sql, (tid,)).fetchall(),
                         [("kernel_details_out_of_range", detail % (i, 70000 + i)) for i in range(8)])

    def test_references_as_the_gpu_tracer_writes_them(self):
        """XLA's GPU tracer writes kernel_details, hlo_op and hlo_module as
        references to stat metadata (ref_value), not as strings. The same
        capture written both ways gives the same rows in every table,
        including where one reference value names different texts in the
        two GPU planes (the XLA op table's modules below), a reference to
        an id with no metadata (its decimal text) and to an empty name."""
        gemm = "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1 occ_pct:50"
        conv = "regs:64 static_shared:2048 dynamic_shared:0 grid:4,1,1 block:256,1,1 occ_pct:25"
        # per GPU: (kernel, details, hlo_op, hlo_module) in launch order;
        # None: a reference to id 999, which has no metadata; "": an empty name
        plan = {0: [("gemm", gemm, "dot.1", "jit_a"), ("conv", conv, "conv.2", "jit_a"),
                    ("gemm", gemm, "dot.1", "jit_a"), ("gemm", gemm, None, "")],
                1: [("gemm", gemm, "dot.1", "jit_b"), ("conv", conv, "conv.2", "jit_b"),
                    ("gemm", gemm, "dot.1", "jit_b")]}

        def capture(refs):
            planes = []
            for g, launches in plan.items():
                pb = W.PlaneBuilder("/device:GPU:%d" % g, id=10 + g)
                if refs:
                    # the same ids in both planes, so that id 6 is jit_a in
                    # one and jit_b in the other
                    for name in ("kernel_details", "hlo_op", "hlo_module", gemm, conv):
                        pb.sid(name)
                    pb.stat_ids["jit_a" if g == 0 else "jit_b"] = 6
                    for name in ("dot.1", "conv.2", ""):
                        pb.sid(name)
                evs = []
                for i, (name, det, op, mod) in enumerate(launches):
                    vals = (("kernel_details", det), ("hlo_op", op), ("hlo_module", mod))
                    if refs:
                        st = [pb.stat(k, ref=999 if v is None else pb.sid(v)) for k, v in vals]
                    else:
                        st = [pb.stat(k, s="999" if v is None else v) for k, v in vals]
                    evs.append(pb.event(name, offset_ps=(10 * i + g) * US, duration_ps=(2 + i) * US, stats=st))
                pb.line(id=1, name="Stream #1(Kernel)", timestamp_ns=1000, events=evs)
                planes.append(pb.build())
            return W.xspace(planes, hostnames=["h0"])
        ref_data = capture(True)
        for name in ("jit_a", "jit_b"):           # id 6 names both, one per plane
            self.assertIn(W.stat_meta(6, name=name), ref_data)
        self.assertIn(W.stat(3, ref=6), ref_data)   # hlo_module: a reference to it
        tids = [self.imp(capture(False), "s.xplane.pb"), self.imp(ref_data, "r.xplane.pb")]
        tables = [r[0] for r in self.db.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'profsum_agg_%' "
            "AND name NOT IN ('profsum_agg_op_growth', 'profsum_agg_diagnostic')")]
        for t in tables:
            cols = [r[1] for r in self.db.execute("SELECT * FROM pragma_table_info(?)", (t,))]
            if "trace_id" not in cols:
                continue
            keep = ", ".join('"%s"' % c for c in cols if c != "trace_id")
            got = [sorted(map(repr, self.db.execute("SELECT %s FROM %s WHERE trace_id=?" % (keep, t), (tid,))))
                   for tid in tids]
            with self.subTest(table=t):
                self.assertEqual(got[1], got[0])
        ops = self.db.execute("SELECT device, name, hlo_op, hlo_module, count FROM profsum_agg_xla_op "
                              "WHERE trace_id=? ORDER BY 1, 2, 3, 4", (tids[1],)).fetchall()
        self.assertEqual(ops, [("/device:GPU:0", "conv", "conv.2", "jit_a", 1),
                               ("/device:GPU:0", "gemm", "999", None, 1),
                               ("/device:GPU:0", "gemm", "dot.1", "jit_a", 2),
                               ("/device:GPU:1", "conv", "conv.2", "jit_b", 1),
                               ("/device:GPU:1", "gemm", "dot.1", "jit_b", 2)])
        kern = self.db.execute("SELECT kernel_name, hlo_op, hlo_module, occurrences FROM profsum_kernel_stats "
                               "WHERE trace_id=? ORDER BY 1, 2, 3", (tids[1],)).fetchall()
        # a kernel's module is the first one met; an empty name stays ''
        self.assertEqual(kern, [("conv", "conv.2", "jit_a", 2), ("gemm", "999", "", 1),
                                ("gemm", "dot.1", "jit_a", 4)])

    def test_reference_values_of_two_chunks_of_one_device(self):
        """The kernel tally finds the texts of referenced kernel_details and
        hlo_op by their reference values, per plane: two planes of one
        device (its chunks) whose same event metadata and reference ids name
        other texts in each give the rows of the same capture written with
        strings, not the first plane's texts again."""
        small = "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1 occ_pct:50"
        large = "regs:64 static_shared:2048 dynamic_shared:0 grid:4,1,1 block:256,1,1 occ_pct:25"
        # per chunk: what the ids 4 (kernel_details) and 5 (hlo_op) name
        texts = [(small, "dot.1"), (large, "dot.2")]

        def capture(refs):
            planes = []
            for c, (det, op) in enumerate(texts):
                pb = W.PlaneBuilder("/device:GPU:0", id=10 + c)
                if refs:
                    for name in ("kernel_details", "hlo_op", "hlo_module"):
                        pb.sid(name)
                    pb.stat_ids[det] = 4
                    pb.stat_ids[op] = 5
                evs = []
                for i in range(3):
                    vals = (("kernel_details", det), ("hlo_op", op))
                    st = [pb.stat(k, ref=pb.sid(v)) if refs else pb.stat(k, s=v) for k, v in vals]
                    evs.append(pb.event("gemm", offset_ps=10 * i * US, duration_ps=(1 + c) * US, stats=st))
                pb.line(id=1, name="Stream #1(Kernel)", timestamp_ns=1000 + 100000 * c, events=evs)
                planes.append(pb.build())
            return W.xspace(planes, hostnames=["h0"])
        ref_data = capture(True)
        self.assertIn(W.stat_meta(4, name=small), ref_data)
        self.assertIn(W.stat_meta(4, name=large), ref_data)
        tids = [self.imp(capture(False), "s.xplane.pb"), self.imp(ref_data, "r.xplane.pb")]
        got = [self.db.execute("SELECT kernel_name, hlo_op, registers_per_thread, occurrences, total_duration_us "
                               "FROM profsum_agg_kernel WHERE trace_id=? ORDER BY 2", (t,)).fetchall()
               for t in tids]
        self.assertEqual(got[1], got[0])
        self.assertEqual(got[1], [("gemm", "dot.1", 32, 3, 3.0), ("gemm", "dot.2", 64, 3, 6.0)])

    def test_repeated_kernels(self):
        """The same kernel texts every step (a memo of them skips the parse
        after the first): the rows, their durations and devices, and one
        out-of-range diagnostic per execution, its text for the first five
        (all of them with store_diagnostics 'all'), in XPlane and JSON."""
        good = "regs:32 static_shared:0 dynamic_shared:0 grid:8,1,1 block:128,1,1 occ_pct:50"
        bad = "regs:70000 grid:8,1,1 block:64,1,1 occ_pct:0"
        steps = 12
        # (name, details, hlo_op, device, duration in µs of step s)
        runs = [("gemm", good, "dot.1", 0, lambda s: 3 + s),
                ("gemm", good, "dot.2", 0, lambda s: 2),
                ("gemm", good, None, 0, lambda s: 1 + s % 3),
                ("bad", bad, "f.1", 0, lambda s: 4),
                ("gemm", good, "dot.1", 1, lambda s: 10 + s)]

        def xplane():
            planes = []
            for dev in (0, 1):
                pb = W.PlaneBuilder("/device:GPU:%d" % dev, id=dev + 1)
                evs = []
                for s in range(steps):
                    for i, (name, det, hlo, d, dur) in enumerate(runs):
                        if d == dev:
                            evs.append(kernel(pb, name, 100 * s + 20 * i, dur(s), det, hlo))
                pb.line(id=1, name="Stream #1", timestamp_ns=0, events=evs)
                planes.append(pb.build())
            return W.xspace(planes, hostnames=["h"])

        def json_text():
            ev = [{"ph": "M", "pid": d + 1, "name": "process_name", "args": {"name": "/device:GPU:%d" % d}}
                  for d in (0, 1)]
            for s in range(steps):
                for i, (name, det, hlo, d, dur) in enumerate(runs):
                    a = {"kernel_details": det}
                    if hlo is not None:
                        a["hlo_op"] = hlo
                    ev.append({"ph": "X", "pid": d + 1, "tid": 1, "name": name, "ts": 100 * s + 20 * i,
                               "dur": dur(s), "args": a})
            return json.dumps({"traceEvents": ev})

        def expected():
            out = {}
            for name, det, hlo, d, dur in runs:
                r = out.setdefault((name, hlo), {"devices": set(), "durs": []})
                r["devices"].add(d)
                r["durs"] += [dur(s) for s in range(steps)]
            return [(name, hlo, len(r["devices"]), len(r["durs"]), float(sum(r["durs"])),
                     float(min(r["durs"])), float(max(r["durs"]))) for (name, hlo), r in out.items()]

        sql_rows = ("SELECT kernel_name, hlo_op, devices, occurrences, total_duration_us, min_duration_us, "
                    "max_duration_us FROM profsum_kernel_stats WHERE trace_id=? ORDER BY 1, 2")
        sql_diag = ("SELECT kind, detail FROM profsum_diagnostic WHERE trace_id=? "
                    "AND (kind LIKE 'kernel_details%' OR kind='suppressed') ORDER BY rowid")
        detail = ("kernel bad: kernel_details value out of range: regs:70000 (above 65536), "
                  "occ_pct:0 (0: not measured): NULL in profsum_kernel_stats")
        for fmt in ("xplane", "json"):
            with self.subTest(fmt=fmt):
                data = xplane() if fmt == "xplane" else json_text()
                for opts, n_text in ((None, 5), ('{"store_diagnostics": "all"}', steps)):
                    tid = self.imp(data, "rep_%s%s.%s" % (fmt, "_all" if opts else "",
                                                          "xplane.pb" if fmt == "xplane" else "json"), opts)
                    got = [tuple(r.values()) for r in self.rows(sql_rows, (tid,))]
                    self.assertEqual(sorted(got, key=lambda r: (r[0], r[1] or "")),
                                     sorted(expected(), key=lambda r: (r[0], r[1] or "")))
                    want = [("kernel_details_out_of_range", detail)] * n_text
                    if n_text < steps:
                        want.append(("suppressed", "kernel_details_out_of_range: %d occurrences in all; only "
                                     "the first 5 are stored (the import option store_diagnostics 'all' "
                                     "stores them all)" % steps))
                    self.assertEqual(self.db.execute(sql_diag, (tid,)).fetchall(), want)

    def test_json_args_strings_with_escapes(self):
        """The args members before and after kernel_details hold escaped
        quotes and backslashes, at every position of an 8-byte word: the
        walk over them still finds each key and its whole value."""
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}}]
        want = []
        for pad in range(12):
            note = "x" * pad + '"q" \\ ' + "y" * (11 - pad)
            hlo = "h" * pad + "\\" + str(pad)
            ev.append({"ph": "X", "pid": 1, "tid": 1, "name": "k%d" % pad, "ts": 10 * pad, "dur": 1 + pad,
                       "args": {"note": note, "kernel_details": "regs:16 block:32,1,1 grid:%d,1,1" % (pad + 1),
                                "other\\\"key": "\\\\\"", "hlo_op": hlo}})
            want.append(("k%d" % pad, hlo, "%d,1,1" % (pad + 1), float(1 + pad)))
        tid = self.imp(json.dumps({"traceEvents": ev}), "esc.json")
        got = self.db.execute("SELECT kernel_name, hlo_op, grid_dim, total_duration_us FROM profsum_kernel_stats "
                              "WHERE trace_id=? ORDER BY total_duration_us", (tid,)).fetchall()
        self.assertEqual(got, want)

    def test_diagnostic_cuts_whole_characters(self):
        """A kernel name and a kernel_details token are quoted in a
        diagnostic up to 200 bytes, cut at a character's end: the longest
        prefix of at most 200 bytes that ends at a UTF-8 character
        boundary, so the stored detail is valid UTF-8 whatever the
        characters' length (2, 3, 4 bytes) and where they fall."""
        def cut200(s):
            b = s.encode()
            k = min(200, len(b))
            while 0 < k < len(b) and (b[k] & 0xC0) == 0x80:
                k -= 1
            return b[:k]
        cases = [("k" * pad + ch * 100, "regs:" + "x" * pad + ch * 100)
                 for ch in ("\u00e9", "\u20ac", "\U0001f600") for pad in range(len(ch.encode()))]
        pb = W.PlaneBuilder("/device:GPU:0", id=1)
        pb.line(id=1, name="Stream #1", timestamp_ns=0, events=[
            kernel(pb, name, 2 * i, 1, token) for i, (name, token) in enumerate(cases)])
        tid = self.imp(W.xspace([pb.build()], hostnames=["h"]), "cut.xplane.pb", '{"store_diagnostics": "all"}')
        got = [r[0] for r in self.db.execute(
            "SELECT CAST(detail AS BLOB) FROM profsum_diagnostic WHERE trace_id=? "
            "AND kind='kernel_details_unreadable' ORDER BY idx", (tid,))]
        self.assertEqual(len(got), len(cases))
        for (name, token), detail in zip(cases, got):
            with self.subTest(name=name[:8], bytes=len(name.encode())):
                try:
                    detail.decode("utf-8")
                except UnicodeDecodeError as e:
                    self.fail("the stored detail is not valid UTF-8: %s" % e)
                self.assertEqual(detail, b"kernel " + cut200(name) + b": kernel_details value not a number: "
                                 + cut200(token) + b": NULL in profsum_kernel_stats")

    def test_kpi_occupancy(self):
        # kernel time: copy 100 (12.5 %), gemm 60 (50 %), fusion 5 (none); 90 % of 165 = 148.5:
        # copy and gemm (crossing) count: (0.125 * 100 + 0.5 * 60) / 160 = 0.265625
        tid = self.imp(gpu_capture())
        kp = self.one("SELECT value, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi='occupancy'", (tid,))
        self.assertEqual(kp, {"value": 0.265625, "band": "warning",
                              "explanation": "time-weighted occupancy 26.6% over the 2 kernel rows making up 90% "
                                             "of kernel time: moderate; registers or shared memory may limit it"})

    def test_report_sections(self):
        tid = self.imp(gpu_capture())
        try:
            md = self.db.execute("SELECT profsum_report_md(?, 10, '{\"profsum\": true}')", (tid,)).fetchone()[0]
        except Exception as e:  # the option is wired by the report code
            self.skipTest("profsum_report_md has no 'profsum' option in this build: %s" % e)
        self.assertIn("## profsum: Memory", md)
        self.assertIn("| GPU_0_bfc | /device:GPU:0 | 1600 (0.00 GiB) | 80.00% | 4.000 | 1 |", md)
        self.assertIn("## profsum: Kernels", md)


class Bounds(MemTestCase):

    def need(self, path):
        """(peak - stored) bytes of importing path, by build/sqlrun -m."""
        stored, peak = import_memory(path)
        return peak - stored

    @staticmethod
    def churn(n):
        """n allocation/free pairs of 256 bytes on one host line (the
        holders' texts repeat: 100 distinct tf_ops)."""
        pb = W.PlaneBuilder("/host:CPU")
        evs = []
        for i in range(n):
            evs.append(mem_event(pb, "MemoryAllocation", 2 * i * 0.01, addr=0x1000 + i, nbytes=256, in_use=256,
                                 tf_op="op%d" % (i % 100), shape="[64]"))
            evs.append(mem_event(pb, "MemoryDeallocation", (2 * i + 1) * 0.01, addr=0x1000 + i, nbytes=256,
                                 in_use=0))
        pb.line(id=1, name="python", timestamp_ns=0, events=evs)
        return W.xspace([pb.build()])

    @unittest.skipUnless(os.path.exists(SQLRUN), "build/sqlrun not built")
    def test_memory_per_event_is_bounded(self):
        """Each memory event is kept as a 64-byte record until the write:
        the import's need grows by at most 256 bytes per memory event,
        measured between captures of 40,000 and 80,000 events (190 when
        written: about 90 for the collector, doubling arrays and the
        live-address hash included, the rest the summary engine's own for
        a zero-length event)."""
        small = self.td.write("s.xplane.pb", self.churn(20000))
        large = self.td.write("l.xplane.pb", self.churn(40000))
        per_event = (self.need(large) - self.need(small)) / 40000.0
        self.assertLess(per_event, 256, per_event)


class Capped(MemTestCase):
    """Past 1,048,576 memory events the records are no longer kept: the
    peak comes from the largest values kept as the events came, without
    those over the device's memory_size, as in the replay."""

    @staticmethod
    def capture(n_over):
        """GPU:0 with memory_size 1000 (its plane first); 2^20 + 40 events of
        GPU_0_bfc: 500 bytes in use, one of 600 (the peak), n_over of 5000."""
        g = W.PlaneBuilder("/device:GPU:0", id=2)
        g.plane_stat("memory_size", i64=1000)
        host = W.PlaneBuilder("/host:CPU", id=1)

        def ev(in_use, off):
            return host.event("MemoryAllocation", offset_ps=off, duration_ps=0,
                              stats=[host.stat("allocator_name", s="GPU_0_bfc"),
                                     host.stat("bytes_allocated", i64=in_use)])
        n = (1 << 20) + 40
        plain = ev(500, 0)
        evs = [plain] * n
        evs[1000] = ev(600, 1000 * US)
        for k in range(n_over):
            evs[2000 + k] = ev(5000, (2000 + k) * US)
        host.line(id=1, name="mem", timestamp_ns=0, events=evs)
        return W.xspace([g.build(), host.build()], hostnames=["h"])

    def test_peak_within_memory_size(self):
        tid = self.imp(self.capture(5), "c5.xplane.pb")
        m = self.one("SELECT status, peak_bytes, peak_ts_us, peak_share, note FROM profsum_memory WHERE trace_id=?",
                     (tid,))
        self.assertEqual((m["status"], m["peak_bytes"], m["peak_ts_us"], m["peak_share"]), ("ok", 600, 1000.0, 0.6))
        self.assertIn("not computed", m["note"])
        d = self.db.execute("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                            "AND kind='memory_bytes_out_of_range'", (tid,)).fetchall()
        self.assertEqual(len(d), 1)
        self.assertIn("5 memory events of allocator 'GPU_0_bfc'", d[0][0])

    def test_peak_unknown_when_too_many_over(self):
        tid = self.imp(self.capture(20), "c20.xplane.pb")
        m = self.one("SELECT status, peak_bytes, peak_share, num_allocations FROM profsum_memory WHERE trace_id=?",
                     (tid,))
        self.assertEqual(m, {"status": "peak_unknown", "peak_bytes": None, "peak_share": None,
                             "num_allocations": None})
        self.assertEqual(self.db.execute("SELECT band FROM profsum_kpis WHERE trace_id=? AND kpi='memory_peak'",
                                         (tid,)).fetchall(), [("unavailable",)])




@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds it)")
class OutOfMemory(unittest.TestCase):
    """Every 5th allocation of an import with memory events, kernels and
    bad input failed in turn (tests/oom_sql.c, ASan): each run is an error
    or the reference result, and nothing leaks."""

    def test_import_fails_cleanly(self):
        import tempfile
        pb = W.PlaneBuilder("/host:CPU")
        pb.line(id=1, name="python", timestamp_ns=0, events=[
            mem_event(pb, "MemoryAllocation", 0, addr=1, nbytes=10, in_use=10, tf_op="a", shape="[1]"),
            mem_event(pb, "MemoryAllocation", 1, addr=2, nbytes=20, in_use=30, tf_op="b"),
            mem_event(pb, "MemoryDeallocation", 2, addr=1, nbytes=10, in_use=20),
            mem_event(pb, "MemoryDeallocation", 3, addr=9, nbytes=10, in_use=10),
            mem_event(pb, "MemoryAllocation", 4, addr=3, nbytes=10, in_use=-1)])
        pb.line(id=2, name="steps", timestamp_ns=0, events=[
            pb.event("train", offset_ps=0, duration_ps=5 * US, stats=[pb.stat("step_num", i64=1)])])
        g = W.PlaneBuilder("/device:GPU:0", id=5)
        g.plane_stat("memory_size", i64=1000)
        g.line(id=1, name="Stream #1(Kernel)", timestamp_ns=0, events=[
            kernel(g, "k", 0, 1, "regs:99999 block:1,1,1 grid:2 occ_pct:0", "h", "m"),
            kernel(g, "k2", 2, 1, "regs:8 occ_pct:50\nbad")])
        js = {"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "k", "ts": 1, "dur": 2,
                               "args": {"kernel_details": "regs:1\nblock:2", "hlo_op": "x"}},
                              {"ph": "X", "pid": 1, "tid": 1, "name": "MemoryAllocation", "ts": 1, "dur": 0,
                               "args": {"allocator_name": "GPU_0_bfc", "bytes_allocated": 5, "addr": 1,
                                        "allocation_bytes": 5, "tf_op": "t"}}]}
        with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
            px = os.path.join(tmp, "c.xplane.pb")
            with open(px, "wb") as f:
                f.write(W.xspace([pb.build(), g.build()]))
            pj = os.path.join(tmp, "c.json")
            with open(pj, "w") as f:
                json.dump(js, f)
            run_oom_sql(self, ["SELECT profsum_import('%s', 'x')" % px,
                               "SELECT profsum_import('%s', 'j')" % pj], step=5)


# ---------------------------------------------------------------------------
# The corpus: every XPlane capture against an independent pass in Python.

def corpus_xplanes():
    return sorted(glob.glob(os.path.join(CORPUS, "*xplane*", "**", "*.xplane.pb"), recursive=True))


def parse_details(text):
    """kernel_details by docs/memory.md: (regs, static, dynamic, block, grid, occ)."""
    regs = stat = dyn = block = grid = occ = None
    for tok in text.split():
        if ":" not in tok:
            continue
        k, v = tok.split(":", 1)
        if k == "regs":
            regs = int(v) if v.isdigit() and int(v) <= 65536 else None
        elif k in ("static_shared", "shm", "group_mem", "dynamic_shared"):
            val = int(v) if v.isdigit() and int(v) < 2 ** 63 else None
            if k == "dynamic_shared":
                dyn = val
            else:
                stat = val
        elif k in ("block", "grid"):
            parts = v.split(",")
            dims = None
            if 1 <= len(parts) <= 3 and all(p.isdigit() for p in parts):
                n = [int(p) for p in parts] + [1] * (3 - len(parts))
                if all(x <= 2 ** 31 for x in n):
                    dims = "%d,%d,%d" % tuple(n)
            if k == "block":
                block = dims
            else:
                grid = dims
        elif k == "occ_pct":
            try:
                f = float(v)
                occ = f if 0 < f <= 100 else None
            except ValueError:
                occ = None
    return regs, stat, dyn, block, grid, occ


@unittest.skipUnless(corpus_xplanes(), "no corpus XPlane files")
class Corpus(MemTestCase):
    def test_memory_peaks_equal_a_python_pass(self):
        for path in corpus_xplanes():
            with self.subTest(path=os.path.basename(path)):
                tid = self.db.execute("SELECT profsum_import(?, NULL, '{\"unique_label\": true}')",
                                      (path,)).fetchone()[0]
                ev = self.db.execute("SELECT idx, name, ts, args FROM trace_events(?) WHERE name IN "
                                     "('MemoryAllocation', 'MemoryDeallocation') ORDER BY ts, idx", (path,)).fetchall()
                sizes = {}
                for (st,) in self.db.execute("SELECT stats FROM profsum_xplane_planes(?)", (path,)):
                    pass
                for name, st in self.db.execute("SELECT name, stats FROM profsum_xplane_planes(?)", (path,)):
                    s = json.loads(st)
                    if "memory_size" in s:
                        sizes[name] = s["memory_size"]
                by = {}
                for idx, name, ts, args in ev:
                    a = json.loads(args)
                    by.setdefault(a["allocator_name"], []).append((ts, idx, name, a))
                got = {r["allocator"]: r for r in self.rows("SELECT * FROM profsum_memory WHERE trace_id=?", (tid,))}
                self.assertEqual(sorted(got), sorted(by))
                for alloc, evs in by.items():
                    peak = max(a["bytes_allocated"] for _, _, _, a in evs)
                    first = min((ts, idx) for ts, idx, _, a in evs if a["bytes_allocated"] == peak)
                    live, at_peak = {}, None
                    for ts, idx, name, a in evs:
                        if name == "MemoryAllocation":
                            live[a["addr"]] = a["allocation_bytes"]
                        else:
                            live.pop(a["addr"], None)
                        if (ts, idx) == first:
                            at_peak = dict(live)
                    r = got[alloc]
                    dev = None
                    if alloc.startswith("GPU_") and alloc.endswith("_bfc"):
                        dev = "/device:GPU:" + alloc[4:-4]
                    self.assertEqual(r["device"], dev)
                    self.assertEqual(r["peak_bytes"], peak)
                    self.assertLess(abs(r["peak_ts_us"] * 1000 - first[0]), 1.0)
                    self.assertEqual(r["lifetime_peak_bytes"], max(a["peak_bytes_in_use"] for *_, a in evs))
                    self.assertEqual(r["device_memory_bytes"], sizes.get(dev))
                    self.assertEqual(r["num_allocations"], sum(1 for e in evs if e[2] == "MemoryAllocation"))
                    self.assertEqual(r["num_deallocations"], sum(1 for e in evs if e[2] == "MemoryDeallocation"))
                    self.assertEqual(r["allocated_bytes"],
                                     sum(e[3]["allocation_bytes"] for e in evs if e[2] == "MemoryAllocation"))
                    self.assertEqual(r["live_allocations_at_peak"], len(at_peak))
                    self.assertEqual(r["known_live_bytes_at_peak"], sum(at_peak.values()))
                    top = sorted(at_peak.items(), key=lambda kv: -kv[1])[:10]
                    self.assertEqual(sorted(h["bytes"] for h in json.loads(r["top_holders"])),
                                     sorted(b for _, b in top))
                    self.assertEqual(r["status"], "ok")

    def test_kernel_stats_equal_a_python_tally(self):
        for path in corpus_xplanes():
            with self.subTest(path=os.path.basename(path)):
                tid = self.db.execute("SELECT profsum_import(?, NULL, '{\"unique_label\": true}')",
                                      (path,)).fetchone()[0]
                tally = {}
                for name, proc, dur_ps, args in self.db.execute(
                        "SELECT name, process_name, dur_ps, args FROM trace_events(?) "
                        "WHERE process_name LIKE '/device:%' AND json_extract(args, '$.kernel_details') IS NOT NULL",
                        (path,)):
                    a = json.loads(args)
                    regs, stat, dyn, block, grid, occ = parse_details(a["kernel_details"])
                    key = (name, a.get("hlo_op"), block, grid, regs, stat, dyn)
                    t = tally.setdefault(key, {"n": 0, "ps": 0, "min": None, "max": None, "dev": set(),
                                               "occ": None, "mod": None})
                    t["n"] += 1
                    t["ps"] += dur_ps
                    t["min"] = dur_ps if t["min"] is None else min(t["min"], dur_ps)
                    t["max"] = dur_ps if t["max"] is None else max(t["max"], dur_ps)
                    t["dev"].add(proc)
                    if occ is not None:
                        t["occ"] = occ if t["occ"] is None else max(t["occ"], occ)
                    if a.get("hlo_module") is not None:
                        t["mod"] = a["hlo_module"] if t["mod"] is None else min(t["mod"], a["hlo_module"])
                got = {}
                for r in self.rows("SELECT * FROM profsum_kernel_stats WHERE trace_id=?", (tid,)):
                    key = (r["kernel_name"], r["hlo_op"], r["block_dim"], r["grid_dim"],
                           r["registers_per_thread"], r["static_shared_bytes"], r["dynamic_shared_bytes"])
                    got[key] = r
                self.assertEqual(sorted(got, key=repr), sorted(tally, key=repr))
                for key, t in tally.items():
                    r = got[key]
                    self.assertEqual((r["occurrences"], r["devices"], r["occupancy_pct"], r["hlo_module"]),
                                     (t["n"], len(t["dev"]), t["occ"], t["mod"]), key)
                    self.assertAlmostEqual(r["total_duration_us"], t["ps"] / 1e6, places=6)
                    self.assertAlmostEqual(r["min_duration_us"], t["min"] / 1e6, places=6)
                    self.assertAlmostEqual(r["max_duration_us"], t["max"] / 1e6, places=6)


if __name__ == "__main__":
    unittest.main()
