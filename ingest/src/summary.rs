//! A compact in-memory [`Sink`] for large inputs: series keys interned into a few integers,
//! samples kept in flat arrays. A 64-CPU trace_stat profile declares 4.9 M series; as a
//! [`Dataset`](crate::Dataset) that is about 400 bytes per series, here about 12: the series
//! of a table row are declared as one run of consecutive ids (one entry for the row), and a
//! series itself holds only its sample.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::intern::Interner;
use crate::model::{
    Cell, Direction, FastMap, MAX_ROW, RowBatch, SeriesId, SeriesKey, SeriesSpec, Sink, Unit,
    Warning,
};

mod json;
mod more;
mod rows;
mod spill;

pub use json::AllSeries;

/// A series key as ids: the metric and its context, [`Context`]. As in a
/// [`Dataset`](crate::Dataset), unit and direction are not part of the identity: the first
/// declaration of a key decides them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct CompactKey {
    metric: u32,
    context: u32,
}

/// Scope, label, statistic and params as ids. `label`/`statistic` 0 is `None`, otherwise
/// id + 1. Series share a few contexts (one per CPU), so a key names its context by one id.
type Context = [u32; 4];

const NONE: u32 = u32::MAX;

/// The high half of a NaN that `first` holds in place of a sample: with a low half of
/// `u32::MAX` the series has no sample yet, otherwise its samples are `more[low half]`. A
/// sample with these bits is never stored in `first` itself.
const MARK: u64 = 0x7ff4_abcd;
const EMPTY: u64 = MARK << 32 | u32::MAX as u64;

fn marked(bits: u64) -> bool {
    bits >> 32 == MARK
}

/// Series declared together: ids `start..start + len` of one context. A series declared
/// alone is a run of one whose `shape` is its index in `singles` with [`SINGLE`] set; the
/// run of a row names its [`rows::Shape`], which holds its metrics and kinds. Only the shape
/// is stored (`runs`); the rest comes from the run's [`Segment`].
#[derive(Clone, Copy)]
struct Run {
    start: u32,
    context: u32,
    shape: u32,
}

/// Consecutive runs of one context and one length (a table of rows under one CPU): runs
/// `run..` hold the series from `start` on, `len` each, up to the next segment.
struct Segment {
    start: u32,
    run: u32,
    context: u32,
    len: u32,
}

/// The metric id and kind of a series declared alone.
#[derive(Clone, Copy)]
struct Single {
    metric: u32,
    kind: u16,
}

const SINGLE: u32 = 1 << 31;

/// Bits of `context_flags`: the context holds series declared alone, runs of rows.
const HAS_SINGLES: u8 = 1;
const HAS_ROWS: u8 = 2;

