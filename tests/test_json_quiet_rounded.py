"""Past its cap of details, the default (compact) profsum_import counts
time_rounded in the scanner (not one callback per event): the stored rows,
the per-kind counts and the entry's lost diagnostics are those of one call
per diagnostic, which profsum_diagnostics(path) and store_diagnostics
'all' still make, every one with its detail."""
import unittest

from util import DbTestCase

N_ROUNDED = 2500


def quiet_trace():
    """N_ROUNDED events with a 7-decimal ts (time_rounded each), then an
    entry whose rounded ts and dur come first and eight other diagnostics
    after them: the last two of those do not fit the entry's eight places."""
    ev = [b'{"ph":"X","pid":1,"tid":2,"ts":%d.1234567,"dur":2,"name":"op%d"}'
          % (1000 + 10 * i, i % 7) for i in range(N_ROUNDED)]
    ev.append(b'{"ts":90000.1234567,"dur":1.1234567,"ph":"X","pid":true,"tid":true,"name":5,'
              b'"cat":6,"args":{"a":NaN,"b":"x\x01y","c":"\xff"},}')
    ev.append(b'{"ph":"X","pid":1,"tid":2,"ts":99000.5,"dur":2,"name":"last"}')
    return b'{"traceEvents":[' + b",".join(ev) + b']}'


class QuietRounded(DbTestCase):

    def setUp(self):
        super().setUp()
        self.path = self.td.write("q.json", quiet_trace())

    def rows_of(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def test_counts_and_lost_places(self):
        tid = self.db.execute("SELECT profsum_import(?, 'q')", (self.path,)).fetchone()[0]
        kinds = dict(self.rows_of("SELECT kind, count(*) FROM profsum_diagnostic WHERE trace_id=? "
                                  "GROUP BY kind", tid))
        self.assertEqual(kinds, {"bad_field": 4, "control_character": 1, "trailing_comma": 1,
                                 "more_diagnostics": 1, "time_rounded": 5, "suppressed": 1})
        # every time_rounded counted: the 2500 events' ts, the entry's ts and dur
        self.assertEqual(self.rows_of("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                      "AND kind='suppressed' AND detail LIKE 'time_rounded:%'", tid)[0][0],
                         "time_rounded: %d occurrences in all; only the first 5 are stored "
                         "(profsum_diagnostics(path) lists them all)" % (N_ROUNDED + 2))
        # the two uncounted time_rounded still took two of the entry's places
        self.assertEqual(self.rows_of("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                      "AND kind='more_diagnostics'", tid),
                         [("2 more diagnostics for this entry not listed",)])
        self.assertEqual(self.rows_of("SELECT min(idx), max(idx) FROM profsum_diagnostic "
                                      "WHERE trace_id=? AND kind='time_rounded'", tid), [(0, 4)])

    def test_all_lists_every_time_rounded(self):
        tid = self.db.execute("SELECT profsum_import(?, 'q', '{\"store_diagnostics\": \"all\"}')",
                              (self.path,)).fetchone()[0]
        kinds = dict(self.rows_of("SELECT kind, count(*) FROM profsum_diagnostic WHERE trace_id=? "
                                  "GROUP BY kind", tid))
        # every time_rounded with its detail: the 2500 events' ts, the entry's
        # ts and dur
        self.assertEqual(kinds, {"bad_field": 4, "control_character": 1, "trailing_comma": 1,
                                 "more_diagnostics": 1, "time_rounded": N_ROUNDED + 2})
        self.assertEqual(self.rows_of("SELECT count(*) FROM profsum_diagnostic WHERE trace_id=? "
                                      "AND kind='time_rounded' AND detail LIKE 'ts: %.1234567 has more "
                                      "than 6 decimals%'", tid), [(N_ROUNDED + 1,)])
        self.assertEqual(self.rows_of("SELECT detail FROM profsum_diagnostic WHERE trace_id=? "
                                      "AND kind='more_diagnostics'", tid),
                         [("2 more diagnostics for this entry not listed",)])

    def test_same_rows_as_the_file_listing(self):
        tid = self.db.execute("SELECT profsum_import(?, 'q', '{\"store_diagnostics\": \"all\"}')",
                              (self.path,)).fetchone()[0]
        stored = self.rows_of("SELECT idx, kind, detail FROM profsum_diagnostic WHERE trace_id=? "
                              "AND kind!='suppressed' AND kind!='reference_rejects' "
                              "ORDER BY idx, kind, detail", tid)
        listed = self.rows_of("SELECT idx, kind, detail FROM profsum_diagnostics(?) "
                              "ORDER BY idx, kind, detail", self.path)
        self.assertEqual(len(listed), N_ROUNDED + 2 + 7)
        self.assertEqual(stored, listed)


if __name__ == "__main__":
    unittest.main()
