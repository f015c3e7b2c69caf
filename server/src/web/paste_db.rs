//! Storage of shared pastes, the only database access of `/paste`: the mail is stored as a
//! content-addressed artifact and a row of `comparisons` points at it (its spec carries a
//! `paste` member), so `/c/{id}` serves frozen comparisons and pastes alike.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::{Row as _, SqlitePool};

use crate::error::AppError;

/// Chunk size of `artifact_chunks`, as the importer writes them.
const CHUNK: usize = 1 << 20;

/// What the `comparisons` row of a paste records besides the labels.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PasteSpec {
    pub artifact_id: i64,
    pub sha256: String,
    pub base_block: Option<String>,
    pub head_block: Option<String>,
}

/// A stored paste, read back.
#[derive(Debug, Clone)]
pub struct StoredPaste {
    pub id: String,
    pub spec: PasteSpec,
    pub text: Vec<u8>,
    pub created_at: i64,
}

/// Stores `text` and returns the new id. The labels and settings are written in the shape of a
/// frozen comparison so that readers of `comparisons` that know nothing of pastes still work.
pub async fn store(
    pool: &SqlitePool,
    text: &[u8],
    base_block: Option<String>,
    head_block: Option<String>,
    base_label: &str,
    head_label: &str,
    settings: &compare::Settings,
) -> Result<String, AppError> {
    let sha = hex::encode(Sha256::digest(text));
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query(
        "INSERT INTO artifacts (sha256, size) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING",
    )
    .bind(&sha)
    .bind(text.len() as i64)
    .execute(&mut *tx)
    .await?;
    let artifact_id: i64 = sqlx::query_scalar("SELECT id FROM artifacts WHERE sha256 = ?")
        .bind(&sha)
        .fetch_one(&mut *tx)
        .await?;
    let chunks: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM artifact_chunks WHERE artifact_id = ?")
            .bind(artifact_id)
            .fetch_one(&mut *tx)
            .await?;
    if chunks == 0 {
        for (seq, chunk) in text.chunks(CHUNK).enumerate() {
            sqlx::query("INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES (?, ?, ?)")
                .bind(artifact_id)
                .bind(seq as i64)
                .bind(chunk)
                .execute(&mut *tx)
                .await?;
        }
    }
    let spec = serde_json::json!({
        "selection": { "base": base_label, "head": head_label },
        "settings": settings,
        "paste": PasteSpec { artifact_id, sha256: sha, base_block, head_block },
    })
    .to_string();
    for _ in 0..5 {
        let id = super::share::new_id();
        let done = sqlx::query(
            "INSERT INTO comparisons (id, base_label, head_label, settings_json, base_runs_json, head_runs_json, created_at) \
             VALUES (?, ?, ?, ?, '[]', '[]', ?) ON CONFLICT (id) DO NOTHING",
        )
        .bind(&id)
        .bind(base_label)
        .bind(head_label)
        .bind(&spec)
        .bind(ingest::store::now())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if done == 1 {
            tx.commit().await?;
            return Ok(id);
        }
    }
    Err(AppError::Anyhow(anyhow::anyhow!(
        "could not find a free paste id"
    )))
}

/// The paste behind `id`, or `None` when `id` is no paste (unknown, or a frozen comparison).
pub async fn load(pool: &SqlitePool, id: &str) -> Result<Option<StoredPaste>, AppError> {
    let row = sqlx::query("SELECT settings_json, created_at FROM comparisons WHERE id = ?")
        .bind(id)
        .fetch_optional(pool)
        .await?;
    let Some(row) = row else { return Ok(None) };
    #[derive(Deserialize)]
    struct Spec {
        paste: Option<PasteSpec>,
    }
    let spec: Spec = serde_json::from_str(row.get::<&str, _>(0)).map_err(|e| {
        AppError::Anyhow(anyhow::anyhow!(
            "comparison {id}: stored settings unreadable: {e}"
        ))
    })?;
    let Some(spec) = spec.paste else {
        return Ok(None);
    };
    let mut text = Vec::new();
    ingest::store::read_artifact(pool, spec.artifact_id, &mut text)
        .await
        .map_err(|e| AppError::Anyhow(anyhow::anyhow!("paste {id}: {e}")))?;
    Ok(Some(StoredPaste {
        id: id.to_string(),
        spec,
        text,
        created_at: row.get(1),
    }))
}
