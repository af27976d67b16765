#!/usr/bin/env bash
# bench/run.sh - profsum throughput and memory, measured against `gzip -dc`
# on the same file. See bench/README.md.
#
#   make bench                         (builds profsum.so, then runs this)
#   BENCH_SIZES="10M 100M" bash bench/run.sh
#
# Environment:
#   BENCH_SIZES   uncompressed trace sizes to test      (default "10M 100M 1G")
#   BENCH_REPEAT  rounds, best time kept                 (default 3)
#   BENCH_MAX_RUNS  most runs per round of a small trace  (default 10; 1: one
#                 run per round at every size)
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
MAX_RUNS=${BENCH_MAX_RUNS:-10}
SHAPE=${BENCH_SHAPE:-tpu}
SEED=${BENCH_SEED:-1}
DATA=${BENCH_DATA:-$HERE/data}
CHECK_EXCL=${BENCH_CHECK_EXCL:-1}
SO=${PROFSUM_SO:-$ROOT/profsum.so}
SQLITE3=${SQLITE3:-sqlite3}
PY=${PYTHON:-/usr/bin/python3}

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# ---- prerequisites ----------------------------------------------------------
command -v "$SQLITE3" >/dev/null 2>&1 || die "the sqlite3 shell '$SQLITE3' was not found: install it (apt-get install sqlite3) or set SQLITE3"
[[ -x $PY ]] || die "$PY not found (set PYTHON)"
command -v gzip >/dev/null 2>&1 || die "gzip not found"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"
[[ $MAX_RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_MAX_RUNS must be a positive integer, got '$MAX_RUNS'"
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

# Run a private copy of the extension: a rebuild of profsum.so while the
# benchmark runs (minutes for 1G) must not mix two builds in one table.
SO_SRC=$SO
SO="$TMP/profsum.so"
cp "$SO_SRC" "$SO"
SO_SHA=$(sha256sum "$SO" | cut -d' ' -f1)

# The import inside a running connection (bench/inproc.py): needs a Python
# whose sqlite3 module loads extensions (Debian's /usr/bin/python3 does).
INPROC=1
if ! INPROC_ERR=$("$PY" "$HERE/inproc.py" --probe "$SO" 2>&1); then
  INPROC=0
  printf 'bench: note: %s cannot load %s (%s): the import in a running connection is not measured\n' \
    "$PY" "$SO" "$(printf '%s' "$INPROC_ERR" | tail -n 1)" >&2
fi
: >"$TMP/inproc.txt"

# The timer (bench/measure.c), compiled into the run's temporary folder.
MEASURE="$TMP/measure"
${CC:-cc} -O2 -o "$MEASURE" "$HERE/measure.c" || die "cannot compile bench/measure.c (install gcc)"

# time_once OUTFILE CMD...: runs CMD once under bench/measure.c, stdout to
# OUTFILE; sets W (wall seconds, taken right around the fork and the wait), E (W rounded to 10 ms, as GNU time's %e), M (peak RSS
# in KB), C (user + system CPU seconds of all threads: above W when the
# reader runs its inflate thread in parallel) and F (minor page faults: the
# pages touched for the first time), from wait4()'s rusage.
time_once() {
  local out=$1; shift
  if ! "$MEASURE" "$TMP/time.txt" "$out" "$TMP/stderr.txt" "$@"; then
    printf 'bench: command failed: %s\n' "$*" >&2
    sed 's/^/  | /' "$TMP/stderr.txt" >&2
    exit 1
  fi
  local u s
  read -r W M u s F < "$TMP/time.txt"
  E=$(awk -v a="$W" 'BEGIN{printf "%.2f", a}')
  C=$(awk -v a="$u" -v b="$s" 'BEGIN{printf "%.2f", a + b}')
}

# Best-of bookkeeping, per measurement NAME: the best wall time (with its %e
# and CPU time), and the highest peak RSS and page-fault count of the runs.
declare -A BW BE BC BR BF
best_add() {  # best_add NAME: account the last time_once
  local k=$1
  # every run (its round i and run j in the round), for the medians and the
  # one-run-per-round figure
  printf '%s %s %s %s\n' "$k" "$W" "${i:-0}" "${j:-0}" >>"$TMP/samples.txt"
  if [[ -z ${BW[$k]:-} ]] || awk -v a="$W" -v b="${BW[$k]}" 'BEGIN{exit !(a < b)}'; then
    BW[$k]=$W BE[$k]=$E BC[$k]=$C
  fi
  ((M > ${BR[$k]:-0})) && BR[$k]=$M
  ((F > ${BF[$k]:-0})) && BF[$k]=$F
  return 0
}
best_write() {  # best_write NAME: "NAME best_wall_s best_e_s max_rss_kb cpu_s max_faults" to measure.txt
  printf '%s %s %s %s %s %s\n' "$1" "${BW[$1]}" "${BE[$1]}" "${BR[$1]}" "${BC[$1]}" "${BF[$1]}" >>"$TMP/measure.txt"
}

# measure NAME OUTFILE CMD...: runs CMD $REPEAT times under bench/measure.c
# and writes its line to $TMP/measure.txt.
measure() {
  local name=$1 out=$2 i; shift 2
  for ((i = 0; i < REPEAT; i++)); do
    time_once "$out" "$@"
    best_add "$name"
  done
  best_write "$name"
}

sql_quote() { printf "'%s'" "${1//\'/\'\'}"; }

LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
# What one fresh page of memory costs here (bench/measure.c -p): best of
# five passes over 4096 pages, before and after the measurements.
PAGE_US_START=$("$MEASURE" -p 4096) || die "measure -p failed"
GEN_SHA=$(sha256sum "$HERE/gen_trace.py" | cut -d' ' -f1)
: >"$TMP/measure.txt"
: >"$TMP/files.txt"

# Baseline: the shell with the extension loaded, doing nothing.
measure baseline /dev/null "$SQLITE3" -bail :memory: -cmd ".load '$SO'" "SELECT 1;"

# Fixed costs: the same commands on a gzipped trace with no events (process
# start, loading the extension, creating the schema, the summary document).
# Measured in every round beside the real files; "net" figures per MB
# subtract them, so that the cost per MB of the work that grows with the
# trace can be compared from 10 MB to 1 GB.
EMPTY="$TMP/empty.json.gz"
printf '{"traceEvents":[]}' | gzip -6 >"$EMPTY"
QE=$(sql_quote "$EMPTY")
measure_empty() {
  local db="$TMP/empty.db"
  # the floor of every command below: the sqlite3 shell starting and
  # exiting, without the extension
  time_once /dev/null "$SQLITE3" -bail "$db" "SELECT 1;"
  best_add "shell:empty"
  time_once /dev/null gzip -dc "$EMPTY"
  best_add "gzip:empty"
  time_once /dev/null "$SQLITE3" -bail :memory: -cmd ".load '$SO'" "SELECT count(*) FROM trace_events($QE);"
  best_add "scan:empty"
  time_once /dev/null "$SQLITE3" -bail :memory: -cmd ".load '$SO'" "SELECT sum(excl_ps) FROM trace_events($QE);"
  best_add "excl:empty"
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
  time_once /dev/null "$SQLITE3" -bail "$db" -cmd ".load '$SO'" \
    "SELECT profsum_import($QE,'bench'); SELECT length(profsum_summary_json('bench'));"
  best_add "import:empty"
  rm -f "$db" "$db-journal" "$db-wal" "$db-shm"
}

# The traces: generated once, reused while the generator and the key match.
declare -A F_OF ROWS_OF EXCL_OF XEXP_OF EXCL_OK_OF SUMLEN_OF NCOMPLETE_OF DBBYTES_OF
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
  F_OF[$SIZE]=$F
  ROWS_OF[$SIZE]=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["rows"])' "$META")
  EXCL_OF[$SIZE]=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["excl_ps_sum"])' "$META")
  XEXP_OF[$SIZE]=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1])).get("x_excl_rows", ""))' "$META")
  EXCL_OK_OF[$SIZE]=1
