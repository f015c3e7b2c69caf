//! Imports and the reads of what they stored: run lists, one run's facts and series, the files
//! byte for byte, sweeps, and failed imports that leave nothing behind.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use store::{Error, InputFile, NewSeries, RunQuery, RunSummary, Store};

use super::{hb, meta, run_of, seed001_sweep};
use crate::{fixture, seed004_files};

both!(import_then_list_and_read_back, |st| {
    let path = fixture("trace_stat/seed004_head_function_star_4cpu_collapsed_ws.txt");
    let file = InputFile::path(&path, None);
    let out = st
        .import_run(&meta("v1", "profile"), &[file], None)
        .await
        .unwrap();
    assert!(out.created);
    assert!(out.series > 0 && out.samples > 0);
    let again = st
        .import_run(
            &meta("v1", "profile"),
            &[InputFile::path(&path, None)],
            None,
        )
        .await
        .unwrap();
    assert!(!again.created, "the same import twice stores one run");
    assert_eq!(again.run_ids, out.run_ids);
    assert_eq!((again.series, again.samples), (out.series, out.samples));
    let runs = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].series as u64, out.series);
    assert_eq!(runs[0].samples as u64, out.samples);
    let mut bytes = Vec::new();
    let arts = st.run_artifacts(out.run_ids[0], None).await.unwrap();
    st.read_artifact(arts[0].artifact_id, &mut bytes)
        .await
        .unwrap();
    assert_eq!(
        bytes,
        std::fs::read(&path).unwrap(),
        "artifacts come back byte for byte"
    );
    st.close().await;
});

fn ids(runs: &[RunSummary]) -> Vec<i64> {
    runs.iter().map(|r| r.id).collect()
}

both!(runs_are_listed_filtered_and_limited, |st| {
    assert!(st.runs(&RunQuery::default()).await.unwrap().is_empty());
    let a = run_of(&st, "v1", "rig-a", "hb", &[1.0, 2.0, 3.0]).await;
    let b = run_of(&st, "v1", "rig-b", "hb", &[4.0]).await;
    let c = run_of(&st, "v2", "rig-a", "hb-pipe", &[5.0, 6.0]).await;
    assert!(a < b && b < c);

    let all = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!(ids(&all), [a, b, c]);
    let first = &all[0];
    assert_eq!(
        (
            first.build.as_str(),
            first.machine.as_str(),
            first.benchmark.as_str(),
            first.params_key.as_str()
        ),
        ("v1", "rig-a", "hb", "")
    );
    assert!(first.created_at > 0);
    let counts: Vec<(i64, i64)> = all.iter().map(|r| (r.series, r.samples)).collect();
    assert_eq!(counts, [(1, 3), (1, 1), (1, 2)]);

    let q = |f: fn(&mut RunQuery<'static>)| {
        let mut q = RunQuery::default();
        f(&mut q);
        q
    };
    let list = async |q: RunQuery<'_>| ids(&st.runs(&q).await.unwrap());
    assert_eq!(list(q(|q| q.newest_first = true)).await, [c, b, a]);
    assert_eq!(
        list(q(|q| {
            q.newest_first = true;
            q.limit = Some(2);
        }))
        .await,
        [c, b]
    );
    assert_eq!(list(q(|q| q.limit = Some(1))).await, [a]);
    assert_eq!(list(q(|q| q.limit = Some(0))).await, Vec::<i64>::new());
    assert_eq!(
        list(q(|q| q.limit = Some(-1))).await,
        [a, b, c],
        "a negative limit is no limit"
    );
    assert_eq!(list(q(|q| q.build = Some("v1"))).await, [a, b]);
    assert_eq!(list(q(|q| q.machine = Some("rig-a"))).await, [a, c]);
    assert_eq!(list(q(|q| q.benchmark = Some("hb-pipe"))).await, [c]);
    assert_eq!(
        list(q(|q| {
            q.build = Some("v1");
            q.machine = Some("rig-a");
        }))
        .await,
        [a]
    );
    assert_eq!(
        list(q(|q| q.build = Some(""))).await,
        [a, b, c],
        "an empty filter is no filter"
    );
    assert_eq!(list(q(|q| q.build = Some("V1"))).await, Vec::<i64>::new());
    assert_eq!(
        list(q(|q| q.machine = Some("nope"))).await,
        Vec::<i64>::new()
    );
    // A page after a run, alone and with a filter and a limit.
    let after_c = RunQuery {
        newest_first: true,
        before: Some(c),
        ..RunQuery::default()
    };
    assert_eq!(list(after_c.clone()).await, [b, a]);
    let on_a = RunQuery {
        machine: Some("rig-a"),
        limit: Some(1),
        ..after_c.clone()
    };
    assert_eq!(list(on_a).await, [a]);
    let of_v2 = RunQuery {
        build: Some("v2"),
        ..after_c
    };
    assert_eq!(list(of_v2).await, Vec::<i64>::new());

    // Counted as listed, whatever the limit and page; past the cap, cap + 1.
    let count = async |q: RunQuery<'_>, cap| st.count_runs(&q, cap).await.unwrap();
    assert_eq!(count(RunQuery::default(), 10).await, 3);
    assert_eq!(
        count(
            q(|q| {
                q.limit = Some(1);
                q.before = Some(2);
            }),
            10
        )
        .await,
        3
    );
    assert_eq!(count(q(|q| q.build = Some("v1")), 10).await, 2);
    assert_eq!(count(q(|q| q.machine = Some("rig-a")), 10).await, 2);
    assert_eq!(count(q(|q| q.benchmark = Some("hb-pipe")), 10).await, 1);
    assert_eq!(count(q(|q| q.build = Some("")), 10).await, 3);
    assert_eq!(count(q(|q| q.machine = Some("nope")), 10).await, 0);
    let v1_on_a = q(|q| {
        q.build = Some("v1");
        q.machine = Some("rig-a");
        q.benchmark = Some("hb");
    });
    assert_eq!(count(v1_on_a, 10).await, 1);
    assert_eq!(count(RunQuery::default(), 2).await, 3, "more than the cap");
    assert_eq!(count(RunQuery::default(), 1).await, 2);
});

