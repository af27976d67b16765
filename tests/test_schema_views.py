"""The views of a new database are written as rows of its schema table
(ext/summary/schema_views.c): the rows equal those CREATE VIEW makes, every
connection sees the views at once, and a connection that forbids the
shortcut gets the views made by CREATE VIEW instead."""
import os
import re
import sqlite3
import unittest

from util import connect, SO, TempDir, ROOT

TRACE = {"traceEvents": [
    {"ph": "X", "name": "fusion.1", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "name": "fusion.2", "pid": 1, "tid": 1, "ts": 20, "dur": 7},
]}

# the views profsum makes: one per file of views/MANIFEST
with open(os.path.join(ROOT, "views", "MANIFEST")) as _f:
    N_VIEWS = sum(1 for _l in _f if _l.strip())

SCHEMA_ROWS = ("SELECT type, name, tbl_name, rootpage, sql FROM \"%s\".sqlite_schema "
               "ORDER BY rowid")


def script_order():
    """The names of the schema script's objects in its order (sql/schema.sql,
    then views/ in MANIFEST order)."""
    files = [os.path.join(ROOT, "sql", "schema.sql")]
    with open(os.path.join(ROOT, "views", "MANIFEST")) as f:
        files += [os.path.join(ROOT, line.strip()) for line in f if line.strip()]
    names = []
    for path in files:
        with open(path) as f:
            names += re.findall(r"^CREATE (?:TABLE|VIEW|INDEX|VIRTUAL TABLE) IF NOT EXISTS main\.(\w+)",
                                f.read(), re.M)
    return names


def apsw_connect(path, defensive):
    """An APSW connection to path with profsum loaded, in defensive mode or not
    (Python's sqlite3 module cannot set it)."""
    import apsw
    db = apsw.Connection(path)
    db.enableloadextension(True)
    db.loadextension(SO)
    db.enableloadextension(False)
    db.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1 if defensive else 0)
    return db


def stmt_text(s):
    """A traced statement's text without the "-- " SQLite puts before the
    statements another statement runs."""
    return (s[3:] if s.startswith("-- ") else s).lstrip()


def count_create_view(seen):
    """The CREATE VIEW statements among the traced ones (the script's
    comments may come before them; a row's text has no IF NOT EXISTS)."""
    return len([s for s in seen if "CREATE VIEW IF NOT EXISTS" in s])


def traced_import(db, trace, extra=""):
    """Import trace into db, returning the statements SQLite ran for it."""
    seen = []
    db.set_trace_callback(seen.append)
    try:
        db.execute("SELECT profsum_import(?, 'run'%s)" % extra, (trace,)).fetchall()
    finally:
        db.set_trace_callback(None)
    return seen


