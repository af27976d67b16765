"""Capture JAX profiles and import them into a profsum database.

    import profsum.jax as pj

    with pj.trace("/tmp/prof") as t:          # jax.profiler.start_trace / stop_trace
        state = train_step(state, batch)
        jax.block_until_ready(state)
    t.label, t.summary                         # imported into /tmp/prof/profsum.db on exit

    @pj.profile("/tmp/prof", warmup=2)         # the 3rd call is profiled
    def step(state, batch): ...

    prof = pj.StepProfiler("/tmp/prof", start_step=100, num_steps=5)
    for s in range(n):
        prof.begin_step(s); state = train_step(state, batch); prof.end_step(state)

jax is imported on first use, not when this module is.  The calls made are
jax.profiler.start_trace(log_dir, **kw), jax.profiler.stop_trace(),
jax.profiler.TraceAnnotation, jax.profiler.StepTraceAnnotation,
jax.named_scope and jax.block_until_ready, as JAX documents them.  JAX writes each capture to
<log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/ (<host>.xplane.pb and
<host>.trace.json.gz; perfetto_trace.json.gz with create_perfetto_trace=True);
profsum imports the session folder the capture wrote, as the reference
tool picks in it: a lone <host>.xplane.pb first, else the trace JSON.
"""
import contextlib
import functools
import os
import threading

from . import _core

__all__ = ["trace", "scope", "step_scope", "profile", "StepProfiler", "Capture",
           "latest_profile", "list_profiles"]

_TRACE_SUFFIXES = (".trace.json.gz", ".trace.json", ".xplane.pb")
_JSON_PICK = ("perfetto_trace.json.gz",)


def _jax():
    try:
        import jax
    except ImportError as e:
        raise ImportError("profsum.jax needs JAX (pip install jax); the rest of profsum does not") from e
    return jax


def _profile_root(log_dir):
    return os.path.join(os.path.abspath(os.fspath(log_dir)), "plugins", "profile")


def _host_of(name):
    for suf in _TRACE_SUFFIXES:
        if name.endswith(suf):
            return name[:-len(suf)]
    return None


def _json_trace(files):
    """The file profsum reads in one session: perfetto_trace.json.gz, else the
    first *.trace.json.gz, else the first *.trace.json (by name)."""
    names = sorted(os.path.basename(f) for f in files)
    for test in (lambda n: n == "perfetto_trace.json.gz", lambda n: n.endswith(".trace.json.gz"),
                 lambda n: n.endswith(".trace.json")):
        for n in names:
            if test(n):
                return n
    return None


def list_profiles(log_dir):
    """The capture sessions under <log_dir>/plugins/profile, newest first.

    Each is a dict: session (the directory name, JAX's timestamp), path,
    hosts (from <host>.trace.json.gz / .trace.json / .xplane.pb), files
    (every file of the session, full paths, by name) and trace (the file
    a folder import reads first: the session's one .xplane.pb, else its trace
    JSON; None when it has neither).  The import falls back to the JSON when
    that XPlane does not decode; Capture.trace_file says what was read.  Newest first: by name (timestamps sort
    in time order), then modification time.  [] when there is none."""
    root = _profile_root(log_dir)
    try:
        names = os.listdir(root)
    except FileNotFoundError:
        return []
    out = []
    for name in names:
        path = os.path.join(root, name)
        if not os.path.isdir(path):
            continue
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
        hosts = sorted({h for h in (_host_of(os.path.basename(f)) for f in files) if h is not None})
        xplanes = [f for f in files if f.endswith(".xplane.pb")]
        pick = os.path.basename(xplanes[0]) if len(xplanes) == 1 else _json_trace(files)
        out.append({"session": name, "path": path, "hosts": hosts, "files": files,
                    "trace": os.path.join(path, pick) if pick else None,
                    "_mtime": os.stat(path).st_mtime_ns})
    out.sort(key=lambda s: (s["session"], s["_mtime"]), reverse=True)
    for s in out:
        del s["_mtime"]
    return out


