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
