//! Descriptive statistics of one sample set.

use crate::Describe;

/// Sorts a copy of the samples in ascending `total_cmp` order (NaN, which the store never
/// holds, last). Large inputs use an LSD radix sort on the order-preserving bit pattern, several
/// times faster than a comparison sort at a million values.
pub(crate) fn sorted(xs: &[f64]) -> Vec<f64> {
    if xs.len() < RADIX_MIN {
        let mut v = xs.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        return v;
    }
    let mut keys: Vec<u64> = xs.iter().map(|x| key(*x)).collect();
    radix_sort(&mut keys);
    // Same size and alignment: collects in place, no second buffer.
    keys.into_iter().map(unkey).collect()
}

const RADIX_MIN: usize = 4096;
const RADIX_BITS: u32 = 11;

/// Bits of an f64 as a u64 ordered like `f64::total_cmp`.
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

fn unkey(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

fn radix_sort(keys: &mut Vec<u64>) {
    const BUCKETS: usize = 1 << RADIX_BITS;
    const DIGITS: usize = 64usize.div_ceil(RADIX_BITS as usize);
    let digit = |k: u64, d: usize| ((k >> (d as u32 * RADIX_BITS)) as usize) & (BUCKETS - 1);
    // All digit histograms in one read pass.
    let mut counts = vec![[0usize; BUCKETS]; DIGITS];
    for &k in keys.iter() {
        for (d, count) in counts.iter_mut().enumerate() {
            count[digit(k, d)] += 1;
        }
    }
    let mut tmp = vec![0u64; keys.len()];
    for (d, count) in counts.iter_mut().enumerate() {
        // A digit shared by every key (sign and exponent, usually) needs no pass.
        if count.contains(&keys.len()) {
            continue;
        }
        let mut sum = 0;
        for c in count.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        for &k in keys.iter() {
            let slot = &mut count[digit(k, d)];
            tmp[*slot] = k;
            *slot += 1;
        }
        std::mem::swap(keys, &mut tmp);
    }
}

/// Arithmetic mean, refined by a second pass over the residuals so that large offsets
/// (timestamps, values near 1e9) do not cost precision. None for an empty slice.
pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    if !m.is_finite() {
        // The sum of values near f64::MAX overflows: average the values scaled into range.
        let scale = max_abs(xs);
        let ys = || xs.iter().map(move |x| x / scale);
        let m = ys().sum::<f64>() / n;
        let correction = ys().map(|y| y - m).sum::<f64>() / n;
        return Some((m + correction) * scale);
    }
    let correction = xs.iter().map(|x| x - m).sum::<f64>() / n;
    Some(m + correction)
}

/// The largest magnitude of `xs` (at least the smallest positive double, so it divides).
fn max_abs(xs: &[f64]) -> f64 {
    xs.iter().fold(
        f64::MIN_POSITIVE,
        |a, x| if x.abs() > a { x.abs() } else { a },
    )
}

/// Sample standard deviation around `mean`; finite for any finite samples, even where the
/// variance itself is beyond the largest double.
pub(crate) fn std_dev(xs: &[f64], mean: f64) -> Option<f64> {
    let v = variance(xs, mean)?;
    if v.is_finite() && v < f64::MAX {
        return Some(v.sqrt());
    }
    let scale = max_abs(xs);
    let ys: Vec<f64> = xs.iter().map(|x| x / scale).collect();
    variance(&ys, mean / scale).map(|v| v.sqrt() * scale)
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
    let v = (ss - s * s / n) / (n - 1.0);
    // Squares beyond the largest double: say so (infinite) rather than NaN.
    if v.is_nan() && xs.iter().all(|x| x.is_finite()) {
        return Some(f64::INFINITY);
    }
    Some(v.max(0.0))
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
    let std = mean.and_then(|m| std_dev(s, m));
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

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn radix_sort_orders_like_total_cmp() {
        let mut st = 3u64;
        let mut xs: Vec<f64> = (0..10_000)
            .map(|i| {
                st = st
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (st >> 11) as f64 / (1u64 << 53) as f64;
                match i % 5 {
                    0 => r * 1e9 - 5e8,
                    1 => -r,
                    2 => (r * 10.0).round(),
                    3 => r * 1e-300,
                    _ => 1e9 + r,
                }
            })
            .collect();
        xs.extend([
            0.0,
            -0.0,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]);
        let mut want = xs.clone();
        want.sort_by(f64::total_cmp);
        let got = sorted(&xs);
        assert_eq!(got.len(), want.len());
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_std_stay_finite_near_the_largest_double() {
        let xs = [1e308, 1.5e308, 1.2e308, 1.7e308];
        let m = mean(&xs).unwrap();
        // Exact mean 1.35e308, to within rounding.
        assert!((m / 1.35e308 - 1.0).abs() < 1e-12, "{m}");
        let sd = std_dev(&xs, m).unwrap();
        // Residuals -0.35, 0.15, -0.15, 0.35 (e308): sum of squares 0.29e616 over 3.
        let want = (0.29f64 / 3.0).sqrt() * 1e308;
        assert!((sd / want - 1.0).abs() < 1e-9, "{sd} vs {want}");
        let opposite = [-1e308, 1e308];
        assert_eq!(mean(&opposite), Some(0.0));
        // The residuals overflow when subtracted naively; sqrt(2) * 1e308 is representable.
        let sd = std_dev(&opposite, 0.0).unwrap();
        assert!((sd / (2f64.sqrt() * 1e308) - 1.0).abs() < 1e-12, "{sd}");
    }

    #[test]
    fn ordinary_values_keep_the_plain_formulas() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(mean(&xs), Some(2.5));
        assert_eq!(std_dev(&xs, 2.5), variance(&xs, 2.5).map(f64::sqrt));
    }
}
