"""The scanner's one-digit pid/tid path (numberMember) reads what the
general number path reads: each digit before ',', '}' and white space,
and hands on to it a number that goes on (a second digit, a fraction,
an exponent)."""
import unittest

from util import DbTestCase


def entry(pid, tid, tail=","):
    return '{"ph":"X","name":"a","ts":1,"dur":1,"pid":%s%s"tid":%s}' % (pid, tail, tid)


class OneDigitIds(DbTestCase):

    def ids(self, text):
        path = self.td.write("ids.json", text)
        return self.db.execute("SELECT pid, tid FROM trace_events(?) ORDER BY idx",
                               (path,)).fetchall()

    def test_digits_and_terminators(self):
        parts = [entry(d, 9 - d) for d in range(10)]
        parts.append('{"ph":"X","name":"a","ts":1,"dur":1,"tid":4 ,"pid":6 }')
        parts.append('{"ph":"X","name":"a","ts":1,"dur":1,"tid":4\n,"pid":6\n}')
        got = self.ids("[" + ",".join(parts) + "]")
        self.assertEqual(got, [(d, 9 - d) for d in range(10)] + [(6, 4), (6, 4)])

    def test_longer_numbers_go_on(self):
        parts = [entry("12", "3"), entry("5", "37"), entry("1.0", "2"), entry("3", "2e0"),
                 entry("-4", "0"), entry("4", "3735928559")]
        got = self.ids("[" + ",".join(parts) + "]")
        self.assertEqual(got, [(12, 3), (5, 37), (1, 2), (3, 2), (-4, 0), (4, 3735928559)])

    def test_import_sees_them(self):
        parts = [entry(1, 2), entry("1.0", 2)]
        path = self.td.write("imp.json", "[" + ",".join(parts) + "]")
        tid = self.db.execute("SELECT profsum_import(?, 'p')", (path,)).fetchone()[0]
        # 1.0 is not a JSON integer: the reference would reject the file
        kinds = [r[0] for r in self.db.execute(
            "SELECT kind FROM profsum_diagnostic WHERE trace_id=?", (tid,)).fetchall()]
        self.assertEqual(kinds.count("reference_rejects"), 1)


if __name__ == "__main__":
    unittest.main()
