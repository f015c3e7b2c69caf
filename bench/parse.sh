#!/usr/bin/env bash
# Parse benchmark: `quiescent parse` (release) on large inputs built by repeating the real
# fixtures, beside `mawk '{s+=$2}' FILE` (summing one column) and `wc -l` on the same bytes in
# the same run. Prints the median wall time of several runs, the peak RSS, and the medians of
# the wall-time and CPU-time ratios against mawk over alternating runs. Targets: every line
# format at most 1/3 of mawk's time and <= 64 MiB (also at three times the size); the 64-CPU x
# 19,043-function trace_stat profile (4.9 M series) no slower than mawk, <= 512 MiB.
# Needs: mawk, GNU time (/usr/bin/time), python3.
# Usage: bench/parse.sh [OUTDIR]   (env: MB=100 size of each line-format input, RUNS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out/parse}
mb=${MB:-100}
runs=${RUNS:-5}
mkdir -p "$out"
cargo build --release -q -p quiescent
qbin=${CARGO_TARGET_DIR:-target}/release/quiescent
fx=ingest/tests/fixtures

# Line-format inputs: a real fixture repeated to about $mb MB.
gen() { # NAME FIXTURE...
    local name=$1
    shift
    [ -f "$out/$name.txt" ] && return
    python3 - "$out/$name.txt" "$mb" "$@" <<'PY'
import sys
dst, mb, srcs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
chunk = b"".join(open(s, "rb").read().rstrip(b"\n") + b"\n" for s in srcs)
n = mb * 1_000_000 // len(chunk) + 1
with open(dst, "wb") as f:
    f.write(chunk * n)
PY
}
gen function_graph "$fx/function_graph/perftools_funcgraph_do_nanosleep.txt"
gen rcuscale "$fx/rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt"
gen perf_stat "$fx/perf_stat/lkml_2021_perf_stat_null_repeat10_hackbench_8blocks.txt"
gen latency "$fx/latency/doc54_irqsoff_3.8.0_71us_function-trace.txt"
gen time "$fx/time/seed000_bash_time_3runs_ftrace_switch.txt"

# The profile of seed 002's scale: `head trace_stat/function*` of 64 CPUs x 19,043 functions,
# rows written as the real 4-CPU fixture prints them (every value its own series).
[ -f "$out/trace_stat_64cpu.txt" ] || python3 - "$out/trace_stat_64cpu.txt" <<'PY'
import sys, random
rng = random.Random(2)
with open(sys.argv[1], "w") as f:
    for cpu in range(64):
        f.write(f"==> /sys/kernel/debug/tracing/trace_stat/function{cpu} <==\n")
        f.write("  Function                               Hit    Time            Avg             s^2\n")
        f.write("  --------                               ---    ----            ---             ---\n")
        for i in range(19043):
            hit = rng.randint(1000, 90000)
            avg = rng.uniform(0.1, 2.0)
            name = f"kfunc_{i:06d}"
            f.write(f"  {name:<30}   {hit:>10}    {hit * avg:.3f} us    {avg:.3f} us    {avg * 0.01:.3f} us    \n")
        f.write("\n")
PY

# One run of a command: wall seconds, peak RSS (KiB) and CPU seconds (user + system, every
# thread); output to /dev/null. The wall time is read from bash's microsecond clock around
# the run: GNU time's %e counts in hundredths, a tenth of a 0.1 s parse. The input (the last
# argument) is read just before, so that every run finds it in the page cache: this machine
# gives cached file pages back within seconds (a 95 MB input read whole was 81 MB cached 50 s
# later), and a run that reads part of its input from the disk measures the disk. So with the
# program: with its executable's pages gone, `quiescent --version` (a 69 MB executable) takes
# 20-30 ms instead of 3, so each command's executable is read before its run too.
run_once() {
    local tf t0 t1 rss user sys
    [ -f "${!#}" ] && cat "${!#}" >/dev/null
    cat "$(command -v "$1")" >/dev/null
    tf=$(mktemp)
    t0=$EPOCHREALTIME
    /usr/bin/time -o "$tf" -f "%M %U %S" "$@" >/dev/null 2>/dev/null || true
    t1=$EPOCHREALTIME
    read -r rss user sys <"$tf"
    rm -f "$tf"
    awk -v a="$t0" -v b="$t1" -v r="$rss" -v u="$user" -v s="$sys" \
        'BEGIN {printf "%.4f %d %.2f\n", b - a, r, u + s}'
}

