"""bench/gen_xplane.py writes an XSpace and the trace JSON the TSL converter
makes of it; the benchmark compares the two on the premise that they hold
the same capture.  Checked on a small capture: the generator's event count
is the rows of trace_events on the XPlane, the JSON has the same X events
(plus its M events), and the two summaries agree field by field but for the
source's provenance."""
import hashlib
import json
import math
import os
import subprocess
import unittest

from util import connect, TempDir, ROOT

GEN = os.path.join(ROOT, "bench", "gen_xplane.py")
# Fields that name the source, not the capture (the JSON's num_events_total
# counts its M events; its end ts is the %.17g text of a double sum).
PROVENANCE = {".generated_at_utc", ".source_format", ".source_path", ".trace_overview.display_time_unit",
              ".trace_overview.num_events_total", ".trace_overview.profile_end_ts",
              ".trace_provenance.trace_sha256"}


def flat(d, p=""):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from flat(v, p + "." + k)
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from flat(v, "%s[%d]" % (p, i))
    else:
        yield p, d


class GenXplane(unittest.TestCase):
    def test_xplane_and_its_json_hold_the_same_capture(self):
        with TempDir() as t:
            xp = os.path.join(t.path, "h.xplane.pb")
            js = os.path.join(t.path, "h.trace.json.gz")
            out = subprocess.run(["/usr/bin/python3", GEN, "--size", "300KB", "--out", xp, "--json", js,
                                  "--devices", "2", "--layers", "4"],
                                 capture_output=True, text=True, check=True).stdout
            info = json.loads(out)
            self.assertEqual(info["bytes"], os.path.getsize(xp))
            db = connect()
            q = "SELECT count(*), sum(dur_ps), count(name) FROM trace_events(?) WHERE ph='X'"
            nx, dx, namex = db.execute(q, (xp,)).fetchone()
            nj, dj, namej = db.execute(q, (js,)).fetchone()
            self.assertEqual(nx, info["events"])
            self.assertEqual((nx, dx, namex), (nj, dj, namej))
            # per line: the same tracks (pid, tid) with the same events
            per = "SELECT pid, tid, count(*), sum(dur_ps), min(ts) FROM trace_events(?) WHERE ph='X' GROUP BY 1, 2"
            self.assertEqual(db.execute(per, (xp,)).fetchall(), db.execute(per, (js,)).fetchall())
            docs = []
            for f in (xp, js):
                db.execute("SELECT profsum_import(?, ?)", (f, os.path.basename(f))).fetchall()
                docs.append(dict(flat(json.loads(db.execute(
                    "SELECT profsum_summary_json(?)", (os.path.basename(f),)).fetchone()[0]))))
            a, b = docs
            diff = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
            # the breakdown is the reference's sums, and the reference adds
            # an XPlane host line's events as one line total (§6.1) where
            # it adds a JSON track's event by event: the two differ in the
            # sums' rounding only
            rounding = {k for k in diff - PROVENANCE
                        if k.startswith((".time_breakdown.", ".semantic_families["))
                        and isinstance(a.get(k), float) and isinstance(b.get(k), float)
                        and math.isclose(a[k], b[k], rel_tol=1e-12)}
            self.assertLessEqual(diff - rounding, PROVENANCE)
            self.assertGreater(len(a), 200)          # steps, hot ops, families, gaps, regions
            self.assertEqual(a[".source_format"], "xplane_pb")
            self.assertGreater(a[".step_time.all_steps.count"], 2)
            # the provenance hash, computed beside the decoding, is the file's
            for f in (xp, js):
                with open(f, "rb") as fh:
                    want = hashlib.sha256(fh.read()).hexdigest()
                got = db.execute("SELECT sha256 FROM profsum_trace WHERE label=?",
                                 (os.path.basename(f),)).fetchone()[0]
                self.assertEqual(got, want, f)


if __name__ == "__main__":
    unittest.main()
