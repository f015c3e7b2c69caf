//! The home page: builds, machines, benchmarks, recent runs, and the comparison form.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::State;
use axum::response::Redirect;
use axum::routing::get;
use store::Store;

use super::builds::{BuildSummary, list_builds};
use super::compare::CompareForm;
use super::machines::{MachineSummary, list_machines};
use super::runs::{RunFilter, RunSummary, list_runs};
use super::view::PageResult;
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    let mut r = Router::new().route("/", get(page));
    // The lists live on the home page; a URL shortened from `/builds/LABEL` lands on its
    // section there rather than on a 404. (`/runs` is a page of its own.)
    for section in ["builds", "machines", "benchmarks"] {
        r = r.route(
            &format!("/{section}"),
            get(move || async move { Redirect::to(&format!("/#{section}")) }),
        );
    }
    r
}

pub use store::BenchmarkSummary;

pub async fn list_benchmarks(store: &Store) -> Result<Vec<BenchmarkSummary>, AppError> {
    Ok(store.benchmark_summaries().await?)
}

/// Recent runs on the home page.
const RECENT_RUNS: i64 = 20;

#[derive(Template, WebTemplate)]
#[template(path = "home.html")]
pub struct HomePage {
    pub builds: Vec<BuildSummary>,
    pub machines: Vec<MachineSummary>,
    pub benchmarks: Vec<BenchmarkSummary>,
    pub recent: Vec<RunSummary>,
    pub total_runs: i64,
    pub total_samples: i64,
    pub form: CompareForm,
    /// Recent alert groups and the newest builds of `main` in branch order.
    pub alert_groups: Vec<store::AlertGroup>,
    pub latest: Vec<store::BranchBuild>,
}

async fn page(State(st): State<AppState>) -> PageResult<HomePage> {
    let store = &st.store;
    let builds = list_builds(store).await?;
    let benchmarks = list_benchmarks(store).await?;
    let mut form = CompareForm::load(store).await?;
    // Propose the two newest builds: the older as base.
    if let [head, base, ..] = form.builds.as_slice() {
        form.base = base.clone();
        form.head = head.clone();
    }
    let total_samples = store.total_samples().await?;
    Ok(HomePage {
        total_runs: benchmarks.iter().map(|b| b.runs).sum(),
        machines: list_machines(store).await?,
        recent: list_runs(
            store,
            &RunFilter {
                limit: RECENT_RUNS,
                ..RunFilter::default()
            },
        )
        .await?,
        builds,
        benchmarks,
        total_samples,
        form,
        alert_groups: st.store.alert_groups(8).await?,
        latest: st.store.branch_builds("main", 12).await?,
    })
}
