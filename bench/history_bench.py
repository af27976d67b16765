#!/usr/bin/python3
"""history_bench.py - a database that keeps many runs, and what its views cost.

Builds a .db of N runs (default 10,000) of a few series, then times every
view that has a label column for one label, the series-wide views for one
series, and a cross-run query of one op by name; prints each with its
EXPLAIN QUERY PLAN, the rows it returns and the .db size per run.

How the runs are made: K small xprof-shaped traces (bench/gen_trace.py,
one device, one layer: about 1 MB of JSON and 17 steps each, different
seeds) are imported for real (profsum_import, with a series each); the
other N - K runs are copies of their stored rows under new trace ids,
labels and import times (every table with a trace_id column, copied with
INSERT ... SELECT): the .db then holds what N imports of those traces would
have written, in seconds instead of minutes.  --imports N makes every run a
real import instead.  The stored ranks of profsum_op_growth
(profsum_agg_op_growth, a pair of runs each) are not copied: a copy makes
new pairs, and the copies fall before the real imports in time; they are
written once the copies are in by profsum_op_growth_store(), the function
the import calls for its own pair, for every pair of the database.

The regression history is made the same way: profsum_track runs for real
on the first --tracks pairs of consecutive runs of a series, and every
other run with a previous run in its series gets a copy of one of those
records (record label = the later run's label, its trace ids and series;
the label inside record_json rewritten to match), so profsum_history and
profsum_history_summary are timed at the same scale.

--db PATH --reuse keeps a database an earlier run built (same --runs):
its profsum objects are brought to this build (profsum_history_import of
an empty file upgrades the schema) and only what it lacks is added (the
stored ranks of a database made before them included).

Usage:
  /usr/bin/python3 bench/history_bench.py [--runs 10000] [--series 4]
      [--traces 8] [--tracks 8] [--db PATH [--reuse]] [--so ./profsum.so]
      [--repeat 5] [--json OUT.json] [--imports] [--plans]
Must run with Debian's /usr/bin/python3 (its sqlite3 can load extensions).
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def connect(path, so):
    db = sqlite3.connect(path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(so)
    db.enable_load_extension(False)
    return db


def make_traces(tmp, k):
    out = []
    for i in range(k):
        p = os.path.join(tmp, "run%d.json.gz" % i)
        subprocess.run([sys.executable, os.path.join(HERE, "gen_trace.py"), "--size", "1M", "--layers", "1",
                        "--variants", "2", "--devices", "1", "--seed", str(i + 1), "--out", p],
                       check=True, stdout=subprocess.DEVNULL)
        out.append(p)
    return out


def trace_tables(db):
    """Tables (not views, not virtual tables) with a trace_id column,
    profsum_trace and the stored ranks of pairs excluded."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type='table' "
                                      "AND name LIKE 'profsum_%' AND name <> 'profsum_trace' "
                                      "AND name <> 'profsum_agg_op_growth' "
                                      "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'")]
    out = []
    for n in names:
        cols = [r[1] for r in db.execute("SELECT * FROM pragma_table_info(?)", (n,))]
        if "trace_id" in cols:
            out.append((n, cols))
    return out


def build(db, traces, runs, series, real):
    t0 = time.perf_counter()
    k = len(traces)
    n_real = runs if real else k
    for i in range(n_real):
        db.execute("SELECT profsum_import(?, ?, ?)", (traces[i % k], "run-%05d" % i,
                                                     json.dumps({"series": "s%d" % (i % series)})))
    t_import = time.perf_counter() - t0
    if n_real < runs:
        cols_t = [r[1] for r in db.execute("SELECT * FROM pragma_table_info('profsum_trace')")]
        tabs = trace_tables(db)
        src = [r[0] for r in db.execute("SELECT trace_id FROM profsum_trace ORDER BY trace_id")]
        db.execute("BEGIN")
        for i in range(n_real, runs):
            s = src[i % k]
            sel = ", ".join({"label": "?1", "series": "?2",
                             "imported_at": "strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', ?3 || ' seconds')"}
                            .get(c, c) for c in cols_t if c != "trace_id")
            cur = db.execute("INSERT INTO profsum_trace(%s) SELECT %s FROM profsum_trace WHERE trace_id = ?4"
                             % (", ".join(c for c in cols_t if c != "trace_id"), sel),
                             ("run-%05d" % i, "s%d" % (i % series), i, s))
            new = cur.lastrowid
            for name, cols in tabs:
                other = [c for c in cols if c != "trace_id"]
                db.execute("INSERT INTO %s(trace_id, %s) SELECT ?, %s FROM %s WHERE trace_id = ?"
                           % (name, ", ".join(other), ", ".join(other), name), (new, s))
        db.execute("COMMIT")
        store_ranks(db)
    return t_import, time.perf_counter() - t0