class SchemaViewsAsRows(unittest.TestCase):

    def setUp(self):
        self.td = TempDir()
        self.trace = self.td.write("t.json", TRACE)

    def tearDown(self):
        self.td.__exit__()

    def test_rows_written_directly(self):
        db = connect(os.path.join(self.td.path, "a.db"))
        seen = traced_import(db, self.trace)
        inserts = [s for s in seen if "sqlite_schema(type, name, tbl_name, rootpage, sql)" in s]
        self.assertEqual(count_create_view(seen), 0)
        self.assertGreater(len(seen), N_VIEWS)
        self.assertEqual(len(inserts), N_VIEWS)        # one per view: the statement is traced per step
        n = db.execute("SELECT count(*) FROM sqlite_schema WHERE type='view'").fetchone()[0]
        self.assertEqual(n, N_VIEWS)
        # the setting is back as it was, the views read, the file is sound
        self.assertEqual(db.execute("PRAGMA writable_schema").fetchone()[0], 0)
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_overview").fetchone()[0], 1)
        self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        db.close()

    def _rows(self, name, defensive, schema="main", attach=None):
        """The schema rows of a database made by an import through APSW."""
        path = os.path.join(self.td.path, name)
        db = apsw_connect(path, defensive)
        opts = ""
        if attach:
            db.execute("ATTACH ? AS \"%s\"" % attach.replace('"', '""'),
                       (os.path.join(self.td.path, "att-" + name),))
            opts = ", json_object('schema', %s)" % ("'" + attach.replace("'", "''") + "'")
        db.execute("SELECT profsum_import(?, 'run'%s)" % opts, (self.trace,))
        rows = list(db.execute(SCHEMA_ROWS % schema.replace('"', '""')))
        views = list(db.execute("SELECT count(*) FROM \"%s\".profsum_overview" % schema.replace('"', '""')))
        db.close()
        return rows, views

    def test_rows_equal_those_of_create_view(self):
        try:
            import apsw  # noqa: F401
        except ImportError:
            self.skipTest("APSW (python3-apsw, installed by make deps) is missing")
        fast, n1 = self._rows("fast.db", False)
        slow, n2 = self._rows("slow.db", True)
        self.assertEqual(n1, [(1,)])
        self.assertEqual(n2, [(1,)])
        self.assertEqual(len([r for r in fast if r[0] == "view"]), N_VIEWS)
        self.assertEqual(fast, slow)
        # a schema whose name needs quoting
        fast, n1 = self._rows("fast2.db", False, 'we"ird', 'we"ird')
        slow, n2 = self._rows("slow2.db", True, 'we"ird', 'we"ird')
        self.assertEqual(n1, [(1,)])
        self.assertEqual(fast, slow)
        self.assertEqual(len([r for r in fast if r[0] == "view"]), N_VIEWS)

    def test_defensive_connection_uses_create_view(self):
        try:
            import apsw  # noqa: F401
        except ImportError:
            self.skipTest("APSW (python3-apsw, installed by make deps) is missing")
        path = os.path.join(self.td.path, "d.db")
        db = apsw_connect(path, True)
        seen = []
        db.setprofile(lambda sql, ns: seen.append(sql))
        db.execute("SELECT profsum_import(?, 'run')", (self.trace,))
        db.setprofile(None)
        self.assertEqual(count_create_view(seen), N_VIEWS)
        self.assertEqual(list(db.execute("SELECT count(*) FROM profsum_overview")), [(1,)])
        db.close()

    def test_other_connection_sees_the_views(self):
        path = os.path.join(self.td.path, "b.db")
        a = connect(path)
        b = connect(path)
        # b has read the (empty) schema before a writes it
        self.assertEqual(b.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0], 0)
        a.execute("SELECT profsum_import(?, 'run')", (self.trace,)).fetchall()
        a.commit()
        self.assertEqual(b.execute("SELECT count(*) FROM profsum_overview").fetchone()[0], 1)
        self.assertEqual(b.execute("SELECT count(*) FROM profsum_kpis WHERE label='run'").fetchone()[0] > 0,
                         True)
        a.close()
        b.close()

    def test_writable_schema_left_on_when_it_was(self):
        db = connect(os.path.join(self.td.path, "w.db"))
        db.execute("PRAGMA writable_schema=ON")
        traced_import(db, self.trace)
        self.assertEqual(db.execute("PRAGMA writable_schema").fetchone()[0], 1)
        db.execute("PRAGMA writable_schema=OFF")
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_overview").fetchone()[0], 1)
        db.close()

    def test_a_taken_name_uses_create_view(self):
        # a user table named like a view: CREATE VIEW IF NOT EXISTS leaves it
        db = connect(os.path.join(self.td.path, "n.db"))
        db.execute("CREATE TABLE profsum_kpis(x)")
        db.execute("INSERT INTO profsum_kpis VALUES(7)")
        db.commit()
        seen = traced_import(db, self.trace)
        self.assertEqual(count_create_view(seen), N_VIEWS)
        self.assertEqual(db.execute("SELECT type FROM sqlite_schema WHERE name='profsum_kpis'").fetchall(),
                         [("table",)])
        self.assertEqual(db.execute("SELECT x FROM profsum_kpis").fetchall(), [(7,)])
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_overview").fetchone()[0], 1)
        db.close()

    def test_refused_schema_write_fails_cleanly(self):
        # an authorizer that refuses writes to the schema table refuses
        # CREATE VIEW's too: the import fails as before, and leaves nothing
        db = connect(os.path.join(self.td.path, "r.db"))

        def auth(action, a1, a2, dbname, source):
            if action == sqlite3.SQLITE_INSERT and a1 == "sqlite_master":
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        db.set_authorizer(auth)
        with self.assertRaises(sqlite3.DatabaseError) as cm:
            db.execute("SELECT profsum_import(?, 'run')", (self.trace,)).fetchall()
        db.set_authorizer(None)
        self.assertIn("not authorized", str(cm.exception))
        self.assertEqual(db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0], 0)
        self.assertEqual(db.execute("PRAGMA writable_schema").fetchone()[0], 0)
        db.close()


