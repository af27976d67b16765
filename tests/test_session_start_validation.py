"""The profile start of a session's hosts (docs/sessions.md, "One time
axis"): which Task Environment.profile_start_time values place a host, the
profile_start_unusable diagnostic of those that do not, and which of
several starts in one file is the host's (the first usable one); and the
host_steps_unmatched diagnostic of a session in which no host has a step.

Fixtures (tests/xspace_writer.py): XSpaces of one TPU with a Steps line of
steps 1-3 (100 µs apart, each 50 µs long) and an XLA Ops line (a 20 µs op at
each step's start), and Task Environment planes whose profile_start_time
has the value and type a test gives."""
import os
import unittest

import xspace_writer as W
from util import DbTestCase

US = 10 ** 6
START = 1771595650217823548          # a real capture's start, ns since the epoch
SESSION = "plugins/profile/2025_01_01_00_00_00"
NO_START = ("which is no start (ns since the epoch, an integer from 1 to 2^63-1): "
            "the host has no start and is aligned by its steps")


def task_env(plane_id, *values):
    """A Task Environment plane whose profile_start_time stats are values
    (xspace_writer.stat keywords, in this order)."""
    te = W.PlaneBuilder("Task Environment", id=plane_id)
    for kw in values:
        te.plane_stat("profile_start_time", **kw)
    return te


def host(starts=(), shift_us=0, steps=True):
    """The XSpace of a host: starts = [(plane id, stat keywords...), ...],
    one Task Environment plane each; its steps shift_us later than those
    of a host with shift 0 (local times)."""
    pb = W.PlaneBuilder("/device:TPU:0", id=0)
    if steps:
        pb.line(id=1, name="Steps", timestamp_ns=0, events=[
            pb.event(str(k), offset_ps=(k * 100 + shift_us) * US, duration_ps=50 * US) for k in (1, 2, 3)])
    pb.line(id=2, name="XLA Ops", timestamp_ns=0, events=[
        pb.event("fusion.1", offset_ps=(k * 100 + shift_us) * US, duration_ps=20 * US) for k in (1, 2, 3)])
    planes = [pb.build()] + [task_env(s[0], *s[1:]).build() for s in starts]
    return W.xspace(planes, hostnames=["host"])


def stat_offset(data, plane_id, kw):
    """The byte offset in data of the plane stat (field 6 of the plane) of
    profile_start_time with value kw in the Task Environment plane of
    plane_id (profile_start_time is its stat metadata id 1)."""
    enc = W.f_bytes(6, W.stat(1, **kw))
    plane_at = data.index(W.f_varint(1, plane_id) + W.f_bytes(2, "Task Environment"))
    off = data.index(enc, plane_at)
    return off


class StartCase(DbTestCase):
    def pod(self, files, name="p"):
        """Import the session of files {host: bytes} with hosts 'all'."""
        paths = {}
        for h, data in files.items():
            paths[h] = self.td.write(os.path.join(name, SESSION, h + ".xplane.pb"), data)
        self.db.execute("SELECT profsum_import(?, ?, '{\"hosts\": \"all\"}')", (os.path.join(self.td.path, name), name))
        return paths

    def rows(self, sql, *args):
        return self.db.execute(sql, args).fetchall()

    def hosts(self, name="p"):
        return self.rows("SELECT h.host, h.offset_us, h.alignment, a.profile_start_ns FROM profsum_hosts AS h "
                         "JOIN profsum_agg_host AS a USING (trace_id) WHERE h.session_label=? ORDER BY h.host", name)

    def session(self, name="p"):
        return self.rows("SELECT origin_ns, alignment FROM profsum_session WHERE label=?", name)

    def diags(self, kind, name="p"):
        return self.rows("SELECT label, byte_offset, detail FROM profsum_diagnostic WHERE kind=? AND label GLOB ? "
                         "ORDER BY label, byte_offset", kind, name + "/*")


