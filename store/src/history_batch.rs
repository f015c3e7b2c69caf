//! History reads and writes for many series at once: an upload touches hundreds of series of
//! one (branch, machine, benchmark, parameters) history, and one statement for all of them
//! costs what one per series would cost once (a round trip each on PostgreSQL).

use std::collections::{HashMap, HashSet};

use sqlx::Row as _;

use crate::blocks::{decode_series, insert_sql};
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

/// A history series' detector result to record: key, direction, unit and tested p-values.
pub struct SavedSeries<'a> {
    pub key: &'a HistoryKey,
    pub direction: &'a str,
    pub unit: &'a str,
    pub tested_p: &'a [f64],
}

impl Store {
    /// [`Store::history_points`] of every key, in the order of `keys`: one query per
    /// (branch, machine, benchmark, parameters), the metrics sorted out here.
    pub async fn history_points_many(
        &self,
        keys: &[HistoryKey],
    ) -> Result<Vec<Vec<HistoryPoint>>, Error> {
        let mut out: Vec<Vec<HistoryPoint>> = vec![Vec::new(); keys.len()];
        // (branch, machine, benchmark, params) -> metric -> indexes into `keys`.
        let mut groups: HashMap<HistoryOf<'_>, HashMap<&str, Vec<usize>>> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            groups
                .entry((k.branch_id, k.machine_id, &k.benchmark, &k.params_key))
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
        for ((branch_id, machine_id, benchmark, params_key), metrics) in groups {
            // A few metrics are named in the query; many (a profile's functions) are read in
            // one query and sorted out here, as a query per few hundred names would read every
            // block of the history each time.
            let names: Vec<&str> = if metrics.len() <= METRICS_PER_QUERY {
                metrics.keys().copied().collect()
            } else {
                Vec::new()
            };
            let filter = if names.is_empty() {
                String::new()
            } else {
                format!(
                    "AND m.name IN ({})",
                    (5..5 + names.len())
                        .map(|i| format!("${i}"))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            let sql = format!(
                "SELECT b.id, b.label, bb.position, r.id, sb.id, u.name, d.name, m.name, sb.series \
                 FROM build_branches bb JOIN builds b ON b.id = bb.build_id \
                 JOIN runs r ON r.build_id = b.id \
                 JOIN series_block sb ON sb.run_id = r.id \
                 JOIN names m ON m.id = sb.metric_id JOIN names u ON u.id = sb.unit_id \
                 JOIN names d ON d.id = sb.direction_id \
                 WHERE bb.branch_id = $1 AND r.machine_id = $2 AND r.benchmark = $3 \
                   AND r.params_key = $4 AND sb.label_id IS NULL AND sb.statistic_id IS NULL \
                   {filter} \
                 ORDER BY bb.position, r.id"
            );
            let rows: Vec<(HistoryPoint, String, i64, String)> = with_pool!(self, |pool| {
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(branch_id)
                    .bind(machine_id)
                    .bind(benchmark)
                    .bind(params_key);
                for m in &names {
                    q = q.bind(*m);
                }
                q.fetch_all(pool)
                    .await?
                    .iter()
                    .map(|r| {
                        Ok((
                            HistoryPoint {
                                build_id: r.try_get(0)?,
                                label: r.try_get(1)?,
                                position: r.try_get(2)?,
                                run_id: r.try_get(3)?,
                                series_id: 0,
                                unit: r.try_get(5)?,
                                direction: r.try_get(6)?,
                            },
                            r.try_get::<String, _>(7)?,
                            r.try_get::<i64, _>(4)?,
                            r.try_get::<String, _>(8)?,
                        ))
                    })
                    .collect::<Result<Vec<_>, Error>>()?
            });
            for (mut point, metric, block, series) in rows {
                let Some(idx) = metrics.get(metric.as_str()) else {
                    continue;
                };
                let Some(pos) = decode_series(&series)?
                    .iter()
                    .position(|&(scope, _)| i64::from(scope) == all)
                else {
                    continue;
                };
                point.series_id = (block << 16) | pos as i64;
                for &i in idx {
                    out[i].push(point.clone());
                }
            }
        }
        Ok(out)
    }

    /// [`Store::save_history_series`] of every item, in transactions of at most
    /// [`SAVED_PER_TRANSACTION`] (each row stands alone, and a profile's tens of thousands of
    /// series must not hold the writer while other uploads wait); their ids in order.
    pub async fn save_history_series_many(
        &self,
        items: &[SavedSeries<'_>],
    ) -> Result<Vec<i64>, Error> {
        let at = now();
        let mut ids = Vec::with_capacity(items.len());
        for batch in items.chunks(SAVED_PER_TRANSACTION) {
            let mut tx = self.begin_write().await?;
            let mut start = 0;
            while start < batch.len() {
                // A statement's rows: an upsert may touch a row once, so no key twice.
                let mut seen = HashSet::new();
                let mut end = start;
                while end < batch.len()
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
                );
                sql.push_str(
                    " ON CONFLICT (branch_id, machine_id, benchmark, params_key, metric) \
                     DO UPDATE SET direction = excluded.direction, unit = excluded.unit, tested_p = excluded.tested_p, updated_at = excluded.updated_at \
                     RETURNING id, branch_id, machine_id, benchmark, params_key, metric",
                );
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
                    q.fetch_all(&mut **t)
                        .await?
                        .into_iter()
                        .map(|(id, b, m, bench, p, metric)| (id, (b, m, bench, p, metric)))
                        .collect()
                });
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
                start = end;
            }
            tx.commit().await?;
        }
        Ok(ids)
    }
}
