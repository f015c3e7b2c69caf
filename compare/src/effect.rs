//! Effect sizes and intervals: Hodges-Lehmann shift, Cliff's delta, the interval of the change.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::describe::{change_pct, midpoint, quantile_sorted};
use crate::tests::{Ranks, normal_quantile, u_cdf_table};
use crate::{Interval, Settings};

/// Pairwise-difference sets up to this size are materialized and selected directly.
const MATERIALIZE_MAX: u64 = 1 << 16;
/// Candidates sampled per round of the pairwise-difference selection.
const PIVOT_SAMPLE: usize = 16384;
/// Seed of the pivot sampling (it only affects speed, never the result).
const SELECT_SEED: u64 = 0x4c48;

/// The k-th smallest (0-based) of all n*m differences `head_j - base_i`, both samples sorted.
///
/// Exact, in O((n + m) log(n m)) time and O(min(n, m)) memory, never materializing more
/// than 2^20 of the n*m differences: a Floyd-Rivest style selection over the sorted matrix
/// `head_j - base_i` (monotone along rows and columns). Each round samples candidates, takes two
/// pivots bracketing the wanted rank, counts the differences below each pivot with a merge-like
/// pass, and keeps only the candidates between them (per-row column bounds).
pub(crate) fn kth_difference(base: &[f64], head: &[f64], k: u64) -> Option<f64> {
    kth_difference_with(base, head, k, MATERIALIZE_MAX)
}

fn kth_difference_with(base: &[f64], head: &[f64], k: u64, materialize_max: u64) -> Option<f64> {
    let total = (base.len() as u64).checked_mul(head.len() as u64)?;
    if k >= total {
        return None;
    }
    if base.len() <= head.len() {
        kth_rows(base, head, k, materialize_max, false).map(|(v, _)| v)
    } else {
        // head_j - base_i = -(base_i - head_j), exactly in floating point: the k-th smallest
        // of one set is minus the (total-1-k)-th of the other, which has the shorter rows.
        kth_rows(head, base, total - 1 - k, materialize_max, false).map(|(v, _)| -v)
    }
}

