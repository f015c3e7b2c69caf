//! Properties of change-point detection over random series: constant and pure-noise input
//! raise no more change points than the expected rate, an outlier build alone is never one,
//! steps under skewed (lognormal) noise are still found, the unit of the values changes nothing,
//! and a history fed run by run agrees with a full analysis.

use compare::changepoint::{DetectSettings, History, analyse, detect, detect_many};
use proptest::prelude::*;

use super::changepoint::{Noise, series, steps};

fn layout() -> impl Strategy<Value = (usize, usize, f64, u64)> {
    // Builds, runs per build, relative noise, seed.
    (50usize..300, 1usize..=5, 0.005f64..0.03, any::<u64>())
}

proptest! {
    // Rates are probabilistic (a few percent of noise batches may alarm by design): a fixed seed
    // keeps the run reproducible instead of failing once in a while.
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20261201),
        ..ProptestConfig::default()
    })]

    #[test]
    fn constant_input_never_changes(len in 1usize..400, runs in 1usize..5, value in -1e6f64..1e6) {
        let p: Vec<i64> = (0..len as i64).flat_map(|b| std::iter::repeat_n(b, runs)).collect();
        let v = vec![value; p.len()];
        prop_assert!(detect(&p, &v, &DetectSettings::default()).unwrap().change_points.is_empty());
    }

    /// Twenty pure-noise series analysed together (Benjamini-Hochberg across them): under no
    /// change at all, the false discovery rate bounds the chance of any alarm by 5%, so more
    /// than one alarm in a batch is far outside the expected rate.
    #[test]
    fn pure_noise_raises_at_most_the_expected_rate((len, runs, noise, seed) in layout()) {
        let batch: Vec<_> = (0..20)
            .map(|i| series(&vec![100.0; len], runs, noise, seed.wrapping_add(i)))
            .collect();
        let all = detect_many(
            batch.iter().map(|(p, v)| (p.as_slice(), v.as_slice())),
            &DetectSettings::default(),
        ).unwrap();
        let alarms: usize = all.iter().map(|a| a.change_points.len()).sum();
        prop_assert!(alarms <= 1, "{} alarms in 20 noise series", alarms);
    }

    /// One build far off (every run of it) in a flat series: no change point near it.
    #[test]
    fn an_outlier_build_alone_is_not_a_change_point(
        (len, runs, noise, seed) in layout(),
        at in 0.0f64..1.0,
        factor in prop_oneof![1.2f64..3.0, 0.3f64..0.8],
    ) {
        let mut levels = vec![100.0; len];
        let at = ((len - 1) as f64 * at) as usize;
        levels[at] *= factor;
        let (p, v) = series(&levels, runs, noise, seed);
        let a = detect(&p, &v, &DetectSettings::default()).unwrap();
        let near: Vec<i64> = a.change_points.iter().map(|c| c.position)
            .filter(|&c| (c - at as i64).abs() <= 3).collect();
        prop_assert!(near.is_empty(), "outlier at {} gave change points {:?}", at, near);
    }

    /// Lognormal (skewed) noise: a 15% step is found, and no other change point.
    #[test]
    fn steps_are_found_in_lognormal_noise((len, runs, noise, seed) in layout(), at in 0.2f64..0.8) {
        let at = (len as f64 * at) as usize;
        let levels = steps(len, &[at], 0.15);
        let mut rng = Noise::new(seed);
        let (mut p, mut v) = (Vec::new(), Vec::new());
        for (b, level) in levels.iter().enumerate() {
            for _ in 0..runs {
                p.push(b as i64);
                v.push(level * rng.lognormal(noise));
            }
        }
        let a = detect(&p, &v, &DetectSettings::default()).unwrap();
        let found: Vec<i64> = a.change_points.iter().map(|c| c.position).collect();
        let tol = 2.max(len / 100) as i64;
        prop_assert!(found.len() == 1 && (found[0] - at as i64).abs() <= tol,
            "step at {}, found {:?}", at, found);
    }

    /// Positive values are analysed on a log scale: the unit (ns or s) changes nothing.
    #[test]
    fn change_points_do_not_depend_on_the_unit(
        (len, runs, noise, seed) in layout(), at in 0.2f64..0.8, step in 0.02f64..0.3,
        scale in prop_oneof![Just(1e-9), Just(1e3), 0.5f64..2.0],
    ) {
        let (p, v) = series(&steps(len, &[(len as f64 * at) as usize], step), runs, noise, seed);
        let scaled: Vec<f64> = v.iter().map(|x| x * scale).collect();
        let s = DetectSettings::default();
        let a: Vec<i64> = detect(&p, &v, &s).unwrap().change_points.iter().map(|c| c.position).collect();
        let b: Vec<i64> = detect(&p, &scaled, &s).unwrap().change_points.iter().map(|c| c.position).collect();
        prop_assert_eq!(a, b);
    }

    /// A history fed run by run ends where an analysis of the whole series ends.
    #[test]
    fn history_matches_a_full_analysis(
        (len, runs, noise, seed) in layout(), at in 0.2f64..0.8, tail in 1usize..40,
    ) {
        let (p, v) = series(&steps(len, &[(len as f64 * at) as usize], 0.05), runs, noise, seed);
        let start = p.len().saturating_sub(tail * runs);
        let mut h = History::new(&p[..start], &v[..start], DetectSettings::default()).unwrap();
        for i in start..p.len() {
            h.push(p[i], v[i]).unwrap();
        }
        prop_assert_eq!(h.analysis(), &analyse(&p, &v, &DetectSettings::default()).unwrap());
    }
}
