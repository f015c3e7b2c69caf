//! Agreement with numpy and scipy: tests/reference/cases.json, written by tests/reference/gen.py.

use compare::{
    Direction, Flag, SeriesComparison, Settings, TestUsed, benjamini_hochberg, change_interval,
    cliffs_delta, compare_series, describe, finish, hodges_lehmann, mann_whitney, shift_interval,
    welch,
};
use serde_json::Value;

use crate::assert_close;

/// Relative tolerance of every reference number, p- and q-values included (the largest
/// disagreement seen is about 1e-10, in p-values).
const REL: f64 = 1e-9;

fn reference() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/cases.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("cases.json")).expect("valid JSON")
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn cases() -> Vec<Value> {
    let r = reference();
    let cases = r["cases"].as_array().expect("cases").clone();
    assert!(cases.len() >= 25, "only {} cases", cases.len());
    cases
}

fn check_optional(what: &str, got: Option<f64>, want: &Value, rel: f64) {
    match want.as_f64() {
        Some(w) => assert_close(
            what,
            got.unwrap_or_else(|| panic!("{what}: got None, want {w}")),
            w,
            rel,
        ),
        None => assert_eq!(got, None, "{what}"),
    }
}

#[test]
fn describe_matches_numpy() {
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        for side in ["base", "head"] {
            let d = describe(&numbers(&c[side]));
            let want = &c[format!("describe_{side}").as_str()];
            assert_eq!(d.n as u64, want["n"].as_u64().unwrap(), "{name} {side} n");
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
            for (field, got) in fields {
                check_optional(&format!("{name} {side} {field}"), got, &want[field], REL);
            }
        }
    }
}

#[test]
fn mann_whitney_matches_scipy() {
    let mut methods = std::collections::BTreeSet::new();
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let want = &c["mann_whitney"];
        let got = mann_whitney(&numbers(&c["base"]), &numbers(&c["head"])).expect("defined");
        assert_close(
            &format!("{name} U"),
            got.u,
            want["u"].as_f64().unwrap(),
            REL,
        );
        assert_close(
            &format!("{name} p"),
            got.p,
            want["p"].as_f64().unwrap(),
            REL,
        );
        assert_eq!(
            got.method,
            want["method"].as_str().unwrap(),
            "{name} method"
        );
        methods.insert(got.method);
    }
    assert_eq!(methods.len(), 2, "both methods exercised");
}

#[test]
fn welch_matches_scipy() {
    let mut defined = 0;
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let got = welch(&numbers(&c["base"]), &numbers(&c["head"]));
        let want = &c["welch"];
        if want.is_null() {
            assert_eq!(got, None, "{name}");
            continue;
        }
        let got = got.unwrap_or_else(|| panic!("{name}: Welch undefined"));
        assert_close(
            &format!("{name} t"),
            got.t,
            want["t"].as_f64().unwrap(),
            REL,
        );
        assert_close(
            &format!("{name} df"),
            got.df,
            want["df"].as_f64().unwrap(),
            REL,
        );
        assert_close(
            &format!("{name} p"),
            got.p,
            want["p"].as_f64().unwrap(),
            REL,
        );
        defined += 1;
    }
    assert!(defined >= 20);
}

#[test]
fn effect_sizes_match_numpy() {
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let (b, h) = (numbers(&c["base"]), numbers(&c["head"]));
        let hl = hodges_lehmann(&b, &h).expect("defined").shift;
        assert_close(
            &format!("{name} HL"),
            hl,
            c["hodges_lehmann"].as_f64().unwrap(),
            REL,
        );
        let cd = cliffs_delta(&b, &h).expect("defined");
        assert_close(
            &format!("{name} Cliff"),
            cd,
            c["cliffs_delta"].as_f64().unwrap(),
            REL,
        );
    }
}

