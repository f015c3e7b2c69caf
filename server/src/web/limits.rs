//! The server's limits on writes: `GET /api/v1/limits` (what a client may send), the byte
//! budget shared by uploads in flight, the per-client rate of anonymous writes, the upload
//! spool directory, and gzip request bodies decompressed as a stream.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{Extensions, StatusCode};
use axum::routing::get;
use futures_util::TryStreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::AppError;
use crate::state::AppState;
use crate::web::upload::{MAX_CONFIG_BYTES, MAX_FIELD_BYTES, MAX_FIELDS, MAX_FILES};

pub fn routes() -> Router<AppState> {
    Router::new().route("/api/v1/limits", get(limits))
}

/// What one upload may hold, so that a client can check before sending.
async fn limits(State(st): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "max_files": MAX_FILES,
        "max_fields": MAX_FIELDS,
        "max_field_bytes": MAX_FIELD_BYTES,
        "max_config_bytes": MAX_CONFIG_BYTES,
        "max_upload_bytes": st.config.max_upload_mib.saturating_mul(1 << 20),
        "share_requires_token": st.config.share_requires_token,
        "anon_writes_per_minute": st.config.anon_writes_per_minute,
    }))
}

/// Bytes all uploads in flight may hold together, counted in KiB permits.
pub struct UploadBudget {
    permits: Arc<Semaphore>,
    total_kib: u32,
    wait: Duration,
}

impl UploadBudget {
    pub fn new(budget_mib: u64, wait_secs: u64) -> Self {
        let total_kib = budget_mib
            .saturating_mul(1024)
            .clamp(1, u64::from(u32::MAX >> 4)) as u32;
        UploadBudget {
            permits: Arc::new(Semaphore::new(total_kib as usize)),
            total_kib,
            wait: Duration::from_secs(wait_secs),
        }
    }

    /// Room for `bytes`, waiting for uploads in flight to finish; 503 with Retry-After when
    /// none frees up in time. An upload larger than the whole budget waits until it is alone.
    pub async fn reserve(&self, bytes: u64) -> Result<OwnedSemaphorePermit, AppError> {
        let kib = bytes.div_ceil(1024).clamp(1, u64::from(self.total_kib)) as u32;
        let busy = || AppError::RetryLater {
            status: StatusCode::SERVICE_UNAVAILABLE,
            detail: "the server is busy receiving other uploads; retry later".into(),
            retry_after_secs: 5,
        };
        if let Ok(p) = self.permits.clone().try_acquire_many_owned(kib) {
            return Ok(p);
        }
        match tokio::time::timeout(self.wait, self.permits.clone().acquire_many_owned(kib)).await {
            Ok(Ok(p)) => Ok(p),
            _ => Err(busy()),
        }
    }
}

/// A fixed-window count of anonymous writes per client address.
pub struct RateLimiter {
    per_minute: u32,
    windows: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl RateLimiter {
    pub fn new(per_minute: u32) -> Self {
        RateLimiter {
            per_minute,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one write by the client of `ext`; 429 with Retry-After beyond the rate.
    pub fn check(&self, ext: &Extensions) -> Result<(), AppError> {
        // Requests without a peer (in-process callers) share one bucket.
        let ip = ext
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let now = Instant::now();
        let mut map = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        // Forget clients whose window ended, so the map stays as small as the active clients.
        if map.len() > 10_000 {
            map.retain(|_, (start, _)| now.duration_since(*start) < Duration::from_secs(60));
        }
        let entry = map.entry(ip).or_insert((now, 0));
        if now.duration_since(entry.0) >= Duration::from_secs(60) {
            *entry = (now, 0);
        }
        if entry.1 >= self.per_minute {
            let left = 60u64
                .saturating_sub(now.duration_since(entry.0).as_secs())
                .max(1);
            return Err(AppError::RetryLater {
                status: StatusCode::TOO_MANY_REQUESTS,
                detail: format!(
                    "more than {} anonymous writes in a minute from this address (the server's --anon-writes-per-minute)",
                    self.per_minute
                ),
                retry_after_secs: left,
            });
        }
        entry.1 += 1;
        Ok(())
    }
}

/// The spool directory for `db` unless one is configured: `DB-spool` beside the database.
pub fn default_spool_dir(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-spool");
    PathBuf::from(name)
}

/// Creates the spool directory and removes what an earlier process left in it (a server
/// killed mid-upload cannot clean up after itself).
pub fn prepare_spool(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(SPOOL_PREFIX)
        {
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

/// The name prefix of one upload's spool directory.
pub const SPOOL_PREFIX: &str = "quiescent-upload-";

/// One upload's spool directory under `parent`, made when the upload's first file spills to
/// disk and removed with this: most uploads are small and kept in memory, and a directory made
/// and removed for each one cost a handful of blocking file-system calls on its request's thread.
pub struct Spool<'a> {
    parent: &'a Path,
    dir: Option<tempfile::TempDir>,
}

impl<'a> Spool<'a> {
    pub fn new(parent: &'a Path) -> Self {
        Spool { parent, dir: None }
    }

    /// The directory, made on first use.
    pub fn path(&mut self) -> anyhow::Result<&Path> {
        let dir = match self.dir.take() {
            Some(dir) => dir,
            None => std::fs::create_dir_all(self.parent)
                .and_then(|()| {
                    tempfile::Builder::new()
                        .prefix(SPOOL_PREFIX)
                        .tempdir_in(self.parent)
                })
                .map_err(|e| {
                    anyhow::anyhow!(
                        "creating a spool directory under {}: {e}",
                        self.parent.display()
                    )
                })?,
        };
        Ok(self.dir.insert(dir).path())
    }
}

/// A request whose whole body is gzip, decompressed as a stream: at most `limit` compressed
/// bytes are read, and the caller caps the decompressed bytes with the same limit.
pub fn gunzip_body(req: Request, limit: u64) -> Request {
    let (mut parts, body) = req.into_parts();
    let compressed = http_body_util::Limited::new(body, limit as usize);
    let stream = http_body_util::BodyDataStream::new(compressed).map_err(std::io::Error::other);
    let reader = tokio_util::io::StreamReader::new(stream);
    let mut decoder = async_compression::tokio::bufread::GzipDecoder::new(reader);
    decoder.multiple_members(true);
    let plain = tokio_util::io::ReaderStream::new(decoder);
    parts.headers.remove(axum::http::header::CONTENT_ENCODING);
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Request::from_parts(parts, Body::from_stream(plain))
}
