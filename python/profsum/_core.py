"""Loading profsum.so into a connection, and the helpers over its SQL.

Everything here goes through SQL the extension registers (docs/api.md); the
helpers only pick the statement, bind the arguments and shape the result:
JSON documents become dicts, tables become pandas DataFrames when pandas is
importable (lists of dicts, one per row, otherwise), reports become objects
that Jupyter shows inline.
"""
import html as _html
import json
import os
import sys

__all__ = [
    "ProfsumError", "LoadError", "loadable_path", "load", "connect", "route",
    "import_trace", "summary", "hot_ops", "compare", "track", "history",
    "traces", "query", "report_md", "report_html", "Markdown", "HTMLReport",
]

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_SO_NAME = "profsum.so"


class ProfsumError(Exception):
    """An error of the profsum package itself (SQL errors of the extension
    come as the driver's own exceptions: sqlite3.OperationalError,
    apsw.SQLError, ...)."""


class LoadError(ProfsumError):
    """profsum.so cannot be found or loaded into a connection."""


# ---- finding and loading the extension ---------------------------------------

def loadable_path():
    """Path of the profsum.so this package loads.

    PROFSUM_SO when set (it must name a file), else the copy installed inside
    the package, else the one built at the root of a source checkout
    (python/profsum/../../profsum.so, for PYTHONPATH=python).  Raises
    LoadError naming the places it looked."""
    env = os.environ.get("PROFSUM_SO")
    if env:
        if not os.path.isfile(env):
            raise LoadError("profsum: PROFSUM_SO=%s: no such file" % env)
        return os.path.abspath(env)
    here = os.path.join(_PKG_DIR, _SO_NAME)
    checkout = os.path.join(os.path.dirname(os.path.dirname(_PKG_DIR)), _SO_NAME)
    for p in (here, checkout):
        if os.path.isfile(p):
            return p
    raise LoadError("profsum: no %s in the package (%s) nor at the root of a source checkout (%s); "
                    "install the package built from the repository (pip install ./python), "
                    "run `make profsum.so`, or set PROFSUM_SO" % (_SO_NAME, here, checkout))


def _is_apsw(conn):
    return type(conn).__module__.split(".")[0] == "apsw"


def _sqlite3_can_load():
    """True when this interpreter's sqlite3 module can load extensions (it was
    built with them enabled: Debian's /usr/bin/python3 is; many pyenv, conda
    or python.org builds are not)."""
    import sqlite3
    return hasattr(sqlite3.Connection, "enable_load_extension")


def _apsw_module():
    try:
        import apsw
    except ImportError:
        return None
    return apsw


def _no_route_message(why, fn="profsum.connect"):
    return (
        "%s: %s, and APSW is not importable (%s). "
        "Use Debian's /usr/bin/python3, whose sqlite3 module loads extensions "
        "(a venv made with `/usr/bin/python3 -m venv --system-site-packages` keeps it), "
        "or install APSW: `apt-get install python3-apsw` for /usr/bin/python3, "
        "`pip install apsw` for another interpreter. A pyenv Python can also be rebuilt with "
        "PYTHON_CONFIGURE_OPTS=--enable-loadable-sqlite-extensions." % (fn, why, sys.executable))


def load(conn):
    """Load profsum.so into conn and return conn.

    conn: a sqlite3.Connection (its module must be able to load extensions)
    or an apsw.Connection.  Extension loading is switched off again after
    the load, so SQL cannot load further libraries through load_extension().
    Raises LoadError when the driver cannot load extensions."""
    path = loadable_path()
    if _is_apsw(conn):
        conn.enableloadextension(True)
        try:
            conn.loadextension(path)
        finally:
            conn.enableloadextension(False)
        return conn
    if not hasattr(conn, "enable_load_extension"):
        if _apsw_module() is not None:
            raise LoadError("profsum.load: this Python's sqlite3 module cannot load extensions (built without "
                            "them; %s); open the database with profsum.connect(), which takes APSW here, or "
                            "load into an apsw.Connection" % sys.executable)
        raise LoadError(_no_route_message(
            "this Python's sqlite3 module cannot load extensions (built without them)", "profsum.load"))
    conn.enable_load_extension(True)
    try:
        conn.load_extension(path)
    finally:
        conn.enable_load_extension(False)
    return conn


def route():
    """The driver connect() would use: 'sqlite3' or 'apsw'; raises LoadError
    when neither can load profsum."""
    force = os.environ.get("PROFSUM_FORCE_APSW", "") not in ("", "0")
    return _pick_route(_sqlite3_can_load() and not force, _apsw_module(), force)


