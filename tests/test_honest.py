"""Honest answers: `query` says on stderr when it did not recognise the
question or the op name (stdout stays the reference's answer), a JSON file
that is no trace is an import error naming the file, and a capped export is
a diagnostic and a stderr line (not a v1 warning)."""
import json
import os
import sqlite3
import unittest

import fixtures
from util import connect, TempDir
from test_cli import CliBase, F1_BEFORE


class Query(CliBase):
    def setUp(self):
        super().setUp()
        self.p = self.trace("f1.json", F1_BEFORE)

    def reference_answer(self, q):
        db = connect()
        db.execute("SELECT profsum_import(?, 'f1')", (self.p,))
        return json.loads(db.execute("SELECT profsum_query_json('f1', ?)", (q,)).fetchone()[0])

    def test_unrecognised_question(self):
        q = "what is the weather like"
        out, err = self.run_cli("query", "--summary", self.p, "--question", q)
        self.assertEqual(json.loads(out), self.reference_answer(q))
        self.assertIn("matched none of the questions", err)
        self.assertIn("profsum query --list", err)
        self.assertIn("SELECT * FROM profsum_advice", err)

    def test_recognised_questions_are_quiet(self):
        for q in ("What are the top ops?", "What should we try next?", "show hierarchical regions"):
            out, err = self.run_cli("query", "--summary", self.p, "--question", q)
            self.assertEqual(err, "", q)
            self.assertEqual(json.loads(out), self.reference_answer(q))

    def test_unknown_op_name(self):
        out, err = self.run_cli("query", "--summary", self.p, "--question", "what is the gap before softmaxx")
        self.assertEqual(json.loads(out)["match"], None)
        self.assertIn("no op named 'softmaxx'", err)
        self.assertIn("closest: softmax", err)
        out, err = self.run_cli("query", "--summary", self.p, "--question", "what is the gap before softmax")
        self.assertNotIn("no op named", err)

    def test_advice_option(self):
        out, err = self.run_cli("query", "--summary", self.p, "--question", "tell me a joke", "--advice")
        ans = json.loads(out)
        self.assertIs(ans["question_recognized"], False)
        self.assertIsInstance(ans["profsum_advice"], list)
        ref = self.reference_answer("tell me a joke")
        self.assertEqual({k: v for k, v in ans.items() if k in ref}, ref)

    def test_advice_in_sql(self):
        db = connect()
        db.execute("SELECT profsum_import(?, 'f1')", (self.p,))
        a = json.loads(db.execute("SELECT profsum_query_json('f1', 'top ops', '{\"advice\": true}')").fetchone()[0])
        self.assertIs(a["question_recognized"], True)
        self.assertEqual(len(a["profsum_advice"]),
                         db.execute("SELECT count(*) FROM profsum_advice").fetchone()[0])
        plain = db.execute("SELECT profsum_query_json('f1', 'top ops', 2)").fetchone()[0]
        self.assertNotIn("profsum_advice", plain)
        with self.assertRaises(sqlite3.Error):
            db.execute("SELECT profsum_query_json('f1', 'top ops', '{\"advise\": true}')").fetchone()


class NotATrace(unittest.TestCase):
    def test_import_errors(self):
        db = connect()
        with TempDir() as td:
            for text in ('{"lr": 0.001}', '[1,2,3]', '{"traceEvents": [1, "x", {"name": "a"}]}'):
                p = td.write("cfg.json", text)
                with self.assertRaises(sqlite3.Error) as cm:
                    db.execute("SELECT profsum_import(?)", (p,))
                self.assertIn("profsum_import", str(cm.exception))
                self.assertIn("cfg.json", str(cm.exception))
                self.assertIn("not a trace", str(cm.exception))
            # an empty trace stays one
            for text in ('{"traceEvents": []}', "[]"):
                p = td.write("empty.json", text)
                tid = db.execute("SELECT profsum_import(?, ?)", (p, text)).fetchone()[0]
                self.assertEqual(db.execute("SELECT num_events_total FROM profsum_trace WHERE trace_id=?",
                                            (tid,)).fetchone()[0], 0)


class NotATraceCli(CliBase):
    def test_summarize_fails(self):
        p = self.td.write("cfg.json", '{"lr": 0.001}')
        out, err = self.run_cli("summarize", "--trace-file", p, rc=1)
        self.assertEqual(out, "")
        self.assertIn("not a trace", err)
        self.assertIn("cfg.json", err)


def capped_doc(n=100000):
    ev = [fixtures.TPU_META[0], fixtures.TPU_META[2]]
    ev += [{"ph": "X", "pid": 1, "tid": 2, "name": "fusion.%d" % (i % 7), "ts": i, "dur": 1}
           for i in range(n)]
    # one long event that ends long after the last one starts
    ev.append({"ph": "X", "pid": 1, "tid": 2, "name": "while.1", "ts": 0, "dur": 10 * n})
    return fixtures.doc(ev)


class Capped(CliBase):
    def test_capped_export(self):
        p = self.trace("big.json", capped_doc())
        db = connect()
        db.execute("SELECT profsum_import(?, 'big')", (p,))
        rows = db.execute("SELECT detail FROM profsum_diagnostic WHERE kind='capped_export'").fetchall()
        self.assertEqual(len(rows), 1)
        self.assertIn("looks capped", rows[0][0])
        doc = json.loads(db.execute("SELECT profsum_summary_json('big')").fetchone()[0])
        self.assertFalse([w for w in doc["trace_overview"]["quality_warnings"] if "capped" in w])
        out, err = self.run_cli("summarize", "--trace-file", p)
        self.assertIn("looks capped", err)
        self.assertEqual(json.loads(out)["trace_overview"]["num_complete_events"], 100001)

    def test_small_trace_is_not_capped(self):
        p = self.trace("small.json", capped_doc(1000))
        db = connect()
        db.execute("SELECT profsum_import(?, 's')", (p,))
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_diagnostic WHERE kind='capped_export'")
                         .fetchone()[0], 0)


if __name__ == "__main__":
    unittest.main()
