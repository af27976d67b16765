"""profsum_history_import on hostile inputs, and the text rule of the history.

- Memory: the JSONL file is read and appended line by line through a
  bounded buffer, so a large history costs about one line and its tree, not
  the file plus every record's tree (several times the file's size before).
  A line longer than 16 MiB is an error naming the function, the file and
  the line.
- Text: every string and key of an imported record, the label of
  profsum_track and the strings of profsum_bundle's options_json must be
  valid UTF-8 without U+0000 and without a lone surrogate escape; anything
  else is refused with its file, line and JSONPath (docs/compare.md), and
  nothing is written.  Before, such bytes were stored raw and Python's
  sqlite3 could no longer read profsum_history nor profsum_history_summary
  for the whole database.
- Out of memory at every allocation of an import (a small C driver,
  tests/history_oom.c): a failure leaves no record, and every failure in
  profsum's own allocations names the function and the file.

Every input is generated here; the shared reproducer is used as well when
it is present.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import unittest

import fixtures
from util import connect, TempDir, SO, HERE, REPRO as REPRO_DIR

REPRO = os.path.join(REPRO_DIR, "history_invalid_utf8.jsonl")
SANITIZED = "libasan" in os.environ.get("LD_PRELOAD", "") or "/asan/" in SO

# The bytes of the shared reproducer: a label that is not UTF-8, a label
# with an escaped NUL and a lone surrogate, then an ordinary record (a
# "\r\n" ending, an integer beyond 64 bits, 1e400, -0.0).
INVALID_UTF8_JSONL = (b'{"label":"bad\xff\xfeutf8"}\n'
                      b'{"label":"nul\\u0000x","x":"\\ud800"}\r\n'
                      b'{"label":"big","n":123456789012345678901234567890,"f":1e400,"m":-0.0,"d":1.0}\n')


def record(i, ops=12, dense=200):
    """A history record the shape of profsum_track's, about 3 KB: nested
    objects, op rows, messages, and a dense array of small numbers."""
    rows = [{"after": 90.0 + k, "before": 60.0 + k, "delta": 30.0, "name": "fusion.%d" % k}
            for k in range(ops)]
    return {"recorded_at_utc": "2026-01-01T00:00:%02dZ" % (i % 60), "label": "run-%d" % i,
            "before": {"source_path": "/runs/b.json.gz", "run_path": None, "run_id": "r%d" % i,
                       "artifact_ref": None},
            "after": {"source_path": "/runs/a-\u00e9.json.gz", "run_path": "e/p/r", "run_id": None,
                      "artifact_ref": "a:v%d" % i},
            "assessment": {"status": ("pass", "warn", "fail")[i % 3],
                           "failures": ["Steady-state median step time regressed by 22.22% (threshold 5.00%)."]
                           if i % 3 == 2 else [],
                           "warnings": ["Stall share increased by 0.0600 (threshold 0.0500)."] if i % 3 else [],
                           "metrics": {"steady_state_median_regression_pct": i / 7.0, "x": [k % 10 for k in range(dense)]},
                           "comparison": {"regressed_ops": rows, "improved_ops": rows[:3]}}}


class Base(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db_path = os.path.join(self.td.path, "h.db")
        self.db = connect(self.db_path)

    def tearDown(self):
        self.db.close()
        self.td.__exit__(None, None, None)

    def one(self, sql, args=()):
        return self.db.execute(sql, args).fetchone()[0]

    def n_records(self):
        try:
            return self.one("SELECT count(*) FROM profsum_history_record")
        except sqlite3.OperationalError:
            return 0            # no history table yet

    def assertError(self, sql, args, pattern):
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute(sql, args).fetchall()
        self.assertRegex(str(cm.exception), pattern)
        return str(cm.exception)

    def write(self, name, data):
        path = os.path.join(self.td.path, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def views_readable(self, db=None):
        """Python's sqlite3 reads every row of both history views."""
        db = db or self.db
        rows = db.execute("SELECT * FROM profsum_history").fetchall()
        summary = db.execute("SELECT * FROM profsum_history_summary").fetchall()
        return rows, summary


