//! Reads of stored samples: series rows unpacked into values.

use sqlx::AssertSqlSafe;

use crate::write::unpack;
use crate::{Error, Store};

/// Series ids per statement.
const IDS_PER_STMT: usize = 500;

impl Store {
    /// The samples of the series `ids` (in sample order), as (series id, values), in id order.
    /// Unknown ids are left out.
    pub async fn series_values(&self, ids: &[i64]) -> Result<Vec<(i64, Vec<f64>)>, Error> {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut out = Vec::with_capacity(sorted.len());
        for chunk in sorted.chunks(IDS_PER_STMT) {
            let sql = format!(
                "SELECT id, vals FROM series_data WHERE id IN ({}) ORDER BY id",
                vec!["?"; chunk.len()].join(",")
            );
            let mut q = sqlx::query_as::<_, (i64, Vec<u8>)>(AssertSqlSafe(sql));
            for id in chunk {
                q = q.bind(id);
            }
            for (id, blob) in q.fetch_all(self.pool()).await? {
                out.push((id, unpack(&blob)?));
            }
        }
        Ok(out)
    }

    /// The samples of every series of `run_id`, as (series id, values), in id order.
    pub async fn run_values(&self, run_id: i64) -> Result<Vec<(i64, Vec<f64>)>, Error> {
        let rows: Vec<(i64, Vec<u8>)> =
            sqlx::query_as("SELECT id, vals FROM series_data WHERE run_id = ? ORDER BY id")
                .bind(run_id)
                .fetch_all(self.pool())
                .await?;
        rows.into_iter()
            .map(|(id, blob)| Ok((id, unpack(&blob)?)))
            .collect()
    }
}
