"""Two fixes: how profsum_import tells a profile_summary.v1 summary from a
trace (by the keys of the top-level object, walked over the streamed
bytes, not by a text search in the first 64 KiB: a v1 document has sorted
keys, so "schema_version" comes after hot_ops & co.), with the CLI rejecting
JSON that is neither where a summary is expected; and `track --history
FILE.jsonl` appending one line per record (tools-spec §4.2) instead of
rewriting the file."""
import json
import os
import re
import sqlite3
import subprocess
import unittest

import fixtures
from util import connect, ROOT
from test_cli import CliBase

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def many_ops_trace(n_ops, scale):
    """Steps on the Steps thread and n_ops distinct ops (long names, tf_op
    paths) on XLA Ops: a summary with --hot-op-limit 500 is well over 64 KiB."""
    ev = list(fixtures.TPU_META)
    for i in range(8):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(i), "ts": i * 100000, "dur": 90000 + i * scale})
    ts = 0
    for i in range(n_ops):
        dur = 10 + (i * 7919) % 97 + (scale if i % 3 == 0 else 0)
        ev.append({"ph": "X", "pid": 1, "tid": 2, "name": "fusion_with_a_long_name.%04d" % i, "ts": ts, "dur": dur,
                   "args": {"tf_op": "jit(train_step)/transformer/layer_%d/attention/op_%04d" % (i % 24, i)}})
        ts += dur + 5 + (i % 11)
    ev.append({"ph": "X", "pid": 2, "tid": 1, "name": "python_host_compute", "ts": 0, "dur": 800})
    return fixtures.doc(ev)


Base = CliBase      # run_cli and a temporary folder (test_cli.py)


