//! Golden tests of the `perf_stat` format: every value of `fixtures/perf_stat/MANIFEST.md`, the
//! other row forms (`-r` counters, `<not counted>`, multiplexing, `--table`, `-A`), bad input.

use std::path::Path;

use ingest::{Dataset, Direction, ErrorKind, Series, Unit};

use crate::common::*;

const MAKE: &str = "perf_stat/doc54_perf_stat_make.txt";
const SLOB: &str = "perf_stat/lkml_2021_perf_stat_hackbench_slob_cpu-clock_msec_tabs.txt";
const NULL8: &str = "perf_stat/lkml_2021_perf_stat_null_repeat10_hackbench_8blocks.txt";
const ABS2023: &str = "perf_stat/lkml_2023_perf_stat_null_r10_elapsed_plusminus_abs.txt";

/// A series by metric, label, statistic and `command` param.
#[track_caller]
fn find<'a>(
    ds: &'a Dataset,
    metric: &str,
    label: Option<&str>,
    statistic: Option<&str>,
    command: Option<&str>,
) -> &'a Series {
    ds.series
        .iter()
        .find(|s| {
            let k = &s.spec.key;
            k.metric == metric
                && k.label.as_deref() == label
                && k.statistic.as_deref() == statistic
                && k.params.get("command").map(String::as_str) == command
        })
        .unwrap_or_else(|| panic!("no series {metric} {label:?} {statistic:?} {command:?}"))
}

#[track_caller]
fn plain<'a>(ds: &'a Dataset, metric: &str, label: Option<&str>) -> &'a Series {
    find(ds, metric, label, None, None)
}

