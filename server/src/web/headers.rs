//! Security headers on every answer, and tokens kept out of addresses (and so out of logs).

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::AppError;

/// Only the project's own scripts, styles and images; no framing; forms post back here.
/// Inline SVG charts need nothing more: they are markup, not scripts or styles.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Adds `X-Content-Type-Options: nosniff` to every answer and the content security policy to
/// HTML pages.
pub async fn security(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let h = response.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if is_html {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

/// Refuses a token sent in the query string (`?token=`, `?access_token=`): addresses end up in
/// logs, proxies and browser history. The refusal is logged with the query left out.
pub async fn no_token_in_query(request: Request, next: Next) -> Response {
    let query = request.uri().query().unwrap_or("");
    let has_token = query.split('&').any(|pair| {
        let key = pair.split('=').next().unwrap_or("");
        key.eq_ignore_ascii_case("token") || key.eq_ignore_ascii_case("access_token")
    });
    if has_token {
        tracing::warn!(
            path = request.uri().path(),
            "refused a token in the query string (query not logged)"
        );
        return AppError::BadRequest(
            "tokens are not accepted in the address: send `Authorization: Bearer TOKEN`".into(),
        )
        .into_response();
    }
    next.run(request).await
}

/// The address as it may be logged: without its query string when that names a token.
pub fn loggable_uri(uri: &axum::http::Uri) -> String {
    let lower = uri.query().unwrap_or("").to_ascii_lowercase();
    if lower.contains("token") {
        uri.path().to_string()
    } else {
        uri.to_string()
    }
}
