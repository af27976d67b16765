"""Traces of the PyTorch profiler's (Kineto's) layout: members written with a
space after ':' and ',', events indented over several lines, args with
nested arrays and objects and numbers of every form.  The scanner reads
them in runs that pass over that white space (the event's members, the
args members of the import) and skips args by a quick pass
(ext/reader/jsonskip.h) that leaves every odd form to the general code.
These tests build such traces and check known values, that every form
that ends a run or the quick pass (an escape, a control character, NaN, a
trailing comma, deep nesting, white space before ':', bytes of 0x80 or
more, an entry cut by a window refill, a syntax error) is read as the
general code reads it, and that the index modes (AVX2/SSE2) and the
portable mode, which has neither the runs nor the quick pass, agree."""
import gzip
import json
import random
import re
import unittest

from util import assert_modes_agree, assert_one_error, connect, digest_child, run_child_json, TempDir

# Values of args: (JSON text, nothing else needed: the args column is the
# text as written).
ARG_VALUES = [
    '0', '7', '-3', '12345678901234', '1.5', '-0.25', '0.000001', '1e5', '2E-3',
    '-1.5e+10', '3.14159265358979', '"s"', '""', '"a b c"', 'true', 'false',
    'null', '[]', '[[], []]', '[[1, 77], [], [3, 224, 224]]', '["[1, 77]", "4", "", "False"]',
    '{}', '{"k": [1, {"x": "y"}]}', '[{"a": 1}, {"b": [true, null]}]',
]
# Forms the quick pass and the runs leave to the general code.
ODD_VALUES = [
    '"esc \\" quote"', '"back\\\\slash"', '"\\u0041\\/\\n\\t"', '"ctrl\x01char"',
    'NaN', '-Infinity', '[1, 2, ]', '{"a": 1, }', '[' * 70 + ']' * 70,
    '"caf\u00e9"',
]
# Known args keys (the import's columns), with values of the forms above.
KNOWN = ['"hlo_op": "fusion.%d"', '"tf_op": "jit(f)/op_%d"', '"flops": %d',
         '"group_id": %d', '"step_num": "%d"', '"correlation_id": %d',
         '"long_name": "%%fusion.%d = f32[8]"']


def args_text(rng, i, indent, odd):
    """The args object of entry i in Kineto's layout (indent: one member per
    line, indented, as Kineto writes it; else one line with ', ')."""
    parts = []
    for j in range(rng.randrange(0, 9)):
        r = rng.random()
        if odd and r < 0.12:
            v = rng.choice(ODD_VALUES)
        elif r < 0.3:
            t = rng.choice(KNOWN)
            parts.append(t % (i * 7 + j) if "%d" in t else t)
            continue
        else:
            v = rng.choice(ARG_VALUES)
        key = rng.choice(["Input dims", "External id", "Ev Idx", "Concrete Inputs",
                          "Record function id", "device", "grid", "k%d" % j])
        if odd and rng.random() < 0.04:
            key = "k\\u0041%d" % j                   # an escaped key
        parts.append('"%s": %s' % (key, v))
    if not parts:
        return "{}"
    if indent:
        return "{\n       " + ",\n       ".join(parts) + "\n    }"
    return "{" + ", ".join(parts) + "}"


def event_text(rng, i, indent, odd):
    """Entry i: (its JSON text, the values expected of its row)."""
    ts_us = 1610366387140000 + 37 * i
    frac = rng.choice(["", ".5", ".125", ".001"])
    dur = rng.choice(["14", "2.5", "0.291", "1195141.047", "0"])
    pid = rng.choice(["1", "118664", "416"])
    tid = rng.choice(['"1441273664"', "416", "7"])
    name = rng.choice(["aten::empty", "aten::to", "cudaLaunchKernel", "ProfilerStep#3"])
    cat = rng.choice(["Operator", "cpu_op", "kernel", "cuda_runtime"])
    members = ['"ph": "X"', '"cat": "%s"' % cat, '"name": "%s"' % name, '"pid": %s' % pid,
               '"tid": %s' % tid, '"ts": %d%s' % (ts_us, frac), '"dur": %s' % dur,
               '"args": %s' % args_text(rng, i, indent, odd)]
    if odd and rng.random() < 0.3:
        rng.shuffle(members)                       # members in any order
    if odd and rng.random() < 0.1:
        members.insert(rng.randrange(len(members)), rng.choice(
            ['"id": %d' % i, '"bp": "e"', '"s": "t"', '"k\\u0042": 1', '"cat2" : "x"',
             '"entries": [1, 2]', '"tts": 1.5e3']))
    if indent:
        text = "{\n    " + ", ".join(members[:2]) + ", \n    " + ", ".join(members[2:5]) \
               + ",\n    " + ", ".join(members[5:7]) + ",\n    " + ", ".join(members[7:]) + "\n  }"
    else:
        text = "{" + ", ".join(members) + "}"
    if odd and rng.random() < 0.05:
        text = text.replace(": ", " :\t", 1)      # white space before ':'
    if odd and rng.random() < 0.03:
        text = text.replace("\n", "\r\n")
    want = {"name": name, "cat": cat, "pid": int(pid), "tid": int(tid.strip('"')),
            "ts_ps": ts_us * 1000000 + int(round(float("0" + frac) * 1000000)),
            "dur_ps": int(round(float(dur) * 1000000))}
    return text, want


