#!/usr/bin/python3
"""Write examples/datasette/metadata.json from profsum_catalog.

    /usr/bin/python3 examples/datasette/generate.py            # rewrite metadata.json
    /usr/bin/python3 examples/datasette/generate.py --check    # exit 1 when it is out of date
    /usr/bin/python3 examples/datasette/generate.py --db runs -o runs-metadata.json

Every profsum view and table gets its description and one per column (the
comments of the schema, as profsum_catalog serves them) and, where the
column's documentation names one, its unit (Datasette's "units", Pint
names: microsecond for µs, byte, percent).  The canned queries below answer
the recipe's questions; each takes the trace label as :label.  Datasette keys
table metadata by database name (the file name without .db): --db picks it
(default "profiles"); plugins/profsum_metadata.py serves the same for a
database of any name.

Needs Debian's /usr/bin/python3 (its sqlite3 module loads extensions) and
profsum.so (PROFSUM_SO, default the repository's).
"""
import argparse
import json
import os
import re
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "metadata.json")

TITLE = "profsum: JAX profile summaries"
DESCRIPTION = (
    "Run with: datasette profiles.db --load-extension ./profsum.so "
    "--metadata examples/datasette/metadata.json --plugins-dir examples/datasette/plugins "
    "(import traces first with profsum_import). Every canned query takes the trace label as :label.")

# name -> (title, sql): the recipe's questions (docs/cookbook.md).
QUERIES = {
    "top_ops": (
        "Top ops by exclusive time",
        "SELECT rank, name, category, count, round(exclusive_duration, 3) AS excl_us, round(avg_duration, 3) "
        "AS avg_us, shape_signature, tf_op_path FROM profsum_hot_ops WHERE label = :label ORDER BY rank LIMIT 10"),
    "compute_vs_communication": (
        "Is communication or compute dominating?",
        "SELECT category, round(total_duration, 3) AS us, round(share_of_total, 4) AS share FROM profsum_breakdown "
        "WHERE label = :label AND is_summary_mode ORDER BY total_duration DESC"),
    "worst_collective": (
        "Which collective is worst?",
        "SELECT collective, count, round(total_duration, 3) AS excl_us, round(avg_duration, 3) AS avg_us "
        "FROM profsum_comm_ops WHERE label = :label ORDER BY rank"),
    "gap_before_op": (
        "The gap before a named op",
        "SELECT name, marker_op, count, round(total_gap_duration, 3) AS total_us, round(max_gap_duration, 3) "
        "AS max_us FROM profsum_gaps WHERE label = :label AND (name = :op OR marker_op = :op)"),
    "regions": (
        "Hierarchical regions",
        "SELECT path, depth, count, round(inclusive_duration, 3) AS incl_us, round(inclusive_share_of_total, 4) "
        "AS incl_share FROM profsum_regions WHERE label = :label ORDER BY rank LIMIT 50"),
    "op_context": (
        "Context of a noisy op (e.g. copy.564) in model terms",
        "SELECT op_name, region_path, count, round(total_gap_duration, 3) AS gap_us FROM profsum_gap_contexts "
        "WHERE label = :label AND op_name = :op ORDER BY rank"),
    "what_next": (
        "What should we try next?",
        "SELECT candidate_id, title, rationale, evidence FROM profsum_candidates WHERE label = :label ORDER BY rank"),
    "kpis": (
        "KPIs and their bands",
        "SELECT kind, kpi, device, round(value, 4) AS value, unit, band, explanation FROM profsum_kpis "
        "WHERE label = :label"),
    "step_times": (
        "Step times",
        "SELECT step, round(duration, 3) AS us, is_warmup FROM profsum_steps WHERE label = :label ORDER BY step"),
    "history": (
        "Regression history of a record label",
        "SELECT record_id, recorded_at_utc, status, before_label, after_label, round(median_regression_pct, 2) "
        "AS median_pct, failures, warnings FROM profsum_history WHERE label = :label ORDER BY record_id DESC"),
}

# Units: (Pint name, pattern on the column's documentation).
UNITS = [
    # "..., µs", "µs, NULL when ...", "µs ('total' = ...)"; not "µs per unit" nor "(µs for durations)"
    ("microsecond", re.compile(r"(?:^|, |: )µs(?=$|[ ,;:.)(])(?! per)")),
    ("byte", re.compile(r"\bin bytes\b|\(INTEGER bytes\b")),
    ("percent", re.compile(r"(?:, |\bin )percent\b")),
]


# Units by the column's name, for columns whose documentation names none:
# profsum's names end in the unit (docs/api.md).
SUFFIX_UNITS = [("_us", "microsecond"), ("_bytes", "byte"), ("_pct", "percent")]


def unit_of(doc, col=""):
    """The Pint unit a column's documentation names, else the one its name
    ends in (bytes_accessed: bytes), or None."""
    found = [name for name, pat in UNITS if pat.search(doc)]
    if len(found) == 1:
        return found[0]
    if found:
        return None
    if col == "bytes_accessed":
        return "byte"
    for suffix, name in SUFFIX_UNITS:
        if col.endswith(suffix):
            return name
    return None


def catalog(so):
    """profsum_catalog rows (object, kind, position, column_name, doc) from the
    extension at so: the objects of a database (the table-valued functions
    that read files are none, and Datasette lists only what the file holds)."""
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(so)
    db.enable_load_extension(False)
    rows = db.execute("SELECT object, kind, position, column_name, doc FROM profsum_catalog "
                      "WHERE kind <> 'table-valued function' "
                      "ORDER BY kind DESC, object, position").fetchall()
    db.close()
    return rows


def build(rows, db_name="profiles"):
    """The metadata document: views first, then tables, each by name."""
    tables = {}
    for obj, _kind, pos, col, doc in rows:
        t = tables.setdefault(obj, {"description": "", "columns": {}, "units": {}})
        if pos == 0:
            t["description"] = doc
            continue
        t["columns"][col] = doc
        u = unit_of(doc, col)
        if u:
            t["units"][col] = u
    for t in tables.values():
        if not t["units"]:
            del t["units"]
    return {
        "title": TITLE,
        "description": DESCRIPTION,
        "databases": {
            db_name: {
                "tables": tables,
                "queries": {name: {"title": title, "sql": sql} for name, (title, sql) in QUERIES.items()},
            }
        },
    }


def render(doc):
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--so", default=os.environ.get("PROFSUM_SO", os.path.join(ROOT, "profsum.so")))
    ap.add_argument("--db", default="profiles", help="the database name the metadata is keyed by")
    ap.add_argument("-o", "--output", default=OUT)
    ap.add_argument("--check", action="store_true", help="exit 1 when the output file differs")
    a = ap.parse_args(argv)
    text = render(build(catalog(a.so), a.db))
    if a.check:
        try:
            with open(a.output, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = None
        if old != text:
            print("%s is out of date: /usr/bin/python3 %s" % (a.output, os.path.relpath(__file__)), file=sys.stderr)
            return 1
        return 0
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
