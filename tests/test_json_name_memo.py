"""The JSON import's name memo (engine_read.c, nameIntern) gives each op
name its own id: names that share their length and their first and last
eight bytes (the memo's slot) stay apart, a name written with escapes is
the same name as its plain text, and short and long names (outside the
memo) are counted with the others."""
import json
import unittest

from util import DbTestCase

# same length, same first and last eight bytes: one memo slot
SAME_SLOT = ["fusion_a.1.tail_end", "fusion_a.2.tail_end", "fusion_a.3.tail_end"]
SHORT = ["ab", "abcdefg"]
LONG = ["L" * 300, "L" * 299 + "M"]


def trace():
    names = SAME_SLOT + SHORT + LONG
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
    ts = 1000.0
    expected = {}
    for i in range(600):
        nm = names[(i * 3 + i // 7) % len(names)]
        ev.append({"ph": "X", "pid": 1, "tid": 2, "ts": ts, "dur": 1.5, "name": nm})
        expected[nm] = expected.get(nm, 0) + 1
        ts += 2.0
    text = json.dumps({"traceEvents": ev}, separators=(",", ":"))
    # an escaped spelling of the first name, 40 more times
    esc = "fusion_a\\u002e1.tail_end"
    extra = ",".join('{"ph":"X","pid":1,"tid":2,"ts":%.1f,"dur":1.5,"name":"%s"}'
                     % (ts + 2.0 * j, esc) for j in range(40))
    expected[SAME_SLOT[0]] += 40
    return text[:-2] + "," + extra + "]}", expected


class NameMemo(DbTestCase):

    def test_names_counted_apart(self):
        text, expected = trace()
        path = self.td.write("names.json", text)
        tid = self.db.execute("SELECT profsum_import(?, 'n')", (path,)).fetchone()[0]
        got = dict(self.db.execute("SELECT name, count FROM profsum_agg_op WHERE trace_id=?",
                                   (tid,)).fetchall())
        self.assertEqual(got, expected)
        self.assertEqual(len(got), 7)


if __name__ == "__main__":
    unittest.main()
