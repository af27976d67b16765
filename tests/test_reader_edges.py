"""trace_events edge cases: pipes and FIFOs with two-pass
queries, the hidden path column, the track model's time origin, and
zero-length B/E slices."""
import json
import os
import sqlite3
import subprocess
import sys
import unittest

from util import connect, TempDir, SO, DbTestCase

# A child process runs the queries that read a FIFO or stdin: a hang there
# is a timeout (a failure), never a hung suite.
CHILD = r"""
import json, os, sqlite3, sys, threading
so, path, src, sql = sys.argv[1:5]
if src != "-":
    def writer():
        try:
            with open(src, "rb") as f:
                data = f.read()
            with open(path, "wb") as w:
                w.write(data)
        except OSError:
            pass          # the reader refused (closed early): fine
    threading.Thread(target=writer, daemon=True).start()
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(so)
try:
    out = {"rows": [list(r) for r in db.execute(sql)]}
except sqlite3.Error as e:
    out = {"error": str(e)}
sys.stdout.write(json.dumps(out))
sys.stdout.flush()
os._exit(0)       # never wait for a writer thread stuck in open()
"""

EVENTS = [
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "host"}},
    {"ph": "X", "pid": 1, "tid": 1, "name": "outer", "ts": 0, "dur": 10},
    {"ph": "X", "pid": 1, "tid": 1, "name": "inner", "ts": 2, "dur": 3},
    {"ph": "B", "pid": 1, "tid": 2, "name": "step", "ts": 5},
    {"ph": "E", "pid": 1, "tid": 2, "name": "step", "ts": 9},
]

TIMEOUT = 20


def q(db, sql, *args):
    return db.execute(sql, args).fetchall()


