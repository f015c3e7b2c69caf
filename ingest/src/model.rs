//! What a parser produces: series of samples in canonical units, file metadata and warnings.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::error::ParseError;

mod dataset;

pub use dataset::Dataset;

/// Canonical units. Durations are seconds, variances of durations s^2, counts are counts,
/// memory is bytes. Anything else keeps the unit the input named (`Other`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Unit {
    Seconds,
    SecondsSquared,
    Count,
    Bytes,
    Percent,
    Other(String),
}

impl Unit {
    pub fn as_str(&self) -> &str {
        match self {
            Unit::Seconds => "s",
            Unit::SecondsSquared => "s^2",
            Unit::Count => "count",
            Unit::Bytes => "bytes",
            Unit::Percent => "%",
            Unit::Other(s) => s,
        }
    }

    /// Whether values of this unit are durations that cannot be negative.
    pub fn is_nonnegative(&self) -> bool {
        matches!(
            self,
            Unit::Seconds | Unit::SecondsSquared | Unit::Bytes | Unit::Count
        )
    }
}

impl From<String> for Unit {
    fn from(s: String) -> Self {
        match s.as_str() {
            "s" => Unit::Seconds,
            "s^2" => Unit::SecondsSquared,
            "count" => Unit::Count,
            "bytes" => Unit::Bytes,
            "%" => Unit::Percent,
            _ => Unit::Other(s),
        }
    }
}

impl From<Unit> for String {
    fn from(u: Unit) -> Self {
        u.as_str().to_string()
    }
}

impl AsRef<str> for Unit {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    LowerIsBetter,
    HigherIsBetter,
    Neutral,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower_is_better",
            Direction::HigherIsBetter => "higher_is_better",
            Direction::Neutral => "neutral",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "lower_is_better" | "lower" => Some(Direction::LowerIsBetter),
            "higher_is_better" | "higher" => Some(Direction::HigherIsBetter),
            "neutral" => Some(Direction::Neutral),
            _ => None,
        }
    }
}

/// The identity of a series inside one parsed input.
///
/// `label` names a block of the input when one file holds several labelled measurements
/// (`original:` / `apply patch:`, `BEFORE` / `AFTER`); `params` carries a parameter sweep
/// (`param.NAME` columns of the generic format); `statistic` marks pre-computed summaries
/// (`"p99"`, `"median"`, ...): those values are not samples.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SeriesKey {
    pub metric: String,
    pub scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistic: Option<String>,
}

impl SeriesKey {
    /// A plain series: `metric` over scope `all`.
    pub fn new(metric: impl Into<String>) -> Self {
        SeriesKey {
            metric: metric.into(),
            scope: "all".into(),
            label: None,
            params: BTreeMap::new(),
            statistic: None,
        }
    }

    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = scope.into();
        self
    }

    pub fn label(mut self, label: Option<String>) -> Self {
        self.label = label;
        self
    }

    pub fn statistic(mut self, statistic: impl Into<String>) -> Self {
        self.statistic = Some(statistic.into());
        self
    }

    pub fn param(mut self, k: impl Into<String>, v: impl Into<String>) -> Self {
        self.params.insert(k.into(), v.into());
        self
    }
}

/// A series as declared by a parser: its key plus unit and direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesSpec {
    #[serde(flatten)]
    pub key: SeriesKey,
    pub unit: Unit,
    pub direction: Direction,
}

impl SeriesSpec {
    pub fn new(key: SeriesKey, unit: Unit, direction: Direction) -> Self {
        SeriesSpec {
            key,
            unit,
            direction,
        }
    }

    /// A duration in seconds, lower is better.
    pub fn duration(key: SeriesKey) -> Self {
        Self::new(key, Unit::Seconds, Direction::LowerIsBetter)
    }

    /// A count, neutral.
    pub fn count(key: SeriesKey) -> Self {
        Self::new(key, Unit::Count, Direction::Neutral)
    }
}

/// A parsed series with its samples, in the order they appeared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    #[serde(flatten)]
    pub spec: SeriesSpec,
    pub samples: Vec<f64>,
}

/// A line that was not understood inside an otherwise valid file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// 1-based line number (0: about the whole file).
    pub line: u64,
    pub message: String,
}

/// A hash map with a fast, randomly seeded hasher: series keys are hashed once per sample,
/// and SipHash was a quarter of the parsing time.
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Index of a series declared on a [`Sink`].
pub type SeriesId = usize;