/// Series as interned keys and their samples: what `quiescent parse` holds per file.
pub struct SeriesTable {
    metrics: Interner,
    scopes: Interner,
    labels: Interner,
    statistics: Interner,
    params: Vec<BTreeMap<String, String>>,
    params_ids: FastMap<BTreeMap<String, String>, u32>,
    units: Vec<Unit>,
    /// Context ids, and the context of each id.
    contexts: FastMap<Context, u32>,
    context_keys: Vec<Context>,
    context_flags: Vec<u8>,
    last_context: Option<(Context, u32)>,
    /// Every series, in runs ordered by id: the shape of each run, and the segments of runs.
    runs: Vec<u32>,
    segments: Vec<Segment>,
    singles: Vec<Single>,
    /// Series declared alone, by context and metric id: a direct index for the common shape
    /// of many metrics under few contexts. Bounded; series that do not fit go to `index`.
    dense: Vec<Vec<u32>>,
    dense_slots: usize,
    index: HashTable<(CompactKey, u32)>,
    /// The runs of rows: their shapes and where they are.
    rows: rows::Rows,
    /// (index into `units`, direction) pairs.
    kind_list: Vec<(u16, u8)>,
    /// The kind of each unit without a name of its own and direction, `u16::MAX` until seen:
    /// found without a search.
    fixed_kinds: [u16; 15],
    hasher: foldhash::fast::RandomState,
    /// Per series: the bits of its only sample, or a [`MARK`]ed NaN (no sample yet, or
    /// where in `more` its samples are). Most series of a large input have one sample:
    /// this keeps them at 8 bytes.
    first: Vec<u64>,
    /// The samples of the series that have more than one.
    more: more::More,
    /// Where a row's metric names are made when they are needed.
    name: String,
    samples: u64,
    pub meta: BTreeMap<String, String>,
    pub warnings: Vec<Warning>,
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl Default for SeriesTable {
    fn default() -> Self {
        SeriesTable {
            metrics: Interner::default(),
            scopes: Interner::default(),
            labels: Interner::default(),
            statistics: Interner::default(),
            params: vec![BTreeMap::new()],
            params_ids: FastMap::default(),
            units: Vec::new(),
            contexts: FastMap::default(),
            context_keys: Vec::new(),
            context_flags: Vec::new(),
            last_context: None,
            runs: Vec::new(),
            segments: Vec::new(),
            singles: Vec::new(),
            dense: Vec::new(),
            dense_slots: 0,
            index: HashTable::new(),
            rows: rows::Rows::default(),
            kind_list: Vec::new(),
            fixed_kinds: [u16::MAX; 15],
            hasher: foldhash::fast::RandomState::default(),
            first: Vec::new(),
            more: more::More::default(),
            name: String::new(),
            samples: 0,
            meta: BTreeMap::new(),
            warnings: Vec::new(),
            extra: BTreeMap::new(),
        }
    }
}

/// One series of a [`SeriesTable`], borrowed.
pub struct SeriesView<'a> {
    pub metric: &'a str,
    pub scope: &'a str,
    pub label: Option<&'a str>,
    pub statistic: Option<&'a str>,
    pub params: &'a BTreeMap<String, String>,
    pub unit: &'a Unit,
    pub direction: Direction,
    first: Option<f64>,
    more: spill::Stored<'a>,
}

