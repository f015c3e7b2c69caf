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

    let form = with_files(
        Form::meta()
            .field("commit", "c229828ca6bc62d")
            .field("kernel_version", "6.9.0-rc1")
            .field("cmdline", "quiet nohz_full=1-3")
            .field("machine_fact.cpus", "4")
            .field("param", "load=idle")
            .field("param.tracer", "function"),
        &files,
    )
    .part(
        "Content-Disposition: form-data; name=\"config\"; filename=\"config\"",
        b"CONFIG_PREEMPT=y\nCONFIG_HZ=1000\n",
    );
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
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
    let form = with_files(
        Form::meta()
            .field("commit", "c229828ca6bc62d")
            .field("kernel_version", "6.9.0-rc1")
            .field("cmdline", "quiet nohz_full=1-3")
            .field("machine_fact.cpus", "4")
            .field("param", "load=idle")
            .field("param.tracer", "function"),
        &files,
    )
    .part(
        "Content-Disposition: form-data; name=\"config\"",
        b"CONFIG_PREEMPT=y\nCONFIG_HZ=1000\n",
    );
    let (status, again) = upload(&app, Some(&env.bearer()), form).await;
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
    let (status, body) = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta(), &trace_stat_set(1)),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
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

// ---------------------------------------------------------------------------------------------
// 400, 413, 415, 422 with reasons; nothing stored.

#[tokio::test]
async fn not_multipart_is_415() {
    let env = env().await;
    let app = env.app();
    let json = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .header("content-type", "application/json")
        .body(Body::from(r#"{"build":"v1"}"#))
        .unwrap();
    assert_error(
        &call(&app, json).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "multipart/form-data",
    );
    let none = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .body(Body::from("real 0m1.000s"))
        .unwrap();
    assert_error(
        &call(&app, none).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "missing",
    );
    let form = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("build=v1&machine=m"))
        .unwrap();
    assert_error(
        &call(&app, form).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "x-www-form-urlencoded",
    );
    let body = with_files(Form::meta(), &trace_stat_set(1)).finish();
    let brotli = post(Some(&env.bearer()), body.clone())
        .header("content-encoding", "br")
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, brotli).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "Content-Encoding",
    );
    let no_boundary = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .header("content-type", "multipart/form-data")
        .body(Body::from("x"))
        .unwrap();
    assert_error(
        &call(&app, no_boundary).await,
        StatusCode::BAD_REQUEST,
        "multipart",
    );
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn missing_or_wrong_metadata_is_400() {
    let env = env().await;
    let app = env.app();
    let auth = env.bearer();
    let files = trace_stat_set(1);
    let got = upload(
        &app,
        Some(&auth),
        with_files(Form::new().field("machine", "m"), &files),
    )
    .await;
    assert_error(
        &got,
        StatusCode::BAD_REQUEST,
        "missing metadata: build, benchmark",
    );
    assert_error(
        &upload(&app, Some(&auth), Form::meta()).await,
        StatusCode::BAD_REQUEST,
        "no files",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("machne", "x"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "unknown field \"machne\"",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("build", "v2"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "\"build\" is given twice",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(
                Form::meta().field("param.a", "1").field("param", "a=2"),
                &files,
            ),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "given twice",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("param", "novalue"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "KEY=VALUE",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("format", "nope"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "unknown format \"nope\"",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("block", "after"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "no block labelled \"after\"",
    );
    let bad_utf8 = Form::meta().part(
        "Content-Disposition: form-data; name=\"commit\"",
        &[0xff, 0xfe, 0x41],
    );
    assert_error(
        &upload(&app, Some(&auth), with_files(bad_utf8, &files)).await,
        StatusCode::BAD_REQUEST,
        "not UTF-8",
    );
    let truncated = {
        let mut b = with_files(Form::meta(), &files).finish();
        b.truncate(b.len() / 2);
        b
    };
    let req = post(Some(&auth), truncated.clone())
        .body(Body::from(truncated))
        .unwrap();
    assert_error(&call(&app, req).await, StatusCode::BAD_REQUEST, "multipart");
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn unparseable_file_is_422_with_file_and_line_and_stores_nothing() {
    let env = env().await;
    let app = env.app();
    let mut bad = function_table(9, 3);
    bad.extend_from_slice(
        b"  broken_func                           7    -3.0 us     0.25 us     0.001 us\n",
    );
    let files = vec![
        ("trace_stat/function0".to_string(), function_table(1, 20)),
        ("trace_stat/function1".to_string(), bad),
    ];
    let got = upload(&app, Some(&env.bearer()), with_files(Form::meta(), &files)).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "not negative");
    assert_eq!(got.1["file"], "trace_stat/function1");
    assert_eq!(got.1["line"], 6);
    assert_eq!(got.1["error"], "unprocessable input");
    // The first file parsed and was written inside the transaction: all of it rolled back.
    env.assert_empty().await;

    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("notes.txt", b"nothing to see here\njust prose\n"),
    )
    .await;
    assert_eq!(got.0, StatusCode::UNPROCESSABLE_ENTITY, "{}", got.1);
    assert_eq!(got.1["file"], "notes.txt");
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("blob.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00"),
    )
    .await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "binary");
    let got = upload(&app, Some(&env.bearer()), Form::meta().file("empty", b"")).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "empty");
    env.assert_empty().await;
    assert_healthy(&app).await;
}

fn small_limit(mib: u64) -> ServeArgs {
    ServeArgs {
        max_upload_mib: mib,
        ..ServeArgs::default()
    }
}

#[tokio::test]
async fn oversized_upload_is_413() {
    let env = env().await;
    let app = env.app_with(small_limit(1));
    let big = vec![b'1'; 1_200_000];
    // With Content-Length: refused before the body is read.
    let got = upload(&app, Some(&env.bearer()), Form::meta().file("big", &big)).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "larger than 1 MiB");
    // Without Content-Length: refused when the body passes the limit.
    let body = Form::meta().file("big", &big).finish();
    let req = Request::post("/api/v1/runs")
        .header("content-type", content_type())
        .header("authorization", env.bearer())
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, req).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "larger than 1 MiB",
    );
    env.assert_empty().await;
    // Under the limit, the same route takes more than axum's 2 MB default.
    let app = env.app_with(small_limit(8));
    let mut lines = String::new();
    for i in 0..500_000 {
        lines.push_str(&format!("{}.{:03}\n", i % 97, i % 1000));
    }
    assert!(lines.len() > 3 << 20);
    let (status, body) = upload(
        &app,
        Some(&env.bearer()),
        Form::meta()
            .field("format", "samples")
            .file("values.txt", lines.as_bytes()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["samples"], 500_000);
    assert_healthy(&app).await;
}

