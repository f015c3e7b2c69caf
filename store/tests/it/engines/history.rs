//! Histories: builds placed on branches (upload order, after a parent, by commit time, in git
//! order) and the series that follow one key over a branch's builds.

use store::{BranchBuild, Error, HistoryKey, KeyFilter, NewSeries, Placement, Store};

use super::{build_id, meta};

const C: [&str; 4] = [
    "1111111111aaaaaaaaaa",
    "2222222222bbbbbbbbbb",
    "3333333333cccccccccc",
    "4444444444dddddddddd",
];

/// A run of build `b{i+1}` (commit `C[i]`) on `machine`; the run id.
async fn run_at(st: &Store, i: usize, machine: &str, times: &[f64]) -> i64 {
    let mut m = meta(&format!("b{}", i + 1), "hb");
    m.build.commit = Some(C[i].into());
    m.machine = machine.into();
    st.import_run(&m, &[super::hb("hb.txt", times)], None)
        .await
        .unwrap()
        .run_ids[0]
}

/// A branch's build labels, newest first, with their positions.
async fn order(st: &Store, branch: &str) -> Vec<(String, i64)> {
    st.branch_builds(branch, -1)
        .await
        .unwrap()
        .into_iter()
        .map(|b| (b.label, b.position))
        .collect()
}

fn labels(list: &[(&str, i64)]) -> Vec<(String, i64)> {
    list.iter().map(|&(l, p)| (l.to_string(), p)).collect()
}

fn placed(branch: &str, parent: Option<&str>, commit_time: Option<i64>) -> Placement {
    Placement {
        branch: branch.into(),
        parent: parent.map(str::to_string),
        commit_time,
    }
}