def latest_profile(log_dir):
    """Path of the newest capture session under <log_dir>/plugins/profile, or
    None."""
    s = list_profiles(log_dir)
    return s[0]["path"] if s else None


def _snapshot(log_dir):
    """{file: (mtime_ns, ctime_ns, size, inode)} of every file under
    plugins/profile: a file rewritten in place changes its ctime, one
    replaced by a rename its inode."""
    snap = {}
    root = _profile_root(log_dir)
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                st = os.stat(p)
            except OSError:
                continue
            snap[p] = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
    return snap


def _written_session(log_dir, before, options=None):
    """The session directory the capture just wrote: the newest one holding
    a file that is new or changed since `before`.  Raises ProfsumError when
    the capture wrote no file (an older session is never taken for it) or
    when the session holds no trace profsum reads.  A session of several
    hosts' XPlanes and no trace JSON (JAX's output when hosts share a log
    dir) is read whole with options {"hosts": "all"}, one trace per host;
    without it the error says so."""
    after = _snapshot(log_dir)
    changed = {os.path.dirname(p) for p, st in after.items() if before.get(p) != st}
    sessions = list_profiles(log_dir)
    if not sessions:
        raise _core.ProfsumError("profsum.jax: %s: the profiler wrote no session (no %s)"
                                 % (log_dir, os.path.join("plugins", "profile", "<timestamp>")))
    fresh = [s for s in sessions if s["path"] in changed]
    if not fresh:
        raise _core.ProfsumError(
            "profsum.jax: %s: the profiler wrote no file during this capture (the newest session, %s, "
            "is older); nothing imported" % (log_dir, sessions[0]["path"]))
    s = fresh[0]
    xplanes = [f for f in s["files"] if f.endswith(".xplane.pb")]
    if s["trace"] is None and len(xplanes) > 1:
        if (options or {}).get("hosts") == "all":
            return dict(s, trace=s["path"])
        raise _core.ProfsumError(
            "profsum.jax: %s: %d hosts' XPlanes and no trace JSON: the reference reads one host's "
            "JSON here; pass options={'hosts': 'all'} to import every host (one trace each, "
            "labelled <label>/<host>; see docs/sessions.md)" % (s["path"], len(xplanes)))
    if s["trace"] is None:
        raise _core.ProfsumError(
            "profsum.jax: %s: no trace in the session (files: %s); profsum reads "
            "<host>.xplane.pb, <host>.trace.json.gz or perfetto_trace.json.gz"
            % (s["path"], ", ".join(os.path.basename(f) for f in s["files"]) or "none"))
    return s


class Capture:
    """One capture imported into a profsum database.

    Attributes (set when the capture was imported): log_dir, session (the
    session directory), trace_file (the file the import read), db (the database
    path), label, trace_id, summary (the profile_summary.v1 document, a
    dict), steps ((first, last) for a StepProfiler capture, else None).
    hot_ops(), report_md(), report_html() read the database again; Jupyter
    shows the HTML report inline."""

    def __init__(self, log_dir, db=None):
        self.log_dir = os.path.abspath(os.fspath(log_dir))
        self.db = os.path.abspath(os.fspath(db)) if db is not None else os.path.join(self.log_dir, "profsum.db")
        self.session = self.trace_file = self.label = self.trace_id = self.summary = None
        self.steps = None

    def _import(self, before, label, prefix, options):
        """Find the session written since `before` and import it."""
        return self._import_session(_written_session(self.log_dir, before, options), label, prefix, options)

    def _import_session(self, s, label, prefix, options):
        """Import session s (an entry of list_profiles) under label (None:
        <prefix>-<session>, made unique when taken); fills in the fields."""
        self.session, self.trace_file = s["path"], s["trace"]
        opts = dict(options or {})
        if label is None:
            label = "%s-%s" % (prefix, s["session"])
            opts.setdefault("unique_label", True)   # two captures in one second share a session name
        conn = _core.connect(self.db)
        try:
            self.trace_id = _core.import_trace(conn, s["path"], label, opts)
            self.label, self.trace_file = _core._row(
                conn, "SELECT label, trace_path FROM profsum_trace WHERE trace_id = ?", (self.trace_id,))
            self.summary = _core.summary(conn, self.trace_id)
            if hasattr(conn, "commit"):
                conn.commit()
        finally:
            conn.close()
        return self

    def _conn(self):
        if self.trace_id is None:
            raise _core.ProfsumError("profsum.jax: this capture has not been imported (yet)")
        return _core.connect(self.db)

    def hot_ops(self, limit=10, as_frame=None):
        conn = self._conn()
        try:
            return _core.hot_ops(conn, self.trace_id, limit, as_frame)
        finally:
            conn.close()

    def report_md(self, top_k=10, kpis=False):
        conn = self._conn()
        try:
            return _core.report_md(conn, self.trace_id, top_k, kpis)
        finally:
            conn.close()

    def report_html(self, top_k=10):
        conn = self._conn()
        try:
            r = _core.report_html(conn, self.trace_id, top_k)
        finally:
            conn.close()
        r.label = self.label
        return r

    def _repr_html_(self):
        if self.trace_id is None:
            return "<pre>%s</pre>" % repr(self)
        return self.report_html()._repr_html_()

    def __repr__(self):
        return "<profsum capture label=%r trace_id=%r session=%r db=%r>" % (
            self.label, self.trace_id, self.session, self.db)