#[tokio::test]
async fn gzip_files_are_accepted_and_stored_as_received() {
    let env = env().await;
    let app = env.app();
    let plain = trace_stat_set(5);
    let expected = expected_samples(&plain);
    let gz0 = gzip(&plain[0].1);
    let gz1 = gzip(&plain[1].1);
    let form = Form::meta()
        // By name.
        .file("trace_stat/function0.gz", &gz0)
        // By the part's Content-Encoding.
        .part(
            "Content-Disposition: form-data; name=\"file\"; filename=\"trace_stat/function1\"\r\nContent-Encoding: gzip",
            &gz1,
        )
        .file("trace_stat/function2", &plain[2].1)
        .file("trace_stat/function3", &plain[3].1);
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["samples"].as_u64().unwrap(), expected);
    let run_id = body["run_id"].as_i64().unwrap();
    let stored: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT ra.file_name, a.sha256, a.size FROM run_artifacts ra JOIN artifacts a ON a.id = ra.artifact_id \
         WHERE ra.run_id = ? ORDER BY ra.seq",
    )
    .bind(run_id)
    .fetch_all(&env.pool)
    .await
    .unwrap();
    assert_eq!(stored[0].0, "trace_stat/function0.gz");
    assert_eq!(stored[0].1, hex::encode(Sha256::digest(&gz0)));
    assert_eq!(stored[0].2, gz0.len() as i64);
    assert_eq!(stored[1].1, hex::encode(Sha256::digest(&gz1)));

    // The whole request body gzip-encoded.
    let other = trace_stat_set(6);
    let body = gzip(&with_files(Form::meta(), &other).finish());
    let req = post(Some(&env.bearer()), body.clone())
        .header("content-encoding", "gzip")
        .body(Body::from(body))
        .unwrap();
    let (status, json) = call(&app, req).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    assert_eq!(json["samples"].as_u64().unwrap(), expected_samples(&other));

    // Declared gzip but plain, or gzip that is corrupt: 422 naming the file.
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("function0.gz", &plain[0].1),
    )
    .await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "not gzip data");
    assert_eq!(got.1["file"], "function0.gz");
    let mut corrupt = gzip(&plain[0].1);
    let mid = corrupt.len() / 2;
    corrupt.truncate(mid);
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("function0.gz", &corrupt),
    )
    .await;
    assert_error(
        &got,
        StatusCode::UNPROCESSABLE_ENTITY,
        "not valid gzip data",
    );
    assert_eq!(env.count("runs").await, 2);
    assert_healthy(&app).await;
}

