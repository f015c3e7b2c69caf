//! Keeps SQLite's write-ahead log from growing without end under a stream of uploads.
//!
//! SQLite's own checkpoints after a commit are passive: they copy the log into the database
//! but can start the log again from its beginning only at an instant when no reader is using
//! it. A server answering pages and running history passes while rigs upload always has a
//! reader somewhere, so the log only grew (190 MB in 18 s of uploads), every commit wrote to
//! new blocks of the file, which the kernel zeroes first, and every read searched a longer log
//! index.
//!
//! After a group commit (what every import is written through, uploads and `quiescent ingest`
//! alike), while this process's writer still holds its turn, a log longer than
//! [`RESTART_FROM`] is checkpointed in `RESTART` mode: that waits for the readers of the
//! moment (new readers read the database once the log is copied) and makes the next commit
//! write from the start of the file. The wait is bounded by [`WAIT_MS`]; when a reader
//! outlasts it, the next try waits until the log has grown by another quarter of the limit, so
//! that a busy reader does not cost every commit the wait.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::SqlitePool;
use sqlx::sqlite::SqliteConnectOptions;

use crate::Error;

/// A log this long (bytes) is started again after the next group commit: four times what
/// SQLite's automatic checkpoint aims at (1000 pages), so that it runs once in many commits.
pub(crate) const RESTART_FROM: u64 = 16 << 20;

/// The longest a restart waits for readers, in milliseconds, holding the write turn.
const WAIT_MS: u32 = 50;

/// The busy timeout the store's connections have otherwise (see `open`).
pub(crate) const BUSY_TIMEOUT_MS: u32 = 30_000;

/// Whether `opts` open a database in memory, which has no file (nor log).
pub(crate) fn in_memory(opts: &SqliteConnectOptions) -> bool {
    let db = opts.get_filename().as_os_str();
    db.is_empty() || db == ":memory:"
}

/// The log of one SQLite database, and when to restart it next.
#[derive(Debug)]
pub(crate) struct Log {
    /// `None` for an in-memory database or PostgreSQL.
    path: Option<PathBuf>,
    /// The log length (bytes) from which a restart is tried.
    restart_from: AtomicU64,
    /// The length from which the next try is made (after one that found a reader).
    next_try: AtomicU64,
}

impl Log {
    /// The log of the database `pool` opens.
    pub(crate) fn of(pool: &SqlitePool) -> Log {
        let opts = pool.connect_options();
        let path = (!in_memory(&opts)).then(|| {
            let mut log = opts.get_filename().to_path_buf().into_os_string();
            log.push("-wal");
            PathBuf::from(log)
        });
        Log {
            path,
            restart_from: AtomicU64::new(RESTART_FROM),
            next_try: AtomicU64::new(RESTART_FROM),
        }
    }

    /// No log to keep (PostgreSQL).
    pub(crate) fn none() -> Log {
        Log {
            path: None,
            restart_from: AtomicU64::new(u64::MAX),
            next_try: AtomicU64::new(u64::MAX),
        }
    }

    /// The log's length in bytes, when there is a file.
    pub(crate) fn bytes(&self) -> Option<u64> {
        let path = self.path.as_ref()?;
        std::fs::metadata(path).ok().map(|m| m.len())
    }

    /// Sets the length from which the log is restarted (tests use a short one).
    #[cfg(feature = "test-support")]
    pub(crate) fn set_restart_from(&self, bytes: u64) {
        self.restart_from.store(bytes, Ordering::Relaxed);
        self.next_try.store(bytes, Ordering::Relaxed);
    }

    /// Starts the log again when it has grown past the next try's length. Called by the holder
    /// of the write turn after its commit. True when a restart ran to completion.
    pub(crate) async fn restart_if_long(&self, pool: &SqlitePool) -> Result<bool, Error> {
        let Some(len) = self.bytes() else {
            return Ok(false);
        };
        if len <= self.next_try.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let done = restart(pool).await?;
        let from = self.restart_from.load(Ordering::Relaxed);
        let next = if done {
            from
        } else {
            len.saturating_add(from / 4)
        };
        self.next_try.store(next, Ordering::Relaxed);
        Ok(done)
    }
}

/// A `RESTART` checkpoint that waits [`WAIT_MS`] at most for readers: true when it completed.
async fn restart(pool: &SqlitePool) -> Result<bool, Error> {
    let mut conn = pool.acquire().await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "PRAGMA busy_timeout = {WAIT_MS}"
    )))
    .execute(&mut *conn)
    .await?;
    // (busy, log frames, frames copied): busy is 1 when a reader outlasted the wait.
    let done = sqlx::query_as::<_, (i64, i64, i64)>("PRAGMA wal_checkpoint(RESTART)")
        .fetch_one(&mut *conn)
        .await;
    let restored = sqlx::query(sqlx::AssertSqlSafe(format!(
        "PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}"
    )))
    .execute(&mut *conn)
    .await;
    if restored.is_err() {
        // Not back in the pool with the short wait: its other users would give up early.
        conn.close_on_drop();
    }
    restored?;
    Ok(done?.0 == 0)
}
