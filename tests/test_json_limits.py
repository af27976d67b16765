"""The JSON tree reader (ext/jsontree.c, jParse) on large documents: an
object of many keys is read in O(n log n) (it was quadratic: 200k keys took
over two minutes in profsum_json_pretty), repeated keys keep the meaning
they had (one member, at the position of the first occurrence, with the last
value, as Python's json.loads), and a document of more than JT_MAX_VALUES
(2^24) values is refused, before any tree is built, with an error naming the
limit (a 64 KB gzip file of [0,0,...] made profsum_import use gigabytes)."""
import gzip
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import fixtures
from util import DbTestCase, HERE, SO

LIMIT = 1 << 24           # JT_MAX_VALUES (ext/jsontree.h)
TOO_LARGE = "JSON document too large: more than %d values" % LIMIT
HANG_GUARD = 60           # seconds: a guard against a hang, not a speed check

# Runs the command in argv[1:] and prints its outcome with the peak RSS of
# that one child (RUSAGE_CHILDREN of this process, whose only child it is).
WRAPPER = r"""
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"rc": r.returncode, "out": r.stdout, "err": r.stderr,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""

# A worker (argv: tests folder, SQL, its argument, "value" or "file": the
# argument is a path whose text is the argument): runs the SQL on a fresh
# connection; prints the result or the error and the number of
# profsum_trace rows left.
WORKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from util import connect
sql, arg = sys.argv[2], sys.argv[3]
if sys.argv[4] == "file":
    with open(arg, encoding="utf-8") as f:
        arg = f.read()
db = connect()
out = {}
try:
    out["result"] = db.execute(sql, (arg,)).fetchone()[0]
except Exception as e:
    out["error"] = str(e)
has = db.execute("SELECT count(*) FROM sqlite_master WHERE name='profsum_trace'").fetchone()[0]
out["traces"] = db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0] if has else 0
print(json.dumps(out))
"""


def run_measured(sql, arg, from_file=False):
    """Run sql with arg in a subprocess; returns (its JSON output, peak RSS in bytes)."""
    env = dict(os.environ, PROFSUM_SO=SO)
    cmd = [sys.executable, "-c", WRAPPER, sys.executable, "-c", WORKER, HERE, sql, arg,
           "file" if from_file else "value"]
    # a session of its own: on a hang, the wrapper and the worker are ended
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    assert p.returncode == 0, stderr
    w = json.loads(stdout)
    assert w["rc"] == 0, w["err"]
    return json.loads(w["out"]), w["maxrss_kb"] * 1024


def pretty(obj_text):
    """What profsum_json_pretty must return: Python's reading and dump."""
    return json.dumps(json.loads(obj_text), indent=2, sort_keys=True)


class BigIntegers(DbTestCase):
    """Integers beyond int64 keep their digits, as Python's int does; up to
    Python's 4300 digits of int() on text, beyond which both refuse."""

    def pretty_of(self, text):
        return self.db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0]

    def test_digits_kept(self):
        for text in ['[9223372036854775808, 123456789012345678901234567890]',
                     '{"b": -9223372036854775809, "a": 9223372036854775807, "c": -9223372036854775808}',
                     '[%s, -%s]' % ("9" * 64, "1" * 100),
                     '{"n": %s}' % ("7" * 4300)]:
            with self.subTest(text=text[:60]):
                self.assertEqual(self.pretty_of(text), pretty(text))
        self.assertEqual(self.pretty_of('[9223372036854775808, 1e19, 18446744073709551616.0]'),
                         "[\n  9223372036854775808,\n  1e+19,\n  1.8446744073709552e+19\n]")

    def test_too_many_digits_or_not_a_number(self):
        with self.assertRaises(ValueError):
            json.loads("8" * 4301)
        for text, why in (("8" * 4301, "number too long"), ("1" * 70 + "-1", "invalid number")):
            with self.subTest(text=text[:20]):
                with self.assertRaises(sqlite3.Error) as cm:
                    self.pretty_of(text)
                self.assertEqual(str(cm.exception), "profsum_json_pretty: invalid JSON at byte 0: " + why)


