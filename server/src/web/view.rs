//! What the pages share: number formatting, page errors with hints, path parsing.

use askama::Template;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

use crate::error::AppError;

/// `YYYY-MM-DD HH:MM` (UTC) from unix seconds.
pub fn fmt_time(secs: i64) -> String {
    crate::format::time(secs)
}

/// A value in its unit, humanised (`564 us`, `49.393 s`, `2 KiB`, `4 us^2`); `-` when
/// undefined.
pub fn human(v: Option<f64>, unit: impl AsRef<str>) -> String {
    crate::format::value(v, unit)
}

/// A signed percentage with two decimals (`+3.21%`).
pub fn pct(v: Option<f64>) -> String {
    crate::format::percent(v, 2)
}

/// A probability: 4 decimals, or scientific notation when tiny.
pub fn prob(v: Option<f64>) -> String {
    crate::format::p_value(v)
}

/// `k=v, k=v` of a params map, or `-` when empty.
pub fn params_text<'a>(params: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let s = params
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ");
    if s.is_empty() { "-".into() } else { s }
}

/// A lookup by name that found nothing, with the closest existing names.
#[derive(Debug)]
pub struct Missing {
    /// `build`, `machine`, `run`, `comparison`.
    pub what: &'static str,
    pub name: String,
    pub suggestions: Vec<String>,
    /// Where a suggestion links to (`/builds/`); the name is URL-encoded after it.
    pub link_prefix: &'static str,
}

impl Missing {
    pub fn detail(&self) -> String {
        format!("no {} named {:?}", self.what, self.name)
    }
}

/// Errors of page handlers: an [`AppError`], or a 404 that lists close names.
#[derive(Debug)]
pub enum PageError {
    App(AppError),
    Missing(Missing),
}

impl<E: Into<AppError>> From<E> for PageError {
    fn from(e: E) -> Self {
        PageError::App(e.into())
    }
}

pub type PageResult<T> = Result<T, PageError>;

/// The 404 page with "did you mean" links.
#[derive(Template)]
#[template(path = "not_found.html")]
pub struct NotFoundPage {
    pub detail: String,
    pub what: &'static str,
    /// (link, name) of the close names.
    pub suggestions: Vec<(String, String)>,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match self {
            PageError::App(e) => e.into_response(),
            PageError::Missing(m) => {
                let page = NotFoundPage {
                    detail: m.detail(),
                    what: m.what,
                    suggestions: m
                        .suggestions
                        .iter()
                        .map(|s| (format!("{}{}", m.link_prefix, path_escape(s)), s.clone()))
                        .collect(),
                };
                match page.render() {
                    Ok(html) => (StatusCode::NOT_FOUND, Html(html)).into_response(),
                    Err(_) => (StatusCode::NOT_FOUND, m.detail()).into_response(),
                }
            }
        }
    }
}

/// Errors of API handlers: the same as pages, answered as JSON.
#[derive(Debug)]
pub struct ApiError(pub PageError);

impl<E: Into<PageError>> From<E> for ApiError {
    fn from(e: E) -> Self {
        ApiError(e.into())
    }
}

pub type ApiResult<T> = Result<Json<T>, ApiError>;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self.0 {
            PageError::App(e) => e.into_json_response(),
            PageError::Missing(m) => {
                let mut body = AppError::NotFound(m.detail()).to_json();
                body["did_you_mean"] = serde_json::json!(m.suggestions);
                (StatusCode::NOT_FOUND, Json(body)).into_response()
            }
        }
    }
}

/// A run id from a path segment, with a readable 400.
pub fn parse_id(s: &str, what: &str) -> Result<i64, AppError> {
    s.parse::<i64>()
        .map_err(|_| AppError::BadRequest(format!("{what} must be a whole number, found {s:?}")))
}

/// Percent-encodes everything but unreserved characters (for a path segment or query value).
pub fn path_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Up to 5 names closest to `target`: the same ignoring case, containing it, or within a small
/// edit distance, closest first.
pub fn close_matches(target: &str, candidates: &[String]) -> Vec<String> {
    let t = target.to_lowercase();
    let budget = (t.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .filter_map(|c| {
            let l = c.to_lowercase();
            let d = levenshtein(&t, &l);
            if d <= budget {
                Some((d, c))
            } else if !t.is_empty() && (l.contains(&t) || t.contains(&l)) {
                Some((budget + 1, c))
            } else {
                None
            }
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(5).map(|(_, c)| c.clone()).collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Builds a `Missing` for a build label, with the close labels that exist.
pub async fn missing_build(store: &store::Store, label: &str) -> PageError {
    let labels = store.build_labels_sorted().await.unwrap_or_default();
    PageError::Missing(Missing {
        what: "build",
        name: label.to_string(),
        suggestions: close_matches(label, &labels),
        link_prefix: "/builds/",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(pct(Some(3.2149)), "+3.21%");
        assert_eq!(pct(Some(-12.0)), "-12.00%");
        assert_eq!(pct(None), "-");
        assert_eq!(prob(Some(0.05)), "0.0500");
        assert_eq!(prob(Some(0.000012)), "1.2e-5");
        assert_eq!(human(Some(0.000564), "s"), "564 us");
        assert_eq!(human(None, "s"), "-");
        assert_eq!(human(Some(4e-15), "s^2"), "4000 ns^2");
        assert_eq!(human(Some(2.4e-11), "s^2"), "24 us^2");
        assert_eq!(human(Some(0.0), "s^2"), "0 s^2");
    }

    #[test]
    fn escapes_paths() {
        assert_eq!(path_escape("v5.1"), "v5.1");
        assert_eq!(path_escape("a/b c<"), "a%2Fb%20c%3C");
        assert_eq!(path_escape("é"), "%C3%A9");
    }

    #[test]
    fn suggests_close_names() {
        let c: Vec<String> = ["v5.1", "v4.19", "v5.10", "c229828ca6bc-reverted"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(close_matches("v5.2", &c), vec!["v5.1", "v5.10"]);
        assert_eq!(close_matches("c229828", &c), vec!["c229828ca6bc-reverted"]);
        assert!(close_matches("zzzzzzzzzzzz", &c).is_empty());
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
