//! Bisections recorded by `bisect-step --db`: the list `/bisect`, one bisection `/bisect/{id}`
//! (every step of the bisection that step `id` belongs to) and its JSON.

use askama::Template;
use askama_web::WebTemplate;
use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::Serialize;
use store::StepRow;

use super::view::{ApiResult, PageResult, parse_id};
use crate::error::AppError;
use crate::format::{p_value, sig_or_dash, time};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/bisect", get(list))
        .route("/bisect/{id}", get(page))
        .route("/api/v1/bisect/{id}", get(api))
}

/// One step as the page shows it.
pub struct StepView {
    pub id: i64,
    pub when: String,
    pub commit: String,
    pub build_label: String,
    pub runs: i64,
    pub median: String,
    pub p_good: String,
    pub p_bad: String,
    pub verdict: String,
    pub run_id: Option<i64>,
}

impl From<&StepRow> for StepView {
    fn from(s: &StepRow) -> Self {
        StepView {
            id: s.id,
            when: time(s.created_at),
            commit: s.commit.chars().take(12).collect(),
            build_label: s.build_label.clone(),
            runs: s.runs,
            median: sig_or_dash(s.median),
            p_good: p_value(s.p_good),
            p_bad: p_value(s.p_bad),
            verdict: s.verdict.clone(),
            run_id: s.run_id,
        }
    }
}

/// A bisection: what it bisected and between which references.
pub struct BisectionView {
    pub first_step: i64,
    pub benchmark: String,
    pub series: String,
    pub machine: String,
    pub good_ref: String,
    pub bad_ref: String,
    pub good_median: String,
    pub bad_median: String,
    pub steps: Vec<StepView>,
    /// The commits judged bad, in step order: the last is the first bad commit found so far.
    pub last_bad: Option<String>,
}

impl BisectionView {
    fn new(steps: &[StepRow]) -> Option<Self> {
        let first = steps.first()?;
        Some(BisectionView {
            first_step: first.id,
            benchmark: first.benchmark.clone(),
            series: first.series.clone(),
            machine: first.machine.clone(),
            good_ref: first.good_ref.clone(),
            bad_ref: first.bad_ref.clone(),
            good_median: sig_or_dash(first.good_median),
            bad_median: sig_or_dash(first.bad_median),
            steps: steps.iter().map(StepView::from).collect(),
            last_bad: steps
                .iter()
                .rev()
                .find(|s| s.verdict == "bad")
                .map(|s| s.commit.chars().take(12).collect()),
        })
    }
}

/// Groups steps (oldest first) into bisections by their references, benchmark, series and
/// machine, most recent bisection first.
fn group(steps: Vec<StepRow>) -> Vec<BisectionView> {
    let mut groups: Vec<Vec<StepRow>> = Vec::new();
    for s in steps {
        let key = |x: &StepRow| {
            (
                x.good_ref.clone(),
                x.bad_ref.clone(),
                x.benchmark.clone(),
                x.series.clone(),
                x.machine.clone(),
            )
        };
        match groups.iter_mut().find(|g| key(&g[0]) == key(&s)) {
            Some(g) => g.push(s),
            None => groups.push(vec![s]),
        }
    }
    let mut out: Vec<BisectionView> = groups
        .iter()
        .filter_map(|g| BisectionView::new(g))
        .collect();
    out.reverse();
    out
}

#[derive(Template, WebTemplate)]
#[template(path = "bisect/list.html")]
pub struct ListPage {
    pub bisections: Vec<BisectionView>,
}

async fn list(State(st): State<AppState>) -> PageResult<ListPage> {
    let steps = st.store.bisect_steps(None).await?;
    Ok(ListPage {
        bisections: group(steps),
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "bisect/show.html")]
pub struct ShowPage {
    pub b: BisectionView,
}

async fn steps_of(st: &AppState, id: &str) -> Result<Vec<StepRow>, AppError> {
    let id = parse_id(id, "a bisection step id")?;
    let steps = st.store.bisection_of(id).await?;
    if steps.is_empty() {
        return Err(AppError::NotFound(format!(
            "no bisection step {id} (see /bisect or `quiescent bisect-log`)"
        )));
    }
    Ok(steps)
}

async fn page(State(st): State<AppState>, Path(id): Path<String>) -> PageResult<ShowPage> {
    let steps = steps_of(&st, &id).await?;
    let b = BisectionView::new(&steps).ok_or_else(|| AppError::NotFound(id.clone()))?;
    Ok(ShowPage { b })
}

/// The JSON of one bisection: its steps as stored.
#[derive(Serialize)]
pub struct BisectionJson {
    pub steps: Vec<StepRow>,
}

async fn api(State(st): State<AppState>, Path(id): Path<String>) -> ApiResult<BisectionJson> {
    Ok(Json(BisectionJson {
        steps: steps_of(&st, &id).await?,
    }))
}
