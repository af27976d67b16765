"""The B/E pairing diagnostics an import stores (unmatched_begin,
unmatched_end, mismatched_end, time_out_of_range of a B/E slice) on hostile
layouts: out-of-order events on a track, E before B, nested B/E with wrong
names, B left open, tracks interleaved, pid/tid as strings and as integers,
escapes in names, more than 5 of a kind, a trace cut off.

The import keeps its B/E events in a compact log per track and pairs them
once the read ends (ext/reader/belog.c, pairLog in track.c); it must store
what the track pass of profsum_diagnostics(path) finds (pairBE over its
records): the same rows, and in the order that pairing gives them (track by
track in the order the tracks first appear, each track's events in (ts,
entry) order, the B still open at a track's end last, the one opened last
first), which decides the first 5 of a kind the default import keeps.
pairing_model() below is that order, written again from the rule; the
rows an import stores are checked against it, and against the listing.
"""
import os
import random
import sqlite3
import unittest
from decimal import Decimal

from util import CORPUS, OOM_SQL, ROOT, DbTestCase, TempDir, connect, run_oom_sql, sqlrun_mem

ALL = '{"store_diagnostics": "all"}'
CHUNK_SO = os.path.join(ROOT, "build", "chunk", "profsum.so")

D_OPEN = "B event has no matching E on its track; dur is NULL"
D_NOOPEN = "E event with no open B on its track"
D_MISMATCH = "E event's name differs from the B it closes (entry %d)"
D_LONG = "B/E slice longer than 2^61 ps (about 26 days)%s; on no track"
D_UNPAIRED = "B/E event without an integer pid/tid or a ts cannot be paired"
PAIR_KINDS = ("unmatched_begin", "unmatched_end", "mismatched_end", "time_out_of_range")
# kinds only an import has (the reference summarizer's view of the file)
IMPORT_ONLY = ("reference_rejects", "missing_ts", "bad_ts")
# and only the listing (the nesting of slices: no pass of an import's)
LISTED_ONLY = ("partial_overlap",)


def ev(ph, pid, tid, ts, name=None):
    """One entry as JSON text: pid, tid, ts and name are JSON texts as
    written (None: the key is absent)."""
    parts = ['"ph":"%s"' % ph, '"pid":%s' % pid, '"tid":%s' % tid]
    if ts is not None:
        parts.append('"ts":%s' % ts)
    if name is not None:
        parts.append('"name":%s' % name)
    return "{" + ",".join(parts) + "}"


def trace(entries):
    return '{"traceEvents":[\n' + ",\n".join(entries) + "\n]}"


def _field(text, key):
    """The JSON text of "key" in an entry written by ev() (None: absent)."""
    tag = '"%s":' % key
    i = text.find(tag)
    if i < 0:
        return None
    i += len(tag)
    if text[i] == '"':
        j = i + 1
        while text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return text[i:j + 1]
    j = i
    while text[j] not in ",}":
        j += 1
    return text[i:j]


def _int_id(t):
    """A pid/tid text as the reader's integer id (an integer, or a string
    of one), else None."""
    if t is None:
        return None
    s = t[1:-1] if t.startswith('"') else t
    if s.lstrip("-").isdigit():
        return int(s)
    return None