class trace(Capture):
    """Context manager: jax.profiler.start_trace(log_dir, **start_trace_kwargs)
    on entry, jax.profiler.stop_trace() on exit, then the session it wrote
    is imported into db (default <log_dir>/profsum.db) under label (default
    trace-<session timestamp>, made unique when taken).  `as` binds this
    object: a Capture, filled in on exit.  When the body raises, the trace is
    stopped and nothing is imported.  Block on your outputs
    (jax.block_until_ready) inside the block: dispatch is asynchronous.
    options: profsum_import options (warmup_steps, series, ...)."""

    def __init__(self, log_dir, db=None, label=None, options=None, _prefix="trace", **start_trace_kwargs):
        Capture.__init__(self, log_dir, db)
        self._label, self._options, self._prefix = label, options, _prefix
        self._kw = start_trace_kwargs
        self._before = None

    def __enter__(self):
        jax = _jax()
        os.makedirs(self.log_dir, exist_ok=True)
        self._before = _snapshot(self.log_dir)
        jax.profiler.start_trace(self.log_dir, **self._kw)
        return self

    def __exit__(self, exc_type, exc, tb):
        _jax().profiler.stop_trace()
        if exc_type is None:
            self._import(self._before, self._label, self._prefix, self._options)
        return False


class _Scope:
    """jax.named_scope(name) and jax.profiler.TraceAnnotation(name) entered
    together (see scope)."""

    def __init__(self, name, kwargs):
        jax = _jax()
        self.name = name
        self.named_scope = jax.named_scope(name)
        self.annotation = jax.profiler.TraceAnnotation(name, **kwargs)

    def __enter__(self):
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.named_scope)
            stack.enter_context(self.annotation)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)


def scope(name, **kwargs):
    """A named region, as a context manager: jax.named_scope(name), which
    puts name into the name stack of every op traced inside it (the tf_op
    path profsum_regions and the summary's hierarchical_regions are built
    from: it names what jit traces within the block), and
    jax.profiler.TraceAnnotation(name, **kwargs), a range of that name on the
    host timeline while the block runs."""
    return _Scope(name, kwargs)


def step_scope(name, step_num, **kwargs):
    """jax.profiler.StepTraceAnnotation(name, step_num=step_num): marks one
    training step (profsum's step time on GPU comes from these)."""
    return _jax().profiler.StepTraceAnnotation(name, step_num=step_num, **kwargs)


