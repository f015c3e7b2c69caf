//! Shareable comparisons: `POST /share` freezes a comparison (its exact runs and settings)
//! under a short random id and redirects to `/c/{id}`, which shows the same numbers forever and
//! says when newer runs exist.

use std::sync::Arc;

use axum::extract::{Path, Query, RawQuery, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use compare::Settings;
use rand::RngExt;
use serde::{Deserialize, Serialize};
use store::{NewShare, Store};

use super::compare::{
    CompareForm, ComparePage, CompareQuery, CompareView, FrozenInfo, ViewFilter, cached_page,
    download, export_name, live_report, query_string, report_json,
};
use super::view::{Missing, PageError, PageResult, fmt_time};
use crate::error::AppError;
use crate::report::{self, Report, Selection};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/share",
            post(share).layer(axum::extract::DefaultBodyLimit::max(MAX_SHARE_BODY)),
        )
        .route("/c/{id}", get(page))
        .route("/c/{id}/csv", get(csv))
        .route("/c/{id}/json", get(json))
}

/// What a frozen comparison stores besides its run ids (`comparisons.settings_json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FrozenSpec {
    pub selection: Selection,
    pub settings: Settings,
    #[serde(default)]
    pub view: ViewFilter,
}

/// A stored comparison.
#[derive(Debug, Clone)]
pub struct Frozen {
    pub id: String,
    pub spec: FrozenSpec,
    pub base_runs: Vec<i64>,
    pub head_runs: Vec<i64>,
    pub created_at: i64,
}

/// Bytes of a `POST /share` body: a comparison's fields are labels and a few numbers.
pub const MAX_SHARE_BODY: usize = 16 * 1024;
/// Bytes of one field of a shared comparison (labels are at most 256 bytes when stored).
pub const MAX_SHARE_FIELD: usize = 256;

const ID_LEN: usize = 10;
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A random base62 id (62^10, about 8e17: guessing one is hopeless).
pub fn new_id() -> String {
    let mut rng = rand::rng();
    (0..ID_LEN)
        .map(|_| BASE62[rng.random_range(0..BASE62.len())] as char)
        .collect()
}

/// Stores a comparison's runs and settings; returns its id.
pub async fn freeze(
    store: &Store,
    r: &Report,
    sel: &Selection,
    view: &ViewFilter,
) -> Result<String, AppError> {
    // The labels the report resolved (a commit prefix becomes the build's label).
    let spec = FrozenSpec {
        selection: Selection {
            base: r.base.build.label.clone(),
            head: r.head.build.label.clone(),
            ..sel.clone()
        },
        settings: r.settings,
        view: view.clone(),
    };
    let settings_json = serde_json::to_string(&spec).map_err(|e| AppError::Anyhow(e.into()))?;
    let base_runs =
        serde_json::to_string(&r.base.run_ids).map_err(|e| AppError::Anyhow(e.into()))?;
    let head_runs =
        serde_json::to_string(&r.head.run_ids).map_err(|e| AppError::Anyhow(e.into()))?;
    // The same comparison (settings, filters and runs) shared twice is one row, one id.
    let content_hash = {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for part in [&settings_json, &base_runs, &head_runs] {
            h.update(part.as_bytes());
            h.update([0u8]);
        }
        hex::encode(h.finalize())
    };
    if let Some(id) = store.share_by_content(&content_hash).await? {
        return Ok(id);
    }
    for _ in 0..5 {
        let id = new_id();
        let done = store
            .insert_share_once(
                &NewShare {
                    id: &id,
                    base_label: &spec.selection.base,
                    head_label: &spec.selection.head,
                    settings_json: &settings_json,
                    base_runs_json: &base_runs,
                    head_runs_json: &head_runs,
                },
                &content_hash,
            )
            .await?;
        if let Some(id) = done {
            return Ok(id);
        }
    }
    Err(AppError::Anyhow(anyhow::anyhow!(
        "could not find a free comparison id"
    )))
}

/// Loads a stored comparison; a 404 when the id is unknown.
pub async fn load(store: &Store, id: &str) -> PageResult<Frozen> {
    let row = store.share(id).await?;
    let Some(row) = row else {
        return Err(PageError::Missing(Missing {
            what: "shared comparison",
            name: id.to_string(),
            suggestions: Vec::new(),
            link_prefix: "/c/",
        }));
    };
    let bad = |what: &str, e: serde_json::Error| {
        AppError::Anyhow(anyhow::anyhow!(
            "comparison {id}: stored {what} unreadable: {e}"
        ))
    };
    Ok(Frozen {
        id: id.to_string(),
        spec: serde_json::from_str(&row.settings_json).map_err(|e| bad("settings", e))?,
        base_runs: serde_json::from_str(&row.base_runs_json).map_err(|e| bad("runs", e))?,
        head_runs: serde_json::from_str(&row.head_runs_json).map_err(|e| bad("runs", e))?,
        created_at: row.created_at,
    })
}

/// The frozen report, through the cache (its `newer_runs` depends on the data generation).
pub async fn frozen_report(st: &AppState, f: &Frozen) -> PageResult<Arc<Report>> {
    let generation = st.store.generation().await?;
    let key = format!("frozen\0{}", f.id);
    if let Some(r) = st.cache.get(&key, generation) {
        return Ok(r);
    }
    let r = Arc::new(
        report::build_frozen(
            &st.store,
            &f.base_runs,
            &f.head_runs,
            &f.spec.selection,
            &f.spec.settings,
        )
        .await?,
    );
    st.cache.put(key, generation, r.clone());
    Ok(r)
}

