//! Descriptive statistics of one sample set.

use crate::Describe;

/// Sorts a copy of the samples in ascending order (NaN, which the store never holds, last).
pub(crate) fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// Arithmetic mean, refined by a second pass over the residuals so that large offsets
/// (timestamps, values near 1e9) do not cost precision. None for an empty slice.
pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let correction = xs.iter().map(|x| x - m).sum::<f64>() / n;
    Some(m + correction)
}

/// Sample variance (n-1) by the two-pass formula around `mean`, with the compensation term
/// of Chan, Golub and LeVeque (the sum of residuals, zero in exact arithmetic).
pub(crate) fn variance(xs: &[f64], mean: f64) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let (mut ss, mut s) = (0.0, 0.0);
    for &x in xs {
        let d = x - mean;
        ss += d * d;
        s += d;
    }
    let n = xs.len() as f64;
    Some(((ss - s * s / n) / (n - 1.0)).max(0.0))
}

/// Quantile `q` in [0, 1] of sorted samples by numpy's default (`linear`, Hyndman-Fan 7),
/// including numpy's two-sided interpolation formula so results agree to the last bit.
pub(crate) fn quantile_sorted(s: &[f64], q: f64) -> Option<f64> {
    let n = s.len();
    if n == 0 {
        return None;
    }
    let virt = (n - 1) as f64 * q;
    if virt >= (n - 1) as f64 {
        return Some(s[n - 1]);
    }
    if virt <= 0.0 {
        return Some(s[0]);
    }
    let prev = virt.floor();
    let i = prev as usize;
    let (a, b) = (s[i], s[i + 1]);
    Some(lerp(a, b, virt - prev))
}

/// numpy's `_lerp`: interpolates from the nearer end to keep monotonicity and exactness.
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Median of sorted samples (numpy: mean of the two middle values for even n).
pub(crate) fn median_sorted(s: &[f64]) -> Option<f64> {
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some(midpoint(s[n / 2 - 1], s[n / 2])),
    }
}

/// (a + b) / 2 as numpy's mean of two values computes it, without overflow for huge values.
pub(crate) fn midpoint(a: f64, b: f64) -> f64 {
    let m = (a + b) / 2.0;
    if m.is_finite() { m } else { a / 2.0 + b / 2.0 }
}

/// Descriptive statistics of samples already sorted ascending.
pub(crate) fn describe_sorted(s: &[f64]) -> Describe {
    let n = s.len();
    let mean = mean(s);
    let std = mean.and_then(|m| variance(s, m)).map(f64::sqrt);
    let cv_pct = match (std, mean) {
        (Some(sd), Some(m)) if m != 0.0 => Some(sd / m.abs() * 100.0),
        _ => None,
    };
    Describe {
        n,
        min: s.first().copied(),
        max: s.last().copied(),
        mean,
        median: median_sorted(s),
        std,
        p25: quantile_sorted(s, 0.25),
        p75: quantile_sorted(s, 0.75),
        p90: quantile_sorted(s, 0.90),
        p99: quantile_sorted(s, 0.99),
        cv_pct,
    }
}
