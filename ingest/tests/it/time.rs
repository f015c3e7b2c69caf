//! Golden tests of the `time` format: every value of `fixtures/time/MANIFEST.md`, the other
//! variants (`time -p`, wrapped GNU output, `-v` with m:ss), and bad input.

use std::path::Path;

use ingest::{Dataset, Direction, ErrorKind, Series, Unit};

use crate::common::*;

const SEED000: &str = "time/seed000_bash_time_3runs_ftrace_switch.txt";
const TC2025: &str = "time/lkml_2025_bash_time_tc_qdisc_tab_indented.txt";
const GNU_V: &str = "time/lkml_2006_gnu_time_-v_make_-j5_two_runs.txt";
const GNU_DEFAULT: &str = "time/git_list_2008_gnu_time_default_format_blame.txt";

/// The series of a metric in a labelled block (or the unlabelled one).
#[track_caller]
fn series<'a>(ds: &'a Dataset, metric: &str, label: Option<&str>) -> &'a Series {
    ds.series
        .iter()
        .find(|s| s.spec.key.metric == metric && s.spec.key.label.as_deref() == label)
        .unwrap_or_else(|| panic!("no series {metric} labelled {label:?}"))
}

fn has(ds: &Dataset, metric: &str) -> bool {
    ds.series.iter().any(|s| s.spec.key.metric == metric)
}

