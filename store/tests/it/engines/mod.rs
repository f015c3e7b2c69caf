//! The same store tests on both engines: each `both!` test runs once on a SQLite file and once
//! on a fresh PostgreSQL database (a throwaway server, see `store::testing`).

use store::{BuildMeta, InputFile, RunMeta, RunQuery, Store};

use crate::fixture;

/// Defines `NAME::sqlite` and `NAME::postgres`, each running `$body` on a fresh store.
macro_rules! both {
    ($name:ident, |$st:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            async fn check($st: store::Store) $body

            #[tokio::test]
            async fn sqlite() {
                let dir = tempfile::tempdir().unwrap();
                let st = Store::open(&dir.path().join("t.db").display().to_string())
                    .await
                    .unwrap();
                check(st).await;
            }

            #[tokio::test]
            async fn postgres() {
                let Some(st) = store::testing::pg_store().await else {
                    return;
                };
                check(st).await;
            }
        }
    };
}

fn meta(build: &str, benchmark: &str) -> RunMeta {
    RunMeta {
        build: BuildMeta {
            label: build.into(),
            ..Default::default()
        },
        machine: "rig".into(),
        benchmark: benchmark.into(),
        ..Default::default()
    }
}

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
});
