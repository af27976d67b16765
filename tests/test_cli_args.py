"""The `profsum` command line's arguments and its edges (docs/cli.md,
"Conventions"): `sql` passing sqlite3's own options through, "--" and
option values that look like options, unique prefixes of long options,
the numeric rule (Python's int() and float()), ranges of the import knobs,
--history files that are not a JSONL history, `view --extract` into the log
directory, the messages of --output/--db/--summary/--where, output that
cannot be written (a full device, a closed pipe), and the busy timeout set
with PROFSUM_BUSY_TIMEOUT_MS."""
import gzip
import json
import os
import pty
import select
import signal
import sqlite3
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
        self.assertTrue(args[1].startswith('.load "'), args)
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
        # the plain extension: the shell is no sanitized program (PROFSUM_SO
        # names the ASan build under `make asan`)
        env = dict(self.env, PROFSUM_SO=os.path.join(ROOT, "profsum.so"))
        out, err = self.run_cli("sql", "p.db", "-json", "select 1 as a", env=env)
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
        # a negative --top-k is a Python slice bound: all rows but the last 3
        out, _ = self.run_cli("report", "--summary", s, "--top-k", "-3")
        full, _ = self.run_cli("report", "--summary", s, "--top-k", "100")
        top = full.index("## Top Ops")
        rows = full[top:].split("\n\n")[0].split("\n")
        self.assertIn("\n".join(rows[:-3]) + "\n\n", out)
        self.assertNotIn(rows[-3], out)

    def test_near_names_are_suggested(self):
        """A misspelt command or option names the nearest one when exactly
        one is within two edits (one for short names), or the one command a
        prefix begins; nothing is suggested for a name far from all."""
        cases = [
            (["summarise"], "profsum: unknown command 'summarise' (did you mean 'summarize'?)"),
            (["comapre"], "(did you mean 'compare'?)"),
            (["trak"], "(did you mean 'track'?)"),
            (["summ"], "(did you mean 'summarize'?)"),
            (["help", "reprot"], "profsum help: unknown command 'reprot' (did you mean 'report'?)"),
            (["summarize", "--tracefile", "x"],
             "unknown option '--tracefile' (did you mean '--trace-file'?)"),
            (["report", "--top_k", "3"], "unknown option '--top_k' (did you mean '--top-k'?)"),
        ]
        for args, msg in cases:
            _, err = self.run_cli(*args, rc=2)
            self.assertIn(msg, err, args)
        for args, msg in [(["xyz"], "unknown command 'xyz'\n"), (["t"], "unknown command 't'\n"),
                          (["report", "--zz"], "unknown option '--zz'\n")]:
            _, err = self.run_cli(*args, rc=2)
            self.assertIn(msg, err, args)

    def test_a_path_without_its_option(self):
        """A path given where the command takes none is a usage error that
        names the option it was most likely meant for: words with a space
        --question, a folder --profile-dir, an XPlane --xplane-file, a JSON file --trace-file,
        a summary --summary, a second file --after; in shell quotes when
        it needs them, and no hint for an option already given."""
        s = self.trace("s.json", F1)
        os.makedirs(os.path.join(self.td.path, "run dir"))
        cases = [
            (["summarize", "run dir"], "unexpected argument 'run dir': a path goes after its option "
                                       "(did you mean --profile-dir 'run dir'?)"),
            (["summarize", "h.xplane.pb"], "(did you mean --xplane-file h.xplane.pb?)"),
            (["summarize", "h.xplane.pb.gz"], "(did you mean --xplane-file h.xplane.pb.gz?)"),
            (["summarize", s], "(did you mean --trace-file %s?)" % s),
            (["report", "it's.json"], "(did you mean --summary 'it'\\''s.json'?)"),
            (["query", "s.json", "--list"], "(did you mean --summary s.json?)"),
            (["query", "--summary", s, "what are the top ops"],
             "unexpected argument 'what are the top ops': a question goes after its option "
             "(did you mean --question 'what are the top ops'?)"),
            (["trim", "h.xplane.pb"], "(did you mean --trace-file h.xplane.pb?)"),
            (["compare", "--before", "a.json", "b.json"], "(did you mean --after b.json?)"),
            (["bundle", "a.json"], "(did you mean --before-summary a.json?)"),
            (["history", "h.jsonl"], "(did you mean --history h.jsonl?)"),
            (["summarize", "--", "-run.json"], "(did you mean --trace-file=-run.json?)"),
        ]
        for args, msg in cases:
            out, err = self.run_cli(*args, rc=2)
            self.assertIn(msg, err, args)
            self.assertIn("Try 'profsum %s --help'." % args[0], err, args)
            self.assertEqual(out, "", args)
        _, err = self.run_cli("report", "--summary", s, "extra", rc=2)
        self.assertIn("unexpected argument 'extra'\n", err)
        _, err = self.run_cli("view", "a", "b", rc=2)
        self.assertIn("unexpected argument 'b'\n", err)

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
        self.assertIn("--end-us must be a finite number, not 'inf'", err)

    def test_knob_ranges(self):
        s = self.trace("s.json", F1)
        for opt in ["--warmup-steps", "--hot-op-limit"]:
            for v in ["9223372036854775807", "2147483648", "-1", "99999999999999999999"]:
                out, err = self.run_cli("summarize", "--trace-file", s, opt, v, rc=2)
                self.assertIn("option '%s' must be an integer from 0 to 2147483647, not '%s'" % (opt, v), err)
                self.assertNotIn("options_json", err)
            self.run_cli("summarize", "--trace-file", s, opt, "2147483647")

    def test_folder_knobs_on_a_file(self):
        s = self.trace("s.json", F1)
        for args in [["--session", "bogus"], ["--all-hosts"], ["--session", "latest"]]:
            _, err = self.run_cli("summarize", "--trace-file", s, *args, rc=2)
            self.assertIn("--session/--all-hosts apply to a folder (--profile-dir", err)
            self.assertIn("'%s' is a file" % s, err)
            self.assertNotIn("options_json", err)