impl SeriesView<'_> {
    /// The samples in the order they arrived. Only for a table whose samples are all in
    /// memory: one built by [`SeriesTable::with_sample_thread`] may have written some out,
    /// and is read with [`SeriesView::each_chunk`].
    pub fn samples(&self) -> impl Iterator<Item = f64> + '_ {
        let more = self
            .more
            .in_memory()
            .expect("samples written out to a file are read with each_chunk");
        self.first.into_iter().chain(more.iter().copied())
    }

    /// Calls `f` with the samples in the order they arrived, a chunk at a time; an error is
    /// one reading those written out.
    pub fn each_chunk(&self, f: &mut dyn FnMut(&[f64])) -> std::io::Result<()> {
        if let Some(x) = self.first {
            f(&[x]);
        }
        self.more.each_chunk(f)
    }

    /// Pushes onto `out` the samples at `places` (ascending, each below [`SeriesView::len`]),
    /// in the order they arrived: a sample of a series without reading it all.
    pub fn values_at(&self, places: &[usize], out: &mut Vec<f64>) -> std::io::Result<()> {
        match self.first {
            // A series' only sample: every place below its length is 0.
            Some(x) => {
                out.extend(places.iter().map(|_| x));
                Ok(())
            }
            None => self.more.values_at(places, out),
        }
    }

    /// Replaces the contents of `out` with the samples in the order they arrived: one copy of
    /// each chunk where [`SeriesView::samples`] goes value by value.
    pub fn copy_samples(&self, out: &mut Vec<f64>) -> std::io::Result<()> {
        out.clear();
        out.reserve(self.len());
        self.each_chunk(&mut |xs| out.extend_from_slice(xs))
    }

    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.more.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl SeriesTable {
    pub fn new() -> Self {
        Self::default()
    }

    /// A table whose series' samples are appended on a thread of their own, started once a
    /// large input has given it enough to do, and written out to a temporary file as they
    /// pass a few MiB, so that memory stays flat. Its samples can be read only after
    /// [`SeriesTable::finish`], and with [`SeriesView::each_chunk`].
    pub fn with_sample_thread() -> Self {
        let mut t = Self::default();
        t.more.threaded();
        t
    }

    /// Waits for the samples appended elsewhere ([`SeriesTable::with_sample_thread`]); nothing
    /// to do for any other table.
    pub fn finish(&mut self) {
        self.more.finish();
    }

    pub fn len(&self) -> usize {
        self.first.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }

    pub fn sample_count(&self) -> u64 {
        self.samples
    }

    /// [`Sink::sample`] where the short way does not apply: a series' first or second
    /// sample, a full batch to hand over, or a table that appends its vectors in place.
    #[inline(never)]
    fn sample_elsewise(&mut self, id: SeriesId, value: f64) {
        self.samples += 1;
        let slot = &mut self.first[id];
        let bits = *slot;
        let n = if !marked(bits) {
            self.more.make(&[f64::from_bits(bits), value])
        } else if bits != EMPTY {
            self.more.push(bits as u32, value);
            return;
        } else if marked(value.to_bits()) {
            self.more.make(&[value])
        } else {
            *slot = value.to_bits();
            return;
        };
        self.first[id] = MARK << 32 | u64::from(n);
    }

    /// The run that holds series `id`.
    fn run_of(&self, id: SeriesId) -> Run {
        let s = &self.segments[self.segments.partition_point(|s| s.start as usize <= id) - 1];
        let k = (id as u32 - s.start) / s.len;
        Run {
            start: s.start + k * s.len,
            context: s.context,
            shape: self.runs[(s.run + k) as usize],
        }
    }

    /// Appends a run of `len` series from the next id on (the caller adds its series).
    fn push_run(&mut self, context: u32, len: usize, shape: u32) {
        let len = len as u32;
        match self.segments.last() {
            Some(s) if s.context == context && s.len == len => {}
            _ => self.segments.push(Segment {
                start: self.first.len() as u32,
                run: self.runs.len() as u32,
                context,
                len,
            }),
        }
        self.runs.push(shape);
    }

    pub fn get(&self, id: SeriesId) -> SeriesView<'_> {
        let r = self.run_of(id);
        self.view(&r, id)
    }

    /// The metric id and kind of series `k` of run `r`.
    fn metric_kind(&self, r: &Run, k: usize) -> (u32, u16) {
        if r.shape & SINGLE != 0 {
            let s = self.singles[(r.shape & !SINGLE) as usize];
            (s.metric, s.kind)
        } else {
            self.rows.metric_kind(r.shape, k)
        }
    }

    /// Series `id` of run `r`.
    fn view(&self, r: &Run, id: SeriesId) -> SeriesView<'_> {
        let k = id - r.start as usize;
        let [scope, label, statistic, params] = self.context_keys[r.context as usize];
        let (metric, kind) = self.metric_kind(r, k);
        let (unit, direction) = self.kind_list[kind as usize];
        let bits = self.first[id];
        fn opt(i: &Interner, v: u32) -> Option<&str> {
            v.checked_sub(1).map(|v| i.get(v))
        }
        SeriesView {
            metric: self.metrics.get(metric),
            scope: self.scopes.get(scope),
            label: opt(&self.labels, label),
            statistic: opt(&self.statistics, statistic),
            params: &self.params[params as usize],
            unit: &self.units[unit as usize],
            direction: match direction {
                0 => Direction::LowerIsBetter,
                1 => Direction::HigherIsBetter,
                _ => Direction::Neutral,
            },
            first: (!marked(bits)).then(|| f64::from_bits(bits)),
            more: match bits {
                EMPTY => spill::Stored::default(),
                _ if marked(bits) => self.more.get(bits as u32),
                _ => spill::Stored::default(),
            },
        }
    }

    /// The series in the order they were declared.
    pub fn iter(&self) -> impl Iterator<Item = SeriesView<'_>> + '_ {
        self.segments.iter().enumerate().flat_map(move |(i, s)| {
            let end = self
                .segments
                .get(i + 1)
                .map_or(self.runs.len(), |n| n.run as usize);
            self.runs[s.run as usize..end]
                .iter()
                .zip((s.start..).step_by(s.len as usize))
                .flat_map(move |(&shape, start)| {
                    let r = Run {
                        start,
                        context: s.context,
                        shape,
                    };
                    (start as usize..(start + s.len) as usize).map(move |id| self.view(&r, id))
                })
        })
    }

    /// The context id of a key: its scope, label, statistic and params.
    #[inline]
    fn context_of(&mut self, key: &SeriesKey) -> u32 {
        let params = if key.params.is_empty() {
            0
        } else {
            match self.params_ids.get(&key.params) {
                Some(&id) => id,
                None => {
                    let id = self.params.len() as u32;
                    self.params.push(key.params.clone());
                    self.params_ids.insert(key.params.clone(), id);
                    id
                }
            }
        };
        let context = [
            self.scopes.id(&key.scope),
            key.label.as_deref().map_or(0, |l| self.labels.id(l) + 1),
            key.statistic
                .as_deref()
                .map_or(0, |s| self.statistics.id(s) + 1),
            params,
        ];
        self.context_id(context)
    }

    /// The id of a context, given a new one (and a row of the direct indexes) if it is new.
    fn context_id(&mut self, ck: Context) -> u32 {
        match self.last_context {
            Some((k, c)) if k == ck => c,
            _ => {
                let next = self.context_keys.len() as u32;
                let c = *self.contexts.entry(ck).or_insert(next);
                if c == next {
                    self.context_keys.push(ck);
                    self.context_flags.push(0);
                    // Contexts mostly hold the metrics of the one before (functions x CPUs):
                    // room for as many spares growing the row one copy at a time.
                    let room = self.dense.last().map_or(0, Vec::len);
                    self.dense.push(Vec::with_capacity(room));
                    self.rows.add_context();
                }
                self.last_context = Some((ck, c));
                c
            }
        }
    }

    /// Where a key lives in the direct index: (context, metric), or None when giving it a
    /// slot would make the index much larger than the series it holds.
    fn dense_slot(&self, key: CompactKey) -> Option<(usize, usize)> {
        let c = key.context;
        let m = key.metric as usize;
        let have = self.dense[c as usize].len();
        let grow = (m + 1).saturating_sub(have);
        (grow == 0 || self.dense_slots + grow <= 4 * self.first.len() + (1 << 16))
            .then_some((c as usize, m))
    }

    #[inline]
    fn kind(&mut self, unit: &Unit, direction: Direction) -> u16 {
        let fixed = match unit {
            Unit::Seconds => Some(0),
            Unit::SecondsSquared => Some(1),
            Unit::Count => Some(2),
            Unit::Bytes => Some(3),
            Unit::Percent => Some(4),
            Unit::Other(_) => None,
        }
        .map(|u| {
            u * 3
                + match direction {
                    Direction::LowerIsBetter => 0,
                    Direction::HigherIsBetter => 1,
                    Direction::Neutral => 2,
                }
        });
        if let Some(f) = fixed
            && self.fixed_kinds[f] != u16::MAX
        {
            return self.fixed_kinds[f];
        }
        let kind = self.find_kind(unit, direction);
        if let Some(f) = fixed {
            self.fixed_kinds[f] = kind;
        }
        kind
    }

    #[inline(never)]
    fn find_kind(&mut self, unit: &Unit, direction: Direction) -> u16 {
        let unit = match self.units.iter().position(|u| u == unit) {
            Some(i) => i as u16,
            None => {
                self.units.push(unit.clone());
                (self.units.len() - 1) as u16
            }
        };
        let direction = match direction {
            Direction::LowerIsBetter => 0,
            Direction::HigherIsBetter => 1,
            Direction::Neutral => 2,
        };
        let kind = (unit, direction);
        match self.kind_list.iter().position(|&k| k == kind) {
            Some(i) => i as u16,
            None => {
                self.kind_list.push(kind);
                (self.kind_list.len() - 1) as u16
            }
        }
    }

    /// Converts into a [`Dataset`](crate::Dataset) (for inputs small enough to hold as one).
    pub fn to_dataset(&self) -> crate::Dataset {
        let mut ds = crate::Dataset::new();
        for s in self.iter() {
            let mut key = SeriesKey::new(s.metric).scope(s.scope);
            key.label = s.label.map(str::to_string);
            key.statistic = s.statistic.map(str::to_string);
            key.params = s.params.clone();
            let id = ds.series(&SeriesSpec::new(key, s.unit.clone(), s.direction));
            for v in s.samples() {
                ds.sample(id, v);
            }
        }
        ds.meta = self.meta.clone();
        ds.warnings = self.warnings.clone();
        ds.extra = self.extra.clone();
        ds
    }
}

