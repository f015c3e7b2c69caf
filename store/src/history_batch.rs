//! History reads and writes for many series at once: an upload touches hundreds of series of
//! one (branch, machine, benchmark, parameters) history, and one statement for all of them
//! costs what one per series would cost once (a round trip each on PostgreSQL).

use std::collections::{HashMap, HashSet};

use futures_util::TryStreamExt as _;
use sqlx::Row as _;

use crate::blocks::{decode_series, insert_sql};
use crate::engine::placeholders;
use crate::read::split;
use crate::{Error, HistoryKey, HistoryPoint, Store, now, with_pool, with_tx};

/// (branch id, machine id, benchmark, parameters): the history a key's metric belongs to.
type HistoryOf<'a> = (i64, i64, &'a str, &'a str);

/// History series saved per write transaction.
const SAVED_PER_TRANSACTION: usize = 1000;

/// History series per INSERT statement (9 values each).
const SAVED_PER_STATEMENT: usize = 100;

/// What identifies a history series, as RETURNING gives it back.
type OwnedKey = (i64, i64, String, String, String);

/// The identity of a saved history series.
fn saved_key<'a>(s: &SavedSeries<'a>) -> (i64, i64, &'a str, &'a str, &'a str) {
    let k = s.key;
    (
        k.branch_id,
        k.machine_id,
        &k.benchmark,
        &k.params_key,
        &k.metric,
    )
}

/// Metric names named in a query at most (their placeholders stay far below either engine's
/// limit); more are filtered after reading.
const METRICS_PER_QUERY: usize = 500;

/// SQL true when the `series` of block `sb` lists the scope whose [`scope_entry`] is bound
/// as `param`: a filter in the database, so that blocks without it (a profile's per-CPU-only
/// metrics, a quarter of its blocks) are not handed over to be decoded and dropped. Every
/// writer of `series` writes compact JSON (`[[12,3],[13,3]]`: `blocks::series_json`,
/// SQLite's `json_array`), where `[ID,` can only start the entry of scope ID. Readers still
/// decode the list and check.
pub(crate) fn has_scope(postgres: bool, param: &str) -> String {
    let find = if postgres { "strpos" } else { "instr" };
    format!("{find}(sb.series, {param}) > 0")
}

/// The text that starts scope `id`'s entry in a block's `series` ([`has_scope`]).
pub(crate) fn scope_entry(id: i64) -> String {
    format!("[{id},")
}

/// What one history read takes: the history, the `all` scope's id, whether samples are
/// read, the run id read after, the metric ids filtered on (when few), and the SQL pieces
/// naming the metric (id, and name when many), their join and their filter.
pub(crate) struct Read<'a> {
    pub of: HistoryOf<'a>,
    pub all: i64,
    pub values: bool,
    pub after: i64,
    pub ids: &'a [i64],
    pub metric: &'a str,
    pub join: &'a str,
    pub filter: &'a str,
}

impl Read<'_> {
    /// The conditions of the history's whole-run blocks, shared by both engines' reads
    /// (`$1`..`$6` bound by `bind_read!`, the metric ids from `$7`).
    pub(crate) fn conditions(&self, postgres: bool) -> String {
        // Reading after a run (a kept history's new points), SQLite is kept off the runs'
        // indexes: through them it visited every run of the machine and benchmark and
        // dropped the old ones, a pass costing the whole history again. Without them it
        // starts from the blocks of the runs after `$6` (`series_block_run`), the new ones.
        // A whole read (after 0) keeps the indexes, which find one history's runs among all.
        let runs = if !postgres && self.after > 0 {
            "runs r NOT INDEXED"
        } else {
            "runs r"
        };
        format!(
            "FROM build_branches bb JOIN builds b ON b.id = bb.build_id \
             JOIN {runs} ON r.build_id = b.id \
             JOIN series_block sb ON sb.run_id = r.id {join} \
             WHERE bb.branch_id = $1 AND r.machine_id = $2 AND r.benchmark = $3 \
               AND r.params_key = $4 AND sb.label_id IS NULL AND sb.statistic_id IS NULL \
               AND {has_scope} AND r.id > $6 \
               {filter}",
            join = self.join,
            filter = self.filter,
            has_scope = has_scope(postgres, "$5"),
        )
    }
}

