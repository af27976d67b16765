"""The shape of the source tree (docs/internals.md): the extension's folders
are layers, lowest first, and a file includes headers of its own layer and
of the layers below it only; no source file grows past 1,500 lines; no file
of the project points outside the repository for the rules it follows."""
import os
import re
import subprocess
import unittest

from util import ROOT

LAYERS = ["util", "reader", "summary", "history", "net", "sql", "cli"]
MAX_LINES = 1500


def sources():
    """(layer, path) of every .c and .h file under ext/."""
    out = []
    for layer in LAYERS:
        d = os.path.join(ROOT, "ext", layer)
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                out.append((layer, os.path.join(d, name)))
    return out


class Layers(unittest.TestCase):
    def test_every_source_is_in_a_layer(self):
        stray = [n for n in os.listdir(os.path.join(ROOT, "ext")) if n.endswith((".c", ".h"))]
        self.assertEqual(stray, [], "files directly under ext/: put them in their layer's folder")
        found = {n for n in os.listdir(os.path.join(ROOT, "ext"))
                 if os.path.isdir(os.path.join(ROOT, "ext", n))}
        self.assertEqual(found, set(LAYERS))

    def test_no_include_of_a_higher_layer(self):
        home = {}
        for layer, path in sources():
            name = os.path.basename(path)
            self.assertNotIn(name, home, "two headers named %s" % name)
            home[name] = layer
        wrong = []
        for layer, path in sources():
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if "/" in inc:
                        wrong.append("%s:%d includes %s by a relative path" % (path, n, inc))
                    elif inc in home and LAYERS.index(home[inc]) > LAYERS.index(layer):
                        wrong.append("%s:%d (%s) includes %s (%s)" % (
                            os.path.relpath(path, ROOT), n, layer, inc, home[inc]))
        self.assertEqual(wrong, [])

    def test_no_source_file_over_the_limit(self):
        big = []
        for _, path in sources():
            with open(path, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                big.append("%s: %d lines" % (os.path.relpath(path, ROOT), n))
        self.assertEqual(big, [])


class SelfContained(unittest.TestCase):
    """The rules the code follows are in docs/spec/, not in files a clone
    does not have, and the code does not name the tracker's items."""

    def tracked(self):
        r = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            self.skipTest("not a git checkout")
        return [p for p in r.stdout.splitlines()
                if p.startswith(("ext/", "tests/", "docs/", "views/", "sql/", "bench/", "examples/",
                                 "python/", "node/", ".ci/")) or p in ("README.md", "Makefile")]

    def test_no_reference_outside_the_repository(self):
        bad = []
        pat = re.compile(r"shared/reference|\bissue\s+#?\d+", re.I)
        for p in self.tracked():
            if p == "tests/test_layers.py":
                continue
            full = os.path.join(ROOT, p)
            try:
                with open(full, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if pat.search(line):
                    bad.append("%s:%d: %s" % (p, n, line.strip()[:100]))
        self.assertEqual(bad, [])


if __name__ == "__main__":
    unittest.main()