/// 1 GiB of zeros as concatenated gzip members (a valid gzip file, as `cat a.gz b.gz` makes):
/// about 1 MiB on the wire.
fn gzip_bomb() -> Vec<u8> {
    let member = gzip(&vec![0u8; 1 << 20]);
    let mut bomb = Vec::with_capacity(member.len() * 1024);
    for _ in 0..1024 {
        bomb.extend_from_slice(&member);
    }
    bomb
}

#[tokio::test]
async fn gzip_bomb_is_413() {
    let env = env().await;
    let app = env.app_with(small_limit(32));
    let bomb = gzip_bomb();
    assert!(bomb.len() < 4 << 20, "{} bytes", bomb.len());
    let check = {
        // The bomb really is 1 GiB of zeros: decompress its first member.
        let mut d = flate2::read::GzDecoder::new(&bomb[..]);
        let mut out = Vec::new();
        d.read_to_end(&mut out).unwrap();
        out.len()
    };
    assert_eq!(check, 1 << 20);
    let t = Instant::now();
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("zeros.gz", &bomb),
    )
    .await;
    assert_error(
        &got,
        StatusCode::PAYLOAD_TOO_LARGE,
        "decompress to more than 32 MiB",
    );
    // As the whole request body.
    let body = gzip(&Form::meta().file("zeros", &vec![0u8; 40 << 20]).finish());
    let req = post(Some(&env.bearer()), body.clone())
        .header("content-encoding", "gzip")
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, req).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "decompresses to more than 32 MiB",
    );
    assert!(t.elapsed() < Duration::from_secs(60));
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn thousands_of_files_or_fields_are_413() {
    let env = env().await;
    let app = env.app();
    let mut form = Form::meta();
    for i in 0..1001 {
        form = form.file(&format!("f{i}"), b"1\n");
    }
    let got = upload(&app, Some(&env.bearer()), form).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "more than 1000 files");
    let mut form = Form::meta().file("f", b"1\n");
    for i in 0..1001 {
        form = form.field(&format!("param.p{i}"), "x");
    }
    let got = upload(&app, Some(&env.bearer()), form).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "metadata fields");
    // 1000 files is allowed.
    let mut form = Form::meta().field("format", "samples");
    for i in 0..1000 {
        form = form.file(&format!("f{i}"), format!("{i}\n").as_bytes());
    }
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["samples"], 1000);
    assert_healthy(&app).await;
}