/// Binds the parameters of [`Read::conditions`] to a query of either engine.
macro_rules! bind_read {
    ($q:expr, $read:expr) => {{
        let (branch_id, machine_id, benchmark, params_key) = $read.of;
        let mut q = $q
            .bind(branch_id)
            .bind(machine_id)
            .bind(benchmark)
            .bind(params_key)
            .bind($crate::history_batch::scope_entry($read.all))
            .bind($read.after);
        for id in $read.ids {
            q = q.bind(*id);
        }
        q
    }};
}
pub(crate) use bind_read;

/// One whole-run block of a history as read: its run's build and place, its ids, its metric's
/// name (when the metrics are many), its series list and its samples (when read).
pub(crate) struct BlockRow<'a> {
    pub build_id: i64,
    pub label: String,
    pub position: i64,
    pub run_id: i64,
    pub block_id: i64,
    pub unit_id: i64,
    pub direction_id: i64,
    pub metric_id: i64,
    pub name: Option<&'a str>,
    pub series: &'a str,
    pub vals: Option<&'a [u8]>,
}

/// Files blocks as they are read, under the keys of their metric: the same for every engine
/// and every way of reading.
pub(crate) struct Filer<'a> {
    few: bool,
    by_id: &'a HashMap<i64, &'a [usize]>,
    metrics: &'a HashMap<&'a str, Vec<usize>>,
    all: i64,
    out: &'a mut [Vec<(HistoryPoint, Vec<f64>)>],
    /// Points filed with their unit and direction ids, named after the read.
    unnamed: Vec<(usize, usize, i64, i64)>,
}

impl Filer<'_> {
    pub(crate) fn file(&mut self, b: BlockRow<'_>) -> Result<(), Error> {
        let idx = if self.few {
            self.by_id.get(&b.metric_id).copied()
        } else {
            let name = b
                .name
                .ok_or_else(|| Error::Corrupt(format!("block {} has no metric", b.block_id)))?;
            self.metrics.get(name).map(Vec::as_slice)
        };
        let Some(idx) = idx else {
            return Ok(());
        };
        let point = HistoryPoint {
            build_id: b.build_id,
            label: b.label,
            position: b.position,
            run_id: b.run_id,
            series_id: b.block_id,
            unit: String::new(),
            direction: String::new(),
        };
        if file_point(point, b.series, b.vals, self.all, idx, self.out)? {
            for &i in idx {
                let at = self.out[i].len() - 1;
                self.unnamed.push((i, at, b.unit_id, b.direction_id));
            }
        }
        Ok(())
    }
}

/// Reads the blocks a row each (PostgreSQL, whose rows come from the socket's buffer) and
/// files them as they arrive: a profile's history is tens of thousands of blocks, and holding
/// them all before filing doubled the pass's memory.
async fn read_rows(
    pool: &sqlx::PgPool,
    read: &Read<'_>,
    filer: &mut Filer<'_>,
) -> Result<(), Error> {
    let vals = if read.values { "sb.vals" } else { "NULL" };
    // Units and directions are named after the read: a join to `names` for each cost
    // PostgreSQL an index lookup a block.
    let sql = format!(
        "SELECT b.id, b.label, bb.position, r.id, sb.id, sb.unit_id, sb.direction_id, {metric}, sb.series, {vals} \
         {conditions} \
         ORDER BY bb.position, r.id",
        metric = read.metric,
        conditions = read.conditions(true),
    );
    let q = bind_read!(sqlx::query(sqlx::AssertSqlSafe(sql)), read);
    let mut rows = q.fetch(pool);
    while let Some(r) = rows.try_next().await? {
        filer.file(BlockRow {
            build_id: r.try_get(0)?,
            label: r.try_get(1)?,
            position: r.try_get(2)?,
            run_id: r.try_get(3)?,
            block_id: r.try_get(4)?,
            unit_id: r.try_get(5)?,
            direction_id: r.try_get(6)?,
            metric_id: r.try_get(7)?,
            name: r.try_get(8)?,
            series: r.try_get(9)?,
            vals: r.try_get(10)?,
        })?;
    }
    Ok(())
}

