//! Data migrations SQL cannot do: packing the samples of release 0.1 (one row per sample in
//! `samples_v1`) into their blocks' `vals`, after the schema migration renamed the old tables.

use sqlx::SqlitePool;

use crate::Error;
use crate::write::pack;

/// Series packed per statement round.
const SERIES_PER_ROUND: i64 = 2000;

/// Packs `samples_v1` into `series_block.vals` (the schema migrations made each release-0.1
/// series a block of one, with the same id) and drops the old tables, in one transaction (an
/// interrupted upgrade is redone on the next open). Does nothing on an up-to-date database.
pub(crate) async fn pack_v1_samples(pool: &SqlitePool) -> Result<(), Error> {
    let pending: Option<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'samples_v1'",
    )
    .fetch_optional(pool)
    .await?;
    if pending.is_none() {
        return Ok(());
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let max: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(series_id), 0) FROM samples_v1")
        .fetch_one(&mut *tx)
        .await?;
    let mut lo = 0i64;
    while lo <= max {
        let hi = lo + SERIES_PER_ROUND;
        let rows: Vec<(i64, f64)> = sqlx::query_as(
            "SELECT series_id, value FROM samples_v1 WHERE series_id >= $1 AND series_id < $2 \
             ORDER BY series_id, idx",
        )
        .bind(lo)
        .bind(hi)
        .fetch_all(&mut *tx)
        .await?;
        for g in rows.chunk_by(|a, b| a.0 == b.0) {
            let vals: Vec<f64> = g.iter().map(|&(_, v)| v).collect();
            sqlx::query(
                "UPDATE series_block SET vals = $1, n = $2, series = json_array(json_array(series ->> '$[0][0]', $3)) WHERE id = $4",
            )
                .bind(pack(&vals))
                .bind(vals.len() as i64)
                .bind(vals.len() as i64)
                .bind(g[0].0)
                .execute(&mut *tx)
                .await?;
        }
        lo = hi;
    }
    sqlx::query("DROP TABLE samples_v1")
        .execute(&mut *tx)
        .await?;
    sqlx::query("DROP TABLE series_v1")
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
