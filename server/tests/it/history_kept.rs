//! Histories kept between passes: what a pass reads incrementally is what a whole read gives,
//! after runs are appended, added to an older build, and after a build placed between others
//! shifts the positions of the ones after it.

use quiescent::history::{self, kept};

use crate::common;
use crate::history::import_timed;

/// Asserts that the incremental read of `keys` gives what a whole read gives.
async fn same_as_whole(store: &store::Store, keys: &[store::HistoryKey], step: &str) {
    let whole = history::load_many(store, keys).await.unwrap();
    let inc = kept::load_many(store, keys).await.unwrap();
    assert_eq!(whole.len(), inc.len());
    for (w, i) in whole.iter().zip(&inc) {
        assert_eq!(w.key, i.key, "{step}");
        assert_eq!(w.points, i.points, "{step}: points of {}", w.key.metric);
        assert_eq!(w.values, i.values, "{step}: samples of {}", w.key.metric);
    }
}

#[tokio::test]
async fn incremental_history_reads_match_whole_reads() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    let mut runs = Vec::new();
    for b in 0..70 {
        let level = if b < 50 { 10.0 } else { 11.0 };
        runs.push(
            import_timed(
                &store,
                "kept",
                &format!("b{b:02}"),
                10 * (b + 1),
                b as usize,
                level,
            )
            .await,
        );
    }
    let keys = store.history_keys_of_runs(&runs).await.unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(kept::is_kept(&store, &keys[0]), "a 70-run history is kept");
    same_as_whole(&store, &keys, "after 70 builds").await;
    // Nothing new: only the runs after the last one read are asked for, and there are none.
    let last = *runs.last().unwrap();
    let none = store.history_samples_after(&keys, &[last]).await.unwrap();
    assert!(none[0].is_empty(), "{:?}", none[0].len());
    let some = store
        .history_samples_after(&keys, &[runs[67]])
        .await
        .unwrap();
    assert_eq!(some[0].len(), 2);

    // Appended at the end.
    import_timed(&store, "kept", "b70", 710, 70, 11.0).await;
    same_as_whole(&store, &keys, "after an appended build").await;
    // A second run of an older build: it goes inside the history, not at its end.
    import_timed(&store, "kept", "b03", 40, 103, 10.0).await;
    same_as_whole(&store, &keys, "after a run of an older build").await;
    // A build committed between b05 and b06 moves every build after it one place on.
    import_timed(&store, "kept", "b05a", 65, 105, 10.0).await;
    same_as_whole(&store, &keys, "after a build placed in the middle").await;
    let whole = history::load_many(&store, &keys).await.unwrap();
    let labels: Vec<&str> = whole[0].points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(&labels[3..9], ["b03", "b03", "b04", "b05", "b05a", "b06"]);
    assert_eq!(whole[0].points.len(), 73);

    // The alerts of the whole history are the ones an incremental pass raised: one step.
    let alerts = store.alerts(&Default::default()).await.unwrap();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
}
