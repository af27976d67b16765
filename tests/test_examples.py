"""The examples and the SQL of the docs still work: the Datasette canned
queries (run through sqlite-utils when it is installed, and through Python's
sqlite3 always), examples/notebook.py, examples/sqlite_utils.sh, and every
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


class Datasette(unittest.TestCase):
    def setUp(self):
        meta = json.load(open(os.path.join(ROOT, "examples", "datasette", "metadata.json")))
        self.queries = meta["databases"]["profiles"]["queries"]

    def test_canned_queries(self):
        with TempDir() as td:
            trace = demo_trace(td)
            dbp = os.path.join(td.path, "profiles.db")
            db = connect(dbp)
            db.execute("SELECT profsum_import(?, 'demo')", (trace,))
            db.commit()
            params = {"label": "demo", "op": "copy.483"}
            self.assertGreaterEqual(len(self.queries), 8)
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
