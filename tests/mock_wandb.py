"""A loopback mock of the W&B endpoints profsum talks to (wandb-http.md §8).

MockWandb() starts a ThreadingHTTPServer on 127.0.0.1 (free port) that
answers:
  POST /graphql        by operation name (the word after "query "):
                       ArtifactByName, FetchArtifactManifest, ArtifactFileURLs,
                       ArtifactFileURLByName (files(names: [...], first: 1)),
                       RunOutputArtifacts, RunInfo, ArtifactCreatedBy;
                       401 {"errors":[{"message":"permission denied"}]} when
                       the Authorization header is not Basic api:<key>;
  GET  /files/...      manifests (/files/manifest-<n>.json) and file bodies
                       (/files/<md5 hex>), without auth;
  GET  /storage/manifests/<name>, /storage/files/<md5 hex>  the same, under
                       the paths the same-host mode hands out (below);
  GET  /artifactsV2/<region>/<entity>/<birth id>/<md5 hex>  the legacy
                       download URL (auth required).

Publishing (wandb-http.md §6.1, §6.2 option 2) on the API instance:
  POST /graphql        UpsertBucket (creates the run), CreateArtifact (a
                       digest equal to a committed version of the collection
                       answers state COMMITTED: deduplication; runName must
                       be a known run), CreateArtifactManifest,
                       CreateArtifactFiles (uploadUrl null for bytes the
                       upload server already holds), CommitArtifact (reads the
                       uploaded manifest, checks every file arrived, then
                       registers the version so wandb_fetch can read it);
  POST /files/<e>/<p>/<run>/file_stream  recorded in .file_streams;
  PUT  /upload/...     on the upload server (api.upload_target, default the
                       storage instance): stores the body in .uploads (and
                       .blobs by MD5); a Content-MD5 header must match.
Recorded requests of POST and PUT carry their "body" (bytes).

A second instance serves as another host ("storage"): api.storage = other
makes every directUrl point at it (the default in the tests), and the
"redirect" fault makes the API's /files/ answer 302 to it.

Same-host mode, api.serve_storage_here(s3_style=False): manifests, files and
uploads are served by the API's own host and port, as a self-hosted W&B
server does: directUrls are /storage/manifests/<name>?sig=x and
/storage/files/<md5>?sig=..., upload URLs /storage/upload/... (stored in
.uploads under /upload/..., as in the other modes).

S3-style storage (.s3_style = True, also on a storage instance): a storage
request (GET of a manifest or file, PUT of an upload) that carries an
Authorization header is answered 400 InvalidArgument "Only one auth
mechanism allowed", as S3 answers a presigned URL sent with a second
credential.

Every request is recorded in .requests as dicts (method, path, headers, op,
body, auth: whether it carried an Authorization header, storage: whether it
is a storage request) so tests can check where the key went;
storage_requests() and keyed_requests() select them.

Faults (mock.faults, a dict; counts are decremented per use):
  "401": n          answer /graphql with 401
  "403_echo": n     answer /graphql 403 with the key echoed in the message
  "404": n          answer /graphql with 404 (JSON error body)
  "429": n          answer /graphql with 429 and Retry-After: 1
  "500": n          answer /graphql with 500
  "errors": n       answer /graphql 200 {"data":null,"errors":[{"message":"boom"}]}
  "errors_<Op>": n  the same, only for operation <Op>
  "gql_redirect": n answer /graphql with 307 to the storage host (to this
                    host's /graphql in the same-host mode)
  "slow": seconds   sleep that long before answering /files/ (not manifests)
  "slow_once": s    the same, only for the first file request
  "truncate": n     /files/<md5> announces more bytes than it sends, then closes
  "wrong_digest": n /files/<md5> serves tampered bytes
  "redirect": n     /files/ on this server answers 302 to the storage server
  "omit_urls": True ArtifactFileURLs returns no edges (legacy URL fallback)
  "legacy_redirect": n  an authorized /artifactsV2/ request answers 302 to the
                    file's storage URL (the storage host, or this host's
                    /storage/files/ in the same-host mode)
  "expired": n      /files/<md5> URLs handed out by ArtifactFileURLs (?sig=list)
                    answer 403 "Request has expired", as S3 does
  "expired_fresh": n  the same for URLs from ArtifactFileURLByName (?sig=fresh)
  "no_fresh": True  ArtifactFileURLByName returns no edges
  "page_size": k    page size for ArtifactFileURLs and RunOutputArtifacts
  "put_500": n      answer PUT /upload/ with 500
"""
import base64
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_KEY = "0123456789abcdef0123456789abcdef01234567"


