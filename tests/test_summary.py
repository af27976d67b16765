"""profile_summary.v1 documents and reports against summary-v1-spec.md §7
(F1-F10, F13) and the serialization rules of §3.1."""
import json
import math
import os
import random
import sqlite3
import unittest

import fixtures
from util import connect, TempDir


def dumps(obj):
    return json.dumps(obj, indent=2, sort_keys=True)


def rows_of(db, sql, *args):
    return [tuple(r) for r in db.execute(sql, args).fetchall()]


class Base(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.db = connect(os.path.join(self.td.path, "h.db"))

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def summary(self, trace, label, opts=None, export_opts=None):
        p = self.td.write(label + ".json.gz", json.dumps(trace), gz=True)
        self.db.execute("SELECT profsum_import(?, ?, ?)", (p, label, json.dumps(opts or {})))
        if export_opts is None:
            text = self.db.execute("SELECT profsum_summary_json(?)", (label,)).fetchone()[0]
        else:
            text = self.db.execute("SELECT profsum_summary_json(?, ?)", (label, json.dumps(export_opts))).fetchone()[0]
        # Byte-exact serialization: what Python's json.dumps writes for the same value.
        self.assertEqual(text, dumps(json.loads(text)))
        return json.loads(text), p


F1_KEYS = ["communication_ops", "gap_before_ops", "gap_region_contexts", "generated_at_utc",
           "hierarchical_regions", "hot_ops", "optimization_candidates", "run_metadata", "schema_version",
           "semantic_families", "source_format", "source_path", "step_time", "time_breakdown",
           "trace_overview", "trace_provenance"]


class F1(Base):
    def test_f1_before(self):
        d, p = self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "before",
                            {"warmup_steps": 2, "hot_op_limit": 10})
        self.assertEqual(sorted(d), F1_KEYS)
        self.assertEqual(d["schema_version"], "profile_summary.v1")
        self.assertEqual(d["source_format"], "perfetto_trace_json")
        self.assertEqual(d["source_path"], p)
        self.assertEqual(d["run_metadata"], dict.fromkeys(["run_path", "run_id", "artifact_ref", "artifact_name",
                         "hardware_type", "mesh_or_topology", "git_sha", "config_hash", "num_devices",
                         "num_hosts"]))
        ov = d["trace_overview"]
        self.assertEqual(ov, {"display_time_unit": "ns", "num_events_total": 18, "num_complete_events": 13,
                              "num_processes": 2, "num_threads": 3, "profile_start_ts": 0.0,
                              "profile_end_ts": 5150.0, "duration_basis": "exclusive_duration_per_track",
                              "suspected_truncation": False, "quality_warnings": []})
        st = d["step_time"]
        self.assertEqual(st["warmup_steps_ignored"], 2)
        self.assertEqual(st["all_steps"], {"count": 6, "mean": 125.0, "median": 125.0, "p90": 145.0,
                                           "min": 100.0, "max": 150.0})
        self.assertEqual(st["steady_state_steps"], {"count": 4, "mean": 135.0, "median": 135.0, "p90": 147.0,
                                                    "min": 120.0, "max": 150.0})
        self.assertEqual(st["classes"], [{"name": "typical", "count": 4, "fraction_of_steady": 1.0,
                         "duration_stats": st["steady_state_steps"], "representative_step": 3,
                         "representative_duration": 130.0, "periodicity": None}])
        tb = d["time_breakdown"]
        self.assertEqual(tb["duration_basis"], "exclusive_duration_per_track")
        self.assertEqual(tb["total_duration"], 310.0)
        self.assertEqual(tb["compute"], {"total_duration": 120.0, "share_of_total": 0.3870967741935484})
        self.assertEqual(tb["communication"], {"total_duration": 60.0, "share_of_total": 0.1935483870967742})
        self.assertEqual(tb["host"], {"total_duration": 80.0, "share_of_total": 0.25806451612903225})
        self.assertEqual(tb["stall"], {"total_duration": 50.0, "share_of_total": 0.16129032258064516})
        self.assertEqual(tb["other"], {"total_duration": 0.0, "share_of_total": 0.0})
        self.assertEqual([(h["name"], h["canonical_name"], h["category"], h["count"], h["total_duration"],
                           h["exclusive_duration"]) for h in d["hot_ops"]],
                         [("fusion.1", "fusion", "compute", 1, 100.0, 60.0),
                          ("softmax", "softmax", "compute", 1, 60.0, 60.0),
                          ("all-reduce.1", "all-reduce", "communication", 1, 40.0, 40.0),
                          ("dependency-wait", "dependency-wait", "stall", 1, 30.0, 30.0),
                          ("psum.1", "psum", "communication", 1, 20.0, 20.0)])
        self.assertEqual(d["communication_ops"], [{"collective": "all-reduce", "count": 2, "total_duration": 60.0,
                                                   "avg_duration": 30.0}])
        self.assertEqual([(g["name"], g["total_gap_duration"], g["payload_op"], g["marker_op"])
                          for g in d["gap_before_ops"]],
                         [("softmax", 20.0, "softmax", "softmax"), ("dependency-wait", 10.0, "dependency-wait",
                          "dependency-wait"), ("psum.1", 10.0, "psum.1", "psum.1")])
        fam = d["semantic_families"]
        self.assertEqual([(f["family"], f["count"], f["total_duration"], f["exclusive_duration"],
                           f["share_of_total"], f["example_op"]) for f in fam],
                         [("other", 4, 210.0, 170.0, 0.5483870967741935, "fusion.1"),
                          ("collective", 1, 40.0, 40.0, 0.12903225806451613, "all-reduce.1")])
        self.assertIsNone(fam[0]["flop_proxy_total"])
        cands = d["optimization_candidates"]
        self.assertEqual([c["candidate_id"] for c in cands], ["communication-heavy", "single-hot-op", "pre-op-gap"])
        self.assertEqual(cands[0]["rationale"], "Communication accounts for 19.4% of exclusive profiled duration.")
        self.assertEqual(cands[0]["evidence"], ["Communication share: 19.4%", "Top collective: all-reduce"])
        self.assertEqual(cands[1]["evidence"], ["Top op: fusion.1", "Top op exclusive duration: 60.000",
                                                "Top op share: 19.4%"])
        self.assertEqual(cands[2]["evidence"], ["Payload op with largest pre-gap: softmax",
                                                "Observed first op after gap (marker): softmax",
                                                "Total pre-gap: 20.000", "Max pre-gap: 20.000", "Occurrences: 1"])
        self.assertEqual(cands[2]["rationale"], "Op 'softmax' accumulates significant pre-op idle gap "
                                                "(6.5% of total profiled exclusive duration).")
        self.assertEqual(cands[0]["suggestions"][0], "Evaluate sharding/layout choices to reduce collective volume.")

    def test_f1_global_mode(self):
        d, _ = self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "g",
                            {"warmup_steps": 2, "hot_op_limit": 10, "breakdown_mode": "exclusive_global"})
        tb = d["time_breakdown"]
        self.assertEqual(tb["duration_basis"], "exclusive_duration_global_timeline")
        self.assertEqual(d["trace_overview"]["duration_basis"], "exclusive_duration_per_track")
        self.assertEqual((tb["total_duration"], tb["compute"]["total_duration"], tb["communication"]["total_duration"],
                          tb["stall"]["total_duration"], tb["host"]["total_duration"]), (180.0, 120.0, 40.0, 20.0, 0.0))
        fam = {f["family"]: f["share_of_total"] for f in d["semantic_families"]}
        self.assertEqual(fam, {"other": 0.8095238095238095, "collective": 0.19047619047619047})

    def test_step_means_are_the_references_doubles(self):
        """§4.3: a step's duration is the mean of its events' durations, summed
        as the reference sums them (doubles, in processing order): three
        devices' 0.2 µs steps make 0.20000000000000004, and the representative
        step (closest to the median) follows those doubles. Exact means (0.2
        and 0.1, median 0.15) picked step 0; the reference's pick step 1."""
        ev = []
        for dev in range(3):
            ev.append({"ph": "M", "pid": dev + 1, "name": "process_name", "args": {"name": "/device:TPU:%d" % dev}})
            ev.append({"ph": "M", "pid": dev + 1, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}})
            ev.append({"ph": "X", "pid": dev + 1, "tid": 1, "name": "0", "ts": 0, "dur": 0.2})
            ev.append({"ph": "X", "pid": dev + 1, "tid": 1, "name": "1", "ts": 1, "dur": 0.1})
        d, _ = self.summary(fixtures.doc(ev), "m3", {"warmup_steps": 0})
        st = d["step_time"]
        m0, m1 = (0.2 + 0.2 + 0.2) / 3, (0.1 + 0.1 + 0.1) / 3
        self.assertEqual((st["all_steps"]["max"], st["all_steps"]["min"]), (m0, m1))
        self.assertEqual(st["all_steps"]["median"], m1 * 0.5 + m0 * 0.5)     # q(0.5), §4.3.6
        self.assertEqual(st["all_steps"]["median"], 0.15000000000000002)
        cls = st["classes"][0]
        self.assertEqual((cls["name"], cls["representative_step"], cls["representative_duration"]),
                         ("typical", 1, m1))
        self.assertEqual(rows_of(self.db, "SELECT step, duration, n_events FROM profsum_steps WHERE label='m3'"),
                         [(0, m0, 3), (1, m1, 3)])
        # the GPU fallback (host `train` events with args.step_num) the same way
        ev = [{"ph": "M", "pid": 9, "name": "process_name", "args": {"name": "/host:CPU"}}]
        for h in range(3):
            ev.append({"ph": "X", "pid": 9, "tid": h + 1, "name": "train", "ts": 10 * h, "dur": 0.2,
                       "args": {"step_num": 0}})
            ev.append({"ph": "X", "pid": 9, "tid": h + 1, "name": "train", "ts": 10 * h + 5, "dur": 0.1,
                       "args": {"step_num": 1}})
        d, _ = self.summary(fixtures.doc(ev), "g3", {"warmup_steps": 0})
        self.assertEqual((d["step_time"]["all_steps"]["max"], d["step_time"]["all_steps"]["min"]), (m0, m1))
        self.assertEqual(d["step_time"]["classes"][0]["representative_step"], 1)

    def test_recompute_with_other_knobs(self):
        d, _ = self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "k", {"warmup_steps": 2},
                            export_opts={"warmup_steps": 0, "hot_op_limit": 2, "breakdown_mode": "exclusive_global"})
        self.assertEqual(d["step_time"]["steady_state_steps"]["count"], 6)
        self.assertEqual(len(d["hot_ops"]), 2)
        self.assertEqual(d["time_breakdown"]["total_duration"], 180.0)

    def test_f1_after(self):
        d, _ = self.summary(fixtures.f1([90, 100, 110, 120, 130, 140], 40), "after", {"warmup_steps": 2})
        self.assertEqual(d["time_breakdown"]["total_duration"], 290.0)
        self.assertEqual(d["step_time"]["steady_state_steps"]["median"], 125.0)
        self.assertEqual(d["step_time"]["steady_state_steps"]["p90"], 137.0)
        self.assertEqual(d["gap_before_ops"][0]["name"], "dependency-wait")
        self.assertEqual(d["gap_before_ops"][0]["total_gap_duration"], 30.0)

    def test_report(self):
        self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "before", {"warmup_steps": 2})
        md = self.db.execute("SELECT profsum_report_md('before', 2)").fetchone()[0]
        for h in ["# Profile Report (profile_summary.v1)", "## Trace Overview",
                  "## Time Breakdown (`exclusive_duration_per_track`)", "## Pre-Op Gaps",
                  "## Gap Context (Region-First)", "## Hierarchical Regions", "Inclusive %", "Exclusive %",
                  "## Optimization Candidates"]:
            self.assertIn(h, md)
        self.assertTrue(md.endswith("\n") and not md.endswith("\n\n"))
        self.assertIn("| Compute | 120.000 | 38.71% |", md)
        self.assertIn("| `fusion.1` | `fusion` | compute | 1 | 60.000 | 100.000 | `n/a` | `n/a` |", md)
        self.assertIn("| `fusion` | 1 | 1 | 60.000 | 100.00% | 60.000 | 100.00% |", md)
        self.assertIn("### Communication appears dominant\nCommunication accounts for 19.4% of exclusive "
                      "profiled duration.\n\nEvidence:\n- Communication share: 19.4%", md)
        # top_k 2 → two region rows, two op rows
        self.assertEqual(md.count("| `psum"), 0)

    def test_report_step_class_numbers_of_a_summary_file(self):
        # a v1 file may hold 2.0 for a step number: printed as Python does,
        # "n/a" only for null (tools-spec §5.6)
        d, _ = self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "s", {"warmup_steps": 2})
        cls = {"name": "typical", "count": 6, "fraction_of_steady": 1.0,
               "duration_stats": {"count": 6, "mean": 125.0, "median": 125.0, "p90": 145.0,
                                  "min": 100.0, "max": 150.0},
               "representative_step": 4.0, "representative_duration": 120.0, "periodicity": None}
        d["step_time"]["classes"] = [cls]
        with TempDir() as td:
            p = td.write("v1.json", json.dumps(d))
            self.db.execute("SELECT profsum_import(?, 'v1')", (p,))
        md = self.db.execute("SELECT profsum_report_md('v1')").fetchone()[0]
        self.assertIn("| `typical` | 6 | 100.00% | 125.000 | 145.000 | 4.0 | n/a |", md)


