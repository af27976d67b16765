"""Trace-derived text on a terminal (ext/cli/profsum_cli.c, "Terminal-safe
text"; docs/cli.md, "Terminal output"): op, region and process names with
ESC/CSI/OSC sequences, C1 controls, DEL, bidi overrides and newlines are
shown as visible escapes when stdout or stderr is a terminal (a real one:
a pseudo-terminal from os.openpty, set raw so that the line discipline
does not turn "\\n" into "\\r\\n"), and a newline inside a markdown table
cell no longer breaks the table; to a pipe or a file the bytes are exactly
the reference's (the SQL functions' text).

The trace is generated here (the same kinds of names as the reproducer
escapes.trace.json); when that reproducer is present beside the corpus it
is checked too.

Run: /usr/bin/python3 tests/run.py test_cli_terminal.py
"""
import json
import os
import pty
import re
import select
import subprocess
import time
import tty
import unittest

from util import connect, REPRO as REPRO_DIR
from test_cli import CliBase, CLI, F1_BEFORE

REPRO = os.path.join(REPRO_DIR, "escapes.trace.json")

# Names that try to act on a terminal or on a markdown table.
CSI_OSC = "\x1b[31mRED\x1b]0;pwned\x07"              # colour, then set the window title
NEWLINE_TABLE = "a|b|c\n# heading\n| fake | row |"    # a line break and a forged row
C1_DEL = "c1\u009b2Jdel\x7fcr\rback\x08"             # 8-bit CSI, DEL, CR, BS
BIDI = "\u202etxt.exe"                               # right-to-left override
PROCESS = "/device:TPU:0 \x1b[2J\nnext line"          # clear screen + newline, in KPI cells
NAMES = [CSI_OSC, NEWLINE_TABLE, C1_DEL, BIDI, "normal_op"]


def escapes_trace():
    """Eight steps of the names above on one TPU, with tf_op paths (regions)
    and HLO args, like the reproducer."""
    ev = [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": PROCESS}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "XLA Ops"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "Steps"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 3, "args": {"name": "XLA Modules"}},
    ]
    for step in range(8):
        t0 = step * 1000
        ev.append({"ph": "X", "name": str(step), "pid": 1, "tid": 2, "ts": t0, "dur": 1000,
                   "args": {"step_num": str(step)}})
        ev.append({"ph": "X", "name": "jit_train(1)", "pid": 1, "tid": 3, "ts": t0, "dur": 1000})
        for i, name in enumerate(NAMES):
            ev.append({"ph": "X", "name": name, "pid": 1, "tid": 1, "ts": t0 + 100 * i, "dur": 50 + i,
                       "args": {"tf_op": "jit(f)/%s/x" % name, "hlo_op": name, "hlo_module": "m" + name,
                                "long_name": name + " = f32[1] fusion()", "source": name}})
    return {"traceEvents": ev, "displayTimeUnit": "ns"}


# What must never reach a terminal: C0 controls but TAB and LF, DEL, C1
# controls (UTF-8 C2 80..C2 9F), bidi embedding/override/isolate controls.
UNSAFE = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def run_on_tty(argv, cwd, env, stdout_tty=True, stderr_tty=True, timeout=120):
    """Run argv with stdout and/or stderr on pseudo-terminals (raw mode);
    returns (returncode, stdout bytes, stderr bytes)."""
    masters, ends = {}, {}
    for name, want in (("out", stdout_tty), ("err", stderr_tty)):
        if want:
            m, s = pty.openpty()
            tty.setraw(s)
            masters[name], ends[name] = m, s
        else:
            ends[name] = subprocess.PIPE
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=ends["out"], stderr=ends["err"])
    for name in masters:
        os.close(ends[name])
    data = {"out": b"", "err": b""}
    open_fds = {m: name for name, m in masters.items()}
    deadline = time.time() + timeout
    while open_fds and time.time() < deadline:
        r, _, _ = select.select(list(open_fds), [], [], 0.5)
        for fd in r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:                     # EIO: the child closed the terminal
                chunk = b""
            if chunk:
                data[open_fds[fd]] += chunk
            else:
                os.close(fd)
                del open_fds[fd]
        if not r and proc.poll() is not None:
            # the child is gone and nothing is left to read
            for fd in list(open_fds):
                os.close(fd)
                del open_fds[fd]
    for fd in open_fds:
        os.close(fd)
    for name, stream in (("out", proc.stdout), ("err", proc.stderr)):
        if stream is not None:
            data[name] += stream.read()
            stream.close()
    return proc.wait(timeout=30), data["out"], data["err"]


