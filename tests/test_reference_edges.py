"""Edge rules of summary-v1-spec.md that are easy to miss: long marker
names (§4.8), a missing ts (§1.2) and one that is not a number, numeric
args.run_id (§1.3), and the
quality warning for entries the reference's typed decoder rejects (§1.2).

Run: /usr/bin/python3 tests/run.py test_reference_edges.py
"""
import json
import os
import random
import sqlite3
import subprocess
import unittest

from fixtures import doc, f1, ops_only
from util import connect, TempDir, ROOT

CLI = os.environ.get("PROFSUM_CLI", os.path.join(ROOT, "profsum"))


def summary(td, data, name="t.json"):
    path = td.write(name, data if isinstance(data, str) else json.dumps(data))
    db = connect()
    try:
        db.execute("SELECT profsum_import(?, 'x')", (path,))
        d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
        diags = db.execute("SELECT kind, detail FROM profsum_diagnostic").fetchall()
    finally:
        db.close()
    return d, diags


class ReferenceEdges(unittest.TestCase):
    def test_long_marker_name_is_a_marker(self):
        # canonical name of 32+ characters that starts with copy-start: still
        # a marker, so the gap goes to the op after it
        long_name = "copy-start.param_buffer_for_layer_norm_scale_0.3"
        with TempDir() as td:
            d, _ = summary(td, ops_only([{"name": "fusion.0", "ts": 0, "dur": 10},
                                         {"name": long_name, "ts": 100, "dur": 1},
                                         {"name": "dot.1", "ts": 101, "dur": 20}]))
        gaps = d["gap_before_ops"]
        self.assertEqual(len(gaps), 1, gaps)
        self.assertEqual((gaps[0]["name"], gaps[0]["payload_op"], gaps[0]["marker_op"]),
                         ("dot.1", "dot.1", long_name))
        self.assertEqual(gaps[0]["total_gap_duration"], 90.0)
        self.assertEqual([c["op_name"] for c in d["gap_region_contexts"]], ["dot.1"])

    def test_op_names_whose_canonical_name_is_empty(self):
        # "%", " ", ".5" are names (non-empty strings, §1.3) whose canonical
        # name is '' (§1.4): the region path is that empty part (§4.9 rule
        # 3), the gap context's path too (§4.10); the empty texts are
        # stored as '' and the import went through even when they are the
        # only texts of their table (they were NULL there, and refused)
        for names in (["%"], [" "], [".5", "%.5"], ["%%", ".12", "%"]):
            evs = [{"name": n, "ts": 30 * i, "dur": 10} for i, n in enumerate(names)]
            for mode in ("exclusive_per_track", "exclusive_global"):
                with self.subTest(names=names, mode=mode), TempDir() as td:
                    path = td.write("t.json", json.dumps(ops_only(evs)))
                    db = connect()
                    try:
                        db.execute("SELECT profsum_import(?, 'x', ?)", (path, json.dumps({"breakdown_mode": mode})))
                        d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
                        stored = db.execute("SELECT count(*) FROM profsum_agg_region WHERE path=''").fetchone()[0]
                    finally:
                        db.close()
                    self.assertEqual(stored, 1)
                    self.assertEqual(sorted(o["name"] for o in d["hot_ops"]), sorted(set(names)))
                    self.assertEqual({o["canonical_name"] for o in d["hot_ops"]}, {""})
                    self.assertEqual(d["hierarchical_regions"],
                                     [{"path": "", "depth": 1, "count": len(names),
                                       "inclusive_duration": 10.0 * len(names),
                                       "exclusive_duration": 10.0 * len(names)}])
                    ctx = d["gap_region_contexts"]
                    self.assertEqual([c["region_path"] for c in ctx], [""] * (len(names) - 1), ctx)

    def test_flop_proxy_mean_is_of_doubles(self):
        # the reference's proxies are floats (float() of the integer) and
        # their mean the sum of those doubles in processing order over the
        # count (§4.5): past 2^53 not the exact integer mean
        rnd = random.Random(5)
        ops, evs = {}, []
        for k in range(40):
            name = "dot.%d" % k
            dims = ([2 ** 53 + 1, 1] if k == 0 else
                    [rnd.choice([rnd.randrange(1, 2 ** 62), rnd.randrange(2 ** 52, 2 ** 55), rnd.randrange(1, 1000)])
                     for _ in range(rnd.randrange(1, 7))])
            ops[name] = dims
            for dim in dims:
                evs.append({"name": name, "args": {"long_name": "%%a = f32[%d] dot()" % dim}})
        for i, e in enumerate(evs):
            e["ts"], e["dur"] = 2 * i, 1
        with TempDir() as td:
            path = td.write("t.json", json.dumps(ops_only(evs)))
            db = connect()
            try:
                db.execute("SELECT profsum_import(?, 'x')", (path,))
                d = json.loads(db.execute("SELECT profsum_summary_json('x', '{\"hot_op_limit\": 100}')").fetchone()[0])
            finally:
                db.close()

        def mean(dims):
            t = 0.0
            for dim in dims:
                t += float(dim)
            return t / len(dims)
        got = {o["name"]: o["flop_proxy_per_invocation"] for o in d["hot_ops"]}
        self.assertEqual(got, {name: mean(dims) for name, dims in ops.items()})
        self.assertEqual(got["dot.0"], 4503599627370496.0)

    def test_long_names_with_one_hash_keep_their_own_signatures(self):
        # the two texts share profsumBytesHash (tests/hash_test.c checks
        # it) and their length: y.1 must not take x.1's signature
        with TempDir() as td:
            d, _ = summary(td, ops_only([
                {"name": "x.1", "ts": 0, "dur": 10, "args": {"long_name": "=f32[00]#    !  "}},
                {"name": "y.1", "ts": 20, "dur": 5, "args": {"long_name": "=f32[25]^1MPR#X!"}}]))
        ops = {o["name"]: o for o in d["hot_ops"]}
        self.assertEqual(ops["x.1"]["shape_signature"], "00")
        self.assertIsNone(ops["x.1"]["flop_proxy_per_invocation"])
        self.assertEqual(ops["y.1"]["shape_signature"], "25")
        self.assertEqual(ops["y.1"]["flop_proxy_per_invocation"], 25.0)
        fam = d["semantic_families"]
        self.assertEqual(len(fam), 1)
        self.assertEqual((fam[0]["family"], fam[0]["flop_proxy_total"], fam[0]["time_per_flop_proxy"]),
                         ("other", 25.0, 0.6))

    def test_empty_shape_signature_is_no_signature(self):
        # extract_shape_signature('... f32[ ] ...') is '' (its dims trim to
        # nothing); the reference counts a signature only when it is truthy
        with TempDir() as td:
            d, _ = summary(td, ops_only([
                {"name": "fusion.1", "ts": 0, "dur": 10, "args": {"long_name": "%fusion.1 = f32[ ] fusion()"}},
                {"name": "fusion.1", "ts": 20, "dur": 10, "args": {"long_name": "%fusion.1 = f32[ ] fusion()"}},
                {"name": "fusion.1", "ts": 40, "dur": 10, "args": {"long_name": "%fusion.1 = f32[7] fusion()"}},
                {"name": "dot.2", "ts": 60, "dur": 5, "args": {"long_name": "%dot.2 = f32[ , ] dot()"}}]))
        ops = {o["name"]: o for o in d["hot_ops"]}
        self.assertEqual(ops["fusion.1"]["shape_signature"], "7")
        self.assertEqual(ops["fusion.1"]["flop_proxy_per_invocation"], 7.0)
        self.assertIsNone(ops["dot.2"]["shape_signature"])
        self.assertIsNone(ops["dot.2"]["flop_proxy_per_invocation"])
        # one family ('fusion.1' canonicalizes to 'fusion', which the
        # family pattern 'fusion\.' does not match): its signatures are
        # weighted by op count, so '' (fusion.1's two events) would win
        fam = d["semantic_families"]
        self.assertEqual([f["family"] for f in fam], ["other"])
        self.assertEqual(fam[0]["dominant_shape_signature"], "7")
        self.assertEqual(fam[0]["flop_proxy_total"], 21.0)
        db = connect()
        try:
            # the SQL function keeps the reference function's answer
            self.assertEqual(db.execute("SELECT profsum_shape_signature(?)",
                                        ("%dot.2 = f32[ , ] dot()",)).fetchone()[0], "")
        finally:
            db.close()

    def test_upper_case_marker(self):
        with TempDir() as td:
            d, _ = summary(td, ops_only([{"name": "fusion.0", "ts": 0, "dur": 10},
                                         {"name": "IOTA.3", "ts": 100, "dur": 1},
                                         {"name": "dot.1", "ts": 101, "dur": 20}]))
        self.assertEqual(d["gap_before_ops"][0]["marker_op"], "IOTA.3")
        self.assertEqual(d["gap_before_ops"][0]["name"], "dot.1")

    def test_missing_ts_is_zero(self):
        # the reference's typed decoder defaults ts to 0.0 (§1.2)
        with TempDir() as td:
            d, diags = summary(td, doc([
                {"ph": "X", "pid": 1, "tid": 2, "name": "a", "dur": 5},
                {"ph": "X", "pid": 1, "tid": 2, "name": "b", "ts": 10, "dur": 5}]))
        ov = d["trace_overview"]
        self.assertEqual((ov["num_complete_events"], ov["profile_start_ts"], ov["profile_end_ts"]),
                         (2, 0.0, 15.0))
        self.assertIn("missing_ts", [k for k, _ in diags])

    def test_ts_that_is_not_a_number_is_left_out(self):
        # "NaN", null, 1e400 and a word are not a missing ts: placed at ts 0
        # they would move the profile start, the track's gaps and its
        # utilization; they are left out (bad_ts), with a quality warning
        good = [{"name": "fusion.0", "ts": 100, "dur": 10},
                {"name": "dot.1", "ts": 120, "dur": 20}]
        with TempDir() as td:
            d0, _ = summary(td, ops_only(good), "good.json")
            bad = ops_only(good + [{"name": "copy.9", "ts": "NaN", "dur": 5},
                                   {"name": "copy.8", "ts": None, "dur": 5},
                                   {"name": "copy.7", "ts": "soon", "dur": 5},
                                   {"name": "copy.6", "ts": 7777777, "dur": 5}])
            text = json.dumps(bad).replace("7777777", "1e400")
            d, diags = summary(td, text, "bad.json")
        ov, ov0 = d["trace_overview"], d0["trace_overview"]
        self.assertEqual(ov["num_complete_events"], 2)
        self.assertEqual((ov["profile_start_ts"], ov["profile_end_ts"]), (100.0, 140.0))
        for k in ("hot_ops", "gap_before_ops", "time_breakdown", "step_time"):
            self.assertEqual(d[k], d0[k], k)
        self.assertEqual([k for k, _ in diags].count("bad_ts"), 4, diags)
        self.assertNotIn("missing_ts", [k for k, _ in diags])
        warn = [w for w in ov["quality_warnings"] if "left out of the summary" in w]
        self.assertEqual(len(warn), 1, ov["quality_warnings"])
        self.assertIn("4 complete events are left out", warn[0])
        self.assertIn("its ts is not a number", warn[0])
        self.assertFalse([w for w in ov0["quality_warnings"] if "left out" in w])

    def test_file_without_trace_events_is_an_import_error(self):
        # the reference summarizes {"foo": 1} as an empty trace; profsum
        # refuses it (a documented departure) and names the file;
        # {"traceEvents": []} stays an empty trace
        for text in ('{"foo": 1}', '{"traceEvents": null, "displayTimeUnit": "ns"}', '[1, 2, 3]',
                     '{"traceEvents": [{"name": "x"}, 3]}'):
            with TempDir() as td:
                with self.assertRaises(sqlite3.Error) as cm:
                    summary(td, text, "n.json")
            self.assertIn("not a trace", str(cm.exception))
            self.assertIn("n.json", str(cm.exception))
        with TempDir() as td:
            d, _ = summary(td, '{"traceEvents": []}')
        self.assertEqual(d["trace_overview"]["quality_warnings"], [])
        self.assertEqual(d["trace_overview"]["num_events_total"], 0)

    def test_slice_longer_than_26_days_is_left_out_with_a_warning(self):
        with TempDir() as td:
            d, diags = summary(td, ops_only([{"name": "fusion.0", "ts": 0, "dur": 10},
                                             {"name": "copy.1", "ts": 20, "dur": 1e13}]))
        ov = d["trace_overview"]
        self.assertEqual(ov["num_complete_events"], 1)
        self.assertIn("time_out_of_range", [k for k, _ in diags])
        warn = [w for w in ov["quality_warnings"] if "left out of the summary" in w]
        self.assertEqual(len(warn), 1, ov["quality_warnings"])
        self.assertIn("1 complete event is left out", warn[0])
        self.assertIn("entry", warn[0])

    def test_time_beyond_exact_range_is_left_out_not_malformed(self):
        # a finite number of 1e32 µs or more (10^38 ps) has no exact time:
        # the event is left out like a 26-day slice; the reference reads such
        # a number, so the file is not called malformed for it (1e400, whose
        # double is infinite, still is: see the test above); a negative one
        # as a dur is a negative duration
        good = [{"name": "fusion.0", "ts": 100, "dur": 10}, {"name": "dot.1", "ts": 120, "dur": 20}]
        with TempDir() as td:
            d0, _ = summary(td, ops_only(good), "good.json")
            bad = ops_only([{"name": "copy.9", "ts": 7777771, "dur": 5}] + good
                           + [{"name": "copy.8", "ts": 130, "dur": 7777772},
                              {"name": "copy.7", "ts": 7777773, "dur": 7777774},
                              {"name": "copy.6", "ts": 150, "dur": 7777775}])
            text = (json.dumps(bad).replace("7777771", "1e32").replace("7777772", "1e300")
                    .replace("7777773", "-1.5e200").replace("7777774", "1e33")
                    .replace("7777775", "-2e40"))
            path = td.write("huge.json", text)
            d, diags = summary(td, text, "huge.json")
            db = connect()
            rows = db.execute("SELECT name, ts, dur_ps, dur FROM trace_events(?) WHERE ph = 'X' ORDER BY idx",
                              (path,)).fetchall()
            db.close()
        ov = d["trace_overview"]
        self.assertEqual(ov["num_complete_events"], 2)
        self.assertEqual((ov["profile_start_ts"], ov["profile_end_ts"]), (100.0, 140.0))
        for k in ("hot_ops", "gap_before_ops", "time_breakdown", "step_time"):
            self.assertEqual(d[k], d0[k], k)
        kinds = [k for k, _ in diags]
        self.assertNotIn("bad_field", kinds)
        self.assertNotIn("bad_ts", kinds)
        # 5 fields and 3 events (the stored rows keep the first 5 of a kind)
        self.assertIn(("suppressed", "time_out_of_range: 8 occurrences in all; only the first 5 are stored "
                       "(profsum_diagnostics(path) lists them all)"), diags)
        self.assertIn(("time_out_of_range", "ts: 1e32 µs is beyond the range of exact times (1e32 µs): "
                       "no value"), diags)
        # a dur of -2e40 µs has no value (its time_out_of_range row): no
        # negative_duration, as profsum_diagnostics(path) lists none
        self.assertEqual(kinds.count("negative_duration"), 0)
        self.assertFalse([w for w in ov["quality_warnings"] if "malformed" in w], ov["quality_warnings"])
        warn = [w for w in ov["quality_warnings"] if "left out of the summary" in w]
        self.assertEqual(len(warn), 1, ov["quality_warnings"])
        self.assertIn("3 complete events are left out", warn[0])
        self.assertIn("first: entry 2, its ts or dur is 1e32 µs or more, past the exact times", warn[0])
        # the rows: no ts, dur_ps or dur (ns) for those values
        self.assertEqual(rows[0], ("copy.9", None, 5000000, 5000))
        self.assertEqual(rows[3], ("copy.8", 130000, None, None))
        self.assertEqual(rows[4], ("copy.7", None, None, None))
        self.assertEqual(rows[5], ("copy.6", 150000, None, None))
        # the reading just below: 9.99e31 µs is an exact time (a 26-day slice)
        with TempDir() as td:
            d, diags = summary(td, json.dumps(ops_only(good + [{"name": "x", "ts": 0, "dur": 7}]))
                               .replace('"dur": 7}', '"dur": 9.99e31}'), "below.json")
        self.assertIn("more than 26 days", [w for w in d["trace_overview"]["quality_warnings"]
                                            if "left out" in w][0])

    def test_stray_event_far_from_the_others_is_the_one_left_out(self):
        """Times are 64-bit ps from one origin: of a ts-0 event and four at
        epoch times, the one is left out, first in the file or last, and
        the summary is the four's."""
        epoch = 1.7e15
        four = [{"name": "f.1", "ts": epoch, "dur": 10}, {"name": "g.1", "ts": epoch + 20, "dur": 5},
                {"name": "f.1", "ts": epoch + 30, "dur": 10}, {"name": "g.1", "ts": epoch + 50, "dur": 5}]
        stray = {"name": "h.1", "ts": 0, "dur": 3}
        docs = []
        for events in ([stray] + four, four + [stray]):
            with TempDir() as td:
                d, diags = summary(td, ops_only(events))
            ov = d["trace_overview"]
            self.assertEqual(ov["num_complete_events"], 4)
            self.assertEqual(ov["profile_start_ts"], epoch)
            self.assertEqual(sorted(h["name"] for h in d["hot_ops"]), ["f.1", "g.1"])
            self.assertEqual([k for k, _ in diags].count("time_out_of_range"), 1)
            self.assertIn("1 complete event is left out", ov["quality_warnings"][0])
            docs.append({k: v for k, v in d.items()
                         if k not in ("generated_at_utc", "trace_overview", "trace_provenance", "run_metadata",
                                      "source_path")})
        self.assertEqual(docs[0], docs[1])

    def test_dur_below_half_a_picosecond_is_complete(self):
        # dur > 0 as a double (the reference's test): 1e-13 rounds to 0 ps
        # but is a complete event; -1e-13 and 1e-400 (0.0) are not
        with TempDir() as td:
            text = json.dumps(ops_only([{"name": "fusion.0", "ts": 0, "dur": 10},
                                        {"name": "copy.2", "ts": 20, "dur": 1e-13},
                                        {"name": "copy.3", "ts": 25, "dur": -1e-13},
                                        {"name": "copy.4", "ts": 26, "dur": 7777777},
                                        {"name": "dot.1", "ts": 30, "dur": 5}]))
            d, diags = summary(td, text.replace("7777777", "1e-400"))
        self.assertEqual(d["trace_overview"]["num_complete_events"], 3)
        ops = {o["name"]: o for o in d["hot_ops"]}
        self.assertEqual(sorted(ops), ["copy.2", "dot.1", "fusion.0"])
        self.assertEqual(ops["copy.2"]["count"], 1)
        # the reference's doubles (the exact ps sums, in profsum_agg_op, are 0)
        self.assertEqual(ops["copy.2"]["exclusive_duration"], 1e-13)
        gaps = {g["name"]: g for g in d["gap_before_ops"]}
        self.assertEqual(sorted(gaps), ["copy.2", "dot.1"])
        self.assertEqual(gaps["copy.2"]["total_gap_duration"], 10.0)
        # the rows profsum_diagnostics(path) lists: each of the three is 0 ps
        # in trace_events (on no track), whatever the summary makes of it
        self.assertEqual(sorted(d for d in diags if d[0] != "time_rounded"),
                         [("zero_duration", "X event with dur 0: a row, but on no track")] * 3)

    def test_numeric_run_ids_as_python_str(self):
        ids = ["7.50", "1e3", "-0", "-12", "123456789012345678901234567890", '"abc"', "7",
               "-1.5e-7", "0.1", "2.5E+20", "1E400", "-1e999"]
        text = '{"traceEvents":[%s]}' % ",".join(
            '{"ph":"X","pid":1,"tid":1,"name":"a","ts":%d,"dur":1,"args":{"run_id":%s}}' % (2 * i, v)
            for i, v in enumerate(ids))
        want = []
        for e in json.loads(text)["traceEvents"]:
            s = str(e["args"]["run_id"])
            if s not in want:
                want.append(s)
        with TempDir() as td:
            d, _ = summary(td, text)
        self.assertEqual(sorted(d["trace_provenance"]["run_ids"]), sorted(want))
        self.assertIn("7.5", want)
        self.assertIn("1000.0", want)

    def test_reference_rejections_counted(self):
        cases = [
            ('{"traceEvents":[{"ph":"X","pid":"1","tid":2,"name":"a","ts":1,"dur":2}]}',
             "1 entry is malformed for the reference summarizer", "pid/tid not a JSON integer"),
            ('{"traceEvents":[{"ph":"X","pid":1.0,"tid":2,"name":"a","ts":1,"dur":2}]}',
             "1 entry is malformed", "pid/tid not a JSON integer"),
            ('{"traceEvents":[{"ph":"X","pid":1,"tid":2,"name":"a","ts":"1","dur":"2"},'
             '{"ph":"X","pid":1,"tid":"x","name":"a","ts":5,"dur":2}]}',
             "2 entries are malformed", "ts/dur not a JSON number"),
            # one entry, three reasons: counted once; null is rejected too
            ('{"traceEvents":[{"ph":"X","pid":true,"tid":true,"name":"a","ts":true,"dur":2},'
             '{"ph":"X","pid":1,"tid":1,"name":"a","ts":1,"dur":2}]}',
             "1 entry is malformed", "bad_field"),
            ('{"traceEvents":[{"ph":"X","pid":1,"tid":null,"name":"a","ts":1,"dur":2},'
             '{"ph":"X","pid":1,"tid":1,"name":"a","ts":null,"dur":2}]}',
             "2 entries are malformed", "pid/tid not a JSON integer", 0, 1),
            ('[{"ph":"X","pid":1,"tid":2,"name":"a","ts":1,"dur":2}]',
             "The trace is in the JSON array form", "reference summarizer rejects"),
            # the typed args of §1.2: one entry each
            ('{"traceEvents":[{"ph":"X","pid":1,"tid":2,"name":"a","ts":1,"dur":2,"args":[1]},'
             '{"ph":"X","pid":1,"tid":2,"name":"b","ts":5,"dur":2}]}',
             "1 entry is malformed", "args not a JSON object", 2),
            ('{"traceEvents":[{"ph":"X","pid":1,"tid":2,"name":"a","ts":1,"dur":2,"args":{"tf_op":5}},'
             '{"ph":"X","pid":1,"tid":2,"name":"b","ts":5,"dur":2,"args":{"run_id":true}}]}',
             "2 entries are malformed", "args.tf_op not a string", 2),
            ('{"traceEvents":[{"ph":"M","pid":1,"name":"process_name","args":{"name":7}},'
             '{"ph":"X","pid":1,"tid":2,"name":"b","ts":5,"dur":2,"args":{"step_num":1.5}}]}',
             "2 entries are malformed", "args.name of a metadata entry not a string", 1),
            ('{"traceEvents":[{"ph":"X","pid":1,"tid":2,"name":"b","ts":5,"dur":2,"args":{"name":[1]}}]}',
             "1 entry is malformed", "args.name not a string", 1),
        ]
        with TempDir() as td:
            for i, case in enumerate(cases):
                text, start, part = case[:3]
                # complete events summarized, and "left out" warnings (a null
                # ts: the event is left out, with a warning of its own)
                n_complete = case[3] if len(case) > 3 else 1
                n_left_warn = case[4] if len(case) > 4 else 0
                with self.subTest(text=text):
                    d, diags = summary(td, text, "r%d.json" % i)
                    qw = [w for w in d["trace_overview"]["quality_warnings"]
                          if "left out of the summary" not in w]
                    self.assertEqual(len(d["trace_overview"]["quality_warnings"]) - len(qw),
                                     n_left_warn)
                    if "see profsum_diagnostic" in qw[0]:
                        # the warning points there: a row says why
                        kinds = {k for k, _ in diags}
                        self.assertTrue(kinds & {"reference_rejects", "bad_field"}, diags)
                    self.assertEqual(len(qw), 1, qw)
                    self.assertTrue(qw[0].startswith(start), qw[0])
                    self.assertIn(part, qw[0])
                    self.assertEqual(d["trace_overview"]["num_complete_events"], n_complete)
            d, _ = summary(td, '{"traceEvents":[{"ph":"X","pid":1,"tid":2,"name":"a","ts":1,"dur":2}]}',
                           "ok.json")
            self.assertEqual(d["trace_overview"]["quality_warnings"], [])


