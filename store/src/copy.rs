//! Copying a whole database into another one, of either engine (SQLite file to PostgreSQL and
//! back): every table row for row, ids kept, artifacts byte for byte.
//!
//! The source is read in one snapshot (a read transaction), page by page in primary-key order,
//! so that memory stays bounded whatever the size of a table; the target is written in one
//! write transaction, so that a failed copy leaves it as it was.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sqlx::{AssertSqlSafe, Row as _};

use crate::engine::placeholders;
use crate::{Backend, Error, Store, Tx, TxInner, with_pool, with_tx};

/// How a column is read and written (every column may be NULL as far as the copy goes: the
/// target's schema holds the constraints).
#[derive(Clone, Copy, Debug)]
enum Ty {
    Int,
    Real,
    Text,
    Blob,
}

/// One value read from the source.
#[derive(Clone, Debug)]
enum Val {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Blob(Option<Vec<u8>>),
}

/// A table to copy: its columns and the primary key it is paged by.
struct Table {
    name: &'static str,
    key: &'static [&'static str],
    cols: &'static [(&'static str, Ty)],
    /// Its `id` is a PostgreSQL identity column, whose sequence must follow the copied ids.
    identity: bool,
    /// The columns whose values may be large (1 MiB artifact chunks, packed samples, kernel
    /// configs): their sizes bound a page to [`PAGE_BYTES`].
    big: &'static [&'static str],
}

/// Rows read at most per page (larger INSERTs are slower on SQLite, not faster).
const PAGE_ROWS: usize = 200;

/// Bytes of large values read at most per page (a single larger row is a page of its own).
const PAGE_BYTES: i64 = 4 << 20;

/// Bound parameters at most per INSERT, below SQLite's limit (32,766) and PostgreSQL's (65,535).
const MAX_PARAMS: usize = 30_000;

use Ty::{Blob, Int, Real, Text};

