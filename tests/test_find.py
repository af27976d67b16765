"""Tests of profsum_find_traces(dir) (ext/find.c).

The reference tool's selection (summary-v1-spec.md §1.1) is re-implemented
below with pathlib, exactly as the reference does it (rglob + sorted Path
objects: names alone, whatever the entry is), and used as an oracle for
`reference_pick`, and for `picked` in folders of files only.
"""
import os
import sqlite3
import unittest
from pathlib import Path

from util import OOM_SQL, connect, run_as_unprivileged, run_oom_sql, TempDir

COLS = "path, host, session, size, format, picked, reference_pick"


def reference_json_pick(d):
    """find_profile_trace() of the reference: JSON only, first hit by name
    wins; None when there is none, or when that entry is not a file (the
    reference fails reading it)."""
    d = Path(d)
    for pattern in ("perfetto_trace.json.gz", "*.trace.json.gz", "*.trace.json"):
        hits = sorted(d.rglob(pattern))
        if hits:
            return str(hits[0]) if hits[0].is_file() else None
    return None


def wire_ok(data):
    """True when data is a sequence of well-formed protobuf fields (tags,
    varints, lengths; nested messages are not entered): enough to tell the
    XPlane fixtures below that decode (b"x" * 30: field 15 varints) from
    those that do not (b"1": a fixed64 field cut short)."""
    i, n = 0, len(data)

    def varint(i):
        for k in range(10):
            if i + k >= n:
                return None
            if data[i + k] < 0x80:
                return i + k + 1
        return None
    while i < n:
        start = i
        i = varint(i)
        if i is None:
            return False
        key = 0
        for k, b in enumerate(data[start:i]):
            key |= (b & 0x7F) << (7 * k)
        wt = key & 7
        if key >> 3 == 0:
            return False
        if wt == 0:
            i = varint(i)
            if i is None:
                return False
        elif wt == 1 or wt == 5:
            i += 8 if wt == 1 else 4
            if i > n:
                return False
        elif wt == 2:
            j = varint(i)
            if j is None:
                return False
            length = 0
            for k, b in enumerate(data[i:j]):
                length |= (b & 0x7F) << (7 * k)
            i = j + length
            if i > n:
                return False
        else:
            return False
    return True


def reference_pick(d):
    """summarize_profile_artifact() selection: XPlane first (a lone one that
    decodes), then JSON.  The entries are matched by name: a lone one that
    does not exist (a dangling link) gives way to the JSON step, one that
    exists but is not a file (a directory, a FIFO) makes it fail."""
    xplanes = sorted(Path(d).rglob("*.xplane.pb"))
    if len(xplanes) == 1 and xplanes[0].exists():
        if not xplanes[0].is_file():
            return None
        if wire_ok(xplanes[0].read_bytes()):
            return str(xplanes[0])
    return reference_json_pick(d)


