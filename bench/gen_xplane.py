#!/usr/bin/python3
"""gen_xplane.py - deterministic generator of TPU-shaped XSpace captures.

    gen_xplane.py --size 100MB --out DIR/host.xplane.pb [--json OUT.trace.json.gz]

Writes `<host>.xplane.pb` as JAX's profiler does on a TPU host (docs/spec/
xplane.md §2.2, §2.3), and with --json the trace JSON that the TSL converter
makes of it (§2.4), so both inputs hold the same events:

  * XSpace: planes, then `hostnames`.  Each plane in field-number order: id,
    name, lines, event metadata, stat metadata, plane stats (the maps after
    the lines, as protobuf writes them).
  * `/host:CPU`: two Python threads whose lines carry, per step, `train`,
    `PjitFunction(train_step)`, `jit_train_step` and a few `$file.py:N fn`
    events nested inside one another.
  * `/device:TPU:N` (--devices of them): lines `Steps` (one event per step,
    named by its number, with `step_num` and `group_id`), `XLA Modules`
    (`jit_train_step(<fingerprint>)` with `run_id`), `XLA Ops` (per step a
    `while` op over the layers with the layers' fusions, convolutions, dots,
    collectives and copies inside, idle gaps between some; the op metadata
    carries `hlo_category`, `tf_op`, `long_name`, `flops`, `bytes_accessed`,
    `source`, `hlo_module`) and plane stats with the device's peaks.
  * JSON (--json): `{"displayTimeUnit":"ns","metadata":{...},"traceEvents":
    [...,{}]}`: `M` events for process and thread names, then one `X` event
    per XEvent, plane by plane and line by line; pid = plane index + 1 and
    tid = line id (summary §6.1, so the two inputs have the same tracks);
    ts and dur = picoseconds / 1e6 printed with `%.17g`; args the metadata
    stats then the event stats as strings, sorted by key, `flops` left out
    (the converter drops it).

Output on stdout: one JSON object: events, bytes, json_bytes (uncompressed),
json_gz_bytes, steps, devices, seconds.  Standard library only.
"""
import argparse
import gzip
import json
import os
import random
import struct
import sys
import threading
import time
import queue

VARINT, FIXED64, LEN = 0, 1, 2


def parse_size(s):
    s = s.strip()
    units = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10),
             ("GB", 10**9), ("MB", 10**6), ("KB", 10**3),
             ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10),
             ("G", 10**9), ("M", 10**6), ("K", 10**3)]
    for u, m in units:
        if s.endswith(u):
            return int(float(s[:-len(u)]) * m)
    return int(s)


_SMALL = [bytes([v]) if v < 128 else bytes([(v & 0x7F) | 0x80, v >> 7]) for v in range(1 << 14)]


def varint(v):
    """Varint bytes of v >= 0."""
    if v < 16384:
        return _SMALL[v]
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(f, wt):
    return varint((f << 3) | wt)


def f_varint(f, v):
    return key(f, VARINT) + varint(v)


def f_double(f, v):
    return key(f, FIXED64) + struct.pack("<d", v)


