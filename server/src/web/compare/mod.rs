//! The comparison page `/compare?base=..&head=..` and its exports (`/compare.csv`,
//! `/compare.json`). The view built here is shared with frozen comparisons (`/c/{id}`).

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use compare::Settings;
use serde::{Deserialize, Serialize};
use store::Store;

use super::view::{Missing, PageError, PageResult, close_matches, path_escape};
use crate::error::AppError;
use crate::report::{self, Report, Selection};
use crate::state::AppState;

mod latency;
mod profile;
mod rows;
mod sweep;
mod view;

pub use view::{CompareView, ROWS_RENDERED};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/compare", get(page))
        .route("/compare.csv", get(csv))
        .route("/compare.json", get(json))
}

/// The query string of a comparison: what to compare, the policy, and the table's filters.
/// Every field is text so that a bad value answers 400 with a reason of ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareQuery {
    pub base: Option<String>,
    pub head: Option<String>,
    pub benchmark: Option<String>,
    pub machine: Option<String>,
    pub metric: Option<String>,
    pub alpha: Option<String>,
    pub threshold: Option<String>,
    pub only: Option<String>,
    pub hide_ns: Option<String>,
    pub q: Option<String>,
}

/// Table filters (not part of the comparison itself).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewFilter {
    /// `regressions` or `changes` (any significant change).
    pub only: Option<String>,
    pub hide_ns: bool,
    /// Words that must all appear in the series' benchmark, params or name.
    pub q: Option<String>,
}

fn nonempty(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl CompareQuery {
    /// Nothing asked yet: the page shows only the form.
    pub fn is_blank(&self) -> bool {
        [
            &self.base,
            &self.head,
            &self.benchmark,
            &self.machine,
            &self.metric,
            &self.alpha,
            &self.threshold,
            &self.only,
            &self.hide_ns,
            &self.q,
        ]
        .iter()
        .all(|v| nonempty(v).is_none())
    }

    pub fn selection(&self) -> Result<Selection, AppError> {
        let base = nonempty(&self.base)
            .ok_or_else(|| AppError::BadRequest("missing base: give base=BUILD_LABEL".into()))?;
        let head = nonempty(&self.head)
            .ok_or_else(|| AppError::BadRequest("missing head: give head=BUILD_LABEL".into()))?;
        Ok(Selection {
            base,
            head,
            benchmark: nonempty(&self.benchmark),
            machine: nonempty(&self.machine),
            metric: nonempty(&self.metric),
        })
    }

    pub fn settings(&self) -> Result<Settings, AppError> {
        let mut s = Settings::default();
        if let Some(a) = nonempty(&self.alpha) {
            s.alpha = match a.parse::<f64>() {
                Ok(v) if v > 0.0 && v < 1.0 => v,
                _ => {
                    return Err(AppError::BadRequest(format!(
                        "alpha must be a number between 0 and 1 (e.g. 0.05), found {a:?}"
                    )));
                }
            };
        }
        if let Some(t) = nonempty(&self.threshold) {
            s.threshold_pct = match t.trim_end_matches('%').parse::<f64>() {
                Ok(v) if v >= 0.0 && v.is_finite() => v,
                _ => {
                    return Err(AppError::BadRequest(format!(
                        "threshold must be a percentage >= 0 (e.g. 1), found {t:?}"
                    )));
                }
            };
        }
        Ok(s)
    }

    pub fn view(&self) -> Result<ViewFilter, AppError> {
        let only = nonempty(&self.only);
        if let Some(o) = &only
            && o != "regressions"
            && o != "changes"
        {
            return Err(AppError::BadRequest(format!(
                "only must be `regressions` or `changes`, found {o:?}"
            )));
        }
        let hide_ns = match nonempty(&self.hide_ns).as_deref() {
            None | Some("0") | Some("false") | Some("off") => false,
            Some("1") | Some("true") | Some("on") => true,
            Some(other) => {
                return Err(AppError::BadRequest(format!(
                    "hide_ns must be 1 or 0, found {other:?}"
                )));
            }
        };
        Ok(ViewFilter {
            only,
            hide_ns,
            q: nonempty(&self.q),
        })
    }

    /// Everything parsed, or the first reason it cannot be.
    pub fn parse(&self) -> Result<(Selection, Settings, ViewFilter), AppError> {
        Ok((self.selection()?, self.settings()?, self.view()?))
    }
}

/// The canonical query string of a comparison (defaults left out).
pub fn query_string(sel: &Selection, settings: &Settings, view: Option<&ViewFilter>) -> String {
    let d = Settings::default();
    let mut parts = vec![
        format!("base={}", path_escape(&sel.base)),
        format!("head={}", path_escape(&sel.head)),
    ];
    let mut push = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}={}", path_escape(v)));
        }
    };
    push("benchmark", &sel.benchmark);
    push("machine", &sel.machine);
    push("metric", &sel.metric);
    if settings.alpha != d.alpha {
        parts.push(format!("alpha={}", settings.alpha));
    }
    if settings.threshold_pct != d.threshold_pct {
        parts.push(format!("threshold={}", settings.threshold_pct));
    }
    if let Some(v) = view {
        if let Some(o) = &v.only {
            parts.push(format!("only={}", path_escape(o)));
        }
        if v.hide_ns {
            parts.push("hide_ns=1".into());
        }
        if let Some(q) = &v.q {
            parts.push(format!("q={}", path_escape(q)));
        }
    }
    parts.join("&")
}

