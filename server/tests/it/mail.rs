//! `compare MAIL` on real mails (fixtures/mails, sources in its MANIFEST.md): the pairing, the
//! medians the authors wrote, and the status of their claims; then bad input.

use std::path::PathBuf;

use quiescent::mail::{MailReport, Options, claims::Status, compare_mail};
use quiescent::report::Row;

fn fixture(name: &str) -> (String, Vec<u8>) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mails")
        .join(name);
    (name.to_string(), std::fs::read(&p).expect("fixture"))
}

fn compare(name: &str) -> MailReport {
    let (n, bytes) = fixture(name);
    compare_mail(&n, &bytes, &Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The row of `metric` (scope, statistic and params given as `k=v` pairs must match).
fn row<'a>(m: &'a MailReport, metric: &str, scope: &str, params: &[(&str, &str)]) -> &'a Row {
    m.report
        .comparisons
        .iter()
        .find(|r| {
            r.metric == metric
                && r.scope == scope
                && params
                    .iter()
                    .all(|(k, v)| r.params.get(*k).map(String::as_str) == Some(*v))
        })
        .unwrap_or_else(|| {
            let names: Vec<String> = m
                .report
                .comparisons
                .iter()
                .map(|r| format!("{} {}", r.name(), r.params_text()))
                .collect();
            panic!("no row {metric} [{scope}] {params:?} among {names:?}")
        })
}

/// Asserts base and head medians within a relative 1e-9.
fn medians(r: &Row, base: f64, head: f64) {
    let close =
        |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1e-12));
    assert!(
        close(r.cmp.base.median, base),
        "{}: base median {:?}, expected {base}",
        r.name(),
        r.cmp.base.median
    );
    assert!(
        close(r.cmp.head.median, head),
        "{}: head median {:?}, expected {head}",
        r.name(),
        r.cmp.head.median
    );
}

fn pair_sides(m: &MailReport) -> Vec<(&str, &str)> {
    m.mail
        .pairs
        .iter()
        .map(|p| (p.base.as_str(), p.head.as_str()))
        .collect()
}

// ---- the seed threads ----

#[test]
fn seed_000_three_loads_with_and_without_the_commit() {
    let m = compare("000_536910311f95a228.txt");
    assert_eq!(m.mail.pairs.len(), 3);
    for (base, head) in pair_sides(&m) {
        assert!(base.contains("reverted"), "base {base:?}");
        assert!(!head.contains("reverted"), "head {head:?}");
    }
    let idle = [("scenario", "no load on system")];
    let one = [("scenario", "100% load on one cpu no load on 2nd cpu")];
    let both = [("scenario", "100% load on both cpus")];
    // real: reverted 35.320/35.687/35.920 vs with 49.359/49.393/49.632 (the author's runs).
    medians(row(&m, "real", "all", &idle), 35.687, 49.393);
    medians(row(&m, "real", "all", &one), 31.191, 45.083);
    medians(row(&m, "real", "all", &both), 20.259, 20.470);
    medians(row(&m, "sys", "all", &idle), 1.152, 0.892);
    medians(row(&m, "user", "all", &idle), 0.004, 0.004);
    assert_eq!(row(&m, "real", "all", &idle).cmp.base.n, 3);
    assert_eq!(
        row(&m, "real", "all", &idle).cmp.verdict,
        compare::Verdict::Regression
    );
    assert!(m.claims.is_empty(), "{:?}", m.claims);
}

#[test]
fn seed_001_median_table_older_kernel_is_the_base() {
    let m = compare("001_08520d855bd014a2.txt");
    assert_eq!(pair_sides(&m), [("v4.19", "v5.1 (deferred)")]);
    let r = row(&m, "gp_duration", "all", &[("preempt_off_ms", "50")]);
    assert_eq!(r.statistic.as_deref(), Some("median"));
    medians(r, 0.012, 0.100);
    // Summaries: no test.
    assert!(r.cmp.p.is_none());
    medians(
        row(&m, "gp_duration", "all", &[("preempt_off_ms", "20")]),
        0.011,
        0.040,
    );
}

