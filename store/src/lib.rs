//! quiescent's database: the connection and embedded migrations ([`Store::open`]), the import
//! of parsed runs in one transaction ([`Store::import_run`], fed by ingest's `Sink` events) and
//! the raw artifacts, byte for byte.
//!
//! Everything that reads or writes the database goes through [`Store`], so that another backend
//! (PostgreSQL) can sit beside SQLite behind the same functions.

mod alerts;
mod artifacts;
mod error;
mod hardening;
mod history;
mod idempotency;
mod import;
mod meta;
mod open;
mod read;
mod series;
mod shares;
mod sink;
mod tokens;
mod upgrade;
mod write;

pub use alerts::{ALERT_STATES, Alert, AlertFilter, AlertGroup, NewAlert, Triage};
pub use error::{Error, Result};
pub use hardening::{KeyUse, TokenScopes};
pub use history::{BranchBuild, HistoryKey, HistoryPoint, KeyFilter, Placement, RunSeries};
pub use meta::{
    BuildMeta, ImportOutcome, InputFile, RunMeta, Source, escape_bidi, find_bidi, is_bidi_control,
    params_key, safe_file_name,
};
pub use open::SQLITE_MIGRATOR;
pub use read::{run_values, series_values};
pub use series::NewSeries;
pub use shares::{NewShare, StoredShare};
pub use tokens::{Revoked, StoredToken, TokenRow};
pub use write::{pack, unpack};

/// The database. Cheap to clone (it wraps a connection pool).
#[derive(Clone, Debug)]
pub struct Store {
    backend: Backend,
}

/// The engine behind a [`Store`]; one variant per supported database.
#[derive(Clone, Debug)]
enum Backend {
    Sqlite(sqlx::SqlitePool),
}

impl Store {
    /// A store over the pool of a database already opened (and migrated) by [`Store::open`].
    pub fn from_sqlite_pool(pool: sqlx::SqlitePool) -> Store {
        Store {
            backend: Backend::Sqlite(pool),
        }
    }

    /// The SQLite pool, for the queries not yet gathered in this crate (the comparison report).
    pub fn sqlite_pool(&self) -> &sqlx::SqlitePool {
        match &self.backend {
            Backend::Sqlite(p) => p,
        }
    }

    /// Closes every connection (checkpointing the WAL on the last one).
    pub async fn close(&self) {
        match &self.backend {
            Backend::Sqlite(p) => p.close().await,
        }
    }
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
