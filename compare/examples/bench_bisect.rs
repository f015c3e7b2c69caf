//! Simulated bisections: how often `bisect-step`'s sequential decision names the right commit,
//! a wrong one or none, and how many benchmark runs it costs, against fixed-run median rules.
//!
//! `cargo run --release -p quiescent-compare --example bench_bisect [BISECTIONS [ALPHA RUNS BATCH MAX_RUNS SAME]]`
//!
//! Each bisection: 64 commits, a step change of `effect` at a uniformly drawn first bad
//! commit (1..=63), Gaussian noise of `noise` (relative), 10 runs of the first commit as the
//! good reference and 10 of the last as the bad one. The bisection follows `git bisect`:
//! it tests the commit nearest the middle of the open range; a skipped commit is left out and
//! its nearest neighbour tried; when only skipped commits remain between the last good and the
//! first bad commit, no single commit is named.

use compare::bisect::{BisectPolicy, StepVerdict, check_references, decide, nearest_median};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

const COMMITS: usize = 64;
const REFERENCE_RUNS: usize = 10;

/// A simulated tree: commit i measures `10 * (1 + effect [i >= first_bad]) * (1 + noise Z)`.
struct Tree {
    first_bad: usize,
    effect: f64,
    noise: f64,
}

impl Tree {
    fn run(&self, commit: usize, rng: &mut Pcg64) -> f64 {
        // Box-Muller: one standard normal per run.
        let (u1, u2): (f64, f64) = (rng.random(), rng.random());
        let z = (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let level = if commit >= self.first_bad {
            1.0 + self.effect
        } else {
            1.0
        };
        10.0 * level * (1.0 + self.noise * z)
    }

    fn runs(&self, commit: usize, n: usize, rng: &mut Pcg64) -> Vec<f64> {
        (0..n).map(|_| self.run(commit, rng)).collect()
    }
}

#[derive(Clone, Copy)]
enum Method {
    Sequential(BisectPolicy),
    /// A fixed number of runs, nearest median.
    Fixed(usize),
}

impl Method {
    fn name(&self) -> String {
        match self {
            Method::Sequential(p) => format!(
                "sequential (alpha {}, same {}, {}+{}..{})",
                p.alpha, p.same, p.runs, p.batch, p.max_runs
            ),
            Method::Fixed(n) => format!("fixed {n} runs, nearest median"),
        }
    }

    /// One step at `commit`: the verdict and the runs it took.
    fn step(
        &self,
        tree: &Tree,
        commit: usize,
        good: &[f64],
        bad: &[f64],
        rng: &mut Pcg64,
    ) -> (StepVerdict, usize) {
        match self {
            Method::Fixed(n) => {
                let xs = tree.runs(commit, *n, rng);
                (nearest_median(good, bad, &xs), *n)
            }
            Method::Sequential(policy) => {
                let mut xs = tree.runs(commit, policy.runs, rng);
                loop {
                    let look = decide(good, bad, &xs, policy);
                    if look.verdict != StepVerdict::Undecided {
                        return (look.verdict, xs.len());
                    }
                    let more = policy.more_runs(xs.len());
                    if more == 0 {
                        return (StepVerdict::Undecided, xs.len());
                    }
                    xs.extend(tree.runs(commit, more, rng));
                }
            }
        }
    }
}

#[derive(Default, Clone, Copy)]
struct Tally {
    right: usize,
    wrong: usize,
    /// Refused (references not different) or ended on a range of skipped commits.
    none: usize,
    refused: usize,
    runs: usize,
    bisections: usize,
}

/// One bisection; the named commit (None: refused or ambiguous) and the runs spent.
fn bisect(method: &Method, tree: &Tree, rng: &mut Pcg64) -> (Option<usize>, usize, bool) {
    let good = tree.runs(0, REFERENCE_RUNS, rng);
    let bad = tree.runs(COMMITS - 1, REFERENCE_RUNS, rng);
    if let Method::Sequential(p) = method
        && !check_references(&good, &bad, p.alpha).significant
    {
        return (None, 0, true);
    }
    let (mut lo, mut hi) = (0, COMMITS - 1);
    let mut skipped = [false; COMMITS];
    let mut runs = 0;
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        let candidate = (lo + 1..hi)
            .filter(|&c| !skipped[c])
            .min_by_key(|&c| (c as isize - mid as isize).unsigned_abs());
        let Some(c) = candidate else {
            return (None, runs, false);
        };
        let (verdict, n) = method.step(tree, c, &good, &bad, rng);
        runs += n;
        match verdict {
            StepVerdict::Good => lo = c,
            StepVerdict::Bad => hi = c,
            StepVerdict::Undecided => skipped[c] = true,
        }
    }
    (Some(hi), runs, false)
}

