//! A history's blocks read from SQLite a few hundred to a row. Each row sqlx hands over comes
//! from the connection's thread through a channel, with every column copied: a pass reading a
//! profile's history a block a row spent about 13 us of CPU per block (mostly thread switches
//! and allocations) where SQLite's own query took under 1 us. Grouped by run and by 256 block
//! ids in SQL (`json_group_array`), the rows are a few hundred times fewer.

use std::borrow::Cow;

use futures_util::TryStreamExt as _;
use serde::Deserialize;
use sqlx::Row as _;

use crate::Error;
use crate::history_batch::{BlockRow, Filer, Read, bind_read};

/// One block in a row's JSON array: id, unit id, direction id, metric id, metric name (when
/// the metrics are many), series list, samples in hex (when read). Strings are borrowed from
/// the row's text when they hold no escapes (the series lists and the hex never do).
#[derive(Deserialize)]
struct Entry<'a>(
    i64,
    i64,
    i64,
    i64,
    #[serde(borrow)] Option<Cow<'a, str>>,
    #[serde(borrow)] Cow<'a, str>,
    #[serde(borrow)] Option<Cow<'a, str>>,
);

/// Reads the blocks of `read` grouped in SQL and files each, in branch order and, within a
/// run, in block id order.
pub(crate) async fn read_grouped(
    pool: &sqlx::SqlitePool,
    read: &Read<'_>,
    filer: &mut Filer<'_>,
) -> Result<(), Error> {
    let vals = if read.values { "hex(sb.vals)" } else { "NULL" };
    // A run's blocks have consecutive ids (an import numbers them together), so `sb.id >> 8`
    // cuts a profile's tens of thousands of blocks into rows of at most 256: a run is never
    // one row of tens of megabytes.
    let sql = format!(
        "SELECT b.id, b.label, bb.position, r.id, \
           json_group_array(json_array(sb.id, sb.unit_id, sb.direction_id, {metric}, sb.series, {vals})) \
         {conditions} \
         GROUP BY r.id, sb.id >> 8 \
         ORDER BY bb.position, r.id, sb.id >> 8",
        metric = read.metric,
        conditions = read.conditions(false),
    );
    let q = bind_read!(sqlx::query(sqlx::AssertSqlSafe(sql)), read);
    let mut rows = q.fetch(pool);
    let mut bytes = Vec::new();
    while let Some(r) = rows.try_next().await? {
        let (build_id, label, position, run_id): (i64, String, i64, i64) =
            (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?);
        let json: &str = r.try_get(4)?;
        let mut entries: Vec<Entry<'_>> = serde_json::from_str(json)
            .map_err(|e| Error::Corrupt(format!("blocks of run {run_id}: {e}")))?;
        // The order within a group is SQLite's to choose.
        entries.sort_unstable_by_key(|e| e.0);
        for Entry(block_id, unit_id, direction_id, metric_id, name, series, hex_vals) in entries {
            let vals = match &hex_vals {
                Some(h) => {
                    bytes.clear();
                    bytes.resize(h.len() / 2, 0);
                    hex::decode_to_slice(h.as_bytes(), &mut bytes)
                        .map_err(|e| Error::Corrupt(format!("samples of block {block_id}: {e}")))?;
                    Some(bytes.as_slice())
                }
                None => None,
            };
            filer.file(BlockRow {
                build_id,
                label: label.clone(),
                position,
                run_id,
                block_id,
                unit_id,
                direction_id,
                metric_id,
                name: name.as_deref(),
                series: &series,
                vals,
            })?;
        }
    }
    Ok(())
}