#[test]
fn exact_shift_interval_follows_r() {
    let settings = Settings::default();
    let (mut checked, mut as_change) = (0, 0);
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let want = &c["hl_interval"];
        if want.is_null() {
            continue;
        }
        let (b, h) = (numbers(&c["base"]), numbers(&c["head"]));
        let got = shift_interval(&b, &h, settings.ci_level).expect("interval");
        assert_eq!(got.method, "hodges_lehmann_exact", "{name}");
        for (field, got) in [("low", got.low), ("high", got.high), ("level", got.level)] {
            let want = want[field].as_f64().unwrap();
            assert_close(&format!("{name} {field}"), got, want, REL);
        }
        checked += 1;
        // The interval of the change uses it, in percent of the base median, below 10 values
        // a side; the bootstrap takes over from there (bootstrap_interval_* below).
        if b.len() >= 10 && h.len() >= 10 {
            continue;
        }
        let median = c["describe_base"]["median"].as_f64().unwrap();
        let ci = change_interval(&b, &h, &settings).expect("interval");
        assert_eq!(ci.method, "hodges_lehmann_exact", "{name}");
        let scale = 100.0 / median.abs();
        for (field, got) in [("low", ci.low), ("high", ci.high)] {
            let want = want[field].as_f64().unwrap() * scale;
            assert_close(&format!("{name} change {field}"), got, want, REL);
        }
        as_change += 1;
    }
    assert!(checked >= 18 && as_change >= 8, "{checked} {as_change}");
}

#[test]
fn asymptotic_shift_interval_matches_numpy_order_statistics() {
    let mut checked = 0;
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let want = &c["hl_interval_asymptotic"];
        if want.is_null() {
            continue;
        }
        let got = shift_interval(&numbers(&c["base"]), &numbers(&c["head"]), 0.95).unwrap();
        assert_eq!(got.method, "hodges_lehmann_asymptotic", "{name}");
        for (field, got) in [("low", got.low), ("high", got.high), ("level", got.level)] {
            let want = want[field].as_f64().unwrap();
            assert_close(&format!("{name} {field}"), got, want, REL);
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked}");
}

/// The cases whose interval of the change is the bootstrap (both sides >= 10 values).
fn bootstrap_cases() -> Vec<Value> {
    let cases: Vec<Value> = cases()
        .into_iter()
        .filter(|c| c["policy"]["ci"]["method"] == "bootstrap_ratio_of_medians")
        .collect();
    assert!(cases.len() >= 12, "{}", cases.len());
    cases
}

#[test]
fn bootstrap_interval_reproduces_the_seeded_resamples() {
    // gen.py draws the same resamples from the same generator and seed, so the percentiles
    // agree to rounding (numpy's quantile arithmetic differs from the crate's in the last bits).
    let settings = Settings::default();
    for c in bootstrap_cases() {
        let name = c["name"].as_str().unwrap();
        let want = &c["policy"]["ci"];
        let (b, h) = (numbers(&c["base"]), numbers(&c["head"]));
        let ci = change_interval(&b, &h, &settings).expect("interval");
        assert_eq!(ci.method, "bootstrap_ratio_of_medians", "{name}");
        for (field, got) in [("low", ci.low), ("high", ci.high), ("level", ci.level)] {
            let want = want[field].as_f64().unwrap();
            assert_close(&format!("{name} {field}"), got, want, REL);
        }
    }
}

#[test]
fn bootstrap_interval_agrees_with_scipy_bootstrap() {
    // scipy.stats.bootstrap (20,000 index resamples, another generator) estimates the same
    // percentiles of the same bootstrap distribution. The Monte Carlo standard error of a 2.5%
    // or 97.5% percentile from 2,000 resamples is about 1.5% of the 95% interval's width for a
    // smooth distribution (sqrt(0.025 * 0.975 / 2000) / phi(1.96) / 3.92); 6% of the width is
    // four of those, with room for the atoms of a median's bootstrap distribution.
    let settings = Settings::default();
    let mut checked = 0;
    for c in bootstrap_cases() {
        let name = c["name"].as_str().unwrap();
        let want = &c["scipy_bootstrap"];
        if want.is_null() {
            continue;
        }
        let ci = change_interval(&numbers(&c["base"]), &numbers(&c["head"]), &settings).unwrap();
        let (low, high) = (
            want["low"].as_f64().unwrap(),
            want["high"].as_f64().unwrap(),
        );
        let tolerance = 0.06 * (high - low).max(ci.high - ci.low);
        assert!(
            (ci.low - low).abs() <= tolerance && (ci.high - high).abs() <= tolerance,
            "{name}: [{}, {}] vs scipy [{low}, {high}]",
            ci.low,
            ci.high
        );
        checked += 1;
    }
    assert!(checked >= 12, "{checked}");
}

