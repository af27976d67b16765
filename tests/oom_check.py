#!/usr/bin/python3
"""Run tests/oom_test.c's binary (out of memory at every allocation of the
reading functions) on two small TPU traces written here: steps, device ops
with tf_op paths (regions), collectives, gaps and a host thread, so every
section of the summary, the reports and the compare has rows.

    tests/oom_check.py BINARY [STRIDE]      (make asan: build/asan/oom_test)

Prints the binary's lines and its closing "N passed, N failed"; exits with
its status."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixtures import TPU_META, doc  # noqa: E402


def trace(scale):
    ev = list(TPU_META)
    t = 0
    for step in range(8):
        dur = (900 + 60 * (step % 3)) * scale
        ev.append({"ph": "X", "pid": 1, "tid": 1, "name": str(step), "ts": t, "dur": dur,
                   "args": {"step_num": step}})
        o = t
        for k, (name, d, tf) in enumerate([
                ("fusion.%d" % (step % 4), 120, "jit(train_step)/layer_%d/dot_general" % (step % 2)),
                ("all-reduce.%d" % (step % 2), 80, "jit(train_step)/grads/psum"),
                ("copy.1", 15, None),
                ("convolution.3", 200, "jit(train_step)/layer_1/conv"),
                ("dependency-wait", 30, None)]):
            o += 10 + 7 * k                   # a gap before each op
            e = {"ph": "X", "pid": 1, "tid": 2, "name": name, "ts": o, "dur": d * scale}
            if tf:
                e["args"] = {"tf_op": tf, "long_name": "%%%s = f32[8,128]{1,0} %s()" % (name, name.split(".")[0])}
            ev.append(e)
            o += d * scale
        ev.append({"ph": "X", "pid": 2, "tid": 1, "name": "python_host_compute", "ts": t, "dur": 50})
        t += dur + 100
    return doc(ev)


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory(prefix="profsum-oom-") as tmp:
        paths = []
        for name, scale in (("a.json", 1), ("b.json", 2)):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                json.dump(trace(scale), f)
            paths.append(path)
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        p = subprocess.run([argv[1]] + paths + argv[2:3], env=env)
        return p.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
