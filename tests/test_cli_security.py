"""Files the `profsum` command line creates (ext/cli/profsum_cli.c): no
write through a planted symlink, outputs with mode 0666 less the umask,
no --output over the database a command works in, the temporary database
in a private directory, a relative --download-root that really is used,
and a `trim --where` of any length.

Run: /usr/bin/python3 tests/run.py test_cli_security.py
PROFSUM_CLI names the binary to test (default ./profsum); point it at a
build with -fsanitize=address to run the long --where cases under ASan.
"""
import gzip
import json
import os
import stat
import subprocess
import time
import unittest

import fixtures
from mock_wandb import MockWandb, DEFAULT_KEY
from test_cli import CliBase, CLI, F1_BEFORE, F1_AFTER
from util import connect


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


class SecBase(CliBase):
    def run_um(self, args, umask=0o022, rc=0, env=None, shell_prefix=None):
        """Run the CLI under umask `umask`; with shell_prefix, through
        `sh -c '<prefix>; exec profsum "$@"'` (the shell's $$ is then the
        CLI's pid)."""
        if shell_prefix:
            argv = ["/bin/sh", "-c", shell_prefix + '; exec "$0" "$@"', CLI] + list(args)
        else:
            argv = [CLI] + list(args)
        p = subprocess.run(argv, cwd=self.td.path, env=env or self.env, umask=umask,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        out, err = p.stdout.decode(), p.stderr.decode()
        if rc is not None:
            self.assertEqual(p.returncode, rc, "profsum %s\nstdout: %s\nstderr: %s" % (" ".join(args), out, err))
        return out, err

    def victim(self):
        v = self.td.write("victim.txt", "precious\n")
        os.chmod(v, 0o600)
        return v

    def assert_victim_intact(self, v):
        with open(v) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(mode(v), 0o600)


class OutputFiles(SecBase):
    def test_planted_symlink_at_the_old_temp_name(self):
        # the old code wrote "<out>.tmp-<pid>" with fopen("wb"), following a
        # symlink planted there: the victim was overwritten, out.json ended
        # as a symlink to it
        v = self.victim()
        src = self.trace("t.json.gz", F1_BEFORE)
        os.mkdir(os.path.join(self.td.path, "shared"))
        out, err = self.run_um(["summarize", "--trace-file", src, "--output", "shared/out.json"],
                               shell_prefix="ln -s %s shared/out.json.tmp-$$" % v)
        self.assertEqual((out, err), ("shared/out.json\n", ""))
        self.assert_victim_intact(v)
        target = os.path.join(self.td.path, "shared", "out.json")
        self.assertTrue(stat.S_ISREG(os.lstat(target).st_mode))
        self.assertEqual(mode(target), 0o644)
        with open(target) as f:
            self.assertEqual(json.load(f)["schema_version"], "profile_summary.v1")
        # the planted link is left alone, and no temporary file remains
        left = sorted(os.listdir(os.path.join(self.td.path, "shared")))
        self.assertEqual(len(left), 2, left)
        self.assertEqual(left[0], "out.json")
        self.assertTrue(left[1].startswith("out.json.tmp-") and
                        os.path.islink(os.path.join(self.td.path, "shared", left[1])))

    def test_symlink_at_the_output_is_refused(self):
        # neither followed (the victim is intact) nor replaced (the link
        # stays): docs/cli.md, Symbolic links; tests/test_cli_symlinks.py
        v = self.victim()
        src = self.trace("t.json.gz", F1_BEFORE)
        os.symlink(v, os.path.join(self.td.path, "r.md"))
        _, err = self.run_um(["report", "--summary", src, "--output", "r.md"], rc=1)
        self.assertIn("cannot write 'r.md': it is a symbolic link (to '%s', a file)" % v, err)
        self.assert_victim_intact(v)
        self.assertEqual(os.readlink(os.path.join(self.td.path, "r.md")), v)

    def test_mode_follows_the_umask(self):
        src = self.trace("t.json.gz", F1_BEFORE)
        for um, want in [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)]:
            for cmd in (["summarize", "--trace-file", src], ["report", "--summary", src],
                        ["query", "--summary", src, "--question", "top ops"]):
                name = "%s-%03o.out" % (cmd[0], um)
                self.run_um(cmd + ["--output", "o/" + name], umask=um)
                self.assertEqual(mode(os.path.join(self.td.path, "o", name)), want, (cmd[0], oct(um)))
        # an existing file of another mode is replaced by one of the umask's
        p = os.path.join(self.td.path, "o", "summarize-022.out")
        os.chmod(p, 0o600)
        self.run_um(["summarize", "--trace-file", src, "--output", p])
        self.assertEqual(mode(p), 0o644)
        self.assertEqual([f for f in os.listdir(os.path.join(self.td.path, "o")) if ".tmp-" in f], [])

    def test_a_pipe_or_device_at_the_output_is_written_into(self):
        # --output /dev/null, or a named pipe: written into, never replaced
        # by a new file (as root a rename would replace /dev/null itself);
        # a pipe stands for any such file here
        src = self.trace("t.json.gz", F1_BEFORE)
        fifo = os.path.join(self.td.path, "out.fifo")
        os.mkfifo(fifo)
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # so that the writer's open does not wait
        try:
            out, _ = self.run_um(["summarize", "--trace-file", src, "--output", "out.fifo"])
            got = b""
            while True:
                try:
                    b = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not b:
                    break
                got += b
        finally:
            os.close(fd)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(out, "out.fifo\n")
        self.assertEqual(json.loads(got)["schema_version"], "profile_summary.v1")
        self.assertTrue(got.endswith(b"}\n"))
        self.assertEqual(self.temp_files_left(), [])
        if os.geteuid() == 0:
            # a null device of its own (never the system's /dev/null, which
            # a build with this bug would replace)
            dev = os.path.join(self.td.path, "null")
            os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            self.run_um(["report", "--summary", src, "--output", "null"])
            self.assertTrue(stat.S_ISCHR(os.lstat(dev).st_mode))
            os.unlink(dev)
        # the SQL writers refuse it: they write a new file and rename it
        _, err = self.run_um(["trim", "--trace-file", src, "--output", "out.fifo"], rc=1)
        self.assertIn("profsum_trim: 'out.fifo' is a pipe, not a file", err)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_failure_leaves_no_temporary_file(self):
        src = self.trace("t.json.gz", F1_BEFORE)
        os.mkdir(os.path.join(self.td.path, "d"))
        os.mkdir(os.path.join(self.td.path, "d", "out.json"))      # rename over a directory fails
        _, err = self.run_um(["summarize", "--trace-file", src, "--output", "d/out.json"], rc=1)
        self.assertIn("cannot write 'd/out.json'", err)
        self.assertEqual(os.listdir(os.path.join(self.td.path, "d")), ["out.json"])
        self.assertEqual(self.temp_files_left(), [])


