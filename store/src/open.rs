//! Opening a database: the connection options, the pool and the embedded migrations.

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::{Backend, Error, Store};

/// The embedded SQLite migrations (`migrations/sqlite/`). Files already released must never
/// change: sqlx refuses a database whose applied migrations' checksums differ.
pub static SQLITE_MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");

impl Store {
    /// Opens (creating if needed) the database at `path` with WAL, foreign keys and a busy
    /// timeout, and applies the migrations. `path` may be a file path or a `sqlite:` URL.
    pub async fn open(path: &str) -> Result<Store, Error> {
        let url = if path.starts_with("sqlite:") {
            path.to_string()
        } else {
            format!("sqlite://{path}")
        };
        let opts = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(opts)
            .await?;
        SQLITE_MIGRATOR.run(&pool).await?;
        crate::upgrade::pack_v1_samples(&pool).await?;
        Ok(Store {
            backend: Backend::Sqlite(pool),
        })
    }
}
