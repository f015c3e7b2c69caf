//! The `latency` format on synthetic variants (display-graph, several traces, the doubled
//! `# tracer:` quirk, wrapped CPU counts, capped entries) and on bad input.

use ingest::ErrorKind;
use serde_json::{Value, json};

use crate::common::*;
use crate::latency::*;

/// The display-graph example of Documentation/trace/ftrace.rst (4.20), shortened.
const DISPLAY_GRAPH: &str = "# tracer: irqsoff
#
# irqsoff latency trace v1.1.5 on 4.20.0-rc6+
# --------------------------------------------------------------------
# latency: 3751 us, #274/274, CPU#0 | (M:desktop VP:0, KP:0, SP:0 HP:0 #P:4)
#    -----------------
#    | task: bash-1507 (uid:0 nice:0 policy:0 rt_prio:0)
#    -----------------
#  => started at: free_debug_processing
#  => ended at:   return_to_handler
#
#
#                                       _-----=> irqs-off
#                                      / _----=> need-resched
#                                     | / _---=> hardirq/softirq
#                                     || / _--=> preempt-depth
#                                     ||| /
#   REL TIME      CPU  TASK/PID       ||||     DURATION                  FUNCTION CALLS
#      |          |     |    |        ||||      |   |                     |   |   |   |
        0 us |   0)   bash-1507    |  d... |   0.000 us    |  _raw_spin_lock_irqsave();
        0 us |   0)   bash-1507    |  d..1 |   0.378 us    |    do_raw_spin_trylock();
        1 us |   0)   bash-1507    |  d..2 |               |    set_track() {
        4 us |   0)   bash-1507    |  d..2 |   1.107 us    |            }
[...]
     3764 us |   0)   bash-1507    |  d..1 |   0.000 us    |  tracer_hardirqs_on();
    bash-1507    0d..1 3792us : <stack trace>
=> free_debug_processing
=> __slab_free
=> kmem_cache_free
";

#[test]
fn display_graph_body() {
    let ds = parse_text(DISPLAY_GRAPH);
    assert_eq!(ds.meta["tracer"], "irqsoff");
    assert_eq!(ds.meta["preemption_model"], "desktop");
    assert_eq!(ds.meta["started_at"], "free_debug_processing");
    samples_eq(ds.get("latency", "all").unwrap(), &[3751e-6]);
    samples_eq(ds.get("entries", "all").unwrap(), &[274.0]);
    let e = entries(&ds);
    assert_eq!(e.len(), 6);
    assert_eq!(
        e[1],
        json!({"comm": "bash", "pid": 1507, "cpu": 0, "flags": "d..1", "time_us": 0.0,
               "mark": null, "func": "do_raw_spin_trylock();", "parent": null, "duration_us": 0.378})
    );
    assert_eq!(e[2]["func"], "set_track() {");
    assert!(e[2].get("duration_us").is_none());
    assert_eq!(e[4]["time_us"], 3764.0);
    assert_eq!(e[5]["func"], "<stack trace>");
    assert_eq!(
        stack(&ds),
        ["free_debug_processing", "__slab_free", "kmem_cache_free"]
    );
    assert!(ds.warnings.is_empty(), "{:?}", ds.warnings);
}

#[test]
fn the_latency_trace_line_names_the_tracer() {
    // ftrace.rst shows `# tracer: wakeup` and `# tracer: wakeup_rt` above one trace.
    let text = "# tracer: wakeup\n#\n# tracer: wakeup_rt\n#\n# wakeup_rt latency trace v1.1.5 on 3.8.0-test+\n# latency: 5 us, #4/4, CPU#3 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:4)\n#    | task: sleep-2389 (uid:0 nice:0 policy:1 rt_prio:5)\n  <idle>-0       3d.h4    0us :      0:120:R   + [003]  2389: 94:R sleep\n";
    let ds = parse_text(text);
    assert_eq!(ds.meta["tracer"], "wakeup_rt");
    samples_eq(ds.get("latency", "all").unwrap(), &[5e-6]);
    assert_eq!(
        entries(&ds)[0]["func"],
        "0:120:R   + [003]  2389: 94:R sleep"
    );
}

#[test]
fn several_traces_in_one_file() {
    let one = std::fs::read_to_string(fixture("latency/doc54_irqsoff_3.8.0_259us.txt")).unwrap();
    let two = std::fs::read_to_string(fixture("latency/doc54_preemptoff_3.8.0_46us.txt")).unwrap();
    let ds = parse_text(&format!("{one}\n{two}"));
    samples_eq(ds.get("latency", "all").unwrap(), &[259e-6, 46e-6]);
    samples_eq(ds.get("entries", "all").unwrap(), &[4.0, 4.0]);
    assert_eq!(ds.meta["traces"], "2");
    assert_eq!(ds.meta["tracer"], "irqsoff");
    assert_eq!(ds.meta["trace2.tracer"], "preemptoff");
    assert_eq!(ds.meta["trace2.task"], "sshd");
    assert_eq!(stack(&ds).len(), 10);
    assert_eq!(ds.extra["trace2.stack"].as_array().unwrap().len(), 4);
    assert_eq!(ds.extra["trace2.entries"][0]["func"], "irq_enter");
}

