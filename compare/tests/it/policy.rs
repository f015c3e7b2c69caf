//! The verdict policy on real series and on constructed cases.

use compare::{
    Direction, Flag, SeriesComparison, Settings, TestUsed, Verdict, benjamini_hochberg,
    compare_series, finish, summary_only, text_sketch,
};

use crate::assert_close;

/// Seed 000, `time` of an idle system: real seconds with the commit reverted and with it.
const IDLE_BASE: [f64; 3] = [35.320, 35.687, 35.920];
const IDLE_HEAD: [f64; 3] = [49.393, 49.632, 49.359];
/// Seed 004, trace_stat hit counts per CPU.
const HITS_BASE: [f64; 4] = [838746.0, 841768.0, 828243.0, 810258.0];
const HITS_HEAD: [f64; 4] = [302373.0, 307174.0, 250910.0, 279902.0];

fn settings() -> Settings {
    Settings::default()
}

#[test]
fn idle_real_time_is_a_regression_by_welch() {
    let c = compare_series(
        &IDLE_BASE,
        &IDLE_HEAD,
        Direction::LowerIsBetter,
        &settings(),
        false,
    );
    assert_eq!(c.verdict, Verdict::Regression);
    assert_eq!(c.test, TestUsed::Welch);
    assert!(c.flags.contains(&Flag::WelchFallback), "{:?}", c.flags);
    assert!(!c.flags.contains(&Flag::PerCpu));
    // scipy.stats.ttest_ind(base, head, equal_var=False): p = 8.216088250788639e-06.
    assert_close("p", c.p.unwrap(), 8.216088250788639e-06, 1e-9);
    assert_eq!(c.q, c.p);
    // Exact Mann-Whitney of 3 vs 3 cannot go below 0.1: it is reported, not used.
    assert_close("MW p", c.mann_whitney.as_ref().unwrap().p, 0.1, 1e-12);
    assert_close(
        "change",
        c.change_pct.unwrap(),
        (49.393 / 35.687 - 1.0) * 100.0,
        1e-12,
    );
    assert_close("ratio", c.ratio.unwrap(), 49.393 / 35.687, 1e-12);
    // The 5th of the 9 pairwise differences.
    assert_close(
        "HL",
        c.hodges_lehmann.as_ref().unwrap().shift,
        49.632 - 35.920,
        1e-12,
    );
    assert_eq!(c.cliffs_delta, Some(1.0));
    let ci = c.ci.as_ref().unwrap();
    assert_eq!(ci.method, "hodges_lehmann_exact");
    // 3 vs 3: the widest interval, min and max pairwise difference, at 90%.
    assert_close("ci low", ci.low, (49.359 - 35.920) / 35.687 * 100.0, 1e-12);
    assert_close(
        "ci high",
        ci.high,
        (49.632 - 35.320) / 35.687 * 100.0,
        1e-12,
    );
    assert_close("ci level", ci.level, 0.9, 1e-12);
}

#[test]
fn per_cpu_hits_decrease() {
    let c = compare_series(
        &HITS_BASE,
        &HITS_HEAD,
        Direction::Neutral,
        &settings(),
        true,
    );
    assert_eq!(c.verdict, Verdict::Decrease);
    assert!(c.flags.contains(&Flag::PerCpu), "{:?}", c.flags);
    assert!(!c.flags.contains(&Flag::WelchFallback));
    // 4 vs 4 reaches 2/70 < 0.05: Mann-Whitney, exact, U = 16 (every base above every head).
    assert_eq!(c.test, TestUsed::MannWhitney);
    let mw = c.mann_whitney.as_ref().unwrap();
    assert_eq!((mw.u, mw.method.as_str()), (16.0, "exact"));
    assert_close("p", c.p.unwrap(), 2.0 / 70.0, 1e-12);
    assert_close(
        "change",
        c.change_pct.unwrap(),
        (291137.5 / 833494.5 - 1.0) * 100.0,
        1e-12,
    );
    assert_eq!(c.cliffs_delta, Some(-1.0));
}