#[tokio::test]
async fn huge_fields_are_refused_with_a_reason() {
    let env = env().await;
    let app = env.app();
    let files = trace_stat_set(1);
    let huge = "x".repeat(100 * 1024);
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(
            Form::new()
                .field("build", &huge)
                .field("machine", "m")
                .field("benchmark", "b"),
            &files,
        ),
    )
    .await;
    assert_error(
        &got,
        StatusCode::PAYLOAD_TOO_LARGE,
        "field \"build\" is larger than 64 KiB",
    );
    // Within the field limit but beyond what a label may be.
    let long = "y".repeat(1000);
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(
            Form::new()
                .field("build", &long)
                .field("machine", "m")
                .field("benchmark", "b"),
            &files,
        ),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "longer than 256 bytes");
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta().field("param.k", &"v".repeat(5000)), &files),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "longer than 4096 bytes");
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(
            Form::new()
                .field("build", "a\u{1b}[31mred")
                .field("machine", "m")
                .field("benchmark", "b"),
            &files,
        ),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "control characters");
    let config = "C".repeat(17 << 20);
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta().field("config", &config), &files),
    )
    .await;
    assert_error(
        &got,
        StatusCode::PAYLOAD_TOO_LARGE,
        "field \"config\" is larger than",
    );
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn hostile_metadata_is_stored_verbatim() {
    let env = env().await;
    let app = env.app();
    let v = |what: &str| {
        format!("<script>alert('{what}')</script>'); DROP TABLE runs; -- \" OR 1=1 {what}")
    };
    let file_name = "../../etc/passwd<img src=x onerror=alert(1)>'; DELETE FROM samples; --";
    let form = Form::new()
        .field("build", &v("build"))
        .field("commit", &v("commit"))
        .field("kernel_version", &v("kv"))
        .field("config", &v("config"))
        .field("cmdline", &v("cmdline"))
        .field("machine", &v("machine"))
        .field(&format!("machine_fact.{}", "k'); --"), &v("fact"))
        .field("benchmark", &v("bench"))
        .field("param.x<script>", &v("param"))
        .field("format", "trace_stat")
        .file(file_name, &function_table(3, 5));
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let run_id = body["run_id"].as_i64().unwrap();
    let row = sqlx::query(
        "SELECT b.label, b.commit_sha, b.kernel_version, b.config, b.cmdline, m.name, r.benchmark \
         FROM runs r JOIN builds b ON b.id = r.build_id JOIN machines m ON m.id = r.machine_id WHERE r.id = ?",
    )
    .bind(run_id)
    .fetch_one(&env.pool)
    .await
    .unwrap();
    for (i, what) in [
        "build", "commit", "kv", "config", "cmdline", "machine", "bench",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(row.get::<String, _>(i), v(what));
    }
    let (k, value): (String, String) = sqlx::query_as("SELECT key, value FROM machine_facts")
        .fetch_one(&env.pool)
        .await
        .unwrap();
    assert_eq!((k.as_str(), value), ("k'); --", v("fact")));
    let (k, value): (String, String) =
        sqlx::query_as("SELECT key, value FROM run_params WHERE run_id = ?")
            .bind(run_id)
            .fetch_one(&env.pool)
            .await
            .unwrap();
    assert_eq!((k.as_str(), value), ("x<script>", v("param")));
    let stored_name: String =
        sqlx::query_scalar("SELECT file_name FROM run_artifacts WHERE run_id = ?")
            .bind(run_id)
            .fetch_one(&env.pool)
            .await
            .unwrap();
    assert_eq!(stored_name, file_name);
    assert_eq!(body["formats"][0]["file"], file_name);
    // Every table is still there and whole.
    assert_eq!(env.count("runs").await, 1);
    assert_eq!(env.samples().await, 20);
    assert_runs_complete(&env.pool).await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn path_traversal_finds_nothing() {
    let env = env().await;
    let app = env.app();
    // A stored run, so that artifact routes have something to serve.
    let (status, body) = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta(), &trace_stat_set(1)),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for path in [
        "/static/../Cargo.toml",
        "/static/%2e%2e/Cargo.toml",
        "/static/..%2fCargo.toml",
        "/static/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/static/../../../../etc/passwd",
        "/static/..%5cCargo.toml",
        "/api/v1/runs/../../Cargo.toml",
        "/api/v1/runs/1/artifacts/..%2f..%2fCargo.toml",
        "/runs/1/artifacts/..%2f..%2fCargo.toml",
        "/runs/1/artifacts/../../../Cargo.toml",
        "/runs/1/artifacts/%2e%2e%2f%2e%2e%2fserver%2fCargo.toml",
        "/runs/1/artifacts/-1",
        "/runs/1/artifacts/99999999999999999999",
        "/runs/..%2f..%2fCargo.toml/artifacts/0",
    ] {
        let resp = app
            .clone()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&body);
        assert!(status.is_client_error(), "{path}: {status}");
        assert!(
            !text.contains("[workspace") && !text.contains("[package]") && !text.contains("root:"),
            "{path} leaked a file"
        );
    }
    // The same over a real socket, where no client normalises the path first.
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    for path in [
        "/static/../Cargo.toml",
        "/static/%2e%2e/%2e%2e/Cargo.toml",
        "/static/../../server/Cargo.toml",
        "/runs/1/artifacts/../../../Cargo.toml",
        "/runs/1/artifacts/..%2f..%2f..%2fCargo.toml",
    ] {
        let resp = raw_request(
            addr,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            None,
        )
        .await;
        assert!(
            resp.starts_with("HTTP/1.1 4"),
            "{path}: {}",
            first_line(&resp)
        );
        assert!(
            !resp.contains("[package]") && !resp.contains("[workspace"),
            "{path} leaked a file"
        );
    }
    assert_healthy(&app).await;
}

