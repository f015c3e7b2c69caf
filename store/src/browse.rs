//! Reads behind the pages, the API and the `runs`/`artifact` commands: builds, machines,
//! benchmarks and the totals the home page shows.

use std::collections::BTreeMap;

use serde::Serialize;
use sqlx::Row as _;

use crate::with_pool;
use crate::{Error, Store};

/// A build with how much is stored for it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct BuildSummary {
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub runs: i64,
    pub machines: i64,
    pub benchmarks: i64,
    pub created_at: i64,
}

/// What is known about a kernel under test.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Build {
    #[serde(skip)]
    pub id: i64,
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub config: Option<String>,
    pub cmdline: Option<String>,
    pub created_at: i64,
}

/// Runs of one build (or on one machine) per benchmark.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct BenchmarkCount {
    pub benchmark: String,
    pub runs: i64,
}

/// A benchmark and how much of it is stored.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct BenchmarkSummary {
    pub name: String,
    pub runs: i64,
    pub builds: i64,
    pub machines: i64,
}

/// A machine, its facts and how much ran on it.
#[derive(Debug, Clone, Serialize)]
pub struct MachineSummary {
    pub name: String,
    pub facts: BTreeMap<String, String>,
    pub runs: i64,
    pub builds: i64,
    pub created_at: i64,
}

/// One machine with the benchmarks and builds that ran on it.
#[derive(Debug, Clone)]
pub struct MachineInfo {
    pub summary: MachineSummary,
    pub benchmarks: Vec<String>,
    /// Newest first.
    pub build_labels: Vec<String>,
}

/// One build with what ran of it.
#[derive(Debug, Clone)]
pub struct BuildInfoDetail {
    pub build: Build,
    pub benchmarks: Vec<BenchmarkCount>,
    pub machines: Vec<String>,
}

const BUILD_COLUMNS: &str = "SELECT id, label, commit_sha AS \"commit\", kernel_version, config, cmdline, created_at FROM builds";

