//! The comparison pages through the router: verdicts, numbers, charts, exports, filters,
//! refusals, escaping, shared links, and the trace_stat and latency views.

use axum::http::StatusCode;

use crate::common::{self, between, secs};
use crate::web::*;

/// The numbers of the results table (its body), for comparing two renderings.
pub(crate) fn results_table(html: &str) -> String {
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
        html.contains(r#"<span class="count v-regression"><b>1</b> regression</span>"#),
        "{html}"
    );
    assert!(html.contains(r#"<span class="count v-improvement"><b>1</b> improvement</span>"#));
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
    // One value a CPU a side: the table folds the CPUs into one pooled row per field, as
    // the command does; the profile below still shows each CPU's values.
    let table = results_table(&html);
    assert!(
        table.contains("rcu_preempt_deferred_qs_handle.hit [4 cpus]"),
        "{table}"
    );
    assert!(!table.contains("[cpu0]"), "{table}");
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

/// `head trace_stat/function*` of two CPUs and `functions` functions; `scale` moves the times.
fn wide_profile(
    dir: &std::path::Path,
    name: &str,
    functions: usize,
    scale: f64,
) -> std::path::PathBuf {
    let mut text = String::new();
    for cpu in 0..2 {
        text.push_str(&format!(
            "==> /sys/kernel/debug/tracing/trace_stat/function{cpu} <==\n  Function                               Hit    Time            Avg             s^2\n  --------                               ---    ----            ---             ---\n"
        ));
        for f in 0..functions {
            let hit = 1000 + f * 3 + cpu;
            let avg = (1.0 + f as f64 / 100.0) * scale;
            text.push_str(&format!(
                "  kfunc_{f:06}                   {hit}    {:.3} us    {avg:.3} us    0.004 us\n",
                hit as f64 * avg
            ));
        }
        text.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn a_huge_comparison_renders_the_first_rows_that_pass_the_filters() {
    let t = common::app().await;
    let dir = tempfile::tempdir().unwrap();
    for (build, scale) in [("wide-a", 1.0), ("wide-b", 1.2)] {
        let f = wide_profile(dir.path(), &format!("{build}.txt"), 700, scale);
        common::import(&t.pool, build, "rig", "profile", &[f], None).await;
    }
    let csv = t.get("/compare.csv?base=wide-a&head=wide-b").await.text();
    let total = csv.lines().count() - 1;
    assert!(
        total > 2 * quiescent::web::compare::ROWS_RENDERED,
        "{total} rows"
    );

    let html = t.page("/compare?base=wide-a&head=wide-b").await;
    let table = between(&html, r#"id="results" data-capped>"#, "</table>");
    assert_eq!(
        table.matches("<tr id=\"row-").count(),
        quiescent::web::compare::ROWS_RENDERED
    );
    assert!(
        !table.contains(" hidden>"),
        "filtered rows are not rendered hidden"
    );
    assert!(html.contains(&format!("{total} of {total} series shown")));
    let hint = between(&html, r#"id="rows-capped">"#, "</p>");
    assert!(
        hint.contains(&format!(
            "first {} of the {total} series",
            quiescent::web::compare::ROWS_RENDERED
        )),
        "{hint}"
    );
    let email = between(&html, r#"<pre id="email-text" class="email">"#, "</pre>");
    assert!(
        email.contains(&format!(
            "({} more series, not listed here)",
            total - quiescent::web::compare::ROWS_RENDERED
        )),
        "{email}"
    );
    // Filters narrow through the server: only matching rows, all of them.
    let html = t
        .page("/compare?base=wide-a&head=wide-b&q=kfunc_000123")
        .await;
    let table = between(&html, r#"id="results" data-capped>"#, "</table>");
    let want = csv.lines().filter(|l| l.contains("kfunc_000123")).count();
    assert!(want >= 4, "{want}");
    assert_eq!(table.matches("<tr id=\"row-").count(), want);
    assert!(html.contains(&format!("{want} of {total} series shown")));
    assert!(
        !html.contains("rows-capped"),
        "every matching row is listed"
    );
    let html = t
        .page("/compare?base=wide-a&head=wide-b&q=no-such-series")
        .await;
    assert!(html.contains(&format!("0 of {total} series shown")));
    assert!(html.contains(r#"<p class="hint" id="no-rows">No series pass the filters.</p>"#));
    assert!(!html.contains("rows-capped"));
    // A small comparison is rendered whole, hidden rows included, for filtering in place.
    let html = t
        .page("/compare?base=wide-a&head=wide-b&metric=kfunc_00001*.hit")
        .await;
    assert!(html.contains(r#"<table class="data results" id="results">"#));
    assert!(!html.contains("rows-capped"));
}

#[tokio::test]
async fn builds_sharing_no_series_show_what_each_holds() {
    let t = common::app().await;
    scenario(&t).await;
    common::run(
        &t.pool,
        "v2.0",
        "rig-a",
        "hackbench",
        &[("groups", "<b>8</b>")],
        &[secs("elapsed", &[1.0, 1.1, 1.2])],
    )
    .await;
    let r = t.get("/compare?base=v1.0&head=v2.0").await;
    assert_eq!(r.status, StatusCode::OK);
    let html = r.text();
    assert!(
        html.contains("No series were found on both sides"),
        "{html}"
    );
    let base = between(&html, "v1.0</span> holds:", "</div>");
    assert!(
        base.contains("<li class=\"mono\">ftrace-switch: real [load=idle]</li>"),
        "{base}"
    );
    assert!(base.contains("rcuperf: "), "{base}");
    let head = between(&html, "v2.0</span> holds:", "</div>");
    assert!(
        head.contains("hackbench: elapsed [groups=&#60;b&#62;8&#60;/b&#62;]")
            || head.contains("hackbench: elapsed [groups=&lt;b&gt;8&lt;/b&gt;]"),
        "{head}"
    );
    assert!(!html.contains("<b>8</b>"), "{html}");
}
