"""Shared helpers for the profsum tests: load the extension, build fixtures."""
import contextlib
import gzip
import json
import os
import sqlite3
import subprocess
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SO = os.environ.get("PROFSUM_SO", os.path.join(ROOT, "profsum.so"))
# Real captures and reproducers kept outside the repository (docs/internals.md,
# "The corpus of real captures"): tests that read them skip without them.
def _find_corpus():
    """A folder beside the checkout that holds a `corpus` folder with its
    expected_counts.json (found by what it holds, not by name), else
    "../corpus" (absent: the tests that need it skip)."""
    parent = os.path.dirname(ROOT)
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        names = []
    for n in names:
        c = os.path.join(parent, n, "corpus")
        if os.path.isfile(os.path.join(c, "expected_counts.json")):
            return c
    return os.path.join(parent, "corpus")


CORPUS = os.environ.get("PROFSUM_CORPUS") or _find_corpus()
REPRO = os.environ.get("PROFSUM_REPRO", os.path.join(os.path.dirname(os.path.abspath(CORPUS)), "repro"))


# The out-of-memory driver (tests/oom_sql.c, built with ASan by `make asan`;
# `make test` brings it up to date when it exists): tests that run it skip
# without it.
OOM_SQL = os.path.join(ROOT, "build", "asan", "oom_sql")