class Pipes(unittest.TestCase):
    """A two-pass query on a non-regular file is an immediate, clear error;
    a one-pass query reads it."""

    def setUp(self):
        self.td = TempDir()
        self.src = self.td.write("t.json", {"traceEvents": EVENTS})
        self.gz = self.td.write("t.json.gz", {"traceEvents": EVENTS}, gz=True)

    def tearDown(self):
        self.td.__exit__()

    def child(self, path, src, sql, stdin=None):
        try:
            p = subprocess.run([sys.executable, "-c", CHILD, SO, path, src, sql],
                               input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.fail("the query on %r did not finish in %d s (hangs)" % (path, TIMEOUT))
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        return json.loads(p.stdout.decode())

    def fifo(self, name="f"):
        p = os.path.join(self.td.path, name)
        os.mkfifo(p)
        return p

    def assertRefused(self, out, path):
        self.assertIn("error", out, out)
        e = out["error"]
        self.assertIn("trace_events", e)
        self.assertIn("'%s'" % path, e)
        self.assertIn("not a regular file", e)
        self.assertIn("reads the trace twice", e)

    def test_fifo_two_pass_refused(self):
        for col in ("dur", "dur_ps", "process_name", "thread_name", "depth",
                    "parent_idx", "excl", "excl_ps"):
            with self.subTest(col=col):
                f = self.fifo("f_" + col)
                out = self.child(f, self.src, "SELECT count(%s) FROM trace_events('%s')" % (col, f))
                self.assertRefused(out, f)

    def test_fifo_one_pass_reads(self):
        f = self.fifo()
        out = self.child(f, self.src, "SELECT count(*), group_concat(name) FROM trace_events('%s')" % f)
        self.assertEqual(out, {"rows": [[5, "process_name,outer,inner,step,step"]]})
        f2 = self.fifo("g")
        out = self.child(f2, self.gz, "SELECT count(*), sum(ts) FROM trace_events('%s')" % f2)
        self.assertEqual(out, {"rows": [[5, 16000]]})

    def test_stdin(self):
        data = open(self.src, "rb").read()
        out = self.child("/dev/stdin", "-", "SELECT count(*) FROM trace_events('/dev/stdin')", stdin=data)
        self.assertEqual(out, {"rows": [[5]]})
        out = self.child("/dev/stdin", "-", "SELECT count(dur) FROM trace_events('/dev/stdin')", stdin=data)
        self.assertRefused(out, "/dev/stdin")

    def test_import_refuses_pipes(self):
        # profsum_import reads a file more than once (its top-level keys,
        # then the events): a pipe is refused at once, never half-read
        data = open(self.src, "rb").read()
        out = self.child("/dev/stdin", "-", "SELECT profsum_import('/dev/stdin', 'x')", stdin=data)
        self.assertIn("error", out, out)
        self.assertIn("profsum_import: '/dev/stdin' is not a regular file (a pipe?)", out["error"])
        self.assertIn("write it to a file first", out["error"])
        f = self.fifo("imp")
        out = self.child(f, self.src, "SELECT profsum_import('%s', 'x')" % f)
        self.assertIn("profsum_import: '%s' is not a regular file (a pipe?)" % f, out["error"])

    def test_regular_file_two_pass_unchanged(self):
        db = connect()
        try:
            self.assertEqual(q(db, "SELECT count(dur), count(depth) FROM trace_events(?)", self.gz),
                             [(3, 3)])
        finally:
            db.close()


class PathColumn(DbTestCase):
    """The hidden path column returns the argument as given."""

    def setUp(self):
        super().setUp()
        self.a = self.td.write("a.json", {"traceEvents": EVENTS})
        self.b = self.td.write("b.json", {"traceEvents": EVENTS[:2] + [{"ph": "E", "pid": 1, "tid": 1, "ts": 1}]})

    def test_group_by_path(self):
        rows = q(self.db, "SELECT path, count(*) FROM trace_events WHERE path IN (?, ?) "
                 "GROUP BY path ORDER BY path", self.a, self.b)
        self.assertEqual(rows, [(self.a, 5), (self.b, 3)])

    def test_function_form(self):
        self.assertEqual(q(self.db, "SELECT DISTINCT path FROM trace_events(?)", self.a), [(self.a,)])
        # two-pass plan too
        self.assertEqual(q(self.db, "SELECT DISTINCT path, typeof(dur) FROM trace_events(?) WHERE ph='B'",
                           self.a), [(self.a, "integer")])

    def test_join_over_paths(self):
        rows = q(self.db, "WITH f(p) AS (VALUES (?), (?)) SELECT t.path, count(*) FROM f, "
                 "trace_events(f.p) t GROUP BY t.path ORDER BY t.path", self.a, self.b)
        self.assertEqual(rows, [(self.a, 5), (self.b, 3)])

    def test_create_virtual_table(self):
        self.db.execute("CREATE VIRTUAL TABLE temp.t USING trace_events('%s')" % self.a)
        self.assertEqual(q(self.db, "SELECT DISTINCT path FROM temp.t"), [(self.a,)])

    def test_stored_virtual_table_reads_nothing(self):
        # a table kept in a database file would read its file for whoever
        # opens the database and selects from it: only TEMP ones read; a
        # stored one (SQLite cannot tell creation from connection for an
        # eponymous module) refuses every query and can be dropped
        dbfile = os.path.join(self.td.path, "v.db")
        db = connect(dbfile)
        try:
            for name, sql in (("t2", "CREATE VIRTUAL TABLE main.t2 USING trace_events('%s')" % self.a),
                              ("t3", "CREATE VIRTUAL TABLE t3 USING trace_events('%s')" % self.a)):
                with self.subTest(sql=sql):
                    db.execute(sql)
                    with self.assertRaises(sqlite3.OperationalError) as cm:
                        db.execute("SELECT count(*) FROM %s" % name).fetchone()
                    self.assertIn("trace_events: table main.%s is stored in a database file, so it "
                                  "reads nothing" % name, str(cm.exception))
            db.commit()
        finally:
            db.close()
        db = connect(dbfile)          # a new connection: still nothing read; DROP works
        try:
            with self.assertRaises(sqlite3.OperationalError):
                db.execute("SELECT * FROM t2").fetchall()
            db.execute("DROP TABLE t2")
            db.execute("DROP TABLE t3")
            self.assertEqual(q(db, "SELECT count(*) FROM sqlite_master"), [(0,)])
        finally:
            db.close()
        db = self.db
        db.execute("CREATE VIRTUAL TABLE temp.t4 USING trace_events('%s')" % self.a)
        self.assertEqual(q(db, "SELECT count(*) FROM temp.t4"), [(5,)])

    def test_diagnostics(self):
        rows = q(self.db, "SELECT path, kind FROM profsum_diagnostics(?)", self.b)
        self.assertEqual(rows, [(self.b, "unmatched_end")])


class Origin(DbTestCase):
    """No time origin: a stray early event takes no slice off its track, and
    the values do not depend on the columns selected."""

    O1 = ('{"traceEvents":[{"ph":"X","name":"stray","pid":1,"tid":1,"ts":0,"dur":1},'
          '{"ph":"X","name":"outer","pid":1,"tid":2,"ts":1212075525586016.5,"dur":100},'
          '{"ph":"X","name":"inner","pid":1,"tid":2,"ts":1212075525586020,"dur":10}]}')
    O2 = ('{"traceEvents":[{"ph":"X","name":"stray","pid":1,"tid":1,"ts":0,"dur":1},'
          '{"ph":"B","name":"step","pid":1,"tid":2,"ts":1700000000000000},'
          '{"ph":"E","name":"step","pid":1,"tid":2,"ts":1700000000000250}]}')

    def test_stray_ts0_before_epoch_us(self):
        p = self.td.write("o1.json", self.O1)
        rows = q(self.db, "SELECT idx, depth, parent_idx, excl, excl_ps FROM trace_events(?)", p)
        self.assertEqual(rows, [(0, 0, None, 1000, 1000000),
                                (1, 0, None, 90000, 90000000),
                                (2, 1, 1, 10000, 10000000)])
        kinds = q(self.db, "SELECT kind FROM profsum_diagnostics(?)", p)
        self.assertNotIn(("time_out_of_range",), kinds)

    def test_file_order_does_not_matter(self):
        ev = json.loads(self.O1)["traceEvents"]
        p1 = self.td.write("a.json", {"traceEvents": ev})
        p2 = self.td.write("b.json", {"traceEvents": ev[1:] + ev[:1]})
        sql = "SELECT name, depth, parent_idx IS NULL, excl, excl_ps FROM trace_events(?) ORDER BY name"
        self.assertEqual(q(self.db, sql, p1), q(self.db, sql, p2))

    def test_b_dur_independent_of_columns(self):
        p = self.td.write("o2.json", self.O2)
        a = q(self.db, "SELECT idx, ph, dur FROM trace_events(?)", p)
        b = q(self.db, "SELECT idx, ph, dur, depth FROM trace_events(?)", p)
        c = q(self.db, "SELECT idx, ph, dur_ps, process_name FROM trace_events(?)", p)
        self.assertEqual(a, [(0, "X", 1000), (1, "B", 250000), (2, "E", None)])
        self.assertEqual([r[:3] for r in b], a)
        self.assertEqual(b[1][3], 0)
        self.assertEqual([r[2] for r in c], [1000000, 250000000, None])

    def test_far_apart_tracks_and_negative_ts(self):
        ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "neg", "ts": -5000000000000000, "dur": 10},
              {"ph": "X", "pid": 1, "tid": 1, "name": "negc", "ts": -4999999999999999, "dur": 2},
              {"ph": "B", "pid": 2, "tid": 1, "name": "far", "ts": 900000000000000000},
              {"ph": "E", "pid": 2, "tid": 1, "name": "far", "ts": 900000000000000007}]
        p = self.td.write("f.json", {"traceEvents": ev})
        rows = q(self.db, "SELECT name, dur, depth, excl FROM trace_events(?) WHERE ph!='E'", p)
        self.assertEqual(rows, [("neg", 10000, 0, 8000), ("negc", 2000, 1, 2000),
                                ("far", 7000, 0, 7000)])

    def test_too_long_still_out_of_range(self):
        ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "huge", "ts": 0, "dur": 3e12},
              {"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 1, "dur": 1},
              {"ph": "B", "pid": 1, "tid": 2, "name": "long", "ts": 0},
              {"ph": "E", "pid": 1, "tid": 2, "name": "long", "ts": 3e12}]
        p = self.td.write("h.json", {"traceEvents": ev})
        rows = q(self.db, "SELECT name, depth FROM trace_events(?) WHERE ph!='E'", p)
        self.assertEqual(rows, [("huge", None), ("ok", 0), ("long", None)])
        self.assertEqual(q(self.db, "SELECT dur FROM trace_events(?) WHERE name='long' AND ph='B'", p),
                         [(3000000000000000,)])
        kinds = q(self.db, "SELECT idx FROM profsum_diagnostics(?) WHERE kind='time_out_of_range'", p)
        self.assertEqual(kinds, [(0,), (2,)])


    def test_out_of_range_boundary(self):
        # exactly 2^61 ps is on a track; 1 ps more is out of range (the
        # build before put 2^61 itself out of range, where the doc says
        # "longer than 2^61 ps")
        text = ('{"traceEvents": ['
                '{"ph": "X", "pid": 1, "tid": 1, "name": "max", "ts": 0, "dur": 2305843009213.693952},'
                '{"ph": "X", "pid": 1, "tid": 1, "name": "in", "ts": 1, "dur": 1},'
                '{"ph": "X", "pid": 1, "tid": 2, "name": "over", "ts": 0, "dur": 2305843009213.693953},'
                '{"ph": "B", "pid": 1, "tid": 3, "name": "bmax", "ts": 0},'
                '{"ph": "E", "pid": 1, "tid": 3, "name": "bmax", "ts": 2305843009213.693952}]}')
        p = self.td.write("b.json", text)
        rows = q(self.db, "SELECT name, dur_ps, depth, parent_idx FROM trace_events(?) WHERE ph!='E'", p)
        self.assertEqual(rows, [("max", 1 << 61, 0, None), ("in", 1000000, 1, 0),
                                ("over", (1 << 61) + 1, None, None), ("bmax", 1 << 61, 0, None)])
        kinds = q(self.db, "SELECT idx FROM profsum_diagnostics(?) WHERE kind='time_out_of_range'", p)
        self.assertEqual(kinds, [(2,)])