class Trim(SecBase):
    def setUp(self):
        super().setUp()
        self.src = self.trace("f1.json.gz", F1_BEFORE)

    def trimmed(self, path):
        with open(path, "rb") as f:
            return json.loads(gzip.decompress(f.read()))["traceEvents"]

    def test_mode_follows_the_umask(self):
        # profsum_trim makes its file with mkstemp (0600); the CLI's output
        # gets 0666 less the umask like the others
        for um, want in [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)]:
            name = "t-%03o.json.gz" % um
            out, _ = self.run_um(["trim", "--trace-file", self.src, "--output", name, "--pid", "1"], umask=um)
            self.assertEqual(out, "%s\n14 entries written\n" % name)
            self.assertEqual(mode(os.path.join(self.td.path, name)), want)
        self.assertEqual(sorted(os.listdir(self.td.path)),
                         ["f1.json.gz", "t-022.json.gz", "t-027.json.gz", "t-077.json.gz"])

    def test_symlink_at_the_output_is_refused(self):
        v = self.victim()
        os.mkdir(os.path.join(self.td.path, "shared"))
        os.symlink(v, os.path.join(self.td.path, "shared", "small.json.gz"))
        _, err = self.run_um(["trim", "--trace-file", self.src, "--output", "shared/small.json.gz",
                              "--where", "name = 'softmax'"], rc=1)
        self.assertIn("profsum_trim: 'shared/small.json.gz' is a symbolic link (to '%s', a file)" % v, err)
        self.assert_victim_intact(v)
        self.assertEqual(os.readlink(os.path.join(self.td.path, "shared", "small.json.gz")), v)
        # a link planted at a temporary name is never written through either
        os.unlink(os.path.join(self.td.path, "shared", "small.json.gz"))
        self.run_um(["trim", "--trace-file", self.src, "--output", "shared/small.json.gz",
                     "--where", "name = 'softmax'"],
                    shell_prefix="ln -s %s shared/small.json.gz.tmp-$$" % v)
        self.assert_victim_intact(v)
        p = os.path.join(self.td.path, "shared", "small.json.gz")
        self.assertTrue(stat.S_ISREG(os.lstat(p).st_mode))
        self.assertEqual([e["name"] for e in self.trimmed(p) if e["ph"] == "X"], ["softmax"])

    def test_where_of_4090_spaces(self):
        # an ASan repro: n += snprintf(...) went past the 4096-byte
        # buffer, then sizeof-n wrapped (a stack overflow)
        out, err = self.run_um(["trim", "--trace-file", self.src, "--output", "o.json.gz",
                                "--where", "1" + " " * 4090, "--start-us", "1", "--end-us", "2", "--pid", "1"])
        self.assertEqual((out, err), ("o.json.gz\n0 entries written\n", ""))
        self.assertEqual(self.trimmed(os.path.join(self.td.path, "o.json.gz")), [])

    def test_very_long_where_selects_the_right_rows(self):
        names = ["no_such_op_%05d" % i for i in range(3000)] + ["softmax", "fusion.1", "python_host_compute"]
        where = "name IN (%s)" % ", ".join("'%s'" % n for n in names)
        self.assertGreater(len(where), 50000)
        for extra, want_x, want_n in [([], ["fusion.1", "softmax", "python_host_compute"], 3 + 5),
                                      (["--pid", "1"], ["fusion.1", "softmax"], 2 + 3),
                                      (["--pid", "1", "--start-us", "100", "--end-us", "200"], ["softmax"], 1 + 3)]:
            out, err = self.run_um(["trim", "--trace-file", self.src, "--output", "o.json.gz",
                                    "--where", where] + extra)
            self.assertEqual((out, err), ("o.json.gz\n%d entries written\n" % want_n, ""), extra)
            ev = self.trimmed(os.path.join(self.td.path, "o.json.gz"))
            self.assertEqual([e["name"] for e in ev if e["ph"] == "X"], want_x, extra)
            self.assertEqual(len(ev), want_n)

    def test_errors_name_the_output_and_leave_nothing(self):
        _, err = self.run_um(["trim", "--trace-file", self.src, "--output", "o.json.gz",
                              "--where", "no_such_column = 1"], rc=1)
        self.assertTrue(err.startswith("profsum trim: profsum_trim: bad WHERE clause"), err)
        os.mkdir(os.path.join(self.td.path, "dir.json.gz"))
        _, err = self.run_um(["trim", "--trace-file", self.src, "--output", "dir.json.gz"], rc=1)
        self.assertIn("'dir.json.gz': is a directory", err)
        _, err = self.run_um(["trim", "--trace-file", self.src, "--output", "missing/o.json.gz"], rc=1)
        self.assertIn("'missing/o.json.gz': cannot create a file there (No such file or directory)", err)
        _, err = self.run_um(["trim", "--trace-file", "nope.json.gz", "--output", "o.json.gz"], rc=1)
        self.assertNotIn(".tmp-", err)
        self.assertIn("nope.json.gz", err)
        _, err = self.run_um(["trim", "--trace-file", self.src, "--output", "o.json.gz",
                              "--start-us", "inf"], rc=2)
        self.assertIn("--start-us must be a finite number, not 'inf'", err)
        self.assertEqual(sorted(os.listdir(self.td.path)), ["dir.json.gz", "f1.json.gz"])


