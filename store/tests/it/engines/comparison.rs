//! The reads behind a comparison: builds by label or commit prefix, the runs of a selection,
//! their series and samples, latency traces, and series added directly.

use std::collections::HashMap;

use ingest::model::{Direction, Unit};
use store::{BuildInfo, BuildLookup, InputFile, NewSeries};

use super::{hb, meta, run_of};
use crate::fixture;

async fn with_commit(st: &store::Store, label: &str, commit: &str) {
    let mut m = meta(label, "hb");
    m.build.commit = Some(commit.into());
    m.build.kernel_version = Some(format!("{label}.0"));
    st.import_run(&m, &[hb("hb.txt", &[1.0])], None)
        .await
        .unwrap();
}

fn found(label: &str, commit: &str) -> BuildLookup {
    BuildLookup::Found(BuildInfo {
        label: label.into(),
        commit: Some(commit.into()),
        kernel_version: Some(format!("{label}.0")),
        config: None,
        cmdline: None,
    })
}

both!(builds_are_found_by_label_or_commit_prefix, |st| {
    with_commit(&st, "v1", "abcdef0123456789").await;
    with_commit(&st, "v2", "abcdef0999999999").await;
    with_commit(&st, "v3", "ABCDEF7777777777").await;
    with_commit(&st, "cafe123", "1234567890abcdef").await;

    assert_eq!(
        st.find_build("v1").await.unwrap(),
        found("v1", "abcdef0123456789")
    );
    assert_eq!(
        st.find_build("abcdef01").await.unwrap(),
        found("v1", "abcdef0123456789")
    );
    assert_eq!(
        st.find_build("ABCDEF01").await.unwrap(),
        found("v1", "abcdef0123456789"),
        "a commit prefix in any case"
    );
    assert_eq!(
        st.find_build("abcdef7").await.unwrap(),
        found("v3", "ABCDEF7777777777"),
        "a commit stored in upper case"
    );
    assert_eq!(
        st.find_build("abcdef0999999999").await.unwrap(),
        found("v2", "abcdef0999999999")
    );
    assert_eq!(
        st.find_build("abcdef0").await.unwrap(),
        BuildLookup::Ambiguous
    );
    assert_eq!(
        st.find_build("cafe123").await.unwrap(),
        found("cafe123", "1234567890abcdef"),
        "a label first"
    );
    assert_eq!(
        st.find_build("1234567").await.unwrap(),
        found("cafe123", "1234567890abcdef")
    );
    for missing in ["7654321", "abcdef", "zzzzzzzz", "V1", "abcdef0_", "abcdef%"] {
        assert_eq!(
            st.find_build(missing).await.unwrap(),
            BuildLookup::Missing,
            "{missing}"
        );
    }
});

both!(the_runs_of_a_selection_and_their_samples, |st| {
    let a = run_of(&st, "v1", "rig-a", "hb", &[1.0, 2.0, 3.0]).await;
    let b = run_of(&st, "v1", "rig-b", "hb", &[4.0, 5.0]).await;
    let c = run_of(&st, "v1", "rig-a", "pipe", &[6.0]).await;
    let d = run_of(&st, "v2", "rig-a", "hb", &[7.0]).await;

    assert_eq!(st.select_runs("v1", None, None).await.unwrap(), [a, b, c]);
    assert_eq!(
        st.select_runs("v1", Some("hb"), None).await.unwrap(),
        [a, b]
    );
    assert_eq!(
        st.select_runs("v1", Some("hb"), Some("rig-b"))
            .await
            .unwrap(),
        [b]
    );
    assert_eq!(
        st.select_runs("v1", None, Some("rig-a")).await.unwrap(),
        [a, c]
    );
    assert_eq!(st.select_runs("v2", None, None).await.unwrap(), [d]);
    assert!(st.select_runs("nope", None, None).await.unwrap().is_empty());

    assert_eq!(
        st.machines_of(&[a, b, c, d]).await.unwrap(),
        ["rig-a", "rig-b"]
    );
    assert_eq!(st.machines_of(&[b]).await.unwrap(), ["rig-b"]);
    assert!(st.machines_of(&[]).await.unwrap().is_empty());

    let mut series = st.series_of_runs(&[b, a, c]).await.unwrap();
    series.sort_by_key(|s| s.id);
    let keys: Vec<_> = series
        .iter()
        .map(|s| {
            (
                s.benchmark.as_str(),
                s.params_key.as_str(),
                s.metric.as_str(),
                s.scope.as_str(),
                s.statistic.as_deref(),
                s.label.as_deref(),
                s.unit.clone(),
                s.direction,
            )
        })
        .collect();
    let row = |bench| {
        (
            bench,
            "",
            "time",
            "all",
            None,
            None,
            Unit::Seconds,
            Direction::LowerIsBetter,
        )
    };
    assert_eq!(keys, [row("hb"), row("hb"), row("pipe")]);
    assert!(st.series_of_runs(&[]).await.unwrap().is_empty());
    let (sa, sb) = (series[0].id, series[1].id);

    assert_eq!(
        st.series_values(&[sb, sa, sb, 999 << 16, sa | 5])
            .await
            .unwrap(),
        [(sa, vec![1.0, 2.0, 3.0]), (sb, vec![4.0, 5.0])],
        "by id, each once, unknown ids left out"
    );
    assert!(st.series_values(&[]).await.unwrap().is_empty());
    let of_b: Vec<(i64, Vec<f64>)> = st
        .run_series(b)
        .await
        .unwrap()
        .into_iter()
        .map(|s| (s.id, s.values))
        .collect();
    assert_eq!(of_b, [(sb, vec![4.0, 5.0])]);
});

