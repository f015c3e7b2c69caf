//! Two sets of series compared: parsed inputs (`quiescent compare A.txt B.txt`, the blocks of
//! an email) or the stored runs of two builds. Each side is collected into a [`Parsed`], whose
//! series names are interned: a 64-CPU profile of 19,043 functions declares 1.2 M series per
//! metric, and a key of strings per series cost gigabytes (comparing two stored profiles that
//! way took 86 s and 7 GB). Series reach the statistics as ids; strings are looked up again
//! only for the rows printed.

use std::sync::Arc;

use compare::{Direction, Settings};
use ingest::intern::Interner;
use ingest::model::{FastMap, SeriesId, SeriesSpec, Sink, Unit, Warning};
use store::BuildInfo;

use super::{CpuValues, Report, Row, Side, Summary, finish_rows, glob_match, is_cpu_scope};

/// An absent name (no parameters, no statistic, no label).
const NONE: u32 = u32::MAX;
/// Marks the key of a pooled per-CPU row (`cpus`): the rest is its group.
const POOLED: u32 = 1 << 31;

/// The name `id`, None for NONE.
fn opt(names: &Interner, id: u32) -> Option<&str> {
    (id != NONE).then(|| names.get(id))
}

/// What names a row apart from its scope: metric, parameters key, statistic, label,
/// benchmark (a stored run's; files have none).
type Group = [u32; 5];

/// A group's series by scope: a short list searched in order (a profile's 64 CPUs), which
/// costs a third of a hash map's memory, turned into a map past `SCOPES_IN_LIST` scopes.
enum Scopes {
    List(Vec<(u32, u32)>),
    Map(FastMap<u32, u32>),
}

const SCOPES_IN_LIST: usize = 128;

impl Scopes {
    fn get(&self, scope: u32) -> Option<u32> {
        match self {
            Scopes::List(l) => l.iter().find(|&&(s, _)| s == scope).map(|&(_, id)| id),
            Scopes::Map(m) => m.get(&scope).copied(),
        }
    }

