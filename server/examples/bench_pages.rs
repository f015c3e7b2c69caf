//! Comparison page speed at scale: `cargo run --release --example bench_pages`
//!
//! Generates a database of 100,000 runs and 10,000,000 samples (bulk `INSERT ... SELECT` in
//! big transactions), serves it in-process on loopback, and times sequential requests of a
//! comparison of two builds with 1,000 runs each against the same server's `/static/style.css`.
//! Prints p50/p99 of both and their ratios (target: comparison p99 at most 5x the static file),
//! plus the first (uncached) comparison and comparisons that miss the report cache.
//!
//! `BENCH_DB=path` keeps the generated database there and reuses it on the next run.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use sqlx::SqlitePool;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const BUILDS: i64 = 100;
const RUNS: i64 = 100_000;
/// Runs of each of the two compared builds (the rest are spread over filler builds).
const COMPARED_RUNS: i64 = 1_000;
const SERIES_PER_RUN: i64 = 2;
const SAMPLES_PER_SERIES: i64 = 50;
const MACHINES: i64 = 10;
const PAGE_REQUESTS: usize = 300;
const STATIC_REQUESTS: usize = 3_000;
const COLD_REQUESTS: usize = 5;
const OTHER_REQUESTS: usize = 20;

const COMPARE: &str = "/compare?base=v6.0&head=v6.1&benchmark=hackbench";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let keep = std::env::var_os("BENCH_DB").map(std::path::PathBuf::from);
    let tmp = tempfile::tempdir()?;
    let path = keep.clone().unwrap_or_else(|| tmp.path().join("bench.db"));
    let reuse = keep.is_some() && path.exists();
    let pool = store::Store::open(&path.display().to_string())
        .await
        .with_context(|| format!("opening {}", path.display()))?
        .sqlite_pool()
        .clone();
    if reuse {
        println!("reusing {}", path.display());
    } else {
        let t = Instant::now();
        generate(&pool).await?;
        println!("generated in {:.1} s", t.elapsed().as_secs_f64());
    }
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&pool)
        .await?;
    let samples: i64 = sqlx::query_scalar("SELECT COALESCE(SUM(n), 0) FROM series_block")
        .fetch_one(&pool)
        .await?;
    println!(
        "database: {runs} runs, {samples} samples ({})",
        path.display()
    );
    if runs < RUNS || samples < RUNS * SERIES_PER_RUN * SAMPLES_PER_SERIES {
        bail!("the database is smaller than the benchmark needs");
    }

    let sqlite = serve_and_measure("SQLite", store::Store::from_sqlite_pool(pool.clone())).await?;
    let (server, sqlite_addr) = (sqlite.server, sqlite.addr);

    // The same database in PostgreSQL (copied, ids and all), the same requests.
    let pg_url = match std::env::var("BENCH_PG_URL") {
        Ok(u) => Some(u),
        Err(_) => store::testing::fresh_pg_url().await,
    };
    match pg_url {
        None => println!("PostgreSQL skipped: no server (set BENCH_PG_URL to an empty database)"),
        Some(url) => {
            let pg = store::Store::open(&url).await?;
            let t = Instant::now();
            store::Store::from_sqlite_pool(pool.clone())
                .copy_to(&pg, false, |_| {})
                .await?;
            println!(
                "copied into PostgreSQL in {:.1} s",
                t.elapsed().as_secs_f64()
            );
            let post = serve_and_measure("PostgreSQL", pg).await?;
            // Head to head: one request to each server in turn, so that whatever else the
            // machine does hits both alike.
            let mut a = Client::connect(sqlite_addr).await?;
            let mut b = Client::connect(post.addr).await?;
            let (mut ta, mut tb) = (Vec::new(), Vec::new());
            for _ in 0..2 * PAGE_REQUESTS {
                ta.push(a.get(COMPARE).await?.0);
                tb.push(b.get(COMPARE).await?.0);
            }
            post.server.abort();
            let (a50, a99) = percentiles(&mut ta);
            let (b50, b99) = percentiles(&mut tb);
            println!(
                "comparison page, interleaved ({} requests each): SQLite p50 {} p99 {}, PostgreSQL p50 {} p99 {}",
                ta.len(),
                ms(a50),
                ms(a99),
                ms(b50),
                ms(b99)
            );
            println!(
                "PostgreSQL against SQLite, same run: comparison p99 {:.2}x (target <= 2x), p50 {:.2}x; report cache miss p50 {:.2}x",
                b99.as_secs_f64() / a99.as_secs_f64(),
                b50.as_secs_f64() / a50.as_secs_f64(),
                post.cold50.as_secs_f64() / sqlite.cold50.as_secs_f64(),
            );
        }
    }

    // Where an uncached comparison spends its time.
    let sel = quiescent::report::Selection {
        base: "v6.0".into(),
        head: "v6.1".into(),
        benchmark: Some("hackbench".into()),
        ..Default::default()
    };
    let t = Instant::now();
    let report = quiescent::report::build(
        &store::Store::from_sqlite_pool(pool.clone()),
        &sel,
        &compare::Settings::default(),
        None,
        false,
    )
    .await?;
    let report_time = t.elapsed();
    let t = Instant::now();
    let mut stats = Duration::ZERO;
    for row in &report.comparisons {
        let t = Instant::now();
        let _ = compare::compare_series(
            &row.base_samples,
            &row.head_samples,
            row.direction,
            &compare::Settings::default(),
            false,
        );
        stats += t.elapsed();
    }
    let _ = t;
    let t = Instant::now();
    let n: i64 = sqlx::query_scalar(
        "SELECT SUM(se.n) FROM series_block se \
         JOIN runs r ON r.id = se.run_id WHERE r.build_id IN (1, 2) AND r.benchmark = 'hackbench'",
    )
    .fetch_one(&pool)
    .await?;
    let sql_time = t.elapsed();
    let t = Instant::now();
    // As the report reads them: a block at a time with its names and samples.
    let runs: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM runs WHERE build_id IN (1, 2) AND benchmark = 'hackbench' ORDER BY id",
    )
    .fetch_all(&pool)
    .await?;
    let mut series = 0;
    store::Store::from_sqlite_pool(pool.clone())
        .visit_series_of_runs(&runs, |_| true, |b| series += b.series.len())
        .await?;
    let fetch_time = t.elapsed();
    println!(
        "uncached report: {} in all; of which the statistics of its {} series {} ({} + {} samples per series); \
         counting its {n} samples in SQL takes {}, fetching them ({} series) through the store {}",
        ms(report_time),
        report.comparisons.len(),
        ms(stats),
        report.comparisons[0].base_samples.len(),
        report.comparisons[0].head_samples.len(),
        ms(sql_time),
        series,
        ms(fetch_time)
    );

    // The other pages at this size, for information.
    let mut conn = Client::connect(sqlite_addr).await?;
    for path in [
        "/",
        "/builds/v6.0",
        "/machines/rig-00",
        "/runs/1",
        "/api/v1/runs?build=v6.0",
    ] {
        let mut t = Vec::new();
        for _ in 0..OTHER_REQUESTS {
            t.push(conn.get(path).await?.0);
        }
        let (o50, o99) = percentiles(&mut t);
        println!(
            "{path} ({OTHER_REQUESTS} requests): p50 {}  p99 {}",
            ms(o50),
            ms(o99)
        );
    }
    server.abort();
    Ok(())
}