class ZeroLength(DbTestCase):
    """A matched B/E slice of zero length gets the track columns."""

    def rows(self, ev):
        p = self.td.write("z.json", {"traceEvents": ev})
        return q(self.db, "SELECT idx, dur_ps, depth, parent_idx, excl, excl_ps FROM trace_events(?) "
                 "WHERE ph!='E'", p), p

    def test_alone(self):
        r, _ = self.rows([{"ph": "B", "pid": 1, "tid": 1, "name": "z", "ts": 20},
                          {"ph": "E", "pid": 1, "tid": 1, "name": "z", "ts": 20}])
        self.assertEqual(r, [(0, 0, 0, None, 0, 0)])

    def test_at_start_and_end_of_parent(self):
        ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "P", "ts": 0, "dur": 10},
              {"ph": "B", "pid": 1, "tid": 1, "name": "s", "ts": 0},
              {"ph": "E", "pid": 1, "tid": 1, "name": "s", "ts": 0},
              {"ph": "B", "pid": 1, "tid": 1, "name": "e", "ts": 10},
              {"ph": "E", "pid": 1, "tid": 1, "name": "e", "ts": 10}]
        r, _ = self.rows(ev)
        self.assertEqual(r, [(0, 10000000, 0, None, 10000, 10000000),
                             (1, 0, 1, 0, 0, 0),
                             (3, 0, 1, 0, 0, 0)])

    def test_b_e_nested_inside_b_e(self):
        # B P, B Z, E Z, E P all at the end time of Z: Z opened and closed inside P
        ev = [{"ph": "B", "pid": 1, "tid": 1, "name": "P", "ts": 0},
              {"ph": "B", "pid": 1, "tid": 1, "name": "Z", "ts": 5},
              {"ph": "E", "pid": 1, "tid": 1, "name": "Z", "ts": 5},
              {"ph": "E", "pid": 1, "tid": 1, "name": "P", "ts": 5}]
        r, _ = self.rows(ev)
        self.assertEqual(r, [(0, 5000000, 0, None, 5000, 5000000), (1, 0, 1, 0, 0, 0)])

    def test_sibling_starting_there_takes_it(self):
        ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "P", "ts": 0, "dur": 10},
              {"ph": "X", "pid": 1, "tid": 1, "name": "Q", "ts": 10, "dur": 5},
              {"ph": "B", "pid": 1, "tid": 1, "name": "z", "ts": 10},
              {"ph": "E", "pid": 1, "tid": 1, "name": "z", "ts": 10},
              {"ph": "B", "pid": 1, "tid": 1, "name": "y", "ts": 10},
              {"ph": "E", "pid": 1, "tid": 1, "name": "y", "ts": 10}]
        r, _ = self.rows(ev)
        self.assertEqual(r, [(0, 10000000, 0, None, 10000, 10000000),
                             (1, 5000000, 0, None, 5000, 5000000),
                             (2, 0, 1, 1, 0, 0),
                             (4, 0, 1, 1, 0, 0)])

    def test_excl_matches_exclusive_time(self):
        ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "P", "ts": 0, "dur": 10},
              {"ph": "X", "pid": 1, "tid": 1, "name": "c", "ts": 4, "dur": 6},
              {"ph": "B", "pid": 1, "tid": 1, "name": "z", "ts": 10},
              {"ph": "E", "pid": 1, "tid": 1, "name": "z", "ts": 10},
              {"ph": "B", "pid": 1, "tid": 1, "name": "w", "ts": 2},
              {"ph": "E", "pid": 1, "tid": 1, "name": "w", "ts": 2}]
        p = self.td.write("x.json", {"traceEvents": ev})
        rows = q(self.db, "SELECT idx, excl, exclusive_time(ts, dur) OVER (PARTITION BY pid, tid "
                 "ORDER BY idx ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
                 "FROM trace_events(?) WHERE depth IS NOT NULL ORDER BY idx", p)
        self.assertEqual([r[0] for r in rows], [0, 1, 2, 4])
        for r in rows:
            self.assertEqual(r[1], r[2], r)
        self.assertEqual([r[1] for r in rows], [4000, 6000, 0, 0])


