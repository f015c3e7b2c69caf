//! The dashboard and its JSON API, driven through the router.

use axum::http::StatusCode;

use crate::common::{self, S, TestApp, between, secs};
use crate::web_compare::results_table;

pub(crate) const BASE_IDLE: [f64; 6] = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00];
pub(crate) const HEAD_IDLE: [f64; 6] = [1.10, 1.11, 1.09, 1.12, 1.08, 1.10];
pub(crate) const BASE_ONE: [f64; 6] = [2.00, 2.02, 1.98, 2.01, 1.99, 2.00];
pub(crate) const HEAD_ONE: [f64; 6] = [2.01, 1.99, 2.00, 2.02, 1.98, 2.00];
pub(crate) const BASE_ALL: [f64; 6] = [3.00, 3.03, 2.97, 3.01, 2.99, 3.00];
pub(crate) const HEAD_ALL: [f64; 6] = [2.40, 2.42, 2.38, 2.41, 2.39, 2.40];

/// Two builds of one rig: a sweep over `load` (idle regresses by 10%, one-cpu is unchanged,
/// all-cpus improves by 20%), each side in two runs of three samples, plus a pre-computed
/// median (a summary, not samples).
pub(crate) async fn scenario(t: &TestApp) {
    let p = &t.pool;
    common::build(
        p,
        "v1.0",
        Some("1111111aaaa"),
        Some("CONFIG_HZ=100\nCONFIG_PREEMPT=y\n"),
        Some("quiet"),
    )
    .await;
    common::build(
        p,
        "v1.1",
        Some("2222222bbbb"),
        Some("CONFIG_HZ=1000\nCONFIG_PREEMPT=y\n"),
        Some("quiet nohz_full=1"),
    )
    .await;
    common::machine(p, "rig-a", &[("cpus", "4"), ("cpu_model", "Core2 Duo")]).await;
    for (label, sets) in [
        ("v1.0", [BASE_IDLE, BASE_ONE, BASE_ALL]),
        ("v1.1", [HEAD_IDLE, HEAD_ONE, HEAD_ALL]),
    ] {
        for (load, values) in ["idle", "one-cpu", "all-cpus"].iter().zip(sets) {
            for half in values.chunks(3) {
                common::run(
                    p,
                    label,
                    "rig-a",
                    "ftrace-switch",
                    &[("load", load)],
                    &[secs("real", half)],
                )
                .await;
            }
        }
    }
    for (label, v) in [("v1.0", 0.005), ("v1.1", 0.004)] {
        common::run(
            p,
            label,
            "rig-a",
            "rcuperf",
            &[],
            &[S {
                statistic: Some("median"),
                ..secs("gp_duration", &[v])
            }],
        )
        .await;
    }
}

pub(crate) const CMP: &str = "/compare?base=v1.0&head=v1.1";