done

# Runs per round of each trace: round(sqrt(largest / size)), at most
# $MAX_RUNS (10M, 100M, 1G: 10, 3 and 1).  A run of a small trace lasts
# milliseconds, so one slow spell of a shared machine weighs on it whole,
# where a 1 GB run averages the spells over seconds; the best of more runs
# finds its undisturbed time as surely.  The empty trace gets the most.
declare -A RUNS_OF
while read -r SIZE N; do RUNS_OF[$SIZE]=$N; done < <("$PY" - "$MAX_RUNS" $SIZES <<'PYEOF'
import math, re, sys
cap = int(sys.argv[1])
mult = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}
def nbytes(s):
    m = re.match(r"^([0-9.]+)([KMG]i?)?B?$", s)
    return float(m.group(1)) * mult[m.group(2) or ""]
sizes = sys.argv[2:]
top = max(nbytes(s) for s in sizes)
runs = {s: max(1, min(cap, round(math.sqrt(top / nbytes(s))))) for s in sizes}
for s in sizes:
    print(s, runs[s])
print("empty", max(runs.values()))
PYEOF
)

# measure_size SIZE: the four commands once on that trace, with the checks.
measure_size() {
  local SIZE=$1
  local F=${F_OF[$SIZE]} ROWS=${ROWS_OF[$SIZE]} EXCL=${EXCL_OF[$SIZE]} XEXP=${XEXP_OF[$SIZE]}
  local Q DB="$TMP/import.db" GOT GOTX SUMLEN NTR NCOMPLETE
  Q=$(sql_quote "$F")

  time_once /dev/null gzip -dc "$F"
  best_add "gzip:$SIZE"

  # the scan: every event read and turned into a row
  time_once "$TMP/count.txt" "$SQLITE3" -bail :memory: -cmd ".load '$SO'" \
    "SELECT count(*) FROM trace_events($Q);"
  best_add "scan:$SIZE"
  GOT=$(tr -d '[:space:]' <"$TMP/count.txt")
  if [[ $GOT != "$ROWS" ]]; then
    echo "bench: FAIL: count(*) FROM trace_events('$F') returned '$GOT'," >&2
    echo "bench: FAIL: but the generator wrote $ROWS rows (every traceEvents entry with a string ph)." >&2
    exit 1
  fi

  # the richest column: needs the track model (sort, nesting, exclusive time)
  time_once "$TMP/excl.txt" "$SQLITE3" -bail :memory: -cmd ".load '$SO'" \
    "SELECT sum(excl_ps) FROM trace_events($Q);"
  best_add "excl:$SIZE"
  GOTX=$(tr -d '[:space:]' <"$TMP/excl.txt")
  if [[ $GOTX != "$EXCL" ]]; then
    EXCL_OK_OF[$SIZE]=0
    echo "bench: sum(excl_ps) FROM trace_events('$F') returned '$GOTX'; the generator computed $EXCL" >&2
    if [[ $CHECK_EXCL != 0 ]]; then
      echo "bench: FAIL: exclusive time differs (summary-v1-spec section 2); BENCH_CHECK_EXCL=0 to report anyway" >&2
      exit 1
    fi
  fi

  # Import + full summary: a fresh database file per run (deleted after
  # it), so every run pays for creating the schema, as a first import does.
  rm -f "$DB" "$DB-journal" "$DB-wal" "$DB-shm"
  time_once "$TMP/import.txt" "$SQLITE3" -bail "$DB" -cmd ".load '$SO'" \
    "SELECT profsum_import($Q,'bench'); SELECT length(profsum_summary_json('bench'));"
  best_add "import:$SIZE"
  # line 1: the trace id; line 2: the length of the summary document
  SUMLEN=$(sed -n 2p "$TMP/import.txt" | tr -d '[:space:]')
  if ! [[ $(sed -n 1p "$TMP/import.txt") =~ ^[0-9]+$ && $SUMLEN =~ ^[0-9]+$ ]] || ((SUMLEN == 0)); then
    echo "bench: FAIL: profsum_import('$F') + profsum_summary_json did not return a trace id and a non-empty summary:" >&2
    sed 's/^/  | /' "$TMP/import.txt" >&2
    exit 1
  fi
  read -r NTR NCOMPLETE < <("$SQLITE3" -bail -separator ' ' "$DB" -cmd ".load '$SO'" \
    "SELECT count(*), ifnull(max(num_complete_events), 'NULL') FROM profsum_trace;")
  if [[ $NTR != 1 ]]; then
    echo "bench: FAIL: after one import, profsum_trace has $NTR rows (expected 1)" >&2
    exit 1
  fi
  if [[ -n $XEXP && $NCOMPLETE != "$XEXP" ]]; then
    echo "bench: FAIL: profsum_trace.num_complete_events = $NCOMPLETE after importing '$F'," >&2
    echo "bench: FAIL: but the generator wrote $XEXP X events with dur > 0 (x_excl_rows)." >&2
    exit 1
  fi
  SUMLEN_OF[$SIZE]=$SUMLEN
  NCOMPLETE_OF[$SIZE]=$NCOMPLETE
  DBBYTES_OF[$SIZE]=$(stat -c %s "$DB")
  rm -f "$DB" "$DB-journal" "$DB-wal" "$DB-shm"
}

