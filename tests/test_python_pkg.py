"""The Python package in python/: loading profsum.so into sqlite3 and APSW
connections, the helpers (DataFrames or lists of rows), the error of an
interpreter that can load no extension, the capture side profsum.jax (driven
by a stand-in jax package written below, since JAX is not installed here),
the README's notebook example, and an install into a fresh venv without
network (pip --no-build-isolation with Debian's setuptools and wheel)."""
import contextlib
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import unittest
import zipfile

import fixtures
from util import TempDir, ROOT, SO

PYDIR = os.path.join(ROOT, "python")
SYS_PY = "/usr/bin/python3"

# ---- the stand-in jax --------------------------------------------------------
# What profsum.jax calls, with JAX's documented signatures:
# jax.profiler.start_trace(log_dir, create_perfetto_link=False,
# create_perfetto_trace=False, profiler_options=None), stop_trace(),
# TraceAnnotation(name, **kwargs), StepTraceAnnotation(name, **kwargs),
# jax.block_until_ready(x).  Every call is appended to jax.CALLS.  While a
# trace runs, each annotation that closes becomes a host event, and each
# StepTraceAnnotation also two device ops in its window; stop_trace writes
# them where JAX writes a session:
#   <log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz
#   <log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb  (a stub)
# (and perfetto_trace.json.gz with create_perfetto_trace=True).  A GPU
# layout: device ops on "Stream #0(compute)" of /device:GPU:0, annotations on
# the host's python3 thread, steps as host events named after the
# StepTraceAnnotation with args.step_num.  Timestamps are microseconds on a
# clock that advances 1000 us per annotation.  Two sessions stopped within
# one second share a directory, as JAX's do.  A real session holds an XPlane
# too; the stub is one byte that does not decode as an XSpace, so that
# profsum (as the reference) falls back to the JSON next to it.

STANDIN_INIT = '''\
"""Stand-in for jax (profsum tests): see tests/jax_standin.py."""
CALLS = []
HOST = "standin-host"
from . import profiler  # noqa: E402


def block_until_ready(x):
    CALLS.append(("block_until_ready", x))
    return x


NAME_STACK = []


class named_scope:
    """Names what is traced inside it: here, a device op run when the block
    ends during a trace carries the name stack in its tf_op path."""

    def __init__(self, name):
        CALLS.append(("named_scope", name))
        self.name = name

    def __enter__(self):
        NAME_STACK.append(self.name)
        return self

    def __exit__(self, *exc):
        profiler._scoped_op("/".join(["jit(train_step)"] + NAME_STACK + ["dot_general"]))
        NAME_STACK.pop()
        return False
'''

STANDIN_PROFILER = '''\
import gzip
import json
import os
import time

import jax

_state = {"log_dir": None, "events": [], "clock": 0.0, "opts": {}}


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    if _state["log_dir"] is not None:
        raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
    jax.CALLS.append(("start_trace", str(log_dir), {"create_perfetto_trace": create_perfetto_trace}))
    _state["log_dir"] = str(log_dir)
    _state["events"] = []
    _state["clock"] = 0.0
    _state["opts"] = {"perfetto": bool(create_perfetto_trace or create_perfetto_link)}


def stop_trace():
    if _state["log_dir"] is None:
        raise RuntimeError("No profile started")
    jax.CALLS.append(("stop_trace",))
    session = time.strftime("%Y_%m_%d_%H_%M_%S")
    d = os.path.join(_state["log_dir"], "plugins", "profile", session)
    os.makedirs(d, exist_ok=True)
    meta = [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 10, "name": "thread_name", "args": {"name": "Stream #0(compute)"}},
        {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "python3"}},
    ]
    doc = {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True},
           "traceEvents": meta + _state["events"]}
    with gzip.open(os.path.join(d, jax.HOST + ".trace.json.gz"), "wt") as f:
        json.dump(doc, f)
    with open(os.path.join(d, jax.HOST + ".xplane.pb"), "wb") as f:
        f.write(b"\\xff")
    if _state["opts"]["perfetto"]:
        del doc["metadata"]
        with gzip.open(os.path.join(d, "perfetto_trace.json.gz"), "wt") as f:
            json.dump(doc, f)
    _state["log_dir"] = None


def _scoped_op(tf_op):
    if _state["log_dir"] is None:
        return
    _state["events"].append({"ph": "X", "pid": 1, "tid": 10, "name": "dot.%d" % len(_state["events"]),
                             "ts": _state["clock"] + 10.0, "dur": 300.0, "args": {"tf_op": tf_op}})
    _state["clock"] += 400.0


class TraceAnnotation:
    def __init__(self, name, **kwargs):
        self.name, self.kwargs = name, kwargs
        jax.CALLS.append(("TraceAnnotation", name, kwargs))

    def __enter__(self):
        self.t0 = _state["clock"]
        return self

    def __exit__(self, *exc):
        if _state["log_dir"] is None:
            return False
        _state["clock"] += 1000.0
        args = {k: str(v) for k, v in self.kwargs.items()}
        _state["events"].append({"ph": "X", "pid": 2, "tid": 1, "name": self.name, "ts": self.t0,
                                 "dur": _state["clock"] - self.t0, "args": args})
        if "step_num" in self.kwargs:
            _state["events"].append({"ph": "X", "pid": 1, "tid": 10, "name": "fusion.1",
                                     "ts": self.t0 + 100.0, "dur": 500.0})
            _state["events"].append({"ph": "X", "pid": 1, "tid": 10, "name": "all-reduce.1",
                                     "ts": self.t0 + 650.0, "dur": 200.0})
        return False


class StepTraceAnnotation(TraceAnnotation):
    def __init__(self, name, **kwargs):
        TraceAnnotation.__init__(self, name, **kwargs)
        jax.CALLS[-1] = ("StepTraceAnnotation", name, kwargs)
'''


def write_standin(dir_path):
    """Write the stand-in package jax into dir_path; returns dir_path."""
    pkg = os.path.join(dir_path, "jax")
    os.makedirs(pkg, exist_ok=True)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write(STANDIN_INIT)
    with open(os.path.join(pkg, "profiler.py"), "w") as f:
        f.write(STANDIN_PROFILER)
    return dir_path