/// The GET form that picks a comparison (home page and comparison page).
#[derive(Debug, Clone, Default)]
pub struct CompareForm {
    pub builds: Vec<String>,
    pub benchmarks: Vec<String>,
    pub machines: Vec<String>,
    pub base: String,
    pub head: String,
    pub benchmark: String,
    pub machine: String,
    pub metric: String,
    pub alpha: String,
    pub threshold: String,
    pub only: String,
    pub hide_ns: bool,
    pub q: String,
}

impl CompareForm {
    /// The choices that exist, with nothing selected.
    pub async fn load(store: &Store) -> Result<CompareForm, AppError> {
        // Every build: PostgreSQL refuses a negative LIMIT, where SQLite reads it as none.
        let builds = store.build_labels_newest(i64::MAX).await?;
        let benchmarks = store.benchmark_names().await?;
        let machines = store.machine_names().await?;
        Ok(CompareForm {
            builds,
            benchmarks,
            machines,
            ..CompareForm::default()
        })
    }

    /// Pre-fills the fields from a query.
    pub fn fill(&mut self, q: &CompareQuery) {
        let s = |v: &Option<String>| nonempty(v).unwrap_or_default();
        self.base = s(&q.base);
        self.head = s(&q.head);
        self.benchmark = s(&q.benchmark);
        self.machine = s(&q.machine);
        self.metric = s(&q.metric);
        self.alpha = s(&q.alpha);
        self.threshold = s(&q.threshold);
        self.only = s(&q.only);
        self.hide_ns = matches!(s(&q.hide_ns).as_str(), "1" | "true" | "on");
        self.q = s(&q.q);
    }

    pub fn is(&self, field: &str, value: &str) -> bool {
        match field {
            "base" => self.base == value,
            "head" => self.head == value,
            "benchmark" => self.benchmark == value,
            "machine" => self.machine == value,
            "only" => self.only == value,
            _ => false,
        }
    }
}