def _pick_route(sqlite3_ok, apsw_mod, forced):
    if sqlite3_ok:
        return "sqlite3"
    if apsw_mod is not None:
        return "apsw"
    if forced:
        raise LoadError(_no_route_message("PROFSUM_FORCE_APSW is set"))
    raise LoadError(_no_route_message(
        "this Python's sqlite3 module cannot load extensions (built without them)"))


def connect(path=":memory:", **kwargs):
    """Open the SQLite database at path with profsum loaded.

    Through the sqlite3 module when it can load extensions, else through APSW
    (apsw.Connection) when it is importable; PROFSUM_FORCE_APSW=1 takes the
    APSW route.  kwargs go to sqlite3.connect or apsw.Connection (timeout,
    seconds to wait for a lock, default 5 as in sqlite3, is applied to APSW
    with setbusytimeout).  Raises
    LoadError (naming APSW and /usr/bin/python3) when neither works."""
    r = route()
    if r == "apsw":
        # sqlite3's default: wait up to 5 s for a lock held by another
        # connection (a background import, another process) instead of
        # failing at once with "database is locked"
        timeout = kwargs.pop("timeout", 5.0)
        conn = _apsw_module().Connection(os.fspath(path), **kwargs)
        if timeout is not None:
            conn.setbusytimeout(int(float(timeout) * 1000))
    else:
        import sqlite3
        conn = sqlite3.connect(path, **kwargs)
    try:
        return load(conn)
    except BaseException:
        conn.close()
        raise


# ---- running statements --------------------------------------------------------

def _run(conn, sql, params=()):
    """Execute one statement on a sqlite3 or APSW connection: (columns, rows)."""
    if _is_apsw(conn):
        cur = conn.cursor()
        seen = []

        def note(cursor, _sql, _bindings):
            # called once each statement is prepared and before it runs: its
            # columns are known here even when it returns no row (APSW gives
            # no description once a statement has completed)
            seen.append([d[0] for d in cursor.getdescription()])
            return True
        cur.exectrace = note
        rows = [tuple(r) for r in cur.execute(sql, params)]
        return (seen[-1] if seen else []), rows
    cur = conn.execute(sql, params)
    cols = [d[0] for d in cur.description] if cur.description else []
    return cols, cur.fetchall()


def _scalar(conn, sql, params=()):
    _cols, rows = _run(conn, sql, params)
    return rows[0][0] if rows else None


def _row(conn, sql, params=()):
    """The first row of sql as a tuple, or None."""
    _cols, rows = _run(conn, sql, params)
    return tuple(rows[0]) if rows else None


def _want_frame(as_frame):
    if as_frame is False:
        return None
    try:
        import pandas
    except ImportError:
        if as_frame:
            raise ProfsumError("profsum: as_frame=True needs pandas (apt-get install python3-pandas)")
        return None
    return pandas


def _table(cols, rows, as_frame=None):
    """A pandas DataFrame (pandas importable and as_frame not False) or a list
    of dicts, one per row."""
    pd = _want_frame(as_frame)
    if pd is not None:
        return pd.DataFrame.from_records(list(rows), columns=list(cols))
    return [dict(zip(cols, r)) for r in rows]


def _view(conn, view, where, params, order, limit, as_frame):
    """Rows of a profsum view; on a database where profsum_import never ran
    (no such view yet) an empty table with the view's documented columns."""
    sql = "SELECT * FROM %s%s ORDER BY %s" % (view, where, order)
    if limit is not None:
        sql += " LIMIT %d" % int(limit)
    try:
        cols, rows = _run(conn, sql, params)
    except Exception as e:  # sqlite3.OperationalError / apsw.SQLError
        if "no such table: %s" % view not in str(e):
            raise
        cols = [r[0] for r in _run(conn, "SELECT column_name FROM profsum_catalog WHERE object = ? "
                                         "AND position > 0 ORDER BY position", (view,))[1]]
        rows = []
    return _table(cols, rows, as_frame)


def _trace_where(trace):
    if isinstance(trace, bool) or not isinstance(trace, (int, str)):
        raise TypeError("profsum: a trace is a label (str) or a trace_id (int), not %r" % (trace,))
    return (" WHERE trace_id = ?", (trace,)) if isinstance(trace, int) else (" WHERE label = ?", (trace,))


