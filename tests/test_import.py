"""profsum_import and the stage-A aggregates against the derived values of
summary-v1-spec.md §7 (F1-F9), plus provenance, labels, options, atomicity."""
import gzip
import hashlib
import json
import re
import os
import sqlite3
import threading
import unittest

import fixtures
from util import connect, progress_calls, run_interrupted_at, TempDir, ROOT


def rows(db, sql, *args):
    return db.execute(sql, args).fetchall()


class Base(unittest.TestCase):
    def setUp(self):
        self.td = TempDir()
        self.dbpath = os.path.join(self.td.path, "h.db")
        self.db = connect(self.dbpath)

    def tearDown(self):
        self.db.close()
        self.td.__exit__()

    def imp(self, trace, label, opts=None, name=None):
        p = self.td.write(name or (label + ".json.gz"), json.dumps(trace), gz=True)
        args = (p, label) if opts is None else (p, label, json.dumps(opts))
        tid = self.db.execute("SELECT profsum_import(%s)" % ",".join("?" * len(args)), args).fetchone()[0]
        return tid, p

    def breakdown(self, tid, mode="exclusive_per_track"):
        return dict(rows(self.db, "SELECT category, duration FROM profsum_agg_breakdown WHERE trace_id=? AND mode=?",
                         tid, mode))

    def table(self, tid, table, cols, order):
        return rows(self.db, "SELECT %s FROM %s WHERE trace_id=? ORDER BY %s" % (cols, table, order), tid)


class F1(Base):
    def test_f1_before(self):
        tid, p = self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60), "before",
                          {"warmup_steps": 2, "hot_op_limit": 10})
        t = rows(self.db, "SELECT label, source_path, trace_path, source_format, sha256, size, num_events_total, "
                          "num_complete_events, num_processes, num_threads, profile_start_ts, profile_end_ts, "
                          "display_time_unit, suspected_truncation, quality_warnings, options FROM profsum_trace "
                          "WHERE trace_id=?", tid)[0]
        data = open(p, "rb").read()
        self.assertEqual(t[:6], ("before", p, p, "perfetto_trace_json", hashlib.sha256(data).hexdigest(), len(data)))
        self.assertEqual(t[6:15], (18, 13, 2, 3, 0.0, 5150.0, "ns", 0, "[]"))
        self.assertEqual(json.loads(t[15]), {"breakdown_mode": "exclusive_per_track", "hot_op_limit": 10,
                                             "series": None, "store_events": False, "warmup_steps": 2})
        self.assertEqual(self.table(tid, "profsum_agg_step", "step, duration", "step"),
                         [(0, 100.0), (1, 110.0), (2, 120.0), (3, 130.0), (4, 140.0), (5, 150.0)])
        self.assertEqual(self.breakdown(tid), {"total": 310.0, "compute": 120.0, "communication": 60.0,
                                               "host": 80.0, "stall": 50.0, "other": 0.0})
        self.assertEqual(self.breakdown(tid, "exclusive_global"), {"total": 180.0, "compute": 120.0,
                         "communication": 40.0, "stall": 20.0, "host": 0.0, "other": 0.0})
        self.assertEqual(self.table(tid, "profsum_agg_op", "name, count, total_duration, exclusive_duration, "
                                    "shape_signature, source_file, tf_op_path, flop_proxy_per_invocation",
                                    "exclusive_duration DESC, total_duration DESC, name"),
                         [("fusion.1", 1, 100.0, 60.0, None, None, None, None),
                          ("softmax", 1, 60.0, 60.0, None, None, None, None),
                          ("all-reduce.1", 1, 40.0, 40.0, None, None, None, None),
                          ("dependency-wait", 1, 30.0, 30.0, None, None, None, None),
                          ("psum.1", 1, 20.0, 20.0, None, None, None, None)])
        self.assertEqual(self.table(tid, "profsum_agg_comm", "collective, count, total_duration", "collective"),
                         [("all-reduce", 2, 60.0)])
        self.assertEqual(self.table(tid, "profsum_agg_gap", "name, marker_op, count, total_gap_duration, "
                                    "max_gap_duration", "total_gap_duration DESC, name"),
                         [("softmax", "softmax", 1, 20.0, 20.0), ("dependency-wait", "dependency-wait", 1, 10.0, 10.0),
                          ("psum.1", "psum.1", 1, 10.0, 10.0)])
        self.assertEqual(self.table(tid, "profsum_agg_region", "path, depth, count, inclusive_duration, "
                                    "exclusive_duration", "inclusive_duration DESC, path"),
                         [("fusion", 1, 1, 60.0, 60.0), ("softmax", 1, 1, 60.0, 60.0),
                          ("all-reduce", 1, 1, 40.0, 40.0), ("dependency-wait", 1, 1, 30.0, 30.0),
                          ("psum", 1, 1, 20.0, 20.0)])
        self.assertEqual(self.table(tid, "profsum_agg_gap_context", "op_name, region_path, count, total_gap_duration",
                                    "total_gap_duration DESC, op_name"),
                         [("softmax", "softmax", 1, 20.0), ("dependency-wait", "dependency-wait", 1, 10.0),
                          ("psum.1", "psum", 1, 10.0)])

    def test_f1_after_and_f10(self):
        tid, _ = self.imp(fixtures.f1([90, 100, 110, 120, 130, 140], 40), "after")
        self.assertEqual(self.breakdown(tid)["total"], 290.0)
        self.assertEqual(self.breakdown(tid)["compute"], 100.0)
        gaps = self.table(tid, "profsum_agg_gap", "name, total_gap_duration", "total_gap_duration DESC, name")
        self.assertEqual(gaps[0], ("dependency-wait", 30.0))
        tid10, _ = self.imp(fixtures.f1([100, 110, 120, 130, 140, 150], 60, psum=False, threading=False), "f10")
        self.assertEqual(self.breakdown(tid10)["total"], 270.0)


