//! Builds: the list (home page, API) and one build's page `/builds/{label}`.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::Serialize;
use store::Store;

use super::runs::{RunFilter, RunSummary, list_runs};
use super::view::{PageResult, fmt_time, missing_build};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route("/builds/{label}", get(page))
}

pub use store::{BenchmarkCount, Build, BuildSummary};

/// All builds, newest first.
pub async fn list_builds(store: &Store) -> Result<Vec<BuildSummary>, AppError> {
    Ok(store.build_summaries().await?)
}

/// Everything the build page shows.
#[derive(Debug, Clone, Serialize)]
pub struct BuildDetail {
    #[serde(flatten)]
    pub build: Build,
    pub benchmarks: Vec<BenchmarkCount>,
    pub machines: Vec<String>,
    pub run_count: i64,
    /// The latest runs (at most [`RUNS_SHOWN`]).
    pub runs: Vec<RunSummary>,
}

impl BuildDetail {
    /// Only the latest runs are listed.
    pub fn runs_truncated(&self) -> bool {
        (self.runs.len() as i64) < self.run_count
    }
}

/// Runs listed on a build or machine page; the API pages through the rest.
pub const RUNS_SHOWN: i64 = 200;

/// The build page's data; a 404 with close labels when the build does not exist.
pub async fn build_detail(store: &Store, label: &str) -> PageResult<BuildDetail> {
    let Some(found) = store.build_by_label(label).await? else {
        return Err(missing_build(store, label).await);
    };
    let run_count = found.benchmarks.iter().map(|b| b.runs).sum();
    let runs = list_runs(
        store,
        &RunFilter {
            build: Some(found.build.label.clone()),
            limit: RUNS_SHOWN,
            ..RunFilter::default()
        },
    )
    .await?;
    Ok(BuildDetail {
        build: found.build,
        benchmarks: found.benchmarks,
        machines: found.machines,
        run_count,
        runs,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "build/show.html")]
pub struct BuildPage {
    pub d: BuildDetail,
    pub created: String,
}

async fn page(State(st): State<AppState>, Path(label): Path<String>) -> PageResult<BuildPage> {
    let d = build_detail(&st.store, &label).await?;
    Ok(BuildPage {
        created: fmt_time(d.build.created_at),
        d,
    })
}
