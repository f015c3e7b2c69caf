#!/usr/bin/env python3
"""Reference values for the compare crate, from numpy and scipy.

Run from this directory with scipy 1.17.1 and numpy 2.4.6 (pinned below; e.g. in a venv:
python3 -m venv .venv && .venv/bin/pip install scipy==1.17.1 numpy==2.4.6 && .venv/bin/python
gen.py). Writes cases.json next to it. Only scipy's public API is used.
Conventions checked by compare/tests/it/reference.rs:
- describe: numpy mean, median, std(ddof=1), percentile (default 'linear'), cv = std/|mean|*100;
- mannwhitneyu(base, head, alternative='two-sided', method='auto'): U of base, p, and the method
  scipy's documented auto rule picks (checked against the p of that method asked for by name);
- ttest_ind(base, head, equal_var=False) with t negated (the crate reports head - base);
  null when a side has < 2 values or both variances are 0;
- Hodges-Lehmann shift: median of all head_j - base_i (numpy);
- Cliff's delta: P(head > base) - P(head < base);
- the exact distribution-free interval of the shift, R's wilcox.test(x=head, y=base,
  conf.int=TRUE) convention, with qwilcox from the exact null distribution of U counted here
  (cases with no ties and both n < 50), else the normal-approximation order statistics;
- the seeded percentile bootstrap of the change of medians (both sides >= 10 values), the
  crate's generator (rand_pcg Pcg64) and draws reproduced here, plus scipy.stats.bootstrap's
  percentile interval of the same statistic for a Monte Carlo tolerance check;
- `policy`: the test, p, interval, inconclusive flag and verdict (per direction) that the
  README's policy gives from these numbers, and `finish`: q-values of all cases as one
  comparison and the verdicts they give;
- false_discovery_control(p) (Benjamini-Hochberg) on p vectors.
"""
import json
import math
import os

import numpy as np
import scipy
from scipy import stats

# The versions the stored numbers come from. Only public scipy API is used; the pin keeps the
# documented behaviour the script relies on (mannwhitneyu's `auto` rule, false_discovery_control).
SCIPY = "1.17.1"
NUMPY = "2.4.6"

# The crate's defaults (compare::Settings::default()).
ALPHA = 0.05
THRESHOLD_PCT = 1.0
MIN_N = 3
LEVEL = 0.95
RESAMPLES = 2000
SEED = 0x5EED
DIRECTIONS = ("lower_is_better", "higher_is_better", "neutral")


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


def mwu_method(b, h):
    """scipy's documented `auto` rule: 'exact' when one sample has at most 8 values and the
    pooled sample has no ties, else 'asymptotic'."""
    exact = min(len(b), len(h)) <= 8 and not pooled_ties(b, h)
    return "exact" if exact else "asymptotic"


def mann_whitney(b, h):
    method = mwu_method(b, h)
    r = stats.mannwhitneyu(b, h, alternative="two-sided", method="auto")
    # The rule above is what `auto` picked: the same test asked for by name gives the same p.
    named = stats.mannwhitneyu(b, h, alternative="two-sided", method=method)
    assert r.pvalue == named.pvalue, (method, r.pvalue, named.pvalue)
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


def u_null_cdf(n1, n2):
    """P(U <= u), u = 0..n1*n2, of the Mann-Whitney U without ties, by counting arrangements:
    N(m, n, u) = N(m - 1, n, u - n) + N(m, n - 1, u), in exact integers."""
    table = {}

    def count(m, n):
        if (m, n) in table:
            return table[(m, n)]
        if m == 0 or n == 0:
            c = [1]
        else:
            a, b = count(m - 1, n), count(m, n - 1)
            c = [0] * (m * n + 1)
            for u, v in enumerate(a):
                c[u + n] += v
            for u, v in enumerate(b):
                c[u] += v
        table[(m, n)] = c
        return c

    counts = count(n1, n2)
    total = math.comb(n1 + n2, n1)
    assert sum(counts) == total
    acc, out = 0, []
    for v in counts:
        acc += v
        out.append(acc / total)
    return out