#[test]
fn seed_002_latency_list_disable_is_the_base() {
    let m = compare("002_621372dd03f84495.txt");
    assert_eq!(m.mail.format, "prose");
    assert_eq!(m.mail.pairs.len(), 4);
    assert!(
        pair_sides(&m)
            .iter()
            .all(|(b, h)| b.ends_with("-disable") && h.ends_with("-enable"))
    );
    medians(
        row(&m, "latencies", "all", &[("scenario", "full")]),
        9352e-6,
        19081e-6,
    );
    medians(
        row(&m, "latencies", "all", &[("scenario", "one")]),
        564e-6,
        567e-6,
    );
    medians(
        row(&m, "latencies", "all", &[("scenario", "hundred")]),
        580e-6,
        581e-6,
    );
}

#[test]
fn seed_003_boot_time_from_prose_and_its_claim() {
    let m = compare("003_02bb7994ac00b1e1.txt");
    assert_eq!(pair_sides(&m), [("without", "with")]);
    medians(row(&m, "time", "all", &[]), 4.32, 3.6);
    assert_eq!(m.claims.len(), 1);
    let c = &m.claims[0];
    assert_eq!(c.text, "from 4.32 seconds down to 3.6 seconds");
    assert_eq!(c.line, 42);
    assert!((c.claimed_change_pct.unwrap() - (3.6 / 4.32 - 1.0) * 100.0).abs() < 1e-9);
    assert_eq!(c.status, Status::Consistent);
}

#[test]
fn seed_004_per_cpu_hits_and_the_2_9x_claim() {
    let m = compare("004_2ad225cb2cb455b9.txt");
    assert_eq!(pair_sides(&m), [("original", "apply patch")]);
    let hit = row(&m, "rcu_preempt_deferred_qs_handle.hit", "cpus", &[]);
    // Medians of the four CPUs: (828243 + 838746) / 2 and (279902 + 302373) / 2.
    medians(hit, 833_494.5, 291_137.5);
    assert_eq!(hit.per_cpu.len(), 4);
    // The author's sums: the commit message's "Sample output" table is not a fifth CPU.
    medians(
        row(&m, "rcu_preempt_deferred_qs_handle.hit", "all", &[]),
        3_319_015.0,
        1_140_359.0,
    );
    let c = m
        .claims
        .iter()
        .find(|c| c.text == "2.9x reduction")
        .expect("claim");
    assert_eq!(c.line, 135);
    assert!((c.claimed_change_pct.unwrap() - (1.0 / 2.9 - 1.0) * 100.0).abs() < 1e-9);
    assert_eq!(c.status, Status::Consistent);
    assert!(c.matched_series.as_deref().unwrap().contains(".hit"));
}

// ---- other real mails ----

#[test]
fn cyclictest_before_after_maxima() {
    let m = compare("lkml_2015_remap_resched_points_cyclictest_tlines.txt");
    assert_eq!(
        pair_sides(&m),
        [("PREEMPT_VOLUNTARY Before", "PREEMPT_VOLUNTARY After")]
    );
    let max2 = m
        .report
        .comparisons
        .iter()
        .find(|r| {
            r.metric == "latency" && r.scope == "thread2" && r.statistic.as_deref() == Some("max")
        })
        .unwrap();
    medians(max2, 2504e-6, 97e-6);
}

#[test]
fn cyclictest_one_column_per_kernel_first_is_base() {
    let m = compare("lkml_2024_eevdf_reschedule_ineligible_cyclictest_quiet_summary.txt");
    assert_eq!(m.mail.pairs.len(), 3);
    assert!(m.mail.pairs.iter().all(|p| p.base == "EEVDF"));
    let r = m
        .report
        .comparisons
        .iter()
        .find(|r| {
            r.statistic.as_deref() == Some("max")
                && r.params.get("group").map(String::as_str) == Some("LNICE(0)")
                && r.params.get("scenario").map(String::as_str) == Some("PATCH")
        })
        .unwrap();
    medians(r, 38917e-6, 13945e-6);
}

