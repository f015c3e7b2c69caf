//! Golden tests of the `trace_stat` format against `fixtures/trace_stat/MANIFEST.md`, plus
//! synthetic variants (file-name CPUs, header-less concatenations, old column sets) and bad input.

use std::path::Path;

use ingest::{Dataset, Direction, ErrorKind, Unit};

use crate::common::*;

const SEED004: &str = "trace_stat/seed004_head_function_star_4cpu_collapsed_ws.txt";
const STABLE: &str = "trace_stat/lkml_2022_stable_rcu_preempt_deferred_qs_single.txt";
const IW_WAKEUP: &str = "trace_stat/lkml_2024_call_rcu_tasks_iw_wakeup_head_4cpu_before_after.txt";
const VMALLOC: &str = "trace_stat/lkml_2015_vmalloc_before_after_function0_scenario1.txt";

/// The single sample of `FUNC.what` in `scope` under `label` (None: unlabelled).
#[track_caller]
fn value(ds: &Dataset, func: &str, what: &str, scope: &str, label: Option<&str>) -> f64 {
    let metric = format!("{func}.{what}");
    let s = ds
        .series
        .iter()
        .find(|s| {
            s.spec.key.metric == metric
                && s.spec.key.scope == scope
                && s.spec.key.label.as_deref() == label
        })
        .unwrap_or_else(|| panic!("no series {metric} {scope} {label:?}"));
    assert_eq!(
        s.samples.len(),
        1,
        "{metric} {scope} {label:?}: one sample per block"
    );
    s.samples[0]
}

/// Asserts one row: hit, time/avg in µs and s^2 in µs² as printed.
#[track_caller]
fn row(ds: &Dataset, func: &str, cpu: u32, label: Option<&str>, printed: (f64, f64, f64, f64)) {
    let scope = format!("cpu{cpu}");
    let (hit, time_us, avg_us, s2_us2) = printed;
    close(value(ds, func, "hit", &scope, label), hit);
    close(value(ds, func, "time", &scope, label), time_us / 1e6);
    close(value(ds, func, "avg", &scope, label), avg_us / 1e6);
    close(value(ds, func, "s2", &scope, label), s2_us2 * 1e-12);
}

