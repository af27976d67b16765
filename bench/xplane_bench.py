#!/usr/bin/python3
"""xplane_bench.py - XPlane against its JSON conversion, on the same capture.

    xplane_bench.py [--so profsum.so] [--runs 3] [--md] DIR/NAME.xplane.pb DIR/NAME.trace.json.gz ...

Arguments come in pairs: a capture written by bench/gen_xplane.py and its
JSON conversion (--json of the same run).  For each pair it measures, each
in a fresh process (so every run starts alike), best wall time of --runs:

  xplane scan      SELECT count(*), total(ts), sum(dur_ps), count(name)
                   FROM trace_events(F) on the .xplane.pb
  json scan        the same query on the JSON
  xplane import    profsum_import(F) then length(profsum_summary_json(id))
  json import      the same on the JSON
  igzip -dc        of the JSON to /dev/null (the floor of any JSON reader;
  gzip -dc         skipped when the command is missing)

and reports µs per event (events: the XPlane's rows, which the JSON has
too) and memory per event: (peak RssAnon - RssAnon after load) / events,
RssAnon from /proc/self/status sampled every millisecond by a thread while
the statement runs (the statement releases Python's lock).  Time and memory
come from different runs: the sampler takes 5-15 % of a core, which an
import that keeps both cores busy loses (measured: the 10 MB capture's
import about 10 % slower with it), so the --runs timed runs go without it
and one more run, the first, samples the memory.  "After load":
the extension loaded and a tiny trace imported into the database file, so
the schema and the connection's caches exist; the database is a file in a
temporary directory (its pages are the page cache's, not anonymous memory).

The targets (docs/performance.md, "The targets"): XPlane import + summary at most
half the JSON import of the same capture; at most 0.12 µs and 8 bytes of
anonymous memory per event.

One measurement by itself, in this process:

    xplane_bench.py --child import|scan SO FILE TMPDIR [1|0]

prints {seconds, anon_kb, rows}; with 0 the sampler does not run and
anon_kb is null.

Output: one JSON object per pair on stdout, and with --md the table rows.
Standard library only; Debian's /usr/bin/python3 (loads extensions).
"""
import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCAN = "SELECT count(*), total(ts), sum(dur_ps), count(name) FROM trace_events(?)"
TINY = '{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":1}]}'


