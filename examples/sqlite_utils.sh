#!/usr/bin/env bash
# profsum with sqlite-utils (Debian package sqlite-utils): load the extension
# with --load-extension and query the views.
#   bash examples/sqlite_utils.sh [TRACE]
set -euo pipefail
cd "$(dirname "$0")/.."
trace=${1:-examples/demo_profile/plugins/profile/2026_01_01_00_00_00/demo-host.trace.json.gz}
db=$(mktemp --suffix=.db)
trap 'rm -f "$db"' EXIT
sqlite-utils query "$db" --load-extension ./profsum.so \
  "SELECT profsum_import(:trace, 'demo') AS trace_id" -p trace "$trace"
sqlite-utils query "$db" --load-extension ./profsum.so --table \
  "SELECT name, category, round(exclusive_duration, 3) AS excl_us FROM profsum_hot_ops WHERE label = 'demo' ORDER BY rank LIMIT 5"
sqlite-utils query "$db" --load-extension ./profsum.so --csv \
  "SELECT kpi, device, value, band FROM profsum_kpis WHERE label = 'demo'"
