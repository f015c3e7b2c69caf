//! Upgrades lose nothing: a database written by release 0.1 (`store/tests/fixtures/`) opens in
//! this release, is migrated in place, and still gives the comparisons that release printed,
//! resolves its share links, accepts its token and honours its idempotency key.

use std::path::{Path, PathBuf};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::Value;

use crate::common;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../store/tests/fixtures")
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A copy of the release-0.1 database in a fresh directory (the fixture stays untouched).
fn copy_of_fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("old.db");
    std::fs::copy(fixtures().join("release-0.1.db"), &db).unwrap();
    (dir, db)
}

/// What must not change in a comparison: per series, its identity and its statistics.
fn essentials(report: &Value) -> Vec<Value> {
    let rows = report["comparisons"].as_array().expect("comparisons");
    rows.iter()
        .map(|r| {
            serde_json::json!({
                "series": [&r["benchmark"], &r["params"], &r["metric"], &r["scope"], &r["label"], &r["statistic"], &r["unit"], &r["direction"]],
                "base": [&r["base"]["n"], &r["base"]["median"], &r["base"]["mean"], &r["base"]["p99"]],
                "head": [&r["head"]["n"], &r["head"]["median"], &r["head"]["mean"], &r["head"]["p99"]],
                "change_pct": &r["change_pct"],
                "p": &r["p"],
                "q": &r["q"],
                "verdict": &r["verdict"],
            })
        })
        .collect()
}

fn assert_same_report(what: &str, got: &Value, want: &Value) {
    assert_eq!(
        got["base"]["run_ids"], want["base"]["run_ids"],
        "{what}: base runs"
    );
    assert_eq!(
        got["head"]["run_ids"], want["head"]["run_ids"],
        "{what}: head runs"
    );
    let (g, w) = (essentials(got), essentials(want));
    assert!(!w.is_empty(), "{what}: the recorded report has no rows");
    assert_eq!(g.len(), w.len(), "{what}: number of series");
    for (g, w) in g.iter().zip(&w) {
        assert_eq!(g, w, "{what}");
    }
}

#[test]
fn the_comparisons_of_release_0_1_are_unchanged() {
    let (_dir, db) = copy_of_fixture();
    let manifest = read_json(&fixtures().join("release-0.1/fixture.json"));
    let compares = manifest["compares"].as_array().unwrap();
    assert!(compares.len() >= 10, "the fixture covers the demo's pairs");
    for c in compares {
        let bench = c["benchmark"].as_str().unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"))
            .env_remove("QUIESCENT_DB")
            .env("QUIESCENT_LOG", "error")
            .args(["compare", "--json", "--db"])
            .arg(&db)
            .args(["--benchmark", bench])
            .arg(c["base"].as_str().unwrap())
            .arg(c["head"].as_str().unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{bench}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        let want = read_json(
            &fixtures()
                .join("release-0.1")
                .join(c["json"].as_str().unwrap()),
        );
        assert_same_report(bench, &got, &want);
    }
}

#[tokio::test]
async fn shares_tokens_and_idempotency_keys_survive_the_upgrade() {
    let (dir, db) = copy_of_fixture();
    let app = common::app_on(dir, &db).await;
    let manifest = read_json(&fixtures().join("release-0.1/fixture.json"));

    for s in manifest["shares"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap();
        let r = app.get(&format!("/c/{id}/json")).await;
        assert_eq!(r.status, StatusCode::OK, "/c/{id}/json: {}", r.text());
        let want = read_json(
            &fixtures()
                .join("release-0.1")
                .join(s["json"].as_str().unwrap()),
        );
        assert_same_report(id, &r.json(), &want);
        assert_eq!(app.get(&format!("/c/{id}")).await.status, StatusCode::OK);
    }

    // The same key with other content: the run stored under that key comes back, nothing new
    // is stored (which also proves the old token is accepted).
    let idem = &manifest["idempotency"];
    let secret = manifest["token"]["secret"].as_str().unwrap();
    let upload = |key: &str, content: &str| {
        let boundary = "upgradeboundary";
        let mut body = String::new();
        for (k, v) in [
            ("build", idem["build"].as_str().unwrap()),
            ("machine", idem["machine"].as_str().unwrap()),
            ("benchmark", idem["benchmark"].as_str().unwrap()),
        ] {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
            ));
        }
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.txt\"\r\n\r\n{content}\r\n--{boundary}--\r\n"
        ));
        Request::post("/api/v1/runs")
            .header("authorization", format!("Bearer {secret}"))
            .header("idempotency-key", key)
            .header(
                "content-type",
                format!("multipart/form-data; boundary={boundary}"),
            )
            .body(Body::from(body))
            .unwrap()
    };
    let runs_before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let r = app
        .request(upload(idem["key"].as_str().unwrap(), "7.0\n7.1\n7.2\n"))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let j = r.json();
    assert_eq!(j["created"], false);
    assert_eq!(j["run_id"], idem["run_id"]);
    assert_eq!(j["uploader"], manifest["token"]["name"]);
    let runs_after: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(runs_after, runs_before);

    // A new key with new content is stored: the token still authorises uploads.
    let r = app
        .request(upload("after-upgrade", "7.0\n7.1\n7.2\n"))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text());
}
