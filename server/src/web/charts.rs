//! Geometry of the server-rendered SVG charts: a strip (dot) plot of base and head samples with
//! box and median markers, and their empirical CDFs. Templates draw these numbers; no script
//! and no external chart code is involved.

use compare::Describe;

/// Drawing width in SVG units (the SVG scales to its container).
pub const WIDTH: f64 = 640.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
/// Dots drawn per side at most; larger samples are shown by evenly spaced quantiles.
const MAX_DOTS: usize = 400;
/// Steps of an ECDF path at most.
const MAX_STEPS: usize = 300;

/// A tick on the value axis.
#[derive(Debug, Clone)]
pub struct Tick {
    pub x: f64,
    pub label: String,
}

/// One side's lane in the strip plot.
#[derive(Debug, Clone)]
pub struct Lane {
    /// `base` or `head` (also the CSS class suffix).
    pub side: &'static str,
    pub name: String,
    /// Centre line of the lane.
    pub y: f64,
    /// (cx, cy) of each dot.
    pub dots: Vec<(f64, f64)>,
    /// Quartile box, median and whiskers (min..max), when defined.
    pub q1: f64,
    pub q3: f64,
    pub med: f64,
    pub lo: f64,
    pub hi: f64,
    pub has_box: bool,
    /// Dots are quantiles of a larger sample.
    pub thinned: bool,
}

impl Lane {
    /// The dots as one SVG path of zero-length segments drawn with round caps: a tenth of the
    /// bytes of as many `<circle>` elements.
    pub fn dots_path(&self) -> String {
        let mut d = String::with_capacity(self.dots.len() * 14);
        for (x, y) in &self.dots {
            d.push_str(&format!("M{x} {y}h0"));
        }
        d
    }
}

/// The strip plot.
#[derive(Debug, Clone)]
pub struct Strip {
    pub w: f64,
    pub h: f64,
    pub axis_y: f64,
    pub ticks: Vec<Tick>,
    pub lanes: Vec<Lane>,
    pub x0: f64,
    pub x1: f64,
}

/// The ECDF plot.
#[derive(Debug, Clone)]
pub struct Ecdf {
    pub w: f64,
    pub h: f64,
    pub top: f64,
    pub bottom: f64,
    pub x0: f64,
    pub x1: f64,
    pub ticks: Vec<Tick>,
    /// (side, SVG path) per side.
    pub paths: Vec<(&'static str, String)>,
}

/// Linear map from values to x.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
}

impl Scale {
    fn new(values: impl Iterator<Item = f64>) -> Option<Scale> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return None;
        }
        let span = hi - lo;
        let pad = if span > 0.0 {
            span * 0.05
        } else if lo != 0.0 {
            lo.abs() * 0.05
        } else {
            1.0
        };
        Some(Scale {
            lo: lo - pad,
            hi: hi + pad,
        })
    }

    fn x(&self, v: f64) -> f64 {
        round1(LEFT + (v - self.lo) / (self.hi - self.lo) * (WIDTH - LEFT - RIGHT))
    }

    /// About five ticks at 1/2/5 x 10^k steps.
    fn ticks(&self, unit: &str) -> Vec<Tick> {
        let raw = (self.hi - self.lo) / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let mut out = Vec::new();
        let mut t = (self.lo / step).ceil() * step;
        while t <= self.hi && out.len() < 12 {
            // Snap values like 0.30000000000000004 for the label.
            let v = (t / step).round() * step;
            out.push(Tick {
                x: self.x(v),
                label: crate::format::human(v, unit),
            });
            t += step;
        }
        out
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Evenly spaced order statistics: at most `max` (value, rank) pairs of sorted values.
fn thin(sorted: &[f64], max: usize) -> Vec<(f64, usize)> {
    if sorted.len() <= max {
        return sorted.iter().copied().zip(0..).collect();
    }
    (0..max)
        .map(|j| {
            let k = (j as f64 * (sorted.len() - 1) as f64 / (max - 1) as f64).round() as usize;
            (sorted[k], k)
        })
        .collect()
}

fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    s
}

/// Deterministic vertical jitter in [-1, 1] so equal values stay visible.
fn jitter(i: usize) -> f64 {
    let h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
    (h as f64 / (1u64 << 24) as f64) * 2.0 - 1.0
}

