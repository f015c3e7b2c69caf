//! The incremental state of one series: a new run re-analyses only the windows it falls in.

use super::builds::Builds;
use super::edivisive::{self, Weak};
use super::merge::{self, Cache};
use super::{DetectError, DetectSettings, SeriesAnalysis};

/// One series and its analysis, kept up to date run by run.
///
/// A run appended at or after the last build changes at most the two windows of the split step
/// that reach the end of the series; the merge step, cheap once the builds are summed, runs
/// again over all weak change points. A run inserted before the last build, or a value that
/// forces a change of scale (zero or negative after positive values), re-analyses everything.
#[derive(Debug, Clone)]
pub struct History {
    settings: DetectSettings,
    positions: Vec<i64>,
    values: Vec<f64>,
    builds: Builds,
    weak: Vec<Weak>,
    cache: Cache,
    analysis: SeriesAnalysis,
}

impl History {
    /// Analyses a whole series (as [`super::analyse`]) and keeps what a later run needs.
    pub fn new(
        positions: &[i64],
        values: &[f64],
        settings: DetectSettings,
    ) -> Result<Self, DetectError> {
        let mut builds = Builds::new(positions, values)?;
        // Room for growth, so the next runs do not copy the whole series.
        let extra = values.len() / 4 + 16;
        builds.reserve(extra);
        let (mut positions, mut values) = (positions.to_vec(), values.to_vec());
        positions.reserve(extra);
        values.reserve(extra);
        let mut history = Self {
            settings,
            positions,
            values,
            builds,
            weak: Vec::new(),
            cache: Cache::default(),
            analysis: SeriesAnalysis::default(),
        };
        history.reanalyse_from(0);
        Ok(history)
    }

    /// Change points and tested p-values (q equal to p until [`super::adjust`] runs across
    /// series).
    pub fn analysis(&self) -> &SeriesAnalysis {
        &self.analysis
    }

    /// The samples analysed so far (positions, values), in the order given.
    pub fn samples(&self) -> (&[i64], &[f64]) {
        (&self.positions, &self.values)
    }

    /// Number of builds.
    pub fn builds(&self) -> usize {
        self.builds.len()
    }

    /// Adds one run's value at `position` and updates the analysis.
    pub fn push(&mut self, position: i64, value: f64) -> Result<&SeriesAnalysis, DetectError> {
        if !value.is_finite() {
            return Err(DetectError::NotFinite {
                index: self.values.len(),
            });
        }
        self.positions.push(position);
        self.values.push(value);
        let last = self.builds.positions.last().copied();
        if last.is_some_and(|l| position < l) || !self.builds.accepts(value) {
            self.builds = Builds::new(&self.positions, &self.values)?;
            self.cache = Cache::default();
            self.reanalyse_from(0);
            return Ok(&self.analysis);
        }
        // The first build whose summary changes: the last one for a repeated run, else the new.
        let changed = if last == Some(position) {
            self.builds.len() - 1
        } else {
            self.builds.len()
        };
        self.builds.push(position, value);
        self.cache.invalidate_from(changed);
        self.reanalyse_from(changed);
        Ok(&self.analysis)
    }

    fn reanalyse_from(&mut self, changed: usize) {
        let (window, _) = edivisive::grid(&self.settings);
        self.weak.retain(|w| w.window + window <= changed);
        self.weak
            .extend(edivisive::split(&self.builds, &self.settings, changed));
        self.analysis = merge::merge(
            &self.builds,
            self.weak.iter().map(|w| w.index),
            &self.settings,
            &mut self.cache,
        );
    }
}
