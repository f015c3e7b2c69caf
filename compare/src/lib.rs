//! Statistics for commit-versus-commit comparisons: pure functions, no I/O.
//!
//! [`compare_series`] takes the base and head samples of one series and returns everything the
//! pages and reports show; [`finish`] applies Benjamini-Hochberg across a whole comparison and
//! sets the verdicts.
//!
//! Samples are finite numbers (the store rejects NaN and infinities); nothing here panics on
//! other input, but results for it are unspecified. For any finite input, however extreme
//! (+-f64::MAX, 1e-320), every statistic is finite: sums and squares of extreme values are
//! taken over values scaled by a power of two, and a statistic whose value lies beyond f64 (the
//! shift between -1e308 and 1e308) is None, never NaN or infinite.
//!
//! Every function is O((n + m) log(n + m)) or better in time and linear in memory, so a million
//! samples a side is fine; from 200,000 samples, [`compare_series`] uses two threads.

pub mod bisect;
pub mod changepoint;
mod describe;
mod effect;
mod middle;
mod passes;
pub mod pool;
mod sketch;
/// Hypothesis tests (Mann-Whitney U, Welch's t).
mod tests;
mod types;
mod verdict;

pub use describe::min_median_max;
pub use middle::middle_run_by_pass;
pub use passes::min_median_max_by_passes;
pub use pool::median;
pub use sketch::text_sketch;
pub use types::*;
pub use verdict::benjamini_hochberg;

use describe::{describe_sorted, sorted};

/// Descriptive statistics: n, min, max, mean, median, std (n-1), numpy-linear percentiles, CV.
pub fn describe(xs: &[f64]) -> Describe {
    describe_sorted(&sorted(xs))
}

/// Mann-Whitney U test of base against head (two-sided), with scipy's conventions (U of the
/// base sample) and scipy 1.17's `auto` rule: the exact distribution when the pooled sample has
/// no ties and at least one side has at most 8 values, else the normal approximation with tie
/// and continuity correction. None when a side is empty.
pub fn mann_whitney(base: &[f64], head: &[f64]) -> Option<MannWhitney> {
    let (b, h) = (sorted(base), sorted(head));
    tests::mann_whitney_sorted(&b, &h, &tests::ranks(&b, &h))
}

/// Welch's t-test, t of head - base. None with fewer than 2 values a side or no variance at all.
pub fn welch(base: &[f64], head: &[f64]) -> Option<Welch> {
    tests::welch_samples(base, head)
}

/// Hodges-Lehmann shift: the median of all pairwise differences head_j - base_i, computed
/// exactly by selection without materializing the n*m differences.
pub fn hodges_lehmann(base: &[f64], head: &[f64]) -> Option<HodgesLehmann> {
    let (b, h) = (sorted(base), sorted(head));
    effect::hodges_lehmann_sorted(&b, &h).map(|shift| HodgesLehmann { shift })
}

/// Cliff's delta of head against base: P(head > base) - P(head < base), in O((n+m) log).
pub fn cliffs_delta(base: &[f64], head: &[f64]) -> Option<f64> {
    let (b, h) = (sorted(base), sorted(head));
    effect::cliffs_delta_from(&tests::ranks(&b, &h), b.len(), h.len())
}

/// Interval of the change of the median, in percent of the base median (its magnitude).
///
/// When both samples have at least 10 values: a seeded percentile bootstrap of the change of
/// the medians (`bootstrap_ratio_of_medians`, `settings.bootstrap_resamples` resamples at full n,
/// each median drawn in O(1) from its order-statistic distribution). Otherwise the
/// distribution-free Hodges-Lehmann interval of the shift (`hodges_lehmann_exact`, or
/// `hodges_lehmann_asymptotic` with ties or 50+ values), divided by the base median; its level
/// is the one achieved by the exact distribution (3 vs 3 reaches only 0.9). None when the base
/// median is 0 or a side is empty.
pub fn change_interval(base: &[f64], head: &[f64], settings: &Settings) -> Option<Interval> {
    let (b, h) = (sorted(base), sorted(head));
    interval_sorted(&b, &h, &tests::ranks(&b, &h), settings)
}

/// A distribution-free interval of the shift head - base, in the unit of the samples.
#[derive(Debug, Clone, PartialEq)]
pub struct ShiftInterval {
    pub low: f64,
    pub high: f64,
    /// The requested level, or for `hodges_lehmann_exact` the level the exact distribution
    /// achieves.
    pub level: f64,
    /// `hodges_lehmann_exact` or `hodges_lehmann_asymptotic`.
    pub method: &'static str,
}

