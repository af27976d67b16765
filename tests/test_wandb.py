"""wandb_fetch / wandb_fetch_run / wandb_publish against the loopback mock (tests/mock_wandb.py).

Run: /usr/bin/python3 tests/run.py test_wandb.py
The NETWORK=0 variant is tested when PROFSUM_NONET_SO (default
build/nonet/profsum.so, which `make test` builds) exists.

Replies the mock has no fault for (a key echoed at a chosen offset, a body
larger than the manifest says) come from answer(), which puts a handler in
front of the mock's own for one test.
"""
import base64
import gzip
import hashlib
import json
import os
import sqlite3
import subprocess
import time
import unittest

from util import connect, TempDir
from mock_wandb import MockWandb, DEFAULT_KEY, b64md5

KEY = DEFAULT_KEY
AUTH = "Basic " + base64.b64encode(("api:" + KEY).encode()).decode()
P0 = "plugins/profile/2025_01_02_03_04_05/host0.xplane.pb"
P1 = "plugins/profile/2025_01_02_03_04_05/perfetto_trace.json.gz"
FILES = {P0: b"hello", P1: b"hello\n"}
ENV_KEYS = ["WANDB_BASE_URL", "WANDB_API_KEY", "XDG_CACHE_HOME", "NETRC", "HOME",
            "WANDB_ENTITY", "WANDB_PROJECT", "PROFSUM_WANDB_TIMEOUT",
            "PROFSUM_WANDB_MAX_RETRY_SECONDS", "PROFSUM_WANDB_MAX_BYTES"]
NONET_SO = os.environ.get("PROFSUM_NONET_SO",
                          os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                       "build", "nonet", "profsum.so"))


def walk(root):
    """All file paths (relative) below root, including symlinks."""
    out = []
    for d, dirs, files in os.walk(root):
        for f in files:
            out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


def answer(mock, method, fn, when=None):
    """Until the test ends, requests of `method` ("GET", "POST") to `mock`
    for which when(handler) is true (default: all) are recorded as the mock
    records its own and then answered by fn(handler) (with handler._send or
    by hand); the others go to the mock.  A later call replaces the handler
    of an earlier one."""
    base = mock.httpd.RequestHandlerClass
    base = getattr(base, "mock_handler", base)

    def do(self):
        if when is None or when(self):
            body = None
            if method == "POST":
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._record(None, body)
            fn(self)
        else:
            getattr(base, "do_" + method)(self)

    mock.httpd.RequestHandlerClass = type("Answer" + method, (base,),
                                          {"do_" + method: do, "mock_handler": base})


def fragments(secret, n=6):
    """Every n-byte piece of secret."""
    return {secret[i:i + n] for i in range(len(secret) - n + 1)}


def creds(key):
    """The base64 credential of the Authorization header for key."""
    return base64.b64encode(("api:" + key).encode()).decode()


def run_loaded(so, body, env=None):
    """Run Python code `body` in a new process (environment `env`, or this
    one's) after `db` is an in-memory connection with the extension `so`
    loaded; its output lines."""
    code = ("import sqlite3\n"
            "db = sqlite3.connect(':memory:')\n"
            "db.enable_load_extension(True)\n"
            "db.load_extension(%r)\n" % so) + body
    return subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True,
                          text=True, env=env, check=True).stdout.splitlines()


