"""Runs every SQL snippet of docs/cookbook.md on the example trace and checks
that the output shown under it is what profsum prints now.

  /usr/bin/python3 tests/test_cookbook.py --write   # refresh the outputs
"""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import connect, TempDir, ROOT  # noqa: E402

COOKBOOK = os.path.join(ROOT, "docs", "cookbook.md")
# (a query never spans a fence: a ```sql block without output, as in the
# XPlane section, is not run)
BLOCK = re.compile(r"```sql\n((?:(?!```).)*?)```\n\n```text\n(.*?)```", re.S)


def make_demo(td):
    """The example trace of the cookbook (deterministic generator)."""
    path = os.path.join(td.path, "demo-host.trace.json.gz")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "2M",
                    "--shape", "tpu", "--devices", "2", "--out", path],
                   check=True, stdout=subprocess.DEVNULL)
    return path


def render(cur):
    """Rows as text: a header line, then one line per row, ' | '-separated."""
    names = [d[0] for d in cur.description]
    lines = [" | ".join(names)]
    for row in cur.fetchall():
        lines.append(" | ".join("NULL" if v is None else str(v) for v in row))
    return "\n".join(lines) + "\n"


def run_all(text, trace):
    with TempDir() as td:
        db = connect(os.path.join(td.path, "cook.db"))
        db.execute("SELECT profsum_import(?, 'demo')", (trace,))
        out = []
        for m in BLOCK.finditer(text):
            cur = db.execute(m.group(1), {"trace": trace})
            out.append((m, render(cur)))
        db.close()
        return out


class Cookbook(unittest.TestCase):
    def test_every_query_runs_and_matches(self):
        text = open(COOKBOOK).read()
        with TempDir() as td:
            trace = make_demo(td)
            results = run_all(text, trace)
        self.assertGreaterEqual(len(results), 15)
        for m, got in results:
            with self.subTest(sql=m.group(1).splitlines()[0]):
                self.assertEqual(m.group(2), got)


def write():
    text = open(COOKBOOK).read()
    with TempDir() as td:
        trace = make_demo(td)
        results = run_all(text, trace)
    pieces, last = [], 0
    for m, got in results:
        pieces.append(text[last:m.start(2)])
        pieces.append(got)
        last = m.end(2)
    pieces.append(text[last:])
    open(COOKBOOK, "w").write("".join(pieces))


if __name__ == "__main__":
    if "--write" in sys.argv:
        write()
    else:
        unittest.main()
