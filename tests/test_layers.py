"""The shape of the source tree (docs/internals.md): the extension's folders
are layers, lowest first, and a file includes headers of its own layer and
of the layers below it only; no source file grows past 1,500 lines and no
function past 150 (but the two parse loops named below); no file of the
project points outside the repository for the rules it follows."""
import os
import re
import subprocess
import unittest

from util import ROOT

LAYERS = ["util", "reader", "summary", "history", "net", "sql", "cli"]
MAX_LINES = 1500
MAX_FUNCTION_LINES = 150
# The JSON scanner's loop over one entry's members: one state machine that
# reads better whole than cut into calls on the hottest path.
LONG_FUNCTIONS_ALLOWED = {"profsumScanNext"}


def code_only(text):
    """text with comments, string and character literals and preprocessor
    lines blanked, newlines kept (so line numbers stay right)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = i
            while True:
                k = text.find("\n", j)
                k = n if k < 0 else k
                if text[k - 1:k] == "\\":
                    j = k + 1
                    continue
                break
            out.append("\n" * text.count("\n", i, k))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_lengths(path):
    """[(lines, name, first line)] of every function defined in a C file:
    a top-level brace block whose head ends in a parameter list."""
    with open(path, encoding="utf-8") as f:
        code = code_only(f.read())
    found, depth, line, head, start = [], 0, 1, "", None
    for c in code:
        if c == "\n":
            line += 1
        if depth == 0:
            if c == "{":
                m = re.search(r"(\w+)\s*\([^;]*\)\s*$", head.strip())
                start = (m.group(1), line) if m else None
                depth, head = 1, ""
            elif c == ";":
                head = ""
            else:
                head += c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start:
                found.append((line - start[1] + 1, start[0], start[1]))
                start = None
    return found


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

    def test_no_function_over_the_limit(self):
        long_ones = []
        for _, path in sources():
            if not path.endswith(".c"):
                continue
            for n, name, first in function_lengths(path):
                if n > MAX_FUNCTION_LINES and name not in LONG_FUNCTIONS_ALLOWED:
                    long_ones.append("%s:%d %s: %d lines" % (os.path.relpath(path, ROOT), first, name, n))
        self.assertEqual(long_ones, [])

    def test_function_lengths_are_measured(self):
        """The measure itself: a known function of the scanner is found with
        a plausible length, so the limit test cannot pass by finding none."""
        got = {name: n for n, name, _ in function_lengths(os.path.join(ROOT, "ext", "reader", "trace_json.c"))}
        self.assertIn("profsumScanNext", got)
        self.assertGreater(got["profsumScanNext"], 100)
        self.assertGreater(len(got), 20)


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
        pat = re.compile(r"shared[/]reference|\bissue\s+#?\d+", re.I)
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