/// Every table of the schema (migrations/postgres/0001_schema.sql, the same as SQLite's
/// migrations end with), parents before the tables referring to them.
const TABLES: &[Table] = &[
    Table {
        name: "builds",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("label", Text),
            ("commit_sha", Text),
            ("kernel_version", Text),
            ("config", Text),
            ("cmdline", Text),
            ("created_at", Int),
        ],
        identity: true,
        big: &["config", "cmdline"],
    },
    Table {
        name: "machines",
        key: &["id"],
        cols: &[("id", Int), ("name", Text), ("created_at", Int)],
        identity: true,
        big: &[],
    },
    Table {
        name: "machine_facts",
        key: &["machine_id", "key"],
        cols: &[("machine_id", Int), ("key", Text), ("value", Text)],
        identity: false,
        big: &[],
    },
    Table {
        name: "tokens",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("name", Text),
            ("hash", Text),
            ("created_at", Int),
            ("revoked_at", Int),
            ("machines_glob", Text),
            ("builds_glob", Text),
        ],
        identity: true,
        big: &[],
    },
    Table {
        name: "runs",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("build_id", Int),
            ("machine_id", Int),
            ("benchmark", Text),
            ("params_key", Text),
            ("content_hash", Text),
            ("import_hash", Text),
            ("token_id", Int),
            ("created_at", Int),
        ],
        identity: true,
        big: &[],
    },
    Table {
        name: "run_params",
        key: &["run_id", "key"],
        cols: &[("run_id", Int), ("key", Text), ("value", Text)],
        identity: false,
        big: &[],
    },
    Table {
        name: "artifacts",
        key: &["id"],
        cols: &[("id", Int), ("sha256", Text), ("size", Int)],
        identity: true,
        big: &[],
    },
    Table {
        name: "artifact_chunks",
        key: &["artifact_id", "seq"],
        cols: &[("artifact_id", Int), ("seq", Int), ("data", Blob)],
        identity: false,
        big: &["data"],
    },
    Table {
        name: "run_artifacts",
        key: &["run_id", "seq"],
        cols: &[
            ("run_id", Int),
            ("artifact_id", Int),
            ("seq", Int),
            ("file_name", Text),
            ("format", Text),
            ("meta_json", Text),
            ("warnings_json", Text),
            ("warning_count", Int),
            ("extra_json", Text),
        ],
        identity: false,
        big: &["meta_json", "warnings_json", "extra_json"],
    },
    Table {
        name: "names",
        key: &["id"],
        cols: &[("id", Int), ("name", Text)],
        identity: false,
        big: &[],
    },
    Table {
        name: "series_block",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("run_id", Int),
            ("metric_id", Int),
            ("unit_id", Int),
            ("direction_id", Int),
            ("label_id", Int),
            ("statistic_id", Int),
            ("series", Text),
            ("n", Int),
            ("vals", Blob),
        ],
        identity: false,
        big: &["series", "vals"],
    },
    Table {
        name: "comparisons",
        key: &["id"],
        cols: &[
            ("id", Text),
            ("base_label", Text),
            ("head_label", Text),
            ("settings_json", Text),
            ("base_runs_json", Text),
            ("head_runs_json", Text),
            ("created_at", Int),
            ("content_hash", Text),
        ],
        identity: false,
        big: &["settings_json", "base_runs_json", "head_runs_json"],
    },
    Table {
        name: "idempotency_keys",
        key: &["token_id", "key"],
        cols: &[
            ("token_id", Int),
            ("key", Text),
            ("run_id", Int),
            ("created_at", Int),
            ("content_hash", Text),
        ],
        identity: false,
        big: &[],
    },
    Table {
        name: "bisect_steps",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("created_at", Int),
            ("commit_sha", Text),
            ("build_label", Text),
            ("machine", Text),
            ("benchmark", Text),
            ("series", Text),
            ("good_ref", Text),
            ("bad_ref", Text),
            ("runs", Int),
            ("samples", Int),
            ("median", Real),
            ("good_median", Real),
            ("bad_median", Real),
            ("p_good", Real),
            ("p_bad", Real),
            ("level", Real),
            ("verdict", Text),
            ("run_id", Int),
        ],
        identity: true,
        big: &[],
    },
    Table {
        name: "branches",
        key: &["id"],
        cols: &[("id", Int), ("name", Text)],
        identity: true,
        big: &[],
    },
    Table {
        name: "build_branches",
        key: &["build_id", "branch_id"],
        cols: &[
            ("build_id", Int),
            ("branch_id", Int),
            ("position", Int),
            ("parent", Text),
            ("commit_time", Int),
        ],
        identity: false,
        big: &[],
    },
    Table {
        name: "branch_commits",
        key: &["branch_id", "commit_sha"],
        cols: &[("branch_id", Int), ("commit_sha", Text), ("seq", Int)],
        identity: false,
        big: &[],
    },
    Table {
        name: "history_series",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("branch_id", Int),
            ("machine_id", Int),
            ("benchmark", Text),
            ("params_key", Text),
            ("metric", Text),
            ("direction", Text),
            ("unit", Text),
            ("tested_p", Text),
            ("updated_at", Int),
        ],
        identity: true,
        big: &["tested_p"],
    },
    Table {
        name: "alert_groups",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("branch_id", Int),
            ("build_id", Int),
            ("created_at", Int),
            ("notified_at", Int),
        ],
        identity: true,
        big: &[],
    },
    Table {
        name: "alerts",
        key: &["id"],
        cols: &[
            ("id", Int),
            ("group_id", Int),
            ("history_series_id", Int),
            ("build_before_id", Int),
            ("build_after_id", Int),
            ("before_median", Real),
            ("after_median", Real),
            ("change_pct", Real),
            ("low_pct", Real),
            ("high_pct", Real),
            ("p", Real),
            ("q", Real),
            ("kind", Text),
            ("state", Text),
            ("note", Text),
            ("who", Text),
            ("fixed_by_build_id", Int),
            ("created_at", Int),
            ("updated_at", Int),
        ],
        identity: true,
        big: &[],
    },
];

/// Where a copy is, after each page.
#[derive(Debug, Clone)]
pub struct CopyProgress {
    /// The table being copied.
    pub table: &'static str,
    /// Its rows copied so far, of `table_total`.
    pub table_rows: u64,
    pub table_total: u64,
    /// Rows of every table copied so far, of `total` (the source's row count).
    pub rows: u64,
    pub total: u64,
}

/// What a copy wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// Rows copied per table, in copy order.
    pub tables: Vec<(&'static str, u64)>,
    /// Bytes of artifact chunks copied (the raw files, as stored).
    pub artifact_bytes: u64,
}

