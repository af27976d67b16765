"""The markdown report of a profile_summary.v1 document whose 120 hot ops
have no canonical_name (the report recomputes it from the name), with each
allocation failing in turn (tests/oom_sql.c, AddressSanitizer): every run is
an error or the reference report, and nothing is used after it is freed
(a failed recompute once freed the report's string and went on writing to
it).
Needs build/asan/oom_sql (make asan builds it); skipped without it."""
import json
import os
import tempfile
import unittest

from fixtures import TPU_META, doc
from util import OOM_SQL, connect, run_oom_sql


def many_ops(n):
    """A trace of four steps with n distinct device ops (fusion.0, ...)."""
    ev = list(TPU_META)
    for step in range(4):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(step), "ts": step * 100 * n, "dur": 100 * n})
        for k in range(n):
            ev.append({"ph": "X", "pid": 1, "tid": 2, "name": "fusion.%d" % k, "ts": step * 100 * n + 100 * k,
                       "dur": 10 + k})
    return doc(ev)


def v1_without_canonical_names(path_trace):
    """The v1 document of the trace at path_trace (all its hot ops), their
    canonical names removed (a summary written by another tool may lack
    them)."""
    db = connect()
    tid = db.execute("SELECT profsum_import(?, 't', '{\"hot_op_limit\": 500}')", (path_trace,)).fetchone()[0]
    doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
    for h in doc["hot_ops"]:
        h.pop("canonical_name", None)
    return doc


class ReportWithoutCanonicalNames(unittest.TestCase):

    def test_recomputed_names_in_the_report(self):
        """The names are recomputed: fusion.1's canonical name is fusion."""
        with tempfile.TemporaryDirectory(prefix="profsum-md-") as tmp:
            trace = os.path.join(tmp, "t.json")
            with open(trace, "w") as f:
                json.dump(many_ops(120), f)
            doc = v1_without_canonical_names(trace)
            self.assertEqual(len(doc["hot_ops"]), 120)
            v1 = os.path.join(tmp, "v1.json")
            with open(v1, "w") as f:
                json.dump(doc, f)
            db = connect()
            md = db.execute("SELECT profsum_report_md(profsum_import(?, 'v'), 200)", (v1,)).fetchone()[0]
            self.assertIn("| `fusion.7` | `fusion` |", md)

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds it)")
    def test_out_of_memory_fails_cleanly(self):
        with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
            trace = os.path.join(tmp, "t.json")
            with open(trace, "w") as f:
                json.dump(many_ops(120), f)
            v1 = os.path.join(tmp, "v1.json")
            with open(v1, "w") as f:
                json.dump(v1_without_canonical_names(trace), f)
            sql = "SELECT profsum_report_md(profsum_import('%s', 'v', '{\"replace\": true}'), 200)" % v1
            run_oom_sql(self, [sql])


if __name__ == "__main__":
    unittest.main()