def f1_document(td):
    """The v1 document of the F1 fixture (three steps), imported in td, and
    the fixture's path."""
    path = td.write("f1.json", json.dumps(f1([100, 110, 120], 30)))
    db = connect()
    try:
        db.execute("SELECT profsum_import(?, 'x')", (path,))
        return json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0]), path
    finally:
        db.close()


class V1Leniency(unittest.TestCase):
    def test_missing_or_empty_canonical_name_recomputed(self):
        with TempDir() as td:
            d, _ = f1_document(td)
            want = {h["name"]: h["canonical_name"] for h in d["hot_ops"]}
            del d["hot_ops"][0]["canonical_name"]
            d["hot_ops"][1]["canonical_name"] = ""
            v1 = td.write("v1.json", json.dumps(d))
            db = connect()
            try:
                db.execute("SELECT profsum_import(?, 'y')", (v1,))
                got = dict(db.execute("SELECT name, canonical_name FROM profsum_hot_ops "
                                      "WHERE label = 'y'").fetchall())
            finally:
                db.close()
        self.assertEqual(got, want)

    def test_compact_v1_file_written_back_as_the_reference_does(self):
        # the reference re-serializes a summary it read:
        # json.dumps(indent=2, sort_keys=True), whatever the file's layout
        with TempDir() as td:
            path = td.write("f1.json", json.dumps(f1([100, 110, 120], 30)))
            db = connect()
            try:
                db.execute("SELECT profsum_import(?, 'x')", (path,))
                pretty = db.execute("SELECT profsum_summary_json('x')").fetchone()[0]
                compact = td.write("v1c.json", json.dumps(json.loads(pretty), separators=(",", ":")))
                db.execute("SELECT profsum_import(?, 'y')", (compact,))
                back = db.execute("SELECT profsum_summary_json('y')").fetchone()[0]
            finally:
                db.close()
        self.assertEqual(back, json.dumps(json.loads(pretty), indent=2, sort_keys=True))
        self.assertEqual(back, pretty)

    def test_older_v1_file_written_back_with_the_readers_defaults(self):
        """A v1 file of an older writer (legacy names, keys added since
        missing, keys removed since present) comes back as the reference
        writes a summary it read: its record types, the reader's defaults.
        The bundle's summary files are the same text."""
        with TempDir() as td:
            want, path = f1_document(td)
            self.assertTrue(want["hot_ops"] and want["gap_before_ops"] and want["semantic_families"]
                            and want["gap_region_contexts"])
            old = json.loads(json.dumps(want))
            old["extra_top_level"] = {"kept": False}
            old["device_op_region_aggregates"] = []
            del old["trace_overview"]["suspected_truncation"]
            del old["trace_overview"]["quality_warnings"]
            del old["trace_provenance"]["source_file_hints"]
            del old["step_time"]["classes"]
            old["step_time"]["all_steps"]["unknown_stat"] = 1
            # legacy names with values (the fixture's are null): read under
            # the current names; where both are given the current one wins
            want["hot_ops"][0]["flop_proxy_per_invocation"] = 2.5
            want["semantic_families"][0]["flop_proxy_total"] = 7.0
            want["semantic_families"][0]["time_per_flop_proxy"] = 0.125
            h0 = old["hot_ops"][0]
            h0.pop("flop_proxy_per_invocation")
            h0["work_proxy_per_invocation"] = 2.5
            h0["canonical_name"] = ""
            fam = old["semantic_families"][0]
            fam.pop("flop_proxy_total")
            fam["work_proxy_total"] = 7.0
            fam["time_per_flop_proxy"] = 0.125
            fam["normalized_exclusive_per_work"] = 99.0
            for g in old["gap_before_ops"]:
                del g["payload_op"]
                g["marker_op"] = ""
            old["gap_region_contexts"][0]["total_overlap_duration"] = 1.5
            del old["gap_region_contexts"][1:]
            want["gap_region_contexts"] = want["gap_region_contexts"][:1]
            want["step_time"]["classes"] = []
            want["trace_provenance"]["source_file_hints"] = []
            for g in want["gap_before_ops"]:
                g["payload_op"] = g["marker_op"] = g["name"]
            v1 = td.write("old.json", json.dumps(old))
            db = connect()
            try:
                db.execute("SELECT profsum_import(?, 'y')", (v1,))
                back = db.execute("SELECT profsum_summary_json('y')").fetchone()[0]
                out = os.path.join(td.path, "cmp")
                db.execute("SELECT profsum_import(?, 'x')", (path,))
                db.execute("SELECT profsum_bundle('x', 'y', ?)", (out,)).fetchone()
                with open(os.path.join(out, "after.summary.json"), encoding="utf-8") as f:
                    bundled = f.read()
            finally:
                db.close()
        self.assertEqual(back, json.dumps(want, indent=2, sort_keys=True))
        self.assertEqual(bundled, back + "\n")


