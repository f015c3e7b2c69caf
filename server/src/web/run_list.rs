//! `/runs`: every stored run, newest first, narrowed by build, machine and benchmark.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use serde::Deserialize;

use super::runs::{RunFilter, RunSummary, list_runs};
use super::view::PageResult;
use crate::state::AppState;

/// Runs a page lists at most; the filters (or the JSON API) reach the rest.
const SHOWN: usize = 200;

pub fn routes() -> Router<AppState> {
    Router::new().route("/runs", get(page))
}

/// The filters as the form sends them: an empty field is no filter.
#[derive(Debug, Default, Deserialize)]
pub struct RunListQuery {
    #[serde(default)]
    pub build: String,
    #[serde(default)]
    pub machine: String,
    #[serde(default)]
    pub benchmark: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "run/list.html")]
pub struct RunListPage {
    pub q: RunListQuery,
    pub runs: Vec<RunSummary>,
    /// More runs match than are listed.
    pub more: bool,
}

impl RunListPage {
    /// Whether any filter is given (the fields come trimmed).
    pub fn filtered(&self) -> bool {
        [&self.q.build, &self.q.machine, &self.q.benchmark]
            .iter()
            .any(|v| !v.is_empty())
    }
}

async fn page(
    State(st): State<AppState>,
    Query(q): Query<RunListQuery>,
) -> PageResult<RunListPage> {
    let given = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let filter = RunFilter {
        build: given(&q.build),
        machine: given(&q.machine),
        benchmark: given(&q.benchmark),
        // One more than shown, to know whether there are more.
        limit: SHOWN as i64 + 1,
    };
    let mut runs = list_runs(&st.store, &filter).await?;
    let more = runs.len() > SHOWN;
    runs.truncate(SHOWN);
    Ok(RunListPage {
        q: RunListQuery {
            build: filter.build.unwrap_or_default(),
            machine: filter.machine.unwrap_or_default(),
            benchmark: filter.benchmark.unwrap_or_default(),
        },
        runs,
        more,
    })
}