/// The strip plot of both samples; `None` when neither has a finite value.
pub fn strip(
    base: &[f64],
    head: &[f64],
    base_d: &Describe,
    head_d: &Describe,
    names: (&str, &str),
    unit: &str,
) -> Option<Strip> {
    let scale = Scale::new(base.iter().chain(head.iter()).copied())?;
    let lane_h = 44.0;
    let mut lanes = Vec::new();
    for (i, (side, name, values, d)) in [
        ("base", names.0, base, base_d),
        ("head", names.1, head, head_d),
    ]
    .into_iter()
    .enumerate()
    {
        let y = 14.0 + lane_h / 2.0 + i as f64 * lane_h;
        let s = sorted(values);
        let dots = thin(&s, MAX_DOTS)
            .into_iter()
            .enumerate()
            .map(|(j, (v, _))| (scale.x(v), round1(y + jitter(j) * 12.0)))
            .collect();
        let has_box = d.p25.is_some() && d.median.is_some() && d.p75.is_some();
        let x = |v: Option<f64>| v.map(|v| scale.x(v)).unwrap_or(0.0);
        lanes.push(Lane {
            side,
            name: name.to_string(),
            y,
            dots,
            q1: x(d.p25),
            q3: x(d.p75),
            med: x(d.median),
            lo: x(d.min),
            hi: x(d.max),
            has_box,
            thinned: s.len() > MAX_DOTS,
        });
    }
    let axis_y = 14.0 + 2.0 * lane_h + 6.0;
    Some(Strip {
        w: WIDTH,
        h: axis_y + 22.0,
        axis_y,
        ticks: scale.ticks(unit),
        lanes,
        x0: LEFT,
        x1: WIDTH - RIGHT,
    })
}

/// Both empirical CDFs on the same axis; `None` when neither has a finite value.
pub fn ecdf(base: &[f64], head: &[f64], unit: &str) -> Option<Ecdf> {
    let scale = Scale::new(base.iter().chain(head.iter()).copied())?;
    let (top, bottom) = (10.0, 150.0);
    let y = |p: f64| round1(bottom - p * (bottom - top));
    let mut paths = Vec::new();
    for (side, values) in [("base", base), ("head", head)] {
        let s = sorted(values);
        if s.is_empty() {
            continue;
        }
        let n = s.len() as f64;
        let mut d = format!("M{} {}", LEFT, y(0.0));
        for (v, k) in thin(&s, MAX_STEPS) {
            let x = scale.x(v);
            // Horizontal to the value at the previous level, then up to its cumulative share.
            d.push_str(&format!(" H{x} V{}", y((k + 1) as f64 / n)));
        }
        d.push_str(&format!(" H{}", WIDTH - RIGHT));
        paths.push((side, d));
    }
    Some(Ecdf {
        w: WIDTH,
        h: bottom + 24.0,
        top,
        bottom,
        x0: LEFT,
        x1: WIDTH - RIGHT,
        ticks: scale.ticks(unit),
        paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(v: &[f64]) -> Describe {
        compare::describe(v)
    }

    #[test]
    fn strip_places_values_on_one_axis() {
        let b = [1.0, 2.0, 3.0];
        let h = [2.0, 3.0, 4.0];
        let s = strip(&b, &h, &describe(&b), &describe(&h), ("A", "B"), "s").unwrap();
        assert_eq!(s.lanes.len(), 2);
        // 1..4 padded by 5% of 3 on both sides: 0.85..4.15 over 56..624.
        let x = |v: f64| round1(56.0 + (v - 0.85) / 3.3 * 568.0);
        assert_eq!(s.lanes[0].dots[0].0, x(1.0));
        assert_eq!(s.lanes[1].dots[2].0, x(4.0));
        assert_eq!(s.lanes[0].med, x(2.0));
        assert_eq!(s.lanes[1].med, x(3.0));
        assert!(s.lanes.iter().all(|l| l.has_box && !l.thinned));
        assert_eq!(
            s.lanes[0].dots_path().matches("h0").count(),
            3,
            "{}",
            s.lanes[0].dots_path()
        );
        // Ticks at 1, 2, 3, 4 seconds (step 1 for a span of 3.3).
        let labels: Vec<&str> = s.ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["1 s", "2 s", "3 s", "4 s"]);
    }

    #[test]
    fn large_samples_are_thinned() {
        let b: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let s = strip(&b, &b, &describe(&b), &describe(&b), ("A", "B"), "count").unwrap();
        assert_eq!(s.lanes[0].dots.len(), MAX_DOTS);
        assert!(s.lanes[0].thinned);
        let e = ecdf(&b, &b, "count").unwrap();
        assert_eq!(e.paths[0].1.matches(" V").count(), MAX_STEPS);
        assert!(e.paths[0].1.ends_with(" H624"));
    }

    #[test]
    fn ecdf_steps_reach_one() {
        let e = ecdf(&[1.0, 2.0], &[3.0], "s").unwrap();
        // base: 0 -> 0.5 at 1, -> 1 at 2 (y 150 -> 80 -> 10).
        assert!(e.paths[0].1.contains("V80 "));
        assert!(e.paths[0].1.contains("V10 "));
        assert!(e.paths[1].1.contains("V10 "));
    }

    #[test]
    fn constant_and_empty_samples() {
        let c = [5.0, 5.0, 5.0];
        assert!(strip(&c, &c, &describe(&c), &describe(&c), ("A", "B"), "s").is_some());
        assert!(ecdf(&[], &[], "s").is_none());
        assert!(thin(&[], 10).is_empty());
    }
}
