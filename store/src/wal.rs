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
//!
//! The log's length is what it holds since its last start, read from the header of SQLite's
//! shared wal-index (`-shm`), not the file's length: a restarted log is written again from the
//! start of a file that keeps its length (up to `journal_size_limit`), so the file's length
//! would call for another restart after every commit that follows one.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
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
    /// SQLite's wal-index beside it (`-shm`), whose header counts the log's frames.
    index: Option<PathBuf>,
    /// The log length (bytes) from which a restart is tried.
    restart_from: AtomicU64,
    /// The length from which the next try is made (after one that found a reader).
    next_try: AtomicU64,
    /// Restarts tried so far.
    tried: AtomicU64,
}

impl Log {
    /// The log of the database `pool` opens.
    pub(crate) fn of(pool: &SqlitePool) -> Log {
        let opts = pool.connect_options();
        let beside = |suffix: &str| {
            (!in_memory(&opts)).then(|| {
                let mut file = opts.get_filename().to_path_buf().into_os_string();
                file.push(suffix);
                PathBuf::from(file)
            })
        };
        Log {
            path: beside("-wal"),
            index: beside("-shm"),
            restart_from: AtomicU64::new(RESTART_FROM),
            next_try: AtomicU64::new(RESTART_FROM),
            tried: AtomicU64::new(0),
        }
    }

    /// No log to keep (PostgreSQL).
    pub(crate) fn none() -> Log {
        Log {
            path: None,
            index: None,
            restart_from: AtomicU64::new(u64::MAX),
            next_try: AtomicU64::new(u64::MAX),
            tried: AtomicU64::new(0),
        }
    }

    /// The log file's length in bytes, when there is a file: the longest the log has been
    /// since the file was last cut back.
    pub(crate) fn bytes(&self) -> Option<u64> {
        let path = self.path.as_ref()?;
        std::fs::metadata(path).ok().map(|m| m.len())
    }

    /// What the log holds since its last start, in bytes (its header and frames); the file's
    /// length when the wal-index cannot be read.
    pub(crate) fn held_bytes(&self) -> Option<u64> {
        self.index
            .as_deref()
            .and_then(held_by_index)
            .or_else(|| self.bytes())
    }

    /// Sets the length from which the log is restarted (tests use a short one).
    #[cfg(feature = "test-support")]
    pub(crate) fn set_restart_from(&self, bytes: u64) {
        self.restart_from.store(bytes, Ordering::Relaxed);
        self.next_try.store(bytes, Ordering::Relaxed);
    }

    /// Restarts tried so far (tests).
    #[cfg(feature = "test-support")]
    pub(crate) fn tried(&self) -> u64 {
        self.tried.load(Ordering::Relaxed)
    }

    /// Starts the log again when it has grown past the next try's length. Called by the holder
    /// of the write turn after its commit. True when a restart ran to completion.
    pub(crate) async fn restart_if_long(&self, pool: &SqlitePool) -> Result<bool, Error> {
        let next_try = self.next_try.load(Ordering::Relaxed);
        // The log holds no more than its file: a file under the length (most commits) needs
        // no read of the wal-index.
        if self.bytes().is_none_or(|file| file <= next_try) {
            return Ok(false);
        }
        let Some(len) = self.held_bytes() else {
            return Ok(false);
        };
        if len <= next_try {
            return Ok(false);
        }
        self.tried.fetch_add(1, Ordering::Relaxed);
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

/// The bytes the log holds, from the header of the wal-index at `index`
/// (<https://sqlite.org/walformat.html>): its page size at byte 14 (`u16`, 1 for 65,536) and
/// its last valid frame at byte 16 (`u32`), in the machine's byte order; a frame is a page and
/// 24 bytes, after the log's own 32-byte header. SQLite keeps two copies of the 48-byte header
/// and writes them one after the other: copies that differ were read mid-write, and give
/// `None`, as does a wal-index not yet set up.
fn held_by_index(index: &Path) -> Option<u64> {
    let mut head = [0u8; 96];
    std::fs::File::open(index)
        .ok()?
        .read_exact_at(&mut head, 0)
        .ok()?;
    let (first, second) = head.split_at(48);
    // Byte 12 is 1 once the header is set up.
    if first != second || first[12] != 1 {
        return None;
    }
    let page = match u16::from_ne_bytes([first[14], first[15]]) {
        1 => 65_536,
        p => u64::from(p),
    };
    let frames = u64::from(u32::from_ne_bytes(first[16..20].try_into().ok()?));
    Some(if frames == 0 {
        0
    } else {
        32 + frames * (page + 24)
    })
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

#[cfg(test)]
mod tests {
    use super::held_by_index;

    /// A wal-index header of `page` (as stored) and `frames`, both copies alike.
    fn index(page: u16, frames: u32) -> Vec<u8> {
        let mut head = vec![0u8; 48];
        head[12] = 1;
        head[14..16].copy_from_slice(&page.to_ne_bytes());
        head[16..20].copy_from_slice(&frames.to_ne_bytes());
        let mut both = head.clone();
        both.extend_from_slice(&head);
        both
    }

    fn held(bytes: &[u8]) -> Option<u64> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-shm");
        std::fs::write(&path, bytes).unwrap();
        held_by_index(&path)
    }

    #[test]
    fn the_header_counts_frames_of_a_page_and_24_bytes_after_32() {
        assert_eq!(held(&index(4096, 10)), Some(32 + 10 * 4120));
        assert_eq!(held(&index(4096, 0)), Some(0));
        // A page size of 65,536 is stored as 1.
        assert_eq!(held(&index(1, 2)), Some(32 + 2 * 65_560));
    }

    #[test]
    fn a_header_read_mid_write_or_not_set_up_counts_nothing() {
        let mut torn = index(4096, 10);
        torn[48 + 16] ^= 1;
        assert_eq!(held(&torn), None);
        let mut unset = index(4096, 10);
        unset[12] = 0;
        unset[48 + 12] = 0;
        assert_eq!(held(&unset), None);
        assert_eq!(held(&index(4096, 10)[..60]), None, "a short file");
    }
}
