"""A database made by another profsum: its views are created again, its
tables get the columns they lack, profsum_meta says which schema shaped it
(ext/schema.c)."""
import json
import os
import re
import sqlite3
import unittest

import fixtures
from util import connect, TempDir


def rows(db, sql, *args):
    return db.execute(sql, args).fetchall()


def objects(db, schema="main"):
    return rows(db, "SELECT type, name, sql FROM \"%s\".sqlite_schema ORDER BY type, name" % schema)


def columns(db, table, schema="main"):
    return rows(db, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_xinfo(?, ?) ORDER BY cid",
                table, schema)


def profsum_tables(db, schema="main"):
    return [r[0] for r in rows(db, "SELECT name FROM \"%s\".sqlite_schema WHERE type='table' "
                                   "AND name LIKE 'profsum%%' AND name NOT IN ('profsum_event', 'profsum_series_runs') ORDER BY name"
                               % schema)]


def rebuild(db, table, keep, schema="main"):
    """Make `table` a table of the columns `keep` (names, in that order),
    with its rows, as an older profsum could have left it."""
    cols = ", ".join('"%s"' % c for c in keep)
    # the legacy rename does not check the views that name the table
    db.execute("PRAGMA legacy_alter_table=ON")
    db.execute("CREATE TABLE \"%s\".tmp_old AS SELECT %s FROM \"%s\".\"%s\"" % (schema, cols, schema, table))
    db.execute("DROP TABLE \"%s\".\"%s\"" % (schema, table))
    db.execute("ALTER TABLE \"%s\".tmp_old RENAME TO \"%s\"" % (schema, table))
    db.execute("PRAGMA legacy_alter_table=OFF")


def strip_columns(sql, names):
    """The CREATE TABLE text sql without the lines that define the columns
    `names` (the schema script writes one column per line)."""
    out = []
    for line in sql.split("\n"):
        word = line.strip().split(" ")[0]
        if word in names:
            continue
        out.append(line)
    text = "\n".join(out)
    # the column line before the dropped ones may now end the list
    text = re.sub(r",(\s*(--[^\n]*)?\n)\)", lambda m: m.group(1) + ")", text)
    return text


