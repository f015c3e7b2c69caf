//! Shared comparisons (`/c/ID`): the exact runs and settings behind a link, stored as the
//! server serialised them.

use crate::with_pool;
use crate::{Error, Store, now};

/// A stored comparison: its settings and run ids as JSON, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredShare {
    pub settings_json: String,
    pub base_runs_json: String,
    pub head_runs_json: String,
    pub created_at: i64,
}

/// A comparison to store under `id`.
#[derive(Debug, Clone)]
pub struct NewShare<'a> {
    pub id: &'a str,
    pub base_label: &'a str,
    pub head_label: &'a str,
    pub settings_json: &'a str,
    pub base_runs_json: &'a str,
    pub head_runs_json: &'a str,
}

impl Store {
    /// Stores a comparison; false (nothing stored) when its id is already taken.
    pub async fn insert_share(&self, s: &NewShare<'_>) -> Result<bool, Error> {
        with_pool!(self, |pool| {
            let done = sqlx::query(
                "INSERT INTO comparisons (id, base_label, head_label, settings_json, base_runs_json, head_runs_json, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
            )
            .bind(s.id)
            .bind(s.base_label)
            .bind(s.head_label)
            .bind(s.settings_json)
            .bind(s.base_runs_json)
            .bind(s.head_runs_json)
            .bind(now())
            .execute(pool)
            .await?
            .rows_affected();
            Ok(done == 1)
        })
    }

    /// The comparison stored under `id`, if any.
    pub async fn share(&self, id: &str) -> Result<Option<StoredShare>, Error> {
        with_pool!(self, |pool| {
            let row: Option<(String, String, String, i64)> = sqlx::query_as(
                "SELECT settings_json, base_runs_json, head_runs_json, created_at FROM comparisons WHERE id = $1",
            )
            .bind(id)
            .fetch_optional(pool)
            .await?;
            Ok(row.map(
                |(settings_json, base_runs_json, head_runs_json, created_at)| StoredShare {
                    settings_json,
                    base_runs_json,
                    head_runs_json,
                    created_at,
                },
            ))
        })
    }
}