#[test]
fn hackbench_table_without_with() {
    let m = compare("lkml_2021_hackbench_threaded_pipe_header_and_avg_table.txt");
    assert_eq!(pair_sides(&m), [("w/o", "w/")]);
    medians(row(&m, "time", "all", &[("groups", "32")]), 1.7898, 2.3411);
    medians(row(&m, "time", "all", &[("groups", "6")]), 1.2474, 1.1458);
    // "from 6 to 32" groups is a range, not a claimed change.
    assert!(m.claims.is_empty(), "{:?}", m.claims);
}

#[test]
fn hackbench_times_and_the_15_percent_claim() {
    let m = compare("lkml_2021_memcg_obj_stock_drain_hackbench.txt");
    assert_eq!(
        pair_sides(&m),
        [("Without this change", "With this change")]
    );
    let r = row(&m, "time", "all", &[]);
    assert_eq!((r.cmp.base.n, r.cmp.head.n), (2, 2));
    medians(r, 4.4355, 3.8045);
    let c = &m.claims[0];
    assert_eq!(c.text, "improvement of about 15%");
    assert_eq!(c.claimed_change_pct, Some(-15.0));
    assert_eq!(c.status, Status::Consistent);
}

#[test]
fn perf_stat_before_after_elapsed() {
    let m = compare("lkml_2022_x86_fpu_xgetbv1_hackbench_perf_stat_r.txt");
    assert_eq!(pair_sides(&m), [("Before", "After")]);
    medians(row(&m, "elapsed", "all", &[]), 2.344735, 2.15725);
}

#[test]
fn perf_stat_current_and_new_slob() {
    let m = compare("lkml_2021_perf_stat_hackbench_slob_cpu-clock_msec_tabs.txt");
    assert_eq!(
        pair_sides(&m),
        [("current SLOB", "SLOB with segregated free list")]
    );
    medians(row(&m, "elapsed", "all", &[]), 263.956975106, 28.909188264);
    medians(row(&m, "page-faults", "all", &[]), 4112.0, 4116.0);
}

#[test]
fn perf_stat_before_after_applying_the_patchset() {
    let m = compare("lkml_2023_memcg_slab_shrink_lockless_perf_stat_multiplex.txt");
    assert_eq!(
        pair_sides(&m),
        [(
            "1) Before applying this patchset",
            "2) After applying this patchset"
        )]
    );
    medians(
        row(&m, "cycles", "all", &[]),
        454187219766.0,
        841954709443.0,
    );
}

#[test]
fn refscale_status_quo_is_the_base() {
    let m = compare("lkml_2021_refscale_min_median_max_3runs_table.txt");
    assert!(m.mail.pairs[0].base.contains("status quo"));
    let r = m
        .report
        .comparisons
        .iter()
        .find(|r| r.statistic.as_deref() == Some("median"))
        .unwrap();
    medians(r, 3.531e-9, 3.895e-9);
}

#[test]
fn gnu_time_vanilla_is_the_base() {
    let m = compare("lkml_2006_gnu_time_-v_make_-j5_two_runs.txt");
    assert_eq!(pair_sides(&m), [("-vanilla", "-swap-token")]);
    medians(row(&m, "sys", "all", &[]), 1239.14, 1122.35);
    medians(row(&m, "elapsed", "all", &[]), 4356.0, 4254.0);
}

#[test]
fn bash_time_and_the_20x_claim() {
    let m = compare("lkml_2025_bash_time_tc_qdisc_tab_indented.txt");
    assert_eq!(
        pair_sides(&m),
        [("without the patchset", "with the patchset")]
    );
    medians(row(&m, "real", "all", &[]), 1.039, 0.053);
    let c = &m.claims[0];
    assert_eq!(c.text, "20x speed-up");
    assert_eq!(c.matched_series.as_deref(), Some("real"));
    assert_eq!(c.status, Status::Consistent);
}

#[test]
fn trace_stat_original_apply_patch() {
    let m = compare("lkml_2024_call_rcu_tasks_iw_wakeup_head_4cpu_before_after.txt");
    assert_eq!(pair_sides(&m), [("original", "apply patch")]);
    let r = row(&m, "call_rcu_tasks_iw_wakeup.hit", "all", &[]);
    medians(r, 56376.0, 33521.0);
}

