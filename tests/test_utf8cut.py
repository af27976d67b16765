"""A text cut to a byte budget at a UTF-8 character boundary
(ext/util/utf8cut.c, profsumUtf8Cut), through the C unit tests of
tests/utf8cut_test.c built with AddressSanitizer and UBSan (`make
build/utf8cut_test`, part of `make test`): edge cases (characters of 2 to
4 bytes cut before, inside and after, stray continuation bytes, cut and
overlong sequences, encoded surrogates, code points beyond U+10FFFF), every
short text over an alphabet of lead, continuation and ASCII bytes against a
forward walk over its characters, and every short valid text: its cut is
valid, the longest within the budget."""
import unittest

from util import run_c_unit


class Utf8Cut(unittest.TestCase):

    def test_cut_unit_tests(self):
        run_c_unit(self, "utf8cut_test", 30, timeout=300)


if __name__ == "__main__":
    unittest.main()