class OutputOverDatabase(SecBase):
    """An --output that is the command's database (or its -wal, -shm,
    -journal, or a JSONL history) is refused before any work: emit() would
    rename the JSON over the database the command just used."""

    def setUp(self):
        super().setUp()
        self.a = self.trace("a.json.gz", F1_BEFORE)
        self.b = self.trace("b.json.gz", F1_AFTER)
        for label, src in (("a", self.a), ("b", self.b)):
            self.run_cli("summarize", "--trace-file", src, "--db", "runs.db", "--label", label)
        self.db = os.path.join(self.td.path, "runs.db")

    def snapshot(self):
        """The database's bytes and the files of the directory."""
        with open(self.db, "rb") as f:
            return f.read(), sorted(os.listdir(self.td.path))

    def assert_refused(self, args, opt, shown="runs.db", what="the database of"):
        before = self.snapshot()
        _, err = self.run_cli(*args, rc=2)
        self.assertIn("--output '%s' is %s %s" % (shown, what, opt), err)
        self.assertIn("choose another file", err)
        self.assertEqual(self.snapshot(), before, args)      # byte for byte, nothing added

    # the commands, each with the database option it works in
    def commands(self, db="runs.db"):
        return [
            (["summarize", "--trace-file", self.a, "--db", db], "--db"),
            (["report", "--db", db, "--trace", "a"], "--db"),
            (["query", "--db", db, "--trace", "a", "--question", "top ops"], "--db"),
            (["query", "--db", db, "--list"], "--db"),
            (["compare", "--db", db, "--before", "a", "--after", "b"], "--db"),
            (["track", "--db", db, "--before", "a", "--after", "b"], "--db"),
            (["track", "--history", db, "--before", "a", "--after", "b"], "--history"),
            (["history", "--history", db], "--history"),
            (["bundle", "--db", db, "--before", "a", "--after", "b", "--output-dir", "bd"], "--db"),
            (["bundle", "--history", db, "--before", "a", "--after", "b", "--output-dir", "bd"],
             "--history"),
            (["publish", "--db", db, "--trace", "a", "--dry-run", "--entity", "e", "--project", "p"],
             "--db"),
        ]

    def test_each_command_refuses_its_database(self):
        for args, opt in self.commands():
            self.assert_refused(args + ["--output", "runs.db"], opt)
        # the same file by another name: a path through "..", an abbreviation
        self.assert_refused(["track", "--db", "runs.db", "--before", "a", "--after", "b",
                             "--out", "x/../runs.db"], "--db 'runs.db'", shown="x/../runs.db")
        with connect() as db:                                # still the database
            db.execute("ATTACH ? AS r", (self.db,))
            self.assertEqual(db.execute("SELECT count(*) FROM r.profsum_trace").fetchone()[0], 2)

    def test_side_files_of_the_database(self):
        for side in ("-wal", "-shm", "-journal"):
            for args, opt in self.commands()[:1] + self.commands()[5:8]:
                self.assert_refused(args + ["--output", "runs.db" + side], "%s 'runs.db'" % opt,
                                    shown="runs.db" + side, what="the %s file of the database of" % side)

    def test_links_uris_and_new_databases(self):
        os.symlink("runs.db", os.path.join(self.td.path, "link.db"))
        os.symlink("runs.db", os.path.join(self.td.path, "out-link"))
        self.assert_refused(["summarize", "--trace-file", self.a, "--db", "link.db", "--output",
                             "runs.db"], "--db 'link.db'")
        self.assert_refused(["compare", "--db", "runs.db", "--before", "a", "--after", "b", "--output",
                             "out-link"], "--db 'runs.db'", shown="out-link")
        self.assert_refused(["report", "--db", "file:runs.db?cache=private", "--trace", "a", "--output",
                             "runs.db"], "--db 'file:runs.db?cache=private'")
        # a database that does not exist yet: told by its path, and not created
        for out in ("new.db", "sub/../new.db", "new.db-wal"):
            _, err = self.run_cli("summarize", "--trace-file", self.a, "--db", "new.db", "--output", out,
                                  rc=2)
            self.assertIn("--output '%s' is the " % out, err)
            self.assertFalse(os.path.exists(os.path.join(self.td.path, "new.db")))
            self.assertFalse(os.path.exists(os.path.join(self.td.path, "sub")))
        # a dangling link as the database: SQLite creates its target
        os.symlink("later.db", os.path.join(self.td.path, "dangling.db"))
        _, err = self.run_cli("summarize", "--trace-file", self.a, "--db", "dangling.db", "--output",
                              "later.db", rc=2)
        self.assertIn("--output 'later.db' is the database of --db 'dangling.db'", err)
        self.assertFalse(os.path.exists(os.path.join(self.td.path, "later.db")))

    def test_jsonl_history(self):
        self.run_cli("track", "--history", "h.jsonl", "--before", self.a, "--after", self.b)
        h = os.path.join(self.td.path, "h.jsonl")
        with open(h, "rb") as f:
            before = f.read()
        for args in (["track", "--history", "h.jsonl", "--before", self.a, "--after", self.b],
                     ["bundle", "--history", "h.jsonl", "--before", self.a, "--after", self.b,
                      "--output-dir", "bd"],
                     ["history", "--history", "h.jsonl"]):
            _, err = self.run_cli(*args, "--output", "./h.jsonl", rc=2)
            self.assertIn("--output 'h.jsonl' is the history file of --history", err)
            with open(h, "rb") as f:
                self.assertEqual(f.read(), before)
        self.assertFalse(os.path.exists(os.path.join(self.td.path, "bd")))

    def test_output_over_the_input(self):
        """An --output that is the file the command reads (a trace, a
        summary; by another name, a symlink or a hard link too) is refused
        before anything is read, as trim refuses its source, and the input
        is left as it was."""
        s = os.path.join(self.td.path, "s.json")
        self.run_cli("summarize", "--trace-file", self.a, "--output", s)
        os.symlink("s.json", os.path.join(self.td.path, "link.json"))
        os.link(s, os.path.join(self.td.path, "hard.json"))
        os.symlink("a.json.gz", os.path.join(self.td.path, "a-link.json.gz"))
        cases = [(["summarize", "--trace-file", "a.json.gz"], "./a.json.gz", "--trace-file 'a.json.gz'"),
                 (["summarize", "--trace-file", "a-link.json.gz"], "a.json.gz", "--trace-file 'a-link.json.gz'"),
                 (["summarize", "--xplane-file", "a.json.gz"], "a.json.gz", "--xplane-file 'a.json.gz'"),
                 (["report", "--summary", "s.json"], "s.json", "--summary 's.json'"),
                 (["report", "--summary", "link.json"], "s.json", "--summary 'link.json'"),
                 (["report", "--summary", "s.json", "--format", "html"], "hard.json", "--summary 's.json'"),
                 (["query", "--summary", "s.json", "--question", "top ops"], "s.json", "--summary 's.json'"),
                 (["compare", "--before", "s.json", "--after", "b.json.gz"], "b.json.gz", "--after 'b.json.gz'"),
                 (["track", "--before", "s.json", "--after", "b.json.gz"], "s.json", "--before 's.json'")]
        for args, out, what in cases:
            files = {}
            for f in ("a.json.gz", "b.json.gz", "s.json"):
                with open(os.path.join(self.td.path, f), "rb") as fh:
                    files[f] = fh.read()
            listing = sorted(os.listdir(self.td.path))
            _, err = self.run_cli(*args, "--output", out, rc=2)
            self.assertIn("profsum %s: --output '%s' is the input of %s (the output would replace it): "
                          "choose another file" % (args[0], os.path.normpath(out), what), err)
            for f, data in files.items():
                with open(os.path.join(self.td.path, f), "rb") as fh:
                    self.assertEqual(fh.read(), data, (args, f))
            self.assertEqual(sorted(os.listdir(self.td.path)), listing)
        # another file works
        out, _ = self.run_cli("report", "--summary", "s.json", "--output", "r.md")
        self.assertEqual(out, "r.md\n")

    def test_bundle_file_over_the_history(self):
        """A bundle file (track.json, compare.json, ...) that is the --history
        file: refused before anything is imported or written, the history
        kept byte for byte -- by another spelling and through a symlink too."""
        os.mkdir(os.path.join(self.td.path, "out"))
        h = os.path.join(self.td.path, "out", "track.json")
        for i in range(3):
            self.run_cli("track", "--history", "out/track.json", "--before", self.a, "--after", self.b,
                         "--label", "run%d" % i)
        with open(h, "rb") as f:
            before = f.read()
        self.assertEqual(before.count(b"\n"), 3)
        os.symlink("out/compare.json", os.path.join(self.td.path, "link.jsonl"))
        with open(os.path.join(self.td.path, "out", "compare.json"), "w") as f:
            f.write('{"a": 1}\n')
        cases = [("out", "out/track.json", "out/track.json", "history file"),
                 ("./out/", "out/../out/track.json", "out/track.json", "history file"),
                 ("out", "link.jsonl", "out/compare.json", "history file"),
                 ("out", "out/after.summary.json", "out/after.summary.json", "history file")]
        for outdir, hist, shown, what in cases:
            _, err = self.run_cli("bundle", "--history", hist, "--before", self.a, "--after", self.b,
                                  "--output-dir", outdir, rc=2)
            self.assertIn("profsum bundle: --output-dir '%s': its file '%s' is the %s of --history '%s' "
                          "(the bundle would replace it)" % (os.path.normpath(outdir), shown, what, hist),
                          err)
            with open(h, "rb") as f:
                self.assertEqual(f.read(), before)
        self.assertEqual(sorted(os.listdir(os.path.join(self.td.path, "out"))), ["compare.json", "track.json"])
        # a database as --db inside the bundle directory: refused the same way
        _, err = self.run_cli("bundle", "--db", "bd2/compare.json", "--before", self.a, "--after", self.b,
                              "--output-dir", "bd2", rc=2)
        self.assertIn("its file 'bd2/compare.json' is the database of --db 'bd2/compare.json'", err)
        self.assertFalse(os.path.exists(os.path.join(self.td.path, "bd2")))
        # another directory still works, and the history gets its record
        self.run_cli("bundle", "--history", "out/track.json", "--before", self.a, "--after", self.b,
                     "--output-dir", "bd3")
        with open(h, "rb") as f:
            after = f.read()
        self.assertTrue(after.startswith(before))
        self.assertEqual(after.count(b"\n"), 4)

    def test_another_output_file_works(self):
        for i, (args, opt) in enumerate(self.commands()):
            out = "out%d.txt" % i
            stdout, _ = self.run_cli(*args, "--output", out)
            self.assertEqual(stdout, out + "\n")
            self.assertTrue(os.path.getsize(os.path.join(self.td.path, out)) > 0)
        # the database is still one, with its traces (and the records tracked)
        with connect() as db:
            db.execute("ATTACH ? AS r", (self.db,))
            self.assertEqual(db.execute("PRAGMA r.integrity_check").fetchone()[0], "ok")
            self.assertGreaterEqual(db.execute("SELECT count(*) FROM r.profsum_trace").fetchone()[0], 2)
        # a new database with an output beside it
        self.run_cli("summarize", "--trace-file", self.a, "--db", "new.db", "--output", "new.json")
        self.assertTrue(os.path.isfile(os.path.join(self.td.path, "new.db")))


