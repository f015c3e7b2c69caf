//! The two-sample test of the builds before and after a candidate change point.

use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::function::beta::checked_beta_reg;

use super::builds::{Builds, SegmentStat};

/// Welch's t of the segment means (each mean's variance from [`Builds::segment`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Split {
    /// After minus before, on the analysis scale.
    pub delta: f64,
    pub se: f64,
    pub df: f64,
    pub p: f64,
}

/// Tests builds `a..c` against `c..e`. The split `c` was chosen as the best of the
/// `e - a - 2 * min_segment + 1` admissible ones, so the p-value of the test at `c` alone is
/// multiplied by that number (Bonferroni): without it, pure noise would pass `alpha` at some
/// split in most long series, and q-values across series would control nothing.
pub(super) fn split(builds: &Builds, a: usize, c: usize, e: usize, min_segment: usize) -> Split {
    let mut s = welch(builds.segment(a, c), builds.segment(c, e));
    s.p = (s.p * choices(a, e, min_segment)).min(1.0);
    s
}

/// Admissible splits of `a..e` with `min_segment` builds a side.
pub(super) fn choices(a: usize, e: usize, min_segment: usize) -> f64 {
    (e - a + 1).saturating_sub(2 * min_segment).max(1) as f64
}

/// The variance of a segment's mean is the larger of: its own scatter of build means, the
/// scatter pooled over both segments (a short segment that is tight by chance would otherwise
/// look certain: E-divisive seeks such splits out), and the noise of repeated runs. Its own
/// scatter keeps an outlier build from being a change: the outlier widens only its segment.
fn welch(l: SegmentStat, r: SegmentStat) -> Split {
    let delta = r.mean - l.mean;
    let df_pooled = l.builds + r.builds - 2.0;
    let pooled = if df_pooled > 0.0 {
        (l.ss + r.ss) / df_pooled
    } else {
        0.0
    };
    let side = |x: SegmentStat| -> (f64, f64) {
        let own = if x.builds >= 2.0 {
            x.ss / (x.builds - 1.0)
        } else {
            0.0
        };
        // The degrees of freedom are those of the pooled estimate even when the segment's own
        // scatter is larger: the larger variance is already the cautious choice, and a short
        // segment's few degrees of freedom would hide a large step next to it.
        let s2 = own.max(pooled);
        let df = if df_pooled > 0.0 {
            df_pooled
        } else {
            x.builds - 1.0
        };
        let between = (s2 / x.builds, df);
        match x.within {
            Some(w) if w.0 > between.0 => w,
            _ => between,
        }
    };
    let ((lv, ldf), (rv, rdf)) = (side(l), side(r));
    let var = lv + rv;
    if var <= 0.0 || !var.is_finite() {
        // No noise at all on either side: any difference is certain, none is no change.
        let p = if delta.abs() > 1e-12 { 0.0 } else { 1.0 };
        return Split {
            delta,
            se: 0.0,
            df: f64::INFINITY,
            p,
        };
    }
    // Welch-Satterthwaite; a side without degrees of freedom contributes none.
    let term = |v: f64, df: f64| if df > 0.0 { v * v / df } else { 0.0 };
    let den = term(lv, ldf) + term(rv, rdf);
    let df = if den > 0.0 { var * var / den } else { 1.0 };
    let df = df.max(1.0);
    let se = var.sqrt();
    let t = delta / se;
    // Two-sided p = I_{df/(df+t^2)}(df/2, 1/2), accurate far into the tail.
    let p = checked_beta_reg(df / 2.0, 0.5, df / (df + t * t)).unwrap_or(1.0);
    Split { delta, se, df, p }
}

/// The `level` interval of `delta` on the analysis scale.
pub(super) fn interval(s: &Split, level: f64) -> (f64, f64) {
    if s.se == 0.0 {
        return (s.delta, s.delta);
    }
    let crit = StudentsT::new(0.0, 1.0, s.df)
        .map(|t| t.inverse_cdf(0.5 + level / 2.0))
        .unwrap_or(f64::INFINITY);
    (s.delta - crit * s.se, s.delta + crit * s.se)
}
