"""Names that hold a NUL character keep it in every section of the v1 document.

U+0000 is valid UTF-8 and valid JSON (as \\u0000), so an XPlane's metadata
name or a trace JSON's "name" may hold one, and the reference groups, sorts
and prints such a name whole.  The document once cut such texts at the NUL
in hot_ops (name, canonical name, category, tf_op path, source), in
semantic_families' example_op and in the optimization candidates' texts,
while communication_ops counted the same op whole.
Run: /usr/bin/python3 tests/run.py test_nul_names.py
"""
import json
import os
import tempfile
import unittest

from util import connect
from xspace_writer import PlaneBuilder, xspace


class NulNamesTest(unittest.TestCase):
    def setUp(self):
        self.db = connect()
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.db.close()
        self.tmp.cleanup()

    def summary(self, path):
        (doc,) = self.db.execute("SELECT profsum_summary_json(profsum_import(?, 'x'), "
                                 "'{\"warmup_steps\":0}')", (path,)).fetchone()
        return json.loads(doc)

    def check(self, d, with_tf):
        hot = {h["name"]: h for h in d["hot_ops"]}
        self.assertEqual(sorted(hot), ["k\x00all-reduce", "op\x00x.1"])
        comm = hot["k\x00all-reduce"]
        self.assertEqual(comm["category"], "communication")
        self.assertEqual(comm["canonical_name"], "k\x00all-reduce")
        op = hot["op\x00x.1"]
        self.assertEqual(op["canonical_name"], "op\x00x")
        self.assertEqual(op["category"], "compute")
        if with_tf:
            self.assertEqual(op["tf_op_path"], "a\x00b/c")
        # the order is the reference's: exclusive time, descending
        self.assertEqual(d["hot_ops"][0]["name"], "op\x00x.1")
        fam = {f["family"]: f["example_op"] for f in d["semantic_families"]}
        self.assertEqual(fam["collective"], "k\x00all-reduce")
        self.assertEqual(fam["other"], "op\x00x.1")
        cand = {c["candidate_id"]: c for c in d["optimization_candidates"]}
        hot_c = [c for c in cand.values() if c["evidence"] and c["evidence"][0].startswith("Top op: ")]
        self.assertEqual(len(hot_c), 1)
        self.assertEqual(hot_c[0]["evidence"][0], "Top op: op\x00x.1")
        self.assertTrue(hot_c[0]["rationale"].startswith("Top op 'op\x00x.1' contributes "))

    def test_xplane(self):
        pb = PlaneBuilder("/device:TPU:0")
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=[
            pb.event("op\x00x.1", offset_ps=0, duration_ps=5_000_000,
                     stats=[pb.stat("tf_op", s="a\x00b/c")]),
            pb.event("k\x00all-reduce", offset_ps=6_000_000, duration_ps=1_000_000)])
        path = os.path.join(self.tmp.name, "n.xplane.pb")
        with open(path, "wb") as f:
            f.write(xspace([pb.build()]))
        self.check(self.summary(path), with_tf=True)

    def test_trace_json(self):
        events = [
            {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}},
            {"ph": "X", "name": "op\x00x.1", "pid": 1, "tid": 1, "ts": 0, "dur": 5,
             "args": {"tf_op": "a\x00b/c"}},
            {"ph": "X", "name": "k\x00all-reduce", "pid": 1, "tid": 1, "ts": 6, "dur": 1},
        ]
        path = os.path.join(self.tmp.name, "n.trace.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        self.check(self.summary(path), with_tf=True)


if __name__ == "__main__":
    unittest.main()
