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