def q(text):
    """text as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class FindTracesTest(unittest.TestCase):
    def setUp(self):
        self.db = connect()

    def tearDown(self):
        self.db.close()

    def rows(self, d):
        return self.db.execute(
            "SELECT %s FROM profsum_find_traces(?)" % COLS, (d,)).fetchall()

    def picks(self, d):
        rows = self.rows(d)
        picked = [r[0] for r in rows if r[5]]
        ref = [r[0] for r in rows if r[6]]
        self.assertLessEqual(len(picked), 1)
        self.assertLessEqual(len(ref), 1)
        return (picked[0] if picked else None, ref[0] if ref else None)

    def check_against_reference(self, d, files_only=True):
        # reference_pick is the reference's pick; in a folder of files only
        # profsum reads that file too, XPlane included
        picked, ref = self.picks(d)
        self.assertEqual(ref, reference_pick(d))
        if files_only:
            self.assertEqual(picked, ref)
        return picked, ref

    def assertSqlError(self, sql, params, message):
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute(sql, params).fetchall()
        self.assertEqual(str(cm.exception), message)

    # ---- layouts ---------------------------------------------------------

    def test_artifact_layout(self):
        with TempDir() as t:
            s = "plugins/profile/2024_05_01_12_00_00/"
            t.write(s + "perfetto_trace.json.gz", b"p" * 10)
            t.write(s + "host0.trace.json.gz", b"t" * 20)
            t.write(s + "host0.xplane.pb", b"x" * 30)
            full = os.path.join(t.path, s)
            self.assertEqual(self.rows(t.path), [
                (full + "host0.trace.json.gz", "host0", "2024_05_01_12_00_00", 20,
                 "trace_json_gz", 0, 0),
                (full + "host0.xplane.pb", "host0", "2024_05_01_12_00_00", 30,
                 "xplane_pb", 1, 1),
                (full + "perfetto_trace.json.gz", None, "2024_05_01_12_00_00", 10,
                 "perfetto_trace_json_gz", 0, 0),
            ])
            self.check_against_reference(t.path)

    def test_import_warns_when_the_pick_leaves_traces_aside(self):
        # a log dir profiled twice, and one session with two hosts: the
        # import reads the reference's pick and says what it left aside in a
        # folder_pick diagnostic, not in the v1 document, whose warnings stay
        # the reference's; a session's perfetto_trace.json.gz beside its host
        # file is normal
        import gzip
        import json
        trace = gzip.compress(json.dumps({"traceEvents": [
            {"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0, "dur": 5}]}).encode())

        def warnings(d):
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (d,))
            w = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
            self.assertEqual(w["trace_overview"]["quality_warnings"], [])
            notes = [r[0] for r in db.execute("SELECT detail FROM profsum_diagnostic WHERE label='x' "
                                              "AND kind='folder_pick'")]
            md = db.execute("""SELECT profsum_report_md('x', 5, '{"profsum": true}')""").fetchone()[0]
            for n in notes:             # profsum's data quality section says it
                self.assertIn("- " + n, md)
            db.close()
            return notes
        with TempDir() as t:
            t.write("two/plugins/profile/2026_01_01_00_00_00/h.trace.json.gz", trace)
            t.write("two/plugins/profile/2026_02_01_00_00_00/h.trace.json.gz", trace)
            t.write("hosts/plugins/profile/s/hostA.trace.json.gz", trace)
            t.write("hosts/plugins/profile/s/hostB.trace.json.gz", trace)
            t.write("one/plugins/profile/s/perfetto_trace.json.gz", trace)
            t.write("one/plugins/profile/s/hostA.trace.json.gz", trace)
            t.write("one/plugins/profile/s/hostA.xplane.pb", b"x")
            w = warnings(os.path.join(t.path, "two"))
            self.assertEqual(len(w), 1, w)
            self.assertIn("holds the traces of 2 profiling sessions", w[0])
            self.assertIn("2026_01_01_00_00_00/h.trace.json.gz", w[0])
            self.assertIn("the last by path: '%s'" % os.path.join(t.path, "two/plugins/profile/2026_02_01_00_00_00"),
                          w[0])
            self.assertIn("the oldest session", w[0])
            w = warnings(os.path.join(t.path, "hosts"))
            self.assertEqual(len(w), 1, w)
            self.assertIn("holds the traces of 2 hosts", w[0])
            self.assertIn("hostA.trace.json.gz", w[0])
            self.assertEqual(warnings(os.path.join(t.path, "one")), [])
            self.assertEqual(warnings(os.path.join(t.path, "two/plugins/profile/2026_02_01_00_00_00")), [])
            # one host in two formats is one host
            t.write("fmt/s/h.trace.json.gz", trace)
            t.write("fmt/s/h.trace.json", gzip.decompress(trace))
            t.write("fmt/s/perfetto_trace.json.gz", trace)
            self.assertEqual(warnings(os.path.join(t.path, "fmt")), [])
            # perfetto_trace.json.gz wins across folders: the newer session
            # is read, and the note does not call it the oldest
            t.write("pf/2026_01/h.trace.json.gz", trace)
            t.write("pf/2026_02/perfetto_trace.json.gz", trace)
            w = warnings(os.path.join(t.path, "pf"))
            self.assertEqual(len(w), 1, w)
            self.assertIn("2026_02/perfetto_trace.json.gz", w[0])
            self.assertNotIn("oldest", w[0])
            self.assertIn("the last by path: '%s'" % os.path.join(t.path, "pf/2026_01"), w[0])
            # traces at the top of the folder and below it
            t.write("top/h.trace.json.gz", trace)
            t.write("top/a/h.trace.json.gz", trace)
            w = warnings(os.path.join(t.path, "top"))
            self.assertEqual(len(w), 1, w)
            self.assertNotIn("''", w[0])

    def test_two_xplanes_reference_falls_back_to_json(self):
        with TempDir() as t:
            t.write("p/a.xplane.pb", b"1")
            t.write("p/b.xplane.pb", b"2")
            t.write("p/h.trace.json.gz", b"3")
            picked, ref = self.check_against_reference(t.path)
            self.assertEqual(picked, os.path.join(t.path, "p/h.trace.json.gz"))
            self.assertEqual(ref, picked)

    def test_xplanes_only(self):
        with TempDir() as t:
            # a lone XPlane that decodes is read; one that does not decode
            # falls back to a JSON trace, and there is none
            t.write("a.xplane.pb", b"x" * 4)
            self.assertEqual(self.picks(t.path), (os.path.join(t.path, "a.xplane.pb"),) * 2)
            t.write("a.xplane.pb", b"1")
            self.assertEqual(self.picks(t.path), (None, None))
            t.write("b.xplane.pb", b"2")
            self.assertEqual(self.picks(t.path), (None, None))
            self.check_against_reference(t.path)

    def test_lone_xplane_that_does_not_decode_falls_back_to_json(self):
        with TempDir() as t:
            t.write("p/a.xplane.pb", b"\xff")
            t.write("p/h.trace.json.gz", b"3")
            picked, ref = self.check_against_reference(t.path)
            self.assertEqual(picked, os.path.join(t.path, "p/h.trace.json.gz"))
            t.write("p/a.xplane.pb", b"")        # 0 bytes: an empty XSpace
            picked, ref = self.check_against_reference(t.path)
            self.assertEqual(picked, os.path.join(t.path, "p/a.xplane.pb"))

    def test_only_plain_trace_json(self):
        with TempDir() as t:
            t.write("run/perfetto_trace.json", b"{}")   # matches no pattern
            t.write("run/worker1.trace.json", b"{}")
            t.write("run/notes.json", b"{}")
            rows = self.rows(t.path)
            self.assertEqual(rows, [(os.path.join(t.path, "run/worker1.trace.json"),
                                     "worker1", "run", 2, "trace_json", 1, 1)])
            self.check_against_reference(t.path)

    def test_no_candidates(self):
        with TempDir() as t:
            t.write("a/readme.txt", b"x")
            t.write("a/perfetto_trace.json", b"{}")
            os.makedirs(os.path.join(t.path, "empty"))
            self.assertEqual(self.rows(t.path), [])
            self.assertEqual(self.check_against_reference(t.path), (None, None))

    def test_preference_beats_path_order(self):
        with TempDir() as t:
            t.write("a/a.trace.json", b"{}")
            t.write("b/z.trace.json.gz", b"")
            t.write("c/z.trace.json.gz", b"")
            picked, ref = self.check_against_reference(t.path)
            self.assertEqual(picked, os.path.join(t.path, "b/z.trace.json.gz"))
            t.write("z/perfetto_trace.json.gz", b"")
            picked, ref = self.check_against_reference(t.path)
            self.assertEqual(picked, os.path.join(t.path, "z/perfetto_trace.json.gz"))

    def test_order_is_pathlib_order(self):
        # Byte order would put "run-2/" before "run/" ('-' < '/'); the
        # reference sorts pathlib.Path objects, which compare component-wise.
        with TempDir() as t:
            for name in ("run-2/a.trace.json.gz", "run/a.trace.json.gz",
                         "run.old/a.trace.json.gz", "run/b/a.trace.json.gz",
                         "Run/a.trace.json.gz", "run_x/a.trace.json.gz"):
                t.write(name, b"")
            paths = [r[0] for r in self.rows(t.path)]
            expected = [str(p) for p in sorted(Path(t.path).rglob("*.trace.json.gz"))]
            self.assertEqual(paths, expected)
            self.assertEqual(paths[1], os.path.join(t.path, "run/a.trace.json.gz"))
            self.check_against_reference(t.path)

    def test_host_and_session(self):
        with TempDir() as t:
            t.write(".trace.json", b"")                    # empty host
            t.write("x/y/tpu-vm-0.my.host.trace.json.gz", b"")
            rows = {r[0][len(t.path) + 1:]: r for r in self.rows(t.path)}
            self.assertEqual(rows[".trace.json"][1:3],
                             ("", os.path.basename(t.path)))
            self.assertEqual(rows["x/y/tpu-vm-0.my.host.trace.json.gz"][1:3],
                             ("tpu-vm-0.my.host", "y"))

    def test_trailing_slash_and_hidden_dir_column(self):
        with TempDir() as t:
            t.write("s/h.trace.json", b"")
            got = self.db.execute(
                "SELECT path, dir FROM profsum_find_traces(?)", (t.path + "//",)).fetchall()
            self.assertEqual(got, [(os.path.join(t.path, "s/h.trace.json"), t.path + "//")])

    def test_argument_from_a_join(self):
        with TempDir() as t:
            t.write("s/h.trace.json", b"")
            got = self.db.execute(
                "SELECT f.path FROM (SELECT ? AS d UNION ALL SELECT NULL) AS s, "
                "profsum_find_traces(s.d) AS f", (t.path,)).fetchall()
            self.assertEqual(got, [(os.path.join(t.path, "s/h.trace.json"),)])

    def test_non_regular_candidates_skipped(self):
        with TempDir() as t:
            os.makedirs(os.path.join(t.path, "dir.trace.json"))
            t.write("real/a.trace.json.gz", b"12345")
            os.symlink(os.path.join(t.path, "real/a.trace.json.gz"),
                       os.path.join(t.path, "link.trace.json.gz"))
            os.symlink(os.path.join(t.path, "nowhere"),
                       os.path.join(t.path, "dangling.trace.json.gz"))
            rows = self.rows(t.path)
            self.assertEqual([(r[0], r[3]) for r in rows], [
                (os.path.join(t.path, "link.trace.json.gz"), 5),
                (os.path.join(t.path, "real/a.trace.json.gz"), 5),
            ])
            # the reference's first *.trace.json.gz by name is the dangling
            # link: it fails reading it; profsum reads the first file
            self.assertEqual(self.check_against_reference(t.path, files_only=False),
                             (os.path.join(t.path, "link.trace.json.gz"), None))

    def test_entries_that_are_not_files_count_for_the_reference(self):
        """Directories, dangling links and FIFOs named like candidates are
        not listed and never picked, but the reference counts them by name:
        reference_pick marks its pick, none when it would fail."""
        x = b"x" * 30                                   # an XSpace that decodes
        cases = {
            # a directory named *.xplane.pb beside an XPlane file: two
            # XPlanes for the reference, which reads the trace JSON
            "dir_beside": ({"dir": ["x.xplane.pb"], "files": {"h2.xplane.pb": x, "h.trace.json.gz": b"3"}},
                           ("h2.xplane.pb", "h.trace.json.gz")),
            # a dangling link beside it and no trace JSON: the reference fails
            "dangling_beside": ({"dangling": ["h.xplane.pb"], "files": {"h2.xplane.pb": x}},
                                ("h2.xplane.pb", None)),
            # a lone directory named *.xplane.pb: it fails reading it
            "dir_alone": ({"dir": ["x.xplane.pb"], "files": {"h.trace.json.gz": b"3"}},
                          ("h.trace.json.gz", None)),
            # a lone dangling link: no such file, so the JSON step, as profsum
            "dangling_alone": ({"dangling": ["h.xplane.pb"], "files": {"h.trace.json.gz": b"3"}},
                               ("h.trace.json.gz", "h.trace.json.gz")),
            # a lone FIFO named *.xplane.pb: it would read it (and wait)
            "fifo_alone": ({"fifo": ["f.xplane.pb"], "files": {"h.trace.json.gz": b"3"}},
                           ("h.trace.json.gz", None)),
            # the first JSON name is a dangling link: it fails reading it
            "dangling_json": ({"dangling": ["a.trace.json.gz"], "files": {"b.trace.json.gz": b"3"}},
                              ("b.trace.json.gz", None)),
            # ... but one of a less preferred format is passed over
            "dangling_json_later": ({"dangling": ["a.trace.json"], "files": {"b.trace.json.gz": b"3"}},
                                    ("b.trace.json.gz", "b.trace.json.gz")),
        }
        with TempDir() as t:
            for name, (layout, (want_picked, want_ref)) in cases.items():
                with self.subTest(name):
                    d = os.path.join(t.path, name)
                    os.makedirs(d)
                    for f, data in layout["files"].items():
                        t.write(os.path.join(name, f), data)
                    for f in layout.get("dir", []):
                        os.makedirs(os.path.join(d, f))
                    for f in layout.get("dangling", []):
                        os.symlink(os.path.join(d, "nowhere"), os.path.join(d, f))
                    for f in layout.get("fifo", []):
                        os.mkfifo(os.path.join(d, f))
                    picked, ref = self.check_against_reference(d, files_only=False)
                    self.assertEqual((picked, ref), (os.path.join(d, want_picked),
                                                     want_ref and os.path.join(d, want_ref)))
                    # the rows are the files alone
                    self.assertEqual(sorted(r[0] for r in self.rows(d)),
                                     sorted(os.path.join(d, f) for f in layout["files"]))

    def test_import_warns_where_the_reference_reads_another_file(self):
        """An import of a folder where the reference reads another file, or
        fails, says so in a quality warning; where it reads the same file,
        none."""
        import json
        from test_sessions import host_xspace, BASE_NS
        x = host_xspace(BASE_NS, [(1, 50, 20), (2, 50, 20)])
        trace = {"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 0, "dur": 5}]}

        def warnings(d):
            db = connect()
            db.execute("SELECT profsum_import(?, 'x')", (d,))
            got = db.execute("SELECT trace_path, quality_warnings FROM profsum_trace").fetchone()
            db.close()
            return got[0], json.loads(got[1])
        with TempDir() as t:
            t.write("a/h2.xplane.pb", x)
            t.write("a/h.trace.json.gz", trace, gz=True)
            os.makedirs(os.path.join(t.path, "a/x.xplane.pb"))
            a = os.path.join(t.path, "a")
            self.assertEqual(warnings(a), (a + "/h2.xplane.pb", [
                "The reference summarizer would read '%s/h.trace.json.gz' in this folder, where profsum "
                "read '%s/h2.xplane.pb': it counts every entry named *.xplane.pb, and '%s/x.xplane.pb' "
                "(a directory) makes 2 of them, so it reads the trace JSON instead (profsum looks at files "
                "only)." % (a, a, a)]))
            t.write("b/h2.xplane.pb", x)
            os.symlink("nowhere", os.path.join(t.path, "b/h.xplane.pb"))
            b = os.path.join(t.path, "b")
            self.assertEqual(warnings(b), (b + "/h2.xplane.pb", [
                "The reference summarizer would fail on this folder, where profsum read '%s/h2.xplane.pb': "
                "it counts every entry named *.xplane.pb, and '%s/h.xplane.pb' (a dangling symbolic link) "
                "makes 2 of them, and with several and no trace JSON it fails (profsum looks at files "
                "only)." % (b, b)]))
            t.write("c/h.trace.json.gz", trace, gz=True)
            os.makedirs(os.path.join(t.path, "c/x.xplane.pb"))
            c = os.path.join(t.path, "c")
            self.assertEqual(warnings(c), (c + "/h.trace.json.gz", [
                "The reference summarizer would fail on this folder, where profsum read '%s/h.trace.json.gz': "
                "the only entry named *.xplane.pb, '%s/x.xplane.pb', is a directory, which it would try to "
                "read as the XPlane (profsum looks at files only)." % (c, c)]))
            t.write("d/b.trace.json.gz", trace, gz=True)
            os.symlink("nowhere", os.path.join(t.path, "d/a.trace.json.gz"))
            d = os.path.join(t.path, "d")
            self.assertEqual(warnings(d), (d + "/b.trace.json.gz", [
                "The reference summarizer would fail on this folder, where profsum read '%s/b.trace.json.gz': "
                "the trace JSON it picks, '%s/a.trace.json.gz', is a dangling symbolic link, which it cannot "
                "read (profsum looks at files only)." % (d, d)]))
            # a lone dangling XPlane link: both read the trace JSON
            t.write("e/h.trace.json.gz", trace, gz=True)
            os.symlink("nowhere", os.path.join(t.path, "e/h.xplane.pb"))
            e = os.path.join(t.path, "e")
            self.assertEqual(warnings(e), (e + "/h.trace.json.gz", []))

    def test_symlink_loop_does_not_hang(self):
        with TempDir() as t:
            t.write("a/b/h.trace.json.gz", b"")
            os.symlink("..", os.path.join(t.path, "a/b/up"))
            os.symlink(t.path, os.path.join(t.path, "a/self"))
            os.symlink("loop2", os.path.join(t.path, "loop1"))
            os.symlink("loop1", os.path.join(t.path, "loop2"))
            rows = self.rows(t.path)
            self.assertEqual([r[0] for r in rows],
                             [os.path.join(t.path, "a/b/h.trace.json.gz")])

    def test_depth_bound(self):
        with TempDir() as t:
            deep = os.path.join(t.path, *(["d"] * 64))
            os.makedirs(deep)
            open(os.path.join(deep, "h.trace.json"), "wb").close()
            self.assertEqual(len(self.rows(t.path)), 1)      # 64 levels: fine
            os.makedirs(os.path.join(deep, "d"))
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.rows(t.path)
            self.assertEqual(
                str(cm.exception),
                "profsum_find_traces: '%s': directories nested deeper than 64 "
                "levels at '%s'" % (t.path, os.path.join(deep, "d")))

    # ---- errors ----------------------------------------------------------

    def test_missing_directory(self):
        with TempDir() as t:
            d = os.path.join(t.path, "nope")
            self.assertSqlError("SELECT * FROM profsum_find_traces(?)", (d,),
                                "profsum_find_traces: '%s': no such directory" % d)

    def test_quote_in_dir_is_quoted(self):
        self.assertSqlError("SELECT * FROM profsum_find_traces(?)", ("/no/it's",),
                            "profsum_find_traces: '/no/it''s': no such directory")

    def test_file_instead_of_directory(self):
        with TempDir() as t:
            f = t.write("h.trace.json", b"{}")
            self.assertSqlError("SELECT * FROM profsum_find_traces(?)", (f,),
                                "profsum_find_traces: '%s': not a directory" % f)

    def test_unreadable_directory(self):
        # as root the query runs in a child that is not root: permissions
        # are not enforced for root
        with TempDir() as t:
            d = os.path.join(t.path, "locked")
            os.makedirs(d)
            os.chmod(d, 0)
            want = ("profsum_find_traces: '%s': cannot open directory "
                    "(Permission denied)" % d)
            try:
                if os.geteuid() == 0:
                    os.chmod(t.path, 0o755)
                    self.assertEqual(run_as_unprivileged(
                        self, "SELECT * FROM profsum_find_traces(?)", (d,)), ("error", want))
                else:
                    self.assertSqlError("SELECT * FROM profsum_find_traces(?)", (d,), want)
            finally:
                os.chmod(d, 0o700)

    def test_unreadable_subdirectory_is_skipped(self):
        with TempDir() as t:
            t.write("ok/h.trace.json", b"")
            t.write("locked/g.trace.json.gz", b"")
            d = os.path.join(t.path, "locked")
            os.chmod(d, 0)
            want = [os.path.join(t.path, "ok/h.trace.json")]
            try:
                if os.geteuid() == 0:
                    # root reads any directory: a child that is not root
                    os.chmod(t.path, 0o755)
                    os.chmod(os.path.join(t.path, "ok"), 0o755)
                    kind, rows = run_as_unprivileged(
                        self, "SELECT path FROM profsum_find_traces(?)", (t.path,))
                    self.assertEqual((kind, [r[0] for r in rows]), ("rows", want))
                    # and root itself lists the locked one too
                    self.assertEqual(len(self.rows(t.path)), 2)
                else:
                    self.assertEqual([r[0] for r in self.rows(t.path)], want)
            finally:
                os.chmod(d, 0o700)

    def test_missing_argument(self):
        self.assertSqlError("SELECT * FROM profsum_find_traces", (),
                            "profsum_find_traces: missing required argument DIR")
        self.assertSqlError("SELECT * FROM profsum_find_traces()", (),
                            "profsum_find_traces: missing required argument DIR")

    def test_null_argument_gives_no_rows(self):
        self.assertEqual(self.rows(None), [])

    # ---- flags -----------------------------------------------------------

    def test_directonly_view_in_main_schema_fails(self):
        with TempDir() as t:
            db = connect(os.path.join(t.path, "x.db"))
            try:
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    db.execute("CREATE VIEW v AS SELECT * FROM profsum_find_traces(%s)" % q(t.path))
                    db.execute("SELECT * FROM v").fetchall()
                self.assertIn('unsafe use of virtual table "profsum_find_traces"',
                              str(cm.exception))
                # A TEMP view is the application's own SQL: allowed.
                # (its own folder: a scan of the shared /tmp would depend on other processes)
                db.execute("CREATE TEMP VIEW tv AS SELECT * FROM profsum_find_traces(%s)" % q(t.path))
                db.execute("SELECT count(*) FROM tv").fetchall()
            finally:
                db.close()

    def test_directonly_trigger_in_main_schema_fails(self):
        db = self.db
        db.execute("CREATE TABLE t(x)")
        db.execute("CREATE TABLE log(p)")
        db.execute("CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
                   "INSERT INTO log SELECT path FROM profsum_find_traces('/nonexistent-dir'); END")
        with self.assertRaises(sqlite3.OperationalError) as cm:
            db.execute("INSERT INTO t VALUES (1)")
        self.assertIn("unsafe use of virtual table", str(cm.exception))

    def test_eponymous_only(self):
        with self.assertRaises(sqlite3.OperationalError):
            self.db.execute("CREATE VIRTUAL TABLE f USING profsum_find_traces")
        names = [r[0] for r in self.db.execute("SELECT name FROM pragma_module_list")]
        self.assertIn("profsum_find_traces", names)

    def test_column_names(self):
        cur = self.db.execute("SELECT * FROM profsum_find_traces(NULL)")
        self.assertEqual([c[0] for c in cur.description],
                         ["path", "host", "session", "size", "format", "picked",
                          "reference_pick"])


class OutOfMemory(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_every_allocation_of_a_walk_with_entries_that_are_not_files(self):
        """The walk keeps the entries that are not files aside for the
        reference's pick: every allocation failed in turn gives an error
        or the full result, and leaks nothing (ASan)."""
        with TempDir() as t:
            t.write("a/h2.xplane.pb", b"x" * 30)
            t.write("a/h.trace.json.gz", b"3")
            os.makedirs(os.path.join(t.path, "a/x.xplane.pb/s"))
            t.write("a/x.xplane.pb/s/k.trace.json", b"{}")
            for i in range(6):
                os.symlink("nowhere", os.path.join(t.path, "a/d%d.trace.json.gz" % i))
            run_oom_sql(self, ["SELECT group_concat(path || ':' || picked || ':' || reference_pick, ' ') "
                               "FROM profsum_find_traces('%s')" % os.path.join(t.path, "a")])


if __name__ == "__main__":
    unittest.main()
