//! Runs of rows: the series of one table row (`FUNCTION.hit`, `FUNCTION.time`, ...) declared
//! together take consecutive ids and one [`Run`] between them, found again by the row's shape
//! and context. A profile's row then costs one entry and one index slot instead of four each,
//! and a row seen under an earlier context is found by its stem without making its names.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use super::{CompactKey, EMPTY, HAS_ROWS, HAS_SINGLES, NONE, SINGLE, SeriesTable, marked};
use crate::intern::{Interner, same};
use crate::model::{Cell, MAX_ROW, SeriesId, Sink};

/// What the runs of one kind of row share: the metric ids `metric..metric + len` and the
/// kinds of its cells, a byte each (first cell lowest).
struct Shape {
    metric: u32,
    len: u32,
    kinds: u64,
    /// No other shape covers any of its metrics: where this shape has no run, none of its
    /// series is in a row's run.
    exclusive: bool,
    /// The shape added before it that starts at the same metric, or NONE.
    next: u32,
    /// The suffix set its metrics are made of after its stem (NONE when unknown), and the
    /// shape added before it with the same stem.
    suffixes: u32,
    next_of_stem: u32,
}

#[derive(Default)]
pub(super) struct Rows {
    shapes: Vec<Shape>,
    /// By metric id: the last shape added that starts there, or NONE.
    head: Vec<u32>,
    /// By metric id: whether a shape covers it.
    covered: Vec<bool>,
    stems: Interner,
    /// By stem id: the last shape added with that stem, or NONE.
    of_stem: Vec<u32>,
    suffix_sets: Vec<Vec<String>>,
    last_suffixes: usize,
    /// The first series of each run, by context and shape: a direct index for the common
    /// case of the same rows under every context (functions x CPUs). Bounded; runs that do
    /// not fit go to `index`. A context's runs are indexed only once a lookup needs it.
    dense: Vec<Vec<u32>>,
    slots: usize,
    /// (context, shape, first series)
    index: HashTable<(u32, u32, u32)>,
    hasher: foldhash::fast::RandomState,
    /// Per context: whether its runs are indexed, and the greatest shape among them (NONE
    /// for none). A table's rows come in the order of their shapes: a row of a greater
    /// shape is new to the context without a look in an index.
    indexed: Vec<bool>,
    greatest: Vec<u32>,
}

/// The kinds of a row's cells a byte each, if each fits in one.
fn pack(kinds: &[u16]) -> Option<u64> {
    let mut packed = 0;
    for (k, &kind) in kinds.iter().enumerate() {
        if kind > 0xff {
            return None;
        }
        packed |= u64::from(kind) << (8 * k);
    }
    Some(packed)
}

impl Rows {
    pub(super) fn add_context(&mut self) {
        self.dense.push(Vec::new());
        self.indexed.push(false);
        self.greatest.push(NONE);
    }

    /// Whether `context` certainly has no run of `shape`, without its index.
    #[inline]
    fn surely_new(&self, context: u32, shape: u32) -> bool {
        let c = context as usize;
        let g = self.greatest[c];
        !self.indexed[c] && (g == NONE || shape > g)
    }

    /// The metric id and kind of cell `k` of a shape's rows.
    pub(super) fn metric_kind(&self, shape: u32, k: usize) -> (u32, u16) {
        let s = &self.shapes[shape as usize];
        (s.metric + k as u32, (s.kinds >> (8 * k)) as u8 as u16)
    }

    /// The id of a row's stem.
    #[inline]
    pub(super) fn stem(&mut self, stem: &str) -> u32 {
        self.stems.id_in_order(stem)
    }