/// A history series' detector result to record: key, direction, unit and tested p-values.
pub struct SavedSeries<'a> {
    pub key: &'a HistoryKey,
    pub direction: &'a str,
    pub unit: &'a str,
    pub tested_p: &'a [f64],
}

/// Files one block's point of a history under the keys `idx` of its metric: the block's `all`
/// series becomes the point's series (`point.series_id` holds the block id until then), with
/// its samples when the block's `blob` was read. A block without an `all` series is no point:
/// false.
fn file_point(
    mut point: HistoryPoint,
    series: &str,
    blob: Option<&[u8]>,
    all: i64,
    idx: &[usize],
    out: &mut [Vec<(HistoryPoint, Vec<f64>)>],
) -> Result<bool, Error> {
    let is_all = |&scope: &u32| i64::from(scope) == all;
    let (pos, samples) = match blob {
        Some(blob) => {
            let parts = split(series, blob)?;
            let Some(pos) = parts.scopes.iter().position(is_all) else {
                return Ok(false);
            };
            (pos, parts.get(pos).unwrap_or_default().to_vec())
        }
        None => {
            let Some(pos) = decode_series(series)?
                .iter()
                .position(|(scope, _)| is_all(scope))
            else {
                return Ok(false);
            };
            (pos, Vec::new())
        }
    };
    point.series_id = (point.series_id << 16) | pos as i64;
    if let Some((&last, rest)) = idx.split_last() {
        for &i in rest {
            out[i].push((point.clone(), samples.clone()));
        }
        out[last].push((point, samples));
    }
    Ok(true)
}

impl Store {
    /// [`Store::history_points`] of every key, in the order of `keys`: one query per
    /// (branch, machine, benchmark, parameters), the metrics sorted out here.
    pub async fn history_points_many(
        &self,
        keys: &[HistoryKey],
    ) -> Result<Vec<Vec<HistoryPoint>>, Error> {
        Ok(self
            .history_read(keys, false, None)
            .await?
            .into_iter()
            .map(|h| h.into_iter().map(|(p, _)| p).collect())
            .collect())
    }

    /// [`Store::history_points_many`] with each point's samples, read in the same query
    /// (a block is read once, and only the series wanted is copied out of it).
    pub async fn history_samples_many(
        &self,
        keys: &[HistoryKey],
    ) -> Result<Vec<Vec<(HistoryPoint, Vec<f64>)>>, Error> {
        self.history_read(keys, true, None).await
    }

    /// [`Store::history_samples_many`] of the runs after a run id only: `after[i]` for
    /// `keys[i]` (0 reads the whole history). Keys of one history with the same `after` are
    /// read in one query. A caller keeping what it read before reads only what was stored
    /// since: run ids grow in the order runs become visible, as every write transaction holds
    /// the database's write lock (SQLite's, or the advisory lock `engine::WRITE_LOCK` on
    /// PostgreSQL) from before its runs get ids until its commit.
    pub async fn history_samples_after(
        &self,
        keys: &[HistoryKey],
        after: &[i64],
    ) -> Result<Vec<Vec<(HistoryPoint, Vec<f64>)>>, Error> {
        self.history_read(keys, true, Some(after)).await
    }

