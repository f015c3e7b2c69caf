//! `POST /api/v1/runs`: test rigs upload raw benchmark outputs with their metadata.
//!
//! The request is multipart/form-data: metadata fields (`build`, `commit`, `kernel_version`,
//! `config`, `cmdline`, `machine`, `machine_fact.NAME`, `benchmark`, `param.NAME`, `format`,
//! `block`) and one or more files, plain or gzip. Files are spooled (in memory when small, to a
//! temporary file otherwise), checked against the size limits (gzip by decompressing into
//! nothing, bounded), then imported in one transaction; the bytes are stored as received.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::multipart::Field;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use store::{BuildMeta, ImportOutcome, InputFile, RunMeta, Source};
use tokio::io::AsyncWriteExt;

mod request;

use request::{Admitted, Encoding, admit, content_encoding, multipart_error, too_large};

use crate::error::AppError;
use crate::state::AppState;
use crate::tokens::Token;

/// Files per upload: a trace_stat directory of a 1000-CPU machine still fits.
pub const MAX_FILES: usize = 1000;
/// Metadata fields (params, machine facts...) per upload.
pub const MAX_FIELDS: usize = 1000;
/// Bytes of one metadata field, except `config`.
pub const MAX_FIELD_BYTES: usize = 64 * 1024;
/// Bytes of the kernel config (a whole .config is ~200 KiB).
pub const MAX_CONFIG_BYTES: usize = 16 << 20;
/// Files larger than this are spooled to a temporary file rather than kept in memory.
const SPILL_BYTES: usize = 1 << 20;
/// Longest `Idempotency-Key` accepted.
const MAX_IDEMPOTENCY_KEY: usize = 255;

/// The upload route. The body limit is applied by the handler (from `--max-upload-mib`), so
/// axum's 2 MB default is lifted here.
pub fn routes() -> Router<AppState> {
    Router::new().route(
        "/api/v1/runs",
        post(upload).layer(DefaultBodyLimit::disable()),
    )
}

async fn upload(State(state): State<AppState>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let admitted = match admit(&state, &parts.headers).await {
        Ok(a) => a,
        Err(e) => {
            request::drain_refused(body, &parts.headers).await;
            return e.into_json_response();
        }
    };
    match handle(&state, admitted, Request::from_parts(parts, body)).await {
        Ok(r) => r,
        Err(e) => e.into_json_response(),
    }
}

/// One received file.
struct Upload {
    name: String,
    data: Spooled,
    size: u64,
    /// The sender said it is gzip (a `.gz` name or `Content-Encoding: gzip` on the part).
    declared_gzip: bool,
}

enum Spooled {
    Mem(Vec<u8>),
    File(PathBuf),
}

impl Upload {
    fn reader(&self) -> std::io::Result<Box<dyn Read + Send + '_>> {
        Ok(match &self.data {
            Spooled::Mem(v) => Box::new(v.as_slice()),
            Spooled::File(p) => Box::new(std::fs::File::open(p)?),
        })
    }

    fn starts_with_gzip_magic(&self) -> std::io::Result<bool> {
        if let Spooled::Mem(v) = &self.data {
            return Ok(ingest::is_gzip(v));
        }
        let mut head = [0u8; 2];
        let mut r = self.reader()?;
        let mut got = 0;
        while got < 2 {
            let n = r.read(&mut head[got..])?;
            if n == 0 {
                break;
            }
            got += n;
        }
        Ok(ingest::is_gzip(&head[..got]))
    }
}

/// The metadata and files of one request.
#[derive(Default)]
struct UploadForm {
    build: Option<String>,
    commit: Option<String>,
    kernel_version: Option<String>,
    config: Option<String>,
    cmdline: Option<String>,
    machine: Option<String>,
    benchmark: Option<String>,
    format: Option<String>,
    block: Option<String>,
    branch: Option<String>,
    parent: Option<String>,
    commit_time: Option<String>,
    machine_facts: BTreeMap<String, String>,
    params: BTreeMap<String, String>,
    fields: usize,
    files: Vec<Upload>,
}

