//! Descriptive statistics of one sample set.

use crate::Describe;
use crate::middle::{RUN_FROM, RUN_SAMPLE, RUN_SPREAD, middle_run};

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
pub(crate) fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

pub(crate) fn unkey(k: u64) -> f64 {
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

/// The power of two that brings the samples' largest magnitude near 1, when it lies outside
/// [2^-256, 2^256]; 1 otherwise. Sums of squares of values scaled so cannot overflow or
/// underflow for any n below 2^400, and multiplying by a power of two is exact, so ordinary
/// data never takes a scaled path and extreme data (1e308, 1e-300) keeps every statistic
/// finite. The samples are sorted ascending: the largest magnitude is at one end.
pub(crate) fn scale_for(sorted: &[f64]) -> f64 {
    let ends = [sorted.first(), sorted.last()];
    scale_for_magnitude(
        ends.into_iter()
            .flatten()
            .fold(0.0f64, |m, x| m.max(x.abs())),
    )
}

pub(crate) fn scale_for_magnitude(max_abs: f64) -> f64 {
    const LIMIT: i32 = 256;
    if !(max_abs.is_finite() && max_abs > 0.0) {
        return 1.0;
    }
    // The binary exponent of max_abs (subnormals count as the smallest normal exponent).
    let exponent = ((max_abs.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    if (-LIMIT..=LIMIT).contains(&exponent) {
        1.0
    } else {
        2f64.powi(-exponent.max(-1022))
    }
}

/// Arithmetic mean of sorted samples, refined by a second pass over the residuals so that large
/// offsets (timestamps, values near 1e9) do not cost precision. Finite for any finite samples (sums
/// of extreme values are taken over scaled values). None for an empty slice.
pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    mean_scaled(xs, scale_for(xs)).map(|(m, f)| m / f)
}

/// The mean of the samples times `f`, and `f`.
fn mean_scaled(xs: &[f64], f: f64) -> Option<(f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let m = xs.iter().map(|x| x * f).sum::<f64>() / n;
    let correction = xs.iter().map(|x| x * f - m).sum::<f64>() / n;
    Some((m + correction, f))
}

/// Sample standard deviation (n-1) of sorted samples by the two-pass formula around `mean`, with
/// the compensation term of Chan, Golub and LeVeque (the sum of residuals, zero in exact
/// arithmetic). Extreme
/// values are scaled first (see [`scale_for`]); None for fewer than 2 values or when the
/// standard deviation itself is beyond f64 (samples spanning -f64::MAX to f64::MAX).
pub(crate) fn std_dev(xs: &[f64], mean: f64) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let f = scale_for(xs);
    let mean = mean * f;
    let (mut ss, mut s) = (0.0, 0.0);
    for &x in xs {
        let d = x * f - mean;
        ss += d * d;
        s += d;
    }
    let n = xs.len() as f64;
    let sd = ((ss - s * s / n) / (n - 1.0)).max(0.0).sqrt() / f;
    sd.is_finite().then_some(sd)
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
/// When b - a overflows (a and b of opposite signs near f64::MAX), the weighted sum, whose
/// terms cannot.
pub(crate) fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if !diff.is_finite() {
        return a * (1.0 - t) + b * t;
    }
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

/// The least value, the median ([`median_sorted`]'s) and the greatest, in `total_cmp` order, of
/// `xs`, which is reordered. By selection rather than sorting: a summary of millions of samples
/// that needs only these three costs one linear pass and no copy; a long series whose middle
/// is one value repeated, not even the selection ([`middle_run`]).
pub fn min_median_max(xs: &mut [f64]) -> Option<(f64, f64, f64)> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    if n >= RUN_FROM
        && let Some(figures) = middle_run(xs, RUN_SAMPLE, RUN_SPREAD)
    {
        return Some(figures);
    }
    let (left, upper, right) = xs.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *upper;
    let least = |s: &[f64]| s.iter().copied().min_by(f64::total_cmp);
    let greatest = |s: &[f64]| s.iter().copied().max_by(f64::total_cmp);
    let median = match greatest(left) {
        // Even n: the lower middle value is the greatest of those below the upper one.
        Some(lower) if n.is_multiple_of(2) => midpoint(lower, upper),
        _ => upper,
    };
    Some((
        least(left).unwrap_or(upper),
        median,
        greatest(right).unwrap_or(upper),
    ))
}

/// (a + b) / 2 as numpy's mean of two values computes it, without overflow for huge values.
pub(crate) fn midpoint(a: f64, b: f64) -> f64 {
    let m = (a + b) / 2.0;
    if m.is_finite() { m } else { a / 2.0 + b / 2.0 }
}

/// The change from `base` to `head` in percent of |base|, 100 (head - base) / |base|; when
/// head - base overflows (opposite signs near f64::MAX), from the halves, which cannot.
pub(crate) fn change_pct(base: f64, head: f64) -> f64 {
    let d = head - base;
    if d.is_finite() {
        d / base.abs() * 100.0
    } else {
        (head / 2.0 - base / 2.0) / base.abs() * 200.0
    }
}

/// Descriptive statistics of samples already sorted ascending.
pub(crate) fn describe_sorted(s: &[f64]) -> Describe {
    let n = s.len();
    let mean = mean(s);
    let std = mean.and_then(|m| std_dev(s, m));
    let cv_pct = match (std, mean) {
        (Some(sd), Some(m)) if m != 0.0 => Some(sd / m.abs() * 100.0).filter(|c| c.is_finite()),
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
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn min_median_max_equals_the_sorted_ends_and_middle(
            mut xs in proptest::collection::vec(
                prop_oneof![any::<f64>().prop_filter("not NaN", |x| !x.is_nan()), (-3i8..3).prop_map(f64::from), Just(-0.0)],
                0..200,
            )
        ) {
            let s = sorted(&xs);
            let want = median_sorted(&s).map(|m| (s[0], m, s[s.len() - 1]));
            let got = min_median_max(&mut xs);
            let bits = |t: Option<(f64, f64, f64)>| t.map(|(a, b, c)| (a.to_bits(), b.to_bits(), c.to_bits()));
            prop_assert_eq!(bits(got), bits(want));
        }
    }

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