fn parse_text(text: &str) -> Dataset {
    ingest::parse_bytes(Path::new("input.txt"), text.as_bytes(), Some("perf_stat"))
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
fn doc_make_counters_elapsed_user_sys() {
    let ds = parse(MAKE, "perf_stat");
    let clock = plain(&ds, "task-clock:u", None);
    samples_eq(clock, &[83.723452481]);
    assert_eq!(
        (clock.spec.unit.clone(), clock.spec.direction),
        (Unit::Seconds, Direction::LowerIsBetter)
    );
    for (event, v) in [
        ("context-switches:u", 0.0),
        ("cpu-migrations:u", 0.0),
        ("page-faults:u", 3_228_188.0),
        ("cycles:u", 229_570_665_834.0),
        ("instructions:u", 313_163_853_778.0),
        ("branches:u", 69_704_684_856.0),
        ("branch-misses:u", 2_078_861_393.0),
    ] {
        let s = plain(&ds, event, None);
        samples_eq(s, &[v]);
        assert_eq!(
            (s.spec.unit.clone(), s.spec.direction),
            (Unit::Count, Direction::Neutral),
            "{event}"
        );
    }
    samples_eq(plain(&ds, "elapsed", None), &[83.409183620]);
    samples_eq(plain(&ds, "user", None), &[74.684747]);
    samples_eq(plain(&ds, "sys", None), &[8.739217]);
    assert_eq!(ds.series.len(), 11);
    assert_eq!(ds.meta["command"], "make");
    assert_eq!(ds.meta["perf_command"], "perf stat -- make");
    for (event, derived) in [
        ("task-clock:u", "1.004 CPUs utilized"),
        ("page-faults:u", "0.039 M/sec"),
        ("cycles:u", "2.742 GHz"),
        ("instructions:u", "1.36 insn per cycle"),
        ("branches:u", "832.559 M/sec"),
        ("branch-misses:u", "2.98% of all branches"),
    ] {
        assert_eq!(ds.meta[&format!("derived.{event}")], derived);
    }
    assert!(!ds.meta.contains_key("runs"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn slob_two_blocks_with_workload_and_slab_lines() {
    let ds = parse(SLOB, "perf_stat");
    let (cur, seg) = ("current SLOB", "SLOB with segregated free list");
    assert_eq!(ds.labels(), [cur, seg]);
    let expect: [(&str, [(&str, f64); 13]); 2] = [
        (
            cur,
            [
                ("workload.time", 263.900),
                ("cpu-clock", 527.64937),
                ("context-switches", 12451963.0),
                ("cpu-migrations", 251231.0),
                ("page-faults", 4112.0),
                ("cycles", 342196899596.0),
                ("instructions", 228439896295.0),
                ("branch-misses", 3228211614.0),
                ("cache-references", 65667138978.0),
                ("cache-misses", 7406902357.0),
                ("elapsed", 263.956975106),
                ("user", 5.213166),
                ("sys", 521.716737),
            ],
        ),
        (
            seg,
            [
                ("workload.time", 28.896),
                ("cpu-clock", 57.66966),
                ("context-switches", 902343.0),
                ("cpu-migrations", 10569.0),
                ("page-faults", 4116.0),
                ("cycles", 72101524728.0),
                ("instructions", 68780577270.0),
                ("branch-misses", 230133481.0),
                ("cache-references", 23610741192.0),
                ("cache-misses", 896060729.0),
                ("elapsed", 28.909188264),
                ("user", 1.521686),
                ("sys", 56.105718),
            ],
        ),
    ];
    for (label, values) in &expect {
        for (metric, v) in values {
            samples_eq(plain(&ds, metric, Some(label)), &[*v]);
        }
    }
    assert_eq!(ds.series.len(), 26);
    assert_eq!(
        plain(&ds, "workload.time", Some(cur)).spec.unit,
        Unit::Seconds
    );
    assert_eq!(plain(&ds, "cpu-clock", Some(cur)).spec.unit, Unit::Seconds);
    // `Slab:` lines are metadata of their block, never counters.
    assert!(!ds.series.iter().any(|s| s.spec.key.metric.contains("Slab")));
    assert_eq!(ds.meta["command"], "hackbench -g 4 -l 10000");
    let blocks = ds.extra["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 2);
    let (a, b) = (&blocks[0]["meta"], &blocks[1]["meta"]);
    assert_eq!(a["Slab"], "7936 kB");
    assert_eq!(b["Slab"], "8976 kB");
    assert_eq!(a["derived.cpu-clock"], "1.999 CPUs utilized");
    assert_eq!(a["derived.cycles"], "0.649 GHz");
    assert_eq!(a["derived.instructions"], "0.67 insn per cycle");
    assert_eq!(a["derived.cache-misses"], "11.279 % of all cache refs");
    assert_eq!(b["derived.cpu-clock"], "1.995 CPUs utilized");
    assert_eq!(b["derived.instructions"], "0.95 insn per cycle");
    assert_eq!(b["derived.cache-misses"], "3.795 % of all cache refs");
    assert!(a.get("derived.branch-misses").is_none());
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn null_repeat10_eight_blocks_are_means_split_by_label_and_command() {
    let ds = parse(NULL8, "perf_stat");
    let (orig, patched) = ("original, no patched", "patched with patch1~4");
    assert_eq!(ds.labels(), [orig, patched]);
    let (c20, c32) = ("hackbench 20 thread 20000", "hackbench 32 thread 20000");
    for (label, cmd, means, pcts) in [
        (orig, c20, [24.536050899, 24.588049142], [0.24, 0.35]),
        (patched, c20, [24.670892273, 24.746755689], [0.29, 0.21]),
        (orig, c32, [39.784911855, 39.868687608], [0.14, 0.19]),
        (patched, c32, [39.681273015, 39.681238459], [0.21, 0.09]),
    ] {
        let m = find(&ds, "elapsed", Some(label), Some("mean"), Some(cmd));
        samples_eq(m, &means);
        assert_eq!(m.spec.unit, Unit::Seconds);
        let p = find(
            &ds,
            "elapsed.stddev_pct",
            Some(label),
            Some("rel_stddev_pct"),
            Some(cmd),
        );
        samples_eq(p, &pcts);
        assert_eq!(p.spec.unit, Unit::Percent);
    }
    assert_eq!(ds.series.len(), 8);
    // perf printed means of 10 runs: no plain samples.
    assert!(ds.series.iter().all(|s| s.spec.key.statistic.is_some()));
    assert_eq!(ds.meta["runs"], "10");
    assert_eq!(ds.meta["blocks"], "8");
    // Alike consecutive blocks share one entry: 8 blocks, 6 entries.
    let blocks = ds.extra["blocks"].as_array().unwrap();
    let lines: Vec<u64> = blocks.iter().map(|b| b["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [7, 12, 18, 31, 35, 40]);
    let counts: Vec<u64> = blocks
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [1, 1, 2, 1, 1, 2]);
    assert_eq!(
        blocks[3]["meta"]["perf_command"],
        "perf stat --null --repeat 10 -- hackbench 32 thread 20000"
    );
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn elapsed_with_absolute_spread() {
    let ds = parse(ABS2023, "perf_stat");
    samples_eq(find(&ds, "elapsed", None, Some("mean"), None), &[80.10]);
    let sd = find(&ds, "elapsed.stddev", None, Some("stddev"), None);
    samples_eq(sd, &[1.22]);
    assert_eq!(sd.spec.unit, Unit::Seconds);
    samples_eq(
        find(
            &ds,
            "elapsed.stddev_pct",
            None,
            Some("rel_stddev_pct"),
            None,
        ),
        &[1.53],
    );
    assert_eq!(ds.series.len(), 3);
    assert_eq!(
        ds.meta["command"],
        "hackbench -g 44 -f 20 --process --pipe -l 60000 -s 100"
    );
    assert_eq!(ds.meta["runs"], "10");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn repeat_counters_not_counted_and_multiplexing() {
    let text = " Performance counter stats for './bench' (5 runs):\n\
                \n\
                \x20        5,678.12 msec task-clock                #    0.998 CPUs utilized            ( +-  0.50% )\n\
                \x20   1,234,567,890      cycles                    #    2.174 GHz                      ( +-  1.20% )  (93.10%)\n\
                \x20  <not supported>      stalled-cycles-frontend\n\
                \x20    <not counted>      instructions                                                  (0.00%)\n\
                \n\
                \x20      5.6891 +- 0.0123 seconds time elapsed  ( +-  0.22% )\n";
    let ds = parse_text(text);
    let clock = find(&ds, "task-clock", None, Some("mean"), None);
    samples_eq(clock, &[5.67812]);
    samples_eq(
        find(
            &ds,
            "task-clock.stddev_pct",
            None,
            Some("rel_stddev_pct"),
            None,
        ),
        &[0.50],
    );
    samples_eq(
        find(&ds, "cycles", None, Some("mean"), None),
        &[1_234_567_890.0],
    );
    samples_eq(
        find(&ds, "cycles.stddev_pct", None, Some("rel_stddev_pct"), None),
        &[1.20],
    );
    samples_eq(find(&ds, "elapsed", None, Some("mean"), None), &[5.6891]);
    samples_eq(
        find(&ds, "elapsed.stddev", None, Some("stddev"), None),
        &[0.0123],
    );
    assert!(
        !ds.series
            .iter()
            .any(|s| s.spec.key.metric.starts_with("instructions"))
    );
    assert_eq!(
        ds.meta["not_counted"],
        "stalled-cycles-frontend (not supported), instructions"
    );
    // The multiplexing share is not a variance.
    assert_eq!(ds.meta["multiplex_pct.cycles"], "93.10");
    assert_eq!(ds.meta["runs"], "5");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn table_rows_are_samples_and_old_2009_format() {
    let text = " Performance counter stats for './perf bench sched pipe' (3 runs):\n\n\
                \x20          # Table of individual measurements:\n\
                \x20          5.189 (-0.293) #\n\
                \x20          5.519 (+0.037) ##\n\
                \x20          5.738 (+0.256) ###\n\n\
                \x20          # Final result:\n\
                \x20          5.482 +- 0.105 seconds time elapsed  ( +-  1.91% )\n";
    let ds = parse_text(text);
    samples_eq(
        find(&ds, "elapsed", None, None, None),
        &[5.189, 5.519, 5.738],
    );
    samples_eq(find(&ds, "elapsed", None, Some("mean"), None), &[5.482]);

    let old = "Performance counter stats for './hackbench 10' (5 runs):\n\n\
               \x20        14189  kmem:mm_vmscan_isolate_pages   ( +-   9.084% )\n\n\
               \x20   52.680621973  seconds time elapsed   ( +-   0.689% )\n";
    let ds = parse_text(old);
    samples_eq(
        find(
            &ds,
            "kmem:mm_vmscan_isolate_pages",
            None,
            Some("mean"),
            None,
        ),
        &[14189.0],
    );
    samples_eq(
        find(
            &ds,
            "kmem:mm_vmscan_isolate_pages.stddev_pct",
            None,
            Some("rel_stddev_pct"),
            None,
        ),
        &[9.084],
    );
    samples_eq(
        find(
            &ds,
            "elapsed.stddev_pct",
            None,
            Some("rel_stddev_pct"),
            None,
        ),
        &[0.689],
    );
}

#[test]
fn per_cpu_rows_are_scoped() {
    let text = "Performance counter stats for 'system wide':\n\n\
                CPU0          1,000      cycles\n\
                CPU1          2,000      cycles\n\n\
                \x20      1.001 seconds time elapsed\n";
    let ds = parse_text(text);
    samples_eq(ds.get("cycles", "cpu0").unwrap(), &[1000.0]);
    samples_eq(ds.get("cycles", "cpu1").unwrap(), &[2000.0]);
    assert_eq!(ds.meta["target"], "system wide");
}

#[test]
fn detection() {
    let perf = ingest::formats::by_name("perf_stat").unwrap();
    for f in [MAKE, SLOB, NULL8, ABS2023] {
        let text = std::fs::read_to_string(fixture(f)).unwrap();
        assert!(perf.sniff(&text) >= 90, "{f}");
    }
}

#[test]
fn bad_input_errors_with_line() {
    let e = parse_err(
        b"Performance counter stats for 'x':\n\n   -1.5 seconds time elapsed\n",
        Some("perf_stat"),
    );
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(matches!(kind(&e), ErrorKind::BadValue { .. }), "{e}");
    let e = parse_err(
        b"Performance counter stats for 'x':\n\n   nan seconds time elapsed\n",
        Some("perf_stat"),
    );
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(matches!(
        kind(&parse_err(b"", Some("perf_stat"))),
        ErrorKind::Empty
    ));
    assert!(matches!(
        kind(&parse_err(b"x\0", Some("perf_stat"))),
        ErrorKind::Binary { .. }
    ));
    let time = std::fs::read(fixture(
        "time/lkml_2025_bash_time_tc_qdisc_tab_indented.txt",
    ))
    .unwrap();
    let e = parse_err(&time, Some("perf_stat"));
    assert!(matches!(kind(&e), ErrorKind::NothingFound { .. }), "{e}");
    assert_eq!(e.path(), Some(Path::new("bad.txt")));
    // A header alone measures nothing.
    let e = parse_err(b"Performance counter stats for 'x':\n\n", Some("perf_stat"));
    assert!(matches!(kind(&e), ErrorKind::NothingFound { .. }), "{e}");
}

/// Past the held-back bound the first command's series stay without a param; a later command
/// still gets its own series.
#[test]
fn many_blocks_then_another_command() {
    let block = |cmd: &str, secs: &str| {
        format!(
            "Performance counter stats for '{cmd}':\n\n  1,000 cycles\n\n  {secs} seconds time elapsed\n\n  0.5 seconds user\n  0.1 seconds sys\n\n"
        )
    };
    let mut text = block("a", "1.0").repeat(1500);
    text.push_str(&block("b", "2.0"));
    let ds = parse_text(&text);
    assert_eq!(find(&ds, "elapsed", None, None, None).samples.len(), 1500);
    assert_eq!(find(&ds, "cycles", None, None, None).samples.len(), 1500);
    samples_eq(find(&ds, "elapsed", None, None, Some("b")), &[2.0]);
    // Blocks that agree are counted, not listed one by one.
    assert_eq!(ds.meta["blocks"], "1501");
}

const CLEAR_PAGE: &str = "perf_stat/lkml_2020_clear_page_nt_perf_stat_multiplex_excerpt.txt";
const MEMCG: &str = "perf_stat/lkml_2023_memcg_slab_shrink_lockless_perf_stat_multiplex.txt";

/// Values of a metric and statistic whose `command` param contains `cmd`, in file order.
fn by_command(ds: &Dataset, metric: &str, statistic: &str, cmd: &str) -> Vec<f64> {
    ds.series
        .iter()
        .filter(|s| {
            let k = &s.spec.key;
            k.metric == metric
                && k.statistic.as_deref() == Some(statistic)
                && k.params.get("command").is_some_and(|c| c.contains(cmd))
        })
        .flat_map(|s| s.samples.iter().copied())
        .collect()
}

#[test]
fn multiplexing_shares_are_series_a_comparison_can_flag() {
    let ds = parse(CLEAR_PAGE, "perf_stat");
    let stosb = "x86-64-stosb";
    assert_eq!(
        by_command(&ds, "cpu-cycles", "mean", stosb),
        [2_064_476_092.0]
    );
    assert_eq!(
        by_command(&ds, "cpu-cycles.stddev_pct", "rel_stddev_pct", stosb),
        [0.17]
    );
    assert_eq!(
        by_command(&ds, "cpu-cycles.multiplex_pct", "multiplex_pct", stosb),
        [22.19]
    );
    assert_eq!(
        by_command(&ds, "LLC-stores.multiplex_pct", "multiplex_pct", stosb),
        [11.10]
    );
    // `LLC-store-misses`: multiplexed without a spread group.
    assert_eq!(
        by_command(
            &ds,
            "LLC-store-misses.multiplex_pct",
            "multiplex_pct",
            stosb
        ),
        [11.10]
    );
    assert_eq!(
        by_command(&ds, "L1-dcache-load-misses", "mean", "x86-64-stosq"),
        [133_710_131.0]
    );
    assert_eq!(
        by_command(
            &ds,
            "L1-dcache-load-misses.multiplex_pct",
            "multiplex_pct",
            "x86-64-stosq"
        ),
        [45.55]
    );
    let share = ds
        .series
        .iter()
        .find(|s| s.spec.key.metric == "cpu-cycles.multiplex_pct")
        .unwrap();
    assert_eq!(share.spec.unit, Unit::Percent);
    assert_eq!(share.spec.direction, Direction::Neutral);
    // Two sections measure x86-64-movnt (Broadwellx, Rome): both blocks are kept.
    assert_eq!(
        by_command(&ds, "cpu-cycles", "mean", "x86-64-movnt"),
        [1_619_807_936.0, 1_091_352_779.0]
    );
}

#[test]
fn cgroup_column_and_a_multiplexed_after_block() {
    let ds = parse(MEMCG, "perf_stat");
    let labels = ds.labels();
    let before = labels
        .iter()
        .find(|l| l.contains("Before applying"))
        .unwrap();
    let after = labels
        .iter()
        .find(|l| l.contains("After applying"))
        .unwrap();
    let value = |metric: &str, label: &str, stat: &str| {
        ds.series
            .iter()
            .find(|s| {
                s.spec.key.metric == metric
                    && s.spec.key.label.as_deref() == Some(label)
                    && s.spec.key.statistic.as_deref() == Some(stat)
            })
            .map(|s| s.samples.clone())
    };
    assert_eq!(
        value("cycles", before, "mean"),
        Some(vec![454_187_219_766.0])
    );
    assert_eq!(
        value("instructions", before, "mean"),
        Some(vec![78_896_433_101.0])
    );
    assert_eq!(
        value("cycles", after, "mean"),
        Some(vec![841_954_709_443.0])
    );
    assert_eq!(
        value("cycles.stddev_pct", after, "rel_stddev_pct"),
        Some(vec![15.80])
    );
    assert_eq!(
        value("cycles.multiplex_pct", after, "multiplex_pct"),
        Some(vec![98.69])
    );
    assert_eq!(
        value("instructions.multiplex_pct", after, "multiplex_pct"),
        Some(vec![98.68])
    );
    // The before block ran unmultiplexed: no share series.
    assert_eq!(value("cycles.multiplex_pct", before, "multiplex_pct"), None);
    assert!(!ds.series.iter().any(|s| s.spec.key.metric == "test"));
    assert_eq!(ds.meta["cgroup"], "test");
}

#[test]
fn a_header_after_other_words_reads_as_one_at_the_line_start() {
    // Headers at a line's start take a shorter road than those found inside a line: both
    // must give the same block.
    let block = "\n      24.536050899 seconds time elapsed    ( +-  0.24% )\n";
    let header = "Performance counter stats for 'hackbench 20 thread 20000' (10 runs):";
    let at_start = parse_text(&format!("{header}\n{block}"));
    for prefix in ["Result: ", "2) "] {
        let inside = parse_text(&format!("{prefix}{header}\n{block}"));
        assert_eq!(inside.series.len(), at_start.series.len(), "{prefix:?}");
        for (a, b) in at_start.series.iter().zip(&inside.series) {
            assert_eq!(a.spec.key, b.spec.key, "{prefix:?}");
            assert_eq!(a.samples, b.samples, "{prefix:?}");
        }
        assert_eq!(inside.meta, at_start.meta, "{prefix:?}");
    }
    let s = find(&at_start, "elapsed", None, Some("mean"), None);
    assert_eq!(s.samples, [24.536050899]);
}

/// Several MiB of summaries, so that the input is cut on a thread of its own which reads the
/// summary lines ahead of the parser: the same dataset as the parser reading every line itself
/// on one thread, and a number that does not read is still reported at its line.
#[test]
fn summaries_read_ahead_give_what_the_parser_reads_itself() {
    use ingest::Format;
    let one_copy = std::fs::read_to_string(fixture(NULL8)).unwrap();
    let one_copy = format!("{}\n", one_copy.trim_end());
    let mut data = one_copy.repeat(3_000);
    // Other spellings of the summary line, among them some not read ahead.
    data.push_str("   *12.5*  +-  0.25 seconds time elapsed  ( +- 2.0% )\n");
    data.push_str("|  3.0 seconds time elapsed\n");
    data.push_str(&one_copy.repeat(1_000));
    assert!(data.len() > 4 << 20);
    let path = Path::new("big.txt");
    let (_, ahead) = ingest::parse_bytes(path, data.as_bytes(), Some("perf_stat")).unwrap();
    let mut alone = Dataset::new();
    {
        let mut ctx = ingest::Ctx::new(&mut alone, None);
        let mut reader = data.as_bytes();
        let mut lines = ingest::lines::Lines::new(&mut reader);
        ingest::formats::perf_stat::PerfStat
            .parse(&mut lines, &mut ctx)
            .unwrap();
    }
    assert_eq!(ahead, alone);
    let command = Some("hackbench 32 thread 20000");
    let elapsed = find(
        &ahead,
        "elapsed",
        Some("patched with patch1~4"),
        Some("mean"),
        command,
    );
    assert!(elapsed.samples.len() > 8_000, "{}", elapsed.samples.len());

    // A summary whose value does not read, far into the input: its line in the error.
    let bad_line = one_copy.lines().count() * 2_000 + 1;
    let mut bad = one_copy.repeat(2_000);
    bad.push_str("      24.5x6 seconds time elapsed   ( +-  0.24% )\n");
    bad.push_str(&one_copy.repeat(10));
    let e = ingest::parse_bytes(path, bad.as_bytes(), Some("perf_stat")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(&format!("line {bad_line}")), "{msg}");
    assert!(msg.contains("24.5x6"), "{msg}");
}