class NoTraceEvents(unittest.TestCase):
    """An object without a traceEvents array is no rows and one diagnostic
    saying so; an empty array is a trace with no events, silently."""

    def test_diagnostic(self):
        db = connect()
        try:
            with TempDir() as td:
                for text, want in [("{}", 1), ('{"foo": [1]}', 1), ('{"traceEvents": null}', 1),
                                   ('{"traceEvents": []}', 0), ("[]", 0)]:
                    p = td.write("n.json", text)
                    rows = q(db, "SELECT kind, detail FROM profsum_diagnostics(?)", p)
                    self.assertEqual(len(rows), want, (text, rows))
                    if want:
                        self.assertEqual(rows[0][0], "no_trace_events")
                        self.assertIn('no "traceEvents" array', rows[0][1])
                    self.assertEqual(q(db, "SELECT count(*) FROM trace_events(?)", p), [(0,)])
        finally:
            db.close()


class DiagnosticDetails(unittest.TestCase):
    """Every diagnostic of a kind has its detail, past the readers' cap of
    details too, and when entries cross the reader's buffer refills (an
    entry parsed twice used to count twice toward the cap, leaving blank
    details before it)."""

    def test_every_detail(self):
        pad = "x" * 20000
        ev = ",".join('{"ph":"X","pid":1,"tid":1,"name":"a","ts":"%d.1234567","dur":1,'
                      '"args":{"pad":"%s"}}' % (i, pad) for i in range(1100))
        with TempDir() as td:
            p = td.write("dd.json", '{"traceEvents":[%s]}' % ev)
            db = connect()
            try:
                rows = q(db, "SELECT count(*), sum(detail IS NULL OR detail = '') "
                             "FROM profsum_diagnostics(?) WHERE kind = 'time_rounded'", p)
            finally:
                db.close()
        self.assertEqual(rows, [(1100, 0)])


