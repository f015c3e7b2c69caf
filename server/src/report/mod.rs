//! A comparison report: gathers the samples of two builds (or two frozen sets of runs) from the
//! store, pools them per (benchmark, params, metric, scope) and runs the
//! statistics ([`compare::pool`]), and states how the environments differ ([`env`]). The
//! renderers are in the `export` module.

use std::collections::BTreeMap;

use compare::{Direction, SeriesComparison, Settings, Verdict};
use ingest::model::Unit;
use serde::Serialize;
use store::{BuildLookup, Store};

use crate::error::AppError;

mod env;
mod files;
mod held;

pub use env::EnvDiff;
pub use files::{Parsed, compare_parsed, compare_sides};
pub use held::series_of_runs;
pub use store::BuildInfo;

/// What to compare.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Selection {
    /// Base build label or commit id (prefix).
    pub base: String,
    /// Head build label or commit id (prefix).
    pub head: String,
    pub benchmark: Option<String>,
    pub machine: Option<String>,
    /// Glob over metric names (`*` and `?`).
    pub metric: Option<String>,
}

/// One side of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub build: BuildInfo,
    /// The runs whose samples were pooled.
    pub run_ids: Vec<i64>,
    /// Machines those runs executed on.
    pub machines: Vec<String>,
}

/// One compared series.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    pub metric: String,
    /// `all`, `cpuN`, `writerN`..., or `cpus` for per-CPU values pooled as samples.
    pub scope: String,
    pub unit: Unit,
    pub direction: Direction,
    /// Set for pre-computed summaries (`median`, `p99`...): no test is possible.
    pub statistic: Option<String>,
    /// Block label of the input, when the series kept one.
    pub label: Option<String>,
    #[serde(flatten)]
    pub cmp: SeriesComparison,
    #[serde(skip)]
    pub base_samples: Vec<f64>,
    #[serde(skip)]
    pub head_samples: Vec<f64>,
    /// On a pooled per-CPU row (`scope = "cpus"`) when folding ([`compare::pool`]): the
    /// value of each CPU on both sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu: Vec<CpuValues>,
}

/// One CPU's values of a per-CPU series (a trace_stat column); its name is shared between
/// rows, since a profile lists 64 CPUs on each of thousands of rows.
pub type CpuValues = compare::pool::CpuValue<std::sync::Arc<str>>;

impl Row {
    /// `load=idle preempt_off_ms=20`.
    pub fn params_text(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The series name as shown in tables: metric, scope unless `all`, statistic, label.
    pub fn name(&self) -> String {
        let mut s = self.metric.clone();
        if !self.per_cpu.is_empty() {
            s.push_str(&format!(" [{} cpus]", self.per_cpu.len()));
        } else if self.scope != "all" {
            s.push_str(&format!(" [{}]", self.scope));
        }
        if let Some(st) = &self.statistic {
            s.push_str(&format!(" ({st})"));
        }
        if let Some(l) = &self.label {
            s.push_str(&format!(" {{{l}}}"));
        }
        s
    }
}

/// Counts of verdicts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub regressions: usize,
    pub improvements: usize,
    pub increases: usize,
    pub decreases: usize,
    pub unchanged: usize,
    pub not_enough_data: usize,
    pub total: usize,
}

impl Summary {
    /// The changes counted, as the text reports say them: `3 regressions, 1 improvement,
    /// 0 increases, 0 decreases`.
    pub fn changes_text(&self) -> String {
        use crate::format::count;
        format!(
            "{}, {}, {}, {}",
            count(self.regressions, "regression"),
            count(self.improvements, "improvement"),
            count(self.increases, "increase"),
            count(self.decreases, "decrease")
        )
    }
}

/// A whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub base: Side,
    pub head: Side,
    pub settings: Settings,
    pub comparisons: Vec<Row>,
    pub summary: Summary,
    pub env_diff: Vec<EnvDiff>,
    /// For a frozen comparison: runs exist now that the frozen one did not include.
    pub newer_runs: bool,
}

/// Finds a build by label, or by commit id (a unique prefix of at least 7 characters); a
/// missing one is an error naming close labels.
pub async fn find_build(store: &Store, name: &str) -> Result<BuildInfo, AppError> {
    match store.find_build(name).await? {
        BuildLookup::Found(b) => Ok(b),
        BuildLookup::Ambiguous => Err(AppError::BadRequest(format!(
            "commit prefix {name:?} matches several builds; give a longer one or a label"
        ))),
        BuildLookup::Missing => {
            let labels = store.build_labels_newest(200).await?;
            Err(AppError::NotFound(format!(
                "no build {name:?}; {}",
                close_labels_hint(name, &labels)
            )))
        }
    }
}