/// What [`serve_and_measure`] saw; the server stays up for more requests.
struct Measured {
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
    addr: std::net::SocketAddr,
    cold50: Duration,
}

/// Serves `store` in-process on loopback, as `quiescent serve` does, and times the comparison
/// page (first, uncached, cached) against the static file.
async fn serve_and_measure(engine: &str, store: store::Store) -> anyhow::Result<Measured> {
    println!("== {engine}");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let config = quiescent::config::ServeArgs {
        bind: "127.0.0.1:0".into(),
        ..Default::default()
    };
    let server = tokio::spawn(quiescent::web::serve_pool(store, config, |addr| {
        let _ = tx.send(addr);
    }));
    let addr = rx.await.context("the server did not start")?;
    let mut conn = Client::connect(addr).await?;

    // The first comparison computes the report; later ones reuse it until runs are added.
    let (first, body) = conn.get(COMPARE).await?;
    if !body.contains("svg class=\"chart strip\"") || !body.contains("data-verdict=\"regression\"")
    {
        bail!("the comparison page does not look right");
    }
    println!(
        "comparison page: {} KiB, {} series",
        body.len() / 1024,
        body.matches("<tr id=\"row-").count()
    );

    let mut cold = Vec::new();
    for i in 0..COLD_REQUESTS {
        // A different alpha is a different report: a cache miss.
        let (d, _) = conn.get(&format!("{COMPARE}&alpha=0.0{}", 40 + i)).await?;
        cold.push(d);
    }
    let mut page = Vec::with_capacity(PAGE_REQUESTS);
    for _ in 0..PAGE_REQUESTS {
        page.push(conn.get(COMPARE).await?.0);
    }
    let mut css = Vec::with_capacity(STATIC_REQUESTS);
    for _ in 0..STATIC_REQUESTS {
        css.push(conn.get("/static/style.css").await?.0);
    }
    // Interleave a second pass so that drift (CPU frequency, other load) hits both alike.
    let mut page2 = Vec::with_capacity(PAGE_REQUESTS);
    let mut css2 = Vec::with_capacity(PAGE_REQUESTS);
    for _ in 0..PAGE_REQUESTS {
        page2.push(conn.get(COMPARE).await?.0);
        css2.push(conn.get("/static/style.css").await?.0);
    }
    page.extend(page2);
    css.extend(css2);

    let (p50, p99) = percentiles(&mut page);
    let (s50, s99) = percentiles(&mut css);
    let (c50, _) = percentiles(&mut cold);
    println!("first comparison (report computed): {}", ms(first));
    println!(
        "comparison, report cache miss ({COLD_REQUESTS} requests): p50 {}",
        ms(c50)
    );
    println!(
        "comparison page ({} requests): p50 {}  p99 {}",
        page.len(),
        ms(p50),
        ms(p99)
    );
    println!(
        "/static/style.css ({} requests): p50 {}  p99 {}",
        css.len(),
        ms(s50),
        ms(s99)
    );
    println!(
        "ratio comparison/static: p50 {:.2}x  p99 {:.2}x  (target p99 <= 5x)",
        p50.as_secs_f64() / s50.as_secs_f64(),
        p99.as_secs_f64() / s99.as_secs_f64()
    );
    Ok(Measured {
        server,
        addr,
        cold50: c50,
    })
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// (p50, p99) by the nearest-rank method.
fn percentiles(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    let at = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (at(0.50), at(0.99))
}

/// Fills the database: every table the pages read, in a few big statements.
async fn generate(pool: &SqlitePool) -> anyhow::Result<()> {
    let mut tx = pool.begin().await?;
    let now = store::now();
    // Builds: the two compared ones first, then fillers.
    sqlx::query(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?1) \
         INSERT INTO builds (id, label, commit_sha, kernel_version, config, cmdline, created_at) \
         SELECT i + 1, CASE i WHEN 0 THEN 'v6.0' WHEN 1 THEN 'v6.1' ELSE printf('filler-%03d', i) END, \
                printf('%040x', i * 2654435761), '6.' || (i % 20), \
                'CONFIG_HZ=' || CASE i WHEN 1 THEN 1000 ELSE 250 END || char(10) || 'CONFIG_PREEMPT=y' || char(10), \
                'quiet', ?2 + i FROM c",
    )
    .bind(BUILDS)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?1) \
         INSERT INTO machines (id, name, created_at) SELECT i + 1, printf('rig-%02d', i), ?2 FROM c",
    )
    .bind(MACHINES)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    // Runs: 1,000 for each compared build on rig-00 (benchmark hackbench, three load levels);
    // the others spread over the filler builds, ten benchmarks and all machines.
    sqlx::query(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?1) \
         INSERT INTO runs (id, build_id, machine_id, benchmark, params_key, content_hash, import_hash, created_at) \
         SELECT i + 1, \
                CASE WHEN i < 2 * ?2 THEN 1 + i % 2 ELSE 3 + i % (?3 - 2) END, \
                CASE WHEN i < 2 * ?2 THEN 1 ELSE 1 + i % ?4 END, \
                CASE WHEN i < 2 * ?2 THEN 'hackbench' ELSE printf('bench-%d', i % 10) END, \
                'load=' || CASE (i / 2) % 3 WHEN 0 THEN 'idle' WHEN 1 THEN 'one-cpu' ELSE 'all-cpus' END, \
                printf('c%d', i), printf('i%d', i), ?5 + i FROM c",
    )
    .bind(RUNS)
    .bind(COMPARED_RUNS)
    .bind(BUILDS)
    .bind(MACHINES)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO run_params (run_id, key, value) \
         SELECT id, 'load', substr(params_key, 6) FROM runs",
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;

    // Series and samples through the store, 10,000 runs per transaction. Values: a
    // deterministic spread of about +-5% around a level per load; the head build's idle `real`
    // is 3% slower (a regression).
    let runs: Vec<(i64, i64, String)> =
        sqlx::query_as("SELECT id, build_id, params_key FROM runs ORDER BY id")
            .fetch_all(pool)
            .await?;
    let st = store::Store::from_sqlite_pool(pool.clone());
    for chunk in runs.chunks(10_000) {
        let mut values: Vec<(i64, &'static str, Vec<f64>)> = Vec::new();
        for (run, build, params) in chunk {
            for (k, metric) in [(0i64, "real"), (1, "sys")] {
                let sid = run * 2 - 1 + k;
                let level = match params.as_str() {
                    "load=idle" => 1.0,
                    "load=one-cpu" => 2.0,
                    _ => 3.0,
                } * if metric == "sys" { 0.1 } else { 1.0 };
                let slower = if *build == 2 && metric == "real" && params == "load=idle" {
                    1.03
                } else {
                    1.0
                };
                let v = (0..SAMPLES_PER_SERIES)
                    .map(|i| {
                        level
                            * (1.0 + ((sid * 7919 + i * 104729) % 1000 - 500) as f64 / 10000.0)
                            * slower
                    })
                    .collect();
                values.push((*run, metric, v));
            }
        }
        let series: Vec<store::NewSeries<'_>> = values
            .iter()
            .map(|(run, metric, v)| store::NewSeries {
                run_id: *run,
                metric,
                unit: "s",
                direction: "lower_is_better",
                scope: "all",
                label: None,
                statistic: None,
                values: v,
            })
            .collect();
        st.add_series(&series).await?;
    }
    sqlx::query("ANALYZE").execute(pool).await?;
    Ok(())
}