class CutInsideEntry(unittest.TestCase):
    def test_object_form_cut_inside_an_entry(self):
        head = '{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},{"ph":"X","na'
        db = connect()
        try:
            with TempDir() as td:
                for text, want in [('{"traceEvents":[' + head,
                                    ["truncated_entry", "unterminated_array", "unterminated_object"]),
                                   ("[" + head, ["truncated_entry", "unterminated_array"])]:
                    p = td.write("c.json", text)
                    self.assertEqual([r[0] for r in q(db, "SELECT kind FROM profsum_diagnostics(?)", p)],
                                     want, text)
                    self.assertEqual(q(db, "SELECT count(*) FROM trace_events(?)", p), [(1,)])
        finally:
            db.close()


class HugeTs(DbTestCase):
    def test_ts_beyond_int64_ns_is_null_with_a_diagnostic(self):
        p = self.td.write("h.json", '{"traceEvents":[{"ph":"X","name":"big","pid":1,"tid":1,'
                          '"ts":99999999999999999999,"dur":5},{"ph":"X","name":"ok","pid":1,"tid":2,'
                          '"ts":1700000000000000,"dur":5}]}')
        self.assertEqual(q(self.db, "SELECT name, ts, dur FROM trace_events(?)", p),
                         [("big", None, 5000), ("ok", 1700000000000000000, 5000)])
        self.assertEqual(q(self.db, "SELECT idx, kind FROM profsum_diagnostics(?)", p),
                         [(0, "time_out_of_range")])


