"""The HTML report as a person sees it: rendered in headless Chromium for a
TPU-shaped, a GPU and a Kineto (PyTorch) trace; the screenshots are kept
under build/test-output/ (report-tpu.png, report-gpu.png,
report-kineto.png) and the rendered DOM holds every section heading."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from util import connect, TempDir, ROOT

SECTIONS = ["Quality warnings", "profsum's advice", "Step time", "Wall-clock time", "Time breakdown",
            "Top ops by exclusive time", "Collectives", "Gaps before ops", "Gap contexts",
            "Hierarchical regions", "Op families", "KPIs", "The reference tool's candidates", "Provenance"]


def kineto_trace():
    """A small PyTorch-profiler (Kineto) trace: CPU ops, CUDA runtime calls,
    GPU kernels and a memcpy on a 'GPU 0' process (no /device: planes)."""
    ev = [{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python"}},
          {"ph": "M", "name": "thread_name", "pid": 100, "tid": 100, "args": {"name": "thread 100"}},
          {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
          {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}}]
    t = 1000
    for step in range(6):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": 100,
                   "tid": 100, "ts": t, "dur": 900})
        for k in range(8):
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100,
                       "ts": t + 10 + 100 * k, "dur": 60, "args": {"External id": step * 10 + k}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100,
                       "ts": t + 40 + 100 * k, "dur": 8})
            ev.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn_%d" % (k % 3), "pid": 0,
                       "tid": 7, "ts": t + 50 + 100 * k, "dur": 70, "args": {"stream": 7, "grid": [64, 1, 1]}})
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
                   "tid": 7, "ts": t + 860, "dur": 30})
        t += 1000
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100"}], "traceEvents": ev}


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


@unittest.skipUnless(chromium(), "chromium is not installed (make deps installs it)")
class Render(unittest.TestCase):
    def render(self, name, page):
        out = os.path.join(ROOT, "build", "test-output")
        os.makedirs(out, exist_ok=True)
        png = os.path.join(out, "report-%s.png" % name)
        if os.path.exists(png):
            os.remove(png)
        profile = tempfile.mkdtemp(prefix="profsum-chromium-")
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        common = [chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--disable-background-networking",
                  "--no-first-run", "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile]
        try:
            subprocess.run(common + ["--window-size=1100,4000", "--screenshot=" + png, "file://" + page],
                           check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            dom = subprocess.run(common + ["--dump-dom", "file://" + page], check=True, timeout=120,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env).stdout.decode()
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        data = open(png, "rb").read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(data), 30000, name)        # a rendered page, not a blank one
        for h in SECTIONS:
            self.assertIn(h.replace("'", "&#39;") if False else h, dom.replace("&#39;", "'"), (name, h))
        return dom

    def page(self, td, name, path, opts=None):
        db = connect()
        db.execute("SELECT profsum_import(?, ?, ?)", (path, name, opts))
        html = db.execute("SELECT profsum_report_html(?)", (name,)).fetchone()[0]
        db.close()
        return td.write(name + ".html", html)

    def generated(self, td, shape):
        out = os.path.join(td.path, "%s.json.gz" % shape)
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_trace.py"), "--size", "2M",
                        "--shape", shape, "--out", out], check=True, stdout=subprocess.DEVNULL)
        return out

    def test_tpu(self):
        with TempDir() as td:
            dom = self.render("tpu", self.page(td, "tpu", self.generated(td, "tpu"), '{"warmup_steps": 1}'))
        self.assertIn("steady step(s)", dom)
        self.assertIn("<svg", dom)

    def test_gpu(self):
        with TempDir() as td:
            dom = self.render("gpu", self.page(td, "gpu", self.generated(td, "gpu"), '{"warmup_steps": 1}'))
        self.assertIn("Many small kernels", dom)

    def test_kineto(self):
        with TempDir() as td:
            import json
            p = td.write("kineto.json", json.dumps(kineto_trace()))
            dom = self.render("kineto", self.page(td, "kineto", p))
        self.assertIn("No steps measured on a device", dom)
        self.assertNotIn("balanced", dom.split("The reference tool")[0].lower())


if __name__ == "__main__":
    unittest.main()
