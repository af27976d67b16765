#!/usr/bin/python3
"""alternate.py - time builds of profsum.so against each other on one file.

Each run is a fresh `sqlite3` process that loads one build and either
imports the file into a new database (`import`) or runs the scan users
write (`scan4`: count(*), total(ts), sum(dur_ps), count(name) of
trace_events).  The builds take turns, run after run, so that a host that
drifts (other guests, the page cache, memory the host backs lazily) moves
every build alike; compare the medians.

    bench/alternate.py import t1g.json.gz 10 old/profsum.so ./profsum.so
    bench/alternate.py scan4 t1g.json.gz 7 old/profsum.so ./profsum.so

Prints one line per build: median, min and max in ms, and the ratio of the
first build's median to each build's (>1: faster than the first), then the
median CPU time of its runs (user + system, all threads): on two cores an
import's time is bounded below by half its CPU, and a build that moves work
between threads shows there first.
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

SQL = {
    "import": "SELECT profsum_import(?1, 'x')",
    "scan4": "SELECT count(*), total(ts), sum(dur_ps), count(name) FROM trace_events(?1)",
}


def quote(s):
    """s as an SQL string literal."""
    return "'" + s.replace("'", "''") + "'"


def one_run(so, mode, path, tmp):
    """(wall, cpu) seconds of one fresh sqlite3 process doing mode on path
    with build so; cpu is its user + system time."""
    db = os.path.join(tmp, "alt.db")
    if os.path.exists(db):
        os.remove(db)
    sql = SQL[mode].replace("?1", quote(os.path.abspath(path)))
    load = ".load " + os.path.splitext(os.path.abspath(so))[0]
    u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(["sqlite3", db, load, sql], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    t1 = time.monotonic()
    u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("alternate.py: %s failed on %s: %s" % (so, path, r.stderr.strip()))
    cpu = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    return t1 - t0, cpu


def main(argv):
    if len(argv) < 5 or argv[1] not in SQL:
        sys.exit(__doc__)
    mode, path, n, builds = argv[1], argv[2], int(argv[3]), argv[4:]
    times = {b: [] for b in builds}
    cpus = {b: [] for b in builds}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(n):
            for b in builds:
                wall, cpu = one_run(b, mode, path, tmp)
                times[b].append(wall)
                cpus[b].append(cpu)
    first = statistics.median(times[builds[0]])
    for b in builds:
        v = sorted(times[b])
        med = statistics.median(v)
        print("%s: median %d ms, min %d, max %d (n=%d); %.2fx the first; CPU median %d ms" %
              (b, med * 1000, v[0] * 1000, v[-1] * 1000, len(v), first / med,
               statistics.median(cpus[b]) * 1000))


if __name__ == "__main__":
    main(sys.argv)
