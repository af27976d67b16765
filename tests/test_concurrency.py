"""A shared history .db under concurrent writers: separate processes — Debian's Python and the sqlite3 shell
with .load — each call profsum_track 50 times against one file database;
nothing is lost and nobody sees "database is locked".  Also the busy
budget (the connection's busy timeout), the WAL switch, and the stale
snapshot case that cannot be retried."""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import unittest

import fixtures
from util import connect, progress_calls, run_interrupted_at, TempDir, SO

CALLS = 50

# One worker process: waits for the start signal, then CALLS tracks.
WORKER = r"""
import json, os, sqlite3, sys, time
db_path, so, wid, n, timeout, go = sys.argv[1:7]
db = sqlite3.connect(db_path, timeout=float(timeout))
db.enable_load_extension(True)
db.load_extension(so)
while not os.path.exists(go):
    time.sleep(0.001)
ok, errors = 0, []
for i in range(int(n)):
    try:
        db.execute("SELECT profsum_track('before', 'after', ?)", ("py%s-%d" % (wid, i),)).fetchall()
        ok += 1
    except sqlite3.Error as e:
        errors.append(str(e))
print(json.dumps({"ok": ok, "errors": errors}))
"""


def sqlite3_shell():
    return shutil.which("sqlite3")


class SharedHistory(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db_path = os.path.join(self.td.path, "shared.db")
        db = connect(self.db_path)
        for label, steps, softmax in (("before", [100, 110, 120, 130, 140, 150], 60),
                                      ("after", [90, 100, 110, 120, 130, 140], 40)):
            p = self.td.write(label + ".json.gz", json.dumps(fixtures.f1(steps, softmax)), gz=True)
            db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 2}')", (p, label))
        # import is a write function too: it switched the file database to WAL
        self.assertEqual(db.execute("PRAGMA journal_mode").fetchone()[0], "wal")
        # start the contention test from rollback-journal mode, so the first
        # concurrent writes also race to switch it to WAL
        db.execute("PRAGMA journal_mode=delete")
        db.close()
        self.go = os.path.join(self.td.path, "go")

    def tearDown(self):
        self.td.__exit__()

    def python_worker(self, wid, timeout):
        return subprocess.Popen([sys.executable, "-c", WORKER, self.db_path, SO, str(wid), str(CALLS),
                                 str(timeout), self.go], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def shell_worker(self, wid, timeout_ms):
        script = os.path.join(self.td.path, "w%d.sql" % wid)
        with open(script, "w") as f:
            f.write(".bail off\n.timeout %d\n.load %s\n" % (timeout_ms, os.path.splitext(SO)[0]))
            # the shell cannot wait for a file: it starts after a short sleep instead
            for i in range(CALLS):
                f.write("SELECT json_extract(profsum_track('before', 'after', 'sh%d-%d'), '$.label');\n" % (wid, i))
        return subprocess.Popen([sqlite3_shell(), "-batch", self.db_path],
                                stdin=open(script), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def run_all(self, procs):
        time.sleep(0.3)                      # let every Python worker load and wait
        open(self.go, "w").close()
        results = []
        for kind, p in procs:
            out, err = p.communicate(timeout=120)
            results.append((kind, p.returncode, out, err))
        return results

    def check(self, results, expected):
        for kind, code, out, err in results:
            self.assertNotIn("database is locked", out + err)
            self.assertNotIn("error", (out + err).lower() if kind == "sh" else err.lower())
            self.assertEqual(code, 0, err)
            if kind == "py":
                r = json.loads(out)
                self.assertEqual(r, {"ok": CALLS, "errors": []})
            else:
                self.assertEqual(len(out.split()), CALLS, err)
        db = sqlite3.connect(self.db_path)
        try:
            n, distinct = db.execute("SELECT count(*), count(DISTINCT label) FROM profsum_history_record").fetchone()
            self.assertEqual((n, distinct), (expected, expected))
            self.assertEqual(db.execute("PRAGMA journal_mode").fetchone()[0], "wal")
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            # record ids are the commit order: created_at never goes backwards
            ts = [r[0] for r in db.execute("SELECT created_at FROM profsum_history_record ORDER BY record_id")]
            self.assertEqual(ts, sorted(ts))
        finally:
            db.close()

    def test_eight_python_processes_without_busy_timeout(self):
        """timeout=0: no SQLite busy handler, only profsum's own retry (10 s budget)."""
        t0 = time.time()
        procs = [("py", self.python_worker(w, 0)) for w in range(8)]
        self.check(self.run_all(procs), 8 * CALLS)
        self.assertLess(time.time() - t0, 60)

    def test_python_and_shell_processes(self):
        """4 Python processes (default 5 s timeout) and 4 sqlite3 shells
        (.timeout 5000) with .load, 50 tracks each: 400 records."""
        if sqlite3_shell() is None:
            self.skipTest("no sqlite3 shell")
        procs = [("py", self.python_worker(w, 5.0)) for w in range(4)]
        procs += [("sh", self.shell_worker(w, 5000)) for w in range(4)]
        self.check(self.run_all(procs), 8 * CALLS)


class BusyBudget(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db_path = os.path.join(self.td.path, "b.db")
        self.db = connect(self.db_path)
        for label, steps, softmax in (("before", [100, 110, 120, 130, 140, 150], 60),
                                      ("after", [90, 100, 110, 120, 130, 140], 40)):
            p = self.td.write(label + ".json.gz", json.dumps(fixtures.f1(steps, softmax)), gz=True)
            self.db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 2}')", (p, label))
        self.db.execute("SELECT profsum_track('before', 'after', 'first')").fetchall()   # now WAL

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def holder(self):
        h = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
        h.execute("BEGIN IMMEDIATE")
        return h

    def count(self):
        return self.db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0]

    def test_timeout_is_the_budget(self):
        h = self.holder()
        try:
            c = connect(self.db_path)
            c.execute("PRAGMA busy_timeout = 300")
            t0 = time.time()
            with self.assertRaises(sqlite3.OperationalError) as cm:
                c.execute("SELECT profsum_track('before', 'after', 'late')").fetchall()
            took = time.time() - t0
            self.assertEqual(str(cm.exception),
                             "profsum_track: the database '%s' (schema 'main') stayed busy for 300 ms, the "
                             "busy budget: another connection held it (one writing, or with a rollback "
                             "journal, one still reading); set the budget with sqlite3_busy_timeout, the "
                             "sqlite3 shell's .timeout or the CLI's PROFSUM_BUSY_TIMEOUT_MS; nothing was "
                             "written" % os.path.realpath(self.db_path))
            self.assertGreaterEqual(took, 0.25)
            self.assertLess(took, 3.0)
            c.close()
        finally:
            h.execute("ROLLBACK")
            h.close()
        self.assertEqual(self.count(), 1)

    def test_waits_for_the_writer_without_timeout(self):
        """No busy timeout: the default budget (10 s) waits for a writer that
        finishes after 0.5 s."""
        h = self.holder()
        threading.Timer(0.5, lambda: h.execute("COMMIT")).start()
        c = connect(self.db_path)
        c.execute("PRAGMA busy_timeout = 0")
        t0 = time.time()
        rec = json.loads(c.execute("SELECT profsum_track('before', 'after', 'waited')").fetchone()[0])
        self.assertEqual(rec["label"], "waited")
        self.assertGreaterEqual(time.time() - t0, 0.4)
        c.close()
        h.close()
        self.assertEqual(self.count(), 2)

    def test_stale_snapshot_is_reported(self):
        """Inside a transaction that read before another process wrote, the
        write cannot succeed (SQLITE_BUSY_SNAPSHOT): a clear error, nothing
        written, and the advice to call the function as its own statement."""
        c = connect(self.db_path)
        c.isolation_level = None
        c.execute("PRAGMA busy_timeout = 200")
        c.execute("BEGIN")
        c.execute("SELECT count(*) FROM profsum_trace").fetchall()
        other = connect(self.db_path)
        other.execute("SELECT profsum_track('before', 'after', 'other')").fetchall()
        other.close()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            c.execute("SELECT profsum_track('before', 'after', 'stale')").fetchall()
        self.assertIn("SQLITE_BUSY_SNAPSHOT", str(cm.exception))
        self.assertIn("call the function in a statement of its own", str(cm.exception))
        c.execute("ROLLBACK")
        # as its own statement it works
        c.execute("SELECT profsum_track('before', 'after', 'stale')").fetchall()
        c.close()
        self.assertEqual([r[0] for r in self.db.execute("SELECT label FROM profsum_history_record "
                                                       "ORDER BY record_id")], ["first", "other", "stale"])

    def test_stale_snapshot_import(self):
        """The same for profsum_import, whose first write is its trace row:
        the stale snapshot explained with its own code (it said 'database is
        locked' with the generic error code), five times in a row."""
        t = self.td.write("c.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
        for k in range(5):
            c = connect(self.db_path)
            c.isolation_level = None
            c.execute("BEGIN")
            c.execute("SELECT count(*) FROM profsum_trace").fetchall()
            other = connect(self.db_path)
            other.execute("SELECT profsum_import(?, ?)", (t, "other-%d" % k)).fetchall()
            other.close()
            with self.assertRaises(sqlite3.OperationalError) as cm:
                c.execute("SELECT profsum_import(?, 'stale')", (t,)).fetchall()
            self.assertIn("SQLITE_BUSY_SNAPSHOT", str(cm.exception))
            if hasattr(cm.exception, "sqlite_errorname"):
                self.assertEqual(cm.exception.sqlite_errorname, "SQLITE_BUSY_SNAPSHOT")
            c.execute("ROLLBACK")
            c.close()
        self.assertEqual(self.db.execute("SELECT count(*) FROM profsum_trace WHERE label='stale'").fetchone()[0], 0)

    def test_memory_database_stays(self):
        db = connect(":memory:")
        p = os.path.join(self.td.path, "before.json.gz")
        db.execute("SELECT profsum_import(?, 'a', '{\"warmup_steps\": 2}')", (p,))
        db.execute("SELECT profsum_import(?, 'b', '{\"warmup_steps\": 2}')", (os.path.join(self.td.path,
                                                                                         "after.json.gz"),))
        db.execute("SELECT profsum_track('a', 'b', 'm')").fetchall()
        self.assertEqual(db.execute("PRAGMA journal_mode").fetchone()[0], "memory")
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0], 1)
        db.close()


