#!/usr/bin/python3
"""Run trace fixtures through the C driver (tests/sqlrun.c).

Used by `make asan` (build/asan/sqlrun: AddressSanitizer, UBSan, leak
checking) and `make valgrind` (build/sqlrun under valgrind).  The command is
taken from PROFSUM_SQLRUN (split like a shell would; default build/sqlrun).

For every fixture (built in a temporary directory: plain and gzip traces,
broken gzip, odd JSON, big and deep inputs, ...) and every file of
tests/fuzz_corpus/, one driver process runs, with -k:

    SELECT count(*) FROM trace_events(PATH)
    SELECT * FROM trace_events(PATH)                 -- every column
    SELECT sum(excl_ps), max(depth) FROM trace_events(PATH)
    SELECT * FROM profsum_diagnostics(PATH)
    ... plus the fixture's own checks (SQL → exact expected output)

separated by marker rows.  Each query is a test.  A query expected to fail
must fail with an error naming its function ("error: trace_events: ...").
Anything else on standard error (a sanitizer or valgrind report), an exit
code other than 0/1, or a timeout fails every query of the fixture.

Usage:  tests/run_driver.py [-v] [-k PATTERN]
        tests/run_driver.py --write-seeds DIR   (write the small fixtures as
                                                 fuzzing seeds, then exit)
Prints `N passed, N failed`; exits 1 on any failure.
"""
import concurrent.futures
import gzip
import json
import os
import random
import re
import secrets
import shlex
import subprocess
import sys
import tempfile
import zlib

import xspace_writer as xw

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FUZZ_CORPUS = os.path.join(HERE, "fuzz_corpus")
FUZZ_XP_CORPUS = os.path.join(HERE, "fuzz_xplane_corpus")

Q_COUNT = "SELECT count(*) FROM trace_events({p})"
Q_ALL = "SELECT * FROM trace_events({p})"
Q_SUM = "SELECT sum(excl_ps), max(depth) FROM trace_events({p})"
Q_DIAG = "SELECT * FROM profsum_diagnostics({p})"
QUERIES = [("count", Q_COUNT, "trace_events"),
           ("all-columns", Q_ALL, "trace_events"),
           ("sum-excl", Q_SUM, "trace_events"),
           ("diagnostics", Q_DIAG, "profsum_diagnostics")]

ERR_RE = re.compile(r"^error: (trace_events|profsum_diagnostics): ")


def sql_literal(s):
    return "'" + s.replace("'", "''") + "'"


# ---------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------

class Fixture:
    """A trace input and what the queries over it must do.

    data: bytes to write, or None with special = "dir" / "missing".
    expect: "ok" (every query succeeds), "err" (every query fails with the
    function's error) or "any" (either, but cleanly).
    count: expected count(*) (expect "ok" only).
    checks: [(sql with {p}, expected stdout without the final newline)].
    env: environment variables set for its driver process.
    """

    def __init__(self, name, data=None, expect="ok", count=None, checks=(),
                 special=None, path=None, env=None):
        self.env = env or {}
        self.name = name
        self.data = data
        self.expect = expect
        self.count = count
        self.checks = list(checks)
        self.special = special
        self.path = path