fn close_labels_hint(name: &str, labels: &[String]) -> String {
    let lower = name.to_lowercase();
    let mut close: Vec<&String> = labels
        .iter()
        .filter(|l| {
            let ll = l.to_lowercase();
            ll.contains(&lower) || lower.contains(&ll) || common_prefix(&ll, &lower) >= 3
        })
        .take(5)
        .collect();
    if close.is_empty() {
        close = labels.iter().take(5).collect();
    }
    if close.is_empty() {
        "no builds are stored yet".to_string()
    } else {
        format!(
            "known builds include: {}",
            close
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Runs of a build matching the selection's filters.
async fn select_runs(store: &Store, label: &str, sel: &Selection) -> Result<Vec<i64>, AppError> {
    Ok(store
        .select_runs(label, sel.benchmark.as_deref(), sel.machine.as_deref())
        .await?)
}

/// Builds the live comparison of two builds. `direction`, when given, overrides what the
/// stored series say is better (before the verdicts are decided). With `fold`, per-CPU series
/// of one value a side appear only inside their pooled `cpus` row ([`compare::pool`]).
pub async fn build(
    store: &Store,
    sel: &Selection,
    settings: &Settings,
    direction: Option<Direction>,
    fold: bool,
) -> Result<Report, AppError> {
    let base = find_build(store, &sel.base).await?;
    let head = find_build(store, &sel.head).await?;
    let base_runs = select_runs(store, &base.label, sel).await?;
    let head_runs = select_runs(store, &head.label, sel).await?;
    let sides = (base, head, base_runs, head_runs);
    assemble(store, sides, sel, settings, direction, false, fold).await
}

/// Builds a comparison over exactly these runs (a frozen, shared comparison), per-CPU series
/// folded as the live page folds them.
pub async fn build_frozen(
    store: &Store,
    base_runs: &[i64],
    head_runs: &[i64],
    sel: &Selection,
    settings: &Settings,
) -> Result<Report, AppError> {
    let base = find_build(store, &sel.base).await?;
    let head = find_build(store, &sel.head).await?;
    let now_base = select_runs(store, &base.label, sel).await?;
    let now_head = select_runs(store, &head.label, sel).await?;
    let newer = now_base.iter().any(|r| !base_runs.contains(r))
        || now_head.iter().any(|r| !head_runs.contains(r));
    let sides = (base, head, base_runs.to_vec(), head_runs.to_vec());
    assemble(store, sides, sel, settings, None, newer, true).await
}

/// The builds and the runs of each side.
type Sides = (BuildInfo, BuildInfo, Vec<i64>, Vec<i64>);

async fn assemble(
    store: &Store,
    (base, head, base_runs, head_runs): Sides,
    sel: &Selection,
    settings: &Settings,
    direction: Option<Direction>,
    newer_runs: bool,
    fold: bool,
) -> Result<Report, AppError> {
    let base_set = gather(store, &base_runs, sel).await?;
    let head_set = gather(store, &head_runs, sel).await?;
    let kept = *settings;
    let (rows, summary) = tokio::task::spawn_blocking(move || {
        compare_sides(base_set, head_set, direction, &kept, fold)
    })
    .await
    .map_err(|e| AppError::Anyhow(anyhow::anyhow!("comparing failed: {e}")))?;
    let base_machines = store.machines_of(&base_runs).await?;
    let head_machines = store.machines_of(&head_runs).await?;
    let env_diff = env::env_diff(&base, &head, &base_machines, &head_machines);
    Ok(Report {
        base: Side {
            build: base,
            run_ids: base_runs,
            machines: base_machines,
        },
        head: Side {
            build: head,
            run_ids: head_runs,
            machines: head_machines,
        },
        settings: *settings,
        comparisons: rows,
        summary,
        env_diff,
        newer_runs,
    })
}

/// Flags multiplexed counters, sorts the rows and counts their verdicts.
fn finish_rows(mut rows: Vec<Row>) -> (Vec<Row>, Summary) {
    flag_multiplexed(&mut rows);
    sort_rows(&mut rows);
    let summary = summarise(&rows);
    (rows, summary)
}

/// Compares two parsed datasets (the blocks of an email): see [`compare_parsed`].
pub fn from_datasets(
    base_name: &str,
    head_name: &str,
    base: ingest::Dataset,
    head: ingest::Dataset,
    direction: Option<Direction>,
    settings: &Settings,
    fold: bool,
) -> Report {
    compare_parsed(
        (base_name, Parsed::from_dataset(base)),
        (head_name, Parsed::from_dataset(head)),
        direction,
        settings,
        fold,
    )
}

fn is_cpu_scope(scope: &str) -> bool {
    scope
        .strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Regressions first (by q), then improvements, then increases/decreases, then the rest.
/// Flags the rows of `perf stat` counters that were multiplexed on either side: their
/// `EVENT.multiplex_pct` share (stored beside the counter) is below 100 somewhere.
fn flag_multiplexed(rows: &mut [Row]) {
    // The rows of counters whose share is below 100 somewhere, by index.
    let partial: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r.metric.ends_with(".multiplex_pct")
                && r.base_samples
                    .iter()
                    .chain(&r.head_samples)
                    .any(|&v| v < 100.0)
        })
        .map(|(i, _)| i)
        .collect();
    let same_series = |share: &Row, r: &Row| {
        share.metric.strip_suffix(".multiplex_pct") == Some(r.metric.as_str())
            && share.benchmark == r.benchmark
            && share.params == r.params
            && share.scope == r.scope
            && share.label == r.label
    };
    let flagged: Vec<usize> = (0..rows.len())
        .filter(|&i| partial.iter().any(|&p| same_series(&rows[p], &rows[i])))
        .collect();
    for i in flagged {
        if !rows[i].cmp.flags.contains(&compare::Flag::Multiplexed) {
            rows[i].cmp.flags.push(compare::Flag::Multiplexed);
        }
    }
}

fn sort_rows(rows: &mut [Row]) {
    let rank = |v: Verdict| match v {
        Verdict::Regression => 0,
        Verdict::Improvement => 1,
        Verdict::Increase | Verdict::Decrease => 2,
        Verdict::NoSignificantChange => 3,
        Verdict::NotEnoughData => 4,
    };
    // Indexes are sorted, each row's parameter text made once: a row is large, and two
    // profiles compare millions of them.
    let params: Vec<String> = rows.iter().map(Row::params_text).collect();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (&rows[i], &rows[j]);
        rank(a.cmp.verdict)
            .cmp(&rank(b.cmp.verdict))
            .then_with(|| {
                let qa = a.cmp.q.or(a.cmp.p).unwrap_or(f64::INFINITY);
                let qb = b.cmp.q.or(b.cmp.p).unwrap_or(f64::INFINITY);
                qa.total_cmp(&qb)
            })
            .then_with(|| a.benchmark.cmp(&b.benchmark))
            .then_with(|| crate::natural(&params[i], &params[j]))
            .then_with(|| a.metric.cmp(&b.metric))
            .then_with(|| crate::natural(&a.scope, &b.scope))
            // A total order: rows are built from hash maps.
            .then_with(|| a.statistic.cmp(&b.statistic))
            .then_with(|| a.label.cmp(&b.label))
    });
    // In place, cycle by cycle: position `j` takes the row at `order[j]`.
    for i in 0..rows.len() {
        let mut j = i;
        while order[j] != i {
            let next = order[j];
            rows.swap(j, next);
            order[j] = j;
            j = next;
        }
        order[j] = j;
    }
}

