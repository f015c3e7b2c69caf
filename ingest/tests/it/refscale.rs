//! Golden tests of the refscale parser: every value of refscale/MANIFEST.md, and synthetic
//! console logs written from the grammar of kernel/rcu/refscale.c (FORMATS.md §6), since no
//! public raw dump of the console table exists.

use std::path::Path;

use ingest::{Dataset, ErrorKind, Series, Unit};

use crate::common::*;

fn find<'a>(
    ds: &'a Dataset,
    metric: &str,
    scope: &str,
    label: Option<&str>,
    statistic: Option<&str>,
) -> &'a Series {
    ds.series
        .iter()
        .find(|s| {
            s.spec.key.metric == metric
                && s.spec.key.scope == scope
                && s.spec.key.label.as_deref() == label
                && s.spec.key.statistic.as_deref() == statistic
        })
        .unwrap_or_else(|| panic!("no {metric}/{scope}/{label:?}/{statistic:?} in {ds:#?}"))
}

fn ns(values: &[f64]) -> Vec<f64> {
    values.iter().map(|v| v * 1e-9).collect()
}

fn detect_and_parse(text: &str) -> Dataset {
    let (summary, ds) = ingest::parse_bytes(Path::new("console.log"), text.as_bytes(), None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.format, "refscale");
    ds
}

