//! The writer is taken only after parsing: a small import commits while a large one is still
//! being parsed, and names both of them introduced end up stored once, each series under its
//! own name.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use store::{BuildMeta, InputFile, RunMeta, RunQuery};

/// A function-profile table (`trace_stat/function0`, scope `cpu0`) of these (name, hits).
fn profile(rows: impl Iterator<Item = (String, u64)>) -> Vec<u8> {
    let mut s = String::new();
    s.push_str(
        "  Function                               Hit    Time            Avg             s^2\n",
    );
    s.push_str(
        "  --------                               ---    ----            ---             ---\n",
    );
    for (name, hit) in rows {
        s.push_str(&format!(
            "  {name:<36} {hit:>8}    {:.1} us     0.500 us        0.004 us\n",
            hit as f64 * 0.5
        ));
    }
    s.into_bytes()
}

/// `fn_0 .. fn_{n-1}` with hits `base + i`.
fn functions(n: u64, base: u64) -> impl Iterator<Item = (String, u64)> {
    (0..n).map(move |i| (format!("fn_{i}"), base + i))
}

fn meta(build: &str) -> RunMeta {
    RunMeta {
        build: BuildMeta {
            label: build.into(),
            ..Default::default()
        },
        machine: "rig".into(),
        benchmark: "profile".into(),
        ..Default::default()
    }
}