def differences(b, h):
    return np.sort(np.subtract.outer(np.asarray(h), np.asarray(b)).ravel())


def hl_interval(b, h, level=LEVEL):
    """R: qu <- qwilcox(alpha/2, n.x, n.y); if (qu == 0) qu <- 1; ql <- n.x*n.y - qu;
    achieved.alpha <- 2*pwilcox(trunc(qu)-1, n.x, n.y); c(diffs[qu], diffs[ql + 1])."""
    nx, ny = len(h), len(b)
    cdf = u_null_cdf(nx, ny)
    alpha = 1 - level
    q = 0
    while cdf[q] < alpha / 2 - 10 * np.finfo(float).eps:
        q += 1
    qu = max(q, 1)
    achieved = 1 - 2 * cdf[qu - 1]
    diffs = differences(b, h)
    return dict(low=float(diffs[qu - 1]), high=float(diffs[nx * ny - qu]), level=achieved)


def hl_interval_asymptotic(b, h, level=LEVEL):
    """The normal-approximation order statistics: qu = ceil(nm/2 - 1/2 - z sigma), sigma with the
    tie correction, clamped to [1, ceil(nm/2)]."""
    n1, n2 = len(b), len(h)
    nm, n = n1 * n2, n1 + n2
    _, counts = np.unique(np.concatenate([b, h]), return_counts=True)
    tie_term = float(np.sum(counts.astype(float) ** 3 - counts))
    sigma = math.sqrt(max(nm / 12 * ((n + 1) - tie_term / (n * (n - 1))), 0.0))
    z = stats.norm.ppf(1 - (1 - level) / 2)
    q = math.ceil(nm / 2 - 0.5 - z * sigma)
    qu = min(q, -(-nm // 2)) if q >= 1 else 1
    diffs = differences(b, h)
    return dict(low=float(diffs[qu - 1]), high=float(diffs[nm - qu]), level=level)


M64 = (1 << 64) - 1
M128 = (1 << 128) - 1


class Pcg64:
    """rand_pcg 0.10's Pcg64 (Lcg128Xsl64) seeded by rand_core 0.10's `seed_from_u64`: the
    generator the crate's bootstrap draws from, so the same seed gives the same resamples."""

    MUL = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645

    def __init__(self, seed):
        # seed_from_u64: 32 seed bytes from a PCG32 stream over the u64 state.
        words, state = [], seed
        for _ in range(8):
            state = (state * 0x5851_F42D_4C95_7F2D + 0xA176_54E4_6FBE_17F3) & M64
            x = (((state >> 18) ^ state) >> 27) & 0xFFFF_FFFF
            rot = state >> 59
            words.append(((x >> rot) | (x << ((32 - rot) & 31))) & 0xFFFF_FFFF)
        raw = b"".join(w.to_bytes(4, "little") for w in words)
        s = [int.from_bytes(raw[8 * i : 8 * i + 8], "little") for i in range(4)]
        # from_seed: state, increment | 1, then one step past the state plus increment.
        self.inc = (s[2] | s[3] << 64) | 1
        self.state = ((s[0] | s[1] << 64) + self.inc) & M128
        self.state = (self.state * self.MUL + self.inc) & M128

    def next_u64(self):
        self.state = (self.state * self.MUL + self.inc) & M128
        rot = self.state >> 122
        xsl = ((self.state >> 64) ^ self.state) & M64
        return ((xsl >> rot) | (xsl << ((64 - rot) & 63))) & M64

    def uniform(self):
        """(0, 1) from 53 random bits, never 0 or 1."""
        return (float(self.next_u64() >> 11) + 0.5) * (1.0 / float(1 << 53))

    def normal(self):
        u, v = self.uniform(), self.uniform()
        return math.sqrt(-2.0 * math.log(u)) * math.cos(math.tau * v)

    def gamma(self, shape):
        """Marsaglia and Tsang (2000), shape >= 1."""
        d = shape - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        while True:
            x = self.normal()
            v = 1.0 + c * x
            if v <= 0.0:
                continue
            v = v * v * v
            u = self.uniform()
            if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v):
                return d * v

    def beta(self, a, b):
        x = self.gamma(a)
        y = self.gamma(b)
        return x / (x + y)


def resampled_median(rng, s):
    """The median of n values drawn with replacement from sorted s: the k-th smallest of n
    uniform indices is floor(n U) with U ~ Beta(k, n - k + 1); for even n the next one is
    U + (1 - U)(1 - W^(1/(n - k))), W uniform (the minimum of the n - k indices above)."""
    n = len(s)
    index = lambda u: min(int(n * u), n - 1)
    if n % 2 == 1:
        k = (n + 1) // 2
        return float(s[index(rng.beta(float(k), float(n - k + 1)))])
    k = n // 2
    u1 = rng.beta(float(k), float(n - k + 1))
    v = 1.0 - rng.uniform() ** (1.0 / float(n - k))
    u2 = u1 + (1.0 - u1) * v
    return (float(s[index(u1)]) + float(s[index(u2)])) / 2.0


def bootstrap_interval(b, h, level=LEVEL):
    """Seeded percentile bootstrap of 100 (median head - median base) / |median base|: resamples
    with a zero base median skipped, None when more than half are."""
    rng = Pcg64(SEED)
    sb, sh = np.sort(b), np.sort(h)
    changes = []
    for _ in range(RESAMPLES):
        mb = resampled_median(rng, sb)
        mh = resampled_median(rng, sh)
        if mb != 0.0:
            c = (mh - mb) / abs(mb) * 100.0
            if math.isfinite(c):
                changes.append(c)
    if 2 * len(changes) < RESAMPLES:
        return None
    lo, hi = np.quantile(changes, [(1 - level) / 2, (1 + level) / 2])
    return dict(low=float(lo), high=float(hi), level=level, method="bootstrap_ratio_of_medians")


def scipy_bootstrap(b, h, level=LEVEL):
    """scipy's own percentile bootstrap of the same statistic (resampling indices), for a
    tolerance check of the seeded one: both estimate the same quantiles of the same bootstrap
    distribution, so they differ only by Monte Carlo error."""
    def change(x, y, axis=-1):
        mb = np.median(x, axis=axis)
        return (np.median(y, axis=axis) - mb) / np.abs(mb) * 100.0

    r = stats.bootstrap((np.asarray(b), np.asarray(h)), change, n_resamples=20000,
                        confidence_level=level, method="percentile", vectorized=True,
                        batch=200, rng=np.random.default_rng(1))
    return dict(low=float(r.confidence_interval.low), high=float(r.confidence_interval.high))


def change_interval(b, h, ties):
    """The interval compare_series reports (README: exact HL interval for small samples, the
    bootstrap from 10 values a side), in percent of the base median. None when a side has fewer
    than MIN_N values or the base median is 0."""
    if len(b) < MIN_N or len(h) < MIN_N:
        return None
    mb = float(np.median(b))
    if mb == 0.0:
        return None
    if len(b) >= 10 and len(h) >= 10:
        boot = bootstrap_interval(b, h)
        if boot is not None:
            return boot
    if not ties and len(b) < 50 and len(h) < 50:
        iv, method = hl_interval(b, h), "hodges_lehmann_exact"
    else:
        iv, method = hl_interval_asymptotic(b, h), "hodges_lehmann_asymptotic"
    scale = 100.0 / abs(mb)
    return dict(low=iv["low"] * scale, high=iv["high"] * scale, level=iv["level"], method=method)


def primary_p(c):
    """README step 2: Welch's t when even the most extreme exact Mann-Whitney outcome,
    2 / C(N, n_base), does not reach alpha (Mann-Whitney's p when Welch is undefined)."""
    nb, nh = len(c["base"]), len(c["head"])
    if nb < MIN_N or nh < MIN_N:
        return None, "none"
    if 2 / math.comb(nb + nh, nb) >= ALPHA:
        if c["welch"] is not None:
            return c["welch"]["p"], "welch"
    return c["mann_whitney"]["p"], "mann_whitney"


def verdict(c, stat, direction):
    """README steps 1, 3 and 4, from scipy's p (or q) and numpy's medians."""
    if stat is None:
        return "not_enough_data"
    if not stat < ALPHA:
        return "no_significant_change"
    mb, mh = c["describe_base"]["median"], c["describe_head"]["median"]
    large = abs((mh - mb) / abs(mb) * 100) >= THRESHOLD_PCT if mb != 0 else mh != mb
    if not large or mh == mb:
        return "no_significant_change"
    up = mh > mb
    return {
        "lower_is_better": "regression" if up else "improvement",
        "higher_is_better": "improvement" if up else "regression",
        "neutral": "increase" if up else "decrease",
    }[direction]


def policy(c):
    """What compare_series decides for this case alone: test, p, interval, inconclusive flag,
    and the verdict for each direction."""
    b, h = np.asarray(c["base"]), np.asarray(c["head"])
    p, test = primary_p(c)
    ci = change_interval(b, h, pooled_ties(b, h)) if b.size and h.size else None
    t = THRESHOLD_PCT
    spans = ci is not None and (ci["low"] < t < ci["high"] or ci["low"] < -t < ci["high"])
    return dict(
        p=p,
        test=test,
        ci=ci,
        inconclusive=spans,
        verdict={d: verdict(c, p, d) for d in DIRECTIONS},
    )


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
        else:
            c["hl_interval_asymptotic"] = hl_interval_asymptotic(ba, ha)
    c["policy"] = policy(c)
    ci = c["policy"]["ci"]
    # scipy's statistic is infinite where a resample's base median is 0 (the crate skips those).
    if ci is not None and ci["method"] == "bootstrap_ratio_of_medians" and 0.0 not in b:
        c["scipy_bootstrap"] = scipy_bootstrap(b, h)
    return c


def finish(cases, direction="lower_is_better"):
    """README step 3 over a whole comparison: every case with a p is one series; q from
    false_discovery_control, significant when q < alpha."""
    with_p = [c for c in cases if c["policy"]["p"] is not None]
    qs = stats.false_discovery_control([c["policy"]["p"] for c in with_p], method="bh")
    q_of = {c["name"]: float(q) for c, q in zip(with_p, qs)}
    return [
        dict(name=c["name"], q=q_of.get(c["name"]),
             verdict=verdict(c, q_of.get(c["name"]), direction))
        for c in cases
    ]


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
        # Bootstrap intervals: odd and even sizes, ties, negative values, zero base medians in
        # some resamples, an interval spanning the threshold.
        case("n1000_vs_n1001_ties", r3(rng.lognormal(3, 0.05, 1000)), r3(rng.lognormal(3.008, 0.05, 1001))),
        case("n11_vs_n10_negative", rng.normal(-100, 1, 11), rng.normal(-100.5, 1, 10)),
        case("n15_zero_heavy_base", [0.0] * 7 + list(range(1, 9)), rng.integers(0, 9, 15)),
        case("n10_zero_base_median", [-2, -1, -0.5, 0, 0, 0, 0.5, 1, 2, 3], rng.normal(0.5, 1, 10)),
        case("n25_vs_n24_shift_3pct", rng.normal(100, 1, 25), rng.normal(103, 1, 24)),
        case("n200_vs_n200_same", rng.normal(10, 0.5, 200), rng.normal(10, 0.5, 200)),
    ]
    assert scipy.__version__ == SCIPY and np.__version__ == NUMPY, (scipy.__version__, np.__version__)
    p_vectors = [
        [0.01, 0.04, 0.03, 0.005, 0.2],
        [0.5],
        [0.01, 0.01, 0.01, 0.9, 0.049, 0.0001],
        [1.0, 1.0, 0.0, 0.3],
        [float(c["mann_whitney"]["p"]) for c in cases if "mann_whitney" in c],
        list(rng.uniform(0, 0.1, 200)),
    ]
    bh = [dict(p=[float(v) for v in p], q=[float(v) for v in stats.false_discovery_control(p)]) for p in p_vectors]
    out = dict(scipy=scipy.__version__, numpy=np.__version__, cases=cases, benjamini_hochberg=bh,
               finish=finish(cases))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