both!(latency_traces_of_runs, |st| {
    let lat = |f: &str| InputFile::path(fixture(&format!("latency/{f}")), None);
    let plain = run_of(&st, "v1", "rig", "hb", &[1.0]).await;
    let one = st
        .import_run(
            &meta("v1", "irqsoff"),
            &[lat("doc54_irqsoff_3.8.0_16us.txt")],
            None,
        )
        .await
        .unwrap()
        .run_ids[0];
    let two = st
        .import_run(
            &meta("v2", "irqsoff"),
            &[
                lat("doc54_irqsoff_3.8.0_259us.txt"),
                hb("hb.txt", &[2.0]),
                lat("doc54_irqsoff_3.8.0_71us_function-trace.txt"),
            ],
            None,
        )
        .await
        .unwrap()
        .run_ids[0];

    let arts = st.latency_artifacts(&[two, plain, one], 10).await.unwrap();
    let rows: Vec<(i64, i64, &str)> = arts
        .iter()
        .map(|a| (a.run_id, a.seq, a.file_name.as_str()))
        .collect();
    let name = |f: &str| fixture(&format!("latency/{f}")).display().to_string();
    let (n16, n259, n71) = (
        name("doc54_irqsoff_3.8.0_16us.txt"),
        name("doc54_irqsoff_3.8.0_259us.txt"),
        name("doc54_irqsoff_3.8.0_71us_function-trace.txt"),
    );
    assert_eq!(
        rows,
        [
            (one, 0, n16.as_str()),
            (two, 0, n259.as_str()),
            (two, 2, n71.as_str())
        ]
    );
    for a in &arts {
        assert!(serde_json::from_str::<serde_json::Value>(&a.meta_json).is_ok());
        assert!(serde_json::from_str::<serde_json::Value>(&a.extra_json).is_ok());
    }
    let firsts = st.latency_artifacts(&[one, two], 2).await.unwrap();
    assert_eq!(
        firsts.iter().map(|a| (a.run_id, a.seq)).collect::<Vec<_>>(),
        [(one, 0), (two, 0)]
    );
    assert_eq!(
        st.latency_artifacts(&[one, two], -1).await.unwrap().len(),
        3
    );
    assert!(st.latency_artifacts(&[one], 0).await.unwrap().is_empty());
    assert!(st.latency_artifacts(&[plain], 10).await.unwrap().is_empty());
    assert!(st.latency_artifacts(&[], 10).await.unwrap().is_empty());

    let samples = st.latency_samples(&[plain, one, two]).await.unwrap();
    let mut expected: HashMap<i64, Vec<f64>> = HashMap::new();
    for run in [one, two] {
        for s in st.run_series(run).await.unwrap() {
            if s.metric == "latency" && s.label.is_none() && s.statistic.is_none() {
                expected.entry(run).or_default().extend(s.values);
            }
        }
    }
    assert_eq!(samples, expected);
    assert_eq!(samples[&one], [16e-6]);
    assert_eq!(samples[&two].len(), 2);
    assert!(st.latency_samples(&[plain]).await.unwrap().is_empty());
    assert!(st.latency_samples(&[]).await.unwrap().is_empty());
});

both!(series_added_to_a_run_read_back, |st| {
    let run = run_of(&st, "v1", "rig", "hb", &[1.0]).await;
    let generation = st.generation().await.unwrap();
    let ids = st
        .add_series(&[
            NewSeries {
                run_id: run,
                metric: "ops",
                unit: "ops/s",
                direction: "higher_is_better",
                scope: "all",
                label: None,
                statistic: None,
                values: &[10.0, 11.5, f64::MAX],
            },
            NewSeries {
                run_id: run,
                metric: "ops",
                unit: "ops/s",
                direction: "neutral",
                scope: "cpu1",
                label: Some("tuned"),
                statistic: Some("p99"),
                values: &[-0.0, 1e-300],
            },
        ])
        .await
        .unwrap();
    assert_eq!(st.generation().await.unwrap(), generation, "no run added");
    let mut series = st.series_of_runs(&[run]).await.unwrap();
    series.sort_by_key(|s| s.id);
    assert_eq!(series.len(), 3);
    assert_eq!(series[1].id, ids[0]);
    assert_eq!(series[1].unit, Unit::Other("ops/s".into()));
    assert_eq!(series[1].direction, Direction::HigherIsBetter);
    assert_eq!(
        (
            series[2].id,
            series[2].scope.as_str(),
            series[2].label.as_deref(),
            series[2].statistic.as_deref(),
            series[2].direction
        ),
        (
            ids[1],
            "cpu1",
            Some("tuned"),
            Some("p99"),
            Direction::Neutral
        )
    );
    let values = st.series_values(&ids).await.unwrap();
    assert_eq!(values[0], (ids[0], vec![10.0, 11.5, f64::MAX]));
    assert_eq!(values[1].0, ids[1]);
    let bits: Vec<u64> = values[1].1.iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, [(-0.0f64).to_bits(), 1e-300f64.to_bits()]);
    assert_eq!(st.total_samples().await.unwrap(), 6);
    assert!(st.add_series(&[]).await.unwrap().is_empty());
});