class RepeatedKeys(DbTestCase):
    """A key given more than once: one member, at the position of its first
    occurrence, with its last value; keys are compared as C strings.  Pinned
    for small objects and for large ones (those are resolved by sorting)."""

    def bundle_error(self, options):
        # profsum_bundle checks its options first, member by member in order:
        # the first unknown key is the one named
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_bundle(1, 2, ?, ?)", (os.path.join(self.td.path, "b"), options))
        return str(cm.exception)

    def test_last_value_wins(self):
        for text in ['{"a": 1, "b": 2, "a": 3}',
                     '{"a": {"x": 1}, "a": [1, 2], "a": "last"}',
                     '{"a": 1, "a": {"b": 1, "b": 2, "b": 3}}']:
            got = self.db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0]
            self.assertEqual(got, pretty(text), text)
        got = self.db.execute("SELECT profsum_json_pretty(?)", ('{"a": 1, "b": 2, "a": 3}',)).fetchone()[0]
        self.assertEqual(json.loads(got), {"a": 3, "b": 2})

    def test_last_value_wins_large_object(self):
        keys = ["k%03d" % i for i in range(40)]
        text = "{" + ", ".join('"%s": %d' % (k, i) for i, k in enumerate(keys)) + ", " \
            + ", ".join('"%s": "again %d"' % (k, i) for i, k in enumerate(keys[::3])) + ', "k001": "last"}'
        got = json.loads(self.db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0])
        self.assertEqual(len(got), 40)
        self.assertEqual((got["k000"], got["k001"], got["k002"], got["k003"], got["k039"]),
                         ("again 0", "last", 2, "again 1", "again 13"))
        self.assertEqual(got, json.loads(text))

    def test_position_of_first_occurrence(self):
        # small object: b_bad keeps its place before a_bad
        msg = self.bundle_error('{"b_bad": 1, "a_bad": 2, "b_bad": 3}')
        self.assertIn("unknown key 'b_bad'", msg)
        # and its value is the last one: top_k "x" then 3 is top_k 3
        msg = self.bundle_error('{"top_k": "x", "zz": 1, "top_k": 3}')
        self.assertIn("unknown key 'zz'", msg)

    def test_position_of_first_occurrence_large_object(self):
        filler = ", ".join('"k%03d": 0' % i for i in range(40))
        msg = self.bundle_error('{"zz_first": 1, %s, "zz_first": 2}' % filler)
        self.assertIn("unknown key 'zz_first'", msg)
        msg = self.bundle_error('{"top_k": "x", %s, "top_k": 3}' % filler)
        self.assertIn("unknown key 'k000'", msg)

    def test_keys_compare_as_c_strings(self):
        # a key holding U+0000 ends there (as it always did): "a\u0000b" and
        # "a\u0000c" are the same key "a"
        small = '{"a\\u0000b": 1, "b": 0, "a\\u0000c": 2}'
        large = "{" + ", ".join('"k%03d": 0' % i for i in range(40)) + ', ' + small[1:]
        for text, n in [(small, 2), (large, 42)]:
            got = json.loads(self.db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0])
            self.assertEqual((len(got), got["a"], got["b"]), (n, 2, 0))


class ManyKeys(unittest.TestCase):
    """An object of 200k keys (in no order, some repeated) is read and
    printed; this took 140 s when every key was looked for among the ones
    before it."""

    def test_200k_keys(self):
        rnd = random.Random(7)
        keys = ["key_%06d" % i for i in range(200000)]
        rnd.shuffle(keys)
        members = ['"%s": %d' % (k, i) for i, k in enumerate(keys)]
        members += ['"%s": "dup %d"' % (k, i) for i, k in enumerate(keys[:1000])]
        text = "{" + ", ".join(members) + "}"
        with TempText(text) as path:
            out, _ = run_measured("SELECT profsum_json_pretty(?)", path, from_file=True)
        self.assertNotIn("error", out)
        self.assertEqual(out["result"], pretty(text))
        got = json.loads(out["result"])
        self.assertEqual(len(got), 200000)
        self.assertEqual(got[keys[0]], "dup 0")
        self.assertEqual(got[keys[1000]], 1000)


class ManyThresholdKeys(unittest.TestCase):
    """profsum_track's thresholds_json with top_k and 200k other keys: the
    other keys were copied into a new object one linear jSet at a time
    (quadratic: 80k keys took 20 s); now top_k is removed in place and the
    first unknown key is reported at once."""

    def test_top_k_and_200k_keys(self):
        text = "{" + ", ".join(['"top_k": 1'] + ['"k%d": 1' % i for i in range(200000)]) + "}"
        with TempText(text) as path:
            out, _ = run_measured("SELECT profsum_track(1, 2, 'x', ?)", path, from_file=True)
        self.assertRegex(out.get("error", ""), r"^profsum_track: thresholds_json: unknown key 'k0'")


