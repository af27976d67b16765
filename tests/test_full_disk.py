"""Errors are said for what they are: on a full disk SQLite cannot extend the
database's shared-memory file, so preparing any statement fails with a disk
I/O error; profsum_trim used to call that "bad WHERE clause '1'", and
profsum_import with options_json answered a bare "disk I/O error" (no
function named).  Now the message names the function and gives SQLite's
error, and the error code stays SQLite's (SQLITE_IOERR_...).

The full disk is a 128 KiB tmpfs mounted for the test (root only: skipped
with the reason otherwise) holding a WAL database and a file that fills it.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from util import SO


def load(path):
    db = sqlite3.connect(path)
    db.enable_load_extension(True)
    db.load_extension(SO)
    return db


class FullDiskTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.top = tempfile.mkdtemp(prefix="profsum-full-")
        cls.mnt = os.path.join(cls.top, "mnt")
        os.mkdir(cls.mnt)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", cls.mnt],
                           capture_output=True, text=True)
        if p.returncode != 0:
            shutil.rmtree(cls.top)
            raise unittest.SkipTest("cannot mount a small tmpfs (needs root): %s" % (p.stderr.strip() or p.returncode))
        cls.src = os.path.join(cls.top, "t.json")
        with open(cls.src, "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}, f)
        cls.dbpath = os.path.join(cls.mnt, "x.db")
        db = load(cls.dbpath)
        db.execute("PRAGMA journal_mode=wal")
        db.execute("CREATE TABLE mine(x)")
        db.commit()
        db.close()
        try:
            with open(os.path.join(cls.mnt, "fill"), "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass                                    # full

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["umount", cls.mnt], capture_output=True)
        shutil.rmtree(cls.top, ignore_errors=True)

    def fails(self, sql, args):
        db = load(self.dbpath)
        try:
            with self.assertRaises(sqlite3.OperationalError) as cm:
                db.execute(sql, args).fetchall()
        finally:
            db.close()
        return cm.exception

    def test_trim_says_disk_io_error(self):
        e = self.fails("SELECT profsum_trim(?, ?)", (self.src, os.path.join(self.top, "out.json.gz")))
        self.assertEqual(str(e), "profsum_trim: disk I/O error")
        self.assertTrue(e.sqlite_errorname.startswith("SQLITE_IOERR"), e.sqlite_errorname)
        e = self.fails("SELECT profsum_trim(?, ?, 'ts > 0')", (self.src, os.path.join(self.top, "out.json.gz")))
        self.assertNotIn("WHERE", str(e))
        self.assertFalse(os.path.exists(os.path.join(self.top, "out.json.gz")))

    def test_import_options_say_disk_io_error(self):
        e = self.fails("SELECT profsum_import(?, 'a', '{\"series\": \"s\"}')", (self.src,))
        self.assertEqual(str(e), "profsum_import: disk I/O error")
        self.assertTrue(e.sqlite_errorname.startswith("SQLITE_IOERR"), e.sqlite_errorname)

    def test_trim_output_on_the_full_disk(self):
        # the database elsewhere, the output on the full disk: the write error
        db = sqlite3.connect(":memory:")
        db.enable_load_extension(True)
        db.load_extension(SO)
        big = os.path.join(self.top, "big.json")
        with open(big, "w") as f:
            json.dump({"traceEvents": [{"ph": "X", "name": "op%d" % i, "pid": 1, "tid": 1, "ts": i,
                                        "dur": 1, "args": {"v": os.urandom(64).hex()}}
                                       for i in range(4000)]}, f)
        dest = os.path.join(self.mnt, "out.json.gz")
        with self.assertRaises(sqlite3.OperationalError) as cm:
            db.execute("SELECT profsum_trim(?, ?)", (big, dest)).fetchone()
        self.assertRegex(str(cm.exception), r"^profsum_trim: '%s': (write error \(No space left on device\)|"
                         r"cannot create a file there \(No space left on device\))$" % dest)
        self.assertEqual([n for n in os.listdir(self.mnt) if n.startswith("out.json.gz")], [])


if __name__ == "__main__":
    unittest.main()
