//! The bulk writes of series: interned key strings (`names`), the series rows handed to
//! [`crate::blocks`], samples packed as little-endian f64, and the per-run totals of per-CPU
//! profiles.

use ingest::model::FastMap;
use std::fmt::Write as _;

use sqlx::AssertSqlSafe;

use crate::{Error, Store, Tx, with_pool, with_tx};

/// The names stored from an id on: what an import's cache lacks ([`Names::refresh`],
/// [`Names::reconcile`]).
const NAMES_SINCE: &str = "SELECT id, name FROM names WHERE id >= $1";

/// Names per INSERT statement (100 wrote 57,000 names in a quarter of the time 2,000 took).
const NAMES_PER_STMT: usize = 100;

/// Samples as stored: little-endian f64, in order.
pub fn pack(values: &[f64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 8);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The samples of a stored blob; a trailing partial value (a corrupt row) is an error.
pub fn unpack(blob: &[u8]) -> Result<Vec<f64>, Error> {
    if !blob.len().is_multiple_of(8) {
        return Err(Error::Corrupt(format!(
            "a series holds {} bytes of samples, not a multiple of 8",
            blob.len()
        )));
    }
    Ok(blob
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().expect("chunks of 8")))
        .collect())
}

/// The names as stored, shared by the imports of a [`Store`] (see [`Names::cached`]).
#[derive(Default)]
pub(crate) struct NameTable {
    ids: FastMap<Box<str>, u32>,
    /// One past the highest id.
    next: u32,
}

impl NameTable {
    fn extend(&mut self, rows: Vec<(i64, String)>) -> Result<(), Error> {
        for (id, name) in rows {
            let id = u32::try_from(id)
                .map_err(|_| Error::Corrupt(format!("name id {id} out of range")))?;
            self.next = self.next.max(id + 1);
            self.ids.insert(name.into_boxed_str(), id);
        }
        Ok(())
    }
}

/// The last [`NameTable`] read, shared by a store's clones: names are only ever added, so an
/// import reads only the names stored since.
#[derive(Default)]
pub(crate) struct NameCache(std::sync::Mutex<std::sync::Arc<NameTable>>);

impl std::fmt::Debug for NameCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameCache")
    }
}

/// The interned strings of series keys: those stored when the import began (shared), and its
/// own new ones, written in bulk before the series that use them.
pub(crate) struct Names {
    stored: std::sync::Arc<NameTable>,
    /// Names this import added, with their ids.
    ids: FastMap<Box<str>, u32>,
    next: u32,
    /// `next` when loaded: names another writer adds later get ids from here on.
    loaded_next: u32,
    new: Vec<(u32, Box<str>)>,
}

impl Names {
    pub(crate) async fn load(tx: &mut Tx) -> Result<Names, Error> {
        let rows: Vec<(i64, String)> = with_tx!(tx, |t| {
            sqlx::query_as("SELECT id, name FROM names")
                .fetch_all(&mut **t)
                .await?
        });
        let mut table = NameTable::default();
        table.extend(rows)?;
        Ok(Names::over(std::sync::Arc::new(table)))
    }

    /// The names this store last read, without reading: an import whose names are all among
    /// them (most uploads: the same metrics and functions again) needs no read at all, one
    /// with others reads what was stored since ([`Names::refresh`]) once it has parsed.
    pub(crate) fn cached(store: &Store) -> Names {
        let cached = store
            .names
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Names::over(cached)
    }

    /// Outside any write transaction, after parsing: when the import allocated names the
    /// cache did not hold, reads the names stored since it was read (other imports may have
    /// stored them) and settles the import's ids as [`Names::reconcile`] does in the writer,
    /// which then usually has nothing left to do. The map to renumber the import's series
    /// by, `None` when nothing changed.
    pub(crate) async fn refresh(
        &mut self,
        store: &Store,
    ) -> Result<Option<FastMap<u32, u32>>, Error> {
        if self.new.is_empty() {
            return Ok(None);
        }
        let rows: Vec<(i64, String)> = with_pool!(store, |pool| {
            sqlx::query_as(NAMES_SINCE)
                .bind(i64::from(self.stored.next))
                .fetch_all(pool)
                .await?
        });
        if rows.is_empty() {
            return Ok(None);
        }
        let map = self.absorb(&rows)?;
        let mut table = NameTable {
            ids: self.stored.ids.clone(),
            next: self.stored.next,
        };
        table.extend(rows)?;
        let table = std::sync::Arc::new(table);
        {
            let mut shared = store.names.0.lock().unwrap_or_else(|e| e.into_inner());
            // Another import may have read further meanwhile; the longer table stays.
            if shared.next < table.next {
                *shared = table.clone();
            }
        }
        self.loaded_next = self.loaded_next.max(table.next);
        self.stored = table;
        Ok(map)
    }

