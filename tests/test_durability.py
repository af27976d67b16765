"""A shared .db survives what happens to the process that writes it.

A killed import (SIGKILL at any moment: an out-of-memory killer, a closed
notebook kernel) and a disk that fills up in the middle of an import must
leave the database intact and as it was before that import: the earlier
imports readable, integrity_check ok, no half-stored trace.
"""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

from util import ROOT, SO, connect

GEN = os.path.join(ROOT, "bench", "gen_trace.py")

IMPORT_SCRIPT = r"""
import sqlite3, sys
db = sqlite3.connect(sys.argv[2])
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
db.execute("PRAGMA busy_timeout = 10000")
print("go", flush=True)
db.execute("SELECT profsum_import(?, ?)", (sys.argv[3], sys.argv[4])).fetchone()
print("done", flush=True)
"""


def make_trace(path, size):
    """A generated TPU-shaped trace of about `size` bytes of JSON."""
    subprocess.run([sys.executable, GEN, "--size", size, "--out", path],
                   check=True, stdout=subprocess.DEVNULL)


def snapshot(db_path):
    """What a reader sees: integrity, the traces and their aggregate rows."""
    db = connect(db_path)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        traces = db.execute("SELECT trace_id, label, sha256 FROM profsum_trace ORDER BY trace_id").fetchall()
        ops = db.execute("SELECT count(*), total(exclusive_duration) FROM profsum_hot_ops").fetchone()
        return integrity, traces, ops
    finally:
        db.close()


class KilledImport(unittest.TestCase):
    """SIGKILL at several moments of an import of a second trace."""

    @classmethod
    def setUpClass(cls):
        cls.td = tempfile.mkdtemp(prefix="profsum-kill-")
        cls.small = os.path.join(cls.td, "small.json.gz")
        cls.big = os.path.join(cls.td, "big.json.gz")
        make_trace(cls.small, "200Ki")
        make_trace(cls.big, "12M")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.td, ignore_errors=True)

    def _timed_import(self, db_path):
        """Seconds a full import of the big trace takes here, from the
        moment the importer says "go"."""
        p = subprocess.Popen([sys.executable, "-c", IMPORT_SCRIPT, SO, db_path, self.big, "victim"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.stdout.readline().strip(), "go")
        t0 = time.monotonic()
        self.assertEqual(p.stdout.readline().strip(), "done")
        took = time.monotonic() - t0
        _, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, err)
        return took

    def test_kill_anywhere_keeps_the_database(self):
        for journal in ("wal", "delete"):
            with self.subTest(journal=journal):
                db_path = os.path.join(self.td, "k-%s.db" % journal)
                db = connect(db_path)
                db.execute("PRAGMA journal_mode = %s" % journal)
                db.execute("SELECT profsum_import(?, 'before')", (self.small,)).fetchone()
                db.close()
                before = snapshot(db_path)
                self.assertEqual(before[0], "ok")
                self.assertEqual([t[1] for t in before[1]], ["before"])
                # How long the import takes, to spread the kills over it.
                scratch = os.path.join(self.td, "timing-%s.db" % journal)
                full = self._timed_import(scratch)
                whole = snapshot(scratch)
                killed = 0
                for frac in (0.05, 0.2, 0.4, 0.6, 0.8, 0.95):
                    p = subprocess.Popen([sys.executable, "-c", IMPORT_SCRIPT, SO, db_path, self.big, "victim"],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                    self.assertEqual(p.stdout.readline().strip(), "go")
                    time.sleep(full * frac)
                    if p.poll() is None:
                        p.send_signal(signal.SIGKILL)
                        killed += 1
                    p.wait()
                    p.stdout.close()
                    p.stderr.close()
                    after = snapshot(db_path)
                    self.assertEqual(after[0], "ok")
                    # Either nothing of the import is there, or it committed
                    # whole before the kill (then it equals a full import).
                    if after != before:
                        self.assertEqual([t[1] for t in after[1]], ["before", "victim"],
                                         "killed at %.0f%%" % (frac * 100))
                        self.assertEqual(after[1][1][2], whole[1][0][2])
                        self.assertEqual(after[2][0], before[2][0] + whole[2][0])
                        db = connect(db_path)
                        db.execute("DELETE FROM profsum_trace WHERE label = 'victim'")
                        db.commit()
                        db.close()
                self.assertGreater(killed, 0, "no import was killed: the trace is too small for this host")


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("mount"), "mounting a tmpfs needs root")
class DiskFull(unittest.TestCase):
    """An import into a database on a full file system fails with SQLite's
    error and leaves the database as it was."""

    def setUp(self):
        self.mnt = tempfile.mkdtemp(prefix="profsum-full-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", self.mnt],
                           capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(self.mnt)
            self.skipTest("cannot mount a tmpfs here: %s" % r.stderr.strip())
        self.src = tempfile.mkdtemp(prefix="profsum-full-src-")

    def tearDown(self):
        subprocess.run(["umount", self.mnt], capture_output=True)
        os.rmdir(self.mnt)
        shutil.rmtree(self.src, ignore_errors=True)

    def test_import_on_a_full_disk(self):
        small = os.path.join(self.src, "small.json.gz")
        big = os.path.join(self.src, "big.json.gz")
        make_trace(small, "40Ki")
        make_trace(big, "6M")
        for journal in ("delete", "wal"):
            with self.subTest(journal=journal):
                db_path = os.path.join(self.mnt, "full-%s.db" % journal)
                filler = os.path.join(self.mnt, "filler")
                db = connect(db_path)
                try:
                    db.execute("PRAGMA journal_mode = %s" % journal)
                    db.execute("SELECT profsum_import(?, 'before')", (small,)).fetchone()
                    before = snapshot(db_path)
                    self.assertEqual(before[0], "ok")
                    # Fill the file system, then give back a little room:
                    # enough to start the import, not to finish it.
                    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
                    try:
                        while True:
                            os.write(fd, b"\0" * 65536)
                    except OSError:
                        pass
                    finally:
                        os.close(fd)
                    os.truncate(filler, max(0, os.path.getsize(filler) - 24 * 1024))
                    with self.assertRaises(sqlite3.Error) as cm:
                        db.execute("SELECT profsum_import(?, 'big')", (big,)).fetchone()
                    msg = str(cm.exception)
                    self.assertRegex(msg, r"database or disk is full|disk I/O error")
                    self.assertNotIn("no trace", msg)
                finally:
                    db.close()
                    if os.path.exists(filler):
                        os.remove(filler)
                self.assertEqual(snapshot(db_path), before)
                for suffix in ("", "-wal", "-shm", "-journal"):
                    if os.path.exists(db_path + suffix):
                        os.remove(db_path + suffix)

if __name__ == "__main__":
    unittest.main()
