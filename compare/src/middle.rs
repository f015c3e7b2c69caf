//! A long series' min, median and max when its middle ranks hold one of a few values, as a
//! timer's few readings do (`user 0m0.004s` in most runs of a `time` log, or a log's few
//! lines repeated): those values, seen `spread` on each side of the middle of `sample` values
//! spread over the series, then one pass that counts, for each, the values below it and equal
//! to it, and finds the least and the greatest. No selection, which costs several times that
//! pass; and for a series not held in memory ([`middle_run_by_pass`]), no copy of it either.

use crate::describe::{key, midpoint, unkey};

/// Series at least this long first look for one value filling their middle ([`middle_run`]).
pub(crate) const RUN_FROM: usize = 1 << 16;
/// Values [`middle_run`] samples, and how far around the sample's middle the value must reach.
pub(crate) const RUN_SAMPLE: usize = 1024;
pub(crate) const RUN_SPREAD: usize = 48;
/// Distinct values the middle of the sample may show.
const RUN_VALUES: usize = 4;

/// [`crate::min_median_max`] of `xs` when its middle ranks hold one of a few values; None when
/// the sample's middle shows more than [`RUN_VALUES`] values or the counts put a middle rank
/// outside them (the caller selects then).
pub(crate) fn middle_run(xs: &[f64], sample: usize, spread: usize) -> Option<(f64, f64, f64)> {
    let n = xs.len();
    let w = Window::of(
        sample_places(n, sample).map(|i| key(xs[i])).collect(),
        spread,
    )?;
    let mut c = Counts::new();
    c.add(xs, &w);
    c.figures(n, &w)
}

/// [`middle_run`] of `n` samples not held in memory, with the figures of
/// [`crate::min_median_max`] on them all. `values_at` puts the samples at the places it is
/// given (ascending) into its vector; `pass` calls its callback with every sample, in chunks,
/// once. Ok(None) when `n` is below [`RUN_FROM`] or the run is declined (the caller selects
/// then); the sample is read before the pass, so a declined run costs only the sample.
pub fn middle_run_by_pass<E>(
    n: usize,
    values_at: impl FnOnce(&[usize], &mut Vec<f64>) -> Result<(), E>,
    pass: impl FnOnce(&mut dyn FnMut(&[f64])) -> Result<(), E>,
) -> Result<Option<(f64, f64, f64)>, E> {
    if n < RUN_FROM {
        return Ok(None);
    }
    let places: Vec<usize> = grouped_places(n, RUN_SAMPLE / RUN_GROUP, RUN_GROUP).collect();
    let mut values = Vec::with_capacity(places.len());
    values_at(&places, &mut values)?;
    // A sample short of its places has no middle to look at.
    if values.len() != places.len() {
        return Ok(None);
    }
    let Some(w) = Window::of(values.into_iter().map(key).collect(), RUN_SPREAD) else {
        return Ok(None);
    };
    let mut c = Counts::new();
    let mut seen = 0;
    pass(&mut |xs| {
        seen += xs.len();
        c.add(xs, &w);
    })?;
    // A pass that gave other samples than `n` has no middle ranks to check against.
    Ok(if seen == n { c.figures(n, &w) } else { None })
}

/// Where [`middle_run`] samples a series of `n`: one place in each of `sample` equal strides,
/// at an offset that varies from stride to stride. At the same offset in each, a series that
/// repeats a few readings (a log's block of lines copied many times) with a period dividing
/// the stride would show one of them only. Ascending.
fn sample_places(n: usize, sample: usize) -> impl Iterator<Item = usize> {
    let step = n / sample;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..sample).map(move |i| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        i * step + (x % step.max(1) as u64) as usize
    })
}

/// Consecutive places [`middle_run_by_pass`] samples together: a series not in memory reads
/// each group at once, where a read per sample would cost more than the count.
const RUN_GROUP: usize = 32;

/// Where [`middle_run_by_pass`] samples a series of `n`: `groups` runs of `group` consecutive
/// places, one in each of `groups` equal strides at an offset that varies from stride to
/// stride (as [`sample_places`]). Ascending; `n` is at least `groups * group`.
fn grouped_places(n: usize, groups: usize, group: usize) -> impl Iterator<Item = usize> {
    let step = n / groups;
    let room = (step + 1).saturating_sub(group).max(1) as u64;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..groups).flat_map(move |i| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = i * step + (x % room) as usize;
        at..at + group
    })
}

/// The distinct keys seen around the middle of the sorted sample, ascending.
struct Window {
    vs: [u64; RUN_VALUES],
    k: usize,
}

