"""What the command line and the SQL functions tell a user who took a wrong
turn: the diagnostics a warning cites when the database is a temporary one,
knobs that do not shape an existing summary, a trace JSON given where an
XPlane is expected (and the reverse), a folder of several XPlanes, a file
cut off.  Each message must say what happened and what to do instead."""
import gzip
import json
import os
import subprocess
import unittest

import fixtures
import xspace_writer as W
from util import connect, TempDir, ROOT

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))
F1 = fixtures.f1([100, 110, 120, 130, 140, 150], 60)
SESSION = "plugins/profile/2024_01_01_00_00_00"
US = 10 ** 6


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def one_tpu_xspace(host):
    """An XSpace of one TPU with two steps and one op each."""
    pb = W.PlaneBuilder("/device:TPU:0", id=0)
    pb.line(id=1, name="Steps", timestamp_ns=0,
            events=[pb.event(str(k), offset_ps=k * 100 * US, duration_ps=100 * US) for k in (1, 2)])
    pb.line(id=2, name="XLA Ops", timestamp_ns=0,
            events=[pb.event("fusion.1", offset_ps=k * 100 * US, duration_ps=50 * US) for k in (1, 2)])
    return W.xspace([pb.build()], hostnames=[host])


class Notes(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.env = dict(os.environ)
        self.env.pop("LD_PRELOAD", None)         # the CLI is not instrumented
        self.env["TMPDIR"] = self.td.path

    def tearDown(self):
        self.td.__exit__()

    def cli(self, *args, rc=0):
        p = subprocess.run([CLI] + list(args), cwd=self.td.path, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        out, err = p.stdout.decode(), p.stderr.decode()
        self.assertEqual(p.returncode, rc, "profsum %s\nstderr: %s" % (" ".join(args), err))
        return out, err

    def cut_trace(self):
        """A trace JSON cut inside an entry: warned about, citing the
        diagnostics."""
        text = json.dumps(F1)
        return self.td.write("cut.trace.json", text[:len(text) * 2 // 3])

    def test_temporary_database_note(self):
        p = self.cut_trace()
        _, err = self.cli("summarize", "--trace-file", p, "--output", "s.json")
        self.assertIn("profsum: warning: cut: The trace JSON ends early", err)
        self.assertIn("The summary's suspected_truncation flag stays false: it concerns the profiler's "
                      "cap on exported events, not a file cut off.", err)
        note = [l for l in err.splitlines() if l.startswith("profsum: note:")]
        self.assertEqual(note, [
            "profsum: note: the diagnostics these warnings cite are in this command's temporary database, "
            "deleted when it ends: add --db FILE to keep them (then 'profsum sql FILE \"SELECT * FROM "
            "profsum_diagnostic\"'), or list them from the file: profsum sql :memory: \"SELECT * FROM "
            "profsum_diagnostics('%s')\"" % p])
        # the query the note gives lists them
        db = connect()
        kinds = {k for (k,) in db.execute("SELECT kind FROM profsum_diagnostics(?)", (p,))}
        self.assertIn("unterminated_array", kinds)
        # with --db the table is there to read: no note
        _, err = self.cli("summarize", "--trace-file", p, "--db", "keep.db", "--output", "s.json")
        self.assertIn("The trace JSON ends early", err)
        self.assertNotIn("profsum: note:", err)
        # a clean trace: neither
        q = self.td.write("clean.trace.json", json.dumps(F1))
        _, err = self.cli("summarize", "--trace-file", q, "--output", "s.json")
        self.assertEqual(err, "")

    def test_knobs_that_do_not_apply(self):
        # The note names what the user gave: the --summary file as typed
        # (it named the label derived from it, 'v1', which the user never
        # saw: with no --db there is no trace to give by that label), or
        # the stored trace by its label and the file a new import reads.
        q = self.td.write("clean.trace.json", json.dumps(F1))
        self.cli("summarize", "--trace-file", q, "--output", "out/v1.json")
        head = ("profsum %s: note: --warmup-steps, --hot-op-limit and --breakdown-mode ignored: ")
        for given in ("out/v1.json", "./out//v1.json"):
            _, err = self.cli("report", "--summary", given, "--warmup-steps", "0")
            self.assertEqual(err, head % "report" + "'%s' is a profile_summary.v1 document, whose numbers "
                             "were computed when it was written\n" % given)
        _, err = self.cli("query", "--summary", "out/v1.json", "--question", "top ops", "--hot-op-limit", "3",
                          "--db", "q.db")
        self.assertEqual(err, head % "query" + "'out/v1.json' is a profile_summary.v1 document, whose "
                         "numbers were computed when it was written\n")
        # the same document given by its label in the database: the label,
        # and the file it came from
        _, err = self.cli("report", "--db", "q.db", "--trace", "v1", "--warmup-steps", "1")
        self.assertEqual(err, head % "report" + "the stored trace 'v1' (imported from 'out/v1.json') is a "
                         "profile_summary.v1 document, whose numbers were computed when it was written\n")
        _, err = self.cli("report", "--summary", "out/v1.json")
        self.assertEqual(err, "")
        # a trace given as the summary is summarized with them: no note
        _, err = self.cli("report", "--summary", q, "--warmup-steps", "0")
        self.assertEqual(err, "")
        # a stored trace summarized with other values: the file to import
        # again, with the label that keeps its place
        self.cli("summarize", "--trace-file", q, "--db", "s.db", "--label", "d", "--output", "x.json")
        _, err = self.cli("report", "--db", "s.db", "--trace", "d", "--hot-op-limit", "3")
        self.assertEqual(err, head % "report" + "the stored trace 'd' was summarized with warmup_steps 5, "
                              "hot_op_limit 25 and breakdown_mode exclusive_per_track (import '%s' again "
                              "with --label 'd' --replace to change them)\n" % q)
        # which works: the import it names takes the new value
        self.cli("summarize", "--trace-file", q, "--db", "s.db", "--label", "d", "--replace",
                 "--hot-op-limit", "3", "--output", "x.json")
        _, err = self.cli("report", "--db", "s.db", "--trace", "d", "--hot-op-limit", "3")
        self.assertEqual(err, "")
        _, err = self.cli("query", "--db", "s.db", "--trace", "d", "--question", "top ops",
                          "--warmup-steps", "5")
        self.assertEqual(err, "")

    def test_json_given_as_xplane(self):
        q = self.td.write("clean.trace.json", json.dumps(F1))
        out, err = self.cli("summarize", "--xplane-file", q)
        self.assertEqual(err, "profsum summarize: note: '%s' is not an XPlane protobuf by its content "
                              "(it starts as JSON or as neither format): it is read as a trace JSON\n" % q)
        self.assertEqual(json.loads(out)["source_format"], "perfetto_trace_json")
        x = self.td.write("h.xplane.pb", one_tpu_xspace("h"))
        out, err = self.cli("summarize", "--xplane-file", x)
        self.assertEqual(err, "")
        self.assertEqual(json.loads(out)["source_format"], "xplane_pb")
        # the XPlane functions on a trace JSON: the decoding error says what the file is
        db = connect()
        for fn in ("profsum_xplane_planes", "profsum_xplane_lines"):
            for path in (q, self.td.write("g.trace.json.gz", json.dumps(F1), gz=True)):
                with self.assertRaises(Exception) as cm:
                    db.execute("SELECT * FROM %s(?)" % fn, (path,)).fetchall()
                self.assertTrue(str(cm.exception).startswith("%s: '%s': byte " % (fn, path)), str(cm.exception))
                self.assertTrue(str(cm.exception).endswith(
                    " (the file reads as trace JSON, not as an XPlane protobuf: trace_events reads it)"))
            # a damaged XPlane, or no file: the decoder's message alone
            data = one_tpu_xspace("h")
            bad = self.td.write("bad.xplane.pb", data[:len(data) // 2])
            for path in (bad, os.path.join(self.td.path, "none.json")):
                with self.assertRaises(Exception) as cm:
                    db.execute("SELECT * FROM %s(?)" % fn, (path,)).fetchall()
                self.assertNotIn("reads as trace JSON", str(cm.exception))

    def test_folder_of_several_xplanes(self):
        for h in ("h0", "h1"):
            self.td.write(os.path.join("pod", SESSION, h + ".xplane.pb"), one_tpu_xspace(h))
        pod = os.path.join(self.td.path, "pod")
        _, err = self.cli("summarize", "--profile-dir", pod, rc=1)
        self.assertIn("Found multiple *.xplane.pb files under '%s'" % pod, err)
        self.assertIn("an XPlane is read from a folder only when it is the only one; give one of them, "
                      "or read them all as one session of several hosts with the import option "
                      "{\"hosts\": \"all\"} (CLI: --all-hosts).", err)
        _, err = self.cli("summarize", "--profile-dir", pod, "--session", "latest", rc=1)
        self.assertIn("session '%s' (the latest) holds 2 *.xplane.pb files, one per host, and no trace "
                      "JSON" % os.path.basename(SESSION), err)
        self.assertIn("read its hosts with hosts 'all' (CLI: --all-hosts)", err)
        # with every session: the same sessions left out, said as before
        _, err = self.cli("summarize", "--profile-dir", pod, "--session", "all", rc=1)
        self.assertIn("no trace file selected for session 'all' and hosts 'one'", err)
        self.assertIn("the folder holds several *.xplane.pb: a session of several and no JSON trace is "
                      "read with hosts 'all' (CLI: --all-hosts)", err)
        out, _ = self.cli("summarize", "--profile-dir", pod, "--all-hosts")
        self.assertEqual(json.loads(out)["source_format"], "xplane_pb")
        # an empty folder: nothing found, not "selected"
        os.makedirs(os.path.join(self.td.path, "empty", SESSION))
        _, err = self.cli("summarize", "--profile-dir", os.path.join(self.td.path, "empty"),
                          "--session", "latest", rc=1)
        self.assertIn("no trace file found for session 'latest'", err)

    def cut_session(self, hosts):
        """A log folder of one session whose host trace JSONs are all cut
        off (each warned about, citing the diagnostics)."""
        text = json.dumps(F1)
        for h in hosts:
            self.td.write(os.path.join("run", SESSION, h + ".trace.json"), text[:len(text) * 2 // 3])
        return os.path.join(self.td.path, "run")

    def diag_note(self, err):
        notes = [l for l in err.splitlines() if l.startswith("profsum: note:")]
        self.assertEqual(len(notes), 1, err)
        return notes[0]

    def test_temporary_database_note_for_a_folder(self):
        # The note's query named the folder given, which
        # profsum_diagnostics cannot read ("is a directory"): it names the
        # file read there, and each host's file with --all-hosts.
        run = self.cut_session(["h0", "h1"])
        files = [os.path.join(run, SESSION, h + ".trace.json") for h in ("h0", "h1")]
        _, err = self.cli("summarize", "--profile-dir", run, "--output", "s.json")
        note = self.diag_note(err)
        self.assertTrue(note.endswith("profsum sql :memory: \"SELECT * FROM profsum_diagnostics('%s')\""
                                      % files[0]), note)
        _, err = self.cli("summarize", "--profile-dir", run, "--all-hosts", "--output", "s.json")
        note = self.diag_note(err)
        self.assertTrue(note.endswith("profsum sql :memory: \"SELECT * FROM profsum_diagnostics('%s')\" "
                                      "(and the same for '%s')" % (files[0], files[1])), note)
        # the query the note gives works, on each file it names
        db = connect()
        for f in files:
            kinds = {k for (k,) in db.execute("SELECT kind FROM profsum_diagnostics(?)", (f,))}
            self.assertIn("unterminated_array", kinds)
        with self.assertRaisesRegex(Exception, "is a directory"):
            db.execute("SELECT * FROM profsum_diagnostics(?)", (run,)).fetchall()

    def test_session_label_names_its_hosts(self):
        # A session read with --all-hosts is stored as <label>/<host>: the
        # label alone named no trace, and the error gave no hint.
        text = json.dumps(F1)
        hosts = ["h%d" % i for i in range(7)]
        for h in hosts:
            self.td.write(os.path.join("run", SESSION, h + ".trace.json"), text)
        self.cli("summarize", "--profile-dir", "run", "--all-hosts", "--db", "s.db", "--label", "job",
                 "--output", "s.json")
        self.cli("summarize", "--trace-file", self.td.write("jobx.trace.json", text), "--db", "s.db",
                 "--label", "job0", "--output", "s.json")
        hint = ("; labels that start with 'job/' (a session's hosts): 'job/h0', 'job/h1', 'job/h2', "
                "'job/h3', 'job/h4' and 2 more")
        for args, opt in ((["report", "--trace", "job"], "--trace"),
                          (["query", "--trace", "job", "--question", "top ops"], "--trace"),
                          (["compare", "--before", "job", "--after", "job/h1"], "--before"),
                          (["track", "--before", "job/h0", "--after", "job"], "--after")):
            _, err = self.cli(*args, "--db", "s.db", rc=1)
            self.assertEqual(err, "profsum %s: %s 'job': no such file, and no trace with that label or id in "
                             "the database%s\n" % (args[0], opt, hint), args)
        # "job/" lists the same; a label nothing starts with gets no list
        _, err = self.cli("report", "--db", "s.db", "--trace", "job/", rc=1)
        self.assertIn("'job/': no such file, and no trace with that label or id in the database" + hint, err)
        for label in ("jo", "job/h", "h0"):
            _, err = self.cli("report", "--db", "s.db", "--trace", label, rc=1)
            self.assertEqual(err, "profsum report: --trace '%s': no such file, and no trace with that label "
                             "or id in the database\n" % label)
        # a host's label works
        out, _ = self.cli("report", "--db", "s.db", "--trace", "job/h6")
        self.assertIn("# Profile Report", out)
        # the SQL functions say the same
        db = connect(os.path.join(self.td.path, "s.db"))
        with self.assertRaises(Exception) as cm:
            db.execute("SELECT profsum_report_md('job')").fetchone()
        self.assertEqual(str(cm.exception), "profsum_report_md: no trace with label 'job'" + hint)
        with self.assertRaises(Exception) as cm:
            db.execute("SELECT profsum_summary_json('h1')").fetchone()
        self.assertEqual(str(cm.exception), "profsum_summary_json: no trace with label 'h1'; the newest "
                                            "labels: 'job0', 'job/h6', 'job/h5', 'job/h4', 'job/h3' (of 8)")

    def test_cut_gzip(self):
        data = gzip.compress(json.dumps(F1).encode())
        p = self.td.write("cut.trace.json.gz", data[:len(data) // 2])
        _, err = self.cli("summarize", "--trace-file", p, rc=1)
        self.assertIn("truncated gzip data at byte %d (the compressed stream ends before its end marker: "
                      "the file is cut off, e.g. copied while the profiler was still writing it; copy it "
                      "again once the capture is complete)" % (len(data) // 2), err)


if __name__ == "__main__":
    unittest.main()