if __name__ == "__main__":
    unittest.main()


IMPORTER = r"""
import json, os, sqlite3, sys, time
db_path, so, wid, trace, n, go = sys.argv[1:7]
db = sqlite3.connect(db_path, timeout=5.0)
db.enable_load_extension(True)
db.load_extension(so)
while not os.path.exists(go):
    time.sleep(0.001)
ok, errors = 0, []
for i in range(int(n)):
    try:
        db.execute("SELECT profsum_import(?, ?)", (trace, "imp%s-%d" % (wid, i))).fetchall()
        ok += 1
    except sqlite3.Error as e:
        errors.append(str(e))
print(json.dumps({"ok": ok, "errors": errors}))
"""


class ConcurrentImports(unittest.TestCase):
    """8 processes import into one shared file database at once: every
    import lands (parsing happens before the write lock is taken)."""

    def test_eight_importers(self):
        with TempDir() as td:
            db_path = os.path.join(td.path, "shared.db")
            trace = td.write("f1.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
            go = os.path.join(td.path, "go")
            per = 10
            procs = [subprocess.Popen([sys.executable, "-c", IMPORTER, db_path, SO, str(w), trace, str(per), go],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(8)]
            open(go, "w").close()
            results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
            errors = [e for r in results for e in r["errors"]]
            self.assertEqual(errors, [])
            db = connect(db_path)
            self.assertEqual(db.execute("SELECT count(*), count(DISTINCT label) FROM profsum_trace").fetchone(),
                             (8 * per, 8 * per))
            self.assertEqual(db.execute("SELECT count(*) FROM profsum_sec_hot_op").fetchone()[0], 8 * per * 5)
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            db.close()


    def test_eight_reusers(self):
        """8 processes import one file with 'reuse' 5 times each, and a file of
        their own with the same derived label and 'unique_label' (two of them
        that one first): the shared file is stored once (checked again under
        the write lock), the own files under 8 distinct labels (chosen under
        the write lock)."""
        with TempDir() as td:
            db_path = os.path.join(td.path, "shared.db")
            trace = td.write("base.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
            own = []
            for w in range(8):
                os.makedirs(os.path.join(td.path, "w%d" % w))
                own.append(td.write(os.path.join("w%d" % w, "own.json.gz"),
                                    json.dumps(fixtures.f1([100 + w, 110, 120, 130, 140, 150], 60)), gz=True))
            go = os.path.join(td.path, "go")
            procs = [subprocess.Popen([sys.executable, "-c", REUSER, db_path, SO, trace, own[w], "5", go,
                                       "own-first" if w % 4 == 3 else "shared-first"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(8)]
            open(go, "w").close()
            results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
            self.assertEqual([e for r in results for e in r["errors"]], [])
            ids = {i for r in results for i in r["ids"]}
            self.assertEqual(len(ids), 1, ids)
            db = connect(db_path)
            self.assertEqual(db.execute("SELECT count(*) FROM profsum_trace WHERE label='base'").fetchone()[0], 1)
            self.assertEqual(sorted(r[0] for r in db.execute("SELECT label FROM profsum_trace WHERE label<>'base'")),
                             sorted(["own"] + ["own-%d" % k for k in range(2, 9)]))
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
            db.close()


# A writer process: replace label 'b' by one of two traces, in turn, until
# the stop file appears.
REPLACER = r"""
import os, sqlite3, sys
db_path, so, t1, t2, stop = sys.argv[1:6]
db = sqlite3.connect(db_path, timeout=60, isolation_level=None)
db.enable_load_extension(True)
db.load_extension(so)
n = 0
while not os.path.exists(stop):
    db.execute("SELECT profsum_import(?, 'b', '{\"replace\": true}')", (t1 if n % 2 else t2,)).fetchall()
    n += 1
print(n)
"""


class ReadersSeeOneState(unittest.TestCase):
    """A function that reads a stored trace with many statements (reports,
    comparisons) reads one state of the database while another process
    replaces that trace: its result is that of the old trace or of the new
    one, never a mixture, an error about an id, or a crash."""

    CALLS = [
        ("SELECT profsum_compare_md('a', 'b')", ()),
        ("SELECT profsum_report_md('b', 10, '{\"kpis\": true, \"profsum\": true}')", ()),
        ("SELECT profsum_compare_json('a', 'b')", ()),
        ("SELECT profsum_summary_json('b')", ()),
        ("SELECT profsum_report_html('b')", ()),
    ]

    def test_replace_beside_readers(self):
        with TempDir() as td:
            db_path = os.path.join(td.path, "shared.db")
            t1 = td.write("t1.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
            t2 = td.write("t2.json.gz", json.dumps(fixtures.f1([90, 100, 110, 120, 130, 140], 40)), gz=True)
            db = connect(db_path)
            db.execute("SELECT profsum_import(?, 'a')", (t1,)).fetchall()
            # what each call gives on each trace alone (the import time and
            # the trace id masked: they change with every replace)
            want = {}
            for t in (t1, t2):
                db.execute("SELECT profsum_import(?, 'b', '{\"replace\": true}')", (t,)).fetchall()
                for sql, args in self.CALLS:
                    want.setdefault(sql, set()).add(self.mask(db.execute(sql, args).fetchone()[0]))
            stop = os.path.join(td.path, "stop")
            w = subprocess.Popen([sys.executable, "-c", REPLACER, db_path, SO, t1, t2, stop],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                seen = 0
                deadline = time.time() + 6
                while time.time() < deadline:
                    for sql, args in self.CALLS:
                        got = self.mask(db.execute(sql, args).fetchone()[0])
                        self.assertTrue(got in want[sql], "%s: a result that is neither trace's" % sql)
                        seen += 1
            finally:
                open(stop, "w").close()
                out, err = w.communicate(timeout=120)
            self.assertEqual(w.returncode, 0, err)
            self.assertGreater(int(out), 2)          # the writer did replace meanwhile
            self.assertGreater(seen, 10)
            db.close()

    def test_other_attached_database_not_waited_for(self):
        """Only the schema a call reads is held: an attached database that
        another connection keeps locked (rollback journal, an exclusive
        lock) delays no report of main."""
        with TempDir() as td:
            db = connect(os.path.join(td.path, "m.db"))
            t = td.write("t.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
            db.execute("SELECT profsum_import(?, 'a')", (t,)).fetchall()
            other = os.path.join(td.path, "o.db")
            h = sqlite3.connect(other, isolation_level=None)
            h.execute("CREATE TABLE x(a)")
            db.execute("ATTACH ? AS o", (other,))
            db.execute("SELECT count(*) FROM o.x").fetchall()
            h.execute("BEGIN EXCLUSIVE")
            h.execute("INSERT INTO x VALUES (1)")
            try:
                db.execute("PRAGMA busy_timeout = 3000")
                t0 = time.time()
                doc = db.execute("SELECT profsum_summary_json('a')").fetchone()[0]
                self.assertLess(time.time() - t0, 2.0)
                self.assertIn('"schema_version": "profile_summary.v1"', doc)
            finally:
                h.execute("ROLLBACK")
                h.close()
            db.close()

    @staticmethod
    def mask(text):
        """text without what differs between two imports of one file."""
        import re
        text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?", "T", text)
        return re.sub(r"(trace[_ ]id\W+)\d+", r"\1N", text)


class Interrupted(unittest.TestCase):
    """busy.c after sqlite3_interrupt(): the write of profsum_track,
    interrupted at points spread over the whole call (from a progress
    handler), leaves no transaction open and either no record or the whole
    record."""

    def test_track_interrupted_anywhere(self):
        with TempDir() as td:
            paths = {}
            for label, steps, softmax in (("before", [100, 110, 120, 130, 140, 150], 60),
                                          ("after", [90, 100, 110, 120, 130, 140], 40)):
                paths[label] = td.write(label + ".json.gz", json.dumps(fixtures.f1(steps, softmax)), gz=True)
            seed = os.path.join(td.path, "seed.db")
            db = connect(seed)
            for label in ("before", "after"):
                db.execute("SELECT profsum_import(?, ?, '{\"warmup_steps\": 2}')", (paths[label], label))
            db.commit()
            db.close()

            def fresh():
                path = os.path.join(td.path, "t.db")
                for suffix in ("", "-wal", "-shm", "-journal"):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
                shutil.copy(seed, path)
                c = connect(path)
                c.isolation_level = None
                return c

            c = fresh()
            total = progress_calls(c, "SELECT profsum_track('before', 'after', 'x')", every=20)
            c.close()
            self.assertGreater(total, 20)
            outcomes = set()
            for k in sorted(set(range(1, total + 1, max(1, total // 30))) | {total}):
                with self.subTest(k=k):
                    c = fresh()
                    before = c.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
                    err = run_interrupted_at(c, k, "SELECT profsum_track('before', 'after', 'x')", every=20)
                    self.assertFalse(c.in_transaction, err)
                    names = [r[1] for r in c.execute("SELECT type, name FROM sqlite_master")]
                    recs = c.execute("SELECT count(*) FROM profsum_history_record").fetchone()[0] \
                        if "profsum_history_record" in names else 0
                    if recs:
                        outcomes.add("written")
                        self.assertEqual(recs, 1)
                    else:
                        outcomes.add("nothing")
                        self.assertIn("interrupted", err or "")
                        self.assertEqual(c.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall(),
                                         before)
                    c.execute("SELECT profsum_track('before', 'after', 'again')").fetchall()
                    c.close()
            self.assertIn("nothing", outcomes)


REUSER = r"""
import json, os, sqlite3, sys, time
db_path, so, trace, own, n, go, order = sys.argv[1:8]
db = sqlite3.connect(db_path, timeout=10.0)
db.enable_load_extension(True)
db.load_extension(so)
while not os.path.exists(go):
    time.sleep(0.001)
ids, errors = [], []
def own_import():
    try:
        db.execute("SELECT profsum_import(?, NULL, ?)", (own, json.dumps({"unique_label": True}))).fetchall()
    except sqlite3.Error as e:
        errors.append(str(e))
if order == "own-first":
    own_import()
for i in range(int(n)):
    try:
        ids.append(db.execute("SELECT profsum_import(?, NULL, ?)", (trace, json.dumps({"reuse": True}))).fetchone()[0])
    except sqlite3.Error as e:
        errors.append(str(e))
if order != "own-first":
    own_import()
print(json.dumps({"ids": ids, "errors": errors}))
"""
