"""Every diagnostic when asked for all of them: profsum_diagnostics(path)
lists every diagnostic of the file, each with its detail, in byte-offset
order (unknown offsets last), with no 'suppressed' row; an import with
store_diagnostics 'all' stores those same rows; the default import stores
the first 5 of a kind and a 'suppressed' row with the kind's total.

The fixtures pass the readers' cap of formatted details (1,000 of a kind)
on purpose: a JSON trace with 2,500 time_rounded and 1,200
nonfinite_number diagnostics, and an XSpace (tests/xspace_writer.py) with
1,500 unknown fields and 1,200 aggregated XEvents."""
import gzip
import os
import sqlite3
import threading
import time
import unittest

import xspace_writer as W
from util import OOM_SQL, DbTestCase, TempDir, connect, run_oom_sql

N_ROUNDED = 2500
N_NONFINITE = 1200


def json_trace():
    """N_ROUNDED X events whose ts has 7 decimals (a converted XPlane's
    17 significant digits: time_rounded each), every other one of the
    first 2 * N_NONFINITE with a NaN in its args (nonfinite_number)."""
    ev = []
    for i in range(N_ROUNDED):
        args = '{"v":NaN}' if i % 2 == 0 and i < 2 * N_NONFINITE else '{"v":1}'
        ev.append('{"ph":"X","pid":1,"tid":%d,"name":"op%d","ts":%d.1234567,"dur":3,"args":%s}'
                  % (i % 3, i % 11, 1700000000 + 10 * i, args))
    return '{"traceEvents":[' + ",\n".join(ev) + "]}"


N_UNKNOWN = 1500
N_AGG = 1200


def xplane_capture():
    """One plane, one line: N_UNKNOWN events with an unknown field (9) and
    N_AGG aggregated XEvents (num_occurrences, no offset: no row)."""
    pb = W.PlaneBuilder("/device:TPU:0", id=0)
    evs = []
    for i in range(N_UNKNOWN):
        evs.append(pb.event("op.%d" % (i % 5), offset_ps=i * 1000, duration_ps=500,
                            extra=W.f_varint(9, 1)))
    for i in range(N_AGG):
        evs.append(pb.event("agg.%d" % (i % 3), num_occurrences=i + 2))
    pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
    return W.xspace([pb.build()], hostnames=["h0"])


