//! Helpers: a fresh database and router per test, requests through `oneshot`, and seeding.

use std::path::PathBuf;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use sqlx::SqlitePool;
use tower::ServiceExt;

/// A router over its own temporary SQLite database.
pub struct TestApp {
    pub app: Router,
    pub pool: SqlitePool,
    /// The history passes uploads queue (detection runs after the answer).
    pub passes: std::sync::Arc<quiescent::history::passes::Passes>,
    _dir: tempfile::TempDir,
}

pub async fn app() -> TestApp {
    app_with(quiescent::config::ServeArgs::default()).await
}

/// A router with the given server settings over its own temporary SQLite database.
pub async fn app_with(config: quiescent::config::ServeArgs) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("test.db");
    app_on_with(dir, &path, config).await
}

/// An app over the database at `path` (created or migrated), kept alive with `dir`.
pub async fn app_on(dir: tempfile::TempDir, path: &std::path::Path) -> TestApp {
    app_on_with(dir, path, quiescent::config::ServeArgs::default()).await
}

async fn app_on_with(
    dir: tempfile::TempDir,
    path: &std::path::Path,
    config: quiescent::config::ServeArgs,
) -> TestApp {
    let store = store::Store::open(&path.display().to_string())
        .await
        .expect("open db");
    let pool = store.sqlite_pool().clone();
    let state = quiescent::AppState::new(store, config);
    TestApp {
        passes: state.history_passes.clone(),
        app: quiescent::app(state),
        pool,
        _dir: dir,
    }
}

/// A response, its body as bytes.
pub struct Resp {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("UTF-8 body")
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// Sends `req` to `app` and reads the whole answer.
pub async fn send(app: &Router, req: Request<Body>) -> Resp {
    let res = app.clone().oneshot(req).await.expect("infallible");
    let status = res.status();
    let headers = res.headers().clone();
    let body = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .expect("body")
        .to_vec();
    Resp {
        status,
        headers,
        body,
    }
}

/// A GET of `uri` on `app`.
pub async fn get_on(app: &Router, uri: &str) -> Resp {
    send(app, Request::get(uri).body(Body::empty()).expect("request")).await
}

impl TestApp {
    /// Waits for the history passes of the uploads answered so far.
    pub async fn settled(&self) {
        assert!(
            self.passes
                .settled(std::time::Duration::from_secs(30))
                .await,
            "history passes still queued after 30 s"
        );
    }

    pub async fn request(&self, req: Request<Body>) -> Resp {
        send(&self.app, req).await
    }

    pub async fn get(&self, uri: &str) -> Resp {
        self.request(Request::get(uri).body(Body::empty()).expect("request"))
            .await
    }

    /// A page that must answer 200; its HTML.
    pub async fn page(&self, uri: &str) -> String {
        let r = self.get(uri).await;
        assert_eq!(r.status, StatusCode::OK, "{uri}: {}", r.text());
        r.text()
    }

    pub async fn post_form(&self, uri: &str, form: &[(&str, &str)]) -> Resp {
        let body = form
            .iter()
            .map(|(k, v)| format!("{k}={}", quiescent::web::view::path_escape(v)))
            .collect::<Vec<_>>()
            .join("&");
        self.request(
            Request::post(uri)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from(body))
                .expect("request"),
        )
        .await
    }
}

/// A fixture file of the ingest crate.
/// The repository's top folder.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ingest/tests/fixtures")
        .join(rel)
}

/// When rows are stored (fixed, so pages render the same every time).
pub const T0: i64 = 1_700_000_000;

/// Stores a build (if new) and returns its id.
pub async fn build(
    pool: &SqlitePool,
    label: &str,
    commit: Option<&str>,
    config: Option<&str>,
    cmdline: Option<&str>,
) -> i64 {
    if let Some(id) = sqlx::query_scalar::<_, i64>("SELECT id FROM builds WHERE label = ?")
        .bind(label)
        .fetch_optional(pool)
        .await
        .unwrap()
    {
        return id;
    }
    sqlx::query_scalar(
        "INSERT INTO builds (label, commit_sha, kernel_version, config, cmdline, created_at) \
         VALUES (?, ?, NULL, ?, ?, ?) RETURNING id",
    )
    .bind(label)
    .bind(commit)
    .bind(config)
    .bind(cmdline)
    .bind(T0)
    .fetch_one(pool)
    .await
    .unwrap()
}

pub async fn machine(pool: &SqlitePool, name: &str, facts: &[(&str, &str)]) -> i64 {
    let id: i64 = match sqlx::query_scalar::<_, i64>("SELECT id FROM machines WHERE name = ?")
        .bind(name)
        .fetch_optional(pool)
        .await
        .unwrap()
    {
        Some(id) => id,
        None => {
            sqlx::query_scalar("INSERT INTO machines (name, created_at) VALUES (?, ?) RETURNING id")
                .bind(name)
                .bind(T0)
                .fetch_one(pool)
                .await
                .unwrap()
        }
    };
    for (k, v) in facts {
        sqlx::query(
            "INSERT OR REPLACE INTO machine_facts (machine_id, key, value) VALUES (?, ?, ?)",
        )
        .bind(id)
        .bind(k)
        .bind(v)
        .execute(pool)
        .await
        .unwrap();
    }
    id
}

