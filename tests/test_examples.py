"""The examples and the SQL of the docs still work: the Datasette canned
queries (run through sqlite-utils when it is installed, and through Python's
sqlite3 always), the Datasette metadata (up to date with profsum_catalog, its
plugin for any database name), examples/notebook.py, examples/sqlite_utils.sh, and every
```sql block of README.md, docs/summary.md and docs/agents.md on a real
trace (placeholder paths replaced)."""
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

import fixtures
from util import connect, TempDir, ROOT, SO

DEMO_REL = "examples/demo_profile/plugins/profile/2026_01_01_00_00_00/demo-host.trace.json.gz"


def demo_trace(td):
    """The demo trace of `make demo`, generated in a temp dir."""
    path = os.path.join(td.path, "demo-host.trace.json.gz")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "2M", "--shape",
                        "tpu", "--devices", "2", "--out", path], check=True, stdout=subprocess.DEVNULL)
    return path


DS_DIR = os.path.join(ROOT, "examples", "datasette")


def load_module(name, path):
    """Import the Python file at path as module name."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Datasette(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(DS_DIR, "metadata.json"), encoding="utf-8") as f:
            self.meta = json.load(f)
        self.queries = self.meta["databases"]["profiles"]["queries"]

    def test_canned_queries(self):
        with TempDir() as td:
            trace = demo_trace(td)
            small = td.write("small.trace.json.gz", fixtures.f1([100, 110, 120, 130], 50), gz=True)
            dbp = os.path.join(td.path, "profiles.db")
            db = connect(dbp)
            db.execute("SELECT profsum_import(?, 'demo')", (trace,))
            db.execute("SELECT profsum_import(?, 'small')", (small,))
            db.execute("SELECT profsum_track('small', 'demo', 'demo')")
            db.commit()
            params = {"label": "demo", "op": "copy.483"}
            self.assertGreaterEqual(len(self.queries), 10)
            for name, q in self.queries.items():
                with self.subTest(query=name):
                    rows = db.execute(q["sql"], params).fetchall()
                    self.assertTrue(rows or name == "gap_before_op", name)
            db.close()
            su = shutil.which("sqlite-utils")
            if su is None:
                self.skipTest("sqlite-utils is not installed (apt-get install sqlite-utils)")
            for name, q in self.queries.items():
                with self.subTest(tool="sqlite-utils", query=name):
                    args = [su, "query", dbp, "--load-extension", SO, q["sql"]]
                    for k, v in params.items():
                        if ":" + k in q["sql"]:
                            args += ["-p", k, v]
                    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
                    self.assertIsInstance(json.loads(out), list)

    def test_metadata_matches_catalog(self):
        """metadata.json is what generate.py makes from this build's
        profsum_catalog (regenerate: /usr/bin/python3 examples/datasette/generate.py)."""
        gen = load_module("profsum_ds_generate", os.path.join(DS_DIR, "generate.py"))
        self.assertEqual(self.meta, gen.build(gen.catalog(SO)),
                         "examples/datasette/metadata.json is out of date: /usr/bin/python3 "
                         "examples/datasette/generate.py")
        with open(os.path.join(DS_DIR, "metadata.json"), encoding="utf-8") as f:
            self.assertEqual(f.read(), gen.render(self.meta))
        r = subprocess.run(["/usr/bin/python3", os.path.join(DS_DIR, "generate.py"), "--check"],
                           env=dict(os.environ, PROFSUM_SO=SO), capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with TempDir() as td:
            other = os.path.join(td.path, "runs.json")
            subprocess.run(["/usr/bin/python3", os.path.join(DS_DIR, "generate.py"), "--db", "runs", "-o", other],
                           env=dict(os.environ, PROFSUM_SO=SO), check=True)
            with open(other, encoding="utf-8") as f:
                self.assertEqual(json.load(f)["databases"], {"runs": self.meta["databases"]["profiles"]})
            stale = os.path.join(td.path, "stale.json")
            with open(stale, "w") as f:
                f.write("{}")
            r = subprocess.run(["/usr/bin/python3", os.path.join(DS_DIR, "generate.py"), "--check", "-o", stale],
                               env=dict(os.environ, PROFSUM_SO=SO), capture_output=True, text=True)
            self.assertEqual(r.returncode, 1)
            self.assertIn("out of date", r.stderr)

    def test_every_column_described(self):
        tables = self.meta["databases"]["profiles"]["tables"]
        self.assertNotIn("tables", self.meta)           # Datasette has no top-level "tables"
        db = connect()
        views = [r[0] for r in db.execute("SELECT object FROM profsum_catalog WHERE kind = 'view' AND position = 0")]
        self.assertGreaterEqual(len(views), 20)
        for v in views:
            with self.subTest(view=v):
                cols = [r[0] for r in db.execute("SELECT column_name FROM profsum_catalog WHERE object = ? "
                                                 "AND position > 0 ORDER BY position", (v,))]
                self.assertTrue(tables[v]["description"].startswith(v + ":"))
                self.assertEqual(list(tables[v]["columns"]), cols)
                self.assertTrue(all(tables[v]["columns"][c] for c in cols))
        db.close()
        units = {(t, c): u for t, m in tables.items() for c, u in m.get("units", {}).items()}
        for key, unit in [(("profsum_hot_ops", "exclusive_duration"), "microsecond"),
                          (("profsum_overview", "profile_start_ts"), "microsecond"),
                          (("profsum_compare_ops", "delta"), "microsecond"),
                          (("profsum_overview", "size_bytes"), "byte"),
                          (("profsum_history", "median_regression_pct"), "percent"),
                          (("profsum_trend", "median_change_pct"), "percent"),
                          (("profsum_agg_op", "exclusive_duration"), "microsecond"),
                          (("profsum_memory", "peak_bytes"), "byte"),
                          (("profsum_memory", "known_live_bytes_at_peak"), "byte"),
                          (("profsum_kernel_stats", "static_shared_bytes"), "byte"),
                          (("profsum_kernel_stats", "occupancy_pct"), "percent"),
                          (("profsum_roofline", "bytes_accessed"), "byte"),
                          (("profsum_compare_ops", "delta_pct"), "percent"),
                          (("profsum_op_growth", "growth_pct"), "percent"),
                          (("profsum_agg_host", "to_session_us"), "microsecond")]:
            self.assertEqual(units.get(key), unit, key)
        for key in [("profsum_hot_ops", "count"), ("profsum_breakdown", "share_of_total"),
                    ("profsum_families", "time_per_flop_proxy"), ("profsum_kpis", "value"),
                    ("profsum_agg_fact", "value"), ("profsum_agg_device", "n_small_ops")]:
            self.assertNotIn(key, units)
        self.assertEqual(set(units.values()), {"microsecond", "byte", "percent"})

    def test_plugin_serves_any_database(self):
        """plugins/profsum_metadata.py, driven with a stand-in Datasette: the
        0.x hooks give every database (not _internal) the tables and queries
        of metadata.json; on a 1.0 alpha the startup hook writes them."""
        import asyncio
        plugin = load_module("profsum_ds_plugin", os.path.join(DS_DIR, "plugins", "profsum_metadata.py"))
        block = self.meta["databases"]["profiles"]

        class Datasette0:
            databases = {"runs": None, "my-profiles": None, "_internal": None}
        ds = Datasette0()
        md = plugin.get_metadata(ds, None, "runs", None)
        self.assertEqual(set(md["databases"]), {"runs", "my-profiles"})
        self.assertEqual(md["databases"]["my-profiles"]["tables"], block["tables"])
        self.assertEqual(plugin.canned_queries(ds, "runs", None), block["queries"])
        self.assertEqual(plugin.canned_queries(ds, "_internal", None), {})
        self.assertIsNone(plugin.startup(ds))

        class Datasette1:
            databases = {"runs": None, "_internal": None}

            def __init__(self):
                self.calls = []

            async def set_resource_metadata(self, db, resource, key, value):
                self.calls.append(("resource", db, resource, key, value))

            async def set_column_metadata(self, db, resource, column, key, value):
                self.calls.append(("column", db, resource, column, key, value))

            async def add_query(self, db, name, sql, **kw):
                self.calls.append(("query", db, name, sql, kw["title"]))
        ds = Datasette1()
        asyncio.run(plugin.startup(ds)())
        n_cols = sum(len(t["columns"]) for t in block["tables"].values())
        kinds = [c[0] for c in ds.calls]
        self.assertEqual((kinds.count("resource"), kinds.count("column"), kinds.count("query")),
                         (len(block["tables"]), n_cols, len(block["queries"])))
        self.assertEqual({c[1] for c in ds.calls}, {"runs"})
        self.assertIn(("column", "runs", "profsum_hot_ops", "exclusive_duration", "description",
                       block["tables"]["profsum_hot_ops"]["columns"]["exclusive_duration"]), ds.calls)


class Scripts(unittest.TestCase):
    def test_notebook(self):
        with TempDir() as td:
            trace = demo_trace(td)
            out = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples", "notebook.py"), trace],
                                 check=True, capture_output=True, text=True, env=dict(os.environ, PROFSUM_SO=SO)).stdout
            self.assertIn("convolution.308", out)
            self.assertIn("device_utilization", out)

    def test_sqlite_utils_script(self):
        if shutil.which("sqlite-utils") is None:
            self.skipTest("sqlite-utils is not installed (apt-get install sqlite-utils)")
        if os.path.realpath(SO) != os.path.realpath(os.path.join(ROOT, "profsum.so")):
            self.skipTest("the script loads ./profsum.so")
        with TempDir() as td:
            trace = demo_trace(td)
            out = subprocess.run(["bash", os.path.join(ROOT, "examples", "sqlite_utils.sh"), trace],
                                 check=True, capture_output=True, text=True, cwd=ROOT).stdout
            self.assertIn("convolution.308", out)
            self.assertIn("device_utilization", out)


class DocSnippets(unittest.TestCase):
    """Every ```sql block of these documents runs (placeholders replaced)."""

    DOCS = ["README.md", "docs/summary.md", "docs/agents.md"]

    def test_snippets(self):
        with TempDir() as td:
            trace = demo_trace(td)
            art = os.path.join(td.path, "run1", "plugins", "profile", "2026_01_01_00_00_00")
            os.makedirs(art)
            shutil.copy(trace, os.path.join(art, "host.trace.json.gz"))
            subs = {
                "'run1/plugins/profile/2026_01_01_00_00_00/host.trace.json.gz'": repr(os.path.join(art, "host.trace.json.gz")),
                "'host.trace.json.gz'": repr(trace),
                "'t.trace.json.gz'": repr(trace),
                "'path/to/profile_dir'": repr(os.path.join(td.path, "run1")),
                "'run1'": repr(os.path.join(td.path, "run1")),
            }
            n = 0
            for doc in self.DOCS:
                text = open(os.path.join(ROOT, doc)).read()
                for block in re.findall(r"```sql\n(.*?)```", text, re.S):
                    db = connect(os.path.join(td.path, "snip%d.db" % n))
                    n += 1
                    sql = "\n".join(l for l in block.splitlines() if not l.startswith("."))
                    for k, v in subs.items():
                        sql = sql.replace(k, v)
                    with self.subTest(doc=doc, sql=sql.strip().splitlines()[0] if sql.strip() else ""):
                        # every snippet runs on a database that has a trace
                        db.execute("SELECT profsum_import(?, 'existing')", (trace,))
                        # the snippets refer to these labels
                        for label in ("baseline", "my-label", "run-7"):
                            if label in sql and "profsum_import" not in sql:
                                db.execute("SELECT profsum_import(?, ?)", (trace, label))
                        for stmt in [s for s in sqlite_statements(sql) if s.strip()]:
                            db.execute(stmt).fetchall()
                    db.close()
            self.assertGreaterEqual(n, 4)


def sqlite_statements(sql):
    """Split SQL text into complete statements."""
    import sqlite3
    out, cur = [], ""
    for line in sql.splitlines(keepends=True):
        cur += line
        if sqlite3.complete_statement(cur):
            out.append(cur)
            cur = ""
    if cur.strip():
        out.append(cur)
    return out


if __name__ == "__main__":
    unittest.main()
