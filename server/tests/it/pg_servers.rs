//! Several servers on one PostgreSQL database act as one server: what one stores the others
//! show at once, their caches follow the database, shares, idempotency keys, duplicate
//! detection and token revocation hold across them, alerts are raised once, and they survive
//! load and a killed peer.
//! Every test needs PostgreSQL (`store::testing`) and returns early without it.

mod alerts;
mod load;
mod together;

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A `quiescent serve` process, killed (SIGKILL) and reaped when dropped, so that a failing
/// test leaves no server behind.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// SIGKILL now; true when the process was still running.
    pub fn kill9(&mut self) -> bool {
        let alive = matches!(self.child.try_wait(), Ok(None));
        let _ = self.child.kill();
        let _ = self.child.wait();
        alive
    }

    /// Its upload spool directory (under the temporary directory `tmp` it was started with).
    pub fn spool(&self, tmp: &Path) -> PathBuf {
        tmp.join(format!("quiescent-spool-{}", self.child.id()))
    }

    /// Its log so far (stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The binary, with no database or token from the environment; `tmp` is its temporary
/// directory (where a PostgreSQL server keeps its upload spool).
pub fn bin(tmp: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env("QUIESCENT_LOG", "warn")
        .env("TMPDIR", tmp)
        .env_remove("QUIESCENT_DB")
        .env_remove("QUIESCENT_TOKEN")
        .env_remove("QUIESCENT_BIND")
        .env_remove("QUIESCENT_SPOOL_DIR");
    c
}

/// Starts `n` servers on `db` at once (their migrations race, as on a real deployment), each
/// on an ephemeral port with the flags `extra`, and waits until every one serves.
pub fn start_servers(db: &str, tmp: &Path, n: usize, extra: &[&str]) -> Vec<Server> {
    let starting: Vec<(Child, PathBuf)> = (0..n)
        .map(|i| {
            let log = tmp.join(format!("serve-{i}.log"));
            let child = bin(tmp)
                .args(["serve", "--db", db, "--bind", "127.0.0.1:0"])
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            (child, log)
        })
        .collect();
    let mut servers = Vec::new();
    // Guarded before reading, so a server that fails to start takes the others down with it.
    let mut pending = Vec::new();
    for (mut child, log) in starting {
        let stdout = child.stdout.take().unwrap();
        pending.push(stdout);
        servers.push(Server {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            log,
        });
    }
    for (server, stdout) in servers.iter_mut().zip(pending) {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        server.addr = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "no address in {line:?}; the server's log:\n{}",
                    server.log()
                )
            });
    }
    servers
}

/// Runs the binary with `args`; its stdout, after asserting that it succeeded.
pub fn cli(tmp: &Path, args: &[&str]) -> String {
    let out = bin(tmp).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "quiescent {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A small real file: three `time` runs (real, user, sys) in six blocks, 18 series.
pub fn time_file() -> Vec<u8> {
    std::fs::read(crate::common::fixture(
        "time/seed000_bash_time_3runs_ftrace_switch.txt",
    ))
    .unwrap()
}

/// A smaller one: rcuscale writer durations, old and new console output, 4 series.
pub fn rcuscale_file() -> Vec<u8> {
    std::fs::read(crate::common::fixture(
        "rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt",
    ))
    .unwrap()
}

/// An upload of a `time` file for `build` on `rig-1`, with parameters.
pub fn form(build: &str, params: &[(&str, String)], file: Vec<u8>) -> reqwest::multipart::Form {
    form_of("time", build, params, file)
}

/// An upload of `file` (as `BENCHMARK.txt`) of `benchmark` for `build` on `rig-1`.
pub fn form_of(
    benchmark: &str,
    build: &str,
    params: &[(&str, String)],
    file: Vec<u8>,
) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new()
        .text("build", build.to_string())
        .text("machine", "rig-1")
        .text("benchmark", benchmark.to_string());
    for (k, v) in params {
        form = form.text(format!("param.{k}"), v.clone());
    }
    form.part(
        "file",
        reqwest::multipart::Part::bytes(file).file_name(format!("{benchmark}.txt")),
    )
}

/// An answer: status, `Retry-After`, and the body as JSON (or a JSON string of the text).
pub struct Answer {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Value,
}

impl Answer {
    pub fn run_id(&self) -> i64 {
        self.body["run_id"]
            .as_i64()
            .unwrap_or_else(|| panic!("no run id ({}): {}", self.status, self.body))
    }
}

pub async fn answer(resp: reqwest::Response) -> Answer {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let text = resp.text().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer {
        status,
        retry_after,
        body,
    }
}

/// `POST /api/v1/runs` to `base` (`http://host:port`).
pub async fn upload(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    key: Option<&str>,
    form: reqwest::multipart::Form,
) -> Answer {
    let mut req = client
        .post(format!("{base}/api/v1/runs"))
        .bearer_auth(token)
        .multipart(form);
    if let Some(k) = key {
        req = req.header("idempotency-key", k);
    }
    answer(req.send().await.unwrap()).await
}

/// A GET that must answer 200: its body.
pub async fn get_ok(client: &reqwest::Client, url: &str) -> String {
    let r = client.get(url).send().await.unwrap();
    let status = r.status();
    let text = r.text().await.unwrap();
    assert_eq!(status, 200, "{url}: {text}");
    text
}

/// A count by raw SQL on the shared database.
pub async fn count(pool: &sqlx::PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql.to_string()))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Every stored run is whole: it has series and its files, and every series block holds the
/// `n` samples it says.
pub async fn assert_runs_whole(pool: &sqlx::PgPool) {
    let hollow = count(
        pool,
        "SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM series s WHERE s.run_id = r.id)",
    )
    .await;
    assert_eq!(hollow, 0, "runs without series");
    let fileless = count(
        pool,
        "SELECT COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM run_artifacts a WHERE a.run_id = r.id)",
    )
    .await;
    assert_eq!(fileless, 0, "runs without their files");
    let short = count(
        pool,
        "SELECT COUNT(*) FROM series_block WHERE n * 8 != octet_length(vals)",
    )
    .await;
    assert_eq!(short, 0, "series whose n differs from their samples");
}
