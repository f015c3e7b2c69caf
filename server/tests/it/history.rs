//! Histories and alerts: detection when runs arrive, the alert lifecycle (triage with and
//! without a token, fixed by a build), the webhook against a local receiver, the pages and
//! the commands.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::common;

/// Five samples per build around `level`, with a fixed pseudo-random scatter of about 1%.
pub(crate) fn samples(build: usize, level: f64) -> String {
    let mut out = String::from("metric,unit,value\n");
    for i in 0..5 {
        let u = ((build * 7919 + i * 104_729) % 1000) as f64 / 1000.0 - 0.5;
        out.push_str(&format!("time,ms,{:.5}\n", level * (1.0 + 0.02 * u)));
    }
    out
}

/// Imports `levels.len()` builds `b00`, `b01`... of benchmark `hb` on `rig1` the way `ingest`
/// does, detection included; returns the alert groups each import created.
pub(crate) async fn import_history(store: &store::Store, levels: &[f64]) -> Vec<Vec<i64>> {
    let mut groups = Vec::new();
    for (b, level) in levels.iter().enumerate() {
        let meta = store::RunMeta {
            build: store::BuildMeta {
                label: format!("b{b:02}"),
                ..Default::default()
            },
            machine: "rig1".into(),
            benchmark: "hb".into(),
            ..Default::default()
        };
        let file = store::InputFile::bytes("run.csv", samples(b, *level).into_bytes(), None);
        let outcome = store.import_run(&meta, &[file], None).await.unwrap();
        groups.push(
            quiescent::history::after_import(store, &outcome.run_ids, &store::Placement::main())
                .await
                .unwrap(),
        );
    }
    groups
}

/// Imports one run of build `label` of `benchmark` on `rig1`, placed on branch `timed` by
/// `commit_time`, with detection as `ingest` runs it; returns the run id. `seed` makes the
/// samples (the same samples again would be the same import, stored once).
pub(crate) async fn import_timed(
    store: &store::Store,
    benchmark: &str,
    label: &str,
    commit_time: i64,
    seed: usize,
    level: f64,
) -> i64 {
    let meta = store::RunMeta {
        build: store::BuildMeta {
            label: label.into(),
            ..Default::default()
        },
        machine: "rig1".into(),
        benchmark: benchmark.into(),
        ..Default::default()
    };
    let f = store::InputFile::bytes("r.csv", samples(seed, level).into_bytes(), None);
    let run = store.import_run(&meta, &[f], None).await.unwrap().run_ids[0];
    let placement = store::Placement {
        branch: "timed".into(),
        parent: None,
        commit_time: Some(commit_time),
    };
    quiescent::history::after_import(store, &[run], &placement)
        .await
        .unwrap();
    run
}

fn step_levels() -> Vec<f64> {
    (0..30).map(|b| if b < 15 { 10.0 } else { 11.5 }).collect()
}

