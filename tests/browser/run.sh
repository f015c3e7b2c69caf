#!/usr/bin/env bash
# Browser tests from a clean checkout: tests/browser/run.sh
#
# Builds quiescent, serves `quiescent demo` on a free loopback port with a fresh database,
# stores one more build whose label is markup (the escaping test), installs playwright-core
# (npm ci, from package-lock.json) and runs run.mjs against the server with /usr/bin/chromium.
# Prints `N passed, N failed`; exits non-zero on any failure. Screenshots go to out/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build -p quiescent --quiet
bin="${CARGO_TARGET_DIR:-$root/target}/debug/quiescent"
work=$(mktemp -d)
db="$work/demo.db"
log="$work/demo.log"
"$bin" demo --bind 127.0.0.1:0 --db "$db" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's#^quiescent is serving \(http://[^/ ]*\)/.*#\1#p' "$log" | head -n 1)
  [ -n "$url" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then cat "$log"; exit 1; fi
  sleep 0.1
done
if [ -z "$url" ]; then echo "the demo server did not start:"; cat "$log"; exit 1; fi
"$bin" ingest --db "$db" --build '<script>alert(1)</script>' --machine '<b>rig</b>' \
  --benchmark irqsoff-trace ingest/tests/fixtures/latency/doc54_irqsoff_3.8.0_16us.txt >/dev/null
export QUIESCENT_SEED000_JSON="$work/seed000.json"
"$bin" compare --db "$db" c229828ca6bc-reverted c229828ca6bc --json >"$QUIESCENT_SEED000_JSON"
cd tests/browser
npm ci --no-audit --no-fund --silent
node run.mjs "$url"