/// A minimal HTTP/1.1 keep-alive client: one connection, sequential requests.
struct Client {
    r: BufReader<tokio::net::tcp::OwnedReadHalf>,
    w: tokio::net::tcp::OwnedWriteHalf,
}

impl Client {
    async fn connect(addr: std::net::SocketAddr) -> anyhow::Result<Client> {
        let s = TcpStream::connect(addr).await?;
        s.set_nodelay(true)?;
        let (r, w) = s.into_split();
        Ok(Client {
            r: BufReader::new(r),
            w,
        })
    }

    /// GETs `path`: the time to the last byte of the body, and the body.
    async fn get(&mut self, path: &str) -> anyhow::Result<(Duration, String)> {
        let t = Instant::now();
        self.w
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n").as_bytes())
            .await?;
        let mut line = String::new();
        self.r.read_line(&mut line).await?;
        if !line.starts_with("HTTP/1.1 200") {
            bail!("{path}: {}", line.trim());
        }
        let (mut len, mut chunked) = (None, false);
        loop {
            line.clear();
            self.r.read_line(&mut line).await?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                len = Some(v.trim().parse::<usize>()?);
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.r.read_line(&mut line).await?;
                let n = usize::from_str_radix(line.trim(), 16)?;
                let mut chunk = vec![0; n + 2];
                self.r.read_exact(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..n]);
            }
        } else {
            let n = len.context("no content-length")?;
            body.resize(n, 0);
            self.r.read_exact(&mut body).await?;
        }
        Ok((t.elapsed(), String::from_utf8_lossy(&body).into_owned()))
    }
}
