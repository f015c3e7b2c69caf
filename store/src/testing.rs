//! A throwaway PostgreSQL server for tests (the `test-support` feature): one cluster per test
//! process, started from the machine's PostgreSQL binaries on a free port, and a fresh database
//! per test. `QUIESCENT_TEST_PG_URL` (a URL whose user may create databases) uses a running
//! server instead.
//!
//! Without PostgreSQL the tests that need it say loudly that they were skipped, except under
//! `CI=true`, where a missing PostgreSQL fails the run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use sqlx::Connection as _;

use crate::Store;

/// A PostgreSQL server tests may create databases on.
#[derive(Debug)]
pub struct PgServer {
    /// `postgres://user@host:port` without a database.
    base: String,
}

static SERVER: OnceLock<Option<PgServer>> = OnceLock::new();
static NEXT_DB: AtomicU32 = AtomicU32::new(0);

/// The test server, started on first use; `None` (after a loud message) when this machine has
/// no PostgreSQL and `CI` is not `true`.
pub fn pg_server() -> Option<&'static PgServer> {
    SERVER.get_or_init(start).as_ref()
}

/// A fresh, empty database on the test server: its URL.
pub async fn fresh_pg_url() -> Option<String> {
    let server = pg_server()?;
    let name = format!(
        "qt_{}_{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::Relaxed)
    );
    let admin_url = format!("{}/postgres", server.base);
    // A server just started accepts TCP a moment before it accepts logins.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut admin = loop {
        match sqlx::PgConnection::connect(&admin_url).await {
            Ok(c) => break c,
            Err(e) if Instant::now() > deadline => panic!("connecting to the test PostgreSQL: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    };
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .expect("creating a test database");
    let _ = admin.close().await;
    Some(format!("{}/{name}", server.base))
}

/// A store on a fresh PostgreSQL database.
pub async fn pg_store() -> Option<Store> {
    let url = fresh_pg_url().await?;
    Some(Store::open(&url).await.expect("opening the test database"))
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

fn unavailable(why: &str) -> Option<PgServer> {
    if in_ci() {
        panic!("CI=true and PostgreSQL is not available: {why}");
    }
    eprintln!(
        "\n*** SKIPPED: the PostgreSQL tests did not run: {why}. Install Debian's `postgresql` \
         package or set QUIESCENT_TEST_PG_URL. ***\n"
    );
    None
}

fn start() -> Option<PgServer> {
    if let Ok(url) = std::env::var("QUIESCENT_TEST_PG_URL") {
        // Tests create their own databases: keep scheme, user and host, drop any path.
        let after = url.find("://").map_or(0, |i| i + 3);
        let base = match url[after..].find('/') {
            Some(i) => url[..after + i].to_string(),
            None => url,
        };
        return Some(PgServer { base });
    }
    let Some(bin) = find_bin_dir() else {
        return unavailable("no initdb/postgres binaries under /usr/lib/postgresql or on PATH");
    };
    match start_cluster(&bin) {
        Ok(s) => Some(s),
        Err(e) => unavailable(&format!("starting a throwaway cluster failed: {e}")),
    }
}

fn find_bin_dir() -> Option<PathBuf> {
    if let Ok(dir) = std::env::var("QUIESCENT_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|d| d.join("postgres").exists() && d.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// The uid and gid of the `postgres` user when running as root (the server refuses to run as
/// root), else None (run as ourselves).
fn run_as() -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt as _;
    if std::fs::metadata("/proc/self").ok()?.uid() != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() > 3 && f[0] == "postgres")
            .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

/// A command for `program` run through `setpriv`: as the `postgres` user when `owner` is
/// given, and (`die_with_us`) sent SIGINT when this process dies, so that no server outlives
/// the tests that started it.
fn privileged(program: &Path, owner: Option<(u32, u32)>, die_with_us: bool) -> Command {
    let mut cmd = Command::new("setpriv");
    if owner.is_some() {
        cmd.args([
            "--reuid",
            "postgres",
            "--regid",
            "postgres",
            "--init-groups",
        ]);
    }
    if die_with_us {
        cmd.args(["--pdeathsig", "INT"]);
    }
    cmd.arg("--").arg(program);
    cmd
}

fn start_cluster(bin: &Path) -> Result<PgServer, String> {
    let root = std::env::temp_dir();
    remove_stale(&root);
    let dir = root.join(format!("quiescent-test-pg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let owner = run_as();
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
            .map_err(|e| format!("chown {}: {e}", dir.display()))?;
    }
    let data = dir.join("data");
    let mut initdb = privileged(&bin.join("initdb"), owner, false);
    initdb
        .args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "--locale=C",
            "-E",
            "UTF8",
            "--no-sync",
            "-D",
        ])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = initdb.output().map_err(|e| format!("initdb: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("finding a free port: {e}"))?
        .port();
    let log = std::fs::File::create(dir.join("log")).map_err(|e| format!("log: {e}"))?;
    if let Some((uid, gid)) = owner {
        let _ = std::os::unix::fs::chown(dir.join("log"), Some(uid), Some(gid));
    }
    let mut cmd = privileged(&bin.join("postgres"), owner, true);
    cmd.arg("-D")
        .arg(&data)
        .args(["-p", &port.to_string(), "-k"])
        .arg(&dir)
        .args([
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
            "-c",
            "synchronous_commit=off",
            "-c",
            "full_page_writes=off",
            "-c",
            "max_connections=300",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    // The parent-death signal fires when the spawning *thread* exits: spawn from a thread that
    // lives as long as the process.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("test-postgres".into())
        .spawn(move || match cmd.spawn() {
            Ok(mut child) => {
                let _ = tx.send(Ok(()));
                let _ = child.wait();
            }
            Err(e) => {
                let _ = tx.send(Err(format!("postgres: {e}")));
            }
        })
        .map_err(|e| e.to_string())?;
    rx.recv().map_err(|e| e.to_string())??;
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
            return Err(format!("the server did not start within 60 s: {log}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(PgServer {
        base: format!("postgres://postgres@127.0.0.1:{port}"),
    })
}

/// Removes clusters left by test processes that are gone (their servers died with them).
fn remove_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("quiescent-test-pg-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
