"""A small protobuf encoder for XSpace test files (tests/test_xplane_decode.py,
the fuzz seeds).  No protobuf library: every byte is written here, so a test
can also write what a correct encoder never would (wrong wire types,
unknown fields, fields in any order, truncations, lying lengths).

Low level (each returns bytes of one field):
    varint(v)            the varint of v (negative: 10 bytes, two's complement)
    tag(f, wt)           a field key
    f_varint(f, v)       wire type 0
    f_fixed64(f, v)      wire type 1 (a float is written as a double)
    f_fixed32(f, v)      wire type 5
    f_bytes(f, b)        wire type 2 (str is UTF-8 encoded)
    f_packed(f, vals)    wire type 2 holding varints
    f_group(f, body)     wire types 3 ... 4

Messages (keyword arguments left as None are absent; each returns bytes of
the message's body, ready for f_bytes):
    stat(mid, ...)             XStat (one value kind, or none)
    event(mid, ...)            XEvent
    line(...)                  XLine
    event_meta(id, ...)        XEventMetadata
    stat_meta(id, name)        XStatMetadata
    map_entry(key, value)      an entry of a map<int64, message>
    plane(...)                 XPlane
    xspace(planes, ...)        XSpace (the file)

PlaneBuilder interns stat names and event metadata for readable fixtures.
"""
import gzip
import struct

VARINT, FIXED64, LEN, SGROUP, EGROUP, FIXED32 = 0, 1, 2, 3, 4, 5


def varint(v):
    """Varint bytes of v; negative int64 values take 10 bytes (no zigzag)."""
    if v < 0:
        v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(f, wt):
    return varint((f << 3) | wt)


def f_varint(f, v):
    return tag(f, VARINT) + varint(v)


def f_fixed64(f, v):
    if isinstance(v, float):
        return tag(f, FIXED64) + struct.pack("<d", v)
    return tag(f, FIXED64) + struct.pack("<Q", v & ((1 << 64) - 1))


def f_fixed32(f, v):
    return tag(f, FIXED32) + struct.pack("<I", v & 0xFFFFFFFF)


