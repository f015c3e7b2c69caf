//! Every database read behind a comparison (the report, the comparison page, `compare` and
//! bisection): builds by label or commit, the runs of a selection, their series keys and
//! samples, and latency traces. Typed rows only; no knowledge of pages or reports.

use std::collections::{BTreeSet, HashMap};

use ingest::model::Direction;
use serde::Serialize;
use sqlx::{AssertSqlSafe, Row as _};

use crate::with_pool;
use crate::{Error, Store};

/// Runs are bound in chunks of this many ids: SQLite limits the number of bound parameters.
const CHUNK: usize = 500;

/// A build as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildInfo {
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub config: Option<String>,
    pub cmdline: Option<String>,
}

/// What a build lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildLookup {
    Found(BuildInfo),
    /// The name is a commit prefix of several builds.
    Ambiguous,
    Missing,
}

/// A stored series with the run facts that identify it across runs: the listing of
/// [`Store::series_of_runs`], by which tests check what [`Store::visit_series_of_runs`] hands
/// over (readers of the store visit the blocks).
#[cfg(feature = "test-support")]
#[derive(Debug, Clone)]
pub struct SeriesRow {
    pub id: i64,
    pub benchmark: String,
    pub params_key: String,
    pub metric: String,
    pub scope: String,
    pub statistic: Option<String>,
    pub label: Option<String>,
    pub unit: ingest::model::Unit,
    pub direction: Direction,
}

/// A series block as a comparison lists its series: its id, its run's benchmark and
/// parameters, the name ids of its metric, unit, direction, label and statistic, and its
/// series list (`[[scope id, samples], ...]`).
#[derive(sqlx::FromRow)]
struct SeriesBlock {
    id: i64,
    benchmark: String,
    params_key: String,
    metric_id: i64,
    unit_id: i64,
    direction_id: i64,
    label_id: Option<i64>,
    statistic_id: Option<i64>,
    series: String,
    /// The samples, packed.
    vals: Vec<u8>,
    /// `series` decoded: (scope id, samples) of each series.
    #[sqlx(skip)]
    counts: Vec<(u32, usize)>,
}

/// A block's names, resolved as the `series` view resolves them.
struct Resolved<'a> {
    metric: &'a str,
    unit: &'a str,
    direction: Direction,
    statistic: Option<&'a str>,
    label: Option<&'a str>,
    /// Each series' scope; None when the scope has no stored name (the view leaves it out).
    scopes: Vec<Option<&'a str>>,
}

impl SeriesBlock {
    /// Its names, or None when the view lists none of its series (a metric, unit or direction
    /// without a stored name: an inner join) or `keep` refuses its metric (asked once per
    /// block: a metric is the block's). A missing label or statistic name reads as none; a
    /// direction the store never writes reads as the default.
    fn resolve<'a>(
        &'a self,
        names: &'a HashMap<i64, String>,
        keep: impl Fn(&str) -> bool,
    ) -> Option<Resolved<'a>> {
        let name = |id: i64| names.get(&id).map(String::as_str);
        let metric = name(self.metric_id)?;
        let unit = name(self.unit_id)?;
        let direction = name(self.direction_id)?;
        if !keep(metric) {
            return None;
        }
        Some(Resolved {
            metric,
            unit,
            direction: Direction::parse(direction).unwrap_or(Direction::LowerIsBetter),
            statistic: self.statistic_id.and_then(name),
            label: self.label_id.and_then(name),
            scopes: self
                .counts
                .iter()
                .map(|&(scope, _)| name(i64::from(scope)))
                .collect(),
        })
    }
}

/// One block of a comparison's runs with its names and samples
/// ([`Store::visit_series_of_runs`]).
pub struct StoredBlock<'a> {
    pub benchmark: &'a str,
    /// The run's parameters as stored (`load=idle&preempt=20`).
    pub params_key: &'a str,
    pub metric: &'a str,
    pub unit: &'a str,
    pub direction: Direction,
    pub statistic: Option<&'a str>,
    pub label: Option<&'a str>,
    /// Its series in stored order; a series whose scope has no stored name is left out, as
    /// the `series` view leaves it out.
    pub series: Vec<StoredSeries<'a>>,
}

