//! The static files (CSS, JS, icon), built into the binary so that an installed `quiescent`
//! serves them without the source tree; `--static-dir` serves a directory instead.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::Embed;

/// `static/` at build time. `debug-embed` embeds in debug builds too, so tests see what an
/// installed binary serves.
#[derive(Embed)]
#[folder = "../static/"]
struct Static;

/// `GET /static/{*path}` from the embedded files, with an ETag and revalidation.
pub async fn embedded(Path(path): Path<String>, headers: HeaderMap) -> Response {
    let Some(file) = Static::get(&path) else {
        return (StatusCode::NOT_FOUND, "no such static file").into_response();
    };
    let etag = format!("\"{}\"", hex::encode(&file.metadata.sha256_hash()[..16]));
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        file.data.into_owned().into_response()
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(file.metadata.mimetype()) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    // Revalidate every time: the files change with the binary and the check is one round trip.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The names of the embedded files (for tests and `--help` claims).
pub fn names() -> impl Iterator<Item = String> {
    Static::iter().map(|n| n.into_owned())
}
