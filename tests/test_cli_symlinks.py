"""Symbolic links and the files the command line writes (docs/cli.md,
Conventions, "Symbolic links"): the directory a user gives may be a link
or pass through one, and what is written lands where it leads; the file
written is never a link -- a link at its name, to a file, to a directory
or to nothing, is refused and left as it was, neither followed (a write
outside the directory given) nor replaced (a link deleted).

Before, the writers disagreed: `report --output L` (and every command's
--output) replaced a link L to a directory with a file, deleting the link,
where `trim --output L` refused it as a directory; a link to a file, or a
dangling one, was replaced by both; `track --history h.jsonl` appended
through a link, and created the target of a dangling one.

Each writer is run here: --output of every command, trim, the six files of
bundle --output-dir, a JSONL history that track and bundle append to, view
--extract, and the SQL writers profsum_bundle and profsum_history_export
(profsum_trim: tests/test_trim.py).

Run: /usr/bin/python3 tests/run.py test_cli_symlinks.py
"""
import json
import os
import stat
import subprocess
import unittest

from test_cli import CliBase, CLI, F1_BEFORE, F1_AFTER, has_function
from util import connect

ADVICE = ("profsum neither writes through a symbolic link nor replaces one: remove the link, or give "
          "the path it leads to")
SESSION = "plugins/profile/2024_01_01_00_00_00"


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