/// One value of a row given to [`Ctx::push_row`]: its series is the row's spec with `suffix`
/// after the metric's stem, and this unit and direction.
#[derive(Debug, Clone, Copy)]
pub struct Cell<'a> {
    pub suffix: &'a str,
    pub unit: &'a Unit,
    pub direction: Direction,
    pub value: f64,
}

/// Most cells of a row that [`Ctx::push_row`] passes to the sink in one call.
pub const MAX_ROW: usize = 8;

/// Rows of one table for [`Ctx::push_rows`]: each row's metric stem and its values, one per
/// cell of the table. Kept by the parser and reused, so that collecting rows allocates nothing
/// once the buffers have grown.
#[derive(Debug, Default)]
pub struct RowBatch {
    stems: String,
    ends: Vec<usize>,
    values: Vec<f64>,
}

impl RowBatch {
    /// Adds a row: its stem (the metric before each cell's suffix), made of the pieces of
    /// `stem`, and its values.
    pub fn push(&mut self, stem: &[&str], values: &[f64]) {
        for piece in stem {
            self.stems.push_str(piece);
        }
        self.ends.push(self.stems.len());
        // A value at a time: a row has a few, fewer than a copy by call is worth.
        self.values.reserve(values.len());
        for &v in values {
            self.values.push(v);
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn clear(&mut self) {
        self.stems.clear();
        self.ends.clear();
        self.values.clear();
    }

    /// The rows as (stem, values), with `cells` values per row.
    pub fn rows(&self, cells: usize) -> impl Iterator<Item = (&str, &[f64])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        self.ends
            .iter()
            .zip(starts)
            .zip(self.values.chunks(cells.max(1)))
            .map(|((&end, start), values)| (&self.stems[start..end], values))
    }

    /// All values, row after row.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Calls `f` with each row as `spec` (its metric set to the row's stem), the stem's length
    /// and the row's cells: `cells` with the row's values. Stops at the first error.
    pub fn try_each_row<'c, E>(
        &self,
        spec: &mut SeriesSpec,
        cells: &[Cell<'c>],
        mut f: impl FnMut(&mut SeriesSpec, usize, &[Cell<'c>]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut row = Vec::with_capacity(cells.len());
        for (stem, values) in self.rows(cells.len()) {
            spec.key.metric.clear();
            spec.key.metric.push_str(stem);
            row.clear();
            row.extend(
                cells
                    .iter()
                    .zip(values)
                    .map(|(c, &value)| Cell { value, ..*c }),
            );
            f(spec, stem.len(), &row)?;
        }
        Ok(())
    }
}

/// Receives what a parser finds. Parsers stream into a sink so that storing a large file needs
/// memory proportional to the number of series, not samples.
pub trait Sink {
    /// Declares a series (or finds the one with the same key) and returns its id. Borrowed:
    /// parsers declare a series once per sample, and only a new series is worth a copy.
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId;
    /// Appends one sample to a declared series. Values are already validated.
    fn sample(&mut self, id: SeriesId, value: f64);
    /// [`Sink::series`] then [`Sink::sample`] in one call, for a value valid in any series: a
    /// profile stores one value per series, and a sink can store it as it adds the series.
    fn series_sample(&mut self, spec: &SeriesSpec, value: f64) -> SeriesId {
        let id = self.series(spec);
        self.sample(id, value);
        id
    }
    /// [`Sink::series_sample`] for each cell of a row whose series share everything but the
    /// end of the metric, unit and direction: cell k's metric is the first `stem` bytes of
    /// `spec`'s followed by `cells[k].suffix`. Its id goes to `ids[k]`. The values are valid
    /// in any series. A sink can find what the series share (scope, label, ...) once.
    fn series_sample_row(
        &mut self,
        spec: &mut SeriesSpec,
        stem: usize,
        cells: &[Cell<'_>],
        ids: &mut [SeriesId],
    ) {
        sample_cells(self, spec, stem, cells, ids);
    }
    /// [`Sink::series_sample_row`] for each row of a batch, all with `spec`'s scope, label,
    /// statistic and params and the suffixes, units and directions of `cells` (whose values
    /// are not used: row r's are in the batch). The metric of a row's cell is the row's stem
    /// followed by the cell's suffix; `spec`'s metric is a buffer. The values are valid in any
    /// series.
    fn series_sample_rows(&mut self, spec: &mut SeriesSpec, cells: &[Cell<'_>], rows: &RowBatch) {
        let mut ids = vec![0; cells.len()];
        let _ = rows.try_each_row(spec, cells, |spec, stem, row| {
            self.series_sample_row(spec, stem, row, &mut ids);
            Ok::<(), std::convert::Infallible>(())
        });
    }
    fn meta(&mut self, key: &str, value: String);
    /// [`Sink::meta`] of a borrowed value: a sink that holds the key already can update it in
    /// place (a console log repeats its per-block facts on many lines).
    fn meta_str(&mut self, key: &str, value: &str) {
        self.meta(key, value.to_string());
    }
    fn warning(&mut self, warning: Warning);
    /// Structured detail kept alongside the run (e.g. the entries of a latency trace).
    fn extra(&mut self, key: &str, value: serde_json::Value);
    /// The metric of a declared series, for error messages, when the sink keeps it; a sink
    /// that answers `None` makes [`Ctx`] keep a copy of every metric name itself.
    fn metric_name(&self, _id: SeriesId) -> Option<&str> {
        None
    }
    /// Whether a declared series' unit forbids negative values, when the sink keeps units; a
    /// sink that answers `None` makes [`Ctx`] keep a flag for every series itself.
    fn is_nonnegative(&self, _id: SeriesId) -> Option<bool> {
        None
    }
    /// Whether [`Sink::metric_name`] and [`Sink::is_nonnegative`] answer for every declared
    /// series: then [`Ctx`] knows from the start that it keeps neither, and the first rows
    /// take the same path as the rest. Otherwise it asks them at the first series.
    fn keeps_names_and_units(&self) -> bool {
        false
    }
}

/// [`Sink::series_sample_row`] one cell at a time through [`Sink::series_sample`]: what a
/// sink without a row path does, and what one with a bounded row path does past its bound.
pub fn sample_cells<S: Sink + ?Sized>(
    sink: &mut S,
    spec: &mut SeriesSpec,
    stem: usize,
    cells: &[Cell<'_>],
    ids: &mut [SeriesId],
) {
    for (c, id) in cells.iter().zip(ids) {
        spec.key.metric.truncate(stem);
        spec.key.metric.push_str(c.suffix);
        if spec.unit != *c.unit {
            spec.unit = c.unit.clone();
        }
        spec.direction = c.direction;
        *id = sink.series_sample(spec, c.value);
    }
}

/// Sets `key` to `value`, in place when the key is there already. One search of the map
/// either way: most keys are new (a latency file's `traceN.` keys, thousands of them), and a
/// look-up before the insert searched the map twice for each, more than the key's copy costs.
pub fn set_meta(meta: &mut BTreeMap<String, String>, key: &str, value: &str) {
    match meta.entry(key.to_string()) {
        Entry::Occupied(mut e) => {
            let v = e.get_mut();
            v.clear();
            v.push_str(value);
        }
        Entry::Vacant(e) => {
            e.insert(value.to_string());
        }
    }
}

/// Flags by id, a bit each: a profile declares millions of series.
#[derive(Default)]
struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    fn len(&self) -> usize {
        self.len
    }

    /// Sets flag `i`, making the flags up to it (false) if there are fewer.
    #[inline]
    fn set(&mut self, i: usize, on: bool) {
        let w = i / 64;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let bit = 1 << (i % 64);
        if on {
            self.words[w] |= bit;
        } else {
            self.words[w] &= !bit;
        }
        self.len = self.len.max(i + 1);
    }

    fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }
}

/// What a parser writes through: validates every sample (finite; not negative where the unit
/// forbids it) and stamps warnings and errors with the current line.
pub struct Ctx<'a> {
    sink: &'a mut dyn Sink,
    /// Non-negative flags of declared series, by id, unless the sink keeps units.
    nonneg: Bits,
    /// Metric names of declared series, by id, unless the sink keeps them (`sink_names`).
    names: Vec<String>,
    sink_names: Option<bool>,
    /// Whether the sink keeps units (then `nonneg` stays empty); asked with `sink_names`.
    sink_units: bool,
    /// The line the parser is on (1-based), for errors and warnings.
    pub line: u64,
    /// File name of the input (e.g. `function3`), which some formats read the CPU from.
    pub file_name: Option<String>,
    samples: u64,
    warnings: u64,
    /// Metadata and extras passed on so far: both are capped so that a file of many blocks or
    /// traces cannot make memory grow without bound (samples are the data; these are detail).
    metas: usize,
    extras: usize,
}

/// Most metadata values and extras kept per input, and most warnings.
pub const MAX_METAS: usize = 10_000;
pub const MAX_EXTRAS: usize = 100;
pub const MAX_WARNINGS: usize = 10_000;

impl<'a> Ctx<'a> {
    pub fn new(sink: &'a mut dyn Sink, file_name: Option<String>) -> Self {
        let keeps = sink.keeps_names_and_units();
        Ctx {
            sink,
            nonneg: Bits::default(),
            names: Vec::new(),
            sink_names: keeps.then_some(true),
            sink_units: keeps,
            line: 0,
            file_name,
            samples: 0,
            warnings: 0,
            metas: 0,
            extras: 0,
        }
    }

    pub fn series(&mut self, spec: SeriesSpec) -> SeriesId {
        self.series_ref(&spec)
    }

    /// [`Ctx::series`] for a borrowed spec: a parser can reuse one spec for every sample and
    /// allocate nothing once its series are known.
    pub fn series_ref(&mut self, spec: &SeriesSpec) -> SeriesId {
        let id = self.sink.series(spec);
        self.declared(id, spec);
        id
    }

    /// Keeps what the checks of a sample need of a series the sink just returned.
    #[inline]
    fn declared(&mut self, id: SeriesId, spec: &SeriesSpec) {
        // Whether the sink keeps names and units is asked once: a profile declares millions.
        let sink_names = match self.sink_names {
            Some(n) => n,
            None => {
                self.sink_units = self.sink.is_nonnegative(id).is_some();
                *self.sink_names.insert(self.sink.metric_name(id).is_some())
            }
        };
        if !self.sink_units && id >= self.nonneg.len() {
            self.add_nonneg(id, spec.unit.is_nonnegative());
        }
        if !sink_names && id >= self.names.len() {
            self.names.resize(id + 1, String::new());
            self.names[id].clone_from(&spec.key.metric);
        }
    }

    #[inline]
    fn add_nonneg(&mut self, id: SeriesId, nonneg: bool) {
        self.nonneg.set(id, nonneg);
    }

    fn nonnegative(&self, id: SeriesId) -> bool {
        if self.sink_units {
            self.sink.is_nonnegative(id).unwrap_or(false)
        } else {
            self.nonneg.get(id)
        }
    }

    fn name(&self, id: SeriesId) -> &str {
        self.sink
            .metric_name(id)
            .or_else(|| self.names.get(id).map(String::as_str))
            .unwrap_or("a value")
    }

    /// Adds a sample after checking it; the error names the current line. Inlined: it is
    /// called for nearly every value, and the error is made out of line.
    #[inline]
    pub fn sample(&mut self, id: SeriesId, value: f64) -> Result<(), ParseError> {
        if !value.is_finite() || (value < 0.0 && self.nonnegative(id)) {
            return Err(self.bad_sample(id, value));
        }
        self.samples += 1;
        self.sink.sample(id, value);
        Ok(())
    }

    /// [`Ctx::sample`] of a value a parser read from digits (an integer below 2^53 over a
    /// power of ten), finite by construction: only its sign is checked.
    #[inline]
    pub fn sample_read(&mut self, id: SeriesId, value: f64) -> Result<(), ParseError> {
        debug_assert!(value.is_finite());
        if value < 0.0 && self.nonnegative(id) {
            return Err(self.bad_sample(id, value));
        }
        self.samples += 1;
        self.sink.sample(id, value);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn bad_sample(&self, id: SeriesId, value: f64) -> ParseError {
        let why = if value.is_finite() {
            "expected a value that is not negative"
        } else {
            "expected a finite number"
        };
        ParseError::bad_value(self.line, self.name(id), value, why)
    }

    /// [`Ctx::series_ref`] and [`Ctx::sample`] in one: a value that passes the checks of every
    /// series (finite, not negative) reaches the sink in one call.
    #[inline]
    pub fn push_ref(&mut self, spec: &SeriesSpec, value: f64) -> Result<SeriesId, ParseError> {
        if value.is_finite() && value >= 0.0 {
            let id = self.sink.series_sample(spec, value);
            self.samples += 1;
            self.declared(id, spec);
            return Ok(id);
        }
        let id = self.series_ref(spec);
        self.sample(id, value)?;
        Ok(id)
    }

    /// [`Ctx::push_ref`] for each cell of a row (see [`Sink::series_sample_row`] for how a
    /// cell's series is made of `spec`, `stem` and the cell). `spec` is left holding the last
    /// cell's series. A row of values that pass the checks of every series, once the sink is
    /// known to keep metric names, reaches the sink in one call.
    pub fn push_row(
        &mut self,
        spec: &mut SeriesSpec,
        stem: usize,
        cells: &[Cell<'_>],
    ) -> Result<(), ParseError> {
        if self.sink_names == Some(true)
            && cells.len() <= MAX_ROW
            // Below the bits of +inf: finite and not negative (-0.0 takes the general path).
            && cells.iter().all(|c| c.value.to_bits() < f64::INFINITY.to_bits())
        {
            let mut ids = [0; MAX_ROW];
            let ids = &mut ids[..cells.len()];
            self.sink.series_sample_row(spec, stem, cells, ids);
            self.samples += cells.len() as u64;
            if !self.sink_units {
                for (c, &id) in cells.iter().zip(ids.iter()) {
                    if id >= self.nonneg.len() {
                        self.add_nonneg(id, c.unit.is_nonnegative());
                    }
                }
            }
            return Ok(());
        }
        for c in cells {
            spec.key.metric.truncate(stem);
            spec.key.metric.push_str(c.suffix);
            if spec.unit != *c.unit {
                spec.unit = c.unit.clone();
            }
            spec.direction = c.direction;
            self.push_ref(spec, c.value)?;
        }
        Ok(())
    }

    /// [`Ctx::push_row`] for each row of a batch (see [`Sink::series_sample_rows`]), all under
    /// `spec`'s scope and label and with the cells' suffixes, units and directions. Every value
    /// must be finite and not negative: an error would name the line the batch is pushed on,
    /// not its row's, so a row with any other value goes to [`Ctx::push_row`] instead. `spec`'s
    /// metric is left unspecified.
    pub fn push_rows(
        &mut self,
        spec: &mut SeriesSpec,
        cells: &[Cell<'_>],
        rows: &RowBatch,
    ) -> Result<(), ParseError> {
        let fine = |v: &f64| v.to_bits() < f64::INFINITY.to_bits();
        if self.sink_names == Some(true) && self.sink_units && rows.values().iter().all(fine) {
            self.sink.series_sample_rows(spec, cells, rows);
            self.samples += rows.values().len() as u64;
            return Ok(());
        }
        rows.try_each_row(spec, cells, |spec, stem, row| {
            self.push_row(spec, stem, row)
        })
    }

    /// Declares the series and adds one sample in one call.
    pub fn push(&mut self, spec: SeriesSpec, value: f64) -> Result<(), ParseError> {
        self.push_ref(&spec, value).map(|_| ())
    }

    pub fn meta(&mut self, key: &str, value: impl AsRef<str>) {
        if self.keeps_metas() {
            self.metas += 1;
            self.sink.meta_str(key, value.as_ref());
        } else {
            self.meta_dropped();
        }
    }

    /// Whether a call of [`Ctx::meta`] now would still be kept: past the cap, a parser can
    /// call [`Ctx::meta_dropped`] instead of building a key and value only to be counted.
    pub fn keeps_metas(&self) -> bool {
        self.metas < MAX_METAS
    }

    /// Whether the cap on metadata was passed and warned of: a value given now changes
    /// nothing, so a parser can skip reading it.
    pub fn metas_done(&self) -> bool {
        self.metas > MAX_METAS
    }

    /// Counts a metadata value past the cap, as [`Ctx::meta`] would (the first one is warned of).
    pub fn meta_dropped(&mut self) {
        self.metas += 1;
        if self.metas == MAX_METAS + 1 {
            self.warn(format!(
                "more than {MAX_METAS} metadata values: the rest are not kept"
            ));
        }
    }

    /// A line that was not understood: reported, never silently dropped.
    pub fn warn(&mut self, message: impl Into<String>) {
        self.warn_at(self.line, message);
    }

    pub fn warn_at(&mut self, line: u64, message: impl Into<String>) {
        self.warnings += 1;
        if self.warnings as usize <= MAX_WARNINGS {
            self.sink.warning(Warning {
                line,
                message: message.into(),
            });
        } else if self.warnings as usize == MAX_WARNINGS + 1 {
            self.sink.warning(Warning {
                line,
                message: format!("more than {MAX_WARNINGS} warnings: the rest are not listed"),
            });
        }
    }

    pub fn extra(&mut self, key: &str, value: serde_json::Value) {
        self.extras += 1;
        if self.extras <= MAX_EXTRAS {
            self.sink.extra(key, value);
        } else if self.extras == MAX_EXTRAS + 1 {
            self.warn(format!(
                "more than {MAX_EXTRAS} detail records (traces, blocks): the rest are not kept"
            ));
        }
    }

    /// Whether a call of [`Ctx::extra`] now would still be kept: a parser can skip building
    /// detail that would only be counted.
    pub fn keeps_extras(&self) -> bool {
        self.extras < MAX_EXTRAS
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    pub fn warnings(&self) -> u64 {
        self.warnings
    }
}
