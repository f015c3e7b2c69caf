//! The stored side of the server's limits: token scopes, idempotency keys bound to content,
//! shared comparisons deduplicated by content, and opening a database without writing to it.

use std::str::FromStr;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::sqlite::SqlitePoolOptions;

use crate::with_pool;
use crate::{Backend, Error, NewShare, Store, now};

/// The machines and build labels a token may write (globs); `None` means any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenScopes {
    pub machines: Option<String>,
    pub builds: Option<String>,
}

/// What an idempotency key was first used for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyUse {
    pub run_id: i64,
    /// sha256 of that upload's content; `None` for keys stored before it was recorded.
    pub content_hash: Option<String>,
}

impl Store {
    /// Sets the scopes of the token named `name`; false when there is no such token.
    pub async fn set_token_scopes(&self, name: &str, scopes: &TokenScopes) -> Result<bool, Error> {
        with_pool!(self, |pool| {
            let done = sqlx::query(
                "UPDATE tokens SET machines_glob = $1, builds_glob = $2 WHERE name = $3",
            )
            .bind(scopes.machines.as_deref())
            .bind(scopes.builds.as_deref())
            .bind(name)
            .execute(pool)
            .await?
            .rows_affected();
            Ok(done == 1)
        })
    }

    /// The scopes of token `id` (none when unknown).
    pub async fn token_scopes(&self, id: i64) -> Result<TokenScopes, Error> {
        with_pool!(self, |pool| {
            let row: Option<(Option<String>, Option<String>)> =
                sqlx::query_as("SELECT machines_glob, builds_glob FROM tokens WHERE id = $1")
                    .bind(id)
                    .fetch_optional(pool)
                    .await?;
            Ok(row
                .map(|(machines, builds)| TokenScopes { machines, builds })
                .unwrap_or_default())
        })
    }

    /// The run and content an earlier upload by `token_id` with `key` stored, if any.
    pub async fn idempotency_key_use(
        &self,
        token_id: i64,
        key: &str,
    ) -> Result<Option<KeyUse>, Error> {
        with_pool!(self, |pool| {
            let row: Option<(i64, Option<String>)> = sqlx::query_as(
                "SELECT run_id, content_hash FROM idempotency_keys WHERE token_id = $1 AND key = $2",
            )
            .bind(token_id)
            .bind(key)
            .fetch_optional(pool)
            .await?;
            Ok(row.map(|(run_id, content_hash)| KeyUse {
                run_id,
                content_hash,
            }))
        })
    }

    /// Remembers that `token_id`'s upload with `key` and content `content_hash` stored `run_id`
    /// (the first one stays).
    pub async fn remember_idempotency_key_for(
        &self,
        token_id: i64,
        key: &str,
        run_id: i64,
        content_hash: &str,
    ) -> Result<(), Error> {
        with_pool!(self, |pool| {
            sqlx::query(crate::idempotency::REMEMBER_KEY)
                .bind(token_id)
                .bind(key)
                .bind(run_id)
                .bind(now())
                .bind(content_hash)
                .execute(pool)
                .await?;
            Ok(())
        })
    }

    /// The id of the comparison stored with `content_hash`, if any.
    pub async fn share_by_content(&self, content_hash: &str) -> Result<Option<String>, Error> {
        with_pool!(self, |pool| {
            Ok(
                sqlx::query_scalar("SELECT id FROM comparisons WHERE content_hash = $1")
                    .bind(content_hash)
                    .fetch_optional(pool)
                    .await?,
            )
        })
    }

    /// Stores a comparison under `s.id` with `content_hash`, or finds the one already stored
    /// with that content: returns the id that holds it, or `None` when `s.id` is taken by
    /// another comparison (pick another id).
    pub async fn insert_share_once(
        &self,
        s: &NewShare<'_>,
        content_hash: &str,
    ) -> Result<Option<String>, Error> {
        with_pool!(self, |pool| {
            let done = sqlx::query(
                "INSERT INTO comparisons (id, base_label, head_label, settings_json, base_runs_json, head_runs_json, created_at, content_hash) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
            )
            .bind(s.id)
            .bind(s.base_label)
            .bind(s.head_label)
            .bind(s.settings_json)
            .bind(s.base_runs_json)
            .bind(s.head_runs_json)
            .bind(now())
            .bind(content_hash)
            .execute(pool)
            .await?
            .rows_affected();
            if done == 1 {
                return Ok(Some(s.id.to_string()));
            }
            // Either the content is there already (a concurrent share) or the id was taken.
            self.share_by_content(content_hash).await
        })
    }

    /// Opens an existing database for reading only: no file is created, no migration runs, and
    /// nothing is written (for a database on a read-only filesystem).
    pub async fn open_read_only(path: &str) -> Result<Store, Error> {
        let url = if path.starts_with("sqlite:") {
            path.to_string()
        } else {
            format!("sqlite://{path}")
        };
        let opts = SqliteConnectOptions::from_str(&url)?
            .read_only(true)
            .immutable(true)
            .create_if_missing(false);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(opts)
            .await?;
        Ok(Store::over(Backend::Sqlite(pool)))
    }
}
