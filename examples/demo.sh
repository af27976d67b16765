#!/usr/bin/env bash
# The main job on a generated example: make a TPU-shaped JAX trace (artifact
# folder layout, as jax.profiler writes it) and query it with profsum in the
# sqlite3 shell.  Run through `make demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=examples/demo_profile/plugins/profile/2026_01_01_00_00_00
mkdir -p "$out"
trace="$out/demo-host.trace.json.gz"
if [ ! -f "$trace" ]; then
  /usr/bin/python3 bench/gen_trace.py --size 2M --shape tpu --devices 2 --out "$trace" >/dev/null
fi
echo "== traces found under examples/demo_profile"
sqlite3 -header -column :memory: -cmd '.load ./profsum' \
  "SELECT path, host, session, size, format, picked FROM profsum_find_traces('examples/demo_profile');"
echo
echo "== rows per phase"
sqlite3 -header -column :memory: -cmd '.load ./profsum' \
  "SELECT ph, count(*) AS rows FROM trace_events('$trace') GROUP BY ph;"
echo
echo "== top 10 device ops by exclusive time (µs)"
sqlite3 -header -column :memory: -cmd '.load ./profsum' "
  SELECT name, count(*) AS n, round(sum(excl_ps)/1e6, 3) AS excl_us,
         round(sum(dur_ps)/1e6, 3) AS total_us, classify_op(name) AS category
  FROM trace_events('$trace')
  WHERE ph = 'X' AND process_name LIKE '/device:%' AND thread_name = 'XLA Ops'
  GROUP BY name ORDER BY sum(excl_ps) DESC, name LIMIT 10;"
echo
echo "== time per event category (µs, exclusive, per track)"
sqlite3 -header -column :memory: -cmd '.load ./profsum' "
  SELECT classify_op(name, process_name) AS category, round(sum(excl_ps)/1e6, 3) AS excl_us
  FROM trace_events('$trace')
  WHERE ph = 'X' AND excl_ps IS NOT NULL AND coalesce(thread_name, '') <> 'Steps'
  GROUP BY 1 ORDER BY 2 DESC;"
echo
echo "== oddities met while reading"
sqlite3 -header -column :memory: -cmd '.load ./profsum' "
  SELECT kind, count(*) AS n FROM profsum_diagnostics('$trace') GROUP BY kind;"