async fn handle(state: &AppState, admitted: Admitted, req: Request) -> Result<Response, AppError> {
    let Admitted {
        token,
        limit,
        idempotency_key,
        budget: _budget,
    } = admitted;
    let encoding = content_encoding(req.headers())?;
    let gzip_body = matches!(encoding, Encoding::Gzip);
    let req = match encoding {
        Encoding::Identity => req,
        Encoding::Gzip => super::limits::gunzip_body(req, limit),
    };
    let (parts, body) = req.into_parts();
    let body = Body::new(http_body_util::Limited::new(body, limit as usize));
    let req = Request::from_parts(parts, body);
    let mut multipart = Multipart::from_request(req, state).await.map_err(|e| {
        AppError::BadRequest(format!("cannot read the multipart/form-data body: {e}"))
    })?;

    // Temporary files live until the import is done.
    let mut spool = super::limits::Spool::new(&state.spool_dir);
    let mut form = UploadForm::default();
    let read = async {
        while let Some(field) = multipart
            .next_field()
            .await
            .map_err(|e| multipart_error(e, limit))?
        {
            read_field(field, &mut form, &mut spool, limit).await?;
        }
        Ok::<(), AppError>(())
    };
    read.await.map_err(|e| match e {
        // The generic limit error, hit while decompressing: say it was the decompressed size.
        AppError::PayloadTooLarge(m) if gzip_body && m == too_large(limit).to_string() => {
            AppError::PayloadTooLarge(format!(
                "the gzip body decompresses to more than {} MiB (the server's --max-upload-mib)",
                limit >> 20
            ))
        }
        e => e,
    })?;
    let meta = form.run_meta(token.id)?;
    let placement = form.placement()?;
    token.check_scope(&meta.machine, &meta.build.label)?;
    let format = form.format.clone();
    let files = std::mem::take(&mut form.files);

    // Small files in memory, none gzip, are hashed here: a thread hand-off costs more.
    let small = files.iter().all(|f| {
        matches!(f.data, Spooled::Mem(_)) && matches!(f.starts_with_gzip_magic(), Ok(false))
    }) && files.iter().map(|f| f.size).sum::<u64>() <= INLINE_CHECK_BYTES;
    let (files, files_hash) = if small {
        let h = check_sizes(&files, limit)?;
        (files, h)
    } else {
        tokio::task::spawn_blocking(move || check_sizes(&files, limit).map(|h| (files, h)))
            .await
            .map_err(|e| anyhow::anyhow!("size check failed: {e}"))??
    };
    let content_hash = content_hash(&meta, format.as_deref(), &files_hash);

    if let Some(key) = &idempotency_key
        && let Some(r) = replay(state, &token, key, &content_hash).await?
    {
        return Ok(r);
    }

    let inputs: Vec<InputFile> = files
        .into_iter()
        .map(|f| InputFile {
            name: f.name,
            source: match f.data {
                Spooled::Mem(v) => Source::Bytes(Arc::from(v)),
                Spooled::File(p) => Source::Path(p),
            },
            format: format.clone(),
        })
        .collect();

    let outcome = {
        // Parsing runs alongside other uploads; their writes take turns in the store.
        // One upload per key at a time on every server of the database, so that the key is
        // checked, the run stored and the key recorded as one step.
        let key_lock = match &idempotency_key {
            Some(key) => Some(
                state
                    .store
                    .lock_named(&format!("idempotency-key {} {key}", token.id))
                    .await?,
            ),
            None => None,
        };
        let stored = import_once(
            state,
            &token,
            idempotency_key.as_deref(),
            &content_hash,
            &meta,
            &inputs,
        )
        .await;
        if let Some(lock) = key_lock {
            lock.release().await;
        }
        match stored? {
            Ok(outcome) => outcome,
            Err(replayed) => return Ok(replayed),
        }
    };
    drop(spool);
    if outcome.created {
        crate::history::after_upload(state, &outcome, &meta.build.label, &placement).await?;
        tracing::info!(
            token = %token.name,
            runs = ?outcome.run_ids,
            samples = outcome.samples,
            "upload stored"
        );
    }
    respond(state, &outcome, &token).await
}