def pairing_model(entries):
    """The pairing diagnostics of entries (texts from ev()) in the order an
    import emits them: those of events that cannot be paired as they are
    read, then the pairing's, track by track.  [(idx, kind, detail)]."""
    early, tracks, order = [], {}, []
    for idx, text in enumerate(entries):
        ph = _field(text, "ph")
        if ph not in ('"B"', '"E"'):
            continue
        pid, tid = _int_id(_field(text, "pid")), _int_id(_field(text, "tid"))
        ts = _field(text, "ts")
        if pid is None or tid is None or ts is None:
            early.append((idx, "unmatched_begin" if ph == '"B"' else "unmatched_end", D_UNPAIRED))
            continue
        ps = Decimal(ts.strip('"')) * 1000000
        assert ps == ps.to_integral_value(), ts
        name = _field(text, "name")
        # the name's hash is of its raw text: "" and a non-string have none
        key = name[1:-1] if name and name.startswith('"') and len(name) > 2 else None
        if (pid, tid) not in tracks:
            tracks[(pid, tid)] = []
            order.append((pid, tid))
        tracks[(pid, tid)].append((int(ps), idx, ph[1], key))
    late = []
    for t in order:
        stack = []
        for ps, idx, ph, key in sorted(tracks[t]):
            if ph == "B":
                stack.append((ps, idx, key))
            elif not stack:
                late.append((idx, "unmatched_end", D_NOOPEN))
            else:
                bps, bidx, bkey = stack.pop()
                span = ps - bps
                if span > 1 << 61:
                    late.append((bidx, "time_out_of_range", D_LONG % (", dur is NULL" if span >= 1 << 63 else "")))
                if key and bkey and key != bkey:
                    late.append((idx, "mismatched_end", D_MISMATCH % bidx))
        while stack:
            late.append((stack.pop()[1], "unmatched_begin", D_OPEN))
    return early + late


def is_pairing_row(r):
    """A row (idx, byte_offset, kind, detail) of the B/E pairing."""
    return r[2] in PAIR_KINDS[:3] or (r[2] == "time_out_of_range" and r[3].startswith("B/E slice"))


def first_five(rows):
    """The rows the default import keeps of a sequence: the first 5 of a
    kind."""
    seen, out = {}, []
    for r in rows:
        seen[r[1]] = seen.get(r[1], 0) + 1
        if seen[r[1]] <= 5:
            out.append(r)
    return out, seen


