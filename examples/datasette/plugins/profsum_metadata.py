"""Datasette plugin: profsum's descriptions, units and canned queries for a
database of any name.

Datasette keys table metadata and canned queries by database name (the
file name without .db), so ../metadata.json applies to profiles.db only.
With `--plugins-dir examples/datasette/plugins` this plugin serves the same
entries (those metadata.json holds under "profiles") to every database
Datasette opens:

  - Datasette 0.59 to 0.65: the get_metadata and canned_queries hooks;
  - Datasette 1.0 alphas, where metadata lives in Datasette's internal
    database: on startup, set_resource_metadata / set_column_metadata for
    the descriptions (1.0 dropped units) and add_query for the queries,
    where the running version has them.
"""
import json
import os

try:
    from datasette import hookimpl
except ImportError:  # read without Datasette (the project's tests)
    def hookimpl(f):
        return f

METADATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "metadata.json")
TEMPLATE_DB = "profiles"
_cache = {}


def template():
    """metadata.json's entries for the "profiles" database: {"tables": ...,
    "queries": ...} (read once)."""
    if "t" not in _cache:
        with open(METADATA, encoding="utf-8") as f:
            _cache["t"] = json.load(f)["databases"][TEMPLATE_DB]
    return _cache["t"]


def user_databases(datasette):
    """Names of the databases served, without Datasette's own _internal."""
    return [name for name in datasette.databases if name != "_internal"]


@hookimpl
def get_metadata(datasette, key, database, table):
    tables = template()["tables"]
    return {"databases": {name: {"tables": tables} for name in user_databases(datasette)}}


@hookimpl
def canned_queries(datasette, database, actor):
    if database == "_internal":
        return {}
    return {name: dict(q) for name, q in template()["queries"].items()}


@hookimpl
def startup(datasette):
    if not hasattr(datasette, "set_column_metadata"):
        return None      # 0.x: the hooks above serve the metadata

    async def inner():
        t = template()
        for name in user_databases(datasette):
            for table, meta in t["tables"].items():
                await datasette.set_resource_metadata(name, table, "description", meta["description"])
                for column, doc in meta["columns"].items():
                    await datasette.set_column_metadata(name, table, column, "description", doc)
            if hasattr(datasette, "add_query"):
                for qname, q in t["queries"].items():
                    await datasette.add_query(name, qname, q["sql"], title=q["title"], is_trusted=True)
    return inner