class LinkBase(CliBase):
    def setUp(self):
        super().setUp()
        self.a = self.trace("a.json.gz", F1_BEFORE)
        self.b = self.trace("b.json.gz", F1_AFTER)
        self.victim = self.td.write("victim.txt", "precious\n")
        os.chmod(self.victim, 0o600)
        os.mkdir(self.path("realdir"))

    def path(self, *parts):
        return os.path.join(self.td.path, *parts)

    # The three kinds of link at a name: (target as written in the link,
    # the phrase the refusal gives).
    KINDS = [("victim.txt", "a file"), ("realdir", "a directory"), ("nowhere", "which does not exist")]

    def link(self, name, target):
        """A link at NAME (relative to the test directory) to TARGET, as
        written (relative to NAME's folder).  Replaces what was there."""
        p = self.path(name)
        if os.path.lexists(p):
            os.unlink(p)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)
        return p

    def assert_untouched(self, link, target):
        """The link is still there, to the same target, and nothing was
        written where it leads."""
        self.assertTrue(os.path.islink(link), link)
        self.assertEqual(os.readlink(link), target)
        with open(self.victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(stat.S_IMODE(os.stat(self.victim).st_mode), 0o600)
        self.assertEqual(os.listdir(self.path("realdir")), [])
        self.assertFalse(os.path.lexists(os.path.join(os.path.dirname(link), "nowhere")))
        self.assertFalse(os.path.lexists(self.path("nowhere")))

    def refusal(self, shown, target, kind):
        return "'%s' is a symbolic link (to '%s', %s): %s" % (shown, target, kind, ADVICE)


class OutputOption(LinkBase):
    def commands(self):
        cmds = [["summarize", "--trace-file", self.a],
                ["report", "--summary", self.a],
                ["report", "--summary", self.a, "--format", "html"],
                ["query", "--summary", self.a, "--question", "top ops"],
                ["compare", "--before", self.a, "--after", self.b],
                ["track", "--before", self.a, "--after", self.b],
                ["history", "--history", "h.jsonl"],
                ["bundle", "--before", self.a, "--after", self.b, "--output-dir", "bd"]]
        if has_function("wandb_publish"):
            cmds.append(["publish", "--summary", self.a, "--dry-run", "--entity", "e", "--project", "p"])
        return cmds

    def test_a_link_at_the_output_is_refused(self):
        for cmd in self.commands():
            for target, kind in self.KINDS:
                with self.subTest(cmd=cmd[0], kind=kind):
                    link = self.link("o.out", target)
                    out, err = self.run_cli(*cmd, "--output", "o.out", rc=1)
                    self.assertEqual(out, "")
                    self.assertEqual(err, "profsum %s: cannot write 'o.out': it is a symbolic link (to '%s', "
                                     "%s); %s\n" % (cmd[0], target, kind, ADVICE))
                    self.assert_untouched(link, target)
                    self.assertFalse(os.path.exists(self.path("bd")))
        self.assertEqual(self.temp_files_left(), [])

    def test_refused_before_anything_is_imported(self):
        link = self.link("o.json", "victim.txt")
        for cmd in (["summarize", "--trace-file", self.a], ["report", "--summary", self.a],
                    ["compare", "--before", self.a, "--after", self.b]):
            self.run_cli(*cmd, "--db", "d.db", "--output", "o.json", rc=1)
            self.assertFalse(os.path.exists(self.path("d.db")), cmd)
        self.run_cli("track", "--before", self.a, "--after", self.b, "--history", "h.db", "--output", "o.json",
                     rc=1)
        self.assertFalse(os.path.exists(self.path("h.db")))
        self.assert_untouched(link, "victim.txt")

    def test_a_linked_output_directory_is_used(self):
        # the folder part of --output is what the user named: a link there
        # (or above it) is followed, and the file lands where it leads
        os.symlink("realdir", self.path("latest"))
        os.makedirs(self.path("realdir2", "sub"))
        os.symlink(self.path("realdir2"), self.path("abs"))
        for i, cmd in enumerate(self.commands()):
            for out in ("latest/r%d.out" % i, "abs/sub/r%d.out" % i):
                stdout, _ = self.run_cli(*cmd, "--output", out)
                self.assertEqual(stdout, out + "\n")
                real = self.path(out.replace("latest", "realdir").replace("abs", "realdir2"))
                self.assertTrue(stat.S_ISREG(os.lstat(real).st_mode), real)
                self.assertGreater(os.path.getsize(real), 0)
        self.assertTrue(os.path.islink(self.path("latest")))
        self.assertTrue(os.path.islink(self.path("abs")))

    def test_devices_and_stdout_are_still_written_into(self):
        # the documented exceptions: a link to a device, /dev/stdout
        link = self.link("null-link", "/dev/null")
        out, _ = self.run_cli("report", "--summary", self.a, "--output", "null-link")
        self.assertEqual(out, "null-link\n")
        self.assertEqual(os.readlink(link), "/dev/null")
        with open(self.path("stdout.txt"), "w") as f:
            p = subprocess.run([CLI, "report", "--summary", self.a, "--output", "/dev/stdout"], stdout=f,
                               stderr=subprocess.PIPE, env=self.env, cwd=self.td.path, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("stdout.txt")) as f:
            self.assertTrue(f.read().startswith("# Profile Report"))

    def test_a_link_to_the_database_is_still_named_as_the_database(self):
        # the checks of "Output over a database" come first (exit 2)
        self.run_cli("summarize", "--trace-file", self.a, "--db", "runs.db", "--output", "s.json")
        link = self.link("out-link", "runs.db")
        _, err = self.run_cli("compare", "--db", "runs.db", "--before", "a", "--after", "b", "--output",
                              "out-link", rc=2)
        self.assertIn("--output 'out-link' is the database of --db 'runs.db'", err)
        self.assertEqual(os.readlink(link), "runs.db")


class Trim(LinkBase):
    def test_a_link_at_the_output_is_refused(self):
        for target, kind in self.KINDS:
            with self.subTest(kind=kind):
                link = self.link("t.json.gz", target)
                out, err = self.run_cli("trim", "--trace-file", self.a, "--output", "t.json.gz", rc=1)
                self.assertEqual((out, err), ("", "profsum trim: profsum_trim: %s\n"
                                              % self.refusal("t.json.gz", target, kind)))
                self.assert_untouched(link, target)
        self.assertEqual([f for f in os.listdir(self.td.path) if ".tmp-" in f], [])

    def test_a_linked_output_directory_is_used(self):
        os.symlink("realdir", self.path("latest"))
        out, _ = self.run_cli("trim", "--trace-file", self.a, "--output", "latest/t.json.gz", "--pid", "1")
        self.assertTrue(out.startswith("latest/t.json.gz\n"), out)
        self.assertTrue(stat.S_ISREG(os.lstat(self.path("realdir", "t.json.gz")).st_mode))
        self.assertTrue(os.path.islink(self.path("latest")))


class Bundle(LinkBase):
    NAMES = ["after.report.md", "after.summary.json", "before.report.md", "before.summary.json",
             "compare.json", "track.json"]

    def test_a_link_in_the_output_directory_is_refused(self):
        os.mkdir(self.path("bd"))
        for name in ("before.summary.json", "track.json", "after.report.md"):
            for target, kind in self.KINDS:
                with self.subTest(name=name, kind=kind):
                    link = self.link(os.path.join("bd", name), "../" + target)
                    _, err = self.run_cli("bundle", "--before", self.a, "--after", self.b, "--output-dir", "bd",
                                          "--db", "d.db", rc=1)
                    self.assertEqual(err, "profsum bundle: --output-dir 'bd': its file 'bd/%s' is a symbolic "
                                     "link (to '../%s', %s); %s\n" % (name, target, kind, ADVICE))
                    self.assert_untouched(link, "../" + target)
                    self.assertEqual(os.listdir(self.path("bd")), [name])      # nothing else written
                    self.assertFalse(os.path.exists(self.path("d.db")))        # nothing imported
                    os.unlink(link)

    def test_the_sql_function_refuses_it_too(self):
        db = connect(self.path("s.db"))
        db.execute("SELECT profsum_import(?, 'a')", (self.a,)).fetchone()
        db.execute("SELECT profsum_import(?, 'b')", (self.b,)).fetchone()
        os.mkdir(self.path("bd"))
        for target, kind in self.KINDS:
            link = self.link(os.path.join("bd", "compare.json"), "../" + target)
            with self.assertRaises(Exception) as cm:
                db.execute("SELECT profsum_bundle('a', 'b', ?, '{\"history\": true}')",
                           (self.path("bd"),)).fetchone()
            self.assertEqual(str(cm.exception), "profsum_bundle: " + self.refusal(
                self.path("bd", "compare.json"), "../" + target, kind))
            self.assert_untouched(link, "../" + target)
            self.assertEqual(os.listdir(self.path("bd")), ["compare.json"])
            self.assertEqual(db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0], 0)
        os.unlink(link)
        db.execute("SELECT profsum_bundle('a', 'b', ?)", (self.path("bd"),)).fetchone()
        self.assertEqual(sorted(os.listdir(self.path("bd"))), self.NAMES)

    def test_a_linked_output_directory_is_used(self):
        os.symlink("realdir", self.path("latest"))
        out, _ = self.run_cli("bundle", "--before", self.a, "--after", self.b, "--output-dir", "latest")
        self.assertEqual(json.loads(out)["comparison_path"], "latest/compare.json")
        self.assertEqual(sorted(os.listdir(self.path("realdir"))), self.NAMES)
        self.assertTrue(os.path.islink(self.path("latest")))


