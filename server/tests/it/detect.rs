//! `quiescent detect FILE`: change points of a CSV series, JSON and table, and bad input.

use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .env_remove("QUIESCENT_DB")
        .env("QUIESCENT_LOG", "error")
        .args(args)
        .output()
        .expect("run quiescent")
}

/// 60 builds of 3 runs, a 10% step at build 30; the noise is a fixed pattern of +-1%.
fn step_csv(dir: &Path) -> String {
    let mut text = String::from("position,value\n");
    for b in 0..60 {
        let level = if b >= 30 { 110.0 } else { 100.0 };
        for (r, wiggle) in [-0.01, 0.004, 0.009].iter().enumerate() {
            let w = if (b + r) % 2 == 0 { *wiggle } else { -wiggle };
            text.push_str(&format!("{b},{}\n", level * (1.0 + w)));
        }
    }
    let p = dir.join("series.csv");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn detect_json_reports_the_step() {
    let dir = tempfile::tempdir().unwrap();
    let file = step_csv(dir.path());
    let o = run(&["detect", &file, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cps = v["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{v}");
    let c = &cps[0];
    assert_eq!(c["position"], 30);
    // The header line is optional: the same rows without it give the same answer.
    let bare = dir.path().join("bare.csv");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&bare, text.strip_prefix("position,value\n").unwrap()).unwrap();
    let o2 = run(&["detect", bare.to_str().unwrap(), "--json"]);
    assert!(
        o2.status.success(),
        "{}",
        String::from_utf8_lossy(&o2.stderr)
    );
    assert_eq!(o2.stdout, o.stdout);
    assert_eq!(c["build_before"], 29);
    assert_eq!(c["before"]["builds"], 30);
    assert_eq!(c["after"]["n"], 90);
    let before = c["before"]["median"].as_f64().unwrap();
    let after = c["after"]["median"].as_f64().unwrap();
    assert!((before - 100.0).abs() < 1.0 && (after - 110.0).abs() < 1.1);
    let pct = c["change_pct"].as_f64().unwrap();
    assert!((pct - 10.0).abs() < 1.0, "{pct}");
    assert!(c["p"].as_f64().unwrap() < 1e-6);
    assert!(c["q"].as_f64().unwrap() >= c["p"].as_f64().unwrap());
    assert!(c["interval"]["low_pct"].as_f64().unwrap() < pct);
    assert_eq!(c["kind"], "regression");

    let o = run(&["detect", &file, "--json", "--direction", "higher"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["change_points"][0]["kind"], "improvement");
}

#[test]
fn detect_table_and_quiet_series() {
    let dir = tempfile::tempdir().unwrap();
    let file = step_csv(dir.path());
    let o = run(&["detect", &file]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("position") && text.contains("regression"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("30 ")),
        "{text}"
    );

    let flat = dir.path().join("flat.csv");
    let rows: String = (0..50).map(|b| format!("{b},5.0\n")).collect();
    std::fs::write(&flat, format!("position,value\n{rows}")).unwrap();
    let o = run(&["detect", flat.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["change_points"].as_array().unwrap().len(), 0);
}

#[test]
fn detect_bad_csv_names_file_line_and_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "header.csv",
            "pos,val\n0,1\n",
            "line 1: expected the header `position,value` or a first row",
        ),
        (
            "headerless.csv",
            "0,1\n1,x\n",
            "line 2: expected a finite number",
        ),
        (
            "value.csv",
            "position,value\n0,1\n1,abc\n",
            "line 3: expected a finite number",
        ),
        (
            "position.csv",
            "position,value\n-1,1\n",
            "line 2: expected a position",
        ),
        (
            "columns.csv",
            "position,value\n0,1,2\n",
            "line 2: expected two columns",
        ),
    ];
    for (name, text, want) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        let o = run(&["detect", p.to_str().unwrap()]);
        assert!(!o.status.success(), "{name} accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(name) && err.contains(want), "{name}: {err}");
    }
    let o = run(&["detect", "/nonexistent/series.csv"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/series.csv"));
}