def _options(options, extra):
    opts = dict(options or {})
    opts.update({k: v for k, v in extra.items() if v is not None})
    return json.dumps(opts) if opts else None


# ---- helpers -------------------------------------------------------------------

def import_trace(conn, source, label=None, options=None, **kw):
    """profsum_import(source, label, options_json): import a trace file, an
    artifact folder (plugins/profile/<session>/...), a profile_summary.v1
    file or a W&B source.  Options as a dict and/or keywords (warmup_steps=2,
    series='llama', unique_label=True, reuse=True, replace=True; see
    docs/summary.md).  Returns the trace_id (int)."""
    opts = _options(options, kw)
    return _scalar(conn, "SELECT profsum_import(?, ?, ?)", (os.fspath(source), label, opts))


def summary(conn, trace, options=None, **kw):
    """The profile_summary.v1 document of a stored trace (label or id), as a
    dict (profsum_summary_json)."""
    opts = _options(options, kw)
    return json.loads(_scalar(conn, "SELECT profsum_summary_json(?, ?)", (trace, opts)))


def hot_ops(conn, trace, limit=10, as_frame=None):
    """The trace's device ops by exclusive time (view profsum_hot_ops, ordered
    by rank; limit None for all the summary keeps)."""
    where, params = _trace_where(trace)
    return _view(conn, "profsum_hot_ops", where, params, "rank", limit, as_frame)


def traces(conn, as_frame=None):
    """One row per stored trace (view profsum_overview, by trace_id)."""
    return _view(conn, "profsum_overview", "", (), "trace_id", None, as_frame)


def compare(conn, before, after, top_k=10):
    """The comparison document of two stored traces (profsum_compare_json), as
    a dict: step-time deltas, share deltas, regressed and improved ops."""
    return json.loads(_scalar(conn, "SELECT profsum_compare_json(?, ?, ?)", (before, after, top_k)))


def track(conn, before, after, label=None, thresholds=None, **kw):
    """Assess before -> after against thresholds (pass/warn/fail) and append
    the record to the history (profsum_track); returns the record as a dict.
    Threshold keys as in docs/compare.md (max_step_median_regression_pct=2,
    ...; top_k)."""
    th = _options(thresholds, kw)
    return json.loads(_scalar(conn, "SELECT profsum_track(?, ?, ?, ?)", (before, after, label, th)))


def history(conn, label=None, as_frame=None):
    """The regression history (view profsum_history, by record_id); label:
    only the records with this record label."""
    where, params = ("", ()) if label is None else (" WHERE label = ?", (label,))
    return _view(conn, "profsum_history", where, params, "record_id", None, as_frame)


def query(conn, sql, params=(), as_frame=None):
    """Any statement, its rows as a DataFrame or a list of dicts."""
    cols, rows = _run(conn, sql, params)
    return _table(cols, rows, as_frame)


class Markdown(str):
    """Markdown text; Jupyter renders it (_repr_markdown_)."""

    def _repr_markdown_(self):
        return str(self)


class HTMLReport:
    """profsum's HTML report of one trace.  Jupyter shows it inline
    (_repr_html_: the page in an iframe, so its styles stay inside);
    .html is the self-contained page, .save(path) writes it."""

    def __init__(self, html, label=None, height=640):
        self.html = html
        self.label = label
        self.height = height

    def _repr_html_(self):
        return ('<iframe srcdoc="%s" style="width:100%%;height:%dpx;border:1px solid #ddd" '
                'title="profsum report %s"></iframe>'
                % (_html.escape(self.html, quote=True), int(self.height), _html.escape(str(self.label or ""))))

    def save(self, path):
        """Write the page to path (UTF-8); returns path."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html)
        return path

    def __str__(self):
        return self.html

    def __repr__(self):
        return "<profsum HTMLReport %r, %d characters>" % (self.label, len(self.html))


def report_md(conn, trace, top_k=10, kpis=False):
    """The markdown report (profsum_report_md); kpis=True appends the KPI
    table."""
    opts = json.dumps({"kpis": True}) if kpis else None
    return Markdown(_scalar(conn, "SELECT profsum_report_md(?, ?, ?)", (trace, top_k, opts)))


def report_html(conn, trace, top_k=10):
    """The HTML report (profsum_report_html) as an HTMLReport, shown inline in
    Jupyter."""
    return HTMLReport(_scalar(conn, "SELECT profsum_report_html(?, ?)", (trace, top_k)), label=trace)
