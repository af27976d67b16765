#!/usr/bin/python3
"""tile_trace.py - a large trace made of copies of a real one.

Generated traces (gen_trace.py) compress about 9x; a real capture often
compresses 15-20x, so igzip inflates it about twice as fast per byte of
JSON and the parse is nearly the whole cost of an import.  To measure
profsum against the floor on such text, this script repeats a real
capture's events until the JSON reaches a size: copy k has every `ts`
moved by k times (the capture's span plus a 1 ms gap), computed on the
decimal text (no float rounding), and every step number of a `Steps`
thread moved by k times (the largest step + 1), so the copies are later
steps of one run.  Metadata events (ph "M") are written once.  Each event
keeps the spelling of its members and values as the source wrote them
after a parse (JSON numbers as their decimal text).

Usage:
  /usr/bin/python3 bench/tile_trace.py --size 1G --out /tmp/t/tiled.json.gz SOURCE.json[.gz]
The output is gzip level 6 (`gzip -6` in a pipe, on the other core).
"""
import argparse
import decimal
import gzip
import json
import subprocess
import sys

STEP_THREAD = "Steps"


def parse_size(text):
    """'100MB', '1G', '250M' or a byte count -> bytes."""
    t = text.strip().upper().rstrip("B")
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(t)


def enc(v):
    """JSON text of a value parsed with Decimal numbers (their text kept)."""
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + enc(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(enc(x) for x in v) + "]"
    if isinstance(v, decimal.Decimal):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=decimal.Decimal, parse_int=decimal.Decimal)


def templates(doc):
    """(metadata texts, [(prefix, ts, middle, step, suffix)], span, step stride).

    Each non-metadata event becomes a template: its text split around its
    `ts` value and, on a Steps thread with an integer name, around that
    name, so a copy only formats the two moved values."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps_tid = set()
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "thread_name":
            if (e.get("args") or {}).get("name") == STEP_THREAD:
                steps_tid.add((str(e.get("pid")), str(e.get("tid"))))
    meta, tmpl = [], []
    lo = hi = None
    max_step = -1
    for e in events:
        if not isinstance(e, dict) or "ph" not in e:
            continue
        if e.get("ph") == "M" or "ts" not in e or not isinstance(e["ts"], decimal.Decimal):
            meta.append(enc(e))
            continue
        ts = e["ts"]
        end = ts + (e["dur"] if isinstance(e.get("dur"), decimal.Decimal) else 0)
        lo = ts if lo is None or ts < lo else lo
        hi = end if hi is None or end > hi else hi
        step = None
        name = e.get("name")
        if (str(e.get("pid")), str(e.get("tid"))) in steps_tid and isinstance(name, str) and name.isdigit():
            step = int(name)
            max_step = max(max_step, step)
        mark_ts, mark_step = "\x00TS\x00", "\x00STEP\x00"
        c = dict(e)
        c["ts"] = mark_ts
        if step is not None:
            c["name"] = mark_step
        text = enc(c)
        a, rest = text.split(json.dumps(mark_ts), 1)
        if step is not None:
            b, z = rest.split(json.dumps(mark_step), 1)
        else:
            b, z = rest, ""
        tmpl.append((a, ts, b, step, z))
    if lo is None:
        raise SystemExit("tile_trace.py: the source has no timed events")
    return meta, tmpl, hi - lo + decimal.Decimal(1000), max_step + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("--size", default="1G", help="JSON bytes to reach (before compression)")
    ap.add_argument("--out", required=True, help="output .json.gz")
    a = ap.parse_args()
    want = parse_size(a.size)
    doc = load(a.source)
    meta, tmpl, shift, stride = templates(doc)
    dtu = doc.get("displayTimeUnit") if isinstance(doc, dict) else None
    with open(a.out, "wb") as raw:
        gz = subprocess.Popen(["gzip", "-6", "-c"], stdin=subprocess.PIPE, stdout=raw)
        out = gz.stdin
        head = "{"
        if isinstance(dtu, str):
            head += '"displayTimeUnit":' + json.dumps(dtu) + ","
        head += '"traceEvents":['
        written = len(head)
        out.write(head.encode())
        first = True
        for m in meta:
            out.write(((",\n" if not first else "") + m).encode("utf-8"))
            written += len(m) + 2
            first = False
        k = events = 0
        while written < want:
            off = shift * k
            chunk = []
            for pre, ts, mid, step, suf in tmpl:
                s = pre + str(ts + off) + mid
                if step is not None:
                    s += json.dumps(str(step + stride * k)) + suf
                chunk.append(s)
            text = ("" if first else ",\n") + ",\n".join(chunk)
            first = False
            data = text.encode("utf-8")
            out.write(data)
            written += len(data)
            events += len(chunk)
            k += 1
        out.write(b"]}\n")
        out.close()
        if gz.wait() != 0:
            raise SystemExit("tile_trace.py: gzip failed")
    print(json.dumps({"copies": k, "events": events + len(meta), "json_bytes": written + 3,
                      "out": a.out}))


if __name__ == "__main__":
    sys.exit(main())
