//! Golden tests of the function_graph parser: every value of function_graph/MANIFEST.md, the
//! optional columns of the tracer, and bad input.

use std::path::Path;

use ingest::{Dataset, ErrorKind, Unit};

use crate::common::*;

fn us(values: &[f64]) -> Vec<f64> {
    values.iter().map(|v| v * 1e-6).collect()
}

#[track_caller]
fn check(ds: &Dataset, func: &str, cpu: &str, expect_us: &[f64]) {
    let s = ds
        .get(&format!("{func}.duration"), cpu)
        .unwrap_or_else(|| panic!("no {func} on {cpu}"));
    assert_eq!(s.spec.unit, Unit::Seconds);
    samples_eq(s, &us(expect_us));
}

fn parse_text(text: &str) -> Dataset {
    ingest::parse_bytes(Path::new("trace"), text.as_bytes(), Some("function_graph"))
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

fn check_sys_open(ds: &Dataset) {
    check(ds, "__might_sleep", "cpu0", &[1.382, 1.389]);
    check(ds, "kmem_cache_alloc", "cpu0", &[2.478]);
    check(ds, "might_fault", "cpu0", &[2.553]);
    check(ds, "strncpy_from_user", "cpu0", &[3.807]);
    check(ds, "getname", "cpu0", &[7.876]);
    check(ds, "_spin_lock", "cpu0", &[0.668]);
    check(ds, "expand_files", "cpu0", &[0.570]);
    check(ds, "_spin_unlock", "cpu0", &[0.586]);
    // sys_open, do_sys_open and alloc_fd never close in the excerpt.
    for f in ["sys_open", "do_sys_open", "alloc_fd"] {
        assert!(ds.get(&format!("{f}.duration"), "cpu0").is_none(), "{f}");
    }
    assert_eq!(ds.meta["unclosed_calls"], "3");
    assert_eq!(ds.meta["unmatched_closes"], "0");
    assert_eq!(ds.series.len(), 8);
    assert_eq!(ds.sample_count(), 9);
    assert!(ds.series.iter().all(|s| s.spec.key.scope == "cpu0"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn doc2635_default_sys_open() {
    check_sys_open(&parse(
        "function_graph/doc2635_funcgraph_default_sys_open.txt",
        "function_graph",
    ));
}

#[test]
fn doc54_default_sys_open_matches_doc2635() {
    let a = parse(
        "function_graph/doc2635_funcgraph_default_sys_open.txt",
        "function_graph",
    );
    let b = parse(
        "function_graph/doc54_funcgraph_default_sys_open.txt",
        "function_graph",
    );
    check_sys_open(&b);
    assert_eq!(a.series, b.series);
    assert_eq!(a.meta, b.meta);
}

const OVERHEAD: &str = "function_graph/doc54_funcgraph_overhead_markers.txt";

#[test]
fn doc54_overhead_markers() {
    let ds = parse(OVERHEAD, "function_graph");
    // Tail comments name closes whose opening is not in the excerpt.
    check(&ds, "__switch_to", "cpu3", &[1837.709]);
    check(&ds, "__schedule", "cpu3", &[1889.063, 140.417]);
    check(&ds, "schedule", "cpu3", &[2034.948]);
    check(&ds, "schedule_preempt_disabled", "cpu3", &[33998.59]);
    // Closes paired with an opening on the same CPU.
    check(&ds, "finish_task_switch", "cpu3", &[3.177]);
    check(&ds, "_raw_spin_unlock_irq", "cpu3", &[0.313]);
    check(&ds, "rcu_irq_exit", "cpu1", &[3.125]);
    check(&ds, "handle_IPI", "cpu2", &[3.490]);
    // Leaves.
    check(&ds, "scheduler_ipi", "cpu2", &[0.417]);
    check(&ds, "msecs_to_jiffies", "cpu1", &[0.260]);
    check(&ds, "__rcu_read_unlock", "cpu1", &[0.313]);
    check(&ds, "rcu_bh_qs", "cpu1", &[0.313]);
    check(&ds, "__local_bh_enable", "cpu1", &[0.313]);
    check(&ds, "idle_cpu", "cpu1", &[0.365]);
    check(&ds, "rcu_eqs_enter_common.isra.47", "cpu1", &[0.417]);
    // `}` lines with neither an opening nor a comment: 11 on CPU 1, the `$` one on CPU 2.
    assert_eq!(ds.meta["unmatched_closes"], "12");
    assert_eq!(ds.warnings.len(), 1, "{:?}", ds.warnings);
    assert_eq!(ds.warnings[0].line, 14);
    assert!(ds.warnings[0].message.contains("12 closing braces"));
    assert_eq!(ds.sample_count(), 16);
}

/// Every duration of the overhead sample, including the closes that cannot be named, read by
/// naming them with a tail comment: marks stripped, `$ 3594274 us` without a fraction.
#[test]
fn doc54_overhead_markers_all_durations() {
    let text = std::fs::read_to_string(fixture(OVERHEAD)).unwrap();
    let named = text.replace("}\n", "} /* x */\n");
    let ds = parse_text(&named);
    check(
        &ds,
        "x",
        "cpu1",
        &[
            61.770, 64.479, 217.240, 3.125, 227.812, 457.395, 119760.2, 6.979, 9.791, 12.917,
            15.729, 18.542,
        ],
    );
    check(&ds, "x", "cpu2", &[3.490, 3594274.0]);
    check(&ds, "x", "cpu3", &[3.177]);
    close(ds.get("x.duration", "cpu2").unwrap().samples[1], 3.594274);
    assert_eq!(ds.meta["unmatched_closes"], "0");
}

const ABSTIME: &str = "function_graph/doc54_funcgraph_abstime.txt";

#[test]
fn doc54_abstime() {
    let ds = parse(ABSTIME, "function_graph");
    check(&ds, "__wake_up_bit", "cpu1", &[0.541]);
    check(&ds, "journal_mark_dirty", "cpu1", &[0.615]);
    check(&ds, "__brelse", "cpu1", &[0.578]);
    check(&ds, "__phys_addr", "cpu1", &[0.594]);
    assert_eq!(ds.meta["first_timestamp"], "360.774522");
    assert_eq!(ds.meta["last_timestamp"], "360.774530");
    // The excerpt starts inside five calls and ends inside four.
    assert_eq!(ds.meta["unmatched_closes"], "5");
    assert_eq!(ds.meta["unclosed_calls"], "4");
    assert_eq!(ds.sample_count(), 4);

    let text = std::fs::read_to_string(fixture(ABSTIME)).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("360."))
            .count(),
        13
    );
    let ds = parse_text(&text.replace("}\n", "} /* x */\n"));
    check(&ds, "x", "cpu1", &[0.541, 4.663, 6.796, 7.952, 9.063]);
}

#[test]
fn perftools_do_nanosleep() {
    let ds = parse(
        "function_graph/perftools_funcgraph_do_nanosleep.txt",
        "function_graph",
    );
    check(&ds, "_raw_spin_lock_irqsave", "cpu0", &[0.198, 0.217]);
    check(&ds, "lock_hrtimer_base.isra.24", "cpu0", &[0.908, 0.831]);
    check(&ds, "__hrtimer_start_range_ns", "cpu0", &[3.447, 4.050]);
    check(&ds, "hrtimer_start_range_ns", "cpu0", &[3.998, 4.523]);
    check(&ds, "load_TLS_descriptor", "cpu0", &[1.744, 1.583, 1.586]);
    check(
        &ds,
        "arbitrary_virt_to_machine",
        "cpu0",
        &[1.115, 0.990, 0.978],
    );
    check(&ds, "update_curr", "cpu0", &[0.757, 0.077, 0.070]);
    check(&ds, "xen_load_tls", "cpu0", &[6.630]);
    check(
        &ds,
        "paravirt_get_lazy_mode",
        "cpu0",
        &[0.050, 0.056, 0.049, 0.051, 0.052],
    );
    check(&ds, "xen_write_msr_safe", "cpu0", &[0.172]);
    for f in ["do_nanosleep", "schedule", "__schedule"] {
        assert!(ds.get(&format!("{f}.duration"), "cpu0").is_none(), "{f}");
    }
    // 52 leaves and 30 closes, all paired; the first call's do_nanosleep, schedule and
    // __schedule are cut by the context switch, the second do_nanosleep by `[...]`.
    assert_eq!(ds.sample_count(), 82);
    assert_eq!(ds.meta["unmatched_closes"], "0");
    assert_eq!(ds.meta["unclosed_calls"], "4");
    assert!(ds.series.iter().all(|s| s.spec.key.scope == "cpu0"));
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn optional_columns_and_comments() {
    let ds = parse_text(
        " # tracer: function_graph\n\
         \x20#\n\
         \x20#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS\n\
         \x20#      |          |     |    |           |   |                     |   |   |   |\n\
         \x20 4416.142187 |   0)    sh-4802     |               |  d_free() {\n\
         \x20 4416.142188 |   0)    sh-4802     |   0.616 us    |    call_rcu();\n\
         \x20 4416.142189 |   0)    sh-4802     |               |    /* trace_printk here */\n\
         \x20 4416.142190 |   0)    sh-4802     |   2.899 us    |  }\n\
         \x20        0 us |   1)   bash-1507   |  d..1 |               |  f() {\n\
         \x20        1 us |   1)   bash-1507   |  d..1 |   ==========> |\n\
         \x20        2 us |   1)   bash-1507   |  d..1 | + 10.5 us     |    g(); /* = 0x0 */\n\
         \x20        3 us |   1)   bash-1507   |  d..1 | ! 150.25 us   |  } /* f = 0 */\n",
    );
    check(&ds, "call_rcu", "cpu0", &[0.616]);
    check(&ds, "d_free", "cpu0", &[2.899]);
    check(&ds, "g", "cpu1", &[10.5]);
    check(&ds, "f", "cpu1", &[150.25]);
    assert_eq!(ds.meta["first_timestamp"], "4416.142187");
    assert_eq!(ds.meta["last_timestamp"], "4416.142190");
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn interleaved_cpus_keep_separate_stacks() {
    let ds = parse_text(
        " 0)               |  a() {\n\
         \x201)               |  b() {\n\
         \x200)   1.000 us    |    c();\n\
         \x201)   2.000 us    |  }\n\
         \x200)   3.000 us    |  }\n",
    );
    check(&ds, "a", "cpu0", &[3.0]);
    check(&ds, "b", "cpu1", &[2.0]);
    check(&ds, "c", "cpu0", &[1.0]);
}

#[test]
fn collapsed_indentation_pairs_by_order() {
    let ds = parse_text("0) | a() {\n0) | b() {\n0) 1.0 us | c();\n0) 2.0 us | }\n0) 3.0 us | }\n");
    check(&ds, "b", "cpu0", &[2.0]);
    check(&ds, "a", "cpu0", &[3.0]);
}

#[test]
fn absurd_nesting_is_bounded() {
    let mut text = " 0) | a() {\n".repeat(5000);
    text.push_str(" 0) 1.0 us | z();\n");
    let ds = parse_text(&text);
    check(&ds, "z", "cpu0", &[1.0]);
    assert_eq!(ds.meta["unclosed_calls"], "5000");
    assert_eq!(ds.warnings.len(), 1, "{:?}", ds.warnings);
}

fn parse_err(text: &[u8], format: Option<&str>) -> ingest::Error {
    ingest::parse_bytes(Path::new("trace"), text, format).unwrap_err()
}

fn kind(e: &ingest::Error) -> &ErrorKind {
    match e {
        ingest::Error::Parse { source, .. } => &source.kind,
        other => panic!("not a parse error: {other}"),
    }
}

#[test]
fn trace_without_duration_column_is_refused() {
    let text = b"# ./funcgraph -D do_sys_open\n\
        Tracing \"do_sys_open\"... Ctrl-C to end.\n\
        \x201) do_sys_open() {\n\
        \x201)   getname() {\n\
        \x201)     kmem_cache_alloc() {\n\
        \x201)       __might_sleep();\n";
    let e = parse_err(text, None);
    assert!(
        matches!(
            e,
            ingest::Error::Parse {
                format: "function_graph",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.line(), Some(3));
    assert!(
        e.to_string()
            .contains("function_graph trace without a DURATION column: nothing to measure"),
        "{e}"
    );
}

#[test]
fn bad_input() {
    let fg = Some("function_graph");
    assert!(matches!(kind(&parse_err(b"", fg)), ErrorKind::Empty));
    assert!(matches!(
        kind(&parse_err(b" 0)  1.0 us | f();\n\0", fg)),
        ErrorKind::Binary { .. }
    ));
    let neg = parse_err(
        b" 0)   1.000 us    |  f();\n 0)  -1.000 us    |  g();\n",
        fg,
    );
    assert_eq!(neg.line(), Some(2));
    assert!(matches!(kind(&neg), ErrorKind::BadValue { .. }));
    // Only openings: nothing measured.
    let open = parse_err(b" 0)               |  f() {\n", fg);
    assert!(matches!(kind(&open), ErrorKind::NothingFound { .. }));
    let e = ingest::parse_file(
        &fixture("rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt"),
        fg,
    )
    .unwrap_err();
    assert!(matches!(kind(&e), ErrorKind::NothingFound { .. }), "{e}");
}