def b64md5(data):
    return base64.b64encode(hashlib.md5(data).digest()).decode()


class MockWandb:
    """One mock server (API and/or storage role)."""

    def __init__(self, key=DEFAULT_KEY):
        self.key = key
        self.lock = threading.Lock()
        self.requests = []
        self.faults = {}
        self.blobs = {}          # md5 hex -> bytes
        self.manifests = {}      # "manifest-<n>.json" -> bytes
        self.artifacts = []      # dicts, see add_artifact
        self.runs = {}           # (entity, project, run) -> dict
        self.projects = set()
        self.storage = None      # another MockWandb for directUrls
        self.upload_target = None  # the MockWandb receiving uploads (default storage)
        self.uploads = {}        # PUT path (no query) -> bytes
        self.pending = {}        # artifact id -> publish state (CreateArtifact..Commit)
        self.upserted = []       # UpsertBucket variables
        self.file_streams = []   # (path, parsed body)
        self.committed_manifests = {}  # artifact id -> parsed manifest
        self.same_host = False   # serve_storage_here(): storage under /storage/
        self.s3_style = False    # reject storage requests that carry a key
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.httpd.daemon_threads = True
        self.httpd.handle_error = self._handle_error
        self.port = self.httpd.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def _handle_error(request, client_address):
        """Clients that hang up early (timeouts, size limits) are expected."""
        import sys
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            import traceback
            traceback.print_exc()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- data -------------------------------------------------------------
    def auth_header(self):
        return "Basic " + base64.b64encode(("api:" + self.key).encode()).decode()

    def blob_base(self):
        return (self.storage or self).url

    def serve_storage_here(self, s3_style=False):
        """Same-host mode: this server hands out (and serves) manifest,
        file and upload URLs under its own /storage/ path."""
        self.storage = None
        self.upload_target = None
        self.same_host = True
        self.s3_style = s3_style

    def storage_dir(self):
        """Path prefix of the storage URLs this server hands out."""
        return "/storage" if self.same_host and self.storage is None else ""

    @staticmethod
    def is_storage(method, path):
        """Is a request of method to path (query included) a storage one?"""
        path = path.split("?", 1)[0]
        if method == "PUT":
            return True
        return method == "GET" and path.startswith(("/files/", "/storage/"))

    def storage_requests(self):
        with self.lock:
            return [r for r in self.requests if r["storage"]]

    def keyed_requests(self):
        """The requests that carried an Authorization header."""
        with self.lock:
            return [r for r in self.requests if r["auth"]]

    def add_artifact(self, entity, project, name, version, files, type_="jax_profile",
                     state="COMMITTED", aliases=(), created_at="2025-01-02T03:04:05",
                     art_id=None, manifest_extra=None, sizes=True, created_by=None):
        """Register an artifact version; files maps path -> bytes.  Returns its id."""
        art_id = art_id or base64.b64encode(
            ("Artifact:%d" % (1000 + len(self.artifacts))).encode()).decode()
        contents = {}
        for path, data in files.items():
            h = hashlib.md5(data).hexdigest()
            self.blobs[h] = data
            ent = {"digest": b64md5(data), "birthArtifactID": art_id}
            if sizes:
                ent["size"] = len(data)
            contents[path] = ent
        if manifest_extra:
            contents.update(manifest_extra)
        man = {"version": 1, "storagePolicy": "wandb-storage-policy-v1",
               "storagePolicyConfig": {"storageLayout": "V2"},
               "contents": dict(sorted(contents.items()))}
        mname = "manifest-%d.json" % len(self.manifests)
        self.manifests[mname] = json.dumps(man).encode()
        if self.storage is not None:
            self.storage.manifests[mname] = self.manifests[mname]
            self.storage.blobs.update(self.blobs)
        self.projects.add((entity, project))
        self.artifacts.append({
            "id": art_id, "entity": entity, "project": project, "name": name,
            "version": version, "type": type_, "state": state,
            "aliases": ["v%d" % version] + list(aliases), "createdAt": created_at,
            "manifest": mname, "contents": contents, "created_by": created_by})
        return art_id

    def add_run(self, entity, project, run, outputs, config=None, summary=None):
        self.projects.add((entity, project))
        self.runs[(entity, project, run)] = {
            "outputs": outputs, "config": config or {}, "summary": summary or {}}

    def uploader(self):
        return self.upload_target or self.storage or self

    def requests_to(self, prefix):
        with self.lock:
            return [r for r in self.requests if r["path"].startswith(prefix)]

    def fault(self, name):
        """Consume one use of a counted fault; True if it applies."""
        with self.lock:
            v = self.faults.get(name)
            if not v:
                return False
            if v is not True:
                self.faults[name] = v - 1
            return True

    # -- GraphQL ----------------------------------------------------------
    def _node(self, a, full=True):
        node = {"id": a["id"], "state": a["state"], "versionIndex": a["version"],
                "createdAt": a["createdAt"], "artifactType": {"name": a["type"]},
                "artifactSequence": {"name": a["name"], "project": {
                    "name": a["project"], "entity": {"name": a["entity"]}}},
                "aliases": [{"alias": x} for x in a["aliases"]]}
        if full:
            node.update({"digest": "0" * 32, "size": 0, "fileCount": len(a["contents"]),
                         "currentManifest": {"file": {"directUrl": self._manifest_url(a)}}})
        return node

    def _manifest_url(self, a):
        if self.storage_dir():
            return "%s/storage/manifests/%s?sig=x" % (self.url, a["manifest"])
        return "%s/files/%s?sig=x" % (self.blob_base(), a["manifest"])

    def _blob_url(self, md5_hex, sig):
        if self.storage_dir():
            return "%s/storage/files/%s?sig=%s" % (self.url, md5_hex, sig)
        return "%s/files/%s?sig=%s" % (self.blob_base(), md5_hex, sig)

    def _by_id(self, art_id):
        for a in self.artifacts:
            if a["id"] == art_id:
                return a
        return None

    def _page(self, items, cursor, per_page):
        size = self.faults.get("page_size") or per_page or 1000
        start = int(cursor[1:]) if cursor else 0
        chunk = items[start:start + size]
        end = start + len(chunk)
        return chunk, {"hasNextPage": end < len(items), "endCursor": "c%d" % end}

    def graphql(self, op, v):
        if op == "ArtifactByName":
            if (v["entity"], v["project"]) not in self.projects:
                return {"data": {"project": None}}
            coll, _, alias = v["name"].partition(":")
            for a in self.artifacts:
                if (a["entity"], a["project"], a["name"]) == (v["entity"], v["project"], coll) \
                        and alias in a["aliases"]:
                    return {"data": {"project": {"artifact": self._node(a)}}}
            return {"data": {"project": {"artifact": None}}}
        if op == "FetchArtifactManifest":
            a = self._by_id(v["id"])
            return {"data": {"artifact": a and {"currentManifest": {"file": {
                "directUrl": self._manifest_url(a)}}}}}
        if op == "ArtifactFileURLs":
            a = self._by_id(v["id"])
            if a is None:
                return {"data": {"artifact": None}}
            names = [] if self.faults.get("omit_urls") else sorted(a["contents"])
            chunk, info = self._page(names, v.get("cursor"), v.get("perPage"))
            edges = []
            for n in chunk:
                digest = a["contents"][n]["digest"]
                h = base64.b64decode(digest).hex() if len(digest) == 24 else "x"
                edges.append({"node": {"name": n, "directUrl": self._blob_url(h, "list")}})
            return {"data": {"artifact": {"files": {"pageInfo": info, "edges": edges}}}}
        if op == "ArtifactFileURLByName":
            a = self._by_id(v["id"])
            if a is None:
                return {"data": {"artifact": None}}
            names = [] if self.faults.get("no_fresh") else \
                [n for n in sorted(a["contents"]) if n in (v.get("names") or [])][:1]
            edges = []
            for n in names:
                digest = a["contents"][n]["digest"]
                h = base64.b64decode(digest).hex() if len(digest) == 24 else "x"
                edges.append({"node": {"name": n, "directUrl": self._blob_url(h, "fresh")}})
            return {"data": {"artifact": {"files": {"edges": edges}}}}
        if op == "RunOutputArtifacts":
            if (v["entity"], v["project"]) not in self.projects:
                return {"data": {"project": None}}
            run = self.runs.get((v["entity"], v["project"], v["run"]))
            if run is None:
                return {"data": {"project": {"run": None}}}
            chunk, info = self._page(run["outputs"], v.get("cursor"), v.get("perPage"))
            edges = [{"cursor": "c", "node": self._node(self._by_id(i), full=False)} for i in chunk]
            return {"data": {"project": {"run": {"outputArtifacts": {
                "totalCount": len(run["outputs"]), "pageInfo": info, "edges": edges}}}}}
        if op == "RunInfo":
            if (v["entity"], v["project"]) not in self.projects:
                return {"data": {"project": None}}
            run = self.runs.get((v["entity"], v["project"], v["run"]))
            if run is None:
                return {"data": {"project": {"run": None}}}
            cfg = {k: {"value": val, "desc": None} for k, val in run["config"].items()}
            return {"data": {"project": {"run": {
                "id": "UnVuOjE=", "name": v["run"], "displayName": "d", "state": "finished",
                "createdAt": "2025-01-01T00:00:00", "host": "h", "commit": None,
                "config": json.dumps(cfg), "summaryMetrics": json.dumps(run["summary"])}}}}
        if op == "ArtifactCreatedBy":
            a = self._by_id(v["id"])
            by = a and a["created_by"]
            node = None
            if by:
                node = {"__typename": "Run", "name": by[2],
                        "project": {"name": by[1], "entity": {"name": by[0]}}}
            return {"data": {"artifact": a and {"createdBy": node}}}
        if op in ("UpsertBucket", "CreateArtifact", "CreateArtifactManifest",
                  "CreateArtifactFiles", "CommitArtifact"):
            return self.publish_op(op, v)
        return {"errors": [{"message": "unknown operation %s" % op}]}

    # -- publishing ---------------------------------------------------------
    def publish_op(self, op, v):
        up = self.uploader()
        if op == "UpsertBucket":
            self.upserted.append(v)
            self.projects.add((v["entity"], v["project"]))
            self.runs.setdefault((v["entity"], v["project"], v["name"]),
                                 {"outputs": [], "config": {}, "summary": {}})
            return {"data": {"upsertBucket": {"bucket": {
                "id": "UnVuOjk5", "name": v["name"], "displayName": v.get("displayName"),
                "description": None, "config": "{}", "sweepName": None,
                "project": {"id": "UHJvamVjdDox", "name": v["project"],
                            "entity": {"id": "RW50aXR5OjE=", "name": v["entity"]}},
                "historyLineCount": 0}, "inserted": True}}}
        if op == "CreateArtifact":
            key = (v["entityName"], v["projectName"], v.get("runName"))
            if v.get("runName") is None or key not in self.runs:
                return {"errors": [{"message": "run %s not found" % (v.get("runName"),)}]}
            same = [a for a in self.artifacts if (a["entity"], a["project"], a["name"]) ==
                    (v["entityName"], v["projectName"], v["artifactCollectionName"])]
            latest = max(same, key=lambda a: a["version"]) if same else None
            for a in same:
                if a.get("digest") == v["digest"]:
                    return {"data": {"createArtifact": {"artifact": {
                        "id": a["id"], "state": "COMMITTED", "versionIndex": a["version"],
                        "artifactSequence": {"latestArtifact": {"id": latest["id"]}}}}}}
            art_id = base64.b64encode(("Artifact:%d" % (2000 + len(self.pending))).encode()).decode()
            self.pending[art_id] = dict(v, state="PENDING", files={}, manifest_ids=[])
            return {"data": {"createArtifact": {"artifact": {
                "id": art_id, "state": "PENDING", "versionIndex": None,
                "artifactSequence": {"latestArtifact": latest and {"id": latest["id"]}}}}}}
        if op == "CreateArtifactManifest":
            st = self.pending.get(v["artifactID"])
            if st is None:
                return {"errors": [{"message": "no such artifact"}]}
            mid = "QXJ0aWZhY3RNYW5pZmVzdDo%d" % len(st["manifest_ids"])
            st["manifest_ids"].append((mid, v))
            f = {"id": "RmlsZTox"}
            if v["includeUpload"]:
                f["uploadUrl"] = "%s%s/upload/manifest-%s?sig=m" % (
                    up.url, up.storage_dir(), v["artifactID"])
                f["uploadHeaders"] = []
            return {"data": {"createArtifactManifest": {"artifactManifest": {"id": mid, "file": f}}}}
        if op == "CreateArtifactFiles":
            edges = []
            for spec in v["artifactFiles"]:
                st = self.pending.get(spec["artifactID"])
                if st is None:
                    return {"errors": [{"message": "no such artifact"}]}
                st["files"][spec["name"]] = spec["md5"]
                h = base64.b64decode(spec["md5"]).hex()
                have = h in up.blobs
                edges.append({"node": {
                    "storagePath": "wandb_artifacts/%s" % h,
                    "uploadUrl": None if have else "%s%s/upload/%s/%s?sig=f" % (
                        up.url, up.storage_dir(), spec["artifactID"], spec["name"]),
                    "uploadHeaders": None if have else [
                        "Content-MD5:%s" % spec["md5"], "x-test-header:  yes"],
                    "artifact": {"id": spec["artifactID"]}}})
            return {"data": {"createArtifactFiles": {"files": {"edges": edges}}}}
        if op == "CommitArtifact":
            st = self.pending.get(v["artifactID"])
            if st is None:
                return {"errors": [{"message": "no such artifact"}]}
            raw = up.uploads.get("/upload/manifest-%s" % v["artifactID"])
            if raw is None:
                return {"errors": [{"message": "manifest not uploaded"}]}
            man = json.loads(raw)
            files = {}
            for path, ent in man["contents"].items():
                h = base64.b64decode(ent["digest"]).hex()
                if h not in up.blobs or st["files"].get(path) != ent["digest"]:
                    return {"errors": [{"message": "file %s not uploaded" % path}]}
                files[path] = up.blobs[h]
            e, p, n = st["entityName"], st["projectName"], st["artifactCollectionName"]
            version = len([a for a in self.artifacts
                           if (a["entity"], a["project"], a["name"]) == (e, p, n)])
            aliases = [x["alias"] for x in st["aliases"] or []]
            for a in self.artifacts:
                if (a["entity"], a["project"], a["name"]) == (e, p, n):
                    a["aliases"] = [x for x in a["aliases"] if x not in aliases]
            self.add_artifact(e, p, n, version, files, type_=st["artifactTypeName"],
                              aliases=aliases, art_id=v["artifactID"],
                              created_by=(e, p, st["runName"]))
            self.artifacts[-1]["digest"] = st["digest"]
            self.artifacts[-1]["metadata"] = st["metadata"]
            self.runs[(e, p, st["runName"])]["outputs"].append(v["artifactID"])
            self.committed_manifests[v["artifactID"]] = man
            del self.pending[v["artifactID"]]
            return {"data": {"commitArtifact": {"artifact": {
                "id": v["artifactID"], "digest": st["digest"], "versionIndex": version}}}}


