//! Tests of the import into SQLite: one transaction, idempotence, byte-exact artifacts,
//! labelled blocks and parameter sweeps.

use sqlx::SqlitePool;
use store::{InputFile, Store};

use crate::engines::{meta, seed001_sweep};
use crate::{fixture, per_cpu_files, seed004_files};

async fn fresh() -> (tempfile::TempDir, Store, SqlitePool) {
    let dir = tempfile::tempdir().unwrap();
    let st = Store::open(&dir.path().join("t.db").display().to_string())
        .await
        .unwrap();
    let pool = st.sqlite_pool().clone();
    (dir, st, pool)
}

async fn count(pool: &SqlitePool, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn opens_with_wal_full_sync_foreign_keys_and_temporary_storage_in_memory() {
    let (_d, _st, pool) = fresh().await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(fk, 1);
    // Each commit synced (2 = FULL); savepoint journals in memory (2 = MEMORY), not in a
    // temporary file written while the writer holds the database.
    for (pragma, want) in [("synchronous", 2), ("temp_store", 2)] {
        let got: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("PRAGMA {pragma}")))
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(got, want, "PRAGMA {pragma}");
    }
}

#[tokio::test]
async fn imports_trace_stat_block_and_is_idempotent() {
    let (_d, st, pool) = fresh().await;
    let path = fixture("trace_stat/seed004_head_function_star_4cpu_collapsed_ws.txt");
    let mut m = meta("parent", "qs");
    m.block = Some("original".into());
    let out = st
        .import_run(&m, &[InputFile::path(&path, None)], None)
        .await
        .unwrap();
    assert!(out.created);
    assert_eq!(out.run_ids.len(), 1);
    // 4 CPUs x (hit, time, avg, s2) + all x (hit, time, avg)
    assert_eq!(out.series, 19);
    let hits = only_value(&pool, "rcu_preempt_deferred_qs_handle.hit").await;
    assert_eq!(hits, 3_319_015.0);
    let labels: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM series WHERE label IS NOT NULL")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(labels, 0, "a selected block is stored without its label");

    let again = st
        .import_run(&m, &[InputFile::path(&path, None)], None)
        .await
        .unwrap();
    assert!(!again.created);
    assert_eq!(again.run_ids, out.run_ids);
    assert_eq!(count(&pool, "runs").await, 1);
    assert_eq!(count(&pool, "artifacts").await, 1);

    // The other block of the same file is another run, sharing the stored bytes.
    let mut m2 = meta("patched", "qs");
    m2.block = Some("apply patch".into());
    let out2 = st
        .import_run(&m2, &[InputFile::path(&path, None)], None)
        .await
        .unwrap();
    assert!(out2.created);
    assert_eq!(count(&pool, "runs").await, 2);
    assert_eq!(count(&pool, "artifacts").await, 1, "content-addressed");
}

#[tokio::test]
async fn artifact_round_trips_byte_for_byte() {
    let (_d, st, pool) = fresh().await;
    let path = fixture("time/seed000_bash_time_3runs_ftrace_switch.txt");
    let bytes = std::fs::read(&path).unwrap();
    let out = st
        .import_run(&meta("b", "t"), &[InputFile::path(&path, None)], None)
        .await
        .unwrap();
    let aid: i64 = sqlx::query_scalar("SELECT artifact_id FROM run_artifacts WHERE run_id = ?")
        .bind(out.run_ids[0])
        .fetch_one(&pool)
        .await
        .unwrap();
    let mut back = Vec::new();
    st.read_artifact(aid, &mut back).await.unwrap();
    assert_eq!(back, bytes);
}

#[tokio::test]
async fn a_failing_file_leaves_nothing_behind() {
    let (_d, st, pool) = fresh().await;
    let good = InputFile::path(fixture("latency/doc54_irqsoff_3.8.0_16us.txt"), None);
    let bad = InputFile::bytes(
        "bad.txt",
        b"Time: 1.0\nTime: -5.0\n".to_vec(),
        Some("hackbench".into()),
    );
    let err = st
        .import_run(&meta("b", "t"), &[good, bad], None)
        .await
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("bad.txt"), "{msg}");
    for t in [
        "builds",
        "machines",
        "runs",
        "series",
        "series_block",
        "names",
        "artifacts",
        "artifact_chunks",
        "run_artifacts",
    ] {
        assert_eq!(count(&pool, t).await, 0, "{t} after a failed import");
    }
}

