#!/usr/bin/python3
"""gen_trace.py - deterministic generator of xprof-shaped JAX profiler traces.

Writes a gzipped (or plain, if --out does not end in .gz) Chrome Trace Event
Format file that looks like what JAX/xprof writes (`<host>.trace.json.gz`):

    {"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[...,{}]}

  * `M` events first (process_name / process_sort_index per plane,
    thread_name / thread_sort_index per line), then the `X` events plane by
    plane (host first, then devices) and line by line, each line in time order,
    as the TSL converter writes them.
  * `ts`/`dur` are microseconds converted from integer picoseconds and printed
    like xprof (`%.17g`): `1342.422`, `22.140000000000001`,
    `9.9999999999999995e-07` (a 1 ps event). Every arg value is a string.
  * --shape tpu: `/device:TPU:N` planes with lines `XLA Ops` (HLO ops with
    tf_op, hlo_op, hlo_module, hlo_category, long_name HLO text, flops,
    bytes_accessed, run_id, source; nested `while` bodies, idle gaps, a few
    partial overlaps), `XLA TraceMe`, `Framework Ops`, `Framework Name Scope`,
    `XLA Modules` (`jit_train_step(<fingerprint>)`), `Steps` ("0", "1", ...
    with step_num); plus `/host:CPU` threads with python-level events
    (`train`, `PjitFunction(train_step)`, `jit_train_step`, `$file.py:N fn`).
  * --shape gpu: `/device:GPU:N` planes with `Stream #N(Kernel)`,
    `Stream #N(MemcpyH2D)`, ... lines (kernel events with correlation_id,
    hlo_module, hlo_op, kernel_details, name, tf_op as in the corpus), `Steps`
    and `XLA Modules` lines, and host threads with launch events.

A block of events per step is built once (a few variants per device with
different durations and gaps) and re-emitted with shifted timestamps, so a
1 GB trace takes well under a minute; compression runs in a second thread.

Output: the trace file, and on stdout one JSON object with the exact counts a
reader must reproduce:
  rows / events    entries that are objects with a string "ph" (the trailing {}
                   is not one)
  ph               per-ph counts
  x_excl_rows      X events with dur > 0 (the rows whose excl_ps is not NULL)
  dur_ps_sum       sum of dur_ps over X events
  excl_ps_sum      sum of exclusive time in ps, per summary-v1-spec section 2
  bytes, compressed_bytes, steps, seconds, ...
The output file is a pure function of (--shape, --size, --seed, --devices,
--layers, --variants, --ts-base-us, generator version).

Usage: /usr/bin/python3 bench/gen_trace.py --size 100M --shape tpu --out data/t.json.gz
Sizes: K, M, G are powers of 1000 (10M = 10,000,000 bytes uncompressed);
Ki, Mi, Gi powers of 1024. Whole steps are written, so the size reached is
within half a step (~0.25 MB with the defaults) of the target: about 2-3% at
10M, under 0.3% from 100M up.
Standard library only.
"""
import argparse
import gzip
import json
import os
import queue
import random
import sys
import threading
import time

GEN_VERSION = 1
HOST_PID = 701
DERIVED = 0xDEADBEEF  # xprof's kThreadIdDerivedMin: derived lines use ids from here
TID_STEPS = DERIVED
TID_NAME_SCOPE = DERIVED + 2
TID_FW_OPS = DERIVED + 3
TID_MODULES = DERIVED + 4
TID_XLA_OPS = 2
TID_TRACEME = 3

# Placeholders inside event templates (replaced by str.format fields).
P_TS, P_STEP, P_RUN, P_CORR = "@@TS@@", "@@STEP@@", "@@RUN@@", "@@CORR@@"

US = 1000000  # ps per microsecond
NS = 1000


def fmt_us(ps):
    """xprof's PicosToMicrosString: ps / 1e6 as a double, printed with %.17g."""
    return "%.17g" % (ps / 1e6)


def jstr(s):
    return json.dumps(s, ensure_ascii=True)


def make_fmt(text):
    text = text.replace("{", "{{").replace("}", "}}")
    return (text.replace(P_TS, "{0}").replace(P_STEP, "{1}")
            .replace(P_RUN, "{2}").replace(P_CORR, "{3}"))


def x_template(pid, tid, dur_ps, name, args):
    """Template text of one X event, with a leading comma."""
    s = ',{"ph":"X","pid":%d,"tid":%d,"ts":%s,"dur":%s,"name":%s' % (
        pid, tid, P_TS, fmt_us(dur_ps), jstr(name))
    if args:
        s += ',"args":{' + ",".join(
            "%s:%s" % (jstr(k), jstr(v)) for k, v in sorted(args.items())) + "}"
    return make_fmt(s + "}")


def exclusive_sums(events):
    """summary-v1-spec section 2 over one track.

    events: list of (ts_ps, dur_ps) already in (ts asc, end desc) order
    (ties in input order). Only dur > 0 counts. Returns (sum of exclusive
    time, sum of the full durations of the root events, count)."""
    stack = []  # [end, dur, child_sum]
    total = 0
    roots = 0
    n = 0
    prev = None

    def fin():
        nonlocal total, roots
        end, dur, cs = stack.pop()
        ex = dur - cs
        total += ex if ex > 0 else 0
        if stack:
            stack[-1][2] += dur
        else:
            roots += dur

    for ts, dur in events:
        if dur <= 0:
            continue
        end = ts + dur
        key = (ts, -end)
        if prev is not None and key < prev:
            raise AssertionError("track not in (ts, -end) order: %r after %r" % (key, prev))
        prev = key
        n += 1
        while stack and ts >= stack[-1][0]:
            fin()
        while stack and end > stack[-1][0]:
            fin()
        stack.append([end, dur, 0])
    while stack:
        fin()
    return total, roots, n