# A libcurl that refuses both ways of restricting protocols
# (CURLOPT_PROTOCOLS_STR / CURLOPT_REDIR_PROTOCOLS_STR of 7.85, and the bit
# masks CURLOPT_PROTOCOLS / CURLOPT_REDIR_PROTOCOLS, options 181 and 182 of
# the long kind); every other call reaches the real library, a dependency
# of the shim.
SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <curl/curl.h>
#undef curl_easy_setopt
CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...){
  static CURLcode (*real)(CURL*, CURLoption, ...);
  va_list ap;
  void *arg;
  va_start(ap, opt);
  arg = va_arg(ap, void*);
  va_end(ap);
  if( opt==CURLOPT_PROTOCOLS_STR || opt==CURLOPT_REDIR_PROTOCOLS_STR
   || (int)opt==CURLOPTTYPE_LONG+181 || (int)opt==CURLOPTTYPE_LONG+182 ) return CURLE_UNKNOWN_OPTION;
  if( real==0 ) real = (CURLcode(*)(CURL*, CURLoption, ...))dlsym(RTLD_NEXT, "curl_easy_setopt");
  return real(c, opt, arg);
}
"""


class WandbTest(unittest.TestCase):
    def setUp(self):
        self.saved = {k: os.environ.get(k) for k in ENV_KEYS}
        self.tmp = TempDir()
        self.api = MockWandb()
        self.storage = MockWandb()
        self.api.storage = self.storage
        os.environ["WANDB_BASE_URL"] = self.api.url + "/"
        os.environ["WANDB_API_KEY"] = KEY
        os.environ["XDG_CACHE_HOME"] = os.path.join(self.tmp.path, "cache")
        os.environ["HOME"] = os.path.join(self.tmp.path, "home")
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "5"
        for k in ENV_KEYS[3:]:
            if k not in ("HOME", "PROFSUM_WANDB_MAX_RETRY_SECONDS"):
                os.environ.pop(k, None)
        self.art = self.api.add_artifact("e", "p", "run-abc-profiler", 0, FILES,
                                         aliases=["latest"], art_id="QXJ0aWZhY3Q6MTIz")
        req = self.api.add_artifact("e", "p", "requirements.txt", 0, {"requirements.txt": b"jax\n"},
                                    type_="requirements", created_at="2025-01-02T03:00:00")
        pend = self.api.add_artifact("e", "p", "run-abc-profiler", 1, {"x": b"pending"},
                                     state="PENDING", created_at="2025-01-03T00:00:00")
        self.api.add_run("e", "p", "abc", [req, self.art, pend],
                         config={"git_commit": "deadbeef", "_wandb": {"x": 1},
                                 "trainer": {"resources": {"tpu_topology": "2x2"}},
                                 "num_devices": 8, "num_hosts": 2.7},
                         summary={"throughput/device_kind": "TPU v4", "num_devices": 0})
        self.db = connect()
        self.errors = []

    def tearDown(self):
        self.db.close()
        self.api.close()
        self.storage.close()
        self.tmp.__exit__(None, None, None)
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for e in self.errors:   # the key never appears in any error text
            self.assertNotIn(KEY, e)
            self.assertNotIn(AUTH.split()[1], e)
            self.assert_no_secret(e, KEY)

    # -- helpers ----------------------------------------------------------
    def q(self, sql, *args):
        return json.loads(self.db.execute(sql, args).fetchone()[0])

    def err(self, sql, *args):
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute(sql, args).fetchone()
        msg = str(cm.exception)
        self.errors.append(msg)
        return msg

    def assert_no_secret(self, msg, key):
        """Neither key nor its base64 credential, nor any 6-byte piece of
        either, is in msg."""
        self.assertNotIn(key, msg)
        for f in fragments(key) | fragments(creds(key)):
            self.assertNotIn(f, msg)

    def dest(self, *parts):
        return os.path.join(self.tmp.path, "out", *parts)

    def assert_no_key_off_api(self):
        """The storage host never saw the key; on the API host only
        /graphql, /files and /artifactsV2 requests carry it."""
        for r in self.storage.requests:
            self.assertNotIn("authorization", r["headers"], r["path"])
        for r in self.api.requests:
            if r["path"] == "/graphql":
                self.assertEqual(r["headers"].get("authorization"), AUTH)

    def assert_fetched(self, root):
        self.assertEqual(walk(root), sorted(FILES))
        for p, data in FILES.items():
            with open(os.path.join(root, p), "rb") as f:
                self.assertEqual(f.read(), data)

    # -- artifacts ----------------------------------------------------------
    def test_fetch_latest_default_dir(self):
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler')")
        root = os.path.join(os.environ["XDG_CACHE_HOME"], "profsum", "wandb",
                            "127.0.0.1:%d" % self.api.port, "e", "p", "run-abc-profiler", "v0")
        self.assertEqual(r["dest_dir"], root)
        self.assertEqual((r["id"], r["name"], r["version"], r["type"], r["ref"]),
                         ("QXJ0aWZhY3Q6MTIz", "run-abc-profiler", "v0", "jax_profile",
                          "e/p/run-abc-profiler:v0"))
        self.assert_fetched(root)
        files = {f["path"]: f for f in r["files"]}
        self.assertEqual(files[P0]["digest"], "XUFAKrxLKna5cZ2REBfFkg==")
        self.assertEqual(files[P1]["size"], 6)
        self.assertEqual(files[P0]["local_path"], os.path.join(root, P0))
        self.assertFalse(files[P0]["cached"])
        ops = [x["op"] for x in self.api.requests]
        self.assertEqual(ops, ["ArtifactByName", "ArtifactFileURLs"])
        self.assertEqual(len(self.storage.requests_to("/files/")), 3)
        self.assert_no_key_off_api()

    def test_fetch_by_version_and_dest(self):
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler:v0', ?)", self.dest())
        self.assertEqual(r["version"], "v0")
        self.assert_fetched(self.dest())

    def test_cache_reuse(self):
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler:latest')")
        n = len(self.storage.requests_to("/files/"))
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler:latest')")
        new = self.storage.requests[n:]
        self.assertEqual([x["path"] for x in new], ["/files/manifest-0.json?sig=x"])
        self.assertTrue(all(f["cached"] for f in r["files"]))
        # a corrupted local copy is downloaded again
        with open(os.path.join(r["dest_dir"], P0), "wb") as f:
            f.write(b"HELLO")
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler:latest')")
        self.assert_fetched(r["dest_dir"])

    def test_missing_artifact_and_project(self):
        m = self.err("SELECT wandb_fetch('e/p/nope')")
        self.assertEqual(m, "wandb_fetch: artifact 'e/p/nope:latest' not found in project 'e/p'")
        m = self.err("SELECT wandb_fetch('e/q/nope:v3')")
        self.assertEqual(m, "wandb_fetch: project 'e/q' not found")
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler:v1')")
        self.assertIn("is not committed (state PENDING)", m)
        m = self.err("SELECT wandb_fetch('justaname')")
        self.assertIn("wandb_fetch: invalid artifact reference 'justaname'", m)

    def test_paging_files(self):
        self.api.faults["page_size"] = 1
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        pages = [x for x in self.api.requests if x["op"] == "ArtifactFileURLs"]
        self.assertEqual(len(pages), 2)
        self.assert_fetched(self.dest())

    def test_legacy_url_fallback(self):
        self.api.faults["omit_urls"] = True
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        legacy = self.api.requests_to("/artifactsV2/default/e/QXJ0aWZhY3Q6MTIz/")
        self.assertEqual(len(legacy), 2)
        self.assertTrue(all(x["headers"].get("authorization") == AUTH for x in legacy))
        self.assert_no_key_off_api()

    def test_legacy_route_when_the_url_query_fails(self):
        # a server that answers ArtifactFileURLs with an error: every file
        # takes the legacy route (wandb-http: the file URL query fails)
        orig = self.api.graphql

        def graphql(op, v):
            if op == "ArtifactFileURLs":
                return {"errors": [{"message": "Cannot query field 'files'"}]}
            return orig(op, v)
        self.api.graphql = graphql
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        self.assertEqual(len(self.api.requests_to("/artifactsV2/default/e/QXJ0aWZhY3Q6MTIz/")), 2)
        self.assert_no_key_off_api()

    def test_expired_url_refreshed(self):
        """A presigned URL that fails (S3's 403 "Request has expired") is
        asked for again by name, once, and the file downloaded from the
        fresh URL (wandb-http.md §3.3, URL expiry)."""
        self.storage.faults["expired"] = 1
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        self.assertFalse(any(f["cached"] for f in r["files"]))
        ops = [x["op"] for x in self.api.requests]
        self.assertEqual(ops, ["ArtifactByName", "ArtifactFileURLs", "ArtifactFileURLByName"])
        body = json.loads(self.api.requests[2]["body"])
        self.assertEqual(body["variables"], {"id": "QXJ0aWZhY3Q6MTIz", "names": [P0]})
        self.assertIn("files(names: $names, first: 1)", body["query"])
        h0 = hashlib.md5(FILES[P0]).hexdigest()
        got = [x["path"] for x in self.storage.requests_to("/files/" + h0)]
        self.assertEqual(got, ["/files/%s?sig=list" % h0, "/files/%s?sig=fresh" % h0])
        self.assert_no_key_off_api()
        self.assertEqual(sorted(os.listdir(os.path.join(self.dest(), os.path.dirname(P0)))),
                         sorted(os.path.basename(p) for p in FILES))

    def test_expired_url_refresh_fails(self):
        # the fresh URL fails too: one refresh only, both errors named
        self.storage.faults["expired"] = 1
        self.storage.faults["expired_fresh"] = 5
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        first = "download of '%s': permission denied (http 403: " % P0
        self.assertTrue(m.startswith("wandb_fetch: " + first), m)
        self.assertIn("(also with a fresh download URL; the first URL failed: " + first, m)
        self.assertEqual(m.count("permission denied (http 403: AccessDenied: Request has expired)"), 2, m)
        self.assertEqual(len([x for x in self.api.requests if x["op"] == "ArtifactFileURLByName"]), 1)
        self.assertEqual(self.storage.faults["expired_fresh"], 4)
        self.assertEqual(walk(self.dest()), [])      # no partial or temporary file
        # the server has no fresh URL for it: the first error stands, with why
        self.storage.faults.update({"expired": 1, "expired_fresh": 0})
        self.api.faults["no_fresh"] = True
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest("b"))
        self.assertTrue(m.startswith("wandb_fetch: " + first), m)
        self.assertTrue(m.endswith("(asking for a fresh download URL: the server returned none)"), m)
        self.assertEqual(walk(self.dest("b")), [])
        # the refresh query itself fails: its error is appended
        self.storage.faults["expired"] = 1
        self.api.faults.pop("no_fresh")
        self.api.faults["errors_ArtifactFileURLByName"] = 1
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest("c"))
        self.assertTrue(m.startswith("wandb_fetch: " + first), m)
        self.assertIn("(asking for a fresh download URL: graphql ArtifactFileURLByName failed: boom)", m)

    def test_size_mismatch_not_refreshed(self):
        # only HTTP failures of a presigned URL ask for a fresh one
        self.storage.faults["wrong_digest"] = 1
        self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertNotIn("ArtifactFileURLByName", [x["op"] for x in self.api.requests])

    # -- runs ---------------------------------------------------------------
    def test_run_picks_committed_profile(self):
        r = self.q("SELECT wandb_fetch_run('e/p/abc', ?)", self.dest())
        self.assertEqual(r["id"], "QXJ0aWZhY3Q6MTIz")
        self.assertEqual(r["ref"], "e/p/run-abc-profiler:v0")
        self.assertEqual(r["run"], "e/p/abc")
        self.assert_fetched(self.dest())
        m = r["run_metadata"]
        cfg = {"git_commit": "deadbeef", "trainer": {"resources": {"tpu_topology": "2x2"}},
               "num_devices": 8, "num_hosts": 2.7}
        want_hash = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:16]
        self.assertEqual(m, {
            "run_path": "e/p/abc", "run_id": "abc", "artifact_ref": "e/p/run-abc-profiler:v0",
            "artifact_name": "run-abc-profiler:v0", "hardware_type": "TPU v4",
            "mesh_or_topology": "2x2", "git_sha": "deadbeef", "config_hash": want_hash,
            "num_devices": 8, "num_hosts": 2})
        self.assert_no_key_off_api()

    def test_import_from_wandb(self):
        import gzip
        import fixtures
        trace = gzip.compress(json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)).encode())
        prof = self.api.add_artifact("e", "p", "run-xyz-profiler", 0,
                                     {"plugins/profile/2026_01_01_00_00_00/host.trace.json.gz": trace},
                                     aliases=["latest"], art_id="QXJ0aWZhY3Q6OTk=")
        self.api.add_run("e", "p", "xyz", [prof], config={"git_commit": "cafe"},
                         summary={"throughput/device_kind": "TPU v5e"})
        db = connect(os.path.join(self.tmp.path, "w.db"))
        tid = db.execute("SELECT profsum_import('wandb-run:e/p/xyz', NULL, '{\"warmup_steps\": 2}')").fetchone()[0]
        label, src, n = db.execute("SELECT label, source_path, num_complete_events FROM profsum_trace "
                                   "WHERE trace_id=?", (tid,)).fetchone()
        self.assertEqual((label, src, n), ("run-xyz-profiler:v0", "wandb-run:e/p/xyz", 13))
        meta = db.execute("SELECT run_path, run_id, artifact_ref, hardware_type, git_sha "
                          "FROM profsum_run_metadata WHERE trace_id=?", (tid,)).fetchone()
        self.assertEqual(meta, ("e/p/xyz", "xyz", "e/p/run-xyz-profiler:v0", "TPU v5e", "cafe"))
        doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
        self.assertEqual(doc["run_metadata"]["run_id"], "xyz")
        self.assertEqual(doc["step_time"]["steady_state_steps"]["median"], 135.0)
        # an artifact reference imports too (from the cache: no new download)
        def data_downloads():   # the manifest is fetched again to check the cache; data files not
            return [r["path"] for r in self.storage.requests if "manifest" not in r["path"]]
        before = len(data_downloads())
        tid2 = db.execute("SELECT profsum_import('wandb:e/p/run-xyz-profiler:v0', 'again')").fetchone()[0]
        self.assertEqual(len(data_downloads()), before)
        self.assertEqual(db.execute("SELECT artifact_ref FROM profsum_run_metadata WHERE trace_id=?",
                                    (tid2,)).fetchone()[0], "e/p/run-xyz-profiler:v0")
        db.close()
        self.assert_no_key_off_api()

    def test_import_run_alias(self):
        """options_json "alias" picks the run's profile by alias and keeps
        the wandb-run source and the run's metadata (the CLI's
        `summarize --run-target R --alias A` goes through it)."""
        import gzip
        import subprocess
        import fixtures
        def gz(durs):
            return gzip.compress(json.dumps(fixtures.f1(durs, 60)).encode())
        path = "plugins/profile/2026_01_01_00_00_00/host.trace.json.gz"
        best = self.api.add_artifact("e", "p", "run-xyz-profiler", 0, {path: gz([100] * 6)},
                                     aliases=["best"], created_at="2025-01-01T00:00:00Z")
        last = self.api.add_artifact("e", "p", "run-xyz-profiler", 1, {path: gz([200] * 6)},
                                     aliases=["latest"], created_at="2025-01-02T00:00:00Z")
        self.api.add_run("e", "p", "xyz", [best, last], config={"git_commit": "cafe"})
        db = connect(os.path.join(self.tmp.path, "a.db"))
        def imported(tid):
            return db.execute("SELECT t.label, t.source_path, m.run_id, m.artifact_ref, m.git_sha "
                              "FROM profsum_trace t JOIN profsum_run_metadata m USING(trace_id) "
                              "WHERE trace_id=?", (tid,)).fetchone()
        tid = db.execute("SELECT profsum_import('wandb-run:e/p/xyz', NULL, '{\"alias\": \"best\"}')").fetchone()[0]
        self.assertEqual(imported(tid), ("run-xyz-profiler:v0", "wandb-run:e/p/xyz", "xyz",
                                         "e/p/run-xyz-profiler:v0", "cafe"))
        tid = db.execute("SELECT profsum_import('wandb-run:e/p/xyz', NULL, '{\"alias\": null}')").fetchone()[0]
        self.assertEqual(imported(tid)[3], "e/p/run-xyz-profiler:v1")
        for src, opts, want in [
                ("wandb:e/p/run-xyz-profiler:v0", '{"alias": "best"}',
                 "profsum_import: options_json: 'alias' applies to W&B run sources (wandb-run:<target> "
                 "or a run URL), not to 'wandb:e/p/run-xyz-profiler:v0'; put the alias in the reference"),
                ("/nonexistent.json.gz", '{"alias": "best"}', "not to '/nonexistent.json.gz'"),
                ("wandb-run:e/p/xyz", '{"alias": ""}', "profsum_import: options_json: 'alias' must be a non-empty string or null, not \"\""),
                ("wandb-run:e/p/xyz", '{"alias": 3}', "profsum_import: options_json: 'alias' must be a non-empty string or null, not 3")]:
            with self.assertRaises(sqlite3.OperationalError) as cm:
                db.execute("SELECT profsum_import(?, 'x', ?)", (src, opts)).fetchone()
            self.assertIn(want, str(cm.exception))
        self.assertEqual(db.execute("SELECT count(*) FROM profsum_trace").fetchone()[0], 2)
        db.close()
        cli = os.environ.get("PROFSUM_CLI", os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "profsum"))
        if os.access(cli, os.X_OK) and not os.environ.get("LD_PRELOAD"):
            dbp = os.path.join(self.tmp.path, "cli.db")
            p = subprocess.run([cli, "summarize", "--run-target", "xyz", "--entity", "e", "--project", "p",
                                "--alias", "best", "--db", dbp, "--label", "b"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(p.stdout)
            self.assertEqual((doc["run_metadata"]["run_id"], doc["run_metadata"]["artifact_ref"]),
                             ("xyz", "e/p/run-xyz-profiler:v0"))
            db = connect(dbp)
            self.assertEqual(db.execute("SELECT source_path FROM profsum_trace").fetchone()[0],
                             "wandb-run:xyz")
            db.close()
        self.assert_no_key_off_api()

    def test_run_target_forms(self):
        os.environ["WANDB_ENTITY"] = "e"
        os.environ["WANDB_PROJECT"] = "p"
        for t in ["e/p/runs/abc", self.api.url + "/e/p/runs/abc/overview?x=1#y",
                  "abc", self.api.url + "/e/p/abc"]:
            r = self.q("SELECT wandb_fetch_run(?)", t)
            self.assertEqual(r["id"], "QXJ0aWZhY3Q6MTIz", t)
        del os.environ["WANDB_ENTITY"]
        r = self.q("SELECT wandb_fetch_run('abc', NULL, '{\"entity\":\"e\",\"project\":\"p\"}')")
        self.assertEqual(r["run"], "e/p/abc")
        del os.environ["WANDB_PROJECT"]
        # the errors of tools-spec §8.1, its sentences first; the target is
        # parsed before the API (and its key) is set up
        del os.environ["WANDB_API_KEY"]
        n = len(self.api.requests)
        m = self.err("SELECT wandb_fetch_run('abc')")
        self.assertEqual(m, "wandb_fetch_run: Bare run ids require --entity and --project. "
                            "(run id 'abc'; give options entity/project or WANDB_ENTITY/WANDB_PROJECT)")
        m = self.err("SELECT wandb_fetch_run('p/abc')")
        self.assertEqual(m, "wandb_fetch_run: Unrecognized run target: p/abc (expected run_id, "
                            "entity/project/run_id, entity/project/runs/run_id or a run url)")
        for t in ("https://wandb.ai/e/p", "http://x/e/p?a=1/2/3#4/5"):
            m = self.err("SELECT wandb_fetch_run(?)", t)
            self.assertEqual(m, "wandb_fetch_run: Could not parse run information from URL: " + t)
        m = self.err("SELECT profsum_import('wandb-run:abc')")
        self.assertIn("Bare run ids require --entity and --project.", m)
        m = self.err("SELECT profsum_import('wandb-run:e/abc')")
        self.assertIn("Unrecognized run target: e/abc", m)
        m = self.err("SELECT wandb_fetch_run('e/p/abc')")
        self.assertIn("no api key for", m)
        self.assertEqual(self.api.requests[n:], [])
        os.environ["WANDB_API_KEY"] = DEFAULT_KEY
        m = self.err("SELECT wandb_fetch_run('https://wandb.ai/e/p/runs/abc')")
        self.assertIn("run url host 'wandb.ai' is not the configured w&b host", m)
        m = self.err("SELECT wandb_fetch_run('abc', NULL, '{\"bogus\":1}')")
        self.assertIn("unknown option 'bogus'", m)

    def test_run_alias_and_newest(self):
        old = self.api.add_artifact("e", "p", "profiler", 0, {"a": b"old"}, aliases=["best"],
                                    created_at="2025-01-01T00:00:00Z")
        new = self.api.add_artifact("e", "p", "profiler", 1, {"a": b"new"},
                                    created_at="2025-01-05T00:00:00+02:00")
        self.api.add_run("e", "p", "r2", [new, old])
        r = self.q("SELECT wandb_fetch_run('e/p/r2', ?)", self.dest("a"))
        self.assertEqual(r["id"], new)      # no 'latest' alias: newest createdAt
        r = self.q("SELECT wandb_fetch_run('e/p/r2', ?, '{\"alias\":\"best\"}')", self.dest("b"))
        self.assertEqual(r["id"], old)

    def test_newest_with_offsets_without_colon(self):
        # 10:00+0530 is 04:30Z, earlier than 04:45Z: the offset's minutes count
        a = self.api.add_artifact("e", "p", "prof", 0, {"a": b"a"}, created_at="2025-01-02T10:00:00+0530")
        b = self.api.add_artifact("e", "p", "prof", 1, {"a": b"b"}, created_at="2025-01-02T04:45:00Z")
        c = self.api.add_artifact("e", "p", "prof", 2, {"a": b"c"}, created_at="2025-01-02T00:50:00-04")
        self.api.add_run("e", "p", "r3", [a, b, c])
        self.assertEqual(self.q("SELECT wandb_fetch_run('e/p/r3', ?)", self.dest("a"))["id"], c)
        self.api.add_run("e", "p", "r4", [a, b])
        self.assertEqual(self.q("SELECT wandb_fetch_run('e/p/r4', ?)", self.dest("b"))["id"], b)

    def test_run_paging(self):
        self.api.faults["page_size"] = 1
        r = self.q("SELECT wandb_fetch_run('e/p/abc', ?)", self.dest())
        self.assertEqual(r["id"], "QXJ0aWZhY3Q6MTIz")
        pages = [x for x in self.api.requests if x["op"] == "RunOutputArtifacts"]
        self.assertEqual(len(pages), 2)   # stops at the page carrying 'latest'

    def test_run_errors(self):
        m = self.err("SELECT wandb_fetch_run('e/p/nope')")
        self.assertEqual(m, "wandb_fetch_run: run 'e/p/nope' not found")
        m = self.err("SELECT wandb_fetch_run('e/zz/abc')")
        self.assertEqual(m, "wandb_fetch_run: project 'e/zz' not found")
        self.api.add_run("e", "p", "empty", [])
        m = self.err("SELECT wandb_fetch_run('e/p/empty')")
        self.assertEqual(m, "wandb_fetch_run: no committed artifact of type 'jax_profile' "
                            "found for run 'e/p/empty'")

    # -- auth ---------------------------------------------------------------
    def test_netrc_key(self):
        del os.environ["WANDB_API_KEY"]
        netrc = self.tmp.write("netrc", "machine other password nope\nmachine 127.0.0.1:%d\n"
                               "  login user\n  password %s\n" % (self.api.port, KEY))
        os.environ["NETRC"] = netrc
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        os.environ["NETRC"] = netrc + ".missing"
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("wandb_fetch: no api key for '127.0.0.1:%d'" % self.api.port, m)
        # a malformed reference is named before the missing key
        m = self.err("SELECT wandb_fetch('nonsense')")
        self.assertIn("wandb_fetch: invalid artifact reference 'nonsense'", m)

    def test_netrc_comments_and_macros(self):
        # as Python's netrc reads it: '#' starts a comment to the end of its
        # line, and a macdef's body (up to an empty line) holds no tokens
        del os.environ["WANDB_API_KEY"]
        netrc = self.tmp.write("netrc2", "# machine 127.0.0.1:%d password OLD\n"
                               "macdef init\n  machine 127.0.0.1:%d password MACRO\n\n"
                               "machine 127.0.0.1:%d  # the local mock\n"
                               "  login user\n  # password STALE\n  password %s\n"
                               % (self.api.port, self.api.port, self.api.port, KEY))
        os.environ["NETRC"] = netrc
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        self.assertEqual({r["headers"].get("authorization") for r in self.api.requests
                          if r["path"] == "/graphql"}, {AUTH})

    def test_401(self):
        os.environ["WANDB_API_KEY"] = "f" * 40
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
        self.assertEqual(m, "wandb_fetch: graphql ArtifactByName: authentication failed "
                            "(http 401: permission denied); check WANDB_API_KEY or the netrc "
                            "entry for '127.0.0.1:%d'" % self.api.port)
        self.assertNotIn("f" * 40, m)

    def test_404_and_graphql_error(self):
        self.api.faults["404"] = 1
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
        self.assertEqual(m, "wandb_fetch: graphql ArtifactByName: not found "
                            "(http 404: endpoint not found)")
        self.api.faults["errors"] = 1
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
        self.assertEqual(m, "wandb_fetch: graphql ArtifactByName failed: boom")

    def test_echoed_key_is_scrubbed(self):
        # a server echoing the key (and the auth header) into its error body
        self.api.faults["403_echo"] = 1
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
        self.assertIn("wandb_fetch: graphql ArtifactByName: permission denied (http 403: ", m)
        self.assertIn("*" * 40, m)

    # The key echoed by a server at every offset around the 200-byte cut of
    # the server's text: masked before the cut, so no piece of it is left.
    CUT = 200

    def echo_offsets(self, secret):
        return range(self.CUT - len(secret) - 2, self.CUT + 3)

    def test_echoed_key_straddling_the_cut_json(self):
        for code in (401, 403, 500):
            for k in self.echo_offsets(KEY):
                text = "x" * k + KEY + " tail"
                answer(self.api, "POST", lambda h, text=text, code=code: h._send(
                    code, {"errors": [{"message": text}]}))
                os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "0"
                m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
                self.assertIn("http %d: xxx" % code, m)
                self.assert_no_secret(m, KEY)
                self.assertIn("x" * k if k < self.CUT else "x" * self.CUT, m)
                if k < self.CUT:
                    self.assertIn("x" * k + "*" * min(len(KEY), self.CUT - k), m)
        # {"error": {"message": ...}} and a key split by a line break
        for k in self.echo_offsets(KEY):
            text = "y" * k + KEY[:17] + "\n" + KEY[17:]
            answer(self.api, "POST", lambda h, text=text: h._send(
                403, {"error": {"message": text}}))
            m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
            self.assert_no_secret(m, KEY)
            self.assertNotIn(KEY[:4], m.replace("y", ""))

    def test_echoed_key_straddling_the_cut_graphql_errors(self):
        for k in self.echo_offsets(KEY):
            text = "z" * k + "key=" + KEY
            answer(self.api, "POST", lambda h, text=text: h._send(
                200, {"data": None, "errors": [{"message": text}, {"message": KEY}]}))
            m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
            self.assertTrue(m.startswith("wandb_fetch: graphql ArtifactByName failed: zzz"), m)
            self.assert_no_secret(m, KEY)

    def test_echoed_auth_header_straddling_the_cut(self):
        cred = creds(KEY)
        for k in self.echo_offsets("Basic " + cred):
            def reply(h, k=k):
                h._send(401, {"errors": [{"message": "w" * k + "bad header: "
                                                 + h.headers.get("Authorization")}]})
            answer(self.api, "POST", reply)
            m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
            self.assertIn("authentication failed (http 401: www", m)
            self.assert_no_secret(m, KEY)
            self.assertNotIn("YXBpOj", m)

    def test_echoed_key_straddling_the_cut_xml(self):
        # an object store's XML error, the key split by line breaks (the
        # whitespace folding turns them into spaces), in both elements
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "0"
        for k in self.echo_offsets(KEY):
            split = "\n  ".join(KEY[i:i + 7] for i in range(0, len(KEY), 7))
            body = ("<?xml version=\"1.0\"?><Error><Code>Denied%s</Code><Message>%s%s"
                    "</Message><Key>%s</Key></Error>" % (KEY, "v" * k, split, KEY)).encode()

            answer(self.storage, "GET",
                   lambda h, body=body: h._send(403, body, ctype="application/xml"),
                   when=lambda h: not h.path.startswith("/files/manifest"))
            d = self.dest("x%d" % k)
            m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", d)
            self.assertIn("permission denied (http 403: Denied****", m)
            self.assertIn(": vvv", m)
            self.assert_no_secret(m, KEY)
            for piece in KEY[0:7], KEY[7:14]:
                self.assertNotIn(piece, m)
            self.assertEqual(walk(d), [])

    def test_short_key_masked(self):
        # keys of 4 bytes or more are masked, whatever their length
        for key in ("Qw3z", "Qw3zR", "Qw3zR9p"):
            os.environ["WANDB_API_KEY"] = key
            for k in (self.CUT - 3, self.CUT - 1, 20):
                answer(self.api, "POST", lambda h, k=k, key=key: h._send(
                    403, {"errors": [{"message": "u" * k + key + " and " + key + " "
                                      + h.headers.get("Authorization")}]}))
                m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler')")
                self.assertIn("permission denied (http 403: uuu", m)
                self.assert_no_secret(m, key)
                self.assertNotIn(key[:3], m.replace("u", ""))

    # -- retries ------------------------------------------------------------
    def test_429_retry_after(self):
        self.api.faults["429"] = 1
        t0 = time.time()
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertGreaterEqual(time.time() - t0, 0.95)
        self.assert_fetched(self.dest())
        self.assertEqual([x["op"] for x in self.api.requests][:2],
                         ["ArtifactByName", "ArtifactByName"])

    def test_429_budget_exhausted(self):
        self.api.faults["429"] = 100
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "2"
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: graphql ArtifactByName: http 429: rate limited "
                            "(gave up after 3 attempts)")
        self.assertFalse(os.path.exists(self.dest()))

    def test_500_then_success(self):
        self.api.faults["500"] = 1
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())

    def test_retry_count_bounded(self):
        self.api.faults["500"] = 100
        # waits of 1 s and 2 s fit a 3.9 s budget, the next (4 s) does not
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "3.9"
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("http 500: internal error (gave up after", m)
        self.assertEqual(len(self.api.requests), 3)

    # -- download faults ------------------------------------------------------
    def assert_nothing_landed(self):
        d = self.dest()
        self.assertEqual([f for f in walk(d) if not f.startswith("plugins/")] if os.path.isdir(d) else [], [])
        for f in walk(d) if os.path.isdir(d) else []:
            self.assertNotIn(".part", f)

    def test_slow_timeout(self):
        self.storage.faults["slow"] = 3
        os.environ["PROFSUM_WANDB_TIMEOUT"] = "1"
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "0"
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("wandb_fetch: download of '%s': timed out" % P0, m)
        self.assertEqual(walk(self.dest()), [])

    def test_slow_once_then_success(self):
        self.storage.faults["slow_once"] = 3
        os.environ["PROFSUM_WANDB_TIMEOUT"] = "1"
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())

    def test_truncated_body(self):
        self.storage.faults["truncate"] = 100
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "1"
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("download of '%s': truncated response" % P0, m)
        self.assertEqual(walk(self.dest()), [])

    def test_truncated_once(self):
        self.storage.faults["truncate"] = 1
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())

    def test_wrong_digest(self):
        self.storage.faults["wrong_digest"] = 1
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("wandb_fetch: size mismatch for '%s'" % P0, m)
        self.assertEqual(walk(self.dest()), [])
        # without sizes in the manifest the MD5 check catches it
        self.api.add_artifact("e", "p", "nosize", 0, FILES, sizes=False)
        self.storage.faults["wrong_digest"] = 1
        m = self.err("SELECT wandb_fetch('e/p/nosize:v0', ?)", self.dest("n"))
        self.assertEqual(m, "wandb_fetch: digest mismatch for '%s': manifest says "
                            "XUFAKrxLKna5cZ2REBfFkg==, downloaded file has %s"
                         % (P0, b64md5(b"tamperedhello")))
        self.assertEqual(walk(self.dest("n")), [])

    def test_size_limit(self):
        os.environ["PROFSUM_WANDB_MAX_BYTES"] = "8"
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("exceeds the size limit of 8 bytes (PROFSUM_WANDB_MAX_BYTES)", m)
        self.assertFalse(os.path.exists(self.dest()))
        # no sizes in the manifest: enforced while writing
        self.api.add_artifact("e", "p", "nosize", 0, FILES, sizes=False)
        m = self.err("SELECT wandb_fetch('e/p/nosize:v0', ?)", self.dest("n"))
        self.assertIn("download of '%s': exceeds the size limit of 8 bytes" % P1, m)
        self.assertEqual(walk(self.dest("n")), [P0])

    def test_body_larger_than_declared(self):
        # the manifest says 5 bytes, the server streams 1 MiB: stopped at the
        # declared size (not at the call's 8 GiB budget), the file named with
        # both sizes, nothing left on disk, no retry
        data = b"12345"
        h = hashlib.md5(data).hexdigest()
        self.api.add_artifact("e", "p", "liar", 0, {"big.bin": data})
        for with_length in (True, False):
            def reply(hd, with_length=with_length):
                hd.send_response(200)
                if with_length:
                    hd.send_header("Content-Length", str(1 << 20))
                hd.end_headers()
                hd.close_connection = True
                try:
                    for _ in range(64):
                        hd.wfile.write(b"A" * 16384)
                        hd.wfile.flush()
                except OSError:
                    pass
            answer(self.storage, "GET", reply, when=lambda hd: hd.path.startswith("/files/" + h))
            n = len(self.storage.requests_to("/files/" + h))
            d = self.dest("liar%d" % with_length)
            m = self.err("SELECT wandb_fetch('e/p/liar:v0', ?)", d)
            self.assertRegex(m, r"^wandb_fetch: size mismatch for 'big\.bin': manifest says 5 "
                                r"bytes, got more \(download stopped at (\d+) bytes received\)$")
            got = int(m.rsplit(" at ", 1)[1].split()[0])
            self.assertGreater(got, 5)
            self.assertLess(got, 1 << 20)
            self.assertEqual(walk(d), [])
            self.assertEqual(len(self.storage.requests_to("/files/" + h)), n + 1)
        # the call's budget still applies to files the manifest gives no size
        os.environ["PROFSUM_WANDB_MAX_BYTES"] = "100"
        self.api.add_artifact("e", "p", "liar2", 0, {"big.bin": data}, sizes=False)
        m = self.err("SELECT wandb_fetch('e/p/liar2:v0', ?)", self.dest("n"))
        self.assertEqual(m, "wandb_fetch: download of 'big.bin': exceeds the size limit of "
                            "100 bytes (PROFSUM_WANDB_MAX_BYTES)")
        self.assertEqual(walk(self.dest("n")), [])

    def test_huge_timeout(self):
        # PROFSUM_WANDB_TIMEOUT=1e300 is clamped before it becomes a long
        os.environ["PROFSUM_WANDB_TIMEOUT"] = "1e300"
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())

    def test_hostile_names(self):
        for i, bad in enumerate(["../evil", "/abs/evil", "a/../../evil", "a//b", "./x", "a/"]):
            self.api.add_artifact("e", "p", "bad%d" % i, 0, {"ok.txt": b"hello"},
                                  manifest_extra={bad: {"digest": b64md5(b"hello"), "size": 5}})
            m = self.err("SELECT wandb_fetch('e/p/bad%d:v0', ?)" % i, self.dest("d%d" % i))
            self.assertEqual(m, "wandb_fetch: refusing manifest file name '%s' (absolute, "
                                "empty or '.'/'..' component, or a control character)" % bad)
            self.assertFalse(os.path.exists(self.dest("d%d" % i)))
        self.assertFalse(os.path.exists(self.dest("evil")))

    def test_symlink_in_dest(self):
        outside = os.path.join(self.tmp.path, "outside")
        os.makedirs(outside)
        os.makedirs(self.dest())
        os.symlink(outside, self.dest("plugins"))
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("refusing manifest file '%s': 'plugins' inside dest_dir is a symlink" % P0, m)
        self.assertEqual(os.listdir(outside), [])
        # a symlink in place of a file is replaced, not written through
        os.unlink(self.dest("plugins"))
        self.api.add_artifact("e", "p", "flat", 0, {"f.txt": b"hello"})
        victim = os.path.join(outside, "victim")
        with open(victim, "wb") as f:
            f.write(b"keep")
        os.symlink(victim, self.dest("f.txt"))
        self.q("SELECT wandb_fetch('e/p/flat:v0', ?)", self.dest())
        self.assertFalse(os.path.islink(self.dest("f.txt")))
        with open(victim, "rb") as f:
            self.assertEqual(f.read(), b"keep")

    # -- where the key goes -----------------------------------------------------
    def assert_key_only_to_api(self, mock):
        """On mock, no storage request (manifest, file, upload) carried the
        key, and every GraphQL request did (there were some)."""
        stor = mock.storage_requests()
        self.assertTrue(stor)
        self.assertEqual([r["path"] for r in stor if r["auth"]], [])
        gql = [r for r in mock.requests if r["path"] == "/graphql"]
        self.assertTrue(gql)
        for r in gql:
            self.assertEqual(r["headers"].get("authorization"), AUTH, r["op"])

    def test_redirect_to_other_host(self):
        # directUrls on the API host (/files/...), which redirect to the
        # storage host: a URL the API hands out gets no key on any hop,
        # even on the API host
        self.api.storage = None
        self.api.faults["redirect"] = 100
        self.api.storage = self.storage
        self.api.blob_base = lambda: self.api.url
        self.storage.blobs.update(self.api.blobs)
        self.storage.manifests.update(self.api.manifests)
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        on_api = self.api.requests_to("/files/")
        self.assertEqual(len(on_api), 3)
        self.assertEqual([x["path"] for x in on_api if x["auth"]], [])
        self.assertEqual(len(self.storage.requests_to("/files/")), 3)
        self.assert_no_key_off_api()
        self.assert_key_only_to_api(self.api)

    def check_same_host(self, s3_style):
        """Storage served by the API's own host and port (a self-hosted
        server): wandb_fetch, wandb_fetch_run and profsum_import work, no
        manifest or file request carries the key, GraphQL requests do."""
        self.api.serve_storage_here(s3_style=s3_style)
        r = self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest("a"))
        self.assert_fetched(self.dest("a"))
        self.assertFalse(any(f["cached"] for f in r["files"]))
        paths = sorted(x["path"].split("?")[0] for x in self.api.storage_requests())
        h0, h1 = (hashlib.md5(FILES[p]).hexdigest() for p in (P0, P1))
        self.assertEqual(paths, sorted(["/storage/manifests/manifest-0.json",
                                        "/storage/files/" + h0, "/storage/files/" + h1]))
        self.q("SELECT wandb_fetch_run('e/p/abc', ?)", self.dest("b"))
        self.assert_fetched(self.dest("b"))
        db = connect(os.path.join(self.tmp.path, "s.db"))
        import gzip
        import fixtures
        trace = gzip.compress(json.dumps(fixtures.f1([100, 110, 120, 130], 60)).encode())
        self.api.add_artifact("e", "p", "run-xyz-profiler", 0,
                              {"plugins/profile/2026_01_01_00_00_00/h.trace.json.gz": trace},
                              aliases=["latest"])
        tid = db.execute("SELECT profsum_import('wandb:e/p/run-xyz-profiler')").fetchone()[0]
        self.assertEqual(db.execute("SELECT num_complete_events FROM profsum_trace WHERE trace_id=?",
                                    (tid,)).fetchone()[0], 11)
        db.close()
        self.assertEqual(len(self.api.storage_requests()), 3 + 3 + 2)
        self.assert_key_only_to_api(self.api)
        self.assertEqual(self.storage.requests, [])

    def test_same_host_storage(self):
        self.check_same_host(False)

    def test_same_host_storage_s3_style(self):
        # S3 answers a presigned URL sent with a second credential with 400
        self.check_same_host(True)

    def test_s3_style_mock_refuses_a_keyed_request(self):
        # the mock itself: what the client avoids is really refused
        import urllib.request
        import urllib.error
        self.api.serve_storage_here(s3_style=True)
        url = self.api.url + "/storage/manifests/manifest-0.json?sig=x"
        with urllib.request.urlopen(url) as f:
            self.assertEqual(json.loads(f.read())["version"], 1)
        req = urllib.request.Request(url, headers={"Authorization": AUTH})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req)
        self.assertEqual(cm.exception.code, 400)
        self.assertIn(b"<Code>InvalidArgument</Code><Message>Only one auth mechanism allowed",
                      cm.exception.read())
        self.assertEqual([x["auth"] for x in self.api.storage_requests()], [False, True])

    def test_legacy_redirect_to_other_origin(self):
        # an API route (the legacy download URL) gets the key; its redirect
        # to storage on another origin does not
        self.api.faults["omit_urls"] = True
        self.api.faults["legacy_redirect"] = 100
        self.storage.s3_style = True
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        legacy = self.api.requests_to("/artifactsV2/default/e/QXJ0aWZhY3Q6MTIz/")
        self.assertEqual(len(legacy), 2)
        self.assertTrue(all(x["headers"].get("authorization") == AUTH for x in legacy))
        got = self.storage.requests_to("/files/")
        self.assertEqual(sorted(x["path"].split("?")[1] for x in got), ["sig=legacy", "sig=legacy",
                                                                         "sig=x"])
        self.assert_no_key_off_api()

    def test_legacy_redirect_same_origin(self):
        # the same redirect to storage on the API's own origin: no key there
        # either (the Location is a file URL the API handed out)
        self.api.serve_storage_here(s3_style=True)
        self.api.faults["omit_urls"] = True
        self.api.faults["legacy_redirect"] = 100
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        legacy = self.api.requests_to("/artifactsV2/default/e/QXJ0aWZhY3Q6MTIz/")
        self.assertEqual(len(legacy), 2)
        self.assertTrue(all(x["headers"].get("authorization") == AUTH for x in legacy))
        hops = self.api.requests_to("/storage/files/")
        self.assertEqual([(x["path"].split("?")[1], x["auth"]) for x in hops],
                         [("sig=legacy", False)] * 2)
        self.assert_key_only_to_api(self.api)

    def test_graphql_redirect_same_origin(self):
        # a GraphQL POST redirected (307) within the API origin is sent
        # again, with the key
        self.api.serve_storage_here(s3_style=True)
        self.api.faults["gql_redirect"] = 1
        self.q("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assert_fetched(self.dest())
        gql = [x["op"] for x in self.api.requests if x["path"] == "/graphql"]
        self.assertEqual(gql, ["ArtifactByName", "ArtifactByName", "ArtifactFileURLs"])
        self.assert_key_only_to_api(self.api)

    def test_graphql_redirect_refused(self):
        self.api.faults["gql_redirect"] = 1
        m = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertEqual(m, "wandb_fetch: graphql ArtifactByName: graphql request "
                            "redirected to another host; not following")
        self.assertEqual(self.storage.requests, [])

    # -- SQL surface ------------------------------------------------------------
    def test_directonly_and_publish(self):
        self.db.execute("CREATE VIEW v AS SELECT wandb_fetch('e/p/run-abc-profiler') AS r")
        m = self.err("SELECT * FROM v")
        self.assertIn("unsafe use of wandb_fetch()", m)
        self.assertEqual(self.api.requests, [])
        self.db.execute("CREATE VIEW v2 AS SELECT wandb_publish('t', '{\"dry_run\": true}') AS r")
        m = self.err("SELECT * FROM v2")
        self.assertIn("unsafe use of wandb_publish()", m)

    # -- publishing -------------------------------------------------------------
    PUB_OPS = ["UpsertBucket", "CreateArtifact", "CreateArtifactManifest", "CreateArtifactFiles",
               "CreateArtifactManifest", "CommitArtifact"]

    def import_trace(self, label="t1"):
        import fixtures
        p = self.tmp.write(label.replace("/", "_") + ".json",
                           fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        return self.db.execute("SELECT profsum_import(?, ?)", (p, label)).fetchone()[0]

    # the answers of tools-spec §7, exactly these keys
    DRY_KEYS = {"status", "entity", "project", "artifact_name", "artifact_type", "aliases",
                "summary_path", "report_path", "metadata"}
    PUB_KEYS = {"status", "entity", "project", "artifact_name", "artifact_type", "aliases",
                "artifact_version", "summary_path", "report_path"}

    def expected_files(self, trace):
        """The one file a trace without summary_path or report_path publishes."""
        summary = (self.db.execute("SELECT profsum_summary_json(?)", (trace,)).fetchone()[0]
                   + "\n").encode()
        return {"profile_summary.json": summary}

    def assert_time_name(self, name, t0, t1):
        """name is profile-summary-<UTC YYYYmmdd-HHMMSS> of a time in [t0, t1]."""
        self.assertRegex(name, r"^profile-summary-\d{8}-\d{6}$")
        stamps = {time.strftime("%Y%m%d-%H%M%S", time.gmtime(t)) for t in range(int(t0), int(t1) + 2)}
        self.assertIn(name[len("profile-summary-"):], stamps)

    @staticmethod
    def manifest_digest(files):
        text = "wandb-artifact-manifest-v1\n" + "".join(
            "%s:%s\n" % (p, b64md5(d)) for p, d in sorted(files.items()))
        return hashlib.md5(text.encode()).hexdigest()

    def test_publish_dry_run(self):
        self.import_trace("t1")
        os.environ["WANDB_ENTITY"] = "e"
        os.environ["WANDB_PROJECT"] = "p"
        del os.environ["WANDB_API_KEY"]        # a dry run needs no key
        files = self.expected_files("t1")
        t0 = time.time()
        r = self.q("SELECT wandb_publish('t1', '{\"dry_run\": true}')")
        self.assertEqual(set(r), self.DRY_KEYS)
        # no run_metadata.run_id: the name is the UTC time
        self.assert_time_name(r["artifact_name"], t0, time.time())
        self.assertEqual((r["status"], r["artifact_type"], r["entity"], r["project"], r["aliases"],
                          r["summary_path"], r["report_path"]),
                         ("dry_run", "profile_summary", "e", "p", ["latest"], None, None))
        doc = json.loads(files["profile_summary.json"])
        meta = r["metadata"]
        self.assertEqual(meta["step_median"], doc["step_time"]["steady_state_steps"]["median"])
        self.assertEqual(meta["stall_share"], doc["time_breakdown"]["stall"]["share_of_total"])
        self.assertEqual(meta["top_pre_gap_op"], doc["gap_before_ops"][0]["name"])
        self.assertEqual(meta["num_hierarchical_regions"], len(doc["hierarchical_regions"]))
        self.assertEqual((meta["schema_version"], meta["run_id"]), ("profile_summary.v1", None))
        # options override the environment; the paths are echoed
        self.import_trace("run:x/y z")
        rep = self.tmp.write("r.md", b"# my report\n")
        r = self.q("SELECT wandb_publish('run:x/y z', ?)", json.dumps(
            {"dry_run": True, "entity": "e2", "project": "p2", "aliases": ["a", "b"],
             "report_path": rep, "summary_path": "/x/s.json"}))
        self.assertEqual(set(r), self.DRY_KEYS)
        self.assertEqual((r["entity"], r["project"], r["aliases"], r["report_path"], r["summary_path"]),
                         ("e2", "p2", ["a", "b"], rep, "/x/s.json"))
        r = self.q("SELECT wandb_publish(1, '{\"dry_run\": true, \"artifact_name\": \"my.name_1\"}')")
        self.assertEqual(r["artifact_name"], "my.name_1")
        # a summary naming its run: profile-summary-<run_metadata.run_id>
        doc["run_metadata"]["run_id"] = "abc123"
        sp = self.tmp.write("s_run.json", json.dumps(doc).encode())
        self.db.execute("SELECT profsum_import(?, 'withrun')", (sp,))
        r = self.q("SELECT wandb_publish('withrun', ?)",
                   json.dumps({"dry_run": True, "summary_path": sp}))
        self.assertEqual((r["artifact_name"], r["metadata"]["run_id"], r["summary_path"]),
                         ("profile-summary-abc123", "abc123", sp))
        # as the reference: an empty artifact_name or aliases list means the default
        r = self.q("SELECT wandb_publish('withrun', ?)",
                   json.dumps({"dry_run": True, "artifact_name": "", "aliases": []}))
        self.assertEqual((r["artifact_name"], r["aliases"]), ("profile-summary-abc123", ["latest"]))
        # a gzipped summary file (profsum_import reads it): the document it
        # holds is sent, as profile_summary.json, not the gzip bytes
        gz = self.tmp.write("s_run.json.gz", gzip.compress(json.dumps(doc).encode()))
        self.db.execute("SELECT profsum_import(?, 'gzrun')", (gz,))
        r = self.q("SELECT wandb_publish('gzrun', ?)",
                   json.dumps({"dry_run": True, "summary_path": gz}))
        self.assertEqual((r["artifact_name"], r["metadata"]["run_id"], r["summary_path"]),
                         ("profile-summary-abc123", "abc123", gz))
        self.assertEqual(self.api.requests + self.storage.requests, [])

    def test_publish(self):
        tid = self.import_trace("t1")
        files = self.expected_files(tid)
        r = self.q("SELECT wandb_publish(?, ?)", tid, json.dumps(
            {"entity": "e", "project": "p", "aliases": ["latest", "best"]}))
        # the request sequence: a dedicated run (no run_metadata), §6.1 P1-P7, finish
        api = [(x["method"], x["path"], x["op"]) for x in self.api.requests]
        run = self.api.upserted[0]["name"]
        self.assertEqual(api, [("POST", "/graphql", op) for op in self.PUB_OPS]
                         + [("POST", "/files/e/p/%s/file_stream" % run, None)])
        art = self.api.artifacts[-1]["id"]
        puts = [(x["method"], x["path"]) for x in self.storage.requests]
        # one file: no summary_path, and no report unless report_path is given
        self.assertEqual(puts, [("PUT", "/upload/%s/profile_summary.json?sig=f" % art),
                                ("PUT", "/upload/manifest-%s?sig=m" % art)])
        # the uploaded bytes are exactly profsum_summary_json + "\n"
        for p, d in files.items():
            self.assertEqual(self.storage.uploads["/upload/%s/%s" % (art, p)], d)
        for x in self.storage.requests[:1]:
            self.assertEqual(x["headers"]["x-test-header"], "yes")
            self.assertNotIn("content-type", x["headers"])
        self.assert_no_key_off_api()
        self.assertTrue(all(x["headers"].get("authorization") == AUTH for x in self.api.requests))
        # the variables of the mutations
        bodies = [json.loads(x["body"]) for x in self.api.requests[:6]]
        up = bodies[0]["variables"]
        name = r["artifact_name"]
        self.assertEqual((up["entity"], up["project"], up["jobType"], up["displayName"]),
                         ("e", "p", "profile-summary-publish", "publish-" + name))
        self.assertRegex(run, "^[a-z0-9]{8}$")
        ca = bodies[1]["variables"]
        self.assertEqual((ca["entityName"], ca["projectName"], ca["artifactTypeName"],
                          ca["artifactCollectionName"], ca["runName"], ca["digest"]),
                         ("e", "p", "profile_summary", name, run,
                          self.manifest_digest(files)))
        self.assertEqual(ca["aliases"], [{"artifactCollectionName": name, "alias": a}
                                         for a in ("latest", "best")])
        self.assertEqual(json.loads(ca["metadata"])["run_id"], None)
        self.assertRegex(ca["clientID"], "^[a-z0-9]{128}$")
        self.assertEqual([b["variables"]["includeUpload"] for b in (bodies[2], bodies[4])],
                         [False, True])
        self.assertEqual(bodies[2]["variables"]["digest"], "")
        man_bytes = self.storage.uploads["/upload/manifest-%s" % art]
        self.assertEqual(bodies[4]["variables"]["digest"], b64md5(man_bytes))
        self.assertEqual(self.api.committed_manifests[art]["contents"], {
            p: {"digest": b64md5(d), "birthArtifactID": art, "size": len(d)} for p, d in files.items()})
        self.assertEqual(self.api.file_streams[-1][1], {"files": {}, "complete": True, "exitcode": 0})
        # the answer (tools-spec §7)
        self.assertEqual(set(r), self.PUB_KEYS)
        self.assertEqual((r["status"], r["entity"], r["project"], r["artifact_type"], r["aliases"],
                          r["artifact_version"], r["summary_path"], r["report_path"]),
                         ("published", "e", "p", "profile_summary", ["latest", "best"], "v0",
                          None, None))
        self.assertRegex(name, r"^profile-summary-\d{8}-\d{6}$")
        # round trip: the published artifact fetches back byte for byte
        f = self.q("SELECT wandb_fetch(?, ?)", "e/p/%s:best" % name, self.dest())
        self.assertEqual(f["id"], art)
        for p, d in files.items():
            with open(self.dest(p), "rb") as fh:
                self.assertEqual(fh.read(), d)
        # the same content again: deduplicated by the server, nothing uploaded;
        # the answer is the same as for new content, with the existing version
        n, na = len(self.storage.requests), len(self.api.artifacts)
        r2 = self.q("SELECT wandb_publish(?, ?)", tid, json.dumps(
            {"entity": "e", "project": "p", "artifact_name": name}))
        self.assertEqual(set(r2), self.PUB_KEYS)
        self.assertEqual((r2["status"], r2["artifact_name"], r2["artifact_version"]),
                         ("published", name, "v0"))
        self.assertEqual(len(self.api.artifacts), na)
        self.assertEqual([x for x in self.storage.requests[n:] if x["method"] == "PUT"], [])

    def test_publish_summary_file(self):
        # the CLI's case: the trace imported from a summary file, which is
        # uploaded as it is under its base name, the report (given) likewise
        import fixtures
        src = self.tmp.write("src.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        self.db.execute("SELECT profsum_import(?, 'src')", (src,))
        doc = json.loads(self.db.execute("SELECT profsum_summary_json('src')").fetchone()[0])
        doc["run_metadata"]["run_id"] = "r42"
        doc["run_metadata"]["run_path"] = "other/proj/r42"    # not the target: a run is created
        sbytes = json.dumps(doc, indent=4, sort_keys=False).encode() + b"\n\n"   # not profsum's form
        sp = self.tmp.write("my_summary.json", sbytes)
        rp = self.tmp.write("notes.md", b"# notes\n")
        tid = self.db.execute("SELECT profsum_import(?, 's')", (sp,)).fetchone()[0]
        r = self.q("SELECT wandb_publish(?, ?)", tid, json.dumps(
            {"entity": "e", "project": "p", "summary_path": sp, "report_path": rp}))
        files = {"my_summary.json": sbytes, "notes.md": b"# notes\n"}
        art = self.api.artifacts[-1]["id"]
        self.assertEqual(set(r), self.PUB_KEYS)
        self.assertEqual((r["status"], r["artifact_name"], r["artifact_version"], r["summary_path"],
                          r["report_path"]),
                         ("published", "profile-summary-r42", "v0", sp, rp))
        self.assertEqual(sorted(x["path"].split("?")[0] for x in self.storage.requests),
                         ["/upload/%s/my_summary.json" % art, "/upload/%s/notes.md" % art,
                          "/upload/manifest-%s" % art])
        for p, d in files.items():
            self.assertEqual(self.storage.uploads["/upload/%s/%s" % (art, p)], d)
        self.assertEqual(self.api.committed_manifests[art]["contents"], {
            p: {"digest": b64md5(d), "birthArtifactID": art, "size": len(d)} for p, d in files.items()})
        ca = json.loads(self.api.requests[1]["body"])["variables"]
        self.assertEqual(ca["digest"], self.manifest_digest(files))
        self.assertEqual(json.loads(ca["metadata"])["run_id"], "r42")
        # a summary_path that is not a summary document (a trace): the summary
        # profsum computes, as profile_summary.json
        d = self.q("SELECT wandb_publish('src', ?)", json.dumps(
            {"entity": "e", "project": "p", "summary_path": src}))
        art2 = self.api.artifacts[-1]["id"]
        self.assertEqual(d["summary_path"], src)
        self.assertEqual(self.api.committed_manifests[art2]["contents"].keys(), {"profile_summary.json"})
        # two files under one name cannot be
        m = self.err("SELECT wandb_publish(?, ?)", tid, json.dumps(
            {"entity": "e", "project": "p", "summary_path": sp,
             "report_path": self.tmp.write("sub/my_summary.json", b"x")}))
        self.assertEqual(m, "wandb_publish: the summary and the report have the same base name "
                            "'my_summary.json' (the artifact holds each file under its base name)")

    def test_cli_publish_and_run_targets(self):
        # profsum publish --summary FILE --report FILE: both files as they
        # are, under their base names; and the run-target errors of §8.1
        cli = os.environ.get("PROFSUM_CLI", os.path.join(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__))), "profsum"))
        if not os.access(cli, os.X_OK) or os.environ.get("LD_PRELOAD"):
            self.skipTest("no profsum CLI")
        import fixtures
        src = self.tmp.write("src.json", fixtures.f1([100, 110, 120, 130, 140, 150], 60))
        out = subprocess.run([cli, "summarize", "--trace-file", src], capture_output=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        sp = self.tmp.write("s1.json", out.stdout)
        rp = self.tmp.write("r.md", b"# report\n")
        p = subprocess.run([cli, "publish", "--summary", sp, "--report", rp, "--entity", "e",
                            "--project", "p", "--artifact-name", "prof", "--alias", "best"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)
        self.assertEqual(r, {"status": "published", "entity": "e", "project": "p",
                             "artifact_name": "prof", "artifact_type": "profile_summary",
                             "aliases": ["best"], "artifact_version": "v0",
                             "summary_path": sp, "report_path": rp})
        art = self.api.artifacts[-1]["id"]
        self.assertEqual(self.storage.uploads["/upload/%s/s1.json" % art], out.stdout)
        self.assertEqual(self.storage.uploads["/upload/%s/r.md" % art], b"# report\n")
        self.assertEqual(sorted(self.api.committed_manifests[art]["contents"]), ["r.md", "s1.json"])
        # run targets: the target's form is checked before the API key
        env = dict(os.environ)
        env.pop("WANDB_API_KEY")
        for target, want in [
                ("abc", "profsum summarize: profsum_import: Bare run ids require --entity and "
                        "--project. (run id 'abc'; give --entity/--project or WANDB_ENTITY/WANDB_PROJECT)"),
                ("e/p", "profsum summarize: profsum_import: Unrecognized run target: e/p (expected "
                        "run_id, entity/project/run_id, entity/project/runs/run_id or a run url)"),
                ("https://wandb.ai/e/p", "profsum summarize: profsum_import: Could not parse run "
                                         "information from URL: https://wandb.ai/e/p")]:
            p = subprocess.run([cli, "summarize", "--run-target", target], capture_output=True,
                               text=True, timeout=120, env=env)
            self.assertEqual((p.returncode, p.stderr.strip()), (1, want))

    def test_publish_upload_on_api_host_gets_no_key(self):
        # even an upload URL on the API host itself is sent without the key
        self.api.upload_target = self.api
        self.import_trace("t1")
        os.environ["WANDB_ENTITY"] = "e"
        os.environ["WANDB_PROJECT"] = "p"
        self.q("SELECT wandb_publish('t1')")
        puts = [x for x in self.api.requests if x["method"] == "PUT"]
        self.assertEqual(len(puts), 2)
        for x in puts:
            self.assertNotIn("authorization", x["headers"])
        for x in self.api.requests:
            if x["method"] == "POST":
                self.assertEqual(x["headers"].get("authorization"), AUTH)

    def test_publish_same_host_s3_style(self):
        # uploads to S3-style storage on the API's own host and port, then
        # the published artifact fetched back from there
        self.api.serve_storage_here(s3_style=True)
        tid = self.import_trace("t1")
        files = self.expected_files(tid)
        r = self.q("SELECT wandb_publish(?, '{\"entity\":\"e\",\"project\":\"p\"}')", tid)
        self.assertEqual(r["status"], "published")
        art = self.api.artifacts[-1]["id"]
        puts = [x["path"].split("?")[0] for x in self.api.requests if x["method"] == "PUT"]
        self.assertEqual(puts, ["/storage/upload/%s/%s" % (art, p) for p in sorted(files)]
                         + ["/storage/upload/manifest-%s" % art])
        self.q("SELECT wandb_fetch(?, ?)", "e/p/%s:%s" % (r["artifact_name"], r["artifact_version"]),
               self.dest())
        for p, d in files.items():
            with open(self.dest(p), "rb") as fh:
                self.assertEqual(fh.read(), d)
        self.assert_key_only_to_api(self.api)
        streams = [x for x in self.api.requests if x["path"].endswith("/file_stream")]
        self.assertEqual([x["headers"].get("authorization") for x in streams], [AUTH])

    def test_publish_attached_to_profiled_run(self):
        import gzip
        import fixtures
        trace = gzip.compress(json.dumps(fixtures.f1([100, 110, 120, 130, 140, 150], 60)).encode())
        prof = self.api.add_artifact("e", "p", "run-xyz-profiler", 0,
                                     {"plugins/profile/2026_01_01_00_00_00/host.trace.json.gz": trace},
                                     aliases=["latest"])
        self.api.add_run("e", "p", "xyz", [prof])
        tid = self.db.execute("SELECT profsum_import('wandb-run:e/p/xyz')").fetchone()[0]
        n = len(self.api.requests)
        r = self.q("SELECT wandb_publish(?, '{\"entity\":\"e\",\"project\":\"p\"}')", tid)
        self.assertEqual([x["op"] for x in self.api.requests[n:]], self.PUB_OPS[1:])
        self.assertEqual(json.loads(self.api.requests[n]["body"])["variables"]["runName"], "xyz")
        # the default name is profile-summary-<run_metadata.run_id>
        self.assertEqual((r["artifact_name"], r["artifact_version"]), ("profile-summary-xyz", "v0"))
        self.assertIn(self.api.artifacts[-1]["id"], self.api.runs[("e", "p", "xyz")]["outputs"])
        self.assertEqual(self.api.file_streams, [])
        # another target project: the profiled run is not there, a run is created
        n = len(self.api.requests)
        d = self.q("SELECT wandb_publish(?, '{\"entity\":\"e\",\"project\":\"q\"}')", tid)
        self.assertEqual([x["op"] for x in self.api.requests[n:]][:2], self.PUB_OPS[:2])
        self.assertEqual(d["artifact_name"], "profile-summary-xyz")
        d = self.q("SELECT wandb_publish(?, '{\"entity\":\"e\",\"project\":\"q\",\"dry_run\":true}')", tid)
        self.assertEqual(d["metadata"]["source_artifact_ref"], "e/p/run-xyz-profiler:v0")

    def test_publish_401(self):
        self.import_trace("t1")
        os.environ["WANDB_API_KEY"] = "f" * 40
        m = self.err("SELECT wandb_publish('t1', '{\"entity\":\"e\",\"project\":\"p\"}')")
        self.assertEqual(m, "wandb_publish: graphql UpsertBucket: authentication failed "
                            "(http 401: permission denied); check WANDB_API_KEY or the netrc "
                            "entry for '127.0.0.1:%d'" % self.api.port)
        self.assertEqual(self.storage.requests, [])

    def test_publish_500_then_success(self):
        self.import_trace("t1")
        self.api.faults["500"] = 1
        self.storage.faults["put_500"] = 1
        r = self.q("SELECT wandb_publish('t1', '{\"entity\":\"e\",\"project\":\"p\"}')")
        self.assertEqual((r["status"], r["artifact_version"]), ("published", "v0"))
        self.assertEqual([x["op"] for x in self.api.requests][:2], ["UpsertBucket", "UpsertBucket"])
        self.assertEqual([x["path"].split("?")[0].rsplit("/", 1)[1] for x in self.storage.requests],
                         ["profile_summary.json", "profile_summary.json",
                          "manifest-" + self.api.artifacts[-1]["id"]])
        self.assert_no_key_off_api()

    def test_publish_upload_fails(self):
        self.import_trace("t1")
        self.storage.faults["put_500"] = 100
        os.environ["PROFSUM_WANDB_MAX_RETRY_SECONDS"] = "0"
        m = self.err("SELECT wandb_publish('t1', '{\"entity\":\"e\",\"project\":\"p\"}')")
        self.assertEqual(m, "wandb_publish: upload of 'profile_summary.json': http 500 "
                            "(gave up after 1 attempt)")
        # the run created for it is marked finished, as failed; nothing committed
        self.assertEqual(self.api.file_streams[-1][1]["exitcode"], 1)
        self.assertNotIn("CommitArtifact", [x["op"] for x in self.api.requests])
        self.assert_no_key_off_api()

    def test_publish_errors(self):
        self.import_trace("t1")
        m = self.err("SELECT wandb_publish('t1')")
        self.assertEqual(m, "wandb_publish: no target: needs an entity and a project "
                            "(options entity/project or WANDB_ENTITY/WANDB_PROJECT)")
        os.environ["WANDB_ENTITY"] = "e"
        m = self.err("SELECT wandb_publish('t1', '{\"dry_run\": true}')")
        self.assertIn("wandb_publish: no target: needs a project (", m)
        m = self.err("SELECT wandb_publish('t1', '{\"project\": \"p\", \"entity\": \"\"}')")
        self.assertEqual(m, "wandb_publish: option 'entity' must be a non-empty string")
        os.environ["WANDB_PROJECT"] = "p"
        m = self.err("SELECT wandb_publish('nope')")
        self.assertEqual(m, "wandb_publish: no trace with label 'nope'; the newest labels: 't1' (of 1)")
        m = self.err("SELECT wandb_publish('t1', '{\"bogus\": 1}')")
        self.assertIn("wandb_publish: unknown option 'bogus'", m)
        m = self.err("SELECT wandb_publish('t1', '{\"artifact_name\": \"a/b\"}')")
        self.assertIn("wandb_publish: invalid artifact_name 'a/b'", m)
        m = self.err("SELECT wandb_publish('t1', '{\"aliases\": [\"v:1\"]}')")
        self.assertIn("wandb_publish: invalid alias 'v:1'", m)
        m = self.err("SELECT wandb_publish('t1', '[1]')")
        self.assertEqual(m, "wandb_publish: options_json must be a JSON object")
        m = self.err("SELECT wandb_publish('t1', '{\"report_path\": \"/nonexistent/r.md\"}')")
        self.assertEqual(m, "wandb_publish: cannot read report_path '/nonexistent/r.md': "
                            "No such file or directory")
        self.assertEqual(self.api.requests, [])

    def test_error_page_read_is_bounded(self):
        # a 404 whose body claims 64 MiB: the transfer stops after 1 MiB of
        # it, and the status still makes the message
        sent = {"n": 0}

        def big(h):
            h.send_response(404)
            h.send_header("Content-Length", str(64 << 20))
            h.end_headers()
            try:
                for _ in range(64):
                    h.wfile.write(b"x" * (1 << 20))
                    sent["n"] += 1 << 20
            except OSError:
                pass
        answer(self.storage, "GET", big)
        msg = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("not found (http 404)", msg)
        # at most the 1 MiB read and what the sockets' buffers took, per attempt
        self.assertLess(sent["n"], 16 << 20)

    def test_url_of_another_scheme_is_refused(self):
        # a file URL the API hands out is neither fetched nor written: every
        # URL profsum requests must be http or https
        orig = self.api.graphql

        def graphql(op, v):
            r = orig(op, v)
            if op == "ArtifactFileURLs":
                for e in r["data"]["artifact"]["files"]["edges"]:
                    e["node"]["directUrl"] = "file:///etc/hostname"
            return r
        self.api.graphql = graphql
        msg = self.err("SELECT wandb_fetch('e/p/run-abc-profiler', ?)", self.dest())
        self.assertIn("refusing a URL that is not http or https: file:///etc/hostname", msg)
        self.assertEqual(walk(self.dest()) if os.path.isdir(self.dest()) else [], [])

    def test_libcurl_without_protocol_options(self):
        # a libcurl that knows neither way to restrict protocols (older than
        # 7.85 has only the bit masks; here neither): profsum follows the
        # redirects of a download itself and checks each Location's scheme
        import shutil
        cc = shutil.which("cc")
        if cc is None:
            self.skipTest("no C compiler for the libcurl shim")
        shim_c = os.path.join(self.tmp.path, "shim.c")
        shim = os.path.join(self.tmp.path, "libcurl_shim.so")
        with open(shim_c, "w") as f:
            f.write(SHIM_C)
        # libcurl a dependency even though the shim calls it only by dlsym
        subprocess.run([cc, "-shared", "-fPIC", "-o", shim, shim_c, "-Wl,--no-as-needed", "-lcurl", "-ldl"],
                       check=True)
        self.api.faults["redirect"] = 100      # every file: 302 from the API host to storage
        self.api.blob_base = lambda: self.api.url
        self.storage.blobs.update(self.api.blobs)
        self.storage.manifests.update(self.api.manifests)
        from util import SO
        body = ("import json\n"
                "try:\n"
                "    r = json.loads(db.execute(\"SELECT wandb_fetch('e/p/run-abc-profiler', ?)\", (%r,)).fetchone()[0])\n"
                "    print(len(r['files']))\n"
                "except sqlite3.OperationalError as e:\n"
                "    print(e)\n")
        out = run_loaded(SO, body % self.dest("a"), dict(os.environ, PROFSUM_LIBCURL=shim))
        self.assertEqual(out, ["2"])
        self.assert_fetched(self.dest("a"))
        self.assert_no_key_off_api()
        # the storage host's address made a gopher URL: the hop is refused
        real = self.storage
        self.api.storage = type("Gopher", (), {"url": "gopher://127.0.0.1:9"})()
        try:
            out = run_loaded(SO, body % self.dest("b"), dict(os.environ, PROFSUM_LIBCURL=shim))
        finally:
            self.api.storage = real
        self.assertEqual(len(out), 1)
        self.assertIn("refusing a URL that is not http or https: gopher://127.0.0.1:9/files/", out[0])
        self.assertFalse(os.path.exists(self.dest("b", P0)))

    def test_libcurl_opened_on_first_use(self):
        # profsum.so does not link libcurl (7 ms of loading); the first
        # network call opens it.  profsum_debug() (INNOCUOUS: it may run from
        # a view of an untrusted database) opens nothing: "not loaded" until
        # a W&B function has opened libcurl, its version after
        from util import SO
        out = run_loaded(SO, "import os\n"
                             "def mapped():\n"
                             "    return any('libcurl' in l for l in open('/proc/self/maps'))\n"
                             "def curl_line():\n"
                             "    return [l for l in db.execute('SELECT * FROM v').fetchone()[0].splitlines()\n"
                             "            if l.startswith('libcurl:')][0]\n"
                             "print(mapped())\n"
                             "db.execute('SELECT profsum_version()').fetchone()\n"
                             "db.execute('CREATE VIEW v AS SELECT profsum_debug()')\n"
                             "print(curl_line())\n"
                             "print(db.execute('SELECT profsum_debug()').fetchone()[0].count('libcurl: not loaded'))\n"
                             "print(mapped())\n"
                             "os.environ.pop('WANDB_API_KEY', None)\n"
                             "try:\n"
                             "    db.execute(\"SELECT wandb_fetch('e/p/a')\").fetchone()\n"
                             "except sqlite3.OperationalError as e:\n"
                             "    print(str(e)[:28])\n"
                             "print(mapped())\n"
                             "print(curl_line()[:17])\n")
        self.assertEqual(out, ["False", "libcurl: not loaded (opened at the first network call)",
                               "1", "False", "wandb_fetch: no api key for ", "True",
                               "libcurl: libcurl/"])
        # PROFSUM_LIBCURL is not opened by profsum_debug() either
        env = dict(os.environ, PROFSUM_LIBCURL="/nonexistent/libcurl.so.4")
        out = run_loaded(SO, "print([l for l in db.execute('SELECT profsum_debug()').fetchone()[0].splitlines()\n"
                             "       if l.startswith('libcurl:')][0])\n"
                             "print(any('libcurl' in l for l in open('/proc/self/maps')))\n", env)
        self.assertEqual(out, ["libcurl: not loaded (opened at the first network call)", "False"])
        elf = subprocess.run(["readelf", "-d", SO], capture_output=True, text=True, check=True).stdout
        self.assertNotIn("libcurl", elf)
        self.assertIn("libz", elf)

    def test_libcurl_that_cannot_be_opened(self):
        # PROFSUM_LIBCURL names the library to open; when it cannot be
        # opened the W&B functions say so, and everything else works
        from util import SO
        env = dict(os.environ, PROFSUM_LIBCURL="/nonexistent/libcurl.so.4",
                   WANDB_API_KEY=DEFAULT_KEY, WANDB_BASE_URL=self.api.url)
        out = run_loaded(SO, "print(db.execute('SELECT profsum_version() IS NOT NULL').fetchone()[0])\n"
                             "for i in range(2):\n"
                             "    try:\n"
                             "        db.execute(\"SELECT wandb_fetch('e/p/a:v0')\").fetchone()\n"
                             "        print('no error')\n"
                             "    except sqlite3.OperationalError as e:\n"
                             "        print(e)\n", env)
        self.assertEqual(out[0], "1")
        self.assertEqual(len(out), 3)
        for line in out[1:]:
            self.assertTrue(line.startswith("wandb_fetch: cannot open libcurl at "
                                            "PROFSUM_LIBCURL=/nonexistent/libcurl.so.4: "), line)
        self.assertEqual(self.api.requests, [])

    @unittest.skipUnless(os.path.exists(NONET_SO), "no NETWORK=0 build at " + NONET_SO)
    def test_no_network_build(self):
        # in a separate process: two builds in one process would share symbols
        out = run_loaded(NONET_SO,
                         "for sql in ['SELECT wandb_fetch(\\'e/p/n\\')', 'SELECT wandb_fetch_run(\\'e/p/r\\')',\n"
                         "            'SELECT wandb_publish(\\'t\\')']:\n"
                         "    try:\n"
                         "        db.execute(sql).fetchone()\n"
                         "        print('no error')\n"
                         "    except sqlite3.OperationalError as e:\n"
                         "        print(e)\n")
        self.assertEqual(out, ["%s: profsum was built without network support (make NETWORK=0)"
                               % fn for fn in ("wandb_fetch", "wandb_fetch_run", "wandb_publish")])
        self.assertEqual(self.api.requests, [])
        nm = subprocess.run(["nm", "-D", NONET_SO], capture_output=True, text=True).stdout
        self.assertNotIn("curl", nm)

if __name__ == "__main__":
    unittest.main()
