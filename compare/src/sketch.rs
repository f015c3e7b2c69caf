//! A ministat-like text picture of two distributions.

use crate::describe::{mean, median_sorted, sorted, std_dev};

/// At most this many rows of stacked points; taller columns are scaled down.
const MAX_ROWS: usize = 10;

/// Draws base (`x`) and head (`+`) on one axis, `*` where both have a point in the same cell,
/// like ministat: a column holding several points stacks them upwards; under the points, one
/// bar per sample spans mean - std to mean + std (`|___|`) with `M` at the median and `A` at the
/// mean (A wins a shared cell), bars sharing a row when they do not overlap. Columns with more
/// than 10 points are scaled to 10 rows. `width` is the whole line including the frame
/// (at least 12). Every line ends with a newline; empty input gives an empty string.
pub fn text_sketch(base: &[f64], head: &[f64], width: usize) -> String {
    let sets = [sorted(base), sorted(head)];
    if sets.iter().all(|s| s.is_empty()) {
        return String::new();
    }
    let inner = width.max(12) - 2;
    let summary: Vec<Option<(f64, f64, f64)>> = sets
        .iter()
        .map(|s| {
            let m = mean(s)?;
            let sd = std_dev(s, m).unwrap_or(0.0);
            Some((m, sd, median_sorted(s)?))
        })
        .collect();
    // Axis range: all points and all bars.
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (s, sum) in sets.iter().zip(&summary) {
        if let (Some(&first), Some(&last), Some((m, sd, _))) = (s.first(), s.last(), sum) {
            lo = lo.min(first).min(m - sd);
            hi = hi.max(last).max(m + sd);
        }
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return String::new();
    }
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.01 };
        lo -= pad;
        hi += pad;
    }
    let dx = (hi - lo) / (inner - 1) as f64;
    let col = |v: f64| (((v - lo) / dx).round().max(0.0) as usize).min(inner - 1);

    let counts: Vec<Vec<usize>> = sets
        .iter()
        .map(|s| {
            let mut c = vec![0usize; inner];
            for &v in s {
                c[col(v)] += 1;
            }
            c
        })
        .collect();
    let tallest = counts.iter().flatten().copied().max().unwrap_or(0);
    let rows = tallest.min(MAX_ROWS);
    let height = |c: usize| {
        if tallest <= MAX_ROWS || c == 0 {
            c
        } else {
            (c * MAX_ROWS).div_ceil(tallest)
        }
    };

    let mut out = String::new();
    let frame = format!("+{}+\n", "-".repeat(inner));
    out.push_str(&frame);
    for r in (0..rows).rev() {
        out.push('|');
        for (&cb, &ch) in counts[0].iter().zip(&counts[1]) {
            let (b, h) = (height(cb) > r, height(ch) > r);
            out.push(match (b, h) {
                (true, true) => '*',
                (true, false) => 'x',
                (false, true) => '+',
                (false, false) => ' ',
            });
        }
        out.push_str("|\n");
    }

    let mut bars: Vec<Vec<char>> = Vec::new();
    for sum in summary.iter().flatten() {
        let (m, sd, med) = *sum;
        let (from, to) = (col(m - sd), col(m + sd));
        let (cm, ca) = (col(med), col(m));
        let span = from.min(cm).min(ca)..=to.max(cm).max(ca);
        let row = match bars.iter().position(|b| span.clone().all(|c| b[c] == ' ')) {
            Some(i) => i,
            None => {
                bars.push(vec![' '; inner]);
                bars.len() - 1
            }
        };
        let bar = &mut bars[row];
        for cell in &mut bar[from..=to] {
            *cell = '_';
        }
        bar[from] = '|';
        bar[to] = '|';
        bar[cm] = 'M';
        bar[ca] = 'A';
    }
    for bar in bars {
        out.push('|');
        out.extend(bar);
        out.push_str("|\n");
    }
    out.push_str(&frame);
    out
}
