//! History reads and writes for many series at once: an upload touches hundreds of series of
//! one (branch, machine, benchmark, parameters) history, and one statement for all of them
//! costs what one per series would cost once (a round trip each on PostgreSQL).

use std::collections::HashMap;

use sqlx::Row as _;

use crate::blocks::decode_series;
use crate::{Error, HistoryKey, HistoryPoint, Store, now, with_pool, with_tx};

/// (branch id, machine id, benchmark, parameters): the history a key's metric belongs to.
type HistoryOf<'a> = (i64, i64, &'a str, &'a str);

/// History series saved per write transaction.
const SAVED_PER_TRANSACTION: usize = 1000;

/// Metric names per query (their placeholders stay far below either engine's limit).
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
        let all: Option<i64> = with_pool!(self, |pool| {
            sqlx::query_scalar("SELECT id FROM names WHERE name = 'all'")
                .fetch_optional(pool)
                .await?
        });
        let Some(all) = all else {
            return Ok(out);
        };
        for ((branch_id, machine_id, benchmark, params_key), metrics) in groups {
            let names: Vec<&str> = metrics.keys().copied().collect();
            let mut rows: Vec<(HistoryPoint, String, i64, String)> = Vec::new();
            for chunk in names.chunks(METRICS_PER_QUERY) {
                let sql = format!(
                    "SELECT b.id, b.label, bb.position, r.id, sb.id, u.name, d.name, m.name, sb.series \
                     FROM build_branches bb JOIN builds b ON b.id = bb.build_id \
                     JOIN runs r ON r.build_id = b.id \
                     JOIN series_block sb ON sb.run_id = r.id \
                     JOIN names m ON m.id = sb.metric_id JOIN names u ON u.id = sb.unit_id \
                     JOIN names d ON d.id = sb.direction_id \
                     WHERE bb.branch_id = $1 AND r.machine_id = $2 AND r.benchmark = $3 \
                       AND r.params_key = $4 AND sb.label_id IS NULL AND sb.statistic_id IS NULL \
                       AND m.name IN ({}) \
                     ORDER BY bb.position, r.id",
                    (5..5 + chunk.len())
                        .map(|i| format!("${i}"))
                        .collect::<Vec<_>>()
                        .join(",")
                );
                let got: Vec<(HistoryPoint, String, i64, String)> = with_pool!(self, |pool| {
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                        .bind(branch_id)
                        .bind(machine_id)
                        .bind(benchmark)
                        .bind(params_key);
                    for m in chunk {
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
                rows.extend(got);
            }
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
            for s in batch {
                let json = serde_json::to_string(s.tested_p)
                    .map_err(|e| Error::Invalid(format!("p-values: {e}")))?;
                let id: i64 = with_tx!(&mut tx, |t| {
                    sqlx::query_scalar(
                    "INSERT INTO history_series (branch_id, machine_id, benchmark, params_key, metric, direction, tested_p, updated_at, unit) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                     ON CONFLICT (branch_id, machine_id, benchmark, params_key, metric) \
                     DO UPDATE SET direction = excluded.direction, unit = excluded.unit, tested_p = excluded.tested_p, updated_at = excluded.updated_at \
                     RETURNING id",
                )
                .bind(s.key.branch_id)
                .bind(s.key.machine_id)
                .bind(&s.key.benchmark)
                .bind(&s.key.params_key)
                .bind(&s.key.metric)
                .bind(s.direction)
                .bind(json)
                .bind(at)
                .bind(s.unit)
                .fetch_one(&mut **t)
                .await?
                });
                ids.push(id);
            }
            tx.commit().await?;
        }
        Ok(ids)
    }
}
