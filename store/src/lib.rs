//! quiescent's database: the connection and embedded migrations ([`Store::open`]), the import
//! of parsed runs in one transaction ([`Store::import_run`], fed by ingest's `Sink` events) and
//! the raw artifacts, byte for byte.
//!
//! Everything that reads or writes the database goes through [`Store`], so that another backend
//! (PostgreSQL) can sit beside SQLite behind the same functions.

mod alerts;
mod artifacts;
mod bisect;
mod blocks;
mod browse;
mod comparison;
mod copy;
mod engine;
mod error;
mod group;
mod group_batch;
mod hardening;
mod history;
mod history_batch;
mod history_sqlite;
mod idempotency;
mod import;
mod import_rows;
mod meta;
mod named_locks;
mod open;
mod read;
mod runs;
mod runtime;
mod series;
mod shares;
mod sink;
#[cfg(feature = "test-support")]
pub mod testing;
mod tokens;
mod upgrade;
mod wal;
mod write;

use engine::{Backend, Tx, TxInner, with_pool, with_tx};

pub use alerts::{ALERT_STATES, Alert, AlertFilter, AlertGroup, NewAlert, Triage};
pub use bisect::{NewStep, StepRow};
pub use browse::{
    BenchmarkCount, BenchmarkSummary, Build, BuildInfoDetail, BuildSummary, MachineInfo,
    MachineSummary,
};
#[cfg(feature = "test-support")]
pub use comparison::SeriesRow;
pub use comparison::{BuildInfo, BuildLookup, LatencyArtifact, StoredBlock, StoredSeries};
pub use copy::{CopyOutcome, CopyProgress, CopyReport};
pub use error::{Error, Result};
#[cfg(feature = "test-support")]
pub use group::DatabaseWriteLock;
pub use hardening::{KeyUse, TokenScopes};
pub use history::{BranchBuild, HistoryKey, HistoryPoint, KeyFilter, Placement, WholeRunSeries};
pub use history_batch::SavedSeries;
pub use idempotency::IdempotencyKey;
pub use meta::{
    BuildMeta, ImportOutcome, InputFile, RunMeta, Source, escape_bidi, find_bidi, is_bidi_control,
    params_key, safe_file_name,
};
pub use named_locks::NamedLock;
pub use open::{POSTGRES_MIGRATOR, SQLITE_MIGRATOR, is_postgres_url};
pub use runs::{RunArtifact, RunInfo, RunQuery, RunSeries, RunSummary};
pub use runtime::runtime_thread;
pub use series::NewSeries;
pub use shares::{NewShare, StoredShare};
pub use tokens::{Revoked, StoredToken, TokenRow};
pub use write::{pack, unpack};

/// The database. Cheap to clone (it wraps a connection pool).
#[derive(Clone, Debug)]
pub struct Store {
    backend: Backend,
    /// This process's writers take turns here (see [`Store::begin_write`]).
    writer: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Imports waiting for that turn, written together (see `group`).
    queue: std::sync::Arc<group::Queue>,
    /// The names last read (see `write::Names::cached`).
    names: std::sync::Arc<write::NameCache>,
    /// Named locks on SQLite (see `named_locks`).
    named: std::sync::Arc<Vec<std::sync::Arc<tokio::sync::Mutex<()>>>>,
    /// Whether large imports write their blocks in batches first (see `import`).
    stage_large: bool,
    /// Which store this is in the process ([`Store::instance`]).
    instance: u64,
    /// SQLite's write-ahead log, kept short (see `wal`).
    log: std::sync::Arc<wal::Log>,
    /// SQLite: the one connection every write transaction of this store runs on (see
    /// [`engine::WritePool`]); `None` on PostgreSQL and for a database in memory.
    sqlite_writes: Option<sqlx::SqlitePool>,
}

impl Store {
    /// The SQLite pool, for tests and benchmarks that build or inspect a database with raw SQL
    /// (the `test-support` feature: nothing else may bypass the store). Panics on PostgreSQL.
    #[cfg(feature = "test-support")]
    pub fn sqlite_pool(&self) -> &sqlx::SqlitePool {
        match &self.backend {
            Backend::Sqlite(p) => p,
            Backend::Postgres(_) => panic!("sqlite_pool() on a PostgreSQL store"),
        }
    }

    /// The length in bytes of SQLite's write-ahead log file (`None` without one).
    #[cfg(feature = "test-support")]
    pub fn log_bytes(&self) -> Option<u64> {
        self.log.bytes()
    }

    /// What SQLite's write-ahead log holds since it last started, in bytes (`None` without a
    /// log).
    #[cfg(feature = "test-support")]
    pub fn log_held_bytes(&self) -> Option<u64> {
        self.log.held_bytes()
    }

    /// Restarts of SQLite's write-ahead log tried so far by this store's group commits.
    #[cfg(feature = "test-support")]
    pub fn log_restarts_tried(&self) -> u64 {
        self.log.tried()
    }

    /// Sets the log length from which group commits restart SQLite's log (see `wal`);
    /// `u64::MAX` never restarts it.
    #[cfg(feature = "test-support")]
    pub fn set_log_restart_from(&self, bytes: u64) {
        self.log.set_restart_from(bytes);
    }

    /// The PostgreSQL pool, for tests that inspect a database with raw SQL (`test-support`).
    /// Panics on SQLite.
    #[cfg(feature = "test-support")]
    pub fn pg_pool(&self) -> &sqlx::PgPool {
        match &self.backend {
            Backend::Postgres(p) => p,
            Backend::Sqlite(_) => panic!("pg_pool() on a SQLite store"),
        }
    }

    /// A store over a pool opened by [`Store::open`] (the `test-support` feature).
    #[cfg(feature = "test-support")]
    pub fn from_sqlite_pool(pool: sqlx::SqlitePool) -> Store {
        Store::over(Backend::Sqlite(pool))
    }

    /// A store over a new pool: writers of this process take turns on it.
    pub(crate) fn over(backend: Backend) -> Store {
        static OPENED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let log = match &backend {
            Backend::Sqlite(pool) => wal::Log::of(pool),
            Backend::Postgres(_) => wal::Log::none(),
        };
        Store {
            instance: OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            log: std::sync::Arc::new(log),
            backend,
            writer: Default::default(),
            queue: Default::default(),
            names: Default::default(),
            stage_large: false,
            sqlite_writes: None,
            named: std::sync::Arc::new(
                (0..named_locks::LOCAL_LOCKS)
                    .map(|_| Default::default())
                    .collect(),
            ),
        }
    }

    /// This store, with large imports writing their series in bounded batches that other
    /// writers commit between (a server taking uploads from many rigs). It costs a copy of the
    /// blocks within the database: a SQLite file grows by the largest import's size, space its
    /// later writes reuse. Without it (commands), an import writes in one transaction.
    pub fn staging_large_imports(mut self) -> Store {
        self.stage_large = true;
        self
    }

    /// A number naming this store among those the process opened (its clones share it): what
    /// a cache of the store's contents is kept under, so that no other database is served
    /// from it.
    pub fn instance(&self) -> u64 {
        self.instance
    }

    /// Closes every connection (checkpointing SQLite's WAL on the last one).
    pub async fn close(&self) {
        if let Some(w) = &self.sqlite_writes {
            w.close().await;
        }
        with_pool!(self, |p| p.close().await)
    }
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