class Line:
    """One track (pid, tid): global events plus one block per step."""

    def __init__(self, pid, tid, name, sort_index, chooser, dev=0):
        self.pid, self.tid, self.name, self.sort_index = pid, tid, name, sort_index
        self.chooser = chooser  # key into the per-step variant choices
        self.dev = dev          # device index used for correlation ids
        self.variants = []      # list of list of (rel_ps, dur_ps, fmt, corr_idx)
        self.var_stats = []     # (excl_sum, root_dur_sum, n_pos, dur_sum, n_events)
        self.globals = []       # list of (abs_ps, dur_ps, fmt), a nested chain

    quantum = 1  # ps; GPU lines use 1000 (ns resolution, like the GPU corpus)

    def add_variant(self, evs):
        """evs: list of (rel_ps, dur_ps, name, args, corr_idx) in any order."""
        q = self.quantum
        if q > 1:
            # round start and end separately (monotone: nesting is kept);
            # 1 ps events stay 1 ps, as in the corpus
            evs = [(r // q * q, d if d <= 1 else max(q, (r + d) // q * q - r // q * q), n, a, c)
                   for r, d, n, a, c in evs]
        evs = sorted(evs, key=lambda e: (e[0], -(e[0] + e[1])))
        tpl = [(r, d, x_template(self.pid, self.tid, d, n, a), c) for r, d, n, a, c in evs]
        ex, roots, npos = exclusive_sums([(r, d) for r, d, _, _ in tpl])
        self.variants.append(tpl)
        self.var_stats.append((ex, roots, npos, sum(d for _, d, _, _ in tpl), len(tpl)))

    def span(self):
        lo = min(t[0] for v in self.variants for t in v)
        hi = max(t[0] + t[1] for v in self.variants for t in v)
        return lo, hi


# ---------------------------------------------------------------------------
# The model: an XLA program for one training step
# ---------------------------------------------------------------------------

class Op:
    __slots__ = ("kind", "name", "cat", "long_name", "tf_op", "flops", "bytes",
                 "dur", "gap", "children", "source", "overlap", "module", "kernel")

    def __init__(self, **kw):
        self.children = None
        self.overlap = False
        self.source = None
        self.kernel = None
        self.module = "jit_train_step"
        for k, v in kw.items():
            setattr(self, k, v)


class Program:
    def __init__(self, rng, layers, shape):
        self.rng = rng
        self.shape = shape
        self.used = {}
        self.ops = []
        self.fixed = {"fusion": [123], "convolution": [4], "all-reduce": [7], "copy": [564],
                      "iota": [296], "dot": [1], "custom-call": [9], "while": [3]}
        self.build(layers)

    def num(self, kind):
        s = self.used.setdefault(kind, set())
        fx = self.fixed.get(kind)
        if fx:
            n = fx.pop(0)
        else:
            n = self.rng.randrange(1, 1200)
            while n in s:
                n = self.rng.randrange(1, 1200)
        s.add(n)
        return n

    def shape_str(self, dtype=None, rank=None):
        r = self.rng
        dtype = dtype or r.choice(["bf16", "bf16", "f32"])
        rank = rank or r.choice([2, 3, 3, 4])
        dims = [r.choice([8, 16, 32, 64]), r.choice([128, 256, 512]),
                r.choice([1024, 2048, 4096]), r.choice([8, 16, 64])][:rank]
        layout = ",".join(str(i) for i in range(rank - 1, -1, -1))
        return "%s[%s]{%s}" % (dtype, ",".join(map(str, dims)), layout)

    def op(self, kind, tf_op, dur_us, gap_us=None, cat=None, overlap=False, src=True):
        r = self.rng
        n = self.num(kind)
        name = "%s.%d" % (kind, n)
        out = self.shape_str()
        a, b = self.shape_str(), self.shape_str()
        prim = tf_op.rsplit("/", 1)[-1]
        meta = ' metadata={op_name="%s" source_file="/app/model.py" source_line=%d}' % (
            tf_op, r.randrange(20, 400))
        if kind == "fusion":
            fk = r.choice(["kLoop", "kLoop", "kInput", "kOutput"])
            cat = cat or {"kLoop": "loop fusion", "kInput": "input fusion",
                          "kOutput": "output fusion"}[fk]
            ln = "%%%s = %s fusion(%s %%param.%d, %s %%get-tuple-element.%d), kind=%s, calls=%%fused_computation.%d,%s" % (
                name, out, a, r.randrange(1, 99), b, r.randrange(1, 999), fk, n, meta)
        elif kind == "convolution":
            cat = "convolution"
            ln = "%%%s = %s convolution(%s %%fusion.%d, %s %%param.%d), dim_labels=b0f_io->b0f,%s" % (
                name, out, a, r.randrange(1, 999), b, r.randrange(1, 99), meta)
        elif kind == "dot":
            cat = "convolution"
            ln = "%%%s = %s dot(%s %%p0, %s %%p1), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1},%s" % (
                name, out, a, b, meta)
        elif kind in ("all-reduce", "all-gather", "reduce-scatter", "all-reduce-start",
                      "collective-permute", "all-to-all"):
            cat = kind.replace("-start", "")
            ln = "%%%s = %s %s(%s %%fusion.%d), channel_id=%d, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%%add.clone%s" % (
                name, out, kind, a, r.randrange(1, 999), n, meta)
        elif kind == "copy":
            cat = "data formatting"
            ln = "%%%s = %s copy(%s %%transpose.%d)%s" % (name, out, a, r.randrange(1, 99), meta)
        elif kind == "iota":
            cat = "non-fusion elementwise"
            ln = "%%%s = s32[8,128]{1,0} iota(), iota_dimension=1%s" % (name, meta)
        elif kind == "custom-call":
            cat = "custom-call"
            ln = ('%%%s = %s custom-call(%s %%fusion.%d), custom_call_target="tpu_custom_call", '
                  'backend_config="{\\"custom_call_config\\": {\\"body\\": \\"TUxJUgE=\\"}, '
                  '\\"flags\\": \\"kernel\\tname\\"}",%s' % (name, out, a, r.randrange(1, 999), meta))
        elif kind == "while":
            cat = "while"
            ln = "%%%s = (s32[], %s) while((s32[], %s) %%tuple.%d), condition=%%cond.%d, body=%%body.%d%s" % (
                name, a, a, r.randrange(1, 99), n, n, meta)
        elif kind == "conditional":
            cat = "conditional"
            ln = "%%%s = %s conditional(pred[] %%compare.%d, %s %%a, %s %%b), branch_computations={%%true.%d, %%false.%d}%s" % (
                name, out, r.randrange(1, 99), a, a, n, n, meta)
        else:
            cat = cat or kind
            ln = "%%%s = %s %s(%s %%fusion.%d)%s" % (name, out, kind, a, r.randrange(1, 999), meta)
        fl = r.randrange(1, 1 << 20) * (r.choice([1, 256, 4096]) if cat != "data formatting" else 0)
        by = r.randrange(1 << 10, 1 << 26)
        if gap_us is None:
            gap_us = r.choice([0.01, 0.02, 0.05, 0.1, 0.3, 1.5])
        o = Op(kind=kind, name=name, cat=cat, long_name=ln, tf_op=tf_op, flops=fl,
               bytes=by, dur=int(dur_us * US), gap=int(gap_us * US), overlap=overlap)
        if src:
            o.source = "/app/model.py:%d" % r.randrange(20, 400)
        if prim == "gather":
            o.source = None
        return o

    def build(self, layers):
        r = self.rng
        ops = self.ops
        J = "jit(train_step)"
        ops.append(self.op("iota", J + "/transformer/embed/iota", 0.8))
        ops.append(self.op("fusion", J + "/transformer/embed/gather", 12.5, cat="input fusion"))
        ops.append(self.op("copy", J + "/transformer/embed/copy", 6.3))
        for l in range(layers):
            p = "%s/transformer/layer_%d" % (J, l)
            ops.append(self.op("fusion", p + "/attn/layer_norm/rsqrt", r.uniform(3, 9)))
            ops.append(self.op("convolution", p + "/attn/qkv/dot_general", r.uniform(40, 120)))
            ops.append(self.op("fusion", p + "/attn/reshape", r.uniform(2, 6)))
            ops.append(self.op("dot", p + "/attn/dot_general", r.uniform(30, 90)))
            ops.append(self.op("fusion", p + "/attn/softmax/exp", r.uniform(8, 25)))
            ops.append(self.op("dot", p + "/attn/dot_general", r.uniform(30, 90)))
            ops.append(self.op("convolution", p + "/attn/out/dot_general", r.uniform(30, 80)))
            ops.append(self.op("fusion", p + "/attn/add", r.uniform(2, 7)))
            ops.append(self.op("fusion", p + "/mlp/layer_norm/rsqrt", r.uniform(3, 9)))
            ops.append(self.op("convolution", p + "/mlp/up/dot_general", r.uniform(80, 200)))
            ops.append(self.op("fusion", p + "/mlp/gelu/tanh", r.uniform(6, 20)))
            ops.append(self.op("convolution", p + "/mlp/down/dot_general", r.uniform(80, 200)))
            ops.append(self.op("fusion", p + "/mlp/add", r.uniform(2, 7)))
        ops.append(self.op("fusion", J + "/loss/log_softmax/reduce_max", 14.0))
        ops.append(self.op("reduce", J + "/loss/reduce_sum", 6.0))
        ops.append(self.op("custom-call", J + "/loss/custom_jvp_call", 22.0))
        # A gradient-accumulation loop with a nested conditional: depth 3 on XLA Ops.
        w = self.op("while", J + "/while", 0, gap_us=2.0)
        body = []
        for it in range(2):
            body.append(self.op("fusion", J + "/while/body/dynamic_slice", 3.2))
            body.append(self.op("dot", J + "/while/body/dot_general", 25.0))
            c = self.op("conditional", J + "/while/body/cond", 0)
            c.children = [self.op("fusion", J + "/while/body/cond/branch_1/add", 2.5),
                          self.op("fusion", J + "/while/body/cond/branch_1/mul", 1.7)]
            body.append(c)
            body.append(self.op("all-gather", J + "/while/body/all_gather", 18.0))
        w.children = body
        ops.append(w)
        for l in reversed(range(layers)):
            p = "%s/transpose(jvp(transformer))/layer_%d" % (J, l)
            ops.append(self.op("fusion", p + "/mlp/add", r.uniform(2, 7)))
            ops.append(self.op("convolution", p + "/mlp/down/dot_general", r.uniform(80, 200)))
            ops.append(self.op("convolution", p + "/mlp/down/dot_general", r.uniform(80, 200)))
            ops.append(self.op("fusion", p + "/mlp/gelu/mul", r.uniform(6, 20)))
            ops.append(self.op("convolution", p + "/mlp/up/dot_general", r.uniform(80, 200)))
            ops.append(self.op("convolution", p + "/mlp/up/dot_general", r.uniform(80, 200)))
            ops.append(self.op("fusion", p + "/mlp/layer_norm/mul", r.uniform(3, 9)))
            ops.append(self.op("convolution", p + "/attn/out/dot_general", r.uniform(30, 80)))
            ops.append(self.op("dot", p + "/attn/dot_general", r.uniform(30, 90)))
            ops.append(self.op("fusion", p + "/attn/softmax/mul", r.uniform(8, 25),
                               overlap=(l % 2 == 0)))
            ops.append(self.op("dot", p + "/attn/dot_general", r.uniform(30, 90)))
            ops.append(self.op("convolution", p + "/attn/qkv/dot_general", r.uniform(40, 120)))
            ops.append(self.op("fusion", p + "/attn/layer_norm/mul", r.uniform(3, 9)))
            # Gradient sync: an idle gap before the collective.
            ops.append(self.op("all-reduce", p + "/psum", r.uniform(40, 160),
                               gap_us=r.uniform(20, 60)))
            ops.append(self.op("copy", p + "/copy", r.uniform(3, 12), overlap=(l == 0)))
        ops.append(self.op("all-reduce", J + "/pmean/psum", 35.0, gap_us=12.0))
        ops.append(self.op("all-reduce-start", J + "/pmean/psum", 2.0))
        ops.append(self.op("reduce-scatter", J + "/optimizer/reduce_scatter", 28.0))
        for i in range(8):
            ops.append(self.op("fusion", J + "/optimizer/adam/%s" % ("mul", "add", "sqrt", "div")[i % 4],
                               r.uniform(4, 15)))
        ops.append(self.op("collective-permute", J + "/optimizer/ppermute", 9.0))
        ops.append(self.op("copy", J + "/optimizer/copy", 15.0, gap_us=150.0))  # the noisy copy.564
        ops.append(self.op("fusion", J + "/optimizer/convert_element_type", 4.0))
        if self.shape == "gpu":
            self.assign_kernels()

    def assign_kernels(self):
        """GPU: kernel names and launch configs for each leaf op."""
        r = self.rng
        for o in self.leaves():
            k = o.kind
            if k in ("convolution", "dot"):
                o.kernel = r.choice([
                    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)",
                    "gemm_fusion_dot_%d" % r.randrange(1, 60)])
            elif k in ("all-reduce", "all-gather", "reduce-scatter", "all-reduce-start",
                       "collective-permute"):
                coll = {"all-reduce": "AllReduce_Sum", "all-reduce-start": "AllReduce_Sum",
                        "all-gather": "AllGather", "reduce-scatter": "ReduceScatter_Sum",
                        "collective-permute": "SendRecv"}[k]
                o.kernel = "ncclDevKernel_%s_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)" % coll
            elif k == "fusion":
                o.kernel = "%s_%s_fusion_%d" % (
                    {"loop fusion": "loop", "input fusion": "input", "output fusion": "output"}.get(o.cat, "loop"),
                    r.choice(["add", "multiply", "reduce", "transpose", "convert"]),
                    r.randrange(1, 90))
            elif k == "custom-call":
                o.kernel = "triton_softmax_%d" % r.randrange(1, 9)
            else:
                o.kernel = "%s_%d" % (k.replace("-", "_"), r.randrange(1, 90))

    def leaves(self, ops=None):
        for o in (self.ops if ops is None else ops):
            if o.children:
                yield from self.leaves(o.children)
            else:
                yield o