impl SeriesTable {
    /// The id of a series, and whether it was added now.
    #[inline]
    fn declare(&mut self, spec: &SeriesSpec) -> (SeriesId, bool) {
        let context = self.context_of(&spec.key);
        let key = CompactKey {
            metric: self.metrics.id(&spec.key.metric),
            context,
        };
        let kind = self.kind(&spec.unit, spec.direction);
        self.declare_key(key, kind)
    }

    /// A sample of a series `declare` just returned: a new series' only sample goes where
    /// `declare` put the no-sample mark.
    #[inline(always)]
    fn store(&mut self, id: SeriesId, new: bool, value: f64) {
        if new && !marked(value.to_bits()) {
            self.samples += 1;
            self.first[id] = value.to_bits();
        } else {
            self.sample(id, value);
        }
    }

    /// The series declared alone with this key.
    #[inline(always)]
    fn find_single(&self, key: CompactKey) -> Option<u32> {
        if let Some(&id) = self.dense[key.context as usize].get(key.metric as usize)
            && id != NONE
        {
            return Some(id);
        }
        if self.index.is_empty() {
            return None;
        }
        let hash = self.hasher.hash_one(key);
        self.index.find(hash, |e| e.0 == key).map(|e| e.1)
    }

    /// [`SeriesTable::declare`] of a key already made of ids: the series declared alone or in
    /// a row's run, or a new one declared alone.
    #[inline(always)]
    fn declare_key(&mut self, key: CompactKey, kind: u16) -> (SeriesId, bool) {
        if let Some(id) = self.find_single(key) {
            return (id as usize, false);
        }
        if let Some(id) = self.find_in_rows(key) {
            return (id, false);
        }
        let id = self.first.len() as u32;
        let c = key.context as usize;
        self.push_run(key.context, 1, SINGLE | self.singles.len() as u32);
        self.singles.push(Single {
            metric: key.metric,
            kind,
        });
        self.first.push(EMPTY);
        self.context_flags[c] |= HAS_SINGLES;
        match self.dense_slot(key) {
            Some((c, m)) => {
                let v = &mut self.dense[c];
                if v.len() == m {
                    self.dense_slots += 1;
                    v.push(id);
                } else {
                    if v.len() < m {
                        self.dense_slots += m + 1 - v.len();
                        v.resize(m + 1, NONE);
                    }
                    v[m] = id;
                }
            }
            None => {
                let hash = self.hasher.hash_one(key);
                let hasher = &self.hasher;
                self.index
                    .insert_unique(hash, (key, id), |e| hasher.hash_one(e.0));
            }
        }
        (id as usize, true)
    }
}