# Hand-made layouts (name, entries).
LAYOUTS = [
    ("out_of_order", [
        ev("B", 1, 1, 10, '"a"'),           # 0
        ev("E", 1, 1, 30, '"a"'),           # 1 closes 0 (in time order)
        ev("B", 1, 1, 20, '"b"'),           # 2 earlier than 1: the track is out of order
        ev("E", 1, 1, 25, '"c"'),           # 3 closes 2: mismatched_end (entry 2)
        ev("E", 1, 2, 5, '"x"'),            # 4 track 2: unmatched_end, after track 1's rows
        ev("B", 1, 1, 40, '"d"'),           # 5 left open: unmatched_begin
    ]),
    ("e_before_b", [
        ev("E", 1, 1, 5, '"a"'),            # no B before it in time: unmatched_end
        ev("B", 1, 1, 10, '"a"'),           # left open
        ev("E", 1, 2, 10, '"b"'),           # E first in the file, B first in time: paired
        ev("B", 1, 2, 5, '"b"'),
        ev("E", 1, 3, 7, '"c"'),            # same ts: file order, so the E comes first
        ev("B", 1, 3, 7, '"c"'),
    ]),
    ("nested_wrong_names", [
        ev("B", 2, 1, 1, '"outer"'),
        ev("B", 2, 1, 2, '"inner"'),
        ev("E", 2, 1, 3, '"outer"'),        # closes inner: mismatched_end
        ev("E", 2, 1, 4, '"inner"'),        # closes outer: mismatched_end
        ev("B", 2, 1, 5, '"x"'),
        ev("B", 2, 1, 6, '"y"'),
        ev("B", 2, 1, 7, '"z"'),            # three left open: reported z, y, x
    ]),
    ("interleaved", [
        ev("B", 1, 1, 1, '"a"'), ev("B", 1, 2, 1, '"b"'), ev("B", 1, 3, 1, '"c"'),
        ev("E", 1, 2, 2, '"x"'), ev("E", 1, 1, 2, '"y"'), ev("E", 1, 4, 2, '"z"'),
        ev("E", 1, 3, 0.5, '"c"'),          # before its B: unmatched_end, B left open
        ev("B", 1, 2, 3, '"b"'), ev("E", 1, 1, 3, '"a"'),
    ]),
    ("string_ids", [
        ev("B", '"1"', 1, 1, '"a"'),        # pid "1" is pid 1: one track
        ev("E", 1, '"1"', 2, '"b"'),
        ev("B", '"Spans"', 1, 3, '"a"'),    # no integer pid: cannot be paired
        ev("E", 1, '"t"', 4, '"a"'),
        ev("B", 1, 1, None, '"a"'),         # no ts: cannot be paired
        ev("B", '"7"', '"8"', 5, '"q"'),
        ev("E", 7, 8, '"6"', '"q"'),        # ts as a string: read as a number
    ]),
    ("escaped_names", [
        ev("B", 1, 1, 1, '"ab"'),
        ev("E", 1, 1, 2, '"a\\u0062"'),     # the same name decoded, another text
        ev("B", 1, 1, 3, '"\\u00e9"'),
        ev("E", 1, 1, 4, '"\\u00e9"'),
        ev("B", 1, 1, 5, '"t\\"q"'),
        ev("E", 1, 1, 6, '""'),             # no name: no mismatch
        ev("B", 1, 1, 7, "3"),              # a number is no name
        ev("E", 1, 1, 8, '"n"'),
    ]),
    ("long_slices", [
        ev("B", 1, 1, -1000000000000000, '"a"'),  # 2e21 ps: past INT64_MAX, dur NULL
        ev("E", 1, 1, 1000000000000000, '"a"'),
        ev("B", 1, 2, 0, '"b"'),
        ev("E", 1, 2, 5000000000000, '"b"'),      # 5e18 ps: past 2^61 only
        ev("B", 1, 3, 0, '"c"'),                  # 4
        ev("E", 1, 3, "2305843009213.693952", '"c"'),   # 5: 2^61 ps after 4 and 6
        ev("B", 1, 3, 0, '"c"'),                  # 6: at 4's ts, so 5 closes it (in range)
        ev("E", 1, 3, "2305843009213.693953", '"c"'),   # 7 closes 4: 2^61 + 1 ps
    ]),
    ("more_than_five", (
        [ev("B", 3, t, t, '"b"') for t in range(8)]                      # 8 left open
        + [ev("E", 4, t, t, '"e"') for t in range(7)]                    # 7 without a B
        + [x for t in range(6) for x in (ev("B", 5, t, 2 * t, '"p"'),    # 6 mismatched
                                          ev("E", 5, t, 2 * t + 1, '"q"'))]
        + [ev("E", '"Spans"', 1, 1, '"s"')]                              # an early one
    )),
]