/// One series of a [`StoredBlock`].
pub struct StoredSeries<'a> {
    /// The series id (`block << 16 | position`), as the `series` view gives it.
    pub id: i64,
    pub scope: &'a str,
    /// Its samples in stored order.
    pub samples: &'a [f64],
}

/// A latency trace file stored with a run.
#[derive(Debug, Clone)]
pub struct LatencyArtifact {
    pub run_id: i64,
    pub seq: i64,
    pub file_name: String,
    pub meta_json: String,
    pub extra_json: String,
}

impl Store {
    /// Finds a build by label, or by commit id (a unique prefix of at least 7 hex digits).
    pub async fn find_build(&self, name: &str) -> Result<BuildLookup, Error> {
        with_pool!(self, |pool| {
            let q = "SELECT label, commit_sha, kernel_version, config, cmdline FROM builds ";
            let row = sqlx::query(AssertSqlSafe(format!("{q} WHERE label = $1")))
                .bind(name)
                .fetch_optional(pool)
                .await?;
            let row = match row {
                Some(r) => r,
                None if name.len() >= 7 && name.bytes().all(|b| b.is_ascii_hexdigit()) => {
                    let mut rows = sqlx::query(AssertSqlSafe(format!(
                        "{q} WHERE {} LIMIT 2",
                        crate::engine::starts_with(self.is_postgres(), "commit_sha", 1)
                    )))
                    .bind(name.to_ascii_lowercase())
                    .fetch_all(pool)
                    .await?;
                    match rows.len() {
                        0 => return Ok(BuildLookup::Missing),
                        1 => rows.remove(0),
                        _ => return Ok(BuildLookup::Ambiguous),
                    }
                }
                None => return Ok(BuildLookup::Missing),
            };
            Ok(BuildLookup::Found(BuildInfo {
                label: row.get(0),
                commit: row.get(1),
                kernel_version: row.get(2),
                config: row.get(3),
                cmdline: row.get(4),
            }))
        })
    }

