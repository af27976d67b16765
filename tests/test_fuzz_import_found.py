"""Inputs the import fuzz target (tests/fuzz_import.c, `make fuzz-import`)
found to break the import, each rebuilt here from a small generated
fixture, with the values the import must give.  The fuzzer's own inputs
are kept in tests/fuzz_import_corpus/ (crash-*); the tests do not need
them.

Each import runs in a child process with a timeout, so a build that
crashes or hangs fails the test instead of taking the runner down."""
import json
import os
import subprocess
import sys
import unittest

from util import SO, TempDir

# Runs in a subprocess: imports argv[1] as 't' and prints, as JSON, the
# rows of each query of argv[3] (a JSON list) with every text value as a
# list of its UTF-8 bytes (a value that is not UTF-8 must not pass for
# another), or the import's error.
CHILD = r"""
import json, sqlite3, sys
db = sqlite3.connect(":memory:")
db.text_factory = bytes
db.enable_load_extension(True)
db.load_extension(sys.argv[2])
try:
    tid = db.execute("SELECT profsum_import(?, 't')", (sys.argv[1],)).fetchone()[0]
except sqlite3.Error as e:
    print(json.dumps({"error": str(e)}))
    sys.exit(0)
def val(v):
    return list(v) if isinstance(v, bytes) else v
out = {"trace_id": tid, "rows": []}
for q in json.loads(sys.argv[3]):
    out["rows"].append([[val(v) for v in r] for r in db.execute(q, (tid,))])
print(json.dumps(out))
"""


def import_in_child(path, queries, timeout=120):
    """Import path in a fresh Python process; the decoded JSON it prints.
    A crash or a timeout fails the calling test."""
    p = subprocess.run([sys.executable, "-c", CHILD, path, SO, json.dumps(queries)],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise AssertionError("the import's process ended with %d: %s" % (p.returncode, p.stderr[-2000:]))
    return json.loads(p.stdout)


def gpu_kernel_trace(name):
    """Trace JSON bytes: a GPU stream with one kernel X event [10, 60) µs
    named name (bytes, written raw into the JSON string) with
    kernel_details and an hlo_op."""
    ev = [{"ph": "M", "pid": 3, "name": "process_name", "args": {"name": "/device:GPU:0"}},
          {"ph": "M", "pid": 3, "tid": 7, "name": "thread_name", "args": {"name": "Stream #7(Kernel)"}},
          {"ph": "X", "pid": 3, "tid": 7, "ts": 10, "dur": 50, "name": "@NAME@",
           "args": {"hlo_op": "dot.3",
                    "kernel_details": "regs:32 grid:10,1,1 block:256,1,1 occ_pct:50"}}]
    return json.dumps({"traceEvents": ev}).encode().replace(b"@NAME@", name)


class KernelNameWithNul(unittest.TestCase):
    """A kernel name holding a raw NUL byte (the JSON reader keeps control
    bytes in a string, flagged): the name was copied with "%.*s", which
    stops at the NUL, while its full length was used after, so the kernel
    key read past the copy (ASan: heap-buffer-overflow in kKey) and
    profsum_kernel_stats.kernel_name held bytes of the heap."""

    def test_kernel_name_kept_whole(self):
        name = b"k\x00" + b"x" * 60
        with TempDir() as td:
            path = td.write("k.trace.json", gpu_kernel_trace(name))
            out = import_in_child(path, [
                "SELECT kernel_name, hlo_op, block_dim, grid_dim, registers_per_thread, "
                "occupancy_pct, occurrences, total_duration_us FROM profsum_kernel_stats WHERE trace_id=?"])
        self.assertNotIn("error", out)
        self.assertEqual(out["rows"][0], [[list(name), list(b"dot.3"), list(b"256,1,1"), list(b"10,1,1"),
                                           32, 50.0, 1, 50.0]])


if __name__ == "__main__":
    unittest.main()