def run_oom_sql(tc, calls, step=None):
    """Run OOM_SQL over the SQL texts `calls`, every allocation of each
    failing in turn (every `step`-th with step), under ASan with leak checks:
    each run must be an error or the full run's result, and every call
    pass."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    env.pop("LD_PRELOAD", None)
    argv = [OOM_SQL] + (["-s", str(step)] if step else []) + list(calls)
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
    tc.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-4000:])
    tc.assertIn("%d passed, 0 failed" % len(calls), r.stdout)


def run_c_unit(tc, name, min_passed, timeout=120):
    """Run the C unit-test binary build/<name> (built with ASan/UBSan by
    `make build/<name>`; the test is skipped when it is not built) with
    leak checks: it must exit 0, print nothing on stderr, report at least
    min_passed passed and no FAIL line."""
    path = os.path.join(ROOT, "build", name)
    if not os.path.exists(path):
        tc.skipTest("build/%s not built (make build/%s)" % (name, name))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    env.pop("LD_PRELOAD", None)     # make asan preloads the runtime for the Python tests
    p = subprocess.run([path], capture_output=True, text=True, timeout=timeout, env=env)
    out = p.stdout.strip().splitlines()
    tc.assertEqual(p.returncode, 0, (p.stdout[-3000:], p.stderr[-3000:]))
    tc.assertEqual(p.stderr.strip(), "")
    tc.assertTrue(out and out[-1].endswith(" passed, 0 failed"), p.stdout[-2000:])
    tc.assertGreaterEqual(int(out[-1].split()[0]), min_passed)
    tc.assertFalse([l for l in out if l.startswith("FAIL")])


SQLRUN = os.path.join(ROOT, "build", "sqlrun")


def sqlrun_mem(sql, threads="0"):
    """Run `SELECT 1`, then sql, through build/sqlrun -m with PROFSUM_THREADS
    set to threads: (bytes in use before sql, in use after it, peak while it
    ran), from SQLite's allocator counters.  One thread by default: with the
    inflate or decoding thread, what its ring holds at the moment of the
    peak depends on timing (it moved a marginal figure by 2 B/event)."""
    if not os.path.exists(SQLRUN):
        raise AssertionError("build/sqlrun is missing: run `make test` (it builds it)")
    p = subprocess.run([SQLRUN, "-m", "SELECT 1", sql], capture_output=True, text=True,
                       env=dict(os.environ, PROFSUM_THREADS=threads), timeout=600)
    if p.returncode != 0:
        raise AssertionError("sqlrun failed: %s" % p.stderr)
    mem = [line.split("|") for line in p.stdout.splitlines() if line.startswith("#mem|")]
    (_, before, _), (_, after, peak) = mem
    return int(before), int(after), int(peak)


def import_memory(path):
    """(stored bytes, peak bytes beyond what was in use before) of importing
    path into an in-memory database, one thread (sqlrun_mem)."""
    before, after, peak = sqlrun_mem("SELECT profsum_import('%s')" % path.replace("'", "''"))
    return after - before, peak - before


def connect(path=":memory:", uri=False):
    """Open a connection with profsum loaded (uri: path is a file: URI)."""
    db = sqlite3.connect(path, uri=uri)
    db.enable_load_extension(True)
    db.load_extension(SO)
    db.enable_load_extension(False)
    return db


def progress_calls(db, sql, args=(), every=50):
    """Run sql on db (fetching every row) with a progress handler called every
    `every` virtual-machine steps; return how many times it was called."""
    calls = [0]

    def count():
        calls[0] += 1
        return 0
    db.set_progress_handler(count, every)
    try:
        db.execute(sql, args).fetchall()
    finally:
        db.set_progress_handler(None, 0)
    return calls[0]



# The reader's modes whose results must be identical (the variables the
# child of run_child_json gets).
TOKENIZER_MODES = {"default": {}, "one_thread": {"PROFSUM_THREADS": "0"},
                   "sse2": {"PROFSUM_TOKENIZER": "sse2"},
                   "portable": {"PROFSUM_TOKENIZER": "portable"},
                   "portable_one_thread": {"PROFSUM_TOKENIZER": "portable",
                                           "PROFSUM_THREADS": "0"}}


def digest_child(queries):
    """A program for run_child_json that prints, as a JSON object, for each
    (key, sql) of queries, and for "rows" (every trace_events row, by idx)
    and "diagnostics" (profsum_diagnostics), the SHA-256 of the rows of sql
    run with the trace as its one parameter (or "error: ..." when it
    fails), and under "summary" the SHA-256 of the trace's
    profile_summary.v1 document without its generated_at_utc (or the
    import's error)."""
    queries = [("rows", "SELECT * FROM trace_events(?) ORDER BY idx"),
               ("diagnostics", "SELECT * FROM profsum_diagnostics(?)")] + list(queries)
    lines = [
        "import hashlib, json, sqlite3, sys",
        "so, trace, dbpath = sys.argv[1:4]",
        "db = sqlite3.connect(dbpath)",
        "db.enable_load_extension(True)",
        "db.load_extension(so)",
        "out = {}",
        "def digest(sql):",
        "    h = hashlib.sha256()",
        "    try:",
        "        for row in db.execute(sql, (trace,)):",
        "            h.update(repr(row).encode())",
        "    except sqlite3.Error as e:",
        "        return 'error: %s' % e",
        "    return h.hexdigest()",
    ]
    lines += ["out[%r] = digest(%r)" % (k, q) for k, q in queries]
    lines += [
        "try:",
        "    db.execute(\"SELECT profsum_import(?, 'x')\", (trace,))",
        "    doc = json.loads(db.execute(\"SELECT profsum_summary_json('x')\").fetchone()[0])",
        "    doc.pop('generated_at_utc', None)",
        "    out['summary'] = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()",
        "except sqlite3.Error as e:",
        "    out['summary'] = 'error: %s' % e",
        "print(json.dumps(out))",
    ]
    return "\n".join(lines) + "\n"


def error_messages(path, query, tags=("default", "portable")):
    """The set of what query (one parameter: path) prints when run in a
    child process in each reader mode of tags (TOKENIZER_MODES): its error
    message, or 'no error'.  One element when every mode agrees."""
    import subprocess
    import sys
    code = ("import sqlite3,sys\n"
            "db=sqlite3.connect(':memory:');db.enable_load_extension(True)\n"
            "db.load_extension(sys.argv[1])\n"
            "try:\n"
            "  db.execute(%r,(sys.argv[2],)).fetchall()\n"
            "  print('no error')\n"
            "except sqlite3.Error as e: print(e)\n") % query
    msgs = set()
    for tag in tags:
        env = dict(os.environ)
        env.pop("PROFSUM_TOKENIZER", None)
        env.pop("PROFSUM_THREADS", None)
        env.update(TOKENIZER_MODES[tag])
        out = subprocess.run([sys.executable, "-c", code, SO, path], env=env,
                             capture_output=True, text=True, timeout=60)
        msgs.add(out.stdout.strip())
    return msgs


def assert_one_error(tc, path, query, case, why, where):
    """In a subtest named by case: query fails with one message in the
    default and the portable mode (error_messages), naming why and where."""
    msgs = error_messages(path, query)
    with tc.subTest(case=case):
        tc.assertEqual(len(msgs), 1, msgs)
        msg = msgs.pop()
        tc.assertIn(why, msg)
        tc.assertIn(where, msg)


def assert_modes_agree(tc, run, trace, label):
    """run(trace, env, mode) (a digest_child run) gives no error in the
    portable mode, and every other mode of TOKENIZER_MODES gives the same,
    each in a subtest (trace=label, mode)."""
    ref = run(trace, TOKENIZER_MODES["portable"], "portable")
    for v in ref.values():
        tc.assertFalse(v.startswith("error"), v)
    for mode, env in TOKENIZER_MODES.items():
        if mode == "portable":
            continue
        with tc.subTest(trace=label, mode=mode):
            tc.assertEqual(run(trace, env, mode), ref)


def run_child_json(tc, code, trace, dbdir, env_extra, tag, timeout=300):
    """Run the Python program `code` (argv: the extension, trace, a database
    path in dbdir named after trace and tag) in a child process with the
    tokenizer, thread and scanning-thread variables of this process removed and env_extra
    set; assert it exits 0 and return the JSON it prints."""
    import subprocess
    import sys
    env = dict(os.environ)
    env.pop("PROFSUM_TOKENIZER", None)
    env.pop("PROFSUM_THREADS", None)
    env.pop("PROFSUM_SCAN_PIPE", None)
    env.update(env_extra)
    db = os.path.join(dbdir, "%s-%s.db" % (os.path.basename(trace), tag))
    out = subprocess.run([sys.executable, "-c", code, SO, trace, db], env=env,
                         capture_output=True, text=True, timeout=timeout)
    tc.assertEqual(out.returncode, 0, out.stderr)
    return json.loads(out.stdout)

UNPRIVILEGED_ID = 65534   # Debian's `nobody` and `nogroup`


def unreachable_by_others(*paths):
    """Why a user other than the owner (no group rights) cannot reach each
    of paths: the first folder on the way that others may not search, or a
    path they may not read; None when all can be reached."""
    for path in paths:
        path = os.path.abspath(path)
        d = os.path.dirname(path)
        while True:
            if not os.stat(d).st_mode & 0o001:
                return "%s is not searchable by others" % d
            if d == "/":
                break
            d = os.path.dirname(d)
        if not os.stat(path).st_mode & 0o004:
            return "%s is not readable by others" % path
    return None


def run_as_unprivileged(tc, sql, params=()):
    """Run sql with params in a fresh in-memory connection with the extension
    loaded, in a child process that runs as uid and gid UNPRIVILEGED_ID with
    no supplementary groups: what file permissions do to a user who is not
    root.  The caller (root) makes the paths the child needs searchable.
    Returns ("rows", [lists]) or ("error", message).  Skips the test when
    the child cannot change its user (no CAP_SETUID, a sandbox) or cannot
    reach the extension."""
    import sys
    why = unreachable_by_others(SO)
    if why:
        tc.skipTest("uid %d cannot reach the extension: %s" % (UNPRIVILEGED_ID, why))
    code = "\n".join([
        "import json, sqlite3, sys",
        "so, sql, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])",
        "db = sqlite3.connect(':memory:')",
        "db.enable_load_extension(True)",
        "db.load_extension(so)",
        "try:",
        "    print(json.dumps(['rows', [list(r) for r in db.execute(sql, params)]]))",
        "except sqlite3.Error as e:",
        "    print(json.dumps(['error', str(e)]))",
    ])
    try:
        r = subprocess.run([sys.executable, "-c", code, SO, sql, json.dumps(list(params))],
                           user=UNPRIVILEGED_ID, group=UNPRIVILEGED_ID, extra_groups=[],
                           capture_output=True, text=True, timeout=120, cwd="/")
    except PermissionError as e:
        tc.skipTest("cannot run a child as uid %d: %s" % (UNPRIVILEGED_ID, e))
    tc.assertEqual(r.returncode, 0, "child as uid %d failed: %s" % (UNPRIVILEGED_ID, r.stderr[-2000:]))
    return tuple(json.loads(r.stdout))


def run_interrupted_at(db, k, sql, args=(), every=50):
    """Run sql on db, calling db.interrupt() (sqlite3_interrupt) at the k-th
    progress callback; return the text of the OperationalError it raised,
    or None when it succeeded."""
    calls = [0]

    def hit():
        calls[0] += 1
        if calls[0] == k:
            db.interrupt()
        return 0
    db.set_progress_handler(hit, every)
    try:
        db.execute(sql, args).fetchall()
        return None
    except sqlite3.OperationalError as e:
        return str(e)
    finally:
        db.set_progress_handler(None, 0)


class TempDir:
    """A temporary directory that removes itself; use as a context manager."""

    def __init__(self):
        self._td = tempfile.TemporaryDirectory(prefix="profsum-test-")
        self.path = self._td.name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._td.cleanup()

    def write(self, name, data, gz=False):
        """Write bytes/str/obj to NAME (JSON-encoded if not bytes/str)."""
        if not isinstance(data, (bytes, str)):
            data = json.dumps(data)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if gz:
            data = gzip.compress(data)
        p = os.path.join(self.path, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        return p


class DbTestCase(unittest.TestCase):
    """A test case with an in-memory connection (profsum loaded) in self.db
    and a temporary directory in self.td, both closed after each test."""

    def setUp(self):
        self.db = connect()
        self.td = TempDir()

    def tearDown(self):
        self.db.close()
        self.td.__exit__()


def wait_for_task_count(n, timeout=5.0):
    """The number of this process's tasks (/proc/self/task) once it is n,
    or after timeout seconds: a thread just joined can stay listed for a
    moment, its task released after the join returns."""
    deadline = time.monotonic() + timeout
    while len(os.listdir("/proc/self/task")) != n and time.monotonic() < deadline:
        time.sleep(0.05)
    return len(os.listdir("/proc/self/task"))


@contextlib.contextmanager
def env_var(name, value):
    """Environment variable name set to value (None: unset) while the block
    runs, as it was afterwards: the extension reads PROFSUM_THREADS and
    PROFSUM_SCAN_PIPE at each import."""
    old = os.environ.get(name)
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
