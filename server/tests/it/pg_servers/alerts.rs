//! Alerts with two servers on one database: detection over uploads that reached either, and
//! the webhook posting each new alert group once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Server, form, start_servers, time_file, upload};
use crate::history::{import_history, samples};

/// Two servers with one webhook: an alert group waiting to be sent is posted by the first
/// upload after it, whichever server takes it, and only once when uploads reach both servers
/// together. The receiver answers slowly, as a real one may, so that both servers' senders
/// are running when it answers the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_post_each_alert_group_once() {
    let Some(db) = store::testing::fresh_pg_url().await else {
        return;
    };
    let check = store::Store::open(&db).await.unwrap();
    // A step in a 30-build history on main: one alert group, not sent yet.
    let levels: Vec<f64> = (0..30).map(|b| if b < 15 { 10.0 } else { 11.5 }).collect();
    let groups: Vec<i64> = import_history(&check, &levels)
        .await
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(check.unnotified_groups().await.unwrap(), groups);

    let posts: Arc<Mutex<Vec<serde_json::Value>>> = Arc::default();
    let seen = posts.clone();
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |axum::Json(v): axum::Json<serde_json::Value>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push(v);
                tokio::time::sleep(Duration::from_millis(500)).await;
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, receiver).await });

    let tmp = tempfile::tempdir().unwrap();
    let servers = start_servers(&db, tmp.path(), 2, &["--webhook", &hook]);
    let token = quiescent::tokens::create(&check, "rig-1").await.unwrap();
    let client = reqwest::Client::new();
    // One new run through each server at once: each starts its sender.
    let (a, b) = (servers[0].url(""), servers[1].url(""));
    let (x, y) = tokio::join!(
        upload(&client, &a, &token, None, form("x", &[], time_file())),
        upload(&client, &b, &token, None, form("y", &[], time_file())),
    );
    assert_eq!((x.status, y.status), (201, 201), "{} / {}", x.body, y.body);
    let t = Instant::now();
    while !check.unnotified_groups().await.unwrap().is_empty()
        && t.elapsed() < Duration::from_secs(20)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Senders that read the group before it was marked have posted by now.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let got = posts.lock().unwrap().clone();
    assert_eq!(got.len(), 1, "group posted {} times", got.len());
    assert_eq!(got[0]["build"], "b15");
}

/// A step in a 30-build history whose builds were uploaded through two servers in turn (each
/// process keeps its own detector state): one alert, at the step, the same on both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_history_uploaded_through_two_servers_raises_one_alert() {
    let Some(db) = store::testing::fresh_pg_url().await else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let servers = start_servers(&db, tmp.path(), 2, &[]);
    let check = store::Store::open(&db).await.unwrap();
    let token = quiescent::tokens::create(&check, "rig-1").await.unwrap();
    let client = reqwest::Client::new();
    for b in 0..30 {
        let level = if b < 15 { 10.0 } else { 11.5 };
        let form = reqwest::multipart::Form::new()
            .text("build", format!("u{b:02}"))
            .text("machine", "rig2")
            .text("benchmark", "up")
            .text("branch", "next")
            .part(
                "file",
                reqwest::multipart::Part::bytes(samples(b, level).into_bytes())
                    .file_name("run.csv"),
            );
        let a = upload(&client, &servers[b % 2].url(""), &token, None, form).await;
        assert_eq!(a.status, 201, "build {b}: {}", a.body);
    }
    // Detection runs after the answers, in the background: wait until the alerts stop
    // changing (a pass re-analyses the whole history, so the last one has the final word).
    let alerts_of = |s: &Server| {
        let r = client.get(s.url("/api/v1/alerts?branch=next")).send();
        async move {
            let r = r.await.unwrap();
            assert_eq!(r.status(), 200);
            r.json::<serde_json::Value>().await.unwrap()
        }
    };
    let mut last = alerts_of(&servers[0]).await;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = alerts_of(&servers[0]).await;
        if now == last && now.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        last = now;
    }
    let mut seen = Vec::new();
    for s in &servers {
        let alerts = alerts_of(s).await;
        assert_eq!(alerts.as_array().map(Vec::len), Some(1), "{alerts}");
        assert_eq!(alerts[0]["build_after"], "u15");
        seen.push(alerts);
    }
    assert_eq!(seen[0], seen[1]);
}
