//! Change points in a series of builds: E-divisive means with a significance test, as Apache
//! Otava (Hunter) runs it, on every run's samples, with Benjamini-Hochberg across series.
//!
//! The steps, each in its own file:
//! - [`builds`]: samples grouped by build position, on a log scale when every value is positive
//!   (latencies are skewed: a 10% step is the same distance at any level), with prefix sums so
//!   any segment's test costs O(1).
//! - [`edivisive`]: the split step. Sliding windows of `window` builds (half-overlapping, on a
//!   fixed grid so a new run only touches the last two windows); in each, E-divisive means
//!   (Matteson & James 2014, energy distance with exponent 1) proposes the split that maximises
//!   the divergence, and a two-sample test of the two samples it compared, at a relaxed level
//!   (10 x alpha, as Otava), keeps it as a weak change point. Both sides of a split hold at least
//!   `min_segment` builds, so one outlier build is never a segment of its own. Windows are 30
//!   builds (Otava's split step default; its analysis uses 50): the same accuracy on the
//!   benchmark, and a new run re-does a smaller window.
//! - [`merge`]: the merge step of Hunter (Fleming et al. 2023): the weakest change point is
//!   dropped and its neighbours re-tested on the whole segments between change points, until
//!   every one is below `alpha`.
//! - [`test`]: the two-sample t-test. A segment's mean of build means has a variance estimated
//!   from the larger of its own scatter of build means, the scatter pooled over both segments,
//!   and the scatter of repeated runs inside its builds: repeated runs are the noise estimate,
//!   and build-to-build noise beyond it is not ignored. An outlier build inflates the scatter of
//!   its segment, so it is not a change. The split was chosen from the data, so p is multiplied
//!   by the number of admissible splits (Bonferroni), and in the merge step again for the far
//!   end: p-values stay honest under pure noise, which is what makes q-values across series
//!   mean anything.
//! - [`history`]: the incremental state of one series: a new run re-analyses only the windows
//!   it falls in, then merges again.

mod builds;
mod edivisive;
mod history;
mod merge;
mod test;

use serde::Serialize;

pub use history::History;

use crate::{Direction, benjamini_hochberg};
use builds::Builds;

/// How change points are searched for and judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DetectSettings {
    /// A change point is kept when its p-value is at most this (one series).
    pub alpha: f64,
    /// False discovery rate across series: a change point is kept when its q is at most this.
    pub fdr: f64,
    /// Builds per sliding window of the split step.
    pub window: usize,
    /// Fewest builds on each side of a change point.
    pub min_segment: usize,
    /// Level of the reported interval of the change.
    pub interval_level: f64,
}

impl Default for DetectSettings {
    fn default() -> Self {
        Self {
            alpha: 0.001,
            fdr: 0.05,
            window: 30,
            min_segment: 3,
            interval_level: 0.95,
        }
    }
}

/// One side of a change point: the builds from the previous change point (or the start) to this
/// one, or from this one to the next (or the end).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Segment {
    /// Position of the segment's first build.
    pub first_position: i64,
    /// Position of the segment's last build.
    pub last_position: i64,
    /// Number of builds.
    pub builds: usize,
    /// Number of samples (every run of every build).
    pub n: usize,
    /// Median of all samples.
    pub median: f64,
    /// Mean of all samples.
    pub mean: f64,
}

/// Interval of the change, in percent of the before level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangeInterval {
    pub low_pct: f64,
    pub high_pct: f64,
    pub level: f64,
}

/// A change point: the series moved to a new level at `position`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// First position of the new regime.
    pub position: i64,
    /// Position of the last build of the old regime.
    pub build_before: i64,
    /// Index of the first build of the new regime among the series' builds.
    pub build_index: usize,
    pub before: Segment,
    pub after: Segment,
    /// Change of the median, in percent of the median before.
    pub change_pct: f64,
    /// Interval of the change of the level (geometric mean on the log scale).
    pub interval: ChangeInterval,
    /// p-value of the two-sample test of the segments before and after.
    pub p: f64,
    /// Benjamini-Hochberg q across every candidate tested in the series analysed together.
    pub q: f64,
}