class JsonlHistory(LinkBase):
    def test_track_and_bundle_do_not_append_through_a_link(self):
        self.run_cli("track", "--before", self.a, "--after", self.b, "--history", "elsewhere/h.jsonl")
        with open(self.path("elsewhere", "h.jsonl"), "rb") as f:
            before = f.read()
        kinds = [("elsewhere/h.jsonl", "a file"), ("realdir", "a directory"), ("nowhere.jsonl", "which does not exist")]
        for cmd in (["track"], ["bundle", "--output-dir", "bd"]):
            for target, kind in kinds:
                with self.subTest(cmd=cmd[0], kind=kind):
                    link = self.link("h.jsonl", target)
                    _, err = self.run_cli(*cmd, "--before", self.a, "--after", self.b, "--history", "h.jsonl",
                                          rc=1)
                    self.assertEqual(err, "profsum %s: --history 'h.jsonl' is a symbolic link (to '%s', %s), and "
                                     "track and bundle append to the history; %s\n" % (cmd[0], target, kind, ADVICE))
                    self.assertEqual(os.readlink(link), target)
                    self.assertFalse(os.path.exists(self.path("nowhere.jsonl")))
                    self.assertFalse(os.path.exists(self.path("bd")))
                    self.assertEqual(os.listdir(self.path("realdir")), [])
                    with open(self.path("elsewhere", "h.jsonl"), "rb") as f:
                        self.assertEqual(f.read(), before)
        # the history is only read by `history`: a link is followed there
        self.link("h.jsonl", "elsewhere/h.jsonl")
        out, _ = self.run_cli("history", "--history", "h.jsonl")
        self.assertEqual(json.loads(out)["num_records"], 1)
        # and the folder of the history may be a link
        os.symlink("elsewhere", self.path("ci"))
        self.run_cli("track", "--before", self.a, "--after", self.b, "--history", "ci/h.jsonl")
        with open(self.path("elsewhere", "h.jsonl"), "rb") as f:
            self.assertEqual(f.read().count(b"\n"), 2)


