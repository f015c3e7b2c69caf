//! Properties over arbitrary samples: no panics, consistent orderings.

use compare::{
    Direction, Settings, benjamini_hochberg, compare_series, describe, finish, text_sketch,
};
use proptest::prelude::*;

/// Samples mixing tied integers, spread floats and values near 1e9.
fn samples(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec((0i32..6).prop_map(f64::from), 0..max_len),
        prop::collection::vec(-1e6f64..1e6, 0..max_len),
        prop::collection::vec((0.0f64..1.0).prop_map(|x| 1e9 + x), 0..max_len),
        prop::collection::vec(
            prop_oneof![Just(0.0), 1e-9f64..1e-3, 1e3f64..1e12],
            0..max_len
        ),
    ]
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![
        Just(Direction::LowerIsBetter),
        Just(Direction::HigherIsBetter),
        Just(Direction::Neutral)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn describe_is_ordered(xs in samples(60)) {
        let d = describe(&xs);
        prop_assert_eq!(d.n, xs.len());
        if let (Some(min), Some(p25), Some(med), Some(p75), Some(p90), Some(p99), Some(max)) =
            (d.min, d.p25, d.median, d.p75, d.p90, d.p99, d.max)
        {
            prop_assert!(min <= p25 && p25 <= med && med <= p75 && p75 <= p90 && p90 <= p99 && p99 <= max,
                "{:?}", d);
            let mean = d.mean.unwrap();
            prop_assert!(min <= mean && mean <= max, "{:?}", d);
        } else {
            prop_assert!(xs.is_empty());
        }
        prop_assert_eq!(d.std.is_some(), xs.len() >= 2);
        if let Some(sd) = d.std {
            prop_assert!(sd >= 0.0);
        }
    }

    #[test]
    fn comparisons_never_panic(
        items in prop::collection::vec((samples(40), samples(40), direction(), any::<bool>()), 1..6),
        big in samples(300),
    ) {
        let s = Settings::default();
        let mut out: Vec<_> = items.iter().map(|(b, h, d, cpu)| compare_series(b, h, *d, &s, *cpu)).collect();
        // One larger pair, past the size where pairwise differences are materialized.
        out.push(compare_series(&big, &big.iter().map(|x| x * 1.01).collect::<Vec<_>>(), Direction::Neutral, &s, false));
        for c in &out {
            if let Some(p) = c.p {
                prop_assert!((0.0..=1.0).contains(&p), "p = {}", p);
            }
            if let Some(d) = c.cliffs_delta {
                prop_assert!((-1.0..=1.0).contains(&d));
            }
            if let Some(ci) = &c.ci {
                prop_assert!(ci.low <= ci.high, "{:?}", ci);
            }
            if let (Some(hl), Some(bmin), Some(bmax), Some(hmin), Some(hmax)) =
                (&c.hodges_lehmann, c.base.min, c.base.max, c.head.min, c.head.max)
            {
                prop_assert!(hmin - bmax <= hl.shift && hl.shift <= hmax - bmin);
            }
        }
        let dirs: Vec<Direction> = items.iter().map(|i| i.2).chain([Direction::Neutral]).collect();
        finish(&mut out, |i| dirs[i], &s);
        for c in &out {
            match (c.p, c.q) {
                (Some(p), Some(q)) => prop_assert!(q >= p && q <= 1.0, "p {} q {}", p, q),
                (None, q) => prop_assert_eq!(q, None),
                (Some(_), None) => prop_assert!(false, "p without q"),
            }
        }
        for (b, h, _, _) in &items {
            let sketch = text_sketch(b, h, 50);
            prop_assert!(sketch.lines().all(|l| l.chars().count() == 50));
        }
    }

    #[test]
    fn q_values_bound_p_values(ps in prop::collection::vec(0.0f64..=1.0, 0..50)) {
        let qs = benjamini_hochberg(&ps);
        prop_assert_eq!(qs.len(), ps.len());
        for (i, (p, q)) in ps.iter().zip(&qs).enumerate() {
            prop_assert!(q >= p && *q <= 1.0);
            for (j, p2) in ps.iter().enumerate() {
                if p2 > p {
                    prop_assert!(qs[j] >= qs[i]);
                }
            }
        }
    }
}
