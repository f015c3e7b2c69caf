//! Reads of stored samples: blocks unpacked into the values of their series.

use std::collections::BTreeMap;

use sqlx::AssertSqlSafe;

use crate::blocks::decode_series;
use crate::with_pool;
use crate::write::unpack;
use crate::{Error, Store};

/// Blocks per statement.
const IDS_PER_STMT: usize = 500;

/// A block's samples and where each of its series lies in them, in block order.
pub(crate) struct Split {
    vals: Vec<f64>,
    at: Vec<std::ops::Range<usize>>,
    /// The scope name id of each series.
    pub(crate) scopes: Vec<u32>,
}

impl Split {
    /// The values of the block's `i`th series.
    pub(crate) fn get(&self, i: usize) -> Option<&[f64]> {
        self.at.get(i).map(|r| &self.vals[r.clone()])
    }
}

/// Splits a block's samples into its series without copying them (a profile's block holds
/// 65 series and a reader often wants one).
pub(crate) fn split(series_json: &str, blob: &[u8]) -> Result<Split, Error> {
    split_decoded(&decode_series(series_json)?, blob)
}

/// [`split`] of a series list decoded already.
pub(crate) fn split_decoded(series: &[(u32, usize)], blob: &[u8]) -> Result<Split, Error> {
    let vals = unpack(blob)?;
    let mut at = Vec::with_capacity(series.len());
    let mut scopes = Vec::with_capacity(series.len());
    let mut end = 0;
    for &(scope, n) in series {
        at.push(end..end + n);
        scopes.push(scope);
        end += n;
    }
    if end != vals.len() {
        return Err(Error::Corrupt(format!(
            "a block's series count {end} samples, its data holds {}",
            vals.len()
        )));
    }
    Ok(Split { vals, at, scopes })
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
                    let parts = split(&series, &blob)?;
                    let mut idx = wanted.remove(&block).unwrap_or_default();
                    idx.sort_unstable();
                    idx.dedup();
                    for i in idx {
                        if let Some(v) = parts.get(i) {
                            out.push(((block << 16) | i as i64, v.to_vec()));
                        }
                    }
                }
            }
            Ok(out)
        })
    }
}
