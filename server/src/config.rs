//! Configuration shared by the subcommands, from flags with environment fallbacks.

use std::path::PathBuf;

/// Where the database lives.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// Database: a SQLite file (created if missing), or a PostgreSQL URL
    /// (`postgres://user@host:port/db`, an existing database) shared by several servers.
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
    /// Bytes (MiB) all uploads in flight may hold together; an upload beyond it waits
    /// `--upload-wait-secs`, then gets 503 with Retry-After.
    #[arg(long, env = "QUIESCENT_UPLOAD_BUDGET_MIB", default_value_t = 1024)]
    pub upload_budget_mib: u64,

    /// Seconds an upload waits for room in `--upload-budget-mib` before it is answered 503.
    #[arg(long, env = "QUIESCENT_UPLOAD_WAIT_SECS", default_value_t = 30)]
    pub upload_wait_secs: u64,

    /// Directory for upload files being received (the server owns it and empties it on
    /// start); defaults to `DB-spool` beside a SQLite database, and to one directory per
    /// process in the temporary directory on PostgreSQL.
    #[arg(long, env = "QUIESCENT_SPOOL_DIR")]
    pub spool_dir: Option<PathBuf>,

    /// Anonymous writes (`POST /share`) each client address (the TCP peer) may make per
    /// minute; 0 refuses them all.
    #[arg(long, env = "QUIESCENT_ANON_WRITES_PER_MINUTE", default_value_t = 30)]
    pub anon_writes_per_minute: u32,

    /// Only holders of an upload token (`Authorization: Bearer`) may share comparisons.
    #[arg(long, env = "QUIESCENT_SHARE_REQUIRES_TOKEN")]
    pub share_requires_token: bool,
}

impl DbArgs {
    /// True when `--db` is a PostgreSQL URL.
    pub fn is_postgres(&self) -> bool {
        store::is_postgres_url(&self.db.to_string_lossy())
    }

    /// The database as messages show it: the path, or the URL without its password.
    pub fn shown(&self) -> String {
        show_db(&self.db.to_string_lossy())
    }

    /// True when the database is there to read: a SQLite file that exists, or any PostgreSQL
    /// URL (whether it answers is for opening to tell).
    pub fn exists(&self) -> bool {
        self.is_postgres() || self.db.to_string_lossy().starts_with("sqlite:") || self.db.exists()
    }

    /// Opens (creating and migrating) the store.
    pub async fn open_store(&self) -> anyhow::Result<store::Store> {
        use anyhow::Context;
        match store::Store::open(&self.db.to_string_lossy()).await {
            Ok(s) => Ok(s),
            // SQLite only says "unable to open database file": name the cause.
            Err(e) if !self.is_postgres() && read_only_error(&e) && on_read_only_fs(&self.db) => {
                anyhow::bail!(
                    "database {} is on a read-only filesystem: it cannot be written (`runs`, `compare`, `artifact` and `serve` read it as it is)",
                    self.db.display()
                )
            }
            Err(e) => Err(anyhow::Error::new(e))
                .with_context(|| format!("opening database {}", self.shown())),
        }
    }

    /// Opens the store for a command that only reads: a missing database is an error (instead
    /// of a new empty one), and a database that cannot be written (a read-only filesystem) is
    /// opened read-only.
    pub async fn open_existing_store(&self) -> anyhow::Result<store::Store> {
        use anyhow::Context;
        let path = self.db.to_string_lossy().into_owned();
        if self.is_postgres() {
            return self.open_store().await;
        }
        if !self.exists() {
            anyhow::bail!(
                "database {} does not exist (check --db or QUIESCENT_DB; `quiescent ingest`, `quiescent demo` or `quiescent token create` create one)",
                self.db.display()
            );
        }
        match store::Store::open(&path).await {
            Ok(s) => Ok(s),
            Err(e) if read_only_error(&e) => store::Store::open_read_only(&path)
                .await
                .with_context(|| format!("opening database {} read-only", self.db.display())),
            Err(e) => Err(anyhow::Error::new(e))
                .with_context(|| format!("opening database {}", self.db.display())),
        }
    }
}

/// A database path or URL as messages may show it: a URL's password replaced by `***`.
pub fn show_db(db: &str) -> String {
    let Some(scheme_end) = db.find("://") else {
        return db.to_string();
    };
    let rest = &db[scheme_end + 3..];
    let host_start = rest.find('/').unwrap_or(rest.len());
    match rest[..host_start].rfind('@') {
        Some(at) => match rest[..at].find(':') {
            Some(colon) => format!(
                "{}{}:***{}",
                &db[..scheme_end + 3],
                &rest[..colon],
                &rest[at..]
            ),
            None => db.to_string(),
        },
        None => db.to_string(),
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
            upload_budget_mib: 1024,
            upload_wait_secs: 30,
            spool_dir: None,
            anon_writes_per_minute: 30,
            share_requires_token: false,
        }
    }
}

/// Whether opening failed because the database (or its directory) cannot be written.
fn read_only_error(e: &store::Error) -> bool {
    let text = format!("{e}").to_ascii_lowercase();
    text.contains("readonly") || text.contains("read-only") || text.contains("unable to open")
}

/// Whether the file at `path` exists on a read-only filesystem (opening it to write, which
/// changes nothing, is refused with EROFS).
fn on_read_only_fs(path: &std::path::Path) -> bool {
    matches!(
        std::fs::OpenOptions::new().write(true).open(path),
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
    )
}
