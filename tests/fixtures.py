"""The cross-check fixtures of summary-v1-spec.md §7, rebuilt as traces."""

TPU_META = [
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:TPU:0"}},
    {"ph": "M", "pid": 1, "tid": 1, "name": "thread_name", "args": {"name": "Steps"}},
    {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "XLA Ops"}},
    {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
    {"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "main"}},
]


def doc(events):
    return {"displayTimeUnit": "ns", "traceEvents": events}


def tpu_doc(steps, ops):
    """One TPU (TPU_META) whose Steps line holds `steps` and XLA Ops line
    `ops`, each a list of (name, ts, dur) in µs."""
    ev = list(TPU_META)
    ev += [{"ph": "X", "pid": 1, "tid": 1, "name": n, "ts": ts, "dur": d} for n, ts, d in steps]
    ev += [{"ph": "X", "pid": 1, "tid": 2, "name": n, "ts": ts, "dur": d} for n, ts, d in ops]
    return doc(ev)


def f1(steps, softmax, psum=True, threading=True):
    """F1 (standard trace); F10 drops psum.1 and 'threading wait'."""
    ev = list(TPU_META)
    for i, s in enumerate(steps):
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(i), "ts": i * 1000, "dur": s})
    ev += [
        {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 0, "dur": 100},
        {"ph": "X", "pid": 1, "tid": 2, "name": "all-reduce.1", "ts": 20, "dur": 40},
        {"ph": "X", "pid": 1, "tid": 2, "name": "softmax", "ts": 120, "dur": softmax},
        {"ph": "X", "pid": 1, "tid": 2, "name": "dependency-wait", "ts": 190, "dur": 30},
    ]
    if psum:
        ev.append({"ph": "X", "pid": 1, "tid": 2, "name": "psum.1", "ts": 230, "dur": 20})
    ev.append({"ph": "X", "pid": 2, "tid": 1, "name": "python_host_compute", "ts": 0, "dur": 80})
    if threading:
        ev.append({"ph": "X", "pid": 2, "tid": 1, "name": "threading wait", "ts": 90, "dur": 20})
    return doc(ev)


def f2():
    return doc([
        TPU_META[0], TPU_META[2], TPU_META[3], TPU_META[4],
        {"ph": "X", "pid": 2, "tid": 1, "name": "python_host_compute", "ts": 0, "dur": 80},
        {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.1", "ts": 100, "dur": 20},
        {"ph": "X", "pid": 1, "tid": 2, "name": "all-reduce.1", "ts": 130, "dur": 10},
        {"ph": "X", "pid": 1, "tid": 2, "name": "fusion.2", "ts": 180, "dur": 20},
    ])


def ops_only(events):
    """TPU process pid 1 with an XLA Ops thread tid 2, plus the given X events."""
    return doc([TPU_META[0], TPU_META[2]] + [
        dict({"ph": "X", "pid": 1, "tid": 2}, **e) for e in events])


def f3():
    return ops_only([
        {"name": "train_step=>forward=>matmul", "ts": 0, "dur": 50},
        {"name": "_linear_softmax_cross_entropy_loss_bwd_pallas_mosaic_tpu_combined.1", "ts": 100, "dur": 20,
         "args": {"tf_op": "jit(_train_step)/apply_rotary_embedding/linear_softmax_cross_entropy_loss_bwd"}},
        {"name": "train_step=>backward=>all-reduce.1", "ts": 140, "dur": 10},
    ])


def f4():
    return ops_only([{"name": "custom_kernel.1", "ts": 0, "dur": 100,
                      "args": {"tf_op": "jit(_train_step)/shard_map/apply_rotary_embedding/pallas_call"}}])


def f5():
    tf = "dynamic_donated[1][0][0].model.params.blocks[0].attn.w_k:"
    return ops_only([{"name": "copy.564", "ts": 0, "dur": 100, "args": {"tf_op": tf}},
                     {"name": "copy.564", "ts": 200, "dur": 50, "args": {"tf_op": tf}}])


def f6():
    return ops_only([{"name": "copy.1", "ts": 0, "dur": 10}, {"name": "copy.1", "ts": 30, "dur": 10}])


def f7():
    return ops_only([{"name": "fusion.0", "ts": 0, "dur": 10}, {"name": "iota.296", "ts": 100, "dur": 1},
                     {"name": "dot.1", "ts": 101, "dur": 20}])


def f8():
    return ops_only([{"name": "fusion.0", "ts": 0, "dur": 10}, {"name": "iota.296", "ts": 100, "dur": 1},
                     {"name": "iota.297", "ts": 101, "dur": 1}, {"name": "dot.1", "ts": 130, "dur": 20}])


def f9():
    return doc([
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "pid": 1, "tid": 10, "name": "thread_name", "args": {"name": "Stream #0(compute)"}},
        {"ph": "M", "pid": 1, "tid": 11, "name": "thread_name", "args": {"name": "Stream #1(nccl)"}},
        {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/host:CPU"}},
        {"ph": "M", "pid": 2, "tid": 1, "name": "thread_name", "args": {"name": "python3"}},
        {"ph": "X", "pid": 2, "tid": 1, "name": "train", "ts": 0, "dur": 500, "args": {"step_num": "0"}},
        {"ph": "X", "pid": 2, "tid": 1, "name": "train", "ts": 500, "dur": 400, "args": {"step_num": "1"}},
        {"ph": "X", "pid": 2, "tid": 1, "name": "train", "ts": 900, "dur": 350, "args": {"step_num": "2"}},
        {"ph": "X", "pid": 1, "tid": 10, "name": "fusion.1", "ts": 10, "dur": 100},
        {"ph": "X", "pid": 1, "tid": 10, "name": "custom-call.2", "ts": 120, "dur": 80},
        {"ph": "X", "pid": 1, "tid": 11, "name": "ncclDevKernel_AllGather_RING_LL", "ts": 200, "dur": 50},
        {"ph": "X", "pid": 1, "tid": 11, "name": "ncclDevKernel_ReduceScatter_RING_LL", "ts": 260, "dur": 40},
    ])
