//! One step of a bisection: is the current commit like the good reference, like the bad one,
//! or not yet clear? Pure decision functions behind `quiescent bisect-step`.
//!
//! The step is sequential, in the spirit of Chromium Pinpoint's SAME / DIFFERENT / UNKNOWN:
//! the current commit's samples are tested against both references at each look (after the
//! first `runs` samples, then after every further batch), and more runs are asked for while
//! the answer is unknown. A commit is called good when it differs significantly from the bad
//! reference and clearly looks like the good one (its p against good reaches a SAME threshold
//! that starts at [`SAME`] and falls to the look level by the last look), and the other way
//! round for bad; any other outcome is undecided.
//!
//! Why this bounds the error: calling a bad commit good needs the test of the commit against
//! the bad reference, both drawn from the same distribution, to come out significant at some
//! look. With `L` possible looks and a per-look level of `alpha / L` (Bonferroni over the
//! looks: the level tightens as the number of allowed looks grows), that chance is at most
//! `alpha` per step, whatever the noise and the size of the change. Requiring in addition that
//! the commit is *not* significantly different from the other reference makes the real rate
//! far lower; the price is paid in runs, not in wrong answers.
//!
//! Each test is the crate's own policy: exact or asymptotic Mann-Whitney U, or Welch's t when
//! the smallest p Mann-Whitney can reach at these sample sizes is not below the level.

use serde::Serialize;

use crate::describe::{median_sorted, sorted};
use crate::tests::{mann_whitney_sorted, min_exact_p, ranks, welch_samples};

/// Fewer samples than this on any side never decide a step.
pub const MIN_N: usize = 3;

/// The default SAME threshold at the first look (see [`BisectPolicy::same`]).
pub const SAME: f64 = 0.05;

/// How one bisection step gathers and judges samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BisectPolicy {
    /// Per-step bound on calling a commit the wrong side, spread over the looks; also the
    /// level at which good and bad must differ before bisecting starts.
    pub alpha: f64,
    /// Runs before the first look.
    pub runs: usize,
    /// Runs added after an undecided look.
    pub batch: usize,
    /// No more runs than this: still undecided then means the commit is skipped.
    pub max_runs: usize,
    /// How clearly a commit must look like a reference to be called the same as it: its p
    /// against that reference must reach this at the first look, falling linearly to the
    /// look level at the last look (Pinpoint's tightening SAME threshold: with more runs, a
    /// real difference would have shown, so less is asked).
    pub same: f64,
}

impl Default for BisectPolicy {
    fn default() -> Self {
        BisectPolicy {
            alpha: 0.05,
            runs: 5,
            batch: 5,
            max_runs: 30,
            same: SAME,
        }
    }
}

impl BisectPolicy {
    /// How many looks the schedule allows: after `runs`, then after each `batch` up to
    /// `max_runs` (a last, shorter batch included).
    pub fn looks(&self) -> usize {
        let first = self.runs.max(1);
        let max = self.max_runs.max(first);
        1 + (max - first).div_ceil(self.batch.max(1))
    }

    /// The significance level of each look: `alpha / looks`.
    pub fn look_level(&self) -> f64 {
        self.alpha / self.looks() as f64
    }

    /// Which look `n` samples are (0 for the first), counted by the schedule.
    fn look_index(&self, n: usize) -> usize {
        let first = self.runs.max(1);
        n.saturating_sub(first).div_ceil(self.batch.max(1))
    }

    /// The p a commit's samples must reach against a reference to be called the same as it,
    /// at the look of `n` samples: `same` at the first look, the look level at the last.
    pub fn same_level(&self, n: usize) -> f64 {
        let level = self.look_level();
        let last = self.looks().saturating_sub(1);
        if last == 0 || self.same <= level {
            return self.same.max(level);
        }
        let k = self.look_index(n).min(last) as f64 / last as f64;
        self.same + (level - self.same) * k
    }

    /// How many runs to add after an undecided look with `n` samples (0: stop).
    pub fn more_runs(&self, n: usize) -> usize {
        let first = self.runs.max(1);
        if n < first {
            return first - n;
        }
        self.batch.max(1).min(self.max_runs.saturating_sub(n))
    }
}