// ---------------------------------------------------------------------------------------------
// Real sockets.

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

#[tokio::test]
async fn slow_client_gets_408_and_the_server_keeps_serving() {
    let env = env().await;
    let addr = spawn_server(
        env.pool.clone(),
        ServeArgs {
            request_timeout_secs: 1,
            ..ServeArgs::default()
        },
    )
    .await;
    let body = with_files(Form::meta(), &trace_stat_set(1)).finish();
    // Headers and a tenth of the body, then silence.
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n{}",
        env.bearer(),
        content_type(),
        body.len(),
        String::from_utf8_lossy(&body[..body.len() / 10])
    );
    let t = Instant::now();
    let resp = raw_request(addr, &head, None).await;
    assert!(resp.starts_with("HTTP/1.1 408"), "{}", first_line(&resp));
    // The answer comes from the 1 s request timeout: not before it, and well before the
    // 10 s that raw_request would wait for a server that never answers.
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "answered after {waited:?}"
    );
    env.assert_empty().await;
    healthz(&reqwest::Client::new(), addr).await;
}

#[tokio::test]
async fn a_client_trickling_its_headers_is_cut_off() {
    let env = env().await;
    let addr = spawn_server(
        env.pool.clone(),
        ServeArgs {
            header_timeout_secs: 1,
            ..ServeArgs::default()
        },
    )
    .await;
    // Half a request line and a header, then silence: the connection must not stay open.
    let t = Instant::now();
    let resp = raw_request(
        addr,
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthor",
        None,
    )
    .await;
    let waited = t.elapsed();
    assert!(
        waited < Duration::from_secs(9),
        "the server kept a header-trickling connection open for {waited:?} ({:?})",
        first_line(&resp)
    );
    assert!(
        resp.is_empty() || resp.starts_with("HTTP/1.1 408"),
        "{}",
        first_line(&resp)
    );
    env.assert_empty().await;
    healthz(&reqwest::Client::new(), addr).await;
}

