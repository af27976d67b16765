"""The import's per-event memos decide by comparing bytes: an event's name
against the name last seen in its memo slot, an event's args against the
args of the last event of its name.  A compare that called two different
texts equal would file events under the wrong name or tf_op.  Here every
length from 1 to 80 bytes and every position of a one-byte difference is
tried, through the summary's own tables."""
import unittest

from util import DbTestCase


def q(db, sql, *args):
    return db.execute(sql, args).fetchall()


MAX_LEN = 80


def text(n, tag):
    """n bytes, varied so that no two lengths share a prefix pattern."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(alphabet[(tag * 7 + j * 5) % len(alphabet)] for j in range(n))


def changed(s, i):
    """s with its byte i replaced by one not in the alphabet of text()."""
    return s[:i] + "_" + s[i + 1:]


def trace(events):
    meta = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
            {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}}]
    out, ts = [], 0
    for name, args in events:
        ev = {"ph": "X", "pid": 1, "tid": 2, "ts": ts, "dur": 1, "name": name}
        if args is not None:
            ev["args"] = args
        out.append(ev)
        ts += 2
    return {"traceEvents": meta + out}


class MemoCompare(DbTestCase):
    def test_names_differing_in_one_byte(self):
        # per length n: its base name a, then for each position i the
        # events a, b_i, a (b_i: a with byte i changed): a counts 2n
        # events, every b_i one
        events, want = [], {}
        for n in range(1, MAX_LEN + 1):
            a = text(n, n)
            want[a] = 2 * n
            for i in range(n):
                b = changed(a, i)
                events += [(a, None), (b, None), (a, None)]
                want[b] = 1
        p = self.td.write("names.json", trace(events))
        q(self.db, "SELECT profsum_import(?, 'names')", p)
        got = dict(q(self.db, "SELECT name, count FROM profsum_agg_op"))
        self.assertEqual(len(got), len(want))
        self.assertEqual(got, want)

    def test_args_differing_in_one_byte(self):
        # per (length n, position i) an op of its own with tf_op a, b, b
        # (b: a with byte i changed): the most common tf_op is b.  Were b
        # taken for a by the args memo of the op's name, a would count 3.
        # long_name and source vary the same way, one field at a time.
        events, want = [], {}
        for n in range(1, MAX_LEN + 1):
            a = text(n, n + 100)
            for i in range(n):
                b = changed(a, i)
                for field in ("tf_op", "source", "long_name"):
                    op = "op.%s.%d.%d" % (field, n, i)
                    if field == "long_name":
                        # its shape signature is the text in the brackets
                        va, vb = "f32[%s]" % a, "f32[%s]" % b
                    else:
                        va, vb = a, b
                    events += [(op, {field: va}), (op, {field: vb}), (op, {field: vb})]
                    want[op] = (field, vb)
        p = self.td.write("args.json", trace(events))
        q(self.db, "SELECT profsum_import(?, 'args')", p)
        self.assertIsNotNone(q(self.db, "SELECT profsum_shape_signature('f32[ab]')")[0][0],
                             "profsum_shape_signature reads f32[...]")
        rows = q(self.db, "SELECT name, count, tf_op_path, source_file, shape_signature "
                          "FROM profsum_agg_op")
        self.assertEqual(len(rows), len(want))
        for name, count, tf_op, source, sig in rows:
            field, b = want[name]
            self.assertEqual(count, 3, name)
            if field == "tf_op":
                self.assertEqual(tf_op, b, name)
            elif field == "source":
                self.assertEqual(source, b, name)
            else:
                self.assertEqual(sig, q(self.db, "SELECT profsum_shape_signature(?)", b)[0][0], name)


if __name__ == "__main__":
    unittest.main()