class DiagAllCase(DbTestCase):

    def rows_of(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def listed(self, path):
        return self.rows_of("SELECT idx, byte_offset, kind, detail FROM profsum_diagnostics(?)", path)

    def stored(self, tid):
        return self.rows_of("SELECT idx, byte_offset, kind, detail FROM profsum_agg_diagnostic "
                            "WHERE trace_id=?", tid)

    def kinds(self, rows):
        out = {}
        for r in rows:
            out[r[2]] = out.get(r[2], 0) + 1
        return out

    def assert_listing(self, rows):
        """Every detail set; offsets in order, unknown ones last."""
        self.assertEqual([r for r in rows if not r[3]], [])
        self.assertNotIn("suppressed", self.kinds(rows))
        known = [r[1] for r in rows if r[1] is not None]
        self.assertEqual(known, sorted(known))
        seen_null = False
        for r in rows:
            if r[1] is None:
                seen_null = True
            else:
                self.assertFalse(seen_null, "a known offset after an unknown one")


class JsonAll(DiagAllCase):

    def setUp(self):
        super().setUp()
        self.path = self.td.write("many.json", json_trace())

    def test_listing_has_every_diagnostic(self):
        rows = self.listed(self.path)
        self.assertEqual(self.kinds(rows), {"time_rounded": N_ROUNDED,
                                            "nonfinite_number": N_NONFINITE})
        self.assert_listing(rows)
        # each time_rounded names its own value (no blank past the 1000th)
        rounded = [r for r in rows if r[2] == "time_rounded"]
        self.assertEqual([r[0] for r in rounded], list(range(N_ROUNDED)))
        for r in rounded:
            self.assertTrue(r[3].startswith("ts: %d.1234567 has more than 6 decimals"
                                            % (1700000000 + 10 * r[0])), r)
        self.assertEqual(sorted(r[0] for r in rows if r[2] == "nonfinite_number"),
                         list(range(0, 2 * N_NONFINITE, 2)))
        # one entry's diagnostics at its offset, in arrival order
        self.assertEqual(len({(r[0], r[1]) for r in rows}), N_ROUNDED)

    def test_import_all_stores_the_same_rows(self):
        tid = self.db.execute("SELECT profsum_import(?, 'a', '{\"store_diagnostics\": \"all\"}')",
                              (self.path,)).fetchone()[0]
        stored = self.stored(tid)
        self.assertEqual(len(stored), N_ROUNDED + N_NONFINITE)
        self.assertEqual(sorted(stored, key=repr), sorted(self.listed(self.path), key=repr))

    def test_default_import_is_compact(self):
        tid = self.db.execute("SELECT profsum_import(?, 'c')", (self.path,)).fetchone()[0]
        stored = self.stored(tid)
        self.assertEqual(self.kinds(stored), {"time_rounded": 5, "nonfinite_number": 5,
                                              "suppressed": 2})
        self.assertEqual(sorted(r[3] for r in stored if r[2] == "suppressed"), [
            "nonfinite_number: %d occurrences in all; only the first 5 are stored "
            "(profsum_diagnostics(path) lists them all)" % N_NONFINITE,
            "time_rounded: %d occurrences in all; only the first 5 are stored "
            "(profsum_diagnostics(path) lists them all)" % N_ROUNDED])
        # the first five of each kind, as listed
        listed = self.listed(self.path)
        for kind in ("time_rounded", "nonfinite_number"):
            self.assertEqual([r for r in stored if r[2] == kind],
                             [r for r in listed if r[2] == kind][:5])

    def test_gzip_input_same_listing(self):
        p = self.td.write("many.json.gz", json_trace(), gz=True)
        rows = self.listed(p)
        self.assertEqual(self.kinds(rows), {"time_rounded": N_ROUNDED,
                                            "nonfinite_number": N_NONFINITE})
        self.assertEqual([r[3] for r in rows], [r[3] for r in self.listed(self.path)])


class XPlaneAll(DiagAllCase):

    def setUp(self):
        super().setUp()
        self.path = self.td.write("cap.xplane.pb", xplane_capture())

    def test_listing_has_every_diagnostic(self):
        rows = self.listed(self.path)
        kinds = self.kinds(rows)
        self.assertEqual(kinds.get("unknown_field"), N_UNKNOWN)
        self.assertEqual(kinds.get("xplane_aggregated_event"), N_AGG)
        self.assert_listing(rows)
        agg = sorted((r for r in rows if r[2] == "xplane_aggregated_event"), key=lambda r: r[0])
        self.assertEqual([r[0] for r in agg], list(range(N_UNKNOWN, N_UNKNOWN + N_AGG)))
        for i, r in enumerate(agg):
            self.assertTrue(r[3].startswith("aggregated XEvent (num_occurrences %d)" % (i + 2)), r)
        unk = [r for r in rows if r[2] == "unknown_field"]
        self.assertEqual(sorted(r[0] for r in unk), list(range(N_UNKNOWN)))
        for r in unk:
            self.assertTrue(r[3].startswith("byte %d" % r[1]), r)

    def test_import_all_stores_every_decoder_row(self):
        tid = self.db.execute("SELECT profsum_import(?, 'x', '{\"store_diagnostics\": \"all\"}')",
                              (self.path,)).fetchone()[0]
        stored = [r for r in self.stored(tid) if r[2] == "unknown_field"]
        listed = [r for r in self.listed(self.path) if r[2] == "unknown_field"]
        self.assertEqual(len(stored), N_UNKNOWN)
        self.assertEqual(sorted(stored, key=repr), sorted(listed, key=repr))
        self.assertEqual(self.rows_of("SELECT count(*) FROM profsum_agg_diagnostic WHERE trace_id=? "
                                      "AND kind='suppressed'", tid), [(0,)])

    def test_default_import_is_compact(self):
        tid = self.db.execute("SELECT profsum_import(?, 'x')", (self.path,)).fetchone()[0]
        stored = self.stored(tid)
        self.assertEqual(self.kinds(stored).get("unknown_field"), 5)
        self.assertIn("unknown_field: %d occurrences in all; only the first 5 are stored "
                      "(profsum_diagnostics(path) lists them all)" % N_UNKNOWN,
                      [r[3] for r in stored if r[2] == "suppressed"])


class SessionAll(DiagAllCase):
    """A session import (two hosts' XSpaces, parsed in worker threads) hands
    store_diagnostics to each host's parse."""

    def setUp(self):
        super().setUp()
        for h in ("h0", "h1"):
            self.td.write(os.path.join("pod", "plugins/profile/2024_01_01_00_00_00", h + ".xplane.pb"),
                          xplane_capture())
        self.dir = os.path.join(self.td.path, "pod")

    def unknown_per_trace(self):
        return self.rows_of("SELECT trace_id, count(*) FROM profsum_agg_diagnostic "
                            "WHERE kind='unknown_field' GROUP BY trace_id ORDER BY trace_id")

    def test_all(self):
        self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\", "
                        "\"store_diagnostics\": \"all\"}')", (self.dir,))
        got = self.unknown_per_trace()
        self.assertEqual([n for _, n in got], [N_UNKNOWN, N_UNKNOWN])
        self.assertEqual(self.rows_of("SELECT count(*) FROM profsum_agg_diagnostic "
                                      "WHERE kind='suppressed'"), [(0,)])

    def test_compact(self):
        self.db.execute("SELECT profsum_import(?, 'pod', '{\"hosts\": \"all\"}')", (self.dir,))
        self.assertEqual([n for _, n in self.unknown_per_trace()], [5, 5])




@unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
class DiagnosticsOutOfMemory(unittest.TestCase):
    """Every allocation of profsum_diagnostics failed in turn (tests/oom_sql.c,
    ASan) over a JSON trace whose details fill more than one block of the
    list and over the XSpace: each run is an error or the reference result,
    nothing leaks."""

    def test_every_allocation(self):
        with TempDir() as td:
            ev = ",".join('{"ph":"X","pid":1,"tid":1,"name":"a","ts":%d.1234567,"dur":1}'
                          % (1700000000 + 10 * i) for i in range(13000))
            pj = td.write("d.json", '{"traceEvents":[' + ev + ']}')
            px = td.write("c.xplane.pb", xplane_capture())
            calls = ["SELECT count(*) || ',' || sum(length(detail)) || ',' || sum(idx) || ',' || "
                     "group_concat(DISTINCT kind) FROM profsum_diagnostics('%s')" % p for p in (pj, px)]
            run_oom_sql(self, calls)


class DiagnosticsInterrupt(unittest.TestCase):
    """profsum_diagnostics of a trace with a diagnostic per entry still
    stops at the connection's interrupt, soon after it comes."""

    def test_interrupt(self):
        ev = "".join('{"ph":"X","pid":1,"tid":%d,"name":"op","ts":%d.1234567,"dur":2},\n'
                     % (i % 3, 1700000000 + 10 * i) for i in range(20000))
        member = gzip.compress(ev.encode(), 6)
        with TempDir() as td:
            p = os.path.join(td.path, "big.json.gz")
            with open(p, "wb") as f:
                f.write(gzip.compress(b'{"traceEvents":[\n'))
                for _ in range(150):                     # 3 M entries
                    f.write(member)
                f.write(gzip.compress(b'{}]}\n'))
            db = connect()
            try:
                timer = threading.Timer(0.3, db.interrupt)
                t0 = time.perf_counter()
                timer.start()
                try:
                    with self.assertRaises(sqlite3.OperationalError) as cm:
                        db.execute("SELECT count(*) FROM profsum_diagnostics(?)", (p,)).fetchall()
                finally:
                    timer.cancel()
                late = time.perf_counter() - t0 - 0.3
                self.assertEqual(str(cm.exception), "profsum_diagnostics: interrupted")
                self.assertLess(late, 1.5)
                self.assertEqual(db.execute("SELECT 1").fetchone(), (1,))
            finally:
                db.close()


if __name__ == "__main__":
    unittest.main()


US = 1000000


def pairing_trace():
    """B/E events that do not pair, an unknown ph, and X events with dur 0
    and a negative dur: the diagnostics of the track pass."""
    ev = [
        '{"ph":"B","pid":1,"tid":1,"name":"open","ts":10}',       # 0 unmatched_begin
        '{"ph":"B","pid":1,"tid":2,"name":"a","ts":10}',          # 1 closed by 2
        '{"ph":"E","pid":1,"tid":2,"name":"b","ts":20}',          # 2 mismatched_end
        '{"ph":"E","pid":1,"tid":3,"name":"c","ts":30}',          # 3 unmatched_end
        '{"ph":"B","pid":"Spans","tid":1,"name":"d","ts":40}',    # 4 cannot be paired
        '{"ph":"Q","pid":1,"tid":1,"name":"q","ts":50}',          # 5 unknown_ph
        '{"ph":"X","pid":1,"tid":4,"name":"z","ts":60,"dur":0}',  # 6 zero_duration
        '{"ph":"X","pid":1,"tid":4,"name":"n","ts":70,"dur":-1}', # 7 negative_duration
        '{"ph":"X","pid":1,"tid":4,"name":"ok","ts":80,"dur":5}',
    ]
    return '{"traceEvents":[' + ",\n".join(ev) + "]}"


