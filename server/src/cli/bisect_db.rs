//! Everything `bisect-step` and `bisect-log` ask of the database, in one place: build
//! references, the runs of a step, and the record of each step (`bisect_steps`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use compare::bisect::Look;
use sqlx::{Row, SqlitePool};
use store::{BuildMeta, InputFile, RunMeta};

use super::bisect::{RefSeries, SeriesName};
use crate::report::{self, Selection};

/// The step records. Created on first use, so a database made before bisection existed
/// gains the table when it is first bisected with.
const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS bisect_steps (
    id INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,
    commit_sha TEXT NOT NULL,
    build_label TEXT NOT NULL,
    machine TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    series TEXT NOT NULL,
    good_ref TEXT NOT NULL,
    bad_ref TEXT NOT NULL,
    runs INTEGER NOT NULL,
    samples INTEGER NOT NULL,
    median REAL,
    good_median REAL,
    bad_median REAL,
    p_good REAL,
    p_bad REAL,
    level REAL,
    verdict TEXT NOT NULL,
    run_id INTEGER REFERENCES runs(id)
)";

pub async fn open(path: &Path) -> anyhow::Result<SqlitePool> {
    let pool = store::Store::open(&path.display().to_string())
        .await
        .with_context(|| format!("opening database {}", path.display()))?
        .sqlite_pool()
        .clone();
    sqlx::query(SCHEMA).execute(&pool).await?;
    Ok(pool)
}

/// The sample series of a build (label or commit id), pooled over its runs on `machine` (any
/// machine when None), restricted to metrics matching `metric`.
pub async fn reference(
    pool: &SqlitePool,
    build: &str,
    machine: Option<&str>,
    metric: Option<&str>,
) -> anyhow::Result<Vec<RefSeries>> {
    // A build compared with itself: each row's base samples are the build's pooled samples.
    let sel = Selection {
        base: build.to_string(),
        head: build.to_string(),
        benchmark: None,
        machine: machine.map(str::to_string),
        metric: metric.map(str::to_string),
    };
    let r = report::build(pool, &sel, &compare::Settings::default(), None)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if r.base.run_ids.is_empty() {
        anyhow::bail!(
            "build {build:?} has no runs{}",
            machine.map_or(String::new(), |m| format!(" on machine {m:?}"))
        );
    }
    Ok(r.comparisons
        .into_iter()
        .filter(|row| row.statistic.is_none())
        .map(|row| RefSeries {
            name: SeriesName {
                metric: row.metric,
                scope: row.scope,
                label: row.label,
                params: row.params,
            },
            benchmark: Some(row.benchmark),
            unit: row.unit.to_string(),
            samples: row.base_samples,
        })
        .collect())
}

/// One step as it is stored.
pub struct StepRecord {
    pub commit: String,
    pub machine: String,
    pub benchmark: String,
    pub series: String,
    pub good_ref: String,
    pub bad_ref: String,
    pub format: Option<String>,
    /// CMD's stdout, one entry per run.
    pub outputs: Vec<Vec<u8>>,
    pub runs: usize,
    pub good_median: Option<f64>,
    pub bad_median: Option<f64>,
    pub look: Option<Look>,
    pub verdict: &'static str,
}

impl StepRecord {
    /// `bisect-<first 12 hex digits of the commit>`.
    pub fn label(&self) -> String {
        format!(
            "bisect-{}",
            self.commit.chars().take(12).collect::<String>()
        )
    }
}

/// Stores the step's runs (one run, one artifact per CMD run) under build `bisect-<commit>`,
/// then the step's record; returns the record's id.
pub async fn record_step(pool: &SqlitePool, step: &StepRecord) -> anyhow::Result<i64> {
    let mut run_id = None;
    if !step.outputs.is_empty() {
        let meta = RunMeta {
            build: BuildMeta {
                label: step.label(),
                commit: Some(step.commit.clone()),
                kernel_version: None,
                config: None,
                cmdline: None,
            },
            machine: step.machine.clone(),
            machine_facts: BTreeMap::new(),
            benchmark: step.benchmark.clone(),
            params: BTreeMap::new(),
            token_id: None,
            block: None,
        };
        let files: Vec<InputFile> = step
            .outputs
            .iter()
            .enumerate()
            .map(|(i, out)| {
                InputFile::bytes(
                    format!("run-{}.txt", i + 1),
                    out.clone(),
                    step.format.clone(),
                )
            })
            .collect();
        let outcome = store::Store::from_sqlite_pool(pool.clone())
            .import_run(&meta, &files, None)
            .await?;
        run_id = outcome.run_ids.first().copied();
    }
    let look = step.look.as_ref();
    let id = sqlx::query_scalar(
        "INSERT INTO bisect_steps (created_at, commit_sha, build_label, machine, benchmark, series, \
         good_ref, bad_ref, runs, samples, median, good_median, bad_median, p_good, p_bad, level, \
         verdict, run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(store::now())
    .bind(&step.commit)
    .bind(step.label())
    .bind(&step.machine)
    .bind(&step.benchmark)
    .bind(&step.series)
    .bind(&step.good_ref)
    .bind(&step.bad_ref)
    .bind(step.runs as i64)
    .bind(look.map_or(0, |l| l.n as i64))
    .bind(look.and_then(|l| l.median))
    .bind(step.good_median)
    .bind(step.bad_median)
    .bind(look.map(|l| l.vs_good.p))
    .bind(look.map(|l| l.vs_bad.p))
    .bind(look.map(|l| l.level))
    .bind(step.verdict)
    .bind(run_id)
    .fetch_one(pool)
    .await?;
    Ok(id)
}

/// A stored step, as `bisect-log` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct StepRow {
    pub id: i64,
    pub created_at: i64,
    pub commit: String,
    pub build_label: String,
    pub machine: String,
    pub benchmark: String,
    pub series: String,
    pub runs: i64,
    pub median: Option<f64>,
    pub good_median: Option<f64>,
    pub bad_median: Option<f64>,
    pub p_good: Option<f64>,
    pub p_bad: Option<f64>,
    pub verdict: String,
    pub run_id: Option<i64>,
}

/// Stored steps, oldest first; only those at commits starting with `commit` when given.
pub async fn steps(pool: &SqlitePool, commit: Option<&str>) -> anyhow::Result<Vec<StepRow>> {
    let rows = sqlx::query(
        "SELECT id, created_at, commit_sha, build_label, machine, benchmark, series, runs, median, \
         good_median, bad_median, p_good, p_bad, verdict, run_id FROM bisect_steps \
         WHERE ?1 IS NULL OR commit_sha LIKE ?1 || '%' ORDER BY id",
    )
    .bind(commit.map(str::to_ascii_lowercase))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| StepRow {
            id: r.get(0),
            created_at: r.get(1),
            commit: r.get(2),
            build_label: r.get(3),
            machine: r.get(4),
            benchmark: r.get(5),
            series: r.get(6),
            runs: r.get(7),
            median: r.get(8),
            good_median: r.get(9),
            bad_median: r.get(10),
            p_good: r.get(11),
            p_bad: r.get(12),
            verdict: r.get(13),
            run_id: r.get(14),
        })
        .collect())
}