    /// The id of the list of a row's cells' suffixes.
    #[inline]
    pub(super) fn suffix_set(&mut self, cells: &[Cell<'_>]) -> u32 {
        let matches = |set: &[String]| {
            set.len() == cells.len()
                && set
                    .iter()
                    .zip(cells)
                    .all(|(s, c)| same(s.as_bytes(), c.suffix.as_bytes()))
        };
        if !self
            .suffix_sets
            .get(self.last_suffixes)
            .is_some_and(|s| matches(s))
        {
            self.last_suffixes = match self.suffix_sets.iter().position(|s| matches(s)) {
                Some(i) => i,
                None => {
                    let set = cells.iter().map(|c| c.suffix.to_string()).collect();
                    self.suffix_sets.push(set);
                    self.suffix_sets.len() - 1
                }
            };
        }
        self.last_suffixes as u32
    }

    /// The shape of the row whose metric ids start at `metric` and whose cells have `kinds`.
    #[inline]
    fn find(&self, metric: u32, kinds: u64, len: usize) -> Option<u32> {
        let mut s = self.head.get(metric as usize).copied().unwrap_or(NONE);
        while s != NONE {
            let shape = &self.shapes[s as usize];
            if shape.len as usize == len && shape.kinds == kinds {
                return Some(s);
            }
            s = shape.next;
        }
        None
    }

    /// The shape of the row of this stem and suffixes whose cells have `kinds`.
    #[inline]
    fn find_named(&self, (stem, suffixes): (u32, u32), kinds: u64) -> Option<u32> {
        let mut s = self.of_stem.get(stem as usize).copied().unwrap_or(NONE);
        while s != NONE {
            let shape = &self.shapes[s as usize];
            if shape.suffixes == suffixes && shape.kinds == kinds {
                return Some(s);
            }
            s = shape.next_of_stem;
        }
        None
    }

    #[inline(never)]
    fn add(&mut self, metric: u32, len: usize, kinds: u64, named: Option<(u32, u32)>) -> u32 {
        let end = metric as usize + len;
        if self.head.len() < end {
            self.head.resize(end, NONE);
            self.covered.resize(end, false);
        }
        let id = self.shapes.len() as u32;
        let (stem, suffixes) = named.unwrap_or((NONE, NONE));
        let mut next_of_stem = NONE;
        if stem != NONE {
            if self.of_stem.len() <= stem as usize {
                self.of_stem.resize(stem as usize + 1, NONE);
            }
            next_of_stem = std::mem::replace(&mut self.of_stem[stem as usize], id);
        }
        self.shapes.push(Shape {
            metric,
            len: len as u32,
            kinds,
            exclusive: true,
            next: std::mem::replace(&mut self.head[metric as usize], id),
            suffixes,
            next_of_stem,
        });
        for m in metric as usize..end {
            if self.covered[m] {
                let mut shapes = Vec::new();
                self.covering(m as u32, |s| shapes.push(s));
                for s in shapes {
                    self.shapes[s as usize].exclusive = false;
                }
            }
            self.covered[m] = true;
        }
        id
    }

    /// Calls `f` with every shape that covers metric `m`.
    fn covering(&self, m: u32, mut f: impl FnMut(u32)) {
        for start in m.saturating_sub(MAX_ROW as u32 - 1)..=m {
            let mut s = self.head.get(start as usize).copied().unwrap_or(NONE);
            while s != NONE {
                let shape = &self.shapes[s as usize];
                if shape.len > m - start {
                    f(s);
                }
                s = shape.next;
            }
        }
    }

    /// The first series of the run of `shape` in `context`.
    #[inline]
    fn run_at(&self, context: u32, shape: u32) -> Option<u32> {
        if let Some(&r) = self.dense[context as usize].get(shape as usize)
            && r != NONE
        {
            return Some(r);
        }
        if self.index.is_empty() {
            return None;
        }
        let hash = self.hasher.hash_one((context, shape));
        self.index
            .find(hash, |e| (e.0, e.1) == (context, shape))
            .map(|e| e.2)
    }

    /// Records the run of `shape` in `context`, from series `run` on; `runs` is how many runs
    /// there are.
    fn set_run(&mut self, context: u32, shape: u32, run: u32, runs: usize) {
        let g = &mut self.greatest[context as usize];
        if *g == NONE || shape > *g {
            *g = shape;
        }
        if self.indexed[context as usize] {
            self.insert(context, shape, run, runs);
        }
    }

    fn insert(&mut self, context: u32, shape: u32, run: u32, runs: usize) {
        let v = &mut self.dense[context as usize];
        let s = shape as usize;
        let grow = (s + 1).saturating_sub(v.len());
        if grow == 0 {
            v[s] = run;
        } else if self.slots + grow <= 4 * runs + (1 << 16) {
            self.slots += grow;
            v.resize(s, NONE);
            v.push(run);
        } else {
            let hash = self.hasher.hash_one((context, shape));
            let hasher = &self.hasher;
            self.index
                .insert_unique(hash, (context, shape, run), |e| hasher.hash_one((e.0, e.1)));
        }
    }
}

impl SeriesTable {
    /// Indexes the runs of `context`, if they are not.
    #[inline(never)]
    fn index_runs(&mut self, context: u32) {
        if self.rows.indexed[context as usize] {
            return;
        }
        self.rows.indexed[context as usize] = true;
        let runs = self.runs.len();
        for (i, s) in self.segments.iter().enumerate() {
            if s.context != context {
                continue;
            }
            let end = self.segments.get(i + 1).map_or(runs, |n| n.run as usize);
            for (k, &shape) in self.runs[s.run as usize..end].iter().enumerate() {
                if shape & SINGLE == 0 {
                    let start = s.start + k as u32 * s.len;
                    self.rows.insert(context, shape, start, runs);
                }
            }
        }
    }