pub fn parse_params_key(k: &str) -> BTreeMap<String, String> {
    k.split('&')
        .filter(|s| !s.is_empty())
        .filter_map(|kv| kv.split_once('='))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Matches `*` and `?` wildcards.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// The series and samples of one side's runs, in stored order (the order of samples within a
/// series is what the bootstrap draws from), interned as a file's are.
async fn gather(store: &Store, runs: &[i64], sel: &Selection) -> Result<Parsed, AppError> {
    let mut set = Parsed::new(None);
    let keep = |metric: &str| sel.metric.as_ref().is_none_or(|g| glob_match(g, metric));
    store
        .visit_series_of_runs(runs, keep, |block| set.stored(block))
        .await?;
    Ok(set)
}

fn summarise(rows: &[Row]) -> Summary {
    let mut summary = Summary {
        total: rows.len(),
        ..Summary::default()
    };
    for r in rows {
        match r.cmp.verdict {
            Verdict::Regression => summary.regressions += 1,
            Verdict::Improvement => summary.improvements += 1,
            Verdict::Increase => summary.increases += 1,
            Verdict::Decrease => summary.decreases += 1,
            Verdict::NoSignificantChange => summary.unchanged += 1,
            Verdict::NotEnoughData => summary.not_enough_data += 1,
        }
    }
    summary
}