#[test]
fn decimal_comma_time_two_configs_each_with_its_patched_block() {
    let m = compare("lkml_2024_minmax_build_time_comma_decimal.txt");
    let suse = "openSUSE config [1] -j160 build on 160 cores on /dev/shm";
    assert_eq!(
        pair_sides(&m),
        [(suse, "Patched"), ("allmodconfig", "allmodconfig: Patched")]
    );
    // 6m5,729s -> 6m2,908s and 7m14,514s -> 6m57,144s.
    medians(
        row(&m, "real", "all", &[("scenario", suse)]),
        365.729,
        362.908,
    );
    medians(
        row(&m, "real", "all", &[("scenario", "allmodconfig")]),
        434.514,
        417.144,
    );
    // 818m34,541s -> 797m25,163s.
    medians(
        row(&m, "user", "all", &[("scenario", "allmodconfig")]),
        49114.541,
        47845.163,
    );
    // "there is definitely a change" states no number.
    assert!(m.claims.is_empty(), "{:?}", m.claims);
}

#[test]
fn boxed_perf_stat_and_its_wall_clock_claims() {
    let m = compare("lkml_2022_sched_headers_build_perf_stat_r3_boxed.txt");
    assert_eq!(
        pair_sides(&m),
        [("Vanilla kernel (v5.13-rc7)", "Patched kernel")]
    );
    medians(row(&m, "elapsed", "all", &[]), 2.9520, 2.8420);
    medians(row(&m, "cpu-clock", "all", &[]), 22.13696, 8.67581);
    medians(
        row(&m, "instructions", "all", &[]),
        126_975_564_374.0,
        50_420_496_914.0,
    );
    let by_text = |t: &str| m.claims.iter().find(|c| c.text == t).expect(t);
    let cpu = by_text("-60.9%");
    assert_eq!(cpu.matched_series.as_deref(), Some("cpu-clock (mean)"));
    assert_eq!(cpu.status, Status::Consistent);
    // "Wall-clock time ... dropped by -3.9%" names the elapsed time, not cpu-clock.
    for t in ["-3.9%", "from 2.95 seconds to 2.84 seconds"] {
        let c = by_text(t);
        assert_eq!(c.matched_series.as_deref(), Some("elapsed (mean)"), "{t}");
        assert_eq!(c.status, Status::Consistent, "{t}");
    }
}

#[test]
fn side_by_side_time_table_and_its_row_note() {
    let m = compare("lkml_2021_vfs_dedupe_compare_time_side_by_side.txt");
    assert_eq!(pair_sides(&m), [("Unpatched", "Patched")]);
    medians(row(&m, "real", "all", &[]), 1305.275, 1274.445);
    medians(row(&m, "user", "all", &[]), 0.986, 0.933);
    medians(row(&m, "sys", "all", &[]), 90.734, 68.9);
    // The `(-25%)` the author wrote after the sys row.
    let c = &m.claims[0];
    assert_eq!((c.text.as_str(), c.line), ("-25%", 26));
    assert_eq!(c.claimed_change_pct, Some(-25.0));
    assert_eq!(c.matched_series.as_deref(), Some("sys"));
    assert_eq!(c.status, Status::Consistent);
}

#[test]
fn emphasised_elapsed_times_of_four_numbered_configurations() {
    let m = compare("lkml_2020_uclamp_static_key_perf_stat_elapsed_trace_stat.txt");
    let base = "(1) tip/sched/core # CONFIG_UCLAMP_TASK is not set";
    assert_eq!(m.mail.pairs.len(), 3);
    assert!(m.mail.pairs.iter().all(|p| p.base == base));
    // `*1.39285*` against (3), the static key without uclamp users, and (4) with them.
    let three = "(3) tip/sched/core + opt_skip_uclamp_v2 CONFIG_UCLAMP_TASK=y";
    medians(
        row(&m, "elapsed", "all", &[("scenario", three)]),
        1.39285,
        1.38833,
    );
    let four = "(4) tip/sched/core + opt_skip_uclamp_v2";
    medians(
        row(&m, "elapsed", "all", &[("scenario", four)]),
        1.39285,
        1.42062,
    );
    assert!(m.claims.is_empty(), "{:?}", m.claims);
}