/// What the rows of [`SeriesTable::row_values`] share: their context and cells (suffixes,
/// units and directions), the cells' kinds and the id of their suffixes (None for one cell).
struct RowOf<'a, 'c> {
    context: u32,
    cells: &'a [Cell<'c>],
    kinds: &'a [u16],
    suffixes: Option<u32>,
}

impl SeriesTable {
    /// What the cells of a row of at most [`MAX_ROW`] under `key`'s context share, whatever
    /// their values: the context, each cell's kind (written into `kinds`) and their suffixes.
    fn row_of<'a, 'c>(
        &mut self,
        key: &SeriesKey,
        cells: &'a [Cell<'c>],
        kinds: &'a mut [u16; MAX_ROW],
    ) -> RowOf<'a, 'c> {
        let context = self.context_of(key);
        for (k, c) in kinds.iter_mut().zip(cells) {
            *k = self.kind(c.unit, c.direction);
        }
        RowOf {
            context,
            cells,
            kinds: &kinds[..cells.len()],
            suffixes: (cells.len() >= 2).then(|| self.rows.suffix_set(cells)),
        }
    }

    /// Declares the series of a row of at most [`MAX_ROW`] cells whose metrics are `stem`
    /// followed by each cell's suffix, and stores `values`; their ids go to `ids`.
    fn row_values(
        &mut self,
        row: &RowOf<'_, '_>,
        stem: &str,
        values: &[f64],
        ids: &mut [SeriesId],
    ) {
        let (context, kinds) = (row.context, row.kinds);
        // A row seen before (under another context) is found by its stem and suffixes, with
        // no metric names to make.
        let named = row
            .suffixes
            .map(|suffixes| (self.rows.stem(stem), suffixes));
        if let Some(start) = self.named_row(context, named, kinds, values) {
            for (k, out) in ids.iter_mut().enumerate() {
                *out = start + k;
            }
            return;
        }
        let mut metrics = [0; MAX_ROW];
        for (k, c) in row.cells.iter().enumerate() {
            self.name.clear();
            self.name.push_str(stem);
            self.name.push_str(c.suffix);
            metrics[k] = self.metrics.id(&self.name);
        }
        let n = row.cells.len();
        if let Some(start) = self.row(context, &metrics[..n], kinds, values, named) {
            for (k, out) in ids.iter_mut().enumerate() {
                *out = start + k;
            }
            return;
        }
        for (k, (&value, out)) in values.iter().zip(ids).enumerate() {
            let key = CompactKey {
                metric: metrics[k],
                context,
            };
            let (id, new) = self.declare_key(key, kinds[k]);
            self.store(id, new, value);
            *out = id;
        }
    }
}