def J(obj):
    """Compact JSON bytes."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def X(name, ts, dur, pid=1, tid=1, **kw):
    e = {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid}
    e.update(kw)
    return e


def gz(data, level=6):
    return gzip.compress(data, compresslevel=level, mtime=0)


def hexu(s):
    return s.encode("utf-8", "surrogatepass").hex().upper()


BASIC_EVENTS = [
    X("outer", 100, 100, cat="op", args={
        "tf_op": "jit(f)/add", "hlo_op": "add.1", "hlo_module": "jit_f",
        "hlo_category": "elementwise", "long_name": "add.1 = f32[] add(a, b)",
        "source": "f.py:3", "run_id": "r1", "step_num": "3", "flops": "128",
        "bytes_accessed": 512, "correlation_id": 7, "group_id": 2}),
    X("inner1", 110, 20),
    X("inner2", 140, 10),
    X("other", 100, 5, tid=2),
    {"ph": "i", "name": "instant", "ts": 120, "pid": 1, "tid": 1, "s": "t"},
]
BASIC = J({"displayTimeUnit": "ns", "traceEvents": BASIC_EVENTS})
BASIC_CHECKS = [
    (Q_SUM, "105000000|1"),
    ("SELECT tf_op, hlo_op, hlo_module, hlo_category, long_name, source, run_id, "
     "step_num, flops, bytes_accessed, correlation_id, group_id "
     "FROM trace_events({p}) WHERE idx=0",
     "jit(f)/add|add.1|jit_f|elementwise|add.1 = f32[] add(a, b)|f.py:3|r1|3|128|512|7|2"),
    ("SELECT ts, dur, dur_ps, depth, parent_idx, excl FROM trace_events({p}) WHERE idx=1",
     "110000|20000|20000000|1|0|20000"),
]


def many_events(n_pairs):
    """n_pairs parent/child X pairs over 3 tracks (parent excl 6, child 4 µs)."""
    ev = []
    for i in range(n_pairs):
        t = i * 20
        tid = i % 3
        ev.append(X("parent%d" % (i % 50), t, 10, tid=tid, args={"step_num": i}))
        ev.append(X("child%d" % (i % 50), t + 2, 4, tid=tid))
    return ev


def random_events(n):
    """n X events with long random hex names (compress poorly), one track."""
    rnd = random.Random(1234)
    return [X("%0128x" % rnd.getrandbits(512), i * 10, 5) for i in range(n)]


def multi_member(data, parts=3):
    n = len(data)
    cuts = [0] + [n * k // parts for k in range(1, parts)] + [n]
    return b"".join(gz(data[cuts[k]:cuts[k + 1]]) for k in range(parts))


# An XSpace whose read fills many batches of the XPlane pipe
# (xplane_intake.c): two TPU planes, each an "XLA Ops" line of nested pairs
# (a parent whose metadata carries flops, a child of which every 7th event
# has a flops stat of its own) and an "Async XLA Ops" line, then a host
# plane.  The insights' records of each event (a track started at a line's
# first event, a metadata entry's stats sent once per plane, an op with its
# own stats or its entry's) travel with the events to the engine side.
XP_PIPE_PAIRS = (1500, 1250)        # nested pairs on each TPU's XLA Ops line
XP_PIPE_ASYNC = 500                 # events on each Async XLA Ops line
XP_PIPE_HOST = 200
XP_PIPE_EVENTS = sum(2 * n + XP_PIPE_ASYNC for n in XP_PIPE_PAIRS) + XP_PIPE_HOST


def xplane_pipe_capture():
    planes = []
    for d, pairs in enumerate(XP_PIPE_PAIRS):
        pb = xw.PlaneBuilder("/device:TPU:%d" % d, id=d)
        for k in range(4):
            pb.eid("fusion.%d" % k, stats=[pb.stat("flops", i64=100)])
        evs = []
        for j in range(pairs):
            evs.append(pb.event("fusion.%d" % (j % 4), offset_ps=j * 20000000, duration_ps=8000000))
            own = [pb.stat("flops", i64=50)] if j % 7 == 0 else []
            evs.append(pb.event("copy.%d" % (j % 3), offset_ps=j * 20000000 + 1000000,
                                duration_ps=3000000, stats=own))
        pb.line(id=1, name="XLA Ops", timestamp_ns=1000000, events=evs)
        pb.line(id=2, name="Async XLA Ops", timestamp_ns=1000000, events=[
            pb.event("all-reduce.%d" % (j % 2), offset_ps=j * 50000000, duration_ps=2000000)
            for j in range(XP_PIPE_ASYNC)])
        planes.append(pb.build())
    hb = xw.PlaneBuilder("/host:CPU", id=99)
    hb.line(id=7, name="python", timestamp_ns=1000000, events=[
        hb.event("step", offset_ps=j * 100000000, duration_ps=90000000) for j in range(XP_PIPE_HOST)])
    planes.append(hb.build())
    return xw.xspace(planes, hostnames=["h"])


def _xp_pipe_checks():
    n_ops = sum(2 * n + XP_PIPE_ASYNC for n in XP_PIPE_PAIRS)
    n_flops = sum(n + (n + 6) // 7 for n in XP_PIPE_PAIRS)
    pairs0 = XP_PIPE_PAIRS[0]
    return [
        ("SELECT profsum_import({p}, 'x') > 0", "1"),
        ("SELECT n_device_ops, n_flops_ops, unsorted_lines FROM profsum_agg_xla_trace",
         "%d|%d|0" % (n_ops, n_flops)),
        ("SELECT sum(count) FROM profsum_agg_xla_op", str(n_ops)),
        # parents' self time is 5 µs of their 8, children's all of their 3
        ("SELECT sum(count), sum(time_us), sum(self_us) FROM profsum_agg_xla_op "
         "WHERE device = '/device:TPU:0' AND line_kind = 'xla_ops'",
         "%d|%.1f|%.1f" % (2 * pairs0, 11.0 * pairs0, 8.0 * pairs0)),
        ("SELECT sum(flops) FROM profsum_agg_xla_op WHERE device = '/device:TPU:1'",
         "%.1f" % (100.0 * XP_PIPE_PAIRS[1] + 50.0 * ((XP_PIPE_PAIRS[1] + 6) // 7)))]


XP_PIPE_CHECKS = _xp_pipe_checks()


def fixtures():
    F = Fixture
    out = []
    add = out.append

    # --- forms and compression -------------------------------------------
    add(F("plain-basic.json", BASIC, count=5, checks=BASIC_CHECKS))
    add(F("gzip-basic.json.gz", gz(BASIC), count=5, checks=BASIC_CHECKS[:1]))
    add(F("gzip-level1.json.gz", gz(BASIC, 1), count=5))
    add(F("gzip-multimember.json.gz", multi_member(BASIC), count=5, checks=BASIC_CHECKS[:1]))
    add(F("gzip-multimember-padding.json.gz", multi_member(BASIC, 2) + b"\0" * 1000, count=5))
    add(F("gzip-empty-member.json.gz", gz(b"") + gz(BASIC) + gz(b""), count=5))
    add(F("gzip-no-extension.trace", gz(BASIC), count=5))
    add(F("plain-named.json.gz", BASIC, count=5))   # magic bytes decide, not the name
    add(F("it's a trace.json", BASIC, count=5))     # quote in the path
    add(F("bare-array.json", J(BASIC_EVENTS), count=5, checks=BASIC_CHECKS[:1]))
    add(F("bom-bare-array.json", b"\xef\xbb\xbf" + J(BASIC_EVENTS), count=5))
    add(F("ws-around.json", b" \n\t\r" + BASIC + b"\n\n  \r\n", count=5))
    add(F("object-odd-order.json",
          b'{"otherData":{"version":"x","nested":[1,{"a":[true,false,null]}]},'
          b'"displayTimeUnit":"ms","metadata":[1.5e3,-0,"s",{"k":{}}],'
          b'"traceEvents":' + J(BASIC_EVENTS) +
          b',"zzz":[[[]]],"stackFrames":{},"systemTraceEvents":"SYSTEM"}', count=5))
    add(F("empty-object.json", b"{}", count=0))
    add(F("empty-array.json", b"[]", count=0))
    add(F("empty-events.json", b'{"a":1,"traceEvents":[]}', count=0))
    add(F("null-events.json", b'{"traceEvents":null}', count=0))
    add(F("second-events-array.json",
          b'{"traceEvents":[' + J(X("a", 1, 1)) + b'],"x":1,"traceEvents":['
          + J(X("b", 2, 1)) + b"," + J(X("c", 3, 1)) + b"]}", count=3))
    add(F("trailing-empty-entry.json",
          J({"traceEvents": [X("a", 1, 2), X("b", 2, 1), {}]}), count=2))
    add(F("non-object-entries.json",
          b'[1,"x",null,[1,{}],true,-2.5e3,' + J(X("a", 1, 1)) +
          b',{"ph":5,"name":"phnum"},{"name":"noph"},{"ph":null}]', count=1))

    # --- strings ------------------------------------------------------------
    esc_events = (
        b'[{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,'
        b'"name":"q\\"b\\\\s\\/f\\bf\\fn\\nr\\rt\\tA\\u0041e\\u00e9E\\u20acG\\ud83d\\ude00",'
        b'"cat":"c\\u0061t","args":{"tf_op":"a\\"b","long_name":"\\u00e9\\ud800",'
        b'"k\\u0065y":"\\uDBFF\\uDFFF"}},'
        b'{"ph":"X","name":"x\\ud800y","ts":2,"dur":1,"pid":1,"tid":1},'
        b'{"ph":"X","name":"x\\udc00y","ts":3,"dur":1,"pid":1,"tid":1},'
        b'{"ph":"X","name":"\\ud800\\u0041","ts":4,"dur":1,"pid":1,"tid":1},'
        b'{"ph":"X","name":"end\\ud83d","ts":5,"dur":1,"pid":"p\\u0031","tid":1},'
        b'{"ph":"X","name":"\\u0000nul","ts":6,"dur":1,"pid":1,"tid":1}]')
    add(F("string-escapes.json", esc_events, count=6, checks=[
        ("SELECT hex(name) FROM trace_events({p}) ORDER BY idx",
         "\n".join([hexu('q"b\\s/f\bf\fn\nr\rt\tAAe\u00e9E\u20acG\U0001F600'),
                    hexu("x\ufffdy"), hexu("x\ufffdy"), hexu("\ufffdA"),
                    hexu("end\ufffd"), hexu("\0nul")])),
        ("SELECT cat, tf_op, hex(long_name), json_valid(args) FROM trace_events({p}) WHERE idx=0",
         'cat|a"b|%s|1' % hexu("\u00e9\ufffd")),
        ("SELECT pid FROM trace_events({p}) WHERE idx=4", "p1"),
    ]))
    add(F("control-chars.json",
          b'[{"ph":"X","name":"a\x01b\tc\nd","ts":1,"dur":1,"pid":1,"tid":1,'
          b'"args":{"k":"x\x1fy","k\x02":1,"n":"\x00"}}]', count=1, checks=[
              ("SELECT hex(name), json_valid(args), hex(json_extract(args,'$.k')) "
               "FROM trace_events({p})",
               "%s|1|%s" % (hexu("a\x01b\tc\nd"), hexu("x\x1fy")))]))
    add(F("invalid-utf8.json", b'[{"ph":"X","name":"a\xff\xfeb\xc3","ts":1,"dur":1,"pid":1,"tid":1}]',
          # bytes that are not UTF-8 become U+FFFD (EF BF BD), one each
          count=1, checks=[("SELECT hex(name) FROM trace_events({p})",
                            "61EFBFBDEFBFBD62EFBFBD")]))
    add(F("escaped-keys.json",
          b'[{"p\\u0068":"X","n\\u0061me":"keyesc","\\u0074s":1,"dur":1,"pid":1,"tid":1}]',
          expect="ok"))
    add(F("long-key.json", b'[{"' + b"k" * 5000 + b'":1,"ph":"X","name":"a"}]', count=1))

    # --- tolerated damage ---------------------------------------------------
    add(F("trailing-commas.json",
          b'{"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1,"pid":1,"tid":1,'
          b'"args":{"x":[1,2,],"y":{"z":1,},},},],}', count=1, checks=[
              ("SELECT json_valid(args), json_extract(args,'$.x') FROM trace_events({p})",
               "1|[1,2]")]))
    e1, e2 = J(X("a", 1, 3)), J(X("b", 2, 1))
    add(F("missing-close-bracket.json", b'{"traceEvents":[' + e1 + b"," + e2, count=2))
    add(F("missing-close-brace.json", b'{"traceEvents":[' + e1 + b"," + e2 + b"]", count=2))
    add(F("bare-missing-close.json", b"[" + e1 + b"," + e2, count=2))
    add(F("bare-missing-close-comma.json", b"[" + e1 + b"," + e2 + b",\n", count=2))
    # The diagnostic of the dropped entry points at its '{' (byte_offset).
    add(F("truncated-last-entry.json",
          b'{"traceEvents":[' + e1 + b',{"ph":"X","name":"tr', count=1, checks=[
              ("SELECT idx, byte_offset FROM profsum_diagnostics({p}) "
               "WHERE kind='truncated_entry'", "1|%d" % (len(b'{"traceEvents":[' + e1) + 1))]))
    add(F("truncated-string-entry.json", b'["', count=0, checks=[
        ("SELECT idx, byte_offset FROM profsum_diagnostics({p}) "
         "WHERE kind='truncated_entry'", "0|1")]))
    add(F("truncated-in-args.json", b"[" + e1 + b',{"ph":"X","args":{"a":[1,2', count=1))
    add(F("truncated-in-number.json", b"[" + e1 + b',{"ph":"X","ts":12', count=1))
    add(F("truncated-top-key.json", b'{"traceEvents":[' + e1 + b'],"displayTi', count=1))
    add(F("truncated-top-value.json", b'{"traceEvents":[' + e1 + b'],"meta":{"a":', count=1))
    add(F("truncated-after-colon.json", b'{"traceEvents":', count=0))
    add(F("gzip-truncated-json.json.gz", gz(b"[" + e1 + b"," + e2 + b',{"ph":"X","na'), count=2))

    # --- numbers ------------------------------------------------------------
    add(F("numbers-as-strings.json",
          b'[{"ph":"X","name":"s","ts":"12.5","dur":"3","pid":"7","tid":"8",'
          b'"args":{"step_num":"42","flops":"1.5","group_id":"-3"}}]', count=1, checks=[
              ("SELECT ts, dur, pid, tid, typeof(pid), step_num, flops, group_id "
               "FROM trace_events({p})", "12500|3000|7|8|integer|42|1.5|-3")]))
    ts_list = [b"1.0000005", b"1.0000015", b"1.5e3", b"2E-3", b"1e+2", b"-0.5e1",
               b"1700000000123456.789", b"0.0000001", b"-0.0000015", b"0", b"-0",
               b"123456789012345678901234567890"]
    add(F("numbers-precision.json",
          b"[" + b",".join(b'{"ph":"X","name":"n","pid":1,"tid":1,"dur":1,"ts":' + t + b"}"
                           for t in ts_list) +
          b',{"ph":"X","name":"d","pid":1,"tid":1,"ts":0,"dur":0.0000015}'
          b',{"ph":"X","name":"d","pid":1,"tid":1,"ts":0,"dur":0.0000025}]',
          count=len(ts_list) + 2, checks=[
              ("SELECT group_concat(quote(ts), ',') FROM "
               "(SELECT ts FROM trace_events({p}) ORDER BY idx)",
               "1000,1000,1500000,2,100000,-5000,1700000000123456789,0,-1,0,0,NULL,0,0"),
              ("SELECT dur_ps FROM trace_events({p}) WHERE name='d' ORDER BY idx", "2\n2"),
          ]))
    add(F("nonfinite.json",
          b'[{"ph":"X","name":"nan","ts":NaN,"dur":Infinity,"pid":NaN,"tid":-Infinity,'
          b'"args":{"a":NaN,"b":-Infinity,"c":Infinity,"d":"NaN","e":[NaN,{"f":-Infinity}]}},'
          b'{"ph":"X","name":"snan","ts":"NaN","dur":"Infinity","pid":1,"tid":1,'
          b'"args":{"flops":"Infinity","step_num":NaN}}]', count=2, checks=[
              ("SELECT ts IS NULL, dur IS NULL, pid IS NULL, json_valid(args), "
               "json_extract(args,'$.a'), json_extract(args,'$.e[1].f') "
               "FROM trace_events({p}) WHERE idx=0", "1|1|1|1|NaN|-Infinity"),
              ("SELECT ts IS NULL, flops IS NULL FROM trace_events({p}) WHERE idx=1", "1|1"),
          ]))
    add(F("duplicate-keys.json",
          b'[{"ph":"X","name":"first","name":"second","ts":1,"ts":2,"dur":1,"pid":1,'
          b'"tid":1,"args":{"tf_op":"a","tf_op":"b"},"args":{"tf_op":"c"}}]', count=1))
    add(F("pid-tid-forms.json", J([
        X("a", 1, 1, pid="Spans", tid="7"), X("b", 1, 1, pid=1.0, tid=1e3),
        X("c", 1, 1, pid=1e30, tid=-5), X("d", 1, 1, pid=None, tid=True),
        X("e", 1, 1, pid=9223372036854775807, tid=-9223372036854775808),
        X("f", 1, 1, pid=9223372036854775808, tid=[1])]), count=6, checks=[
            ("SELECT quote(pid), quote(tid) FROM trace_events({p}) WHERE idx IN (0,1,4) ORDER BY idx",
             "'Spans'|7\n1|1000\n9223372036854775807|-9223372036854775808")]))
    add(F("big-times.json", J([X("a", 1e20, 1e19), X("b", -1e20, 5),
                               X("c", 1, 9.3e12), X("d", 2, 1)]), count=4))

    # --- tracks -------------------------------------------------------------
    be = [
        {"ph": "B", "name": "outer", "ts": 0, "pid": 1, "tid": 1},       # 0
        {"ph": "B", "name": "inner", "ts": 10, "pid": 1, "tid": 1},      # 1
        {"ph": "E", "name": "inner", "ts": 20, "pid": 1, "tid": 1},      # 2
        {"ph": "E", "ts": 50, "pid": 1, "tid": 1},                       # 3
        {"ph": "B", "name": "unmatched", "ts": 60, "pid": 1, "tid": 1},  # 4
        {"ph": "E", "name": "stray", "ts": 5, "pid": 1, "tid": 2},       # 5
        {"ph": "B", "name": "m", "ts": 1, "pid": 1, "tid": 3},           # 6
        {"ph": "E", "name": "zzz", "ts": 4, "pid": 1, "tid": 3},         # 7
        {"ph": "B", "name": "s", "ts": 1, "pid": "Spans", "tid": 1},     # 8
        {"ph": "E", "name": "s", "ts": 2, "pid": "Spans", "tid": 1},     # 9
        X("x-in-b", 30, 5),                                               # 10
    ]
    add(F("begin-end.json", J({"traceEvents": be}), count=len(be), checks=[
        ("SELECT idx, dur FROM trace_events({p}) WHERE ph='B' ORDER BY idx",
         "0|50000\n1|10000\n4|\n6|3000\n8|"),
        ("SELECT depth, parent_idx, excl FROM trace_events({p}) WHERE idx IN (0,1,10) ORDER BY idx",
         "0||35000\n1|0|10000\n1|0|5000"),
        ("SELECT count(DISTINCT kind) FROM profsum_diagnostics({p}) "
         "WHERE kind IN ('unmatched_begin','unmatched_end','mismatched_end')", "3"),
    ]))
    add(F("partial-overlap.json", J([X("a", 0, 10), X("b", 5, 10), X("c", 5, 2),
                                     X("zero", 1, 0), X("neg", 1, -1)]), count=5))
    add(F("deep-stack.json", J([X("l%d" % i, i, 1000 - 2 * i) for i in range(200)]),
          count=200, checks=[("SELECT max(depth), min(excl_ps) FROM trace_events({p})",
                              "199|2000000")]))
    counters = (b'[{"ph":"C","name":"mem","pid":1,"ts":0,"entries":[[0,1],[5,2]]},'
                b'{"ph":"C","name":"m2","pid":1,"ts":0,"args":{"x":1},"entries":[[1,2],]},'
                b'{"ph":"C","name":"m3","pid":1,"ts":1,"args":{"v":3}}]')
    add(F("compact-counters.json", counters, count=3, checks=[
        ("SELECT json_array_length(args,'$.entries'), json_extract(args,'$.x'), "
         "json_extract(args,'$.v') FROM trace_events({p}) ORDER BY idx", "2||\n1|1|\n||3")]))
    names = [X("x1", 1, 1, pid=1, tid=1), X("x2", 1, 1, pid=2, tid=5),
             {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Proc One"}},
             {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "Thread A"}},
             {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "Proc Two"}},
             {"ph": "M", "name": "thread_name", "pid": 2, "tid": 5, "args": {"name": "T5"}},
             {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "Proc One bis"}},
             {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 1, "args": {"sort_index": 3}}]
    add(F("metadata-after.json", J({"traceEvents": names}), count=len(names), checks=[
        ("SELECT idx, process_name, thread_name FROM trace_events({p}) WHERE ph='X' ORDER BY idx",
         "0|Proc One bis|Thread A\n1|Proc Two|T5")]))

    # --- size and depth ------------------------------------------------------
    long_name = J([{"ph": "X", "name": "big", "ts": 1, "dur": 2, "pid": 1, "tid": 1,
                    "args": {"long_name": "x" * (3 << 20), "tf_op": "t"}}, X("after", 2, 1)])
    lchk = [("SELECT length(long_name), tf_op FROM trace_events({p}) WHERE idx=0", "3145728|t")]
    add(F("long-name-3mb.json", long_name, count=2, checks=lchk))
    add(F("long-name-3mb.json.gz", gz(long_name), count=2, checks=lchk))
    add(F("long-name-small.json", J([X("big", 1, 2, args={"long_name": "y" * 3000})]), count=1))
    deep = 10000
    deep_args = (b'{"deep":' + b"[" * deep + b"]" * deep + b',"obj":' +
                 b'{"a":' * deep + b"1" + b"}" * deep + b',"tf_op":"after"}')
    add(F("deep-args-10000.json",
          b'[{"ph":"X","name":"deep","ts":1,"dur":1,"pid":1,"tid":1,"args":' + deep_args +
          b"}," + e2 + b"]", count=2, checks=[
              ("SELECT tf_op, length(args) FROM trace_events({p}) WHERE idx=0",
               "after|%d" % len(deep_args))]))
    add(F("deep-top-level-10000.json",
          b'{"meta":' + b"[" * deep + b"]" * deep + b',"traceEvents":[' + e1 + b"]}",
          count=1))
    add(F("deep-args-300.json",
          b'[{"ph":"X","name":"deep","ts":1,"dur":1,"args":{"d":'
          + b'[{"k":' * 150 + b"1" + b"}]" * 150 + b',"tf_op":"t"}}]', count=1))
    many = J({"traceEvents": many_events(7500)})
    mchk = [(Q_SUM, "75000000000|1")]
    add(F("many-events.json", many, count=15000, checks=mchk))
    add(F("many-events.json.gz", gz(many), count=15000, checks=mchk))

    # The summary document and what reads it, on a TPU trace: built in an
    # arena of the document's (jsontree.c), freed with it; here checked for
    # leaks and use after free, with the import's knobs and with others.
    dev = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
           {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}}]
    for i in range(3000):
        kind = ("fusion.%d" % (i % 40), "all-reduce.%d" % (i % 3), "copy.%d" % (i % 5))[i % 3]
        dev.append(X(kind, i * 10, 3 + i % 7, args={"tf_op": "jit(step)/layer%d/dot" % (i % 4)}))
    dchk = [
        ("SELECT profsum_import({p}, 'a') > 0", "1"),
        ("SELECT json_extract(profsum_summary_json('a'), '$.schema_version')", "profile_summary.v1"),
        ("SELECT json_array_length(profsum_summary_json('a'), '$.hot_ops')", "25"),  # the default hot_op_limit
        ("SELECT json_array_length(profsum_summary_json('a', '{{\"hot_op_limit\": 3}}'), '$.hot_ops')", "3"),
        ("SELECT length(profsum_report_md('a')) > 500", "1"),
        ("SELECT profsum_import({p}, 'b') > 0", "1"),
        ("SELECT json_valid(profsum_compare_json('a', 'b'))", "1"),
        ("SELECT count(*) FROM profsum_sec_hot_op", "50")]
    add(F("device-summary.json", J({"traceEvents": dev}), count=3002, checks=dchk))

    # gzip files of 128 KiB and more on disk are inflated by a producer thread
    # (gz.c, PROFSUM_THREAD_MIN): nearly incompressible names make one; the
    # LIMIT queries close the cursor while the producer is still running.
    big_gz = gz(J({"traceEvents": random_events(36000)}), 1)
    assert len(big_gz) >= 5 << 19, len(big_gz)
    add(F("big-random.json.gz", big_gz, count=36000, checks=[
        ("SELECT idx FROM trace_events({p}) LIMIT 1", "0"),
        ("SELECT count(*) FROM (SELECT * FROM trace_events({p}) LIMIT 10)", "10"),
        ("SELECT count(*) FROM (SELECT * FROM profsum_diagnostics({p}) LIMIT 1)", "0"),
        # the first import into the (in-memory) database parses in a thread
        # of its own while the schema is created (import.c, bgParseWanted)
        ("SELECT profsum_import({p}) > 0", "1"),
        ("SELECT num_events_total, num_complete_events FROM profsum_trace", "36000|36000")]))
    add(F("big-random-truncated.json.gz", big_gz[:len(big_gz) * 3 // 4], expect="err"))

    # The import's scanning on a thread of its own (scanpipe.c), asked for
    # whatever the file's size: windows handed between threads, one entry
    # larger than the window, diagnostics passed across, errors after rows.
    pipe = {"PROFSUM_SCAN_PIPE": "1"}
    add(F("pipe-device-summary.json", J({"traceEvents": dev}), count=3002, checks=dchk, env=pipe))
    add(F("pipe-big-random.json.gz", big_gz, count=36000, env=pipe, checks=[
        ("SELECT profsum_import({p}) > 0", "1"),
        ("SELECT num_events_total, num_complete_events FROM profsum_trace", "36000|36000")]))
    add(F("pipe-long-name-3mb.json.gz", gz(long_name), count=2, env=pipe, checks=[
        ("SELECT profsum_import({p}) > 0", "1"),
        ("SELECT num_complete_events FROM profsum_trace", "2")]))
    odd = b"[" + b",".join(
        b'{"ph":"X","pid":1,"tid":%d,"ts":%d.1234567,"dur":%s,"name":"n\x01%d"%s}'
        % (i % 3, i * 10, b"-1" if i % 97 == 0 else b"2.5", i % 50, b"," if i % 31 == 0 else b"")
        for i in range(6000)) + b"]"
    add(F("pipe-diagnostics.json", odd, count=6000, env=pipe, checks=[
        ("SELECT profsum_import({p}, 'a', '{{\"store_diagnostics\": \"all\"}}') > 0", "1"),
        ("SELECT kind, count(*) FROM profsum_diagnostic WHERE kind IN "
         "('control_character', 'negative_duration', 'time_rounded', 'trailing_comma') "
         "GROUP BY kind ORDER BY kind",
         "control_character|6000\nnegative_duration|62\ntime_rounded|6000\ntrailing_comma|194")]))
    # Time texts of seven decimals in a trace with a worker: the reference's
    # per-track breakdown is walked on the engine's worker beside the event
    # pass (engine_refwalk.c) and the document shows it.
    n_par = 33000
    rnd = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
           {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "XLA Ops"}}]
    rnd_text = J({"traceEvents": rnd})[:-2] + b"," + b",".join(
        b'{"ph":"X","pid":1,"tid":2,"name":"fusion.%d","ts":%d,"dur":5.0000004},'
        b'{"ph":"X","pid":1,"tid":2,"name":"all-reduce.1","ts":%d,"dur":2.0000003}'
        % (i % 5, i * 10, i * 10 + 1) for i in range(n_par)) + b"]}"
    comm = comp = 0.0
    for _ in range(n_par):
        comm += 2.0000003
        comp += 5.0000004 - 2.0000003
    per = "FROM profsum_agg_breakdown WHERE mode = 'exclusive_per_track' AND category = "
    add(F("rounded-large.json.gz", gz(rnd_text), count=2 * n_par + 2, checks=[
        ("SELECT profsum_import({p}, 'r') > 0", "1"),
        ("SELECT printf('%.6f|%.6f', duration, duration_ref) " + per + "'communication'",
         "%.6f|%.6f" % (2.0 * n_par, comm)),
        ("SELECT printf('%.6f|%.6f', duration, duration_ref) " + per + "'compute'",
         "%.6f|%.6f" % (3.0 * n_par, comp)),
        ("SELECT json_extract(profsum_summary_json('r'), '$.time_breakdown.communication.total_duration') = "
         "(SELECT duration_ref " + per + "'communication')", "1")]))
    # Host tracks and device-op tracks with run_ids, 18,030 events written
    # round robin: with a worker, the reference's walk of the host tracks
    # runs beside the §2 sweep, whose pieces (from 64 events in the
    # sanitizer builds) ask for run_ids on two threads.
    rr, per = [], []
    for d in range(10):
        rr.append({"ph": "M", "name": "process_name", "pid": 30 + d,
                   "args": {"name": ("/device:TPU:%d" % d) if d >= 4 else "/host:CPU"}})
        rr.append({"ph": "M", "name": "thread_name", "pid": 30 + d, "tid": 1,
                   "args": {"name": "XLA Ops" if d >= 4 else "python"}})
        evs = []
        for i in range(600):
            t, rid = 1000 + 20 * i, "r%d" % ((i // 150 + d) % 3)
            evs += [{"ph": "X", "pid": 30 + d, "tid": 1, "name": "fusion", "ts": t, "dur": 10,
                     "args": {"run_id": rid}},
                    {"ph": "X", "pid": 30 + d, "tid": 1, "name": "copy", "ts": t + 1, "dur": 2,
                     "args": {"run_id": rid}},
                    {"ph": "X", "pid": 30 + d, "tid": 1, "name": "all-reduce", "ts": t + 5, "dur": 3}]
        per.append(evs)
    while any(per):
        for evs in per:
            rr += evs[:100]
            del evs[:100]
    add(F("run-ids-in-pieces.json", J({"traceEvents": rr}), count=len(rr), checks=[
        ("SELECT profsum_import({p}) > 0", "1"),
        ("SELECT num_complete_events FROM profsum_trace", "18000"),
        ("SELECT json_array_length(profsum_summary_json(1), '$.trace_provenance.run_ids')", "3")]))
    # One busy thread whose doubles nest otherwise than its exact times
    # (epoch µs): the exact check in slices of the track, on the worker and
    # the calling thread, joined in order (engine_exact.c).
    busy = ['{"ph":"X","pid":1,"tid":1,"name":"span","ts":1699999999999999,"dur":36004}']
    for g in range(90):
        g0 = 1700000000000000 + 400 * g
        busy.append('{"ph":"X","pid":1,"tid":1,"name":"group","ts":%d,"dur":398}' % g0)
        for i in range(100):
            x = g0 + 4 * i
            busy.append('{"ph":"X","pid":1,"tid":1,"name":"fusion","ts":%d.0,"dur":1.0}' % x)
            busy.append('{"ph":"X","pid":1,"tid":1,"name":"copy","ts":%d.9,"dur":0.1}' % x)
    add(F("busy-track-slices.json", ('{"traceEvents":[' + ",".join(busy) + "]}").encode(),
          count=len(busy), checks=[
              ("SELECT profsum_import({p}) > 0", "1"),
              ("SELECT value FROM profsum_agg_fact WHERE name = 'float_nesting_events'", "9090.0"),
              ("SELECT value FROM profsum_agg_fact WHERE name = 'exact_breakdown_total'", "36004.0")]))
    # Device ops with a gap before each (6,000 copy ops, each under a
    # tf_op of its own, so that the gap pass interns 6,000 copy(...)
    # context paths: with the 29,000 names, tf_ops and region parts before
    # them, the pool's id arrays would grow past 32,768 while the pass
    # runs, had profsumEngGapsBegin not made the room first: an assert at
    # its join), a Steps line of 2,000 steps and a host thread, 19,000
    # events: with a worker the gap pass runs on it while the calling
    # thread writes the step spans' rows and reads the string pool.
    gp = [{"ph": "M", "name": "process_name", "pid": 50, "args": {"name": "/device:TPU:0"}},
          {"ph": "M", "name": "thread_name", "pid": 50, "tid": 1, "args": {"name": "XLA Ops"}},
          {"ph": "M", "name": "thread_name", "pid": 50, "tid": 2, "args": {"name": "Steps"}},
          {"ph": "M", "name": "process_name", "pid": 51, "args": {"name": "/host:CPU"}}]
    for i in range(6000):
        gp.append({"ph": "X", "pid": 50, "tid": 1, "name": "fusion.%d" % (i % 7), "ts": 1000 + 10 * i,
                   "dur": 4, "args": {"tf_op": "jit(f)/blk%d/dot" % (i % 3000)}})
        gp.append({"ph": "X", "pid": 50, "tid": 1, "name": "copy.1", "ts": 1000 + 10 * i + 6,
                   "dur": 2, "args": {"tf_op": "jit(f)/c%d/cp" % i}})
    gp += [{"ph": "X", "pid": 50, "tid": 2, "name": str(k), "ts": 1000 + 20 * k, "dur": 20}
           for k in range(2000)]
    gp += [{"ph": "X", "pid": 51, "tid": 1, "name": "host_op", "ts": 1000 + 12 * i, "dur": 5}
           for i in range(5000)]
    add(F("gaps-beside-rows.json", J({"traceEvents": gp}), count=len(gp), checks=[
        ("SELECT profsum_import({p}) > 0", "1"),
        # every copy op follows a 2 µs gap; each its own path in copy(...)
        ("SELECT printf('%d|%d|%.1f|%s', count(*), sum(count), total(total_gap_duration), "
         "min(region_path)) FROM profsum_agg_gap_context WHERE op_name = 'copy.1'",
         "6000|6000|12000.0|copy(f=>c0=>cp)"),
        # and every fusion op but the first: 857 of each name
        ("SELECT group_concat(count, ',') FROM (SELECT count FROM profsum_agg_gap "
         "WHERE name LIKE 'fusion.%' ORDER BY name)", "857,857,857,857,857,857,857"),
        ("SELECT count(*) FROM profsum_agg_step_span", "2000")]))
    add(F("xplane-pipe.xplane.pb", xplane_pipe_capture(), count=XP_PIPE_EVENTS,
          checks=XP_PIPE_CHECKS))
    add(F("xplane-pipe-one-thread.xplane.pb", xplane_pipe_capture(), count=XP_PIPE_EVENTS,
          checks=XP_PIPE_CHECKS, env={"PROFSUM_THREADS": "0"}))
    q = len(big_gz) * 2 // 3
    add(F("big-random-corrupt.json.gz", big_gz[:q] + b"\x00" * 4096 + big_gz[q + 4096:],
          expect="err"))

    # --- errors ---------------------------------------------------------------
    big = J({"traceEvents": many_events(300)})
    bgz = gz(big)
    add(F("gzip-truncated-half.json.gz", bgz[:len(bgz) // 2], expect="err"))
    add(F("gzip-truncated-trailer.json.gz", bgz[:-8], expect="err"))
    add(F("gzip-truncated-isize.json.gz", bgz[:-2], expect="err"))
    add(F("gzip-header-only.json.gz", bgz[:10], expect="err"))
    add(F("gzip-magic-only.json.gz", b"\x1f\x8b", expect="err"))
    add(F("gzip-bad-crc.json.gz",
          bgz[:-8] + bytes(b ^ 0xFF for b in bgz[-8:-4]) + bgz[-4:], expect="err"))
    add(F("gzip-bad-method.json.gz", bgz[:2] + b"\x07" + bgz[3:], expect="err"))
    mid = len(bgz) // 2
    add(F("gzip-corrupt-body.json.gz", bgz[:mid] + b"\xff" * 64 + bgz[mid + 64:], expect="err"))
    add(F("gzip-trailing-garbage.json.gz", gz(BASIC) + b"garbage", expect="err"))
    add(F("gzip-second-member-truncated.json.gz", gz(BASIC[:50]) + gz(BASIC[50:])[:-5],
          expect="err"))
    raw_deflate = zlib.compress(BASIC)
    add(F("zlib-not-gzip.json", raw_deflate, expect="err"))
    add(F("empty.json", b"", expect="err"))
    add(F("whitespace-only.json", b" \n\t \r\n", expect="err"))
    add(F("one-byte-1f.json", b"\x1f", expect="err"))
    add(F("not-json.txt", b"hello, world\n", expect="err"))
    add(F("syntax-missing-comma.json", b'[{"ph":"X" "name":"a"}]', expect="err"))
    add(F("syntax-double-comma.json", b'[{"ph":"X",,"name":"a"}]', expect="err"))
    add(F("syntax-missing-colon.json", b'[{"ph" "X"}]', expect="err"))
    add(F("syntax-bad-literal.json", b'[{"ph":"X","v":tru}]', expect="err"))
    add(F("syntax-bad-number.json", b'[{"ph":"X","ts":01}]', expect="err"))
    add(F("syntax-bad-escape.json", b'[{"ph":"X","name":"a\\x"}]', expect="err"))
    add(F("syntax-bad-u-escape.json", b'[{"ph":"X","name":"\\u12G4"}]', expect="err"))
    add(F("syntax-top-missing-comma.json", b'{"traceEvents":[] "x":1}', expect="err"))
    add(F("syntax-nul-byte.json", b'[{"ph":"X"}\x00]', expect="err"))
    add(F("syntax-mismatched-close.json", b'[{"ph":"X","args":[1,2}}]', expect="err"))
    add(F("events-not-array.json", b'{"traceEvents":{"ph":"X"}}', expect="err"))
    add(F("garbage-after.json", b"[]xyz", expect="err"))
    add(F("two-documents.json", b"{}{}", expect="err"))
    add(F("a-directory", special="dir", expect="err"))
    add(F("missing-file.json", special="missing", expect="err"))
    return out


def corpus_fixtures():
    out = []
    if os.path.isdir(FUZZ_CORPUS):
        for name in sorted(os.listdir(FUZZ_CORPUS)):
            p = os.path.join(FUZZ_CORPUS, name)
            if name.startswith(".") or not os.path.isfile(p):
                continue
            out.append(Fixture("fuzz_corpus/" + name, expect="any", path=p))
    # the XPlane fuzz target's seeds and the inputs it found, read as
    # XPlanes (the name's suffix decides)
    if os.path.isdir(FUZZ_XP_CORPUS):
        for name in sorted(os.listdir(FUZZ_XP_CORPUS)):
            p = os.path.join(FUZZ_XP_CORPUS, name)
            if name.startswith(".") or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                data = f.read()
            out.append(Fixture("fuzz-xplane-%s.xplane.pb" % os.path.splitext(name)[0], data, expect="any"))
    return out


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

def driver_cmd():
    cmd = os.environ.get("PROFSUM_SQLRUN", os.path.join(ROOT, "build", "sqlrun"))
    return shlex.split(cmd)


def driver_env():
    env = dict(os.environ)
    # Sanitizer reports must not look like an ordinary SQL error (exit 1).
    for var, code in (("ASAN_OPTIONS", 86), ("UBSAN_OPTIONS", 87), ("LSAN_OPTIONS", 88)):
        opts = env.get(var, "")
        if "exitcode" not in opts:
            opts = (opts + ":" if opts else "") + "exitcode=%d" % code
        env[var] = opts
    return env


def materialize(fx, tmp):
    if fx.path is not None:
        return fx.path
    p = os.path.join(tmp, fx.name)
    if fx.special == "dir":
        os.makedirs(p, exist_ok=True)
    elif fx.special == "missing":
        pass
    else:
        with open(p, "wb") as f:
            f.write(fx.data)
    fx.path = p
    return p


def run_fixture(fx, cmd, env, timeout):
    """Run one fixture; returns a list of (test name, ok, message)."""
    lit = sql_literal(fx.path)
    nonce = secrets.token_hex(8)
    markers = []
    args = list(cmd) + ["-k"]
    stmts = [q.format(p=lit) for _, q, _ in QUERIES] + [c.format(p=lit) for c, _ in fx.checks]
    for i, s in enumerate(stmts):
        m = "@@profsum-driver-%s-%d@@" % (nonce, i)
        markers.append(m)
        args += ["SELECT '%s'" % m, s]
    end = "@@profsum-driver-%s-end@@" % nonce
    markers.append(end)
    args.append("SELECT '%s'" % end)
    names = ["%s [%s]" % (fx.name, n) for n, _, _ in QUERIES] + \
            ["%s [check %d]" % (fx.name, k + 1) for k in range(len(fx.checks))]
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(env, **fx.env), cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [(n, False, "timeout after %ds" % timeout) for n in names]
    stderr = r.stderr.decode("utf-8", "replace")
    err_lines = [l for l in stderr.split("\n") if l != ""]
    foreign = [l for l in err_lines if not ERR_RE.match(l)]
    if r.returncode not in (0, 1) or foreign:
        msg = "exit code %d; stderr:\n%s" % (r.returncode, stderr[-6000:])
        return [(n, False, msg) for n in names]
    if (r.returncode == 1) != bool(err_lines):
        msg = "exit code %d with %d error line(s):\n%s" % (r.returncode, len(err_lines), stderr[-3000:])
        return [(n, False, msg) for n in names]

    # Split standard output at the markers.
    lines = r.stdout.split(b"\n")
    pos = {}
    for i, l in enumerate(lines):
        s = l.decode("utf-8", "replace")
        if s in markers and s not in pos:
            pos[s] = i
    if len(pos) != len(markers):
        msg = "markers missing from the output (%d of %d)" % (len(pos), len(markers))
        return [(n, False, msg) for n in names]
    segs = []
    for i in range(len(markers) - 1):
        a, b = pos[markers[i]], pos[markers[i + 1]]
        segs.append(lines[a + 1:b])

    n_te = sum(1 for l in err_lines if l.startswith("error: trace_events: "))
    n_pd = sum(1 for l in err_lines if l.startswith("error: profsum_diagnostics: "))
    count_ok = len(segs[0]) == 1 and re.match(rb"^\d+$", segs[0][0]) is not None
    sum_ok = len(segs[2]) == 1 and re.match(rb"^-?\d*\|-?\d*$", segs[2][0]) is not None
    all_failed = n_te - (not count_ok) - (not sum_ok)
    if all_failed not in (0, 1) or n_pd > 1:
        msg = "cannot attribute the errors (%d trace_events, %d profsum_diagnostics):\n%s" % (
            n_te, n_pd, stderr[-3000:])
        return [(n, False, msg) for n in names]
    ok_by_query = [count_ok, not all_failed, sum_ok, n_pd == 0]

    results = []
    for k, (qname, _, func) in enumerate(QUERIES):
        name = names[k]
        ok = ok_by_query[k]
        if fx.expect == "ok" and not ok:
            results.append((name, False, "expected success; stderr:\n" + stderr[-3000:]))
        elif fx.expect == "err" and ok:
            results.append((name, False, "expected an error from %s, got success" % func))
        elif k == 0 and ok and fx.count is not None and segs[0][0] != str(fx.count).encode():
            results.append((name, False, "count(*) = %s, expected %d" % (
                segs[0][0].decode(), fx.count)))
        else:
            results.append((name, True, ""))
    for k, (sql, want) in enumerate(fx.checks):
        got = b"\n".join(segs[len(QUERIES) + k]).decode("utf-8", "replace")
        name = names[len(QUERIES) + k]
        if err_lines:
            results.append((name, False, "errors in the run:\n" + stderr[-3000:]))
        elif got != want:
            results.append((name, False, "%s\n  expected: %r\n  got:      %r" % (
                sql.format(p="PATH"), want[:500], got[:500])))
        else:
            results.append((name, True, ""))
    return results


# Fixtures written as fuzzing seeds by --write-seeds (tests/fuzz_corpus/).
SEEDS = """plain-basic.json gzip-basic.json.gz gzip-multimember.json.gz
gzip-multimember-padding.json.gz bare-array.json bom-bare-array.json
object-odd-order.json second-events-array.json trailing-empty-entry.json
non-object-entries.json string-escapes.json control-chars.json invalid-utf8.json
escaped-keys.json trailing-commas.json missing-close-bracket.json
bare-missing-close-comma.json truncated-last-entry.json truncated-top-key.json
gzip-truncated-json.json.gz numbers-as-strings.json numbers-precision.json
nonfinite.json duplicate-keys.json pid-tid-forms.json big-times.json
begin-end.json partial-overlap.json compact-counters.json metadata-after.json
long-name-small.json deep-args-300.json gzip-truncated-half.json.gz
gzip-bad-crc.json.gz gzip-trailing-garbage.json.gz syntax-bad-u-escape.json
empty-object.json""".split()


def write_seeds(outdir):
    os.makedirs(outdir, exist_ok=True)
    n = 0
    for fx in fixtures():
        if fx.name not in SEEDS or fx.data is None or len(fx.data) > 16384:
            continue
        name = "seed-" + re.sub(r"[^A-Za-z0-9_.-]", "_", fx.name)
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(fx.data)
        n += 1
    print("wrote %d seeds to %s" % (n, outdir))


def main(argv):
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    if argv[:1] == ["--write-seeds"]:
        write_seeds(argv[1])
        return 0
    pattern = None
    if argv[:1] == ["-k"]:
        pattern = argv[1]
    cmd = driver_cmd()
    env = driver_env()
    timeout = int(os.environ.get("PROFSUM_DRIVER_TIMEOUT", "900"))
    jobs = int(os.environ.get("PROFSUM_DRIVER_JOBS", str(min(2, os.cpu_count() or 1))))
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="profsum-driver-") as tmp:
        fxs = fixtures() + corpus_fixtures()
        if pattern:
            fxs = [f for f in fxs if pattern in f.name]
        for fx in fxs:
            materialize(fx, tmp)
        print("driver: %s (%d fixtures)" % (" ".join(cmd), len(fxs)))
        sys.stdout.flush()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            futs = [ex.submit(run_fixture, fx, cmd, env, timeout) for fx in fxs]
            for fut in futs:
                for name, ok, msg in fut.result():
                    if ok:
                        passed += 1
                        if verbose:
                            print("ok   %s" % name)
                    else:
                        failed += 1
                        print("FAIL %s\n     %s" % (name, msg.replace("\n", "\n     ")))
                sys.stdout.flush()
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
