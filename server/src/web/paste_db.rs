//! Storage of shared pastes, the only database access of `/paste`: the mail is stored as a
//! content-addressed artifact and a shared comparison points at it (its spec carries a `paste`
//! member), so `/c/{id}` serves frozen comparisons and pastes alike. Rows of `comparisons` and
//! artifact reads go through the store; writing an artifact from memory has no store function
//! yet, so that one statement group is here.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use store::{NewShare, Store};

use crate::error::AppError;

/// Chunk size of `artifact_chunks`, as the importer writes them.
const CHUNK: usize = 1 << 20;

/// What the shared comparison of a paste records besides the labels.
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

fn store_error(e: store::Error) -> AppError {
    AppError::Anyhow(anyhow::anyhow!("{e}"))
}

/// Stores `text` as an artifact (unless the same bytes are stored already); its id.
async fn store_text(st: &Store, text: &[u8]) -> Result<(i64, String), AppError> {
    let sha = hex::encode(Sha256::digest(text));
    let mut tx = st.sqlite_pool().begin_with("BEGIN IMMEDIATE").await?;
    let existing: Option<i64> = sqlx::query_scalar("SELECT id FROM artifacts WHERE sha256 = ?")
        .bind(&sha)
        .fetch_optional(&mut *tx)
        .await?;
    let id = match existing {
        Some(id) => id,
        None => {
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO artifacts (sha256, size) VALUES (?, ?) RETURNING id",
            )
            .bind(&sha)
            .bind(text.len() as i64)
            .fetch_one(&mut *tx)
            .await?;
            for (seq, chunk) in text.chunks(CHUNK).enumerate() {
                sqlx::query(
                    "INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES (?, ?, ?)",
                )
                .bind(id)
                .bind(seq as i64)
                .bind(chunk)
                .execute(&mut *tx)
                .await?;
            }
            id
        }
    };
    tx.commit().await?;
    Ok((id, sha))
}

/// Stores `text` and returns the new id. The labels and settings are written in the shape of a
/// frozen comparison so that readers of shares that know nothing of pastes still work.
pub async fn store(
    st: &Store,
    text: &[u8],
    base_block: Option<String>,
    head_block: Option<String>,
    base_label: &str,
    head_label: &str,
    settings: &compare::Settings,
) -> Result<String, AppError> {
    let (artifact_id, sha256) = store_text(st, text).await?;
    let spec = serde_json::json!({
        "selection": { "base": base_label, "head": head_label },
        "settings": settings,
        "paste": PasteSpec { artifact_id, sha256, base_block, head_block },
    })
    .to_string();
    for _ in 0..5 {
        let id = super::share::new_id();
        let stored = st
            .insert_share(&NewShare {
                id: &id,
                base_label,
                head_label,
                settings_json: &spec,
                base_runs_json: "[]",
                head_runs_json: "[]",
            })
            .await
            .map_err(store_error)?;
        if stored {
            return Ok(id);
        }
    }
    Err(AppError::Anyhow(anyhow::anyhow!(
        "could not find a free paste id"
    )))
}

/// The paste behind `id`, or `None` when `id` is no paste (unknown, or a frozen comparison).
pub async fn load(st: &Store, id: &str) -> Result<Option<StoredPaste>, AppError> {
    let Some(row) = st.share(id).await.map_err(store_error)? else {
        return Ok(None);
    };
    #[derive(Deserialize)]
    struct Spec {
        paste: Option<PasteSpec>,
    }
    let spec: Spec = serde_json::from_str(&row.settings_json).map_err(|e| {
        AppError::Anyhow(anyhow::anyhow!(
            "comparison {id}: stored settings unreadable: {e}"
        ))
    })?;
    let Some(spec) = spec.paste else {
        return Ok(None);
    };
    let mut text = Vec::new();
    st.read_artifact(spec.artifact_id, &mut text)
        .await
        .map_err(|e| AppError::Anyhow(anyhow::anyhow!("paste {id}: {e}")))?;
    Ok(Some(StoredPaste {
        id: id.to_string(),
        spec,
        text,
        created_at: row.created_at,
    }))
}
