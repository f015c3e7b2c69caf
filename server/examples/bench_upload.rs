//! Upload throughput against the same server's `/healthz` rate, 16 clients on loopback.
//!
//! `cargo run --release --example bench_upload [-- SECONDS]` starts the server in-process on a
//! temporary database, measures `/healthz` requests/s with 16 clients, then sustained uploads/s
//! and latency percentiles of a typical 4-CPU `trace_stat` set (function0..3, 200 functions
//! each, distinct numbers per upload) with 16 clients, and prints the ratio uploads/healthz
//! (the design's target is at least 1/4). A second upload phase sends the smallest useful set
//! (function0..3 with one function each, as in the mailing-list reports) to show the fixed cost
//! of an upload apart from the per-sample cost.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use quiescent::config::ServeArgs;

const CLIENTS: usize = 16;
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

fn form(seed: u64, functions: usize) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new()
        .text("build", "v6.9")
        .text("machine", "bench-rig")
        .text("benchmark", "function-profile")
        .text("machine_fact.cpus", CPUS.to_string());
    for cpu in 0..CPUS {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(function_table(seed * CPUS + cpu, functions))
                .file_name(format!("trace_stat/function{cpu}")),
        );
    }
    form
}

/// Runs `CLIENTS` loops of `one` for `secs` seconds; returns the latencies of the successes.
async fn load<F, Fut>(secs: f64, one: F) -> (Vec<Duration>, Duration)
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    let one = Arc::new(one);
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
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
    (all, start.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[idx]
}

fn report(what: &str, mut lat: Vec<Duration>, elapsed: Duration) -> f64 {
    lat.sort_unstable();
    let rate = lat.len() as f64 / elapsed.as_secs_f64();
    println!(
        "{what:<28} {:>8} requests in {:>5.1} s = {:>9.1}/s   p50 {:>8.2} ms   p99 {:>8.2} ms",
        lat.len(),
        elapsed.as_secs_f64(),
        rate,
        percentile(&lat, 0.50).as_secs_f64() * 1e3,
        percentile(&lat, 0.99).as_secs_f64() * 1e3,
    );
    rate
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("bench.db");
    let st = store::Store::open(&db.display().to_string()).await?;
    let pool = st.sqlite_pool().clone();
    let token = quiescent::tokens::create(&st, "bench-rig").await?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let config = ServeArgs {
        bind: "127.0.0.1:0".into(),
        ..ServeArgs::default()
    };
    let server_pool = pool.clone();
    tokio::spawn(async move {
        let _ = quiescent::web::serve_pool(
            store::Store::from_sqlite_pool(server_pool),
            config,
            move |addr| {
                let _ = tx.send(addr);
            },
        )
        .await;
    });
    let addr = rx.await?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CLIENTS)
        .build()?;
    let sample = form_bytes_len();
    println!(
        "server http://{addr}/, {CLIENTS} clients, {secs} s per phase; upload = {CPUS} trace_stat files x {FUNCTIONS} functions ({sample} bytes, {} samples)",
        CPUS as usize * FUNCTIONS * 4
    );

    let healthz_url = format!("http://{addr}/healthz");
    let c = client.clone();
    let (lat, el) = load(secs, move |_, _| {
        let (c, url) = (c.clone(), healthz_url.clone());
        async move {
            match c.get(&url).send().await {
                Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                Err(_) => false,
            }
        }
    })
    .await;
    let healthz = report("GET /healthz", lat, el);

    let upload_url = format!("http://{addr}/api/v1/runs");
    let uploads = upload_phase(&client, &upload_url, &token, secs, FUNCTIONS, 0).await;
    report("POST /api/v1/runs (4x200)", uploads.0.clone(), uploads.1);
    let small = upload_phase(&client, &upload_url, &token, secs, 1, 1).await;
    let small_rate = report("POST /api/v1/runs (4x1)", small.0, small.1);
    let uploads = uploads.0.len() as f64 / uploads.1.as_secs_f64();

    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&pool)
        .await?;
    let samples: i64 = sqlx::query_scalar("SELECT COALESCE(SUM(n), 0) FROM series_block")
        .fetch_one(&pool)
        .await?;
    println!("stored: {runs} runs, {samples} samples");
    println!(
        "ratio uploads/healthz = {:.4} (1/{:.1}) for 4x200, {:.4} (1/{:.1}) for 4x1; target >= 0.25",
        uploads / healthz,
        healthz / uploads,
        small_rate / healthz,
        healthz / small_rate
    );
    Ok(())
}

/// 16 clients uploading distinct 4-CPU sets of `functions` rows for `secs` seconds.
async fn upload_phase(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    secs: f64,
    functions: usize,
    phase: u64,
) -> (Vec<Duration>, Duration) {
    let (c, url, token) = (client.clone(), url.to_string(), token.to_string());
    load(secs, move |client_no, i| {
        let (c, url, token) = (c.clone(), url.clone(), token.clone());
        async move {
            let seed = phase * 1_000_000_000 + client_no as u64 * 10_000_000 + i;
            match c
                .post(&url)
                .bearer_auth(&token)
                .multipart(form(seed, functions))
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