/// Imports the upload unless its `Idempotency-Key` was used before: then the earlier answer
/// (`Err`), or 422 when the key came with other content.
async fn import_once(
    state: &AppState,
    token: &Token,
    idempotency_key: Option<&str>,
    content_hash: &str,
    meta: &RunMeta,
    inputs: &[InputFile],
) -> Result<Result<ImportOutcome, Response>, AppError> {
    // Again under the locks: a concurrent request with the same key may have just stored.
    if let Some(key) = idempotency_key
        && let Some(r) = replay(state, token, key, content_hash).await?
    {
        return Ok(Err(r));
    }
    // The key is remembered in the transaction that stores the runs.
    let key = idempotency_key.map(|key| store::IdempotencyKey {
        token_id: token.id,
        key: key.to_string(),
        content_hash: content_hash.to_string(),
    });
    let outcome = state
        .store
        .import_upload(meta, inputs, key.as_ref())
        .await?;
    // Content stored before (by a request without this key): the key now names those runs.
    if let Some(key) = &key
        && !outcome.created
        && let Some(&run_id) = outcome.run_ids.first()
    {
        state
            .store
            .remember_idempotency_key_for(key.token_id, &key.key, run_id, &key.content_hash)
            .await?;
    }
    Ok(Ok(outcome))
}

/// The answer to a request whose `Idempotency-Key` was used before: the stored run when the
/// content is the same, 422 when it differs (the new data would otherwise be dropped silently).
async fn replay(
    state: &AppState,
    token: &Token,
    key: &str,
    content_hash: &str,
) -> Result<Option<Response>, AppError> {
    let Some(used) = state.store.idempotency_key_use(token.id, key).await? else {
        return Ok(None);
    };
    if let Some(h) = &used.content_hash
        && h != content_hash
    {
        return Err(AppError::Unprocessable {
            detail: format!(
                "the Idempotency-Key {:?} was used for a different upload (run {}); send new content with a new key",
                truncate(key, 80),
                used.run_id
            ),
            file: None,
            line: None,
        });
    }
    let Some(outcome) = state.store.idempotent_outcome(token.id, key).await? else {
        return Ok(None);
    };
    Ok(Some(respond(state, &outcome, token).await?))
}

/// sha256 of an upload's metadata and files, as received.
fn content_hash(meta: &RunMeta, format: Option<&str>, files_hash: &str) -> String {
    use sha2::{Digest, Sha256};
    let meta_json = serde_json::to_string(&(
        &meta.build,
        &meta.machine,
        &meta.machine_facts,
        &meta.benchmark,
        &meta.params,
        &meta.block,
        format,
    ))
    .unwrap_or_default();
    let mut h = Sha256::new();
    h.update(meta_json.as_bytes());
    h.update([0u8]);
    h.update(files_hash.as_bytes());
    hex::encode(h.finalize())
}

