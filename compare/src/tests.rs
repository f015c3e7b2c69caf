//! Hypothesis tests: Mann-Whitney U and Welch's t.

use statrs::distribution::{ContinuousCDF, Normal};
use statrs::function::beta::checked_beta_reg;

use crate::describe::scale_for_magnitude;
use crate::{MannWhitney, Welch};

/// Rank statistics of two sorted samples, from one merge pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ranks {
    /// U of the base sample: pairs with base > head, plus half the tied pairs.
    pub u_base: f64,
    /// Sum of t^3 - t over groups of tied values in the pooled sample.
    pub tie_term: f64,
    /// Whether any value occurs more than once in the pooled sample.
    pub ties: bool,
}

/// Equal for grouping: `==`, or bitwise-identical (so a NaN forms a group and the merge advances).
fn same(a: f64, b: f64) -> bool {
    a == b || a.total_cmp(&b).is_eq()
}

/// U statistic and tie groups of two ascending samples in O(n + m).
pub(crate) fn ranks(b: &[f64], h: &[f64]) -> Ranks {
    let (mut i, mut j) = (0, 0);
    // Twice U, as an integer: each base value scores 2 per smaller head value and 1 per tie.
    let mut twice_u: u128 = 0;
    let mut tie_term = 0.0;
    let mut ties = false;
    while i < b.len() || j < h.len() {
        let v = if j >= h.len() || (i < b.len() && b[i].total_cmp(&h[j]).is_le()) {
            b[i]
        } else {
            h[j]
        };
        let i0 = i;
        while i < b.len() && same(b[i], v) {
            i += 1;
        }
        let j0 = j;
        while j < h.len() && same(h[j], v) {
            j += 1;
        }
        let (cb, ch) = ((i - i0) as u128, (j - j0) as u128);
        twice_u += cb * (2 * j0 as u128 + ch);
        let t = (cb + ch) as f64;
        if cb + ch > 1 {
            ties = true;
            tie_term += t * t * t - t;
        }
    }
    Ranks {
        u_base: twice_u as f64 / 2.0,
        tie_term,
        ties,
    }
}

/// Exact C(n, k) when it fits in a u128.
fn binom_u128(n: usize, k: usize) -> Option<u128> {
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 1..=k {
        // C(n-k+i, i) = C(n-k+i-1, i-1) * (n-k+i) / i, exact at every step.
        c = c.checked_mul((n - k + i) as u128)? / i as u128;
    }
    Some(c)
}

/// P(U <= u) for u = 0..=kmax under the null hypothesis, sample sizes n1 and n2, no ties.
///
/// The number of arrangements with U = u is the coefficient of q^u in the Gaussian binomial
/// [N choose m] = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), built one factor at a time in O(m * kmax)
/// with m = min(n1, n2). Counts are exact (wrapping u128 arithmetic is exact modulo 2^128 and the
/// final counts fit) whenever C(N, m) < 2^128; beyond that, in f64.
pub(crate) fn u_cdf_table(n1: usize, n2: usize, kmax: usize) -> Vec<f64> {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let kmax = kmax.min(m * n);
    match binom_u128(m + n, m) {
        Some(total) => {
            let mut c = vec![0u128; kmax + 1];
            c[0] = 1;
            for i in 1..=m {
                let s = n + i;
                for u in (s..=kmax).rev() {
                    c[u] = c[u].wrapping_sub(c[u - s]);
                }
                for u in i..=kmax {
                    c[u] = c[u].wrapping_add(c[u - i]);
                }
            }
            let mut acc: u128 = 0;
            let total = total as f64;
            c.iter()
                .map(|&v| {
                    acc += v;
                    acc as f64 / total
                })
                .collect()
        }
        None => u_cdf_table_f64(m, n, kmax),
    }
}

fn u_cdf_table_f64(m: usize, n: usize, kmax: usize) -> Vec<f64> {
    let mut c = vec![0.0f64; kmax + 1];
    c[0] = 1.0;
    let mut total = 1.0f64;
    for i in 1..=m {
        let s = n + i;
        for u in (s..=kmax).rev() {
            c[u] -= c[u - s];
        }
        for u in i..=kmax {
            c[u] += c[u - i];
        }
        total = total * s as f64 / i as f64;
    }
    let mut acc = 0.0;
    c.iter()
        .map(|&v| {
            acc += v;
            (acc / total).clamp(0.0, 1.0)
        })
        .collect()
}

/// The smallest two-sided p-value the exact Mann-Whitney test can give: 2 / C(N, n1).
pub(crate) fn min_exact_p(n1: usize, n2: usize) -> f64 {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let mut c = 1.0f64;
    for i in 1..=m {
        c = c * (n + i) as f64 / i as f64;
        if c > 1e300 {
            return 0.0;
        }
    }
    (2.0 / c).min(1.0)
}

