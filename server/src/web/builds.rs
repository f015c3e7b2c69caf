//! Builds: the list (home page, API) and one build's page `/builds/{label}`.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use serde::Serialize;
use sqlx::SqlitePool;

use super::runs::{RunFilter, RunSummary, list_runs};
use super::view::{PageResult, fmt_time, missing_build};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route("/builds/{label}", get(page))
}

/// A build with how much is stored for it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct BuildSummary {
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub runs: i64,
    pub machines: i64,
    pub benchmarks: i64,
    pub created_at: i64,
}

impl BuildSummary {
    pub fn created(&self) -> String {
        fmt_time(self.created_at)
    }
}

/// All builds, newest first.
pub async fn list_builds(pool: &SqlitePool) -> Result<Vec<BuildSummary>, AppError> {
    Ok(sqlx::query_as::<_, BuildSummary>(
        "SELECT b.label, b.commit_sha AS \"commit\", b.kernel_version, b.created_at, \
                COUNT(r.id) AS runs, COUNT(DISTINCT r.machine_id) AS machines, \
                COUNT(DISTINCT r.benchmark) AS benchmarks \
         FROM builds b LEFT JOIN runs r ON r.build_id = b.id \
         GROUP BY b.id ORDER BY b.created_at DESC, b.id DESC",
    )
    .fetch_all(pool)
    .await?)
}

/// What is known about the kernel under test.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct Build {
    #[serde(skip)]
    pub id: i64,
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub config: Option<String>,
    pub cmdline: Option<String>,
    pub created_at: i64,
}

/// Runs of one build per benchmark.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct BenchmarkCount {
    pub benchmark: String,
    pub runs: i64,
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

/// Looks a build up by label: `None` when it does not exist.
pub async fn find_build(pool: &SqlitePool, label: &str) -> Result<Option<Build>, AppError> {
    Ok(sqlx::query_as::<_, Build>(
        "SELECT id, label, commit_sha AS \"commit\", kernel_version, config, cmdline, created_at \
         FROM builds WHERE label = ?",
    )
    .bind(label)
    .fetch_optional(pool)
    .await?)
}

/// The build page's data; a 404 with close labels when the build does not exist.
pub async fn build_detail(pool: &SqlitePool, label: &str) -> PageResult<BuildDetail> {
    let Some(build) = find_build(pool, label).await? else {
        return Err(missing_build(pool, label).await);
    };
    let benchmarks = sqlx::query_as::<_, BenchmarkCount>(
        "SELECT benchmark, COUNT(*) AS runs FROM runs WHERE build_id = ? \
         GROUP BY benchmark ORDER BY benchmark",
    )
    .bind(build.id)
    .fetch_all(pool)
    .await?;
    let machines: Vec<String> = sqlx::query_scalar(
        "SELECT m.name FROM machines m WHERE m.id IN \
         (SELECT DISTINCT machine_id FROM runs WHERE build_id = ?) ORDER BY m.name",
    )
    .bind(build.id)
    .fetch_all(pool)
    .await?;
    let run_count = benchmarks.iter().map(|b| b.runs).sum();
    let runs = list_runs(
        pool,
        &RunFilter {
            build: Some(build.label.clone()),
            limit: RUNS_SHOWN,
            ..RunFilter::default()
        },
    )
    .await?;
    Ok(BuildDetail {
        build,
        benchmarks,
        machines,
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
    let d = build_detail(&st.pool, &label).await?;
    Ok(BuildPage {
        created: fmt_time(d.build.created_at),
        d,
    })
}