class SchemaUpgrade(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db = connect(os.path.join(self.td.path, "h.db"))
        self.trace = self.td.write("t.json.gz", json.dumps(fixtures.f2()), gz=True)
        fresh = connect(":memory:")
        fresh.execute("SELECT profsum_import(?, 'x')", (self.trace,)).fetchone()
        self.fresh_objects = objects(fresh)
        self.fresh_cols = {t: columns(fresh, t) for t in profsum_tables(fresh)}
        self.fresh_meta = rows(fresh, "SELECT key, value FROM profsum_meta ORDER BY key")
        fresh.close()

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def imp(self, label):
        return self.db.execute("SELECT profsum_import(?, ?)", (self.trace, label)).fetchone()[0]

    def make_old(self):
        """Mark the database as made by another profsum."""
        self.db.execute("UPDATE profsum_meta SET value='0-0' WHERE key='schema_id'")

    def test_meta_rows(self):
        self.imp("a")
        meta = dict(rows(self.db, "SELECT key, value FROM profsum_meta"))
        self.assertEqual(sorted(meta), ["profsum_version", "schema_id"])
        self.assertEqual(meta["profsum_version"], self.db.execute("SELECT profsum_version()").fetchone()[0])
        self.assertRegex(meta["schema_id"], r"^[0-9]+-[0-9]+$")

    def test_old_view_text_is_replaced(self):
        self.imp("a")
        self.db.execute("DROP VIEW profsum_kpis")
        self.db.execute("CREATE VIEW profsum_kpis AS SELECT 1 AS old_column")
        self.db.execute("DROP VIEW profsum_hot_ops")
        self.db.execute("CREATE VIEW profsum_hot_ops AS SELECT 'stale' AS name")
        # a user's own view and table are not touched
        self.db.execute("CREATE VIEW my_view AS SELECT label FROM profsum_trace")
        self.db.execute("CREATE TABLE my_notes(x)")
        self.db.execute("INSERT INTO my_notes VALUES (42)")
        self.make_old()
        self.db.commit()
        self.imp("b")
        mine = [o for o in objects(self.db) if o[1] in ("my_view", "my_notes")]
        self.assertEqual([o for o in objects(self.db) if o[1] not in ("my_view", "my_notes")],
                         self.fresh_objects)
        self.assertEqual(mine, [("table", "my_notes", "CREATE TABLE my_notes(x)"),
                                ("view", "my_view", "CREATE VIEW my_view AS SELECT label FROM profsum_trace")])
        self.assertEqual(rows(self.db, "SELECT x FROM my_notes"), [(42,)])
        self.assertEqual(rows(self.db, "SELECT count(*) FROM my_view"), [(2,)])
        self.assertEqual(rows(self.db, "SELECT key, value FROM profsum_meta ORDER BY key"), self.fresh_meta)
        self.assertEqual(rows(self.db, "SELECT count(DISTINCT trace_id) FROM profsum_hot_ops"), [(2,)])

    def test_database_before_profsum_meta(self):
        # the first profsums wrote no profsum_meta: such a database is upgraded
        self.imp("a")
        self.db.execute("DROP TABLE profsum_meta")
        self.db.execute("DROP VIEW profsum_overview")
        self.db.execute("CREATE VIEW profsum_overview AS SELECT 0 AS stale")
        self.db.commit()
        self.imp("b")
        self.assertEqual(objects(self.db), self.fresh_objects)
        self.assertEqual(rows(self.db, "SELECT key, value FROM profsum_meta ORDER BY key"), self.fresh_meta)

    def test_current_database_is_left_as_it_is(self):
        # when profsum_meta names this schema and every object exists,
        # nothing is parsed or rewritten (a view a user edited stays)
        self.imp("a")
        self.db.execute("DROP VIEW profsum_steps")
        self.db.execute("CREATE VIEW profsum_steps AS SELECT 'edited' AS note")
        self.db.commit()
        self.imp("b")
        self.assertEqual(rows(self.db, "SELECT * FROM profsum_steps"), [("edited",)])

    def test_dropped_run_order_table_is_made_again(self):
        # profsum_series_runs is part of the schema like a view: a database
        # without it is not current, and the next import makes it again
        self.db.execute("SELECT profsum_import(?, 'a', '{\"series\": \"s\"}')", (self.trace,)).fetchone()
        self.db.execute("SELECT profsum_import(?, 'b', '{\"series\": \"s\"}')", (self.trace,)).fetchone()
        self.db.execute("DROP TABLE profsum_series_runs")
        self.db.commit()
        with self.assertRaises(sqlite3.OperationalError):
            self.db.execute("SELECT count(*) FROM profsum_trend").fetchone()
        self.imp("c")
        self.assertEqual(rows(self.db, "SELECT type FROM sqlite_schema WHERE name = 'profsum_series_runs'"),
                         [("table",)])
        self.assertEqual(rows(self.db, "SELECT label, run_index FROM profsum_trend ORDER BY run_index"),
                         [("a", 1), ("b", 2)])

    def test_every_table_missing_its_last_columns(self):
        # every table that ends with columns ALTER TABLE can add (nullable
        # or with a default) loses them; the import adds them back with the
        # script's definitions (which checks the script's column lines)
        a = self.imp("a")
        doc_a = self.db.execute("SELECT profsum_summary_json('a')").fetchone()[0]
        tables = profsum_tables(self.db)
        self.assertGreater(len(tables), 15)
        cut = {}
        for t in tables:
            cols = self.fresh_cols[t]
            n = len(cols)
            while n > 1 and cols[n - 1][4] == 0 and (cols[n - 1][2] == 0 or cols[n - 1][3] is not None):
                n -= 1
            if n < len(cols):
                cut[t] = len(cols) - n
                self.db.execute("CREATE TABLE tmp_old AS SELECT * FROM \"%s\"" % t)
                self.db.execute("DROP TABLE \"%s\"" % t)
                # the table's own definition without those columns
                self.db.execute(strip_columns(dict((o[1], o[2]) for o in self.fresh_objects)[t],
                                              [c[0] for c in cols[n:]]))
                self.db.execute("INSERT INTO \"%s\" SELECT %s FROM tmp_old"
                                % (t, ", ".join('"%s"' % c[0] for c in cols[:n])))
                self.db.execute("DROP TABLE tmp_old")
        self.assertGreaterEqual(len(cut), 8)
        self.assertIn("profsum_trace", cut)
        self.make_old()
        self.db.commit()
        b = self.imp("b")
        for t in tables:
            self.assertEqual(columns(self.db, t), self.fresh_cols[t], t)
        self.assertEqual(rows(self.db, "SELECT key, value FROM profsum_meta ORDER BY key"), self.fresh_meta)
        doc_b = json.loads(self.db.execute("SELECT profsum_summary_json('b')").fetchone()[0])
        fresh = connect(":memory:")
        fresh.execute("SELECT profsum_import(?, 'b')", (self.trace,)).fetchone()
        want = json.loads(fresh.execute("SELECT profsum_summary_json('b')").fetchone()[0])
        fresh.close()
        for d in (doc_b, want):
            d.pop("generated_at_utc")
        self.assertEqual(doc_b, want)
        self.assertNotEqual(a, b)
        self.assertTrue(doc_a)

    def test_added_column_keeps_rows(self):
        a = self.imp("a")
        before = rows(self.db, "SELECT name, count, total_duration, exclusive_duration FROM profsum_agg_op "
                               "WHERE trace_id=? ORDER BY name", a)
        names = [c[0] for c in columns(self.db, "profsum_agg_op")]
        self.assertEqual(names[-4:], ["tf_op_path", "flop_proxy_per_invocation", "exclusive_ref", "total_ref"])
        rebuild(self.db, "profsum_agg_op", names[:-4])
        self.make_old()
        self.db.commit()
        self.imp("b")
        self.assertEqual(rows(self.db, "SELECT name, count, total_duration, exclusive_duration FROM profsum_agg_op "
                                       "WHERE trace_id=? ORDER BY name", a), before)
        self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_agg_op WHERE trace_id=? "
                                       "AND tf_op_path IS NULL AND flop_proxy_per_invocation IS NULL", a),
                         [(len(before),)])
        got = columns(self.db, "profsum_agg_op")
        self.assertEqual([c[0] for c in got], [c[0] for c in self.fresh_cols["profsum_agg_op"]])
        self.assertEqual(got[-4:], self.fresh_cols["profsum_agg_op"][-4:])

    def test_track_and_bundle_upgrade_before_they_read(self):
        # a database whose profsum_agg_op lacks the columns a record reads
        # (as the first profsums left it, with no profsum_meta): track and
        # bundle bring it up first, in their own transaction, as an import
        # does, instead of failing on 'no such column'
        for fn in ("track", "bundle"):
            with self.subTest(fn=fn):
                self.imp(fn + "-a")
                self.imp(fn + "-b")
                names = [c[0] for c in columns(self.db, "profsum_agg_op")]
                rebuild(self.db, "profsum_agg_op", names[:-4])
                self.db.execute("DROP TABLE profsum_meta")
                self.db.commit()
                if fn == "track":
                    rec = self.db.execute("SELECT profsum_track('track-a', 'track-b', 'r')").fetchone()[0]
                else:
                    out = os.path.join(self.td.path, "bundle")
                    rec = self.db.execute("SELECT profsum_bundle('bundle-a', 'bundle-b', ?, '{\"history\": true}')",
                                          (out,)).fetchone()[0]
                self.assertTrue(rec)
                self.assertEqual(rows(self.db, "SELECT key, value FROM profsum_meta ORDER BY key"),
                                 self.fresh_meta)
                self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_history_record"),
                                 [(1 if fn == "track" else 2,)])
                self.assertEqual([c[0] for c in columns(self.db, "profsum_agg_op")],
                                 [c[0] for c in self.fresh_cols["profsum_agg_op"]])

    def test_readers_on_an_old_database_and_profsum_upgrade(self):
        # the reading functions never change the schema: on a database an
        # older profsum made they may fail, and their message says how to
        # bring it up; profsum_upgrade() does it without an import
        a = self.imp("a")
        want = self.db.execute("SELECT profsum_summary_json('a')").fetchone()[0]
        names = [c[0] for c in columns(self.db, "profsum_agg_op")]
        rebuild(self.db, "profsum_agg_op", names[:-4])
        self.make_old()
        self.db.commit()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT profsum_summary_json('a')").fetchone()
        self.assertIn("no such column", str(cm.exception))
        self.assertIn("(made by another profsum build: SELECT profsum_upgrade() brings its schema "
                      "to this one's, as any import does)", str(cm.exception))
        self.assertEqual(self.db.execute("SELECT profsum_upgrade()").fetchone()[0], 1)
        self.assertEqual(rows(self.db, "SELECT key, value FROM profsum_meta ORDER BY key"), self.fresh_meta)
        self.assertEqual(self.db.execute("SELECT profsum_upgrade('main')").fetchone()[0], 0)
        got = self.db.execute("SELECT profsum_summary_json(?)", (a,)).fetchone()[0]
        self.assertTrue(got.startswith("{"))
        with self.assertRaisesRegex(sqlite3.OperationalError, "^profsum_upgrade: 'nope' is not an attached database$"):
            self.db.execute("SELECT profsum_upgrade('nope')").fetchone()
        # never the profsum schema in a database profsum did not make
        other = os.path.join(self.td.path, "mine.db")
        o = sqlite3.connect(other)
        o.execute("CREATE TABLE mine(x)")
        o.commit()
        o.close()
        self.db.execute("ATTACH ? AS mine", (other,))
        with self.assertRaisesRegex(sqlite3.OperationalError, "^profsum_upgrade: schema 'mine' holds no "
                                    "profsum tables \\(nothing to upgrade; an import creates them\\)$"):
            self.db.execute("SELECT profsum_upgrade('mine')").fetchone()
        self.assertEqual(self.db.execute("SELECT count(*) FROM mine.sqlite_master").fetchone()[0], 1)
        with self.assertRaisesRegex(sqlite3.OperationalError, "^profsum_upgrade: 'temp' is not an attached"):
            self.db.execute("SELECT profsum_upgrade('temp')").fetchone()
        self.db.execute("DETACH mine")
        # an old attached database: the hint names it
        self.db.execute("ATTACH ? AS h", (os.path.join(self.td.path, "h2.db"),))
        self.db.execute("SELECT profsum_import(?, 'x', '{\"schema\": \"h\"}')", (self.trace,)).fetchone()
        rebuild(self.db, "profsum_agg_op", names[:-4], schema="h")
        self.db.execute("UPDATE h.profsum_meta SET value='0-0' WHERE key='schema_id'")
        self.db.commit()
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT profsum_summary_json('x', '{\"schema\": \"h\"}')").fetchone()
        self.assertIn("SELECT profsum_upgrade('h') brings", str(cm.exception))
        self.assertEqual(self.db.execute("SELECT profsum_upgrade('h')").fetchone()[0], 1)
        self.db.execute("DETACH h")
        # a stored view cannot call it (it writes)
        self.db.execute("CREATE VIEW up AS SELECT profsum_upgrade() AS x")
        with self.assertRaisesRegex(sqlite3.OperationalError, "unsafe use of profsum_upgrade"):
            self.db.execute("SELECT * FROM up").fetchone()
        self.assertTrue(want)

    def test_table_with_other_columns_and_rows_is_an_error(self):
        self.imp("a")
        names = [c[0] for c in columns(self.db, "profsum_agg_comm")]
        rebuild(self.db, "profsum_agg_comm", [names[0], names[2], names[1]] + names[3:])
        self.make_old()
        self.db.commit()
        before = objects(self.db)
        with self.assertRaises(sqlite3.Error) as cm:
            self.imp("b")
        msg = str(cm.exception)
        self.assertIn("profsum_import: the table 'main.profsum_agg_comm' was made by another version of profsum", msg)
        self.assertIn("(it has: trace_id,count,collective,total_duration,total_ref; "
                      "this profsum needs: trace_id,collective,count,total_duration,total_ref); "
                      "import into a new database file", msg)
        # nothing changed: no view dropped, no trace added, meta as it was
        self.assertEqual(objects(self.db), before)
        self.assertEqual(rows(self.db, "SELECT label FROM profsum_trace"), [("a",)])
        self.assertEqual(rows(self.db, "SELECT value FROM profsum_meta WHERE key='schema_id'"), [("0-0",)])

    def test_table_with_other_columns_and_no_rows(self):
        # SQLite refuses DROP TABLE while the import's statement runs: the
        # message says to drop the empty table; after that the import works
        self.imp("a")
        self.db.execute("DROP TABLE profsum_history_record")
        self.db.execute("CREATE TABLE profsum_history_record(record_id INTEGER PRIMARY KEY, odd TEXT)")
        self.make_old()
        self.db.commit()
        with self.assertRaises(sqlite3.Error) as cm:
            self.imp("b")
        self.assertIn("the table 'main.profsum_history_record' was made by another version of profsum and "
                      "cannot be brought to this one's columns (it has: record_id,odd; this profsum needs: "
                      "record_id,created_at,label,status,before_trace_id,after_trace_id,series,origin,record_json); "
                      "import into a new database file, or, as it has no rows, run DROP TABLE "
                      "\"main\".\"profsum_history_record\" and import again", str(cm.exception))
        self.db.execute("DROP TABLE \"main\".\"profsum_history_record\"")
        self.db.commit()
        self.imp("b")
        self.assertEqual(columns(self.db, "profsum_history_record"), self.fresh_cols["profsum_history_record"])
        self.assertEqual(objects(self.db), self.fresh_objects)

    def test_not_null_column_without_default(self):
        # ALTER TABLE cannot add "total_duration REAL NOT NULL": an error that
        # gives SQLite's reason
        self.imp("a")
        names = [c[0] for c in columns(self.db, "profsum_agg_comm")]
        self.assertEqual(names[-2:], ["total_duration", "total_ref"])
        rebuild(self.db, "profsum_agg_comm", names[:-2])
        self.make_old()
        self.db.commit()
        self.assertGreater(rows(self.db, "SELECT count(*) FROM profsum_agg_comm")[0][0], 0)
        with self.assertRaises(sqlite3.Error) as cm:
            self.imp("b")
        self.assertIn("'main.profsum_agg_comm' was made by another version of profsum and cannot be brought "
                      "to this one's columns (it has: trace_id,collective,count; this profsum needs: "
                      "trace_id,collective,count,total_duration,total_ref) (adding total_duration: Cannot add a NOT NULL "
                      "column with default value NULL); import into a new database file", str(cm.exception))
        self.assertNotIn("DROP TABLE", str(cm.exception))

    def test_attached_schema_is_upgraded(self):
        other = os.path.join(self.td.path, "other.db")
        self.db.execute("ATTACH ? AS hist", (other,))
        self.db.execute("SELECT profsum_import(?, 'a', '{\"schema\": \"hist\"}')", (self.trace,)).fetchone()
        self.db.execute("DROP VIEW hist.profsum_gaps")
        self.db.execute("CREATE VIEW hist.profsum_gaps AS SELECT 'stale' AS s")
        self.db.execute("UPDATE hist.profsum_meta SET value='0-0' WHERE key='schema_id'")
        self.db.commit()
        self.db.execute("SELECT profsum_import(?, 'b', '{\"schema\": \"hist\"}')", (self.trace,)).fetchone()
        self.assertEqual(objects(self.db, "hist"), self.fresh_objects)
        self.assertEqual(rows(self.db, "SELECT count(*) FROM main.sqlite_schema"), [(0,)])

    def test_history_write_upgrades(self):
        # profsum_track writes into the history: it brings the schema up too
        self.imp("a")
        self.imp("b")
        self.db.execute("DROP VIEW profsum_history")
        self.db.execute("CREATE VIEW profsum_history AS SELECT 'stale' AS s")
        self.make_old()
        self.db.commit()
        self.db.execute("SELECT profsum_track('a', 'b', 'r1')").fetchone()
        self.assertEqual(objects(self.db), self.fresh_objects)
        self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_history"), [(1,)])


if __name__ == "__main__":
    unittest.main()
