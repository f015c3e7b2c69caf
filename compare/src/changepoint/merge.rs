//! The merge step: weak change points are dropped, weakest first, until all pass `alpha`;
//! the survivors are described.

use std::collections::HashMap;

use super::builds::Builds;
use super::test::{self, Split};
use super::{ChangeInterval, ChangePoint, DetectSettings, SeriesAnalysis, Segment};

/// Medians of segments already computed, so that an incremental update only sorts the
/// segments its new run changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Medians(HashMap<(usize, usize), f64>);

impl Medians {
    fn get(&mut self, builds: &Builds, a: usize, c: usize) -> f64 {
        *self
            .0
            .entry((a, c))
            .or_insert_with(|| builds.raw_median(a, c))
    }

    /// Forgets segments that reach build `b` or beyond.
    pub fn invalidate_from(&mut self, b: usize) {
        self.0.retain(|&(_, c), _| c <= b);
    }
}

/// Merges the weak change points `weak` (build indices, any order, duplicates allowed).
pub(super) fn merge(
    builds: &Builds,
    weak: impl IntoIterator<Item = usize>,
    settings: &DetectSettings,
    medians: &mut Medians,
) -> SeriesAnalysis {
    let n = builds.len();
    let mut cps: Vec<usize> = weak.into_iter().filter(|&i| i > 0 && i < n).collect();
    cps.sort_unstable();
    cps.dedup();
    let bound = |cps: &[usize], i: usize| -> (usize, usize) {
        let a = if i == 0 { 0 } else { cps[i - 1] };
        let e = cps.get(i + 1).copied().unwrap_or(n);
        (a, e)
    };
    let mut tests: Vec<Split> = (0..cps.len())
        .map(|i| {
            let (a, e) = bound(&cps, i);
            test::split(builds, a, cps[i], e)
        })
        .collect();
    let mut tested_p = Vec::new();
    while let Some((worst, t)) = tests
        .iter()
        .enumerate()
        .max_by(|x, y| x.1.p.total_cmp(&y.1.p))
    {
        if t.p <= settings.alpha {
            break;
        }
        tested_p.push(t.p);
        cps.remove(worst);
        tests.remove(worst);
        // The neighbours now span the dropped point's segment: test them again.
        for i in [worst.wrapping_sub(1), worst] {
            if i < cps.len() {
                let (a, e) = bound(&cps, i);
                tests[i] = test::split(builds, a, cps[i], e);
            }
        }
    }
    // A series without any candidate still counts as one test in the family.
    if cps.is_empty() && tested_p.is_empty() {
        tested_p.push(1.0);
    }
    let mut change_points = Vec::with_capacity(cps.len());
    for (i, t) in tests.iter().enumerate() {
        let (a, e) = bound(&cps, i);
        tested_p.push(t.p);
        change_points.push(describe(builds, a, cps[i], e, t, settings, medians));
    }
    SeriesAnalysis {
        change_points,
        tested_p,
    }
}

fn describe(
    builds: &Builds,
    a: usize,
    c: usize,
    e: usize,
    t: &Split,
    settings: &DetectSettings,
    medians: &mut Medians,
) -> ChangePoint {
    let before = segment(builds, a, c, medians);
    let after = segment(builds, c, e, medians);
    let (lo, hi) = test::interval(t, settings.interval_level);
    let change_pct = if before.median != 0.0 {
        (after.median - before.median) / before.median.abs() * 100.0
    } else {
        f64::NAN
    };
    ChangePoint {
        position: builds.positions[c],
        build_before: builds.positions[c - 1],
        build_index: c,
        interval: ChangeInterval {
            low_pct: builds.delta_pct(lo, before.mean),
            high_pct: builds.delta_pct(hi, before.mean),
            level: settings.interval_level,
        },
        before,
        after,
        change_pct,
        p: t.p,
        q: t.p,
    }
}

fn segment(builds: &Builds, a: usize, c: usize, medians: &mut Medians) -> Segment {
    let (n, mean) = builds.raw_summary(a, c);
    Segment {
        first_position: builds.positions[a],
        last_position: builds.positions[c - 1],
        builds: c - a,
        n,
        median: medians.get(builds, a, c),
        mean,
    }
}
