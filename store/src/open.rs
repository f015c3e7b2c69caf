//! Opening a database: the connection options, the pool and the embedded migrations of each
//! engine. A `postgres://` or `postgresql://` URL means PostgreSQL; anything else (a path or a
//! `sqlite:` URL) means SQLite.

use std::str::FromStr;
use std::time::Duration;

use sqlx::ConnectOptions as _;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::{Backend, Error, Store};

/// The embedded SQLite migrations (`migrations/sqlite/`). Files already released must never
/// change: sqlx refuses a database whose applied migrations' checksums differ.
pub static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

/// The embedded PostgreSQL migrations (`migrations/postgres/`), the same schema in
/// PostgreSQL's types (BIGINT ids, BYTEA, byte-order text).
pub static POSTGRES_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Statements slower than this are logged at INFO, not sqlx's default WARN: reading a 64-CPU
/// profile's history takes seconds by design, and `ingest` printed a warning with the whole
/// statement for it. `QUIESCENT_LOG=sqlx=info` shows them.
const SLOW_STATEMENT: Duration = Duration::from_secs(1);

/// True when `db` names a PostgreSQL database rather than a SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

impl Store {
    /// Opens (creating if needed) the database `db` and applies the migrations. `db` is a
    /// PostgreSQL URL, a SQLite file path or a `sqlite:` URL; SQLite runs with WAL, foreign
    /// keys, a busy timeout, and each commit synced to disk before it returns: an answered
    /// upload survives a power cut, and group commit (see `group`) shares the sync between the
    /// uploads ready together.
    pub async fn open(db: &str) -> Result<Store, Error> {
        if is_postgres_url(db) {
            return open_postgres(db).await;
        }
        let url = if db.starts_with("sqlite:") {
            db.to_string()
        } else {
            format!("sqlite://{db}")
        };
        let opts = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_millis(crate::wal::BUSY_TIMEOUT_MS.into()))
            .log_slow_statements(log::LevelFilter::Info, SLOW_STATEMENT)
            // After a restart of a log that grew past this (see `wal`), the file is cut back.
            .pragma(
                "journal_size_limit",
                (crate::wal::RESTART_FROM * 4).to_string(),
            )
            // A savepoint's journal (each group of uploads writes in one) and temporary
            // tables in memory: on disk, the copies of the pages a group changes went through
            // a temporary file's page cache, a write call each, while the writer held the lock.
            .pragma("temp_store", "memory");
        // A file's connections do not go stale: no ping before each use (a round trip to the
        // connection's thread, as dear as a small query).
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .test_before_acquire(false)
            .connect_with(opts.clone())
            .await?;
        SQLITE_MIGRATOR.run(&pool).await?;
        crate::upgrade::pack_v1_samples(&pool).await?;
        let mut store = Store::over(Backend::Sqlite(pool));
        // The writes' own connection (see `engine::WritePool`), opened on the writer's thread. A
        // database in memory is one per connection, so its writes stay on the pool.
        if !crate::wal::in_memory(&opts) {
            let writes = SqlitePoolOptions::new()
                .max_connections(1)
                .test_before_acquire(false)
                // Never closed for idleness or age: opened again, it would be by whichever
                // thread wrote next, and its thread would leave the writer's CPU.
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_lazy_with(opts);
            crate::group::open_on_writer(&writes).await?;
            store.sqlite_writes = Some(writes);
        }
        store.remove_abandoned_blocks().await?;
        Ok(store)
    }
}

/// PostgreSQL: the database must exist (it is the server's to create, with its owner and
/// backups); the schema is created or migrated in it. Migrations take sqlx's own lock, so
/// servers starting together migrate once.
async fn open_postgres(url: &str) -> Result<Store, Error> {
    let opts = PgConnectOptions::from_str(url)?
        .application_name("quiescent")
        .log_slow_statements(log::LevelFilter::Info, SLOW_STATEMENT);
    // One connection first: a wrong host, port or password says so at once, where the pool
    // would retry until its timeout and then only say that it timed out.
    sqlx::Connection::close(<sqlx::PgConnection as sqlx::Connection>::connect_with(&opts).await?)
        .await?;
    let pool = PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(30))
        .connect_with(opts)
        .await?;
    POSTGRES_MIGRATOR.run(&pool).await?;
    let store = Store::over(Backend::Postgres(pool));
    store.remove_abandoned_blocks().await?;
    Ok(store)
}

/// Connections at most of a store opened by [`Store::with_own_connections`]: background work
/// runs one statement at a time.
const OWN_CONNECTIONS: u32 = 2;

impl Store {
    /// This store, with PostgreSQL connections of its own, opened when first needed: for work
    /// on another tokio runtime than the one that opened this store. tokio ties a socket to
    /// the runtime it was opened on, whose thread must then be free to wake its readers, so
    /// two runtimes sharing one pool would each wait on the other's busy stretches. Everything
    /// else is shared: the process's writers still take turns, and caches keyed by
    /// [`Store::instance`] still apply. SQLite's connections run on threads of their own, so
    /// on SQLite this is the store itself.
    pub fn with_own_connections(&self) -> Store {
        let mut store = self.clone();
        if let Backend::Postgres(pool) = &self.backend {
            // The pool's own settings (timeouts), with fewer connections.
            store.backend = Backend::Postgres(
                pool.options()
                    .clone()
                    .max_connections(OWN_CONNECTIONS)
                    .connect_lazy_with((*pool.connect_options()).clone()),
            );
        }
        store
    }
}

/// Staged blocks older than this belong to an import that died midway (see `pending_blocks`).
const ABANDONED_AFTER_SECS: i64 = 24 * 3600;

impl Store {
    /// Removes blocks an import staged and never moved: it died (a kill, a crash) before its
    /// last transaction. Imports in flight on other servers are much younger.
    async fn remove_abandoned_blocks(&self) -> Result<(), Error> {
        crate::with_pool!(self, |pool| {
            sqlx::query("DELETE FROM pending_blocks WHERE created_at < $1")
                .bind(crate::now() - ABANDONED_AFTER_SECS)
                .execute(pool)
                .await?;
        });
        Ok(())
    }
}
