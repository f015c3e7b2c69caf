//! The same store tests on both engines: each `both!` test runs once on a SQLite file and once
//! on a fresh PostgreSQL database (a throwaway server, see `store::testing`), so that every
//! public read and write of the store answers the same on both.

/// Defines `NAME::sqlite` and `NAME::postgres`, each running `$body` on a fresh store.
macro_rules! both {
    ($name:ident, |$st:ident| $body:block) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            pub(super) async fn check($st: store::Store) $body

            #[tokio::test]
            async fn sqlite() {
                let dir = tempfile::tempdir().unwrap();
                let st = store::Store::open(&dir.path().join("t.db").display().to_string())
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

mod alerts;
mod bisect;
mod block_runs;
mod browse;
mod comparison;
mod group;
mod history;
mod import_keys;
mod imports;
mod meta;
mod own_connections;
mod shared;
mod writer;

use sqlx::Connection as _;
use store::{BuildMeta, InputFile, RunMeta, Store};

/// seed 001's rcuperf sweep (block `v4.19`, four `preempt_off_ms` values) as one import of
/// build `v4.19` with `nreaders=10`: four runs.
pub fn seed001_sweep() -> (RunMeta, InputFile) {
    let mut m = meta("v4.19", "rcuperf");
    m.block = Some("v4.19".into());
    m.params = std::collections::BTreeMap::from([("nreaders".to_string(), "10".to_string())]);
    let file = InputFile::path(
        crate::fixture("samples/seed001_rcuperf_preempt_off_sweep.csv"),
        None,
    );
    (m, file)
}

/// Run metadata of `benchmark` on machine `rig` for build `build`.
pub fn meta(build: &str, benchmark: &str) -> RunMeta {
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

/// A hackbench output named `name` with one `Time:` line per value: one whole-run series
/// `time` (seconds) holding `times`.
pub fn hb(name: &str, times: &[f64]) -> InputFile {
    let text: String = times.iter().map(|t| format!("Time: {t}\n")).collect();
    InputFile::bytes(name, text.into_bytes(), Some("hackbench".into()))
}

/// Imports `times` as a hackbench run of `build` on `machine`; the run id.
pub async fn run_of(st: &Store, build: &str, machine: &str, benchmark: &str, times: &[f64]) -> i64 {
    let mut m = meta(build, benchmark);
    m.machine = machine.into();
    let out = st
        .import_run(&m, &[hb("hb.txt", times)], None)
        .await
        .unwrap();
    assert!(out.created, "{build}/{machine}/{benchmark} imported twice");
    assert_eq!(out.run_ids.len(), 1);
    out.run_ids[0]
}

/// The id of the build labelled `label`.
pub async fn build_id(st: &Store, label: &str) -> i64 {
    st.build_by_label(label)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no build {label}"))
        .build
        .id
}

/// A store on a fresh PostgreSQL database whose default collation is ICU's `en-US` rather than
/// byte order: what the store lists must still sort byte by byte there (its text columns are
/// `COLLATE "C"`). `None` without PostgreSQL, or when it has no ICU (said loudly).
pub async fn pg_store_icu() -> Option<Store> {
    let url = store::testing::fresh_pg_url().await?;
    let (base, name) = url.rsplit_once('/').unwrap();
    let icu = format!("{name}_icu");
    let mut admin = sqlx::PgConnection::connect(&url).await.unwrap();
    let made = sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE {icu} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
    )))
    .execute(&mut admin)
    .await;
    let _ = admin.close().await;
    if let Err(e) = made {
        eprintln!("\n*** SKIPPED: no ICU collation on the test PostgreSQL: {e} ***\n");
        return None;
    }
    Some(Store::open(&format!("{base}/{icu}")).await.unwrap())
}