def random_entries(seed, n):
    """n entries on a few tracks, B, E and a few X and M: out of order,
    string ids, escapes, huge and negative times, missing ts."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        k = rnd.random()
        pid = rnd.choice(["1", "2", '"1"', '"2"', "1", '"Spans"'])
        tid = rnd.choice(["1", "2", "3", '"3"', "1"])
        ts = rnd.choice([str(rnd.randint(0, 60)), "%d.5" % rnd.randint(0, 60), str(10 ** 15 + rnd.randint(0, 9)),
                         str(-rnd.randint(0, 9)), '"%d"' % rnd.randint(0, 60), None if rnd.random() < 0.1 else "3"])
        name = rnd.choice(['"a"', '"b"', '"a\\u0062"', '"ab"', '"\\u00e9"', '""', None, "3"])
        if k < 0.45:
            out.append(ev("B", pid, tid, ts, name))
        elif k < 0.9:
            out.append(ev("E", pid, tid, ts, name))
        elif k < 0.95:
            out.append('{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":%s,"name":"x"}' % (rnd.randint(0, 60), rnd.choice(["0", "1", "-1"])))
        else:
            out.append('{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"t"}}')
    return out


def ordered_entries(n, tracks=4):
    """n B/E entries in time order on each track (the log's fast path),
    pairs and nested pairs with a mismatched name now and then."""
    out, t = [], [0] * tracks
    i = 0
    while len(out) < n:
        tid = i % tracks
        a = "n%d" % (i % 7)
        out += [ev("B", 1, tid, t[tid], '"%s"' % a), ev("B", 1, tid, t[tid] + 1, '"in"'),
                ev("E", 1, tid, t[tid] + 2, '"in"' if i % 13 else '"other"'),
                ev("E", 1, tid, t[tid] + 3, '"%s"' % a)]
        t[tid] += 4
        i += 1
    return out[:n]


class ImportPairing(DbTestCase):

    def imported(self, path, opts=None):
        """Import path under a label of its own (opts: options_json)."""
        self.nImport = getattr(self, "nImport", 0) + 1
        label = "t%d" % self.nImport
        if opts:
            return self.db.execute("SELECT profsum_import(?, ?, ?)", (path, label, opts)).fetchone()[0]
        return self.db.execute("SELECT profsum_import(?, ?)", (path, label)).fetchone()[0]

    def stored(self, tid):
        return self.db.execute("SELECT idx, byte_offset, kind, detail FROM profsum_agg_diagnostic "
                               "WHERE trace_id=? ORDER BY rowid", (tid,)).fetchall()

    def listed(self, path):
        return self.db.execute("SELECT idx, byte_offset, kind, detail FROM profsum_diagnostics(?)",
                               (path,)).fetchall()

    def check(self, name, entries, text=None):
        """The import's stored rows (all, and the default's first 5 of a
        kind) against the listing and the pairing's order."""
        path = self.td.write(name + ".json", text if text is not None else trace(entries))
        want = pairing_model(entries)
        listed = self.listed(path)
        stored = self.stored(self.imported(path, ALL))
        # 'all': the rows profsum_diagnostics lists, less the import's own kinds
        self.assertEqual(sorted((r for r in stored if r[2] not in IMPORT_ONLY), key=repr),
                         sorted((r for r in listed if r[2] not in LISTED_ONLY), key=repr))
        # ... the pairing's in the pairing's order
        self.assertEqual([(r[0], r[2], r[3]) for r in stored if r[2] in PAIR_KINDS], want)
        # the default: the first 5 of a kind in that order, and the totals
        kept, seen = first_five(want)
        compact = self.stored(self.imported(path))
        self.assertEqual([(r[0], r[2], r[3]) for r in compact if r[2] in PAIR_KINDS], kept)
        sup = sorted(r[3] for r in compact if r[2] == "suppressed" and r[3].split(":")[0] in PAIR_KINDS)
        self.assertEqual(sup, sorted("%s: %d occurrences in all; only the first 5 are stored "
                                     "(profsum_diagnostics(path) lists them all)" % (k, n)
                                     for k, n in seen.items() if n > 5))
        return want

    def test_layouts(self):
        for name, entries in LAYOUTS:
            with self.subTest(layout=name):
                self.check(name, entries)

    def test_out_of_order_rows(self):
        # the model's order, written out for the first layout
        self.assertEqual(self.check(*LAYOUTS[0]), [
            (3, "mismatched_end", D_MISMATCH % 2),
            (5, "unmatched_begin", D_OPEN),
            (4, "unmatched_end", D_NOOPEN)])

    def test_long_slices_rows(self):
        self.assertEqual(self.check(*LAYOUTS[6]), [
            (0, "time_out_of_range", D_LONG % ", dur is NULL"),
            (2, "time_out_of_range", D_LONG % ""),
            (4, "time_out_of_range", D_LONG % "")])

    def test_random_traces(self):
        for seed in range(12):
            n = [1, 5, 40, 300, 2000, 6000][seed % 6]
            with self.subTest(seed=seed, n=n):
                self.check("r%d" % seed, random_entries(seed, n))

    def test_tracks_in_order(self):
        # every track in time order: read as logged, no ordering
        entries = ordered_entries(20000)
        want = self.check("ordered", entries)
        self.assertEqual(len(want), 20000 // 4 // 13 + 1)

    def test_one_track_turns_out_of_order_late(self):
        # a track in order for 10,000 events, then one event before them all
        entries = ordered_entries(10000, tracks=2) + [ev("E", 1, 0, -1, '"n0"'), ev("B", 1, 1, 0, '"z"')]
        self.check("late", entries)

    def test_cut_off_trace(self):
        entries = ordered_entries(400, tracks=3)
        text = trace(entries)
        cut = text[:text.rfind('{"ph"') + 30]          # inside the last entry
        self.check("cut", entries[:-1], text=cut)

    @unittest.skipUnless(os.path.isdir(CORPUS), "no corpus of real captures (docs/internals.md)")
    def test_corpus_pairing_as_listed(self):
        # every JSON trace of the corpus: the pairing's rows an import
        # stores are those profsum_diagnostics lists
        n = 0
        for root, _, files in os.walk(CORPUS):
            for f in sorted(files):
                if not (f.endswith(".json") or f.endswith(".json.gz")):
                    continue
                path = os.path.join(root, f)
                try:
                    stored = self.stored(self.imported(path, ALL))
                except Exception:
                    continue                 # not a trace profsum imports
                n += 1
                with self.subTest(path=path):
                    self.assertEqual(sorted(filter(is_pairing_row, stored), key=repr),
                                     sorted(filter(is_pairing_row, self.listed(path)), key=repr))
        self.assertGreater(n, 0)

    @unittest.skipUnless(os.path.exists(OOM_SQL), "build/asan/oom_sql not built (make asan builds and runs it)")
    def test_import_out_of_memory(self):
        # every allocation failing in turn, in an import whose log has a
        # track out of order (sorted at the end) and one in order
        with TempDir() as td:
            p = td.write("ooo.json", trace(LAYOUTS[0][1] + LAYOUTS[2][1]))
            run_oom_sql(self, ["SELECT profsum_import('%s', 'p', '%s')" % (p, ALL)])


@unittest.skipUnless(os.path.exists(CHUNK_SO), "build/chunk/profsum.so not built (make build/chunk/profsum.so)")
class SmallChunks(unittest.TestCase):
    """build/chunk/profsum.so keeps the log in chunks of at most 8 bytes and
    tracks in blocks of 2, and sorts in runs of 8: events straddle chunks
    and sorts merge many runs.  It stores what the default build stores."""

    def rows(self, db, path, opts):
        self.nImport = getattr(self, "nImport", 0) + 1
        tid = db.execute("SELECT profsum_import(?, ?, ?)", (path, "t%d" % self.nImport, opts)).fetchone()[0]
        return db.execute("SELECT idx, byte_offset, kind, detail FROM profsum_agg_diagnostic "
                          "WHERE trace_id=? ORDER BY rowid", (tid,)).fetchall()

    def test_same_rows(self):
        small = sqlite3.connect(":memory:")
        small.enable_load_extension(True)
        small.load_extension(CHUNK_SO)
        big = connect()
        with TempDir() as td:
            cases = [(n, e) for n, e in LAYOUTS]
            cases += [("r%d" % s, random_entries(s, [50, 700, 3000][s % 3])) for s in range(6)]
            cases.append(("ordered", ordered_entries(3000, tracks=5)))
            for name, entries in cases:
                path = td.write(name + ".json", trace(entries))
                for opts in (ALL, "{}"):
                    with self.subTest(trace=name, opts=opts):
                        self.assertEqual(self.rows(small, path, opts), self.rows(big, path, opts))
        small.close()
        big.close()


class Memory(unittest.TestCase):
    """What the log costs an import: a few bytes per B/E event at the peak
    (it kept an 80-byte record per event before, 113 bytes at the peak)."""

    def test_bytes_per_event(self):
        with TempDir() as td:
            peaks = []
            for n in (100000, 200000):
                path = td.write("be%d.json" % n, trace(ordered_entries(n)))
                before, _, peak = sqlrun_mem("SELECT profsum_import('%s')" % path.replace("'", "''"))
                peaks.append(peak - before)
            per_event = (peaks[1] - peaks[0]) / 100000
            self.assertLess(per_event, 24, peaks)


if __name__ == "__main__":
    unittest.main()
