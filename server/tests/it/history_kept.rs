//! Histories kept between passes: what a pass reads incrementally is what a whole read gives,
//! after runs are appended, added to an older build, and after a build placed between others
//! shifts the positions of the ones after it.

use quiescent::history::{self, kept};

use crate::common;
use crate::history::import_timed;

/// Asserts that the incremental read of `keys` gives what a whole read gives, and both what
/// the store reads (each run with its own samples).
async fn same_as_whole(store: &store::Store, keys: &[store::HistoryKey], step: &str) {
    let whole = history::load_many(store, keys).await.unwrap();
    let inc = kept::load_many(store, keys).await.unwrap();
    let read = store.history_samples_many(keys).await.unwrap();
    assert_eq!(whole.len(), inc.len());
    assert_eq!(read.len(), inc.len());
    for ((w, i), r) in whole.iter().zip(&inc).zip(&read) {
        assert_eq!(w.key, i.key, "{step}");
        assert_eq!(w.points(), i.points(), "{step}: points of {}", w.key.metric);
        let points: Vec<_> = r.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(
            i.points(),
            points,
            "{step}: points read of {}",
            i.key.metric
        );
        let samples: Vec<&[f64]> = r.iter().map(|(_, v)| v.as_slice()).collect();
        let (wv, iv): (Vec<&[f64]>, Vec<&[f64]>) = (w.values().collect(), i.values().collect());
        assert_eq!(wv, iv, "{step}: samples of {}", w.key.metric);
        assert_eq!(iv, samples, "{step}: samples read of {}", i.key.metric);
        // What the detector is given: each run's position once per sample, in order.
        let (pos, vals): (Vec<i64>, Vec<f64>) = r
            .iter()
            .flat_map(|(p, v)| v.iter().map(move |x| (p.position, *x)))
            .unzip();
        assert_eq!(
            i.flat(),
            (&pos[..], &vals[..]),
            "{step}: flat of {}",
            i.key.metric
        );
        assert_eq!(w.flat(), i.flat(), "{step}: flat of {}", w.key.metric);
    }
}

#[tokio::test]
async fn incremental_history_reads_match_whole_reads() {
    let app = common::app().await;
    let store = store::Store::from_sqlite_pool(app.pool.clone());
    appended_and_inserted_runs(&store).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn incremental_history_reads_match_whole_reads_on_postgresql() {
    let Some(store) = store::testing::pg_store().await else {
        return;
    };
    appended_and_inserted_runs(&store).await;
}

/// Two servers on one PostgreSQL, each keeping the history, importing at the same time: what
/// each reads incrementally is what a whole read gives, whichever server stored the runs (a
/// run whose id came before another's but whose commit came after would be missed).
#[tokio::test(flavor = "multi_thread")]
async fn two_servers_on_postgresql_keep_histories_that_match_whole_reads() {
    let Some(pg) = store::testing::fresh_pg_url().await else {
        return;
    };
    let a = store::Store::open(&pg).await.unwrap();
    let b = store::Store::open(&pg).await.unwrap();
    let mut runs = Vec::new();
    for n in 0..66 {
        runs.push(
            import_timed(
                &a,
                "two",
                &format!("b{n:02}"),
                10 * (n + 1),
                n as usize,
                10.0,
            )
            .await,
        );
    }
    let keys = a.history_keys_of_runs(&runs).await.unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    same_as_whole(&b, &keys, "server b, first read").await;
    assert!(kept::is_kept(&a, &keys[0]) && kept::is_kept(&b, &keys[0]));
    // Both servers import at once: more runs of the last build, so that no build moves and
    // each server extends what it kept by the runs after its last one read.
    let mut tasks = Vec::new();
    for n in 0..24 {
        let s = if n % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            import_timed(&s, "two", "b65", 660, 100 + n, 10.0).await
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert!(kept::is_kept(&a, &keys[0]) && kept::is_kept(&b, &keys[0]));
    same_as_whole(&a, &keys, "server a, after both imported").await;
    same_as_whole(&b, &keys, "server b, after both imported").await;
    let whole = history::load_many(&a, &keys).await.unwrap();
    assert_eq!(whole[0].points().len(), 90);
}

/// Runs appended, a second run of an older build, and a build placed in the middle.
async fn appended_and_inserted_runs(store: &store::Store) {
    let mut runs = Vec::new();
    for b in 0..70 {
        let level = if b < 50 { 10.0 } else { 11.0 };
        runs.push(
            import_timed(
                store,
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
    assert!(kept::is_kept(store, &keys[0]), "a 70-run history is kept");
    same_as_whole(store, &keys, "after 70 builds").await;
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
    import_timed(store, "kept", "b70", 710, 70, 11.0).await;
    same_as_whole(store, &keys, "after an appended build").await;
    // A second run of an older build: it goes inside the history, not at its end.
    import_timed(store, "kept", "b03", 40, 103, 10.0).await;
    same_as_whole(store, &keys, "after a run of an older build").await;
    // A build committed between b05 and b06 moves every build after it one place on.
    import_timed(store, "kept", "b05a", 65, 105, 10.0).await;
    same_as_whole(store, &keys, "after a build placed in the middle").await;
    let whole = history::load_many(store, &keys).await.unwrap();
    let labels: Vec<&str> = whole[0].points().iter().map(|p| p.label.as_str()).collect();
    assert_eq!(&labels[3..9], ["b03", "b03", "b04", "b05", "b05a", "b06"]);
    assert_eq!(whole[0].points().len(), 73);

    // The alerts of the whole history are the ones an incremental pass raised: one step.
    let alerts = store.alerts(&Default::default()).await.unwrap();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
}

/// A run stored before its build is placed joins the history only when the build is placed,
/// after runs with higher ids may have been read: the kept history must not miss it.
#[tokio::test]
async fn a_run_whose_build_is_placed_late_is_not_missed() {
    let app = common::app().await;
    late_placement(&store::Store::from_sqlite_pool(app.pool.clone())).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_build_is_placed_late_is_not_missed_on_postgresql() {
    let Some(store) = store::testing::pg_store().await else {
        return;
    };
    late_placement(&store).await;
}

async fn late_placement(store: &store::Store) {
    let mut runs = Vec::new();
    for n in 0..66 {
        let label = format!("b{n:02}");
        runs.push(import_timed(store, "late", &label, 10 * (n + 1), n as usize, 10.0).await);
    }
    let keys = store.history_keys_of_runs(&runs).await.unwrap();
    assert!(kept::is_kept(store, &keys[0]));
    // Stored, not yet placed (an upload between its commit and its placement).
    let meta = store::RunMeta {
        build: store::BuildMeta {
            label: "b66".into(),
            ..Default::default()
        },
        machine: "rig1".into(),
        benchmark: "late".into(),
        ..Default::default()
    };
    let f = store::InputFile::bytes(
        "r.csv",
        crate::history::samples(66, 10.0).into_bytes(),
        None,
    );
    let late = store.import_run(&meta, &[f], None).await.unwrap().run_ids[0];
    // Meanwhile another run of a placed build is stored and its pass reads past `late`.
    import_timed(store, "late", "b65", 660, 200, 10.0).await;
    same_as_whole(store, &keys, "before the late placement").await;
    let placement = store::Placement {
        branch: "timed".into(),
        parent: None,
        commit_time: Some(670),
    };
    quiescent::history::after_import(store, &[late], &placement)
        .await
        .unwrap();
    same_as_whole(store, &keys, "after the late placement").await;
    let whole = history::load_many(store, &keys).await.unwrap();
    assert!(whole[0].points().iter().any(|p| p.run_id == late));
}
