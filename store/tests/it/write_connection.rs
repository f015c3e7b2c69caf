//! SQLite: a store's write transactions all run on one connection of their own, whichever
//! way they begin and however many connections its readers opened meanwhile (see the store's
//! `engine::WritePool`: a connection that only writes keeps its page cache between writes).

use store::{RunQuery, Store};

use crate::engines::{hb, meta};

#[tokio::test]
async fn writes_run_on_one_connection_whatever_the_readers_opened() {
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("w.db").display().to_string())
        .await
        .unwrap();
    // The first write marks its connection; the second way of writing finds the mark.
    assert_eq!(st.mark_write_connections().await.unwrap(), (false, true));
    for round in 0..3 {
        // Readers hold several of the pool's connections at once, so that the pool has more
        // than one idle connection to give the next writer.
        let held: Vec<_> = hold_connections(&st, 6).await;
        st.runs(&RunQuery::default()).await.unwrap();
        drop(held);
        let times: Vec<f64> = (0..10).map(|j| (round * 100 + j) as f64).collect();
        st.import_upload(
            &meta("v1", "hackbench"),
            &[hb(&format!("{round}.txt"), &times)],
            None,
        )
        .await
        .unwrap();
        assert_eq!(
            st.mark_write_connections().await.unwrap(),
            (true, true),
            "round {round}: a write ran on another connection"
        );
    }
    assert_eq!(st.runs(&RunQuery::default()).await.unwrap().len(), 3);
}

/// `n` connections of the store's pool, held together.
async fn hold_connections(st: &Store, n: usize) -> Vec<sqlx::pool::PoolConnection<sqlx::Sqlite>> {
    let mut held = Vec::new();
    for _ in 0..n {
        held.push(st.sqlite_pool().acquire().await.unwrap());
    }
    held
}

/// The threads of this process as (name, the CPUs it may run on as the kernel lists them).
fn threads() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap() {
        let Ok(status) = std::fs::read_to_string(task.unwrap().path().join("status")) else {
            continue; // a thread that ended meanwhile
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        out.push((field("Name:"), field("Cpus_allowed_list:")));
    }
    out
}

/// With several CPUs, the group writer's thread is kept on one, and the write connection's
/// thread, opened from it, on the same (`store::runtime`): each statement's hand-off between
/// them is then a switch on one CPU rather than a wake-up sent to another.
#[tokio::test]
async fn the_write_connection_runs_on_the_writers_cpu() {
    if std::env::var_os("QUIESCENT_WRITER_CPU").is_some() {
        return; // the environment chose
    }
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("cpu.db").display().to_string())
        .await
        .unwrap();
    // A write begun on this test's runtime first: the connection must be open already, on the
    // writer's thread, rather than opened by whoever writes first.
    st.mark_write_connections().await.unwrap();
    st.import_upload(&meta("v1", "hackbench"), &[hb("a.txt", &[1.0, 2.0])], None)
        .await
        .unwrap();
    let all = threads();
    let process = std::fs::read_to_string("/proc/self/status").unwrap();
    let several = process
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .is_some_and(|v| v.contains(['-', ',']));
    let writer: Vec<&String> = all
        .iter()
        .filter(|(name, _)| name == "quiescent-write")
        .map(|(_, cpus)| cpus)
        .collect();
    assert_eq!(writer.len(), 1, "one writer thread: {all:?}");
    if !several {
        eprintln!("one CPU: nothing to keep together");
        return;
    }
    let cpu = writer[0];
    assert!(
        cpu.parse::<usize>().is_ok(),
        "the writer's thread is kept on one CPU: {cpu}"
    );
    assert!(
        all.iter()
            .any(|(name, cpus)| name.starts_with("sqlx-sqlite") && cpus == cpu),
        "a SQLite connection thread on the writer's CPU {cpu}: {all:?}"
    );
}