class HistoryFiles(ArgsBase):
    def test_refuses_a_file_that_is_not_a_history(self):
        s = self.trace("s.json", F1)
        out, _ = self.run_cli("summarize", "--trace-file", s, "--output", "summary.json")
        pretty = os.path.join(self.td.path, "summary.json")
        text = os.path.join(self.td.path, "notes.txt")
        with open(text, "w") as f:
            f.write("not a history\n")
        for path in [pretty, text]:
            with open(path, "rb") as f:
                before = f.read()
            for cmd in (["track", "--before", s, "--after", s, "--history", path],
                        ["bundle", "--before-summary", s, "--after-summary", s, "--output-dir", "b",
                         "--history", path]):
                _, err = self.run_cli(*cmd, rc=2)
                self.assertIn("--history '%s' is not a JSONL history" % path, err)
                self.assertIn("line 1", err)
                with open(path, "rb") as f:
                    self.assertEqual(f.read(), before)
        self.assertFalse(os.path.exists(os.path.join(self.td.path, "b")))

    def test_valid_and_new_histories(self):
        s = self.trace("s.json", F1)
        h = os.path.join(self.td.path, "new", "h.jsonl")
        for i in range(2):
            self.run_cli("track", "--before", s, "--after", s, "--history", h)
        with open(h) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 2)
        for line in lines:
            self.assertIn("assessment", json.loads(line))
        empty = os.path.join(self.td.path, "empty.jsonl")
        open(empty, "w").close()
        self.run_cli("track", "--before", s, "--after", s, "--history", empty)
        with open(empty) as f:
            self.assertEqual(len(f.read().splitlines()), 1)

    def test_db_option_is_a_database(self):
        s = self.trace("s.json", F1)
        other = self.td.write("other.json", '{"a": 1}\n')
        _, err = self.run_cli("track", "--before", s, "--after", s, "--db", other, rc=1)
        self.assertIn("--db '%s' is not an SQLite database (file is not a database)" % other, err)
        with open(other) as f:
            self.assertEqual(f.read(), '{"a": 1}\n')


class Extract(ArgsBase):
    def test_dest_inside_the_log_directory(self):
        d = self.logdir()
        os.symlink("run", os.path.join(self.td.path, "link"))
        before = self.listing()
        for src, dest in [("run", "run/plugins"), ("run/", "run/new"), ("run", "run/x/../y"),
                          ("link", "run/copy"), ("run", "link/copy"), ("run", "./run/plugins/profile/")]:
            _, err = self.run_cli("view", src, "--extract", dest, rc=2)
            self.assertIn("--extract '%s' is inside the log directory '%s'" % (dest, src), err)
        _, err = self.run_cli("view", "run", "--extract", "run/.", rc=2)
        self.assertIn("is the log directory itself", err)
        self.assertEqual(self.listing(), before)

    def test_dest_with_a_trailing_slash(self):
        self.logdir()
        out, err = self.run_cli("view", "run/", "--extract", "copy/")
        self.assertIn("copy/plugins/profile/2026_01_01_00_00_00/host0.trace.json.gz\n", out)
        self.assertNotIn("//", out)


