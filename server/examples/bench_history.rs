//! Alert detection on the stored path: `cargo run --release -p quiescent --example bench_history`
//!
//! Stores a history of 10,000 series x 500 builds (50 benchmarks of 200 metrics on one
//! machine, one run per benchmark and build, 3 samples per series, 1% noise, a fifth of the
//! series with a 10% step), then times, in the same run:
//! - full: every series read from the store, analysed from scratch, its p-values stored, q
//!   across each benchmark and alerts written (`history::detect_keys` on every key, with no
//!   detector state kept);
//! - incremental: one new run (a new build of one benchmark) imported the way `ingest` and
//!   `upload` do: only its benchmark's 200 series are read, their kept detector state takes
//!   the new samples, and alerts are written (`history::after_import`).
//!
//! Prints both times and their ratio; exits with failure above 1/20.
//! `BENCH_BENCHMARKS`, `BENCH_METRICS` and `BENCH_BUILDS` change the size.

use std::time::Instant;

use anyhow::Context;
use store::{NewSeries, Placement, Store};

/// xorshift64*: deterministic noise without another dependency.
struct Rng(u64);

impl Rng {
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Stores build `b` with one run per benchmark; returns the run ids.
async fn store_build(
    store: &Store,
    b: usize,
    benchmarks: usize,
    metrics: &[String],
    rng: &mut Rng,
    step_at: usize,
) -> anyhow::Result<Vec<i64>> {
    let pool = store.sqlite_pool();
    let build: i64 = sqlx::query_scalar(
        "INSERT INTO builds (label, commit_sha, created_at) VALUES ($1, $2, 0) RETURNING id",
    )
    .bind(format!("b{b:04}"))
    .bind(format!("{b:040x}"))
    .fetch_one(pool)
    .await?;
    store.place_build(build, &Placement::main()).await?;
    let mut runs = Vec::new();
    let mut values: Vec<Vec<f64>> = Vec::new();
    for k in 0..benchmarks {
        let run: i64 = sqlx::query_scalar(
            "INSERT INTO runs (build_id, machine_id, benchmark, params_key, content_hash, import_hash, created_at) \
             VALUES ($1, 1, $2, '', $3, $3, 0) RETURNING id",
        )
        .bind(build)
        .bind(format!("bench{k:02}"))
        .bind(format!("{b}-{k}"))
        .fetch_one(pool)
        .await?;
        runs.push(run);
        for m in 0..metrics.len() {
            let stepped = (k * metrics.len() + m).is_multiple_of(5) && b >= step_at;
            let level = if stepped { 110.0 } else { 100.0 };
            values.push(
                (0..3)
                    .map(|_| level * (1.0 + 0.01 * (rng.unit() - 0.5) * 3.46))
                    .collect(),
            );
        }
    }
    let rows: Vec<NewSeries<'_>> = runs
        .iter()
        .enumerate()
        .flat_map(|(k, run)| {
            metrics.iter().enumerate().map({
                let values = &values;
                move |(m, metric)| NewSeries {
                    run_id: *run,
                    metric,
                    unit: "s",
                    direction: "lower_is_better",
                    scope: "all",
                    label: None,
                    statistic: None,
                    values: &values[k * metrics.len() + m],
                }
            })
        })
        .collect();
    store.add_series(&rows).await?;
    Ok(runs)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let benchmarks = env("BENCH_BENCHMARKS", 50);
    let metric_count = env("BENCH_METRICS", 200);
    let builds = env("BENCH_BUILDS", 500);
    let tmp = tempfile::tempdir()?;
    let path = tmp.path().join("history.db");
    let store = Store::open(&path.display().to_string())
        .await
        .with_context(|| format!("opening {}", path.display()))?;
    sqlx::query("INSERT INTO machines (id, name, created_at) VALUES (1, 'rig', 0)")
        .execute(store.sqlite_pool())
        .await?;
    let metrics: Vec<String> = (0..metric_count).map(|m| format!("m{m:03}")).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let t = Instant::now();
    for b in 0..builds {
        store_build(&store, b, benchmarks, &metrics, &mut rng, builds / 2).await?;
    }
    println!(
        "stored {} series x {builds} builds in {:.1} s",
        benchmarks * metric_count,
        t.elapsed().as_secs_f64()
    );

    // Full: every key, no detector state kept (a fresh process would be in this state).
    let keys = store.history_keys(&store::KeyFilter::default()).await?;
    quiescent::history::forget_state();
    let t = Instant::now();
    let groups = quiescent::history::detect_keys(&store, &keys).await?;
    let full = t.elapsed();
    let alerts = store.alerts(&store::AlertFilter::default()).await?.len();
    println!(
        "full re-analysis of {} series: {:.3} s ({} alert groups, {alerts} alerts)",
        keys.len(),
        full.as_secs_f64(),
        groups.len()
    );

    // Incremental: one new run of one benchmark, imported as ingest does.
    let one = store_build(&store, builds, 1, &metrics, &mut rng, builds / 2).await?;
    let t = Instant::now();
    quiescent::history::after_import(&store, &one, &Placement::main()).await?;
    let incremental = t.elapsed();
    let ratio = incremental.as_secs_f64() / full.as_secs_f64();
    println!(
        "one new run ({metric_count} series): {:.3} s = 1/{:.0} of the full re-analysis",
        incremental.as_secs_f64(),
        1.0 / ratio
    );
    store.close().await;
    if ratio > 1.0 / 20.0 {
        anyhow::bail!("the incremental update costs more than 1/20 of a full re-analysis");
    }
    Ok(())
}
