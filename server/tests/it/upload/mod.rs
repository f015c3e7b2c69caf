//! `POST /api/v1/runs`, tokens and `quiescent upload`: every status with its reason, hostile
//! input, concurrent uploaders on loopback, and a server killed with SIGKILL mid-upload.

use std::io::{BufRead, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use quiescent::AppState;
use quiescent::config::ServeArgs;
use serde_json::Value;
use sha2::{Digest, Sha256};
use sqlx::{Row, SqlitePool};
use tower::ServiceExt;

const BOUNDARY: &str = "qUiEsCeNt-7d3f0a";

/// A fresh database with one token.
struct Env {
    _dir: tempfile::TempDir,
    pool: SqlitePool,
    token: String,
}

async fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let pool = store::Store::open(&db_path(dir.path()))
        .await
        .unwrap()
        .sqlite_pool()
        .clone();
    let token = quiescent::tokens::create(&store::Store::from_sqlite_pool(pool.clone()), "rig-1")
        .await
        .unwrap();
    Env {
        _dir: dir,
        pool,
        token,
    }
}

fn db_path(dir: &Path) -> String {
    dir.join("q.db").display().to_string()
}

impl Env {
    fn app(&self) -> Router {
        self.app_with(ServeArgs::default())
    }

    fn app_with(&self, config: ServeArgs) -> Router {
        quiescent::app(AppState::new(
            store::Store::from_sqlite_pool(self.pool.clone()),
            config,
        ))
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    /// Samples stored, over every series.
    async fn samples(&self) -> i64 {
        sqlx::query_scalar("SELECT COALESCE(SUM(n), 0) FROM series_block")
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    /// Asserts that nothing at all was stored.
    async fn assert_empty(&self) {
        for t in [
            "runs",
            "builds",
            "machines",
            "artifacts",
            "artifact_chunks",
            "run_artifacts",
            "series_block",
            "names",
            "idempotency_keys",
        ] {
            assert_eq!(self.count(t).await, 0, "table {t} is not empty");
        }
    }
}

/// A multipart/form-data body built by hand, so that tests control every byte.
struct Form {
    body: Vec<u8>,
}

impl Form {
    fn new() -> Self {
        Form { body: Vec::new() }
    }

    /// build, machine and benchmark.
    fn meta() -> Self {
        Form::new()
            .field("build", "v6.9")
            .field("machine", "rig-1")
            .field("benchmark", "function-profile")
    }

    fn part(mut self, headers: &str, data: &[u8]) -> Self {
        self.body
            .extend_from_slice(format!("--{BOUNDARY}\r\n{headers}\r\n\r\n").as_bytes());
        self.body.extend_from_slice(data);
        self.body.extend_from_slice(b"\r\n");
        self
    }

    fn field(self, name: &str, value: &str) -> Self {
        self.part(
            &format!("Content-Disposition: form-data; name=\"{name}\""),
            value.as_bytes(),
        )
    }

    fn file(self, file_name: &str, data: &[u8]) -> Self {
        self.part(
            &format!(
                "Content-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\nContent-Type: application/octet-stream"
            ),
            data,
        )
    }

    fn finish(mut self) -> Vec<u8> {
        self.body
            .extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        self.body
    }
}

fn content_type() -> String {
    format!("multipart/form-data; boundary={BOUNDARY}")
}

fn post(auth: Option<&str>, body: Vec<u8>) -> axum::http::request::Builder {
    let mut b = Request::post("/api/v1/runs")
        .header("content-type", content_type())
        .header("content-length", body.len());
    if let Some(a) = auth {
        b = b.header("authorization", a);
    }
    b
}

async fn call(app: &Router, req: Request<Body>) -> (StatusCode, Value) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let json = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, json)
}