impl Store {
    /// All builds, newest first.
    pub async fn build_summaries(&self) -> Result<Vec<BuildSummary>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_as::<_, BuildSummary>(
                "SELECT b.label, b.commit_sha AS \"commit\", b.kernel_version, b.created_at, \
                        COUNT(r.id) AS runs, COUNT(DISTINCT r.machine_id) AS machines, \
                        COUNT(DISTINCT r.benchmark) AS benchmarks \
                 FROM builds b LEFT JOIN runs r ON r.build_id = b.id \
                 GROUP BY b.id ORDER BY b.created_at DESC, b.id DESC",
            )
            .fetch_all(pool)
            .await?)
        })
    }

    /// A build by exact label, with its benchmarks (runs per benchmark) and machines.
    pub async fn build_by_label(&self, label: &str) -> Result<Option<BuildInfoDetail>, Error> {
        with_pool!(self, |pool| {
            let Some(build) = sqlx::query_as::<_, Build>(sqlx::AssertSqlSafe(format!(
                "{BUILD_COLUMNS} WHERE label = $1"
            )))
            .bind(label)
            .fetch_optional(pool)
            .await?
            else {
                return Ok(None);
            };
            let benchmarks = sqlx::query_as::<_, BenchmarkCount>(
                "SELECT benchmark, COUNT(*) AS runs FROM runs WHERE build_id = $1 \
                 GROUP BY benchmark ORDER BY benchmark",
            )
            .bind(build.id)
            .fetch_all(pool)
            .await?;
            let machines: Vec<String> = sqlx::query_scalar(
                "SELECT m.name FROM machines m WHERE m.id IN \
                 (SELECT DISTINCT machine_id FROM runs WHERE build_id = $1) ORDER BY m.name",
            )
            .bind(build.id)
            .fetch_all(pool)
            .await?;
            Ok(Some(BuildInfoDetail {
                build,
                benchmarks,
                machines,
            }))
        })
    }

    /// A build by id.
    pub async fn build_by_id(&self, id: i64) -> Result<Option<Build>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_as::<_, Build>(sqlx::AssertSqlSafe(format!(
                "{BUILD_COLUMNS} WHERE id = $1"
            )))
            .bind(id)
            .fetch_optional(pool)
            .await?)
        })
    }

    /// Every benchmark with its run, build and machine counts, by name.
    pub async fn benchmark_summaries(&self) -> Result<Vec<BenchmarkSummary>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_as::<_, BenchmarkSummary>(
                "SELECT benchmark AS name, COUNT(*) AS runs, COUNT(DISTINCT build_id) AS builds, \
                        COUNT(DISTINCT machine_id) AS machines \
                 FROM runs GROUP BY benchmark ORDER BY benchmark",
            )
            .fetch_all(pool)
            .await?)
        })
    }

    /// The number of samples stored, over every series.
    pub async fn total_samples(&self) -> Result<i64, Error> {
        with_pool!(self, |pool| {
            Ok(
                sqlx::query_scalar("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM series_block")
                    .fetch_one(pool)
                    .await?,
            )
        })
    }

    /// All machines by name.
    pub async fn machine_summaries(&self) -> Result<Vec<MachineSummary>, Error> {
        with_pool!(self, |pool| {
            let rows = sqlx::query(
                "SELECT m.id, m.name, m.created_at, COUNT(r.id), COUNT(DISTINCT r.build_id) \
                 FROM machines m LEFT JOIN runs r ON r.machine_id = m.id \
                 GROUP BY m.id ORDER BY m.name",
            )
            .fetch_all(pool)
            .await?;
            let mut facts = self.machine_facts(None).await?;
            Ok(rows
                .into_iter()
                .map(|r| MachineSummary {
                    facts: facts.remove(&r.get::<i64, _>(0)).unwrap_or_default(),
                    name: r.get(1),
                    created_at: r.get(2),
                    runs: r.get(3),
                    builds: r.get(4),
                })
                .collect())
        })
    }

    /// A machine by name, with its benchmarks and builds; `None` when it does not exist.
    pub async fn machine(&self, name: &str) -> Result<Option<MachineInfo>, Error> {
        with_pool!(self, |pool| {
            let Some(row) = sqlx::query(
                "SELECT m.id, m.created_at, COUNT(r.id), COUNT(DISTINCT r.build_id) \
                 FROM machines m LEFT JOIN runs r ON r.machine_id = m.id WHERE m.name = $1 GROUP BY m.id",
            )
            .bind(name)
            .fetch_optional(pool)
            .await?
            else {
                return Ok(None);
            };
            let id: i64 = row.get(0);
            let benchmarks: Vec<String> = sqlx::query_scalar(
                "SELECT DISTINCT benchmark FROM runs WHERE machine_id = $1 ORDER BY benchmark",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            let build_labels: Vec<String> = sqlx::query_scalar(
                "SELECT label FROM builds WHERE id IN (SELECT DISTINCT build_id FROM runs WHERE machine_id = $1) \
                 ORDER BY created_at DESC, id DESC",
            )
            .bind(id)
            .fetch_all(pool)
            .await?;
            Ok(Some(MachineInfo {
                summary: MachineSummary {
                    name: name.to_string(),
                    facts: self
                        .machine_facts(Some(id))
                        .await?
                        .remove(&id)
                        .unwrap_or_default(),
                    created_at: row.get(1),
                    runs: row.get(2),
                    builds: row.get(3),
                },
                benchmarks,
                build_labels,
            }))
        })
    }

    /// Facts per machine id: of one machine, or of all.
    pub(crate) async fn machine_facts(
        &self,
        machine_id: Option<i64>,
    ) -> Result<BTreeMap<i64, BTreeMap<String, String>>, Error> {
        with_pool!(self, |pool| {
            let rows = sqlx::query(
                "SELECT machine_id, key, value FROM machine_facts \
                 WHERE $1 IS NULL OR machine_id = $1 ORDER BY machine_id, key",
            )
            .bind(machine_id)
            .fetch_all(pool)
            .await?;
            let mut out: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
            for r in rows {
                out.entry(r.get(0)).or_default().insert(r.get(1), r.get(2));
            }
            Ok(out)
        })
    }
}
