//! Raw artifacts: the input files kept byte for byte, content-addressed by sha256 and stored in
//! chunks so that a large file never sits in memory whole.

use std::io::Read;

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};
use sqlx::AssertSqlSafe;

use crate::blocks::insert_sql;
use crate::engine::{next_id, next_id_sql, placeholders};
use crate::{Error, InputFile, Source, Store, Tx, with_pool, with_tx};

/// Bytes per stored artifact chunk.
const CHUNK: usize = 1 << 20;

/// Stores a file's bytes (if not already stored) and returns the artifact id.
pub(crate) async fn store_artifact(tx: &mut Tx, file: &InputFile) -> Result<i64, Error> {
    // Hash first so that a file already stored is not written again.
    let hashed = hash_file(file)?;
    let ids = store_hashed_many(tx, &[(file, &hashed)], None).await?;
    Ok(ids[0])
}

/// Bytes read at a time when a file is hashed from disk.
const HASH_READ: usize = 64 * 1024;

/// The sha256 (hex) and size of a file's bytes: bytes in memory hashed in place, a file read
/// in pieces.
pub(crate) fn hash_file(file: &InputFile) -> Result<(String, u64), Error> {
    if let Source::Bytes(b) = &file.source {
        return Ok((hex::encode(Sha256::digest(b)), b.len() as u64));
    }
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    let mut r = file.open()?;
    let mut buf = vec![0u8; HASH_READ];
    loop {
        let n = read_piece(file, &mut r, &mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((hex::encode(hasher.finalize()), size))
}

/// The id of the artifact with these bytes, if stored.
pub(crate) async fn artifact_by_sha(store: &Store, sha: &str) -> Result<Option<i64>, Error> {
    with_pool!(store, |pool| {
        Ok(
            sqlx::query_scalar("SELECT id FROM artifacts WHERE sha256 = $1")
                .bind(sha)
                .fetch_optional(pool)
                .await?,
        )
    })
}

/// Files per statement of [`store_hashed_many`]: its multi-row statements bind at most three
/// values per file, far under either engine's limit.
const FILES_PER_STATEMENT: usize = 500;
/// Bytes of chunk data per statement, at most (beyond one chunk).
const STATEMENT_BYTES: usize = 4 << 20;

/// Stores the bytes of already hashed files (those not stored already), each with its
/// (sha256, size), in a few statements whatever their number: one lookup of the hashes, one
/// insert of the new ones, one insert of the chunks of those held in memory (a spooled file's
/// chunks are read and inserted one at a time). The artifact ids, in the order of `files`; a
/// file given twice is stored once. On SQLite new files take ids from `first_id` on (the
/// next free one when `None`).
pub(crate) async fn store_hashed_many(
    tx: &mut Tx,
    files: &[(&InputFile, &(String, u64))],
    first_id: Option<i64>,
) -> Result<Vec<i64>, Error> {
    let hashes: Vec<&(String, u64)> = files.iter().map(|&(_, h)| h).collect();
    let mut ids: HashMap<&str, i64> = HashMap::with_capacity(files.len());
    let mut distinct: Vec<&str> = hashes.iter().map(|(sha, _)| sha.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    for part in distinct.chunks(FILES_PER_STATEMENT) {
        let sql = format!(
            "SELECT sha256, id FROM artifacts WHERE sha256 IN ({})",
            placeholders(1, part.len())
        );
        let known: Vec<(String, i64)> = with_tx!(&mut *tx, |t| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql));
            for sha in part {
                q = q.bind(*sha);
            }
            q.fetch_all(&mut **t).await?
        });
        for (sha, id) in known {
            if let Some(s) = part.iter().find(|s| **s == sha) {
                ids.insert(s, id);
            }
        }
    }
    // The new files, each once, in the order given.
    let mut new: Vec<usize> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for (i, (sha, _)) in hashes.iter().enumerate() {
        if !ids.contains_key(sha.as_str()) && seen.insert(sha.as_str()) {
            new.push(i);
        }
    }
    // SQLite: the new files' ids are given, from `first_id` on (looked up when `None`), rather
    // than returned: each returned row is a message from the connection's thread to the
    // writer's, and a wake-up.
    let postgres = tx.is_postgres();
    let mut next = if postgres || new.is_empty() {
        0
    } else {
        next_id(tx, first_id, next_id_sql!("artifacts")).await?
    };
    for part in new.chunks(FILES_PER_STATEMENT) {
        if !postgres {
            let sql = insert_sql(
                "INSERT INTO artifacts (id, sha256, size) VALUES ",
                part.len(),
                3,
                false,
            );
            with_tx!(&mut *tx, |t| {
                let mut q = sqlx::query(AssertSqlSafe(sql));
                for &i in part {
                    q = q.bind(next).bind(&hashes[i].0).bind(hashes[i].1 as i64);
                    ids.insert(hashes[i].0.as_str(), next);
                    next += 1;
                }
                q.execute(&mut **t).await?;
            });
            continue;
        }
        let mut sql = insert_sql(
            "INSERT INTO artifacts (sha256, size) VALUES ",
            part.len(),
            2,
            true,
        );
        sql.push_str(" RETURNING sha256, id");
        let made: Vec<(String, i64)> = with_tx!(&mut *tx, |t| {
            let mut q = sqlx::query_as(AssertSqlSafe(sql));
            for &i in part {
                q = q.bind(&hashes[i].0).bind(hashes[i].1 as i64);
            }
            q.fetch_all(&mut **t).await?
        });
        for (sha, id) in made {
            if let Some(&i) = part.iter().find(|&&i| hashes[i].0 == sha) {
                ids.insert(hashes[i].0.as_str(), id);
            }
        }
    }
    // The chunks of the new files: those in memory in multi-row inserts, borrowed from the
    // upload's bytes; spooled ones read a chunk at a time.
    let mut in_memory: Vec<(i64, i64, &[u8])> = Vec::new();
    for &i in &new {
        let id = ids[hashes[i].0.as_str()];
        match &files[i].0.source {
            Source::Bytes(b) => {
                in_memory.extend(
                    b.chunks(CHUNK)
                        .enumerate()
                        .map(|(seq, data)| (id, seq as i64, data)),
                );
            }
            Source::Path(_) => write_chunks(tx, files[i].0, id).await?,
        }
    }
    // Statements of at most FILES_PER_STATEMENT chunks and a few MiB.
    let mut parts: Vec<&[(i64, i64, &[u8])]> = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, c) in in_memory.iter().enumerate() {
        if i > start && (i - start == FILES_PER_STATEMENT || bytes + c.2.len() > STATEMENT_BYTES) {
            parts.push(&in_memory[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += c.2.len();
    }
    if start < in_memory.len() {
        parts.push(&in_memory[start..]);
    }
    for part in parts {
        let sql = insert_sql(
            "INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES ",
            part.len(),
            3,
            tx.is_postgres(),
        );
        with_tx!(&mut *tx, |t| {
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for &(id, seq, data) in part {
                q = q.bind(id).bind(seq).bind(data);
            }
            q.execute(&mut **t).await?;
        });
    }
    Ok(hashes.iter().map(|(sha, _)| ids[sha.as_str()]).collect())
}

/// Inserts a file's bytes as the chunks of artifact `id`, reading one chunk at a time.
async fn write_chunks(tx: &mut Tx, file: &InputFile, id: i64) -> Result<(), Error> {
    let mut r = file.open()?;
    let mut buf = vec![0u8; CHUNK];
    let mut seq = 0i64;
    loop {
        let n = read_piece(file, &mut r, &mut buf)?;
        if n == 0 {
            return Ok(());
        }
        with_tx!(&mut *tx, |t| {
            sqlx::query("INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES ($1, $2, $3)")
                .bind(id)
                .bind(seq)
                .bind(&buf[..n])
                .execute(&mut **t)
                .await?;
        });
        seq += 1;
    }
}

/// [`read_full`] of `file`'s reader, an error naming the file.
fn read_piece(file: &InputFile, r: &mut dyn Read, buf: &mut [u8]) -> Result<usize, Error> {
    read_full(r, buf).map_err(|source| Error::Io {
        path: file.display_path(),
        source,
    })
}

fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Store {
    /// Stores `bytes` named `name` as an artifact (unless the same bytes are stored already) in
    /// its own transaction; the artifact id and its sha256.
    pub async fn put_artifact(&self, name: &str, bytes: &[u8]) -> Result<(i64, String), Error> {
        let file = InputFile::bytes(name, bytes.to_vec(), None);
        let mut tx = self.begin_write().await?;
        let id = store_artifact(&mut tx, &file).await?;
        tx.commit().await?;
        Ok((id, hex::encode(Sha256::digest(bytes))))
    }

    /// Writes a stored artifact's bytes to `out`, byte for byte, one chunk in memory at a time.
    pub async fn read_artifact(
        &self,
        artifact_id: i64,
        out: &mut (dyn std::io::Write + Send),
    ) -> Result<u64, Error> {
        with_pool!(self, |pool| {
            let mut seq = 0i64;
            let mut total = 0u64;
            loop {
                let chunk: Option<Vec<u8>> = sqlx::query_scalar(
                    "SELECT data FROM artifact_chunks WHERE artifact_id = $1 AND seq = $2",
                )
                .bind(artifact_id)
                .bind(seq)
                .fetch_optional(pool)
                .await?;
                let Some(chunk) = chunk else { break };
                out.write_all(&chunk)
                    .map_err(|e| Error::Invalid(format!("writing artifact: {e}")))?;
                total += chunk.len() as u64;
                seq += 1;
            }
            Ok(total)
        })
    }
}

#[cfg(feature = "test-support")]
impl Store {
    /// Whether these bytes are stored as an artifact (tests: nothing of a refused import).
    pub async fn has_artifact(&self, bytes: &[u8]) -> Result<bool, Error> {
        let sha = hex::encode(Sha256::digest(bytes));
        Ok(artifact_by_sha(self, &sha).await?.is_some())
    }
}
