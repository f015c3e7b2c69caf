//! Upload idempotency keys: per token, the run an earlier request with the same key stored.

use crate::import::existing_outcome;
use crate::{Error, ImportOutcome, Store, Tx, now};
use crate::{with_pool, with_tx};

/// An upload's `Idempotency-Key`, remembered in the transaction that stores its runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    pub token_id: i64,
    pub key: String,
    /// sha256 of the upload's content, so that the key reused with other content is refused.
    pub content_hash: String,
}

/// Stores a key's first use; a later one with the same key leaves it as it is.
pub(crate) const REMEMBER_KEY: &str = "INSERT INTO idempotency_keys (token_id, key, run_id, created_at, content_hash) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (token_id, key) DO NOTHING";

/// Remembers `key` for `run_id` inside an import's transaction (the first use stays).
pub(crate) async fn remember_in(
    tx: &mut Tx,
    key: &IdempotencyKey,
    run_id: i64,
) -> Result<(), Error> {
    with_tx!(tx, |t| {
        sqlx::query(REMEMBER_KEY)
            .bind(key.token_id)
            .bind(&key.key)
            .bind(run_id)
            .bind(now())
            .bind(&key.content_hash)
            .execute(&mut **t)
            .await?;
    });
    Ok(())
}

impl Store {
    /// What an earlier upload by `token_id` with `key` stored (every run of that import), if
    /// there was one.
    pub async fn idempotent_outcome(
        &self,
        token_id: i64,
        key: &str,
    ) -> Result<Option<ImportOutcome>, Error> {
        with_pool!(self, |pool| {
            let run_id: Option<i64> = sqlx::query_scalar(
                "SELECT run_id FROM idempotency_keys WHERE token_id = $1 AND key = $2",
            )
            .bind(token_id)
            .bind(key)
            .fetch_optional(pool)
            .await?;
            let Some(run_id) = run_id else {
                return Ok(None);
            };
            let run_ids: Vec<i64> = sqlx::query_scalar(
                "SELECT id FROM runs WHERE import_hash = (SELECT import_hash FROM runs WHERE id = $1) ORDER BY id",
            )
            .bind(run_id)
            .fetch_all(pool)
            .await?;
            Ok(Some(existing_outcome(self, run_ids).await?))
        })
    }

    /// Remembers that `token_id`'s upload with `key` stored `run_id` (the first one stays).
    pub async fn remember_idempotency_key(
        &self,
        token_id: i64,
        key: &str,
        run_id: i64,
    ) -> Result<(), Error> {
        with_pool!(self, |pool| {
            sqlx::query(
                "INSERT INTO idempotency_keys (token_id, key, run_id, created_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (token_id, key) DO NOTHING",
            )
            .bind(token_id)
            .bind(key)
            .bind(run_id)
            .bind(now())
            .execute(pool)
            .await?;
            Ok(())
        })
    }
}