/// What the step says about the current commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// Like the good reference: `git bisect good` (exit 0).
    Good,
    /// Like the bad reference: `git bisect bad` (exit 1).
    Bad,
    /// Not decided yet: more runs, or a skip (exit 125) after the last allowed look.
    Undecided,
}

impl StepVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            StepVerdict::Good => "good",
            StepVerdict::Bad => "bad",
            StepVerdict::Undecided => "undecided",
        }
    }
}

/// One two-sample test as the step uses it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TestResult {
    /// Two-sided p-value; 1 when no test is possible (a side too small or without variance).
    pub p: f64,
    /// `mann_whitney`, `welch` or `none`.
    pub test: &'static str,
}

/// Tests `a` against `b` at `level`: Mann-Whitney U, or Welch's t when Mann-Whitney cannot
/// reach `level` at these sizes (as `compare_series` does), Mann-Whitney's p when Welch is
/// undefined. Samples must be sorted.
fn test_sorted(a: &[f64], b: &[f64], level: f64) -> TestResult {
    let none = TestResult {
        p: 1.0,
        test: "none",
    };
    if a.is_empty() || b.is_empty() {
        return none;
    }
    let mw = mann_whitney_sorted(a, b, &ranks(a, b));
    if min_exact_p(a.len(), b.len()) >= level
        && let Some(w) = welch_samples(a, b)
    {
        return TestResult {
            p: w.p,
            test: "welch",
        };
    }
    match mw {
        Some(mw) => TestResult {
            p: mw.p,
            test: "mann_whitney",
        },
        None => none,
    }
}

/// Whether good and bad differ enough to bisect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceCheck {
    pub good_n: usize,
    pub bad_n: usize,
    pub good_median: Option<f64>,
    pub bad_median: Option<f64>,
    /// 100 (bad median - good median) / |good median|.
    pub change_pct: Option<f64>,
    pub test: TestResult,
    /// p < alpha: bisecting can tell the two apart.
    pub significant: bool,
}

/// Tests good against bad at `alpha`. Bisecting two references that do not differ can only
/// follow noise, so a step refuses to start unless `significant`.
pub fn check_references(good: &[f64], bad: &[f64], alpha: f64) -> ReferenceCheck {
    let (g, b) = (sorted(good), sorted(bad));
    let test = test_sorted(&g, &b, alpha);
    let (gm, bm) = (median_sorted(&g), median_sorted(&b));
    let change_pct = match (gm, bm) {
        (Some(g), Some(b)) if g != 0.0 => Some((b - g) / g.abs() * 100.0),
        _ => None,
    };
    ReferenceCheck {
        good_n: g.len(),
        bad_n: b.len(),
        good_median: gm,
        bad_median: bm,
        change_pct,
        // References too small for any step to decide, or medians that do not move, tell
        // nothing apart.
        significant: test.p < alpha && g.len() >= MIN_N && b.len() >= MIN_N && gm != bm,
        test,
    }
}

/// One look at the current commit's samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Look {
    pub verdict: StepVerdict,
    /// Samples of the current commit so far.
    pub n: usize,
    pub median: Option<f64>,
    /// Where the median sits between the references: 0 at the good median, 1 at the bad one.
    pub position: Option<f64>,
    /// The current commit against the good reference.
    pub vs_good: TestResult,
    /// The current commit against the bad reference.
    pub vs_bad: TestResult,
    /// The level each test is judged at (`alpha / looks`): below it, different.
    pub level: f64,
    /// At or above this p, the same (`BisectPolicy::same_level`).
    pub same_level: f64,
}