/// The result of [`Store::copy_to`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyOutcome {
    Copied(CopyReport),
    /// The target already holds rows (per table, the non-empty ones) and `force` was not
    /// given: nothing was written.
    TargetNotEmpty(Vec<(&'static str, u64)>),
}

/// Decodes column `$i` of `$row` as `$ty` (the body is compiled once per engine).
macro_rules! decode {
    ($row:expr, $i:expr, $ty:expr) => {
        match $ty {
            Ty::Int => Val::Int($row.try_get($i)?),
            Ty::Real => Val::Real($row.try_get($i)?),
            Ty::Text => Val::Text($row.try_get($i)?),
            Ty::Blob => Val::Blob($row.try_get($i)?),
        }
    };
}

/// Binds `$v` (a [`Val`]) to the query `$q`.
macro_rules! bind {
    ($q:expr, $v:expr) => {
        match $v {
            Val::Int(x) => $q.bind(x),
            Val::Real(x) => $q.bind(x),
            Val::Text(x) => $q.bind(x),
            Val::Blob(x) => $q.bind(x),
        }
    };
}

impl Store {
    /// Copies every row of this database into `target`, ids kept, in one transaction on the
    /// target. A target holding any row is refused unless `force`, which deletes its rows first
    /// (in the same transaction). `progress` hears after each page of rows.
    pub async fn copy_to(
        &self,
        target: &Store,
        force: bool,
        mut progress: impl FnMut(&CopyProgress),
    ) -> Result<CopyOutcome, Error> {
        self.check_schema("source").await?;
        target.check_schema("target").await?;
        let mut src = self.begin_snapshot().await?;
        let mut dst = target.begin_write().await?;
        let outcome = copy_tables(&mut src, &mut dst, force, &mut progress).await;
        let _ = src.rollback().await;
        match outcome {
            Ok(CopyOutcome::Copied(report)) => {
                if target.is_postgres() {
                    reset_identities(&mut dst).await?;
                }
                dst.commit().await?;
                if let Backend::Postgres(pool) = &target.backend {
                    // Fresh statistics, so that the first queries on the copy are planned
                    // for its real size rather than for empty tables; the copy is committed
                    // either way, and autovacuum analyzes later.
                    let _ = sqlx::query("ANALYZE").execute(pool).await;
                }
                Ok(CopyOutcome::Copied(report))
            }
            Ok(refused) => {
                dst.rollback().await?;
                Ok(refused)
            }
            Err(e) => {
                let _ = dst.rollback().await;
                Err(e)
            }
        }
    }

    /// A read transaction whose reads all see one snapshot of the database, so that rows
    /// written meanwhile never show up half (a run without its samples).
    async fn begin_snapshot(&self) -> Result<Tx, Error> {
        Ok(Tx::from(match &self.backend {
            // A deferred transaction: its first read fixes the snapshot (WAL).
            Backend::Sqlite(p) => TxInner::Sqlite(p.begin().await?),
            Backend::Postgres(p) => TxInner::Postgres(
                p.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await?,
            ),
        }))
    }

    /// Refuses a database whose tables or columns are not exactly the ones [`TABLES`] knows:
    /// a copy must never leave out what a newer schema added.
    async fn check_schema(&self, which: &str) -> Result<(), Error> {
        let sql = if self.is_postgres() {
            "SELECT CAST(c.table_name AS TEXT), CAST(c.column_name AS TEXT) \
             FROM information_schema.columns c \
             JOIN information_schema.tables t \
               ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
             WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' \
               AND c.table_name <> '_sqlx_migrations'"
        } else {
            "SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p \
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' \
               AND m.name <> '_sqlx_migrations'"
        };
        let rows: Vec<(String, String)> =
            with_pool!(self, |pool| sqlx::query_as(sql).fetch_all(pool).await?);
        let mut found: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (table, column) in rows {
            found.entry(table).or_default().insert(column);
        }
        let mut problems = Vec::new();
        for t in TABLES {
            let want: BTreeSet<String> = t.cols.iter().map(|c| c.0.to_string()).collect();
            match found.remove(t.name) {
                None => problems.push(format!("no table {}", t.name)),
                Some(have) if have != want => {
                    let extra: Vec<_> = have.difference(&want).map(String::as_str).collect();
                    let missing: Vec<_> = want.difference(&have).map(String::as_str).collect();
                    let mut what = Vec::new();
                    if !extra.is_empty() {
                        what.push(format!("columns unknown to the copy: {}", extra.join(", ")));
                    }
                    if !missing.is_empty() {
                        what.push(format!("no columns {}", missing.join(", ")));
                    }
                    problems.push(format!("table {}: {}", t.name, what.join(", ")));
                }
                Some(_) => {}
            }
        }
        // A large import's blocks in flight: moved into series_block when it ends, never
        // copied.
        found.remove("pending_blocks");
        for table in found.keys() {
            problems.push(format!("table {table} is unknown to the copy"));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "the {which} database's schema is not the one this version copies: {}",
                problems.join("; ")
            )))
        }
    }
}

