"""The JSON tree's arenas (ext/jsontree.c, jArenaBegin), through the C unit
tests of tests/jsontree_test.c built with AddressSanitizer and UBSan
(`make build/jsontree_test`, part of `make test`).  A use after free, a
leak or a double free makes the binary fail; so does a check of its own:
a tree built in an arena writes the same text as on the heap, a tree of an
ended arena grows on the heap, a tree of one arena changed while another
is open takes none of the other's memory (an earlier version did: freeing
the other arena left it pointing at freed memory), nested arenas, and every
allocation made to fail in turn."""
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.path.join(HERE, "..", "build", "jsontree_test")


class JsonTreeArena(unittest.TestCase):

    def test_arena_unit_tests(self):
        if not os.path.exists(BIN):
            self.skipTest("build/jsontree_test not built (make build/jsontree_test)")
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        env.pop("LD_PRELOAD", None)     # make asan preloads the runtime for the Python tests
        p = subprocess.run([BIN], capture_output=True, text=True, timeout=120, env=env)
        out = p.stdout.strip().splitlines()
        self.assertEqual(p.returncode, 0, (p.stdout[-3000:], p.stderr[-3000:]))
        self.assertEqual(p.stderr.strip(), "")
        self.assertTrue(out and out[-1].endswith(" passed, 0 failed"), p.stdout[-2000:])
        self.assertGreaterEqual(int(out[-1].split()[0]), 10)
        self.assertFalse([l for l in out if l.startswith("FAIL")])


if __name__ == "__main__":
    unittest.main()
