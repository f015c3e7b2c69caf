//! Helpers shared by the golden tests.
#![allow(dead_code)]

use std::path::PathBuf;

use ingest::{Dataset, Series};

/// Path of a fixture, e.g. `fixture("time/seed000_bash_time_3runs_ftrace_switch.txt")`.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Asserts that `ds` has exactly one warning, at `line`, whose message contains `needle`.
#[track_caller]
pub fn one_warning(ds: &Dataset, line: u64, needle: &str) {
    assert_eq!(ds.warnings.len(), 1, "{:?}", ds.warnings);
    assert_eq!(ds.warnings[0].line, line, "{:?}", ds.warnings);
    assert!(
        ds.warnings[0].message.contains(needle),
        "{}",
        ds.warnings[0].message
    );
}

/// Parses a fixture with detection, asserting the detected format.
pub fn parse(rel: &str, expect_format: &str) -> Dataset {
    let parsed = ingest::parse_file(&fixture(rel), None).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert_eq!(parsed.format, expect_format, "{rel}: detected format");
    parsed.dataset
}

/// Asserts two floats are equal to 1e-9 relative.
#[track_caller]
pub fn close(a: f64, b: f64) {
    let tol = 1e-9 * a.abs().max(b.abs()).max(1e-12);
    assert!((a - b).abs() <= tol, "{a} != {b}");
}

#[track_caller]
pub fn samples_eq(s: &Series, expected: &[f64]) {
    assert_eq!(
        s.samples.len(),
        expected.len(),
        "{:?}: sample count",
        s.spec.key
    );
    for (a, b) in s.samples.iter().zip(expected) {
        close(*a, *b);
    }
}
