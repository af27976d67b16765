#!/usr/bin/python3
"""Draw bench/scaling.svg from bench/results.json (standard library only).

    /usr/bin/python3 bench/chart.py bench/results.json bench/scaling.svg

Left panel: wall time per uncompressed MB (10^6 bytes) against the trace
size (log scale) for gzip -dc, the count(*) scan, the sum(excl_ps) query and
profsum_import + profsum_summary_json.  A flat line means linear scaling.
Right panel: peak RSS (log scale) of the same commands, with the sqlite3
shell's own baseline.  bench/run.sh calls this after writing results.json.
"""
import json
import math
import sys

SERIES = [  # key in results.json, legend label, colour (Okabe-Ito), marker
    ("gzip", "gzip -dc", "#555555", "circle"),
    ("scan", "scan: count(*)", "#0072B2", "square"),
    ("excl", "query: sum(excl_ps)", "#E69F00", "triangle"),
    ("import", "profsum_import + summary_json", "#009E73", "diamond"),
]
INPROC_COLOUR = {"first": "#009E73", "later": "#009E73", "scan": "#0072B2"}   # the import's / scan's colour
INPROC_DASH = {"first": "2,3", "later": "7,4", "scan": "7,4"}
FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"
W, H = 980, 500


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def fmt_bytes(b):
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            v = b / div
            return ("%g %s" % (round(v, 2), unit))
    return "%d B" % b


def nice_step(span, target=5):
    raw = span / target
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            return m * mag
    return 10 * mag


def fmt_num(v):
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return "%d" % round(v)
    return ("%.3f" % v).rstrip("0").rstrip(".")


def marker(kind, x, y, colour, r=5.0):
    if kind == "circle":
        return '<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" stroke="white" stroke-width="1"/>' % (x, y, r, colour)
    if kind == "square":
        return '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="white" stroke-width="1"/>' % (
            x - r, y - r, 2 * r, 2 * r, colour)
    if kind == "triangle":
        r *= 1.25
        pts = [(x, y - r), (x + r * 0.95, y + r * 0.7), (x - r * 0.95, y + r * 0.7)]
    else:  # diamond
        r *= 1.3
        pts = [(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
    return '<polygon points="%s" fill="%s" stroke="white" stroke-width="1"/>' % (
        " ".join("%.1f,%.1f" % p for p in pts), colour)


class Panel:
    """A plot area with a log x axis (bytes) and a linear or log y axis."""

    def __init__(self, x0, y0, w, h, xlo, xhi, ylo, yhi, ylog):
        self.x0, self.y0, self.w, self.h = x0, y0, w, h
        self.lxlo, self.lxhi = math.log10(xlo), math.log10(xhi)
        self.ylog = ylog
        self.ylo, self.yhi = (math.log10(ylo), math.log10(yhi)) if ylog else (ylo, yhi)
        self.pad = 0.04 * w

    def px(self, b):
        f = (math.log10(b) - self.lxlo) / (self.lxhi - self.lxlo)
        return self.x0 + self.pad + f * (self.w - 2 * self.pad)

    def py(self, v):
        v = math.log10(v) if self.ylog else v
        return self.y0 + self.h - (v - self.ylo) / (self.yhi - self.ylo) * self.h


def x_axis(out, p):
    out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="white" stroke="#999"/>' % (p.x0, p.y0, p.w, p.h))
    d = math.floor(p.lxlo)
    while d <= p.lxhi + 1e-9:
        for m in range(1, 10):
            b = m * 10 ** d
            lb = math.log10(b)
            if lb < p.lxlo - 1e-9 or lb > p.lxhi + 1e-9:
                continue
            x = p.px(b)
            if m == 1:
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>' % (x, p.y0, x, p.y0 + p.h))
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>' % (x, p.y0 + p.h, x, p.y0 + p.h + 6))
                out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12">%s</text>' % (
                    x, p.y0 + p.h + 20, esc(fmt_bytes(b))))
            else:
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>' % (x, p.y0 + p.h, x, p.y0 + p.h + 3))
        d += 1
    out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12">uncompressed trace size (log scale)</text>' % (
        p.x0 + p.w / 2, p.y0 + p.h + 40))


