"""A chunked XSpace saved as Riegeli records (<host>.xplane.riegeli) is a
format profsum knows but does not read yet: profsum_find_traces lists it
(format 'xplane_riegeli') and never picks it, a folder import that finds
nothing else says why, and every reader given one by name refuses it with
"not supported yet" instead of reporting it as broken JSON or protobuf.
"""
import json
import os
import sqlite3
import subprocess
import unittest

import xspace_writer as xw
from util import connect, TempDir, ROOT

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))
SESSION = "plugins/profile/2026_01_01_00_00_00/"
# what a Riegeli file starts with does not matter: profsum goes by the name
RIEGELI = b"\x83\xaf\x70\xd1\x0d\x88\x4a\x3f" + b"\x00" * 56 + b'{"not": "json"}'
NOT_YET = ("an .xplane.riegeli file (XSpace chunks in Riegeli records) is not "
           "supported yet: read the capture's .xplane.pb or trace JSON")


def small_trace():
    return json.dumps({"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}},
        {"ph": "X", "name": "fusion.1", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    ]}).encode()


def small_xplane():
    p = xw.PlaneBuilder("/device:TPU:0", id=1)
    p.line(id=1, name="XLA Ops", timestamp_ns=1000,
           events=[p.event("fusion.1", offset_ps=0, duration_ps=5_000_000)])
    return xw.xspace(planes=[p.build()])


class LatestSession(unittest.TestCase):
    def test_latest_is_the_latest_with_a_readable_file(self):
        """session 'latest' skips a newer session folder that holds only
        .xplane.riegeli files (nothing profsum reads)."""
        with TempDir() as t:
            for sess in ("2024_01_01", "2024_02_01"):
                t.write("plugins/profile/%s/h.trace.json" % sess, small_trace())
            t.write("plugins/profile/2024_03_01/h.xplane.riegeli", RIEGELI)
            db = connect(os.path.join(t.path, "p.db"))
            picked = [os.path.relpath(r[0], t.path) for r in db.execute(
                "SELECT path FROM profsum_find_traces(?, '{\"session\": \"latest\"}') WHERE picked", (t.path,))]
            self.assertEqual(picked, ["plugins/profile/2024_02_01/h.trace.json"])
            db.execute("SELECT profsum_import(?, 'l', '{\"session\": \"latest\"}')", (t.path,)).fetchall()
            self.assertTrue(db.execute("SELECT trace_path FROM profsum_trace").fetchone()[0]
                            .endswith("2024_02_01/h.trace.json"))


