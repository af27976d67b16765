"""The JSON tree's arenas (ext/util/jsontree.c, jArenaBegin), through the C unit
tests of tests/jsontree_test.c built with AddressSanitizer and UBSan
(`make build/jsontree_test`, part of `make test`).  A use after free, a
leak or a double free makes the binary fail; so does a check of its own:
a tree built in an arena writes the same text as on the heap, a tree of an
ended arena grows on the heap, a tree of one arena changed while another
is open takes none of the other's memory (an earlier version did: freeing
the other arena left it pointing at freed memory), nested arenas, and every
allocation made to fail in turn."""
import unittest

from util import run_c_unit


class JsonTreeArena(unittest.TestCase):

    def test_arena_unit_tests(self):
        run_c_unit(self, "jsontree_test", 10)


if __name__ == "__main__":
    unittest.main()
