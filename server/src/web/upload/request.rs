//! What an upload request's headers and body framing must be: multipart/form-data, a
//! well-formed `Idempotency-Key`, a supported `Content-Encoding`, and the size limit, each
//! refused with its own answer (415, 400, 413).

use axum::extract::multipart::MultipartError;
use axum::http::{HeaderMap, StatusCode, header};

use crate::error::AppError;

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