#[test]
fn kfree_rcu_slab_and_slub_sections_stay_apart() {
    let m = compare("lkml_2020_kfree_rcu_bulk_rcuperf_kfree_runs.txt");
    assert_eq!(
        pair_sides(&m),
        [
            (
                "with SLAB: without Ulad's patch",
                "with SLAB: with Ulad's patch"
            ),
            (
                "with SLUB: without Ulad's patch",
                "with SLUB: with Ulad's patch"
            ),
        ]
    );
    let slab = m.mail.pairs[0].scenario.clone().unwrap();
    let slub = m.mail.pairs[1].scenario.clone().unwrap();
    assert_ne!(slab, slub);
    // Four runs a side; medians of the `Total time taken` values in ns, as written.
    let r = row(&m, "kfree_total_time", "all", &[("scenario", &slab)]);
    assert_eq!((r.cmp.base.n, r.cmp.head.n), (4, 4));
    medians(
        r,
        (20_975_674_614.0 + 21_174_999_896.0) / 2.0 * 1e-9,
        (17_227_635_828.0 + 17_460_918_969.0) / 2.0 * 1e-9,
    );
    let r = row(&m, "kfree_total_time", "all", &[("scenario", &slub)]);
    assert_eq!((r.cmp.base.n, r.cmp.head.n), (4, 4));
    medians(
        r,
        (9_547_675_890.0 + 9_613_032_449.0) / 2.0 * 1e-9,
        (9_844_937_317.0 + 10_138_649_532.0) / 2.0 * 1e-9,
    );
    // The side names keep whole words of what the labels share.
    assert_eq!(m.report.base.build.label, "without Ulad's patch");
}

/// The `mean` row of an lkp ncompare table.
fn lkp_mean<'a>(m: &'a MailReport, metric: &str) -> &'a Row {
    m.report
        .comparisons
        .iter()
        .find(|r| r.metric == metric && r.statistic.as_deref() == Some("mean"))
        .unwrap_or_else(|| panic!("no mean row {metric}"))
}

#[test]
fn lkp_ncompare_tables_parent_commit_is_the_base() {
    for (file, base, head, metric, means) in [
        (
            "lkml_2025_lkp_pipe_write_stress_ng_pipeherd_improvement.txt",
            "f2ffc48de2017c69",
            "ee5eda8ea59546af2e8f192c060",
            "stress-ng.pipeherd.ops_per_sec",
            (38_728_105.0, 48_797_851.0),
        ),
        (
            "lkml_2025_lkp_do_pollfd_will_it_scale_regression.txt",
            "d000e073ca2a08ab",
            "89359897983825dbfc08578e7ee",
            "will-it-scale.per_process_ops",
            (263_173.0, 232_411.0),
        ),
        (
            "lkml_2019_lkp_mm_gup_stress_ng_numa_multipart_excerpt.txt",
            "96270263521248d5",
            "cdaa813278ddc616ee201eacda7",
            "stress-ng.numa.ops_per_sec",
            (9.41, 449.07),
        ),
    ] {
        let m = compare(file);
        assert_eq!(m.mail.format, "lkp", "{file}");
        assert_eq!(pair_sides(&m), [(base, head)], "{file}");
        medians(lkp_mean(&m, metric), means.0, means.1);
        // Summary values: a row per statistic, no test.
        assert!(
            m.report
                .comparisons
                .iter()
                .all(|r| r.statistic.is_some() && r.cmp.p.is_none()),
            "{file}"
        );
    }
    // The pipe table's `+7.8%` row: 3930 -> 4235.
    let m = compare("lkml_2025_lkp_pipe_write_stress_ng_pipeherd_improvement.txt");
    medians(lkp_mean(&m, "vmstat.procs.r"), 3930.0, 4235.0);
}

#[test]
fn json_has_the_claims_contract() {
    let m = compare("004_2ad225cb2cb455b9.txt");
    let v = serde_json::to_value(&m).unwrap();
    let c = &v["claims"][0];
    for k in [
        "text",
        "line",
        "claimed_change_pct",
        "matched_series",
        "status",
    ] {
        assert!(c.get(k).is_some(), "claims[0] lacks {k}: {c}");
    }
    assert_eq!(c["status"], "consistent");
    assert!(v["comparisons"].as_array().is_some_and(|a| !a.is_empty()));
    assert_eq!(v["base"]["build"]["label"], "original");
}