class FindTraces(unittest.TestCase):
    def rows(self, db, d, opts=None):
        sql = "SELECT path, host, session, size, format, picked, reference_pick FROM profsum_find_traces(?%s)"
        return db.execute(sql % (", ?" if opts else ""), (d, opts) if opts else (d,)).fetchall()

    def test_listed_never_picked(self):
        db = connect()
        with TempDir() as t:
            t.write(SESSION + "host0.xplane.riegeli", RIEGELI)
            full = os.path.join(t.path, SESSION)
            self.assertEqual(self.rows(db, t.path), [
                (full + "host0.xplane.riegeli", "host0", "2026_01_01_00_00_00", len(RIEGELI),
                 "xplane_riegeli", 0, 0)])
            # beside a JSON trace of the same host: the JSON is read
            t.write(SESSION + "host0.trace.json.gz", b"t" * 3)
            rows = self.rows(db, t.path)
            self.assertEqual([(r[4], r[5], r[6]) for r in rows],
                             [("trace_json_gz", 1, 1), ("xplane_riegeli", 0, 0)])
            # beside an XPlane: the lone .xplane.pb is still the pick (the
            # .riegeli does not count as a second XPlane)
            t.write(SESSION + "host0.xplane.pb", small_xplane())
            rows = self.rows(db, t.path)
            self.assertEqual([(r[4], r[5], r[6]) for r in rows],
                             [("trace_json_gz", 0, 0), ("xplane_pb", 1, 1), ("xplane_riegeli", 0, 0)])
            # with options: never picked either
            for opts in ('{"hosts":"all"}', '{"session":"all"}', '{"session":"latest","hosts":"all"}'):
                rows = self.rows(db, t.path, opts)
                self.assertEqual([r[5] for r in rows if r[4] == "xplane_riegeli"], [0], opts)
                self.assertEqual([r[4] for r in rows if r[5]], ["xplane_pb"], opts)
        db.close()

    def test_folder_with_only_riegeli(self):
        with TempDir() as t:
            t.write(SESSION + "host0.xplane.riegeli", RIEGELI)
            db = connect(os.path.join(t.path, "p.db"))
            for opts in (None, '{"hosts":"all"}'):
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    if opts:
                        db.execute("SELECT profsum_import(?, 'x', ?)", (t.path, opts)).fetchall()
                    else:
                        db.execute("SELECT profsum_import(?)", (t.path,)).fetchall()
                msg = str(cm.exception)
                self.assertTrue(msg.startswith("profsum_import: No *.xplane.pb file found under '%s'. "
                                               % t.path if opts is None else
                                               "profsum_import: '%s': no " % t.path), msg)
                self.assertIn("the *.xplane.riegeli files there (XSpace chunks in Riegeli records) "
                              "are not supported yet", msg)
            # a folder with a JSON trace imports it, riegeli or not
            t.write(SESSION + "host0.trace.json", small_trace())
            db.execute("SELECT profsum_import(?, 'ok')", (t.path,)).fetchall()
            src, fmt = db.execute("SELECT trace_path, source_format FROM profsum_trace "
                                  "WHERE label = 'ok'").fetchone()
            self.assertEqual((src, fmt), (os.path.join(t.path, SESSION + "host0.trace.json"),
                                          "perfetto_trace_json"))
            db.close()


class ReadersRefuse(unittest.TestCase):
    def test_every_reader_says_not_supported_yet(self):
        with TempDir() as t:
            r = t.write("host0.xplane.riegeli", RIEGELI)
            db = connect(os.path.join(t.path, "r.db"))
            cases = [
                ("SELECT count(*) FROM trace_events(?)", "trace_events"),
                ("SELECT count(*) FROM profsum_diagnostics(?)", "profsum_diagnostics"),
                ("SELECT count(*) FROM profsum_xplane_planes(?)", "profsum_xplane_planes"),
                ("SELECT count(*) FROM profsum_xplane_lines(?)", "profsum_xplane_lines"),
                ("SELECT profsum_import(?)", "profsum_import"),
            ]
            for sql, fn in cases:
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    db.execute(sql, (r,)).fetchall()
                self.assertEqual(str(cm.exception), "%s: '%s': %s" % (fn, r, NOT_YET), fn)
            with self.assertRaises(sqlite3.OperationalError) as cm:
                db.execute("SELECT profsum_trim(?, ?)", (r, os.path.join(t.path, "o.json.gz"))).fetchall()
            self.assertIn(NOT_YET, str(cm.exception))
            self.assertFalse(os.path.exists(os.path.join(t.path, "o.json.gz")))
            # nothing was written: not even the schema
            self.assertEqual(db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0], 0)
            db.close()

    @unittest.skipUnless(os.path.exists(CLI), "the CLI is built by make profsum")
    def test_cli(self):
        with TempDir() as t:
            r = t.write("host0.xplane.riegeli", RIEGELI)
            for flag in ("--xplane-file", "--trace-file"):
                p = subprocess.run([CLI, "summarize", flag, r], capture_output=True, text=True,
                                   timeout=60)
                self.assertNotEqual(p.returncode, 0)
                self.assertEqual(p.stdout, "")
                self.assertIn("profsum_import: '%s': %s" % (r, NOT_YET), p.stderr)


if __name__ == "__main__":
    unittest.main()
