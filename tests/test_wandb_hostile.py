"""wandb_fetch / wandb_fetch_run / wandb_publish against a hostile or broken
W&B server (the loopback mock of tests/mock_wandb.py, bent per test): names
that would move a keyed request out of its route, paging cursors that never
end, very long file listings, a cache shared by two servers, a symlink in
the cache path, names and sizes the manifest must not carry.

Run: /usr/bin/python3 tests/run.py test_wandb_hostile.py
"""
import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import unittest

import util
import test_wandb     # its fixture (mock servers, environment); not its tests
from test_wandb import KEY, P0, FILES, walk
from mock_wandb import MockWandb, b64md5

# The routes of {base} that may carry the key (docs/wandb.md), each segment
# one plain path component.
KEYED_ROUTES = [r"/graphql",
                r"/files/[^/]+/[^/]+/[^/]+/file_stream",
                r"/artifactsV2/[^/]+/[^/]+/[^/]+/[0-9a-f]{32}",
                r"/artifacts/[^/]+/[0-9a-f]{32}"]


class Hostile(unittest.TestCase):
    setUp = test_wandb.WandbTest.setUp
    tearDown = test_wandb.WandbTest.tearDown
    q = test_wandb.WandbTest.q
    err = test_wandb.WandbTest.err
    dest = test_wandb.WandbTest.dest
    assert_no_secret = test_wandb.WandbTest.assert_no_secret
    assert_fetched = test_wandb.WandbTest.assert_fetched
    import_trace = test_wandb.WandbTest.import_trace

    def assert_keyed_requests_in_routes(self, prefix=""):
        """Every request that carried the key, on either mock, went to a
        documented route below {base} (prefix: the path of {base})."""
        pat = re.compile("^%s(%s)$" % (re.escape(prefix), "|".join(KEYED_ROUTES)))
        for m in (self.api, self.storage):
            for r in m.keyed_requests():
                path = r["path"].split("?", 1)[0]
                self.assertTrue(m is self.api and pat.match(path), (m.port, r["method"], path))
                self.assertNotIn("/../", path + "/")
                self.assertNotIn("/./", path + "/")

    def edit_manifest(self, fn):
        """Change the manifest of the newest artifact with fn(dict)."""
        a = self.api.artifacts[-1]
        man = json.loads(self.api.manifests[a["manifest"]])
        fn(man)
        self.api.manifests[a["manifest"]] = self.storage.manifests[a["manifest"]] = \
            json.dumps(man).encode()

    # -- 1: names from the server in keyed URLs ------------------------------
    def test_legacy_route_refuses_a_climbing_region(self):
        self.api.add_artifact("e", "p", "reg", 0, {P0: b"hello"})

        def bend(man):
            man["storagePolicyConfig"]["storageRegion"] = "../../../../admin/steal"
        self.edit_manifest(bend)
        self.api.faults["omit_urls"] = True
        m = self.err("SELECT wandb_fetch('e/p/reg:v0', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: refusing the manifest's storagePolicyConfig.storageRegion "
                            "'../../../../admin/steal' as a URL path component on the API host "
                            "(empty, '.', '..', or contains '/', '\\', '?', '#', '%' or a control "
                            "character)")
        self.assert_keyed_requests_in_routes()

    def test_legacy_route_refuses_a_climbing_birth_id_below_a_base_path(self):
        # {base} with a path: a birthArtifactID climbing out of it must not
        # reach another application on the same host with the key
        os.environ["WANDB_BASE_URL"] = self.api.url + "/api/v1"
        base = self.api.httpd.RequestHandlerClass

        class Prefixed(base):
            def do_POST(self):
                if self.path.startswith("/api/v1"):
                    self.path = self.path[7:]
                base.do_POST(self)

            def do_GET(self):
                if not self.path.startswith("/api/v1"):
                    self._record()
                    return self._send(200, b"other application", ctype="text/plain")
                self.path = self.path[7:]
                base.do_GET(self)
        self.api.httpd.RequestHandlerClass = Prefixed
        self.api.add_artifact("e", "p", "birth", 0, {P0: b"hello"})
        bad = "../../../../../../other-app/x"

        def bend(man):
            man["contents"][P0]["birthArtifactID"] = bad
        self.edit_manifest(bend)
        self.api.faults["omit_urls"] = True
        m = self.err("SELECT wandb_fetch('e/p/birth:v0', ?)", self.dest())
        self.assertIn("refusing the birthArtifactID of a manifest entry '%s'" % bad, m)
        for r in self.api.keyed_requests():
            self.assertTrue(r["path"].startswith("/graphql"), r["path"])
        self.assertFalse(os.path.exists(self.dest(P0)))

    def test_legacy_route_names_are_percent_encoded(self):
        # an entity with a space and a region with '+' and ':' reach the
        # route as one encoded component each
        self.api.add_artifact("e x", "p", "enc", 0, {P0: b"hello"})

        def bend(man):
            man["storagePolicyConfig"]["storageRegion"] = "us+1:a"
        self.edit_manifest(bend)
        self.api.faults["omit_urls"] = True
        self.q("SELECT wandb_fetch('e x/p/enc:v0', ?)", self.dest())
        legacy = [r["path"] for r in self.api.requests if r["path"].startswith("/artifactsV2/")]
        self.assertEqual(legacy[:1], ["/artifactsV2/us%2B1%3Aa/e%20x/" + self.api.artifacts[-1]["id"].replace("=", "%3D")
                                      + "/5d41402abc4b2a76b9719d911017c592"])

    def test_publish_refuses_a_climbing_run_name(self):
        tid = self.import_trace("t1")
        orig = self.api.publish_op
        bad = "../../../../../admin/x"

        def pub(op, v):
            r = orig(op, v)
            if op == "UpsertBucket":
                self.api.runs[(v["entity"], v["project"], bad)] = \
                    self.api.runs[(v["entity"], v["project"], v["name"])]
                r["data"]["upsertBucket"]["bucket"]["name"] = bad
            return r
        self.api.publish_op = pub
        m = self.err("SELECT wandb_publish(?, ?)", tid, '{"entity": "e", "project": "p"}')
        self.assertIn("refusing the run name of the UpsertBucket response '%s'" % bad, m)
        self.assertEqual([r["op"] for r in self.api.requests], ["UpsertBucket"])
        self.assert_keyed_requests_in_routes()

    # -- 2: paging that never ends -----------------------------------------------
    def test_alternating_file_cursor_is_a_loop(self):
        # cursors A, B, A, ...: each page gives the URL of a new file of
        # the manifest, so only the set of cursors seen can stop it
        files = {"f%d" % i: b"x%d" % i for i in range(5)}
        self.api.add_artifact("e", "p", "alt", 0, files)
        orig = self.api.graphql
        n = [0]

        def graphql(op, v):
            if op != "ArtifactFileURLs":
                return orig(op, v)
            n[0] += 1
            return {"data": {"artifact": {"files": {
                "pageInfo": {"hasNextPage": True, "endCursor": "B" if v.get("cursor") == "A" else "A"},
                "edges": [{"node": {"name": "f%d" % (n[0] % 5), "directUrl": "http://127.0.0.1:1/x"}}]}}}}
        self.api.graphql = graphql
        m = self.err("SELECT wandb_fetch('e/p/alt:v0', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: file list of 'e/p/alt:v0': page 3 repeats the "
                            "paging cursor 'A' of an earlier page (a cursor loop); stopped")
        self.assertEqual(n[0], 3)
        self.assertEqual(self.api.requests_to("/artifacts"), [])   # no legacy route

    def test_alternating_run_cursor_is_a_loop(self):
        orig = self.api.graphql

        def graphql(op, v):
            r = orig(op, dict(v, cursor=None))
            if op == "RunOutputArtifacts":
                r["data"]["project"]["run"]["outputArtifacts"]["pageInfo"] = {
                    "hasNextPage": True, "endCursor": "B" if v.get("cursor") == "A" else "A"}
            return r
        self.api.graphql = graphql
        m = self.err("SELECT wandb_fetch_run('e/p/abc', ?, '{\"alias\": \"none\"}')", self.dest())
        self.assertEqual(m, "wandb_fetch_run: output artifacts of run 'e/p/abc': page 3 repeats the "
                            "paging cursor 'A' of an earlier page (a cursor loop); stopped")
        self.assertEqual(len([r for r in self.api.requests if r["op"] == "RunOutputArtifacts"]), 3)

    def test_page_adding_nothing_ends_the_listing(self):
        # fresh cursors, the URL of the same file on every page: the second
        # page adds nothing and ends the listing; the other file takes the
        # legacy route
        orig = self.api.graphql
        n = [0]

        def graphql(op, v):
            r = orig(op, dict(v, cursor=None, perPage=1))
            if op == "ArtifactFileURLs":
                n[0] += 1
                r["data"]["artifact"]["files"]["pageInfo"] = {"hasNextPage": True,
                                                              "endCursor": "c%d" % n[0]}
            return r
        self.api.graphql = graphql
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        self.assertEqual(n[0], 2)
        self.assertEqual(len(self.api.requests_to("/artifactsV2/")), 1)

    # -- 3: long file listings -------------------------------------------------
    def test_long_listing_is_not_quadratic(self):
        # 200 pages of 1000 names: each page names one file of the manifest
        # and 999 others.  Keeping every name and looking each up by a
        # linear scan took 16 s for 80,000 names on the machine this was
        # written on (about 100 s for these 200,000); a lookup by binary
        # search in the manifest's names takes well under a second more
        # than the requests themselves.  The fetch runs in a child process
        # so that the test's own timeout can stop it.
        files = {"plugins/f%03d.bin" % i: b"f%d" % i for i in range(200)}
        self.api.add_artifact("e", "p", "long", 0, files)
        names = sorted(files)
        orig = self.api.graphql
        pages = [0]

        def graphql(op, v):
            if op != "ArtifactFileURLs":
                return orig(op, v)
            k = int(v.get("cursor") or 0)
            pages[0] += 1
            edges = [{"node": {"name": "junk/%03d/%04d-%s" % (k, j, "x" * 40),
                               "directUrl": "http://127.0.0.1:1/x"}} for j in range(999)]
            h = hashlib.md5(files[names[k]]).hexdigest()
            edges.insert(k % 999, {"node": {"name": names[k], "directUrl": self.storage.url
                                            + "/files/%s?sig=list" % h}})
            return {"data": {"artifact": {"files": {
                "pageInfo": {"hasNextPage": k + 1 < len(names), "endCursor": str(k + 1)},
                "edges": edges}}}}
        self.api.graphql = graphql
        code = ("import json, sqlite3\n"
                "db = sqlite3.connect(':memory:')\n"
                "db.enable_load_extension(True)\n"
                "db.load_extension(%r)\n"
                "r = json.loads(db.execute(\"SELECT wandb_fetch('e/p/long:v0', ?)\", (%r,)).fetchone()[0])\n"
                "print(len(r['files']))\n") % (util.SO, self.dest())
        t = time.time()
        out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                             timeout=90)
        self.assertEqual(out.stdout.strip(), "200", out.stderr[-500:])
        self.assertEqual(pages[0], 200)
        self.assertEqual(self.api.requests_to("/artifacts"), [])   # no legacy route
        for n, data in files.items():
            with open(self.dest(n), "rb") as f:
                self.assertEqual(f.read(), data)
        print("long listing: %.1f s" % (time.time() - t), file=sys.stderr)

    # -- 4: the cache belongs to one server ----------------------------------------
    def cache_dir(self, mock, *parts):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "profsum", "wandb",
                            "127.0.0.1:%d" % mock.port, *parts)

    def test_cache_is_per_server_and_holds_only_the_manifest(self):
        import gzip
        import fixtures
        real = gzip.compress(json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)).encode())
        fake = gzip.compress(json.dumps(fixtures.f1([900, 910, 920, 930, 940, 950], 60)).encode())
        other = MockWandb()
        other.storage = MockWandb()
        self.addCleanup(other.close)
        self.addCleanup(other.storage.close)
        other.add_artifact("e", "p", "prof", 0,
                           {"plugins/profile/2000_01_01_00_00_00/host.trace.json.gz": fake},
                           aliases=["latest"])
        self.api.add_artifact("e", "p", "prof", 0,
                              {"plugins/profile/2026_01_01_00_00_00/host.trace.json.gz": real},
                              aliases=["latest"])
        os.environ["WANDB_BASE_URL"] = other.url
        d_other = self.q("SELECT wandb_fetch('e/p/prof')")["dest_dir"]
        os.environ["WANDB_BASE_URL"] = self.api.url
        d = self.q("SELECT wandb_fetch('e/p/prof')")["dest_dir"]
        self.assertEqual(d_other, self.cache_dir(other, "e", "p", "prof", "v0"))
        self.assertEqual(d, self.cache_dir(self.api, "e", "p", "prof", "v0"))
        # files the manifest does not list, planted in the version folder
        # (an older and a newer session among them), are removed before the import reads it
        for rel in ("plugins/profile/2030_01_01_00_00_00/host.trace.json.gz", "stray.txt",
                    "plugins/profile/2000_01_01_00_00_00/host.trace.json.gz",
                    "plugins/profile/2026_01_01_00_00_00/extra.xplane.pb"):
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "wb") as f:
                f.write(fake)
        os.symlink("/etc", os.path.join(d, "plugins", "link"))
        part = os.path.join(d, ".profsum-0123456789abcdef.part")   # a download in progress
        open(part, "wb").close()
        db = test_wandb.connect(os.path.join(self.tmp.path, "w.db"))
        self.addCleanup(db.close)
        tid = db.execute("SELECT profsum_import('wandb:e/p/prof:v0', NULL, '{\"warmup_steps\": 2}')").fetchone()[0]
        doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
        self.assertEqual(doc["step_time"]["steady_state_steps"]["median"], 135.0)
        self.assertEqual(walk(d), [".profsum-0123456789abcdef.part",
                                   "plugins/profile/2026_01_01_00_00_00/host.trace.json.gz"])
        self.assertFalse(os.path.lexists(os.path.join(d, "plugins", "link")))
        self.assertTrue(os.path.isfile(os.path.join(d_other, "plugins/profile/2000_01_01_00_00_00/"
                                                    "host.trace.json.gz")))

    def test_dest_dir_is_never_pruned(self):
        os.makedirs(self.dest())
        with open(self.dest("mine.txt"), "wb") as f:
            f.write(b"keep")
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertEqual(walk(self.dest()), sorted(list(FILES) + ["mine.txt"]))

    # -- 5: a symlink in the default cache path ---------------------------------------
    def test_symlink_in_cache_path_is_refused(self):
        outside = os.path.join(self.tmp.path, "outside")
        os.makedirs(outside)
        base = self.cache_dir(self.api, "e")
        os.makedirs(base)
        os.symlink(outside, os.path.join(base, "p"))
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
        self.assertEqual(m, "wandb_fetch: refusing the cache directory '%s': '%s' is a symlink "
                            "or not a directory" % (self.cache_dir(self.api, "e", "p", "run-abc-profiler",
                                                                  "v0"), os.path.join(base, "p")))
        self.assertEqual(os.listdir(outside), [])
        # the cache root itself may be a symlink: it is the user's choice
        os.unlink(os.path.join(base, "p"))
        root = os.path.join(self.tmp.path, "realcache")
        os.makedirs(root)
        os.environ["XDG_CACHE_HOME"] = os.path.join(self.tmp.path, "cachelink")
        os.symlink(root, os.environ["XDG_CACHE_HOME"])
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler')")
        self.assert_fetched(r["dest_dir"])
        self.assertEqual(len(walk(root)), len(FILES))

    # -- 6: names, digests and sizes of the manifest -------------------------------
    def test_long_and_control_names_in_errors(self):
        self.api.add_artifact("e", "p", "long", 0, {"../" + "A" * 5000000: b"x"})
        m = self.err("SELECT wandb_fetch('e/p/long:v0', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: refusing manifest file name '../%s... (5000003 bytes)' "
                            "(absolute, empty or '.'/'..' component, or a control character)"
                         % ("A" * 197))
        self.api.add_artifact("e", "p", "ctl", 0, {"a/\x1b]0;pwned\x07b": b"x"})
        m = self.err("SELECT wandb_fetch('e/p/ctl:v0', ?)", self.dest())
        self.assertIn("'a/\\x1b]0;pwned\\x07b'", m)
        self.assertFalse(re.search("[\x00-\x1f\x7f]", m))
        self.api.add_artifact("e", "p", "dig", 0, {"ok": b"x"})

        def bend(man):
            man["contents"]["ok"]["digest"] = "\x1b]0;pwned\x07" + "Z" * 3000000
        self.edit_manifest(bend)
        m = self.err("SELECT wandb_fetch('e/p/dig:v0', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: manifest of 'e/p/dig:v0': entry 'ok' has a digest of "
                            "3000010 bytes (at most 200)")
        self.assertFalse(os.path.exists(self.dest()))

    def test_names_with_nul_are_refused(self):
        for name, files in [("n1", {"a\u0000/../../x": b"x"}),
                            ("n2", {"trace.json\u0000A": b"first", "trace.json\u0000B": b"second"})]:
            self.api.add_artifact("e", "p", name, 0, files)
            m = self.err("SELECT wandb_fetch('e/p/%s:v0', ?)" % name, self.dest())
            self.assertRegex(m, r"^wandb_fetch: manifest of 'e/p/%s:v0': a string holds a NUL "
                                r"character \(\\u0000 at byte \d+\)$" % name)
            self.assertFalse(os.path.exists(self.dest()))
        self.assertFalse(os.path.exists(os.path.join(self.tmp.path, "x")))

    def test_invalid_sizes_are_errors(self):
        for i, size in enumerate([-5, 1.5, 1e30, "5", True, {}]):
            self.api.add_artifact("e", "p", "s%d" % i, 0, {P0: b"hello"})

            def bend(man):
                man["contents"][P0]["size"] = size
            self.edit_manifest(bend)
            m = self.err("SELECT wandb_fetch('e/p/s%d:v0', ?)" % i, self.dest())
            self.assertEqual(m, "wandb_fetch: manifest of 'e/p/s%d:v0': entry '%s' has an invalid "
                                "size (expected a non-negative integer)" % (i, P0), size)
        # absent and null sizes are allowed (the download is then unchecked)
        self.api.add_artifact("e", "p", "snull", 0, {P0: b"hello"})

        def bend(man):
            man["contents"][P0]["size"] = None
        self.edit_manifest(bend)
        self.q("SELECT wandb_fetch('e/p/snull:v0', ?)", self.dest())

    # -- 7: PROFSUM_WANDB_TIMEOUT and redirects ---------------------------------------
    def test_redirect_does_not_restart_the_timeout(self):
        # the file URLs point at the API host, which waits 0.7 s and then
        # redirects to storage, which waits 0.7 s more: 1.4 s in all, over
        # the 1 s an attempt has (each hop alone is within it)
        self.api.serve_storage_here()
        self.api.add_artifact("e", "p", "slowhops", 0, {"f": b"hello"})
        os.environ["PROFSUM_WANDB_TIMEOUT"] = "1"
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "0"
        self.storage.faults["slow"] = 0.7
        storage_url = self.storage.url
        self.storage.blobs.update(self.api.blobs)

        def slow_redirect(h):
            time.sleep(0.7)
            h._send(302, b"", {"Location": storage_url + "/files/" + h.path.split("?")[0].rsplit("/", 1)[1]})
        test_wandb.answer(self.api, "GET", slow_redirect, when=lambda h: h.path.startswith("/storage/files/"))
        t = time.time()
        m = self.err("SELECT wandb_fetch('e/p/slowhops:v0', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: download of 'f': timed out (limits: connect 1s, "
                            "total 1s; PROFSUM_WANDB_TIMEOUT) (gave up after 1 attempt)")
        self.assertFalse(os.path.exists(self.dest("f")))
        # with time enough for both hops the same download succeeds
        os.environ["PROFSUM_WANDB_TIMEOUT"] = "3"
        self.q("SELECT wandb_fetch('e/p/slowhops:v0', ?)", self.dest())
        with open(self.dest("f"), "rb") as f:
            self.assertEqual(f.read(), b"hello")


if __name__ == "__main__":
    unittest.main()