impl ChangePoint {
    /// Whether the change is a regression, an improvement, or neither for a neutral metric.
    pub fn kind(&self, direction: Direction) -> &'static str {
        let up = self.after.median > self.before.median;
        match (direction, up) {
            (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => "regression",
            (Direction::LowerIsBetter, false) | (Direction::HigherIsBetter, true) => "improvement",
            (Direction::Neutral, true) => "increase",
            (Direction::Neutral, false) => "decrease",
        }
    }
}

/// The result for one series before multiple-comparison control: the change points kept at
/// `alpha`, and the p-values of every candidate tested (kept or not), which is the family the
/// q-values are computed over.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SeriesAnalysis {
    pub change_points: Vec<ChangePoint>,
    pub tested_p: Vec<f64>,
}

/// Why a series cannot be analysed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DetectError {
    #[error("positions and values differ in length ({positions} positions, {values} values)")]
    Length { positions: usize, values: usize },
    #[error("value {index} is not a finite number")]
    NotFinite { index: usize },
}

/// Change points of one series: `positions[i]` is the build order of `values[i]`; repeated
/// positions are repeated runs of one build, in any order. q-values are over this series alone.
pub fn detect(
    positions: &[i64],
    values: &[f64],
    settings: &DetectSettings,
) -> Result<SeriesAnalysis, DetectError> {
    let mut analysis = analyse(positions, values, settings)?;
    adjust(std::slice::from_mut(&mut analysis), settings);
    Ok(analysis)
}

/// Change points of many series (for example every series of a benchmark), with q-values by
/// Benjamini-Hochberg across all of them; change points above `settings.fdr` are dropped.
pub fn detect_many<'a>(
    series: impl IntoIterator<Item = (&'a [i64], &'a [f64])>,
    settings: &DetectSettings,
) -> Result<Vec<SeriesAnalysis>, DetectError> {
    let mut all = series
        .into_iter()
        .map(|(p, v)| analyse(p, v, settings))
        .collect::<Result<Vec<_>, _>>()?;
    adjust(&mut all, settings);
    Ok(all)
}

/// One series, p-values only (q left at p).
pub fn analyse(
    positions: &[i64],
    values: &[f64],
    settings: &DetectSettings,
) -> Result<SeriesAnalysis, DetectError> {
    let builds = Builds::new(positions, values)?;
    let weak = edivisive::split(&builds, settings, 0);
    Ok(merge::merge(
        &builds,
        weak.iter().map(|w| w.index),
        settings,
        &mut merge::Cache::default(),
    ))
}

/// Benjamini-Hochberg across every tested candidate of `analyses`: sets each change point's q
/// and drops those above `settings.fdr`. The segments of the change points kept still end at
/// the dropped ones (they describe the series as the merge step at `alpha` split it).
pub fn adjust(analyses: &mut [SeriesAnalysis], settings: &DetectSettings) {
    let all_p: Vec<f64> = analyses
        .iter()
        .flat_map(|a| a.tested_p.iter().copied())
        .collect();
    let q = benjamini_hochberg(&all_p);
    // A change point's p is one of its series' tested p: look its q up by value in that series'
    // slice of the family (equal p give equal q in BH).
    let mut offset = 0;
    for a in analyses.iter_mut() {
        let qs = &q[offset..offset + a.tested_p.len()];
        for cp in &mut a.change_points {
            cp.q = a
                .tested_p
                .iter()
                .zip(qs)
                .find(|(p, _)| **p == cp.p)
                .map_or(1.0, |(_, q)| *q);
        }
        a.change_points.retain(|cp| cp.q <= settings.fdr);
        offset += a.tested_p.len();
    }
}