class Fixtures(Base):
    def test_f2_candidates(self):
        d, _ = self.summary(fixtures.f2(), "f2", {"warmup_steps": 0, "hot_op_limit": 20,
                                                  "breakdown_mode": "exclusive_global"})
        tb = d["time_breakdown"]
        self.assertEqual((tb["total_duration"], tb["compute"]["total_duration"], tb["communication"]["total_duration"],
                          tb["host"]["total_duration"], tb["stall"]["total_duration"]), (100.0, 40.0, 10.0, 0.0, 50.0))
        c = d["optimization_candidates"]
        self.assertEqual([x["candidate_id"] for x in c], ["stall-heavy", "single-hot-op", "pre-op-gap"])
        self.assertEqual(c[0]["evidence"], ["Stall share: 50.0%"])
        self.assertEqual(c[1]["evidence"][0], "Top op: fusion.1")
        self.assertEqual(c[1]["evidence"][2], "Top op share: 20.0%")
        self.assertEqual(c[2]["evidence"][0], "Payload op with largest pre-gap: fusion.2")
        self.assertIn("(40.0% of total", c[2]["rationale"])

    def test_f3_regions(self):
        d, _ = self.summary(fixtures.f3(), "f3", {"warmup_steps": 0, "hot_op_limit": 20})
        paths = [r["path"] for r in d["hierarchical_regions"]]
        self.assertIn("train_step", paths)
        self.assertIn("_train_step", paths)
        self.assertIn("_train_step=>apply_rotary_embedding=>linear_softmax_cross_entropy_loss_bwd", paths)
        self.assertNotIn("_train_step=>apply_rotary_embedding", paths)
        self.assertEqual(d["gap_before_ops"][0]["name"],
                         "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1")

    def test_f7_evidence_over_100_percent(self):
        d, _ = self.summary(fixtures.f7(), "f7", {"warmup_steps": 0})
        c = [x for x in d["optimization_candidates"] if x["candidate_id"] == "pre-op-gap"][0]
        self.assertIn("(290.3% of total", c["rationale"])
        self.assertEqual(c["evidence"][1], "Observed first op after gap (marker): iota.296")

    def test_f9_no_dominant(self):
        d, _ = self.summary(fixtures.f9(), "f9", {"warmup_steps": 1, "hot_op_limit": 10})
        self.assertEqual(d["step_time"]["all_steps"]["count"], 3)
        self.assertEqual(d["step_time"]["steady_state_steps"]["count"], 2)
        self.assertEqual(d["step_time"]["steady_state_steps"]["median"], 375.0)
        self.assertEqual([c["collective"] for c in d["communication_ops"]], ["all-gather", "reduce-scatter"])
        self.assertEqual([c["candidate_id"] for c in d["optimization_candidates"]], ["no-dominant-bottleneck"])
        fam = [f["family"] for f in d["semantic_families"]]
        self.assertIn("collective", fam)

    def test_f10_numbers(self):
        d, _ = self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60, psum=False, threading=False),
                            "f10", {"warmup_steps": 2})
        self.assertEqual(d["time_breakdown"]["total_duration"], 270.0)

    def test_empty_trace(self):
        d, _ = self.summary({"traceEvents": []}, "empty")
        self.assertEqual(d["trace_overview"]["num_complete_events"], 0)
        self.assertIsNone(d["trace_overview"]["profile_start_ts"])
        self.assertEqual(d["step_time"]["all_steps"], {"count": 0, "mean": None, "median": None, "p90": None,
                                                       "min": None, "max": None})
        self.assertEqual(d["step_time"]["classes"], [])
        self.assertEqual(d["time_breakdown"]["total_duration"], 0.0)
        for k in ["hot_ops", "semantic_families", "communication_ops", "gap_before_ops", "hierarchical_regions",
                  "gap_region_contexts"]:
            self.assertEqual(d[k], [])
        c = d["optimization_candidates"]
        self.assertEqual(len(c), 1)
        self.assertEqual(c[0]["evidence"], ["Compute: 0.0%", "Communication: 0.0%", "Host: 0.0%", "Stall: 0.0%"])

    def test_host_only_trace(self):
        ev = [{"ph": "M", "pid": 7, "name": "process_name", "args": {"name": "/host:CPU"}},
              {"ph": "M", "pid": 7, "tid": 1, "name": "thread_name", "args": {"name": "python"}},
              {"ph": "X", "pid": 7, "tid": 1, "name": "train", "ts": 0, "dur": 100, "args": {"step_num": 0}},
              {"ph": "X", "pid": 7, "tid": 1, "name": "input_pipeline", "ts": 10, "dur": 30},
              {"ph": "X", "pid": 7, "tid": 1, "name": "train", "ts": 100, "dur": 120, "args": {"step_num": 1}}]
        d, _ = self.summary({"traceEvents": ev}, "host", {"warmup_steps": 0})
        tb = d["time_breakdown"]
        self.assertEqual((tb["total_duration"], tb["host"]["total_duration"], tb["compute"]["total_duration"]),
                         (220.0, 220.0, 0.0))
        self.assertEqual(d["hot_ops"], [])
        self.assertEqual(d["step_time"]["all_steps"]["count"], 2)
        self.assertEqual([c["candidate_id"] for c in d["optimization_candidates"]], ["no-dominant-bottleneck"])

    def test_suspected_truncation(self):
        import gzip
        one = b'{"ph":"X","pid":1,"tid":2,"name":"a","ts":%d,"dur":1},'
        body = b"".join(one % i for i in range(1000000))[:-1]
        data = b'{"traceEvents":[' + body + b']}'
        p = self.td.write("cap.json.gz", gzip.compress(data, 1))
        self.db.execute("SELECT profsum_import(?, 'cap')", (p,))
        d = json.loads(self.db.execute("SELECT profsum_summary_json('cap')").fetchone()[0])
        ov = d["trace_overview"]
        self.assertTrue(ov["suspected_truncation"])
        self.assertEqual(ov["num_complete_events"], 1000000)
        self.assertEqual(ov["quality_warnings"], ["Trace contains exactly 1,000,000 complete events; this often "
                                                  "indicates export truncation at a collector cap."])

    def test_step_classes_light_heavy(self):
        steps = [100, 100, 300, 100, 100, 300, 100, 100, 300, 100, 100, 300]
        d, _ = self.summary(fixtures.f1(steps, 60), "lh", {"warmup_steps": 0})
        cl = d["step_time"]["classes"]
        self.assertEqual([c["name"] for c in cl], ["light", "heavy"])
        self.assertEqual(cl[1]["count"], 4)
        self.assertEqual(cl[1]["periodicity"], 3)
        self.assertIsNone(cl[0]["periodicity"])
        self.assertEqual(cl[0]["fraction_of_steady"], 8 / 12)

    def test_v1_file_import(self):
        d, _ = self.summary(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "orig", {"warmup_steps": 2})
        text = dumps(d)
        p = self.td.write("made-elsewhere.json", text)
        self.db.execute("SELECT profsum_import(?, 'v1')", (p,))
        self.assertEqual(self.db.execute("SELECT profsum_summary_json('v1')").fetchone()[0], text)
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_summary_json('v1', '{\"hot_op_limit\": 3}')").fetchone()
        self.assertIn("imported from a profile_summary.v1 file", str(cm.exception))
        md = self.db.execute("SELECT profsum_report_md('v1')").fetchone()[0]
        self.assertIn("## Top Ops", md)
        hot = self.db.execute("SELECT name FROM profsum_hot_ops WHERE label='v1' ORDER BY rank").fetchall()
        self.assertEqual(hot[0][0], "fusion.1")

    def test_hot_ops_first_of_many(self):
        """hot_ops are the ops first by exclusive time, then total time, then
        name (bytewise), whatever the order the ops are stored in: ties on
        both sums at the limit, names whose order differs from their times'
        and a name that sorts before its ASCII neighbours (UTF-8)."""
        rng = random.Random(17)
        evs = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:TPU:0"}},
               {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}}]
        spec = {}                         # name -> [count, duration µs]
        for i in range(300):
            name = rng.choice(["z%03d" % i, "a%03d" % (299 - i), "\u00e9%d" % i, "m%d" % (i % 7)])
            spec.setdefault(name, [0, rng.choice([1, 2, 2, 3, 5])])[0] += 1
        names = list(spec)
        rng.shuffle(names)
        ts = 0
        for name in names:
            count, dur = spec[name]
            for _ in range(count):
                evs.append({"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur})
                ts += dur + 1
        want = sorted(spec, key=lambda n: (-spec[n][0] * spec[n][1], n.encode()))
        for limit in (0, 1, 7, 40, len(spec), len(spec) + 5):
            d, _ = self.summary({"traceEvents": evs}, "many%d" % limit,
                                {"warmup_steps": 0, "hot_op_limit": limit})
            got = [(h["name"], h["count"], h["exclusive_duration"]) for h in d["hot_ops"]]
            self.assertEqual(got, [(n, spec[n][0], float(spec[n][0] * spec[n][1])) for n in want[:limit]])

    def test_errors(self):
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_summary_json('nope')").fetchone()
        self.assertIn("profsum_summary_json: no trace with label 'nope'", str(cm.exception))
        self.summary(fixtures.f2(), "x")
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_summary_json('x', '{\"warmup_steps\": -1}')").fetchone()
        self.assertIn("warmup_steps must be an integer from 0 to 2147483647", str(cm.exception))
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_summary_json(99)").fetchone()
        self.assertIn("no trace with id 99", str(cm.exception))
        # a misspelled knob is an error, not the defaults
        for opts, want in [('{"hot_op_limt": 5}', "profsum_summary_json: options_json: unknown key 'hot_op_limt' "
                                                  "(known: warmup_steps, hot_op_limit, breakdown_mode, schema)"),
                           ('{"schema": 1}', "profsum_summary_json: options_json: schema must be the name of an "
                                             "attached database (text)"),
                           ('[5]', "profsum_summary_json: options_json must be a JSON object")]:
            with self.assertRaises(sqlite3.Error) as cm:
                self.db.execute("SELECT profsum_summary_json('x', ?)", (opts,)).fetchone()
            self.assertIn(want, str(cm.exception))
        doc = json.loads(self.db.execute("SELECT profsum_summary_json('x', '{\"schema\": \"main\", "
                                         "\"hot_op_limit\": 1}')").fetchone()[0])
        self.assertLessEqual(len(doc["hot_ops"]), 1)


class Serialization(unittest.TestCase):
    """profsum_json_pretty == Python json.dumps(indent=2, sort_keys=True)."""

    def test_random_documents(self):
        rnd = random.Random(7)
        db = connect()

        def value(depth):
            k = rnd.randrange(9 if depth < 4 else 6)
            if k == 0:
                return None
            if k == 1:
                return rnd.random() < 0.5
            if k == 2:
                return rnd.randrange(-10 ** 12, 10 ** 12)
            if k == 3:
                return rnd.choice([0.0, -0.0, 1e16, 1e-5, 1e-4, 0.1, 1 / 3, 1e22, 5e-324, 1.7976931348623157e308,
                                   123456789.0, 310.0, 0.1935483870967742, rnd.uniform(-1e6, 1e6),
                                   math.ldexp(rnd.random(), rnd.randrange(-60, 60))])
            if k in (4, 5):
                return "".join(rnd.choice(["a", "Z", "\"", "\\", "\n", "\t", "\x01", "é", "\u20ac", "\U0001F600",
                                           "/", " ", "\x7f"]) for _ in range(rnd.randrange(6)))
            if k == 6:
                return [value(depth + 1) for _ in range(rnd.randrange(4))]
            return {"".join(rnd.choice("abcXY_é") for _ in range(rnd.randrange(1, 4))): value(depth + 1)
                    for _ in range(rnd.randrange(4))}

        for _ in range(400):
            v = value(0)
            text = json.dumps(v)
            got = db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0]
            self.assertEqual(got, dumps(v))

    def test_integers_and_whole_reals_match_python(self):
        # Integers are written by jsontree.c's own formatter (not printf):
        # every magnitude, both signs, the ends of int64 (which an earlier
        # parser took for an overflow and printed as 9.223372036854776e+18),
        # and whole-number reals ("123.0") up to 1e16, where repr switches
        # to the exponent form.  Beyond int64 the digits are kept, as
        # Python's int keeps them.
        rnd = random.Random(17)
        vals = [0, -1, 1, 9, 10, -10, 2 ** 63 - 1, -2 ** 63, 2 ** 63 - 2, -2 ** 63 + 1,
                0.0, -0.0, 1.0, -1.0, 1e15, -1e15, 9999999999999998.0, 1e16, -1e16, 2.0 ** 53]
        for _ in range(3000):
            vals.append(rnd.randrange(-2 ** 63, 2 ** 63))
            vals.append(rnd.randrange(-10 ** rnd.randrange(1, 19), 10 ** rnd.randrange(1, 19)))
            vals.append(float(rnd.randrange(-10 ** 16 + 1, 10 ** 16)))
        db = connect()
        got = db.execute("SELECT profsum_json_pretty(?)", (json.dumps(vals),)).fetchone()[0]
        self.assertEqual(got, dumps(vals))
        got = db.execute("SELECT profsum_json_pretty('[9223372036854775808, -9223372036854775809]')").fetchone()[0]
        self.assertEqual(got, dumps([9223372036854775808, -9223372036854775809]))

    def test_string_escapes_match_python(self):
        # Every ASCII character (the table of bytes written as they are, and
        # the escaped ones), and strings mixing BMP and astral characters.
        rnd = random.Random(19)
        vals = ["".join(chr(c) for c in range(128))]
        for _ in range(3000):
            vals.append("".join(chr(rnd.choice([rnd.randrange(0, 128), rnd.randrange(128, 0xD800),
                                                rnd.randrange(0xE000, 0x110000)]))
                                for _ in range(rnd.randrange(0, 30))))
        doc = {"k%d" % i: v for i, v in enumerate(vals)}
        db = connect()
        got = db.execute("SELECT profsum_json_pretty(?)", (json.dumps(doc),)).fetchone()[0]
        self.assertEqual(got, dumps(doc))

    def test_large_objects_and_long_text(self):
        # Objects around the size where jDump stops ordering members on the
        # stack (32) and starts a heap copy, keys that share long prefixes,
        # and a text far beyond the output buffer's first 4 KiB (it grows
        # by doubling: every size up to 1 MB crossed once).
        rnd = random.Random(13)
        db = connect()
        for n in (1, 2, 31, 32, 33, 64, 500):
            keys = ["k%03d" % i for i in range(n)] + ["k%03d_" % i for i in range(0, n, 3)]
            rnd.shuffle(keys)
            v = {k: [rnd.random(), k * rnd.randrange(1, 40), {"z": None, "a": [1, 2.5]}] for k in keys}
            got = db.execute("SELECT profsum_json_pretty(?)", (json.dumps(v),)).fetchone()[0]
            self.assertEqual(got, dumps(v))
        big = {"rows": [{"name": "op%d" % i, "x": i / 7, "s": "\u20ac" * (i % 5)} for i in range(12000)]}
        got = db.execute("SELECT profsum_json_pretty(?)", (json.dumps(big),)).fetchone()[0]
        self.assertGreater(len(got), 1 << 20)
        self.assertEqual(got, dumps(big))

    def test_deep_nesting_in_a_small_thread_stack(self):
        # jParse accepts 2,000 levels; writing them back recurses once per
        # level, so the writer's frame decides how much stack that takes.
        # A first version of the buffer-based writer kept a 32-slot
        # ordering array in that frame (384 bytes a level: 2,000 levels did
        # not fit in 512 KiB and the process crashed); the members' order
        # now lives on the heap.  In a child process, so that a crash is a
        # failure here and not the end of the test run.
        import subprocess
        import sys
        from util import SO
        script = r"""
import sqlite3, sys, threading
so, kb, d = sys.argv[1], int(sys.argv[2]), 1999
# json.dumps(indent=2) of the two documents, built without recursion
arrays = "\n".join([" " * (2 * i) + "[" for i in range(d)] + [" " * (2 * d) + "1"] +
                   [" " * (2 * i) + "]" for i in reversed(range(d))])
objects = "\n".join(["{"] + [" " * (2 * i) + '"a": {' for i in range(1, d)] +
                    [" " * (2 * d) + '"a": 1'] + [" " * (2 * i) + "}" for i in reversed(range(d))])
out = []
def run():
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(so)
    for text, want in (("[" * d + "1" + "]" * d, arrays), ('{"a": ' * d + "1" + "}" * d, objects)):
        out.append(db.execute("SELECT profsum_json_pretty(?)", (text,)).fetchone()[0] == want)
threading.stack_size(kb * 1024)
t = threading.Thread(target=run)
t.start()
t.join()
print(out)
"""
        # AddressSanitizer's frames are several times larger (redzones):
        # there the depth is checked, not the stack per level
        sanitized = "libasan" in os.environ.get("LD_PRELOAD", "") or "/asan/" in SO
        p = subprocess.run([sys.executable, "-c", script, SO, str(8192 if sanitized else 512)],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "[True, True]"), p.stderr[-2000:])

    def test_float_repr_matches_python(self):
        # The shortest round-trip digits, tried from 15 digits up: values of
        # every length from 1 to 17 significant digits, both exponent forms.
        rnd = random.Random(11)
        vals = [0.3, 0.1 + 0.2, 1.5, 12.25, 1e15, 1e16, 123456789012345.0, 1234567890123456.0,
                2.0 ** 53, 2.0 ** 53 + 2, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                9.999999999999999e22, 0.1, 1 / 3, 2 / 3, 1e-4, 9.99e-5, 0.000123]
        for _ in range(6000):
            digits = rnd.randrange(1, 18)
            mant = rnd.randrange(10 ** (digits - 1), 10 ** digits)
            vals.append(float("%de%d" % (mant, rnd.randrange(-30, 30))))
            vals.append(math.ldexp(rnd.random(), rnd.randrange(-1070, 1020)))
            vals.append(-rnd.uniform(0, 1e6))
        db = connect()
        got = db.execute("SELECT profsum_json_pretty(?)", (json.dumps(vals),)).fetchone()[0]
        self.assertEqual(got, dumps(vals))

    def test_float_repr_exact_15_digit_path(self):
        # Values from 1e-13 to 1e15 take an integer-only path when at most 15
        # digits read back (jsontree.c shortDigits15): decimals of 1 to 15
        # digits over that whole range, their neighbouring doubles (which
        # need 16 or 17 digits), powers of two (the next double down is half
        # an ulp away) and their neighbours, and values that round up to the
        # next power of ten.
        rnd = random.Random(12)
        vals = []
        for _ in range(8000):
            digits = rnd.randrange(1, 16)
            mant = rnd.randrange(10 ** (digits - 1), 10 ** digits)
            v = float("%de%d" % (mant, rnd.randrange(-13 - digits, 16 - digits)))
            vals += [v, math.nextafter(v, math.inf), math.nextafter(v, -math.inf), -v]
        for e in range(-1074, 1024):    # every power of two, subnormals included
            p2 = math.ldexp(1.0, e)
            vals += [p2, math.nextafter(p2, 0), math.nextafter(p2, math.inf),
                     math.nextafter(math.nextafter(p2, 0), 0)]
        for e in range(-14, 16):
            for d in (9.99999999999999, 9.999999999999999, 9.9999999999999995, 1.00000000000001):
                vals.append(float("%re%d" % (d, e)))
        for _ in range(4000):
            vals.append(10 ** rnd.uniform(-13.5, 15.5))
        db = connect()
        got = db.execute("SELECT profsum_json_pretty(?)", (json.dumps(vals),)).fetchone()[0]
        self.assertEqual(got, dumps(vals))


if __name__ == "__main__":
    unittest.main()