class Messages(ArgsBase):
    def test_folder_as_a_trace_points_to_view_list(self):
        """The readers' hint for a folder names an SQL function; the command
        line says it with its own command, the folder shell-quoted."""
        self.logdir("it's run")
        _, err = self.run_cli("trim", "--trace-file", "it's run", "--output", "o.json.gz", rc=1)
        self.assertIn("'it's run': is a directory, not a trace file (to list the traces under it: "
                      "profsum view 'it'\\''s run' --list)", err)
        self.assertNotIn("profsum_find_traces", err)
        out, _ = self.run_cli("view", "it's run", "--list")
        self.assertIn("host0.trace.json.gz", out)

    def test_output_is_a_directory(self):
        s = self.trace("s.json", F1)
        for v, shown in [("..", ".."), ("", "."), ("/", "/"), ("sub/", "sub")]:
            os.makedirs(os.path.join(self.td.path, "sub"), exist_ok=True)
            _, err = self.run_cli("summarize", "--trace-file", s, "--output", v, rc=1)
            self.assertIn("cannot write '%s': it is a directory" % shown, err)
            self.assertNotIn("busy", err)

    def test_output_in_a_directory_without_new_files(self):
        if not os.path.exists("/proc/version"):
            self.skipTest("no /proc")
        s = self.trace("s.json", F1)
        _, err = self.run_cli("summarize", "--trace-file", s, "--output", "/proc/version", rc=1)
        self.assertIn("cannot write '/proc/version': cannot create a new file in '/proc'", err)

    def test_db_messages(self):
        s = self.trace("s.json", F1)
        notdb = self.td.write("n.json", '{"a": 1}\n')
        _, err = self.run_cli("summarize", "--trace-file", s, "--db", notdb, rc=1)
        self.assertIn("--db '%s' is not an SQLite database" % notdb, err)
        os.mkdir(os.path.join(self.td.path, "outdir"))
        _, err = self.run_cli("summarize", "--trace-file", s, "--db", "outdir", rc=1)
        self.assertIn("--db 'outdir' is a directory, not a database file", err)
        # a missing parent folder is created, for --db as for --history
        self.run_cli("compare", "--before", s, "--after", s, "--db", "nodir/x.db")
        self.assertTrue(os.path.isfile(os.path.join(self.td.path, "nodir", "x.db")))
        self.run_cli("track", "--before", s, "--after", s, "--history", "nodir2/h.db")
        self.assertTrue(os.path.isfile(os.path.join(self.td.path, "nodir2", "h.db")))

    def test_summary_and_where_messages(self):
        for cmd in (["report"], ["query", "--question", "top ops"]):
            _, err = self.run_cli(*cmd, "--summary", "./nosuch.json", rc=1)
            self.assertIn("--summary './nosuch.json': No such file or directory", err)
        s = self.trace("s.json", F1)
        _, err = self.run_cli("trim", "--trace-file", s, "--output", "o.json.gz", "--where", "nosuchcol > 1",
                              "--pid", "3", rc=1)
        self.assertIn("'nosuchcol > 1'", err)
        self.assertNotIn("1 AND", err)
        # a trailing comment in --where stays a comment
        out, _ = self.run_cli("trim", "--trace-file", s, "--output", "c.json.gz", "--where",
                              "ph = 'X' -- complete events", "--pid", "1")
        self.assertIn("c.json.gz\n", out)