#[tokio::test]
async fn a_step_raises_one_alert_at_its_build_and_triage_needs_a_token() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    let groups = import_history(&store, &step_levels()).await;
    // No alert before the step has enough builds after it; exactly one group overall.
    assert!(groups[..15].iter().all(Vec::is_empty), "{groups:?}");
    let all: Vec<i64> = groups.iter().flatten().copied().collect();
    assert_eq!(all.len(), 1, "{groups:?}");

    let list = app.get("/api/v1/alerts").await;
    assert_eq!(list.status, StatusCode::OK);
    let alerts = list.json();
    let alerts = alerts.as_array().unwrap();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let a = &alerts[0];
    assert_eq!(a["build_before"], "b14");
    assert_eq!(a["build_after"], "b15");
    assert_eq!(a["kind"], "regression");
    assert_eq!(a["state"], "untriaged");
    let pct = a["change_pct"].as_f64().unwrap();
    assert!((pct - 15.0).abs() < 2.0, "{pct}");
    assert!(a["q"].as_f64().unwrap() < 0.05);
    let id = a["id"].as_i64().unwrap();

    // Without a token, then with a wrong one: refused, state unchanged.
    let body = r#"{"state":"acknowledged","note":"looking"}"#;
    let post = |auth: Option<String>| {
        let mut r = Request::post(format!("/api/v1/alerts/{id}"))
            .header("content-type", "application/json");
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.body(Body::from(body)).unwrap()
    };
    assert_eq!(
        app.request(post(None)).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.request(post(Some("Bearer nope".into()))).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        app.get("/api/v1/alerts?state=untriaged")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let token =
        quiescent::tokens::create(&store::Store::from_sqlite_pool(app.pool.clone()), "rig-a")
            .await
            .unwrap();
    let ok = app.request(post(Some(format!("Bearer {token}")))).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text());
    let acked = app.get("/api/v1/alerts?state=acknowledged").await.json();
    assert_eq!(acked[0]["who"], "rig-a");
    assert_eq!(acked[0]["note"], "looking");
    assert_eq!(
        app.get("/api/v1/alerts?state=untriaged")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        0
    );

    // The page's form: a token field; fixed by a build.
    let no_token = app
        .post_form(
            &format!("/alerts/{id}/triage"),
            &[("state", "fixed"), ("fixed_by", "b29")],
        )
        .await;
    assert_eq!(no_token.status, StatusCode::UNAUTHORIZED);
    let fixed = app
        .post_form(
            &format!("/alerts/{id}/triage"),
            &[("state", "fixed"), ("fixed_by", "b29"), ("token", &token)],
        )
        .await;
    assert_eq!(fixed.status, StatusCode::SEE_OTHER);
    let f = app.get("/api/v1/alerts?state=fixed").await.json();
    assert_eq!(f[0]["fixed_by"], "b29");
    let bad_state = app
        .post_form(
            &format!("/alerts/{id}/triage"),
            &[("state", "gone"), ("token", &token)],
        )
        .await;
    assert_eq!(bad_state.status, StatusCode::BAD_REQUEST);
    assert!(
        bad_state
            .text()
            .contains("untriaged, acknowledged, invalid, fixed")
    );

    // A second import of the same history changes nothing: the alert is not raised twice.
    let again = quiescent::history::detect_keys(
        &store,
        &store
            .history_keys(&store::KeyFilter::default())
            .await
            .unwrap(),
    )
    .await
    .unwrap();
    assert!(again.is_empty());
}

#[tokio::test]
async fn pure_noise_raises_no_alert() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    let groups = import_history(&store, &[10.0; 30]).await;
    assert!(groups.iter().all(Vec::is_empty), "{groups:?}");
    assert_eq!(
        app.get("/api/v1/alerts")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[tokio::test]
async fn pages_show_the_history_its_change_and_the_feed() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    import_history(&store, &step_levels()).await;

    let h = app
        .page("/history?benchmark=hb&metric=time&machine=rig1")
        .await;
    assert!(h.contains("<svg class=\"history-chart\""));
    // 30 builds x 5 samples as dots, each build's dots inside a link to its run.
    assert_eq!(h.matches("<circle class=\"dot\"").count(), 150);
    assert!(h.contains("href=\"/runs/1\""));
    assert!(h.contains("b14 → b15: +"));
    assert!(h.contains("<form method=\"get\" action=\"/compare\""));
    assert!(!h.contains("Generated data"));
    let missing = app.get("/history?benchmark=hb&metric=nope").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let no_metric = app.get("/history?benchmark=hb").await;
    assert_eq!(no_metric.status, StatusCode::BAD_REQUEST);

    let b = app.page("/benchmarks/hb").await;
    assert!(b.contains("class=\"spark alerted\""));
    assert!(b.contains("· 1 alert</span>"), "{b}");

    let a = app.page("/alerts?state=untriaged&benchmark=hb").await;
    assert!(a.contains("b14 → b15"));
    assert!(a.contains("name=\"token\""));
    let none = app.page("/alerts?machine=elsewhere").await;
    assert!(none.contains("No alerts match."));

    let feed = app.get("/alerts.atom").await;
    assert!(
        feed.header("content-type")
            .starts_with("application/atom+xml")
    );
    let feed = feed.text();
    assert!(feed.contains("<entry>"));
    assert!(feed.contains("1 alert at b15 (main)"));

    let mail = app.get("/alerts/groups/1/email").await.text();
    assert!(mail.starts_with("Subject: [quiescent] 1 performance change at b15"));
    assert!(mail.lines().all(|l| l.len() <= 72), "{mail}");
    assert!(mail.contains("hb time on rig1: +"));
}

