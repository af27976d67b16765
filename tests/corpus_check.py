#!/usr/bin/python3
"""Corpus check: every JSON trace of the corpus (PROFSUM_CORPUS, see docs/internals.md) must load, and per file
the number of trace_events rows of each ph must equal expected_counts.json
(entries without a ph, such as the trailing {}, are not rows but must be
counted by profsum_diagnostics).  Every XPlane file of
expected_xplane_counts.json must load too: its rows plus its no-row
diagnostics (aggregated events, events without data) are its XEvents.

Usage: /usr/bin/python3 tests/corpus_check.py [CORPUS_DIR]
Prints a mismatch table and exits 1 on any difference; prints
`N passed, N failed` at the end.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from util import connect, CORPUS  # noqa: E402

NO_ROW_KINDS = ("no_ph", "ph_not_string", "not_an_object")


def no_row_count(db, path):
    """Entries of a JSON trace that make no row (their diagnostics: every
    one is listed)."""
    return db.execute("SELECT count(*) FROM profsum_diagnostics(?) WHERE kind IN (%s)"
                      % ",".join("?" * len(NO_ROW_KINDS)), (path,) + NO_ROW_KINDS).fetchone()[0]


XPLANE_NO_ROW_KINDS = ("xplane_aggregated_event", "xplane_no_event_data")


def xplane_no_row_count(db, path):
    """XEvents of an XPlane file that make no row (their diagnostics: every
    one is listed)."""
    return db.execute("SELECT count(*) FROM profsum_diagnostics(?) WHERE kind IN (%s)"
                      % ",".join("?" * len(XPLANE_NO_ROW_KINDS)),
                      (path,) + XPLANE_NO_ROW_KINDS).fetchone()[0]


def main(argv):
    corpus = argv[0] if argv else CORPUS
    exp_path = os.path.join(corpus, "expected_counts.json")
    if not os.path.exists(exp_path):
        # asked for explicitly (make corpus): a missing corpus is an error,
        # not a pass (.ci/run runs it only when the corpus exists)
        sys.stderr.write("corpus_check: no expected_counts.json in %s: point PROFSUM_CORPUS at "
                         "the corpus (make corpus PROFSUM_CORPUS=DIR; docs/internals.md says what it "
                         "holds)\n" % corpus)
        print("0 passed, 1 failed")
        return 2
    expected = json.load(open(exp_path))
    db = connect()
    passed = failed = 0
    rows = []
    for rel in sorted(expected):
        exp = expected[rel]
        path = os.path.join(corpus, rel)
        try:
            got = dict(db.execute(
                "SELECT ph, count(*) FROM trace_events(?) GROUP BY ph", (path,)))
            no_ph = no_row_count(db, path)
            got_entries = sum(got.values()) + no_ph
        except Exception as e:  # report, keep going
            rows.append((rel, "error", str(e)))
            failed += 1
            continue
        problems = []
        if got != exp["ph"]:
            keys = sorted(set(got) | set(exp["ph"]))
            problems.append("ph " + ", ".join(
                "%s: expected %s got %s" % (k, exp["ph"].get(k, 0), got.get(k, 0))
                for k in keys if got.get(k, 0) != exp["ph"].get(k, 0)))
        if no_ph != exp.get("entries_without_ph", 0):
            problems.append("entries without ph: expected %s got %s"
                            % (exp.get("entries_without_ph", 0), no_ph))
        if got_entries != exp["entries"]:
            problems.append("entries: expected %s got %s" % (exp["entries"], got_entries))
        # The summary over the same file: no error, counts consistent.
        try:
            tid = db.execute("SELECT profsum_import(?, ?)", (path, rel)).fetchone()[0]
            n_total, n_complete = db.execute(
                "SELECT num_events_total, num_complete_events FROM profsum_trace WHERE trace_id=?",
                (tid,)).fetchone()
            doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
            db.execute("SELECT profsum_report_md(?)", (tid,)).fetchone()
            if n_total != exp["entries"]:
                problems.append("summary num_events_total %s != entries %s" % (n_total, exp["entries"]))
            if n_complete > exp["ph"].get("X", 0):
                problems.append("summary complete events %s > X rows %s" % (n_complete, exp["ph"].get("X", 0)))
            if doc["trace_overview"]["num_complete_events"] != n_complete:
                problems.append("document and table disagree on complete events")
        except Exception as e:
            problems.append("summary: %s" % e)
        if problems:
            rows.append((rel, "mismatch", "; ".join(problems)))
            failed += 1
        else:
            passed += 1
    # The XPlane files: every XEvent is a row of trace_events or a no-row
    # diagnostic (aggregated, no data), per plane as the expected counts say.
    xexp_path = os.path.join(corpus, "expected_xplane_counts.json")
    xexp = json.load(open(xexp_path)) if os.path.exists(xexp_path) else {}
    for rel in sorted(k for k in xexp if not k.startswith("_")):
        exp = xexp[rel]
        path = os.path.join(corpus, rel)
        try:
            per_pid = dict(db.execute(
                "SELECT pid, count(*) FROM trace_events(?) GROUP BY pid", (path,)))
            no_row = xplane_no_row_count(db, path)
        except Exception as e:  # report, keep going
            rows.append((rel, "error", str(e)))
            failed += 1
            continue
        problems = []
        if sum(per_pid.values()) + no_row != exp["events_total"]:
            problems.append("rows %d + no-row diagnostics %d != XEvents %d"
                            % (sum(per_pid.values()), no_row, exp["events_total"]))
        if no_row == 0:
            for i, pl in enumerate(exp["planes"]):
                if per_pid.get(i + 1, 0) != pl["events"]:
                    problems.append("plane %d (%s): %d rows, expected %d"
                                    % (i, pl["name"], per_pid.get(i + 1, 0), pl["events"]))
        if problems:
            rows.append((rel, "mismatch", "; ".join(problems)))
            failed += 1
        else:
            passed += 1
    if rows:
        print("| file | result | detail |")
        print("|---|---|---|")
        for r in rows:
            print("| %s | %s | %s |" % r)
    print("corpus: %d files checked" % (passed + failed))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
