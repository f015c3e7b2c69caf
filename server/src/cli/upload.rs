//! `quiescent upload`: sends files as one run to a server's `POST /api/v1/runs`, retrying
//! transient failures. Every attempt carries the same `Idempotency-Key` (a hash of the
//! metadata and the files), so a retry after a lost response never stores the run twice.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use rand::RngExt;
use sha2::{Digest, Sha256};

use crate::format::count;

#[derive(Debug, clap::Args)]
pub struct UploadArgs {
    /// Files or directories (a directory of trace_stat/function* files is one run).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Base URL of the quiescent server, e.g. http://perf-db:8080
    #[arg(long, env = "QUIESCENT_SERVER")]
    pub server: String,
    /// Upload token from `quiescent token create` (better in the environment than on the
    /// command line, where `ps` shows it).
    #[arg(long, env = "QUIESCENT_TOKEN", hide_env_values = true)]
    pub token: String,
    #[command(flatten)]
    pub run: super::ingest_cmd::RunFlags,
    /// Attempts after the first on connection errors, timeouts, 5xx, 408 and 429.
    #[arg(long, default_value_t = 6)]
    pub retries: u32,
    /// Seconds one attempt may take.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
}

/// One file to send: the name the server stores and its bytes.
struct Payload {
    name: String,
    bytes: Vec<u8>,
}

/// The metadata as form fields, in a fixed order.
fn fields(args: &UploadArgs) -> Vec<(String, String)> {
    let mut out = vec![
        ("build".to_string(), args.run.build.clone()),
        ("machine".to_string(), args.run.machine.clone()),
        ("benchmark".to_string(), args.run.benchmark.clone()),
    ];
    let optional = [
        ("commit", &args.run.commit),
        ("kernel_version", &args.run.kernel_version),
        ("cmdline", &args.run.cmdline),
        ("format", &args.run.format),
        ("block", &args.run.block),
        ("parent", &args.run.parent),
    ];
    for (k, v) in optional {
        if let Some(v) = v {
            out.push((k.to_string(), v.clone()));
        }
    }
    // `main` is the server's default: left out, so older servers accept the upload.
    if args.run.branch != "main" {
        out.push(("branch".to_string(), args.run.branch.clone()));
    }
    if let Some(t) = args.run.commit_time {
        out.push(("commit_time".to_string(), t.to_string()));
    }
    let facts: BTreeMap<_, _> = args.run.machine_facts.iter().cloned().collect();
    for (k, v) in facts {
        out.push((format!("machine_fact.{k}"), v));
    }
    let params: BTreeMap<_, _> = args.run.params.iter().cloned().collect();
    for (k, v) in params {
        out.push((format!("param.{k}"), v));
    }
    out
}

/// The name a file is sent under: relative to the directory given (so `trace_stat/function3`
/// keeps its meaning) and never an absolute path of the rig.
fn wire_name(arg: &Path, file: &Path) -> String {
    let base = if arg.is_dir() {
        arg.parent().unwrap_or(Path::new(""))
    } else {
        file.parent().unwrap_or(Path::new(""))
    };
    let rel = file.strip_prefix(base).unwrap_or(file);
    let s = rel.to_string_lossy().replace('\\', "/");
    let s = s.trim_start_matches('/');
    if s.is_empty() {
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into())
    } else {
        s.to_string()
    }
}

/// The same upload always gets the same key; any change of metadata or content, another.
fn idempotency_key(
    fields: &[(String, String)],
    config: Option<&[u8]>,
    files: &[Payload],
) -> String {
    let mut h = Sha256::new();
    h.update(b"quiescent-upload-v1\0");
    for (k, v) in fields {
        h.update((k.len() as u64).to_le_bytes());
        h.update(k.as_bytes());
        h.update((v.len() as u64).to_le_bytes());
        h.update(v.as_bytes());
    }
    match config {
        Some(c) => {
            h.update(b"\x01");
            h.update(Sha256::digest(c));
        }
        None => h.update(b"\x00"),
    }
    for f in files {
        h.update((f.name.len() as u64).to_le_bytes());
        h.update(f.name.as_bytes());
        h.update(Sha256::digest(&f.bytes));
    }
    hex::encode(h.finalize())
}

fn form(
    fields: &[(String, String)],
    config: Option<&[u8]>,
    files: &[Payload],
) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new();
    for (k, v) in fields {
        form = form.text(k.clone(), v.clone());
    }
    if let Some(c) = config {
        form = form.part(
            "config",
            reqwest::multipart::Part::bytes(c.to_vec()).file_name("config"),
        );
    }
    for f in files {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(f.bytes.clone()).file_name(f.name.clone()),
        );
    }
    form
}

