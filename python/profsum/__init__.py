"""profsum from Python: JAX/XLA profiler traces in SQLite.

    import profsum
    db = profsum.connect("profiles.db")            # a connection with profsum.so loaded
    profsum.import_trace(db, "/tmp/profile", "run-7", warmup_steps=2)
    profsum.hot_ops(db, "run-7")                   # a DataFrame with pandas, else a list of dicts
    profsum.report_html(db, "run-7")               # shown inline in Jupyter

The package carries profsum.so (the SQLite extension built by the
repository's Makefile) and loads it into sqlite3 or APSW connections.
Capturing with JAX: profsum.jax (imports jax only when used).
"""
import os as _os

from ._core import (  # noqa: F401
    ProfsumError, LoadError, loadable_path, load, connect, route,
    import_trace, summary, hot_ops, compare, track, history, traces, query,
    report_md, report_html, Markdown, HTMLReport,
)


def _version():
    try:
        from importlib.metadata import version, PackageNotFoundError
        try:
            return version("profsum")
        except PackageNotFoundError:
            pass
    except ImportError:  # pragma: no cover
        pass
    # A source checkout used through PYTHONPATH=python: the repository's VERSION.
    p = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))), "VERSION")
    try:
        with open(p) as f:
            return f.read().strip()
    except OSError:
        return "unknown"


__version__ = _version()