/// Uploads a one-function trace_stat set with the environment's token; the 201's body.
async fn upload_one(env: &Env, app: &Router) -> Value {
    let (status, body) = upload(
        app,
        Some(&env.bearer()),
        with_files(Form::meta(), &trace_stat_set(1)),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

async fn upload(app: &Router, auth: Option<&str>, form: Form) -> (StatusCode, Value) {
    let body = form.finish();
    call(
        app,
        post(auth, body.clone()).body(Body::from(body)).unwrap(),
    )
    .await
}

/// The server still answers.
async fn assert_healthy(app: &Router) {
    let (status, body) = call(app, Request::get("/healthz").body(Body::empty()).unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, Value::String("ok".into()));
}

/// Asserts a JSON error with its status and a reason containing `needle`.
fn assert_error(got: &(StatusCode, Value), status: StatusCode, needle: &str) {
    assert_eq!(got.0, status, "body: {}", got.1);
    let detail = got.1["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(needle),
        "detail {detail:?} lacks {needle:?}"
    );
    assert!(got.1["error"].is_string(), "no error field: {}", got.1);
}

/// One CPU's `trace_stat/functionN` table with `rows` functions; `seed` varies the numbers.
fn function_table(seed: u64, rows: usize) -> Vec<u8> {
    let mut s = String::from(
        "  Function                               Hit    Time            Avg             s^2\n  --------                               ---    ----            ---             ---\n",
    );
    for r in 0..rows {
        let hit = 1000 + seed * 7 + r as u64 * 13;
        let time = hit as f64 * 0.25 + r as f64;
        s.push_str(&format!(
            "  func_{r:<32} {hit:>8}    {time:.1} us     {:.3} us        0.004 us\n",
            time / hit as f64
        ));
    }
    s.into_bytes()
}

/// A typical 4-CPU `trace_stat` directory: function0..3.
fn trace_stat_set(seed: u64) -> Vec<(String, Vec<u8>)> {
    (0..4)
        .map(|cpu| {
            (
                format!("trace_stat/function{cpu}"),
                function_table(seed * 4 + cpu, 20),
            )
        })
        .collect()
}

/// The samples an upload of generated function tables must store, counted from how they are
/// made, not by the parser under test: every table row gives four values (Hit, Time, Avg, s^2),
/// and the store adds three `all` totals (hits, time, avg) per function found on 2+ CPUs.
/// `function_table` gives every CPU the same function names.
fn expected_samples(files: &[(String, Vec<u8>)]) -> u64 {
    let cpus = files.len() as u64;
    let rows_of = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes)
            .lines()
            .filter(|l| l.trim_start().starts_with("func_"))
            .count() as u64
    };
    let rows: Vec<u64> = files.iter().map(|(_, b)| rows_of(b)).collect();
    let per_cpu: u64 = rows.iter().sum::<u64>() * 4;
    let totals = if cpus >= 2 {
        rows.iter().copied().min().unwrap_or(0) * 3
    } else {
        0
    };
    per_cpu + totals
}

async fn samples_of_run(pool: &SqlitePool, run_id: i64) -> i64 {
    sqlx::query_scalar("SELECT COALESCE(SUM(n), 0) FROM series WHERE run_id = ?")
        .bind(run_id)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Every run is whole: it has files and series, and each series holds exactly `n` samples.
async fn assert_runs_complete(pool: &SqlitePool) {
    let bad: Vec<(i64, i64, i64)> = sqlx::query(
        "SELECT id, n, length(vals) / 8 AS c FROM series_block WHERE n * 8 != length(vals)",
    )
    .fetch_all(pool)
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2)))
    .collect();
    assert!(
        bad.is_empty(),
        "series whose n differs from their samples: {bad:?}"
    );
    let hollow: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM series se WHERE se.run_id = r.id) \
         OR NOT EXISTS (SELECT 1 FROM run_artifacts a WHERE a.run_id = r.id)",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(hollow, 0, "runs without series or files");
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(integrity, "ok");
}