#[test]
fn too_few_runs_are_not_enough_data() {
    let c = compare_series(
        &[35.32, 35.687],
        &IDLE_HEAD,
        Direction::LowerIsBetter,
        &settings(),
        false,
    );
    assert_eq!(c.verdict, Verdict::NotEnoughData);
    assert_eq!((c.p, c.q, c.test), (None, None, TestUsed::None));
    assert!(c.mann_whitney.is_none() && c.welch.is_none());
    assert_close(
        "ratio",
        c.ratio.unwrap(),
        49.393 / ((35.32 + 35.687) / 2.0),
        1e-12,
    );
    assert_eq!(c.base.n, 2);
    // finish leaves it alone.
    let mut items = vec![c.clone()];
    finish(&mut items, |_| Direction::LowerIsBetter, &settings());
    assert_eq!(items[0], c);

    let empty = compare_series(
        &[],
        &[1.0, 2.0, 3.0],
        Direction::Neutral,
        &settings(),
        false,
    );
    assert_eq!(empty.verdict, Verdict::NotEnoughData);
    assert_eq!(
        (empty.ratio, empty.change_pct, empty.base.mean),
        (None, None, None)
    );
}

fn steady(center: f64, n: usize) -> Vec<f64> {
    // Deterministic spread of +-0.1% around the centre, no ties.
    (0..n)
        .map(|i| center * (1.0 + ((i * 7 % n) as f64 / n as f64 - 0.5) * 0.002))
        .collect()
}

#[test]
fn directions_and_threshold() {
    let s = settings();
    let base = steady(100.0, 12);
    let up = steady(105.0, 12);
    let down = steady(95.0, 12);
    let cases = [
        (&up, Direction::LowerIsBetter, Verdict::Regression),
        (&down, Direction::LowerIsBetter, Verdict::Improvement),
        (&up, Direction::HigherIsBetter, Verdict::Improvement),
        (&down, Direction::HigherIsBetter, Verdict::Regression),
        (&up, Direction::Neutral, Verdict::Increase),
        (&down, Direction::Neutral, Verdict::Decrease),
    ];
    for (head, dir, want) in cases {
        let c = compare_series(&base, head, dir, &s, false);
        assert_eq!(c.verdict, want, "{dir:?}");
        assert_eq!(c.test, TestUsed::MannWhitney);
        assert_eq!(c.mann_whitney.as_ref().unwrap().method, "asymptotic");
        assert_eq!(c.ci.as_ref().unwrap().method, "bootstrap_ratio_of_medians");
        assert!(
            !c.flags
                .iter()
                .any(|f| matches!(f, Flag::Inconclusive { .. })),
            "{:?}",
            c.flags
        );
    }
    // +0.5%: clearly significant, but below the 1% threshold.
    let small = steady(100.5, 12);
    let c = compare_series(&base, &small, Direction::LowerIsBetter, &s, false);
    assert!(c.p.unwrap() < 1e-4);
    assert_eq!(c.verdict, Verdict::NoSignificantChange);
    assert!(c.flags.contains(&Flag::BelowThreshold), "{:?}", c.flags);
    let ci = c.ci.unwrap();
    assert!(ci.low > 0.3 && ci.high < 0.7, "{ci:?}");
}

#[test]
fn interval_spanning_the_threshold_is_inconclusive() {
    // A 1% shift with 2% noise: the interval holds both 0.3% and 2%.
    let noise = [
        -2.0, 1.5, -0.5, 0.8, -1.2, 2.2, 0.1, -1.8, 1.1, -0.3, 0.6, -0.9,
    ];
    let base: Vec<f64> = noise.iter().map(|e| 100.0 + e).collect();
    let head: Vec<f64> = noise.iter().rev().map(|e| 101.0 + e * 0.9).collect();
    let c = compare_series(&base, &head, Direction::LowerIsBetter, &settings(), false);
    let ci = c.ci.as_ref().unwrap();
    assert!(ci.low < 1.0 && ci.high > 1.0, "{ci:?}");
    let more = c
        .flags
        .iter()
        .find_map(|f| match f {
            Flag::Inconclusive { more_runs } => Some(*more_runs),
            _ => None,
        })
        .expect("inconclusive");
    assert!(more.is_some_and(|m| m >= 1), "{more:?}");
}