// ---- bad input ----

fn error(name: &str, bytes: &[u8]) -> String {
    compare_mail(name, bytes, &Options::default())
        .map(|_| ())
        .expect_err("an error")
        .to_string()
}

#[test]
fn one_cpu_table_a_block_is_compared_function_by_function() {
    // One function0 table a block: one CPU, one value a function and side. A pool of one CPU
    // is no pool, so each shared function keeps its own row (one value a side: no test, the
    // change still shown); `free_vmap_block`, only AFTER, has none.
    let m = compare("lkml_2015_vmalloc_before_after_function0_scenario1.txt");
    let time = m
        .report
        .comparisons
        .iter()
        .find(|r| r.metric == "vm_map_ram.time")
        .expect("vm_map_ram.time compared");
    assert_eq!(time.scope, "cpu0");
    assert!(time.per_cpu.is_empty());
    assert_eq!((time.cmp.base.n, time.cmp.head.n), (1, 1));
    let want = (28713.13 / 30683.30 - 1.0) * 100.0;
    assert!((time.cmp.change_pct.unwrap() - want).abs() < 1e-9);
    assert!(
        m.report
            .comparisons
            .iter()
            .all(|r| !r.metric.starts_with("free_vmap_block"))
    );
}

#[test]
fn unlabelled_single_block() {
    let (n, b) = fixture("lkml_2022_stable_rcu_preempt_deferred_qs_single.txt");
    let e = error(&n, &b);
    assert!(e.contains("found no labelled blocks"), "{e}");
}

#[test]
fn one_block_no_numbers_binary_huge_deep_quotes() {
    let one = "before:\nreal 0m1.000s\nuser 0m0.100s\nsys 0m0.200s\n";
    let e = error("one.txt", one.as_bytes());
    assert!(e.starts_with("one.txt: "), "{e}");
    assert!(e.contains("only one labelled block (\"before\")"), "{e}");

    let e = error("words.txt", b"Thanks for the patch, it looks fine to me.\n");
    assert!(e.contains("no benchmark output found"), "{e}");

    let e = error("junk.bin", &[0x7f, b'E', b'L', b'F', 0, 1, 2, 0xff]);
    assert!(e.contains("binary data (a NUL byte at offset 4)"), "{e}");
    let e = error("latin1.txt", b"before: caf\xe9\n");
    assert!(e.contains("not UTF-8 text"), "{e}");

    let huge = vec![b'a'; quiescent::mail::MAX_MAIL_BYTES + 1];
    let e = error("huge.txt", &huge);
    assert!(e.contains("is not a mail (at most 16 MiB)"), "{e}");

    let deep = format!(
        "{} before: 1.0 s\n{} after: 2.0 s\n",
        ">".repeat(100_000),
        "> ".repeat(50_000)
    );
    // Deep quoting costs time linear in its length and still compares.
    let m = compare_mail("deep.txt", deep.as_bytes(), &Options::default());
    match m {
        Ok(m) => medians(&m.report.comparisons[0], 1.0, 2.0),
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}

#[test]
fn ambiguous_blocks_are_chosen_by_substring() {
    let text = "run A:\nreal 0m1.000s\nuser 0m0.1s\nsys 0m0.2s\n\nrun B:\nreal 0m2.000s\nuser 0m0.1s\nsys 0m0.2s\n\nrun C:\nreal 0m3.000s\nuser 0m0.1s\nsys 0m0.2s\n";
    let e = error("abc.txt", text.as_bytes());
    assert!(e.contains("\"run A\", \"run B\", \"run C\""), "{e}");
    assert!(e.contains("--base-block TEXT --head-block TEXT"), "{e}");
    let opts = Options {
        base_block: Some("run c".into()),
        head_block: Some("B".into()),
        ..Options::default()
    };
    let m = compare_mail("abc.txt", text.as_bytes(), &opts).unwrap();
    medians(row(&m, "real", "all", &[]), 3.0, 2.0);
}

// ---- the command line ----

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .env_remove("QUIESCENT_DB")
        .env("QUIESCENT_LOG", "error")
        .args(args)
        .output()
        .expect("run quiescent")
}

