"""wandb_fetch / wandb_fetch_run / wandb_publish against a hostile or broken
W&B server (the loopback mock of tests/mock_wandb.py, bent per test): names
that would move a keyed request out of its route, paging cursors that never
end, very long file listings, a cache shared by two servers, a symlink in
the cache path, names and sizes the manifest must not carry.

Run: /usr/bin/python3 tests/run.py test_wandb_hostile.py
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import unittest

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


if __name__ == "__main__":
    unittest.main()