/// (benchmark, params, metric, scope, statistic, label, unit, direction, samples) of a series.
type Listed = (
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    Direction,
    Vec<f64>,
);

both!(a_visit_of_blocks_gives_each_series_with_its_samples, |st| {
    let d = tempfile::tempdir().unwrap();
    let cpus: Vec<Vec<(&str, u64, &str)>> = (0..3)
        .map(|cpu| {
            vec![
                ("rcu_note_context_switch", 100 + cpu, "10.5"),
                ("__schedule", 200 + cpu, "20.5"),
            ]
        })
        .collect();
    let mut m = meta("v1", "profile");
    m.params.insert("load".into(), "idle \"q\"".into());
    let profile = st
        .import_run(&m, &crate::per_cpu_files(d.path(), &cpus), None)
        .await
        .unwrap()
        .run_ids[0];
    let hb_run = run_of(&st, "v1", "rig", "hb", &[1.0, 2.0, 3.0]).await;
    st.add_series(&[NewSeries {
        run_id: hb_run,
        metric: "ops \"x\"';--",
        unit: "ops/s",
        direction: "higher_is_better",
        scope: "cpu1",
        label: Some("tuned ü"),
        statistic: Some("p99"),
        values: &[3.0, -0.0, 7.5],
    }])
    .await
    .unwrap();
    let runs = [hb_run, profile];

    // The two-step read: series, then their samples by id.
    let two_step = |keep: fn(&str) -> bool| {
        let st = &st;
        async move {
            let series = st.series_of_runs_where(&runs, keep).await.unwrap();
            let ids: Vec<i64> = series.iter().map(|s| s.id).collect();
            let values: HashMap<i64, Vec<f64>> =
                st.series_values(&ids).await.unwrap().into_iter().collect();
            series
                .into_iter()
                .map(|s| {
                    (
                        s.benchmark,
                        s.params_key,
                        s.metric,
                        s.scope,
                        s.statistic,
                        s.label,
                        s.unit.to_string(),
                        s.direction,
                        values[&s.id].clone(),
                    )
                })
                .collect::<Vec<Listed>>()
        }
    };
    let visited = |keep: fn(&str) -> bool| {
        let st = &st;
        async move {
            let mut out: Vec<Listed> = Vec::new();
            st.visit_series_of_runs(&runs, keep, |b| {
                for s in &b.series {
                    out.push((
                        b.benchmark.to_string(),
                        b.params_key.to_string(),
                        b.metric.to_string(),
                        s.scope.to_string(),
                        b.statistic.map(str::to_string),
                        b.label.map(str::to_string),
                        b.unit.to_string(),
                        b.direction,
                        s.samples.to_vec(),
                    ));
                }
            })
            .await
            .unwrap();
            out
        }
    };
    let all = two_step(|_| true).await;
    assert!(all.len() > 12, "{}", all.len());
    assert_eq!(visited(|_| true).await, all);
    let quoted = all.iter().find(|s| s.2.starts_with("ops")).unwrap();
    assert_eq!(quoted.4.as_deref(), Some("p99"));
    assert_eq!(
        quoted.8.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        [3.0f64, -0.0, 7.5].map(f64::to_bits)
    );
    assert!(
        all.iter().any(|s| s.1.contains("idle")),
        "the run's parameters"
    );

    // A run's series, sorted by metric, scope, label and statistic, none before any.
    let one = [1.0];
    let with = |label, statistic| NewSeries {
        run_id: hb_run,
        metric: "m",
        unit: "s",
        direction: "neutral",
        scope: "all",
        label,
        statistic,
        values: &one,
    };
    st.add_series(&[
        with(Some("b"), None),
        with(None, Some("p99")),
        with(None, None),
        with(Some("a"), Some("p50")),
    ])
    .await
    .unwrap();
    let of_m: Vec<(Option<String>, Option<String>)> = st
        .run_series(hb_run)
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.metric == "m")
        .map(|s| (s.label, s.statistic))
        .collect();
    let own = |l: Option<&str>, s: Option<&str>| (l.map(String::from), s.map(String::from));
    assert_eq!(
        of_m,
        [
            own(None, None),
            own(None, Some("p99")),
            own(Some("a"), Some("p50")),
            own(Some("b"), None)
        ]
    );

    let hits = two_step(|m| m.ends_with(".hit")).await;
    assert!(!hits.is_empty() && hits.len() < all.len());
    assert_eq!(visited(|m| m.ends_with(".hit")).await, hits);
    assert!(visited(|_| false).await.is_empty());
});
