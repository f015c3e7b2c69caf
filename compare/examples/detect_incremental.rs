//! Incremental change-point update against a full re-analysis, 10,000 series x 500 builds.
//!
//! Each series has 500 builds of 1-5 runs (1% normal noise, a fifth of them with a 10% step).
//! Full: every series analysed from scratch, then Benjamini-Hochberg across all. Incremental:
//! one new run (a new build) appended to every series' `History`, then Benjamini-Hochberg
//! across all: the case where one run of a benchmark feeds all its series; then the same with
//! the new run a repeated run of the newest build. Series are handled
//! in chunks so memory stays bounded; both sides do exactly the same series, each timed as the
//! best of three passes (histories rebuilt untimed between passes). Prints both times
//! and their ratio; exits with failure when the incremental update costs more than 1/20.

use std::time::{Duration, Instant};

use compare::changepoint::{DetectSettings, History, SeriesAnalysis, adjust, analyse};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

const SERIES: usize = 10_000;
const BUILDS: i64 = 500;
const CHUNK: usize = 500;
const REPEATS: usize = 3;

fn main() {
    let settings = DetectSettings::default();
    let mut rng = Pcg64Mcg::seed_from_u64(11);
    let (mut full, mut incremental) = (Duration::ZERO, Duration::ZERO);
    let mut full_results: Vec<SeriesAnalysis> = Vec::with_capacity(SERIES);
    let mut updated: Vec<SeriesAnalysis> = Vec::with_capacity(SERIES);
    // The same, with the new run a repeated run of the newest build (500 builds is the worst
    // case: the window holding the newest build is then a whole one).
    let (mut repeated, mut repeat_time) = (Vec::with_capacity(SERIES), Duration::ZERO);
    let mut samples = 0usize;
    for _ in 0..SERIES / CHUNK {
        let chunk: Vec<(Vec<i64>, Vec<f64>)> = (0..CHUNK).map(|_| series(&mut rng)).collect();
        samples += chunk.iter().map(|s| s.0.len()).sum::<usize>();
        // Best of REPEATS for each side: the machine may be shared, and a stall in one pass
        // says nothing about either method.
        let mut best_full = Duration::MAX;
        let mut results = Vec::new();
        for _ in 0..REPEATS {
            let started = Instant::now();
            results = chunk
                .iter()
                .map(|(p, v)| analyse(p, v, &settings).expect("finite values"))
                .collect();
            best_full = best_full.min(started.elapsed());
        }
        full += best_full;
        full_results.append(&mut results);
        let new_runs: Vec<f64> = (0..CHUNK).map(|_| value(&mut rng, 1.0)).collect();
        for (position, total, out) in [
            (BUILDS, &mut incremental, &mut updated),
            (BUILDS - 1, &mut repeat_time, &mut repeated),
        ] {
            let mut best = Duration::MAX;
            let mut results = Vec::new();
            for _ in 0..REPEATS {
                let mut histories: Vec<History> = chunk
                    .iter()
                    .map(|(p, v)| History::new(p, v, settings).expect("finite values"))
                    .collect();
                let started = Instant::now();
                results = histories
                    .iter_mut()
                    .zip(&new_runs)
                    .map(|(h, v)| h.push(position, *v).expect("finite value").clone())
                    .collect();
                best = best.min(started.elapsed());
            }
            *total += best;
            out.append(&mut results);
        }
    }
    let started = Instant::now();
    adjust(&mut full_results, &settings);
    full += started.elapsed();
    let started = Instant::now();
    adjust(&mut updated, &settings);
    incremental += started.elapsed();
    let started = Instant::now();
    adjust(&mut repeated, &settings);
    repeat_time += started.elapsed();

    let found = |r: &[SeriesAnalysis]| r.iter().map(|a| a.change_points.len()).sum::<usize>();
    let ratio = incremental.as_secs_f64() / full.as_secs_f64();
    println!(
        "incremental {SERIES} series x {BUILDS} builds ({samples} samples): full {:.3} s \
         ({} change points), one new run in every series {:.3} s ({} change points); \
         ratio 1/{:.0} (target <= 1/20): {}",
        full.as_secs_f64(),
        found(&full_results),
        incremental.as_secs_f64(),
        found(&updated),
        1.0 / ratio,
        if ratio <= 1.0 / 20.0 { "ok" } else { "FAILED" }
    );
    let repeat_ratio = repeat_time.as_secs_f64() / full.as_secs_f64();
    println!(
        "incremental, the new run a repeated run of the newest build: {:.3} s ({} change points); \
         ratio 1/{:.0}: {}",
        repeat_time.as_secs_f64(),
        found(&repeated),
        1.0 / repeat_ratio,
        if repeat_ratio <= 1.0 / 20.0 {
            "ok"
        } else {
            "FAILED"
        }
    );
    if ratio > 1.0 / 20.0 || repeat_ratio > 1.0 / 20.0 {
        std::process::exit(1);
    }
}

fn uniform(rng: &mut Pcg64Mcg) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn below(rng: &mut Pcg64Mcg, n: u64) -> u64 {
    rng.next_u64() % n
}

fn value(rng: &mut Pcg64Mcg, level: f64) -> f64 {
    // Sum of uniforms: near-normal noise of 1% without another dependency.
    let e: f64 = (0..12).map(|_| uniform(rng)).sum::<f64>() - 6.0;
    level * 100.0 * (1.0 + 0.01 * e)
}

fn series(rng: &mut Pcg64Mcg) -> (Vec<i64>, Vec<f64>) {
    let step = if below(rng, 5) == 0 {
        Some(50 + below(rng, BUILDS as u64 - 100) as i64)
    } else {
        None
    };
    let (mut p, mut v) = (Vec::new(), Vec::new());
    for b in 0..BUILDS {
        let level = if step.is_some_and(|s| b >= s) {
            1.1
        } else {
            1.0
        };
        for _ in 0..=below(rng, 5) {
            p.push(b);
            v.push(value(rng, level));
        }
    }
    (p, v)
}
