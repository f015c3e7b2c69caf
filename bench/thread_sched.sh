#!/usr/bin/env bash
# Where the upload benchmark's threads spend a 4x1 phase: each thread's run time, time waiting
# for a CPU and switches over 2 s of the first 4x1 phase, from /proc/PID/task/TID/schedstat
# (the tables of `bench/README.md`). Runs `bench_upload 3` on SQLite alone; the window opens
# once the 4x200 phase has printed and the 4 s pause before the 4x1 phase has passed.
# Usage: bench/thread_sched.sh [BENCH_UPLOAD]   (target/release/examples/bench_upload unless given)
set -euo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/release/examples/bench_upload}
[ -x "$bin" ] || { echo "thread_sched: $bin is not an executable (cargo build --release -p quiescent --example bench_upload)" >&2; exit 2; }
log=$(mktemp)
a=$(mktemp)
b=$(mktemp)
trap 'rm -f "$log" "$a" "$b"' EXIT
BENCH_PG_URL=none "$bin" 3 >"$log" 2>&1 &
pid=$!
for _ in $(seq 600); do
    grep -q '(4x200)' "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
sleep 4.3
snapshot() { # TID NAME RUN_NS WAIT_NS SLICES, one line per thread
    for t in /proc/"$pid"/task/*; do
        echo "$(basename "$t") $(tr ' ' _ <"$t/comm") $(cat "$t/schedstat")"
    done 2>/dev/null | sort
}
snapshot >"$a"
sleep 2
snapshot >"$b"
wait "$pid"
join "$a" "$b" | awk '{
    run = ($7 - $3) / 2e7; wait = ($8 - $4) / 2e7; switches = $9 - $5
    if (run > 0.5) printf "%-8s %-16s run %5.1f%%  waiting for a CPU %5.1f%%  switches %7d\n", $1, $2, run, wait, switches
}' | sort -k4 -nr
grep -m1 'POST /api/v1/runs (4x1)' "$log"
