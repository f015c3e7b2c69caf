//! Golden tests of the `cyclictest` format: the values of `fixtures/cyclictest/MANIFEST.md`.

use ingest::{Dataset, Direction, Series, Unit};

use crate::common::*;

const TLINES: &str = "cyclictest/lkml_2015_remap_resched_points_cyclictest_tlines.txt";
const MULTI: &str = "cyclictest/lkml_2015_preempt_voluntary_rt_cyclictest_multikernel_excerpt.txt";
const QP: &str = "cyclictest/lkml_2021_rttests2_mlock_regression_cyclictest_qp.txt";
const TABS: &str = "cyclictest/lkml_2023_eevdf_latency_nice_cyclictest_summary_tabs.txt";
const QUIET: &str = "cyclictest/lkml_2024_eevdf_reschedule_ineligible_cyclictest_quiet_summary.txt";
const HIST: &str = "cyclictest/doc_ti_processor_sdk_am574x_osadl_cyclictest_histogram.txt";

#[track_caller]
fn stat<'a>(ds: &'a Dataset, scope: &str, label: Option<&str>, statistic: &str) -> &'a Series {
    ds.series
        .iter()
        .find(|s| {
            s.spec.key.metric == "latency"
                && s.spec.key.scope == scope
                && s.spec.key.label.as_deref() == label
                && s.spec.key.statistic.as_deref() == Some(statistic)
        })
        .unwrap_or_else(|| panic!("no latency {statistic} of {scope} labelled {label:?}"))
}

/// Min/Avg/Max of a thread in µs as the MANIFEST writes them.
#[track_caller]
fn thread_us(ds: &Dataset, thread: u32, label: &str, min: f64, avg: f64, max: f64) {
    let scope = format!("thread{thread}");
    for (st, us) in [("min", min), ("avg", avg), ("max", max)] {
        let s = stat(ds, &scope, Some(label), st);
        samples_eq(s, &[us * 1e-6]);
        assert_eq!(s.spec.unit, Unit::Seconds);
        assert_eq!(s.spec.direction, Direction::LowerIsBetter);
    }
}

#[track_caller]
fn loops(ds: &Dataset, thread: u32, label: &str) -> f64 {
    let scope = format!("thread{thread}");
    ds.get_labelled("loops", &scope, label)
        .unwrap_or_else(|| panic!("no loops of {scope} labelled {label}"))
        .samples[0]
}

#[test]
fn t_lines_before_after() {
    let ds = parse(TLINES, "cyclictest");
    let (before, after) = ("PREEMPT_VOLUNTARY Before", "PREEMPT_VOLUNTARY After");
    assert_eq!(ds.labels(), [before, after]);
    thread_us(&ds, 0, before, 1.0, 5.0, 1718.0);
    thread_us(&ds, 2, before, 1.0, 5.0, 2504.0);
    thread_us(&ds, 7, before, 1.0, 5.0, 1901.0);
    assert_eq!(loops(&ds, 0, before), 286022.0);
    assert_eq!(loops(&ds, 7, before), 63566.0);
    assert_eq!(ds.meta["interval_us.thread7"], "4500");
    thread_us(&ds, 0, after, 1.0, 3.0, 125.0);
    thread_us(&ds, 3, after, 1.0, 4.0, 90.0);
    thread_us(&ds, 7, after, 1.0, 4.0, 109.0);
    assert_eq!(loops(&ds, 0, after), 286032.0);
    assert_eq!(ds.meta["threads"], "8");
    // Each thread's max is one summary value per block, not samples pooled across blocks.
    assert_eq!(stat(&ds, "thread5", Some(before), "max").samples.len(), 1);
}

#[test]
fn six_blocks_with_wide_pids() {
    let ds = parse(MULTI, "cyclictest");
    let maxima: Vec<f64> = ds
        .series
        .iter()
        .filter(|s| s.spec.key.scope == "thread0" && s.spec.key.statistic.as_deref() == Some("max"))
        .flat_map(|s| s.samples.iter().copied())
        .collect();
    let expect = [1650.0, 70.0, 121.0, 603.0, 1417.0, 2334.0];
    // Two blocks share a label (`master PREEMPT`): their values pool into one series.
    assert_eq!(maxima.len(), expect.len(), "{maxima:?}");
    for e in expect {
        assert!(
            maxima.iter().any(|m| (m - e * 1e-6).abs() < 1e-12),
            "{e} in {maxima:?}"
        );
    }
    let first = ds.labels()[0].clone();
    assert!(first.contains("PREEMPT_NONE"), "{first}");
    thread_us(&ds, 5, &first, 1.0, 6.0, 1970.0);
}