class ReportKpis(unittest.TestCase):
    """The markdown report is the reference's (tools-spec §5) unless the KPI
    table is asked for."""

    def test_kpis_only_on_request(self):
        with TempDir() as td:
            path = td.write("f1.json", json.dumps(f1([100, 110, 120], 30)))
            db = connect()
            try:
                db.execute("SELECT profsum_import(?, 'x')", (path,))
                plain = db.execute("SELECT profsum_report_md('x')").fetchone()[0]
                same = db.execute("SELECT profsum_report_md('x', 10, '{\"kpis\": false}')").fetchone()[0]
                kpis = db.execute("SELECT profsum_report_md('x', 10, '{\"kpis\": true}')").fetchone()[0]
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    db.execute("SELECT profsum_report_md('x', 10, '{\"kpi\": true}')").fetchone()
                self.assertIn("profsum_report_md: options_json", str(cm.exception))
            finally:
                db.close()
            self.assertNotIn("## KPIs", plain)
            self.assertTrue(plain.endswith("\n") and not plain.endswith("\n\n"))
            self.assertEqual(plain, same)
            self.assertTrue(kpis.startswith(plain))
            self.assertIn("\n## KPIs\n| Kind | KPI | Device | Value | Unit | Band | Explanation |", kpis)
            if os.path.exists(CLI):
                out = subprocess.run([CLI, "report", "--summary", path], capture_output=True,
                                     text=True, check=True).stdout
                self.assertNotIn("## KPIs", out)
                out = subprocess.run([CLI, "report", "--summary", path, "--kpis"], capture_output=True,
                                     text=True, check=True).stdout
                self.assertIn("## KPIs", out)


