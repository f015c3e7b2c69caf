//! The JSON API under `/api/v1`: everything the pages show. Errors answer
//! `{error, detail, file, line}` (and `did_you_mean` for unknown names).

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;

use super::builds::{BuildDetail, BuildSummary, build_detail, list_builds};
use super::compare::{CompareQuery, live_report};
use super::home::{BenchmarkSummary, list_benchmarks};
use super::machines::{MachineDetail, MachineSummary, list_machines, machine_detail};
use super::runs::{RunDetail, RunFilter, RunSummary, list_runs, run_detail};
use super::share::{FrozenSpec, frozen_report, load};
use super::view::{ApiError, ApiResult, fmt_time, parse_id};
use crate::error::AppError;
use crate::report::Report;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    let api = Router::new()
        .route("/builds", get(builds))
        .route("/builds/{label}", get(build))
        .route("/machines", get(machines))
        .route("/machines/{name}", get(machine))
        .route("/benchmarks", get(benchmarks))
        .route("/runs", get(runs))
        .route("/runs/{id}", get(run))
        .route("/compare", get(compare))
        .route("/c/{id}", get(frozen))
        .fallback(no_such_endpoint);
    Router::new().nest("/api/v1", api)
}

async fn no_such_endpoint(uri: axum::http::Uri) -> Response {
    ApiError::from(AppError::NotFound(format!(
        "no API endpoint at {}",
        uri.path()
    )))
    .into_response()
}

async fn builds(State(st): State<AppState>) -> ApiResult<Vec<BuildSummary>> {
    Ok(Json(list_builds(&st.store).await?))
}

async fn build(State(st): State<AppState>, Path(label): Path<String>) -> ApiResult<BuildDetail> {
    Ok(Json(build_detail(&st.store, &label).await?))
}

async fn machines(State(st): State<AppState>) -> ApiResult<Vec<MachineSummary>> {
    Ok(Json(list_machines(&st.store).await?))
}

async fn machine(State(st): State<AppState>, Path(name): Path<String>) -> ApiResult<MachineDetail> {
    Ok(Json(machine_detail(&st.store, &name).await?))
}

async fn benchmarks(State(st): State<AppState>) -> ApiResult<Vec<BenchmarkSummary>> {
    Ok(Json(list_benchmarks(&st.store).await?))
}

/// `?build=&machine=&benchmark=&limit=&before=` (newest first; limit 1000 by default).
async fn runs(
    State(st): State<AppState>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> ApiResult<Vec<RunSummary>> {
    let param = |name: &str| q.get(name).map(String::as_str);
    let limit = super::runs::positive_param("limit", "a positive whole number", param("limit"))?
        .unwrap_or(0);
    let f = RunFilter {
        build: q.get("build").cloned(),
        machine: q.get("machine").cloned(),
        benchmark: q.get("benchmark").cloned(),
        limit,
        before: super::runs::before_run(param("before"))?,
    };
    Ok(Json(list_runs(&st.store, &f).await?))
}

async fn run(State(st): State<AppState>, Path(id): Path<String>) -> ApiResult<RunDetail> {
    let id = parse_id(&id, "run id")?;
    Ok(Json(run_detail(&st.store, id).await?))
}

/// The same JSON as `quiescent compare --json`.
async fn compare(
    State(st): State<AppState>,
    Query(q): Query<CompareQuery>,
) -> Result<Response, ApiError> {
    let (sel, settings, _) = q.parse()?;
    let r = live_report(&st, &sel, &settings).await?;
    Ok(Json(&*r).into_response())
}

/// A frozen comparison: its id, when it was made, what it selected, and the report.
#[derive(Serialize)]
struct FrozenJson<'a> {
    id: &'a str,
    created_at: i64,
    created: String,
    #[serde(flatten)]
    spec: &'a FrozenSpec,
    report: &'a Report,
}

async fn frozen(State(st): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    if let Some(p) = super::paste::shared_report(&st, &id).await? {
        return Ok(Json(serde_json::json!({
            "id": p.id,
            "created_at": p.created_at,
            "created": fmt_time(p.created_at),
            "kind": "paste",
            "report": p.report,
        }))
        .into_response());
    }
    let f = load(&st.store, &id).await?;
    let r = frozen_report(&st, &f).await?;
    Ok(Json(FrozenJson {
        id: &f.id,
        created_at: f.created_at,
        created: fmt_time(f.created_at),
        spec: &f.spec,
        report: &r,
    })
    .into_response())
}
