//! Locks by name shared by every server on one database, for steps that must not run in two
//! servers at once but are not one write transaction (an upload's idempotency key checked
//! before its import and recorded after it; the webhook's sender).
//!
//! On PostgreSQL a lock is a transaction-scoped advisory lock on a connection of its own,
//! keyed `(NAMED_LOCKS, hashtext(name))`: the two-key space, apart from the write lock's one
//! key. It is released when the lock is released or dropped, and by PostgreSQL when the server
//! holding it dies. On SQLite (one server per file) it is one of [`LOCAL_LOCKS`] mutexes of
//! the process, chosen by the name's hash.

use sqlx::{Postgres, Transaction};

use crate::engine::Backend;
use crate::{Error, Store};

/// The first key of every named lock (`"quie"` in ASCII).
const NAMED_LOCKS: i32 = 0x7175_6965;

/// The mutexes named locks map to on SQLite.
pub(crate) const LOCAL_LOCKS: usize = 64;

/// A named lock held until released or dropped.
#[must_use = "the lock is released when dropped"]
pub struct NamedLock {
    tx: Option<Transaction<'static, Postgres>>,
    _local: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Store {
    /// Waits for the lock `name` and holds it. Two names may share a lock (their hashes
    /// collide): that only makes them wait for each other.
    pub async fn lock_named(&self, name: &str) -> Result<NamedLock, Error> {
        match &self.backend {
            Backend::Sqlite(_) => {
                let mut h = std::hash::DefaultHasher::new();
                std::hash::Hash::hash(name, &mut h);
                let i = std::hash::Hasher::finish(&h) as usize % LOCAL_LOCKS;
                Ok(NamedLock {
                    tx: None,
                    _local: Some(self.named[i].clone().lock_owned().await),
                })
            }
            Backend::Postgres(pool) => {
                let mut tx = pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
                    .bind(NAMED_LOCKS)
                    .bind(name)
                    .execute(&mut *tx)
                    .await?;
                Ok(NamedLock {
                    tx: Some(tx),
                    _local: None,
                })
            }
        }
    }
}

impl NamedLock {
    /// Releases the lock now (dropping it releases it when its connection goes back to the
    /// pool).
    pub async fn release(self) {
        if let Some(tx) = self.tx {
            let _ = tx.rollback().await;
        }
    }
}