both!(a_small_import_commits_while_a_large_one_is_parsed, |st| {
    let st = st.staging_large_imports();
    // Large: 100,000 functions, all names new. Small: 10 of the same names and one of its own.
    let big = profile(functions(100_000, 1_000));
    let big_len = big.len() as u64;
    let small = profile(functions(10, 5).chain([("fn_small_0".to_string(), 77)]));
    let parsed = Arc::new(AtomicU64::new(0));
    let large = {
        let (st, parsed) = (st.clone(), parsed.clone());
        tokio::spawn(async move {
            let file = InputFile::bytes("trace_stat/function0", big, None);
            st.import_run(&meta("large"), &[file], Some(parsed)).await
        })
    };
    // Wait until the large import is parsing (it has read some of its bytes, not all).
    let deadline = Instant::now() + Duration::from_secs(60);
    while parsed.load(Ordering::Relaxed) == 0 {
        assert!(
            Instant::now() < deadline,
            "the large import never started parsing"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let file = InputFile::bytes("trace_stat/function0", small, None);
    let small_out = tokio::time::timeout(
        Duration::from_secs(30),
        st.import_run(&meta("small"), &[file], None),
    )
    .await
    .expect("the small import waited for the large one")
    .unwrap();
    let seen = parsed.load(Ordering::Relaxed);
    assert!(
        !large.is_finished() && seen < big_len,
        "the small import committed only after the large one ({seen} of {big_len} bytes parsed)"
    );
    let large_out = large.await.unwrap().unwrap();
    assert!(small_out.created && large_out.created);

    // Every series under its own name, with its own values, in both runs.
    let small_series = st.run_series(small_out.run_ids[0]).await.unwrap();
    let hit = |series: &[store::RunSeries], name: &str| {
        series
            .iter()
            .find(|s| s.metric == name && s.scope == "cpu0")
            .map(|s| s.values.clone())
    };
    assert_eq!(hit(&small_series, "fn_3.hit"), Some(vec![8.0]));
    assert_eq!(hit(&small_series, "fn_small_0.hit"), Some(vec![77.0]));
    // The large run: every function's series stored (its values are checked through the
    // small run's names, which it shares).
    let large = st
        .runs(&RunQuery {
            build: Some("large"),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(large[0].series as u64, large_out.series);
    assert_eq!(large[0].samples as u64, large_out.samples);
    assert!(large_out.series >= 100_000, "{} series", large_out.series);
    let ids: Vec<i64> = small_series.iter().map(|s| s.id).collect();
    assert!(ids.iter().all(|&id| id != 0));
    let shared: Vec<(i64, Vec<f64>)> = st
        .series_values(&large_series_of(&st, large_out.run_ids[0], "fn_3.hit").await)
        .await
        .unwrap();
    assert_eq!(shared.len(), 1);
    assert_eq!(shared[0].1, vec![1_003.0]);
});

/// The id of the `cpu0` series `metric` of a run.
async fn large_series_of(st: &store::Store, run_id: i64, metric: &str) -> Vec<i64> {
    st.series_of_runs(&[run_id])
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.metric == metric && s.scope == "cpu0")
        .map(|s| s.id)
        .collect()
}

/// Rows of `pending_blocks` (blocks a large import staged and has not moved yet).
async fn pending(st: &store::Store) -> i64 {
    let sql = "SELECT COUNT(*) FROM pending_blocks";
    if st.is_postgres() {
        sqlx::query_scalar(sql)
            .fetch_one(st.pg_pool())
            .await
            .unwrap()
    } else {
        sqlx::query_scalar(sql)
            .fetch_one(st.sqlite_pool())
            .await
            .unwrap()
    }
}

both!(a_large_import_is_staged_in_batches_and_moved_whole, |st| {
    let st = st.staging_large_imports();
    // 60,000 functions x 4 metrics: staged in several transactions, then moved (enough
    // batches that they outlast the small import's start on a busy machine). While the
    // batches are written, another import commits between two of them.
    let big = profile(functions(60_000, 1_000));
    let large = {
        let st = st.clone();
        tokio::spawn(async move {
            let file = InputFile::bytes("trace_stat/function0", big, None);
            st.import_run(&meta("large"), &[file], None).await
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while pending(&st).await == 0 {
        assert!(
            !large.is_finished(),
            "the large import ended without staging a batch"
        );
        assert!(Instant::now() < deadline, "no batch staged in 120 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The writer is held while the small import queues for it, so that the large one, with
    // batches still to stage, cannot finish before it (on a busy machine it could otherwise
    // stage every batch while the small one is parsed).
    let turn = st.hold_write_turn().await;
    let small = {
        let st = st.clone();
        tokio::spawn(async move {
            let small = InputFile::bytes("trace_stat/function0", profile(functions(3, 1)), None);
            st.import_run(&meta("small"), &[small], None).await
        })
    };
    while st.queued_imports() == 0 {
        assert!(Instant::now() < deadline, "the small import did not queue");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(turn);
    small.await.unwrap().unwrap();
    assert!(
        !large.is_finished(),
        "the small import committed only after the large one"
    );
    let out = large.await.unwrap().unwrap();
    assert_eq!(pending(&st).await, 0, "nothing left staged");
    let runs = st
        .runs(&RunQuery {
            build: Some("large"),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(runs[0].series as u64, out.series);
    let ids = large_series_of(&st, out.run_ids[0], "fn_29999.hit").await;
    let values = st.series_values(&ids).await.unwrap();
    assert_eq!(values[0].1, vec![30_999.0]);

    // The last transaction fails (the build label already stands for another commit): the
    // staged blocks go, and nothing of the import is stored.
    let file = InputFile::bytes("trace_stat/function0", profile(functions(30_000, 7)), None);
    let conflict = RunMeta {
        build: BuildMeta {
            label: "conflict".into(),
            commit: Some("aaaaaaaaaaaa".into()),
            ..Default::default()
        },
        ..meta("conflict")
    };
    st.import_run(
        &conflict,
        &[InputFile::bytes(
            "trace_stat/function0",
            profile(functions(1, 1)),
            None,
        )],
        None,
    )
    .await
    .unwrap();
    let refused = RunMeta {
        build: BuildMeta {
            label: "conflict".into(),
            commit: Some("bbbbbbbbbbbb".into()),
            ..Default::default()
        },
        ..meta("conflict")
    };
    let err = st.import_run(&refused, &[file], None).await.unwrap_err();
    assert!(matches!(err, store::Error::Invalid(_)), "{err:?}");
    assert_eq!(
        pending(&st).await,
        0,
        "the failed import's staged blocks are gone"
    );
    assert_eq!(st.runs(&RunQuery::default()).await.unwrap().len(), 3);
});