/// Mann-Whitney U of two ascending samples, as `scipy.stats.mannwhitneyu(base, head,
/// alternative='two-sided', method='auto')` computes it (scipy 1.17).
///
/// scipy's `auto` rule, followed here: the exact null distribution when there are no ties in
/// the pooled sample and at least one sample has at most 8 values (so 5 vs 1000 is exact, 9 vs 9
/// is not); otherwise the normal approximation with tie correction and continuity correction.
pub(crate) fn mann_whitney_sorted(b: &[f64], h: &[f64], r: &Ranks) -> Option<MannWhitney> {
    let (n1, n2) = (b.len(), h.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let nm = n1 as f64 * n2 as f64;
    let u1 = r.u_base;
    let u = u1.max(nm - u1);
    let exact = !r.ties && (n1 <= 8 || n2 <= 8);
    let p = if exact {
        // P(U >= u) = P(U <= nm - u) by symmetry; U is an integer without ties.
        let kc = (nm - u) as usize;
        let cdf = u_cdf_table(n1, n2, kc);
        2.0 * cdf[kc]
    } else {
        let n = (n1 + n2) as f64;
        let s = (nm / 12.0 * ((n + 1.0) - r.tie_term / (n * (n - 1.0)))).sqrt();
        if s > 0.0 {
            let z = (u - nm / 2.0 - 0.5) / s;
            2.0 * normal_sf(z)
        } else {
            // All values tied: no evidence at all (scipy: z = -inf, p = 1).
            1.0
        }
    };
    Some(MannWhitney {
        u: u1,
        p: p.clamp(0.0, 1.0),
        method: if exact { "exact" } else { "asymptotic" }.to_string(),
    })
}

pub(crate) fn normal_sf(z: f64) -> f64 {
    Normal::standard().sf(z)
}

/// Standard normal quantile.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p.clamp(0.0, 1.0))
}

/// Welch's unequal-variance t-test, as `scipy.stats.ttest_ind(base, head, equal_var=False)`
/// but with the sign of head - base. None when a side has fewer than 2 values or both
/// variances are zero (scipy: nan).
pub(crate) fn welch_samples(b: &[f64], h: &[f64]) -> Option<Welch> {
    if b.len() < 2 || h.len() < 2 {
        return None;
    }
    // t, df and p do not change when every value is multiplied by the same factor: extreme
    // magnitudes (1e308, 1e-300) are brought near 1 by a power of two so that no square
    // overflows or underflows; ordinary data is left as it is (f = 1).
    let f = scale_for_magnitude(b.iter().chain(h).fold(0.0f64, |m, x| m.max(x.abs())));
    // Moments of the samples minus a common shift: the difference of the means stays exact
    // when the values sit far from zero (1e9 + small spread), where f64 means would not.
    let shift = b[0] * f;
    let moments = |xs: &[f64]| {
        let m = xs.iter().map(|x| x * f - shift).sum::<f64>() / xs.len() as f64;
        let m = m + xs.iter().map(|x| (x * f - shift) - m).sum::<f64>() / xs.len() as f64;
        let (mut ss, mut s) = (0.0, 0.0);
        for x in xs {
            let d = (x * f - shift) - m;
            ss += d * d;
            s += d;
        }
        let n = xs.len() as f64;
        (m, ((ss - s * s / n) / (n - 1.0)).max(0.0))
    };
    let ((mb, vb), (mh, vh)) = (moments(b), moments(h));
    let (vb, vh) = (vb / b.len() as f64, vh / h.len() as f64);
    let v = vb + vh;
    if v.is_nan() || v <= 0.0 {
        return None;
    }
    let df = v * v / (vb * vb / (b.len() - 1) as f64 + vh * vh / (h.len() - 1) as f64);
    let t = (mh - mb) / v.sqrt();
    // Two-sided p = I_{df/(df+t^2)}(df/2, 1/2), without the cancellation of 2 * (1 - cdf).
    let p = checked_beta_reg(df / 2.0, 0.5, df / (df + t * t)).ok()?;
    Some(Welch {
        t,
        df,
        p: p.clamp(0.0, 1.0),
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn exact_distribution_small_cases() {
        // 3 vs 3: 20 arrangements, U = 0, 1, 2 have 1, 1, 2 of them.
        let cdf = u_cdf_table(3, 3, 9);
        let want = [1.0, 2.0, 4.0, 7.0, 10.0, 13.0, 16.0, 18.0, 19.0, 20.0].map(|c| c / 20.0);
        for (g, w) in cdf.iter().zip(want) {
            assert!((g - w).abs() < 1e-15, "{cdf:?}");
        }
        assert_eq!(min_exact_p(3, 3), 0.1);
        assert!((min_exact_p(4, 4) - 2.0 / 70.0).abs() < 1e-15);
    }

    #[test]
    fn float_counts_agree_with_exact_counts() {
        // The f64 path serves sizes whose C(N, m) overflows u128; check it where both work.
        for (m, n) in [(8, 300), (5, 1000), (8, 9)] {
            let kmax = m * n / 2;
            let exact = u_cdf_table(m, n, kmax);
            let float = u_cdf_table_f64(m, n, kmax);
            for (u, (e, f)) in exact.iter().zip(&float).enumerate() {
                assert!(
                    (e - f).abs() <= 1e-11 * e,
                    "m={m} n={n} u={u}: {e:e} vs {f:e}"
                );
            }
        }
        assert!(binom_u128(8 + 300_000, 8).is_none());
    }

    #[test]
    fn ranks_count_ties_once_per_group() {
        let r = ranks(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0]);
        // base 1: 0; 2, 2: 0.5 each; 3: 1 + 0.5.
        assert_eq!(r.u_base, 2.5);
        // groups: {2,2,2} and {3,3}: (27 - 3) + (8 - 2).
        assert_eq!(r.tie_term, 30.0);
        assert!(r.ties);
    }
}
