//! Samples grouped into builds, with prefix sums so that any run of builds is summarised in O(1).

use super::DetectError;

/// One build's runs on the analysis scale: count, mean and sum of squared deviations (Welford).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct BuildStat {
    k: usize,
    mean: f64,
    m2: f64,
    raw: f64,
}

impl BuildStat {
    fn add(&mut self, y: f64, raw: f64) {
        self.k += 1;
        self.raw += raw;
        let d = y - self.mean;
        self.mean += d / self.k as f64;
        self.m2 += d * (y - self.mean);
    }
}

/// Cumulative sums over builds `0..b`, stored at index `b`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Prefix {
    /// Sum and sum of squares of build means.
    s1: f64,
    s2: f64,
    /// Samples, within-build sum of squares and its degrees of freedom, sum of 1/k.
    n: usize,
    ss_within: f64,
    df_within: usize,
    inv_k: f64,
    /// Sum of raw values, for the reported means.
    raw: f64,
}

/// Summary of the builds `a..c` on the analysis scale, for the two-sample test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct SegmentStat {
    /// Builds.
    pub builds: f64,
    /// Mean of build means, and the sum of squared deviations of the build means from it.
    pub mean: f64,
    pub ss: f64,
    /// Variance of `mean` estimated from the runs inside the builds, with its degrees of
    /// freedom; None without repeated runs.
    pub within: Option<(f64, f64)>,
}

/// A series grouped by build, in build order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Builds {
    /// Analysis on the log scale (every value positive) or the raw scale.
    pub log: bool,
    /// Subtracted before summing so the prefix sums keep their precision.
    centre: f64,
    /// Position of each build.
    pub positions: Vec<i64>,
    /// Raw values in build order; build `b` holds `raw[offsets[b]..offsets[b + 1]]`.
    pub raw: Vec<f64>,
    pub offsets: Vec<usize>,
    stats: Vec<BuildStat>,
    /// `stats[b].mean`, contiguous for E-divisive.
    means: Vec<f64>,
    prefix: Vec<Prefix>,
}

impl Builds {
    pub fn new(positions: &[i64], values: &[f64]) -> Result<Self, DetectError> {
        if positions.len() != values.len() {
            return Err(DetectError::Length {
                positions: positions.len(),
                values: values.len(),
            });
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(DetectError::NotFinite { index });
        }
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_by_key(|&i| positions[i]);
        let log = values.iter().all(|&v| v > 0.0);
        let centre = order.first().map_or(0.0, |&i| scale(log, values[i]));
        let mut builds = Self {
            log,
            centre,
            positions: Vec::new(),
            raw: Vec::with_capacity(values.len()),
            offsets: vec![0],
            stats: Vec::new(),
            means: Vec::new(),
            prefix: vec![Prefix::default()],
        };
        for i in order {
            builds.push(positions[i], values[i]);
        }
        Ok(builds)
    }

    /// Number of builds.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Build means on the analysis scale (centred), the input of E-divisive.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// Reserves room for `runs` more runs (and as many builds).
    pub fn reserve(&mut self, runs: usize) {
        self.raw.reserve(runs);
        self.positions.reserve(runs);
        self.offsets.reserve(runs);
        self.stats.reserve(runs);
        self.means.reserve(runs);
        self.prefix.reserve(runs);
    }

    /// Whether `value` can be added on the current scale.
    pub fn accepts(&self, value: f64) -> bool {
        value.is_finite() && (!self.log || value > 0.0)
    }

    /// Adds one run at `position`, which must not precede the last build (checked by callers).
    pub fn push(&mut self, position: i64, value: f64) {
        let y = scale(self.log, value) - self.centre;
        if self.positions.last() != Some(&position) {
            self.positions.push(position);
            self.stats.push(BuildStat::default());
            self.means.push(0.0);
            self.offsets.push(self.raw.len());
            self.prefix.push(Prefix::default());
        }
        self.raw.push(value);
        let b = self.len() - 1;
        *self.offsets.last_mut().expect("offsets start with 0") = self.raw.len();
        self.stats[b].add(y, value);
        let (s, before) = (self.stats[b], self.prefix[b]);
        self.means[b] = s.mean;
        self.prefix[b + 1] = Prefix {
            s1: before.s1 + s.mean,
            s2: before.s2 + s.mean * s.mean,
            n: before.n + s.k,
            ss_within: before.ss_within + s.m2,
            df_within: before.df_within + (s.k - 1),
            inv_k: before.inv_k + 1.0 / s.k as f64,
            raw: before.raw + s.raw,
        };
    }

    /// Summary of builds `a..c` for the test.
    pub fn segment(&self, a: usize, c: usize) -> SegmentStat {
        let (lo, hi) = (self.prefix[a], self.prefix[c]);
        let nb = (c - a) as f64;
        let mean = (hi.s1 - lo.s1) / nb;
        let ss = ((hi.s2 - lo.s2) - nb * mean * mean).max(0.0);
        let df_w = hi.df_within - lo.df_within;
        let within = (df_w > 0).then(|| {
            let sw = (hi.ss_within - lo.ss_within).max(0.0) / df_w as f64;
            (sw * (hi.inv_k - lo.inv_k) / (nb * nb), df_w as f64)
        });
        SegmentStat {
            builds: nb,
            mean,
            ss,
            within,
        }
    }

    /// Samples and mean of the raw values of builds `a..c`.
    pub fn raw_summary(&self, a: usize, c: usize) -> (usize, f64) {
        let n = self.prefix[c].n - self.prefix[a].n;
        let sum = self.prefix[c].raw - self.prefix[a].raw;
        (n, sum / n.max(1) as f64)
    }

    /// Median of the raw values of builds `a..c` (linear interpolation between the middle two).
    pub fn raw_median(&self, a: usize, c: usize) -> f64 {
        let mut v = self.raw[self.offsets[a]..self.offsets[c]].to_vec();
        let n = v.len();
        if n == 0 {
            return f64::NAN;
        }
        let mid = n / 2;
        let (left, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
        let upper = *m;
        if n % 2 == 1 {
            return upper;
        }
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }

    /// A change of `delta` on the analysis scale, in percent of `before_mean_raw`.
    pub fn delta_pct(&self, delta: f64, before_mean_raw: f64) -> f64 {
        if self.log {
            delta.exp_m1() * 100.0
        } else if before_mean_raw != 0.0 {
            delta / before_mean_raw.abs() * 100.0
        } else {
            f64::NAN
        }
    }
}

fn scale(log: bool, v: f64) -> f64 {
    if log { v.ln() } else { v }
}
