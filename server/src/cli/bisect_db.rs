//! Everything `bisect-step` and `bisect-log` ask of the database, in one place: build
//! references, the runs of a step, and the record of each step (the store's `bisect_steps`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use compare::bisect::Look;
use store::{BuildMeta, InputFile, NewStep, RunMeta, Store};

use super::bisect::{RefSeries, SeriesName};
use crate::report::{self, Selection};

/// Opens (creating and migrating) the database at `path` (a file or a PostgreSQL URL).
pub async fn open(path: &Path) -> anyhow::Result<Store> {
    Store::open(&path.to_string_lossy()).await.with_context(|| {
        format!(
            "opening database {}",
            crate::config::show_db(&path.to_string_lossy())
        )
    })
}

/// The sample series of a build (label or commit id), pooled over its runs on `machine` (any
/// machine when None), restricted to metrics matching `metric`.
pub async fn reference(
    store: &Store,
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
    let r = report::build(store, &sel, &compare::Settings::default(), None, false)
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
pub async fn record_step(store: &Store, step: &StepRecord) -> anyhow::Result<i64> {
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
        let outcome = store.import_run(&meta, &files, None).await?;
        run_id = outcome.run_ids.first().copied();
    }
    let look = step.look.as_ref();
    let label = step.label();
    let id = store
        .insert_bisect_step(&NewStep {
            commit: &step.commit,
            build_label: &label,
            machine: &step.machine,
            benchmark: &step.benchmark,
            series: &step.series,
            good_ref: &step.good_ref,
            bad_ref: &step.bad_ref,
            runs: step.runs as i64,
            samples: look.map_or(0, |l| l.n as i64),
            median: look.and_then(|l| l.median),
            good_median: step.good_median,
            bad_median: step.bad_median,
            p_good: look.map(|l| l.vs_good.p),
            p_bad: look.map(|l| l.vs_bad.p),
            level: look.map(|l| l.level),
            verdict: step.verdict,
            run_id,
        })
        .await?;
    Ok(id)
}
