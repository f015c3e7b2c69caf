//! The demo's generated history: about 60 builds of a few seed benchmarks on `main`, each run
//! drawn from the noise of a bundled real run (its samples relative to their median), with
//! two steps of realistic size. Marked as generated: the machine is `generated-rig`, and the
//! pages say so.

use anyhow::Context;
use store::{BuildMeta, InputFile, Placement, RunMeta, Store};

/// Builds in the generated history.
pub const BUILDS: usize = 60;
/// Seed benchmarks used at most.
const SERIES: usize = 3;
/// The machine of every generated run: the pages mark its histories as generated.
pub const MACHINE: &str = "generated-rig";

/// A small deterministic generator (xorshift64*), so the demo is the same every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Level of build `b` relative to the real run: a regression of 8% from build 25 and a
/// partial recovery (-5%) from build 45 on the first series; one 6% step from build 35 on
/// the others. Sizes are those the seed threads report for real kernel changes.
fn level(series: usize, b: usize) -> f64 {
    match series {
        0 => {
            let mut l = 1.0;
            if b >= 25 {
                l *= 1.08;
            }
            if b >= 45 {
                l *= 0.95;
            }
            l
        }
        _ => {
            if b >= 35 {
                1.06
            } else {
                1.0
            }
        }
    }
}

/// Generates and imports the history; returns (runs stored, alerts raised).
pub async fn build_history(store: &Store) -> anyhow::Result<(usize, usize)> {
    // One real metric per benchmark, with repeated samples to carry its noise; the noise of
    // every bundled run of that metric is pooled (each sample relative to its run's median).
    let all = store.whole_run_series(3).await?;
    let mut seeds: Vec<store::WholeRunSeries> = Vec::new();
    for s in &all {
        if s.unit == "s" && !seeds.iter().any(|x| x.benchmark == s.benchmark) {
            seeds.push(s.clone());
        }
        if seeds.len() == SERIES {
            break;
        }
    }
    let mut noise: Vec<(f64, Vec<f64>)> = Vec::new();
    for seed in &seeds {
        let ids: Vec<i64> = all
            .iter()
            .filter(|s| s.benchmark == seed.benchmark && s.metric == seed.metric)
            .map(|s| s.series_id)
            .collect();
        let mut ratios = Vec::new();
        let mut level = None;
        for (_, vals) in store.series_values(&ids).await? {
            let Some(m) = compare::median(&vals).filter(|m| m.is_finite() && *m > 0.0) else {
                continue;
            };
            level.get_or_insert(m);
            ratios.extend(vals.iter().map(|v| v / m));
        }
        noise.push((level.unwrap_or(0.0), ratios));
    }
    // The two steps go to the quietest series, where a rig would see them too.
    let spread = |r: &[f64]| {
        let d: Vec<f64> = r.iter().map(|x| (x - 1.0).abs()).collect();
        compare::median(&d).unwrap_or(f64::INFINITY)
    };
    let mut rank: Vec<usize> = (0..noise.len()).collect();
    rank.sort_by(|a, b| spread(&noise[*a].1).total_cmp(&spread(&noise[*b].1)));
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut runs, mut alerts) = (0, 0);
    for b in 0..BUILDS {
        let build = BuildMeta {
            label: format!("gen-{b:03}"),
            commit: Some(format!("{:040x}", 0xdeb0_0000_u64 + b as u64)),
            ..Default::default()
        };
        for (i, seed) in seeds.iter().enumerate() {
            let (median, ratios) = &noise[i];
            if ratios.is_empty() || *median <= 0.0 {
                continue;
            }
            // Resample the real runs' relative noise (5 samples) around the build's level.
            let mut csv = String::from("metric,unit,direction,value\n");
            for _ in 0..5 {
                let r = ratios[rng.below(ratios.len())];
                csv.push_str(&format!(
                    "{},{},{},{}\n",
                    seed.metric,
                    seed.unit,
                    seed.direction,
                    median * r * level(rank.iter().position(|&k| k == i).unwrap_or(i), b)
                ));
            }
            let meta = RunMeta {
                build: build.clone(),
                machine: MACHINE.into(),
                benchmark: seed.benchmark.clone(),
                ..Default::default()
            };
            let file = InputFile::bytes("generated.csv", csv.into_bytes(), None);
            let out = store
                .import_run(&meta, &[file], None)
                .await
                .with_context(|| format!("demo history: build {b} of {}", seed.benchmark))?;
            runs += out.run_ids.len();
            let groups = crate::history::after_stored(store, &out, &Placement::main()).await?;
            alerts += groups.len();
        }
    }
    Ok((runs, alerts))
}
