#!/usr/bin/python3
"""check_trace.py - independent check of a trace written by gen_trace.py.

Loads the file with Python's json module (numbers parsed as Decimal, so the
picosecond values are exact), and recomputes what gen_trace.py reported:
rows (entries that are objects with a string "ph"), per-ph counts, the X
events with dur > 0, sum of dur_ps and sum of exclusive time in ps
(summary-v1-spec section 2, with its own stable sort per track). Also checks
that every arg value of an X event is a string, and that the file ends with
the trailing {} like xprof's.

Usage: /usr/bin/python3 bench/check_trace.py FILE [GENERATOR_JSON]
GENERATOR_JSON is the line gen_trace.py printed (a file, or '-' for stdin);
without it the recomputed numbers are only printed.
Needs memory of roughly 15x the uncompressed size: use it up to ~100 MB.
"""
import decimal
import gzip
import json
import sys
from collections import Counter, defaultdict

PS = decimal.Decimal(1000000)


def to_ps(v):
    """µs (Decimal) -> integer ps, round half-even like profsum."""
    return int((v * PS).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def excl_track(evs):
    evs.sort(key=lambda e: (e[0], -(e[0] + e[1])))  # stable: ties keep file order
    stack = []
    total = 0
    for ts, dur in evs:
        end = ts + dur
        while stack and ts >= stack[-1][0]:
            total += fin(stack)
        while stack and end > stack[-1][0]:
            total += fin(stack)
        stack.append([end, dur, 0])
    while stack:
        total += fin(stack)
    return total


def fin(stack):
    end, dur, cs = stack.pop()
    if stack:
        stack[-1][2] += dur
    return max(0, dur - cs)


def main(argv):
    path = argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    decimal.getcontext().prec = 50
    doc = json.loads(raw, parse_float=decimal.Decimal)
    evs = doc["traceEvents"]
    ph = Counter()
    tracks = defaultdict(list)
    dur_sum = 0
    bad_args = 0
    for e in evs:
        if not isinstance(e, dict) or not isinstance(e.get("ph"), str):
            continue
        ph[e["ph"]] += 1
        if e["ph"] == "X":
            ts, dur = to_ps(decimal.Decimal(e["ts"])), to_ps(decimal.Decimal(e["dur"]))
            dur_sum += dur
            if dur > 0:
                tracks[(e["pid"], e["tid"])].append((ts, dur))
            for v in e.get("args", {}).values():
                if not isinstance(v, str):
                    bad_args += 1
    got = {
        "bytes": len(raw),
        "rows": sum(ph.values()),
        "entries": len(evs),
        "ph": dict(ph),
        "x_excl_rows": sum(len(v) for v in tracks.values()),
        "dur_ps_sum": dur_sum,
        "excl_ps_sum": sum(excl_track(v) for v in tracks.values()),
    }
    problems = []
    if evs and evs[-1] != {}:
        problems.append("last entry is not {}")
    if not raw.endswith(b",{}]}"):
        problems.append("file does not end with ,{}]}")
    if bad_args:
        problems.append("%d non-string arg values in X events" % bad_args)
    if len(argv) > 2:
        src = sys.stdin if argv[2] == "-" else open(argv[2])
        exp = json.loads(src.read().strip().splitlines()[-1])
        for k, v in got.items():
            if exp.get(k) != v:
                problems.append("%s: generator said %r, file has %r" % (k, exp.get(k), v))
    print(json.dumps(got, sort_keys=True))
    for p in problems:
        print("MISMATCH: " + p, file=sys.stderr)
    if problems:
        return 1
    print("ok: %s matches" % path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