# inproc_size SIZE|empty: the import + summary in a running connection
# (bench/inproc.py, a process of its own): RUNS_OF[SIZE] imports of the
# trace, at least 2, into a database that has profsum's schema already,
# each timed (the first import of the process and the later ones are
# reported apart), and the first one's peak memory above the process; then
# as many plain scans (count(*)) in the same connection, each timed.  One
# line per call in $TMP/inproc.txt: "SIZE {json}".
inproc_size() {
  local SIZE=$1 F LINE N
  ((INPROC)) || return 0
  if [[ $SIZE == empty ]]; then F=$EMPTY; else F=${F_OF[$SIZE]}; fi
  N=${RUNS_OF[$SIZE]}
  ((N >= 2)) || N=2
  LINE=$("$PY" "$HERE/inproc.py" "$SO" "$EMPTY" "$F" "$N" "$TMP") \
    || die "bench/inproc.py failed on '$F'"
  if [[ $SIZE != empty && -n ${XEXP_OF[$SIZE]} ]]; then
    local GOT
    GOT=$(printf '%s' "$LINE" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["num_complete_events"])')
    [[ $GOT == "${XEXP_OF[$SIZE]}" ]] || die "FAIL: in a running connection, num_complete_events = $GOT after importing '$F', but the generator wrote ${XEXP_OF[$SIZE]} X events with dur > 0"
  fi
  if [[ $SIZE != empty ]]; then
    local ROWS
    ROWS=$(printf '%s' "$LINE" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["scan_rows"])')
    [[ $ROWS == "${ROWS_OF[$SIZE]}" ]] || die "FAIL: in a running connection, count(*) FROM trace_events('$F') returned $ROWS, but the generator wrote ${ROWS_OF[$SIZE]} rows"
  fi
  printf '%s %s\n' "$SIZE" "$LINE" >>"$TMP/inproc.txt"
}

# $REPEAT rounds; each round runs every command on the empty trace and on
# every size in turn (a size RUNS_OF[size] times, above).  A shared machine
# has slow and fast spells that last minutes; interleaved like this they hit every size and every command
# alike (measuring the sizes one after the other, a slow spell could land on
# one size only and bend the cost per MB), and every ratio to gzip -dc
# compares runs made seconds apart.
for ((i = 1; i <= REPEAT; i++)); do
  echo "bench: round $i/$REPEAT: empty trace, then $SIZES: gzip -dc, count(*), sum(excl_ps), import + summary, the same in a running connection ..." >&2
  for ((j = 0; j < ${RUNS_OF[empty]}; j++)); do measure_empty; done
  inproc_size empty
  for SIZE in $SIZES; do
    for ((j = 0; j < ${RUNS_OF[$SIZE]}; j++)); do measure_size "$SIZE"; done
    inproc_size "$SIZE"
  done
done

for SIZE in $SIZES; do
  for k in gzip scan excl import; do best_write "$k:$SIZE"; done
  [[ -n ${XEXP_OF[$SIZE]} ]] || echo "bench: note: the generator report for $SIZE has no x_excl_rows; num_complete_events (${NCOMPLETE_OF[$SIZE]}) not checked" >&2
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$SIZE" "${F_OF[$SIZE]}" "${F_OF[$SIZE]%.json.gz}.gen.json" \
    "${EXCL_OK_OF[$SIZE]}" "${SUMLEN_OF[$SIZE]}" "${NCOMPLETE_OF[$SIZE]}" "${XEXP_OF[$SIZE]}" \
    "${DBBYTES_OF[$SIZE]}" >>"$TMP/files.txt"
done

for k in shell gzip scan excl import; do best_write "$k:empty"; done

# ---- report -----------------------------------------------------------------
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
PAGE_US_END=$("$MEASURE" -p 4096) || die "measure -p failed"
PROFSUM_VERSION=$("$SQLITE3" :memory: -cmd ".load '$SO'" "SELECT profsum_version();" 2>/dev/null || echo unknown)
PROFSUM_DEBUG=$("$SQLITE3" :memory: -cmd ".load '$SO'" "SELECT profsum_debug();" 2>/dev/null || true)
BENCH_RUNS="empty:${RUNS_OF[empty]}"
for SIZE in $SIZES; do BENCH_RUNS+=" $SIZE:${RUNS_OF[$SIZE]}"; done
export BENCH_RUNS
export BENCH_TMP="$TMP" BENCH_OUT="$HERE" BENCH_REPEAT="$REPEAT" BENCH_SHAPE="$SHAPE" \
  BENCH_SO="$SO_SRC" BENCH_SO_SHA="$SO_SHA" PROFSUM_VERSION PROFSUM_DEBUG SQLITE3 LOADAVG_START LOADAVG_END BENCH_ROOT="$ROOT" \
  PAGE_US_START PAGE_US_END