    /// The first series of the run of `shape` in `context`.
    #[inline]
    fn run_at(&mut self, context: u32, shape: u32) -> Option<u32> {
        if self.rows.surely_new(context, shape) {
            return None;
        }
        self.index_runs(context);
        self.rows.run_at(context, shape)
    }

    /// [`SeriesTable::row`] of a row found by its stem and suffixes: None when it was not seen.
    #[inline]
    pub(super) fn named_row(
        &mut self,
        context: u32,
        named: Option<(u32, u32)>,
        kinds: &[u16],
        values: &[f64],
    ) -> Option<SeriesId> {
        let shape = self.rows.find_named(named?, pack(kinds)?)?;
        self.row_run(context, shape, values)
    }

    /// Declares the series of a row whose cells have the metric ids `metrics` and `kinds`,
    /// and stores the cells' values: their ids are consecutive from the one returned. None
    /// when the row cannot be one run (its metric ids are not consecutive, or some of its
    /// series exist outside the run of its shape): the caller declares it cell by cell.
    /// `named` is the row's stem and suffixes, for finding its shape by them next time.
    pub(super) fn row(
        &mut self,
        context: u32,
        metrics: &[u32],
        kinds: &[u16],
        values: &[f64],
        named: Option<(u32, u32)>,
    ) -> Option<SeriesId> {
        let first = *metrics.first()?;
        let packed = pack(kinds)?;
        if metrics.len() < 2
            || metrics
                .iter()
                .zip(first..)
                .any(|(&m, expected)| m != expected)
        {
            return None;
        }
        let shape = match self.rows.find(first, packed, metrics.len()) {
            Some(s) => s,
            None => self.rows.add(first, metrics.len(), packed, named),
        };
        self.row_run(context, shape, values)
    }

    /// The run of `shape` in `context`, with the cells' values stored, made if none of its
    /// series exists.
    fn row_run(&mut self, context: u32, shape: u32, values: &[f64]) -> Option<SeriesId> {
        if let Some(start) = self.run_at(context, shape) {
            let start = start as usize;
            for (k, &value) in values.iter().enumerate() {
                self.sample(start + k, value);
            }
            return Some(start);
        }
        let first = self.rows.shapes[shape as usize].metric;
        let metrics = first..first + values.len() as u32;
        let flags = self.context_flags[context as usize];
        let key = |metric| CompactKey { metric, context };
        if flags & HAS_SINGLES != 0 && metrics.clone().any(|m| self.find_single(key(m)).is_some()) {
            return None;
        }
        if !self.rows.shapes[shape as usize].exclusive
            && metrics.clone().any(|m| self.find_in_rows(key(m)).is_some())
        {
            return None;
        }
        let start = self.first.len();
        self.push_run(context, values.len(), shape);
        self.rows
            .set_run(context, shape, start as u32, self.runs.len());
        self.context_flags[context as usize] |= HAS_ROWS;
        for &value in values {
            let bits = value.to_bits();
            if marked(bits) {
                self.first.push(EMPTY);
                self.sample(self.first.len() - 1, value);
            } else {
                self.first.push(bits);
                self.samples += 1;
            }
        }
        Some(start)
    }

    /// The series of `key` in a row's run.
    pub(super) fn find_in_rows(&mut self, key: CompactKey) -> Option<SeriesId> {
        if self.context_flags[key.context as usize] & HAS_ROWS == 0 {
            return None;
        }
        self.index_runs(key.context);
        let mut found = None;
        self.rows.covering(key.metric, |s| {
            if found.is_none()
                && let Some(start) = self.rows.run_at(key.context, s)
            {
                let shape = &self.rows.shapes[s as usize];
                found = Some(start as usize + (key.metric - shape.metric) as usize);
            }
        });
        found
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Cell, Direction, SeriesKey, SeriesSpec, Sink, Unit};
    use crate::{Dataset, SeriesTable};

