"""The JSON text profsum hashes for W&B is jsontree.c's compact writer
(json.dumps(obj, sort_keys=True)), also for text that is not valid UTF-8:
each invalid byte is one U+FFFD, as Python's decoder with errors='replace'
gives it, never a code point made of the wrong bytes or a lone surrogate.
The run config of a mock W&B server carries raw invalid bytes; its
config_hash must be the one Python computes from the decoded text."""
import hashlib
import json
import os
import sqlite3
import unittest

import test_wandb     # its fixture (mock servers, environment); not its tests


def has_network(db):
    try:
        db.execute("SELECT wandb_fetch_run(NULL, NULL)").fetchall()
    except sqlite3.OperationalError as e:
        return "network support" not in str(e)
    return True


class ConfigHashOfInvalidUtf8(unittest.TestCase):
    def setUp(self):
        # test_wandb's fixture: the mock API and storage, the environment,
        # artifact run-abc-profiler (self.art) and run abc, self.db
        test_wandb.WandbTest.setUp(self)

    def tearDown(self):
        self.errors = []
        test_wandb.WandbTest.tearDown(self)

    def serve_raw(self, marker, raw):
        """Every response body of the API server has marker replaced by raw bytes."""
        cls = self.api.httpd.RequestHandlerClass
        send = cls._send

        def patched(handler, code, body=b"", headers=None, ctype="application/json"):
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            return send(handler, code, body.replace(marker, raw), headers, ctype)
        cls._send = patched
        self.addCleanup(setattr, cls, "_send", send)

    def test_invalid_bytes_hash_as_python_decodes_them(self):
        if not has_network(self.db):
            self.skipTest("built without network support")
        art = self.art
        # a lead byte before ASCII, an encoded UTF-16 surrogate, a stray
        # continuation byte: each invalid byte is one U+FFFD
        cases = [(b"\xc3A", "\ufffdA"), (b"\xed\xa0\x80", "\ufffd\ufffd\ufffd"), (b"x\x80y", "x\ufffdy")]
        for i, (raw, text) in enumerate(cases):
            run = "r%d" % i
            self.api.add_run("e", "p", run, [art], config={"git_commit": "cafe", "note": "MARK%d" % i})
            self.serve_raw(b"MARK%d" % i, raw)
            r = json.loads(self.db.execute("SELECT wandb_fetch_run(?, ?)",
                                           ("e/p/" + run, os.path.join(self.tmp.path, run))).fetchone()[0])
            cfg = {"git_commit": "cafe", "note": text}
            want = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]
            self.assertEqual(r["run_metadata"]["config_hash"], want, raw)


if __name__ == "__main__":
    unittest.main()
