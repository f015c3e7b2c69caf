//! Series of a `perf stat` file by small keys: names, labels and commands are interned once,
//! so that a value reaches its series id by hashing a few integers, and the spec (strings, a
//! params map) is built only for a series not seen before.

use crate::formats::blocks::Labeler;
use crate::intern::Interner;
use crate::model::{Ctx, Direction, FastMap, SeriesId, SeriesKey, SeriesSpec, Unit};

/// Names interned by [`Ids::new`] in this order, so their ids are known constants.
const FIXED: [&str; 7] = [
    "elapsed",
    "elapsed.stddev",
    "elapsed.stddev_pct",
    "workload.time",
    "user",
    "sys",
    "all",
];
pub(super) const ELAPSED: u32 = 0;
pub(super) const ELAPSED_STDDEV: u32 = 1;
pub(super) const ELAPSED_STDDEV_PCT: u32 = 2;
pub(super) const WORKLOAD_TIME: u32 = 3;
pub(super) const USER: u32 = 4;
pub(super) const SYS: u32 = 5;
/// The scope of values not given per CPU.
pub(super) const ALL: u32 = 6;

/// The statistic a value carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Stat {
    Sample,
    Mean,
    Stddev,
    RelStddevPct,
    MultiplexPct,
}

impl Stat {
    fn as_str(self) -> Option<&'static str> {
        match self {
            Stat::Sample => None,
            Stat::Mean => Some("mean"),
            Stat::Stddev => Some("stddev"),
            Stat::RelStddevPct => Some("rel_stddev_pct"),
            Stat::MultiplexPct => Some("multiplex_pct"),
        }
    }
}

/// The units this format produces; `Other` names its unit by an id of [`Ids::names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum UnitId {
    Seconds,
    Count,
    Percent,
    Other(u32),
}

/// Everything a series spec is made of, as ids.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key {
    /// 0 for none, else the block label's [`Labeler::label_id`] plus one.
    pub label: u32,
    /// The `command` param (an id of [`Ids::commands`]).
    pub command: Option<u32>,
    pub metric: u32,
    pub scope: u32,
    pub stat: Stat,
    pub unit: UnitId,
    pub direction: Direction,
}

/// [`Key::packed`]: three fields hash as three words (an array would hash as bytes).
#[derive(PartialEq, Eq, Hash)]
struct Packed(u64, u64, u64);

impl Key {
    /// The key in three words, cheaper to hash than its fields one by one; every field can be
    /// read back from them (ids are `u32`, the small enums take a few bits).
    fn packed(&self) -> Packed {
        let (unit, other) = match self.unit {
            UnitId::Seconds => (0, 0),
            UnitId::Count => (1, 0),
            UnitId::Percent => (2, 0),
            UnitId::Other(u) => (3, u),
        };
        let command = self.command.map_or(1 << 32, u64::from);
        Packed(
            u64::from(self.label) | u64::from(self.metric) << 32,
            u64::from(self.scope) | u64::from(other) << 32,
            command | (self.stat as u64) << 33 | (self.direction as u64) << 36 | unit << 38,
        )
    }
}

pub(super) struct Ids {
    /// Metric names, scopes and units.
    pub names: Interner,
    pub commands: Interner,
    /// Series by [`Key::packed`].
    series: FastMap<Packed, SeriesId>,
}

impl Default for Ids {
    fn default() -> Self {
        let mut names = Interner::default();
        for n in FIXED {
            names.id(n);
        }
        Ids {
            names,
            commands: Interner::default(),
            series: FastMap::default(),
        }
    }
}

impl Ids {
    /// The [`Key::label`] of a block label.
    pub fn label(label: Option<u32>) -> u32 {
        label.map_or(0, |l| l + 1)
    }

    /// The series of `key`, declared through `ctx` the first time; `labels` gave its label.
    pub fn series(&mut self, key: Key, labels: &Labeler, ctx: &mut Ctx<'_>) -> SeriesId {
        let packed = key.packed();
        if let Some(&id) = self.series.get(&packed) {
            return id;
        }
        let mut k = SeriesKey::new(self.names.get(key.metric)).scope(self.names.get(key.scope));
        k.label = key.label.checked_sub(1).map(|l| labels.name(l).to_string());
        k.statistic = key.stat.as_str().map(str::to_string);
        if let Some(c) = key.command {
            k = k.param("command", self.commands.get(c));
        }
        let unit = match key.unit {
            UnitId::Seconds => Unit::Seconds,
            UnitId::Count => Unit::Count,
            UnitId::Percent => Unit::Percent,
            UnitId::Other(u) => Unit::Other(self.names.get(u).to_string()),
        };
        let id = ctx.series_ref(&SeriesSpec::new(k, unit, key.direction));
        self.series.insert(packed, id);
        id
    }
}
