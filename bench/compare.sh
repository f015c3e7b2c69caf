#!/usr/bin/env bash
# Compare benchmark: `quiescent compare` on 1,000,000 vs 1,000,000 numbers, and on a
# 19,043-function x 64-CPU trace_stat pair, side by side in the same run with ministat
# (Debian package `ministat`) and an equivalent numpy/scipy script on the same inputs.
# The 1M pair is timed RUNS times (default 5), ministat and quiescent alternating, and the
# medians of wall time and peak RSS give the ratios (targets: wall <= 0.5x ministat, memory
# <= 2.5x). Needs: ministat, python3 with numpy and scipy ($PYTHON, default python3), GNU time.
# Usage: bench/compare.sh [OUTDIR]   (RUNS=5, TRACE_STAT=0 skips the trace_stat pair)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out/compare}
runs=${RUNS:-5}
py=${PYTHON:-python3}
mkdir -p "$out"
cargo build --release -q -p quiescent
q=${CARGO_TARGET_DIR:-target}/release/quiescent

[ -f "$out/ts_head.txt" ] || "$py" - "$out" <<'PY'
import sys, numpy as np, os
out = sys.argv[1]
rng = np.random.default_rng(42)
a = rng.lognormal(mean=3.0, sigma=0.05, size=1_000_000)
b = rng.lognormal(mean=3.01, sigma=0.05, size=1_000_000)
np.savetxt(os.path.join(out, "a.txt"), a, fmt="%.6f")
np.savetxt(os.path.join(out, "b.txt"), b, fmt="%.6f")
# trace_stat pair: `head`-style concatenations of 64 CPUs x 19,043 functions.
for name, shift in (("ts_base.txt", 1.0), ("ts_head.txt", 1.05)):
    with open(os.path.join(out, name), "w") as f:
        for cpu in range(64):
            f.write(f"==> /sys/kernel/debug/tracing/trace_stat/function{cpu} <==\n")
            f.write("  Function                               Hit    Time            Avg             s^2\n")
            f.write("  --------                               ---    ----            ---             ---\n")
            hits = rng.integers(1000, 90000, size=19043)
            avg = rng.uniform(0.1, 2.0, size=19043) * shift
            for i in range(19043):
                t = hits[i] * avg[i]
                f.write(f"  kfunc_{i:06d}                        {hits[i]:>10}    {t:.3f} us    {avg[i]:.3f} us    {avg[i]*0.01:.3f} us    \n")
            f.write("\n")
PY

cat > "$out/scipy_compare.py" <<'PY'
# The same statistics with numpy/scipy: describe both sides, Mann-Whitney, Welch, BH.
import sys, numpy as np
from scipy import stats
a = np.loadtxt(sys.argv[1]); b = np.loadtxt(sys.argv[2])
for x in (a, b):
    np.percentile(x, [25, 50, 75, 90, 99]); x.mean(); x.std(ddof=1); x.min(); x.max()
u = stats.mannwhitneyu(a, b, alternative="two-sided")
t = stats.ttest_ind(b, a, equal_var=False)
print(u.pvalue, t.pvalue)
PY

cat > "$out/scipy_trace_stat.py" <<'PY'
# Per function: pool the 64 per-CPU hit counts of each side and test them (as quiescent's
# per-CPU row does), then Benjamini-Hochberg across all functions.
import sys, re, numpy as np
from scipy import stats
def load(p):
    d = {}
    for line in open(p):
        m = re.match(r"\s+(\S+)\s+(\d+)\s+([\d.]+) us", line)
        if m and not line.strip().startswith("Function"):
            d.setdefault(m.group(1), []).append(float(m.group(2)))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
ps = []
for k in a:
    x, y = np.array(a[k]), np.array(b[k])
    np.median(x); np.median(y)
    ps.append(stats.mannwhitneyu(x, y, alternative="two-sided").pvalue)
q = stats.false_discovery_control(ps)
print(len(ps), (q < 0.05).sum())
PY

measure() { # label, command...: prints "label seconds maxrss_kib"
  local label=$1; shift
  local tf; tf=$(mktemp)
  # To stderr: the callers read stdout through $(...), where a message would be lost.
  /usr/bin/time -f "%e %M" -o "$tf" "$@" >/dev/null 2>"$out/$label.err" || { echo "$label failed:" >&2; cat "$out/$label.err" >&2; exit 1; }
  echo "$label $(cat "$tf")"
  rm -f "$tf"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "== 1,000,000 vs 1,000,000 numbers: $runs runs, ministat and quiescent alternating"
: > "$out/runs.txt"
for i in $(seq "$runs"); do
  measure ministat ministat "$out/a.txt" "$out/b.txt" | tee -a "$out/runs.txt"
  measure quiescent "$q" compare "$out/a.txt" "$out/b.txt" --json | tee -a "$out/runs.txt"
done
r3=$(measure scipy "$py" "$out/scipy_compare.py" "$out/a.txt" "$out/b.txt")
col() { awk -v t="$1" -v c="$2" '$1 == t {print $c}' "$out/runs.txt" | median; }
m_s=$(col ministat 2); m_k=$(col ministat 3); q_s=$(col quiescent 2); q_k=$(col quiescent 3)
set -- $r3; s_s=$2; s_k=$3
printf '%-10s %14s %16s\n' tool "median wall s" "median peak MiB"
printf '%-10s %14s %16.1f\n' ministat "$m_s" "$(echo "$m_k/1024" | bc -l)"
printf '%-10s %14s %16.1f\n' quiescent "$q_s" "$(echo "$q_k/1024" | bc -l)"
printf '%-10s %14s %16.1f   (one run)\n' scipy "$s_s" "$(echo "$s_k/1024" | bc -l)"
echo "quiescent/ministat wall time: $(echo "scale=3; $q_s/$m_s" | bc -l) (target <= 0.5); peak memory: $(echo "scale=2; $q_k/$m_k" | bc -l) (target <= 2.5); quiescent/scipy wall time: $(echo "scale=3; $q_s/$s_s" | bc -l)"

[ "${TRACE_STAT:-1}" = 0 ] && exit 0
echo "== trace_stat pair: 19,043 functions x 64 CPUs (--metric '*.hit')"
r4=$(measure quiescent "$q" compare "$out/ts_base.txt" "$out/ts_head.txt" --json --metric '*.hit')
r5=$(measure scipy "$py" "$out/scipy_trace_stat.py" "$out/ts_base.txt" "$out/ts_head.txt")
printf '%-10s %8s %10s\n' tool "wall s" "peak MiB"
for r in "$r4" "$r5"; do set -- $r; printf '%-10s %8s %10.1f\n' "$1" "$2" "$(echo "$3/1024" | bc -l)"; done
set -- $r4; a_s=$2; a_k=$3; set -- $r5; b_s=$2; b_k=$3
echo "quiescent/scipy wall time: $(echo "scale=3; $a_s/$b_s" | bc -l) (target <= 0.5); peak memory: $(echo "scale=3; $a_k/$b_k" | bc -l) (target <= 1)"
