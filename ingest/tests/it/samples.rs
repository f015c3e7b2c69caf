//! Tests of the generic samples format: plain numbers, CSV (with sweeps) and quiescent JSON,
//! with the fixtures derived from seeds 001 and 003 (samples/README.md).

use std::path::Path;

use ingest::{Dataset, Direction, ErrorKind, Series, Unit};

use crate::common::*;

fn detect(text: &str) -> Dataset {
    let (summary, ds) = ingest::parse_bytes(Path::new("numbers.txt"), text.as_bytes(), None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.format, "samples");
    ds
}

fn labelled<'a>(ds: &'a Dataset, metric: &str, label: &str) -> &'a Series {
    ds.get_labelled(metric, "all", label)
        .unwrap_or_else(|| panic!("no {metric} [{label}]"))
}

#[test]
fn seed003_boot_synchronize_sched() {
    let ds = parse("samples/seed003_boot_synchronize_sched.csv", "samples");
    let without = labelled(&ds, "synchronize_sched_total", "without this patch");
    assert_eq!(without.spec.unit, Unit::Seconds);
    assert_eq!(without.spec.direction, Direction::LowerIsBetter);
    samples_eq(without, &[4.32]);
    samples_eq(
        labelled(&ds, "synchronize_sched_total", "with this patch"),
        &[3.6],
    );
    for label in ["without this patch", "with this patch"] {
        let calls = labelled(&ds, "synchronize_sched_calls", label);
        assert_eq!(calls.spec.unit, Unit::Count);
        assert_eq!(calls.spec.direction, Direction::Neutral);
        samples_eq(calls, &[202.0]);
    }
    assert_eq!(ds.labels(), vec!["without this patch", "with this patch"]);
    assert_eq!(ds.sample_count(), 4);
}

#[test]
fn seed001_sweep_csv_matches_the_rcuscale_table() {
    let csv = parse("samples/seed001_rcuperf_preempt_off_sweep.csv", "samples");
    let table = parse("rcuscale/seed001_rcuperf_median_table.txt", "rcuscale");
    assert_eq!(csv.series, table.series);
    let s = csv
        .series
        .iter()
        .find(|s| {
            s.spec.key.label.as_deref() == Some("v5.1 (deferred)")
                && s.spec.key.params["preempt_off_ms"] == "50"
        })
        .unwrap();
    assert_eq!(s.spec.key.statistic.as_deref(), Some("median"));
    samples_eq(s, &[0.1]);
}

#[test]
fn plain_numbers_as_ministat_reads_them() {
    let ds = detect("# boot times\n4.32\n\n3.6 extra columns ignored\r\n  1e-3\n-2\n3,228,188\n");
    let s = ds.get("value", "all").unwrap();
    assert_eq!(s.spec.unit, Unit::Other("1".into()));
    assert_eq!(s.spec.direction, Direction::LowerIsBetter);
    samples_eq(s, &[4.32, 3.6, 0.001, -2.0, 3228188.0]);
    assert_eq!(ds.series.len(), 1);
}

