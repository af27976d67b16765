"""Fields the summary reads by value, written with JSON escapes.

The reference reads a trace with a JSON decoder, so "\\u0058" is "X",
"process\\u005fname" is "process_name" and the step_num "\\u0031\\u0032" is
12.  Writers seldom escape such ASCII text, but a trace that does must give
the same summary as the same trace written plainly: the phase, the names of
the metadata events, and a string step_num (Python's int() of the decoded
text).  trace_events shows the decoded phase, and its step_num column
takes a decoded text that is an integer.

Run: /usr/bin/python3 tests/run.py test_json_escapes.py
"""
import json
import unittest

from util import connect, TempDir


def trace_text(ph_x, ph_m, proc_name, thread_name, steps):
    """A device with one XLA Ops line of two ops and a host with `train`
    events carrying args.step_num; every spelling is inserted as given
    (raw JSON text)."""
    ev = [
        '{"ph":%s,"pid":1,"name":%s,"args":{"name":"/device:TPU:0"}}' % (ph_m, proc_name),
        '{"ph":%s,"pid":1,"tid":2,"name":%s,"args":{"name":"XLA Ops"}}' % (ph_m, thread_name),
        '{"ph":"M","pid":3,"name":"process_name","args":{"name":"/host:CPU"}}',
        '{"ph":%s,"pid":1,"tid":2,"name":"fusion.1","ts":0,"dur":10}' % ph_x,
        '{"ph":"X","pid":1,"tid":2,"name":"dot.2","ts":30,"dur":5}',
    ]
    for i, (step, dur) in enumerate(steps):
        ev.append('{"ph":"X","pid":3,"tid":1,"name":"train","ts":%d,"dur":%d,'
                  '"args":{"step_num":%s}}' % (100 + i * 100, dur, step))
    return '{"traceEvents":[' + ",".join(ev) + "]}"


PLAIN = trace_text('"X"', '"M"', '"process_name"', '"thread_name"',
                   [('"12"', 10), ('"34"', 20), ('"13"', 30), ('"5"', 40), ('"6"', 50)])
ESCAPED = trace_text('"\\u0058"', '"\\u004d"', '"process\\u005fname"', '"thread\\u005Fname"',
                     [('"\\u0031\\u0032"', 10), ('"\\u0663\\u0664"', 20), ('"\\t13"', 30),
                      ('"5\\n"', 40), ('"\\u0036"', 50)])


def summarize(td, name, text):
    path = td.write(name, text)
    db = connect()
    try:
        db.execute("SELECT profsum_import(?, 'x')", (path,))
        d = json.loads(db.execute("SELECT profsum_summary_json('x', '{\"warmup_steps\":0}')")
                       .fetchone()[0])
        rows = db.execute("SELECT ph, name, step_num FROM trace_events(?) ORDER BY idx",
                          (path,)).fetchall()
    finally:
        db.close()
    for k in ("source_path", "generated_at_utc"):
        d.pop(k)
    d["trace_provenance"].pop("trace_sha256")
    return d, rows


class JsonEscapes(unittest.TestCase):
    def test_escaped_fields_summarize_as_plain_ones(self):
        with TempDir() as td:
            plain, plain_rows = summarize(td, "plain.json", PLAIN)
            esc, esc_rows = summarize(td, "esc.json", ESCAPED)
        self.assertEqual(esc, plain)
        ov = esc["trace_overview"]
        self.assertEqual((ov["num_complete_events"], ov["num_processes"], ov["num_threads"]),
                         (7, 2, 1))
        self.assertEqual([o["name"] for o in esc["hot_ops"]], ["fusion.1", "dot.2"])
        steps = esc["step_time"]["all_steps"]
        self.assertEqual((steps["count"], steps["min"], steps["max"], steps["mean"]),
                         (5, 10.0, 50.0, 30.0))
        self.assertEqual([r[0] for r in esc_rows], ["M", "M", "M", "X", "X", "X", "X", "X", "X", "X"])
        self.assertEqual([r[:2] for r in esc_rows], [r[:2] for r in plain_rows])
        # the column takes integers written as strings, decoded: "\u0031\u0032"
        # is one; Python's int() also reads the others for the summary
        self.assertEqual([r[2] for r in esc_rows[5:]], [12, None, None, None, 6])
        self.assertEqual([r[2] for r in plain_rows[5:]], [12, 34, 13, 5, 6])

    def test_escaped_phase_of_another_length_is_no_phase(self):
        # "\u00e9" decodes to two bytes and "\u0058\u0058" to "XX": no phase
        text = ('{"traceEvents":[{"ph":"\\u00e9","pid":1,"tid":1,"name":"a","ts":0,"dur":1},'
                '{"ph":"\\u0058\\u0058","pid":1,"tid":1,"name":"b","ts":2,"dur":1},'
                '{"ph":"\\u0058","pid":1,"tid":1,"name":"c","ts":4,"dur":1}]}')
        with TempDir() as td:
            d, rows = summarize(td, "odd.json", text)
        self.assertEqual([r[0] for r in rows], ["\u00e9", "XX", "X"])
        self.assertEqual(d["trace_overview"]["num_complete_events"], 1)
        self.assertEqual(d["trace_overview"]["num_events_total"], 3)


    def test_thread_name_with_a_nul_is_not_a_device_op_line(self):
        # "XLA Ops\u0000x" decodes to a name with a NUL byte inside: a whole
        # name of its own, no device-op line
        text = ('{"traceEvents":['
                '{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:TPU:0"}},'
                '{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops\\u0000x"}},'
                '{"ph":"X","pid":1,"tid":2,"name":"fusion.1","ts":0,"dur":10}]}')
        with TempDir() as td:
            d, _ = summarize(td, "nul.json", text)
        self.assertEqual(d["hot_ops"], [])
        self.assertEqual(d["trace_overview"]["num_complete_events"], 1)


if __name__ == "__main__":
    unittest.main()