"$PY" - <<'EOF'
import json, os, platform, subprocess, time

tmp, out = os.environ["BENCH_TMP"], os.environ["BENCH_OUT"]


def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:
        return ""


def best_median(v):
    """(smallest, median) of a non-empty list."""
    v = sorted(v)
    n = len(v)
    return v[0], (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def band_left(order, cost):
    """What a spread of 1.2 leaves for the part of the smallest size's time
    that does not grow with the trace.  The spread is the dearest size's
    ms/MB over the cheapest's; the smallest trace is the dearest, so it may
    cost 1.2 x the cheapest other size's ms/MB.  Its growing part costs the
    incremental ms/MB of the first step (smallest -> next size); the rest of
    its time is what it pays once.  cost(r) gives (best ms, ms/MB,
    incremental ms/MB) of a row; order is the rows by size.  Returns the
    figures and the sentence's common part, "... so N ms are left"."""
    small = order[0]
    cheap = min(order[1:], key=lambda r: cost(r)[1])
    mb_s = small["bytes"] / 1e6
    incr1 = cost(order[1])[2]
    budget = 1.2 * cost(cheap)[1] * mb_s
    allowed = budget - incr1 * mb_s
    once = cost(small)[0] - incr1 * mb_s
    text = ("%s may cost 1.2 x %.2f ms/MB (%s, the cheapest other size) x %.1f MB = %.1f ms; its growing part "
            "is %.2f ms/MB (incremental, %s → %s) x %.1f MB = %.1f ms, so %.1f ms are left" % (
                small["size"], cost(cheap)[1], cheap["size"], mb_s, budget, incr1,
                small["size"], order[1]["size"], mb_s, incr1 * mb_s, allowed))
    return allowed, once, text


meas = {}
for line in open(os.path.join(tmp, "measure.txt")):
    name, wall, e, rss, cpu, faults = line.split()
    meas[name] = {"wall_s": float(wall), "time_e_s": float(e), "peak_rss_kb": int(rss), "cpu_s": float(cpu),
                  "minor_faults": int(faults)}
samples, first_of_round = {}, {}
for line in open(os.path.join(tmp, "samples.txt")):
    name, wall, rnd, run = line.split()
    samples.setdefault(name, []).append(float(wall))
    if run == "0":
        first_of_round.setdefault(name, []).append(float(wall))
for name, v in samples.items():
    if name in meas:
        meas[name]["samples_wall_s"] = list(v)          # in the order run
        meas[name]["median_wall_s"] = best_median(v)[1]
        meas[name]["runs"] = len(v)
        # the first run of each round only: one draw per round at every size,
        # the method before BENCH_MAX_RUNS (best of BENCH_REPEAT)
        meas[name]["best_first_of_round_wall_s"] = min(first_of_round.get(name, v))
runs_of = dict(x.split(":") for x in os.environ.get("BENCH_RUNS", "").split())   # in order
base_kb = meas["baseline"]["peak_rss_kb"]
fixed = {k: meas[k + ":empty"]["wall_s"] for k in ("gzip", "scan", "excl", "import")}

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
    "runs_per_round": {k: int(v) for k, v in runs_of.items()},
    "shape": os.environ["BENCH_SHAPE"],
    "baseline_rss_kb": base_kb,
    # best wall seconds of each command on a gzipped trace with no events
    "fixed_wall_s": fixed,
    # best wall seconds of `sqlite3 NEW.db "SELECT 1;"` (no extension): the
    # process start every measured command pays
    "shell_start_wall_s": meas["shell:empty"]["wall_s"] if "shell:empty" in meas else None,
    # 1/5/15-minute load averages before and after the measurements: on a
    # shared machine, read the wall times with these in mind
    "loadavg_start": os.environ.get("LOADAVG_START", ""),
    "loadavg_end": os.environ.get("LOADAVG_END", ""),
    # microseconds one fresh page of anonymous memory costs (bench/measure.c
    # -p: mapped, written once, best of five passes over 4096 pages), before
    # and after the measurements
    "page_fault_us": [float(os.environ["PAGE_US_START"]), float(os.environ["PAGE_US_END"])],
    "baseline_minor_faults": meas["baseline"]["minor_faults"],
    "profsum_so": os.environ["BENCH_SO"],
    "profsum_so_sha256": os.environ["BENCH_SO_SHA"],
}
# what the extension says about its build (the commit it was built at, flags)
for l in os.environ.get("PROFSUM_DEBUG", "").splitlines():
    k, _, v = l.partition(":")
    if k.strip() in ("commit", "build flags", "zlib (runtime)"):
        env["profsum_build_" + k.strip().replace(" ", "_").replace("(", "").replace(")", "")] = v.strip()

