//! Golden tests of the `hackbench` format: every value of `fixtures/hackbench/MANIFEST.md`, the
//! `perf bench sched pipe` sample of `fixtures/other`, the other header styles, and bad input.

use std::path::Path;

use ingest::{Dataset, Direction, ErrorKind, Series, Unit};

use crate::common::*;

const SEED002: &str = "hackbench/seed002_hackbench_50_time_only.txt";
const MESSAGING: &str = "hackbench/doc54_perf_bench_sched_messaging.txt";
const TABLE2021: &str = "hackbench/lkml_2021_hackbench_threaded_pipe_header_and_avg_table.txt";
const PIPE: &str = "other/doc54_perf_bench_sched_pipe_default_format.txt";

#[track_caller]
fn series<'a>(ds: &'a Dataset, metric: &str, label: Option<&str>) -> &'a Series {
    ds.series
        .iter()
        .find(|s| s.spec.key.metric == metric && s.spec.key.label.as_deref() == label)
        .unwrap_or_else(|| panic!("no series {metric} labelled {label:?}"))
}

fn parse_text(text: &str) -> Dataset {
    ingest::parse_bytes(Path::new("input.txt"), text.as_bytes(), Some("hackbench"))
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

fn parse_err(text: &[u8], format: Option<&str>) -> ingest::Error {
    match ingest::parse_bytes(Path::new("bad.txt"), text, format) {
        Ok((_, ds)) => panic!("expected an error, parsed {:?}", ds.series),
        Err(e) => e,
    }
}

fn kind(e: &ingest::Error) -> &ErrorKind {
    match e {
        ingest::Error::Parse { source, .. } => &source.kind,
        other => panic!("not a parse error: {other}"),
    }
}

#[test]
fn seed002_time_only() {
    let ds = parse(SEED002, "hackbench");
    let time = series(&ds, "time", None);
    samples_eq(time, &[18.693]);
    assert_eq!(time.spec.unit, Unit::Seconds);
    assert_eq!(time.spec.direction, Direction::LowerIsBetter);
    assert_eq!(ds.series.len(), 1);
    assert_eq!(ds.meta["command"], "/usr/local/bin/hackbench 50");
    // Old syntax: the first number is the group count.
    assert_eq!(ds.meta["groups"], "50");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn perf_bench_messaging_two_labelled_runs() {
    let ds = parse(MESSAGING, "hackbench");
    assert_eq!(ds.labels(), ["default", "-t -g 20"]);
    samples_eq(series(&ds, "total_time", Some("default")), &[0.308]);
    samples_eq(series(&ds, "total_time", Some("-t -g 20")), &[0.582]);
    assert_eq!(ds.series.len(), 2);
    assert_eq!(ds.meta["benchmark"], "sched/messaging");
    assert_eq!(ds.meta["per_group"], "20");
    // The runs differ in groups and mode: kept per block.
    assert!(!ds.meta.contains_key("groups"));
    let blocks = ds.extra["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    let (a, b) = (&blocks[0]["meta"], &blocks[1]["meta"]);
    assert_eq!(blocks[0]["label"], "default");
    assert_eq!(a["command"], "perf bench sched messaging");
    assert_eq!(
        (
            a["mode"].as_str(),
            a["groups"].as_str(),
            a["tasks"].as_str()
        ),
        (Some("process"), Some("10"), Some("400"))
    );
    assert_eq!(a["per_group"], "20");
    assert_eq!(blocks[1]["label"], "-t -g 20");
    assert_eq!(b["command"], "perf bench sched messaging -t -g 20");
    assert_eq!(
        (
            b["mode"].as_str(),
            b["groups"].as_str(),
            b["tasks"].as_str()
        ),
        (Some("thread"), Some("20"), Some("800"))
    );
    assert_eq!(b["per_group"], "20");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn header_in_meta_and_author_table_as_mean_summaries() {
    let ds = parse(TABLE2021, "hackbench");
    for (k, v) in [
        ("mode", "thread"),
        ("groups", "6"),
        ("fds", "2"),
        ("tasks", "12"),
        ("loops", "1000000"),
        ("bytes", "100"),
        ("ipc", "pipe"),
        (
            "command",
            "numactl -N 0 hackbench -p -T -l 1000000 -f 1 -g 6",
        ),
    ] {
        assert_eq!(ds.meta.get(k).map(String::as_str), Some(v), "meta {k}");
    }
    let groups = ["6", "12", "18", "24", "28", "32"];
    let rows: [(&str, [f64; 6]); 2] = [
        ("w/o", [1.2474, 1.5635, 1.5133, 1.4796, 1.6177, 1.7898]),
        ("w/", [1.1458, 1.3309, 1.3416, 1.4990, 1.9212, 2.3411]),
    ];
    for (label, values) in &rows {
        for (g, v) in groups.iter().zip(values) {
            let s = ds
                .series
                .iter()
                .find(|s| {
                    s.spec.key.label.as_deref() == Some(label)
                        && s.spec.key.params.get("groups").map(String::as_str) == Some(g)
                })
                .unwrap_or_else(|| panic!("no {label} g={g}"));
            assert_eq!(s.spec.key.metric, "time");
            assert_eq!(s.spec.key.statistic.as_deref(), Some("mean"));
            assert_eq!(s.spec.unit, Unit::Seconds);
            samples_eq(s, &[*v]);
        }
    }
    assert_eq!(ds.series.len(), 12);
    // No raw `Time:` line: nothing is a plain sample.
    assert!(ds.series.iter().all(|s| s.spec.key.statistic.is_some()));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn perf_bench_sched_pipe() {
    let ds = parse(PIPE, "hackbench");
    samples_eq(series(&ds, "total_time", Some("default")), &[5.855]);
    let per_op = series(&ds, "time_per_op", Some("default"));
    samples_eq(per_op, &[5.855061e-6]);
    assert_eq!(per_op.spec.unit, Unit::Seconds);
    let ops = series(&ds, "ops_per_sec", Some("default"));
    samples_eq(ops, &[170792.0]);
    assert_eq!(ops.spec.unit, Unit::Other("ops/s".into()));
    assert_eq!(ops.spec.direction, Direction::HigherIsBetter);
    assert_eq!(ds.meta["benchmark"], "sched/pipe");
    assert_eq!(ds.meta["ops"], "1000000");
    assert_eq!(ds.meta["command"], "perf bench sched pipe");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn wrapped_rt_tests_header_and_several_runs() {
    let text = "> Running in process mode with 10 groups using 40 file descriptors\n\
                > each (== 400 tasks)\n\
                > Each sender will pass 100 messages of 100000 bytes\n\
                > Time: 1.234\n\
                > Time: 1.250\n";
    let ds = parse_text(text);
    samples_eq(series(&ds, "time", None), &[1.234, 1.250]);
    for (k, v) in [
        ("mode", "process"),
        ("groups", "10"),
        ("fds", "40"),
        ("tasks", "400"),
        ("loops", "100"),
        ("bytes", "100000"),
    ] {
        assert_eq!(ds.meta.get(k).map(String::as_str), Some(v), "meta {k}");
    }
}

#[test]
fn old_header_and_prose_labels() {
    let text = "before:\nRunning with 10*40 (== 400) tasks.\nTime: 2.5\n\nafter:\nRunning with 10*40 (== 400) tasks.\nTime: 2.1\nTime: 2.2\n";
    let ds = parse_text(text);
    samples_eq(series(&ds, "time", Some("before")), &[2.5]);
    samples_eq(series(&ds, "time", Some("after")), &[2.1, 2.2]);
    assert_eq!(ds.meta["groups"], "10");
    assert_eq!(ds.meta["tasks"], "400");
    assert_eq!(ds.meta["per_group"], "40");
}

#[test]
fn current_perf_style() {
    let text = "# Running 'sched/messaging' benchmark:\n\
                # 20 sender and receiver threads per group\n\
                # 10 groups == 400 threads run\n\
                \n     Total time: 0.308 [sec]\n\
                # Running 'sched/pipe' benchmark:\n\
                # Executed 1000000 pipe operations between two threads\n\
                \n     Total time: 5.855 [sec]\n\
                \n       5.855061 usecs/op\n         170792 ops/sec\n";
    let ds = parse_text(text);
    samples_eq(series(&ds, "total_time", None), &[0.308, 5.855]);
    samples_eq(series(&ds, "ops_per_sec", None), &[170792.0]);
    let blocks = ds.extra["blocks"].as_array().unwrap();
    assert_eq!(blocks[0]["meta"]["benchmark"], "sched/messaging");
    assert_eq!(blocks[0]["meta"]["mode"], "thread");
    assert_eq!(blocks[1]["meta"]["benchmark"], "sched/pipe");
    assert_eq!(blocks[1]["meta"]["ops"], "1000000");
}

#[test]
fn detection() {
    let hb = ingest::formats::by_name("hackbench").unwrap();
    for f in [SEED002, MESSAGING, TABLE2021, PIPE] {
        let text = std::fs::read_to_string(fixture(f)).unwrap();
        assert!(hb.sniff(&text) >= 60, "{f}");
    }
    // perf stat wrapped around hackbench is perf_stat's, not ours.
    let slob = std::fs::read_to_string(fixture(
        "perf_stat/lkml_2021_perf_stat_hackbench_slob_cpu-clock_msec_tabs.txt",
    ))
    .unwrap();
    let perf = ingest::formats::by_name("perf_stat").unwrap();
    assert!(hb.sniff(&slob) < perf.sniff(&slob));
}

#[test]
fn bad_values_are_errors_with_their_line() {
    let e = parse_err(
        b"Running with 10*40 (== 400) tasks.\nTime: nan\n",
        Some("hackbench"),
    );
    assert_eq!(e.line(), Some(2), "{e}");
    let e = parse_err(b"Time: 1.0\nTime: -3.5\n", Some("hackbench"));
    assert_eq!(e.line(), Some(2), "{e}");
    assert!(matches!(kind(&e), ErrorKind::BadValue { .. }), "{e}");
    assert!(e.to_string().starts_with("bad.txt: line 2:"), "{e}");
}

#[test]
fn empty_binary_and_wrong_format() {
    assert!(matches!(
        kind(&parse_err(b"", Some("hackbench"))),
        ErrorKind::Empty
    ));
    assert!(matches!(
        kind(&parse_err(b"Time: 1.0\n\0\0", Some("hackbench"))),
        ErrorKind::Binary { .. }
    ));
    let time = std::fs::read(fixture("time/seed000_bash_time_3runs_ftrace_switch.txt")).unwrap();
    let e = parse_err(&time, Some("hackbench"));
    assert!(matches!(kind(&e), ErrorKind::NothingFound { .. }), "{e}");
    assert_eq!(e.path(), Some(Path::new("bad.txt")));
}

#[test]
fn prose_time_line_warns() {
    let ds = parse_text("Time: 1.5\nTime: about two seconds more\n");
    samples_eq(series(&ds, "time", None), &[1.5]);
    assert_eq!(ds.warnings.len(), 1);
    assert_eq!(ds.warnings[0].line, 2);
}