#[test]
fn flags_for_ties_large_n_and_disagreement() {
    let s = settings();
    let tied = compare_series(
        &[1.0, 2.0, 2.0],
        &[3.0, 4.0, 5.0],
        Direction::Neutral,
        &s,
        false,
    );
    assert!(tied.flags.contains(&Flag::Ties));
    let untied = compare_series(
        &[1.0, 2.0, 2.5],
        &[3.0, 4.0, 5.0],
        Direction::Neutral,
        &s,
        false,
    );
    assert!(!untied.flags.contains(&Flag::Ties));

    let big: Vec<f64> = (0..1001).map(f64::from).collect();
    let c = compare_series(&big, &big, Direction::Neutral, &s, false);
    assert!(c.flags.contains(&Flag::LargeN));
    assert_eq!(c.verdict, Verdict::NoSignificantChange);
    assert_close("identical p", c.p.unwrap(), 1.0, 1e-9);

    // Median up, mean down (one huge base outlier).
    let c = compare_series(
        &[10.0, 11.0, 12.0, 1000.0],
        &[12.0, 13.0, 14.0, 15.0],
        Direction::Neutral,
        &s,
        false,
    );
    assert!(c.flags.contains(&Flag::MeanMedianDisagree), "{:?}", c.flags);
}

#[test]
fn constant_samples_fall_back_to_mann_whitney() {
    // Neither side varies: Welch is undefined, Mann-Whitney (asymptotic, ties) decides.
    let c = compare_series(
        &[5.0; 3],
        &[6.0; 3],
        Direction::LowerIsBetter,
        &settings(),
        false,
    );
    assert!(c.welch.is_none());
    assert_eq!(c.test, TestUsed::MannWhitney);
    assert_close("p", c.p.unwrap(), 0.04685417760387376, 1e-9);
    assert_eq!(c.verdict, Verdict::Regression);
}

#[test]
fn summaries_have_no_test() {
    let c = summary_only(Some(2.0), Some(2.5), Direction::LowerIsBetter);
    assert_eq!(c.verdict, Verdict::NotEnoughData);
    assert_eq!(c.flags, vec![Flag::Summary]);
    assert_eq!(
        (c.p, c.q, c.ratio, c.change_pct),
        (None, None, Some(1.25), Some(25.0))
    );
    assert_eq!(c.base.median, Some(2.0));
    let none = summary_only(Some(0.0), Some(1.0), Direction::Neutral);
    assert_eq!((none.ratio, none.change_pct), (None, None));
}

#[test]
fn negative_values_keep_the_direction() {
    // -50 -> -45 is an increase of 10% of the magnitude.
    let base = steady(-50.0, 10);
    let head = steady(-45.0, 10);
    let c = compare_series(&base, &head, Direction::Neutral, &settings(), false);
    assert_eq!(c.verdict, Verdict::Increase);
    assert!(c.change_pct.unwrap() > 9.0 && c.ratio.unwrap() < 1.0);
    let ci = c.ci.unwrap();
    assert!(ci.low > 9.0 && ci.high < 11.0, "{ci:?}");
}

