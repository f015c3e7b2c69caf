//! Min, median and max of samples too many to hold at once, read again pass by pass.
//!
//! A radix selection on the samples' order-preserving 64-bit keys (the order of
//! [`f64::total_cmp`]): a pass counts the samples of the bucket known to hold the wanted rank by
//! the next 16 bits of their keys, which narrows the bucket to one of those counts. Once the
//! bucket holds few enough samples, one more pass collects them and the rank is selected in
//! memory. The first pass also finds the min and the max, and the last the greatest key below
//! the bucket, which is the lower middle value of an even count when the upper one is the
//! bucket's least: two or three passes on real data, five at most whatever the data. Memory
//! is the counts (512 KiB) and at most `hold` samples.

use crate::describe::{key, midpoint, unkey};

/// Bits of the key a pass counts by.
const DIGIT: u32 = 16;

/// [`crate::min_median_max`] of `n` samples that `pass` gives again each time it is called,
/// in chunks to the callback it is handed (any chunking, the same samples every time). Holds
/// at most `hold` samples in memory; the figures equal those of `min_median_max` on the whole.
/// An error of `pass` ends the selection with it.
pub fn min_median_max_by_passes<E>(
    n: usize,
    hold: usize,
    mut pass: impl FnMut(&mut dyn FnMut(&[f64])) -> Result<(), E>,
) -> Result<Option<(f64, f64, f64)>, E> {
    if n == 0 {
        return Ok(None);
    }
    // The bucket: keys whose top `fixed` bits are `prefix`, `count` of them, the wanted one
    // (the upper middle, rank n/2) `rank` among them.
    let mut prefix = 0u64;
    let mut fixed = 0u32;
    let mut count = n;
    let mut rank = n / 2;
    // The least and the greatest key, found by the first pass.
    let mut ends = None;
    let in_bucket = |k: u64, prefix: u64, fixed: u32| fixed == 0 || k >> (64 - fixed) == prefix;
    while count > hold.max(1) && fixed < 64 {
        let shift = 64 - fixed - DIGIT;
        let mut counts = vec![0usize; 1 << DIGIT];
        each_key(&mut pass, &mut ends, |k| {
            if in_bucket(k, prefix, fixed) {
                counts[((k >> shift) & ((1 << DIGIT) - 1)) as usize] += 1;
            }
        })?;
        // The digit whose counts, added in order, pass `rank`.
        let mut digit = 0;
        while rank >= counts[digit] {
            rank -= counts[digit];
            digit += 1;
        }
        prefix = prefix << DIGIT | digit as u64;
        fixed += DIGIT;
        count = counts[digit];
    }
    let even = n.is_multiple_of(2);
    let (upper, lower) = if fixed == 64 && !(even && rank == 0) {
        // One key fills the bucket, and the lower middle, if wanted, is in it too.
        (prefix, prefix)
    } else {
        // Keys below the bucket's least possible one; none when the bucket is everything.
        let base = if fixed == 0 {
            0
        } else {
            prefix << (64 - fixed)
        };
        let collect = fixed < 64;
        let mut keys = Vec::with_capacity(if collect { count } else { 0 });
        let mut below = None;
        each_key(&mut pass, &mut ends, |k| {
            if in_bucket(k, prefix, fixed) {
                if collect {
                    keys.push(k);
                }
            } else if k < base {
                below = below.max(Some(k));
            }
        })?;
        let upper = if collect {
            *keys.select_nth_unstable(rank).1
        } else {
            prefix
        };
        // The lower middle (rank n/2 - 1): the greatest key before the upper one in the
        // bucket, else the greatest below it.
        let lower = match rank {
            0 => below.unwrap_or(upper),
            _ if collect => *keys[..rank].iter().max().expect("rank > 0"),
            _ => prefix,
        };
        (upper, lower)
    };
    let median = if even {
        midpoint(unkey(lower), unkey(upper))
    } else {
        unkey(upper)
    };
    let (lo, hi) = ends.expect("at least one pass was made");
    Ok(Some((unkey(lo), median, unkey(hi))))
}

/// Calls `f` with the key of every sample, in one pass; the first pass (`ends` still `None`)
/// also finds the least and the greatest key.
fn each_key<E>(
    pass: &mut impl FnMut(&mut dyn FnMut(&[f64])) -> Result<(), E>,
    ends: &mut Option<(u64, u64)>,
    mut f: impl FnMut(u64),
) -> Result<(), E> {
    let find = ends.is_none();
    let (mut lo, mut hi) = (u64::MAX, 0);
    pass(&mut |xs| {
        for &x in xs {
            let k = key(x);
            if find {
                lo = lo.min(k);
                hi = hi.max(k);
            }
            f(k);
        }
    })?;
    if find {
        *ends = Some((lo, hi));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// The figures of every hold and chunking equal those computed on the whole in memory.
    #[test]
    fn passes_give_the_figures_of_the_whole() {
        let mut x = 0x2545_f491_4f6c_dd1d;
        let sets: Vec<Vec<f64>> = vec![
            vec![3.0],
            vec![2.0, 1.0],
            vec![5.0; 1000],
            // Few distinct values: ranks fall inside long runs of one key.
            (0..10_001).map(|_| (xorshift(&mut x) % 7) as f64).collect(),
            (0..20_000)
                .map(|_| (xorshift(&mut x) % 1_000_003) as f64 / 1e3 - 400.0)
                .collect(),
            // Keys that share their top 48 bits: the last pass decides.
            (0..5_000)
                .map(|_| f64::from_bits(0x4059_0000_0000_0000 | (xorshift(&mut x) % 50)))
                .collect(),
            // The upper middle opens a run of one key; the lower is the greatest below it.
            vec![5.0, 1.0, 5.0, 1.0, 5.0, 1.0, 5.0, 1.0],
            vec![
                -0.0,
                0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e-320,
                -1e308,
                1e308,
                2.5,
            ],
        ];
        for xs in &sets {
            let want = crate::min_median_max(&mut xs.clone());
            for hold in [1, 2, 7, 100, xs.len()] {
                for chunk in [1, 3, 4096] {
                    let mut calls = 0;
                    let got = min_median_max_by_passes::<()>(xs.len(), hold, |f| {
                        calls += 1;
                        xs.chunks(chunk).for_each(&mut *f);
                        Ok(())
                    })
                    .unwrap();
                    assert_eq!(
                        got.map(|(a, b, c)| [a, b, c].map(f64::to_bits)),
                        want.map(|(a, b, c)| [a, b, c].map(f64::to_bits)),
                        "n {} hold {hold} chunk {chunk}",
                        xs.len()
                    );
                    // At most 4 counting passes and a collecting one; one when all fit.
                    assert!(calls <= 5, "{calls} passes");
                    if hold >= xs.len() {
                        assert_eq!(calls, 1);
                    }
                }
            }
        }
    }

    #[test]
    fn no_samples_no_figures_and_errors_end_it() {
        assert_eq!(
            min_median_max_by_passes::<()>(0, 10, |_| unreachable!()),
            Ok(None)
        );
        let mut calls = 0;
        let got = min_median_max_by_passes(10, 1, |f| {
            calls += 1;
            f(&[1.0; 10]);
            if calls == 2 { Err("gone") } else { Ok(()) }
        });
        assert_eq!(got, Err("gone"));
        assert_eq!(calls, 2);
    }
}