class SchemaViewsFailures(unittest.TestCase):
    """What the statements' way did when SQLite or the connection refused
    something, the shortcut does too."""

    def setUp(self):
        self.td = TempDir()
        self.trace = self.td.write("t.json", TRACE)

    def tearDown(self):
        self.td.__exit__()

    def test_order_of_the_script(self):
        db = connect(os.path.join(self.td.path, "o.db"))
        traced_import(db, self.trace)
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' "
                                          "ORDER BY rowid")]
        self.assertEqual(names, script_order())
        self.assertIn("profsum_series_runs", names)
        db.close()

    def test_full_disk_leaves_nothing(self):
        # at every size from too small for anything to enough: the import
        # fails with SQLite's reason and leaves no object, or succeeds
        outcomes = set()
        for pages in range(2, 100):
            path = os.path.join(self.td.path, "full%d.db" % pages)
            db = connect(path)
            db.execute("PRAGMA max_page_count=%d" % pages)
            try:
                db.execute("SELECT profsum_import(?, 'run')", (self.trace,)).fetchall()
                outcomes.add("ok")
                self.assertEqual(db.execute("SELECT count(*) FROM sqlite_schema WHERE type='view'").fetchone()[0],
                                 N_VIEWS)
            except sqlite3.DatabaseError as e:
                outcomes.add("full")
                self.assertIn("full", str(e), pages)
                db.close()
                db = sqlite3.connect(path)
                self.assertEqual(db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0], 0, pages)
            db.close()
        self.assertEqual(outcomes, {"ok", "full"})

    def _with_authorizer(self, deny, name):
        """Import under an authorizer; (error text or None, views made)."""
        db = connect(os.path.join(self.td.path, name))

        def auth(action, a1, a2, dbname, source):
            return deny(action, a1, a2)
        db.set_authorizer(auth)
        err = None
        try:
            db.execute("SELECT profsum_import(?, 'run')", (self.trace,)).fetchall()
        except sqlite3.DatabaseError as e:
            err = str(e)
        db.set_authorizer(None)
        n = db.execute("SELECT count(*) FROM sqlite_schema WHERE type='view'").fetchone()[0]
        self.assertEqual(db.execute("PRAGMA writable_schema").fetchone()[0], 0)
        db.close()
        return err, n

    def test_authorizer_denying_create_view(self):
        err, n = self._with_authorizer(
            lambda act, a1, a2: sqlite3.SQLITE_DENY if act == sqlite3.SQLITE_CREATE_VIEW else sqlite3.SQLITE_OK,
            "deny.db")
        self.assertIn("not authorized", err)
        self.assertEqual(n, 0)

    def test_authorizer_ignoring_create_view(self):
        # CREATE VIEW then does nothing: no view, as with the statements
        err, n = self._with_authorizer(
            lambda act, a1, a2: sqlite3.SQLITE_IGNORE if act == sqlite3.SQLITE_CREATE_VIEW else sqlite3.SQLITE_OK,
            "ignore.db")
        self.assertIsNone(err)
        self.assertEqual(n, 0)

    def test_authorizer_denying_pragma_writes(self):
        # the schema version cannot be written: the statements instead
        err, n = self._with_authorizer(
            lambda act, a1, a2: (sqlite3.SQLITE_DENY if act == sqlite3.SQLITE_PRAGMA and a2 is not None
                                 else sqlite3.SQLITE_OK),
            "pragma.db")
        self.assertIsNone(err)
        self.assertEqual(n, N_VIEWS)

    def test_short_sql_length_limit(self):
        # a view longer than the limit: refused as CREATE VIEW refuses it
        db = connect(os.path.join(self.td.path, "lim.db"))
        db.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, 9000)
        with self.assertRaises(sqlite3.DatabaseError) as cm:
            db.execute("SELECT profsum_import(?, 'run')", (self.trace,)).fetchall()
        self.assertNotIn("malformed", str(cm.exception))
        self.assertEqual(db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0], 0)
        db.close()


if __name__ == "__main__":
    unittest.main()
