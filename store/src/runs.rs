//! Reads of runs: lists, one run's facts, its series keys and its stored files.

use std::collections::BTreeMap;

use serde::Serialize;
use sqlx::Row as _;

use crate::browse::Build;
use crate::with_pool;
use crate::{Error, Store};

/// One line of a run list.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct RunSummary {
    pub id: i64,
    pub build: String,
    pub machine: String,
    pub benchmark: String,
    /// `k=v&k=v`, sorted by key.
    pub params_key: String,
    pub created_at: i64,
    pub series: i64,
    pub samples: i64,
}

/// Which runs to list. Empty strings count as absent.
#[derive(Debug, Clone, Default)]
pub struct RunQuery<'a> {
    pub build: Option<&'a str>,
    pub machine: Option<&'a str>,
    pub benchmark: Option<&'a str>,
    /// At most this many (all when `None`).
    pub limit: Option<i64>,
    /// Newest first (by id) instead of oldest first.
    pub newest_first: bool,
    /// Only runs with a smaller id: the next page after a run, newest first.
    pub before: Option<i64>,
}

/// One run's facts.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: i64,
    pub build: Build,
    pub machine: String,
    pub machine_facts: BTreeMap<String, String>,
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    pub created_at: i64,
    /// The upload token's name, when the run was uploaded.
    pub uploaded_by: Option<String>,
}

/// A series of a run: its key and its samples in stored order.
#[derive(Debug, Clone)]
pub struct RunSeries {
    pub id: i64,
    pub metric: String,
    pub scope: String,
    pub label: Option<String>,
    pub statistic: Option<String>,
    pub unit: String,
    pub direction: String,
    pub values: Vec<f64>,
}

/// A file stored with a run, with what parsing it found (JSON as stored).
#[derive(Debug, Clone)]
pub struct RunArtifact {
    pub seq: i64,
    pub artifact_id: i64,
    pub file_name: String,
    pub format: String,
    pub size: i64,
    pub sha256: String,
    pub meta_json: String,
    pub warnings_json: String,
    pub warning_count: i64,
    pub extra_json: String,
}

/// The conditions on `runs r` of `q`'s build, machine and benchmark, with `$1`, `$2`, ... in
/// order, and the values they bind. Only the given filters are written out, each an equality on
/// a column of `runs`, so that the engine goes through the index that filter has
/// (`runs_machine` and the others): the one statement with `($1 IS NULL OR ...)` for every
/// filter scanned the runs in id order instead: 0.17-0.36 s on SQLite, in a trial of a million
/// runs, for a build with a few hundred. Labels and names are unique, so each subquery gives
/// one id or none. An empty filter is no filter.
fn conditions<'a>(q: &RunQuery<'a>) -> (Vec<String>, Vec<&'a str>) {
    let filters = [
        (
            q.build,
            "r.build_id = (SELECT id FROM builds WHERE label = ",
        ),
        (
            q.machine,
            "r.machine_id = (SELECT id FROM machines WHERE name = ",
        ),
        (q.benchmark, "r.benchmark = ("),
    ];
    let mut values = Vec::new();
    let mut conditions = Vec::new();
    for (value, condition) in filters {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            values.push(v);
            conditions.push(format!("{condition}${})", values.len()));
        }
    }
    (conditions, values)
}

/// ` WHERE a AND b`, or nothing without conditions.
fn where_clause(conditions: &[String]) -> String {
    if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    }
}

impl Store {
    /// Runs matching `q`, with their series and sample counts.
    pub async fn runs(&self, q: &RunQuery<'_>) -> Result<Vec<RunSummary>, Error> {
        let (mut conditions, values) = conditions(q);
        if q.before.is_some() {
            conditions.push(format!("r.id < ${}", values.len() + 1));
        }
        let sql = format!(
            "SELECT r.id, b.label AS build, m.name AS machine, r.benchmark, r.params_key, r.created_at, \
                    (SELECT CAST(COALESCE(SUM(json_array_length({series})), 0) AS BIGINT) FROM series_block s WHERE s.run_id = r.id) AS series, \
                    (SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM series_block s WHERE s.run_id = r.id) AS samples \
             FROM runs r JOIN builds b ON b.id = r.build_id JOIN machines m ON m.id = r.machine_id{} \
             ORDER BY r.id {} LIMIT ${}",
            where_clause(&conditions),
            if q.newest_first { "DESC" } else { "ASC" },
            conditions.len() + 1,
            series = if self.is_postgres() {
                "s.series::json"
            } else {
                "s.series"
            },
        );
        with_pool!(self, |pool| {
            let mut query = sqlx::query_as::<_, RunSummary>(sqlx::AssertSqlSafe(sql));
            for v in &values {
                query = query.bind(*v);
            }
            if let Some(before) = q.before {
                query = query.bind(before);
            }
            Ok(query
                .bind(crate::engine::limit(q.limit.unwrap_or(-1)))
                .fetch_all(pool)
                .await?)
        })
    }

