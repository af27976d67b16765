"""The `profsum` command line's arguments and its edges (docs/cli.md,
"Conventions"): `sql` passing sqlite3's own options through, "--" and
option values that look like options, unique prefixes of long options,
the numeric rule (Python's int() and float()), ranges of the import knobs,
--history files that are not a JSONL history, `view --extract` into the log
directory, the messages of --output/--db/--summary/--where, and output that
cannot be written (a full device, a closed pipe)."""
import gzip
import json
import os
import pty
import select
import signal
import stat
import subprocess
import sys
import time
import unittest

import fixtures
import test_cli
from util import ROOT

CLI = test_cli.CLI
F1 = fixtures.f1([100, 110, 120, 130, 140, 150], 60)


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


class ArgsBase(test_cli.CliBase):
    def echo_shell(self):
        """A stand-in for the sqlite3 shell that prints its arguments, one a line."""
        p = os.path.join(self.td.path, "argv.sh")
        with open(p, "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
        os.chmod(p, 0o755)
        return dict(self.env, PROFSUM_SQLITE3=p)

    def logdir(self, name="run"):
        d = os.path.join(self.td.path, name, "plugins", "profile", "2026_01_01_00_00_00")
        os.makedirs(d)
        with gzip.open(os.path.join(d, "host0.trace.json.gz"), "wt") as f:
            json.dump(F1, f)
        return os.path.join(self.td.path, name)

    def listing(self):
        out = []
        for base, dirs, files in os.walk(self.td.path):
            for n in dirs + files:
                out.append(os.path.relpath(os.path.join(base, n), self.td.path))
        return sorted(out)


class SqlPassThrough(ArgsBase):
    def test_sqlite3_options_pass_through(self):
        env = self.echo_shell()
        out, err = self.run_cli("sql", "profiles.db", "-json", "select 1 as a", env=env)
        args = out.splitlines()
        self.assertEqual(args[0], "-cmd")
        self.assertTrue(args[1].startswith(".load '"), args)
        self.assertEqual(args[2:], ["profiles.db", "-json", "select 1 as a"])
        out, _ = self.run_cli("sql", "-readonly", "profiles.db", "select 1", "--bail", env=env)
        self.assertEqual(out.splitlines()[2:], ["-readonly", "profiles.db", "select 1", "--bail"])
        # more arguments than profsum's own commands take
        many = ["-cmd", ".mode list"] * 12 + ["x.db", "select 1"]
        out, _ = self.run_cli("sql", *many, env=env)
        self.assertEqual(out.splitlines()[2:], many)

    def test_dash_dash_ends_help(self):
        env = self.echo_shell()
        out, err = self.run_cli("sql", "x.db", "--", "-h", env=env)
        self.assertEqual(out.splitlines()[2:], ["x.db", "-h"])
        self.assertNotIn("usage:", out)
        out, _ = self.run_cli("sql", "--help", env=env)
        self.assertTrue(out.startswith("usage: profsum sql"), out)

    def test_real_shell(self):
        import shutil
        if shutil.which("sqlite3") is None:
            self.skipTest("no sqlite3 shell installed")
        out, err = self.run_cli("sql", "p.db", "-json", "select 1 as a")
        self.assertEqual(json.loads(out), [{"a": 1}])


class OptionValues(ArgsBase):
    def test_help_scan_stops_at_dash_dash(self):
        d = self.logdir("-h")
        out, err = self.run_cli("view", "--list", "--", "-h")
        self.assertTrue(out.startswith("session\thost\tformat"), out)
        self.assertNotIn("usage:", out)
        _, err = self.run_cli("view", "--list", "--", "-nothere", rc=1)
        self.assertIn("'-nothere': No such file or directory", err)

    def test_value_that_is_an_option(self):
        cases = [
            (["query", "--question", "-h"], "option '--question' expects a value (TEXT), and '-h' is an option"),
            (["query", "--question", "--list"], "option '--question' expects a value (TEXT), and '--list'"),
            (["report", "--summary", "--top-k", "5"], "option '--summary' expects a value (PATH), and '--top-k'"),
            (["report", "--summary", "x", "--top-k", "--kpis"], "option '--top-k' expects a value (N)"),
            (["compare", "--before", "a", "--after"], "option '--after' expects a value (PATH)"),
            (["track", "--before", "--", "--after", "b"], "option '--before' expects a value (PATH), and '--'"),
        ]
        for args, msg in cases:
            out, err = self.run_cli(*args, rc=2)
            self.assertIn(msg, err, args)
            self.assertEqual(out, "", args)

    def test_values_that_start_with_a_dash(self):
        s = self.trace("s.json", F1)
        # negative numbers, inf, -inf and text with a space are values
        _, err = self.run_cli("trim", "--trace-file", s, "--output", "o.json.gz", "--start-us", "-5",
                              "--end-us", "-1.5e3")
        _, err = self.run_cli("track", "--before", "missing-a", "--after", "missing-b",
                              "--max-step-median-regression-pct", "-inf", rc=1)
        self.assertIn("--before 'missing-a'", err)
        _, err = self.run_cli("query", "--summary", s, "--question", "-what are the top ops")
        _, err = self.run_cli("query", "--summary", "missing.json", "--question=-h", rc=1)
        self.assertIn("'missing.json': No such file or directory", err)
        _, err = self.run_cli("report", "--summary", s, "--top-k", "-3", rc=2)
        self.assertIn("must be a non-negative integer", err)

    def test_unique_prefixes(self):
        s = self.trace("s.json", F1)
        out, err = self.run_cli("summarize", "--trace", s, "--out", "o.json")
        self.assertEqual(out, "o.json\n")
        self.assertTrue(os.path.exists(os.path.join(self.td.path, "o.json")))
        out, _ = self.run_cli("report", "--sum=%s" % s, "--top", "3")
        self.assertTrue(out.startswith("# Profile Report"), out)
        _, err = self.run_cli("bundle", "--out", "x", rc=2)
        self.assertIn("ambiguous option '--out': it could be --output-dir, --output", err)
        # an exact name wins over the longer names it begins
        _, err = self.run_cli("bundle", "--before", "missing-a", "--after", "missing-b", "--output-dir", "d",
                              rc=1)
        self.assertIn("--before-summary 'missing-a'", err)
        _, err = self.run_cli("report", "--nosuch", rc=2)
        self.assertIn("unknown option '--nosuch'", err)


class Numbers(ArgsBase):
    def test_integers_as_python_int(self):
        s = self.trace("s.json", F1)
        for v in ["1_0", " 5 ", "+5", "007", "\t3\n"]:
            out, err = self.run_cli("report", "--summary", s, "--top-k", v)
            self.assertTrue(out.startswith("# Profile Report"), (v, err))
        for v in ["0x10", "1__0", "_1", "1_", "1.0", "1e3", "", "٣x", "5 5"]:
            _, err = self.run_cli("report", "--summary", s, "--top-k", v, rc=2)
            self.assertIn("option '--top-k' needs an integer (as Python's int() reads it", err, v)
        _, err = self.run_cli("report", "--summary", s, "--top-k", "99999999999999999999", rc=2)
        self.assertIn("option '--top-k' must be an integer from -9223372036854775808 to 9223372036854775807", err)

    def test_floats_as_python_float(self):
        s = self.trace("s.json", F1)
        for v in [" 5 ", "1_000", ".5", "1e3", "+2"]:
            out, err = self.run_cli("trim", "--trace-file", s, "--output", "o.json.gz", "--start-us", v)
            self.assertTrue(out.startswith("o.json.gz\n"), (v, err))
        for v in ["0x10", "0x1p3", "1e", "1_", "5us", ""]:
            _, err = self.run_cli("trim", "--trace-file", s, "--output", "o.json.gz", "--start-us", v, rc=2)
            self.assertIn("option '--start-us' needs a finite number, inf or nan (as Python's float() reads it)",
                          err, v)
            _, err = self.run_cli("track", "--before", s, "--after", s, "--max-step-p90-regression-pct", v,
                                  rc=2)
            self.assertIn("option '--max-step-p90-regression-pct' needs a finite number", err, v)
        _, err = self.run_cli("trim", "--trace-file", s, "--output", "o.json.gz", "--end-us", "inf", rc=2)
        self.assertIn("--end-us must be a number, not 'inf'", err)

    def test_knob_ranges(self):
        s = self.trace("s.json", F1)
        for opt in ["--warmup-steps", "--hot-op-limit"]:
            for v in ["9223372036854775807", "2147483648", "-1", "99999999999999999999"]:
                out, err = self.run_cli("summarize", "--trace-file", s, opt, v, rc=2)
                self.assertIn("option '%s' must be an integer from 0 to 2147483647, not '%s'" % (opt, v), err)
                self.assertNotIn("options_json", err)
            self.run_cli("summarize", "--trace-file", s, opt, "2147483647")

class Output(ArgsBase):
    def test_help_and_version_to_a_full_device(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        for args in (["--help"], ["report", "--help"], ["--version"], ["help", "trim"], ["help"]):
            with open("/dev/full", "w") as full:
                p = subprocess.run([CLI] + args, stdout=full, stderr=subprocess.PIPE, env=self.env)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("cannot write to stdout: No space left on device", p.stderr.decode(), args)

    def test_help_of_an_unknown_command(self):
        out, err = self.run_cli("help", "nosuch", rc=2)
        self.assertIn("profsum help: unknown command 'nosuch'", err)
        self.assertEqual(out, "")

if __name__ == "__main__":
    unittest.main()
