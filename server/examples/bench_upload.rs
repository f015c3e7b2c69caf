//! Upload throughput against the same server's `/healthz` rate, 16 clients on loopback.
//!
//! `cargo run --release --example bench_upload [-- SECONDS]` starts the server in-process on a
//! temporary database, measures `/healthz` requests/s with 16 clients, then sustained uploads/s
//! and latency percentiles of a typical 4-CPU `trace_stat` set (function0..3, 200 functions
//! each, distinct numbers per upload, each form sent as one body with its length as curl sends
//! it) with 16 clients, and prints the ratio uploads/healthz
//! (the design's target is at least 1/16). A second upload phase sends the smallest useful set
//! (function0..3 with one function each, as in the mailing-list reports) to show the fixed cost
//! of an upload apart from the per-sample cost, after a pause (`PHASE_GAP`) in which the first
//! phase's background work ends.
//!
//! Each phase also prints this process's CPU time per request (server and clients together,
//! through sysinfo) and how busy the whole machine was: an upload costing N times a `/healthz`
//! answer's CPU cannot reach more than 1/N of its rate on a machine as busy.
//!
//! On SQLite, `ROUNDS` alternating pairs of a `/healthz` phase and a 4x1 upload phase follow,
//! each pair after the pause, and the median of the pairs' ratios is printed: one `/healthz`
//! phase alone has ranged from 24,000 to 73,000 answers/s on one machine across days, and the
//! ratio with it.
//!
//! The same phases then run on PostgreSQL through one server and through four (clients spread
//! over them), and the uploads/s are printed as ratios against SQLite's of the same run.
//! `BENCH_PG_URL=postgres://user@host:port` uses that server; without it a throwaway one is
//! started from the machine's PostgreSQL binaries, as the tests start theirs (`fsync`,
//! `synchronous_commit` and `full_page_writes` off: its commits are not durable, SQLite's are);
//! `BENCH_PG_URL=none` measures SQLite only.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quiescent::config::ServeArgs;

const CLIENTS: usize = 16;
/// The pause between the two upload phases: the history passes of the first phase's last
/// uploads (a pass over its 600 histories, after a rest of up to 2 s, `history::passes`) would
/// otherwise run in the second and be counted against its uploads. Four servers on one
/// PostgreSQL took 719-799 uploads/s of the 4x1 set without it and 1,024-1,107 with it.
const PHASE_GAP: Duration = Duration::from_secs(4);
/// Alternating `/healthz` and 4x1 rounds on SQLite, whose median ratio is the target's figure.
const ROUNDS: usize = 5;
const CPUS: u64 = 4;
const FUNCTIONS: usize = 200;

/// One CPU's function profile table with `functions` rows.
fn function_table(seed: u64, functions: usize) -> Vec<u8> {
    let mut s = String::with_capacity(functions * 90);
    s.push_str(
        "  Function                               Hit    Time            Avg             s^2\n",
    );
    s.push_str(
        "  --------                               ---    ----            ---             ---\n",
    );
    for r in 0..functions {
        let hit = 1000 + seed * 7 + r as u64 * 13;
        let time = hit as f64 * 0.25 + r as f64;
        s.push_str(&format!(
            "  kfunc_{r:<31} {hit:>8}    {time:.1} us     {:.3} us        0.004 us\n",
            time / hit as f64
        ));
    }
    s.into_bytes()
}

/// The boundary of the uploads' multipart bodies.
const BOUNDARY: &str = "quiescent-bench-7d1c0f2a9b";

