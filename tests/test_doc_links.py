"""Every relative link of the project's Markdown (README.md, docs/, bench/,
examples/) points at a file that exists and, with a #fragment, at a heading
of that file (GitHub's anchor rules: lower case, punctuation dropped, spaces
to hyphens, "-1", "-2" for repeats).  Links to web pages are not fetched.
"""
import glob
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import ROOT  # noqa: E402

LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def heading_anchors(path):
    """The anchors GitHub gives the headings of the Markdown file at path."""
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    for line in text.splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def markdown_files():
    pats = ["README.md", "docs/**/*.md", "bench/**/*.md", "examples/**/*.md"]
    out = []
    for p in pats:
        out.extend(glob.glob(os.path.join(ROOT, p), recursive=True))
    return sorted(set(out))


def broken_links(path):
    """(link, reason) for each relative link of path that does not resolve."""
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    bad = []
    cache = {}
    for m in LINK.finditer(text):
        link = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", link):      # http:, https:, mailto:
            continue
        target, _, frag = link.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not os.path.exists(full):
            bad.append((link, "no such file"))
            continue
        if frag and full.endswith(".md"):
            if full not in cache:
                cache[full] = heading_anchors(full)
            if frag not in cache[full]:
                bad.append((link, "no heading with this anchor"))
    return bad


class DocLinks(unittest.TestCase):
    def test_anchor_rules(self):
        with open(os.path.join(ROOT, "docs", "performance.md"), encoding="utf-8") as f:
            first = f.readline()
        self.assertEqual(first.strip(), "# Performance")
        a = heading_anchors(os.path.join(ROOT, "docs", "performance.md"))
        # punctuation dropped, spaces to hyphens
        self.assertIn("what-the-cost-per-mb-target-lacks-and-why", a)
        self.assertIn("context-the-reference-tool", a)

    def test_every_relative_link_resolves(self):
        files = markdown_files()
        self.assertGreater(len(files), 5)
        problems = []
        for path in files:
            for link, why in broken_links(path):
                problems.append("%s: %s (%s)" % (os.path.relpath(path, ROOT), link, why))
        self.assertEqual(problems, [])

    def test_a_broken_link_is_found(self):
        import tempfile
        with tempfile.TemporaryDirectory() as td:
            p = os.path.join(td, "a.md")
            with open(p, "w", encoding="utf-8") as f:
                f.write("# Title\n\n## Two words\n\n[ok](#two-words) [bad](#nope) "
                        "[gone](missing.md) [web](https://example.com/x)\n"
                        "```\n[in code](#ignored)\n```\n")
            self.assertEqual(broken_links(p), [("#nope", "no heading with this anchor"),
                                               ("missing.md", "no such file")])


if __name__ == "__main__":
    unittest.main()