class UnusableStart(StartCase):
    def test_zero_or_negative_start_is_no_start(self):
        """A start of 0 (proto3's unset value, as uint64 or int64) or before
        the epoch: the host is placed by its steps (40 µs after a's: offset
        -40 µs), the session's origin is a's start, and a diagnostic names
        the file, the plane and the value."""
        for i, (kw, shown) in enumerate(((dict(u64=0), "0 (uint64)"), (dict(i64=0), "0 (int64)"),
                                         (dict(i64=-5), "-5 (int64)"))):
            with self.subTest(value=shown):
                name = "z%d" % i
                b = host([(9, kw)], shift_us=40)
                paths = self.pod({"a": host([(9, dict(u64=START))]), "b": b}, name)
                self.assertEqual(self.session(name), [(START, "steps")])
                self.assertEqual(self.hosts(name), [("a", 0.0, "profile_start_time", START),
                                                    ("b", -40.0, "steps", None)])
                self.assertEqual(self.diags("profile_start_unusable", name), [
                    (name + "/b", stat_offset(b, 9, kw),
                     "'%s': the Task Environment plane (id 9) has profile_start_time %s, %s"
                     % (paths["b"], shown, NO_START))])

    def test_zero_start_of_every_host(self):
        """No host has a usable start: no origin, the first host is the
        reference of the steps, each host says why."""
        paths = self.pod({"a": host([(9, dict(u64=0))]), "b": host([(9, dict(i64=-1))], shift_us=25)})
        self.assertEqual(self.session(), [(None, "steps")])
        self.assertEqual(self.hosts(), [("a", 0.0, "steps", None), ("b", -25.0, "steps", None)])
        self.assertEqual([(l, d) for l, _, d in self.diags("profile_start_unusable")], [
            ("p/a", "'%s': the Task Environment plane (id 9) has profile_start_time 0 (uint64), %s"
             % (paths["a"], NO_START)),
            ("p/b", "'%s': the Task Environment plane (id 9) has profile_start_time -1 (int64), %s"
             % (paths["b"], NO_START))])

    def test_other_unusable_values_say_so(self):
        """Values of another type, or beyond int64, were dropped unsaid:
        each is now named in the diagnostic (a long text cut at 40 bytes,
        at a character's end)."""
        long_text = "é" * 30                                    # 60 bytes
        cases = [(dict(double=float(START)), "%r (double)" % float(START)),
                 (dict(double=float("nan")), "NaN (double)"),
                 (dict(s=str(START)), "'%d' (string)" % START),
                 (dict(s=long_text), "'%s'... (string)" % ("é" * 20)),
                 (dict(u64=2 ** 64 - 1), "18446744073709551615 (uint64, beyond int64)"),
                 (dict(b=b"\x01\x02\x03"), "of 3 bytes (bytes)")]
        for i, (kw, shown) in enumerate(cases):
            with self.subTest(value=shown):
                name = "o%d" % i
                b = host([(7, kw)], shift_us=10)
                paths = self.pod({"a": host([(9, dict(u64=START))]), "b": b}, name)
                self.assertEqual(self.hosts(name), [("a", 0.0, "profile_start_time", START),
                                                    ("b", -10.0, "steps", None)])
                self.assertEqual(self.diags("profile_start_unusable", name), [
                    (name + "/b", stat_offset(b, 7, kw),
                     "'%s': the Task Environment plane (id 7) has profile_start_time %s, %s"
                     % (paths["b"], shown, NO_START))])


class TwoTaskEnvironments(StartCase):
    def test_the_first_start_wins(self):
        """Two Task Environment planes with a start each: the first plane's
        is the host's (as the first plane with a device stat gives it)."""
        b = host([(9, dict(u64=START + 300000)), (10, dict(u64=START))])
        self.pod({"a": host([(9, dict(u64=START))]), "b": b})
        self.assertEqual(self.session(), [(START, "profile_start_time")])
        self.assertEqual(self.hosts(), [("a", 0.0, "profile_start_time", START),
                                        ("b", 300.0, "profile_start_time", START + 300000)])
        self.assertEqual(self.diags("profile_start_unusable"), [])

    def test_the_first_usable_start_wins(self):
        """An unusable start in the first plane, a usable one in the
        second: the second's places the host, and the diagnostic says so."""
        b = host([(9, dict(u64=0)), (10, dict(u64=START + 200000)), (11, dict(u64=START + 900000))])
        paths = self.pod({"a": host([(9, dict(u64=START))]), "b": b})
        self.assertEqual(self.hosts(), [("a", 0.0, "profile_start_time", START),
                                        ("b", 200.0, "profile_start_time", START + 200000)])
        self.assertEqual(self.diags("profile_start_unusable"), [
            ("p/b", stat_offset(b, 9, dict(u64=0)),
             "'%s': the Task Environment plane (id 9) has profile_start_time 0 (uint64), which is no start "
             "(ns since the epoch, an integer from 1 to 2^63-1): a later one, %d, is the host's start"
             % (paths["b"], START + 200000))])

    def test_two_stats_in_one_plane(self):
        """Two profile_start_time stats in one plane: the first usable."""
        self.pod({"a": host([(9, dict(u64=START))]),
                  "b": host([(9, dict(i64=-3), dict(u64=START + 50000), dict(u64=START + 70000))])})
        self.assertEqual(self.hosts(), [("a", 0.0, "profile_start_time", START),
                                        ("b", 50.0, "profile_start_time", START + 50000)])
        self.assertEqual(len(self.diags("profile_start_unusable")), 1)


class NoSteps(StartCase):
    NONE = ("no host of this session has a step measured on a device (a Steps line of step numbers, "
            "or host 'train' events with a step_num): profsum_stragglers has no row for this session")

    def test_no_host_has_steps(self):
        """No host has a step: profsum_stragglers is empty, and every host
        says why."""
        self.pod({"a": host([(9, dict(u64=START))], steps=False),
                  "b": host([(9, dict(u64=START + 1000))], steps=False)})
        self.assertEqual(self.rows("SELECT count(*) FROM profsum_stragglers"), [(0,)])
        self.assertEqual(self.diags("host_steps_unmatched"), [("p/a", None, self.NONE), ("p/b", None, self.NONE)])

    def test_one_host_alone_without_steps(self):
        self.pod({"a": host([(9, dict(u64=START))], steps=False)})
        self.assertEqual(self.diags("host_steps_unmatched"), [("p/a", None, self.NONE)])


if __name__ == "__main__":
    unittest.main()