def write_bytes(td, name, raw):
    """Write raw bytes (not necessarily UTF-8) to td/name; returns the path."""
    p = os.path.join(td.path, name)
    with open(p, "wb") as f:
        f.write(raw)
    return p


class InvalidUtf8(unittest.TestCase):
    """Bytes that are not UTF-8 inside strings come out as U+FFFD, so every
    text column is valid UTF-8 (Python's sqlite3 module fails a whole query
    on one invalid value) and args stays valid JSON; valid multi-byte text
    is kept as is, including sequences that cross the reader's refills."""

    def test_replaced(self):
        raw = (b'{"traceEvents":[{"ph":"X","name":"a\xff\xfeb","pid":1,"tid":1,"ts":1,"dur":1,'
               b'"args":{"k":"v\xe9w","ok":"caf\xc3\xa9","sur":"\xed\xa0\x80","cut":"\xe2\x82"}},'
               b'{"ph":"X","name":"\xe2\x82\xac ok \xf0\x9f\x98\x80","pid":1,"tid":1,"ts":3,"dur":1}]}')
        with TempDir() as td:
            p = write_bytes(td, "u.json", raw)
            db = connect()
            try:
                rows = q(db, "SELECT name, args, json_valid(args) FROM trace_events(?)", p)
            finally:
                db.close()
        self.assertEqual(rows[0][0], "a\ufffd\ufffdb")
        self.assertEqual(json.loads(rows[0][1]), {"k": "v\ufffdw", "ok": "caf\u00e9",
                                                  "sur": "\ufffd\ufffd\ufffd", "cut": "\ufffd\ufffd"})
        self.assertEqual(rows[0][2], 1)
        self.assertEqual(rows[1][0], "\u20ac ok \U0001F600")

    def test_diagnosed_and_counted_as_a_reference_rejection(self):
        # one invalid_utf8 diagnostic per entry; the reference's decoder
        # rejects the file for the one in a name (a field it decodes as
        # str), not for those in args keys it ignores (it skips their bytes
        # unchecked): the import's quality warning counts entry 0 only
        raw = (b'{"traceEvents":[{"ph":"X","name":"a\xffb","pid":1,"tid":1,"ts":1,"dur":2},'
               b'{"ph":"X","name":"ok","pid":1,"tid":1,"ts":5,"dur":2,"args":{"x":"\xc3","y":"\xc3"}},'
               b'{"ph":"X","name":"caf\xc3\xa9","pid":1,"tid":1,"ts":9,"dur":2}]}')
        with TempDir() as td:
            p = write_bytes(td, "u.json", raw)
            db = connect()
            try:
                diags = q(db, "SELECT idx, kind FROM profsum_diagnostics(?)", p)
                db.execute("SELECT profsum_import(?, 'u')", (p,))
                warn = json.loads(q(db, "SELECT quality_warnings FROM profsum_trace")[0][0])
                n = q(db, "SELECT num_complete_events FROM profsum_trace")[0][0]
            finally:
                db.close()
        self.assertEqual(diags, [(0, "invalid_utf8"), (1, "invalid_utf8")])
        self.assertEqual(n, 3)
        self.assertEqual(len(warn), 1, warn)
        self.assertTrue(warn[0].startswith("1 entry is malformed for the reference summarizer"), warn)
        self.assertIn("first: entry 0, invalid_utf8 in name)", warn[0])

    def test_long_multibyte_names_across_refills(self):
        names = ["\u00e9\u4e2d\U0001F600" * (i % 97 + 1) for i in range(3000)]
        ev = [{"ph": "X", "name": n, "pid": 1, "tid": 1, "ts": i, "dur": 1, "args": {"pad": "x" * 700}}
              for i, n in enumerate(names)]
        with TempDir() as td:
            p = td.write("m.json", json.dumps({"traceEvents": ev}, ensure_ascii=False))
            db = connect()
            try:
                got = [r[0] for r in q(db, "SELECT name FROM trace_events(?)", p)]
            finally:
                db.close()
        self.assertEqual(got, names)


if __name__ == "__main__":
    unittest.main()
