//! A group's imports written together: one multi-row statement per table for all of them,
//! where each import alone would cost a dozen statements (each a hand-off to the database's
//! connection and back, which is most of a small upload's time in the writer).
//!
//! Only the common group is written this way: imports whose names are all stored and whose
//! blocks are not staged. Anything unusual (an import that is stored already, twice in the
//! group, or a failing statement) makes [`write_batch`] give up; the caller undoes what it
//! wrote and writes the group import by import, which isolates a failing import. Nothing
//! here changes the imports, so that they can be written again that way.

use sqlx::AssertSqlSafe;

use crate::artifacts::store_hashed_many;
use crate::blocks::{EncodedBlock, write_blocks};
use crate::engine::{next_id_sql, placeholders};
use crate::import::{Prepared, link_files};
use crate::import_rows::{Known, NewRun, insert_runs};
use crate::meta::{import_hash, legacy_import_hash};
use crate::{Error, Tx, with_tx};

/// Whether [`write_batch`] can write these imports: more than one, all of them with their
/// names stored and their blocks in memory.
pub(crate) fn batchable(jobs: &[&Prepared]) -> bool {
    jobs.len() > 1
        && jobs
            .iter()
            .all(|j| j.staged.is_none() && !j.names.has_new())
}

/// Writes every import of `jobs` (see [`batchable`]): the run ids of each, in order. `None`
/// when one of them is stored already or comes twice; the caller then undoes what was written.
pub(crate) async fn write_batch(
    tx: &mut Tx,
    jobs: &[&Prepared],
) -> Result<Option<Vec<Vec<i64>>>, Error> {
    let mut known = Known::default();
    // SQLite: the ids the group's rows take, in one statement (see `store_hashed_many`).
    let next = if tx.is_postgres() {
        None
    } else {
        Some(with_tx!(tx, |t| {
            sqlx::query_as::<_, (i64, i64, i64)>(NEXT_IDS)
                .fetch_one(&mut **t)
                .await?
        }))
    };
    let files: Vec<_> = jobs
        .iter()
        .flat_map(|j| j.files.iter().zip(&j.hashes))
        .collect();
    let stored = store_hashed_many(tx, &files, next.map(|n| n.0)).await?;
    let artifacts = split(&stored, jobs.iter().map(|j| j.files.len()));
    let hashes: Vec<String> = jobs
        .iter()
        .zip(&artifacts)
        .map(|(j, a)| import_hash(&j.meta, &j.files, a))
        .collect();
    let mut distinct: Vec<&str> = hashes.iter().map(String::as_str).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < hashes.len() || any_stored(tx, &distinct).await? {
        return Ok(None);
    }
    let mut runs: Vec<NewRun<'_>> = Vec::new();
    for (j, hash) in jobs.iter().zip(&hashes) {
        let (build_id, machine_id) = known.build_and_machine(tx, &j.meta).await?;
        runs.extend(j.run_rows(build_id, machine_id, hash));
    }
    let stored_runs = insert_runs(tx, &runs, next.map(|n| n.1)).await?;
    let run_ids = split(&stored_runs, jobs.iter().map(|j| j.new_runs.len()));
    let blocks: Vec<(i64, &EncodedBlock)> = jobs
        .iter()
        .zip(&run_ids)
        .flat_map(|(j, ids)| j.blocks.with_runs(ids))
        .collect();
    write_blocks(tx, next.map(|n| n.2), &blocks).await?;
    let links: Vec<(&Prepared, &[i64], &[i64])> = jobs
        .iter()
        .zip(&artifacts)
        .zip(&run_ids)
        .map(|((j, a), ids)| (*j, *a, *ids))
        .collect();
    link_files(tx, &links).await?;
    for (j, ids) in jobs.iter().zip(&run_ids) {
        j.remember_key(tx, ids).await?;
    }
    Ok(Some(run_ids.iter().map(|ids| ids.to_vec()).collect()))
}

/// The next artifact, run and block ids on SQLite.
const NEXT_IDS: &str = concat!(
    "SELECT (",
    next_id_sql!("artifacts"),
    "), (",
    next_id_sql!("runs"),
    "), (",
    next_id_sql!("series_block"),
    ")"
);

/// `all` cut into consecutive pieces of the lengths `lens`.
fn split<T>(all: &[T], lens: impl Iterator<Item = usize>) -> Vec<&[T]> {
    let mut at = 0;
    lens.map(|n| {
        at += n;
        &all[at - n..at]
    })
    .collect()
}

/// Whether any of the imports `hashes` has stored runs, under its key or, stored before the
/// key's prefix, its bare hash (`meta::import_hash`).
async fn any_stored(tx: &mut Tx, hashes: &[&str]) -> Result<bool, Error> {
    let sql = format!(
        "SELECT COUNT(*) FROM runs WHERE import_hash IN ({})",
        placeholders(1, 2 * hashes.len())
    );
    let n: i64 = with_tx!(tx, |t| {
        let mut q = sqlx::query_scalar(AssertSqlSafe(sql));
        for h in hashes {
            q = q.bind(*h).bind(legacy_import_hash(h));
        }
        q.fetch_one(&mut **t).await?
    });
    Ok(n > 0)
}
