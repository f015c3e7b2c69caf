//! Reads of stored samples: blocks unpacked into the values of their series.

use std::collections::BTreeMap;

use sqlx::AssertSqlSafe;

use crate::blocks::decode_series;
use crate::with_pool;
use crate::write::unpack;
use crate::{Error, Store};

/// Blocks per statement.
const IDS_PER_STMT: usize = 500;

/// Splits a block's samples into its series: (index in the block, values), in order.
fn split(series_json: &str, blob: &[u8]) -> Result<Vec<Vec<f64>>, Error> {
    let series = decode_series(series_json)?;
    let vals = unpack(blob)?;
    let total: usize = series.iter().map(|s| s.1).sum();
    if total != vals.len() {
        return Err(Error::Corrupt(format!(
            "a block's series count {total} samples, its data holds {}",
            vals.len()
        )));
    }
    let mut out = Vec::with_capacity(series.len());
    let mut at = 0;
    for (_, n) in series {
        out.push(vals[at..at + n].to_vec());
        at += n;
    }
    Ok(out)
}

impl Store {
    /// The samples of the series `ids` (in sample order), as (series id, values), in id order.
    /// Unknown ids are left out.
    pub async fn series_values(&self, ids: &[i64]) -> Result<Vec<(i64, Vec<f64>)>, Error> {
        with_pool!(self, |pool| {
            // Block id -> the indexes wanted in it.
            let mut wanted: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
            for &id in ids {
                wanted
                    .entry(id >> 16)
                    .or_default()
                    .push((id & 0xffff) as usize);
            }
            let blocks: Vec<i64> = wanted.keys().copied().collect();
            let mut out = Vec::with_capacity(ids.len());
            for chunk in blocks.chunks(IDS_PER_STMT) {
                let sql = format!(
                    "SELECT id, series, vals FROM series_block WHERE id IN ({}) ORDER BY id",
                    crate::comparison::placeholders(chunk.len())
                );
                let mut q = sqlx::query_as::<_, (i64, String, Vec<u8>)>(AssertSqlSafe(sql));
                for id in chunk {
                    q = q.bind(id);
                }
                for (block, series, blob) in q.fetch_all(pool).await? {
                    let mut parts = split(&series, &blob)?;
                    let mut idx = wanted.remove(&block).unwrap_or_default();
                    idx.sort_unstable();
                    idx.dedup();
                    for i in idx {
                        if let Some(v) = parts.get_mut(i) {
                            out.push(((block << 16) | i as i64, std::mem::take(v)));
                        }
                    }
                }
            }
            Ok(out)
        })
    }

    /// The samples of every series of `run_id`, as (series id, values), in id order.
    pub async fn run_values(&self, run_id: i64) -> Result<Vec<(i64, Vec<f64>)>, Error> {
        with_pool!(self, |pool| {
            let rows: Vec<(i64, String, Vec<u8>)> = sqlx::query_as(
                "SELECT id, series, vals FROM series_block WHERE run_id = $1 ORDER BY id",
            )
            .bind(run_id)
            .fetch_all(pool)
            .await?;
            let mut out = Vec::new();
            for (block, series, blob) in rows {
                for (i, v) in split(&series, &blob)?.into_iter().enumerate() {
                    out.push(((block << 16) | i as i64, v));
                }
            }
            Ok(out)
        })
    }
}