def y_axis(out, p, label, ticks):
    for v in ticks:
        y = p.py(v)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>' % (p.x0, y, p.x0 + p.w, y))
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>' % (p.x0 - 5, y, p.x0, y))
        out.append('<text x="%.1f" y="%.1f" text-anchor="end" font-size="12">%s</text>' % (p.x0 - 8, y + 4, fmt_num(v)))
    cy = p.y0 + p.h / 2
    out.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12" transform="rotate(-90 %.1f %.1f)">%s</text>' % (
        p.x0 - 46, cy, p.x0 - 46, cy, esc(label)))


def series_lines(out, p, pts, colour, kind, dash=None):
    pts = sorted(pts)
    if len(pts) > 1:
        out.append('<polyline fill="none" stroke="%s" stroke-width="2.2"%s points="%s"/>' % (
            colour, ' stroke-dasharray="%s"' % dash if dash else "",
            " ".join("%.1f,%.1f" % (p.px(b), p.py(v)) for b, v in pts)))
    for b, v in pts:
        out.append(marker(kind, p.px(b), p.py(v), colour))



def runs_text(env, res):
    """How many runs each size's best is taken from: "12 rounds" (one run per
    round), or the runs per size when small traces ran more often."""
    rounds = env.get("repeat", "?")
    per = env.get("runs_per_round") or {}
    if not per or all(v == 1 for k, v in per.items() if k != "empty"):
        return "%s rounds" % rounds
    return "%s rounds (runs: %s)" % (rounds, ", ".join(
        "%s %d" % (r["size"], per.get(r["size"], 1) * int(rounds)) for r in res))