/// The Hodges-Lehmann (Moses) interval of the shift head - base at `level`: what
/// [`change_interval`] divides by the base median when a side has fewer than 10 values. Exact
/// without ties and with both sides under 50 values, else the normal approximation. None when a
/// side is empty or the level is outside (0, 1).
pub fn shift_interval(base: &[f64], head: &[f64], level: f64) -> Option<ShiftInterval> {
    let (b, h) = (sorted(base), sorted(head));
    let s = effect::shift_interval(&b, &h, &tests::ranks(&b, &h), level)?;
    let (low, high) = (s.low * s.unit, s.high * s.unit);
    (low.is_finite() && high.is_finite()).then_some(ShiftInterval {
        low,
        high,
        level: s.level,
        method: s.method,
    })
}

fn interval_sorted(
    b: &[f64],
    h: &[f64],
    r: &tests::Ranks,
    settings: &Settings,
) -> Option<Interval> {
    let base_median = describe::median_sorted(b)?;
    if base_median == 0.0 || h.is_empty() {
        return None;
    }
    let bootstrap = match b.len() >= 10 && h.len() >= 10 {
        true => effect::bootstrap_change(b, h, settings),
        false => None,
    };
    if bootstrap.is_some() {
        return bootstrap;
    }
    let s = effect::shift_interval(b, h, r, settings.ci_level)?;
    let scale = 100.0 * s.unit / base_median.abs();
    // Dividing first keeps a finite percentage finite when 100 / |median| is not (1e-320).
    let percent = |v: f64| {
        Some(v * scale)
            .filter(|p| p.is_finite())
            .unwrap_or(v / base_median.abs() * 100.0 * s.unit)
    };
    let (low, high) = (percent(s.low), percent(s.high));
    (low.is_finite() && high.is_finite()).then(|| Interval {
        low,
        high,
        level: s.level,
        method: s.method.to_string(),
    })
}

/// Ratio of the medians and change in percent: (head - base) / |base| * 100, which is
/// (head / base - 1) * 100 for a positive base. None when the base median is 0 or missing.
/// The percent change of the head median against the base median (in percent of the base's
/// magnitude); None when a median is missing, the base is 0 or the result is not finite.
pub fn change_pct(base_median: Option<f64>, head_median: Option<f64>) -> Option<f64> {
    change(base_median, head_median).1
}

fn change(base_median: Option<f64>, head_median: Option<f64>) -> (Option<f64>, Option<f64>) {
    match (base_median, head_median) {
        (Some(b), Some(h)) if b != 0.0 => {
            let finite = |v: f64| v.is_finite().then_some(v);
            (finite(h / b), finite(describe::change_pct(b, h)))
        }
        _ => (None, None),
    }
}

/// Compares the samples of one series.
///
/// Policy: fewer than `settings.min_n` values on a side is `not_enough_data` (descriptive
/// numbers, change and effect sizes are still given; no interval, no test, no p). When even the
/// most extreme exact Mann-Whitney outcome, p = 2 / C(n_base + n_head, n_base), is not below
/// alpha (3 vs 3: 0.1), the test is Welch's t ([`Flag::WelchFallback`]; Mann-Whitney's p when
/// Welch is undefined because neither side varies); otherwise Mann-Whitney. The verdict set here
/// treats p as the only test of the comparison; [`finish`] revisits it with q-values.
pub fn compare_series(
    base: &[f64],
    head: &[f64],
    direction: Direction,
    settings: &Settings,
    per_cpu: bool,
) -> SeriesComparison {
    let (b, h) = both(base.len() + head.len(), || sorted(base), || sorted(head));
    // The Hodges-Lehmann selection is the longest part for large samples: it runs beside the
    // rest.
    let (shift, mut item) = both(
        b.len() + h.len(),
        || effect::hodges_lehmann_sorted(&b, &h),
        || compare_sorted(&b, &h, direction, settings, per_cpu),
    );
    item.hodges_lehmann = shift.map(|shift| HodgesLehmann { shift });
    item
}

/// Total samples from which two independent parts of a comparison run on two threads.
const PARALLEL_MIN: usize = 200_000;

/// Runs `f` and `g`, on two threads when `n` reaches [`PARALLEL_MIN`].
fn both<A: Send, B>(n: usize, f: impl FnOnce() -> A + Send, g: impl FnOnce() -> B) -> (A, B) {
    if n < PARALLEL_MIN {
        return (f(), g());
    }
    std::thread::scope(|s| {
        let a = s.spawn(f);
        let b = g();
        let a = a.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        (a, b)
    })
}