class Streaming(Base):
    # The import in a subprocess of its own: ru_maxrss is the peak of the
    # process, so the growth is measured from just before the call.
    SCRIPT = textwrap.dedent("""
        import resource, sqlite3, sys
        so, db_path, warm, path = sys.argv[1:5]
        db = sqlite3.connect(db_path)
        db.enable_load_extension(True)
        db.load_extension(so)
        db.execute("SELECT profsum_history_import(?)", (warm,)).fetchall()   # tables, code paged in
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        n = db.execute("SELECT profsum_history_import(?)", (path,)).fetchone()[0]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(n, (peak - base) * 1024)
    """)

    def test_large_file_imports_in_bounded_memory(self):
        # About 24 MB of records (each ~3 KB, with a dense array: many JSON
        # values per byte, the shape that cost most as parse trees).  The
        # build before held the whole file and every record's tree: its
        # peak grew by several times the file's size.
        lines = [json.dumps(record(i), sort_keys=True) for i in range(11000)]
        path = self.write("big.jsonl", ("\n".join(lines) + "\n").encode())
        size = os.path.getsize(path)
        self.assertGreater(size, 20e6)
        warm = self.write("warm.jsonl", (json.dumps(record(0)) + "\n").encode())
        env = dict(os.environ)
        if SANITIZED:
            # ASan keeps freed blocks in a quarantine: make it small, so
            # that what is measured is what the import holds
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=1:detect_leaks=0"
        p = subprocess.run([sys.executable, "-c", self.SCRIPT, SO, self.db_path, warm, path],
                           capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(p.returncode, 0, p.stderr)
        n, growth = map(int, p.stdout.split())
        self.assertEqual(n, len(lines))
        # well below the file's size: about one line and its tree, plus
        # SQLite's page cache (2 MB by default)
        self.assertLess(growth, size / 3, "peak RSS grew by %d bytes for a %d-byte file" % (growth, size))
        # the rows are the lines, in order (record_json: json.dumps(record, sort_keys=True))
        got = [r[0] for r in self.db.execute("SELECT record_json FROM profsum_history_record "
                                             "WHERE origin = 'import' ORDER BY record_id")]
        self.assertEqual(len(got), len(lines) + 1)
        self.assertEqual(got[1:], lines)
        labels = self.db.execute("SELECT label, status FROM profsum_history_record ORDER BY record_id "
                                 "LIMIT 3 OFFSET 1").fetchall()
        self.assertEqual(labels, [("run-0", "pass"), ("run-1", "warn"), ("run-2", "fail")])

    def test_line_longer_than_the_bound(self):
        # one line of more than 16 MiB (a valid JSON object): an error naming
        # the function, the file and the line; nothing is imported
        big = '{"label": "big", "pad": "%s"}' % ("x" * (16 << 20))
        path = self.write("long.jsonl", ('{"label": "ok"}\n\n' + big + '\n{"label": "after"}\n').encode())
        self.assertError("SELECT profsum_history_import(?)", (path,),
                         r"^profsum_history_import: '.*long\.jsonl': line 3: longer than 16 MiB")
        self.assertEqual(self.n_records(), 0)
        # a line just under the bound is read
        ok = '{"label": "fits", "pad": "%s"}' % ("y" * ((16 << 20) - 40))
        path = self.write("fits.jsonl", (ok + "\n").encode())
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 1)
        self.assertEqual(self.one("SELECT label FROM profsum_history"), "fits")

    def test_lines_across_buffer_boundaries(self):
        # lines of every length around the reader's 64 KiB chunks, the last
        # without a newline, CRLF endings, blank lines and non-objects
        recs, parts = [], []
        for i, n in enumerate([1, 100, 65500, 65536 - 20, 65536, 70000, 131072, 3, 200000]):
            r = {"label": "r%d" % i, "pad": "z" * n}
            recs.append(r)
            parts.append(json.dumps(r) + ("\r\n" if i % 2 else "\n"))
            parts.append("  \n" if i % 3 == 0 else "[%d]\n" % i)
        last = {"label": "last", "u": "\u00e9\U0001F600"}
        recs.append(last)
        text = "".join(parts) + json.dumps(last)          # no final newline
        path = self.write("edges.jsonl", text.encode())
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), len(recs))
        got = [json.loads(r[0]) for r in self.db.execute(
            "SELECT record_json FROM profsum_history_record ORDER BY record_id")]
        self.assertEqual(got, recs)

    def test_fifo_is_refused_without_waiting(self):
        # a FIFO is not a history file: refused at once (an open for
        # reading would wait for a writer); in a subprocess, with a timeout
        fifo = os.path.join(self.td.path, "fifo.jsonl")
        os.mkfifo(fifo)
        script = ("import sqlite3, sys\n"
                  "db = sqlite3.connect(':memory:'); db.enable_load_extension(True); db.load_extension(sys.argv[1])\n"
                  "try:\n    db.execute('SELECT profsum_history_import(?)', (sys.argv[2],)).fetchall()\n"
                  "except sqlite3.Error as e:\n    print(e)\n")
        p = subprocess.run([sys.executable, "-c", script, SO, fifo], capture_output=True, text=True, timeout=60)
        self.assertRegex(p.stdout, r"^profsum_history_import: '.*fifo\.jsonl': not a regular file$")

    def test_empty_file(self):
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (self.write("e.jsonl", b""),)), 0)
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (self.write("b.jsonl", b"\n \n"),)), 0)

    def test_lines_blank_to_python(self):
        # a line that str.strip() empties is blank, whatever whitespace it
        # holds: U+00A0, U+3000, U+0085, U+2028, 0x1C-0x1F, \v, \f; the
        # records around it are read (Python's loader skips such lines)
        for i, ws in enumerate(["\u00a0", "\u3000 \t", "\u0085", "\u2028", "\x1c\x1d\x1e\x1f", "\x0b\x0c"]):
            text = '{"label": "a"}\n' + ws + '\n{"label": "b"}\n'
            path = self.write("ws%d.jsonl" % i, text.encode())
            with self.subTest(ws=ws):
                self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 2)
        # what str.strip() keeps is no blank: a lone U+200B (not whitespace)
        path = self.write("zw.jsonl", '{"label": "a"}\n\u200b\n'.encode())
        with self.assertRaises(sqlite3.Error) as cm:
            self.one("SELECT profsum_history_import(?)", (path,))
        self.assertIn("line 2", str(cm.exception))