    /// The points of every key, with their samples when `values` (otherwise empty), of the
    /// runs after `after` of each key when given.
    async fn history_read(
        &self,
        keys: &[HistoryKey],
        values: bool,
        after: Option<&[i64]>,
    ) -> Result<Vec<Vec<(HistoryPoint, Vec<f64>)>>, Error> {
        let mut out: Vec<Vec<(HistoryPoint, Vec<f64>)>> = vec![Vec::new(); keys.len()];
        // (branch, machine, benchmark, params) and the run id read after -> metric ->
        // indexes into `keys`.
        let mut groups: HashMap<(HistoryOf<'_>, i64), HashMap<&str, Vec<usize>>> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            let of = (
                k.branch_id,
                k.machine_id,
                k.benchmark.as_str(),
                k.params_key.as_str(),
            );
            let from = after.and_then(|a| a.get(i)).copied().unwrap_or(0);
            groups
                .entry((of, from))
                .or_default()
                .entry(&k.metric)
                .or_default()
                .push(i);
        }
        // Blocks are read whole rather than through the `series` view, whose JSON expansion
        // PostgreSQL's planner cannot estimate; the `all` scope is found in each block here.
        let Some(all) = self.name_id("all").await? else {
            return Ok(out);
        };
        for ((of, after), metrics) in groups {
            self.file_history(of, all, &metrics, values, after, &mut out)
                .await?;
        }
        Ok(out)
    }

    /// Files the points of the whole-run blocks of the history `of` under the keys of their
    /// metric in `metrics` (indexes into `out`), with their samples when `values`, in branch
    /// order; only of runs with an id above `after`.
    async fn file_history(
        &self,
        of: HistoryOf<'_>,
        all: i64,
        metrics: &HashMap<&str, Vec<usize>>,
        values: bool,
        after: i64,
        out: &mut [Vec<(HistoryPoint, Vec<f64>)>],
    ) -> Result<(), Error> {
        // A few metrics are found by id, through the `(run_id, metric_id)` index (filtering on
        // the name after a join made SQLite read every block of each run); many (a profile's
        // functions) are read in one query and sorted out here by name, as a query per few
        // hundred names would read every block of the history each time.
        let few = metrics.len() <= METRICS_PER_QUERY;
        let mut by_id: HashMap<i64, &[usize]> = HashMap::new();
        if few {
            let names: Vec<&str> = metrics.keys().copied().collect();
            let sql = format!(
                "SELECT id, name FROM names WHERE name IN ({})",
                placeholders(1, names.len())
            );
            let ids: Vec<(i64, String)> = with_pool!(self, |pool| {
                let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                for n in &names {
                    q = q.bind(*n);
                }
                q.fetch_all(pool).await?
            });
            for (id, name) in ids {
                if let Some(idx) = metrics.get(name.as_str()) {
                    by_id.insert(id, idx);
                }
            }
            if by_id.is_empty() {
                return Ok(());
            }
        }
        let ids: Vec<i64> = by_id.keys().copied().collect();
        let (metric, join, filter) = if few {
            (
                "sb.metric_id, NULL",
                "",
                format!("AND sb.metric_id IN ({})", placeholders(7, ids.len())),
            )
        } else {
            (
                "sb.metric_id, m.name",
                "JOIN names m ON m.id = sb.metric_id",
                String::new(),
            )
        };
        let mut filer = Filer {
            few,
            by_id: &by_id,
            metrics,
            all,
            out,
            unnamed: Vec::new(),
        };
        let read = Read {
            of,
            all,
            values,
            after,
            ids: &ids,
            metric,
            join,
            filter: &filter,
        };
        match &self.backend {
            crate::engine::Backend::Sqlite(pool) => {
                crate::history_sqlite::read_grouped(pool, &read, &mut filer).await?;
            }
            crate::engine::Backend::Postgres(pool) => read_rows(pool, &read, &mut filer).await?,
        }
        let Filer { unnamed, .. } = filer;
        self.name_units(&unnamed, out).await
    }

    /// Names the unit and direction of the points `unnamed` lists (index into `out`, index
    /// of the point, unit id, direction id): one read for the few distinct ids.
    async fn name_units(
        &self,
        unnamed: &[(usize, usize, i64, i64)],
        out: &mut [Vec<(HistoryPoint, Vec<f64>)>],
    ) -> Result<(), Error> {
        let named = self
            .names_by_id(unnamed.iter().flat_map(|u| [u.2, u.3]).collect())
            .await?;
        let name = |id: i64| {
            named
                .get(&id)
                .cloned()
                .ok_or_else(|| Error::Corrupt(format!("name id {id} is not stored")))
        };
        for &(i, j, unit, direction) in unnamed {
            let p = &mut out[i][j].0;
            p.unit = name(unit)?;
            p.direction = name(direction)?;
        }
        Ok(())
    }

    /// [`Store::save_history_series`] of every item, in transactions of at most
    /// [`SAVED_PER_TRANSACTION`] (each row stands alone, and a profile's tens of thousands of
    /// series must not hold the writer while other uploads wait); their ids in order.
    pub async fn save_history_series_many(
        &self,
        items: &[SavedSeries<'_>],
    ) -> Result<Vec<i64>, Error> {
        self.save_many(items, items.len()).await
    }

    /// [`Store::save_history_series_many`] when only the ids of the first `with_ids` items are
    /// wanted: the rest send no row back (a profile's import saves tens of thousands of series
    /// without a change point), in the same transactions.
    pub async fn save_history_series_ids_first(
        &self,
        items: &[SavedSeries<'_>],
        with_ids: usize,
    ) -> Result<Vec<i64>, Error> {
        self.save_many(items, with_ids).await
    }

    /// Saves `items`; the ids of the first `with_ids` of them, in order.
    async fn save_many(
        &self,
        items: &[SavedSeries<'_>],
        with_ids: usize,
    ) -> Result<Vec<i64>, Error> {
        let at = now();
        let mut ids = Vec::with_capacity(with_ids);
        for (b, batch) in items.chunks(SAVED_PER_TRANSACTION).enumerate() {
            let mut tx = self.begin_write().await?;
            // Items of this batch whose ids are wanted: the first ones.
            let wanted = with_ids
                .saturating_sub(b * SAVED_PER_TRANSACTION)
                .min(batch.len());
            let mut start = 0;
            while start < batch.len() {
                let want_ids = start < wanted;
                let last = if want_ids { wanted } else { batch.len() };
                // A statement's rows: an upsert may touch a row once, so no key twice.
                let mut seen = HashSet::new();
                let mut end = start;
                while end < last
                    && end - start < SAVED_PER_STATEMENT
                    && seen.insert(saved_key(&batch[end]))
                {
                    end += 1;
                }
                let rows = &batch[start..end];
                let mut sql = insert_sql(
                    "INSERT INTO history_series (branch_id, machine_id, benchmark, params_key, metric, direction, tested_p, updated_at, unit) VALUES ",
                    rows.len(),
                    9,
                    tx.is_postgres(),
                );
                sql.push_str(
                    " ON CONFLICT (branch_id, machine_id, benchmark, params_key, metric) \
                     DO UPDATE SET direction = excluded.direction, unit = excluded.unit, tested_p = excluded.tested_p, updated_at = excluded.updated_at",
                );
                if want_ids {
                    sql.push_str(
                        " RETURNING id, branch_id, machine_id, benchmark, params_key, metric",
                    );
                }
                let mut json = Vec::with_capacity(rows.len());
                for s in rows {
                    json.push(
                        serde_json::to_string(s.tested_p)
                            .map_err(|e| Error::Invalid(format!("p-values: {e}")))?,
                    );
                }
                // RETURNING gives no order: the ids are matched to the rows by key.
                let got: Vec<(i64, OwnedKey)> = with_tx!(&mut tx, |t| {
                    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                    for (s, json) in rows.iter().zip(&json) {
                        q = q
                            .bind(s.key.branch_id)
                            .bind(s.key.machine_id)
                            .bind(&s.key.benchmark)
                            .bind(&s.key.params_key)
                            .bind(&s.key.metric)
                            .bind(s.direction)
                            .bind(json)
                            .bind(at)
                            .bind(s.unit);
                    }
                    // Without RETURNING (`want_ids` false) no row comes back.
                    q.fetch_all(&mut **t)
                        .await?
                        .into_iter()
                        .map(|(id, b, m, bench, p, metric)| (id, (b, m, bench, p, metric)))
                        .collect()
                });
                if want_ids {
                    let by_key: HashMap<OwnedKey, i64> =
                        got.into_iter().map(|(id, k)| (k, id)).collect();
                    for s in rows {
                        let (b, m, bench, p, metric) = saved_key(s);
                        let key = (b, m, bench.to_string(), p.to_string(), metric.to_string());
                        let id = by_key.get(&key).copied().ok_or_else(|| {
                            Error::Corrupt(format!("history series {metric:?} not returned"))
                        })?;
                        ids.push(id);
                    }
                }
                start = end;
            }
            tx.commit().await?;
        }
        Ok(ids)
    }
}