    /// Rows and single series over the same keys, in every order: the table holds what a
    /// `Dataset` holds (the same series, ids and samples).
    #[test]
    fn rows_and_single_series_share_keys() {
        let mut table = SeriesTable::new();
        let mut ds = Dataset::new();
        let suffixes = ["hit", "time", "avg", "s2"];
        let units = [
            Unit::Count,
            Unit::Seconds,
            Unit::Seconds,
            Unit::SecondsSquared,
        ];
        let other = [Unit::Bytes, Unit::Seconds, Unit::Percent, Unit::Count];
        let mut x = 7u64;
        for step in 0..4000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = (x >> 33) as usize;
            let f = r % 23;
            let scope = format!("cpu{}", (r >> 5) % 4);
            let value = step as f64 * 0.5;
            let key = SeriesKey::new(format!("f{f}.")).scope(scope);
            if r >> 9 & 7 == 0 {
                // A single series, possibly one of a row's.
                let mut key = key;
                key.metric.push_str(suffixes[(r >> 12) % 4]);
                let spec = SeriesSpec::new(key, units[(r >> 14) % 4].clone(), Direction::Neutral);
                let a = table.series_sample(&spec, value);
                let b = ds.series_sample(&spec, value);
                assert_eq!(a, b, "{step}");
                continue;
            }
            let n = [1, 2, 3, 4, 4, 4][(r >> 12) % 6];
            let from = usize::from(r >> 15 & 15 == 0);
            let units = if r >> 19 & 15 == 0 { &other } else { &units };
            let cells: Vec<Cell<'_>> = (from..n)
                .map(|k| Cell {
                    suffix: suffixes[k],
                    unit: &units[k],
                    direction: Direction::LowerIsBetter,
                    value: value + k as f64,
                })
                .collect();
            let stem = key.metric.len();
            let mut spec = SeriesSpec::count(key);
            let mut a = vec![0; cells.len()];
            let mut b = vec![0; cells.len()];
            table.series_sample_row(&mut spec.clone(), stem, &cells, &mut a);
            ds.series_sample_row(&mut spec, stem, &cells, &mut b);
            assert_eq!(a, b, "{step}");
        }
        // Some rows became runs; the rest were declared cell by cell.
        assert!(table.runs.len() + 50 < table.len());
        let got = table.to_dataset();
        assert_eq!(got.series, ds.series);
        assert_eq!(table.len(), ds.series.len());
        for id in [0, 1, ds.series.len() / 2, ds.series.len() - 1] {
            assert_eq!(
                table.metric_name(id),
                Some(ds.series[id].spec.key.metric.as_str())
            );
        }
    }

    /// A sink that keeps units answers for the checks of later samples.
    #[test]
    fn negative_samples_checked_by_the_kept_unit() {
        let mut table = SeriesTable::new();
        let mut ctx = crate::Ctx::new(&mut table, None);
        let seconds = ctx.series(SeriesSpec::duration(SeriesKey::new("t")));
        let percent = ctx.series(SeriesSpec::new(
            SeriesKey::new("p"),
            Unit::Percent,
            Direction::Neutral,
        ));
        let e = ctx.sample(seconds, -1.0).unwrap_err();
        assert!(e.to_string().contains("not negative"), "{e}");
        assert!(ctx.sample(percent, -1.0).is_ok());
        drop(ctx);
        assert_eq!(table.is_nonnegative(seconds), Some(true));
        assert_eq!(table.is_nonnegative(percent), Some(false));
    }

    /// Batches of rows declare what their rows one at a time would.
    #[test]
    fn batches_of_rows_as_rows_one_at_a_time() {
        let units = [Unit::Count, Unit::Seconds, Unit::Seconds];
        let cells: Vec<Cell<'_>> = ["hit", "time", "avg"]
            .iter()
            .zip(&units)
            .map(|(&suffix, unit)| Cell {
                suffix,
                unit,
                direction: Direction::LowerIsBetter,
                value: 0.0,
            })
            .collect();
        let mut table = SeriesTable::new();
        let mut ds = Dataset::new();
        // A series of a later row declared alone first.
        let single = SeriesSpec::count(SeriesKey::new("f3.time").scope("cpu1"));
        table.series_sample(&single, 9.0);
        ds.series_sample(&single, 9.0);
        for round in 0..3 {
            for scope in ["cpu0", "cpu1"] {
                for n in [1, 3, 2] {
                    let mut batch = crate::model::RowBatch::default();
                    for f in 0..6 {
                        let v = (round * 100 + f) as f64;
                        batch.push(&[&format!("f{f}"), "."], &[v, v + 0.5, v + 0.25][..n]);
                    }
                    let mut spec = SeriesSpec::count(SeriesKey::new("").scope(scope));
                    table.series_sample_rows(&mut spec.clone(), &cells[..n], &batch);
                    ds.series_sample_rows(&mut spec, &cells[..n], &batch);
                }
            }
        }
        assert_eq!(table.to_dataset().series, ds.series);
    }
}