impl Sink for SeriesTable {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        self.declare(spec).0
    }

    fn series_sample(&mut self, spec: &SeriesSpec, value: f64) -> SeriesId {
        let (id, new) = self.declare(spec);
        self.store(id, new, value);
        id
    }

    fn series_sample_row(
        &mut self,
        spec: &mut SeriesSpec,
        stem: usize,
        cells: &[Cell<'_>],
        ids: &mut [SeriesId],
    ) {
        let n = cells.len();
        if n > MAX_ROW {
            return crate::model::sample_cells(self, spec, stem, cells, ids);
        }
        // The cells share their context: it is found once.
        let mut kinds = [0; MAX_ROW];
        let row = self.row_of(&spec.key, cells, &mut kinds);
        let mut values = [0.0; MAX_ROW];
        for (v, c) in values.iter_mut().zip(cells) {
            *v = c.value;
        }
        self.row_values(&row, &spec.key.metric[..stem], &values[..n], ids);
    }

    fn series_sample_rows(&mut self, spec: &mut SeriesSpec, cells: &[Cell<'_>], rows: &RowBatch) {
        let n = cells.len();
        if n > MAX_ROW || n == 0 {
            let mut ids = vec![0; n];
            let _ = rows.try_each_row(spec, cells, |spec, stem, row| {
                self.series_sample_row(spec, stem, row, &mut ids);
                Ok::<(), std::convert::Infallible>(())
            });
            return;
        }
        // What the rows share (context, kinds, suffixes) is found once for the batch.
        let mut kinds = [0; MAX_ROW];
        let row = self.row_of(&spec.key, cells, &mut kinds);
        let mut ids = [0; MAX_ROW];
        for (stem, values) in rows.rows(n) {
            self.row_values(&row, stem, values, &mut ids[..n]);
        }
    }

    fn sample(&mut self, id: SeriesId, value: f64) {
        // Nearly every sample of a large input: a series past its first sample, its vector
        // appended elsewhere through a batch with room. Kept apart from the rest so that the
        // call, made for every value through `dyn Sink`, saves and restores few registers.
        if let Some(&bits) = self.first.get(id)
            && marked(bits)
            && bits != EMPTY
            && self.more.pass_with_room(bits as u32, value)
        {
            self.samples += 1;
            return;
        }
        self.sample_elsewise(id, value);
    }

    fn meta(&mut self, key: &str, value: String) {
        self.meta.insert(key.to_string(), value);
    }

    fn meta_str(&mut self, key: &str, value: &str) {
        crate::model::set_meta(&mut self.meta, key, value);
    }

    fn warning(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    fn extra(&mut self, key: &str, value: serde_json::Value) {
        self.extra.insert(key.to_string(), value);
    }

    fn keeps_names_and_units(&self) -> bool {
        true
    }

    fn is_nonnegative(&self, id: SeriesId) -> Option<bool> {
        if id >= self.first.len() {
            return None;
        }
        let r = self.run_of(id);
        let (_, kind) = self.metric_kind(&r, id - r.start as usize);
        let (unit, _) = self.kind_list[kind as usize];
        Some(self.units[unit as usize].is_nonnegative())
    }

    fn metric_name(&self, id: SeriesId) -> Option<&str> {
        if id >= self.first.len() {
            return None;
        }
        let r = self.run_of(id);
        let (metric, _) = self.metric_kind(&r, id - r.start as usize);
        Some(self.metrics.get(metric))
    }
}

#[cfg(test)]
mod tests;