#[tokio::test]
async fn home_lists_builds_machines_benchmarks_and_runs() {
    let t = common::app().await;
    scenario(&t).await;
    let html = t.page("/").await;
    assert!(
        html.contains("2 builds, 1 machine, 2 benchmarks, 14 runs, 38 samples."),
        "{html}"
    );
    assert!(html.contains(r#"<a href="/builds/v1.0">v1.0</a>"#));
    assert!(html.contains("1111111aaaa"));
    assert!(html.contains(r#"<a href="/machines/rig-a">rig-a</a>"#));
    assert!(html.contains("cpu_model=Core2 Duo, cpus=4"));
    assert!(html.contains("<td>ftrace-switch</td><td class=\"num\">12</td>"));
    // The form proposes the two newest builds (same time: the higher id is newer).
    assert!(
        html.contains(r#"<option value="v1.0" selected>v1.0</option>"#),
        "{html}"
    );
    assert!(html.contains(r#"<option value="v1.1" selected>v1.1</option>"#));
    assert!(html.contains(r#"<form class="compare-form" method="get" action="/compare">"#));
    // Recent runs, newest first.
    let recent = between(&html, "<h2 id=\"runs\">Recent runs</h2>", "</table>");
    assert!(recent.find("/runs/14").unwrap() < recent.find("/runs/13").unwrap());
    assert!(recent.contains("load=idle"));
}

#[tokio::test]
async fn empty_database_pages_work() {
    let t = common::app().await;
    let html = t.page("/").await;
    assert!(html.contains("0 builds, 0 machines, 0 benchmarks, 0 runs, 0 samples."));
    assert!(html.contains("Store runs of at least two builds"));
    let form = t.page("/compare").await;
    assert!(form.contains("<h1>Compare two builds</h1>"));
    assert_eq!(t.get("/api/v1/builds").await.json(), serde_json::json!([]));
}

#[tokio::test]
async fn build_page_shows_metadata_config_and_runs() {
    let t = common::app().await;
    scenario(&t).await;
    let html = t.page("/builds/v1.1").await;
    assert!(html.contains("2222222bbbb"));
    assert!(html.contains("quiet nohz_full=1"));
    assert!(html.contains(r#"<pre class="config copyable">CONFIG_HZ=1000"#));
    assert!(html.contains("<td>ftrace-switch</td><td class=\"num\">6</td>"));
    assert!(html.contains("<td>rcuperf</td><td class=\"num\">1</td>"));
    assert!(html.contains(r#"<a href="/runs/14">14</a>"#));
    assert!(
        !html.contains(r#"<a href="/runs/1">1</a>"#),
        "v1.0's runs listed"
    );

    // Unknown label: 404 with the close labels as links.
    let r = t.get("/builds/v1.2").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let html = r.text();
    assert!(
        html.contains("no build named &#34;v1.2&#34;")
            || html.contains("no build named &quot;v1.2&quot;"),
        "{html}"
    );
    assert!(html.contains(r#"<a href="/builds/v1.0">v1.0</a>"#));
    assert!(html.contains(r#"<a href="/builds/v1.1">v1.1</a>"#));
    let r = t.get("/builds/zzzzzzzzzzzz").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.text().contains("No build has a similar name"));
}

#[tokio::test]
async fn machine_page_shows_facts_and_runs() {
    let t = common::app().await;
    scenario(&t).await;
    let html = t.page("/machines/rig-a").await;
    assert!(html.contains("<dt>cpu_model</dt><dd class=\"mono\">Core2 Duo</dd>"));
    assert!(html.contains("<dt>runs</dt><dd class=\"mono\">14</dd>"));
    assert!(html.contains("ftrace-switch, rcuperf"));
    let r = t.get("/machines/rig-b").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.text().contains(r#"<a href="/machines/rig-a">rig-a</a>"#));
}

#[tokio::test]
async fn run_page_shows_the_parsed_latency_trace() {
    let t = common::app().await;
    let file = common::fixture("latency/doc54_irqsoff_3.8.0_259us.txt");
    let ids = common::import(&t.pool, "v3.8", "box", "irqsoff", &[file], None).await;
    let html = t.page(&format!("/runs/{}", ids[0])).await;
    // Metadata and series with humanised units.
    assert!(html.contains("<h1>Run 1: irqsoff</h1>"));
    assert!(html.contains(r#"<td class="mono">latency</td>"#));
    assert!(html.contains(r#"<td class="num">259 us</td>"#), "{html}");
    // What the parser read: header fields, the entries table and the stack.
    assert!(html.contains("<dt>tracer</dt><dd class=\"mono\">irqsoff</dd>"));
    assert!(html.contains("<dt>started_at</dt><dd class=\"mono\">__lock_task_sighand</dd>"));
    assert!(html.contains("<dt>ended_at</dt><dd class=\"mono\">_raw_spin_unlock_irqrestore</dd>"));
    assert!(
        html.contains("<summary>entries (4 rows)</summary>"),
        "{html}"
    );
    assert!(html.contains(r#"<td class="mono">trace_hardirqs_off</td>"#));
    assert!(html.contains("<summary>stack (10 items)</summary>"));
    assert!(html.contains("<li>system_call_fastpath</li>"));
    assert!(html.contains(r#"href="/runs/1/artifacts/0""#));

    assert_eq!(t.get("/runs/abc").await.status, StatusCode::BAD_REQUEST);
    assert!(
        t.get("/runs/abc")
            .await
            .text()
            .contains("run id must be a whole number")
    );
    assert_eq!(t.get("/runs/999").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn artifact_download_is_byte_identical() {
    let t = common::app().await;
    let file = common::fixture("latency/doc54_irqsoff_3.8.0_16us.txt");
    let want = std::fs::read(&file).unwrap();
    let ids = common::import(&t.pool, "v3.8", "box", "irqsoff", &[file], None).await;
    let r = t.get(&format!("/runs/{}/artifacts/0", ids[0])).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.body, want);
    assert_eq!(
        r.header("content-disposition"),
        "attachment; filename=\"doc54_irqsoff_3.8.0_16us.txt\"; filename*=UTF-8''doc54_irqsoff_3.8.0_16us.txt"
    );
    assert_eq!(r.header("content-type"), "application/octet-stream");
    assert_eq!(r.header("content-length"), want.len().to_string());
    assert_eq!(
        t.get("/runs/1/artifacts/7").await.status,
        StatusCode::NOT_FOUND
    );
    // Compressed on the wire when the client asks, identical once decoded (the body stream
    // is polled again after its end by the compression layer).
    let r = t
        .request(
            axum::http::Request::get(format!("/runs/{}/artifacts/0", ids[0]))
                .header("accept-encoding", "gzip")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.header("content-encoding"), "gzip");
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&r.body[..]), &mut decoded)
        .unwrap();
    assert_eq!(decoded, want);

    // A binary file over three chunks, stored under a hostile name.
    let chunks: Vec<Vec<u8>> = vec![
        (0..1 << 20).map(|i| (i % 251) as u8).collect(),
        (0..1 << 20).map(|i| (i % 253) as u8 ^ 0xff).collect(),
        vec![0, 159, 146, 150, 13, 10, 0],
    ];
    let all: Vec<u8> = chunks.concat();
    let aid: i64 =
        sqlx::query_scalar("INSERT INTO artifacts (sha256, size) VALUES ('x', ?) RETURNING id")
            .bind(all.len() as i64)
            .fetch_one(&t.pool)
            .await
            .unwrap();
    for (seq, c) in chunks.iter().enumerate() {
        sqlx::query("INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES (?, ?, ?)")
            .bind(aid)
            .bind(seq as i64)
            .bind(c)
            .execute(&t.pool)
            .await
            .unwrap();
    }
    sqlx::query("INSERT INTO run_artifacts (run_id, artifact_id, seq, file_name, format) VALUES (?, ?, 1, ?, 'samples')")
        .bind(ids[0])
        .bind(aid)
        .bind("../../etc/pass wd\"\r\nx.bin")
        .execute(&t.pool)
        .await
        .unwrap();
    let r = t.get(&format!("/runs/{}/artifacts/1", ids[0])).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.body == all, "binary artifact differs");
    assert_eq!(
        r.header("content-disposition"),
        "attachment; filename=\"pass_wd___x.bin\"; filename*=UTF-8''pass_wd___x.bin"
    );
}

#[tokio::test]
async fn api_answers_json_for_every_page() {
    let t = common::app().await;
    scenario(&t).await;
    let builds = t.get("/api/v1/builds").await.json();
    assert_eq!(builds.as_array().unwrap().len(), 2);
    assert_eq!(builds[0]["label"], "v1.1");
    assert_eq!(builds[0]["runs"], 7);
    let b = t.get("/api/v1/builds/v1.0").await.json();
    assert_eq!(b["commit"], "1111111aaaa");
    assert_eq!(b["config"], "CONFIG_HZ=100\nCONFIG_PREEMPT=y\n");
    assert_eq!(b["run_count"], 7);
    assert_eq!(b["runs"].as_array().unwrap().len(), 7);
    let r = t.get("/api/v1/builds/v1.2").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(
        r.json()["did_you_mean"],
        serde_json::json!(["v1.0", "v1.1"])
    );
    let m = t.get("/api/v1/machines").await.json();
    assert_eq!(m[0]["name"], "rig-a");
    assert_eq!(m[0]["facts"]["cpus"], "4");
    assert_eq!(t.get("/api/v1/machines/rig-a").await.json()["runs"], 14);
    let benches = t.get("/api/v1/benchmarks").await.json();
    assert_eq!(benches[0]["name"], "ftrace-switch");
    assert_eq!(benches[0]["runs"], 12);
    let runs = t
        .get("/api/v1/runs?build=v1.1&benchmark=ftrace-switch")
        .await
        .json();
    assert_eq!(runs.as_array().unwrap().len(), 6);
    assert!(
        runs.as_array()
            .unwrap()
            .iter()
            .all(|r| r["build"] == "v1.1")
    );
    assert_eq!(runs[0]["samples"], 3);
    assert_eq!(
        t.get("/api/v1/runs?limit=2")
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        t.get("/api/v1/runs?limit=x").await.status,
        StatusCode::BAD_REQUEST
    );
    let run = t.get("/api/v1/runs/1").await.json();
    assert_eq!(run["build"]["label"], "v1.0");
    assert_eq!(run["params"]["load"], "idle");
    assert_eq!(run["series"][0]["metric"], "real");
    assert_eq!(run["series"][0]["median"], 1.0);
    assert_eq!(run["series"][0]["n"], 3);
    let r = t.get("/api/v1/runs/abc").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(
        r.json()["detail"]
            .as_str()
            .unwrap()
            .contains("whole number")
    );
    assert_eq!(t.get("/api/v1/runs/99").await.status, StatusCode::NOT_FOUND);
    let r = t.get("/api/v1/nothing-here").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.json()["error"], "not found");
}

/// Replaces `YYYY-MM-DD HH:MM` times with `[time]`.
fn redact_times(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let shape = b"dddd-dd-dd dd:dd";
    while i < b.len() {
        let m = i + shape.len() <= b.len()
            && shape.iter().zip(&b[i..i + shape.len()]).all(|(p, c)| {
                if *p == b'd' {
                    c.is_ascii_digit()
                } else {
                    p == c
                }
            });
        if m {
            out.push_str("[time]");
            i += shape.len();
        } else {
            let ch = s[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[tokio::test]
async fn snapshot_home_page() {
    let t = common::app().await;
    scenario(&t).await;
    insta::assert_snapshot!("home", redact_times(&t.page("/").await));
}

#[tokio::test]
async fn snapshot_comparison_page() {
    let t = common::app().await;
    scenario(&t).await;
    insta::assert_snapshot!("comparison", redact_times(&t.page(CMP).await));
}

#[tokio::test]
async fn summary_sweep_shows_the_direction_without_a_verdict() {
    let t = common::app().await;
    // Median GP durations per preempt-off duration (seed 001: 12 -> 13 ms and 11 -> 40 ms).
    for (label, values) in [("v4.19", [0.012, 0.011]), ("v5.1", [0.013, 0.040])] {
        for (ms, v) in ["5", "20"].iter().zip(values) {
            common::run(
                &t.pool,
                label,
                "rcuperf-10r10w",
                "rcuperf",
                &[("preempt_off_ms", ms)],
                &[S {
                    statistic: Some("median"),
                    ..secs("gp_duration", &[v])
                }],
            )
            .await;
        }
    }
    let html = t.page("/compare?base=v4.19&head=v5.1").await;
    let sweep = between(&html, "<h2>Parameter sweeps</h2>", "</section>");
    assert!(
        sweep.contains(
            r#"<td class="cell v-not_enough_data s2 lean-worse" title="12 ms → 13 ms (summary values, no test possible)">"#
        ),
        "{sweep}"
    );
    assert!(sweep.contains(">+8.33%</a>") && sweep.contains(">+263.64%</a>"));
    assert!(sweep.contains("lean-worse\" title=\"11 ms → 40 ms"));
    assert!(sweep.contains("Hatched cells have no test"));
    // The verdict says it once; the flags column does not repeat it.
    let table = results_table(&html);
    assert_eq!(table.matches("summary values, no test possible").count(), 2);
    assert!(!table.contains(r#"<span class="flag""#));
}

#[tokio::test]
async fn list_urls_without_a_name_lead_to_their_section_of_the_home_page() {
    let t = common::app().await;
    let home = t.get("/").await.text();
    for section in ["builds", "machines", "benchmarks"] {
        let r = t.get(&format!("/{section}")).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "/{section}");
        assert_eq!(r.header("location"), format!("/#{section}"));
        assert!(
            home.contains(&format!("<h2 id=\"{section}\">")),
            "{section}"
        );
    }
    // Only those: other unknown pages are still 404s.
    assert_eq!(t.get("/build").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_runs_page_lists_every_run_newest_first_and_filters_them() {
    let t = common::app().await;
    scenario(&t).await;
    let all = t.get("/runs").await;
    assert_eq!(all.status, StatusCode::OK);
    let html = all.text();
    let ids: Vec<&str> = html
        .split("<td class=\"num\"><a href=\"/runs/")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert_eq!(ids.len(), 14, "{html}");
    assert_eq!(ids.first(), Some(&"14"), "newest first");
    assert_eq!(ids.last(), Some(&"1"));
    assert!(html.contains("14 runs, newest first"), "{html}");
    assert!(
        t.get("/")
            .await
            .text()
            .contains(r#"<a href="/runs">All runs</a>"#)
    );

    // A filter keeps its value in the form and narrows the list and the JSON link.
    let html = t
        .get("/runs?build=v1.0&machine=&benchmark=rcuperf")
        .await
        .text();
    assert!(
        html.contains(r#"<input name="build" value="v1.0">"#),
        "{html}"
    );
    assert!(html.contains("1 run that matches, newest first"), "{html}");
    assert!(html.contains(r#"<a href="/runs/13">13</a>"#), "{html}");
    assert!(html.contains("/api/v1/runs?build=v1.0&amp;benchmark=rcuperf&amp;limit=100000"));
    let api = t
        .get("/api/v1/runs?build=v1.0&benchmark=rcuperf&limit=100000")
        .await
        .json();
    assert_eq!(api.as_array().map(Vec::len), Some(1));

    // Nothing matching, and a value that must not reach the page as markup.
    let html = t.get("/runs?machine=%3Cscript%3Ex").await.text();
    assert!(html.contains("No runs match."), "{html}");
    assert!(!html.contains("<script>x"), "{html}");

    // A later page: runs older than a run id, with the way back to the newest.
    let html = t.get("/runs?before=5").await.text();
    assert!(
        html.contains("4 older runs, newest first (14 in all)"),
        "{html}"
    );
    assert!(html.contains(r#"<a href="/runs/4">4</a>"#), "{html}");
    assert!(!html.contains(r#"<a href="/runs/5">5</a>"#), "{html}");
    assert!(
        html.contains(r#"<a href="/runs?">newest runs</a>"#),
        "{html}"
    );
    assert!(!html.contains("older runs</a>"), "the last page: {html}");
    let html = t.get("/runs?build=v1.0&before=14").await.text();
    let v10 = t.get("/api/v1/runs?build=v1.0&limit=100000").await.json();
    let v10 = v10.as_array().map_or(0, Vec::len);
    assert!(
        html.contains(&format!("that match, newest first ({v10} in all)")),
        "the count is of the filter's runs: {html}"
    );
    assert!(
        html.contains(r#"<a href="/runs?build=v1.0&amp;">newest runs</a>"#),
        "the filter is kept: {html}"
    );
    // The JSON API pages the same way; a `before` that is no run id is refused.
    let api = t.get("/api/v1/runs?limit=3&before=10").await.json();
    let ids: Vec<i64> = api
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, [9, 8, 7]);
    assert_eq!(
        t.get("/api/v1/runs?before=x").await.status,
        StatusCode::BAD_REQUEST
    );
    let bad = t.get("/runs?before=-3").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.text().contains("before must be a run id"),
        "{}",
        bad.text()
    );
}