def profile(log_dir, warmup=1, db=None, label=None, options=None, **start_trace_kwargs):
    """Decorator: the first `warmup` calls run unprofiled (compilation,
    warmup), call warmup+1 runs inside trace(log_dir, db) and blocks on its
    result (jax.block_until_ready) before the trace stops, later calls run
    unprofiled.  The wrapper's .capture is the Capture of the profiled call
    (None before it).  Default label: <function name>-<session timestamp>."""
    if int(warmup) < 0:
        raise ValueError("profsum.jax.profile: warmup must be >= 0, not %r" % (warmup,))

    def deco(fn):
        lock = threading.Lock()
        state = {"calls": 0}

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with lock:
                state["calls"] += 1
                n = state["calls"]
            if n != int(warmup) + 1:
                return fn(*args, **kwargs)
            t = trace(log_dir, db=db, label=label, options=options,
                      _prefix=getattr(fn, "__name__", "profile"), **start_trace_kwargs)
            with t:
                out = fn(*args, **kwargs)
                _jax().block_until_ready(out)
            wrapper.capture = t
            return out

        wrapper.capture = None
        return wrapper
    return deco


class StepProfiler:
    """Profile chosen training steps of a loop.

        prof = StepProfiler(log_dir, start_step=100, num_steps=5)
        for step in range(n):
            prof.begin_step(step)
            state = train_step(state, batch)
            prof.end_step(state)            # the argument is blocked on when a capture ends
        prof.close()

    A capture starts at begin_step(s) when s = start_step + k * every_n_steps
    (k = 0, 1, ...; without every_n_steps only s = start_step; with
    every_n_steps and no start_step, start_step = every_n_steps, past
    compilation) while fewer than max_profiles captures have started on
    that schedule (a start skipped because a capture was running does not
    count), or at the first begin_step after capture_async() (safe to call
    from another thread; not counted in max_profiles).  A capture stops at
    the end_step() of its num_steps-th step (begin_step called again with
    the same number is the same step) and is imported with label
    steps-<first>-<last> (made unique when taken) into db (default
    <log_dir>/profsum.db): synchronously, or in a thread with
    background=True.  A capture waits for the background import before it
    starts: JAX names a session folder by the second, so a capture within
    the same second would write over the files still being read.  A
    background import's error is kept and raised by the next call of
    begin_step, end_step, capture_async, wait or close, once that call has
    done its own work.  Steps that would start a capture while one runs are
    skipped.  close() stops a capture still running and imports the steps
    it holds (not when leaving a `with` block by an exception).  .captures
    lists the imported Captures (their .steps = (first, last)).
    start_trace_kwargs go to jax.profiler.start_trace."""

    def __init__(self, log_dir, db=None, start_step=None, num_steps=5, every_n_steps=None,
                 max_profiles=None, background=False, options=None, **start_trace_kwargs):
        if int(num_steps) < 1:
            raise ValueError("StepProfiler: num_steps must be >= 1, not %r" % (num_steps,))
        if every_n_steps is not None and int(every_n_steps) < 1:
            raise ValueError("StepProfiler: every_n_steps must be >= 1, not %r" % (every_n_steps,))
        if max_profiles is not None and int(max_profiles) < 0:
            raise ValueError("StepProfiler: max_profiles must be >= 0, not %r" % (max_profiles,))
        if every_n_steps is not None and start_step is None:
            start_step = every_n_steps
        self.log_dir = os.path.abspath(os.fspath(log_dir))
        # resolved now, as log_dir: a chdir later must not move the database
        self.db = os.path.abspath(os.fspath(db)) if db is not None else None
        self.start_step, self.num_steps = start_step, int(num_steps)
        self.every_n_steps, self.max_profiles = every_n_steps, max_profiles
        self.background, self.options, self._kw = background, options, start_trace_kwargs
        self.captures = []
        self._active = None          # {"first", "last", "count", "before"} while capturing
        self._n_scheduled = 0        # captures started by the schedule
        self._async = threading.Event()
        self._lock = threading.Lock()
        self._threads = []
        self._errors = []

    # -- schedule
    def _scheduled(self, step):
        if self.start_step is None or step < self.start_step:
            return False
        if self.max_profiles is not None and self._n_scheduled >= self.max_profiles:
            return False
        if self.every_n_steps is None:
            return step == self.start_step
        return (step - self.start_step) % self.every_n_steps == 0

    def _kept(self):
        """How many errors are kept now (a call raises one of them once it
        has done its work; an import that fails meanwhile waits for the
        next call)."""
        with self._lock:
            return len(self._errors)

    def _raise_kept(self, kept=None):
        with self._lock:
            if self._errors and (kept is None or kept > 0):
                e = self._errors.pop(0)
                raise e

    def _join_background(self):
        """Wait for the background imports (their errors stay kept)."""
        for t in list(self._threads):
            t.join()
        self._threads = [t for t in self._threads if t.is_alive()]

    @property
    def capturing(self):
        """True between the begin_step that started a capture and the
        end_step that stops it."""
        return self._active is not None

    def capture_async(self):
        """Capture num_steps steps from the next begin_step on."""
        kept = self._kept()
        self._async.set()
        self._raise_kept(kept)

    def begin_step(self, step):
        """Call at the start of every step, with its number."""
        kept = self._kept()
        self._begin(int(step))
        self._raise_kept(kept)

    def _begin(self, step):
        a = self._active
        if a is not None:
            if step != a["last"]:
                a["last"] = step
                a["count"] += 1
            return
        scheduled = self._scheduled(step)
        wanted = scheduled
        if self._async.is_set():
            self._async.clear()
            wanted, scheduled = True, False
        if not wanted:
            return
        self._join_background()
        os.makedirs(self.log_dir, exist_ok=True)
        before = _snapshot(self.log_dir)
        _jax().profiler.start_trace(self.log_dir, **self._kw)
        if scheduled:
            self._n_scheduled += 1
        self._active = {"first": step, "last": step, "count": 1, "before": before}

    def end_step(self, block_on=None):
        """Call at the end of every step.  When it ends a capture: blocks on
        block_on (jax.block_until_ready; pass the step's outputs), stops the
        trace and imports it; returns the Capture (None while the import
        runs in the background, and for steps that end no capture)."""
        kept = self._kept()
        a = self._active
        cap = None
        if a is not None and a["count"] >= self.num_steps:
            cap = self._finish(a, block_on, self.background)
        self._raise_kept(kept)
        return cap

    def _finish(self, a, block_on, background):
        """Stop capture a (blocking on block_on first) and import it."""
        jax = _jax()
        try:
            if block_on is not None:
                jax.block_until_ready(block_on)
        finally:
            self._active = None
            jax.profiler.stop_trace()
        label = "steps-%d-%d" % (a["first"], a["last"])
        cap = Capture(self.log_dir, self.db)
        cap.steps = (a["first"], a["last"])
        opts = self._options_with_unique()
        if not background:
            cap._import(a["before"], label, "steps", opts)
            with self._lock:
                self.captures.append(cap)
            return cap
        # The session is found now, and the next capture waits for this
        # import before it starts (_begin): a capture within the same
        # second writes into the same session folder.
        session = _written_session(self.log_dir, a["before"], opts)
        t = threading.Thread(target=self._import_bg, args=(cap, session, label, opts),
                             name="profsum-import-%s" % label)
        self._threads.append(t)
        t.start()
        return None

    def _options_with_unique(self):
        opts = dict(self.options or {})
        opts.setdefault("unique_label", True)
        return opts

    def _import_bg(self, cap, session, label, opts):
        try:
            cap._import_session(session, label, "steps", opts)
            with self._lock:
                self.captures.append(cap)
        except BaseException as e:  # kept, raised by the next call
            with self._lock:
                self._errors.append(e)

    def wait(self):
        """Wait for the background imports; raise the first kept error."""
        self._join_background()
        self._raise_kept()

    def close(self, import_running=True):
        """Stop a capture still running and import the steps it holds
        (import_running=False: stop it only), wait for the background
        imports, raise a kept error."""
        a = self._active
        if a is not None:
            if import_running:
                self._finish(a, None, False)
            else:
                self._active = None
                _jax().profiler.stop_trace()
        self.wait()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            try:
                self.close(import_running=False)
            except BaseException:
                pass
        return False