async fn share(
    State(st): State<AppState>,
    headers: axum::http::HeaderMap,
    ext: axum::http::Extensions,
    Form(q): Form<CompareQuery>,
) -> PageResult<Response> {
    if st.config.share_requires_token {
        crate::tokens::authenticate(
            &st.store,
            headers
                .get(axum::http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok()),
        )
        .await?;
    } else {
        st.anon_writes.check(&ext)?;
    }
    check_share_fields(&q)?;
    let (sel, settings, view) = q.parse()?;
    let r = live_report(&st, &sel, &settings).await?;
    let id = freeze(&st.store, &r, &sel, &view).await?;
    Ok(Redirect::to(&format!("/c/{id}")).into_response())
}

/// 400 naming the first field longer than a real comparison needs.
fn check_share_fields(q: &CompareQuery) -> Result<(), AppError> {
    for (name, v) in [
        ("base", &q.base),
        ("head", &q.head),
        ("benchmark", &q.benchmark),
        ("machine", &q.machine),
        ("metric", &q.metric),
        ("alpha", &q.alpha),
        ("threshold", &q.threshold),
        ("only", &q.only),
        ("hide_ns", &q.hide_ns),
        ("q", &q.q),
    ] {
        if let Some(v) = v
            && v.len() > MAX_SHARE_FIELD
        {
            return Err(AppError::BadRequest(format!(
                "field {name} is {} bytes; a shared comparison's fields are at most {MAX_SHARE_FIELD} bytes",
                v.len()
            )));
        }
    }
    Ok(())
}

/// The table filters of a frozen page: the stored ones unless the query gives any.
fn filter_of(f: &Frozen, q: &CompareQuery) -> Result<ViewFilter, AppError> {
    let given = q.only.is_some() || q.hide_ns.is_some() || q.q.is_some();
    if given {
        q.view()
    } else {
        Ok(f.spec.view.clone())
    }
}

async fn page(
    State(st): State<AppState>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
    Query(q): Query<CompareQuery>,
) -> PageResult<Response> {
    if let Some(pasted) = super::paste::shared_page(&st, &id).await? {
        return Ok(pasted);
    }
    let key = format!("/c/{id}?{}", raw.unwrap_or_default());
    cached_page(&st, key, async {
        let f = load(&st.store, &id).await?;
        let filter = filter_of(&f, &q)?;
        let r = frozen_report(&st, &f).await?;
        let mut form = CompareForm::load(&st.store).await?;
        form.fill(&CompareQuery {
            base: Some(f.spec.selection.base.clone()),
            head: Some(f.spec.selection.head.clone()),
            benchmark: f.spec.selection.benchmark.clone(),
            machine: f.spec.selection.machine.clone(),
            metric: f.spec.selection.metric.clone(),
            alpha: Some(f.spec.settings.alpha.to_string()),
            threshold: Some(f.spec.settings.threshold_pct.to_string()),
            only: filter.only.clone(),
            hide_ns: filter.hide_ns.then(|| "1".to_string()),
            q: filter.q.clone(),
        });
        let newer_runs = r.newer_runs;
        let mut v = CompareView::build(&st.store, r, &f.spec.selection, filter).await?;
        v.csv_href = format!("/c/{}/csv", f.id);
        v.json_href = format!("/c/{}/json", f.id);
        v.api_href = format!("/api/v1/c/{}", f.id);
        Ok(ComparePage {
            form,
            frozen: Some(FrozenInfo {
                live_href: format!(
                    "/compare?{}",
                    query_string(&f.spec.selection, &f.spec.settings, None)
                ),
                id: f.id,
                created: fmt_time(f.created_at),
                newer_runs,
            }),
            v: Some(v),
        })
    })
    .await
}

async fn csv(State(st): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    if let Some(p) = super::paste::shared_report(&st, &id).await? {
        let r = &p.report.report;
        return Ok(download(
            crate::export::csv::text(r),
            "text/csv; charset=utf-8",
            &export_name(r, "csv"),
        ));
    }
    let f = load(&st.store, &id).await?;
    let r = frozen_report(&st, &f).await?;
    Ok(download(
        crate::export::csv::text(&r),
        "text/csv; charset=utf-8",
        &export_name(&r, "csv"),
    ))
}

async fn json(State(st): State<AppState>, Path(id): Path<String>) -> PageResult<Response> {
    if let Some(p) = super::paste::shared_report(&st, &id).await? {
        // The mail's comparison as `compare MAIL --json` prints it: with its pairs and claims.
        let body = serde_json::to_string_pretty(&p.report)
            .map_err(|e| AppError::Anyhow(anyhow::anyhow!("shared paste {id}: {e}")))?;
        return Ok(download(
            body,
            "application/json",
            &export_name(&p.report.report, "json"),
        ));
    }
    let f = load(&st.store, &id).await?;
    let r = frozen_report(&st, &f).await?;
    Ok(download(
        report_json(&r)?,
        "application/json",
        &export_name(&r, "json"),
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_base62() {
        let a = super::new_id();
        assert_eq!(a.len(), 10);
        assert!(a.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(a, super::new_id());
    }
}
