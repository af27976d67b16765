"""`profsum view` (ext/cli/profsum_cli.c cmdView, ext/cli/serve.c;
docs/cli.md, "view"): the loopback HTTP server for the Perfetto UI, its
link and TensorBoard command, --window, --timeout, SIGINT, and --list /
--extract on a generated TensorBoard log directory
(plugins/profile/<timestamp>/<host>.trace.json.gz, two sessions).

The server is started on a free port and read with urllib over 127.0.0.1
(and raw sockets for malformed requests).  That the Perfetto UI itself
then opens the trace cannot be tested offline.

Run: /usr/bin/python3 tests/run.py test_cli_view.py
"""
import gzip
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import time
import unittest
import urllib.error
import urllib.request

from util import connect
from test_cli import CliBase, CLI, F1_BEFORE

ORIGIN = "https://ui.perfetto.dev"
SESSIONS = ["2024_05_01_12_00_00", "2024_05_02_08_30_00"]


def setUpModule():
    if not os.access(CLI, os.X_OK):
        raise unittest.SkipTest("the profsum CLI is not built (%s): run `make profsum`" % CLI)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def trace_doc(tag, n=3):
    """A small trace whose op names carry tag (so files differ)."""
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}}]
    for i in range(n):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": "%s.%d" % (tag, i), "ts": i * 100, "dur": 50})
    return {"traceEvents": ev, "displayTimeUnit": "ns"}


class ViewBase(CliBase):
    def setUp(self):
        super().setUp()
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            for f in (p.stdout, p.stderr):
                if f:
                    f.close()
        super().tearDown()

    def logdir(self):
        """logs/plugins/profile/<session>/<host>.trace.json.gz, two sessions of two hosts."""
        paths = {}
        for s in SESSIONS:
            for h in ("host0", "host1"):
                rel = "logs/plugins/profile/%s/%s.trace.json.gz" % (s, h)
                paths[(s, h)] = self.td.write(rel, json.dumps(trace_doc("%s_%s" % (h, s[-8:]))), gz=True)
        return os.path.join(self.td.path, "logs"), paths

    def start(self, *args, port=None):
        """Start `profsum view ARGS --port P`; return (proc, port, first stdout line)."""
        port = port or free_port()
        argv = [CLI, "view"] + list(args) + ["--port", str(port)]
        errf = open(os.path.join(self.td.path, "view-%d.err" % len(self.procs)), "w+b")
        p = subprocess.Popen(argv, cwd=self.td.path, env=self.env, stdout=subprocess.PIPE, stderr=errf)
        p.errf = errf
        self.procs.append(p)
        line = self.read_line(p)
        return p, port, line

    def read_line(self, p, timeout=60):
        deadline = time.time() + timeout
        buf = b""
        while time.time() < deadline and not buf.endswith(b"\n"):
            r, _, _ = select.select([p.stdout], [], [], 0.5)
            if r:
                c = os.read(p.stdout.fileno(), 1)
                if not c:
                    break
                buf += c
            elif p.poll() is not None:
                break
        return buf.decode()

    def stderr_of(self, p):
        p.errf.seek(0)
        return p.errf.read().decode()

    def get(self, port, path, method="GET", headers=None):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            body = e.read()
            return e.code, dict(e.headers), body

    def raw(self, port, data, timeout=30):
        """Send raw bytes, return all the server answers (until it closes)."""
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        try:
            s.sendall(data)
            out = b""
            while True:
                c = s.recv(65536)
                if not c:
                    return out
                out += c
        finally:
            s.close()

    def stop(self, p, sig=signal.SIGINT):
        p.send_signal(sig)
        return p.wait(timeout=30)