class TextRule(Base):
    def import_error(self, data, pattern):
        path = self.write("t.jsonl", data)
        msg = self.assertError("SELECT profsum_history_import(?)", (path,),
                               r"^profsum_history_import: '.*t\.jsonl': " + pattern)
        self.assertEqual(self.n_records(), 0)
        msg.encode("utf-8")                     # the message itself is text
        return msg

    def seed(self):
        """A database with one record (and so the views)."""
        path = self.write("seed.jsonl", b'{"label": "seed", "assessment": {"status": "pass"}}\n')
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 1)

    def import_error_seeded(self, data, pattern):
        """import_error() on a database with one record: still one."""
        path = self.write("t.jsonl", data)
        msg = self.assertError("SELECT profsum_history_import(?)", (path,),
                               r"^profsum_history_import: '.*t\.jsonl': " + pattern)
        self.assertEqual(self.n_records(), 1)
        return msg

    def test_repro_invalid_label(self):
        # generated equivalent of the shared reproducer: refused at line 1,
        # nothing stored, and Python reads both views
        self.seed()
        self.import_error_seeded(INVALID_UTF8_JSONL, r"line 1: \$\.label: not valid UTF-8 \(byte 0xff at byte 13\)$")
        self.import_error_seeded(INVALID_UTF8_JSONL.split(b"\n", 1)[1],
                          r"line 1: \$\.label: holds U\+0000, which SQLite text cannot keep whole "
                          r"\(\\u0000 at byte 13\)$")
        self.import_error_seeded(b'{"label":"nul","x":"\\ud800"}\n',
                          r"line 1: \$\.x: holds a lone surrogate .*\(\\ud800 at byte 20\)$")
        self.import_error_seeded(b'{"ok": 1}\n' + INVALID_UTF8_JSONL, r"line 2: \$\.label: ")
        rows, summary = self.views_readable()
        self.assertEqual([(r[3], r[4]) for r in rows], [("seed", "pass")])
        self.assertEqual([r[:4] for r in summary], [("all", None, 1, 1), ("label", "seed", 1, 1)])
        # the third record alone is fine
        path = self.write("ok.jsonl", INVALID_UTF8_JSONL.split(b"\n", 2)[2])
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 1)
        self.assertEqual(self.one("SELECT label FROM profsum_history WHERE record_id = 2"), "big")

    def test_label_that_is_not_a_string(self):
        # a label of another JSON type was stored as a NULL label: the
        # views listed the record among the unlabeled ones.  Now the import
        # fails naming the file, the line and the field, and stores nothing.
        self.seed()
        ok = b'{"label": "a", "assessment": {"status": "pass"}}\n'
        cases = [(b'42', r"not a number \(42\)"), (b'-1.5', r"not a number \(-1\.5\)"),
                 (b'NaN', r"not a number \(NaN\)"), (b'true', r"not a boolean \(true\)"),
                 (b'false', r"not a boolean \(false\)"), (b'{"name": "x"}', r"not an object"),
                 (b'["x"]', r"not an array"), (b'1' * 60, r"not a number \(1{40}\.\.\.\)")]   # a long value cut
        for value, what in cases:
            with self.subTest(value=value):
                self.import_error_seeded(ok + b'{"assessment": {"status": "fail"}, "label": ' + value + b'}\n',
                                         r"line 2: \$\.label: must be a string or null, " + what + "$")
        # a repeated key: every "label" member is checked
        self.import_error_seeded(b'{"label": "a", "label": 7}\n', r"line 1: \$\.label: .*not a number \(7\)$")
        # a label nested deeper is any other member: not checked
        path = self.write("nested.jsonl", b'{"before": {"label": 3}, "label": "b"}\n')
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 1)
        # null and a missing label are records without a label
        path = self.write("null.jsonl", b'{"label": null, "assessment": {"status": "pass"}}\n'
                                        b'{"assessment": {"status": "warn"}}\n')
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 2)
        rows, summary = self.views_readable()
        self.assertEqual([(r[3], r[4]) for r in rows], [("seed", "pass"), ("b", None), (None, "pass"),
                                                        (None, "warn")])
        self.assertIn(("label", None, 2), [r[:3] for r in summary])

    @unittest.skipUnless(os.path.exists(REPRO), "no shared reproducer (the generated one is tested)")
    def test_shared_repro(self):
        self.seed()
        self.assertError("SELECT profsum_history_import(?)", (REPRO,),
                         r"^profsum_history_import: '.*history_invalid_utf8\.jsonl': line 1: \$\.label: "
                         r"not valid UTF-8")
        self.assertEqual(self.n_records(), 1)
        self.views_readable()

    def test_every_string_and_key(self):
        cases = [
            # messages, nested strings, keys: every string of a record
            (b'{"assessment": {"status": "fail", "failures": ["ok", "regressed \xe9"]}}',
             r'line 1: \$\.assessment\.failures\[1\]: not valid UTF-8 \(byte 0xe9 at byte 64\)$'),
            (b'{"assessment": {"status": "pa\xc3ss"}}',
             r'line 1: \$\.assessment\.status: not valid UTF-8 \(byte 0xc3 at byte 29\)$'),
            (b'{"before": {"run\xffid": "r"}}',
             r'line 1: the key of \$\.before\["run\\xffid"\]: not valid UTF-8 \(byte 0xff at byte 16\)$'),
            (b'{"a b": [1, {"c": ["x", "\\u0000"]}]}',
             r'line 1: \$\["a b"\]\[1\]\.c\[1\]: holds U\+0000'),
            (b'{"k\\u0000": 1}', r'line 1: the key of \$\["k\\u0000"\]: holds U\+0000'),
            (b'{"x": "\\uDC00"}', r'line 1: \$\.x: holds a lone surrogate .*\(\\uDC00 at byte 7\)$'),
            (b'{"x": "\\ud83d x"}', r'line 1: \$\.x: holds a lone surrogate'),        # high, no low
            (b'{"x": "\\ud83d\\u0041"}', r'line 1: \$\.x: holds a lone surrogate'),   # high, then no low
            (b'{"x": "\\ude00\\ud83d"}', r'line 1: \$\.x: holds a lone surrogate'),   # reversed pair
            (b'{"x": "\xc0\xaf"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0xc0'),     # overlong '/'
            (b'{"x": "\xe0\x80\xaf"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0xe0'), # overlong
            (b'{"x": "\xed\xa0\x80"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0xed'), # encoded surrogate
            (b'{"x": "\xf4\x90\x80\x80"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0xf4'),  # > U+10FFFF
            (b'{"x": "\xf8\x88\x80\x80\x80"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0xf8'),
            (b'{"x": "ab\xe2\x82"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0xe2 at byte 9\)$'),  # cut
            (b'{"x": "\x80"}', r'line 1: \$\.x: not valid UTF-8 \(byte 0x80'),
        ]
        for data, pattern in cases:
            with self.subTest(data=data):
                self.import_error(data + b"\n", pattern)
        # a deep path shows its first and last levels
        deep = b'{"a": ' * 30 + b'"\xff"' + b'}' * 30
        msg = self.import_error(deep + b"\n", r"line 1: \$\.a\.a\.a\.a\.\.\.\.a(\.a){10}: not valid UTF-8")

    def test_valid_text_is_kept(self):
        # what is text is read as it is: pairs, characters of every length,
        # U+FFFD itself, escaped backslashes before a "u", other escapes
        rec = {"label": "caf\u00e9 \U0001F600 \ufffd \u20ac \\u0000 \\ud800 \"q\" \t\n",
               "k\u00e9y": ["\U0010FFFF", "\u0001", "/"],
               "assessment": {"status": "warn", "failures": [], "warnings": ["\u00e9"]}}
        lines = [json.dumps(rec, sort_keys=True),                          # ASCII with escapes
                 json.dumps(rec, sort_keys=True, ensure_ascii=False),      # raw UTF-8
                 '{"label": "\\uD83D\\uDE00\\/x"}']
        path = self.write("ok.jsonl", ("\n".join(lines) + "\n").encode("utf-8"))
        self.assertEqual(self.one("SELECT profsum_history_import(?)", (path,)), 3)
        got = [json.loads(r[0]) for r in self.db.execute(
            "SELECT record_json FROM profsum_history_record ORDER BY record_id")]
        self.assertEqual(got, [rec, rec, {"label": "\U0001F600/x"}])
        rows, _ = self.views_readable()
        self.assertEqual([r[3] for r in rows], [rec["label"], rec["label"], "\U0001F600/x"])
        self.assertEqual([r[4] for r in rows], ["warn", "warn", None])

    def test_old_rows_do_not_break_the_views(self):
        # A row as a build before the check stored it: the label and status
        # columns hold bytes that are not UTF-8 (record_json is ASCII, the
        # bytes written as \ufffd).  The views read label and status from
        # record_json, so Python still reads every row.
        self.one("SELECT profsum_history_import(?)", (self.write("a.jsonl", b'{"label": "a"}\n'),))
        self.db.execute("INSERT INTO profsum_history_record(created_at, label, status, origin, record_json) "
                        "VALUES('2026-01-01T00:00:00Z', CAST(x'626164ff' AS TEXT), CAST(x'66ff' AS TEXT), "
                        "'import', ?)",
                        ('{"assessment": {"status": "f\\ufffd"}, "label": "bad\\ufffd"}',))
        self.db.commit()
        rows, summary = self.views_readable()
        self.assertEqual([(r[3], r[4]) for r in rows], [("a", None), ("bad\ufffd", "f\ufffd")])
        self.assertEqual(sorted((r[0], r[1], r[2]) for r in summary if r[0] == "label"),
                         [("label", "a", 1), ("label", "bad\ufffd", 1)])

    def test_track_and_bundle_labels(self):
        for lab, (steps, soft) in (("before", ([100, 110, 120, 130, 140, 150], 60)),
                                   ("after", ([90, 100, 110, 120, 130, 140], 40))):
            path = self.write(lab + ".json", json.dumps(fixtures.f1(steps, soft)).encode())
            self.one("SELECT profsum_import(?, ?, '{\"warmup_steps\": 2}')", (path, lab))
        self.assertError("SELECT profsum_track('before', 'after', CAST(x'626164ff' AS TEXT))", (),
                         r"^profsum_track: label is not valid UTF-8 \(byte 0xff at byte 3\)$")
        self.assertError("SELECT profsum_track('before', 'after', CAST(x'610062' AS TEXT))", (),
                         r"^profsum_track: label holds U\+0000 \(a NUL byte at byte 1\)")
        self.assertError("SELECT profsum_track('before', 'after', CAST(x'eda080' AS TEXT))", (),
                         r"^profsum_track: label is not valid UTF-8 \(byte 0xed at byte 0\)$")
        out = os.path.join(self.td.path, "bundle")
        for opts, pattern in (('{"label": "x\\ud800", "history": true}', r"\$\.label: holds a lone surrogate"),
                              ('{"label": "x\\u0000y", "history": true}', r"\$\.label: holds U\+0000"),
                              (b'{"label": "x\xff", "history": true}', r"\$\.label: not valid UTF-8")):
            with self.subTest(opts=opts):
                arg = "CAST(? AS TEXT)" if isinstance(opts, bytes) else "?"
                self.assertError("SELECT profsum_bundle('before', 'after', ?, %s)" % arg, (out, opts),
                                 r"^profsum_bundle: options_json: " + pattern)
                self.assertFalse(os.path.exists(out))
        self.assertEqual(self.n_records(), 0)
        # text labels still work, and the record is what was asked
        rec = json.loads(self.one("SELECT profsum_track('before', 'after', 'caf\u00e9 \U0001F600')"))
        self.assertEqual(rec["label"], "caf\u00e9 \U0001F600")
        self.assertEqual(self.one("SELECT label FROM profsum_history"), "caf\u00e9 \U0001F600")

    def test_source_path_that_is_not_utf8(self):
        # A trace imported from a path whose name is not UTF-8 (bytes ED A0
        # 80: a surrogate encoded in UTF-8).  The record profsum_track
        # writes holds it as U+FFFD, one per byte as Python's decoder
        # replaces it, as every other byte that is not UTF-8:
        # before, record_json held a lone \ud800 escape, which the views'
        # json_extract() turned back into those bytes (Python could not
        # read the row).
        d = os.fsencode(self.td.path)
        for lab, (steps, soft) in (("b", ([100, 110, 120, 130, 140, 150], 60)),
                                   ("a", ([90, 100, 110, 120, 130, 140], 40))):
            p = d + b"/" + lab.encode() + b"\xed\xa0\x80.json"
            with open(p, "w") as f:
                json.dump(fixtures.f1(steps, soft), f)
            self.one("SELECT profsum_import(CAST(? AS TEXT), ?, '{\"warmup_steps\": 2}')", (p, lab))
        self.one("SELECT profsum_track('b', 'a', 'sp')")
        line = self.one("SELECT record_json FROM profsum_history_record")
        self.assertNotIn("\\ud800", line)
        self.assertIn("b\\ufffd\\ufffd\\ufffd.json", line)
        rows, _ = self.views_readable()
        self.assertTrue(rows[0][11].endswith("/b" + b"\xed\xa0\x80".decode("utf-8", "replace") + ".json"),
                        rows[0][11])
        self.assertTrue(rows[0][12].endswith("/a\ufffd\ufffd\ufffd.json"), rows[0][12])


