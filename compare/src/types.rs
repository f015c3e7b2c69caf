//! Result types of a comparison. Field names are the `compare --json` contract.

use serde::{Deserialize, Serialize};

/// Which way is better for a metric: the data model's own type, so parsers, the store and
/// the statistics share one.
pub use ingest::model::Direction;

/// The policy a comparison is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Significance level for p (one series) or q (several series).
    pub alpha: f64,
    /// Practical threshold: a change counts from this many percent of the base median.
    pub threshold_pct: f64,
    /// Fewer samples than this on either side is `not_enough_data`.
    pub min_n: usize,
    /// Confidence level of the interval of the change (0.95).
    pub ci_level: f64,
    /// Bootstrap resamples (seeded, deterministic).
    pub bootstrap_resamples: usize,
    /// Seed of the bootstrap generator.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            alpha: 0.05,
            threshold_pct: 1.0,
            min_n: 3,
            ci_level: 0.95,
            bootstrap_resamples: 2000,
            seed: 0x5eed,
        }
    }
}

/// Descriptive statistics of one sample set. Undefined values are `None` (JSON null).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Describe {
    pub n: usize,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    /// Sample standard deviation (n-1); None for n < 2.
    pub std: Option<f64>,
    pub p25: Option<f64>,
    pub p75: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    /// Coefficient of variation, std/mean in percent; None when mean is 0 or std undefined.
    pub cv_pct: Option<f64>,
}

/// Interval of the change of head against base, in percent of the base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound, percent change.
    pub low: f64,
    /// Upper bound, percent change.
    pub high: f64,
    /// Confidence level: the requested one (0.95), or for `hodges_lehmann_exact` the level the
    /// exact distribution achieves (3 vs 3 runs: 0.9 at best).
    pub level: f64,
    /// `hodges_lehmann_exact`, `bootstrap_ratio_of_medians` or `hodges_lehmann_asymptotic`.
    pub method: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of the base sample (scipy's convention for `mannwhitneyu(base, head)`).
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// `exact` or `asymptotic`.
    pub method: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// t = (mean head - mean base) / se.
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HodgesLehmann {
    /// Median of all pairwise differences head - base, in the series' unit.
    pub shift: f64,
}

/// What a series did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Improvement,
    Increase,
    Decrease,
    NoSignificantChange,
    NotEnoughData,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Increase => "increase",
            Verdict::Decrease => "decrease",
            Verdict::NoSignificantChange => "no_significant_change",
            Verdict::NotEnoughData => "not_enough_data",
        }
    }
}

/// Which test gave the p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestUsed {
    MannWhitney,
    Welch,
    None,
}

/// Caveats shown next to a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "flag", rename_all = "snake_case")]
pub enum Flag {
    /// Too few samples for Mann-Whitney to reach alpha: Welch's t was used.
    WelchFallback,
    /// Tied or quantized values (e.g. 3-decimal `time` output).
    Ties,
    /// Samples are per-CPU values of one run (trace_stat), not repeated runs.
    PerCpu,
    /// Very large n: samples inside one run are not independent.
    LargeN,
    /// Mean and median moved in different directions.
    MeanMedianDisagree,
    /// Significant, but the change is below the practical threshold.
    BelowThreshold,
    /// The interval spans the threshold; about `more_runs` more runs per side would settle it.
    Inconclusive { more_runs: Option<usize> },
    /// Someone's pre-computed summary values, not samples: no test is possible.
    Summary,
    /// A `perf stat` counter that was multiplexed (counted for less than the whole run and
    /// scaled up): its values carry the scaling's error.
    Multiplexed,
}

/// The comparison of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesComparison {
    pub base: Describe,
    pub head: Describe,
    /// 100 (median head - median base) / |median base|: 100 (median head / median base - 1) for a
    /// positive base, and the sign of the move for a negative one. None when the base median is 0
    /// or either is missing.
    pub change_pct: Option<f64>,
    /// median head / median base.
    pub ratio: Option<f64>,
    pub ci: Option<Interval>,
    pub mann_whitney: Option<MannWhitney>,
    pub welch: Option<Welch>,
    pub hodges_lehmann: Option<HodgesLehmann>,
    /// Cliff's delta of head vs base, in [-1, 1].
    pub cliffs_delta: Option<f64>,
    /// The p-value of the primary test (None when not enough data).
    pub p: Option<f64>,
    /// Benjamini-Hochberg q-value across the comparison.
    pub q: Option<f64>,
    pub test: TestUsed,
    pub verdict: Verdict,
    pub flags: Vec<Flag>,
}