class CopyGapContext(unittest.TestCase):
    """§4.10's copy label: the path is trimmed as Python's str.strip() trims
    (Unicode white space) and kept whole (a NUL included)."""

    def contexts(self, name, args=None):
        op = {"name": name, "ts": 5, "dur": 3}
        if args:
            op["args"] = args
        with TempDir() as td:
            d, _ = summary(td, ops_only([{"name": "fusion.1", "ts": 0, "dur": 2}, op]))
        return d["gap_region_contexts"]

    def test_unicode_white_space_is_trimmed(self):
        for ws in ("\u00a0", "\u001c", "\u001f", "\u0085", "\u2000", "\u200a", "\u3000", " ", "\t"):
            with self.subTest(ws=ws):
                self.assertEqual(self.contexts("copy%s.1" % ws), [
                    {"avg_gap_duration": 3.0, "count": 1, "op_name": "copy%s.1" % ws,
                     "region_path": "copy", "total_gap_duration": 3.0}])
        self.assertEqual([c["region_path"] for c in self.contexts("copy\u3000x\u3000.1")],
                         ["copy(copy\u3000x)"])

    def test_nul_is_kept(self):
        self.assertEqual(self.contexts("copy.1", {"tf_op": "a\x00b"}), [
            {"avg_gap_duration": 3.0, "count": 1, "op_name": "copy.1",
             "region_path": "copy(a\x00b)", "total_gap_duration": 3.0}])
        self.assertEqual([c["region_path"] for c in self.contexts("copy\x00-start")],
                         ["copy(copy\x00-start)"])


if __name__ == "__main__":
    unittest.main()
