//! Golden tests of the `lkp` format: the values of `fixtures/lkp/MANIFEST.md`.

use ingest::{Dataset, Unit};

use crate::common::*;

const PIPE: &str = "lkp/lkml_2025_lkp_pipe_write_stress_ng_pipeherd_improvement.txt";
const POLL: &str = "lkp/lkml_2025_lkp_do_pollfd_will_it_scale_regression.txt";
const GUP: &str = "lkp/lkml_2019_lkp_mm_gup_stress_ng_numa_multipart_excerpt.txt";

fn value(ds: &Dataset, metric: &str, statistic: &str, label: &str) -> Option<f64> {
    ds.series
        .iter()
        .find(|s| {
            s.spec.key.metric == metric
                && s.spec.key.statistic.as_deref() == Some(statistic)
                && s.spec.key.label.as_deref() == Some(label)
        })
        .map(|s| {
            assert_eq!(s.samples.len(), 1, "{metric}");
            s.samples[0]
        })
}

#[test]
fn pipeherd_improvement() {
    let ds = parse(PIPE, "lkp");
    let (base, head) = ("f2ffc48de2017c69", "ee5eda8ea59546af2e8f192c060");
    assert_eq!(ds.labels(), [base, head]);
    assert_eq!(ds.meta["rows"], "39");
    let m = "stress-ng.pipeherd.ops_per_sec";
    assert_eq!(value(&ds, m, "mean", base), Some(38728105.0));
    assert_eq!(value(&ds, m, "mean", head), Some(48797851.0));
    let sd = format!("{m}.stddev_pct");
    assert_eq!(value(&ds, &sd, "rel_stddev_pct", base), Some(3.0));
    assert_eq!(value(&ds, &sd, "rel_stddev_pct", head), Some(10.0));
    assert_eq!(
        value(&ds, "stress-ng.pipeherd.ops", "mean", base),
        Some(2.331e9)
    );
    // No spread printed: none stored.
    assert_eq!(value(&ds, "vmstat.procs.r", "mean", base), Some(3930.0));
    assert_eq!(
        value(&ds, "vmstat.procs.r.stddev_pct", "rel_stddev_pct", base),
        None
    );
    assert_eq!(
        value(&ds, "vmstat.procs.r.stddev_pct", "rel_stddev_pct", head),
        Some(3.0)
    );
    // A percentage metric with an absolute change column.
    assert_eq!(
        value(&ds, "perf-stat.i.branch-miss-rate%", "mean", head),
        Some(0.41)
    );
    let s = ds.series.iter().find(|s| s.spec.key.metric == m).unwrap();
    assert_eq!(s.spec.unit, Unit::Other("1".into()));
}

#[test]
fn will_it_scale_regression_and_spaced_spreads() {
    let ds = parse(POLL, "lkp");
    let (base, head) = ("d000e073ca2a08ab", "89359897983825dbfc08578e7ee");
    assert_eq!(ds.meta["rows"], "94");
    assert_eq!(
        value(&ds, "will-it-scale.per_process_ops", "mean", base),
        Some(263173.0)
    );
    assert_eq!(
        value(&ds, "will-it-scale.per_process_ops", "mean", head),
        Some(232411.0)
    );
    let sd = "numa-meminfo.node0.Shmem.stddev_pct";
    assert_eq!(value(&ds, sd, "rel_stddev_pct", base), Some(147.0));
    assert_eq!(value(&ds, sd, "rel_stddev_pct", head), Some(84.0));
}

#[test]
fn gup_excerpt_of_a_multipart_mail() {
    let ds = parse(GUP, "lkp");
    let (base, head) = ("96270263521248d5", "cdaa813278ddc616ee201eacda7");
    assert_eq!(ds.meta["rows"], "71");
    assert_eq!(
        value(&ds, "stress-ng.numa.ops_per_sec", "mean", base),
        Some(9.41)
    );
    assert_eq!(
        value(&ds, "stress-ng.numa.ops_per_sec", "mean", head),
        Some(449.07)
    );
    assert_eq!(
        value(&ds, "stress-ng.memcpy.ops", "mean", head),
        Some(22326.0)
    );
}
