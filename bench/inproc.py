#!/usr/bin/python3
"""bench/inproc.py - the import measured inside a running connection.

    inproc.py SO EMPTY_TRACE TRACE RUNS TMPDIR    (one line of JSON on stdout)
    inproc.py --probe SO                          (exit 0 when this Python can
                                                   load SQLite extensions)

bench/run.sh times `sqlite3 NEW.db ... profsum_import(...)` as a command: a
new process, a new database file and its schema, then the import.  That is
what a shell user pays once per command; it is not what each import costs a
notebook, a Datasette plugin or a script that keeps its connection, where
the process, the extension and profsum's schema are there already.  This
program measures that second case, in a process of its own per call (so
that every call starts alike):

  1. open a new database file in TMPDIR, load the extension and import the
     empty trace: the schema exists and the connection has read it, as in
     any connection that imported before;
  2. reset the process's peak RSS (Linux: "5" written to
     /proc/self/clear_refs) and read its RSS;
  3. RUNS times (at least 1): profsum_import(TRACE, 'runK') then
     length(profsum_summary_json('runK')), timed together with
     time.perf_counter() (the same two calls as the command-line figure);
  4. the peak RSS during the first run (import and summary), less the RSS
     before it: the memory the first import of this trace in this process
     needed, code pages it touched for the first time included.  Later
     runs reuse what the first one left in the allocator, so only the
     first one is counted;
  5. then RUNS times the plain scan, SELECT count(*) FROM trace_events(TRACE),
     each timed alone: the scan's cost without the process start, the
     extension load and the shell that bench/run.sh's command-line figure
     includes (its first run follows the imports, so its memory is warm
     too).

The first run and the later ones differ: the first takes fresh memory
pages from the kernel for everything it allocates (about 11 us each on the
virtual machines this was written on) and runs some of profsum's code for
the first time; a later one finds that memory in the allocator already.
Both cases are real (a notebook's first import of a large trace, and its
next ones), so bench/run.sh reports them apart: the first run of each
process, and the best of the later ones.

Output: {"times_s": [first, second, ...], "peak_above_kb": int or null,
"rss_before_kb": int, "summary_chars": int, "num_complete_events": int,
"scan_times_s": [...], "scan_rows": int}.
Standard library only; Debian's /usr/bin/python3 (its sqlite3 module loads
extensions).
"""
import json
import os
import sqlite3
import sys
import time


def status_kb():
    """VmRSS and VmHWM of this process, in KB (Linux), or {} elsewhere."""
    out = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(val.split()[0])
    except OSError:
        pass
    return out


def reset_peak():
    """Set the peak RSS to the current RSS; False when the kernel cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def connect(path, so):
    con = sqlite3.connect(path, isolation_level=None)   # profsum_import runs its own transaction
    con.enable_load_extension(True)
    con.load_extension(so)
    con.enable_load_extension(False)
    return con


def main(argv):
    if len(argv) == 3 and argv[1] == "--probe":
        con = connect(":memory:", argv[2])
        con.execute("SELECT profsum_version()").fetchone()
        return 0
    if len(argv) != 6:
        sys.stderr.write(__doc__)
        return 2
    so, empty, trace, runs, tmpdir = argv[1], argv[2], argv[3], int(argv[4]), argv[5]
    if runs < 1:
        sys.stderr.write("inproc.py: RUNS must be at least 1\n")
        return 2
    db = os.path.join(tmpdir, "inproc-%d.db" % os.getpid())
    con = None
    try:
        con = connect(db, so)       # creates the file: removed below whatever happens
        con.execute("SELECT profsum_import(?, 'schema')", (empty,)).fetchone()
        can_peak = reset_peak()
        rss0 = status_kb().get("VmRSS", 0)
        times, peak, chars = [], None, 0
        for k in range(runs):
            label = "run%d" % k
            t0 = time.perf_counter()
            con.execute("SELECT profsum_import(?, ?)", (trace, label)).fetchone()
            chars = con.execute("SELECT length(profsum_summary_json(?))", (label,)).fetchone()[0]
            times.append(time.perf_counter() - t0)
            if k == 0 and can_peak:
                hwm = status_kb().get("VmHWM")
                peak = hwm - rss0 if hwm else None
            if not chars:
                sys.stderr.write("inproc.py: empty summary for %s\n" % trace)
                return 1
        ncomplete = con.execute("SELECT num_complete_events FROM profsum_trace WHERE label='run0'").fetchone()[0]
        scan_times, scan_rows = [], None
        for k in range(runs):
            t0 = time.perf_counter()
            n = con.execute("SELECT count(*) FROM trace_events(?)", (trace,)).fetchone()[0]
            scan_times.append(time.perf_counter() - t0)
            if scan_rows is not None and n != scan_rows:
                sys.stderr.write("inproc.py: count(*) gave %d, then %d, for %s\n" % (scan_rows, n, trace))
                return 1
            scan_rows = n
    finally:
        if con is not None:
            con.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(db + suffix)
            except FileNotFoundError:
                pass
    print(json.dumps({"times_s": times, "peak_above_kb": peak, "rss_before_kb": rss0,
                      "summary_chars": chars, "num_complete_events": ncomplete,
                      "scan_times_s": scan_times, "scan_rows": scan_rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