#[test]
fn quoted_printable_soft_breaks_are_decoded() {
    let ds = parse(QP, "cyclictest");
    assert!(ds.meta["mail_decoded"].contains("quoted-printable"));
    let labels = ds.labels();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels[0].ends_with("cyclictest -Smp99"), "{labels:?}");
    assert!(labels[1].ends_with("cyclictest -Sp99"), "{labels:?}");
    thread_us(&ds, 0, &labels[0], 1.0, 3.0, 3846.0);
    thread_us(&ds, 1, &labels[0], 1.0, 6.0, 5912.0);
    assert_eq!(loops(&ds, 0, &labels[0]), 1536.0);
    thread_us(&ds, 0, &labels[1], 1.0, 1.0, 4.0);
    thread_us(&ds, 5, &labels[1], 1.0, 1.0, 3.0);
    assert_eq!(loops(&ds, 0, &labels[1]), 1533.0);
}

#[track_caller]
fn group(ds: &Dataset, label: &str, group: &str, statistic: &str) -> Vec<f64> {
    ds.series
        .iter()
        .filter(|s| {
            s.spec.key.label.as_deref() == Some(label)
                && s.spec.key.params.get("group").map(String::as_str) == Some(group)
                && s.spec.key.statistic.as_deref() == Some(statistic)
        })
        .flat_map(|s| s.samples.iter().map(|v| (v * 1e6).round()))
        .collect()
}

#[test]
fn author_tables_with_kernel_columns() {
    let ds = parse(TABS, "cyclictest");
    assert_eq!(group(&ds, "EEVDF", "LNICE(19)", "min"), [53.0]);
    assert_eq!(group(&ds, "EEVDF", "LNICE(19)", "avg"), [4350.0]);
    assert_eq!(group(&ds, "EEVDF", "LNICE(19)", "max"), [76019.0]);
    assert_eq!(group(&ds, "EEVDF", "LNICE(0)", "max"), [14145.0]);
    assert_eq!(group(&ds, "CFS", "LNICE(0)", "min"), [53.0]);
    assert_eq!(group(&ds, "CFS", "LNICE(0)", "avg"), [687.0]);
    assert_eq!(group(&ds, "CFS", "LNICE(0)", "max"), [13913.0]);
    assert_eq!(group(&ds, "EEVDF", "LNICE(-19)", "avg"), [261.0]);
    assert!(group(&ds, "CFS", "LNICE(19)", "avg").is_empty());

    let ds = parse(QUIET, "cyclictest");
    let cols = ["EEVDF", "PATCH", "EEVDF-NO_PARITY", "PATCH-NO_PARITY"];
    let avg: Vec<f64> = cols
        .iter()
        .flat_map(|c| group(&ds, c, "LNICE(-19)", "avg"))
        .collect();
    assert_eq!(avg, [191.0, 133.0, 89.0, 66.0]);
    let max: Vec<f64> = cols
        .iter()
        .flat_map(|c| group(&ds, c, "LNICE(19)", "max"))
        .collect();
    assert_eq!(max, [2688299.0, 4643635.0, 426196.0, 425708.0]);
}

#[test]
fn histogram_and_trailer() {
    let ds = parse(HIST, "cyclictest");
    let one = |metric: &str| ds.get(metric, "thread0").unwrap().samples.clone();
    assert_eq!(one("loops"), [100000000.0]);
    assert_eq!(one("histogram_overflows"), [0.0]);
    let s = |st: &str| (stat(&ds, "thread0", None, st).samples[0] * 1e6).round();
    assert_eq!((s("min"), s("avg"), s("max")), (7.0, 10.0, 27.0));
    let bucket = |us: &str| {
        ds.series
            .iter()
            .find(|s| {
                s.spec.key.metric == "histogram"
                    && s.spec.key.params.get("latency_us").map(String::as_str) == Some(us)
            })
            .unwrap_or_else(|| panic!("no bucket {us}"))
            .samples[0]
    };
    assert_eq!(bucket("7"), 58012.0);
    assert_eq!(bucket("10"), 39660088.0);
    assert_eq!(bucket("11"), 53158895.0);
    assert_eq!(bucket("25"), 133.0);
    assert_eq!(bucket("28"), 0.0);
    let rows: Vec<&Series> = ds
        .series
        .iter()
        .filter(|s| s.spec.key.metric == "histogram")
        .collect();
    assert_eq!(rows.len(), 29);
    let total: f64 = rows.iter().map(|s| s.samples[0]).sum();
    assert_eq!(total, 100000000.0);
}
