//! Change-point detection: known answers on constructed series, and the incremental history
//! agreeing with a full analysis.

use compare::Direction;
use compare::changepoint::{
    DetectError, DetectSettings, History, SeriesAnalysis, analyse, detect, detect_many,
};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Deterministic noise for constructed series.
pub struct Noise(Pcg64);

impl Noise {
    pub fn new(seed: u64) -> Self {
        Self(Pcg64::seed_from_u64(seed))
    }

    fn uniform(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Lognormal with log-scale deviation `s`, centred to mean 1.
    pub fn lognormal(&mut self, s: f64) -> f64 {
        (s * self.normal() - s * s / 2.0).exp()
    }
}

/// A series of `levels.len()` builds with `runs` runs each: level * (1 + noise * N(0,1)).
pub fn series(levels: &[f64], runs: usize, noise: f64, seed: u64) -> (Vec<i64>, Vec<f64>) {
    let mut rng = Noise::new(seed);
    let (mut p, mut v) = (Vec::new(), Vec::new());
    for (b, level) in levels.iter().enumerate() {
        for _ in 0..runs {
            p.push(b as i64);
            v.push(level * (1.0 + noise * rng.normal()));
        }
    }
    (p, v)
}

/// Levels with a jump to `level * (1 + step)` at each position in `at`.
pub fn steps(len: usize, at: &[usize], step: f64) -> Vec<f64> {
    (0..len)
        .map(|b| 100.0 * (1.0 + step).powi(at.iter().filter(|&&s| b >= s).count() as i32))
        .collect()
}

fn positions(a: &SeriesAnalysis) -> Vec<i64> {
    a.change_points.iter().map(|c| c.position).collect()
}

fn settings() -> DetectSettings {
    DetectSettings::default()
}

#[test]
fn one_step_is_found_where_it_is_with_its_size() {
    let (p, v) = series(&steps(60, &[30], 0.10), 3, 0.01, 1);
    let a = detect(&p, &v, &settings()).unwrap();
    assert_eq!(a.change_points.len(), 1, "{:?}", positions(&a));
    let c = &a.change_points[0];
    assert!((c.position - 30).abs() <= 2, "found at {}", c.position);
    assert_eq!(c.build_before, c.position - 1);
    assert!((c.before.median - 100.0).abs() < 1.5, "{}", c.before.median);
    assert!((c.after.median - 110.0).abs() < 1.5, "{}", c.after.median);
    assert!((c.change_pct - 10.0).abs() < 1.5, "{}", c.change_pct);
    assert!(c.interval.low_pct < 10.0 && 10.0 < c.interval.high_pct);
    assert!(c.interval.low_pct > 8.0 && c.interval.high_pct < 12.0);
    assert!(c.p < 1e-6 && c.q >= c.p, "p {} q {}", c.p, c.q);
    assert_eq!(c.before.builds + c.after.builds, 60);
    assert_eq!(c.before.n + c.after.n, 180);
    assert_eq!(c.kind(Direction::LowerIsBetter), "regression");
    assert_eq!(c.kind(Direction::HigherIsBetter), "improvement");
}

#[test]
fn a_noiseless_step_is_exact_and_certain() {
    let levels = steps(60, &[30], 0.05);
    let p: Vec<i64> = (0..60).collect();
    let a = detect(&p, &levels, &settings()).unwrap();
    assert_eq!(positions(&a), vec![30]);
    assert!(a.change_points[0].p < 1e-100);
    assert_eq!(a.change_points[0].before.median, 100.0);
    assert_eq!(a.change_points[0].after.median, 105.0);
}

#[test]
fn two_steps_are_two_change_points() {
    let (p, v) = series(&steps(120, &[40, 80], -0.08), 2, 0.01, 2);
    let a = detect(&p, &v, &settings()).unwrap();
    let found = positions(&a);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        (found[0] - 40).abs() <= 2 && (found[1] - 80).abs() <= 2,
        "{found:?}"
    );
    assert!(a.change_points.iter().all(|c| c.change_pct < -5.0));
    // The segments chain: the first one's after is the second one's before.
    assert_eq!(a.change_points[0].after, a.change_points[1].before);
}

#[test]
fn a_step_in_a_long_series_crosses_windows() {
    let (p, v) = series(&steps(500, &[137, 360], 0.03), 3, 0.01, 3);
    let a = detect(&p, &v, &settings()).unwrap();
    let found = positions(&a);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        (found[0] - 137).abs() <= 5 && (found[1] - 360).abs() <= 5,
        "{found:?}"
    );
}

#[test]
fn constant_input_has_no_change_points() {
    let p: Vec<i64> = (0..200).flat_map(|b| [b, b]).collect();
    for value in [1.0, 0.0, -3.5, 1e9] {
        let v = vec![value; p.len()];
        assert!(
            detect(&p, &v, &settings())
                .unwrap()
                .change_points
                .is_empty()
        );
    }
}

#[test]
fn one_outlier_build_is_not_a_change_point() {
    let mut levels = vec![100.0; 80];
    levels[40] = 160.0;
    levels[2] = 40.0;
    let (p, v) = series(&levels, 3, 0.01, 4);
    let a = detect(&p, &v, &settings()).unwrap();
    assert!(a.change_points.is_empty(), "{:?}", positions(&a));
}