fn parse_text(text: &str) -> Dataset {
    ingest::parse_bytes(Path::new("input.txt"), text.as_bytes(), Some("time"))
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

fn parse_err(text: &[u8], format: Option<&str>) -> ingest::Error {
    match ingest::parse_bytes(Path::new("bad.txt"), text, format) {
        Ok((_, ds)) => panic!("expected an error, parsed {:?}", ds.series),
        Err(e) => e,
    }
}

#[test]
fn seed000_six_blocks_of_three_runs() {
    let ds = parse(SEED000, "time");
    // The author's words, asides in parentheses dropped, each "and with reverted ..." read
    // against the paragraph of its section.
    let blocks: [(&str, [[f64; 3]; 3]); 6] = [
        (
            "Now, results with no load on the system; with the commit c229828ca6bc62d",
            [
                [49.393, 49.632, 49.359],
                [0.004, 0.000, 0.004],
                [0.996, 0.880, 0.892],
            ],
        ),
        (
            "Now, results with no load on the system; with reverted c229828ca6bc62d",
            [
                [35.320, 35.687, 35.920],
                [0.004, 0.004, 0.000],
                [1.140, 1.208, 1.152],
            ],
        ),
        (
            "Results with 100% load on one CPU and no load on 2nd CPU with c229828ca6bc62d",
            [
                [44.964, 45.083, 45.171],
                [0.000, 0.000, 0.004],
                [1.580, 1.612, 1.576],
            ],
        ),
        (
            "Results with 100% load on one CPU and no load on 2nd CPU with reverted c229828ca6bc62d",
            [
                [30.816, 31.326, 31.191],
                [0.004, 0.004, 0.008],
                [1.240, 1.248, 1.232],
            ],
        ),
        (
            "Results with 100% load on both CPUs with c229828ca6bc62d",
            [
                [20.294, 20.538, 20.470],
                [0.004, 0.000, 0.000],
                [1.284, 1.388, 1.612],
            ],
        ),
        (
            "Results with 100% load on both CPUs with reverted c229828ca6bc62d",
            [
                [20.305, 20.056, 20.259],
                [0.000, 0.000, 0.000],
                [1.416, 1.452, 1.560],
            ],
        ),
    ];
    assert_eq!(
        ds.labels(),
        blocks.iter().map(|b| b.0.to_string()).collect::<Vec<_>>()
    );
    for (label, [real, user, sys]) in &blocks {
        samples_eq(series(&ds, "real", Some(label)), real);
        samples_eq(series(&ds, "user", Some(label)), user);
        samples_eq(series(&ds, "sys", Some(label)), sys);
    }
    assert_eq!(ds.series.len(), 18);
    assert_eq!(ds.sample_count(), 54);
    for s in &ds.series {
        assert_eq!(s.spec.unit, Unit::Seconds);
        assert_eq!(s.spec.direction, Direction::LowerIsBetter);
        assert_eq!(s.spec.key.statistic, None);
    }
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
    assert_eq!(ds.meta.get("blocks").map(String::as_str), Some("6"));
    let blocks = ds.extra["blocks"].as_array().unwrap();
    assert_eq!(blocks[0]["line"], 4);
    assert_eq!(blocks[5]["line"], 44);
}

/// A mail pasted again and again, cut so that it starts at a continuation (`and with
/// reverted X` with nothing before it): each heading comes back in a new section once, and
/// then the labels repeat. Before, every pass put the sections in front of each other and
/// the labels grew with the input (50 MB of it took more than 20 GB).
#[test]
fn a_repeated_mail_cut_mid_way_keeps_its_labels_bounded() {
    let text = std::fs::read_to_string(fixture(SEED000)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let cut = lines
        .iter()
        .position(|l| l.contains("and with reverted"))
        .unwrap();
    let pass: String = lines[cut - 1..]
        .iter()
        .chain(&lines[..cut - 1])
        .map(|l| format!("{l}\n"))
        .collect();
    let settled = parse_text(&pass.repeat(3)).series.len();
    assert!(settled <= 3 * 18, "{settled} series from 3 passes");
    let ds = parse_text(&pass.repeat(40));
    assert_eq!(ds.series.len(), settled);
    assert_eq!(ds.sample_count(), 40 * 54);
    for label in ds.labels() {
        assert!(
            label.len() <= 300,
            "label of {} bytes: {label:.120}",
            label.len()
        );
    }
}

#[test]
fn tc_qdisc_two_labelled_tab_indented_blocks() {
    let ds = parse(TC2025, "time");
    assert_eq!(ds.labels(), ["without the patchset", "with the patchset"]);
    let without = Some("without the patchset");
    samples_eq(series(&ds, "real", without), &[1.039]);
    samples_eq(series(&ds, "user", without), &[0.001]);
    samples_eq(series(&ds, "sys", without), &[0.069]);
    let with = Some("with the patchset");
    samples_eq(series(&ds, "real", with), &[0.053]);
    samples_eq(series(&ds, "user", with), &[0.000]);
    samples_eq(series(&ds, "sys", with), &[0.051]);
    assert_eq!(ds.sample_count(), 6);
    assert_eq!(
        ds.meta["command"],
        "/usr/sbin/tc qdisc replace dev eth0 root handle 0x1: mq"
    );
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn gnu_verbose_two_runs_hms_elapsed_and_unreported_rss() {
    let ds = parse(GNU_V, "time");
    assert_eq!(ds.labels(), ["-vanilla", "-swap-token"]);
    let expect: [(&str, [(&str, f64); 10]); 2] = [
        (
            "-vanilla",
            [
                ("user", 2557.12),
                ("sys", 1239.14),
                ("cpu_pct", 87.0),
                ("elapsed", 4356.0),
                ("major_faults", 50920.0),
                ("minor_faults", 8988166.0),
                ("voluntary_cs", 129759.0),
                ("involuntary_cs", 146431.0),
                ("swaps", 0.0),
                ("fs_inputs", 0.0),
            ],
        ),
        (
            "-swap-token",
            [
                ("user", 2557.20),
                ("sys", 1122.35),
                ("cpu_pct", 86.0),
                ("elapsed", 4254.0),
                ("major_faults", 56116.0),
                ("minor_faults", 8985073.0),
                ("voluntary_cs", 135533.0),
                ("involuntary_cs", 145494.0),
                ("swaps", 0.0),
                ("fs_inputs", 0.0),
            ],
        ),
    ];
    for (label, values) in &expect {
        for (metric, v) in values {
            samples_eq(series(&ds, metric, Some(label)), &[*v]);
        }
        samples_eq(series(&ds, "fs_outputs", Some(label)), &[0.0]);
    }
    // RSS 0 on a 2.6.18 kernel means "not reported": no sample, not zero memory.
    assert!(!has(&ds, "max_rss"));
    assert!(!has(&ds, "avg_rss"));
    let user = series(&ds, "user", Some("-vanilla"));
    assert_eq!(user.spec.unit, Unit::Seconds);
    let cpu = series(&ds, "cpu_pct", Some("-vanilla"));
    assert_eq!(
        (cpu.spec.unit.clone(), cpu.spec.direction),
        (Unit::Percent, Direction::Neutral)
    );
    let faults = series(&ds, "major_faults", Some("-vanilla"));
    assert_eq!(
        (faults.spec.unit.clone(), faults.spec.direction),
        (Unit::Count, Direction::Neutral)
    );
    assert_eq!(ds.meta["command"], "make -j5");
    assert_eq!(ds.meta["exit_status"], "0");
    assert_eq!(ds.meta["page_size"], "4096");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn gnu_default_before_after() {
    let ds = parse(GNU_DEFAULT, "time");
    assert_eq!(
        ds.labels(),
        ["For example, before this commit", "With this commit"]
    );
    let before = Some("For example, before this commit");
    let after = Some("With this commit");
    samples_eq(series(&ds, "user", before), &[101.52]);
    samples_eq(series(&ds, "sys", before), &[0.17]);
    samples_eq(series(&ds, "elapsed", before), &[101.73]);
    samples_eq(series(&ds, "cpu_pct", before), &[99.0]);
    samples_eq(series(&ds, "fs_inputs", before), &[0.0]);
    samples_eq(series(&ds, "fs_outputs", before), &[0.0]);
    samples_eq(series(&ds, "major_faults", before), &[0.0]);
    samples_eq(series(&ds, "minor_faults", before), &[39561.0]);
    samples_eq(series(&ds, "swaps", before), &[0.0]);
    samples_eq(series(&ds, "user", after), &[80.38]);
    samples_eq(series(&ds, "sys", after), &[0.30]);
    samples_eq(series(&ds, "elapsed", after), &[80.81]);
    samples_eq(series(&ds, "cpu_pct", after), &[99.0]);
    samples_eq(series(&ds, "minor_faults", after), &[50979.0]);
    samples_eq(series(&ds, "major_faults", after), &[0.0]);
    // avgtext, avgdata and maxresident are 0 (not reported): no samples.
    assert!(!has(&ds, "max_rss") && !has(&ds, "avg_text") && !has(&ds, "avg_data"));
    assert_eq!(
        ds.meta["command"],
        "git blame -M -C -C -p --incremental server.c >/dev/null"
    );
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn posix_p_format_and_unlabelled_blocks_pool() {
    let ds = parse_text("real 1.03\nuser 0.50\nsys 0.20\n\nreal 1.10\nuser 0.52\nsys 0.21\n");
    samples_eq(series(&ds, "real", None), &[1.03, 1.10]);
    samples_eq(series(&ds, "user", None), &[0.50, 0.52]);
    samples_eq(series(&ds, "sys", None), &[0.20, 0.21]);
    let sniff = ingest::formats::by_name("time").unwrap();
    assert!(sniff.sniff("real 1.03\nuser 0.50\nsys 0.20\n") >= 50);
}

#[test]
fn minutes_grow_without_hours() {
    let ds = parse_text("real\t4m4.969s\nuser\t1m16.887s\nsys\t0m0.5s\n");
    samples_eq(series(&ds, "real", None), &[244.969]);
    samples_eq(series(&ds, "user", None), &[76.887]);
}

#[test]
fn gnu_default_wrapped_with_cpu_unknown_and_rss() {
    let text = "Command exited with non-zero status 2\n\
                0.00user 0.00system 0:00.00elapsed ?%CPU\n\
                > (0avgtext+0avgdata 2048maxresident)k\n\
                8inputs+16outputs (1major+120minor)pagefaults 0swaps\n";
    let ds = parse_text(text);
    samples_eq(series(&ds, "elapsed", None), &[0.0]);
    assert!(!has(&ds, "cpu_pct"), "?%CPU gives no sample");
    let rss = series(&ds, "max_rss", None);
    samples_eq(rss, &[2048.0 * 1024.0]);
    assert_eq!(
        (rss.spec.unit.clone(), rss.spec.direction),
        (Unit::Bytes, Direction::LowerIsBetter)
    );
    samples_eq(series(&ds, "fs_inputs", None), &[8.0]);
    samples_eq(series(&ds, "fs_outputs", None), &[16.0]);
    samples_eq(series(&ds, "major_faults", None), &[1.0]);
    samples_eq(series(&ds, "minor_faults", None), &[120.0]);
    assert_eq!(ds.meta["exit_status"], "2");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn gnu_verbose_m_ss_elapsed_then_bash_block() {
    let text = "$ /usr/bin/time -v ./bench\n\
                \tCommand being timed: \"./bench\"\n\
                \tUser time (seconds): 4.10\n\
                \tSystem time (seconds): 0.80\n\
                \tPercent of CPU this job got: 134%\n\
                \tElapsed (wall clock) time (h:mm:ss or m:ss): 0:04.94\n\
                \tMaximum resident set size (kbytes): 5120\n\
                \tExit status: 0\n\
                \n\
                real\t0m4.950s\n\
                user\t0m4.100s\n\
                sys\t0m0.800s\n";
    let ds = parse_text(text);
    samples_eq(series(&ds, "elapsed", None), &[4.94]);
    samples_eq(series(&ds, "cpu_pct", None), &[134.0]);
    samples_eq(series(&ds, "max_rss", None), &[5120.0 * 1024.0]);
    samples_eq(series(&ds, "real", None), &[4.95]);
    assert_eq!(ds.meta["command"], "./bench");
}

#[test]
fn ragged_rows_warn() {
    let ds = parse_text("real 0m1.0s 0m1.1s\nuser 0m0.1s\nsys 0m0.1s 0m0.1s\n");
    samples_eq(series(&ds, "real", None), &[1.0, 1.1]);
    assert_eq!(ds.warnings.len(), 1);
    assert_eq!(ds.warnings[0].line, 1);
}

#[test]
fn detection_scores() {
    let time = ingest::formats::by_name("time").unwrap();
    for f in [SEED000, TC2025, GNU_V, GNU_DEFAULT] {
        let text = std::fs::read_to_string(fixture(f)).unwrap();
        assert!(time.sniff(&text) >= 80, "{f}");
    }
    // Prose that merely starts with "real" is not a time block.
    assert_eq!(time.sniff("real world numbers\nuser space\n"), 0);
}

/// A report trimmed to its `real` row is still found by detection, as `time` (it scores
/// low, so any other format claiming the head would win).
#[test]
fn a_lone_real_row_is_detected() {
    let time = ingest::formats::by_name("time").unwrap();
    let lone = "real\t0m1.000s\n";
    let score = time.sniff(lone);
    assert!(score > 0 && score < 60, "{score}");
    let (summary, ds) = ingest::parse_bytes(Path::new("real.txt"), lone.as_bytes(), None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(summary.format, "time");
    samples_eq(series(&ds, "real", None), &[1.0]);
    // `time -p`'s bare seconds alone are too plain to claim.
    assert_eq!(time.sniff("real 1.00\n"), 0);
}

/// A `user` or `sys` row of a block whose value is not a time is read as prose, with a
/// warning at its line rather than silently.
#[test]
fn a_row_without_a_time_warns() {
    let ds = parse_text("real\t0m1.000s\nuser\tgarbage\n");
    samples_eq(series(&ds, "real", None), &[1.0]);
    assert!(!has(&ds, "user"));
    one_warning(&ds, 2, "`user` row without a time");
    // Outside a block, such a line is prose and says nothing.
    let ds = parse_text("user space got slower:\n\nreal\t0m1.000s\nuser\t0m0.5s\nsys\t0m0.1s\n");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
    // A row the block has already seen starts no warning either: it is the next block's.
    let ds = parse_text("real\t0m1.000s\nuser\t0m0.5s\nsys\t0m0.1s\nreal world figures follow\n");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn negative_time_is_an_error_with_its_line() {
    let e = parse_err(
        b"before:\n\nreal\t-0m1.0s\nuser\t0m0.1s\nsys\t0m0.0s\n",
        Some("time"),
    );
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(e.to_string().starts_with("bad.txt: line 3:"), "{e}");
    assert!(e.to_string().contains("not negative"), "{e}");
    // In a later block, where the row's series is known and its values read in place.
    let e = parse_err(
        b"real\t0m1.0s\nuser\t0m0.1s\nsys\t0m0.0s\n\nreal\t0m1.0s -0m1.0s\n",
        Some("time"),
    );
    assert_eq!(e.line(), Some(5), "{e}");
    assert!(e.to_string().contains("not negative"), "{e}");
}

#[test]
fn malformed_value_is_an_error_with_its_line() {
    let e = parse_err(b"real\t0m1.0s\nuser\t0m0.x1s\n", Some("time"));
    assert_eq!(e.line(), Some(2), "{e}");
    let e = parse_err(b"1.0user 0.1system 1:xelapsed 99%CPU\n", Some("time"));
    assert_eq!(e.line(), Some(1), "{e}");
}

#[test]
fn empty_binary_and_wrong_format() {
    let e = parse_err(b"", Some("time"));
    assert!(
        matches!(
            e,
            ingest::Error::Parse {
                source: ingest::ParseError {
                    kind: ErrorKind::Empty,
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.path(), Some(Path::new("bad.txt")));

    let e = parse_err(b"real\t0m1.0s\n\0\x01\x02", Some("time"));
    assert!(
        matches!(
            e,
            ingest::Error::Parse {
                source: ingest::ParseError {
                    kind: ErrorKind::Binary { .. },
                    ..
                },
                ..
            }
        ),
        "{e}"
    );

    // A NUL after the sniffed head is found by the line reader, with its line.
    let mut big = "real\t0m1.000s\n".repeat(5000).into_bytes();
    big.extend_from_slice(b"\0garbage\n");
    let e = parse_err(&big, Some("time"));
    assert!(
        matches!(
            e,
            ingest::Error::Parse {
                source: ingest::ParseError {
                    kind: ErrorKind::Binary { .. },
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.line(), Some(5001));

    // A perf stat output forced through the time parser holds nothing of it.
    let perf = std::fs::read(fixture("perf_stat/doc54_perf_stat_make.txt")).unwrap();
    let e = parse_err(&perf, Some("time"));
    assert!(
        matches!(
            e,
            ingest::Error::Parse {
                source: ingest::ParseError {
                    kind: ErrorKind::NothingFound { .. },
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.path(), Some(Path::new("bad.txt")));
}

/// The sniffers of `time`, `hackbench` and `perf_stat` claim none of the other formats'
/// samples (each scores 0 on them).
#[test]
fn sniffers_leave_other_formats_alone() {
    let mine = ["time", "hackbench", "perf_stat"];
    for dir in [
        "function_graph",
        "latency",
        "rcuscale",
        "refscale",
        "trace_stat",
    ] {
        for entry in std::fs::read_dir(fixture(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                continue;
            }
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            for name in mine {
                let score = ingest::formats::by_name(name).unwrap().sniff(&text);
                assert_eq!(score, 0, "{name} claims {}", path.display());
            }
        }
    }
}
