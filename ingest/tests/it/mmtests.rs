//! Golden tests of the `mmtests` format: the values of `fixtures/mmtests/MANIFEST.md`.

use ingest::{Dataset, Direction, Unit};

use crate::common::*;

const REDIS: &str = "mmtests/doc_mmtests_tutorial_redis_compare.txt";
const FSNOTIFY: &str = "mmtests/lkml_2020_fsnotify_fastpath_mmtests_hackbench_4kernels.txt";
const RETBLEED: &str = "mmtests/lkml_2022_retbleed_calldepth_mmtests_netperf_duration.txt";
const NEXT_BUDDY: &str =
    "mmtests/lkml_2025_sched_next_buddy_mmtests_dbench_hackbench_schbench_excerpt.txt";

/// The values of one metric, statistic and kernel column, in file order.
fn cell(ds: &Dataset, metric: &str, statistic: &str, label: &str) -> Vec<f64> {
    ds.series
        .iter()
        .filter(|s| {
            s.spec.key.metric == metric
                && s.spec.key.statistic.as_deref() == Some(statistic)
                && s.spec.key.label.as_deref() == Some(label)
        })
        .flat_map(|s| s.samples.iter().copied())
        .collect()
}

#[test]
fn redis_tutorial_single_header_line() {
    let ds = parse(REDIS, "mmtests");
    assert_eq!(ds.labels(), ["BASELINE", "BUSY"]);
    assert_eq!(cell(&ds, "1-PING_INLINE", "hmean", "BASELINE"), [32419.12]);
    assert_eq!(cell(&ds, "1-PING_INLINE", "hmean", "BUSY"), [24696.23]);
    assert_eq!(cell(&ds, "1-LRANGE_600", "hmean", "BUSY"), [6504.91]);
    assert_eq!(cell(&ds, "3-INCR", "hmean", "BASELINE"), [73844.34]);
    assert_eq!(cell(&ds, "1-PING_INLINE", "min", "BASELINE"), [23201.86]);
    let hmean = ds
        .series
        .iter()
        .find(|s| s.spec.key.statistic.as_deref() == Some("hmean"))
        .unwrap();
    assert_eq!(hmean.spec.direction, Direction::HigherIsBetter);
    assert_eq!(hmean.spec.unit, Unit::Other("1".into()));
    // 70 row names x 8 statistics x 2 kernels.
    assert_eq!(ds.sample_count(), 70 * 8 * 2);
}

#[test]
fn four_kernels_and_a_rebased_second_table() {
    let ds = parse(FSNOTIFY, "mmtests");
    let m = "hackbench-process-pipes/1";
    assert_eq!(cell(&ds, m, "amean", "vanilla"), [0.4837]);
    assert_eq!(cell(&ds, m, "amean", "amir-20200608"), [0.4967]);
    // The second table repeats two of the kernels.
    assert_eq!(cell(&ds, m, "amean", "fastfsnotify-v1r1"), [0.4630, 0.4630]);
    assert_eq!(cell(&ds, m, "amean", "amir-for-mel"), [0.4680, 0.4680]);
    assert_eq!(
        cell(&ds, "hackbench-process-pipes/24", "amean", "amir-for-mel"),
        [9.5793, 9.5793]
    );
    let amean = ds.series.iter().find(|s| s.spec.key.metric == m).unwrap();
    assert_eq!(amean.spec.direction, Direction::LowerIsBetter);
    assert_eq!(ds.meta["tables"], "2");
}

#[test]
fn netperf_hmean_and_durations() {
    let ds = parse(RETBLEED, "mmtests");
    let (ibrs, stuff) = (
        "tglx-mit-spectre-ibrs",
        "tglx-mit-spectre-retpoline-retstuff",
    );
    assert_eq!(cell(&ds, "duration.user", "total", ibrs), [136.16]);
    assert_eq!(cell(&ds, "duration.system", "total", stuff), [33.04]);
    assert_eq!(cell(&ds, "duration.elapsed", "total", stuff), [102.65]);
    assert_eq!(cell(&ds, "Netperf-TCP/send-64", "hmean", ibrs), [241.39]);
    assert_eq!(cell(&ds, "Netperf-TCP/send-64", "hmean", stuff), [298.00]);
    assert_eq!(
        cell(&ds, "Netperf-TCP/send-16384", "hmean", stuff),
        [48036.45]
    );
    let d = ds
        .series
        .iter()
        .find(|s| s.spec.key.metric == "duration.user")
        .unwrap();
    assert_eq!(d.spec.unit, Unit::Seconds);
}

#[test]
fn dbench_title_with_words() {
    let ds = parse(NEXT_BUDDY, "mmtests");
    let m = "dbench4 Throughput (misleading but traditional)/1";
    assert_eq!(cell(&ds, m, "hmean", "vanilla"), [1268.80]);
    assert_eq!(cell(&ds, m, "hmean", "sched-preemptnext-v2"), [1285.93]);
    assert_eq!(
        cell(
            &ds,
            "dbench4 Throughput (misleading but traditional)/4",
            "hmean",
            "vanilla"
        ),
        [3971.74]
    );
}
