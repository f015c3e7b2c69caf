//! SQLite's write-ahead log stays short while uploads are written and readers never pause: the
//! group writer restarts it once it passes its limit (see the store's `wal`). Without that,
//! SQLite's passive checkpoints find a reader every time and the log only grows.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use store::{RunQuery, Store};

use crate::engines::{hb, meta};

/// Uploads run number `i`: one hackbench file of 400 samples.
async fn upload(st: &Store, i: usize) {
    let times: Vec<f64> = (0..400).map(|j| (i * 1000 + j) as f64).collect();
    st.import_upload(
        &meta("v1", "hackbench"),
        &[hb(&format!("{i}.txt"), &times)],
        None,
    )
    .await
    .unwrap();
}

/// Uploads this many runs from 8 tasks while 3 tasks read without pause; the longest the log
/// was after an upload, in bytes.
async fn longest_log(restart_from: u64, uploads: usize) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("wal.db").display().to_string())
        .await
        .unwrap();
    st.set_log_restart_from(restart_from);
    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..3 {
        let (st, stop) = (st.clone(), stop.clone());
        readers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                st.runs(&RunQuery::default()).await.unwrap();
            }
        }));
    }
    let mut writers = Vec::new();
    for w in 0..8 {
        let st = st.clone();
        writers.push(tokio::spawn(async move {
            let mut longest = 0;
            for i in (w..uploads).step_by(8) {
                upload(&st, i).await;
                longest = longest.max(st.log_bytes().unwrap_or(0));
            }
            longest
        }));
    }
    let mut longest = 0;
    for w in writers {
        longest = longest.max(w.await.unwrap());
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.await.unwrap();
    }
    assert_eq!(st.runs(&RunQuery::default()).await.unwrap().len(), uploads);
    longest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_stays_short_under_uploads_and_readers() {
    const LIMIT: u64 = 256 << 10;
    let kept = longest_log(LIMIT, 400).await;
    let grown = longest_log(u64::MAX, 400).await;
    eprintln!("longest log: {kept} bytes restarted from {LIMIT}, {grown} never restarted");
    // Alone this is about 2.5x the limit. A restart that finds a reader still there after its
    // wait is tried again only once the log has grown by another quarter of the limit, so on a
    // machine busy with other tests (readers slower than the wait) it runs longer: 8.1x was
    // seen in CI. Without restarts the log is 35-85x.
    assert!(kept < 16 * LIMIT, "the log reached {kept} bytes");
    assert!(
        kept * 4 < grown,
        "the log reached {kept} bytes, {grown} without restarts"
    );
    assert!(
        grown > 4 * LIMIT,
        "the log reached {grown} bytes only without restarts"
    );
}

/// A restart makes the log start again in a file that keeps its length: the commits after it
/// leave the log alone until what it holds passes the limit again. Were the file's length
/// taken for the log's, every commit after a restart would checkpoint and wait for readers.
#[tokio::test]
async fn a_restarted_log_waits_to_regrow_before_the_next_restart() {
    const LIMIT: u64 = 256 << 10;
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("wal.db").display().to_string())
        .await
        .unwrap();
    st.set_log_restart_from(LIMIT);
    let mut i = 0;
    // No readers: the first try restarts the log.
    while st.log_restarts_tried() == 0 {
        assert!(i < 1000, "no restart after {i} uploads");
        upload(&st, i).await;
        i += 1;
    }
    let file = st.log_bytes().unwrap();
    assert!(file > LIMIT, "the log file is {file} bytes");
    for _ in 0..3 {
        upload(&st, i).await;
        i += 1;
        let held = st.log_held_bytes().unwrap();
        assert!(held < LIMIT, "the log holds {held} bytes");
        assert!(held > 0, "the log holds the upload");
        assert_eq!(st.log_bytes(), Some(file), "the file keeps its length");
    }
    assert_eq!(st.log_restarts_tried(), 1, "restarts after the first");
    // Grown near the limit again (an upload adds about a quarter of it), it is restarted again.
    let mut held = 0;
    while st.log_restarts_tried() == 1 {
        assert!(i < 2000, "no second restart");
        held = st.log_held_bytes().unwrap();
        upload(&st, i).await;
        i += 1;
    }
    assert!(
        held > LIMIT / 2,
        "restarted again when the log held {held} bytes"
    );
}