class NeverOverADatabase(unittest.TestCase):
    """The functions that write a file by renaming a new one over the path
    (history export, trim, bundle) refuse a path that is a database: the
    connection's own (or its WAL), or any file with SQLite's header."""

    def test_refused(self):
        with TempDir() as td:
            db_path = os.path.join(td.path, "runs.db")
            db = connect(db_path)
            t = td.write("f1.json.gz", json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)), gz=True)
            db.execute("SELECT profsum_import(?, 'a')", (t,)).fetchall()
            db.execute("SELECT profsum_import(?, 'b')", (t,)).fetchall()
            db.execute("SELECT profsum_track('a', 'b', 'r')").fetchall()
            other = os.path.join(td.path, "other.db")
            o = sqlite3.connect(other)
            o.execute("CREATE TABLE keep(x)")
            o.commit()
            o.close()
            with open(db_path, "rb") as f:
                head = f.read(100)
            with open(other, "rb") as f:
                other_bytes = f.read()
            cases = [
                ("SELECT profsum_history_export(?)", (db_path,),
                 "profsum_history_export: '%s' is the database of schema 'main' of this connection: "
                 "the history is written to a new file renamed over it, which would replace it; "
                 "export to another path" % db_path),
                ("SELECT profsum_history_export(?)", (db_path + "-wal",),
                 "profsum_history_export: '%s-wal' is the write-ahead log of schema 'main' of this "
                 "connection" % db_path),
                ("SELECT profsum_history_export(?)", (other,),
                 "profsum_history_export: '%s' is an SQLite database" % other),
                ("SELECT profsum_trim(?, ?)", (t, db_path),
                 "profsum_trim: '%s' is the database of schema 'main' of this connection: the "
                 "trimmed trace is written to a new file renamed over it" % db_path),
                ("SELECT profsum_trim(?, ?)", (t, other),
                 "profsum_trim: '%s' is an SQLite database" % other),
            ]
            for sql, args, want in cases:
                with self.subTest(sql=sql, args=args):
                    with self.assertRaises(sqlite3.OperationalError) as cm:
                        db.execute(sql, args).fetchall()
                    self.assertTrue(str(cm.exception).startswith(want), str(cm.exception))
            # another process's database in WAL mode: its log and index too
            wal = os.path.join(td.path, "w.db")
            w = sqlite3.connect(wal)
            w.execute("PRAGMA journal_mode=WAL")
            w.execute("CREATE TABLE t(a)")
            w.execute("INSERT INTO t VALUES (1)")
            w.commit()
            for path, what in ((wal + "-wal", "the write-ahead log of the SQLite database '%s'" % wal),
                               (wal + "-shm", "the shared-memory index of the SQLite database '%s'" % wal),
                               # a journal that does not exist yet: SQLite would delete it
                               (wal + "-journal", "the rollback journal of the SQLite database '%s'" % wal)):
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    db.execute("SELECT profsum_history_export(?)", (path,)).fetchall()
                self.assertIn("'%s' is %s:" % (path, what), str(cm.exception))
            self.assertEqual(w.execute("SELECT count(*) FROM t").fetchone()[0], 1)
            w.close()
            # the same path through an attached schema names that schema
            db.execute("ATTACH ? AS h", (other,))
            with self.assertRaises(sqlite3.OperationalError) as cm:
                db.execute("SELECT profsum_history_export(?)", (other,)).fetchall()
            self.assertIn("is the database of schema 'h' of this connection", str(cm.exception))
            db.execute("DETACH h")
            # nothing was replaced; a plain path still works
            self.assertEqual(db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0], 2)
            with open(db_path, "rb") as f:
                self.assertEqual(f.read(100)[:16], head[:16])
            with open(other, "rb") as f:
                self.assertEqual(f.read(), other_bytes)
            out = os.path.join(td.path, "runs.jsonl")
            self.assertEqual(db.execute("SELECT profsum_history_export(?)", (out,)).fetchone()[0], 1)
            db.close()


class OutOfMemory(unittest.TestCase):
    def test_every_allocation_of_an_import(self):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler")
        with tempfile.TemporaryDirectory(prefix="profsum-hoom-") as tmp:
            exe = os.path.join(tmp, "history_oom")
            b = subprocess.run([cc, "-std=c11", "-O1", "-o", exe, os.path.join(HERE, "history_oom.c"),
                                "-lsqlite3", "-ldl"], capture_output=True, text=True)
            if b.returncode != 0:
                self.skipTest("cannot build tests/history_oom.c: " + b.stderr[-300:])
            path = os.path.join(tmp, "h.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps(record(1, ops=2, dense=3)) + "\n\n[1]\n"
                        + json.dumps({"label": "b", "x": [1, 2.5, "caf\u00e9"]}) + "\n")
            env = dict(os.environ)
            if SANITIZED:
                env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
            p = subprocess.run([exe, SO, path], capture_output=True, text=True, env=env, timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
            last = p.stdout.strip().splitlines()[-1]
            self.assertRegex(last, r"^runs \d+, failed 0, injected \d+, in profsum's own allocations \d+$")
            self.assertGreater(int(last.rsplit(" ", 1)[1]), 20)


if __name__ == "__main__":
    unittest.main()