def schedule(prog, rng, start_ps, ps_mode):
    """Lay the program out in time for one step variant.

    Returns (events, end) with events = list of (start, dur, op, depth) in
    emission order, all leaves and parents."""
    out = []

    def jit(d):
        v = int(d * rng.uniform(0.93, 1.07))
        if ps_mode == "ns" or (ps_mode == "mixed" and rng.random() < 0.5):
            v = max(NS, v - v % NS)   # ns resolution like the GPU corpus
        return max(v, 1)

    def place(ops, t, depth):
        prev = None
        for o in ops:
            gap = jit(o.gap) if o.gap else 0
            s = t + gap
            if o.overlap and prev is not None and prev[1] > 4 * NS:
                # a partial overlap: starts inside the previous op, ends after it
                s = prev[0] + prev[1] - min(prev[1] // 3, 40 * NS)
            if o.children:
                idx = len(out)
                out.append(None)
                cend = place(o.children, s + 150 * NS, depth + 1)
                e = cend + 230 * NS
                out[idx] = (s, e - s, o, depth)
            else:
                d = jit(o.dur)
                if o.overlap and prev is not None:
                    d = max(d, (prev[0] + prev[1]) - s + 10 * NS)
                e = s + d
                out.append((s, d, o, depth))
            prev = (s, e - s)
            t = e
        return t

    end = place(prog.ops, start_ps, 0)
    return out, end


def scope_events(leaf_evs, group_step):
    """Framework Name Scope events: maximal runs of leaves sharing a tf_op prefix."""
    res = []
    paths = [(s, d, o.tf_op.split("/")[:-1]) for s, d, o, _ in leaf_evs]
    maxdepth = max(len(p) for _, _, p in paths)
    for depth in range(maxdepth):
        run = None
        for s, d, p in paths:
            key = tuple(p[:depth + 1]) if len(p) > depth else None
            if run and run[0] == key:
                run[2] = max(run[2], s + d)
            else:
                if run and run[0] is not None:
                    res.append((run[1], run[2] - run[1], run[0][-1], depth))
                run = [key, s, s + d]
        if run and run[0] is not None:
            res.append((run[1], run[2] - run[1], run[0][-1], depth))
    res.sort(key=lambda e: (e[0], -(e[0] + e[1]), e[3]))
    return [(s, d, name, {"group_id": group_step}, 0) for s, d, name, _ in res]


def fw_op_events(leaf_evs, group_step):
    """Framework Ops: consecutive leaves with the same tf_op merged into one event."""
    res = []
    cur = None
    for s, d, o, _ in leaf_evs:
        if cur and cur[2] == o.tf_op and s >= cur[1]:
            cur[1] = max(cur[1], s + d)
        else:
            if cur:
                res.append(cur)
            cur = [s, s + d, o.tf_op]
    if cur:
        res.append(cur)
    return [(s, e - s, tf.rsplit("/", 1)[-1], {"group_id": group_step, "long_name": tf}, 0)
            for s, e, tf in res]


# ---------------------------------------------------------------------------
# Trace layouts
# ---------------------------------------------------------------------------

class Trace:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random("profsum-bench/%d/%s/%d" % (GEN_VERSION, a.shape, a.seed))
        self.procs = []   # (pid, name, sort_index, [Line])
        self.period = 0
        self.t0 = int(round(a.ts_base_us * US))

    # -- building --------------------------------------------------------
    def build(self):
        a, rng = self.a, self.rng
        self.prog = Program(rng, a.layers, a.shape)
        # Device step variants (schedules).
        self.dev_sched = []
        need = 0
        for dev in range(a.devices):
            vs = []
            for v in range(a.variants):
                skew = dev * 137 * NS + rng.randrange(0, 50 * NS)
                m0 = skew + rng.randrange(8, 30) * US + rng.randrange(0, US)
                evs, end = schedule(self.prog, rng, m0, "mixed" if a.shape == "tpu" else "ns")
                extra = None
                if v % 4 == 3:
                    # a second, small module after the main one
                    s2 = end + rng.randrange(20, 60) * US
                    d2 = rng.randrange(2, 5) * US + rng.randrange(0, US)
                    extra = (s2, d2)
                    end = s2 + d2
                vs.append((m0, evs, end, extra))
                need = max(need, end)
            self.dev_sched.append(vs)
        dev_len = need + 40 * US
        host_len = self.host_block_len()
        self.period = int((max(dev_len, host_len * 1.3) // US + 1) * US) + rng.randrange(0, US)
        Line.quantum = NS if a.shape == "gpu" else 1
        self.period -= self.period % Line.quantum
        self.host_lead = host_len + 200 * US
        if a.shape == "tpu":
            self.build_tpu()
        else:
            self.build_gpu()
        # Host blocks start before their step (negative offsets): move the
        # origin so that the first event (a global root) is at ts_base_us.
        lo = min(ln.span()[0] for ln in self.all_lines())
        self.t0 += max(0, -lo) + 1000 * US

    def host_block_len(self):
        if self.a.shape == "tpu":
            return 3000 * US
        nk = sum(1 for _ in self.prog.leaves())
        return (nk * 9 + 400) * US

    def leaf_evs(self, evs):
        return [e for e in evs if not e[2].children]

    def add_proc(self, pid, name, sort_index, lines):
        self.procs.append((pid, name, sort_index, lines))

    def build_tpu(self):
        a, rng = self.a, self.rng
        host = self.build_host_tpu()
        self.add_proc(HOST_PID, "/host:CPU", HOST_PID, host)
        for dev in range(a.devices):
            pid = dev + 1
            ops = Line(pid, TID_XLA_OPS, "XLA Ops", TID_XLA_OPS, "dev%d" % dev, dev)
            tme = Line(pid, TID_TRACEME, "XLA TraceMe", TID_TRACEME, "dev%d" % dev, dev)
            fwo = Line(pid, TID_FW_OPS, "Framework Ops", TID_FW_OPS, "dev%d" % dev, dev)
            nsc = Line(pid, TID_NAME_SCOPE, "Framework Name Scope", TID_NAME_SCOPE, "dev%d" % dev, dev)
            mod = Line(pid, TID_MODULES, "XLA Modules", TID_MODULES, "dev%d" % dev, dev)
            stp = Line(pid, TID_STEPS, "Steps", TID_STEPS, "dev%d" % dev, dev)
            fp = 1234567 + 1000 * dev
            for m0, evs, end, extra in self.dev_sched[dev]:
                xe = []
                for s, d, o, depth in evs:
                    args = {"bytes_accessed": str(o.bytes), "flops": str(o.flops),
                            "hlo_category": o.cat, "hlo_module": o.module, "hlo_op": o.name,
                            "long_name": o.long_name, "run_id": P_RUN, "tf_op": o.tf_op}
                    if o.source:
                        args["source"] = o.source
                    xe.append((s, d, o.name, args, 0))
                mend = max(s + d for s, d, _, _ in evs) + 300 * NS
                me = [(m0 - 500 * NS, mend - m0 + 500 * NS, "jit_train_step(%d)" % fp,
                       {"program_id": str(fp), "run_id": P_RUN}, 0)]
                if extra:
                    s2, d2 = extra
                    me.append((s2, d2, "jit_convert_element_type(%d)" % (fp + 7),
                               {"program_id": str(fp + 7), "run_id": P_RUN}, 0))
                    xe.append((s2 + 200 * NS, d2 - 400 * NS, "convert.3",
                               {"bytes_accessed": "8192", "flops": "0",
                                "hlo_category": "non-fusion elementwise",
                                "hlo_module": "jit_convert_element_type", "hlo_op": "convert.3",
                                "long_name": "%convert.3 = bf16[1024]{0} convert(f32[1024]{0} %param.0)",
                                "run_id": P_RUN, "tf_op": "jit(convert_element_type)/convert_element_type"}, 0))
                ops.add_variant(xe)
                mod.add_variant(me)
                leaves = self.leaf_evs(evs)
                fwo.add_variant(fw_op_events(leaves, P_STEP))
                nsc.add_variant(scope_events(leaves, P_STEP))
                tm = [(m0 - 900 * NS, mend - m0 + 1400 * NS, "TpuExecute", {"run_id": P_RUN}, 0),
                      (m0 - 800 * NS, 250 * NS + rng.randrange(0, 100) * NS, "InfeedDequeue", None, 0),
                      (m0 - 300 * NS, 0, "SyncDeviceTime", None, 0),
                      (mend + 100 * NS, 170 * NS, "OutfeedEnqueue", None, 0)]
                tme.add_variant(tm)
                send = (end if extra else mend) + 2 * US
                stp.add_variant([(0, send, P_STEP, {"group_id": P_STEP, "step_num": P_STEP}, 0)])
            self.add_proc(pid, "/device:TPU:%d" % dev, pid,
                          [ops, tme, fwo, nsc, mod, stp])

    def host_python_line(self, tid, sort_index, nvar, exec_children):
        """The python main thread: `train` root, one block per step."""
        rng = self.rng
        ln = Line(HOST_PID, tid, "python", sort_index, "host")
        for v in range(nvar):
            t = -self.host_lead
            evs = []
            blk0 = t
            t += rng.randrange(5, 20) * US
            # data loading
            d1 = rng.randrange(150, 400) * US + rng.randrange(0, US)
            evs.append((t, d1, "$data.py:42 next_batch", None, 0))
            evs.append((t + 2 * US, d1 - 4 * US, "$builtins next", None, 0))
            evs.append((t + 3 * US, d1 - 7 * US, "$iterator.py:55 __next__", None, 0))
            t += d1 + rng.randrange(3, 9) * US
            pj0 = t
            evs.append((t + 500 * NS, 2550 * NS, "PythonRefManager::CollectGarbage", None, 0))
            evs.append((t + 3500 * NS, 2710 * NS + rng.randrange(0, 900) * NS, "ParseArguments", None, 0))
            j0 = t + 8 * US
            jd, kids = exec_children(j0)
            evs.append((j0, jd, "jit_train_step", {"run_id": P_RUN}, 0))
            evs.extend(kids)
            pj_end = j0 + jd + rng.randrange(2, 6) * US
            evs.append((pj0, pj_end - pj0, "PjitFunction(train_step)", None, 0))
            t = pj_end + rng.randrange(2, 8) * US
            if v % 2 == 0:
                lm0 = t
                t += 1 * US
                for i in range(3):
                    evs.append((t, 170 * NS + i * 10 * NS, "$builtins isinstance", None, 0))
                    t += 400 * NS
                evs.append((t, 35 * US, "$logging.py:1500 info", None, 0))
                t += 36 * US
                evs.append((lm0, t - lm0, "$train.py:104 log_metrics", None, 0))
                t += 2 * US
            evs.append((blk0 + US, t - blk0, "$train.py:97 run_step",
                        {"group_id": P_STEP, "step_num": P_STEP}, 0))
            ln.add_variant(evs)
        return ln

    def pool_line(self, tid, name, sort_index, nvar, when):
        """tf_pjrt_thread_pool: 1 ps regions, partial overlaps, a 0-dur event."""
        rng = self.rng
        ln = Line(HOST_PID, tid, name, sort_index, "host")
        for v in range(nvar):
            t = when + rng.randrange(0, 50) * US
            d = rng.randrange(20, 400) * US + rng.randrange(0, 1000) * NS
            evs = [(t, 1, "ThreadpoolListener::StartRegion", None, 0),
                   (t + 500 * NS, d, "BufferSequencingEvent::Execute", None, 0),
                   (t + 700 * NS, d // 3, "PjRtStreamExecutorBuffer::CopyToDeviceHelper::async_copy_to_device", None, 0),
                   # starts inside Execute and outlives it: a partial overlap
                   (t + 500 * NS + d - d // 4, d // 2, "ThenExecuteCallback", None, 0),
                   (t + 500 * NS + d - d // 4 + 300 * NS, 0, "ThreadpoolListener::Record", None, 0),
                   (t + 500 * NS + d + d // 4 + 2 * US, 1, "ThreadpoolListener::StopRegion", None, 0)]
            ln.add_variant(evs)
        return ln

    def build_host_tpu(self):
        rng = self.rng
        nv = self.a.variants

        def exec_children(j0):
            d = rng.randrange(900, 1800) * US + rng.randrange(0, US)
            kids = [(j0 + 2 * US, d - 5 * US, "PjRtCApiLoadedExecutable::Execute", None, 0),
                    (j0 + 3 * US, d - 8 * US, "PJRT_LoadedExecutable_Execute", None, 0),
                    (j0 + 4 * US, 12 * US, "Wait for donation holds", None, 0)]
            return d, kids

        lines = []
        py = self.host_python_line(2298405065, 1, nv, exec_children)
        lines.append(py)
        lines.append(self.pool_line(2998969441, "tf_pjrt_thread_pool/4747829982129071201", 2, nv,
                                    -self.host_lead + 600 * US))
        xe = Line(HOST_PID, 102586790, "py_xla_execute/-1472503042444199177", 3, "host")
        for v in range(nv):
            t = -self.host_lead + 700 * US + rng.randrange(0, 30) * US
            d = rng.randrange(800, 1500) * US
            xe.add_variant([
                (t, d, "TfrtTpuExecutable::ExecuteSharded", {"run_id": P_RUN}, 0),
                (t + 3 * US, 40 * US, "TransferToInfeed", None, 0),
                (t + 50 * US, d - 60 * US, "TpuProgram::Execute", None, 0),
                (t + 51 * US, 7 * US, "ComputeSemaphoreAcquire", None, 0)])
        lines.append(xe)
        ht = Line(HOST_PID, 1083, "Host Threads/1083", 4, "host")
        for v in range(nv):
            t = -self.host_lead + 300 * US
            evs = []
            for i in range(12):
                evs.append((t, 170 * NS + rng.randrange(0, 300) * NS, "RecordUsage", None, 0))
                t += rng.randrange(2, 40) * US
            evs.append((t, 55 * US, "TransferFromOutfeed", None, 0))
            ht.add_variant(evs)
        lines.append(ht)
        return lines

    def build_gpu(self):
        a, rng = self.a, self.rng
        leaves_all = list(self.prog.leaves())
        nk = len(leaves_all)
        self.corr_per = nk + 4
        lines_host = []

        def exec_children(j0):
            d = rng.randrange(300, 600) * US + rng.randrange(0, US)
            kids = [(j0 + 2 * US, d - 5 * US, "PjRtStreamExecutorLoadedExecutable::Execute", None, 0),
                    (j0 + 4 * US, 9 * US, "Wait for usage holds", None, 0)]
            return d, kids

        lines_host.append(self.host_python_line(3832713232, 1, a.variants, exec_children))
        lines_host.append(self.pool_line(2998969441, "tf_pjrt_thread_pool/4747829982129071201", 2,
                                         a.variants, -self.host_lead + 100 * US))
        dev_lines = []
        for dev in range(a.devices):
            pid = dev + 1
            base_tid = 16 + 4 * dev
            kern = Line(pid, base_tid, "Stream #%d(Kernel)" % base_tid, base_tid, "dev%d" % dev, dev)
            nccl = Line(pid, base_tid + 1, "Stream #%d(Kernel)" % (base_tid + 1), base_tid + 1, "dev%d" % dev, dev)
            h2d = Line(pid, base_tid + 2, "Stream #%d(MemcpyH2D)" % (base_tid + 2), base_tid + 2, "dev%d" % dev, dev)
            d2h = Line(pid, base_tid + 3, "Stream #%d(MemcpyD2H)" % (base_tid + 3), base_tid + 3, "dev%d" % dev, dev)
            mod = Line(pid, TID_MODULES, "XLA Modules", TID_MODULES, "dev%d" % dev, dev)
            stp = Line(pid, TID_STEPS, "Steps", TID_STEPS, "dev%d" % dev, dev)
            thunk = Line(HOST_PID, 583 + 3 * dev, "py_xla_execute/%d" % (-6289114484373528222 + 977 * dev),
                         10 + dev, "dev%d" % dev, dev)
            launch = Line(HOST_PID, 1003351258 + dev, "Host Threads/%d" % (586 + 3 * dev),
                          20 + dev, "dev%d" % dev, dev)
            for m0, evs, end, extra in self.dev_sched[dev]:
                leaves = self.leaf_evs(evs)
                ke, ne, he, hl = [], [], [], []
                # host launches run ahead of the device, packed from -host_lead
                t = -self.host_lead + 20 * US + dev * 3 * US
                g0 = t
                he.append((t + 1 * US, 510 * NS, "Thunks::Prepare", None, 0))
                he.append((t + 2 * US, 580 * NS, "Thunks::Initialize", None, 0))
                t += 4 * US
                for i, (s, d, o, _) in enumerate(leaves):
                    is_coll = o.kernel.startswith("nccl")
                    kd = "regs:%d static_shared:0 dynamic_shared:%d grid:%d,1,1 block:%d,1,1 occ_pct:%d" % (
                        32 + (i % 4) * 32, (i % 3) * 16384, 132 * (1 + i % 7), 128 * (1 + i % 4), 25 * (1 + i % 4))
                    args = {"correlation_id": P_CORR, "hlo_module": o.module, "hlo_op": o.name,
                            "kernel_details": kd, "name": o.tf_op, "tf_op": "XlaModule:"}
                    (ne if is_coll else ke).append((s, d, o.kernel, args, i))
                    td = rng.randrange(4, 8) * US + rng.randrange(0, US)
                    he.append((t, td, o.name, None, 0))
                    hl.append((t + 1 * US, td - 2 * US, "cuLaunchKernel",
                               {"correlation_id": P_CORR, "device_id": str(dev), "hlo_module": o.module,
                                "hlo_op": o.name, "name": o.tf_op, "tf_op": "XlaModule:"}, i))
                    t += td + rng.randrange(200, 900) * NS
                he.append((g0, t - g0 + 2 * US, "jit_train_step:XLA GPU module", {"run_id": P_RUN}, 0))
                # the kernel stream must not have nested/overlapping kernels
                ke.sort(key=lambda e: e[0])
                fixed = []
                last_end = None
                for s, d, n, ar, i in ke:
                    if last_end is not None and s < last_end:
                        s = last_end + 20 * NS
                    fixed.append((s, d, n, ar, i))
                    last_end = s + d
                ke = fixed
                kern.add_variant(ke)
                nccl.add_variant(ne)
                h2d.add_variant([(m0 - 30 * US, 12 * US + rng.randrange(0, 2000) * NS, "MemcpyH2D",
                                  {"correlation_id": P_CORR, "memcpy_details": "kind:HtoD size:4194304 dest:%d async:1" % dev},
                                  nk + 1)])
                kend = max(s + d for s, d, _, _, _ in ke + ne)
                d2h.add_variant([(kend + 3 * US, 5 * US + rng.randrange(0, 900) * NS, "MemcpyD2H",
                                  {"correlation_id": P_CORR, "memcpy_details": "kind:DtoH size:4 dest:%d async:1" % dev},
                                  nk + 2)])
                fp = 5551000 + dev
                mod.add_variant([(m0 - 500 * NS, kend - m0 + 800 * NS, "jit_train_step(%d)" % fp,
                                  {"program_id": str(fp), "run_id": P_RUN}, 0)])
                stp.add_variant([(0, kend + 12 * US, P_STEP, {"group_id": P_STEP, "step_num": P_STEP}, 0)])
                thunk.add_variant(he)
                hl.append((-self.host_lead + 8 * US + dev * 3 * US, 7 * US, "cuMemcpyHtoDAsync",
                           {"correlation_id": P_CORR, "device_id": str(dev),
                            "memcpy_details": "kind:HtoD size:4194304 dest:%d async:1" % dev}, nk + 1))
                launch.add_variant(hl)
            lines_host.extend([thunk, launch])
            dev_lines.append((pid, dev, [kern, nccl, h2d, d2h, mod, stp]))
        self.add_proc(HOST_PID, "/host:CPU", HOST_PID, lines_host)
        for pid, dev, ls in dev_lines:
            self.add_proc(pid, "/device:GPU:%d" % dev, pid, ls)

    # -- sizing ----------------------------------------------------------
    def header(self):
        return '{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":['

    def meta_events(self):
        out = []
        procs = sorted(self.procs, key=lambda p: p[0])
        for pid, name, si, lines in procs:
            out.append('{"ph":"M","pid":%d,"name":"process_name","args":{"name":%s}}' % (pid, jstr(name)))
            out.append('{"ph":"M","pid":%d,"name":"process_sort_index","args":{"sort_index":%d}}' % (pid, si))
            for ln in sorted(lines, key=lambda l: l.tid):
                out.append('{"ph":"M","pid":%d,"tid":%d,"name":"thread_name","args":{"name":%s}}' % (
                    pid, ln.tid, jstr(ln.name)))
                out.append('{"ph":"M","pid":%d,"tid":%d,"name":"thread_sort_index","args":{"sort_index":%d}}' % (
                    pid, ln.tid, ln.sort_index))
        return out

    def all_lines(self):
        for pid, name, si, lines in self.procs:
            for ln in lines:
                yield ln

    def est_step_bytes(self, k):
        """Average bytes one step adds (all lines), formatted as at step k."""
        total = 0.0
        base = self.t0 + k * self.period
        for ln in self.all_lines():
            s = 0
            for v in ln.variants:
                for rel, dur, fmt, ci in v:
                    s += len(fmt.format(fmt_us(base + rel), k, 7000000 + k, 1000 + k * 600 + ci))
            total += s / len(ln.variants)
        return total

    def plan(self, target):
        fixed = len(self.header()) + sum(len(m) + 1 for m in self.meta_events()) + 4
        fixed += 600  # globals
        per = self.est_step_bytes(1)
        n = max(1, int((target - fixed) / per))
        for _ in range(3):
            per = self.est_step_bytes(max(1, n // 2))
            n = max(1, int(round((target - fixed) / per)))
        return n

    # -- writing ---------------------------------------------------------
    def make_globals(self, nsteps):
        """Nested host roots on the python thread spanning every step block."""
        for ln in self.all_lines():
            if ln.pid == HOST_PID and ln.name == "python":
                lo, hi = ln.span()
                first = self.t0 + lo
                last = self.t0 + (nsteps - 1) * self.period + hi
                g1s = first - 1000 * US
                g1e = last + 1200 * US
                g2s = first - 400 * US
                g2e = last + 300 * US
                ln.globals = [(g1s, g1e - g1s, x_template(ln.pid, ln.tid, g1e - g1s, "$train.py:140 <module>", None)),
                              (g2s, g2e - g2s, x_template(ln.pid, ln.tid, g2e - g2s, "train", None))]

    def check_layout(self):
        for ln in self.all_lines():
            lo, hi = ln.span()
            if hi - lo > self.period:
                raise AssertionError("block of %s longer than the step period" % ln.name)


class ChunkWriter:
    """Collects text, hands ~4 MB chunks to a thread that gzips and writes them."""

    def __init__(self, path, level):
        self.f = open(path, "wb")
        self.gz = gzip.GzipFile(filename="", mode="wb", fileobj=self.f,
                                compresslevel=level, mtime=0) if path.endswith(".gz") else None
        self.q = queue.Queue(maxsize=6)
        self.buf = []
        self.buflen = 0
        self.total = 0
        self.err = None
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def run(self):
        try:
            while True:
                s = self.q.get()
                if s is None:
                    break
                b = s.encode("ascii")
                (self.gz or self.f).write(b)
        except BaseException as e:  # reported by close()
            self.err = e
            while self.q.get() is not None:
                pass

    def write(self, s):
        self.buf.append(s)
        self.buflen += len(s)
        if self.buflen >= (4 << 20):
            self.flush()

    def flush(self):
        if self.buf:
            s = "".join(self.buf)
            self.total += len(s)
            self.buf.clear()   # in place: the generator loop holds buf.append
            self.buflen = 0
            self.q.put(s)

    def close(self):
        self.flush()
        self.q.put(None)
        self.th.join()
        if self.err:
            raise self.err
        if self.gz:
            self.gz.close()
        self.f.close()


def parse_size(s):
    s = s.strip()
    mult = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9,
            "KI": 1 << 10, "MI": 1 << 20, "GI": 1 << 30}
    u = s.upper().rstrip("B")
    num = u.rstrip("KMGI")
    suf = u[len(num):]
    if suf not in mult or not num:
        raise argparse.ArgumentTypeError("bad size %r (use e.g. 10M, 100M, 1G, 512Ki)" % s)
    return int(float(num) * mult[suf])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=parse_size, required=True,
                    help="uncompressed size: 10M, 100M, 1G (powers of 1000) or 64Mi")
    ap.add_argument("--out", required=True, help="output path (.gz: gzip level --level)")
    ap.add_argument("--shape", choices=["tpu", "gpu"], default="tpu")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4, help="transformer layers in the model")
    ap.add_argument("--variants", type=int, default=8, help="step variants per device")
    ap.add_argument("--ts-base-us", type=float, default=None,
                    help="timestamp origin in us (default: 1.7e9-ish for tpu, small for gpu)")
    ap.add_argument("--level", type=int, default=6, help="gzip level (default 6)")
    a = ap.parse_args(argv)
    if a.ts_base_us is None:
        a.ts_base_us = 1700000000.0 + 12.345678 + 1000 * a.seed if a.shape == "tpu" else 42.88
    t_start = time.time()

    tr = Trace(a)
    tr.build()
    tr.check_layout()
    nsteps = tr.plan(a.size)
    tr.make_globals(nsteps)
    rng = tr.rng
    choosers = sorted({ln.chooser for ln in tr.all_lines()})
    choices = {c: [rng.randrange(a.variants) for _ in range(nsteps)] for c in choosers}

    w = ChunkWriter(a.out, a.level)
    w.write(tr.header())
    metas = tr.meta_events()
    w.write(",".join(metas))
    counts = {"M": len(metas), "X": 0}
    excl_sum = 0
    dur_sum = 0
    n_pos = 0
    period = tr.period
    t0 = tr.t0
    ndev = a.devices
    corr_per = getattr(tr, "corr_per", 0)
    nx = 0
    for ln in tr.all_lines():
        # global roots (a nested chain containing every block)
        groots = 0
        for i, (ts, dur, fmt) in enumerate(ln.globals):
            w.write(fmt.format(fmt_us(ts), 0, 0, 0))
            nx += 1
            dur_sum += dur
            n_pos += 1
            if i + 1 < len(ln.globals):
                excl_sum += max(0, dur - ln.globals[i + 1][1])
        ch = choices[ln.chooser]
        variants = ln.variants
        stats = ln.var_stats
        dev = ln.dev
        fmtf = fmt_us
        app = w.buf.append
        for k in range(nsteps):
            v = ch[k]
            base = t0 + k * period
            sk = str(k)
            rk = str(7000000 + 3 * k)
            cb = 1000 + (k * ndev + dev) * corr_per
            n = 0
            for rel, dur, fmt, ci in variants[v]:
                s = fmt.format(fmtf(base + rel), sk, rk, cb + ci)
                app(s)
                n += len(s)
            ex, roots, npos, ds, ne = stats[v]
            excl_sum += ex
            groots += roots
            n_pos += npos
            dur_sum += ds
            nx += ne
            w.buflen += n
            if w.buflen >= (4 << 20):
                w.flush()
        if ln.globals:
            excl_sum += max(0, ln.globals[-1][1] - groots)
    counts["X"] = nx
    w.write(",{}]}")
    w.close()
    rows = counts["M"] + counts["X"]
    res = {
        "generator": "profsum bench/gen_trace.py",
        "gen_version": GEN_VERSION,
        "shape": a.shape, "seed": a.seed, "devices": a.devices, "layers": a.layers,
        "variants": a.variants, "ts_base_us": a.ts_base_us, "level": a.level,
        "target_bytes": a.size,
        "bytes": w.total,
        "compressed_bytes": os.path.getsize(a.out),
        "steps": nsteps,
        "step_period_ps": period,
        "tracks": sum(1 for _ in tr.all_lines()),
        "events": rows,
        "rows": rows,
        "entries": rows + 1,
        "ph": counts,
        "x_excl_rows": n_pos,
        "dur_ps_sum": dur_sum,
        "excl_ps_sum": excl_sum,
        "seconds": round(time.time() - t_start, 3),
        "out": a.out,
    }
    print(json.dumps(res, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
