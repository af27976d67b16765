#!/usr/bin/python3
"""bench/shapes.py - traces of unusual shapes, to find a cost that grows
faster than the events.

    /usr/bin/python3 bench/shapes.py --dir /tmp/shapes --scale 1 [--runs 3] SO...

Writes into DIR (once; a file already there is kept) trace JSON of about
200,000 events x SCALE in each of these shapes: nesting 2,000 deep
(`deep`), 20,000 threads (`wide`), distinct op names for every event
(`names`), B/E pairs (`be`), eight tracks in shuffled order (`shuffled`),
counters (`counters`), one timestamp for all (`samets`), overlapping
events (`overlap`), 50 args an event (`args`), 2 KB names (`longnames`),
50,000 steps (`steps`), 12-level tf_op paths (`regions`) and 2,000
device processes (`devices`); and XPlane files (tests/xspace_writer.py)
with 20,000 lines (`x_lines`), 2,000 planes (`x_planes`), distinct names
(`x_names`), 20 stats an event (`x_stats`), 5,000 host threads
(`x_threads`) and GPU kernels with their four stats, as inline strings
(`x_gpu`) and as references to stat metadata, the way XLA's GPU tracer
writes them (`x_gpu_ref`).

Then imports each file RUNS times with each build SO (a path to
profsum.so; the builds take turns), each import in a new in-memory
database of a connection that imported a one-event trace first (the
schema present), and prints one line per file and build: events, the
median import in ms and µs per event.  A shape whose µs per event is far
above the others, or grows when --scale doubles, is a lead.  Standard
library only; Debian's /usr/bin/python3 (its sqlite3 module loads
extensions).
"""
import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))


