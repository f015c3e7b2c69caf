//! A comparison report: gathers the samples of two builds (or two frozen sets of runs) from the
//! database, pools them per (benchmark, params, metric, scope), runs the statistics, and renders
//! the result as JSON, CSV, Markdown, terminal text or email text.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use compare::{Direction, SeriesComparison, Settings, Verdict};
use ingest::model::FastMap;
use polars::prelude::*;
use serde::Serialize;
use sqlx::{Row as _, SqlitePool};

use crate::cli::{human, sig};
use crate::error::AppError;

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

/// A build as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildInfo {
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub config: Option<String>,
    pub cmdline: Option<String>,
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

/// A difference between the environments of base and head other than the samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDiff {
    /// `commit`, `kernel_version`, `config`, `cmdline`, `machine`, or `CONFIG_FOO` for a
    /// config line that differs.
    pub field: String,
    pub base: String,
    pub head: String,
}

/// One compared series.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    pub metric: String,
    /// `all`, `cpuN`, `writerN`..., or `cpus` for per-CPU values pooled as samples.
    pub scope: String,
    pub unit: String,
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
    /// On a pooled per-CPU row (`scope = "cpus"`) folded by [`Report::fold_per_cpu`]: the
    /// value of each CPU on both sides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_cpu: Vec<CpuValues>,
}

/// One CPU's values of a per-CPU series (a trace_stat column).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuValues {
    pub scope: String,
    pub base: Option<f64>,
    pub head: Option<f64>,
}

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

/// Finds a build by label, or by commit id (a unique prefix of at least 7 characters).
pub async fn find_build(pool: &SqlitePool, name: &str) -> Result<BuildInfo, AppError> {
    let q = "SELECT label, commit_sha, kernel_version, config, cmdline FROM builds ";
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{q} WHERE label = ?")))
        .bind(name)
        .fetch_optional(pool)
        .await?;
    let row = match row {
        Some(r) => Some(r),
        None if name.len() >= 7 && name.bytes().all(|b| b.is_ascii_hexdigit()) => {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "{q} WHERE commit_sha LIKE ? || '%' LIMIT 2"
            )))
            .bind(name.to_ascii_lowercase())
            .fetch_all(pool)
            .await?;
            if rows.len() > 1 {
                return Err(AppError::BadRequest(format!(
                    "commit prefix {name:?} matches several builds; give a longer one or a label"
                )));
            }
            rows.into_iter().next()
        }
        None => None,
    };
    let Some(row) = row else {
        let labels: Vec<String> =
            sqlx::query_scalar("SELECT label FROM builds ORDER BY created_at DESC LIMIT 200")
                .fetch_all(pool)
                .await?;
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
        let hint = if close.is_empty() {
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
        };
        return Err(AppError::NotFound(format!("no build {name:?}; {hint}")));
    };
    Ok(BuildInfo {
        label: row.get(0),
        commit: row.get(1),
        kernel_version: row.get(2),
        config: row.get(3),
        cmdline: row.get(4),
    })
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

/// Runs of a build matching the selection's filters.
async fn select_runs(
    pool: &SqlitePool,
    label: &str,
    sel: &Selection,
) -> Result<Vec<i64>, AppError> {
    let ids = sqlx::query_scalar(
        "SELECT r.id FROM runs r JOIN builds b ON b.id = r.build_id JOIN machines m ON m.id = r.machine_id \
         WHERE b.label = ?1 AND (?2 IS NULL OR r.benchmark = ?2) AND (?3 IS NULL OR m.name = ?3) ORDER BY r.id",
    )
    .bind(label)
    .bind(&sel.benchmark)
    .bind(&sel.machine)
    .fetch_all(pool)
    .await?;
    Ok(ids)
}

/// Builds the live comparison of two builds.
pub async fn build(
    pool: &SqlitePool,
    sel: &Selection,
    settings: &Settings,
) -> Result<Report, AppError> {
    let base = find_build(pool, &sel.base).await?;
    let head = find_build(pool, &sel.head).await?;
    let base_runs = select_runs(pool, &base.label, sel).await?;
    let head_runs = select_runs(pool, &head.label, sel).await?;
    assemble(pool, base, head, base_runs, head_runs, sel, settings, false).await
}

