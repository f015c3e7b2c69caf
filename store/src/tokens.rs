//! Upload tokens as stored: a name and the hash of the secret (generating, hashing and checking
//! tokens is the server's business).

use crate::with_pool;
use crate::{Error, Store, now};

/// A stored token, looked up by its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    pub id: i64,
    pub name: String,
    pub hash: String,
    pub revoked_at: Option<i64>,
    /// What it may write, read with it: every upload checks both.
    pub scopes: crate::TokenScopes,
}

/// A token in the list, with the number of runs it uploaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: i64,
    pub name: String,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub runs: i64,
}

/// What revoking a token by name did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    Now,
    NotFound,
    Already,
}

impl Store {
    /// Stores a token named `name` with `hash`; false (and nothing stored) when the name is taken.
    pub async fn insert_token(&self, name: &str, hash: &str) -> Result<bool, Error> {
        with_pool!(self, |pool| {
            let mut tx = self.begin_write_on(pool).await?;
            let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM tokens WHERE name = $1")
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?;
            if exists.is_some() {
                return Ok(false);
            }
            sqlx::query("INSERT INTO tokens (name, hash, created_at) VALUES ($1, $2, $3)")
                .bind(name)
                .bind(hash)
                .bind(now())
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(true)
        })
    }

    /// Every token, oldest first, with the number of runs it uploaded.
    pub async fn tokens(&self) -> Result<Vec<TokenRow>, Error> {
        with_pool!(self, |pool| {
            let rows: Vec<(i64, String, i64, Option<i64>, i64)> = sqlx::query_as(
                "SELECT t.id, t.name, t.created_at, t.revoked_at, \
                        (SELECT COUNT(*) FROM runs r WHERE r.token_id = t.id) \
                 FROM tokens t ORDER BY t.id",
            )
            .fetch_all(pool)
            .await?;
            Ok(rows
                .into_iter()
                .map(|(id, name, created_at, revoked_at, runs)| TokenRow {
                    id,
                    name,
                    created_at,
                    revoked_at,
                    runs,
                })
                .collect())
        })
    }

    /// Marks the token named `name` revoked (now), unless it is unknown or already revoked.
    pub async fn revoke_token(&self, name: &str) -> Result<Revoked, Error> {
        with_pool!(self, |pool| {
            let mut tx = self.begin_write_on(pool).await?;
            let row: Option<Option<i64>> =
                sqlx::query_scalar("SELECT revoked_at FROM tokens WHERE name = $1")
                    .bind(name)
                    .fetch_optional(&mut *tx)
                    .await?;
            match row {
                None => return Ok(Revoked::NotFound),
                Some(Some(_)) => return Ok(Revoked::Already),
                Some(None) => {}
            }
            sqlx::query("UPDATE tokens SET revoked_at = $1 WHERE name = $2")
                .bind(now())
                .bind(name)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Revoked::Now)
        })
    }

    /// The token whose hash is `hash`, if any.
    pub async fn token_by_hash(&self, hash: &str) -> Result<Option<StoredToken>, Error> {
        with_pool!(self, |pool| {
            type Row = (
                i64,
                String,
                String,
                Option<i64>,
                Option<String>,
                Option<String>,
            );
            let row: Option<Row> = sqlx::query_as(
                "SELECT id, name, hash, revoked_at, machines_glob, builds_glob FROM tokens WHERE hash = $1",
            )
            .bind(hash)
            .fetch_optional(pool)
            .await?;
            Ok(row.map(
                |(id, name, hash, revoked_at, machines, builds)| StoredToken {
                    id,
                    name,
                    hash,
                    revoked_at,
                    scopes: crate::TokenScopes { machines, builds },
                },
            ))
        })
    }

    /// The name of the token (the rig) that uploaded run `run_id`, if it was uploaded.
    pub async fn uploader_name(&self, run_id: i64) -> Result<Option<String>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "SELECT t.name FROM runs r JOIN tokens t ON t.id = r.token_id WHERE r.id = $1",
            )
            .bind(run_id)
            .fetch_optional(pool)
            .await?)
        })
    }
}

/// The tokens among `ids` that are revoked, with their names, read inside the write
/// transaction `tx`: what a group commit checks before it stores the uploads of those tokens.
pub(crate) async fn revoked_among(
    tx: &mut crate::Tx,
    ids: &[i64],
) -> Result<Vec<(i64, String)>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT id, name FROM tokens WHERE revoked_at IS NOT NULL AND id IN ({})",
        crate::engine::placeholders(1, ids.len())
    );
    Ok(crate::with_tx!(tx, |t| {
        let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
        for id in ids {
            q = q.bind(*id);
        }
        q.fetch_all(&mut **t).await?
    }))
}
