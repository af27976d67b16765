"""The scanner's run over args members of the form "key":"string" (read
from the string index alone) gives what the member-by-member path gives:
every shape that ends a run (an escape in a key or a value, a control
character, a number, a literal, a container, white space, a trailing comma,
an empty string, a member cut by a window refill) is read on by the general
path, with the same rows, args keys, diagnostics, errors and summary in the
index modes (AVX2/SSE2) and in the portable mode, which has no run."""
import gzip
import json
import os
import random
import unittest

from util import assert_modes_agree, assert_one_error, connect, digest_child, run_child_json, TempDir

# Members of args: (text, its value for the known key it sets or None).
PLAIN = [
    '"k%d":"v%d"',
    '"hlo_op":"fusion.%d"',
    '"tf_op":"jit(step)/op_%d"',
    '"long_name":"%%fusion.%d = f32[16,128]{1,0} fusion(f32[16]{0} %%p)"',
    '"group_id":"%d"',
    '"step_num":"%d"',
    '"flops":"%d"',
    '"bytes_accessed":"%d"',
    '"run_id":"%d"',
    '"source":"/app/model.py:%d"',
    '"name":"n%d"',
    '"":"%d"',
    '"k%d":""',
]
ODD = [
    '"tf\\u005fop":"escaped key %d"',     # an escaped key that is a known one
    '"hlo_op":"a\\"quoted\\" %d"',       # an escape in a value
    '"long_name":"ctrl\x01 %d"',          # a raw control character
    '"flops":%d',                          # a number
    '"step_num":%d',
    '"k%d":true', '"k%d":false', '"k%d":null',
    '"kernel_details":{"a":"b%d","c":[1,"x"]}',
    '"k%d":["s","t"]',
    '"k%d":[]', '"k%d":{}', '"k%d": [[], {}]',   # empty containers, passed over at once
    '"k%d":[ ]',
    '"hlo_op": "space after colon %d"',
    '"hlo_op" :"space before colon %d"',
    '"long_name":"%s"',                    # long: across 64-byte words
    '"hlo_op":"b%d\\\\"',                 # an escaped backslash, then the end
    '"tf_op":"\\u0041\\/\\n\\t\\"x\\\\ %d"',  # every kind of escape
    '"long_name":"\\"%d\\""',              # escaped quotes first and last
]


def args_text(rng, i):
    """The args object of entry i: a run of plain members broken now and
    then by an odd one, sometimes with white space or a trailing comma."""
    parts = []
    for j in range(rng.randrange(0, 14)):
        if rng.random() < 0.15:
            t = rng.choice(ODD)
            if "%s" in t:
                parts.append(t % ("x" * rng.randrange(40, 400)))
            else:
                parts.append(t % (i * 31 + j))
        else:
            t = rng.choice(PLAIN)
            parts.append(t % ((i * 31 + j,) * t.count("%d")))
    sep = ", " if rng.random() < 0.05 else ","
    body = sep.join(parts)
    if parts and rng.random() < 0.03:
        body += ","                           # trailing comma: a diagnostic
    return "{" + body + "}"


def member_events(rng, n):
    out = []
    for i in range(n):
        args = args_text(rng, i)
        if i % 97 == 5:
            args = args + ',"args":' + args_text(rng, i + 1)   # a second args
        out.append('{"ph":"X","pid":%d,"tid":%d,"ts":%d.%03d,"dur":%d.25,"name":"op%d","args":%s}'
                   % (1 + i % 2, 1 + i % 3, 1000 + 9 * i, i % 1000, 1 + i % 7, i % 23, args))
    return out


def top_events(rng, n):
    """Events whose own members take every form: a run of compact members
    broken by an escaped key, an escaped or non-string name, ts and dur as
    strings, null, exponents or negative, pid and tid as strings or
    non-integers, other keys with numbers, args that is not an object or
    comes twice, white space, a trailing comma, the members in any order."""
    out = []
    for i in range(n):
        m = ['"ph":"%s"' % rng.choice(["X"] * 4 + ["B", "E", "i"]),
             '"pid":%s' % rng.choice(["1", "2", '"7"', '"gpu"', "1.0", "-3"]),
             '"tid":%s' % rng.choice(["2", "3", "12345678901", '"t1"', "null"]),
             '"ts":%s' % rng.choice(["%d.%03d" % (1000 + i, i % 1000), '"%d.5"' % i, "1.5e3",
                                     "-%d" % i, "null", "%d.1234567" % i]),
             '"dur":%s' % rng.choice(["%d.25" % (i % 9), '"3"', "2e1", "null", "0"]),
             '"name":%s' % rng.choice(['"op%d"' % (i % 31), '"a\\\"b%d"' % i, "null", "5", '""']),
             '"args":%s' % rng.choice([args_text(rng, i), args_text(rng, i), '"s"', "7", "null", "[1]"])]
        if rng.random() < 0.3:
            m.append(rng.choice(['"cat":"c%d"' % i, '"id":%d' % i, '"s":"t"', '"k\\u0041":"x"',
                                 '"entries":[1,2]', '"bp":"e"', '"args":%s' % args_text(rng, i + 3)]))
        rng.shuffle(m)
        body = ",".join(m)
        if rng.random() < 0.05:
            body = body.replace(":", ": ", 1)
        if rng.random() < 0.03:
            body += ","
        out.append("{" + body + "}")
    return out