/// [`compare_series`] of sorted samples, without the Hodges-Lehmann shift.
fn compare_sorted(
    b: &[f64],
    h: &[f64],
    direction: Direction,
    settings: &Settings,
    per_cpu: bool,
) -> SeriesComparison {
    let (bd, hd) = (describe_sorted(b), describe_sorted(h));
    let (ratio, change_pct) = change(bd.median, hd.median);
    let r = tests::ranks(b, h);

    let mut flags = Vec::new();
    if r.ties {
        flags.push(Flag::Ties);
    }
    if per_cpu {
        flags.push(Flag::PerCpu);
    }
    if b.len() > 1000 || h.len() > 1000 {
        flags.push(Flag::LargeN);
    }

    let enough = b.len() >= settings.min_n.max(1) && h.len() >= settings.min_n.max(1);
    let (mut mann_whitney, mut welch, mut p, mut test) = (None, None, None, TestUsed::None);
    if enough {
        mann_whitney = tests::mann_whitney_sorted(b, h, &r);
        welch = tests::welch_samples(b, h);
        if tests::min_exact_p(b.len(), h.len()) >= settings.alpha {
            flags.push(Flag::WelchFallback);
            (p, test) = match (&welch, &mann_whitney) {
                (Some(w), _) => (Some(w.p), TestUsed::Welch),
                (None, Some(mw)) => (Some(mw.p), TestUsed::MannWhitney),
                (None, None) => (None, TestUsed::None),
            };
        } else if let Some(mw) = &mann_whitney {
            (p, test) = (Some(mw.p), TestUsed::MannWhitney);
        }
    }

    // Direction of a move: Some(true) up, Some(false) down, None unchanged or undefined.
    let moved = |a: Option<f64>, z: Option<f64>| match (a, z) {
        (Some(a), Some(z)) if z != a => Some(z > a),
        _ => None,
    };
    if matches!((moved(bd.mean, hd.mean), moved(bd.median, hd.median)), (Some(m), Some(d)) if m != d)
    {
        flags.push(Flag::MeanMedianDisagree);
    }

    // An interval from fewer than min_n values per side would only restate the point estimate.
    let ci = if enough {
        interval_sorted(b, h, &r, settings)
    } else {
        None
    };
    if ci
        .as_ref()
        .is_some_and(|ci| verdict::spans_threshold(ci, settings.threshold_pct))
    {
        flags.push(Flag::Inconclusive {
            more_runs: verdict::more_runs(&bd, &hd, change_pct, settings),
        });
    }

    let mut item = SeriesComparison {
        hodges_lehmann: None,
        cliffs_delta: effect::cliffs_delta_from(&r, b.len(), h.len()),
        base: bd,
        head: hd,
        change_pct,
        ratio,
        ci,
        mann_whitney,
        welch,
        p,
        // Benjamini-Hochberg of a single p-value is the p-value itself.
        q: p,
        test,
        verdict: if enough {
            Verdict::NoSignificantChange
        } else {
            Verdict::NotEnoughData
        },
        flags,
    };
    verdict::decide(&mut item, direction, settings, false);
    item
}

/// A comparison of someone's pre-computed summaries (medians only): ratio and change, no test.
/// The verdict is always `not_enough_data` with [`Flag::Summary`], whatever the direction.
pub fn summary_only(
    base_median: Option<f64>,
    head_median: Option<f64>,
    _direction: Direction,
) -> SeriesComparison {
    let only_median = |median: Option<f64>| Describe {
        n: 0,
        min: None,
        max: None,
        mean: None,
        median,
        std: None,
        p25: None,
        p75: None,
        p90: None,
        p99: None,
        cv_pct: None,
    };
    let (ratio, change_pct) = change(base_median, head_median);
    SeriesComparison {
        base: only_median(base_median),
        head: only_median(head_median),
        change_pct,
        ratio,
        ci: None,
        mann_whitney: None,
        welch: None,
        hodges_lehmann: None,
        cliffs_delta: None,
        p: None,
        q: None,
        test: TestUsed::None,
        verdict: Verdict::NotEnoughData,
        flags: vec![Flag::Summary],
    }
}

/// Adjusts the p-values of a whole comparison (Benjamini-Hochberg over every item with a p)
/// and sets each verdict: significant when q < alpha (p < alpha when only one item has a p),
/// then judged against the practical threshold and the metric's direction.
pub fn finish(
    items: &mut [SeriesComparison],
    direction_of: impl Fn(usize) -> Direction,
    settings: &Settings,
) {
    finish_by(items, |c| c, |i, _| direction_of(i), settings);
}

/// [`finish`] over items that hold their comparison (`cmp`) beside other things, in place: a
/// profile's comparison holds tens of thousands of them.
pub fn finish_by<T>(
    items: &mut [T],
    cmp: impl Fn(&mut T) -> &mut SeriesComparison,
    direction_of: impl Fn(usize, &T) -> Direction,
    settings: &Settings,
) {
    let with_p: Vec<usize> = (0..items.len())
        .filter(|&i| cmp(&mut items[i]).p.is_some())
        .collect();
    let ps: Vec<f64> = with_p
        .iter()
        .filter_map(|&i| cmp(&mut items[i]).p)
        .collect();
    let qs = benjamini_hochberg(&ps);
    for item in items.iter_mut() {
        cmp(item).q = None;
    }
    for (&i, &q) in with_p.iter().zip(&qs) {
        cmp(&mut items[i]).q = Some(q);
    }
    let use_q = with_p.len() > 1;
    for (i, item) in items.iter_mut().enumerate() {
        let direction = direction_of(i, item);
        verdict::decide(cmp(item), direction, settings, use_q);
    }
}