#[test]
fn run_order_in_the_input_does_not_matter() {
    let (p, v) = series(&steps(60, &[25], 0.05), 3, 0.01, 5);
    let mut rows: Vec<(i64, f64)> = p.into_iter().zip(v).collect();
    let sorted = detect(
        &rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        &settings(),
    )
    .unwrap();
    rows.reverse();
    rows.rotate_left(17);
    let shuffled = detect(
        &rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        &rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        &settings(),
    )
    .unwrap();
    assert_eq!(positions(&sorted), positions(&shuffled));
    assert_eq!(positions(&sorted).len(), 1);
}

#[test]
fn gaps_in_positions_are_reported_as_given() {
    let levels = steps(40, &[20], 0.2);
    let p: Vec<i64> = (0..40).map(|b| b * 10).collect();
    let a = detect(&p, &levels, &settings()).unwrap();
    assert_eq!(positions(&a), vec![200]);
    assert_eq!(a.change_points[0].build_before, 190);
    assert_eq!(a.change_points[0].build_index, 20);
}

#[test]
fn negative_values_are_analysed_on_the_raw_scale() {
    let (p, v) = series(&steps(60, &[30], 0.10), 2, 0.01, 6);
    let v: Vec<f64> = v.iter().map(|x| x - 150.0).collect();
    let a = detect(&p, &v, &settings()).unwrap();
    assert_eq!(a.change_points.len(), 1);
    let c = &a.change_points[0];
    assert!((c.position - 30).abs() <= 2);
    // -50 to -40: up by 10 units, 20% of |-50|.
    assert!((c.change_pct - 20.0).abs() < 3.0, "{}", c.change_pct);
}

#[test]
fn bad_input_is_an_error() {
    assert_eq!(
        analyse(&[0, 1], &[1.0], &settings()),
        Err(DetectError::Length {
            positions: 2,
            values: 1
        })
    );
    assert_eq!(
        analyse(&[0, 1, 2], &[1.0, f64::NAN, 2.0], &settings()),
        Err(DetectError::NotFinite { index: 1 })
    );
    assert!(
        analyse(&[], &[], &settings())
            .unwrap()
            .change_points
            .is_empty()
    );
}

#[test]
fn q_values_grow_with_the_number_of_series() {
    let step = series(&steps(60, &[30], 0.03), 1, 0.01, 7);
    let noise: Vec<_> = (0..300)
        .map(|s| series(&[100.0; 60], 1, 0.01, 100 + s))
        .collect();
    let alone = detect(&step.0, &step.1, &settings()).unwrap();
    let all = detect_many(
        std::iter::once((step.0.as_slice(), step.1.as_slice()))
            .chain(noise.iter().map(|(p, v)| (p.as_slice(), v.as_slice()))),
        &settings(),
    )
    .unwrap();
    let (c1, c2) = (&alone.change_points[0], &all[0].change_points[0]);
    assert_eq!(c1.p, c2.p);
    assert!(c2.q > c1.q, "q alone {} among 301 series {}", c1.q, c2.q);
    // Every kept change point passes the false discovery rate, and noise raises at most a few.
    assert!(
        all.iter()
            .flat_map(|a| &a.change_points)
            .all(|c| c.q <= 0.05)
    );
    let false_alarms: usize = all[1..].iter().map(|a| a.change_points.len()).sum();
    assert!(
        false_alarms <= 2,
        "{false_alarms} false alarms in 300 series"
    );
}

#[test]
fn history_run_by_run_agrees_with_a_full_analysis() {
    let (p, v) = series(&steps(160, &[70, 130], 0.05), 2, 0.01, 8);
    let start = 100;
    let mut h = History::new(&p[..start], &v[..start], settings()).unwrap();
    for i in start..p.len() {
        let updated = h.push(p[i], v[i]).unwrap().clone();
        let full = analyse(&p[..=i], &v[..=i], &settings()).unwrap();
        assert_eq!(updated, full, "after {} runs", i + 1);
    }
    assert_eq!(h.builds(), 160);
    assert_eq!(positions(h.analysis()).len(), 2);
}

#[test]
fn history_falls_back_to_a_full_analysis_out_of_order() {
    let (p, v) = series(&steps(80, &[40], 0.05), 2, 0.01, 9);
    let mut h = History::new(&p[2..], &v[2..], settings()).unwrap();
    // Runs of build 0 arrive last, and a zero forces the raw scale.
    h.push(p[0], v[0]).unwrap();
    h.push(p[1], 0.0).unwrap();
    let mut v2 = v.clone();
    v2[1] = 0.0;
    let mut rows: Vec<(i64, f64)> = p[2..]
        .iter()
        .copied()
        .zip(v2[2..].iter().copied())
        .collect();
    rows.push((p[0], v2[0]));
    rows.push((p[1], v2[1]));
    let (pp, vv): (Vec<i64>, Vec<f64>) = rows.into_iter().unzip();
    assert_eq!(h.analysis(), &analyse(&pp, &vv, &settings()).unwrap());
    assert!(h.push(90, f64::INFINITY).is_err());
}