/// Uniform integer in [0, n) (n > 0) by the widening multiply.
fn below(rng: &mut Pcg64, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// First index in [start, end) where `pred` is false, `pred` being true on a prefix:
/// exponential then binary search, so a pass over all rows costs O(rows * log(gap)).
fn gallop(y: &[f64], start: usize, end: usize, pred: impl Fn(f64) -> bool) -> usize {
    if start >= end || !pred(y[start]) {
        return start;
    }
    let mut good = start;
    let mut step = 1;
    let bad = loop {
        let probe = good + step;
        if probe >= end {
            break end;
        }
        if pred(y[probe]) {
            good = probe;
            step *= 2;
        } else {
            break probe;
        }
    };
    let (mut l, mut r) = (good + 1, bad);
    while l < r {
        let m = l + (r - l) / 2;
        if pred(y[m]) {
            l = m + 1;
        } else {
            r = m;
        }
    }
    l
}

/// Per row i, the number of columns j with `y_j - x_i < t` (or `<= t`), searched within the
/// candidate bounds; returns the total. Requires L < t < R for the current bounds.
fn count_below(
    (x, y): (&[f64], &[f64]),
    (lo, hi): (&[u32], &[u32]),
    t: f64,
    strict: bool,
    out: &mut [u32],
) -> u64 {
    let mut prev = 0u32;
    let mut total = 0u64;
    for (i, &xi) in x.iter().enumerate() {
        // The count is non-decreasing in i (x ascending), so start from the previous row's.
        let end = hi[i] as usize;
        let start = (lo[i].max(prev) as usize).min(end);
        let pos = if strict {
            gallop(y, start, end, |v| v - xi < t)
        } else {
            gallop(y, start, end, |v| v - xi <= t)
        } as u32;
        out[i] = pos;
        prev = pos;
        total += u64::from(pos);
    }
    total
}

/// Rows from which [`count_pair`] splits its pass over two threads.
const PARALLEL_ROWS: usize = 1 << 17;

/// Both counts of a round in one pass: per row, #(d <= a) into `le_a` and #(d < b) into `lt_b`,
/// for L < a < b < R. Returns the two totals. Many rows are counted in two halves on two
/// threads (rows are independent; each half starts from its own candidate bounds).
fn count_pair(
    (x, y): (&[f64], &[f64]),
    (lo, hi): (&[u32], &[u32]),
    (a, b): (f64, f64),
    le_a: &mut [u32],
    lt_b: &mut [u32],
) -> (u64, u64) {
    if x.len() < PARALLEL_ROWS {
        return count_pair_rows((x, y), (lo, hi), (a, b), le_a, lt_b);
    }
    let mid = x.len() / 2;
    let (x1, x2) = x.split_at(mid);
    let ((lo1, lo2), (hi1, hi2)) = (lo.split_at(mid), hi.split_at(mid));
    let ((le1, le2), (lt1, lt2)) = (le_a.split_at_mut(mid), lt_b.split_at_mut(mid));
    let ((a1, b1), (a2, b2)) = std::thread::scope(|s| {
        let second = s.spawn(|| count_pair_rows((x2, y), (lo2, hi2), (a, b), le2, lt2));
        let first = count_pair_rows((x1, y), (lo1, hi1), (a, b), le1, lt1);
        let second = second
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (first, second)
    });
    (a1 + a2, b1 + b2)
}

fn count_pair_rows(
    (x, y): (&[f64], &[f64]),
    (lo, hi): (&[u32], &[u32]),
    (a, b): (f64, f64),
    le_a: &mut [u32],
    lt_b: &mut [u32],
) -> (u64, u64) {
    let (mut prev_a, mut prev_b) = (0u32, 0u32);
    let (mut total_a, mut total_b) = (0u64, 0u64);
    for (i, &xi) in x.iter().enumerate() {
        let end = hi[i] as usize;
        let start = (lo[i].max(prev_a) as usize).min(end);
        let pa = gallop(y, start, end, |v| v - xi <= a);
        // #(d < b) >= #(d <= a) in the same row, so b's search starts where a's ended.
        let pb = gallop(y, pa.max(prev_b as usize).min(end), end, |v| v - xi < b);
        (le_a[i], lt_b[i]) = (pa as u32, pb as u32);
        (prev_a, prev_b) = (pa as u32, pb as u32);
        total_a += pa as u64;
        total_b += pb as u64;
    }
    (total_a, total_b)
}

/// The smallest difference `y_j - x_i` at or after column `from[i]` of each row: the element
/// of the next rank when `from` holds, per row, the count of elements up to some value.
fn min_from(x: &[f64], y: &[f64], from: &[u32]) -> Option<f64> {
    x.iter()
        .zip(from)
        .filter_map(|(&xi, &j)| y.get(j as usize).map(|&yj| yj - xi))
        .min_by(f64::total_cmp)
}

/// The k-th smallest of `y_j - x_i`, and when `with_next` the (k+1)-th (None past the end).
fn kth_rows(
    x: &[f64],
    y: &[f64],
    k: u64,
    materialize_max: u64,
    with_next: bool,
) -> Option<(f64, Option<f64>)> {
    let total = x.len() as u64 * y.len() as u64;
    let next_in = |tail: &[f64]| tail.iter().copied().min_by(f64::total_cmp);
    if total <= materialize_max {
        let mut d: Vec<f64> = Vec::with_capacity(total as usize);
        for &xi in x {
            d.extend(y.iter().map(|&yj| yj - xi));
        }
        let (_, v, tail) = d.select_nth_unstable_by(k as usize, f64::total_cmp);
        return Some((*v, if with_next { next_in(tail) } else { None }));
    }
    let nc = u32::try_from(y.len()).ok()?;
    let nr = x.len();
    // Candidates of row i are columns lo[i]..hi[i]: differences strictly between the current
    // bounds L and R. `known_below` counts the differences <= L, `sum_hi` those < R.
    let mut lo = vec![0u32; nr];
    let mut hi = vec![nc; nr];
    let mut le_pos = vec![0u32; nr];
    let mut lt_pos = vec![0u32; nr];
    let mut known_below = 0u64;
    let mut sum_hi = total;
    let mut rng = Pcg64::seed_from_u64(SELECT_SEED);
    let mut positions: Vec<u64> = Vec::with_capacity(PIVOT_SAMPLE);
    let mut sample: Vec<f64> = Vec::with_capacity(PIVOT_SAMPLE);
    // A pivot t found at rank k: the next rank is t again, or the first element above t.
    let found = |t: f64, le: u64, le_pos: &[u32]| {
        let next = match with_next {
            false => None,
            true if k + 1 < le => Some(t),
            true => min_from(x, y, le_pos),
        };
        Some((t, next))
    };
    loop {
        let cand = sum_hi - known_below;
        if cand <= materialize_max {
            let mut d: Vec<f64> = Vec::with_capacity(cand as usize);
            for (i, &xi) in x.iter().enumerate() {
                d.extend(y[lo[i] as usize..hi[i] as usize].iter().map(|&yj| yj - xi));
            }
            let r = (k - known_below) as usize;
            let (_, v, tail) = d.select_nth_unstable_by(r, f64::total_cmp);
            let next = match with_next {
                false => None,
                // Past the last candidate, the next rank is the smallest element >= R.
                true => next_in(tail).or_else(|| min_from(x, y, &hi)),
            };
            return Some((*v, next));
        }
        // Sample candidates uniformly (sorted positions, then one walk over the rows).
        positions.clear();
        // Never more samples than it takes: small candidate sets (tests) get small samples.
        let size = (cand / 16).clamp(32, PIVOT_SAMPLE as u64);
        positions.extend((0..size).map(|_| below(&mut rng, cand)));
        positions.sort_unstable();
        sample.clear();
        let mut acc = 0u64;
        let mut p = 0;
        for (i, &xi) in x.iter().enumerate() {
            let w = u64::from(hi[i] - lo[i]);
            while p < positions.len() && positions[p] < acc + w {
                let j = lo[i] as usize + (positions[p] - acc) as usize;
                sample.push(y[j] - xi);
                p += 1;
            }
            acc += w;
            if p == positions.len() {
                break;
            }
        }
        sample.sort_unstable_by(f64::total_cmp);
        // Pivots two standard errors either side of where rank k should fall in the sample.
        let s = sample.len() as f64;
        let r = (k - known_below) as f64 / cand as f64 * s;
        let delta = 2.0 * s.sqrt();
        let a = (r - delta >= 0.0).then(|| sample[(r - delta) as usize]);
        let b = (r + delta < s - 1.0).then(|| sample[(r + delta).ceil() as usize]);

        let b = b.filter(|&b| a.is_none_or(|a| b > a));
        if let (Some(a), Some(b)) = (a, b) {
            let (le, lt) = count_pair((x, y), (&lo, &hi), (a, b), &mut le_pos, &mut lt_pos);
            if le <= k && k < lt {
                // The usual outcome: the rank lies between the pivots.
                std::mem::swap(&mut lo, &mut le_pos);
                std::mem::swap(&mut hi, &mut lt_pos);
                (known_below, sum_hi) = (le, lt);
                continue;
            }
        }
        if let Some(a) = a {
            let le = count_below((x, y), (&lo, &hi), a, false, &mut le_pos);
            if k < le {
                let lt = count_below((x, y), (&lo, &hi), a, true, &mut lt_pos);
                if k >= lt {
                    return found(a, le, &le_pos);
                }
                std::mem::swap(&mut hi, &mut lt_pos);
                sum_hi = lt;
                continue;
            }
            std::mem::swap(&mut lo, &mut le_pos);
            known_below = le;
        }
        if let Some(b) = b {
            let lt = count_below((x, y), (&lo, &hi), b, true, &mut lt_pos);
            if k < lt {
                std::mem::swap(&mut hi, &mut lt_pos);
                sum_hi = lt;
                continue;
            }
            let le = count_below((x, y), (&lo, &hi), b, false, &mut le_pos);
            if k < le {
                return found(b, le, &le_pos);
            }
            std::mem::swap(&mut lo, &mut le_pos);
            known_below = le;
        }
    }
}

/// Median of all pairwise differences head_j - base_i, both samples sorted: one selection
/// for the lower middle rank, its successor from the same pass.
pub(crate) fn hodges_lehmann_sorted(base: &[f64], head: &[f64]) -> Option<f64> {
    match halved_if_huge(base, head) {
        Some((b, h)) => twice(hodges_lehmann_with(&b, &h, MATERIALIZE_MAX)?),
        None => hodges_lehmann_with(base, head, MATERIALIZE_MAX),
    }
}

/// Both sorted samples halved when a pairwise difference could overflow (a magnitude of 2^1023
/// or more): the differences of the halves are the halves of the differences, and finite.
fn halved_if_huge(base: &[f64], head: &[f64]) -> Option<(Vec<f64>, Vec<f64>)> {
    let ends = [base.first(), base.last(), head.first(), head.last()];
    let max_abs = ends
        .into_iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    let half = |xs: &[f64]| xs.iter().map(|x| x / 2.0).collect();
    (max_abs >= 2f64.powi(1023)).then(|| (half(base), half(head)))
}

/// A statistic of halved samples back in the unit of the samples; None beyond f64.
fn twice(v: f64) -> Option<f64> {
    let v = v * 2.0;
    v.is_finite().then_some(v)
}

fn hodges_lehmann_with(base: &[f64], head: &[f64], materialize_max: u64) -> Option<f64> {
    let total = (base.len() as u64).checked_mul(head.len() as u64)?;
    if total == 0 {
        return None;
    }
    // The median of head - base is minus the median of base - head: take the shorter rows.
    let (x, y, sign) = if base.len() <= head.len() {
        (base, head, 1.0)
    } else {
        (head, base, -1.0)
    };
    let (lower, next) = kth_rows(x, y, (total - 1) / 2, materialize_max, total % 2 == 0)?;
    let median = match next {
        Some(upper) => midpoint(lower, upper),
        None => lower,
    };
    Some(sign * median)
}

/// Cliff's delta of head against base, P(head > base) - P(head < base), from U of the base:
/// U = #(base > head) + #ties / 2, so delta = 1 - 2U / (n m).
pub(crate) fn cliffs_delta_from(r: &Ranks, n_base: usize, n_head: usize) -> Option<f64> {
    if n_base == 0 || n_head == 0 {
        return None;
    }
    let nm = n_base as f64 * n_head as f64;
    Some(1.0 - 2.0 * r.u_base / nm)
}

/// Distribution-free interval of the shift head - base (Hodges-Lehmann / Moses), in the unit
/// of the samples, with its achieved confidence level and method name.
///
/// R's `wilcox.test(x = head, y = base, conf.int = TRUE)` convention: when there are no ties
/// and both samples have fewer than 50 values, the bounds are the order statistics qu and
/// nm + 1 - qu (1-based) of the pairwise differences, qu the alpha/2 quantile of the exact
/// Wilcoxon rank-sum distribution (qu = 0 is raised to 1, giving the widest interval), and the
/// level is the achieved one, 1 - 2 P(W <= qu - 1). Otherwise qu comes from the normal
/// approximation with tie and continuity correction, ceil(nm/2 - 1/2 - z sigma), the
/// textbook order-statistic form (R instead solves for the bounds numerically).
pub(crate) fn shift_interval(
    base: &[f64],
    head: &[f64],
    r: &Ranks,
    level: f64,
) -> Option<ShiftBounds> {
    let (n1, n2) = (base.len(), head.len());
    if n1 == 0 || n2 == 0 || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let nm = n1 as u64 * n2 as u64;
    let alpha = 1.0 - level;
    let (qu, achieved, method) = if !r.ties && n1 < 50 && n2 < 50 {
        let cdf = u_cdf_table(n1, n2, (nm / 2) as usize);
        let q = cdf
            .iter()
            .position(|&c| c >= alpha / 2.0)
            .unwrap_or(cdf.len() - 1) as u64;
        let qu = q.max(1);
        let achieved = 1.0 - 2.0 * cdf[(qu - 1) as usize];
        (qu, achieved, "hodges_lehmann_exact")
    } else {
        let n = (n1 + n2) as f64;
        let nmf = nm as f64;
        let sigma = (nmf / 12.0 * ((n + 1.0) - r.tie_term / (n * (n - 1.0))))
            .max(0.0)
            .sqrt();
        let z = normal_quantile(1.0 - alpha / 2.0);
        let q = (nmf / 2.0 - 0.5 - z * sigma).ceil();
        let qu = if q.is_finite() && q >= 1.0 {
            (q as u64).min(nm.div_ceil(2))
        } else {
            1
        };
        (qu, level, "hodges_lehmann_asymptotic")
    };
    // Bounds of halved samples stay halves until the caller divides them by the base median:
    // an interval in percent can be finite where the shift itself is beyond f64.
    let (low, high, unit) = match halved_if_huge(base, head) {
        Some((b, h)) => (
            kth_difference(&b, &h, qu - 1)?,
            kth_difference(&b, &h, nm - qu)?,
            2.0,
        ),
        None => (
            kth_difference(base, head, qu - 1)?,
            kth_difference(base, head, nm - qu)?,
            1.0,
        ),
    };
    Some(ShiftBounds {
        low,
        high,
        unit,
        level: achieved,
        method,
    })
}

/// An interval of the shift: the bounds are `low * unit` and `high * unit` (unit 2 when the
/// samples were halved to keep differences finite).
pub(crate) struct ShiftBounds {
    pub low: f64,
    pub high: f64,
    pub unit: f64,
    pub level: f64,
    pub method: &'static str,
}

/// Uniform in (0, 1), 53 random bits, never 0 or 1.
fn uniform(rng: &mut Pcg64) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

fn std_normal(rng: &mut Pcg64) -> f64 {
    let (u, v) = (uniform(rng), uniform(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang 2000).
fn gamma(rng: &mut Pcg64, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = std_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = uniform(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// Beta(a, b) for a, b >= 1.
fn beta(rng: &mut Pcg64, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    let y = gamma(rng, b);
    x / (x + y)
}

/// The median of a resample with replacement of the (sorted) sample, drawn in O(1).
///
/// Drawing n indices uniformly is drawing n uniforms U_i and taking floor(n U_i); the k-th
/// smallest index is floor(n U_(k)) and U_(k) ~ Beta(k, n - k + 1). For even n the next order
/// statistic is U_(k) + (1 - U_(k)) V, V the minimum of n - k uniforms, 1 - W^(1/(n-k)).
/// So the bootstrap distribution of the median is sampled exactly, at full n, whatever n is.
fn resampled_median(rng: &mut Pcg64, s: &[f64]) -> f64 {
    let n = s.len();
    let nf = n as f64;
    let index = |u: f64| ((nf * u) as usize).min(n - 1);
    if n % 2 == 1 {
        let k = n.div_ceil(2);
        s[index(beta(rng, k as f64, (n - k + 1) as f64))]
    } else {
        let k = n / 2;
        let u1 = beta(rng, k as f64, (n - k + 1) as f64);
        let v = 1.0 - uniform(rng).powf(1.0 / (n - k) as f64);
        let u2 = u1 + (1.0 - u1) * v;
        midpoint(s[index(u1)], s[index(u2)])
    }
}

/// Seeded percentile bootstrap of the change of the median in percent,
/// 100 (med_h - med_b) / |med_b| (the ratio of medians minus one for positive data). Resamples
/// whose base median is 0 are skipped; None when more than half are. Cost O(resamples),
/// independent of n.
pub(crate) fn bootstrap_change(
    base: &[f64],
    head: &[f64],
    settings: &Settings,
) -> Option<Interval> {
    if base.is_empty() || head.is_empty() || settings.bootstrap_resamples == 0 {
        return None;
    }
    let level = settings.ci_level;
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let mut rng = Pcg64::seed_from_u64(settings.seed);
    let mut stats = Vec::with_capacity(settings.bootstrap_resamples);
    for _ in 0..settings.bootstrap_resamples {
        let mb = resampled_median(&mut rng, base);
        let mh = resampled_median(&mut rng, head);
        if mb != 0.0 {
            let c = change_pct(mb, mh);
            if c.is_finite() {
                stats.push(c);
            }
        }
    }
    if stats.len() * 2 < settings.bootstrap_resamples {
        return None;
    }
    stats.sort_unstable_by(f64::total_cmp);
    Some(Interval {
        low: quantile_sorted(&stats, (1.0 - level) / 2.0)?,
        high: quantile_sorted(&stats, (1.0 + level) / 2.0)?,
        level,
        method: "bootstrap_ratio_of_medians".to_string(),
    })
}

#[cfg(test)]
mod unit {
    use super::*;

    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *state >> 33
    }

    #[test]
    fn selection_agrees_with_sorting_all_differences() {
        let mut st = 7;
        for (nb, nh, spread) in [
            (37, 53, 20),
            (53, 37, 1000),
            (5, 400, 7),
            (300, 2, 50),
            (64, 64, 3),
        ] {
            let mut b: Vec<f64> = (0..nb)
                .map(|_| (lcg(&mut st) % spread) as f64 * 0.5)
                .collect();
            let mut h: Vec<f64> = (0..nh)
                .map(|_| (lcg(&mut st) % spread) as f64 * 0.5 - 3.0)
                .collect();
            b.sort_by(f64::total_cmp);
            h.sort_by(f64::total_cmp);
            let mut all: Vec<f64> = b
                .iter()
                .flat_map(|x| h.iter().map(move |y| y - x))
                .collect();
            all.sort_by(f64::total_cmp);
            let last = all.len() - 1;
            for (k, want) in all
                .iter()
                .enumerate()
                .filter(|(k, _)| k % 7 == 0 || *k == last)
            {
                // A tiny materialization limit forces several selection rounds.
                let got = kth_difference_with(&b, &h, k as u64, 16).unwrap();
                assert_eq!(got, *want, "{nb}x{nh} k={k}");
            }
            assert_eq!(kth_difference_with(&b, &h, all.len() as u64, 16), None);
        }
    }

    #[test]
    fn median_of_differences_agrees_with_sorting() {
        let mut st = 11;
        for (nb, nh, spread) in [
            (40, 60, 9),
            (61, 40, 1000),
            (3, 500, 40),
            (250, 4, 5),
            (33, 33, 2),
        ] {
            let mut b: Vec<f64> = (0..nb)
                .map(|_| (lcg(&mut st) % spread) as f64 * 0.25)
                .collect();
            let mut h: Vec<f64> = (0..nh)
                .map(|_| (lcg(&mut st) % spread) as f64 * 0.25 + 1.0)
                .collect();
            b.sort_by(f64::total_cmp);
            h.sort_by(f64::total_cmp);
            let mut all: Vec<f64> = b
                .iter()
                .flat_map(|x| h.iter().map(move |y| y - x))
                .collect();
            all.sort_by(f64::total_cmp);
            let n = all.len();
            let want = if n % 2 == 1 {
                all[n / 2]
            } else {
                (all[n / 2 - 1] + all[n / 2]) / 2.0
            };
            for limit in [8, 100, MATERIALIZE_MAX] {
                assert_eq!(
                    hodges_lehmann_with(&b, &h, limit),
                    Some(want),
                    "{nb}x{nh} limit {limit}"
                );
            }
        }
    }

    #[test]
    fn selection_of_a_large_product() {
        // 3000 x 3000 = 9e6 differences through the sampled-pivot rounds, checked by counting.
        let b: Vec<f64> = (0..3000)
            .map(|i| (i * 37 % 3001) as f64)
            .collect::<Vec<_>>();
        let h: Vec<f64> = (0..3000)
            .map(|i| (i * 91 % 2999) as f64 * 1.5)
            .collect::<Vec<_>>();
        let (mut b, mut h) = (b, h);
        b.sort_by(f64::total_cmp);
        h.sort_by(f64::total_cmp);
        for k in [0u64, 1, 4_499_999, 4_500_000, 8_999_999] {
            let v = kth_difference(&b, &h, k).unwrap();
            let (mut lt, mut le) = (0u64, 0u64);
            for x in &b {
                for y in &h {
                    lt += u64::from(y - x < v);
                    le += u64::from(y - x <= v);
                }
            }
            assert!(lt <= k && k < le, "k={k} v={v} lt={lt} le={le}");
        }
    }

    #[test]
    fn counts_on_two_threads_agree_with_one() {
        // Enough rows for the split pass; the rows' bounds as after a first round.
        let n = PARALLEL_ROWS + 1001;
        let mut st = 5;
        let mut x: Vec<f64> = (0..n).map(|_| (lcg(&mut st) % 5000) as f64).collect();
        let mut y: Vec<f64> = (0..n / 3)
            .map(|_| (lcg(&mut st) % 5000) as f64 + 7.5)
            .collect();
        x.sort_by(f64::total_cmp);
        y.sort_by(f64::total_cmp);
        let mut lo = vec![0u32; n];
        let mut hi = vec![y.len() as u32; n];
        count_pair_rows(
            (&x, &y),
            (&vec![0; n], &hi.clone()),
            (-100.0, 200.0),
            &mut lo,
            &mut hi,
        );
        let (a, b) = (-20.0, 30.5);
        let (mut le1, mut lt1) = (vec![0u32; n], vec![0u32; n]);
        let (mut le2, mut lt2) = (vec![0u32; n], vec![0u32; n]);
        let one = count_pair_rows((&x, &y), (&lo, &hi), (a, b), &mut le1, &mut lt1);
        let two = count_pair((&x, &y), (&lo, &hi), (a, b), &mut le2, &mut lt2);
        assert_eq!(one, two);
        assert!(le1 == le2 && lt1 == lt2);
        // And by counting directly, for a few rows.
        for i in [0, n / 2 - 1, n / 2, n - 1] {
            let le = y.iter().filter(|&&v| v - x[i] <= a).count();
            let lt = y.iter().filter(|&&v| v - x[i] < b).count();
            assert_eq!((le2[i] as usize, lt2[i] as usize), (le, lt), "row {i}");
        }
    }

    #[test]
    fn resampled_median_has_the_bootstrap_distribution() {
        // Compare with resampling by drawing n indices, for odd and even n.
        for n in [7usize, 8] {
            let s: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let draws = 200_000;
            let mut fast = vec![0usize; 2 * n];
            let mut naive = vec![0usize; 2 * n];
            let mut rng = Pcg64::seed_from_u64(1);
            let mut idx = vec![0usize; n];
            for _ in 0..draws {
                fast[(2.0 * resampled_median(&mut rng, &s)) as usize] += 1;
                for v in idx.iter_mut() {
                    *v = below(&mut rng, n as u64) as usize;
                }
                idx.sort_unstable();
                let m = if n % 2 == 1 {
                    2 * idx[n / 2]
                } else {
                    idx[n / 2 - 1] + idx[n / 2]
                };
                naive[m] += 1;
            }
            for (f, v) in fast.iter().zip(&naive) {
                let diff = (*f as f64 - *v as f64).abs() / draws as f64;
                assert!(diff < 0.005, "n={n} fast={fast:?} naive={naive:?}");
            }
        }
    }
}