class Output(ArgsBase):
    def test_help_and_version_to_a_full_device(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        for args in (["--help"], ["report", "--help"], ["--version"], ["help", "trim"], ["help"]):
            with open("/dev/full", "w") as full:
                p = subprocess.run([CLI] + args, stdout=full, stderr=subprocess.PIPE, env=self.env)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("cannot write to stdout: No space left on device", p.stderr.decode(), args)

    def test_output_to_links_of_devices_and_stdout(self):
        # a link to a device is written through, never replaced; /dev/stdout
        # redirected to a file writes at stdout's place in it
        s = self.trace("s.json", F1)
        link = os.path.join(self.td.path, "null-link")
        os.symlink("/dev/null", link)
        self.run_cli("summarize", "--trace-file", s, "--output", link)
        self.assertEqual(os.readlink(link), "/dev/null")
        out = os.path.join(self.td.path, "out.txt")
        with open(out, "w") as f:
            f.write("before\n")
            f.flush()
            p = subprocess.run([CLI, "summarize", "--trace-file", s, "--output", "/dev/stdout"],
                               stdout=f, stderr=subprocess.PIPE, env=self.env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.islink("/dev/stdout"))
        with open(out) as f:
            text = f.read()
        self.assertTrue(text.startswith("before\n{\n"), text[:40])
        self.assertTrue(text.endswith("}\n/dev/stdout\n"), text[-40:])
        self.assertEqual(json.loads(text[len("before\n"):-len("/dev/stdout\n")])["schema_version"],
                         "profile_summary.v1")

    def test_help_of_an_unknown_command(self):
        out, err = self.run_cli("help", "nosuch", rc=2)
        self.assertIn("profsum help: unknown command 'nosuch'", err)
        self.assertEqual(out, "")

    def test_closed_pipe(self):
        s = self.trace("s.json", F1)
        r, w = os.pipe()
        os.close(r)                       # every write to stdout gets EPIPE
        p = subprocess.run([CLI, "report", "--summary", s], stdout=w, stderr=subprocess.PIPE,
                           cwd=self.td.path, env=self.env)
        os.close(w)
        self.assertEqual(p.returncode, -signal.SIGPIPE)
        self.assertEqual(p.stderr, b"")
        self.assertEqual(self.temp_files_left(), [])

    def progress_text(self, value):
        s = self.trace("s.json", F1)
        env = dict(self.env, PROFSUM_PROGRESS_DELAY_MS="0")
        if value is not None:
            env["PROFSUM_NO_PROGRESS"] = value
        master, slave = pty.openpty()
        proc = subprocess.Popen([CLI, "summarize", "--trace-file", s, "--output", "o.json"], cwd=self.td.path,
                                env=env, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        data = b""
        deadline = time.time() + 60
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                data += chunk
            elif proc.poll() is not None:
                break
        os.close(master)
        self.assertEqual(proc.wait(), 0)
        return data.decode()

    def test_no_progress_values(self):
        for value, shown in [(None, True), ("", True), ("0", True), ("1", False), ("yes", False)]:
            self.assertEqual("profsum: imported s.json" in self.progress_text(value), shown, value)


class BusyTimeout(ArgsBase):
    """PROFSUM_BUSY_TIMEOUT_MS: how long a command waits for a database that
    another connection holds (docs/cli.md, Environment)."""

    def setUp(self):
        super().setUp()
        self.s = self.trace("s.json", F1)
        self.run_cli("summarize", "--trace-file", self.s, "--db", "busy.db", "--label", "first")
        self.db = os.path.join(self.td.path, "busy.db")

    def held(self, value):
        """Run summarize into busy.db with the variable set to value while
        another connection holds the write lock; (seconds, stderr)."""
        holder = sqlite3.connect(self.db, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            t0 = time.monotonic()
            _, err = self.run_cli("summarize", "--trace-file", self.s, "--db", "busy.db", "--label", "second",
                                  rc=1, env=dict(self.env, PROFSUM_BUSY_TIMEOUT_MS=value))
            took = time.monotonic() - t0
            holder.execute("ROLLBACK")
        finally:
            holder.close()
        return took, err

    def labels(self):
        db = sqlite3.connect(self.db)
        try:
            return [r[0] for r in db.execute("SELECT label FROM profsum_trace ORDER BY trace_id")]
        finally:
            db.close()

    def test_a_short_budget_fails_early(self):
        for value in ("300", "0"):
            took, err = self.held(value)
            self.assertLess(took, 8.0, (value, err))         # not the default 10 s
            self.assertIn("busy budget", err)
            self.assertIn("the CLI's PROFSUM_BUSY_TIMEOUT_MS", err)
            self.assertIn("busy.db", err)                    # the database named
            self.assertEqual(self.labels(), ["first"])       # nothing written
        # with the lock gone the same command works
        self.run_cli("summarize", "--trace-file", self.s, "--db", "busy.db", "--label", "second",
                     env=dict(self.env, PROFSUM_BUSY_TIMEOUT_MS="300"))
        self.assertEqual(self.labels(), ["first", "second"])

    def test_bad_values_are_usage_errors(self):
        for value in ("abc", "-1", "1.5", " 5", "0x10", "86400001", "99999999999999999999"):
            for args in (["summarize", "--trace-file", self.s, "--db", "busy.db"],
                         ["compare", "--before", self.s, "--after", self.s]):
                _, err = self.run_cli(*args, rc=2, env=dict(self.env, PROFSUM_BUSY_TIMEOUT_MS=value))
                self.assertIn("PROFSUM_BUSY_TIMEOUT_MS='%s'" % value, err)
                self.assertIn("from 0 to 86400000", err)
        self.assertEqual(self.labels(), ["first"])
        for value in ("", "86400000", "0000000250"):
            self.run_cli("compare", "--before", self.s, "--after", self.s,
                         env=dict(self.env, PROFSUM_BUSY_TIMEOUT_MS=value))


if __name__ == "__main__":
    unittest.main()
