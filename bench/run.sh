#!/usr/bin/env bash
# bench/run.sh - profsum throughput and memory, measured against `gzip -dc`
# on the same file. See bench/README.md.
#
#   make bench                         (builds profsum.so, then runs this)
#   BENCH_SIZES="10M 100M" bash bench/run.sh
#
# Environment:
#   BENCH_SIZES   uncompressed trace sizes to test      (default "10M 100M 1G")
#   BENCH_REPEAT  runs per measurement, best time kept  (default 3)
#   BENCH_SHAPE   tpu | gpu                             (default tpu)
#   BENCH_SEED    generator seed                        (default 1)
#   BENCH_DATA    where traces are generated            (default bench/data)
#   BENCH_CHECK_EXCL=0  do not fail when sum(excl_ps) differs from the generator
#   PROFSUM_SO    the extension                         (default ./profsum.so)
#   SQLITE3       the sqlite3 shell                     (default sqlite3)
#   PYTHON        Python for the generator              (default /usr/bin/python3)
set -euo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
cd "$ROOT"

SIZES=${BENCH_SIZES:-"10M 100M 1G"}
REPEAT=${BENCH_REPEAT:-3}
SHAPE=${BENCH_SHAPE:-tpu}
SEED=${BENCH_SEED:-1}
DATA=${BENCH_DATA:-$HERE/data}
CHECK_EXCL=${BENCH_CHECK_EXCL:-1}
SO=${PROFSUM_SO:-$ROOT/profsum.so}
SQLITE3=${SQLITE3:-sqlite3}
PY=${PYTHON:-/usr/bin/python3}
TIME=/usr/bin/time

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# ---- prerequisites ----------------------------------------------------------
[[ -x $TIME ]] || die "$TIME not found: install it (apt-get install time)"
command -v "$SQLITE3" >/dev/null 2>&1 || die "the sqlite3 shell '$SQLITE3' was not found: install it (apt-get install sqlite3) or set SQLITE3"
[[ -x $PY ]] || die "$PY not found (set PYTHON)"
command -v gzip >/dev/null 2>&1 || die "gzip not found"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"
[[ $SHAPE == tpu || $SHAPE == gpu ]] || die "BENCH_SHAPE must be tpu or gpu, got '$SHAPE'"
if [[ ! -f $SO ]]; then
  die "profsum.so not found at $SO: run 'make' first (or 'make bench', which builds it)"