/// Builds a comparison over exactly these runs (a frozen, shared comparison).
pub async fn build_frozen(
    pool: &SqlitePool,
    base_runs: &[i64],
    head_runs: &[i64],
    sel: &Selection,
    settings: &Settings,
) -> Result<Report, AppError> {
    let base = find_build(pool, &sel.base).await?;
    let head = find_build(pool, &sel.head).await?;
    let now_base = select_runs(pool, &base.label, sel).await?;
    let now_head = select_runs(pool, &head.label, sel).await?;
    let newer = now_base.iter().any(|r| !base_runs.contains(r))
        || now_head.iter().any(|r| !head_runs.contains(r));
    assemble(
        pool,
        base,
        head,
        base_runs.to_vec(),
        head_runs.to_vec(),
        sel,
        settings,
        newer,
    )
    .await
}

/// Identity of a pooled series.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    benchmark: String,
    params_key: String,
    metric: String,
    scope: String,
    statistic: Option<String>,
    label: Option<String>,
}

#[derive(Clone)]
struct KeyInfo {
    unit: std::sync::Arc<str>,
    direction: std::sync::Arc<str>,
}

#[allow(clippy::too_many_arguments)]
async fn assemble(
    pool: &SqlitePool,
    base: BuildInfo,
    head: BuildInfo,
    base_runs: Vec<i64>,
    head_runs: Vec<i64>,
    sel: &Selection,
    settings: &Settings,
    newer_runs: bool,
) -> Result<Report, AppError> {
    let (keys, infos, frame) = gather(pool, &base_runs, &head_runs, sel).await?;
    // Group the samples with polars: (key, side) -> list of values.
    let grouped = tokio::task::spawn_blocking(move || group_samples(frame))
        .await
        .map_err(|e| AppError::Anyhow(anyhow::anyhow!("grouping failed: {e}")))?
        .map_err(|e| AppError::Anyhow(anyhow::anyhow!("grouping samples: {e}")))?;

    let (rows, summary) = rows_from_groups(&keys, &infos, grouped, settings, false);
    let base_machines = machines_of(pool, &base_runs).await?;
    let head_machines = machines_of(pool, &head_runs).await?;
    let env_diff = env_diff(&base, &head, &base_machines, &head_machines);
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

/// Compares every key present on both sides, pools per-CPU values, applies BH and sorts.
fn rows_from_groups(
    keys: &[Key],
    infos: &[KeyInfo],
    mut grouped: Grouped,
    settings: &Settings,
    fold: bool,
) -> (Vec<Row>, Summary) {
    /// Per-CPU values of one (benchmark, params, metric, statistic, label), pooled.
    struct Pool {
        info: usize,
        base: Vec<f64>,
        head: Vec<f64>,
        cpus: Vec<CpuValues>,
    }
    let mut rows = Vec::new();
    let mut per_cpu_pool: FastMap<Key, Pool> = FastMap::default();
    for (kid, key) in keys.iter().enumerate() {
        let (b, h) = match grouped.remove(&(kid as u32)) {
            Some(v) => v,
            None => continue,
        };
        if b.is_empty() || h.is_empty() {
            continue; // present on one side only
        }
        if is_cpu_scope(&key.scope) && key.statistic.is_none() {
            let pool = per_cpu_pool
                .entry(Key {
                    scope: "cpus".into(),
                    ..key.clone()
                })
                .or_insert_with(|| Pool {
                    info: kid,
                    base: Vec::new(),
                    head: Vec::new(),
                    cpus: Vec::new(),
                });
            let (mb, mh) = (median_of(&b), median_of(&h));
            pool.base.push(mb);
            pool.head.push(mh);
            // One value a side (a single trace_stat run): the pooled row carries it.
            if fold && b.len() == 1 && h.len() == 1 {
                pool.cpus.push(CpuValues {
                    scope: key.scope.clone(),
                    base: Some(mb),
                    head: Some(mh),
                });
                continue;
            }
        }
        rows.push(make_row(key, &infos[kid], b, h, settings, false));
    }
    for (key, pool) in per_cpu_pool {
        if pool.base.len() < 2 {
            continue;
        }
        let mut row = make_row(
            &key,
            &infos[pool.info],
            pool.base,
            pool.head,
            settings,
            true,
        );
        let mut cpus = pool.cpus;
        cpus.sort_by(|a, b| crate::natural(&a.scope, &b.scope));
        row.per_cpu = cpus;
        rows.push(row);
    }

    // q-values and verdicts across the whole comparison.
    let mut cmps: Vec<SeriesComparison> = rows.iter().map(|r| r.cmp.clone()).collect();
    let dirs: Vec<Direction> = rows.iter().map(|r| r.direction).collect();
    compare::finish(&mut cmps, |i| dirs[i], settings);
    for (r, c) in rows.iter_mut().zip(cmps) {
        r.cmp = c;
    }
    sort_rows(&mut rows);
    let summary = summarise(&rows);
    (rows, summary)
}

/// Compares two parsed files (`quiescent compare A.txt B.txt`): series match by metric,
/// scope, statistic, block label and parameters. `direction`, when given, overrides what the
/// parsers say is better.
pub fn from_datasets(
    base_name: &str,
    head_name: &str,
    base: ingest::Dataset,
    head: ingest::Dataset,
    direction: Option<Direction>,
    settings: &Settings,
    fold: bool,
) -> Report {
    // One map from key to id (the keys are listed from it at the end, not stored twice), and
    // units and directions shared: a 64-CPU profile has millions of series.
    let mut index: FastMap<Key, u32> = FastMap::default();
    let mut infos: Vec<KeyInfo> = Vec::new();
    let mut interned: HashMap<(String, String), KeyInfo> = HashMap::new();
    let mut grouped: Grouped = FastMap::default();
    for (is_head, ds) in [(false, base), (true, head)] {
        // Samples are moved, not copied: 1,000,000 vs 1,000,000 numbers must stay small.
        for s in ds.series {
            let spec = s.spec;
            let key = Key {
                benchmark: String::new(),
                params_key: store::params_key(&spec.key.params),
                metric: spec.key.metric,
                scope: spec.key.scope,
                statistic: spec.key.statistic,
                label: spec.key.label,
            };
            let next = index.len() as u32;
            let kid = *index.entry(key).or_insert_with(|| {
                let unit = spec.unit.as_str().to_string();
                let dir = match direction {
                    Some(d) => direction_str(d).to_string(),
                    None => spec.direction.as_str().to_string(),
                };
                let info = interned
                    .entry((unit.clone(), dir.clone()))
                    .or_insert_with(|| KeyInfo {
                        unit: unit.into(),
                        direction: dir.into(),
                    })
                    .clone();
                infos.push(info);
                next
            });
            let e = grouped.entry(kid).or_default();
            let side = if is_head { &mut e.1 } else { &mut e.0 };
            if side.is_empty() {
                *side = s.samples;
            } else {
                side.extend_from_slice(&s.samples);
            }
        }
    }
    let mut slots: Vec<Option<Key>> = vec![None; index.len()];
    for (k, id) in index {
        slots[id as usize] = Some(k);
    }
    let keys: Vec<Key> = slots.into_iter().flatten().collect();
    let (rows, summary) = rows_from_groups(&keys, &infos, grouped, settings, fold);
    let side = |name: &str| Side {
        build: BuildInfo {
            label: name.to_string(),
            commit: None,
            kernel_version: None,
            config: None,
            cmdline: None,
        },
        run_ids: Vec::new(),
        machines: Vec::new(),
    };
    Report {
        base: side(base_name),
        head: side(head_name),
        settings: *settings,
        comparisons: rows,
        summary,
        env_diff: Vec::new(),
        newer_runs: false,
    }
}

fn is_cpu_scope(scope: &str) -> bool {
    scope
        .strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn median_of(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn direction_of(s: &str) -> Direction {
    match s {
        "higher_is_better" => Direction::HigherIsBetter,
        "neutral" => Direction::Neutral,
        _ => Direction::LowerIsBetter,
    }
}

fn make_row(
    key: &Key,
    info: &KeyInfo,
    b: Vec<f64>,
    h: Vec<f64>,
    settings: &Settings,
    per_cpu: bool,
) -> Row {
    let direction = direction_of(&info.direction);
    let cmp = if key.statistic.is_some() {
        let mut c = compare::summary_only(Some(median_of(&b)), Some(median_of(&h)), direction);
        // n counts the summary values (one per run), so a page can say what it rests on.
        c.base.n = b.len();
        c.head.n = h.len();
        c
    } else if per_cpu {
        // Per-CPU values of one run are not resamples of a run-to-run distribution: the
        // distribution-free Hodges-Lehmann interval fits them, and costs far less than a
        // bootstrap over the thousands of functions a profile holds.
        let hl = Settings {
            bootstrap_resamples: 0,
            ..*settings
        };
        compare::compare_series(&b, &h, direction, &hl, true)
    } else {
        compare::compare_series(&b, &h, direction, settings, false)
    };
    Row {
        benchmark: key.benchmark.clone(),
        params: parse_params_key(&key.params_key),
        metric: key.metric.clone(),
        scope: key.scope.clone(),
        unit: info.unit.to_string(),
        direction,
        statistic: key.statistic.clone(),
        label: key.label.clone(),
        cmp,
        base_samples: b,
        head_samples: h,
        per_cpu: Vec::new(),
    }
}

/// Regressions first (by q), then improvements, then increases/decreases, then the rest.
fn sort_rows(rows: &mut [Row]) {
    let rank = |v: Verdict| match v {
        Verdict::Regression => 0,
        Verdict::Improvement => 1,
        Verdict::Increase | Verdict::Decrease => 2,
        Verdict::NoSignificantChange => 3,
        Verdict::NotEnoughData => 4,
    };
    rows.sort_by(|a, b| {
        rank(a.cmp.verdict)
            .cmp(&rank(b.cmp.verdict))
            .then_with(|| {
                let qa = a.cmp.q.or(a.cmp.p).unwrap_or(f64::INFINITY);
                let qb = b.cmp.q.or(b.cmp.p).unwrap_or(f64::INFINITY);
                qa.total_cmp(&qb)
            })
            .then_with(|| a.benchmark.cmp(&b.benchmark))
            .then_with(|| crate::natural(&a.params_text(), &b.params_text()))
            .then_with(|| a.metric.cmp(&b.metric))
            .then_with(|| crate::natural(&a.scope, &b.scope))
            // A total order: rows are built from hash maps.
            .then_with(|| a.statistic.cmp(&b.statistic))
            .then_with(|| a.label.cmp(&b.label))
    });
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

type Gathered = (Vec<Key>, Vec<KeyInfo>, DataFrame);

/// Reads the series and samples of both sides: keys are interned, samples land in a frame of
/// (key id, side, value).
async fn gather(
    pool: &SqlitePool,
    base_runs: &[i64],
    head_runs: &[i64],
    sel: &Selection,
) -> Result<Gathered, AppError> {
    let mut keys: Vec<Key> = Vec::new();
    let mut infos: Vec<KeyInfo> = Vec::new();
    let mut key_index: FastMap<Key, u32> = FastMap::default();
    let mut key_col: Vec<u32> = Vec::new();
    let mut side_col: Vec<bool> = Vec::new();
    let mut value_col: Vec<f64> = Vec::new();
    for (is_head, runs) in [(false, base_runs), (true, head_runs)] {
        for chunk in runs.chunks(500) {
            if chunk.is_empty() {
                continue;
            }
            let placeholders = vec!["?"; chunk.len()].join(",");
            let sql = format!(
                "SELECT s.id, r.benchmark, r.params_key, s.metric, s.scope, s.statistic, s.label, s.unit, s.direction \
                 FROM series s JOIN runs r ON r.id = s.run_id WHERE s.run_id IN ({placeholders})"
            );
            let mut q = sqlx::query(sqlx::AssertSqlSafe(sql));
            for id in chunk {
                q = q.bind(id);
            }
            let series = q.fetch_all(pool).await?;
            let mut wanted: Vec<(i64, u32)> = Vec::with_capacity(series.len());
            for s in &series {
                let metric: String = s.get(3);
                if let Some(glob) = &sel.metric
                    && !glob_match(glob, &metric)
                {
                    continue;
                }
                let key = Key {
                    benchmark: s.get(1),
                    params_key: s.get(2),
                    metric,
                    scope: s.get(4),
                    statistic: s.get(5),
                    label: s.get(6),
                };
                let kid = match key_index.get(&key) {
                    Some(&k) => k,
                    None => {
                        let k = keys.len() as u32;
                        key_index.insert(key.clone(), k);
                        keys.push(key);
                        infos.push(KeyInfo {
                            unit: s.get(7),
                            direction: s.get(8),
                        });
                        k
                    }
                };
                wanted.push((s.get(0), kid));
            }
            let kid_of: HashMap<i64, u32> = wanted.iter().copied().collect();
            let ids: Vec<i64> = wanted.iter().map(|&(id, _)| id).collect();
            for (sid, values) in store::series_values(pool, &ids).await? {
                key_col.extend(std::iter::repeat_n(kid_of[&sid], values.len()));
                side_col.extend(std::iter::repeat_n(is_head, values.len()));
                value_col.extend(values);
            }
        }
    }
    let frame = DataFrame::new_infer_height(vec![
        Column::new("key".into(), key_col),
        Column::new("head".into(), side_col),
        Column::new("value".into(), value_col),
    ])
    .map_err(|e| AppError::Anyhow(anyhow::anyhow!("building the sample frame: {e}")))?;
    Ok((keys, infos, frame))
}

/// key id -> (base values, head values), grouped with polars.
/// Samples per key id: (base values, head values).
type Grouped = FastMap<u32, (Vec<f64>, Vec<f64>)>;

fn group_samples(frame: DataFrame) -> PolarsResult<Grouped> {
    let out = frame
        .lazy()
        .group_by([col("key"), col("head")])
        .agg([col("value")])
        .collect()?;
    let keys = out.column("key")?.u32()?.clone();
    let heads = out.column("head")?.bool()?.clone();
    let values = out.column("value")?.list()?.clone();
    let mut map: Grouped = FastMap::default();
    for ((k, h), v) in keys.iter().zip(heads.iter()).zip(values.series_iter()) {
        let (Some(k), Some(h), Some(v)) = (k, h, v) else {
            continue;
        };
        let vals: Vec<f64> = v.f64()?.into_no_null_iter().collect();
        let e = map.entry(k).or_default();
        if h {
            e.1 = vals;
        } else {
            e.0 = vals;
        }
    }
    Ok(map)
}

async fn machines_of(pool: &SqlitePool, runs: &[i64]) -> Result<Vec<String>, AppError> {
    let mut out = BTreeSet::new();
    for chunk in runs.chunks(500) {
        let placeholders = vec!["?"; chunk.len()].join(",");
        let sql = format!(
            "SELECT DISTINCT m.name FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id IN ({placeholders})"
        );
        let mut q = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(id);
        }
        out.extend(q.fetch_all(pool).await?);
    }
    Ok(out.into_iter().collect())
}

fn env_diff(base: &BuildInfo, head: &BuildInfo, bm: &[String], hm: &[String]) -> Vec<EnvDiff> {
    let mut out = Vec::new();
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not recorded)".into());
    for (field, b, h) in [
        ("commit", &base.commit, &head.commit),
        ("kernel_version", &base.kernel_version, &head.kernel_version),
        ("cmdline", &base.cmdline, &head.cmdline),
    ] {
        if b != h {
            out.push(EnvDiff {
                field: field.into(),
                base: show(b),
                head: show(h),
            });
        }
    }
    match (&base.config, &head.config) {
        (Some(b), Some(h)) if b != h => {
            let parse = |c: &str| -> BTreeMap<String, String> {
                c.lines()
                    .filter_map(|l| {
                        let l = l.trim();
                        if let Some(rest) = l.strip_prefix("# ")
                            && let Some(name) = rest.strip_suffix(" is not set")
                        {
                            return Some((name.to_string(), "n".to_string()));
                        }
                        l.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                    })
                    .filter(|(k, _)| k.starts_with("CONFIG_"))
                    .collect()
            };
            let (pb, ph) = (parse(b), parse(h));
            let names: BTreeSet<&String> = pb.keys().chain(ph.keys()).collect();
            for n in names {
                let (vb, vh) = (pb.get(n), ph.get(n));
                if vb != vh {
                    out.push(EnvDiff {
                        field: n.clone(),
                        base: vb.cloned().unwrap_or_else(|| "(unset)".into()),
                        head: vh.cloned().unwrap_or_else(|| "(unset)".into()),
                    });
                }
            }
        }
        (b, h) if b.is_some() != h.is_some() => out.push(EnvDiff {
            field: "config".into(),
            base: if b.is_some() {
                "recorded"
            } else {
                "(not recorded)"
            }
            .into(),
            head: if h.is_some() {
                "recorded"
            } else {
                "(not recorded)"
            }
            .into(),
        }),
        _ => {}
    }
    if bm != hm {
        out.push(EnvDiff {
            field: "machine".into(),
            base: bm.join(", "),
            head: hm.join(", "),
        });
    }
    out
}

impl Report {
    /// Folds single-sample per-CPU rows (`cpuN` with one value a side: one trace_stat run)
    /// into their pooled `cpus` row, so that a 64-CPU profile of 19,043 functions prints one
    /// row per function and metric, not 64. Summary counts are recomputed.
    pub fn fold_per_cpu(&mut self) {
        let mut folded: HashMap<(String, String, String, Option<String>), Vec<CpuValues>> =
            HashMap::new();
        let key = |r: &Row| {
            (
                r.benchmark.clone(),
                r.params_text(),
                r.metric.clone(),
                r.label.clone(),
            )
        };
        let pooled: BTreeSet<(String, String, String, Option<String>)> = self
            .comparisons
            .iter()
            .filter(|r| r.scope == "cpus")
            .map(key)
            .collect();
        self.comparisons.retain(|r| {
            if is_cpu_scope(&r.scope)
                && r.statistic.is_none()
                && r.cmp.base.n <= 1
                && r.cmp.head.n <= 1
                && pooled.contains(&key(r))
            {
                folded.entry(key(r)).or_default().push(CpuValues {
                    scope: r.scope.clone(),
                    base: r.cmp.base.median,
                    head: r.cmp.head.median,
                });
                false
            } else {
                true
            }
        });
        for r in &mut self.comparisons {
            if r.scope == "cpus"
                && let Some(mut v) = folded.remove(&key(r))
            {
                v.sort_by(|a, b| crate::natural(&a.scope, &b.scope));
                r.per_cpu = v;
            }
        }
        self.summary = summarise(&self.comparisons);
    }
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

impl EnvDiff {
    /// Whether this difference is more than "a different build" (a different machine or boot
    /// command line makes the comparison less clean).
    pub fn is_environmental(&self) -> bool {
        matches!(self.field.as_str(), "machine" | "cmdline")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x}")).unwrap_or_default()
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "-".into())
}

fn pval(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(p) if p < 1e-4 => format!("{p:.1e}"),
        Some(p) => format!("{p:.4}"),
    }
}

fn flags_text(r: &Row) -> String {
    r.cmp
        .flags
        .iter()
        .map(flag_text)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A flag in words.
pub fn flag_text(f: &compare::Flag) -> String {
    use compare::Flag::*;
    match f {
        WelchFallback => "welch (few runs)".into(),
        Ties => "ties".into(),
        PerCpu => "per-cpu values of one run".into(),
        LargeN => "large n".into(),
        MeanMedianDisagree => "mean/median disagree".into(),
        BelowThreshold => "below threshold".into(),
        Inconclusive { more_runs: Some(n) } => format!("inconclusive (~{n} more runs)"),
        Inconclusive { more_runs: None } => "inconclusive".into(),
        Summary => "summary values, no test possible".into(),
    }
}

fn csv_field(s: &str) -> String {
    // Quote always; double inner quotes. A leading =,+,-,@ is prefixed so spreadsheets do not
    // evaluate user-supplied labels as formulas.
    let s = if s.starts_with(['=', '+', '-', '@']) && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s.to_string()
    };
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// One line per series, every number in canonical units.
pub fn csv_text(r: &Report) -> String {
    let mut out = String::from(
        "benchmark,params,metric,scope,statistic,label,unit,direction,base_n,base_median,base_mean,base_std,head_n,head_median,head_mean,head_std,change_pct,ci_low,ci_high,p,q,cliffs_delta,test,verdict,flags\n",
    );
    for row in &r.comparisons {
        let c = &row.cmp;
        let fields = [
            csv_field(&row.benchmark),
            csv_field(&row.params_text()),
            csv_field(&row.metric),
            csv_field(&row.scope),
            csv_field(row.statistic.as_deref().unwrap_or("")),
            csv_field(row.label.as_deref().unwrap_or("")),
            csv_field(&row.unit),
            direction_str(row.direction).to_string(),
            c.base.n.to_string(),
            opt(c.base.median),
            opt(c.base.mean),
            opt(c.base.std),
            c.head.n.to_string(),
            opt(c.head.median),
            opt(c.head.mean),
            opt(c.head.std),
            opt(c.change_pct),
            opt(c.ci.as_ref().map(|i| i.low)),
            opt(c.ci.as_ref().map(|i| i.high)),
            opt(c.p),
            opt(c.q),
            opt(c.cliffs_delta),
            format!("{:?}", c.test).to_lowercase(),
            c.verdict.as_str().to_string(),
            csv_field(&flags_text(row)),
        ];
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

pub fn direction_str(d: Direction) -> &'static str {
    match d {
        Direction::LowerIsBetter => "lower_is_better",
        Direction::HigherIsBetter => "higher_is_better",
        Direction::Neutral => "neutral",
    }
}

fn std_pct(d: &compare::Describe) -> String {
    match d.cv_pct {
        Some(cv) if d.n >= 2 => format!("±{:.1}%", cv),
        _ => String::new(),
    }
}

fn median_h(d: &compare::Describe, unit: &str) -> String {
    d.median
        .map(|m| human(m, unit))
        .unwrap_or_else(|| "-".into())
}

/// Plain text within 72 columns for an LKML reply: lkp-style lines and a one-line legend.
pub fn email_text(r: &Report) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "base: {}{}\nhead: {}{}\n\n",
        r.base.build.label,
        r.base
            .build
            .commit
            .as_ref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default(),
        r.head.build.label,
        r.head
            .build
            .commit
            .as_ref()
            .map(|c| format!(" ({c})"))
            .unwrap_or_default(),
    ));
    out.push_str("            base  %stddev     %change           head  %stddev\n");
    out.push_str("---------------- --------  ---------- -------------- --------\n");
    let mut last_bench = String::new();
    for row in &r.comparisons {
        if row.benchmark != last_bench {
            out.push_str(&format!("{}:\n", clip(&row.benchmark, 72)));
            last_bench = row.benchmark.clone();
        }
        let c = &row.cmp;
        let change = match (c.change_pct, c.verdict) {
            (
                Some(ch),
                Verdict::Regression | Verdict::Improvement | Verdict::Increase | Verdict::Decrease,
            ) => {
                format!("{ch:+.1}%")
            }
            (Some(ch), _) => format!("{ch:+.1}%"),
            (None, _) => "-".into(),
        };
        let mark = match c.verdict {
            Verdict::Regression => "R",
            Verdict::Improvement => "I",
            Verdict::Increase => "+",
            Verdict::Decrease => "-",
            Verdict::NoSignificantChange => " ",
            Verdict::NotEnoughData => "?",
        };
        out.push_str(&format!(
            "{:>16} {:>8}  {:>9}{} {:>14} {:>8}\n",
            clip(&median_h(&c.base, &row.unit), 16),
            std_pct(&c.base),
            change,
            mark,
            clip(&median_h(&c.head, &row.unit), 14),
            std_pct(&c.head),
        ));
        let mut name = String::from("    ");
        let params = row.params_text();
        if !params.is_empty() {
            name.push_str(&params);
            name.push(' ');
        }
        name.push_str(&row.name());
        out.push_str(&clip(&name, 72));
        out.push('\n');
    }
    out.push_str(&format!(
        "\n{} series: {} regressions, {} improvements, {} increases, {} decreases,\n{} unchanged, {} without enough data.\n",
        r.summary.total,
        r.summary.regressions,
        r.summary.improvements,
        r.summary.increases,
        r.summary.decreases,
        r.summary.unchanged,
        r.summary.not_enough_data
    ));
    out.push_str(&format!(
        "Legend: medians; R/I regression/improvement, +/- change of a neutral\nmetric, ? too few samples; significant at q < {} and |change| >= {}%.\n",
        r.settings.alpha, r.settings.threshold_pct
    ));
    out
}

fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('~');
        t
    }
}

/// A GitHub-flavoured Markdown table.
pub fn markdown_text(r: &Report) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "Comparison of **{}** (base) and **{}** (head)\n\n| benchmark | params | series | base median | head median | change | 95% CI | p | q | verdict | flags |\n|---|---|---|---:|---:|---:|---|---:|---:|---|---|\n",
        esc(&r.base.build.label),
        esc(&r.head.build.label)
    );
    for row in &r.comparisons {
        let c = &row.cmp;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            esc(&row.benchmark),
            esc(&row.params_text()),
            esc(&row.name()),
            median_h(&c.base, &row.unit),
            median_h(&c.head, &row.unit),
            pct(c.change_pct),
            c.ci.as_ref()
                .map(|i| format!("[{:+.1}%, {:+.1}%]", i.low, i.high))
                .unwrap_or_default(),
            pval(c.p),
            pval(c.q),
            c.verdict.as_str(),
            esc(&flags_text(row)),
        ));
    }
    out
}

/// The terminal report: a table, sweeps as matrices, trace_stat per function, and a
/// ministat-like sketch of each changed series.
pub fn terminal_text(r: &Report, width: usize) -> String {
    let mut out = format!(
        "base: {} ({} runs)   head: {} ({} runs)\n",
        r.base.build.label,
        r.base.run_ids.len(),
        r.head.build.label,
        r.head.run_ids.len()
    );
    for d in &r.env_diff {
        out.push_str(&format!(
            "  differs: {}: {} -> {}\n",
            d.field,
            clip(&d.base, 40),
            clip(&d.head, 40)
        ));
    }
    // One table per benchmark: the benchmark is a heading, not a repeated column.
    let mut benches: Vec<&str> = Vec::new();
    for row in &r.comparisons {
        if !benches.contains(&row.benchmark.as_str()) {
            benches.push(&row.benchmark);
        }
    }
    let _ = width;
    for bench in benches {
        if !bench.is_empty() {
            out.push_str(&format!("\n{bench}\n"));
        }
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::NOTHING);
        table.set_header(vec![
            "params", "series", "n", "base", "head", "change", "95% CI", "p", "q", "verdict",
            "flags",
        ]);
        for row in r.comparisons.iter().filter(|x| x.benchmark == bench) {
            let c = &row.cmp;
            table.add_row(vec![
                row.params_text(),
                row.name(),
                format!("{}/{}", c.base.n, c.head.n),
                median_h(&c.base, &row.unit),
                median_h(&c.head, &row.unit),
                pct(c.change_pct),
                c.ci.as_ref()
                    .map(|i| format!("[{:+.1}%, {:+.1}%]", i.low, i.high))
                    .unwrap_or_default(),
                pval(c.p),
                pval(c.q),
                c.verdict.as_str().to_string(),
                flags_text(row),
            ]);
        }
        out.push_str(&format!("{table}\n"));
    }
    out.push_str(&sweep_matrices(r));
    for row in r.comparisons.iter().filter(|r| {
        matches!(
            r.cmp.verdict,
            Verdict::Regression | Verdict::Improvement | Verdict::Increase | Verdict::Decrease
        )
    }) {
        out.push_str(&format!(
            "\n{} {} {}: x = {}, + = {}\n",
            row.benchmark,
            row.params_text(),
            row.name(),
            r.base.build.label,
            r.head.build.label
        ));
        out.push_str(&compare::text_sketch(
            &row.base_samples,
            &row.head_samples,
            width.clamp(40, 100),
        ));
        out.push('\n');
    }
    out.push_str(&format!(
        "\n{} series: {} regressions, {} improvements, {} increases, {} decreases, {} unchanged, {} without enough data\n",
        r.summary.total,
        r.summary.regressions,
        r.summary.improvements,
        r.summary.increases,
        r.summary.decreases,
        r.summary.unchanged,
        r.summary.not_enough_data
    ));
    out
}

