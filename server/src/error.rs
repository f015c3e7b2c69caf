//! One error type for handlers: user mistakes become a 4xx with a reason, everything else a
//! logged 500. API routes answer JSON `{error, detail, file, line}`; pages render `error.html`.

use askama::Template;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    PayloadTooLarge(String),
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// Input that could not be parsed: which file, which line.
    #[error("{detail}")]
    Unprocessable {
        detail: String,
        file: Option<String>,
        line: Option<u64>,
    },
    /// The request is fine but the server cannot take it now (429 rate limit, 503 busy): the
    /// answer carries `Retry-After`.
    #[error("{detail}")]
    RetryLater {
        status: StatusCode,
        detail: String,
        retry_after_secs: u64,
    },
    /// The store failed (a database error or corrupt data): a 500, logged.
    #[error("database error")]
    Store(#[source] store::Error),
    #[error("internal error")]
    Anyhow(#[from] anyhow::Error),
}

impl AppError {
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AppError::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::RetryLater { status, .. } => *status,
            AppError::Store(_) | AppError::Anyhow(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn short(&self) -> &'static str {
        match self {
            AppError::NotFound(_) => "not found",
            AppError::BadRequest(_) => "bad request",
            AppError::Unauthorized(_) => "unauthorized",
            AppError::Forbidden(_) => "forbidden",
            AppError::PayloadTooLarge(_) => "payload too large",
            AppError::UnsupportedMediaType(_) => "unsupported media type",
            AppError::Unprocessable { .. } => "unprocessable input",
            AppError::RetryLater { status, .. } if *status == StatusCode::TOO_MANY_REQUESTS => {
                "too many requests"
            }
            AppError::RetryLater { .. } => "busy",
            AppError::Store(_) | AppError::Anyhow(_) => "internal error",
        }
    }

    fn log_internal(&self) {
        match self {
            AppError::Store(e) => tracing::error!("{e:#}"),
            AppError::Anyhow(e) => tracing::error!("internal error: {e:#}"),
            _ => {}
        }
    }

    /// The JSON body the API answers with.
    pub fn to_json(&self) -> serde_json::Value {
        let (file, line) = match self {
            AppError::Unprocessable { file, line, .. } => (file.clone(), *line),
            _ => (None, None),
        };
        serde_json::json!({
            "error": self.short(),
            "detail": self.to_string(),
            "file": file,
            "line": line,
        })
    }

    /// Answers as JSON (for `/api/...`).
    pub fn into_json_response(self) -> Response {
        self.log_internal();
        let mut r = (self.status(), Json(self.to_json())).into_response();
        self.add_retry_after(&mut r);
        r
    }

    fn add_retry_after(&self, r: &mut Response) {
        if let AppError::RetryLater {
            retry_after_secs, ..
        } = self
        {
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(*retry_after_secs),
            );
        }
    }
}

impl From<store::Error> for AppError {
    fn from(e: store::Error) -> Self {
        match e {
            store::Error::Parse(e) => e.into(),
            store::Error::Invalid(msg) => AppError::BadRequest(msg),
            e @ store::Error::Revoked { .. } => AppError::Forbidden(e.to_string()),
            e @ (store::Error::Db(_)
            | store::Error::Write(_)
            | store::Error::Io { .. }
            | store::Error::Corrupt(_)
            | store::Error::Migrate(_)) => AppError::Store(e),
        }
    }
}

impl From<ingest::Error> for AppError {
    fn from(e: ingest::Error) -> Self {
        match e {
            ingest::Error::Invalid(msg) => AppError::BadRequest(msg),
            other => AppError::Unprocessable {
                detail: other.to_string(),
                file: other.path().map(|p| p.display().to_string()),
                line: other.line(),
            },
        }
    }
}

/// The error page.
#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub status: u16,
    pub title: &'static str,
    pub detail: String,
    pub hint: Option<String>,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        self.log_internal();
        let status = self.status();
        let page = ErrorPage {
            status: status.as_u16(),
            title: self.short(),
            detail: self.to_string(),
            hint: match &self {
                AppError::NotFound(_) => Some(
                    "See the home page for the builds, machines and benchmarks that exist.".into(),
                ),
                _ => None,
            },
        };
        let mut r = match page.render() {
            Ok(html) => (status, Html(html)).into_response(),
            Err(_) => (status, self.to_string()).into_response(),
        };
        self.add_retry_after(&mut r);
        r
    }
}

pub type AppResult<T> = Result<T, AppError>;