#[tokio::test]
async fn a_missing_block_is_an_error() {
    let (_d, st, pool) = fresh().await;
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
    assert_eq!(count(&pool, "runs").await, 0);
}

#[tokio::test]
async fn a_sweep_makes_one_run_per_parameter_combination() {
    let (_d, st, pool) = fresh().await;
    let (m, file) = seed001_sweep();
    let out = st.import_run(&m, &[file], None).await.unwrap();
    assert_eq!(out.run_ids.len(), 4);
    let keys: Vec<String> = sqlx::query_scalar("SELECT params_key FROM runs ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(
        keys.contains(&"nreaders=10&preempt_off_ms=20".to_string()),
        "{keys:?}"
    );
    let p: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM run_params WHERE key = 'preempt_off_ms'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(p, 4);
}

#[tokio::test]
async fn a_build_with_a_different_commit_is_refused() {
    let (_d, st, _pool) = fresh().await;
    let f = || InputFile::bytes("t.txt", b"Time: 1.5\n".to_vec(), Some("hackbench".into()));
    let mut m = meta("v6.1", "hb");
    m.build.commit = Some("aaaaaaa".into());
    st.import_run(&m, &[f()], None).await.unwrap();
    m.build.commit = Some("bbbbbbb".into());
    m.benchmark = "hb2".into();
    let err = st.import_run(&m, &[f()], None).await.unwrap_err();
    assert!(err.to_string().contains("different commit"), "{err}");
}

#[tokio::test]
async fn metadata_is_validated() {
    let (_d, st, _pool) = fresh().await;
    let f = InputFile::bytes("t.txt", b"Time: 1.5\n".to_vec(), Some("hackbench".into()));
    let err = st
        .import_run(&meta("", "hb"), std::slice::from_ref(&f), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("build label must not be empty"));
    let err = st
        .import_run(&meta("a\nb", "hb"), &[f], None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("control characters"));
}

#[tokio::test]
async fn a_directory_of_per_cpu_files_gets_all_totals() {
    let (d, st, pool) = fresh().await;
    // seed 004's "original" rows, one file per CPU as the kernel writes them.
    let files = seed004_files(d.path());
    let out = st.import_run(&meta("b", "qs"), &files, None).await.unwrap();
    // 4 CPUs x 4 metrics, plus hit, time and avg totals.
    assert_eq!(out.series, 19);
    assert_eq!(out.samples, 19);
    // Stored as one block per metric: the CPUs' series and the total of the same key together.
    assert_eq!(count(&pool, "series_block").await, 4);
    assert_eq!(count(&pool, "series").await, 19);
    let hit_scopes: Vec<String> = sqlx::query_scalar(
        "SELECT scope FROM series WHERE metric = 'rcu_preempt_deferred_qs_handle.hit' ORDER BY id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(hit_scopes, ["cpu0", "cpu1", "cpu2", "cpu3", "all"]);
    let cpu2: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM series WHERE metric = 'rcu_preempt_deferred_qs_handle.hit' AND scope = 'cpu2'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let vals = st.series_values(&cpu2).await.unwrap();
    assert_eq!(vals, vec![(cpu2[0], vec![828243.0])]);
    let total = |metric: &'static str| {
        let pool = pool.clone();
        async move { only_value(&pool, metric).await }
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
}

#[tokio::test]
async fn later_files_bring_new_names_and_reuse_earlier_ones() {
    // Names travel from the parser once per import: the second file reuses `a`'s and brings
    // `b`; the third only `a` again. Each series must still land under its own name and CPU.
    let (d, st, pool) = fresh().await;
    let files = per_cpu_files(
        d.path(),
        &[
            vec![("a", 10, "1.0")],
            vec![("b", 21, "1.0"), ("a", 11, "1.0")],
            vec![("a", 12, "1.0")],
        ],
    );
    st.import_run(&meta("b", "names"), &files, None)
        .await
        .unwrap();
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT metric, scope, id FROM series WHERE metric LIKE '%.hit' AND scope != 'all' ORDER BY metric, scope",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    let keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|(m, s, _)| (m.as_str(), s.as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("a.hit", "cpu0"),
            ("a.hit", "cpu1"),
            ("a.hit", "cpu2"),
            ("b.hit", "cpu1")
        ]
    );
    let ids: Vec<i64> = rows.iter().map(|r| r.2).collect();
    let vals: Vec<f64> = st
        .series_values(&ids)
        .await
        .unwrap()
        .into_iter()
        .map(|(_, v)| v[0])
        .collect();
    assert_eq!(vals, [10.0, 11.0, 12.0, 21.0]);
    // Every stored name once.
    let dup: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM (SELECT name FROM names GROUP BY name HAVING COUNT(*) > 1)",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(dup, 0);
}