/// One series to store: metric, unit, direction, scope, statistic, values.
pub struct S<'a> {
    pub metric: &'a str,
    pub unit: &'a str,
    pub direction: &'a str,
    pub scope: &'a str,
    pub statistic: Option<&'a str>,
    pub values: &'a [f64],
}

/// A duration series (`s`, lower is better, scope `all`).
pub fn secs<'a>(metric: &'a str, values: &'a [f64]) -> S<'a> {
    S {
        metric,
        unit: "s",
        direction: "lower_is_better",
        scope: "all",
        statistic: None,
        values,
    }
}

/// Stores one run with its series (directly, as an import would) and returns its id.
pub async fn run(
    pool: &SqlitePool,
    build_label: &str,
    machine_name: &str,
    benchmark: &str,
    params: &[(&str, &str)],
    series: &[S<'_>],
) -> i64 {
    let b = build(pool, build_label, None, None, None).await;
    let m = machine(pool, machine_name, &[]).await;
    let mut p: Vec<(&str, &str)> = params.to_vec();
    p.sort();
    let pkey = p
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(pool)
        .await
        .unwrap();
    let run: i64 = sqlx::query_scalar(
        "INSERT INTO runs (build_id, machine_id, benchmark, params_key, content_hash, import_hash, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(b)
    .bind(m)
    .bind(benchmark)
    .bind(&pkey)
    .bind(format!("content-{n}"))
    .bind(format!("import-{n}"))
    .bind(T0 + n)
    .fetch_one(pool)
    .await
    .unwrap();
    for (k, v) in &p {
        sqlx::query("INSERT INTO run_params (run_id, key, value) VALUES (?, ?, ?)")
            .bind(run)
            .bind(k)
            .bind(v)
            .execute(pool)
            .await
            .unwrap();
    }
    let rows: Vec<store::NewSeries<'_>> = series
        .iter()
        .map(|s| store::NewSeries {
            run_id: run,
            metric: s.metric,
            unit: s.unit,
            direction: s.direction,
            scope: s.scope,
            label: None,
            statistic: s.statistic,
            values: s.values,
        })
        .collect();
    store::Store::from_sqlite_pool(pool.clone())
        .add_series(&rows)
        .await
        .unwrap();
    run
}

/// Imports files through the real parsers as one run.
pub async fn import(
    pool: &SqlitePool,
    build_label: &str,
    machine_name: &str,
    benchmark: &str,
    files: &[PathBuf],
    block: Option<&str>,
) -> Vec<i64> {
    let meta = store::RunMeta {
        build: store::BuildMeta {
            label: build_label.into(),
            ..Default::default()
        },
        machine: machine_name.into(),
        benchmark: benchmark.into(),
        block: block.map(Into::into),
        ..Default::default()
    };
    let files: Vec<_> = files
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            store::InputFile::bytes(name, std::fs::read(p).unwrap(), None)
        })
        .collect();
    store::Store::from_sqlite_pool(pool.clone())
        .import_run(&meta, &files, None)
        .await
        .unwrap_or_else(|e| panic!("import: {e}"))
        .run_ids
}

/// The text between `start` and the next `end` after it.
pub fn between<'a>(s: &'a str, start: &str, end: &str) -> &'a str {
    let i = s
        .find(start)
        .unwrap_or_else(|| panic!("{start:?} not in the page"))
        + start.len();
    let j = s[i..].find(end).map(|j| i + j).unwrap_or(s.len());
    &s[i..j]
}

/// Runs `cmd`, killing it after `secs` (a hang is a failure, not a stuck test).
pub fn run_for(mut cmd: std::process::Command, secs: u64) -> std::process::Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(secs) {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!(
                "still running after {secs} s: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Every before/after pair the demo database offers (see `cli/demo.rs`): per-CPU profiles,
/// latency histograms, sweeps, ...
pub const DEMO_PAIRS: [(&str, &str); 17] = [
    ("v4.19", "v5.1"),
    ("1e5aa3d5d53a-parent", "1e5aa3d5d53a"),
    ("v2.6.28-ftrace-disable", "v2.6.28-ftrace-enable"),
    ("v3.8-qs-fqs-jiffies", "v3.8-qs-fqs-from-HZ"),
    ("kvfree-rcu-baseline", "kvfree-rcu-polling"),
    ("rcu-tasks-irq-work-baseline", "rcu-tasks-avoid-irq-work"),
    ("vmalloc-before", "vmalloc-fix-exhaustion"),
    ("lockdep-rcu", "lockdep-shazptr"),
    ("2.6.18-vanilla", "2.6.18-swap-token"),
    ("slub-count-partial-original", "slub-count-partial-patched"),
    ("slob-current", "slob-segregated-free-list"),
    ("sched-without-cluster", "sched-cluster-level"),
    ("rcu-nesting-unmarked", "rcu-nesting-marked"),
    ("git-xdiff-before-strbuf", "git-xdiff-strbuf"),
    ("rcuscale-gps-count-old", "rcuscale-gps-count-fixed"),
    ("v2.6.26", "v3.8.0-test"),
    ("c229828ca6bc-reverted", "c229828ca6bc"),
];
