//! `quiescent copy-db`: the demo, with tokens, a share, an idempotent upload, a bisection step,
//! a branch's commit order and a multi-chunk artifact, copied from SQLite to PostgreSQL and back
//! answers every question as the original does; a target holding data is refused unless
//! `--force`.

use std::process::{Command, Output};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use sha2::{Digest as _, Sha256};
use tower::ServiceExt;

const BOUNDARY: &str = "c0py-db-5e1f";

fn quiescent(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .env_remove("QUIESCENT_DB")
        .env("QUIESCENT_LOG", "error")
        .env("COLUMNS", "120")
        .args(args)
        .output()
        .expect("run quiescent")
}

/// Runs quiescent, which must succeed: its standard output.
fn ok(args: &[&str]) -> String {
    let o = quiescent(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// The copy's summary without its first line (which names the databases).
fn table_counts(summary: &str) -> String {
    summary.lines().skip(1).collect::<Vec<_>>().join("\n")
}

fn app(store: &store::Store, spool: &std::path::Path) -> Router {
    app_and_passes(store, spool).0
}

/// [`app`] and its history passes, which run after an upload is answered.
fn app_and_passes(
    store: &store::Store,
    spool: &std::path::Path,
) -> (Router, std::sync::Arc<quiescent::history::passes::Passes>) {
    let state = quiescent::AppState::new(
        store.clone(),
        quiescent::config::ServeArgs {
            spool_dir: Some(spool.to_path_buf()),
            ..Default::default()
        },
    );
    let passes = state.history_passes.clone();
    (quiescent::app(state), passes)
}

async fn call(app: &Router, req: Request<Body>) -> (StatusCode, String, String) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let location = resp
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (
        status,
        String::from_utf8_lossy(&body).into_owned(),
        location,
    )
}

/// `POST /api/v1/runs` of one hackbench output with `token` and an idempotency key.
fn upload(token: &str, build: &str, key: &str) -> Request<Body> {
    let file = crate::common::fixture("hackbench/seed002_hackbench_50_time_only.txt");
    let bytes = std::fs::read(file).unwrap();
    let mut body = Vec::new();
    for (name, value) in [
        ("build", build),
        ("machine", "rig-copy"),
        ("benchmark", "hackbench"),
    ] {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"hackbench.txt\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(&bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    Request::post("/api/v1/runs")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .header("content-length", body.len())
        .header("authorization", format!("Bearer {token}"))
        .header("idempotency-key", key)
        .body(Body::from(body))
        .unwrap()
}

/// What the demo lacks: tokens (one scoped, one revoked), an idempotent upload, a share, a
/// bisection step, a branch's commit order and an artifact of several chunks. Returns the
/// live token, the share's address and the big artifact's id.
async fn seed_extras(db: &str, spool: &std::path::Path) -> (String, String, i64) {
    let store = store::Store::open(db).await.unwrap();
    let token = quiescent::tokens::create_scoped(
        &store,
        "rig-a",
        &store::TokenScopes {
            machines: Some("rig-*".into()),
            builds: None,
        },
    )
    .await
    .unwrap();
    quiescent::tokens::create(&store, "old-rig").await.unwrap();
    quiescent::tokens::revoke(&store, "old-rig").await.unwrap();
    let (web, passes) = app_and_passes(&store, spool);
    let (status, body, _) = call(&web, upload(&token, "v-copy-1", "copy-key-1")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Its histories are analysed before the database is copied.
    assert!(passes.settled(std::time::Duration::from_secs(30)).await);
    let (status, body, share) = call(
        &web,
        Request::post("/share")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from("base=v4.19&head=v5.1&alpha=0.01"))
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    assert!(share.starts_with("/c/"), "{share}");
    store
        .insert_bisect_step(&store::NewStep {
            commit: "c229828ca6bc",
            build_label: "c229828ca6bc",
            machine: "rig",
            benchmark: "function-profile",
            series: "time",
            good_ref: "c229828ca6bc-reverted",
            bad_ref: "c229828ca6bc",
            runs: 3,
            samples: 30,
            median: Some(1.25),
            good_median: Some(1.0),
            bad_median: None,
            p_good: Some(0.001),
            p_bad: None,
            level: Some(0.05),
            verdict: "bad",
            run_id: None,
        })
        .await
        .unwrap();
    store
        .import_commit_order("main", &["0123abcd".into(), "4567ef01".into()])
        .await
        .unwrap();
    // Two and a half chunks of bytes no text encoding would keep.
    let big: Vec<u8> = (0..(5u32 << 19))
        .map(|i| (i.wrapping_mul(7919) >> 3) as u8)
        .collect();
    let (big_id, _) = store.put_artifact("big.bin", &big).await.unwrap();
    store.close().await;
    (token, share, big_id)
}

/// Every artifact's bytes, by id, read through the store (and checked against its sha256).
async fn artifacts(store: &store::Store, ids: &[(i64, String)]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (id, sha) in ids {
        let mut bytes = Vec::new();
        store.read_artifact(*id, &mut bytes).await.unwrap();
        assert_eq!(&hex::encode(Sha256::digest(&bytes)), sha, "artifact {id}");
        out.push(bytes);
    }
    out
}

/// What the store answers about histories, alerts, bisections and tokens, as one value.
async fn store_answers(store: &store::Store, token: &str) -> serde_json::Value {
    let mut history = Vec::new();
    for key in store.history_keys(&Default::default()).await.unwrap() {
        let points = store.history_points(&key).await.unwrap();
        history.push(format!("{key:?} {points:?}"));
    }
    let alerts = store.alerts(&Default::default()).await.unwrap();
    let groups = store.alert_groups(100).await.unwrap();
    let tok = store
        .token_by_hash(&quiescent::tokens::hash(token))
        .await
        .unwrap()
        .expect("the token is known");
    let scopes = store.token_scopes(tok.id).await.unwrap();
    let key = store
        .idempotency_key_use(tok.id, "copy-key-1")
        .await
        .unwrap()
        .expect("the key is known");
    serde_json::json!({
        "history": history,
        "alerts": alerts,
        "groups": groups,
        "bisect": store.bisect_steps(None).await.unwrap(),
        "branch": store.branch_builds("main", 1000).await.unwrap(),
        "token": format!("{tok:?} {scopes:?} {key:?}"),
    })
}

#[tokio::test]
async fn sqlite_to_postgres_and_back_answers_alike() {
    let Some(pg) = store::testing::fresh_pg_url().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let orig = dir.path().join("orig.db").display().to_string();
    let back = dir.path().join("back.db").display().to_string();
    ok(&["demo", "--no-serve", "--db", &orig]);
    let (token, share, big_id) = seed_extras(&orig, &spool).await;

    let to_pg = ok(&["copy-db", "--from", &orig, "--to", &pg]);
    let to_back = ok(&["copy-db", "--from", &pg, "--to", &back]);
    assert_eq!(table_counts(&to_pg), table_counts(&to_back));
    // And from one PostgreSQL database to another.
    let pg2 = store::testing::fresh_pg_url()
        .await
        .expect("a second database");
    let to_pg2 = ok(&["copy-db", "--from", &pg, "--to", &pg2]);
    assert_eq!(table_counts(&to_pg), table_counts(&to_pg2));
    // Every table was exercised.
    for line in to_pg.lines().skip(1) {
        assert!(!line.trim_end().ends_with(" 0"), "nothing copied: {line}");
    }
    let dbs = [orig.as_str(), pg.as_str(), back.as_str(), pg2.as_str()];

    // What the command line shows.
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["runs"],
        vec!["token", "list"],
        vec!["bisect-log"],
        vec!["alerts", "--json"],
    ];
    for (base, head) in crate::common::DEMO_PAIRS {
        commands.push(vec!["compare", base, head, "--json"]);
    }
    for args in &commands {
        let outs: Vec<String> = dbs
            .iter()
            .map(|db| {
                let mut with_db = args.clone();
                with_db.extend(["--db", db]);
                ok(&with_db)
            })
            .collect();
        assert!(!outs[0].trim().is_empty(), "{args:?} printed nothing");
        for (db, out) in dbs.iter().zip(&outs).skip(1) {
            assert_eq!(&outs[0], out, "{args:?}: {db} differs from the original");
        }
    }

    let stores = [
        store::Store::open(&orig).await.unwrap(),
        store::Store::open(&pg).await.unwrap(),
        store::Store::open(&back).await.unwrap(),
    ];
    // Every artifact, byte for byte.
    let ids: Vec<(i64, String)> = sqlx::query_as("SELECT id, sha256 FROM artifacts ORDER BY id")
        .fetch_all(stores[0].sqlite_pool())
        .await
        .unwrap();
    assert!(ids.iter().any(|(id, _)| *id == big_id));
    let want = artifacts(&stores[0], &ids).await;
    assert_eq!(want.iter().map(Vec::len).max(), Some(5 << 19));
    for s in &stores[1..] {
        assert!(
            artifacts(s, &ids).await == want,
            "{} artifacts differ",
            s.engine()
        );
    }
    let id = share.trim_start_matches("/c/");
    let shared = stores[0].share(id).await.unwrap().expect("the share");
    let answers = store_answers(&stores[0], &token).await;
    for s in &stores {
        assert_eq!(s.share(id).await.unwrap().as_ref(), Some(&shared));
        assert_eq!(store_answers(s, &token).await, answers, "{}", s.engine());
    }
    // The shared comparison's page, on every engine.
    let mut pages = Vec::new();
    for s in &stores {
        let web = app(s, &spool);
        let (status, page, _) = call(&web, Request::get(&share).body(Body::empty()).unwrap()).await;
        assert_eq!(status, StatusCode::OK, "{} {share}: {page}", s.engine());
        pages.push(page);
    }
    assert_eq!(pages[0], pages[1]);
    assert_eq!(pages[0], pages[2]);

    // On PostgreSQL the upload's retry is answered from its key, and new rows get new ids.
    let web = app(&stores[1], &spool);
    let (status, body, _) = call(&web, upload(&token, "v-copy-1", "copy-key-1")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let max_run = stores[1].generation().await.unwrap();
    let (status, body, _) = call(&web, upload(&token, "v-copy-2", "copy-key-2")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(stores[1].generation().await.unwrap(), max_run + 1);
    for s in stores {
        s.close().await;
    }
}

#[tokio::test]
async fn a_target_holding_data_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.db").display().to_string();
    let b = dir.path().join("b.db").display().to_string();
    ok(&["token", "create", "rig-a", "--db", &a]);
    ok(&["token", "create", "rig-b", "--db", &b]);
    let before = ok(&["token", "list", "--db", &b]);

    let o = quiescent(&["copy-db", "--from", &a, "--to", &b]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("already holds data (rows: tokens 1)") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(ok(&["token", "list", "--db", &b]), before);

    ok(&["copy-db", "--from", &a, "--to", &b, "--force"]);
    assert_eq!(
        ok(&["token", "list", "--db", &b]),
        ok(&["token", "list", "--db", &a])
    );

    // A missing source is an error, not an empty database copied.
    let missing = dir.path().join("missing.db");
    let o = quiescent(&[
        "copy-db",
        "--from",
        &missing.display().to_string(),
        "--to",
        &b,
    ]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not exist"),
        "{o:?}"
    );
    assert!(!missing.exists());
    assert_eq!(
        ok(&["token", "list", "--db", &b]),
        ok(&["token", "list", "--db", &a])
    );

    // The same on PostgreSQL.
    let Some(pg) = store::testing::fresh_pg_url().await else {
        return;
    };
    ok(&["token", "create", "rig-pg", "--db", &pg]);
    let before = ok(&["token", "list", "--db", &pg]);
    let o = quiescent(&["copy-db", "--from", &a, "--to", &pg]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("already holds data"),
        "{o:?}"
    );
    assert_eq!(ok(&["token", "list", "--db", &pg]), before);
    ok(&["copy-db", "--from", &a, "--to", &pg, "--force"]);
    assert_eq!(
        ok(&["token", "list", "--db", &pg]),
        ok(&["token", "list", "--db", &a])
    );
    // The identity sequence follows the copied ids.
    ok(&["token", "create", "rig-next", "--db", &pg]);
    assert!(ok(&["token", "list", "--db", &pg]).contains("rig-next"));
}