    fn over(stored: std::sync::Arc<NameTable>) -> Names {
        let next = stored.next.max(1);
        Names {
            stored,
            ids: FastMap::default(),
            next,
            loaded_next: next,
            new: Vec::new(),
        }
    }

    /// Inside the write transaction: the names other writers stored since they were read. New
    /// names of ours they also stored take their ids, the others get ids after theirs; the
    /// returned map (old id -> new id) is what the import's series must be renumbered by,
    /// `None` when nothing was stored in between (the usual case), or when the import has no
    /// new names (its ids are all of stored names, which never change).
    pub(crate) async fn reconcile(
        &mut self,
        tx: &mut Tx,
    ) -> Result<Option<FastMap<u32, u32>>, Error> {
        if self.new.is_empty() {
            return Ok(None);
        }
        let fresh: Vec<(i64, String)> = with_tx!(tx, |t| {
            sqlx::query_as(NAMES_SINCE)
                .bind(i64::from(self.loaded_next))
                .fetch_all(&mut **t)
                .await?
        });
        self.absorb(&fresh)
    }

    /// Names stored by others from `loaded_next` on: the import's new names among them take
    /// their ids, the others get ids after theirs. The map old id -> new id, `None` when
    /// `fresh` is empty.
    fn absorb(&mut self, fresh: &[(i64, String)]) -> Result<Option<FastMap<u32, u32>>, Error> {
        if fresh.is_empty() {
            return Ok(None);
        }
        let mut next = self.loaded_next;
        let mut theirs: FastMap<&str, u32> = FastMap::default();
        for (id, name) in fresh {
            let id = u32::try_from(*id)
                .map_err(|_| Error::Corrupt(format!("name id {id} out of range")))?;
            next = next.max(id + 1);
            theirs.insert(name, id);
        }
        let mut map = FastMap::default();
        let mut still_new = Vec::new();
        for (id, name) in self.new.drain(..) {
            match theirs.get(&*name) {
                Some(&known) => {
                    map.insert(id, known);
                }
                None => {
                    map.insert(id, next);
                    still_new.push((next, name));
                    next += 1;
                }
            }
        }
        self.new = still_new;
        self.next = next;
        for id in self.ids.values_mut() {
            if let Some(&moved) = map.get(id) {
                *id = moved;
            }
        }
        Ok(Some(map))
    }

    /// Whether the import allocated names not stored yet.
    pub(crate) fn has_new(&self) -> bool {
        !self.new.is_empty()
    }

    /// The id of `name`, allocated if new (ids are never 0: 0 stands for "none").
    pub(crate) fn id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.get(name) {
            return id;
        }
        let id = self.next;
        self.next += 1;
        self.ids.insert(name.into(), id);
        self.new.push((id, name.into()));
        id
    }

    /// The id of `name` when it is known (stored, or new in this import).
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.stored
            .ids
            .get(name)
            .or_else(|| self.ids.get(name))
            .copied()
    }

    /// `items` with each name id replaced by its name (ids unknown here are left out).
    pub(crate) fn names_of<K: Copy>(&self, items: Vec<(K, u32)>) -> Vec<(K, String)> {
        let wanted: FastMap<u32, ()> = items.iter().map(|&(_, id)| (id, ())).collect();
        let found: FastMap<u32, &str> = self
            .stored
            .ids
            .iter()
            .chain(&self.ids)
            .filter(|(_, id)| wanted.contains_key(id))
            .map(|(name, &id)| (id, &**name))
            .collect();
        items
            .into_iter()
            .filter_map(|(k, id)| found.get(&id).map(|n| (k, (*n).to_string())))
            .collect()
    }

    pub(crate) fn opt(&mut self, name: Option<&str>) -> u32 {
        name.map_or(0, |n| self.id(n))
    }

    /// Writes the names allocated since the last flush.
    pub(crate) async fn flush(&mut self, tx: &mut Tx) -> Result<(), Error> {
        for chunk in self.new.chunks(NAMES_PER_STMT) {
            let mut sql = String::from("INSERT INTO names (id, name) VALUES ");
            for i in 0..chunk.len() {
                let sep = if i == 0 { "" } else { "," };
                let _ = write!(sql, "{sep}(${},${})", 2 * i + 1, 2 * i + 2);
            }
            with_tx!(&mut *tx, |t| {
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for (id, name) in chunk {
                    q = q.bind(*id as i64).bind(&**name);
                }
                q.execute(&mut **t).await?;
            });
        }
        self.new.clear();
        Ok(())
    }
}

/// A series row to write: ids of interned names (0: none) and the samples.
pub(crate) struct Row {
    pub(crate) run_id: i64,
    pub(crate) metric: u32,
    pub(crate) unit: u32,
    pub(crate) direction: u32,
    pub(crate) scope: u32,
    pub(crate) label: u32,
    pub(crate) statistic: u32,
    pub(crate) vals: Vec<f64>,
}