/// One upload's `multipart/form-data` body, built whole as curl builds it, so that it goes out
/// with its length in one piece.
fn form(seed: u64, functions: usize) -> Vec<u8> {
    use std::io::Write as _;
    let mut body = Vec::with_capacity(1024 + CPUS as usize * (functions * 90 + 200));
    let cpus = CPUS.to_string();
    // Writing into a Vec cannot fail.
    for (name, value) in [
        ("build", "v6.9"),
        ("machine", "bench-rig"),
        ("benchmark", "function-profile"),
        ("machine_fact.cpus", &cpus),
    ] {
        let _ = write!(
            body,
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        );
    }
    for cpu in 0..CPUS {
        let _ = write!(
            body,
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"trace_stat/function{cpu}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        );
        body.extend_from_slice(&function_table(seed * CPUS + cpu, functions));
        body.extend_from_slice(b"\r\n");
    }
    let _ = write!(body, "--{BOUNDARY}--\r\n");
    body
}

/// Measures the CPU spent from its start (sysinfo): this process's (server and clients, every
/// thread) and how busy the whole machine was meanwhile.
struct CpuMeter {
    sys: sysinfo::System,
    /// `None` where sysinfo cannot name this process: the CPU figures then print as zero.
    pid: Option<sysinfo::Pid>,
    start_ms: u64,
}

impl CpuMeter {
    fn start() -> CpuMeter {
        let mut sys = sysinfo::System::new();
        let pid = sysinfo::get_current_pid().ok();
        // The machine's usage is measured between two refreshes: this one and the last.
        sys.refresh_cpu_usage();
        let start_ms = process_cpu_ms(&mut sys, pid);
        CpuMeter { sys, pid, start_ms }
    }

    /// This process's CPU seconds since the start, and the machine's busy percentage.
    fn stop(mut self) -> (f64, f32) {
        let spent_ms = process_cpu_ms(&mut self.sys, self.pid).saturating_sub(self.start_ms);
        self.sys.refresh_cpu_usage();
        (spent_ms as f64 / 1e3, self.sys.global_cpu_usage())
    }
}

/// The CPU milliseconds this process has used so far.
fn process_cpu_ms(sys: &mut sysinfo::System, pid: Option<sysinfo::Pid>) -> u64 {
    let Some(pid) = pid else {
        return 0;
    };
    sys.refresh_processes_specifics(
        sysinfo::ProcessesToUpdate::Some(&[pid]),
        false,
        sysinfo::ProcessRefreshKind::nothing().with_cpu(),
    );
    sys.process(pid)
        .map_or(0, sysinfo::Process::accumulated_cpu_time)
}

/// What a phase cost: its duration, this process's CPU seconds and how busy the whole machine
/// was (percent).
struct Spent {
    elapsed: Duration,
    cpu_secs: f64,
    busy_pct: f32,
}

/// Runs `CLIENTS` loops of `one` for `secs` seconds; returns the latencies of the successes.
async fn load<F, Fut>(secs: f64, one: F) -> (Vec<Duration>, Spent)
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let one = Arc::new(one);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let meter = CpuMeter::start();
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let (one, stop) = (one.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                assert!(one(c, i).await, "a request failed");
                lat.push(t.elapsed());
                i += 1;
            }
            lat
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.expect("client task"));
    }
    let elapsed = start.elapsed();
    let (cpu_secs, busy_pct) = meter.stop();
    let spent = Spent {
        elapsed,
        cpu_secs,
        busy_pct,
    };
    (all, spent)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx]
}

/// A phase's figures: requests per second, and this process's CPU time per request
/// (microseconds; the server's and the clients' together).
struct Rate {
    per_sec: f64,
    cpu_us: f64,
}

fn report(what: &str, mut lat: Vec<Duration>, spent: Spent) -> Rate {
    lat.sort_unstable();
    let elapsed = spent.elapsed.as_secs_f64();
    let rate = lat.len() as f64 / elapsed;
    let cpu_us = spent.cpu_secs * 1e6 / lat.len().max(1) as f64;
    println!(
        "{what:<28} {:>8} requests in {:>5.1} s = {:>9.1}/s   p50 {:>8.2} ms   p99 {:>8.2} ms   CPU {cpu_us:>7.0} us/request, machine {:>3.0}% busy",
        lat.len(),
        elapsed,
        rate,
        percentile(&lat, 0.50).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
        spent.busy_pct,
    );
    Rate {
        per_sec: rate,
        cpu_us,
    }
}

/// What one configuration measured: requests/s of `/healthz` and of the two upload sizes.
struct Figures {
    healthz: f64,
    big: f64,
    small: f64,
}