class BigV1Summary(Base):
    """A v1 summary over 64 KiB whose schema_version lies beyond 64 KiB."""

    def make(self, name, scale):
        t = self.td.write(name + ".trace.json.gz", many_ops_trace(700, scale), gz=True)
        s = os.path.join(self.td.path, name + ".summary.json")
        self.run_cli("summarize", "--trace-file", t, "--hot-op-limit", "500", "--warmup-steps", "2", "--output", s)
        with open(s, "rb") as f:
            data = f.read()
        self.assertGreater(len(data), 65536)
        self.assertGreater(data.index(b'"schema_version": "profile_summary.v1"'), 65536)
        return t, s, data

    def test_import_round_trip(self):
        t, s, data = self.make("big", 0)
        gz = self.td.write("big.summary.json.gz", data, gz=True)
        db = connect()
        # (source_format comes from the document: the trace's)
        cols = "sha256, num_events_total, num_complete_events, num_processes, num_threads, " \
               "profile_start_ts, profile_end_ts"
        it = db.execute("SELECT profsum_import(?, 'trace', '{\"hot_op_limit\": 500, \"warmup_steps\": 2}')",
                        (t,)).fetchone()[0]
        want = db.execute("SELECT %s FROM profsum_trace WHERE trace_id=?" % cols, (it,)).fetchone()
        self.assertGreater(want[1], 700)
        for label, path in [("v1", s), ("v1gz", gz)]:
            iv = db.execute("SELECT profsum_import(?, ?)", (path, label)).fetchone()[0]
            got = db.execute("SELECT %s FROM profsum_trace WHERE trace_id=?" % cols, (iv,)).fetchone()
            self.assertEqual(got, want, label)
            self.assertEqual(db.execute("SELECT options->>'hot_op_limit', size FROM profsum_trace "
                                        "WHERE trace_id=?", (iv,)).fetchone(), (25, os.path.getsize(path)))
            # the document comes back unchanged, all 500 hot ops (the file
            # is the document and a newline, as `summarize --output` writes it)
            doc = db.execute("SELECT profsum_summary_json(?)", (iv,)).fetchone()[0]
            self.assertEqual(doc + "\n", data.decode(), label)
            self.assertEqual(db.execute("SELECT count(*) FROM profsum_agg_op WHERE trace_id=?", (iv,)).fetchone()[0],
                             500)
            # the KPIs a summary holds what they need for (docs/summary.md):
            # host_overhead as the trace's own, not 'unavailable'
            kp = "SELECT value, band FROM profsum_kpis WHERE trace_id=? AND kpi='host_overhead'"
            self.assertEqual(db.execute(kp, (iv,)).fetchall(), db.execute(kp, (it,)).fetchall(), label)
            self.assertNotEqual(db.execute(kp, (iv,)).fetchone()[1], "unavailable")
            # one_op_dominating is a share of all device ops' exclusive time,
            # which the document does not hold (its hot ops alone would make
            # the top op's share larger): unavailable, never a wrong figure
            od = "SELECT value, band, explanation FROM profsum_kpis WHERE trace_id=? AND kpi='one_op_dominating'"
            v, band, why = db.execute(od, (iv,)).fetchone()
            self.assertEqual((v, band), (None, "unavailable"), label)
            self.assertIn("holds only the hot ops", why)
            tv, tband, _ = db.execute(od, (it,)).fetchone()
            self.assertGreater(tv, 0)
            self.assertIn(tband, ("detected", "not_detected"))
        db.close()

    def test_v1_document_that_cannot_be_stored(self):
        """A v1 document with two hot ops of one name (or a null
        generated_at_utc, or a section of another shape) is refused with the
        file, the section and the rule, not SQLite's table and column (or its
        "malformed JSON") alone; nothing is written."""
        t = self.td.write("small.trace.json.gz", many_ops_trace(5, 0), gz=True)
        s = os.path.join(self.td.path, "small.summary.json")
        self.run_cli("summarize", "--trace-file", t, "--output", s)
        with open(s) as f:
            doc = json.load(f)
        dup = dict(doc, hot_ops=doc["hot_ops"] + doc["hot_ops"][:1])
        nul = dict(doc, generated_at_utc=None)
        nostep = {k: v for k, v in doc.items() if k != "step_time"}
        gaps = dict(doc, gap_before_ops=["s"])
        ops = dict(doc, hot_ops="abc")
        db = connect()
        for name, bad, want in [("dup", dup, "hot_ops has two entries with the same name"),
                                ("nul", nul, "lack a required value"),
                                ("nostep", nostep, "its step_time has no all_steps object with a count"),
                                ("gaps", gaps, "gap_before_ops have the wrong shape: a list of objects"),
                                ("ops", ops, "hot_ops have the wrong shape: a list of objects")]:
            p = self.td.write(name + ".summary.json", json.dumps(bad))
            with self.assertRaises(sqlite3.Error) as cm:
                db.execute("SELECT profsum_import(?, ?)", (p, name)).fetchone()
            msg = str(cm.exception)
            self.assertIn("profsum_import: '%s': cannot store this profile_summary.v1 document" % p, msg)
            self.assertIn(want, msg)
        # a first import: not even the schema was left behind
        self.assertEqual(db.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0], 0)
        db.close()

    def test_cli_report_and_compare(self):
        tb, sb, _ = self.make("before", 0)
        ta, sa, _ = self.make("after", 40)
        db = connect()
        db.execute("SELECT profsum_import(?)", (tb,))
        n = db.execute("SELECT num_events_total, num_complete_events, num_processes, num_threads "
                       "FROM profsum_trace").fetchone()
        db.close()
        out, _ = self.run_cli("report", "--summary", sb)
        got = tuple(int(re.search(r"^- %s: `(\d+)`$" % k, out, re.M).group(1))
                    for k in ["Total events", "Complete events", "Processes", "Threads"])
        self.assertEqual(got, n)
        # compare of the two summaries = compare of the two traces (same knobs)
        out_s, _ = self.run_cli("compare", "--before", sb, "--after", sa)
        out_t, _ = self.run_cli("compare", "--before", tb, "--after", ta, "--hot-op-limit", "500",
                                "--warmup-steps", "2")
        cs, ct = json.loads(out_s), json.loads(out_t)
        for k in ["step_time", "step_classes", "time_breakdown_share_delta", "regressed_ops", "improved_ops",
                  "semantic_family_delta"]:
            self.assertEqual(cs[k], ct[k], k)
        self.assertGreater(cs["step_time"]["steady_state_median_delta"], 0)
        self.assertTrue(cs["regressed_ops"])