fn direction(name: &str) -> Direction {
    match name {
        "lower_is_better" => Direction::LowerIsBetter,
        "higher_is_better" => Direction::HigherIsBetter,
        "neutral" => Direction::Neutral,
        other => panic!("direction {other}"),
    }
}

fn test_name(t: TestUsed) -> &'static str {
    match t {
        TestUsed::MannWhitney => "mann_whitney",
        TestUsed::Welch => "welch",
        TestUsed::None => "none",
    }
}

/// Checks one comparison against the policy gen.py derived from scipy's numbers.
fn check_policy(name: &str, got: &SeriesComparison, want: &Value) {
    assert_eq!(
        test_name(got.test),
        want["test"].as_str().unwrap(),
        "{name}"
    );
    check_optional(&format!("{name} p"), got.p, &want["p"], REL);
    let ci = &want["ci"];
    match &got.ci {
        None => assert!(ci.is_null(), "{name}: no interval, want {ci}"),
        Some(g) => {
            assert_eq!(g.method, ci["method"].as_str().unwrap_or("none"), "{name}");
            for (field, got) in [("low", g.low), ("high", g.high), ("level", g.level)] {
                let want = ci[field].as_f64().unwrap();
                assert_close(&format!("{name} ci {field}"), got, want, REL);
            }
        }
    }
    let inconclusive = got
        .flags
        .iter()
        .any(|f| matches!(f, Flag::Inconclusive { .. }));
    assert_eq!(
        inconclusive,
        want["inconclusive"].as_bool().unwrap(),
        "{name} inconclusive: {:?}",
        got.flags
    );
}

#[test]
fn verdicts_follow_the_readme_policy() {
    let settings = Settings::default();
    let mut seen = std::collections::BTreeSet::new();
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let (b, h) = (numbers(&c["base"]), numbers(&c["head"]));
        let want = &c["policy"];
        for (dir, verdict) in want["verdict"].as_object().unwrap() {
            let got = compare_series(&b, &h, direction(dir), &settings, false);
            check_policy(name, &got, want);
            assert_eq!(
                got.verdict.as_str(),
                verdict.as_str().unwrap(),
                "{name} {dir}"
            );
            seen.insert(got.verdict.as_str());
        }
    }
    assert_eq!(seen.len(), 6, "every verdict exercised: {seen:?}");
}

#[test]
fn verdicts_of_a_whole_comparison_use_scipy_q_values() {
    let settings = Settings::default();
    let r = reference();
    let cases = cases();
    let mut items: Vec<SeriesComparison> = cases
        .iter()
        .map(|c| {
            let (b, h) = (numbers(&c["base"]), numbers(&c["head"]));
            compare_series(&b, &h, Direction::LowerIsBetter, &settings, false)
        })
        .collect();
    finish(&mut items, |_| Direction::LowerIsBetter, &settings);
    let want = r["finish"].as_array().unwrap();
    assert_eq!(want.len(), items.len());
    let mut changed = 0;
    for ((got, want), c) in items.iter().zip(want).zip(&cases) {
        let name = want["name"].as_str().unwrap();
        check_optional(&format!("{name} q"), got.q, &want["q"], REL);
        assert_eq!(
            got.verdict.as_str(),
            want["verdict"].as_str().unwrap(),
            "{name}"
        );
        changed += usize::from(c["policy"]["verdict"]["lower_is_better"] != want["verdict"]);
    }
    // Some verdicts significant by p alone are not by q.
    assert!(changed >= 3, "{changed}");
}

#[test]
fn benjamini_hochberg_matches_scipy() {
    let r = reference();
    for v in r["benjamini_hochberg"].as_array().unwrap() {
        let q = benjamini_hochberg(&numbers(&v["p"]));
        let want = numbers(&v["q"]);
        assert_eq!(q.len(), want.len());
        for (i, (g, w)) in q.iter().zip(&want).enumerate() {
            assert_close(&format!("q[{i}]"), *g, *w, REL);
        }
    }
}