PAIRING_LISTED = [
    (0, "unmatched_begin", "B event has no matching E on its track; dur is NULL"),
    (2, "mismatched_end", "E event's name differs from the B it closes (entry 1)"),
    (3, "unmatched_end", "E event with no open B on its track"),
    (4, "unmatched_begin", "B/E event without an integer pid/tid or a ts cannot be paired"),
    (5, "unknown_ph", 'unknown ph "Q" (the row is kept)'),
    (6, "zero_duration", "X event with dur 0: a row, but on no track"),
    (7, "negative_duration", "X event with a negative dur: a row, but on no track"),
]


def odd_xplane():
    """A line with an event of duration 0 and one of a negative duration,
    and an event name that is not UTF-8."""
    pb = W.PlaneBuilder("/device:TPU:0", id=0)
    pb.emeta.append((100, W.event_meta(100, name=b"op\xff.1")))
    evs = [W.event(100, offset_ps=0, duration_ps=5 * US),
           pb.event("zero.1", offset_ps=6 * US, duration_ps=0),
           pb.event("neg.1", offset_ps=7 * US, duration_ps=-3),
           pb.event("ok.1", offset_ps=8 * US, duration_ps=US)]
    pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
    return W.xspace([pb.build()], hostnames=["h0"])


class StoredAsListed(DiagAllCase):
    """The rows an import stores are those profsum_diagnostics(path) lists,
    with the same idx, byte_offset, kind and detail: the B/E pairing,
    unknown_ph and dur <= 0 ones too, and an XSpace's invalid_utf8 under
    that kind."""

    def imported(self, path, label, opts=None):
        if opts is None:
            return self.db.execute("SELECT profsum_import(?, ?)", (path, label)).fetchone()[0]
        return self.db.execute("SELECT profsum_import(?, ?, ?)", (path, label, opts)).fetchone()[0]

    def stored_listed_kinds(self, tid):
        """The stored rows less reference_rejects (a kind only an import
        has: entry 4's pid "Spans")."""
        return sorted((r for r in self.stored(tid) if r[2] != "reference_rejects"), key=repr)

    def test_json_pairing_all(self):
        p = self.td.write("pairs.json", pairing_trace())
        listed = self.listed(p)
        self.assertEqual([(r[0], r[2], r[3]) for r in listed], PAIRING_LISTED)
        tid = self.imported(p, "a", '{"store_diagnostics": "all"}')
        self.assertEqual(self.stored_listed_kinds(tid), sorted(listed, key=repr))

    def test_json_pairing_compact(self):
        p = self.td.write("pairs.json", pairing_trace())
        tid = self.imported(p, "c")
        # fewer than 5 of each kind: every row, and no 'suppressed' one
        self.assertEqual(self.stored_listed_kinds(tid), sorted(self.listed(p), key=repr))

    def test_compact_keeps_the_first_five_begins(self):
        ev = ['{"ph":"B","pid":1,"tid":%d,"name":"b","ts":%d}' % (i, i) for i in range(7)]
        p = self.td.write("begins.json", '{"traceEvents":[' + ",".join(ev) + "]}")
        listed = self.listed(p)
        self.assertEqual([r[0] for r in listed], list(range(7)))
        stored = self.stored(self.imported(p, "b"))
        self.assertEqual(sorted(r for r in stored if r[2] == "unmatched_begin"), listed[:5])
        self.assertEqual([r[3] for r in stored if r[2] == "suppressed"],
                         ["unmatched_begin: 7 occurrences in all; only the first 5 are stored "
                          "(profsum_diagnostics(path) lists them all)"])

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_import_out_of_memory(self):
        # every allocation of an import that pairs B/E events failed in
        # turn: an error or the full result, nothing leaked
        with TempDir() as td:
            p = td.write("pairs.json", pairing_trace())
            run_oom_sql(self, ["SELECT profsum_import('%s', 'p', '{\"store_diagnostics\": \"all\"}')" % p])

    def test_xplane_all(self):
        p = self.td.write("odd.xplane.pb", odd_xplane())
        listed = self.listed(p)
        kinds = self.kinds(listed)
        self.assertEqual((kinds.get("invalid_utf8"), kinds.get("zero_duration"),
                          kinds.get("negative_duration")), (1, 1, 1))
        tid = self.imported(p, "x", '{"store_diagnostics": "all"}')
        self.assertEqual(sorted(self.stored(tid), key=repr), sorted(listed, key=repr))