# ---- helpers -------------------------------------------------------------------

_saved_env = {}


def setUpModule():
    # The package loads PROFSUM_SO first: the build under test.
    _saved_env["PROFSUM_SO"] = os.environ.get("PROFSUM_SO")
    os.environ["PROFSUM_SO"] = os.path.abspath(SO)


def tearDownModule():
    if _saved_env.get("PROFSUM_SO") is None:
        os.environ.pop("PROFSUM_SO", None)
    else:
        os.environ["PROFSUM_SO"] = _saved_env["PROFSUM_SO"]


def import_profsum():
    """The package of python/ (not an installed one)."""
    if PYDIR not in sys.path:
        sys.path.insert(0, PYDIR)
    import profsum
    import profsum.jax  # noqa: F401
    assert os.path.dirname(profsum.__file__) == os.path.join(PYDIR, "profsum"), profsum.__file__
    return profsum


class EnvVars:
    """Set (value) or unset (None) environment variables for a with block."""

    def __init__(self, **kv):
        self.kv, self.old = kv, {}

    def __enter__(self):
        for k, v in self.kv.items():
            self.old[k] = os.environ.get(k)
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        return self

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class FakePandas:
    """A stand-in pandas (when the real one is not installed): a module whose
    DataFrame.from_records keeps the rows and the columns it was given."""

    SRC = ("class DataFrame:\n"
           "    def __init__(self, rows, columns):\n"
           "        self.rows, self.columns = rows, columns\n"
           "    @classmethod\n"
           "    def from_records(cls, rows, columns=None):\n"
           "        return cls(list(rows), list(columns))\n")

    def __enter__(self):
        self.td = TempDir()
        os.makedirs(os.path.join(self.td.path, "pandas"))
        with open(os.path.join(self.td.path, "pandas", "__init__.py"), "w") as f:
            f.write(self.SRC)
        self.saved = sys.modules.pop("pandas", None)
        sys.path.insert(0, self.td.path)
        import pandas
        return pandas

    def __exit__(self, *exc):
        sys.path.remove(self.td.path)
        sys.modules.pop("pandas", None)
        if self.saved is not None:
            sys.modules["pandas"] = self.saved
        self.td.__exit__()


def have_pandas():
    try:
        import pandas  # noqa: F401
        return True
    except ImportError:
        return False


def have_apsw():
    try:
        import apsw  # noqa: F401
        return True
    except ImportError:
        return False


def f1_trace(td, name="t.trace.json.gz"):
    """fixtures.f1 as a gzipped trace: hot ops fusion.1 60, softmax 50,
    all-reduce.1 40, dependency-wait 30, psum.1 20 (us, exclusive)."""
    return td.write(name, fixtures.f1([100, 110, 120, 130], 50), gz=True)


F1_OPS = [("fusion.1", 60.0), ("softmax", 50.0), ("all-reduce.1", 40.0), ("dependency-wait", 30.0),
          ("psum.1", 20.0)]


def version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        return f.read().strip()


# ---- loading and helpers on the sqlite3 route -------------------------------------

