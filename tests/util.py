"""Shared helpers for the profsum tests: load the extension, build fixtures."""
import gzip
import json
import os
import sqlite3
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SO = os.environ.get("PROFSUM_SO", os.path.join(ROOT, "profsum.so"))
CORPUS = os.environ.get("PROFSUM_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))


def connect(path=":memory:"):
    """Open a connection with profsum loaded."""
    db = sqlite3.connect(path)
    db.enable_load_extension(True)
    db.load_extension(SO)
    db.enable_load_extension(False)
    return db


class TempDir:
    """A temporary directory that removes itself; use as a context manager."""

    def __init__(self):
        self._td = tempfile.TemporaryDirectory(prefix="profsum-test-")
        self.path = self._td.name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._td.cleanup()

    def write(self, name, data, gz=False):
        """Write bytes/str/obj to NAME (JSON-encoded if not bytes/str)."""
        if not isinstance(data, (bytes, str)):
            data = json.dumps(data)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if gz:
            data = gzip.compress(data)
        p = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        return p


class DbTestCase(unittest.TestCase):
    """A test case with an in-memory connection (profsum loaded) in self.db
    and a temporary directory in self.td, both closed after each test."""

    def setUp(self):
        self.db = connect()
        self.td = TempDir()

    def tearDown(self):
        self.db.close()
        self.td.__exit__()