class TempText:
    """A temporary file holding text (for a subprocess); removed on exit."""

    def __init__(self, text, suffix=".json"):
        fd, self.path = tempfile.mkstemp(prefix="profsum-test-", suffix=suffix)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        os.unlink(self.path)


class TooLarge(DbTestCase):
    """More than 2^24 values: refused with the limit in the message, without
    the tree (or SQLite's JSON functions' tree) being built."""

    def v1_doc(self):
        """A real profile_summary.v1 document (text) of a small trace."""
        t = self.td.write("t.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        i = self.db.execute("SELECT profsum_import(?)", (t,)).fetchone()[0]
        return self.db.execute("SELECT profsum_summary_json(?)", (i,)).fetchone()[0]

    def test_import_v1_with_huge_array(self):
        # 32M zeros in an extra member: 64 MiB of text, 64 KiB of gzip
        doc = self.v1_doc()
        n = 32 << 20
        path = os.path.join(self.td.path, "huge.summary.json.gz")
        with gzip.open(path, "wb", compresslevel=6) as f:
            f.write(b'{"x_pad": [0')
            chunk = b",0" * (1 << 20)
            for _ in range(n // (1 << 20)):
                f.write(chunk)
            f.write(b"], " + doc[1:].encode())
        self.assertLess(os.path.getsize(path), 1 << 20)
        out, rss = run_measured("SELECT profsum_import(?)", path)
        self.assertIn("error", out)
        self.assertIn("profsum_import: '%s': %s" % (path, TOO_LARGE), out["error"])
        self.assertEqual(out["traces"], 0)                  # nothing imported
        # 64 MiB of text is read; its tree would have taken gigabytes
        self.assertLess(rss, 512 << 20, "peak RSS %d MiB" % (rss >> 20))
        # the same document with a small array is imported
        small = os.path.join(self.td.path, "small.summary.json.gz")
        with open(small, "wb") as f:
            f.write(gzip.compress(b'{"x_pad": [0, 0, 0], ' + doc[1:].encode()))
        i = self.db.execute("SELECT profsum_import(?, 'small')", (small,)).fetchone()[0]
        back = json.loads(self.db.execute("SELECT profsum_summary_json(?)", (i,)).fetchone()[0])
        # written back as the reference's reader reads it: without the extra member
        self.assertNotIn("x_pad", back)
        self.assertEqual(back["hot_ops"], json.loads(doc)["hot_ops"])

    def test_json_pretty_refuses(self):
        # LIMIT zeros in an array: LIMIT + 1 values, one too many
        text = "[" + "0," * (LIMIT - 1) + "0]"
        with TempText(text) as p:
            out, rss = run_measured("SELECT profsum_json_pretty(?)", p, from_file=True)
        self.assertEqual(out.get("error"), "profsum_json_pretty: " + TOO_LARGE
                         + " (the limit of profsum's JSON reader)")
        self.assertLess(rss, 512 << 20, "peak RSS %d MiB" % (rss >> 20))
        # empty arrays are values too: LIMIT of them in an array, one too many
        text = "[" + "[]," * (LIMIT - 1) + "[ ]]"
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_json_pretty(?)", (text,))
        self.assertIn(TOO_LARGE, str(cm.exception))

    def test_long_text_few_values(self):
        # over 32 MiB of text (counted before the parse) but few values:
        # commas, brackets and escaped quotes inside strings are not values
        s = 'a,[{\\"\\\\}],' * (3 << 20)
        text = '["%s", {"k,[": "%s", "e": {}, "f": [ ]}, 1]' % (s, "x" * 100)
        self.assertGreater(len(text), 32 << 20)
        got = self.db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0]
        self.assertEqual(got, pretty(text))


class InvalidUtf8Written(unittest.TestCase):
    """Text that is not UTF-8 is written as U+FFFD, one per byte of a
    maximal invalid subsequence as Python's decoder replaces it: overlong
    forms, UTF-16 surrogates (ED A0 80) and code points past U+10FFFF."""

    def test_like_python(self):
        from util import connect
        db = connect()
        try:
            for raw in (b"\xed\xa0\x80", b"\xc0\x80", b"\xf4\x90\x80\x80", b"a\xffb",
                        b"\xe2\x82\xac", b"\xf0\x9f\x98\x80"):
                got = db.execute("SELECT profsum_json_pretty(CAST(? AS TEXT))",
                                 (b'"' + raw + b'"',)).fetchone()[0]
                self.assertEqual(json.loads(got), raw.decode("utf-8", "replace"), raw)
        finally:
            db.close()


if __name__ == "__main__":
    unittest.main()