def trace_text(seed, n, indent, odd):
    rng = random.Random(seed)
    ents = [event_text(rng, i, indent, odd) for i in range(n)]
    sep = ",\n  " if indent else ", "
    head = '{\n  "schemaVersion": 1,\n  "traceEvents": [\n  ' if indent else '{"schemaVersion": 1, "traceEvents": ['
    text = head + sep.join(t for t, _ in ents) + ("\n]\n}" if indent else "]}")
    return text, [w for _, w in ents], [t for t, _ in ents]


CHILD = digest_child([
    ('scan4',
     'SELECT count(*), total(ts), sum(dur_ps), count(name) FROM trace_events(?)'),
    ('keys',
     'SELECT idx, tf_op, hlo_op, long_name, step_num, flops, correlation_id, group_id FROM trace_events(?)'),
])


class KinetoLayout(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        cls.files = {}
        cls.want = {}
        cls.ents = {}
        for tag, seed, n, indent, odd in (("indent", 3, 6000, True, False),
                                         ("line", 4, 6000, False, False),
                                         ("indent_odd", 5, 5000, True, True),
                                         ("line_odd", 6, 5000, False, True)):
            text, want, ents = trace_text(seed, n, indent, odd)
            cls.want[tag] = (text, want)
            cls.ents[tag] = ents
            cls.files[tag] = cls.td.write(tag + ".json.gz", gzip.compress(text.encode(), 1))
        cls.files["line_plain"] = cls.td.write("line.json", cls.want["line"][0])

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__()

    def test_fixtures_are_large(self):
        """Large enough for window refills (entries cut at a window's end)."""
        for tag in ("indent", "line"):
            self.assertGreater(len(self.want[tag][0]), 1 << 20)

    def test_known_values(self):
        """Rows, times, ids and the args text as written, in both layouts."""
        db = connect()
        try:
            for tag in ("indent", "line", "indent_odd", "line_odd"):
                text, want = self.want[tag]
                rows = db.execute("SELECT idx, ph, name, cat, pid, tid, dur_ps, args "
                                  "FROM trace_events(?) ORDER BY idx", (self.files[tag],)).fetchall()
                doc = json.loads(text.replace("\x01", "\\u0001"), strict=False) \
                    if "odd" not in tag else None
                with self.subTest(layout=tag):
                    self.assertEqual(len(rows), len(want))
                    bad = [r[0] for r, w in zip(rows, want)
                           if (r[1], r[2], r[3], r[4], r[5], r[6])
                           != ("X", w["name"], w["cat"], w["pid"], w["tid"], w["dur_ps"])]
                    self.assertEqual(bad, [])
                    if doc is not None:
                        for r, ev in zip(rows, doc["traceEvents"]):
                            self.assertEqual(json.loads(r[7]), ev["args"])
                # ts exactly, as picoseconds summed in SQL (no float)
                base = 1610366387140000 * 1000
                got = db.execute("SELECT sum(ts - ?) FROM trace_events(?)",
                                 (base, self.files[tag])).fetchone()[0]
                self.assertEqual(got, sum(w["ts_ps"] // 1000 - base for w in want))
        finally:
            db.close()

    def test_known_args_keys(self):
        """The import's args keys read by the run of white-space form."""
        text = ('{"traceEvents": [\n'
                '  {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2, '
                '"args": {"Input dims": [[1, 2]], "hlo_op": "fusion.1", "flops": 25, '
                '"group_id": 3, "tf_op": "jit(f)/x", "step_num": "4"}},\n'
                '  {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 5, "dur": 1,\n'
                '   "args": {\n     "tf_op": "t\\"q",\n     "hlo_op" : "h2",\n'
                '     "flops": 1e3, "correlation_id": 99}},\n'
                '  {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 9, "dur": 1, '
                '"args": {"hlo_op": "first", "x": [], "hlo_op": "second"}}\n]}')
        path = self.td.write("keys.json", text)
        db = connect()
        try:
            rows = db.execute("SELECT name, hlo_op, tf_op, flops, group_id, step_num, "
                              "correlation_id FROM trace_events(?) ORDER BY idx", (path,)).fetchall()
        finally:
            db.close()
        self.assertEqual(rows[0], ("a", "fusion.1", "jit(f)/x", 25, 3, 4, None))
        self.assertEqual(rows[1][:3], ("b", "h2", 't"q'))
        self.assertEqual(rows[1][6], 99)
        self.assertEqual(rows[2][1], "second")

    def test_ids_of_every_length(self):
        """pid and tid as strings (Kineto writes the tid so) and as numbers
        past the one-pass reader's 18 digits: an integer when the text is
        one in the 64-bit range, else the text (a string) or NULL."""
        texts = ["0", "-0", "007", "7", "123456789012345678", "1234567890123456789",
                 "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                 "-9223372036854775809", "99999999999999999999", "12a", "-", "", "1.5",
                 "1 ", "12345678", "-12345678901234567"]

        def as_int(t):
            if t.lstrip("-").isdigit() and t.count("-") <= 1 and not t.startswith("--") \
                    and (t[0] != "-" or len(t) > 1) and -2**63 <= int(t) < 2**63:
                return int(t)
            return None
        ents = []
        for i, t in enumerate(texts):
            ents.append('{"ph": "X", "name": "s%d", "pid": 1, "tid": "%s", "ts": %d, "dur": 1}' % (i, t, i))
            if re.match(r"^-?(0|[1-9][0-9]*)$", t) and as_int(t) is not None:
                ents.append('{"ph": "X", "name": "n%d", "pid": %s, "tid": 2, "ts": %d, "dur": 1}' % (i, t, i))
        path = self.td.write("ids.json", '{"traceEvents": [\n  ' + ",\n  ".join(ents) + "\n]}")
        db = connect()
        try:
            rows = dict((r[0], r[1:]) for r in db.execute(
                "SELECT name, pid, tid FROM trace_events(?)", (path,)))
        finally:
            db.close()
        for i, t in enumerate(texts):
            with self.subTest(tid=t):
                want = as_int(t)
                self.assertEqual(rows["s%d" % i][1], t if want is None else want)
                if "n%d" % i in rows:
                    self.assertEqual(rows["n%d" % i][0], want)
        self.assertEqual(sum(1 for k in rows if k[0] == "n"), 9)

    def test_short_ids_and_their_neighbours(self):
        """pid and tid of one to three digits are read at once; what ends
        them decides (a '.', an exponent, the end of the object)."""
        text = ('{"traceEvents": [\n'
                '{"ph": "X", "name": "a", "pid": 12.5, "tid": 12e3, "ts": 1},\n'
                '{"ph": "X", "name": "b", "pid": 123.0, "tid": 416E1, "ts": 1},\n'
                '{"ph": "X", "name": "c", "pid": 10, "tid": 999, "ts": 1},\n'
                '{"ph": "X", "name": "d", "pid": 100,"tid": 99}, {"ph": "X", "name": "e", "pid": 42},\n'
                '{"ph": "X", "name": "f", "pid": -12, "tid": 1234, "ts": 1},\n'
                '{"ph": "X", "name": "g", "tid": 7, "pid": 0}\n]}')
        path = self.td.write("short_ids.json", text)
        db = connect()
        try:
            rows = db.execute("SELECT name, pid, tid FROM trace_events(?) ORDER BY idx",
                              (path,)).fetchall()
            kinds = [k for (k,) in db.execute("SELECT kind FROM profsum_diagnostics(?)", (path,))]
        finally:
            db.close()
        self.assertEqual(rows, [("a", None, 12000), ("b", 123, 4160), ("c", 10, 999),
                                ("d", 100, 99), ("e", 42, None), ("f", -12, 1234), ("g", 0, 7)])
        self.assertIn("bad_field", kinds)          # pid 12.5: not an integer

    def test_odd_forms_diagnosed(self):
        """The forms the quick pass leaves to the general code keep their
        diagnostics: a trailing comma, NaN, a control character."""
        ents = self.ents["indent_odd"]
        db = connect()
        try:
            kinds = dict(db.execute("SELECT kind, count(*) FROM profsum_diagnostics(?) GROUP BY kind",
                                    (self.files["indent_odd"],)).fetchall())
            deep = db.execute("SELECT count(*) FROM trace_events(?) WHERE args LIKE ?",
                              (self.files["indent_odd"], "%" + "[" * 70 + "%")).fetchone()[0]
        finally:
            db.close()
        self.assertEqual(kinds.get("trailing_comma", 0),
                         sum(1 for e in ents if ", ]" in e or ", }" in e))
        self.assertEqual(kinds.get("nonfinite_number", 0),
                         sum(1 for e in ents if "NaN" in e or "Infinity" in e))
        self.assertEqual(kinds.get("control_character", 0), sum(1 for e in ents if "\x01" in e))
        self.assertGreater(kinds.get("trailing_comma", 0), 0)
        self.assertGreater(deep, 0)

    def test_same_in_every_mode(self):
        for tag, trace in sorted(self.files.items()):
            assert_modes_agree(self, self.run_child, trace, tag)

    def run_child(self, trace, env_extra, tag):
        return run_child_json(self, CHILD, trace, self.td.path, env_extra, tag)

    def check_errors(self, cases, entry, query, prefix):
        """Each case's entry at entry 20 of 51 makes query fail with the
        same message in the default and the portable mode, naming the
        expected cause and entry 20."""
        for i, (case, why) in enumerate(cases.items()):
            ents = ['{"ph": "X", "pid": 1, "tid": 1, "ts": %d, "dur": 1, "name": "a", '
                    '"args": {"k": [1, 2], "s": "v"}}' % t for t in range(50)]
            ents.insert(20, entry(case))
            path = self.td.write("%s%d.json" % (prefix, i),
                                 '{"traceEvents": [\n  ' + ",\n  ".join(ents) + "\n]}")
            assert_one_error(self, path, query, case, why, "(entry 20)")

    def test_errors_in_args(self):
        """Syntax errors inside args of white-space form: the quick pass
        leaves them to the general code, which reports them as before."""
        cases = {
            '{"a": [1 2]}': "expected ',' or ']'",
            '{"a": [1, 2}': "expected ',' or ']'",
            '{"a": {"b" 1}}': "expected ':' after a key",
            '{"a": {"b": 1 "c": 2}}': "expected ',' or '}'",
            '{"a": [01]}': "expected ',' or ']'",
            '{"a": [1.]}': "no digit after '.'",
            '{"a": [1e]}': "bad exponent",
            '{"a": [-]}': "invalid number",
            '{"a": [tru]}': "invalid literal",
            '{"a": "\\x"}': "invalid escape",
            '{"a": ["\\u12G4"]}': "invalid \\u escape",
            '{"a": [1, 2], , "b": 1}': "expected a string key",
            '{"a": [}': "expected a value",
            '{"a": [1], "b": 2]': "expected ',' or '}'",
        }
        for query in ("SELECT count(*), total(ts) FROM trace_events(?)",
                      "SELECT tf_op, args FROM trace_events(?)"):
            self.check_errors(cases, lambda args: '{"ph": "X", "pid": 1, "tid": 1, "ts": 1, '
                              '"dur": 1, "name": "e", "args": %s}' % args, query, "aerr")

    def test_errors_in_the_event(self):
        """The same for the members of the event object in a run with white
        space."""
        cases = {
            '{"ph": "X" "name": "a"}': "expected ',' or '}'",
            '{"ph" "X", "name": "a"}': "expected ':' after a key",
            '{"ph": "X", "ts": 1 "dur": 2}': "expected ',' or '}'",
            '{"ph": "X", "name": "a": "b"}': "expected ',' or '}'",
            '{"ph": "X", "args": {"a": "b"} "name": "c"}': "expected ',' or '}'",
            '{"ph": "X", "name": "a", , "ts": 1}': "expected a string key",
            '{"ph": "X", "ts": 1.}': "no digit after '.'",
            '{\n    "ph": "X",\n    "dur": -}': "invalid number",
        }
        self.check_errors(cases, lambda ent: ent, "SELECT count(*), total(ts) FROM trace_events(?)",
                          "everr")


if __name__ == "__main__":
    unittest.main()
