#!/usr/bin/python3
"""Test runner for profsum.

Discovers tests/test_*.py (unittest), runs them against the built extension
(PROFSUM_SO, default ./profsum.so at the repository root) and prints the
closing line `N passed, N failed[, N skipped]` that CI reads.

Usage: /usr/bin/python3 tests/run.py [-v] [pattern]
Must run with Debian's /usr/bin/python3: its sqlite3 module can load
extensions.
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv):
    verbosity = 2 if "-v" in argv else 1
    args = [a for a in argv if a != "-v"]
    pattern = args[0] if args else "test_*.py"
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern, top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stdout).run(suite)
    # A test with failing subtests appears once per failing subtest: count
    # each test once.
    def test_id(t):
        return getattr(t, "test_case", t).id()
    failed_ids = {test_id(t) for t, _ in result.failures + result.errors}
    failed_ids |= {test_id(t) for t in result.unexpectedSuccesses}
    failed = len(failed_ids)
    skipped = len({test_id(t) for t, _ in result.skipped} - failed_ids)
    passed = result.testsRun - failed - skipped
    # Why each test was skipped, so a skip is never silent.
    for t, reason in sorted(result.skipped, key=lambda x: test_id(x[0])):
        print("skipped %s: %s" % (test_id(t), reason))
    line = "%d passed, %d failed" % (passed, failed)
    if skipped:
        line += ", %d skipped" % skipped
    print(line)
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
