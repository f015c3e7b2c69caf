//! Properties over arbitrary samples: no panics, consistent orderings.

use compare::{
    Describe, Direction, SeriesComparison, Settings, benjamini_hochberg, compare_series, describe,
    finish, text_sketch,
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

/// Finite samples at the ends of the f64 range: near +-f64::MAX, 1e308, tiny, zero, ordinary.
fn extreme_samples(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    let value = prop_oneof![
        Just(f64::MAX),
        Just(-f64::MAX),
        Just(1e308),
        Just(-1e308),
        1e300f64..f64::MAX,
        -f64::MAX..-1e300f64,
        1e-320f64..1e-290,
        Just(0.0),
        -1e3f64..1e3,
    ];
    prop::collection::vec(value, 0..max_len)
}

/// Every number of a comparison, with its name.
fn numbers_of(c: &SeriesComparison) -> Vec<(String, f64)> {
    let side = |name: &str, d: &Describe| {
        let fields = [
            ("min", d.min),
            ("max", d.max),
            ("mean", d.mean),
            ("median", d.median),
            ("std", d.std),
            ("p25", d.p25),
            ("p75", d.p75),
            ("p90", d.p90),
            ("p99", d.p99),
            ("cv_pct", d.cv_pct),
        ];
        fields
            .into_iter()
            .filter_map(|(f, v)| v.map(|v| (format!("{name}.{f}"), v)))
            .collect::<Vec<_>>()
    };
    let mut out = side("base", &c.base);
    out.extend(side("head", &c.head));
    let mut add = |name: &str, v: Option<f64>| out.extend(v.map(|v| (name.to_string(), v)));
    add("change_pct", c.change_pct);
    add("ratio", c.ratio);
    add("ci.low", c.ci.as_ref().map(|ci| ci.low));
    add("ci.high", c.ci.as_ref().map(|ci| ci.high));
    add("ci.level", c.ci.as_ref().map(|ci| ci.level));
    add("mann_whitney.u", c.mann_whitney.as_ref().map(|m| m.u));
    add("mann_whitney.p", c.mann_whitney.as_ref().map(|m| m.p));
    add("welch.t", c.welch.as_ref().map(|w| w.t));
    add("welch.df", c.welch.as_ref().map(|w| w.df));
    add("welch.p", c.welch.as_ref().map(|w| w.p));
    add("hodges_lehmann", c.hodges_lehmann.as_ref().map(|h| h.shift));
    add("cliffs_delta", c.cliffs_delta);
    add("p", c.p);
    add("q", c.q);
    out
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
    fn extreme_finite_samples_give_finite_statistics(
        b in extreme_samples(40),
        h in extreme_samples(40),
    ) {
        let s = Settings::default();
        let mut items = vec![compare_series(&b, &h, Direction::LowerIsBetter, &s, false)];
        // Undefined statistics are None; none is NaN or infinite, before or after finish.
        for c in &items {
            for (name, v) in numbers_of(c) {
                prop_assert!(v.is_finite(), "{} = {} for {:?} vs {:?}", name, v, b, h);
            }
        }
        items.push(compare_series(&h, &b, Direction::Neutral, &s, false));
        finish(&mut items, |_| Direction::Neutral, &s);
        for c in &items {
            for (name, v) in numbers_of(c) {
                prop_assert!(v.is_finite(), "{} = {} after finish", name, v);
            }
        }
        // Within +-1e308 the mean, the standard deviation and every percentile are representable,
        // so they must be given, and lie in [min, max].
        for xs in [&b, &h] {
            if xs.is_empty() || xs.iter().any(|x| x.abs() > 1e308) {
                continue;
            }
            let d = describe(xs);
            let (min, max) = (d.min.unwrap(), d.max.unwrap());
            for v in [d.mean, d.median, d.p25, d.p75, d.p90, d.p99] {
                let v = v.unwrap();
                prop_assert!(min <= v && v <= max, "{} outside [{}, {}]: {:?}", v, min, max, d);
            }
            prop_assert_eq!(d.std.is_some(), xs.len() >= 2, "{:?}", d);
        }
        let sketch = text_sketch(&b, &h, 50);
        prop_assert!(sketch.lines().all(|l| l.chars().count() == 50));
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

#[test]
fn samples_of_1e308_give_finite_statistics() {
    // Sums and squares of these overflow f64: the statistics scale them first.
    let base = [1e308, 1.2e308, 0.9e308, 1.1e308, 1e308];
    let head = [-1e308, 1.5e308, 1.7e308, -1.6e308, 1.3e308, 1.4e308];
    let c = compare_series(
        &base,
        &head,
        Direction::LowerIsBetter,
        &Settings::default(),
        false,
    );
    for (name, v) in numbers_of(&c) {
        assert!(v.is_finite(), "{name} = {v}");
    }
    // numpy: mean 1.04e308, std(ddof=1) 1.1401754250991379e307.
    let b = &c.base;
    assert!(
        (b.mean.unwrap() - 1.04e308).abs() <= 1e-15 * 1.04e308,
        "{b:?}"
    );
    assert!(
        (b.std.unwrap() / 1.1401754250991379e307 - 1.0).abs() < 1e-12,
        "{b:?}"
    );
    // scipy on the same values divided by 1e308 (t, df and p do not depend on the unit):
    // head mean 0.55, std 1.4515508947329405, ttest_ind(head, base, equal_var=False) t =
    // -0.8238300425104722, df 5.073965327622265, p 0.4470167287050428; numpy's median of the
    // pairwise differences 0.3.
    let h = &c.head;
    assert!((h.mean.unwrap() / 0.55e308 - 1.0).abs() < 1e-12, "{h:?}");
    assert!(
        (h.std.unwrap() / 1.4515508947329405e308 - 1.0).abs() < 1e-12,
        "{h:?}"
    );
    let welch = c.welch.as_ref().expect("defined");
    assert!(
        (welch.t / -0.8238300425104722 - 1.0).abs() < 1e-9,
        "{welch:?}"
    );
    assert!(
        (welch.df / 5.073965327622265 - 1.0).abs() < 1e-9,
        "{welch:?}"
    );
    assert!(
        (welch.p / 0.4470167287050428 - 1.0).abs() < 1e-9,
        "{welch:?}"
    );
    // The Hodges-Lehmann shift, from differences up to 3.3e308: computed on halves.
    let shift = c.hodges_lehmann.as_ref().expect("defined").shift;
    assert!((shift / 0.3e308 - 1.0).abs() < 1e-12, "{shift}");
    assert!(c.ci.is_some());
}