fn simulate(method: &Method, effect: f64, noise: f64, bisections: usize, seed: u64) -> Tally {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut t = Tally::default();
    for _ in 0..bisections {
        let first_bad = 1 + (rng.random::<u64>() % (COMMITS as u64 - 1)) as usize;
        let tree = Tree {
            first_bad,
            effect,
            noise,
        };
        let (named, runs, refused) = bisect(method, &tree, &mut rng);
        t.bisections += 1;
        t.runs += runs;
        match named {
            Some(c) if c == first_bad => t.right += 1,
            Some(_) => t.wrong += 1,
            None => t.none += 1,
        }
        if refused {
            t.refused += 1;
        }
    }
    t
}

fn pct(k: usize, n: usize) -> f64 {
    100.0 * k as f64 / n.max(1) as f64
}

fn main() {
    let bisections: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    // Optional: ALPHA RUNS BATCH MAX_RUNS SAME, to explore other policies than the default.
    let arg = |i: usize| std::env::args().nth(i).and_then(|a| a.parse::<f64>().ok());
    let d = BisectPolicy::default();
    let policy = BisectPolicy {
        alpha: arg(2).unwrap_or(d.alpha),
        runs: arg(3).map_or(d.runs, |v| v as usize),
        batch: arg(4).map_or(d.batch, |v| v as usize),
        max_runs: arg(5).map_or(d.max_runs, |v| v as usize),
        same: arg(6).unwrap_or(d.same),
    };
    let fixed_grid = [5, 10, 15, 20, 30];
    println!(
        "{bisections} bisections per setting, {COMMITS} commits, {REFERENCE_RUNS} reference runs a side\n"
    );
    println!(
        "| effect | noise | method | right | wrong | none (refused) | runs / bisection |\n|---:|---:|---|---:|---:|---:|---:|"
    );
    let mut matches = Vec::new();
    for effect in [0.02, 0.05, 0.10] {
        for noise in [0.01, 0.03] {
            // The same seed for every method: the same trees and first bad commits.
            let seed = (effect * 1e4) as u64 * 1000 + (noise * 1e4) as u64;
            let row = |m: &Method, t: &Tally| {
                println!(
                    "| {:.0}% | {:.0}% | {} | {:.1}% | {:.1}% | {:.1}% ({:.1}%) | {:.1} |",
                    effect * 100.0,
                    noise * 100.0,
                    m.name(),
                    pct(t.right, t.bisections),
                    pct(t.wrong, t.bisections),
                    pct(t.none, t.bisections),
                    pct(t.refused, t.bisections),
                    t.runs as f64 / t.bisections as f64,
                );
            };
            let seq = Method::Sequential(policy);
            let ts = simulate(&seq, effect, noise, bisections, seed);
            row(&seq, &ts);
            let mut matched = None;
            let mut as_safe = None;
            for n in fixed_grid {
                let m = Method::Fixed(n);
                let tf = simulate(&m, effect, noise, bisections, seed);
                if n == 5 || n == 10 {
                    row(&m, &tf);
                }
                if matched.is_none() && tf.right >= ts.right {
                    matched = Some((n, tf));
                }
                if as_safe.is_none() && tf.wrong <= ts.wrong {
                    as_safe = Some(n);
                }
            }
            matches.push((effect, noise, ts, matched, as_safe));
        }
    }
    println!(
        "\nRuns for the same accuracy: the smallest fixed run count (of {fixed_grid:?}) naming the right commit at least as often as the sequential step; last column: the smallest naming a wrong commit at most as often.\n"
    );
    println!(
        "| effect | noise | sequential right / wrong | runs | fixed N | its right / wrong | its runs | sequential / fixed runs | fixed N as rarely wrong |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (effect, noise, ts, matched, as_safe) in matches {
        let seq_runs = ts.runs as f64 / ts.bisections as f64;
        let safe = as_safe.map_or(format!("> {}", fixed_grid[fixed_grid.len() - 1]), |n| {
            n.to_string()
        });
        match matched {
            Some((n, tf)) => {
                let f_runs = tf.runs as f64 / tf.bisections as f64;
                println!(
                    "| {:.0}% | {:.0}% | {:.1}% / {:.1}% | {:.1} | {n} | {:.1}% / {:.1}% | {:.1} | {:.2} | {safe} |",
                    effect * 100.0,
                    noise * 100.0,
                    pct(ts.right, ts.bisections),
                    pct(ts.wrong, ts.bisections),
                    seq_runs,
                    pct(tf.right, tf.bisections),
                    pct(tf.wrong, tf.bisections),
                    f_runs,
                    seq_runs / f_runs,
                );
            }
            None => println!(
                "| {:.0}% | {:.0}% | {:.1}% / {:.1}% | {:.1} | > {} | - | - | - | {safe} |",
                effect * 100.0,
                noise * 100.0,
                pct(ts.right, ts.bisections),
                pct(ts.wrong, ts.bisections),
                seq_runs,
                fixed_grid[fixed_grid.len() - 1],
            ),
        }
    }
}
