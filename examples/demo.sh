#!/usr/bin/env bash
# The main job on a generated example: make a TPU-shaped JAX trace in an
# artifact folder (as jax.profiler writes it), import it into a database,
# and write its profile_summary.v1 document and markdown report.
# Run through `make demo`.  Outputs in examples/demo_out/.
set -euo pipefail
cd "$(dirname "$0")/.."
prof=examples/demo_profile/plugins/profile/2026_01_01_00_00_00
out=examples/demo_out
mkdir -p "$prof" "$out"
trace="$prof/demo-host.trace.json.gz"
[ -f "$trace" ] || /usr/bin/python3 bench/gen_trace.py --size 2M --shape tpu --devices 2 --out "$trace" >/dev/null
rm -f "$out/demo.db"
sq() { sqlite3 "$@"; }
sq "$out/demo.db" -cmd '.load ./profsum' \
  "SELECT 'imported trace ' || profsum_import('examples/demo_profile', 'demo', '{\"warmup_steps\": 2}');" >/dev/null
sq "$out/demo.db" -cmd '.load ./profsum' "SELECT profsum_summary_json('demo');" > "$out/summary.json"
sq "$out/demo.db" -cmd '.load ./profsum' "SELECT profsum_report_md('demo', 10);" > "$out/report.md"
echo "== wrote $out/summary.json ($(wc -c <"$out/summary.json") bytes), $out/report.md, $out/demo.db"
echo
echo "== top 5 ops by exclusive time (µs)"
sq -header -column "$out/demo.db" -cmd '.load ./profsum' \
  "SELECT name, category, count, round(exclusive_duration, 3) AS excl_us FROM profsum_hot_ops
   WHERE label = 'demo' ORDER BY rank LIMIT 5;"
echo
echo "== time breakdown"
sq -header -column "$out/demo.db" -cmd '.load ./profsum' \
  "SELECT category, round(total_duration, 3) AS us, round(100 * share_of_total, 1) AS pct
   FROM profsum_breakdown WHERE label = 'demo' AND is_summary_mode ORDER BY total_duration DESC;"
echo
echo "== KPIs"
sq -header -column "$out/demo.db" -cmd '.load ./profsum' \
  "SELECT kpi, coalesce(device, '') AS device, round(value, 3) AS value, unit, band
   FROM profsum_kpis WHERE label = 'demo' AND kind = 'kpi' ORDER BY kpi, device;"
echo
echo "== what to try next"
sq "$out/demo.db" -cmd '.load ./profsum' \
  "SELECT '- ' || title || ': ' || rationale FROM profsum_candidates WHERE label = 'demo' ORDER BY rank;"
