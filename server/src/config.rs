//! Configuration shared by the subcommands, from flags with environment fallbacks.

use std::path::PathBuf;

/// Where the database lives.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// SQLite database file (created if missing).
    #[arg(long, env = "QUIESCENT_DB", default_value = "quiescent.db")]
    pub db: PathBuf,
}

/// How the web server listens and what it allows.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "QUIESCENT_BIND", default_value = "127.0.0.1:8080")]
    pub bind: String,

    /// Largest accepted upload body, in MiB (compressed and decompressed alike).
    #[arg(long, env = "QUIESCENT_MAX_UPLOAD_MIB", default_value_t = 256)]
    pub max_upload_mib: u64,

    /// Seconds a request may take before it is answered 408.
    #[arg(long, env = "QUIESCENT_REQUEST_TIMEOUT", default_value_t = 120)]
    pub request_timeout_secs: u64,

    /// Seconds a client may take to send its request headers before the connection is closed.
    #[arg(long, env = "QUIESCENT_HEADER_TIMEOUT", default_value_t = 30)]
    pub header_timeout_secs: u64,

    /// Directory of static files (CSS, JS); defaults to the one built into the binary.
    #[arg(long, env = "QUIESCENT_STATIC_DIR")]
    pub static_dir: Option<PathBuf>,

    /// URL that each new alert group is POSTed to as JSON (retried with backoff).
    #[arg(long, env = "QUIESCENT_WEBHOOK")]
    pub webhook: Option<String>,
}

impl DbArgs {
    /// Opens (creating and migrating) the store.
    pub async fn open_store(&self) -> anyhow::Result<store::Store> {
        use anyhow::Context;
        store::Store::open(&self.db.display().to_string())
            .await
            .with_context(|| format!("opening database {}", self.db.display()))
    }

    /// The pool of [`DbArgs::open_store`], for the queries that have not moved into the store yet.
    pub async fn open(&self) -> anyhow::Result<sqlx::SqlitePool> {
        Ok(self.open_store().await?.sqlite_pool().clone())
    }
}

/// Parses `k=v` (a `--param` flag or an upload form field).
pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, found {s:?}"))?;
    let k = k.trim();
    if k.is_empty() {
        return Err(format!("empty key in {s:?}"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            bind: "127.0.0.1:8080".into(),
            max_upload_mib: 256,
            request_timeout_secs: 120,
            header_timeout_secs: 30,
            static_dir: None,
            webhook: None,
        }
    }
}
