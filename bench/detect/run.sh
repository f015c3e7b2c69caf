#!/usr/bin/env bash
# Change-point benchmark: quiescent's detector against Apache Otava 0.8 on the same labelled
# series in the same run (accuracy, false alarms, speed), then the incremental update against a
# full re-analysis of 10,000 series x 500 builds.
# Needs python3 (a venv with apache-otava 0.8 and numpy is made under bench/detect/.venv).
# Usage: bench/detect/run.sh [SERIES_COUNT]   (default 1000)
set -euo pipefail
cd "$(dirname "$0")/../.."
here=bench/detect
out=$here/out
count=${1:-1000}
mkdir -p "$out"
if [ ! -x "$here/.venv/bin/python" ]; then
    python3 -m venv "$here/.venv"
    "$here/.venv/bin/pip" install -q 'apache-otava==0.8.*' numpy
fi
py=$here/.venv/bin/python
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p quiescent-compare --example detect_many --example detect_incremental
bin=$CARGO_TARGET_DIR/release/examples

"$py" "$here/generate.py" "$out/series.csv" "$out/labels.json" "$count"
"$bin/detect_many" < "$out/series.csv" > "$out/quiescent.jsonl" 2> "$out/quiescent.err"
seconds=$(sed -n 's/^seconds=//p' "$out/quiescent.err")
status=0
"$py" "$here/evaluate.py" "$out/series.csv" "$out/labels.json" "$out/quiescent.jsonl" "$seconds" || status=1
"$bin/detect_incremental" || status=1
exit $status