class Extract(LinkBase):
    def logdir(self):
        for h in ("host0", "host1"):
            self.td.write(os.path.join("logs", SESSION, h + ".trace.json.gz"), json.dumps(F1_BEFORE), gz=True)
        return self.path("logs")

    def test_a_link_at_a_copy_is_refused(self):
        logs = self.logdir()
        dest = self.path("copy")
        for target, kind in self.KINDS:
            with self.subTest(kind=kind):
                link = self.link(os.path.join("copy", SESSION, "host0.trace.json.gz"),
                                 os.path.relpath(self.path(target), self.path("copy", SESSION)))
                rel = os.readlink(link)
                out, err = self.run_cli("view", logs, "--extract", dest, rc=1)
                self.assertIn("profsum view: '%s' not copied: '%s' under '%s' is a symbolic link: refused (%s)\n"
                              % (os.path.join(logs, SESSION, "host0.trace.json.gz"),
                                 os.path.join(SESSION, "host0.trace.json.gz"), dest, ADVICE), err)
                self.assertIn("1 file copied", err)
                self.assert_untouched(link, rel)
                self.assertTrue(stat.S_ISREG(os.lstat(os.path.join(dest, SESSION, "host1.trace.json.gz")).st_mode))
                self.assertNotIn("host0.trace.json.gz", out)

    def test_a_linked_dest_is_used(self):
        logs = self.logdir()
        os.symlink("realdir", self.path("dl"))
        out, _ = self.run_cli("view", logs, "--extract", "dl")
        self.assertIn("dl/%s/host0.trace.json.gz\n" % SESSION, out)
        self.assertEqual(sorted(os.listdir(self.path("realdir", SESSION))),
                         ["host0.trace.json.gz", "host1.trace.json.gz"])
        self.assertTrue(os.path.islink(self.path("dl")))


class HistoryExport(LinkBase):
    def test_a_link_at_the_path_is_refused(self):
        db = connect(self.path("h.db"))
        self.td.write("in.jsonl", '{"label": "x", "assessment": {"status": "pass"}}\n')
        self.assertEqual(db.execute("SELECT profsum_history_import(?)", (self.path("in.jsonl"),)).fetchone()[0], 1)
        for target, kind in self.KINDS:
            link = self.link("out.jsonl", target)
            with self.assertRaises(Exception) as cm:
                db.execute("SELECT profsum_history_export(?)", (self.path("out.jsonl"),)).fetchone()
            self.assertEqual(str(cm.exception), "profsum_history_export: " + self.refusal(
                self.path("out.jsonl"), target, kind))
            self.assert_untouched(link, target)
        # through a linked folder: written where it leads
        os.symlink("realdir", self.path("latest"))
        self.assertEqual(db.execute("SELECT profsum_history_export(?)",
                                    (self.path("latest", "out.jsonl"),)).fetchone()[0], 1)
        with open(self.path("realdir", "out.jsonl")) as f:
            self.assertEqual(json.loads(f.read())["label"], "x")


if __name__ == "__main__":
    unittest.main()
