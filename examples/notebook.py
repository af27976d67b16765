#!/usr/bin/python3
"""Notebook-style tour of profsum from Python and pandas.

    /usr/bin/python3 examples/notebook.py [TRACE]     # default: the demo trace of `make demo`

Debian's /usr/bin/python3 (its sqlite3 module can load extensions) and
python3-pandas (optional: plain rows are printed without it).
"""
import os
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
trace = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "examples/demo_profile/plugins/profile/2026_01_01_00_00_00/demo-host.trace.json.gz")

db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(os.environ.get("PROFSUM_SO", os.path.join(ROOT, "profsum.so")))

# %% import the trace and look at the summary views
db.execute("SELECT profsum_import(?, 'demo', '{\"warmup_steps\": 2}')", (trace,))
try:
    import pandas as pd

    def show(sql, *args):
        print(pd.read_sql_query(sql, db, params=args).to_string(index=False), end="\n\n")
except ImportError:
    def show(sql, *args):
        cur = db.execute(sql, args)
        print(" | ".join(d[0] for d in cur.description))
        for row in cur:
            print(" | ".join(str(v) for v in row))
        print()

# %% top ops by exclusive time
show("SELECT name, category, count, exclusive_duration FROM profsum_hot_ops WHERE label = ? ORDER BY rank LIMIT 10",
     "demo")
# %% where the time goes
show("SELECT category, total_duration, share_of_total FROM profsum_breakdown WHERE label = ? AND is_summary_mode",
     "demo")
# %% KPIs
show("SELECT kpi, device, value, unit, band FROM profsum_kpis WHERE label = ?", "demo")
# %% raw events: exclusive time per thread, straight from the file
show("SELECT thread_name, count(*) AS n, sum(excl_ps) / 1e6 AS excl_us FROM trace_events(?) "
     "WHERE ph = 'X' GROUP BY thread_name ORDER BY excl_us DESC LIMIT 8", trace)
