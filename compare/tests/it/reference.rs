//! Agreement with numpy and scipy: tests/reference/cases.json, written by tests/reference/gen.py.

use compare::{
    Settings, benjamini_hochberg, change_interval, cliffs_delta, describe, hodges_lehmann,
    mann_whitney, welch,
};
use serde_json::Value;

use crate::assert_close;

const REL: f64 = 1e-9;
const REL_P: f64 = 1e-6;

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
            REL_P,
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
            REL_P,
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
    let mut checked = 0;
    for c in cases() {
        let name = c["name"].as_str().unwrap();
        let want = &c["hl_interval"];
        let (b, h) = (numbers(&c["base"]), numbers(&c["head"]));
        // The interval is reported in percent of the base median; the bootstrap takes over
        // when both sides have 10 values or more.
        if want.is_null() || (b.len() >= 10 && h.len() >= 10) {
            continue;
        }
        let median = c["describe_base"]["median"].as_f64().unwrap();
        let ci = change_interval(&b, &h, &settings).expect("interval");
        assert_eq!(ci.method, "hodges_lehmann_exact", "{name}");
        let scale = 100.0 / median.abs();
        assert_close(
            &format!("{name} low"),
            ci.low,
            want["low"].as_f64().unwrap() * scale,
            REL,
        );
        assert_close(
            &format!("{name} high"),
            ci.high,
            want["high"].as_f64().unwrap() * scale,
            REL,
        );
        assert_close(
            &format!("{name} level"),
            ci.level,
            want["level"].as_f64().unwrap(),
            REL,
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked}");
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
