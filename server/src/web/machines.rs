//! Machines: the list (home page, API) and one machine's page `/machines/{name}`.

use std::collections::BTreeMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::Serialize;
use sqlx::{Row, SqlitePool};

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

/// All machines by name.
pub async fn list_machines(pool: &SqlitePool) -> Result<Vec<MachineSummary>, AppError> {
    let rows = sqlx::query(
        "SELECT m.id, m.name, m.created_at, COUNT(r.id), COUNT(DISTINCT r.build_id) \
         FROM machines m LEFT JOIN runs r ON r.machine_id = m.id \
         GROUP BY m.id ORDER BY m.name",
    )
    .fetch_all(pool)
    .await?;
    let mut facts = all_facts(pool, None).await?;
    Ok(rows
        .into_iter()
        .map(|r| MachineSummary {
            facts: facts.remove(&r.get::<i64, _>(0)).unwrap_or_default(),
            name: r.get(1),
            created_at: r.get(2),
            runs: r.get(3),
            builds: r.get(4),
        })
        .collect())
}

async fn all_facts(
    pool: &SqlitePool,
    machine_id: Option<i64>,
) -> Result<BTreeMap<i64, BTreeMap<String, String>>, AppError> {
    let rows = sqlx::query(
        "SELECT machine_id, key, value FROM machine_facts \
         WHERE ?1 IS NULL OR machine_id = ?1 ORDER BY machine_id, key",
    )
    .bind(machine_id)
    .fetch_all(pool)
    .await?;
    let mut out: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
    for r in rows {
        out.entry(r.get(0)).or_default().insert(r.get(1), r.get(2));
    }
    Ok(out)
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
pub async fn machine_detail(pool: &SqlitePool, name: &str) -> PageResult<MachineDetail> {
    let row = sqlx::query(
        "SELECT m.id, m.created_at, COUNT(r.id), COUNT(DISTINCT r.build_id) \
         FROM machines m LEFT JOIN runs r ON r.machine_id = m.id WHERE m.name = ? GROUP BY m.id",
    )
    .bind(name)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else {
        let names: Vec<String> = sqlx::query_scalar("SELECT name FROM machines ORDER BY name")
            .fetch_all(pool)
            .await?;
        return Err(PageError::Missing(Missing {
            what: "machine",
            name: name.to_string(),
            suggestions: close_matches(name, &names),
            link_prefix: "/machines/",
        }));
    };
    let id: i64 = row.get(0);
    let benchmarks: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT benchmark FROM runs WHERE machine_id = ? ORDER BY benchmark",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let build_labels: Vec<String> = sqlx::query_scalar(
        "SELECT label FROM builds WHERE id IN (SELECT DISTINCT build_id FROM runs WHERE machine_id = ?) \
         ORDER BY created_at DESC, id DESC",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let latest_runs = list_runs(
        pool,
        &RunFilter {
            machine: Some(name.to_string()),
            limit: RUNS_SHOWN,
            ..RunFilter::default()
        },
    )
    .await?;
    Ok(MachineDetail {
        machine: MachineSummary {
            name: name.to_string(),
            facts: all_facts(pool, Some(id))
                .await?
                .remove(&id)
                .unwrap_or_default(),
            created_at: row.get(1),
            runs: row.get(2),
            builds: row.get(3),
        },
        benchmarks,
        build_labels,
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
    let d = machine_detail(&st.pool, &name).await?;
    Ok(MachinePage {
        created: fmt_time(d.machine.created_at),
        d,
    })
}