def store_ranks(db):
    """The stored ranks of profsum_op_growth for every pair (as each import
    writes its own pair); seconds taken."""
    t = time.perf_counter()
    db.execute("SELECT profsum_op_growth_store()").fetchone()
    return time.perf_counter() - t


def add_records(db, n_real):
    """The history records (see the module's doc): n_real made by
    profsum_track, the rest copied from them.  Returns (real, copied)."""
    pairs = db.execute("SELECT prev, trace_id, label, series FROM (SELECT trace_id, label, series, "
                       "lag(trace_id) OVER (PARTITION BY series ORDER BY imported_at, trace_id) AS prev "
                       "FROM profsum_trace WHERE series IS NOT NULL) WHERE prev IS NOT NULL "
                       "ORDER BY trace_id").fetchall()
    real = pairs[:n_real]
    for b, a, label, _ in real:
        db.execute("SELECT profsum_track(?, ?, ?)", (b, a, label)).fetchone()
    tmpl = db.execute("SELECT created_at, status, record_json FROM profsum_history_record "
                      "ORDER BY record_id").fetchall()
    db.execute("BEGIN")
    for i, (b, a, label, series) in enumerate(pairs[n_real:]):
        created, status, rj = tmpl[i % len(tmpl)]
        rec = json.loads(rj)
        rec["label"] = label
        db.execute("INSERT INTO profsum_history_record(created_at, label, status, before_trace_id, after_trace_id, "
                   "series, origin, record_json) VALUES(?, ?, ?, ?, ?, ?, 'track', ?)",
                   (created, label, status, b, a, series, json.dumps(rec, sort_keys=True)))
    db.execute("COMMIT")
    return len(real), len(pairs) - len(real)


def best(db, sql, args, repeat):
    b = None
    n = 0
    for _ in range(repeat):
        t = time.perf_counter()
        n = len(db.execute(sql, args).fetchall())
        dt = time.perf_counter() - t
        b = dt if b is None else min(b, dt)
    return b, n


