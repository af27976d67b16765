#!/usr/bin/python3
"""bench/pod_bench.py - a pod of 8 hosts imported with hosts 'all' (the hosts
parsed in parallel) against the same 8 files imported one after another.

    pod_bench.py [--steps N] [--ops N] [--runs N] [--so PATH] [--keep DIR]

The capture is TPU-shaped and generated here (tests/xspace_writer.py): four
/device:TPU:<n> planes, each with a Steps line and an XLA Ops line of
--ops fusions and an all-reduce per step, for --steps steps.  The eight
hosts are copies of it whose Task Environment.profile_start_time is
shifted by 1 ms per host.  Each mode runs in a process of its own (a new
database file in a temporary folder), --runs times; printed per mode: the
median wall time of the import(s) (time.perf_counter) and the largest peak
RSS of the process (ru_maxrss), and the median CPU time of the process
(user + system, the whole process: Python and the extension's load
included), as one line of JSON each; first a line with the pod's size, the
cores and the load average (the wall time gains from the parallel parse
only when cores are idle).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import xspace_writer as W  # noqa: E402

US = 10 ** 6
SESSION = "plugins/profile/2026_01_01_00_00_00"


def device_planes(steps, ops):
    """The four TPU planes (bytes of XSpace field 1 each, ready to join)."""
    out = []
    for d in range(4):
        pb = W.PlaneBuilder("/device:TPU:%d" % d, id=d)
        sev, oev = [], []
        for k in range(steps):
            s = k * (ops * 12 + 40)
            sev.append(pb.event(str(k), offset_ps=s * US, duration_ps=(ops * 12 + 30) * US))
            for i in range(ops):
                oev.append(pb.event("fusion.%d" % (i % 40), offset_ps=(s + 12 * i) * US,
                                    duration_ps=(10 + (i + d) % 3) * US,
                                    stats=[pb.stat("tf_op", s="jit(train)/block_%d/op" % (i % 12))]))
            oev.append(pb.event("all-reduce.1", offset_ps=(s + 12 * ops) * US, duration_ps=20 * US))
        pb.line(id=1, name="Steps", timestamp_ns=0, events=sev)
        pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=oev)
        out.append(W.f_bytes(1, pb.build()))
    return b"".join(out)


def write_pod(d, steps, ops):
    planes = device_planes(steps, ops)
    for h in range(8):
        te = W.PlaneBuilder("Task Environment", id=100)
        te.plane_stat("profile_start_time", u64=1767225600 * 10 ** 9 + h * 10 ** 6)
        data = planes + W.f_bytes(1, te.build()) + W.f_bytes(4, "host%d" % h)
        p = os.path.join(d, "pod", SESSION, "host%d.xplane.pb" % h)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    return os.path.join(d, "pod")


CHILD = r"""
import json, resource, sqlite3, sys, time, os
so, mode, pod, dbp = sys.argv[1:5]
db = sqlite3.connect(dbp)
db.enable_load_extension(True)
db.load_extension(so)
t = time.perf_counter()
if mode == "parallel":
    db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (pod,)).fetchone()
else:
    d = os.path.join(pod, sys.argv[5])
    for f in sorted(os.listdir(d)):
        db.execute("SELECT profsum_import(?, ?)", (os.path.join(d, f), f)).fetchone()
db.commit()
wall = time.perf_counter() - t
n = db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0]
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall_s": wall, "peak_rss_mb": ru.ru_maxrss / 1024.0, "traces": n,
                  "cpu_s": ru.ru_utime + ru.ru_stime}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--ops", type=int, default=400)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--so", default=os.path.join(ROOT, "profsum.so"))
    ap.add_argument("--keep", help="write the pod here (kept) instead of a temporary folder")
    a = ap.parse_args()
    if not os.path.isfile(a.so):
        ap.error("the extension %s does not exist: build it with `make`, "
                 "or give its path with --so" % a.so)
    with tempfile.TemporaryDirectory(prefix="pod-bench-") as td:
        base = a.keep or td
        pod = write_pod(base, a.steps, a.ops)
        size = sum(os.path.getsize(os.path.join(pod, SESSION, f)) for f in os.listdir(os.path.join(pod, SESSION)))
        events = 8 * 4 * a.steps * (a.ops + 2)
        print(json.dumps({"hosts": 8, "events": events, "bytes": size, "cores": os.cpu_count(),
                          "load_avg_1m": os.getloadavg()[0]}))
        for mode in ("parallel", "one_by_one"):
            res = []
            for r in range(a.runs):
                dbp = os.path.join(td, "%s-%d.db" % (mode, r))
                out = subprocess.run([sys.executable, "-c", CHILD, a.so, mode, pod, dbp, SESSION],
                                     check=True, stdout=subprocess.PIPE).stdout
                res.append(json.loads(out))
            print(json.dumps({"mode": mode, "median_wall_s": round(statistics.median(x["wall_s"] for x in res), 3),
                              "walls_s": [round(x["wall_s"], 3) for x in res],
                              "peak_rss_mb": round(max(x["peak_rss_mb"] for x in res), 1),
                              "median_cpu_s": round(statistics.median(x["cpu_s"] for x in res), 3),
                              "traces": res[0]["traces"]}))


if __name__ == "__main__":
    main()