def rss_anon_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    """The largest RssAnon seen while running."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = rss_anon_kb()
        self.stop = False

    def run(self):
        while not self.stop:
            v = rss_anon_kb()
            if v > self.peak:
                self.peak = v
            time.sleep(0.001)


def child(mode, so, path, tmp, sample="1"):
    """One measurement in this process: prints {seconds, anon_kb, rows};
    anon_kb is null unless sample is "1" (the sampler runs)."""
    dbp = os.path.join(tmp, "b.db")
    if os.path.exists(dbp):
        os.remove(dbp)
    db = sqlite3.connect(dbp)
    db.enable_load_extension(True)
    db.load_extension(so)
    tiny = os.path.join(tmp, "tiny.json")
    with open(tiny, "w") as f:
        f.write(TINY)
    db.execute("SELECT profsum_import(?, 'tiny')", (tiny,)).fetchall()
    base = rss_anon_kb()
    s = Sampler() if sample == "1" else None
    if s:
        s.start()
    t = time.perf_counter()
    if mode == "scan":
        rows = db.execute(SCAN, (path,)).fetchone()[0]
    else:
        db.execute("SELECT profsum_import(?, 'x')", (path,)).fetchall()
        n = db.execute("SELECT length(profsum_summary_json('x'))").fetchone()[0]
        rows = db.execute("SELECT num_events_total FROM profsum_trace WHERE label='x'").fetchone()[0]
        assert n > 0
    secs = time.perf_counter() - t
    anon = None
    if s:
        s.stop = True
        s.join()
        anon = max(s.peak, rss_anon_kb()) - base
    print(json.dumps({"seconds": secs, "anon_kb": anon, "rows": rows}))


def measure(mode, so, path, runs, tmp):
    """The memory of one sampled run (the first, its memory fresh from the
    kernel), then the best time of `runs` runs without the sampler."""
    def one(sample):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", mode, so, path, tmp,
                              sample], capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    mem = one("1")
    best = None
    for _ in range(runs):
        r = one("0")
        if best is None or r["seconds"] < best["seconds"]:
            best = r
    return {"seconds": best["seconds"], "anon_kb": mem["anon_kb"], "rows": best["rows"]}


def decompress(cmd, path, runs):
    exe = shutil.which(cmd)
    if not exe:
        return None
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        with open(os.devnull, "wb") as dn:
            subprocess.run([exe, "-dc", path], stdout=dn, check=True)
        s = time.perf_counter() - t
        best = s if best is None or s < best else best
    return best


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(*sys.argv[2:7])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--so", default=os.path.join(ROOT, "profsum.so"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--md", action="store_true", help="also print markdown table rows")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if not os.path.isfile(a.so):
        ap.error("the extension %s does not exist: build it with `make`, "
                 "or give its path with --so" % a.so)
    if len(a.files) % 2:
        ap.error("files come in pairs: XPLANE JSON")
    so = os.path.abspath(a.so)
    rows = []
    with tempfile.TemporaryDirectory(prefix="profsum-xbench-") as tmp:
        for i in range(0, len(a.files), 2):
            xp, js = a.files[i], a.files[i + 1]
            r = {"xplane": xp, "xplane_bytes": os.path.getsize(xp), "json": js,
                 "json_gz_bytes": os.path.getsize(js)}
            for name, mode, path in [("xplane_scan", "scan", xp), ("json_scan", "scan", js),
                                     ("xplane_import", "import", xp), ("json_import", "import", js)]:
                r[name] = measure(mode, so, path, a.runs, tmp)
            r["events"] = r["xplane_scan"]["rows"]
            r["igzip_dc"] = decompress("igzip", js, a.runs)
            r["gzip_dc"] = decompress("gzip", js, a.runs)
            ev = r["events"]
            r["ratio_import"] = r["xplane_import"]["seconds"] / r["json_import"]["seconds"]
            r["us_per_event"] = {k: r[k]["seconds"] * 1e6 / ev for k in
                                 ("xplane_scan", "json_scan", "xplane_import", "json_import")}
            r["anon_bytes_per_event"] = {k: r[k]["anon_kb"] * 1024.0 / ev for k in
                                         ("xplane_scan", "json_scan", "xplane_import", "json_import")}
            print(json.dumps(r))
            sys.stdout.flush()
            rows.append(r)
    if a.md:
        print("| capture | events | XPlane scan | JSON scan | XPlane import+summary | JSON import+summary "
              "| ratio | igzip -dc | gzip -dc | XPlane µs/event (scan, import) | XPlane B/event (scan, import) "
              "| JSON B/event (import) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            f = lambda s: "—" if s is None else "%.2f s" % s  # noqa: E731
            print("| %.0f MB (JSON %.0f MB gz) | %d | %s | %s | %s | %s | %.2f× | %s | %s | %.3f, %.3f | %.1f, %.1f | %.1f |" % (
                r["xplane_bytes"] / 1e6, r["json_gz_bytes"] / 1e6, r["events"],
                f(r["xplane_scan"]["seconds"]), f(r["json_scan"]["seconds"]),
                f(r["xplane_import"]["seconds"]), f(r["json_import"]["seconds"]), r["ratio_import"],
                f(r["igzip_dc"]), f(r["gzip_dc"]),
                r["us_per_event"]["xplane_scan"], r["us_per_event"]["xplane_import"],
                r["anon_bytes_per_event"]["xplane_scan"], r["anon_bytes_per_event"]["xplane_import"],
                r["anon_bytes_per_event"]["json_import"]))


if __name__ == "__main__":
    sys.exit(main())
