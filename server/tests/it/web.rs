//! The dashboard and its JSON API, driven through the router.

use axum::http::StatusCode;

use crate::common::{self, S, TestApp, between, secs};

const BASE_IDLE: [f64; 6] = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00];
const HEAD_IDLE: [f64; 6] = [1.10, 1.11, 1.09, 1.12, 1.08, 1.10];
const BASE_ONE: [f64; 6] = [2.00, 2.02, 1.98, 2.01, 1.99, 2.00];
const HEAD_ONE: [f64; 6] = [2.01, 1.99, 2.00, 2.02, 1.98, 2.00];
const BASE_ALL: [f64; 6] = [3.00, 3.03, 2.97, 3.01, 2.99, 3.00];
const HEAD_ALL: [f64; 6] = [2.40, 2.42, 2.38, 2.41, 2.39, 2.40];

/// Two builds of one rig: a sweep over `load` (idle regresses by 10%, one-cpu is unchanged,
/// all-cpus improves by 20%), each side in two runs of three samples, plus a pre-computed
/// median (a summary, not samples).
async fn scenario(t: &TestApp) {
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

const CMP: &str = "/compare?base=v1.0&head=v1.1";

#[tokio::test]
async fn home_lists_builds_machines_benchmarks_and_runs() {
    let t = common::app().await;
    scenario(&t).await;
    let html = t.page("/").await;
    assert!(
        html.contains("2 builds, 1 machines, 2 benchmarks, 14 runs, 38 samples."),
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
    let recent = between(&html, "<h2>Recent runs</h2>", "</table>");
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

/// The numbers of the results table (its body), for comparing two renderings.
fn results_table(html: &str) -> String {
    between(
        html,
        r#"<table class="data results" id="results">"#,
        "</table>",
    )
    .to_string()
}

#[tokio::test]
async fn comparison_page_shows_verdicts_numbers_charts_and_exports() {
    let t = common::app().await;
    scenario(&t).await;
    let html = t.page(CMP).await;
    // Summary counts.
    assert!(
        html.contains(r#"<span class="count v-regression"><b>1</b> regressions</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<span class="count v-improvement"><b>1</b> improvements</span>"#));
    assert!(
        html.contains(r#"<span class="count v-no_significant_change"><b>1</b> unchanged</span>"#)
    );
    assert!(
        html.contains(r#"<span class="count v-not_enough_data"><b>1</b> not enough data</span>"#)
    );
    assert!(html.contains("<b>4</b> series"));
    // Environment: config and command line differ; the command line is environmental.
    assert!(html.contains("env-warning"));
    assert!(html.contains(r#"<td class="mono">CONFIG_HZ</td><td class="mono pre">100</td><td class="mono pre">1000</td>"#));
    assert!(
        html.contains(
            r#"<td class="mono pre">quiet</td><td class="mono pre">quiet nohz_full=1</td>"#
        )
    );
    // The table: regression first, with pooled n, humanised medians and the change.
    let table = results_table(&html);
    let reg = table.find(r#"data-verdict="regression""#).unwrap();
    let imp = table.find(r#"data-verdict="improvement""#).unwrap();
    let same = table
        .find(r#"data-verdict="no_significant_change""#)
        .unwrap();
    let summ = table.find(r#"data-verdict="not_enough_data""#).unwrap();
    assert!(reg < imp && imp < same && same < summ);
    let reg_row = between(&table[reg..], ">", "</tr>");
    assert!(reg_row.contains("load=idle"));
    assert!(reg_row.contains(r#"<td class="num">6 / 6</td>"#));
    assert!(reg_row.contains(r#"<td class="num">1 s</td>"#));
    assert!(reg_row.contains(r#"<td class="num">1.1 s</td>"#));
    assert!(reg_row.contains("<b>+10.00%</b>"));
    let imp_row = between(&table[imp..], ">", "</tr>");
    assert!(imp_row.contains("load=all-cpus") && imp_row.contains("<b>-20.00%</b>"));
    assert!(
        imp_row.contains(r#"<td class="num">3 s</td>"#)
            && imp_row.contains(r#"<td class="num">2.4 s</td>"#)
    );
    let same_row = between(&table[same..], ">", "</tr>");
    assert!(same_row.contains("<b>+0.00%</b>"));
    let summ_row = between(&table[summ..], ">", "</tr>");
    assert!(summ_row.contains("gp_duration (median)"));
    assert!(summ_row.contains("summary values, no test possible"));
    assert!(
        summ_row.contains(r#"<td class="num">5 ms</td>"#) && summ_row.contains("<b>-20.00%</b>")
    );
    // p and q shown are the report's.
    let json = t.get("/compare.json?base=v1.0&head=v1.1").await.json();
    let row0 = &json["comparisons"][0];
    assert_eq!(row0["verdict"], "regression");
    assert_eq!(row0["params"]["load"], "idle");
    let q = row0["q"].as_f64().unwrap();
    assert!(q < 0.05);
    assert!(reg_row.contains(&quiescent_prob(q)), "{reg_row}");
    // Charts for the three tested series, none for the summary; their numbers below.
    assert_eq!(html.matches(r#"<svg class="chart strip""#).count(), 3);
    assert_eq!(html.matches(r#"<svg class="chart ecdf""#).count(), 3);
    // One dot per sample: 6 per side and series.
    let dots = |side: &str| -> usize {
        html.split(&format!(r#"<path class="dots {side}" d=""#))
            .skip(1)
            .map(|p| between(p, "", "\"").matches("h0").count())
            .sum()
    };
    assert_eq!((dots("base"), dots("head")), (18, 18));
    assert!(html.contains(r#"<article class="detail" id="s-0">"#));
    assert!(html.contains(
        "<tr><th>median</th><td class=\"num\">1 s</td><td class=\"num\">1.1 s</td></tr>"
    ));
    assert!(html.contains(
        "<tr><th>min</th><td class=\"num\">980 ms</td><td class=\"num\">1.08 s</td></tr>"
    ));
    // Sweep matrix: rows are the load values in natural order.
    let sweep = between(&html, "<h2>Parameter sweeps</h2>", "</section>");
    let a = sweep.find(">all-cpus</th>").unwrap();
    let i = sweep.find(">idle</th>").unwrap();
    let o = sweep.find(">one-cpu</th>").unwrap();
    assert!(a < i && i < o, "{sweep}");
    assert!(sweep.contains(r##"<td class="cell v-regression s2" title="1 s → 1.1 s (regression)"><a href="#row-0">+10.00%</a></td>"##), "{sweep}");
    // Exports: email text inline; CSV and JSON routes.
    assert!(html.contains(r#"<pre id="email-text" class="email">base: v1.0 (1111111aaaa)"#));
    let csv = t.get("/compare.csv?base=v1.0&head=v1.1").await;
    assert_eq!(csv.status, StatusCode::OK);
    assert!(csv.header("content-type").starts_with("text/csv"));
    let csv = csv.text();
    assert_eq!(csv.lines().count(), 5);
    assert!(
        csv.lines().nth(1).unwrap().starts_with(
            r#""ftrace-switch","load=idle","real","all","","","s",lower_is_better,6,1,"#
        ),
        "{csv}"
    );
    assert_eq!(json["summary"]["total"], 4);
    assert_eq!(json["base"]["run_ids"].as_array().unwrap().len(), 7);
    // The API answers the same JSON.
    assert_eq!(
        t.get("/api/v1/compare?base=v1.0&head=v1.1").await.json(),
        json
    );
}

/// The page's p/q format.
fn quiescent_prob(v: f64) -> String {
    quiescent::web::view::prob(Some(v))
}

#[tokio::test]
async fn filters_work_as_get_parameters() {
    let t = common::app().await;
    scenario(&t).await;
    let shown = |html: &str| -> Vec<String> {
        let table = results_table(html);
        table
            .split("<tr id=")
            .skip(1)
            .filter(|r| !between(r, "", ">").contains(" hidden"))
            .map(|r| between(r, "data-verdict=\"", "\"").to_string())
            .collect()
    };
    let all = t.page(CMP).await;
    assert_eq!(
        shown(&all),
        [
            "regression",
            "improvement",
            "no_significant_change",
            "not_enough_data"
        ]
    );
    let regs = t.page(&format!("{CMP}&only=regressions")).await;
    assert_eq!(shown(&regs), ["regression"]);
    assert!(regs.contains(r#"<option value="regressions" selected>regressions only</option>"#));
    assert!(regs.contains("1 of 4 series shown"));
    // Charts follow the filter.
    assert_eq!(regs.matches(r#"<svg class="chart strip""#).count(), 1);
    let changes = t.page(&format!("{CMP}&only=changes")).await;
    assert_eq!(shown(&changes), ["regression", "improvement"]);
    let hide = t.page(&format!("{CMP}&hide_ns=1")).await;
    assert_eq!(
        shown(&hide),
        ["regression", "improvement", "not_enough_data"]
    );
    assert!(hide.contains(r#"id="f-hide-ns" checked"#));
    let search = t.page(&format!("{CMP}&q=all-cpus")).await;
    assert_eq!(shown(&search), ["improvement"]);
    let search = t.page(&format!("{CMP}&q=GP_DURATION")).await;
    assert_eq!(shown(&search), ["not_enough_data"]);
    let none = t.page(&format!("{CMP}&q=nothing-matches")).await;
    assert!(shown(&none).is_empty());
    assert!(none.contains(r#"<p class="hint" id="no-rows">No series pass the filters.</p>"#));
    // The metric glob selects series before the statistics (q-values over fewer tests).
    let metric = t.page(&format!("{CMP}&metric=gp_*")).await;
    assert!(metric.contains("<b>1</b> series"));
    // Benchmark filter.
    let bench = t.page(&format!("{CMP}&benchmark=rcuperf")).await;
    assert_eq!(shown(&bench), ["not_enough_data"]);
    assert!(bench.contains(r#"<option value="rcuperf" selected>rcuperf</option>"#));
}

#[tokio::test]
async fn bad_comparison_queries_answer_400_and_404_with_reasons() {
    let t = common::app().await;
    scenario(&t).await;
    for (uri, reason) in [
        ("/compare?base=v1.0", "missing head"),
        ("/compare?head=v1.0", "missing base"),
        (
            "/compare?base=v1.0&head=v1.1&alpha=abc",
            "alpha must be a number between 0 and 1",
        ),
        (
            "/compare?base=v1.0&head=v1.1&threshold=x",
            "threshold must be a percentage",
        ),
        ("/compare?base=v1.0&head=v1.1&only=maybe", "only must be"),
        ("/compare.csv?base=v1.0", "missing head"),
    ] {
        let r = t.get(uri).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(r.text().contains(reason), "{uri}: {}", r.text());
    }
    let r = t.get("/compare?base=v1.0&head=v1.2").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    let html = r.text();
    assert!(
        html.contains(r#"<a href="/builds/v1.1">v1.1</a>"#),
        "{html}"
    );
    // The API answers JSON.
    let r = t.get("/api/v1/compare?base=v1.0&head=v1.1&alpha=abc").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.json()["error"], "bad request");
    assert!(
        r.json()["detail"]
            .as_str()
            .unwrap()
            .contains("alpha must be")
    );
    let r = t.get("/api/v1/compare?base=nope&head=v1.1").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.json()["error"], "not found");
}

#[tokio::test]
async fn user_supplied_text_is_escaped() {
    let t = common::app().await;
    scenario(&t).await;
    let xss = "<script>alert(1)</script>";
    let bad_metric = "<img src=x onerror=alert(2)>";
    common::build(
        &t.pool,
        xss,
        Some("<b>c</b>"),
        Some("CONFIG_X=\"<script>alert(3)</script>\""),
        None,
    )
    .await;
    common::run(
        &t.pool,
        xss,
        "\"><svg onload=alert(4)>",
        "ftrace-switch",
        &[("load", "idle\"><script>alert(5)</script>")],
        &[secs(bad_metric, &[1.0, 2.0, 3.0])],
    )
    .await;
    common::run(
        &t.pool,
        "v1.0",
        "rig-a",
        "ftrace-switch",
        &[("load", "idle\"><script>alert(5)</script>")],
        &[secs(bad_metric, &[1.0, 2.0, 3.0])],
    )
    .await;
    let enc = quiescent::web::view::path_escape(xss);
    for uri in [
        "/".to_string(),
        format!("/builds/{enc}"),
        "/machines/%22%3E%3Csvg%20onload%3Dalert(4)%3E".to_string(),
        "/runs/15".to_string(),
        format!("/compare?base={enc}&head=v1.0"),
        format!("/compare?base={enc}&head=v1.0&q={enc}"),
    ] {
        let html = t.page(&uri).await;
        for raw in ["<script>alert", "<img src=x", "<svg onload", "<b>c</b>"] {
            assert!(!html.contains(raw), "{uri}: {raw} unescaped");
        }
        assert!(html.contains("&#60;"), "{uri}");
    }
    let html = t.page(&format!("/compare?base={enc}&head=v1.0")).await;
    assert!(html.contains("&#60;script&#62;alert(1)&#60;/script&#62;"));
    assert!(html.contains("&#60;img src=x onerror=alert(2)&#62;"));
    // Unknown labels in errors are text too.
    let r = t.get("/builds/%3Cscript%3Ealert(9)%3C%2Fscript%3E").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(!r.text().contains("<script>alert(9)"));
    let r = t
        .get("/compare?base=%3Cscript%3Ealert(9)%3C%2Fscript%3E&head=v1.0&alpha=%3Cscript%3E")
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(!r.text().contains("<script>"));
}

#[tokio::test]
async fn shared_comparison_keeps_its_numbers_and_says_when_newer_runs_exist() {
    let t = common::app().await;
    scenario(&t).await;
    let live = t.page(CMP).await;
    assert!(live.contains(r#"<form method="post" action="/share" class="share-form">"#));
    let r = t
        .post_form(
            "/share",
            &[
                ("base", "v1.0"),
                ("head", "v1.1"),
                ("only", ""),
                ("alpha", "0.05"),
                ("threshold", "1"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text());
    let loc = r.header("location").to_string();
    let id = loc.strip_prefix("/c/").expect("redirect to /c/ID");
    assert_eq!(id.len(), 10);
    assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));

    let frozen = t.page(&loc).await;
    assert!(frozen.contains(&format!(
        r#"<span class="mono copyable" id="share-id" data-copy-url="/c/{id}">{id}</span>"#
    )));
    assert!(frozen.contains("No newer runs exist"));
    assert_eq!(results_table(&frozen), results_table(&live));
    assert!(frozen.contains(&format!(r#"<a href="/c/{id}/csv">CSV</a>"#)));
    assert!(!frozen.contains(r#"action="/share""#));
    let api = t.get(&format!("/api/v1/c/{id}")).await.json();
    assert_eq!(api["id"], id);
    assert_eq!(api["selection"]["base"], "v1.0");
    assert_eq!(api["report"]["newer_runs"], false);
    let before_json = api["report"].clone();

    // A newer run of the head build changes the live comparison, not the shared one.
    common::run(
        &t.pool,
        "v1.1",
        "rig-a",
        "ftrace-switch",
        &[("load", "idle")],
        &[secs("real", &[1.5, 1.5, 1.5])],
    )
    .await;
    let frozen2 = t.page(&loc).await;
    assert!(frozen2.contains("Newer runs exist"), "{frozen2}");
    assert_eq!(results_table(&frozen2), results_table(&frozen));
    let live2 = t.page(CMP).await;
    assert_ne!(results_table(&live2), results_table(&live));
    assert!(results_table(&live2).contains(r#"<td class="num">6 / 9</td>"#));
    let api2 = t.get(&format!("/api/v1/c/{id}")).await.json();
    assert_eq!(api2["report"]["newer_runs"], true);
    assert_eq!(api2["report"]["comparisons"], before_json["comparisons"]);
    assert_eq!(
        t.get(&format!("/c/{id}/csv")).await.text().lines().count(),
        5
    );

    // Filters of a frozen page are GET parameters on its own address.
    let regs = t.page(&format!("{loc}?only=regressions")).await;
    assert!(regs.contains("1 of 4 series shown"));
    assert_eq!(t.get("/c/doesnotexist").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        t.get("/api/v1/c/doesnotexist").await.status,
        StatusCode::NOT_FOUND
    );
    // Sharing a bad query is a 400.
    assert_eq!(
        t.post_form("/share", &[("base", "v1.0")]).await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn trace_stat_comparison_shows_functions_by_cpu() {
    let t = common::app().await;
    let f = common::fixture("trace_stat/seed004_head_function_star_4cpu_collapsed_ws.txt");
    common::import(
        &t.pool,
        "parent",
        "rig",
        "deferred-qs",
        std::slice::from_ref(&f),
        Some("original"),
    )
    .await;
    common::import(
        &t.pool,
        "patched",
        "rig",
        "deferred-qs",
        &[f],
        Some("apply patch"),
    )
    .await;
    let html = t.page("/compare?base=parent&head=patched").await;
    let prof = between(&html, "<h2>Function profile per CPU</h2>", "</section>");
    assert!(prof.contains(r#"<th class="mono fn">rcu_preempt_deferred_qs_handle</th>"#));
    for cpu in ["cpu0", "cpu1", "cpu2", "cpu3"] {
        assert!(prof.contains(&format!(r#"<th colspan="2" class="mono">{cpu}</th>"#)));
    }
    assert!(prof.contains("838746<br>→ 302373"), "{prof}");
    assert!(prof.contains("217 ns<br>→ 223 ns"));
    // Totals from the file's own `all` rows.
    assert!(prof.contains("3319015<br>→ 1140359"));
    assert!(prof.contains("223.983 ns<br>→"));
    // The per-CPU hits pooled as samples: 4 vs 4 values, a tested row.
    let json = t
        .get("/compare.json?base=parent&head=patched&metric=*.hit")
        .await
        .json();
    let pooled = json["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scope"] == "cpus")
        .expect("pooled per-CPU row");
    assert_eq!(pooled["base"]["n"], 4);
    assert!(prof.contains(&format!("{:+.2}%", pooled["change_pct"].as_f64().unwrap())));
}

#[tokio::test]
async fn latency_comparison_shows_traces_side_by_side() {
    let t = common::app().await;
    common::import(
        &t.pool,
        "before",
        "box",
        "irqsoff",
        &[common::fixture("latency/doc54_irqsoff_3.8.0_16us.txt")],
        None,
    )
    .await;
    common::import(
        &t.pool,
        "after",
        "box",
        "irqsoff",
        &[common::fixture("latency/doc54_irqsoff_3.8.0_259us.txt")],
        None,
    )
    .await;
    let html = t.page("/compare?base=before&head=after").await;
    let lat = between(&html, "<h2>Latency traces</h2>", "</section>");
    assert!(lat.contains(r#"<tr><th>latency</th><td class="mono"><b>16 us</b></td><td class="mono"><b>259 us</b></td></tr>"#), "{lat}");
    assert!(lat.contains(r#"<tr><th class="mono">started_at</th><td class="mono">run_timer_softirq</td><td class="mono">__lock_task_sighand</td></tr>"#));
    assert!(lat.contains(r#"<tr><th class="mono">ended_at</th><td class="mono">run_timer_softirq</td><td class="mono">_raw_spin_unlock_irqrestore</td></tr>"#));
    assert!(lat.contains(r#"<tr><th class="mono">task</th><td class="mono">swapper/0</td><td class="mono">ps</td></tr>"#));
    assert!(lat.contains(r#"<td class="mono">trace_hardirqs_off</td>"#));
    assert!(lat.contains("<li>system_call_fastpath</li>"));
    // One trace per side is not enough data for a test.
    assert!(html.contains(r#"<span class="count v-not_enough_data"><b>"#));
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