def f_bytes(f, b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return key(f, LEN) + varint(len(b)) + b


# Stat metadata ids, the same on every plane.
STATS = ["step_num", "group_id", "hlo_category", "tf_op", "long_name", "flops", "bytes_accessed",
         "source", "run_id", "hlo_module", "program_id", "peak_teraflops_per_second",
         "peak_hbm_bw_gigabytes_per_second", "core_count", "device_vendor"]
SID = {n: i + 1 for i, n in enumerate(STATS)}

# The layer's op kinds: (name prefix, hlo_category, tf_op tail, mean µs, flops factor).
KINDS = [
    ("fusion", "loop fusion", "add", 6.0, 2),
    ("convolution", "convolution", "conv_general_dilated", 30.0, 400),
    ("dot", "matmul", "dot_general", 24.0, 300),
    ("fusion", "output fusion", "mul", 8.0, 4),
    ("all-reduce", "all-reduce", "psum", 40.0, 1),
    ("copy", "data formatting", "copy", 3.0, 0),
    ("fusion", "reduction fusion", "reduce_sum", 5.0, 3),
    ("all-gather", "all-gather", "all_gather", 18.0, 0),
]


def stat_u64(name, v):
    return f_varint(1, SID[name]) + f_varint(3, v)


def stat_i64(name, v):
    return f_varint(1, SID[name]) + f_varint(4, v & ((1 << 64) - 1))


def stat_str(name, s):
    return f_varint(1, SID[name]) + f_bytes(5, s)


def stat_double(name, v):
    return f_varint(1, SID[name]) + f_double(2, v)


def event_meta(mid, name, stats):
    body = f_varint(1, mid) + f_bytes(2, name) + f_bytes(4, name)
    for s in stats:
        body += f_bytes(5, s)
    return body


def map_entry(k, body):
    return f_varint(1, k) + f_bytes(2, body)


def json_str(s):
    return json.dumps(s, ensure_ascii=False)


def fmt(ps):
    return "%.17g" % (ps / 1e6)


class Plane:
    """One plane's lines, metadata and JSON text in the making."""

    def __init__(self, index, name):
        self.index = index
        self.pid = index + 1
        self.name = name
        self.lines = []          # (id, name, timestamp_ns, [event bytes chunks])
        self.meta = {}           # id -> (name, [(stat name, value str, stat bytes)])
        self.stats = b""

    def add_meta(self, mid, name, stats):
        """stats: (stat name, python value) pairs; bytes and JSON args."""
        enc = []
        for n, v in stats:
            if isinstance(v, float):
                enc.append((n, "%g" % v, stat_double(n, v)))
            elif isinstance(v, int):
                enc.append((n, str(v), stat_u64(n, v)))
            else:
                enc.append((n, v, stat_str(n, v)))
        self.meta[mid] = (name, enc)

    def body(self):
        out = [f_varint(1, self.index), f_bytes(2, self.name)]
        for lid, lname, ts_ns, chunks in self.lines:
            evs = b"".join(chunks)
            ln = f_varint(1, lid) + f_bytes(2, lname) + f_varint(3, ts_ns) + evs
            out.append(f_bytes(3, ln))
        for mid, (name, enc) in self.meta.items():
            out.append(f_bytes(4, map_entry(mid, event_meta(mid, name, [e[2] for e in enc]))))
        for i, n in enumerate(STATS):
            out.append(f_bytes(5, map_entry(i + 1, f_varint(1, i + 1) + f_bytes(2, n))))
        out.append(self.stats)
        return b"".join(out)


def xevent(mid, off_ps, dur_ps, stats=b""):
    return key(4, LEN) + varint(len(b := (_SMALL[8] + varint(mid) + _SMALL[16] + varint(off_ps)
                                          + _SMALL[24] + varint(dur_ps) + stats))) + b


class JsonOut:
    """The trace JSON, written by a second thread (gzip runs there)."""

    def __init__(self, path):
        self.path = path
        self.q = queue.Queue(maxsize=64)
        self.n = 0
        self.t = threading.Thread(target=self._run)
        self.first = True
        self.t.start()

    def _run(self):
        op = gzip.open if self.path.endswith(".gz") else open
        kw = {"compresslevel": 6} if self.path.endswith(".gz") else {}
        with op(self.path, "wb", **kw) as f:
            while True:
                item = self.q.get()
                if item is None:
                    return
                f.write(item)

    def write(self, parts):
        s = "".join(parts).encode("utf-8")
        self.n += len(s)
        self.q.put(s)

    def event(self, text):
        if self.first:
            self.first = False
            return text
        return "," + text

    def close(self):
        self.q.put(None)
        self.t.join()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", required=True, help="XPlane size: 10MB, 100MB, 1GB (powers of 1000) or 64MiB")
    ap.add_argument("--out", required=True, help="the .xplane.pb to write")
    ap.add_argument("--json", help="also write the trace JSON conversion here (.gz: gzipped)")
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    t0 = time.time()
    target = parse_size(args.size)
    rnd = random.Random(args.seed)
    ndev, nlayers = args.devices, args.layers
    base_ns = 1_700_000_000_000          # line start: ts about 1.7e9 µs, as gen_trace.py
    ops_per_step = 2 + nlayers * len(KINDS)
    # An XLA Ops event takes about 16 bytes: steps from the target size.
    per_step = ndev * (ops_per_step * 16.5 + 40) + 200
    steps = max(2, int(target / per_step))
    jout = JsonOut(args.json) if args.json else None
    jparts = []
    if jout:
        jparts.append('{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[')

    planes = [Plane(0, "/host:CPU")] + [Plane(d + 1, "/device:TPU:%d" % d) for d in range(ndev)]
    # Op metadata of the devices: per layer and kind one op, a while op, a
    # copy-start; ids from 1.
    op_names = []
    mid = 1
    for layer in range(nlayers):
        for k, (pfx, cat, tail, mean, ff) in enumerate(KINDS):
            op_names.append((mid, "%s.%d" % (pfx, layer * len(KINDS) + k + 1), cat, tail, mean, ff, layer))
            mid += 1
    while_mid, module_mid, step_mid0 = mid, mid + 1, mid + 2
    fp = 8461236012745381274
    for p in planes[1:]:
        for (m, name, cat, tail, mean, ff, layer) in op_names:
            shape = "bf16[%d,%d,%d]{2,1,0}" % (8 << (layer % 3), 128 << (layer % 4), 1024)
            p.add_meta(m, name, [
                ("bytes_accessed", 1000003 * (m % 97 + 1)),
                ("flops", ff * 1000 * (m % 13 + 1)),
                ("hlo_category", cat),
                ("hlo_module", "jit_train_step"),
                ("long_name", "%%%s = %s %s(%s %%param.%d)" % (name, shape, name.split(".")[0], shape, m)),
                ("source", "model.py:%d" % (100 + layer)),
                ("tf_op", "jit(train_step)/jit(main)/layer_%d/%s" % (layer, tail)),
            ])
        p.add_meta(while_mid, "while.1", [("hlo_category", "control flow"), ("hlo_module", "jit_train_step"),
                                          ("tf_op", "jit(train_step)/jit(main)/while")])
        p.add_meta(module_mid, "jit_train_step(%d)" % fp, [("program_id", 17)])
        p.stats = b"".join(f_bytes(6, s) for s in [
            stat_double("peak_teraflops_per_second", 918.0),
            stat_double("peak_hbm_bw_gigabytes_per_second", 1640.0),
            stat_u64("core_count", 1), stat_str("device_vendor", "Google")])
    host = planes[0]
    host_names = ["train", "PjitFunction(train_step)", "jit_train_step", "$train.py:97 run_step",
                  "$data.py:42 next_batch"]
    for i, n in enumerate(host_names):
        host.add_meta(i + 1, n, [])

    # Per device the step's op layout: variants of (mid, rel_off_ps, dur_ps).
    variants = []
    for v in range(3):
        evs = []
        t = 2_000_000                         # 2 µs after the step start
        wstart = t
        for (m, name, cat, tail, mean, ff, layer) in op_names:
            dur = int(rnd.expovariate(1.0 / mean) * 1e6) + 1000
            if rnd.random() < 0.05:
                t += int(rnd.uniform(0.5, 20) * 1e6)      # an idle gap
            evs.append((m, t, dur))
            t += dur + int(rnd.uniform(0.05, 0.4) * 1e6)
        evs.insert(0, (while_mid, wstart - 500_000, t - wstart + 1_000_000))
        variants.append((evs, t + 3_000_000))
    step_len = max(v[1] for v in variants) + 5_000_000

    lines_dev = []
    for d, p in enumerate(planes[1:]):
        steps_l = (1, "Steps", base_ns, [])
        mods_l = (2, "XLA Modules", base_ns, [])
        ops_l = (3, "XLA Ops", base_ns, [])
        p.lines += [steps_l, mods_l, ops_l]
        lines_dev.append((p, steps_l, mods_l, ops_l))
    host_l = [(1001 + i, "python%d" % i, base_ns, []) for i in range(2)]
    host.lines += host_l

    # Step metadata (the Steps line's events are named by their number).
    for (p, _, _, _) in lines_dev:
        for st in range(steps):
            p.meta[step_mid0 + st] = (str(st), [])

    def dev_events(d, s):
        """The device d's events of step s: (line id, mid, off, dur, stat pairs)."""
        s0 = s * step_len
        evs, vlen = variants[(s * 7 + d) % len(variants)]
        yield (1, step_mid0 + s, s0, vlen, (("step_num", s), ("group_id", s)))
        yield (2, module_mid, s0 + 1_000_000, vlen - 2_000_000, (("run_id", 1234567 + s),))
        for (m, off, dur) in evs:
            yield (3, m, s0 + off, dur, ())

    def host_events(s):
        s0 = s * step_len
        return [(1001, 1, s0, step_len - 1_000_000), (1001, 2, s0 + 100_000, step_len - 2_000_000),
                (1001, 3, s0 + 200_000, step_len - 3_000_000), (1001, 4, s0 + 300_000, 2_000_000),
                (1002, 5, s0 + 400_000, 1_500_000)]

    nev = 0
    lix = {1: 1, 2: 2, 3: 3}
    for s in range(steps):
        for d, (p, steps_l, mods_l, ops_l) in enumerate(lines_dev):
            ls = (None, steps_l, mods_l, ops_l)
            chunk = {1: [], 2: [], 3: []}
            for (lid, m, off, dur, st) in dev_events(d, s):
                sb = b"".join(f_bytes(4, stat_u64(n, v)) for n, v in st)
                chunk[lid].append(xevent(m, off, dur, sb))
                nev += 1
            for lid in (1, 2, 3):
                ls[lix[lid]][3].append(b"".join(chunk[lid]))
        for (tid, m, off, dur) in host_events(s):
            host_l[tid - 1001][3].append(xevent(m, off, dur))
            nev += 1

    # The JSON conversion: M events, then plane by plane, line by line.
    if jout:
        for p in planes:
            jparts.append(jout.event('{"ph":"M","pid":%d,"name":"process_name","args":{"name":%s}}'
                                     % (p.pid, json_str(p.name))))
            for (lid, lname, _, _) in p.lines:
                jparts.append(jout.event('{"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":%s}}'
                                         % (p.pid, lid, json_str(lname))))
        base_ps = base_ns * 1000
        # host plane first
        for tid in (1001, 1002):
            for s in range(steps):
                for (t, m, off, dur) in host_events(s):
                    if t == tid:
                        jparts.append(jout.event('{"ph":"X","pid":1,"tid":%d,"ts":%s,"dur":%s,"name":%s}'
                                                 % (tid, fmt(base_ps + off), fmt(dur),
                                                    json_str(host.meta[m][0]))))
            jout.write(jparts)
            jparts = []
        for d, (p, _, _, _) in enumerate(lines_dev):
            # name and the args' text per metadata id (sorted by key, flops dropped)
            jm = {}
            for m, (name, enc) in p.meta.items():
                jm[m] = (json_str(name), sorted((n, s) for (n, s, _) in enc if n != "flops"))
            for line_id in (1, 2, 3):
                for s in range(steps):
                    for (lid, m, off, dur, st) in dev_events(d, s):
                        if lid != line_id:
                            continue
                        name, items = jm[m]
                        if st:
                            items = sorted(list(items) + [(n, str(v)) for n, v in st])
                        a = ",".join('"%s":%s' % (k, json_str(v)) for k, v in items)
                        jparts.append(jout.event('{"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,"name":%s%s}'
                                                 % (p.pid, line_id, fmt(base_ps + off), fmt(dur), name,
                                                    ',"args":{%s}' % a if a else "")))
                    if len(jparts) > 20000:
                        jout.write(jparts)
                        jparts = []
        jparts.append(",{}]}")
        jout.write(jparts)
        jout.close()
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        for p in planes:
            f.write(f_bytes(1, p.body()))
        f.write(f_bytes(4, "tpu-host-0"))
    os.replace(tmp, args.out)
    out = {"events": nev, "bytes": os.path.getsize(args.out), "steps": steps, "devices": ndev,
           "seconds": round(time.time() - t0, 2)}
    if jout:
        out["json_bytes"] = jout.n
        out["json_gz_bytes"] = os.path.getsize(args.json)
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
