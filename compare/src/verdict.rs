//! Multiple testing and the verdict policy.

use crate::tests::normal_quantile;
use crate::{Describe, Direction, Flag, Interval, SeriesComparison, Settings, Verdict};

/// Benjamini-Hochberg adjusted p-values (q-values), in input order, as
/// `scipy.stats.false_discovery_control(p, method='bh')`.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut q = vec![0.0; m];
    let mut running = f64::INFINITY;
    // From the largest p down: q_(i) = min over j >= i of p_(j) * m / j.
    for (rank, &idx) in order.iter().enumerate().rev() {
        // scipy multiplies by m / i: exactly p for the largest, never below p.
        let adjusted = p[idx] * (m as f64 / (rank + 1) as f64);
        running = running.min(adjusted);
        q[idx] = running.clamp(0.0, 1.0);
    }
    q
}

/// Sets the verdict of one series from its p (or q when `use_q`) and the practical threshold.
/// Series without samples to test (`not_enough_data`, summaries) keep their verdict.
pub(crate) fn decide(
    item: &mut SeriesComparison,
    direction: Direction,
    settings: &Settings,
    use_q: bool,
) {
    if item.verdict == Verdict::NotEnoughData || item.flags.contains(&Flag::Summary) {
        return;
    }
    item.flags.retain(|f| *f != Flag::BelowThreshold);
    let stat = if use_q { item.q } else { item.p };
    let significant = stat.is_some_and(|s| s < settings.alpha);
    if !significant {
        item.verdict = Verdict::NoSignificantChange;
        return;
    }
    let (Some(mb), Some(mh)) = (item.base.median, item.head.median) else {
        item.verdict = Verdict::NoSignificantChange;
        return;
    };
    // With a zero base median the relative change is infinite unless the head median is 0 too.
    let large = match item.change_pct {
        Some(c) => c.abs() >= settings.threshold_pct,
        None => mh != mb,
    };
    if !large || mh == mb {
        item.verdict = Verdict::NoSignificantChange;
        item.flags.push(Flag::BelowThreshold);
        return;
    }
    let up = mh > mb;
    item.verdict = match (direction, up) {
        (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => {
            Verdict::Regression
        }
        (Direction::LowerIsBetter, false) | (Direction::HigherIsBetter, true) => {
            Verdict::Improvement
        }
        (Direction::Neutral, true) => Verdict::Increase,
        (Direction::Neutral, false) => Verdict::Decrease,
    };
}

/// Whether the interval of the change (percent) holds both changes below and above the
/// practical threshold, on either side of zero.
pub(crate) fn spans_threshold(ci: &Interval, threshold_pct: f64) -> bool {
    let inside = |t: f64| ci.low < t && t < ci.high;
    inside(threshold_pct) || inside(-threshold_pct)
}

/// About how many more runs per side would settle a comparison whose interval spans the
/// threshold: the normal power approximation n = 2 (z_{1-alpha/2} + z_{0.8})^2 s^2 / gap^2,
/// s the pooled standard deviation and gap the distance between the observed median change and
/// the threshold, in the unit of the samples. None when any of these is undefined or zero.
pub(crate) fn more_runs(
    base: &Describe,
    head: &Describe,
    change_pct: Option<f64>,
    settings: &Settings,
) -> Option<usize> {
    let (sb, sh) = (base.std?, head.std?);
    let s2 = (sb * sb + sh * sh) / 2.0;
    let gap = (change_pct?.abs() - settings.threshold_pct).abs() / 100.0 * base.median?.abs();
    if !(gap > 0.0 && s2 > 0.0 && settings.alpha > 0.0 && settings.alpha < 1.0) {
        return None;
    }
    let z = normal_quantile(1.0 - settings.alpha / 2.0) + normal_quantile(0.8);
    let needed = (2.0 * z * z * s2 / (gap * gap)).ceil();
    if !needed.is_finite() || needed > 1e9 {
        return None;
    }
    let have = base.n.min(head.n);
    Some((needed as usize).saturating_sub(have).max(1))
}
