//! Detector state kept between passes: a history is extended by its new points only while the
//! stored history is the kept one plus those, and read whole when it changed before.

use crate::common;
use crate::history::{import_history, samples};

/// The stored tested p-values of benchmark `hb` on `main`, by history series id.
async fn tested_p(store: &store::Store) -> Vec<(i64, Vec<f64>)> {
    let branch = store
        .history_keys(&store::KeyFilter::default())
        .await
        .unwrap()[0]
        .branch_id;
    let mut p = store.benchmark_tested_p(branch, "hb").await.unwrap();
    p.sort_by_key(|x| x.0);
    p
}

/// The same p-values from a whole analysis: a new store over the same database keeps nothing.
async fn whole_analysis(pool: &sqlx::SqlitePool) -> Vec<(i64, Vec<f64>)> {
    let fresh = store::Store::from_sqlite_pool(pool.clone());
    let keys = fresh
        .history_keys(&store::KeyFilter::default())
        .await
        .unwrap();
    quiescent::history::detect_keys(&fresh, &keys)
        .await
        .unwrap();
    assert_eq!(quiescent::history::history_reads(&fresh).extended, 0);
    tested_p(&fresh).await
}

#[tokio::test]
async fn kept_state_gives_the_whole_analysis_and_a_run_added_before_it_is_read_whole() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    let levels: Vec<f64> = (0..30).map(|b| if b < 15 { 10.0 } else { 11.5 }).collect();
    let groups = import_history(&store, &levels).await;
    assert_eq!(groups.iter().flatten().count(), 1, "{groups:?}");
    // 5 samples a build: from build 13 on (65 samples) each pass extends the kept state.
    let reads = quiescent::history::history_reads(&store);
    assert_eq!(reads.extended, 17, "{reads:?}");
    assert_eq!(reads.whole, 13, "{reads:?}");
    let extended = tested_p(&store).await;
    assert_eq!(extended, whole_analysis(&app.pool).await);

    // A run of an earlier build, far off its level: behind the kept state's last point, so
    // the history is read whole, and the p-values are those of a whole analysis again.
    let meta = store::RunMeta {
        build: store::BuildMeta {
            label: "b05".into(),
            ..Default::default()
        },
        machine: "rig1".into(),
        benchmark: "hb".into(),
        ..Default::default()
    };
    let file = store::InputFile::bytes("late.csv", samples(5, 40.0).into_bytes(), None);
    let outcome = store.import_run(&meta, &[file], None).await.unwrap();
    quiescent::history::after_import(&store, &outcome.run_ids, &store::Placement::main())
        .await
        .unwrap();
    let after = quiescent::history::history_reads(&store);
    assert_eq!(after.extended, reads.extended);
    assert_eq!(after.whole, reads.whole + 1);
    let changed = tested_p(&store).await;
    assert_ne!(changed, extended);
    assert_eq!(changed, whole_analysis(&app.pool).await);

    // The next run at the end extends the state read whole.
    let meta = store::RunMeta {
        build: store::BuildMeta {
            label: "b30".into(),
            ..Default::default()
        },
        ..meta
    };
    let file = store::InputFile::bytes("next.csv", samples(30, 11.5).into_bytes(), None);
    let outcome = store.import_run(&meta, &[file], None).await.unwrap();
    quiescent::history::after_import(&store, &outcome.run_ids, &store::Placement::main())
        .await
        .unwrap();
    assert_eq!(
        quiescent::history::history_reads(&store).extended,
        reads.extended + 1
    );
    assert_eq!(tested_p(&store).await, whole_analysis(&app.pool).await);
}
