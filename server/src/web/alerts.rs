//! Alerts on the web: the list with triage forms (`/alerts`), the API (`/api/v1/alerts`), the
//! Atom feed (`/alerts.atom`) and a group as email text. Triage needs an upload token.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use store::{Alert, AlertFilter, AlertGroup, Triage};

use crate::error::AppError;
use crate::history::notify;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/alerts", get(page))
        .route("/alerts.atom", get(atom))
        .route("/alerts/{id}/triage", post(triage_form))
        .route("/alerts/groups/{id}/email", get(email))
        .route("/api/v1/alerts", get(api_list))
        .route("/api/v1/alerts/{id}", post(api_triage))
}

/// Filters of the list, from the query string.
#[derive(Debug, Default, Deserialize)]
pub struct AlertQuery {
    pub state: Option<String>,
    pub benchmark: Option<String>,
    pub machine: Option<String>,
    pub branch: Option<String>,
    pub group: Option<i64>,
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_ref()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl AlertQuery {
    fn filter(&self) -> Result<AlertFilter, AppError> {
        let state = nonempty(&self.state);
        if let Some(s) = &state
            && !store::ALERT_STATES.contains(&s.as_str())
        {
            return Err(AppError::BadRequest(format!(
                "unknown state {:?}; states are {}",
                s.chars().take(40).collect::<String>(),
                store::ALERT_STATES.join(", ")
            )));
        }
        Ok(AlertFilter {
            state,
            benchmark: nonempty(&self.benchmark),
            machine: nonempty(&self.machine),
            branch: nonempty(&self.branch),
            group_id: self.group,
            limit: Some(1000),
        })
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "history/alerts.html")]
pub struct AlertsPage {
    pub alerts: Vec<Alert>,
    pub groups: Vec<AlertGroup>,
    pub q: AlertQuery,
    pub states: [&'static str; 4],
}

impl AlertsPage {
    fn sel(&self, v: &Option<String>) -> String {
        v.clone().unwrap_or_default()
    }
    pub fn state_q(&self) -> String {
        self.sel(&self.q.state)
    }
    pub fn benchmark_q(&self) -> String {
        self.sel(&self.q.benchmark)
    }
    pub fn machine_q(&self) -> String {
        self.sel(&self.q.machine)
    }
    pub fn branch_q(&self) -> String {
        self.sel(&self.q.branch)
    }
    pub fn pct(&self, v: &f64) -> String {
        format!("{v:+.1}%")
    }
    pub fn pv(&self, v: &f64) -> String {
        crate::format::p_value(Some(*v))
    }
    pub fn num(&self, v: &f64, unit: &str) -> String {
        crate::format::human(*v, unit)
    }
}

async fn page(
    State(st): State<AppState>,
    Query(q): Query<AlertQuery>,
) -> Result<AlertsPage, AppError> {
    let alerts = st.store.alerts(&q.filter()?).await?;
    let groups = st.store.alert_groups(20).await?;
    Ok(AlertsPage {
        alerts,
        groups,
        q,
        states: store::ALERT_STATES,
    })
}

async fn api_list(
    State(st): State<AppState>,
    Query(q): Query<AlertQuery>,
) -> Result<Json<Vec<Alert>>, AppError> {
    Ok(Json(st.store.alerts(&q.filter()?).await?))
}

/// A triage decision as the API and the page's form send it.
#[derive(Debug, Deserialize)]
pub struct TriageBody {
    pub state: String,
    pub note: Option<String>,
    pub fixed_by: Option<String>,
    /// The page's form only: the upload token.
    pub token: Option<String>,
}

impl TriageBody {
    fn triage(&self, who: String) -> Triage {
        Triage {
            state: self.state.trim().to_string(),
            note: nonempty(&self.note),
            who,
            fixed_by: nonempty(&self.fixed_by),
        }
    }
}

async fn api_triage(
    State(st): State<AppState>,
    Path(id): Path<i64>,
    headers: HeaderMap,
    Json(body): Json<TriageBody>,
) -> Result<Json<serde_json::Value>, AppError> {
    let auth = headers
        .get(header::AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let token = crate::tokens::authenticate(&st.store, auth.as_deref()).await?;
    st.store.triage_alert(id, &body.triage(token.name)).await?;
    Ok(Json(
        serde_json::json!({ "id": id, "state": body.state.trim() }),
    ))
}

async fn triage_form(
    State(st): State<AppState>,
    Path(id): Path<i64>,
    Form(body): Form<TriageBody>,
) -> Result<Redirect, AppError> {
    let given = nonempty(&body.token).ok_or_else(|| {
        AppError::Unauthorized("triage needs an upload token (quiescent token create)".into())
    })?;
    let token = crate::tokens::authenticate(&st.store, Some(&format!("Bearer {given}"))).await?;
    st.store.triage_alert(id, &body.triage(token.name)).await?;
    Ok(Redirect::to("/alerts"))
}

/// The server's own address, for links in the feed and in email.
fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            h.chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
        })
        .unwrap_or("localhost");
    format!("http://{host}")
}

async fn atom(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, AppError> {
    let mut groups = Vec::new();
    for g in st.store.alert_groups(50).await? {
        if let Some(p) = notify::group(&st.store, g.id).await? {
            groups.push(p);
        }
    }
    Ok((
        [(header::CONTENT_TYPE, "application/atom+xml; charset=utf-8")],
        notify::atom(&groups, &base_url(&headers)),
    )
        .into_response())
}

async fn email(
    State(st): State<AppState>,
    Path(id): Path<i64>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let g = notify::group(&st.store, id)
        .await?
        .ok_or_else(|| AppError::NotFound(format!("no alert group {id}")))?;
    Ok((
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        notify::email(&g, &base_url(&headers)),
    )
        .into_response())
}
