"""profsum_trim: a smaller trace with only the selected events and their
metadata, readable again."""
import gzip
import json
import os
import sqlite3
import unittest

import fixtures
from util import OOM_SQL, connect, run_oom_sql, TempDir


class Trim(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db = connect()
        self.src = self.td.write("f9.json.gz", json.dumps(fixtures.f9()), gz=True)

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def test_round_trip(self):
        dest = os.path.join(self.td.path, "out", "gpu-stream.json.gz")
        os.makedirs(os.path.dirname(dest))
        n = self.db.execute("SELECT profsum_trim(?, ?, 'pid = 1 AND tid = 11')", (self.src, dest)).fetchone()[0]
        # 2 events of stream 11, plus the process_name and both thread_names of pid 1
        self.assertEqual(n, 5)
        doc = json.loads(gzip.decompress(open(dest, "rb").read()))
        self.assertEqual(doc["displayTimeUnit"], "ns")
        self.assertEqual([e["name"] for e in doc["traceEvents"] if e["ph"] == "X"],
                         ["ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_ReduceScatter_RING_LL"])
        rows = self.db.execute("SELECT name, thread_name, dur FROM trace_events(?) WHERE ph='X'", (dest,)).fetchall()
        self.assertEqual(rows, [("ncclDevKernel_AllGather_RING_LL", "Stream #1(nccl)", 50000),
                                ("ncclDevKernel_ReduceScatter_RING_LL", "Stream #1(nccl)", 40000)])
        self.assertEqual(os.listdir(os.path.dirname(dest)), ["gpu-stream.json.gz"])   # no temp file left
        # the trimmed trace imports and summarizes
        tid = self.db.execute("SELECT profsum_import(?, 'trimmed')", (dest,)).fetchone()[0]
        self.assertEqual(self.db.execute("SELECT num_complete_events FROM profsum_trace WHERE trace_id=?",
                                         (tid,)).fetchone()[0], 2)

    def test_all_and_time_window(self):
        dest = os.path.join(self.td.path, "all.json.gz")
        n = self.db.execute("SELECT profsum_trim(?, ?)", (self.src, dest)).fetchone()[0]
        self.assertEqual(n, 12)
        dest2 = os.path.join(self.td.path, "window.json.gz")
        n2 = self.db.execute("SELECT profsum_trim(?, ?, 'ph = ''X'' AND ts >= 200000 AND ts < 500000')",
                             (self.src, dest2)).fetchone()[0]
        names = [r[0] for r in self.db.execute("SELECT name FROM trace_events(?) WHERE ph='X'", (dest2,))]
        self.assertEqual(names, ["ncclDevKernel_AllGather_RING_LL", "ncclDevKernel_ReduceScatter_RING_LL"])
        self.assertEqual(n2, 2 + 3)   # the two events + the 3 M entries of their process (pid 1)

    def test_many_megabytes_one_gzip_member(self):
        # output past many of the writer's 64 KiB buffers and compressed in
        # more than one block: one gzip member that Python's own gzip reads
        # whole, every event in order, the text as the source wrote it
        evs = [{"ph": "X", "name": "op%d" % (i % 977), "pid": 1 + i % 3, "tid": 7,
                "ts": i * 3, "dur": 2, "args": {"k": "v%d" % (i * 7919 % 100003)}} for i in range(60000)]
        src = self.td.write("big.json", json.dumps({"traceEvents": evs}))
        dest = os.path.join(self.td.path, "big.json.gz")
        self.assertEqual(self.db.execute("SELECT profsum_trim(?, ?)", (src, dest)).fetchone()[0], 60000)
        raw = open(dest, "rb").read()
        self.assertEqual(raw[:2], b"\x1f\x8b")
        d = __import__("zlib").decompressobj(16 + 15)
        text = d.decompress(raw)
        self.assertTrue(d.eof)
        self.assertEqual(d.unused_data, b"")           # one member, nothing after it
        self.assertGreater(len(text), 4 << 20)
        self.assertEqual(json.loads(text)["traceEvents"], evs)

    def test_display_time_unit_written_as_json(self):
        # the unit is decoded text: written back escaped, the output parses
        src = self.td.write("u.json", '{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2}],'
                            '"displayTimeUnit":"ns\\"}, \\"x\\":\\"y"}')
        dest = os.path.join(self.td.path, "u.json.gz")
        self.assertEqual(self.db.execute("SELECT profsum_trim(?, ?)", (src, dest)).fetchone()[0], 1)
        doc = json.loads(gzip.decompress(open(dest, "rb").read()))
        self.assertEqual(doc["displayTimeUnit"], 'ns"}, "x":"y')
        self.assertEqual(sorted(doc), ["displayTimeUnit", "traceEvents"])

    def test_output_mode_follows_the_umask(self):
        for um, mode in ((0o022, 0o644), (0o027, 0o640)):
            dest = os.path.join(self.td.path, "m%o.json.gz" % um)
            old = os.umask(um)
            try:
                self.db.execute("SELECT profsum_trim(?, ?)", (self.src, dest)).fetchone()
            finally:
                os.umask(old)
            self.assertEqual(os.stat(dest).st_mode & 0o777, mode)

    def test_pipe_source_refused(self):
        fifo = os.path.join(self.td.path, "pipe")
        os.mkfifo(fifo)
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (fifo, os.path.join(self.td.path, "p.json.gz"))).fetchone()
        self.assertIn("profsum_trim: '%s' is not a regular file (a pipe?)" % fifo, str(cm.exception))

    def test_errors_leave_nothing(self):
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?, 'no_such_column = 1')",
                            (self.src, os.path.join(self.td.path, "x.json.gz"))).fetchone()
        self.assertIn("profsum_trim: bad WHERE clause", str(cm.exception))
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (os.path.join(self.td.path, "none.json"),
                                                          os.path.join(self.td.path, "y.json.gz"))).fetchone()
        self.assertRegex(str(cm.exception), r"^profsum_trim: trace_events: '.*none.json': cannot open")
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (self.src, self.td.path)).fetchone()
        self.assertIn("is a directory", str(cm.exception))
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (self.src, os.path.join(self.td.path, "nodir", "x.gz"))).fetchone()
        self.assertIn("cannot create a file there", str(cm.exception))
        self.assertEqual(sorted(os.listdir(self.td.path)), ["f9.json.gz"])

    def trim(self, src, where=None, name="out.json.gz"):
        dest = os.path.join(self.td.path, name)
        n = self.db.execute("SELECT profsum_trim(?, ?, ?)", (src, dest, where)).fetchone()[0]
        return n, dest

    def test_metadata_of_string_pids(self):
        # PyTorch's "pid":"Spans": the process and thread names come along
        src = self.td.write("s.json", json.dumps({"traceEvents": [
            {"ph": "M", "pid": "Spans", "name": "process_name", "args": {"name": "SpansProc"}},
            {"ph": "M", "pid": "Spans", "tid": "x", "name": "thread_name", "args": {"name": "SpansThr"}},
            {"ph": "M", "pid": "Other", "name": "process_name", "args": {"name": "OtherProc"}},
            {"ph": "X", "pid": "Spans", "tid": "x", "name": "span", "ts": 5, "dur": 3},
            {"ph": "X", "pid": "Other", "tid": "x", "name": "other", "ts": 5, "dur": 3}]}))
        n, dest = self.trim(src, "name = 'span'")
        self.assertEqual(n, 3)
        self.assertEqual(self.db.execute("SELECT process_name, thread_name FROM trace_events(?) WHERE ph='X'",
                                         (dest,)).fetchall(), [("SpansProc", "SpansThr")])

    def test_b_and_e_stay_together(self):
        # an E has no name and no dur: a condition on them, or a time window,
        # would keep a B without its E (or an E without its B)
        src = self.td.write("be.json", json.dumps({"traceEvents": [
            {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
            {"ph": "B", "pid": 1, "tid": 1, "name": "step", "ts": 0},
            {"ph": "B", "pid": 1, "tid": 1, "name": "inner", "ts": 100},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 300},
            {"ph": "X", "pid": 1, "tid": 1, "name": "x", "ts": 400, "dur": 10},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 5000},
            {"ph": "E", "pid": 1, "tid": 2, "ts": 6000}]}))
        for where, want in (("dur >= 1000000", [("B", "step", 5000000), ("E", None, None)]),
                            ("name = 'step'", [("B", "step", 5000000), ("E", None, None)]),
                            # the window holds both E's and the X: their B's come along
                            ("ts >= 250000 AND ts < 6000000",
                             [("B", "step", 5000000), ("B", "inner", 200000), ("E", None, None),
                              ("X", "x", 10000), ("E", None, None)])):
            with self.subTest(where=where):
                n, dest = self.trim(src, where)
                self.assertEqual(self.db.execute("SELECT ph, name, dur FROM trace_events(?) WHERE ph != 'M'",
                                                 (dest,)).fetchall(), want)
                kinds = [r[0] for r in self.db.execute("SELECT kind FROM profsum_diagnostics(?)", (dest,))]
                # the lone E of tid 2 is unmatched in the source too
                self.assertEqual([k for k in kinds if k != "unmatched_end"], [])

    def test_output_is_valid_json(self):
        # what the reader tolerates (trailing commas, raw control
        # characters, bytes that are not UTF-8, bare NaN) is repaired
        src = self.td.write("bad.json", b'{"traceEvents":[{"ph":"X","pid":1,"tid":1,"name":"a\xff\x01b",'
                            b'"ts":1,"dur":2,"args":{"v":NaN,"w":[1,2,],},},{"ph":"X","pid":1,"tid":1,'
                            b'"name":"ok","ts":5,"dur":1}]}')
        n, dest = self.trim(src)
        self.assertEqual(n, 2)
        doc = json.loads(gzip.decompress(open(dest, "rb").read()).decode("utf-8"))
        self.assertEqual(doc["traceEvents"][0]["name"], "a\ufffd\x01b")
        self.assertEqual(doc["traceEvents"][0]["args"], {"v": "NaN", "w": [1, 2]})
        self.assertEqual(doc["traceEvents"][1], {"ph": "X", "pid": 1, "tid": 1, "name": "ok", "ts": 5, "dur": 1})

    def test_not_a_trace(self):
        src = self.td.write("obj.json", '{"lr": 0.001}')
        with self.assertRaises(sqlite3.Error) as cm:
            self.trim(src)
        self.assertEqual(str(cm.exception), "profsum_trim: '%s': not a trace: its top level has no "
                         "\"traceEvents\" array" % src)
        self.assertEqual(sorted(os.listdir(self.td.path)), ["f9.json.gz", "obj.json"])

    def test_where_is_one_condition(self):
        # a trailing comment stays a comment; SQL after the statement is refused
        n, _ = self.trim(self.src, "ph = 'X' -- only the complete events")
        self.assertEqual(n, 9 + 3)
        with self.assertRaises(sqlite3.Error) as cm:
            self.trim(self.src, "name = 'a'); DELETE FROM nothing; SELECT (1")
        self.assertIn("it must be one condition", str(cm.exception))
        # an error while the clause runs quotes it, with the file
        for where, msg in (("abs(-9223372036854775808) > 0", "integer overflow"),
                           ("json_extract(args, '$[') IS NULL", "JSON path error")):
            with self.subTest(where=where):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.trim(self.src, where)
                self.assertEqual(str(cm.exception).split(": ")[:3],
                                 ["profsum_trim", "'%s'" % self.src, "WHERE clause '%s'" % where])
                self.assertIn(msg, str(cm.exception))

    def test_statement_end_is_refused_as_not_one_condition(self):
        # a ';' that ends the statement, with or without SQL after it: the
        # documented refusal, naming the function and the clause
        for where in ("pid = 1; SELECT 1", "pid = 1;", "ph = 'X' /* c */ ; -- x"):
            with self.subTest(where=where):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.trim(self.src, where)
                self.assertEqual(str(cm.exception), "profsum_trim: bad WHERE clause '%s': it must be "
                                 "one condition (its ';' ends the statement)" % where)
        self.assertEqual(sorted(os.listdir(self.td.path)), ["f9.json.gz"])
        # a ';' in a string, a quoted name or a comment ends nothing
        self.assertEqual(self.trim(self.src, "name = 'a;b'")[0], 0)
        self.assertEqual(self.trim(self.src, "\"name\" = 'x' /* ; */")[0], 0)
        self.assertEqual(self.trim(self.src, "ph = 'X' -- only; complete events")[0], 9 + 3)

    def test_closing_paren_is_refused_as_not_one_condition(self):
        # a ')' without its '(' closes the condition early: whatever follows
        # (LIMIT, GROUP BY, ORDER BY, UNION, a comment hiding the rest) would
        # change the selection; refused with the byte of that ')'
        for where, at in (("1) LIMIT (1", 1), ("1) GROUP BY (ph", 1), ("1) ORDER BY (1", 1),
                          ("1) UNION SELECT (1", 1), ("(1)) LIMIT (1", 3),
                          ("ph = 'X') LIMIT 1 --", 8), ("ph = 'X') LIMIT 1 /* c */", 8),
                          ("name = ')' AND 1) LIMIT (1", 16), ("\"a)\" = 1) LIMIT (1", 8),
                          ("1 -- c\n) LIMIT (1", 7)):
            with self.subTest(where=where):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.trim(self.src, where)
                self.assertEqual(str(cm.exception), "profsum_trim: bad WHERE clause '%s': it must be "
                                 "one condition (its ')' at byte %d closes it early and adds SQL "
                                 "after it)" % (where, at))
        # a comment without its end would hide the ')' that closes the condition
        for where, at in (("1 /* x", 2), ("ph = 'X' /* a */ /*", 17)):
            with self.subTest(where=where):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.trim(self.src, where)
                self.assertEqual(str(cm.exception), "profsum_trim: bad WHERE clause '%s': it must be "
                                 "one condition (its '/*' at byte %d has no '*/' and hides the end "
                                 "of the condition)" % (where, at))
        self.assertEqual(sorted(os.listdir(self.td.path)), ["f9.json.gz"])
        # ')' in a string, a quoted name or a comment, nested parentheses and
        # subqueries (with their own UNION and LIMIT) are one condition
        for where, n in (("name = ')'", 0), ("name = 'a)b' OR ph = 'X'", 12),
                         ("[ph] = ')' OR `ph` = 'X' /* ) */", 12), ("ph = 'X' -- ) LIMIT (1", 12),
                         ("\"ph\" = 'X' AND ((pid = 2) OR (tid = 11))", 5 + 5),
                         ("pid IN (SELECT 2 UNION SELECT 3 LIMIT 1) AND ph = 'X'", 3 + 2),
                         ("name IN (SELECT 'train' WHERE (1))", 3 + 2)):
            with self.subTest(where=where):
                self.assertEqual(self.trim(self.src, where)[0], n)

    def test_refused_arguments(self):
        # the source as destination, a parameter nothing binds, a condition
        # that is no text, a path cut at a NUL byte: errors, nothing written
        before = open(self.src, "rb").read()
        for args, msg in (((self.src, self.src, None), "is the source itself"),
                          ((self.src, os.path.join(self.td.path, ".", "f9.json.gz"), None), "is the source itself"),
                          ((self.src, "x.json.gz", "dur > ?"), "it has a parameter ('?'), which nothing binds"),
                          ((self.src, "x.json.gz", "ts > :t"), "it has a parameter"),
                          ((self.src, "x.json.gz", 5), "WHERE must be text"),
                          ((self.src, os.path.join(self.td.path, "t.gz") + "\0x", None), "path contains a NUL byte"),
                          ((self.src + "\0x", "x.json.gz", None), "path contains a NUL byte")):
            with self.subTest(args=args):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.db.execute("SELECT profsum_trim(?, ?, ?)", args).fetchone()
                self.assertIn(msg, str(cm.exception))
        self.assertEqual(open(self.src, "rb").read(), before)
        self.assertEqual(sorted(os.listdir(self.td.path)), ["f9.json.gz"])

    def test_long_destination_name(self):
        # the temporary name beside a 255-byte name still fits
        for k in (238, 255):
            name = "y" * (k - 8) + ".json.gz"
            n, dest = self.trim(self.src, None, name)
            self.assertEqual(n, 12)
            self.assertTrue(os.path.exists(dest))

    def test_links_to_devices_refused(self):
        # a rename over a link to a device would replace the link: refused,
        # the link left as it was
        link = os.path.join(self.td.path, "null-link")
        os.symlink("/dev/null", link)
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_trim(?, ?)", (self.src, link)).fetchone()
        self.assertIn("is a link to a device, not a file", str(cm.exception))
        self.assertEqual(os.readlink(link), "/dev/null")
        # a link to a regular file, a directory or nothing: refused too,
        # neither followed nor replaced
        target = self.td.write("target.txt", "keep")
        os.mkdir(os.path.join(self.td.path, "d"))
        for to, kind in ((target, "a file"), (os.path.join(self.td.path, "d"), "a directory"),
                         (os.path.join(self.td.path, "nowhere"), "which does not exist")):
            link2 = os.path.join(self.td.path, "file-link")
            if os.path.lexists(link2):
                os.unlink(link2)
            os.symlink(to, link2)
            with self.assertRaises(sqlite3.Error) as cm:
                self.db.execute("SELECT profsum_trim(?, ?)", (self.src, link2)).fetchone()
            self.assertEqual(str(cm.exception), "profsum_trim: '%s' is a symbolic link (to '%s', %s): profsum "
                             "neither writes through a symbolic link nor replaces one: remove the link, or "
                             "give the path it leads to" % (link2, to, kind))
            self.assertEqual(os.readlink(link2), to)
            self.assertEqual(open(target).read(), "keep")
            self.assertEqual(os.listdir(os.path.join(self.td.path, "d")), [])
            self.assertFalse(os.path.lexists(os.path.join(self.td.path, "nowhere")))
        # through a linked folder: written where it leads
        os.symlink("d", os.path.join(self.td.path, "dl"))
        self.db.execute("SELECT profsum_trim(?, ?)", (self.src, os.path.join(self.td.path, "dl", "o.json.gz"))).fetchone()
        self.assertTrue(os.path.isfile(os.path.join(self.td.path, "d", "o.json.gz")))

    def test_directonly(self):
        self.db.execute("CREATE VIEW v AS SELECT profsum_trim('a', 'b')")
        with self.assertRaises(sqlite3.Error):
            self.db.execute("SELECT * FROM v").fetchall()


@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds it)")
class TrimOutOfMemory(unittest.TestCase):
    """Every allocation of profsum_trim failed in turn (tests/oom_sql.c,
    ASan) over a trace with string pids, a B/E pair the selection cuts
    and an entry to repair: each run is an error or the full result, and
    nothing leaks."""

    def test_every_allocation(self):
        with TempDir() as td:
            src = td.write("t.json", b'{"traceEvents":[{"ph":"M","pid":"S","name":"process_name",'
                           b'"args":{"name":"P"}},{"ph":"B","pid":1,"tid":1,"name":"step","ts":0},'
                           b'{"ph":"X","pid":"S","tid":1,"name":"a\x01","ts":1,"dur":2,"args":{"v":NaN,},},'
                           b'{"ph":"E","pid":1,"tid":1,"ts":9}]}')
            dest = os.path.join(td.path, "o.json.gz")
            sql = "SELECT profsum_trim('%s', '%s', 'name = ''step'' OR pid = ''S''')" % (src, dest)
            run_oom_sql(self, [sql])
            self.assertEqual(len(json.loads(gzip.decompress(open(dest, "rb").read()))["traceEvents"]), 4)


if __name__ == "__main__":
    unittest.main()