/// Reads one part into the form: a file, the config, or a metadata field.
async fn read_field(
    mut field: Field<'_>,
    form: &mut UploadForm,
    spool: &mut super::limits::Spool<'_>,
    limit: u64,
) -> Result<(), AppError> {
    let name = field.name().unwrap_or("").to_string();
    let file_name = field.file_name().map(str::to_string);
    if name == "config" {
        let text = read_text(&mut field, &name, MAX_CONFIG_BYTES, limit).await?;
        return set_once(&mut form.config, &name, text);
    }
    let is_file = file_name.is_some() || matches!(name.as_str(), "file" | "files" | "file[]");
    if is_file {
        return read_file(field, form, spool, file_name, limit).await;
    }
    form.fields += 1;
    if form.fields > MAX_FIELDS {
        return Err(AppError::PayloadTooLarge(format!(
            "more than {MAX_FIELDS} metadata fields in one upload"
        )));
    }
    let value = read_text(&mut field, &name, MAX_FIELD_BYTES, limit).await?;
    if let Some((at, c)) = store::find_bidi(&value).or_else(|| store::find_bidi(&name)) {
        return Err(AppError::BadRequest(format!(
            "field {:?} contains the bidirectional control character U+{:04X} (at byte {at}), which makes text display in another order than it is stored",
            store::escape_bidi(&truncate(&name, 80)),
            c as u32
        )));
    }
    let slot = match name.as_str() {
        "build" => &mut form.build,
        "commit" => &mut form.commit,
        "kernel_version" => &mut form.kernel_version,
        "cmdline" => &mut form.cmdline,
        "machine" => &mut form.machine,
        "benchmark" => &mut form.benchmark,
        "format" => &mut form.format,
        "block" => &mut form.block,
        "branch" => &mut form.branch,
        "parent" => &mut form.parent,
        "commit_time" => &mut form.commit_time,
        _ => {
            let (map, key, value) = if let Some(k) = name.strip_prefix("machine_fact.") {
                (&mut form.machine_facts, k.to_string(), value)
            } else if let Some(k) = name.strip_prefix("param.") {
                (&mut form.params, k.to_string(), value)
            } else if name == "machine_fact" || name == "param" {
                // `-F param=load=idle`: the KEY=VALUE form of the command line's flags.
                let (k, v) = crate::config::parse_kv(&value)
                    .map_err(|e| AppError::BadRequest(format!("field {name}: {e}")))?;
                let map = if name == "param" {
                    &mut form.params
                } else {
                    &mut form.machine_facts
                };
                (map, k, v)
            } else {
                return Err(AppError::BadRequest(format!(
                    "unknown field {:?}; metadata fields are build, commit, branch, parent, commit_time, kernel_version, config, cmdline, machine, machine_fact.NAME, benchmark, param.NAME, format, block, and files are parts with a file name",
                    truncate(&name, 80)
                )));
            };
            if key.trim().is_empty() {
                return Err(AppError::BadRequest(format!(
                    "field {name:?} needs a name after the dot"
                )));
            }
            if map.contains_key(&key) {
                return Err(AppError::BadRequest(format!(
                    "{} {:?} is given twice",
                    if name.starts_with("param") {
                        "parameter"
                    } else {
                        "machine fact"
                    },
                    truncate(&key, 80)
                )));
            }
            map.insert(key, value);
            return Ok(());
        }
    };
    set_once(slot, &name, value)
}

fn set_once(slot: &mut Option<String>, name: &str, value: String) -> Result<(), AppError> {
    if slot.is_some() {
        return Err(AppError::BadRequest(format!(
            "field {name:?} is given twice"
        )));
    }
    // An empty optional field (`-F commit=` from an unset shell variable) means "not given".
    if !value.trim().is_empty() {
        *slot = Some(value);
    }
    Ok(())
}

