#!/usr/bin/env python3
"""Reference values for the compare crate, from numpy and scipy.

Run from this directory: python3 gen.py  (writes cases.json next to it).
Conventions checked by compare/tests/it/reference.rs:
- describe: numpy mean, median, std(ddof=1), percentile (default 'linear'), cv = std/|mean|*100;
- mannwhitneyu(base, head, alternative='two-sided', method='auto'): U of base, p, and which
  method scipy's auto rule picked;
- ttest_ind(base, head, equal_var=False) with t negated (the crate reports head - base);
  null when a side has < 2 values or both variances are 0;
- Hodges-Lehmann shift: median of all head_j - base_i (numpy);
- Cliff's delta: P(head > base) - P(head < base);
- the exact distribution-free interval of the shift, R's wilcox.test(x=head, y=base,
  conf.int=TRUE) convention, with qwilcox from scipy's exact Mann-Whitney null distribution
  (only cases with no ties and both n < 50);
- false_discovery_control(p) (Benjamini-Hochberg) on p vectors.
"""

import json
import os

import numpy as np
import scipy
from scipy import stats
from scipy.stats import _mannwhitneyu as mwu_impl


def describe(xs):
    a = np.asarray(xs, dtype=float)
    n = len(a)
    if n == 0:
        return dict(n=0)
    d = dict(
        n=n,
        min=float(a.min()),
        max=float(a.max()),
        mean=float(np.mean(a)),
        median=float(np.median(a)),
        p25=float(np.percentile(a, 25)),
        p75=float(np.percentile(a, 75)),
        p90=float(np.percentile(a, 90)),
        p99=float(np.percentile(a, 99)),
    )
    if n >= 2:
        d["std"] = float(np.std(a, ddof=1))
        if d["mean"] != 0:
            d["cv_pct"] = d["std"] / abs(d["mean"]) * 100
    return d


def pooled_ties(b, h):
    _, counts = np.unique(np.concatenate([b, h]), return_counts=True)
    return bool((counts > 1).any())


def mann_whitney(b, h):
    r = stats.mannwhitneyu(b, h, alternative="two-sided", method="auto")
    method = mwu_impl._mwu_choose_method(len(b), len(h), pooled_ties(b, h))
    return dict(u=float(r.statistic), p=float(r.pvalue), method=method)


def welch(b, h, shift=0.0):
    if len(b) < 2 or len(h) < 2:
        return None
    if np.var(b, ddof=1) == 0 and np.var(h, ddof=1) == 0:
        return None
    # The t-test is shift-invariant; a shift (exact for values that close to it) spares scipy
    # the cancellation of its f64 means near 1e9, which it warns about.
    r = stats.ttest_ind(b - shift, h - shift, equal_var=False)
    return dict(t=-float(r.statistic), df=float(r.df), p=float(r.pvalue))


def cliffs_delta(b, h):
    bs = np.sort(b)
    less = np.searchsorted(bs, h, side="left")  # base values below each head value
    greater = len(bs) - np.searchsorted(bs, h, side="right")
    return float((less.sum() - greater.sum()) / (len(b) * len(h)))


def hl_interval(b, h, level=0.95):
    """R: qu <- qwilcox(alpha/2, n.x, n.y); if (qu == 0) qu <- 1; ql <- n.x*n.y - qu;
    achieved.alpha <- 2*pwilcox(trunc(qu)-1, n.x, n.y); c(diffs[qu], diffs[ql + 1])."""
    nx, ny = len(h), len(b)
    dist = mwu_impl._MWU(nx, ny)
    alpha = 1 - level
    q = 0
    while dist.cdf(np.asarray(q)) < alpha / 2 - 10 * np.finfo(float).eps:
        q += 1
    qu = max(q, 1)
    achieved = 1 - 2 * float(dist.cdf(np.asarray(qu - 1)))
    diffs = np.sort(np.subtract.outer(np.asarray(h), np.asarray(b)).ravel())
    return dict(low=float(diffs[qu - 1]), high=float(diffs[nx * ny - qu]), level=achieved)


def case(name, b, h, shift=0.0):
    b = [float(v) for v in b]
    h = [float(v) for v in h]
    c = dict(name=name, base=b, head=h, describe_base=describe(b), describe_head=describe(h))
    if b and h:
        ba, ha = np.asarray(b), np.asarray(h)
        c["mann_whitney"] = mann_whitney(ba, ha)
        c["welch"] = welch(ba, ha, shift)
        c["hodges_lehmann"] = float(np.median(np.subtract.outer(ha, ba)))
        c["cliffs_delta"] = cliffs_delta(ba, ha)
        if not pooled_ties(ba, ha) and len(b) < 50 and len(h) < 50:
            c["hl_interval"] = hl_interval(ba, ha)
    return c