both!(builds_are_placed_on_branches_in_order, |st| {
    let r1 = run_at(&st, 0, "rig", &[1.0]).await;
    let r3 = run_at(&st, 2, "rig", &[3.0]).await;
    let (b1, b3) = (build_id(&st, "b1").await, build_id(&st, "b3").await);
    assert_eq!(
        st.builds_to_place(&[r3, r1, r1, r3 + 1000], "main")
            .await
            .unwrap(),
        [b1, b3],
        "sorted, each once, unknown runs left out"
    );

    // Git order known before the build in the middle is imported.
    assert_eq!(
        st.import_commit_order("git", &[C[0].into(), C[1].into(), C[2].into()])
            .await
            .unwrap(),
        2
    );
    assert_eq!(order(&st, "git").await, labels(&[("b3", 1), ("b1", 0)]));
    run_at(&st, 1, "rig", &[2.0]).await;
    let b2 = build_id(&st, "b2").await;
    let git = st
        .place_build(b2, &placed("git", None, None))
        .await
        .unwrap();
    assert_eq!(
        order(&st, "git").await,
        labels(&[("b3", 2), ("b2", 1), ("b1", 0)]),
        "git order puts it in the middle"
    );
    assert_ne!(
        st.place_build(b2, &Placement::main()).await.unwrap(),
        git,
        "another branch"
    );

    // Upload order, then a parent: right after it.
    let main = st.place_build(b1, &Placement::main()).await.unwrap();
    assert_eq!(
        st.builds_to_place(&[r3, r1], "main").await.unwrap(),
        [b3],
        "a build on the branch is not placed again"
    );
    assert_eq!(
        st.builds_to_place(&[r3, r1], "elsewhere").await.unwrap(),
        [b1, b3],
        "a build is placed on each branch"
    );
    st.place_build(b3, &Placement::main()).await.unwrap();
    assert_eq!(
        order(&st, "main").await,
        labels(&[("b3", 2), ("b1", 1), ("b2", 0)])
    );
    run_at(&st, 3, "rig", &[4.0]).await;
    let b4 = build_id(&st, "b4").await;
    assert_eq!(
        st.place_build(b4, &placed("main", Some(C[1]), None))
            .await
            .unwrap(),
        main
    );
    assert_eq!(
        order(&st, "main").await,
        labels(&[("b3", 3), ("b1", 2), ("b4", 1), ("b2", 0)])
    );
    // A build keeps its place.
    st.place_build(b4, &placed("main", None, Some(1)))
        .await
        .unwrap();
    assert_eq!(order(&st, "main").await.len(), 4);

    // Commit times; a parent named by label.
    st.place_build(b1, &placed("timed", None, Some(100)))
        .await
        .unwrap();
    st.place_build(b3, &placed("timed", None, Some(300)))
        .await
        .unwrap();
    st.place_build(b2, &placed("timed", None, Some(200)))
        .await
        .unwrap();
    st.place_build(b4, &placed("timed", Some("b1"), None))
        .await
        .unwrap();
    assert_eq!(
        order(&st, "timed").await,
        labels(&[("b3", 3), ("b2", 2), ("b4", 1), ("b1", 0)])
    );

    let newest = st.branch_builds("main", 2).await.unwrap();
    assert_eq!(
        newest,
        [
            BranchBuild {
                build_id: b3,
                label: "b3".into(),
                commit: Some(C[2].into()),
                position: 3,
                created_at: newest[0].created_at,
            },
            BranchBuild {
                build_id: b1,
                label: "b1".into(),
                commit: Some(C[0].into()),
                position: 2,
                created_at: newest[1].created_at,
            },
        ]
    );
    assert!(newest.iter().all(|b| b.created_at > 0));
    assert!(st.branch_builds("ghost", 10).await.unwrap().is_empty());
    assert!(st.branch_builds("main", 0).await.unwrap().is_empty());

    // A new commit order: known commits in git order, the others after them as they were.
    assert_eq!(
        st.import_commit_order("main", &[C[3].into(), C[2].into()])
            .await
            .unwrap(),
        2
    );
    assert_eq!(
        order(&st, "main").await,
        labels(&[("b1", 3), ("b2", 2), ("b3", 1), ("b4", 0)])
    );
    assert_eq!(
        st.import_commit_order("git", &C.map(String::from))
            .await
            .unwrap(),
        4,
        "builds of known commits join the branch"
    );
    assert_eq!(
        order(&st, "git").await,
        labels(&[("b4", 3), ("b3", 2), ("b2", 1), ("b1", 0)])
    );

    let err = st
        .place_build(b1, &placed(" ", None, None))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
});

/// Adds a whole-run series `metric` to `run`.
async fn add(st: &Store, run: i64, metric: &str, label: Option<&str>, values: &[f64]) {
    st.add_series(&[NewSeries {
        run_id: run,
        metric,
        unit: "ops/s",
        direction: "higher_is_better",
        scope: "all",
        label,
        statistic: None,
        values,
    }])
    .await
    .unwrap();
}

