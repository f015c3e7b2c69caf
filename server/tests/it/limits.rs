//! Limits on writes: shared comparisons capped, deduplicated and rate-limited; uploads whose
//! idempotency keys, token scopes, names, gzip bodies and byte budget are checked; the spool
//! directory emptied on start.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use quiescent::AppState;
use quiescent::config::ServeArgs;
use serde_json::Value;
use sqlx::SqlitePool;
use tower::ServiceExt;

use crate::common::{self, TestApp};

const BOUNDARY: &str = "hArDeN-5e1f";

/// Two builds with one comparable series each, so `/share` has something to freeze.
async fn seed(t: &TestApp) {
    for (build, vals) in [("v1.0", [1.0, 1.1, 0.9]), ("v1.1", [2.0, 2.1, 1.9])] {
        common::run(
            &t.pool,
            build,
            "rig",
            "hackbench",
            &[],
            &[common::secs("time", &vals)],
        )
        .await;
    }
}

async fn count(pool: &SqlitePool, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
        .fetch_one(pool)
        .await
        .unwrap()
}

const SHARE: &[(&str, &str)] = &[("base", "v1.0"), ("head", "v1.1"), ("alpha", "0.05")];

#[tokio::test]
async fn share_fields_are_capped_and_one_comparison_is_one_row() {
    let t = common::app().await;
    seed(&t).await;
    let long = "x".repeat(300);
    let r = t
        .post_form(
            "/share",
            &[("base", "v1.0"), ("head", "v1.1"), ("q", &long)],
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.text());
    assert!(r.text().contains("field q is 300 bytes"), "{}", r.text());
    let huge = "y".repeat(64 * 1024);
    let r = t
        .post_form(
            "/share",
            &[("base", "v1.0"), ("head", "v1.1"), ("q", &huge)],
        )
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(count(&t.pool, "comparisons").await, 0);

    let a = t.post_form("/share", SHARE).await;
    assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.text());
    let b = t.post_form("/share", SHARE).await;
    assert_eq!(b.status, StatusCode::SEE_OTHER);
    assert_eq!(a.header("location"), b.header("location"));
    assert_eq!(count(&t.pool, "comparisons").await, 1);
    // Other settings are another comparison.
    let c = t
        .post_form(
            "/share",
            &[("base", "v1.0"), ("head", "v1.1"), ("alpha", "0.01")],
        )
        .await;
    assert_ne!(a.header("location"), c.header("location"));
    assert_eq!(count(&t.pool, "comparisons").await, 2);
}

#[tokio::test]
async fn anonymous_shares_are_rate_limited() {
    let t = common::app_with(ServeArgs {
        anon_writes_per_minute: 2,
        ..ServeArgs::default()
    })
    .await;
    seed(&t).await;
    for _ in 0..2 {
        assert_eq!(
            t.post_form("/share", SHARE).await.status,
            StatusCode::SEE_OTHER
        );
    }
    let r = t.post_form("/share", SHARE).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.text());
    let wait: u64 = r.header("retry-after").parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
}