/// Refuses, before sending anything, an upload the server would refuse for its size: the
/// server closes the connection on a body over its limits, which the client would only see as
/// a broken pipe. A server without `/api/v1/limits` is not checked.
async fn check_limits(
    client: &reqwest::Client,
    base: &str,
    files: &[Payload],
    config: Option<&[u8]>,
) -> anyhow::Result<()> {
    let url = format!("{base}/api/v1/limits");
    let Ok(resp) = client.get(&url).send().await else {
        return Ok(());
    };
    if !resp.status().is_success() {
        return Ok(());
    }
    let Ok(limits) = resp.json::<serde_json::Value>().await else {
        return Ok(());
    };
    if let Some(max) = limits["max_files"].as_u64()
        && files.len() as u64 > max
    {
        bail!(
            "{} files, but the server accepts at most {max} per upload ({url}); upload them in several runs or as fewer, larger files",
            files.len()
        );
    }
    let bytes: u64 = files.iter().map(|f| f.bytes.len() as u64).sum::<u64>()
        + config.map_or(0, |c| c.len() as u64);
    if let Some(max) = limits["max_upload_bytes"].as_u64()
        && bytes > max
    {
        bail!(
            "the files hold {bytes} bytes, but the server accepts at most {max} per upload ({url}, the server's --max-upload-mib)"
        );
    }
    if let (Some(max), Some(c)) = (limits["max_config_bytes"].as_u64(), config)
        && c.len() as u64 > max
    {
        bail!(
            "the kernel config is {} bytes, but the server accepts at most {max}",
            c.len()
        );
    }
    Ok(())
}

/// What one attempt came to.
enum Attempt {
    Done(reqwest::StatusCode, serde_json::Value),
    /// Worth another try, after at least the given delay (from `Retry-After`).
    Transient(String, Option<Duration>),
    Fatal(reqwest::StatusCode, serde_json::Value),
}

async fn attempt(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    key: &str,
    form: reqwest::multipart::Form,
) -> Attempt {
    let resp = client
        .post(url)
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .multipart(form)
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => return Attempt::Transient(describe(&e), None),
    };
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|s| Duration::from_secs(s.min(300)));
    let text = match resp.text().await {
        Ok(t) => t,
        Err(e) => return Attempt::Transient(describe(&e), None),
    };
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        serde_json::json!({ "error": status.canonical_reason().unwrap_or(""), "detail": text.trim() })
    });
    let transient = status.is_server_error()
        || status == reqwest::StatusCode::REQUEST_TIMEOUT
        || status == reqwest::StatusCode::TOO_MANY_REQUESTS;
    if status.is_success() {
        Attempt::Done(status, body)
    } else if transient {
        Attempt::Transient(format!("{status}: {}", error_text(&body)), retry_after)
    } else {
        Attempt::Fatal(status, body)
    }
}

/// An error with its causes, e.g. "error sending request: connection refused".
fn describe(e: &reqwest::Error) -> String {
    let mut s = if e.is_connect() {
        "cannot connect".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else {
        e.to_string()
    };
    let mut src = std::error::Error::source(e);
    while let Some(cause) = src {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        src = cause.source();
    }
    s
}

/// `detail` (file X, line N) from a JSON error body.
fn error_text(body: &serde_json::Value) -> String {
    let detail = body
        .get("detail")
        .and_then(|v| v.as_str())
        .or_else(|| body.get("error").and_then(|v| v.as_str()))
        .unwrap_or("(no detail)");
    let mut s = detail.to_string();
    if let Some(line) = body.get("line").and_then(|v| v.as_u64())
        && !detail.contains(&format!("line {line}"))
    {
        s.push_str(&format!(" (line {line})"));
    }
    s
}

/// The delay before retry `n` (1-based): 0.5 s doubling to at most 30 s, with jitter so that
/// many rigs retrying at once spread out.
fn backoff(n: u32) -> Duration {
    let base = 500u64.saturating_mul(1u64 << n.saturating_sub(1).min(6));
    let base = base.min(30_000);
    let jitter = rand::rng().random_range(0..=base / 4);
    Duration::from_millis(base + jitter)
}

pub async fn run(args: UploadArgs) -> anyhow::Result<ExitCode> {
    let base = args.server.trim_end_matches('/').to_string();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        bail!("--server must be an http:// URL, e.g. http://perf-db:8080 (got {base:?})");
    }
    if args.token.trim().is_empty() {
        bail!("no token: pass --token or set QUIESCENT_TOKEN (see `quiescent token create`)");
    }
    let fields = fields(&args);
    let config = match &args.run.config {
        Some(p) => Some(
            std::fs::read(p).with_context(|| format!("reading kernel config {}", p.display()))?,
        ),
        None => None,
    };
    let mut files = Vec::new();
    for arg in &args.files {
        for p in ingest::expand_paths(std::slice::from_ref(arg))? {
            let bytes = std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            files.push(Payload {
                name: wire_name(arg, &p),
                bytes,
            });
        }
    }
    if files.is_empty() {
        bail!("no files to upload (the directories given are empty)");
    }
    let key = idempotency_key(&fields, config.as_deref(), &files);
    let url = format!("{base}/api/v1/runs");
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(args.timeout))
        .build()
        .context("building the HTTP client")?;

    check_limits(&client, &base, &files, config.as_deref()).await?;

    let mut tries = 0u32;
    loop {
        tries += 1;
        match attempt(
            &client,
            &url,
            &args.token,
            &key,
            form(&fields, config.as_deref(), &files),
        )
        .await
        {
            Attempt::Done(status, body) => {
                report(&base, status, &body);
                return Ok(ExitCode::SUCCESS);
            }
            Attempt::Fatal(status, body) => {
                let mut msg = format!(
                    "the server refused the upload ({status}): {}",
                    error_text(&body)
                );
                if status == reqwest::StatusCode::UNAUTHORIZED {
                    msg.push_str("\nhint: check --token / QUIESCENT_TOKEN (tokens come from `quiescent token create` on the server)");
                }
                bail!(msg);
            }
            Attempt::Transient(why, retry_after) => {
                if tries > args.retries {
                    bail!("upload to {url} failed after {tries} attempts: {why}");
                }
                let delay = backoff(tries).max(retry_after.unwrap_or_default());
                eprintln!(
                    "attempt {tries} failed ({why}); retrying in {:.1} s",
                    delay.as_secs_f64()
                );
                tokio::time::sleep(delay).await;
            }
        }
    }
}