class Detection(Base):
    """Summary or trace by the top-level keys, wherever they are."""

    def test_trace_with_summary_text_in_a_value(self):
        # the v1 marker in a nested object before traceEvents: still a trace
        meta = {"schema_version": "profile_summary.v1", "pad": "x" * 70000}
        d = dict(fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        text = json.dumps({"metadata": meta, "traceEvents": d["traceEvents"], "displayTimeUnit": "ns"})
        p = self.td.write("t.json", text)
        db = connect()
        i = db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]
        self.assertEqual(db.execute("SELECT source_format, num_complete_events FROM profsum_trace WHERE trace_id=?",
                                    (i,)).fetchone(), ("perfetto_trace_json", len(d["traceEvents"]) - 5))

    def test_summary_with_trace_text_in_a_value(self):
        # a v1 summary (compact, schema_version first) with a nested "traceEvents" key
        t = self.td.write("t.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        db = connect()
        i = db.execute("SELECT profsum_import(?)", (t,)).fetchone()[0]
        doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (i,)).fetchone()[0])
        doc["run_metadata"]["traceEvents"] = "not here"
        text = '{"schema_version":"profile_summary.v1",' + json.dumps(doc, separators=(",", ":"))[1:]
        p = self.td.write("s.json", text)
        j = db.execute("SELECT profsum_import(?, 's')", (p,)).fetchone()[0]
        self.assertEqual(db.execute("SELECT size, num_events_total FROM profsum_trace WHERE trace_id=?",
                                    (j,)).fetchone(), (len(text), doc["trace_overview"]["num_events_total"]))

    def test_other_json_as_trace(self):
        # given as a trace, JSON without traceEvents is refused (profsum's
        # departure from the reference, which reads it as an empty trace);
        # another schema_version is an error too
        db = connect()
        p = self.td.write("foo.json", '{"foo": 1}')
        with self.assertRaisesRegex(Exception, r"^profsum_import: '.*foo\.json': not a trace"):
            db.execute("SELECT profsum_import(?)", (p,)).fetchone()
        p = self.td.write("v2.json", '{"hot_ops": [{"name": "}"}], "schema_version": "profile_summary.v2"}')
        with self.assertRaisesRegex(Exception, r"^profsum_import: '.*v2\.json': its schema_version is "
                                    r"'profile_summary\.v2', not 'profile_summary\.v1', and it has no \"traceEvents\""):
            db.execute("SELECT profsum_import(?)", (p,)).fetchone()

    def test_broken_summary_says_where_and_why(self):
        # a v1 summary that is no valid JSON: the byte and the reason; one
        # with NaN (json.load reads it, profsum's tables cannot): says so
        db = connect()
        p = self.td.write("bad.json", '{"schema_version":"profile_summary.v1", "a": tru}')
        with self.assertRaisesRegex(Exception, r"^profsum_import: '.*bad\.json': not a valid profile_summary\.v1 "
                                    r"JSON document: invalid JSON at byte \d+"):
            db.execute("SELECT profsum_import(?)", (p,)).fetchone()
        t = self.td.write("t.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        i = db.execute("SELECT profsum_import(?)", (t,)).fetchone()[0]
        doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (i,)).fetchone()[0])
        doc["trace_overview"]["profile_start_ts"] = float("nan")
        p = self.td.write("nan.json", json.dumps(doc))
        with self.assertRaisesRegex(Exception, r"^profsum_import: '.*nan\.json': not a valid profile_summary\.v1 "
                                    r"JSON document: it holds NaN, Infinity or -Infinity"):
            db.execute("SELECT profsum_import(?)", (p,)).fetchone()

    def test_non_summary_json_rejected_by_cli(self):
        cases = [("list.json", "[1,2]", r"Expected JSON object in summary '%s'\.$"),
                 ("empty.json", "[]", r"Expected JSON object in summary '%s'\.$"),
                 ("num.json", "42", r"Expected JSON object in summary '%s'\.$"),
                 ("foo.json", '{"foo":1}', r"'%s' is neither a profile_summary\.v1 summary nor a trace"),
                 ("foo.json.gz", '{"foo":1}', r"'%s' is neither a profile_summary\.v1 summary nor a trace"),
                 ("cut.json", '{"hot_ops": [{"name": "a"}, {"na',
                  r"'%s' ends inside its top-level object before a \"schema_version\" or \"traceEvents\" key"),
                 ("v2.json", '{"schema_version": "profile_summary.v2"}',
                  r"'%s' is not a profile_summary\.v1 summary: its schema_version is 'profile_summary\.v2'")]
        good = self.td.write("good.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        for name, text, pat in cases:
            p = self.td.write(name, text, gz=name.endswith(".gz"))
            pat = pat % re.escape(p)
            for args in [("report", "--summary", p), ("query", "--summary", p, "--question", "top ops"),
                         ("compare", "--before", p, "--after", good), ("compare", "--before", good, "--after", p),
                         ("track", "--before", good, "--after", p),
                         ("bundle", "--before-summary", p, "--after-summary", good, "--output-dir", "b")]:
                out, err = self.run_cli(*args, rc=1)
                self.assertEqual(out, "")
                self.assertRegex(err.strip(), r"^profsum %s: " % args[0] + pat, (name, args))
        self.assertFalse(os.path.exists(os.path.join(self.td.path, "b")))

    def test_traces_still_accepted_as_summaries(self):
        d = fixtures.f1([100, 110, 120, 130, 140, 150], 60)
        arr = self.td.write("arr.json", d["traceEvents"])            # JSON Array Format
        obj = self.td.write("obj.json.gz", d, gz=True)
        out, _ = self.run_cli("compare", "--before", arr, "--after", obj)
        self.assertEqual(json.loads(out)["step_time"]["steady_state_median_delta"], 0.0)
        out, _ = self.run_cli("report", "--summary", arr)
        self.assertIn("- Complete events: `%d`" % (len(d["traceEvents"]) - 5), out)


class JsonlHistoryAppend(Base):
    B = fixtures.f1([100, 110, 120, 130, 140, 150], 60)
    A = fixtures.f1([130, 140, 150, 160, 170, 180], 60)

    def pair(self):
        return (self.td.write("before.json.gz", self.B, gz=True), self.td.write("after.json.gz", self.A, gz=True))

    def track(self, hist, label="x", rc=0):
        b, a = self.pair()
        out, _ = self.run_cli("track", "--before", b, "--after", a, "--warmup-steps", "2", "--label", label,
                              "--history", hist, rc=rc)
        return json.loads(out)

    def test_append_preserves_existing_bytes(self):
        old = (b'{"tool": "other", "z": 1, "a": [1,2]}\n'
               b'\n'
               b'{"big": 12345678901234567890123, "f": 1.10}\n'
               b'   \n')
        hist = self.td.write("h/hist.jsonl", old)
        rec = self.track(hist, "one")
        with open(hist, "rb") as f:
            new = f.read()
        self.assertEqual(new[:len(old)], old)
        tail = new[len(old):]
        self.assertTrue(tail.endswith(b"\n"))
        self.assertEqual(tail.count(b"\n"), 1)
        line = tail.decode()[:-1]
        self.assertEqual(json.loads(line), rec)
        self.assertEqual(line, json.dumps(rec, sort_keys=True))       # the reference's line
        # a second record: one more line, the rest untouched
        self.track(hist, "two")
        with open(hist, "rb") as f:
            new2 = f.read()
        self.assertEqual(new2[:len(new)], new)
        self.assertEqual(json.loads(new2[len(new):])["label"], "two")
        # the history command still reads the whole file (objects are records)
        out, _ = self.run_cli("history", "--history", hist)
        h = json.loads(out)
        self.assertEqual(h["num_records"], 4)
        self.assertEqual(h["latest_record"]["label"], "two")

    def test_new_file_and_dirs(self):
        hist = os.path.join(self.td.path, "new", "dir", "h.jsonl")
        rec = self.track(hist)
        with open(hist) as f:
            self.assertEqual(f.read(), json.dumps(rec, sort_keys=True) + "\n")

    def test_missing_trailing_newline(self):
        old = b'{"b": 1,"a": 2}'
        hist = self.td.write("h.jsonl", old)
        rec = self.track(hist)
        with open(hist, "rb") as f:
            new = f.read()
        self.assertEqual(new, old + b"\n" + json.dumps(rec, sort_keys=True).encode() + b"\n")

    def test_bundle_appends(self):
        old = b'{"b": 1,"a": 2}\n'
        hist = self.td.write("h.jsonl", old)
        b, a = self.pair()
        self.run_cli("bundle", "--before-summary", b, "--after-summary", a, "--warmup-steps", "2",
                     "--output-dir", "out", "--history", hist, "--label", "bdl")
        with open(hist, "rb") as f:
            new = f.read()
        self.assertEqual(new[:len(old)], old)
        with open(os.path.join(self.td.path, "out", "track.json")) as f:
            rec = json.load(f)
        self.assertEqual(new[len(old):], json.dumps(rec, sort_keys=True).encode() + b"\n")

    def test_concurrent_appends(self):
        old = b'{"foreign": true}'            # no trailing newline either
        hist = self.td.write("h.jsonl", old)
        b, a = self.pair()
        procs = [subprocess.Popen([CLI, "track", "--before", b, "--after", a, "--warmup-steps", "2",
                                   "--label", "run-%d" % i, "--history", hist],
                                  cwd=self.td.path, env=self.env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE) for i in range(8)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err.decode())
        with open(hist, "rb") as f:
            new = f.read()
        self.assertTrue(new.startswith(old + b"\n"))
        lines = new[len(old) + 1:].decode().split("\n")
        self.assertEqual(lines[-1], "")
        labels = sorted(json.loads(l)["label"] for l in lines[:-1])
        self.assertEqual(labels, ["run-%d" % i for i in range(8)])


if __name__ == "__main__":
    unittest.main()