#[tokio::test]
async fn webhook_posts_each_new_group_once_with_retries() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    import_history(&store, &step_levels()).await;

    // A receiver that fails its first request, then records the bodies.
    let seen: Arc<Mutex<(usize, Vec<serde_json::Value>)>> = Arc::default();
    let s2 = seen.clone();
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<serde_json::Value>| {
            let seen = s2.clone();
            async move {
                let mut s = seen.lock().unwrap();
                s.0 += 1;
                if s.0 == 1 {
                    return StatusCode::INTERNAL_SERVER_ERROR;
                }
                s.1.push(v);
                StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, receiver).await });
    let url = format!("http://{addr}/hook");

    let sent = quiescent::history::notify::send_pending(&store, &url, 3, Duration::from_millis(10))
        .await
        .unwrap();
    assert_eq!(sent, 1);
    {
        let s = seen.lock().unwrap();
        assert_eq!(s.0, 2, "one refused attempt, one accepted");
        assert_eq!(s.1.len(), 1);
        assert_eq!(s.1[0]["build"], "b15");
        assert_eq!(s.1[0]["alerts"][0]["benchmark"], "hb");
    }
    // Already sent: nothing more.
    let again =
        quiescent::history::notify::send_pending(&store, &url, 3, Duration::from_millis(10))
            .await
            .unwrap();
    assert_eq!(again, 0);
    // A receiver that is down: the group stays pending after every attempt.
    let store2 = store.clone();
    sqlx::query("UPDATE alert_groups SET notified_at = NULL")
        .execute(store2.sqlite_pool())
        .await
        .unwrap();
    let down = quiescent::history::notify::send_pending(
        &store2,
        "http://127.0.0.1:9/hook",
        2,
        Duration::from_millis(5),
    )
    .await
    .unwrap();
    assert_eq!(down, 0);
    assert_eq!(store2.unnotified_groups().await.unwrap().len(), 1);
}

#[tokio::test]
async fn builds_follow_their_parent_and_commit_time() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    let mut ids = Vec::new();
    for (label, commit) in [("x1", "c1"), ("x3", "c3"), ("x2", "c2")] {
        let meta = store::RunMeta {
            build: store::BuildMeta {
                label: label.into(),
                commit: Some(commit.into()),
                ..Default::default()
            },
            machine: "m".into(),
            benchmark: "ord".into(),
            ..Default::default()
        };
        let f = store::InputFile::bytes("r.csv", samples(ids.len(), 1.0).into_bytes(), None);
        let run = store.import_run(&meta, &[f], None).await.unwrap().run_ids[0];
        let placement = store::Placement {
            branch: "dev".into(),
            parent: (label == "x2").then(|| "c1".to_string()),
            commit_time: None,
        };
        quiescent::history::after_import(&store, &[run], &placement)
            .await
            .unwrap();
        ids.push(run);
    }
    let order: Vec<String> = store
        .branch_builds("dev", 10)
        .await
        .unwrap()
        .into_iter()
        .rev()
        .map(|b| b.label)
        .collect();
    assert_eq!(order, ["x1", "x2", "x3"]);
    // git's order wins over arrival order.
    let n = store
        .import_commit_order("dev", &["c3".into(), "c2".into(), "c1".into()])
        .await
        .unwrap();
    assert_eq!(n, 3);
    let order: Vec<String> = store
        .branch_builds("dev", 10)
        .await
        .unwrap()
        .into_iter()
        .rev()
        .map(|b| b.label)
        .collect();
    assert_eq!(order, ["x3", "x2", "x1"]);

    // Commit times: a build goes before the first one committed later.
    for (label, t) in [("t1", 100), ("t3", 300), ("t2", 200)] {
        import_timed(&store, "ord", label, t, t as usize, 1.0).await;
    }
    let order: Vec<String> = store
        .branch_builds("timed", 10)
        .await
        .unwrap()
        .into_iter()
        .rev()
        .map(|b| b.label)
        .collect();
    assert_eq!(order, ["t1", "t2", "t3"]);
}

fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env_remove("QUIESCENT_DB").env("QUIESCENT_LOG", "error");
    c
}