fn with_files(mut form: Form, files: &[(String, Vec<u8>)]) -> Form {
    for (name, bytes) in files {
        form = form.file(name, bytes);
    }
    form
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Success, idempotency, tokens.

#[tokio::test]
async fn upload_is_201_then_the_same_upload_is_200() {
    let env = env().await;
    let app = env.app();
    let files = trace_stat_set(1);
    let expected = expected_samples(&files);
    assert_eq!(
        expected,
        4 * 20 * 4 + 20 * 3,
        "4 CPUs x 20 functions x hit/time/avg/s2, and 20 functions x hit/time/avg totals"
    );

    // The full metadata, with the kernel config sent as `config_disposition` says.
    let form = |config_disposition: &str| {
        with_files(
            Form::meta()
                .field("commit", "c229828ca6bc62d")
                .field("kernel_version", "6.9.0-rc1")
                .field("cmdline", "quiet nohz_full=1-3")
                .field("machine_fact.cpus", "4")
                .field("param", "load=idle")
                .field("param.tracer", "function"),
            &files,
        )
        .part(config_disposition, b"CONFIG_PREEMPT=y\nCONFIG_HZ=1000\n")
    };
    let form_with_file =
        form("Content-Disposition: form-data; name=\"config\"; filename=\"config\"");
    let (status, body) = upload(&app, Some(&env.bearer()), form_with_file).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let run_id = body["run_id"].as_i64().unwrap();
    assert_eq!(body["run_ids"], serde_json::json!([run_id]));
    assert_eq!(body["url"], format!("/runs/{run_id}"));
    assert_eq!(body["created"], true);
    assert_eq!(body["samples"].as_u64().unwrap(), expected);
    assert_eq!(body["series"].as_u64().unwrap(), expected); // one sample per series
    assert_eq!(body["uploader"], "rig-1");
    assert_eq!(body["formats"].as_array().unwrap().len(), 4);
    assert_eq!(body["formats"][3]["file"], "trace_stat/function3");
    assert_eq!(body["formats"][3]["format"], "trace_stat");
    assert_eq!(samples_of_run(&env.pool, run_id).await as u64, expected);

    // The run records its token, its metadata and its files byte for byte.
    let row = sqlx::query(
        "SELECT t.name, b.commit_sha, b.kernel_version, b.config, b.cmdline, r.params_key \
         FROM runs r JOIN tokens t ON t.id = r.token_id JOIN builds b ON b.id = r.build_id WHERE r.id = ?",
    )
    .bind(run_id)
    .fetch_one(&env.pool)
    .await
    .unwrap();
    assert_eq!(row.get::<String, _>(0), "rig-1");
    assert_eq!(row.get::<String, _>(1), "c229828ca6bc62d");
    assert_eq!(row.get::<String, _>(2), "6.9.0-rc1");
    assert_eq!(
        row.get::<String, _>(3),
        "CONFIG_PREEMPT=y\nCONFIG_HZ=1000\n"
    );
    assert_eq!(row.get::<String, _>(4), "quiet nohz_full=1-3");
    assert_eq!(row.get::<String, _>(5), "load=idle&tracer=function");
    assert_eq!(
        quiescent::tokens::uploader_name(&store::Store::from_sqlite_pool(env.pool.clone()), run_id)
            .await,
        Some("rig-1".into())
    );
    assert_eq!(
        quiescent::tokens::uploader_name(
            &store::Store::from_sqlite_pool(env.pool.clone()),
            run_id + 100
        )
        .await,
        None
    );
    for (seq, (name, bytes)) in files.iter().enumerate() {
        let sha: String = sqlx::query_scalar(
            "SELECT a.sha256 FROM run_artifacts ra JOIN artifacts a ON a.id = ra.artifact_id \
             WHERE ra.run_id = ? AND ra.seq = ? AND ra.file_name = ?",
        )
        .bind(run_id)
        .bind(seq as i64)
        .bind(name)
        .fetch_one(&env.pool)
        .await
        .unwrap();
        assert_eq!(sha, hex::encode(Sha256::digest(bytes)));
    }

    // Again: 200 with the stored run, nothing new.
    let form_with_field = form("Content-Disposition: form-data; name=\"config\"");
    let (status, again) = upload(&app, Some(&env.bearer()), form_with_field).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["run_id"].as_i64(), Some(run_id));
    assert_eq!(again["created"], false);
    assert_eq!(again["samples"].as_u64().unwrap(), expected);
    assert_eq!(env.count("runs").await, 1);
}