/// Judges the current commit's samples against the two references.
pub fn decide(good: &[f64], bad: &[f64], current: &[f64], policy: &BisectPolicy) -> Look {
    let (g, b, c) = (sorted(good), sorted(bad), sorted(current));
    let level = policy.look_level();
    let vs_good = test_sorted(&g, &c, level);
    let vs_bad = test_sorted(&b, &c, level);
    let median = median_sorted(&c);
    let position = match (median_sorted(&g), median_sorted(&b), median) {
        (Some(gm), Some(bm), Some(m)) if bm != gm => Some((m - gm) / (bm - gm)),
        _ => None,
    };
    let same_level = policy.same_level(c.len());
    let (off_good, off_bad) = (vs_good.p < level, vs_bad.p < level);
    let (like_good, like_bad) = (vs_good.p >= same_level, vs_bad.p >= same_level);
    // The median must also sit on the side of the reference it is said to match: a commit
    // "different from bad" because it is even further from good is no good commit.
    // Fewer than MIN_N values on a side: no verdict, whatever a test says (as `compare`).
    let enough = [g.len(), b.len(), c.len()].iter().all(|&n| n >= MIN_N);
    let verdict = match (off_good, off_bad, position) {
        _ if !enough => StepVerdict::Undecided,
        (_, true, Some(t)) if like_good && t < 0.5 => StepVerdict::Good,
        (true, _, Some(t)) if like_bad && t > 0.5 => StepVerdict::Bad,
        _ => StepVerdict::Undecided,
    };
    Look {
        verdict,
        n: c.len(),
        median,
        position,
        vs_good,
        vs_bad,
        level,
        same_level,
    }
}

