//! Limits seen from the command line: `ingest` on FIFOs and devices, reading commands on a
//! missing database, `upload` of more files than the server takes, bidirectional controls in
//! labels, and extreme samples that must never print NaN.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env_remove("QUIESCENT_DB")
        .env_remove("QUIESCENT_TOKEN")
        .env_remove("QUIESCENT_SERVER")
        .env("QUIESCENT_LOG", "error")
        .stdin(Stdio::null());
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ingest(db: &Path, file: &str) -> Command {
    let mut c = bin();
    c.args([
        "ingest",
        "--build",
        "v1",
        "--machine",
        "m",
        "--benchmark",
        "b",
    ])
    .arg("--db")
    .arg(db)
    .arg(file);
    c
}

#[test]
fn ingest_refuses_fifos_and_devices_and_reads_stdin_only_from_dash() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db");
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for path in [fifo.display().to_string(), "/dev/zero".to_string()] {
        let o = crate::common::run_for(ingest(&db, &path), 30);
        assert!(!o.status.success(), "{path}");
        let e = stderr(&o);
        assert!(
            e.contains(&path) && e.contains("not a regular file or directory"),
            "{path}: {e}"
        );
    }
    // `-` reads standard input.
    let mut c = ingest(&db, "-");
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"Time: 1.5\nTime: 1.6\n").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // A cap on what one input may hold.
    let mut c = ingest(&db, "-");
    c.args(["--max-file-mib", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(&vec![b'7'; 3 << 20]);
    }
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--max-file-mib"), "{}", stderr(&o));
}

#[test]
fn reading_commands_refuse_a_missing_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo.db");
    for args in [
        vec!["runs"],
        vec!["compare", "v1", "v2"],
        vec!["artifact", "1"],
        vec!["serve", "--bind", "127.0.0.1:0"],
    ] {
        let mut c = bin();
        c.args(&args).arg("--db").arg(&db);
        let o = crate::common::run_for(c, 30);
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.contains("does not exist") || e.contains("there is no database at"),
            "{args:?}: {e}"
        );
        assert!(!db.exists(), "{args:?} created the database");
    }
}

#[test]
fn bidi_controls_in_labels_are_refused_by_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.txt");
    std::fs::write(&file, "Time: 1.5\n").unwrap();
    let mut c = bin();
    c.args([
        "ingest",
        "--build",
        "v6.9\u{202E}-lanif",
        "--machine",
        "m",
        "--benchmark",
        "b",
    ])
    .arg("--db")
    .arg(dir.path().join("q.db"))
    .arg(&file);
    let o = crate::common::run_for(c, 60);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("build label") && e.contains("U+202E"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_of_too_many_files_says_so_at_once_without_retrying() {
    let t = common::app().await;
    let token = quiescent::tokens::create(&store::Store::from_sqlite_pool(t.pool.clone()), "rig-1")
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let pool = t.pool.clone();
    tokio::spawn(async move {
        quiescent::web::serve_pool(
            store::Store::from_sqlite_pool(pool),
            quiescent::config::ServeArgs {
                bind: "127.0.0.1:0".into(),
                ..Default::default()
            },
            move |addr| {
                let _ = tx.send(addr);
            },
        )
        .await
        .unwrap();
    });
    let addr = rx.await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1001 {
        std::fs::write(dir.path().join(format!("f{i}")), "Time: 1.5\n").unwrap();
    }
    let mut c = bin();
    c.args([
        "upload",
        "--build",
        "v1",
        "--machine",
        "m",
        "--benchmark",
        "b",
    ])
    .arg("--server")
    .arg(format!("http://{addr}"))
    .arg("--token")
    .arg(&token)
    .arg(dir.path());
    let start = Instant::now();
    let o = tokio::task::spawn_blocking(move || crate::common::run_for(c, 60))
        .await
        .unwrap();
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("1001 files") && e.contains("at most 1000"),
        "{e}"
    );
    assert!(!e.contains("retrying"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(20));
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&t.pool)
        .await
        .unwrap();
    assert_eq!(runs, 0);
}

/// Words of `text` that are a non-finite number as Rust or a spreadsheet would print it.
fn non_finite_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric()))
        .filter(|w| matches!(w.to_ascii_lowercase().as_str(), "nan" | "inf" | "infinity"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn samples_near_the_largest_double_never_print_nan() {
    let t = common::app().await;
    common::run(
        &t.pool,
        "v1.0",
        "rig",
        "bench",
        &[],
        &[common::secs("time", &[1e308, 1.5e308, 1.2e308, 1.7e308])],
    )
    .await;
    common::run(
        &t.pool,
        "v1.1",
        "rig",
        "bench",
        &[],
        &[common::secs(
            "time",
            &[1.6e308, 1.7e308, 1.75e308, 1.79e308],
        )],
    )
    .await;
    let csv = t.page("/compare.csv?base=v1.0&head=v1.1").await;
    assert!(csv.lines().count() >= 2, "{csv}");
    assert_eq!(non_finite_words(&csv), Vec::<String>::new(), "{csv}");
    let html = t.page("/compare?base=v1.0&head=v1.1").await;
    assert!(html.contains("time"));
    assert_eq!(non_finite_words(&html), Vec::<String>::new());
}

#[test]
fn a_long_line_and_an_out_of_range_json_value_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.txt");
    std::fs::write(&long, format!("{}\n", "7".repeat(2 << 20))).unwrap();
    let json = dir.path().join("s.json");
    std::fs::write(
        &json,
        "{\"series\": [{\"metric\": \"t\", \"unit\": \"s\", \"direction\": \"lower_is_better\", \"scope\": \"all\",\n \"samples\": [1.0,\n 1e999]}]}\n",
    )
    .unwrap();
    let mut c = bin();
    c.arg("parse").arg(&long).arg(&json);
    let o = crate::common::run_for(c, 60);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("line 1: the line is 2097152 bytes long"), "{e}");
    assert!(
        e.contains("line 3: the value is 1e999: out of range"),
        "{e}"
    );
    assert!(!e.contains("no parser recognises"), "{e}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ingested_file_names_keep_bidi_controls_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out\u{202E}txt.exe");
    std::fs::write(&file, "Time: 1.5\n").unwrap();
    let db = dir.path().join("q.db");
    let mut c = bin();
    c.args([
        "ingest",
        "--build",
        "v1",
        "--machine",
        "m",
        "--benchmark",
        "b",
    ])
    .arg("--db")
    .arg(&db)
    .arg(&file);
    let o = tokio::task::spawn_blocking(move || crate::common::run_for(c, 60))
        .await
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let store = store::Store::open(&db.display().to_string()).await.unwrap();
    let name: String = sqlx::query_scalar("SELECT file_name FROM run_artifacts")
        .fetch_one(store.sqlite_pool())
        .await
        .unwrap();
    assert!(!name.contains('\u{202E}'), "{name:?}");
    assert!(name.ends_with("out\\u{202E}txt.exe"), "{name:?}");
}
