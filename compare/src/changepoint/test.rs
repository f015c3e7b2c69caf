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

/// Tests builds `a..c` against `c..e`.
pub(super) fn split(builds: &Builds, a: usize, c: usize, e: usize) -> Split {
    welch(builds.segment(a, c), builds.segment(c, e))
}

fn welch(l: SegmentStat, r: SegmentStat) -> Split {
    let delta = r.mean - l.mean;
    let var = l.var + r.var;
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
    let den = term(l.var, l.df) + term(r.var, r.df);
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
