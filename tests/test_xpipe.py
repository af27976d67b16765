"""The XPlane import with its decoding on a second thread (a producer
filling a ring of batches, xplane_intake.c) and its devices' KPI walk on
another (engine_kpis.c) against the one-thread import
(PROFSUM_THREADS=0): the same summary, tables, diagnostics and errors.

The capture is written here (tests/xspace_writer.py) and is large enough
to fill the ring (4 batches of 1,024 items) many times over."""
import os
import re
import sqlite3
import unittest

import xspace_writer as W
from util import DbTestCase, connect, env_var

US = 10 ** 6
XLA_OP_COLS = ("trace_id", "device", "line_kind", "name", "hlo_op", "hlo_module", "hlo_category",
               "framework_op", "count", "time_us", "self_us", "flops", "model_flops", "bytes_accessed")
N_PER_LINE = 9000


def big_capture(bad_last=False):
    """Two planes, three lines each, 54,000 events: stats on some (tf_op,
    long_name, source, run_id, step_num; flops and bytes_accessed on every
    4th, which the insights' per-op work reads), zero and negative durations, an
    unknown field on every 7th event (a diagnostic each), an out-of-order
    event per line.  bad_last: the last line ends with an XEvent holding a
    truncated varint."""
    planes = []
    for ip, pname in enumerate(["/device:TPU:0", "/host:CPU"]):
        pb = W.PlaneBuilder(pname, id=ip)
        for il, lname in enumerate(["XLA Ops", "XLA Modules", "Steps"]):
            evs = []
            t = 0
            for i in range(N_PER_LINE):
                name = "op.%d" % (i % 37)
                st = []
                if i % 5 == 0:
                    st = [pb.stat("tf_op", s="jit/block_%d/%s" % (i % 11, name)),
                          pb.stat("long_name", s="%%%s = f32[%d] fusion()" % (name, i % 13)),
                          pb.stat("source", s="model.py:%d" % (i % 17)),
                          pb.stat("run_id", i64=i % 3), pb.stat("step_num", i64=i // 500)]
                if i % 4 == 0:
                    st = st + [pb.stat("flops", i64=1000 + i % 50), pb.stat("bytes_accessed", i64=4096)]
                dur = (i % 9 + 1) * US
                if i % 101 == 0:
                    dur = 0
                if i == 8000:
                    dur = -5
                if i == 4321:
                    t -= 15 * US                      # out of timeline order
                extra = W.f_varint(9, 1) if i % 7 == 0 else b""
                evs.append(pb.event(name, offset_ps=t, duration_ps=dur, stats=st, extra=extra))
                t += 10 * US
            if bad_last and ip == 1 and il == 2:
                evs.append(W.f_varint(1, 1) + b"\x10\xff")
            pb.line(id=il + 1, name=lname, timestamp_ns=1000 * (ip + 1), events=evs)
        planes.append(pb.build())
    return W.xspace(planes, hostnames=["h0"])


def threads_env(threads):
    """PROFSUM_THREADS=threads (None: unset, the default) while the block
    runs; the variable as it was afterwards."""
    return env_var("PROFSUM_THREADS", threads)


def run_import(path, threads):
    """Import path with PROFSUM_THREADS=threads (None: the default) in a
    fresh connection: ("ok", document, tables, diagnostics) or ("error",
    message)."""
    with threads_env(threads):
        return import_now(path)


def import_now(path):
    """run_import's body, in the environment as it is."""
    db = connect()
    try:
        try:
            db.execute("SELECT profsum_import(?, 't')", (path,)).fetchone()
        except sqlite3.Error as e:
            return ("error", str(e))
        doc = re.sub(r'"generated_at_utc": "[^"]*"', "",
                     db.execute("SELECT profsum_summary_json('t')").fetchone()[0])
        tabs = {}
        for (t,) in db.execute("SELECT name FROM sqlite_schema WHERE type='table' AND "
                               "(name LIKE 'profsum_agg%' OR name LIKE 'profsum_sec%') ORDER BY 1"):
            tabs[t] = db.execute("SELECT * FROM %s" % t).fetchall()
        diags = db.execute("SELECT * FROM profsum_diagnostic").fetchall()
        return ("ok", doc, tabs, diags)
    finally:
        db.close()


class XPipeTest(DbTestCase):

    def write(self, name, data):
        p = os.path.join(self.td.path, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_threads_and_one_thread_agree(self):
        p = self.write("big.xplane.pb", big_capture())
        one = run_import(p, "0")
        two = run_import(p, None)
        self.assertEqual(one[0], "ok")
        self.assertEqual(one, two)
        # the devices' KPI walk (its own thread beside the aggregation at
        # this size) agrees too: one device, the positive ops of its XLA Ops line
        dev = one[2]["profsum_agg_device"]
        self.assertEqual([(r[1], r[2]) for r in dev], [("/device:TPU:0", N_PER_LINE - 90 - 1)])
        kinds = {}
        for r in one[3]:
            kinds[r[4]] = kinds.get(r[4], 0) + 1
        # 6 lines: 90 zero-duration events each (i % 101 == 0), one unsorted
        # event each; every 7th event has an unknown field (capped rows)
        # (the table keeps the first 5 rows of a kind, then a count)
        self.assertEqual(kinds.get("xplane_unsorted_line"), 5)
        self.assertEqual(kinds.get("negative_duration"), 5)
        supp = " ".join(r[5] for r in one[3] if r[4] == "suppressed")
        for k, n in (("xplane_unsorted_line", 6), ("negative_duration", 6), ("zero_duration", 6 * 90),
                     ("unknown_field", 6 * 1286)):
            self.assertIn("%s: %d occurrences" % (k, n), supp)
        self.assertEqual(re.findall(r'"num_events_total": (\d+)', one[1]), [str(6 * N_PER_LINE)])
        # the insights' per-op work (on the decoding side when threaded):
        # every op of the device's XLA Ops line, FLOPs and bytes summed per op
        xla = one[2]["profsum_agg_xla_op"]
        self.assertEqual(sum(r[XLA_OP_COLS.index("count")] for r in xla), N_PER_LINE - 90 - 1)
        want = {}
        for i in range(N_PER_LINE):
            if i % 101 == 0 or i == 8000 or i % 4:
                continue
            want[i % 37] = want.get(i % 37, 0) + 1000 + i % 50
        got, nbytes = {}, 0
        for r in xla:
            cols = dict(zip(XLA_OP_COLS, r))
            if cols["flops"] is not None:
                k = int(cols["name"].split(".")[1])
                got[k] = got.get(k, 0) + cols["flops"]
            nbytes += cols["bytes_accessed"] or 0
        self.assertEqual(got, want)
        self.assertEqual(nbytes, 4096 * sum(1 for i in range(N_PER_LINE)
                                            if i % 4 == 0 and i % 101 and i != 8000))

    def test_decode_error_late_in_the_file(self):
        # a bad XEvent at the end of the last line: the same message (byte offset,
        # plane/line/event) in both modes, after the events before it were read
        p = self.write("bad.xplane.pb", big_capture(bad_last=True))
        one = run_import(p, "0")
        two = run_import(p, None)
        self.assertEqual(one[0], "error")
        self.assertEqual(one, two)
        self.assertRegex(one[1], r"^profsum_import: .*: byte \d+ \(plane 1, line 2, event %d\): XEvent: truncated varint" % N_PER_LINE)

    def test_interrupt_mid_file(self):
        # a progress handler that interrupts at one of the engine's stop
        # checks (one every 16,384 events): "interrupted" in both modes,
        # nothing written
        p = self.write("big.xplane.pb", big_capture())
        tiny = self.write("tiny.xplane.pb", W.xspace([]))

        def calls_until(threads, stop_at):
            with threads_env(threads):
                return stop_after(stop_at)

        def stop_after(stop_at):
            db = connect()
            try:
                db.execute("SELECT profsum_import(?, 'tiny')", (tiny,)).fetchone()   # the schema
                calls = [0]

                def handler():
                    calls[0] += 1
                    return 1 if stop_at is not None and calls[0] >= stop_at else 0
                db.set_progress_handler(handler, 1)
                err = None
                try:
                    db.execute("SELECT profsum_import(?, 't')", (p,)).fetchone()
                except sqlite3.OperationalError as e:
                    err = str(e)
                db.set_progress_handler(None, 1)
                n = db.execute("SELECT count(*) FROM profsum_trace WHERE label='t'").fetchone()[0]
                return calls[0], err, n
            finally:
                db.close()

        total, err, n = calls_until("0", None)
        self.assertIsNone(err)
        self.assertEqual(n, 1)
        # the engine asks at events 0, 16,384, 32,768 and 49,152 (after
        # the file's kind check): stopping at the 5th to 7th call stops the
        # read there, past the first batches of the ring
        for k in (5, 6, 7):
            for threads in ("0", None):
                self.assertEqual(calls_until(threads, k)[1:], ("profsum_import: interrupted", 0))


if __name__ == "__main__":
    unittest.main()