rows = []
for line in open(os.path.join(tmp, "files.txt")):
    size, path, meta, excl_ok, sumlen, ncomplete, xexp, dbbytes = line.rstrip("\n").split("\t")
    g = json.load(open(meta))
    gz, sc, ex, im = (meas[k + ":" + size] for k in ("gzip", "scan", "excl", "import"))
    n, mb = g["rows"], g["bytes"] / 1e6
    r = {
        "size": size, "file": os.path.relpath(path, os.environ["BENCH_ROOT"]),
        "bytes": g["bytes"], "compressed_bytes": os.path.getsize(path), "events": n,
        "gzip": gz, "scan": sc, "excl": ex, "import": im,
        "scan_over_gzip": sc["wall_s"] / gz["wall_s"],
        "excl_over_gzip": ex["wall_s"] / gz["wall_s"],
        "gzip_mb_s": mb / gz["wall_s"], "scan_mb_s": mb / sc["wall_s"], "excl_mb_s": mb / ex["wall_s"],
        "scan_us_per_event": sc["wall_s"] * 1e6 / n, "excl_us_per_event": ex["wall_s"] * 1e6 / n,
        "scan_rss_bytes_per_event": sc["peak_rss_kb"] * 1024 / n,
        "excl_rss_bytes_per_event": ex["peak_rss_kb"] * 1024 / n,
        "excl_ps_sum_expected": g["excl_ps_sum"], "excl_ps_matches": excl_ok == "1",
        "import_over_gzip": im["wall_s"] / gz["wall_s"],
        "import_mb_s": mb / im["wall_s"],
        "import_us_per_event": im["wall_s"] * 1e6 / n,
        "import_rss_bytes_per_event": im["peak_rss_kb"] * 1024 / n,
        "import_summary_json_chars": int(sumlen),
        "import_num_complete_events": int(ncomplete),
        "import_num_complete_events_expected": int(xexp) if xexp else None,
        "import_db_bytes": int(dbbytes),
        "generator": g,
        # peak RSS above the shell's own baseline, per event
        "import_net_rss_bytes_per_event": (im["peak_rss_kb"] - base_kb) * 1024 / n,
    }
    for k, m in (("gzip", gz), ("scan", sc), ("excl", ex), ("import", im)):
        r[k + "_ms_per_mb"] = m["wall_s"] * 1e3 / mb
        r[k + "_net_ms_per_mb"] = (m["wall_s"] - fixed[k]) * 1e3 / mb
        r[k + "_median_ms_per_mb"] = m["median_wall_s"] * 1e3 / mb
        r[k + "_round1_ms_per_mb"] = m["best_first_of_round_wall_s"] * 1e3 / mb
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

ihdr = ("| trace | MB | events | complete events | gzip -dc s | import+summary s | import/gzip "
        "| import MB/s | import µs/ev | import RSS MB | import B/ev | summary chars | DB KB |")