/// What a series contributes to the totals of a per-CPU profile.
#[derive(Clone, Copy)]
pub(crate) enum TotalRole {
    /// `FUNC.hit` or `FUNC.time` of one CPU (`cpuN` scope, no statistic).
    PerCpu {
        hit: bool,
    },
    /// A series of the `all` scope without statistic: its key needs no total.
    All,
    None,
}

pub(crate) fn total_role(metric: &str, scope: &str, statistic: Option<&str>) -> TotalRole {
    if statistic.is_some() {
        return TotalRole::None;
    }
    if scope == "all" {
        return TotalRole::All;
    }
    // `cpu[0-9]*`, as the totals have always matched scopes.
    let per_cpu = scope
        .strip_prefix("cpu")
        .is_some_and(|r| r.as_bytes().first().is_some_and(u8::is_ascii_digit));
    match (per_cpu, metric.rsplit_once('.')) {
        (true, Some((_, "hit"))) => TotalRole::PerCpu { hit: true },
        (true, Some((_, "time"))) => TotalRole::PerCpu { hit: false },
        _ => TotalRole::None,
    }
}

/// Sums of the per-CPU `.hit`/`.time` series of each run, for the `all` totals.
#[derive(Default)]
pub(crate) struct Totals {
    /// (run, metric, label) -> sums per sample index, CPUs seen, unit, direction.
    sums: FastMap<(i64, u32, u32), Sum>,
    /// (run, metric, label) keys that already have an `all` series.
    has_all: FastMap<(i64, u32, u32), ()>,
}

pub(crate) struct Sum {
    values: Vec<f64>,
    /// The first CPU seen, and whether another one was: totals need two CPUs or more.
    first_scope: u32,
    several: bool,
    unit: u32,
    direction: u32,
    hit: bool,
}

impl Totals {
    /// Notes a series (or more samples of one: `offset` is the index of the first value).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        role: TotalRole,
        run_id: i64,
        metric: u32,
        label: u32,
        scope: u32,
        unit: u32,
        direction: u32,
        offset: usize,
        values: &[f64],
    ) {
        match role {
            TotalRole::All => {
                self.has_all.insert((run_id, metric, label), ());
            }
            TotalRole::PerCpu { hit } => {
                let s = self.sums.entry((run_id, metric, label)).or_insert(Sum {
                    values: Vec::new(),
                    first_scope: scope,
                    several: false,
                    unit,
                    direction,
                    hit,
                });
                s.several |= scope != s.first_scope;
                if s.values.len() < offset + values.len() {
                    s.values.resize(offset + values.len(), 0.0);
                }
                for (i, v) in values.iter().enumerate() {
                    s.values[offset + i] += v;
                }
            }
            TotalRole::None => {}
        }
    }

    /// The `all` series of `run_id`: FUNC.hit and FUNC.time summed over 2+ CPUs where no input
    /// gave a total, and FUNC.avg = time / hits per sample index where hits > 0.
    pub(crate) fn rows(
        &mut self,
        run_id: i64,
        names: &mut Names,
        metric_name: &FastMap<u32, String>,
    ) -> Vec<Row> {
        let all = names.id("all");
        let mut keys: Vec<(i64, u32, u32)> = self
            .sums
            .keys()
            .filter(|k| k.0 == run_id && !self.has_all.contains_key(k))
            .copied()
            .collect();
        keys.sort_by(|a, b| (&metric_name[&a.1], a.2).cmp(&(&metric_name[&b.1], b.2)));
        let mut out = Vec::new();
        // (base name, label, is hit) -> index in `out`, and per row its base and kind.
        let mut made: FastMap<(String, u32, bool), usize> = FastMap::default();
        let mut kinds: Vec<(String, bool)> = Vec::new();
        for k in &keys {
            let s = &self.sums[k];
            if !s.several {
                continue;
            }
            let m = &metric_name[&k.1];
            let base = m[..m.len() - if s.hit { 4 } else { 5 }].to_string();
            made.insert((base.clone(), k.2, s.hit), out.len());
            kinds.push((base, s.hit));
            out.push(Row {
                run_id,
                metric: k.1,
                unit: s.unit,
                direction: s.direction,
                scope: all,
                label: k.2,
                statistic: 0,
                vals: s.values.clone(),
            });
        }
        let mut avgs = Vec::new();
        for (i, (base, hit)) in kinds.iter().enumerate() {
            if *hit {
                continue;
            }
            let t = &out[i];
            let Some(&h) = made.get(&(base.clone(), t.label, true)) else {
                continue;
            };
            let vals = t
                .vals
                .iter()
                .zip(&out[h].vals)
                .filter(|(_, h)| **h > 0.0)
                .map(|(t, h)| t / h)
                .collect();
            avgs.push(Row {
                run_id,
                metric: names.id(&format!("{base}.avg")),
                unit: t.unit,
                direction: t.direction,
                scope: all,
                label: t.label,
                statistic: 0,
                vals,
            });
        }
        self.sums.retain(|k, _| k.0 != run_id);
        out.extend(avgs);
        out
    }
}