def meta(pid=1, tids=(1,), thread="XLA Ops", proc="/device:TPU:0"):
    ev = [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": proc}}]
    for t in tids:
        ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": thread}})
    return ev


def op(name, ts, dur, tid=1, pid=1, args=None):
    e = {"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def json_shapes(n):
    """{name: events} of the JSON shapes with about n events each."""
    rng = random.Random(1)
    out = {}
    ev = meta()
    t = 0
    while len(ev) < n:
        for i in range(2000):
            ev.append(op("fusion.%d" % i, t + i, 2 * (2000 - i)))
        t += 4010
    out["deep"] = ev
    tids = range(1, n // 10 + 1)
    ev = meta(tids=tids)
    for k in range(10):
        ev += [op("op%d" % k, 100 * k, 50, tid=t) for t in tids]
    out["wide"] = ev
    out["names"] = meta() + [op("fusion.unique.%d" % i, 10 * i, 5) for i in range(n)]
    ev = meta()
    for i in range(n // 2):
        ev.append({"ph": "B", "name": "b%d" % (i % 100), "pid": 1, "tid": 1, "ts": 10 * i})
        ev.append({"ph": "E", "pid": 1, "tid": 1, "ts": 10 * i + 5})
    out["be"] = ev
    ev = [op("op%d" % (i % 50), 10 * (i // 8), 5, tid=1 + i % 8) for i in range(n)]
    rng.shuffle(ev)
    out["shuffled"] = meta(tids=range(1, 9)) + ev
    out["counters"] = (meta() + [{"ph": "C", "name": "mem", "pid": 1, "ts": i, "args": {"bytes": 3 * i}}
                                 for i in range(n)] + [op("op", 100 * i, 50) for i in range(1000)])
    out["samets"] = meta() + [op("op%d" % (i % 7), 1000, 0 if i % 2 else 5) for i in range(n)]
    out["overlap"] = meta() + [op("op%d" % (i % 7), 10 * i, 15) for i in range(n)]
    out["args"] = meta() + [op("op%d" % (i % 7), 10 * i, 5, args={"k%d" % j: "v%d" % (i * j) for j in range(50)})
                            for i in range(n // 4)]
    out["longnames"] = meta() + [op("x" * 2000 + str(i % 100), 10 * i, 5) for i in range(n // 4)]
    ev = meta(tids=(1,)) + meta(tids=(2,), thread="Steps")[1:]
    for s in range(n // 4):
        ev += [op(str(s), 100 * s, 100, tid=2), op("op", 100 * s + 10, 50), op("op2", 100 * s + 60, 20)]
    out["steps"] = ev
    out["regions"] = meta() + [op("fusion.%d" % (i % 100), 10 * i, 5,
                                  args={"tf_op": "/".join("r%d" % ((i >> k) % 7) for k in range(12)) + "/op"})
                               for i in range(n)]
    ev = []
    for p in range(1, n // 100 + 1):
        ev += meta(pid=p, proc="/device:TPU:%d" % p) + [op("op%d" % (k % 5), 10 * k, 5, pid=p) for k in range(100)]
    out["devices"] = ev
    return out


def xplane_shapes(n):
    """{name: bytes} of the XPlane shapes with about n events each."""
    import xspace_writer as w
    out = {}
    pb = w.PlaneBuilder("/device:TPU:0", id=1)
    for ln in range(n // 10):
        pb.line(id=ln, name="XLA Ops" if ln == 0 else "Stream #%d" % ln, timestamp_ns=1000,
                events=[pb.event("op%d" % (k % 5), offset_ps=1000 * k, duration_ps=500) for k in range(10)])
    out["x_lines"] = w.xspace([pb.build()], hostnames=["h"])
    planes = []
    for p in range(n // 100):
        pb = w.PlaneBuilder("/device:TPU:%d" % p, id=p)
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000,
                events=[pb.event("op%d" % (k % 5), offset_ps=1000 * k, duration_ps=500) for k in range(100)])
        planes.append(pb.build())
    out["x_planes"] = w.xspace(planes, hostnames=["h"])
    pb = w.PlaneBuilder("/device:TPU:0", id=1)
    pb.line(id=1, name="XLA Ops", timestamp_ns=1000,
            events=[pb.event("fusion.%d" % k, offset_ps=1000 * k, duration_ps=500,
                             stats=[pb.stat("hlo_op", s="fusion.%d" % k)]) for k in range(n)])
    out["x_names"] = w.xspace([pb.build()], hostnames=["h"])
    pb = w.PlaneBuilder("/device:TPU:0", id=1)
    pb.line(id=1, name="XLA Ops", timestamp_ns=1000,
            events=[pb.event("op%d" % (k % 50), offset_ps=1000 * k, duration_ps=500,
                             stats=[pb.stat("s%d" % j, i64=k * j) for j in range(20)]) for k in range(n // 4)])
    out["x_stats"] = w.xspace([pb.build()], hostnames=["h"])
    pb = w.PlaneBuilder("/host:CPU", id=1)
    for ln in range(n // 40):
        pb.line(id=ln, name="thread%d" % ln, timestamp_ns=1000,
                events=[pb.event("py%d" % (k % 9), offset_ps=1000 * k, duration_ps=500) for k in range(40)])
    out["x_threads"] = w.xspace([pb.build()], hostnames=["h"])
    # a GPU capture: kernels on four streams, each launch with its own
    # correlation id, kernel_details text, hlo_op and hlo_module (as the
    # CUPTI tracer writes them), 40 kernels of 20 modules
    for shape, kind in (("x_gpu", "s"), ("x_gpu_ref", "ref")):
        pb = w.PlaneBuilder("/device:GPU:0", id=1)
        pb.plane_stat("core_count", i64=108)
        per = n // 4
        for ln in range(4):
            evs = []
            for k in range(per):
                kern = k % 40
                details = "regs:%d static_shared:%d dynamic_shared:0 grid:%d,1,1 block:256,1,1 occ_pct:%d" % (
                    32 + 8 * (kern % 5), 1024 * (kern % 3), 64 << (kern % 4), 25 + kern % 50)
                evs.append(pb.event("kernel_%d" % kern, offset_ps=2000000 * k + 1000 * ln, duration_ps=1500000,
                                    stats=[pb.stat("correlation_id", u64=ln * per + k),
                                           pb.stat("kernel_details", **{kind: details}),
                                           pb.stat("hlo_op", **{kind: "fusion.%d" % kern}),
                                           pb.stat("hlo_module", **{kind: "jit_step_%d" % (kern % 20)})]))
            pb.line(id=ln + 7, name="Stream #%d(Compute)" % (ln + 7), timestamp_ns=1000, events=evs)
        out[shape] = w.xspace([pb.build()], hostnames=["h"])
    return out


def write_shapes(d, scale):
    """Paths of the shape files in d, written unless already there."""
    os.makedirs(d, exist_ok=True)
    n = int(200000 * scale)
    paths = []
    names = ["deep", "wide", "names", "be", "shuffled", "counters", "samets", "overlap", "args",
             "longnames", "steps", "regions", "devices"]
    xnames = ["x_lines", "x_planes", "x_names", "x_stats", "x_threads", "x_gpu", "x_gpu_ref"]
    if not all(os.path.exists(os.path.join(d, k + ".json")) for k in names):
        for k, ev in json_shapes(n).items():
            with open(os.path.join(d, k + ".json"), "w") as f:
                json.dump({"traceEvents": ev}, f)
    if not all(os.path.exists(os.path.join(d, k + ".xplane.pb")) for k in xnames):
        for k, data in xplane_shapes(n).items():
            with open(os.path.join(d, k + ".xplane.pb"), "wb") as f:
                f.write(data)
    paths = [os.path.join(d, k + ".json") for k in names] + [os.path.join(d, k + ".xplane.pb") for k in xnames]
    return paths


def import_once(so, path, tiny):
    """(seconds, events) of one import of path with build so."""
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(os.path.splitext(os.path.abspath(so))[0])
    db.execute("SELECT profsum_import(?, 't')", (tiny,)).fetchall()
    t = time.perf_counter()
    db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchall()
    s = time.perf_counter() - t
    n = db.execute("SELECT num_events_total FROM profsum_trace WHERE label = 'x'").fetchone()[0]
    db.close()
    return s, n


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="where the shape files are written and kept")
    ap.add_argument("--scale", type=float, default=1.0, help="events: 200,000 x SCALE a shape")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated shape names")
    ap.add_argument("so", nargs="+", help="profsum.so builds to compare")
    a = ap.parse_args(argv)
    paths = write_shapes(a.dir, a.scale)
    if a.only:
        keep = set(a.only.split(","))
        paths = [p for p in paths if os.path.basename(p).split(".")[0] in keep]
    with tempfile.TemporaryDirectory() as tmp:
        tiny = os.path.join(tmp, "tiny.json")
        with open(tiny, "w") as f:
            json.dump({"traceEvents": [op("x", 1, 1)]}, f)
        for p in paths:
            times = {so: [] for so in a.so}
            n = 0
            for _ in range(a.runs):
                for so in a.so:
                    s, n = import_once(so, p, tiny)
                    times[so].append(s)
            for so in a.so:
                m = statistics.median(times[so])
                print("%-20s %-28s %8d events %9.1f ms %7.2f us/event"
                      % (os.path.basename(p), so, n, m * 1e3, m * 1e6 / max(n, 1)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