lines = [ihdr, "|" + "---|" * (ihdr.count("|") - 1)]
for r in rows:
    lines.append("| %s | %.1f | %d | %d | %.3f | %.3f | %.2f | %.1f | %.3f | %.1f | %.0f | %d | %d |" % (
        r["size"], r["bytes"] / 1e6, r["events"], r["import_num_complete_events"],
        r["gzip"]["wall_s"], r["import"]["wall_s"], r["import_over_gzip"],
        r["import_mb_s"], r["import_us_per_event"],
        r["import"]["peak_rss_kb"] / 1024, r["import_rss_bytes_per_event"],
        r["import_summary_json_chars"], r["import_db_bytes"] // 1024))
itable = "\n".join(lines)

fhdr = ("| trace | MB | gzip ms/MB | count(*) ms/MB | excl ms/MB | import ms/MB "
        "| gzip net ms/MB | count(*) net ms/MB | excl net ms/MB | import net ms/MB | import net / gzip net "
        "| import RSS above baseline, B/ev |")
lines = [fhdr, "|" + "---|" * (fhdr.count("|") - 1)]
for r in rows:
    lines.append("| %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |" % (
        r["size"], r["bytes"] / 1e6, r["gzip_ms_per_mb"], r["scan_ms_per_mb"], r["excl_ms_per_mb"],
        r["import_ms_per_mb"], r["gzip_net_ms_per_mb"], r["scan_net_ms_per_mb"], r["excl_net_ms_per_mb"],
        r["import_net_ms_per_mb"], r["import_net_ms_per_mb"] / r["gzip_net_ms_per_mb"],
        r["import_net_rss_bytes_per_event"]))


# Incremental cost per MB: from the previous (smaller) size to this one,
# (t - t_prev) / (MB - MB_prev): what each further MB costs, whatever is
# paid once per command (process start, schema, the summary document).
prev = None
for r in sorted(rows, key=lambda r: r["bytes"]):
    for k in ("gzip", "scan", "excl", "import"):
        r[k + "_incr_ms_per_mb"] = None if prev is None else (
            (r[k]["wall_s"] - prev[k]["wall_s"]) * 1e3 / ((r["bytes"] - prev["bytes"]) / 1e6))
    prev = r
incr = [r for r in rows if r["import_incr_ms_per_mb"] is not None]
if incr:
    lines.append("")
    lines.append("| from → to | gzip incr. ms/MB | count(*) incr. ms/MB | excl incr. ms/MB | import incr. ms/MB |")
    lines.append("|---|---|---|---|---|")
    order = sorted(rows, key=lambda r: r["bytes"])
    for a, b in zip(order, order[1:]):
        lines.append("| %s → %s | %.2f | %.2f | %.2f | %.2f |" % (
            a["size"], b["size"], b["gzip_incr_ms_per_mb"], b["scan_incr_ms_per_mb"],
            b["excl_incr_ms_per_mb"], b["import_incr_ms_per_mb"]))


def spread(key):
    v = [r[key] for r in rows]
    return max(v) / min(v) if rows and min(v) > 0 else float("nan")


PER_MB = ("gzip_ms_per_mb", "scan_ms_per_mb", "excl_ms_per_mb", "import_ms_per_mb",
          "gzip_net_ms_per_mb", "scan_net_ms_per_mb", "excl_net_ms_per_mb", "import_net_ms_per_mb")
spreads = {k: spread(k) for k in PER_MB}
for k in ("gzip", "scan", "excl", "import"):
    v = [r[k + "_incr_ms_per_mb"] for r in incr]
    spreads[k + "_incr_ms_per_mb"] = max(v) / min(v) if len(v) > 1 and min(v) > 0 else float("nan")
env["spread_max_over_min"] = spreads
lines.append("")
lines.append("Spread of the cost per MB over the sizes (largest / smallest): gzip -dc %.2f, count(*) %.2f, "
             "excl %.2f, import %.2f; net of the fixed costs: gzip -dc %.2f, count(*) %.2f, excl %.2f, import %.2f." % tuple(
                 spreads[k] for k in PER_MB))
if len(incr) > 1:
    lines.append("Spread of the incremental cost per MB: gzip -dc %.2f, count(*) %.2f, excl %.2f, import %.2f." % tuple(
        spreads[k + "_incr_ms_per_mb"] for k in ("gzip", "scan", "excl", "import")))
MED = ("gzip_median_ms_per_mb", "scan_median_ms_per_mb", "excl_median_ms_per_mb", "import_median_ms_per_mb")
ONE = ("gzip_round1_ms_per_mb", "scan_round1_ms_per_mb", "excl_round1_ms_per_mb", "import_round1_ms_per_mb")
for k in MED + ONE:
    spreads[k] = spread(k)
lines.append("")
lines.append("Median wall time per MB (all runs, not only the best): %s." % "; ".join(
    "%s: gzip -dc %.2f, count(*) %.2f, excl %.2f, import %.2f ms/MB (%d runs)" % (
        r["size"], r["gzip_median_ms_per_mb"], r["scan_median_ms_per_mb"], r["excl_median_ms_per_mb"],
        r["import_median_ms_per_mb"], r["import"]["runs"]) for r in rows))
lines.append("Spread of the median cost per MB: gzip -dc %.2f, count(*) %.2f, excl %.2f, import %.2f." % tuple(
    spreads[k] for k in MED))
lines.append("The same with one run per round at every size (the first run of each round: %d draws per size, "
             "as before small traces ran more often): %s; spread gzip -dc %.2f, count(*) %.2f, excl %.2f, "
             "import %.2f." % (env["repeat"], "; ".join(
                 "%s: import %.2f, count(*) %.2f ms/MB" % (r["size"], r["import_round1_ms_per_mb"],
                                                           r["scan_round1_ms_per_mb"]) for r in rows),
                 *(spreads[k] for k in ONE)))
lines.append("")
lines.append("Fixed costs (best wall time on a gzipped trace with no events): gzip -dc %.1f ms, count(*) %.1f ms, "
             "excl %.1f ms, import + summary into a new database file %.1f ms." % (
                 fixed["gzip"] * 1e3, fixed["scan"] * 1e3, fixed["excl"] * 1e3, fixed["import"] * 1e3))
if len(incr) > 0 and env["shell_start_wall_s"] is not None:
    order = sorted(rows, key=lambda r: r["bytes"])
    allowed, once, text = band_left(order, lambda r: (r["import"]["wall_s"] * 1e3, r["import_ms_per_mb"],
                                                      r["import_incr_ms_per_mb"]))
    env["import_fixed_allowed_ms"] = allowed
    env["import_fixed_actual_ms"] = once
    lines.append("")
    lines.append("What the 20 %% band leaves for the fixed part of the import: %s for everything it does once. "
                 "It takes %.1f ms (%.1f ms measured, less the growing part); the import + summary of an empty "
                 "trace takes %.1f ms, and the sqlite3 shell alone %.1f ms to start and exit "
                 "(`sqlite3 NEW.db \"SELECT 1;\"`, no extension)." % (
                     text, once, order[0]["import"]["wall_s"] * 1e3, fixed["import"] * 1e3,
                     env["shell_start_wall_s"] * 1e3))
ftable = "\n".join(lines)

# In a running connection (bench/inproc.py): per size the first import of
# each process (fresh memory, code run for the first time) and the later
# ones (the allocator warm), apart; the highest first-import peak above the
# process of all its processes.
inproc = {}
for line in open(os.path.join(tmp, "inproc.txt")):
    size, _, js = line.partition(" ")
    d = json.loads(js)
    e = inproc.setdefault(size, {"first_s": [], "later_s": [], "peaks_kb": [], "scan_s": []})
    e["first_s"].append(d["times_s"][0])
    e["later_s"] += d["times_s"][1:]
    e["scan_s"] += d.get("scan_times_s", [])
    if d["peak_above_kb"] is not None:
        e["peaks_kb"].append(d["peak_above_kb"])


ilines = []
if inproc and all(r["size"] in inproc for r in rows):
    if "empty" in inproc:
        env["inproc_fixed_first_s"] = min(inproc["empty"]["first_s"])
        env["inproc_fixed_later_s"] = min(inproc["empty"]["later_s"])
    order = sorted(rows, key=lambda r: r["bytes"])
    # the imports (first, later) and, in runs that measured it, the plain
    # scan in the same connections: no process start, no extension load, no
    # shell (the command-line count(*) above has all three)
    kinds = ("first", "later") + (("scan",) if all(inproc[r["size"]]["scan_s"] for r in order) else ())
    for r in order:
        e, n, mb = inproc[r["size"]], r["events"], r["bytes"] / 1e6
        peak = max(e["peaks_kb"]) if e["peaks_kb"] else None
        q = r["inproc"] = {
            "first_times_s": e["first_s"], "later_times_s": e["later_s"],
            "peak_above_kb": peak, "peak_above_kb_all": e["peaks_kb"],
            "bytes_per_event": peak * 1024 / n if peak is not None else None,
            "bytes_per_event_beyond_db": (peak * 1024 - r["import_db_bytes"]) / n if peak is not None else None,
        }
        for k in kinds:
            b, m = best_median(e[k + "_s"])
            q[k] = {"best_s": b, "median_s": m, "runs": len(e[k + "_s"]), "ms_per_mb": b * 1e3 / mb,
                    "median_ms_per_mb": m * 1e3 / mb, "mb_s": mb / b, "us_per_event": b * 1e6 / n,
                    "over_gzip": b / r["gzip"]["wall_s"]}
    for k in kinds:
        prev = None
        for r in order:
            r["inproc"][k]["incr_ms_per_mb"] = None if prev is None else (
                (r["inproc"][k]["best_s"] - prev["inproc"][k]["best_s"]) * 1e3 / ((r["bytes"] - prev["bytes"]) / 1e6))
            prev = r
        v = [r["inproc"][k]["ms_per_mb"] for r in order]
        vm = [r["inproc"][k]["median_ms_per_mb"] for r in order]
        vi = [r["inproc"][k]["incr_ms_per_mb"] for r in order[1:]]
        spreads["inproc_%s_ms_per_mb" % k] = max(v) / min(v)
        spreads["inproc_%s_median_ms_per_mb" % k] = max(vm) / min(vm)
        spreads["inproc_%s_incr_ms_per_mb" % k] = max(vi) / min(vi) if len(vi) > 1 and min(vi) > 0 else float("nan")
    hh = ("| trace | MB | events | first import s | ms/MB | × gzip | later imports s (best) | ms/MB | × gzip "
          "| MB/s | µs/ev | peak above the process, MB | B/ev | DB KB | B/ev beyond the DB |")
    ilines = [hh, "|" + "---|" * (hh.count("|") - 1)]
    for r in order:
        q = r["inproc"]
        f, l = q["first"], q["later"]
        ilines.append("| %s | %.1f | %d | %.4f | %.2f | %.2f | %.4f | %.2f | %.2f | %.1f | %.3f | %s | %s | %d | %s |" % (
            r["size"], r["bytes"] / 1e6, r["events"], f["best_s"], f["ms_per_mb"], f["over_gzip"],
            l["best_s"], l["ms_per_mb"], l["over_gzip"], l["mb_s"], l["us_per_event"],
            "%.2f" % (q["peak_above_kb"] / 1024) if q["peak_above_kb"] is not None else "n/a",
            "%.1f" % q["bytes_per_event"] if q["bytes_per_event"] is not None else "n/a",
            r["import_db_bytes"] // 1024,
            "%.1f" % q["bytes_per_event_beyond_db"] if q["bytes_per_event_beyond_db"] is not None else "n/a"))
    ilines.append("")
    for k, what in (("first", "The first import of each process"), ("later", "The later imports")):
        ilines.append("%s (%s): spread of the cost per MB over the sizes (largest / smallest) %.2f, of the "
                      "incremental cost per MB %.2f, of the median cost per MB %.2f; medians %s." % (
                          what, ", ".join("%s %d runs" % (r["size"], r["inproc"][k]["runs"]) for r in order),
                          spreads["inproc_%s_ms_per_mb" % k], spreads["inproc_%s_incr_ms_per_mb" % k],
                          spreads["inproc_%s_median_ms_per_mb" % k],
                          " / ".join("%.2f" % r["inproc"][k]["median_ms_per_mb"] for r in order) + " ms/MB"))
        if len(order) > 1:
            allowed, once, text = band_left(order, lambda r: (
                r["inproc"][k]["best_s"] * 1e3, r["inproc"][k]["ms_per_mb"], r["inproc"][k]["incr_ms_per_mb"]))
            env["inproc_%s_fixed_allowed_ms" % k] = allowed
            env["inproc_%s_fixed_actual_ms" % k] = once
            ilines.append("  What the 20 %% band leaves for the part that does not grow with the trace: %s; it "
                          "pays %.1f ms once (its time less the growing part)." % (text, once))
    if "empty" in inproc:
        ilines.append("The import + summary of the empty trace in a running connection: %.1f ms the first time, "
                      "%.1f ms later." % (env["inproc_fixed_first_s"] * 1e3, env["inproc_fixed_later_s"] * 1e3))
    if "scan" in kinds:
        ilines.append("")
        ilines.append("The plain scan (`SELECT count(*) FROM trace_events(F)`) in the same connections, after the "
                      "imports: %s; spread of the cost per MB over the sizes (largest / smallest) %.2f, of the "
                      "incremental cost per MB %.2f, of the median cost per MB %.2f." % (
                          "; ".join("%s %.4f s best of %d (%.2f ms/MB, %.2f× gzip -dc), median %.2f ms/MB" % (
                              r["size"], r["inproc"]["scan"]["best_s"], r["inproc"]["scan"]["runs"],
                              r["inproc"]["scan"]["ms_per_mb"], r["inproc"]["scan"]["over_gzip"],
                              r["inproc"]["scan"]["median_ms_per_mb"]) for r in order),
                          spreads["inproc_scan_ms_per_mb"], spreads["inproc_scan_incr_ms_per_mb"],
                          spreads["inproc_scan_median_ms_per_mb"]))
inproc_table = "\n".join(ilines) if ilines else (
    "Not measured: the Python of this run cannot load SQLite extensions (see bench/inproc.py).")

chdr = ("| trace | gzip -dc CPU s | count(*) CPU s | excl CPU s | import+summary CPU s "
        "| count(*) CPU/wall | excl CPU/wall | import CPU/wall |")
lines = [chdr, "|" + "---|" * (chdr.count("|") - 1)]
for r in rows:
    lines.append("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
        r["size"], r["gzip"]["cpu_s"], r["scan"]["cpu_s"], r["excl"]["cpu_s"], r["import"]["cpu_s"],
        r["scan"]["cpu_s"] / r["scan"]["wall_s"], r["excl"]["cpu_s"] / r["excl"]["wall_s"],
        r["import"]["cpu_s"] / r["import"]["wall_s"]))
ctable = "\n".join(lines)

# Fresh pages: every page a command touches for the first time is a minor
# fault, and on a virtual machine whose host backs memory lazily each costs
# microseconds (measure -p).  Counted per command (the run with the most),
# above the shell's own (baseline: sqlite3 + profsum, SELECT 1).
page_us = min(env["page_fault_us"])
page_bytes = os.sysconf("SC_PAGE_SIZE")
base_f = env["baseline_minor_faults"]
phdr = ("| trace | events | count(*) pages | import pages | import pages above baseline "
        "| import B/ev touched | x %.1f µs = ms, at most | share of the import's wall time, at most |" % page_us)
lines = [phdr, "|" + "---|" * (phdr.count("|") - 1)]
empty_f = meas["import:empty"]["minor_faults"]
lines.append("| empty | 0 | %d | %d | %d | – | %.1f | %.0f %% |" % (
    meas["scan:empty"]["minor_faults"], empty_f, empty_f - base_f, (empty_f - base_f) * page_us / 1e3,
    100 * (empty_f - base_f) * page_us / 1e6 / fixed["import"]))
for r in rows:
    above = r["import"]["minor_faults"] - base_f
    r["import_pages_above_baseline"] = above
    r["import_page_ms"] = above * page_us / 1e3
    lines.append("| %s | %d | %d | %d | %d | %.1f | %.1f | %.0f %% |" % (
        r["size"], r["events"], r["scan"]["minor_faults"], r["import"]["minor_faults"], above,
        above * page_bytes / r["events"], r["import_page_ms"], 100 * r["import_page_ms"] / 1e3 / r["import"]["wall_s"]))
ptable = "\n".join(lines)

md = ["# profsum benchmark results", "",
      "Generated by `bench/run.sh` (see `bench/README.md` for the method).", "",
      "- date: %s" % env["date_utc"],
      "- machine: %s, %s CPUs (%s), Linux %s" % (env["cpu"] or "?", env["cpus"], env["machine"], env["kernel"]),
      "- sqlite3 %s, %s, profsum %s (built at commit %s, %s; repository at %s)" % (
          env["sqlite3"], env["gzip"], env["profsum_version"], env.get("profsum_build_commit", "?"),
          env.get("profsum_build_build_flags", "?"), env["profsum_commit"]),
      "- load average (1, 5, 15 min) before: %s, after: %s (%s CPUs)" % (
          env["loadavg_start"] or "?", env["loadavg_end"] or "?", env["cpus"]),
      "- traces: generated by `bench/gen_trace.py --shape %s` (xprof-shaped, gzip -6)" % env["shape"],
      "- times: best of all runs, wall clock: %d rounds, each running the four commands on the empty trace and on every size in turn, "
      "runs per round: %s (round(sqrt(largest / size)), at most %s: a short run meets a slow spell of the machine whole, "
      "a long one averages it over seconds); RSS: peak of those runs (`ru_maxrss` from `wait4`, bench/measure.c), "
      "including the sqlite3 shell itself (%.1f MB with profsum loaded and no query)" % (
          env["repeat"], ", ".join("%s %s" % kv for kv in runs_of.items()),
          os.environ.get("BENCH_MAX_RUNS", "10"), base_kb / 1024),
      "- count(*) = `SELECT count(*) FROM trace_events(FILE)`; excl = `SELECT sum(excl_ps) FROM trace_events(FILE)`; "
      "both results checked against the generator's counts",
      "- import+summary = `sqlite3 NEW.db -cmd '.load profsum' \"SELECT profsum_import(FILE,'bench'); "
      "SELECT length(profsum_summary_json('bench'));\"` with a fresh database file per run; checked: "
      "a non-empty summary, and `profsum_trace.num_complete_events` = the generator's X events with dur > 0",
      "", "## Scan and query", "", table, "",
      "## Import and summary", "", itable, "",
      "## Cost per MB", "",
      "Wall time per uncompressed MB; the same net of the fixed costs of each command "
      "(measured on an empty trace in every round); and the incremental cost per MB from one "
      "size to the next, (t - t_prev) / (MB - MB_prev): what each further MB costs.", "",
      ftable, "",
      "## In a running connection", "",
      "The same import + summary inside a process that keeps its connection (a notebook, a script, "
      "Datasette): `bench/inproc.py` opens a new database, loads profsum and imports the empty trace "
      "(so the schema exists and the connection has read it), then times `profsum_import(FILE)` and "
      "`length(profsum_summary_json(...))` together with `time.perf_counter()`, once per round and size in "
      "a new process, as many times as the size's runs per round above (at least twice); no process start, "
      "no extension load, no schema creation. The first import of each process and the later ones are "
      "reported apart (best of all): the first takes its memory fresh from the kernel and runs some code "
      "for the first time, the later ones find the memory in the allocator. Memory: the peak RSS of the "
      "process during its first import + summary of the trace, less its RSS before it (the peak reset "
      "through `/proc/self/clear_refs`), code pages touched for the first time included; the highest of "
      "all rounds. DB KB: the database file of one import (the stored aggregates and the summary, with the "
      "schema).", "",
      inproc_table, "",
      "## Fresh pages", "",
      "Minor page faults of each command (`ru_minflt`, the run with the most): the pages it touched for "
      "the first time. The shell with profsum loaded touches %d (baseline). One fresh page costs %.1f µs "
      "on this machine (`bench/measure.c -p`: %s µs before the runs, %s after), so the pages an import "
      "touches are part of its time, and of its fixed cost most of all: the import of the empty trace "
      "touches as many pages as the schema, the reader's buffers and the summary need, whatever the size. "
      "The ms are an upper bound: the pages profsum maps ahead in one call (ext/prefault.c) count as "
      "faults too, at a fraction of the cost." % (
          base_f, page_us, os.environ["PAGE_US_START"], os.environ["PAGE_US_END"]), "",
      ptable, "",
      "## CPU time", "",
      "user + sys seconds of the best run (all threads; CPU/wall above 1 means the inflate thread ran in parallel)",
      "", ctable, "",
      "![scaling](scaling.svg)", ""]
with open(os.path.join(out, "results.md"), "w") as f:
    f.write("\n".join(md))
with open(os.path.join(out, "results.json"), "w") as f:
    json.dump({"env": env, "results": rows}, f, indent=2, sort_keys=True)
    f.write("\n")
print(table)
print()
print(itable)
print()
print(ftable)
print()
print(ctable)
print()
print(inproc_table)
print()
print(ptable)
print()
print("baseline RSS (sqlite3 + profsum, no query): %.1f MB; written bench/results.md and bench/results.json" % (base_kb / 1024))
EOF

# ---- chart ------------------------------------------------------------------
"$PY" "$HERE/chart.py" "$HERE/results.json" "$HERE/scaling.svg" || die "chart.py failed"
echo "bench: written bench/scaling.svg" >&2
