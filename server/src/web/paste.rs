//! `/paste`: a whole email pasted (or chosen as a file) is compared with itself like
//! `quiescent compare MAIL`, shown as a comparison page with the author's claims checked and a
//! reply text. Nothing is stored unless the user presses Share (`POST /paste/share`), which
//! keeps the mail behind `/c/{id}` (re-parsed and compared when opened). Shares count against
//! the server's one limit of anonymous writes per client address (`--anon-writes-per-minute`).

use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde::Deserialize;

use super::compare::{CompareView, ViewFilter};
use super::paste_db;
use super::view::{PageResult, fmt_time};
use crate::error::AppError;
use crate::mail::{self, MailReport, claims::Status};
use crate::report::Selection;
use crate::state::AppState;

/// The largest mail a paste takes.
pub const MAX_PASTE_BYTES: usize = 1 << 20;
/// The body of a paste or a share: a mail URL-encoded takes up to three bytes per byte (a
/// multipart paste holds it twice at most, as text and as a file), and small fields.
const MAX_BODY_BYTES: usize = 3 * MAX_PASTE_BYTES + 64 * 1024;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/paste",
            get(form_page)
                .post(submit)
                .layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
        .route(
            "/paste/share",
            post(share).layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
}

/// The paste form, empty or refilled with an error.
#[derive(Template, WebTemplate)]
#[template(path = "paste/form.html")]
pub struct PasteForm {
    pub mail: String,
    pub base_block: String,
    pub head_block: String,
    pub error: Option<String>,
}

/// A claim as the panel shows it.
pub struct ClaimView {
    pub line: u64,
    pub text: String,
    pub summary: String,
    pub series: String,
    /// `consistent`, `overstated`... (a CSS class).
    pub status: &'static str,
    pub status_text: &'static str,
}

/// Which blocks were compared.
pub struct PairView {
    pub base: String,
    pub head: String,
    pub scenario: String,
}

/// The comparison of a pasted mail.
#[derive(Template, WebTemplate)]
#[template(path = "paste/result.html")]
pub struct PasteResult {
    pub v: CompareView,
    pub format: String,
    pub pairs: Vec<PairView>,
    pub claims: Vec<ClaimView>,
    pub reply: String,
    /// The mail, for the Share form.
    pub mail: String,
    pub base_block: String,
    pub head_block: String,
    /// Set when shown from `/c/{id}`.
    pub shared: Option<(String, String)>,
}

async fn form_page() -> PasteForm {
    PasteForm {
        mail: String::new(),
        base_block: String::new(),
        head_block: String::new(),
        error: None,
    }
}

fn status_class(s: Status) -> &'static str {
    match s {
        Status::Consistent => "consistent",
        Status::Overstated => "overstated",
        Status::Understated => "understated",
        Status::NotSupported => "not_supported",
        Status::Unmatched => "unmatched",
    }
}

fn nonempty(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// Compares a mail off the async threads (a large one takes a while).
async fn compare_text(
    text: Vec<u8>,
    base_block: Option<String>,
    head_block: Option<String>,
) -> Result<MailReport, String> {
    let opts = mail::Options {
        base_block,
        head_block,
        ..mail::Options::default()
    };
    tokio::task::spawn_blocking(move || mail::compare_mail("the mail", &text, &opts))
        .await
        .map_err(|e| format!("comparing the mail failed: {e}"))?
        .map_err(|e| e.to_string())
}

async fn result_page(
    st: &AppState,
    m: MailReport,
    mail_text: String,
    base_block: String,
    head_block: String,
    shared: Option<(String, String)>,
) -> PageResult<PasteResult> {
    let sel = Selection {
        base: m.report.base.build.label.clone(),
        head: m.report.head.build.label.clone(),
        ..Selection::default()
    };
    let reply = crate::export::claims::email(&m);
    let claims = m
        .claims
        .iter()
        .map(|c| ClaimView {
            line: c.line,
            text: c.text.clone(),
            summary: c.summary(),
            series: c.matched_series.clone().unwrap_or_else(|| "-".into()),
            status: status_class(c.status),
            status_text: c.status.as_str(),
        })
        .collect();
    let pairs = m
        .mail
        .pairs
        .iter()
        .map(|p| PairView {
            base: p.base.clone(),
            head: p.head.clone(),
            scenario: p.scenario.clone().unwrap_or_default(),
        })
        .collect();
    let format = m.mail.format.clone();
    let mut v =
        CompareView::build(&st.store, Arc::new(m.report), &sel, ViewFilter::default()).await?;
    if let Some((id, _)) = &shared {
        v.csv_href = format!("/c/{id}/csv");
        v.json_href = format!("/c/{id}/json");
        v.api_href = format!("/api/v1/c/{id}");
    }
    Ok(PasteResult {
        v,
        format,
        pairs,
        claims,
        reply,
        mail: mail_text,
        base_block,
        head_block,
        shared,
    })
}

/// The form again, with the reason and the status.
fn refused(
    status: StatusCode,
    error: String,
    mail: String,
    base: String,
    head: String,
) -> Response {
    let page = PasteForm {
        mail,
        base_block: base,
        head_block: head,
        error: Some(error),
    };
    (status, page).into_response()
}

fn too_large(what: &str) -> String {
    format!(
        "{what} is larger than {} MiB: paste only the mail (its text, without attachments)",
        MAX_PASTE_BYTES >> 20
    )
}

/// What a body refused by an extractor is told: the size limit in words, else `reason`.
fn body_refusal(status: StatusCode, reason: String, what: &str) -> String {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        too_large(what)
    } else {
        reason
    }
}