fn report(base: &str, status: reqwest::StatusCode, body: &serde_json::Value) {
    let ids: Vec<String> = body
        .get("run_ids")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let n = |k: &str| body.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let url = body.get("url").and_then(|v| v.as_str()).unwrap_or("");
    if status == reqwest::StatusCode::CREATED {
        if let Some(formats) = body.get("formats").and_then(|v| v.as_array()) {
            for f in formats {
                println!(
                    "{}: {}",
                    f.get("file").and_then(|v| v.as_str()).unwrap_or(""),
                    f.get("format").and_then(|v| v.as_str()).unwrap_or("")
                );
            }
        }
        if let Some(warnings) = body.get("warnings").and_then(|v| v.as_array()) {
            for w in warnings {
                println!(
                    "warning: {}: line {}: {}",
                    w.get("file").and_then(|v| v.as_str()).unwrap_or(""),
                    w.get("line").and_then(|v| v.as_u64()).unwrap_or(0),
                    w.get("message").and_then(|v| v.as_str()).unwrap_or("")
                );
            }
        }
        println!(
            "stored run {}: {} series, {}, {}",
            ids.join(", "),
            n("series"),
            count(n("samples"), "sample"),
            count(n("warning_count"), "warning")
        );
    } else {
        println!(
            "already stored as run {} ({} series, {}); nothing new stored",
            ids.join(", "),
            n("series"),
            count(n("samples"), "sample")
        );
    }
    if !url.is_empty() {
        println!("{base}{url}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let d1 = backoff(1).as_millis();
        assert!((500..=625).contains(&d1), "{d1}");
        let d3 = backoff(3).as_millis();
        assert!((2000..=2500).contains(&d3), "{d3}");
        let d20 = backoff(20).as_millis();
        assert!((30_000..=37_500).contains(&d20), "{d20}");
    }

    #[test]
    fn keys_change_with_metadata_and_content() {
        let f = |b: &[u8]| {
            vec![Payload {
                name: "a".into(),
                bytes: b.to_vec(),
            }]
        };
        let m = vec![("build".to_string(), "v1".to_string())];
        let m2 = vec![("build".to_string(), "v2".to_string())];
        let k = idempotency_key(&m, None, &f(b"1"));
        assert_eq!(k, idempotency_key(&m, None, &f(b"1")));
        assert_ne!(k, idempotency_key(&m2, None, &f(b"1")));
        assert_ne!(k, idempotency_key(&m, None, &f(b"2")));
        assert_ne!(k, idempotency_key(&m, Some(b"CONFIG_X=y"), &f(b"1")));
        assert_eq!(k.len(), 64);
    }

    #[test]
    fn wire_names_are_relative() {
        let dir = tempfile::tempdir().unwrap();
        let ts = dir.path().join("trace_stat");
        std::fs::create_dir(&ts).unwrap();
        let f = ts.join("function3");
        std::fs::write(&f, "x").unwrap();
        assert_eq!(wire_name(&ts, &f), "trace_stat/function3");
        assert_eq!(wire_name(&f, &f), "function3");
    }
}