#[tokio::test]
async fn chunked_oversized_body_over_a_socket_is_413() {
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), small_limit(1)).await;
    let client = reqwest::Client::new();
    // reqwest sends a multipart form with parts from bytes with a Content-Length; a raw
    // chunked request has none, so only the streaming limit can stop it.
    let mut head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        env.bearer(),
        content_type(),
    );
    let body = Form::meta().file("big", &vec![b'7'; 2 << 20]).finish();
    for chunk in body.chunks(256 * 1024) {
        head.push_str(&format!("{:x}\r\n", chunk.len()));
        head.push_str(&String::from_utf8_lossy(chunk));
        head.push_str("\r\n");
    }
    head.push_str("0\r\n\r\n");
    let resp = raw_request(addr, &head, None).await;
    assert!(resp.starts_with("HTTP/1.1 413"), "{}", first_line(&resp));
    assert!(resp.contains("larger than 1 MiB"));
    env.assert_empty().await;
    healthz(&client, addr).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_uploaders() {
    // 16 x 200 (and 16 x 10 refused) takes about 15 s in a debug build on two cores.
    let per_client: u64 = 200;
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    let client = reqwest::Client::new();
    let t = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..16u64 {
        let client = client.clone();
        let auth = env.bearer();
        tasks.push(tokio::spawn(async move {
            let mut acks = Vec::new();
            for i in 0..per_client {
                // Among them, uploads that fail: a file that does not parse, refused alone
                // while the uploads ready with it are committed together.
                if i % 20 == 7 {
                    let mut bad = function_table(c * 100_000 + i, 3);
                    bad.extend_from_slice(
                        b"  broken_func                           7    -3.0 us     0.25 us     0.001 us\n",
                    );
                    let resp = client
                        .post(format!("http://{addr}/api/v1/runs"))
                        .header("authorization", &auth)
                        .multipart(reqwest_form(&[("function0".into(), bad)], "v1"))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(resp.status(), reqwest::StatusCode::UNPROCESSABLE_ENTITY);
                    let body: Value = resp.json().await.unwrap();
                    assert_eq!(body["line"], 6, "{body}");
                }
                let file = small_upload(c, i);
                let expected = expected_samples(std::slice::from_ref(&file));
                // Every tenth upload repeats the previous one: 200 with the same run.
                let resend = i % 10 == 9;
                let file = if resend { small_upload(c, i - 1) } else { file };
                let resp = client
                    .post(format!("http://{addr}/api/v1/runs"))
                    .header("authorization", &auth)
                    .multipart(reqwest_form(std::slice::from_ref(&file), "v1"))
                    .send()
                    .await
                    .unwrap();
                let status = resp.status();
                let text = resp.text().await.unwrap();
                assert!(!text.contains("locked"), "{text}");
                let body: Value = serde_json::from_str(&text).unwrap();
                if resend {
                    assert_eq!(status, reqwest::StatusCode::OK, "{text}");
                } else {
                    assert_eq!(status, reqwest::StatusCode::CREATED, "{text}");
                    assert_eq!(body["samples"].as_u64().unwrap(), expected);
                }
                acks.push((
                    resend,
                    body["run_id"].as_i64().unwrap(),
                    body["samples"].as_u64().unwrap(),
                ));
            }
            acks
        }));
    }
    let mut acks = Vec::new();
    for t in tasks {
        acks.extend(t.await.unwrap());
    }
    let elapsed = t.elapsed();
    let created: Vec<_> = acks.iter().filter(|a| !a.0).collect();
    let expected_runs = 16 * (per_client - per_client / 10);
    assert_eq!(created.len() as u64, expected_runs);
    let mut ids: Vec<i64> = created.iter().map(|a| a.1).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len() as u64,
        expected_runs,
        "a run id acknowledged twice"
    );
    // Each resend got the run its original created.
    assert_eq!(env.count("runs").await as u64, expected_runs);
    for (_, id, samples) in &acks {
        assert_eq!(samples_of_run(&env.pool, *id).await as u64, *samples);
    }
    assert_eq!(
        env.samples().await as u64,
        created.iter().map(|a| a.2).sum::<u64>()
    );
    assert_runs_complete(&env.pool).await;
    healthz(&client, addr).await;
    eprintln!(
        "{} uploads by 16 clients in {:.1} s ({:.0}/s)",
        acks.len(),
        elapsed.as_secs_f64(),
        acks.len() as f64 / elapsed.as_secs_f64()
    );
}

// ---------------------------------------------------------------------------------------------
// The binary: token CLI, upload CLI with retries, SIGKILL mid-upload.

fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env("QUIESCENT_LOG", "warn")
        .env_remove("QUIESCENT_TOKEN")
        .env_remove("QUIESCENT_DB");
    c
}

fn create_token_with_cli(db: &str, name: &str) -> String {
    let out = bin()
        .args(["token", "create", name, "--db", db])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("shown only now"));
    token
}

