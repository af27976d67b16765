"""An import whose file changes while it is read fails, naming the file and
what changed, and stores nothing: the parse, the stored size and the
SHA-256 (read beside the parse) would otherwise be of different bytes, and
a later import of the finished file could be taken for this one
(filestamp.c).  A thread changes the file over and over while the import
runs; an import of the file left alone succeeds."""
import gzip
import json
import os
import threading
import unittest

import xspace_writer as xw
from util import DbTestCase

TRIES = 5


def json_trace(n):
    ev = [{"ph": "X", "pid": 1, "tid": 1, "name": "op%d" % (i % 50), "ts": i * 10, "dur": 5}
          for i in range(n)]
    return json.dumps({"traceEvents": ev}).encode()


def xplane_trace(n):
    pb = xw.PlaneBuilder("/device:TPU:0", id=0)
    evs = [pb.event("fusion.%d" % (i % 40), offset_ps=i * 10000, duration_ps=5000) for i in range(n)]
    pb.line(id=1, name="XLA Ops", timestamp_ns=1000, events=evs)
    return xw.xspace([pb.build()], hostnames=["h"])


class Changer:
    """While open, a thread changes path: touch (a new modification time
    each time, the bytes kept) or append (an unknown field of two bytes
    more each time: the file stays a valid XSpace)."""

    def __init__(self, path, how):
        self.path, self.how, self.stop, self.n = path, how, False, 0

    def run(self):
        while not self.stop:
            self.n += 1
            if self.how == "touch":
                t = 10 ** 18 + self.n
                os.utime(self.path, ns=(t, t))
            else:
                with open(self.path, "ab") as f:
                    f.write(b"\x78\x00")   # field 15, varint 0: an unknown field

    def __enter__(self):
        self.t = threading.Thread(target=self.run)
        self.t.start()
        return self

    def __exit__(self, *a):
        self.stop = True
        self.t.join()


class FileChanged(DbTestCase):
    def stored(self):
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name='profsum_trace'").fetchone():
            return 0
        return self.db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0]

    def changed(self, name, data, how, why):
        """Import name (holding data) while a Changer changes it, up to
        TRIES times (the thread may not get to run during a short import):
        the import must fail with the message, never store a trace."""
        p = self.td.write(name, data)
        for _ in range(TRIES):
            with open(p, "wb") as f:
                f.write(data)
            with Changer(p, how) as c:
                try:
                    self.db.execute("SELECT profsum_import(?, 'x')", (p,)).fetchone()
                except Exception as e:
                    msg = str(e)
                    self.assertIn("profsum_import: '%s' changed while it was read: " % p, msg)
                    self.assertIn(why, msg)
                    self.assertIn("import it again once it is complete", msg)
                    self.assertEqual(self.stored(), 0)
                    return
            self.assertGreater(c.n, 0)
            self.db.execute("DELETE FROM profsum_trace")   # it ran before or after: try again
        self.fail("no import saw the file change in %d tries" % TRIES)

    def test_json_touched(self):
        self.changed("t.json", json_trace(200000), "touch", "it was modified and kept its size")

    def test_gzip_json_touched(self):
        self.changed("t.json.gz", gzip.compress(json_trace(200000), 1), "touch",
                     "it was modified and kept its size")

    def test_xplane_growing(self):
        # the decoder reads the bytes the file had when opened; the hash
        # reads to the end: without the check they would differ silently
        self.changed("t.xplane.pb", xplane_trace(60000), "append", "it grew from ")

    def test_left_alone_imports_and_reuses(self):
        p = self.td.write("t.json", json_trace(1000))
        a = self.db.execute("SELECT profsum_import(?, 'x')", (p,)).fetchone()[0]
        b = self.db.execute("SELECT profsum_import(?, 'x', '{\"reuse\": true}')", (p,)).fetchone()[0]
        self.assertEqual(a, b)
        self.assertEqual(self.stored(), 1)


if __name__ == "__main__":
    unittest.main()