both!(a_run_reads_back_with_its_facts_series_and_values, |st| {
    let mut m = meta("v6.1", "hb");
    m.build.commit = Some("0123456789abcdef".into());
    m.build.kernel_version = Some("6.1.0".into());
    m.build.config = Some("CONFIG_X=y".into());
    m.build.cmdline = Some("quiet".into());
    m.machine_facts = BTreeMap::from([
        ("cpus".to_string(), "4".to_string()),
        ("arch".to_string(), "x86_64".to_string()),
    ]);
    m.params = BTreeMap::from([
        ("groups".to_string(), "6".to_string()),
        ("fds".to_string(), "2".to_string()),
    ]);
    let out = st
        .import_run(&m, &[hb("hb.txt", &[1.5, 2.5])], None)
        .await
        .unwrap();
    assert_eq!((out.series, out.samples), (1, 2));
    assert_eq!(
        out.formats,
        [("hb.txt".to_string(), "hackbench".to_string())]
    );
    let id = out.run_ids[0];

    let info = st.run(id).await.unwrap().unwrap();
    assert_eq!(info.id, id);
    assert_eq!(info.build.label, "v6.1");
    assert_eq!(info.build.commit.as_deref(), Some("0123456789abcdef"));
    assert_eq!(info.build.kernel_version.as_deref(), Some("6.1.0"));
    assert_eq!(info.build.config.as_deref(), Some("CONFIG_X=y"));
    assert_eq!(info.build.cmdline.as_deref(), Some("quiet"));
    assert_eq!(info.machine, "rig");
    assert_eq!(info.machine_facts, m.machine_facts);
    assert_eq!(info.benchmark, "hb");
    assert_eq!(info.params, m.params);
    assert!(info.created_at > 0);
    assert_eq!(info.uploaded_by, None);
    let listed = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!(listed[0].params_key, "fds=2&groups=6");
    assert!(st.run(id + 1000).await.unwrap().is_none());

    let series = st.run_series(id).await.unwrap();
    assert_eq!(series.len(), 1);
    let s = &series[0];
    assert_eq!(
        (
            s.metric.as_str(),
            s.scope.as_str(),
            s.label.as_deref(),
            s.statistic.as_deref(),
            s.unit.as_str(),
            s.direction.as_str()
        ),
        ("time", "all", None, None, "s", "lower_is_better")
    );
    // The run's one series holds its samples (`series` has one entry, above).
    assert_eq!(s.values, [1.5, 2.5]);

    // Series of every kind of key: they list by metric, scope, label, statistic (absent ones
    // first), in byte order.
    let new = |metric, scope, label, statistic, values| NewSeries {
        run_id: id,
        metric,
        unit: "s",
        direction: "lower_is_better",
        scope,
        label,
        statistic,
        values,
    };
    let added = st
        .add_series(&[
            new("time", "all", Some("b"), None, &[3.0]),
            new("time", "all", None, Some("mean"), &[2.0]),
            new("time", "all", Some("a"), Some("max"), &[4.0]),
            new("Time", "cpu0", None, None, &[]),
            new("time", "all", Some("a"), None, &[5.0]),
        ])
        .await
        .unwrap();
    assert_eq!(added.len(), 5);
    for (i, a) in added.iter().enumerate() {
        assert_eq!(*a, added[0] + ((i as i64) << 16), "one block per series");
    }
    let series = st.run_series(id).await.unwrap();
    let keys: Vec<_> = series
        .iter()
        .map(|s| {
            (
                s.metric.as_str(),
                s.scope.as_str(),
                s.label.as_deref(),
                s.statistic.as_deref(),
                s.values.clone(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("Time", "cpu0", None, None, vec![]),
            ("time", "all", None, None, vec![1.5, 2.5]),
            ("time", "all", None, Some("mean"), vec![2.0]),
            ("time", "all", Some("a"), None, vec![5.0]),
            ("time", "all", Some("a"), Some("max"), vec![4.0]),
            ("time", "all", Some("b"), None, vec![3.0]),
        ]
    );
    assert_eq!(series[2].id, added[1]);
    let listed = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!((listed[0].series, listed[0].samples), (6, 6));

    let err = st
        .add_series(&[NewSeries {
            direction: "sideways",
            ..new("x", "all", None, None, &[1.0])
        }])
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    assert_eq!(st.run_series(id).await.unwrap().len(), 6);
});

both!(files_are_stored_once_and_read_back_byte_for_byte, |st| {
    let lat = fixture("latency/doc54_irqsoff_3.8.0_16us.txt");
    let lat_bytes = std::fs::read(&lat).unwrap();
    let hb_bytes = b"Time: 1.25\nTime: 1.5\n".to_vec();
    let out = st
        .import_run(
            &meta("v1", "mixed"),
            &[
                InputFile::bytes("hb.txt", hb_bytes.clone(), Some("hackbench".into())),
                InputFile::path(&lat, None),
            ],
            None,
        )
        .await
        .unwrap();
    assert_eq!(out.run_ids.len(), 1);
    let lat_name = lat.display().to_string();
    assert_eq!(
        out.formats,
        [
            ("hb.txt".to_string(), "hackbench".to_string()),
            (lat_name.clone(), "latency".to_string())
        ]
    );
    let run = out.run_ids[0];

    let arts = st.run_artifacts(run, None).await.unwrap();
    let facts: Vec<_> = arts
        .iter()
        .map(|a| (a.seq, a.file_name.as_str(), a.format.as_str(), a.size))
        .collect();
    assert_eq!(
        facts,
        [
            (0, "hb.txt", "hackbench", hb_bytes.len() as i64),
            (1, lat_name.as_str(), "latency", lat_bytes.len() as i64),
        ]
    );
    assert_eq!(arts[0].sha256, hex::encode(Sha256::digest(&hb_bytes)));
    assert_eq!(arts[1].sha256, hex::encode(Sha256::digest(&lat_bytes)));
    for a in &arts {
        let meta: serde_json::Value = serde_json::from_str(&a.meta_json).unwrap();
        assert!(meta.is_object(), "{}", a.meta_json);
        assert_eq!(a.warnings_json, "[]");
        assert_eq!(a.warning_count, 0);
        assert!(serde_json::from_str::<serde_json::Value>(&a.extra_json).is_ok());
    }
    let only = st.run_artifacts(run, Some("latency")).await.unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!((only[0].seq, only[0].artifact_id), (1, arts[1].artifact_id));
    assert!(
        st.run_artifacts(run, Some("perf_stat"))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(st.run_artifacts(run + 1000, None).await.unwrap().is_empty());

    assert_eq!(
        st.run_file(run, 1).await.unwrap(),
        Some((
            arts[1].artifact_id,
            lat_name.clone(),
            lat_bytes.len() as i64
        ))
    );
    assert_eq!(st.run_file(run, 2).await.unwrap(), None);
    assert_eq!(
        st.artifact_chunk(arts[0].artifact_id, 0).await.unwrap(),
        Some(hb_bytes.clone())
    );
    assert_eq!(
        st.artifact_chunk(arts[0].artifact_id, 1).await.unwrap(),
        None
    );
    let mut back = Vec::new();
    let n = st
        .read_artifact(arts[1].artifact_id, &mut back)
        .await
        .unwrap();
    assert_eq!((n, back), (lat_bytes.len() as u64, lat_bytes));

    // The same bytes under another name are the same artifact.
    let (id, sha) = st.put_artifact("again.txt", &hb_bytes).await.unwrap();
    assert_eq!((id, sha), (arts[0].artifact_id, arts[0].sha256.clone()));

    // Every byte value, over three chunks of 1 MiB (the last one partial).
    let big: Vec<u8> = (0..(5u32 << 19))
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let (big_id, big_sha) = st.put_artifact("big.bin", &big).await.unwrap();
    assert_ne!(big_id, arts[0].artifact_id);
    assert_eq!(big_sha, hex::encode(Sha256::digest(&big)));
    let mut back = Vec::new();
    let n = st.read_artifact(big_id, &mut back).await.unwrap();
    assert_eq!(n, big.len() as u64);
    assert!(back == big, "a large artifact comes back byte for byte");
    let last = st.artifact_chunk(big_id, 2).await.unwrap().unwrap();
    assert_eq!(last.len(), 1 << 19);
    assert_eq!(st.artifact_chunk(big_id, 3).await.unwrap(), None);
    let mut none = Vec::new();
    assert_eq!(st.read_artifact(big_id + 1000, &mut none).await.unwrap(), 0);
});

both!(a_sweep_makes_one_run_per_parameter_combination, |st| {
    let (m, file) = seed001_sweep();
    let out = st.import_run(&m, &[file], None).await.unwrap();
    assert_eq!(out.run_ids.len(), 4);
    assert_eq!((out.series, out.samples), (4, 4));
    let runs = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!(ids(&runs), out.run_ids);
    let mut keys: Vec<&str> = runs.iter().map(|r| r.params_key.as_str()).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "nreaders=10&preempt_off_ms=10",
            "nreaders=10&preempt_off_ms=20",
            "nreaders=10&preempt_off_ms=5",
            "nreaders=10&preempt_off_ms=50",
        ]
    );
    for r in &runs {
        let info = st.run(r.id).await.unwrap().unwrap();
        assert_eq!(info.params.len(), 2);
        assert_eq!(store::params_key(&info.params), r.params_key);
        let series = st.run_series(r.id).await.unwrap();
        assert_eq!(series.len(), 1);
        assert_eq!(
            (series[0].metric.as_str(), series[0].statistic.as_deref()),
            ("gp_duration", Some("median"))
        );
    }
    let again = st.import_run(&m, &[seed001_sweep().1], None).await.unwrap();
    assert!(!again.created);
    assert_eq!(again.run_ids, out.run_ids);
    assert_eq!((again.series, again.samples), (4, 4));
});

/// Nothing stored at all.
async fn empty(st: &Store) {
    assert!(st.runs(&RunQuery::default()).await.unwrap().is_empty());
    assert!(st.build_summaries().await.unwrap().is_empty());
    assert!(st.machine_summaries().await.unwrap().is_empty());
    assert_eq!(st.generation().await.unwrap(), 0);
    assert_eq!(st.total_samples().await.unwrap(), 0);
}

both!(failed_imports_leave_nothing_behind, |st| {
    let good = InputFile::path(fixture("latency/doc54_irqsoff_3.8.0_16us.txt"), None);
    let bad = InputFile::bytes(
        "bad.txt",
        b"Time: 1.0\nTime: -5.0\n".to_vec(),
        Some("hackbench".into()),
    );
    let err = st
        .import_run(&meta("b", "t"), &[good.clone(), bad], None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bad.txt"), "{err}");
    empty(&st).await;

    let mut m = meta("b", "t");
    m.block = Some("nope".into());
    let err = st
        .import_run(
            &m,
            &[InputFile::path(
                fixture("trace_stat/seed004_head_function_star_4cpu_collapsed_ws.txt"),
                None,
            )],
            None,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("no block labelled \"nope\""),
        "{err}"
    );
    empty(&st).await;

    for (m, what) in [
        (meta("", "hb"), "build label must not be empty"),
        (meta("a\nb", "hb"), "control characters"),
        (meta("b", " "), "benchmark name must not be empty"),
    ] {
        let err = st
            .import_run(&m, std::slice::from_ref(&good), None)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains(what), "{err}");
    }
    let err = st.import_run(&meta("b", "t"), &[], None).await.unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    empty(&st).await;

    // A known build label with another commit is refused; the first commit stays.
    let f = || InputFile::bytes("t.txt", b"Time: 1.5\n".to_vec(), Some("hackbench".into()));
    let mut m = meta("v6.1", "hb");
    m.build.commit = Some("aaaaaaa".into());
    let first = st.import_run(&m, &[f()], None).await.unwrap();
    m.build.commit = Some("bbbbbbb".into());
    m.benchmark = "hb2".into();
    let err = st.import_run(&m, &[f()], None).await.unwrap_err();
    assert!(err.to_string().contains("different commit"), "{err}");
    let b = st.build_by_label("v6.1").await.unwrap().unwrap();
    assert_eq!(b.build.commit.as_deref(), Some("aaaaaaa"));
    assert_eq!(
        ids(&st.runs(&RunQuery::default()).await.unwrap()),
        first.run_ids
    );
    // A field the build lacked is filled in by a later import.
    m.build.commit = None;
    m.build.kernel_version = Some("6.1.0".into());
    st.import_run(&m, &[f()], None).await.unwrap();
    let b = st.build_by_label("v6.1").await.unwrap().unwrap();
    assert_eq!(
        (b.build.commit.as_deref(), b.build.kernel_version.as_deref()),
        (Some("aaaaaaa"), Some("6.1.0"))
    );
});

both!(a_per_cpu_profile_gets_its_totals, |st| {
    let d = tempfile::tempdir().unwrap();
    // seed 004's "original" rows, one file per CPU as the kernel writes them.
    let files = seed004_files(d.path());
    let out = st.import_run(&meta("b", "qs"), &files, None).await.unwrap();
    // 4 CPUs x 4 metrics, plus hit, time and avg totals.
    assert_eq!((out.series, out.samples), (19, 19));
    let run = out.run_ids[0];
    let mut series = st.series_of_runs(&[run]).await.unwrap();
    series.sort_by_key(|s| s.id);
    assert_eq!(series.len(), 19);
    let mut blocks: Vec<i64> = series.iter().map(|s| s.id >> 16).collect();
    blocks.dedup();
    assert_eq!(blocks.len(), 4, "one block per metric");
    let hit: Vec<&str> = series
        .iter()
        .filter(|s| s.metric == "rcu_preempt_deferred_qs_handle.hit")
        .map(|s| s.scope.as_str())
        .collect();
    assert_eq!(hit, ["cpu0", "cpu1", "cpu2", "cpu3", "all"]);
    let total = async |metric: &str| {
        let s = series
            .iter()
            .find(|s| s.metric == metric && s.scope == "all")
            .unwrap();
        let v = st.series_values(&[s.id]).await.unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].1.len(), 1);
        v[0].1[0]
    };
    assert_eq!(
        total("rcu_preempt_deferred_qs_handle.hit").await,
        3_319_015.0
    );
    let time = total("rcu_preempt_deferred_qs_handle.time").await;
    close(time, (182650.3 + 191138.6 + 180455.6 + 189158.1) * 1e-6);
    close(
        total("rcu_preempt_deferred_qs_handle.avg").await,
        time / 3_319_015.0,
    );
    let listed = st.runs(&RunQuery::default()).await.unwrap();
    assert_eq!((listed[0].series, listed[0].samples), (19, 19));
    assert_eq!(st.total_samples().await.unwrap(), 19);
});

