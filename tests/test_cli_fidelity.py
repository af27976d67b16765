"""CLI fidelity to the reference tool (summary-v1-tools-spec.md §1, §4-§6):
paths as argparse type=Path gives them (str(pathlib.Path(arg))), track
--top-k, report/bundle leniency for v1 files written elsewhere, bundle
errors, Python float() thresholds and negative --top-k slicing.  Expected
values are computed here the way the reference computes them (pathlib,
format(), list slicing).  PROFSUM_CLI / PROFSUM_SO select the binaries."""
import json
import os
import pathlib
import subprocess
import unittest

import fixtures
from util import connect, TempDir, ROOT

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))

F1_BEFORE = fixtures.f1([100, 110, 120, 130, 140, 150], 60)
F1_AFTER = fixtures.f1([90, 100, 110, 120, 130, 140], 40)


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def py_path(s):
    """What the reference prints for an argparse type=Path argument."""
    return str(pathlib.Path(s))


class Base(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.env = dict(os.environ)
        self.env.pop("LD_PRELOAD", None)
        self.env["TMPDIR"] = self.td.path
        self.env["PROFSUM_NO_PROGRESS"] = "1"

    def tearDown(self):
        self.td.__exit__()

    def run_cli(self, *args, rc=0):
        p = subprocess.run([CLI] + list(args), cwd=self.td.path, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        out, err = p.stdout.decode(), p.stderr.decode()
        if rc is not None:
            self.assertEqual(p.returncode, rc, "profsum %s\nstdout: %s\nstderr: %s"
                             % (" ".join(args), out[:2000], err))
        return out, err

    def write(self, name, obj):
        path = os.path.join(self.td.path, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return name

    def summary_file(self, name, trace, **knobs):
        """A v1 summary written by profsum summarize (relative name)."""
        t = self.write(name + ".trace.json", trace)
        out, _ = self.run_cli("summarize", "--trace-file", t, "--output", name)
        self.assertEqual(out, name + "\n")
        return name

    def read_json(self, name):
        with open(os.path.join(self.td.path, name)) as f:
            return json.load(f)


class PathsAsPython(Base):
    """#7: argparse type=Path arguments are str(Path(arg)) in the CLI."""

    def test_summarize_source_path(self):
        self.write("before.json", F1_BEFORE)
        for arg in ["./before.json", ".//before.json", "before.json"]:
            out, _ = self.run_cli("summarize", "--trace-file", arg)
            self.assertEqual(json.loads(out)["source_path"], py_path(arg), arg)
        sub = self.write("sub/t.json", F1_BEFORE)
        out, _ = self.run_cli("summarize", "--trace-file", "./sub//./t.json")
        self.assertEqual(json.loads(out)["source_path"], py_path("./sub//./t.json"))
        self.assertEqual(py_path("./sub//./t.json"), sub)

    def test_sql_import_keeps_the_path(self):
        # summary-v1-spec §3.1: profsum_import from SQL keeps source_path as passed
        with TempDir() as td:
            p = os.path.join(td.path, "t.json")
            with open(p, "w") as f:
                json.dump(F1_BEFORE, f)
            weird = td.path + "/./t.json"
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (weird,))
            got = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
            self.assertEqual(got["source_path"], weird)
            db.close()

    def test_history_path(self):
        self.write("h10.jsonl", "")
        for arg in ["./h10.jsonl", "h10.jsonl", "./missing//h.jsonl"]:
            out, _ = self.run_cli("history", "--history", arg)
            self.assertEqual(json.loads(out)["history_path"], py_path(arg), arg)

    def test_output_echo(self):
        self.write("t.json", F1_BEFORE)
        out, _ = self.run_cli("report", "--summary", "t.json", "--output", "./out//r.md")
        self.assertEqual(out, py_path("./out//r.md") + "\n")
        self.assertTrue(os.path.exists(os.path.join(self.td.path, "out", "r.md")))
        out, _ = self.run_cli("summarize", "--trace-file", "t.json", "--output", "./o/./s.json/")
        self.assertEqual(out, py_path("./o/./s.json/") + "\n")
        self.assertEqual(self.read_json("o/s.json")["source_path"], "t.json")

    def test_same_source_path_rule(self):
        # provenance rule 2 fires for ./a.json vs a.json (the same file)
        self.write("a.json", F1_BEFORE)
        out, _ = self.run_cli("compare", "--before", "./a.json", "--after", "a.json")
        cmp = json.loads(out)
        self.assertEqual(cmp["before_source"], py_path("./a.json"))
        self.assertEqual(cmp["after_source"], "a.json")
        self.assertIn("Before and after summaries have the same source_path.",
                      cmp["provenance_checks"]["messages"])


if __name__ == "__main__":
    unittest.main()