#[track_caller]
fn close(a: f64, b: f64) {
    let tol = 1e-9 * a.abs().max(b.abs()).max(1e-12);
    assert!((a - b).abs() <= tol, "{a} != {b}");
}

/// The single sample of the `all` series of `metric`.
async fn only_value(pool: &SqlitePool, metric: &str) -> f64 {
    let ids: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM series WHERE metric = ? AND scope = 'all'")
            .bind(metric)
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(ids.len(), 1, "{metric}: one all series");
    let vals = store::Store::from_sqlite_pool(pool.clone())
        .series_values(&ids)
        .await
        .unwrap();
    assert_eq!(vals[0].1.len(), 1, "{metric}: one sample");
    vals[0].1[0]
}

/// Small files held in memory are parsed on the importing task, others on a thread of their
/// own (`sink::spawn_parse`): both store the same runs, series, samples, warnings and file
/// details, and fail alike.
#[tokio::test]
async fn files_parsed_in_place_store_what_files_parsed_on_a_thread_store() {
    let root = tempfile::tempdir().unwrap();
    let bad = root.path().join("bad.txt");
    std::fs::write(&bad, "Time: 1.0\nTime: -5.0\n").unwrap();
    let per_cpu: Vec<_> = seed004_files(root.path())
        .iter()
        .map(|f| match &f.source {
            store::Source::Path(p) => p.clone(),
            store::Source::Bytes(_) => unreachable!("written as files"),
        })
        .collect();
    let mut sets: Vec<Vec<std::path::PathBuf>> = [
        "cyclictest/lkml_2015_preempt_voluntary_rt_cyclictest_multikernel_excerpt.txt",
        "function_graph/doc54_funcgraph_abstime.txt",
        "hackbench/lkml_2021_hackbench_threaded_pipe_header_and_avg_table.txt",
        "latency/doc2635_preemptirqsoff_2.6.26-rc8_105us_ftrace.txt",
        "lkp/lkml_2025_lkp_do_pollfd_will_it_scale_regression.txt",
        "mmtests/lkml_2020_fsnotify_fastpath_mmtests_hackbench_4kernels.txt",
        "perf_stat/lkml_2020_clear_page_nt_perf_stat_multiplex_excerpt.txt",
        "rcuscale/lkml_2022_kfree_rcu_test_total_time_lines.txt",
        "refscale/lkml_2021_refscale_min_median_max_3runs_table.txt",
        "samples/seed001_rcuperf_preempt_off_sweep.csv",
        "time/lkml_2006_gnu_time_-v_make_-j5_two_runs.txt",
        "trace_stat/lkml_2015_vmalloc_before_after_function0_scenario1.txt",
    ]
    .iter()
    .map(|f| vec![fixture(f)])
    .collect();
    sets.push(per_cpu);
    sets.push(vec![
        fixture("latency/doc2635_irqsoff_2.6.26_12us.txt"),
        bad,
    ]);
    for set in &sets {
        for p in set {
            let size = std::fs::metadata(p).unwrap().len();
            assert!(
                size < 32 << 10,
                "{}: {size} bytes is not parsed in place",
                p.display()
            );
        }
        let (_d1, on_thread, _) = fresh().await;
        let (_d2, in_place, _) = fresh().await;
        let by_path: Vec<InputFile> = set.iter().map(|p| InputFile::path(p, None)).collect();
        let by_bytes: Vec<InputFile> = set
            .iter()
            .map(|p| InputFile::bytes(p.display().to_string(), std::fs::read(p).unwrap(), None))
            .collect();
        let m = meta("b", "t");
        let a = on_thread.import_run(&m, &by_path, None).await;
        let b = in_place.import_run(&m, &by_bytes, None).await;
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{set:?}");
                assert!(a.samples > 0, "{set:?}");
                for id in &a.run_ids {
                    let sa = on_thread.run_series(*id).await.unwrap();
                    let sb = in_place.run_series(*id).await.unwrap();
                    assert_eq!(format!("{sa:?}"), format!("{sb:?}"), "{set:?}");
                }
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{set:?}: on a thread {a:?}, in place {b:?}"),
        }
    }
}