async fn read_text(
    field: &mut Field<'_>,
    name: &str,
    max: usize,
    limit: u64,
) -> Result<String, AppError> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(|e| multipart_error(e, limit))? {
        if buf.len() + chunk.len() > max {
            return Err(AppError::PayloadTooLarge(format!(
                "field {:?} is larger than {} KiB",
                truncate(name, 80),
                max >> 10
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    String::from_utf8(buf).map_err(|e| {
        AppError::BadRequest(format!(
            "field {:?} is not UTF-8 text (byte {})",
            truncate(name, 80),
            e.utf8_error().valid_up_to()
        ))
    })
}

async fn read_file(
    mut field: Field<'_>,
    form: &mut UploadForm,
    spool: &mut super::limits::Spool<'_>,
    file_name: Option<String>,
    limit: u64,
) -> Result<(), AppError> {
    if form.files.len() >= MAX_FILES {
        return Err(AppError::PayloadTooLarge(format!(
            "more than {MAX_FILES} files in one upload; send fewer per request"
        )));
    }
    let index = form.files.len();
    // Bidirectional controls would make the name display differently from what it is.
    let name = match file_name {
        Some(n) if !n.trim().is_empty() => store::escape_bidi(&n),
        _ => format!("file{index}"),
    };
    if name.chars().any(|c| c.is_control()) || name.len() > 4096 {
        return Err(AppError::BadRequest(format!(
            "file name {:?} has control characters or is longer than 4096 bytes",
            truncate(&name, 80)
        )));
    }
    let part_encoding = field.headers().get(header::CONTENT_ENCODING).map(|v| {
        String::from_utf8_lossy(v.as_bytes())
            .trim()
            .to_ascii_lowercase()
    });
    let declared_gzip = match part_encoding.as_deref() {
        None | Some("") | Some("identity") => name.to_ascii_lowercase().ends_with(".gz"),
        Some("gzip") | Some("x-gzip") => true,
        Some(other) => {
            return Err(AppError::UnsupportedMediaType(format!(
                "file {:?}: Content-Encoding {:?} is not supported; send gzip or plain text",
                truncate(&name, 80),
                truncate(other, 40)
            )));
        }
    };

    let mut mem: Vec<u8> = Vec::new();
    let mut file: Option<(PathBuf, tokio::fs::File)> = None;
    let mut size = 0u64;
    while let Some(chunk) = field.chunk().await.map_err(|e| multipart_error(e, limit))? {
        size += chunk.len() as u64;
        if let Some((_, f)) = &mut file {
            write_chunk(f, &chunk).await?;
        } else if mem.len() + chunk.len() > SPILL_BYTES {
            let path = spool.path()?.join(format!("{index}"));
            let mut f = tokio::fs::File::create(&path)
                .await
                .map_err(|e| anyhow::anyhow!("creating a spool file: {e}"))?;
            write_chunk(&mut f, &mem).await?;
            write_chunk(&mut f, &chunk).await?;
            mem = Vec::new();
            file = Some((path, f));
        } else {
            mem.extend_from_slice(&chunk);
        }
    }
    let data = match file {
        Some((path, mut f)) => {
            f.flush()
                .await
                .map_err(|e| anyhow::anyhow!("writing a spool file: {e}"))?;
            Spooled::File(path)
        }
        None => Spooled::Mem(mem),
    };
    form.files.push(Upload {
        name,
        data,
        size,
        declared_gzip,
    });
    Ok(())
}

async fn write_chunk(f: &mut tokio::fs::File, chunk: &[u8]) -> Result<(), AppError> {
    f.write_all(chunk)
        .await
        .map_err(|e| AppError::Anyhow(anyhow::anyhow!("writing a spool file: {e}")))
}

impl UploadForm {
    /// Where the build goes in its branch's history (`main`, upload order by default).
    fn placement(&self) -> Result<store::Placement, AppError> {
        let commit_time = match &self.commit_time {
            Some(t) => Some(t.trim().parse::<i64>().map_err(|_| {
                AppError::BadRequest(format!(
                    "field commit_time: expected unix seconds, found {:?}",
                    truncate(t, 40)
                ))
            })?),
            None => None,
        };
        let branch = self.branch.clone().unwrap_or_else(|| "main".into());
        if branch.len() > 200 {
            return Err(AppError::BadRequest(
                "field branch: at most 200 bytes".into(),
            ));
        }
        Ok(store::Placement {
            branch,
            parent: self.parent.clone(),
            commit_time,
        })
    }

    /// The run's metadata; 400 naming every missing field.
    fn run_meta(&self, token_id: i64) -> Result<RunMeta, AppError> {
        let missing: Vec<&str> = [
            ("build", &self.build),
            ("machine", &self.machine),
            ("benchmark", &self.benchmark),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_none())
        .map(|(n, _)| n)
        .collect();
        if !missing.is_empty() {
            return Err(AppError::BadRequest(format!(
                "missing metadata: {} (send them as form fields, e.g. -F build=v6.9 -F machine=rig1 -F benchmark=hackbench)",
                missing.join(", ")
            )));
        }
        if self.files.is_empty() {
            return Err(AppError::BadRequest(
                "no files: send the benchmark output as a file part (curl -F file=@output.txt)"
                    .into(),
            ));
        }
        if let Some(f) = &self.format
            && ingest::formats::by_name(f).is_none()
        {
            return Err(AppError::BadRequest(format!(
                "unknown format {:?}; supported formats: {}",
                truncate(f, 80),
                ingest::formats::supported_names()
            )));
        }
        Ok(RunMeta {
            build: BuildMeta {
                label: self.build.clone().unwrap_or_default(),
                commit: self.commit.clone(),
                kernel_version: self.kernel_version.clone(),
                config: self.config.clone(),
                cmdline: self.cmdline.clone(),
            },
            machine: self.machine.clone().unwrap_or_default(),
            machine_facts: self.machine_facts.clone(),
            benchmark: self.benchmark.clone().unwrap_or_default(),
            params: self.params.clone(),
            token_id: Some(token_id),
            block: self.block.clone(),
        })
    }
}

/// Files in memory up to this many bytes in all are checked on the request's task.
const INLINE_CHECK_BYTES: u64 = 256 << 10;

/// The total size of the files, gzip ones decompressed (bounded: a gzip bomb stops at the
/// limit), must fit in `limit`.
fn check_sizes(files: &[Upload], limit: u64) -> Result<String, AppError> {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    let io = |name: &str, e: std::io::Error| {
        AppError::Anyhow(anyhow::anyhow!("reading spooled {name}: {e}"))
    };
    let mut total = 0u64;
    // Only spooled files and gzip need a buffer: files in memory are hashed in place.
    let mut buf = Vec::new();
    for f in files {
        hash.update(f.name.as_bytes());
        hash.update([0u8]);
        hash.update(f.size.to_le_bytes());
        match &f.data {
            Spooled::Mem(v) => hash.update(v),
            Spooled::File(_) => {
                buf.resize(64 * 1024, 0);
                let mut raw = f.reader().map_err(|e| io(&f.name, e))?;
                loop {
                    let n = raw.read(&mut buf).map_err(|e| io(&f.name, e))?;
                    if n == 0 {
                        break;
                    }
                    hash.update(&buf[..n]);
                }
            }
        }
        let gzip = f.starts_with_gzip_magic().map_err(|e| io(&f.name, e))?;
        if f.declared_gzip && !gzip {
            return Err(AppError::Unprocessable {
                detail: format!(
                    "{}: declared gzip (by its .gz name or Content-Encoding) but it is not gzip data",
                    f.name
                ),
                file: Some(f.name.clone()),
                line: None,
            });
        }
        if !gzip {
            total += f.size;
        } else {
            buf.resize(64 * 1024, 0);
            let reader = f.reader().map_err(|e| io(&f.name, e))?;
            let mut dec = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(reader));
            loop {
                let n = dec.read(&mut buf).map_err(|e| AppError::Unprocessable {
                    detail: format!("{}: not valid gzip data: {e}", f.name),
                    file: Some(f.name.clone()),
                    line: None,
                })?;
                if n == 0 {
                    break;
                }
                total += n as u64;
                if total > limit {
                    return Err(AppError::PayloadTooLarge(format!(
                        "{}: the files decompress to more than {} MiB (the server's --max-upload-mib)",
                        f.name,
                        limit >> 20
                    )));
                }
            }
        }
        if total > limit {
            return Err(too_large(limit));
        }
    }
    Ok(hex::encode(hash.finalize()))
}

/// 201 with the new run, or 200 with the run stored earlier, naming who uploaded it.
async fn respond(
    state: &AppState,
    outcome: &ImportOutcome,
    token: &Token,
) -> Result<Response, AppError> {
    let run_id = outcome.run_ids.first().copied();
    // A run stored before was uploaded by whoever sent it first (or by no one: `ingest`).
    let uploader = match (outcome.created, run_id) {
        (false, Some(id)) => state.store.uploader_name(id).await?,
        _ => Some(token.name.clone()),
    };
    let url = run_id.map(|id| format!("/runs/{id}"));
    let body = serde_json::json!({
        "run_id": run_id,
        "run_ids": outcome.run_ids,
        "url": url,
        "created": outcome.created,
        "series": outcome.series,
        "samples": outcome.samples,
        "warnings": outcome.warnings.iter().map(|(file, w)| serde_json::json!({
            "file": file,
            "line": w.line,
            "message": w.message,
        })).collect::<Vec<_>>(),
        "warning_count": outcome.warning_count,
        "formats": outcome.formats.iter().map(|(file, format)| serde_json::json!({
            "file": file,
            "format": format,
        })).collect::<Vec<_>>(),
        "uploader": uploader,
    });
    let status = if outcome.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    let mut response = (status, Json(body)).into_response();
    if let Some(url) = url
        && let Ok(v) = HeaderValue::from_str(&url)
    {
        response.headers_mut().insert(header::LOCATION, v);
    }
    Ok(response)
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        s.to_string()
    } else {
        format!("{}...", &s[..s.floor_char_boundary(max)])
    }
}