class Serve(ViewBase):
    def test_serves_the_file_with_cors(self):
        path = self.trace("run.trace.json.gz", F1_BEFORE)
        with open(path, "rb") as f:
            want = f.read()
        p, port, line = self.start(path, "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/run.trace.json.gz\n" % port)
        status, headers, body = self.get(port, "/run.trace.json.gz")
        self.assertEqual(status, 200)
        self.assertEqual(body, want)
        self.assertEqual(headers["Access-Control-Allow-Origin"], ORIGIN)
        self.assertEqual(headers["Content-Length"], str(len(want)))
        self.assertEqual(headers["Content-Type"], "application/gzip")
        # HEAD: the headers alone
        status, headers, body = self.get(port, "/run.trace.json.gz", method="HEAD")
        self.assertEqual((status, body), (200, b""))
        self.assertEqual(headers["Content-Length"], str(len(want)))
        # a query string is ignored (a cache buster)
        self.assertEqual(self.get(port, "/run.trace.json.gz?t=1")[2], want)
        # the CORS preflight
        status, headers, body = self.get(port, "/run.trace.json.gz", method="OPTIONS", headers={
            "Origin": ORIGIN, "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "range, x-foo",
            "Access-Control-Request-Private-Network": "true"})
        self.assertEqual(status, 204)
        self.assertEqual(body, b"")
        self.assertEqual(headers["Access-Control-Allow-Origin"], ORIGIN)
        self.assertEqual(headers["Access-Control-Allow-Methods"], "GET, HEAD, OPTIONS")
        self.assertEqual(headers["Access-Control-Allow-Headers"], "range, x-foo")
        self.assertEqual(headers["Access-Control-Allow-Private-Network"], "true")
        # the TensorBoard line: this file is not in a log dir layout
        self.assertEqual(self.stop(p), 0)
        self.assertEqual(p.stdout.read(), b"")
        err = self.stderr_of(p)
        self.assertIn("not in a <logdir>/plugins/profile/<session>/ folder", err)
        self.assertIn("GET /run.trace.json.gz 200", err)
        self.assertIn("stopped (interrupted)", err)
        self.assertIn("may refuse to load from port %d" % port, err)

    def test_only_that_file(self):
        secret = self.td.write("secret.txt", "do not serve\n")
        path = self.trace("a.trace.json", F1_BEFORE)
        p, port, _ = self.start(path, "--timeout", "60")
        for bad in ["/", "/secret.txt", "/a.trace.json/", "/a.trace.json/..", "/../secret.txt",
                    "/%2e%2e/secret.txt", "//a.trace.json", "/./a.trace.json", "/A.TRACE.JSON",
                    "/a.trace.jso", "/a%2etrace.json", "/" + secret]:
            status, headers, body = self.get(port, bad)
            self.assertEqual(status, 404, bad)
            self.assertEqual(body, b"not found\n", bad)
            self.assertEqual(headers["Access-Control-Allow-Origin"], ORIGIN)
            status, _, _ = self.get(port, bad, method="OPTIONS")
            self.assertEqual(status, 404, bad)
        # raw targets urllib would normalize
        for target in [b"../secret.txt", b"/../../../../etc/passwd", b"*", b"http://127.0.0.1/a.trace.json",
                       b"secret.txt", b"/a.trace.json/../secret.txt"]:
            out = self.raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            self.assertTrue(out.startswith(b"HTTP/1.1 404 "), (target, out[:80]))
            self.assertNotIn(b"do not serve", out)
        # other methods
        for m in ["POST", "PUT", "DELETE", "TRACE", "PATCH"]:
            status, headers, _ = self.get(port, "/a.trace.json", method=m)
            self.assertEqual(status, 405, m)
            self.assertEqual(headers["Allow"], "GET, HEAD, OPTIONS")
        # still serving the file after all that
        with open(path, "rb") as f:
            self.assertEqual(self.get(port, "/a.trace.json")[2], f.read())
        self.assertEqual(self.stop(p), 0)

    def test_malformed_and_oversized_requests(self):
        path = self.trace("a.trace.json", F1_BEFORE)
        p, port, _ = self.start(path, "--timeout", "60")
        big = b"GET /a.trace.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"x" * 10000 + b"\r\n\r\n"
        self.assertTrue(self.raw(port, big).startswith(b"HTTP/1.1 431 "))
        self.assertTrue(self.raw(port, b"garbage\r\n\r\n").startswith(b"HTTP/1.1 400 "))
        self.assertTrue(self.raw(port, b"GET /a.trace.json HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 "))
        # another host name (DNS rebinding) is refused; the loopback names are not
        out = self.raw(port, b"GET /a.trace.json HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n" % port)
        self.assertTrue(out.startswith(b"HTTP/1.1 403 "), out[:80])
        for host in [b"127.0.0.1", b"127.0.0.1:%d" % port, b"localhost:%d" % port]:
            out = self.raw(port, b"GET /a.trace.json HTTP/1.1\r\nHost: " + host + b"\r\n\r\n")
            self.assertTrue(out.startswith(b"HTTP/1.1 200 "), host)
        out = self.raw(port, b"GET /a.trace.json HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n")
        self.assertTrue(out.startswith(b"HTTP/1.1 403 "))
        # HTTP/1.0 without Host is fine
        self.assertTrue(self.raw(port, b"GET /a.trace.json HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 200 "))
        self.assertEqual(self.stop(p), 0)

    def test_stalled_connection_times_out(self):
        path = self.trace("a.trace.json", F1_BEFORE)
        p, port, _ = self.start(path, "--timeout", "60")
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"GET /a.trace")                   # and nothing more
        t0 = time.time()
        self.assertEqual(s.recv(100), b"")            # closed by the server
        waited = time.time() - t0
        s.close()
        self.assertGreater(waited, 8)
        self.assertLess(waited, 20)
        self.assertEqual(self.get(port, "/a.trace.json")[0], 200)
        self.assertEqual(self.stop(p), 0)

    def test_timeout_stops_by_itself(self):
        path = self.trace("a.trace.json", F1_BEFORE)
        t0 = time.time()
        p, port, _ = self.start(path, "--timeout", "2")
        self.assertEqual(self.get(port, "/a.trace.json")[0], 200)
        self.assertEqual(p.wait(timeout=30), 0)
        self.assertLess(time.time() - t0, 15)
        self.assertIn("stopped (--timeout reached)", self.stderr_of(p))
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()

    def test_sigint_and_sigterm_stop_it(self):
        path = self.trace("a.trace.json", F1_BEFORE)
        for sig in (signal.SIGINT, signal.SIGTERM):
            p, port, _ = self.start(path)                 # default --timeout 600
            self.assertEqual(self.get(port, "/a.trace.json")[0], 200)
            t0 = time.time()
            self.assertEqual(self.stop(p, sig), 0)
            self.assertLess(time.time() - t0, 10)
            self.assertIn("stopped (interrupted)", self.stderr_of(p))
        self.assertEqual(self.temp_files_left(), [])

    def test_window(self):
        ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
              {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}}]
        ev += [{"ph": "X", "pid": 1 + i % 2, "tid": 1, "name": "op%d" % i, "ts": i * 10, "dur": 5} for i in range(20)]
        path = self.trace("big.trace.json.gz", {"traceEvents": ev})
        p, port, line = self.start(path, "--window", "pid = 1 AND ts < 100000", "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/window-big.trace.json.gz\n" % port)
        status, _, body = self.get(port, "/window-big.trace.json.gz")
        self.assertEqual(status, 200)
        doc = json.loads(gzip.decompress(body))
        names = [e["name"] for e in doc["traceEvents"] if e["ph"] == "X"]
        self.assertEqual(names, ["op0", "op2", "op4", "op6", "op8"])
        self.assertEqual(self.get(port, "/big.trace.json.gz")[0], 404)    # only the window
        # the window file lives in a private temporary directory, removed at the end
        left = self.temp_files_left()
        self.assertEqual(len(left), 1)
        self.assertIn("window-big.trace.json.gz", os.listdir(os.path.join(self.td.path, left[0])))
        self.assertEqual(self.stop(p), 0)
        self.assertIn("window: 6 entries", self.stderr_of(p))     # 5 ops and their process_name
        self.assertEqual(self.temp_files_left(), [])
        # a bad condition: exit 1, nothing left behind
        out, err = self.run_cli("view", path, "--window", "no_such_column = 1", "--port", str(free_port()), rc=1)
        self.assertEqual(out, "")
        self.assertIn("no_such_column", err)
        self.assertEqual(self.temp_files_left(), [])

    def test_log_dir_serves_the_picked_trace(self):
        logs, paths = self.logdir()
        db = connect()
        picked = db.execute("SELECT path FROM profsum_find_traces(?) WHERE picked", (logs,)).fetchone()[0]
        db.close()
        p, port, line = self.start(logs, "--timeout", "60")
        name = os.path.basename(picked)
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/%s\n" % (port, name))
        self.assertEqual(self.read_line(p), "tensorboard --logdir %s\n" % logs)
        with open(picked, "rb") as f:
            self.assertEqual(self.get(port, "/" + name)[2], f.read())
        self.assertEqual(self.stop(p), 0)
        # a file inside the layout: its log dir, quoted for the shell
        odd = self.td.write("my logs/plugins/profile/%s/h.trace.json.gz" % SESSIONS[0],
                            json.dumps(trace_doc("x")), gz=True)
        p, port, line = self.start(odd, "--timeout", "60")
        self.assertEqual(self.read_line(p), "tensorboard --logdir '%s'\n" % os.path.join(self.td.path, "my logs"))
        self.assertEqual(self.stop(p), 0)

    def test_an_xplane_is_served_as_trace_json(self):
        # the Perfetto UI opens trace JSON, not an XSpace: a folder whose
        # pick is its XPlane serves the trace JSON beside it; an XPlane alone
        # is served converted (profsum_trim: every row)
        import xspace_writer as W
        us = 1000000
        pb = W.PlaneBuilder("/device:TPU:0")
        pb.emeta.append((1, W.event_meta(1, name="fusion.1")))
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000,
                events=[W.event(1, offset_ps=0, duration_ps=5 * us), W.event(1, offset_ps=10 * us, duration_ps=2 * us)])
        xs = W.xspace([pb.build()])
        sess = "logs/plugins/profile/%s/" % SESSIONS[0]
        xp = self.td.write(sess + "host0.xplane.pb", xs)
        js = self.td.write(sess + "host0.trace.json.gz", json.dumps(trace_doc("h")), gz=True)
        logs = os.path.join(self.td.path, "logs")
        p, port, line = self.start(logs, "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/host0.trace.json.gz\n" % port)
        with open(js, "rb") as f:
            self.assertEqual(self.get(port, "/host0.trace.json.gz")[2], f.read())
        self.assertEqual(self.stop(p), 0)
        p, port, line = self.start(xp, "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/host0.xplane.pb.json.gz\n" % port)
        doc = json.loads(gzip.decompress(self.get(port, "/host0.xplane.pb.json.gz")[2]))
        self.assertEqual([(e["name"], e["ts"], e["dur"]) for e in doc["traceEvents"] if e["ph"] == "X"],
                         [("fusion.1", 1, 5), ("fusion.1", 11, 2)])
        self.assertEqual(self.stop(p), 0)
        self.assertIn("is an XPlane, which the Perfetto UI does not open: serving it converted to trace "
                      "JSON (4 entries)",
                      self.stderr_of(p))
        # a window of it is trace JSON too, and named so
        p, port, line = self.start(xp, "--window", "ts >= 5000", "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/"
                               "window-host0.xplane.pb.json.gz\n" % port)
        doc = json.loads(gzip.decompress(self.get(port, "/window-host0.xplane.pb.json.gz")[2]))
        self.assertEqual([(e["name"], e["ts"]) for e in doc["traceEvents"] if e["ph"] == "X"], [("fusion.1", 11)])
        self.assertEqual(self.get(port, "/window-host0.xplane.pb.gz")[0], 404)
        self.assertEqual(self.stop(p), 0)
        # a JSON file named without .json: its window ends in .json.gz
        odd = self.trace("run.trace", trace_doc("h"))
        p, port, line = self.start(odd, "--window", "1", "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/window-run.trace.json.gz\n" % port)
        self.assertEqual(self.stop(p), 0)

    def test_served_name_is_safe(self):
        path = self.trace("we\x1bird name;$(x).trace.json", F1_BEFORE)
        p, port, line = self.start(path, "--timeout", "60")
        self.assertEqual(line, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:%d/we_ird_name___x_.trace.json\n" % port)
        self.assertEqual(self.get(port, "/we_ird_name___x_.trace.json")[0], 200)
        self.assertEqual(self.stop(p), 0)

    def test_port_in_use_and_usage(self):
        path = self.trace("a.trace.json", F1_BEFORE)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        try:
            out, err = self.run_cli("view", path, "--port", str(port), "--timeout", "5", rc=1)
        finally:
            s.close()
        self.assertEqual(out, "")
        self.assertIn("127.0.0.1:%d is already in use" % port, err)
        self.run_cli("view", rc=2)
        for bad in (["--port", "0"], ["--port", "70000"], ["--timeout", "0"], ["--timeout", "-1"],
                    ["--timeout", "nan"], ["--timeout", "inf"], ["--timeout", "100000"], ["--list", "--extract", "x"]):
            _, err = self.run_cli("view", path, *bad, rc=2)
            self.assertIn("Try 'profsum view --help'", err)
        self.run_cli("view", os.path.join(self.td.path, "missing.json"), rc=1)
        _, err = self.run_cli("view", path, "--list", rc=2)
        self.assertIn("take a log directory", err)
        _, err = self.run_cli("view", self.td.path + "/empty", rc=1)
        os.mkdir(os.path.join(self.td.path, "empty"))
        _, err = self.run_cli("view", os.path.join(self.td.path, "empty"), "--port", str(free_port()), rc=1)
        self.assertIn("'%s': no trace in it (see profsum view --list)" % os.path.join(self.td.path, "empty"), err)
        out, _ = self.run_cli("view", "--help")
        self.assertIn("--extract DEST", out)

    def test_default_port(self):
        try:
            s = socket.socket()
            s.bind(("127.0.0.1", 9001))
            s.close()
        except OSError:
            self.skipTest("port 9001 is in use here")
        path = self.trace("a.trace.json", F1_BEFORE)
        out, err = self.run_cli("view", path, "--timeout", "0.5")
        self.assertEqual(out, "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/a.trace.json\n")
        self.assertNotIn("warning", err)


class ListAndExtract(ViewBase):
    def test_list_newest_session_first(self):
        logs, paths = self.logdir()
        out, err = self.run_cli("view", logs, "--list")
        lines = out.splitlines()
        self.assertEqual(lines[0], "session\thost\tformat\tbytes\tpicked\tpath")
        rows = [l.split("\t") for l in lines[1:]]
        self.assertEqual([(r[0], r[1]) for r in rows],
                         [(SESSIONS[1], "host0"), (SESSIONS[1], "host1"), (SESSIONS[0], "host0"), (SESSIONS[0], "host1")])
        for r in rows:
            self.assertEqual(r[5], paths[(r[0], r[1])])
            self.assertEqual(int(r[3]), os.path.getsize(r[5]))
            self.assertEqual(r[2], "trace_json_gz")
        self.assertEqual([r[4] for r in rows], ["", "", "*", ""])     # profsum reads the first in path order
        self.assertEqual(err, "")

    def test_extract_copies_the_layout(self):
        logs, paths = self.logdir()
        dest = os.path.join(self.td.path, "copy")
        out, err = self.run_cli("view", logs, "--extract", dest)
        lines = out.splitlines()
        self.assertEqual(lines[-1], "tensorboard --logdir %s" % dest)
        self.assertEqual(len(lines), 5)
        for (s, h), src in paths.items():
            rel = "plugins/profile/%s/%s.trace.json.gz" % (s, h)
            self.assertIn(os.path.join(dest, rel), lines)
            with open(src, "rb") as a, open(os.path.join(dest, rel), "rb") as b:
                self.assertEqual(a.read(), b.read())
        self.assertIn("4 files copied", err)
        # again: the copies are replaced, no temporary files left
        self.run_cli("view", logs, "--extract", dest)
        for s in SESSIONS:
            self.assertEqual(sorted(os.listdir(os.path.join(dest, "plugins/profile", s))),
                             ["host0.trace.json.gz", "host1.trace.json.gz"])
        # the copy is itself a log dir profsum lists the same way
        out2, _ = self.run_cli("view", dest, "--list")
        self.assertEqual(len(out2.splitlines()), 5)

    def test_extract_refuses_symlinks(self):
        logs, paths = self.logdir()
        outside = os.path.join(self.td.path, "outside")
        os.mkdir(outside)
        secret = self.td.write("secret.txt", "private key\n")
        # a trace in the log dir that is a link to a file elsewhere: not copied
        link = os.path.join(logs, "plugins/profile", SESSIONS[1], "evil.trace.json.gz")
        os.symlink(secret, link)
        # DEST with a planted link where a directory will go: never written through
        dest = os.path.join(self.td.path, "dest")
        os.makedirs(os.path.join(dest, "plugins"))
        os.symlink(outside, os.path.join(dest, "plugins", "profile"))
        out, err = self.run_cli("view", logs, "--extract", dest, rc=1)
        self.assertEqual(os.listdir(outside), [])
        self.assertIn("'plugins/profile' under '%s' is a symbolic link or not a directory: refused" % dest, err)
        self.assertIn("0 files copied", err)
        # without the planted link: the others are copied, the linked trace is refused
        os.unlink(os.path.join(dest, "plugins", "profile"))
        out, err = self.run_cli("view", logs, "--extract", dest, rc=1)
        self.assertIn("evil.trace.json.gz' not copied: a symbolic link: refused", err)
        self.assertIn("4 files copied", err)
        self.assertFalse(os.path.lexists(os.path.join(dest, "plugins/profile", SESSIONS[1], "evil.trace.json.gz")))
        self.assertEqual(len(out.splitlines()), 5)
        # a planted link at a file's own name is refused: neither followed
        # nor replaced, the others copied
        target = os.path.join(dest, "plugins/profile", SESSIONS[0], "host0.trace.json.gz")
        os.unlink(target)
        victim = self.td.write("victim.txt", "precious\n")
        os.symlink(victim, target)
        out, err = self.run_cli("view", logs, "--extract", dest, rc=1)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(os.readlink(target), victim)
        self.assertIn("host0.trace.json.gz' under '%s' is a symbolic link: refused" % dest, err)
        self.assertIn("3 files copied", err)
        other = os.path.join(dest, "plugins/profile", SESSIONS[0], "host1.trace.json.gz")
        with open(paths[(SESSIONS[0], "host1")], "rb") as a, open(other, "rb") as b:
            self.assertEqual(a.read(), b.read())
        # DEST the log dir itself: refused
        self.run_cli("view", logs, "--extract", logs + "/", rc=2)
        self.assertEqual(self.temp_files_left(), [])


if __name__ == "__main__":
    unittest.main()
