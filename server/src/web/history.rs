//! History pages: `/history` (one series over its branch's builds, with its change points and
//! a form opening the comparison of two builds) and `/benchmarks/NAME` (small multiples of all
//! of a benchmark's series, those with alerts first). They read stored alerts: nothing is
//! detected on page load.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::routing::get;
use serde::Deserialize;
use store::{Alert, AlertFilter, HistoryKey, KeyFilter};

use super::history_chart::{self, Chart};
use crate::error::AppError;
use crate::history::{self, aggregate};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/history", get(page))
        .route("/benchmarks/{name}", get(benchmark))
}

#[derive(Debug, Default, Deserialize)]
pub struct HistoryQuery {
    pub benchmark: Option<String>,
    pub metric: Option<String>,
    pub machine: Option<String>,
    pub params: Option<String>,
    pub branch: Option<String>,
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_ref()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// One series drawn.
pub struct SeriesView {
    pub key: HistoryKey,
    pub chart: Chart,
    pub alerts: Vec<Alert>,
    /// Build labels in branch order, for the comparison form.
    pub builds: Vec<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "history/show.html")]
pub struct HistoryPage {
    pub benchmark: String,
    pub metric: String,
    pub branch: String,
    pub series: Vec<SeriesView>,
    pub generated: bool,
}

impl HistoryPage {
    pub fn pct(&self, v: &f64) -> String {
        format!("{v:+.1}%")
    }
}

/// Alerts of one key among a benchmark's alerts.
fn alerts_of<'a>(alerts: &'a [Alert], key: &HistoryKey) -> Vec<Alert> {
    alerts
        .iter()
        .filter(|a: &&'a Alert| {
            a.metric == key.metric && a.machine == key.machine && a.params_key == key.params_key
        })
        .cloned()
        .collect()
}

/// Whether a series holds the demo's generated history (its machine says so).
fn is_generated(key: &HistoryKey) -> bool {
    key.machine.contains("generated")
}

async fn page(
    State(st): State<AppState>,
    Query(q): Query<HistoryQuery>,
) -> Result<HistoryPage, AppError> {
    let benchmark = nonempty(&q.benchmark)
        .ok_or_else(|| AppError::BadRequest("missing benchmark: give benchmark=NAME".into()))?;
    let metric = nonempty(&q.metric)
        .ok_or_else(|| AppError::BadRequest("missing metric: give metric=NAME".into()))?;
    let branch = nonempty(&q.branch).unwrap_or_else(|| "main".into());
    let keys = st
        .store
        .history_keys(&KeyFilter {
            branch: Some(branch.clone()),
            benchmark: Some(benchmark.clone()),
            metric: Some(metric.clone()),
            machine: nonempty(&q.machine),
            params_key: q
                .params
                .clone()
                .filter(|_| q.params.as_deref().is_some_and(|p| !p.is_empty())),
        })
        .await?;
    if keys.is_empty() {
        return Err(AppError::NotFound(format!(
            "no history of benchmark {benchmark:?} metric {metric:?} on branch {branch:?}"
        )));
    }
    let alerts = st
        .store
        .alerts(&AlertFilter {
            benchmark: Some(benchmark.clone()),
            branch: Some(branch.clone()),
            ..AlertFilter::default()
        })
        .await?;
    let mut series = Vec::new();
    for key in keys.iter().take(20) {
        let loaded = history::load(&st.store, key).await?;
        let (pos, vals) = loaded.flat();
        let summaries = aggregate::per_build_blocking(pos, vals)
            .await
            .map_err(|e| AppError::Anyhow(e.context("summarising builds")))?;
        let mine = alerts_of(&alerts, key);
        let marks: Vec<history_chart::MarkSpec> = mine
            .iter()
            .filter_map(|a| {
                let pos = loaded
                    .points()
                    .iter()
                    .find(|p| p.label == a.build_after)?
                    .position;
                Some((
                    pos,
                    format!(
                        "{} → {}: {:+.1}% ({}), alert {}",
                        a.build_before, a.build_after, a.change_pct, a.kind, a.id
                    ),
                    a.kind == "regression",
                ))
            })
            .collect();
        let chart = history_chart::chart(&loaded, &summaries, &marks, 960.0, 340.0);
        let mut builds: Vec<String> = Vec::new();
        for p in loaded.points() {
            if builds.last() != Some(&p.label) {
                builds.push(p.label.clone());
            }
        }
        series.push(SeriesView {
            key: key.clone(),
            chart,
            alerts: mine,
            builds,
        });
    }
    Ok(HistoryPage {
        generated: keys.iter().any(is_generated),
        benchmark,
        metric,
        branch,
        series,
    })
}

/// One sparkline of the benchmark page.
pub struct Spark {
    pub key: HistoryKey,
    pub points: String,
    pub marks: Vec<f64>,
    pub alerts: usize,
    pub last: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "history/benchmark.html")]
pub struct BenchmarkPage {
    pub name: String,
    pub branch: String,
    pub sparks: Vec<Spark>,
    pub generated: bool,
}

async fn benchmark(
    State(st): State<AppState>,
    Path(name): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> Result<BenchmarkPage, AppError> {
    let branch = nonempty(&q.branch).unwrap_or_else(|| "main".into());
    let keys = st
        .store
        .history_keys(&KeyFilter {
            branch: Some(branch.clone()),
            benchmark: Some(name.clone()),
            ..KeyFilter::default()
        })
        .await?;
    if keys.is_empty() {
        return Err(AppError::NotFound(format!(
            "no history of benchmark {name:?} on branch {branch:?}"
        )));
    }
    let alerts = st
        .store
        .alerts(&AlertFilter {
            benchmark: Some(name.clone()),
            branch: Some(branch.clone()),
            ..AlertFilter::default()
        })
        .await?;
    let mut sparks = Vec::new();
    // The histories of the first 200 keys, read in one call.
    let shown = &keys[..keys.len().min(200)];
    for (key, loaded) in shown
        .iter()
        .zip(history::load_many(&st.store, shown).await?)
    {
        let (pos, vals) = loaded.flat();
        let summaries = aggregate::per_build_blocking(pos, vals)
            .await
            .map_err(|e| AppError::Anyhow(e.context("summarising builds")))?;
        let mine = alerts_of(&alerts, key);
        let mark_pos: Vec<i64> = mine
            .iter()
            .filter_map(|a| {
                loaded
                    .points()
                    .iter()
                    .find(|p| p.label == a.build_after)
                    .map(|p| p.position)
            })
            .collect();
        let (points, marks) = history_chart::sparkline(&summaries, &mark_pos, 240.0, 48.0);
        sparks.push(Spark {
            key: key.clone(),
            points,
            marks,
            alerts: mine.len(),
            last: summaries
                .last()
                .map(|s| crate::format::human(s.median, loaded.unit()))
                .unwrap_or_default(),
        });
    }
    // Series with alerts first, then by name.
    sparks.sort_by(|a, b| b.alerts.cmp(&a.alerts).then_with(|| a.key.cmp(&b.key)));
    Ok(BenchmarkPage {
        generated: keys.iter().any(is_generated),
        name,
        branch,
        sparks,
    })
}
