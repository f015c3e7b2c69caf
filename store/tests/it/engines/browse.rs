//! The listings behind the pages: builds, machines and benchmarks with their counts, in the
//! same order on both engines (text sorts byte by byte: upper case before lower case).

use std::collections::BTreeMap;

use store::{BenchmarkCount, InputFile, NewSeries};

use super::{hb, meta, run_of};

fn facts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|&(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Imports `times` of `build` on `machine` with the machine's `facts`.
async fn with_facts(
    st: &store::Store,
    build: &str,
    machine: &str,
    benchmark: &str,
    machine_facts: &[(&str, &str)],
    times: &[f64],
) -> i64 {
    let mut m = meta(build, benchmark);
    m.machine = machine.into();
    m.machine_facts = facts(machine_facts);
    if build == "v6.1" {
        m.build.commit = Some("abcdef0123".into());
        m.build.kernel_version = Some("6.1.0".into());
    }
    st.import_run(&m, &[hb("hb.txt", times)], None)
        .await
        .unwrap()
        .run_ids[0]
}

both!(
    builds_machines_and_benchmarks_are_listed_with_counts,
    |st| {
        assert_eq!(st.generation().await.unwrap(), 0);
        assert!(st.build_labels_newest(-1).await.unwrap().is_empty());
        with_facts(
            &st,
            "v6.1",
            "rig-a",
            "hackbench",
            &[("cpus", "4")],
            &[1.0, 2.0],
        )
        .await;
        with_facts(
            &st,
            "v6.1",
            "Rig-B",
            "hackbench",
            &[("cpus", "8"), ("arch", "arm64")],
            &[3.0],
        )
        .await;
        with_facts(&st, "v6.1", "rig-a", "Pipe", &[], &[4.0]).await;
        run_of(&st, "V6.2", "rig-a", "hackbench", &[5.0, 6.0, 7.0]).await;
        let last = run_of(&st, "a1", "rig-a", "hackbench", &[8.0]).await;
        assert_eq!(st.generation().await.unwrap(), last);

        let builds = st.build_summaries().await.unwrap();
        let rows: Vec<_> = builds
            .iter()
            .map(|b| {
                (
                    b.label.as_str(),
                    b.commit.as_deref(),
                    b.kernel_version.as_deref(),
                    b.runs,
                    b.machines,
                    b.benchmarks,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("a1", None, None, 1, 1, 1),
                ("V6.2", None, None, 1, 1, 1),
                ("v6.1", Some("abcdef0123"), Some("6.1.0"), 3, 2, 2),
            ],
            "newest first"
        );
        assert!(builds.iter().all(|b| b.created_at > 0));

        let detail = st.build_by_label("v6.1").await.unwrap().unwrap();
        assert_eq!(detail.build.label, "v6.1");
        assert_eq!(detail.build.commit.as_deref(), Some("abcdef0123"));
        let counts: Vec<(&str, i64)> = detail
            .benchmarks
            .iter()
            .map(|BenchmarkCount { benchmark, runs }| (benchmark.as_str(), *runs))
            .collect();
        assert_eq!(counts, [("Pipe", 1), ("hackbench", 2)]);
        assert_eq!(detail.machines, ["Rig-B", "rig-a"]);
        assert!(st.build_by_label("V6.1").await.unwrap().is_none());
        assert!(st.build_by_label("nope").await.unwrap().is_none());
        let by_id = st.build_by_id(detail.build.id).await.unwrap().unwrap();
        assert_eq!(
            (
                by_id.label,
                by_id.commit,
                by_id.kernel_version,
                by_id.config,
                by_id.cmdline,
                by_id.created_at
            ),
            (
                detail.build.label.clone(),
                detail.build.commit.clone(),
                detail.build.kernel_version.clone(),
                None,
                None,
                detail.build.created_at
            )
        );
        assert!(
            st.build_by_id(detail.build.id + 1000)
                .await
                .unwrap()
                .is_none()
        );

        let benches: Vec<_> = st
            .benchmark_summaries()
            .await
            .unwrap()
            .into_iter()
            .map(|b| (b.name, b.runs, b.builds, b.machines))
            .collect();
        assert_eq!(
            benches,
            [
                ("Pipe".to_string(), 1, 1, 1),
                ("hackbench".to_string(), 4, 3, 2)
            ]
        );
        assert_eq!(st.benchmark_names().await.unwrap(), ["Pipe", "hackbench"]);
        assert_eq!(st.total_samples().await.unwrap(), 8);

        let machines = st.machine_summaries().await.unwrap();
        let rows: Vec<_> = machines
            .iter()
            .map(|m| (m.name.as_str(), m.facts.clone(), m.runs, m.builds))
            .collect();
        assert_eq!(
            rows,
            [
                ("Rig-B", facts(&[("arch", "arm64"), ("cpus", "8")]), 1, 1),
                ("rig-a", facts(&[("cpus", "4")]), 4, 3),
            ]
        );
        assert!(machines.iter().all(|m| m.created_at > 0));
        assert_eq!(st.machine_names().await.unwrap(), ["Rig-B", "rig-a"]);

        let rig = st.machine("rig-a").await.unwrap().unwrap();
        assert_eq!(rig.summary.name, "rig-a");
        assert_eq!(rig.summary.facts, facts(&[("cpus", "4")]));
        assert_eq!((rig.summary.runs, rig.summary.builds), (4, 3));
        assert_eq!(rig.summary.created_at, machines[1].created_at);
        assert_eq!(rig.benchmarks, ["Pipe", "hackbench"]);
        assert_eq!(rig.build_labels, ["a1", "V6.2", "v6.1"]);
        let b = st.machine("Rig-B").await.unwrap().unwrap();
        assert_eq!((b.benchmarks.len(), b.build_labels.len()), (1, 1));
        assert!(st.machine("rig-A").await.unwrap().is_none());

        assert_eq!(
            st.build_labels_sorted().await.unwrap(),
            ["V6.2", "a1", "v6.1"]
        );
        assert_eq!(
            st.build_labels_newest(-1).await.unwrap(),
            ["a1", "V6.2", "v6.1"]
        );
        assert_eq!(st.build_labels_newest(2).await.unwrap(), ["a1", "V6.2"]);
        assert!(st.build_labels_newest(0).await.unwrap().is_empty());
    }
);

both!(machine_facts_are_updated_by_later_imports, |st| {
    with_facts(
        &st,
        "v1",
        "rig",
        "hb",
        &[("cpus", "8"), ("arch", "arm64")],
        &[1.0],
    )
    .await;
    with_facts(&st, "v2", "rig", "hb", &[("cpus", "16")], &[2.0]).await;
    let rig = st.machine("rig").await.unwrap().unwrap();
    assert_eq!(
        rig.summary.facts,
        facts(&[("arch", "arm64"), ("cpus", "16")])
    );
    assert_eq!(rig.build_labels, ["v2", "v1"]);
    let run = st.select_runs("v1", None, None).await.unwrap()[0];
    assert_eq!(
        st.run(run).await.unwrap().unwrap().machine_facts,
        rig.summary.facts,
        "facts are the machine's, as last reported"
    );
    // Another run on a known machine adds a run, not a machine.
    let mut m = meta("v3", "hb");
    m.machine = "rig".into();
    st.import_run(
        &m,
        &[InputFile::bytes(
            "t.txt",
            b"Time: 3\n".to_vec(),
            Some("hackbench".into()),
        )],
        None,
    )
    .await
    .unwrap();
    assert_eq!(st.machine_summaries().await.unwrap().len(), 1);
    assert_eq!(st.machine("rig").await.unwrap().unwrap().summary.runs, 3);
});

/// Names whose byte order differs from a dictionary's: case, punctuation, non-ASCII.
const NAMES: [&str; 9] = ["b", "B", "a b", "a-b", "a_b", "\u{e9}", "z", "Z", "ab"];

fn byte_order() -> Vec<String> {
    let mut v: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

both!(names_sort_byte_by_byte, |st| {
    let n = NAMES.len();
    let mut runs = Vec::new();
    for i in 0..n {
        runs.push(
            run_of(
                &st,
                NAMES[i],
                NAMES[(i + 1) % n],
                NAMES[(i + 2) % n],
                &[1.0],
            )
            .await,
        );
    }
    let sorted = byte_order();
    assert_eq!(st.build_labels_sorted().await.unwrap(), sorted);
    assert_eq!(st.machine_names().await.unwrap(), sorted);
    assert_eq!(st.benchmark_names().await.unwrap(), sorted);
    let names = |v: Vec<String>| v;
    assert_eq!(
        names(
            st.machine_summaries()
                .await
                .unwrap()
                .into_iter()
                .map(|m| m.name)
                .collect()
        ),
        sorted
    );
    assert_eq!(
        names(
            st.benchmark_summaries()
                .await
                .unwrap()
                .into_iter()
                .map(|b| b.name)
                .collect()
        ),
        sorted
    );
    assert_eq!(
        st.machines_of(&runs).await.unwrap(),
        sorted,
        "sorted in Rust"
    );
    for extra in 0..n {
        // Every build on a second machine and benchmark too.
        let (machine, benchmark) = (NAMES[(extra + 4) % n], NAMES[(extra + 6) % n]);
        run_of(&st, NAMES[extra], machine, benchmark, &[2.0]).await;
    }
    let detail = st.build_by_label("b").await.unwrap().unwrap();
    let mut machines = vec![NAMES[1].to_string(), NAMES[4].to_string()];
    machines.sort();
    assert_eq!(detail.machines, machines);
    let mut benches = vec![NAMES[2].to_string(), NAMES[6].to_string()];
    benches.sort();
    assert_eq!(
        names(detail.benchmarks.into_iter().map(|b| b.benchmark).collect()),
        benches
    );
    let rig = st.machine("a b").await.unwrap().unwrap();
    let mut benches: Vec<String> = rig.benchmarks.clone();
    benches.sort();
    assert_eq!(rig.benchmarks, benches);
    assert_eq!(rig.benchmarks.len(), 2);

    let values = [1.0];
    let series: Vec<NewSeries<'_>> = NAMES
        .iter()
        .map(|&metric| NewSeries {
            run_id: runs[0],
            metric,
            unit: "s",
            direction: "neutral",
            scope: "all",
            label: None,
            statistic: None,
            values: &values,
        })
        .collect();
    st.add_series(&series).await.unwrap();
    let mut metrics = byte_order();
    metrics.insert(
        metrics.binary_search(&"time".to_string()).unwrap_err(),
        "time".into(),
    );
    assert_eq!(
        names(
            st.run_series(runs[0])
                .await
                .unwrap()
                .into_iter()
                .map(|s| s.metric)
                .collect()
        ),
        metrics
    );
});

/// The same on a database whose default collation is not byte order.
#[tokio::test]
async fn names_sort_byte_by_byte_on_an_icu_database() {
    let Some(st) = super::pg_store_icu().await else {
        return;
    };
    names_sort_byte_by_byte::check(st).await;
}