fi
case $SO in /*) ;; *) SO="$PWD/$SO" ;; esac
LOAD_ERR=$("$SQLITE3" -bail :memory: -cmd ".load '$SO'" "SELECT 1;" 2>&1 >/dev/null) \
  || die "cannot load $SO into $SQLITE3: ${LOAD_ERR:-unknown error} (rebuild with 'make')"
[[ -z $LOAD_ERR ]] || die "loading $SO printed an error: $LOAD_ERR"

mkdir -p "$DATA"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/profsum-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

now() {  # wall clock in seconds with microseconds
  if [[ -n ${EPOCHREALTIME:-} ]]; then printf '%s\n' "$EPOCHREALTIME"; else date +%s.%N; fi
}

# measure NAME OUTFILE CMD...: runs CMD $REPEAT times under /usr/bin/time;
# appends "NAME best_wall_s best_e_s max_rss_kb" to $TMP/measure.txt.
# The wall time is taken around the run with microsecond resolution (the
# %e of /usr/bin/time has only 10 ms); %M is the peak RSS.
measure() {
  local name=$1 out=$2; shift 2
  local best="" beste="" rss=0 i t0 t1 w e m
  for ((i = 0; i < REPEAT; i++)); do
    t0=$(now)
    if ! $TIME -f '%e %M' -o "$TMP/time.txt" "$@" >"$out" 2>"$TMP/stderr.txt"; then
      printf 'bench: command failed: %s\n' "$*" >&2
      sed 's/^/  | /' "$TMP/stderr.txt" >&2
      exit 1
    fi
    t1=$(now)
    w=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.6f", b - a}')
    read -r e m < <(tail -n 1 "$TMP/time.txt")
    if [[ -z $best ]] || awk -v a="$w" -v b="$best" 'BEGIN{exit !(a < b)}'; then best=$w; beste=$e; fi
    ((m > rss)) && rss=$m
  done
  printf '%s %s %s %s\n' "$name" "$best" "$beste" "$rss" >>"$TMP/measure.txt"
}

sql_quote() { printf "'%s'" "${1//\'/\'\'}"; }

GEN_SHA=$(sha256sum "$HERE/gen_trace.py" | cut -d' ' -f1)
: >"$TMP/measure.txt"
: >"$TMP/files.txt"

# Baseline: the shell with the extension loaded, doing nothing.
measure baseline /dev/null "$SQLITE3" -bail :memory: -cmd ".load '$SO'" "SELECT 1;"

for SIZE in $SIZES; do
  [[ $SIZE =~ ^[0-9]+(\.[0-9]+)?([KMG]i?)?B?$ ]] || die "bad size '$SIZE' in BENCH_SIZES (use e.g. 10M 100M 1G)"
  F="$DATA/trace-$SHAPE-$SIZE-s$SEED.json.gz"
  META="${F%.json.gz}.gen.json"
  KEY="gen_sha=$GEN_SHA shape=$SHAPE size=$SIZE seed=$SEED"
  if [[ -f $F && -f $META && -f $F.key && "$(cat "$F.key")" == "$KEY" ]]; then
    echo "bench: reusing $F" >&2
  else
    echo "bench: generating $F ($SIZE uncompressed, shape $SHAPE) ..." >&2
    rm -f "$F" "$META" "$F.key"
    "$PY" "$HERE/gen_trace.py" --size "$SIZE" --shape "$SHAPE" --seed "$SEED" \
      --out "$F.tmp.gz" >"$META.tmp" || die "generator failed for $SIZE"
    mv "$F.tmp.gz" "$F"
    mv "$META.tmp" "$META"
    printf '%s' "$KEY" >"$F.key"
  fi
  ROWS=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"])' "$META")
  EXCL=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["excl_ps_sum"])' "$META")
  Q=$(sql_quote "$F")

  echo "bench: $SIZE: gzip -dc ..." >&2
  measure "gzip:$SIZE" /dev/null gzip -dc "$F"

  echo "bench: $SIZE: count(*) ..." >&2
  measure "scan:$SIZE" "$TMP/count.txt" "$SQLITE3" -bail :memory: -cmd ".load '$SO'" \
    "SELECT count(*) FROM trace_events($Q);"
  GOT=$(tr -d '[:space:]' <"$TMP/count.txt")
  if [[ $GOT != "$ROWS" ]]; then
    echo "bench: FAIL: count(*) FROM trace_events('$F') returned '$GOT'," >&2
    echo "bench: FAIL: but the generator wrote $ROWS rows (every traceEvents entry with a string ph)." >&2
    exit 1
  fi

  echo "bench: $SIZE: sum(excl_ps) ..." >&2
  measure "excl:$SIZE" "$TMP/excl.txt" "$SQLITE3" -bail :memory: -cmd ".load '$SO'" \
    "SELECT sum(excl_ps) FROM trace_events($Q);"
  GOTX=$(tr -d '[:space:]' <"$TMP/excl.txt")
  EXCL_OK=1
  if [[ $GOTX != "$EXCL" ]]; then
    EXCL_OK=0
    echo "bench: sum(excl_ps) FROM trace_events('$F') returned '$GOTX'; the generator computed $EXCL" >&2
    if [[ $CHECK_EXCL != 0 ]]; then
      echo "bench: FAIL: exclusive time differs (summary-v1-spec section 2); BENCH_CHECK_EXCL=0 to report anyway" >&2
      exit 1
    fi
  fi
  printf '%s\t%s\t%s\t%s\n' "$SIZE" "$F" "$META" "$EXCL_OK" >>"$TMP/files.txt"
done

# ---- report -----------------------------------------------------------------
PROFSUM_VERSION=$("$SQLITE3" :memory: -cmd ".load '$SO'" "SELECT profsum_version();" 2>/dev/null || echo unknown)
export BENCH_TMP="$TMP" BENCH_OUT="$HERE" BENCH_REPEAT="$REPEAT" BENCH_SHAPE="$SHAPE" \
  BENCH_SO="$SO" PROFSUM_VERSION SQLITE3 BENCH_ROOT="$ROOT"
"$PY" - <<'EOF'
import json, os, platform, subprocess, time

tmp, out = os.environ["BENCH_TMP"], os.environ["BENCH_OUT"]


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        return ""


meas = {}
for line in open(os.path.join(tmp, "measure.txt")):
    name, wall, e, rss = line.split()
    meas[name] = {"wall_s": float(wall), "time_e_s": float(e), "peak_rss_kb": int(rss)}
base_kb = meas["baseline"]["peak_rss_kb"]

cpu = ""
try:
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            cpu = l.split(":", 1)[1].strip()
            break
except OSError:
    pass
env = {
    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "machine": platform.machine(), "kernel": platform.release(),
    "cpu": cpu, "cpus": os.cpu_count(),
    "sqlite3": sh(os.environ["SQLITE3"], "--version").split(" ")[0],
    "gzip": sh("gzip", "--version").splitlines()[0] if sh("gzip", "--version") else "",
    "profsum_version": os.environ.get("PROFSUM_VERSION", "unknown"),
    "profsum_commit": sh("git", "-C", os.environ["BENCH_ROOT"], "rev-parse", "--short", "HEAD") or "unknown",
    "repeat": int(os.environ["BENCH_REPEAT"]),
    "shape": os.environ["BENCH_SHAPE"],
    "baseline_rss_kb": base_kb,
}

rows = []
for line in open(os.path.join(tmp, "files.txt")):
    size, path, meta, excl_ok = line.rstrip("\n").split("\t")
    g = json.load(open(meta))
    gz, sc, ex = meas["gzip:" + size], meas["scan:" + size], meas["excl:" + size]
    n, mb = g["rows"], g["bytes"] / 1e6
    r = {
        "size": size, "file": os.path.relpath(path, os.environ["BENCH_ROOT"]),
        "bytes": g["bytes"], "compressed_bytes": os.path.getsize(path), "events": n,
        "gzip": gz, "scan": sc, "excl": ex,
        "scan_over_gzip": sc["wall_s"] / gz["wall_s"],
        "excl_over_gzip": ex["wall_s"] / gz["wall_s"],
        "gzip_mb_s": mb / gz["wall_s"], "scan_mb_s": mb / sc["wall_s"], "excl_mb_s": mb / ex["wall_s"],
        "scan_us_per_event": sc["wall_s"] * 1e6 / n, "excl_us_per_event": ex["wall_s"] * 1e6 / n,
        "scan_rss_bytes_per_event": sc["peak_rss_kb"] * 1024 / n,
        "excl_rss_bytes_per_event": ex["peak_rss_kb"] * 1024 / n,
        "excl_ps_sum_expected": g["excl_ps_sum"], "excl_ps_matches": excl_ok == "1",
        "generator": g,
    }
    rows.append(r)

hdr = ("| trace | MB | MB gz | events | gzip -dc s | count(*) s | excl s | scan/gzip | excl/gzip "
       "| scan MB/s | excl MB/s | scan µs/ev | excl µs/ev | scan RSS MB | excl RSS MB | scan B/ev | excl B/ev |")
sep = "|" + "---|" * (hdr.count("|") - 1)
lines = [hdr, sep]
for r in rows:
    lines.append("| %s | %.1f | %.1f | %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.1f | %.1f | %.3f | %.3f | %.1f | %.1f | %.0f | %.0f |%s" % (
        r["size"], r["bytes"] / 1e6, r["compressed_bytes"] / 1e6, r["events"],
        r["gzip"]["wall_s"], r["scan"]["wall_s"], r["excl"]["wall_s"],
        r["scan_over_gzip"], r["excl_over_gzip"], r["scan_mb_s"], r["excl_mb_s"],
        r["scan_us_per_event"], r["excl_us_per_event"],
        r["scan"]["peak_rss_kb"] / 1024, r["excl"]["peak_rss_kb"] / 1024,
        r["scan_rss_bytes_per_event"], r["excl_rss_bytes_per_event"],
        "" if r["excl_ps_matches"] else " (excl sum MISMATCH)"))
table = "\n".join(lines)

md = ["# profsum benchmark results", "",
      "Generated by `bench/run.sh` (see `bench/README.md` for the method).", "",
      "- date: %s" % env["date_utc"],
      "- machine: %s, %s CPUs (%s), Linux %s" % (env["cpu"] or "?", env["cpus"], env["machine"], env["kernel"]),
      "- sqlite3 %s, %s, profsum %s (commit %s)" % (env["sqlite3"], env["gzip"], env["profsum_version"], env["profsum_commit"]),
      "- traces: generated by `bench/gen_trace.py --shape %s` (xprof-shaped, gzip -6)" % env["shape"],
      "- times: best of %d wall-clock runs; RSS: peak of those runs (`/usr/bin/time %%M`), "
      "including the sqlite3 shell itself (%.1f MB with profsum loaded and no query)" % (env["repeat"], base_kb / 1024),
      "- count(*) = `SELECT count(*) FROM trace_events(FILE)`; excl = `SELECT sum(excl_ps) FROM trace_events(FILE)`; "
      "both results checked against the generator's counts",
      "", table, ""]
with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(md))
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"env": env, "results": rows}, f, indent=2, sort_keys=True)
    f.write("\n")
print(table)
print()
print("baseline RSS (sqlite3 + profsum, no query): %.1f MB; written bench/results.md and bench/results.json" % (base_kb / 1024))
EOF
