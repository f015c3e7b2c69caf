//! The merge step: weak change points are dropped, weakest first, until all pass `alpha`;
//! the survivors are described.

use super::builds::Builds;
use super::edivisive;
use super::test::{self, Split};
use super::{ChangeInterval, ChangePoint, DetectSettings, Segment, SeriesAnalysis};

/// Tests and descriptions of change points already computed, keyed by the builds
/// `(a, c, e)` of their segments `a..c` and `c..e`, so that an incremental update only redoes
/// the segments its new run changed. A handful of entries: a linear search is enough.
/// Entries not used by the latest merge are dropped after it, so the cache stays as small as
/// the set of change points.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Cache {
    tests: Vec<((usize, usize, usize), Split, bool)>,
    points: Vec<((usize, usize, usize), ChangePoint)>,
    /// Medians of segments `a..c`: the segment before the newest change point keeps its median
    /// while runs arrive after it.
    medians: Vec<((usize, usize), f64)>,
}

impl Cache {
    fn test(&mut self, builds: &Builds, a: usize, c: usize, e: usize, m: usize) -> Split {
        if let Some((_, t, used)) = self.tests.iter_mut().find(|(k, ..)| *k == (a, c, e)) {
            *used = true;
            return *t;
        }
        let mut t = test::split(builds, a, c, e, m);
        // The far ends were chosen from the data too: a short excursion of noise between two
        // chosen points would otherwise pass. Bonferroni again over the placements of one end.
        t.p = (t.p * (test::choices(a, e, m) + 1.0) / 2.0).min(1.0);
        self.tests.push(((a, c, e), t, true));
        t
    }

    fn median(&mut self, builds: &Builds, a: usize, c: usize) -> f64 {
        if let Some((_, m)) = self.medians.iter().find(|(k, _)| *k == (a, c)) {
            return *m;
        }
        let m = builds.raw_median(a, c);
        self.medians.push(((a, c), m));
        m
    }

    /// Keeps what this merge used, and marks it unused for the next one.
    fn sweep(&mut self, cps: &[usize], n: usize) {
        self.medians.retain(|&((a, c), _)| {
            let starts = a == 0 || cps.binary_search(&a).is_ok();
            starts && (c == n || cps.binary_search(&c).is_ok())
        });
        self.tests.retain(|(.., used)| *used);
        for (.., used) in &mut self.tests {
            *used = false;
        }
        self.points.retain(|((a, c, e), _)| {
            let i = cps.partition_point(|x| x < c);
            cps.get(i) == Some(c)
                && *a == if i == 0 { 0 } else { cps[i - 1] }
                && *e == cps.get(i + 1).copied().unwrap_or(n)
        });
    }

    /// Forgets everything whose segments reach beyond build `b` (they include a changed build).
    pub fn invalidate_from(&mut self, b: usize) {
        self.tests.retain(|((_, _, e), ..)| *e <= b);
        self.points.retain(|((_, _, e), _)| *e <= b);
        self.medians.retain(|((_, c), _)| *c <= b);
    }
}

/// Merges the weak change points `weak` (build indices, any order, duplicates allowed).
pub(super) fn merge(
    builds: &Builds,
    weak: impl IntoIterator<Item = usize>,
    settings: &DetectSettings,
    cache: &mut Cache,
) -> SeriesAnalysis {
    let n = builds.len();
    let m = edivisive::min_segment(settings);
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
            cache.test(builds, a, cps[i], e, m)
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
                tests[i] = cache.test(builds, a, cps[i], e, m);
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
        let key = (a, cps[i], e);
        match cache.points.iter().find(|(k, _)| *k == key) {
            Some((_, c)) => change_points.push(c.clone()),
            None => {
                let c = describe(builds, key, t, settings, cache);
                cache.points.push((key, c.clone()));
                change_points.push(c);
            }
        }
    }
    cache.sweep(&cps, n);
    SeriesAnalysis {
        change_points,
        tested_p,
    }
}

fn describe(
    builds: &Builds,
    (a, c, e): (usize, usize, usize),
    t: &Split,
    settings: &DetectSettings,
    cache: &mut Cache,
) -> ChangePoint {
    let before = segment(builds, a, c, cache);
    let after = segment(builds, c, e, cache);
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

fn segment(builds: &Builds, a: usize, c: usize, cache: &mut Cache) -> Segment {
    let (n, mean) = builds.raw_summary(a, c);
    Segment {
        first_position: builds.positions[a],
        last_position: builds.positions[c - 1],
        builds: c - a,
        n,
        median: cache.median(builds, a, c),
        mean,
    }
}
