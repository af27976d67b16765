"""The Node package in node/: packed with profsum.so (as `make node-pkg`
does), installed with better-sqlite3@^12 from the npm registry into a temp
dir, it loads the extension, imports a trace and reads a view.  better-sqlite3
13 needs a newer Node than the 20 installed here, hence ^12.  The install
test skips only when node or npm is missing, or when `npm ping` says the
registry cannot be reached (the reason is in the skip message)."""
import json
import os
import shutil
import subprocess
import unittest

import fixtures
from util import TempDir, ROOT, SO

NODEDIR = os.path.join(ROOT, "node")
FILES = ["package.json", "index.js", "index.d.ts", "README.md"]

CHECK_JS = r"""
const Database = require('better-sqlite3');
const profsum = require('profsum');
const [trace, dbPath] = process.argv.slice(2);
const db = profsum.load(new Database(dbPath));
const id = db.prepare("SELECT profsum_import(?, 'node-run', '{\"warmup_steps\": 1}') AS id").get(trace).id;
const ops = db.prepare("SELECT name, exclusive_duration AS excl FROM profsum_hot_ops " +
                       "WHERE label = 'node-run' ORDER BY rank").all();
const steps = db.prepare("SELECT count(*) AS n FROM profsum_steps WHERE label = 'node-run'").get().n;
let typeError = '';
try { profsum.load({}); } catch (e) { typeError = e.constructor.name + ': ' + e.message; }
process.env.PROFSUM_SO = dbPath + '.missing';
let missing = '';
try { profsum.getLoadablePath(); } catch (e) { missing = e.message; }
delete process.env.PROFSUM_SO;
console.log(JSON.stringify({id, ops, steps, path: profsum.getLoadablePath(), version: profsum.version,
                            sqlite: db.prepare('SELECT sqlite_version() AS v').get().v, typeError, missing}));
db.close();
"""


def version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        return f.read().strip()


class PackageFiles(unittest.TestCase):
    def test_manifest(self):
        with open(os.path.join(NODEDIR, "package.json")) as f:
            pj = json.load(f)
        self.assertEqual(pj["name"], "profsum")
        self.assertEqual(pj["version"], version())
        self.assertEqual(pj["main"], "index.js")
        self.assertIn("profsum.so", pj["files"])
        for f in FILES:
            self.assertTrue(os.path.isfile(os.path.join(NODEDIR, f)), f)


class BetterSqlite3(unittest.TestCase):
    def test_install_load_import(self):
        node, npm = shutil.which("node"), shutil.which("npm")
        if node is None or npm is None:
            self.skipTest("node or npm is not installed (Debian: apt-get install nodejs npm)")
        major = int(subprocess.run([node, "-p", "process.versions.node.split('.')[0]"], capture_output=True,
                                   text=True, timeout=60).stdout.strip() or 0)
        if major < 20:
            self.skipTest("Node %d: better-sqlite3 12 needs Node 20 or newer" % major)
        with TempDir() as td:
            pkg = os.path.join(td.path, "pkg")
            os.makedirs(pkg)
            for f in FILES:
                shutil.copy(os.path.join(NODEDIR, f), pkg)
            shutil.copy(os.path.join(ROOT, "LICENSE"), pkg)
            shutil.copy(SO, os.path.join(pkg, "profsum.so"))
            env = dict(os.environ, npm_config_update_notifier="false", npm_config_audit="false",
                       npm_config_fund="false")
            env.pop("PROFSUM_SO", None)
            # npm and the compiler run without the sanitizer runtime `make asan`
            # preloads; node itself keeps it (the extension may be an ASan build)
            npm_env = dict(env)
            npm_env.pop("LD_PRELOAD", None)
            if os.path.isfile("/usr/include/node/node.h"):
                # better-sqlite3 builds from source (its prebuilt binaries are
                # not reachable): the installed headers, no download
                npm_env["npm_config_nodedir"] = "/usr"
            r = subprocess.run([npm, "pack", "--silent", pkg], cwd=td.path, env=npm_env, capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            tgz = os.path.join(td.path, r.stdout.strip().splitlines()[-1])
            app = os.path.join(td.path, "app")
            os.makedirs(app)
            with open(os.path.join(app, "package.json"), "w") as f:
                json.dump({"name": "profsum-node-check", "version": "0.0.0", "private": True}, f)
            r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "better-sqlite3@^12", tgz], cwd=app,
                               env=npm_env, capture_output=True, text=True, timeout=900)
            if r.returncode != 0:
                ping = subprocess.run([npm, "ping"], cwd=app, env=npm_env, capture_output=True, text=True, timeout=120)
                if ping.returncode != 0:
                    self.skipTest("npm cannot reach the registry (npm ping: %s)"
                                  % (ping.stderr.strip().splitlines() or ["failed"])[-1])
                self.fail("npm install failed although the registry answers:\n" + r.stdout + r.stderr[-3000:])
            trace = td.write("n.trace.json.gz", fixtures.f1([100, 110, 120, 130], 50), gz=True)
            with open(os.path.join(app, "check.js"), "w") as f:
                f.write(CHECK_JS)
            r = subprocess.run([node, "check.js", trace, os.path.join(td.path, "n.db")], cwd=app, env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            out = json.loads(r.stdout)
            self.assertEqual(out["id"], 1)
            self.assertEqual([(o["name"], o["excl"]) for o in out["ops"]],
                             [("fusion.1", 60), ("softmax", 50), ("all-reduce.1", 40), ("dependency-wait", 30),
                              ("psum.1", 20)])
            self.assertEqual(out["steps"], 4)
            # the extension packed with the package, installed as a copy
            self.assertEqual(out["path"], os.path.join(app, "node_modules", "profsum", "profsum.so"))
            with open(out["path"], "rb") as a, open(SO, "rb") as b:
                self.assertEqual(a.read(), b.read())
            self.assertEqual(out["version"], version())
            self.assertEqual(out["typeError"],
                             "TypeError: profsum.load: expected a better-sqlite3 Database (an object with loadExtension)")
            self.assertRegex(out["missing"], r"^profsum: PROFSUM_SO=.*\.missing: no such file$")
            with open(os.path.join(app, "node_modules", "better-sqlite3", "package.json")) as f:
                self.assertEqual(json.load(f)["version"].split(".")[0], "12")
            # a second process reads what the first wrote, with the sqlite3 module
            from util import connect
            db = connect(os.path.join(td.path, "n.db"))
            self.assertEqual(db.execute("SELECT label FROM profsum_trace").fetchall(), [("node-run",)])
            db.close()


if __name__ == "__main__":
    unittest.main()