class Fixtures(Base):
    def test_f2_global_and_per_track(self):
        tid, _ = self.imp(fixtures.f2(), "f2")
        self.assertEqual(self.breakdown(tid, "exclusive_global"),
                         {"total": 100.0, "compute": 40.0, "communication": 10.0, "host": 0.0,
                          "stall": 50.0, "other": 0.0})
        b = self.breakdown(tid)
        self.assertEqual((b["total"], b["host"], b["compute"], b["communication"]), (130.0, 80.0, 40.0, 10.0))
        self.assertEqual(self.table(tid, "profsum_agg_gap", "name, total_gap_duration", "total_gap_duration DESC"),
                         [("fusion.2", 40.0), ("all-reduce.1", 10.0)])

    def test_global_breakdown_random_tracks(self):
        """The global breakdown (summary-v1-spec §4.4) against unions worked
        out here by sorting, on random traces of 4 devices with two op
        tracks each (nested and touching events, collectives, events that
        the window of compute events clips), a Steps track the unions skip
        and a host track: the heap that merges the device tracks by start
        must give the same lengths."""
        import random

        def union(iv):
            total, cur = 0, None
            for lo, hi in sorted(iv):
                if cur is None or lo > cur[1]:
                    if cur is not None:
                        total += cur[1] - cur[0]
                    cur = [lo, hi]
                elif hi > cur[1]:
                    cur[1] = hi
            return total + (cur[1] - cur[0] if cur else 0)

        for seed in range(25):
            rnd = random.Random(seed)
            ev, comp, comm = [], [], []
            for dev in range(4):
                pid = 10 + dev
                ev.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "/device:TPU:%d" % dev}})
                for tid, tname in ((1, "Steps"), (2, "XLA Ops"), (3, "Framework Ops")):
                    ev.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": tname}})
                for s in range(3):
                    ev.append({"ph": "X", "pid": pid, "tid": 1, "name": str(s), "ts": s * 3000, "dur": 2900})
                for tid in (2, 3):
                    t = rnd.randrange(0, 400)
                    for k in range(rnd.randrange(1, 40)):
                        d = rnd.randrange(1, 200)
                        is_comm = rnd.random() < 0.3
                        name = ("all-reduce.%d" if is_comm else "fusion.%d") % rnd.randrange(5)
                        ev.append({"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": t, "dur": d})
                        (comm if is_comm else comp).append((t, t + d))
                        if d > 4 and rnd.random() < 0.3:    # a nested child
                            a = rnd.randrange(0, d - 2)
                            b = rnd.randrange(1, d - a)
                            ev.append({"ph": "X", "pid": pid, "tid": tid, "name": "fusion.9", "ts": t + a, "dur": b})
                            comp.append((t + a, t + a + b))
                        t += d + rnd.choice((0, 0, rnd.randrange(1, 150)))
            ev.append({"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}})
            ev.append({"ph": "X", "pid": 2, "tid": 1, "name": "fusion.1", "ts": 0, "dur": 99999})
            w_lo = min(lo for lo, hi in comp)
            w_hi = max(hi for lo, hi in comp)
            clip = lambda iv: [(max(lo, w_lo), min(hi, w_hi)) for lo, hi in iv if min(hi, w_hi) > max(lo, w_lo)]
            u_comm = union(clip(comm))
            u_all = union(clip(comm + comp))
            tid, _ = self.imp(fixtures.doc(ev), "g%d" % seed)
            self.assertEqual(self.breakdown(tid, "exclusive_global"),
                             {"total": float(w_hi - w_lo), "compute": float(u_all - u_comm),
                              "communication": float(u_comm), "host": 0.0,
                              "stall": float(w_hi - w_lo - u_all), "other": 0.0}, "seed %d" % seed)

    def test_gaps_are_the_references_doubles(self):
        """§4.8 at epoch-µs timestamps: a gap is the reference's E.ts − prev_end
        in doubles (a 0.5 µs gap reads 0.4999997615814209 or so at 1.7e9 µs),
        totals add those doubles, and the rows are ordered by them: payloads
        whose exact totals tie (1.5 µs each) come in the order of the
        reference's rounding, not by name."""
        from decimal import Decimal
        import random
        for seed in range(200):
            rnd = random.Random(seed)
            t = Decimal("1700001012.123456") + Decimal(rnd.randrange(10**6)) / 10**6
            evs, ref, prev_end = [], {}, None
            for k in range(7):
                name = "fusion.0" if k == 0 else ("a.1" if k % 2 else "b.1")
                dur = Decimal(rnd.randrange(1, 3 * 10**6)) / 10**6
                ts, d = float(t), float(dur)
                if prev_end is not None:
                    g = ts - prev_end                     # the reference's double gap
                    c, tot, mx = ref.get(name, (0, 0.0, 0.0))
                    ref[name] = (c + 1, tot + g, max(mx, g))
                evs.append({"name": name, "ts": ts, "dur": d})
                prev_end = ts + d
                t = t + dur + Decimal("0.5")             # exact gaps of 0.5 µs
            want = sorted(((n, c, tot, mx) for n, (c, tot, mx) in ref.items()),
                          key=lambda r: (-r[2], -r[3], r[0]))
            if want[0][0] == "b.1":
                break                                     # the reference's order is not the names'
        self.assertEqual(want[0][0], "b.1")
        self.assertNotEqual([r[2] for r in want], [1.5, 1.5])      # the exact totals tie
        tid, _ = self.imp(fixtures.ops_only(evs), "gapd")
        got = self.table(tid, "profsum_agg_gap", "name, count, total_gap_duration, max_gap_duration",
                         "total_gap_duration DESC, max_gap_duration DESC, name")
        self.assertEqual(got, [tuple(r) for r in want])
        ctx = self.table(tid, "profsum_agg_gap_context", "op_name, count, total_gap_duration",
                         "total_gap_duration DESC, op_name")
        self.assertEqual(ctx, [(r[0], r[1], r[2]) for r in want])

    def test_f3_regions_and_gaps(self):
        tid, _ = self.imp(fixtures.f3(), "f3")
        long_op = "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1"
        self.assertEqual(self.table(tid, "profsum_agg_region", "path, depth, count, inclusive_duration, "
                                    "exclusive_duration", "inclusive_duration DESC, exclusive_duration DESC, path"),
                         [("train_step", 1, 2, 60.0, 0.0),
                          ("train_step=>forward=>matmul", 3, 1, 50.0, 50.0),
                          ("_train_step=>apply_rotary_embedding=>linear_softmax_cross_entropy_loss_bwd", 3, 1, 20.0, 20.0),
                          ("_train_step", 1, 1, 20.0, 0.0),
                          ("train_step=>backward=>all-reduce.1", 3, 1, 10.0, 10.0)])
        self.assertEqual(self.table(tid, "profsum_agg_gap", "name, total_gap_duration, max_gap_duration",
                                    "total_gap_duration DESC"),
                         [(long_op, 50.0, 50.0), ("train_step=>backward=>all-reduce.1", 20.0, 20.0)])
        ctx = dict(((r[0], r[1]) for r in self.table(tid, "profsum_agg_gap_context", "op_name, region_path", "op_name")))
        self.assertEqual(ctx[long_op], "_train_step=>apply_rotary_embedding=>linear_softmax_cross_entropy_loss_bwd")
        self.assertEqual(ctx["train_step=>backward=>all-reduce.1"], "train_step=>backward=>all-reduce.1")
        b = self.breakdown(tid)
        self.assertEqual((b["total"], b["compute"], b["communication"]), (80.0, 70.0, 10.0))

    def test_f4_blacklist(self):
        tid, _ = self.imp(fixtures.f4(), "f4")
        self.assertEqual(self.table(tid, "profsum_agg_region", "path, inclusive_duration, exclusive_duration", "path"),
                         [("_train_step", 100.0, 0.0), ("_train_step=>apply_rotary_embedding", 100.0, 100.0)])

    def test_f5_dynamic_donated(self):
        tid, _ = self.imp(fixtures.f5(), "f5")
        self.assertEqual(self.table(tid, "profsum_agg_gap_context", "op_name, region_path, total_gap_duration", "op_name"),
                         [("copy.564", "copy(model.params.blocks[0].attn.w_k)", 100.0)])
        self.assertEqual(self.table(tid, "profsum_agg_region", "path, depth, count, inclusive_duration, "
                                    "exclusive_duration", "path"),
                         [("model.params.blocks[0].attn.w_k", 1, 2, 150.0, 150.0)])

    def test_f6_copy_label(self):
        tid, _ = self.imp(fixtures.f6(), "f6")
        self.assertEqual(self.table(tid, "profsum_agg_gap_context", "op_name, region_path, total_gap_duration", "op_name"),
                         [("copy.1", "copy", 20.0)])

    def test_f7_marker_payload(self):
        tid, _ = self.imp(fixtures.f7(), "f7")
        self.assertEqual(self.table(tid, "profsum_agg_gap", "name, marker_op, count, total_gap_duration", "name"),
                         [("dot.1", "iota.296", 1, 90.0)])
        self.assertEqual(self.table(tid, "profsum_agg_gap_context", "op_name, region_path, total_gap_duration", "op_name"),
                         [("dot.1", "dot", 90.0)])

    def test_f8_marker_chain_stops(self):
        tid, _ = self.imp(fixtures.f8(), "f8")
        self.assertEqual(self.table(tid, "profsum_agg_gap", "name, marker_op, total_gap_duration",
                                    "total_gap_duration DESC"),
                         [("iota.296", "iota.296", 90.0), ("dot.1", "dot.1", 28.0)])

    def test_f9_gpu(self):
        tid, _ = self.imp(fixtures.f9(), "f9", {"warmup_steps": 1, "hot_op_limit": 10})
        self.assertEqual(self.table(tid, "profsum_agg_step", "step, duration", "step"),
                         [(0, 500.0), (1, 400.0), (2, 350.0)])
        b = self.breakdown(tid)
        self.assertEqual((b["host"], b["compute"], b["communication"], b["total"]), (1250.0, 180.0, 90.0, 1520.0))
        self.assertEqual(self.table(tid, "profsum_agg_comm", "collective, total_duration", "total_duration DESC"),
                         [("all-gather", 50.0), ("reduce-scatter", 40.0)])
        self.assertEqual(self.table(tid, "profsum_agg_gap", "name, total_gap_duration", "total_gap_duration DESC, name"),
                         [("custom-call.2", 10.0), ("ncclDevKernel_ReduceScatter_RING_LL", 10.0)])

    def test_shapes_sources_run_ids(self):
        ev = []
        for i, (tf, src, ln) in enumerate([("a/b/dot", "x.py:1", "%dot.1 = f32[8,8]{1,0} dot(f32[8,8] %a)"),
                                           ("a/b/dot", "y.py:2", "%dot.1 = bf16[4,4] dot()"),
                                           ("a/c/dot", "y.py:2", "%dot.1 = f32[8,8]{1,0} dot(f32[8,8] %a)")]):
            ev.append({"name": "dot.1", "ts": i * 10, "dur": 5,
                       "args": {"tf_op": tf, "source": src, "long_name": ln, "run_id": str(7 + (i == 2))}})
        tid, _ = self.imp(fixtures.ops_only(ev), "shapes")
        self.assertEqual(self.table(tid, "profsum_agg_op", "name, count, shape_signature, source_file, tf_op_path, "
                                    "flop_proxy_per_invocation", "name"),
                         [("dot.1", 3, "8,8", "y.py:2", "a/b/dot", 48.0)])
        t = rows(self.db, "SELECT run_ids, source_file_hints FROM profsum_trace WHERE trace_id=?", tid)[0]
        self.assertEqual(json.loads(t[0]), ["7", "8"])
        self.assertEqual(json.loads(t[1]), ["y.py:2", "x.py:1"])


class ImportBehaviour(Base):
    def test_labels_unique_and_replace(self):
        tid, p = self.imp(fixtures.f2(), "x")
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_import(?, 'x')", (p,)).fetchone()
        self.assertIn("a trace with label 'x' exists already", str(cm.exception))
        tid2 = self.db.execute("SELECT profsum_import(?, 'x', '{\"replace\":true}')", (p,)).fetchone()[0]
        self.assertNotEqual(tid, tid2)
        self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_trace"), [(1,)])
        self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_agg_op WHERE trace_id=?", tid), [(0,)])

    def test_folder_without_trace_json_is_cantopen(self):
        # a folder holding only an XPlane: the error of a file that cannot be
        # opened (14, OperationalError in Python), not SQLITE_NOTFOUND (12,
        # InternalError), which code catching OperationalError would miss
        self.td.write("run/plugins/profile/s1/host0.xplane.pb", "x")
        d = os.path.join(self.td.path, "run")
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("SELECT profsum_import(?, 'x')", (d,)).fetchone()
        # the reference's sentence whole, then what profsum knows more
        self.assertIn("No profile trace JSON found under '%s'. Expected perfetto_trace.json.gz "
                      "or *.trace.json(.gz). Its .xplane.pb file does not decode as an XSpace "
                      "protobuf" % d, str(cm.exception))
        self.assertEqual(cm.exception.sqlite_errorcode, sqlite3.SQLITE_CANTOPEN)
        self.assertEqual(rows(self.db, "SELECT count(*) FROM sqlite_schema WHERE name='profsum_trace'"), [(0,)])

    def test_missing_schema_objects_are_recreated(self):
        # a database that has every profsum object skips the schema script;
        # one that lost an object gets it back at the next import
        self.imp(fixtures.f2(), "a")
        names = rows(self.db, "SELECT type, name, sql FROM sqlite_schema ORDER BY name")
        self.db.execute("DROP VIEW profsum_hot_ops")
        self.db.execute("DROP TABLE profsum_agg_gap_context")
        self.imp(fixtures.f2(), "b")
        self.assertEqual(rows(self.db, "SELECT type, name, sql FROM sqlite_schema ORDER BY name"), names)
        self.assertEqual(rows(self.db, "SELECT count(DISTINCT trace_id) FROM profsum_hot_ops"), [(2,)])
        self.imp(fixtures.f2(), "c")
        self.assertEqual(rows(self.db, "SELECT type, name, sql FROM sqlite_schema ORDER BY name"), names)

    def test_shape_signatures_past_the_long_name_memo(self):
        # op names that never repeat: the per-name long_name memo stops
        # keeping copies at 8 MB; the signatures are right on both sides,
        # and match profsum_shape_signature() of the same text
        n = 60000
        pad = "m" * 130
        names = ["op%d.%d" % (i % 7, i) for i in range(n)]
        longs = ["%s = f32[%d,%d]{1,0} fusion(f32[8]{0} p), %s" % (nm, i % 97 + 1, i % 13 + 1, pad)
                 for i, nm in enumerate(names)]
        self.assertGreater(sum(map(len, longs)), 8 << 20)
        evs = [{"name": nm, "ts": i * 10, "dur": 5, "args": {"long_name": ln}}
               for i, (nm, ln) in enumerate(zip(names, longs))]
        # the same long_name twice in a row for one name at the end (a memo hit)
        evs.append({"name": names[-1], "ts": n * 10, "dur": 5, "args": {"long_name": longs[-1]}})
        tid, _ = self.imp(fixtures.ops_only(evs), "memo")
        got = dict(rows(self.db, "SELECT name, shape_signature FROM profsum_agg_op WHERE trace_id=?", tid))
        self.assertEqual(len(got), n)
        for i in (0, 1, n // 2, n - 2, n - 1):
            want = self.db.execute("SELECT profsum_shape_signature(?)", (longs[i],)).fetchone()[0]
            self.assertEqual(got[names[i]], want, names[i])
            self.assertEqual(want, "%d,%d" % (i % 97 + 1, i % 13 + 1))
        self.assertEqual(rows(self.db, "SELECT count FROM profsum_agg_op WHERE trace_id=? AND name=?",
                              tid, names[-1]), [(2,)])

    def test_one_name_with_alternating_long_names(self):
        # the memo holds the last long_name per name: a name whose long_name
        # changes from event to event still gets each event's own signature
        a = "alt.1 = f32[4,8]{1,0} fusion(f32[8]{0} p)"
        b = "alt.1 = f32[16]{0} fusion(f32[8]{0} p)"
        evs = [{"name": "alt.1", "ts": i * 10, "dur": 5, "args": {"long_name": ln}}
               for i, ln in enumerate([a, b, b, a, b, a, b])]
        tid, _ = self.imp(fixtures.ops_only(evs), "alt")
        # b is the most common (4 of 7); with a first-seen tie it would be a
        self.assertEqual(rows(self.db, "SELECT shape_signature, count FROM profsum_agg_op WHERE trace_id=?", tid),
                         [("16", 7)])
        evs = evs[:6]   # 3 a, 3 b: the tie goes to the first seen, a
        tid, _ = self.imp(fixtures.ops_only(evs), "alt2")
        self.assertEqual(rows(self.db, "SELECT shape_signature, count FROM profsum_agg_op WHERE trace_id=?", tid),
                         [("4,8", 6)])

    def test_long_names_written_with_other_escapes(self):
        # the memo compares the raw JSON bytes of long_name: the same text
        # written with other escapes (\u0066 for f, \/ for /) misses it and
        # must still give the same signature; another text, another one
        a = 'esc.1 = f32[4,8]{1,0} fusion(f32[8]{0} p), metadata={op_name="jit(f)/dot" source_file="a/b.py"}'
        b = 'esc.1 = f32[16]{0} fusion(f32[8]{0} p)'
        enc = json.dumps(a)[1:-1]                       # escaped quotes
        forms = {"A": enc, "A2": enc.replace("fusion", "\\u0066usion"),
                 "A3": enc.replace("a/b.py", "a\\/b.py"), "B": json.dumps(b)[1:-1]}

        def imp(seq, label):
            evs = [{"name": "esc.1", "ts": i * 10, "dur": 5, "args": {"long_name": "@%s@" % k}}
                   for i, k in enumerate(seq)]
            text = json.dumps(fixtures.ops_only(evs))
            for k, raw in forms.items():
                text = text.replace('"@%s@"' % k, '"%s"' % raw)
            p = self.td.write(label + ".json", text)
            tid = self.db.execute("SELECT profsum_import(?, ?)", (p, label)).fetchone()[0]
            return rows(self.db, "SELECT shape_signature, count FROM profsum_agg_op WHERE trace_id=?", tid)

        self.assertEqual(imp(["A", "A2", "A2", "B", "A3", "A"], "esc"), [("4,8", 6)])
        # B most common: the escapes of A do not split A's events apart
        self.assertEqual(imp(["B", "A", "B", "A2", "B", "A3", "B"], "esc2"), [("16", 7)])
        self.assertEqual(self.db.execute("SELECT profsum_shape_signature(?)", (a,)).fetchone()[0], "4,8")

    def test_default_label(self):
        p = self.td.write("run7/host-1.trace.json.gz", json.dumps(fixtures.f2()), gz=True)
        tid = self.db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]
        self.assertEqual(rows(self.db, "SELECT label FROM profsum_trace WHERE trace_id=?", tid), [("host-1",)])

    def test_failed_import_changes_nothing(self):
        self.imp(fixtures.f2(), "ok")
        before = rows(self.db, "SELECT count(*) FROM profsum_agg_op")
        bad = self.td.write("bad.json", '{"traceEvents":[{"ph":"X","pid":1,"tid":2,"name":"a","ts":0,"dur":1},{"ph" 1}]}')
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute("SELECT profsum_import(?, 'bad')", (bad,)).fetchone()
        self.assertIn("JSON syntax error at byte", str(cm.exception))
        self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_agg_op"), before)
        self.assertEqual(rows(self.db, "SELECT label FROM profsum_trace"), [("ok",)])

    def test_bad_options(self):
        p = self.td.write("a.json", json.dumps(fixtures.f2()))
        for opts, msg in [("[1]", "options_json must be a JSON object"),
                          ("[]", "options_json must be a JSON object"),
                          ("5", "options_json must be a JSON object"),
                          ('{"warmup":1}', "unknown key 'warmup'"),
                          ('{"breakdown_mode":"x"}', "breakdown_mode must be"),
                          ('{"hot_op_limit":"many"}', "options_json: 'hot_op_limit' must be an integer from 0 to "
                                                      "2147483647, not \"many\""),
                          ('{"warmup_steps": -1}', "options_json: 'warmup_steps' must be an integer from 0 to "
                                                   "2147483647, not -1"),
                          # never cut to 32 bits on the quiet
                          ('{"warmup_steps": 4294967298}', "options_json: 'warmup_steps' must be an integer from 0 "
                                                           "to 2147483647, not 4294967298"),
                          ('{"hot_op_limit": 4294967296}', "options_json: 'hot_op_limit' must be an integer from 0 "
                                                           "to 2147483647, not 4294967296"),
                          ('{"store_events": null}', "options_json: 'store_events' must be true or false (or 1/0), not null"),
                          ('{"replace": 2}', "options_json: 'replace' must be true or false (or 1/0), not 2"),
                          ('{"unique_label": -1}', "options_json: 'unique_label' must be true or false (or 1/0), not -1"),
                          ('{"schema": [1]}', "options_json: 'schema' must be a string (the name of an attached "
                                              "database), not [1]"),
                          # where the JSON is wrong, not just that it is
                          ('{"warmup_steps": 2,}', "profsum_import: options_json: invalid JSON at byte 19: expected a key"),
                          ('warmup_steps=2', "profsum_import: options_json: invalid JSON at byte 0: expected a value")]:
            with self.assertRaises(sqlite3.Error) as cm:
                self.db.execute("SELECT profsum_import(?, 'o', ?)", (p, opts)).fetchone()
            self.assertIn(msg, str(cm.exception))

    def test_artifact_folder_and_xplane_warning(self):
        d = os.path.join(self.td.path, "art")
        sess = os.path.join(d, "plugins", "profile", "2026_01_01_00_00_00")
        os.makedirs(sess)
        with open(os.path.join(sess, "perfetto_trace.json.gz"), "wb") as f:
            f.write(gzip.compress(json.dumps(fixtures.f2()).encode()))
        # a lone XPlane that decodes is read, as the reference reads it (here
        # one empty plane: no events, and the reader's warning says so)
        with open(os.path.join(sess, "h.xplane.pb"), "wb") as f:
            f.write(b"\x0a\x00")
        tid = self.db.execute("SELECT profsum_import(?)", (d,)).fetchone()[0]
        label, tp, qw, sf = rows(self.db, "SELECT label, trace_path, quality_warnings, source_format "
                                 "FROM profsum_trace WHERE trace_id=?", tid)[0]
        self.assertEqual(label, "art")
        self.assertTrue(tp.endswith("h.xplane.pb"))
        self.assertEqual(sf, "xplane_pb")
        self.assertEqual(json.loads(qw), ["XPlane protobuf contained no direct timeline events with "
                                          "offset/duration data."])
        # one that does not decode: the JSON trace, as the reference falls back
        with open(os.path.join(sess, "h.xplane.pb"), "wb") as f:
            f.write(b"\xff")
        tid = self.db.execute("SELECT profsum_import(?, 'art2')", (d,)).fetchone()[0]
        tp, qw, sf = rows(self.db, "SELECT trace_path, quality_warnings, source_format "
                          "FROM profsum_trace WHERE trace_id=?", tid)[0]
        self.assertTrue(tp.endswith("perfetto_trace.json.gz"))
        self.assertEqual(sf, "perfetto_trace_json")
        self.assertEqual(json.loads(qw), [])

    def test_lenient_where_reference_rejects(self):
        text = json.dumps(fixtures.f2())[:-2] + ',{"ph":"X","pid":"Spans","tid":1,"name":"s","ts":0,"dur":5},7]}'
        p = self.td.write("k.json", text)
        tid = self.db.execute("SELECT profsum_import(?)", (p,)).fetchone()[0]
        qw = json.loads(rows(self.db, "SELECT quality_warnings FROM profsum_trace WHERE trace_id=?", tid)[0][0])
        self.assertEqual(len(qw), 1)
        self.assertTrue(qw[0].startswith("2 entries are malformed for the reference summarizer"), qw[0])
        self.assertEqual(rows(self.db, "SELECT num_complete_events FROM profsum_trace WHERE trace_id=?", tid), [(4,)])
        kinds = [r[0] for r in rows(self.db, "SELECT kind FROM profsum_agg_diagnostic WHERE trace_id=?", tid)]
        self.assertIn("not_an_object", kinds)

    def test_reuse_option(self):
        """'reuse' returns the stored trace of the same source, bytes, options
        and version (with the label given, if one is: NULL takes any label);
        anything different imports."""
        imp = lambda path, label, opts: self.db.execute(
            "SELECT profsum_import(?, ?, ?)", (path, label, opts)).fetchone()[0]
        p = self.td.write("r.json.gz", json.dumps(fixtures.f2()), gz=True)
        first = imp(p, "r1", '{"reuse": true}')
        self.assertEqual(imp(p, "r1", '{"reuse": true}'), first)
        self.assertEqual(imp(p, None, '{"reuse": true}'), first)      # any label
        self.assertEqual(rows(self.db, "SELECT label FROM profsum_trace"), [("r1",)])
        # another label given: only a trace with that label is taken
        r2 = imp(p, "r2", '{"reuse": true}')
        self.assertNotEqual(r2, first)
        # other options: a new trace
        w2 = imp(p, "r3", '{"reuse": true, "warmup_steps": 2}')
        self.assertNotIn(w2, (first, r2))
        # without reuse: imported again
        plain = imp(p, "r4", None)
        self.assertNotIn(plain, (first, r2, w2))
        # the newest match wins
        self.assertEqual(imp(p, None, '{"reuse": 1}'), plain)
        # other bytes under the same path: the label is taken, and the
        # message says why reuse did not take the stored trace
        ev = fixtures.f2()
        ev["traceEvents"].append({"ph": "X", "pid": 1, "tid": 1, "name": "extra", "ts": 1, "dur": 1})
        self.td.write("r.json.gz", json.dumps(ev), gz=True)
        with self.assertRaises(sqlite3.IntegrityError) as cm:
            imp(p, "r1", '{"reuse": true}')
        self.assertIn("a trace with label 'r1' exists already (trace_id %d) and 'reuse' did not take it: "
                      "that trace was imported from '%s' (SHA-256 " % (first, p), str(cm.exception))
        self.assertIn("and '%s' differs from it in source path, content, options or profsum build "
                      "(this one: %s); " % (p, self.build_id()), str(cm.exception))
        self.assertIn("pass '{\"reuse\": true, \"unique_label\": true}' to store this one as the first free "
                      "'r1-N' (and take it again next time)", str(cm.exception))
        changed = imp(p, "r1", '{"reuse": true, "unique_label": true}')
        self.assertEqual(rows(self.db, "SELECT label FROM profsum_trace WHERE trace_id=?", changed), [("r1-2",)])
        self.assertEqual(imp(p, None, '{"reuse": true}'), changed)
        # the same bytes under another path: another source, imported
        q = self.td.write("copy.json.gz", json.dumps(ev), gz=True)
        self.assertNotEqual(imp(q, "r7", '{"reuse": true}'), changed)
        # a v1 summary file: its document text; the knobs do not apply to it
        doc = self.db.execute("SELECT profsum_summary_json('r1')").fetchone()[0]
        s = self.td.write("s.json", doc)
        v1 = imp(s, None, '{"reuse": true}')
        self.assertEqual(imp(s, None, '{"reuse": true, "warmup_steps": 1}'), v1)
        self.td.write("s.json", doc.replace("{", "{ ", 1))
        self.assertNotEqual(imp(s, None, '{"reuse": true, "unique_label": true}'), v1)
        # ... but its series is compared
        self.assertNotEqual(imp(s, None, '{"reuse": true, "unique_label": true, "series": "exp"}'), v1)
        # reuse with unique_label and a label: the label or a label-N
        lab = imp(p, "r1", '{"reuse": true, "unique_label": true}')
        self.assertEqual(lab, changed)                                    # r1-2 holds it
        # the first import into a database: nothing to reuse, no error
        fresh = connect()
        self.assertEqual(fresh.execute("SELECT profsum_import(?, NULL, '{\"reuse\": true}')", (p,)).fetchone()[0], 1)
        fresh.close()
        with self.assertRaisesRegex(sqlite3.OperationalError, "'reuse' and 'replace' exclude each other"):
            imp(p, "r1", '{"reuse": true, "replace": true}')
        with self.assertRaisesRegex(sqlite3.OperationalError, "'unique_label' and 'replace' exclude each other"):
            imp(p, "r1", '{"unique_label": true, "replace": true}')
        with self.assertRaisesRegex(sqlite3.OperationalError, "'reuse' must be true or false \\(or 1/0\\), not \"yes\""):
            imp(p, "r1", '{"reuse": "yes"}')

    def build_id(self):
        """This build's fingerprint, as profsum_debug() gives it."""
        text = self.db.execute("SELECT profsum_debug()").fetchone()[0]
        return [l.split(": ", 1)[1] for l in text.splitlines() if l.startswith("build_id: ")][0]

    def test_reuse_takes_only_this_build(self):
        """Every build says profsum_version 0.1.0: reuse also compares the
        build's fingerprint, so a runner updated to another build never takes
        the numbers an older one stored (nor a trace stored before the
        fingerprint was kept, whose profsum_build is NULL)."""
        imp = lambda opts: self.db.execute("SELECT profsum_import(?, NULL, ?)", (p, opts)).fetchone()[0]
        p = self.td.write("b.json.gz", json.dumps(fixtures.f2()), gz=True)
        first = imp('{"reuse": true}')
        self.assertEqual(rows(self.db, "SELECT profsum_build FROM profsum_trace WHERE trace_id=?", first),
                         [(self.build_id(),)])
        self.assertEqual(imp('{"reuse": true}'), first)
        self.db.execute("UPDATE profsum_trace SET profsum_build='1-2' WHERE trace_id=?", (first,))
        self.db.commit()
        other = imp('{"reuse": true, "unique_label": true}')
        self.assertNotEqual(other, first)
        self.assertEqual(imp('{"reuse": true}'), other)
        self.db.execute("UPDATE profsum_trace SET profsum_build=NULL")
        self.db.commit()
        third = imp('{"reuse": true, "unique_label": true}')
        self.assertNotIn(third, (first, other))
        # a database made before the column existed: reuse finds nothing
        # (no 'no such column' before the import's write upgrades it)
        from test_schema_upgrade import strip_columns
        sql = self.db.execute("SELECT sql FROM sqlite_master WHERE name='profsum_trace'").fetchone()[0]
        self.db.execute("CREATE TABLE tmp_old AS SELECT * FROM profsum_trace")
        self.db.execute("DROP TABLE profsum_trace")
        self.db.execute(strip_columns(sql, ["profsum_build"]))
        cols = ", ".join(r[1] for r in self.db.execute("PRAGMA table_info(profsum_trace)"))
        self.db.execute("INSERT INTO profsum_trace SELECT %s FROM tmp_old" % cols)
        self.db.execute("DROP TABLE tmp_old")
        self.db.execute("UPDATE profsum_meta SET value='0-0' WHERE key='schema_id'")
        self.db.commit()
        fourth = imp('{"reuse": true, "unique_label": true}')
        self.assertNotIn(fourth, (first, other, third))
        self.assertEqual(imp('{"reuse": true}'), fourth)

    def test_reuse_read_only_and_unique_label(self):
        """A read-only database answers a reuse hit and says why a miss
        fails; unique_label takes the first free -N."""
        dbp = os.path.join(self.td.path, "ro.db")
        db = connect(dbp)
        p = self.td.write("a.json.gz", json.dumps(fixtures.f2()), gz=True)
        tid = db.execute("SELECT profsum_import(?, 'a', '{\"reuse\": true}')", (p,)).fetchone()[0]
        for k in range(2, 5):
            got = db.execute("SELECT profsum_import(?, 'a', '{\"unique_label\": true}')", (p,)).fetchone()[0]
            self.assertEqual(rows(db, "SELECT label FROM profsum_trace WHERE trace_id=?", got), [("a-%d" % k,)])
        db.execute("DELETE FROM profsum_trace WHERE label='a-3'")
        got = db.execute("SELECT profsum_import(?, 'a', '{\"unique_label\": true}')", (p,)).fetchone()[0]
        self.assertEqual(rows(db, "SELECT label FROM profsum_trace WHERE trace_id=?", got), [("a-3",)])
        db.close()
        ro = connect("file:%s?mode=ro" % dbp, uri=True)
        self.assertEqual(ro.execute("SELECT profsum_import(?, 'a', '{\"reuse\": true}')", (p,)).fetchone()[0], tid)
        q = self.td.write("b.json.gz", json.dumps(fixtures.f2()), gz=True)
        with self.assertRaisesRegex(sqlite3.OperationalError, "'.*b.json.gz': no stored trace matches it for "
                                    "'reuse' \\(the same source, content, options and profsum build, and "
                                    "this label\\), and the database is read-only"):
            ro.execute("SELECT profsum_import(?, 'b', '{\"reuse\": true}')", (q,))
        ro.close()

    def test_stored_diagnostics_capped_per_kind(self):
        """An import stores the first 5 diagnostics of a kind and a
        'suppressed' row with the kind's total; profsum_diagnostics(path)
        lists them all, and the summary counts every event."""
        ev = ",".join('{"ph":"X","pid":1,"tid":1,"name":"z","ts":%d,"dur":0}' % i for i in range(1500))
        ev += ',{"ph":"X","pid":1,"tid":1,"name":"a","ts":2000,"dur":5}'
        p = self.td.write("many.json", "[" + ev + "]")
        tid = self.db.execute("SELECT profsum_import(?, 'many')", (p,)).fetchone()[0]
        got = dict(rows(self.db, "SELECT kind, count(*) FROM profsum_diagnostic WHERE trace_id=? GROUP BY kind", tid))
        self.assertEqual(got, {"zero_duration": 5, "suppressed": 1})
        det = rows(self.db, "SELECT detail FROM profsum_diagnostic WHERE trace_id=? AND kind='suppressed'", tid)[0][0]
        self.assertEqual(det, "zero_duration: 1500 occurrences in all; only the first 5 are stored "
                              "(profsum_diagnostics(path) lists them all)")
        first = [r[0] for r in rows(self.db, "SELECT idx FROM profsum_agg_diagnostic WHERE trace_id=? "
                                    "AND kind='zero_duration' ORDER BY idx", tid)]
        self.assertEqual(first, list(range(5)))
        self.assertEqual(rows(self.db, "SELECT count(*) FROM profsum_diagnostics(?) WHERE kind='zero_duration'", p),
                         [(1500,)])
        self.assertEqual(rows(self.db, "SELECT num_events_total, num_complete_events FROM profsum_trace "
                                       "WHERE trace_id=?", tid), [(1501, 1)])

    def test_cut_off_and_lax_json_warn(self):
        """A cut-off JSON file and non-strict JSON are read (DESIGN) but say so
        in quality_warnings: the reference's strict decoder rejects both."""
        full = json.dumps(fixtures.f2())
        cases = {
            "cut_entry": full[:full.rindex('{"ph"') + 12],          # inside the last entry
            "cut_array": full[:-2],                                  # before the closing ']}'
            "cut_object": full[:-1],                                 # before the closing '}'
            "comma": full[:-2] + ",]}",                              # a trailing comma
            "ctrl": full.replace('"name": "', '"name": "\t', 1),     # a raw TAB in a string
            "clean": full}
        want = {"cut_entry": ["ends early"], "cut_array": ["ends early"], "cut_object": ["ends early"],
                "comma": ["not strict JSON"], "ctrl": ["not strict JSON"], "clean": []}
        for label, text in cases.items():
            p = self.td.write(label + ".json", text)
            tid = self.db.execute("SELECT profsum_import(?, ?)", (p, label)).fetchone()[0]
            qw = json.loads(rows(self.db, "SELECT quality_warnings FROM profsum_trace WHERE trace_id=?", tid)[0][0])
            self.assertEqual(len(qw), len(want[label]), (label, qw))
            for w, got in zip(want[label], qw):
                self.assertIn(w, got, label)
            doc = json.loads(rows(self.db, "SELECT profsum_summary_json(?)", tid)[0][0])
            self.assertEqual(doc["trace_overview"]["quality_warnings"], qw, label)
        self.assertIn("The reference summarizer would reject it; profsum summarized the events before "
                      "the cut: see profsum_diagnostic.",
                      rows(self.db, "SELECT quality_warnings FROM profsum_trace WHERE label='cut_entry'")[0][0])

    def test_store_events(self):
        tid, _ = self.imp(fixtures.f2(), "ev", {"store_events": True})
        self.assertEqual(rows(self.db, "SELECT count(*), sum(excl_ps) FROM profsum_event WHERE trace_id=?", tid),
                         [(8, 130000000)])

    def test_directonly(self):
        with self.assertRaises(sqlite3.Error):
            self.db.execute("CREATE VIEW v AS SELECT profsum_import('x')")
            self.db.execute("SELECT * FROM v").fetchall()

    def test_attached_schema(self):
        other = os.path.join(self.td.path, "other.db")
        self.db.execute("ATTACH ? AS aux", (other,))
        p = self.td.write("a.json", json.dumps(fixtures.f2()))
        tid = self.db.execute("SELECT profsum_import(?, 'a', '{\"schema\":\"aux\"}')", (p,)).fetchone()[0]
        self.assertEqual(rows(self.db, "SELECT label FROM aux.profsum_trace WHERE trace_id=?", tid), [("a",)])
        self.assertEqual(rows(self.db, "SELECT count(*) FROM sqlite_master WHERE name='profsum_trace'"), [(0,)])
        # every reading function takes the schema: the same answers as from
        # a connection that opens that database as main
        p2 = self.td.write("b.json", json.dumps(fixtures.f3()))
        self.db.execute("SELECT profsum_import(?, 'b', '{\"schema\":\"aux\"}')", (p2,))
        o = '{"schema": "aux"}'
        got = [self.db.execute(sql, args).fetchone()[0] for sql, args in (
            ("SELECT profsum_report_md('a', 5, ?)", ('{"schema": "aux", "kpis": true}',)),
            ("SELECT profsum_report_html('a', 5, ?)", (o,)),
            ("SELECT profsum_query_json('a', 'top ops', 3, ?)", (o,)),
            ("SELECT profsum_compare_json('a', 'b', 5, ?)", (o,)))]
        own = connect(other)
        want = [own.execute(sql).fetchone()[0] for sql in (
            "SELECT profsum_report_md('a', 5, '{\"kpis\": true}')",
            "SELECT profsum_report_html('a', 5)",
            "SELECT profsum_query_json('a', 'top ops', 3)",
            "SELECT profsum_compare_json('a', 'b', 5)")]
        own.close()
        self.assertEqual(got[0], want[0])
        self.assertIn("## KPIs", got[0])
        self.assertEqual(got[1], want[1])
        self.assertEqual(got[2], want[2])
        strip = lambda t: re.sub(r'"generated_at_utc": "[^"]*"', "", t)
        self.assertEqual(strip(got[3]), strip(want[3]))
        for sql, msg in (
                ("SELECT profsum_report_md('a', 5, '{\"schema\": \"nope\"}')",
                 "profsum_report_md: options_json: schema 'nope' is not an attached database"),
                ("SELECT profsum_query_json('a', 'top', 3, '{\"kpis\": true}')",
                 "profsum_query_json: options_json: unknown key 'kpis' (known: schema, advice)"),
                ("SELECT profsum_report_md('a', 5, '{\"kpi\": true}')",
                 "profsum_report_md: options_json: unknown key 'kpi' (known: schema, kpis, profsum)"),
                ("SELECT profsum_report_html('a', 5, '{\"schema\": 1}')",
                 "profsum_report_html: options_json: schema must be the name of an attached database (text)"),
                ("SELECT profsum_compare_json('a', 'b', 5, '[]')",
                 "profsum_compare_json: options_json must be a JSON object")):
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.db.execute(sql).fetchone()
            self.assertEqual(str(cm.exception), msg)
        # without the option: main, which has no such trace
        with self.assertRaises(sqlite3.OperationalError):
            self.db.execute("SELECT profsum_report_md('a')").fetchone()

    def test_schema_not_attached_is_said_so(self):
        # a schema that names no database: the same words from every
        # function, never "no trace"; nothing stored anywhere
        p = self.td.write("a.json", json.dumps(fixtures.f2()))
        self.db.execute("SELECT profsum_import(?, 'a')", (p,))
        for sql, args, fn in (
                ("SELECT profsum_summary_json('a', ?)", (), "profsum_summary_json"),
                ("SELECT profsum_summary_json(1, ?)", (), "profsum_summary_json"),
                ("SELECT profsum_report_html('a', 5, ?)", (), "profsum_report_html"),
                ("SELECT profsum_session_json('a', ?)", (), "profsum_session_json"),
                ("SELECT profsum_import(?, 'b', ?)", (p,), "profsum_import")):
            with self.subTest(fn=fn, sql=sql):
                with self.assertRaises(sqlite3.OperationalError) as cm:
                    self.db.execute(sql, args + ('{"schema": "nope"}',)).fetchone()
                self.assertEqual(str(cm.exception),
                                 "%s: options_json: schema 'nope' is not an attached database" % fn)
        self.assertEqual(rows(self.db, "SELECT label FROM profsum_trace"), [("a",)])
        # temp is a database of every connection, opened or not yet
        other = connect(os.path.join(self.td.path, "t.db"))
        tid = other.execute("SELECT profsum_import(?, 't', '{\"schema\": \"temp\"}')", (p,)).fetchone()[0]
        self.assertEqual(rows(other, "SELECT label FROM temp.profsum_trace WHERE trace_id=?", tid), [("t",)])
        doc = json.loads(other.execute("SELECT profsum_summary_json('t', '{\"schema\": \"temp\"}')").fetchone()[0])
        self.assertEqual(doc["schema_version"], "profile_summary.v1")
        other.close()



class FirstImport(unittest.TestCase):
    """The first import into a database creates the schema in the same
    transaction as the trace, after the parse."""

    def test_failed_parse_changes_nothing(self):
        with TempDir() as td:
            good = td.write("good.json.gz", json.dumps(fixtures.f2()), gz=True)
            bad = os.path.join(td.path, "bad.json.gz")
            with open(good, "rb") as f:
                data = f.read()
            with open(bad, "wb") as f:
                f.write(data[:len(data) // 2])
            db = connect(os.path.join(td.path, "a.db"))
            db.execute("CREATE TABLE mine(x)")
            for threads in ("1", "0"):
                with self.subTest(threads=threads):
                    os.environ["PROFSUM_THREADS"] = threads
                    try:
                        with self.assertRaises(sqlite3.DatabaseError) as cm:
                            db.execute("SELECT profsum_import(?, 'bad')", (bad,)).fetchone()
                    finally:
                        del os.environ["PROFSUM_THREADS"]
                    self.assertIn("profsum_import: '%s': truncated gzip data" % bad, str(cm.exception))
                    # Nothing created: no table, no view.
                    self.assertEqual(rows(db, "SELECT name FROM sqlite_master"), [("mine",)])
            # The next import creates the schema and works.
            tid = db.execute("SELECT profsum_import(?, 'good')", (good,)).fetchone()[0]
            self.assertEqual(rows(db, "SELECT label FROM profsum_trace"), [("good",)])
            self.assertEqual(rows(db, "SELECT count(*) FROM profsum_agg_op WHERE trace_id=?", tid)[0][0] > 0, True)
            db.close()

    def test_interrupt_during_the_parse(self):
        # sqlite3_interrupt (Ctrl-C in the shell) is seen during the parse:
        # "interrupted", nothing written, no transaction left open, and the
        # connection works on
        n = 1000000
        body = b",".join(b'{"ph":"X","name":"a","pid":1,"tid":1,"ts":%d,"dur":1}' % (2 * i)
                         for i in range(n))
        with TempDir() as td:
            big = os.path.join(td.path, "big.json")
            with open(big, "wb") as f:
                f.write(b'{"traceEvents":[' + body + b']}')
            del body
            small = td.write("small.json.gz", json.dumps(fixtures.f2()), gz=True)
            for first in (True, False):
                with self.subTest(first_import=first):
                    db = connect(os.path.join(td.path, "i%d.db" % first))
                    db.isolation_level = None
                    if not first:
                        db.execute("SELECT profsum_import(?, 'small')", (small,)).fetchone()
                    before = rows(db, "SELECT type, name FROM sqlite_master ORDER BY name")
                    timer = threading.Timer(0.05, db.interrupt)
                    timer.start()
                    try:
                        with self.assertRaises(sqlite3.OperationalError) as cm:
                            db.execute("SELECT profsum_import(?, 'big')", (big,)).fetchone()
                    finally:
                        timer.cancel()
                    self.assertEqual(str(cm.exception), "profsum_import: interrupted")
                    self.assertFalse(db.in_transaction)
                    self.assertEqual(rows(db, "SELECT type, name FROM sqlite_master ORDER BY name"), before)
                    db.execute("SELECT profsum_import(?, 'again')", (small,)).fetchone()
                    self.assertIn(("again",), rows(db, "SELECT label FROM profsum_trace"))
                    db.close()

    def test_first_import_same_with_and_without_threads(self):
        # A first import parses in a thread while it creates the schema; with
        # PROFSUM_THREADS=0 everything runs in the calling thread: the same
        # summary and the same tables either way (a generated trace past the
        # size where the inflate thread starts too).
        import subprocess
        import sys
        from util import ROOT
        with TempDir() as td:
            path = os.path.join(td.path, "g.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "3M",
                            "--shape", "tpu", "--out", path], check=True, stdout=subprocess.DEVNULL)
            got = []
            for threads in ("1", "0"):
                os.environ["PROFSUM_THREADS"] = threads
                try:
                    db = connect(os.path.join(td.path, "t%s.db" % threads))
                    db.execute("SELECT profsum_import(?, 'g')", (path,)).fetchone()
                finally:
                    del os.environ["PROFSUM_THREADS"]
                doc = json.loads(db.execute("SELECT profsum_summary_json('g')").fetchone()[0])
                doc.pop("generated_at_utc", None)
                tables = {}
                for (t,) in rows(db, "SELECT name FROM sqlite_master WHERE type='table' "
                                     "AND name LIKE 'profsum_agg%' ORDER BY name"):
                    tables[t] = rows(db, "SELECT * FROM %s ORDER BY 1, 2, 3" % t)
                got.append((doc, tables))
                db.close()
            self.assertGreater(got[0][0]["trace_overview"]["num_complete_events"], 1000)
            self.assertEqual(got[0], got[1])

    def test_interrupt_during_the_write(self):
        # An interrupt that comes while the import writes (here: raised from
        # a progress handler at points spread over the whole import) ends
        # with no transaction left open and either nothing written or the
        # whole trace (when it came after the COMMIT); inside the caller's
        # BEGIN, SQLite's rule for an interrupted write: the caller's whole
        # transaction is rolled back.
        with TempDir() as td:
            small = td.write("small.json.gz", json.dumps(fixtures.f2()), gz=True)
            other = td.write("other.json.gz", json.dumps(fixtures.f2()), gz=True)
            ref = connect()
            ref.execute("SELECT profsum_import(?, 'x')", (small,)).fetchone()
            want_ops = rows(ref, "SELECT count(*) FROM profsum_agg_op")[0][0]
            ref.close()
            self.assertGreater(want_ops, 0)

            for mode in ("first", "later", "user_txn"):
                db = self._write_db(td, mode, other)
                total = progress_calls(db, "SELECT profsum_import(?, 'x')", (small,))
                db.close()
                self.assertGreater(total, 20, mode)
                outcomes = set()
                for k in sorted(set([1, 2, 3, total // 2, total - 1, total]
                                    + list(range(1, total + 1, max(1, total // 25))))):
                    with self.subTest(mode=mode, k=k):
                        db = self._write_db(td, mode, other)
                        before = rows(db, "SELECT type, name FROM sqlite_master ORDER BY name")
                        err = run_interrupted_at(db, k, "SELECT profsum_import(?, 'x')", (small,))
                        self.assertFalse(db.in_transaction, err)
                        labels = self._trace_x_whole_or_absent(db, want_ops, outcomes)
                        if "x" not in labels:
                            self.assertIsNotNone(err)
                            self.assertIn("interrupted", err)
                            if mode == "user_txn":
                                # the caller's own earlier import went too
                                self.assertEqual(labels, [])
                            else:
                                self.assertEqual(rows(db, "SELECT type, name FROM sqlite_master ORDER BY name"),
                                                 before)
                        # the connection works on
                        db.execute("SELECT profsum_import(?, 'again')", (small,)).fetchone()
                        db.close()
                self.assertIn("nothing", outcomes, mode)

    def test_progress_handler_stop_at_every_step(self):
        # A progress handler that answers "stop" once (SQLITE_INTERRUPT for
        # the statement running then; the connection is not left
        # interrupted), at every virtual-machine step of the import's start
        # and at steps spread over the rest.  SQLite asks it once more as a
        # statement ends, after the statement took effect: a BEGIN stopped
        # there has opened the transaction though it failed.  No transaction
        # may be left open by an import of its own, and the trace is
        # written whole or not at all.
        with TempDir() as td:
            small = td.write("small.json", json.dumps(fixtures.f2()))
            other = td.write("other.json", json.dumps(fixtures.f2()))
            ref = connect()
            ref.execute("SELECT profsum_import(?, 'x')", (small,)).fetchone()
            want_ops = rows(ref, "SELECT count(*) FROM profsum_agg_op")[0][0]
            ref.close()
            for mode in ("first", "later", "user_txn"):
                db = self._write_db(td, mode, other)
                calls = [0]

                def count():
                    calls[0] += 1
                    return 0
                db.set_progress_handler(count, 1)
                db.execute("SELECT profsum_import(?, 'x')", (small,)).fetchall()
                db.set_progress_handler(None, 0)
                db.close()
                total = calls[0]
                self.assertGreater(total, 100, mode)
                outcomes = set()
                for k in sorted(set(list(range(1, 120)) + list(range(120, total + 1, max(1, total // 40))))):
                    with self.subTest(mode=mode, k=k):
                        db = self._write_db(td, mode, other)
                        seen = [0]

                        def stop_once():
                            seen[0] += 1
                            return 1 if seen[0] == k else 0
                        db.set_progress_handler(stop_once, 1)
                        err = None
                        try:
                            db.execute("SELECT profsum_import(?, 'x')", (small,)).fetchall()
                        except sqlite3.DatabaseError as e:
                            err = str(e)
                        db.set_progress_handler(None, 0)
                        if mode == "user_txn":
                            # the caller's transaction, if still open, ends as it chooses
                            if db.in_transaction:
                                db.execute("COMMIT")
                        else:
                            self.assertFalse(db.in_transaction, (k, err))
                        if "x" not in self._trace_x_whole_or_absent(db, want_ops, outcomes):
                            self.assertIsNotNone(err)
                            self.assertIn("interrupt", err)
                        self.assertEqual(rows(db, "PRAGMA integrity_check"), [("ok",)])
                        db.execute("SELECT profsum_import(?, 'again')", (small,)).fetchone()
                        db.close()
                self.assertIn("nothing", outcomes, mode)

    def test_interrupt_between_any_two_statements(self):
        # The hardest moment for the rollback: the interrupt lands right
        # after one of the import's statements has finished (after a CREATE
        # INDEX, which expires every prepared statement, say), so that the
        # next prepare fails and only the running rescue statement can end
        # the transaction.  A C program (sqlite3_trace_v2 SQLITE_TRACE_PROFILE
        # calls sqlite3_interrupt when the N-th statement ends) runs a first
        # and a later import for every N.
        import shutil
        import subprocess
        from util import SO
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            self.skipTest("no C compiler")
        prog = r"""
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
static int target, seen;
static int cb(unsigned t, void *ctx, void *p, void *x){
  (void)t; (void)p; (void)x;
  if( ++seen==target ) sqlite3_interrupt((sqlite3*)ctx);
  return 0;
}
int main(int argc, char **argv){
  sqlite3 *db; char *err = 0; int rc, n = 0, x = 0;
  if( argc<6 ) return 2;
  if( sqlite3_open(argv[1], &db) ) return 2;
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, argv[2], 0, &err) ){ printf("load %s\n", err); return 2; }
  if( atoi(argv[5]) ){
    char *q = sqlite3_mprintf("SELECT profsum_import(%Q, 'first')", argv[3]);
    if( sqlite3_exec(db, q, 0, 0, &err) ){ printf("seed %s\n", err); return 2; }
    sqlite3_free(q);
  }
  target = atoi(argv[4]);
  sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, cb, db);
  {
    char *q = sqlite3_mprintf("SELECT profsum_import(%Q, 'x')", argv[3]);
    rc = sqlite3_exec(db, q, 0, 0, &err);
    sqlite3_free(q);
  }
  sqlite3_trace_v2(db, 0, 0, 0);
  {
    sqlite3_stmt *s = 0;
    if( sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &s, 0)==SQLITE_OK
     && sqlite3_step(s)==SQLITE_ROW ) n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    if( sqlite3_prepare_v2(db, "SELECT count(*) FROM profsum_trace WHERE label='x'", -1, &s, 0)==SQLITE_OK
     && sqlite3_step(s)==SQLITE_ROW ) x = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
  }
  printf("%d|%d|%d|%d|%d|%s\n", rc, sqlite3_get_autocommit(db), seen, n, x, err ? err : "");
  sqlite3_close(db);
  return 0;
}
"""
        with TempDir() as td:
            src = os.path.join(td.path, "irq.c")
            with open(src, "w") as f:
                f.write(prog)
            exe = os.path.join(td.path, "irq")
            r = subprocess.run([cc, "-o", exe, src, "-lsqlite3"], capture_output=True, text=True)
            if r.returncode != 0:
                self.skipTest("cannot build against libsqlite3: " + r.stderr[-200:])
            trace = td.write("small.json.gz", json.dumps(fixtures.f2()), gz=True)
            db_path = os.path.join(td.path, "i.db")

            def run(n, later):
                for suffix in ("", "-wal", "-shm", "-journal"):
                    if os.path.exists(db_path + suffix):
                        os.remove(db_path + suffix)
                out = subprocess.run([exe, db_path, SO, trace, str(n), "1" if later else "0"],
                                     capture_output=True, text=True, timeout=60)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                rc, autocommit, seen, objects, x, err = out.stdout.strip().split("|", 5)
                return int(rc), int(autocommit), int(seen), int(objects), int(x), err

            for later in (False, True):
                rc, _, total, full, x, _ = run(10 ** 6, later)   # no interrupt: every statement
                self.assertEqual((rc, x), (0, 1))
                self.assertGreater(total, 20)
                nothing = 0
                for n in range(1, total + 1):
                    with self.subTest(later=later, n=n):
                        rc, autocommit, seen, objects, x, err = run(n, later)
                        self.assertEqual(autocommit, 1, "transaction left open: " + err)
                        if rc:
                            self.assertIn("interrupted", err)
                        if x:
                            # written whole (the interrupt came after the COMMIT)
                            self.assertEqual(objects, full)
                        else:
                            # nothing written: no schema left by a first import
                            self.assertNotEqual(rc, 0)
                            self.assertEqual(objects, full if later else 0)
                            nothing += 1
                self.assertGreater(nothing, 10, later)

    def _trace_x_whole_or_absent(self, db, want_ops, outcomes):
        """The labels of db's traces; trace 'x', when there, with all its
        want_ops op rows; adds 'written' or 'nothing' to outcomes."""
        has = ("table", "profsum_trace") in rows(db, "SELECT type, name FROM sqlite_master")
        labels = [r[0] for r in rows(db, "SELECT label FROM profsum_trace")] if has else []
        if "x" in labels:
            outcomes.add("written")
            tid = rows(db, "SELECT trace_id FROM profsum_trace WHERE label='x'")[0][0]
            self.assertEqual(rows(db, "SELECT count(*) FROM profsum_agg_op WHERE trace_id=?", tid)[0][0],
                             want_ops)
        else:
            outcomes.add("nothing")
        return labels

    def _write_db(self, td, mode, other):
        path = os.path.join(td.path, "w.db")
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        db = connect(path)
        db.isolation_level = None
        if mode == "later":
            db.execute("SELECT profsum_import(?, 'other')", (other,)).fetchone()
        elif mode == "user_txn":
            db.execute("BEGIN")
            db.execute("SELECT profsum_import(?, 'other')", (other,)).fetchone()
        return db

    def test_damaged_gzip_inside_a_user_transaction(self):
        """A batch of imports in the user's own transaction: a damaged gzip
        fails alone (code 11 as SQLITE_CORRUPT_VTAB, not plain
        SQLITE_CORRUPT, which would make SQLite refuse every later write of
        the transaction as if the database were damaged), the transaction
        stays open, later imports and other writes go on, COMMIT keeps
        everything but the damaged trace.  The same for a trace_events scan
        of a damaged file inside a transaction."""
        import shutil
        import subprocess
        with TempDir() as td:
            good = td.write("good.json.gz", json.dumps(fixtures.f2()), gz=True)
            whole = gzip.compress(json.dumps(fixtures.f2()).encode())
            damaged = {
                "truncated": td.write("cut.json.gz", whole[:len(whole) - 12]),
                "corrupt": td.write("bad.json.gz", whole[:10] + bytes(b ^ 0x5A for b in whole[10:30]) + whole[30:]),
                "trailing": td.write("tail.json.gz", whole + b"garbage"),
            }
            for kind, path in sorted(damaged.items()):
                with self.subTest(kind=kind):
                    dbp = os.path.join(td.path, "batch-%s.db" % kind)
                    db = connect(dbp)
                    db.isolation_level = None
                    db.execute("SELECT profsum_import(?, 'before-txn')", (good,)).fetchone()
                    db.execute("BEGIN")
                    db.execute("SELECT profsum_import(?, 'a')", (good,)).fetchone()
                    with self.assertRaises(sqlite3.DatabaseError) as cm:
                        db.execute("SELECT profsum_import(?, 'damaged')", (path,)).fetchone()
                    self.assertIn("gzip", str(cm.exception))
                    self.assertTrue(db.in_transaction)
                    with self.assertRaises(sqlite3.DatabaseError):
                        db.execute("SELECT count(*) FROM trace_events(?)", (path,)).fetchone()
                    self.assertTrue(db.in_transaction)
                    db.execute("CREATE TABLE mine(x)")
                    db.execute("INSERT INTO mine VALUES(1)")
                    db.execute("SELECT profsum_import(?, 'b')", (good,)).fetchone()
                    db.execute("COMMIT")
                    self.assertEqual(rows(db, "SELECT label FROM profsum_trace ORDER BY trace_id"),
                                     [("before-txn",), ("a",), ("b",)])
                    self.assertEqual(rows(db, "SELECT x FROM mine"), [(1,)])
                    self.assertEqual(rows(db, "PRAGMA integrity_check"), [("ok",)])
                    db.close()
                    self.assertEqual(cm.exception.sqlite_errorcode, sqlite3.SQLITE_CORRUPT_VTAB)
                    self.assertEqual(cm.exception.sqlite_errorcode & 0xff, sqlite3.SQLITE_CORRUPT)
            # the shell reports the primary code, as README.md says
            if shutil.which("sqlite3"):
                from util import SO
                r = subprocess.run(["sqlite3", ":memory:", "-cmd", ".load " + SO,
                                    "SELECT count(*) FROM trace_events('%s');" % damaged["truncated"]],
                                   capture_output=True, text=True)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("truncated gzip data", r.stderr)
                self.assertTrue(r.stderr.rstrip().endswith("(11)"), r.stderr)

    @unittest.skipUnless(os.path.exists("/proc/self/mem"), "needs /proc/self/mem (Linux)")
    def test_read_error_inside_a_user_transaction(self):
        """A file that opens but fails to read (/proc/self/mem: EIO at byte
        0) is an SQL error naming the file, as SQLITE_ERROR, not
        SQLITE_IOERR: SQLite takes an SQLITE_IOERR that ends a statement
        which reads the database (a trace_events query, or profsum_import
        called FROM a table) for a failure of its own I/O and rolls back
        the caller's whole transaction.  The batch before it survives and
        commits."""
        with TempDir() as td:
            good = td.write("good.json.gz", json.dumps(fixtures.f2()), gz=True)
            db = connect(os.path.join(td.path, "r.db"))
            db.isolation_level = None
            db.execute("SELECT profsum_import(?, 'before-txn')", (good,)).fetchone()
            db.execute("BEGIN")
            db.execute("SELECT profsum_import(?, 'a')", (good,)).fetchone()
            db.execute("CREATE TABLE paths(p, label)")
            db.execute("INSERT INTO paths VALUES('/proc/self/mem', 'unreadable')")
            for sql in ["SELECT count(*) FROM trace_events('/proc/self/mem')",
                        "SELECT profsum_import(p, label) FROM paths"]:
                with self.subTest(sql=sql):
                    with self.assertRaises(sqlite3.DatabaseError) as cm:
                        db.execute(sql).fetchall()
                    self.assertIn("'/proc/self/mem': read error", str(cm.exception))
                    self.assertEqual(cm.exception.sqlite_errorcode, sqlite3.SQLITE_ERROR)
                    self.assertTrue(db.in_transaction)
            db.execute("SELECT profsum_import(?, 'b')", (good,)).fetchone()
            db.execute("COMMIT")
            self.assertEqual(rows(db, "SELECT label FROM profsum_trace ORDER BY trace_id"),
                             [("before-txn",), ("a",), ("b",)])
            db.close()

    def test_first_import_inside_a_user_transaction(self):
        with TempDir() as td:
            good = td.write("good.json.gz", json.dumps(fixtures.f2()), gz=True)
            db = connect(os.path.join(td.path, "a.db"))
            db.isolation_level = None
            db.execute("BEGIN")
            db.execute("SELECT profsum_import(?, 'good')", (good,)).fetchone()
            db.execute("ROLLBACK")
            self.assertEqual(rows(db, "SELECT count(*) FROM sqlite_master"), [(0,)])
            db.execute("BEGIN")
            db.execute("SELECT profsum_import(?, 'good')", (good,)).fetchone()
            db.execute("COMMIT")
            self.assertEqual(rows(db, "SELECT label FROM profsum_trace"), [("good",)])
            db.close()

    def test_readonly_database(self):
        with TempDir() as td:
            good = td.write("good.json.gz", json.dumps(fixtures.f2()), gz=True)
            path = os.path.join(td.path, "ro.db")
            sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.close()
            db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            db.enable_load_extension(True)
            from util import SO
            db.load_extension(SO)
            with self.assertRaises(sqlite3.OperationalError) as cm:
                db.execute("SELECT profsum_import(?)", (good,)).fetchone()
            self.assertEqual(str(cm.exception),
                             "profsum_import: creating the schema in 'main': attempt to write a readonly database")
            db.close()
            self.assertEqual(rows(sqlite3.connect(path), "SELECT name FROM sqlite_schema"), [("t",)])

    def test_parse_error_wins_over_schema_error(self):
        with TempDir() as td:
            path = os.path.join(td.path, "ro.db")
            sqlite3.connect(path).execute("CREATE TABLE t(x)").connection.close()
            bad = td.write("bad.json", "{\"traceEvents\": 7}")
            db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
            db.enable_load_extension(True)
            from util import SO
            db.load_extension(SO)
            with self.assertRaises(sqlite3.Error) as cm:
                db.execute("SELECT profsum_import(?)", (bad,)).fetchone()
            self.assertIn("profsum_import: '%s'" % bad, str(cm.exception))
            self.assertNotIn("readonly", str(cm.exception))
            db.close()


_SHA_SCRIPT = r"""
import gzip, json, os, random, sqlite3, sys
so, d = sys.argv[1], sys.argv[2]
db = sqlite3.connect(":memory:")
db.enable_load_extension(True)
db.load_extension(so)
out = {"impl": [l for l in db.execute("SELECT profsum_debug()").fetchone()[0].splitlines()
                if l.startswith("sha256:")][0]}
base = '{"traceEvents":[]}'
for n in list(range(len(base), len(base) + 140)) + [1000, 4095, 4096, 4097, 65599]:
    p = os.path.join(d, "pad%d.json" % n)
    with open(p, "w") as f:
        f.write(base + " " * (n - len(base)))
    db.execute("SELECT profsum_import(?, ?)", (p, "pad%d" % n))
rnd = random.Random(7)
blob = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(3000000))
p = os.path.join(d, "big.json.gz")
with gzip.open(p, "wt", compresslevel=1) as f:
    f.write(json.dumps({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 1,
                                         "args": {"blob": blob}}]}))
db.execute("SELECT profsum_import(?, 'big')", (p,))
out["sha"] = dict(db.execute("SELECT trace_path, sha256 FROM profsum_trace").fetchall())
print(json.dumps(out))
"""


class PlainLargeFile(unittest.TestCase):
    """A plain (not gzipped) trace larger than the 64 KiB first read is read
    straight into the reader's window after its first chunk: the same rows,
    aggregates and provenance hash as its gzipped copy."""

    def test_plain_and_gzip_copies_agree(self):
        import subprocess
        import sys
        with TempDir() as td:
            gz = os.path.join(td.path, "t.json.gz")
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "3M",
                            "--shape", "tpu", "--out", gz], check=True, stdout=subprocess.DEVNULL)
            plain = os.path.join(td.path, "t.json")
            with gzip.open(gz, "rb") as f, open(plain, "wb") as o:
                o.write(f.read())
            self.assertGreater(os.path.getsize(plain), 2 * 1024 * 1024)
            db = connect()
            got = {}
            for path in (plain, gz):
                scan = db.execute("SELECT count(*), sum(excl_ps), max(length(long_name)) FROM trace_events(?)",
                                  (path,)).fetchone()
                tid = db.execute("SELECT profsum_import(?, ?)", (path, os.path.basename(path))).fetchone()[0]
                sha, size, n = db.execute("SELECT sha256, size, num_complete_events FROM profsum_trace "
                                          "WHERE trace_id=?", (tid,)).fetchone()
                with open(path, "rb") as f:
                    data = f.read()
                self.assertEqual((sha, size), (hashlib.sha256(data).hexdigest(), len(data)), path)
                doc = json.loads(db.execute("SELECT profsum_summary_json(?)", (tid,)).fetchone()[0])
                got[path] = (scan, n, doc["time_breakdown"], doc["hot_ops"])
            self.assertEqual(got[plain], got[gz])
            self.assertGreater(got[plain][0][0], 5000)


class Sha256(unittest.TestCase):
    """The provenance SHA-256 of every file length around the 64-byte block
    and 56-byte padding boundaries, and of a 2 MB gzip file hashed by the
    inflate thread, equals hashlib's, with the SHA extensions (when the CPU
    has them) and with the portable code (PROFSUM_SHA256=portable)."""

    def test_both_implementations_match_hashlib(self):
        import subprocess
        import sys
        from util import SO
        results = []
        with TempDir() as td:
            for impl in (None, "portable"):
                env = dict(os.environ)
                env.pop("PROFSUM_SHA256", None)
                if impl:
                    env["PROFSUM_SHA256"] = impl
                d = os.path.join(td.path, impl or "default")
                os.mkdir(d)
                r = subprocess.run([sys.executable, "-c", _SHA_SCRIPT, SO, d], env=env,
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                res = json.loads(r.stdout)
                self.assertEqual(len(res["sha"]), 146)
                self.assertGreater(os.path.getsize(os.path.join(d, "big.json.gz")), 2 * 1024 * 1024)
                for path, sha in res["sha"].items():
                    with open(path, "rb") as f:
                        self.assertEqual(sha, hashlib.sha256(f.read()).hexdigest(), path)
                results.append(res["impl"])
        self.assertEqual(results[1], "sha256: portable")
        # the default picks the SHA extensions exactly when the CPU has them
        has_sha = False
        if os.path.exists("/proc/cpuinfo"):
            with open("/proc/cpuinfo") as f:
                has_sha = any(l.startswith("flags") and " sha_ni" in l for l in f)
        self.assertEqual(results[0], "sha256: x86 SHA extensions" if has_sha else "sha256: portable")


if __name__ == "__main__":
    unittest.main()


class HostileArguments(Base):
    """What profsum_import stores or reads from its arguments is what was
    given: a path or a label cut at a NUL byte, text that is not UTF-8, or
    a typo in device_peaks is an error, nothing is stored."""

    def err(self, args, sql="SELECT profsum_import(%s)"):
        with self.assertRaises(sqlite3.Error) as cm:
            self.db.execute(sql % ",".join("?" * len(args)), args).fetchone()
        return str(cm.exception)

    def test_refused(self):
        p = self.td.write("a.json", json.dumps(fixtures.f1([100, 110], 30)))
        for args, msg in (
                ((p + "\0junk", "x"), "profsum_import: '%s': path contains a NUL byte" % p),
                ((p, "run\0A"), "profsum_import: the label holds U+0000 (a NUL byte at byte 3)"),
                ((p, b"bad\xff"), "profsum_import: the label must be text or NULL"),
                ((p, 5), "profsum_import: the label must be text or NULL"),
                ((p, "s", '{"series": "a\\u0000b"}'), "options_json: 'series' holds U+0000"),
                ((p, "s", '{"series": "\\ud800"}'), "options_json: 'series' is not valid UTF-8"),
                ((p, "s", '{"schema": "ma\\u0000in"}'), "options_json: 'schema' holds U+0000"),
                ((p, "s", '{"device_peaks": {"*": {"peak_flops": 1e15}}}'),
                 'options_json: device_peaks: "*": unknown key "peak_flops"')):
            with self.subTest(args=args[1:]):
                self.assertIn(msg, self.err(args))
        self.assertEqual(self.db.execute("SELECT count(*) FROM sqlite_master WHERE name='profsum_trace'")
                         .fetchone()[0], 0)
        # a surrogate pair is a character: accepted
        self.db.execute("SELECT profsum_import(?, 'ok', '{\"series\": \"\\ud83d\\ude00\"}')", (p,))
        self.assertEqual(self.db.execute("SELECT series FROM profsum_trace").fetchone()[0], "\U0001F600")

    def test_paths_with_nul_elsewhere(self):
        p = self.td.write("a.json", json.dumps(fixtures.f1([100, 110], 30)))
        for sql, args, msg in (
                ("SELECT count(*) FROM trace_events(?)", (p + "\0x",), "trace_events: '%s': path contains a NUL" % p),
                ("SELECT count(*) FROM profsum_diagnostics(?)", (p + "\0x",), "profsum_diagnostics: '%s': path" % p),
                ("SELECT profsum_history_export(?)", (p + ".jsonl\0x",), "path contains a NUL byte")):
            with self.subTest(sql=sql):
                self.assertIn(msg, self.err(args, sql.replace("%", "%%").replace("?", "%s")))