/// The fields of a URL-encoded paste (`file` is multipart's only).
async fn url_encoded(req: Request, st: &AppState) -> Result<Pasted, Response> {
    match Form::<MailFields>::from_request(req, st).await {
        Ok(Form(f)) => Ok(Pasted {
            mail: f.mail.into_bytes(),
            base: f.base_block.trim().to_string(),
            head: f.head_block.trim().to_string(),
        }),
        Err(e) => {
            let status = e.status();
            let reason = format!(
                "{}: the mail goes in a field named `mail` (`curl --data-urlencode mail@FILE`)",
                e.body_text()
            );
            let msg = body_refusal(status, reason, "the paste");
            Err(refused(
                status,
                msg,
                String::new(),
                String::new(),
                String::new(),
            ))
        }
    }
}

/// The fields of a multipart paste; a chosen file is kept apart from the text box's mail.
async fn multipart(req: Request, st: &AppState) -> Result<Pasted, Response> {
    let mut mp = match Multipart::from_request(req, st).await {
        Ok(m) => m,
        Err(e) => {
            return Err(refused(
                e.status(),
                e.body_text(),
                String::new(),
                String::new(),
                String::new(),
            ));
        }
    };
    let (mut text, mut file, mut base, mut head) =
        (Vec::new(), Vec::new(), String::new(), String::new());
    loop {
        let field = match mp.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                let msg = body_refusal(e.status(), e.body_text(), "the paste");
                return Err(refused(e.status(), msg, String::new(), base, head));
            }
        };
        let name = field.name().unwrap_or("").to_string();
        let bytes = match field.bytes().await {
            Ok(b) => b,
            Err(e) => {
                let msg = body_refusal(e.status(), e.body_text(), "the paste");
                return Err(refused(e.status(), msg, String::new(), base, head));
            }
        };
        match name.as_str() {
            "mail" => text = bytes.to_vec(),
            "file" => file = bytes.to_vec(),
            "base_block" => base = String::from_utf8_lossy(&bytes).trim().to_string(),
            "head_block" => head = String::from_utf8_lossy(&bytes).trim().to_string(),
            _ => {}
        }
    }
    // A chosen (or dropped) file wins over the text box.
    let mail = if file.is_empty() { text } else { file };
    Ok(Pasted { mail, base, head })
}

/// What a paste posts, however it was sent.
struct Pasted {
    mail: Vec<u8>,
    base: String,
    head: String,
}