def main():
    rng = np.random.default_rng(20240601)
    r3 = lambda a: np.round(a, 3)
    cases = [
        case("n1_vs_n1", [35.32], [49.393]),
        case("n1_vs_n5", [1.0], [2.0, 3.0, 0.5, 4.0, 5.0]),
        case("n2_vs_n2", [10.0, 12.0], [11.0, 13.5]),
        case("seed000_idle_real", [35.320, 35.687, 35.920], [49.393, 49.632, 49.359]),
        case("seed004_per_cpu_hits", [838746, 841768, 828243, 810258], [302373, 307174, 250910, 279902]),
        case("n3_vs_n3_overlap", [1.0, 2.0, 3.0], [1.5, 2.5, 3.5]),
        case("n3_vs_n4", [5.1, 5.3, 4.9], [6.0, 6.2, 5.8, 6.1]),
        case("n5_vs_n7", rng.normal(100, 5, 5), rng.normal(104, 5, 7)),
        case("n8_vs_n8", rng.normal(10, 1, 8), rng.normal(11, 1, 8)),
        case("n9_vs_n9_no_ties", rng.normal(10, 1, 9), rng.normal(10.5, 1, 9)),
        case("n10_vs_n12", rng.normal(50, 3, 10), rng.normal(48, 3, 12)),
        case("n3_vs_n200_exact", rng.normal(0, 1, 3), rng.normal(0.5, 1, 200)),
        case("n8_vs_n1000_exact", rng.normal(0, 1, 8), rng.normal(0.3, 1, 1000)),
        case("ties_3_decimals", r3(rng.normal(1.0, 0.002, 12)), r3(rng.normal(1.001, 0.002, 12))),
        case("ties_small", [1, 2, 2, 3, 3, 3], [2, 3, 3, 4, 4]),
        case("ties_n4_vs_n4", [7, 7, 8, 9], [8, 9, 9, 10]),
        case("all_identical", [5, 5, 5, 5], [5, 5, 5, 5]),
        case("zero_variance_both", [5, 5, 5], [6, 6, 6]),
        case("zero_variance_base", [5, 5, 5, 5, 5], [5.5, 6.0, 6.5, 7.0, 5.2]),
        case("outliers", [10, 10.1, 9.9, 10.2, 9.8, 10.0, 55.0], [10.5, 10.4, 10.6, 10.7, 10.3, 10.5, 0.1]),
        case("bimodal", np.concatenate([rng.normal(10, 0.5, 15), rng.normal(20, 0.5, 15)]),
             np.concatenate([rng.normal(10.5, 0.5, 15), rng.normal(20.5, 0.5, 15)])),
        case("negative", rng.normal(-50, 4, 11), rng.normal(-45, 4, 13)),
        case("near_1e9", 1e9 + rng.normal(0, 0.01, 20), 1e9 + 0.004 + rng.normal(0, 0.01, 20), shift=1e9),
        case("n30_vs_n30", rng.lognormal(0, 0.3, 30), rng.lognormal(0.1, 0.3, 30)),
        case("n30_vs_n30_same", rng.lognormal(0, 0.3, 30), rng.lognormal(0, 0.3, 30)),
        case("n60_vs_n45", rng.gamma(2.0, 1.0, 60), rng.gamma(2.2, 1.0, 45)),
        case("huge_effect_n40", rng.normal(0, 1, 40), rng.normal(100, 1, 40)),
        case("n5000_vs_n5000", np.round(rng.lognormal(3, 0.5, 5000), 6), np.round(rng.lognormal(3.01, 0.5, 5000), 6)),
    ]
    p_vectors = [
        [0.01, 0.04, 0.03, 0.005, 0.2],
        [0.5],
        [0.01, 0.01, 0.01, 0.9, 0.049, 0.0001],
        [1.0, 1.0, 0.0, 0.3],
        [float(c["mann_whitney"]["p"]) for c in cases if "mann_whitney" in c],
        list(rng.uniform(0, 0.1, 200)),
    ]
    bh = [dict(p=[float(v) for v in p], q=[float(v) for v in stats.false_discovery_control(p)]) for p in p_vectors]
    out = dict(scipy=scipy.__version__, numpy=np.__version__, cases=cases, benjamini_hochberg=bh)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