fn parse_text(name: &str, text: &str) -> Dataset {
    let (summary, ds) = ingest::parse_bytes(Path::new(name), text.as_bytes(), Some("trace_stat"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(summary.format, "trace_stat");
    ds
}

fn parse_err(name: &str, bytes: &[u8], format: Option<&str>) -> ingest::Error {
    match ingest::parse_bytes(Path::new(name), bytes, format) {
        Ok((_, ds)) => panic!("{name}: expected an error, parsed {ds:?}"),
        Err(e) => e,
    }
}

#[test]
fn seed004_collapsed_whitespace_two_labelled_runs() {
    let ds = parse(SEED004, "trace_stat");
    let f = "rcu_preempt_deferred_qs_handle";
    assert_eq!(ds.labels(), ["original", "apply patch"]);
    let o = Some("original");
    row(&ds, f, 0, o, (838746.0, 182650.3, 0.217, 0.004));
    row(&ds, f, 1, o, (841768.0, 191138.6, 0.227, 0.024));
    row(&ds, f, 2, o, (828243.0, 180455.6, 0.217, 0.004));
    row(&ds, f, 3, o, (810258.0, 189158.1, 0.233, 0.023));
    let p = Some("apply patch");
    row(&ds, f, 0, p, (302373.0, 67434.95, 0.223, 0.001));
    row(&ds, f, 1, p, (307174.0, 68398.34, 0.222, 0.002));
    row(&ds, f, 2, p, (250910.0, 56157.42, 0.223, 0.002));
    row(&ds, f, 3, p, (279902.0, 62644.64, 0.223, 0.003));

    // Totals over the 4 CPUs, per label: the sums the thread argued about.
    let hit_o = value(&ds, f, "hit", "all", o);
    let hit_p = value(&ds, f, "hit", "all", p);
    close(hit_o, 3_319_015.0);
    close(hit_p, 1_140_359.0);
    assert_eq!(format!("{:.1}", hit_o / hit_p), "2.9", "the 2.9x reduction");
    let time_o = (182650.3 + 191138.6 + 180455.6 + 189158.1) / 1e6;
    close(value(&ds, f, "time", "all", o), time_o);
    close(value(&ds, f, "avg", "all", o), time_o / 3_319_015.0);
    let time_p = (67434.95 + 68398.34 + 56157.42 + 62644.64) / 1e6;
    close(value(&ds, f, "time", "all", p), time_p);
    close(value(&ds, f, "avg", "all", p), time_p / 1_140_359.0);
    // s^2 cannot be combined across CPUs.
    assert!(
        ds.series
            .iter()
            .all(|s| !(s.spec.key.scope == "all" && s.spec.key.metric.ends_with(".s2")))
    );

    assert_eq!(ds.meta["cpus"], "4");
    assert_eq!(ds.meta["tables"], "8");
    assert!(!ds.meta.contains_key("cpu_note"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
    // 8 tables x 4 series, plus 2 labels x 3 totals.
    assert_eq!(ds.series.len(), 8 * 4 + 2 * 3);
    assert_eq!(ds.sample_count(), 38);
}

#[test]
fn seed004_units_and_directions() {
    let ds = parse(SEED004, "trace_stat");
    let f = "rcu_preempt_deferred_qs_handle";
    for (what, unit, dir) in [
        ("hit", Unit::Count, Direction::Neutral),
        ("time", Unit::Seconds, Direction::LowerIsBetter),
        ("avg", Unit::Seconds, Direction::LowerIsBetter),
        ("s2", Unit::SecondsSquared, Direction::LowerIsBetter),
    ] {
        let s = ds.get(&format!("{f}.{what}"), "cpu0").unwrap();
        assert_eq!((&s.spec.unit, s.spec.direction), (&unit, dir), "{what}");
    }
}

#[test]
fn stable_single_table_kernel_alignment() {
    let ds = parse(STABLE, "trace_stat");
    let f = "rcu_preempt_deferred_qs_handle";
    row(&ds, f, 0, None, (838746.0, 182650.3, 0.217, 0.004));
    assert_eq!(ds.series.len(), 4);
    // One CPU in the input: no `all` totals, and the CPU is a guess that says so.
    assert!(ds.series.iter().all(|s| s.spec.key.scope == "cpu0"));
    assert_eq!(ds.meta["cpus"], "1");
    assert!(ds.meta["cpu_note"].contains("cpu0"), "{:?}", ds.meta);
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn iw_wakeup_head_headers_trailing_spaces() {
    let ds = parse(IW_WAKEUP, "trace_stat");
    let f = "call_rcu_tasks_iw_wakeup";
    assert_eq!(ds.labels(), ["original", "apply patch"]);
    let o = Some("original");
    row(&ds, f, 0, o, (13217.0, 19292.52, 1.459, 8.834));
    row(&ds, f, 1, o, (15146.0, 22377.01, 1.477, 22.873));
    row(&ds, f, 2, o, (12561.0, 18125.76, 1.443, 6.372));
    row(&ds, f, 3, o, (15452.0, 21770.57, 1.408, 6.710));
    let p = Some("apply patch");
    row(&ds, f, 0, p, (8334.0, 15121.13, 1.814, 4.457));
    row(&ds, f, 1, p, (8355.0, 15760.51, 1.886, 14.775));
    row(&ds, f, 2, p, (7219.0, 14194.27, 1.966, 42.440));
    row(&ds, f, 3, p, (9613.0, 19850.04, 2.064, 91.023));
    close(value(&ds, f, "hit", "all", o), 56376.0);
    close(value(&ds, f, "hit", "all", p), 33521.0);
    let time_o = (19292.52 + 22377.01 + 18125.76 + 21770.57) / 1e6;
    close(value(&ds, f, "time", "all", o), time_o);
    close(value(&ds, f, "avg", "all", o), time_o / 56376.0);
    let time_p = (15121.13 + 15760.51 + 14194.27 + 19850.04) / 1e6;
    close(value(&ds, f, "time", "all", p), time_p);
    close(value(&ds, f, "avg", "all", p), time_p / 33521.0);
    assert_eq!(ds.meta["cpus"], "4");
    // The `original: 56376  apply patch: 33521` summary line is prose, not a label.
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn vmalloc_before_after_several_functions() {
    let ds = parse(VMALLOC, "trace_stat");
    assert_eq!(ds.labels(), ["BEFORE", "AFTER"]);
    let b = Some("BEFORE");
    row(
        &ds,
        "vm_map_ram",
        0,
        b,
        (126000.0, 30683.30, 0.243, 30819.36),
    );
    row(
        &ds,
        "vm_unmap_ram",
        0,
        b,
        (126000.0, 22003.24, 0.174, 340.886),
    );
    row(
        &ds,
        "alloc_vmap_area",
        0,
        b,
        (1000.0, 4132.065, 4.132, 0.903),
    );
    let a = Some("AFTER");
    row(
        &ds,
        "vm_map_ram",
        0,
        a,
        (126000.0, 28713.13, 0.227, 24944.70),
    );
    row(
        &ds,
        "vm_unmap_ram",
        0,
        a,
        (126000.0, 20403.96, 0.161, 1429.872),
    );
    row(
        &ds,
        "alloc_vmap_area",
        0,
        a,
        (993.0, 3916.795, 3.944, 29.370),
    );
    row(&ds, "free_vmap_block", 0, a, (992.0, 654.157, 0.659, 1.273));
    assert!(
        ds.get_labelled("free_vmap_block.hit", "cpu0", "BEFORE")
            .is_none()
    );
    // CPU 0 comes from the `# cat .../trace_stat/function0` line, not the file name's `1`.
    assert!(ds.series.iter().all(|s| s.spec.key.scope == "cpu0"));
    assert!(!ds.meta.contains_key("cpu_note"));
    assert_eq!(
        ds.meta["label.BEFORE"],
        "BEFORE (all new blocks are put to the head of a free list)"
    );
    assert_eq!(ds.meta["rows"], "7");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

const HEADER5: &str = "  Function                               Hit    Time            Avg             s^2\n  --------                               ---    ----            ---             ---\n";

#[test]
fn cpu_from_the_file_name() {
    let text = format!(
        "{HEADER5}  tcp_tsq_write.part.0                  10    20.000 us       2.000 us        1.500 us    \n  do_one+0x1c                            4    1371819 us      342954.7 us     1994458706 us\n"
    );
    let ds = parse_text("function3", &text);
    row(&ds, "tcp_tsq_write.part.0", 3, None, (10.0, 20.0, 2.0, 1.5));
    row(
        &ds,
        "do_one+0x1c",
        3,
        None,
        (4.0, 1371819.0, 342954.7, 1994458706.0),
    );
    assert_eq!(ds.meta["cpus"], "1");
    assert!(!ds.meta.contains_key("cpu_note"));
    // A directory of function0..N arrives one file at a time: no per-file totals.
    assert!(ds.series.iter().all(|s| s.spec.key.scope == "cpu3"));

    let ds = parse_text("/tmp/trace_stat/function12.txt", &text);
    close(value(&ds, "do_one+0x1c", "hit", "cpu12", None), 4.0);
}

#[test]
fn the_same_cpu_twice_is_a_second_sample() {
    let text = format!(
        "{HEADER5}  f   3    3.000 us    1.000 us    0.000 us\n\n{HEADER5}  f   5    10.000 us    2.000 us    0.500 us\n"
    );
    let ds = parse_text("function2", &text);
    samples_eq(ds.get("f.hit", "cpu2").unwrap(), &[3.0, 5.0]);
    samples_eq(ds.get("f.time", "cpu2").unwrap(), &[3e-6, 10e-6]);
    assert!(ds.get("f.hit", "all").is_none());
}

#[test]
fn cat_concatenation_numbers_cpus_in_order_and_labels_restart_them() {
    // `cat function*` repeats the header with no separator; labels restart the CPU order.
    let text = format!(
        "without the patchset:\n{HEADER5}  f   3    3.000 us    1.000 us    0.000 us\n{HEADER5}  f   5    10.000 us    2.000 us    0.500 us\n  g   1    1.000 us    1.000 us    0.000 us\nwith the patchset:\n{HEADER5}  f   2    2.000 us    1.000 us    0.000 us\n{HEADER5}  f   4    4.000 us    1.000 us    0.000 us\n"
    );
    let ds = parse_text("all-cpus.txt", &text);
    assert_eq!(ds.labels(), ["without the patchset", "with the patchset"]);
    let w = Some("without the patchset");
    close(value(&ds, "f", "hit", "cpu0", w), 3.0);
    close(value(&ds, "f", "hit", "cpu1", w), 5.0);
    close(value(&ds, "g", "hit", "cpu1", w), 1.0);
    close(value(&ds, "f", "hit", "all", w), 8.0);
    close(value(&ds, "f", "time", "all", w), 13e-6);
    close(value(&ds, "f", "avg", "all", w), 13e-6 / 8.0);
    close(value(&ds, "g", "hit", "all", w), 1.0);
    let p = Some("with the patchset");
    close(value(&ds, "f", "hit", "cpu0", p), 2.0);
    close(value(&ds, "f", "hit", "cpu1", p), 4.0);
    close(value(&ds, "f", "hit", "all", p), 6.0);
    assert_eq!(ds.meta["cpus"], "2");
    assert!(ds.meta["cpu_note"].contains("in order"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn prose_after_a_labels_tables_ends_its_section() {
    // Seed 004's commit message: the quoted per-CPU tables, then prose and a "Sample output"
    // table repeating one CPU, which is not a fifth CPU of "apply patch".
    let text = format!(
        "> original:\n>\n> ==> function0 <==\n{HEADER5}>  f   3    3.000 us    1.000 us    0.000 us\n>\n> ==> function1 <==\n{HEADER5}>  f   5    5.000 us    1.000 us    0.000 us\n>\n> apply patch:\n>\n> ==> function0 <==\n{HEADER5}>  f   1    1.000 us    1.000 us    0.000 us\n>\n> ==> function1 <==\n{HEADER5}>  f   2    2.000 us    1.000 us    0.000 us\n>\n> Signed-off-by: A <a@b>\n\nSample output from one of these files is as follows:\n\n{HEADER5}  f   3    3.000 us    1.000 us    0.000 us\n"
    );
    let ds = parse_text("mail.txt", &text);
    assert_eq!(ds.labels(), ["original", "apply patch"]);
    let p = Some("apply patch");
    close(value(&ds, "f", "hit", "all", p), 3.0);
    assert!(ds.get_labelled("f.hit", "cpu2", "apply patch").is_none());
    close(value(&ds, "f", "hit", "cpu0", None), 3.0);
    close(value(&ds, "f", "hit", "all", Some("original")), 8.0);
}

#[test]
fn unlabelled_rounds_of_cpus_give_one_total_each() {
    let text = "==> function0 <==\n Function Hit Time Avg s^2\n f 1 1.0 us 1.0 us 0.0 us\n==> function1 <==\n Function Hit Time Avg s^2\n f 2 2.0 us 1.0 us 0.0 us\n\n==> function0 <==\n Function Hit Time Avg s^2\n f 10 10.0 us 1.0 us 0.0 us\n==> function1 <==\n Function Hit Time Avg s^2\n f 20 20.0 us 1.0 us 0.0 us\n";
    let ds = parse_text("x.txt", text);
    samples_eq(ds.get("f.hit", "cpu0").unwrap(), &[1.0, 10.0]);
    samples_eq(ds.get("f.hit", "all").unwrap(), &[3.0, 30.0]);
    samples_eq(ds.get("f.time", "all").unwrap(), &[3e-6, 30e-6]);
}

#[test]
fn four_and_two_column_variants() {
    // Before s^2 existed (LWN, Jan 2010) and without the graph tracer.
    let old = "  Function                               Hit    Time            Avg\n  --------                               ---    ----            ---\n  schedule                             22943    1994458706 us     86931.03 us \n";
    let ds = parse_text("function0", old);
    close(value(&ds, "schedule", "hit", "cpu0", None), 22943.0);
    close(value(&ds, "schedule", "time", "cpu0", None), 1994.458706);
    close(value(&ds, "schedule", "avg", "cpu0", None), 0.08693103);
    assert!(ds.get("schedule.s2", "cpu0").is_none());

    let hits = "  Function                               Hit\n  --------                               ---\n  mutex_unlock                          2802\n  mutex_lock                            2801\n";
    let ds = parse_text("function1", hits);
    close(value(&ds, "mutex_unlock", "hit", "cpu1", None), 2802.0);
    close(value(&ds, "mutex_lock", "hit", "cpu1", None), 2801.0);
    assert_eq!(ds.series.len(), 2);
}

#[test]
fn a_malformed_row_is_a_warning_with_its_line() {
    let text = format!(
        "{HEADER5}  f   3    3.000 us    1.000 us    0.000 us\n  g   4    4.000 us    oops\n  h   1    1.000 us    1.000 us    0.000 us\n"
    );
    let ds = parse_text("function0", &text);
    one_warning(&ds, 4, "g   4");
    assert!(ds.get("g.hit", "cpu0").is_none());
    assert!(ds.get("h.hit", "cpu0").is_some());
}

#[test]
fn a_header_without_rows_is_a_warning_not_an_error() {
    // The profiler prints only the header for a CPU that recorded nothing.
    let ds = parse_text("function5", HEADER5);
    assert!(ds.series.is_empty());
    assert_eq!(ds.warnings.len(), 1);
    assert_eq!(ds.warnings[0].line, 1);
}

#[test]
fn negative_hit_is_an_error_at_its_line() {
    let text = format!(
        "{HEADER5}  f   3    3.000 us    1.000 us    0.000 us\n  g   -4    4.000 us    1.000 us    0.000 us\n"
    );
    let e = parse_err("function0", text.as_bytes(), Some("trace_stat"));
    assert_eq!(e.line(), Some(4), "{e}");
    assert!(e.to_string().contains("g.hit"), "{e}");
}

#[test]
fn bad_input() {
    let e = parse_err("function0", b"", Some("trace_stat"));
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

    let e = parse_err(
        "function0",
        b"Function Hit\n\x00\x01\x02",
        Some("trace_stat"),
    );
    assert!(e.to_string().contains("binary"), "{e}");

    // A `time` output forced as trace_stat: the error names the first line and what was expected.
    let bytes = std::fs::read(fixture("time/seed000_bash_time_3runs_ftrace_switch.txt")).unwrap();
    let e = parse_err("seed000.txt", &bytes, Some("trace_stat"));
    assert_eq!(e.line(), Some(1), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("Function") && msg.contains("Now, results"),
        "{msg}"
    );

    let e = parse_err("function0", b"\n\n   \n", Some("trace_stat"));
    assert!(e.to_string().contains("trace_stat"), "{e}");
}

#[test]
fn detection_is_honest() {
    let ts = ingest::formats::by_name("trace_stat").unwrap();
    for f in [SEED004, STABLE, IW_WAKEUP, VMALLOC] {
        let text = std::fs::read_to_string(fixture(f)).unwrap();
        assert!(ts.sniff(&text) >= 80, "{f}");
    }
    // Nothing of another format looks like a trace_stat table.
    for dir in [
        "latency",
        "time",
        "hackbench",
        "perf_stat",
        "function_graph",
        "rcuscale",
        "refscale",
        "other",
    ] {
        for entry in std::fs::read_dir(fixture(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "txt") {
                let text = std::fs::read_to_string(&path).unwrap();
                assert_eq!(ts.sniff(&text), 0, "{}", path.display());
            }
        }
    }
}