#[tokio::test]
async fn idempotency_key_returns_the_stored_run() {
    let env = env().await;
    let app = env.app();
    let send = |seed: u64, key: &'static str| {
        let files = trace_stat_set(seed);
        let body = with_files(Form::meta(), &files).finish();
        post(Some(&env.bearer()), body.clone())
            .header("idempotency-key", key)
            .body(Body::from(body))
            .unwrap()
    };
    let (status, first) = call(&app, send(1, "k-1")).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    // A retry with the same key and body is answered from the key.
    let (status, retry) = call(&app, send(1, "k-1")).await;
    assert_eq!(status, StatusCode::OK, "{retry}");
    assert_eq!(retry["run_id"], first["run_id"]);
    assert_eq!(retry["samples"], first["samples"]);
    // The same key with another body is refused rather than dropped silently.
    let (status, changed) = call(&app, send(2, "k-1")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{changed}");
    assert_eq!(env.count("runs").await, 1);
    // Another key is another upload.
    let (status, other) = call(&app, send(2, "k-2")).await;
    assert_eq!(status, StatusCode::CREATED, "{other}");
    assert_eq!(env.count("runs").await, 2);
    assert_eq!(env.count("idempotency_keys").await, 2);

    // Keys are per token: another rig using "k-1" gets its own upload.
    let other_token =
        quiescent::tokens::create(&store::Store::from_sqlite_pool(env.pool.clone()), "rig-2")
            .await
            .unwrap();
    let body = with_files(Form::meta(), &trace_stat_set(3)).finish();
    let req = post(Some(&format!("Bearer {other_token}")), body.clone())
        .header("idempotency-key", "k-1")
        .body(Body::from(body))
        .unwrap();
    let (status, third) = call(&app, req).await;
    assert_eq!(status, StatusCode::CREATED, "{third}");
    assert_eq!(third["uploader"], "rig-2");

    // A key with spaces or control characters is refused.
    let body = with_files(Form::meta(), &trace_stat_set(4)).finish();
    let req = post(Some(&env.bearer()), body.clone())
        .header("idempotency-key", "has space")
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, req).await,
        StatusCode::BAD_REQUEST,
        "Idempotency-Key",
    );
}

#[tokio::test]
async fn missing_unknown_and_malformed_tokens_are_401() {
    let env = env().await;
    let app = env.app();
    let form = || with_files(Form::meta(), &trace_stat_set(1));
    assert_error(
        &upload(&app, None, form()).await,
        StatusCode::UNAUTHORIZED,
        "Authorization",
    );
    let unknown = format!("Bearer {}", quiescent::tokens::generate());
    assert_error(
        &upload(&app, Some(&unknown), form()).await,
        StatusCode::UNAUTHORIZED,
        "unknown token",
    );
    assert_error(
        &upload(&app, Some("Basic cmlnOnB3"), form()).await,
        StatusCode::UNAUTHORIZED,
        "Bearer",
    );
    assert_error(
        &upload(&app, Some("Bearer "), form()).await,
        StatusCode::UNAUTHORIZED,
        "",
    );
    // The hash of a token is not a token.
    let hashed = format!("Bearer {}", quiescent::tokens::hash(&env.token));
    assert_error(
        &upload(&app, Some(&hashed), form()).await,
        StatusCode::UNAUTHORIZED,
        "unknown token",
    );
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn revoked_token_is_403_and_its_runs_stay() {
    let env = env().await;
    let app = env.app();
    upload_one(&env, &app).await;
    quiescent::tokens::revoke(&store::Store::from_sqlite_pool(env.pool.clone()), "rig-1")
        .await
        .unwrap();
    assert!(
        quiescent::tokens::revoke(&store::Store::from_sqlite_pool(env.pool.clone()), "rig-1")
            .await
            .is_err()
    );
    assert!(
        quiescent::tokens::revoke(&store::Store::from_sqlite_pool(env.pool.clone()), "nobody")
            .await
            .is_err()
    );
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta(), &trace_stat_set(2)),
    )
    .await;
    assert_error(&got, StatusCode::FORBIDDEN, "revoked");
    assert_eq!(env.count("runs").await, 1);
    let list = quiescent::tokens::list(&store::Store::from_sqlite_pool(env.pool.clone()))
        .await
        .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name, "rig-1");
    assert_eq!(list[0].runs, 1);
    assert!(list[0].revoked_at.is_some());
}

