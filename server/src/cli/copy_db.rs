//! `quiescent copy-db`: everything one database holds, copied into another of either engine
//! (a SQLite file moved to a shared PostgreSQL server, or a PostgreSQL database taken home as a
//! file). Ids are kept, so links to runs and shared comparisons stay valid.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;

use crate::config::DbArgs;

#[derive(Debug, clap::Args)]
pub struct CopyDbArgs {
    /// The database to copy: a SQLite file (which must exist) or a PostgreSQL URL. It is read
    /// as of the moment the copy starts.
    #[arg(long)]
    pub from: PathBuf,
    /// The database to fill: a SQLite file (created if missing) or a PostgreSQL URL (an
    /// existing database). It must hold no data, unless --force.
    #[arg(long)]
    pub to: PathBuf,
    /// Delete everything the target holds first (in the copy's transaction: a failed copy
    /// deletes nothing). Restart servers running on the target afterwards: they keep the
    /// names and build placements they have read, which the copy replaced.
    #[arg(long)]
    pub force: bool,
}

pub async fn run(args: CopyDbArgs) -> anyhow::Result<ExitCode> {
    let from = DbArgs { db: args.from };
    let to = DbArgs { db: args.to };
    if same_database(&from, &to) {
        anyhow::bail!("--from and --to name the same database {}", from.shown());
    }
    // Opening the source never creates it: a mistyped path must not copy an empty database.
    if !from.exists() {
        anyhow::bail!(
            "the source database {} does not exist (--from): nothing to copy",
            from.shown()
        );
    }
    let source = from
        .open_existing_store()
        .await
        .context("opening the source (--from)")?;
    // A SQLite target the copy creates is removed again if the copy fails.
    let created = !to.exists();
    let target = to.open_store().await.context("opening the target (--to)")?;
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} copying [{bar:30}] {pos}/{len} rows {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let started = Instant::now();
    let table = Cell::new("");
    let outcome = source
        .copy_to(&target, args.force, |p| {
            table.set(p.table);
            bar.set_length(p.total);
            bar.set_position(p.rows);
            bar.set_message(format!("{} {}/{}", p.table, p.table_rows, p.table_total));
        })
        .await
        .with_context(|| match table.get() {
            "" => format!("copying {} into {}", from.shown(), to.shown()),
            t => format!(
                "copying {} into {} (table {t}; nothing was written)",
                from.shown(),
                to.shown()
            ),
        });
    bar.finish_and_clear();
    source.close().await;
    target.close().await;
    if created && !matches!(outcome, Ok(store::CopyOutcome::Copied(_))) {
        remove_sqlite(&to.db);
    }
    let report = match outcome? {
        store::CopyOutcome::Copied(report) => report,
        store::CopyOutcome::TargetNotEmpty(tables) => {
            let held: Vec<String> = tables
                .iter()
                .map(|(table, n)| format!("{table} {n}"))
                .collect();
            anyhow::bail!(
                "the target {} already holds data (rows: {}); nothing was copied. \
                 Copy into an empty database, or pass --force to delete everything in it first",
                to.shown(),
                held.join(", ")
            );
        }
    };
    let rows: u64 = report.tables.iter().map(|t| t.1).sum();
    println!(
        "copied {} ({}) into {} ({}): {rows} rows in {:.1} s",
        from.shown(),
        source.engine(),
        to.shown(),
        target.engine(),
        started.elapsed().as_secs_f64()
    );
    for (table, n) in &report.tables {
        println!("  {table:<18} {n:>10}");
    }
    println!(
        "  artifact bytes     {:>10} ({})",
        report.artifact_bytes,
        crate::format::human_bytes(report.artifact_bytes as f64)
    );
    Ok(ExitCode::SUCCESS)
}

/// True when both name one database: the same text, or one SQLite file reached by two paths.
fn same_database(a: &DbArgs, b: &DbArgs) -> bool {
    if a.db == b.db {
        return true;
    }
    if a.is_postgres() || b.is_postgres() {
        return false;
    }
    match (std::fs::canonicalize(&a.db), std::fs::canonicalize(&b.db)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Removes a SQLite database file and its WAL companions, as far as they exist.
fn remove_sqlite(db: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
}