#[test]
fn lkml_2021_min_median_max_table_of_three_runs() {
    let ds = parse(
        "refscale/lkml_2021_refscale_min_median_max_3runs_table.txt",
        "refscale",
    );
    let unmarked = "Unmarked accesses (status quo), measured by three refscale runs";
    let marked = "Marked accesses, also measured by three refscale runs";
    let expect = [
        (unmarked, "min", [3.286, 2.851, 3.395]),
        (unmarked, "median", [3.698, 3.531, 3.4695]),
        (unmarked, "max", [4.481, 5.215, 5.157]),
        (marked, "min", [3.501, 3.677, 3.580]),
        (marked, "median", [4.053, 3.723, 3.895]),
        (marked, "max", [7.307, 4.999, 5.511]),
    ];
    for (label, stat, values) in expect {
        let s = find(&ds, "reader_duration", "all", Some(label), Some(stat));
        assert_eq!(s.spec.unit, Unit::Seconds);
        samples_eq(s, &ns(&values));
    }
    assert_eq!(ds.series.len(), 6);
    assert_eq!(ds.labels(), vec![unmarked, marked]);
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

/// 5.9/5.10: each block is one SCALEOUT record with embedded newlines; continuation lines carry
/// neither prefix nor timestamp, reader lines end with a TAB, the Runs record opens with a bare
/// prefixed line.
const OLD_RECORDS: &str = "\
[    1.234567] rcu-ref-scale: --- Start of test:  verbose=1 shutdown=1 holdoff=10 loops=10000 nreaders=7 nruns=3 readdelay=0
[    1.300000] rcu-ref-scale: main_func task started
[    1.300100] e1000: eth0 NIC Link is Up 1000 Mbps Full Duplex
[   11.500000] rcu-ref-scale: Experiment #0 (Format: <THREAD-NUM>:<Total loop time in ns>)
0: 35123\t1: 35234\t2: 35345\t3: 35456\t4: 35567\t
5: 35678\t6: 35789\t

[   12.600000] rcu-ref-scale: Experiment #1 (Format: <THREAD-NUM>:<Total loop time in ns>)
0: 36123\t1: 36234\t2: 36345\t3: 36456\t4: 36567\t
5: 36678\t6: 36789\t

[   13.700000] rcu-ref-scale: Experiment #2 (Format: <THREAD-NUM>:<Total loop time in ns>)
0: 37123\t1: 37234\t2: 37345\t3: 37456\t4: 37567\t
5: 37678\t6: 37789\t

[   14.000000] rcu-ref-scale: END OF TEST. Calculating average duration per loop (nanoseconds)...
[   14.000001] rcu-ref-scale: 
Runs\tTime(ns)
1\t3.512
2\t3.498
3\t3.601
[   14.100000] reboot: Power down
";

#[test]
fn old_prefixed_records() {
    let ds = detect_and_parse(OLD_RECORDS);
    assert_eq!(ds.meta["scale_type"], "rcu");
    assert_eq!(ds.meta["nreaders"], "7");
    assert_eq!(ds.meta["nruns"], "3");
    assert_eq!(ds.meta["loops"], "10000");
    assert_eq!(ds.meta["readdelay"], "0");
    samples_eq(
        find(&ds, "reader_duration", "all", None, None),
        &ns(&[3.512, 3.498, 3.601]),
    );
    for t in 0..7u32 {
        let base = 35123.0 + 111.0 * f64::from(t);
        let s = find(&ds, "loop_time", &format!("thread{t}"), None, None);
        let expect: Vec<f64> = [0.0, 1000.0, 2000.0]
            .iter()
            .map(|d| (base + d) * 1e-9)
            .collect();
        samples_eq(s, &expect);
    }
    assert_eq!(ds.sample_count(), 3 + 21);
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

/// 2021+: bare pr_alert chunks of <= 800 bytes; a chunk's first line has a timestamp, the rest
/// do not; nothing carries the ref-scale prefix.
const CHUNKED: &str = "\
[    1.000000] refcnt-ref-scale: --- Start of test:  verbose=0 shutdown=1 holdoff=10 lookup_instances=0 loops=10000 nreaders=6 nruns=5 readdelay=0
[   11.500000] Experiment #0 (Format: <THREAD-NUM>:<Total loop time in ns>)
0: 10\t1: 11\t2: 12\t3: 13\t4: 14\t
[   11.500001] 5: 15\t
[   11.600000] refcnt-ref-scale: END OF TEST. Calculating average duration per loop (nanoseconds)...
[   11.600001] Runs\tTime(ns)
[   11.600002] 1\t12.500
2\t12.250
3\t12.750
[   11.600003] 4\t13.000
5\t12.125
[   11.700000] reboot: Power down
";

#[test]
fn bare_chunked_tables() {
    let ds = detect_and_parse(CHUNKED);
    assert_eq!(ds.meta["scale_type"], "refcnt");
    assert_eq!(ds.meta["lookup_instances"], "0");
    samples_eq(
        find(&ds, "reader_duration", "all", None, None),
        &ns(&[12.5, 12.25, 12.75, 13.0, 12.125]),
    );
    for t in 0..6u32 {
        samples_eq(
            find(&ds, "loop_time", &format!("thread{t}"), None, None),
            &[(10.0 + f64::from(t)) * 1e-9],
        );
    }
}

#[test]
fn first_refperf_threads_table_is_a_sweep() {
    let ds = detect_and_parse(
        "rcu-ref-perf: END OF TEST. Calculating average duration per loop (nanoseconds)...\n\
         rcu-ref-perf: \n\
         Threads\tTime(ns)\n\
         1\t3.100\n\
         2\t3.200\n",
    );
    let get = |n: &str| {
        ds.series
            .iter()
            .find(|s| s.spec.key.params.get("threads").map(String::as_str) == Some(n))
            .unwrap()
    };
    samples_eq(get("1"), &[3.1e-9]);
    samples_eq(get("2"), &[3.2e-9]);
}

#[test]
fn kvm_recheck_summary() {
    let ds = detect_and_parse(
        "NOPREEMPT results:\n\
         Points: 3.286 3.395 3.5\n\
         Average reader duration: 3.39367 nanoseconds\n\
         Minimum reader duration: 3.286\n\
         Median reader duration: 3.286\n\
         Maximum reader duration: 3.5\n\
         Computed from refscale printk output.\n",
    );
    let l = Some("NOPREEMPT");
    samples_eq(
        find(&ds, "reader_duration", "all", l, None),
        &ns(&[3.286, 3.395, 3.5]),
    );
    samples_eq(
        find(&ds, "reader_duration", "all", l, Some("mean")),
        &[3.39367e-9],
    );
    samples_eq(
        find(&ds, "reader_duration", "all", l, Some("min")),
        &[3.286e-9],
    );
    samples_eq(
        find(&ds, "reader_duration", "all", l, Some("median")),
        &[3.286e-9],
    );
    samples_eq(
        find(&ds, "reader_duration", "all", l, Some("max")),
        &[3.5e-9],
    );
    assert_eq!(ds.meta["computed_from"], "refscale printk output");
}

#[test]
fn bare_min_median_max_rows() {
    let ds = detect_and_parse(
        "Unmarked accesses:\n\
         \tMinimum\t3.286\t2.851\t3.395\n\
         \tMedian\t3.698\t3.531\t3.4695\n\
         \tMaximum\t4.481\t5.215\t5.157\n\
         Average people would not care.\n",
    );
    samples_eq(
        find(
            &ds,
            "reader_duration",
            "all",
            Some("Unmarked accesses"),
            Some("median"),
        ),
        &ns(&[3.698, 3.531, 3.4695]),
    );
    assert_eq!(ds.series.len(), 3);
}

fn parse_err(text: &[u8]) -> ingest::Error {
    ingest::parse_bytes(Path::new("bad.log"), text, Some("refscale")).unwrap_err()
}

fn kind(e: &ingest::Error) -> &ErrorKind {
    match e {
        ingest::Error::Parse { source, .. } => &source.kind,
        other => panic!("not a parse error: {other}"),
    }
}

#[test]
fn bad_input() {
    assert!(matches!(kind(&parse_err(b"")), ErrorKind::Empty));
    assert!(matches!(
        kind(&parse_err(b"Runs\tTime(ns)\n1\t\0")),
        ErrorKind::Binary { .. }
    ));
    assert!(matches!(
        kind(&parse_err(b"rcu-ref-scale: main_func task started\n")),
        ErrorKind::NothingFound { .. }
    ));
    let neg = parse_err(b"Runs\tTime(ns)\n1\t3.5\n2\t-3.5\n");
    assert_eq!(neg.line(), Some(3));
    assert!(matches!(kind(&neg), ErrorKind::BadValue { .. }));
    let nan = parse_err(b"x results:\nPoints: 1.5 nan\n");
    assert_eq!(nan.line(), Some(2));
    let garbage = parse_err(b"\nMinimum reader duration: fast\n");
    assert_eq!(garbage.line(), Some(2));
    assert!(matches!(kind(&garbage), ErrorKind::Syntax { .. }));
    let e = ingest::parse_file(
        &fixture("rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt"),
        Some("refscale"),
    )
    .unwrap_err();
    assert!(matches!(kind(&e), ErrorKind::NothingFound { .. }), "{e}");
}
