"""The run of bytes a JSON string writes as they are (ext/util/jsonesc.h,
profsumJsonPlainRun: sixteen bytes at a time, then words of eight and four
bytes, then bytes), through the C unit tests of tests/jsonesc_test.c built
with AddressSanitizer and UBSan (`make build/jsonesc_test`, part of `make
test`).  Every answer is compared with a byte-wise walk: every length to
80 with each ending byte at every position (and a second one after it),
over ASCII, spaces and high bytes; every text of up to 4 bytes over the
ending bytes and their neighbours; two million random texts.  A read past
a text's end (each is copied to an allocation of its exact length) fails
the binary.  A second build without the SSE2 loop runs the word loop over
whole strings, as on CPUs without SSE2."""
import unittest

from util import run_c_unit


class JsonEscRun(unittest.TestCase):

    def test_plain_run_unit_tests(self):
        run_c_unit(self, "jsonesc_test", 5, timeout=300)

    def test_plain_run_without_sse2(self):
        # built with -U__SSE2__: the word loop takes whole strings
        run_c_unit(self, "jsonesc_test_words", 5, timeout=300)


if __name__ == "__main__":
    unittest.main()