impl Window {
    /// None when more than [`RUN_VALUES`] keys lie within `spread` of the sample's middle.
    fn of(mut keys: Vec<u64>, spread: usize) -> Option<Self> {
        keys.sort_unstable();
        let mid = keys.len() / 2;
        let mut w = Window {
            vs: [u64::MAX; RUN_VALUES],
            k: 0,
        };
        // The places past `k` are not read.
        for &v in &keys[mid - spread..=mid + spread] {
            if w.k == 0 || w.vs[w.k - 1] != v {
                if w.k == RUN_VALUES {
                    return None;
                }
                w.vs[w.k] = v;
                w.k += 1;
            }
        }
        Some(w)
    }
}

/// For each value of a [`Window`], how many samples lie below it and are equal to it; and the
/// least and the greatest key. Added up chunk by chunk.
struct Counts {
    below: [usize; RUN_VALUES],
    at: [usize; RUN_VALUES],
    least: u64,
    most: u64,
}

impl Counts {
    fn new() -> Self {
        Counts {
            below: [0; RUN_VALUES],
            at: [0; RUN_VALUES],
            least: u64::MAX,
            most: 0,
        }
    }

    fn add(&mut self, xs: &[f64], w: &Window) {
        match w.k {
            1 => self.add_n::<1>(xs, &w.vs),
            2 => self.add_n::<2>(xs, &w.vs),
            _ => self.add_n::<RUN_VALUES>(xs, &w.vs),
        }
    }

    /// `N` fixed so that the pass is unrolled, and one or two values cost one or two comparison
    /// pairs, not four. Counted in locals: the pass then keeps them in registers.
    fn add_n<const N: usize>(&mut self, xs: &[f64], vs: &[u64; RUN_VALUES]) {
        let (mut below, mut at) = (self.below, self.at);
        let (mut least, mut most) = (self.least, self.most);
        for &x in xs {
            let k = key(x);
            for i in 0..N {
                below[i] += usize::from(k < vs[i]);
                at[i] += usize::from(k == vs[i]);
            }
            least = least.min(k);
            most = most.max(k);
        }
        (self.below, self.at, self.least, self.most) = (below, at, least, most);
    }