fn ok(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cli_ingest_raises_alerts_and_history_alerts_triage_show_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db").display().to_string();
    let mut raised = Vec::new();
    for (b, level) in step_levels().iter().enumerate() {
        let f = dir.path().join(format!("b{b}.csv"));
        std::fs::write(&f, samples(b, *level)).unwrap();
        let label = format!("b{b:02}");
        let out = ok(&[
            "ingest",
            f.to_str().unwrap(),
            "--db",
            &db,
            "--build",
            &label,
            "--machine",
            "rig1",
            "--benchmark",
            "hb",
            "--branch",
            "main",
        ]);
        if out.contains("alerts at build") {
            raised.push((b, out));
        }
    }
    assert_eq!(raised.len(), 1, "{raised:?}");
    assert!(raised[0].1.contains("alerts at build b15 (main): 1"));

    let json: serde_json::Value =
        serde_json::from_str(&ok(&["alerts", "--db", &db, "--json"])).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1);
    let id = json[0]["id"].as_i64().unwrap().to_string();

    let table = ok(&[
        "history",
        "--db",
        &db,
        "--benchmark",
        "hb",
        "--metric",
        "time",
    ]);
    assert!(table.contains("b15"));
    assert!(table.contains("<- change +"));
    let h: serde_json::Value = serde_json::from_str(&ok(&[
        "history",
        "--db",
        &db,
        "--benchmark",
        "hb",
        "--metric",
        "time",
        "--machine",
        "rig1",
        "--json",
    ]))
    .unwrap();
    assert_eq!(h[0]["builds"].as_array().unwrap().len(), 30);
    assert_eq!(h[0]["builds"][0]["n"], 5);
    assert_eq!(h[0]["change_points"][0]["build_after"], "b15");

    ok(&[
        "alerts",
        "triage",
        &id,
        "--state",
        "invalid",
        "--note",
        "rig rebooted",
        "--db",
        &db,
    ]);
    let invalid: serde_json::Value = serde_json::from_str(&ok(&[
        "alerts", "--db", &db, "--state", "invalid", "--json",
    ]))
    .unwrap();
    assert_eq!(invalid[0]["who"], "local");
    assert_eq!(invalid[0]["note"], "rig rebooted");
    let bad = bin()
        .args(["alerts", "triage", &id, "--state", "maybe", "--db", &db])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown state \"maybe\""));

    let mail = ok(&["alerts", "email", "1", "--db", &db]);
    assert!(mail.lines().all(|l| l.len() <= 72), "{mail}");

    let missing = bin()
        .args([
            "history",
            "--db",
            &db,
            "--benchmark",
            "hb",
            "--metric",
            "nope",
        ])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no history of benchmark \"hb\""));
}

/// A multipart upload body: metadata fields and one CSV file.
fn multipart(fields: &[(&str, &str)], csv: &str) -> (String, Vec<u8>) {
    let boundary = "quiescent-history-test";
    let mut body = String::new();
    for (k, v) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
        ));
    }
    body.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"run.csv\"\r\nContent-Type: text/csv\r\n\r\n{csv}\r\n--{boundary}--\r\n"
    ));
    (
        format!("multipart/form-data; boundary={boundary}"),
        body.into_bytes(),
    )
}

