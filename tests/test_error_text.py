"""Error messages are valid UTF-8 whatever the arguments hold.

Messages quote what the caller gave (a path, a label, a value), and a path
on Linux is bytes: a message that quoted invalid UTF-8 as it is could not
be read by a client that decodes strictly (Python's sqlite3 raised
UnicodeDecodeError instead of the error).  Such bytes read as U+FFFD.
Run: /usr/bin/python3 tests/run.py test_error_text.py
"""
import os
import sqlite3
import tempfile
import unittest

from util import connect

BAD = "CAST(X'2f746d702fff2e6a736f6e' AS TEXT)"   # '/tmp/\xff.json'
BAD_LABEL = "CAST(X'61ff62' AS TEXT)"              # 'a\xffb'


class ErrorTextTest(unittest.TestCase):
    def setUp(self):
        self.db = connect()

    def tearDown(self):
        self.db.close()

    def message(self, sql):
        """The error SQL raises, decoded (fails on UnicodeDecodeError)."""
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute(sql).fetchall()
        return str(cm.exception)

    def test_paths(self):
        cases = [
            ("SELECT count(*) FROM trace_events(%s)" % BAD,
             "trace_events: '/tmp/\ufffd.json': cannot open (No such file or directory)"),
            ("SELECT * FROM profsum_diagnostics(%s)" % BAD,
             "profsum_diagnostics: '/tmp/\ufffd.json': cannot open (No such file or directory)"),
            ("SELECT * FROM profsum_xplane_planes(%s)" % BAD,
             "profsum_xplane_planes: '/tmp/\ufffd.json': cannot open (No such file or directory)"),
            ("SELECT profsum_import(%s)" % BAD,
             "profsum_import: '/tmp/\ufffd.json': No such file or directory"),
        ]
        for sql, want in cases:
            with self.subTest(sql=sql):
                self.assertEqual(self.message(sql), want)

    def test_labels_and_values(self):
        self.assertEqual(
            self.message("SELECT profsum_summary_json(%s)" % BAD_LABEL),
            "profsum_summary_json: no trace with label 'a\ufffdb' "
            "(no trace imported in schema 'main')")
        msg = self.message("SELECT profsum_session_json(%s)" % BAD_LABEL)
        self.assertTrue(msg.startswith("profsum_session_json: "), msg)

    def test_long_value_cut(self):
        # exclusive_time quotes a bad text argument up to 80 bytes; a cut
        # inside a sequence reads as U+FFFD, never as a decoding error
        text = "x" * 79 + "\u00e9" * 1000
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute(
                "SELECT exclusive_time(?, 1) OVER (PARTITION BY 1 ORDER BY 1 ROWS BETWEEN "
                "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)", (text,)).fetchall()
        msg = str(cm.exception)
        self.assertEqual(msg, "exclusive_time: ts must be a number or NULL, got text '"
                         + "x" * 79 + "\ufffd' (cut)")

    def test_every_function_decodes(self):
        # every text argument of every function, in turn invalid UTF-8: the
        # message (if any) decodes
        rows = self.db.execute(
            "SELECT DISTINCT name, narg FROM pragma_function_list WHERE "
            "(name LIKE 'profsum%' OR name IN ('exclusive_time', 'classify_op', 'tf_region')) "
            "ORDER BY name, narg").fetchall()
        self.assertGreater(len(rows), 20)
        tried = 0
        with tempfile.TemporaryDirectory() as d:
            # an invalid name inside the folder (functions that write a file
            # given this path create it there)
            bad = "CAST(X'%s' AS TEXT)" % (os.fsencode(d) + b"/\xff.json").hex()
            for name, narg in rows:
                for n in ([narg] if narg >= 0 else [1, 2, 3]):
                    for pos in range(n):
                        args = ["'%s'" % os.path.join(d, "x")] * n
                        args[pos] = bad
                        sql = "SELECT %s(%s)" % (name, ", ".join(args))
                        if name == "exclusive_time":
                            sql += (" OVER (PARTITION BY 1 ORDER BY 1 ROWS BETWEEN "
                                    "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)")
                        tried += 1
                        try:
                            self.db.execute(sql).fetchall()
                        except UnicodeDecodeError as e:
                            self.fail("%s: %s" % (sql, e))
                        except sqlite3.Error:
                            pass
        self.assertGreater(tried, 40)


if __name__ == "__main__":
    unittest.main()