    /// The figures of `n` samples counted, when both middle ranks hold window values.
    fn figures(&self, n: usize, w: &Window) -> Option<(f64, f64, f64)> {
        // The value of rank `r` when it is one of the window's.
        let value =
            |r: usize| (0..w.k).find(|&i| self.below[i] <= r && r < self.below[i] + self.at[i]);
        // The middle ranks, (n-1)/2 and n/2 (one rank for an odd n): the median as the
        // selection's midpoint computes it.
        let lower = unkey(w.vs[value((n - 1) / 2)?]);
        let upper = unkey(w.vs[value(n / 2)?]);
        let median = if n.is_multiple_of(2) {
            midpoint(lower, upper)
        } else {
            upper
        };
        Some((unkey(self.least), median, unkey(self.most)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::describe::{median_sorted, sorted};
    use crate::min_median_max;
    use proptest::prelude::*;

    fn bits(t: Option<(f64, f64, f64)>) -> Option<[u64; 3]> {
        t.map(|(a, b, c)| [a, b, c].map(f64::to_bits))
    }

    /// The figures by sorting, which `min_median_max` must give.
    fn by_sorting(xs: &[f64]) -> Option<[u64; 3]> {
        let s = sorted(xs);
        bits(median_sorted(&s).map(|m| (s[0], m, s[s.len() - 1])))
    }

    proptest! {
        /// Few distinct values, one of them most often, and small samples: wherever a run is
        /// taken, its figures are the selection's, to the bit (-0.0 and 0.0 apart).
        #[test]
        fn a_middle_run_gives_the_figures_of_sorting(
            xs in proptest::collection::vec(
                prop_oneof![
                    4 => Just(0.004),
                    1 => Just(0.0),
                    1 => Just(-0.0),
                    1 => Just(0.008),
                    1 => (-3i8..3).prop_map(f64::from),
                    1 => Just(f64::INFINITY),
                ],
                16..300,
            ),
            spread in 0usize..4,
        ) {
            if let Some(got) = middle_run(&xs, 8, spread) {
                prop_assert_eq!(bits(Some(got)), by_sorting(&xs));
            }
        }
    }

    #[test]
    fn a_middle_run_is_taken_only_where_the_counts_confirm_it() {
        // Mostly one reading, -0.0 and 0.0 apart, odd and even counts: taken.
        for (n, most) in [(RUN_FROM, 0.004), (RUN_FROM + 1, 0.004), (RUN_FROM, -0.0)] {
            let xs: Vec<f64> = (0..n)
                .map(|i| match i % 7 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => 0.008,
                    _ => most,
                })
                .collect();
            assert!(middle_run(&xs, RUN_SAMPLE, RUN_SPREAD).is_some(), "{n}");
            assert_eq!(bits(min_median_max(&mut xs.clone())), by_sorting(&xs));
        }
        // Every sampled place holds 5, the series' middle does not: declined, and the
        // selection gives the figures.
        let mut xs: Vec<f64> = (0..64).map(f64::from).collect();
        for i in sample_places(64, 8) {
            xs[i] = 5.0;
        }
        assert_eq!(middle_run(&xs, 8, 2), None);
        assert_eq!(bits(min_median_max(&mut xs.clone())), by_sorting(&xs));
        // The run anywhere, so that its ends fall at and around the middle ranks; odd and
        // even counts; every sampled place in the run: taken exactly when both middle ranks
        // are in it.
        for n in [63usize, 64, 65] {
            // At least the 8 sampled values in the run.
            for below in 0..=n - 8 {
                for above in 0..=n - below - 8 {
                    let at = n - below - above;
                    let mut xs = vec![f64::NAN; n];
                    for i in sample_places(n, 8) {
                        xs[i] = 5.0;
                    }
                    let (mut lo, mut hi) = (below, above);
                    for x in xs.iter_mut().filter(|x| x.is_nan()) {
                        *x = if lo > 0 {
                            lo -= 1;
                            1.0
                        } else if hi > 0 {
                            hi -= 1;
                            9.0
                        } else {
                            5.0
                        };
                    }
                    let inside = below <= (n - 1) / 2 && n / 2 < below + at;
                    let got = middle_run(&xs, 8, 2);
                    assert_eq!(got.is_some(), inside, "n {n} below {below} at {at}");
                    if inside {
                        assert_eq!(bits(got), by_sorting(&xs), "n {n} below {below} at {at}");
                    }
                }
            }
        }
        // Distinct values: declined from the sample alone.
        let xs: Vec<f64> = (0..RUN_FROM).map(|i| i as f64).collect();
        assert_eq!(middle_run(&xs, RUN_SAMPLE, RUN_SPREAD), None);
        // Two to four readings in turn (a log's few lines repeated): the middle ranks fall on
        // two of them, or on one; taken, with the selection's figures.
        for cycle in [
            &[0.044, 0.032][..],
            &[0.044, 0.032, 0.028],
            &[0.044, 0.032, 0.028, 0.027],
        ] {
            for n in [RUN_FROM, RUN_FROM + 1, RUN_FROM + 2] {
                let xs: Vec<f64> = (0..n).map(|i| cycle[i % cycle.len()]).collect();
                let got = middle_run(&xs, RUN_SAMPLE, RUN_SPREAD);
                assert!(got.is_some(), "{cycle:?} {n}");
                assert_eq!(bits(got), by_sorting(&xs), "{cycle:?} {n}");
            }
        }
        // A hundred readings in turn: more values around the middle than the run counts;
        // declined.
        let xs: Vec<f64> = (0..RUN_FROM).map(|i| (i % 100) as f64).collect();
        assert_eq!(middle_run(&xs, RUN_SAMPLE, RUN_SPREAD), None);
        // The sample shows 5 and 7, the middle ranks hold 6, which it missed: declined.
        let mut xs = vec![6.0; 64];
        for (j, i) in sample_places(64, 8).enumerate() {
            xs[i] = if j % 2 == 0 { 5.0 } else { 7.0 };
        }
        assert_eq!(middle_run(&xs, 8, 2), None);
        assert_eq!(bits(min_median_max(&mut xs.clone())), by_sorting(&xs));
    }

    /// `middle_run_by_pass` over `xs` read in chunks of `chunk`, its sample taken from `xs`.
    fn by_pass(xs: &[f64], chunk: usize) -> Option<(f64, f64, f64)> {
        let at = |places: &[usize], out: &mut Vec<f64>| {
            out.extend(places.iter().map(|&i| xs[i]));
            Ok::<_, ()>(())
        };
        middle_run_by_pass(xs.len(), at, |f| {
            xs.chunks(chunk).for_each(f);
            Ok(())
        })
        .unwrap()
    }

    #[test]
    fn a_run_counted_in_chunks_gives_the_figures_of_the_whole() {
        // A few readings in turn, one reading mostly, -0.0 and 0.0 apart; odd and even counts,
        // chunks that do and do not divide them: taken, with the selection's figures.
        let series: [(&[f64], usize); 4] = [
            (&[0.044, 0.032], 1),
            (&[0.044, 0.032, 0.028, 0.027], 1),
            (&[0.004, 0.004, 0.004, 0.008, 0.0, -0.0, 0.004], 7),
            (&[-0.0, -0.0, 0.0, -0.0, 5.0], 3),
        ];
        for (cycle, every) in series {
            for n in [RUN_FROM, RUN_FROM + 1, 3 * RUN_FROM + 5] {
                let xs: Vec<f64> = (0..n).map(|i| cycle[(i / every) % cycle.len()]).collect();
                for chunk in [1 << 16, 1000, n] {
                    let got = by_pass(&xs, chunk);
                    assert!(got.is_some(), "{cycle:?} {n} {chunk}");
                    assert_eq!(bits(got), by_sorting(&xs), "{cycle:?} {n} {chunk}");
                    assert_eq!(bits(got), bits(middle_run(&xs, RUN_SAMPLE, RUN_SPREAD)));
                }
            }
        }
    }

    #[test]
    fn a_run_by_pass_is_declined_where_the_whole_would_be() {
        // Too short to look for a run; values all distinct; a hundred readings in turn.
        let short = vec![1.0; RUN_FROM - 1];
        assert_eq!(by_pass(&short, 1000), None);
        let distinct: Vec<f64> = (0..RUN_FROM).map(|i| i as f64).collect();
        assert_eq!(by_pass(&distinct, 1000), None);
        let hundred: Vec<f64> = (0..RUN_FROM).map(|i| (i % 100) as f64).collect();
        assert_eq!(by_pass(&hundred, 1000), None);
        // Every sampled place holds 5, the middle ranks 6 (1 below, 9 above, both a quarter):
        // the sample shows one value, and the counts decline it.
        let mut xs = vec![6.0; RUN_FROM];
        xs[..RUN_FROM / 4].fill(1.0);
        xs[RUN_FROM - RUN_FROM / 4..].fill(9.0);
        for i in grouped_places(RUN_FROM, RUN_SAMPLE / RUN_GROUP, RUN_GROUP) {
            xs[i] = 5.0;
        }
        assert_eq!(by_pass(&xs, 1000), None);
        assert_eq!(bits(min_median_max(&mut xs.clone())), by_sorting(&xs));
    }

    #[test]
    fn grouped_places_are_runs_spread_over_the_series() {
        for (n, groups, group) in [
            (64, 8, 8),
            (65, 8, 8),
            (RUN_FROM, 32, 32),
            (1_000_003, 32, 32),
        ] {
            let places: Vec<usize> = grouped_places(n, groups, group).collect();
            assert_eq!(places.len(), groups * group);
            assert!(places.windows(2).all(|w| w[0] < w[1]), "{n}: ascending");
            assert!(places.iter().all(|&p| p < n), "{n}: within");
            // One run in each stride, at an offset that is not the same in all.
            let step = n / groups;
            let starts: Vec<usize> = places.chunks(group).map(|c| c[0]).collect();
            for (i, (c, &s)) in places.chunks(group).zip(&starts).enumerate() {
                assert!(c.windows(2).all(|w| w[1] == w[0] + 1), "{n}: consecutive");
                assert!(
                    s >= i * step && s + group <= (i + 1) * step + 1,
                    "{n}: in its stride"
                );
            }
            if step > group {
                assert!(
                    starts
                        .iter()
                        .map(|s| s % step)
                        .any(|o| o != starts[0] % step)
                );
            }
        }
    }

    #[test]
    fn a_pass_or_sample_short_of_what_was_said_is_declined_and_errors_pass_through() {
        let xs = vec![2.0; RUN_FROM + 10];
        let at = |places: &[usize], out: &mut Vec<f64>| {
            out.extend(places.iter().map(|&i| xs[i]));
            Ok::<_, &str>(())
        };
        // Ten samples short of what was said.
        let short = middle_run_by_pass(xs.len(), at, |f| {
            f(&xs[10..]);
            Ok(())
        });
        assert_eq!(short, Ok(None));
        let failed = middle_run_by_pass(xs.len(), at, |_| Err("read"));
        assert_eq!(failed, Err("read"));
        let unsampled = middle_run_by_pass(xs.len(), |_, _| Err("sample"), |_| Ok(()));
        assert_eq!(unsampled, Err("sample"));
        // A sample short of its places: declined, not read past.
        let few = middle_run_by_pass(
            xs.len(),
            |_, out: &mut Vec<f64>| {
                out.push(2.0);
                Ok::<_, &str>(())
            },
            |f| {
                f(&xs);
                Ok(())
            },
        );
        assert_eq!(few, Ok(None));
    }
}
