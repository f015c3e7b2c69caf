//! Golden tests of the rcuscale parser: every value of rcuscale/MANIFEST.md, plus console-log
//! variants from kernel/rcu/rcuscale.c and bad input.

use std::path::Path;

use ingest::{Dataset, Direction, ErrorKind, Series, Unit};

use crate::common::*;

const MIB: f64 = 1024.0 * 1024.0;

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

fn parse_text(text: &str) -> Dataset {
    ingest::parse_bytes(Path::new("console.log"), text.as_bytes(), Some("rcuscale"))
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

fn scaled(values: &[f64], factor: f64) -> Vec<f64> {
    values.iter().map(|v| v * factor).collect()
}

#[test]
fn seed001_median_table_is_a_preempt_off_sweep() {
    let ds = parse("rcuscale/seed001_rcuperf_median_table.txt", "rcuscale");
    assert_eq!(ds.meta["nreaders"], "10");
    assert_eq!(ds.meta["nwriters"], "10");
    let expect = [
        ("v4.19", [12000.3, 12001.0, 11000.0, 12000.0]),
        ("v5.1 (deferred)", [13000.0, 19999.0, 40000.0, 100000.0]),
    ];
    assert_eq!(ds.series.len(), 8);
    for (label, values) in expect {
        for (ms, v) in ["5", "10", "20", "50"].iter().zip(values) {
            let s = ds
                .series
                .iter()
                .find(|s| {
                    s.spec.key.label.as_deref() == Some(label)
                        && s.spec.key.params.get("preempt_off_ms").map(String::as_str) == Some(*ms)
                })
                .unwrap_or_else(|| panic!("{label} {ms}ms"));
            assert_eq!(s.spec.key.metric, "gp_duration");
            assert_eq!(s.spec.key.statistic.as_deref(), Some("median"));
            assert_eq!(s.spec.key.params.len(), 1);
            assert_eq!(s.spec.unit, Unit::Seconds);
            assert_eq!(s.spec.direction, Direction::LowerIsBetter);
            samples_eq(s, &[v * 1e-6]);
        }
    }
    assert_eq!(ds.labels(), vec!["v4.19", "v5.1 (deferred)"]);
}

#[test]
fn writer_durations_2021_old_and_new_console_output() {
    let ds = parse(
        "rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt",
        "rcuscale",
    );
    let ns = [44003961.0, 32003582.0, 28004391.0, 27996410.0];
    for label in [
        "Sample of old console output",
        "Sample of new console output",
    ] {
        let w0 = find(&ds, "gp_duration", "writer0", Some(label), None);
        samples_eq(w0, &scaled(&ns, 1e-9));
        assert_eq!(w0.spec.unit, Unit::Seconds);
        let all = find(&ds, "gp_duration", "all", Some(label), None);
        samples_eq(all, &scaled(&ns, 1e-9));
    }
    // 44003961 ns = 44003.961 µs
    close(ds.series[0].samples[0] * 1e6, 44003.961);
    assert_eq!(ds.meta["writer0_gps [Sample of old console output]"], "133");
    assert_eq!(ds.meta["writer0_gps [Sample of new console output]"], "134");
    assert_eq!(ds.meta["scale_type"], "rcu");
    assert_eq!(ds.sample_count(), 16);
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn kfree_rcu_2022_before_and_with_a_patch() {
    let ds = parse(
        "rcuscale/lkml_2022_kfree_rcu_test_total_time_lines.txt",
        "rcuscale",
    );
    let blocks = [
        (
            None,
            [6564718459.0, 8431051895.0, 9477830789.0, 9950211144.0],
            [1110.0, 1109.0, 1158.0, 981.0],
            [5057.0, 2749.0, 2934.0, 2704.0],
        ),
        (
            Some("with a patch"),
            [7712110118.0, 7002403664.0, 7842282319.0, 7230161977.0],
            [1660.0, 1482.0, 1738.0, 1542.0],
            [91.0, 86.0, 86.0, 72.0],
        ),
    ];
    for (label, ns, batches, mb) in blocks {
        let t = find(&ds, "kfree_total_time", "all", label, None);
        assert_eq!(t.spec.unit, Unit::Seconds);
        samples_eq(t, &scaled(&ns, 1e-9));
        let b = find(&ds, "kfree_batches", "all", label, None);
        assert_eq!(b.spec.unit, Unit::Count);
        samples_eq(b, &batches);
        let m = find(&ds, "kfree_mem_footprint", "all", label, None);
        assert_eq!(m.spec.unit, Unit::Bytes);
        assert_eq!(m.spec.direction, Direction::LowerIsBetter);
        samples_eq(m, &scaled(&mb, MIB));
    }
    assert_eq!(ds.meta["kfree_loops"], "10000");
    assert_eq!(ds.meta["kfree_loops [with a patch]"], "10000");
    // The kvm.sh command line below the results.
    assert_eq!(ds.meta["CONFIG_NR_CPUS"], "64");
    assert_eq!(ds.meta["CONFIG_RCU_NOCB_CPU"], "y");
    assert_eq!(ds.meta["CONFIG_RCU_NOCB_CPU_DEFAULT_ALL"], "y");
    assert_eq!(ds.meta["kfree_nthreads"], "16");
    assert_eq!(ds.meta["kfree_rcu_test"], "1");
    assert_eq!(ds.meta["holdoff"], "20");
    assert_eq!(ds.meta["kvm_duration"], "1");
    assert_eq!(ds.labels(), vec!["with a patch"]);
}

#[test]
fn shazptr_2025_kvm_recheck_summaries() {
    let ds = parse(
        "rcuscale/lkml_2025_shazptr_kvm_recheck_summaries_tab_indented.txt",
        "rcuscale",
    );
    let expect: [(&str, [f64; 6]); 5] = [
        (
            "RCU",
            [7470.02, 3981.6, 6002.73, 7008.93, 10015.0, 142228.0],
        ),
        ("shazptr", [0.845825, 0.199, 0.585, 1.656, 3.872, 3049.05]),
        (
            "shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to wakeup)",
            [467.861, 92.913, 440.691, 460.623, 650.068, 5775.46],
        ),
        (
            "shazptr_wildcard (i.e. readers always use SHAZPTR_WILDCARD)",
            [599.569, 1.432, 582.631, 781.704, 1160.26, 6727.53],
        ),
        (
            "shazptr_wildcard (skip_synchronize_self_scan=1)",
            [460.466, 303.546, 424.334, 482.637, 600.214, 4126.94],
        ),
    ];
    let stats = ["mean", "min", "p50", "p90", "p99", "max"];
    for (label, values) in expect {
        for (stat, v) in stats.iter().zip(values) {
            let s = find(&ds, "gp_duration", "all", Some(label), Some(stat));
            assert_eq!(s.spec.unit, Unit::Seconds);
            samples_eq(s, &[v * 1e-6]);
        }
    }
    assert_eq!(ds.series.len(), 30);
    assert_eq!(
        ds.labels(),
        expect.iter().map(|e| e.0.to_string()).collect::<Vec<_>>()
    );
}

const CONSOLE: &str = "\
[    0.000000] Linux version 6.1.0 (gcc 12)
[    1.100000] rcu-scale:--- Start of test: gp_async=0 gp_async_max=1000 gp_exp=0 holdoff=10 minruntime=0 nreaders=2 nwriters=2 writer_holdoff=0 writer_holdoff_jiffies=0 verbose=1 shutdown=1
[    1.100100] rcu-scale: rcu_scale_reader task started
[    1.100200] rcu-scale: rcu_scale_writer task started
[    2.000000] virtio_net virtio0 enp0s3: renamed from eth0
[   12.000000] rcu-scale: rcu_scale_writer 0 has 100 measurements
[   12.000100] rcu-scale: Test complete
[   12.920044] rcu-scale: writer 0 gps: 2
[   12.920045] rcu-scale: writer 1 gps: 1
[   12.920046] rcu-scale: start: 1100200000 end: 12000100000 duration: 10899900000 gps: 3 batches: 5
[   12.920047] rcu-scale:    0 writer-duration:     0 1000000
[   12.920048] rcu-scale:    0 writer-duration:     1 2000000
[   12.920049] rcu_scale: Grace-period kthread CPU time: 1234.567 us
[   12.920050] rcu-scale:    1 writer-duration:     0 3000000
[   12.920051] rcu-scale: some future message we do not know
[   13.000000] reboot: Power down
";

#[test]
fn dmesg_console_log_with_interleaved_lines() {
    let ds = parse_text(CONSOLE);
    samples_eq(
        find(&ds, "gp_duration", "writer0", None, None),
        &[0.001, 0.002],
    );
    samples_eq(find(&ds, "gp_duration", "writer1", None, None), &[0.003]);
    samples_eq(
        find(&ds, "gp_duration", "all", None, None),
        &[0.001, 0.002, 0.003],
    );
    samples_eq(
        find(&ds, "gp_kthread_cpu_time", "all", None, None),
        &[0.001234567],
    );
    assert_eq!(ds.meta["nreaders"], "2");
    assert_eq!(ds.meta["writer_holdoff_jiffies"], "0");
    assert_eq!(ds.meta["writer0_gps"], "2");
    assert_eq!(ds.meta["writer1_gps"], "1");
    assert_eq!(ds.meta["batches"], "5");
    assert_eq!(ds.meta["duration"], "10899900000");
    assert_eq!(ds.meta["scale_type"], "rcu");
    // Only the prefixed line that is not understood is reported.
    assert_eq!(ds.warnings.len(), 1, "{:?}", ds.warnings);
    assert_eq!(ds.warnings[0].line, 15);
    assert!(ds.warnings[0].message.contains("some future message"));
}

#[test]
fn detection_of_a_console_log() {
    let (summary, _) =
        ingest::parse_bytes(Path::new("console.log"), CONSOLE.as_bytes(), None).unwrap();
    assert_eq!(summary.format, "rcuscale");
    // Three writer-duration lines, each in its writer and in `all`, plus the CPU time.
    assert_eq!(summary.samples, 7);
    assert_eq!(summary.warnings, 1);
}

#[test]
fn rcuperf_and_srcu_prefixes_and_wrapped_start_of_test() {
    let ds = parse_text(
        "> srcu-perf:--- Start of test: nreaders=4 nwriters=4 verbose=1 shutdown=1 \n\
         > holdoff=10 gp_exp=1\n\
         > srcu-perf:    3 writer-duration:    10 5000\n",
    );
    assert_eq!(ds.meta["scale_type"], "srcu");
    assert_eq!(ds.meta["shutdown"], "1");
    assert_eq!(ds.meta["holdoff"], "10");
    assert_eq!(ds.meta["gp_exp"], "1");
    samples_eq(find(&ds, "gp_duration", "writer3", None, None), &[5e-6]);
}

#[test]
fn older_kfree_rcu_variants() {
    let ds = parse_text(
        "[  159.017771] Total time taken by all kfree'ers: 92783584881 ns, loops: 200000, batches: 5117\n\
         Total time taken by all kfree'ers: 1000000000 , loops 20000\n\
         \tTotal time taken by all kfree'ers: 2000000000 ns, loops: 10000, batches: 3, memory footprint: 1MB\n",
    );
    samples_eq(
        find(&ds, "kfree_total_time", "all", None, None),
        &[92.783584881, 1.0, 2.0],
    );
    samples_eq(
        find(&ds, "kfree_batches", "all", None, None),
        &[5117.0, 3.0],
    );
    samples_eq(find(&ds, "kfree_mem_footprint", "all", None, None), &[MIB]);
    assert_eq!(ds.meta["kfree_loops"], "10000");
}

#[test]
fn perf_bench_sync_rcu_options_become_params() {
    let text = "\
$ ./perf bench sync rcu range exp  nreaders=1:2 nwriters=1 writer_cpu_offset=0:1
\\# Running 'sync/rcu' benchmark:
Running experiment with options: gp_exp=1 nwriters=1 nreaders=1 writer_cpu_offset=0
Experiment finished.
Histogram bucket size: 0.1 microseconds
8.8 11
8.9 25
6025.6 1
Average grace-period duration: 297.535 microseconds
Minimum grace-period duration: 8.853
50th percentile grace-period duration: 9.044
90th percentile grace-period duration: 9.905
99th percentile grace-period duration: 5724.727
Maximum grace-period duration: 12029.204
Cooling down (3s)..

Running experiment with options: gp_exp=1 nwriters=1 nreaders=1 writer_cpu_offset=1
Experiment finished.
Average grace-period duration: 15.491 microseconds
Minimum grace-period duration: 8.863
50th percentile grace-period duration: 9.354
90th percentile grace-period duration: 10.1
99th percentile grace-period duration: 20.2
Maximum grace-period duration: 30.3
";
    let (summary, ds) = ingest::parse_bytes(Path::new("perf.txt"), text.as_bytes(), None).unwrap();
    assert_eq!(summary.format, "rcuscale");
    assert_eq!(ds.series.len(), 12);
    assert_eq!(ds.meta["benchmark"], "perf bench sync rcu");
    let get = |offset: &str, stat: &str| {
        ds.series
            .iter()
            .find(|s| {
                s.spec
                    .key
                    .params
                    .get("writer_cpu_offset")
                    .map(String::as_str)
                    == Some(offset)
                    && s.spec.key.statistic.as_deref() == Some(stat)
            })
            .unwrap()
    };
    samples_eq(get("0", "mean"), &[297.535e-6]);
    samples_eq(get("0", "p99"), &[5724.727e-6]);
    samples_eq(get("1", "max"), &[30.3e-6]);
    assert_eq!(get("1", "min").spec.key.params["gp_exp"], "1");
    assert_eq!(get("1", "min").spec.key.params.len(), 4);
    assert_eq!(ds.meta["histogram_bucket_size"], "0.1 microseconds");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn full_kvm_recheck_output() {
    let ds = parse_text(
        "Average grace-period duration: 142228 microseconds\n\
         Minimum grace-period duration: 3981.6\n\
         50th percentile grace-period duration: 6002.73\n\
         90th percentile grace-period duration: 7008.93\n\
         99th percentile grace-period duration: 10015\n\
         Maximum grace-period duration: 142228\n\
         Grace periods: 101 Batches: 1 Ratio: 101 CPU: 0.5\n\
         Computed from rcuscale printk output.\n",
    );
    samples_eq(
        find(&ds, "gp_duration", "all", None, Some("p90")),
        &[7008.93e-6],
    );
    assert_eq!(ds.meta["grace_periods"], "101");
    assert_eq!(ds.meta["batches"], "1");
    assert_eq!(ds.meta["ratio"], "101");
    assert_eq!(ds.meta["cpu"], "0.5");
    assert_eq!(ds.meta["computed_from"], "rcuscale printk output");
}

fn parse_err(text: &[u8]) -> ingest::Error {
    ingest::parse_bytes(Path::new("bad.log"), text, Some("rcuscale")).unwrap_err()
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
        kind(&parse_err(b"rcu-scale: \0\x01")),
        ErrorKind::Binary { .. }
    ));
    let prose = parse_err(b"nothing to see here\njust prose\n");
    assert!(matches!(kind(&prose), ErrorKind::NothingFound { .. }));
    let neg = parse_err(
        b"rcu-scale: writer 0 gps: 1\nrcu-scale:    0 writer-duration:     0 100\nrcu-scale:    0 writer-duration:     1 -5\n",
    );
    assert_eq!(neg.line(), Some(3));
    assert!(matches!(kind(&neg), ErrorKind::BadValue { .. }));
    let nan = parse_err(b"\n\nrcu-scale:    0 writer-duration:     1 nan\n");
    assert_eq!(nan.line(), Some(3));
    assert!(matches!(kind(&nan), ErrorKind::Syntax { .. }));
    assert!(nan.to_string().contains("writer-duration"), "{nan}");
    let summary = parse_err(b"RCU:\n\tAverage grace-period duration: lots microseconds\n");
    assert_eq!(summary.line(), Some(2));
}

#[test]
fn other_formats_forced_as_rcuscale_are_refused() {
    for f in [
        "function_graph/doc2635_funcgraph_default_sys_open.txt",
        "refscale/lkml_2021_refscale_min_median_max_3runs_table.txt",
        "time/seed000_bash_time_3runs_ftrace_switch.txt",
    ] {
        let e = ingest::parse_file(&fixture(f), Some("rcuscale")).unwrap_err();
        assert!(
            matches!(kind(&e), ErrorKind::NothingFound { .. }),
            "{f}: {e}"
        );
    }
}