#[test]
fn events_and_a_wrapped_cpu_count() {
    let text = "# tracer: wakeup_rt\n#\nwakeup_rt latency trace v1.1.5 on 4.4.0\n--------\n latency: 7 us, #3/9, CPU#2 | (M:preempt VP:0, KP:0, SP:0 HP:0\n#P:8)\n    | task: sleep-5882 (uid:0 nice:0 policy:1 rt_prio:5)\n  <idle>-0       2d.h4    1us+:      0:120:R   + [002]  5882: 94:R sleep\n  <idle>-0       2d.h4    3us : sched_wakeup: comm=sleep pid=5882 prio=94 success=1 target_cpu=002\n  <idle>-0       2d..3    8us :      0:120:R ==> [002]  5882: 94:R sleep\n";
    let ds = parse_text(text);
    assert_eq!(ds.meta["ncpus"], "8");
    assert_eq!(
        (
            ds.meta["entries_shown"].as_str(),
            ds.meta["entries_total"].as_str()
        ),
        ("3", "9")
    );
    samples_eq(ds.get("entries", "all").unwrap(), &[9.0]);
    let e = entries(&ds);
    assert_eq!(
        e[1]["func"],
        "sched_wakeup: comm=sleep pid=5882 prio=94 success=1 target_cpu=002"
    );
    assert_eq!(e[1]["parent"], Value::Null);
}

#[test]
fn entries_are_capped() {
    let mut text = String::from(
        "# tracer: irqsoff\n# irqsoff latency trace v1.1.5 on 6.1\n# latency: 9 us, #10005/10005, CPU#0 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:1)\n",
    );
    for i in 0..10_005 {
        text.push_str(&format!("  bash-1  0d..1  {}us : f <-g\n", i / 1000));
    }
    let ds = parse_text(&text);
    assert_eq!(entries(&ds).len(), ingest::formats::latency::MAX_ENTRIES);
    assert_eq!(ds.meta["entries_listed"], "10005");
    assert!(ds.meta["entries_note"].contains("10000"), "{:?}", ds.meta);
}

#[test]
fn a_malformed_entry_is_a_warning_with_its_line() {
    let text = "# tracer: irqsoff\n# irqsoff latency trace v1.1.5 on 6.1\n# latency: 9 us, #2/2, CPU#0 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:1)\n  bash-1  0d..1  0us : f <-g\n  bash-1  0d..1  9us\n";
    let ds = parse_text(text);
    assert_eq!(entries(&ds).len(), 1);
    assert_eq!(ds.warnings.len(), 1, "{:?}", ds.warnings);
    assert_eq!(ds.warnings[0].line, 5);
}

#[test]
fn bad_input() {
    let e = parse_err(b"", Some("latency"));
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

    let e = parse_err(b"# tracer: irqsoff\n\x00\x00", None);
    assert!(e.to_string().contains("binary"), "{e}");

    // A `time` output forced as latency: the error names the first line and what was expected.
    let bytes = std::fs::read(fixture("time/seed000_bash_time_3runs_ftrace_switch.txt")).unwrap();
    let e = parse_err(&bytes, Some("latency"));
    assert_eq!(e.line(), Some(1), "{e}");
    assert!(e.to_string().contains("latency trace"), "{e}");

    // A trace_stat table forced as latency.
    let bytes = std::fs::read(fixture(
        "trace_stat/lkml_2022_stable_rcu_preempt_deferred_qs_single.txt",
    ))
    .unwrap();
    assert_eq!(parse_err(&bytes, Some("latency")).line(), Some(1));

    // A tracer line and no latency header.
    let e = parse_err(
        b"\n# tracer: irqsoff\n#\n  bash-1 [000] d..1 12.3: f <-g\n",
        Some("latency"),
    );
    assert_eq!(e.line(), Some(2), "{e}");

    // A malformed latency value in the header is an error at its line.
    let e = parse_err(b"# tracer: irqsoff\n# irqsoff latency trace v1.1.5 on 6.1\n# latency: many us, #2/2, CPU#0 | (M:preempt)\n", None);
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(e.to_string().contains("latency: N us"), "{e}");
}

#[test]
fn detection_is_honest() {
    let lat = ingest::formats::by_name("latency").unwrap();
    for entry in std::fs::read_dir(fixture("latency")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "txt") {
            let text = std::fs::read_to_string(&path).unwrap();
            let score = lat.sniff(&text);
            let weak = path.to_string_lossy().contains("seed002");
            assert!(
                if weak {
                    score > 0 && score < 50
                } else {
                    score >= 70
                },
                "{}: {score}",
                path.display()
            );
        }
    }
    for dir in [
        "trace_stat",
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
                assert_eq!(lat.sniff(&text), 0, "{}", path.display());
            }
        }
    }
}