#[test]
fn csv_units_scopes_statistics_and_sweeps() {
    let text = "\
metric,value,unit,scope,direction,statistic,label,param.load,param.cpus
latency,1.5,ms,cpu0,,,,idle,4
latency,250,us,cpu0,,,,idle,4
latency,2000,ns,cpu1,,,,idle,4
latency,3,ms,cpu0,,,,\"busy, 2 tasks\",4
rss,4,KiB,,,,,,
rss,1,MiB,,,,,,
ops,1000,ops/sec,,,,,,
hits,7,count,,,,,,
util,55,%,,higher_is_better,,,,
p99,9,s,,,p99,after,,
";
    let ds = detect(text);
    let idle = |scope: &str| {
        ds.series
            .iter()
            .find(|s| {
                s.spec.key.metric == "latency"
                    && s.spec.key.scope == scope
                    && s.spec.key.params.get("load").map(String::as_str) == Some("idle")
            })
            .unwrap()
    };
    samples_eq(idle("cpu0"), &[0.0015, 0.00025]);
    samples_eq(idle("cpu1"), &[0.000002]);
    assert_eq!(idle("cpu0").spec.key.params["cpus"], "4");
    let busy = ds
        .series
        .iter()
        .find(|s| s.spec.key.params.get("load").map(String::as_str) == Some("busy, 2 tasks"))
        .unwrap();
    samples_eq(busy, &[0.003]);
    let rss = ds.get("rss", "all").unwrap();
    assert_eq!(rss.spec.unit, Unit::Bytes);
    assert!(rss.spec.key.params.is_empty());
    samples_eq(rss, &[4096.0, 1048576.0]);
    let ops = ds.get("ops", "all").unwrap();
    assert_eq!(ops.spec.unit, Unit::Other("ops/sec".into()));
    assert_eq!(ops.spec.direction, Direction::HigherIsBetter);
    assert_eq!(
        ds.get("hits", "all").unwrap().spec.direction,
        Direction::Neutral
    );
    let util = ds.get("util", "all").unwrap();
    assert_eq!(util.spec.unit, Unit::Percent);
    assert_eq!(util.spec.direction, Direction::HigherIsBetter);
    let p99 = ds.get("p99", "all").unwrap();
    assert_eq!(p99.spec.key.statistic.as_deref(), Some("p99"));
    assert_eq!(p99.spec.key.label.as_deref(), Some("after"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn csv_minimal_header_and_unknown_columns() {
    let ds = detect("value,metric,host\n1.5,boot,a\n2.5,boot,b\n");
    let s = ds.get("boot", "all").unwrap();
    assert_eq!(s.spec.unit, Unit::Other("1".into()));
    samples_eq(s, &[1.5, 2.5]);
    assert_eq!(ds.warnings.len(), 1);
    assert_eq!(ds.warnings[0].line, 1);
    assert!(ds.warnings[0].message.contains("host"));
}

#[test]
fn json_round_trip_of_parse_output() {
    let parsed = ingest::parse_file(
        &fixture("rcuscale/lkml_2025_shazptr_kvm_recheck_summaries_tab_indented.txt"),
        None,
    )
    .unwrap();
    let json = serde_json::to_string_pretty(&parsed).unwrap();
    let back = detect(&json);
    same_series(&back, &parsed.dataset);
    assert_eq!(back.meta, parsed.dataset.meta);

    let sweep = parse("samples/seed001_rcuperf_preempt_off_sweep.csv", "samples");
    let many = serde_json::to_string(&vec![&parsed, &parsed]).unwrap();
    let back = detect(&many);
    // The same series twice: the samples pool.
    assert_eq!(back.series.len(), parsed.dataset.series.len());
    assert_eq!(back.sample_count(), 2 * parsed.dataset.sample_count());
    let swept = serde_json::to_string(&serde_json::json!({ "series": sweep.series })).unwrap();
    same_series(&detect(&swept), &sweep);
}

/// Same keys, units and directions; samples equal to 1e-9 relative (serde_json's default float
/// parsing may differ from the printed value in the last bit).
fn same_series(a: &Dataset, b: &Dataset) {
    assert_eq!(a.series.len(), b.series.len());
    for (x, y) in a.series.iter().zip(&b.series) {
        assert_eq!(x.spec, y.spec);
        samples_eq(x, &y.samples);
    }
}

#[test]
fn json_unit_conversion_and_defaults() {
    let ds = detect(
        r#"{"series": [{"metric": "t", "unit": "ms", "samples": [1, 2.5]},
                        {"metric": "n", "unit": "count", "scope": "cpu1", "params": {"k": 3}, "samples": [4]}],
            "meta": {"kernel": "6.1", "runs": 2}}"#,
    );
    let t = ds.get("t", "all").unwrap();
    assert_eq!(t.spec.unit, Unit::Seconds);
    samples_eq(t, &[0.001, 0.0025]);
    let n = ds.get("n", "cpu1").unwrap();
    assert_eq!(n.spec.direction, Direction::Neutral);
    assert_eq!(n.spec.key.params["k"], "3");
    assert_eq!(ds.meta["kernel"], "6.1");
    assert_eq!(ds.meta["runs"], "2");
}

fn parse_err(text: &[u8]) -> ingest::Error {
    ingest::parse_bytes(Path::new("bad.txt"), text, Some("samples")).unwrap_err()
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
        kind(&parse_err(b"1\n2\0\n")),
        ErrorKind::Binary { .. }
    ));
    assert!(matches!(
        kind(&parse_err(b"# only a comment\n\n")),
        ErrorKind::NothingFound { .. }
    ));
    let word = parse_err(b"1\n2\nabc\n");
    assert_eq!(word.line(), Some(3));
    assert!(matches!(kind(&word), ErrorKind::Syntax { .. }));
    let nan = parse_err(b"1\nnan\n");
    assert_eq!(nan.line(), Some(2));
    assert!(matches!(kind(&nan), ErrorKind::BadValue { .. }));
    let inf = parse_err(b"1\n2\n-inf\n");
    assert_eq!(inf.line(), Some(3));

    let fields = parse_err(b"metric,value\nx,1\nx,2,3\n");
    assert_eq!(fields.line(), Some(3));
    let value = parse_err(b"metric,value\nx,fast\n");
    assert_eq!(value.line(), Some(2));
    let negative = parse_err(b"metric,value,unit\nx,1,s\nx,-1,s\n");
    assert_eq!(negative.line(), Some(3));
    assert!(matches!(kind(&negative), ErrorKind::BadValue { .. }));
    let direction = parse_err(b"metric,value,direction\nx,1,sideways\n");
    assert_eq!(direction.line(), Some(2));
    let quote = parse_err(b"metric,value,label\nx,1,\"open\n");
    assert_eq!(quote.line(), Some(2));
    assert!(matches!(
        kind(&parse_err(b"metric,value\n")),
        ErrorKind::NothingFound { .. }
    ));

    let json = parse_err(b"{\"series\": [\n  {\"metric\": \"x\", \"samples\": [1, null]}\n]}\n");
    assert_eq!(json.line(), Some(2));
    let json =
        parse_err(b"{\"series\": [{\"metric\": \"x\", \"unit\": \"s\", \"samples\": [-1]}]}");
    assert!(matches!(kind(&json), ErrorKind::BadValue { .. }));
    let json = parse_err(b"{\"nothing\": 1}");
    assert!(matches!(kind(&json), ErrorKind::Syntax { .. }), "{json}");
}

#[test]
fn sniffing_stays_low_for_generic_content() {
    let samples = ingest::formats::by_name("samples").unwrap();
    assert_eq!(samples.sniff("1\n2\n3\n"), 10);
    assert_eq!(samples.sniff("metric,value\nx,1\n"), 60);
    assert_eq!(samples.sniff("{\"series\": []}"), 60);
    assert_eq!(samples.sniff("{\"other\": []}"), 0);
    assert_eq!(samples.sniff("real\t0m1.000s\n"), 0);
    assert_eq!(samples.sniff("# comment\n\n"), 0);
}