/// Row counts of every table, in [`TABLES`] order.
async fn counts(tx: &mut Tx) -> Result<Vec<u64>, Error> {
    let mut out = Vec::with_capacity(TABLES.len());
    for t in TABLES {
        let sql = format!("SELECT COUNT(*) FROM {}", t.name);
        let n: i64 = with_tx!(&mut *tx, |c| sqlx::query_scalar(AssertSqlSafe(sql))
            .fetch_one(&mut **c)
            .await?);
        out.push(n as u64);
    }
    Ok(out)
}

async fn copy_tables(
    src: &mut Tx,
    dst: &mut Tx,
    force: bool,
    progress: &mut impl FnMut(&CopyProgress),
) -> Result<CopyOutcome, Error> {
    let present = counts(dst).await?;
    if present.iter().any(|&n| n > 0) {
        if !force {
            let tables = TABLES
                .iter()
                .zip(present)
                .filter(|(_, n)| *n > 0)
                .map(|(t, n)| (t.name, n))
                .collect();
            return Ok(CopyOutcome::TargetNotEmpty(tables));
        }
        // Children first, so that no foreign key is ever left dangling.
        for t in TABLES.iter().rev() {
            let sql = format!("DELETE FROM {}", t.name);
            with_tx!(&mut *dst, |c| {
                sqlx::query(AssertSqlSafe(sql)).execute(&mut **c).await?;
            });
        }
    }
    let sizes = counts(src).await?;
    let total: u64 = sizes.iter().sum();
    let mut report = CopyReport::default();
    let mut rows = 0u64;
    for (t, &table_total) in TABLES.iter().zip(&sizes) {
        let mut table_rows = 0u64;
        let mut after: Option<Vec<Val>> = None;
        progress(&CopyProgress {
            table: t.name,
            table_rows,
            table_total,
            rows,
            total,
        });
        while table_rows < table_total {
            let page = read_page(src, t, after.as_deref()).await?;
            if page.is_empty() {
                break;
            }
            after = page.last().map(|r| key_of(t, r));
            let n = page.len() as u64;
            if t.name == "artifact_chunks" {
                for r in &page {
                    if let Some(Val::Blob(Some(b))) = r.get(2) {
                        report.artifact_bytes += b.len() as u64;
                    }
                }
            }
            insert_page(dst, t, page).await?;
            table_rows += n;
            rows += n;
            progress(&CopyProgress {
                table: t.name,
                table_rows,
                table_total,
                rows,
                total,
            });
        }
        // The snapshot counted these rows; another number means the paging skipped or
        // repeated some.
        if table_rows != table_total {
            return Err(Error::Corrupt(format!(
                "{}: copied {table_rows} rows of {table_total}",
                t.name
            )));
        }
        report.tables.push((t.name, table_rows));
    }
    Ok(CopyOutcome::Copied(report))
}

/// The key columns' values of a row, to page on from it.
fn key_of(t: &Table, row: &[Val]) -> Vec<Val> {
    t.key
        .iter()
        .map(|k| {
            let i = t.cols.iter().position(|c| c.0 == *k).unwrap_or(0);
            row[i].clone()
        })
        .collect()
}

fn where_sql(conds: &[String]) -> String {
    if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    }
}

