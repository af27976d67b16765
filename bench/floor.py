#!/usr/bin/python3
"""floor.py - profsum against the two inflate floors, in one run.

For each trace: `igzip -dc` (ISA-L's inflater, the one profsum uses: the
floor) and `gzip -dc` (the usual one), the plain scan `count(*)`, the
four-column scan users write (count(*), total(ts), sum(dur_ps),
count(name): every row tokenized, two times and a name made), and the
import + summary into a new database.  Rounds interleave every command on
every trace; the best of all rounds counts (the machine is shared); each
time is also given over igzip's and gzip's best on the same file.

Optional load: --busy N starts N `yes > /dev/null` processes for the run
(the other core busy), and --threads0 adds the one-thread import
(PROFSUM_THREADS=0) beside the default one, to compare them under it.

Usage:
  /usr/bin/python3 bench/floor.py [--rounds 5] [--so ./profsum.so]
      [--busy 0] [--threads0] [--json OUT] TRACE.json.gz ...
Traces: bench/gen_trace.py makes them (bench/data/ caches run.sh's), or
real captures.  Needs igzip (Debian package isal) and sqlite3.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCAN4 = "SELECT count(*), total(ts), sum(dur_ps), count(name) FROM trace_events('%s')"


def run(cmd, env=None, shell=False):
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit("floor.py: %s failed: %s" % (cmd, r.stderr.decode(errors="replace")[:300]))
    return dt, r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--so", default=os.path.join(ROOT, "profsum.so"))
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--threads0", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    if not shutil.which("igzip"):
        raise SystemExit("floor.py: igzip not found (apt-get install isal)")
    so = os.path.abspath(a.so)
    tmp = tempfile.mkdtemp(prefix="profsum-floor-")
    env1 = dict(os.environ)
    env0 = dict(os.environ, PROFSUM_THREADS="0")
    cmds = {
        "igzip": lambda f: run("igzip -dc '%s' > /dev/null" % f, shell=True),
        "gzip": lambda f: run("gzip -dc '%s' > /dev/null" % f, shell=True),
        "scan": lambda f: run(["sqlite3", ":memory:", "-cmd", ".load " + so,
                               "SELECT count(*) FROM trace_events('%s')" % f], env1),
        "scan4": lambda f: run(["sqlite3", ":memory:", "-cmd", ".load " + so, SCAN4 % f], env1),
    }

    def imp(f, env):
        db = os.path.join(tmp, "i.db")
        for s in ("", "-wal", "-shm"):
            if os.path.exists(db + s):
                os.remove(db + s)
        return run(["sqlite3", db, "-cmd", ".load " + so,
                    "SELECT profsum_import('%s','bench'); SELECT length(profsum_summary_json('bench'));" % f], env)
    cmds["import"] = lambda f: imp(f, env1)
    if a.threads0:
        cmds["import_t0"] = lambda f: imp(f, env0)
    # (yes itself, not a shell around it: terminate() must reach it)
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(a.busy)]
    best = {f: {k: None for k in cmds} for f in a.traces}
    out4 = {}
    try:
        for _ in range(a.rounds):
            for f in a.traces:
                for k, c in cmds.items():
                    dt, o = c(f)
                    if k == "scan4":
                        out4[f] = o.decode().strip()
                    b = best[f][k]
                    best[f][k] = dt if b is None else min(b, dt)
    finally:
        for p in busy:
            p.terminate()
            p.wait()
    names = list(cmds)
    hdr = "| trace | MB | " + " | ".join("%s s" % k for k in names) + " | " + \
          " | ".join("%s / igzip" % k for k in names[2:]) + " | " + \
          " | ".join("%s / gzip" % k for k in names[2:]) + " |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    rows = []
    for f in a.traces:
        mb = int(subprocess.run("igzip -dc '%s' | wc -c" % f, shell=True, stdout=subprocess.PIPE).stdout) / 1e6
        b = best[f]
        print("| %s | %.1f | %s | %s | %s |" % (
            os.path.basename(f), mb, " | ".join("%.3f" % b[k] for k in names),
            " | ".join("%.2f" % (b[k] / b["igzip"]) for k in names[2:]),
            " | ".join("%.2f" % (b[k] / b["gzip"]) for k in names[2:])))
        rows.append({"trace": f, "mb": mb, "best_s": b, "scan4_result": out4.get(f)})
    print()
    print("best of %d rounds; load average after: %s; busy processes: %d" % (
        a.rounds, open("/proc/loadavg").read().split()[:3], a.busy))
    if a.json:
        with open(a.json, "w") as fo:
            json.dump({"rounds": a.rounds, "busy": a.busy, "results": rows}, fo, indent=2)
            fo.write("\n")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