    fn insert(&mut self, scope: u32, id: u32) {
        match self {
            Scopes::List(l) if l.len() < SCOPES_IN_LIST => l.push((scope, id)),
            Scopes::List(l) => {
                let mut m: FastMap<u32, u32> = l.drain(..).collect();
                m.insert(scope, id);
                *self = Scopes::Map(m);
            }
            Scopes::Map(m) => {
                m.insert(scope, id);
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Entry {
    group: u32,
    scope: u32,
    /// Index in `kinds`: the series' unit and direction.
    kind: u32,
}

/// One parsed input, series interned, samples in arrival order. A [`Sink`]: parsers write
/// into it directly. Series whose metric does not match the glob are dropped as they are
/// declared (they all share id 0, which keeps no samples).
pub struct Parsed {
    glob: Option<String>,
    names: Interner,
    /// Per name id, once the name was seen as a metric: whether the glob keeps it.
    keeps: Vec<Option<bool>>,
    groups: Vec<Group>,
    group_index: FastMap<Group, u32>,
    /// By group: its series.
    scopes: Vec<Scopes>,
    kinds: Vec<(Unit, Direction)>,
    /// By series id; entry 0 stands for every dropped series.
    series: Vec<Entry>,
    /// The scope of the last series declared: rows of one table share it.
    last_scope: u32,
    /// Samples in arrival order: the series of each, and its value. While every sample
    /// belongs to one series (`only`), no ids are kept: a file of a million numbers is one
    /// series.
    sample_ids: Vec<u32>,
    only: Option<u32>,
    values: Vec<f64>,
}

impl Parsed {
    /// An empty set keeping the metrics that match `glob` (`*` and `?`), or all.
    pub fn new(glob: Option<&str>) -> Self {
        Parsed {
            glob: glob.map(str::to_string),
            names: Interner::default(),
            keeps: Vec::new(),
            groups: Vec::new(),
            group_index: FastMap::default(),
            scopes: Vec::new(),
            kinds: Vec::new(),
            series: vec![Entry {
                group: NONE,
                scope: NONE,
                kind: NONE,
            }],
            last_scope: NONE,
            sample_ids: Vec::new(),
            only: None,
            values: Vec::new(),
        }
    }

    /// Adds a stored block's series and samples ([`store::Store::visit_series_of_runs`]):
    /// series of the same benchmark, parameters, metric, scope, statistic and label pool
    /// their samples, in the order they are added.
    pub fn stored(&mut self, b: &store::StoredBlock<'_>) {
        let metric = self.names.id(b.metric);
        if !self.keeps(metric) {
            return;
        }
        let params = match b.params_key {
            "" => NONE,
            k => self.names.id(k),
        };
        let statistic = b.statistic.map_or(NONE, |s| self.names.id(s));
        let label = b.label.map_or(NONE, |s| self.names.id(s));
        let benchmark = self.names.id(b.benchmark);
        let group = self.group([metric, params, statistic, label, benchmark]);
        let unit = Unit::from(b.unit.to_string());
        for s in &b.series {
            let id = self.declare(group, s.scope, &unit, b.direction);
            for &v in s.samples {
                self.sample(id as SeriesId, v);
            }
        }
    }

    /// How many kinds of series (metric, parameters, statistic, block label) this input holds,
    /// and the first `max` of them in [`super::held::words`]. Said when two inputs share none.
    pub fn metric_names(&self, max: usize) -> (usize, Vec<String>) {
        let name = |id: u32| (id != NONE).then(|| self.names.get(id));
        let shown = self
            .groups
            .iter()
            .take(max)
            .map(|&[metric, params, statistic, label, _]| {
                super::held::words(
                    None,
                    name(metric).unwrap_or_default(),
                    name(statistic),
                    name(params).unwrap_or_default(),
                    name(label),
                )
            })
            .collect();
        (self.groups.len(), shown)
    }

    /// The id of a group of series, added when new.
    fn group(&mut self, key: Group) -> u32 {
        match self.group_index.get(&key) {
            Some(&g) => g,
            None => {
                let g = self.groups.len() as u32;
                self.groups.push(key);
                self.group_index.insert(key, g);
                self.scopes.push(Scopes::List(Vec::new()));
                g
            }
        }
    }

    /// The series of `group` in `scope`, declared with this unit and direction when new (a
    /// series keeps the unit it was first declared with).
    fn declare(&mut self, group: u32, scope: &str, unit: &Unit, direction: Direction) -> u32 {
        let scope = self.scope(scope);
        if let Some(id) = self.find(group, scope) {
            return id;
        }
        let kind = self.kind(unit, direction);
        let id = self.series.len() as u32;
        assert!(id < POOLED, "more than 2^31 series in one input");
        self.series.push(Entry { group, scope, kind });
        self.scopes[group as usize].insert(scope, id);
        id
    }

    /// The series and samples of a dataset (a block of an email).
    pub fn from_dataset(ds: ingest::Dataset) -> Self {
        let mut p = Parsed::new(None);
        for s in ds.series {
            let id = p.series(&s.spec);
            for v in s.samples {
                p.sample(id, v);
            }
        }
        p
    }

    fn keeps(&mut self, metric: u32) -> bool {
        let i = metric as usize;
        if self.keeps.len() <= i {
            self.keeps.resize(i + 1, None);
        }
        *self.keeps[i].get_or_insert_with(|| {
            self.glob
                .as_deref()
                .is_none_or(|g| glob_match(g, self.names.get(metric)))
        })
    }

    fn kind(&mut self, unit: &Unit, direction: Direction) -> u32 {
        match self
            .kinds
            .iter()
            .position(|(u, d)| u == unit && *d == direction)
        {
            Some(i) => i as u32,
            None => {
                self.kinds.push((unit.clone(), direction));
                self.kinds.len() as u32 - 1
            }
        }
    }

    fn scope(&mut self, scope: &str) -> u32 {
        if self.last_scope != NONE && self.names.get(self.last_scope) == scope {
            return self.last_scope;
        }
        self.last_scope = self.names.id(scope);
        self.last_scope
    }

    /// The series of `group` in `scope`.
    fn find(&self, group: u32, scope: u32) -> Option<u32> {
        self.scopes.get(group as usize)?.get(scope)
    }

    /// Samples grouped by series: series `i` holds `vals[offsets[i]..offsets[i + 1]]`.
    fn bucketed(&mut self) -> (Vec<u32>, Vec<f64>) {
        let ids = std::mem::take(&mut self.sample_ids);
        let values = std::mem::take(&mut self.values);
        assert!(
            values.len() < u32::MAX as usize,
            "more than 2^32 samples in one input"
        );
        let mut offsets = vec![0u32; self.series.len() + 1];
        if let Some(only) = self.only {
            offsets[only as usize + 1] = values.len() as u32;
        }
        for &id in &ids {
            offsets[id as usize + 1] += 1;
        }
        for i in 1..offsets.len() {
            offsets[i] += offsets[i - 1];
        }
        // Samples usually arrive series by series (a profile gives each series one value in
        // turn): then they are grouped already.
        if ids.is_sorted() {
            return (offsets, values);
        }
        let mut next = offsets.clone();
        let mut vals = vec![0.0; values.len()];
        for (id, v) in ids.into_iter().zip(values) {
            let at = &mut next[id as usize];
            vals[*at as usize] = v;
            *at += 1;
        }
        (offsets, vals)
    }
}

impl Sink for Parsed {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        let k = &spec.key;
        let metric = self.names.id(&k.metric);
        if !self.keeps(metric) {
            return 0;
        }
        let params = if k.params.is_empty() {
            NONE
        } else {
            self.names.id(&store::params_key(&k.params))
        };
        let statistic = k.statistic.as_deref().map_or(NONE, |s| self.names.id(s));
        let label = k.label.as_deref().map_or(NONE, |s| self.names.id(s));
        let group = self.group([metric, params, statistic, label, NONE]);
        self.declare(group, &k.scope, &spec.unit, spec.direction) as SeriesId
    }

    fn sample(&mut self, id: SeriesId, value: f64) {
        if id == 0 {
            return;
        }
        let id = id as u32;
        match self.only {
            None if self.values.is_empty() => self.only = Some(id),
            Some(only) if only != id => {
                self.sample_ids = vec![only; self.values.len()];
                self.only = None;
            }
            _ => {}
        }
        if self.only.is_none() {
            self.sample_ids.push(id);
        }
        self.values.push(value);
    }

    fn meta(&mut self, _key: &str, _value: String) {}

    fn warning(&mut self, _w: Warning) {}

    fn extra(&mut self, _key: &str, _value: serde_json::Value) {}

    fn metric_name(&self, id: SeriesId) -> Option<&str> {
        let e = self.series.get(id).filter(|_| id != 0)?;
        Some(self.names.get(self.groups[e.group as usize][0]))
    }
}

/// The samples `r` of `vals`, moved out when they are all of them (one series of a million
/// numbers is not copied), else copied.
fn take(vals: &mut Vec<f64>, r: std::ops::Range<usize>) -> Vec<f64> {
    if r.start == 0 && r.end == vals.len() {
        std::mem::take(vals)
    } else {
        vals[r].to_vec()
    }
}

/// Compares two parsed inputs ([`compare_sides`]), named as files are.
pub fn compare_parsed(
    (base_name, base): (&str, Parsed),
    (head_name, head): (&str, Parsed),
    direction: Option<Direction>,
    settings: &Settings,
    fold: bool,
) -> Report {
    let (rows, summary) = compare_sides(base, head, direction, settings, fold);
    let side = |name: &str| Side {
        build: BuildInfo {
            label: name.to_string(),
            commit: None,
            kernel_version: None,
            config: None,
            cmdline: None,
        },
        run_ids: Vec::new(),
        machines: Vec::new(),
    };
    Report {
        base: side(base_name),
        head: side(head_name),
        settings: *settings,
        comparisons: rows,
        summary,
        env_diff: Vec::new(),
        newer_runs: false,
    }
}

/// Compares two sets of series: series match by benchmark, parameters, metric, scope,
/// statistic and block label. `direction`, when given, overrides what the series say is
/// better. With `fold`, per-CPU series of one value a side appear only inside their pooled
/// `cpus` row. The rows come sorted, with their verdicts counted ([`finish_rows`]).
pub fn compare_sides(
    mut base: Parsed,
    mut head: Parsed,
    direction: Option<Direction>,
    settings: &Settings,
    fold: bool,
) -> (Vec<Row>, Summary) {
    // The head's id of each base group and scope name, found by their strings.
    let head_id = |names: &Interner, id: u32| match id {
        NONE => Some(NONE),
        _ => head.names.lookup(names.get(id)),
    };
    let group_in_head: Vec<Option<u32>> = base
        .groups
        .iter()
        .map(|g| {
            let mut hg = [NONE; 5];
            for (h, &b) in hg.iter_mut().zip(g) {
                *h = head_id(&base.names, b)?;
            }
            head.group_index.get(&hg).copied()
        })
        .collect();
    let mut scope_in_head: FastMap<u32, Option<u32>> = FastMap::default();
    // The head's series of each base series (NONE: none).
    let partner: Vec<u32> = base
        .series
        .iter()
        .map(|e| {
            if e.group == NONE {
                return None;
            }
            let hg = group_in_head[e.group as usize]?;
            let hs = *scope_in_head
                .entry(e.scope)
                .or_insert_with(|| head_id(&base.names, e.scope));
            head.find(hg, hs?)
        })
        .map(|p| p.unwrap_or(NONE))
        .collect();
    // The indexes and the head's series are not needed any more: a profile's are tens of
    // megabytes.
    for p in [&mut base, &mut head] {
        p.scopes = Vec::new();
        p.group_index = FastMap::default();
    }
    let (b_off, mut b_vals) = base.bucketed();
    let (h_off, mut h_vals) = head.bucketed();
    head.series = Vec::new();
    base.series.shrink_to_fit();
    // Each CPU's name once, shared by every row that lists it.
    let mut cpu_names: Vec<Option<Arc<str>>> = vec![None; base.names.len()];

    // A pooled row takes the unit of its first CPU.
    let mut pooled_kind = vec![NONE; base.groups.len()];
    let range = |off: &[u32], i: usize| off[i] as usize..off[i + 1] as usize;
    let inputs = partner.iter().enumerate().filter_map(|(sid, &hid)| {
        if hid == NONE {
            return None;
        }
        let e = base.series[sid];
        let (b, h) = (range(&b_off, sid), range(&h_off, hid as usize));
        if b.is_empty() || h.is_empty() {
            return None;
        }
        let [_, _, statistic, _, _] = base.groups[e.group as usize];
        let cpu = (statistic == NONE && is_cpu_scope(base.names.get(e.scope))).then(|| {
            let pk = &mut pooled_kind[e.group as usize];
            if *pk == NONE {
                *pk = e.kind;
            }
            let name = cpu_names[e.scope as usize]
                .get_or_insert_with(|| base.names.get(e.scope).into())
                .clone();
            (POOLED | e.group, name)
        });
        Some(compare::pool::Input {
            key: sid as u32,
            direction: direction.unwrap_or(base.kinds[e.kind as usize].1),
            summary: statistic != NONE,
            cpu,
            base: take(&mut b_vals, b),
            head: take(&mut h_vals, h),
        })
    });
    let outputs = compare::pool::pool(inputs, settings, fold);
    drop((partner, b_off, b_vals, h_off, h_vals, cpu_names));

    let names = &base.names;
    let rows: Vec<Row> = outputs
        .into_iter()
        .map(|o| {
            let (group, scope, kind) = if o.key & POOLED != 0 {
                let g = o.key & !POOLED;
                (g, "cpus", pooled_kind[g as usize])
            } else {
                let e = base.series[o.key as usize];
                (e.group, names.get(e.scope), e.kind)
            };
            let [metric, params, statistic, label, benchmark] = base.groups[group as usize];
            let mut per_cpu: Vec<CpuValues> = o.per_cpu;
            per_cpu.sort_by(|a, b| crate::natural(&a.cpu, &b.cpu));
            Row {
                benchmark: opt(names, benchmark).unwrap_or_default().to_string(),
                params: opt(names, params)
                    .map(super::parse_params_key)
                    .unwrap_or_default(),
                metric: names.get(metric).to_string(),
                scope: scope.to_string(),
                unit: base.kinds[kind as usize].0.clone(),
                direction: o.direction,
                statistic: opt(names, statistic).map(str::to_string),
                label: opt(names, label).map(str::to_string),
                cmp: o.cmp,
                base_samples: o.base,
                head_samples: o.head,
                per_cpu,
            }
        })
        .collect();
    finish_rows(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::model::SeriesKey;

    /// A per-CPU profile: `functions` functions on `cpus` CPUs, hits and times, plus
    /// an `all` total per function; `shift` scales the head's times.
    fn profile(cpus: usize, functions: usize, shift: f64, glob: Option<&str>) -> Parsed {
        let mut p = Parsed::new(glob);
        for cpu in 0..cpus {
            for f in 0..functions {
                let scope = format!("cpu{cpu}");
                let hit = SeriesSpec::count(SeriesKey::new(format!("f{f}.hit")).scope(&scope));
                let time = SeriesSpec::duration(SeriesKey::new(format!("f{f}.time")).scope(&scope));
                let id = p.series(&hit);
                p.sample(id, (100 + cpu * 7 + f) as f64);
                let id = p.series(&time);
                p.sample(id, (1 + cpu + f) as f64 * shift);
            }
        }
        for f in 0..functions {
            let all = SeriesSpec::count(SeriesKey::new(format!("f{f}.hit")));
            let id = p.series(&all);
            p.sample(id, 1000.0);
        }
        p
    }

    fn compare(base: Parsed, head: Parsed) -> Report {
        compare_parsed(("a", base), ("b", head), None, &Settings::default(), true)
    }

    #[test]
    fn a_metric_glob_keeps_exactly_the_rows_it_names() {
        let all = compare(profile(8, 5, 1.0, None), profile(8, 5, 1.5, None));
        let hits = compare(
            profile(8, 5, 1.0, Some("*.hit")),
            profile(8, 5, 1.5, Some("*.hit")),
        );
        let key = |r: &Row| (r.metric.clone(), r.scope.clone());
        let mut want: Vec<_> = all
            .comparisons
            .iter()
            .filter(|r| r.metric.ends_with(".hit"))
            .collect();
        want.sort_by_key(|r| key(r));
        let mut got: Vec<_> = hits.comparisons.iter().collect();
        got.sort_by_key(|r| key(r));
        assert_eq!(got.len(), 10, "5 pooled rows and 5 totals");
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(key(g), key(w));
            assert_eq!(g.per_cpu, w.per_cpu);
            assert_eq!(g.cmp.p, w.cmp.p);
        }
        // The times moved and the hits did not: only the unfiltered comparison sees a change.
        assert!(all.comparisons.len() > hits.comparisons.len());
    }

    #[test]
    fn per_cpu_series_fold_into_one_row_with_every_cpu_in_order() {
        let r = compare(profile(12, 2, 1.0, None), profile(12, 2, 2.0, None));
        let pooled: Vec<&Row> = r.comparisons.iter().filter(|r| r.scope == "cpus").collect();
        assert_eq!(pooled.len(), 4, "2 functions x (hit, time)");
        let time = pooled.iter().find(|r| r.metric == "f0.time").unwrap();
        let cpus: Vec<&str> = time.per_cpu.iter().map(|c| &*c.cpu).collect();
        let want: Vec<String> = (0..12).map(|c| format!("cpu{c}")).collect();
        assert_eq!(cpus, want, "natural order, cpu10 after cpu9");
        assert_eq!(time.per_cpu[3].base, Some(4.0));
        assert_eq!(time.per_cpu[3].head, Some(8.0));
        assert_eq!(time.unit, Unit::Seconds);
        // No row of a single CPU is left once folded.
        assert!(r.comparisons.iter().all(|r| !is_cpu_scope(&r.scope)));
    }

    #[test]
    fn a_group_of_many_scopes_finds_each_series_again() {
        let mut p = Parsed::new(None);
        let spec = |s: usize| SeriesSpec::count(SeriesKey::new("m").scope(format!("w{s}")));
        let ids: Vec<SeriesId> = (0..SCOPES_IN_LIST * 3)
            .map(|s| p.series(&spec(s)))
            .collect();
        let again: Vec<SeriesId> = (0..SCOPES_IN_LIST * 3)
            .map(|s| p.series(&spec(s)))
            .collect();
        assert_eq!(ids, again);
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), SCOPES_IN_LIST * 3);
        assert_eq!(p.metric_name(ids[0]), Some("m"));
        assert_eq!(p.metric_name(0), None, "the dropped series");
    }

    #[test]
    fn samples_are_grouped_by_series_whatever_their_order() {
        let mut p = Parsed::new(None);
        let a = p.series(&SeriesSpec::count(SeriesKey::new("a")));
        let b = p.series(&SeriesSpec::count(SeriesKey::new("b")));
        for (id, v) in [(a, 1.0), (a, 2.0), (b, 3.0), (a, 4.0)] {
            p.sample(id, v);
        }
        let (off, vals) = p.bucketed();
        assert_eq!(&vals[off[a] as usize..off[a + 1] as usize], [1.0, 2.0, 4.0]);
        assert_eq!(&vals[off[b] as usize..off[b + 1] as usize], [3.0]);
        // One series only: no ids kept, the values are its own.
        let mut q = Parsed::new(None);
        let c = q.series(&SeriesSpec::count(SeriesKey::new("c")));
        q.sample(c, 5.0);
        q.sample(c, 6.0);
        assert!(q.sample_ids.is_empty());
        let (off, vals) = q.bucketed();
        assert_eq!((off[c], off[c + 1]), (0, 2));
        assert_eq!(vals, [5.0, 6.0]);
    }

    #[test]
    fn series_of_other_metrics_keep_no_samples() {
        let mut p = Parsed::new(Some("*.hit"));
        let time = SeriesSpec::duration(SeriesKey::new("f.time").scope("cpu0"));
        let id = p.series(&time);
        assert_eq!(id, 0);
        p.sample(id, 1.0);
        assert!(p.values.is_empty());
    }
}