/// Parameter sweeps (one param varying, same metric) as matrices: rows = the swept value.
pub fn sweep_matrices(r: &Report) -> String {
    let mut groups: BTreeMap<(String, String, String), Vec<&Row>> = BTreeMap::new();
    for row in &r.comparisons {
        if row.params.len() == 1 && row.scope == "all" {
            let (k, _) = row.params.iter().next().expect("one param");
            groups
                .entry((row.benchmark.clone(), k.clone(), row.name()))
                .or_default()
                .push(row);
        }
    }
    let mut out = String::new();
    for ((bench, param, name), mut rows) in groups {
        if rows.len() < 2 {
            continue;
        }
        rows.sort_by(|a, b| crate::natural(&a.params[&param], &b.params[&param]));
        out.push_str(&format!("\n{bench}: {name} by {param}\n"));
        out.push_str(&format!(
            "  {:>12} {:>14} {:>14} {:>9}  verdict\n",
            param,
            r.base.build.label.chars().take(14).collect::<String>(),
            r.head.build.label.chars().take(14).collect::<String>(),
            "change"
        ));
        for row in rows {
            out.push_str(&format!(
                "  {:>12} {:>14} {:>14} {:>9}  {}\n",
                row.params[&param],
                median_h(&row.cmp.base, &row.unit),
                median_h(&row.cmp.head, &row.unit),
                pct(row.cmp.change_pct),
                row.cmp.verdict.as_str()
            ));
        }
    }
    out
}

/// Formats a value of a row for humans (re-exported for templates).
pub fn fmt_value(v: Option<f64>, unit: &str) -> String {
    v.map(|x| human(x, unit)).unwrap_or_else(|| "-".into())
}

/// Significant digits, for templates.
pub fn fmt_sig(v: Option<f64>) -> String {
    v.map(sig).unwrap_or_else(|| "-".into())
}