/// Starts `quiescent serve` on an ephemeral port; its log goes to `log` (at trace level) when
/// given.
fn start_server(db: &str, log: Option<&Path>) -> (std::process::Child, SocketAddr) {
    let mut cmd = bin();
    cmd.args(["serve", "--db", db, "--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped());
    match log {
        Some(p) => {
            cmd.env("QUIESCENT_LOG", "trace")
                .stderr(std::fs::File::create(p).unwrap());
        }
        None => {
            cmd.stderr(std::process::Stdio::null());
        }
    }
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_server_keeps_every_acknowledged_upload_and_no_partial_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let token = create_token_with_cli(&db, "rig-crash");
    let (mut child, addr) = start_server(&db, None);
    let client = reqwest::Client::new();
    healthz(&client, addr).await;

    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(i64, u64)>::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for c in 0..8u64 {
        let (client, token, acked, stop) =
            (client.clone(), token.clone(), acked.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut errors = 0;
            for i in 0..10_000u64 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                // A 4-CPU set, big enough that a kill lands inside transactions.
                let files = trace_stat_set(c * 1_000_000 + i);
                let resp = client
                    .post(format!("http://{addr}/api/v1/runs"))
                    .bearer_auth(&token)
                    .multipart(reqwest_form(&files, "crash"))
                    .send()
                    .await;
                let Ok(resp) = resp else {
                    errors += 1;
                    break;
                };
                let status = resp.status();
                let Ok(body) = resp.json::<Value>().await else {
                    errors += 1;
                    break;
                };
                assert_eq!(status, reqwest::StatusCode::CREATED, "{body}");
                acked.lock().unwrap().push((
                    body["run_id"].as_i64().unwrap(),
                    body["samples"].as_u64().unwrap(),
                ));
            }
            errors
        }));
    }
    // Let some uploads land, then SIGKILL the server while the others are in flight.
    let t = Instant::now();
    while acked.lock().unwrap().len() < 40 && t.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut errors = 0;
    for t in tasks {
        errors += t.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 40,
        "only {} uploads before the kill",
        acked.len()
    );
    assert!(errors > 0, "no upload was cut by the kill");

    // Restart on the same file: it opens, and every acknowledged upload is there, whole.
    let log = dir.path().join("serve.log");
    let (mut child, addr) = start_server(&db, Some(&log));
    healthz(&client, addr).await;
    let pool = store::Store::open(&db).await.unwrap().sqlite_pool().clone();
    assert_runs_complete(&pool).await;
    for (id, samples) in &acked {
        assert_eq!(
            samples_of_run(&pool, *id).await as u64,
            *samples,
            "run {id}"
        );
    }
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    // A run may have committed with its response lost in the kill: at most one per uploader.
    assert!(
        runs as usize >= acked.len() && runs as usize <= acked.len() + 8,
        "{runs} runs, {} acknowledged",
        acked.len()
    );
    let expected = expected_samples(&trace_stat_set(0));
    let wrong: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs r WHERE (SELECT SUM(n) FROM series WHERE run_id = r.id) != ?",
    )
    .bind(expected as i64)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(wrong, 0, "runs with a partial set of samples");
    eprintln!(
        "{} uploads acknowledged before SIGKILL, {errors} cut, {runs} runs stored",
        acked.len()
    );
    // And it takes uploads again.
    let resp = client
        .post(format!("http://{addr}/api/v1/runs"))
        .bearer_auth(&token)
        .multipart(reqwest_form(&trace_stat_set(99_999_999), "after-restart"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
    child.kill().unwrap();
    child.wait().unwrap();
    // Even at trace level, the log names the rig but never shows its token.
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("upload stored") && log.contains("rig-crash"),
        "{log}"
    );
    assert!(!log.contains(&token), "the token is in the log");
    assert!(
        !log.to_ascii_lowercase().contains("authorization"),
        "a header is in the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_cli_sends_retries_and_reports() {
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("trace_stat");
    std::fs::create_dir(&ts).unwrap();
    let files = trace_stat_set(7);
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let config = dir.path().join("config");
    std::fs::write(&config, "CONFIG_PREEMPT_RCU=y\n").unwrap();
    let server = format!("http://{addr}");
    let run = move |extra: Vec<String>| {
        let mut c = bin();
        c.args([
            "upload",
            "--build",
            "v6.9",
            "--machine",
            "rig-1",
            "--benchmark",
            "function-profile",
        ])
        .args(["--config", config.to_str().unwrap(), "--param", "load=idle"])
        .args(extra);
        c
    };
    let token = env.token.clone();
    let ts_arg = ts.display().to_string();
    let (out, out2) = {
        let (run, server, token, ts_arg) =
            (run.clone(), server.clone(), token.clone(), ts_arg.clone());
        tokio::task::spawn_blocking(move || {
            let args = vec!["--server".into(), server, ts_arg];
            let out = run(args.clone())
                .env("QUIESCENT_TOKEN", &token)
                .output()
                .unwrap();
            let out2 = run(args).env("QUIESCENT_TOKEN", &token).output().unwrap();
            (out, out2)
        })
        .await
        .unwrap()
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("trace_stat/function3: trace_stat"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{} samples", expected_samples(&files))),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("http://{addr}/runs/")), "{stdout}");
    assert!(!stdout.contains(&env.token));
    let stdout2 = String::from_utf8_lossy(&out2.stdout);
    assert!(out2.status.success());
    assert!(stdout2.contains("already stored as run"), "{stdout2}");
    assert_eq!(env.count("runs").await, 1);
    assert_eq!(env.count("idempotency_keys").await, 1);
    let config_stored: String = sqlx::query_scalar("SELECT config FROM builds")
        .fetch_one(&env.pool)
        .await
        .unwrap();
    assert_eq!(config_stored, "CONFIG_PREEMPT_RCU=y\n");

    // A bad token fails at once with the server's reason, without retrying.
    let out = {
        let (run, server, ts_arg) = (run.clone(), server.clone(), ts_arg.clone());
        tokio::task::spawn_blocking(move || {
            let t = Instant::now();
            let out = run(vec![
                "--server".into(),
                server,
                "--token".into(),
                "0".repeat(64),
                ts_arg,
            ])
            .output()
            .unwrap();
            (out, t.elapsed())
        })
        .await
        .unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.0.stderr);
    assert!(!out.0.status.success());
    assert!(
        stderr.contains("401") && stderr.contains("unknown token"),
        "{stderr}"
    );
    assert!(!stderr.contains("retrying"), "{stderr}");
    assert!(out.1 < Duration::from_secs(30));

    // Nothing listening: retried, then a clear message.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = {
        let (run, token, ts_arg) = (run.clone(), token.clone(), ts_arg.clone());
        tokio::task::spawn_blocking(move || {
            run(vec![
                "--server".into(),
                format!("http://{free}"),
                "--retries".into(),
                "1".into(),
                ts_arg,
            ])
            .env("QUIESCENT_TOKEN", &token)
            .output()
            .unwrap()
        })
        .await
        .unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("attempt 1 failed") && stderr.contains("retrying"),
        "{stderr}"
    );
    assert!(stderr.contains("failed after 2 attempts"), "{stderr}");

    // A server that comes up while the client backs off: the retry stores the run once. The
    // port is held all along (no race for it): the first connections are closed unanswered,
    // then the same listener is handed to the server.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let late = listener.local_addr().unwrap();
    let child = {
        let (run, token) = (run.clone(), token.clone());
        let dir = dir.path().join("trace_stat/function0");
        tokio::task::spawn_blocking(move || {
            run(vec![
                "--server".into(),
                format!("http://{late}"),
                "--param".into(),
                "late=yes".into(),
                dir.display().to_string(),
            ])
            .env("QUIESCENT_TOKEN", &token)
            .output()
            .unwrap()
        })
    };
    // Two connections closed unanswered: the client's look at /api/v1/limits (a server that
    // cannot say is not checked) and its first upload attempt.
    for _ in 0..2 {
        let (conn, _) = tokio::time::timeout(Duration::from_secs(60), listener.accept())
            .await
            .expect("the client never connected")
            .unwrap();
        drop(conn);
    }
    let pool = env.pool.clone();
    tokio::spawn(async move {
        quiescent::web::serve_on(
            store::Store::from_sqlite_pool(pool),
            ServeArgs::default(),
            listener,
            |_| {},
        )
        .await
        .unwrap();
    });
    let out = child.await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("attempt 1 failed") && stderr.contains("retrying"),
        "{stderr}"
    );
    assert!(stdout.contains("stored run"), "{stdout}");
    assert_eq!(env.count("runs").await, 2);
}

#[test]
fn token_cli_lists_and_revokes() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let token = create_token_with_cli(&db, "rig-a");
    let out = bin()
        .args(["token", "create", "rig-a", "--db", &db])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    let out = bin().args(["token", "list", "--db", &db]).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(list.contains("rig-a") && list.contains("active"), "{list}");
    assert!(!list.contains(&token), "the list shows a token");
    let out = bin()
        .args(["token", "revoke", "rig-a", "--db", &db])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = bin().args(["token", "list", "--db", &db]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("revoked"));
    let out = bin()
        .args(["token", "revoke", "nobody", "--db", &db])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no token named"));
}