/// The next page of `t` in key order, after the key `after` (from the first row without it):
/// at most [`PAGE_ROWS`] rows, and no more than fit in [`PAGE_BYTES`] of large values.
async fn read_page(src: &mut Tx, t: &Table, after: Option<&[Val]>) -> Result<Vec<Vec<Val>>, Error> {
    let key = t.key.join(", ");
    let mut conds = Vec::new();
    let mut binds: Vec<Val> = after.map(<[Val]>::to_vec).unwrap_or_default();
    if after.is_some() {
        // A row-value comparison pages through a composite key on its index.
        conds.push(format!("({key}) > ({})", placeholders(1, t.key.len())));
    }
    let mut limit = PAGE_ROWS;
    if !t.big.is_empty() {
        let Some((upto, rows)) = fitting(src, t, &conds, &binds).await? else {
            return Ok(Vec::new());
        };
        conds.push(format!(
            "({key}) <= ({})",
            placeholders(binds.len() + 1, t.key.len())
        ));
        binds.extend(upto);
        limit = rows;
    }
    let cols: Vec<&str> = t.cols.iter().map(|c| c.0).collect();
    let sql = format!(
        "SELECT {} FROM {}{} ORDER BY {key} LIMIT {limit}",
        cols.join(", "),
        t.name,
        where_sql(&conds)
    );
    with_tx!(src, |tx| {
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for v in binds {
            q = bind!(q, v);
        }
        let fetched = q.fetch_all(&mut **tx).await?;
        let mut out = Vec::with_capacity(fetched.len());
        for row in &fetched {
            let mut vals = Vec::with_capacity(t.cols.len());
            for (i, (_, ty)) in t.cols.iter().enumerate() {
                vals.push(decode!(row, i, ty));
            }
            out.push(vals);
        }
        Ok(out)
    })
}

/// How far the next page of a table with large values reaches: the key of its last row and
/// its row count (`None`: no rows left). Only keys and sizes are read.
async fn fitting(
    src: &mut Tx,
    t: &Table,
    conds: &[String],
    binds: &[Val],
) -> Result<Option<(Vec<Val>, usize)>, Error> {
    let sizes: Vec<String> = t
        .big
        .iter()
        .map(|c| format!("COALESCE(octet_length({c}), 0)"))
        .collect();
    let key = t.key.join(", ");
    let sql = format!(
        "SELECT {key}, CAST({} AS BIGINT) FROM {}{} ORDER BY {key} LIMIT {PAGE_ROWS}",
        sizes.join(" + "),
        t.name,
        where_sql(conds)
    );
    let key_types: Vec<Ty> = t
        .key
        .iter()
        .map(|k| t.cols.iter().find(|c| c.0 == *k).map_or(Ty::Int, |c| c.1))
        .collect();
    with_tx!(src, |tx| {
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for v in binds {
            q = bind!(q, v.clone());
        }
        let fetched = q.fetch_all(&mut **tx).await?;
        let (mut bytes, mut rows, mut upto) = (0i64, 0usize, None);
        for row in &fetched {
            let size: i64 = row.try_get(key_types.len())?;
            bytes += size;
            // A row larger than the budget alone is still a page.
            if rows > 0 && bytes > PAGE_BYTES {
                break;
            }
            let mut k = Vec::with_capacity(key_types.len());
            for (i, ty) in key_types.iter().enumerate() {
                k.push(decode!(row, i, ty));
            }
            upto = Some(k);
            rows += 1;
        }
        Ok(upto.map(|k| (k, rows)))
    })
}

/// Writes a page of rows into `t`, in multi-row INSERTs.
async fn insert_page(dst: &mut Tx, t: &Table, page: Vec<Vec<Val>>) -> Result<(), Error> {
    let cols: Vec<&str> = t.cols.iter().map(|c| c.0).collect();
    let per_stmt = (MAX_PARAMS / cols.len()).max(1);
    let mut page = page.into_iter().peekable();
    while page.peek().is_some() {
        let chunk: Vec<Vec<Val>> = page.by_ref().take(per_stmt).collect();
        let mut sql = format!("INSERT INTO {} ({}) VALUES ", t.name, cols.join(", "));
        for r in 0..chunk.len() {
            let sep = if r == 0 { "" } else { ", " };
            let _ = write!(
                sql,
                "{sep}({})",
                placeholders(r * cols.len() + 1, cols.len())
            );
        }
        with_tx!(&mut *dst, |tx| {
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for v in chunk.into_iter().flatten() {
                q = bind!(q, v);
            }
            q.execute(&mut **tx).await?;
        });
    }
    Ok(())
}

/// Sets every identity sequence of a PostgreSQL target past the copied ids, so that the next
/// insert does not collide with them (an empty table starts again at 1).
async fn reset_identities(dst: &mut Tx) -> Result<(), Error> {
    for t in TABLES.iter().filter(|t| t.identity) {
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence('{0}', 'id'), COALESCE(MAX(id), 1), \
             MAX(id) IS NOT NULL) FROM {0}",
            t.name
        );
        with_tx!(&mut *dst, |c| {
            sqlx::query(AssertSqlSafe(sql)).execute(&mut **c).await?;
        });
    }
    Ok(())
}