#[tokio::test]
async fn shares_can_require_a_token() {
    let t = common::app_with(ServeArgs {
        share_requires_token: true,
        ..ServeArgs::default()
    })
    .await;
    seed(&t).await;
    assert_eq!(
        t.post_form("/share", SHARE).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(count(&t.pool, "comparisons").await, 0);
    let token = quiescent::tokens::create(&t.pool, "ci").await.unwrap();
    let r = t
        .request(
            Request::post("/share")
                .header("content-type", "application/x-www-form-urlencoded")
                .header("authorization", format!("Bearer {token}"))
                .body(Body::from("base=v1.0&head=v1.1"))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text());
}

// ---------------------------------------------------------------------------------------------
// Uploads.

/// A multipart body: (field, value) pairs then (file name, bytes) files.
fn multipart(fields: &[(&str, &str)], files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for (k, v) in fields {
        write!(
            body,
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
        )
        .unwrap();
    }
    for (name, data) in files {
        write!(
            body,
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\r\n"
        )
        .unwrap();
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    write!(body, "--{BOUNDARY}--\r\n").unwrap();
    body
}

const META: &[(&str, &str)] = &[
    ("build", "v6.9"),
    ("machine", "rig-1"),
    ("benchmark", "hackbench"),
];
const HACKBENCH: &[u8] = b"Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\nEach sender will pass 100 messages of 100 bytes\nTime: 0.123\n";
const HACKBENCH2: &[u8] = b"Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)\nEach sender will pass 100 messages of 100 bytes\nTime: 0.456\n";

fn post(token: &str, key: Option<&str>, body: Vec<u8>) -> Request<Body> {
    let mut b = Request::post("/api/v1/runs")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("content-length", body.len())
        .header("authorization", format!("Bearer {token}"));
    if let Some(k) = key {
        b = b.header("idempotency-key", k);
    }
    b.body(Body::from(body)).unwrap()
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

fn app_of(t: &TestApp, config: ServeArgs) -> Router {
    quiescent::app(AppState::new(
        store::Store::from_sqlite_pool(t.pool.clone()),
        config,
    ))
}

#[tokio::test]
async fn an_idempotency_key_reused_with_other_content_is_422() {
    let t = common::app().await;
    let token = quiescent::tokens::create(&t.pool, "rig-1").await.unwrap();
    let first = multipart(META, &[("out.txt", HACKBENCH)]);
    let (s, v) = call(&t.app, post(&token, Some("k1"), first.clone())).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let (s, v2) = call(&t.app, post(&token, Some("k1"), first)).await;
    assert_eq!(s, StatusCode::OK, "{v2}");
    assert_eq!(v["run_id"], v2["run_id"]);
    let other = multipart(META, &[("out.txt", HACKBENCH2)]);
    let (s, v) = call(&t.app, post(&token, Some("k1"), other.clone())).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["detail"]
            .as_str()
            .unwrap()
            .contains("was used for a different upload"),
        "{v}"
    );
    assert_eq!(count(&t.pool, "runs").await, 1);
    // Other metadata with the same key is other content too.
    let meta2 = [
        ("build", "v6.10"),
        ("machine", "rig-1"),
        ("benchmark", "hackbench"),
    ];
    let (s, _) = call(
        &t.app,
        post(
            &token,
            Some("k1"),
            multipart(&meta2, &[("out.txt", HACKBENCH)]),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    // A new key stores the new content.
    let (s, _) = call(&t.app, post(&token, Some("k2"), other)).await;
    assert_eq!(s, StatusCode::CREATED);
    assert_eq!(count(&t.pool, "runs").await, 2);
}

#[tokio::test]
async fn bidi_controls_are_refused_in_labels_and_escaped_in_file_names() {
    let t = common::app().await;
    let token = quiescent::tokens::create(&t.pool, "rig-1").await.unwrap();
    for (field, value) in [
        ("build", "v6.9\u{202E}-lanif"),
        ("machine", "rig\u{2066}1"),
        ("benchmark", "hack\u{202A}bench"),
        ("param.load", "idle\u{2069}"),
    ] {
        let mut meta: Vec<(&str, &str)> =
            META.iter().copied().filter(|(k, _)| *k != field).collect();
        meta.push((field, value));
        let (s, v) = call(
            &t.app,
            post(&token, None, multipart(&meta, &[("out.txt", HACKBENCH)])),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{field}: {v}");
        let detail = v["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("field \"{field}\"")), "{detail}");
        assert!(detail.contains("bidirectional"), "{detail}");
    }
    assert_eq!(count(&t.pool, "runs").await, 0);
    let (s, v) = call(
        &t.app,
        post(
            &token,
            None,
            multipart(META, &[("out\u{202E}txt.exe", HACKBENCH)]),
        ),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let name: String = sqlx::query_scalar("SELECT file_name FROM run_artifacts")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(name, "out\\u{202E}txt.exe");
    let html = t.page(&format!("/runs/{}", v["run_id"])).await;
    assert!(!html.contains('\u{202E}'));
}

#[tokio::test]
async fn scoped_tokens_write_only_their_machines_and_builds() {
    let t = common::app().await;
    let scoped = quiescent::tokens::create_scoped(
        &t.pool,
        "rig-a",
        &store::TokenScopes {
            machines: Some("rig-*".into()),
            builds: Some("v6.*".into()),
        },
    )
    .await
    .unwrap();
    let other = quiescent::tokens::create(&t.pool, "lab").await.unwrap();
    for (build, machine, needle) in [
        ("v7.0", "rig-1", "builds matching \"v6.*\""),
        ("v6.9", "desk", "machines matching \"rig-*\""),
    ] {
        let meta = [
            ("build", build),
            ("machine", machine),
            ("benchmark", "hackbench"),
        ];
        let (s, v) = call(
            &t.app,
            post(&scoped, None, multipart(&meta, &[("out.txt", HACKBENCH)])),
        )
        .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
        assert!(v["detail"].as_str().unwrap().contains(needle), "{v}");
    }
    assert_eq!(count(&t.pool, "builds").await, 0);
    let body = multipart(META, &[("out.txt", HACKBENCH)]);
    let (s, v) = call(&t.app, post(&scoped, None, body.clone())).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["uploader"], "rig-a");
    // The same run sent by an unscoped token: 200, and the reply names who stored it.
    let (s, v) = call(&t.app, post(&other, None, body)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["uploader"], "rig-a");
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn a_gzip_body_is_read_as_a_stream() {
    let t = common::app().await;
    let token = quiescent::tokens::create(&t.pool, "rig-1").await.unwrap();
    // The whole body gzip: stored like a plain one.
    let body = gzip(&multipart(META, &[("out.txt", HACKBENCH)]));
    let req = Request::post("/api/v1/runs")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("content-encoding", "gzip")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(body))
        .unwrap();
    let (s, v) = call(&t.app, req).await;
    assert_eq!(s, StatusCode::CREATED, "{v}");

    // A body that has not ended: an unknown field at its start is refused as soon as it is
    // decompressed, which a server buffering the whole body would never reach.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    write!(
        enc,
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"bogus\"\r\n\r\nx\r\n--{BOUNDARY}\r\n"
    )
    .unwrap();
    enc.flush().unwrap();
    tx.send(Ok(std::mem::take(enc.get_mut()))).await.unwrap();
    let stream = tokio_stream_from(rx);
    let req = Request::post("/api/v1/runs")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("content-encoding", "gzip")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from_stream(stream))
        .unwrap();
    let (s, v) = tokio::time::timeout(Duration::from_secs(10), call(&t.app, req))
        .await
        .expect("answered before the body ended");
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["detail"].as_str().unwrap().contains("bogus"), "{v}");
    drop(tx);

    // Decompressing beyond the limit is 413, whatever the compressed size.
    let app = app_of(
        &t,
        ServeArgs {
            max_upload_mib: 1,
            ..ServeArgs::default()
        },
    );
    let big = vec![b'a'; 3 << 20];
    let body = gzip(&multipart(META, &[("out.txt", &big)]));
    assert!(body.len() < 64 << 10);
    let req = Request::post("/api/v1/runs")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("content-encoding", "gzip")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(body))
        .unwrap();
    let (s, v) = call(&app, req).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
}

