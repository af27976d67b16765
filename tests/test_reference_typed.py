"""What the reference's typed decoder does with a trace JSON, beyond the
entries test_reference_edges.py covers: the top-level keys (a repeated
key's last value wins, `displayTimeUnit` must be a string or null,
`traceEvents` a list or the file is not a trace), a byte
order mark, the typed fields of entries
without "ph" and the event-level `process_name` / `thread_name`, and pid or
tid integers beyond 64 bits, and gzip told by the file's name.  Each case states the v1 document's fields the
reference gives and the quality warning profsum adds when the reference
would refuse the file (docs/summary.md).

Run: /usr/bin/python3 tests/run.py test_reference_typed.py
"""
import gzip
import json
import unittest

from util import connect, TempDir

META = ('{"ph":"M","pid":1,"name":"process_name","args":{"name":"/device:TPU:0"}},'
        '{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"XLA Ops"}}')


def op(name, ts, dur):
    return '{"ph":"X","pid":1,"tid":2,"name":"%s","ts":%d,"dur":%d}' % (name, ts, dur)


def summarize(td, text, name="t.json", raw=None):
    """(v1 document, stored diagnostics (kind, detail), trace_events count)."""
    path = td.write(name, raw if raw is not None else text)
    db = connect()
    try:
        db.execute("SELECT profsum_import(?, 'x', json_object('store_diagnostics','all'))", (path,))
        d = json.loads(db.execute("SELECT profsum_summary_json('x')").fetchone()[0])
        diags = db.execute("SELECT kind, detail FROM profsum_diagnostic").fetchall()
        rows = db.execute("SELECT count(*) FROM trace_events(?)", (path,)).fetchone()[0]
    finally:
        db.close()
    return d, diags, rows


def warnings(d):
    return d["trace_overview"]["quality_warnings"]


class TopLevelKeys(unittest.TestCase):
    def test_repeated_trace_events_last_array_is_summarized(self):
        # {"traceEvents": A, "traceEvents": B}: the reference keeps B only
        text = ('{"traceEvents":[%s,%s],"traceEvents":[%s,%s,%s]}'
                % (op("first.1", 0, 10), op("first.2", 20, 10), META, op("fusion.1", 0, 10),
                   op("fusion.1", 20, 5)))
        with TempDir() as td:
            d, diags, rows = summarize(td, text)
        ov = d["trace_overview"]
        self.assertEqual(ov["num_events_total"], 4)
        self.assertEqual(ov["num_complete_events"], 2)
        self.assertEqual([(h["name"], h["count"], h["total_duration"]) for h in d["hot_ops"]],
                         [("fusion.1", 2, 15.0)])
        self.assertEqual(warnings(d), [])
        dup = [det for k, det in diags if k == "duplicate_key"]
        self.assertEqual(len(dup), 1, diags)
        self.assertIn("only the last", dup[0])
        # the rows keep every entry of both arrays
        self.assertEqual(rows, 6)

    def test_three_arrays_and_a_repeated_key_in_between(self):
        text = ('{"traceEvents":[%s],"displayTimeUnit":"ns","traceEvents":[%s],'
                '"traceEvents":[%s,%s]}' % (op("a", 0, 1), op("b", 0, 1), META, op("c", 0, 7)))
        with TempDir() as td:
            d, diags, rows = summarize(td, text)
        self.assertEqual(d["trace_overview"]["num_events_total"], 3)
        self.assertEqual([h["name"] for h in d["hot_ops"]], ["c"])
        self.assertEqual(d["trace_overview"]["display_time_unit"], "ns")
        self.assertEqual(len([k for k, _ in diags if k == "duplicate_key"]), 2)
        self.assertEqual(rows, 5)

    def test_display_time_unit_last_value_wins_null_included(self):
        text = '{"displayTimeUnit":"ms","traceEvents":[%s,%s],"displayTimeUnit":null}' % (
            META, op("f", 0, 10))
        with TempDir() as td:
            d, _, _ = summarize(td, text)
            self.assertIsNone(d["trace_overview"]["display_time_unit"])
            self.assertEqual(warnings(d), [])
            d, _, _ = summarize(td, '{"displayTimeUnit":null,"traceEvents":[%s],'
                                '"displayTimeUnit":"ns"}' % op("f", 0, 1), "b.json")
            self.assertEqual(d["trace_overview"]["display_time_unit"], "ns")

    def test_display_time_unit_not_a_string(self):
        for val in ("5", "true", '["ns"]', '{"u":"ns"}'):
            text = '{"traceEvents":[%s,%s],"displayTimeUnit":%s}' % (META, op("f", 0, 10), val)
            with self.subTest(val=val), TempDir() as td:
                d, diags, _ = summarize(td, text)
                self.assertIsNone(d["trace_overview"]["display_time_unit"])
                self.assertEqual(d["trace_overview"]["num_complete_events"], 1)
                w = warnings(d)
                self.assertEqual(len(w), 1, w)
                self.assertIn("displayTimeUnit", w[0])
                self.assertIn("reference summarizer rejects", w[0])
                self.assertTrue(any(k == "bad_field" and "displayTimeUnit" in det
                                    for k, det in diags), diags)

    def test_trace_events_null_is_not_a_trace(self):
        # the reference's typed decoder refuses null for its list; so does
        # the import (as for a top level without traceEvents)
        with TempDir() as td:
            path = td.write("t.json", '{"traceEvents":null}')
            db = connect()
            try:
                with self.assertRaises(Exception) as cm:
                    db.execute("SELECT profsum_import(?, 'x')", (path,))
                self.assertIn('no "traceEvents" array', str(cm.exception))
                self.assertEqual(db.execute("SELECT count(*) FROM trace_events(?)",
                                            (path,)).fetchone()[0], 0)
            finally:
                db.close()

    def test_byte_order_mark(self):
        text = '{"traceEvents":[%s,%s]}' % (META, op("fusion.1", 0, 10))
        with TempDir() as td:
            d, diags, rows = summarize(td, None, raw=b"\xef\xbb\xbf" + text.encode())
            plain, _, _ = summarize(td, text, "plain.json")
        self.assertEqual(rows, 3)
        self.assertEqual(d["hot_ops"], plain["hot_ops"])
        self.assertEqual(plain["trace_overview"]["quality_warnings"], [])
        w = warnings(d)
        self.assertEqual(len(w), 1, w)
        self.assertIn("byte order mark", w[0])
        self.assertIn("reference summarizer rejects", w[0])
        self.assertEqual([(k, det) for k, det in diags if k == "byte_order_mark"][0][0],
                         "byte_order_mark")