/// `series_of_runs` lists a run's series from its blocks as the `series` view lists them (ids,
/// names, order), with and without a metric filter.
#[tokio::test]
async fn series_of_runs_lists_what_the_series_view_lists() {
    let (d, st, pool) = fresh().await;
    let cpus: Vec<Vec<(&str, u64, &str)>> = (0..3)
        .map(|cpu| {
            vec![
                ("rcu_note_context_switch", 100 + cpu, "10.5"),
                ("__schedule", 200 + cpu, "20.5"),
                ("only_here", 7, "1.0"),
            ]
        })
        .collect();
    let profile = st
        .import_run(
            &meta("v1", "profile"),
            &per_cpu_files(d.path(), &cpus),
            None,
        )
        .await
        .unwrap()
        .run_ids[0];
    let hb = st
        .import_run(
            &meta("v1", "hb"),
            &[crate::engines::hb("hb.txt", &[1.0, 2.0])],
            None,
        )
        .await
        .unwrap()
        .run_ids[0];
    st.add_series(&[store::NewSeries {
        run_id: hb,
        metric: "ops \"x\"",
        unit: "ops/s",
        direction: "higher_is_better",
        scope: "cpu1",
        label: Some("tuned"),
        statistic: Some("p99"),
        values: &[3.0],
    }])
    .await
    .unwrap();
    type Row = (
        i64,
        String,
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        String,
        String,
    );
    let view: Vec<Row> = sqlx::query_as(
        "SELECT s.id, r.benchmark, r.params_key, s.metric, s.scope, s.statistic, s.label, s.unit, s.direction \
         FROM series s JOIN runs r ON r.id = s.run_id WHERE s.run_id IN (?, ?) ORDER BY s.id",
    )
    .bind(profile)
    .bind(hb)
    .fetch_all(&pool)
    .await
    .unwrap();
    let listed = |rows: Vec<store::SeriesRow>| -> Vec<Row> {
        rows.into_iter()
            .map(|s| {
                (
                    s.id,
                    s.benchmark,
                    s.params_key,
                    s.metric,
                    s.scope,
                    s.statistic,
                    s.label,
                    s.unit.to_string(),
                    s.direction.as_str().to_string(),
                )
            })
            .collect()
    };
    assert!(view.len() > 20, "{}", view.len());
    let ours = listed(st.series_of_runs(&[profile, hb]).await.unwrap());
    assert_eq!(ours, view);
    let hits = listed(
        st.series_of_runs_where(&[profile, hb], |m| m.ends_with(".hit"))
            .await
            .unwrap(),
    );
    let view_hits: Vec<Row> = view.into_iter().filter(|r| r.3.ends_with(".hit")).collect();
    assert!(!view_hits.is_empty());
    assert_eq!(hits, view_hits);
}