/// The fixed-sample rule the sequential step is measured against: the median of the samples
/// is good when it is nearer the good median than the bad one. Never undecided.
pub fn nearest_median(good: &[f64], bad: &[f64], current: &[f64]) -> StepVerdict {
    let m = |xs: &[f64]| median_sorted(&sorted(xs));
    match (m(good), m(bad), m(current)) {
        (Some(g), Some(b), Some(c)) if (c - g).abs() <= (c - b).abs() => StepVerdict::Good,
        (Some(_), Some(_), Some(_)) => StepVerdict::Bad,
        _ => StepVerdict::Undecided,
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    fn spread(center: f64, n: usize, step: f64) -> Vec<f64> {
        (0..n)
            .map(|i| center + (i as f64 - (n - 1) as f64 / 2.0) * step)
            .collect()
    }

    #[test]
    fn schedule_counts_looks_and_batches() {
        let p = BisectPolicy::default();
        // 5, 10, 15, 20, 25, 30.
        assert_eq!(p.looks(), 6);
        assert!((p.look_level() - 0.05 / 6.0).abs() < 1e-15);
        assert_eq!(p.more_runs(0), 5);
        assert_eq!(p.more_runs(5), 5);
        assert_eq!(p.more_runs(28), 2);
        assert_eq!(p.more_runs(30), 0);
        let odd = BisectPolicy {
            runs: 4,
            batch: 3,
            max_runs: 12,
            ..p
        };
        // 4, 7, 10, 12.
        assert_eq!(odd.looks(), 4);
        // SAME: 0.05 at the first look, the look level at the last, linear between.
        assert_eq!(p.same_level(5), 0.05);
        let level = 0.05 / 6.0;
        assert!((p.same_level(30) - level).abs() < 1e-15);
        assert!((p.same_level(15) - (0.05 + (level - 0.05) * 0.4)).abs() < 1e-15);
        assert!(p.same_level(10) > p.same_level(15));
    }

    #[test]
    fn clear_cases_are_decided() {
        let good = spread(10.0, 10, 0.01);
        let bad = spread(10.5, 10, 0.01);
        let p = BisectPolicy::default();
        let g = decide(&good, &bad, &spread(10.003, 5, 0.012), &p);
        assert_eq!(g.verdict, StepVerdict::Good, "{g:?}");
        assert!(g.position.unwrap().abs() < 0.05);
        let b = decide(&good, &bad, &spread(10.497, 5, 0.012), &p);
        assert_eq!(b.verdict, StepVerdict::Bad, "{b:?}");
        // All 5 values beyond all 10 of the other side: the smallest exact p, 2 / C(15, 5).
        assert!((b.vs_good.p - 2.0 / 3003.0).abs() < 1e-12, "{b:?}");
        assert_eq!(b.vs_good.test, "mann_whitney");
    }

    #[test]
    fn halfway_and_too_few_are_undecided() {
        let good = spread(10.0, 10, 0.01);
        let bad = spread(10.5, 10, 0.01);
        let p = BisectPolicy::default();
        // Different from both.
        let mid = decide(&good, &bad, &spread(10.25, 5, 0.01), &p);
        assert_eq!(mid.verdict, StepVerdict::Undecided);
        assert!((mid.position.unwrap() - 0.5).abs() < 1e-9);
        // Two values never decide, however far apart (Welch's t alone would call it good).
        let few = decide(&good, &bad, &[10.0, 10.001], &p);
        assert_eq!(few.verdict, StepVerdict::Undecided, "{few:?}");
        // Beyond good, away from bad: different from both, not "good".
        let beyond = decide(&good, &bad, &spread(9.0, 5, 0.01), &p);
        assert_eq!(beyond.verdict, StepVerdict::Undecided);
    }

    #[test]
    fn overlapping_references_are_refused() {
        let a = spread(10.0, 10, 0.1);
        let b = spread(10.01, 10, 0.1);
        let c = check_references(&a, &b, 0.01);
        assert!(!c.significant, "{c:?}");
        let d = check_references(&a, &spread(12.0, 10, 0.1), 0.01);
        assert!(d.significant, "{d:?}");
        assert!((d.change_pct.unwrap() - 20.0).abs() < 1e-9);
        // Identical references: no change at all.
        assert!(!check_references(&a, &a, 0.01).significant);
    }

    #[test]
    fn small_references_fall_back_to_welch() {
        // 3 vs 3: Mann-Whitney cannot go below 0.1.
        let c = check_references(&[1.0, 1.01, 0.99], &[2.0, 2.01, 1.99], 0.01);
        assert_eq!(c.test.test, "welch");
        assert!(c.significant);
    }

    /// Runs one sequential step on draws from `draw`, as `bisect-step` does.
    fn sequential(
        good: &[f64],
        bad: &[f64],
        policy: &BisectPolicy,
        mut draw: impl FnMut() -> f64,
    ) -> StepVerdict {
        let mut xs: Vec<f64> = Vec::new();
        loop {
            let more = policy.more_runs(xs.len());
            if more == 0 {
                return StepVerdict::Undecided;
            }
            xs.extend((0..more).map(|_| draw()));
            let v = decide(good, bad, &xs, policy).verdict;
            if v != StepVerdict::Undecided {
                return v;
            }
        }
    }

    #[test]
    fn wrong_calls_stay_below_alpha_over_all_looks() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
        let mut normal = move |mean: f64| {
            let (u1, u2): (f64, f64) = (rng.random(), rng.random());
            mean + (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let policy = BisectPolicy::default();
        // Good and bad two standard deviations apart: hard enough that steps need many looks.
        let steps = 1000;
        let (mut wrong, mut decided) = (0, 0);
        for i in 0..steps {
            let good: Vec<f64> = (0..10).map(|_| normal(0.0)).collect();
            let bad: Vec<f64> = (0..10).map(|_| normal(2.0)).collect();
            let truth = if i % 2 == 0 { 0.0 } else { 2.0 };
            let v = sequential(&good, &bad, &policy, || normal(truth));
            match (v, truth == 0.0) {
                (StepVerdict::Good, false) | (StepVerdict::Bad, true) => wrong += 1,
                (StepVerdict::Undecided, _) => {}
                _ => decided += 1,
            }
        }
        let rate = wrong as f64 / steps as f64;
        assert!(rate <= policy.alpha, "{wrong} wrong of {steps}");
        // And the step is useful: most steps end in a right call.
        assert!(decided > steps * 8 / 10, "{decided} right of {steps}");
    }

    #[test]
    fn nearest_median_splits_at_the_midpoint() {
        let (g, b) = ([1.0, 1.0, 1.0], [2.0, 2.0, 2.0]);
        assert_eq!(nearest_median(&g, &b, &[1.4]), StepVerdict::Good);
        assert_eq!(nearest_median(&g, &b, &[1.6]), StepVerdict::Bad);
        assert_eq!(nearest_median(&g, &b, &[]), StepVerdict::Undecided);
    }
}
