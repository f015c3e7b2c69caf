//! The same answers on both engines: the demo stored once in SQLite and once in PostgreSQL,
//! then every page, API answer and export the dashboard links to, fetched from each and
//! compared byte for byte (times of day aside, which differ with the moment each demo ran).

use std::collections::{BTreeSet, VecDeque};
use std::process::Command;

use axum::http::StatusCode;

use axum::Router;

use crate::common::get_on;

/// Pages fetched at most: the demo links to some 300 distinct addresses.
const MAX_PAGES: usize = 600;

fn demo_into(db: &str) {
    let o = Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .env_remove("QUIESCENT_DB")
        .env("QUIESCENT_LOG", "error")
        .args(["demo", "--no-serve", "--db", db])
        .output()
        .expect("run quiescent");
    assert!(
        o.status.success(),
        "demo into {db}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Same-site links of a page, without fragments.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in html.split("href=\"").skip(1) {
        let Some(end) = part.find('"') else { continue };
        let href = part[..end].replace("&amp;", "&");
        let href = href.split('#').next().unwrap_or("").to_string();
        if href.starts_with('/') && !href.starts_with("//") && !href.starts_with("/static/") {
            out.push(href);
        }
    }
    out
}

/// Times of day and unix times differ between two demo runs; nothing else may.
fn normalise(body: &str) -> String {
    // Compiled once: some 1,200 bodies pass through here.
    static PATTERNS: std::sync::LazyLock<[(regex::Regex, &str); 3]> =
        std::sync::LazyLock::new(|| {
            let re = |p: &str| regex::Regex::new(p).unwrap();
            [
                (
                    re(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|\+00:00| UTC)?)?"),
                    "TIME",
                ),
                (re(r"\b1[6-9]\d{8}\b"), "EPOCH"),
                (re(r"\b\d+ (second|minute|hour|day)s? ago\b"), "AGO"),
            ]
        });
    let mut s = body.to_string();
    for (re, to) in PATTERNS.iter() {
        s = re.replace_all(&s, *to).into_owned();
    }
    s
}

async fn app_on(db: &str) -> Router {
    let store = store::Store::open(db).await.expect("open");
    quiescent::app(quiescent::AppState::new(
        store,
        quiescent::config::ServeArgs::default(),
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_and_answer_is_the_same_on_sqlite_and_postgresql() {
    let Some(pg) = store::testing::fresh_pg_url().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("demo.db").display().to_string();
    let (a, b) = (sqlite.clone(), pg.clone());
    let t1 = std::thread::spawn(move || demo_into(&a));
    let t2 = std::thread::spawn(move || demo_into(&b));
    t1.join().unwrap();
    t2.join().unwrap();
    let lite = app_on(&sqlite).await;
    let post = app_on(&pg).await;

    let mut seen = BTreeSet::new();
    let mut queue: VecDeque<String> = [
        "/",
        "/builds",
        "/machines",
        "/runs",
        "/alerts",
        "/bisect",
        "/compare?base=v4.19&head=v5.1",
        "/compare?base=c229828ca6bc-reverted&head=c229828ca6bc",
        "/compare?base=vmalloc-before&head=vmalloc-fix-exhaustion&per_cpu=1",
        "/api/v1/runs",
        "/api/v1/compare?base=v4.19&head=v5.1",
        "/api/v1/compare?base=1e5aa3d5d53a-parent&head=1e5aa3d5d53a",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    let mut compared = 0;
    while let Some(uri) = queue.pop_front() {
        if !seen.insert(uri.clone()) || seen.len() > MAX_PAGES {
            continue;
        }
        let (l, p) = (get_on(&lite, &uri).await, get_on(&post, &uri).await);
        assert_eq!(l.status, p.status, "{uri}: status differs");
        assert_ne!(
            l.status,
            StatusCode::INTERNAL_SERVER_ERROR,
            "{uri}: {}",
            l.text()
        );
        let (lb, pb) = (
            String::from_utf8_lossy(&l.body).into_owned(),
            String::from_utf8_lossy(&p.body).into_owned(),
        );
        let (ln, pn) = (normalise(&lb), normalise(&pb));
        if ln != pn {
            let at = ln
                .bytes()
                .zip(pn.bytes())
                .position(|(x, y)| x != y)
                .unwrap_or(ln.len().min(pn.len()));
            let from = ln.floor_char_boundary(at.saturating_sub(200));
            panic!(
                "{uri}: bodies differ at byte {at}\nSQLite:     {}\nPostgreSQL: {}",
                &ln[from..ln.floor_char_boundary((at + 200).min(ln.len()))],
                &pn[pn.floor_char_boundary(from.min(pn.len()))
                    ..pn.floor_char_boundary((at + 200).min(pn.len()))]
            );
        }
        compared += 1;
        if l.header("content-type").starts_with("text/html") {
            queue.extend(links(&lb));
        }
    }
    assert!(compared > 100, "only {compared} pages compared");
    eprintln!("{compared} pages and answers identical on both engines");
}