class GzipByName(unittest.TestCase):
    def test_gzip_told_by_content_warns_where_the_name_disagrees(self):
        # the reference decompresses by the name (Path.suffix == ".gz");
        # profsum by the content: same summary, and a warning when they differ
        text = '{"traceEvents":[%s,%s]}' % (META, op("fusion.1", 0, 10))
        cases = [("a.json.gz", True, None), ("b.json", False, None),
                 ("c.json", True, "holds gzip data but its name does not end in .gz"),
                 ("d.json.gz", False, "name ends in .gz but it holds no gzip data"),
                 ("e.json.GZ", True, "holds gzip data but its name does not end in .gz")]
        with TempDir() as td:
            for name, gz, part in cases:
                with self.subTest(name=name):
                    d, _, _ = summarize(td, text, name, raw=gzip.compress(text.encode()) if gz else None)
                    self.assertEqual([h["name"] for h in d["hot_ops"]], ["fusion.1"])
                    w = warnings(d)
                    if part is None:
                        self.assertEqual(w, [])
                    else:
                        self.assertEqual(len(w), 1, w)
                        self.assertIn(part, w[0])


class TypedEntries(unittest.TestCase):
    def check_rejected(self, text, reason, n_complete=1):
        with TempDir() as td:
            d, diags, _ = summarize(td, text)
        w = [x for x in warnings(d) if "left out of the summary" not in x]
        self.assertEqual(len(w), 1, w)
        self.assertTrue(w[0].startswith("1 entry is malformed for the reference summarizer"), w[0])
        self.assertIn(reason, w[0])
        self.assertEqual(d["trace_overview"]["num_complete_events"], n_complete)
        return diags

    def test_name_null(self):
        self.check_rejected('{"traceEvents":[%s,%s,{"ph":"X","pid":1,"tid":2,"name":null,'
                            '"ts":20,"dur":5}]}' % (META, op("fusion.1", 0, 10)),
                            "name not a string")

    def test_event_process_and_thread_name_typed(self):
        for key in ("process_name", "thread_name"):
            with self.subTest(key=key):
                self.check_rejected('{"traceEvents":[%s,%s,{"ph":"X","pid":1,"tid":2,"name":"g",'
                                    '"ts":20,"dur":5,"%s":7}]}' % (META, op("f", 0, 10), key),
                                    "%s not a string" % key, 2)
        # a string or null there is fine
        with TempDir() as td:
            d, _, _ = summarize(td, '{"traceEvents":[%s,{"ph":"X","pid":1,"tid":2,"name":"g",'
                                '"ts":20,"dur":5,"process_name":"p","thread_name":null}]}' % META)
        self.assertEqual(warnings(d), [])

    def test_entry_without_ph_is_typed_too(self):
        cases = [('{"pid":"a"}', "pid/tid not a JSON integer"),
                 ('{"name":"x","ts":"1"}', "ts/dur not a JSON number"),
                 ('{"args":{"tf_op":5}}', "args.tf_op not a string"),
                 ('{"name":3}', "bad_field")]
        for entry, reason in cases:
            with self.subTest(entry=entry):
                self.check_rejected('{"traceEvents":[%s,%s,%s]}' % (META, op("f", 0, 10), entry),
                                    reason)
        # the converter's trailing {} and a well-typed entry without ph: nothing
        with TempDir() as td:
            d, _, _ = summarize(td, '{"traceEvents":[%s,%s,{"pid":1,"name":"n","args":{}},{}]}'
                                % (META, op("f", 0, 10)))
        self.assertEqual(warnings(d), [])
        self.assertEqual(d["trace_overview"]["num_events_total"], 5)

    def test_pid_beyond_64_bits_is_left_out_not_rejected(self):
        big = 9223372036854775808
        text = ('{"traceEvents":[%s,%s,{"ph":"X","pid":%d,"tid":2,"name":"g","ts":20,"dur":5}]}'
                % (META, op("f", 0, 10), big))
        with TempDir() as td:
            d, diags, _ = summarize(td, text)
        w = warnings(d)
        self.assertEqual(len(w), 1, w)
        self.assertNotIn("reject", w[0])
        self.assertIn("1 complete event is left out of the summary", w[0])
        self.assertIn("outside the signed 64-bit range", w[0])
        self.assertEqual(d["trace_overview"]["num_complete_events"], 1)
        # a pid that is no integer literal at all is still a rejection
        self.check_rejected('{"traceEvents":[%s,%s,{"ph":"X","pid":1e30,"tid":2,"name":"g",'
                            '"ts":20,"dur":5}]}' % (META, op("f", 0, 10)), "bad_field")


