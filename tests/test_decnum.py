"""The double nearest to a decimal text (ext/reader/decnum.c,
profsumTextDouble and profsumDecimalHint), through the C unit tests of
tests/decnum_test.c built with AddressSanitizer and UBSan (`make
build/decnum_test`, part of `make test`): about two million texts of the
shapes traces write (%.17g, times with up to 22 fixed decimals, digit
strings to 45 digits with and without an exponent, texts next to a
midpoint between two doubles, edge texts) give strtod's double bit for
bit, with right, wrong and missing hints; times of 20 to 38 digits are
converted without strtod."""
import unittest

from util import run_c_unit


class TextDouble(unittest.TestCase):

    def test_decnum_unit_tests(self):
        run_c_unit(self, "decnum_test", 8, timeout=300)


if __name__ == "__main__":
    unittest.main()