class TerminalBase(CliBase):
    def setUp(self):
        super().setUp()
        self.trace_path = self.td.write("esc.trace.json", escapes_trace())
        self.db_path = os.path.join(self.td.path, "esc.db")
        self.run_cli("summarize", "--trace-file", self.trace_path, "--db", self.db_path,
                     "--label", "esc", "--output", "s.json")

    def tty(self, *args, stdout_tty=True, stderr_tty=True, rc=0, env=None):
        code, out, err = run_on_tty([CLI] + list(args), self.td.path, env or self.env,
                                    stdout_tty=stdout_tty, stderr_tty=stderr_tty)
        if rc is not None:
            self.assertEqual(code, rc, "profsum %r\nstdout: %r\nstderr: %r" % (args, out[:2000], err))
        return out, err

    def pipe(self, *args, rc=0, env=None):
        p = subprocess.run([CLI] + list(args), cwd=self.td.path, env=env or self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if rc is not None:
            self.assertEqual(p.returncode, rc, "profsum %r\nstderr: %r" % (args, p.stderr))
        return p.stdout, p.stderr

    def sql_text(self, sql, *params):
        db = connect(self.db_path)
        try:
            return db.execute(sql, params).fetchone()[0]
        finally:
            db.close()

    def assert_safe(self, data):
        data.decode("utf-8")                 # no byte that is not UTF-8 (0x9b alone is CSI)
        m = UNSAFE.search(data)
        if m:
            self.fail("unsafe byte %r at %d: %r" % (m.group(), m.start(), data[max(0, m.start() - 60):m.start() + 60]))


class Report(TerminalBase):
    def test_pipe_keeps_the_reference_bytes(self):
        want = self.sql_text("SELECT profsum_report_md('esc', 10)").encode() + b"\n"
        self.assertIn(CSI_OSC.encode(), want)        # the raw names are in the reference's text
        out, _ = self.pipe("report", "--db", self.db_path, "--trace", "esc")
        self.assertEqual(out, want)
        # --output: the file holds the same bytes, also when stdout is a terminal
        out, _ = self.tty("report", "--db", self.db_path, "--trace", "esc", "--output", "r.md")
        self.assertEqual(out, b"r.md\n")
        with open(os.path.join(self.td.path, "r.md"), "rb") as f:
            self.assertEqual(f.read(), want[:-1])      # the report ends with its newline already
        # stderr a terminal, stdout a pipe: still the raw bytes on stdout
        out, _ = self.tty("report", "--db", self.db_path, "--trace", "esc", stdout_tty=False)
        self.assertEqual(out, want)

    def test_terminal_shows_escapes(self):
        out, err = self.tty("report", "--db", self.db_path, "--trace", "esc")
        self.assertEqual(err, b"")
        self.assert_safe(out)
        text = out.decode()
        self.assertIn(r"`\x1b[31mRED\x1b]0;pwned\x07`", text)
        self.assertIn(r"`c1\u009b2Jdel\x7fcr\rback\x08`", text)
        self.assertIn(r"`\u202etxt.exe`", text)
        # the newline stays inside its cell: every table line is one whole row
        self.assertIn(r"`a\|b\|c\n# heading\n\| fake \| row \|`", text)
        for line in text.splitlines():
            self.assertFalse(line.startswith("# heading"), line)
            if line.startswith("|"):
                self.assertTrue(line.endswith("|"), line)
        rows = [l for l in text.splitlines() if l.startswith("| `") and "heading" in l]
        self.assertGreaterEqual(len(rows), 2)       # top ops, regions, ...
        self.assertNotIn("\n| fake |", text)

    def test_terminal_same_report_for_clean_names(self):
        # a trace without control characters: the terminal shows the very bytes of the pipe
        p = self.trace("f1.json", F1_BEFORE)
        db = os.path.join(self.td.path, "f1.db")
        self.run_cli("summarize", "--trace-file", p, "--db", db, "--label", "f1", "--output", "f1.summary.json")
        for extra in ([], ["--kpis"], ["--top-k", "2"]):
            want, _ = self.pipe("report", "--db", db, "--trace", "f1", *extra)
            out, _ = self.tty("report", "--db", db, "--trace", "f1", *extra)
            self.assertEqual(out, want, extra)

    def test_kpi_cells(self):
        out, _ = self.tty("report", "--db", self.db_path, "--trace", "esc", "--kpis")
        self.assert_safe(out)
        text = out.decode()
        self.assertIn("## KPIs", text)
        # the KPI table writes a newline of a name as a space (a markdown cell);
        # the terminal shows the escape sequence as text
        self.assertIn(r"| /device:TPU:0 \x1b[2J next line |", text)
        kpi = text[text.index("## KPIs"):]
        for line in [l for l in kpi.splitlines()[1:] if l]:
            self.assertTrue(line.startswith("|") and line.endswith("|"), line)
        # through a pipe, the reference's bytes
        want = self.sql_text("SELECT profsum_report_md('esc', 10, '{\"kpis\": true}')").encode() + b"\n"
        got, _ = self.pipe("report", "--db", self.db_path, "--trace", "esc", "--kpis")
        self.assertEqual(got, want)
        self.assertIn(PROCESS.replace("\n", " ").encode(), got)   # the KPI cell's text

    def test_html_on_a_terminal(self):
        out, _ = self.tty("report", "--db", self.db_path, "--trace", "esc", "--format", "html")
        self.assert_safe(out)
        self.assertIn(b"<!DOCTYPE html>", out)
        want = self.sql_text("SELECT profsum_report_html('esc', 10)").encode() + b"\n"
        got, _ = self.pipe("report", "--db", self.db_path, "--trace", "esc", "--format", "html")
        self.assertEqual(got, want)

    @unittest.skipUnless(os.path.exists(REPRO), "the shared reproducer is not present")
    def test_shared_reproducer(self):
        out, _ = self.tty("report", "--summary", REPRO, "--kpis")
        self.assert_safe(out)
        for line in out.decode().splitlines():
            if line.startswith("|"):
                self.assertTrue(line.endswith("|"), line)


class OtherCommands(TerminalBase):
    def test_json_commands(self):
        # JSON is written with ensure_ascii: the same bytes on a terminal and a pipe
        self.run_cli("summarize", "--trace-file", self.trace_path, "--db", self.db_path,
                     "--label", "esc2", "--output", "s2.json")
        for args in (["query", "--db", self.db_path, "--trace", "esc", "--question", "top ops"],
                     ["query", "--db", self.db_path, "--trace", "esc", "--question", "context for op RED"],
                     ["compare", "--db", self.db_path, "--before", "esc", "--after", "esc2"]):
            want, _ = self.pipe(*args)
            out, _ = self.tty(*args)
            self.assert_safe(out)
            self.assertEqual(out, want, args)
            if args[0] == "query":
                self.assertIn(b"\\u001b[31mRED", out)
        out, _ = self.tty("summarize", "--trace-file", self.trace_path)
        self.assert_safe(out)
        json.loads(out)
        out, _ = self.tty("track", "--before", self.trace_path, "--after", self.trace_path)
        self.assert_safe(out)

    def test_error_message_quoting_a_name(self):
        name = "bad\x1b]0;pwned\x07\n.json"
        self.td.write(name, "{ not json")
        _, err = self.tty("summarize", "--trace-file", name, rc=1)
        self.assert_safe(err)
        self.assertIn(rb"bad\x1b]0;pwned\x07\n.json", err)
        self.assertEqual(err.count(b"\n"), 1)          # one line, not two
        # to a pipe the message keeps the name's bytes
        _, err = self.pipe("summarize", "--trace-file", name, rc=1)
        self.assertIn(name.encode(), err)
        # a label typed on the command line and quoted back
        _, err = self.tty("report", "--db", self.db_path, "--trace", "x\x1b[2Jy", rc=1)
        self.assert_safe(err)
        self.assertIn(rb"x\x1b[2Jy", err)

    def test_progress_line_name(self):
        name = "p\x1b[31m\u009b.json"
        self.td.write(name, escapes_trace())
        env = dict(self.env, PROFSUM_PROGRESS_DELAY_MS="0")
        out, err = self.tty("summarize", "--trace-file", name, "--output", "o.json", stdout_tty=False, env=env)
        self.assertEqual(out, b"o.json\n")
        self.assertIn(rb"profsum: imported p\x1b[31m\u009b.json", err)
        self.assertNotIn(b"\x1b[31m", err)
        self.assertNotIn("\u009b".encode(), err)

    def test_track_note_quotes_a_label(self):
        # all steps warmup: the note on stderr names the trace's label, from its file name
        name = "w\x1b[1m.json"
        self.td.write(name, F1_BEFORE)
        _, err = self.tty("track", "--before", name, "--after", name, "--warmup-steps", "100",
                          stdout_tty=False)
        self.assertIn(b"profsum track: note:", err)
        self.assertIn(rb"w\x1b[1m", err)
        self.assert_safe(err)

    def test_output_path_echo_and_trim(self):
        out, _ = self.tty("query", "--db", self.db_path, "--trace", "esc", "--question", "top ops",
                          "--output", "q\x1b[2J.json")
        self.assertEqual(out, rb"q\x1b[2J.json" + b"\n")
        self.assertTrue(os.path.exists(os.path.join(self.td.path, "q\x1b[2J.json")))
        out, _ = self.tty("trim", "--trace-file", self.trace_path, "--output", "t\x07.json.gz", "--pid", "1")
        self.assertEqual(out.splitlines()[0], rb"t\x07.json.gz")
        out, _ = self.pipe("trim", "--trace-file", self.trace_path, "--output", "t\x07.json.gz", "--pid", "1")
        self.assertEqual(out.splitlines()[0], b"t\x07.json.gz")

    def test_invalid_utf8_bytes(self):
        # a byte that is not UTF-8 (0x9b alone is CSI on an 8-bit terminal)
        name = b"u\x9b2J\xff.json"
        path = os.path.join(self.td.path.encode(), name)
        with open(path, "wb") as f:
            f.write(b"{ not json")
        _, err = self.tty(b"summarize".decode(), "--trace-file", os.fsdecode(name), rc=1)
        self.assert_safe(err)
        # the extension's messages are valid UTF-8 (a byte that starts no
        # sequence reads as U+FFFD), so the name comes back as such
        self.assertIn("u\ufffd2J\ufffd.json".encode(), err)
        self.assertNotIn(b"\x9b", err)


if __name__ == "__main__":
    unittest.main()