class IgnoredFieldsAndText(unittest.TestCase):
    """What the reference's decoder (msgspec, typed) does not look at: a
    field it has no slot for (cat, an unknown args key, any unknown key) is
    skipped whatever its type, without a check of its bytes; the text of a
    field it decodes as str must be UTF-8 without a lone surrogate escape
    (docs/summary.md)."""

    def run_raw(self, entry, tail=b""):
        raw = (b'{"traceEvents":[' + META.encode() + b',' + op("fusion.1", 0, 10).encode()
               + b',' + entry + b']' + tail + b'}')
        with TempDir() as td:
            return summarize(td, None, raw=raw)

    def rejected_warning(self, reason):
        return ("1 entry is malformed for the reference summarizer (it would reject the "
                "whole file; first: entry 3, %s); profsum read them as trace_events does "
                "and summarized every event it could read: see profsum_diagnostic." % reason)

    def test_non_string_cat_is_accepted(self):
        for val in (b"5", b"true", b"[1,2]", b'{"a":1}'):
            with self.subTest(val=val):
                d, diags, _ = self.run_raw(b'{"ph":"X","pid":1,"tid":2,"name":"g","ts":20,'
                                           b'"dur":5,"cat":' + val + b'}')
                self.assertEqual(warnings(d), [])
                self.assertEqual([(h["name"], h["count"], h["total_duration"]) for h in d["hot_ops"]],
                                 [("fusion.1", 1, 10.0), ("g", 1, 5.0)])
                # trace_events' own diagnostic stays (docs/trace_events.md)
                self.assertEqual([k for k, _ in diags], ["bad_field"])
                self.assertTrue(diags[0][1].startswith("cat: "), diags)

    def test_invalid_utf8_in_a_field_it_ignores_is_accepted(self):
        cases = [(b'"cat":"\xff"', b""),
                 (b'"args":{"x":"a\xffb","y":["\xc3"]}', b""),
                 (b'"args":{"\xfe":1}', b""),
                 (b'"\xff":"\xff"', b""),
                 (b'"cat":"c"', b',"other\xff":"\xff"')]
        for extra, tail in cases:
            with self.subTest(extra=extra, tail=tail):
                d, diags, _ = self.run_raw(b'{"ph":"X","pid":1,"tid":2,"name":"g","ts":20,'
                                           b'"dur":5,' + extra + b'}', tail)
                self.assertEqual(warnings(d), [])
                self.assertEqual([h["name"] for h in d["hot_ops"]], ["fusion.1", "g"])
                self.assertNotIn("reference_rejects", [k for k, _ in diags])

    def test_invalid_utf8_in_a_typed_string_is_rejected(self):
        cases = [(b'"name":"g\xff"', "invalid_utf8 in name"),
                 (b'"name":"g","args":{"tf_op":"t\xff"}', "invalid_utf8 in args.tf_op"),
                 (b'"name":"g","args":{"long_name":"\xc3"}', "invalid_utf8 in args.long_name"),
                 (b'"name":"g","args":{"source":"\xc3"}', "invalid_utf8 in args.source"),
                 (b'"name":"g","args":{"run_id":"r\xff"}', "invalid_utf8 in args.run_id"),
                 (b'"name":"g","args":{"step_num":"\xff"}', "invalid_utf8 in args.step_num"),
                 (b'"name":"g","thread_name":"\xff"', "invalid_utf8 in thread_name"),
                 (b'"name":"g","process_name":"\xff"', "invalid_utf8 in process_name")]
        for fields, reason in cases:
            with self.subTest(fields=fields):
                d, diags, _ = self.run_raw(b'{"ph":"X","pid":1,"tid":2,"ts":20,"dur":5,'
                                           + fields + b'}')
                self.assertEqual(warnings(d), [self.rejected_warning(reason)])
                self.assertEqual(d["trace_overview"]["num_complete_events"], 2)
                if "_name" not in reason:
                    self.assertIn(("reference_rejects", reason + ": the reference summarizer "
                                   "rejects the file (its decoder refuses that text); profsum "
                                   "reads it with U+FFFD"), diags)
        # the top level's displayTimeUnit is typed too
        d, diags, _ = self.run_raw(b'{"ph":"X","pid":1,"tid":2,"name":"g","ts":20,"dur":5}',
                                   b',"displayTimeUnit":"n\xffs"')
        self.assertEqual(warnings(d), [
            "The trace JSON has data outside its entries that the reference summarizer rejects "
            "(it would reject the whole file); profsum read the events: see profsum_diagnostic."])
        self.assertEqual(d["trace_overview"]["display_time_unit"], "n\ufffds")

    def test_lone_surrogate_escape_in_a_typed_string_is_rejected(self):
        cases = [(rb'"name":"f\ud800"', "lone surrogate escape in name", "f\ufffd"),
                 (rb'"name":"\udc00f"', "lone surrogate escape in name", "\ufffdf"),
                 (rb'"name":"f\ud800\u0041"', "lone surrogate escape in name", "f\ufffdA"),
                 (rb'"name":"f","args":{"tf_op":"\"q\"\udbff"}',
                  "lone surrogate escape in args.tf_op", "f")]
        for fields, reason, name in cases:
            with self.subTest(fields=fields):
                d, diags, _ = self.run_raw(b'{"ph":"X","pid":1,"tid":2,"ts":20,"dur":5,'
                                           + fields + b'}')
                self.assertEqual(warnings(d), [self.rejected_warning(reason)])
                # read leniently all the same
                self.assertEqual([h["name"] for h in d["hot_ops"]], ["fusion.1", name])
                self.assertIn("reference_rejects", [k for k, _ in diags])
        # a surrogate pair is one character: accepted
        d, _, _ = self.run_raw(rb'{"ph":"X","pid":1,"tid":2,"ts":20,"dur":5,"name":"f\ud83d\ude00"}')
        self.assertEqual(warnings(d), [])
        self.assertEqual([h["name"] for h in d["hot_ops"]], ["fusion.1", "f\U0001F600"])


if __name__ == "__main__":
    unittest.main()