# The median of the numbers on standard input.
median() {
    sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# Median wall seconds and peak RSS of RUNS runs of a command.
measure() {
    local t rss walls=() peak=0
    for _ in $(seq "$runs"); do
        read -r t rss _ < <(run_once "$@")
        walls+=("$t")
        [ "$rss" -gt "$peak" ] && peak=$rss
    done
    echo "$(printf '%s\n' "${walls[@]}" | median) $peak"
}

# mawk and the parser alternate, RUNS rounds of one run each: this machine's speed drifts by
# a third over seconds, and a pair run back to back sees the same machine. Prints the median
# of each, the parser's peak RSS, the median of the rounds' ratios parse/mawk, and the median
# of their CPU-time ratios (the parser's threads together against mawk's one): a wall ratio
# can be at most about this ratio divided by the machine's CPUs.
measure_pair() {
    local f=$1 m mc q rss qc peak=0 ms=() qs=() ratios=() cpus=()
    for _ in $(seq "$runs"); do
        read -r m _ mc < <(run_once mawk '{s+=$2} END {print s}' "$f")
        read -r q rss qc < <(run_once "$qbin" parse "$f")
        ms+=("$m")
        qs+=("$q")
        ratios+=("$(awk -v a="$q" -v b="$m" 'BEGIN {printf "%.3f", (b > 0 ? a / b : 0)}')")
        cpus+=("$(awk -v a="$qc" -v b="$mc" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')")
        [ "$rss" -gt "$peak" ] && peak=$rss
    done
    echo "$(printf '%s\n' "${ms[@]}" | median) $(printf '%s\n' "${qs[@]}" | median) $peak $(printf '%s\n' "${ratios[@]}" | median) $(printf '%s\n' "${cpus[@]}" | median)"
}

printf '%-18s %7s %8s %8s %9s %9s %8s %10s %8s %s\n' input MB wc_s mawk_s parse_s parse/mawk cpu/mawk parse_MiB target ok
fail=0
for name in function_graph rcuscale perf_stat latency time trace_stat_64cpu; do
    f=$out/$name.txt
    size=$(($(stat -c %s "$f") / 1000000))
    read -r wc_s _ < <(measure wc -l "$f")
    read -r mawk_s q_s q_rss ratio cpu < <(measure_pair "$f")
    mib=$((q_rss / 1024))
    if [ "$name" = trace_stat_64cpu ]; then
        target="<=1,512M"
        ok=$(awk -v r="$ratio" -v m="$mib" 'BEGIN {print (r <= 1 && m <= 512) ? "yes" : "NO"}')
    else
        target="<=0.333,64M"
        ok=$(awk -v r="$ratio" -v m="$mib" 'BEGIN {print (r <= 1/3 && m <= 64) ? "yes" : "NO"}')
    fi
    [ "$ok" = yes ] || fail=1
    printf '%-18s %7s %8s %8s %9s %9s %8s %10s %8s %s\n' "$name" "$size" "$wc_s" "$mawk_s" "$q_s" "$ratio" "$cpu" "$mib" "$target" "$ok"
done
# Memory flat whatever the input's size: each line format at three times the size (the same
# bytes thrice), one run each; the parser's peak must stay within the same 64 MiB.
printf '%-18s %7s %9s %10s %8s %s\n' "input x3" MB parse_s parse_MiB target ok
for name in function_graph rcuscale perf_stat latency time; do
    big=$(mktemp "$out/$name.x3.XXXX")
    cat "$out/$name.txt" "$out/$name.txt" "$out/$name.txt" >"$big"
    read -r q_s q_rss _ < <(run_once "$qbin" parse "$big")
    mib=$((q_rss / 1024))
    ok=$(awk -v m="$mib" 'BEGIN {print (m <= 64) ? "yes" : "NO"}')
    [ "$ok" = yes ] || fail=1
    printf '%-18s %7s %9s %10s %8s %s\n' "$name" "$(($(stat -c %s "$big") / 1000000))" "$q_s" "$mib" "<=64M" "$ok"
    rm -f "$big"
done
# The JSON contract on the profile: written as it is produced, so memory stays bounded too.
read -r j_s j_rss < <(measure "$qbin" parse --json "$out/trace_stat_64cpu.txt")
echo "trace_stat_64cpu parse --json: ${j_s}s, $((j_rss / 1024)) MiB"
exit $fail