CHILD = digest_child([
    ('keys',
     'SELECT idx, tf_op, hlo_op, long_name, source, run_id, step_num, flops, bytes_accessed, group_id FROM trace_events(?)'),
    ('args',
     'SELECT args FROM trace_events(?)'),
])


class MemberRun(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        rng = random.Random(11)
        cls.n = 9000
        body = '{"traceEvents":[' + ",".join(member_events(rng, cls.n)) + "]}"
        assert max(body.encode()) < 0x80     # ASCII: the index's run is taken
        cls.raw = body
        cls.big = cls.td.write("members.json.gz", gzip.compress(body.encode(), 1))
        cls.plain = cls.td.write("members.json", body)
        body = '{"traceEvents":[' + ",".join(top_events(random.Random(5), 8000)) + "]}"
        assert max(body.encode()) < 0x80
        cls.top = cls.td.write("top.json.gz", gzip.compress(body.encode(), 1))

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__()

    def run_child(self, trace, env_extra, tag):
        return run_child_json(self, CHILD, trace, self.td.path, env_extra, tag)

    def test_same_in_every_mode(self):
        self.assertGreater(os.path.getsize(self.big), 128 * 1024)   # the inflate thread
        for trace in (self.big, self.plain, self.top):
            assert_modes_agree(self, self.run_child, trace, os.path.basename(trace))

    def test_known_values(self):
        """Values read by the run, and those after the member that ends it."""
        texts = member_events(random.Random(11), self.n)
        ev = [json.loads(e.replace(",}", "}"), strict=False) for e in texts]
        db = connect()
        try:
            rows = db.execute("SELECT idx, hlo_op, tf_op, long_name, group_id, step_num, flops "
                              "FROM trace_events(?) ORDER BY idx", (self.big,)).fetchall()
            kinds = dict(db.execute("SELECT kind, count(*) FROM profsum_diagnostics(?) GROUP BY kind",
                                    (self.big,)).fetchall())
        finally:
            db.close()
        self.assertEqual(len(rows), self.n)

        def text(v):
            return None if v is None or isinstance(v, (dict, list, bool)) else str(v)
        bad = 0
        for (idx, hlo, tf, ln, gid, step, flops), e in zip(rows, ev):
            a = e["args"]
            want = (text(a.get("hlo_op")), text(a.get("tf_op")), text(a.get("long_name")))
            if (hlo, tf, ln) != want:
                bad += 1
            if gid != (int(a["group_id"]) if "group_id" in a else None):
                bad += 1
            if "flops" in a and flops != int(a["flops"]):
                bad += 1
            if "step_num" in a and step != int(a["step_num"]):
                bad += 1
        self.assertEqual(bad, 0)
        # one diagnostic of a kind per entry
        n_trail = sum(1 for e in texts if ",}" in e)
        self.assertGreater(n_trail, 0)
        self.assertEqual(kinds.get("trailing_comma"), n_trail)
        self.assertEqual(kinds.get("control_character"), sum(1 for e in texts if "\x01" in e))

    def check_errors(self, cases, entry, query, prefix):
        """Each case's entry, placed at entry 20 of 51 by entry(case), makes
        query fail with the same message in the default and the portable
        mode, naming the expected cause and entry 20."""
        for i, (case, why) in enumerate(cases.items()):
            ents = ['{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"a","args":{"k":"v"}}' % t
                    for t in range(50)]
            ents.insert(20, entry(case))
            path = self.td.write("%s%d.json" % (prefix, i), '{"traceEvents":[' + ",".join(ents) + "]}")
            assert_one_error(self, path, query, case, why, "(entry 20)")

    def test_errors_where_the_run_stops(self):
        """A syntax error right after a run is reported at the same byte in
        every mode (the run leaves it to the general path)."""
        cases = {
            '{"a":"b" "c":"d"}': "expected ',' or '}'",
            '{"a":"b","c":"d":"e"}': "expected ',' or '}'",
            '{"a":"b","c"}': "expected ':' after a key",
            '{"a":"b",,"c":"d"}': "expected a string key",
            '{"a":"b","c":"\\x"}': "invalid escape",
            '{"a":"b","c":"d\\u12G4"}': "invalid \\u escape",
            '{"a":"b","c":"d"]': "expected ',' or '}'",
            '{"a":[] "c":"d"}': "expected ',' or '}'",
            '{"a":[],"c":{} ]}': "expected ',' or '}'",
            '{"a":[}': "expected a value",
        }
        self.check_errors(cases, lambda args: '{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"e","args":%s}' % args,
                          "SELECT tf_op, args FROM trace_events(?)", "err")

    def test_errors_in_the_event_run(self):
        """The same for the members of the event object itself."""
        cases = {
            '{"ph":"X" "name":"a"}': "expected ',' or '}'",
            '{"ph" "X","name":"a"}': "expected ':' after a key",
            '{"ph":"X","ts":1 "dur":2}': "expected ',' or '}'",
            '{"ph":"X","name":"a":"b"}': "expected ',' or '}'",
            '{"ph":"X","args":{"a":"b"} "name":"c"}': "expected ',' or '}'",
            '{"ph":"X","args":{"a":"b" "c":"d"},"name":"c"}': "expected ',' or '}'",
            '{"ph":"X","name":"a",,"ts":1}': "expected a string key",
            '{"ph":"X","ts":1.}': "no digit after '.'",
        }
        self.check_errors(cases, lambda ent: ent, "SELECT count(*), total(ts) FROM trace_events(?)", "everr")


if __name__ == "__main__":
    unittest.main()
