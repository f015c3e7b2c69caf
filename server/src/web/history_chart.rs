//! Geometry of the history charts: every run's samples as dots over the builds in branch order,
//! the per-build median line and interquartile band, and the change points; also the
//! sparklines of a benchmark's small multiples. Templates draw these numbers; no script.

use crate::history::Loaded;
use crate::history::aggregate::BuildSummary;

const LEFT: f64 = 84.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 28.0;

/// One build's column: its dots link to its runs.
#[derive(Debug, Clone)]
pub struct Column {
    pub x: f64,
    pub label: String,
    /// (run id, dots of that run as (x, y)).
    pub runs: Vec<(i64, Vec<(f64, f64)>)>,
    pub title: String,
}

/// A change point drawn as a vertical line between two builds.
#[derive(Debug, Clone)]
pub struct Mark {
    pub x: f64,
    pub title: String,
    pub regression: bool,
}

/// A y-axis tick.
#[derive(Debug, Clone)]
pub struct Tick {
    pub y: f64,
    pub label: String,
}

/// The chart of one history.
#[derive(Debug, Clone)]
pub struct Chart {
    pub w: f64,
    pub h: f64,
    pub columns: Vec<Column>,
    /// `points` attribute of the median polyline.
    pub median: String,
    /// `points` attribute of the interquartile band polygon.
    pub band: String,
    pub marks: Vec<Mark>,
    pub ticks: Vec<Tick>,
    pub bottom: f64,
}

/// A change point to mark: first position of the new regime, text, whether it is a regression.
pub type MarkSpec = (i64, String, bool);

/// Lays out `loaded` with its per-build summaries in a `w` x `h` box.
pub fn chart(
    loaded: &Loaded,
    summaries: &[BuildSummary],
    marks: &[MarkSpec],
    w: f64,
    h: f64,
) -> Chart {
    let unit = loaded.unit().to_string();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in loaded.flat().1 {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if hi - lo < f64::EPSILON * hi.abs().max(1.0) {
        let pad = lo.abs().max(1.0) * 0.01;
        lo -= pad;
        hi += pad;
    }
    let plot_w = w - LEFT - RIGHT;
    let plot_h = h - TOP - BOTTOM;
    let n = summaries.len().max(1);
    let xi = |i: usize| LEFT + plot_w * (i as f64 + 0.5) / n as f64;
    let y = |v: f64| TOP + plot_h * (1.0 - (v - lo) / (hi - lo));
    let index: std::collections::HashMap<i64, usize> = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| (s.position, i))
        .collect();
    let mut columns: Vec<Column> = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| Column {
            x: xi(i),
            label: String::new(),
            runs: Vec::new(),
            title: format!(
                "median {} (IQR {} to {}), {}",
                crate::format::human(s.median, &unit),
                crate::format::human(s.q1, &unit),
                crate::format::human(s.q3, &unit),
                crate::format::count(s.n, "sample")
            ),
        })
        .collect();
    // Repeated samples of one run spread a little sideways so they stay visible.
    let spread = (plot_w / n as f64 * 0.3).min(6.0);
    for (p, vals) in loaded.points().iter().zip(loaded.values()) {
        let Some(&i) = index.get(&p.position) else {
            continue;
        };
        let c = &mut columns[i];
        c.label = p.label.clone();
        let k = vals.len().max(1) as f64;
        let dots = vals
            .iter()
            .enumerate()
            .map(|(j, v)| (c.x + spread * ((j as f64 + 0.5) / k - 0.5), y(*v)))
            .collect();
        c.runs.push((p.run_id, dots));
    }
    let median = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{:.1},{:.1}", xi(i), y(s.median)))
        .collect::<Vec<_>>()
        .join(" ");
    let upper = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{:.1},{:.1}", xi(i), y(s.q3)));
    let lower = summaries
        .iter()
        .enumerate()
        .rev()
        .map(|(i, s)| format!("{:.1},{:.1}", xi(i), y(s.q1)));
    let band = upper.chain(lower).collect::<Vec<_>>().join(" ");
    let marks = marks
        .iter()
        .filter_map(|(pos, title, regression)| {
            let i = *index.get(pos)?;
            Some(Mark {
                x: xi(i) - plot_w / n as f64 / 2.0,
                title: title.clone(),
                regression: *regression,
            })
        })
        .collect();
    let ticks = (0..=4)
        .map(|k| {
            let v = lo + (hi - lo) * k as f64 / 4.0;
            Tick {
                y: y(v),
                label: crate::format::human(v, &unit),
            }
        })
        .collect();
    Chart {
        w,
        h,
        columns,
        median,
        band,
        marks,
        ticks,
        bottom: h - BOTTOM,
    }
}

/// A sparkline: the per-build medians as a polyline in a `w` x `h` box, and the x of marks.
pub fn sparkline(summaries: &[BuildSummary], marks: &[i64], w: f64, h: f64) -> (String, Vec<f64>) {
    let (lo, hi) = summaries
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), s| {
            (l.min(s.median), h.max(s.median))
        });
    let span = if hi > lo { hi - lo } else { 1.0 };
    let n = summaries.len().max(2) - 1;
    let x = |i: usize| 2.0 + (w - 4.0) * i as f64 / n as f64;
    let points = summaries
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "{:.1},{:.1}",
                x(i),
                2.0 + (h - 4.0) * (1.0 - (s.median - lo) / span)
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let xs = marks
        .iter()
        .filter_map(|p| summaries.iter().position(|s| s.position == *p).map(x))
        .collect();
    (points, xs)
}
