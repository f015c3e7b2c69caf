//! The store's error type: what went wrong reading or writing the database, in terms of the data
//! (the server maps these to HTTP statuses, the CLI prints them).

use std::path::PathBuf;

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file could not be parsed (or detected); carries the file and line.
    #[error(transparent)]
    Parse(#[from] ingest::Error),
    /// The request itself is unacceptable (empty names, a conflicting build, no input...).
    #[error("{0}")]
    Invalid(String),
    /// Reading an input file or writing an artifact out failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Data already stored is unreadable (a corrupt row).
    #[error("stored data unreadable: {0}")]
    Corrupt(String),
    #[error("database: {0}")]
    Db(sqlx::Error),
    /// A write shared with other imports failed (see `group`); the database error as text.
    #[error("database: {0}")]
    Write(String),
    /// The upload token named `token` is revoked: the server's check before a body is read
    /// and the group commit's in the transaction that would store it (see `group`) say so alike.
    #[error("token {token:?} was revoked; ask for a new one (`quiescent token create`)")]
    Revoked { token: String },
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Error {
        // PostgreSQL text cannot hold NUL (SQLite's can): that is the input's fault, said as
        // such, not a database failure.
        if let sqlx::Error::Database(d) = &e
            && d.code().as_deref() == Some("22021")
            && d.message().contains("0x00")
        {
            return Error::Invalid("text must not contain NUL characters (\\0)".into());
        }
        Error::Db(e)
    }
}

impl Error {
    /// True when the database is busy or locked by another writer (worth a retry): SQLite's
    /// busy and locked errors, PostgreSQL's serialization failures, deadlocks and lock
    /// timeouts.
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Db(sqlx::Error::Database(e)) => {
                let m = e.message();
                m.contains("database is locked")
                    || m.contains("busy")
                    || matches!(e.code().as_deref(), Some("40001" | "40P01" | "55P03"))
            }
            _ => false,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
