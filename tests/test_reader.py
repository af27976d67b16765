"""trace_events / profsum_diagnostics: the reader, the SQL contract of
DESIGN.md ("The SQL contract") and the error messages."""
import gzip
import json
import os
import sqlite3
import unittest

from util import connect, run_as_unprivileged, TempDir, ROOT, DbTestCase

# A small JAX-like trace: TPU device with Steps and XLA Ops, a host.
F1_EVENTS = [
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
    {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}},
    {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
    {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 0, "dur": 100},
    {"ph": "X", "pid": 1, "tid": 2, "name": "all-reduce.1", "ts": 20, "dur": 40},
    {"ph": "X", "pid": 1, "tid": 2, "name": "softmax", "ts": 120, "dur": 60},
    {"ph": "X", "pid": 2, "tid": 1, "name": "python_host_compute", "ts": 0, "dur": 80},
]


def q(db, sql, *args):
    return db.execute(sql, args).fetchall()


class Basics(DbTestCase):
    def trace(self, events, name="t.json.gz", gz=True, **top):
        doc = dict(top)
        doc["traceEvents"] = events
        return self.td.write(name, json.dumps(doc), gz=gz)

    def test_version_and_debug(self):
        ver = open(os.path.join(ROOT, "VERSION")).read().strip()
        self.assertEqual(q(self.db, "SELECT profsum_version()")[0][0], ver)
        dbg = q(self.db, "SELECT profsum_debug()")[0][0]
        self.assertIn("profsum: " + ver, dbg)
        self.assertIn("zlib (runtime): ", dbg)
        self.assertIn("sqlite (runtime): " + sqlite3.sqlite_version, dbg)

    def test_rows_and_columns(self):
        p = self.trace(F1_EVENTS)
        rows = q(self.db, "SELECT idx, ph, name, pid, tid, ts, dur, dur_ps, process_name, thread_name "
                          "FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(len(rows), 7)
        self.assertEqual(rows[0], (0, "M", "process_name", 1, None, None, None, None, "/device:TPU:0", None))
        self.assertEqual(rows[3], (3, "X", "fusion.1", 1, 2, 0, 100000, 100000000, "/device:TPU:0", "XLA Ops"))
        self.assertEqual(rows[6][8:], (None, None))   # pid 2 has no process_name

    def test_count_plain_and_gzip_by_magic(self):
        plain = self.trace(F1_EVENTS, name="plain.json.gz", gz=False)   # name lies: plain JSON
        gzd = self.trace(F1_EVENTS, name="gz.json", gz=True)            # name lies: gzip
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", plain)[0][0], 7)
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", gzd)[0][0], 7)

    def test_multi_member_gzip(self):
        text = json.dumps({"traceEvents": F1_EVENTS}).encode()
        half = len(text) // 2
        data = gzip.compress(text[:half]) + gzip.compress(text[half:]) + b"\0" * 16
        p = self.td.write("mm.json.gz", data)
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", p)[0][0], 7)

    def test_bare_array_and_key_order(self):
        p = self.td.write("a.json", json.dumps(F1_EVENTS))
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", p)[0][0], 7)
        text = ('{"metadata":{"highres-ticks":true,"x":[1,2,{"y":null}]},"zzz":"q",'
                '"traceEvents":%s,"displayTimeUnit":"ms","otherData":{}}' % json.dumps(F1_EVENTS))
        p2 = self.td.write("b.json", text)
        self.assertEqual(q(self.db, "SELECT sum(dur) FROM trace_events(?)", p2)[0][0], 280000)

    def test_display_time_unit_not_applied(self):
        p = self.trace(F1_EVENTS, displayTimeUnit="ms")
        self.assertEqual(q(self.db, "SELECT dur FROM trace_events(?) WHERE name='fusion.1'", p)[0][0], 100000)

    def test_exact_times(self):
        ev = [
            {"ph": "X", "pid": 1, "tid": 1, "name": "a", "ts": 1.000001, "dur": 22.140000000000001},
            {"ph": "X", "pid": 1, "tid": 1, "name": "b", "ts": "100", "dur": "0.5"},
            {"ph": "X", "pid": 1, "tid": 1, "name": "c", "ts": 1.5e3, "dur": 2.5E-6},
            {"ph": "X", "pid": 1, "tid": 1, "name": "d", "ts": 1729877000123456.789012, "dur": 0.000001},
            {"ph": "X", "pid": 1, "tid": 1, "name": "e", "ts": -0.0005, "dur": 0.0000015},
        ]
        # json.dumps would reformat floats: write the text by hand.
        text = ('{"traceEvents":['
                '{"ph":"X","pid":1,"tid":1,"name":"a","ts":1.000001,"dur":22.140000000000001},'
                '{"ph":"X","pid":1,"tid":1,"name":"b","ts":"100","dur":"0.5"},'
                '{"ph":"X","pid":1,"tid":1,"name":"c","ts":1.5e3,"dur":2.5E-6},'
                '{"ph":"X","pid":1,"tid":1,"name":"d","ts":1729877000123456.789012,"dur":0.000001},'
                '{"ph":"X","pid":1,"tid":1,"name":"e","ts":-0.0005,"dur":0.0000015}]}')
        self.assertEqual(len(ev), 5)
        p = self.td.write("t.json", text)
        rows = dict((r[0], r[1:]) for r in q(self.db, "SELECT name, ts, dur, dur_ps FROM trace_events(?)", p))
        self.assertEqual(rows["a"], (1000, 22140, 22140000))   # 1000.001 ns → 1000
        self.assertEqual(rows["b"], (100000, 500, 500000))
        self.assertEqual(rows["c"], (1500000, 0, 2))        # 2.5 ps → 2 (half-even)
        self.assertEqual(rows["d"], (1729877000123456789, 0, 1))
        self.assertEqual(rows["e"], (-1, 0, 2))             # -500 ps → floor → -1 ns; 1.5 ps → 2
        kinds = [r[0] for r in q(self.db, "SELECT kind FROM profsum_diagnostics(?)", p)]
        self.assertEqual(kinds.count("time_rounded"), 3)    # a.dur, c.dur, e.dur

    def test_times_match_exact_decimal_rounding(self):
        """dur_ps is the decimal value × 10^6 rounded half to even, for the
        shapes the fast path reads (up to 12 integer digits, any fraction)
        and those it leaves to the general code (13 digits, exponents, '+',
        "5."), ties included; every inexact one has a time_rounded row."""
        import decimal
        import random
        rnd = random.Random(11)
        vals = ["0", "0.0", "5.", "+1.25", "1e3", "2.5E-6", "0.0000005", "0.0000015", "0.0000025",
                "0.00000050", "0.000000500000001", "999999999999.9999995", "1234567890123.5",
                "0000012.5000005", "7.0000000", "3.1415926535897932384626433832795028841971"]
        for _ in range(3000):
            ni = rnd.randint(1, 13)
            nf = rnd.choice([0, 1, 3, 6, 7, 8, 12, 17])
            s = str(rnd.randint(1, 9)) + "".join(rnd.choice("0123456789") for _ in range(ni - 1))
            if nf:
                frac = [rnd.choice("0123456789") for _ in range(nf)]
                if nf >= 7 and rnd.random() < 0.3:     # a tie at the 7th digit
                    frac[6] = "5"
                    frac[7:] = ["0"] * (nf - 7)
                s += "." + "".join(frac)
            vals.append(s)
        import re
        number = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$")
        text = "[" + ",".join('{"ph":"X","pid":1,"tid":1,"name":"n%d","ts":0,"dur":%s}'
                              % (i, v if number.match(v) else '"%s"' % v)   # strings: same parser
                              for i, v in enumerate(vals)) + "]"
        p = self.td.write("times.json", text)
        got = q(self.db, "SELECT dur_ps FROM trace_events(?) ORDER BY idx", p)
        want, inexact = [], 0
        for v in vals:
            d = decimal.Decimal(v) * 1000000
            r = int(d.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
            inexact += (d != r)        # a time_rounded each (beyond the range too)
            if r >= 2 ** 63:           # beyond 64-bit picoseconds: NULL (a diagnostic says so)
                want.append((None,))
                continue
            want.append((r,))
        self.assertEqual(got, want)
        nround = q(self.db, "SELECT count(*) FROM profsum_diagnostics(?) WHERE kind='time_rounded'", p)[0][0]
        self.assertGreater(inexact, 1000)
        self.assertEqual(nround, inexact)  # every one listed (no cap per kind)

    def test_bad_time_fields_are_null_with_diagnostic(self):
        text = ('[{"ph":"X","pid":10,"tid":16,"ts":"100a","dur":"50","name":"T"},'
                '{"ph":"X","pid":10,"tid":17,"ts":"200","dur":"invalid","name":"D"},'
                '{"ph":"X","pid":10,"tid":18,"ts":"NaN","dur":"Infinity","name":"N"}]')
        p = self.td.write("t.json", text)
        rows = q(self.db, "SELECT name, ts, dur FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(rows, [("T", None, 50000), ("D", 200000, None), ("N", None, None)])
        d = q(self.db, "SELECT idx, kind, detail FROM profsum_diagnostics(?) WHERE kind='bad_field'", p)
        self.assertEqual(d[0], (0, "bad_field", 'ts: "100a" is not a number'))
        self.assertEqual(len(d), 4)

    def test_pid_tid_kinds(self):
        text = ('[{"ph":"X","pid":"1000","tid":"7","name":"a","ts":0,"dur":1},'
                '{"ph":"X","pid":"Spans","tid":"PyTorch Profiler","name":"b","ts":0,"dur":1},'
                '{"ph":"X","pid":3.0,"tid":1e1,"name":"c","ts":0,"dur":1},'
                '{"ph":"X","pid":2.5,"tid":null,"name":"d","ts":0,"dur":1}]')
        p = self.td.write("t.json", text)
        rows = q(self.db, "SELECT pid, typeof(pid), tid, typeof(tid) FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(rows, [(1000, "integer", 7, "integer"),
                                ("Spans", "text", "PyTorch Profiler", "text"),
                                (3, "integer", 10, "integer"),
                                (None, "null", None, "null")])

    def test_strings_and_escapes(self):
        text = ('[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,'
                '"name":"caf\\u00e9 \\ud83d\\ude00 \\ud800x \\"q\\" \\\\ \\/ \\n\\t",'
                '"cat":"c\x01d"}]')
        p = self.td.write("t.json", text)
        name, cat = q(self.db, "SELECT name, cat FROM trace_events(?)", p)[0]
        self.assertEqual(name, "caf\u00e9 \U0001F600 \ufffdx \"q\" \\ / \n\t")
        self.assertEqual(cat, "c\x01d")
        kinds = [r[0] for r in q(self.db, "SELECT kind FROM profsum_diagnostics(?)", p)]
        self.assertIn("control_character", kinds)

    def test_string_special_bytes_at_every_offset(self):
        """The string scanner skips plain bytes 16 at a time (SSE2): a quote,
        backslash or control byte at any offset of a 16-byte block, and
        strings of every length around 16 and 32, must end and decode right."""
        specials = ['\\"', "\\\\", "\\n", "\\u00e9", "\x01", "\x1f", "\u00e9", " ", "\x7f"]
        entries, want = [], []
        for n in range(0, 40):
            for sp in specials:
                raw = "a" * n + sp + "b" * ((37 * n) % 23)
                entries.append('{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"%s","cat":"%s"}'
                               % (len(entries), raw, "c" * n))
                want.append((json.loads('"%s"' % raw.replace("\x01", "\\u0001").replace("\x1f", "\\u001f")),
                             "c" * n))
        p = self.td.write("s.json", "[" + ",".join(entries) + "]")
        got = q(self.db, "SELECT name, cat FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(len(got), len(want))
        self.assertEqual(got, want)
        ctrl = q(self.db, "SELECT count(*) FROM profsum_diagnostics(?) WHERE kind='control_character'", p)[0][0]
        self.assertEqual(ctrl, 2 * 40)

    def test_duplicate_keys_last_wins(self):
        p = self.td.write("t.json", '[{"ph":"B","name":"x","ph":"X","pid":1,"tid":1,"ts":5,"ts":7,"dur":1,"name":"y"}]')
        self.assertEqual(q(self.db, "SELECT ph, name, ts FROM trace_events(?)", p), [("X", "y", 7000)])

    def test_duplicate_args_last_wins(self):
        # Found by the fuzzer: the known keys of an earlier "args" must not survive.
        p = self.td.write("t.json", '[{"ph":"X","name":"n","ts":1,"dur":1,"pid":1,"tid":1,'
                                    '"args":{"tf_op":"a","run_id":"1"},"args":"b"},'
                                    '{"ph":"X","name":"m","ts":1,"dur":1,"pid":1,"tid":1,'
                                    '"args":{"tf_op":"a"},"args":{"source":"s.py"}}]')
        self.assertEqual(q(self.db, "SELECT tf_op, run_id, source, args FROM trace_events(?) ORDER BY idx", p),
                         [(None, None, None, '"b"'), (None, None, "s.py", '{"source":"s.py"}')])

    def test_args_always_valid_json(self):
        text = ('{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"name":"a",'
                '"args":{"s":"x\ty","n":NaN,"i":-Infinity,"l":[1,2,],"o":{"k":1,},}},'
                '{"ph":"i","pid":1,"tid":1,"ts":1,"name":"b"},'
                '{"ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"name":"c","args":{"flops":"123456",'
                '"tf_op":"jit(f)/dot","long_name":"%dot.1 = f32[8,8] dot()","step_num":"3",'
                '"bytes_accessed":99,"correlation_id":"18446744073709551615","group_id":1.5,'
                '"run_id":7,"hlo_op":"dot.1","hlo_module":"jit_f","hlo_category":"convolution",'
                '"source":"a.py:3"}}]}')
        p = self.td.write("t.json", text)
        rows = q(self.db, "SELECT args, json_valid(args) FROM trace_events(?) ORDER BY idx", p)
        self.assertTrue(all(r[1] == 1 for r in rows))
        a0 = json.loads(rows[0][0])
        self.assertEqual(a0, {"s": "x\ty", "n": "NaN", "i": "-Infinity", "l": [1, 2], "o": {"k": 1}})
        self.assertEqual(rows[1][0], "{}")
        k = q(self.db, "SELECT tf_op, hlo_op, hlo_module, hlo_category, long_name, source, run_id, "
                       "step_num, flops, bytes_accessed, correlation_id, group_id FROM trace_events(?) "
                       "WHERE name='c'", p)[0]
        self.assertEqual(k, ("jit(f)/dot", "dot.1", "jit_f", "convolution", "%dot.1 = f32[8,8] dot()",
                             "a.py:3", "7", 3, 123456, 99, "18446744073709551615", 1.5))

    def test_compact_counter_entries(self):
        text = ('{"traceEvents":[{"ph":"C","pid":1,"name":"mem","args":{"u":"x"},'
                '"entries":[[0,1,2],[10,3,4]]},{"ph":"C","pid":1,"name":"m2","entries":[[1,2]]}]}')
        p = self.td.write("t.json", text)
        rows = q(self.db, "SELECT args FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(len(rows), 2)
        self.assertEqual(json.loads(rows[0][0]), {"u": "x", "entries": [[0, 1, 2], [10, 3, 4]]})
        self.assertEqual(json.loads(rows[1][0]), {"entries": [[1, 2]]})

    def test_names_from_late_metadata(self):
        ev = [{"ph": "X", "pid": 5, "tid": 9, "name": "op", "ts": 0, "dur": 1},
              {"ph": "M", "pid": 5, "name": "process_name", "args": {"name": "early"}},
              {"ph": "M", "pid": 5, "name": "process_name", "args": {"name": "/host:CPU"}},
              {"ph": "M", "pid": 5, "tid": 9, "name": "thread_name", "args": {"name": "python"}}]
        p = self.trace(ev)
        self.assertEqual(q(self.db, "SELECT process_name, thread_name FROM trace_events(?) WHERE ph='X'", p),
                         [("/host:CPU", "python")])

    def test_every_phase_is_a_row(self):
        phs = ["X", "B", "E", "i", "I", "C", "M", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D", "R", "zz"]
        ev = [{"ph": ph, "pid": 1, "tid": 1, "ts": 1, "name": "e%d" % i} for i, ph in enumerate(phs)]
        ev += [{}, 5, "x", {"name": "no ph"}, {"ph": 3}]
        p = self.trace(ev)
        got = [r[0] for r in q(self.db, "SELECT ph FROM trace_events(?) ORDER BY idx", p)]
        self.assertEqual(got, phs)
        d = q(self.db, "SELECT idx, kind FROM profsum_diagnostics(?) WHERE kind IN "
                       "('no_ph','not_an_object','ph_not_string','unknown_ph')", p)
        self.assertEqual(d, [(18, "unknown_ph"), (19, "no_ph"), (20, "not_an_object"),
                             (21, "not_an_object"), (22, "no_ph"), (23, "ph_not_string")])

    def test_b_e_pairing(self):
        ev = [{"ph": "B", "pid": 1, "tid": 1, "ts": 10, "name": "outer"},
              {"ph": "E", "pid": 1, "tid": 1, "ts": 50},          # out of order in the file
              {"ph": "B", "pid": 1, "tid": 1, "ts": 20, "name": "inner"},
              {"ph": "E", "pid": 1, "tid": 1, "ts": 30, "name": "inner"},
              {"ph": "B", "pid": 1, "tid": 2, "ts": 0, "name": "open"},
              {"ph": "E", "pid": 1, "tid": 3, "ts": 5, "name": "orphan"},
              {"ph": "B", "pid": 1, "tid": 4, "ts": 0, "name": "a"},
              {"ph": "E", "pid": 1, "tid": 4, "ts": 1, "name": "b"}]
        p = self.trace(ev)
        rows = q(self.db, "SELECT idx, dur, dur_ps, depth, parent_idx, excl FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(rows, [(0, 40000, 40000000, 0, None, 30000),
                                (1, None, None, None, None, None),
                                (2, 10000, 10000000, 1, 0, 10000),
                                (3, None, None, None, None, None),
                                (4, None, None, None, None, None),
                                (5, None, None, None, None, None),
                                (6, 1000, 1000000, 0, None, 1000),
                                (7, None, None, None, None, None)])
        d = q(self.db, "SELECT idx, kind FROM profsum_diagnostics(?) WHERE kind LIKE 'un%' OR kind LIKE 'mis%'", p)
        self.assertEqual(sorted(d), [(4, "unmatched_begin"), (5, "unmatched_end"), (7, "mismatched_end")])

    def test_track_columns_spec_section2(self):
        # Unsorted input, identical duplicates, partial overlap, clamping.
        ev = [{"ph": "X", "pid": 1, "tid": 2, "name": "all-reduce.1", "ts": 20, "dur": 40},   # 0
              {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 0, "dur": 100},       # 1
              {"ph": "X", "pid": 1, "tid": 3, "name": "dup1", "ts": 0, "dur": 10},            # 2
              {"ph": "X", "pid": 1, "tid": 3, "name": "dup2", "ts": 0, "dur": 10},            # 3
              {"ph": "X", "pid": 1, "tid": 4, "name": "p", "ts": 0, "dur": 10},               # 4
              {"ph": "X", "pid": 1, "tid": 4, "name": "q", "ts": 5, "dur": 10},               # 5 partial
              {"ph": "X", "pid": 1, "tid": 5, "name": "par", "ts": 0, "dur": 10},             # 6
              {"ph": "X", "pid": 1, "tid": 5, "name": "k1", "ts": 0, "dur": 8},               # 7
              {"ph": "X", "pid": 1, "tid": 5, "name": "k2", "ts": 2, "dur": 8},               # 8 sibling overlap
              {"ph": "X", "pid": 1, "tid": 6, "name": "zero", "ts": 0, "dur": 0},             # 9
              {"ph": "X", "pid": "Spans", "tid": 1, "name": "text pid", "ts": 0, "dur": 5}]   # 10
        p = self.trace(ev)
        rows = q(self.db, "SELECT idx, depth, parent_idx, excl, excl_ps FROM trace_events(?) ORDER BY idx", p)
        self.assertEqual(rows, [(0, 1, 1, 40000, 40000000), (1, 0, None, 60000, 60000000),
                                (2, 0, None, 0, 0), (3, 1, 2, 10000, 10000000),
                                (4, 0, None, 10000, 10000000), (5, 0, None, 10000, 10000000),
                                (6, 0, None, 0, 0), (7, 1, 6, 8000, 8000000),   # 8+8 > 10: clamped
                                (8, 1, 6, 8000, 8000000),
                                (9, None, None, None, None), (10, None, None, None, None)])
        d = q(self.db, "SELECT idx, kind FROM profsum_diagnostics(?) WHERE kind IN "
                       "('partial_overlap','zero_duration')", p)
        self.assertEqual(d, [(5, "partial_overlap"), (8, "partial_overlap"), (9, "zero_duration")])

    def test_exclusive_time_equals_excl(self):
        # Picosecond-precision times, sub-ns slices, B/E slices, nesting and
        # overlaps: exclusive_time(ts, dur) over the rows equals excl.
        import random
        rnd = random.Random(3)
        parts = []
        for t in range(3):
            for i in range(300):
                ts = rnd.randrange(0, 10**9) / 10**6
                dur = rnd.choice([0.000001, 0.0005, rnd.randrange(1, 10**7) / 10**6])
                parts.append('{"ph":"X","pid":1,"tid":%d,"name":"e","ts":%.6f,"dur":%.6f}' % (t, ts, dur))
            parts.append('{"ph":"B","pid":1,"tid":%d,"name":"b","ts":1.0000005}' % t)
            parts.append('{"ph":"E","pid":1,"tid":%d,"ts":900.0000015}' % t)
        p = self.td.write("ps.json", "[" + ",".join(parts) + "]")
        n, agree, sub = q(self.db, "SELECT count(*), sum(e = excl), sum(dur = 0) FROM (SELECT excl, dur, "
                          "exclusive_time(ts, dur) OVER (PARTITION BY pid, tid ORDER BY idx ROWS BETWEEN "
                          "UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS e FROM trace_events(?) "
                          "WHERE excl IS NOT NULL)", p)[0]
        self.assertEqual(n, 903)
        self.assertEqual(agree, n)
        self.assertGreater(sub, 0)
        # excl_ps stays exact: the parent B slice loses the exact children.
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?) WHERE excl_ps < 0", p)[0][0], 0)

    def test_create_virtual_table_form(self):
        p = self.trace(F1_EVENTS)
        self.db.execute("CREATE VIRTUAL TABLE temp.t USING trace_events('%s')" % p.replace("'", "''"))
        self.assertEqual(q(self.db, "SELECT count(*), sum(excl) FROM temp.t")[0], (7, 240000))

    def test_directonly(self):
        p = self.trace(F1_EVENTS)
        self.db.execute("CREATE VIEW v AS SELECT count(*) FROM trace_events('%s')" % p)
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT * FROM v").fetchall()
        self.assertIn("unsafe use of virtual table", str(cm.exception))
        self.db.execute("CREATE TEMP VIEW tv AS SELECT count(*) FROM trace_events('%s')" % p)
        self.assertEqual(q(self.db, "SELECT * FROM tv")[0][0], 7)

    def test_null_path_no_rows_and_missing_path_error(self):
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(NULL)")[0][0], 0)
        with self.assertRaises(sqlite3.OperationalError) as cm:
            q(self.db, "SELECT count(*) FROM trace_events")
        self.assertEqual(str(cm.exception), "trace_events: missing required argument PATH")

    def test_plan_streams_when_possible(self):
        p = self.trace(F1_EVENTS)
        def plan(sql):
            return " ".join(r[3] for r in q(self.db, "EXPLAIN QUERY PLAN " + sql, p))
        self.assertIn("INDEX 1:", plan("SELECT count(*) FROM trace_events(?)"))
        self.assertIn("INDEX 1:", plan("SELECT name, ts FROM trace_events(?)"))
        self.assertIn("INDEX 65:", plan("SELECT name, ts, args FROM trace_events(?)"))
        self.assertIn("INDEX 3:", plan("SELECT dur FROM trace_events(?)"))
        self.assertIn("INDEX 7:", plan("SELECT excl_ps FROM trace_events(?)"))
        self.assertIn("INDEX 39:", plan("SELECT excl FROM trace_events(?)"))
        self.assertIn("INDEX 9:", plan("SELECT thread_name FROM trace_events(?)"))
        self.assertIn("INDEX 17:", plan("SELECT tf_op FROM trace_events(?)"))


class Tolerated(DbTestCase):
    def check(self, text, n, kinds):
        p = self.td.write("t.json", text)
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", p)[0][0], n)
        got = set(r[0] for r in q(self.db, "SELECT kind FROM profsum_diagnostics(?)", p))
        for k in kinds:
            self.assertIn(k, got)

    def test_trailing_commas(self):
        self.check('{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a",},],}', 1,
                   ["trailing_comma"])

    def test_missing_close(self):
        self.check('[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a"},\n', 1, ["unterminated_array"])
        self.check('{"traceEvents":[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a"}]', 1,
                   ["unterminated_object"])

    def test_truncated_last_entry(self):
        self.check('[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a"},{"ph":"X","na', 1,
                   ["truncated_entry", "unterminated_array"])

    def test_long_string_and_deep_nesting(self):
        long_name = "%fusion.1 = f32[8,8] " + "x" * 3000000
        deep = "[" * 20000 + "]" * 20000
        text = ('[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a","args":{"long_name":"%s","d":%s}}]'
                % (long_name, deep))
        p = self.td.write("t.json.gz", text, gz=True)
        r = q(self.db, "SELECT length(long_name), length(args) FROM trace_events(?)", p)[0]
        self.assertEqual(r[0], len(long_name))
        self.assertEqual(r[1], len(text) - len('[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a","args":') - 2)

    def test_every_diagnostic_listed(self):
        ev = ",".join('{"ph":"X","pid":1,"tid":1,"name":"z","ts":%d,"dur":0}' % i for i in range(1500))
        p = self.td.write("t.json", "[" + ev + "]")
        rows = q(self.db, "SELECT kind, count(*), count(DISTINCT idx), sum(detail = '') "
                          "FROM profsum_diagnostics(?) GROUP BY kind", p)
        # all 1500, each with its detail; no 'suppressed' row (nothing is)
        self.assertEqual(rows, [("zero_duration", 1500, 1500, 0)])

    def test_suspected_truncation(self):
        one = b'{"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":1},'
        data = b"[" + one * 999999 + one[:-1] + b"]"
        p = self.td.write("cap.json.gz", gzip.compress(data, 1))
        rows = q(self.db, "SELECT kind FROM profsum_diagnostics(?) WHERE kind='suspected_truncation'", p)
        self.assertEqual(len(rows), 1)
        self.assertEqual(q(self.db, "SELECT count(*) FROM trace_events(?)", p)[0][0], 1000000)


class Errors(DbTestCase):
    def err(self, path, func="trace_events"):
        with self.assertRaises(sqlite3.Error) as cm:
            q(self.db, "SELECT count(*) FROM %s(?)" % func, path)
        return str(cm.exception)

    def test_missing_file(self):
        p = os.path.join(self.td.path, "nope.json")
        self.assertEqual(self.err(p), "trace_events: '%s': cannot open (No such file or directory)" % p)
        self.assertEqual(self.err(p, "profsum_diagnostics"),
                         "profsum_diagnostics: '%s': cannot open (No such file or directory)" % p)

    def test_directory(self):
        self.assertEqual(self.err(self.td.path), "trace_events: '%s': is a directory, not a trace file "
                         "(profsum_find_traces('%s') lists the traces under it)" % (self.td.path, self.td.path))

    def test_empty(self):
        p = self.td.write("e.json", b"")
        self.assertEqual(self.err(p), "trace_events: '%s': empty file" % p)

    def test_not_json(self):
        p = self.td.write("x.bin", b"PK\x03\x04garbage")
        self.assertEqual(self.err(p), "trace_events: '%s': neither gzip nor JSON: expected '{' or '[' "
                                      "at byte 0, found 0x50" % p)
        p2 = self.td.write("s.json", b'  "just a string"')
        self.assertIn("neither gzip nor JSON", self.err(p2))
        # a gzip file whose content is not JSON: it is gzip, so not "neither"
        p4 = self.td.write("hello.gz", gzip.compress(b"hello world\n"))
        self.assertEqual(self.err(p4), "trace_events: '%s': gzip, but its content is not JSON: "
                                       "expected '{' or '[' at byte 0 of the decompressed data, "
                                       "found 0x68" % p4)
        # a damaged XPlane protobuf (read as XPlane by its name): the
        # decoder's error, with its byte offset
        p3 = self.td.write("host.xplane.pb", b"\xc7\x01\x0a\x05plane")
        self.assertTrue(self.err(p3).startswith("trace_events: '%s': byte 0: " % p3), self.err(p3))

    def test_corrupt_gzip(self):
        good = gzip.compress(json.dumps({"traceEvents": F1_EVENTS}).encode())
        bad = bytearray(good)
        for i in range(20, 40):
            bad[i] ^= 0x5A
        p = self.td.write("c.json.gz", bytes(bad))
        m = self.err(p)
        self.assertTrue(m.startswith("trace_events: '%s': gzip data error at byte " % p), m)

    def test_truncated_gzip(self):
        good = gzip.compress(json.dumps({"traceEvents": F1_EVENTS}).encode())
        p = self.td.write("t.json.gz", good[:len(good) // 2])
        self.assertEqual(self.err(p), "trace_events: '%s': truncated gzip data at byte %d "
                         "(the compressed stream ends before its end marker: the file is cut off, e.g. "
                         "copied while the profiler was still writing it; copy it again once the capture "
                         "is complete)" % (p, len(good) // 2))

    def test_syntax_error(self):
        p = self.td.write("s.json", '{"traceEvents":[{"ph":"X"},{"ph" "X"}]}')
        self.assertEqual(self.err(p), "trace_events: '%s': JSON syntax error at byte 33 (entry 1): "
                                      "expected ':' after a key" % p)

    def test_wrong_types(self):
        p = self.td.write("w.json", '{"traceEvents":{"a":1}}')
        self.assertEqual(self.err(p), "trace_events: '%s': wrong type at byte 15: traceEvents must be an array" % p)

    def test_trailing_data(self):
        p = self.td.write("w.json", '{"traceEvents":[]} {"x":1}')
        self.assertEqual(self.err(p), "trace_events: '%s': unexpected data after the end of the JSON "
                                      "document at byte 19" % p)

    def test_permission_denied(self):
        p = self.td.write("p.json", "[]")
        os.chmod(p, 0)
        want = "trace_events: '%s': cannot open (Permission denied)" % p
        if os.geteuid() == 0:
            # root opens any file: the query runs in a child that is not root
            os.chmod(self.td.path, 0o755)
            self.assertEqual(run_as_unprivileged(self, "SELECT count(*) FROM trace_events(?)", (p,)),
                             ("error", want))
            x = self.td.write("p.xplane.pb", b"")
            os.chmod(x, 0)
            self.assertEqual(run_as_unprivileged(self, "SELECT profsum_import(?)", (x,)),
                             ("error", "profsum_import: '%s': cannot open (Permission denied)" % x))
        else:
            self.assertEqual(self.err(p), want)


if __name__ == "__main__":
    unittest.main()


class Threads(unittest.TestCase):
    """A large gzip file is inflated by a producer thread; the rows, the
    numbers and the SHA-256 are the same as without it."""

    def test_same_results_with_and_without_thread(self):
        import hashlib
        import subprocess
        import sys
        with TempDir() as td:
            path = os.path.join(td.path, "big.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "24M",
                            "--shape", "tpu", "--devices", "2", "--out", path], check=True,
                           stdout=subprocess.DEVNULL)
            self.assertGreater(os.path.getsize(path), 2 * 1024 * 1024)
            results = []
            for threads in ("1", "0"):
                os.environ["PROFSUM_THREADS"] = threads
                try:
                    db = connect(os.path.join(td.path, "t%s.db" % threads))
                    r = db.execute("SELECT count(*), sum(dur_ps), sum(excl_ps), sum(excl), max(idx) "
                                   "FROM trace_events(?)", (path,)).fetchone()
                    db.execute("SELECT profsum_import(?, 'big')", (path,))
                    sha, size = db.execute("SELECT sha256, size FROM profsum_trace").fetchone()
                    doc = db.execute("SELECT profsum_summary_json('big')").fetchone()[0]
                    db.close()
                finally:
                    del os.environ["PROFSUM_THREADS"]
                results.append((r, sha, size, json.loads(doc)["time_breakdown"]))
            self.assertEqual(results[0], results[1])
            data = open(path, "rb").read()
            self.assertEqual(results[0][1], hashlib.sha256(data).hexdigest())
            self.assertEqual(results[0][2], len(data))

    def test_entries_longer_than_window_and_ring_slots(self):
        """The reader's window starts at 256 KiB and a ring slot holds 32 to
        256 KiB (1/32 of the gzip file): entries of 300 KiB to 1.1 MiB, each
        spanning several slots and more than the window, read the same with
        and without the producer thread, gzipped and plain."""
        import random
        rnd = random.Random(7)
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        evs = []
        lens = []
        for i in range(40):
            # mostly small events; every eighth carries a long, poorly
            # compressible long_name, so the gzip file passes the thread's
            # 128 KiB threshold and its slots are small
            n = rnd.choice((300 * 1024, 700 * 1024, 1100 * 1024)) if i % 8 == 3 else 20
            lens.append(n)
            name = "".join(rnd.choice(alphabet) for _ in range(n))
            evs.append('{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"op%d","args":{"long_name":"%s"}}'
                       % (i * 2, i, name))
        text = '{"traceEvents":[' + ",".join(evs) + "]}"
        with TempDir() as td:
            plain = td.write("long.json", text)
            gz = os.path.join(td.path, "long.json.gz")
            with gzip.open(gz, "wb", compresslevel=1) as fh:
                fh.write(text.encode())
            size = os.path.getsize(gz)                              # about 2.8 MB
            self.assertGreaterEqual(size, 128 * 1024)               # threaded
            slot = max(32 * 1024, min(256 * 1024, (size // 32 + 16383) // 16384 * 16384))
            self.assertLess(slot, 256 * 1024)                       # slots of 96 KiB: the long
                                                                    # entries span several
            results = []
            for path in (plain, gz):
                for threads in ("1", "0"):
                    os.environ["PROFSUM_THREADS"] = threads
                    try:
                        db = connect()
                        rows = db.execute("SELECT idx, name, length(long_name), substr(long_name, -5) "
                                          "FROM trace_events(?) ORDER BY idx", (path,)).fetchall()
                        db.close()
                    finally:
                        del os.environ["PROFSUM_THREADS"]
                    results.append(rows)
            self.assertEqual([r[2] for r in results[0]], lens)
            self.assertEqual([r[1] for r in results[0]], ["op%d" % i for i in range(40)])
            for r in results[1:]:
                self.assertEqual(r, results[0])

    @unittest.skipIf(os.environ.get("LD_PRELOAD"), "another preload (ASan) intercepts pthread_create first")
    def test_import_starts_one_producer_thread(self):
        """The import first sniffs the file (is it a profile_summary.v1?):
        that reads 64 KiB and must not start a producer thread inflating a
        ring of megabytes ahead; only the parse does.  A first import also
        parses in a thread of its own while it creates the schema (two
        threads); a later one parses in the calling thread (one).  Each
        import's write phase then walks the devices' KPIs, measures the
        global breakdown's unions and covers the steps' wall time on one
        worker thread beside the aggregation, not a thread each (this trace
        has enough events for them).  Counted with a pthread_create shim
        preloaded into a child process."""
        import shutil
        import subprocess
        import sys
        from util import SO
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler")
        with TempDir() as td:
            shim = os.path.join(td.path, "count.c")
            with open(shim, "w") as f:
                f.write(
                    "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <pthread.h>\n"
                    "#include <stdio.h>\n#include <stdlib.h>\n"
                    "static int n;\n"
                    "int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void*), void *x){\n"
                    "  int (*real)(pthread_t*, const pthread_attr_t*, void *(*)(void*), void*) =\n"
                    "    (int (*)(pthread_t*, const pthread_attr_t*, void *(*)(void*), void*))dlsym(RTLD_NEXT, \"pthread_create\");\n"
                    "  const char *z = getenv(\"COUNT_OUT\"); FILE *o = z ? fopen(z, \"w\") : 0;\n"
                    "  n++; if( o ){ fprintf(o, \"%d\", n); fclose(o); }\n"
                    "  return real(t, a, f, x);\n}\n")
            lib = os.path.join(td.path, "count.so")
            subprocess.run([cc, "-shared", "-fPIC", "-o", lib, shim, "-ldl"], check=True)
            path = os.path.join(td.path, "big.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "6M",
                            "--shape", "tpu", "--devices", "1", "--out", path], check=True,
                           stdout=subprocess.DEVNULL)
            self.assertGreater(os.path.getsize(path), 256 * 1024)   # threaded when parsed
            out = os.path.join(td.path, "count.txt")
            script = ("import os, sqlite3, sys\n"
                      "def count():\n"
                      "    p = os.environ['COUNT_OUT']\n"
                      "    return open(p).read() if os.path.exists(p) else '0'\n"
                      "db = sqlite3.connect(sys.argv[1]); db.enable_load_extension(True)\n"
                      "db.load_extension(sys.argv[2])\n"
                      "print(db.execute('SELECT profsum_import(?, \\'a\\')', (sys.argv[3],)).fetchone()[0], count())\n"
                      "print(db.execute('SELECT profsum_import(?, \\'b\\')', (sys.argv[3],)).fetchone()[0], count())\n")
            env = dict(os.environ, LD_PRELOAD=lib, COUNT_OUT=out)
            env.pop("PROFSUM_THREADS", None)
            r = subprocess.run([sys.executable, "-c", script, os.path.join(td.path, "t.db"), SO, path],
                               env=env, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            # trace id, threads created so far: parse thread, producer and
            # the write phase's worker, then one producer and the worker
            self.assertEqual(r.stdout.split("\n")[:2], ["1 3", "2 5"])

    def test_truncated_big_gzip_error_after_the_good_rows(self):
        import subprocess
        import sys
        with TempDir() as td:
            path = os.path.join(td.path, "big.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "24M",
                            "--shape", "tpu", "--out", path], check=True, stdout=subprocess.DEVNULL)
            data = open(path, "rb").read()
            cut = td.write("cut.json.gz", data[:len(data) * 3 // 4])
            db = connect()
            with self.assertRaises(sqlite3.Error) as cm:
                db.execute("SELECT count(*) FROM trace_events(?)", (cut,)).fetchone()
            self.assertIn("truncated gzip data at byte %d" % (len(data) * 3 // 4), str(cm.exception))

    def test_gzip_errors_same_rows_with_and_without_thread(self):
        # A file cut or damaged a little past the 128 KiB threshold of the
        # thread: the same rows, then the same error, with and without the
        # producer thread (the reader's error must not depend on how the
        # source splits its reads).
        import subprocess
        import sys
        with TempDir() as td:
            path = os.path.join(td.path, "big.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "4M",
                            "--shape", "tpu", "--out", path], check=True, stdout=subprocess.DEVNULL)
            with open(path, "rb") as fh:
                data = fh.read()
            self.assertGreater(len(data), 400 * 1024)
            files = []
            for n in (131072, 140000, 180000, 300000):
                files.append((td.write("cut%d.json.gz" % n, data[:n]), "truncated gzip data at byte %d" % n))
            bad = bytearray(data)
            for i in range(150000, 150040):
                bad[i] ^= 0x5A
            # (damaged deflate data may still decode, to bytes that are not
            # JSON: either error will do, the same one in both modes)
            files.append((td.write("bad.json.gz", bytes(bad)), "bad.json.gz': "))
            for f, msg in files:
                got = []
                for threads in ("1", "0"):
                    os.environ["PROFSUM_THREADS"] = threads
                    try:
                        db = connect()
                        rows = 0
                        with self.assertRaises(sqlite3.Error) as cm:
                            for _ in db.execute("SELECT idx FROM trace_events(?)", (f,)):
                                rows += 1
                        db.close()
                    finally:
                        del os.environ["PROFSUM_THREADS"]
                    self.assertIn(msg, str(cm.exception))
                    got.append((rows, str(cm.exception)))
                self.assertEqual(got[0], got[1], f)