class Helpers(unittest.TestCase):
    def setUp(self):
        self.ps = import_profsum()
        self.td = TempDir()
        self.trace = f1_trace(self.td)
        self.db = self.ps.connect(os.path.join(self.td.path, "p.db"))

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def test_route_and_load(self):
        import sqlite3
        with EnvVars(PROFSUM_FORCE_APSW=None):
            self.assertEqual(self.ps.route(), "sqlite3")
        self.assertIsInstance(self.db, sqlite3.Connection)
        self.assertEqual(self.ps.loadable_path(), os.path.abspath(SO))
        c = self.ps.load(sqlite3.connect(":memory:"))
        self.assertTrue(c.execute("SELECT profsum_version()").fetchone()[0].startswith(version()))
        # extension loading is off again after the load
        with self.assertRaises(sqlite3.OperationalError):
            c.execute("SELECT load_extension(?)", (SO,)).fetchall()
        c.close()
        self.assertEqual(self.ps.__version__, version())

    def test_helpers(self):
        ps, db = self.ps, self.db
        self.assertEqual(ps.import_trace(db, self.trace, "before", warmup_steps=1), 1)
        self.assertEqual(ps.import_trace(db, self.trace, "after", {"warmup_steps": 1}, series="s"), 2)
        ops = ps.hot_ops(db, "before", as_frame=False)
        self.assertEqual([(r["name"], r["exclusive_duration"]) for r in ops], F1_OPS)
        self.assertEqual([r["name"] for r in ps.hot_ops(db, 2, limit=2, as_frame=False)], ["fusion.1", "softmax"])
        doc = ps.summary(db, "before")
        self.assertEqual(doc["hot_ops"][0]["name"], "fusion.1")
        self.assertEqual(doc["schema_version"], "profile_summary.v1")
        self.assertEqual([r["label"] for r in ps.traces(db, as_frame=False)], ["before", "after"])
        cmp = ps.compare(db, "before", "after", top_k=3)
        self.assertEqual(cmp["provenance_checks"]["status"], "fail")    # the same file twice
        rec = ps.track(db, "before", "after", "ci-1", max_step_median_regression_pct=2)
        self.assertEqual(rec["label"], "ci-1")
        self.assertIn(rec["assessment"]["status"], ("pass", "warn", "fail"))
        hist = ps.history(db, as_frame=False)
        self.assertEqual([(h["label"], h["origin"]) for h in hist], [("ci-1", "track")])
        self.assertEqual(ps.history(db, label="other", as_frame=False), [])
        md = ps.report_md(db, "before")
        self.assertIsInstance(md, str)
        self.assertTrue(md.startswith("# Profile Report"))
        self.assertEqual(md._repr_markdown_(), md)
        self.assertIn("## KPIs", ps.report_md(db, "before", kpis=True))
        rep = ps.report_html(db, "before")
        self.assertTrue(rep.html.startswith("<!DOCTYPE html>"))
        inline = rep._repr_html_()
        self.assertTrue(inline.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;'))
        self.assertNotIn("<style", inline)                       # escaped: stays in the iframe
        out = rep.save(os.path.join(self.td.path, "r.html"))
        with open(out, encoding="utf-8") as f:
            self.assertEqual(f.read(), rep.html)
        self.assertEqual(ps.query(db, "SELECT ? AS a, 2 AS b", (1,), as_frame=False), [{"a": 1, "b": 2}])

    def test_frames(self):
        ps, db = self.ps, self.db
        ps.import_trace(db, self.trace, "x")
        if have_pandas():
            import pandas
            df = ps.hot_ops(db, "x")
            self.assertIsInstance(df, pandas.DataFrame)
            self.assertEqual(list(df["name"]), [n for n, _ in F1_OPS])
            return
        with FakePandas():
            df = ps.hot_ops(db, "x")
            self.assertEqual(df.columns[:4], ["trace_id", "label", "rank", "name"])
            self.assertEqual([r[3] for r in df.rows], [n for n, _ in F1_OPS])
            self.assertIsInstance(ps.hot_ops(db, "x", as_frame=False), list)
        with self.assertRaisesRegex(ps.ProfsumError, "needs pandas"):
            ps.hot_ops(db, "x", as_frame=True)

    def test_empty_database(self):
        """Before any import the views do not exist yet: empty tables with
        the documented columns."""
        ps, db = self.ps, self.db
        self.assertEqual(ps.hot_ops(db, "x", as_frame=False), [])
        self.assertEqual(ps.history(db, as_frame=False), [])
        cols = [r[0] for r in db.execute("SELECT column_name FROM profsum_catalog WHERE object = "
                                         "'profsum_history' AND position > 0 ORDER BY position")]
        with FakePandas():
            self.assertEqual(ps.history(db).columns, cols)
            self.assertEqual(ps.hot_ops(db, "x").columns[3], "name")

    def test_errors(self):
        import sqlite3
        ps, db = self.ps, self.db
        with self.assertRaisesRegex(TypeError, "label \\(str\\) or a trace_id"):
            ps.hot_ops(db, 1.5)
        with self.assertRaisesRegex(sqlite3.OperationalError, "profsum_summary_json: no trace with label 'nope'"):
            ps.summary(db, "nope")
        with EnvVars(PROFSUM_SO=os.path.join(self.td.path, "missing.so")):
            with self.assertRaisesRegex(ps.LoadError, "PROFSUM_SO=.*missing.so: no such file"):
                ps.connect(":memory:")

    def test_no_route_message(self):
        """Without sqlite3 extension loading and without APSW the error says
        why and what to use."""
        ps = self.ps
        with self.assertRaises(ps.LoadError) as cm:
            ps._core._pick_route(False, None, False)
        msg = str(cm.exception)
        for s in ("cannot load extensions", "APSW", "/usr/bin/python3", "python3-apsw", "pip install apsw"):
            self.assertIn(s, msg)
        with self.assertRaisesRegex(ps.LoadError, "PROFSUM_FORCE_APSW is set.*APSW is not importable"):
            ps._core._pick_route(False, None, True)
        self.assertEqual(ps._core._pick_route(False, object(), True), "apsw")

        class NoLoad:                       # a sqlite3 built without extension loading
            pass
        saved = ps._core._apsw_module
        try:
            ps._core._apsw_module = lambda: None
            with self.assertRaisesRegex(ps.LoadError, "^profsum.load: .*cannot load extensions.*/usr/bin/python3"):
                ps.load(NoLoad())
            ps._core._apsw_module = lambda: object()
            with self.assertRaisesRegex(ps.LoadError, "^profsum.load: .*profsum.connect\\(\\), which takes APSW"):
                ps.load(NoLoad())
        finally:
            ps._core._apsw_module = saved


@unittest.skipUnless(have_apsw(), "APSW is not installed (apt-get install python3-apsw)")
class ApswRoute(unittest.TestCase):
    """PROFSUM_FORCE_APSW=1: the same helpers through an apsw.Connection."""

    def test_apsw(self):
        import apsw
        ps = import_profsum()
        with TempDir() as td, EnvVars(PROFSUM_FORCE_APSW="1"):
            self.assertEqual(ps.route(), "apsw")
            trace = f1_trace(td)
            db = ps.connect(os.path.join(td.path, "a.db"))
            try:
                self.assertIsInstance(db, apsw.Connection)
                self.assertEqual(ps.hot_ops(db, "x", as_frame=False), [])
                self.assertEqual(ps.import_trace(db, trace, "x", warmup_steps=1), 1)
                ps.import_trace(db, trace, "y")
                self.assertEqual([(r["name"], r["exclusive_duration"]) for r in ps.hot_ops(db, "x", as_frame=False)],
                                 F1_OPS)
                with FakePandas():
                    # APSW has no description for a statement without rows
                    self.assertEqual(ps.query(db, "SELECT 1 AS a, 'b' AS b WHERE 0").columns, ["a", "b"])
                    self.assertEqual(ps.history(db).columns[:3], ["record_id", "created_at", "recorded_at_utc"])
                # statements that return no row run once, with their columns
                self.assertEqual(ps.query(db, "CREATE TABLE t(a, b)", as_frame=False), [])
                self.assertEqual(ps.query(db, "INSERT INTO t VALUES (1, 2)", as_frame=False), [])
                self.assertEqual(ps.query(db, "SELECT a, b FROM t WHERE a > 5; -- none", as_frame=False), [])
                self.assertEqual(ps.query(db, "SELECT a, b FROM t", as_frame=False), [{"a": 1, "b": 2}])
                ps.track(db, "x", "y", "t")
                self.assertEqual(ps.history(db, as_frame=False)[0]["label"], "t")
                self.assertTrue(ps.report_md(db, "x").startswith("# Profile Report"))
                self.assertEqual(ps.summary(db, 1)["hot_ops"][0]["name"], "fusion.1")
            finally:
                db.close()
            # the database is an ordinary SQLite file: sqlite3 reads what APSW wrote
            db = ps.connect(os.path.join(td.path, "a.db"))
            self.assertEqual(ps.hot_ops(db, "x", limit=1, as_frame=False)[0]["name"], "fusion.1")
            db.close()
            # a lock held by another connection is waited for, as with sqlite3
            db = ps.connect(os.path.join(td.path, "a.db"))
            self.assertEqual(db.getbusytimeout() if hasattr(db, "getbusytimeout") else 5000, 5000)
            other = ps.connect(os.path.join(td.path, "a.db"))
            other.cursor().execute("BEGIN IMMEDIATE")
            t = threading.Timer(0.3, lambda: other.cursor().execute("COMMIT"))
            t.start()
            try:
                self.assertGreater(ps.import_trace(db, trace, "z"), 0)
            finally:
                t.join()
                other.close()
                db.close()
            db = ps.connect(os.path.join(td.path, "a.db"), timeout=0)
            other = ps.connect(os.path.join(td.path, "a.db"))
            other.cursor().execute("BEGIN IMMEDIATE")
            try:
                with self.assertRaises(apsw.BusyError):
                    ps.import_trace(db, trace, "w")
            finally:
                other.cursor().execute("ROLLBACK")
                other.close()
                db.close()


def no_extension_python():
    """A python3 of this machine other than /usr/bin/python3 whose sqlite3
    cannot load extensions and that has no APSW (the pyenv one first on PATH),
    or None."""
    cands = []
    w = shutil.which("python3")
    if w:
        cands.append(w)
    cands += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")), reverse=True)
    probe = ("import sys, sqlite3\n"
             "try:\n    import apsw; a = 1\nexcept ImportError:\n    a = 0\n"
             "print(sys.executable, int(hasattr(sqlite3.Connection, 'enable_load_extension')), a,"
             " sys.version_info[0] * 100 + sys.version_info[1])")
    for c in cands:
        try:
            out = subprocess.run([c, "-c", probe], capture_output=True, text=True, timeout=60,
                                 cwd="/").stdout.split()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if len(out) != 4 or os.path.realpath(out[0]) == os.path.realpath(SYS_PY):
            continue
        if out[1] == "0" and out[2] == "0" and int(out[3]) >= 308:
            return out[0]
    return None


class NoExtensionPython(unittest.TestCase):
    def test_connect_says_what_to_use(self):
        py = no_extension_python()
        if py is None:
            self.skipTest("no python3 here whose sqlite3 cannot load extensions (and without APSW)")
        with TempDir() as td:
            env = dict(os.environ, PYTHONPATH=PYDIR, PROFSUM_SO=os.path.abspath(SO))
            env.pop("PROFSUM_FORCE_APSW", None)
            r = subprocess.run([py, "-c", "import profsum; profsum.connect(':memory:')"], cwd=td.path,
                               env=env, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        last = r.stderr.strip().splitlines()[-1]
        self.assertIn("profsum._core.LoadError: profsum.connect:", last)
        self.assertIn("cannot load extensions", last)
        self.assertIn("APSW", last)
        self.assertIn("/usr/bin/python3", last)
        self.assertIn(py, last)


# ---- profsum.jax against the stand-in -------------------------------------------

class Capture(unittest.TestCase):
    """profsum.jax with the stand-in jax (see the top of this file): JAX's
    calls are recorded in jax.CALLS, the sessions are written as JAX lays
    them out, and the imports are real."""

    @classmethod
    def setUpClass(cls):
        if "jax" in sys.modules:
            raise unittest.SkipTest("a jax module is imported already")
        cls.ps = import_profsum()
        cls.std = TempDir()
        write_standin(cls.std.path)
        sys.path.insert(0, cls.std.path)
        import jax
        cls.jax = jax
        cls.pj = sys.modules["profsum.jax"]

    @classmethod
    def tearDownClass(cls):
        sys.path.remove(cls.std.path)
        for m in ("jax", "jax.profiler"):
            sys.modules.pop(m, None)
        cls.std.__exit__()

    def setUp(self):
        self.jax.CALLS.clear()
        self.td = TempDir()
        self.log = os.path.join(self.td.path, "log")

    def tearDown(self):
        self.td.__exit__()

    def calls(self, *kinds):
        return [c for c in self.jax.CALLS if c[0] in kinds]

    def db_rows(self, sql, db=None):
        conn = self.ps.connect(db or os.path.join(self.log, "profsum.db"))
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()

    def run_steps(self, prof, n, on_step=None):
        """n steps of a loop driven by prof; returns the steps at which a
        trace started."""
        started = []
        for s in range(n):
            k = len(self.calls("start_trace"))
            prof.begin_step(s)
            if len(self.calls("start_trace")) > k:
                started.append(s)
            if on_step:
                on_step(s)
            with self.jax.profiler.StepTraceAnnotation("train", step_num=s):
                pass
            prof.end_step(s)
        return started

    def test_lazy_import(self):
        code = ("import sys; sys.path.insert(0, %r); import profsum.jax as pj; print('jax' in sys.modules)\n"
                "try:\n    pj.scope('x')\nexcept ImportError as e:\n    print(e)\n" % PYDIR)
        out = subprocess.run([SYS_PY, "-c", code], capture_output=True, text=True, cwd="/", timeout=60,
                             env=dict(os.environ, PYTHONPATH="")).stdout.splitlines()
        self.assertEqual(out[0], "False")
        self.assertIn("profsum.jax needs JAX", out[1])

    def test_trace(self):
        pj, jax = self.pj, self.jax
        with pj.trace(self.log) as t:
            self.assertIsNone(t.label)
            with pj.scope("outer"):
                for s in range(3):
                    with pj.step_scope("train", s):
                        pass
            jax.block_until_ready(1)
        self.assertEqual(self.calls("start_trace", "stop_trace"),
                         [("start_trace", self.log, {"create_perfetto_trace": False}), ("stop_trace",)])
        sessions = pj.list_profiles(self.log)
        self.assertEqual(len(sessions), 1)
        self.assertEqual(t.session, sessions[0]["path"])
        self.assertEqual(t.label, "trace-" + sessions[0]["session"])
        self.assertEqual(t.db, os.path.join(self.log, "profsum.db"))
        self.assertTrue(t.trace_file.endswith("/standin-host.trace.json.gz"))
        # profsum read the JSON, not the stub .xplane.pb next to it
        self.assertEqual(self.db_rows("SELECT label, trace_path FROM profsum_overview"),
                         [(t.label, t.session + "/standin-host.trace.json.gz")])
        self.assertEqual(self.db_rows("SELECT step FROM profsum_steps ORDER BY step"), [(0,), (1,), (2,)])
        # the ops of the three steps, then the op traced in scope("outer")
        self.assertEqual([o["name"] for o in t.summary["hot_ops"]][:2], ["fusion.1", "all-reduce.1"])
        self.assertEqual([(o["exclusive_duration"], o["tf_op_path"]) for o in t.summary["hot_ops"]][2:],
                         [(300.0, "jit(train_step)/outer/dot_general")])
        self.assertEqual([o["exclusive_duration"] for o in t.hot_ops(as_frame=False)], [1500.0, 600.0, 300.0])
        self.assertIn("fusion.1", t.report_md())
        self.assertTrue(t._repr_html_().startswith("<iframe srcdoc="))
        self.assertEqual(t.report_html().label, t.label)

    def test_trace_labels_db_and_kwargs(self):
        pj = self.pj
        with pj.trace(self.log) as a:
            pass
        with pj.trace(self.log) as b:         # most likely the same second: the same session name
            pass
        self.assertNotEqual(a.label, b.label)
        self.assertTrue(b.label.startswith("trace-"))
        labels = [r[0] for r in self.db_rows("SELECT label FROM profsum_trace ORDER BY trace_id")]
        self.assertEqual(labels, [a.label, b.label])
        other = os.path.join(self.td.path, "other.db")
        with pj.trace(self.log, db=other, label="mine", options={"warmup_steps": 0},
                      create_perfetto_trace=True) as c:
            with pj.step_scope("train", 7):
                pass
        self.assertEqual(self.calls("start_trace")[-1][2], {"create_perfetto_trace": True})
        self.assertEqual((c.label, c.db), ("mine", other))
        self.assertTrue(c.trace_file.endswith("/perfetto_trace.json.gz"))
        self.assertEqual(self.db_rows("SELECT label, warmup_steps FROM profsum_overview", other), [("mine", 0)])

    def test_trace_body_raises(self):
        pj = self.pj
        with self.assertRaises(ValueError):
            with pj.trace(self.log) as t:
                raise ValueError("boom")
        self.assertEqual(len(self.calls("stop_trace")), 1)
        self.assertIsNone(t.trace_id)
        self.assertFalse(os.path.exists(os.path.join(self.log, "profsum.db")))

    def test_scope(self):
        s = self.pj.scope("attention", extra=1)
        self.assertIsInstance(s.annotation, self.jax.profiler.TraceAnnotation)
        self.assertIsInstance(s.named_scope, self.jax.named_scope)
        self.assertEqual((s.annotation.name, s.annotation.kwargs), ("attention", {"extra": 1}))
        self.assertEqual(self.calls("named_scope", "TraceAnnotation"),
                         [("named_scope", "attention"), ("TraceAnnotation", "attention", {"extra": 1})])
        st = self.pj.step_scope("train", 3)
        self.assertIsInstance(st, self.jax.profiler.StepTraceAnnotation)
        self.assertEqual(self.calls("StepTraceAnnotation"), [("StepTraceAnnotation", "train", {"step_num": 3})])

    def test_scope_names_regions(self):
        """What runs in scope(name) is a region of the summary: the name is
        in the tf_op path of the ops traced inside it."""
        pj = self.pj
        with pj.trace(self.log, options={"warmup_steps": 0}) as t:
            for step in range(2):
                with pj.step_scope("train", step):
                    with pj.scope("encoder"):
                        with pj.scope("attention"):
                            pass
        regions = {r["path"] for r in t.summary["hierarchical_regions"]}
        # regions as the reference names them: jit(f) is f, levels join with =>
        self.assertIn("train_step=>encoder", regions)
        self.assertIn("train_step=>encoder=>attention=>dot_general", regions)

    def test_background_captures_in_one_second(self):
        """Captures one after the other within a second share JAX's session
        folder: each background import still stores its own steps."""
        prof = self.pj.StepProfiler(self.log, start_step=3, num_steps=2, every_n_steps=3, background=True)
        self.assertEqual(self.run_steps(prof, 14), [3, 6, 9, 12])
        prof.close()
        labels = sorted(c.label for c in prof.captures)
        self.assertEqual(labels, ["steps-12-13", "steps-3-4", "steps-6-7", "steps-9-10"])
        got = self.db_rows("SELECT label, group_concat(step) FROM (SELECT label, step FROM profsum_steps "
                           "ORDER BY label, step) GROUP BY label ORDER BY label")
        self.assertEqual(got, [("steps-12-13", "12,13"), ("steps-3-4", "3,4"), ("steps-6-7", "6,7"),
                               ("steps-9-10", "9,10")])

    def test_capture_that_wrote_nothing(self):
        """A stop that wrote no file never imports an older session."""
        with self.pj.trace(self.log):
            pass
        before = self.pj._snapshot(self.log)
        with self.assertRaisesRegex(self.ps.ProfsumError, "wrote no file during this capture"):
            self.pj._written_session(self.log, before)

    def test_several_hosts_xplanes(self):
        d = os.path.join(self.log, "plugins", "profile", "2025_01_01_00_00_00")
        os.makedirs(d)
        for h in ("h0", "h1"):
            open(os.path.join(d, h + ".xplane.pb"), "wb").close()
        with self.assertRaisesRegex(self.ps.ProfsumError, "2 hosts' XPlanes.*'hosts': 'all'"):
            self.pj._written_session(self.log, {})
        s = self.pj._written_session(self.log, {}, {"hosts": "all"})
        self.assertEqual(s["trace"], d)

    def test_kept_error_after_the_work(self):
        """A kept background error is raised once the call did its work:
        the capture it starts or stops still starts or stops."""
        import sqlite3
        bad = os.path.join(self.td.path, "no", "such", "dir", "p.db")
        prof = self.pj.StepProfiler(self.log, db=bad, start_step=0, num_steps=1, every_n_steps=2,
                                    background=True)
        prof.begin_step(0)
        self.assertIsNone(prof.end_step())
        prof._join_background()
        with self.assertRaisesRegex(sqlite3.OperationalError, "unable to open database file"):
            prof.begin_step(2)          # starts the second capture, then raises
        self.assertTrue(prof.capturing)
        self.assertEqual(len(self.calls("start_trace")), 2)
        raised = 0
        try:
            prof.end_step()             # stops it (its import fails in the thread too)
        except sqlite3.OperationalError:
            raised += 1
        self.assertFalse(prof.capturing)
        self.assertEqual(len(self.calls("stop_trace")), 2)
        try:
            prof.close()
        except sqlite3.OperationalError:
            raised += 1
        self.assertEqual(raised, 1)

    def test_step_counting_and_close(self):
        pj = self.pj
        prof = pj.StepProfiler(self.log, start_step=5, num_steps=3)
        for s in (5, 5, 6):             # begin_step(5) twice is one step
            prof.begin_step(s)
        prof.end_step()
        self.assertTrue(prof.capturing)
        prof.begin_step(7)
        self.assertEqual(prof.end_step().label, "steps-5-7")
        # a capture still running at close() is stopped and its steps imported
        prof = pj.StepProfiler(self.log, start_step=20, num_steps=10)
        for s in range(20, 23):
            prof.begin_step(s)
            prof.end_step()
        prof.close()
        self.assertEqual([c.label for c in prof.captures], ["steps-20-22"])
        # leaving a with block by an exception stops it without importing
        with self.assertRaises(KeyError):
            with pj.StepProfiler(self.log, start_step=0, num_steps=10) as p2:
                p2.begin_step(0)
                raise KeyError("x")
        self.assertEqual(p2.captures, [])
        self.assertFalse(p2.capturing)

    def test_max_profiles_counts_captures(self):
        pj = self.pj
        # every_n_steps below num_steps: the start at 3 is skipped (a capture
        # runs), not counted
        prof = pj.StepProfiler(self.log, start_step=0, num_steps=5, every_n_steps=3, max_profiles=2)
        self.assertEqual(self.run_steps(prof, 20), [0, 6])
        prof.close()
        # an asynchronous capture over a slot neither uses it up nor counts
        prof = pj.StepProfiler(self.log, start_step=100, num_steps=5, every_n_steps=100, max_profiles=2)

        def at(s):
            if s == 96:
                prof.capture_async()
        self.assertEqual(self.run_steps(prof, 320, at), [97, 200, 300])
        prof.close()

    def test_relative_db_fixed_at_creation(self):
        cwd = os.getcwd()
        os.chdir(self.td.path)
        try:
            prof = self.pj.StepProfiler(self.log, db="rel.db", start_step=0, num_steps=1)
            os.chdir("/")
            prof.begin_step(0)
            prof.end_step()
            prof.close()
        finally:
            os.chdir(cwd)
        self.assertTrue(os.path.exists(os.path.join(self.td.path, "rel.db")))
        self.assertEqual(prof.captures[0].db, os.path.join(self.td.path, "rel.db"))

    def test_profile_decorator(self):
        pj, jax = self.pj, self.jax

        @pj.profile(self.log, warmup=3)
        def step(i):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                pass
            return i * 10

        self.assertIsNone(step.capture)
        self.assertEqual([step(i) for i in range(1, 7)], [10, 20, 30, 40, 50, 60])
        self.assertEqual(len(self.calls("start_trace")), 1)
        self.assertEqual(len(self.calls("stop_trace")), 1)
        # only the 4th call ran inside the trace, blocked on before the stop
        self.assertEqual(self.calls("block_until_ready"), [("block_until_ready", 40)])
        i = self.jax.CALLS.index(("stop_trace",))
        self.assertEqual(self.jax.CALLS[i - 1], ("block_until_ready", 40))
        self.assertEqual(self.db_rows("SELECT step FROM profsum_steps"), [(4,)])
        self.assertTrue(step.capture.label.startswith("step-"))
        self.assertEqual(step.__name__, "step")
        with self.assertRaises(ValueError):
            pj.profile(self.log, warmup=-1)

    def test_step_profiler_window(self):
        prof = self.pj.StepProfiler(self.log, start_step=100, num_steps=5)
        self.assertEqual(self.run_steps(prof, 300), [100])
        prof.close()
        self.assertEqual(len(self.calls("stop_trace")), 1)
        self.assertEqual([c.label for c in prof.captures], ["steps-100-104"])
        self.assertEqual(prof.captures[0].steps, (100, 104))
        self.assertEqual(self.db_rows("SELECT label, step FROM profsum_steps ORDER BY step"),
                         [("steps-100-104", s) for s in range(100, 105)])
        # the stop came right after the 5th step, blocked on its output
        i = self.jax.CALLS.index(("stop_trace",))
        self.assertEqual(self.jax.CALLS[i - 1], ("block_until_ready", 104))

    def test_step_profiler_every_n(self):
        prof = self.pj.StepProfiler(self.log, start_step=100, num_steps=5, every_n_steps=100, max_profiles=2)
        self.assertEqual(self.run_steps(prof, 450), [100, 200])     # not 300, 400: max_profiles
        prof.close()
        self.assertEqual([c.label for c in prof.captures], ["steps-100-104", "steps-200-204"])
        self.assertEqual(self.db_rows("SELECT label, count(*), min(step), max(step) FROM profsum_steps "
                                      "GROUP BY label ORDER BY label"),
                         [("steps-100-104", 5, 100, 104), ("steps-200-204", 5, 200, 204)])
        # without start_step the first capture is one period in (past compilation)
        prof = self.pj.StepProfiler(self.log, num_steps=2, every_n_steps=50)
        self.assertEqual(self.run_steps(prof, 120), [50, 100])
        self.assertEqual([c.label for c in prof.captures], ["steps-50-51", "steps-100-101"])

    def test_capture_async(self):
        prof = self.pj.StepProfiler(self.log)

        def at(s):
            if s == 37:
                prof.capture_async()
        self.assertEqual(self.run_steps(prof, 60, at), [38])
        prof.close()
        self.assertEqual([c.label for c in prof.captures], ["steps-38-42"])
        self.assertEqual([r[0] for r in self.db_rows("SELECT step FROM profsum_steps ORDER BY step")],
                         [38, 39, 40, 41, 42])

    def test_background(self):
        prof = self.pj.StepProfiler(self.log, start_step=3, num_steps=2, background=True)
        self.assertEqual(self.run_steps(prof, 10), [3])
        prof.wait()
        self.assertEqual([c.label for c in prof.captures], ["steps-3-4"])
        self.assertEqual(self.db_rows("SELECT step FROM profsum_steps ORDER BY step"), [(3,), (4,)])
        # an import that fails in the thread: kept, raised by the next call, once
        import sqlite3
        bad = os.path.join(self.td.path, "no", "such", "dir", "p.db")
        prof = self.pj.StepProfiler(self.log, db=bad, start_step=0, num_steps=1, background=True)
        prof.begin_step(0)
        self.assertIsNone(prof.end_step())
        for t in prof._threads:
            t.join()
        with self.assertRaisesRegex(sqlite3.OperationalError, "unable to open database file"):
            prof.begin_step(1)
        prof.end_step()
        prof.close()
        self.assertEqual(prof.captures, [])

    def test_list_and_latest_profiles(self):
        pj = self.pj
        self.assertEqual(pj.list_profiles(self.log), [])
        self.assertIsNone(pj.latest_profile(self.log))
        root = os.path.join(self.log, "plugins", "profile")
        old, new = os.path.join(root, "2024_01_01_00_00_00"), os.path.join(root, "2025_06_01_12_00_00")
        for d, files in ((old, ["a.trace.json.gz", "a.xplane.pb"]),
                         (new, ["b.trace.json.gz", "b.xplane.pb", "c.xplane.pb", "perfetto_trace.json.gz"])):
            os.makedirs(d)
            for f in files:
                open(os.path.join(d, f), "wb").close()
        open(os.path.join(root, "stray.txt"), "w").close()
        got = pj.list_profiles(self.log)
        self.assertEqual([s["session"] for s in got], ["2025_06_01_12_00_00", "2024_01_01_00_00_00"])
        self.assertEqual(got[0]["hosts"], ["b", "c"])
        self.assertEqual([os.path.basename(f) for f in got[0]["files"]],
                         ["b.trace.json.gz", "b.xplane.pb", "c.xplane.pb", "perfetto_trace.json.gz"])
        self.assertEqual(got[0]["trace"], os.path.join(new, "perfetto_trace.json.gz"))
        # a lone XPlane is what a folder import reads first (the JSON when it
        # does not decode); with several, the JSON
        self.assertEqual((got[1]["hosts"], got[1]["trace"]), (["a"], os.path.join(old, "a.xplane.pb")))
        self.assertEqual(pj.latest_profile(self.log), new)

    def test_session_without_a_trace(self):
        d = os.path.join(self.log, "plugins", "profile", "2025_01_01_00_00_00")
        os.makedirs(d)
        open(os.path.join(d, "notes.txt"), "wb").close()
        with self.assertRaisesRegex(self.ps.ProfsumError, "no trace in the session.*xplane.pb"):
            self.pj._written_session(self.log, {})

    def test_xplane_only_session_is_read(self):
        d = os.path.join(self.log, "plugins", "profile", "2025_01_01_00_00_00")
        os.makedirs(d)
        open(os.path.join(d, "h.xplane.pb"), "wb").close()
        s = self.pj._written_session(self.log, {})
        self.assertEqual(s["trace"], os.path.join(d, "h.xplane.pb"))

    def test_capture_doc_examples(self):
        """The Python blocks of docs/capture.md's profsum.jax section run."""
        with open(os.path.join(ROOT, "docs", "capture.md"), encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("## Capture from Python: `profsum.jax`"):text.index("## Where the files land")]
        blocks = [b.split("```")[0] for b in section.split("```python\n")[1:]]
        self.assertEqual(len(blocks), 3)
        cwd = os.getcwd()
        os.chdir(self.td.path)
        try:
            ns = {"train_step": lambda state, batch: state + 1, "state": 0, "batch": None, "num_steps": 120}
            with contextlib.redirect_stdout(io.StringIO()) as out:
                for b in blocks:
                    exec(compile(b.replace("/tmp/prof", self.log), "capture.md", "exec"), ns)
            self.assertTrue(out.getvalue().startswith(ns["t"].label + " 1 "))
        finally:
            os.chdir(cwd)
        self.assertEqual(ns["t"].summary["hot_ops"][0]["name"], "fusion.1")
        self.assertEqual([c.label for c in ns["prof"].captures], ["steps-100-104"])
        conn = self.ps.connect(os.path.join(self.td.path, "runs.db"))
        self.assertEqual(conn.execute("SELECT label, series, warmup_steps FROM profsum_overview ORDER BY trace_id")
                         .fetchall(), [(ns["t"].label, None, 2), ("steps-100-104", "llama-8b", 5)])
        conn.close()

    def test_readme_notebook_example(self):
        """The notebook example of README.md runs (stand-in jax, a dummy
        train_step) and shows the report."""
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            text = f.read()
        section = text[text.index("## Ways in: sqlite3, Python, Node"):]
        blocks = [b for b in section.split("```python\n")[1:] if "profsum.jax" in b.split("```")[0]]
        self.assertTrue(blocks, "no notebook example in the README's 'Ways in' section")
        code = blocks[0].split("```")[0]
        self.assertLessEqual(len([l for l in code.splitlines() if l.strip()]), 10)
        cwd = os.getcwd()
        os.chdir(self.td.path)
        try:
            ns = {"train_step": lambda state, batch: state + 1, "state": 0, "batch": None}
            # the last line of a cell is what the notebook shows
            lines = code.rstrip().splitlines()
            exec(compile("\n".join(lines[:-1]), "README.md", "exec"), ns)
            shown = eval(compile(lines[-1].split("#")[0].strip(), "README.md", "eval"), ns)
        finally:
            os.chdir(cwd)
        self.assertTrue(shown._repr_html_().startswith("<iframe srcdoc="))
        self.assertEqual(ns["state"], 5)
        self.assertEqual(len(self.calls("start_trace")), 1)


# ---- install into a fresh venv, no network ------------------------------------------

INSTALLED_CHECK = r"""
import json, os, sys
import profsum
db = profsum.connect(os.path.join(sys.argv[2], "i.db"))
profsum.import_trace(db, sys.argv[1], "run-1", warmup_steps=1)
ops = profsum.hot_ops(db, "run-1", as_frame=False)
print(json.dumps({"file": profsum.__file__, "so": profsum.loadable_path(), "route": profsum.route(),
                  "driver": type(db).__module__, "version": profsum.__version__,
                  "ops": [[o["name"], o["exclusive_duration"]] for o in ops]}))
"""


class Install(unittest.TestCase):
    """python3 -m venv --system-site-packages, then pip install
    --no-build-isolation --no-index of python/ (a copy, with PROFSUM_SO: the
    repository is not written); the installed package carries profsum.so and
    imports a trace on /usr/bin/python3, through sqlite3 and through APSW."""

    @classmethod
    def setUpClass(cls):
        cls.td = TempDir()
        cls.venv = os.path.join(cls.td.path, "v")
        r = subprocess.run([SYS_PY, "-m", "venv", "--system-site-packages", cls.venv],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            cls.td.__exit__()
            raise unittest.SkipTest("cannot make a venv (apt-get install python3-venv): " + r.stderr.strip()[-200:])
        cls.py = os.path.join(cls.venv, "bin", "python")
        src = os.path.join(cls.td.path, "src")
        shutil.copytree(PYDIR, os.path.join(src, "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "profsum.so"))
        shutil.copy(os.path.join(ROOT, "VERSION"), src)
        env = dict(os.environ, PROFSUM_SO=os.path.abspath(SO), PIP_NO_INPUT="1")
        cls.pip = subprocess.run([cls.py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                                  os.path.join(src, "python")], capture_output=True, text=True, env=env, timeout=300)
        cls.trace = f1_trace(cls.td)

    @classmethod
    def tearDownClass(cls):
        cls.td.__exit__()

    def run_installed(self, **env_extra):
        env = dict(os.environ, **env_extra)
        for k in ("PROFSUM_SO", "PYTHONPATH"):
            env.pop(k, None)
        with TempDir() as work:
            r = subprocess.run([self.py, "-c", INSTALLED_CHECK, self.trace, work.path], capture_output=True,
                               text=True, cwd=work.path, env=env, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_install_and_import_a_trace(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stdout + self.pip.stderr)
        out = self.run_installed(PROFSUM_FORCE_APSW="")
        site = os.path.join(self.venv, "lib")
        self.assertTrue(out["file"].startswith(site), out)
        self.assertEqual(out["so"], os.path.join(os.path.dirname(out["file"]), "profsum.so"))
        with open(out["so"], "rb") as a, open(SO, "rb") as b:
            self.assertEqual(a.read(), b.read())
        self.assertEqual((out["route"], out["driver"]), ("sqlite3", "sqlite3"))
        self.assertEqual(out["version"], version())
        self.assertEqual([tuple(o) for o in out["ops"]], F1_OPS)
        # the venv's python is Debian's
        base = subprocess.run([self.py, "-c", "import sys; print(sys.base_prefix)"], capture_output=True,
                              text=True).stdout.strip()
        self.assertEqual(base, "/usr")

    @unittest.skipUnless(have_apsw(), "APSW is not installed (apt-get install python3-apsw)")
    def test_installed_apsw_route(self):
        self.assertEqual(self.pip.returncode, 0, self.pip.stdout + self.pip.stderr)
        out = self.run_installed(PROFSUM_FORCE_APSW="1")
        self.assertEqual((out["route"], out["driver"]), ("apsw", "apsw"))
        self.assertEqual([tuple(o) for o in out["ops"]], F1_OPS)

    def test_wheel_from_a_repository(self):
        """Without PROFSUM_SO the build runs `make -C .. profsum.so` in the
        repository python/ sits in (here a small one whose Makefile copies
        the extension) and packs its profsum.so; the wheel is for any
        Python 3 of the platform."""
        repo = os.path.join(self.td.path, "repo")
        os.makedirs(os.path.join(repo, "ext"))
        shutil.copytree(PYDIR, os.path.join(repo, "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "profsum.so"))
        with open(os.path.join(repo, "VERSION"), "w") as f:
            f.write("9.8.7\n")
        with open(os.path.join(repo, "Makefile"), "w") as f:
            f.write("profsum.so:\n\tcp %s profsum.so\n\techo made > made.txt\n" % os.path.abspath(SO))
        env = dict(os.environ, PIP_NO_INPUT="1")
        env.pop("PROFSUM_SO", None)
        out = os.path.join(self.td.path, "wheels")
        r = subprocess.run([self.py, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps",
                            "-w", out, os.path.join(repo, "python")], capture_output=True, text=True, env=env,
                           timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.exists(os.path.join(repo, "made.txt")))
        wheels = os.listdir(out)
        self.assertEqual(len(wheels), 1)
        self.assertRegex(wheels[0], r"^profsum-9\.8\.7-py3-none-linux_[a-z0-9_]+\.whl$")
        with zipfile.ZipFile(os.path.join(out, wheels[0])) as z:
            names = z.namelist()
            self.assertIn("profsum/profsum.so", names)
            self.assertIn("profsum/jax.py", names)
            with open(SO, "rb") as f:
                self.assertEqual(z.read("profsum/profsum.so"), f.read())
            self.assertIn("Root-Is-Purelib: false", z.read("profsum-9.8.7.dist-info/WHEEL").decode())
            lic = [n for n in names if n.startswith("profsum-9.8.7.dist-info/") and n.endswith("/LICENSE")]
            self.assertEqual(len(lic), 1, names)
            with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
                self.assertEqual(z.read(lic[0]), f.read())
        # outside a repository and without PROFSUM_SO the build says what it needs
        lone = os.path.join(self.td.path, "lone")
        shutil.copytree(os.path.join(repo, "python"), os.path.join(lone, "python"))
        r = subprocess.run([self.py, "-m", "pip", "wheel", "--no-build-isolation", "--no-index", "--no-deps",
                            "-w", out, os.path.join(lone, "python")], capture_output=True, text=True,
                           env=dict(env, PROFSUM_VERSION="1.0"), timeout=300)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("no profsum.so", r.stdout + r.stderr)