class Wandb(SecBase):
    """Against the loopback mock of tests/mock_wandb.py (no network)."""

    TRACE = "plugins/profile/2025_01_02_03_04_05/host.trace.json.gz"

    def setUp(self):
        super().setUp()
        self.api = MockWandb()
        self.api.add_artifact("e", "p", "run-abc-profiler", 0,
                              {self.TRACE: gzip.compress(json.dumps(F1_BEFORE).encode())},
                              aliases=["latest"])
        for k in ("XDG_CACHE_HOME", "NETRC", "WANDB_ENTITY", "WANDB_PROJECT"):
            self.env.pop(k, None)
        self.env.update(WANDB_BASE_URL=self.api.url + "/", WANDB_API_KEY=DEFAULT_KEY,
                        HOME=os.path.join(self.td.path, "home"),
                        PROFSUM_WANDB_MAX_RETRY_SECONDS="5")

    def tearDown(self):
        self.api.close()
        super().tearDown()

    def test_relative_download_root(self):
        # the extension only takes an absolute XDG_CACHE_HOME: a relative
        # --download-root used to send the files to $HOME/.cache
        os.mkdir(os.path.join(self.td.path, "work"))
        env = dict(self.env)
        for root, cwd in [("dl", "work"), ("./a/../dl2", "work"), (".", "work/.")]:
            p = subprocess.run([CLI, "summarize", "--artifact", "e/p/run-abc-profiler:v0",
                                "--download-root", root], cwd=os.path.join(self.td.path, cwd), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr.decode())
            doc = json.loads(p.stdout)
            base = os.path.normpath(os.path.join(self.td.path, "work", root))
            want = os.path.join(base, "profsum", "wandb", "127.0.0.1:%d" % self.api.port, "e", "p",
                                "run-abc-profiler", "v0", self.TRACE)
            self.assertTrue(os.path.isfile(want), (root, want))
            self.assertEqual(doc["trace_overview"]["num_complete_events"], 13)
            self.assertFalse(os.path.exists(os.path.join(self.td.path, "home", ".cache")), root)

    def test_temporary_database_in_a_private_directory(self):
        # SQLite names the side files (-journal, -wal) after the database: in
        # a shared $TMPDIR they could be planted once the name is known; the
        # database lives in a mkdtemp directory (0700, even under umask 0)
        self.api.faults["slow"] = 1.5            # the download: time to look
        tmp = os.path.join(self.td.path, "tmp")
        os.mkdir(tmp)
        os.chmod(tmp, 0o1777)
        p = subprocess.Popen([CLI, "summarize", "--artifact", "e/p/run-abc-profiler:v0",
                              "--download-root", "dl"], cwd=self.td.path, env=dict(self.env, TMPDIR=tmp),
                             umask=0, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        seen = None
        deadline = time.time() + 20
        while seen is None and time.time() < deadline and p.poll() is None:
            for f in os.listdir(tmp):
                d = os.path.join(tmp, f)
                if f.startswith("profsum-") and os.path.exists(os.path.join(d, "profsum.db")):
                    seen = (stat.S_ISDIR(os.lstat(d).st_mode), mode(d))
            time.sleep(0.02)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err.decode())
        self.assertEqual(seen, (True, 0o700), "the temporary database, seen while the download ran")
        self.assertEqual(os.listdir(tmp), [])                      # removed on exit
        self.assertEqual(json.loads(out)["trace_overview"]["num_complete_events"], 13)


if __name__ == "__main__":
    unittest.main()