/// Starts `servers` in-process servers on the database `db` (each with its own pool, as
/// separate processes would have), spreads the 16 clients over them and measures each phase.
async fn bench(
    what: &str,
    db: &str,
    servers: usize,
    secs: f64,
    rounds: usize,
) -> anyhow::Result<Figures> {
    let st = store::Store::open(db).await?;
    let token = quiescent::tokens::create(&st, &format!("bench-rig-{servers}")).await?;
    let mut addrs = Vec::new();
    for _ in 0..servers {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let config = ServeArgs {
            bind: "127.0.0.1:0".into(),
            ..ServeArgs::default()
        };
        let server_store = store::Store::open(db).await?;
        tokio::spawn(async move {
            let _ = quiescent::web::serve_pool(server_store, config, move |addr| {
                let _ = tx.send(addr);
            })
            .await;
        });
        addrs.push(rx.await?);
    }
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CLIENTS)
        .build()?;
    println!(
        "== {what}: {servers} server(s) on {}",
        quiescent::config::show_db(db)
    );
    let urls =
        |path: &str| -> Vec<String> { addrs.iter().map(|a| format!("http://{a}{path}")).collect() };
    let healthz_urls = urls("/healthz");
    let (lat, el) = healthz_phase(&client, &healthz_urls, secs).await;
    let healthz = report("GET /healthz", lat, el);
    let upload_urls = urls("/api/v1/runs");
    let big = upload_phase(&client, &upload_urls, &token, secs, FUNCTIONS, 0).await;
    let big_count = big.0.len();
    let big = report("POST /api/v1/runs (4x200)", big.0, big.1);
    // The 4x200 uploads' history passes end before the 4x1 phase's clock starts.
    tokio::time::sleep(PHASE_GAP).await;
    let small = upload_phase(&client, &upload_urls, &token, secs, 1, 1).await;
    let small_count = small.0.len();
    let small = report("POST /api/v1/runs (4x1)", small.0, small.1);
    // The rate an upload could reach with the machine as busy as `/healthz` kept it, were
    // its CPU time the only limit (on PostgreSQL the database's server is another process,
    // so its share is not counted here).
    println!(
        "CPU per request: a 4x1 upload {:.0}x a /healthz answer (4x200 {:.0}x): with the machine as busy as under /healthz, at most 1/{:.0} of its rate",
        small.cpu_us / healthz.cpu_us,
        big.cpu_us / healthz.cpu_us,
        small.cpu_us / healthz.cpu_us,
    );
    let (healthz, big, small) = (healthz.per_sec, big.per_sec, small.per_sec);
    let mut answered = big_count + small_count;
    let mut ratios = Vec::new();
    for round in 0..rounds {
        // After the pause, as before the 4x1 phase: the last phase's history passes would
        // otherwise run in this round's `/healthz` phase and slow it.
        tokio::time::sleep(PHASE_GAP).await;
        let (lat, el) = healthz_phase(&client, &healthz_urls, secs).await;
        let h = report(&format!("round {}: GET /healthz", round + 1), lat, el);
        let phase = 2 + round as u64;
        let u = upload_phase(&client, &upload_urls, &token, secs, 1, phase).await;
        answered += u.0.len();
        let u = report(&format!("round {}: POST (4x1)", round + 1), u.0, u.1);
        ratios.push(h.per_sec / u.per_sec);
    }

    // Every 2xx answer is one stored run.
    let runs = st.runs(&store::RunQuery::default()).await?.len();
    println!(
        "stored: {runs} runs for {answered} answered uploads, {} samples",
        st.total_samples().await?
    );
    anyhow::ensure!(
        runs == answered,
        "{runs} runs stored for {answered} successful uploads"
    );
    println!(
        "ratio uploads/healthz = {:.4} (1/{:.1}) for 4x200, {:.4} (1/{:.1}) for 4x1 (target >= 1/16)",
        big / healthz,
        healthz / big,
        small / healthz,
        healthz / small
    );
    if let Some(median) = compare::median(&ratios) {
        let each: Vec<String> = ratios.iter().map(|r| format!("1/{r:.1}")).collect();
        println!(
            "ratio uploads/healthz, 4x1, in {} alternating rounds: {}; median 1/{median:.1} (target >= 1/16)",
            ratios.len(),
            each.join(", "),
        );
    }
    st.close().await;
    Ok(Figures {
        healthz,
        big,
        small,
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    println!(
        "{CLIENTS} clients, {secs} s per phase; upload = {CPUS} trace_stat files x {FUNCTIONS} functions ({} bytes, {} samples)",
        form_bytes_len(),
        CPUS as usize * FUNCTIONS * 4
    );
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("bench.db").display().to_string();
    let sqlite = bench("SQLite", &db, 1, secs, ROUNDS).await?;
    let samples = (CPUS as usize * FUNCTIONS * 4) as f64;
    match ingest_rate(dir.path(), 40)? {
        Some(ingest) => println!(
            "samples/s: uploads 4x200 {:.0} against `quiescent ingest` of the same sets {ingest:.0} = {:.2}x (target >= 0.5x)",
            sqlite.big * samples,
            sqlite.big * samples / ingest
        ),
        None => println!("`quiescent ingest` skipped: no release binary beside the example"),
    }

    // PostgreSQL: BENCH_PG_URL names a server whose user may create databases, else a
    // throwaway one is started from the machine's binaries (`store::testing`).
    if std::env::var("BENCH_PG_URL").as_deref() == Ok("none") {
        println!("PostgreSQL skipped (BENCH_PG_URL=none)");
        return Ok(());
    }
    let mut pg = Vec::new();
    for servers in [1, 4] {
        let url = match std::env::var("BENCH_PG_URL") {
            Ok(base) => fresh_database(&base, servers).await?,
            Err(_) => match store::testing::fresh_pg_url().await {
                Some(u) => u,
                None => {
                    println!("PostgreSQL skipped: no server (set BENCH_PG_URL)");
                    return Ok(());
                }
            },
        };
        pg.push((servers, bench("PostgreSQL", &url, servers, secs, 0).await?));
    }
    println!("== PostgreSQL against one server on SQLite, same run (target: uploads/s >= 0.5x)");
    for (servers, f) in &pg {
        println!(
            "{servers} server(s): healthz {:.2}x, uploads 4x200 {:.2}x, uploads 4x1 {:.2}x",
            f.healthz / sqlite.healthz,
            f.big / sqlite.big,
            f.small / sqlite.small
        );
    }
    Ok(())
}

/// A new database `bench_upload_N_PID` on the server of `base`; its URL.
async fn fresh_database(base: &str, n: usize) -> anyhow::Result<String> {
    use sqlx::Connection as _;
    let after = base.find("://").map_or(0, |i| i + 3);
    let server = match base[after..].find('/') {
        Some(i) => &base[..after + i],
        None => base,
    };
    let name = format!("bench_upload_{n}_{}", std::process::id());
    let mut admin = sqlx::PgConnection::connect(&format!("{server}/postgres")).await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await?;
    Ok(format!("{server}/{name}"))
}

/// 16 clients asking `/healthz` for `secs` seconds.
async fn healthz_phase(
    client: &reqwest::Client,
    urls: &[String],
    secs: f64,
) -> (Vec<Duration>, Spent) {
    let (c, urls) = (client.clone(), urls.to_vec());
    load(secs, move |client_no, _| {
        let (c, url) = (c.clone(), urls[client_no % urls.len()].clone());
        async move {
            match c.get(&url).send().await {
                Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                Err(_) => false,
            }
        }
    })
    .await
}

/// 16 clients uploading distinct 4-CPU sets of `functions` rows for `secs` seconds.
async fn upload_phase(
    client: &reqwest::Client,
    urls: &[String],
    token: &str,
    secs: f64,
    functions: usize,
    phase: u64,
) -> (Vec<Duration>, Spent) {
    let (c, urls, token) = (client.clone(), urls.to_vec(), token.to_string());
    let content_type = reqwest::header::HeaderValue::from_str(&format!(
        "multipart/form-data; boundary={BOUNDARY}"
    ))
    .expect("an ASCII header value");
    load(secs, move |client_no, i| {
        let (c, url, token, content_type) = (
            c.clone(),
            urls[client_no % urls.len()].clone(),
            token.clone(),
            content_type.clone(),
        );
        async move {
            let seed = phase * 1_000_000_000 + client_no as u64 * 10_000_000 + i;
            match c
                .post(&url)
                .bearer_auth(&token)
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(form(seed, functions))
                .send()
                .await
            {
                Ok(r) => {
                    let status = r.status();
                    let body = r.text().await.unwrap_or_default();
                    if status != reqwest::StatusCode::CREATED {
                        eprintln!("upload answered {status}: {body}");
                    }
                    status == reqwest::StatusCode::CREATED
                }
                Err(e) => {
                    eprintln!("upload failed: {e}");
                    false
                }
            }
        }
    })
    .await
}

fn form_bytes_len() -> usize {
    (0..CPUS).map(|c| function_table(c, FUNCTIONS).len()).sum()
}

/// Samples per second `quiescent ingest` stores from `sets` distinct 4x200 sets, one process
/// per set on one SQLite file; `None` without the release binary.
fn ingest_rate(dir: &std::path::Path, sets: u64) -> anyhow::Result<Option<f64>> {
    let exe = std::env::current_exe()?;
    let Some(bin) = exe
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("quiescent"))
        .filter(|b| b.exists())
    else {
        return Ok(None);
    };
    // `cargo run --example` does not rebuild the command: an older one measures older code.
    let built = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if built(&bin) < built(&exe) {
        println!(
            "note: {} is older than this example; `cargo build --release -p quiescent` first to measure this code",
            bin.display()
        );
    }
    let db = dir.join("ingest.db").display().to_string();
    let mut runs = Vec::new();
    for set in 0..sets {
        let mut files = Vec::new();
        for cpu in 0..CPUS {
            let path = dir.join(format!("set{set}/trace_stat/function{cpu}"));
            std::fs::create_dir_all(path.parent().expect("a directory"))?;
            std::fs::write(
                &path,
                function_table(5_000_000_000 + set * CPUS + cpu, FUNCTIONS),
            )?;
            files.push(path);
        }
        runs.push(files);
    }
    let start = Instant::now();
    for files in &runs {
        let out = std::process::Command::new(&bin)
            .args([
                "ingest",
                "--db",
                &db,
                "--build",
                "v6.9",
                "--machine",
                "bench-rig",
            ])
            .args(["--benchmark", "function-profile"])
            .args(files)
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "quiescent ingest failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rate = (sets * CPUS * FUNCTIONS as u64 * 4) as f64 / start.elapsed().as_secs_f64();
    println!(
        "quiescent ingest             {sets:>8} sets in {:>5.1} s = {rate:>9.0} samples/s",
        start.elapsed().as_secs_f64()
    );
    Ok(Some(rate))
}
