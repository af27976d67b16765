"""Seed inputs of the import fuzz target (tests/fuzz_import.c).

Each seed is one selector byte followed by the file the target imports.
The selector's bit 0 names the file (1: in.xplane.pb, 0: in.trace.json),
bit 1 runs the first import without threads, bits 2-3 pick the import
options (see the comment at the top of tests/fuzz_import.c).

    /usr/bin/python3 tests/gen_fuzz_import_corpus.py tests/fuzz_import_corpus

writes the generated seeds (names starting with "seed-"), replacing those
of the same name; found inputs kept in the folder (crash-*, ...) stay.
The profile_summary.v1 seed is the document ./profsum.so writes for the
TPU-shaped JSON (with a fixed generated_at_utc): build profsum.so first,
or that seed is left out.
Every seed is under 8 KiB.  XSpace files are written with
tests/xspace_writer.py; the memory events follow docs/memory.md, the
device limits docs/roofline.md.
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xspace_writer as W  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
US = 10 ** 6
PB, JSON = 1, 0
NO_THREADS = 2
OPT_SMALL, OPT_PEAKS, OPT_EVENTS = 4, 8, 12


def mem(pb, name, off_us, addr, nbytes, in_use, allocator="GPU_0_bfc", tf_op=None, index=None):
    """A MemoryAllocation / MemoryDeallocation event (docs/memory.md); with
    index, named as PJRT on TPU names it (index_on_host, bytes_reserved and
    bytes_available, no allocator_name)."""
    name_st = ([pb.stat("index_on_host", i64=index), pb.stat("bytes_reserved", i64=64),
                pb.stat("bytes_available", i64=(1 << 20) - in_use)] if index is not None
               else [pb.stat("allocator_name", s=allocator)])
    st = name_st + [pb.stat("bytes_allocated", i64=in_use),
                    pb.stat("peak_bytes_in_use", i64=in_use + 64), pb.stat("addr", u64=addr)]
    if nbytes is not None:
        st += [pb.stat("allocation_bytes", i64=nbytes), pb.stat("requested_bytes", i64=nbytes - 4)]
    if tf_op is not None:
        st += [pb.stat("tf_op", s=tf_op), pb.stat("region_type", s="output"),
               pb.stat("data_type", i64=1), pb.stat("shape", s="[4,8]")]
    return pb.event(name, offset_ps=round(off_us * US), duration_ps=0, stats=st)


def tpu_xspace(steps=3, pjrt_memory=False):
    """A TPU device with limits, Steps / XLA Modules / XLA Ops lines (flops
    and bytes_accessed on the op metadata and on events), a second device
    without events, and a host plane with python threads, 'train' steps and
    memory events."""
    d = W.PlaneBuilder("/device:TPU:0", id=1)
    d.plane_stat("peak_teraflops_per_second", double=100.0)
    d.plane_stat("peak_hbm_bw_gigabytes_per_second", double=1000.0)
    d.plane_stat("device_vendor", s="Google")
    d.plane_stat("device_type_string", s="TPU v4")
    d.plane_stat("core_count", i64=2)
    if not pjrt_memory:
        d.plane_stat("memory_size", u64=1 << 20)
    fus = d.eid("fusion.1", stats=[d.stat("flops", i64=500000000), d.stat("model_flops", double=4e8),
                                   d.stat("bytes_accessed", i64=1000000),
                                   d.stat("hlo_category", s="convolution")])
    ar = d.eid("all-reduce.3", stats=[d.stat("bytes_accessed", i64=4096),
                                      d.stat("hlo_category", s="all-reduce")])
    mods, ops, st = [], [], []
    for s in range(steps):
        t0 = s * 100 * US
        st.append(d.event(str(s + 1), offset_ps=t0, duration_ps=100 * US))
        mods.append(d.event("jit_train_step(123)", offset_ps=t0 + 2 * US, duration_ps=90 * US,
                            stats=[d.stat("run_id", i64=7)]))
        ops += [W.event(fus, offset_ps=t0 + 5 * US, duration_ps=10 * US),
                d.event("copy.1", offset_ps=t0 + 20 * US, duration_ps=(5 + s) * US,
                        stats=[d.stat("flops", u64=1600), d.stat("bytes_accessed", i64=16000000),
                               d.stat("tf_op", s="jit(train)/transpose")]),
                W.event(ar, offset_ps=t0 + 40 * US, duration_ps=20 * US),
                d.event("while.1", offset_ps=t0 + 65 * US, duration_ps=20 * US),
                d.event("fusion.2", offset_ps=t0 + 70 * US, duration_ps=5 * US)]
    d.line(id=1, name="Steps", timestamp_ns=1000, events=st)
    d.line(id=2, name="XLA Modules", timestamp_ns=1000, events=mods)
    d.line(id=3, name="XLA Ops", timestamp_ns=1000, events=ops)
    d1 = W.PlaneBuilder("/device:TPU:1", id=2)
    h = W.PlaneBuilder("/host:CPU", id=3)
    h.line(id=11, name="python3", display_name="MainThread", timestamp_ns=1000, events=[
        h.event("train", offset_ps=s * 100 * US, duration_ps=95 * US, stats=[h.stat("step_num", i64=s + 1)])
        for s in range(steps)] + [h.event("PjitFunction(train_step)", offset_ps=1 * US, duration_ps=3 * US)])
    ix = 0 if pjrt_memory else None
    h.line(id=12, name="python3", display_name="Thread-2", timestamp_ns=1000, events=[
        mem(h, "MemoryAllocation", 1, 0x1000, 256, 1280, tf_op="jit(train)/dot", index=ix),
        mem(h, "MemoryAllocation", 30, 0x2000, 512, 1792, tf_op="b", index=ix),
        mem(h, "MemoryDeallocation", 120, 0x1000, 256, 1536, index=ix),
        mem(h, "MemoryAllocation", 150, 0x3000, 128, 1664, allocator="xla_gpu_host_bfc"),
        mem(h, "MemoryDeallocation", 210, 0x9999, None, 1400)])
    return W.xspace([d.build(), d1.build(), h.build()], hostnames=["host0"])


def gpu_xspace():
    """A GPU device with clock/cores/bandwidth stats, a kernel stream with
    kernel_details and HLO stats; a host with 'train' steps and memory
    events on two lines."""
    g = W.PlaneBuilder("/device:GPU:0", id=1)
    g.plane_stat("clock_rate", i64=1410000)
    g.plane_stat("core_count", i64=108)
    g.plane_stat("memory_size", i64=4096)
    g.plane_stat("memory_bandwidth", u64=1555000000000)
    g.plane_stat("compute_cap_major", i64=8)
    g.plane_stat("compute_cap_minor", i64=0)
    g.plane_stat("device_vendor", s="Nvidia")
    kd = "regs:32 static_shared:1024 dynamic_shared:0 grid:10,1,1 block:256,1,1 occ_pct:50"
    dot = [g.stat("hlo_op", s="dot.3"), g.stat("hlo_module", s="jit_train"),
           g.stat("kernel_details", s=kd), g.stat("flops", i64=1000000), g.stat("bytes_accessed", i64=2048)]
    g.line(id=1, name="Stream #7(Kernel)", timestamp_ns=0, events=[
        g.event("sm80_gemm", offset_ps=0, duration_ps=30 * US, stats=dot),
        g.event("sm80_gemm", offset_ps=40 * US, duration_ps=20 * US, stats=dot),
        g.event("copyBuffer", offset_ps=60 * US, duration_ps=10 * US,
                stats=[g.stat("kernel_details", s="grid:1 block:64 occ_pct:12.5")]),
        g.event("ncclAllReduceKernel", offset_ps=72 * US, duration_ps=8 * US,
                stats=[g.stat("hlo_op", s="all-reduce.1")])])
    g.line(id=2, name="Stream #8(MemcpyH2D)", timestamp_ns=0, events=[
        g.event("MemcpyH2D", offset_ps=5 * US, duration_ps=4 * US)])
    h = W.PlaneBuilder("/host:CPU", id=2)
    h.line(id=1, name="python", timestamp_ns=0, events=[
        h.event("train", offset_ps=0, duration_ps=50 * US, stats=[h.stat("step_num", i64=5)]),
        h.event("train", offset_ps=50 * US, duration_ps=50 * US, stats=[h.stat("step_num", i64=6)])])
    h.line(id=2, name="callback", timestamp_ns=0, events=[
        mem(h, "MemoryAllocation", 0, 0x1000, 100, 1100, tf_op="jit(f)/dot"),
        mem(h, "MemoryAllocation", 3, 0x3000, 400, 1600, tf_op="c"),
        mem(h, "MemoryDeallocation", 4, 0x1000, 100, 1500),
        mem(h, "MemoryAllocation", 55, 0x4000, 50, 1550, allocator="GPU_1_bfc")])
    return W.xspace([g.build(), h.build()], hostnames=["h"])


def meta(pid, name, tid=None, tname=None):
    out = [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}]
    if tid is not None:
        out.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": tname}})
    return out


def tpu_json():
    """TPU-shaped trace JSON: Steps, XLA Modules and XLA Ops threads of a
    device, model_flops / bytes_accessed as strings and numbers, a host
    python thread with nested events."""
    ev = meta(2, "/device:TPU:0", 1, "Steps") + meta(2, "/device:TPU:0", 2, "XLA Modules")
    ev += meta(2, "/device:TPU:0", 3, "XLA Ops") + meta(1, "/host:CPU", 9, "python3")
    for s in range(3):
        t = 100 * s
        ev += [{"ph": "X", "pid": 2, "tid": 1, "ts": t, "dur": 100, "name": str(s + 1)},
               {"ph": "X", "pid": 2, "tid": 2, "ts": t + 1, "dur": 95, "name": "jit_step(9)",
                "args": {"run_id": "9"}},
               {"ph": "X", "pid": 2, "tid": 3, "ts": t + 2, "dur": 10, "name": "fusion.1",
                "args": {"model_flops": "2000000", "bytes_accessed": "1000", "hlo_category": "convolution",
                         "long_name": "%fusion.1 = bf16[8,128]{1,0} fusion(bf16[8,64] %p0), kind=kOutput",
                         "tf_op": "jit(step)/jvp(dense)/dot_general"}},
               {"ph": "X", "pid": 2, "tid": 3, "ts": t + 20, "dur": 15, "name": "all-reduce.2",
                "args": {"bytes_accessed": 4096, "hlo_category": "all-reduce"}},
               {"ph": "X", "pid": 2, "tid": 3, "ts": t + 40, "dur": 5.5, "name": "copy.2",
                "args": {"bytes_accessed": "5000"}},
               {"ph": "X", "pid": 1, "tid": 9, "ts": t, "dur": 90, "name": "train",
                "args": {"step_num": str(s + 1)}},
               {"ph": "X", "pid": 1, "tid": 9, "ts": t + 1, "dur": 20, "name": "PjitFunction(step)"}]
    return {"displayTimeUnit": "ns", "traceEvents": ev}


def gpu_json():
    """GPU-shaped trace JSON: stream threads, host 'train' steps around B/E
    pairs, a comm kernel,
    flow and counter events, a gap between steps."""
    ev = meta(3, "/device:GPU:0", 7, "Stream #7(Kernel)") + meta(4, "/host:CPU", 1, "python")
    for s in range(2):
        t = 1000 + 200 * s
        ev += [{"ph": "X", "pid": 4, "tid": 1, "ts": t, "dur": 150, "name": "train", "args": {"step_num": s}},
               {"ph": "B", "pid": 4, "tid": 1, "ts": t + 1, "name": "host_loop"},
               {"ph": "X", "pid": 4, "tid": 1, "ts": t + 5, "dur": 30, "name": "cudaLaunchKernel",
                "args": {"correlation_id": 10 + s}},
               {"ph": "E", "pid": 4, "tid": 1, "ts": t + 140},
               {"ph": "X", "pid": 3, "tid": 7, "ts": t + 40, "dur": 50, "name": "sm80_gemm",
                "args": {"hlo_op": "dot.3", "hlo_module": "jit_train", "correlation_id": 10 + s,
                         "kernel_details": "regs:32 grid:10,1,1 block:256,1,1 occ_pct:50"}},
               {"ph": "X", "pid": 3, "tid": 7, "ts": t + 95, "dur": 20, "name": "ncclAllReduceRingLLKernel"},
               {"ph": "s", "pid": 4, "tid": 1, "ts": t + 5, "id": s, "name": "flow", "cat": "launch"},
               {"ph": "f", "pid": 3, "tid": 7, "ts": t + 40, "id": s, "name": "flow", "cat": "launch",
                "bp": "e"},
               {"ph": "C", "pid": 4, "ts": t, "name": "mem", "args": {"bytes": 100 * s}}]
    return {"traceEvents": ev}


def odd_json():
    """Odd shapes: instant and async events, zero and negative durations,
    nested and overlapping X events, escaped and non-ASCII names, huge and
    fractional times, an unknown phase."""
    ev = meta(1, "/device:TPU:0", 3, "XLA Ops") + meta(5, "proc \u00e9\\\"", 1, "t\u0001")
    ev += [{"ph": "X", "pid": 1, "tid": 3, "ts": 0, "dur": 100, "name": "while.1"},
           {"ph": "X", "pid": 1, "tid": 3, "ts": 10, "dur": 20, "name": "fusion.9"},
           {"ph": "X", "pid": 1, "tid": 3, "ts": 25, "dur": 20, "name": "fusion.10"},
           {"ph": "X", "pid": 1, "tid": 3, "ts": 50, "dur": 0, "name": "zero"},
           {"ph": "X", "pid": 1, "tid": 3, "ts": 60, "dur": -5, "name": "negative"},
           {"ph": "i", "pid": 5, "tid": 1, "ts": 1.25, "name": "instant", "s": "g"},
           {"ph": "b", "pid": 5, "tid": 1, "ts": 2, "id": "0x1", "name": "async", "cat": "a"},
           {"ph": "e", "pid": 5, "tid": 1, "ts": 9, "id": "0x1", "name": "async", "cat": "a"},
           {"ph": "X", "pid": 5, "tid": 1, "ts": 1e15, "dur": 1e-3, "name": "\u6f22\ud83d\ude00"},
           {"ph": "Q", "pid": 5, "tid": 1, "ts": 3, "name": "unknown phase"},
           {"ph": "X", "pid": "x", "tid": 1.5, "ts": "7", "dur": 1, "name": 5}]
    return {"traceEvents": ev, "otherData": {"version": "x"}}


def kineto_json():
    """PyTorch's layout: the top-level members the import keeps for the
    environment (deviceProperties, distributedInfo, versions, otherData)
    before and after traceEvents, one key given twice; [memory] events of
    a GPU and the CPU, one [OutOfMemory]."""
    dev = [{"id": i, "name": "NVIDIA H100", "totalGlobalMem": 102085492736, "computeMajor": 9,
            "computeMinor": 0, "numSms": 132} for i in range(2)]
    def mem(ts, nbytes, addr, total, dtype=1, did=1, name="[memory]"):
        return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": name, "pid": 7, "tid": 7, "ts": ts,
                "args": {"Total Reserved": 2 * total, "Total Allocated": total, "Bytes": nbytes,
                         "Device Id": did, "Device Type": dtype, "Addr": addr}}
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1000, "dur": 20},
          {"ph": "X", "cat": "kernel", "name": "sm90_gemm", "pid": 0, "tid": 7, "ts": 1010, "dur": 30},
          mem(1001, 512, 140000, 512), mem(1002, 64, -16, 576), mem(1003, 8, 5, 8, dtype=0, did=-1),
          mem(1004, 1 << 40, 0, 576, name="[OutOfMemory]"), mem(1005, -512, 140000, 64)]
    return ('{"schemaVersion":1,"deviceProperties":%s,"distributedInfo":{"backend":"nccl","rank":1,'
            '"world_size":2},"cuda_runtime_version":12090,"traceEvents":%s,"traceName":"a",'
            '"traceName":"b","otherData":{"version":"2.5","x":[1]},"username":"u","INFO":["i"],'
            '"baseTimeNanoseconds":1775078550000000000,"displayTimeUnit":"ms"}'
            % (json.dumps(dev, separators=(",", ":")), json.dumps(ev, separators=(",", ":")))).encode()


def v1_document(so):
    """The profile_summary.v1 document of tpu_json() as the extension so
    writes it, with a fixed generated_at_utc; None when so cannot be
    loaded (the seed is then left out)."""
    import sqlite3
    import tempfile
    try:
        db = sqlite3.connect(":memory:")
        db.enable_load_extension(True)
        db.load_extension(so)
    except (sqlite3.Error, AttributeError):
        return None
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "t.trace.json")
        with open(path, "wb") as f:
            f.write(dumps(tpu_json()))
        tid = db.execute("SELECT profsum_import(?, 't')", (path,)).fetchone()[0]
        doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
    db.close()
    doc = dict([("schema_version", doc.pop("schema_version"))] + list(doc.items()))
    doc["generated_at_utc"] = "2026-01-01T00:00:00Z"
    doc["source_path"] = "t.trace.json"
    return doc


def typed_json():
    """What the reference's typed decoder reads its own way: a byte order
    mark, traceEvents given twice (the last array is summarized), a later
    null displayTimeUnit, entries without ph with typed fields, a null
    name, an event-level process_name, a pid beyond 64 bits."""
    meta = ('{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:TPU:0"}},'
            '{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops"}}')
    ops = ",".join('{"ph":"X","pid":1,"tid":2,"name":"fusion.%d","ts":%d,"dur":7,'
                   '"args":{"tf_op":"jit(f)/a/b","run_id":"%d"}}' % (i % 3, 10 * i, i // 4)
                   for i in range(12))
    text = ('{"displayTimeUnit":"ns","traceEvents":[%s],"traceEvents":[%s,%s,'
            '{"pid":"a"},{"args":{"tf_op":5}},{"ph":"X","pid":1,"tid":2,"name":null,"ts":1,"dur":2},'
            '{"ph":"X","pid":1,"tid":2,"name":"g","ts":3,"dur":2,"process_name":7},'
            '{"ph":"X","pid":18446744073709551615,"tid":2,"name":"g","ts":3,"dur":2},{}],'
            '"displayTimeUnit":null}' % (ops, meta, ops))
    return b"\xef\xbb\xbf" + text.encode()


def dumps(doc):
    return json.dumps(doc, separators=(",", ":")).encode()


def seeds():
    out = {}
    tpu = tpu_xspace()
    out["seed-tpu.xplane"] = bytes([PB]) + tpu
    out["seed-tpu-nothreads-peaks.xplane"] = bytes([PB | NO_THREADS | OPT_PEAKS]) + tpu
    out["seed-tpu-gz-small.xplane"] = bytes([PB | OPT_SMALL]) + gzip.compress(tpu, mtime=0)
    out["seed-tpu-pjrt-memory.xplane"] = bytes([PB]) + tpu_xspace(pjrt_memory=True)
    out["seed-gpu.xplane"] = bytes([PB]) + gpu_xspace()
    out["seed-gpu-events.xplane"] = bytes([PB | NO_THREADS | OPT_EVENTS]) + gpu_xspace()
    out["seed-tpu.json"] = bytes([JSON]) + dumps(tpu_json())
    out["seed-tpu-small.json"] = bytes([JSON | NO_THREADS | OPT_SMALL]) + dumps(tpu_json())
    out["seed-gpu.json"] = bytes([JSON | OPT_EVENTS]) + dumps(gpu_json())
    out["seed-odd.json"] = bytes([JSON | NO_THREADS]) + json.dumps(odd_json(), indent=1).encode()
    out["seed-gpu-gz.json"] = bytes([JSON | OPT_PEAKS]) + gzip.compress(dumps(gpu_json()), mtime=0)
    out["seed-typed.json"] = bytes([JSON]) + typed_json()
    out["seed-kineto.json"] = bytes([JSON | NO_THREADS]) + kineto_json()
    v1 = v1_document(os.path.join(ROOT, "profsum.so"))
    if v1 is not None:
        out["seed-v1.json"] = bytes([JSON]) + dumps(v1)
    for name, data in out.items():
        assert len(data) < 8192, (name, len(data))
    return out


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: gen_fuzz_import_corpus.py DIR\n")
        return 2
    os.makedirs(argv[1], exist_ok=True)
    for name, data in sorted(seeds().items()):
        with open(os.path.join(argv[1], name), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