def plan(db, sql, args):
    return [r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql, args)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--series", type=int, default=4)
    ap.add_argument("--traces", type=int, default=8)
    ap.add_argument("--tracks", type=int, default=8, help="records made by profsum_track (the rest copied)")
    ap.add_argument("--db")
    ap.add_argument("--reuse", action="store_true", help="keep the --db an earlier run built")
    ap.add_argument("--so", default=os.path.join(ROOT, "profsum.so"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--imports", action="store_true", help="every run a real import")
    ap.add_argument("--plans", action="store_true", help="print every query plan")
    a = ap.parse_args()
    if not os.path.isfile(a.so):
        ap.error("the extension %s does not exist: build it with `make`, "
                 "or give its path with --so" % a.so)
    tmp = tempfile.mkdtemp(prefix="profsum-history-")
    path = a.db or os.path.join(tmp, "history.db")
    reuse = False
    if a.reuse and a.db and os.path.exists(path):
        db = connect(path, a.so)
        reuse = db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0] == a.runs
        if reuse:
            empty = os.path.join(tmp, "empty.jsonl")
            open(empty, "w").close()
            db.execute("SELECT profsum_history_import(?)", (empty,)).fetchone()
            t_import = t_build = 0.0
            if not db.execute("SELECT 1 FROM profsum_agg_op_growth LIMIT 1").fetchone():
                print("stored ranks of profsum_op_growth written (a database made before them): %.1f s"
                      % store_ranks(db))
        else:
            db.close()
    if not reuse:
        if os.path.exists(path):
            os.remove(path)
        traces = make_traces(tmp, a.traces)
        db = connect(path, a.so)
        t_import, t_build = build(db, traces, a.runs, a.series, a.imports)
    t0 = time.perf_counter()
    n_rec = db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0]
    if n_rec == 0:
        add_records(db, a.tracks)
        n_rec = db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0]
    t_records = time.perf_counter() - t0
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("ANALYZE") if os.environ.get("HISTORY_ANALYZE") else None
    size = os.path.getsize(path)
    n = db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0]
    ranks = db.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'profsum_agg_op_growth'").fetchone()[0] \
        if db.execute("SELECT 1 FROM pragma_module_list WHERE name = 'dbstat'").fetchone() else None
    last = "run-%05d" % (a.runs - 1)
    op = db.execute("SELECT name FROM profsum_agg_op WHERE trace_id = (SELECT max(trace_id) FROM profsum_trace "
                    "WHERE series = 's1') ORDER BY exclusive_duration DESC LIMIT 1").fetchone()[0]
    views = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type='view' AND name LIKE 'profsum_%' "
                                      "ORDER BY name")]
    queries = []
    for v in views:
        cols = [r[1] for r in db.execute("SELECT * FROM pragma_table_info(?)", (v,))]
        if "label" in cols:
            queries.append(("%s, one label" % v, "SELECT * FROM %s WHERE label = ?" % v, (last,)))
    queries += [
        ("profsum_trend, one series", "SELECT * FROM profsum_trend WHERE series = ?", ("s1",)),
        ("profsum_trend, last 10 runs of a series",
         "SELECT * FROM profsum_trend WHERE series = ? AND runs_back <= 10", ("s1",)),
        ("profsum_op_growth, last 5 pairs of a series",
         "SELECT * FROM profsum_op_growth WHERE series = ? AND runs_back <= 5", ("s1",)),
        ("profsum_op_growth, one op over a series",
         "SELECT * FROM profsum_op_growth WHERE series = ? AND name = ?", ("s1", op)),
        ("profsum_history, one series", "SELECT * FROM profsum_history WHERE series = ?", ("s1",)),
        ("profsum_history_summary, the whole history",
         "SELECT * FROM profsum_history_summary WHERE scope = 'all'", ()),
        ("one op across all runs (profsum_agg_op by name)",
         "SELECT t.label, o.exclusive_duration FROM profsum_agg_op AS o JOIN profsum_trace AS t USING (trace_id) "
         "WHERE o.name = ?", (op,)),
    ]
    res = []
    for name, sql, args in queries:
        try:
            t, rows = best(db, sql, args, a.repeat)
            p = plan(db, sql, args)
        except sqlite3.Error as e:
            t, rows, p = None, 0, ["error: %s" % e]
        res.append({"query": name, "sql": sql, "args": list(args), "ms": None if t is None else t * 1e3,
                    "rows": rows, "plan": p})
    if reuse:
        print("runs %d (the database of an earlier run, reused), series %d, history records %d, "
              ".db %.1f MB, %.1f KB per run" % (n, a.series, n_rec, size / 1e6, size / 1024 / n), end="")
    else:
        print("runs %d (real imports %d, %.1f s; database built in %.1f s), series %d, history records %d "
              "(%.1f s), .db %.1f MB, %.1f KB per run"
              % (n, a.runs if a.imports else a.traces, t_import, t_build, a.series, n_rec, t_records,
                 size / 1e6, size / 1024 / n), end="")
    print("" if ranks is None else " (stored op growth ranks: %.1f KB per run)" % (ranks / 1024 / n))
    print()
    print("| query | rows | ms (best of %d) | µs per row |" % a.repeat)
    print("|---|---|---|---|")
    for r in res:
        print("| %s | %d | %s | %s |" % (r["query"], r["rows"], "–" if r["ms"] is None else "%.2f" % r["ms"],
                                         "–" if not r["rows"] or r["ms"] is None else "%.1f" % (r["ms"] * 1e3 / r["rows"])))
    if a.plans:
        for r in res:
            print()
            print("%s: `%s`" % (r["query"], r["sql"]))
            for line in r["plan"]:
                print("    " + line)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": n, "series": a.series, "records": n_rec, "db_bytes": size, "bytes_per_run": size / n,
                       "op_growth_rank_bytes": ranks,
                       "import_s": t_import, "build_s": t_build, "results": res}, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