/// `POST /api/v1/runs` of [`multipart`]'s body with `token`.
async fn upload(
    app: &common::TestApp,
    token: &str,
    fields: &[(&str, &str)],
    csv: &str,
) -> common::Resp {
    let (ct, body) = multipart(fields, csv);
    app.request(
        Request::post("/api/v1/runs")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", ct)
            .body(Body::from(body))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn uploads_on_a_branch_raise_alerts_and_the_server_posts_them_to_its_webhook() {
    let seen: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let s2 = seen.clone();
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<serde_json::Value>| {
            let seen = s2.clone();
            async move {
                seen.lock().unwrap().push(v);
                StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let app = common::app_with(quiescent::config::ServeArgs {
        webhook: Some(format!("http://{addr}/hook")),
        ..Default::default()
    })
    .await;
    let token =
        quiescent::tokens::create(&store::Store::from_sqlite_pool(app.pool.clone()), "rig-b")
            .await
            .unwrap();
    for (b, level) in step_levels().iter().enumerate() {
        let label = format!("u{b:02}");
        let r = upload(
            &app,
            &token,
            &[
                ("build", &label),
                ("machine", "rig2"),
                ("benchmark", "up"),
                ("branch", "next"),
            ],
            &samples(b, *level),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    }
    // Detection runs after the answers, in the background.
    app.settled().await;
    let alerts = app.get("/api/v1/alerts?branch=next").await.json();
    assert_eq!(alerts.as_array().unwrap().len(), 1, "{alerts}");
    assert_eq!(alerts[0]["build_after"], "u15");
    assert_eq!(
        app.get("/api/v1/alerts?branch=main")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // The post happens in the background: wait for it.
    for _ in 0..100 {
        if !seen.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = seen.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["branch"], "next");
    assert_eq!(got[0]["build"], "u15");

    // A bad commit time is refused before anything is stored.
    let r = upload(
        &app,
        &token,
        &[
            ("build", "u99"),
            ("machine", "rig2"),
            ("benchmark", "up"),
            ("commit_time", "yesterday"),
        ],
        &samples(99, 10.0),
    )
    .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.text().contains("commit_time"), "{}", r.text());
}

/// A build's later uploads skip its placement on a branch it is on (the server remembers it),
/// but not on another branch.
#[tokio::test]
async fn later_uploads_of_a_build_place_it_on_each_new_branch_once() {
    let app = common::app().await;
    let st = store::Store::from_sqlite_pool(app.pool.clone());
    let token = quiescent::tokens::create(&st, "rig-p").await.unwrap();
    for (n, (machine, branch)) in [
        ("m1", "main"),
        ("m2", "main"),
        ("m3", "next"),
        ("m4", "next"),
    ]
    .into_iter()
    .enumerate()
    {
        let r = upload(
            &app,
            &token,
            &[
                ("build", "p1"),
                ("machine", machine),
                ("benchmark", "up"),
                ("branch", branch),
            ],
            &samples(n, 10.0),
        )
        .await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
    }
    for branch in ["main", "next"] {
        let builds = st.branch_builds(branch, 10).await.unwrap();
        assert_eq!(builds.len(), 1, "{branch}: {builds:?}");
    }
    app.settled().await;
}

#[test]
fn commits_import_orders_builds_by_first_parent_history() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("linux");
    std::fs::create_dir(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    git(&["init", "-q"]);
    let mut shas = Vec::new();
    for i in 0..3 {
        git(&["commit", "-q", "--allow-empty", "-m", &format!("c{i}")]);
        shas.push(git(&["rev-parse", "HEAD"]));
    }
    let db = dir.path().join("c.db").display().to_string();
    // Stored newest first: arrival order is the reverse of git's.
    for (i, sha) in shas.iter().enumerate().rev() {
        let f = dir.path().join(format!("r{i}.csv"));
        std::fs::write(&f, samples(i, 10.0)).unwrap();
        ok(&[
            "ingest",
            f.to_str().unwrap(),
            "--db",
            &db,
            "--build",
            &format!("k{i}"),
            "--commit",
            sha,
            "--machine",
            "m",
            "--benchmark",
            "gitorder",
        ]);
    }
    let before: serde_json::Value = serde_json::from_str(&ok(&[
        "history",
        "--db",
        &db,
        "--benchmark",
        "gitorder",
        "--metric",
        "time",
        "--json",
    ]))
    .unwrap();
    let order = |v: &serde_json::Value| -> Vec<String> {
        v[0]["builds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["build"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(order(&before), ["k2", "k1", "k0"]);
    let out = ok(&[
        "commits",
        "import",
        "--repo",
        repo.to_str().unwrap(),
        "--db",
        &db,
    ]);
    assert!(
        out.contains("3 commits read; 3 builds of branch main are in git order"),
        "{out}"
    );
    let after: serde_json::Value = serde_json::from_str(&ok(&[
        "history",
        "--db",
        &db,
        "--benchmark",
        "gitorder",
        "--metric",
        "time",
        "--json",
    ]))
    .unwrap();
    assert_eq!(order(&after), ["k0", "k1", "k2"]);

    let bad = bin()
        .args([
            "commits",
            "import",
            "--repo",
            dir.path().join("nope").to_str().unwrap(),
            "--db",
            &db,
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("git log --first-parent HEAD in"));
}