#[test]
fn finish_uses_q_values_across_series() {
    let s = settings();
    let base = steady(100.0, 5);
    // Five series: one clear regression, four without change.
    let mut items: Vec<SeriesComparison> = (0..5)
        .map(|i| {
            let head = if i == 0 {
                steady(110.0, 5)
            } else {
                steady(100.0, 5)
            };
            compare_series(&base, &head, Direction::LowerIsBetter, &s, false)
        })
        .collect();
    // An exact 5 vs 5 test: p = 2/252 for the regression alone.
    assert_close("p0", items[0].p.unwrap(), 2.0 / 252.0, 1e-12);
    items.push(summary_only(Some(1.0), Some(3.0), Direction::LowerIsBetter));
    // The four unchanged series compare identical samples: U = nm/2, p = 1.
    let ps: Vec<f64> = items.iter().filter_map(|c| c.p).collect();
    assert_eq!(ps.len(), 5);
    assert!(ps[1..].iter().all(|&p| p == 1.0), "{ps:?}");
    finish(&mut items, |_| Direction::LowerIsBetter, &s);
    // By hand: ranks 1..5 of p = (2/252, 1, 1, 1, 1); q_(5) = 1 * 5/5 = 1, the three below it
    // min(1 * 5/k, 1) = 1, and q_(1) = 2/252 * 5/1 = 0.0397 < 0.05: still a regression.
    let qs: Vec<f64> = items.iter().filter_map(|c| c.q).collect();
    assert_eq!(qs.len(), 5);
    assert_close("q0", qs[0], 10.0 / 252.0, 1e-12);
    assert_eq!(&qs[1..], &[1.0; 4]);
    assert_eq!(items[0].verdict, Verdict::Regression);
    assert!(
        items[1..5]
            .iter()
            .all(|c| c.verdict == Verdict::NoSignificantChange)
    );
    assert_eq!(items[5].verdict, Verdict::NotEnoughData);

    // One regression among 66 null series: p = 0.0079 alone, but q = 67 p pushes it over alpha.
    let mut many: Vec<SeriesComparison> = (0..67)
        .map(|i| {
            let head = if i < 1 {
                steady(110.0, 5)
            } else {
                steady(100.0, 5)
            };
            compare_series(&base, &head, Direction::LowerIsBetter, &s, false)
        })
        .collect();
    assert_eq!(
        many[0].verdict,
        Verdict::Regression,
        "provisional verdict from p alone"
    );
    finish(&mut many, |_| Direction::LowerIsBetter, &s);
    assert!(many[0].q.unwrap() > 0.05);
    assert_eq!(many[0].verdict, Verdict::NoSignificantChange);
}

#[test]
fn benjamini_hochberg_by_hand() {
    // p sorted: 0.005 (rank 1), 0.01 (2), 0.03 (3), 0.04 (4), 0.2 (5); p m / rank: 0.025, 0.025,
    // 0.05, 0.05, 0.2; the running minimum from the top changes none of them.
    let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005, 0.2]);
    let want = [0.025, 0.05, 0.05, 0.025, 0.2];
    for (g, w) in q.iter().zip(want) {
        assert_close("q", *g, w, 1e-15);
    }
    // A larger p with a smaller p m / rank lowers the q of the p below it (step-up):
    // 0.04 * 3/2 = 0.06 > 0.045 * 3/3 = 0.045, so q(0.04) = 0.045; 0.001 * 3 = 0.003.
    let q = benjamini_hochberg(&[0.045, 0.04, 0.001]);
    for (g, w) in q.iter().zip([0.045, 0.045, 0.003]) {
        assert_close("q", *g, w, 1e-15);
    }
    // Ties share a q; q never exceeds 1; nothing in, nothing out.
    let q = benjamini_hochberg(&[0.02, 0.02, 0.9, 1.0]);
    for (g, w) in q.iter().zip([0.04, 0.04, 1.0, 1.0]) {
        assert_close("q", *g, w, 1e-15);
    }
    assert!(benjamini_hochberg(&[]).is_empty());
}

#[test]
fn sketch_of_the_idle_runs() {
    let sketch = text_sketch(&IDLE_BASE, &IDLE_HEAD, 40);
    let lines: Vec<&str> = sketch.lines().collect();
    assert!(lines.iter().all(|l| l.chars().count() == 40), "{sketch}");
    assert_eq!(lines[0], format!("+{}+", "-".repeat(38)));
    assert_eq!(lines.last(), lines.first());
    print!("{sketch}");
    let body: String = lines[1..lines.len() - 1].concat();
    assert_eq!(body.matches('x').count() + body.matches('*').count(), 3);
    assert_eq!(body.matches('+').count(), 3);
    assert_eq!(body.matches('A').count(), 2);
    // The base sits on the left, the head on the right.
    let first_x = lines.iter().filter_map(|l| l.find('x')).min().unwrap();
    let first_plus = lines[1..lines.len() - 1]
        .iter()
        .filter_map(|l| l.find('+'))
        .min()
        .unwrap();
    assert!(first_x < 5 && first_plus > 30, "{sketch}");
    assert_eq!(text_sketch(&[], &[], 40), "");
}