    /// Build labels, newest first; at most `limit` (all when negative).
    pub async fn build_labels_newest(&self, limit: i64) -> Result<Vec<String>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "SELECT label FROM builds ORDER BY created_at DESC, id DESC LIMIT $1",
            )
            .bind(crate::engine::limit(limit))
            .fetch_all(pool)
            .await?)
        })
    }

    /// Every build label, in alphabetical order.
    pub async fn build_labels_sorted(&self) -> Result<Vec<String>, Error> {
        with_pool!(self, |pool| {
            Ok(
                sqlx::query_scalar("SELECT label FROM builds ORDER BY label")
                    .fetch_all(pool)
                    .await?,
            )
        })
    }

    /// Every benchmark name that has runs.
    pub async fn benchmark_names(&self) -> Result<Vec<String>, Error> {
        with_pool!(self, |pool| {
            Ok(
                sqlx::query_scalar("SELECT DISTINCT benchmark FROM runs ORDER BY 1")
                    .fetch_all(pool)
                    .await?,
            )
        })
    }

    /// Every machine name.
    pub async fn machine_names(&self) -> Result<Vec<String>, Error> {
        with_pool!(self, |pool| {
            Ok(
                sqlx::query_scalar("SELECT name FROM machines ORDER BY name")
                    .fetch_all(pool)
                    .await?,
            )
        })
    }

    /// The data generation: the highest run id (runs are only ever added, so any import
    /// changes it). An O(1) rowid lookup.
    pub async fn generation(&self) -> Result<i64, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM runs")
                .fetch_one(pool)
                .await?)
        })
    }

    /// Ids of the runs of a build, optionally only of one benchmark and one machine.
    pub async fn select_runs(
        &self,
        label: &str,
        benchmark: Option<&str>,
        machine: Option<&str>,
    ) -> Result<Vec<i64>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "SELECT r.id FROM runs r JOIN builds b ON b.id = r.build_id JOIN machines m ON m.id = r.machine_id \
                 WHERE b.label = $1 AND ($2 IS NULL OR r.benchmark = $2) AND ($3 IS NULL OR m.name = $3) ORDER BY r.id",
            )
            .bind(label)
            .bind(benchmark)
            .bind(machine)
            .fetch_all(pool)
            .await?)
        })
    }

    /// Names of the machines these runs executed on, sorted, each once.
    pub async fn machines_of(&self, runs: &[i64]) -> Result<Vec<String>, Error> {
        with_pool!(self, |pool| {
            let mut out = BTreeSet::new();
            for chunk in runs.chunks(CHUNK) {
                let sql = format!(
                    "SELECT DISTINCT m.name FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id IN ({})",
                    placeholders(chunk.len())
                );
                let mut q = sqlx::query_scalar::<_, String>(AssertSqlSafe(sql));
                for id in chunk {
                    q = q.bind(id);
                }
                out.extend(q.fetch_all(pool).await?);
            }
            Ok(out.into_iter().collect())
        })
    }

    /// The series of these runs, by id (within each batch of [`CHUNK`] runs): the same order
    /// on both engines.
    #[cfg(feature = "test-support")]
    pub async fn series_of_runs(&self, runs: &[i64]) -> Result<Vec<SeriesRow>, Error> {
        self.series_of_runs_where(runs, |_| true).await
    }

    /// [`Store::series_of_runs`] of the metrics `keep` accepts, from the blocks
    /// ([`Store::visit_series_of_runs`]) rather than the `series` view: a row per series (each
    /// handed over by the database's connection with its columns copied) took a comparison of
    /// two 64-CPU profiles 117 s and 14 GB.
    #[cfg(feature = "test-support")]
    pub async fn series_of_runs_where(
        &self,
        runs: &[i64],
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<SeriesRow>, Error> {
        let mut out = Vec::new();
        self.visit_series_of_runs(runs, keep, |b| {
            let unit = ingest::model::Unit::from(b.unit.to_string());
            out.extend(b.series.iter().map(|s| SeriesRow {
                id: s.id,
                benchmark: b.benchmark.to_string(),
                params_key: b.params_key.to_string(),
                metric: b.metric.to_string(),
                scope: s.scope.to_string(),
                statistic: b.statistic.map(str::to_string),
                label: b.label.map(str::to_string),
                unit: unit.clone(),
                direction: b.direction,
            }));
        })
        .await?;
        Ok(out)
    }

    /// The series of these runs whose metric `keep` accepts, a block at a time, each with
    /// its samples (as [`Store::series_values`] gives them), listed as the `series` view lists
    /// them: id `block << 16 | position`, names by id, a series whose metric, unit, direction
    /// or scope has no stored name left out, a missing label or statistic name read as none.
    /// `keep` is asked once per block (a metric is the block's). No string per series and no
    /// id per sample: comparing two 64-CPU profiles reads 9.8 M series.
    pub async fn visit_series_of_runs(
        &self,
        runs: &[i64],
        keep: impl Fn(&str) -> bool,
        mut visit: impl FnMut(&StoredBlock<'_>),
    ) -> Result<(), Error> {
        for chunk in runs.chunks(CHUNK) {
            let (blocks, names) = self.blocks_of(chunk).await?;
            for b in &blocks {
                let Some(block) = b.resolve(&names, &keep) else {
                    continue;
                };
                let split = crate::read::split_decoded(&b.counts, &b.vals)?;
                let series = block
                    .scopes
                    .iter()
                    .enumerate()
                    .filter_map(|(pos, scope)| {
                        Some(StoredSeries {
                            id: (b.id << 16) | pos as i64,
                            scope: (*scope)?,
                            samples: split.get(pos)?,
                        })
                    })
                    .collect();
                visit(&StoredBlock {
                    benchmark: &b.benchmark,
                    params_key: &b.params_key,
                    metric: block.metric,
                    unit: block.unit,
                    direction: block.direction,
                    statistic: block.statistic,
                    label: block.label,
                    series,
                });
            }
        }
        Ok(())
    }

    /// The blocks of these runs (at most [`CHUNK`]) in id order with their samples, and every
    /// name they refer to, by id.
    async fn blocks_of(
        &self,
        runs: &[i64],
    ) -> Result<(Vec<SeriesBlock>, HashMap<i64, String>), Error> {
        let sql = format!(
            "SELECT sb.id, r.benchmark, r.params_key, sb.metric_id, sb.unit_id, sb.direction_id, \
                    sb.label_id, sb.statistic_id, sb.series, sb.vals \
             FROM series_block sb JOIN runs r ON r.id = sb.run_id WHERE sb.run_id IN ({}) ORDER BY sb.id",
            placeholders(runs.len())
        );
        let mut blocks: Vec<SeriesBlock> = with_pool!(self, |pool| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql));
            for id in runs {
                q = q.bind(id);
            }
            q.fetch_all(pool).await?
        });
        let mut ids: Vec<i64> = Vec::new();
        for b in &mut blocks {
            b.counts = crate::blocks::decode_series(&b.series)?;
            ids.extend([b.metric_id, b.unit_id, b.direction_id]);
            ids.extend(b.label_id);
            ids.extend(b.statistic_id);
            ids.extend(b.counts.iter().map(|&(scope, _)| i64::from(scope)));
        }
        let names = self.names_by_id(ids).await?;
        Ok((blocks, names))
    }

    /// The first `limit` latency artifacts of these runs (all when negative), by run and
    /// sequence.
    pub async fn latency_artifacts(
        &self,
        runs: &[i64],
        limit: i64,
    ) -> Result<Vec<LatencyArtifact>, Error> {
        with_pool!(self, |pool| {
            let ids_json = serde_json::to_string(runs).unwrap_or_else(|_| "[]".into());
            let rows = sqlx::query(AssertSqlSafe(format!(
                "SELECT ra.run_id, ra.seq, ra.file_name, ra.meta_json, ra.extra_json FROM run_artifacts ra \
                 WHERE ra.format = 'latency' AND ra.run_id IN {} \
                 ORDER BY ra.run_id, ra.seq LIMIT $2",
                crate::engine::json_ids(self.is_postgres(), 1)
            )))
            .bind(ids_json)
            .bind(crate::engine::limit(limit))
            .fetch_all(pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|r| LatencyArtifact {
                    run_id: r.get(0),
                    seq: r.get(1),
                    file_name: r.get(2),
                    meta_json: r.get(3),
                    extra_json: r.get(4),
                })
                .collect())
        })
    }

    /// The plain `latency` samples of each of these runs (no label, no statistic), in stored
    /// order.
    pub async fn latency_samples(&self, runs: &[i64]) -> Result<HashMap<i64, Vec<f64>>, Error> {
        with_pool!(self, |pool| {
            let ids_json = serde_json::to_string(runs).unwrap_or_else(|_| "[]".into());
            let rows: Vec<(i64, i64)> = sqlx::query_as(AssertSqlSafe(format!(
                "SELECT se.id, se.run_id FROM series se \
                 WHERE se.run_id IN {} AND se.metric = 'latency' \
                   AND se.label IS NULL AND se.statistic IS NULL ORDER BY se.run_id, se.id",
                crate::engine::json_ids(self.is_postgres(), 1)
            )))
            .bind(ids_json)
            .fetch_all(pool)
            .await?;
            let run_of: HashMap<i64, i64> = rows.iter().copied().collect();
            let ids: Vec<i64> = rows.iter().map(|&(id, _)| id).collect();
            let mut out: HashMap<i64, Vec<f64>> = HashMap::new();
            for (id, values) in self.series_values(&ids).await? {
                out.entry(run_of[&id]).or_default().extend(values);
            }
            Ok(out)
        })
    }
}

/// `$1,$2,...,$n`: the placeholders of an `IN (...)` list.
pub(crate) fn placeholders(n: usize) -> String {
    let mut s = String::with_capacity(n * 6);
    for i in 1..=n {
        if i > 1 {
            s.push(',');
        }
        s.push('$');
        s.push_str(&i.to_string());
    }
    s
}