/// The receiver as a stream of body chunks.
fn tokio_stream_from(
    rx: tokio::sync::mpsc::Receiver<Result<Vec<u8>, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    })
}

#[tokio::test]
async fn uploads_beyond_the_byte_budget_get_503_with_retry_after() {
    let t = common::app().await;
    let token = quiescent::tokens::create(&t.pool, "rig-1").await.unwrap();
    let app = app_of(
        &t,
        ServeArgs {
            upload_budget_mib: 1,
            upload_wait_secs: 0,
            ..ServeArgs::default()
        },
    );
    // A slow upload holding the whole budget: it declares 1 MiB and sends a little.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    tx.send(Ok(format!("--{BOUNDARY}\r\n").into_bytes()))
        .await
        .unwrap();
    let slow = Request::post("/api/v1/runs")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("content-length", 1 << 20)
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from_stream(tokio_stream_from(rx)))
        .unwrap();
    let held = tokio::spawn({
        let app = app.clone();
        async move { call(&app, slow).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (s, v) = call(
        &app,
        post(&token, None, multipart(META, &[("out.txt", HACKBENCH)])),
    )
    .await;
    assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE, "{v}");
    drop(tx);
    let _ = held.await;
    // Once the slow one is gone, there is room again.
    let (s, v) = call(
        &app,
        post(&token, None, multipart(META, &[("out.txt", HACKBENCH)])),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
}

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

#[tokio::test]
async fn the_spool_directory_is_emptied_on_start_and_uploads_use_it() {
    let t = common::app().await;
    let spool = tempfile::tempdir().unwrap();
    let stale = spool.path().join("quiescent-upload-stale");
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("0"), vec![0u8; 4096]).unwrap();
    let keep = spool.path().join("not-ours");
    std::fs::write(&keep, b"x").unwrap();
    let addr = spawn_server(
        t.pool.clone(),
        ServeArgs {
            spool_dir: Some(spool.path().to_path_buf()),
            ..ServeArgs::default()
        },
    )
    .await;
    assert!(!stale.exists(), "a dead server's spool is removed");
    assert!(keep.exists(), "only upload spools are removed");
    let limits: Value = reqwest::get(format!("http://{addr}/api/v1/limits"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(limits["max_files"], 1000);
    assert_eq!(limits["max_upload_bytes"], 256u64 << 20);
}

#[tokio::test]
async fn the_share_rate_is_counted_per_peer_address_over_sockets() {
    let t = common::app().await;
    seed(&t).await;
    let addr = spawn_server(
        t.pool.clone(),
        ServeArgs {
            anon_writes_per_minute: 1,
            ..ServeArgs::default()
        },
    )
    .await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let share = || {
        client
            .post(format!("http://{addr}/share"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("base=v1.0&head=v1.1")
            .send()
    };
    assert_eq!(share().await.unwrap().status(), 303);
    let r = share().await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
}
