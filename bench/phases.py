#!/usr/bin/python3
"""bench/phases.py - where an import's milliseconds go, phase by phase.

    make build/phases/profsum.so
    /usr/bin/python3 bench/phases.py build/phases/profsum.so [--runs N] TRACE...

The extension built with -DPROFSUM_PHASE_TIMES (ext/import.c) writes one
line per import to stderr with the milliseconds of each of its phases: the
options and the file's kind (pre), the parse with the inflate thread beside
it, BEGIN, the schema check, the label check and the trace row, the
aggregation and its rows (write), the quality warnings, the stored
sections (built, then written), the commit and the engine's memory given
back.  This program imports each TRACE RUNS times (default 30) into a new
database in TMPDIR, in one connection that imported an empty trace first
(schema present: the later imports of bench/inproc.py; then each --sql
statement runs, e.g. "PRAGMA synchronous=NORMAL"), times
profsum_summary_json of each import too, and prints a Markdown table: the
median of each phase per trace, then the sum of those medians, and the
import's and the summary's wall time (medians of the same runs; a sum of
medians is not the median of the sums, so the two may differ a little).  The first import of each
trace is left out (its memory is fresh from the kernel; bench/inproc.py
reports that case).

These are the figures of docs/performance.md's phase table.  Phase times
are wall clock in the calling thread; they are noisy on a shared machine:
compare medians of runs taken together.  Standard library only; Debian's
/usr/bin/python3 (its sqlite3 module loads extensions).
"""
import argparse
import gzip
import os
import sqlite3
import statistics
import sys
import tempfile
import time

PHASES = ["pre", "parse", "begin", "schema", "label", "write", "warnings",
          "sections-build", "sections-store", "commit", "free"]


def parse_line(line):
    """{phase: ms} of one 'profsum phases ms: name v name v ...' line."""
    words = line.split(":", 1)[1].split()
    return {words[i]: float(words[i + 1]) for i in range(0, len(words) - 1, 2)}


def run(so, trace, runs, tmp, setup=()):
    """Median phase times (ms) of the later imports of trace, with the
    import's and the summary's medians."""
    db_path = os.path.join(tmp, "phases.db")
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(db_path + suffix)
        except FileNotFoundError:
            pass
    empty = os.path.join(tmp, "empty.json.gz")
    with gzip.open(empty, "wt") as f:
        f.write('{"traceEvents":[]}')
    log = os.path.join(tmp, "phases.log")
    saved = os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    t_imp, t_sum = [], []
    try:
        db = sqlite3.connect(db_path, isolation_level=None)
        db.enable_load_extension(True)
        db.load_extension(so)
        db.execute("SELECT profsum_import(?, 'empty')", (empty,)).fetchall()
        for sql in setup:
            db.execute(sql).fetchall()
        for k in range(runs + 1):
            t0 = time.perf_counter()
            db.execute("SELECT profsum_import(?, ?)", (trace, "run%d" % k)).fetchall()
            t1 = time.perf_counter()
            db.execute("SELECT length(profsum_summary_json(?))", ("run%d" % k,)).fetchall()
            t2 = time.perf_counter()
            if k:
                t_imp.append((t1 - t0) * 1e3)
                t_sum.append((t2 - t1) * 1e3)
        db.close()
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    with open(log) as f:
        lines = [parse_line(l) for l in f if l.startswith("profsum phases ms:")]
    if len(lines) < runs + 1:
        sys.exit("phases.py: %d phase lines for %d imports: is %s built with "
                 "-DPROFSUM_PHASE_TIMES (make build/phases/profsum.so)?" % (len(lines), runs + 1, so))
    later = lines[-runs:]
    med = {p: statistics.median(l.get(p, 0.0) for l in later) for p in PHASES}
    return med, statistics.median(t_imp), statistics.median(t_sum)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("so")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--sql", action="append", default=[],
                    help="a statement run once in the connection before the timed imports, "
                         "e.g. 'PRAGMA synchronous=NORMAL' (repeatable)")
    a = ap.parse_args()
    if not os.path.isfile(a.so):
        ap.error("the extension %s does not exist: build it with `make`" % a.so)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    so = os.path.abspath(a.so)
    cols = []
    with tempfile.TemporaryDirectory(prefix="profsum-phases-") as tmp:
        for t in a.traces:
            cols.append((os.path.basename(t), run(so, os.path.abspath(t), a.runs, tmp, a.sql)))
    print("| phase (median ms of %d later imports) | %s |" % (a.runs, " | ".join(c[0] for c in cols)))
    print("|---|%s" % ("---|" * len(cols)))
    for p in PHASES:
        print("| %s | %s |" % (p, " | ".join("%.2f" % c[1][0][p] for c in cols)))
    print("| sum of the medians | %s |" % " | ".join("%.2f" % sum(c[1][0].values()) for c in cols))
    print("| import, wall (Python's clock) | %s |" % " | ".join("%.2f" % c[1][1] for c in cols))
    print("| profsum_summary_json, wall | %s |" % " | ".join("%.2f" % c[1][2] for c in cols))


if __name__ == "__main__":
    main()
