"""A text cut to a byte budget at a UTF-8 character boundary
(ext/util/utf8cut.c, profsumUtf8Cut), through the C unit tests of
tests/utf8cut_test.c built with AddressSanitizer and UBSan (`make
build/utf8cut_test`, part of `make test`): edge cases (characters of 2 to
4 bytes cut before, inside and after, stray continuation bytes, cut and
overlong sequences, encoded surrogates, code points beyond U+10FFFF), every
short text over an alphabet of lead, continuation and ASCII bytes against a
forward walk over its characters, and every short valid text: its cut is
valid, the longest within the budget."""
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", "build", "utf8cut_test")


class Utf8Cut(unittest.TestCase):

    def test_cut_unit_tests(self):
        if not os.path.exists(BIN):
            self.skipTest("build/utf8cut_test not built (make build/utf8cut_test)")
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        env.pop("LD_PRELOAD", None)     # make asan preloads the runtime for the Python tests
        p = subprocess.run([BIN], capture_output=True, text=True, timeout=300, env=env)
        out = p.stdout.strip().splitlines()
        self.assertEqual(p.returncode, 0, (p.stdout[-3000:], p.stderr[-3000:]))
        self.assertEqual(p.stderr.strip(), "")
        self.assertTrue(out and out[-1].endswith(" passed, 0 failed"), p.stdout[-2000:])
        self.assertGreaterEqual(int(out[-1].split()[0]), 30)
        self.assertFalse([l for l in out if l.startswith("FAIL")])


if __name__ == "__main__":
    unittest.main()