/// A build label that does not exist: a 404 listing close labels.
async fn check_builds(store: &Store, sel: &Selection) -> PageResult<()> {
    for name in [&sel.base, &sel.head] {
        match report::find_build(store, name).await {
            Ok(_) => {}
            Err(AppError::NotFound(_)) => {
                let labels = store.build_labels_sorted().await?;
                return Err(PageError::Missing(Missing {
                    what: "build",
                    name: name.clone(),
                    suggestions: close_matches(name, &labels),
                    link_prefix: "/builds/",
                }));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The live report for a query, through the cache.
pub async fn live_report(
    st: &AppState,
    sel: &Selection,
    settings: &Settings,
) -> PageResult<Arc<Report>> {
    let generation = st.store.generation().await?;
    let key = format!(
        "live\0{}",
        serde_json::to_string(&(sel, settings)).unwrap_or_default()
    );
    if let Some(r) = st.cache.get(&key, generation) {
        return Ok(r);
    }
    check_builds(&st.store, sel).await?;
    // Per-CPU series of one value a side fold into their pooled row, as the command folds
    // them: two 64-CPU profiles are 133,000 rows that way and 5 million without. The function
    // profile still shows each CPU's values.
    let r = Arc::new(report::build(&st.store, sel, settings, None, true).await?);
    st.cache.put(key, generation, r.clone());
    Ok(r)
}

/// A frozen comparison's identity, shown above its numbers.
#[derive(Debug, Clone)]
pub struct FrozenInfo {
    pub id: String,
    pub created: String,
    pub newer_runs: bool,
    /// The live comparison of the same selection.
    pub live_href: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "compare/page.html")]
pub struct ComparePage {
    pub form: CompareForm,
    pub v: Option<CompareView>,
    pub frozen: Option<FrozenInfo>,
}

/// Serves a rendered page from the cache, or renders it with `make` and keeps it.
pub async fn cached_page<F>(st: &AppState, key: String, make: F) -> PageResult<Response>
where
    F: std::future::Future<Output = PageResult<ComparePage>>,
{
    let generation = st.store.generation().await?;
    let body = match st.cache.get_page(&key, generation) {
        Some(b) => b,
        None => {
            let html = make
                .await?
                .render()
                .map_err(|e| AppError::Anyhow(anyhow::anyhow!("rendering {key}: {e}")))?;
            let b = axum::body::Bytes::from(html);
            st.cache.put_page(key, generation, b.clone());
            b
        }
    };
    Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response())
}

async fn page(
    State(st): State<AppState>,
    RawQuery(raw): RawQuery,
    Query(q): Query<CompareQuery>,
) -> PageResult<Response> {
    let key = format!("/compare?{}", raw.unwrap_or_default());
    cached_page(&st, key, async {
        let mut form = CompareForm::load(&st.store).await?;
        form.fill(&q);
        if q.is_blank() {
            return Ok(ComparePage {
                form,
                v: None,
                frozen: None,
            });
        }
        let (sel, settings, filter) = q.parse()?;
        let report = live_report(&st, &sel, &settings).await?;
        let v = CompareView::build(&st.store, report, &sel, filter).await?;
        Ok(ComparePage {
            form,
            v: Some(v),
            frozen: None,
        })
    })
    .await
}

/// A text download with a file name.
pub fn download(body: String, content_type: &'static str, file_name: &str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{file_name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

/// `comparison-BASE-vs-HEAD` with only safe characters.
pub fn export_name(r: &Report, ext: &str) -> String {
    let clean = |s: &str| store::safe_file_name(&s.replace('/', "_"));
    format!(
        "comparison-{}-vs-{}.{ext}",
        clean(&r.base.build.label),
        clean(&r.head.build.label)
    )
    .chars()
    .map(|c| if c.is_ascii() { c } else { '_' })
    .collect()
}

async fn csv(State(st): State<AppState>, Query(q): Query<CompareQuery>) -> PageResult<Response> {
    let (sel, settings, _) = q.parse()?;
    let r = live_report(&st, &sel, &settings).await?;
    Ok(download(
        crate::export::csv::text(&r),
        "text/csv; charset=utf-8",
        &export_name(&r, "csv"),
    ))
}

/// The same JSON as `quiescent compare --json`.
pub fn report_json(r: &Report) -> Result<String, AppError> {
    crate::export::json::text(r).map_err(|e| AppError::Anyhow(e.into()))
}

async fn json(State(st): State<AppState>, Query(q): Query<CompareQuery>) -> PageResult<Response> {
    let (sel, settings, _) = q.parse()?;
    let r = live_report(&st, &sel, &settings).await?;
    Ok(download(
        report_json(&r)?,
        "application/json",
        &export_name(&r, "json"),
    ))
}

#[cfg(test)]
mod tests {
    use super::profile::{is_cpu, split_prof_metric};
    use super::sweep::strength;
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> CompareQuery {
        let s = pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        serde_json::from_value(serde_json::json!(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<std::collections::BTreeMap<_, _>>()
        ))
        .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_queries() {
        let (sel, st, view) = q(&[
            ("base", "v4.19"),
            ("head", "v5.1"),
            ("alpha", "0.01"),
            ("threshold", "2%"),
            ("only", "regressions"),
            ("hide_ns", "1"),
            ("benchmark", ""),
        ])
        .parse()
        .unwrap();
        assert_eq!(sel.base, "v4.19");
        assert_eq!(sel.benchmark, None);
        assert_eq!((st.alpha, st.threshold_pct), (0.01, 2.0));
        assert_eq!(view.only.as_deref(), Some("regressions"));
        assert!(view.hide_ns);
        assert_eq!(
            query_string(&sel, &st, Some(&view)),
            "base=v4.19&head=v5.1&alpha=0.01&threshold=2&only=regressions&hide_ns=1"
        );
    }

    #[test]
    fn rejects_bad_queries_with_reasons() {
        let e = q(&[("base", "a")]).parse().unwrap_err();
        assert!(e.to_string().contains("missing head"), "{e}");
        for (k, v, want) in [
            ("alpha", "abc", "alpha must be"),
            ("alpha", "1.5", "alpha must be"),
            ("threshold", "-1", "threshold must be"),
            ("only", "everything", "only must be"),
            ("hide_ns", "maybe", "hide_ns must be"),
        ] {
            let e = q(&[("base", "a"), ("head", "b"), (k, v)])
                .parse()
                .unwrap_err();
            assert!(matches!(e, AppError::BadRequest(_)));
            assert!(e.to_string().contains(want), "{k}={v}: {e}");
        }
    }

    #[test]
    fn classifies_trace_stat_metrics() {
        assert_eq!(
            split_prof_metric("rcu_preempt_deferred_qs_handle.hit"),
            Some(("rcu_preempt_deferred_qs_handle", "hit"))
        );
        assert_eq!(split_prof_metric("a.b.avg"), Some(("a.b", "avg")));
        assert_eq!(split_prof_metric("real"), None);
        assert_eq!(split_prof_metric("x.p99"), None);
        assert!(is_cpu("cpu12") && !is_cpu("cpus") && !is_cpu("cpu"));
        assert_eq!(strength(Some(-25.0)), "s3");
        assert_eq!(strength(Some(6.0)), "s2");
        assert_eq!(strength(None), "s1");
    }
}
