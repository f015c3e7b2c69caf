//! An import's key (`runs.import_hash`) and each run's content key begin with the import's
//! largest artifact id, so that new imports add to the end of their indexes; runs stored before
//! that prefix keep the bare hash and must still be found, by both write paths, so that the same
//! import is never stored twice.

use store::Store;

use super::group::wait_queued;
use super::{hb, meta};

/// Runs `sql` (`$1` placeholders) with `id` bound, on the store's own engine.
async fn exec(st: &Store, sql: &str, id: i64) {
    let sql = sqlx::AssertSqlSafe(sql.to_string());
    if st.is_postgres() {
        sqlx::query(sql)
            .bind(id)
            .execute(st.pg_pool())
            .await
            .unwrap();
    } else {
        sqlx::query(sql)
            .bind(id)
            .execute(st.sqlite_pool())
            .await
            .unwrap();
    }
}

/// Run `id`'s import key and content key.
async fn keys_of(st: &Store, id: i64) -> (String, String) {
    let sql = "SELECT import_hash, content_hash FROM runs WHERE id = $1";
    if st.is_postgres() {
        sqlx::query_as(sql).bind(id).fetch_one(st.pg_pool()).await
    } else {
        sqlx::query_as(sql)
            .bind(id)
            .fetch_one(st.sqlite_pool())
            .await
    }
    .unwrap()
}

both!(keys_begin_with_the_largest_artifact_id, |st| {
    let files = [
        hb("a.txt", &[1.0]),
        hb("b.txt", &[2.0]),
        hb("a2.txt", &[1.0]),
    ];
    let out = st
        .import_run(&meta("v1", "hackbench"), &files, None)
        .await
        .unwrap();
    let largest = st
        .run_artifacts(out.run_ids[0], None)
        .await
        .unwrap()
        .iter()
        .map(|a| a.artifact_id)
        .max()
        .unwrap();
    let (import, content) = keys_of(&st, out.run_ids[0]).await;
    let prefix = format!("{largest:016x}");
    assert!(import.starts_with(&prefix), "{import} after {prefix}");
    assert!(content.starts_with(&prefix), "{content} after {prefix}");
    assert_eq!((import.len(), content.len()), (80, 80));
    assert_ne!(import, content);

    // A later import with a new file sorts after it in both indexes.
    let next = st
        .import_run(&meta("v1", "hackbench"), &[hb("c.txt", &[3.0])], None)
        .await
        .unwrap();
    let (import2, content2) = keys_of(&st, next.run_ids[0]).await;
    assert!(
        import2 > import && content2 > content,
        "{import2} / {content2}"
    );
});

both!(
    runs_stored_with_the_bare_hash_are_found_by_both_write_paths,
    |st| {
        let m = meta("v1", "hackbench");
        let first = st
            .import_run(&m, &[hb("old.txt", &[1.0, 2.0])], None)
            .await
            .unwrap();
        let id = first.run_ids[0];
        // As a run stored before the prefix: the bare hash in both columns.
        exec(
            &st,
            "UPDATE runs SET import_hash = substr(import_hash, 17), \
         content_hash = substr(content_hash, 17) WHERE id = $1",
            id,
        )
        .await;
        assert_eq!(keys_of(&st, id).await.0.len(), 64);

        // One import at a time.
        let again = st
            .import_run(&m, &[hb("old.txt", &[1.0, 2.0])], None)
            .await
            .unwrap();
        assert!(!again.created, "stored again beside its bare-hash twin");
        assert_eq!(again.run_ids, vec![id]);

        // In a group: the twin and a new upload written together.
        let turn = st.hold_write_turn().await;
        let mut jobs = Vec::new();
        for (name, first) in [("old.txt", 1.0), ("new.txt", 3.0)] {
            let (st, m) = (st.clone(), m.clone());
            jobs.push(tokio::spawn(async move {
                st.import_upload(&m, &[hb(name, &[first, 2.0])], None).await
            }));
        }
        wait_queued(&st, 2).await;
        drop(turn);
        let twin = jobs.remove(0).await.unwrap().unwrap();
        let new = jobs.remove(0).await.unwrap().unwrap();
        assert!(!twin.created, "the group stored its bare-hash twin again");
        assert_eq!(twin.run_ids, vec![id]);
        assert!(new.created);
        assert_eq!(st.runs(&Default::default()).await.unwrap().len(), 2);
        assert_eq!(st.total_samples().await.unwrap(), 4);
    }
);