def _make_handler(mock):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _send(self, code, body=b"", headers=None, ctype="application/json"):
            if isinstance(body, (dict, list)):
                body = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _record(self, op=None, body=None):
            with mock.lock:
                mock.requests.append({"method": self.command, "path": self.path,
                                      "headers": {k.lower(): v for k, v in self.headers.items()},
                                      "op": op, "body": body,
                                      "auth": "Authorization" in self.headers,
                                      "storage": mock.is_storage(self.command, self.path)})

        def _authorized(self):
            return self.headers.get("Authorization") == mock.auth_header()

        def _s3_refused(self):
            """S3-style storage: a request with a second credential (the
            Authorization header next to the presigned query) gets 400."""
            if not (mock.s3_style and "Authorization" in self.headers):
                return False
            self._send(400, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                       b"<Error><Code>InvalidArgument</Code><Message>Only one auth "
                       b"mechanism allowed; only the X-Amz-Algorithm query parameter, "
                       b"Signature query string parameter or the Authorization header "
                       b"should be specified</Message><ArgumentName>Authorization"
                       b"</ArgumentName></Error>", ctype="application/xml")
            return True

        def do_PUT(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n)
            self._record(body=raw)
            path = self.path.split("?", 1)[0]
            if path.startswith("/storage/upload/"):
                path = path[len("/storage"):]
            if not path.startswith("/upload/"):
                return self._send(404, {"error": "no such endpoint"})
            if self._s3_refused():
                return
            if mock.fault("put_500"):
                return self._send(500, b"<Error>InternalError</Error>", ctype="application/xml")
            md5 = self.headers.get("Content-MD5")
            if md5 is not None and md5 != b64md5(raw):
                return self._send(400, b"<Error>BadDigest</Error>", ctype="application/xml")
            with mock.lock:
                mock.uploads[path] = raw
                mock.blobs[hashlib.md5(raw).hexdigest()] = raw
            self._send(200, b"")

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n)
            try:
                body = json.loads(raw)
                m = re.match(r"\s*(?:query|mutation)\s+(\w+)", body.get("query", ""))
                op = m.group(1) if m else None
            except ValueError:
                body, op = {}, None
            self._record(op, raw)
            m = re.match(r"/files/([^/]+)/([^/]+)/([^/]+)/file_stream$", self.path)
            if m:
                if not self._authorized():
                    return self._send(401, {"error": "permission denied"})
                if mock.fault("500"):
                    return self._send(500, {"error": "internal error"})
                mock.file_streams.append((self.path, body))
                return self._send(200, {"exitcode": None, "limits": {}})
            if self.path != "/graphql":
                return self._send(404, {"error": "no such endpoint"})
            if mock.fault("gql_redirect"):
                return self._send(307, b"", {"Location": mock.blob_base() + "/graphql"})
            if mock.fault("401") or self.headers.get("Authorization") != mock.auth_header():
                return self._send(401, {"errors": [{"message": "permission denied"}]})
            if mock.fault("403_echo"):
                msg = "denied for %s (%s)" % (mock.key, self.headers.get("Authorization"))
                return self._send(403, {"errors": [{"message": msg}]})
            if mock.fault("404"):
                return self._send(404, {"errors": [{"message": "endpoint not found"}]})
            if mock.fault("429"):
                return self._send(429, {"errors": [{"message": "rate limited"}]}, {"Retry-After": "1"})
            if mock.fault("500"):
                return self._send(500, {"errors": [{"message": "internal error"}]})
            if mock.fault("errors") or (op and mock.fault("errors_" + op)):
                return self._send(200, {"data": None, "errors": [{"message": "boom"}]})
            self._send(200, mock.graphql(op, body.get("variables") or {}))

        def do_GET(self):
            self._record()
            path = self.path.split("?", 1)[0]
            if path.startswith("/artifactsV2/"):
                if self.headers.get("Authorization") != mock.auth_header():
                    return self._send(401, {"errors": [{"message": "permission denied"}]})
                h = path.rsplit("/", 1)[1]
                if mock.fault("legacy_redirect"):
                    return self._send(302, b"", {"Location": mock._blob_url(h, "legacy")})
                if h in mock.blobs:
                    return self._send(200, mock.blobs[h], ctype="application/octet-stream")
                return self._send(404, {"error": "no such file"})
            for prefix in ("/files/", "/storage/manifests/", "/storage/files/"):
                if path.startswith(prefix):
                    name = path[len(prefix):]
                    break
            else:
                return self._send(404, {"error": "no such endpoint"})
            if self._s3_refused():
                return
            if mock.fault("redirect"):
                return self._send(302, b"", {"Location": "%s/files/%s" % (mock.storage.url, name)})
            if name in mock.manifests:
                return self._send(200, mock.manifests[name])
            if name not in mock.blobs:
                return self._send(404, {"error": "no such file"})
            sig = self.path.partition("?")[2]
            if (sig == "sig=list" and mock.fault("expired")) or \
                    (sig == "sig=fresh" and mock.fault("expired_fresh")):
                return self._send(403, b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                                  b"<Error><Code>AccessDenied</Code>"
                                  b"<Message>Request has expired</Message></Error>",
                                  ctype="application/xml")
            if mock.faults.get("slow"):
                time.sleep(mock.faults["slow"])
            if mock.faults.get("slow_once"):
                s = mock.faults.pop("slow_once")
                time.sleep(s)
            data = mock.blobs[name]
            if mock.fault("truncate"):
                self.send_response(200)
                self.send_header("Content-Length", str(len(data) + 100))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()
                self.close_connection = True
                return
            if mock.fault("wrong_digest"):
                data = b"tampered" + data
            self._send(200, data, ctype="application/octet-stream")

    return Handler


if __name__ == "__main__":
    m = MockWandb()
    print(m.url)
    try:
        m.thread.join()
    except KeyboardInterrupt:
        m.close()