fn fixture_path(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mails")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn cli_email_quotes_the_labels_within_72_columns() {
    let o = cli(&[
        "compare",
        &fixture_path("000_536910311f95a228.txt"),
        "--email",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.lines().all(|l| l.chars().count() <= 72), "{out}");
    assert!(
        out.contains("> base: Now, results with no load on the system; with"),
        "{out}"
    );
    assert!(out.contains("scenario=no load on system"), "{out}");
}

#[test]
fn cli_outputs_of_one_mail() {
    let f = fixture_path("004_2ad225cb2cb455b9.txt");
    let o = cli(&["compare", &f, "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["claims"][0]["status"], "consistent");
    assert_eq!(v["mail"]["pairs"][0]["head"], "apply patch");
    let o = cli(&["compare", &f, "--markdown"]);
    let md = String::from_utf8(o.stdout).unwrap();
    assert!(
        md.contains("| 135 | 2.9x reduction | -65.5% | -65.1%"),
        "{md}"
    );
    let o = cli(&["compare", &f, "--csv"]);
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .contains("rcu_preempt_deferred_qs_handle.hit")
    );
    let o = cli(&["compare", &f]);
    let t = String::from_utf8(o.stdout).unwrap();
    assert!(
        t.contains("claimed -65.5%, measured -65.1% [-70.9%, -60.4%], consistent"),
        "{t}"
    );
}

#[test]
fn cli_ambiguous_mail_names_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("abc.txt");
    std::fs::write(&p, "run A:\nreal 0m1.000s\nuser 0m0.1s\nsys 0m0.2s\n\nrun B:\nreal 0m2.000s\nuser 0m0.1s\nsys 0m0.2s\n\nrun C:\nreal 0m3.000s\nuser 0m0.1s\nsys 0m0.2s\n").unwrap();
    let o = cli(&["compare", p.to_str().unwrap()]);
    assert!(!o.status.success());
    let e = String::from_utf8(o.stderr).unwrap();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("--base-block TEXT --head-block TEXT"), "{e}");
    let o = cli(&[
        "compare",
        p.to_str().unwrap(),
        "--base-block",
        "A",
        "--head-block",
        "C",
        "--csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_quoted_block_of_a_reply_is_the_base() {
    let text = "On Mon, someone wrote:\n> My numbers on the rig:\n> real 0m2.000s\n> user 0m0.100s\n> sys 0m0.200s\n\nMine, same rig:\nreal 0m1.500s\nuser 0m0.100s\nsys 0m0.200s\n";
    let m = compare_mail("reply.txt", text.as_bytes(), &Options::default()).unwrap();
    assert_eq!(
        pair_sides(&m),
        [("My numbers on the rig", "Mine, same rig")]
    );
    medians(row(&m, "real", "all", &[]), 2.0, 1.5);
}

#[test]
fn more_blocks_than_a_mail_holds_is_refused_quickly() {
    let mut text = String::from("Here are the latencies:\n");
    for i in 0..600 {
        text.push_str(&format!(
            "case{i}-disable: {}us\ncase{i}-enable: {}us\n",
            i + 1,
            i + 2
        ));
    }
    let e = error("many.txt", text.as_bytes());
    assert!(
        e.contains("found 1200 labelled blocks, more than a mail comparison takes (1000)"),
        "{e}"
    );
    // Under the bound, every pair is compared.
    let mut text = String::from("Here are the latencies:\n");
    for i in 0..400 {
        text.push_str(&format!(
            "case{i}-disable: {}us\ncase{i}-enable: {}us\n",
            i + 1,
            i + 2
        ));
    }
    let m = compare_mail("many.txt", text.as_bytes(), &Options::default()).unwrap();
    assert_eq!(m.mail.pairs.len(), 400);
    let last = m
        .report
        .comparisons
        .iter()
        .find(|r| r.params.get("scenario").map(String::as_str) == Some("case399"))
        .expect("row of case399");
    medians(last, 400e-6, 401e-6);
}
