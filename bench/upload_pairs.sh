#!/usr/bin/env bash
# Alternating runs of two builds of the upload benchmark, the way `bench/README.md` judges a
# change to the upload path on a machine whose speed drifts from minute to minute: PAIRS pairs
# of `bench_upload SECS` on SQLite alone (`BENCH_PG_URL=none`), the build before first in each
# pair. Prints each run's first 4x1 phase and the median of its five rounds' ratios to
# `/healthz`, then the medians of both builds side by side.
# Usage: bench/upload_pairs.sh BEFORE AFTER [PAIRS] [SECS]   (PAIRS 3, SECS 3 unless given)
#   BEFORE and AFTER are `bench_upload` binaries. The build before can come from a second work
#   tree: git worktree add /tmp/before HEAD~1 && cd /tmp/before &&
#   CARGO_TARGET_DIR=/tmp/before-target cargo build --release -p quiescent --example bench_upload
set -euo pipefail
before=${1:?usage: bench/upload_pairs.sh BEFORE AFTER [PAIRS] [SECS]}
after=${2:?usage: bench/upload_pairs.sh BEFORE AFTER [PAIRS] [SECS]}
pairs=${3:-3}
secs=${4:-3}
for bin in "$before" "$after"; do
    [ -x "$bin" ] || { echo "upload_pairs: $bin is not an executable" >&2; exit 2; }
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
declare -a medians_before medians_after
for i in $(seq "$pairs"); do
    for side in before after; do
        bin=$before
        [ "$side" = after ] && bin=$after
        BENCH_PG_URL=none "$bin" "$secs" >"$log" 2>&1 || {
            echo "upload_pairs: $bin failed; its output:" >&2
            cat "$log" >&2
            exit 1
        }
        phase=$(grep -m1 'POST /api/v1/runs (4x1)' "$log" | sed 's/  */ /g; s/^POST \/api\/v1\/runs (4x1) //')
        median=$(grep -m1 'in 5 alternating rounds' "$log" | sed 's/.*median \(1\/[0-9.]*\).*/\1/')
        echo "pair $i $side: median $median; first 4x1 phase: $phase"
        if [ "$side" = before ]; then medians_before+=("$median"); else medians_after+=("$median"); fi
    done
done
echo "medians, before: ${medians_before[*]}"
echo "medians, after:  ${medians_after[*]}"