def f_bytes(f, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return tag(f, LEN) + varint(len(b)) + b


def f_packed(f, vals):
    body = b"".join(varint(v) for v in vals)
    return tag(f, LEN) + varint(len(body)) + body


def f_group(f, body=b""):
    return tag(f, SGROUP) + body + tag(f, EGROUP)


def stat(mid, double=None, u64=None, i64=None, s=None, b=None, ref=None, cstr=None,
         extra=b""):
    """XStat: metadata_id = mid and the value kinds given, in field order
    (protobuf keeps the last one on the wire)."""
    out = f_varint(1, mid)
    if double is not None:
        out += f_fixed64(2, float(double))
    if u64 is not None:
        out += f_varint(3, u64)
    if i64 is not None:
        out += f_varint(4, i64)
    if s is not None:
        out += f_bytes(5, s)
    if b is not None:
        out += f_bytes(6, b)
    if ref is not None:
        out += f_varint(7, ref)
    if cstr is not None:
        out += f_bytes(8, cstr)
    return out + extra


def compress(text):
    """compressed_str_value bytes: gzip of the UTF-8 text."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    return gzip.compress(text, mtime=0)


def event(mid, offset_ps=None, duration_ps=None, num_occurrences=None, stats=(), extra=b""):
    out = f_varint(1, mid)
    if offset_ps is not None:
        out += f_varint(2, offset_ps)
    if duration_ps is not None:
        out += f_varint(3, duration_ps)
    for st in stats:
        out += f_bytes(4, st)
    if num_occurrences is not None:
        out += f_varint(5, num_occurrences)
    return out + extra


def line(id=None, name=None, display_name=None, timestamp_ns=None, duration_ps=None,
         display_id=None, events=(), names_first=False, extra=b""):
    """XLine in field-number order (events before display_name), or with
    names_first every non-event field before the events."""
    head = b""
    tail = b""
    if id is not None:
        head += f_varint(1, id)
    if name is not None:
        head += f_bytes(2, name)
    if timestamp_ns is not None:
        head += f_varint(3, timestamp_ns)
    if duration_ps is not None:
        tail += f_varint(9, duration_ps)
    if display_id is not None:
        tail += f_varint(10, display_id)
    if display_name is not None:
        tail += f_bytes(11, display_name)
    evs = b"".join(f_bytes(4, e) for e in events)
    if names_first:
        return head + tail + evs + extra
    return head + evs + tail + extra


def event_meta(id, name=None, display_name=None, stats=(), child_ids=(), packed=True,
               metadata=None, extra=b""):
    out = f_varint(1, id)
    if name is not None:
        out += f_bytes(2, name)
    if metadata is not None:
        out += f_bytes(3, metadata)
    if display_name is not None:
        out += f_bytes(4, display_name)
    for st in stats:
        out += f_bytes(5, st)
    if child_ids:
        if packed:
            out += f_packed(6, child_ids)
        else:
            out += b"".join(f_varint(6, c) for c in child_ids)
    return out + extra


def stat_meta(id, name=None, description=None):
    out = f_varint(1, id)
    if name is not None:
        out += f_bytes(2, name)
    if description is not None:
        out += f_bytes(3, description)
    return out


def map_entry(key, value):
    return f_varint(1, key) + f_bytes(2, value)


def plane(id=None, name=None, lines=(), event_metadata=(), stat_metadata=(), stats=(),
          metadata_first=False, extra=b""):
    """XPlane.  event_metadata / stat_metadata: (key, message body) pairs or
    a dict.  Field-number order (lines before the maps), or metadata_first."""
    if isinstance(event_metadata, dict):
        event_metadata = list(event_metadata.items())
    if isinstance(stat_metadata, dict):
        stat_metadata = list(stat_metadata.items())
    head = b""
    if id is not None:
        head += f_varint(1, id)
    if name is not None:
        head += f_bytes(2, name)
    ls = b"".join(f_bytes(3, ln) for ln in lines)
    meta = b"".join(f_bytes(4, map_entry(k, v)) for k, v in event_metadata)
    meta += b"".join(f_bytes(5, map_entry(k, v)) for k, v in stat_metadata)
    meta += b"".join(f_bytes(6, st) for st in stats)
    if metadata_first:
        return head + meta + ls + extra
    return head + ls + meta + extra


def xspace(planes=(), errors=(), warnings=(), hostnames=(), extra=b""):
    out = b"".join(f_bytes(1, p) for p in planes)
    out += b"".join(f_bytes(2, e) for e in errors)
    out += b"".join(f_bytes(3, w) for w in warnings)
    out += b"".join(f_bytes(4, h) for h in hostnames)
    return out + extra


class PlaneBuilder:
    """Interns stat names (stat_metadata) and event names (event_metadata)
    so fixtures read like the data they hold.

        pb = PlaneBuilder("/device:TPU:0", id=0)
        pb.line(name="XLA Ops", timestamp_ns=1000, events=[
            pb.event("fusion.1", offset_ps=0, duration_ps=5, stats=[pb.stat("flops", i64=10)])])
        data = xspace([pb.build()], hostnames=["h"])
    """

    def __init__(self, name, id=0):
        self.name = name
        self.id = id
        self.stat_ids = {}
        self.event_ids = {}
        self.emeta = []
        self.lines = []
        self.stats = []

    def sid(self, name):
        if name not in self.stat_ids:
            self.stat_ids[name] = len(self.stat_ids) + 1
        return self.stat_ids[name]

    def stat(self, name, **kw):
        if "ref" in kw and isinstance(kw["ref"], str):
            kw["ref"] = self.sid(kw["ref"])
        return stat(self.sid(name), **kw)

    def eid(self, name, display_name=None, stats=(), **kw):
        if name not in self.event_ids:
            k = len(self.event_ids) + 1
            self.event_ids[name] = k
            self.emeta.append((k, event_meta(k, name=name, display_name=display_name,
                                             stats=stats, **kw)))
        return self.event_ids[name]

    def event(self, name, **kw):
        return event(self.eid(name), **kw)

    def line(self, **kw):
        self.lines.append(line(**kw))

    def plane_stat(self, name, **kw):
        self.stats.append(self.stat(name, **kw))

    def build(self, metadata_first=False):
        smeta = [(i, stat_meta(i, name=n)) for n, i in self.stat_ids.items()]
        return plane(id=self.id, name=self.name, lines=self.lines, event_metadata=self.emeta,
                     stat_metadata=smeta, stats=self.stats, metadata_first=metadata_first)


def seed_inputs():
    """Small XSpace inputs for the fuzz target's seed corpus
    (tests/fuzz_xplane_corpus/): name -> bytes.  Regenerate with
    /usr/bin/python3 tests/xspace_writer.py --seeds tests/fuzz_xplane_corpus"""
    seeds = {}
    # a device plane and a host plane, in both orders of lines and maps
    dev = PlaneBuilder("/device:TPU:0", id=3)
    dev.line(id=1, name="XLA Ops", display_name="XLA Ops", timestamp_ns=1000, events=[
        dev.event("%fusion.1 = f32[8] fusion()", offset_ps=0, duration_ps=500,
                  stats=[dev.stat("flops", i64=64), dev.stat("tf_op", ref="XlaModule:")]),
        dev.event("copy.2", offset_ps=600, duration_ps=0)])
    dev.line(id=0, name="Steps", timestamp_ns=1000, events=[dev.event("1", offset_ps=0, duration_ps=900)])
    dev.plane_stat("peak_teraflops_per_second", double=918.0)
    host = PlaneBuilder("/host:CPU")
    host.line(id=-559038734, name="python", timestamp_ns=-5, events=[
        host.event("train", offset_ps=-100, duration_ps=20, stats=[host.stat("step_num", i64=3)])])
    seeds["two_planes"] = xspace([dev.build(), host.build()], hostnames=["h0"], warnings=["w"],
                                 errors=["e"])
    seeds["metadata_first"] = xspace([dev.build(metadata_first=True)])
    seeds["gzip"] = gzip.compress(seeds["two_planes"], mtime=0)
    # every stat kind
    pb = PlaneBuilder("/device:GPU:0")
    for name, kw in [("d", dict(double=1.5)), ("nan", dict(double=float("nan"))),
                     ("u", dict(u64=2**64 - 1)), ("i", dict(i64=-2**63)), ("s", dict(s="h\u00e9")),
                     ("b", dict(b=b"\xff\xfe")), ("r", dict(ref="d")), ("r2", dict(ref=999)),
                     ("c", dict(cstr=compress("inflated"))), ("cz", dict(cstr=b"x\x9c\x03\x00\x00\x00\x00\x01")),
                     ("cbad", dict(cstr=b"\x1f\x8b\x08")), ("none", dict()),
                     ("multi", dict(i64=1, s="last wins"))]:
        pb.plane_stat(name, **kw)
    seeds["stat_kinds"] = xspace([pb.build()])
    # metadata shapes: child ids packed and not, merged values, repeated keys
    em = [(1, event_meta(1, name="a", display_name="A", child_ids=[2, -3], stats=[stat(1, i64=1)])),
          (2, event_meta(2, name="b", child_ids=[1, 5], packed=False, metadata=b"\x08\x01")),
          (1, event_meta(1, name="a2"))]
    merged = f_varint(1, 7) + f_bytes(2, event_meta(7, name="x")) + f_bytes(2, f_bytes(4, "y"))
    seeds["metadata"] = xspace([plane(name="P", lines=[line(events=[event(1, offset_ps=1), event(7),
                                                                      event(2, num_occurrences=3)])],
                                      event_metadata=em, stat_metadata=[(1, stat_meta(1, name="k"))],
                                      extra=f_bytes(4, merged))])
    # unknown fields of every wire type everywhere, wrong wire types
    unk = (f_varint(99, 1) + f_fixed64(98, 2) + f_fixed32(97, 3) + f_bytes(96, b"zz")
           + f_group(95, f_varint(1, 1) + f_group(2)))
    ev = event(1, offset_ps=1, duration_ps=2, stats=[stat(1, i64=1, extra=unk)], extra=unk)
    seeds["unknown_fields"] = xspace([plane(name="P", lines=[line(id=1, events=[ev], extra=unk)],
                                            event_metadata=[(1, event_meta(1, name="op", extra=unk))],
                                            stat_metadata=[(1, stat_meta(1, name="k") + unk)],
                                            extra=unk)], extra=unk)
    seeds["wrong_wire_types"] = xspace([plane(name="P", lines=[line(extra=f_bytes(3, b"t"))],
                                              stats=[stat(1, extra=f_bytes(4, b"x") + f_varint(5, 1))])],
                                       extra=f_varint(4, 1))
    # lines: names after events, long names, many events
    many = PlaneBuilder("/host:CPU")
    many.line(id=5, name="L" * 300, display_name="D", duration_ps=7, display_id=2, events=[
        many.event("e%d" % (i % 5), offset_ps=i * 10, duration_ps=5) for i in range(60)])
    seeds["many_events"] = xspace([many.build()])
    seeds["names_first"] = xspace([plane(name="P", lines=[line(id=1, name="n", display_name="d",
                                                                events=[event(1)], names_first=True)])])
    seeds["empty_planes"] = xspace([plane(), plane(name="same"), plane(name="same")],
                                   hostnames=["a", "b"])
    seeds["utf8_invalid"] = xspace([plane(name=b"bad\xff", lines=[line(name=b"\xe2\x82", events=[
        event(1, stats=[stat(1, s=b"\xed\xa0\x80x")])])],
        event_metadata=[(1, event_meta(1, name=b"op\xc0"))])], hostnames=[b"h\x80"])
    # groups as deep as protobuf allows inside a plane (99) and a line (98)
    seeds["groups_99_in_plane"] = xspace([plane(name="P", extra=tag(9, SGROUP) * 99 + tag(9, EGROUP) * 99)])
    seeds["groups_98_in_line"] = xspace([plane(name="P", lines=[line(
        id=1, extra=tag(12, SGROUP) * 98 + tag(12, EGROUP) * 98)])])
    # XSpaces whose first bytes look like JSON: a group of field 15 ('{'),
    # field 1 as a fixed32 ("\r[")
    seeds["starts_with_group_15"] = f_group(15) + seeds["two_planes"]
    seeds["planes_as_fixed32"] = tag(1, FIXED32) + b"[\x00\x00\x00" + seeds["two_planes"]
    # broken ones (each a decode error of its own class)
    good = seeds["two_planes"]
    seeds["truncated"] = good[:len(good) // 2]
    seeds["length_past_end"] = xspace([plane(lines=[tag(2, LEN) + varint(9) + b"ab"])])
    seeds["varint_11_bytes"] = xspace([plane(lines=[tag(1, VARINT) + b"\xff" * 10 + b"\x01"])])
    seeds["wire_type_6"] = xspace([plane(stats=[stat(1) + tag(3, 6) + b"\x00"])])
    seeds["field_zero"] = xspace([plane(name="P")]) + b"\x00\x01"
    seeds["end_group_alone"] = xspace([plane()]) + tag(5, EGROUP)
    seeds["group_open"] = xspace([plane(extra=tag(9, SGROUP) + f_varint(1, 1))])
    seeds["claims_2gb"] = tag(1, LEN) + varint(2000000000) + b"\x08\x01" * 4
    seeds["over_2gib"] = tag(1, LEN) + varint(2**31 - 1)
    seeds["gzip_truncated"] = seeds["gzip"][:-9]
    return seeds


if __name__ == "__main__":
    import os
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        os.makedirs(sys.argv[2], exist_ok=True)
        for name, data in sorted(seed_inputs().items()):
            with open(os.path.join(sys.argv[2], name + ".pb"), "wb") as f:
                f.write(data)
    else:
        sys.stderr.write("usage: xspace_writer.py --seeds DIR\n")
        sys.exit(2)