    /// How many runs match `q`'s build, machine and benchmark (its limit and page ignored),
    /// counting up to `cap`: a count past it is `cap + 1`, so that a page over millions of runs
    /// does not scan them all to print a number.
    pub async fn count_runs(&self, q: &RunQuery<'_>, cap: i64) -> Result<i64, Error> {
        let (conditions, values) = conditions(q);
        let sql = format!(
            "SELECT COUNT(*) FROM (SELECT 1 FROM runs r{} LIMIT ${}) AS matching",
            where_clause(&conditions),
            values.len() + 1
        );
        with_pool!(self, |pool| {
            let mut query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql));
            for v in &values {
                query = query.bind(*v);
            }
            Ok(query.bind(cap.saturating_add(1)).fetch_one(pool).await?)
        })
    }

    /// One run's facts; `None` when it does not exist.
    pub async fn run(&self, id: i64) -> Result<Option<RunInfo>, Error> {
        with_pool!(self, |pool| {
            let Some(r) = sqlx::query(
                "SELECT r.build_id, m.id, m.name, r.benchmark, r.created_at, t.name \
                 FROM runs r JOIN machines m ON m.id = r.machine_id LEFT JOIN tokens t ON t.id = r.token_id \
                 WHERE r.id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await?
            else {
                return Ok(None);
            };
            let build = self
                .build_by_id(r.get(0))
                .await?
                .ok_or_else(|| Error::Corrupt(format!("run {id} refers to a missing build")))?;
            let machine_id: i64 = r.get(1);
            let machine_facts = self
                .machine_facts(Some(machine_id))
                .await?
                .remove(&machine_id)
                .unwrap_or_default();
            let params: BTreeMap<String, String> = sqlx::query_as::<_, (String, String)>(
                "SELECT key, value FROM run_params WHERE run_id = $1 ORDER BY key",
            )
            .bind(id)
            .fetch_all(pool)
            .await?
            .into_iter()
            .collect();
            Ok(Some(RunInfo {
                id,
                build,
                machine: r.get(2),
                machine_facts,
                benchmark: r.get(3),
                params,
                created_at: r.get(4),
                uploaded_by: r.get(5),
            }))
        })
    }

    /// A run's series with their samples, ordered by metric, scope, label, statistic (names
    /// as bytes, a missing label or statistic first), then id: the same on both engines.
    pub async fn run_series(&self, run_id: i64) -> Result<Vec<RunSeries>, Error> {
        // From the blocks, not a row per series through the `series` view: a 64-CPU
        // profile's run is 4.9 M series.
        let mut out = Vec::new();
        self.visit_series_of_runs(
            &[run_id],
            |_| true,
            |b| {
                out.extend(b.series.iter().map(|s| RunSeries {
                    id: s.id,
                    metric: b.metric.to_string(),
                    scope: s.scope.to_string(),
                    label: b.label.map(str::to_string),
                    statistic: b.statistic.map(str::to_string),
                    unit: b.unit.to_string(),
                    direction: b.direction.as_str().to_string(),
                    values: s.samples.to_vec(),
                }));
            },
        )
        .await?;
        out.sort_unstable_by(|a, b| {
            (&a.metric, &a.scope, &a.label, &a.statistic, a.id).cmp(&(
                &b.metric,
                &b.scope,
                &b.label,
                &b.statistic,
                b.id,
            ))
        });
        Ok(out)
    }

    /// The files of a run in input order, optionally of one format only.
    pub async fn run_artifacts(
        &self,
        run_id: i64,
        format: Option<&str>,
    ) -> Result<Vec<RunArtifact>, Error> {
        with_pool!(self, |pool| {
            let rows = sqlx::query(
                "SELECT ra.seq, ra.artifact_id, ra.file_name, ra.format, a.size, a.sha256, ra.meta_json, \
                        ra.warnings_json, ra.warning_count, ra.extra_json \
                 FROM run_artifacts ra JOIN artifacts a ON a.id = ra.artifact_id \
                 WHERE ra.run_id = $1 AND ($2 IS NULL OR ra.format = $2) ORDER BY ra.seq",
            )
            .bind(run_id)
            .bind(format)
            .fetch_all(pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|r| RunArtifact {
                    seq: r.get(0),
                    artifact_id: r.get(1),
                    file_name: r.get(2),
                    format: r.get(3),
                    size: r.get(4),
                    sha256: r.get(5),
                    meta_json: r.get(6),
                    warnings_json: r.get(7),
                    warning_count: r.get(8),
                    extra_json: r.get(9),
                })
                .collect())
        })
    }

    /// File number `seq` of a run as (artifact id, file name, size); `None` when absent.
    pub async fn run_file(
        &self,
        run_id: i64,
        seq: i64,
    ) -> Result<Option<(i64, String, i64)>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_as(
                "SELECT ra.artifact_id, ra.file_name, a.size FROM run_artifacts ra \
                 JOIN artifacts a ON a.id = ra.artifact_id WHERE ra.run_id = $1 AND ra.seq = $2",
            )
            .bind(run_id)
            .bind(seq)
            .fetch_optional(pool)
            .await?)
        })
    }

    /// Chunk `seq` of a stored artifact (chunks are numbered from 0; `None` past the end).
    pub async fn artifact_chunk(
        &self,
        artifact_id: i64,
        seq: i64,
    ) -> Result<Option<Vec<u8>>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "SELECT data FROM artifact_chunks WHERE artifact_id = $1 AND seq = $2",
            )
            .bind(artifact_id)
            .bind(seq)
            .fetch_optional(pool)
            .await?)
        })
    }
}