/// `POST /paste`: multipart (the page's form: `mail` text, `file`, `base_block`, `head_block`)
/// or URL-encoded with the same fields but `file` (`curl --data-urlencode mail@thread.txt`).
async fn submit(State(st): State<AppState>, req: Request) -> PageResult<Response> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let pasted = if content_type.starts_with("application/x-www-form-urlencoded") {
        url_encoded(req, &st).await
    } else if content_type.starts_with("multipart/form-data") {
        multipart(req, &st).await
    } else {
        Err(refused(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the mail as multipart/form-data (the form on this page, or `curl -F mail=<FILE`) \
             or URL-encoded (`curl --data-urlencode mail@FILE`)"
                .into(),
            String::new(),
            String::new(),
            String::new(),
        ))
    };
    let Pasted {
        mail: mail_bytes,
        base,
        head,
    } = match pasted {
        Ok(p) => p,
        Err(refusal) => return Ok(refusal),
    };
    let shown =
        String::from_utf8_lossy(&mail_bytes[..mail_bytes.len().min(MAX_PASTE_BYTES)]).into_owned();
    if mail_bytes.len() > MAX_PASTE_BYTES {
        return Ok(refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            too_large("the paste"),
            String::new(),
            base,
            head,
        ));
    }
    if mail_bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "nothing to compare: paste a whole mail or choose a file".into(),
            String::new(),
            base,
            head,
        ));
    }
    match compare_text(mail_bytes, nonempty(&base), nonempty(&head)).await {
        Ok(m) => Ok(result_page(&st, m, shown, base, head, None)
            .await?
            .into_response()),
        Err(e) => Ok(refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            e,
            shown,
            base,
            head,
        )),
    }
}

/// A mail and its block choices as a URL-encoded form sends them (a share, or a paste by curl).
#[derive(Debug, Deserialize)]
struct MailFields {
    mail: String,
    #[serde(default)]
    base_block: String,
    #[serde(default)]
    head_block: String,
}

/// `POST /paste/share`: stores the mail (when it compares) and redirects to `/c/{id}`.
async fn share(State(st): State<AppState>, req: Request) -> PageResult<Response> {
    // The peer address the server's anonymous-write limiter counts by.
    let ext = req.extensions().clone();
    let Form(f) = match Form::<MailFields>::from_request(req, &st).await {
        Ok(f) => f,
        Err(e) => {
            let status = e.status();
            let msg = body_refusal(status, e.body_text(), "the shared mail");
            return Ok(refused(
                status,
                msg,
                String::new(),
                String::new(),
                String::new(),
            ));
        }
    };
    if f.mail.len() > MAX_PASTE_BYTES {
        return Ok(refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            too_large("the shared mail"),
            String::new(),
            f.base_block,
            f.head_block,
        ));
    }
    // One limit for every anonymous write (`serve --anon-writes-per-minute`): a share stores.
    st.anon_writes.check(&ext)?;
    let (base, head) = (nonempty(&f.base_block), nonempty(&f.head_block));
    let m = match compare_text(f.mail.clone().into_bytes(), base.clone(), head.clone()).await {
        Ok(m) => m,
        Err(e) => {
            return Ok(refused(
                StatusCode::UNPROCESSABLE_ENTITY,
                e,
                f.mail,
                f.base_block,
                f.head_block,
            ));
        }
    };
    let id = {
        paste_db::store(
            &st.store,
            f.mail.as_bytes(),
            base,
            head,
            &m.report.base.build.label,
            &m.report.head.build.label,
            &m.report.settings,
        )
        .await?
    };
    Ok(Redirect::to(&format!("/c/{id}")).into_response())
}

/// A shared paste compared again: what its page, CSV, JSON and API views show.
pub struct SharedPaste {
    pub id: String,
    pub created_at: i64,
    pub text: String,
    pub base_block: Option<String>,
    pub head_block: Option<String>,
    pub report: MailReport,
}

/// The shared paste `id` re-parsed and compared; `None` when `id` is no paste.
pub async fn shared_report(st: &AppState, id: &str) -> Result<Option<SharedPaste>, AppError> {
    let Some(p) = paste_db::load(&st.store, id).await? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&p.text).into_owned();
    let (base, head) = (p.spec.base_block.clone(), p.spec.head_block.clone());
    let report = compare_text(p.text, base.clone(), head.clone())
        .await
        .map_err(|e| AppError::Anyhow(anyhow::anyhow!("shared paste {id}: {e}")))?;
    Ok(Some(SharedPaste {
        id: p.id,
        created_at: p.created_at,
        text,
        base_block: base,
        head_block: head,
        report,
    }))
}

/// `/c/{id}` of a shared paste: the mail re-parsed and compared; `None` when `id` is no paste.
pub async fn shared_page(st: &AppState, id: &str) -> PageResult<Option<Response>> {
    let Some(p) = shared_report(st, id).await? else {
        return Ok(None);
    };
    let (m, text, base, head) = (p.report, p.text, p.base_block, p.head_block);
    let page = result_page(
        st,
        m,
        text,
        base.unwrap_or_default(),
        head.unwrap_or_default(),
        Some((p.id, fmt_time(p.created_at))),
    )
    .await?;
    Ok(Some(page.into_response()))
}
