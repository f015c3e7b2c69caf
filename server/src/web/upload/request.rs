//! What an upload request's headers and body framing must be: multipart/form-data, a
//! well-formed `Idempotency-Key`, a supported `Content-Encoding`, and the size limit, each
//! refused with its own answer (415, 400, 413), with the token checked first; and how a short
//! body refused on its headers is read to its end first.

use std::time::Duration;

use axum::body::Body;
use axum::extract::multipart::MultipartError;
use axum::http::{HeaderMap, StatusCode, header};

use crate::error::AppError;
use crate::state::AppState;
use crate::tokens::{self, Token};

/// What the headers allowed: the sender's token, the body's size limit, the
/// `Idempotency-Key`, and the upload's room in the budget of uploads in flight.
pub(super) struct Admitted {
    pub(super) token: Token,
    pub(super) limit: u64,
    pub(super) idempotency_key: Option<String>,
    /// Held until the upload is answered.
    pub(super) budget: tokio::sync::OwnedSemaphorePermit,
}

/// The checks made on the headers alone, before any of the body is read.
pub(super) async fn admit(state: &AppState, headers: &HeaderMap) -> Result<Admitted, AppError> {
    let limit = state.config.max_upload_mib.saturating_mul(1 << 20);
    let token = tokens::authenticate_upload(
        &state.upload_tokens,
        &state.store,
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok()),
    )
    .await?;
    check_multipart(headers)?;
    let idempotency_key = idempotency_key(headers)?;
    let declared = declared_length(headers);
    if let Some(len) = declared
        && len > limit
    {
        return Err(too_large(limit));
    }
    // Room in the budget of all uploads in flight: the declared length, or the most a body
    // may be when it does not say.
    let budget = state
        .upload_budget
        .reserve(declared.unwrap_or(limit).min(limit))
        .await?;
    Ok(Admitted {
        token,
        limit,
        idempotency_key,
        budget,
    })
}

/// The body's length as its `Content-Length` declares it.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// 415 unless the body is multipart/form-data.
pub(super) fn check_multipart(headers: &HeaderMap) -> Result<(), AppError> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let essence = ct.as_deref().map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    if essence.as_deref() == Some("multipart/form-data") {
        return Ok(());
    }
    Err(AppError::UnsupportedMediaType(format!(
        "an upload is multipart/form-data (metadata fields and files, as `curl -F` sends them); the request's Content-Type is {}",
        match ct {
            Some(c) => format!("{:?}", super::truncate(&c, 100)),
            None => "missing".into(),
        }
    )))
}

pub(super) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, AppError> {
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let bytes = v.as_bytes();
    if bytes.is_empty()
        || bytes.len() > super::MAX_IDEMPOTENCY_KEY
        || !bytes.iter().all(|b| (0x21..=0x7e).contains(b))
    {
        return Err(AppError::BadRequest(format!(
            "the Idempotency-Key header must be 1 to {} printable ASCII characters without spaces",
            super::MAX_IDEMPOTENCY_KEY
        )));
    }
    Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
}

pub(super) enum Encoding {
    Identity,
    Gzip,
}

pub(super) fn content_encoding(headers: &HeaderMap) -> Result<Encoding, AppError> {
    match headers
        .get(header::CONTENT_ENCODING)
        .map(|v| {
            String::from_utf8_lossy(v.as_bytes())
                .trim()
                .to_ascii_lowercase()
        })
        .as_deref()
    {
        None | Some("") | Some("identity") => Ok(Encoding::Identity),
        Some("gzip") | Some("x-gzip") => Ok(Encoding::Gzip),
        Some(other) => Err(AppError::UnsupportedMediaType(format!(
            "Content-Encoding {:?} is not supported; send gzip or no encoding",
            super::truncate(other, 40)
        ))),
    }
}

pub(super) fn too_large(limit: u64) -> AppError {
    AppError::PayloadTooLarge(format!(
        "the upload is larger than {} MiB (the server's --max-upload-mib)",
        limit >> 20
    ))
}

/// Whether an error came from the body limit, anywhere in its chain of sources.
pub(super) fn is_length_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        // A limit hit under the gzip stream reaches here wrapped in an I/O error.
        if let Some(inner) = err
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            && is_length_limit(inner)
        {
            return true;
        }
        cur = err.source();
    }
    false
}

pub(super) fn multipart_error(e: MultipartError, limit: u64) -> AppError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE || is_length_limit(&e) {
        return too_large(limit);
    }
    AppError::BadRequest(format!(
        "malformed multipart/form-data body: {}",
        e.body_text()
    ))
}

/// Bodies up to this long are read to their end before a refusal made on the headers alone.
const DRAIN_BYTES: usize = 1 << 20;
/// The longest a refused body is read for.
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// Reads a refused upload's body to its end when it is short (at most [`DRAIN_BYTES`], for at
/// most [`DRAIN_TIME`]) before the refusal is sent. Answered while still sending it, a client
/// finds the connection closed under its writes and reports a broken pipe (and may retry)
/// rather than the refusal's reason: an unknown token, say.
pub(super) async fn drain_refused(body: Body, headers: &HeaderMap) {
    if declared_length(headers).is_some_and(|n| n > DRAIN_BYTES as u64) {
        return;
    }
    // A longer body (one that did not say its length) ends the read with an error: dropped,
    // like one that takes too long.
    let _ = tokio::time::timeout(DRAIN_TIME, axum::body::to_bytes(body, DRAIN_BYTES)).await;
}
