//! Raw artifacts: the input files kept byte for byte, content-addressed by sha256 and stored in
//! chunks so that a large file never sits in memory whole.

use std::io::Read;

use crate::{Error, InputFile, Store, Tx, with_pool, with_tx};
use sha2::{Digest, Sha256};

/// Bytes per stored artifact chunk.
const CHUNK: usize = 1 << 20;

/// Stores a file's bytes (if not already stored) and returns the artifact id.
pub(crate) async fn store_artifact(tx: &mut Tx, file: &InputFile) -> Result<i64, Error> {
    // Hash first so that a file already stored is not written again.
    let (sha, size) = hash_file(file)?;
    store_hashed(tx, file, &sha, size).await
}

/// The sha256 (hex) and size of a file's bytes, read in chunks.
pub(crate) fn hash_file(file: &InputFile) -> Result<(String, u64), Error> {
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    {
        let mut r = file.open()?;
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = read_full(&mut r, &mut buf).map_err(|source| Error::Io {
                path: file.display_path(),
                source,
            })?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            size += n as u64;
        }
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

/// [`store_artifact`] of a file already hashed.
pub(crate) async fn store_hashed(
    tx: &mut Tx,
    file: &InputFile,
    sha: &str,
    size: u64,
) -> Result<i64, Error> {
    let known: Option<i64> = with_tx!(&mut *tx, |t| {
        sqlx::query_scalar("SELECT id FROM artifacts WHERE sha256 = $1")
            .bind(sha)
            .fetch_optional(&mut **t)
            .await?
    });
    if let Some(id) = known {
        return Ok(id);
    }
    let id: i64 = with_tx!(&mut *tx, |t| {
        sqlx::query_scalar("INSERT INTO artifacts (sha256, size) VALUES ($1, $2) RETURNING id")
            .bind(sha)
            .bind(size as i64)
            .fetch_one(&mut **t)
            .await?
    });
    let mut r = file.open()?;
    let mut buf = vec![0u8; CHUNK];
    let mut seq = 0i64;
    loop {
        let n = read_full(&mut r, &mut buf).map_err(|source| Error::Io {
            path: file.display_path(),
            source,
        })?;
        if n == 0 {
            break;
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
    Ok(id)
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
