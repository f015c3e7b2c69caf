//! A series block belongs to a stored run: a statement writing a block under a run that does
//! not exist fails whole, and deleting a run deletes its blocks. SQLite checks this with a
//! foreign key, PostgreSQL once per statement (`migrations/postgres/0004_block_run_check.sql`);
//! the statements below are written once and run on both.

use sqlx::Connection as _;
use sqlx::error::ErrorKind;
use store::Store;

use super::{hb, meta};

/// Statements on the store's database, outside the store.
const COPY_ALL_BUT_ONE: &str = "INSERT INTO series_block (id, run_id, metric_id, unit_id, direction_id, series, n, vals) \
     SELECT id + 1000, CASE WHEN id = (SELECT MIN(id) FROM series_block) THEN $1 ELSE run_id END, \
            metric_id, unit_id, direction_id, series, n, vals FROM series_block";
const MOVE_ONE: &str =
    "UPDATE series_block SET run_id = $1 WHERE id = (SELECT MIN(id) FROM series_block)";
const BLOCKS: &str = "SELECT COUNT(*) FROM series_block";
const DELETE_RUN: &str = "DELETE FROM runs WHERE id = $1";

/// Stores one run of hackbench times (at least one series block): its id.
async fn one_run(st: &Store) -> i64 {
    let out = st
        .import_run(
            &meta("v1", "hackbench"),
            &[hb("a.txt", &[1.0, 2.0, 3.0])],
            None,
        )
        .await
        .unwrap();
    out.run_ids[0]
}

fn assert_refused(r: Result<impl std::fmt::Debug, sqlx::Error>) {
    let e = r.expect_err("a block under a run that does not exist");
    let kind = e.as_database_error().map(|d| d.kind());
    assert!(
        matches!(kind, Some(ErrorKind::ForeignKeyViolation)),
        "expected a foreign key violation, got {e}"
    );
}

/// `sql` with one run id bound, on connection `c`.
macro_rules! exec {
    ($c:ident, $sql:expr, $run:expr) => {
        sqlx::query($sql).bind($run).execute(&mut *$c).await
    };
}

/// How many series blocks are stored, read on connection `c`.
macro_rules! blocks {
    ($c:ident) => {
        sqlx::query_scalar::<_, i64>(BLOCKS)
            .fetch_one(&mut *$c)
            .await
            .unwrap()
    };
}

/// The checks, on a connection of either engine (sqlx's types differ by engine, hence a macro).
macro_rules! check {
    ($c:expr, $run:expr) => {{
        let c = &mut $c;
        let missing = $run + 7;
        let before = blocks!(c);
        assert!(before > 0);
        assert_refused(exec!(c, COPY_ALL_BUT_ONE, missing));
        assert_refused(exec!(c, MOVE_ONE, missing));
        assert_eq!(
            blocks!(c),
            before,
            "a refused statement writes none of its rows"
        );
        // The same copy under the run itself is accepted.
        exec!(c, COPY_ALL_BUT_ONE, $run).unwrap();
        assert_eq!(blocks!(c), 2 * before);
        exec!(c, DELETE_RUN, $run).unwrap();
        assert_eq!(blocks!(c), 0, "deleting a run deletes its blocks");
    }};
}

#[tokio::test]
async fn sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let st = Store::open(&path.display().to_string()).await.unwrap();
    let run = one_run(&st).await;
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .foreign_keys(true);
    let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    check!(c, run);
}

#[tokio::test]
async fn postgres() {
    let Some(url) = store::testing::fresh_pg_url().await else {
        return;
    };
    let st = Store::open(&url).await.unwrap();
    let run = one_run(&st).await;
    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
    check!(c, run);
}