#[tokio::test]
async fn tokens_are_stored_only_as_hashes() {
    let env = env().await;
    let (hash, name): (String, String) = sqlx::query_as("SELECT hash, name FROM tokens")
        .fetch_one(&env.pool)
        .await
        .unwrap();
    assert_eq!(name, "rig-1");
    assert_eq!(hash, hex::encode(Sha256::digest(env.token.as_bytes())));
    assert_eq!(env.token.len(), 64);
    assert!(matches!(
        quiescent::tokens::create(&store::Store::from_sqlite_pool(env.pool.clone()), "rig-1").await,
        Err(quiescent::tokens::TokenError::Exists(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_with_one_key_store_one_run() {
    let env = env().await;
    let app = env.app();
    let mut tasks = Vec::new();
    for seed in 0..8 {
        let (app, auth) = (app.clone(), env.bearer());
        tasks.push(tokio::spawn(async move {
            // Different bodies under one key: whichever comes first is the upload, the others
            // are refused (the key was used for other content).
            let body = with_files(Form::meta(), &trace_stat_set(seed)).finish();
            let req = post(Some(&auth), body.clone())
                .header("idempotency-key", "same-key")
                .body(Body::from(body))
                .unwrap();
            call(&app, req).await
        }));
    }
    let mut created = 0;
    let mut ids = Vec::new();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        assert!(
            status == StatusCode::CREATED || status == StatusCode::UNPROCESSABLE_ENTITY,
            "{status} {body}"
        );
        if status == StatusCode::CREATED {
            created += 1;
            ids.push(body["run_id"].as_i64().unwrap());
        }
    }
    assert_eq!(created, 1);
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(env.count("runs").await, 1);
}

// Real sockets, shared by the modules below.

async fn spawn_server(pool: SqlitePool, config: ServeArgs) -> SocketAddr {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let config = ServeArgs {
        bind: "127.0.0.1:0".into(),
        ..config
    };
    tokio::spawn(async move {
        quiescent::web::serve_pool(store::Store::from_sqlite_pool(pool), config, move |addr| {
            let _ = tx.send(addr);
        })
        .await
        .unwrap();
    });
    rx.await.unwrap()
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Writes `head` (and then, after `pause`, nothing more), reads the answer until the server
/// closes or 10 s pass.
async fn raw_request(addr: SocketAddr, head: &str, pause: Option<Duration>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    if let Some(p) = pause {
        tokio::time::sleep(p).await;
    }
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

async fn healthz(client: &reqwest::Client, addr: SocketAddr) {
    let r = client
        .get(format!("http://{addr}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), reqwest::StatusCode::OK);
    assert_eq!(r.text().await.unwrap(), "ok");
}

/// One small distinct `trace_stat` file for uploader `client`, upload `i`.
fn small_upload(client: u64, i: u64) -> (String, Vec<u8>) {
    (
        format!("function{}", client % 4),
        function_table(client * 100_000 + i, 3),
    )
}

fn reqwest_form(files: &[(String, Vec<u8>)], build: &str) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new()
        .text("build", build.to_string())
        .text("machine", "rig-1")
        .text("benchmark", "function-profile");
    for (name, bytes) in files {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(bytes.clone()).file_name(name.clone()),
        );
    }
    form
}

fn small_limit(mib: u64) -> ServeArgs {
    ServeArgs {
        max_upload_mib: mib,
        ..ServeArgs::default()
    }
}

mod binary;
mod refusals;
mod sockets;
