"""The hash of the string pool, the kernel tally and the signature cache
(ext/util/hash.c, profsumBytesHash), through the C unit tests of
tests/hash_test.c built with AddressSanitizer and UBSan (`make
build/hash_test`, part of `make test`): below 64 bytes the one-chain
definition, every length to 300 free of alignment and changed by any bit,
no read outside the text, and an even spread of 200,000 kernel-like names
over the slots."""
import unittest

from util import run_c_unit


class BytesHash(unittest.TestCase):

    def test_hash_unit_tests(self):
        run_c_unit(self, "hash_test", 9, timeout=300)


if __name__ == "__main__":
    unittest.main()
