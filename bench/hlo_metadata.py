#!/usr/bin/python3
"""hlo_metadata.py - what the HLO protos of /host:metadata cost a read.

    hlo_metadata.py [--so profsum.so] [--protos 30] [--mib 8] [--ops 200000] [--runs 3] DIR

JAX writes the serialized HLO module of every compiled program into the
/host:metadata plane of its .xplane.pb, as a bytes stat ("Hlo Proto") of an
event metadata entry; no event refers to them.  This writes such a capture
into DIR (--protos values of --mib MiB of random bytes beside a device
plane of --ops XLA ops) and times, each in a fresh process, best of --runs:

  scan     SELECT count(*) FROM trace_events(F)
  import   SELECT profsum_import(F, 'x')

with the process's peak RSS (VmHWM: the whole Python process, the
extension loaded).  Output: one JSON object on stdout.
Standard library only; Debian's /usr/bin/python3 (loads extensions).
"""
import argparse
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import xspace_writer as W  # noqa: E402

QUERIES = {"scan": "SELECT count(*) FROM trace_events(?)",
           "import": "SELECT profsum_import(?, 'x')"}

# The peak is VmHWM of /proc/self/status: ru_maxrss would carry over the
# parent's peak (the capture it built) through fork and exec.
CHILD = r"""
import sqlite3, sys, time
so, path, sql = sys.argv[1:4]
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(so)
t = time.perf_counter()
db.execute(sql, (path,)).fetchall()
dt = time.perf_counter() - t
hwm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
print(dt, hwm)
"""


def write_capture(path, n_protos, mib, n_ops):
    """The capture: /host:metadata with the protos, then one device plane."""
    rng = random.Random(1)
    meta = W.PlaneBuilder("/host:metadata", id=0)
    for i in range(n_protos):
        meta.eid("jit_train_step_%d" % i, stats=[meta.stat("Hlo Proto", b=rng.randbytes(mib << 20))])
    dev = W.PlaneBuilder("/device:TPU:0", id=1)
    evs = [dev.event("fusion.%d" % (i % 50), offset_ps=i * 1000000, duration_ps=900000)
           for i in range(n_ops)]
    dev.line(id=1, name="XLA Ops", timestamp_ns=1700000000000000000, events=evs)
    with open(path, "wb") as f:
        f.write(W.xspace([meta.build(), dev.build()], hostnames=["h"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--so", default=os.path.join(HERE, "..", "profsum.so"))
    ap.add_argument("--protos", type=int, default=30)
    ap.add_argument("--mib", type=int, default=8)
    ap.add_argument("--ops", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("dir")
    a = ap.parse_args()
    if not os.path.isfile(a.so):
        ap.error("the extension %s does not exist: build it with `make`, "
                 "or give its path with --so" % a.so)
    os.makedirs(a.dir, exist_ok=True)
    path = os.path.join(a.dir, "hlo.xplane.pb")
    write_capture(path, a.protos, a.mib, a.ops)
    out = {"file": path, "bytes": os.path.getsize(path), "protos": a.protos, "mib": a.mib,
           "ops": a.ops}
    for name, sql in QUERIES.items():
        best = None
        for _ in range(a.runs):
            p = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(a.so), path, sql],
                               capture_output=True, text=True, check=True)
            dt, rss = p.stdout.split()
            if best is None or float(dt) < best[0]:
                best = (float(dt), int(rss))
        out[name] = {"seconds": round(best[0], 4), "peak_rss_kb": best[1]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