def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: chart.py results.json scaling.svg\n")
        return 2
    doc = json.load(open(argv[1]))
    env, res = doc.get("env", {}), doc["results"]
    if not res:
        sys.stderr.write("chart.py: no results in %s\n" % argv[1])
        return 1
    sizes = [r["bytes"] for r in res]
    # x range: whole decades around the data (10 MB .. 1 GB for the defaults)
    xlo = 10 ** math.floor(math.log10(min(sizes)) + 0.02)
    xhi = 10 ** math.ceil(math.log10(max(sizes)) - 0.02)
    if xhi <= xlo:
        xhi = xlo * 10

    present = [s for s in SERIES if all(s[0] in r for r in res)]
    ms_per_mb = {k: [(r["bytes"], r[k]["wall_s"] * 1e3 / (r["bytes"] / 1e6)) for r in res] for k, _, _, _ in present}
    rss_mb = {k: [(r["bytes"], r[k]["peak_rss_kb"] / 1024) for r in res] for k, _, _, _ in present}
    # the import + summary in a running connection (bench/inproc.py): the
    # first import of a process (dotted) and the later ones (dashed), time
    # only: its memory is measured above a running process, not as a peak;
    # and the scan in the same connections (dashed, the scan's colour), in
    # results of runs that measured it
    inproc = {}
    if all("inproc" in r for r in res):
        for k in ("first", "later", "scan"):
            if all(k in r["inproc"] for r in res):
                inproc[k] = [(r["bytes"], r["inproc"][k]["ms_per_mb"]) for r in res]

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="%s" fill="#222">' % (W, H, W, H, FONT),
           '<rect width="100%" height="100%" fill="white"/>']
    out.append('<text x="%d" y="26" text-anchor="middle" font-size="17" font-weight="bold">'
               'profsum scaling: time per MB and peak memory vs trace size</text>' % (W / 2))
    evpm = sum(r["events"] for r in res) / (sum(sizes) / 1e6)
    sub = "xprof-shaped %s traces, %.0f events per MB, so 1 ms/MB = %.2f \u00b5s/event; " \
          "best of %s; %s CPUs; profsum %s (%s)" % (
              env.get("shape", "?"), evpm, 1e3 / evpm, runs_text(env, res), env.get("cpus", "?"),
              env.get("profsum_version", "?"), env.get("profsum_build_commit") or env.get("profsum_commit", "?"))
    out.append('<text x="%d" y="46" text-anchor="middle" font-size="11" fill="#555">%s</text>' % (W / 2, esc(sub)))

    # legend (shared), one row
    lx, ly = 150, 68
    for k, label, colour, kind in present:
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.2"/>' % (lx, ly, lx + 26, ly, colour))
        out.append(marker(kind, lx + 13, ly, colour))
        out.append('<text x="%d" y="%d" font-size="12">%s</text>' % (lx + 32, ly + 4, esc(label)))
        lx += 36 + 6.6 * len(label) + 14
    if inproc:
        # a second row: the running connection's two lines
        lx, ly = 150, ly + 18
        for k, label in (("first", "in a running connection: first import"),
                         ("later", "later imports"), ("scan", "the scan")):
            if k not in inproc:
                continue
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2.2" stroke-dasharray="%s"/>' % (
                lx, ly, lx + 26, ly, INPROC_COLOUR[k], INPROC_DASH[k]))
            out.append('<text x="%d" y="%d" font-size="12">%s</text>' % (lx + 32, ly + 4, esc(label)))
            lx += 36 + 6.6 * len(label) + 14

    # left: ms per MB, linear y from 0
    top = 110 if inproc else 100
    ph = H - top - 70
    ymax = max([v for pts in ms_per_mb.values() for _, v in pts]
               + [v for pts in inproc.values() for _, v in pts]) * 1.08
    step = nice_step(ymax)
    ymax = math.ceil(ymax / step) * step
    left = Panel(80, top, 380, ph, xlo, xhi, 0, ymax, False)
    x_axis(out, left)
    y_axis(out, left, "wall time per uncompressed MB (ms/MB)",
           [i * step for i in range(int(round(ymax / step)) + 1)])
    for k, _, colour, kind in present:
        series_lines(out, left, ms_per_mb[k], colour, kind)
    for k, pts in inproc.items():
        series_lines(out, left, pts, INPROC_COLOUR[k], "square" if k == "scan" else "diamond", dash=INPROC_DASH[k])
    out.append('<text x="%.1f" y="%.1f" font-size="12" fill="#555">lower is faster; flat = linear in size</text>' % (
        left.x0 + 8, left.y0 + 16))

    # right: peak RSS, log y
    vals = [v for pts in rss_mb.values() for _, v in pts]
    base = env.get("baseline_rss_kb")
    if base:
        vals.append(base / 1024)
    ylo = 10 ** math.floor(math.log10(min(vals)))
    yhi = 10 ** math.ceil(math.log10(max(vals) * 1.15))
    right = Panel(580, top, 380, ph, xlo, xhi, ylo, yhi, True)
    x_axis(out, right)
    ticks, d = [], math.floor(math.log10(ylo))
    while 10 ** d <= yhi * 1.0001:
        for m in (1, 2, 5):
            v = m * 10 ** d
            if ylo * 0.9999 <= v <= yhi * 1.0001:
                ticks.append(v)
        d += 1
    y_axis(out, right, "peak RSS, MB (log scale; includes the sqlite3 shell)", ticks)
    if base:
        y = right.py(base / 1024)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="5,4"/>' % (
            right.x0, y, right.x0 + right.w, y))
        out.append('<text x="%.1f" y="%.1f" font-size="11" fill="#666" text-anchor="end">'
                   'baseline: sqlite3 + profsum, SELECT 1: %.1f MB</text>' % (right.x0 + right.w - 6, y + 15, base / 1024))
    for k, _, colour, kind in present:
        series_lines(out, right, rss_mb[k], colour, kind)

    out.append("</svg>")
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