#[track_caller]
fn close(a: f64, b: f64) {
    let tol = 1e-9 * a.abs().max(b.abs()).max(1e-12);
    assert!((a - b).abs() <= tol, "{a} != {b}");
}

/// SQLite only: a database opened read-only answers the same reads.
#[tokio::test]
async fn a_sqlite_database_opens_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db").display().to_string();
    let st = Store::open(&path).await.unwrap();
    let id = run_of(&st, "v1", "rig", "hb", &[1.0, 2.0]).await;
    st.close().await;
    let ro = Store::open_read_only(&path).await.unwrap();
    assert!(!ro.is_postgres());
    assert_eq!(ids(&ro.runs(&RunQuery::default()).await.unwrap()), [id]);
    let series = ro.run_series(id).await.unwrap();
    assert_eq!(series[0].values, [1.0, 2.0]);
    assert!(ro.insert_token("t", "h").await.is_err(), "read only");
    assert!(
        Store::open_read_only(&dir.path().join("none.db").display().to_string())
            .await
            .is_err(),
        "no database is created"
    );
}

both!(
    nul_characters_are_kept_on_sqlite_and_refused_on_postgres,
    |st| {
        let mut m = meta("v1", "hb");
        m.params = BTreeMap::from([("k".to_string(), "a\0b".to_string())]);
        let by_param = st.import_run(&m, &[hb("hb.txt", &[1.0])], None).await;
        let by_name = st
            .import_run(&meta("v1", "hb"), &[hb("h\0b.txt", &[1.0])], None)
            .await;
        let mut m = meta("v1", "hb");
        m.build.cmdline = Some("quiet\0".into());
        let by_build = st.import_run(&m, &[hb("hb.txt", &[2.0])], None).await;
        if st.is_postgres() {
            // PostgreSQL's text cannot hold NUL: refused as invalid, nothing stored.
            for (r, what) in [
                (by_param, "value of k"),
                (by_name, "file name"),
                (by_build, "boot command line"),
            ] {
                let err = r.unwrap_err();
                assert!(matches!(err, Error::Invalid(_)), "{err}");
                assert!(err.to_string().contains(what), "{err}");
            }
            assert!(st.runs(&RunQuery::default()).await.unwrap().is_empty());
        } else {
            let run = by_param.unwrap().run_ids[0];
            assert_eq!(st.run(run).await.unwrap().unwrap().params["k"], "a\0b");
            let run = by_name.unwrap().run_ids[0];
            assert_eq!(
                st.run_artifacts(run, None).await.unwrap()[0].file_name,
                "h\0b.txt"
            );
            let b = st.build_by_label("v1").await.unwrap().unwrap();
            assert_eq!(b.build.cmdline.as_deref(), Some("quiet\0"));
            assert_eq!(by_build.unwrap().run_ids.len(), 1);
        }
    }
);