both!(a_history_follows_one_key_over_a_branch, |st| {
    let r1 = run_at(&st, 0, "rig-a", &[1.0, 2.0, 3.0]).await;
    let r2 = run_at(&st, 1, "rig-a", &[2.0, 3.0, 4.0]).await;
    let r3 = run_at(&st, 2, "rig-a", &[5.0, 6.0, 7.0]).await;
    let rb = run_at(&st, 0, "rig-b", &[9.0]).await;
    add(&st, r1, "ops", None, &[10.0, 11.0, 12.0]).await;
    // Not whole-run series: labelled, or of one CPU.
    add(&st, r2, "labelled", Some("x"), &[1.0, 1.0, 1.0]).await;
    st.add_series(&[NewSeries {
        run_id: r3,
        metric: "percpu",
        unit: "s",
        direction: "lower_is_better",
        scope: "cpu0",
        label: None,
        statistic: None,
        values: &[1.0, 1.0, 1.0],
    }])
    .await
    .unwrap();
    assert!(
        st.history_keys(&KeyFilter::default())
            .await
            .unwrap()
            .is_empty(),
        "no build is on a branch yet"
    );
    for b in ["b1", "b2", "b3"] {
        let id = build_id(&st, b).await;
        st.place_build(id, &Placement::main()).await.unwrap();
    }

    let keys = st.history_keys_of_runs(&[r1]).await.unwrap();
    let short = |k: &HistoryKey| {
        (
            k.branch.clone(),
            k.machine.clone(),
            k.benchmark.clone(),
            k.params_key.clone(),
            k.metric.clone(),
        )
    };
    let key = |machine: &str, metric: &str| {
        (
            "main".to_string(),
            machine.to_string(),
            "hb".to_string(),
            String::new(),
            metric.to_string(),
        )
    };
    assert_eq!(
        keys.iter().map(short).collect::<Vec<_>>(),
        [key("rig-a", "ops"), key("rig-a", "time")]
    );
    assert_eq!(
        st.history_keys_of_runs(&[r2, r1, r2, rb])
            .await
            .unwrap()
            .iter()
            .map(short)
            .collect::<Vec<_>>(),
        [
            key("rig-a", "ops"),
            key("rig-a", "time"),
            key("rig-b", "time")
        ]
    );
    let all = st.history_keys(&KeyFilter::default()).await.unwrap();
    assert_eq!(
        all.iter().map(short).collect::<Vec<_>>(),
        [
            key("rig-a", "ops"),
            key("rig-a", "time"),
            key("rig-b", "time")
        ]
    );
    let filtered = |f: KeyFilter| {
        let st = st.clone();
        async move {
            st.history_keys(&f)
                .await
                .unwrap()
                .iter()
                .map(short)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        filtered(KeyFilter {
            machine: Some("rig-b".into()),
            ..Default::default()
        })
        .await,
        [key("rig-b", "time")]
    );
    assert_eq!(
        filtered(KeyFilter {
            metric: Some("ops".into()),
            branch: Some("main".into()),
            benchmark: Some("hb".into()),
            params_key: Some(String::new()),
            ..Default::default()
        })
        .await,
        [key("rig-a", "ops")]
    );
    assert!(
        filtered(KeyFilter {
            branch: Some("ghost".into()),
            ..Default::default()
        })
        .await
        .is_empty()
    );

    let time = &all[1];
    let points = st.history_points(time).await.unwrap();
    let rows: Vec<_> = points
        .iter()
        .map(|p| {
            (
                p.label.as_str(),
                p.position,
                p.run_id,
                p.unit.as_str(),
                p.direction.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("b1", 0, r1, "s", "lower_is_better"),
            ("b2", 1, r2, "s", "lower_is_better"),
            ("b3", 2, r3, "s", "lower_is_better"),
        ]
    );
    assert_eq!(points[0].build_id, build_id(&st, "b1").await);
    let ids: Vec<i64> = points.iter().map(|p| p.series_id).collect();
    let values: Vec<Vec<f64>> = st
        .series_values(&ids)
        .await
        .unwrap()
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    assert_eq!(
        values,
        [
            vec![1.0, 2.0, 3.0],
            vec![2.0, 3.0, 4.0],
            vec![5.0, 6.0, 7.0]
        ]
    );
    let ops = st.history_points(&all[0]).await.unwrap();
    assert_eq!(
        ops.iter()
            .map(|p| (p.run_id, p.unit.as_str(), p.direction.as_str()))
            .collect::<Vec<_>>(),
        [(r1, "ops/s", "higher_is_better")]
    );
    let rig_b = st.history_points(&all[2]).await.unwrap();
    assert_eq!(
        rig_b.iter().map(|p| p.run_id).collect::<Vec<_>>(),
        [rb],
        "one machine's runs"
    );

    let whole = st.whole_run_series(3).await.unwrap();
    let rows: Vec<_> = whole
        .iter()
        .map(|s| (s.run_id, s.metric.as_str(), s.n, s.unit.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            (r1, "ops", 3, "ops/s"),
            (r1, "time", 3, "s"),
            (r2, "time", 3, "s"),
            (r3, "time", 3, "s"),
        ]
    );
    assert!(whole.iter().all(|s| s.benchmark == "hb"));
    assert_eq!(whole[1].series_id, points[0].series_id);
    assert_eq!(whole[0].direction, "higher_is_better");
    let every = st.whole_run_series(0).await.unwrap();
    assert_eq!(every.len(), 5);
    assert_eq!((every[4].run_id, every[4].n), (rb, 1));
    assert!(st.whole_run_series(4).await.unwrap().is_empty());
});

both!(an_import_names_the_histories_its_runs_add_to, |st| {
    // A sweep's block, a per-CPU profile (whose totals the import makes) and a plain run: the
    // keys the import names are the keys read back from its runs.
    let d = tempfile::tempdir().unwrap();
    let (sweep_meta, sweep) = crate::engines::seed001_sweep();
    let mut imports = vec![(sweep_meta, vec![sweep])];
    imports.push((
        meta("p1", "profile"),
        crate::per_cpu_files(
            d.path(),
            &[
                vec![("a", 10, "1.0"), ("b", 3, "2.0")],
                vec![("a", 11, "1.5")],
            ],
        ),
    ));
    imports.push((
        meta("h1", "hb"),
        vec![crate::engines::hb("hb.txt", &[1.0, 2.0])],
    ));
    let mut keys = Vec::new();
    // Every import's metrics at once, as a pass after several uploads asks for them.
    let (mut all_named, mut all_read) = (Vec::new(), Vec::new());
    for (m, files) in imports {
        let outcome = st.import_run(&m, &files, None).await.unwrap();
        for b in st.builds_to_place(&outcome.run_ids, "main").await.unwrap() {
            st.place_build(b, &Placement::main()).await.unwrap();
        }
        let named = outcome.history_metrics.as_deref().expect("a stored import");
        let read = st.history_keys_of_runs(&outcome.run_ids).await.unwrap();
        keys.push((m.benchmark.clone(), read.len()));
        assert_eq!(
            st.history_keys_of_metrics(named).await.unwrap(),
            read,
            "{}",
            m.benchmark
        );
        all_named.extend(named.iter().cloned());
        all_read.extend(read.iter().cloned());
        let again = st.import_run(&m, &files, None).await.unwrap();
        assert!(!again.created);
        assert_eq!(again.history_metrics, None, "nothing stored, nothing named");
    }
    all_read.sort();
    all_read.dedup();
    assert_eq!(
        st.history_keys_of_metrics(&all_named).await.unwrap(),
        all_read
    );
    assert!(all_read.len() >= 4, "{all_read:?}");
    // Runs of one history name the same keys: each key comes back once.
    let mut named = Vec::new();
    let mut runs = Vec::new();
    for (build, times) in [("h2", [3.0, 4.0]), ("h3", [5.0, 6.0])] {
        let files = vec![crate::engines::hb("hb.txt", &times)];
        let outcome = st
            .import_run(&meta(build, "hb"), &files, None)
            .await
            .unwrap();
        for b in st.builds_to_place(&outcome.run_ids, "main").await.unwrap() {
            st.place_build(b, &Placement::main()).await.unwrap();
        }
        named.extend(outcome.history_metrics.unwrap());
        runs.extend(outcome.run_ids);
    }
    let once = st.history_keys_of_metrics(&named).await.unwrap();
    assert!(once.windows(2).all(|w| w[0] < w[1]), "{once:?}");
    assert_eq!(once, st.history_keys_of_runs(&runs).await.unwrap());
    assert_eq!(once.len(), named.len() / 2);
    // The profile's totals are `a`'s three (`b` ran on one CPU: no total); the sweep's block
    // is labelled, so it has no history.
    let count = |b: &str| keys.iter().find(|k| k.0 == b).map(|k| k.1);
    assert_eq!(count("rcuperf"), Some(0));
    assert_eq!(count("profile"), Some(3), "{keys:?}");
    assert!(count("hb").is_some_and(|n| n >= 1), "{keys:?}");
});

/// A metric name JSON and SQL must carry as it is.
const ODD: &str = "odd \"name\" \\ ü\n\t'; --";

both!(long_histories_read_whole_or_after_a_run_as_stored, |st| {
    // 700 metrics a run (a profile's many: blocks over several hundred ids, the metrics found
    // by name), with an odd name, a build label with quotes, and a CPU's scope beside `all`.
    let mut runs = Vec::new();
    for (i, label) in ["b1", "b\"2\" 'x'"].iter().enumerate() {
        let run = st
            .import_run(
                &meta(label, "hb"),
                &[super::super::hb("hb.txt", &[1.0])],
                None,
            )
            .await
            .unwrap()
            .run_ids[0];
        let names: Vec<String> = (0..700)
            .map(|m| format!("m{m:03}"))
            .chain([ODD.to_string()])
            .collect();
        let values: Vec<[f64; 2]> = (0..names.len())
            .map(|m| [m as f64 + i as f64 * 1000.0, 0.5 + i as f64])
            .collect();
        let mut series: Vec<NewSeries<'_>> = names
            .iter()
            .zip(&values)
            .map(|(metric, v)| NewSeries {
                run_id: run,
                metric,
                unit: "ops/s",
                direction: "higher_is_better",
                scope: "all",
                label: None,
                statistic: None,
                values: v,
            })
            .collect();
        series.push(NewSeries {
            scope: "cpu0",
            values: &[-1.0],
            ..series[0]
        });
        st.add_series(&series).await.unwrap();
        let id = build_id(&st, label).await;
        st.place_build(id, &Placement::main()).await.unwrap();
        runs.push(run);
    }
    let keys: Vec<HistoryKey> = st
        .history_keys_of_runs(&runs[..1])
        .await
        .unwrap()
        .into_iter()
        .filter(|k| k.metric != "time")
        .collect();
    assert_eq!(keys.len(), 701);
    let expected = |k: &HistoryKey, i: usize| -> Vec<f64> {
        let m = match k.metric.strip_prefix('m') {
            Some(n) => n.parse::<f64>().unwrap(),
            None => 700.0,
        };
        vec![m + i as f64 * 1000.0, 0.5 + i as f64]
    };
    let whole = st.history_samples_many(&keys).await.unwrap();
    let points = st.history_points_many(&keys).await.unwrap();
    for ((k, read), pts) in keys.iter().zip(&whole).zip(&points) {
        let got: Vec<_> = read
            .iter()
            .map(|(p, v)| (p.label.as_str(), p.position, p.run_id, v.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("b1", 0, runs[0], expected(k, 0)),
                ("b\"2\" 'x'", 1, runs[1], expected(k, 1)),
            ],
            "{:?}",
            k.metric
        );
        assert!(read.iter().all(|(p, _)| p.unit == "ops/s"));
        assert!(read.iter().all(|(p, _)| p.direction == "higher_is_better"));
        let alone: Vec<i64> = pts.iter().map(|p| p.series_id).collect();
        let with: Vec<i64> = read.iter().map(|(p, _)| p.series_id).collect();
        assert_eq!(alone, with, "points alone name the same series");
    }
    // A few metrics are found by id: the same points.
    let few = [keys[0].clone(), keys[699].clone(), keys[700].clone()];
    assert_eq!(few[2].metric, ODD);
    let read = st.history_samples_many(&few).await.unwrap();
    for (k, r) in few.iter().zip(&read) {
        let i = keys.iter().position(|x| x == k).unwrap();
        assert_eq!(r, &whole[i]);
    }
    // After the first run: the second only.
    let after = st
        .history_samples_after(&keys, &vec![runs[0]; keys.len()])
        .await
        .unwrap();
    for (a, w) in after.iter().zip(&whole) {
        assert_eq!(a.as_slice(), &w[1..]);
    }
});
