//! Machines: the list (home page, API) and one machine's page `/machines/{name}`.

use std::collections::BTreeMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::Serialize;
use store::Store;

use super::builds::RUNS_SHOWN;
use super::runs::{RunFilter, RunSummary, list_runs};
use super::view::{Missing, PageError, PageResult, close_matches, fmt_time};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route("/machines/{name}", get(page))
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

impl MachineSummary {
    /// `cpus=4, cpu_model=...` for a table cell.
    pub fn facts_text(&self) -> String {
        super::view::params_text(&self.facts)
    }
}

impl From<store::MachineSummary> for MachineSummary {
    fn from(m: store::MachineSummary) -> Self {
        MachineSummary {
            name: m.name,
            facts: m.facts,
            runs: m.runs,
            builds: m.builds,
            created_at: m.created_at,
        }
    }
}

/// All machines by name.
pub async fn list_machines(store: &Store) -> Result<Vec<MachineSummary>, AppError> {
    Ok(store
        .machine_summaries()
        .await?
        .into_iter()
        .map(MachineSummary::from)
        .collect())
}

/// Everything the machine page shows.
#[derive(Debug, Clone, Serialize)]
pub struct MachineDetail {
    #[serde(flatten)]
    pub machine: MachineSummary,
    pub benchmarks: Vec<String>,
    pub build_labels: Vec<String>,
    /// The latest runs (at most [`RUNS_SHOWN`]).
    pub latest_runs: Vec<RunSummary>,
}

impl MachineDetail {
    /// Only the latest runs are listed.
    pub fn runs_truncated(&self) -> bool {
        (self.latest_runs.len() as i64) < self.machine.runs
    }
}

/// The machine page's data; a 404 with close names when it does not exist.
pub async fn machine_detail(store: &Store, name: &str) -> PageResult<MachineDetail> {
    let Some(m) = store.machine(name).await? else {
        let names = store.machine_names().await?;
        return Err(PageError::Missing(Missing {
            what: "machine",
            name: name.to_string(),
            suggestions: close_matches(name, &names),
            link_prefix: "/machines/",
        }));
    };
    let latest_runs = list_runs(
        store,
        &RunFilter {
            machine: Some(name.to_string()),
            limit: RUNS_SHOWN,
            ..RunFilter::default()
        },
    )
    .await?;
    Ok(MachineDetail {
        machine: m.summary.into(),
        benchmarks: m.benchmarks,
        build_labels: m.build_labels,
        latest_runs,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "machine/show.html")]
pub struct MachinePage {
    pub d: MachineDetail,
    pub created: String,
}

async fn page(State(st): State<AppState>, Path(name): Path<String>) -> PageResult<MachinePage> {
    let d = machine_detail(&st.store, &name).await?;
    Ok(MachinePage {
        created: fmt_time(d.machine.created_at),
        d,
    })
}
